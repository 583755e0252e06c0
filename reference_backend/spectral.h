/*
 * reference_backend/spectral.h: the SVD the reference kernels share,
 * defined once in reference_backend/kernels_spectral.c (one-sided Jacobi
 * in double) and used there (_linalg_svd, prims.svd) and by the
 * pseudo-inverse and least squares of kernels_linalg.c.
 */
#ifndef ALLOY_REF_SPECTRAL_H
#define ALLOY_REF_SPECTRAL_H

#include <stdbool.h>
#include <stdint.h>

/* The SVD a = U diag(sv) Vt of the row-major m x n a: u m x uc, sv the
 * min(m, n) singular values descending, vt vr x n, with uc = vr = min(m, n)
 * (thin) or uc = m, vr = n (full: the columns of U and rows of Vt past the
 * rank completed to orthonormal bases). Signs are Jacobi's, not LAPACK's.
 * false when memory ran out (nothing written then). */
bool ref_svd(const double *a, int64_t m, int64_t n, bool full, double *u, double *sv, double *vt);

#endif
