/*
 * tests/test_ref_pw.c: the reference backend's elementwise kernels on what
 * the golden corpus does not hold: the prims (no golden cases at all), the
 * ATen overloads without samples (pow.Scalar, div.Scalar_mode, fmod.Scalar,
 * the bitwise Scalar forms, gt.Scalar, relu_, __and__), and the edges the
 * samples never reach (integer division by zero, shifts by the width or
 * more, INT64_MIN, signed zeros, NaN). Each test builds a one-node graph
 * with the runtime API, runs it on "ref" and compares with values worked
 * out by hand (or, for the special functions, quoted from tables) in the
 * comments.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testref.h"

/* Output k has dtype dt and n elements equal to want (NaN matches NaN;
 * tol relative, for the special functions). */
static bool doubles_are(const alloy_host_tensor *h, alloy_dtype dt, const double *want, int n,
                        double tol) {
  if (h->dtype != dt || h->rank != 1 || h->sizes[0] != n) {
    harness_fail(__FILE__, __LINE__, "got dtype %s rank %d", alloy_dtype_name(h->dtype), (int)h->rank);
    return false;
  }
  for (int i = 0; i < n; i++) {
    double g = dt == ALLOY_F32 ? ((const float *)h->data)[i]
             : dt == ALLOY_F16 ? alloy_f32_from_f16(((const uint16_t *)h->data)[i])
                               : ((const double *)h->data)[i];
    bool ok = isnan(want[i]) ? isnan(g) : g == want[i] || fabs(g - want[i]) <= tol * fabs(want[i]);
    if (!ok) {
      harness_fail(__FILE__, __LINE__, "element %d: got %.17g, expected %.17g", i, g, want[i]);
      return false;
    }
  }
  return true;
}

static bool longs_are(const alloy_host_tensor *h, alloy_dtype dt, const int64_t *want, int n) {
  if (h->dtype != dt || h->rank != 1 || h->sizes[0] != n) {
    harness_fail(__FILE__, __LINE__, "got dtype %s rank %d", alloy_dtype_name(h->dtype), (int)h->rank);
    return false;
  }
  for (int i = 0; i < n; i++) {
    int64_t g = dt == ALLOY_I64 ? ((const int64_t *)h->data)[i]
              : dt == ALLOY_I32 ? ((const int32_t *)h->data)[i]
                                : ((const uint8_t *)h->data)[i];
    if (g != want[i]) {
      harness_fail(__FILE__, __LINE__, "element %d: got %lld, expected %lld", i, (long long)g,
                   (long long)want[i]);
      return false;
    }
  }
  return true;
}

/* op(a, b) on two float32 vectors of 4. */
static void check_binary_f32(const char *op, const float *a, const float *b, const double *want,
                             alloy_dtype out, double tol) {
  tr_case t;
  if (!tr_open(&t)) return;
  alloy_arg args[2] = {tr_input1(&t, ALLOY_F32, 4, (void *)a), tr_input1(&t, ALLOY_F32, 4, (void *)b)};
  if (tr_run(&t, op, args, 2)) {
    if (out == ALLOY_BOOL) {
      int64_t w[4];
      for (int i = 0; i < 4; i++) w[i] = (int64_t)want[i];
      if (!longs_are(&t.out[0], ALLOY_BOOL, w, 4)) printf("  in %s\n", op);
    } else if (!doubles_are(&t.out[0], out, want, 4, tol)) {
      printf("  in %s\n", op);
    }
  }
  tr_close(&t);
}

/* op(a, b) on two int64 vectors of 4. */
static void check_binary_i64(const char *op, const int64_t *a, const int64_t *b, const int64_t *want,
                             alloy_dtype out) {
  tr_case t;
  if (!tr_open(&t)) return;
  alloy_arg args[2] = {tr_input1(&t, ALLOY_I64, 4, (void *)a), tr_input1(&t, ALLOY_I64, 4, (void *)b)};
  if (tr_run(&t, op, args, 2) && !longs_are(&t.out[0], out, want, 4)) printf("  in %s\n", op);
  tr_close(&t);
}

/* op(a) on a float32 vector of 4. */
static void check_unary_f32(const char *op, const float *a, const double *want, alloy_dtype out,
                            double tol) {
  tr_case t;
  if (!tr_open(&t)) return;
  alloy_arg args[1] = {tr_input1(&t, ALLOY_F32, 4, (void *)a)};
  if (tr_run(&t, op, args, 1)) {
    if (out == ALLOY_BOOL) {
      int64_t w[4];
      for (int i = 0; i < 4; i++) w[i] = (int64_t)want[i];
      if (!longs_are(&t.out[0], ALLOY_BOOL, w, 4)) printf("  in %s\n", op);
    } else if (!doubles_are(&t.out[0], out, want, 4, tol)) {
      printf("  in %s\n", op);
    }
  }
  tr_close(&t);
}

