/*
 * reference_backend/kernels_ldl.c: reference kernels, LDL family:
 * linalg_ldl_factor_ex and linalg_ldl_solve, the Bunch-Kaufman
 * factorization of a symmetric matrix, A = L D L^T with D block diagonal
 * (1x1 and 2x2 blocks) and L the product of each step's row interchange
 * and unit lower elimination, and the solve from it.
 *
 * PyTorch's CPU kernels call LAPACK's ?sytrf with uplo 'L' (its API has
 * no upper variant) on tril(A), and ?sytrs on the result; for the n the
 * reference handles (REF_LA_MAX elements, n <= 64, within one block)
 * ?sytrf runs its unblocked path, ?sytf2. The outputs are in LAPACK's
 * format, so these kernels follow ?sytf2 and ?sytrs step for step: the
 * same pivot choice (alpha = (1 + sqrt(17)) / 8, the first largest
 * magnitude on ties), the same update formulas. LD holds L below the
 * diagonal and D on it (a 2x2 block's off-diagonal entry at [k+1][k]),
 * zeros above; pivots are int32 and 1-based: kp for a 1x1 block that
 * swapped rows k and kp, -kp in both entries of a 2x2 block that swapped
 * rows k+1 and kp; info is the first k (1-based) with D(k, k) exactly zero
 * (NaN counts too), 0 if none, the factorization being complete either way.
 *
 * The factorization rounds each step in the input's precision as LAPACK
 * does (see prec below); the solve computes in double and rounds once on
 * store, like the other linalg kernels. `hermitian` only matters for
 * complex inputs (?hetrf instead of ?sytrf): for real ones both name the
 * same routine, and complex tensors are not computed on here.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "reference_backend/ref.h"

/* Element (i, j) of the n x n row-major a. Only the lower triangle
 * (i >= j) is ever read or written, as LAPACK's 'L' routines do. */
#define A(i, j) a[(i) * n + (j)]

/* The factorization runs in the precision LAPACK does, ssytf2's float32
 * for float32 (and float16/bfloat16, whose opmath it is), dsytf2's double
 * for float64: the corpus shows why. Where a pivot is small next to the
 * entries it cancels (0.073 out of 4.7 in one float32 case), float32
 * rounding moves L's entries by 1e-5, past float32's tolerance, and
 * ssytf2's rank-1 update is a BLAS ?syr whose multiply-adds are fused;
 * rounding each step this way reproduces that case bit for bit. */
typedef struct {
  bool f32;
} prec;

static double rnd(prec p, double v) { return p.f32 ? (double)(float)v : v; }
/* x * y + z rounded once, as ?syr's fused multiply-add. */
static double madd(prec p, double x, double y, double z) {
  return p.f32 ? (double)fmaf((float)x, (float)y, (float)z) : fma(x, y, z);
}

/* Bunch and Kaufman's constant, as ?sytf2 computes it: it bounds the
 * growth of the entries of the reduced matrices (by 2.57 per step)
 * whichever pivot is chosen. */
static double bk_alpha(prec p) {
  return p.f32 ? (double)((1.0f + sqrtf(17.0f)) / 8.0f) : (1.0 + sqrt(17.0)) / 8.0;
}

/* Index of the largest |x[i * stride]| for i in [0, count), count > 0:
 * the first one on ties, and NaN never chosen past the first, as BLAS
 * i?amax (the pivot choice, so the pivots, depend on both). */
static int64_t iamax(const double *x, int64_t count, int64_t stride) {
  int64_t best = 0;
  for (int64_t i = 1; i < count; i++)
    if (fabs(x[i * stride]) > fabs(x[best * stride])) best = i;
  return best;
}

/* Swaps rows and columns p < q of the symmetric matrix in the trailing
 * part that the next steps see (rows and columns >= p), lower triangle
 * only: column p below q with column q below q, the part of column p
 * between them with row q left of the diagonal, and the two diagonals.
 * The columns of L already computed stay as they are: LAPACK's L is the
 * product of the steps' permutations and eliminations, not permuted
 * afterwards. */
