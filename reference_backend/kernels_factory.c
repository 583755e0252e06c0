/*
 * reference_backend/kernels_factory.c: reference kernels, factory family:
 * tensors made from a fill value (full, zeros, ones, empty, *_like, new_*,
 * scalar_tensor and the prims), from a range (arange, linspace, logspace,
 * iota), eye, and the random ones (rand, randn, prims.normal,
 * prims.uniform, randperm, dropout, native_dropout). The dense linear algebra is in
 * kernels_linalg.c.
 *
 * "Empty" tensors are filled with zeros so that every run gives the same
 * bytes. Ranges follow PyTorch's CPU formulas step for step, including the
 * dtype each intermediate is rounded to (linspace computes in the result's
 * dtype, fills the first half from start and the second from end; arange
 * in its accumulate type, double for float32; logspace in double).
 *
 * Random numbers come from a counter-based Philox4x32-10 generator (Salmon
 * et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11) keyed by a
 * fixed seed (REF_SEED below, or $ALLOY_REF_SEED when set, read once). Each
 * random kernel reserves a block of counters from a process-wide offset, in
 * the order the kernels run, so a run is reproducible and two random nodes
 * never share numbers. Element k of a call uses the four words of counter
 * (offset + k): uniforms take 24 (float) or 53 (double) bits, normals are
 * Box-Muller over two words pairs. The values are not PyTorch's (its CPU
 * generator is a Mersenne twister); random ops are checked by moments.
 */
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference_backend/ref.h"


/* ---- numbers as PyTorch's Scalar holds them ------------------------------ */

typedef struct {
  bool is_float;
  double f;
  int64_t i;
} number;

/* A Scalar argument, a Python number for a Tensor, or a 0-dim tensor
 * (its item(): a float for float tensors, else an integer). */
static bool read_number(const alloy_kernel_call *c, const char *name, number *out) {
  ref_scalar_tensor s;
  const alloy_kernel_tensor *t = ref_operand(c, name, &s);
  if (!t) return false;
  out->is_float = is_float(t->dtype);
  out->f = ref_load_f(t->data, t->dtype, 0);
  /* The integer view of a float is only read for integer outputs; an
   * infinite or NaN fill (a -inf mask) has none, and casting it is UB. */
  bool fits = out->f > -9.2e18 && out->f < 9.2e18;
  out->i = !out->is_float ? ref_load_i(t->data, t->dtype, 0) : fits ? (int64_t)out->f : 0;
  return true;
}

/* The number as a value of dtype t holds it (Scalar::to<scalar_t>). */
static double number_as(number n, alloy_dtype t) {
  if (!is_float(t)) return t == ALLOY_BOOL ? (n.is_float ? n.f != 0 : n.i != 0) : (double)n.i;
  return n.is_float ? n.f : (double)n.i;
}

/* Stores a number into element off of t, converted as PyTorch does. */
static void store_number(const alloy_kernel_tensor *t, int64_t off, number n) {
  if (n.is_float) ref_store_f(t->data, t->dtype, off, n.f);
  else ref_store_i(t->data, t->dtype, off, n.i);
}

/* v rounded to dtype t: the value an op of t's C type would return
 * (float16/bfloat16 arithmetic rounds to float first, then to 16 bits). */
static double rnd(alloy_dtype t, double v) {
  if (t == ALLOY_F64 || !is_float(t)) return v;
  unsigned char b[8];
  ref_store_f(b, t, 0, v);
  return ref_load_f(b, t, 0);
}

/* The number as Scalar::to<T> of dtype t gives it, false where that
 * refuses it (c10::checked_convert: a finite float outside t's range, a
 * NaN or infinity for an integer type, an int outside it, where a
 * negative one only wraps for uint8, down to -255). Floats come back
 * rounded to t, integers truncated (and wrapped). */
