/*
 * reference_backend/special_functions.c: the special functions behind the
 * elementwise kernels of kernels_pointwise.c (which holds their table),
 * declared in special_functions.h: the gamma family, the error-function
 * family, incomplete gamma, Bessel and Airy functions, and the orthogonal
 * polynomials.
 *
 * Where C's <math.h> has the function and it agrees with PyTorch it is used
 * (erf, erfc, lgamma, j0, j1, y0, y1). The others are computed here in
 * double by plain, well-conditioned methods chosen for accuracy rather than
 * speed (power series, asymptotic expansions, Newton's method, continued
 * fractions, the trapezoidal rule on a doubly-exponentially decaying
 * integral), so that they are right to about 1e-14 relative: well inside the
 * float32 tolerance PyTorch's own float kernels are checked with. What is
 * PyTorch's is the behaviour at the edges of the domain (poles, negative
 * arguments, infinities), which each function follows and says so.
 *
 * The polynomials are the exception: PyTorch evaluates them by their
 * three-term recurrences in the tensor's precision, and at large degree the
 * recurrence's rounding is part of the result; with `single` every step is
 * rounded to float32 as PyTorch's float kernel does.
 */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "reference_backend/special_functions.h"

#define SQRT_PI 1.7724538509055160273

/* ---- gamma family ------------------------------------------------------- */

/* psi(x): recurrence up to x >= 10, then the asymptotic series (Bernoulli
 * numbers B2k / 2k). PyTorch's edges: psi(+-0) = -+inf, NaN at the
 * negative integers and -inf; negative x by reflection. */
double ref_digamma(double x) {
  if (x == 0) return copysign(INFINITY, -x);
  if (isnan(x)) return x;
  if (x < 0) {
    if (x == trunc(x)) return NAN;
    /* tan of the fractional part: pi * x itself loses digits for large x */
    return ref_digamma(1 - x) - M_PI / tan(M_PI * (x - trunc(x)));
  }
  if (isinf(x)) return x;
  double acc = 0;
  while (x < 10) {
    acc -= 1 / x;
    x += 1;
  }
  double z = 1 / (x * x);
  double tail = z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 -
                z * (1.0 / 132 - z * (691.0 / 32760 - z / 12))))));
  return acc + log(x) - 0.5 / x - tail;
}

/* psi'(x) in float arithmetic, as PyTorch's float kernel computes it: near
 * the poles the float product pi * x dominates the result, so a float32
 * result must round it the same way. Reflection below 1/2, six steps of
 * recurrence, then the asymptotic series. */
static float trigamma_single(float x) {
  const float pi = (float)M_PI;
  float sign = 1, acc = 0;
  if (x < 0.5f) {
    float s = sinf(pi * x);
    sign = -1;
    acc -= pi * pi / (s * s);
    x = 1 - x;
  }
  for (int i = 0; i < 6; i++) {
    acc += 1 / (x * x);
    x += 1;
  }
  float z = 1 / (x * x);
  acc += (1 + 1 / (2 * x) + z * (1.f / 6 - z * (1.f / 30 - z * (1.f / 42)))) / x;
  return sign * acc;
}

/* psi'(x): reflection below 1/2 (so a pole gives +inf, as PyTorch's does),
 * recurrence up to 20, asymptotic series. */
double ref_trigamma(double x, bool single) {
  if (single) return trigamma_single((float)x);
  if (isnan(x)) return x;
  if (x < 0.5) {
    double s = sin(M_PI * x);
    return M_PI * M_PI / (s * s) - ref_trigamma(1 - x, false);
  }
  double acc = 0;
  while (x < 20) {
    acc += 1 / (x * x);
    x += 1;
  }
  double z = 1 / (x * x);
  double tail = (1 + 0.5 / x + z * (1.0 / 6 - z * (1.0 / 30 - z * (1.0 / 42 - z * (1.0 / 30 -
                z * (5.0 / 66 - z * (691.0 / 2730 - z * 7.0 / 6))))))) / x;
  return acc + tail;
}

/* B_2j / (2j)!: the Euler-Maclaurin coefficients. */
static const double bernoulli_over_factorial[] = {
    8.3333333333333329e-02,  -1.3888888888888889e-03, 3.3068783068783071e-05,
    -8.2671957671957675e-07, 2.08767569878681e-08,    -5.2841901386874932e-10,
    1.3382536530684679e-11,  -3.3896802963225827e-13, 8.5860620562778452e-15,
    -2.1748686985580619e-16, 5.5090028283602295e-18,  -1.3954464685812522e-19,
};

