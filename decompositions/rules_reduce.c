/*
 * decompositions/rules_reduce.c: reductions, scans, norms, statistics,
 * the trapezoid rule, and the pointwise odds and ends that are not core
 * (clamp_min, rsub, lerp, xlogy, ...), from ATen to Core ATen.
 *
 * As in PyTorch's references, pointwise math on float16 and bfloat16 is
 * computed in float32 ("opmath") and rounded once at the end; integer
 * inputs of ops whose result is floating point are converted first.
 */
#include <math.h>

#include "decompositions/rules.h"

/* --- dtypes ------------------------------------------------------------------*/

/* Tensor argument i in the computation dtype of the node's result. */
static alloy_value *in_opmath(decomp *d, int i) {
  return d_to(d, d_tensor(d, i), d_opmath(d_out_dtype(d, 0)));
}

/* The result y, back in the dtype of the node's output k. */
static void out_back(decomp *d, int k, alloy_value *y) { d_out(d, k, d_to(d, y, d_out_dtype(d, k))); }

static bool refuse_complex(decomp *d, alloy_dtype t) {
  if (!alloy_dtype_is_complex(t)) return false;
  d_decline(d, "complex tensors are not computed on");
  return true;
}

/* --- pointwise odds and ends -----------------------------------------------------*/

/* clamp_min(x, lo) = clamp(x, lo, None) and the like. */
static void clamp_min_scalar(decomp *d) {
  d_out(d, 0, D(d, "aten.clamp.default", V(d_tensor(d, 0)), *d_arg(d, 1), NONE));
}

static void clamp_min_tensor(decomp *d) {
  d_out(d, 0, D(d, "aten.clamp.Tensor", V(d_tensor(d, 0)), V(d_tensor(d, 1)), NONE));
}

static void clamp_max_tensor(decomp *d) {
  d_out(d, 0, D(d, "aten.clamp.Tensor", V(d_tensor(d, 0)), NONE, V(d_tensor(d, 1))));
}

/* rsub(x, y, alpha) = y - alpha x (a Python number y promotes as one). */
static void rsub(decomp *d) {
  d_out(d, 0, D(d, "aten.sub.Tensor", *d_arg(d, 1), V(d_tensor(d, 0)), *d_arg(d, 2)));
}

static void floor_divide(decomp *d) {
  d_out(d, 0, D(d, "aten.div.Tensor_mode", V(d_tensor(d, 0)), V(d_tensor(d, 1)), S("floor")));
}

/* addcmul(s, a, b, value) = s + value a b; addcdiv the same with a / b. */
static void addc(decomp *d, const char *op) {
  alloy_value *s = in_opmath(d, 0), *a = in_opmath(d, 1), *b = in_opmath(d, 2);
  alloy_value *va = D(d, "aten.mul.Tensor", V(a), *d_arg(d, 3));
  out_back(d, 0, D(d, "aten.add.Tensor", V(s), V(D(d, op, V(va), V(b)))));
}

static void addcmul(decomp *d) { addc(d, "aten.mul.Tensor"); }
static void addcdiv(decomp *d) { addc(d, "aten.div.Tensor"); }

/* deg2rad(x) = x pi / 180, rad2deg(x) = x 180 / pi */
static void deg2rad(decomp *d) {
  d_out(d, 0, D(d, "aten.mul.Tensor", V(d_tensor(d, 0)), F(0.017453292519943295769236907684886)));
}

static void rad2deg(decomp *d) {
  d_out(d, 0, D(d, "aten.mul.Tensor", V(d_tensor(d, 0)), F(57.295779513082320876798154814105)));
}

/* frac(x) = x - trunc(x) */
static void frac(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  d_out(d, 0, D(d, "aten.sub.Tensor", V(x), V(D(d, "aten.trunc.default", V(x)))));
}

/* sgn(x) = sign(x) on real numbers. */
static void sgn(decomp *d) {
  if (refuse_complex(d, d_out_dtype(d, 0))) return;
  d_out(d, 0, D(d, "aten.sign.default", V(d_tensor(d, 0))));
}

/* heaviside(x, v) = v where x == 0, else 1 where x > 0, else 0 (NaN too). */
static void heaviside(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *v = d_tensor(d, 1);
  alloy_value *step = d_to(d, D(d, "aten.gt.Scalar", V(x), I(0)), d_out_dtype(d, 0));
  d_out(d, 0, D(d, "aten.where.self", V(D(d, "aten.eq.Scalar", V(x), I(0))), V(v), V(step)));
}

/* isposinf(x) = x == inf; an integer is never infinite. */
static void isinf_signed(decomp *d, double inf) {
  alloy_value *x = d_tensor(d, 0);
  if (alloy_dtype_is_float(d_dtype(x)))
    d_out(d, 0, D(d, "aten.eq.Scalar", V(x), F(inf)));
  else
    d_out(d, 0, D(d, "aten.full_like.default", V(x), B(false), DT(ALLOY_BOOL)));
}

static void isposinf(decomp *d) { isinf_signed(d, INFINITY); }
static void isneginf(decomp *d) { isinf_signed(d, -INFINITY); }

/* nan_to_num: NaN, +inf and -inf replaced by the given numbers, the
 * infinities by default by the dtype's largest finite values. */
static void nan_to_num(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  alloy_dtype t = d_dtype(x);
  if (!alloy_dtype_is_float(t)) {
    d_out(d, 0, D(d, "aten.clone.default", V(x)));
    return;
  }
  double low, big;
  alloy_dtype_limits(t, &low, &big);
  double nan = d_is_none(d, 1) ? 0.0 : d_float(d, 1);
  double posinf = d_is_none(d, 2) ? big : d_float(d, 2);
  double neginf = d_is_none(d, 3) ? -big : d_float(d, 3);
  alloy_value *r = D(d, "aten.where.self", V(D(d, "aten.isnan.default", V(x))), F(nan), V(x));
  r = D(d, "aten.where.self", V(D(d, "aten.eq.Scalar", V(x), F(INFINITY))), F(posinf), V(r));
  d_out(d, 0, D(d, "aten.where.self", V(D(d, "aten.eq.Scalar", V(x), F(-INFINITY))), F(neginf), V(r)));
}