static void sym_swap(double *a, int64_t n, int64_t p, int64_t q) {
  for (int64_t i = q + 1; i < n; i++) {
    double t = A(i, p);
    A(i, p) = A(i, q), A(i, q) = t;
  }
  for (int64_t i = p + 1; i < q; i++) {
    double t = A(i, p);
    A(i, p) = A(q, i), A(q, i) = t;
  }
  double t = A(p, p);
  A(p, p) = A(q, q), A(q, q) = t;
}

/* Factors the lower triangle of the n x n a in place (?sytf2 'L').
 * Returns info. */
static int ldl_factor(double *a, int64_t n, int32_t *piv, prec pr) {
  const double alpha = bk_alpha(pr);
  int info = 0;
  for (int64_t k = 0; k < n;) {
    int64_t kstep = 1, kp = k;
    double absakk = fabs(A(k, k)), colmax = 0;
    int64_t imax = k;
    if (k + 1 < n) {
      imax = k + 1 + iamax(&A(k + 1, k), n - k - 1, n);
      colmax = fabs(A(imax, k));
    }
    if (fmax(absakk, colmax) == 0 || isnan(absakk)) {
      /* A zero (or NaN) column: D(k) is singular. LAPACK records it and
       * moves on without touching the column, so neither does this. */
      if (!info) info = (int)(k + 1);
      piv[k] = (int32_t)(k + 1);
      k++;
      continue;
    }
    /* Written as ?sytf2's tests are, so that a NaN takes the same branch. */
    if (!(absakk >= rnd(pr, alpha * colmax))) {
      /* The largest off-diagonal entry of row imax within the trailing
       * matrix: left of the diagonal (row imax) and below it (column imax). */
      double rowmax = fabs(A(imax, k + iamax(&A(imax, k), imax - k, 1)));
      if (imax + 1 < n) {
        int64_t jmax = imax + 1 + iamax(&A(imax + 1, imax), n - imax - 1, n);
        rowmax = fmax(rowmax, fabs(A(jmax, imax)));
      }
      if (absakk >= rnd(pr, rnd(pr, alpha * colmax) * rnd(pr, colmax / rowmax))) {
        kp = k;
      } else if (fabs(A(imax, imax)) >= rnd(pr, alpha * rowmax)) {
        kp = imax;
      } else {
        kp = imax;
        kstep = 2;
      }
    }
    int64_t kk = k + kstep - 1; /* the row kp trades places with */
    if (kp != kk) {
      sym_swap(a, n, kk, kp);
      if (kstep == 2) {
        double t = A(k + 1, k);
        A(k + 1, k) = A(kp, k), A(kp, k) = t;
      }
    }
    if (kstep == 1) {
      /* A -= w (1 / d) w^T below the pivot, w the pivot column, then the
       * column becomes L's: w / d. */
      double r = rnd(pr, 1.0 / A(k, k));
      for (int64_t j = k + 1; j < n; j++) {
        double t = rnd(pr, -r * A(j, k));
        for (int64_t i = j; i < n; i++) A(i, j) = madd(pr, A(i, k), t, A(i, j));
      }
      for (int64_t i = k + 1; i < n; i++) A(i, k) = rnd(pr, A(i, k) * r);
      piv[k] = (int32_t)(kp + 1);
    } else {
      /* A -= W D^-1 W^T with W the two pivot columns, D^-1 written out
       * through d21 as ?sytf2 does (dividing by the off-diagonal keeps
       * the intermediate values of the same size); row j's multipliers
       * (wk, wkp1) replace W's row once the rows below it are updated.
       * float32 rounds each operation in source order: no corpus case
       * takes a 2x2 pivot to show whether LAPACK's build fuses any. */
      if (k + 2 < n) {
        double d21 = A(k + 1, k), d11 = rnd(pr, A(k + 1, k + 1) / d21), d22 = rnd(pr, A(k, k) / d21);
        double t = rnd(pr, 1.0 / rnd(pr, rnd(pr, d11 * d22) - 1.0));
        d21 = rnd(pr, t / d21);
        for (int64_t j = k + 2; j < n; j++) {
          double wk = rnd(pr, d21 * rnd(pr, rnd(pr, d11 * A(j, k)) - A(j, k + 1)));
          double wkp1 = rnd(pr, d21 * rnd(pr, rnd(pr, d22 * A(j, k + 1)) - A(j, k)));
          for (int64_t i = j; i < n; i++)
            A(i, j) = rnd(pr, rnd(pr, A(i, j) - rnd(pr, A(i, k) * wk)) - rnd(pr, A(i, k + 1) * wkp1));
          A(j, k) = wk;
          A(j, k + 1) = wkp1;
        }
      }
      piv[k] = piv[k + 1] = (int32_t)-(kp + 1);
    }
    k += kstep;
  }
  return info;
}

