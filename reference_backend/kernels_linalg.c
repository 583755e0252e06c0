/*
 * reference_backend/kernels_linalg.c: reference kernels, dense linear
 * algebra of the linalg family: determinants, LU (factor, unpack, solve),
 * solve and inverse, Cholesky (factor, inverse, solve), triangular solves,
 * Householder QR (geqrf, householder_product, ormqr), matrix_exp, pinv and
 * lstsq (on the SVD of kernels_spectral.c, which also holds eigh).
 * Everything is computed in double; sums accumulate sequentially in index
 * order in double and round once on store. The
 * LDL family is in kernels_ldl.c, which shares the matrix helpers
 * defined here (ref_mat_at, ref_la_begin, ...: declared in ref.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference_backend/ref.h"
#include "reference_backend/spectral.h"

/* ---- linear algebra -------------------------------------------------------------
 * Batches of matrices, each copied into a row-major double array, computed
 * in double as LAPACK's algorithms do (LU with partial pivoting choosing
 * the first largest magnitude, Cholesky by columns, Householder QR with
 * LAPACK's reflector convention: H = I - tau v v^T, v[0] = 1, beta =
 * -sign(alpha) * norm), and rounded once on store. PyTorch runs LAPACK in
 * the input's precision, so results agree to that precision, not bit for
 * bit. A matrix operand's batch dims broadcast against the output's. */

/* The shared pieces (ref_mview, ref_mat_at, ref_la_begin, ...) are
 * declared in ref.h: kernels_ldl.c reads and writes its matrices with them. */

ref_mview ref_mat_at(const alloy_kernel_tensor *t, bool vec, const int64_t *bidx, int brank) {
  int tail = vec ? 1 : 2, tb = t->rank - tail;
  ref_mview v = {t, 0, t->sizes[tb], vec ? 1 : t->sizes[t->rank - 1], t->strides[tb],
                 vec ? 0 : t->strides[t->rank - 1]};
  for (int d = 0; d < tb; d++) {
    int od = brank - tb + d;
    if (od >= 0 && t->sizes[d] != 1) v.base += bidx[od] * t->strides[d];
  }
  return v;
}

void ref_mat_load(ref_mview v, double *a) {
  for (int64_t i = 0; i < v.rows; i++)
    for (int64_t j = 0; j < v.cols; j++)
      a[i * v.cols + j] = ref_load_f(v.t->data, v.t->dtype, v.base + i * v.rs + j * v.cs);
}

void ref_mat_store(ref_mview v, const double *a, int64_t lda) {
  for (int64_t i = 0; i < v.rows; i++)
    for (int64_t j = 0; j < v.cols; j++)
      ref_store_f(v.t->data, v.t->dtype, v.base + i * v.rs + j * v.cs, a[i * lda + j]);
}

void ref_vec_store_i(const alloy_kernel_tensor *t, const int64_t *bidx, int brank, const int32_t *v,
                     int64_t n) {
  ref_mview m = ref_mat_at(t, true, bidx, brank);
  for (int64_t i = 0; i < n && i < m.rows; i++) ref_store_i(t->data, t->dtype, m.base + i * m.rs, v[i]);
}

int64_t ref_scalar_at(const alloy_kernel_tensor *t, const int64_t *bidx, int brank) {
  int64_t off = 0;
  for (int d = 0; d < t->rank; d++) {
    int od = brank - t->rank + d;
    if (od >= 0 && t->sizes[d] != 1) off += bidx[od] * t->strides[d];
  }
  return off;
}

int64_t ref_batch_count(const alloy_kernel_tensor *out, int tail) {
  int64_t n = 1;
  for (int d = 0; d < out->rank - tail; d++) n *= out->sizes[d];
  return n;
}

static bool la_alloc(ref_la_scratch *s) {
  memset(s, 0, sizeof *s);
  for (int k = 0; k < 6; k++) s->m[k] = calloc(REF_LA_MAX, sizeof(double));
  s->piv = calloc(REF_LA_MAX, sizeof(int32_t));
  bool ok = s->piv != NULL;
  for (int k = 0; k < 6; k++) ok &= s->m[k] != NULL;
  return ok;
}

void ref_la_free(ref_la_scratch *s) {
  for (int k = 0; k < 6; k++) free(s->m[k]);
  free(s->piv);
}

static bool la_fits(const alloy_kernel_call *c);

bool ref_la_begin(const alloy_kernel_call *c, ref_la_scratch *s) {
  memset(s, 0, sizeof *s);
  if (la_fits(c) && la_alloc(s)) return true;
  ref_la_free(s);
  return false;
}

static bool la_fits(const alloy_kernel_call *c) {
  for (int k = 0; k < c->num_inputs; k++) {
    const alloy_kernel_tensor *t = &c->inputs[k];
    int64_t r = t->rank >= 2 ? t->sizes[t->rank - 2] : 1, cc = t->rank >= 1 ? t->sizes[t->rank - 1] : 1;
    if (r * cc > REF_LA_MAX || r > 64 * 64 || cc > 64 * 64) return false;
  }
  for (int k = 0; k < c->num_outputs; k++) {
    const alloy_kernel_tensor *t = &c->outputs[k];
    int64_t r = t->rank >= 2 ? t->sizes[t->rank - 2] : 1, cc = t->rank >= 1 ? t->sizes[t->rank - 1] : 1;
    if (r * cc > REF_LA_MAX) return false;
  }
  return true;
}

/* LU with partial pivoting of the m x n row-major a (LAPACK getrf):
 * piv 1-based; returns info (the first zero pivot, 1-based, or 0). */
static int lu_factor(double *a, int64_t m, int64_t n, int32_t *piv, bool pivot) {
  int info = 0;
  int64_t k = m < n ? m : n;
  for (int64_t j = 0; j < k; j++) {
    int64_t p = j;
    for (int64_t i = j + 1; pivot && i < m; i++)
      if (fabs(a[i * n + j]) > fabs(a[p * n + j])) p = i;
    piv[j] = (int32_t)(p + 1);
    if (a[p * n + j] != 0.0) {
      for (int64_t c = 0; p != j && c < n; c++) {
        double t = a[p * n + c];
        a[p * n + c] = a[j * n + c];
        a[j * n + c] = t;
      }
      for (int64_t i = j + 1; i < m; i++) a[i * n + j] /= a[j * n + j];
    } else if (!info) {
      info = (int)(j + 1);
    }
    for (int64_t i = j + 1; i < m; i++)
      for (int64_t c = j + 1; c < n; c++) a[i * n + c] -= a[i * n + j] * a[j * n + c];
  }
  return info;
}

/* The row permutation of LAPACK pivots: row i of L U is row perm[i] of A. */
static void pivots_to_perm(const int32_t *piv, int64_t k, int64_t m, int64_t *perm) {
  for (int64_t i = 0; i < m; i++) perm[i] = i;
  for (int64_t i = 0; i < k; i++) {
    int64_t p = piv[i] - 1, t = perm[i];
    perm[i] = perm[p];
    perm[p] = t;
  }
}