/* op(a) on an int64 vector of 4. */
static void check_unary_i64(const char *op, const int64_t *a, const int64_t *want) {
  tr_case t;
  if (!tr_open(&t)) return;
  alloy_arg args[1] = {tr_input1(&t, ALLOY_I64, 4, (void *)a)};
  if (tr_run(&t, op, args, 1) && !longs_are(&t.out[0], ALLOY_I64, want, 4)) printf("  in %s\n", op);
  tr_close(&t);
}

TEST(ref_pw_prims_arithmetic) {
  static const float a[4] = {1.5f, -2, 3, 0.25f}, b[4] = {0.5f, 4, -1.5f, -0.125f};
  check_binary_f32("prims.add.default", a, b, (double[]){2, 2, 1.5, 0.125}, ALLOY_F32, 0);
  check_binary_f32("prims.sub.default", a, b, (double[]){1, -6, 4.5, 0.375}, ALLOY_F32, 0);
  check_binary_f32("prims.mul.default", a, b, (double[]){0.75, -8, -4.5, -0.03125}, ALLOY_F32, 0);
  check_binary_f32("prims.div.default", a, b, (double[]){3, -0.5, -2, -2}, ALLOY_F32, 0);
  /* pow: 1.5^0.5 = sqrt(1.5), (-2)^4 = 16, 3^-1.5 = 1/sqrt(27), 0.25^-0.125 = 2^0.25 */
  check_binary_f32("prims.pow.default", a, b,
                   (double[]){1.2247448713915889, 16, 0.19245008972987526, 1.189207115002721},
                   ALLOY_F32, 1e-6);
  /* fmod takes the dividend's sign, remainder the divisor's:
   * 7.5 fmod -2 = 1.5, 7.5 rem -2 = -0.5; -7.5: -1.5 and 0.5 */
  static const float n[4] = {7.5f, -7.5f, 7.5f, -7.5f}, d[4] = {-2, -2, 2, 2};
  check_binary_f32("prims.fmod.default", n, d, (double[]){1.5, -1.5, 1.5, -1.5}, ALLOY_F32, 0);
  check_binary_f32("prims.remainder.default", n, d, (double[]){-0.5, -1.5, 1.5, 0.5}, ALLOY_F32, 0);
  /* atan2(1, -1) = 3pi/4; hypot(3, 4) = 5 */
  static const float y[4] = {1, 3, 0, -1}, x[4] = {-1, 4, 1, 0};
  check_binary_f32("prims.atan2.default", y, x, (double[]){2.356194490192345, 0.6435011087932844, 0, -M_PI / 2},
                   ALLOY_F32, 1e-7);
  check_binary_f32("prims.hypot.default", y, x, (double[]){1.4142135623730951, 5, 1, 1}, ALLOY_F32, 1e-7);
}

TEST(ref_pw_prims_integer_arithmetic) {
  /* prims.div truncates integers; remainder floors (Python), fmod truncates (C) */
  static const int64_t n[4] = {7, -7, 7, -7}, d[4] = {2, 2, -2, -2};
  check_binary_i64("prims.div.default", n, d, (int64_t[]){3, -3, -3, 3}, ALLOY_I64);
  check_binary_i64("prims.remainder.default", n, d, (int64_t[]){1, 1, -1, -1}, ALLOY_I64);
  check_binary_i64("prims.fmod.default", n, d, (int64_t[]){1, -1, 1, -1}, ALLOY_I64);
  /* wrapping: INT64_MAX + 1 = INT64_MIN; INT64_MIN * -1 = INT64_MIN */
  static const int64_t big[4] = {INT64_MAX, INT64_MIN, 3, -4}, one[4] = {1, -1, 5, 6};
  check_binary_i64("prims.add.default", big, one, (int64_t[]){INT64_MIN, INT64_MAX, 8, 2}, ALLOY_I64);
  check_binary_i64("prims.mul.default", big, one, (int64_t[]){INT64_MAX, INT64_MIN, 15, -24}, ALLOY_I64);
  /* integer pow: 2^10, 3^-1 = 0, (-1)^-3 = -1, 1^-5 = 1 */
  static const int64_t base[4] = {2, 3, -1, 1}, ex[4] = {10, -1, -3, -5};
  check_binary_i64("prims.pow.default", base, ex, (int64_t[]){1024, 0, -1, 1}, ALLOY_I64);
  /* gcd is non-negative; gcd(0, 0) = 0 */
  static const int64_t ga[4] = {12, -4, 0, 17}, gb[4] = {18, 6, 0, -5};
  check_binary_i64("prims.gcd.default", ga, gb, (int64_t[]){6, 2, 0, 1}, ALLOY_I64);
  /* maximum / minimum of integers */
  check_binary_i64("prims.maximum.default", ga, gb, (int64_t[]){18, 6, 0, 17}, ALLOY_I64);
  check_binary_i64("prims.minimum.default", ga, gb, (int64_t[]){12, -4, 0, -5}, ALLOY_I64);
}

