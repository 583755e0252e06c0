/*
 * decompositions/prims_pointwise.c: the elementwise Core ATen ops down to
 * prims, as torch._refs writes them: operands promoted to the computation
 * dtype (float32 for float16/bfloat16, the "opmath" of PyTorch) and
 * broadcast, the prim (or a few: sigmoid, gelu, floor division, clamp...),
 * the result converted to the result dtype once. Ops that are one prim are
 * rows of a table; the others are a function each.
 */
#include "decompositions/prims_common.h"

#include <math.h>
#include <string.h>

/* --- ops that are one prim ------------------------------------------------------*/

typedef struct pw_map {
  const char *op;
  const char *prim;
  alloy_promo_kind kind;
  int arity;
} pw_map;

static const pw_map maps[] = {
    {"aten.abs.default", "prims.abs.default", ALLOY_PROMO_COMPLEX_TO_FLOAT, 1},
    {"aten.acos.default", "prims.acos.default", ALLOY_PROMO_INT_TO_FLOAT, 1},
    {"aten.acosh.default", "prims.acosh.default", ALLOY_PROMO_INT_TO_FLOAT, 1},
    {"aten.asin.default", "prims.asin.default", ALLOY_PROMO_INT_TO_FLOAT, 1},
    {"aten.asinh.default", "prims.asinh.default", ALLOY_PROMO_INT_TO_FLOAT, 1},
    {"aten.atan.default", "prims.atan.default", ALLOY_PROMO_INT_TO_FLOAT, 1},
    {"aten.atanh.default", "prims.atanh.default", ALLOY_PROMO_INT_TO_FLOAT, 1},
    {"aten.cos.default", "prims.cos.default", ALLOY_PROMO_INT_TO_FLOAT, 1},
    {"aten.cosh.default", "prims.cosh.default", ALLOY_PROMO_INT_TO_FLOAT, 1},
    {"aten.sin.default", "prims.sin.default", ALLOY_PROMO_INT_TO_FLOAT, 1},
    {"aten.sinh.default", "prims.sinh.default", ALLOY_PROMO_INT_TO_FLOAT, 1},
    {"aten.tan.default", "prims.tan.default", ALLOY_PROMO_INT_TO_FLOAT, 1},
    {"aten.tanh.default", "prims.tanh.default", ALLOY_PROMO_INT_TO_FLOAT, 1},
    {"aten.erf.default", "prims.erf.default", ALLOY_PROMO_INT_TO_FLOAT, 1},
    {"aten.exp.default", "prims.exp.default", ALLOY_PROMO_INT_TO_FLOAT, 1},
    {"aten.expm1.default", "prims.expm1.default", ALLOY_PROMO_INT_TO_FLOAT, 1},
    {"aten.log.default", "prims.log.default", ALLOY_PROMO_INT_TO_FLOAT, 1},
    {"aten.log10.default", "prims.log10.default", ALLOY_PROMO_INT_TO_FLOAT, 1},
    {"aten.log1p.default", "prims.log1p.default", ALLOY_PROMO_INT_TO_FLOAT, 1},
    {"aten.log2.default", "prims.log2.default", ALLOY_PROMO_INT_TO_FLOAT, 1},
    {"aten.sqrt.default", "prims.sqrt.default", ALLOY_PROMO_INT_TO_FLOAT, 1},
    {"aten.rsqrt.default", "prims.rsqrt.default", ALLOY_PROMO_INT_TO_FLOAT, 1},
    {"aten.reciprocal.default", "prims.reciprocal.default", ALLOY_PROMO_INT_TO_FLOAT, 1},
    {"aten.ceil.default", "prims.ceil.default", ALLOY_PROMO_DEFAULT, 1},
    {"aten.floor.default", "prims.floor.default", ALLOY_PROMO_DEFAULT, 1},
    {"aten.trunc.default", "prims.trunc.default", ALLOY_PROMO_DEFAULT, 1},
    {"aten.round.default", "prims.round.default", ALLOY_PROMO_DEFAULT, 1},
    {"aten.neg.default", "prims.neg.default", ALLOY_PROMO_DEFAULT, 1},
    {"aten.sign.default", "prims.sign.default", ALLOY_PROMO_DEFAULT, 1},
    {"aten.bitwise_not.default", "prims.bitwise_not.default", ALLOY_PROMO_DEFAULT, 1},
    {"aten.mul.Tensor", "prims.mul.default", ALLOY_PROMO_DEFAULT, 2},
    {"aten.mul.Scalar", "prims.mul.default", ALLOY_PROMO_DEFAULT, 2},
    {"aten.div.Tensor", "prims.div.default", ALLOY_PROMO_INT_TO_FLOAT, 2},
    {"aten.div.Scalar", "prims.div.default", ALLOY_PROMO_INT_TO_FLOAT, 2},
    {"aten.atan2.default", "prims.atan2.default", ALLOY_PROMO_INT_TO_FLOAT, 2},
    {"aten.fmod.Tensor", "prims.fmod.default", ALLOY_PROMO_DEFAULT, 2},
    {"aten.fmod.Scalar", "prims.fmod.default", ALLOY_PROMO_DEFAULT, 2},
    {"aten.remainder.Tensor", "prims.remainder.default", ALLOY_PROMO_DEFAULT, 2},
    {"aten.remainder.Scalar", "prims.remainder.default", ALLOY_PROMO_DEFAULT, 2},
    {"aten.maximum.default", "prims.maximum.default", ALLOY_PROMO_DEFAULT, 2},
    {"aten.minimum.default", "prims.minimum.default", ALLOY_PROMO_DEFAULT, 2},
    {"aten.bitwise_and.Tensor", "prims.bitwise_and.default", ALLOY_PROMO_DEFAULT, 2},
    {"aten.bitwise_and.Scalar", "prims.bitwise_and.default", ALLOY_PROMO_DEFAULT, 2},
    {"aten.bitwise_or.Tensor", "prims.bitwise_or.default", ALLOY_PROMO_DEFAULT, 2},
    {"aten.bitwise_or.Scalar", "prims.bitwise_or.default", ALLOY_PROMO_DEFAULT, 2},
    {"aten.bitwise_xor.Tensor", "prims.bitwise_xor.default", ALLOY_PROMO_DEFAULT, 2},
    {"aten.bitwise_xor.Scalar", "prims.bitwise_xor.default", ALLOY_PROMO_DEFAULT, 2},
    {"aten.eq.Tensor", "prims.eq.default", ALLOY_PROMO_ALWAYS_BOOL, 2},
    {"aten.eq.Scalar", "prims.eq.default", ALLOY_PROMO_ALWAYS_BOOL, 2},
    {"aten.ne.Tensor", "prims.ne.default", ALLOY_PROMO_ALWAYS_BOOL, 2},
    {"aten.ne.Scalar", "prims.ne.default", ALLOY_PROMO_ALWAYS_BOOL, 2},
    {"aten.lt.Tensor", "prims.lt.default", ALLOY_PROMO_ALWAYS_BOOL, 2},
    {"aten.lt.Scalar", "prims.lt.default", ALLOY_PROMO_ALWAYS_BOOL, 2},
    {"aten.le.Tensor", "prims.le.default", ALLOY_PROMO_ALWAYS_BOOL, 2},
    {"aten.le.Scalar", "prims.le.default", ALLOY_PROMO_ALWAYS_BOOL, 2},
    {"aten.gt.Tensor", "prims.gt.default", ALLOY_PROMO_ALWAYS_BOOL, 2},
    {"aten.gt.Scalar", "prims.gt.default", ALLOY_PROMO_ALWAYS_BOOL, 2},
    {"aten.ge.Tensor", "prims.ge.default", ALLOY_PROMO_ALWAYS_BOOL, 2},
    {"aten.ge.Scalar", "prims.ge.default", ALLOY_PROMO_ALWAYS_BOOL, 2},
    {NULL, NULL, 0, 0},
};

