/*
 * reference_backend/kernels_spectral.c: reference kernels of the spectral
 * decompositions and transforms, in double: the SVD (one-sided Jacobi,
 * the one implementation Alloy has: _linalg_svd, prims.svd, and through
 * ref_svd (spectral.h) pinv and lstsq in kernels_linalg.c), the symmetric
 * eigendecomposition (_linalg_eigh, cyclic Jacobi), the FFTs (ATen's
 * _fft_r2c, _fft_c2c and _fft_c2r, which normalize, and the prims, which
 * do not), a direct DFT per dim in double complex, and the nonsymmetric
 * eigenproblem (linalg_eig, _linalg_eigvals) as reference LAPACK's dgeev.
 * The FFTs use the views and walks of kernels_shape.h; the matrices are
 * read and written with the helpers of ref.h (kernels_linalg.c).
 */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "reference_backend/kernels_shape.h"
#include "reference_backend/ref.h"
#include "reference_backend/spectral.h"

/* ---- SVD --------------------------------------------------------------------------
 * One-sided Jacobi (Hestenes) for the SVD and cyclic Jacobi for symmetric
 * eigenproblems: simple and accurate in double. Singular vectors and
 * eigenvectors are unique only up to sign (and rotation among equal
 * values); LAPACK's choice is not reproduced, so outputs holding them may
 * differ from PyTorch's by sign while the factorizations agree. */

/* drot: the plane rotation (x, y) <- (cs x + sn y, cs y - sn x) on cnt
 * pairs with strides; the Jacobi methods below rotate by -sn, dlahqr and
 * the eigenvector back-transform further down by sn. */
static void rotate(int64_t cnt, double *x, int64_t incx, double *y, int64_t incy, double cs, double sn) {
  for (int64_t k = 0; k < cnt; k++) {
    double a = x[k * incx], b = y[k * incy];
    x[k * incx] = cs * a + sn * b;
    y[k * incy] = cs * b - sn * a;
  }
}

/* Thin SVD of the m x n a (m >= n): u (m x n, orthonormal columns,
 * completed where a singular value is 0), sv (n, descending), v (n x n). */
static void svd_tall(const double *a, int64_t m, int64_t n, double *u, double *sv, double *v) {
  memcpy(u, a, sizeof *u * (size_t)(m * n));
  for (int64_t i = 0; i < n * n; i++) v[i] = i % (n + 1) == 0;
  for (int sweep = 0; sweep < 60; sweep++) {
    bool rotated = false;
    for (int64_t p = 0; p < n; p++)
      for (int64_t q = p + 1; q < n; q++) {
        double al = 0, be = 0, ga = 0;
        for (int64_t i = 0; i < m; i++) {
          al += u[i * n + p] * u[i * n + p];
          be += u[i * n + q] * u[i * n + q];
          ga += u[i * n + p] * u[i * n + q];
        }
        if (fabs(ga) <= 1e-15 * sqrt(al * be) || ga == 0) continue;
        rotated = true;
        double zeta = (be - al) / (2 * ga), t = copysign(1.0, zeta) / (fabs(zeta) + sqrt(1 + zeta * zeta));
        double cs = 1 / sqrt(1 + t * t), sn = cs * t;
        rotate(m, &u[p], n, &u[q], n, cs, -sn); /* columns p and q of u, then of v */
        rotate(n, &v[p], n, &v[q], n, cs, -sn);
      }
    if (!rotated) break;
  }
  for (int64_t j = 0; j < n; j++) {
    double nrm = 0;
    for (int64_t i = 0; i < m; i++) nrm = hypot(nrm, u[i * n + j]);
    sv[j] = nrm;
    for (int64_t i = 0; i < m && nrm > 0; i++) u[i * n + j] /= nrm;
  }
  /* descending order (selection sort keeps it simple) */
  for (int64_t j = 0; j < n; j++) {
    int64_t b = j;
    for (int64_t k = j + 1; k < n; k++)
      if (sv[k] > sv[b]) b = k;
    if (b == j) continue;
    double t = sv[j];
    sv[j] = sv[b], sv[b] = t;
    for (int64_t i = 0; i < m; i++) t = u[i * n + j], u[i * n + j] = u[i * n + b], u[i * n + b] = t;
    for (int64_t i = 0; i < n; i++) t = v[i * n + j], v[i * n + j] = v[i * n + b], v[i * n + b] = t;
  }
}

/* Completes the columns [from, cols) of the m x cols q (those whose norm is
 * 0 or that are past `from`) to an orthonormal set, by Gram-Schmidt over
 * the unit vectors. */
static void complete_basis(double *q, int64_t m, int64_t cols, int64_t from) {
  int64_t e = 0;
  for (int64_t j = 0; j < cols; j++) {
    double nrm = 0;
    for (int64_t i = 0; i < m; i++) nrm = hypot(nrm, q[i * cols + j]);
    if (j < from && nrm > 0.5) continue;
    for (; e < m; e++) {
      for (int64_t i = 0; i < m; i++) q[i * cols + j] = i == e;
      for (int pass = 0; pass < 2; pass++)
        for (int64_t k = 0; k < cols; k++) {
          if (k == j) continue;
          double kn = 0, d = 0;
          for (int64_t i = 0; i < m; i++) kn += q[i * cols + k] * q[i * cols + k], d += q[i * cols + k] * q[i * cols + j];
          if (kn < 0.5) continue; /* not yet set */
          for (int64_t i = 0; i < m; i++) q[i * cols + j] -= d * q[i * cols + k];
        }
      nrm = 0;
      for (int64_t i = 0; i < m; i++) nrm = hypot(nrm, q[i * cols + j]);
      if (nrm > 1e-6) break;
    }
    for (int64_t i = 0; i < m; i++) q[i * cols + j] = nrm > 0 ? q[i * cols + j] / nrm : 0;
    e++;
  }
}

bool ref_svd(const double *a, int64_t m, int64_t n, bool full, double *u, double *sv, double *vt) {
  bool wide = m < n;
  int64_t r = wide ? n : m, c = wide ? m : n, k = c;
  int64_t uc = full ? m : k, vr = full ? n : k;
  double *w = malloc(sizeof *w * (size_t)(r * c + 1)), *ww = malloc(sizeof *ww * (size_t)(r * c + 1));
  double *vv = malloc(sizeof *vv * (size_t)(c * c + 1)), *vtmp = malloc(sizeof *vtmp * (size_t)(n * vr + 1));
  bool ok = w && ww && vv && vtmp;
  if (ok) {
    for (int64_t i = 0; i < m; i++) /* the tall problem: a, or a^T */
      for (int64_t j = 0; j < n; j++) w[wide ? j * m + i : i * n + j] = a[i * n + j];
    svd_tall(w, r, c, ww, sv, vv); /* (r x c) = ww diag(sv) vv^T */
    /* A = U S V^T: tall: U = ww, V = vv; wide: A^T = ww S vv^T so U = vv, V = ww */
    const double *U0 = wide ? vv : ww, *V0 = wide ? ww : vv; /* m x k, n x k */
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < uc; j++) u[i * uc + j] = j < k ? U0[i * k + j] * (sv[j] > 0) : 0;
    complete_basis(u, m, uc, k);
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < vr; j++) vtmp[i * vr + j] = j < k ? V0[i * k + j] : 0;
    complete_basis(vtmp, n, vr, k);
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < vr; j++) vt[j * n + i] = vtmp[i * vr + j];
  }
  free(w), free(ww), free(vv), free(vtmp);
  return ok;
}

