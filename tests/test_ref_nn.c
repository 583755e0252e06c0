/*
 * tests/test_ref_nn.c: the reference backend's nn-family kernels on what
 * the golden corpus does not hold: the backward ops (convolution, layer
 * and group norm, average and adaptive pooling, embedding), the ATen-level
 * ops that export keeps (conv2d, linear, layer_norm, max_pool2d,
 * scaled_dot_product_attention with its masks, scale and GQA), the
 * overloads without samples (avg_pool1d, adaptive_avg_pool1d, the .vec
 * upsamplings, the batch norm variants without training or without
 * stats), and a few rules worth pinning (NaN through max pooling, an
 * all-ignored nll mean).
 *
 * Each test builds a small graph with the runtime API, runs it on "ref"
 * and compares with values worked out by hand in the comments, or, for the
 * backward ops on random data, with what the test derives independently:
 * the adjoint identities <conv(x, w), g> = <x, grad_input> = <w,
 * grad_weight>, and central differences of a forward computed here in
 * double.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testref.h"

/* ---- helpers (the graph under test: testref.h) ---------------------------*/

static alloy_arg bools(alloy_arg *items, int n, const bool *v) {
  for (int k = 0; k < n; k++) items[k] = alloy_arg_bool(v[k]);
  return alloy_arg_list(items, n);
}

static double value_at(const alloy_host_tensor *h, int64_t i) {
  return h->dtype == ALLOY_F64 ? ((const double *)h->data)[i] : ((const float *)h->data)[i];
}

/* float32 or float64 values against want; NaN matches NaN. */
static bool values_are(const alloy_host_tensor *h, const double *want, int n, double tol) {
  if (tr_numel(h) != n) {
    harness_fail(__FILE__, __LINE__, "%lld elements, expected %d", (long long)tr_numel(h), n);
    return false;
  }
  for (int i = 0; i < n; i++) {
    double got = value_at(h, i);
    if (isnan(want[i]) ? !isnan(got) : !(fabs(got - want[i]) <= tol * (1.0 + fabs(want[i])))) {
      harness_fail(__FILE__, __LINE__, "element %d: got %.9g, expected %.9g", i, got, want[i]);
      return false;
    }
  }
  return true;
}


static double dot(const double *a, const alloy_host_tensor *b, int64_t n) {
  double s = 0.0;
  for (int64_t i = 0; i < n; i++) s += a[i] * value_at(b, i);
  return s;
}

/* ---- convolution ---------------------------------------------------------*/

TEST(ref_nn_convolution_backward_1d_by_hand) {
  /* x = [1, 2, 3, 4], w = [1, -1]: y[o] = x[o] - x[o+1]. With g = [1, 2, 3]:
   * grad_input[i] = sum_o g[o] w[i-o] = [1, -1+2, -2+3, -3] = [1, 1, 1, -3];
   * grad_weight[k] = sum_o g[o] x[o+k] = [1+4+9, 2+6+12] = [14, 20];
   * grad_bias = 1 + 2 + 3 = 6 */
  static double x[4] = {1, 2, 3, 4}, w[2] = {1, -1}, g[3] = {1, 2, 3};
  tr_case t;
  REQUIRE(tr_open(&t));
  alloy_arg l[6][1];
  bool mask[3] = {true, true, true};
  alloy_arg m[3];
  alloy_arg args[11] = {tr_input(&t, ALLOY_F64, (int64_t[]){1, 1, 3}, 3, g),
                        tr_input(&t, ALLOY_F64, (int64_t[]){1, 1, 4}, 3, x),
                        tr_input(&t, ALLOY_F64, (int64_t[]){1, 1, 2}, 3, w),
                        tr_ints(l[0], 1, (int64_t[]){1}),
                        tr_ints(l[1], 1, (int64_t[]){1}),
                        tr_ints(l[2], 1, (int64_t[]){0}),
                        tr_ints(l[3], 1, (int64_t[]){1}),
                        alloy_arg_bool(false),
                        tr_ints(l[4], 1, (int64_t[]){0}),
                        alloy_arg_int(1),
                        bools(m, 3, mask)};
  if (tr_run(&t, "aten.convolution_backward.default", args, 11)) {
    CHECK(values_are(&t.out[0], (double[]){1, 1, 1, -3}, 4, 0));
    CHECK(values_are(&t.out[1], (double[]){14, 20}, 2, 0));
    CHECK(values_are(&t.out[2], (double[]){6}, 1, 0));
  }
  tr_close(&t);
}

/* Runs convolution and its backward on random data and checks the adjoint
 * identities: <y, g> = <x, grad_input> = <w, grad_weight>, and grad_bias =
 * the sums of g per channel. */
