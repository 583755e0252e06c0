/*
 * decompositions/rules_random.c: random ops, from ATen to Core ATen, built
 * on the two core samplers aten.rand (uniform in [0, 1)) and aten.randn
 * (standard normal), which reach prims.uniform and prims.normal: bernoulli,
 * uniform, normal (every overload), exponential, cauchy, log_normal,
 * geometric, random and randint (every overload, with the *_like forms),
 * rand/randn with a generator or names, multinomial (PyTorch's own
 * algorithms: the exponential race of topk for draws without replacement,
 * the inverse of the cumulative distribution with replacement),
 * _sample_dirichlet (normalized gamma draws), and the dropouts built on
 * bernoulli (feature_dropout, alpha_dropout, feature_alpha_dropout,
 * _fused_dropout).
 *
 * The transforms are PyTorch's (torch/_refs/__init__.py and ATen's
 * DistributionTemplates.h), computed in the result's opmath type and
 * rounded once; the values are not PyTorch's, whose generator differs, and
 * are checked by distribution (tests/test_random.c). Samplers with a
 * rejection loop (poisson, _standard_gamma, binomial) and ranges wider than
 * float64 samples cover (random and randint past 2^53) have no rule: the
 * reference backend's kernels draw them (reference_backend/kernels_random.c).
 * Shape functions and the refusals of bad arguments: ir/meta_random.c.
 */
#include <float.h>
#include <math.h>

#include "decompositions/rules.h"

/* --- helpers -------------------------------------------------------------------------*/

static const alloy_value *result(decomp *d) { return alloy_node_output(d_node(d), 0); }

static bool refuse_complex(decomp *d) {
  if (!alloy_dtype_is_complex(d_out_dtype(d, 0))) return false;
  d_decline(d, "complex samples are not drawn by a rule");
  return true;
}

/* Samples of the core samplers with like's shape, of dtype t. */
static alloy_value *sample_as(decomp *d, const char *op, const alloy_value *like, alloy_dtype t) {
  return D(d, op, d_dim_list(d, d_shape(like), d_rank(like)), DT(t));
}
static alloy_value *rand_as(decomp *d, const alloy_value *like, alloy_dtype t) {
  return sample_as(d, "aten.rand.default", like, t);
}
static alloy_value *randn_as(decomp *d, const alloy_value *like, alloy_dtype t) {
  return sample_as(d, "aten.randn.default", like, t);
}

/* The float dtype samples are drawn in for a result of dtype t: its opmath
 * type, float64 for integer results. */
static alloy_dtype draw_dtype(alloy_dtype t) { return alloy_dtype_is_float(t) ? d_opmath(t) : ALLOY_F64; }

static alloy_value *times(decomp *d, alloy_value *x, double k) { return D(d, "aten.mul.Tensor", V(x), F(k)); }
static alloy_value *plus(decomp *d, alloy_value *x, double k) { return D(d, "aten.add.Tensor", V(x), F(k)); }

/* y rounded once to the node's result dtype. */
static void out_as_result(decomp *d, alloy_value *y) { d_out(d, 0, d_to(d, y, d_out_dtype(d, 0))); }

/* --- rand, randn and their forms --------------------------------------------------------*/

/* rand / randn with a generator (None) or names (None), rand_like,
 * randn_like: the core sampler with the result's shape and dtype. */
static void rand_form(decomp *d) {
  if (refuse_complex(d)) return;
  d_out(d, 0, rand_as(d, result(d), d_out_dtype(d, 0)));
}

static void randn_form(decomp *d) {
  if (refuse_complex(d)) return;
  d_out(d, 0, randn_as(d, result(d), d_out_dtype(d, 0)));
}

static void randperm_generator(decomp *d) {
  d_out(d, 0, D(d, "aten.randperm.default", *d_arg(d, 0), DT(d_out_dtype(d, 0))));
}

/* --- bernoulli ---------------------------------------------------------------------------*/

