/*
 * tests/test_decompose_misc.c: decompositions, reference kernels and shape
 * functions that must agree with PyTorch 2.11 (and with each other) where
 * the generated samples found them apart. Each case runs one op on "ref"
 * whole (the kernel) and decomposed to Core ATen and to prims, and checks
 * real values: clamp's Scalar bounds converted to uint8 (wrapping), isin on
 * large inputs (sorted, no n x m intermediate; its comparison dtype),
 * batch norm's float16 statistics, layer norm's deviations from a large
 * mean, a float32 norm past FLT_MAX, linspace's odd middle point and its
 * overflowing endpoints, and floor division by a denormal.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/runtime.h"
#include "decompositions/decomp.h"
#include "testgraph.h"
#include "testref.h"

/* Adds a case's inputs and node to c; returns the value to run (NULL after
 * a recorded failure). */
typedef alloy_value *(*build_fn)(tr_case *c, const void *ctx);

/* Opens c, builds the graph and runs it decomposed to level; the output in
 * c->out[0]. limit as tr_run_level's. The caller closes c either way. */
static bool run_limited(tr_case *c, build_fn build, const void *ctx, alloy_decompose_level level,
                        int64_t limit) {
  if (!tr_open(c)) return false;
  alloy_value *y = build(c, ctx);
  return y && tr_run_level(c, &y, 1, level, limit);
}

static bool run_at(tr_case *c, build_fn build, const void *ctx, alloy_decompose_level level) {
  return run_limited(c, build, ctx, level, 0);
}

/* a and b agree: NaN with NaN, infinities exactly, else within rtol. */
static bool close_to(double a, double b, double rtol) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  if (isinf(a) || isinf(b)) return a == b;
  return fabs(a - b) <= 1e-5 + rtol * fabs(b);
}

/* Adds op(args) with named keyword args to c; NULL after a failure. */
static alloy_value *node(tr_case *c, const char *op, const alloy_arg *args, int n,
                         const char *const *kwn, const alloy_arg *kw, int nkw) {
  alloy_node *nd = tr_node(c, op, args, n, kwn, kw, nkw);
  return nd ? alloy_node_output(nd, 0) : NULL;
}

/* Whether adding op(args) to c's graph (where args' values are) is
 * refused; the message copied to msg. */
static bool refused(tr_case *c, const char *op, const alloy_arg *args, int n, char *msg, size_t cap) {
  alloy_node *nd = NULL;
  alloy_error *e = alloy_graph_add_node(c->g, alloy_op_find(op), args, n, NULL, NULL, 0, NULL, &nd);
  snprintf(msg, cap, "%s", e ? alloy_error_message(e) : "");
  alloy_error_free(e);
  return e != NULL;
}

/* ---- clamp: Scalar bounds converted to uint8 ---------------------------------------- */

typedef struct clamp_ctx {
  const uint8_t *x;
  int n;
  alloy_arg lo, hi;
} clamp_ctx;

static alloy_value *build_clamp(tr_case *c, const void *p) {
  const clamp_ctx *k = p;
  alloy_arg args[3] = {tr_input1(c, ALLOY_U8, k->n, (void *)k->x), k->lo, k->hi};
  return node(c, "aten.clamp.default", args, 3, NULL, NULL, 0);
}

/* PyTorch's clamp converts its Scalar bounds to the tensor's dtype first
 * (Scalar::to<uint8_t>, which wraps -1 to 255): clamp(x, -1) is 255
 * everywhere and clamp(x, -1, 1) is 1 everywhere, whole and decomposed. */
TEST(clamp_uint8_wraps_a_negative_bound) {
  static const uint8_t x[6] = {0, 1, 2, 7, 200, 255};
  const clamp_ctx cases[2] = {{x, 6, alloy_arg_int(-1), alloy_arg_none()},
                              {x, 6, alloy_arg_int(-1), alloy_arg_int(1)}};
  const int want[2] = {255, 1};
  for (int k = 0; k < 2; k++)
    for (int l = 0; l < TR_NLEVELS; l++) {
      tr_case c;
      if (run_at(&c, build_clamp, &cases[k], tr_levels[l])) {
        CHECK_INT(c.out[0].dtype, ALLOY_U8);
        for (int i = 0; i < 6; i++) CHECK_INT(((const uint8_t *)c.out[0].data)[i], want[k]);
      }
      tr_close(&c);
    }
}

