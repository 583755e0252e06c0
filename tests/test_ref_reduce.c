/*
 * tests/test_ref_reduce.c: the reference backend's reduce-family kernels on
 * what the golden corpus does not hold: the reduction prims (no golden
 * cases at all), the ATen overloads without samples (var.dim,
 * log_softmax.int, unique_consecutive over a dim), and the promises the
 * runner cannot see through ties (first occurrence for argmax and max.dim,
 * stable descending sort with NaN first, cummax taking the last of equal
 * values, and NaN in the p-norms). Each test builds a one-node graph with the runtime API, runs it
 * on "ref" and compares with values worked out by hand in the comments.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testref.h"

/* Doubles of any float dtype the tests use (f32, f64); NaN matches NaN. */
static bool values_are(const alloy_host_tensor *h, const double *want, int n, double tol) {
  for (int i = 0; i < n; i++) {
    double got = h->dtype == ALLOY_F64 ? ((const double *)h->data)[i] : ((const float *)h->data)[i];
    if (isnan(want[i]) ? !isnan(got) : !(fabs(got - want[i]) <= tol)) {
      harness_fail(__FILE__, __LINE__, "element %d: got %g, expected %g", i, got, want[i]);
      return false;
    }
  }
  return true;
}

/* x = [[0, 1, 2], [3, 4, 5]] as float32 */
static float mat23[6] = {0, 1, 2, 3, 4, 5};
static const int64_t shape23[2] = {2, 3};

TEST(ref_reduce_prim_sum_dims) {
  /* dims [1]: row sums [3, 12]; no keepdim in prims */
  tr_case t;
  REQUIRE(tr_open(&t));
  alloy_arg l[1];
  alloy_arg args[2] = {tr_input(&t, ALLOY_F32, shape23, 2, mat23),
                       tr_ints(l, 1, (int64_t[]){1})};
  if (tr_run(&t, "prims.sum.default", args, 2)) {
    CHECK(tr_shape_is(&t.out[0], 1, (int64_t[]){2}));
    CHECK(values_are(&t.out[0], (double[]){3, 12}, 2, 0));
  }
  tr_close(&t);

  /* dims None: everything, 15; output_dtype float64 */
  REQUIRE(tr_open(&t));
  alloy_arg a2[2] = {tr_input(&t, ALLOY_F32, shape23, 2, mat23), alloy_arg_none()};
  const char *kwn[1] = {"output_dtype"};
  alloy_arg kw[1] = {alloy_arg_dtype(ALLOY_F64)};
  if (tr_run_kw(&t, "prims.sum.default", a2, 2, kwn, kw, 1)) {
    CHECK_INT(t.out[0].rank, 0);
    CHECK_INT(t.out[0].dtype, ALLOY_F64);
    CHECK(values_are(&t.out[0], (double[]){15}, 1, 0));
  }
  tr_close(&t);

  /* dims []: nothing reduced, unlike aten's dim=[] */
  REQUIRE(tr_open(&t));
  alloy_arg a3[2] = {tr_input(&t, ALLOY_F32, shape23, 2, mat23), alloy_arg_list(NULL, 0)};
  if (tr_run(&t, "prims.sum.default", a3, 2)) {
    CHECK(tr_shape_is(&t.out[0], 2, shape23));
    CHECK(values_are(&t.out[0], (double[]){0, 1, 2, 3, 4, 5}, 6, 0));
  }
  tr_close(&t);
}

TEST(ref_reduce_prim_prod_wraps) {
  /* int64 [[1, 2, 3], [4, 5, 6]] over dims [0]: [4, 10, 18];
   * [2^62, 4, 3]: 2^64 wraps to 0, times 3 is 0 */
  tr_case t;
  REQUIRE(tr_open(&t));
  int64_t x[6] = {1, 2, 3, 4, 5, 6};
  alloy_arg l[1];
  alloy_arg args[2] = {tr_input(&t, ALLOY_I64, shape23, 2, x), tr_ints(l, 1, (int64_t[]){0})};
  if (tr_run(&t, "prims.prod.default", args, 2)) {
    CHECK_INT(t.out[0].dtype, ALLOY_I64);
    CHECK(tr_longs_are(&t.out[0], (int64_t[]){4, 10, 18}, 3));
  }
  tr_close(&t);

  REQUIRE(tr_open(&t));
  int64_t big[3] = {(int64_t)1 << 62, 4, 3};
  alloy_arg a2[2] = {tr_input(&t, ALLOY_I64, (int64_t[]){3}, 1, big), alloy_arg_none()};
  if (tr_run(&t, "prims.prod.default", a2, 2)) CHECK(tr_longs_are(&t.out[0], (int64_t[]){0}, 1));
  tr_close(&t);
}