TEST(ref_pw_integer_division_by_zero_fails) {
  /* PyTorch raises ZeroDivisionError for integer div (trunc and floor),
   * remainder and fmod by zero */
  static const char *ops[] = {"prims.div.default", "prims.remainder.default", "prims.fmod.default",
                              "aten.remainder.Tensor", "aten.floor_divide.default"};
  static const int64_t a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 1, 1};
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    tr_case t;
    REQUIRE(tr_open(&t));
    alloy_arg args[2] = {tr_input1(&t, ALLOY_I64, 4, (void *)a), tr_input1(&t, ALLOY_I64, 4, (void *)b)};
    alloy_error *e = tr_try(&t, ops[k], args, 2, NULL, NULL, 0);
    if (!e) harness_fail(__FILE__, __LINE__, "%s by zero succeeded", ops[k]);
    alloy_error_free(e);
    tr_close(&t);
  }
  /* floats divide to inf/NaN instead: 1 / 0 = inf, fmod(1, 0) = NaN */
  static const float x[4] = {1, -1, 0, 2}, z[4] = {0, 0, 0, 0};
  check_binary_f32("prims.div.default", x, z, (double[]){INFINITY, -INFINITY, NAN, INFINITY}, ALLOY_F32, 0);
  check_binary_f32("prims.fmod.default", x, z, (double[]){NAN, NAN, NAN, NAN}, ALLOY_F32, 0);
}

TEST(ref_pw_prims_bits) {
  /* shifts by a negative amount or by 64 or more: 0 to the left, the sign
   * to the right */
  static const int64_t a[4] = {1, -8, 5, 3}, l[4] = {3, 1, 64, -1};
  check_binary_i64("prims.shift_left.default", a, l, (int64_t[]){8, -16, 0, 0}, ALLOY_I64);
  static const int64_t r[4] = {-8, 9, -1, 5}, rs[4] = {1, 2, 64, -1};
  check_binary_i64("prims.shift_right_arithmetic.default", r, rs, (int64_t[]){-4, 2, -1, 0}, ALLOY_I64);
  static const int64_t x[4] = {12, 10, -1, 0}, y[4] = {10, 6, 5, -1};
  check_binary_i64("prims.bitwise_and.default", x, y, (int64_t[]){8, 2, 5, 0}, ALLOY_I64);
  check_binary_i64("prims.bitwise_or.default", x, y, (int64_t[]){14, 14, -1, -1}, ALLOY_I64);
  check_binary_i64("prims.bitwise_xor.default", x, y, (int64_t[]){6, 12, -6, -1}, ALLOY_I64);
  check_unary_i64("prims.bitwise_not.default", x, (int64_t[]){-13, -11, 0, -1});
  /* the width is the dtype's: an int32 shifted by 32 is 0 */
  tr_case t;
  REQUIRE(tr_open(&t));
  static const int32_t v[4] = {1, 1, -2, 7}, s[4] = {31, 32, 31, 40};
  alloy_arg args[2] = {tr_input1(&t, ALLOY_I32, 4, (void *)v), tr_input1(&t, ALLOY_I32, 4, (void *)s)};
  /* 1 << 31 wraps to INT32_MIN; -2 >> 31 = -1; 7 >> 40 = 0 */
  if (tr_run(&t, "prims.shift_left.default", args, 2))
    CHECK(longs_are(&t.out[0], ALLOY_I32, (int64_t[]){INT32_MIN, 0, 0, 0}, 4));
  tr_close(&t);
  REQUIRE(tr_open(&t));
  alloy_arg args2[2] = {tr_input1(&t, ALLOY_I32, 4, (void *)v), tr_input1(&t, ALLOY_I32, 4, (void *)s)};
  if (tr_run(&t, "prims.shift_right_arithmetic.default", args2, 2))
    CHECK(longs_are(&t.out[0], ALLOY_I32, (int64_t[]){0, 0, -1, 0}, 4));
  tr_close(&t);
  /* bitwise_not of bool is logical not */
  REQUIRE(tr_open(&t));
  static const uint8_t bits[4] = {1, 0, 1, 0};
  alloy_arg b1[1] = {tr_input1(&t, ALLOY_BOOL, 4, (void *)bits)};
  if (tr_run(&t, "prims.bitwise_not.default", b1, 1))
    CHECK(longs_are(&t.out[0], ALLOY_BOOL, (int64_t[]){0, 1, 0, 1}, 4));
  tr_close(&t);
}

