/*
 * reference_backend/kernels_spectral.c: reference kernels of the spectral
 * decompositions and transforms, in double: the SVD (one-sided Jacobi,
 * the one implementation Alloy has: _linalg_svd, prims.svd, and through
 * ref_svd (spectral.h) pinv and lstsq in kernels_linalg.c), the symmetric
 * eigendecomposition (_linalg_eigh, cyclic Jacobi), and the FFTs (ATen's
 * _fft_r2c, _fft_c2c and _fft_c2r, which normalize, and the prims, which
 * do not), a direct DFT per dim in double complex. The FFTs use the views
 * and walks of kernels_shape.h; the matrices are read and written with the
 * helpers of ref.h (kernels_linalg.c).
 */
#include <complex.h>
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
        for (int64_t i = 0; i < m; i++) {
          double x = u[i * n + p], y = u[i * n + q];
          u[i * n + p] = cs * x - sn * y;
          u[i * n + q] = sn * x + cs * y;
        }
        for (int64_t i = 0; i < n; i++) {
          double x = v[i * n + p], y = v[i * n + q];
          v[i * n + p] = cs * x - sn * y;
          v[i * n + q] = sn * x + cs * y;
        }
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
          for (int64_t k = 0; k < n; k++) { /* S = J^T S J */
            double x = S[k * n + p], y = S[k * n + q];
            S[k * n + p] = cs * x - sn * y;
            S[k * n + q] = sn * x + cs * y;
          }
          for (int64_t k = 0; k < n; k++) {
            double x = S[p * n + k], y = S[q * n + k];
            S[p * n + k] = cs * x - sn * y;
            S[q * n + k] = sn * x + cs * y;
          }
          for (int64_t k = 0; k < n; k++) {
            double x = V[k * n + p], y = V[k * n + q];
            V[k * n + p] = cs * x - sn * y;
            V[k * n + q] = sn * x + cs * y;
          }
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
  double complex *tmp = malloc(sizeof *tmp * (size_t)n);
  if (!tmp) return 1;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t q = 0; q < inner; q++) {
      double complex *x = buf + o * n * inner + q;
      for (int64_t k = 0; k < n; k++) {
        double complex acc = 0;
        for (int64_t j = 0; j < n; j++) {
          double ang = sign * 2.0 * M_PI * (double)((j * k) % n) / (double)n;
          acc += x[j * inner] * (cos(ang) + sin(ang) * I);
        }
        tmp[k] = acc;
      }
      for (int64_t k = 0; k < n; k++) x[k * inner] = tmp[k];
    }
  free(tmp);
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

/* ---- the table -------------------------------------------------------------- */

const alloy_kernel ref_kernels_spectral[] = {
    REF_KERNEL("aten._linalg_svd.default", k_svd),
    REF_KERNEL("prims.svd.default", k_svd),
    REF_KERNEL("aten._linalg_eigh.default", k_eigh),
    REF_KERNEL("aten._fft_r2c.default", k_aten_fft_r2c),
    REF_KERNEL("aten._fft_c2c.default", k_aten_fft_c2c),
    REF_KERNEL("aten._fft_c2r.default", k_aten_fft_c2r),
    REF_KERNEL("prims.fft_r2c.default", k_fft_r2c),
    REF_KERNEL("prims.fft_c2c.default", k_fft_c2c),
    REF_KERNEL("prims.fft_c2r.default", k_fft_c2r),
    {NULL, NULL, NULL, NULL},
};