/* _linalg_svd(A, full_matrices, compute_uv) -> (U, S, Vh), and prims.svd(A,
 * full_matrices), which always computes U and Vh. */
static int k_svd(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *a = ref_tensor(c, "A");
  bool full = false, uv = true;
  ref_bool(c, "full_matrices", &full);
  ref_bool(c, "compute_uv", &uv);
  int64_t nb = ref_batch_count(a, 2), bidx[16] = {0}, m = a->sizes[a->rank - 2], n = a->sizes[a->rank - 1];
  int64_t k = m < n ? m : n, uc = full ? m : k, vr = full ? n : k;
  int br = a->rank - 2;
  double *A = malloc(sizeof *A * (size_t)(m * n + 1)), *U = malloc(sizeof *U * (size_t)(m * uc + 1));
  double *S = malloc(sizeof *S * (size_t)(k + 1)), *VT = malloc(sizeof *VT * (size_t)(vr * n + 1));
  int status = A && U && S && VT ? 0 : ref_fail(c, "svd: out of memory");
  for (int64_t b = 0; b < nb && !status; b++, ref_next_index(bidx, a->sizes, br)) {
    ref_mat_load(ref_mat_at(a, false, bidx, br), A);
    if (!ref_svd(A, m, n, full, U, S, VT)) {
      status = ref_fail(c, "svd: out of memory");
      break;
    }
    ref_mat_store(ref_mat_at(&c->outputs[1], true, bidx, br), S, 1);
    if (uv && c->outputs[0].rank >= 2) {
      ref_mat_store(ref_mat_at(&c->outputs[0], false, bidx, br), U, uc);
      ref_mat_store(ref_mat_at(&c->outputs[2], false, bidx, br), VT, n);
    }
  }
  free(A), free(U), free(S), free(VT);
  return status;
}

/* ---- eigh ---------------------------------------------------------------------------- */

/* _linalg_eigh(A, UPLO, compute_v): cyclic Jacobi on the symmetric
 * matrix read from A's UPLO triangle; eigenvalues ascending. */
static int k_eigh(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *a = ref_tensor(c, "A");
  const char *uplo = ref_str(c, "UPLO");
  bool upper = uplo && (uplo[0] == 'U' || uplo[0] == 'u'), vecs = true;
  ref_bool(c, "compute_v", &vecs);
  ref_la_scratch s;
  if (!ref_la_begin(c, &s)) return ref_fail(c, "linalg: matrix too large, or out of memory");
  int64_t nb = ref_batch_count(a, 2), bidx[16] = {0}, n = a->sizes[a->rank - 1];
  int br = a->rank - 2;
  for (int64_t b = 0; b < nb; b++, ref_next_index(bidx, a->sizes, br)) {
    double *A = s.m[0], *S = s.m[1], *V = s.m[2], *w = s.m[3];
    ref_mat_load(ref_mat_at(a, false, bidx, br), A);
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) S[i * n + j] = (upper ? j >= i : j <= i) ? A[i * n + j] : A[j * n + i];
    for (int64_t i = 0; i < n * n; i++) V[i] = i % (n + 1) == 0;
    for (int sweep = 0; sweep < 60; sweep++) {
      double off = 0;
      for (int64_t p = 0; p < n; p++)
        for (int64_t q = p + 1; q < n; q++) off += S[p * n + q] * S[p * n + q];
      if (off == 0) break;
      for (int64_t p = 0; p < n; p++)
        for (int64_t q = p + 1; q < n; q++) {
          double apq = S[p * n + q];
          if (apq == 0) continue;
          double th = (S[q * n + q] - S[p * n + p]) / (2 * apq);
          double t = copysign(1.0, th) / (fabs(th) + sqrt(1 + th * th)), cs = 1 / sqrt(1 + t * t), sn = t * cs;
          /* S = J^T S J: its columns, then its rows */
          rotate(n, &S[p], n, &S[q], n, cs, -sn);
          rotate(n, &S[p * n], 1, &S[q * n], 1, cs, -sn);
          rotate(n, &V[p], n, &V[q], n, cs, -sn);
        }
    }
    for (int64_t i = 0; i < n; i++) w[i] = S[i * n + i];
    for (int64_t j = 0; j < n; j++) { /* ascending */
      int64_t m = j;
      for (int64_t k = j + 1; k < n; k++)
        if (w[k] < w[m]) m = k;
      double t = w[j];
      w[j] = w[m], w[m] = t;
      for (int64_t i = 0; i < n && m != j; i++) t = V[i * n + j], V[i * n + j] = V[i * n + m], V[i * n + m] = t;
    }
    ref_mat_store(ref_mat_at(&c->outputs[0], true, bidx, br), w, 1);
    if (vecs && c->outputs[1].rank >= 2) ref_mat_store(ref_mat_at(&c->outputs[1], false, bidx, br), V, n);
  }
  ref_la_free(&s);
  return 0;
}


/* ---- prims.fft_* -----------------------------------------------------------
 * Plain unnormalized DFTs in double complex, one listed dim after another,
 * on a contiguous buffer. Complex tensors are (real, imag) pairs of float
 * (complex64) or double (complex128). */

static double complex load_c(const alloy_kernel_tensor *t, int64_t off) {
  if (t->dtype == ALLOY_C64) {
    const float *p = (const float *)t->data + 2 * off;
    return p[0] + p[1] * I;
  }
  if (t->dtype == ALLOY_C128) {
    const double *p = (const double *)t->data + 2 * off;
    return p[0] + p[1] * I;
  }
  return ref_load_f(t->data, t->dtype, off);
}

static void store_c(const alloy_kernel_tensor *t, int64_t off, double complex z) {
  if (t->dtype == ALLOY_C64) {
    float *p = (float *)t->data + 2 * off;
    p[0] = (float)creal(z), p[1] = (float)cimag(z);
  } else if (t->dtype == ALLOY_C128) {
    double *p = (double *)t->data + 2 * off;
    p[0] = creal(z), p[1] = cimag(z);
  } else {
    ref_store_f(t->data, t->dtype, off, creal(z));
  }
}

