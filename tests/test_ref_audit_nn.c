/*
 * tests/test_ref_audit_nn.c: neural-network ops where the reference
 * kernels (and the decompositions that must agree with them) were found
 * apart from PyTorch 2.11's CPU kernels by rerunning the generated
 * samples in torch. Each case runs one op on "ref" whole and decomposed to
 * Core ATen and to prims, against values torch 2.11 computed (written as
 * literals).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "alloy/runtime.h"
#include "testref.h"



/* Within rel of want (NaN for NaN, infinities exactly). */
static bool near(double got, double want, double rel) {
  if (isnan(want)) return isnan(got);
  if (isinf(want)) return got == want;
  return fabs(got - want) <= rel * fabs(want) + 1e-12;
}

#define CHECK_NEAR(got, want, rel, level)                                                  \
  do {                                                                                     \
    double g_ = (got), w_ = (want);                                                        \
    if (!near(g_, w_, (rel)))                                                              \
      harness_fail(__FILE__, __LINE__, "level %d: got %.9g, want %.9g", (int)(level), g_, w_); \
  } while (0)

static alloy_node *node(tr_case *c, const char *op, const alloy_arg *args, int n) {
  return tr_node(c, op, args, n, NULL, NULL, 0);
}

/* ---- _trilinear: unroll_dim that all three operands are expanded at ---------------- */

static alloy_node *build_tri(tr_case *c, const void *p) {
  static const double a[2] = {0.5, -2.0}, b[2] = {3.0, 1.5}, x[2] = {1.0, -1.0};
  static const int64_t shape[2] = {1, 2}, one[1] = {1};
  alloy_arg items[4][1];
  alloy_arg args[8] = {tr_input(c, ALLOY_F64, shape, 2, (void *)a),
                       tr_input(c, ALLOY_F64, shape, 2, (void *)b),
                       tr_input(c, ALLOY_F64, shape, 2, (void *)x),
                       tr_ints(items[0], 1, one),
                       tr_ints(items[1], 1, one),
                       tr_ints(items[2], 1, one),
                       tr_ints(items[3], 1, one),
                       alloy_arg_int(*(const int *)p)};
  return node(c, "aten._trilinear.default", args, 8);
}

/* PyTorch loops over unroll_dim as far as an operand that has it reaches:
 * with all three expanded there, not at all, and the output stays zero;
 * unrolling dim 0 instead gives the product. */
TEST(trilinear_unroll_dim_expanded_everywhere_is_zero) {
  static const int unroll[2] = {1, 0};
  static const double want[2][2] = {{0.0, 0.0}, {1.5, 3.0}}; /* torch 2.11 */
  for (int k = 0; k < 2; k++)
    for (int l = 0; l < TR_NLEVELS; l++) {
      tr_case c;
      if (tr_run_built(&c, build_tri, &unroll[k], tr_levels[l]))
        for (int i = 0; i < 2; i++) CHECK_NEAR(tr_out_f(&c.out[0], i), want[k][i], 0, l);
      tr_close(&c);
    }
}

/* ---- pooling backward: divided and added up in the dtype ---------------------------- */

typedef struct pool_case {
  alloy_dtype dt;
  const void *grad;
  bool adaptive;
} pool_case;

static alloy_node *build_pool(tr_case *c, const void *p) {
  const pool_case *k = p;
  static const int64_t gshape[4] = {1, 1, 2, 2}, xshape[4] = {1, 1, 3, 3};
  static const uint16_t zeros16[9] = {0};
  static const int64_t zeros64[9] = {0};
  const void *self = k->dt == ALLOY_I64 ? (const void *)zeros64 : (const void *)zeros16;
  alloy_arg g = tr_input(c, k->dt, gshape, 4, (void *)k->grad),
            x = tr_input(c, k->dt, xshape, 4, (void *)self);
  if (k->adaptive) {
    alloy_arg args[2] = {g, x};
    return node(c, "aten._adaptive_avg_pool2d_backward.default", args, 2);
  }
  /* int64: kernel 2, stride 1, no padding; float16: kernel 3, stride 2,
   * padding 1, count_include_pad false */
  bool i64 = k->dt == ALLOY_I64;
  static const int64_t k2[2] = {2, 2}, k3[2] = {3, 3}, s1[2] = {1, 1}, s2[2] = {2, 2},
                       p0[2] = {0, 0}, p1[2] = {1, 1};
  alloy_arg items[3][2];
  alloy_arg args[8] = {g, x, tr_ints(items[0], 2, i64 ? k2 : k3), tr_ints(items[1], 2, i64 ? s1 : s2),
                       tr_ints(items[2], 2, i64 ? p0 : p1), alloy_arg_bool(false),
                       alloy_arg_bool(i64), alloy_arg_none()};
  return node(c, "aten.avg_pool2d_backward.default", args, 8);
}

