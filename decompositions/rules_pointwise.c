/*
 * decompositions/rules_pointwise.c: elementwise ops from ATen to Core ATen
 * that are other ops under other names or small composites of them: the
 * aliases of ir/pointwise_aliases.h (multiply, greater, clip, __or__,
 * special_expit, the Scalar_Tensor and Tensor_Scalar overloads ...) by one
 * table-driven rule, and clamp_max, floor_divide.Scalar, square,
 * float_power, isfinite, isreal, isclose, special_ndtr and positive by a
 * rule each. (Activations are in
 * rules_activation.c; clamp_min, rsub, lerp, xlogy and their kin in
 * rules_reduce.c.)
 *
 * A Python number that an alias passes where its target takes a tensor
 * (xlogy.Scalar_Self(2, t) is xlogy.Tensor) becomes what PyTorch's
 * wrapped_scalar_tensor(s).to(result_type) makes of it: a zero-dim tensor
 * of the number's own Python type (int64, float64, bool) converted to the
 * node's result dtype, so that it rounds and wraps as the kernel's cast
 * does (258 is 2 in uint8) and promotes as the number did.
 */
#include <math.h>

#include "decompositions/rules.h"
#include "ir/pointwise_aliases.h"

/* --- numbers -------------------------------------------------------------------*/

static bool is_number(const alloy_arg *a) {
  if (a->kind == ALLOY_ARG_VALUE) return alloy_value_kind_of(a->u.value) != ALLOY_VALUE_TENSOR;
  return a->kind == ALLOY_ARG_INT || a->kind == ALLOY_ARG_FLOAT || a->kind == ALLOY_ARG_BOOL;
}

/* The dtype of a Python number (a SymFloat value is a float, any other
 * scalar value an int). */
static alloy_dtype number_dtype(const alloy_arg *a) {
  if (a->kind == ALLOY_ARG_FLOAT) return ALLOY_F64;
  if (a->kind == ALLOY_ARG_BOOL) return ALLOY_BOOL;
  if (a->kind == ALLOY_ARG_VALUE && alloy_value_kind_of(a->u.value) == ALLOY_VALUE_FLOAT) return ALLOY_F64;
  if (a->kind == ALLOY_ARG_VALUE && alloy_value_kind_of(a->u.value) == ALLOY_VALUE_BOOL) return ALLOY_BOOL;
  return ALLOY_I64;
}

/* wrapped_scalar_tensor(a).to(t) */
static alloy_value *wrapped(decomp *d, const alloy_arg *a, alloy_dtype t) {
  return d_to(d, D(d, "aten.scalar_tensor.default", *a, DT(number_dtype(a))), t);
}

static bool refuse_complex(decomp *d, const alloy_value *x) {
  if (!x || !alloy_dtype_is_complex(d_dtype(x))) return false;
  d_decline(d, "complex tensors are not computed on");
  return true;
}

/* --- aliases -------------------------------------------------------------------*/

enum { ALIAS_MAX_ARGS = 8 };

/* op(args) = target(args in target's order), numbers given for target's
 * tensors wrapped. */
static void alias(decomp *d) {
  const alloy_node *n = d_node(d);
  const char *name = alloy_op_name(alloy_node_op(n));
  const alloy_pointwise_alias *a = alloy_pointwise_alias_find(name);
  const alloy_op *t = a ? alloy_op_find(a->target) : NULL;
  int nargs = alloy_node_num_args(n);
  if (!t || nargs > ALIAS_MAX_ARGS || nargs > alloy_schema_num_args(alloy_op_schema(t)))
    return (void)d_fail(d, "no op to stand for %s", name);
  alloy_arg args[ALIAS_MAX_ARGS];
  for (int j = 0; j < nargs; j++) {
    const alloy_arg *given = d_arg(d, alloy_alias_arg(a->form, j));
    bool wants_tensor = alloy_schema_arg_at(alloy_op_schema(t), j)->type.kind == ALLOY_TYPE_TENSOR;
    args[j] = wants_tensor && is_number(given) ? V(wrapped(d, given, d_out_dtype(d, 0))) : *given;
  }
  d_out(d, 0, d_op(d, a->target, args, nargs));
}

/* --- arithmetic ------------------------------------------------------------------*/

/* clamp_max(x, hi) = clamp(x, None, hi) */
static void clamp_max(decomp *d) {
  d_out(d, 0, D(d, "aten.clamp.default", V(d_tensor(d, 0)), NONE, *d_arg(d, 1)));
}

/* floor_divide(x, s) = div(x, s, rounding_mode="floor"); the number stays a
 * Scalar, which float16 and bfloat16 kernels keep in float32. */
static void floor_divide_scalar(decomp *d) {
  d_out(d, 0, D(d, "aten.div.Scalar_mode", V(d_tensor(d, 0)), *d_arg(d, 1), S("floor")));
}

/* square(x) = pow(x, 2), as ATen has it (bool becomes int64). */
static void square(decomp *d) {
  d_out(d, 0, D(d, "aten.pow.Tensor_Scalar", V(d_tensor(d, 0)), I(2)));
}