/* The DFT along dim d of buf (contiguous, sizes), sign -1 forward. */
static int dft_dim(double complex *buf, const int64_t *sizes, int rank, int d, int sign) {
  int64_t n = sizes[d], inner = ref_shape_numel_of(sizes + d + 1, rank - d - 1), outer = ref_shape_numel_of(sizes, d);
  if (n == 0) return 0;
  /* the twiddles e^(sign 2 pi i m / n) once; term j of output k takes
   * m = j k mod n, stepped by k */
  double *tw = malloc(sizeof *tw * (size_t)(2 * n)), *row = malloc(sizeof *row * (size_t)(2 * n));
  double complex *out = malloc(sizeof *out * (size_t)n);
  if (!tw || !row || !out) {
    free(tw), free(row), free(out);
    return 1;
  }
  for (int64_t m = 0; m < n; m++) {
    double ang = sign * 2.0 * M_PI * (double)m / (double)n;
    tw[2 * m] = cos(ang), tw[2 * m + 1] = sin(ang);
  }
  for (int64_t o = 0; o < outer; o++)
    for (int64_t q = 0; q < inner; q++) {
      double complex *x = buf + o * n * inner + q;
      for (int64_t j = 0; j < n; j++) row[2 * j] = creal(x[j * inner]), row[2 * j + 1] = cimag(x[j * inner]);
      for (int64_t k = 0; k < n; k++) {
        double re = 0, im = 0;
        for (int64_t j = 0, m = 0; j < n; j++) {
          double a = row[2 * j], b = row[2 * j + 1], c = tw[2 * m], s = tw[2 * m + 1];
          re += a * c - b * s, im += a * s + b * c;
          m += k;
          if (m >= n) m -= n;
        }
        out[k] = re + im * I;
      }
      for (int64_t k = 0; k < n; k++) x[k * inner] = out[k];
    }
  free(tw), free(row), free(out);
  return 0;
}

/* The listed dims (wrapped), their count, or -1. */
static int fft_dims(const alloy_kernel_call *c, int rank, int *dims) {
  int64_t raw[MAXR];
  int n = ref_ints(c, "dim", raw, MAXR);
  for (int k = 0; k < n; k++) {
    dims[k] = (int)ref_shape_wrap_dim(raw[k], rank);
    if (dims[k] < 0 || dims[k] >= rank) return -1;
  }
  return n > 0 ? n : -1;
}

/* r2c (mode 0), c2c (1) and c2r (2). The buffer has the full signal's
 * shape: the input's, with c2r's last listed dim at last_dim_size. norm is
 * aten's normalization: 0 none, 1 by 1/sqrt(n), 2 by 1/n, n the signal's
 * size over the transformed dims (the prims never normalize). */
static int fft(const alloy_kernel_call *c, int mode, int64_t norm) {
  const alloy_kernel_tensor *in = &c->inputs[0], *out = &c->outputs[0];
  int dims[MAXR], nd = fft_dims(c, in->rank, dims);
  if (nd < 0) return ref_shape_fail(c, "bad dim");
  int last = dims[nd - 1];
  int64_t sizes[MAXR], strides[MAXR], s = 1;
  memcpy(sizes, in->sizes, sizeof *sizes * (size_t)in->rank);
  if (mode == 2) sizes[last] = out->sizes[last];
  for (int d = in->rank - 1; d >= 0; d--) strides[d] = s, s *= sizes[d];
  double complex *buf = calloc((size_t)(s ? s : 1), sizeof *buf);
  if (!buf) return ref_shape_fail(c, "out of memory");
  view iv = ref_shape_view_of(in);
  walker w;
  ref_shape_walk_init(&w, &iv);
  for (int64_t i = ref_shape_view_numel(&iv); i > 0; i--, ref_shape_walk_next(&w)) {
    int64_t at = 0;
    bool inside = true;
    for (int d = 0; d < in->rank; d++) at += w.idx[d] * strides[d], inside &= w.idx[d] < sizes[d];
    if (inside) buf[at] = load_c(in, w.off);
  }
  bool forward = true;
  if (mode == 1) ref_bool(c, "forward", &forward);
  int sign = mode == 2 ? 1 : forward ? -1 : 1, err = 0;
  for (int k = 0; k < nd - (mode == 2); k++) err |= dft_dim(buf, sizes, in->rank, dims[k], sign);
  if (mode == 2) { /* Hermitian-extend the last dim's half spectrum, then invert it */
    int64_t n = sizes[last], m = in->sizes[last], inner = strides[last], outer = ref_shape_numel_of(sizes, last);
    for (int64_t o = 0; o < outer; o++)
      for (int64_t q = 0; q < inner; q++) {
        double complex *x = buf + o * n * inner + q;
        for (int64_t k = n / 2 + 1; k < n; k++) x[k * inner] = n - k < m ? conj(x[(n - k) * inner]) : 0;
      }
    err |= dft_dim(buf, sizes, in->rank, last, 1);
  }
  double signal = 1, scale = 1;
  for (int k = 0; k < nd; k++) signal *= (double)sizes[dims[k]];
  if (norm == 1 && signal > 0) scale = 1 / sqrt(signal);
  if (norm == 2 && signal > 0) scale = 1 / signal;
  view ov = ref_shape_view_of(out);
  ref_shape_walk_init(&w, &ov);
  for (int64_t i = ref_shape_view_numel(&ov); i > 0; i--, ref_shape_walk_next(&w)) {
    int64_t at = 0;
    for (int d = 0; d < out->rank; d++) at += w.idx[d] * strides[d];
    store_c(out, w.off, buf[at] * scale);
  }
  free(buf);
  return err ? ref_shape_fail(c, "out of memory") : 0;
}

static int k_fft_r2c(const alloy_kernel_call *c) { return fft(c, 0, 0); }
static int k_fft_c2c(const alloy_kernel_call *c) { return fft(c, 1, 0); }
static int k_fft_c2r(const alloy_kernel_call *c) { return fft(c, 2, 0); }

/* aten's forms take the same arguments plus the normalization. */
static int aten_fft(const alloy_kernel_call *c, int mode) {
  int64_t norm = 0;
  if (!ref_int(c, "normalization", &norm) || norm < 0 || norm > 2)
    return ref_shape_fail(c, "normalization must be 0, 1 or 2");
  return fft(c, mode, norm);
}
static int k_aten_fft_r2c(const alloy_kernel_call *c) { return aten_fft(c, 0); }
static int k_aten_fft_c2c(const alloy_kernel_call *c) { return aten_fft(c, 1); }
static int k_aten_fft_c2r(const alloy_kernel_call *c) { return aten_fft(c, 2); }