TEST(ref_pw_prims_unary_integer) {
  /* abs and neg of INT64_MIN wrap to itself */
  static const int64_t a[4] = {INT64_MIN, -5, 0, 7};
  check_unary_i64("prims.abs.default", a, (int64_t[]){INT64_MIN, 5, 0, 7});
  check_unary_i64("prims.neg.default", a, (int64_t[]){INT64_MIN, 5, 0, -7});
  check_unary_i64("prims.sign.default", a, (int64_t[]){-1, -1, 0, 1});
  /* rounding an integer is the identity */
  check_unary_i64("prims.floor.default", a, a);
  check_unary_i64("prims.round.default", a, a);
}

TEST(ref_pw_prims_unary_float) {
  /* round half to even */
  static const float h[4] = {0.5f, 1.5f, 2.5f, -1.5f};
  check_unary_f32("prims.round.default", h, (double[]){0, 2, 2, -2}, ALLOY_F32, 0);
  check_unary_f32("prims.trunc.default", h, (double[]){0, 1, 2, -1}, ALLOY_F32, 0);
  check_unary_f32("prims.ceil.default", h, (double[]){1, 2, 3, -1}, ALLOY_F32, 0);
  check_unary_f32("prims.floor.default", h, (double[]){0, 1, 2, -2}, ALLOY_F32, 0);
  /* sign of NaN and of -0.0 is 0 (PyTorch: (0 < x) - (x < 0)); signbit
   * sees -0.0 */
  static const float s[4] = {NAN, -0.0f, -3, 2};
  check_unary_f32("prims.sign.default", s, (double[]){0, 0, -1, 1}, ALLOY_F32, 0);
  check_unary_f32("prims.signbit.default", s, (double[]){0, 1, 1, 0}, ALLOY_BOOL, 0);
  static const float f[4] = {INFINITY, -INFINITY, NAN, 1};
  check_unary_f32("prims.isfinite.default", f, (double[]){0, 0, 0, 1}, ALLOY_BOOL, 0);
  /* cbrt(27) = 3, cbrt(-8) = -2; sqrt(-0) = -0; rsqrt(4) = 0.5; 1/x */
  static const float c[4] = {27, -8, 0.125f, -0.0f};
  check_unary_f32("prims.cbrt.default", c, (double[]){3, -2, 0.5, -0.0}, ALLOY_F32, 1e-7);
  check_unary_f32("prims.reciprocal.default", c,
                  (double[]){1 / 27.0f, -0.125, 8, -INFINITY}, ALLOY_F32, 1e-7);
  static const float q[4] = {4, 0.25f, 1, 0};
  check_unary_f32("prims.rsqrt.default", q, (double[]){0.5, 2, 1, INFINITY}, ALLOY_F32, 0);
  check_unary_f32("prims.sqrt.default", q, (double[]){2, 0.5, 1, 0}, ALLOY_F32, 0);
  /* exp, log and friends at exact points */
  static const float e[4] = {0, 1, 3, -1};
  check_unary_f32("prims.exp2.default", e, (double[]){1, 2, 8, 0.5}, ALLOY_F32, 0);
  check_unary_f32("prims.exp.default", e, (double[]){1, M_E, 20.085536923187668, 1 / M_E}, ALLOY_F32, 1e-7);
  check_unary_f32("prims.expm1.default", e, (double[]){0, M_E - 1, 19.085536923187668, 1 / M_E - 1},
                  ALLOY_F32, 1e-7);
  static const float g[4] = {1, 8, 0.5f, 0};
  check_unary_f32("prims.log2.default", g, (double[]){0, 3, -1, -INFINITY}, ALLOY_F32, 0);
  check_unary_f32("prims.log.default", g, (double[]){0, 2.0794415416798357, -M_LN2, -INFINITY}, ALLOY_F32,
                  1e-7);
  check_unary_f32("prims.log1p.default", e, (double[]){0, M_LN2, 1.3862943611198906, -INFINITY}, ALLOY_F32,
                  1e-7);
  static const float t[4] = {100, 1, 0.001f, 10};
  check_unary_f32("prims.log10.default", t, (double[]){2, 0, -3, 1}, ALLOY_F32, 1e-7);
  /* trigonometry at 0 and 1: sin 1, cos 1, tan 1, asin 1 = pi/2 ... */
  static const float u[4] = {0, 1, 0.5f, -1};
  check_unary_f32("prims.sin.default", u, (double[]){0, 0.8414709848078965, 0.479425538604203, -0.8414709848078965},
                  ALLOY_F32, 1e-7);
  check_unary_f32("prims.cos.default", u, (double[]){1, 0.5403023058681398, 0.8775825618903728, 0.5403023058681398},
                  ALLOY_F32, 1e-7);
  check_unary_f32("prims.tan.default", u, (double[]){0, 1.5574077246549023, 0.5463024898437905, -1.5574077246549023},
                  ALLOY_F32, 1e-7);
  check_unary_f32("prims.asin.default", u, (double[]){0, M_PI / 2, M_PI / 6, -M_PI / 2}, ALLOY_F32, 1e-7);
  check_unary_f32("prims.acos.default", u, (double[]){M_PI / 2, 0, M_PI / 3, M_PI}, ALLOY_F32, 1e-7);
  check_unary_f32("prims.atan.default", u, (double[]){0, M_PI / 4, 0.4636476090008061, -M_PI / 4}, ALLOY_F32,
                  1e-7);
  check_unary_f32("prims.sinh.default", u, (double[]){0, 1.1752011936438014, 0.5210953054937474, -1.1752011936438014},
                  ALLOY_F32, 1e-7);
  check_unary_f32("prims.cosh.default", u, (double[]){1, 1.5430806348152437, 1.1276259652063807, 1.5430806348152437},
                  ALLOY_F32, 1e-7);
  check_unary_f32("prims.tanh.default", u, (double[]){0, 0.7615941559557649, 0.46211715726000974, -0.7615941559557649},
                  ALLOY_F32, 1e-7);
  check_unary_f32("prims.asinh.default", u, (double[]){0, 0.881373587019543, 0.48121182505960347, -0.881373587019543},
                  ALLOY_F32, 1e-7);
  check_unary_f32("prims.atanh.default", u, (double[]){0, INFINITY, 0.5493061443340549, -INFINITY}, ALLOY_F32,
                  1e-7);
  static const float w[4] = {1, 2, 10, 0.5f};
  check_unary_f32("prims.acosh.default", w, (double[]){0, 1.3169578969248166, 2.993222846126381, NAN},
                  ALLOY_F32, 1e-7);
  check_unary_f32("prims.neg.default", w, (double[]){-1, -2, -10, -0.5}, ALLOY_F32, 0);
  check_unary_f32("prims.abs.default", s, (double[]){NAN, 0, 3, 2}, ALLOY_F32, 0);
}