/* y = prim(x...), computed in the computation dtype. */
static void one_prim(decomp *d) {
  const pw_map *m = maps;
  while (m->op && strcmp(m->op, p_op_name(d))) m++;
  if (!m->op) return (void)d_fail(d, "no prim for %s", p_op_name(d));
  static const int pos[] = {0, 1};
  p_operands o;
  bool mul_div = !strcmp(m->prim, "prims.mul.default") || !strcmp(m->prim, "prims.div.default");
  if (!(mul_div ? p_elementwise_args_opmath : p_elementwise_args)(d, pos, m->arity, m->kind, &o)) return;
  alloy_value *r = m->arity == 1 ? D(d, m->prim, o.a[0]) : D(d, m->prim, o.a[0], o.a[1]);
  d_out(d, 0, p_convert(d, r, o.result));
}

/* --- helpers of the composite rules -----------------------------------------------*/

/* Operand i as a tensor of the common shape (numbers filled in). */
static alloy_value *operand(decomp *d, const p_operands *o, int i) {
  if (o->a[i].kind == ALLOY_ARG_VALUE) return o->a[i].u.value;
  return p_full(d, o->shape, o->rank, o->a[i], o->compute);
}

static alloy_value *pr1(decomp *d, const char *prim, alloy_value *x) { return D(d, prim, V(x)); }
static alloy_value *pr2(decomp *d, const char *prim, alloy_arg a, alloy_arg b) {
  return D(d, prim, a, b);
}

