/*
 * tests/test_ref_ldl.c: the reference backend's LDL kernels
 * (linalg_ldl_factor_ex, linalg_ldl_solve) beyond the golden corpus, whose
 * cases are all positive definite and so never pivot: a 2x2 pivot with a
 * row interchange worked out by hand (LAPACK's packed LD, its negative
 * pivots), the solve from it, singular inputs (info, check_errors), and
 * random indefinite batches checked by what the test derives on its own:
 * A rebuilt from LD and the pivots by LAPACK's definition of the factors,
 * and the residual of the solve.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testref.h"

/* ---- helpers (the graph under test: testref.h) ---------------------------*/

static double value_at(const alloy_host_tensor *h, int64_t i) {
  return h->dtype == ALLOY_F64 ? ((const double *)h->data)[i] : ((const float *)h->data)[i];
}

static bool values_are(const alloy_host_tensor *h, const double *want, int n, double tol) {
  if (tr_numel(h) != n) {
    harness_fail(__FILE__, __LINE__, "%lld elements, expected %d", (long long)tr_numel(h), n);
    return false;
  }
  for (int i = 0; i < n; i++)
    if (!(fabs(value_at(h, i) - want[i]) <= tol)) {
      harness_fail(__FILE__, __LINE__, "element %d: got %.9g, expected %.9g", i, value_at(h, i), want[i]);
      return false;
    }
  return true;
}

static bool ints_are(const alloy_host_tensor *h, const int32_t *want, int n) {
  if (h->dtype != ALLOY_I32 || tr_numel(h) != n) {
    harness_fail(__FILE__, __LINE__, "expected %d int32 elements", n);
    return false;
  }
  for (int i = 0; i < n; i++)
    if (((const int32_t *)h->data)[i] != want[i]) {
      harness_fail(__FILE__, __LINE__, "element %d: got %d, expected %d", i, ((const int32_t *)h->data)[i],
                   want[i]);
      return false;
    }
  return true;
}


enum { NMAX = 8 };

/* A from LAPACK's lower factorization by its definition (?sytrf's
 * documentation): A = L D L^T, L = P(1) L(1) P(2) L(2) ..., one P(k) L(k)
 * per block of D; P(k) swaps rows k+s-1 and |ipiv(k)| (s the block's
 * order), L(k) is the identity but for the block's columns below it,
 * which hold LD's entries there. Built inside out: M = D, then per block
 * from the last, M = L(k) M L(k)^T and M = P(k) M P(k)^T. */
static void ldl_rebuild(const double *ld, const int32_t *piv, int n, double *out) {
  double m[NMAX][NMAX] = {{0}}, t[NMAX][NMAX];
  int start[NMAX], size[NMAX], nblocks = 0;
  for (int k = 0; k < n;) {
    int s = piv[k] > 0 ? 1 : 2;
    for (int i = k; i < k + s; i++)
      for (int j = k; j < k + s; j++) m[i][j] = ld[(i > j ? i : j) * n + (i > j ? j : i)];
    start[nblocks] = k, size[nblocks++] = s;
    k += s;
  }
  for (int b = nblocks - 1; b >= 0; b--) {
    int k = start[b], s = size[b], p = abs(piv[k]) - 1, q = k + s - 1;
    double l[NMAX][NMAX] = {{0}};
    for (int i = 0; i < n; i++) l[i][i] = 1;
    for (int j = k; j < k + s; j++)
      for (int i = k + s; i < n; i++) l[i][j] = ld[i * n + j];
    for (int i = 0; i < n; i++) /* t = L M */
      for (int j = 0; j < n; j++) {
        t[i][j] = 0;
        for (int r = 0; r < n; r++) t[i][j] += l[i][r] * m[r][j];
      }
    for (int i = 0; i < n; i++) /* M = t L^T */
      for (int j = 0; j < n; j++) {
        m[i][j] = 0;
        for (int r = 0; r < n; r++) m[i][j] += t[i][r] * l[j][r];
      }
    for (int j = 0; j < n; j++) {
      double x = m[p][j];
      m[p][j] = m[q][j], m[q][j] = x;
    }
    for (int i = 0; i < n; i++) {
      double x = m[i][p];
      m[i][p] = m[i][q], m[i][q] = x;
    }
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) out[i * n + j] = m[i][j];
}