static void fill_f16(uint16_t *dst, const double *v, int n);

/* PyTorch's CPU kernels divide each output's gradient in the dtype (int64
 * truncating: -5 / 4 is -1, not floor's -2) and add it to the window in
 * the dtype, each sum rounded (float16: 0.2000732 at [0, 1], where the
 * exact sum is 0.2000427; the adaptive kernel divides by each extent in
 * turn). */
TEST(pool_backward_rounds_in_the_dtype) {
  static const int64_t g64[4] = {-5, 7, 3, -1};
  static const double want64[9] = {-1, 0, 1, -1, 0, 1, 0, 0, 0}; /* torch 2.11 */
  static const double g16v[4] = {0.0999755859375, 0.7001953125, -0.300048828125, 0.35009765625};
  static const double want16[9] = {0.024993896484375,  0.2000732421875,  0.175048828125,
                                   -0.050018310546875, 0.2125244140625,  0.2626953125,
                                   -0.07501220703125,  0.01251220703125, 0.0875244140625};
  static const double ga[4] = {-0.195556640625, -0.9658203125, 0.42236328125, 0.267333984375};
  static const double wanta[9] = {-0.04888916015625, -0.290283203125, -0.241455078125,
                                  0.05670166015625,  -0.11785888671875, -0.174560546875,
                                  0.1055908203125,   0.17236328125,     0.06683349609375};
  uint16_t g16[4], gad[4];
  fill_f16(g16, g16v, 4);
  fill_f16(gad, ga, 4);
  const pool_case cases[3] = {{ALLOY_I64, g64, false}, {ALLOY_F16, g16, false}, {ALLOY_F16, gad, true}};
  const double *want[3] = {want64, want16, wanta};
  for (int k = 0; k < 3; k++)
    for (int l = 0; l < TR_NLEVELS; l++) {
      tr_case c;
      if (tr_run_built(&c, build_pool, &cases[k], tr_levels[l]))
        for (int i = 0; i < 9; i++) CHECK_NEAR(tr_out_f(&c.out[0], i), want[k][i], 0, l);
      tr_close(&c);
    }
}

/* float16 bits of v (round to nearest even; normal values only). */
static void fill_f16(uint16_t *dst, const double *v, int n) {
  for (int i = 0; i < n; i++) {
    float f = (float)v[i];
    uint32_t b;
    memcpy(&b, &f, 4);
    uint32_t sign = (b >> 16) & 0x8000u, man = b & 0x7fffffu;
    int32_t e = (int32_t)((b >> 23) & 0xff) - 127 + 15;
    uint32_t h = sign | ((uint32_t)e << 10) | (man >> 13);
    uint32_t rest = man & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h++;
    dst[i] = (uint16_t)(v[i] == 0.0 ? sign : h);
  }
}

/* ---- native_layer_norm_backward ----------------------------------------------------- */

typedef struct lnb_case {
  alloy_dtype dt;
  int64_t rows;
  const void *dy, *x, *mean, *rstd, *w, *b;
} lnb_case;

