/*
 * reference_backend/kernels_pointwise.c: the elementwise kernels of the
 * reference backend, ATen ops and prims: arithmetic, comparisons, logic and
 * bits, rounding, activations and the special functions (whose math is in
 * special_functions.c).
 *
 * Each op is a row of one table: the schema names of its elementwise
 * operands and of its scalar parameters, how it promotes, and two small
 * functions, one on double (floating computation) and one on int64 (integer
 * and bool computation). One strided loop runs them all. It finds the
 * computation dtype as torch.result_type does (tensors with dimensions
 * outrank zero-dim tensors, which outrank Python numbers, unless a lower
 * rank brings a higher category), converts each operand to it -- so a
 * Python 0.1 compared with a float16 tensor is float16's 0.1, as in
 * PyTorch -- applies the function, and stores into the output, which shape
 * inference allocated with the result dtype (bool for comparisons; the
 * store converts).
 *
 * Floating computation runs in double and is rounded once on store; float16
 * and bfloat16 compute in float32 as PyTorch's "opmath" does. Where
 * PyTorch's result depends on rounding each step in its own precision
 * (floor and trunc division, round with decimals, the polynomial
 * recurrences, logit, trigamma) the functions round each step the same
 * way (pw_ctx.rnd and .single); float16/bfloat16 mul and div by a
 * one-element tensor keep it in float32, as PyTorch's kernels do. The one
 * sum here, mvlgamma's, accumulates sequentially in index order in double.
 * Integer arithmetic wraps: computed in uint64, truncated to the dtype on
 * store. Integer division and remainder by zero fail the call with
 * "ZeroDivisionError", as PyTorch raises.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reference_backend/ref.h"
#include "reference_backend/special_functions.h"

/* ---- the special functions: special_functions.h, special_functions.c ---- */

/* ---- the loop ------------------------------------------------------------ */

#define MAX_OPERANDS 3
#define MAX_PARAMS 4
#define NO_DTYPE ALLOY_DTYPE_COUNT

/* What an op's functions see besides the operand values. */
typedef struct pw_ctx {
  alloy_dtype cd;    /* computation dtype (result_type, maybe made float) */
  alloy_dtype in0;   /* operand 0's own dtype (some ops' bounds depend on it) */
  alloy_dtype out;   /* the output's dtype                                 */
  alloy_dtype rnd;   /* the precision PyTorch rounds each step to: cd, or
                      * float32 where it computes in opmath               */
  bool single;       /* cd computes in float32 (float16/bfloat16/float32)  */
  bool vec;          /* this element is in PyTorch's vectorized loop (see
                      * vec_lanes)                                         */
  int bits;          /* width of cd, for shifts                            */
  bool present[MAX_OPERANDS]; /* false for a None Tensor? operand          */
  double s[MAX_PARAMS];       /* scalar parameters, as double...           */
  int64_t si[MAX_PARAMS];     /* ...and as integer                         */
  bool has[MAX_PARAMS];       /* false when None                           */
  int mode;          /* a string parameter: 0 none/absent, 1 "trunc" or
                      * "tanh", 2 "floor"                                  */
  const char *err;   /* set by a function to fail the call                 */
} pw_ctx;

typedef double (*pw_f)(const double *x, pw_ctx *p);
typedef int64_t (*pw_i)(const int64_t *x, pw_ctx *p);

typedef enum pw_promo {
  PROMO_SAME,  /* compute in result_type                                */
  PROMO_FLOAT, /* integer and bool result types compute in float32      */
  PROMO_DIV,   /* PROMO_FLOAT without a rounding mode, PROMO_SAME with  */
} pw_promo;

/* flags */
#define PW_SCALAR_OPMATH 1u /* float16/bfloat16 with a one-element `other`:
                             * PyTorch keeps other in float32 (mul, div) */
#define PW_VEC_TAIL 2u      /* the function reads pw_ctx.vec: its vector and
                             * scalar forms differ in PyTorch (fmod) */

typedef struct pw_op {
  const char *op;
  const char *operands; /* elementwise operands by schema name, in order;
                         * a leading '?' leaves one out of promotion      */
  const char *params;   /* scalar parameters by schema name; a ":s" suffix
                         * reads a string into mode                       */
  pw_promo promo;
  pw_f f;
  pw_i i;
  unsigned flags;
} pw_op;


/* Rounds v to dtype t's precision (floats; others pass through). */
static double round_float(alloy_dtype t, double v) { return is_float(t) ? round_to(t, v) : v; }

/* One step of PyTorch's arithmetic in its storage precision. */
static double R(const pw_ctx *p, double v) { return round_float(p->rnd, v); }

/* Wraps v to integer dtype t, as a C++ conversion would. */
static int64_t wrap_to(alloy_dtype t, int64_t v) {
  switch (t) {
    case ALLOY_BOOL: return v != 0;
    case ALLOY_U8: return (uint8_t)v;
    case ALLOY_I8: return (int8_t)(uint8_t)v;
    case ALLOY_I16: return (int16_t)(uint16_t)v;
    case ALLOY_I32: return (int32_t)(uint32_t)v;
    default: return v;
  }
}

/* double -> int64 as x86 converts (the out-of-range and NaN cases, which C
 * leaves undefined, give INT64_MIN). */
static int64_t to_i64(double v) {
  return v >= -9223372036854775808.0 && v < 9223372036854775808.0 ? (int64_t)v : INT64_MIN;
}

/* torch.promote_types over bool, the integers and the real floats. */
static alloy_dtype promote2(alloy_dtype a, alloy_dtype b) {
  if (a == NO_DTYPE) return b;
  if (b == NO_DTYPE || a == b) return a;
  if (a == ALLOY_BOOL) return b;
  if (b == ALLOY_BOOL) return a;
  if (is_float(a) && is_float(b)) {
    if ((a == ALLOY_F16 && b == ALLOY_BF16) || (a == ALLOY_BF16 && b == ALLOY_F16)) return ALLOY_F32;
    return a > b ? a : b;
  }
  if (is_float(a)) return a;
  if (is_float(b)) return b;
  if (a == ALLOY_U8 || b == ALLOY_U8) {
    alloy_dtype other = a == ALLOY_U8 ? b : a;
    return other == ALLOY_I8 ? ALLOY_I16 : other;
  }
  return a > b ? a : b;
}

/* A lower-ranked operand only counts when its category is higher. */
static alloy_dtype combine_categories(alloy_dtype higher, alloy_dtype lower) {
  if (higher == NO_DTYPE) return lower;
  if (lower == NO_DTYPE || is_float(higher)) return higher;
  if (higher == ALLOY_BOOL || is_float(lower)) return promote2(higher, lower);
  return higher;
}

/* The next space-separated word of *s into buf; false at the end. */
static bool next_word(const char **s, char *buf, size_t cap) {
  while (**s == ' ') (*s)++;
  if (!**s) return false;
  size_t n = 0;
  while (**s && **s != ' ') {
    if (n + 1 < cap) buf[n++] = **s;
    (*s)++;
  }
  buf[n] = 0;
  return true;
}

/* The string parameters' values, by mode number. */
static int mode_of(const char *s) {
  if (!s || !strcmp(s, "none")) return 0;
  if (!strcmp(s, "trunc") || !strcmp(s, "tanh")) return 1;
  if (!strcmp(s, "floor")) return 2;
  return -1;
}

/* Reads the scalar parameters named in op->params. */
static int read_params(const alloy_kernel_call *c, const pw_op *op, pw_ctx *p) {
  char name[64];
  const char *s = op->params;
  for (int k = 0; k < MAX_PARAMS && next_word(&s, name, sizeof name); k++) {
    char *colon = strchr(name, ':');
    if (colon) {
      *colon = 0;
      p->mode = mode_of(ref_str(c, name));
      if (p->mode < 0) return ref_fail(c, "%s", "unknown mode");
      continue;
    }
    double d;
    int64_t i;
    bool b;
    if (ref_int(c, name, &i)) {
      p->si[k] = i;
      p->s[k] = (double)i;
    } else if (ref_float(c, name, &d)) {
      p->s[k] = d;
      p->si[k] = to_i64(d);
    } else if (ref_bool(c, name, &b)) {
      p->s[k] = b;
      p->si[k] = b;
    } else {
      p->s[k] = NAN;
      continue;
    }
    p->has[k] = true;
  }
  return 0;
}

/* PyTorch's cpu_kernel_vec runs the innermost (coalesced) loop in steps of
 * 64 bytes of cd (two AVX2 vectors) and the remainder of each row
 * element by element, where a few ops' scalar and vector forms differ
 * (fmod: exact std::fmod against Sleef's). The output is fresh and
 * contiguous: its trailing dims coalesce while every operand keeps the
 * same pattern there (all its sizes full, or all broadcast). Returns the
 * row length; *vec_end the elements of each row done by vectors. */
static int64_t vec_lanes(const alloy_kernel_tensor *out, const alloy_kernel_tensor *const *ins, int n,
                         alloy_dtype cd, int64_t *vec_end) {
  int64_t inner = 1;
  int state[MAX_OPERANDS] = {0}; /* 0 unset, 1 full, 2 broadcast */
  for (int d = out->rank - 1; d >= 0; d--) {
    int64_t size = out->sizes[d];
    if (size == 1) continue;
    bool same = true;
    int now[MAX_OPERANDS];
    for (int k = 0; k < n; k++) {
      int id = d - (out->rank - ins[k]->rank);
      now[k] = id >= 0 && ins[k]->sizes[id] == size ? 1 : 2;
      if (state[k] && state[k] != now[k]) same = false;
    }
    if (!same) break;
    memcpy(state, now, sizeof now);
    inner *= size;
  }
  int64_t chunk = 64 / (int64_t)alloy_dtype_size(cd);
  *vec_end = inner / chunk * chunk;
  return inner;
}