/* bernoulli(p): 1 where a uniform sample is below p, drawn in float64 for a
 * float64 p and in float32 otherwise (PyTorch's bernoulli_distribution
 * draws in p's type). */
static void bernoulli(decomp *d) {
  alloy_value *p = d_tensor(d, 0);
  alloy_value *u = rand_as(d, result(d), d_dtype(p) == ALLOY_F64 ? ALLOY_F64 : ALLOY_F32);
  out_as_result(d, D(d, "aten.lt.Tensor", V(u), V(p)));
}

/* bernoulli.p(self, p): the same with a number p (drawn in float64). */
static void bernoulli_p(decomp *d) {
  alloy_value *u = rand_as(d, result(d), ALLOY_F64);
  out_as_result(d, D(d, "aten.lt.Scalar", V(u), F(d_float(d, 1))));
}

/* bernoulli.Tensor(self, p): p expanded to self's shape. */
static void bernoulli_tensor(decomp *d) {
  alloy_value *p = d_tensor(d, 1);
  alloy_value *u = rand_as(d, result(d), d_dtype(p) == ALLOY_F64 ? ALLOY_F64 : ALLOY_F32);
  out_as_result(d, D(d, "aten.lt.Tensor", V(u), V(p)));
}

/* --- continuous distributions -------------------------------------------------------------*/

/* uniform(self, from, to) = from + (to - from) u */
static void uniform(decomp *d) {
  if (refuse_complex(d)) return;
  double from = d_float(d, 1), to = d_float(d, 2);
  alloy_value *u = rand_as(d, result(d), d_opmath(d_out_dtype(d, 0)));
  out_as_result(d, plus(d, times(d, u, to - from), from));
}

/* mean + std z, z standard normal with the result's shape; mean and std
 * are arguments (numbers or tensors, broadcast). */
static alloy_value *normal_of(decomp *d, alloy_arg mean, alloy_arg std) {
  alloy_value *z = randn_as(d, result(d), d_opmath(d_out_dtype(d, 0)));
  return D(d, "aten.add.Tensor", V(D(d, "aten.mul.Tensor", V(z), std)), mean);
}

/* normal_functional(self, mean, std) and normal.float_float(mean, std, size). */
static void normal_numbers(decomp *d) {
  if (refuse_complex(d)) return;
  int self = d_arg(d, 0)->kind == ALLOY_ARG_VALUE; /* normal_functional: after self */
  out_as_result(d, normal_of(d, F(d_float(d, self)), F(d_float(d, self + 1))));
}

/* normal's tensor overloads: normal(mean, std) with either or both tensors. */
static void normal_tensors(decomp *d) {
  if (refuse_complex(d)) return;
  out_as_result(d, normal_of(d, *d_arg(d, 0), *d_arg(d, 1)));
}

/* exponential(self, lambd) = -log(1 - u) / lambd, the logarithm held at or
 * below -eps/2 of the result's dtype (as ATen's transformation does for
 * samples next to 1) so that no sample is 0: the support is (0, inf). */
static void exponential(decomp *d) {
  alloy_dtype t = d_out_dtype(d, 0);
  double eps = t == ALLOY_F64 ? DBL_EPSILON : t == ALLOY_F32 ? FLT_EPSILON : t == ALLOY_F16 ? 0x1p-10 : 0x1p-7;
  alloy_value *u = rand_as(d, result(d), d_opmath(t));
  alloy_value *lg = D(d, "aten.log1p.default", V(D(d, "aten.neg.default", V(u))));
  lg = D(d, "aten.clamp.default", V(lg), NONE, F(-eps / 2));
  out_as_result(d, times(d, lg, -1.0 / d_float(d, 1)));
}

/* cauchy(self, median, sigma) = median + sigma tan(pi (u - 1/2)) */
static void cauchy(decomp *d) {
  alloy_value *u = rand_as(d, result(d), d_opmath(d_out_dtype(d, 0)));
  alloy_value *t = D(d, "aten.tan.default", V(times(d, plus(d, u, -0.5), M_PI)));
  out_as_result(d, plus(d, times(d, t, d_float(d, 2)), d_float(d, 1)));
}