static void check_conv_adjoint(alloy_dtype dt, int n, const int64_t *xs, const int64_t *ws,
                               const int64_t *stride, const int64_t *pad, const int64_t *dil,
                               bool transposed, const int64_t *opad, int64_t groups, double tol) {
  tr_case t;
  if (!tr_open(&t)) return;
  int64_t nx = 1, nw = 1;
  for (int d = 0; d < n + 2; d++) {
    nx *= xs[d];
    nw *= ws[d];
  }
  double *x = malloc(sizeof(double) * (size_t)nx), *w = malloc(sizeof(double) * (size_t)nw);
  float *xf = malloc(sizeof(float) * (size_t)nx), *wf = malloc(sizeof(float) * (size_t)nw);
  tr_fill(x, nx, 1);
  tr_fill(w, nw, 2);
  for (int64_t i = 0; i < nx; i++) xf[i] = (float)x[i];
  for (int64_t i = 0; i < nw; i++) wf[i] = (float)w[i];
  if (dt == ALLOY_F32) { /* compare with the values the kernel sees */
    for (int64_t i = 0; i < nx; i++) x[i] = xf[i];
    for (int64_t i = 0; i < nw; i++) w[i] = wf[i];
  }
  alloy_arg l[8][3];
  alloy_arg xv = tr_input(&t, dt, xs, n + 2, dt == ALLOY_F32 ? (void *)xf : (void *)x);
  alloy_arg wv = tr_input(&t, dt, ws, n + 2, dt == ALLOY_F32 ? (void *)wf : (void *)w);
  alloy_arg fwd[9] = {xv, wv, alloy_arg_none(), tr_ints(l[0], n, stride), tr_ints(l[1], n, pad),
                      tr_ints(l[2], n, dil), alloy_arg_bool(transposed), tr_ints(l[3], n, opad),
                      alloy_arg_int(groups)};
  alloy_node *conv = tr_node(&t, "aten.convolution.default", fwd, 9, NULL, NULL, 0);
  /* g: a random gradient of y's shape, as a graph input */
  int64_t ys[5] = {0}, ny = 1;
  if (conv) {
    alloy_value_type yt;
    alloy_value_get_type(alloy_node_output(conv, 0), &yt);
    for (int d = 0; d < yt.rank; d++) ny *= ys[d] = yt.shape[d].value;
  }
  double *g = malloc(sizeof(double) * (size_t)ny);
  float *gf = malloc(sizeof(float) * (size_t)ny);
  tr_fill(g, ny, 3);
  for (int64_t i = 0; i < ny; i++) g[i] = gf[i] = (float)g[i];
  int64_t cout = ys[1];
  alloy_arg m[3];
  alloy_arg bwd[11] = {tr_input(&t, dt, ys, n + 2, dt == ALLOY_F32 ? (void *)gf : (void *)g),
                       xv, wv, tr_ints(l[4], 1, &cout), tr_ints(l[5], n, stride), tr_ints(l[6], n, pad),
                       tr_ints(l[7], n, dil), alloy_arg_bool(transposed), tr_ints(l[3], n, opad),
                       alloy_arg_int(groups), bools(m, 3, (bool[]){true, true, true})};
  alloy_node *back = conv ? tr_node(&t, "aten.convolution_backward.default", bwd, 11, NULL, NULL, 0) : NULL;
  alloy_value *outs[4] = {conv ? alloy_node_output(conv, 0) : NULL, NULL, NULL, NULL};
  for (int k = 0; back && k < 3; k++) outs[1 + k] = alloy_node_output(back, k);
  if (back && tr_run_values(&t, outs, 4)) {
    double yg = dot(g, &t.out[0], ny), xgi = dot(x, &t.out[1], nx), wgw = dot(w, &t.out[2], nw);
    double scale = 1.0 + fabs(yg);
    if (!(fabs(yg - xgi) <= tol * scale) || !(fabs(yg - wgw) <= tol * scale))
      harness_fail(__FILE__, __LINE__, "<y,g> = %.9g, <x,gi> = %.9g, <w,gw> = %.9g", yg, xgi, wgw);
    int64_t per = ny / (ys[0] * cout);
    for (int64_t ch = 0; ch < cout; ch++) {
      double s = 0.0;
      for (int64_t b = 0; b < ys[0]; b++)
        for (int64_t i = 0; i < per; i++) s += g[(b * cout + ch) * per + i];
      if (!(fabs(value_at(&t.out[3], ch) - s) <= tol * (1.0 + fabs(s))))
        harness_fail(__FILE__, __LINE__, "grad_bias[%lld] = %.9g, expected %.9g", (long long)ch,
                     value_at(&t.out[3], ch), s);
    }
  }
  free(x);
  free(w);
  free(xf);
  free(wf);
  free(g);
  free(gf);
  tr_close(&t);
}

TEST(ref_nn_convolution_backward_adjoint) {
  /* 2-d, stride 2, padding 1, dilation 2, 2 groups */
  check_conv_adjoint(ALLOY_F64, 2, (int64_t[]){2, 4, 7, 6}, (int64_t[]){6, 2, 3, 2},
                     (int64_t[]){2, 2}, (int64_t[]){1, 1}, (int64_t[]){2, 1}, false,
                     (int64_t[]){0, 0}, 2, 1e-12);
  /* the same in float32: the fast path */
  check_conv_adjoint(ALLOY_F32, 2, (int64_t[]){2, 4, 7, 6}, (int64_t[]){6, 2, 3, 2},
                     (int64_t[]){2, 2}, (int64_t[]){1, 1}, (int64_t[]){2, 1}, false,
                     (int64_t[]){0, 0}, 2, 1e-5);
  /* 1x1, stride 1: x read in place */
  check_conv_adjoint(ALLOY_F32, 2, (int64_t[]){2, 3, 5, 4}, (int64_t[]){4, 3, 1, 1},
                     (int64_t[]){1, 1}, (int64_t[]){0, 0}, (int64_t[]){1, 1}, false,
                     (int64_t[]){0, 0}, 1, 1e-5);
  /* transposed 1-d, stride 2, output_padding 1, 2 groups */
  check_conv_adjoint(ALLOY_F64, 1, (int64_t[]){2, 4, 5}, (int64_t[]){4, 3, 3},
                     (int64_t[]){2}, (int64_t[]){1}, (int64_t[]){1}, true, (int64_t[]){1}, 2,
                     1e-12);
  /* transposed 3-d with dilation */
  check_conv_adjoint(ALLOY_F64, 3, (int64_t[]){1, 2, 3, 2, 3}, (int64_t[]){2, 2, 2, 2, 2},
                     (int64_t[]){1, 2, 1}, (int64_t[]){0, 1, 0}, (int64_t[]){2, 1, 1}, true,
                     (int64_t[]){0, 1, 0}, 1, 1e-12);
}