static int run_pw(const alloy_kernel_call *c, const pw_op *op) {
  pw_ctx p;
  memset(&p, 0, sizeof p);
  ref_scalar_tensor scratch[MAX_OPERANDS];
  const alloy_kernel_tensor *ins[MAX_OPERANDS];
  bool promoted[MAX_OPERANDS];
  alloy_dtype dim = NO_DTYPE, zero_dim = NO_DTYPE, number = NO_DTYPE;
  int n = 0;
  char name[64];
  for (const char *s = op->operands; n < MAX_OPERANDS && next_word(&s, name, sizeof name); n++) {
    const char *nm = name[0] == '?' ? name + 1 : name;
    ins[n] = ref_operand(c, nm, &scratch[n]);
    p.present[n] = ins[n] != NULL;
    promoted[n] = p.present[n] && name[0] != '?';
    if (!ins[n]) { /* None: a zero the functions ignore */
      memset(&scratch[n], 0, sizeof scratch[n]);
      scratch[n].t.dtype = ALLOY_I64;
      scratch[n].t.data = &scratch[n].value;
      ins[n] = &scratch[n].t;
    }
    if (!promoted[n]) continue;
    if (ins[n] == &scratch[n].t) { /* a Python number */
      bool b;
      alloy_dtype t = ref_bool(c, nm, &b) ? ALLOY_BOOL : is_float(ins[n]->dtype) ? ALLOY_F32 : ALLOY_I64;
      number = promote2(number, t);
    } else if (ins[n]->rank == 0) {
      zero_dim = promote2(zero_dim, ins[n]->dtype);
    } else {
      dim = promote2(dim, ins[n]->dtype);
    }
  }
  if (read_params(c, op, &p)) return 1;
  alloy_dtype cd = combine_categories(dim, combine_categories(zero_dim, number));
  if (cd == NO_DTYPE) cd = ALLOY_F32;
  if ((op->promo == PROMO_FLOAT || (op->promo == PROMO_DIV && p.mode == 0)) && !is_float(cd)) cd = ALLOY_F32;
  const alloy_kernel_tensor *out = &c->outputs[0];
  /* Scalar bounds take part in clamp's promotion (clamp(int, 0.5) is
   * float): shape inference already made the output float, so compute in
   * it. */
  if (!is_float(cd) && is_float(out->dtype)) cd = out->dtype;
  p.cd = cd;
  p.in0 = ins[0]->dtype;
  p.out = out->dtype;
  p.rnd = cd;
  p.single = ref_float32_opmath(cd);
  p.bits = (int)alloy_dtype_size(cd) * 8;
  /* PyTorch keeps float16/bfloat16's one-element divisor or factor in
   * float32 and computes with it there */
  bool keep_other = (op->flags & PW_SCALAR_OPMATH) && n > 1 &&
                    (cd == ALLOY_F16 || cd == ALLOY_BF16) && ref_numel(ins[1]) == 1;
  if (keep_other) p.rnd = ALLOY_F32;
  for (int k = 0; k < MAX_PARAMS; k++)
    if (p.has[k] && p.single) p.s[k] = (float)p.s[k];

  bool fl = is_float(cd);
  if ((fl && !op->f) || (!fl && !op->i)) return ref_fail(c, "%s", "not implemented for this dtype");
  ref_iter it;
  ref_iter_init(&it, out, ins, n);
  /* Where each element falls, vector loop or row tail, only for the ops
   * that tell them apart. */
  bool lanes = op->flags & PW_VEC_TAIL;
  int64_t vec_end = 0, inner = lanes ? vec_lanes(out, ins, n, cd, &vec_end) : 1, at = 0;
  while (ref_iter_next(&it)) {
    if (lanes) p.vec = at++ % inner < vec_end;
    if (fl) {
      double x[MAX_OPERANDS] = {0};
      for (int k = 0; k < n; k++) {
        double v = ref_load_f(ins[k]->data, ins[k]->dtype, it.offset[k + 1]);
        x[k] = !promoted[k] ? v : round_float(k == 1 && keep_other ? ALLOY_F32 : cd, v);
      }
      ref_store_f(out->data, out->dtype, it.offset[0], op->f(x, &p));
    } else {
      int64_t x[MAX_OPERANDS] = {0};
      for (int k = 0; k < n; k++) {
        int64_t v = ref_load_i(ins[k]->data, ins[k]->dtype, it.offset[k + 1]);
        x[k] = promoted[k] ? wrap_to(cd, v) : v;
      }
      ref_store_i(out->data, out->dtype, it.offset[0], op->i(x, &p));
    }
    if (p.err) return ref_fail(c, "%s", p.err);
  }
  return 0;
}

/* ---- arithmetic ------------------------------------------------------------
 * Parameter 0 is alpha where there is one. */

static int64_t wrap(uint64_t v) { return (int64_t)v; }

static double add_f(const double *x, pw_ctx *p) { return x[0] + p->s[0] * x[1]; }
static int64_t add_i(const int64_t *x, pw_ctx *p) {
  return wrap((uint64_t)x[0] + (uint64_t)p->si[0] * (uint64_t)x[1]);
}
/* PyTorch refuses - on bool tensors (subtraction and negation). */
static bool bool_minus(pw_ctx *p) {
  if (p->cd == ALLOY_BOOL) p->err = "the - operator is not supported on bool tensors";
  return p->err != NULL;
}
static double sub_f(const double *x, pw_ctx *p) { return x[0] - p->s[0] * x[1]; }
static int64_t sub_i(const int64_t *x, pw_ctx *p) {
  return bool_minus(p) ? 0 : wrap((uint64_t)x[0] - (uint64_t)p->si[0] * (uint64_t)x[1]);
}
/* rsub(self, other, alpha) = other - alpha * self */
static double rsub_f(const double *x, pw_ctx *p) { return x[1] - p->s[0] * x[0]; }
static int64_t rsub_i(const int64_t *x, pw_ctx *p) {
  return bool_minus(p) ? 0 : wrap((uint64_t)x[1] - (uint64_t)p->si[0] * (uint64_t)x[0]);
}
/* the prims take no alpha */
static double padd_f(const double *x, pw_ctx *p) { (void)p; return x[0] + x[1]; }
static int64_t padd_i(const int64_t *x, pw_ctx *p) { (void)p; return wrap((uint64_t)x[0] + (uint64_t)x[1]); }
static double psub_f(const double *x, pw_ctx *p) { (void)p; return x[0] - x[1]; }
static int64_t psub_i(const int64_t *x, pw_ctx *p) {
  return bool_minus(p) ? 0 : wrap((uint64_t)x[0] - (uint64_t)x[1]);
}
static double mul_f(const double *x, pw_ctx *p) { (void)p; return x[0] * x[1]; }
static int64_t mul_i(const int64_t *x, pw_ctx *p) { (void)p; return wrap((uint64_t)x[0] * (uint64_t)x[1]); }

/* Integer quotient and remainder, C's (truncating); a zero divisor fails,
 * and INT64_MIN / -1 wraps instead of trapping. */
static int64_t idiv(int64_t a, int64_t b, pw_ctx *p) {
  if (b == 0) return p->err = "ZeroDivisionError", 0;
  return b == -1 ? wrap(0u - (uint64_t)a) : a / b;
}
static int64_t imod(int64_t a, int64_t b, pw_ctx *p) {
  if (b == 0) return p->err = "ZeroDivisionError", 0;
  return b == -1 ? 0 : a % b;
}

/* Python's floor division of floats (c10::div_floor_floating): from fmod,
 * so that a == b * q + r holds as well as it can; each step rounded in
 * PyTorch's precision. */
static double div_floor_f(double a, double b, const pw_ctx *p) {
  if (b == 0) return a / b;
  double mod = fmod(a, b);
  double div = R(p, R(p, a - mod) / b);
  if (mod != 0 && (b < 0) != (mod < 0)) div = R(p, div - 1);
  if (div == 0) return copysign(0.0, a / b);
  double fl = floor(div);
  if (R(p, div - fl) > 0.5) fl = R(p, fl + 1);
  return fl;
}
static int64_t div_floor_i(int64_t a, int64_t b, pw_ctx *p) {
  int64_t q = idiv(a, b, p);
  if (b != 0 && b != -1 && a % b != 0 && ((a < 0) != (b < 0))) q--;
  return q;
}

/* div with rounding_mode: 0 true, 1 trunc, 2 floor */
static double div_f(const double *x, pw_ctx *p) {
  if (p->mode == 1) return trunc(R(p, x[0] / x[1]));
  if (p->mode == 2) return div_floor_f(x[0], x[1], p);
  return x[0] / x[1];
}
static int64_t div_i(const int64_t *x, pw_ctx *p) {
  return p->mode == 2 ? div_floor_i(x[0], x[1], p) : idiv(x[0], x[1], p);
}
static double floordiv_f(const double *x, pw_ctx *p) { return div_floor_f(x[0], x[1], p); }
static int64_t floordiv_i(const int64_t *x, pw_ctx *p) { return div_floor_i(x[0], x[1], p); }
/* prims.div: true division for floats, truncation for integers */
static double pdiv_f(const double *x, pw_ctx *p) { (void)p; return x[0] / x[1]; }
static int64_t pdiv_i(const int64_t *x, pw_ctx *p) { return idiv(x[0], x[1], p); }

/* PyTorch's vectorized fmod (Sleef's, in float32 for float32, float16 and
 * bfloat16) gives NaN when |a / b| overflows the type, where C's fmod (its
 * scalar loop: a row's tail, a small tensor) is exact; remainder and fmod
 * agree with it. */
static bool fmod_overflows(double a, double b, const pw_ctx *p) {
  return p->vec && isfinite(a) && isfinite(b) && b != 0 && fabs(a) / fabs(b) > (p->single ? FLT_MAX : DBL_MAX);
}

/* remainder takes the divisor's sign (Python's %); fmod the dividend's. */
static double remainder_f(const double *x, pw_ctx *p) {
  if (fmod_overflows(x[0], x[1], p)) return NAN;
  double mod = fmod(x[0], x[1]);
  if (mod != 0 && (x[1] < 0) != (mod < 0)) mod = R(p, mod + x[1]);
  return mod;
}
static int64_t remainder_i(const int64_t *x, pw_ctx *p) {
  int64_t r = imod(x[0], x[1], p);
  if (r != 0 && (r < 0) != (x[1] < 0)) r += x[1];
  return r;
}
static double fmod_f(const double *x, pw_ctx *p) {
  return fmod_overflows(x[0], x[1], p) ? NAN : fmod(x[0], x[1]);
}
static int64_t fmod_i(const int64_t *x, pw_ctx *p) { return imod(x[0], x[1], p); }