/* ---- by hand ---------------------------------------------------------------*/

/* A = [[0, 1, 2], [1, 4, 0], [2, 0, 0]]. Step 1: a11 = 0 and the column's
 * largest entry is 2, in row 3 (colmax 2); row 3's largest off-diagonal is
 * also 2 (rowmax), and a33 = 0 < alpha * 2: a 2x2 pivot on rows 1 and 3,
 * rows 2 and 3 swapped, pivots -3, -3. The permuted matrix is
 * [[0, 2, 1], [2, 0, 0], [1, 0, 4]]; D1 = [[0, 2], [2, 0]], whose inverse is
 * [[0, 1/2], [1/2, 0]], so row 3's multipliers are [1, 0] D1^-1 = [0, 1/2]
 * and the Schur complement is 4 - [1, 0] D1^-1 [1, 0]^T = 4: a 1x1 block,
 * pivot 3. LD = [[0, ., .], [2, 0, .], [0, 1/2, 4]], zeros above; the
 * upper triangle of the input (99 here) is never read. */
static const double by_hand_a[9] = {0, 99, 99, 1, 4, 99, 2, 0, 0};
static const double by_hand_ld[9] = {0, 0, 0, 2, 0, 0, 0, 0.5, 4};
static const int32_t by_hand_piv[3] = {-3, -3, 3};

TEST(ref_ldl_factor_2x2_pivot_by_hand) {
  for (int f32 = 0; f32 < 2; f32++) {
    tr_case t;
    REQUIRE(tr_open(&t));
    double a64[9];
    float a32[9];
    for (int i = 0; i < 9; i++) a64[i] = by_hand_a[i], a32[i] = (float)by_hand_a[i];
    alloy_arg args[1] = {tr_input(&t, f32 ? ALLOY_F32 : ALLOY_F64, (int64_t[]){3, 3}, 2,
                                  f32 ? (void *)a32 : (void *)a64)};
    if (tr_run(&t, "aten.linalg_ldl_factor_ex.default", args, 1)) {
      CHECK(tr_shape_is(&t.out[0], 2, (int64_t[]){3, 3}));
      CHECK(values_are(&t.out[0], by_hand_ld, 9, 0));
      CHECK(ints_are(&t.out[1], by_hand_piv, 3));
      CHECK(ints_are(&t.out[2], (int32_t[]){0}, 1));
    }
    tr_close(&t);
  }
}

/* Bunch-Kaufman's alpha = (1 + sqrt(17)) / 8 = 0.6404: with a21 = 1 the
 * largest entry of its column and of row 2, a11 = 0.63 is too small a
 * pivot and a22 = 5 large enough, so rows 1 and 2 trade places (pivots
 * 2, 2); a11 = 0.65 is kept (pivots 1, 2). Then LD = [[5, .], [1/5,
 * 0.63 - 1/5]] and [[0.65, .], [1/0.65, 5 - 1/0.65]]. */
TEST(ref_ldl_factor_alpha_threshold) {
  tr_case t;
  REQUIRE(tr_open(&t));
  double a[8] = {0.63, 0, 1, 5, 0.65, 0, 1, 5};
  alloy_arg args[1] = {tr_input(&t, ALLOY_F64, (int64_t[]){2, 2, 2}, 3, a)};
  if (tr_run(&t, "aten.linalg_ldl_factor_ex.default", args, 1)) {
    CHECK(values_are(&t.out[0], (double[]){5, 0, 0.2, 0.43, 0.65, 0, 1 / 0.65, 5 - 1 / 0.65}, 8, 1e-15));
    CHECK(ints_are(&t.out[1], (int32_t[]){2, 2, 1, 2}, 4));
  }
  tr_close(&t);
}

/* Equal magnitudes in the pivot column: the first one is taken, as BLAS
 * i?amax does. A = [[0, 1, -1], [1, 0, 0], [-1, 0, 1]]: rows 2 and 3 tie
 * for column 1. Row 2 (a22 = 0) gives a 2x2 pivot on rows 1, 2 with no
 * interchange, pivots -2, -2; row 3 (a33 = 1) would have given a 1x1
 * pivot swapped in from row 3. D1 = [[0, 1], [1, 0]] is its own inverse,
 * row 3's multipliers are [-1, 0] D1 = [0, -1] and the Schur complement
 * 1 - [-1, 0] D1 [-1, 0]^T = 1. */
