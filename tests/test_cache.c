/*
 * tests/test_cache.c: the runtime's compile cache (sdk/src/cache.c).
 *
 * A graph compiled twice on one backend is compiled once: the second
 * program gets the first one's executable (a hit), and both still run
 * right after the first is released. With $ALLOY_CACHE_DIR set and a
 * backend that serializes executables (the test plugin newer_minor, whose
 * relu executables serialize to a tag), a fresh runtime reads the
 * executable back from disk instead of compiling; a file whose plugin
 * version does not match is a miss. The reference backend does not
 * serialize: it caches in memory only and writes no file.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloy/graph.h"
#include "alloy/runtime.h"
#include "harness.h"
#include "testplugin.h"

/* relu over f32[size]. */
static alloy_graph *relu_of(alloy_graph *g, alloy_dim size) {
  alloy_value_type t = {.kind = ALLOY_VALUE_TENSOR, .dtype = ALLOY_F32, .rank = 1, .shape = &size};
  alloy_value *x, *y;
  CHECK_OK(alloy_graph_add_input(g, "x", &t, &x));
  alloy_arg a = alloy_arg_value(x);
  alloy_node *n = NULL;
  CHECK_OK(alloy_graph_add_node(g, alloy_op_find("aten.relu.default"), &a, 1, NULL, NULL, 0, "y", &n));
  y = n ? alloy_node_output(n, 0) : NULL;
  if (y) CHECK_OK(alloy_graph_set_outputs(g, &y, 1));
  return g;
}

static alloy_graph *relu_graph(void) { return relu_of(alloy_graph_new(), alloy_dim_const(4)); }

/* Runs relu on [-1, 2, -3, 4] and checks [0, 2, 0, 4]. */
static void run_relu(alloy_program *p) {
  float x[4] = {-1, 2, -3, 4};
  int64_t sizes[1] = {4};
  alloy_host_tensor in = {sizeof in, ALLOY_F32, 1, sizes, x}, out = {.struct_size = sizeof out};
  CHECK_OK(alloy_program_run(p, &in, 1, &out, 1));
  const float *y = out.data;
  CHECK(y && y[0] == 0 && y[1] == 2 && y[2] == 0 && y[3] == 4);
}

static alloy_runtime *open_in(const char *dir) {
  const char *dirs[1] = {dir};
  alloy_runtime_options o = {.struct_size = sizeof o, .plugin_dirs = dirs, .num_plugin_dirs = 1,
                             .no_default_paths = true};
  alloy_runtime *rt = NULL;
  CHECK_OK(alloy_runtime_open(&o, &rt));
  return rt;
}

TEST(cache_shares_one_executable_in_memory) {
  alloy_runtime *rt = open_in("/nonexistent");
  REQUIRE(rt);
  int ref = alloy_runtime_find_backend(rt, "ref");
  alloy_graph *g = relu_graph();
  alloy_program *a = NULL, *b = NULL;
  CHECK_OK(alloy_program_compile(rt, ref, g, &a));
  CHECK_OK(alloy_program_compile(rt, ref, g, &b));
  REQUIRE(a && b);
  alloy_cache_stats st;
  alloy_runtime_cache_stats(rt, &st);
  CHECK_INT(st.misses, 1);
  CHECK_INT(st.hits, 1);
  alloy_program_release(a); /* b's executable must outlive a */
  alloy_graph_free(g);      /* and the graph it was compiled from */
  run_relu(b);
  alloy_program_release(b);
  alloy_runtime_close(rt);
}

