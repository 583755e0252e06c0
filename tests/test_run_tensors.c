/*
 * tests/test_run_tensors.c: runs on tensors where the caller keeps them
 * (alloy_program_run_tensors, alloy_mixture_run_tensors, the output-size
 * queries; sdk/src/exec.c's placed runs). The reference backend and the
 * example plugin are kernel tables, whose device memory is host memory
 * that buffer_import takes in place: so "device memory" here is an array
 * of the test, and the run stats tell whether the runtime copied it (an
 * input read in place moves no bytes in; an output written by a copy on
 * the backend moves none out).
 */
#include <string.h>

#include "alloy/graph.h"
#include "alloy/runtime.h"
#include "harness.h"
#include "testplugin.h"

static alloy_graph *parse(const char *air) {
  alloy_graph *g = NULL;
  CHECK_OK(alloy_air_parse(air, strlen(air), "test.air", &g));
  return g;
}

static alloy_run_tensor tensor(int backend, alloy_dtype t, int rank, const int64_t *sizes, void *data) {
  return (alloy_run_tensor){.struct_size = ALLOY_RUN_TENSOR_STRUCT_SIZE, .dtype = t, .rank = rank,
                            .sizes = sizes, .data = data, .backend = backend};
}

/* y = relu(x) + w on one backend, x and y in its device memory: nothing
 * moves through the host but the weight w, once. */
TEST(run_tensors_read_and_write_device_memory_in_place) {
  alloy_runtime *rt = NULL;
  CHECK_OK(alloy_runtime_open(NULL, &rt));
  REQUIRE(rt);
  int ref = alloy_runtime_find_backend(rt, "ref");
  alloy_graph *g = parse("input %x: f32[2, 3]\n"
                         "input %w: f32[2, 3]\n"
                         "%r = aten.relu.default(%x)\n"
                         "%y = aten.add.Tensor(%r, %w)\n"
                         "output %y, %x\n");
  REQUIRE(g);
  alloy_program *p = NULL;
  CHECK_OK(alloy_program_compile(rt, ref, g, &p));
  REQUIRE(p);
  static const int64_t sz[2] = {2, 3};
  float x[6] = {-1, 2, -3, 4, -5, 6}, w[6] = {10, 20, 30, 40, 50, 60}, y[6] = {0}, xo[6] = {0};
  alloy_run_tensor in[2] = {tensor(ref, ALLOY_F32, 2, sz, x), tensor(-1, ALLOY_F32, 2, sz, w)};
  alloy_run_tensor out[2] = {tensor(ref, ALLOY_F32, 2, sz, y), tensor(-1, ALLOY_F32, 2, sz, xo)};
  CHECK_OK(alloy_program_run_tensors(p, in, 2, out, 2));
  static const float want[6] = {10, 22, 30, 44, 50, 66};
  for (int i = 0; i < 6; i++) CHECK(y[i] == want[i]);
  for (int i = 0; i < 6; i++) CHECK(xo[i] == x[i]); /* an input passed through, to host memory */
  alloy_run_stats st = {.struct_size = ALLOY_RUN_STATS_STRUCT_SIZE};
  alloy_program_stats(p, &st);
  CHECK_INT(st.input_bytes_in, sizeof w); /* x read in place, w copied in */
  CHECK_INT(st.output_bytes_out, 0);      /* y written on the backend */
  /* other values in the same memory, read again in place */
  x[0] = 7;
  CHECK_OK(alloy_program_run_tensors(p, in, 2, out, 2));
  CHECK(y[0] == 17 && xo[0] == 7);
  /* a caller's output of other sizes than the run makes: named */
  static const int64_t bad[2] = {3, 2};
  out[0].sizes = bad;
  alloy_error *e = alloy_program_run_tensors(p, in, 2, out, 2);
  CHECK(e && alloy_error_code_of(e) == ALLOY_ERR_INVALID_ARGUMENT);
  if (e) CHECK(strstr(alloy_error_message(e), "output 0: the caller's tensor is f32[3, 2], the run makes f32[2, 3]"));
  alloy_error_free(e);
  out[0].sizes = sz;
  /* a backend index that is not open */
  in[0].backend = 99;
  e = alloy_program_run_tensors(p, in, 2, out, 2);
  CHECK(e && strstr(alloy_error_message(e), "input 0: backend 99 is not an open backend"));
  alloy_error_free(e);
  alloy_program_release(p);
  alloy_graph_free(g);
  alloy_runtime_close(rt);
}