/* lerp(s, e, w) = s + w (e - s), written as e - (1 - w)(e - s) when
 * |w| >= 1/2 so that w = 1 gives e exactly. */
static void lerp_scalar(decomp *d) {
  alloy_value *s = in_opmath(d, 0), *e = in_opmath(d, 1);
  double w = d_float(d, 2);
  alloy_value *diff = D(d, "aten.sub.Tensor", V(e), V(s));
  alloy_value *r = fabs(w) < 0.5 ? D(d, "aten.add.Tensor", V(D(d, "aten.mul.Tensor", V(diff), F(w))), V(s))
                                 : D(d, "aten.add.Tensor", V(D(d, "aten.mul.Tensor", V(diff), F(w - 1))), V(e));
  out_back(d, 0, r);
}

static void lerp_tensor(decomp *d) {
  alloy_value *s = in_opmath(d, 0), *e = in_opmath(d, 1), *w = in_opmath(d, 2);
  alloy_value *near = D(d, "aten.lt.Scalar", V(D(d, "aten.abs.default", V(w))), F(0.5));
  alloy_value *coeff = D(d, "aten.where.self", V(near), V(w), V(D(d, "aten.sub.Tensor", V(w), I(1))));
  alloy_value *base = D(d, "aten.where.self", V(near), V(s), V(e));
  alloy_value *diff = D(d, "aten.sub.Tensor", V(e), V(s));
  /* PyTorch's kernel ends with a fused multiply-add, coeff diff + base
   * rounded once (s = 0, e = -3e38, w = -0.66 gives 1.99e38, where a
   * rounded product overflows to inf). float64 holds a float32 product
   * exactly; the sum rounded from there is the fma's (but for rare double
   * roundings). */
  alloy_dtype t = d_dtype(diff), wide = t == ALLOY_F32 ? ALLOY_F64 : t;
  alloy_value *prod = D(d, "aten.mul.Tensor", V(d_to(d, coeff, wide)), V(d_to(d, diff, wide)));
  out_back(d, 0, d_to(d, D(d, "aten.add.Tensor", V(prod), V(d_to(d, base, wide))), t));
}

/* logaddexp(a, b) = max + log1p(exp(min - max)); equal infinities give
 * themselves (inf - inf would be NaN). logaddexp2 the same in base 2. */
static void logaddexp_base(decomp *d, bool base2) {
  alloy_value *a = in_opmath(d, 0), *b = in_opmath(d, 1);
  alloy_value *ge = D(d, "aten.ge.Tensor", V(a), V(b));
  alloy_value *mx = D(d, "aten.where.self", V(ge), V(a), V(b));
  alloy_value *mn = D(d, "aten.where.self", V(ge), V(b), V(a));
  alloy_value *diff = D(d, "aten.sub.Tensor", V(mn), V(mx));
  alloy_value *tail;
  if (base2) {
    tail = D(d, "aten.log1p.default", V(D(d, "aten.pow.Scalar", F(2.0), V(diff))));
    tail = D(d, "aten.mul.Tensor", V(tail), F(1.0 / M_LN2));
  } else {
    tail = D(d, "aten.log1p.default", V(D(d, "aten.exp.default", V(diff))));
  }
  alloy_value *same_inf = D(d, "aten.logical_and.default", V(D(d, "aten.isinf.default", V(a))),
                            V(D(d, "aten.eq.Tensor", V(a), V(b))));
  out_back(d, 0, D(d, "aten.where.self", V(same_inf), V(a), V(D(d, "aten.add.Tensor", V(mx), V(tail)))));
}

static void logaddexp(decomp *d) { logaddexp_base(d, false); }
static void logaddexp2(decomp *d) { logaddexp_base(d, true); }

/* logit(x) = log(x / (1 - x)), x first clamped to [eps, 1 - eps] when eps
 * is given. PyTorch's kernel computes it in x's own precision (float16
 * rounds the quotient), so no opmath here. */
static void logit(decomp *d) {
  alloy_value *x = d_to(d, d_tensor(d, 0), d_out_dtype(d, 0));
  if (!d_is_none(d, 1)) {
    double eps = d_float(d, 1);
    x = D(d, "aten.clamp.default", V(x), F(eps), F(1.0 - eps));
  }
  alloy_value *odds = D(d, "aten.div.Tensor", V(x), V(D(d, "aten.sub.Tensor", F(1.0), V(x))));
  out_back(d, 0, D(d, "aten.log.default", V(odds)));
}

/* xlogy(x, y) = x log(y), 0 where x == 0, NaN where y is NaN; xlog1py the
 * same with log1p. */
static void x_log(decomp *d, const char *log) {
  alloy_value *x = in_opmath(d, 0), *y = in_opmath(d, 1);
  alloy_value *prod = D(d, "aten.mul.Tensor", V(x), V(D(d, log, V(y))));
  alloy_value *r = D(d, "aten.where.self", V(D(d, "aten.eq.Scalar", V(x), I(0))), I(0), V(prod));
  out_back(d, 0, D(d, "aten.where.self", V(D(d, "aten.isnan.default", V(y))), F(NAN), V(r)));
}

static void xlogy(decomp *d) { x_log(d, "aten.log.default"); }
static void xlog1py(decomp *d) { x_log(d, "aten.log1p.default"); }