TEST(ref_ldl_factor_ties_take_the_first) {
  tr_case t;
  REQUIRE(tr_open(&t));
  double a[9] = {0, 1, -1, 1, 0, 0, -1, 0, 1};
  alloy_arg args[1] = {tr_input(&t, ALLOY_F64, (int64_t[]){3, 3}, 2, a)};
  if (tr_run(&t, "aten.linalg_ldl_factor_ex.default", args, 1)) {
    CHECK(values_are(&t.out[0], (double[]){0, 0, 0, 1, 0, 0, 0, -1, 1}, 9, 0));
    CHECK(ints_are(&t.out[1], (int32_t[]){-2, -2, 3}, 3));
  }
  tr_close(&t);
}

/* The solve from the factors above, for x = [1, 2, 3] and [-1, 0, 1]:
 * A x = [8, 9, 2] and [2, -1, -2]. */
TEST(ref_ldl_solve_by_hand) {
  tr_case t;
  REQUIRE(tr_open(&t));
  double ld[9], b[6] = {8, 2, 9, -1, 2, -2};
  int32_t piv[3];
  memcpy(ld, by_hand_ld, sizeof ld);
  memcpy(piv, by_hand_piv, sizeof piv);
  alloy_arg args[3] = {tr_input(&t, ALLOY_F64, (int64_t[]){3, 3}, 2, ld),
                       tr_input(&t, ALLOY_I32, (int64_t[]){3}, 1, piv),
                       tr_input(&t, ALLOY_F64, (int64_t[]){3, 2}, 2, b)};
  if (tr_run(&t, "aten.linalg_ldl_solve.default", args, 3)) {
    CHECK(tr_shape_is(&t.out[0], 2, (int64_t[]){3, 2}));
    CHECK(values_are(&t.out[0], (double[]){1, -1, 2, 0, 3, 1}, 6, 1e-15));
  }
  tr_close(&t);
}

/* A zero column leaves D(k, k) = 0: info names the first such k and the
 * factorization goes on; with check_errors the run fails instead. */
TEST(ref_ldl_factor_singular) {
  tr_case t;
  REQUIRE(tr_open(&t));
  double a[8] = {0, 0, 0, 0, 2, 0, 0, 0}; /* [zeros, diag(2, 0)] */
  alloy_arg args[1] = {tr_input(&t, ALLOY_F64, (int64_t[]){2, 2, 2}, 3, a)};
  if (tr_run(&t, "aten.linalg_ldl_factor_ex.default", args, 1)) {
    CHECK(values_are(&t.out[0], (double[]){0, 0, 0, 0, 2, 0, 0, 0}, 8, 0));
    CHECK(ints_are(&t.out[1], (int32_t[]){1, 2, 1, 2}, 4));
    CHECK(ints_are(&t.out[2], (int32_t[]){1, 2}, 2));
  }
  tr_close(&t);
  REQUIRE(tr_open(&t));
  alloy_arg a2[1] = {tr_input(&t, ALLOY_F64, (int64_t[]){2, 2, 2}, 3, a)};
  const char *kwn[1] = {"check_errors"};
  alloy_arg kw[1] = {alloy_arg_bool(true)};
  CHECK(tr_run_fails(&t, "aten.linalg_ldl_factor_ex.default", a2, 1, kwn, kw, 1));
  tr_close(&t);
}

/* ---- random indefinite batches -------------------------------------------*/

enum { RB = 4, RN = 6, RK = 2 };

/* Symmetric matrices with a small diagonal, so that most steps take 2x2
 * pivots and interchange rows; one of them has a zero diagonal. */
static void random_symmetric(double *a, uint32_t seed) {
  double v[RB * RN * RN];
  tr_fill(v, RB * RN * RN, seed);
  for (int b = 0; b < RB; b++)
    for (int i = 0; i < RN; i++)
      for (int j = 0; j < RN; j++) {
        double x = v[b * RN * RN + (i > j ? i * RN + j : j * RN + i)];
        a[b * RN * RN + i * RN + j] = i == j ? (b == 0 ? 0 : 0.1 * x) : x;
      }
}