TEST(ref_pw_prims_special) {
  /* values from tables (A&S, DLMF): erf(0.5) = 0.5204998778130465,
   * erfc(0.5) = 0.4795001221869535, erf_inv(0.5) = 0.4769362762044699,
   * erfcx(1) = e erfc(1) = 0.42758357615580705, ndtri(0.975) = 1.959963984540054,
   * lgamma(0.5) = log(sqrt(pi)), digamma(1) = -gamma */
  static const float half[4] = {0.5f, 0.5f, 0.5f, 0.5f}, one[4] = {1, 1, 1, 1};
  check_unary_f32("prims.erf.default", half, (double[]){0.5204998778130465, 0.5204998778130465,
                  0.5204998778130465, 0.5204998778130465}, ALLOY_F32, 1e-7);
  check_unary_f32("prims.erfc.default", half, (double[]){0.4795001221869535, 0.4795001221869535,
                  0.4795001221869535, 0.4795001221869535}, ALLOY_F32, 1e-7);
  static const float ei[4] = {0.5f, -0.5f, 1, 0};
  check_unary_f32("prims.erf_inv.default", ei, (double[]){0.4769362762044699, -0.4769362762044699, INFINITY, 0},
                  ALLOY_F32, 1e-7);
  static const float ex[4] = {1, 0, -1, 30};
  /* erfcx(-1) = 2e - erfcx(1); erfcx(30) ~ 1/(30 sqrt(pi)) (1 - 1/1800) */
  check_unary_f32("prims.erfcx.default", ex, (double[]){0.42758357615580705, 1, 5.00898008076228, 0.018795888861416751},
                  ALLOY_F32, 1e-6);
  static const float p[4] = {0.975f, 0.5f, 0, 1};
  check_unary_f32("prims.ndtri.default", p, (double[]){1.959963984540054, 0, -INFINITY, INFINITY}, ALLOY_F32, 1e-6);
  static const float lg[4] = {0.5f, 1, 2, 3};
  check_unary_f32("prims.lgamma.default", lg, (double[]){0.5723649429247001, 0, 0, M_LN2}, ALLOY_F32, 1e-7);
  /* digamma(1) = -gamma, digamma(0.5) = -gamma - 2 ln 2, digamma(+0) = -inf */
  static const float dg[4] = {1, 0.5f, 0, 2};
  check_unary_f32("prims.digamma.default", dg,
                  (double[]){-0.5772156649015329, -1.9635100260214235, -INFINITY, 0.42278433509846713},
                  ALLOY_F32, 1e-6);
  /* Bessel functions at 1: I0 1.2660658777520082, I1 0.5651591039924851,
   * J0 0.7651976865579666, J1 0.44005058574493355 */
  check_unary_f32("prims.bessel_i0.default", one, (double[]){1.2660658777520082, 1.2660658777520082,
                  1.2660658777520082, 1.2660658777520082}, ALLOY_F32, 1e-7);
  check_unary_f32("prims.bessel_i0e.default", one, (double[]){0.46575960759364043, 0.46575960759364043,
                  0.46575960759364043, 0.46575960759364043}, ALLOY_F32, 1e-7);
  static const float b1[4] = {1, -1, 0, 1};
  check_unary_f32("prims.bessel_i1.default", b1, (double[]){0.5651591039924851, -0.5651591039924851, 0,
                  0.5651591039924851}, ALLOY_F32, 1e-7);
  check_unary_f32("prims.bessel_i1e.default", b1, (double[]){0.2079104153497085, -0.2079104153497085, 0,
                  0.2079104153497085}, ALLOY_F32, 1e-7);
  check_unary_f32("prims.bessel_j0.default", b1, (double[]){0.7651976865579666, 0.7651976865579666, 1,
                  0.7651976865579666}, ALLOY_F32, 1e-7);
  check_unary_f32("prims.bessel_j1.default", b1, (double[]){0.44005058574493355, -0.44005058574493355, 0,
                  0.44005058574493355}, ALLOY_F32, 1e-7);
  /* sin(x)/x: 1 at 0, sin 1 at 1, 0 at inf */
  static const float sj[4] = {0, 1, INFINITY, -1};
  check_unary_f32("prims.spherical_bessel_j0.default", sj, (double[]){1, 0.8414709848078965, 0, 0.8414709848078965},
                  ALLOY_F32, 1e-7);
  /* zeta(2, 1) = pi^2/6, zeta(2, 2) = pi^2/6 - 1, zeta(3, 1) = Apery's 1.2020569031595942;
   * zeta(1, q) = inf */
  static const float zs[4] = {2, 2, 3, 1}, zq[4] = {1, 2, 1, 1};
  check_binary_f32("prims.zeta.default", zs, zq,
                   (double[]){M_PI * M_PI / 6, M_PI * M_PI / 6 - 1, 1.2020569031595942, INFINITY}, ALLOY_F32, 1e-6);
  /* P(1, x) = 1 - e^-x; P(a, 0) = 0; Q = 1 - P */
  static const float ia[4] = {1, 1, 2, 3}, ix[4] = {1, 2, 0, INFINITY};
  check_binary_f32("prims.igamma.default", ia, ix, (double[]){0.6321205588285577, 0.8646647167633873, 0, 1},
                   ALLOY_F32, 1e-6);
  check_binary_f32("prims.igammac.default", ia, ix, (double[]){0.36787944117144233, 0.1353352832366127, 1, 0},
                   ALLOY_F32, 1e-6);
}

