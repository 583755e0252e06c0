/*
 * ir/meta_random.c: shape functions of the random ops beyond rand, randn,
 * randperm and dropout (those are in ir/meta_factory.c): the samplers that
 * fill a tensor shaped like their input (bernoulli, uniform, normal,
 * exponential, cauchy, log_normal, geometric, random, poisson,
 * _standard_gamma, _sample_dirichlet, rand_like, randn_like, randint_like),
 * the factories with a generator or names (rand, randn, randint, randperm,
 * normal.float_float), the samplers of broadcast operands (normal's tensor
 * overloads, binomial), multinomial, and the dropouts built on bernoulli
 * (feature_dropout, alpha_dropout, feature_alpha_dropout, _fused_dropout).
 *
 * Each op refuses what PyTorch 2.11's CPU kernel refuses before it draws: a
 * dtype its kernel does not dispatch on, a parameter outside its domain
 * (p of bernoulli outside [0, 1], a negative std, ...) and, for random and
 * randint, a range the dtype cannot hold (random_from_to_impl's checks,
 * with its rounding of the bounds to the float dtype). A torch.Generator
 * is refused: the reference backend draws from its own seeded stream
 * (docs/reference_backend.md, "Random numbers"), and a graph has no way to
 * carry a generator's state.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/checked.h"
#include "ir/meta.h"

/* --- arguments found by name ------------------------------------------------*/

static int arg_index(const alloy_meta *m, const char *name) {
  return alloy_schema_find_arg(m->op->schema, name);
}

/* A generator other than None, or named dimensions, are refused. */
static alloy_error *check_no_generator(alloy_meta *m) {
  int g = arg_index(m, "generator");
  if (g >= 0 && !meta_is_none(m, g))
    return meta_error(m, "argument 'generator': a torch.Generator is not supported; random ops "
                         "draw from the backend's seeded stream");
  int n = arg_index(m, "names");
  if (n >= 0 && !meta_is_none(m, n))
    return meta_error(m, "argument 'names': named tensors are not supported");
  return NULL;
}

/* The dtype argument, or dflt when the op has none or it is None. */
static alloy_dtype dtype_arg(const alloy_meta *m, alloy_dtype dflt) {
  int i = arg_index(m, "dtype");
  return i >= 0 ? meta_dtype_or(m, i, dflt) : dflt;
}

/* --- dtypes ---------------------------------------------------------------------
 * The dtypes a kernel dispatches on, and PyTorch's refusal of the others. */

enum { K_FLOAT = 1, K_INT = 2, K_BOOL = 4, K_COMPLEX = 8, K_F32_F64 = 16 };

static bool dtype_in(alloy_dtype t, unsigned kinds) {
  if (kinds & K_F32_F64 && (t == ALLOY_F32 || t == ALLOY_F64)) return true;
  return (kinds & K_FLOAT && alloy_dtype_is_float(t)) || (kinds & K_INT && alloy_dtype_is_integer(t)) ||
         (kinds & K_BOOL && t == ALLOY_BOOL) || (kinds & K_COMPLEX && alloy_dtype_is_complex(t));
}

/* refusal: PyTorch's message with one %s for the dtype; what names the
 * argument whose dtype it is. */
static alloy_error *check_dtype(alloy_meta *m, alloy_dtype t, unsigned kinds, const char *refusal,
                                const char *what) {
  if (dtype_in(t, kinds)) return NULL;
  char msg[200];
  snprintf(msg, sizeof msg, refusal, alloy_dtype_name(t));
  return meta_error(m, "%s (argument '%s')", msg, what);
}

#define NOT_IMPLEMENTED(kernel) "\"" kernel "\" not implemented for '%s'"
#define CONTINUOUS(dist)                                                                  \
  dist " distribution is a continuous probability distribution. dtype must be a floating " \
       "point but you specified %s"

/* --- the ranges of random and randint ---------------------------------------------*/

/* The number of consecutive integers a float dtype holds from 0: 2^digits. */
static int float_digits(alloy_dtype t) {
  switch (t) {
    case ALLOY_F16: return 11;
    case ALLOY_BF16: return 8;
    case ALLOY_F32: return 24;
    default: return 53;
  }
}

/* An integer as the float dtype t rounds it, back as an integer (the bound
 * arithmetic of random_: static_cast<int64_t>(static_cast<scalar_t>(v))). */