static alloy_node *build_lnb(tr_case *c, const void *p) {
  const lnb_case *k = p;
  const int64_t shape[2] = {k->rows, 2}, sshape[2] = {k->rows, 1}, two[1] = {2};
  alloy_arg ns[1], m[3] = {alloy_arg_bool(true), alloy_arg_bool(true), alloy_arg_bool(true)};
  alloy_arg args[8] = {tr_input(c, k->dt, shape, 2, (void *)k->dy),
                       tr_input(c, k->dt, shape, 2, (void *)k->x),
                       tr_ints(ns, 1, two),
                       tr_input(c, k->dt, sshape, 2, (void *)k->mean),
                       tr_input(c, k->dt, sshape, 2, (void *)k->rstd),
                       tr_input1(c, k->dt, 2, (void *)k->w),
                       tr_input1(c, k->dt, 2, (void *)k->b),
                       alloy_arg_list(m, 3)};
  return node(c, "aten.native_layer_norm_backward.default", args, 8);
}

/* The kernel (one thread) adds each row's weight and bias gradients into
 * a buffer of the input's dtype: float16 grad_weight 4.1484375, where the
 * exact sum rounds to 4.15234375. And ds sums (dY X) w: dY X overflows
 * float32 to inf, times a zero weight NaN, which spreads over the row. */
TEST(layer_norm_backward_as_the_kernel_sums) {
  static const double x[8] = {0.300048828125, -1.2001953125, 2.5, 0.7001953125,
                              -0.39990234375, 1.900390625, 1.099609375, -2.19921875};
  static const double dy[8] = {1.7001953125, -0.89990234375, 0.35009765625, 2.099609375,
                               -1.2998046875, 0.60009765625, 0.7998046875, 1.4501953125};
  static const double mean[4] = {-0.4501953125, 1.599609375, 0.75, -0.5498046875};
  static const double rstd[4] = {1.3330078125, 1.111328125, 0.86962890625, 0.6064453125};
  static const double w[2] = {1.5, -0.75}, b[2] = {0.25, 0.5};
  static const double want_dw[2] = {4.1484375, -2.048828125}, want_db[2] = {1.55078125, 3.25};
  uint16_t hx[8], hdy[8], hm[4], hr[4], hw[2], hb[2];
  fill_f16(hx, x, 8), fill_f16(hdy, dy, 8), fill_f16(hm, mean, 4), fill_f16(hr, rstd, 4);
  fill_f16(hw, w, 2), fill_f16(hb, b, 2);
  static const float fx[2] = {3e38f, 0.5f}, fdy[2] = {3e38f, 1.0f}, fm[1] = {0.25f}, fr[1] = {2.0f},
                     fw[2] = {0.0f, 1.0f};
  const lnb_case cases[2] = {{ALLOY_F16, 4, hdy, hx, hm, hr, hw, hb},
                             {ALLOY_F32, 1, fdy, fx, fm, fr, fw, fw}};
  for (int k = 0; k < 2; k++)
    for (int l = 0; l < TR_NLEVELS; l++) {
      tr_case c;
      if (tr_run_built(&c, build_lnb, &cases[k], tr_levels[l])) {
        if (k == 0) {
          for (int i = 0; i < 2; i++) {
            CHECK_NEAR(tr_out_f(&c.out[1], i), want_dw[i], 0, l); /* torch 2.11 */
            CHECK_NEAR(tr_out_f(&c.out[2], i), want_db[i], 0, l);
          }
        } else {
          CHECK_NEAR(tr_out_f(&c.out[0], 0), NAN, 0, l); /* torch 2.11: both NaN */
          CHECK_NEAR(tr_out_f(&c.out[0], 1), NAN, 0, l);
        }
      }
      tr_close(&c);
    }
}

/* ---- native_group_norm_backward: the kernel's c1 dY + c2 X + c3 form ---------------- */

