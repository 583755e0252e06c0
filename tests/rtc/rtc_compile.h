/*
 * tests/rtc/rtc_compile.h: compiles a generated module with NVRTC (in the
 * test's process, through dlopen) or with hipRTC (through the helper
 * program tests/rtc/hiprtc_compile.c, a process of its own: its opening
 * comment says why), for unit tests that need no GPU. Header-only, for
 * tests/test_cuda_codegen.c and tests/test_cuda_portable.c; a module that fails, or compiles with a
 * warning, fails the test with the compiler's log.
 */
#ifndef ALLOY_TESTS_RTC_COMPILE_H
#define ALLOY_TESTS_RTC_COMPILE_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* (the includer has included harness.h: REQUIRE, harness_fail) */

/* NVRTC's and hipRTC's entry points have the same shapes. */
typedef int (*rtc_create_fn)(void **, const char *, const char *, int, const char *const *, const char *const *);
typedef int (*rtc_compile_fn)(void *, int, const char *const *);
typedef int (*rtc_log_size_fn)(void *, size_t *);
typedef int (*rtc_log_fn)(void *, char *);
typedef int (*rtc_destroy_fn)(void **);

/* Compiles source with the NVRTC library at path, options opts. */
static void rtc_nvrtc_compiles(const char *path, const char *source, const char *const *opts, int nopts) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!lib) harness_fail(__FILE__, __LINE__, "NVRTC (%s) does not load: %s", path, dlerror());
  REQUIRE(lib);
  rtc_create_fn create = (rtc_create_fn)dlsym(lib, "nvrtcCreateProgram");
  rtc_compile_fn compile = (rtc_compile_fn)dlsym(lib, "nvrtcCompileProgram");
  rtc_log_size_fn log_size = (rtc_log_size_fn)dlsym(lib, "nvrtcGetProgramLogSize");
  rtc_log_fn get_log = (rtc_log_fn)dlsym(lib, "nvrtcGetProgramLog");
  rtc_destroy_fn destroy = (rtc_destroy_fn)dlsym(lib, "nvrtcDestroyProgram");
  REQUIRE(create && compile && log_size && get_log && destroy);
  void *prog = NULL;
  REQUIRE(create(&prog, source, "test.cu", 0, NULL, NULL) == 0);
  int rc = compile(prog, nopts, opts);
  size_t n = 0;
  log_size(prog, &n);
  char *log = malloc(n + 1);
  if (log) get_log(prog, log), log[n] = 0;
  if (rc != 0 || (log && strstr(log, "warning")))
    harness_fail(__FILE__, __LINE__, "NVRTC (%s): %.1500s", opts[0], log ? log : "?");
  free(log);
  destroy(&prog);
  /* NVRTC stays loaded (as the plugin keeps it, RTLD_NODELETE): unloaded,
   * its cached state would read as leaks under ASan */
}

/* Compiles source with hipRTC for arch (gfx90a), through helper, the
 * hiprtc_compile program, given the HIP runtime at runtime. */
static void rtc_hiprtc_compiles(const char *helper, const char *runtime, const char *source, const char *arch,
                                const char *options) {
  if (access(helper, X_OK) != 0) harness_fail(__FILE__, __LINE__, "%s is not built", helper);
  REQUIRE(access(helper, X_OK) == 0);
  char path[] = "/tmp/alloy-hiprtc-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  FILE *f = fdopen(fd, "w");
  REQUIRE(f);
  fputs(source, f);
  fclose(f);
  char cmd[1024];
  /* hipRTC (Debian's HIP 5.2) leaves its own allocations at exit: under
   * `make asan` the helper is an ASan program, whose leak check would fail
   * it for them */
  snprintf(cmd, sizeof cmd, "ASAN_OPTIONS=detect_leaks=0 %s %s %s %s %s", helper, runtime, path, arch, options);
  int status = system(cmd);
  unlink(path);
  if (status != 0) harness_fail(__FILE__, __LINE__, "hipRTC for %s: %s exited with status %d", arch, helper, status);
}

#endif
