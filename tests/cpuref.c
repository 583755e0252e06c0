/*
 * tests/cpuref.c: see cpuref.h.
 */
#include "cpuref.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "sdk/src/host.h"

const char *cpuref_plugin_dir(void) {
  static char dir[PATH_MAX + 32];
  const char *build = getenv("ALLOY_TEST_BUILD");
  if (build && *build) {
    snprintf(dir, sizeof dir, "%s/lib/alloy", build);
    return dir;
  }
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return "build/lib/alloy";
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (slash) *slash = '\0';
  snprintf(dir, sizeof dir, "%s/../lib/alloy", exe);
  return dir;
}

/* A runtime with the cpu plugin, or NULL (and a line saying so) when it
 * was not built here. */
alloy_runtime *cpuref_open(int *cpu, int *ref) {
  const char *dirs[1] = {cpuref_plugin_dir()};
  const char *only[1] = {"cpu"};
  alloy_runtime_options o = {.struct_size = ALLOY_RUNTIME_OPTIONS_STRUCT_SIZE,
                             .plugin_dirs = dirs,
                             .num_plugin_dirs = 1,
                             .no_default_paths = true,
                             .only_backends = only,
                             .num_only_backends = 1};
  alloy_runtime *rt = NULL;
  CHECK_OK(alloy_runtime_open(&o, &rt));
  if (!rt) return NULL;
  *cpu = alloy_runtime_find_backend(rt, "cpu");
  *ref = alloy_runtime_find_backend(rt, "ref");
  if (*cpu < 0) {
    printf("  (skipped: no cpu plugin in %s: built where llvm-config is)\n", dirs[0]);
    alloy_runtime_close(rt);
    return NULL;
  }
  return rt;
}

/* Runs g on backend i with the inputs; copies output 0 (numel values of
 * the dtype) into out. */
bool cpuref_run(alloy_runtime *rt, int backend, const alloy_graph *g, const alloy_host_tensor *in, int nin,
                   void *out, size_t bytes, int which) {
  alloy_program *p = NULL;
  alloy_error *e = alloy_program_compile(rt, backend, g, &p);
  if (e) {
    harness_fail(__FILE__, __LINE__, "compile: %s", alloy_error_message(e));
    alloy_error_free(e);
    return false;
  }
  alloy_host_tensor o[4];
  memset(o, 0, sizeof o);
  for (int i = 0; i < 4; i++) o[i].struct_size = ALLOY_HOST_TENSOR_STRUCT_SIZE;
  int nout = alloy_host_table()->graph_num_outputs(g);
  e = nout > 4 ? alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "too many outputs") : alloy_program_run(p, in, nin, o, nout);
  bool ok = !e;
  if (e) {
    harness_fail(__FILE__, __LINE__, "run: %s", alloy_error_message(e));
    alloy_error_free(e);
  } else {
    memcpy(out, o[which].data, bytes);
  }
  alloy_program_release(p);
  return ok;
}

alloy_host_tensor cpuref_host(alloy_dtype t, int rank, const int64_t *sizes, void *data) {
  return (alloy_host_tensor){ALLOY_HOST_TENSOR_STRUCT_SIZE, t, rank, sizes, data};
}