TEST(cache_reads_executables_back_from_disk) {
  char dir[512], cache[600], lib[PATH_MAX + 64], cmd[4 * PATH_MAX + 256];
  snprintf(dir, sizeof dir, "%s/alloy-cache-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
           (int)getpid());
  snprintf(cache, sizeof cache, "%s/cache", dir);
  snprintf(lib, sizeof lib, "%s/liballoy-newer_minor.so", tp_test_plugins_dir());
  snprintf(cmd, sizeof cmd, "mkdir -p '%s' && cp '%s' '%s/'", cache, lib, dir);
  REQUIRE(system(cmd) == 0);
  setenv("ALLOY_CACHE_DIR", cache, 1);
  alloy_graph *g = relu_graph();
  for (int round = 0; round < 3; round++) {
    alloy_runtime *rt = open_in(dir);
    REQUIRE(rt);
    int b = alloy_runtime_find_backend(rt, "newer_minor");
    REQUIRE(b >= 0);
    alloy_program *p = NULL;
    CHECK_OK(alloy_program_compile(rt, b, g, &p));
    REQUIRE(p);
    run_relu(p);
    alloy_cache_stats st;
    alloy_runtime_cache_stats(rt, &st);
    /* 0: compiled and written; 1: read back; 2: the file was altered to
     * another plugin version, so compiled again. */
    CHECK_INT(st.misses, round == 1 ? 0 : 1);
    CHECK_INT(st.disk_hits, round == 1 ? 1 : 0);
    alloy_program_release(p);
    alloy_runtime_close(rt);
    if (round == 1) {
      snprintf(cmd, sizeof cmd, "sed -i 's/^version .*/version 0.0.1/' '%s'/*.bin", cache);
      CHECK(system(cmd) == 0);
    }
  }
  /* ref does not serialize: nothing of it is written. */
  alloy_runtime *rt = open_in(dir);
  alloy_program *p = NULL;
  CHECK_OK(alloy_program_compile(rt, alloy_runtime_find_backend(rt, "ref"), g, &p));
  alloy_program_release(p);
  alloy_runtime_close(rt);
  snprintf(cmd, sizeof cmd, "ls '%s' | grep -q '^ref-'", cache);
  CHECK(system(cmd) != 0);
  unsetenv("ALLOY_CACHE_DIR");
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0);
  alloy_graph_free(g);
}

/* relu over f32[s0], s0 in [1, 16]. */
static alloy_graph *relu_symbolic(void) {
  alloy_graph *g = alloy_graph_new();
  alloy_dim s0 = alloy_dim_const(1);
  CHECK_OK(alloy_sym_new(alloy_graph_symtab(g), "s0", 1, 16, &s0));
  return relu_of(g, s0);
}

/* A backend that declares ALLOY_CAP_SYMBOLIC_SHAPES compiles a symbolic
 * graph once and runs it at every size; ref gets one specialization per
 * size. */
TEST(cache_symbolic_backend_compiles_once) {
  alloy_runtime *rt = open_in(tp_test_plugins_dir());
  REQUIRE(rt);
  int sym = alloy_runtime_find_backend(rt, "symbolic"), ref = alloy_runtime_find_backend(rt, "ref");
  REQUIRE(sym >= 0 && ref >= 0);
  alloy_graph *g = relu_symbolic();
  for (int b = 0; b < 2; b++) {
    alloy_program *p = NULL;
    CHECK_OK(alloy_program_compile(rt, b ? ref : sym, g, &p));
    REQUIRE(p);
    for (int64_t n = 3; n <= 5; n += 2) {
      float x[5] = {-1, 2, -3, 4, -5};
      int64_t sizes[1] = {n};
      alloy_host_tensor in = {sizeof in, ALLOY_F32, 1, sizes, x}, out = {.struct_size = sizeof out};
      CHECK_OK(alloy_program_run(p, &in, 1, &out, 1));
      const float *y = out.data;
      CHECK_INT(out.sizes[0], n);
      for (int64_t i = 0; y && i < n; i++) CHECK(y[i] == (x[i] > 0 ? x[i] : 0));
    }
    CHECK_INT(alloy_program_num_specializations(p), b ? 2 : 0);
    alloy_program_release(p);
  }
  alloy_graph_free(g);
  alloy_runtime_close(rt);
}