/* _add_relu(a, b, alpha) = min(hi, max(0, a + alpha b)), hi the largest
 * value of a's own dtype (ATen picks both bounds by self's dtype, whatever
 * the operands promote to), as ATen's scalar loop computes it: alpha b
 * rounded first, and a NaN sum (or -0) made 0 by std::max(0, v). (Its
 * vector loop, which takes the rows' multiples of 64 bytes, fuses the
 * multiply-add and keeps NaN; this and the decomposition rule, which can
 * only be one of the two, keep to the scalar loop's 0.) */
static double add_relu_f(const double *x, pw_ctx *p) {
  double lo, hi = 0;
  alloy_dtype_limits(p->in0, &lo, &hi);
  double v = R(p, x[0] + R(p, p->s[0] * x[1]));
  v = 0 < v ? v : 0;
  return v > hi ? hi : v;
}
static int64_t add_relu_i(const int64_t *x, pw_ctx *p) {
  double lo, hi = 0;
  alloy_dtype_limits(p->in0, &lo, &hi);
  int64_t v = wrap_to(p->cd, wrap((uint64_t)x[0] + (uint64_t)p->si[0] * (uint64_t)x[1]));
  return v < 0 ? 0 : (double)v > hi ? to_i64(hi) : v;
}

/* Integer powers by squaring; a negative exponent gives 1 for base 1,
 * +-1 for base -1, 0 otherwise (PyTorch's powi). */
static int64_t powi(int64_t a, int64_t b) {
  if (b < 0) return a == 1 ? 1 : a == -1 ? ((-b) % 2 ? -1 : 1) : 0;
  uint64_t r = 1, base = (uint64_t)a;
  for (; b; b /= 2) {
    if (b & 1) r *= base;
    base *= base;
  }
  return wrap(r);
}
static double pow_f(const double *x, pw_ctx *p) { (void)p; return pow(x[0], x[1]); }
static int64_t pow_i(const int64_t *x, pw_ctx *p) { (void)p; return powi(x[0], x[1]); }
/* A Scalar exponent: PyTorch takes sqrt, rsqrt and reciprocal for 0.5,
 * -0.5 and -1 (which differ from pow at -0 and -inf), except in float16;
 * and refuses a negative integer exponent for an integer tensor. */
static double pow_scalar_f(const double *x, pw_ctx *p) {
  if (p->cd != ALLOY_F16) {
    if (x[1] == 0.5) return sqrt(x[0]);
    if (x[1] == -0.5) return 1 / sqrt(x[0]);
    if (x[1] == -1) return 1 / x[0];
  }
  return pow(x[0], x[1]);
}
static int64_t pow_scalar_i(const int64_t *x, pw_ctx *p) {
  if (x[1] < 0) p->err = "Integers to negative integer powers are not allowed.";
  return powi(x[0], x[1]);
}

/* gcd / lcm as PyTorch's calc_gcd: abs() of each operand in dtype t
 * (so the most negative value stays negative), then Euclid with C's
 * remainder: a result of the most negative value's gcd can be negative
 * (gcd(-32768, -32767) is -1 in int16). */
static int64_t gcd_t(alloy_dtype t, int64_t a, int64_t b) {
  a = wrap_to(t, a < 0 ? wrap(0u - (uint64_t)a) : a);
  b = wrap_to(t, b < 0 ? wrap(0u - (uint64_t)b) : b);
  while (a != 0) {
    int64_t c = a;
    a = a == -1 ? 0 : b % a;
    b = c;
  }
  return b;
}
static int64_t gcd_i(const int64_t *x, pw_ctx *p) { return gcd_t(p->cd, x[0], x[1]); }
/* lcm: abs(a / g * b), computed in int for the types narrower than int
 * (C++'s promotion: no wrap before abs), else wrapping in the dtype. */
static int64_t lcm_i(const int64_t *x, pw_ctx *p) {
  int64_t g = gcd_t(p->cd, x[0], x[1]);
  if (g == 0) return 0;
  bool narrow = p->cd == ALLOY_I8 || p->cd == ALLOY_U8 || p->cd == ALLOY_I16;
  int64_t v = wrap((uint64_t)wrap_to(p->cd, idiv(x[0], g, p)) * (uint64_t)x[1]);
  if (!narrow) v = wrap_to(p->cd, v);
  return wrap_to(p->cd, v < 0 ? wrap(0u - (uint64_t)v) : v);
}

/* addcmul / addcdiv: self + value * t1 (* or /) t2; parameter 0 is value */
static double addcmul_f(const double *x, pw_ctx *p) { return x[0] + p->s[0] * x[1] * x[2]; }
static int64_t addcmul_i(const int64_t *x, pw_ctx *p) {
  return wrap((uint64_t)x[0] + (uint64_t)p->si[0] * (uint64_t)x[1] * (uint64_t)x[2]);
}
static double addcdiv_f(const double *x, pw_ctx *p) { return x[0] + p->s[0] * x[1] / x[2]; }
static int64_t addcdiv_i(const int64_t *x, pw_ctx *p) {
  (void)x;
  p->err = "Integer division with addcdiv is no longer supported";
  return 0;
}

/* lerp: from the nearer end, as PyTorch does, for accuracy at weight 1. */
static double lerp(double a, double b, double w) {
  return fabs(w) < 0.5 ? a + w * (b - a) : b - (b - a) * (1 - w);
}
static double lerp_f(const double *x, pw_ctx *p) { (void)p; return lerp(x[0], x[1], x[2]); }
static double lerp_scalar_f(const double *x, pw_ctx *p) { return lerp(x[0], x[1], p->s[0]); }

/* ---- comparisons, logic, bits ---------------------------------------------- */

#define CMP(name, op)                                                             \
  static double name##_f(const double *x, pw_ctx *p) { (void)p; return x[0] op x[1]; } \
  static int64_t name##_i(const int64_t *x, pw_ctx *p) { (void)p; return x[0] op x[1]; }
CMP(eq, ==)
CMP(ne, !=)
CMP(lt, <)
CMP(le, <=)
CMP(gt, >)
CMP(ge, >=)
#undef CMP

static double land_f(const double *x, pw_ctx *p) { (void)p; return x[0] != 0 && x[1] != 0; }
static int64_t land_i(const int64_t *x, pw_ctx *p) { (void)p; return x[0] != 0 && x[1] != 0; }
static double lor_f(const double *x, pw_ctx *p) { (void)p; return x[0] != 0 || x[1] != 0; }
static int64_t lor_i(const int64_t *x, pw_ctx *p) { (void)p; return x[0] != 0 || x[1] != 0; }
static double lxor_f(const double *x, pw_ctx *p) { (void)p; return (x[0] != 0) != (x[1] != 0); }
static int64_t lxor_i(const int64_t *x, pw_ctx *p) { (void)p; return (x[0] != 0) != (x[1] != 0); }
static double lnot_f(const double *x, pw_ctx *p) { (void)p; return x[0] == 0; }
static int64_t lnot_i(const int64_t *x, pw_ctx *p) { (void)p; return x[0] == 0; }

static int64_t band_i(const int64_t *x, pw_ctx *p) { (void)p; return x[0] & x[1]; }
static int64_t bor_i(const int64_t *x, pw_ctx *p) { (void)p; return x[0] | x[1]; }
static int64_t bxor_i(const int64_t *x, pw_ctx *p) { (void)p; return x[0] ^ x[1]; }
/* bool's not is logical */
static int64_t bnot_i(const int64_t *x, pw_ctx *p) { return p->cd == ALLOY_BOOL ? !x[0] : ~x[0]; }
/* Shifts by a negative amount or by the width or more: 0 to the left, the
 * sign to the right (PyTorch's lshift/rshift, per dtype width). */
static int64_t shl_i(const int64_t *x, pw_ctx *p) {
  if (x[1] < 0 || x[1] >= p->bits) return 0;
  return wrap((uint64_t)x[0] << x[1]);
}
static int64_t shr_i(const int64_t *x, pw_ctx *p) {
  int max = p->bits - (p->cd == ALLOY_U8 ? 0 : 1);
  int64_t s = x[1] < 0 || x[1] >= max ? max : x[1];
  return s >= 64 ? 0 : x[0] >> s;
}

/* maximum/minimum propagate NaN, fmax/fmin ignore it; bool is or/and. */
static double maximum_f(const double *x, pw_ctx *p) {
  (void)p;
  return isnan(x[0]) || isnan(x[1]) ? NAN : x[0] > x[1] ? x[0] : x[1];
}
static double minimum_f(const double *x, pw_ctx *p) {
  (void)p;
  return isnan(x[0]) || isnan(x[1]) ? NAN : x[0] < x[1] ? x[0] : x[1];
}
static int64_t maximum_i(const int64_t *x, pw_ctx *p) { (void)p; return x[0] > x[1] ? x[0] : x[1]; }
static int64_t minimum_i(const int64_t *x, pw_ctx *p) { (void)p; return x[0] < x[1] ? x[0] : x[1]; }
static double fmax_f(const double *x, pw_ctx *p) { (void)p; return fmax(x[0], x[1]); }
static double fmin_f(const double *x, pw_ctx *p) { (void)p; return fmin(x[0], x[1]); }

/* clamp: NaN in the value or a bound gives NaN; the max bound wins when
 * min > max. Bounds from operands 1, 2 (clamp.Tensor, clamp_min.Tensor,
 * ...) or from parameters 0, 1 (clamp, hardtanh, ...). */