static bool scalar_to(number n, alloy_dtype t, double *v) {
  if (t == ALLOY_BOOL) return *v = n.is_float ? n.f != 0 : n.i != 0, true;
  double lo, hi;
  if (!alloy_dtype_limits(t, &lo, &hi)) lo = -INFINITY, hi = INFINITY;
  if (is_float(t)) {
    double x = n.is_float ? n.f : (double)n.i;
    if (!isnan(x) && !isinf(x) && (x < lo || x > hi)) return false;
    return *v = rnd(t, x), true;
  }
  if (n.is_float) {
    if (!(n.f >= lo && n.f <= hi)) return false; /* NaN too */
    return *v = t == ALLOY_U8 ? (double)(uint8_t)n.i : (double)n.i, true;
  }
  if (t == ALLOY_U8 ? n.i > 255 || n.i < -255 : (double)n.i < lo || (double)n.i > hi) return false;
  return *v = t == ALLOY_U8 ? (double)(uint8_t)n.i : (double)n.i, true;
}

/* ---- fills ------------------------------------------------------------------------ */

static void fill(const alloy_kernel_tensor *out, number v) {
  int64_t n = ref_numel(out);
  for (int64_t k = 0; k < n; k++) store_number(out, ref_linear_offset(out, k), v);
}

static const number zero = {false, 0.0, 0}, one = {false, 1.0, 1};

static int k_zeros(const alloy_kernel_call *c) { fill(&c->outputs[0], zero); return 0; }
static int k_ones(const alloy_kernel_call *c) { fill(&c->outputs[0], one); return 0; }

/* full / full_like / new_full / prims.full*: fill_value; scalar_tensor: s. */
static int fill_named(const alloy_kernel_call *c, const char *name) {
  number v;
  if (!read_number(c, name, &v)) return ref_fail(c, "%s: no value", name);
  fill(&c->outputs[0], v);
  return 0;
}

static int k_full(const alloy_kernel_call *c) { return fill_named(c, "fill_value"); }
static int k_scalar_tensor(const alloy_kernel_call *c) { return fill_named(c, "s"); }

/* eye(n) / eye(n, m): ones on the main diagonal. */
static int k_eye(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0];
  fill(out, zero);
  int64_t n = out->sizes[0] < out->sizes[1] ? out->sizes[0] : out->sizes[1];
  for (int64_t i = 0; i < n; i++) ref_store_i(out->data, out->dtype, i * (out->strides[0] + out->strides[1]), 1);
  return 0;
}

/* ---- ranges ------------------------------------------------------------------------ */

/* arange(end) / arange(start, end, step): start + step * i, computed in
 * the accumulate type (int64 for integers, double for float32 and
 * float64, float for float16/bfloat16) and converted once. The length
 * is the output's, which shape inference computed. */
static int k_arange(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0];
  number start = zero, step = one;
  read_number(c, "start", &start); /* absent in arange(end) */
  read_number(c, "step", &step);
  int64_t n = out->rank ? out->sizes[0] : 1;
  alloy_dtype acc = out->dtype == ALLOY_F16 || out->dtype == ALLOY_BF16 ? ALLOY_F32 : ALLOY_F64;
  double s = rnd(acc, number_as(start, out->dtype)), st = rnd(acc, number_as(step, out->dtype));
  for (int64_t k = 0; k < n; k++) {
    int64_t off = ref_linear_offset(out, k);
    if (is_float(out->dtype))
      ref_store_f(out->data, out->dtype, off, rnd(acc, s + rnd(acc, st * (double)k)));
    else
      ref_store_i(out->data, out->dtype, off, (int64_t)((uint64_t)start.i + (uint64_t)step.i * (uint64_t)k));
  }
  return 0;
}

/* linspace(start, end, steps): PyTorch's formula. step = (end - start) /
 * (steps - 1) in the result's type (double for integers); the first half
 * is start + step * i, the second end - step * (steps - 1 - i), every
 * operation rounded to the result's type as its C arithmetic does. */
static int k_linspace(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0];
  number a, b;
  if (!read_number(c, "start", &a) || !read_number(c, "end", &b)) return ref_fail(c, "linspace: no bounds");
  int64_t steps = out->sizes[0];
  if (steps == 0) return 0;
  /* start and end as Scalar::to<T> converts them, which refuses an
   * overflow (linspace(-1e300, 1, 5) in float32 fails); one point is a
   * fill with start, which never reads end */
  double start, end = 0;
  if (!scalar_to(a, out->dtype, &start) || (steps > 1 && !scalar_to(b, out->dtype, &end)))
    return ref_fail(c, "linspace: value cannot be converted to type %s without overflow",
                    alloy_dtype_name(out->dtype));
  if (steps == 1) {
    store_number(out, 0, a);
    return 0;
  }
  alloy_dtype t = is_float(out->dtype) ? out->dtype : ALLOY_F64; /* step_t */
  double step = rnd(t, rnd(t, end - start) / rnd(t, (double)(steps - 1)));
  int64_t half = steps / 2;
  for (int64_t i = 0; i < steps; i++) {
    double v = i < half ? rnd(t, start + rnd(t, step * rnd(t, (double)i)))
                        : rnd(t, end - rnd(t, step * rnd(t, (double)(steps - i - 1))));
    ref_store_f(out->data, out->dtype, ref_linear_offset(out, i), v);
  }
  return 0;
}