/* entr(x) = -x log(x) for x > 0, 0 at 0, -inf below, NaN stays NaN. */
static void special_entr(decomp *d) {
  alloy_value *x = in_opmath(d, 0);
  alloy_value *pos = D(d, "aten.neg.default", V(D(d, "aten.mul.Tensor", V(x), V(D(d, "aten.log.default", V(x))))));
  alloy_value *r = D(d, "aten.where.self", V(D(d, "aten.eq.Scalar", V(x), I(0))), F(0.0), F(-INFINITY));
  r = D(d, "aten.where.self", V(D(d, "aten.gt.Scalar", V(x), I(0))), V(pos), V(r));
  out_back(d, 0, D(d, "aten.where.self", V(D(d, "aten.isnan.default", V(x))), V(x), V(r)));
}

/* log_ndtr(x) = log(Phi(x)), Phi the standard normal CDF, t = x / sqrt(2):
 * below 1 as log(erfcx(-t) / 2) - t^2 (no underflow in the far left tail),
 * above as log1p(-erfc(t) / 2) (no cancellation near 0). */
static void special_log_ndtr(decomp *d) {
  alloy_value *x = in_opmath(d, 0);
  alloy_value *t = D(d, "aten.mul.Tensor", V(x), F(M_SQRT1_2));
  alloy_value *cx = D(d, "aten.special_erfcx.default", V(D(d, "aten.neg.default", V(t))));
  alloy_value *left = D(d, "aten.sub.Tensor", V(D(d, "aten.log.default", V(D(d, "aten.div.Tensor", V(cx), I(2))))),
                        V(D(d, "aten.mul.Tensor", V(t), V(t))));
  alloy_value *half_erfc = D(d, "aten.div.Tensor", V(D(d, "aten.erfc.default", V(t))), I(-2));
  alloy_value *right = D(d, "aten.log1p.default", V(half_erfc));
  out_back(d, 0, D(d, "aten.where.self", V(D(d, "aten.lt.Scalar", V(x), F(1.0))), V(left), V(right)));
}

/* sinc(x) = sin(pi x) / (pi x), 1 at 0 */
static void sinc(decomp *d) {
  alloy_value *a = D(d, "aten.mul.Tensor", V(in_opmath(d, 0)), F(M_PI));
  alloy_value *q = D(d, "aten.div.Tensor", V(D(d, "aten.sin.default", V(a))), V(a));
  out_back(d, 0, D(d, "aten.where.self", V(D(d, "aten.eq.Scalar", V(a), I(0))), F(1.0), V(q)));
}

/* mvlgamma(x, p) = log(pi) p (p - 1) / 4 + sum_{j<p} lgamma(x - j / 2) */
static void mvlgamma(decomp *d) {
  alloy_dtype t = d_out_dtype(d, 0);
  alloy_value *x = d_to(d, d_tensor(d, 0), t);
  int64_t p = d_int(d, 1);
  if (d_failed(d)) return;
  alloy_value *halves = D(d, "aten.arange.start_step", F(0.5 - 0.5 * (double)p), F(0.5), F(0.5), DT(t));
  alloy_value *args = D(d, "aten.add.Tensor", V(D(d, "aten.unsqueeze.default", V(x), I(-1))), V(halves));
  alloy_value *s = D(d, "aten.sum.dim_IntList", V(D(d, "aten.lgamma.default", V(args))), LIST(I(-1)));
  d_out(d, 0, D(d, "aten.add.Tensor", V(s), F((double)p * (double)(p - 1) * log(M_PI) * 0.25)));
}

/* --- reductions --------------------------------------------------------------------*/

static void sum_default(decomp *d) {
  d_out(d, 0, D(d, "aten.sum.dim_IntList", V(d_tensor(d, 0)), NONE, B(false), *d_arg(d, 1)));
}

/* nansum: the sum with NaNs counted as 0. */
static void nansum(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  if (alloy_dtype_is_float(d_dtype(x)))
    x = D(d, "aten.where.self", V(D(d, "aten.isnan.default", V(x))), I(0), V(x));
  d_out(d, 0, D(d, "aten.sum.dim_IntList", V(x), *d_arg(d, 1), *d_arg(d, 2), *d_arg(d, 3)));
}

/* all(x) = not any(not x); the result keeps uint8 as PyTorch's does. */
static alloy_value *all_of(decomp *d, alloy_value *none_false) {
  return d_to(d, D(d, "aten.logical_not.default", V(none_false)), d_out_dtype(d, 0));
}

static void all_default(decomp *d) {
  alloy_value *nx = D(d, "aten.logical_not.default", V(d_tensor(d, 0)));
  d_out(d, 0, all_of(d, D(d, "aten.any.default", V(nx))));
}

static void all_dim(decomp *d) {
  alloy_value *nx = D(d, "aten.logical_not.default", V(d_tensor(d, 0)));
  d_out(d, 0, all_of(d, D(d, "aten.any.dim", V(nx), *d_arg(d, 1), *d_arg(d, 2))));
}

static void all_dims(decomp *d) {
  alloy_value *nx = D(d, "aten.logical_not.default", V(d_tensor(d, 0)));
  d_out(d, 0, all_of(d, D(d, "aten.any.dims", V(nx), *d_arg(d, 1), *d_arg(d, 2))));
}

/* count_nonzero(x, dims) = sum(x != 0, dims) as int64 */
static void count_nonzero(decomp *d) {
  alloy_value *nz = D(d, "aten.ne.Scalar", V(d_tensor(d, 0)), I(0));
  alloy_arg dims = *d_arg(d, 1);
  alloy_dim one;
  if (dims.kind != ALLOY_ARG_NONE && dims.kind != ALLOY_ARG_LIST)
    one = d_dim(d, 1), dims = d_dim_list(d, &one, 1);
  d_out(d, 0, D(d, "aten.sum.dim_IntList", V(nz), dims, B(false), DT(ALLOY_I64)));
}