static int64_t through_float(alloy_dtype t, int64_t v) {
  double r;
  if (t == ALLOY_F64) r = (double)v;
  else if (t == ALLOY_F16) r = alloy_f32_from_f16(alloy_f16_from_f32((float)v));
  else if (t == ALLOY_BF16) r = alloy_f32_from_bf16(alloy_bf16_from_f32((float)v));
  else r = (float)v;
  int64_t out;
  return alloy_checked_from_double(r, &out) ? out : v;
}

static int bit_length(uint64_t v) {
  int n = 0;
  while (v >>= 1) n++;
  return n;
}

/* update_from / update_to: a bound that rounds past itself in the float
 * dtype moves inward to the next integer the dtype holds, so that every
 * drawn value stays in [from, to) after rounding. */
static int64_t update_from(alloy_dtype t, int64_t from) {
  if (from == INT64_MAX) return from;
  int64_t up = through_float(t, from + 1);
  if (up < from) {
    int n = bit_length((uint64_t)(from + 1 < 0 ? -(from + 1) : from + 1));
    int shift = n - float_digits(t) + 1;
    if (shift >= 0 && shift < 63) from = up + ((int64_t)1 << shift);
  }
  return from;
}

static int64_t update_to(alloy_dtype t, int64_t to) {
  if (to == INT64_MIN) return to;
  int64_t down = through_float(t, to - 1);
  if (down >= to) {
    int n = bit_length((uint64_t)(to - 1 < 0 ? -(to - 1) : to - 1));
    int shift = n - float_digits(t) + 1;
    if (shift >= 0 && shift < 63) to = down - ((int64_t)1 << shift);
  }
  return to;
}

/* from and the inclusive upper bound must be values of t. */
static alloy_error *check_in_range(alloy_meta *m, alloy_dtype t, int64_t from, int64_t to_inc) {
  double lo = 0, hi = 1;
  if (t != ALLOY_BOOL) alloy_dtype_limits(t, &lo, &hi);
  if (!((double)from >= lo && (double)from <= hi))
    return meta_error(m, "from is out of bounds for %s", alloy_dtype_name(t));
  if (!((double)to_inc >= lo && (double)to_inc <= hi))
    return meta_error(m, "to - 1 is out of bounds for %s", alloy_dtype_name(t));
  return NULL;
}

/* random_'s checks of [from, to) (has_to) or [from, the dtype's top]. */
static alloy_error *check_random_range(alloy_meta *m, alloy_dtype t, int64_t from, bool has_to,
                                       int64_t to) {
  if (!dtype_in(t, K_FLOAT | K_INT | K_BOOL))
    return meta_error(m, "random_ handles only integral, floating-point and boolean types, not %s",
                      alloy_dtype_name(t));
  bool fl = alloy_dtype_is_float(t);
  if (has_to) {
    if (from >= to)
      return meta_error(m, "random_ expects 'from' to be less than 'to', but got from=%lld >= to=%lld",
                        (long long)from, (long long)to);
    if (fl) {
      from = update_from(t, from), to = update_to(t, to);
      if (from >= to)
        return meta_error(m, "random_ expects 'from' casted to dtype to be less than 'to' casted to "
                             "dtype, but got from=%lld >= to=%lld",
                          (long long)from, (long long)to);
    }
    return check_in_range(m, t, from, to - 1);
  }
  if (from == INT64_MIN) return NULL; /* the full 64-bit range */
  int64_t to_inc;
  if (fl) {
    to_inc = (int64_t)1 << float_digits(t);
    from = update_from(t, from);
    if (from >= to_inc)
      return meta_error(m, "random_ expects 'from' casted to dtype to be less than or equal to "
                           "'to_inc' casted to dtype, but got from=%lld > to_inc=%lld",
                        (long long)from, (long long)to_inc);
  } else {
    double lo = 0, hi = 1;
    if (t != ALLOY_BOOL) alloy_dtype_limits(t, &lo, &hi);
    to_inc = t == ALLOY_I64 ? INT64_MAX : (int64_t)hi;
  }
  return check_in_range(m, t, from, to_inc);
}

/* A bound given as an int or SymInt: concrete, or not known (no check). */
static bool concrete_bound(const alloy_meta *m, int i, int64_t *out) {
  alloy_dim d = meta_dim(m, i);
  if (!alloy_dim_is_const(d)) return false;
  *out = d.value;
  return true;
}