TEST(ref_reduce_prim_amax_amin) {
  /* [[1, 5], [7, 2]] over dims [1]: amax [5, 7], amin [1, 2] */
  static float m[4] = {1, 5, 7, 2};
  static const char *const ops[2] = {"prims.amax.default", "prims.amin.default"};
  static const double want[2][2] = {{5, 7}, {1, 2}};
  for (int k = 0; k < 2; k++) {
    tr_case t;
    REQUIRE(tr_open(&t));
    alloy_arg l[1];
    alloy_arg args[2] = {tr_input(&t, ALLOY_F32, (int64_t[]){2, 2}, 2, m),
                         tr_ints(l, 1, (int64_t[]){1})};
    if (tr_run(&t, ops[k], args, 2)) CHECK(values_are(&t.out[0], want[k], 2, 0));
    tr_close(&t);
  }
  /* a NaN propagates through both: [1, NaN, 3] */
  static float withnan[3] = {1, NAN, 3};
  for (int k = 0; k < 2; k++) {
    tr_case t;
    REQUIRE(tr_open(&t));
    alloy_arg args[2] = {tr_input(&t, ALLOY_F32, (int64_t[]){3}, 1, withnan), alloy_arg_none()};
    if (tr_run(&t, ops[k], args, 2)) CHECK(values_are(&t.out[0], (double[]){NAN}, 1, 0));
    tr_close(&t);
  }
}

TEST(ref_reduce_prim_xor_sum) {
  /* [[1, 2], [4, 8]] over dims [0]: [1^4, 2^8] = [5, 10]; over everything
   * 1^2^4^8 = 15; [5, 3, 6]: 5^3 = 6, 6^6 = 0 */
  tr_case t;
  REQUIRE(tr_open(&t));
  int64_t x[4] = {1, 2, 4, 8};
  alloy_arg l[1];
  alloy_arg args[2] = {tr_input(&t, ALLOY_I64, (int64_t[]){2, 2}, 2, x),
                       tr_ints(l, 1, (int64_t[]){0})};
  if (tr_run(&t, "prims.xor_sum.default", args, 2))
    CHECK(tr_longs_are(&t.out[0], (int64_t[]){5, 10}, 2));
  tr_close(&t);

  REQUIRE(tr_open(&t));
  alloy_arg a2[2] = {tr_input(&t, ALLOY_I64, (int64_t[]){2, 2}, 2, x), alloy_arg_none()};
  if (tr_run(&t, "prims.xor_sum.default", a2, 2)) CHECK(tr_longs_are(&t.out[0], (int64_t[]){15}, 1));
  tr_close(&t);

  REQUIRE(tr_open(&t));
  int64_t y[3] = {5, 3, 6};
  alloy_arg a3[2] = {tr_input(&t, ALLOY_I64, (int64_t[]){3}, 1, y), alloy_arg_none()};
  if (tr_run(&t, "prims.xor_sum.default", a3, 2)) CHECK(tr_longs_are(&t.out[0], (int64_t[]){0}, 1));
  tr_close(&t);
}

TEST(ref_reduce_prim_var) {
  /* [1, 2, 3, 4]: mean 2.5, squared deviations 2.25 + 0.25 + 0.25 + 2.25
   * = 5; correction 1: 5/3, correction 0: 1.25 */
  static float x[4] = {1, 2, 3, 4};
  static const double corr[2] = {1, 0}, want[2] = {5.0 / 3.0, 1.25};
  for (int k = 0; k < 2; k++) {
    tr_case t;
    REQUIRE(tr_open(&t));
    alloy_arg args[3] = {tr_input(&t, ALLOY_F32, (int64_t[]){4}, 1, x), alloy_arg_none(),
                         alloy_arg_float(corr[k])};
    if (tr_run(&t, "prims.var.default", args, 3)) {
      CHECK_INT(t.out[0].dtype, ALLOY_F32);
      CHECK(values_are(&t.out[0], &want[k], 1, 1e-6));
    }
    tr_close(&t);
  }
  /* [[1, 3], [2, 6]] over dims [1], correction 0: rows 1 and 4 */
  tr_case t;
  REQUIRE(tr_open(&t));
  float m[4] = {1, 3, 2, 6};
  alloy_arg l[1];
  alloy_arg args[3] = {tr_input(&t, ALLOY_F32, (int64_t[]){2, 2}, 2, m),
                       tr_ints(l, 1, (int64_t[]){1}), alloy_arg_float(0)};
  if (tr_run(&t, "prims.var.default", args, 3))
    CHECK(values_are(&t.out[0], (double[]){1, 4}, 2, 0));
  tr_close(&t);
}