TEST(ref_nn_conv2d_unbatched) {
  /* a (1, 3, 3) input, a 2x2 kernel of ones, padding 1: each output sums
   * the window of [[1,2,3],[4,5,6],[7,8,9]] padded with zeros; bias 10.
   * Row 0: [1, 3, 5, 3]; row 1: [5, 12, 16, 9]; row 2: [11, 24, 28, 15];
   * row 3: [7, 15, 17, 9] */
  static float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w[4] = {1, 1, 1, 1}, b[1] = {10};
  tr_case t;
  REQUIRE(tr_open(&t));
  alloy_arg l[1];
  alloy_arg args[5] = {tr_input(&t, ALLOY_F32, (int64_t[]){1, 3, 3}, 3, x),
                       tr_input(&t, ALLOY_F32, (int64_t[]){1, 1, 2, 2}, 4, w),
                       tr_input(&t, ALLOY_F32, (int64_t[]){1}, 1, b), alloy_arg_int(1),
                       tr_ints(l, 1, (int64_t[]){1})};
  if (tr_run(&t, "aten.conv2d.default", args, 5)) {
    CHECK(tr_shape_is(&t.out[0], 3, (int64_t[]){1, 4, 4}));
    CHECK(values_are(&t.out[0],
                     (double[]){11, 13, 15, 13, 15, 22, 26, 19, 21, 34, 38, 25, 17, 25, 27, 19}, 16, 0));
  }
  tr_close(&t);
}

/* ---- matrix products -----------------------------------------------------*/

TEST(ref_nn_linear) {
  /* x (2, 3) = [[1, 2, 3], [4, 5, 6]], w (2, 3) = [[1, 0, -1], [2, 1, 0]],
   * bias [10, 20]: x w^T = [[-2, 4], [-2, 13]] + bias = [[8, 24], [8, 33]] */
  static float x[6] = {1, 2, 3, 4, 5, 6}, w[6] = {1, 0, -1, 2, 1, 0}, b[2] = {10, 20};
  tr_case t;
  REQUIRE(tr_open(&t));
  alloy_arg args[3] = {tr_input(&t, ALLOY_F32, (int64_t[]){2, 3}, 2, x),
                       tr_input(&t, ALLOY_F32, (int64_t[]){2, 3}, 2, w),
                       tr_input(&t, ALLOY_F32, (int64_t[]){2}, 1, b)};
  if (tr_run(&t, "aten.linear.default", args, 3)) CHECK(values_are(&t.out[0], (double[]){8, 24, 8, 33}, 4, 0));
  tr_close(&t);

  /* a 1-d weight [1, 1, 1]: row sums [6, 15], no bias */
  REQUIRE(tr_open(&t));
  static float w1[3] = {1, 1, 1};
  alloy_arg a2[2] = {tr_input(&t, ALLOY_F32, (int64_t[]){2, 3}, 2, x),
                     tr_input(&t, ALLOY_F32, (int64_t[]){3}, 1, w1)};
  if (tr_run(&t, "aten.linear.default", a2, 2)) {
    CHECK(tr_shape_is(&t.out[0], 1, (int64_t[]){2}));
    CHECK(values_are(&t.out[0], (double[]){6, 15}, 2, 0));
  }
  tr_close(&t);
}

TEST(ref_nn_sdpa_causal_scale) {
  /* L = S = 2, E = 1: q = [1, 1], k = [0, ln 3 / 0.5], v = [[1], [5]],
   * scale 0.5. Causal: row 0 sees only key 0 -> 1. Row 1: scores [0, ln 3],
   * weights [1/4, 3/4] -> 1/4 + 15/4 = 4 */
  double k1 = log(3.0) / 0.5;
  double q[2] = {1, 1}, k[2] = {0, k1}, v[2] = {1, 5};
  tr_case t;
  REQUIRE(tr_open(&t));
  alloy_arg args[6] = {tr_input(&t, ALLOY_F64, (int64_t[]){1, 2, 1}, 3, q),
                       tr_input(&t, ALLOY_F64, (int64_t[]){1, 2, 1}, 3, k),
                       tr_input(&t, ALLOY_F64, (int64_t[]){1, 2, 1}, 3, v),
                       alloy_arg_none(), alloy_arg_float(0.0), alloy_arg_bool(true)};
  const char *kwn[1] = {"scale"};
  alloy_arg kw[1] = {alloy_arg_float(0.5)};
  if (tr_run_kw(&t, "aten.scaled_dot_product_attention.default", args, 6, kwn, kw, 1))
    CHECK(values_are(&t.out[0], (double[]){1, 4}, 2, 1e-12));
  tr_close(&t);
}