/* logspace(start, end, steps, base): pow(base, x) in double, with x from
 * start and end converted to the result's type and step in double. */
static int k_logspace(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0];
  number a, b;
  double base = 10.0;
  if (!read_number(c, "start", &a) || !read_number(c, "end", &b)) return ref_fail(c, "logspace: no bounds");
  ref_float(c, "base", &base);
  int64_t steps = out->sizes[0];
  if (steps == 1) {
    ref_store_f(out->data, out->dtype, 0, pow(base, a.is_float ? a.f : (double)a.i));
    return 0;
  }
  double start, end;
  if (!scalar_to(a, out->dtype, &start) || !scalar_to(b, out->dtype, &end))
    return ref_fail(c, "logspace: value cannot be converted to type %s without overflow",
                    alloy_dtype_name(out->dtype));
  double step = rnd(out->dtype, end - start) / (double)(steps - 1);
  int64_t half = steps / 2;
  for (int64_t i = 0; i < steps; i++) {
    double x = i < half ? start + step * (double)i : end - step * (double)(steps - i - 1);
    ref_store_f(out->data, out->dtype, ref_linear_offset(out, i), pow(base, x));
  }
  return 0;
}

/* prims.iota(length, start, step): start + i * step (integers). */
static int k_iota(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0];
  int64_t start = 0, step = 1, n = out->sizes[0];
  ref_int(c, "start", &start);
  ref_int(c, "step", &step);
  for (int64_t k = 0; k < n; k++)
    ref_store_i(out->data, out->dtype, ref_linear_offset(out, k), (int64_t)((uint64_t)start + (uint64_t)step * (uint64_t)k));
  return 0;
}

/* ---- Philox4x32-10 ------------------------------------------------------------------ */

#define REF_SEED UINT64_C(0x2545F4914F6CDD1D)

typedef struct {
  uint32_t v[4];
} philox_block;

static uint32_t mulhilo(uint32_t a, uint32_t b, uint32_t *hi) {
  uint64_t p = (uint64_t)a * b;
  *hi = (uint32_t)(p >> 32);
  return (uint32_t)p;
}

/* The block for counter ctr under key: ten rounds, the key bumped by the
 * Weyl constants between them. */
static philox_block philox4x32_10(philox_block ctr, uint32_t k0, uint32_t k1) {
  for (int r = 0; r < 10; r++) {
    if (r) k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
    uint32_t hi0, hi1;
    uint32_t lo0 = mulhilo(0xD2511F53u, ctr.v[0], &hi0), lo1 = mulhilo(0xCD9E8D57u, ctr.v[2], &hi1);
    ctr = (philox_block){{hi1 ^ ctr.v[1] ^ k0, lo1, hi0 ^ ctr.v[3] ^ k1, lo0}};
  }
  return ctr;
}

/* Exposed for tests/test_ref_index.c's known-answer check. */
void ref_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);
void ref_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
  philox_block b = philox4x32_10((philox_block){{ctr[0], ctr[1], ctr[2], ctr[3]}}, key[0], key[1]);
  memcpy(out, b.v, sizeof b.v);
}

static _Atomic uint64_t philox_offset;
static uint64_t seed_value;
static atomic_flag seed_once = ATOMIC_FLAG_INIT;
static _Atomic int seed_ready;

static uint64_t run_seed(void) {
  if (!atomic_flag_test_and_set(&seed_once)) {
    const char *s = getenv("ALLOY_REF_SEED");
    seed_value = s && *s ? strtoull(s, NULL, 0) : REF_SEED;
    atomic_store(&seed_ready, 1);
  }
  while (!atomic_load(&seed_ready)) {
  }
  return seed_value;
}