/* aminmax(x, dim, keepdim) = (amin, amax) over dim, or over everything. */
static void aminmax(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  alloy_arg dims = d_is_none(d, 1) ? EMPTY_LIST : LIST(*d_arg(d, 1));
  d_out(d, 0, D(d, "aten.amin.default", V(x), dims, *d_arg(d, 2)));
  d_out(d, 1, D(d, "aten.amax.default", V(x), dims, *d_arg(d, 2)));
}

/* The dims a reduction's int[] argument names, wrapped; all of them when
 * it is None or empty. Returns the count. */
static int reduced_dims(decomp *d, int arg, int rank, int64_t *out) {
  int64_t given[ALLOY_MAX_RANK];
  int n = d_ints(d, arg, given, ALLOY_MAX_RANK);
  if (n <= 0) {
    for (int k = 0; k < rank; k++) out[k] = k;
    return rank;
  }
  for (int k = 0; k < n; k++) out[k] = d_wrap_dim(d, given[k], rank);
  return n;
}

/* logsumexp(x, dims) = m + log(sum(exp(x - m))), m the max over dims
 * (0 where it is infinite, so that all -inf gives -inf, not NaN). An empty
 * x has no max (amax refuses an empty reduced dim): log(sum(exp(x))), as
 * PyTorch's kernel and reference do when numel() == 0. */
static alloy_value *logsumexp_of(decomp *d, alloy_value *x, alloy_arg dims, int64_t *dl, int nd,
                                 bool keepdim) {
  if (d_known_empty(x)) {
    alloy_value *e = D(d, "aten.exp.default", V(x));
    return D(d, "aten.log.default", V(D(d, "aten.sum.dim_IntList", V(e), dims, B(keepdim))));
  }
  alloy_value *m = D(d, "aten.amax.default", V(x), dims, B(true));
  alloy_value *inf = D(d, "aten.eq.Scalar", V(D(d, "aten.abs.default", V(m))), F(INFINITY));
  m = D(d, "aten.where.self", V(inf), I(0), V(m));
  alloy_value *e = D(d, "aten.exp.default", V(D(d, "aten.sub.Tensor", V(x), V(m))));
  alloy_value *s = D(d, "aten.log.default", V(D(d, "aten.sum.dim_IntList", V(e), dims, B(keepdim))));
  if (!keepdim && nd > 0) m = D(d, "aten.squeeze.dims", V(m), d_int_list(d, dl, nd));
  return D(d, "aten.add.Tensor", V(s), V(m));
}

/* Integers are computed as floats; float16 and bfloat16 in their own
 * dtype, each step rounded, as PyTorch's logsumexp (sub, exp, sum, log,
 * add on the tensor's dtype) and the reference do. */
static void logsumexp(decomp *d) {
  alloy_value *x = d_to(d, d_tensor(d, 0), d_out_dtype(d, 0));
  int64_t dl[ALLOY_MAX_RANK];
  int nd = d_rank(x) ? reduced_dims(d, 1, d_rank(x), dl) : 0;
  if (d_failed(d)) return;
  out_back(d, 0, logsumexp_of(d, x, d_int_list(d, dl, nd), dl, nd, d_bool(d, 2)));
}

/* --- scans ------------------------------------------------------------------------*/

/* A scan along dim as a masked reduction: x gets a new axis after dim,
 * mask[j][i] = j <= i keeps the prefix x[0..i] in row i and puts the
 * reduction's identity elsewhere; reducing over dim gives the scan. */
static alloy_value *prefix_rows(decomp *d, alloy_value *x, int dim, alloy_arg identity) {
  int rank = d_rank(x);
  alloy_value *rg = D(d, "aten.arange.start_step", I(0), SYM(d_shape(x)[dim]), I(1), DT(ALLOY_I64));
  alloy_value *mask = D(d, "aten.le.Tensor", V(D(d, "aten.unsqueeze.default", V(rg), I(1))), V(rg));
  for (int k = dim + 1; k < rank; k++) mask = D(d, "aten.unsqueeze.default", V(mask), I(-1));
  alloy_value *xa = D(d, "aten.unsqueeze.default", V(x), I(dim + 1));
  return D(d, "aten.where.self", V(mask), V(xa), identity);
}

/* The scan dim, with a 0-dim x seen as one element along dim 0. */
static alloy_value *scan_input(decomp *d, int *dim) {
  alloy_value *x = d_tensor(d, 0);
  *dim = d_wrap_dim(d, d_int(d, 1), d_rank(x));
  return d_rank(x) ? x : D(d, "aten.unsqueeze.default", V(x), I(0));
}

static alloy_value *scan_output(decomp *d, alloy_value *r) {
  return d_rank(d_tensor(d, 0)) ? r : D(d, "aten.squeeze.dims", V(r), LIST(I(0)));
}

static void cumprod(decomp *d) {
  int dim;
  alloy_value *x = scan_input(d, &dim);
  if (d_failed(d)) return;
  /* PyTorch's cumprod accumulates float16/bfloat16 in float32, while prod
   * rounds each step to its own dtype: multiply in opmath. */
  if (d_is_none(d, 2)) x = d_to(d, x, d_opmath(d_dtype(x)));
  alloy_value *rows = prefix_rows(d, x, dim, I(1));
  alloy_value *r = D(d, "aten.prod.dim_int", V(rows), I(dim), B(false), *d_arg(d, 2));
  d_out(d, 0, d_to(d, scan_output(d, r), d_out_dtype(d, 0)));
}