/* Bounds the dtype cannot hold are refused, naming the argument, as
 * checked_convert refuses them: 256 and -256 on uint8, 1e5 on float16;
 * -255 still wraps, and NaN and infinities pass. */
TEST(clamp_refuses_a_bound_past_the_dtype) {
  tr_case c;
  REQUIRE(tr_open(&c));
  static uint8_t x[2];
  static uint16_t h[2];
  alloy_arg xu = tr_input1(&c, ALLOY_U8, 2, x), xh = tr_input1(&c, ALLOY_F16, 2, h);
  char msg[256];
  CHECK(refused(&c, "aten.clamp.default", (alloy_arg[]){xu, alloy_arg_int(256), alloy_arg_none()}, 3, msg, sizeof msg));
  CHECK(strstr(msg, "overflow") && strstr(msg, "'min'"));
  CHECK(refused(&c, "aten.clamp.default", (alloy_arg[]){xu, alloy_arg_none(), alloy_arg_int(-256)}, 3, msg, sizeof msg));
  CHECK(strstr(msg, "'max'"));
  CHECK(refused(&c, "aten.clamp.default", (alloy_arg[]){xh, alloy_arg_float(1e5), alloy_arg_none()}, 3, msg, sizeof msg));
  CHECK(!refused(&c, "aten.clamp.default", (alloy_arg[]){xu, alloy_arg_int(-255), alloy_arg_none()}, 3, msg, sizeof msg));
  CHECK(!refused(&c, "aten.clamp.default", (alloy_arg[]){xh, alloy_arg_float(-INFINITY), alloy_arg_float(NAN)}, 3, msg, sizeof msg));
  tr_close(&c);
}

/* ---- isin ------------------------------------------------------------------------ */

typedef struct isin_ctx {
  alloy_dtype te, tt;
  const void *e, *t;
  int64_t ne, nt;
  int er; /* elements' rank: 1, or 0 for one element */
  int tr;
  bool unique, invert;
} isin_ctx;

static alloy_value *build_isin(tr_case *c, const void *p) {
  const isin_ctx *k = p;
  alloy_arg args[2] = {tr_input(c, k->te, &k->ne, k->er, (void *)k->e),
                       tr_input(c, k->tt, &k->nt, k->tr, (void *)k->t)};
  const char *kwn[2] = {"assume_unique", "invert"};
  alloy_arg kw[2] = {alloy_arg_bool(k->unique), alloy_arg_bool(k->invert)};
  return node(c, "aten.isin.Tensor_Tensor", args, 2, kwn, kw, 2);
}

/* The answers of isin on ref, whole and decomposed, into got[level][i];
 * a decomposed graph with a value of more than limit elements (if > 0)
 * fails without running. */
static void isin_levels(const isin_ctx *k, uint8_t *got[TR_NLEVELS], int64_t limit) {
  for (int l = 0; l < TR_NLEVELS; l++) {
    memset(got[l], 2, (size_t)k->ne); /* neither answer, should the run fail */
    tr_case c;
    if (run_limited(&c, build_isin, k, tr_levels[l], l == TR_WHOLE ? 0 : limit)) {
      CHECK_INT(c.out[0].dtype, ALLOY_BOOL);
      memcpy(got[l], c.out[0].data, (size_t)k->ne);
    }
    tr_close(&c);
  }
}

/* 66560 elements against 66560 test elements (the "large" samples): the
 * decomposition sorts the test elements and searches each element (as
 * PyTorch's kernel and torch._decomp switch to sorting past 10 n^0.145
 * test elements), so no value has more than n + m elements where all
 * against all took n x m (4.4e9: out of memory). The answers are those of
 * comparing with every test element, NaN in nothing and -0.0 equal to 0.0,
 * inverted too. */