/* random.default, .from, .to; randint and randint_like: from ("from" or
 * "low", 0 when absent) and to ("to" or "high"; random.default and a None
 * to have none). */
static alloy_error *check_random_args(alloy_meta *m, alloy_dtype t) {
  int fi = arg_index(m, "from"), ti = arg_index(m, "to");
  if (fi < 0) fi = arg_index(m, "low");
  if (ti < 0) ti = arg_index(m, "high");
  int64_t from = 0, to = 0;
  if (fi >= 0 && !concrete_bound(m, fi, &from)) return NULL;
  bool has_to = ti >= 0 && !meta_is_none(m, ti);
  if (has_to) {
    const alloy_value *ht = meta_tensor(m, ti);
    if (ht && m->args[ti].kind == ALLOY_ARG_VALUE) { /* randint_like.Tensor */
      if (ht->rank != 0) return meta_error(m, "high must be a scalar tensor (argument 'high')");
      return NULL;
    }
    if (!concrete_bound(m, ti, &to)) return NULL;
  }
  return check_random_range(m, t, from, has_to, to);
}

/* --- parameters of the distributions ------------------------------------------------*/

static alloy_error *check_bernoulli_p(alloy_meta *m, alloy_dtype t) {
  (void)t;
  double p = meta_float(m, 1);
  if (!(p >= 0 && p <= 1)) return meta_error(m, "bernoulli_ expects p to be in [0, 1], but got p=%g", p);
  return NULL;
}

/* bernoulli.Tensor: p is a float tensor that expands to self's shape. */
static alloy_error *check_bernoulli_tensor(alloy_meta *m, alloy_dtype t) {
  (void)t;
  const alloy_value *self = meta_tensor(m, 0), *p = meta_tensor(m, 1);
  alloy_error *e = check_dtype(m, p->dtype, K_FLOAT, NOT_IMPLEMENTED("bernoulli_tensor_cpu_p_"), "p");
  if (e) return e;
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank;
  if (p->rank > self->rank ||
      (e = meta_broadcast(m, p->shape, p->rank, self->shape, self->rank, shape, &rank)))
    goto refuse;
  for (int d = 0; d < rank; d++)
    if (alloy_dim_eq(m->st, shape[d], self->shape[d]) == ALLOY_FALSE) goto refuse;
  return NULL;
refuse:
  alloy_error_free(e);
  char ps[128], ss[128];
  return meta_error(m, "argument 'p': a tensor of shape %s does not expand to self's shape %s",
                    meta_shape_text(p->shape, p->rank, ps, sizeof ps),
                    meta_shape_text(self->shape, self->rank, ss, sizeof ss));
}

/* uniform: [from, to) within the (real) dtype, and to - from too. */
static alloy_error *check_uniform(alloy_meta *m, alloy_dtype t) {
  if (alloy_dtype_is_complex(t)) t = t == ALLOY_C64 ? ALLOY_F32 : ALLOY_F64;
  double from = meta_float(m, 1), to = meta_float(m, 2), lo = 0, hi = 0;
  alloy_dtype_limits(t, &lo, &hi);
  if (!(from >= lo && from <= hi)) return meta_error(m, "from is out of bounds for %s", alloy_dtype_name(t));
  if (!(to >= lo && to <= hi)) return meta_error(m, "to is out of bounds for %s", alloy_dtype_name(t));
  if (!(from <= to))
    return meta_error(m, "uniform_ expects to return a [from, to) range, but found from=%g > to=%g", from, to);
  if (!(to - from <= hi))
    return meta_error(m, "uniform_ expects to-from <= the largest %s, but found to=%g and from=%g which "
                         "result in to-from to exceed the limit",
                      alloy_dtype_name(t), to, from);
  return NULL;
}

/* A float parameter by name, with its condition. */
static alloy_error *check_param(alloy_meta *m, const char *name, bool strict, const char *fmt) {
  double v = meta_float(m, arg_index(m, name));
  if (strict ? v > 0 : v >= 0) return NULL;
  return meta_error(m, fmt, v);
}

