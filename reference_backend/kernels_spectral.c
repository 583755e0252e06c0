/*
 * reference_backend/kernels_shape_2.c: reference kernels, shape family,
 * part 2: linear algebra and FFT prims: prims.svd (one-sided Jacobi in
 * double) and prims.fft_r2c, fft_c2c and fft_c2r (a direct DFT per dim, in double complex). They share
 * the views and walks of kernels_shape.h with part 1 (kernels_shape.c).
 */
#include <complex.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "reference_backend/kernels_shape.h"
#include "reference_backend/ref.h"

/* ---- prims.svd ------------------------------------------------------------
 * One-sided Jacobi (Hestenes) in double: the columns of a tall matrix B
 * (m >= n) are rotated until orthogonal, B V = U S; a wide matrix is done
 * transposed. Columns of U that S leaves undetermined (zero singular values,
 * full_matrices) are completed by Gram-Schmidt on the unit vectors. Singular
 * values come out descending; signs are Jacobi's (SVD's are not unique). */

/* Makes column j of the m x cols matrix q (column-major) a unit vector
 * orthogonal to columns 0..j-1. */
static void complete_column(double *q, int64_t m, int64_t j) {
  for (int64_t e = 0; e < m; e++) {
    double *v = q + j * m;
    for (int64_t i = 0; i < m; i++) v[i] = i == e;
    for (int pass = 0; pass < 2; pass++)
      for (int64_t k = 0; k < j; k++) {
        double dot = 0;
        for (int64_t i = 0; i < m; i++) dot += q[k * m + i] * v[i];
        for (int64_t i = 0; i < m; i++) v[i] -= dot * q[k * m + i];
      }
    double norm = 0;
    for (int64_t i = 0; i < m; i++) norm += v[i] * v[i];
    if (norm > 1e-6) {
      for (int64_t i = 0; i < m; i++) v[i] /= sqrt(norm);
      return;
    }
  }
}

/* b: m x n column-major (m >= n), destroyed. u: m x ucols, s: n, v: n x n,
 * all column-major. */
static void svd_tall(double *b, int64_t m, int64_t n, double *u, int64_t ucols, double *s, double *v) {
  for (int64_t i = 0; i < n * n; i++) v[i] = i % (n + 1) == 0;
  for (int sweep = 0; sweep < 100; sweep++) {
    bool rotated = false;
    for (int64_t p = 0; p < n; p++)
      for (int64_t q = p + 1; q < n; q++) {
        double al = 0, be = 0, ga = 0, *bp = b + p * m, *bq = b + q * m;
        for (int64_t i = 0; i < m; i++) al += bp[i] * bp[i], be += bq[i] * bq[i], ga += bp[i] * bq[i];
        if (fabs(ga) <= 1e-15 * sqrt(al * be) || ga == 0) continue;
        rotated = true;
        double zeta = (be - al) / (2 * ga);
        double t = (zeta >= 0 ? 1.0 : -1.0) / (fabs(zeta) + sqrt(1 + zeta * zeta));
        double cs = 1 / sqrt(1 + t * t), sn = cs * t;
        for (int64_t i = 0; i < m; i++) {
          double x = bp[i], y = bq[i];
          bp[i] = cs * x - sn * y, bq[i] = sn * x + cs * y;
        }
        for (int64_t i = 0; i < n; i++) {
          double x = v[p * n + i], y = v[q * n + i];
          v[p * n + i] = cs * x - sn * y, v[q * n + i] = sn * x + cs * y;
        }
      }
    if (!rotated) break;
  }
  for (int64_t j = 0; j < n; j++) {
    double norm = 0;
    for (int64_t i = 0; i < m; i++) norm += b[j * m + i] * b[j * m + i];
    s[j] = sqrt(norm);
  }
  /* descending order: selection sort of columns of b and v with s */
  for (int64_t j = 0; j < n; j++) {
    int64_t best = j;
    for (int64_t k = j + 1; k < n; k++)
      if (s[k] > s[best]) best = k;
    if (best == j) continue;
    double t = s[j];
    s[j] = s[best], s[best] = t;
    for (int64_t i = 0; i < m; i++) t = b[j * m + i], b[j * m + i] = b[best * m + i], b[best * m + i] = t;
    for (int64_t i = 0; i < n; i++) t = v[j * n + i], v[j * n + i] = v[best * n + i], v[best * n + i] = t;
  }
  double tiny = (s[0] > 0 ? s[0] : 1) * 1e-13 * (double)m;
  for (int64_t j = 0; j < ucols; j++) {
    if (j < n && s[j] > tiny)
      for (int64_t i = 0; i < m; i++) u[j * m + i] = b[j * m + i] / s[j];
    else
      complete_column(u, m, j);
  }
}