/* log_normal(self, mean, std) = exp(mean + std z) */
static void log_normal(decomp *d) {
  alloy_value *n = normal_of(d, F(d_float(d, 1)), F(d_float(d, 2)));
  out_as_result(d, D(d, "aten.exp.default", V(n)));
}

/* geometric(self, p) = floor(log(1 - u) / log(1 - p)) + 1: the number of
 * trials up to the first success, >= 1. */
static void geometric(decomp *d) {
  alloy_value *u = rand_as(d, result(d), draw_dtype(d_out_dtype(d, 0)));
  alloy_value *lg = D(d, "aten.log1p.default", V(D(d, "aten.neg.default", V(u))));
  alloy_value *k = D(d, "aten.floor.default", V(times(d, lg, 1.0 / log1p(-d_float(d, 1)))));
  out_as_result(d, plus(d, k, 1));
}

/* --- integers in a range -------------------------------------------------------------------*/

/* floor(u range) + from with u uniform in [0, 1) of float64, held below
 * range (a product next to range may round up to it); range and from may
 * be symbolic. */
static alloy_value *integers_in(decomp *d, alloy_arg from, alloy_arg range) {
  alloy_value *u = rand_as(d, result(d), ALLOY_F64);
  alloy_value *k = D(d, "aten.floor.default", V(D(d, "aten.mul.Tensor", V(u), range)));
  alloy_value *top = D(d, "aten.sub.Tensor", V(D(d, "aten.full.default", EMPTY_LIST, range, DT(ALLOY_F64))), I(1));
  k = D(d, "aten.minimum.default", V(k), V(top));
  return D(d, "aten.add.Tensor", V(k), from);
}

/* The largest value random_ draws for dtype t without a bound: 2^digits
 * for a float dtype, the dtype's largest value for the others. */
static int64_t random_top(alloy_dtype t) {
  switch (t) {
    case ALLOY_F16: return (int64_t)1 << 11;
    case ALLOY_BF16: return (int64_t)1 << 8;
    case ALLOY_F32: return (int64_t)1 << 24;
    case ALLOY_F64: return (int64_t)1 << 53;
    case ALLOY_BOOL: return 1;
    default: {
      double lo = 0, hi = 0;
      alloy_dtype_limits(t, &lo, &hi);
      return t == ALLOY_I64 ? INT64_MAX : (int64_t)hi;
    }
  }
}

/* random [from, to) (has_to) or [from, random_top]: a range float64
 * samples cover (2^53 values at most) and bounds a float dtype holds
 * exactly; wider ones are the kernel's. */
static void random_range(decomp *d, int64_t from, bool has_to, int64_t to) {
  alloy_dtype t = d_out_dtype(d, 0);
  int64_t top = random_top(t);
  if (alloy_dtype_is_float(t) && t != ALLOY_F64 && (from < -top || from > top || (has_to && to > top + 1)))
    return d_decline(d, "bounds beyond the consecutive integers of %s", alloy_dtype_name(t));
  double range = has_to ? (double)to - (double)from : (double)top - (double)from + 1;
  if (!(range <= 0x1p53)) return d_decline(d, "a range of %.0f values is wider than float64 samples cover", range);
  out_as_result(d, integers_in(d, I(from), F(range)));
}

static void random_default(decomp *d) { random_range(d, 0, false, 0); }
static void random_to(decomp *d) { random_range(d, 0, true, d_int(d, 1)); }
static void random_from(decomp *d) {
  bool has_to = !d_is_none(d, 2);
  random_range(d, d_int(d, 1), has_to, has_to ? d_int(d, 2) : 0);
}

/* randint and randint_like (number bounds): [low, high), low 0 when
 * absent. Concrete bounds become random.from on an empty tensor, as ATen
 * builds randint (whose own rule or kernel then draws); symbolic ones are
 * drawn here. */