/* An infinite s or q through the steps of PyTorch's (Cephes') zeta: its
 * direct sum stops once a term is below the sum's epsilon, then its
 * Euler-Maclaurin tail meets 0 * inf. zeta(inf, q) is inf for |q| < 1, 1
 * at q = 1 and NaN beyond; zeta(s, inf) is NaN. */
static double zeta_infinite(double s, double q) {
  const double eps = DBL_EPSILON / 2;
  double sum = pow(q, -s), a = q, b = 0;
  for (int i = 0; i < 9 || a <= 9; i++) {
    a += 1;
    b = pow(a, -s);
    sum += b;
    if (-eps * sum < b && b < eps * sum) return sum;
  }
  double w = a, rising = 1, k = 0;
  sum += b * w / (s - 1) - 0.5 * b;
  for (int j = 0; j < 12; j++) {
    rising *= s + k;
    b /= w;
    double t = rising * b * bernoulli_over_factorial[j];
    sum += t;
    if (fabs(t / sum) < eps) return sum;
    k += 1;
    rising *= s + k;
    b /= w;
    k += 1;
  }
  return sum;
}

/* Hurwitz zeta(s, q) = sum_k (q + k)^-s: the first terms summed directly
 * until q + N is large against s, the rest by Euler-Maclaurin. PyTorch's
 * edges: inf at s = 1, NaN for s < 1, inf at q a non-positive integer, NaN
 * for q < 0 with s not an integer. */
double ref_zeta(double s, double q) {
  if (s == 1) return INFINITY;
  if (s < 1) return NAN;
  if (q <= 0) {
    if (q == floor(q)) return INFINITY;
    if (s != floor(s)) return NAN;
  }
  if (isnan(s) || isnan(q)) return NAN;
  if (isinf(s) || isinf(q)) return zeta_infinite(s, q);
  double n = floor(12 + (q < 0 ? ceil(-q) : 0) + fmin(s, 3e4) / 3);
  if (n > 1e6) n = 1e6;
  double sum = 0;
  for (double k = 0; k < n; k++) sum += pow(q + k, -s);
  double a = q + n;
  sum += pow(a, 1 - s) / (s - 1) + 0.5 * pow(a, -s);
  /* term j: B2j/(2j)! * s (s+1) ... (s+2j-2) * a^(-s-2j+1) */
  double rising = s, apow = pow(a, -s - 1);
  for (int j = 0; j < 12; j++) {
    double t = bernoulli_over_factorial[j] * rising * apow;
    sum += t;
    if (fabs(t) < 1e-17 * fabs(sum)) break;
    rising *= (s + 2 * j + 1) * (s + 2 * j + 2);
    apow /= a * a;
  }
  return sum;
}

/* polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 2. */
double ref_polygamma(int64_t n, double x, bool single) {
  if (n == 0) return ref_digamma(x);
  if (n == 1) return ref_trigamma(x, single);
  return (n % 2 ? 1.0 : -1.0) * exp(lgamma((double)n + 1)) * ref_zeta((double)n + 1, x);
}

/* ---- error-function family ---------------------------------------------- */

/* exp(x*x) without the rounding of x*x: x*x = hi + lo exactly. */
static double exp_square(double x) {
  double hi = x * x, lo = fma(x, x, -hi);
  return exp(hi) * (1 + lo);
}

/* erfcx(x) = exp(x^2) erfc(x). Directly while erfc(x) is a normal number,
 * by its asymptotic series beyond; negative x by reflection (PyTorch: inf
 * below -26.7). */
double ref_erfcx(double x) {
  if (isnan(x)) return x;
  if (x < 0) return x < -26.7 ? INFINITY : 2 * exp_square(x) - ref_erfcx(-x);
  if (x < 26) return exp_square(x) * erfc(x);
  if (x > 1e8) return 1 / (x * SQRT_PI);
  double sum = 1, term = 1, h = 1 / (2 * x * x);
  for (int k = 1; k < 40; k++) {
    term *= -(2 * k - 1) * h;
    sum += term;
    if (fabs(term) < 1e-17) break;
  }
  return sum / (x * SQRT_PI);
}