TEST(ref_nn_sdpa_bool_mask_and_gqa) {
  /* 2 query heads sharing 1 key/value head (enable_gqa), L = 1, S = 2,
   * E = 1, default scale 1: q = [0] for head 0 and [ln 2] for head 1;
   * k = [0, 1], v = [[2], [8]]. Head 0: scores [0, 0] -> mean 5. Head 1:
   * scores [0, ln 2] -> weights [1/3, 2/3] -> 2/3 + 16/3 = 6. A bool mask
   * [true, false] on head 0's second key leaves only key 0: 2. */
  double q[2] = {0, log(2.0)}, k[2] = {0, 1}, v[2] = {2, 8};
  uint8_t mask[4] = {1, 0, 1, 1}; /* (2, 1, 2): per head */
  tr_case t;
  REQUIRE(tr_open(&t));
  alloy_arg args[4] = {tr_input(&t, ALLOY_F64, (int64_t[]){2, 1, 1}, 3, q),
                       tr_input(&t, ALLOY_F64, (int64_t[]){1, 2, 1}, 3, k),
                       tr_input(&t, ALLOY_F64, (int64_t[]){1, 2, 1}, 3, v), alloy_arg_none()};
  const char *kwn[1] = {"enable_gqa"};
  alloy_arg kw[1] = {alloy_arg_bool(true)};
  if (tr_run_kw(&t, "aten.scaled_dot_product_attention.default", args, 4, kwn, kw, 1))
    CHECK(values_are(&t.out[0], (double[]){5, 6}, 2, 1e-12));
  tr_close(&t);

  REQUIRE(tr_open(&t));
  alloy_arg a2[4] = {tr_input(&t, ALLOY_F64, (int64_t[]){2, 1, 1}, 3, q),
                     tr_input(&t, ALLOY_F64, (int64_t[]){1, 2, 1}, 3, k),
                     tr_input(&t, ALLOY_F64, (int64_t[]){1, 2, 1}, 3, v),
                     tr_input(&t, ALLOY_BOOL, (int64_t[]){2, 1, 2}, 3, mask)};
  if (tr_run_kw(&t, "aten.scaled_dot_product_attention.default", a2, 4, kwn, kw, 1))
    CHECK(values_are(&t.out[0], (double[]){2, 6}, 2, 1e-12));
  tr_close(&t);
}

/* ---- normalization -------------------------------------------------------*/

/* layer norm of rows of n in double, for the central differences */
static void ref_layer_norm(const double *x, int64_t rows, int64_t n, const double *w,
                           const double *b, double eps, double *y) {
  for (int64_t r = 0; r < rows; r++) {
    double m = 0, v = 0;
    for (int64_t j = 0; j < n; j++) m += x[r * n + j] / (double)n;
    for (int64_t j = 0; j < n; j++) v += (x[r * n + j] - m) * (x[r * n + j] - m) / (double)n;
    for (int64_t j = 0; j < n; j++) y[r * n + j] = (x[r * n + j] - m) / sqrt(v + eps) * w[j] + b[j];
  }
}

TEST(ref_nn_layer_norm_backward) {
  /* x (2, 2, 3) normalized over (2, 3); grad_input checked by central
   * differences of sum(g * y); grad_weight = sum g * xhat, grad_bias =
   * sum g over the rows. */
  enum { R = 2, N = 6 };
  double x[R * N], w[N], b[N], g[R * N], y[R * N], xp[R * N];
  tr_fill(x, R * N, 7);
  tr_fill(w, N, 8);
  tr_fill(b, N, 9);
  tr_fill(g, R * N, 10);
  double eps = 1e-5;
  tr_case t;
  REQUIRE(tr_open(&t));
  alloy_arg l[2][2];
  alloy_arg xv = tr_input(&t, ALLOY_F64, (int64_t[]){2, 2, 3}, 3, x);
  alloy_arg wv = tr_input(&t, ALLOY_F64, (int64_t[]){2, 3}, 2, w);
  alloy_arg bv = tr_input(&t, ALLOY_F64, (int64_t[]){2, 3}, 2, b);
  alloy_arg fwd[5] = {xv, tr_ints(l[0], 2, (int64_t[]){2, 3}), wv, bv, alloy_arg_float(eps)};
  alloy_node *ln = tr_node(&t, "aten.native_layer_norm.default", fwd, 5, NULL, NULL, 0);
  REQUIRE(ln);
  alloy_arg m[3];
  alloy_arg bwd[8] = {tr_input(&t, ALLOY_F64, (int64_t[]){2, 2, 3}, 3, g), xv,
                      tr_ints(l[1], 2, (int64_t[]){2, 3}), alloy_arg_value(alloy_node_output(ln, 1)),
                      alloy_arg_value(alloy_node_output(ln, 2)), wv, bv,
                      bools(m, 3, (bool[]){true, true, true})};
  alloy_node *back = tr_node(&t, "aten.native_layer_norm_backward.default", bwd, 8, NULL, NULL, 0);
  REQUIRE(back);
  alloy_value *outs[3] = {alloy_node_output(back, 0), alloy_node_output(back, 1), alloy_node_output(back, 2)};
  if (tr_run_values(&t, outs, 3)) {
    double dx[R * N], dw[N] = {0}, db[N] = {0}, h = 1e-6;
    for (int i = 0; i < R * N; i++) {
      double lp = 0, lm = 0;
      memcpy(xp, x, sizeof x);
      xp[i] += h;
      ref_layer_norm(xp, R, N, w, b, eps, y);
      for (int j = 0; j < R * N; j++) lp += g[j] * y[j];
      xp[i] -= 2 * h;
      ref_layer_norm(xp, R, N, w, b, eps, y);
      for (int j = 0; j < R * N; j++) lm += g[j] * y[j];
      dx[i] = (lp - lm) / (2 * h);
    }
    double ones[N] = {1, 1, 1, 1, 1, 1}, zeros[N] = {0};
    ref_layer_norm(x, R, N, ones, zeros, eps, y); /* xhat */
    for (int r = 0; r < R; r++)
      for (int j = 0; j < N; j++) {
        dw[j] += g[r * N + j] * y[r * N + j];
        db[j] += g[r * N + j];
      }
    CHECK(values_are(&t.out[0], dx, R * N, 1e-7));
    CHECK(values_are(&t.out[1], dw, N, 1e-12));
    CHECK(values_are(&t.out[2], db, N, 1e-12));
  }
  tr_close(&t);
}