static void randint(decomp *d) {
  const alloy_schema *s = alloy_op_schema(alloy_node_op(d_node(d)));
  int lo = alloy_schema_find_arg(s, "low"), hi = alloy_schema_find_arg(s, "high");
  alloy_dim low = lo >= 0 ? d_dim(d, lo) : alloy_dim_const(0), high = d_dim(d, hi);
  if (d_failed(d)) return;
  const alloy_value *r = result(d);
  if (alloy_dim_is_const(low) && alloy_dim_is_const(high)) {
    alloy_value *x = D(d, "aten.empty.memory_format", d_dim_list(d, d_shape(r), d_rank(r)), DT(d_dtype(r)));
    return d_out(d, 0, D(d, "aten.random.from", V(x), I(low.value), I(high.value)));
  }
  out_as_result(d, integers_in(d, SYM(low), SYM(alloy_dim_sub(d_symtab(d), high, low))));
}

/* randint_like.Tensor(self, high): [0, high) with high a zero-dim tensor. */
static void randint_like_tensor(decomp *d) {
  alloy_value *high = d_to(d, d_tensor(d, 1), ALLOY_F64);
  alloy_value *u = rand_as(d, result(d), ALLOY_F64);
  alloy_value *k = D(d, "aten.floor.default", V(D(d, "aten.mul.Tensor", V(u), V(high))));
  k = D(d, "aten.minimum.default", V(k), V(D(d, "aten.sub.Tensor", V(high), I(1))));
  out_as_result(d, k);
}

/* --- multinomial, dirichlet ------------------------------------------------------------------*/

/* multinomial(p, n, replacement). Without replacement, or for one draw,
 * PyTorch races the categories: the n largest of p / q, q exponential,
 * are a draw of n distinct categories with probabilities p (topk), one
 * draw its argmax. With replacement, each draw inverts the cumulative
 * distribution (normalized in float64, its last entry 1) at a uniform
 * sample: the first category whose cumulative sum reaches it. */
static void multinomial(decomp *d) {
  alloy_value *p = d_tensor(d, 0);
  alloy_dim n = d_dim(d, 1);
  bool replacement = d_bool(d, 2);
  if (d_failed(d)) return;
  bool one = alloy_dim_is_const(n) && n.value == 1;
  if (!replacement || one) {
    alloy_value *q = D(d, "aten.exponential.default", V(p), F(1.0));
    alloy_value *race = D(d, "aten.div.Tensor", V(p), V(q));
    if (one) return d_out(d, 0, D(d, "aten.argmax.default", V(race), I(-1), B(true)));
    alloy_value *outs[2];
    if (DN(d, "aten.topk.default", outs, 2, V(race), SYM(n), I(-1), B(true), B(true)) == 2) d_out(d, 0, outs[1]);
    return;
  }
  int r = d_rank(p);
  alloy_dim cats = d_shape(p)[r - 1];
  alloy_value *cdf = D(d, "aten.cumsum.default", V(d_to(d, p, ALLOY_F64)), I(-1));
  alloy_value *total = D(d, "aten.slice.Tensor", V(cdf), I(-1), I(-1), NONE, I(1));
  cdf = D(d, "aten.div.Tensor", V(cdf), V(total));
  /* the last entry is 1 exactly, as PyTorch sets it */
  alloy_value *last = D(d, "aten.eq.Scalar", V(D(d, "aten.arange.default", SYM(cats), DT(ALLOY_I64))),
                        SYM(alloy_dim_sub(d_symtab(d), cats, alloy_dim_const(1))));
  cdf = D(d, "aten.where.self", V(last), F(1.0), V(cdf));
  alloy_value *u = rand_as(d, result(d), ALLOY_F64);
  alloy_value *k = D(d, "aten.searchsorted.Tensor", V(cdf), V(u));
  d_out(d, 0, D(d, "aten.clamp.default", V(k), NONE, SYM(alloy_dim_sub(d_symtab(d), cats, alloy_dim_const(1)))));
}