/* log of the standard normal CDF, through erfcx in the left tail. */
double ref_log_ndtr(double x) {
  double t = x * M_SQRT1_2;
  if (x < -1) return log(ref_erfcx(-t) / 2) - t * t;
  return log1p(-erfc(t) / 2);
}

/* A first guess at erfinv(1 - z) good to about 2e-3 (Winitzki's), written
 * with log(1 - y^2) = log(z) + log(2 - z) so that tiny z keeps its digits. */
static double erfinv_guess(double z) {
  const double a = 0.147;
  double l = log(z) + log(2 - z), u = 2 / (M_PI * a) + l / 2;
  return sqrt(sqrt(u * u - l / a) - u);
}

/* t >= 0 with erfc(t) = z, 0 < z <= 1: Newton's method on log erfc, whose
 * derivative -2 / (sqrt(pi) erfcx(t)) stays well scaled however small z. */
static double erfc_inv_upper(double z) {
  double t = erfinv_guess(z), lz = log(z);
  for (int i = 0; i < 60; i++) {
    double e = ref_erfcx(t);
    double step = (log(e) - t * t - lz) * SQRT_PI * e / 2;
    t += step;
    if (fabs(step) <= 1e-16 * fabs(t)) break;
  }
  return t;
}

/* t with erfc(t) = z, 0 < z < 2. */
static double erfc_inv(double z) {
  return z <= 1 ? erfc_inv_upper(z) : -erfc_inv_upper(2 - z);
}

/* erfinv: Newton's method on erf near 0, on erfc towards +-1 (where 1 - |y|
 * is exact). PyTorch's edges: +-inf at +-1, NaN beyond. */
double ref_erfinv(double y) {
  if (isnan(y)) return y;
  double ay = fabs(y);
  if (ay > 1) return NAN;
  if (ay == 1) return copysign(INFINITY, y);
  if (ay >= 0.5) return copysign(erfc_inv_upper(1 - ay), y);
  double x = copysign(erfinv_guess(1 - ay), y);
  for (int i = 0; i < 8; i++) {
    double step = (erf(x) - y) * SQRT_PI / 2 * exp(x * x);
    x -= step;
    if (fabs(step) <= 1e-16 * fabs(x)) break;
  }
  return x;
}

/* The inverse of the standard normal CDF: -sqrt(2) erfc^-1(2p). */
double ref_ndtri(double p) {
  if (isnan(p)) return p;
  if (p == 0) return -INFINITY;
  if (p == 1) return INFINITY;
  if (p < 0 || p > 1) return NAN;
  return -M_SQRT2 * erfc_inv(2 * p);
}

/* ---- incomplete gamma ----------------------------------------------------- */

/* P(a, x) by its power series: converges fast for x < a + 1. */
static double igamma_series(double a, double x) {
  double sum = 1, term = 1;
  for (int n = 1; n < 100000; n++) {
    term *= x / (a + n);
    sum += term;
    if (term < 1e-17 * sum) break;
  }
  return exp(a * log(x) - x - lgamma(a + 1)) * sum;
}

/* Q(a, x) by its continued fraction (modified Lentz): for x >= a + 1. */
static double igammac_fraction(double a, double x) {
  const double tiny = 1e-300;
  double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (int i = 1; i < 100000; i++) {
    double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (fabs(c) < tiny) c = tiny;
    d = 1 / d;
    double delta = d * c;
    h *= delta;
    if (fabs(delta - 1) < 1e-16) break;
  }
  return exp(a * log(x) - x - lgamma(a)) * h;
}

/* The edges PyTorch (after SciPy) gives both: NaN outside a, x >= 0; a = 0
 * or an infinite argument decide it outright. Returns true with *out set
 * when the edge decides P (lower) or Q. They come before any NaN check,
 * as in PyTorch: igamma(NaN, 0) is 0, igammac(inf, NaN) is 1. */
static bool igamma_edge(double a, double x, bool lower, double *out) {
  if (x < 0 || a < 0) *out = NAN;
  else if (a == 0) *out = x > 0 ? (lower ? 1.0 : 0.0) : NAN;
  else if (x == 0) *out = lower ? 0.0 : 1.0;
  else if (isinf(a)) *out = isinf(x) ? NAN : (lower ? 0.0 : 1.0);
  else if (isinf(x)) *out = lower ? 1.0 : 0.0;
  else return false;
  return true;
}