/* Reads the k pivots of pv's vector v into piv (LAPACK's: 1-based row
 * swaps of an m-row matrix); nonzero, after ref_fail, when one is outside
 * [1, m], as pivots_to_perm would then swap outside the permutation.
 * PyTorch's lu_unpack makes the same check (its lu_solve hands them to
 * LAPACK unchecked, which is undefined there). */
static int load_pivots(const alloy_kernel_call *c, ref_mview v, int64_t k, int64_t m, int32_t *piv) {
  for (int64_t i = 0; i < k; i++) {
    int64_t p = ref_load_i(v.t->data, v.t->dtype, v.base + i * v.rs);
    if (p < 1 || p > m)
      return ref_fail(c, "pivots must be between 1 and LU.size(-2) = %lld inclusive (as lu_factor "
                      "returns them), got %lld at %lld", (long long)m, (long long)p, (long long)i);
    piv[i] = (int32_t)p;
  }
  return 0;
}

/* Solves op(T) X = B in place for the n x n triangle T (lower or upper,
 * unit diagonal or not; op transposes when trans) and n x nrhs B. */
static void tri_solve(const double *t, int64_t n, bool lower, bool unit, bool trans, double *b, int64_t nrhs) {
  bool low = lower != trans;
  for (int64_t s = 0; s < n; s++) {
    int64_t i = low ? s : n - 1 - s;
    for (int64_t r = 0; r < nrhs; r++) {
      double acc = b[i * nrhs + r];
      for (int64_t q = 0; q < s; q++) {
        int64_t j = low ? q : n - 1 - q;
        acc -= (trans ? t[j * n + i] : t[i * n + j]) * b[j * nrhs + r];
      }
      b[i * nrhs + r] = unit ? acc : acc / t[i * n + i];
    }
  }
}

/* Solves op(A) X = B from A's LU (square n): op is A or A^T. */
static void lu_solve_in(const double *lu, const int32_t *piv, int64_t n, bool trans, double *b, int64_t nrhs,
                        double *tmp) {
  int64_t perm[REF_LA_MAX > 4096 ? 4096 : REF_LA_MAX];
  pivots_to_perm(piv, n, n, perm);
  if (!trans) {
    for (int64_t i = 0; i < n; i++)
      for (int64_t r = 0; r < nrhs; r++) tmp[i * nrhs + r] = b[perm[i] * nrhs + r];
    tri_solve(lu, n, true, true, false, tmp, nrhs);
    tri_solve(lu, n, false, false, false, tmp, nrhs);
    memcpy(b, tmp, sizeof *b * (size_t)(n * nrhs));
  } else {
    tri_solve(lu, n, false, false, true, b, nrhs);
    tri_solve(lu, n, true, true, true, b, nrhs);
    for (int64_t i = 0; i < n; i++)
      for (int64_t r = 0; r < nrhs; r++) tmp[perm[i] * nrhs + r] = b[i * nrhs + r];
    memcpy(b, tmp, sizeof *b * (size_t)(n * nrhs));
  }
}

static void transpose(const double *a, int64_t rows, int64_t cols, double *t) {
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++) t[j * rows + i] = a[i * cols + j];
}

static bool contiguous(const alloy_kernel_tensor *t) {
  int64_t st = 1;
  for (int d = t->rank - 1; d >= 0; d--) {
    if (t->sizes[d] != 1 && t->strides[d] != st) return false;
    st *= t->sizes[d];
  }
  return true;
}

/* _linalg_det (det, LU, pivots) and _linalg_slogdet (sign, logabsdet,
 * LU, pivots): from the LU factors, sign flipped per row interchange.
 * logabsdet is the plain sum of log|U_ii| as PyTorch's: NaN, not -inf,
 * when a NaN (or inf beside a zero) is on U's diagonal. */
static int det_run(const alloy_kernel_call *c, bool slog) {
  const alloy_kernel_tensor *a = ref_tensor(c, "A");
  int klu = slog ? 2 : 1;
  const alloy_kernel_tensor *lu = &c->outputs[klu], *piv = &c->outputs[klu + 1];
  ref_la_scratch s;
  if (!ref_la_begin(c, &s)) return ref_fail(c, "linalg: matrix too large, or out of memory");
  int64_t nb = ref_batch_count(a, 2), bidx[16] = {0}, n = a->sizes[a->rank - 1];
  int br = a->rank - 2;
  for (int64_t b = 0; b < nb; b++, ref_next_index(bidx, a->sizes, br)) {
    ref_mat_load(ref_mat_at(a, false, bidx, br), s.m[1]);
    /* PyTorch factors A^T when A is contiguous (det(A^T) = det(A) and
     * LAPACK then needs no copy): LU and pivots are A^T's then. */
    if (contiguous(a)) transpose(s.m[1], n, n, s.m[0]);
    else memcpy(s.m[0], s.m[1], sizeof(double) * (size_t)(n * n));
    lu_factor(s.m[0], n, n, s.piv, true);
    double det = 1, logabs = 0, sign = 1;
    for (int64_t i = 0; i < n; i++) {
      double d = s.m[0][i * n + i];
      det *= d;
      logabs += log(fabs(d));
      sign *= (d > 0) - (d < 0);
      if (s.piv[i] != i + 1) det = -det, sign = -sign;
    }
    ref_mat_store(ref_mat_at(lu, false, bidx, br), s.m[0], n);
    ref_vec_store_i(piv, bidx, br, s.piv, n);
    if (slog) {
      ref_store_f(c->outputs[0].data, c->outputs[0].dtype, ref_scalar_at(&c->outputs[0], bidx, br), sign);
      ref_store_f(c->outputs[1].data, c->outputs[1].dtype, ref_scalar_at(&c->outputs[1], bidx, br), logabs);
    } else {
      ref_store_f(c->outputs[0].data, c->outputs[0].dtype, ref_scalar_at(&c->outputs[0], bidx, br), det);
    }
  }
  ref_la_free(&s);
  return 0;
}

static int k_det(const alloy_kernel_call *c) { return det_run(c, false); }
static int k_slogdet(const alloy_kernel_call *c) { return det_run(c, true); }

/* With check_errors, a nonzero LAPACK info fails the run with the message
 * PyTorch's _linalg_check_errors gives (batched: the index of the failing
 * matrix is named). */
enum { INFO_INV, INFO_SOLVE, INFO_CHOLESKY, INFO_LU };

static int check_info(const alloy_kernel_call *c, int kind, int info, int64_t batch, bool batched) {
  bool check = false;
  ref_bool(c, "check_errors", &check);
  if (!check || info == 0) return 0;
  char where[48] = "";
  if (batched) snprintf(where, sizeof where, ": (Batch element %lld)", (long long)batch);
  switch (kind) {
    case INFO_INV:
      return ref_fail(c, "torch.linalg.inv_ex%s: The diagonal element %d is zero, the inversion could not be "
                         "completed because the input matrix is singular.", where, info);
    case INFO_SOLVE:
      return ref_fail(c, "torch.linalg.solve_ex%s: The solver failed because the input matrix is singular.", where);
    case INFO_CHOLESKY:
      return ref_fail(c, "torch.linalg.cholesky_ex%s: The factorization could not be completed because the input "
                         "is not positive-definite (the leading minor of order %d is not positive-definite).",
                      where, info);
    default:
      return ref_fail(c, "torch.linalg.lu_factor_ex%s: U[%d,%d] is zero and using it on lu_solve would result in a "
                         "division by zero. If you still want to perform the factorization, consider calling "
                         "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)", where, info, info);
  }
}