/* --- arithmetic -----------------------------------------------------------------------*/

/* add/sub(a, b, alpha) = a +/- alpha * b */
static void add_sub(decomp *d) {
  static const int pos[] = {0, 1};
  p_operands o;
  if (!p_elementwise_args(d, pos, 2, ALLOY_PROMO_DEFAULT, &o)) return;
  const alloy_arg *alpha = d_arg(d, 2);
  double a = d_float(d, 2);
  alloy_arg b = o.a[1];
  if (a != 1.0) {
    if (b.kind == ALLOY_ARG_VALUE)
      b = V(pr2(d, "prims.mul.default", b, p_number_as(d, *alpha, o.compute)));
    else
      b = p_number_as(d, F(d_float(d, 1) * a), o.compute);
  }
  const char *prim = strncmp(p_op_name(d), "aten.add", 8) ? "prims.sub.default" : "prims.add.default";
  d_out(d, 0, p_convert(d, pr2(d, prim, o.a[0], b), o.result));
}

/* a // b on floats, as torch._refs' _floor_divide_float: from fmod, so
 * that the result is the floor of the exact quotient. Where a / b
 * overflows (a finite), a itself is divided, not a - fmod(a, b): the fix
 * PyTorch's vectorized kernel makes, since its fmod is NaN there (1 //
 * -1e-40 is -inf in float32, not NaN). */
static alloy_value *floor_div_float(decomp *d, alloy_value *a, alloy_value *b) {
  alloy_value *q = pr2(d, "prims.div.default", V(a), V(b));
  alloy_value *mod = pr2(d, "prims.fmod.default", V(a), V(b));
  alloy_value *huge = pr2(d, "prims.bitwise_and.default",
                          V(pr2(d, "prims.eq.default", V(pr1(d, "prims.abs.default", q)), F(INFINITY))),
                          V(pr2(d, "prims.ne.default", V(pr1(d, "prims.abs.default", a)), F(INFINITY))));
  alloy_value *lower = D(d, "prims.where.default", V(huge), V(a), V(pr2(d, "prims.sub.default", V(a), V(mod))));
  alloy_value *div = pr2(d, "prims.div.default", V(lower), V(b));
  alloy_value *signs_differ = pr2(d, "prims.bitwise_xor.default", V(pr2(d, "prims.lt.default", V(a), F(0))),
                                  V(pr2(d, "prims.lt.default", V(b), F(0))));
  alloy_value *adjust = pr2(d, "prims.bitwise_and.default",
                            V(pr2(d, "prims.ne.default", V(mod), F(0))), V(signs_differ));
  div = D(d, "prims.where.default", V(adjust), V(pr2(d, "prims.sub.default", V(div), F(1))), V(div));
  alloy_value *fl = pr1(d, "prims.floor.default", div);
  alloy_value *up = pr2(d, "prims.gt.default", V(pr2(d, "prims.sub.default", V(div), V(fl))), F(0.5));
  fl = D(d, "prims.where.default", V(up), V(pr2(d, "prims.add.default", V(fl), F(1))), V(fl));
  /* A zero quotient keeps the sign of the true one (q is finite there). */
  alloy_value *signed_zero = pr2(d, "prims.mul.default", V(q), F(0));
  fl = D(d, "prims.where.default", V(pr2(d, "prims.ne.default", V(div), F(0))), V(fl), V(signed_zero));
  return D(d, "prims.where.default", V(pr2(d, "prims.ne.default", V(b), F(0))), V(fl), V(q));
}