static alloy_node *build_gnb(tr_case *c, const void *p) {
  (void)p;
  static const float x[4] = {1.0f, INFINITY, 0.5f, -1.0f}, dy[4] = {0.5f, 1.0f, 2.0f, -1.0f};
  static const float mean[1] = {0.25f}, rstd[1] = {2.0f}, w[2] = {1.5f, 0.5f};
  static const int64_t shape[3] = {1, 2, 2}, sshape[2] = {1, 1};
  alloy_arg m[3] = {alloy_arg_bool(true), alloy_arg_bool(true), alloy_arg_bool(true)};
  alloy_arg args[10] = {tr_input(c, ALLOY_F32, shape, 3, (void *)dy),
                        tr_input(c, ALLOY_F32, shape, 3, (void *)x),
                        tr_input(c, ALLOY_F32, sshape, 2, (void *)mean),
                        tr_input(c, ALLOY_F32, sshape, 2, (void *)rstd),
                        tr_input1(c, ALLOY_F32, 2, (void *)w),
                        alloy_arg_int(1), alloy_arg_int(2), alloy_arg_int(2), alloy_arg_int(1),
                        alloy_arg_list(m, 3)};
  return node(c, "aten.native_group_norm_backward.default", args, 10);
}

/* An infinite input makes ds infinite, so c2 and c3 are, and
 * c1 dY + c2 X + c3 is NaN but where inf terms agree (torch 2.11:
 * [nan, nan, nan, inf]); grad_weight (ds - db mean) rstd is inf. */
TEST(group_norm_backward_infinite_input) {
  static const double want_dx[4] = {NAN, NAN, NAN, INFINITY}, want_dw[2] = {INFINITY, 3.5},
                      want_db[2] = {1.5, 1.0}; /* torch 2.11 */
  for (int l = 0; l < TR_NLEVELS; l++) {
    tr_case c;
    if (tr_run_built(&c, build_gnb, NULL, tr_levels[l])) {
      for (int i = 0; i < 4; i++) CHECK_NEAR(tr_out_f(&c.out[0], i), want_dx[i], 0, l);
      for (int i = 0; i < 2; i++) {
        CHECK_NEAR(tr_out_f(&c.out[1], i), want_dw[i], 1e-6, l);
        CHECK_NEAR(tr_out_f(&c.out[2], i), want_db[i], 1e-6, l);
      }
    }
    tr_close(&c);
  }
}

/* ---- uint8 resampling in fixed point ------------------------------------------------ */

typedef struct up_case {
  const char *op;
  int64_t h, w, oh, ow;
  bool align;
} up_case;

static alloy_node *build_up(tr_case *c, const void *p) {
  const up_case *k = p;
  static const uint8_t small[6] = {10, 200, 37, 255, 0, 128};
  static const uint8_t big[24] = {10, 200, 37, 90,  14,  250, 255, 0,   128, 3,   77,  160,
                                  5,  66,  199, 240, 31, 8,   100, 101, 102, 0, 255, 12};
  const int64_t shape[4] = {1, 1, k->h, k->w}, size[2] = {k->oh, k->ow};
  alloy_arg items[2];
  alloy_arg args[5] = {tr_input(c, ALLOY_U8, shape, 4, (void *)(k->h == 2 ? small : big)),
                       tr_ints(items, 2, size), alloy_arg_bool(k->align), alloy_arg_none(),
                       alloy_arg_none()};
  return node(c, k->op, args, 5);
}

/* PyTorch computes uint8 as Pillow: int16 weights, integer sums rounded
 * by the precision's half and shifted, W then H, each pass clamped to
 * uint8 (bilinear 133 at [1, 0], where the float path gives 132). */
TEST(uint8_resampling_in_fixed_point) {
  static const up_case cases[4] = {{"aten.upsample_bilinear2d.default", 2, 3, 3, 5, false},
                                   {"aten.upsample_bilinear2d.default", 2, 3, 3, 5, true},
                                   {"aten.upsample_bicubic2d.default", 2, 3, 3, 5, false},
                                   {"aten._upsample_bilinear2d_aa.default", 4, 6, 2, 4, false}};
  static const double want[4][15] = {/* torch 2.11 */
                                     {10, 86, 200, 102, 37, 133, 120, 100, 90, 83, 255, 153, 0, 77, 128},
                                     {10, 105, 200, 119, 37, 133, 117, 100, 92, 83, 255, 128, 0, 64, 128},
                                     {0, 90, 217, 119, 11, 128, 121, 100, 87, 81, 255, 152, 0, 55, 150},
                                     {107, 95, 67, 127, 78, 117, 118, 70}};
  for (int k = 0; k < 4; k++)
    for (int l = 0; l < TR_NLEVELS; l++) {
      tr_case c;
      if (tr_run_built(&c, build_up, &cases[k], tr_levels[l]))
        for (int64_t i = 0; i < cases[k].oh * cases[k].ow; i++)
          CHECK_NEAR(tr_out_f(&c.out[0], i), want[k][i], 0, l);
      tr_close(&c);
    }
}