/* _sample_dirichlet(alpha): gamma draws in float64, each at least the
 * smallest normal double, normalized over the last dim (ATen's kernel). */
static void sample_dirichlet(decomp *d) {
  alloy_value *g = D(d, "aten._standard_gamma.default", V(d_to(d, d_tensor(d, 0), ALLOY_F64)));
  g = D(d, "aten.clamp.default", V(g), F(DBL_MIN));
  alloy_value *sum = D(d, "aten.sum.dim_IntList", V(g), LIST(I(-1)), B(true));
  out_as_result(d, D(d, "aten.div.Tensor", V(g), V(sum)));
}

/* --- dropouts ------------------------------------------------------------------------------------*/

/* feature_dropout, alpha_dropout, feature_alpha_dropout (ATen's
 * _dropout_impl): out of training, with p == 0 or no elements the input
 * passes; p == 1 zeroes it (x * 0, NaN staying NaN); else a keep-mask
 * bernoulli(1 - p), one per element or per channel ([N, C, 1, ...]),
 * scales the kept values by 1 / (1 - p), or for alpha dropout moves the
 * dropped ones to the negative saturation value and rescales (a, b below)
 * so that mean and variance stay. */
enum { DROP_FEATURE = 1, DROP_ALPHA = 2 };

static void dropout_family(decomp *d, int kind) {
  alloy_value *x = d_tensor(d, 0);
  double p = d_float(d, 1);
  bool train = d_bool(d, 2);
  if (d_failed(d)) return;
  alloy_dtype t = d_dtype(x);
  if (!train || p == 0 || d_known_empty(x)) return d_out(d, 0, D(d, "aten.clone.default", V(x)));
  alloy_value *zero = D(d, "aten.zeros.default", EMPTY_LIST, DT(t));
  if (p == 1) return d_out(d, 0, D(d, "aten.mul.Tensor", V(x), V(zero)));
  if (!alloy_dtype_is_float(t)) return d_decline(d, "training dropout of %s tensors", alloy_dtype_name(t));
  int r = d_rank(x);
  alloy_dim shape[ALLOY_MAX_RANK];
  for (int k = 0; k < r; k++) shape[k] = (kind & DROP_FEATURE) && k >= 2 ? alloy_dim_const(1) : d_shape(x)[k];
  alloy_value *empty = D(d, "aten.empty.memory_format", d_dim_list(d, shape, r), DT(t));
  alloy_value *noise = D(d, "aten.bernoulli.p", V(empty), F(1 - p));
  if (!(kind & DROP_ALPHA))
    return d_out(d, 0, D(d, "aten.mul.Tensor", V(x), V(D(d, "aten.div.Tensor", V(noise), F(1 - p)))));
  const double alpha = 1.7580993408473766;
  double a = 1.0 / sqrt((alpha * alpha * p + 1) * (1 - p));
  alloy_value *b = plus(d, times(d, plus(d, noise, -1), alpha * a), alpha * a * p);
  alloy_value *y = D(d, "aten.mul.Tensor", V(x), V(times(d, noise, a)));
  d_out(d, 0, D(d, "aten.add.Tensor", V(y), V(b)));
}

static void feature_dropout(decomp *d) { dropout_family(d, DROP_FEATURE); }
static void alpha_dropout(decomp *d) { dropout_family(d, DROP_ALPHA); }
static void feature_alpha_dropout(decomp *d) { dropout_family(d, DROP_FEATURE | DROP_ALPHA); }

/* _fused_dropout(x, p), p the probability of keeping (PyTorch's
 * decomposition, in opmath): mask = u < p as uint8, x * mask / p. */
static void fused_dropout(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  double p = d_float(d, 1);
  alloy_dtype c = d_opmath(d_dtype(x));
  alloy_value *mask = d_to(d, D(d, "aten.lt.Scalar", V(rand_as(d, x, c)), F(p)), ALLOY_U8);
  alloy_value *y = D(d, "aten.mul.Tensor", V(d_to(d, mask, c)), V(d_to(d, x, c)));
  d_out(d, 0, d_to(d, times(d, y, 1.0 / p), d_dtype(x)));
  d_out(d, 1, mask);
}

