/*
 * reference_backend/kernels_random.c: reference kernels of the random ops
 * that no rule draws from rand and randn: random (every overload, exact
 * over any 64-bit range), multinomial (with PyTorch's checks of the
 * probabilities, which only the data can fail), and the samplers with a
 * rejection loop: poisson (Hoermann's PTRS from rate 10, multiplication of
 * uniforms below), _standard_gamma (Marsaglia and Tsang, boosted below
 * alpha 1) and binomial (Hoermann's BTRS from a mean of 10, inversion by
 * geometric jumps below) - the algorithms PyTorch's CPU kernels use
 * (aten/src/ATen/native/Distributions.h). rand, randn, randperm and the
 * dropouts are in kernels_factory.c; the rules of the other random ops in
 * decompositions/rules_random.c.
 *
 * The numbers: the same counter-based Philox4x32-10 and seed as
 * kernels_factory.c ($ALLOY_REF_SEED, else REF_SEED), on a stream of its
 * own: a call reserves a block of counters from this file's offset, and
 * element k of the call draws the blocks (offset + k, 1, j) for j = 0, 1,
 * ... as many as its rejection loop needs, where the factory's stream
 * keeps word 2 at 0, so that the two streams never share a block. A run is
 * reproducible for a seed; the values are not PyTorch's.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "reference_backend/ref.h"

/* ---- the stream --------------------------------------------------------------------- */

#define REF_SEED UINT64_C(0x2545F4914F6CDD1D) /* kernels_factory.c's */

void ref_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

static _Atomic uint64_t stream_offset;

static uint64_t seed_of_run(void) {
  static _Atomic uint64_t seed;
  static _Atomic int ready;
  if (!atomic_load(&ready)) { /* every thread reads the same variable: the race is benign */
    const char *s = getenv("ALLOY_REF_SEED");
    atomic_store(&seed, s && *s ? strtoull(s, NULL, 0) : REF_SEED);
    atomic_store(&ready, 1);
  }
  return atomic_load(&seed);
}

/* The draws of one element: block j of counter `element`, two doubles a block. */
typedef struct {
  uint32_t key[2];
  uint64_t element;
  uint32_t block;
  int used; /* doubles taken from words */
  uint32_t words[4];
} draws;

static draws draws_for(uint64_t base, int64_t k) {
  uint64_t seed = seed_of_run();
  draws g = {{(uint32_t)seed, (uint32_t)(seed >> 32)}, base + (uint64_t)k, 0, 2, {0}};
  return g;
}

static uint64_t next_bits(draws *g) {
  if (g->used == 2) {
    uint32_t ctr[4] = {(uint32_t)g->element, (uint32_t)(g->element >> 32), 1, g->block++};
    ref_philox4x32_10(ctr, g->key, g->words);
    g->used = 0;
  }
  int i = g->used++;
  return ((uint64_t)g->words[2 * i] << 32) | g->words[2 * i + 1];
}

/* Uniform in [0, 1) with 53 bits. */
static double uniform(draws *g) { return (double)(next_bits(g) >> 11) * 0x1p-53; }