/* Swaps rows p and q of the n x nrhs row-major b. */
static void swap_rows(double *b, int64_t nrhs, int64_t p, int64_t q) {
  for (int64_t r = 0; p != q && r < nrhs; r++) {
    double t = b[p * nrhs + r];
    b[p * nrhs + r] = b[q * nrhs + r], b[q * nrhs + r] = t;
  }
}

/* Solves A X = B in place from ldl_factor's a and piv (?sytrs 'L'):
 * first L D Y = P B going down the blocks, then L^T (P^T X) = Y going
 * up. Returns false when the pivots are not a valid LAPACK pivot vector
 * (an index out of range, or a 2x2 block running off the matrix), which
 * LAPACK would follow out of bounds. */
static bool ldl_solve(const double *a, const int32_t *piv, int64_t n, double *b, int64_t nrhs) {
  for (int64_t k = 0; k < n; k++) {
    int64_t p = piv[k] < 0 ? -(int64_t)piv[k] : piv[k];
    if (p < 1 || p > n) return false;
  }
  for (int64_t k = 0; k < n;) {
    if (piv[k] > 0) {
      swap_rows(b, nrhs, k, piv[k] - 1);
      for (int64_t i = k + 1; i < n; i++)
        for (int64_t r = 0; r < nrhs; r++) b[i * nrhs + r] -= A(i, k) * b[k * nrhs + r];
      double inv = 1.0 / A(k, k); /* ?sytrs scales by the reciprocal */
      for (int64_t r = 0; r < nrhs; r++) b[k * nrhs + r] *= inv;
      k++;
      continue;
    }
    if (k + 1 >= n) return false;
    swap_rows(b, nrhs, k + 1, -(int64_t)piv[k] - 1);
    for (int64_t i = k + 2; i < n; i++)
      for (int64_t r = 0; r < nrhs; r++) b[i * nrhs + r] -= A(i, k) * b[k * nrhs + r];
    for (int64_t i = k + 2; i < n; i++)
      for (int64_t r = 0; r < nrhs; r++) b[i * nrhs + r] -= A(i, k + 1) * b[(k + 1) * nrhs + r];
    /* The 2x2 block's inverse, scaled by its off-diagonal entry as ?sytrs
     * does so that nothing overflows on the way. */
    double d21 = A(k + 1, k), a1 = A(k, k) / d21, a2 = A(k + 1, k + 1) / d21;
    double denom = a1 * a2 - 1.0;
    for (int64_t r = 0; r < nrhs; r++) {
      double b1 = b[k * nrhs + r] / d21, b2 = b[(k + 1) * nrhs + r] / d21;
      b[k * nrhs + r] = (a2 * b1 - b2) / denom;
      b[(k + 1) * nrhs + r] = (a1 * b2 - b1) / denom;
    }
    k += 2;
  }
  for (int64_t k = n - 1; k >= 0;) {
    int64_t step = piv[k] > 0 ? 1 : 2;
    if (step == 2 && k == 0) return false;
    /* Row k (and k-1 for a 2x2 block) less the rows below dotted with
     * L's column, the dot product summed first as ?gemv does. */
    for (int64_t c = k; c > k - step; c--)
      for (int64_t r = 0; r < nrhs; r++) {
        double s = 0;
        for (int64_t i = k + 1; i < n; i++) s += b[i * nrhs + r] * A(i, c);
        b[c * nrhs + r] -= s;
      }
    swap_rows(b, nrhs, k, (piv[k] > 0 ? piv[k] : -(int64_t)piv[k]) - 1);
    k -= step;
  }
  return true;
}