double ref_igamma(double a, double x) {
  double r;
  if (igamma_edge(a, x, true, &r)) return r;
  if (isnan(a) || isnan(x)) return NAN;
  return x < a + 1 ? igamma_series(a, x) : 1 - igammac_fraction(a, x);
}

double ref_igammac(double a, double x) {
  double r;
  if (igamma_edge(a, x, false, &r)) return r;
  if (isnan(a) || isnan(x)) return NAN;
  return x < a + 1 ? 1 - igamma_series(a, x) : igammac_fraction(a, x);
}

/* ---- Bessel and Airy functions -------------------------------------------- */

/* J and Y from C (POSIX). PyTorch's own series give NaN at +-inf, -inf at
 * Y(0) and NaN for Y of a negative argument. */
double ref_bessel_j0(double x) { return isinf(x) ? NAN : j0(x); }
double ref_bessel_j1(double x) { return isinf(x) ? NAN : j1(x); }
double ref_bessel_y0(double x) {
  if (isinf(x)) return NAN;
  return x == 0 ? -INFINITY : x < 0 ? NAN : y0(x);
}
double ref_bessel_y1(double x) {
  if (isinf(x)) return NAN;
  return x == 0 ? -INFINITY : x < 0 ? NAN : y1(x);
}

/* exp(-x) I_nu(x) for x >= 0 (nu = 0 or 1): the power series (all terms
 * positive, so no cancellation) up to 30, the asymptotic series beyond,
 * whose terms shrink until k ~ 2x. */
static double bessel_i_scaled(int nu, double x) {
  if (isinf(x)) return 0;
  if (x <= 30) {
    double h = x / 2, q = h * h, term = nu ? h : 1.0, sum = term;
    for (int k = 1; k < 500 && term > 1e-17 * sum; k++) {
      term *= q / (k * (double)(k + nu));
      sum += term;
    }
    return sum * exp(-x);
  }
  double mu = 4.0 * nu * nu, term = 1, sum = 1;
  for (int k = 1; k < 200; k++) {
    double next = term * -(mu - (2.0 * k - 1) * (2.0 * k - 1)) / (k * 8 * x);
    if (fabs(next) >= fabs(term)) break;
    term = next;
    sum += term;
    if (fabs(term) < 1e-17 * fabs(sum)) break;
  }
  return sum / sqrt(2 * M_PI * x);
}

/* I0 and I1 are NaN at +-inf as PyTorch's: its Chebyshev form
 * exp(x) * c / sqrt(x) is inf / inf there. */
double ref_bessel_i0(double x) {
  if (isnan(x) || isinf(x)) return NAN;
  x = fabs(x);
  return bessel_i_scaled(0, x) * exp(x);
}
double ref_bessel_i0e(double x) { return isnan(x) ? x : bessel_i_scaled(0, fabs(x)); }
double ref_bessel_i1(double x) {
  if (isnan(x) || isinf(x)) return NAN;
  double ax = fabs(x);
  return copysign(bessel_i_scaled(1, ax) * exp(ax), x);
}
double ref_bessel_i1e(double x) { return isnan(x) ? x : copysign(bessel_i_scaled(1, fabs(x)), x); }

/* exp(x) K_nu(x), x > 0, any real nu: the trapezoidal rule on
 *   integral_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt,
 * which converges geometrically in the step for an integrand analytic in a
 * strip; the step shrinks like 1/sqrt(x) as the integrand narrows. */
static double bessel_k_scaled(double nu, double x) {
  double h = fmin(0.2, 0.6 / sqrt(x)), sum = 0.5;
  for (int k = 1; k < 100000; k++) {
    double t = k * h, s = sinh(t / 2), e = 2 * x * s * s; /* x (cosh t - 1) */
    if (e > 745) break;
    double term = exp(-e) * cosh(nu * t);
    sum += term;
    if (term < 1e-18 * sum && e > 1) break;
  }
  return sum * h;
}

/* K_nu(x), times e^x when scaled, with PyTorch's edges: inf at 0, NaN for
 * negative x, 0 at inf. */
static double bessel_k(double nu, double x, bool scaled) {
  if (isnan(x)) return x;
  if (x == 0) return INFINITY;
  if (x < 0) return NAN;
  if (isinf(x)) return 0;
  double k = bessel_k_scaled(nu, x);
  return scaled ? k : k * exp(-x);
}