TEST(isin_large_sorts_instead_of_comparing_all_pairs) {
  enum { N = 66560 };
  double *x = malloc(sizeof *x * N), *t = malloc(sizeof *t * N);
  uint8_t *want = malloc(N), *got[TR_NLEVELS];
  for (int l = 0; l < TR_NLEVELS; l++) got[l] = malloc(N);
  REQUIRE(x && t && want && got[0] && got[1] && got[2]);
  tr_fill(x, N, 3);
  tr_fill(t, N, 5);
  float *xf = malloc(sizeof *xf * N), *tf = malloc(sizeof *tf * N);
  REQUIRE(xf && tf);
  for (int i = 0; i < N; i++) {
    /* values on a grid of 1/64 in [-8, 8), so that many are shared */
    xf[i] = i % 97 == 0 ? NAN : i % 89 == 0 ? -0.0f : floorf((float)x[i] * 512) / 64;
    tf[i] = i % 83 == 0 ? NAN : i % 79 == 0 ? 0.0f : floorf((float)t[i] * 300) / 64 + 3;
  }
  /* all against all on sorted copies is too slow; a bitmap of the grid */
  static uint8_t seen[2048];
  memset(seen, 0, sizeof seen);
  bool zero = false;
  for (int j = 0; j < N; j++)
    if (!isnan(tf[j])) {
      if (tf[j] == 0) zero = true;
      seen[(int)(tf[j] * 64) + 1024] = 1;
    }
  int found = 0;
  for (int i = 0; i < N; i++) {
    want[i] = !isnan(xf[i]) && (xf[i] == 0 ? zero : seen[(int)(xf[i] * 64) + 1024]);
    found += want[i];
  }
  CHECK(found > N / 10 && found < N - N / 10);
  for (int inv = 0; inv < 2; inv++) {
    isin_ctx k = {ALLOY_F32, ALLOY_F32, xf, tf, N, N, 1, 1, false, inv};
    isin_levels(&k, got, 2 * N);
    for (int l = 0; l < TR_NLEVELS; l++) {
      int bad = 0;
      for (int i = 0; i < N; i++) bad += got[l][i] != (want[i] != inv);
      CHECK_INT(bad, 0);
    }
  }
  free(x), free(t), free(xf), free(tf), free(want);
  for (int l = 0; l < TR_NLEVELS; l++) free(got[l]);
}

/* With assume_unique the sorting path sorts elements and test elements
 * together and marks an element whose stable-sorted successor equals it:
 * for repeated elements that is not "in test_elements" (PyTorch gives
 * True for every copy but the last of a value not in the test). */
TEST(isin_assume_unique_takes_the_kernels_answer) {
  enum { N = 40, M = 20 }; /* 20 >= 10 * 40^0.145: the sorting path */
  static int64_t x[N], t[M];
  for (int i = 0; i < N; i++) x[i] = i / 2;      /* every value twice: 0 0 1 1 ... */
  for (int j = 0; j < M; j++) t[j] = 3 * j;      /* 0 3 6 ... 57 */
  uint8_t buf[TR_NLEVELS][N], *got[TR_NLEVELS] = {buf[0], buf[1], buf[2]};
  for (int inv = 0; inv < 2; inv++) {
    isin_ctx k = {ALLOY_I64, ALLOY_I64, x, t, N, M, 1, 1, true, inv};
    isin_levels(&k, got, 0);
    for (int i = 0; i < N; i++) {
      /* the first copy is followed by its twin; the second by a test
       * element only when the value is in the test; invert negates all */
      int want = (i % 2 == 0 ? 1 : x[i] % 3 == 0) != inv;
      for (int l = 0; l < TR_NLEVELS; l++) CHECK_INT(got[l][i], want);
    }
  }
}

/* isin compares in the dtype the operands promote to, not in double: an
 * int32 16777217 is in float32 {16777216} (both are 2^24 in float32); a
 * float64 zero-dim 0.1 beside float32 elements counts less and becomes
 * 0.1f, which the float32 0.1 equals. Bool is refused, as PyTorch does. */