/* linalg_lu_factor_ex (LU, pivots, info) and linalg_lu (P, L, U). */
static int lu_run(const alloy_kernel_call *c, bool unpack) {
  const alloy_kernel_tensor *a = ref_tensor(c, "A");
  bool pivot = true;
  ref_bool(c, "pivot", &pivot);
  ref_la_scratch s;
  if (!ref_la_begin(c, &s)) return ref_fail(c, "linalg: matrix too large, or out of memory");
  int64_t nb = ref_batch_count(a, 2), bidx[16] = {0}, m = a->sizes[a->rank - 2], n = a->sizes[a->rank - 1];
  int64_t k = m < n ? m : n, perm[4096];
  int br = a->rank - 2;
  for (int64_t b = 0; b < nb; b++, ref_next_index(bidx, a->sizes, br)) {
    ref_mat_load(ref_mat_at(a, false, bidx, br), s.m[0]);
    int info = lu_factor(s.m[0], m, n, s.piv, pivot);
    if (!unpack) {
      ref_mat_store(ref_mat_at(&c->outputs[0], false, bidx, br), s.m[0], n);
      ref_vec_store_i(&c->outputs[1], bidx, br, s.piv, k);
      int32_t inf = info;
      ref_store_i(c->outputs[2].data, c->outputs[2].dtype, ref_scalar_at(&c->outputs[2], bidx, br), inf);
      int rc = check_info(c, INFO_LU, info, b, br > 0);
      if (rc) {
        ref_la_free(&s);
        return rc;
      }
      continue;
    }
    double *P = s.m[1], *L = s.m[2], *U = s.m[3];
    pivots_to_perm(s.piv, k, m, perm);
    for (int64_t i = 0; i < m * m; i++) P[i] = 0;
    for (int64_t i = 0; i < m; i++) P[perm[i] * m + i] = 1;
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < k; j++) L[i * k + j] = i == j ? 1 : i > j ? s.m[0][i * n + j] : 0;
    for (int64_t i = 0; i < k; i++)
      for (int64_t j = 0; j < n; j++) U[i * n + j] = j >= i ? s.m[0][i * n + j] : 0;
    if (c->outputs[0].rank >= 2 && pivot) ref_mat_store(ref_mat_at(&c->outputs[0], false, bidx, br), P, m);
    ref_mat_store(ref_mat_at(&c->outputs[1], false, bidx, br), L, k);
    ref_mat_store(ref_mat_at(&c->outputs[2], false, bidx, br), U, n);
  }
  ref_la_free(&s);
  return 0;
}

static int k_lu_factor_ex(const alloy_kernel_call *c) { return lu_run(c, false); }
static int k_lu(const alloy_kernel_call *c) { return lu_run(c, true); }

/* Pivots shaped as lu_factor gives them for LU: (*batch(LU), min(m, n)).
 * PyTorch does not check this (it reads min(m, n) pivots per matrix
 * whatever their shape, out of bounds when there are fewer); the shape
 * function does not either, so the kernel does before it reads one. */
static bool pivots_fit(const alloy_kernel_tensor *lu, const alloy_kernel_tensor *pv, int64_t k) {
  if (pv->rank != lu->rank - 1 || pv->sizes[pv->rank - 1] != k) return false;
  for (int d = 0; d < pv->rank - 1; d++)
    if (pv->sizes[d] != lu->sizes[d]) return false;
  return true;
}

/* Integer LU_data's triangles copied exactly into L and U (through double
 * an int64 beyond 2^53 would round, as PyTorch's copy does not). */
static void unpack_ints(const alloy_kernel_tensor *lu, const alloy_kernel_tensor *Lo, const alloy_kernel_tensor *Uo,
                        const int64_t *bidx, int br) {
  ref_mview a = ref_mat_at(lu, false, bidx, br), l = ref_mat_at(Lo, false, bidx, br),
            u = ref_mat_at(Uo, false, bidx, br);
  for (int64_t i = 0; i < a.rows; i++)
    for (int64_t j = 0; j < a.cols; j++) {
      int64_t v = ref_load_i(lu->data, lu->dtype, a.base + i * a.rs + j * a.cs);
      if (i > j && j < l.cols) ref_store_i(Lo->data, Lo->dtype, l.base + i * l.rs + j * l.cs, v);
      if (j >= i && i < u.rows) ref_store_i(Uo->data, Uo->dtype, u.base + i * u.rs + j * u.cs, v);
    }
}

/* lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots) -> P, L, U.
 * Any dtype of LU_data: PyTorch only copies its triangles and writes 0 and
 * 1, so it takes integers and bool too. */
static int k_lu_unpack(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *lu = ref_tensor(c, "LU_data"), *pv = ref_tensor(c, "LU_pivots");
  const alloy_kernel_tensor *Po = &c->outputs[0], *Lo = &c->outputs[1], *Uo = &c->outputs[2];
  int64_t nb = ref_batch_count(lu, 2), bidx[16] = {0}, m = lu->sizes[lu->rank - 2], n = lu->sizes[lu->rank - 1];
  int64_t k = m < n ? m : n, perm[4096];
  int br = lu->rank - 2;
  if (Po->rank >= 2 && !pivots_fit(lu, pv, k))
    return ref_fail(c, "LU_pivots must have shape (*, min(m, n)) = LU_data's batch and %lld, "
                    "as lu_factor returns them", (long long)k);
  ref_la_scratch s;
  if (!ref_la_begin(c, &s)) return ref_fail(c, "linalg: matrix too large, or out of memory");
  for (int64_t b = 0; b < nb; b++, ref_next_index(bidx, lu->sizes, br)) {
    ref_mat_load(ref_mat_at(lu, false, bidx, br), s.m[0]);
    double *P = s.m[1], *L = s.m[2], *U = s.m[3];
    if (Po->rank >= 2) {
      int rc = load_pivots(c, ref_mat_at(pv, true, bidx, br), k, m, s.piv);
      if (rc) {
        ref_la_free(&s);
        return rc;
      }
      pivots_to_perm(s.piv, k, m, perm);
      for (int64_t i = 0; i < m * m; i++) P[i] = 0;
      for (int64_t i = 0; i < m; i++) P[perm[i] * m + i] = 1;
      ref_mat_store(ref_mat_at(Po, false, bidx, br), P, m);
    }
    if (Lo->rank >= 2) {
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < k; j++) L[i * k + j] = i == j ? 1 : i > j ? s.m[0][i * n + j] : 0;
      for (int64_t i = 0; i < k; i++)
        for (int64_t j = 0; j < n; j++) U[i * n + j] = j >= i ? s.m[0][i * n + j] : 0;
      ref_mat_store(ref_mat_at(Lo, false, bidx, br), L, k);
      ref_mat_store(ref_mat_at(Uo, false, bidx, br), U, n);
      if (!is_float(lu->dtype)) unpack_ints(lu, Lo, Uo, bidx, br);
    }
  }
  ref_la_free(&s);
  return 0;
}