TEST(ref_nn_layer_norm_aten) {
  /* layer_norm of [1, 2, 3] (eps 0): mean 2, var 2/3, y = (x - 2) * sqrt(3/2)
   * = [-1.224744871, 0, 1.224744871] */
  static double x[3] = {1, 2, 3};
  tr_case t;
  REQUIRE(tr_open(&t));
  alloy_arg l[1];
  alloy_arg args[5] = {tr_input(&t, ALLOY_F64, (int64_t[]){3}, 1, x), tr_ints(l, 1, (int64_t[]){3}),
                       alloy_arg_none(), alloy_arg_none(), alloy_arg_float(0.0)};
  if (tr_run(&t, "aten.layer_norm.default", args, 5))
    CHECK(values_are(&t.out[0], (double[]){-sqrt(1.5), 0, sqrt(1.5)}, 3, 1e-12));
  tr_close(&t);
}

/* group norm (N, C, HxW) in double, for the central differences */
static void ref_group_norm(const double *x, int N, int C, int HW, int G, const double *w,
                           const double *b, double eps, double *y) {
  int D = C / G;
  for (int n = 0; n < N; n++)
    for (int g = 0; g < G; g++) {
      const double *p = x + (n * C + g * D) * HW;
      double m = 0, v = 0;
      for (int i = 0; i < D * HW; i++) m += p[i] / (D * HW);
      for (int i = 0; i < D * HW; i++) v += (p[i] - m) * (p[i] - m) / (D * HW);
      for (int c = 0; c < D; c++)
        for (int i = 0; i < HW; i++) {
          int k = (n * C + g * D + c) * HW + i;
          y[k] = (x[k] - m) / sqrt(v + eps) * w[g * D + c] + b[g * D + c];
        }
    }
}

TEST(ref_nn_group_norm_backward) {
  /* (2, 4, 3) in 2 groups: grad_input by central differences, grad_weight
   * = sum g * xhat per channel, grad_bias = sum g per channel */
  enum { NB = 2, C = 4, HW = 3, G = 2, T = NB * C * HW };
  double x[T], w[C], b[C], g[T], y[T], xp[T], eps = 1e-5;
  tr_fill(x, T, 11);
  tr_fill(w, C, 12);
  tr_fill(b, C, 13);
  tr_fill(g, T, 14);
  tr_case t;
  REQUIRE(tr_open(&t));
  alloy_arg xv = tr_input(&t, ALLOY_F64, (int64_t[]){NB, C, HW}, 3, x);
  alloy_arg wv = tr_input(&t, ALLOY_F64, (int64_t[]){C}, 1, w);
  alloy_arg fwd[8] = {xv, wv, tr_input(&t, ALLOY_F64, (int64_t[]){C}, 1, b), alloy_arg_int(NB),
                      alloy_arg_int(C), alloy_arg_int(HW), alloy_arg_int(G), alloy_arg_float(eps)};
  alloy_node *gn = tr_node(&t, "aten.native_group_norm.default", fwd, 8, NULL, NULL, 0);
  REQUIRE(gn);
  alloy_arg m[3];
  alloy_arg bwd[10] = {tr_input(&t, ALLOY_F64, (int64_t[]){NB, C, HW}, 3, g), xv,
                       alloy_arg_value(alloy_node_output(gn, 1)), alloy_arg_value(alloy_node_output(gn, 2)),
                       wv, alloy_arg_int(NB), alloy_arg_int(C), alloy_arg_int(HW), alloy_arg_int(G),
                       bools(m, 3, (bool[]){true, true, true})};
  alloy_node *back = tr_node(&t, "aten.native_group_norm_backward.default", bwd, 10, NULL, NULL, 0);
  REQUIRE(back);
  alloy_value *outs[3] = {alloy_node_output(back, 0), alloy_node_output(back, 1), alloy_node_output(back, 2)};
  if (tr_run_values(&t, outs, 3)) {
    double dx[T], dw[C] = {0}, db[C] = {0}, h = 1e-6, ones[C] = {1, 1, 1, 1}, zeros[C] = {0};
    for (int i = 0; i < T; i++) {
      double lp = 0, lm = 0;
      memcpy(xp, x, sizeof x);
      xp[i] += h;
      ref_group_norm(xp, NB, C, HW, G, w, b, eps, y);
      for (int j = 0; j < T; j++) lp += g[j] * y[j];
      xp[i] -= 2 * h;
      ref_group_norm(xp, NB, C, HW, G, w, b, eps, y);
      for (int j = 0; j < T; j++) lm += g[j] * y[j];
      dx[i] = (lp - lm) / (2 * h);
    }
    ref_group_norm(x, NB, C, HW, G, ones, zeros, eps, y);
    for (int n = 0; n < NB; n++)
      for (int c = 0; c < C; c++)
        for (int i = 0; i < HW; i++) {
          dw[c] += g[(n * C + c) * HW + i] * y[(n * C + c) * HW + i];
          db[c] += g[(n * C + c) * HW + i];
        }
    CHECK(values_are(&t.out[0], dx, T, 1e-7));
    CHECK(values_are(&t.out[1], dw, C, 1e-12));
    CHECK(values_are(&t.out[2], db, C, 1e-12));
  }
  tr_close(&t);
}