/* Standard normal (Box-Muller; 1 - u keeps the logarithm finite). */
static double normal(draws *g) {
  double u1 = 1.0 - uniform(g), u2 = uniform(g);
  return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/* Counters for n elements of one call. */
static uint64_t reserve(int64_t n) { return atomic_fetch_add(&stream_offset, (uint64_t)(n > 0 ? n : 1)); }

/* ---- random -------------------------------------------------------------------------- */

/* The largest value random_ draws without an upper bound: 2^digits for a
 * float dtype (its consecutive integers), the dtype's largest otherwise. */
static int64_t random_top(alloy_dtype t) {
  switch (t) {
    case ALLOY_BOOL: return 1;
    case ALLOY_U8: return 255;
    case ALLOY_I8: return 127;
    case ALLOY_I16: return 32767;
    case ALLOY_I32: return 2147483647;
    case ALLOY_F16: return (int64_t)1 << 11;
    case ALLOY_BF16: return (int64_t)1 << 8;
    case ALLOY_F32: return (int64_t)1 << 24;
    case ALLOY_F64: return (int64_t)1 << 53;
    default: return INT64_MAX;
  }
}

/* The value v takes in a float dtype t. */
static double rounded(alloy_dtype t, double v) {
  if (t == ALLOY_F16) return alloy_f32_from_f16(alloy_f16_from_f32((float)v));
  if (t == ALLOY_BF16) return alloy_f32_from_bf16(alloy_bf16_from_f32((float)v));
  return t == ALLOY_F32 ? (double)(float)v : v;
}

/* random.default, .from and .to: integers uniform over [from, to) or
 * [from, random_top] (the shape function refused what the dtype cannot
 * hold), from 64 random bits each (the modulo bias is below range / 2^64).
 * from = INT64_MIN with no bound is the full 64-bit range. A value that a
 * float dtype rounds out of the range is drawn again. */
static int k_random(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0];
  int64_t from = 0, to = 0;
  ref_int(c, "from", &from);
  bool has_to = ref_int(c, "to", &to);
  bool full = !has_to && from == INT64_MIN;
  uint64_t range = has_to ? (uint64_t)to - (uint64_t)from : (uint64_t)random_top(out->dtype) - (uint64_t)from + 1;
  double hi = has_to ? (double)to : (double)random_top(out->dtype) + 1;
  bool fl = is_float(out->dtype);
  int64_t n = ref_numel(out);
  uint64_t base = reserve(n);
  for (int64_t k = 0; k < n; k++) {
    draws g = draws_for(base, k);
    int64_t v;
    for (int tries = 0;; tries++) {
      uint64_t bits = next_bits(&g);
      v = (int64_t)(full ? bits : (uint64_t)from + bits % range);
      if (!fl || rounded(out->dtype, (double)v) < hi || tries == 64) break;
    }
    if (fl) ref_store_f(out->data, out->dtype, ref_linear_offset(out, k), (double)v);
    else ref_store_i(out->data, out->dtype, ref_linear_offset(out, k), v);
  }
  return 0;
}

/* ---- multinomial ------------------------------------------------------------------------ */

/* One row of probabilities, read into p (n of them). */
static void load_row(const alloy_kernel_tensor *t, int64_t row, double *p, int64_t n) {
  int r = t->rank;
  int64_t base = r == 2 ? row * t->strides[0] : 0;
  for (int64_t j = 0; j < n; j++) p[j] = ref_load_f(t->data, t->dtype, base + j * t->strides[r - 1]);
}

/* Draws without replacement: the n largest keys p / q, q exponential
 * (PyTorch's race; a tie goes to the lower category). */
static void draw_distinct(draws *g, const double *p, int64_t cats, int64_t n, double *key, int64_t *pick) {
  for (int64_t j = 0; j < cats; j++) key[j] = p[j] / -log1p(-uniform(g));
  for (int64_t s = 0; s < n; s++) {
    int64_t best = -1;
    for (int64_t j = 0; j < cats; j++)
      if (key[j] >= 0 && (best < 0 || key[j] > key[best])) best = j;
    pick[s] = best;
    key[best] = -1;
  }
}

/* Draws with replacement: the first category whose cumulative
 * probability (normalized, its last entry 1) reaches a uniform sample. */
