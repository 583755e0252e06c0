/*
 * tests/test_ref_audit_misc.c: ops outside the nn family where the
 * reference kernels (and the decompositions that must agree with them)
 * were found apart from PyTorch 2.11's CPU kernels by rerunning the
 * generated samples in torch: gcd/lcm at the most negative integer, prod's
 * and logsumexp's float16 steps, scatter's float32 sums, var_mean's
 * Welford mean, the igamma/I0/I1/zeta edges, float32 Bessel phases,
 * ldexp's rounded power, and the linalg factors LAPACK leaves (Cholesky's
 * failing column, slogdet with a NaN pivot, integer lu_unpack, QR of a
 * -0 column). Each case runs one op on "ref" whole and decomposed to Core
 * ATen and to prims, against values torch 2.11 computed (as literals).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "alloy/runtime.h"
#include "testref.h"

/* One op on up to three inputs (2-D at most), then an optional int arg
 * (dim) and an optional keyword correction. */
typedef struct spec {
  const char *op;
  int nin;
  alloy_dtype dt[3];
  int rank[3];
  int64_t shape[3][2];
  const void *data[3];
  bool has_dim;
  int64_t dim;
  bool correction0;
  bool dim_list; /* dim as a one-element list */
  int dim_pos;   /* 0: dim after the inputs, else before input dim_pos */
} spec;

/* Builds s on c and runs it decomposed to level, all outputs in c->out. */
static bool run_at(tr_case *c, const spec *s, alloy_decompose_level level) {
  if (!tr_open(c)) return false;
  alloy_arg args[4];
  int n = 0;
  alloy_arg item[1];
  for (int k = 0; k < s->nin; k++) {
    if (s->has_dim && k && s->dim_pos == k) args[n++] = alloy_arg_int(s->dim);
    args[n++] = tr_input(c, s->dt[k], s->shape[k], s->rank[k], (void *)s->data[k]);
  }
  if (s->has_dim && !s->dim_pos) args[n++] = s->dim_list ? tr_ints(item, 1, &s->dim) : alloy_arg_int(s->dim);
  static const char *const kwn[1] = {"correction"};
  alloy_arg kw[1] = {alloy_arg_int(0)};
  alloy_node *nd = tr_node(c, s->op, args, n, s->correction0 ? kwn : NULL, s->correction0 ? kw : NULL,
                           s->correction0 ? 1 : 0);
  if (!nd) return false;
  alloy_value *outs[TR_MAX_OUT];
  int nout = alloy_node_num_outputs(nd);
  for (int k = 0; k < nout; k++) outs[k] = alloy_node_output(nd, k);
  return tr_run_level(c, outs, nout, level, 0);
}

/* Within rel of want (NaN for NaN, infinities exactly). */
static bool near(double got, double want, double rel) {
  if (isnan(want)) return isnan(got);
  if (isinf(want)) return got == want;
  return fabs(got - want) <= rel * fabs(want) + 1e-12;
}

/* Runs s at every level and checks output `out`'s first n values. */
static void check_levels(const spec *s, int out, const double *want, int n, double rel, int line) {
  for (int l = 0; l < TR_NLEVELS; l++) {
    tr_case c;
    if (run_at(&c, s, tr_levels[l]))
      for (int i = 0; i < n; i++) {
        double g = tr_out_f(&c.out[out], i);
        if (!near(g, want[i], rel))
          harness_fail(__FILE__, line, "%s level %d output %d [%d]: got %.17g, want %.17g", s->op, l, out, i,
                       g, want[i]);
      }
    tr_close(&c);
  }
}

/* ---- integers ----------------------------------------------------------------------- */

/* PyTorch's calc_gcd takes abs() in the dtype, which leaves INT64_MIN
 * negative, and its Euclid then ends at -1; lcm's a / g * b wraps before
 * its abs. */