TEST(ref_nn_batch_norm_variants) {
  /* x (2, 2) = [[1, 2], [3, 6]] per channel c (dim 1).
   * no_training with running mean [1, 2], var [4, 16], eps 0, weight
   * [2, 1], bias [0, 1]: (x - m) / sd * w + b = [[0, 1], [2, 2]]; the
   * saved stats are empty. */
  static double x[4] = {1, 2, 3, 6}, w[2] = {2, 1}, b[2] = {0, 1}, rm[2] = {1, 2}, rv[2] = {4, 16};
  tr_case t;
  REQUIRE(tr_open(&t));
  alloy_arg args[7] = {tr_input(&t, ALLOY_F64, (int64_t[]){2, 2}, 2, x),
                       tr_input(&t, ALLOY_F64, (int64_t[]){2}, 1, w),
                       tr_input(&t, ALLOY_F64, (int64_t[]){2}, 1, b),
                       tr_input(&t, ALLOY_F64, (int64_t[]){2}, 1, rm),
                       tr_input(&t, ALLOY_F64, (int64_t[]){2}, 1, rv), alloy_arg_float(0.1),
                       alloy_arg_float(0.0)};
  if (tr_run(&t, "aten._native_batch_norm_legit_no_training.default", args, 7)) {
    CHECK(values_are(&t.out[0], (double[]){0, 1, 2, 2}, 4, 1e-12));
    CHECK_INT(tr_numel(&t.out[1]), 0);
  }
  tr_close(&t);

  /* no_stats, training: channel 0 [1, 3] mean 2 var 1, channel 1 [2, 6]
   * mean 4 var 4 (eps 0): xhat [[-1, -1], [1, 1]], then w and b:
   * [[-2, 0], [2, 2]]; save_mean [2, 4], save_invstd [1, 0.5] */
  REQUIRE(tr_open(&t));
  alloy_arg a2[6] = {tr_input(&t, ALLOY_F64, (int64_t[]){2, 2}, 2, x),
                     tr_input(&t, ALLOY_F64, (int64_t[]){2}, 1, w),
                     tr_input(&t, ALLOY_F64, (int64_t[]){2}, 1, b), alloy_arg_bool(true),
                     alloy_arg_float(0.1), alloy_arg_float(0.0)};
  if (tr_run(&t, "aten._native_batch_norm_legit.no_stats", a2, 6)) {
    CHECK(values_are(&t.out[0], (double[]){-2, 0, 2, 2}, 4, 1e-12));
    CHECK(values_are(&t.out[1], (double[]){2, 4}, 2, 1e-12));
    CHECK(values_are(&t.out[2], (double[]){1, 0.5}, 2, 1e-12));
  }
  tr_close(&t);
}

/* ---- pooling -------------------------------------------------------------*/

TEST(ref_nn_avg_pool1d) {
  /* [1, 2, 3, 4, 5], kernel 2, stride 2, padding 1, ceil_mode: windows
   * [-1, 1), [1, 3), [3, 5) (a 4th would start in the padding).
   * count_include_pad false: [1, 2.5, 4.5]; true: [0.5, 2.5, 4.5] */
  static float x[5] = {1, 2, 3, 4, 5};
  for (int inc = 0; inc < 2; inc++) {
    tr_case t;
    REQUIRE(tr_open(&t));
    alloy_arg l[3][1];
    alloy_arg args[6] = {tr_input(&t, ALLOY_F32, (int64_t[]){1, 1, 5}, 3, x),
                         tr_ints(l[0], 1, (int64_t[]){2}), tr_ints(l[1], 1, (int64_t[]){2}),
                         tr_ints(l[2], 1, (int64_t[]){1}), alloy_arg_bool(true), alloy_arg_bool(inc)};
    if (tr_run(&t, "aten.avg_pool1d.default", args, 6)) {
      CHECK(tr_shape_is(&t.out[0], 3, (int64_t[]){1, 1, 3}));
      CHECK(values_are(&t.out[0], (double[]){inc ? 0.5 : 1, 2.5, 4.5}, 3, 0));
    }
    tr_close(&t);
  }
}

TEST(ref_nn_adaptive_avg_pool1d) {
  /* [1..5] into 3: windows [0, 2), [1, 4), [3, 5): [1.5, 3, 4.5] */
  static float x[5] = {1, 2, 3, 4, 5};
  tr_case t;
  REQUIRE(tr_open(&t));
  alloy_arg l[1];
  alloy_arg args[2] = {tr_input(&t, ALLOY_F32, (int64_t[]){1, 5}, 2, x), tr_ints(l, 1, (int64_t[]){3})};
  if (tr_run(&t, "aten.adaptive_avg_pool1d.default", args, 2))
    CHECK(values_are(&t.out[0], (double[]){1.5, 3, 4.5}, 3, 0));
  tr_close(&t);
}

TEST(ref_nn_avg_pool2d_backward) {
  /* 3x3 input, kernel 2, stride 1: 2x2 outputs; grad 1 everywhere: each
   * input cell gets 1/4 per window covering it: [[1,2,1],[2,4,2],[1,2,1]]/4.
   * divisor_override 1 instead: [[1,2,1],[2,4,2],[1,2,1]] */
  static float x[9] = {0}, g[4] = {1, 1, 1, 1};
  for (int ov = 0; ov < 2; ov++) {
    tr_case t;
    REQUIRE(tr_open(&t));
    alloy_arg l[3][1];
    alloy_arg args[8] = {tr_input(&t, ALLOY_F32, (int64_t[]){1, 1, 2, 2}, 4, g),
                         tr_input(&t, ALLOY_F32, (int64_t[]){1, 1, 3, 3}, 4, x),
                         tr_ints(l[0], 1, (int64_t[]){2}), tr_ints(l[1], 1, (int64_t[]){1}),
                         tr_ints(l[2], 1, (int64_t[]){0}), alloy_arg_bool(false), alloy_arg_bool(true),
                         ov ? alloy_arg_int(1) : alloy_arg_none()};
    double s = ov ? 1 : 0.25;
    if (tr_run(&t, "aten.avg_pool2d_backward.default", args, 8))
      CHECK(values_are(&t.out[0], (double[]){s, 2 * s, s, 2 * s, 4 * s, 2 * s, s, 2 * s, s}, 9, 0));
    tr_close(&t);
  }
}

