/*
 * tests/rtc/hiprtc_compile.c: compiles one generated module with hipRTC,
 * for tests/test_cuda_codegen.c, which runs it as a process of its own.
 *
 *     hiprtc_compile LIBAMDHIP64 MODULE.cu ARCH [OPTION...]
 *
 * Exit 0: it compiled without a warning; 1: it did not, the log on stderr;
 * 2: hipRTC could not be used. Why a process of its own: the hipRTC of
 * Debian's HIP 5.2 reads a block amd_comgr_destroy_action_info has freed
 * (valgrind shows it) and, in a process whose heap has been used for a
 * while (the unit tests'), that read crashes. A fresh process has run
 * every module here cleanly; the fault is the library's, not the module's.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*create_fn)(void **, const char *, const char *, int, const char *const *, const char *const *);
typedef int (*compile_fn)(void *, int, const char *const *);
typedef int (*log_size_fn)(void *, size_t *);
typedef int (*log_fn)(void *, char *);
typedef int (*destroy_fn)(void **);

static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *s = malloc(cap);
  for (size_t got; s && (got = fread(s + n, 1, cap - n - 1, f)) > 0;) {
    n += got;
    if (n + 1 == cap) {
      char *t = realloc(s, cap *= 2);
      if (!t) free(s);
      s = t;
    }
  }
  fclose(f);
  if (s) s[n] = 0;
  return s;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: hiprtc_compile LIBAMDHIP64 MODULE.cu ARCH [OPTION...]\n");
    return 2;
  }
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  char *src = read_all(argv[2]);
  if (!lib || !src) {
    fprintf(stderr, "hiprtc_compile: %s\n", !lib ? dlerror() : "cannot read the module");
    return 2;
  }
  create_fn create = (create_fn)dlsym(lib, "hiprtcCreateProgram");
  compile_fn compile = (compile_fn)dlsym(lib, "hiprtcCompileProgram");
  log_size_fn log_size = (log_size_fn)dlsym(lib, "hiprtcGetProgramLogSize");
  log_fn get_log = (log_fn)dlsym(lib, "hiprtcGetProgramLog");
  destroy_fn destroy = (destroy_fn)dlsym(lib, "hiprtcDestroyProgram");
  void *prog = NULL;
  if (!create || !compile || !log_size || !get_log || !destroy || create(&prog, src, "module.cu", 0, NULL, NULL)) {
    fprintf(stderr, "hiprtc_compile: %s has no usable hipRTC\n", argv[1]);
    return 2;
  }
  char arch[128];
  snprintf(arch, sizeof arch, "--offload-arch=%s", argv[3]);
  const char *opts[16] = {arch};
  int nopts = 1;
  for (int i = 4; i < argc && nopts < 16; i++) opts[nopts++] = argv[i];
  int rc = compile(prog, nopts, opts);
  size_t n = 0;
  log_size(prog, &n);
  char *log = malloc(n + 1);
  if (log) get_log(prog, log), log[n] = 0;
  int bad = rc != 0 || (log && strstr(log, "warning"));
  if (bad) fprintf(stderr, "hipRTC (%s, %s): %s\n", argv[3], rc ? "error" : "warnings", log ? log : "?");
  free(log);
  destroy(&prog);
  free(src);
  return bad;
}