/* a // b on signed integers: truncation, one less where the signs differ
 * and the division is inexact. */
static alloy_value *floor_div_int(decomp *d, alloy_value *a, alloy_value *b) {
  alloy_value *q = pr2(d, "prims.div.default", V(a), V(b));
  if (d_dtype(a) == ALLOY_U8) return q;
  alloy_value *differ = pr2(d, "prims.ne.default", V(pr1(d, "prims.signbit.default", a)),
                            V(pr1(d, "prims.signbit.default", b)));
  alloy_value *inexact = pr2(d, "prims.ne.default", V(pr2(d, "prims.fmod.default", V(a), V(b))),
                             p_number_as(d, I(0), d_dtype(a)));
  alloy_value *off = pr2(d, "prims.bitwise_and.default", V(differ), V(inexact));
  return pr2(d, "prims.sub.default", V(q), V(p_convert(d, off, d_dtype(a))));
}

/* Argument i is a number or a tensor known to have one element. */
static bool one_element(decomp *d, int i) {
  const alloy_arg *a = d_arg(d, i);
  if (a->kind != ALLOY_ARG_VALUE) return true;
  for (int k = 0; k < d_rank(a->u.value); k++) {
    alloy_dim s = d_shape(a->u.value)[k];
    if (!alloy_dim_is_const(s) || s.value != 1) return false;
  }
  return true;
}

/* div(a, b, rounding_mode): true, "trunc" or "floor" division. */
static void div_mode(decomp *d) {
  const char *mode = d_str(d, 2);
  static const int pos[] = {0, 1};
  p_operands o;
  if (!p_elementwise_args_opmath(d, pos, 2, mode ? ALLOY_PROMO_DEFAULT : ALLOY_PROMO_INT_TO_FLOAT, &o))
    return;
  alloy_value *a = operand(d, &o, 0), *b = operand(d, &o, 1), *r;
  bool is_float = alloy_dtype_is_float(o.compute);
  if (!mode) r = pr2(d, "prims.div.default", V(a), V(b));
  else if (!strcmp(mode, "trunc"))
    /* PyTorch rounds a float16/bfloat16 quotient to its dtype before
     * truncating it. */
    r = is_float ? pr1(d, "prims.trunc.default",
                       p_convert(d, pr2(d, "prims.div.default", V(a), V(b)), o.result))
                 : pr2(d, "prims.div.default", V(a), V(b));
  else if (!strcmp(mode, "floor")) {
    /* PyTorch's vectorized kernel rounds each step of a float16/bfloat16
     * floor division to the dtype (as torch._refs does): 2.11 // 0.002327
     * is 905 there, 906 in float32. A one-element divisor stays in float32. */
    if (is_float && o.compute != o.result && !one_element(d, 1)) {
      a = p_convert(d, a, o.result);
      b = p_convert(d, b, o.result);
    }
    r = is_float ? floor_div_float(d, a, b) : floor_div_int(d, a, b);
  } else {
    return d_decline(d, "rounding_mode '%s'", mode);
  }
  d_out(d, 0, p_convert(d, r, o.result));
}

/* pow(a, b); b == 2 is a * a, as torch._refs has it. */
static void pow_(decomp *d) {
  static const int pos[] = {0, 1};
  p_operands o;
  if (!p_elementwise_args(d, pos, 2, ALLOY_PROMO_BOOL_TO_LONG, &o)) return;
  alloy_value *r;
  if (p_is_number(o.a[1]) && o.a[0].kind == ALLOY_ARG_VALUE && d_float(d, 1) == 2.0)
    r = pr2(d, "prims.mul.default", o.a[0], o.a[0]);
  else
    r = pr2(d, "prims.pow.default", o.a[0], o.a[1]);
  d_out(d, 0, p_convert(d, r, o.result));
}

/* --- selection and logic -------------------------------------------------------------*/