static double clamp(double v, bool has_lo, double lo, bool has_hi, double hi) {
  if (has_lo) v = isnan(v) || isnan(lo) ? NAN : v < lo ? lo : v;
  if (has_hi) v = isnan(v) || isnan(hi) ? NAN : v > hi ? hi : v;
  return v;
}
static int64_t clampi(int64_t v, bool has_lo, int64_t lo, bool has_hi, int64_t hi) {
  if (has_lo && v < lo) v = lo;
  if (has_hi && v > hi) v = hi;
  return v;
}
static double clamp_t_f(const double *x, pw_ctx *p) {
  return clamp(x[0], p->present[1], x[1], p->present[2], x[2]);
}
static int64_t clamp_t_i(const int64_t *x, pw_ctx *p) {
  return clampi(x[0], p->present[1], x[1], p->present[2], x[2]);
}
static double clamp_s_f(const double *x, pw_ctx *p) {
  return clamp(x[0], p->has[0], p->s[0], p->has[1], p->s[1]);
}
/* The Scalar bounds convert to the result dtype first (Scalar::to<T>), so
 * on uint8 a negative bound wraps: clamp(x, min=-1) is 255 everywhere. */
static int64_t clamp_s_i(const int64_t *x, pw_ctx *p) {
  return clampi(x[0], p->has[0], wrap_to(p->out, p->si[0]), p->has[1], wrap_to(p->out, p->si[1]));
}
static double clamp_max_t_f(const double *x, pw_ctx *p) { (void)p; return clamp(x[0], false, 0, true, x[1]); }
static int64_t clamp_max_t_i(const int64_t *x, pw_ctx *p) { (void)p; return clampi(x[0], false, 0, true, x[1]); }

static double where_f(const double *x, pw_ctx *p) { (void)p; return x[0] != 0 ? x[1] : x[2]; }
static int64_t where_i(const int64_t *x, pw_ctx *p) { (void)p; return x[0] != 0 ? x[1] : x[2]; }

/* ---- binary floating functions ---------------------------------------------- */

#define BINARY_F(name, expr) \
  static double name(const double *x, pw_ctx *p) { (void)p; double a = x[0], b = x[1]; return expr; }
BINARY_F(atan2_f, atan2(a, b))
BINARY_F(copysign_f, copysign(a, b))
BINARY_F(hypot_f, hypot(a, b))
BINARY_F(heaviside_f, a == 0 ? b : a > 0)
#undef BINARY_F
/* ldexp is PyTorch's mul(self, pow(2, other)): the power rounds to the
 * dtype first, so 0 * 2^254 in float32 is 0 * inf = NaN. */
static double ldexp_f(const double *x, pw_ctx *p) { return x[0] * R(p, exp2(x[1])); }
#define BINARY_F(name, expr) \
  static double name(const double *x, pw_ctx *p) { (void)p; double a = x[0], b = x[1]; return expr; }
/* xlogy and xlog1py: 0 where x is 0, unless y is NaN */
BINARY_F(xlogy_f, isnan(b) ? NAN : a == 0 ? 0 : a * log(b))
BINARY_F(xlog1py_f, isnan(b) ? NAN : a == 0 ? 0 : a * log1p(b))
BINARY_F(logaddexp_f, isinf(a) && a == b ? a : fmax(a, b) + log1p(exp(-fabs(a - b))))
BINARY_F(logaddexp2_f, isinf(a) && a == b ? a : fmax(a, b) + log1p(exp2(-fabs(a - b))) / M_LN2)
BINARY_F(zeta_f, ref_zeta(a, b))
BINARY_F(igamma_f, ref_igamma(a, b))
BINARY_F(igammac_f, ref_igammac(a, b))
#undef BINARY_F
static int64_t heaviside_i(const int64_t *x, pw_ctx *p) { (void)p; return x[0] == 0 ? x[1] : x[0] > 0; }

/* nextafter in the computation dtype's own format. */
static double nextafter_f(const double *x, pw_ctx *p) {
  double a = x[0], b = x[1];
  if (p->cd == ALLOY_F64) return nextafter(a, b);
  if (p->cd == ALLOY_F32) return nextafterf((float)a, (float)b);
  if (isnan(a) || isnan(b)) return a + b;
  if (a == b) return b;
  bool half = p->cd == ALLOY_F16;
  uint16_t bits = half ? alloy_f16_from_f32((float)a) : alloy_bf16_from_f32((float)a);
  if (a == 0) bits = (uint16_t)((signbit(b) ? 0x8000 : 0) | 1);
  else if ((a < b) == (a > 0)) bits++; /* away from zero */
  else bits--;
  return half ? alloy_f32_from_f16(bits) : alloy_f32_from_bf16(bits);
}

/* The orthogonal polynomials, in x and degree n (rounded as PyTorch's
 * float kernel when single). */
#define POLY_F(name, fn) \
  static double name(const double *x, pw_ctx *p) { return fn(x[0], x[1], p->single); }
POLY_F(cheb_t_f, ref_chebyshev_t)
POLY_F(cheb_u_f, ref_chebyshev_u)
POLY_F(cheb_v_f, ref_chebyshev_v)
POLY_F(cheb_w_f, ref_chebyshev_w)
POLY_F(scheb_t_f, ref_shifted_chebyshev_t)
POLY_F(scheb_u_f, ref_shifted_chebyshev_u)
POLY_F(scheb_v_f, ref_shifted_chebyshev_v)
POLY_F(scheb_w_f, ref_shifted_chebyshev_w)
POLY_F(hermite_h_f, ref_hermite_h)
POLY_F(hermite_he_f, ref_hermite_he)
POLY_F(laguerre_f, ref_laguerre_l)
POLY_F(legendre_f, ref_legendre_p)
#undef POLY_F

/* ---- unary functions ---------------------------------------------------------- */

#define UNARY_F(name, expr) \
  static double name(const double *x, pw_ctx *p) { (void)p; double a = x[0]; return expr; }
#define UNARY_I(name, expr) \
  static int64_t name(const int64_t *x, pw_ctx *p) { (void)p; int64_t a = x[0]; (void)a; return expr; }

UNARY_F(abs_f, fabs(a))
UNARY_I(abs_i, a < 0 ? wrap(0u - (uint64_t)a) : a)
UNARY_F(neg_f, -a)
static int64_t neg_i(const int64_t *x, pw_ctx *p) { return bool_minus(p) ? 0 : wrap(0u - (uint64_t)x[0]); }
UNARY_F(identity_f, a)
UNARY_I(identity_i, a)
/* sign and sgn of NaN are 0, of -0.0 is +0.0: (0 < a) - (a < 0) */
UNARY_F(sign_f, (double)((0 < a) - (a < 0)))
UNARY_I(sign_i, (0 < a) - (a < 0))
UNARY_F(signbit_f, signbit(a) != 0)
UNARY_I(signbit_i, a < 0)
/* relu keeps NaN, as max(x, 0) does in PyTorch */
UNARY_F(relu_f, a > 0 || isnan(a) ? a : 0.0)
UNARY_I(relu_i, a > 0 ? a : 0)
UNARY_F(ceil_f, ceil(a))
UNARY_F(floor_f, floor(a))
UNARY_F(trunc_f, trunc(a))
UNARY_F(round_f, nearbyint(a)) /* half to even */
UNARY_F(frac_f, a - trunc(a))
UNARY_F(isnan_f, isnan(a) != 0)
UNARY_F(isinf_f, isinf(a) != 0)
UNARY_F(isposinf_f, a == INFINITY)
UNARY_F(isneginf_f, a == -INFINITY)
UNARY_F(isfinite_f, isfinite(a) != 0)
UNARY_I(zero_i, 0)
UNARY_I(one_i, 1)
UNARY_F(sqrt_f, sqrt(a))
UNARY_F(rsqrt_f, 1 / sqrt(a))
UNARY_F(cbrt_f, cbrt(a))
UNARY_F(reciprocal_f, 1 / a)
UNARY_F(exp_f, exp(a))
UNARY_F(exp2_f, exp2(a))
UNARY_F(expm1_f, expm1(a))
UNARY_F(log_f, log(a))
UNARY_F(log2_f, log2(a))
UNARY_F(log10_f, log10(a))
UNARY_F(log1p_f, log1p(a))
UNARY_F(sin_f, sin(a))
UNARY_F(cos_f, cos(a))
UNARY_F(tan_f, tan(a))
UNARY_F(asin_f, asin(a))
UNARY_F(acos_f, acos(a))
UNARY_F(atan_f, atan(a))
UNARY_F(sinh_f, sinh(a))
UNARY_F(cosh_f, cosh(a))
UNARY_F(tanh_f, tanh(a))
UNARY_F(asinh_f, asinh(a))
UNARY_F(acosh_f, acosh(a))
UNARY_F(atanh_f, atanh(a))
UNARY_F(erf_f, erf(a))
UNARY_F(erfc_f, erfc(a))
UNARY_F(erfinv_f, ref_erfinv(a))
UNARY_F(erfcx_f, ref_erfcx(a))
UNARY_F(ndtri_f, ref_ndtri(a))
UNARY_F(log_ndtr_f, ref_log_ndtr(a))
UNARY_F(lgamma_f, lgamma(a))
UNARY_F(digamma_f, ref_digamma(a))
UNARY_F(sigmoid_f, 1 / (1 + exp(-a)))
UNARY_F(silu_f, a / (1 + exp(-a)))
UNARY_F(mish_f, a * tanh(log1p(exp(a))))
UNARY_F(angle_f, isnan(a) ? a : a < 0 ? M_PI : 0)
UNARY_F(deg2rad_f, a * (M_PI / 180))
UNARY_F(rad2deg_f, a * (180 / M_PI))
/* sinc in opmath_type: float for float32, float16 and bfloat16, where pi * a
 * rounds to float and past FLT_MAX is inf (so sinc is NaN there). */
static double sinc_f(const double *x, pw_ctx *p) {
  double a = x[0];
  if (a == 0) return 1;
  if (p->rnd == ALLOY_F64) return sin(M_PI * a) / (M_PI * a);
  float product = (float)M_PI * (float)a;
  return sinf(product) / product;
}
/* entr: -x log x, 0 at 0, -inf below */
UNARY_F(entr_f, isnan(a) ? a : a > 0 ? -a * log(a) : a == 0 ? 0 : -INFINITY)
UNARY_F(i0_f, ref_bessel_i0(a))
UNARY_F(i0e_f, ref_bessel_i0e(a))
UNARY_F(i1_f, ref_bessel_i1(a))
UNARY_F(i1e_f, ref_bessel_i1e(a))
UNARY_F(k0_f, ref_bessel_k0(a))
UNARY_F(k0e_f, ref_bessel_k0e(a))
UNARY_F(k1_f, ref_bessel_k1(a))
UNARY_F(k1e_f, ref_bessel_k1e(a))
/* J and Y of order nu (0 or 1) as PyTorch's float32 kernels give them past
 * x = 5: M cos (J) or M sin (Y) of the phase x - (2 nu + 1) pi / 4, which
 * they round to float32 (by up to 64 radians near 2^31, an int32's
 * range). M and the true phase come from J and Y in double; the rounded
 * phase shifts it. */