/* A stream of random blocks for one kernel call: n counters reserved. */
typedef struct {
  uint64_t base;
  uint32_t k0, k1;
} philox_stream;

static philox_stream stream_reserve(int64_t n) {
  uint64_t seed = run_seed();
  philox_stream s = {atomic_fetch_add(&philox_offset, (uint64_t)(n > 0 ? n : 1)), (uint32_t)seed,
                     (uint32_t)(seed >> 32)};
  return s;
}

static philox_block stream_block(const philox_stream *s, int64_t k) {
  uint64_t ctr = s->base + (uint64_t)k;
  return philox4x32_10((philox_block){{(uint32_t)ctr, (uint32_t)(ctr >> 32), 0, 0}}, s->k0, s->k1);
}

/* Uniform in [0, 1) from words a (and b): 24 bits for float types, 53 for
 * double, so that the value is exact in the type and never 1. */
static double uniform01(alloy_dtype t, uint32_t a, uint32_t b) {
  if (t == ALLOY_F64) return (double)(((uint64_t)a << 21) ^ (b >> 11)) * 0x1p-53;
  return (double)(a >> 8) * 0x1p-24;
}

/* A standard normal from one block (Box-Muller; 1 - u keeps the log
 * argument in (0, 1]). */
static double normal01(philox_block b) {
  double u1 = 1.0 - (double)(((uint64_t)b.v[0] << 21) ^ (b.v[1] >> 11)) * 0x1p-53;
  double u2 = (double)(((uint64_t)b.v[2] << 21) ^ (b.v[3] >> 11)) * 0x1p-53;
  return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/* rand, and prims.uniform (low + (high - low) * u). */
static int k_rand(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0];
  double lo = 0.0, hi = 1.0;
  ref_float(c, "low", &lo);
  ref_float(c, "high", &hi);
  int64_t n = ref_numel(out);
  philox_stream s = stream_reserve(n);
  for (int64_t k = 0; k < n; k++) {
    philox_block b = stream_block(&s, k);
    ref_store_f(out->data, out->dtype, ref_linear_offset(out, k),
                lo + (hi - lo) * uniform01(out->dtype, b.v[0], b.v[1]));
  }
  return 0;
}

/* randn, and prims.normal (mean + std * z). */
static int k_randn(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0];
  double mean = 0.0, std = 1.0;
  ref_float(c, "mean", &mean);
  ref_float(c, "std", &std);
  int64_t n = ref_numel(out);
  philox_stream s = stream_reserve(n);
  for (int64_t k = 0; k < n; k++)
    ref_store_f(out->data, out->dtype, ref_linear_offset(out, k), mean + std * normal01(stream_block(&s, k)));
  return 0;
}

/* randperm(n): Fisher-Yates from the last place down, each swap partner
 * drawn from 64 random bits (the modulo bias is below 2^-40 for any n a
 * tensor holds). */
static int k_randperm(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0];
  int64_t n = out->sizes[0];
  int64_t *p = malloc(sizeof *p * (size_t)(n ? n : 1));
  if (!p) return ref_fail(c, "randperm: out of memory");
  for (int64_t i = 0; i < n; i++) p[i] = i;
  philox_stream s = stream_reserve(n);
  for (int64_t i = n - 1; i > 0; i--) {
    philox_block b = stream_block(&s, i);
    uint64_t r = ((uint64_t)b.v[0] << 32) | b.v[1];
    int64_t j = (int64_t)(r % (uint64_t)(i + 1)), t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
  for (int64_t i = 0; i < n; i++) ref_store_i(out->data, out->dtype, ref_linear_offset(out, i), p[i]);
  free(p);
  return 0;
}

/* dropout: with probability p an element is zeroed, else scaled by
 * 1 / (1 - p) (0 when p is 1), as PyTorch's bernoulli(1 - p) mask does;
 * out of training the input passes through and the mask is all true.
 * mask may be NULL (dropout.default). */