/* ---- eig: LAPACK's dgeev -------------------------------------------------------------
 * The nonsymmetric eigenproblem as reference LAPACK solves it, step for
 * step, in double: balancing (dgebal 'B': permutations isolating
 * eigenvalues, then power-of-2 scaling by 2-norms), Hessenberg reduction
 * by Householder reflectors (dgehd2) with Q accumulated (dorghr), the
 * double-shift QR of dlahqr (Ahues and Kressner's deflation test,
 * exceptional shifts every 10 iterations without a deflation, 2 x 2 blocks
 * standardized by dlanv2), right eigenvectors of the quasi-triangular
 * Schur form by back substitution (dtrevc), back-transformed, unbalanced
 * (dgebak) and normalized as dgeev does (unit 2-norm, a complex vector's
 * largest component real). Following LAPACK's order of operations keeps
 * its order of the eigenvalues (where they deflate) and its eigenvectors'
 * phases, which PyTorch returns as they come; the last bits differ.
 * Matrices are column-major here, as LAPACK's: E(i, j) = e[i + j * n]. */

#define E_(a, i, j) a[(i) + (j) * (n)]

/* dlapy2 */
static double pythag(double x, double y) { return hypot(x, y); }

/* dlarfg: the reflector H = I - tau v v^T, v = (1, x), with H (alpha, x) =
 * (beta, 0); x becomes v's tail, alpha beta. */
static void reflector(int64_t len, double *alpha, double *x, int64_t inc, double *tau) {
  *tau = 0;
  if (len <= 1) return;
  double xnorm = 0;
  for (int64_t k = 0; k < len - 1; k++) xnorm = hypot(xnorm, x[k * inc]);
  if (xnorm == 0) return;
  double beta = -copysign(pythag(*alpha, xnorm), *alpha);
  *tau = (beta - *alpha) / beta;
  double s = 1 / (*alpha - beta);
  for (int64_t k = 0; k < len - 1; k++) x[k * inc] *= s;
  *alpha = beta;
}

/* dgebal's exchange: columns j and m over rows 0..l, rows j and m over
 * columns k..n-1. */
static void exchange(double *a, int64_t n, int64_t j, int64_t m, int64_t l, int64_t k) {
  if (j == m) return;
  for (int64_t r = 0; r <= l; r++) {
    double t = E_(a, r, j);
    E_(a, r, j) = E_(a, r, m), E_(a, r, m) = t;
  }
  for (int64_t c = k; c < n; c++) {
    double t = E_(a, j, c);
    E_(a, j, c) = E_(a, m, c), E_(a, m, c) = t;
  }
}

/* dgebal 'B': permutations pushing rows that isolate an eigenvalue down
 * and columns left (the exchanges in scale[], the active block *ilo ..
 * *ihi), then the active block's rows and columns scaled by powers of 2
 * until their 2-norms balance (the factors in scale[]). */
static void balance(double *a, int64_t n, int64_t *ilo, int64_t *ihi, double *scale) {
  int64_t k = 0, l = n - 1;
  for (int64_t i = 0; i < n; i++) scale[i] = 1;
  bool found = true;
  while (found && l >= 0) { /* rows isolating an eigenvalue, pushed down */
    found = false;
    for (int64_t j = l; j >= 0 && !found; j--) {
      bool isolated = true;
      for (int64_t i = 0; i <= l && isolated; i++) isolated = i == j || E_(a, j, i) == 0;
      if (!isolated) continue;
      scale[l] = (double)j;
      exchange(a, n, j, l, l, k);
      if (l == 0) {
        *ilo = *ihi = 0;
        return;
      }
      l--;
      found = true;
    }
  }
  found = true;
  while (found) { /* columns isolating an eigenvalue, pushed left */
    found = false;
    for (int64_t j = k; j <= l && !found; j++) {
      bool isolated = true;
      for (int64_t i = k; i <= l && isolated; i++) isolated = i == j || E_(a, i, j) == 0;
      if (!isolated) continue;
      scale[k] = (double)j;
      exchange(a, n, j, k, l, k);
      k++;
      found = true;
    }
  }
  for (int64_t i = k; i <= l; i++) scale[i] = 1;
  *ilo = k, *ihi = l;
  const double sclfac = 2, factor = 0.95;
  const double sfmin1 = DBL_MIN / (DBL_EPSILON / 2) , sfmax1 = 1 / sfmin1;
  const double sfmin2 = sfmin1 * sclfac, sfmax2 = 1 / sfmin2;
  for (bool noconv = true; noconv;) {
    noconv = false;
    for (int64_t i = k; i <= l; i++) {
      double c = 0, r = 0, ca = 0, ra = 0;
      for (int64_t t = k; t <= l; t++) c = hypot(c, E_(a, t, i)), r = hypot(r, E_(a, i, t));
      for (int64_t t = 0; t <= l; t++) ca = fmax(ca, fabs(E_(a, t, i)));
      for (int64_t t = k; t < n; t++) ra = fmax(ra, fabs(E_(a, i, t)));
      if (c == 0 || r == 0) continue;
      if (isnan(c + ca + r + ra)) return;
      double g = r / sclfac, f = 1, s = c + r;
      while (c < g && fmax(f, fmax(c, ca)) < sfmax2 && fmin(r, fmin(g, ra)) > sfmin2)
        f *= sclfac, c *= sclfac, ca *= sclfac, r /= sclfac, g /= sclfac, ra /= sclfac;
      g = c / sclfac;
      while (g >= r && fmax(r, ra) < sfmax2 && fmin(fmin(f, c), fmin(g, ca)) > sfmin2)
        f /= sclfac, c /= sclfac, g /= sclfac, ca /= sclfac, r *= sclfac, ra *= sclfac;
      if (c + r >= factor * s) continue;
      if (f < 1 && scale[i] < 1 && f * scale[i] <= sfmin1) continue;
      if (f > 1 && scale[i] > 1 && scale[i] >= sfmax1 / f) continue;
      scale[i] *= f;
      noconv = true;
      for (int64_t t = k; t < n; t++) E_(a, i, t) /= f;
      for (int64_t t = 0; t <= l; t++) E_(a, t, i) *= f;
    }
  }
}

/* dgehd2 and dorghr: a reduced to Hessenberg form over ilo..ihi by
 * reflectors, whose product is accumulated into q (n x n, the identity
 * outside the block). */