static int k_svd(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *a = &c->inputs[0], *uo = &c->outputs[0], *so = &c->outputs[1], *vo = &c->outputs[2];
  if (c->num_outputs != 3 || a->rank < 2 || !alloy_dtype_is_float(a->dtype))
    return ref_shape_fail(c, "expects a real matrix");
  bool full = false;
  ref_bool(c, "full_matrices", &full);
  int r = a->rank;
  int64_t m = a->sizes[r - 2], n = a->sizes[r - 1], k = m < n ? m : n, batch = ref_shape_numel_of(a->sizes, r - 2);
  bool wide = m < n;
  int64_t tm = wide ? n : m, tn = wide ? m : n; /* the tall problem */
  int64_t ucols = full ? tm : tn;
  double *b = malloc(sizeof *b * (size_t)(tm * tn + 1)), *u = malloc(sizeof *u * (size_t)(tm * ucols + 1));
  double *s = malloc(sizeof *s * (size_t)(tn + 1)), *v = malloc(sizeof *v * (size_t)(tn * tn + 1));
  if (!b || !u || !s || !v) {
    free(b), free(u), free(s), free(v);
    return ref_shape_fail(c, "out of memory");
  }
  for (int64_t bi = 0; bi < batch; bi++) {
    /* batch offsets of every operand from the batch index */
    int64_t ao = 0, uoff = 0, soff = 0, voff = 0, rem = bi;
    for (int d = r - 3; d >= 0; d--) {
      int64_t i = rem % a->sizes[d];
      rem /= a->sizes[d];
      ao += i * a->strides[d], uoff += i * uo->strides[d], soff += i * so->strides[d], voff += i * vo->strides[d];
    }
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double x = ref_load_f(a->data, a->dtype, ao + i * a->strides[r - 2] + j * a->strides[r - 1]);
        if (wide) b[i * tm + j] = x; /* B = A^T: column i of B is row i of A */
        else b[j * tm + i] = x;
      }
    svd_tall(b, tm, tn, u, ucols, s, v);
    for (int64_t j = 0; j < k; j++) ref_store_f(so->data, so->dtype, soff + j * so->strides[r - 2], s[j]);
    /* tall: A = U S V^T. wide: A^T = U' S V'^T, so U = V' and Vh = U'^T. */
    const double *left = wide ? v : u, *right = wide ? u : v;
    int64_t lrows = m, lcols = uo->sizes[r - 1], rrows = vo->sizes[r - 2];
    for (int64_t i = 0; i < lrows; i++)
      for (int64_t j = 0; j < lcols; j++)
        ref_store_f(uo->data, uo->dtype, uoff + i * uo->strides[r - 2] + j * uo->strides[r - 1], left[j * m + i]);
    for (int64_t i = 0; i < rrows; i++)
      for (int64_t j = 0; j < n; j++)
        ref_store_f(vo->data, vo->dtype, voff + i * vo->strides[r - 2] + j * vo->strides[r - 1], right[i * n + j]);
  }
  free(b), free(u), free(s), free(v);
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
static int k_aten_fft_c2r(const alloy_kernel_call *c) { return aten_fft(c, 2); }

/* ---- the table -------------------------------------------------------------- */

const alloy_kernel ref_kernels_shape_2[] = {
    REF_KERNEL("prims.svd.default", k_svd),
    REF_KERNEL("aten._fft_r2c.default", k_aten_fft_r2c),
    REF_KERNEL("aten._fft_c2r.default", k_aten_fft_c2r),
    REF_KERNEL("prims.fft_r2c.default", k_fft_r2c),
    REF_KERNEL("prims.fft_c2c.default", k_fft_c2c),
    REF_KERNEL("prims.fft_c2r.default", k_fft_c2r),
    {NULL, NULL, NULL, NULL},
};