double ref_bessel_k0(double x) { return bessel_k(0, x, false); }
double ref_bessel_k0e(double x) { return bessel_k(0, x, true); }
double ref_bessel_k1(double x) { return bessel_k(1, x, false); }
double ref_bessel_k1e(double x) { return bessel_k(1, x, true); }

/* Ai(x): the Maclaurin series on [-8, 1) (cancellation there costs at most
 * eight digits of sixteen), Ai(x) = sqrt(x/3) K_1/3(zeta) / pi above, and
 * the oscillatory asymptotic expansion (DLMF 9.7.9) below -8. PyTorch's
 * edges: NaN at +-inf, 0 above 103.892. */
double ref_airy_ai(double x) {
  if (isnan(x)) return x;
  if (isinf(x)) return NAN;
  if (x > 103.892) return 0;
  if (x >= 1) {
    double zeta = 2.0 / 3 * x * sqrt(x);
    return sqrt(x / 3) / M_PI * bessel_k_scaled(1.0 / 3, zeta) * exp(-zeta);
  }
  if (x >= -8) {
    /* Ai(x) = Ai(0) f(x) + Ai'(0) g(x) */
    const double ai0 = 0.355028053887817239260, dai0 = -0.258819403792806798405;
    double z = x * x * x, f = 1, g = x, tf = 1, tg = x;
    for (int k = 1; k < 200; k++) {
      tf *= z / ((3.0 * k - 1) * (3.0 * k));
      tg *= z / ((3.0 * k) * (3.0 * k + 1));
      f += tf;
      g += tg;
      if (fabs(tf) < 1e-18 * fabs(f) && fabs(tg) < 1e-18 * (fabs(g) + 1e-300)) break;
    }
    return ai0 * f + dai0 * g;
  }
  double z = -x, zeta = 2.0 / 3 * z * sqrt(z);
  /* u_k = (6k-5)(6k-3)(6k-1) / ((2k-1) 216 k) u_(k-1); P takes the even
   * terms, Q the odd ones, alternating in sign. */
  double u = 1, p = 1, q = 0, zpow = 1, last = INFINITY;
  for (int k = 1; k < 200; k++) {
    u *= (6.0 * k - 5) * (6.0 * k - 3) * (6.0 * k - 1) / ((2.0 * k - 1) * 216 * k);
    zpow /= zeta;
    double t = u * zpow;
    if (t >= last) break;
    last = t;
    int m = k / 2;
    double sgn = m % 2 ? -1.0 : 1.0;
    if (k % 2) q += sgn * t;
    else p += sgn * t;
    if (t < 1e-17) break;
  }
  double phase = zeta - M_PI / 4;
  return (cos(phase) * p + sin(phase) * q) / (SQRT_PI * sqrt(sqrt(z)));
}

/* sin(x) / x, 1 at 0 and 0 at +-inf. */
double ref_spherical_bessel_j0(double x) {
  if (isinf(x)) return 0;
  if (fabs(x) < 1e-4) return 1 - x * x / 6;
  return sin(x) / x;
}

/* ---- orthogonal polynomials ----------------------------------------------- */

/* A step of PyTorch's recurrence, in its precision. */
static double rnd(bool single, double v) { return single ? (double)(float)v : v; }

/* The degree as PyTorch converts it (static_cast<int64_t>): a non-finite or
 * out-of-range n becomes INT64_MIN there (x86), which reads as negative. */
static int64_t degree(double n) {
  return isfinite(n) && fabs(n) < 9.2e18 ? (int64_t)n : INT64_MIN;
}

/* p(n) by p(k+1) = (2 y) p(k) - p(k-1) from p(0) = 1, p(1) = first: the
 * Chebyshev recurrence shared by T, U, V, W and their shifted forms
 * (y = 2x - 1). */
static double chebyshev_recurrence(double y, double first, int64_t n, bool single) {
  if (n == 0) return 1;
  double p = 1, q = first, r = first, y2 = rnd(single, y + y);
  for (int64_t k = 2; k <= n && !isnan(q); k++) {
    r = rnd(single, rnd(single, y2 * q) - p);
    p = q;
    q = r;
  }
  return r;
}

/* The trigonometric forms, in t = acos(y), that PyTorch takes instead of
 * the recurrence for a high degree inside (-1, 1); each caller has its own
 * threshold. Where a quotient's denominator rounds to 0 the form takes the
 * limit or the value at the end it is near. */

/* T(n) = cos(n t). */
static double chebyshev_t_trig(double y, int64_t n, bool single) {
  return rnd(single, cos(rnd(single, n * rnd(single, acos(y)))));
}

