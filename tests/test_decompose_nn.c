/*
 * tests/test_decompose_nn.c: neural-network ops whose decompositions,
 * reference kernels and shape functions must agree with PyTorch 2.11's CPU
 * kernels where the generated samples found them apart. Each value case
 * runs one op on "ref" whole (the kernel) and decomposed to Core ATen and
 * to prims, against values PyTorch 2.11 computed: adaptive max pooling's
 * NaN (the last one wins) and all -inf windows, multi_margin_loss skipping
 * NaN terms, nll_loss's total weight of one unbatched sample and its
 * float16 sum made as the kernel's cascade of partial sums, bicubic
 * weights near 1 and 2 (fused multiply-adds), and antialiased resampling
 * leaving a dim of unchanged size alone. Then the dtypes the CPU kernels
 * refuse, refused by the shape functions with the argument named.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "alloy/runtime.h"
#include "testref.h"



/* Exactly the value PyTorch gives (NaN for NaN). */
static bool same(double a, double b) { return isnan(a) ? isnan(b) : a == b; }

#define CHECK_SAME(got, want, level)                                                       \
  do {                                                                                     \
    double g_ = (got), w_ = (want);                                                        \
    if (!same(g_, w_))                                                                     \
      harness_fail(__FILE__, __LINE__, "level %d: got %.9g, want %.9g", (int)(level), g_, w_); \
  } while (0)

static alloy_node *node(tr_case *c, const char *op, const alloy_arg *args, int n) {
  return tr_node(c, op, args, n, NULL, NULL, 0);
}

/* ---- adaptive_max_pool2d: the last NaN of a window, the first of a tie ------------ */

static alloy_node *build_amp(tr_case *c, const void *p) {
  static const int64_t shape[4] = {1, 1, 2, 4}, size[2] = {1, 2};
  alloy_arg items[2];
  alloy_arg args[2] = {tr_input(c, ALLOY_F32, shape, 4, (void *)p), tr_ints(items, 2, size)};
  return node(c, "aten.adaptive_max_pool2d.default", args, 2);
}

/* The kernel lets every NaN replace the running maximum ((v > max) ||
 * isnan(v)), so the last NaN of a window is its index (6, not 2); a window
 * of -inf keeps its first element. */
TEST(adaptive_max_pool_takes_the_last_nan) {
  static const float x[8] = {1, NAN, 3, NAN, 2, 5, NAN, 0};
  static const float ninf[8] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY,
                                -INFINITY, -INFINITY, -INFINITY, -INFINITY};
  for (int l = 0; l < TR_NLEVELS; l++) {
    tr_case c;
    if (tr_run_built(&c, build_amp, x, tr_levels[l])) {
      CHECK(isnan(tr_out_f(&c.out[0], 0)) && isnan(tr_out_f(&c.out[0], 1)));
      CHECK_SAME(tr_out_f(&c.out[1], 0), 1, l);
      CHECK_SAME(tr_out_f(&c.out[1], 1), 6, l);
    }
    tr_close(&c);
    if (tr_run_built(&c, build_amp, ninf, tr_levels[l])) {
      CHECK_SAME(tr_out_f(&c.out[0], 0), -INFINITY, l);
      CHECK_SAME(tr_out_f(&c.out[1], 0), 0, l);
      CHECK_SAME(tr_out_f(&c.out[1], 1), 2, l);
    }
    tr_close(&c);
  }
}

/* ---- multi_margin_loss: NaN terms skipped ------------------------------------------- */

static alloy_node *build_mml(tr_case *c, const void *p) {
  static const float x[8] = {0.2f, NAN, 0.9f, -INFINITY, INFINITY, 0.5f, 0.25f, 1.5f};
  static const int64_t y[2] = {2, 1}, shape[2] = {2, 4};
  alloy_arg args[6] = {tr_input(c, ALLOY_F32, shape, 2, (void *)x),
                       tr_input1(c, ALLOY_I64, 2, (void *)y),
                       alloy_arg_int(*(const int *)p), alloy_arg_int(1), alloy_arg_none(),
                       alloy_arg_int(0)};
  return node(c, "aten.multi_margin_loss.default", args, 6);
}

/* The kernel adds a term only where margin - x[y] + x[i] > 0, which NaN is
 * not: row 0 is (1 - 0.9 + 0.2) / 4 for p = 1, its square over 4 for
 * p = 2, not NaN (the decompositions' mean may round differently). */
TEST(multi_margin_loss_skips_nan_terms) {
  static const int p[2] = {1, 2};
  static const double want[2] = {0.07500000298023224, 0.02250000089406967};
  for (int k = 0; k < 2; k++)
    for (int l = 0; l < TR_NLEVELS; l++) {
      tr_case c;
      if (tr_run_built(&c, build_mml, &p[k], tr_levels[l])) {
        double got = tr_out_f(&c.out[0], 0);
        if (!(fabs(got - want[k]) <= 1.3e-6 * want[k]))
          harness_fail(__FILE__, __LINE__, "level %d: got %.9g, want %.9g", l, got, want[k]);
        CHECK_SAME(tr_out_f(&c.out[0], 1), INFINITY, l);
      }
      tr_close(&c);
    }
}