TEST(isin_compares_in_the_promoted_dtype) {
  static const int32_t xi[3] = {16777217, 16777215, 3};
  static const float ti[1] = {16777216.0f};
  static const float xf[3] = {0.1f, 0.2f, 0.3f};
  static const double tz = 0.1;
  uint8_t buf[TR_NLEVELS][3], *got[TR_NLEVELS] = {buf[0], buf[1], buf[2]};
  isin_ctx k1 = {ALLOY_I32, ALLOY_F32, xi, ti, 3, 1, 1, 1, false, false};
  isin_levels(&k1, got, 0);
  for (int l = 0; l < TR_NLEVELS; l++) CHECK(got[l][0] == 1 && got[l][1] == 0 && got[l][2] == 0);
  isin_ctx k2 = {ALLOY_F32, ALLOY_F64, xf, &tz, 3, 1, 1, 0, false, false};
  isin_levels(&k2, got, 0);
  for (int l = 0; l < TR_NLEVELS; l++) CHECK(got[l][0] == 1 && got[l][1] == 0 && got[l][2] == 0);

  tr_case c;
  REQUIRE(tr_open(&c));
  static uint8_t b[2];
  alloy_arg xb = tr_input1(&c, ALLOY_BOOL, 2, b);
  char msg[256];
  CHECK(refused(&c, "aten.isin.Tensor_Tensor", (alloy_arg[]){xb, xb}, 2, msg, sizeof msg));
  CHECK(strstr(msg, "Unsupported input type encountered for isin(): Bool") && strstr(msg, "'elements'"));
  tr_close(&c);
}

/* isin(x, test) decomposed to Core ATen with sizes unknown: where both
 * paths give one answer (elements with dims, assume_unique off) it
 * compares all against all; a zero-dim float64 element beside float32
 * test elements of unknown count would compare in float32 on one path and
 * float64 on the other, so the rule declines and the node stays. */
TEST(isin_with_symbolic_sizes) {
  for (int k = 0; k < 2; k++) {
    tg_fixture f = tg_setup(0);
    alloy_dim xs[2] = {f.s0, K(3)};
    alloy_value *x = k == 0 ? tg_input(&f, ALLOY_F32, xs, 2) : tg_input(&f, ALLOY_F64, NULL, 0);
    alloy_value *t = tg_input(&f, ALLOY_F32, &f.s1, 1);
    alloy_arg args[4] = {alloy_arg_value(x), alloy_arg_value(t), alloy_arg_bool(false), alloy_arg_bool(false)};
    alloy_node *n = tg_add(&f, "aten.isin.Tensor_Tensor", args, 4, NULL);
    REQUIRE(n);
    alloy_value *y = alloy_node_output(n, 0);
    CHECK_OK(alloy_graph_set_outputs(f.g, &y, 1));
    decomp_options o = {.accept = decomp_accept_core};
    alloy_graph *out = NULL;
    char *why = NULL;
    CHECK_OK(alloy_decompose(f.g, &o, &out, NULL, &why));
    REQUIRE(out);
    CHECK_OK(alloy_graph_verify(out));
    bool kept = false, any = false;
    for (int i = 0; i < alloy_graph_num_nodes(out); i++) {
      const char *op = alloy_op_name(alloy_node_op(alloy_graph_node(out, i)));
      kept |= !strcmp(op, "aten.isin.Tensor_Tensor");
      any |= !strcmp(op, "aten.any.dim");
    }
    CHECK(k == 0 ? !kept && any : kept);
    if (k == 1) CHECK(why && strstr(why, "not known"));
    free(why);
    alloy_graph_free(out);
    alloy_graph_free(f.g);
  }
}

/* ---- normalization ------------------------------------------------------------------ */

typedef struct bn_ctx {
  const uint16_t *x, *w, *b; /* float16 [4, 3, 5] and [3] */
} bn_ctx;

static alloy_value *build_bn(tr_case *c, const void *p) {
  const bn_ctx *k = p;
  int64_t s[3] = {4, 3, 5};
  alloy_arg args[6] = {tr_input(c, ALLOY_F16, s, 3, (void *)k->x), tr_input1(c, ALLOY_F16, 3, (void *)k->w),
                       tr_input1(c, ALLOY_F16, 3, (void *)k->b), alloy_arg_bool(true),
                       alloy_arg_float(0.1), alloy_arg_float(1e-5)};
  return node(c, "aten._native_batch_norm_legit.no_stats", args, 6, NULL, NULL, 0);
}