TEST(ref_pw_prims_compare_and_minmax) {
  static const float a[4] = {1, NAN, 2, -0.0f}, b[4] = {2, 1, NAN, 0.0f};
  check_binary_f32("prims.lt.default", a, b, (double[]){1, 0, 0, 0}, ALLOY_BOOL, 0);
  check_binary_f32("prims.le.default", a, b, (double[]){1, 0, 0, 1}, ALLOY_BOOL, 0);
  check_binary_f32("prims.eq.default", a, b, (double[]){0, 0, 0, 1}, ALLOY_BOOL, 0);
  check_binary_f32("prims.ne.default", a, b, (double[]){1, 1, 1, 0}, ALLOY_BOOL, 0);
  check_binary_f32("prims.gt.default", a, b, (double[]){0, 0, 0, 0}, ALLOY_BOOL, 0);
  check_binary_f32("prims.ge.default", a, b, (double[]){0, 0, 0, 1}, ALLOY_BOOL, 0);
  /* maximum/minimum propagate NaN, fmax/fmin ignore it */
  check_binary_f32("prims.maximum.default", a, b, (double[]){2, NAN, NAN, 0}, ALLOY_F32, 0);
  check_binary_f32("prims.minimum.default", a, b, (double[]){1, NAN, NAN, 0}, ALLOY_F32, 0);
  check_binary_f32("prims.fmax.default", a, b, (double[]){2, 1, 2, 0}, ALLOY_F32, 0);
  check_binary_f32("prims.fmin.default", a, b, (double[]){1, 1, 2, 0}, ALLOY_F32, 0);
}

