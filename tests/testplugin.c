/*
 * tests/testplugin.c: see testplugin.h.
 */
#include "tests/testplugin.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/harness.h"

static bool has_example(const char *dir) {
  char path[2 * PATH_MAX];
  snprintf(path, sizeof path, "%s/liballoy-example.so", dir);
  return access(path, R_OK) == 0;
}

static const char *example_dir(void) {
  static char dir[PATH_MAX + 32];
  const char *env = getenv("ALLOY_TEST_PLUGIN_DIR");
  if (env && *env && has_example(env)) return env;
  const char *build = getenv("ALLOY_TEST_BUILD");
  if (build && *build) {
    snprintf(dir, sizeof dir, "%s/lib/alloy", build);
    if (has_example(dir)) return dir;
  }
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) {
      *slash = '\0';
      snprintf(dir, sizeof dir, "%s/../lib/alloy", exe);
      if (has_example(dir)) return dir;
    }
  }
  return "build/lib/alloy";
}

/* A runtime that searches only the example's folder (plus the built-in
 * reference backend), and the example's index in it. */
alloy_runtime *tp_open_example(int *backend) {
  const char *dirs[1] = {example_dir()};
  alloy_runtime_options opt = {
      .struct_size = sizeof opt,
      .plugin_dirs = dirs,
      .num_plugin_dirs = 1,
      .no_default_paths = true,
  };
  alloy_runtime *rt = NULL;
  CHECK_OK(alloy_runtime_open(&opt, &rt));
  *backend = rt ? alloy_runtime_find_backend(rt, "example") : -1;
  if (rt && *backend < 0) harness_fail(__FILE__, __LINE__, "no usable backend \"example\" in %s", dirs[0]);
  return rt;
}


const char *tp_test_plugins_dir(void) {
  static char dir[PATH_MAX + 64];
  snprintf(dir, sizeof dir, "%s/../../tests/plugins", example_dir());
  return dir;
}