TEST(ref_reduce_var_dim_unbiased) {
  /* var.dim over dim 1 of mat23, rows [0, 1, 2] and [3, 4, 5]: squared
   * deviations 2; unbiased: 2/2 = 1, biased: 2/3 */
  static const bool unbiased[2] = {true, false};
  static const double want[2] = {1.0, 2.0 / 3.0};
  for (int k = 0; k < 2; k++) {
    tr_case t;
    REQUIRE(tr_open(&t));
    alloy_arg l[1];
    alloy_arg args[3] = {tr_input(&t, ALLOY_F32, shape23, 2, mat23),
                         tr_ints(l, 1, (int64_t[]){1}), alloy_arg_bool(unbiased[k])};
    if (tr_run(&t, "aten.var.dim", args, 3))
      CHECK(values_are(&t.out[0], (double[]){want[k], want[k]}, 2, 1e-6));
    tr_close(&t);
  }
}

TEST(ref_reduce_log_softmax_int_dtype) {
  /* log_softmax.int of int64 [0, 1] with dtype float64: the input becomes
   * float64 first; log(1 + e) = 1.3132616875182228 */
  tr_case t;
  REQUIRE(tr_open(&t));
  int64_t x[2] = {0, 1};
  alloy_arg args[3] = {tr_input(&t, ALLOY_I64, (int64_t[]){2}, 1, x), alloy_arg_int(0),
                       alloy_arg_dtype(ALLOY_F64)};
  if (tr_run(&t, "aten.log_softmax.int", args, 3)) {
    CHECK_INT(t.out[0].dtype, ALLOY_F64);
    double l = 1.3132616875182228;
    CHECK(values_are(&t.out[0], (double[]){-l, 1 - l}, 2, 1e-15));
  }
  tr_close(&t);
}

TEST(ref_reduce_first_occurrence) {
  /* [3, 7, 7, NaN, NaN]: argmax is the first NaN (3); max.dim's value NaN
   * and index 3; on [3, 7, 7] argmax is the first 7 (1), argmin 0 */
  tr_case t;
  REQUIRE(tr_open(&t));
  float x[5] = {3, 7, 7, NAN, NAN};
  alloy_arg args[1] = {tr_input(&t, ALLOY_F32, (int64_t[]){5}, 1, x)};
  if (tr_run(&t, "aten.argmax.default", args, 1)) CHECK(tr_longs_are(&t.out[0], (int64_t[]){3}, 1));
  tr_close(&t);

  REQUIRE(tr_open(&t));
  alloy_arg a2[2] = {tr_input(&t, ALLOY_F32, (int64_t[]){5}, 1, x), alloy_arg_int(0)};
  if (tr_run(&t, "aten.max.dim", a2, 2)) {
    CHECK(values_are(&t.out[0], (double[]){NAN}, 1, 0));
    CHECK(tr_longs_are(&t.out[1], (int64_t[]){3}, 1));
  }
  tr_close(&t);

  static const char *const ops[2] = {"aten.argmax.default", "aten.argmin.default"};
  static const int64_t want[2] = {1, 0};
  for (int k = 0; k < 2; k++) {
    REQUIRE(tr_open(&t));
    alloy_arg a3[1] = {tr_input(&t, ALLOY_F32, (int64_t[]){3}, 1, x)};
    if (tr_run(&t, ops[k], a3, 1)) CHECK(tr_longs_are(&t.out[0], &want[k], 1));
    tr_close(&t);
  }
}

