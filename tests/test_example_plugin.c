/*
 * tests/test_example_plugin.c: the example vendor backend (plugins/example)
 * end to end, the way an application uses it: found by the runtime as
 * liballoy-example.so, a graph built with the graph builder, compiled on
 * "example" and run on host tensors. Results are compared with values
 * computed here by plain loops in double, never with the plugin's code.
 *
 * Covered: relu(mm(a, b) + c); a symbolic batch run at two sizes; a bias
 * broadcast against a matrix; every pointwise op with alpha given as int and
 * as float; outputs that are a graph input or are listed twice; an op the
 * example does not have and an int64 input, both refused with an error
 * naming the node.
 * The plugin is found as tests/testplugin.h says.
 */
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloy/graph.h"
#include "alloy/runtime.h"
#include "harness.h"
#include "testplugin.h"

/* ---- graphs ---------------------------------------------------------------- */

static alloy_value *input(alloy_graph *g, const char *name, alloy_dtype t, const alloy_dim *shape,
                          int rank) {
  alloy_value_type vt = {ALLOY_VALUE_TENSOR, t, rank, shape, NULL, {ALLOY_DEVICE_CPU, -1}, {NULL, 0}};
  alloy_value *v = NULL;
  CHECK_OK(alloy_graph_add_input(g, name, &vt, &v));
  return v;
}

static alloy_value *node(alloy_graph *g, const char *op, const alloy_arg *args, int n,
                         const char *kwname, alloy_arg kwarg, const char *name) {
  alloy_node *nd = NULL;
  const char *kwnames[1] = {kwname};
  CHECK_OK(alloy_graph_add_node(g, alloy_op_find(op), args, n, kwname ? kwnames : NULL,
                                kwname ? &kwarg : NULL, kwname ? 1 : 0, name, &nd));
  return nd ? alloy_node_output(nd, 0) : NULL;
}

static alloy_value *op1(alloy_graph *g, const char *op, alloy_value *x, const char *name) {
  alloy_arg args[1] = {alloy_arg_value(x)};
  return x ? node(g, op, args, 1, NULL, alloy_arg_none(), name) : NULL;
}

static alloy_value *op2(alloy_graph *g, const char *op, alloy_value *x, alloy_value *y,
                        const char *name) {
  alloy_arg args[2] = {alloy_arg_value(x), alloy_arg_value(y)};
  return x && y ? node(g, op, args, 2, NULL, alloy_arg_none(), name) : NULL;
}

static alloy_value *op2_alpha(alloy_graph *g, const char *op, alloy_value *x, alloy_value *y,
                              alloy_arg alpha, const char *name) {
  alloy_arg args[2] = {alloy_arg_value(x), alloy_arg_value(y)};
  return x && y ? node(g, op, args, 2, "alpha", alpha, name) : NULL;
}

/* y = relu(mm(a, b) + c): a [m, k], b [k, n], c [m, n] or, with c_row,
 * [n]. With batch_sym, m is the symbol s0 in [1, 64]. */
static alloy_graph *mm_add_relu(int64_t m, int64_t k, int64_t n, bool c_row, bool batch_sym) {
  alloy_graph *g = alloy_graph_new();
  alloy_dim dm = alloy_dim_const(m);
  if (batch_sym) CHECK_OK(alloy_sym_new(alloy_graph_symtab(g), "s0", 1, 64, &dm));
  alloy_dim sa[2] = {dm, alloy_dim_const(k)}, sb[2] = {alloy_dim_const(k), alloy_dim_const(n)};
  alloy_dim sc[2] = {dm, alloy_dim_const(n)};
  alloy_value *a = input(g, "a", ALLOY_F32, sa, 2);
  alloy_value *b = input(g, "b", ALLOY_F32, sb, 2);
  alloy_value *c = c_row ? input(g, "c", ALLOY_F32, sc + 1, 1) : input(g, "c", ALLOY_F32, sc, 2);
  alloy_value *y = op1(g, "aten.relu.default", op2(g, "aten.add.Tensor", op2(g, "aten.mm.default", a, b, "ab"), c, "abc"), "y");
  if (y) CHECK_OK(alloy_graph_set_outputs(g, &y, 1));
  return g;
}

/* ---- data and checks ---------------------------------------------------------- */

/* Values in [-1, 1) that differ from element to element and input to
 * input (seed), with some negatives for relu to clear. */
static float *fill(int64_t count, int seed) {
  float *p = malloc((size_t)(count ? count : 1) * sizeof *p);
  for (int64_t i = 0; p && i < count; i++)
    p[i] = (float)((i * 37 + seed * 11 + 5) % 29) / 14.5f - 1.0f;
  return p;
}

static alloy_host_tensor host(float *data, int rank, const int64_t *sizes) {
  alloy_host_tensor t = {sizeof t, ALLOY_F32, rank, sizes, data};
  return t;
}

/* float32 tolerance of DESIGN.md (torch.testing.assert_close defaults). */
static bool close_f32(double got, double want) {
  return fabs(got - want) <= 1e-5 + 1.3e-6 * fabs(want);
}