static double bessel_float_phase(int nu, bool y, double x) {
  double ax = fabs(x), jv = nu ? ref_bessel_j1(ax) : ref_bessel_j0(ax);
  double yv = nu ? ref_bessel_y1(ax) : ref_bessel_y0(ax);
  double shift = nu ? 2.356194490192344928846982537459627163 : 0.785398163397448309615660845819875721;
  double xn = (float)((float)ax - (float)shift), th = atan2(yv, jv) + (xn - (ax - shift)), m = hypot(jv, yv);
  double v = y ? m * sin(th) : m * cos(th);
  return nu && x < 0 ? -v : v;
}
static double bessel_f(const pw_ctx *p, int nu, bool y, double a) {
  if (p->single && isfinite(a) && (y ? a : fabs(a)) > 5) return bessel_float_phase(nu, y, a);
  return y ? (nu ? ref_bessel_y1(a) : ref_bessel_y0(a)) : (nu ? ref_bessel_j1(a) : ref_bessel_j0(a));
}
static double j0_f(const double *x, pw_ctx *p) { return bessel_f(p, 0, false, x[0]); }
static double j1_f(const double *x, pw_ctx *p) { return bessel_f(p, 1, false, x[0]); }
static double y0_f(const double *x, pw_ctx *p) { return bessel_f(p, 0, true, x[0]); }
static double y1_f(const double *x, pw_ctx *p) { return bessel_f(p, 1, true, x[0]); }
UNARY_F(airy_ai_f, ref_airy_ai(a))
UNARY_F(spherical_j0_f, ref_spherical_bessel_j0(a))
/* hardsigmoid / hardswish: comparisons, not fmin/fmax, so NaN stays NaN.
 * hardswish multiplies before dividing by 6, each step in float32 for the
 * single-precision dtypes (x * 6 overflows to inf above FLT_MAX / 6). */
UNARY_F(hardsigmoid_f, (a + 3 < 0 ? 0 : a + 3 > 6 ? 6 : a + 3) / 6)
static double hardswish_f(const double *x, pw_ctx *p) {
  double a = x[0], y = a * (a + 3 < 0 ? 0 : a + 3 > 6 ? 6 : a + 3);
  return (p->single ? (float)y : y) / 6;
}
#undef UNARY_F
#undef UNARY_I

/* gelu: approximate "none" (erf) or "tanh" (mode 1) */
static double gelu_f(const double *x, pw_ctx *p) {
  double a = x[0];
  if (p->mode == 1) {
    const double beta = M_SQRT2 * M_2_SQRTPI * 0.5, kappa = 0.044715;
    return 0.5 * a * (1 + tanh(beta * (a + kappa * a * a * a)));
  }
  return a * 0.5 * (1 + erf(a * M_SQRT1_2));
}

/* elu(alpha, scale, input_scale); celu(alpha) is elu(alpha, 1, 1/alpha) */
static double elu(double a, double alpha, double scale, double input_scale) {
  return a <= 0 ? expm1(a * input_scale) * alpha * scale : a * scale;
}
static double elu_f(const double *x, pw_ctx *p) { return elu(x[0], p->s[0], p->s[1], p->s[2]); }
static double celu_f(const double *x, pw_ctx *p) { return elu(x[0], p->s[0], 1, 1 / p->s[0]); }
static double leaky_relu_f(const double *x, pw_ctx *p) { return x[0] > 0 ? x[0] : x[0] * p->s[0]; }
/* softplus(beta, threshold): linear above the threshold */
static double softplus_f(const double *x, pw_ctx *p) {
  double ab = x[0] * p->s[0];
  return ab > p->s[1] ? x[0] : log1p(exp(ab)) / p->s[0];
}
/* softshrink keeps NaN (a * 0 in the dead zone); hardshrink zeroes there */
static double softshrink_f(const double *x, pw_ctx *p) {
  double a = x[0], l = p->s[0];
  return a > l ? a - l : a < -l ? a + l : a * 0;
}
static double hardshrink_f(const double *x, pw_ctx *p) {
  return x[0] >= -p->s[0] && x[0] <= p->s[0] ? 0 : x[0];
}
/* threshold(threshold, value): value where x <= threshold */
static double threshold_f(const double *x, pw_ctx *p) { return x[0] <= p->s[0] ? p->s[1] : x[0]; }
static int64_t threshold_i(const int64_t *x, pw_ctx *p) { return x[0] <= p->si[0] ? p->si[1] : x[0]; }
/* logit(eps): the input clamped to [eps, 1 - eps] when eps is given; the
 * ratio x / (1 - x) is computed in the tensor's own precision (float16 and
 * bfloat16 round each step there, as PyTorch's kernel does). */
static double logit_f(const double *x, pw_ctx *p) {
  double a = x[0];
  if (p->has[0]) {
    double lo = R(p, p->s[0]), hi = R(p, 1 - lo);
    a = a < lo ? lo : a > hi ? hi : a;
  }
  return log(R(p, a / R(p, 1 - a)));
}

/* nan_to_num(nan, posinf, neginf): defaults 0 and the output's extremes */
static double nan_to_num_f(const double *x, pw_ctx *p) {
  double a = x[0];
  if (isnan(a)) return p->has[0] ? p->s[0] : 0;
  if (!isinf(a)) return a;
  double low, big = DBL_MAX;
  alloy_dtype_limits(p->out, &low, &big);
  if (a > 0) return p->has[1] ? p->s[1] : big;
  return p->has[2] ? p->s[2] : -big;
}

/* round(decimals): scaled by 10^|decimals| in float32 opmath (double for
 * float64), rounded half to even, scaled back */
static double round_decimals_f(const double *x, pw_ctx *p) {
  int64_t d = p->si[0];
  bool neg = d < 0;
  double ten = pow(10, (double)(neg ? -d : d));
  if (p->single) ten = (float)ten;
  double r = p->single ? (double)(float)(neg ? x[0] / ten : x[0] * ten) : neg ? x[0] / ten : x[0] * ten;
  r = nearbyint(r);
  return neg ? r * ten : r / ten;
}

/* polygamma(n, x); mvlgamma(x, p): sum of lgamma(x - i/2) + p(p-1)/4 log pi,
 * defined for x > (p-1)/2 (PyTorch refuses the rest) */
static double polygamma_f(const double *x, pw_ctx *p) { return ref_polygamma(p->si[0], x[0], p->single); }
static double mvlgamma_f(const double *x, pw_ctx *p) {
  int64_t d = p->si[0];
  if (!(x[0] > (d - 1) / 2.0)) p->err = "All elements must be greater than (p-1)/2";
  double r = d * (d - 1) / 4.0 * log(M_PI);
  for (int64_t i = 0; i < d; i++) r += lgamma(x[0] - i / 2.0);
  return r;
}

/* fill(value): parameter 0. A bool tensor takes any nonzero value as true,
 * 0.5 too (Scalar::to<bool> is a C++ cast, not a truncation to 0). */
static double fill_f(const double *x, pw_ctx *p) { (void)x; return p->s[0]; }
static int64_t fill_i(const int64_t *x, pw_ctx *p) {
  (void)x;
  return p->out == ALLOY_BOOL ? p->s[0] != 0 : p->si[0];
}
static double zero_f(const double *x, pw_ctx *p) { (void)x; (void)p; return 0; }

/* ---- the table ------------------------------------------------------------------
 * X(op, operands, params, promotion, double function, int64 function, flags)
 * One list makes both the descriptors and the kernel-table rows. */