static alloy_error *check_normal_std(alloy_meta *m, alloy_dtype t) {
  (void)t;
  return check_param(m, "std", false, "normal expects std >= 0.0, but found std %g");
}
static alloy_error *check_exponential(alloy_meta *m, alloy_dtype t) {
  (void)t;
  return check_param(m, "lambd", true, "exponential_ expects lambda > 0.0, but found lambda=%g");
}
static alloy_error *check_cauchy(alloy_meta *m, alloy_dtype t) {
  (void)t;
  return check_param(m, "sigma", true, "cauchy_ expects sigma > 0.0, but found sigma=%g");
}
static alloy_error *check_log_normal(alloy_meta *m, alloy_dtype t) {
  (void)t;
  return check_param(m, "std", true, "log_normal_ expects std > 0.0, but found std=%g");
}
static alloy_error *check_geometric(alloy_meta *m, alloy_dtype t) {
  (void)t;
  double p = meta_float(m, 1);
  if (0 < p && p < 1) return NULL;
  return meta_error(m, "geometric_ expects p to be in (0, 1), but got p=%g", p);
}

static alloy_error *check_dropout_p(alloy_meta *m, alloy_dtype t) {
  (void)t;
  double p = meta_float(m, 1);
  if (p >= 0 && p <= 1) return NULL;
  return meta_error(m, "dropout probability has to be between 0 and 1, but got %g", p);
}

/* feature_dropout and feature_alpha_dropout draw one sample per channel. */
static alloy_error *check_feature_dropout(alloy_meta *m, alloy_dtype t) {
  alloy_error *e = check_dropout_p(m, t);
  if (e) return e;
  const alloy_value *x = meta_tensor(m, 0);
  bool active = meta_bool(m, 2) && meta_float(m, 1) != 0;
  if (active && x->rank < 2)
    return meta_error(m, "Feature dropout requires at least 2 dimensions in the input (argument "
                         "'input' has %d)", x->rank);
  return NULL;
}

/* --- ops shaped like a tensor argument --------------------------------------------*/

typedef struct {
  unsigned dtypes;     /* K_*: the output dtypes the kernel dispatches on      */
  const char *refusal; /* PyTorch's message for another, with %s for the dtype */
  alloy_error *(*check)(alloy_meta *m, alloy_dtype out); /* the op's parameters, or NULL */
} like_op;

enum {
  L_BERNOULLI, L_BERNOULLI_P, L_BERNOULLI_T, L_UNIFORM, L_NORMAL, L_EXPONENTIAL, L_CAUCHY,
  L_LOG_NORMAL, L_GEOMETRIC, L_RANDOM, L_POISSON, L_GAMMA, L_DIRICHLET, L_RAND_LIKE, L_RANDN_LIKE,
  L_RANDINT_LIKE, L_DROPOUT, L_FEATURE_DROPOUT,
};

static const like_op like_ops[] = {
    [L_BERNOULLI] = {K_FLOAT, NOT_IMPLEMENTED("bernoulli_tensor_cpu_p_"), NULL},
    [L_BERNOULLI_P] = {K_FLOAT | K_INT | K_BOOL, NOT_IMPLEMENTED("bernoulli_scalar_cpu_"), check_bernoulli_p},
    [L_BERNOULLI_T] = {K_FLOAT | K_INT | K_BOOL, NOT_IMPLEMENTED("bernoulli_tensor_cpu_self_"),
                       check_bernoulli_tensor},
    [L_UNIFORM] = {K_FLOAT | K_COMPLEX, NOT_IMPLEMENTED("check_uniform_bounds"), check_uniform},
    [L_NORMAL] = {K_FLOAT | K_COMPLEX, NOT_IMPLEMENTED("normal_kernel_cpu"), check_normal_std},
    [L_EXPONENTIAL] = {K_FLOAT, CONTINUOUS("Exponential"), check_exponential},
    [L_CAUCHY] = {K_FLOAT, CONTINUOUS("Cauchy"), check_cauchy},
    [L_LOG_NORMAL] = {K_FLOAT, NOT_IMPLEMENTED("log_normal_cpu"), check_log_normal},
    [L_GEOMETRIC] = {K_FLOAT | K_INT, NOT_IMPLEMENTED("geometric_cpu"), check_geometric},
    [L_RANDOM] = {K_FLOAT | K_INT | K_BOOL, NOT_IMPLEMENTED("random_kernel_cpu"), check_random_args},
    [L_POISSON] = {K_FLOAT, NOT_IMPLEMENTED("poisson_cpu"), NULL},
    [L_GAMMA] = {K_F32_F64, NOT_IMPLEMENTED("gamma_cpu"), NULL},
    [L_DIRICHLET] = {K_F32_F64, NOT_IMPLEMENTED("dirichlet"), NULL},
    [L_RAND_LIKE] = {K_FLOAT | K_COMPLEX, NOT_IMPLEMENTED("check_uniform_bounds"), NULL},
    [L_RANDN_LIKE] = {K_FLOAT | K_COMPLEX, NOT_IMPLEMENTED("normal_kernel_cpu"), NULL},
    [L_RANDINT_LIKE] = {K_FLOAT | K_INT | K_BOOL, NOT_IMPLEMENTED("random_from_to"), check_random_args},
    [L_DROPOUT] = {K_FLOAT | K_INT | K_BOOL | K_COMPLEX, "%s", check_dropout_p},
    [L_FEATURE_DROPOUT] = {K_FLOAT | K_INT | K_BOOL | K_COMPLEX, "%s", check_feature_dropout},
};