static void logcumsumexp(decomp *d) {
  int dim;
  alloy_value *x = scan_input(d, &dim);
  if (d_failed(d)) return;
  if (refuse_complex(d, d_dtype(x))) return;
  /* PyTorch accumulates in opmath and rounds once. */
  x = d_to(d, x, d_opmath(d_dtype(x)));
  alloy_value *rows = prefix_rows(d, x, dim, F(-INFINITY));
  int64_t dl[1] = {dim};
  alloy_value *r = logsumexp_of(d, rows, LIST(I(dim)), dl, 1, false);
  d_out(d, 0, d_to(d, scan_output(d, r), d_out_dtype(d, 0)));
}

/* --- statistics -------------------------------------------------------------------*/

/* std = sqrt(var), computed in opmath. */
static void std_correction(decomp *d) {
  if (refuse_complex(d, d_dtype(d_tensor(d, 0)))) return;
  alloy_value *x = in_opmath(d, 0);
  alloy_value *v = D(d, "aten.var.correction", V(x), *d_arg(d, 1), *d_arg(d, 2), *d_arg(d, 3));
  out_back(d, 0, D(d, "aten.sqrt.default", V(v)));
}

/* var_mean's and std_mean's mean: PyTorch's comes from Welford updates
 * (mean += (x - mean) / k), NaN once any element follows an inf (inf -
 * inf): mean.dim, NaN where an inf sits before the reduction's last
 * element (the one at the end of every reduced dim). */
static alloy_value *welford_mean(decomp *d, alloy_value *x) {
  alloy_value *mean = D(d, "aten.mean.dim", V(x), *d_arg(d, 1), *d_arg(d, 3));
  int rank = d_rank(x);
  if (!rank || !alloy_dtype_is_float(d_dtype(x))) return mean;
  int64_t dl[ALLOY_MAX_RANK];
  int nd = reduced_dims(d, 1, rank, dl);
  alloy_value *last = NULL;
  for (int k = 0; k < nd; k++) {
    int r = (int)dl[k];
    alloy_value *rg = D(d, "aten.arange.start_step", I(0), SYM(d_shape(x)[r]), I(1), DT(ALLOY_I64));
    /* flipped, 0 marks the last index */
    alloy_value *e = D(d, "aten.eq.Scalar", V(D(d, "aten.flip.default", V(rg), LIST(I(0)))), I(0));
    for (int j = r + 1; j < rank; j++) e = D(d, "aten.unsqueeze.default", V(e), I(-1));
    last = last ? D(d, "aten.logical_and.default", V(last), V(e)) : e;
  }
  if (!last) return mean;
  alloy_value *early = D(d, "aten.logical_and.default", V(D(d, "aten.isinf.default", V(x))),
                         V(D(d, "aten.logical_not.default", V(last))));
  alloy_value *n = D(d, "aten.sum.dim_IntList", V(early), d_int_list(d, dl, nd), *d_arg(d, 3), DT(ALLOY_I64));
  return D(d, "aten.where.self", V(D(d, "aten.gt.Scalar", V(n), I(0))), F(NAN), V(mean));
}

static void var_mean(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  if (refuse_complex(d, d_dtype(x))) return;
  d_out(d, 0, D(d, "aten.var.correction", V(x), *d_arg(d, 1), *d_arg(d, 2), *d_arg(d, 3)));
  d_out(d, 1, welford_mean(d, x));
}

static void std_mean(decomp *d) {
  if (refuse_complex(d, d_dtype(d_tensor(d, 0)))) return;
  alloy_value *x = in_opmath(d, 0);
  alloy_value *v = D(d, "aten.var.correction", V(x), *d_arg(d, 1), *d_arg(d, 2), *d_arg(d, 3));
  out_back(d, 0, D(d, "aten.sqrt.default", V(v)));
  out_back(d, 1, welford_mean(d, x));
}

/* The older overloads of var, std, var_mean and std_mean: unbiased is
 * correction 1 (0 when false); without dims, every dim. */
static void var_like(decomp *d, const char *op, bool has_dims) {
  alloy_arg dims = has_dims ? *d_arg(d, 1) : NONE;
  alloy_arg keep = has_dims ? *d_arg(d, 3) : B(false);
  alloy_arg corr = I(d_bool(d, has_dims ? 2 : 1) ? 1 : 0);
  alloy_value *outs[2];
  int n = DN(d, op, outs, 2, V(d_tensor(d, 0)), dims, corr, keep);
  for (int k = 0; k < n && !d_failed(d); k++) d_out(d, k, outs[k]);
}
static void var_all(decomp *d) { var_like(d, "aten.var.correction", false); }
static void std_all(decomp *d) { var_like(d, "aten.std.correction", false); }
static void std_dim(decomp *d) { var_like(d, "aten.std.correction", true); }
static void var_mean_all(decomp *d) { var_like(d, "aten.var_mean.correction", false); }
static void std_mean_all(decomp *d) { var_like(d, "aten.std_mean.correction", false); }
static void var_mean_dim(decomp *d) { var_like(d, "aten.var_mean.correction", true); }
static void std_mean_dim(decomp *d) { var_like(d, "aten.std_mean.correction", true); }

/* nanmean = nansum / the number of elements that are not NaN, as
 * PyTorch's: the sum in its dtype, divided by an int64 count. */
static void nanmean(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  if (refuse_complex(d, d_dtype(x))) return;
  alloy_value *sum = D(d, "aten.nansum.default", V(x), *d_arg(d, 1), *d_arg(d, 2), *d_arg(d, 3));
  alloy_value *kept = D(d, "aten.logical_not.default", V(D(d, "aten.isnan.default", V(x))));
  alloy_value *count = D(d, "aten.sum.dim_IntList", V(kept), *d_arg(d, 1), *d_arg(d, 2), DT(ALLOY_I64));
  d_out(d, 0, D(d, "aten.div.Tensor", V(sum), V(count)));
}

/* sum_to_size(size): the sum over self's leading dims and over the dims
 * where size has 1 and self does not, viewed as size. */