/* ---- grid_sampler_2d: the vectorized kernel's NaN weights --------------------------- */

static alloy_node *build_gs(tr_case *c, const void *p) {
  const float *grid = p;
  static const float x[6] = {1, 2, 3, 4, 5, 6};
  static const int64_t xshape[4] = {1, 1, 2, 3}, gshape[4] = {1, 1, 2, 2};
  alloy_arg args[5] = {tr_input(c, ALLOY_F32, xshape, 4, (void *)x),
                       tr_input(c, ALLOY_F32, gshape, 4, (void *)grid), alloy_arg_int(0),
                       alloy_arg_int(0), alloy_arg_bool(false)};
  return node(c, "aten.grid_sampler_2d.default", args, 5);
}

/* x = 3e38 on a width of 3: (x + 1) * 1.5 overflows float to inf, its
 * corner weights are NaN and the zero-padded corners (0 * NaN) make the
 * output NaN; a finite far point is 0. */
TEST(grid_sampler_2d_infinite_position_is_nan) {
  static const float grid[4] = {3e38f, 0.0f, 1e30f, 0.0f};
  for (int l = 0; l < TR_NLEVELS; l++) {
    tr_case c;
    if (tr_run_built(&c, build_gs, grid, tr_levels[l])) {
      CHECK_NEAR(tr_out_f(&c.out[0], 0), NAN, 0, l); /* torch 2.11 */
      CHECK_NEAR(tr_out_f(&c.out[0], 1), 0.0, 0, l);
    }
    tr_close(&c);
  }
}

/* ---- _cdist_forward: float32 sums and the zero norm's NaN --------------------------- */

static alloy_node *build_cdist(tr_case *c, const void *p) {
  static const float a[4] = {2e19f, 1.0f, 1.0f, NAN}, b[4] = {0.0f, 1.0f, 1.0f, 2.0f};
  static const int64_t shape[3] = {1, 2, 2};
  alloy_arg args[4] = {tr_input(c, ALLOY_F32, shape, 3, (void *)a),
                       tr_input(c, ALLOY_F32, shape, 3, (void *)b),
                       alloy_arg_float(*(const double *)p), alloy_arg_none()};
  return node(c, "aten._cdist_forward.default", args, 4);
}

/* p = 2: the squares add up in float32, (2e19)^2 overflows to inf; p = 0:
 * min(ceil(|d|), 1) counts a NaN difference as NaN. */
TEST(cdist_sums_in_float_and_counts_nan) {
  static const double ps[2] = {2.0, 0.0};
  static const double want[2][4] = {{INFINITY, INFINITY, NAN, NAN}, {1, 2, NAN, NAN}}; /* torch 2.11 */
  for (int k = 0; k < 2; k++)
    for (int l = 0; l < TR_NLEVELS; l++) {
      tr_case c;
      if (tr_run_built(&c, build_cdist, &ps[k], tr_levels[l]))
        for (int i = 0; i < 4; i++) CHECK_NEAR(tr_out_f(&c.out[0], i), want[k][i], 0, l);
      tr_close(&c);
    }
}

/* ---- avg pooling forward: float sums --------------------------------------------------- */