#define S PROMO_SAME
#define F PROMO_FLOAT
#define UN "self"
#define BIN "self other"
#define POLY "x n"
#define POINTWISE_OPS(X)                                                                   \
  /* arithmetic */                                                                         \
  X("aten.add.Tensor", BIN, "alpha", S, add_f, add_i, 0)                                   \
  X("aten.add.Scalar", BIN, "alpha", S, add_f, add_i, 0)                                   \
  X("aten.add_.Tensor", BIN, "alpha", S, add_f, add_i, 0)                                  \
  X("aten.add_.Scalar", BIN, "alpha", S, add_f, add_i, 0)                                  \
  X("aten.sub.Tensor", BIN, "alpha", S, sub_f, sub_i, 0)                                   \
  X("aten.sub.Scalar", BIN, "alpha", S, sub_f, sub_i, 0)                                   \
  X("aten.sub_.Tensor", BIN, "alpha", S, sub_f, sub_i, 0)                                  \
  X("aten.rsub.Tensor", BIN, "alpha", S, rsub_f, rsub_i, 0)                                \
  X("aten.rsub.Scalar", BIN, "alpha", S, rsub_f, rsub_i, 0)                                \
  X("aten.mul.Tensor", BIN, "", S, mul_f, mul_i, PW_SCALAR_OPMATH)                         \
  X("aten.mul.Scalar", BIN, "", S, mul_f, mul_i, PW_SCALAR_OPMATH)                         \
  X("aten.mul_.Tensor", BIN, "", S, mul_f, mul_i, PW_SCALAR_OPMATH)                        \
  X("aten.mul_.Scalar", BIN, "", S, mul_f, mul_i, PW_SCALAR_OPMATH)                        \
  X("aten.div.Tensor", BIN, "", F, div_f, NULL, PW_SCALAR_OPMATH)                          \
  X("aten.div.Scalar", BIN, "", F, div_f, NULL, PW_SCALAR_OPMATH)                          \
  X("aten.div_.Scalar", BIN, "", F, div_f, NULL, PW_SCALAR_OPMATH)                         \
  X("aten.div.Tensor_mode", BIN, "rounding_mode:s", PROMO_DIV, div_f, div_i, PW_SCALAR_OPMATH) \
  X("aten.div.Scalar_mode", BIN, "rounding_mode:s", PROMO_DIV, div_f, div_i, PW_SCALAR_OPMATH) \
  X("aten.floor_divide.default", BIN, "", S, floordiv_f, floordiv_i, PW_SCALAR_OPMATH)     \
  X("aten.remainder.Tensor", BIN, "", S, remainder_f, remainder_i, PW_VEC_TAIL)            \
  X("aten.remainder.Scalar", BIN, "", S, remainder_f, remainder_i, PW_VEC_TAIL)            \
  X("aten.fmod.Tensor", BIN, "", S, fmod_f, fmod_i, PW_VEC_TAIL)                           \
  X("aten.fmod.Scalar", BIN, "", S, fmod_f, fmod_i, PW_VEC_TAIL)                           \
  X("aten._add_relu.Tensor", BIN, "alpha", S, add_relu_f, add_relu_i, 0)                    \
  X("aten._add_relu.Scalar", BIN, "alpha", S, add_relu_f, add_relu_i, 0)                    \
  X("aten.pow.Tensor_Tensor", "self exponent", "", S, pow_f, pow_i, 0)                     \
  X("aten.pow.Tensor_Scalar", "self exponent", "", S, pow_scalar_f, pow_scalar_i, 0)       \
  X("aten.pow.Scalar", "self exponent", "", S, pow_f, pow_i, 0)                            \
  X("aten.addcmul.default", "self tensor1 tensor2", "value", S, addcmul_f, addcmul_i, 0)   \
  X("aten.addcdiv.default", "self tensor1 tensor2", "value", S, addcdiv_f, addcdiv_i, 0)   \
  X("aten.lerp.Scalar", "self end", "weight", S, lerp_scalar_f, NULL, 0)                   \
  X("aten.lerp.Tensor", "self end weight", "", S, lerp_f, NULL, 0)                         \
  X("aten.lerp_.Tensor", "self end weight", "", S, lerp_f, NULL, 0)                        \
  X("aten.gcd.default", BIN, "", S, NULL, gcd_i, 0)                                        \
  X("aten.lcm.default", BIN, "", S, NULL, lcm_i, 0)                                        \
  X("aten.neg.default", UN, "", S, neg_f, neg_i, 0)                                        \
  X("aten.abs.default", UN, "", S, abs_f, abs_i, 0)                                        \
  X("aten.reciprocal.default", UN, "", F, reciprocal_f, NULL, 0)                           \
  X("aten.sign.default", UN, "", S, sign_f, sign_i, 0)                                     \
  X("aten.sgn.default", UN, "", S, sign_f, sign_i, 0)                                      \
  X("aten.signbit.default", UN, "", S, signbit_f, signbit_i, 0)                            \
  X("aten.fill.Scalar", UN, "value", S, fill_f, fill_i, 0)                                 \
  X("aten.fill_.Scalar", UN, "value", S, fill_f, fill_i, 0)                                \
  X("aten.zero_.default", UN, "", S, zero_f, zero_i, 0)                                    \
  /* comparisons and logic */                                                              \
  X("aten.eq.Tensor", BIN, "", S, eq_f, eq_i, 0)                                           \
  X("aten.eq.Scalar", BIN, "", S, eq_f, eq_i, 0)                                           \
  X("aten.ne.Tensor", BIN, "", S, ne_f, ne_i, 0)                                           \
  X("aten.ne.Scalar", BIN, "", S, ne_f, ne_i, 0)                                           \
  X("aten.lt.Tensor", BIN, "", S, lt_f, lt_i, 0)                                           \
  X("aten.lt.Scalar", BIN, "", S, lt_f, lt_i, 0)                                           \
  X("aten.le.Tensor", BIN, "", S, le_f, le_i, 0)                                           \
  X("aten.le.Scalar", BIN, "", S, le_f, le_i, 0)                                           \
  X("aten.gt.Tensor", BIN, "", S, gt_f, gt_i, 0)                                           \
  X("aten.gt.Scalar", BIN, "", S, gt_f, gt_i, 0)                                           \
  X("aten.ge.Tensor", BIN, "", S, ge_f, ge_i, 0)                                           \
  X("aten.ge.Scalar", BIN, "", S, ge_f, ge_i, 0)                                           \
  X("aten.logical_and.default", BIN, "", S, land_f, land_i, 0)                             \
  X("aten.logical_and_.default", BIN, "", S, land_f, land_i, 0)                            \
  X("aten.logical_or.default", BIN, "", S, lor_f, lor_i, 0)                                \
  X("aten.logical_xor.default", BIN, "", S, lxor_f, lxor_i, 0)                             \
  X("aten.logical_not.default", UN, "", S, lnot_f, lnot_i, 0)                              \
  X("aten.logical_not_.default", UN, "", S, lnot_f, lnot_i, 0)                             \
  X("aten.bitwise_and.Tensor", BIN, "", S, NULL, band_i, 0)                                \
  X("aten.bitwise_and.Scalar", BIN, "", S, NULL, band_i, 0)                                \
  X("aten.bitwise_and_.Tensor", BIN, "", S, NULL, band_i, 0)                               \
  X("aten.__and__.Tensor", BIN, "", S, NULL, band_i, 0)                                    \
  X("aten.bitwise_or.Tensor", BIN, "", S, NULL, bor_i, 0)                                  \
  X("aten.bitwise_or.Scalar", BIN, "", S, NULL, bor_i, 0)                                  \
  X("aten.bitwise_or_.Tensor", BIN, "", S, NULL, bor_i, 0)                                 \
  X("aten.bitwise_xor.Tensor", BIN, "", S, NULL, bxor_i, 0)                                \
  X("aten.bitwise_xor.Scalar", BIN, "", S, NULL, bxor_i, 0)                                \
  X("aten.bitwise_not.default", UN, "", S, NULL, bnot_i, 0)                                \
  X("aten.bitwise_left_shift.Tensor", BIN, "", S, NULL, shl_i, 0)                          \
  X("aten.bitwise_right_shift.Tensor", BIN, "", S, NULL, shr_i, 0)                         \
  X("aten.isnan.default", UN, "", S, isnan_f, zero_i, 0)                                   \
  X("aten.isinf.default", UN, "", S, isinf_f, zero_i, 0)                                   \
  X("aten.isposinf.default", UN, "", S, isposinf_f, zero_i, 0)                             \
  X("aten.isneginf.default", UN, "", S, isneginf_f, zero_i, 0)                             \
  X("aten.where.self", "?condition self other", "", S, where_f, where_i, 0)                \
  X("aten.maximum.default", BIN, "", S, maximum_f, maximum_i, 0)                           \
  X("aten.minimum.default", BIN, "", S, minimum_f, minimum_i, 0)                           \
  X("aten.fmax.default", BIN, "", S, fmax_f, maximum_i, 0)                                 \
  X("aten.fmin.default", BIN, "", S, fmin_f, minimum_i, 0)                                 \
  X("aten.clamp.default", UN, "min max", S, clamp_s_f, clamp_s_i, 0)                       \
  X("aten.clamp_.default", UN, "min max", S, clamp_s_f, clamp_s_i, 0)                      \
  X("aten.clamp.Tensor", "self min max", "", S, clamp_t_f, clamp_t_i, 0)                   \
  X("aten.clamp_min.default", UN, "min", S, clamp_s_f, clamp_s_i, 0)                       \
  X("aten.clamp_min_.default", UN, "min", S, clamp_s_f, clamp_s_i, 0)                      \
  X("aten.clamp_min.Tensor", "self min", "", S, clamp_t_f, clamp_t_i, 0)                   \
  X("aten.clamp_min_.Tensor", "self min", "", S, clamp_t_f, clamp_t_i, 0)                  \
  X("aten.clamp_max.Tensor", "self max", "", S, clamp_max_t_f, clamp_max_t_i, 0)           \
  X("aten.hardtanh.default", UN, "min_val max_val", S, clamp_s_f, clamp_s_i, 0)            \
  /* rounding */                                                                           \
  X("aten.ceil.default", UN, "", S, ceil_f, identity_i, 0)                                 \
  X("aten.ceil_.default", UN, "", S, ceil_f, identity_i, 0)                                \
  X("aten.floor.default", UN, "", S, floor_f, identity_i, 0)                               \
  X("aten.trunc.default", UN, "", S, trunc_f, identity_i, 0)                               \
  X("aten.round.default", UN, "", S, round_f, identity_i, 0)                               \
  X("aten.round.decimals", UN, "decimals", S, round_decimals_f, identity_i, 0)             \
  X("aten.frac.default", UN, "", S, frac_f, NULL, 0)                                       \
  /* floating functions */                                                                 \
  X("aten.sqrt.default", UN, "", F, sqrt_f, NULL, 0)                                       \
  X("aten.sqrt_.default", UN, "", F, sqrt_f, NULL, 0)                                      \
  X("aten.rsqrt.default", UN, "", F, rsqrt_f, NULL, 0)                                     \
  X("aten.exp.default", UN, "", F, exp_f, NULL, 0)                                         \
  X("aten.exp2.default", UN, "", F, exp2_f, NULL, 0)                                       \
  X("aten.expm1.default", UN, "", F, expm1_f, NULL, 0)                                     \
  X("aten.log.default", UN, "", F, log_f, NULL, 0)                                         \
  X("aten.log2.default", UN, "", F, log2_f, NULL, 0)                                       \
  X("aten.log10.default", UN, "", F, log10_f, NULL, 0)                                     \
  X("aten.log1p.default", UN, "", F, log1p_f, NULL, 0)                                     \
  X("aten.sin.default", UN, "", F, sin_f, NULL, 0)                                         \
  X("aten.cos.default", UN, "", F, cos_f, NULL, 0)                                         \
  X("aten.tan.default", UN, "", F, tan_f, NULL, 0)                                         \
  X("aten.asin.default", UN, "", F, asin_f, NULL, 0)                                       \
  X("aten.acos.default", UN, "", F, acos_f, NULL, 0)                                       \
  X("aten.atan.default", UN, "", F, atan_f, NULL, 0)                                       \
  X("aten.sinh.default", UN, "", F, sinh_f, NULL, 0)                                       \
  X("aten.cosh.default", UN, "", F, cosh_f, NULL, 0)                                       \
  X("aten.tanh.default", UN, "", F, tanh_f, NULL, 0)                                       \
  X("aten.asinh.default", UN, "", F, asinh_f, NULL, 0)                                     \
  X("aten.acosh.default", UN, "", F, acosh_f, NULL, 0)                                     \
  X("aten.atanh.default", UN, "", F, atanh_f, NULL, 0)                                     \
  X("aten.atan2.default", BIN, "", F, atan2_f, NULL, 0)                                    \
  X("aten.atan2.out", BIN, "", F, atan2_f, NULL, 0)                                        \
  X("aten.angle.default", UN, "", F, angle_f, NULL, 0)                                     \
  X("aten.deg2rad.default", UN, "", F, deg2rad_f, NULL, 0)                                 \
  X("aten.rad2deg.default", UN, "", F, rad2deg_f, NULL, 0)                                 \
  X("aten.sinc.default", UN, "", F, sinc_f, NULL, 0)                                       \
  X("aten.erf.default", UN, "", F, erf_f, NULL, 0)                                         \
  X("aten.erfc.default", UN, "", F, erfc_f, NULL, 0)                                       \
  X("aten.erfinv.default", UN, "", F, erfinv_f, NULL, 0)                                   \
  X("aten.lgamma.default", UN, "", F, lgamma_f, NULL, 0)                                   \
  X("aten.digamma.default", UN, "", F, digamma_f, NULL, 0)                                 \
  X("aten.polygamma.default", UN, "n", F, polygamma_f, NULL, 0)                            \
  X("aten.mvlgamma.default", UN, "p", F, mvlgamma_f, NULL, 0)                              \
  X("aten.i0.default", UN, "", F, i0_f, NULL, 0)                                           \
  X("aten.copysign.Tensor", BIN, "", F, copysign_f, NULL, 0)                               \
  X("aten.hypot.default", BIN, "", F, hypot_f, NULL, 0)                                    \
  X("aten.heaviside.default", "self values", "", S, heaviside_f, heaviside_i, 0)           \
  X("aten.ldexp.Tensor", BIN, "", F, ldexp_f, NULL, 0)                                     \
  X("aten.logaddexp.default", BIN, "", F, logaddexp_f, NULL, 0)                            \
  X("aten.logaddexp2.default", BIN, "", F, logaddexp2_f, NULL, 0)                          \
  X("aten.nextafter.default", BIN, "", S, nextafter_f, NULL, 0)                            \
  X("aten.igamma.default", BIN, "", F, igamma_f, NULL, 0)                                  \
  X("aten.igammac.default", BIN, "", F, igammac_f, NULL, 0)                                \
  X("aten.xlogy.Tensor", BIN, "", F, xlogy_f, NULL, 0)                                     \
  X("aten.nan_to_num.default", UN, "nan posinf neginf", S, nan_to_num_f, identity_i, 0)    \
  /* activations */                                                                        \
  X("aten.relu.default", UN, "", S, relu_f, relu_i, 0)                                     \
  X("aten.relu_.default", UN, "", S, relu_f, relu_i, 0)                                    \
  X("aten.gelu.default", UN, "approximate:s", F, gelu_f, NULL, 0)                          \
  X("aten.sigmoid.default", UN, "", F, sigmoid_f, NULL, 0)                                 \
  X("aten.silu.default", UN, "", F, silu_f, NULL, 0)                                       \
  X("aten.mish.default", UN, "", F, mish_f, NULL, 0)                                       \
  X("aten.elu.default", UN, "alpha scale input_scale", F, elu_f, NULL, 0)                  \
  X("aten.celu.default", UN, "alpha", F, celu_f, NULL, 0)                                  \
  X("aten.leaky_relu.default", UN, "negative_slope", F, leaky_relu_f, NULL, 0)             \
  X("aten.softplus.default", UN, "beta threshold", F, softplus_f, NULL, 0)                 \
  X("aten.softshrink.default", UN, "lambd", F, softshrink_f, NULL, 0)                      \
  X("aten.hardshrink.default", UN, "lambd", F, hardshrink_f, NULL, 0)                      \
  X("aten.hardsigmoid.default", UN, "", F, hardsigmoid_f, NULL, 0)                         \
  X("aten.hardswish.default", UN, "", F, hardswish_f, NULL, 0)                             \
  X("aten.threshold.default", UN, "threshold value", S, threshold_f, threshold_i, 0)       \
  X("aten.logit.default", UN, "eps", F, logit_f, NULL, 0)                                  \
  /* torch.special */                                                                      \
  X("aten.special_entr.default", UN, "", F, entr_f, NULL, 0)                               \
  X("aten.special_erfcx.default", UN, "", F, erfcx_f, NULL, 0)                             \
  X("aten.special_ndtri.default", UN, "", F, ndtri_f, NULL, 0)                             \
  X("aten.special_log_ndtr.default", UN, "", F, log_ndtr_f, NULL, 0)                       \
  X("aten.special_xlog1py.default", BIN, "", F, xlog1py_f, NULL, 0)                        \
  X("aten.special_zeta.default", BIN, "", F, zeta_f, NULL, 0)                              \
  X("aten.special_i0e.default", UN, "", F, i0e_f, NULL, 0)                                 \
  X("aten.special_i1.default", UN, "", F, i1_f, NULL, 0)                                   \
  X("aten.special_i1e.default", UN, "", F, i1e_f, NULL, 0)                                 \
  X("aten.special_bessel_j0.default", UN, "", F, j0_f, NULL, 0)                            \
  X("aten.special_bessel_j1.default", UN, "", F, j1_f, NULL, 0)                            \
  X("aten.special_bessel_y0.default", UN, "", F, y0_f, NULL, 0)                            \
  X("aten.special_bessel_y1.default", UN, "", F, y1_f, NULL, 0)                            \
  X("aten.special_modified_bessel_i0.default", UN, "", F, i0_f, NULL, 0)                   \
  X("aten.special_modified_bessel_i1.default", UN, "", F, i1_f, NULL, 0)                   \
  X("aten.special_modified_bessel_k0.default", UN, "", F, k0_f, NULL, 0)                   \
  X("aten.special_modified_bessel_k1.default", UN, "", F, k1_f, NULL, 0)                   \
  X("aten.special_scaled_modified_bessel_k0.default", "x", "", F, k0e_f, NULL, 0)          \
  X("aten.special_scaled_modified_bessel_k1.default", "x", "", F, k1e_f, NULL, 0)          \
  X("aten.special_airy_ai.default", "x", "", F, airy_ai_f, NULL, 0)                        \
  X("aten.special_spherical_bessel_j0.default", "x", "", F, spherical_j0_f, NULL, 0)       \
  X("aten.special_chebyshev_polynomial_t.default", POLY, "", F, cheb_t_f, NULL, 0)         \
  X("aten.special_chebyshev_polynomial_u.default", POLY, "", F, cheb_u_f, NULL, 0)         \
  X("aten.special_chebyshev_polynomial_v.default", POLY, "", F, cheb_v_f, NULL, 0)         \
  X("aten.special_chebyshev_polynomial_w.default", POLY, "", F, cheb_w_f, NULL, 0)         \
  X("aten.special_shifted_chebyshev_polynomial_t.default", POLY, "", F, scheb_t_f, NULL, 0) \
  X("aten.special_shifted_chebyshev_polynomial_u.default", POLY, "", F, scheb_u_f, NULL, 0) \
  X("aten.special_shifted_chebyshev_polynomial_v.default", POLY, "", F, scheb_v_f, NULL, 0) \
  X("aten.special_shifted_chebyshev_polynomial_w.default", POLY, "", F, scheb_w_f, NULL, 0) \
  X("aten.special_hermite_polynomial_h.default", POLY, "", F, hermite_h_f, NULL, 0)        \
  X("aten.special_hermite_polynomial_he.default", POLY, "", F, hermite_he_f, NULL, 0)      \
  X("aten.special_laguerre_polynomial_l.default", POLY, "", F, laguerre_f, NULL, 0)        \
  X("aten.special_legendre_polynomial_p.default", POLY, "", F, legendre_f, NULL, 0)        \
  /* prims: no alpha, no promotion of their own (the graph already cast) */                \
  X("prims.add.default", BIN, "", S, padd_f, padd_i, 0)                                    \
  X("prims.sub.default", BIN, "", S, psub_f, psub_i, 0)                                    \
  X("prims.mul.default", BIN, "", S, mul_f, mul_i, 0)                                      \
  X("prims.div.default", BIN, "", S, pdiv_f, pdiv_i, 0)                                    \
  X("prims.remainder.default", BIN, "", S, remainder_f, remainder_i, PW_VEC_TAIL)          \
  X("prims.fmod.default", BIN, "", S, fmod_f, fmod_i, PW_VEC_TAIL)                         \
  X("prims.pow.default", BIN, "", S, pow_f, pow_i, 0)                                      \
  X("prims.atan2.default", BIN, "", F, atan2_f, NULL, 0)                                   \
  X("prims.hypot.default", BIN, "", F, hypot_f, NULL, 0)                                   \
  X("prims.nextafter.default", BIN, "", S, nextafter_f, NULL, 0)                           \
  X("prims.igamma.default", BIN, "", F, igamma_f, NULL, 0)                                 \
  X("prims.igammac.default", BIN, "", F, igammac_f, NULL, 0)                               \
  X("prims.zeta.default", BIN, "", F, zeta_f, NULL, 0)                                     \
  X("prims.gcd.default", BIN, "", S, NULL, gcd_i, 0)                                       \
  X("prims.maximum.default", BIN, "", S, maximum_f, maximum_i, 0)                          \
  X("prims.minimum.default", BIN, "", S, minimum_f, minimum_i, 0)                          \
  X("prims.fmax.default", BIN, "", S, fmax_f, maximum_i, 0)                                \
  X("prims.fmin.default", BIN, "", S, fmin_f, minimum_i, 0)                                \
  X("prims.eq.default", BIN, "", S, eq_f, eq_i, 0)                                         \
  X("prims.ne.default", BIN, "", S, ne_f, ne_i, 0)                                         \
  X("prims.lt.default", BIN, "", S, lt_f, lt_i, 0)                                         \
  X("prims.le.default", BIN, "", S, le_f, le_i, 0)                                         \
  X("prims.gt.default", BIN, "", S, gt_f, gt_i, 0)                                         \
  X("prims.ge.default", BIN, "", S, ge_f, ge_i, 0)                                         \
  X("prims.bitwise_and.default", BIN, "", S, NULL, band_i, 0)                              \
  X("prims.bitwise_or.default", BIN, "", S, NULL, bor_i, 0)                                \
  X("prims.bitwise_xor.default", BIN, "", S, NULL, bxor_i, 0)                              \
  X("prims.bitwise_not.default", UN, "", S, NULL, bnot_i, 0)                               \
  X("prims.shift_left.default", BIN, "", S, NULL, shl_i, 0)                                \
  X("prims.shift_right_arithmetic.default", BIN, "", S, NULL, shr_i, 0)                    \
  X("prims.abs.default", UN, "", S, abs_f, abs_i, 0)                                       \
  X("prims.neg.default", UN, "", S, neg_f, neg_i, 0)                                       \
  X("prims.sign.default", UN, "", S, sign_f, sign_i, 0)                                    \
  X("prims.signbit.default", UN, "", S, signbit_f, signbit_i, 0)                           \
  X("prims.isfinite.default", UN, "", S, isfinite_f, one_i, 0)                             \
  X("prims.ceil.default", UN, "", S, ceil_f, identity_i, 0)                                \
  X("prims.floor.default", UN, "", S, floor_f, identity_i, 0)                              \
  X("prims.trunc.default", UN, "", S, trunc_f, identity_i, 0)                              \
  X("prims.round.default", UN, "", S, round_f, identity_i, 0)                              \
  X("prims.fill.default", UN, "value", S, fill_f, fill_i, 0)                               \
  X("prims.real.default", UN, "", S, identity_f, identity_i, 0)                            \
  X("prims.conj_physical.default", UN, "", S, identity_f, identity_i, 0)                   \
  X("prims.reciprocal.default", UN, "", F, reciprocal_f, NULL, 0)                          \
  X("prims.sqrt.default", UN, "", F, sqrt_f, NULL, 0)                                      \
  X("prims.rsqrt.default", UN, "", F, rsqrt_f, NULL, 0)                                    \
  X("prims.cbrt.default", UN, "", F, cbrt_f, NULL, 0)                                      \
  X("prims.exp.default", UN, "", F, exp_f, NULL, 0)                                        \
  X("prims.exp2.default", UN, "", F, exp2_f, NULL, 0)                                      \
  X("prims.expm1.default", UN, "", F, expm1_f, NULL, 0)                                    \
  X("prims.log.default", UN, "", F, log_f, NULL, 0)                                        \
  X("prims.log2.default", UN, "", F, log2_f, NULL, 0)                                      \
  X("prims.log10.default", UN, "", F, log10_f, NULL, 0)                                    \
  X("prims.log1p.default", UN, "", F, log1p_f, NULL, 0)                                    \
  X("prims.sin.default", UN, "", F, sin_f, NULL, 0)                                        \
  X("prims.cos.default", UN, "", F, cos_f, NULL, 0)                                        \
  X("prims.tan.default", UN, "", F, tan_f, NULL, 0)                                        \
  X("prims.asin.default", UN, "", F, asin_f, NULL, 0)                                      \
  X("prims.acos.default", UN, "", F, acos_f, NULL, 0)                                      \
  X("prims.atan.default", UN, "", F, atan_f, NULL, 0)                                      \
  X("prims.sinh.default", UN, "", F, sinh_f, NULL, 0)                                      \
  X("prims.cosh.default", UN, "", F, cosh_f, NULL, 0)                                      \
  X("prims.tanh.default", UN, "", F, tanh_f, NULL, 0)                                      \
  X("prims.asinh.default", UN, "", F, asinh_f, NULL, 0)                                    \
  X("prims.acosh.default", UN, "", F, acosh_f, NULL, 0)                                    \
  X("prims.atanh.default", UN, "", F, atanh_f, NULL, 0)                                    \
  X("prims.erf.default", UN, "", F, erf_f, NULL, 0)                                        \
  X("prims.erfc.default", UN, "", F, erfc_f, NULL, 0)                                      \
  X("prims.erf_inv.default", UN, "", F, erfinv_f, NULL, 0)                                 \
  X("prims.erfcx.default", UN, "", F, erfcx_f, NULL, 0)                                    \
  X("prims.ndtri.default", UN, "", F, ndtri_f, NULL, 0)                                    \
  X("prims.lgamma.default", UN, "", F, lgamma_f, NULL, 0)                                  \
  X("prims.digamma.default", UN, "", F, digamma_f, NULL, 0)                                \
  X("prims.bessel_i0.default", UN, "", F, i0_f, NULL, 0)                                   \
  X("prims.bessel_i0e.default", UN, "", F, i0e_f, NULL, 0)                                 \
  X("prims.bessel_i1.default", UN, "", F, i1_f, NULL, 0)                                   \
  X("prims.bessel_i1e.default", UN, "", F, i1e_f, NULL, 0)                                 \
  X("prims.bessel_j0.default", UN, "", F, j0_f, NULL, 0)                                   \
  X("prims.bessel_j1.default", UN, "", F, j1_f, NULL, 0)                                   \
  X("prims.spherical_bessel_j0.default", UN, "", F, spherical_j0_f, NULL, 0)