/* Solves with a general square A for the kernels below: op(A) X = B
 * (left) or X op(A) = B (right, as op(A)^T X^T = B^T). */
static void general_solve(const double *lu, const int32_t *piv, int64_t n, bool left, bool trans, double *b,
                          int64_t rows, int64_t cols, double *t1, double *t2) {
  if (left) {
    lu_solve_in(lu, piv, n, trans, b, cols, t1);
    return;
  }
  transpose(b, rows, cols, t2);
  lu_solve_in(lu, piv, n, !trans, t2, rows, t1);
  transpose(t2, cols, rows, b);
}

/* _linalg_solve_ex(A, B, left) -> (result, LU, pivots, info); B is a
 * vector when the result has one dim fewer than A. */
static int k_solve_ex(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *a = ref_tensor(c, "A"), *bt = ref_tensor(c, "B"), *x = &c->outputs[0];
  bool left = true;
  ref_bool(c, "left", &left);
  bool vec = x->rank == a->rank - 1;
  ref_la_scratch s;
  if (!ref_la_begin(c, &s)) return ref_fail(c, "linalg: matrix too large, or out of memory");
  int tail = vec ? 1 : 2, br = x->rank - tail, rc = 0;
  int64_t nb = ref_batch_count(x, tail), bidx[16] = {0}, n = a->sizes[a->rank - 1];
  for (int64_t b = 0; b < nb && !rc; b++, ref_next_index(bidx, x->sizes, br)) {
    ref_mat_load(ref_mat_at(a, false, bidx, br), s.m[0]);
    int info = lu_factor(s.m[0], n, n, s.piv, true);
    ref_mview bv = ref_mat_at(bt, vec, bidx, br);
    ref_mat_load(bv, s.m[1]);
    general_solve(s.m[0], s.piv, n, left, false, s.m[1], bv.rows, bv.cols, s.m[2], s.m[3]);
    ref_mat_store(ref_mat_at(x, vec, bidx, br), s.m[1], bv.cols);
    ref_mat_store(ref_mat_at(&c->outputs[1], false, bidx, br), s.m[0], n);
    ref_vec_store_i(&c->outputs[2], bidx, br, s.piv, n);
    ref_store_i(c->outputs[3].data, c->outputs[3].dtype, ref_scalar_at(&c->outputs[3], bidx, br), info);
    rc = check_info(c, INFO_SOLVE, info, b, a->rank > 2);
  }
  ref_la_free(&s);
  return rc;
}

/* linalg_inv_ex(A) -> (inverse, info). */
static int k_inv_ex(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *a = ref_tensor(c, "A");
  ref_la_scratch s;
  if (!ref_la_begin(c, &s)) return ref_fail(c, "linalg: matrix too large, or out of memory");
  int64_t nb = ref_batch_count(a, 2), bidx[16] = {0}, n = a->sizes[a->rank - 1];
  int br = a->rank - 2, rc = 0;
  for (int64_t b = 0; b < nb && !rc; b++, ref_next_index(bidx, a->sizes, br)) {
    ref_mat_load(ref_mat_at(a, false, bidx, br), s.m[0]);
    int info = lu_factor(s.m[0], n, n, s.piv, true);
    for (int64_t i = 0; i < n * n; i++) s.m[1][i] = i % (n + 1) == 0;
    lu_solve_in(s.m[0], s.piv, n, false, s.m[1], n, s.m[2]);
    ref_mat_store(ref_mat_at(&c->outputs[0], false, bidx, br), s.m[1], n);
    ref_store_i(c->outputs[1].data, c->outputs[1].dtype, ref_scalar_at(&c->outputs[1], bidx, br), info);
    rc = check_info(c, INFO_INV, info, b, br > 0);
  }
  ref_la_free(&s);
  return rc;
}

/* linalg_lu_solve(LU, pivots, B, left, adjoint). */
static int k_lu_solve(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *lu = ref_tensor(c, "LU"), *pv = ref_tensor(c, "pivots"), *bt = ref_tensor(c, "B"),
                            *x = &c->outputs[0];
  bool left = true, adjoint = false;
  ref_bool(c, "left", &left);
  ref_bool(c, "adjoint", &adjoint);
  ref_la_scratch s;
  if (!ref_la_begin(c, &s)) return ref_fail(c, "linalg: matrix too large, or out of memory");
  int br = x->rank - 2;
  int64_t nb = ref_batch_count(x, 2), bidx[16] = {0}, n = lu->sizes[lu->rank - 1];
  for (int64_t b = 0; b < nb; b++, ref_next_index(bidx, x->sizes, br)) {
    ref_mat_load(ref_mat_at(lu, false, bidx, br), s.m[0]);
    ref_mview bv = ref_mat_at(bt, false, bidx, br);
    int rc = load_pivots(c, ref_mat_at(pv, true, bidx, br), n, n, s.piv);
    if (rc) {
      ref_la_free(&s);
      return rc;
    }
    ref_mat_load(bv, s.m[1]);
    general_solve(s.m[0], s.piv, n, left, adjoint, s.m[1], bv.rows, bv.cols, s.m[2], s.m[3]);
    ref_mat_store(ref_mat_at(x, false, bidx, br), s.m[1], bv.cols);
  }
  ref_la_free(&s);
  return 0;
}

/* Cholesky of the n x n a into l (lower, the other triangle zero), read
 * from a's lower triangle (upper: from the upper one, l = U^T). At a
 * failing column j l is left as LAPACK's potf2 leaves it: the
 * non-positive (or NaN) pivot on the diagonal, a's entries from there on. */
static int cholesky(const double *a, int64_t n, bool upper, double *l) {
  for (int64_t i = 0; i < n * n; i++) l[i] = 0;
  for (int64_t j = 0; j < n; j++) {
    double d = upper ? a[j * n + j] : a[j * n + j];
    for (int64_t k = 0; k < j; k++) d -= l[j * n + k] * l[j * n + k];
    if (!(d > 0)) {
      for (int64_t k = j; k < n; k++)
        for (int64_t i = k; i < n; i++) l[i * n + k] = upper ? a[k * n + i] : a[i * n + k];
      l[j * n + j] = d;
      return (int)(j + 1);
    }
    l[j * n + j] = sqrt(d);
    for (int64_t i = j + 1; i < n; i++) {
      double v = upper ? a[j * n + i] : a[i * n + j];
      for (int64_t k = 0; k < j; k++) v -= l[i * n + k] * l[j * n + k];
      l[i * n + j] = v / l[j * n + j];
    }
  }
  return 0;
}