const decomp_rule decomp_rules_random[] = {
    {"aten.bernoulli.default", bernoulli, DECOMP_TO_CORE},
    {"aten.bernoulli.p", bernoulli_p, DECOMP_TO_CORE},
    {"aten.bernoulli.Tensor", bernoulli_tensor, DECOMP_TO_CORE},
    {"aten.uniform.default", uniform, DECOMP_TO_CORE},
    {"aten.normal_functional.default", normal_numbers, DECOMP_TO_CORE},
    {"aten.normal.float_float", normal_numbers, DECOMP_TO_CORE},
    {"aten.normal.Tensor_Tensor", normal_tensors, DECOMP_TO_CORE},
    {"aten.normal.Tensor_float", normal_tensors, DECOMP_TO_CORE},
    {"aten.normal.float_Tensor", normal_tensors, DECOMP_TO_CORE},
    {"aten.exponential.default", exponential, DECOMP_TO_CORE},
    {"aten.cauchy.default", cauchy, DECOMP_TO_CORE},
    {"aten.log_normal.default", log_normal, DECOMP_TO_CORE},
    {"aten.geometric.default", geometric, DECOMP_TO_CORE},
    {"aten.random.default", random_default, DECOMP_TO_CORE},
    {"aten.random.from", random_from, DECOMP_TO_CORE},
    {"aten.random.to", random_to, DECOMP_TO_CORE},
    {"aten.randint.default", randint, DECOMP_TO_CORE},
    {"aten.randint.generator", randint, DECOMP_TO_CORE},
    {"aten.randint.low", randint, DECOMP_TO_CORE},
    {"aten.randint.low_generator", randint, DECOMP_TO_CORE},
    {"aten.randint_like.default", randint, DECOMP_TO_CORE},
    {"aten.randint_like.generator", randint, DECOMP_TO_CORE},
    {"aten.randint_like.low_dtype", randint, DECOMP_TO_CORE},
    {"aten.randint_like.low_generator_dtype", randint, DECOMP_TO_CORE},
    {"aten.randint_like.Tensor", randint_like_tensor, DECOMP_TO_CORE},
    {"aten.randint_like.Tensor_generator", randint_like_tensor, DECOMP_TO_CORE},
    {"aten.rand.generator", rand_form, DECOMP_TO_CORE},
    {"aten.rand.names", rand_form, DECOMP_TO_CORE},
    {"aten.rand.generator_with_names", rand_form, DECOMP_TO_CORE},
    {"aten.rand_like.default", rand_form, DECOMP_TO_CORE},
    {"aten.rand_like.generator", rand_form, DECOMP_TO_CORE},
    {"aten.randn.generator", randn_form, DECOMP_TO_CORE},
    {"aten.randn.names", randn_form, DECOMP_TO_CORE},
    {"aten.randn.generator_with_names", randn_form, DECOMP_TO_CORE},
    {"aten.randn_like.default", randn_form, DECOMP_TO_CORE},
    {"aten.randn_like.generator", randn_form, DECOMP_TO_CORE},
    {"aten.randperm.generator", randperm_generator, DECOMP_TO_CORE},
    {"aten.multinomial.default", multinomial, DECOMP_TO_CORE},
    {"aten._sample_dirichlet.default", sample_dirichlet, DECOMP_TO_CORE},
    {"aten.feature_dropout.default", feature_dropout, DECOMP_TO_CORE},
    {"aten.alpha_dropout.default", alpha_dropout, DECOMP_TO_CORE},
    {"aten.feature_alpha_dropout.default", feature_alpha_dropout, DECOMP_TO_CORE},
    {"aten._fused_dropout.default", fused_dropout, DECOMP_TO_CORE},
    {NULL, NULL, 0},
};