static void hessenberg(double *a, int64_t n, int64_t ilo, int64_t ihi, double *q, double *tau, double *work) {
  for (int64_t i = ilo; i < ihi; i++) {
    int64_t len = ihi - i;
    reflector(len, &E_(a, i + 1, i), &E_(a, i + 2 < n ? i + 2 : n - 1, i), 1, &tau[i]);
    double aii = E_(a, i + 1, i);
    E_(a, i + 1, i) = 1;
    const double *v = &E_(a, i + 1, i);
    if (tau[i] != 0) {
      for (int64_t r = 0; r <= ihi; r++) { /* from the right: rows 0..ihi, columns i+1..ihi */
        double w = 0;
        for (int64_t t = 0; t < len; t++) w += E_(a, r, i + 1 + t) * v[t];
        work[r] = w;
      }
      for (int64_t t = 0; t < len; t++)
        for (int64_t r = 0; r <= ihi; r++) E_(a, r, i + 1 + t) -= tau[i] * work[r] * v[t];
      for (int64_t c = i + 1; c < n; c++) { /* from the left: rows i+1..ihi, columns i+1..n-1 */
        double w = 0;
        for (int64_t t = 0; t < len; t++) w += v[t] * E_(a, i + 1 + t, c);
        for (int64_t t = 0; t < len; t++) E_(a, i + 1 + t, c) -= tau[i] * v[t] * w;
      }
    }
    E_(a, i + 1, i) = aii;
  }
  for (int64_t i = 0; i < n * n; i++) q[i] = i % (n + 1) == 0;
  for (int64_t i = ihi - 1; i >= ilo; i--) { /* Q = H(ilo) ... H(ihi-1), applied from the last */
    if (tau[i] == 0) continue;
    int64_t len = ihi - i;
    double *v = work; /* the reflector, whole */
    v[0] = 1;
    for (int64_t t = 1; t < len; t++) v[t] = E_(a, i + 1 + t, i);
    for (int64_t c = i + 1; c <= ihi; c++) {
      double w = 0;
      for (int64_t t = 0; t < len; t++) w += v[t] * E_(q, i + 1 + t, c);
      for (int64_t t = 0; t < len; t++) E_(q, i + 1 + t, c) -= tau[i] * v[t] * w;
    }
  }
  for (int64_t j = 0; j < n; j++) /* below the subdiagonal: zero */
    for (int64_t i = j + 2; i < n; i++) E_(a, i, j) = 0;
}

/* dlanv2: the 2 x 2 block (a b; c d) in standard Schur form (c = 0 for
 * real eigenvalues, else a = d and b c < 0), its rotation (cs, sn) and
 * eigenvalues. */
static void standardize(double *a, double *b, double *c, double *d, double *rt1r, double *rt1i, double *rt2r,
                        double *rt2i, double *cs, double *sn) {
  const double eps = DBL_EPSILON / 2, safmn2 = ldexp(1.0, (int)(log(DBL_MIN / eps) / log(2.0) / 2)), safmx2 = 1 / safmn2;
  if (*c == 0) {
    *cs = 1, *sn = 0;
  } else if (*b == 0) {
    *cs = 0, *sn = 1;
    double t = *d;
    *d = *a, *a = t, *b = -*c, *c = 0;
  } else if (*a - *d == 0 && copysign(1, *b) != copysign(1, *c)) {
    *cs = 1, *sn = 0;
  } else {
    double temp = *a - *d, p = 0.5 * temp, bcmax = fmax(fabs(*b), fabs(*c));
    double bcmis = fmin(fabs(*b), fabs(*c)) * copysign(1, *b) * copysign(1, *c);
    double scale = fmax(fabs(p), bcmax), z = (p / scale) * p + (bcmax / scale) * bcmis;
    if (z >= 4 * eps) { /* real eigenvalues */
      z = p + copysign(sqrt(scale) * sqrt(z), p);
      *a = *d + z;
      *d = *d - (bcmax / z) * bcmis;
      double tau = pythag(*c, z);
      *cs = z / tau, *sn = *c / tau;
      *b = *b - *c, *c = 0;
    } else { /* complex or nearly equal real eigenvalues: equal diagonal */
      double sigma = *b + *c;
      for (int count = 1; count <= 20; count++) {
        scale = fmax(fabs(temp), fabs(sigma));
        if (scale >= safmx2) sigma *= safmn2, temp *= safmn2;
        else if (scale <= safmn2) sigma *= safmx2, temp *= safmx2;
        else break;
      }
      p = 0.5 * temp;
      double tau = pythag(sigma, temp);
      *cs = sqrt(0.5 * (1 + fabs(sigma) / tau));
      *sn = -(p / (tau * *cs)) * copysign(1, sigma);
      double aa = *a * *cs + *b * *sn, bb = -*a * *sn + *b * *cs;
      double cc = *c * *cs + *d * *sn, dd = -*c * *sn + *d * *cs;
      *a = aa * *cs + cc * *sn, *b = bb * *cs + dd * *sn;
      *c = -aa * *sn + cc * *cs, *d = -bb * *sn + dd * *cs;
      temp = 0.5 * (*a + *d);
      *a = temp, *d = temp;
      if (*c != 0) {
        if (*b != 0) {
          if (copysign(1, *b) == copysign(1, *c)) { /* real: upper triangular */
            double sab = sqrt(fabs(*b)), sac = sqrt(fabs(*c));
            p = copysign(sab * sac, *c);
            tau = 1 / sqrt(fabs(*b + *c));
            *a = temp + p, *d = temp - p;
            *b = *b - *c, *c = 0;
            double cs1 = sab * tau, sn1 = sac * tau;
            temp = *cs * cs1 - *sn * sn1;
            *sn = *cs * sn1 + *sn * cs1;
            *cs = temp;
          }
        } else {
          *b = -*c, *c = 0;
          temp = *cs, *cs = -*sn, *sn = temp;
        }
      }
    }
  }
  *rt1r = *a, *rt2r = *d;
  if (*c == 0) *rt1i = *rt2i = 0;
  else *rt1i = sqrt(fabs(*b)) * sqrt(fabs(*c)), *rt2i = -*rt1i;
}

/* dlahqr: the eigenvalues (wr, wi) of the Hessenberg h's block ilo..ihi
 * by double-shift QR; wantt: h becomes the Schur form T (and z, when
 * given, gathers the rotations, rows ilo..ihi). Returns LAPACK's info: 0,
 * or the row where the iterations ran out. */