TEST(ref_pw_prims_nextafter) {
  /* float32: 1 -> 1 + 2^-23 up, 1 - 2^-24 down; 0 -> smallest subnormal
   * with to's sign */
  static const float a[4] = {1, 1, 0, 2}, b[4] = {2, 0, -1, 2};
  check_binary_f32("prims.nextafter.default", a, b,
                   (double[]){1 + 0x1p-23, 1 - 0x1p-24, -0x1p-149, 2}, ALLOY_F32, 0);
  /* float16: 1 -> 1 + 2^-10; 0 -> -2^-24 */
  tr_case t;
  REQUIRE(tr_open(&t));
  uint16_t ha[4], hb[4];
  for (int i = 0; i < 4; i++) ha[i] = alloy_f16_from_f32(a[i]), hb[i] = alloy_f16_from_f32(b[i]);
  alloy_arg args[2] = {tr_input1(&t, ALLOY_F16, 4, ha), tr_input1(&t, ALLOY_F16, 4, hb)};
  if (tr_run(&t, "prims.nextafter.default", args, 2))
    CHECK(doubles_are(&t.out[0], ALLOY_F16, (double[]){1 + 0x1p-10, 1 - 0x1p-11, -0x1p-24, 2}, 4, 0));
  tr_close(&t);
}

TEST(ref_pw_prims_frexp_fill_imag) {
  /* 8 = 0.5 * 2^4, -3 = -0.75 * 2^2, 0 = 0 * 2^0, 1 = 0.5 * 2^1 */
  tr_case t;
  REQUIRE(tr_open(&t));
  static const float x[4] = {8, -3, 0, 1};
  alloy_arg args[1] = {tr_input1(&t, ALLOY_F32, 4, (void *)x)};
  if (tr_run(&t, "prims.frexp.default", args, 1)) {
    CHECK(doubles_are(&t.out[0], ALLOY_F32, (double[]){0.5, -0.75, 0, 0.5}, 4, 0));
    CHECK(longs_are(&t.out[1], ALLOY_I32, (int64_t[]){4, 2, 0, 1}, 4));
  }
  tr_close(&t);
  REQUIRE(tr_open(&t));
  alloy_arg fill[2] = {tr_input1(&t, ALLOY_F32, 4, (void *)x), alloy_arg_float(2.5)};
  if (tr_run(&t, "prims.fill.default", fill, 2))
    CHECK(doubles_are(&t.out[0], ALLOY_F32, (double[]){2.5, 2.5, 2.5, 2.5}, 4, 0));
  tr_close(&t);
  /* the imaginary part of a real tensor is refused, as in PyTorch */
  REQUIRE(tr_open(&t));
  alloy_arg im[1] = {tr_input1(&t, ALLOY_F32, 4, (void *)x)};
  alloy_error *e = tr_try(&t, "prims.imag.default", im, 1, NULL, NULL, 0);
  CHECK(e != NULL);
  alloy_error_free(e);
  tr_close(&t);
}