/* ---- nll_loss ------------------------------------------------------------------------ */

typedef struct nll_ctx {
  bool weighted;
  int64_t target;
} nll_ctx;

static alloy_node *build_nll1d(tr_case *c, const void *p) {
  const nll_ctx *k = p;
  static const float x[3] = {0.5f, -1.25f, 2.0f}, w[3] = {1, 2, 3};
  static int64_t t;
  t = k->target;
  alloy_arg args[5] = {tr_input1(c, ALLOY_F32, 3, (void *)x),
                       tr_input(c, ALLOY_I64, NULL, 0, &t),
                       k->weighted ? tr_input1(c, ALLOY_F32, 3, (void *)w) : alloy_arg_none(),
                       alloy_arg_int(0), alloy_arg_int(-100)};
  return node(c, "aten.nll_loss_forward.default", args, 5);
}

/* One unbatched sample with reduction none goes the kernel's reduced way:
 * its total weight is its target's weight (1 unweighted), not 0. */
TEST(nll_loss_unbatched_total_weight) {
  static const nll_ctx cases[2] = {{false, 1}, {true, 2}};
  static const double want[2][2] = {{1.25, 1}, {-6, 3}};
  for (int k = 0; k < 2; k++)
    for (int l = 0; l < TR_NLEVELS; l++) {
      tr_case c;
      if (tr_run_built(&c, build_nll1d, &cases[k], tr_levels[l])) {
        CHECK_SAME(tr_out_f(&c.out[0], 0), want[k][0], l);
        CHECK_SAME(tr_out_f(&c.out[1], 0), want[k][1], l);
      }
      tr_close(&c);
    }
}

static alloy_node *build_nll2d(tr_case *c, const void *p) {
  static uint16_t x[2 * 3 * 4 * 5];
  static int64_t t[2 * 4 * 5];
  static const int64_t xs[4] = {2, 3, 4, 5}, ts[3] = {2, 4, 5};
  for (int n = 0; n < 2; n++)
    for (int ch = 0; ch < 3; ch++)
      for (int i = 0; i < 20; i++) {
        int k = n * 20 + i; /* the same plane in every channel */
        x[(n * 3 + ch) * 20 + i] = alloy_f16_from_f32(1.0f + (float)((k * 31) % 1024) / 1024.0f);
        t[k] = (k * 7) % 3;
      }
  alloy_arg args[5] = {tr_input(c, ALLOY_F16, xs, 4, x), tr_input(c, ALLOY_I64, ts, 3, t),
                       alloy_arg_none(), alloy_arg_int(*(const int *)p), alloy_arg_int(-100)};
  return node(c, "aten.nll_loss2d_forward.default", args, 5);
}

/* The kernel sums 40 float16 losses in float16, each step rounded, through
 * its cascade of partial sums (element 0 alone, then rows of 16): -57.5625
 * where a float32 sum rounded once gives -57.625. */
TEST(nll_loss2d_float16_sums_as_the_kernel) {
  static const int reduction[2] = {2, 1};
  static const double want[2] = {-57.5625, -1.439453125};
  for (int k = 0; k < 2; k++)
    for (int l = 0; l < TR_NLEVELS; l++) {
      tr_case c;
      if (tr_run_built(&c, build_nll2d, &reduction[k], tr_levels[l])) {
        CHECK_INT(c.out[0].dtype, ALLOY_F16);
        CHECK_SAME(tr_out_f(&c.out[0], 0), want[k], l);
        CHECK_SAME(tr_out_f(&c.out[1], 0), 40, l);
      }
      tr_close(&c);
    }
}

/* ---- upsampling -------------------------------------------------------------------- */

static alloy_node *build_bicubic(tr_case *c, const void *p) {
  (void)p;
  static const float x[5] = {0, 0, 1, 0, 0};
  static const int64_t shape[4] = {1, 1, 1, 5}, size[2] = {1, 11};
  alloy_arg items[2];
  alloy_arg args[5] = {tr_input(c, ALLOY_F32, shape, 4, (void *)x), tr_ints(items, 2, size),
                       alloy_arg_bool(false), alloy_arg_none(), alloy_arg_float(2.1)};
  return node(c, "aten.upsample_bicubic2d.default", args, 5);
}

/* An impulse gives the kernel's weights bit for bit; k2 near 2 cancels
 * (-0.0270586 and -0.0461919 here) and shows how it is evaluated: the
 * source index and the first steps of Keys' polynomials fused. */
TEST(upsample_bicubic_weights_as_the_kernel) {
  static const double want[11] = {0.0, -0.02705860137939453, -0.11067605018615723,
                                  0.16087961196899414, 0.769952654838562, 0.970221221446991,
                                  0.466428279876709, -0.04619193077087402,
                                  -0.08405208587646484, 0.0, 0.0};
  for (int l = 0; l < TR_NLEVELS; l++) {
    tr_case c;
    if (tr_run_built(&c, build_bicubic, NULL, tr_levels[l]))
      for (int k = 0; k < 11; k++) CHECK_SAME(tr_out_f(&c.out[0], k), want[k], l);
    tr_close(&c);
  }
}