static int64_t hessenberg_qr(double *h, int64_t n, int64_t ilo, int64_t ihi, double *wr, double *wi, bool wantt,
                             double *z) {
  const double dat1 = 0.75, dat2 = -0.4375;
  const int kexsh = 10;
  if (ilo == ihi) {
    wr[ilo] = E_(h, ilo, ilo), wi[ilo] = 0;
    return 0;
  }
  for (int64_t j = ilo; j + 3 <= ihi; j++) E_(h, j + 2, j) = 0, E_(h, j + 3, j) = 0;
  if (ilo + 2 <= ihi) E_(h, ihi, ihi - 2) = 0;
  int64_t nh = ihi - ilo + 1;
  const double safmin = DBL_MIN, ulp = DBL_EPSILON, smlnum = safmin * ((double)nh / ulp);
  int64_t i1 = 0, i2 = n - 1;
  int64_t itmax = 30 * (nh > 10 ? nh : 10), kdefl = 0;
  for (int64_t i = ihi; i >= ilo;) {
    int64_t l = ilo;
    bool split = false;
    for (int64_t its = 0; its <= itmax; its++) {
      int64_t k;
      for (k = i; k > l; k--) { /* a small subdiagonal element */
        if (fabs(E_(h, k, k - 1)) <= smlnum) break;
        double tst = fabs(E_(h, k - 1, k - 1)) + fabs(E_(h, k, k));
        if (tst == 0) {
          if (k - 2 >= ilo) tst += fabs(E_(h, k - 1, k - 2));
          if (k + 1 <= ihi) tst += fabs(E_(h, k + 1, k));
        }
        if (fabs(E_(h, k, k - 1)) <= ulp * tst) {
          double ab = fmax(fabs(E_(h, k, k - 1)), fabs(E_(h, k - 1, k)));
          double ba = fmin(fabs(E_(h, k, k - 1)), fabs(E_(h, k - 1, k)));
          double aa = fmax(fabs(E_(h, k, k)), fabs(E_(h, k - 1, k - 1) - E_(h, k, k)));
          double bb = fmin(fabs(E_(h, k, k)), fabs(E_(h, k - 1, k - 1) - E_(h, k, k)));
          double s = aa + ab;
          if (ba * (ab / s) <= fmax(smlnum, ulp * (bb * (aa / s)))) break;
        }
      }
      l = k;
      if (l > ilo) E_(h, l, l - 1) = 0;
      if (l >= i - 1) {
        split = true;
        break;
      }
      kdefl++;
      if (!wantt) i1 = l, i2 = i;
      double h11, h12, h21, h22;
      if (kdefl % (2 * kexsh) == 0) { /* exceptional shifts */
        double s = fabs(E_(h, i, i - 1)) + fabs(E_(h, i - 1, i - 2));
        h11 = dat1 * s + E_(h, i, i), h12 = dat2 * s, h21 = s, h22 = h11;
      } else if (kdefl % kexsh == 0) {
        double s = fabs(E_(h, l + 1, l)) + fabs(E_(h, l + 2, l + 1));
        h11 = dat1 * s + E_(h, l, l), h12 = dat2 * s, h21 = s, h22 = h11;
      } else { /* Francis' double shift */
        h11 = E_(h, i - 1, i - 1), h21 = E_(h, i, i - 1), h12 = E_(h, i - 1, i), h22 = E_(h, i, i);
      }
      double s = fabs(h11) + fabs(h12) + fabs(h21) + fabs(h22), rt1r = 0, rt1i = 0, rt2r = 0, rt2i = 0;
      if (s != 0) {
        h11 /= s, h21 /= s, h12 /= s, h22 /= s;
        double tr = (h11 + h22) / 2, det = (h11 - tr) * (h22 - tr) - h12 * h21, rtdisc = sqrt(fabs(det));
        if (det >= 0) { /* complex conjugate shifts */
          rt1r = tr * s, rt2r = rt1r, rt1i = rtdisc * s, rt2i = -rt1i;
        } else { /* real shifts: the one nearer h22, twice */
          rt1r = tr + rtdisc, rt2r = tr - rtdisc;
          if (fabs(rt1r - h22) <= fabs(rt2r - h22)) rt1r *= s, rt2r = rt1r;
          else rt2r *= s, rt1r = rt2r;
        }
      }
      int64_t m;
      double v[3];
      for (m = i - 2; m >= l; m--) { /* two small consecutive subdiagonal elements */
        double h21s = E_(h, m + 1, m);
        double sc = fabs(E_(h, m, m) - rt2r) + fabs(rt2i) + fabs(h21s);
        h21s = E_(h, m + 1, m) / sc;
        v[0] = h21s * E_(h, m, m + 1) + (E_(h, m, m) - rt1r) * ((E_(h, m, m) - rt2r) / sc) - rt1i * (rt2i / sc);
        v[1] = h21s * (E_(h, m, m) + E_(h, m + 1, m + 1) - rt1r - rt2r);
        v[2] = h21s * E_(h, m + 2, m + 1);
        sc = fabs(v[0]) + fabs(v[1]) + fabs(v[2]);
        v[0] /= sc, v[1] /= sc, v[2] /= sc;
        if (m == l) break;
        double h00 = fabs(E_(h, m, m - 1)) * (fabs(v[1]) + fabs(v[2]));
        double h01 = ulp * fabs(v[0]) * (fabs(E_(h, m - 1, m - 1)) + fabs(E_(h, m, m)) + fabs(E_(h, m + 1, m + 1)));
        if (h00 <= h01) break;
      }
      for (int64_t kk = m; kk <= i - 1; kk++) { /* the double-shift step, chasing the bulge */
        int64_t nr = i - kk + 1 < 3 ? i - kk + 1 : 3;
        if (kk > m)
          for (int64_t t = 0; t < nr; t++) v[t] = E_(h, kk + t, kk - 1);
        double t1;
        reflector(nr, &v[0], &v[1], 1, &t1);
        if (kk > m) {
          E_(h, kk, kk - 1) = v[0];
          E_(h, kk + 1, kk - 1) = 0;
          if (kk < i - 1) E_(h, kk + 2, kk - 1) = 0;
        } else if (m > l) {
          E_(h, kk, kk - 1) *= 1 - t1;
        }
        double v2 = v[1], t2 = t1 * v2;
        if (nr == 3) {
          double v3 = v[2], t3 = t1 * v3;
          for (int64_t j = kk; j <= i2; j++) {
            double sum = E_(h, kk, j) + v2 * E_(h, kk + 1, j) + v3 * E_(h, kk + 2, j);
            E_(h, kk, j) -= sum * t1, E_(h, kk + 1, j) -= sum * t2, E_(h, kk + 2, j) -= sum * t3;
          }
          for (int64_t j = i1; j <= (kk + 3 < i ? kk + 3 : i); j++) {
            double sum = E_(h, j, kk) + v2 * E_(h, j, kk + 1) + v3 * E_(h, j, kk + 2);
            E_(h, j, kk) -= sum * t1, E_(h, j, kk + 1) -= sum * t2, E_(h, j, kk + 2) -= sum * t3;
          }
          for (int64_t j = ilo; z && j <= ihi; j++) {
            double sum = E_(z, j, kk) + v2 * E_(z, j, kk + 1) + v3 * E_(z, j, kk + 2);
            E_(z, j, kk) -= sum * t1, E_(z, j, kk + 1) -= sum * t2, E_(z, j, kk + 2) -= sum * t3;
          }
        } else if (nr == 2) {
          for (int64_t j = kk; j <= i2; j++) {
            double sum = E_(h, kk, j) + v2 * E_(h, kk + 1, j);
            E_(h, kk, j) -= sum * t1, E_(h, kk + 1, j) -= sum * t2;
          }
          for (int64_t j = i1; j <= i; j++) {
            double sum = E_(h, j, kk) + v2 * E_(h, j, kk + 1);
            E_(h, j, kk) -= sum * t1, E_(h, j, kk + 1) -= sum * t2;
          }
          for (int64_t j = ilo; z && j <= ihi; j++) {
            double sum = E_(z, j, kk) + v2 * E_(z, j, kk + 1);
            E_(z, j, kk) -= sum * t1, E_(z, j, kk + 1) -= sum * t2;
          }
        }
      }
    }
    if (!split) return i + 1;
    if (l == i) { /* one eigenvalue */
      wr[i] = E_(h, i, i), wi[i] = 0;
    } else { /* a pair: the 2 x 2 block standardized */
      double cs, sn;
      standardize(&E_(h, i - 1, i - 1), &E_(h, i - 1, i), &E_(h, i, i - 1), &E_(h, i, i), &wr[i - 1], &wi[i - 1],
                  &wr[i], &wi[i], &cs, &sn);
      if (wantt) {
        if (i2 > i) rotate(i2 - i, &E_(h, i - 1, i + 1), n, &E_(h, i, i + 1), n, cs, sn);
        rotate(i - i1 - 1, &E_(h, i1, i - 1), 1, &E_(h, i1, i), 1, cs, sn);
      }
      if (z) rotate(ihi - ilo + 1, &E_(z, ilo, i - 1), 1, &E_(z, ilo, i), 1, cs, sn);
    }
    kdefl = 0;
    i = l - 1;
  }
  return 0;
}