/* cholesky(self, upper) and linalg_cholesky_ex(self, upper) -> (L, info). */
static int cholesky_run(const alloy_kernel_call *c, bool ex) {
  const alloy_kernel_tensor *a = ref_tensor(c, "self");
  bool upper = false;
  ref_bool(c, "upper", &upper);
  ref_la_scratch s;
  if (!ref_la_begin(c, &s)) return ref_fail(c, "linalg: matrix too large, or out of memory");
  int64_t nb = ref_batch_count(a, 2), bidx[16] = {0}, n = a->sizes[a->rank - 1];
  int br = a->rank - 2, rc = 0;
  for (int64_t b = 0; b < nb; b++, ref_next_index(bidx, a->sizes, br)) {
    ref_mat_load(ref_mat_at(a, false, bidx, br), s.m[0]);
    int info = cholesky(s.m[0], n, upper, s.m[1]);
    if (upper) transpose(s.m[1], n, n, s.m[2]);
    ref_mat_store(ref_mat_at(&c->outputs[0], false, bidx, br), upper ? s.m[2] : s.m[1], n);
    if (ex) ref_store_i(c->outputs[1].data, c->outputs[1].dtype, ref_scalar_at(&c->outputs[1], bidx, br), info);
    if (ex && !rc) rc = check_info(c, INFO_CHOLESKY, info, b, br > 0);
    else if (!ex && info && !rc) rc = ref_fail(c, "cholesky: the leading minor of order %d is not positive-definite", info);
  }
  ref_la_free(&s);
  return rc;
}

static int k_cholesky(const alloy_kernel_call *c) { return cholesky_run(c, false); }
static int k_cholesky_ex(const alloy_kernel_call *c) { return cholesky_run(c, true); }

/* Solves (L L^T) X = B in place, L lower n x n. */
static void chol_solve(const double *l, int64_t n, double *b, int64_t nrhs) {
  tri_solve(l, n, true, false, false, b, nrhs);
  tri_solve(l, n, true, false, true, b, nrhs);
}

/* The factor as lower L in l: the input is L, or U = L^T when upper. */
static void load_factor(ref_mview v, bool upper, double *l, double *tmp) {
  int64_t n = v.rows;
  ref_mat_load(v, upper ? tmp : l);
  if (upper) transpose(tmp, n, n, l);
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = i + 1; j < n; j++) l[i * n + j] = 0;
}

/* cholesky_inverse(L, upper): (L L^T)^-1. */
static int k_cholesky_inverse(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *a = ref_tensor(c, "self");
  bool upper = false;
  ref_bool(c, "upper", &upper);
  ref_la_scratch s;
  if (!ref_la_begin(c, &s)) return ref_fail(c, "linalg: matrix too large, or out of memory");
  int64_t nb = ref_batch_count(a, 2), bidx[16] = {0}, n = a->sizes[a->rank - 1];
  int br = a->rank - 2;
  for (int64_t b = 0; b < nb; b++, ref_next_index(bidx, a->sizes, br)) {
    load_factor(ref_mat_at(a, false, bidx, br), upper, s.m[0], s.m[2]);
    for (int64_t i = 0; i < n * n; i++) s.m[1][i] = i % (n + 1) == 0;
    chol_solve(s.m[0], n, s.m[1], n);
    ref_mat_store(ref_mat_at(&c->outputs[0], false, bidx, br), s.m[1], n);
  }
  ref_la_free(&s);
  return 0;
}

/* cholesky_solve(self=B, input2=L, upper). */
static int k_cholesky_solve(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *bt = ref_tensor(c, "self"), *lt = ref_tensor(c, "input2"), *x = &c->outputs[0];
  bool upper = false;
  ref_bool(c, "upper", &upper);
  ref_la_scratch s;
  if (!ref_la_begin(c, &s)) return ref_fail(c, "linalg: matrix too large, or out of memory");
  int br = x->rank - 2;
  int64_t nb = ref_batch_count(x, 2), bidx[16] = {0};
  for (int64_t b = 0; b < nb; b++, ref_next_index(bidx, x->sizes, br)) {
    ref_mview lv = ref_mat_at(lt, false, bidx, br), bv = ref_mat_at(bt, false, bidx, br);
    load_factor(lv, upper, s.m[0], s.m[2]);
    ref_mat_load(bv, s.m[1]);
    chol_solve(s.m[0], lv.rows, s.m[1], bv.cols);
    ref_mat_store(ref_mat_at(x, false, bidx, br), s.m[1], bv.cols);
  }
  ref_la_free(&s);
  return 0;
}

/* linalg_solve_triangular(A, B, upper, left, unitriangular) and
 * triangular_solve(B, A, upper, transpose, unitriangular) -> (X, A). */
static int tri_run(const alloy_kernel_call *c, bool legacy) {
  const alloy_kernel_tensor *a = ref_tensor(c, legacy ? "A" : "self"), *bt = ref_tensor(c, legacy ? "self" : "B"),
                            *x = &c->outputs[0];
  bool upper = legacy, left = true, unit = false, trans = false;
  ref_bool(c, "upper", &upper);
  ref_bool(c, "left", &left);
  ref_bool(c, "unitriangular", &unit);
  ref_bool(c, "transpose", &trans);
  ref_la_scratch s;
  if (!ref_la_begin(c, &s)) return ref_fail(c, "linalg: matrix too large, or out of memory");
  int br = x->rank - 2;
  int64_t nb = ref_batch_count(x, 2), bidx[16] = {0};
  for (int64_t b = 0; b < nb; b++, ref_next_index(bidx, x->sizes, br)) {
    ref_mview av = ref_mat_at(a, false, bidx, br), bv = ref_mat_at(bt, false, bidx, br);
    int64_t n = av.rows;
    ref_mat_load(av, s.m[0]);
    ref_mat_load(bv, s.m[1]);
    if (left) {
      tri_solve(s.m[0], n, !upper, unit, trans, s.m[1], bv.cols);
    } else {
      transpose(s.m[1], bv.rows, bv.cols, s.m[2]);
      tri_solve(s.m[0], n, !upper, unit, !trans, s.m[2], bv.rows);
      transpose(s.m[2], bv.cols, bv.rows, s.m[1]);
    }
    ref_mat_store(ref_mat_at(x, false, bidx, br), s.m[1], bv.cols);
    if (legacy) ref_mat_store(ref_mat_at(&c->outputs[1], false, bidx, br), s.m[0], n);
  }
  ref_la_free(&s);
  return 0;
}

static int k_solve_triangular(const alloy_kernel_call *c) { return tri_run(c, false); }
static int k_triangular_solve(const alloy_kernel_call *c) { return tri_run(c, true); }

/* Householder QR in place (LAPACK geqr2/larfg): a holds R above the
 * diagonal and the reflectors' tails below; tau one per column < k. */
/* LAPACK's lapy2: sqrt(x^2 + y^2) without overflow, NaN when either is
 * (C's hypot gives inf for hypot(NaN, inf)). */
static double lapy2(double x, double y) {
  if (isnan(x)) return x;
  if (isnan(y)) return y;
  return hypot(x, y);
}

/* LAPACK's larf from the left on the row-major a (ld lda): rows j.. of
 * columns j+1..cols-1 times H = I - tau v v^T, v column j's rows j..m-1
 * (a[j][j] is 1 on entry). As LAPACK does, v is cut after its last
 * nonzero and the columns after the last one nonzero in v's rows, so an
 * inf or NaN there makes no 0 * inf = NaN. */