/* Training batch norm in float16 computes its output from the statistics
 * as saved, rounded to float16 (mean and invstd), as x * alpha + beta;
 * decomposed, every element is within float16's tolerance of the kernel's
 * (the float32 statistics were up to 7 ulps off). */
TEST(batch_norm_float16_uses_the_saved_statistics) {
  double v[60 + 6];
  static uint16_t x[60], w[3], b[3];
  for (uint32_t seed = 1; seed <= 6; seed++) {
    tr_fill(v, 66, seed);
    for (int i = 0; i < 60; i++) x[i] = alloy_f16_from_f32((float)(v[i] * 3 + (seed % 3)));
    for (int i = 0; i < 3; i++) w[i] = alloy_f16_from_f32((float)v[60 + i] * 2);
    for (int i = 0; i < 3; i++) b[i] = alloy_f16_from_f32((float)v[63 + i]);
    bn_ctx k = {x, w, b};
    double got[TR_NLEVELS][60] = {{0}};
    for (int l = 0; l < TR_NLEVELS; l++) {
      tr_case c;
      if (run_at(&c, build_bn, &k, tr_levels[l]))
        for (int i = 0; i < 60; i++) got[l][i] = tr_out_f(&c.out[0], i);
      tr_close(&c);
    }
    int bad = 0;
    for (int i = 0; i < 60; i++) bad += !close_to(got[TR_PRIMS][i], got[TR_WHOLE][i], 1e-3);
    CHECK_INT(bad, 0);
  }
}

static alloy_value *build_ln(tr_case *c, const void *p) {
  const float *v = p; /* x[5], w[5], b[5] */
  alloy_arg args[4] = {tr_input1(c, ALLOY_F32, 5, (void *)v), alloy_arg_list((alloy_arg[]){alloy_arg_int(5)}, 1),
                       tr_input1(c, ALLOY_F32, 5, (void *)(v + 5)), tr_input1(c, ALLOY_F32, 5, (void *)(v + 10))};
  return node(c, "aten.layer_norm.default", args, 4, NULL, NULL, 0);
}

/* A row whose mean (-0.946) is large against its spread: x - mean taken
 * once in float32 carries the mean's rounding error (6e-6 relative with a
 * weight of 3e38); the decomposition's second step removes it, so the
 * result is within float32's tolerance of the kernel's. */
TEST(layer_norm_float32_deviations_from_a_large_mean) {
  static const float v[15] = {-0.95020026f, -1.07844043f, -1.15028298f, -0.664829493f, -0.887513459f,
                              3.00000001e+38f, 1.6718477f, -1, -1, -0.0f,
                              -2.67789102f, 0, 0.5f, -9.9999461e-41f, -1.39640725f};
  double got[TR_NLEVELS][5] = {{0}};
  for (int l = 0; l < TR_NLEVELS; l++) {
    tr_case c;
    if (run_at(&c, build_ln, v, tr_levels[l]))
      for (int i = 0; i < 5; i++) got[l][i] = tr_out_f(&c.out[0], i);
    tr_close(&c);
  }
  CHECK(fabs(got[TR_WHOLE][0] + 7.0307626e36) < 1e31);
  for (int i = 0; i < 5; i++) CHECK(close_to(got[TR_PRIMS][i], got[TR_WHOLE][i], 1.3e-6));
}

/* ---- norm, linspace, floor division -------------------------------------------------- */

static alloy_value *build_norm(tr_case *c, const void *p) {
  alloy_arg dims = alloy_arg_list((alloy_arg[]){alloy_arg_int(0)}, 1);
  alloy_arg args[3] = {tr_input1(c, ALLOY_F32, 3, (void *)p), alloy_arg_none(), dims};
  return node(c, "aten.norm.ScalarOpt_dim", args, 3, NULL, NULL, 0);
}

/* PyTorch sums a float32 norm's squares in float32: 3e38 squared is inf,
 * and so is the norm, on the kernel as decomposed. */