static void check_output(const alloy_host_tensor *out, int rank, const int64_t *sizes,
                         const double *want, const char *what) {
  CHECK_INT(out->dtype, ALLOY_F32);
  CHECK_INT(out->rank, rank);
  if (out->rank != rank || !out->data) return;
  int64_t count = 1;
  for (int d = 0; d < rank; d++) {
    CHECK_INT(out->sizes[d], sizes[d]);
    if (out->sizes[d] != sizes[d]) return;
    count *= sizes[d];
  }
  const float *got = out->data;
  int bad = 0;
  for (int64_t i = 0; i < count; i++)
    if (!close_f32(got[i], want[i]) && bad++ < 3)
      harness_fail(__FILE__, __LINE__, "%s[%lld] = %.9g, expected %.9g", what, (long long)i,
                   (double)got[i], want[i]);
}

/* relu(a @ b + c), by the textbook loop, in double. */
static double *expect_mm_add_relu(const float *a, const float *b, const float *c, int64_t m,
                                  int64_t k, int64_t n, bool c_row) {
  double *want = malloc((size_t)(m * n) * sizeof *want);
  for (int64_t i = 0; want && i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double acc = 0.0;
      for (int64_t p = 0; p < k; p++) acc += (double)a[i * k + p] * (double)b[p * n + j];
      acc += c_row ? c[j] : c[i * n + j];
      want[i * n + j] = acc > 0.0 ? acc : 0.0;
    }
  return want;
}

/* Compiles relu(mm(a, b) + c) and runs it at each batch size in ms. */
static void run_mm_add_relu(const int64_t *ms, int nruns, int64_t k, int64_t n, bool c_row,
                            bool batch_sym) {
  int be;
  alloy_runtime *rt = tp_open_example(&be);
  if (!rt || be < 0) {
    alloy_runtime_close(rt);
    return;
  }
  alloy_graph *g = mm_add_relu(ms[0], k, n, c_row, batch_sym);
  alloy_program *p = NULL;
  CHECK_OK(alloy_program_compile(rt, be, g, &p));
  for (int r = 0; p && r < nruns; r++) {
    int64_t m = ms[r];
    int64_t sa[2] = {m, k}, sb[2] = {k, n}, sc[2] = {m, n}, sy[2] = {m, n};
    float *a = fill(m * k, 1), *b = fill(k * n, 2), *c = fill(c_row ? n : m * n, 3);
    alloy_host_tensor in[3] = {host(a, 2, sa), host(b, 2, sb),
                               c_row ? host(c, 1, sc + 1) : host(c, 2, sc)};
    alloy_host_tensor out[1];
    memset(out, 0, sizeof out);
    CHECK_OK(alloy_program_run(p, in, 3, out, 1));
    double *want = expect_mm_add_relu(a, b, c, m, k, n, c_row);
    if (out[0].data) check_output(&out[0], 2, sy, want, "y");
    else harness_fail(__FILE__, __LINE__, "run %d (m = %lld) gave no output", r, (long long)m);
    free(want);
    free(a);
    free(b);
    free(c);
  }
  alloy_program_release(p);
  alloy_graph_free(g);
  alloy_runtime_close(rt);
}

/* ---- tests ------------------------------------------------------------------------ */

TEST(example_plugin_is_found_with_its_identity) {
  int be;
  alloy_runtime *rt = tp_open_example(&be);
  if (rt && be >= 0) {
    alloy_backend_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    alloy_runtime_backend_info(rt, be, &info);
    CHECK(info.ok);
    CHECK_STR(info.name, "example");
    CHECK_STR(info.vendor, "Alloy Example Vendor");
    CHECK_STR(info.version, "1.0.0");
    CHECK_INT(info.abi_major, ALLOY_ABI_MAJOR);
    CHECK_INT(info.num_devices, 1);
    CHECK(info.devices && strstr(info.devices, "cpu0"));
  }
  alloy_runtime_close(rt);
}

TEST(example_plugin_runs_mm_add_relu) {
  const int64_t m[1] = {5};
  run_mm_add_relu(m, 1, 7, 3, false, false);
}

/* k = 1 and n = 1: a [m, 1] and b [1, n] are shaped like broadcasts of
 * out0, but mm asks for their sizes, so they must reach it unbroadcast. */
TEST(example_plugin_runs_mm_with_unit_dims) {
  const int64_t m[1] = {4};
  run_mm_add_relu(m, 1, 1, 6, false, false);
  run_mm_add_relu(m, 1, 3, 1, false, false);
}

TEST(example_plugin_runs_a_symbolic_batch_at_two_sizes) {
  const int64_t m[3] = {3, 17, 1};
  run_mm_add_relu(m, 3, 4, 6, false, true);
}

TEST(example_plugin_broadcasts_a_bias_row) {
  const int64_t m[1] = {6};
  run_mm_add_relu(m, 1, 4, 5, true, false);
  const int64_t ms[2] = {2, 9};
  run_mm_add_relu(ms, 2, 4, 5, true, true);
}

/* Every pointwise kernel, alpha as an int and as a float, and outputs
 * that are not plain node results: a graph input, a value listed twice. */