/* The output has argument 0's shape, and its dtype (or the dtype argument's,
 * for the *_like ops). m->param: the like_ops row. */
static alloy_error *meta_like(alloy_meta *m) {
  const like_op *op = &like_ops[m->param];
  const alloy_value *self = meta_tensor(m, 0);
  alloy_dtype t = dtype_arg(m, self->dtype);
  alloy_error *e = check_no_generator(m);
  if (!e) e = check_dtype(m, t, op->dtypes, op->refusal, arg_index(m, "dtype") >= 0 ? "dtype" : "self");
  if (!e && op->check) e = op->check(m, t);
  return e ? e : meta_out_like(m, 0, self, t);
}

/* _fused_dropout(self, p): the result and its uint8 keep-mask (p is the
 * probability of keeping). */
static alloy_error *meta_fused_dropout(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  alloy_error *e = check_no_generator(m);
  if (!e) e = check_dtype(m, x->dtype, K_FLOAT, NOT_IMPLEMENTED("fused_dropout"), "self");
  if (!e) e = check_dropout_p(m, x->dtype);
  if (!e) e = meta_out_like(m, 0, x, x->dtype);
  return e ? e : meta_out_like(m, 1, x, ALLOY_U8);
}

/* --- factories -----------------------------------------------------------------------*/

/* rand, randn, randint and normal.float_float with a generator or names:
 * the "size" argument; m->param: S_RAND, S_NORMAL (randn, normal) or
 * S_RANDINT, whose default dtype is int64 (float32 for the others). */
enum { S_RAND, S_NORMAL, S_RANDINT };

static alloy_error *meta_sized(alloy_meta *m) {
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank;
  alloy_error *e = check_no_generator(m);
  if (!e) e = meta_dims(m, arg_index(m, "size"), shape, ALLOY_MAX_RANK, &rank);
  if (e) return e;
  for (int d = 0; d < rank; d++)
    if (alloy_dim_lt(m->st, shape[d], alloy_dim_const(0)) == ALLOY_TRUE) {
      char buf[128];
      return meta_error(m, "argument 'size': trying to create tensor with negative dimension: %s",
                        meta_shape_text(shape, rank, buf, sizeof buf));
    }
  alloy_dtype t = dtype_arg(m, m->param == S_RANDINT ? ALLOY_I64 : ALLOY_F32);
  if (m->param == S_RANDINT) e = check_random_args(m, t);
  else if (m->param == S_RAND) e = check_dtype(m, t, K_FLOAT | K_COMPLEX, NOT_IMPLEMENTED("check_uniform_bounds"), "dtype");
  else e = check_dtype(m, t, K_FLOAT | K_COMPLEX, NOT_IMPLEMENTED("normal_kernel_cpu"), "dtype");
  if (!e && arg_index(m, "std") >= 0) e = check_normal_std(m, t);
  return e ? e : meta_out_tensor(m, 0, t, shape, rank);
}

/* randperm.generator(n): n values of dtype (int64 by default); a float
 * dtype must hold every integer below n. */