static void draw_replacing(draws *g, const double *p, int64_t cats, int64_t n, double *cdf, int64_t *pick) {
  double sum = 0;
  for (int64_t j = 0; j < cats; j++) cdf[j] = sum += p[j];
  for (int64_t j = 0; j < cats; j++) cdf[j] /= sum;
  cdf[cats - 1] = 1;
  for (int64_t s = 0; s < n; s++) {
    double u = uniform(g);
    int64_t lo = 0, hi = cats;
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      if (cdf[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    pick[s] = lo < cats ? lo : cats - 1;
  }
}

static int k_multinomial(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *p = &c->inputs[0], *out = &c->outputs[0];
  int64_t n = 0;
  bool replacement = false;
  ref_int(c, "num_samples", &n);
  ref_bool(c, "replacement", &replacement);
  int64_t cats = p->sizes[p->rank - 1], rows = p->rank == 2 ? p->sizes[0] : 1;
  double *row = malloc(sizeof *row * (size_t)(2 * cats + 1));
  int64_t *pick = malloc(sizeof *pick * (size_t)(n + 1));
  if (!row || !pick) {
    free(row), free(pick);
    return ref_fail(c, "multinomial: out of memory");
  }
  uint64_t base = reserve(rows);
  int status = 0;
  for (int64_t r = 0; r < rows && !status; r++) {
    load_row(p, r, row, cats);
    double sum = 0;
    for (int64_t j = 0; j < cats; j++) {
      if (!(row[j] >= 0 && row[j] < INFINITY)) {
        status = ref_fail(c, "probability tensor contains either `inf`, `nan` or element < 0 (row %lld, "
                             "category %lld)", (long long)r, (long long)j);
        break;
      }
      sum += row[j];
    }
    if (!status && !(sum > 0))
      status = ref_fail(c, "invalid multinomial distribution (sum of probabilities <= 0) (row %lld)", (long long)r);
    if (status) break;
    draws g = draws_for(base, r);
    if (!replacement || n == 1) draw_distinct(&g, row, cats, n, row + cats, pick);
    else draw_replacing(&g, row, cats, n, row + cats, pick);
    for (int64_t s = 0; s < n; s++)
      ref_store_i(out->data, out->dtype, r * (out->rank == 2 ? out->strides[0] : 0) + s * out->strides[out->rank - 1],
                  pick[s]);
  }
  free(row), free(pick);
  return status;
}

/* ---- gamma, poisson, binomial ------------------------------------------------------------ */

/* Marsaglia and Tsang's squeeze; alpha below 1 is boosted by one and the
 * sample scaled by u^(1/alpha). */
static double sample_gamma(draws *g, double alpha) {
  double scale = 1.0;
  if (alpha < 1.0) {
    if (alpha <= 0.0) return 0.0;
    scale = pow(1.0 - uniform(g), 1.0 / alpha);
    alpha += 1.0;
  }
  const double d = alpha - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = normal(g);
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    double u = 1.0 - uniform(g), x2 = x * x;
    if (u < 1.0 - 0.0331 * x2 * x2) return scale * d * v;
    if (log(u) < 0.5 * x2 + d * (1.0 - v + log(v))) return scale * d * v;
  }
}

/* Hoermann's transformed rejection with squeeze (PTRS) for rate >= 10;
 * below, the number of uniforms whose running product stays above
 * exp(-rate). */
static double sample_poisson(draws *g, double rate) {
  if (rate >= 10) {
    const double slam = sqrt(rate), loglam = log(rate), b = 0.931 + 2.53 * slam;
    const double a = -0.059 + 0.02483 * b, invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
    for (;;) {
      double u = uniform(g) - 0.5, v = uniform(g), us = 0.5 - fabs(u);
      double k = floor((2 * a / us + b) * u + rate + 0.43);
      if (us >= 0.07 && v <= vr) return k;
      if (k < 0 || (us < 0.013 && v > us)) continue;
      if (log(v) + log(invalpha) - log(a / (us * us) + b) <= -rate + k * loglam - lgamma(k + 1)) return k;
    }
  }
  if (rate == 0) return 0;
  double limit = exp(-rate), prod = 1.0, x = 0;
  for (;;) {
    prod *= uniform(g);
    if (prod > limit) x += 1;
    else return x;
  }
}

/* log(k!) less Stirling's approximation of it, for BTRS. */
static double stirling_tail(double k) {
  return lgamma(k + 1) - ((k + 0.5) * log(k + 1) - (k + 1) + 0.5 * log(2 * M_PI));
}

/* Hoermann's BTRS, for count p >= 10 with p <= 1/2. */
static double binomial_btrs(draws *g, double count, double p) {
  const double stddev = sqrt(count * p * (1 - p)), b = 1.15 + 2.53 * stddev;
  const double a = -0.0873 + 0.0248 * b + 0.01 * p, c = count * p + 0.5, vr = 0.92 - 4.2 / b;
  const double r = p / (1 - p), alpha = (2.83 + 5.1 / b) * stddev, m = floor((count + 1) * p);
  for (;;) {
    double u = uniform(g) - 0.5, v = uniform(g), us = 0.5 - fabs(u);
    double k = floor((2 * a / us + b) * u + c);
    if (k < 0 || k > count) continue;
    if (us >= 0.07 && v <= vr) return k;
    v = log(v * alpha / (a / (us * us) + b));
    double bound = (m + 0.5) * log((m + 1) / (r * (count - m + 1))) +
                   (count + 1) * log((count - m + 1) / (count - k + 1)) +
                   (k + 0.5) * log(r * (count - k + 1) / (k + 1)) + stirling_tail(m) + stirling_tail(count - m) -
                   stirling_tail(k) - stirling_tail(count - k);
    if (v <= bound) return k;
  }
}

/* Inversion: the number of geometric jumps (trials to a success) that fit
 * in count trials. */
static double binomial_inversion(draws *g, double count, double p) {
  double sum = 0, n = 0, logq = log1p(-p);
  for (;;) {
    sum += ceil(log(uniform(g)) / logq);
    if (sum > count) return n;
    n += 1;
  }
}

static double sample_binomial(draws *g, double count, double p) {
  if (!(count > 0) || !(p > 0)) return 0;
  if (p >= 1) return count;
  double q = p <= 0.5 ? p : 1 - p;
  double k = count * q >= 10 ? binomial_btrs(g, count, q) : binomial_inversion(g, count, q);
  return p <= 0.5 ? k : count - k;
}

/* The samplers element by element over broadcast operands. */
enum { S_GAMMA, S_POISSON, S_BINOMIAL };

static int sample_each(const alloy_kernel_call *c, int sampler) {
  const alloy_kernel_tensor *out = &c->outputs[0];
  const alloy_kernel_tensor *ins[2] = {&c->inputs[0], c->num_inputs > 1 ? &c->inputs[1] : NULL};
  ref_iter it;
  ref_iter_init(&it, out, ins, ins[1] ? 2 : 1);
  uint64_t base = reserve(ref_numel(out));
  double tiny = out->dtype == ALLOY_F32 ? 1.17549435e-38 : 2.2250738585072014e-308;
  for (int64_t k = 0; ref_iter_next(&it); k++) {
    double a = ref_load_f(ins[0]->data, ins[0]->dtype, it.offset[1]), v = 0;
    draws g = draws_for(base, k);
    if (sampler == S_GAMMA) {
      v = fmax(tiny, sample_gamma(&g, a)); /* PyTorch keeps a gamma sample positive */
    } else if (sampler == S_POISSON) {
      if (!(a >= 0)) return ref_fail(c, "invalid Poisson rate, expected rate to be non-negative (got %g)", a);
      v = sample_poisson(&g, a);
    } else {
      v = sample_binomial(&g, a, ref_load_f(ins[1]->data, ins[1]->dtype, it.offset[2]));
    }
    ref_store_f(out->data, out->dtype, it.offset[0], v);
  }
  return 0;
}

static int k_standard_gamma(const alloy_kernel_call *c) { return sample_each(c, S_GAMMA); }
static int k_poisson(const alloy_kernel_call *c) { return sample_each(c, S_POISSON); }
static int k_binomial(const alloy_kernel_call *c) { return sample_each(c, S_BINOMIAL); }

const alloy_kernel ref_kernels_random[] = {
    REF_KERNEL("aten.random.default", k_random),
    REF_KERNEL("aten.random.from", k_random),
    REF_KERNEL("aten.random.to", k_random),
    REF_KERNEL("aten.multinomial.default", k_multinomial),
    REF_KERNEL("aten._standard_gamma.default", k_standard_gamma),
    REF_KERNEL("aten.poisson.default", k_poisson),
    REF_KERNEL("aten.binomial.default", k_binomial),
    {NULL, NULL, NULL, NULL},
};