TEST(ref_nn_adaptive_avg_pool2d_backward) {
  /* 3x3 -> 2x2: windows rows/cols [0, 2) and [1, 3), each of 4 cells;
   * grad [[1, 2], [3, 4]] / 4 spread: cell (0,0) 1/4, (0,1) 3/4, (0,2) 2/4,
   * (1,0) 4/4, (1,1) 10/4, (1,2) 6/4, (2,0) 3/4, (2,1) 7/4, (2,2) 4/4 */
  static float x[9] = {0}, g[4] = {1, 2, 3, 4};
  tr_case t;
  REQUIRE(tr_open(&t));
  alloy_arg args[2] = {tr_input(&t, ALLOY_F32, (int64_t[]){1, 2, 2}, 3, g),
                       tr_input(&t, ALLOY_F32, (int64_t[]){1, 3, 3}, 3, x)};
  if (tr_run(&t, "aten._adaptive_avg_pool2d_backward.default", args, 2))
    CHECK(values_are(&t.out[0], (double[]){0.25, 0.75, 0.5, 1, 2.5, 1.5, 0.75, 1.75, 1}, 9, 0));
  tr_close(&t);
}

TEST(ref_nn_max_pool2d_nan_and_indices) {
  /* [[1, NaN, 3], [4, 5, 6], [7, 8, 9]], kernel 2, stride 1: the windows
   * holding the NaN give NaN; the others their max. With indices: the flat
   * offset in the plane: [[1, 1], [7, 8]] */
  static float x[9] = {1, NAN, 3, 4, 5, 6, 7, 8, 9};
  tr_case t;
  REQUIRE(tr_open(&t));
  alloy_arg l[1], s1[1];
  alloy_arg args[3] = {tr_input(&t, ALLOY_F32, (int64_t[]){1, 3, 3}, 3, x), tr_ints(l, 1, (int64_t[]){2}),
                       tr_ints(s1, 1, (int64_t[]){1})};
  if (tr_run(&t, "aten.max_pool2d.default", args, 3))
    CHECK(values_are(&t.out[0], (double[]){NAN, NAN, 8, 9}, 4, 0));
  tr_close(&t);

  REQUIRE(tr_open(&t));
  alloy_arg a2[3] = {tr_input(&t, ALLOY_F32, (int64_t[]){1, 3, 3}, 3, x), tr_ints(l, 1, (int64_t[]){2}),
                     tr_ints(s1, 1, (int64_t[]){1})};
  if (tr_run(&t, "aten.max_pool2d_with_indices.default", a2, 3))
    CHECK(tr_longs_are(&t.out[1], (int64_t[]){1, 1, 7, 8}, 4));
  tr_close(&t);
}

/* ---- upsampling ----------------------------------------------------------*/

TEST(ref_nn_upsample_vec) {
  /* nearest2d.vec with scale_factors [2, 2]: [[1, 2], [3, 4]] becomes each
   * value repeated in a 2x2 block */
  static float x[4] = {1, 2, 3, 4};
  tr_case t;
  REQUIRE(tr_open(&t));
  alloy_arg f[2] = {alloy_arg_float(2.0), alloy_arg_float(2.0)};
  alloy_arg args[3] = {tr_input(&t, ALLOY_F32, (int64_t[]){1, 1, 2, 2}, 4, x), alloy_arg_none(),
                       alloy_arg_list(f, 2)};
  if (tr_run(&t, "aten.upsample_nearest2d.vec", args, 3)) {
    CHECK(tr_shape_is(&t.out[0], 4, (int64_t[]){1, 1, 4, 4}));
    CHECK(values_are(&t.out[0], (double[]){1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}, 16, 0));
  }
  tr_close(&t);

  /* bilinear2d.vec, output_size [1, 3], align_corners: [0, 1] becomes
   * [0, 0.5, 1] */
  static float y[2] = {0, 1};
  REQUIRE(tr_open(&t));
  alloy_arg l[2];
  alloy_arg a2[4] = {tr_input(&t, ALLOY_F32, (int64_t[]){1, 1, 1, 2}, 4, y),
                     tr_ints(l, 2, (int64_t[]){1, 3}), alloy_arg_bool(true), alloy_arg_none()};
  if (tr_run(&t, "aten.upsample_bilinear2d.vec", a2, 4))
    CHECK(values_are(&t.out[0], (double[]){0, 0.5, 1}, 3, 0));
  tr_close(&t);
}

/* ---- embedding and losses ------------------------------------------------*/