TEST(gcd_lcm_at_the_most_negative_int64) {
  static const int64_t a[2] = {-INT64_MAX, 6}, b[2] = {INT64_MIN, 4}, m[1] = {INT64_MAX}, e[1] = {8};
  spec g = {.op = "aten.gcd.default",
            .nin = 2,
            .dt = {ALLOY_I64, ALLOY_I64},
            .rank = {1, 1},
            .shape = {{2}, {2}},
            .data = {a, b}};
  static const double want_g[2] = {-1, 2}; /* torch 2.11 */
  check_levels(&g, 0, want_g, 2, 0, __LINE__);
  spec l = {.op = "aten.lcm.default",
            .nin = 2,
            .dt = {ALLOY_I64, ALLOY_I64},
            .rank = {1, 1},
            .shape = {{1}, {1}},
            .data = {m, e}};
  static const double want_l[1] = {8}; /* torch 2.11 */
  check_levels(&l, 0, want_l, 1, 0, __LINE__);
}

/* ---- reductions --------------------------------------------------------------------- */

/* prod multiplies in float16 step by step: -1.993 * -64992 overflows to
 * inf before the 0, and 1e-4 * 1e-4 underflows to 0 before the inf. */
TEST(prod_float16_rounds_each_step) {
  static const double v[9] = {-1.9931640625, 1e-4, 2.0, -64992.0, 1e-4, 3.0, 0.0, INFINITY, 0.5};
  uint16_t h[9];
  for (int i = 0; i < 9; i++) h[i] = alloy_f16_from_f32((float)v[i]);
  spec s = {.op = "aten.prod.dim_int",
            .nin = 1,
            .dt = {ALLOY_F16},
            .rank = {2},
            .shape = {{3, 3}},
            .data = {h},
            .has_dim = true,
            .dim = 0};
  static const double want[3] = {NAN, NAN, 3.0}; /* torch 2.11 */
  check_levels(&s, 0, want, 3, 0, __LINE__);
}

/* logsumexp rounds each of its steps (x - max, exp, sum, log, + max) to
 * float16: 0.05542, where rounding once gives 0.05557. */
TEST(logsumexp_float16_rounds_each_step) {
  static const double v[3] = {-1.28125, -0.3466796875, -2.625};
  uint16_t h[3];
  for (int i = 0; i < 3; i++) h[i] = alloy_f16_from_f32((float)v[i]);
  spec s = {.op = "aten.logsumexp.default",
            .nin = 1,
            .dt = {ALLOY_F16},
            .rank = {1},
            .shape = {{3}},
            .data = {h},
            .has_dim = true,
            .dim = 0,
            .dim_list = true};
  static const double want[1] = {0.055419921875}; /* torch 2.11 */
  check_levels(&s, 0, want, 1, 0, __LINE__);
}

/* scatter_add on float16 sums in a float32 copy of self, rounded once:
 * 2^-11 + 1 + 2^-11 is 1.00098 (float16 steps would give 1). */
TEST(scatter_add_float16_sums_in_float32) {
  uint16_t self[1] = {alloy_f16_from_f32(0.0f)}, src[3];
  static const float v[3] = {0x1p-11f, 1.0f, 0x1p-11f};
  for (int i = 0; i < 3; i++) src[i] = alloy_f16_from_f32(v[i]);
  static const int64_t index[3] = {0, 0, 0};
  spec s = {.op = "aten.scatter_add.default",
            .nin = 3,
            .dt = {ALLOY_F16, ALLOY_I64, ALLOY_F16},
            .rank = {1, 1, 1},
            .shape = {{1}, {3}, {3}},
            .data = {self, index, src},
            .has_dim = true,
            .dim = 0,
            .dim_pos = 1};
  static const double want[1] = {1.0009765625}; /* torch 2.11 */
  check_levels(&s, 0, want, 1, 0, __LINE__);
}

/* var_mean's mean is Welford's: NaN once an element follows an inf, inf
 * when the inf comes last. */
TEST(var_mean_mean_is_welfords) {
  static const double first[3] = {INFINITY, 1, 2}, last[3] = {1, 2, INFINITY};
  spec s = {.op = "aten.var_mean.correction",
            .nin = 1,
            .dt = {ALLOY_F64},
            .rank = {1},
            .shape = {{3}},
            .data = {first},
            .has_dim = false,
            .dim = 0,
            .correction0 = true};
  static const double nan1[1] = {NAN}, inf1[1] = {INFINITY}; /* torch 2.11 */
  check_levels(&s, 1, nan1, 1, 0, __LINE__);
  s.data[0] = last;
  check_levels(&s, 1, inf1, 1, 0, __LINE__);
  s.op = "aten.std_mean.correction";
  s.data[0] = first;
  check_levels(&s, 1, nan1, 1, 0, __LINE__);
}