#define PW_DESCRIPTOR(op, operands, params, promo, f, i, flags) {op, operands, params, promo, f, i, flags},
static const pw_op pw_ops[] = {POINTWISE_OPS(PW_DESCRIPTOR)};
#undef PW_DESCRIPTOR

/* Every row runs through here: the node's op name picks the descriptor. */
static int k_pointwise(const alloy_kernel_call *c) {
  const char *name = c->host->node_op_name(c->node);
  for (size_t k = 0; k < sizeof pw_ops / sizeof pw_ops[0]; k++)
    if (!strcmp(pw_ops[k].op, name)) return run_pw(c, &pw_ops[k]);
  return ref_fail(c, "%s", "no pointwise descriptor");
}

/* ---- kernels of their own -------------------------------------------------------- */

/* frexp: mantissa in self's dtype, exponent int32; the second output rides
 * the iterator as an extra operand (same shape as the first). */
static int k_frexp(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *in = &c->inputs[0], *m = &c->outputs[0], *e = &c->outputs[1];
  if (!is_float(in->dtype)) return ref_fail(c, "%s", "frexp only supports floating-point dtypes");
  const alloy_kernel_tensor *ops[2] = {in, e};
  ref_iter it;
  ref_iter_init(&it, m, ops, 2);
  while (ref_iter_next(&it)) {
    int ex = 0;
    double mant = frexp(ref_load_f(in->data, in->dtype, it.offset[1]), &ex);
    ref_store_f(m->data, m->dtype, it.offset[0], mant);
    ref_store_i(e->data, e->dtype, it.offset[2], ex);
  }
  return 0;
}