static void larf_left(double *a, int64_t lda, int64_t m, int64_t cols, int64_t j, double tau) {
  if (tau == 0) return;
  int64_t lastv = m, lastc = cols;
  while (lastv > j + 1 && a[(lastv - 1) * lda + j] == 0) lastv--;
  for (; lastc > j + 1; lastc--) {
    int64_t i = j;
    while (i < lastv && a[i * lda + lastc - 1] == 0) i++;
    if (i < lastv) break;
  }
  for (int64_t c2 = j + 1; c2 < lastc; c2++) {
    double w = 0;
    for (int64_t i = j; i < lastv; i++) w += a[i * lda + c2] * a[i * lda + j];
    w *= -tau;
    for (int64_t i = j; i < lastv; i++) a[i * lda + c2] += a[i * lda + j] * w;
  }
}

/* Householder QR in place (LAPACK's geqr2 with larfg): R on and above the
 * diagonal, the reflectors' v below it, tau[j] their scales. */
static void geqrf(double *a, int64_t m, int64_t n, double *tau) {
  int64_t k = m < n ? m : n;
  for (int64_t j = 0; j < k; j++) {
    double alpha = a[j * n + j], xn = 0;
    for (int64_t i = j + 1; i < m; i++) xn = lapy2(xn, a[i * n + j]);
    if (xn == 0) {
      tau[j] = 0;
    } else {
      /* beta = -sign(alpha) norm with -0 counting as positive (PyTorch's
       * R has -norm there). */
      double beta = alpha >= 0 ? -lapy2(alpha, xn) : lapy2(alpha, xn);
      tau[j] = (beta - alpha) / beta;
      for (int64_t i = j + 1; i < m; i++) a[i * n + j] /= alpha - beta;
      alpha = beta;
    }
    a[j * n + j] = 1;
    larf_left(a, n, m, n, j, tau[j]);
    a[j * n + j] = alpha;
  }
}

/* c (rows x cols) = H_j c (left) or c H_j (right), H_j = I - tau v v^T
 * with v = (0.., 1, refl[j+1..]) from column j of refl (ld ldr). */
static void apply_reflector(const double *refl, int64_t ldr, int64_t j, double tau, double *c, int64_t rows,
                            int64_t cols, bool left) {
  int64_t len = left ? rows : cols;
  if (tau == 0) return;
  for (int64_t o = 0; o < (left ? cols : rows); o++) {
    double w = 0;
    for (int64_t i = j; i < len; i++) {
      double v = i == j ? 1 : refl[i * ldr + j];
      w += v * (left ? c[i * cols + o] : c[o * cols + i]);
    }
    w *= tau;
    for (int64_t i = j; i < len; i++) {
      double v = i == j ? 1 : refl[i * ldr + j];
      if (left) c[i * cols + o] -= v * w;
      else c[o * cols + i] -= v * w;
    }
  }
}

static int k_geqrf(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *a = ref_tensor(c, "self");
  ref_la_scratch s;
  if (!ref_la_begin(c, &s)) return ref_fail(c, "linalg: matrix too large, or out of memory");
  int64_t nb = ref_batch_count(a, 2), bidx[16] = {0}, m = a->sizes[a->rank - 2], n = a->sizes[a->rank - 1];
  int br = a->rank - 2;
  for (int64_t b = 0; b < nb; b++, ref_next_index(bidx, a->sizes, br)) {
    ref_mat_load(ref_mat_at(a, false, bidx, br), s.m[0]);
    geqrf(s.m[0], m, n, s.m[1]);
    ref_mat_store(ref_mat_at(&c->outputs[0], false, bidx, br), s.m[0], n);
    ref_mat_store(ref_mat_at(&c->outputs[1], true, bidx, br), s.m[1], 1);
  }
  ref_la_free(&s);
  return 0;
}

/* Q = H_0 ... H_{k-1} applied to the first qc columns of the identity
 * (q is m x qc, k <= qc), formed as LAPACK's org2r does in place: each
 * reflector from the last, its column then becoming Q's. */
static void form_q(const double *refl, int64_t m, int64_t ldr, const double *tau, int64_t k, double *q, int64_t qc) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < qc; j++) q[i * qc + j] = j < k ? refl[i * ldr + j] : i == j;
  for (int64_t j = k - 1; j >= 0; j--) {
    q[j * qc + j] = 1;
    larf_left(q, qc, m, qc, j, tau[j]);
    for (int64_t i = j + 1; i < m; i++) q[i * qc + j] *= -tau[j];
    q[j * qc + j] = 1 - tau[j];
    for (int64_t i = 0; i < j; i++) q[i * qc + j] = 0;
  }
}

/* linalg_householder_product(input, tau). */
static int k_householder_product(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *a = ref_tensor(c, "input"), *tau = ref_tensor(c, "tau"), *out = &c->outputs[0];
  ref_la_scratch s;
  if (!ref_la_begin(c, &s)) return ref_fail(c, "linalg: matrix too large, or out of memory");
  int br = out->rank - 2;
  int64_t nb = ref_batch_count(out, 2), bidx[16] = {0}, m = a->sizes[a->rank - 2], n = a->sizes[a->rank - 1];
  for (int64_t b = 0; b < nb; b++, ref_next_index(bidx, out->sizes, br)) {
    ref_mat_load(ref_mat_at(a, false, bidx, br), s.m[0]);
    ref_mview tv = ref_mat_at(tau, true, bidx, br);
    ref_mat_load(tv, s.m[1]);
    form_q(s.m[0], m, n, s.m[1], tv.rows, s.m[2], n);
    ref_mat_store(ref_mat_at(out, false, bidx, br), s.m[2], n);
  }
  ref_la_free(&s);
  return 0;
}

/* linalg_qr(A, mode) -> (Q, R): Q has Q's output columns (empty for 'r'),
 * R the upper triangle of R's output rows. */
static int k_qr(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *a = ref_tensor(c, "A"), *qo = &c->outputs[0], *ro = &c->outputs[1];
  ref_la_scratch s;
  if (!ref_la_begin(c, &s)) return ref_fail(c, "linalg: matrix too large, or out of memory");
  int64_t nb = ref_batch_count(a, 2), bidx[16] = {0}, m = a->sizes[a->rank - 2], n = a->sizes[a->rank - 1];
  int64_t k = m < n ? m : n, rrows = ro->sizes[ro->rank - 2];
  int br = a->rank - 2;
  for (int64_t b = 0; b < nb; b++, ref_next_index(bidx, a->sizes, br)) {
    ref_mat_load(ref_mat_at(a, false, bidx, br), s.m[0]);
    geqrf(s.m[0], m, n, s.m[1]);
    for (int64_t i = 0; i < rrows; i++)
      for (int64_t j = 0; j < n; j++) s.m[2][i * n + j] = j >= i ? s.m[0][i * n + j] : 0;
    ref_mat_store(ref_mat_at(ro, false, bidx, br), s.m[2], n);
    if (qo->rank >= 2 && qo->rank == a->rank) {
      int64_t qc = qo->sizes[qo->rank - 1];
      form_q(s.m[0], m, n, s.m[1], k, s.m[3], qc);
      ref_mat_store(ref_mat_at(qo, false, bidx, br), s.m[3], qc);
    }
  }
  ref_la_free(&s);
  return 0;
}

/* ormqr(input, tau, other, left, transpose): op(Q) C or C op(Q), Q the
 * product of input's reflectors. */