/* ---- special functions -------------------------------------------------------------- */

/* igamma's edges come before any NaN check; I0 and I1 are NaN at +-inf;
 * zeta(inf, q) is inf for |q| < 1, 1 at q = 1, NaN beyond, zeta(s, inf)
 * NaN; ldexp's power of two rounds to float32 first (0 * inf). */
TEST(special_function_edges) {
  static const double nan1[1] = {NAN}, zero1[1] = {0}, inf1[1] = {INFINITY}, infs[2] = {INFINITY, -INFINITY};
  spec ig = {.op = "aten.igamma.default",
             .nin = 2,
             .dt = {ALLOY_F64, ALLOY_F64},
             .rank = {1, 1},
             .shape = {{1}, {1}},
             .data = {nan1, zero1}};
  static const double want_ig[1] = {0}, want_igc[1] = {1}, want_i[2] = {NAN, NAN}; /* torch 2.11 */
  check_levels(&ig, 0, want_ig, 1, 0, __LINE__);
  spec igc = {.op = "aten.igammac.default",
              .nin = 2,
              .dt = {ALLOY_F64, ALLOY_F64},
              .rank = {1, 1},
              .shape = {{1}, {1}},
              .data = {inf1, nan1}};
  check_levels(&igc, 0, want_igc, 1, 0, __LINE__);
  static const char *const bessel[4] = {"aten.i0.default", "aten.special_i1.default",
                                        "aten.special_modified_bessel_i0.default", "prims.bessel_i1.default"};
  for (int k = 0; k < 4; k++) {
    spec b = {.op = bessel[k], .nin = 1, .dt = {ALLOY_F64}, .rank = {1}, .shape = {{2}}, .data = {infs}};
    check_levels(&b, 0, want_i, 2, 0, __LINE__);
  }
  static const double zs[4] = {INFINITY, 1.5, INFINITY, INFINITY}, zq[4] = {0.5, INFINITY, 1.0, 2.0};
  static const double want_z[4] = {INFINITY, NAN, 1.0, NAN}; /* torch 2.11 */
  spec z = {.op = "aten.special_zeta.default",
            .nin = 2,
            .dt = {ALLOY_F64, ALLOY_F64},
            .rank = {1, 1},
            .shape = {{4}, {4}},
            .data = {zs, zq}};
  check_levels(&z, 0, want_z, 4, 0, __LINE__);
  static const uint8_t la[2] = {0, 1}, lb[2] = {254, 3};
  static const double want_l[2] = {NAN, 8.0}; /* torch 2.11 */
  spec l = {.op = "aten.ldexp.Tensor",
            .nin = 2,
            .dt = {ALLOY_U8, ALLOY_U8},
            .rank = {1, 1},
            .shape = {{2}, {2}},
            .data = {la, lb}};
  check_levels(&l, 0, want_l, 2, 0, __LINE__);
}

/* ---- linear algebra ----------------------------------------------------------------- */

/* At a failing column LAPACK's potrf leaves the non-positive pivot on the
 * diagonal and the input's entries after it. */
TEST(cholesky_ex_leaves_lapacks_failing_column) {
  static const double a[9] = {1, 2, 3, 2, 1, 4, 3, 4, 5};
  spec s = {.op = "aten.linalg_cholesky_ex.default",
            .nin = 1,
            .dt = {ALLOY_F64},
            .rank = {2},
            .shape = {{3, 3}},
            .data = {a}};
  static const double want[9] = {1, 0, 0, 2, -3, 0, 3, 4, 5}; /* torch 2.11 */
  check_levels(&s, 0, want, 9, 1e-15, __LINE__);
}

/* logabsdet is the plain sum of log|U_ii|: NaN with a NaN pivot. */
TEST(slogdet_nan_pivot_gives_nan_logabsdet) {
  static const double a[4] = {1, 0, 0, NAN};
  spec s = {.op = "aten._linalg_slogdet.default",
            .nin = 1,
            .dt = {ALLOY_F64},
            .rank = {2},
            .shape = {{2, 2}},
            .data = {a}};
  static const double sign[1] = {0}, logabs[1] = {NAN}; /* torch 2.11 */
  check_levels(&s, 0, sign, 1, 0, __LINE__);
  check_levels(&s, 1, logabs, 1, 0, __LINE__);
}