/* where(condition): the coordinates of condition's nonzero elements in
 * index order, one int64 tensor per dim (a 0-dim condition counts as one
 * dim), as torch.nonzero(condition, as_tuple=True) gives them. The count
 * is the data's: the first walk counts, the outputs are made that long,
 * the second walk writes. */
enum { MAX_RANK = 16 }; /* Alloy's largest rank, as ref_iter's arrays */

static int k_where_condition(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *x = ref_tensor(c, "condition");
  if (!x) return ref_fail(c, "%s", "where: missing condition");
  int cols = x->rank ? x->rank : 1;
  int64_t n = ref_numel(x), count = 0;
  const alloy_kernel_tensor *outs[MAX_RANK];
  for (int pass = 0; pass < 2; pass++) {
    int64_t idx[MAX_RANK] = {0}, w = 0;
    for (int64_t k = 0; k < n; k++, ref_next_index(idx, x->sizes, x->rank)) {
      int64_t off = 0;
      for (int d = 0; d < x->rank; d++) off += idx[d] * x->strides[d];
      bool nonzero = is_float(x->dtype) ? ref_load_f(x->data, x->dtype, off) != 0
                                        : ref_load_i(x->data, x->dtype, off) != 0;
      if (!nonzero) continue;
      for (int d = 0; pass && d < cols; d++)
        ref_store_i(outs[d]->data, ALLOY_I64, w * outs[d]->strides[0], x->rank ? idx[d] : 0);
      w++;
    }
    count = w;
    for (int d = 0; !pass && d < cols; d++) {
      outs[d] = &c->outputs[d];
      if (!outs[d]->sizes)
        outs[d] = ALLOY_HAS_FIELD(c, alloy_kernel_call, alloc_output) && c->alloc_output
                      ? c->alloc_output(c, d, &count)
                      : NULL;
      if (!outs[d]) return ref_fail(c, "%s", "where: cannot allocate the result");
    }
  }
  return 0;
}

/* The imaginary part of a real tensor does not exist (PyTorch refuses). */
static int k_imag(const alloy_kernel_call *c) {
  return ref_fail(c, "%s", "imag is not implemented for tensors with non-complex dtypes");
}

#define PW_ROW(op, operands, params, promo, f, i, flags) REF_KERNEL(op, k_pointwise),
const alloy_kernel ref_kernels_pointwise[] = {
    POINTWISE_OPS(PW_ROW)
    REF_KERNEL("aten.frexp.Tensor", k_frexp),
    REF_KERNEL("prims.frexp.default", k_frexp),
    REF_KERNEL("prims.imag.default", k_imag),
    REF_KERNEL("aten.where.default", k_where_condition),
    {NULL, NULL, NULL, NULL},
};
#undef PW_ROW
#undef S
#undef F
#undef UN
#undef BIN
#undef POLY