static int k_ormqr(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *a = ref_tensor(c, "self"), *tau = ref_tensor(c, "input2"),
                            *ct = ref_tensor(c, "input3"), *out = &c->outputs[0];
  bool left = true, trans = false;
  ref_bool(c, "left", &left);
  ref_bool(c, "transpose", &trans);
  ref_la_scratch s;
  if (!ref_la_begin(c, &s)) return ref_fail(c, "linalg: matrix too large, or out of memory");
  int br = out->rank - 2;
  int64_t nb = ref_batch_count(out, 2), bidx[16] = {0}, ldr = a->sizes[a->rank - 1];
  for (int64_t b = 0; b < nb; b++, ref_next_index(bidx, out->sizes, br)) {
    ref_mat_load(ref_mat_at(a, false, bidx, br), s.m[0]);
    ref_mview tv = ref_mat_at(tau, true, bidx, br), cv = ref_mat_at(ct, false, bidx, br);
    ref_mat_load(tv, s.m[1]);
    ref_mat_load(cv, s.m[2]);
    int64_t k = tv.rows;
    /* Q C = H_0 (H_1 (... C)); Q^T C = H_{k-1} ... H_0 C; C Q = C H_0 H_1 ... */
    bool forward = left == trans;
    for (int64_t q = 0; q < k; q++) {
      int64_t j = forward ? q : k - 1 - q;
      apply_reflector(s.m[0], ldr, j, s.m[1][j], s.m[2], cv.rows, cv.cols, left);
    }
    ref_mat_store(ref_mat_at(out, false, bidx, br), s.m[2], cv.cols);
  }
  ref_la_free(&s);
  return 0;
}

/* linalg_matrix_exp: scaling and squaring with the degree-13 Pade
 * approximant (Higham 2005), in double. */
static void matmul(const double *a, const double *b, int64_t n, double *c) {
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) {
      double acc = 0;
      for (int64_t k = 0; k < n; k++) acc += a[i * n + k] * b[k * n + j];
      c[i * n + j] = acc;
    }
}

static int k_matrix_exp(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *a = ref_tensor(c, "self");
  static const double b[14] = {64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
                               1187353796428800.0,  129060195264000.0,   10559470521600.0,
                               670442572800.0,      33522128640.0,       1323241920.0,
                               40840800.0,          960960.0,            16380.0,
                               182.0,               1.0};
  ref_la_scratch s;
  if (!ref_la_begin(c, &s)) return ref_fail(c, "linalg: matrix too large, or out of memory");
  int64_t nb = ref_batch_count(a, 2), bidx[16] = {0}, n = a->sizes[a->rank - 1], nn = n * n;
  int br = a->rank - 2;
  for (int64_t bi = 0; bi < nb; bi++, ref_next_index(bidx, a->sizes, br)) {
    double *A = s.m[0], *A2 = s.m[1], *A4 = s.m[2], *A6 = s.m[3], *U = s.m[4], *V = s.m[5];
    ref_mat_load(ref_mat_at(a, false, bidx, br), A);
    double norm1 = 0;
    for (int64_t j = 0; j < n; j++) {
      double col = 0;
      for (int64_t i = 0; i < n; i++) col += fabs(A[i * n + j]);
      norm1 = col > norm1 ? col : norm1;
    }
    if (!isfinite(norm1)) {
      /* An infinite or NaN entry spreads through every product: the
       * result is NaN throughout (and the squaring count would be
       * infinite). */
      for (int64_t i = 0; i < nn; i++) V[i] = NAN;
      ref_mat_store(ref_mat_at(&c->outputs[0], false, bidx, br), V, n);
      continue;
    }
    int sq = norm1 > 5.371920351148152 ? (int)ceil(log2(norm1 / 5.371920351148152)) : 0;
    for (int64_t i = 0; i < nn; i++) A[i] = ldexp(A[i], -sq);
    matmul(A, A, n, A2);
    matmul(A2, A2, n, A4);
    matmul(A4, A2, n, A6);
    /* U = A (A6 (b13 A6 + b11 A4 + b9 A2) + b7 A6 + b5 A4 + b3 A2 + b1 I)
     * V = A6 (b12 A6 + b10 A4 + b8 A2) + b6 A6 + b4 A4 + b2 A2 + b0 I */
    double *T = s.m[4], *W = s.m[5];
    for (int64_t i = 0; i < nn; i++) T[i] = b[13] * A6[i] + b[11] * A4[i] + b[9] * A2[i];
    matmul(A6, T, n, W);
    for (int64_t i = 0; i < nn; i++) W[i] += b[7] * A6[i] + b[5] * A4[i] + b[3] * A2[i] + (i % (n + 1) == 0) * b[1];
    double *Ut = malloc(sizeof *Ut * (size_t)(nn ? nn : 1)), *Vt = malloc(sizeof *Vt * (size_t)(nn ? nn : 1));
    if (!Ut || !Vt) {
      free(Ut), free(Vt), ref_la_free(&s);
      return ref_fail(c, "out of memory");
    }
    matmul(A, W, n, Ut);
    for (int64_t i = 0; i < nn; i++) T[i] = b[12] * A6[i] + b[10] * A4[i] + b[8] * A2[i];
    matmul(A6, T, n, Vt);
    for (int64_t i = 0; i < nn; i++) Vt[i] += b[6] * A6[i] + b[4] * A4[i] + b[2] * A2[i] + (i % (n + 1) == 0) * b[0];
    /* (V - U) X = (V + U) */
    for (int64_t i = 0; i < nn; i++) {
      U[i] = Vt[i] - Ut[i];
      V[i] = Vt[i] + Ut[i];
    }
    free(Ut), free(Vt);
    lu_factor(U, n, n, s.piv, true);
    lu_solve_in(U, s.piv, n, false, V, n, A2);
    for (int k = 0; k < sq; k++) {
      matmul(V, V, n, A2);
      memcpy(V, A2, sizeof *V * (size_t)nn);
    }
    ref_mat_store(ref_mat_at(&c->outputs[0], false, bidx, br), V, n);
  }
  ref_la_free(&s);
  return 0;
}

/* ---- pinv, lstsq (the SVD: ref_svd, kernels_spectral.c) ----------------------------- */

/* linalg_pinv.atol_rtol_tensor(self, atol, rtol, hermitian): V S+ U^T,
 * keeping singular values above max(atol, rtol * largest) (rtol defaults
 * to eps * max(m, n) unless a positive atol is given), as PyTorch. */