/* dtrevc (right vectors, back-transformed): for each eigenvalue of the
 * quasi-triangular t, from the last, x with x(ki) = 1 (a pair: its 2 x 2
 * block's vector) solved upward, then q x into the columns of q, scaled to
 * a largest entry of 1. A pair's columns hold the real and imaginary parts
 * of the vector of wr + i |wi|. */
static void schur_vectors(const double *t, int64_t n, double *q, double *x, double *y, double *col0, double *col1) {
  const double ulp = DBL_EPSILON, smlnum = DBL_MIN * ((double)n / ulp);
  for (int64_t ki = n - 1; ki >= 0; ki--) {
    bool pair = ki > 0 && E_(t, ki, ki - 1) != 0;
    double wr = E_(t, ki, ki), w = pair ? sqrt(fabs(E_(t, ki, ki - 1))) * sqrt(fabs(E_(t, ki - 1, ki))) : 0;
    double smin = fmax(ulp * (fabs(wr) + fabs(w)), smlnum);
    int64_t top = pair ? ki - 1 : ki; /* x and y: real and imaginary parts, rows 0..top-1 solved */
    for (int64_t k = 0; k < n; k++) x[k] = y[k] = 0;
    if (!pair) {
      x[ki] = 1;
      for (int64_t k = 0; k < ki; k++) x[k] = -E_(t, k, ki);
    } else {
      if (fabs(E_(t, ki - 1, ki)) >= fabs(E_(t, ki, ki - 1))) x[ki - 1] = 1, y[ki] = w / E_(t, ki - 1, ki);
      else x[ki - 1] = -w / E_(t, ki, ki - 1), y[ki] = 1;
      for (int64_t k = 0; k < ki - 1; k++) x[k] = -x[ki - 1] * E_(t, k, ki - 1), y[k] = -y[ki] * E_(t, k, ki);
    }
    for (int64_t j = top - 1; j >= 0;) {
      bool block = j > 0 && E_(t, j, j - 1) != 0;
      if (!block) { /* 1 x 1: (t(j,j) - (wr + i w)) z = rhs */
        double complex d = E_(t, j, j) - (wr + (pair ? w : 0) * I), r = x[j] + (pair ? y[j] : 0) * I;
        if (cabs(d) < smin) d = smin;
        double complex zj = r / d;
        x[j] = creal(zj), y[j] = cimag(zj);
        for (int64_t k = 0; k < j; k++) {
          x[k] -= x[j] * E_(t, k, j);
          if (pair) y[k] -= y[j] * E_(t, k, j);
        }
        j--;
      } else { /* 2 x 2 block rows j-1, j */
        int64_t a = j - 1;
        double complex m11 = E_(t, a, a) - (wr + (pair ? w : 0) * I), m12 = E_(t, a, j);
        double complex m21 = E_(t, j, a), m22 = E_(t, j, j) - (wr + (pair ? w : 0) * I);
        double complex r1 = x[a] + (pair ? y[a] : 0) * I, r2 = x[j] + (pair ? y[j] : 0) * I;
        double complex det = m11 * m22 - m12 * m21;
        if (cabs(det) < smin) det = smin;
        double complex z1 = (r1 * m22 - m12 * r2) / det, z2 = (m11 * r2 - m21 * r1) / det;
        x[a] = creal(z1), y[a] = cimag(z1), x[j] = creal(z2), y[j] = cimag(z2);
        for (int64_t k = 0; k < a; k++) {
          x[k] -= x[a] * E_(t, k, a) + x[j] * E_(t, k, j);
          if (pair) y[k] -= y[a] * E_(t, k, a) + y[j] * E_(t, k, j);
        }
        j -= 2;
      }
    }
    /* back-transform: column ki (a pair: ki-1 and ki) = q x */
    for (int64_t r = 0; r < n; r++) {
      double s0 = 0, s1 = 0;
      for (int64_t k = 0; k <= ki; k++) s0 += E_(q, r, k) * x[k], s1 += E_(q, r, k) * y[k];
      col0[r] = s0, col1[r] = s1;
    }
    double emax = 0;
    for (int64_t r = 0; r < n; r++) emax = fmax(emax, pair ? fabs(col0[r]) + fabs(col1[r]) : fabs(col0[r]));
    double remax = emax > 0 ? 1 / emax : 1;
    for (int64_t r = 0; r < n; r++) {
      if (pair) E_(q, r, ki - 1) = col0[r] * remax, E_(q, r, ki) = col1[r] * remax;
      else E_(q, r, ki) = col0[r] * remax;
    }
    if (pair) ki--;
  }
}

/* dgeev on the n x n column-major a: eigenvalues (wr, wi) and, with vr,
 * right eigenvectors as LAPACK stores them; work holds 6 n + n^2 doubles.
 * Returns info (0: converged). */