static alloy_error *meta_randperm(alloy_meta *m) {
  alloy_dim n = meta_dim(m, 0);
  alloy_error *e = check_no_generator(m);
  if (e) return e;
  if (alloy_dim_lt(m->st, n, alloy_dim_const(0)) == ALLOY_TRUE)
    return meta_error(m, "n must be non-negative, got %lld", (long long)n.value);
  alloy_dtype t = dtype_arg(m, ALLOY_I64);
  if (t == ALLOY_BOOL || alloy_dtype_is_complex(t))
    return meta_error(m, "\"randperm\" not implemented for '%s' (argument 'dtype')", alloy_dtype_name(t));
  if (alloy_dtype_is_float(t) && alloy_dim_is_const(n) && t != ALLOY_F64 &&
      n.value > ((int64_t)1 << float_digits(t)) + 1)
    return meta_error(m, "n cannot be greater than %lld for %s type.",
                      (long long)((int64_t)1 << float_digits(t)) + 1, alloy_dtype_name(t));
  return meta_out_tensor(m, 0, t, &n, 1);
}

/* --- operands broadcast together -----------------------------------------------------*/

/* normal.Tensor_Tensor (param 0), .Tensor_float (1), .float_Tensor (2):
 * the broadcast shape of the tensor operands; the dtype is mean's when it is
 * a tensor (PyTorch allocates the result like mean), else std's. */
static alloy_error *meta_normal(alloy_meta *m) {
  const alloy_value *mean = m->param == 2 ? NULL : meta_tensor(m, 0);
  const alloy_value *std = m->param == 1 ? NULL : meta_tensor(m, 1);
  alloy_error *e = check_no_generator(m);
  if (e) return e;
  if (std && alloy_dtype_is_complex(std->dtype))
    return meta_error(m, "normal expects standard deviation to be non-complex (argument 'std')");
  if (!std) {
    double s = meta_float(m, 1);
    if (!(s >= 0)) return meta_error(m, "normal expects std >= 0.0, but found std %g", s);
  }
  const alloy_value *out = mean ? mean : std;
  if ((e = check_dtype(m, out->dtype, K_FLOAT | K_COMPLEX, NOT_IMPLEMENTED("normal_kernel_cpu"),
                       mean ? "mean" : "std")))
    return e;
  if (!mean || !std) return meta_out_like(m, 0, out, out->dtype);
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank;
  if ((e = meta_broadcast(m, mean->shape, mean->rank, std->shape, std->rank, shape, &rank))) return e;
  return meta_out_tensor(m, 0, mean->dtype, shape, rank);
}

/* binomial(count, prob): count's dtype, float32 or float64, which prob
 * must share; the broadcast shape. */
static alloy_error *meta_binomial(alloy_meta *m) {
  const alloy_value *count = meta_tensor(m, 0), *prob = meta_tensor(m, 1);
  alloy_error *e = check_no_generator(m);
  if (e) return e;
  if (!alloy_dtype_is_float(count->dtype))
    return meta_error(m, "binomial only supports floating-point dtypes for count, got: %s",
                      alloy_dtype_name(count->dtype));
  if ((e = check_dtype(m, count->dtype, K_F32_F64, NOT_IMPLEMENTED("binomial_cpu"), "count"))) return e;
  if (prob->dtype != count->dtype)
    return meta_error(m, "Found dtype %s but expected %s (argument 'prob' must have count's dtype)",
                      alloy_dtype_name(prob->dtype), alloy_dtype_name(count->dtype));
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank;
  if ((e = meta_broadcast(m, count->shape, count->rank, prob->shape, prob->rank, shape, &rank))) return e;
  return meta_out_tensor(m, 0, count->dtype, shape, rank);
}

/* multinomial(self, num_samples, replacement): rows of int64 category
 * indices, [num_samples] or [rows, num_samples]. */