/* linalg_ldl_factor_ex(self, hermitian, check_errors) -> (LD, pivots,
 * info). With check_errors a singular D fails the run, as PyTorch raises. */
static int k_ldl_factor_ex(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *a = ref_tensor(c, "self");
  const alloy_kernel_tensor *ld = &c->outputs[0], *pv = &c->outputs[1], *inf = &c->outputs[2];
  bool check = false;
  ref_bool(c, "check_errors", &check);
  if (alloy_dtype_is_complex(a->dtype)) return ref_fail(c, "complex tensors are not supported");
  ref_la_scratch s;
  if (!ref_la_begin(c, &s)) return ref_fail(c, "linalg: matrix too large, or out of memory");
  int64_t nb = ref_batch_count(a, 2), bidx[16] = {0}, n = a->sizes[a->rank - 1];
  int br = a->rank - 2, rc = 0;
  for (int64_t b = 0; b < nb; b++, ref_next_index(bidx, a->sizes, br)) {
    double *m = s.m[0];
    ref_mat_load(ref_mat_at(a, false, bidx, br), m);
    /* PyTorch factors tril(A): the upper triangle is neither read nor
     * returned. */
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = i + 1; j < n; j++) m[i * n + j] = 0;
    int info = ldl_factor(m, n, s.piv, (prec){a->dtype != ALLOY_F64});
    ref_mat_store(ref_mat_at(ld, false, bidx, br), m, n);
    ref_vec_store_i(pv, bidx, br, s.piv, n);
    ref_store_i(inf->data, inf->dtype, ref_scalar_at(inf, bidx, br), info);
    if (check && info && !rc)
      rc = ref_fail(c, "the factorization failed (info = %d at batch %lld): D is singular", info,
                    (long long)b);
  }
  ref_la_free(&s);
  return rc;
}

/* linalg_ldl_solve(LD, pivots, B, hermitian): LD and pivots broadcast
 * against B's batch like the solution's. */
static int k_ldl_solve(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *ld = ref_tensor(c, "LD"), *pv = ref_tensor(c, "pivots"),
                            *bt = ref_tensor(c, "B"), *x = &c->outputs[0];
  if (alloy_dtype_is_complex(ld->dtype)) return ref_fail(c, "complex tensors are not supported");
  ref_la_scratch s;
  if (!ref_la_begin(c, &s)) return ref_fail(c, "linalg: matrix too large, or out of memory");
  int br = x->rank - 2, rc = 0;
  int64_t nb = ref_batch_count(x, 2), bidx[16] = {0}, n = ld->sizes[ld->rank - 1];
  for (int64_t b = 0; b < nb && !rc; b++, ref_next_index(bidx, x->sizes, br)) {
    ref_mat_load(ref_mat_at(ld, false, bidx, br), s.m[0]);
    ref_mview pvv = ref_mat_at(pv, true, bidx, br), bv = ref_mat_at(bt, false, bidx, br);
    for (int64_t i = 0; i < n; i++) s.piv[i] = (int32_t)ref_load_i(pv->data, pv->dtype, pvv.base + i * pvv.rs);
    ref_mat_load(bv, s.m[1]);
    if (!ldl_solve(s.m[0], s.piv, n, s.m[1], bv.cols))
      rc = ref_fail(c, "pivots of matrix %lld of the batch are not LAPACK sytrf pivots", (long long)b);
    else
      ref_mat_store(ref_mat_at(x, false, bidx, br), s.m[1], bv.cols);
  }
  ref_la_free(&s);
  return rc;
}

const alloy_kernel ref_kernels_ldl[] = {
    REF_KERNEL("aten.linalg_ldl_factor_ex.default", k_ldl_factor_ex),
    REF_KERNEL("aten.linalg_ldl_solve.default", k_ldl_solve),
    {NULL, NULL, NULL, NULL},
};