static void sum_to_size(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  alloy_dim size[ALLOY_MAX_RANK];
  int n = d_dims(d, 1, size, ALLOY_MAX_RANK);
  if (d_failed(d) || !x) return;
  int r = d_rank(x), lead = r - n, nd = 0;
  int64_t dims[ALLOY_MAX_RANK];
  for (int k = 0; k < r; k++) {
    alloy_dim s = d_shape(x)[k];
    bool one = k >= lead && alloy_dim_is_const(size[k - lead]) && size[k - lead].value == 1;
    if (k < lead || (one && !(alloy_dim_is_const(s) && s.value == 1))) dims[nd++] = k;
  }
  if (nd == 0) return d_out(d, 0, D(d, "aten.alias.default", V(x)));
  alloy_value *s = D(d, "aten.sum.dim_IntList", V(x), d_int_list(d, dims, nd), B(true), DT(d_dtype(x)));
  d_out(d, 0, D(d, "aten.view.default", V(s), d_dim_list(d, size, n)));
}

static void is_all_true(decomp *d) { d_out(d, 0, D(d, "aten.all.default", V(d_tensor(d, 0)))); }
static void is_any_true(decomp *d) { d_out(d, 0, D(d, "aten.any.default", V(d_tensor(d, 0)))); }

/* --- integration ------------------------------------------------------------------
 * trapezoid, trapz and cumulative_trapezoid as PyTorch's composites
 * compute them, op for op (the dtypes follow from the same promotions):
 *   widths dx = x[1:] - x[:-1] along dim, x a vector laid along dim or
 *   padded in front to y's rank;
 *   trapezoid(y, x) = sum((y[:-1] + y[1:]) * dx, dim) / 2
 *   trapezoid(y, dx) = (sum(y, dim) - (y[0] + y[-1]) * 0.5) * dx
 *   cumulative_trapezoid(y, x) = cumsum((y[:-1] + y[1:]) * dx, dim) / 2
 *   cumulative_trapezoid(y, dx) = cumsum(dx / 2 * (y[:-1] + y[1:]), dim)
 * and an empty dim integrates to zeros of y's dtype. */

static alloy_value *slice_of(decomp *d, alloy_value *v, int dim, alloy_arg start, alloy_arg end) {
  return D(d, "aten.slice.Tensor", V(v), I(dim), start, end, I(1));
}

static void trapezoid(decomp *d, bool with_x, bool cumulative) {
  alloy_value *y = d_tensor(d, 0), *x = with_x ? d_tensor(d, 1) : NULL;
  if (!y || (with_x && !x)) return;
  int dim = d_wrap_dim(d, d_int(d, 2), d_rank(y));
  if (d_failed(d)) return;
  const alloy_value *o = alloy_node_output(d_node(d), 0);
  alloy_dim n = d_shape(y)[dim];
  if (!cumulative && alloy_dim_is_const(n) && n.value == 0)
    return d_out(d, 0, D(d, "aten.full.default", d_dim_list(d, d_shape(o), d_rank(o)), I(0), DT(d_dtype(y))));
  alloy_value *pairs = D(d, "aten.add.Tensor", V(slice_of(d, y, dim, I(0), I(-1))),
                         V(slice_of(d, y, dim, I(1), NONE)));
  alloy_value *r;
  if (with_x) {
    int yr = d_rank(y), xr = d_rank(x);
    alloy_dim shape[ALLOY_MAX_RANK];
    if (xr == 1) {
      for (int k = 0; k < yr; k++) shape[k] = alloy_dim_const(1);
      shape[dim] = d_shape(x)[0];
      x = D(d, "aten.view.default", V(x), d_dim_list(d, shape, yr));
    } else if (xr < yr) {
      for (int k = 0; k < yr; k++) shape[k] = k < yr - xr ? alloy_dim_const(1) : d_shape(x)[k - (yr - xr)];
      x = D(d, "aten.view.default", V(x), d_dim_list(d, shape, yr));
    }
    alloy_value *dx = D(d, "aten.sub.Tensor", V(slice_of(d, x, dim, I(1), NONE)),
                        V(slice_of(d, x, dim, I(0), I(-1))));
    alloy_value *p = D(d, "aten.mul.Tensor", V(pairs), V(dx));
    r = cumulative ? D(d, "aten.cumsum.default", V(p), I(dim))
                   : D(d, "aten.sum.dim_IntList", V(p), LIST(I(dim)));
    r = D(d, "aten.div.Tensor", V(r), F(2.0));
  } else if (cumulative) {
    alloy_value *half = D(d, "aten.mul.Tensor", V(pairs), F(d_float(d, 1) / 2.0));
    r = D(d, "aten.cumsum.default", V(half), I(dim));
  } else {
    alloy_value *ends = D(d, "aten.add.Tensor", V(D(d, "aten.select.int", V(y), I(dim), I(0))),
                          V(D(d, "aten.select.int", V(y), I(dim), I(-1))));
    alloy_value *s = D(d, "aten.sum.dim_IntList", V(y), LIST(I(dim)));
    s = D(d, "aten.sub.Tensor", V(s), V(D(d, "aten.mul.Tensor", V(ends), F(0.5))));
    r = D(d, "aten.mul.Tensor", V(s), F(d_float(d, 1)));
  }
  d_out(d, 0, r);
}
static void trapezoid_x(decomp *d) { trapezoid(d, true, false); }
static void trapezoid_dx(decomp *d) { trapezoid(d, false, false); }
static void cumulative_trapezoid_x(decomp *d) { trapezoid(d, true, true); }
static void cumulative_trapezoid_dx(decomp *d) { trapezoid(d, false, true); }

/* --- norms ------------------------------------------------------------------------*/

/* ||x||_p over the dims dl (all of them when nd is 0) = (sum |x|^p)^(1/p);
 * p = 0 counts the nonzeros, p = +-inf is the max / min of |x|. `all` says
 * that no dims were named (x of one element is then reduced whole). The
 * result is in dtype `result`, computed in its opmath. */