static alloy_node *build_avg(tr_case *c, const void *p) {
  static const float x[4] = {3e38f, 3e38f, 1.0f, 2.0f};
  static const int64_t shape[4] = {1, 1, 2, 2}, two[2] = {2, 2}, one[2] = {1, 1};
  alloy_arg items[2];
  alloy_arg in = tr_input(c, ALLOY_F32, shape, 4, (void *)x);
  if (*(const int *)p) {
    alloy_arg args[2] = {in, tr_ints(items, 2, one)};
    return node(c, "aten._adaptive_avg_pool2d.default", args, 2);
  }
  alloy_arg args[2] = {in, tr_ints(items, 2, two)};
  return node(c, "aten.avg_pool2d.default", args, 2);
}

/* PyTorch sums a float32 window in float: 3e38 + 3e38 is inf, and so is
 * the mean (not 1.5e38). */
TEST(avg_pool_sums_in_float) {
  static const int adaptive[2] = {0, 1};
  for (int k = 0; k < 2; k++)
    for (int l = 0; l < TR_NLEVELS; l++) {
      tr_case c;
      if (tr_run_built(&c, build_avg, &adaptive[k], tr_levels[l]))
        CHECK_NEAR(tr_out_f(&c.out[0], 0), INFINITY, 0, l); /* torch 2.11 */
      tr_close(&c);
    }
}

/* ---- instance_norm (float16) and batch norm statistics ------------------------------ */

static alloy_node *build_inorm(tr_case *c, const void *p) {
  (void)p;
  static const double xv[6] = {-0.1759033203125, 0.227783203125, -2.921875,
                               -0.1700439453125, -1.49609375,     -0.94140625};
  static const double wv[1] = {2.828125}, bv[1] = {-1.068359375};
  static uint16_t x[6], w[1], b[1];
  fill_f16(x, xv, 6), fill_f16(w, wv, 1), fill_f16(b, bv, 1);
  static const int64_t shape[3] = {1, 1, 6};
  alloy_arg args[9] = {tr_input(c, ALLOY_F16, shape, 3, x), tr_input1(c, ALLOY_F16, 1, w),
                       tr_input1(c, ALLOY_F16, 1, b), alloy_arg_none(), alloy_arg_none(),
                       alloy_arg_bool(true), alloy_arg_float(0.1), alloy_arg_float(1e-5),
                       alloy_arg_bool(false)};
  return node(c, "aten.instance_norm.default", args, 9);
}

/* PyTorch runs instance_norm as a batch norm of one sample of N * C
 * channels, whose kernel rounds the statistics to float16 (0.89453125,
 * where the opmath form gives 0.8935546875). */
TEST(instance_norm_float16_as_a_batch_norm) {
  static const double want[6] = {0.89453125, 1.96875, -6.41796875, 0.91015625, -2.62109375,
                                 -1.1435546875}; /* torch 2.11 */
  for (int l = 0; l < TR_NLEVELS; l++) {
    tr_case c;
    if (tr_run_built(&c, build_inorm, NULL, tr_levels[l]))
      for (int i = 0; i < 6; i++) CHECK_NEAR(tr_out_f(&c.out[0], i), want[i], 0, l);
    tr_close(&c);
  }
}

/* ---- mse_loss: the difference rounded first ---------------------------------------- */

static alloy_node *build_mse(tr_case *c, const void *p) {
  (void)p;
  static const double av[1] = {-2.287109375}, bv[1] = {2.41015625};
  static uint16_t a[1], b[1];
  fill_f16(a, av, 1), fill_f16(b, bv, 1);
  alloy_arg args[3] = {tr_input1(c, ALLOY_F16, 1, a), tr_input1(c, ALLOY_F16, 1, b),
                       alloy_arg_int(0)};
  return node(c, "aten.mse_loss.default", args, 3);
}

/* float16: a - b rounds to -4.6953125, whose square is 22.046875 (the
 * unrounded difference would give 22.0625). */
TEST(mse_loss_rounds_the_difference) {
  for (int l = 0; l < TR_NLEVELS; l++) {
    tr_case c;
    if (tr_run_built(&c, build_mse, NULL, tr_levels[l]))
      CHECK_NEAR(tr_out_f(&c.out[0], 0), 22.046875, 0, l); /* torch 2.11 */
    tr_close(&c);
  }
}