static void common_shape(decomp *d, alloy_value *const *v, int n, alloy_dim *shape, int *rank) {
  alloy_arg in[P_MAX_OPERANDS];
  for (int i = 0; i < n; i++) in[i] = V(v[i]);
  p_operands o;
  if (!p_elementwise(d, in, n, ALLOY_PROMO_NO_OPMATH, &o)) return;
  *rank = o.rank;
  memcpy(shape, o.shape, sizeof *shape * (size_t)o.rank);
}

/* where(c, a, b): a and b promoted (no opmath), all three broadcast. */
static void where_(decomp *d) {
  static const int pos[] = {1, 2};
  p_operands o;
  if (!p_elementwise_args(d, pos, 2, ALLOY_PROMO_NO_OPMATH, &o)) return;
  alloy_value *c = d_tensor(d, 0), *ab[2] = {operand(d, &o, 0), operand(d, &o, 1)};
  alloy_value *all[3] = {c, ab[0], ab[1]};
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank = 0;
  common_shape(d, all, 3, shape, &rank);
  for (int i = 0; i < 3; i++) all[i] = p_broadcast(d, all[i], shape, rank);
  d_out(d, 0, p_convert(d, D(d, "prims.where.default", V(all[0]), V(all[1]), V(all[2])), o.result));
}

/* x as bool: x != 0. */
static alloy_value *truth(decomp *d, alloy_value *x) {
  if (d_dtype(x) == ALLOY_BOOL) return x;
  return pr2(d, "prims.ne.default", V(x), p_number_as(d, I(0), d_dtype(x)));
}

/* logical_and/or/xor(a, b) = bitwise op of (a != 0) and (b != 0). */
static void logical(decomp *d) {
  const char *op = p_op_name(d);
  const char *prim = strstr(op, "_and") ? "prims.bitwise_and.default"
                     : strstr(op, "_or") ? "prims.bitwise_or.default"
                                         : "prims.bitwise_xor.default";
  alloy_value *v[2] = {truth(d, d_tensor(d, 0)), truth(d, d_tensor(d, 1))};
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank = 0;
  common_shape(d, v, 2, shape, &rank);
  d_out(d, 0, pr2(d, prim, V(p_broadcast(d, v[0], shape, rank)), V(p_broadcast(d, v[1], shape, rank))));
}

/* logical_not(x) = x == 0 */
static void logical_not(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  d_out(d, 0, pr2(d, "prims.eq.default", V(x), p_number_as(d, I(0), d_dtype(x))));
}

static alloy_value *all_false(decomp *d, const alloy_value *like) {
  return p_full(d, d_shape(like), d_rank(like), B(false), ALLOY_BOOL);
}

/* isnan(x) = x != x */
static void isnan_(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  d_out(d, 0, alloy_dtype_is_float(d_dtype(x)) ? pr2(d, "prims.ne.default", V(x), V(x)) : all_false(d, x));
}

/* isinf(x) = |x| == inf */
static void isinf_(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  d_out(d, 0, alloy_dtype_is_float(d_dtype(x))
                  ? pr2(d, "prims.eq.default", V(pr1(d, "prims.abs.default", x)), F(INFINITY))
                  : all_false(d, x));
}

/* Bounds a from below (lower) or above by bound, NaN in a propagating. */
static alloy_value *bound(decomp *d, alloy_value *a, alloy_arg lim, bool lower, alloy_dtype t) {
  alloy_value *keep = pr2(d, lower ? "prims.ge.default" : "prims.le.default", V(a), lim);
  if (alloy_dtype_is_float(t))
    keep = pr2(d, "prims.bitwise_or.default", V(keep), V(pr2(d, "prims.ne.default", V(a), V(a))));
  return D(d, "prims.where.default", V(keep), V(a), lim);
}

/* An int bound as the kernel's Scalar::to<T> converts it to integer
 * dtype t: wrapped, so -1 is 255 on uint8 (torch._refs.clamp compares in a
 * wider type instead and disagrees with the kernel). */