static alloy_node *build_aa(tr_case *c, const void *p) {
  (void)p;
  static const float x[8] = {1, INFINITY, 2, 3, 4, 5, 6, 7};
  static const int64_t shape[4] = {1, 1, 2, 4}, size[2] = {2, 3};
  alloy_arg items[2];
  alloy_arg args[3] = {tr_input(c, ALLOY_F32, shape, 4, (void *)x), tr_ints(items, 2, size),
                       alloy_arg_bool(false)};
  return node(c, "aten._upsample_bilinear2d_aa.default", args, 3);
}

/* H keeps its size, so the kernel makes no H pass: the inf of row 0 stays
 * out of row 1 (a zero weight on it would give NaN). */
TEST(upsample_aa_leaves_an_unchanged_dim_alone) {
  static const double want[6] = {INFINITY, INFINITY, 2.700000047683716, 4.300000190734863, 5.5,
                                 6.700000286102295};
  for (int l = 0; l < TR_NLEVELS; l++) {
    tr_case c;
    if (tr_run_built(&c, build_aa, NULL, tr_levels[l]))
      for (int k = 0; k < 6; k++) CHECK_SAME(tr_out_f(&c.out[0], k), want[k], l);
    tr_close(&c);
  }
}

/* ---- dtypes the CPU kernels refuse ---------------------------------------------------- */

/* Whether adding op(args) is refused with a message containing text. */
static bool refused_with(tr_case *c, const char *op, const alloy_arg *args, int n, const char *text) {
  alloy_node *nd = NULL;
  alloy_error *e = alloy_graph_add_node(c->g, alloy_op_find(op), args, n, NULL, NULL, 0, NULL, &nd);
  bool ok = e && strstr(alloy_error_message(e), text);
  if (!ok)
    harness_fail(__FILE__, __LINE__, "%s: %s", op, e ? alloy_error_message(e) : "accepted");
  alloy_error_free(e);
  return ok;
}

/* multi_margin_loss takes float32 and float64 only; nll_loss floating
 * types with an int64 target; adaptive max pooling floating types;
 * antialiased upsampling no float16; linalg_cross no bool. Nearest
 * upsampling takes uint8. */
TEST(nn_shape_functions_refuse_what_the_kernels_refuse) {
  tr_case c;
  REQUIRE(tr_open(&c));
  static char buf[512];
  static const int64_t s2[2] = {5, 4}, s4[4] = {2, 3, 4, 5}, s3[3] = {2, 3, 5}, sc[2] = {4, 3};
  static const int64_t two[2] = {2, 2}, eight[1] = {8};
  alloy_arg items[2];
  alloy_arg target = tr_input1(&c, ALLOY_I64, 5, buf);
  alloy_arg h = tr_input(&c, ALLOY_F16, s2, 2, buf);
  CHECK(refused_with(&c, "aten.multi_margin_loss.default",
                     (alloy_arg[]){h, target, alloy_arg_int(1), alloy_arg_int(1), alloy_arg_none(),
                                   alloy_arg_int(1)},
                     6, "'self'"));
  alloy_arg l = tr_input(&c, ALLOY_I64, s2, 2, buf);
  CHECK(refused_with(&c, "aten.nll_loss_forward.default",
                     (alloy_arg[]){l, target, alloy_arg_none(), alloy_arg_int(1), alloy_arg_int(-100)},
                     5, "'self'"));
  alloy_arg f = tr_input(&c, ALLOY_F32, s2, 2, buf), it = tr_input1(&c, ALLOY_I32, 5, buf);
  CHECK(refused_with(&c, "aten.nll_loss_forward.default",
                     (alloy_arg[]){f, it, alloy_arg_none(), alloy_arg_int(1), alloy_arg_int(-100)},
                     5, "'target'"));
  alloy_arg i4 = tr_input(&c, ALLOY_I32, s4, 4, buf);
  CHECK(refused_with(&c, "aten.adaptive_max_pool2d.default",
                     (alloy_arg[]){i4, tr_ints(items, 2, two)}, 2, "'self'"));
  alloy_arg h4 = tr_input(&c, ALLOY_F16, s4, 4, buf);
  CHECK(refused_with(&c, "aten._upsample_bilinear2d_aa.default",
                     (alloy_arg[]){h4, tr_ints(items, 2, two), alloy_arg_bool(false)}, 3, "'self'"));
  alloy_arg b = tr_input(&c, ALLOY_BOOL, sc, 2, buf);
  CHECK(refused_with(&c, "aten.linalg_cross.default", (alloy_arg[]){b, b, alloy_arg_int(-1)}, 3,
                     "'Bool'"));
  alloy_arg u = tr_input(&c, ALLOY_U8, s3, 3, buf);
  alloy_node *nd = node(&c, "aten.upsample_nearest1d.default",
                        (alloy_arg[]){u, tr_ints(items, 1, eight)}, 2);
  CHECK(nd && alloy_value_dtype(alloy_node_output(nd, 0)) == ALLOY_U8);
  tr_close(&c);
}