TEST(ref_nn_embedding_dense_backward) {
  /* grad rows [1, 2], [3, 4], [5, 6] at indices [0, 2, 0] of 3 weights:
   * row 0 = [6, 8], row 1 = 0, row 2 = [3, 4]. scale_grad_by_freq: row 0
   * counted twice, [3, 4]. padding_idx 2: row 2 stays 0. */
  static float g[6] = {1, 2, 3, 4, 5, 6};
  static int64_t idx[3] = {0, 2, 0};
  static const double want[3][6] = {{6, 8, 0, 0, 3, 4}, {3, 4, 0, 0, 3, 4}, {6, 8, 0, 0, 0, 0}};
  static const int64_t pad[3] = {-1, -1, 2};
  for (int k = 0; k < 3; k++) {
    tr_case t;
    REQUIRE(tr_open(&t));
    alloy_arg args[5] = {tr_input(&t, ALLOY_F32, (int64_t[]){3, 2}, 2, g),
                         tr_input(&t, ALLOY_I64, (int64_t[]){3}, 1, idx), alloy_arg_int(3),
                         alloy_arg_int(pad[k]), alloy_arg_bool(k == 1)};
    if (tr_run(&t, "aten.embedding_dense_backward.default", args, 5)) {
      CHECK(tr_shape_is(&t.out[0], 2, (int64_t[]){3, 2}));
      CHECK(values_are(&t.out[0], want[k], 6, 0));
    }
    tr_close(&t);
  }
}

TEST(ref_nn_nll_loss_all_ignored) {
  /* every target is ignore_index: the mean is 0 / 0 = NaN with
   * total_weight 0; the sum is 0 */
  static float x[4] = {1, 2, 3, 4};
  static int64_t y[2] = {1, 1};
  for (int red = 1; red <= 2; red++) {
    tr_case t;
    REQUIRE(tr_open(&t));
    alloy_arg args[5] = {tr_input(&t, ALLOY_F32, (int64_t[]){2, 2}, 2, x),
                         tr_input(&t, ALLOY_I64, (int64_t[]){2}, 1, y), alloy_arg_none(),
                         alloy_arg_int(red), alloy_arg_int(1)};
    if (tr_run(&t, "aten.nll_loss_forward.default", args, 5)) {
      CHECK(values_are(&t.out[0], (double[]){red == 1 ? NAN : 0}, 1, 0));
      CHECK(values_are(&t.out[1], (double[]){0}, 1, 0));
    }
    tr_close(&t);
  }
}

TEST(ref_nn_max_unpool_invalid_index_fails) {
  /* max_unpool2d with index 9 into a 3x3 plane: an error naming the op
   * (PyTorch: "Found an invalid max index"), not a write out of bounds */
  static float x[1] = {5};
  static int64_t idx[1] = {9};
  tr_case t;
  REQUIRE(tr_open(&t));
  alloy_arg l[2];
  alloy_arg args[3] = {tr_input(&t, ALLOY_F32, (int64_t[]){1, 1, 1}, 3, x),
                       tr_input(&t, ALLOY_I64, (int64_t[]){1, 1, 1}, 3, idx), tr_ints(l, 2, (int64_t[]){3, 3})};
  alloy_node *node = tr_node(&t, "aten.max_unpool2d.default", args, 3, NULL, NULL, 0);
  REQUIRE(node);
  alloy_value *out = alloy_node_output(node, 0);
  alloy_error *e = alloy_graph_set_outputs(t.g, &out, 1);
  if (!e) e = alloy_program_compile(t.rt, t.backend, t.g, &t.prog);
  t.out[0].struct_size = sizeof t.out[0];
  if (!e) e = alloy_program_run(t.prog, t.in, t.nin, t.out, 1);
  CHECK(e != NULL);
  if (e) CHECK(strstr(alloy_error_message(e), "max_unpool2d") != NULL);
  alloy_error_free(e);
  tr_close(&t);
}

TEST(ref_nn_bce_broadcast_weights) {
  /* binary_cross_entropy_with_logits, reduction none, x = 0 (log_sigmoid
   * = -ln 2), t = [[1, 0], [1, 1]], weight [1, 2] and pos_weight [3, 1]
   * broadcast over rows: loss = (1 + (pw - 1) t) ln 2 * w = [[3, 2], [3, 2]]
   * ln 2. binary_cross_entropy of x = 0.5 with weight [1, 2]: ln 2 * w. */
  static float x[4] = {0, 0, 0, 0}, t4[4] = {1, 0, 1, 1}, w[2] = {1, 2}, pw[2] = {3, 1};
  static float half[4] = {0.5f, 0.5f, 0.5f, 0.5f};
  double l2 = log(2.0);
  tr_case t;
  REQUIRE(tr_open(&t));
  alloy_arg args[5] = {tr_input(&t, ALLOY_F32, (int64_t[]){2, 2}, 2, x),
                       tr_input(&t, ALLOY_F32, (int64_t[]){2, 2}, 2, t4),
                       tr_input(&t, ALLOY_F32, (int64_t[]){2}, 1, w),
                       tr_input(&t, ALLOY_F32, (int64_t[]){2}, 1, pw), alloy_arg_int(0)};
  if (tr_run(&t, "aten.binary_cross_entropy_with_logits.default", args, 5))
    CHECK(values_are(&t.out[0], (double[]){3 * l2, 2 * l2, 3 * l2, 2 * l2}, 4, 1e-6));
  tr_close(&t);

  REQUIRE(tr_open(&t));
  alloy_arg a2[4] = {tr_input(&t, ALLOY_F32, (int64_t[]){2, 2}, 2, half),
                     tr_input(&t, ALLOY_F32, (int64_t[]){2, 2}, 2, t4),
                     tr_input(&t, ALLOY_F32, (int64_t[]){2}, 1, w), alloy_arg_int(0)};
  if (tr_run(&t, "aten.binary_cross_entropy.default", a2, 4))
    CHECK(values_are(&t.out[0], (double[]){l2, 2 * l2, l2, 2 * l2}, 4, 1e-6));
  tr_close(&t);
}