/* U(n) = sin((n + 1) t) / sin(t); where sin(t) rounds to 0, the limit
 * (n + 1) cos((n + 1) t) / y. */
static double chebyshev_u_trig(double y, int64_t n, bool single) {
  double t = rnd(single, acos(y)), s = rnd(single, sin(t));
  if (s != 0) return rnd(single, rnd(single, sin(rnd(single, (n + 1) * t))) / s);
  return rnd(single, (n + 1) * rnd(single, cos(rnd(single, (n + 1) * t))) / y);
}

/* V(n) = cos((n + 1/2) t) / cos(t / 2); where sin(t / 2) rounds to 1 (y at
 * -1), V(-1) = (-1)^n (2n + 1). */
static double chebyshev_v_trig(double y, int64_t n, bool single) {
  double t = rnd(single, acos(y)), half = rnd(single, t / 2);
  if (rnd(single, sin(half)) == 1) return n % 2 == 0 ? (double)(n + n + 1) : -(double)(n + n + 1);
  double num = rnd(single, cos(rnd(single, (n + 0.5) * t)));
  return rnd(single, num / rnd(single, cos(half)));
}

/* W(n) = sin((n + 1/2) t) / sin(t / 2); where cos(t / 2) rounds to 1 (y at
 * 1) the caller's value there, at_one: PyTorch's W takes 2n + 1, its
 * shifted W (-1)^n. */
static double chebyshev_w_trig(double y, int64_t n, bool single, double at_one) {
  double t = rnd(single, acos(y)), half = rnd(single, t / 2);
  if (rnd(single, cos(half)) == 1) return at_one;
  double num = rnd(single, sin(rnd(single, (n + 0.5) * t)));
  return rnd(single, num / rnd(single, sin(half)));
}

double ref_chebyshev_t(double x, double nf, bool single) {
  int64_t n = degree(nf);
  if (n < 0) return 0;
  if (fabs(x) == 1) return x > 0 || n % 2 == 0 ? 1 : -1;
  if (n > 6 && fabs(x) < 1) return chebyshev_t_trig(x, n, single);
  return chebyshev_recurrence(x, x, n, single);
}

double ref_chebyshev_u(double x, double nf, bool single) {
  int64_t n = degree(nf);
  if (n < 0) return 0;
  if (fabs(x) == 1) return x > 0 || n % 2 == 0 ? (double)(n + 1) : -(double)(n + 1);
  if (n > 8 && fabs(x) < 1) return chebyshev_u_trig(x, n, single);
  return chebyshev_recurrence(x, rnd(single, x + x), n, single);
}

double ref_chebyshev_v(double x, double nf, bool single) {
  int64_t n = degree(nf);
  if (n < 0) return 0;
  if (fabs(x) == 1) {
    if (x > 0) return 1;
    return n % 2 == 0 ? (double)(n + n + 1) : -(double)(n + n + 1);
  }
  if (n > 8 && fabs(x) < 1) return chebyshev_v_trig(x, n, single);
  return chebyshev_recurrence(x, rnd(single, rnd(single, x + x) - 1), n, single);
}

double ref_chebyshev_w(double x, double nf, bool single) {
  int64_t n = degree(nf);
  if (n < 0) return 0;
  /* W(1) = 2n + 1, W(-1) = (-1)^n; the trigonometric form's fallback
   * takes the same test on x */
  double at_end = x > 0 ? (double)(n + n + 1) : n % 2 == 0 ? 1 : -1;
  if (fabs(x) == 1) return at_end;
  if (n > 8 && fabs(x) < 1) return chebyshev_w_trig(x, n, single, at_end);
  return chebyshev_recurrence(x, rnd(single, rnd(single, x + x) + 1), n, single);
}

/* The shifted forms: the same in y = 2x - 1, with their own thresholds for
 * the trigonometric form and exact values at x = 0 and 1. */
double ref_shifted_chebyshev_t(double x, double nf, bool single) {
  int64_t n = degree(nf);
  if (n < 0) return 0;
  if (x == 1) return 1;
  if (x == 0) return n % 2 == 0 ? 1 : -1;
  double y = rnd(single, rnd(single, x + x) - 1);
  if (n > 6 && fabs(y) < 1) return chebyshev_t_trig(y, n, single);
  return chebyshev_recurrence(y, y, n, single);
}