static int k_pinv(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *a = ref_tensor(c, "self"), *at = ref_tensor(c, "atol"), *rt = ref_tensor(c, "rtol");
  ref_la_scratch s;
  if (!ref_la_begin(c, &s)) return ref_fail(c, "linalg: matrix too large, or out of memory");
  int64_t nb = ref_batch_count(a, 2), bidx[16] = {0}, m = a->sizes[a->rank - 2], n = a->sizes[a->rank - 1];
  int64_t k = m < n ? m : n;
  int br = a->rank - 2;
  double eps = a->dtype == ALLOY_F64 ? 0x1p-52 : 0x1p-23;
  for (int64_t b = 0; b < nb; b++, ref_next_index(bidx, a->sizes, br)) {
    double *U = s.m[1], *S = s.m[2], *VT = s.m[3], *X = s.m[0];
    ref_mat_load(ref_mat_at(a, false, bidx, br), X);
    if (!ref_svd(X, m, n, false, U, S, VT)) {
      ref_la_free(&s);
      return ref_fail(c, "pinv: out of memory");
    }
    double atol = at ? ref_load_f(at->data, at->dtype, ref_scalar_at(at, bidx, br)) : 0;
    double rtol = rt ? ref_load_f(rt->data, rt->dtype, ref_scalar_at(rt, bidx, br))
                     : (at && atol > 0 ? 0 : eps * (double)(m > n ? m : n));
    double smax = k ? S[0] : 0, tol = atol > rtol * smax ? atol : rtol * smax;
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < m; j++) {
        double acc = 0;
        for (int64_t q = 0; q < k; q++)
          if (S[q] > tol) acc += VT[q * n + i] / S[q] * U[j * k + q];
        X[i * m + j] = acc;
      }
    ref_mat_store(ref_mat_at(&c->outputs[0], false, bidx, br), X, m);
  }
  ref_la_free(&s);
  return 0;
}

/* linalg_lstsq(A, b, rcond, driver): the least-squares solution by
 * Householder QR (m >= n) or the minimum-norm one by QR of A^T (m < n),
 * assuming full rank as gels does; residuals (when the output has room)
 * are the squared norms of the rows past n of Q^T b; rank counts R's
 * diagonal entries above rcond times the largest; singular values (gelsd,
 * gelss) come from the SVD. */
static int k_lstsq(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *a = ref_tensor(c, "self"), *bt = ref_tensor(c, "b"), *x = &c->outputs[0];
  const alloy_kernel_tensor *res = &c->outputs[1], *rank = &c->outputs[2], *svo = &c->outputs[3];
  bool vec = x->rank == a->rank - 1;
  double rcond = -1;
  ref_float(c, "rcond", &rcond);
  ref_la_scratch s;
  if (!ref_la_begin(c, &s)) return ref_fail(c, "linalg: matrix too large, or out of memory");
  int tail = vec ? 1 : 2, br = x->rank - tail;
  int64_t nb = ref_batch_count(x, tail), bidx[16] = {0}, m = a->sizes[a->rank - 2], n = a->sizes[a->rank - 1];
  int64_t k = m < n ? m : n;
  if (rcond < 0) rcond = (a->dtype == ALLOY_F64 ? 0x1p-52 : 0x1p-23) * (double)(m > n ? m : n);
  for (int64_t b = 0; b < nb; b++, ref_next_index(bidx, x->sizes, br)) {
    double *A = s.m[0], *tau = s.m[1], *B = s.m[2], *X = s.m[3];
    ref_mview bv = ref_mat_at(bt, vec, bidx, br);
    int64_t nr = bv.cols;
    ref_mat_load(ref_mat_at(a, false, bidx, br), A);
    ref_mat_load(bv, B);
    if (m >= n) {
      geqrf(A, m, n, tau);
      for (int64_t j = 0; j < k; j++) apply_reflector(A, n, j, tau[j], B, m, nr, true);
      /* R x = (Q^T b)[:n] */
      for (int64_t i = 0; i < n; i++)
        for (int64_t r = 0; r < nr; r++) X[i * nr + r] = B[i * nr + r];
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) s.m[4][i * n + j] = A[i * n + j];
      tri_solve(s.m[4], n, false, false, false, X, nr);
      if (ref_numel(res) > 0) {
        ref_mview rv = ref_mat_at(res, true, bidx, br);
        for (int64_t r = 0; r < nr && r < rv.rows; r++) {
          double ss = 0;
          for (int64_t i = n; i < m; i++) ss += B[i * nr + r] * B[i * nr + r];
          ref_store_f(res->data, res->dtype, rv.base + r * rv.rs, ss);
        }
      }
    } else {
      /* A^T = Q R: x = Q R^-T b */
      transpose(A, m, n, s.m[5]);
      geqrf(s.m[5], n, m, tau);
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < m; j++) s.m[4][i * m + j] = s.m[5][i * m + j];
      tri_solve(s.m[4], m, false, false, true, B, nr);
      for (int64_t i = 0; i < n; i++)
        for (int64_t r = 0; r < nr; r++) X[i * nr + r] = i < m ? B[i * nr + r] : 0;
      for (int64_t j = k - 1; j >= 0; j--) apply_reflector(s.m[5], m, j, tau[j], X, n, nr, true);
    }
    ref_mat_store(ref_mat_at(x, vec, bidx, br), X, nr);
    if (ref_numel(rank) > 0) {
      const double *R = m >= n ? A : s.m[5];
      int64_t ld = m >= n ? n : m, rk = 0;
      double top = k ? fabs(R[0]) : 0;
      for (int64_t i = 0; i < k; i++) rk += fabs(R[i * ld + i]) > rcond * top;
      ref_store_i(rank->data, rank->dtype, ref_scalar_at(rank, bidx, br), rk);
    }
    if (ref_numel(svo) > 0) {
      ref_mat_load(ref_mat_at(a, false, bidx, br), A);
      if (!ref_svd(A, m, n, false, s.m[4], tau, s.m[5])) {
        ref_la_free(&s);
        return ref_fail(c, "lstsq: out of memory");
      }
      ref_mat_store(ref_mat_at(svo, true, bidx, br), tau, 1);
    }
  }
  ref_la_free(&s);
  return 0;
}

const alloy_kernel ref_kernels_linalg[] = {
    REF_KERNEL("aten._linalg_det.default", k_det),
    REF_KERNEL("aten._linalg_slogdet.default", k_slogdet),
    REF_KERNEL("aten._linalg_solve_ex.default", k_solve_ex),
    REF_KERNEL("aten.linalg_inv_ex.default", k_inv_ex),
    REF_KERNEL("aten.linalg_lu_factor_ex.default", k_lu_factor_ex),
    REF_KERNEL("aten.linalg_lu.default", k_lu),
    REF_KERNEL("aten.lu_unpack.default", k_lu_unpack),
    REF_KERNEL("aten.linalg_lu_solve.default", k_lu_solve),
    REF_KERNEL("aten.cholesky.default", k_cholesky),
    REF_KERNEL("aten.linalg_cholesky_ex.default", k_cholesky_ex),
    REF_KERNEL("aten.cholesky_inverse.default", k_cholesky_inverse),
    REF_KERNEL("aten.cholesky_solve.default", k_cholesky_solve),
    REF_KERNEL("aten.linalg_solve_triangular.default", k_solve_triangular),
    REF_KERNEL("aten.triangular_solve.default", k_triangular_solve),
    REF_KERNEL("aten.geqrf.default", k_geqrf),
    REF_KERNEL("aten.linalg_householder_product.default", k_householder_product),
    REF_KERNEL("aten.linalg_qr.default", k_qr),
    REF_KERNEL("aten.ormqr.default", k_ormqr),
    REF_KERNEL("aten.linalg_matrix_exp.default", k_matrix_exp),
    REF_KERNEL("aten.linalg_pinv.atol_rtol_tensor", k_pinv),
    REF_KERNEL("aten.linalg_lstsq.default", k_lstsq),
    {NULL, NULL, NULL, NULL},
};