static alloy_arg int_bound(alloy_arg a, alloy_dtype t) {
  if (a.kind != ALLOY_ARG_INT || !alloy_dim_is_const(a.u.i)) return a;
  int64_t v = a.u.i.value;
  switch (t) {
    case ALLOY_U8: return I((uint8_t)v);
    case ALLOY_I8: return I((int8_t)(uint8_t)v);
    case ALLOY_I16: return I((int16_t)(uint16_t)v);
    case ALLOY_I32: return I((int32_t)(uint32_t)v);
    default: return a;
  }
}

/* clamp(a, min, max), the bounds promoted with a (torch._refs.clamp). */
static void clamp_(decomp *d) {
  static const int pos[] = {0, 1, 2};
  p_operands o;
  if (!p_elementwise_args(d, pos, 3, ALLOY_PROMO_DEFAULT, &o)) return;
  for (int k = 1; k < 3; k++) o.a[k] = int_bound(o.a[k], o.compute);
  alloy_value *a = o.a[0].u.value;
  if (o.a[1].kind != ALLOY_ARG_NONE) a = bound(d, a, o.a[1], true, o.compute);
  if (o.a[2].kind != ALLOY_ARG_NONE) a = bound(d, a, o.a[2], false, o.compute);
  d_out(d, 0, p_convert(d, a, o.result));
}

/* hardtanh(a, lo, hi) = clamp(a, lo, hi) in a's own dtype. */
static void hardtanh(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  alloy_dtype t = alloy_opmath_dtype(d_dtype(x));
  alloy_value *a = p_convert(d, x, t);
  a = bound(d, a, p_number_as(d, *d_arg(d, 1), t), true, t);
  a = bound(d, a, p_number_as(d, *d_arg(d, 2), t), false, t);
  d_out(d, 0, p_convert(d, a, d_dtype(x)));
}

/* --- activations ---------------------------------------------------------------------*/

/* The one tensor operand in its computation dtype. */
static alloy_value *unary_in(decomp *d, alloy_promo_kind kind, p_operands *o) {
  static const int pos[] = {0};
  if (!p_elementwise_args(d, pos, 1, kind, o)) return NULL;
  return o->a[0].u.value;
}

/* relu(x) = where(x <= 0, 0, x) */
static void relu(decomp *d) {
  p_operands o;
  alloy_value *x = unary_in(d, ALLOY_PROMO_DEFAULT, &o);
  alloy_value *r = D(d, "prims.where.default", V(pr2(d, "prims.le.default", V(x), p_number_as(d, I(0), o.compute))),
                     p_number_as(d, I(0), o.compute), V(x));
  d_out(d, 0, p_convert(d, r, o.result));
}

/* sigmoid(x) = 1 / (1 + exp(-x)) */
static void sigmoid(decomp *d) {
  p_operands o;
  alloy_value *x = unary_in(d, ALLOY_PROMO_INT_TO_FLOAT, &o);
  alloy_value *e = pr1(d, "prims.exp.default", pr1(d, "prims.neg.default", x));
  alloy_value *r = pr2(d, "prims.div.default", F(1), V(pr2(d, "prims.add.default", F(1), V(e))));
  d_out(d, 0, p_convert(d, r, o.result));
}

/* gelu(x) = x/2 (1 + erf(x / sqrt 2)), or with approximate="tanh"
 * x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
static void gelu(decomp *d) {
  p_operands o;
  alloy_value *x = unary_in(d, ALLOY_PROMO_DEFAULT, &o);
  const char *approx = d_str(d, 1);
  alloy_value *inner;
  if (approx && !strcmp(approx, "tanh")) {
    alloy_value *cube = pr2(d, "prims.mul.default", V(pr2(d, "prims.mul.default", V(x), V(x))), V(x));
    alloy_value *s = pr2(d, "prims.add.default", V(x), V(pr2(d, "prims.mul.default", V(cube), F(0.044715))));
    inner = pr1(d, "prims.tanh.default", pr2(d, "prims.mul.default", V(s), F(sqrt(2.0 / M_PI))));
  } else if (!approx || !strcmp(approx, "none")) {
    inner = pr1(d, "prims.erf.default", pr2(d, "prims.mul.default", V(x), F(M_SQRT1_2)));
  } else {
    return d_decline(d, "approximate='%s'", approx);
  }
  alloy_value *half = pr2(d, "prims.mul.default", V(x), F(0.5));
  alloy_value *r = pr2(d, "prims.mul.default", V(half), V(pr2(d, "prims.add.default", F(1), V(inner))));
  d_out(d, 0, p_convert(d, r, o.result));
}

/* leaky_relu(x, s) = where(x > 0, x, s x) */
static void leaky_relu(decomp *d) {
  p_operands o;
  alloy_value *x = unary_in(d, ALLOY_PROMO_DEFAULT, &o);
  alloy_value *neg = pr2(d, "prims.mul.default", V(x), p_number_as(d, *d_arg(d, 1), o.compute));
  alloy_value *r = D(d, "prims.where.default", V(pr2(d, "prims.gt.default", V(x), p_number_as(d, I(0), o.compute))),
                     V(x), V(neg));
  d_out(d, 0, p_convert(d, r, o.result));
}

