/*
 * reference_backend/special_functions.h: private to the pointwise kernels:
 * the special functions (gamma, error-function, incomplete gamma, Bessel
 * and Airy functions, orthogonal polynomials) that special_functions.c
 * defines and kernels_pointwise.c's table calls.
 */
#ifndef ALLOY_REF_SPECIAL_FUNCTIONS_H
#define ALLOY_REF_SPECIAL_FUNCTIONS_H

#include <stdbool.h>
#include <stdint.h>

double ref_digamma(double x);
double ref_trigamma(double x, bool single);
double ref_polygamma(int64_t n, double x, bool single);
double ref_zeta(double s, double q);
double ref_erfinv(double y);
double ref_ndtri(double p);
double ref_erfcx(double x);
double ref_log_ndtr(double x);
double ref_igamma(double a, double x);
double ref_igammac(double a, double x);
double ref_bessel_j0(double x);
double ref_bessel_j1(double x);
double ref_bessel_y0(double x);
double ref_bessel_y1(double x);
double ref_bessel_i0(double x);
double ref_bessel_i0e(double x);
double ref_bessel_i1(double x);
double ref_bessel_i1e(double x);
double ref_bessel_k0(double x);
double ref_bessel_k0e(double x);
double ref_bessel_k1(double x);
double ref_bessel_k1e(double x);
double ref_airy_ai(double x);
double ref_spherical_bessel_j0(double x);
double ref_chebyshev_t(double x, double n, bool single);
double ref_chebyshev_u(double x, double n, bool single);
double ref_chebyshev_v(double x, double n, bool single);
double ref_chebyshev_w(double x, double n, bool single);
double ref_shifted_chebyshev_t(double x, double n, bool single);
double ref_shifted_chebyshev_u(double x, double n, bool single);
double ref_shifted_chebyshev_v(double x, double n, bool single);
double ref_shifted_chebyshev_w(double x, double n, bool single);
double ref_hermite_h(double x, double n, bool single);
double ref_hermite_he(double x, double n, bool single);
double ref_laguerre_l(double x, double n, bool single);
double ref_legendre_p(double x, double n, bool single);

#endif