static alloy_value *vector_norm_of(decomp *d, alloy_value *x, alloy_arg ord, const int64_t *dl,
                                   int nd, bool all, bool keepdim, alloy_dtype result) {
  double p = ord.kind == ALLOY_ARG_FLOAT ? ord.u.f : (double)ord.u.i.value;
  alloy_arg dims = d_int_list(d, dl, nd);
  if (p == 0) {
    alloy_value *nz = D(d, "aten.ne.Scalar", V(x), I(0));
    return D(d, "aten.sum.dim_IntList", V(nz), dims, B(keepdim), DT(result));
  }
  if (isinf(p)) {
    const char *op = p > 0 ? "aten.amax.default" : "aten.amin.default";
    return d_to(d, D(d, op, V(D(d, "aten.abs.default", V(x))), dims, B(keepdim)), result);
  }
  x = d_to(d, x, d_opmath(result));
  /* Every reduced dim known to be 1: the norm is |x| exactly. */
  int rank = d_rank(x);
  const alloy_dim *shape = d_shape(x);
  bool single = all || rank > 0;
  alloy_dim kept[ALLOY_MAX_RANK];
  int nk = 0;
  for (int k = 0; k < rank; k++) {
    bool reduced = false;
    for (int j = 0; j < nd; j++) reduced |= dl[j] == k;
    if (reduced && !(alloy_dim_is_const(shape[k]) && shape[k].value == 1)) single = false;
    if (!reduced || keepdim) kept[nk++] = reduced ? alloy_dim_const(1) : shape[k];
  }
  if (single) {
    alloy_value *a = D(d, "aten.abs.default", V(x));
    return d_to(d, D(d, "aten.view.default", V(a), d_dim_list(d, kept, nk)), result);
  }
  if (!(fmod(p, 2.0) == 0 && alloy_dtype_is_float(d_dtype(x)))) x = D(d, "aten.abs.default", V(x));
  alloy_value *s = D(d, "aten.sum.dim_IntList", V(D(d, "aten.pow.Tensor_Scalar", V(x), ord)), dims,
                     B(keepdim));
  return d_to(d, D(d, "aten.pow.Tensor_Scalar", V(s), F(1.0 / p)), result);
}

/* linalg_vector_norm(x, ord, dim, keepdim, dtype) and norm(x, p, dim,
 * keepdim), whose p = None is 2. */
static void vector_norm(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  if (refuse_complex(d, d_dtype(x))) return;
  alloy_arg ord = d_is_none(d, 1) ? I(2) : *d_arg(d, 1);
  if (ord.kind != ALLOY_ARG_FLOAT && !(ord.kind == ALLOY_ARG_INT && alloy_dim_is_const(ord.u.i))) {
    d_decline(d, "the order is not a number");
    return;
  }
  int64_t given[ALLOY_MAX_RANK], dl[ALLOY_MAX_RANK];
  bool all = d_is_none(d, 2) || d_ints(d, 2, given, ALLOY_MAX_RANK) == 0;
  int nd = d_rank(x) ? reduced_dims(d, 2, d_rank(x), dl) : 0;
  if (d_failed(d)) return;
  d_out(d, 0, vector_norm_of(d, d_to(d, x, d_out_dtype(d, 0)), ord, dl, nd, all, d_bool(d, 3),
                             d_out_dtype(d, 0)));
}

/* norm.ScalarOpt_dtype(p, dtype), norm.ScalarOpt_dim_dtype(p, dim,
 * keepdim, dtype): linalg_vector_norm, p = None being 2. */
static void norm_as_vector(decomp *d, alloy_arg p, alloy_arg dims, alloy_arg keep, alloy_arg dtype) {
  if (p.kind == ALLOY_ARG_NONE) p = I(2);
  d_out(d, 0, D(d, "aten.linalg_vector_norm.default", V(d_tensor(d, 0)), p, dims, keep, dtype));
}
static void norm_dtype(decomp *d) { norm_as_vector(d, *d_arg(d, 1), NONE, B(false), *d_arg(d, 2)); }
static void norm_dim_dtype(decomp *d) {
  norm_as_vector(d, *d_arg(d, 1), *d_arg(d, 2), *d_arg(d, 3), *d_arg(d, 4));
}
/* frobenius_norm(dim, keepdim): the 2-norm over dim, as norm.ScalarOpt_dim
 * (the same numbers as linalg_vector_norm's, PyTorch's spelling). */
static void frobenius_norm(decomp *d) {
  d_out(d, 0, D(d, "aten.norm.ScalarOpt_dim", V(d_tensor(d, 0)), I(2), *d_arg(d, 1), *d_arg(d, 2)));
}

/* renorm: each slice along dim whose p-norm passes maxnorm is scaled down
 * to it (the norm in opmath, the factor rounded to x's dtype). */
static void renorm(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  alloy_dtype t = d_dtype(x);
  int rank = d_rank(x);
  int dim = d_wrap_dim(d, d_int(d, 2), rank);
  if (d_failed(d) || refuse_complex(d, t)) return;
  int64_t others[ALLOY_MAX_RANK];
  int n = 0;
  for (int k = 0; k < rank; k++)
    if (k != dim) others[n++] = k;
  alloy_value *norm = vector_norm_of(d, x, *d_arg(d, 1), others, n, n == 0, true, d_opmath(t));
  alloy_value *scale = D(d, "aten.div.Tensor", *d_arg(d, 3), V(D(d, "aten.add.Tensor", V(norm), F(1e-7))));
  alloy_value *over = D(d, "aten.gt.Scalar", V(norm), *d_arg(d, 3));
  alloy_value *factor = d_to(d, D(d, "aten.where.self", V(over), V(scale), F(1.0)), t);
  d_out(d, 0, D(d, "aten.mul.Tensor", V(x), V(factor)));
}