/* elu(x, alpha, scale, input_scale) =
 *   where(x > 0, scale x, alpha scale (exp(input_scale x) - 1)) */
static void elu(decomp *d) {
  p_operands o;
  alloy_value *x = unary_in(d, ALLOY_PROMO_DEFAULT, &o);
  double alpha = d_float(d, 1), scale = d_float(d, 2), input_scale = d_float(d, 3);
  alloy_value *neg = pr1(d, "prims.expm1.default", pr2(d, "prims.mul.default", V(x), F(input_scale)));
  neg = pr2(d, "prims.mul.default", V(neg), F(alpha * scale));
  alloy_value *pos = pr2(d, "prims.mul.default", V(x), F(scale));
  alloy_value *r = D(d, "prims.where.default", V(pr2(d, "prims.gt.default", V(x), F(0))), V(pos), V(neg));
  d_out(d, 0, p_convert(d, r, o.result));
}

/* --- copies -----------------------------------------------------------------------------*/

static void clone(decomp *d) { d_out(d, 0, D(d, "prims.clone.default", V(d_tensor(d, 0)))); }

static void alias(decomp *d) { d_out(d, 0, D(d, "prims.view_of.default", V(d_tensor(d, 0)))); }

/* _to_copy: a copy in another dtype (layout, device and memory format do
 * not change a value). */
static void to_copy(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  alloy_dtype t = d_dtype_or(d, 1, d_dtype(x));
  d_out(d, 0, D(d, "prims.convert_element_type.default", V(x), DT(t)));
}

/* copy(self, src): src in self's dtype and shape. */
static void copy(decomp *d) {
  const alloy_value *self = d_tensor(d, 0);
  alloy_value *src = D(d, "prims.convert_element_type.default", V(d_tensor(d, 1)), DT(d_dtype(self)));
  d_out(d, 0, p_broadcast(d, src, d_shape(self), d_rank(self)));
}

/* fill(self, v): self's shape and dtype, every element v. */
static void fill(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  d_out(d, 0, D(d, "prims.fill.default", V(x), p_number_as(d, *d_arg(d, 1), d_dtype(x))));
}