TEST(example_plugin_runs_every_pointwise_op) {
  int be;
  alloy_runtime *rt = tp_open_example(&be);
  if (!rt || be < 0) {
    alloy_runtime_close(rt);
    return;
  }
  alloy_graph *g = alloy_graph_new();
  alloy_dim shape[2] = {alloy_dim_const(3), alloy_dim_const(4)};
  alloy_value *x = input(g, "x", ALLOY_F32, shape, 2);
  alloy_value *w = input(g, "w", ALLOY_F32, shape, 2);
  alloy_value *s = op2_alpha(g, "aten.sub.Tensor", x, w, alloy_arg_float(2.5), "s");
  alloy_value *e = op1(g, "aten.exp.default", w, "e");
  alloy_value *d = op2(g, "aten.div.Tensor", s, e, "d");
  alloy_value *m = op2(g, "aten.mul.Tensor", d, x, "m");
  alloy_value *ng = op1(g, "aten.neg.default", m, "ng");
  alloy_value *y = op2_alpha(g, "aten.add.Tensor", ng, x, alloy_arg_int(2), "y");
  alloy_value *outs[4] = {y, x, y, s};
  if (y) CHECK_OK(alloy_graph_set_outputs(g, outs, 4));
  alloy_program *p = NULL;
  CHECK_OK(alloy_program_compile(rt, be, g, &p));
  int64_t sizes[2] = {3, 4};
  float *xv = fill(12, 4), *wv = fill(12, 5);
  double wy[12], wx[12], ws[12];
  for (int i = 0; i < 12; i++) {
    ws[i] = (double)xv[i] - 2.5 * wv[i];
    double dv = ws[i] / exp((double)wv[i]);
    wy[i] = -(dv * xv[i]) + 2.0 * xv[i];
    wx[i] = xv[i];
  }
  alloy_host_tensor in[2] = {host(xv, 2, sizes), host(wv, 2, sizes)};
  alloy_host_tensor out[4];
  memset(out, 0, sizeof out);
  if (p) CHECK_OK(alloy_program_run(p, in, 2, out, 4));
  if (out[0].data && out[1].data && out[2].data && out[3].data) {
    check_output(&out[0], 2, sizes, wy, "y");
    check_output(&out[1], 2, sizes, wx, "x (an input as output)");
    check_output(&out[2], 2, sizes, wy, "y (listed twice)");
    check_output(&out[3], 2, sizes, ws, "s (an intermediate that is also an output)");
  } else if (p) {
    harness_fail(__FILE__, __LINE__, "the run gave no outputs");
  }
  free(xv);
  free(wv);
  alloy_program_release(p);
  alloy_graph_free(g);
  alloy_runtime_close(rt);
}

/* Compiling g on the example must fail naming node `name` and its op. */
static void check_refused(alloy_graph *g, const char *name, const char *op) {
  int be;
  alloy_runtime *rt = tp_open_example(&be);
  if (rt && be >= 0) {
    alloy_program *p = NULL;
    alloy_error *e = alloy_program_compile(rt, be, g, &p);
    CHECK(e != NULL);
    CHECK(p == NULL);
    if (e) {
      const char *msg = alloy_error_message(e);
      if (!strstr(msg, name) || !strstr(msg, op))
        harness_fail(__FILE__, __LINE__, "the error \"%s\" does not name %s and %s", msg, name, op);
      alloy_error_free(e);
    }
    alloy_program_release(p);
  }
  alloy_runtime_close(rt);
}

TEST(example_plugin_refuses_an_op_it_does_not_have) {
  alloy_graph *g = alloy_graph_new();
  alloy_dim shape[1] = {alloy_dim_const(8)};
  alloy_value *x = input(g, "x", ALLOY_F32, shape, 1);
  alloy_value *y = op1(g, "aten.sin.default", op1(g, "aten.relu.default", x, "r"), "sine_node");
  if (y) CHECK_OK(alloy_graph_set_outputs(g, &y, 1));
  check_refused(g, "sine_node", "aten.sin.default");
  alloy_graph_free(g);
}

TEST(example_plugin_does_not_claim_int64) {
  alloy_graph *g = alloy_graph_new();
  alloy_dim shape[2] = {alloy_dim_const(2), alloy_dim_const(3)};
  alloy_value *x = input(g, "xi", ALLOY_I64, shape, 2);
  alloy_value *y = op1(g, "aten.relu.default", x, "int_relu");
  if (y) CHECK_OK(alloy_graph_set_outputs(g, &y, 1));
  check_refused(g, "int_relu", "aten.relu.default");
  alloy_graph_free(g);
  /* Mixed: an f32 + i64 add promotes to f32, but the kernel wants every
   * operand f32. */
  g = alloy_graph_new();
  alloy_value *a = input(g, "a", ALLOY_F32, shape, 2);
  alloy_value *b = input(g, "b", ALLOY_I64, shape, 2);
  y = op2(g, "aten.add.Tensor", a, b, "mixed_add");
  if (y) CHECK_OK(alloy_graph_set_outputs(g, &y, 1));
  check_refused(g, "mixed_add", "aten.add.Tensor");
  alloy_graph_free(g);
}