/* Integer LU_data's triangles are copied exactly, not through double. */
TEST(lu_unpack_int64_copies_exactly) {
  static const int64_t lu[4] = {INT64_MAX, 1, -INT64_MAX, 5};
  static const int32_t piv[2] = {1, 2};
  spec s = {.op = "aten.lu_unpack.default",
            .nin = 2,
            .dt = {ALLOY_I64, ALLOY_I32},
            .rank = {2, 1},
            .shape = {{2, 2}, {2}},
            .data = {lu, piv}};
  static const int64_t want_l[4] = {1, 0, -INT64_MAX, 1}, want_u[4] = {INT64_MAX, 1, 0, 5}; /* torch 2.11 */
  for (int l = 0; l < TR_NLEVELS; l++) {
    tr_case c;
    if (run_at(&c, &s, tr_levels[l])) {
      CHECK(tr_longs_are(&c.out[1], want_l, 4));
      CHECK(tr_longs_are(&c.out[2], want_u, 4));
    }
    tr_close(&c);
  }
}

/* LAPACK's larfg counts alpha = -0 as positive: beta = -norm. */
TEST(geqrf_negative_zero_alpha) {
  static const double a[4] = {-0.0, 1, 1, 2};
  spec s = {
      .op = "aten.geqrf.default", .nin = 1, .dt = {ALLOY_F64}, .rank = {2}, .shape = {{2, 2}}, .data = {a}};
  static const double want_a[4] = {-1, -2, 1, -1}, want_tau[2] = {1, 0}; /* torch 2.11 */
  check_levels(&s, 0, want_a, 4, 1e-15, __LINE__);
  check_levels(&s, 1, want_tau, 2, 1e-15, __LINE__);
  s.op = "aten.linalg_qr.default";
  static const double want_q[4] = {0, -1, -1, 0}, want_r[4] = {-1, -2, 0, -1}; /* torch 2.11 */
  check_levels(&s, 0, want_q, 4, 1e-15, __LINE__);
  check_levels(&s, 1, want_r, 4, 1e-15, __LINE__);
}

/* ---- fmod: PyTorch's scalar loop against its vectorized one -------------------------- */

/* cpu_kernel_vec runs each row in steps of 16 float32s (Sleef's fmod, NaN
 * once |a / b| overflows) and the rest by std::fmod, exact: 15 elements
 * are all exact, 17 are 16 NaN and one exact. */
TEST(fmod_vector_steps_and_scalar_tail) {
  float a[17], b[17];
  for (int i = 0; i < 17; i++) a[i] = 1.0f, b[i] = 1e-40f;
  static const int lens[2] = {15, 17};
  for (int k = 0; k < 2; k++) {
    spec s = {.op = "aten.fmod.Tensor",
              .nin = 2,
              .dt = {ALLOY_F32, ALLOY_F32},
              .rank = {1, 1},
              .shape = {{lens[k]}, {lens[k]}},
              .data = {a, b}};
    double want[17];
    for (int i = 0; i < lens[k]; i++) want[i] = k && i < 16 ? NAN : 8.449829739878647e-42; /* torch 2.11 */
    check_levels(&s, 0, want, lens[k], 1e-6, __LINE__);
  }
}

/* PyTorch's float32 J0 and J1 round their phase x - pi/4 (x - 3pi/4) to
 * float32: at an int32's -2^31 that is 2^31 itself. */
TEST(bessel_float32_rounds_its_phase) {
  static const int32_t x[1] = {INT32_MIN};
  static const char *const ops[2] = {"aten.special_bessel_j0.default", "aten.special_bessel_j1.default"};
  static const double want[2] = {4.094647920283023e-06, -4.094647920283023e-06}; /* torch 2.11 */
  for (int k = 0; k < 2; k++) {
    spec s = {.op = ops[k], .nin = 1, .dt = {ALLOY_I32}, .rank = {1}, .shape = {{1}}, .data = {x}};
    check_levels(&s, 0, &want[k], 1, 1e-5, __LINE__);
  }
}