const decomp_rule decomp_prims_pointwise[] = {
    {"aten.abs.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.acos.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.acosh.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.asin.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.asinh.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.atan.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.atanh.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.cos.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.cosh.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.sin.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.sinh.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.tan.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.tanh.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.erf.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.exp.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.expm1.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.log.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.log10.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.log1p.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.log2.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.sqrt.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.rsqrt.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.reciprocal.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.ceil.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.floor.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.trunc.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.round.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.neg.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.sign.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.bitwise_not.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.mul.Tensor", one_prim, DECOMP_TO_PRIMS},
    {"aten.mul.Scalar", one_prim, DECOMP_TO_PRIMS},
    {"aten.div.Tensor", one_prim, DECOMP_TO_PRIMS},
    {"aten.div.Scalar", one_prim, DECOMP_TO_PRIMS},
    {"aten.atan2.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.fmod.Tensor", one_prim, DECOMP_TO_PRIMS},
    {"aten.fmod.Scalar", one_prim, DECOMP_TO_PRIMS},
    {"aten.remainder.Tensor", one_prim, DECOMP_TO_PRIMS},
    {"aten.remainder.Scalar", one_prim, DECOMP_TO_PRIMS},
    {"aten.maximum.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.minimum.default", one_prim, DECOMP_TO_PRIMS},
    {"aten.bitwise_and.Tensor", one_prim, DECOMP_TO_PRIMS},
    {"aten.bitwise_and.Scalar", one_prim, DECOMP_TO_PRIMS},
    {"aten.bitwise_or.Tensor", one_prim, DECOMP_TO_PRIMS},
    {"aten.bitwise_or.Scalar", one_prim, DECOMP_TO_PRIMS},
    {"aten.bitwise_xor.Tensor", one_prim, DECOMP_TO_PRIMS},
    {"aten.bitwise_xor.Scalar", one_prim, DECOMP_TO_PRIMS},
    {"aten.eq.Tensor", one_prim, DECOMP_TO_PRIMS},
    {"aten.eq.Scalar", one_prim, DECOMP_TO_PRIMS},
    {"aten.ne.Tensor", one_prim, DECOMP_TO_PRIMS},
    {"aten.ne.Scalar", one_prim, DECOMP_TO_PRIMS},
    {"aten.lt.Tensor", one_prim, DECOMP_TO_PRIMS},
    {"aten.lt.Scalar", one_prim, DECOMP_TO_PRIMS},
    {"aten.le.Tensor", one_prim, DECOMP_TO_PRIMS},
    {"aten.le.Scalar", one_prim, DECOMP_TO_PRIMS},
    {"aten.gt.Tensor", one_prim, DECOMP_TO_PRIMS},
    {"aten.gt.Scalar", one_prim, DECOMP_TO_PRIMS},
    {"aten.ge.Tensor", one_prim, DECOMP_TO_PRIMS},
    {"aten.ge.Scalar", one_prim, DECOMP_TO_PRIMS},
    {"aten.add.Tensor", add_sub, DECOMP_TO_PRIMS},
    {"aten.add.Scalar", add_sub, DECOMP_TO_PRIMS},
    {"aten.sub.Tensor", add_sub, DECOMP_TO_PRIMS},
    {"aten.sub.Scalar", add_sub, DECOMP_TO_PRIMS},
    {"aten.div.Tensor_mode", div_mode, DECOMP_TO_PRIMS},
    {"aten.div.Scalar_mode", div_mode, DECOMP_TO_PRIMS},
    {"aten.pow.Tensor_Tensor", pow_, DECOMP_TO_PRIMS},
    {"aten.pow.Tensor_Scalar", pow_, DECOMP_TO_PRIMS},
    {"aten.pow.Scalar", pow_, DECOMP_TO_PRIMS},
    {"aten.where.self", where_, DECOMP_TO_PRIMS},
    {"aten.logical_and.default", logical, DECOMP_TO_PRIMS},
    {"aten.logical_or.default", logical, DECOMP_TO_PRIMS},
    {"aten.logical_xor.default", logical, DECOMP_TO_PRIMS},
    {"aten.logical_not.default", logical_not, DECOMP_TO_PRIMS},
    {"aten.isnan.default", isnan_, DECOMP_TO_PRIMS},
    {"aten.isinf.default", isinf_, DECOMP_TO_PRIMS},
    {"aten.clamp.default", clamp_, DECOMP_TO_PRIMS},
    {"aten.clamp.Tensor", clamp_, DECOMP_TO_PRIMS},
    {"aten.hardtanh.default", hardtanh, DECOMP_TO_PRIMS},
    {"aten.relu.default", relu, DECOMP_TO_PRIMS},
    {"aten.sigmoid.default", sigmoid, DECOMP_TO_PRIMS},
    {"aten.gelu.default", gelu, DECOMP_TO_PRIMS},
    {"aten.leaky_relu.default", leaky_relu, DECOMP_TO_PRIMS},
    {"aten.elu.default", elu, DECOMP_TO_PRIMS},
    {"aten.clone.default", clone, DECOMP_TO_PRIMS},
    {"aten.alias.default", alias, DECOMP_TO_PRIMS},
    {"aten._to_copy.default", to_copy, DECOMP_TO_PRIMS},
    {"aten.copy.default", copy, DECOMP_TO_PRIMS},
    {"aten.fill.Scalar", fill, DECOMP_TO_PRIMS},
    {NULL, NULL, 0},
};