/* float_power(a, b) = pow(a, b) with both converted to float64. */
static void float_power(decomp *d) {
  alloy_dtype t = d_out_dtype(d, 0);
  if (alloy_dtype_is_complex(t)) return d_decline(d, "complex tensors are not computed on");
  alloy_arg ab[2];
  for (int i = 0; i < 2; i++) ab[i] = is_number(d_arg(d, i)) ? *d_arg(d, i) : V(d_to(d, d_tensor(d, i), t));
  if (is_number(&ab[0])) d_out(d, 0, D(d, "aten.pow.Scalar", ab[0], ab[1]));
  else if (is_number(&ab[1])) d_out(d, 0, D(d, "aten.pow.Tensor_Scalar", ab[0], ab[1]));
  else d_out(d, 0, D(d, "aten.pow.Tensor_Tensor", ab[0], ab[1]));
}

/* special_ndtr(x) = (1 + erf(x / sqrt 2)) / 2, one op after the other in
 * the tensor's dtype as ATen writes it. */
static void special_ndtr(decomp *d) {
  alloy_value *t = D(d, "aten.mul.Tensor", V(d_tensor(d, 0)), F(M_SQRT1_2));
  alloy_value *one_plus = D(d, "aten.add.Tensor", V(D(d, "aten.erf.default", V(t))), I(1));
  d_out(d, 0, D(d, "aten.mul.Tensor", V(one_plus), F(0.5)));
}

/* --- predicates -------------------------------------------------------------------*/

/* A bool tensor of x's shape, every element true. */
static alloy_value *all_true(decomp *d, alloy_value *x) {
  return D(d, "aten.full_like.default", V(x), B(true), DT(ALLOY_BOOL));
}

/* isfinite(x) = (x == x) & (|x| != inf) on floats; integers are finite. */
static void isfinite_(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  if (refuse_complex(d, x)) return;
  if (!alloy_dtype_is_float(d_dtype(x))) return d_out(d, 0, all_true(d, x));
  alloy_value *not_nan = D(d, "aten.eq.Tensor", V(x), V(x));
  alloy_value *not_inf = D(d, "aten.ne.Scalar", V(D(d, "aten.abs.default", V(x))), F(INFINITY));
  d_out(d, 0, D(d, "aten.logical_and.default", V(not_nan), V(not_inf)));
}

/* isreal(x): every element of a real tensor is real. */
static void isreal(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  if (refuse_complex(d, x)) return;
  d_out(d, 0, all_true(d, x));
}

/* isclose(a, b, rtol, atol, equal_nan) as ATen computes it: a == b, or
 * NaN on both sides when equal_nan, or a finite |a - b| <= atol + |rtol b|;
 * integer and bool operands are compared in float32 (the default dtype):
 * b always, a only when bool (a - b promotes an integer a anyway). */
static void isclose(decomp *d) {
  alloy_value *a = d_tensor(d, 0), *b = d_tensor(d, 1);
  if (refuse_complex(d, a)) return;
  double rtol = d_float(d, 2), atol = d_float(d, 3);
  alloy_value *close = D(d, "aten.eq.Tensor", V(a), V(b));
  bool is_float = alloy_dtype_is_float(d_dtype(a));
  if (d_bool(d, 4) && is_float) {
    alloy_value *both_nan = D(d, "aten.logical_and.default", V(D(d, "aten.isnan.default", V(a))),
                              V(D(d, "aten.isnan.default", V(b))));
    close = D(d, "aten.logical_or.default", V(close), V(both_nan));
  }
  if (rtol == 0 && atol == 0) return d_out(d, 0, close);
  alloy_value *ca = d_dtype(a) == ALLOY_BOOL ? d_to(d, a, ALLOY_F32) : a;
  alloy_value *cb = is_float ? b : d_to(d, b, ALLOY_F32);
  alloy_value *allowed = D(d, "aten.add.Tensor",
                           V(D(d, "aten.abs.default", V(D(d, "aten.mul.Tensor", V(cb), F(rtol))))), F(atol));
  alloy_value *actual = D(d, "aten.abs.default", V(D(d, "aten.sub.Tensor", V(ca), V(cb))));
  alloy_value *within = D(d, "aten.logical_and.default", V(D(d, "aten.isfinite.default", V(actual))),
                          V(D(d, "aten.le.Tensor", V(actual), V(allowed))));
  d_out(d, 0, D(d, "aten.logical_or.default", V(close), V(within)));
}

/* --- views -----------------------------------------------------------------------------*/

/* positive(x) is x itself (a view). */
static void positive(decomp *d) { d_out(d, 0, D(d, "aten.alias.default", V(d_tensor(d, 0)))); }

#define ALIAS_RULE(op, target, form) {op, alias, DECOMP_TO_CORE},
const decomp_rule decomp_rules_pointwise[] = {
    ALLOY_POINTWISE_ALIASES(ALIAS_RULE)
    {"aten.clamp_max.default", clamp_max, DECOMP_TO_CORE},
    {"aten.floor_divide.Scalar", floor_divide_scalar, DECOMP_TO_CORE},
    {"aten.square.default", square, DECOMP_TO_CORE},
    {"aten.float_power.Tensor_Tensor", float_power, DECOMP_TO_CORE},
    {"aten.float_power.Tensor_Scalar", float_power, DECOMP_TO_CORE},
    {"aten.float_power.Scalar", float_power, DECOMP_TO_CORE},
    {"aten.special_ndtr.default", special_ndtr, DECOMP_TO_CORE},
    {"aten.isfinite.default", isfinite_, DECOMP_TO_CORE},
    {"aten.isreal.default", isreal, DECOMP_TO_CORE},
    {"aten.isclose.default", isclose, DECOMP_TO_CORE},
    {"aten.positive.default", positive, DECOMP_TO_CORE},
    {NULL, NULL, 0},
};
#undef ALIAS_RULE