static int64_t geev(double *a, int64_t n, double *wr, double *wi, double *vr, double *work) {
  double *scale = work, *tau = work + n, *x = work + 2 * n, *y = work + 3 * n, *col0 = work + 4 * n,
         *col1 = work + 5 * n, *q = vr ? vr : work + 6 * n;
  int64_t ilo, ihi;
  balance(a, n, &ilo, &ihi, scale);
  hessenberg(a, n, ilo, ihi, q, tau, x);
  for (int64_t i = 0; i < n; i++)
    if (i < ilo || i > ihi) wr[i] = E_(a, i, i), wi[i] = 0;
  int64_t info = hessenberg_qr(a, n, ilo, ihi, wr, wi, vr != NULL, vr ? q : NULL);
  if (info || !vr) return info;
  schur_vectors(a, n, vr, x, y, col0, col1);
  for (int64_t i = ilo; i <= ihi && ilo != ihi; i++) /* dgebak: scaling, then the permutations */
    for (int64_t c = 0; c < n; c++) E_(vr, i, c) *= scale[i];
  for (int64_t ii = 0; ii < n; ii++) {
    int64_t i = ii;
    if (i >= ilo && i <= ihi) continue;
    if (i < ilo) i = ilo - 1 - ii;
    int64_t k = (int64_t)scale[i];
    if (k == i) continue;
    for (int64_t c = 0; c < n; c++) {
      double t = E_(vr, i, c);
      E_(vr, i, c) = E_(vr, k, c), E_(vr, k, c) = t;
    }
  }
  for (int64_t i = 0; i < n; i++) { /* unit 2-norm; a pair's largest component real */
    if (wi[i] == 0) {
      double nrm = 0;
      for (int64_t r = 0; r < n; r++) nrm = hypot(nrm, E_(vr, r, i));
      for (int64_t r = 0; r < n && nrm > 0; r++) E_(vr, r, i) /= nrm;
    } else if (wi[i] > 0) {
      double n0 = 0, n1 = 0;
      for (int64_t r = 0; r < n; r++) n0 = hypot(n0, E_(vr, r, i)), n1 = hypot(n1, E_(vr, r, i + 1));
      double scl = 1 / pythag(n0, n1);
      int64_t big = 0;
      double most = -1;
      for (int64_t r = 0; r < n; r++) {
        E_(vr, r, i) *= scl, E_(vr, r, i + 1) *= scl;
        double m2 = E_(vr, r, i) * E_(vr, r, i) + E_(vr, r, i + 1) * E_(vr, r, i + 1);
        if (m2 > most) most = m2, big = r;
      }
      double f = E_(vr, big, i), g = E_(vr, big, i + 1), cs = 1, sn = 0; /* dlartg */
      if (f == 0 && g != 0) {
        cs = 0, sn = 1;
      } else if (g != 0) {
        double r = hypot(f, g);
        cs = f / r, sn = g / r;
        if (fabs(f) > fabs(g) && cs < 0) cs = -cs, sn = -sn;
      }
      rotate(n, &E_(vr, 0, i), 1, &E_(vr, 0, i + 1), 1, cs, sn);
      E_(vr, big, i + 1) = 0;
    }
  }
  return 0;
}

/* linalg_eig(A) -> (eigenvalues, eigenvectors) and _linalg_eigvals(A)
 * (vectors: false): complex results of a real A, as PyTorch makes them of
 * LAPACK's: w = wr + i wi; a real eigenvalue's vector is its column, a
 * pair's are column i +- i column i+1. */
static int eig_run(const alloy_kernel_call *c, bool vectors) {
  const alloy_kernel_tensor *a = ref_tensor(c, "self");
  if (alloy_dtype_is_complex(a->dtype)) return ref_fail(c, "linalg.eig: complex matrices are not supported by the reference backend");
  int64_t n = a->sizes[a->rank - 1], nb = ref_batch_count(a, 2), bidx[16] = {0};
  int br = a->rank - 2, status = 0;
  double *m = malloc(sizeof *m * (size_t)(n * n + 1)), *vr = malloc(sizeof *vr * (size_t)(n * n + 1));
  double *wr = malloc(sizeof *wr * (size_t)(n + 1)), *wi = malloc(sizeof *wi * (size_t)(n + 1));
  double *work = malloc(sizeof *work * (size_t)(6 * n + n * n + 1)), *rm = malloc(sizeof *rm * (size_t)(n * n + 1));
  if (!m || !vr || !wr || !wi || !work || !rm) status = ref_fail(c, "linalg.eig: out of memory");
  for (int64_t b = 0; b < nb && !status; b++, ref_next_index(bidx, a->sizes, br)) {
    ref_mat_load(ref_mat_at(a, false, bidx, br), rm);
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) {
        if (!isfinite(rm[i * n + j])) status = ref_fail(c, "linalg.eig: input tensor should not contain infs or NaNs.");
        m[i + j * n] = rm[i * n + j];
      }
    if (status) break;
    if (geev(m, n, wr, wi, vectors ? vr : NULL, work))
      status = ref_fail(c, "linalg.eig: The algorithm failed to converge because the input matrix is ill-conditioned "
                           "or has too many repeated eigenvalues");
    if (status) break;
    ref_mview wv = ref_mat_at(&c->outputs[0], true, bidx, br);
    for (int64_t i = 0; i < n; i++) store_c(&c->outputs[0], wv.base + i * wv.rs, wr[i] + wi[i] * I);
    if (!vectors) continue;
    ref_mview vv = ref_mat_at(&c->outputs[1], false, bidx, br);
    for (int64_t j = 0; j < n; j++) {
      bool first = wi[j] > 0, second = wi[j] < 0;
      for (int64_t r = 0; r < n; r++) {
        double complex z = first ? E_(vr, r, j) + E_(vr, r, j + 1) * I
                           : second ? E_(vr, r, j - 1) - E_(vr, r, j) * I
                                    : E_(vr, r, j);
        store_c(&c->outputs[1], vv.base + r * vv.rs + j * vv.cs, z);
      }
    }
  }
  free(m), free(vr), free(wr), free(wi), free(work), free(rm);
  return status;
}

static int k_eig(const alloy_kernel_call *c) { return eig_run(c, true); }
static int k_eigvals(const alloy_kernel_call *c) { return eig_run(c, false); }

#undef E_

/* ---- the table -------------------------------------------------------------- */

const alloy_kernel ref_kernels_spectral[] = {
    REF_KERNEL("aten._linalg_svd.default", k_svd),
    REF_KERNEL("prims.svd.default", k_svd),
    REF_KERNEL("aten._linalg_eigh.default", k_eigh),
    REF_KERNEL("aten.linalg_eig.default", k_eig),
    REF_KERNEL("aten._linalg_eigvals.default", k_eigvals),
    REF_KERNEL("aten._fft_r2c.default", k_aten_fft_r2c),
    REF_KERNEL("aten._fft_c2c.default", k_aten_fft_c2c),
    REF_KERNEL("aten._fft_c2r.default", k_aten_fft_c2r),
    REF_KERNEL("prims.fft_r2c.default", k_fft_r2c),
    REF_KERNEL("prims.fft_c2c.default", k_fft_c2c),
    REF_KERNEL("prims.fft_c2r.default", k_fft_c2r),
    {NULL, NULL, NULL, NULL},
};