static alloy_error *meta_multinomial(alloy_meta *m) {
  const alloy_value *p = meta_tensor(m, 0);
  alloy_error *e = check_no_generator(m);
  if (e) return e;
  if (p->rank < 1 || p->rank > 2)
    return meta_error(m, "prob_dist must be 1 or 2 dim (argument 'self' has %d)", p->rank);
  if (!alloy_dtype_is_float(p->dtype))
    return meta_error(m, "multinomial only supports floating-point dtypes for input, got: %s",
                      alloy_dtype_name(p->dtype));
  alloy_dim n = meta_dim(m, 1), cats = p->shape[p->rank - 1];
  if (alloy_dim_le(m->st, n, alloy_dim_const(0)) == ALLOY_TRUE)
    return meta_error(m, "cannot sample n_sample <= 0 samples (argument 'num_samples')");
  if (!meta_bool(m, 2) && alloy_dim_lt(m->st, cats, n) == ALLOY_TRUE)
    return meta_error(m, "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  if (alloy_dim_lt(m->st, alloy_dim_const((int64_t)1 << 24), cats) == ALLOY_TRUE)
    return meta_error(m, "number of categories cannot exceed 2^24");
  alloy_dim shape[2] = {p->shape[0], n};
  return p->rank == 1 ? meta_out_tensor(m, 0, ALLOY_I64, &n, 1) : meta_out_tensor(m, 0, ALLOY_I64, shape, 2);
}

const alloy_meta_entry alloy_meta_random[] = {
    {"aten.bernoulli.default", meta_like, L_BERNOULLI},
    {"aten.bernoulli.p", meta_like, L_BERNOULLI_P},
    {"aten.bernoulli.Tensor", meta_like, L_BERNOULLI_T},
    {"aten.uniform.default", meta_like, L_UNIFORM},
    {"aten.normal_functional.default", meta_like, L_NORMAL},
    {"aten.exponential.default", meta_like, L_EXPONENTIAL},
    {"aten.cauchy.default", meta_like, L_CAUCHY},
    {"aten.log_normal.default", meta_like, L_LOG_NORMAL},
    {"aten.geometric.default", meta_like, L_GEOMETRIC},
    {"aten.random.default", meta_like, L_RANDOM},
    {"aten.random.from", meta_like, L_RANDOM},
    {"aten.random.to", meta_like, L_RANDOM},
    {"aten.poisson.default", meta_like, L_POISSON},
    {"aten._standard_gamma.default", meta_like, L_GAMMA},
    {"aten._sample_dirichlet.default", meta_like, L_DIRICHLET},
    {"aten.rand_like.default", meta_like, L_RAND_LIKE},
    {"aten.rand_like.generator", meta_like, L_RAND_LIKE},
    {"aten.randn_like.default", meta_like, L_RANDN_LIKE},
    {"aten.randn_like.generator", meta_like, L_RANDN_LIKE},
    {"aten.randint_like.default", meta_like, L_RANDINT_LIKE},
    {"aten.randint_like.generator", meta_like, L_RANDINT_LIKE},
    {"aten.randint_like.low_dtype", meta_like, L_RANDINT_LIKE},
    {"aten.randint_like.low_generator_dtype", meta_like, L_RANDINT_LIKE},
    {"aten.randint_like.Tensor", meta_like, L_RANDINT_LIKE},
    {"aten.randint_like.Tensor_generator", meta_like, L_RANDINT_LIKE},
    {"aten.alpha_dropout.default", meta_like, L_DROPOUT},
    {"aten.feature_dropout.default", meta_like, L_FEATURE_DROPOUT},
    {"aten.feature_alpha_dropout.default", meta_like, L_FEATURE_DROPOUT},
    {"aten._fused_dropout.default", meta_fused_dropout, 0},
    {"aten.rand.generator", meta_sized, S_RAND},
    {"aten.rand.names", meta_sized, S_RAND},
    {"aten.rand.generator_with_names", meta_sized, S_RAND},
    {"aten.randn.generator", meta_sized, S_NORMAL},
    {"aten.randn.names", meta_sized, S_NORMAL},
    {"aten.randn.generator_with_names", meta_sized, S_NORMAL},
    {"aten.normal.float_float", meta_sized, S_NORMAL},
    {"aten.randint.default", meta_sized, S_RANDINT},
    {"aten.randint.generator", meta_sized, S_RANDINT},
    {"aten.randint.low", meta_sized, S_RANDINT},
    {"aten.randint.low_generator", meta_sized, S_RANDINT},
    {"aten.randperm.generator", meta_randperm, 0},
    {"aten.normal.Tensor_Tensor", meta_normal, 0},
    {"aten.normal.Tensor_float", meta_normal, 1},
    {"aten.normal.float_Tensor", meta_normal, 2},
    {"aten.binomial.default", meta_binomial, 0},
    {"aten.multinomial.default", meta_multinomial, 0},
    {NULL, NULL, 0},
};