TEST(ref_reduce_sort_stable_descending) {
  /* sort.stable descending of [2, NaN, 5, 2, 5]: NaN first, then the 5s
   * and the 2s each in their original order: indices [1, 2, 4, 0, 3] */
  tr_case t;
  REQUIRE(tr_open(&t));
  float x[5] = {2, NAN, 5, 2, 5};
  alloy_arg args[1] = {tr_input(&t, ALLOY_F32, (int64_t[]){5}, 1, x)};
  const char *kwn[2] = {"stable", "descending"};
  alloy_arg kw[2] = {alloy_arg_bool(true), alloy_arg_bool(true)};
  if (tr_run_kw(&t, "aten.sort.stable", args, 1, kwn, kw, 2)) {
    CHECK(values_are(&t.out[0], (double[]){NAN, 5, 5, 2, 2}, 5, 0));
    CHECK(tr_longs_are(&t.out[1], (int64_t[]){1, 2, 4, 0, 3}, 5));
  }
  tr_close(&t);
}

TEST(ref_reduce_cummax_takes_last_equal) {
  /* cummax of [1, 3, 3, 2, NaN, 4]: values [1, 3, 3, 3, NaN, NaN], indices
   * [0, 1, 2, 2, 4, 4] (an equal value takes over, a NaN sticks) */
  tr_case t;
  REQUIRE(tr_open(&t));
  float x[6] = {1, 3, 3, 2, NAN, 4};
  alloy_arg args[2] = {tr_input(&t, ALLOY_F32, (int64_t[]){6}, 1, x), alloy_arg_int(0)};
  if (tr_run(&t, "aten.cummax.default", args, 2)) {
    CHECK(values_are(&t.out[0], (double[]){1, 3, 3, 3, NAN, NAN}, 6, 0));
    CHECK(tr_longs_are(&t.out[1], (int64_t[]){0, 1, 2, 2, 4, 4}, 6));
  }
  tr_close(&t);
}

TEST(ref_reduce_unique_consecutive_dim) {
  /* unique_consecutive over dim 1 of [[1, 1, 2, 1], [3, 3, 4, 3]]: columns
   * 0 and 1 are equal, then 2, then 3: values [[1, 2, 1], [3, 4, 3]],
   * inverse [0, 0, 1, 2], counts [2, 1, 1] */
  tr_case t;
  REQUIRE(tr_open(&t));
  int64_t x[8] = {1, 1, 2, 1, 3, 3, 4, 3};
  alloy_arg args[4] = {tr_input(&t, ALLOY_I64, (int64_t[]){2, 4}, 2, x), alloy_arg_bool(true),
                       alloy_arg_bool(true), alloy_arg_int(1)};
  if (tr_run(&t, "aten.unique_consecutive.default", args, 4)) {
    CHECK(tr_shape_is(&t.out[0], 2, (int64_t[]){2, 3}));
    CHECK(tr_longs_are(&t.out[0], (int64_t[]){1, 2, 1, 3, 4, 3}, 6));
    CHECK(tr_longs_are(&t.out[1], (int64_t[]){0, 0, 1, 2}, 4));
    CHECK(tr_longs_are(&t.out[2], (int64_t[]){2, 1, 1}, 3));
  }
  tr_close(&t);
}

TEST(ref_reduce_vector_norm_nan_as_pytorch) {
  /* linalg_vector_norm of float32 [NaN, 0, 3] over dim 0, as PyTorch's norm
   * reductions: ord 0 counts NaN as nonzero (NaN != 0), 2; ord 2 and inf
   * are NaN; ord -inf is NaN too (the NaN wins over the 0) */
  static const double ord[4] = {0, 2, INFINITY, -INFINITY};
  static const double want[4] = {2, NAN, NAN, NAN};
  float x[3] = {NAN, 0, 3};
  for (int k = 0; k < 4; k++) {
    tr_case t;
    REQUIRE(tr_open(&t));
    alloy_arg l[1];
    alloy_arg args[3] = {tr_input(&t, ALLOY_F32, (int64_t[]){3}, 1, x), alloy_arg_float(ord[k]),
                         tr_ints(l, 1, (int64_t[]){0})};
    if (tr_run(&t, "aten.linalg_vector_norm.default", args, 3))
      CHECK(values_are(&t.out[0], &want[k], 1, 0));
    tr_close(&t);
  }
}