TEST(ref_pw_aten_without_samples) {
  /* pow.Scalar(2, [0, 1, 3, 10]) = [1, 2, 8, 1024] as int64 */
  tr_case t;
  REQUIRE(tr_open(&t));
  static const int64_t e[4] = {0, 1, 3, 10};
  alloy_arg args[2] = {alloy_arg_int(2), tr_input1(&t, ALLOY_I64, 4, (void *)e)};
  if (tr_run(&t, "aten.pow.Scalar", args, 2)) CHECK(longs_are(&t.out[0], ALLOY_I64, (int64_t[]){1, 2, 8, 1024}, 4));
  tr_close(&t);
  /* div.Scalar_mode floor: [-7, 7, -8, 8] // 2 -> [-4, 3, -4, 4]; trunc -> [-3, 3, -4, 4] */
  static const int64_t n[4] = {-7, 7, -8, 8};
  const char *kwn[1] = {"rounding_mode"};
  const char *modes[2] = {"floor", "trunc"};
  const int64_t want[2][4] = {{-4, 3, -4, 4}, {-3, 3, -4, 4}};
  for (int m = 0; m < 2; m++) {
    REQUIRE(tr_open(&t));
    alloy_arg a2[2] = {tr_input1(&t, ALLOY_I64, 4, (void *)n), alloy_arg_int(2)};
    alloy_arg kw[1] = {alloy_arg_str(modes[m])};
    if (tr_run_kw(&t, "aten.div.Scalar_mode", a2, 2, kwn, kw, 1)) CHECK(longs_are(&t.out[0], ALLOY_I64, want[m], 4));
    tr_close(&t);
  }
  /* floor division of floats: -7.5 // 2 = -4, 7.5 // -2 = -4, -0.5 // 2 = -1, 0 // -2 = -0 */
  static const float fa[4] = {-7.5f, 7.5f, -0.5f, 0}, fb[4] = {2, -2, 2, -2};
  check_binary_f32("aten.floor_divide.default", fa, fb, (double[]){-4, -4, -1, -0.0}, ALLOY_F32, 0);
  /* fmod.Scalar(int, 3): C's sign; bitwise_xor.Scalar; gt.Scalar; __and__ */
  static const int64_t v[4] = {-7, 7, 5, 0};
  REQUIRE(tr_open(&t));
  alloy_arg f1[2] = {tr_input1(&t, ALLOY_I64, 4, (void *)v), alloy_arg_int(3)};
  if (tr_run(&t, "aten.fmod.Scalar", f1, 2)) CHECK(longs_are(&t.out[0], ALLOY_I64, (int64_t[]){-1, 1, 2, 0}, 4));
  tr_close(&t);
  REQUIRE(tr_open(&t));
  alloy_arg x1[2] = {tr_input1(&t, ALLOY_I64, 4, (void *)v), alloy_arg_int(3)};
  if (tr_run(&t, "aten.bitwise_xor.Scalar", x1, 2))
    CHECK(longs_are(&t.out[0], ALLOY_I64, (int64_t[]){-6, 4, 6, 3}, 4));
  tr_close(&t);
  /* an int tensor compared with 4.5 compares in float: [F, T, T, F] */
  REQUIRE(tr_open(&t));
  alloy_arg g1[2] = {tr_input1(&t, ALLOY_I64, 4, (void *)v), alloy_arg_float(4.5)};
  if (tr_run(&t, "aten.gt.Scalar", g1, 2)) CHECK(longs_are(&t.out[0], ALLOY_BOOL, (int64_t[]){0, 1, 1, 0}, 4));
  tr_close(&t);
  check_binary_i64("aten.__and__.Tensor", v, e, (int64_t[]){0, 1, 1, 0}, ALLOY_I64);
  /* relu_ keeps NaN and zeroes negatives */
  static const float r[4] = {-1, NAN, 2, -0.5f};
  check_unary_f32("aten.relu_.default", r, (double[]){0, NAN, 2, 0}, ALLOY_F32, 0);
  /* clamp of an int tensor by float bounds promotes to float32 */
  REQUIRE(tr_open(&t));
  static const int64_t cl[4] = {0, 1, 2, 3};
  alloy_arg c1[3] = {tr_input1(&t, ALLOY_I64, 4, (void *)cl), alloy_arg_float(0.5), alloy_arg_float(2.5)};
  if (tr_run(&t, "aten.clamp.default", c1, 3)) CHECK(doubles_are(&t.out[0], ALLOY_F32, (double[]){0.5, 1, 2, 2.5}, 4, 0));
  tr_close(&t);
  /* integer pow with a negative Scalar exponent is refused */
  REQUIRE(tr_open(&t));
  alloy_arg p1[2] = {tr_input1(&t, ALLOY_I64, 4, (void *)v), alloy_arg_int(-1)};
  alloy_error *err = tr_try(&t, "aten.pow.Tensor_Scalar", p1, 2, NULL, NULL, 0);
  CHECK(err != NULL);
  alloy_error_free(err);
  tr_close(&t);
}