const decomp_rule decomp_rules_reduce[] = {
    {"aten.clamp_min.default", clamp_min_scalar, DECOMP_TO_CORE},
    {"aten.clamp_min.Tensor", clamp_min_tensor, DECOMP_TO_CORE},
    {"aten.clamp_max.Tensor", clamp_max_tensor, DECOMP_TO_CORE},
    {"aten.rsub.Scalar", rsub, DECOMP_TO_CORE},
    {"aten.rsub.Tensor", rsub, DECOMP_TO_CORE},
    {"aten.floor_divide.default", floor_divide, DECOMP_TO_CORE},
    {"aten.addcmul.default", addcmul, DECOMP_TO_CORE},
    {"aten.addcdiv.default", addcdiv, DECOMP_TO_CORE},
    {"aten.deg2rad.default", deg2rad, DECOMP_TO_CORE},
    {"aten.rad2deg.default", rad2deg, DECOMP_TO_CORE},
    {"aten.frac.default", frac, DECOMP_TO_CORE},
    {"aten.sgn.default", sgn, DECOMP_TO_CORE},
    {"aten.heaviside.default", heaviside, DECOMP_TO_CORE},
    {"aten.isposinf.default", isposinf, DECOMP_TO_CORE},
    {"aten.isneginf.default", isneginf, DECOMP_TO_CORE},
    {"aten.nan_to_num.default", nan_to_num, DECOMP_TO_CORE},
    {"aten.lerp.Scalar", lerp_scalar, DECOMP_TO_CORE},
    {"aten.lerp.Tensor", lerp_tensor, DECOMP_TO_CORE},
    {"aten.logaddexp.default", logaddexp, DECOMP_TO_CORE},
    {"aten.logaddexp2.default", logaddexp2, DECOMP_TO_CORE},
    {"aten.logit.default", logit, DECOMP_TO_CORE},
    {"aten.xlogy.Tensor", xlogy, DECOMP_TO_CORE},
    {"aten.special_xlog1py.default", xlog1py, DECOMP_TO_CORE},
    {"aten.special_entr.default", special_entr, DECOMP_TO_CORE},
    {"aten.special_log_ndtr.default", special_log_ndtr, DECOMP_TO_CORE},
    {"aten.sinc.default", sinc, DECOMP_TO_CORE},
    {"aten.mvlgamma.default", mvlgamma, DECOMP_TO_CORE},
    {"aten.sum.default", sum_default, DECOMP_TO_CORE},
    {"aten.nansum.default", nansum, DECOMP_TO_CORE},
    {"aten.all.default", all_default, DECOMP_TO_CORE},
    {"aten.all.dim", all_dim, DECOMP_TO_CORE},
    {"aten.all.dims", all_dims, DECOMP_TO_CORE},
    {"aten.count_nonzero.default", count_nonzero, DECOMP_TO_CORE},
    {"aten.count_nonzero.dim_IntList", count_nonzero, DECOMP_TO_CORE},
    {"aten.aminmax.default", aminmax, DECOMP_TO_CORE},
    {"aten.logsumexp.default", logsumexp, DECOMP_TO_CORE},
    {"aten.cumprod.default", cumprod, DECOMP_TO_CORE},
    {"aten.logcumsumexp.default", logcumsumexp, DECOMP_TO_CORE},
    {"aten.std.correction", std_correction, DECOMP_TO_CORE},
    {"aten.var_mean.correction", var_mean, DECOMP_TO_CORE},
    {"aten.std_mean.correction", std_mean, DECOMP_TO_CORE},
    {"aten.linalg_vector_norm.default", vector_norm, DECOMP_TO_CORE},
    {"aten.norm.ScalarOpt_dim", vector_norm, DECOMP_TO_CORE},
    {"aten.renorm.default", renorm, DECOMP_TO_CORE},
    {"aten.norm.ScalarOpt_dtype", norm_dtype, DECOMP_TO_CORE},
    {"aten.norm.ScalarOpt_dim_dtype", norm_dim_dtype, DECOMP_TO_CORE},
    {"aten.frobenius_norm.dim", frobenius_norm, DECOMP_TO_CORE},
    {"aten.var.default", var_all, DECOMP_TO_CORE},
    {"aten.std.default", std_all, DECOMP_TO_CORE},
    {"aten.std.dim", std_dim, DECOMP_TO_CORE},
    {"aten.var_mean.default", var_mean_all, DECOMP_TO_CORE},
    {"aten.std_mean.default", std_mean_all, DECOMP_TO_CORE},
    {"aten.var_mean.dim", var_mean_dim, DECOMP_TO_CORE},
    {"aten.std_mean.dim", std_mean_dim, DECOMP_TO_CORE},
    {"aten.nanmean.default", nanmean, DECOMP_TO_CORE},
    {"aten.sum_to_size.default", sum_to_size, DECOMP_TO_CORE},
    {"aten._is_all_true.default", is_all_true, DECOMP_TO_CORE},
    {"aten._is_any_true.default", is_any_true, DECOMP_TO_CORE},
    {"aten.trapezoid.x", trapezoid_x, DECOMP_TO_CORE},
    {"aten.trapezoid.dx", trapezoid_dx, DECOMP_TO_CORE},
    {"aten.trapz.x", trapezoid_x, DECOMP_TO_CORE},
    {"aten.trapz.dx", trapezoid_dx, DECOMP_TO_CORE},
    {"aten.cumulative_trapezoid.x", cumulative_trapezoid_x, DECOMP_TO_CORE},
    {"aten.cumulative_trapezoid.dx", cumulative_trapezoid_dx, DECOMP_TO_CORE},
    {NULL, NULL, 0},
};