TEST(norm_float32_overflows_past_flt_max) {
  static const float x[3] = {3.0e38f, 1, -2};
  for (int l = 0; l < TR_NLEVELS; l++) {
    tr_case c;
    if (run_at(&c, build_norm, x, tr_levels[l])) CHECK(isinf(tr_out_f(&c.out[0], 0)));
    tr_close(&c);
  }
}

static alloy_value *build_linspace(tr_case *c, const void *p) {
  alloy_arg args[3] = {tr_input(c, ALLOY_F64, NULL, 0, (void *)p), alloy_arg_float(3), alloy_arg_int(5)};
  return node(c, "aten.linspace.Tensor_Scalar", args, 3, NULL, NULL, 0);
}

/* linspace(inf, 3, 5) in float32: step -inf; points 0 and 1 come from the
 * start (inf - inf * i: NaN), 2 to 4 from the end (steps / 2 = 2 is the
 * integer half: the middle point is 3 + inf * 2 = inf), the last 3 - (-inf
 * * 0) = NaN. An endpoint float32 cannot hold (-1e300) is refused at run
 * time, as Scalar::to<float> refuses it; given as a number, by the shape
 * function, naming it. */
TEST(linspace_middle_point_and_overflowing_endpoints) {
  static const double inf = INFINITY, huge = -1e300;
  for (int l = 0; l < TR_NLEVELS; l++) {
    tr_case c;
    if (run_at(&c, build_linspace, &inf, tr_levels[l])) {
      CHECK_INT(c.out[0].dtype, ALLOY_F32);
      CHECK(isnan(tr_out_f(&c.out[0], 0)) && isnan(tr_out_f(&c.out[0], 1)) && isnan(tr_out_f(&c.out[0], 4)));
      CHECK(tr_out_f(&c.out[0], 2) == INFINITY && tr_out_f(&c.out[0], 3) == INFINITY);
    }
    tr_close(&c);
  }
  tr_case c;
  REQUIRE(tr_open(&c));
  alloy_arg args[3] = {tr_input(&c, ALLOY_F64, NULL, 0, (void *)&huge), alloy_arg_float(3), alloy_arg_int(5)};
  CHECK(tr_run_fails(&c, "aten.linspace.Tensor_Scalar", args, 3, NULL, NULL, 0));
  tr_close(&c);
  REQUIRE(tr_open(&c));
  char msg[256];
  CHECK(refused(&c, "aten.linspace.default",
                (alloy_arg[]){alloy_arg_float(-1e300), alloy_arg_float(1), alloy_arg_int(5)}, 3, msg, sizeof msg));
  CHECK(strstr(msg, "overflow") && strstr(msg, "'start'"));
  /* one point is a fill with start: end is not read */
  CHECK(!refused(&c, "aten.linspace.default",
                 (alloy_arg[]){alloy_arg_float(1), alloy_arg_float(-1e300), alloy_arg_int(1)}, 3, msg, sizeof msg));
  tr_close(&c);
}

static alloy_value *build_floordiv(tr_case *c, const void *p) {
  const float *v = p;
  alloy_arg args[2] = {tr_input1(c, ALLOY_F32, 3, (void *)v), tr_input1(c, ALLOY_F32, 3, (void *)(v + 3))};
  return node(c, "aten.floor_divide.default", args, 2, NULL, NULL, 0);
}

/* 1 // -1e-40 in float32 is -inf (the quotient overflows; PyTorch's
 * vectorized kernel then divides a itself, its fmod being NaN there), and
 * the ordinary cases stay: 7 // -2 = -4, -0.5 // 3 = -1. */
TEST(floor_divide_by_a_denormal_overflows_to_inf) {
  static const float v[6] = {1, 7, -0.5f, -9.9999461e-41f, -2, 3};
  static const double want[3] = {-INFINITY, -4, -1};
  for (int l = 0; l < TR_NLEVELS; l++) {
    tr_case c;
    if (run_at(&c, build_floordiv, v, tr_levels[l]))
      for (int i = 0; i < 3; i++) CHECK(tr_out_f(&c.out[0], i) == want[i]);
    tr_close(&c);
  }
}