static int dropout_run(const alloy_kernel_call *c, const alloy_kernel_tensor *mask, bool train) {
  const alloy_kernel_tensor *x = ref_tensor(c, "input"), *out = &c->outputs[0];
  double p = 0.5;
  ref_float(c, "p", &p);
  int64_t n = ref_numel(out);
  double keep = 1.0 - p, scale = keep == 0 ? 0.0 : 1.0 / keep;
  philox_stream s = stream_reserve(train ? n : 0);
  for (int64_t k = 0; k < n; k++) {
    int64_t xo = ref_linear_offset(x, k), oo = ref_linear_offset(out, k);
    bool kept = true;
    if (train) {
      philox_block b = stream_block(&s, k);
      kept = uniform01(ALLOY_F64, b.v[0], b.v[1]) < keep;
    }
    if (!train) ref_store_f(out->data, out->dtype, oo, ref_load_f(x->data, x->dtype, xo));
    else ref_store_f(out->data, out->dtype, oo, kept ? ref_load_f(x->data, x->dtype, xo) * scale : 0.0 * ref_load_f(x->data, x->dtype, xo));
    if (mask) ref_store_i(mask->data, mask->dtype, ref_linear_offset(mask, k), kept);
  }
  return 0;
}

static int k_native_dropout(const alloy_kernel_call *c) {
  bool train = true; /* None trains */
  ref_bool(c, "train", &train);
  return dropout_run(c, &c->outputs[1], train);
}

static int k_dropout(const alloy_kernel_call *c) {
  bool train = true;
  double p = 0.5;
  ref_bool(c, "train", &train);
  ref_float(c, "p", &p);
  return dropout_run(c, NULL, train && p != 0.0);
}

/* _like and new_* variants read their input only for its shape and type,
 * which shape inference already gave the output. */
const alloy_kernel ref_kernels_factory[] = {
    REF_KERNEL("aten.full.default", k_full),
    REF_KERNEL("aten.full_like.default", k_full),
    REF_KERNEL("aten.new_full.default", k_full),
    REF_KERNEL("aten.zeros.default", k_zeros),
    REF_KERNEL("aten.zeros_like.default", k_zeros),
    REF_KERNEL("aten.new_zeros.default", k_zeros),
    REF_KERNEL("aten.ones.default", k_ones),
    REF_KERNEL("aten.ones_like.default", k_ones),
    REF_KERNEL("aten.new_ones.default", k_ones),
    REF_KERNEL("aten.empty.memory_format", k_zeros),
    REF_KERNEL("aten.empty_strided.default", k_zeros),
    REF_KERNEL("aten.scalar_tensor.default", k_scalar_tensor),
    REF_KERNEL("aten.arange.default", k_arange),
    REF_KERNEL("aten.arange.start_step", k_arange),
    REF_KERNEL("aten.linspace.default", k_linspace),
    REF_KERNEL("aten.linspace.Scalar_Tensor", k_linspace),
    REF_KERNEL("aten.linspace.Tensor_Scalar", k_linspace),
    REF_KERNEL("aten.linspace.Tensor_Tensor", k_linspace),
    REF_KERNEL("aten.logspace.default", k_logspace),
    REF_KERNEL("aten.logspace.Scalar_Tensor", k_logspace),
    REF_KERNEL("aten.logspace.Tensor_Scalar", k_logspace),
    REF_KERNEL("aten.logspace.Tensor_Tensor", k_logspace),
    REF_KERNEL("aten.eye.default", k_eye),
    REF_KERNEL("aten.eye.m", k_eye),
    REF_KERNEL("aten.rand.default", k_rand),
    REF_KERNEL("aten.randn.default", k_randn),
    REF_KERNEL("aten.randperm.default", k_randperm),
    REF_KERNEL("aten.native_dropout.default", k_native_dropout),
    REF_KERNEL("aten.dropout.default", k_dropout),
    REF_KERNEL("prims.empty.default", k_zeros),
    REF_KERNEL("prims.empty_strided.default", k_zeros),
    REF_KERNEL("prims.empty_permuted.default", k_zeros),
    REF_KERNEL("prims.full.default", k_full),
    REF_KERNEL("prims.full_like.default", k_full),
    REF_KERNEL("prims.scalar_tensor.default", k_scalar_tensor),
    REF_KERNEL("prims.iota.default", k_iota),
    REF_KERNEL("prims.normal.default", k_randn),
    REF_KERNEL("prims.uniform.default", k_rand),
    {NULL, NULL, NULL, NULL},
};