double ref_shifted_chebyshev_u(double x, double nf, bool single) {
  int64_t n = degree(nf);
  if (n < 0) return 0;
  if (x == 1) return (double)(n + 1);
  if (x == 0) return n % 2 == 0 ? (double)(n + 1) : -(double)(n + 1);
  double y = rnd(single, rnd(single, x + x) - 1);
  if (n > 6 && fabs(y) < 1) return chebyshev_u_trig(y, n, single);
  return chebyshev_recurrence(y, rnd(single, y + y), n, single);
}

double ref_shifted_chebyshev_v(double x, double nf, bool single) {
  int64_t n = degree(nf);
  if (n < 0) return 0;
  if (x == 1) return 1;
  if (x == 0) return n % 2 == 0 ? (double)(n + n + 1) : -(double)(n + n + 1);
  double y = rnd(single, rnd(single, x + x) - 1);
  if (n > 6 && fabs(y) < 1) return chebyshev_v_trig(y, n, single);
  return chebyshev_recurrence(y, rnd(single, rnd(single, y + y) - 1), n, single);
}

double ref_shifted_chebyshev_w(double x, double nf, bool single) {
  int64_t n = degree(nf);
  if (n < 0) return 0;
  double at_zero = n % 2 == 0 ? 1 : -1; /* W at y = -1 */
  if (x == 1) return (double)(n + n + 1);
  if (x == 0) return at_zero;
  double y = rnd(single, rnd(single, x + x) - 1);
  if (n > 4 && fabs(y) < 1) return chebyshev_w_trig(y, n, single, at_zero);
  return chebyshev_recurrence(y, rnd(single, rnd(single, y + y) + 1), n, single);
}

/* The Hermite polynomials, physicists' H (H(k+1) = 2x H(k) - 2k H(k-1))
 * and probabilists' He (He(k+1) = x He(k) - k He(k-1)): one recurrence
 * p(k+1) = s p(k) - c k p(k-1) from p(0) = 1, p(1) = s, with s = 2x, c = 2
 * for H and s = x, c = 1 for He. PyTorch returns NaN above degree 128
 * (float) or 512 (double). */
static double hermite(double s, double c, double nf, bool single) {
  int64_t n = degree(nf);
  if (n < 0) return 0;
  if (n == 0) return 1;
  if (n == 1) return s;
  if (n > (single ? 128 : 512)) return NAN;
  double p = 1, q = s, r = 0;
  for (int64_t k = 1; k < n; k++) {
    r = rnd(single, rnd(single, s * q) - rnd(single, c * (double)k * p));
    p = q;
    q = r;
  }
  return r;
}

double ref_hermite_h(double x, double nf, bool single) {
  return hermite(rnd(single, x + x), 2, nf, single);
}

double ref_hermite_he(double x, double nf, bool single) { return hermite(x, 1, nf, single); }

/* Laguerre: (k+1) L(k+1) = (2k + 1 - x) L(k) - k L(k-1); 1 at x = 0. */
double ref_laguerre_l(double x, double nf, bool single) {
  int64_t n = degree(nf);
  if (n < 0) return 0;
  if (x == 0 || n == 0) return 1;
  double one_x = rnd(single, 1 - x);
  if (n == 1) return one_x;
  double p = 1, q = one_x, r = one_x;
  for (int64_t k = 1; k < n && !isnan(q); k++) {
    double c = rnd(single, (double)(k + k) + one_x);
    r = rnd(single, rnd(single, rnd(single, c * q) - rnd(single, (double)k * p)) / (double)(k + 1));
    p = q;
    q = r;
  }
  return r;
}

/* Legendre: (k+1) P(k+1) = (2k+1) x P(k) - k P(k-1); +-1 at x = +-1. */
double ref_legendre_p(double x, double nf, bool single) {
  int64_t n = degree(nf);
  if (n < 0) return 0;
  if (fabs(x) == 1) return x > 0 || n % 2 == 0 ? 1 : -1;
  if (n == 0) return 1;
  if (n == 1) return x;
  double p = 1, q = x, r = x;
  for (int64_t k = 1; k < n && !isnan(q); k++) {
    double c = rnd(single, rnd(single, (double)(k + k + 1) * x) * q);
    r = rnd(single, rnd(single, c - rnd(single, (double)k * p)) / (double)(k + 1));
    p = q;
    q = r;
  }
  return r;
}