/* The factors rebuild A, to the precision of the dtype; at least one 2x2
 * block comes up (else the test would miss the path it is for). */
TEST(ref_ldl_factor_rebuilds_random) {
  for (int f32 = 0; f32 < 2; f32++) {
    tr_case t;
    REQUIRE(tr_open(&t));
    double a[RB * RN * RN];
    float a32[RB * RN * RN];
    random_symmetric(a, 7u);
    for (int i = 0; i < RB * RN * RN; i++) a32[i] = (float)a[i], a[i] = f32 ? a32[i] : a[i];
    alloy_arg args[1] = {tr_input(&t, f32 ? ALLOY_F32 : ALLOY_F64, (int64_t[]){RB, RN, RN}, 3,
                                  f32 ? (void *)a32 : (void *)a)};
    if (tr_run(&t, "aten.linalg_ldl_factor_ex.default", args, 1)) {
      const int32_t *piv = t.out[1].data, *info = t.out[2].data;
      int two = 0;
      double tol = f32 ? 1e-5 : 1e-13;
      for (int b = 0; b < RB; b++) {
        double ld[RN * RN], back[RN * RN];
        for (int i = 0; i < RN * RN; i++) ld[i] = value_at(&t.out[0], b * RN * RN + i);
        CHECK_INT(info[b], 0);
        for (int i = 0; i < RN; i++) {
          two += piv[b * RN + i] < 0;
          CHECK(abs(piv[b * RN + i]) >= i + 1 && abs(piv[b * RN + i]) <= RN);
          for (int j = i + 1; j < RN; j++) CHECK(ld[i * RN + j] == 0);
        }
        ldl_rebuild(ld, piv + b * RN, RN, back);
        for (int i = 0; i < RN * RN; i++)
          if (!(fabs(back[i] - a[b * RN * RN + i]) <= tol * 8)) {
            harness_fail(__FILE__, __LINE__, "f32 %d, matrix %d, element %d: rebuilt %.9g, expected %.9g",
                         f32, b, i, back[i], a[b * RN * RN + i]);
            break;
          }
      }
      CHECK(two > 0);
    }
    tr_close(&t);
  }
}

/* Factor, then solve in the same graph with one B for the whole batch (B
 * broadcasts against LD's batch): A X = B for every matrix. */
TEST(ref_ldl_solve_random_residual) {
  tr_case t;
  REQUIRE(tr_open(&t));
  double a[RB * RN * RN], b[RN * RK];
  random_symmetric(a, 11u);
  tr_fill(b, RN * RK, 5u);
  alloy_arg fa[1] = {tr_input(&t, ALLOY_F64, (int64_t[]){RB, RN, RN}, 3, a)};
  alloy_node *f = tr_node(&t, "aten.linalg_ldl_factor_ex.default", fa, 1, NULL, NULL, 0), *s = NULL;
  if (f) {
    alloy_arg sa[3] = {alloy_arg_value(alloy_node_output(f, 0)), alloy_arg_value(alloy_node_output(f, 1)),
                       tr_input(&t, ALLOY_F64, (int64_t[]){RN, RK}, 2, b)};
    s = tr_node(&t, "aten.linalg_ldl_solve.default", sa, 3, NULL, NULL, 0);
  }
  alloy_value *outs[1] = {s ? alloy_node_output(s, 0) : NULL};
  if (s && tr_run_values(&t, outs, 1)) {
    CHECK(tr_shape_is(&t.out[0], 3, (int64_t[]){RB, RN, RK}));
    double worst = 0;
    for (int m = 0; m < RB; m++)
      for (int i = 0; i < RN; i++)
        for (int r = 0; r < RK; r++) {
          double ax = 0;
          for (int j = 0; j < RN; j++)
            ax += a[m * RN * RN + i * RN + j] * value_at(&t.out[0], (m * RN + j) * RK + r);
          worst = fmax(worst, fabs(ax - b[i * RK + r]));
        }
    if (!(worst <= 1e-12)) harness_fail(__FILE__, __LINE__, "max |A x - b| = %.3g", worst);
  }
  tr_close(&t);
}