/* A mixture over the example plugin and ref: x in the example's device
 * memory is read in place by the example's partition and copied (through
 * the host) to ref's; the output lands in ref's device memory. */
TEST(mixture_run_tensors_moves_device_memory_between_backends) {
  int example;
  alloy_runtime *rt = tp_open_example(&example);
  REQUIRE(rt);
  int ref = alloy_runtime_find_backend(rt, "ref");
  /* the example runs add and neg; abs only ref */
  alloy_graph *g = parse("input %x: f32[4]\n"
                         "%a = aten.add.Tensor(%x, %x)\n"
                         "%b = aten.abs.default(%x)\n"
                         "%c = aten.abs.default(%a)\n"
                         "%y = aten.add.Tensor(%c, %b)\n"
                         "output %y\n");
  REQUIRE(g);
  int order[2] = {example, ref};
  alloy_mixture *m = NULL;
  /* free transfers: the priority choice stands, a partition each */
  alloy_program_options po = {.struct_size = ALLOY_PROGRAM_OPTIONS_STRUCT_SIZE, .partition_launch_s = -1,
                              .link_bytes_per_s = -1};
  CHECK_OK(alloy_mixture_compile(rt, order, 2, g, &po, &m));
  REQUIRE(m);
  CHECK(alloy_mixture_num_partitions(m) >= 2);
  static const int64_t sz[1] = {4};
  float x[4] = {1, -2, 3, -4}, y[4] = {0};
  alloy_run_tensor in = tensor(example, ALLOY_F32, 1, sz, x), out = tensor(ref, ALLOY_F32, 1, sz, y);
  int rank = 0;
  int64_t osz[ALLOY_MAX_RANK] = {0};
  CHECK_OK(alloy_mixture_output_sizes(m, &in, 1, 0, &rank, osz));
  CHECK(rank == 1 && osz[0] == 4);
  CHECK_OK(alloy_mixture_run_tensors(m, &in, 1, &out, 1));
  for (int i = 0; i < 4; i++) CHECK(y[i] == 3 * (x[i] < 0 ? -x[i] : x[i]));
  alloy_run_stats st = {.struct_size = ALLOY_RUN_STATS_STRUCT_SIZE};
  alloy_mixture_stats(m, &st);
  CHECK_INT(st.input_bytes_in, sizeof x); /* ref's copy of x; the example read it in place */
  CHECK_INT(st.output_bytes_out, 0);
  alloy_mixture_release(m);
  alloy_graph_free(g);
  alloy_runtime_close(rt);
}

/* Symbolic sizes: the output's, for the inputs given, before any run; and
 * the run after uses them. */
TEST(output_sizes_work_out_symbolic_sizes_before_a_run) {
  alloy_runtime *rt = NULL;
  CHECK_OK(alloy_runtime_open(NULL, &rt));
  REQUIRE(rt);
  int ref = alloy_runtime_find_backend(rt, "ref");
  alloy_graph *g = parse("sym s0 in [2, 64]\n"
                         "input %x: f32[s0, 3]\n"
                         "%c = aten.cat.default([%x, %x], 0)\n"
                         "output %c\n");
  REQUIRE(g);
  alloy_program *p = NULL;
  CHECK_OK(alloy_program_compile(rt, ref, g, &p));
  REQUIRE(p);
  static const int64_t sz[2] = {5, 3};
  float x[15], y[30];
  for (int i = 0; i < 15; i++) x[i] = (float)i;
  alloy_run_tensor in = tensor(-1, ALLOY_F32, 2, sz, x);
  int rank = 0;
  int64_t osz[ALLOY_MAX_RANK] = {0};
  CHECK_OK(alloy_program_output_sizes(p, &in, 1, 0, &rank, osz));
  CHECK(rank == 2 && osz[0] == 10 && osz[1] == 3);
  alloy_error *e = alloy_program_output_sizes(p, &in, 1, 1, &rank, osz);
  CHECK(e && strstr(alloy_error_message(e), "no output 1"));
  alloy_error_free(e);
  alloy_run_tensor out = tensor(ref, ALLOY_F32, 2, osz, y);
  CHECK_OK(alloy_program_run_tensors(p, &in, 1, &out, 1));
  CHECK(y[0] == 0 && y[14] == 14 && y[15] == 0 && y[29] == 14);
  alloy_program_release(p);
  alloy_graph_free(g);
  alloy_runtime_close(rt);
}
