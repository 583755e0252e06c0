/*
 * ir/meta_pointwise.c: shape functions of the elementwise ops (see
 * ir/meta.h): unary, binary and ternary math, comparisons, logical and
 * bitwise ops, activations, the special_* functions, and their in-place and
 * out= variants.
 *
 * Nearly every op is one generic function, meta_elementwise, driven by the
 * table's family parameter: a promotion kind (ELEMENTWISE_TYPE_PROMOTION_KIND
 * of the op's reference in torch/_refs) plus a few flags for the checks that
 * PyTorch makes on top of it. The output shape is the broadcast of every
 * tensor operand; the dtype is torch._prims_common.elementwise_dtypes over
 * the operands that take part in promotion:
 *   - every Tensor argument, except a where() condition and an out= tensor
 *     (a Python number given for a Tensor is a wrapped number: it promotes
 *     as a scalar and broadcasts as a zero-dim tensor);
 *   - Scalar arguments only when they stand for an operand (other, exponent,
 *     self, min, max). Scalars that parametrize an op (alpha, value,
 *     min_val, threshold, negative_slope, lambd, beta, weight...) never
 *     change the result type: hardtanh(int64 tensor, -0.5, 0.5) stays int64.
 * In-place ops return `self` unchanged in dtype and shape, and fail like
 * PyTorch when the promoted result cannot be cast back to self's dtype or
 * when broadcasting would have to grow self.
 *
 * The aliases of ir/pointwise_aliases.h (multiply, greater, special_expit,
 * the Scalar_Tensor overloads...) take their type from the op they stand
 * for; a few composites (float_power, isclose, _add_relu) have small
 * functions of their own.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/meta.h"
#include "ir/pointwise_aliases.h"

/* m->param: the promotion kind in the low bits, then flags. */
enum {
  PW_KIND_MASK = 0xf,
  PW_SAME_DTYPE = 1 << 4, /* tensor operands must share one dtype (lerp, heaviside) */
  PW_INTEGRAL = 1 << 5,   /* integer and bool only (bitwise ops, gcd, lcm) */
  PW_NO_BOOL = 1 << 6,    /* bool operands refused (neg, sub, rsub) */
  PW_CLAMP = 1 << 7,      /* min and max must not both be None; Scalar bounds
                             must fit the result dtype */
  PW_COND = 1 << 8,       /* argument 0 is a bool condition (where) */
  PW_ROUNDING = 1 << 9,   /* rounding_mode None is true division, else DEFAULT */
  PW_NO_INT_DIV = 1 << 10, /* addcdiv: integer tensor1 / tensor2 refused */
  PW_REAL = 1 << 11,      /* complex results become real (angle) */
  PW_FLOAT = 1 << 12,     /* floating-point results only: the CPU kernel dispatches
                             on floating types (logaddexp) */
  PW_FLOORDIV = 1 << 13,  /* floor division (floor_divide): bool refused, as with
                             PW_ROUNDING's trunc and floor */
};

#define K(kind) ALLOY_PROMO_##kind

/* Scalar arguments that are operands rather than parameters. */
static bool scalar_promotes(const char *name) {
  static const char *const names[] = {"other", "exponent", "self", "min", "max"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcmp(name, names[i])) return true;
  return false;
}

static bool is_out_arg(const alloy_schema_arg *a) {
  return a->alias_write && a->kwarg_only;
}

/* c10::canCast: no complex to real, no float to integer, nothing to bool
 * but bool. */
static bool can_cast(alloy_dtype from, alloy_dtype to) {
  if (alloy_dtype_is_complex(from) && !alloy_dtype_is_complex(to)) return false;
  if (alloy_dtype_is_float(from) && (alloy_dtype_is_integer(to) || to == ALLOY_BOOL))
    return false;
  if (from != ALLOY_BOOL && to == ALLOY_BOOL) return false;
  return true;
}

static alloy_dtype real_of(alloy_dtype t) {
  return t == ALLOY_C64 ? ALLOY_F32 : t == ALLOY_C128 ? ALLOY_F64 : t;
}

/* The operands of an elementwise op, gathered from its schema. */
typedef struct {
  alloy_promo_operand promo[8];
  int npromo;
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank;
  int out_arg; /* schema position of an out= tensor, or -1 */
} pw_operands;

static alloy_error *gather(alloy_meta *m, pw_operands *o) {
  const alloy_schema *s = m->op->schema;
  o->npromo = 0;
  o->rank = 0;
  o->out_arg = -1;
  for (int i = 0; i < m->nargs; i++) {
    const alloy_schema_arg *sa = &s->args[i];
    if (sa->type.list || meta_is_none(m, i)) continue;
    bool tensor = sa->type.kind == ALLOY_TYPE_TENSOR;
    if (tensor && is_out_arg(sa)) {
      o->out_arg = i;
      continue;
    }
    if (!tensor && !(sa->type.kind == ALLOY_TYPE_SCALAR && scalar_promotes(sa->name)))
      continue;
    const alloy_value *v = meta_tensor(m, i);
    if (v) {
      alloy_error *e = meta_broadcast(m, o->shape, o->rank, v->shape, v->rank,
                                      o->shape, &o->rank);
      if (e) return e;
    }
    if (i == 0 && (m->param & PW_COND)) continue;
    if (o->npromo == (int)(sizeof o->promo / sizeof o->promo[0]))
      return meta_error(m, "too many operands");
    o->promo[o->npromo++] = meta_promo_operand(m, i);
  }
  return NULL;
}

static alloy_error *check_operands(alloy_meta *m, const pw_operands *o,
                                   alloy_dtype result) {
  int flags = m->param;
  if (flags & PW_COND) {
    const alloy_value *c = meta_tensor(m, 0);
    /* Eager PyTorch still converts a uint8 condition (deprecated, with a
     * warning); traced graphs go through torch._refs.where, which refuses
     * it, so an exported graph never has one. */
    if (c && c->dtype != ALLOY_BOOL)
      return meta_error(m,
                        "where expected condition to be a boolean tensor, but "
                        "got a tensor with dtype %s (argument 'condition': "
                        "expected predicate to be bool)",
                        alloy_dtype_name(c->dtype));
  }
  if (flags & PW_SAME_DTYPE) {
    const alloy_value *first = NULL;
    /* Wrapped numbers and Scalars (lerp's weight) are exempt. */
    for (int i = 0; i < m->nargs; i++) {
      const alloy_schema_arg *sa = &m->op->schema->args[i];
      if (sa->type.kind != ALLOY_TYPE_TENSOR || sa->type.list || is_out_arg(sa) ||
          m->args[i].kind != ALLOY_ARG_VALUE)
        continue;
      const alloy_value *v = meta_tensor(m, i);
      if (!v) continue;
      if (!first) first = v;
      else if (v->dtype != first->dtype)
        return meta_error(m, "expected dtype %s for `%s` but got dtype %s",
                          alloy_dtype_name(first->dtype), meta_arg_name(m, i),
                          alloy_dtype_name(v->dtype));
    }
  }
  if (flags & PW_NO_BOOL)
    for (int k = 0; k < o->npromo; k++)
      if (o->promo[k].kind != ALLOY_PROMO_ABSENT && o->promo[k].dtype == ALLOY_BOOL)
        return meta_error(m, "%s a bool tensor is not supported. If you are trying "
                             "to invert a mask, use the `~` or `logical_not()` "
                             "operator instead.",
                          strstr(m->op->name, "neg") ? "Negation, the `-` operator, on"
                                                     : "Subtraction, the `-` operator, with");
  if ((flags & PW_FLOAT) && !alloy_dtype_is_float(result) && !alloy_dtype_is_complex(result)) {
    const char *op = strstr(m->op->schema->name, "::");
    return meta_error(m, "\"%s\" not implemented for '%s': argument 'self' must be a "
                         "floating-point tensor",
                      op ? op + 2 : m->op->schema->name, alloy_dtype_name(result));
  }
  /* Rounded division dispatches on integers and floats only; true division
   * (rounding_mode None) computes bool in float and never gets here. */
  if ((flags & (PW_ROUNDING | PW_FLOORDIV)) && result == ALLOY_BOOL) {
    int i = alloy_schema_find_arg(m->op->schema, "rounding_mode");
    const char *mode = i >= 0 ? meta_str(m, i) : "floor";
    return meta_error(m, "\"div_%s_cpu\" not implemented for 'bool': arguments 'self' and "
                         "'other' must not both be bool",
                      mode ? mode : "true");
  }
  if ((flags & PW_INTEGRAL) && (alloy_dtype_is_float(result) || alloy_dtype_is_complex(result)))
    return meta_error(m, "expects integer or bool operands, got operands of result type %s",
                      alloy_dtype_name(result));
  if (flags & PW_CLAMP) {
    int lo = alloy_schema_find_arg(m->op->schema, "min");
    int hi = alloy_schema_find_arg(m->op->schema, "max");
    if (lo >= 0 && hi >= 0 && meta_is_none(m, lo) && meta_is_none(m, hi))
      return meta_error(m, "At least one of 'min' or 'max' must not be None");
    /* clamp(x, nan, nan) fills NaN without converting the bounds */
    bool nan_fill = lo >= 0 && hi >= 0 && m->args[lo].kind == ALLOY_ARG_FLOAT &&
                    m->args[hi].kind == ALLOY_ARG_FLOAT && (isnan(m->args[lo].u.f) || isnan(m->args[hi].u.f));
    for (int k = 0; k < 2 && !nan_fill; k++) {
      int i = k ? hi : lo;
      alloy_error *e = i >= 0 ? meta_check_scalar_fits(m, i, result) : NULL;
      if (e) return e;
    }
  }
  if (flags & PW_NO_INT_DIV) {
    const alloy_value *t1 = meta_tensor(m, 1), *t2 = meta_tensor(m, 2);
    if (t1 && t2 && !alloy_dtype_is_float(t1->dtype) && !alloy_dtype_is_complex(t1->dtype) &&
        !alloy_dtype_is_float(t2->dtype) && !alloy_dtype_is_complex(t2->dtype))
      return meta_error(m,
                        "Integer division with addcdiv is no longer supported: "
                        "tensor1 and tensor2 are %s and %s; divide with "
                        "torch.div(tensor1, tensor2, rounding_mode='trunc') instead",
                        alloy_dtype_name(t1->dtype), alloy_dtype_name(t2->dtype));
  }
  /* add/sub's alpha multiplies in the common dtype. */
  int alpha = alloy_schema_find_arg(m->op->schema, "alpha");
  if (alpha >= 0) {
    alloy_promo_operand a = meta_promo_operand(m, alpha);
    if (a.dtype == ALLOY_BOOL && result != ALLOY_BOOL)
      return meta_error(m, "Boolean alpha only supported for Boolean results.");
    if (a.dtype == ALLOY_F64 && !alloy_dtype_is_float(result) && !alloy_dtype_is_complex(result))
      return meta_error(m, "For integral input tensors, argument alpha must not "
                           "be a floating point number.");
  }
  return NULL;
}

static alloy_promo_kind kind_of(alloy_meta *m, alloy_error **err) {
  *err = NULL;
  if (!(m->param & PW_ROUNDING)) return (alloy_promo_kind)(m->param & PW_KIND_MASK);
  int i = alloy_schema_find_arg(m->op->schema, "rounding_mode");
  const char *mode = i >= 0 ? meta_str(m, i) : NULL;
  if (!mode) return ALLOY_PROMO_INT_TO_FLOAT;
  if (!strcmp(mode, "trunc") || !strcmp(mode, "floor")) return ALLOY_PROMO_DEFAULT;
  *err = meta_error(m,
                    "div expected rounding_mode to be one of None, 'trunc', or "
                    "'floor' but found '%s'",
                    mode);
  return ALLOY_PROMO_DEFAULT;
}

static alloy_error *meta_elementwise(alloy_meta *m) {
  pw_operands o;
  alloy_error *e = gather(m, &o);
  if (e) return e;
  alloy_promo_kind kind = kind_of(m, &e);
  if (e) return e;
  alloy_dtype compute, result;
  alloy_elementwise_dtypes(o.promo, o.npromo, kind, &compute, &result);
  if ((int)result < 0 || result >= ALLOY_DTYPE_COUNT)
    return meta_error(m, "operands have no common dtype");
  if (m->param & PW_REAL) result = real_of(result);
  if ((e = check_operands(m, &o, result))) return e;

  /* In place: the result lands in self; out=: in out. */
  const alloy_value *dst = NULL;
  if (m->op->tags & ALLOY_TAG_INPLACE) dst = meta_tensor(m, 0);
  else if (o.out_arg >= 0) dst = meta_tensor(m, o.out_arg);
  if (dst) {
    if (kind != ALLOY_PROMO_ALWAYS_BOOL && !can_cast(result, dst->dtype))
      return meta_error(m, "result type %s can't be cast to the desired output type %s",
                        alloy_dtype_name(result), alloy_dtype_name(dst->dtype));
    result = dst->dtype;
  }
  if (dst && (m->op->tags & ALLOY_TAG_INPLACE)) {
    bool same = o.rank == dst->rank;
    for (int d = 0; same && d < o.rank; d++) same = alloy_dim_same(o.shape[d], dst->shape[d]);
    if (!same) {
      char want[256], got[256];
      meta_shape_text(dst->shape, dst->rank, got, sizeof got);
      meta_shape_text(o.shape, o.rank, want, sizeof want);
      return meta_error(m, "output with shape %s doesn't match the broadcast shape %s",
                        got, want);
    }
  }
  return meta_out_tensor(m, 0, result, o.shape, o.rank);
}

static alloy_error *meta_gelu(alloy_meta *m) {
  const char *a = meta_str(m, 1);
  if (a && strcmp(a, "none") && strcmp(a, "tanh"))
    return meta_error(m, "approximate argument must be either none or tanh, got '%s'", a);
  return meta_elementwise(m);
}

/* hardtanh(self, min_val, max_val) is clamp with the bounds converted to
 * self's dtype; PyTorch refuses bool, and negative bounds on uint8 (after
 * truncation to integers: -0.5 is 0). */
static alloy_error *meta_hardtanh(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  if (x && x->dtype == ALLOY_BOOL)
    return meta_error(m, "Bool inputs not supported for hardtanh (argument 'self')");
  /* A bound truncates to a negative integer when it is -1 or less (a cast
   * would be undefined for one out of int64's range). */
  if (x && x->dtype == ALLOY_U8 && (meta_float(m, 1) <= -1.0 || meta_float(m, 2) <= -1.0))
    return meta_error(m, "cannot do hardtanh on an unsigned type with negative limits "
                         "(arguments 'min_val' and 'max_val')");
  return meta_elementwise(m);
}

/* threshold's CPU kernel dispatches on the integer and floating types:
 * bool is refused. */
static alloy_error *meta_threshold(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  if (x && x->dtype == ALLOY_BOOL)
    return meta_error(m, "\"threshold_cpu\" not implemented for 'Bool' (argument 'self')");
  return meta_elementwise(m);
}

static alloy_error *meta_polygamma(alloy_meta *m) {
  int64_t n;
  alloy_error *e = meta_int(m, 0, &n);
  if (e) return e;
  if (n < 0) return meta_error(m, "polygamma(n, x) does not support negative n, got %lld", (long long)n);
  return meta_elementwise(m);
}

static alloy_error *meta_mvlgamma(alloy_meta *m) {
  int64_t p;
  alloy_error *e = meta_int(m, 1, &p);
  if (e) return e;
  if (p < 1) return meta_error(m, "p has to be greater than or equal to 1, got %lld", (long long)p);
  return meta_elementwise(m);
}

/* frexp: the mantissa keeps the float dtype, the exponent is int32. */
static alloy_error *meta_frexp(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  if (!x || !alloy_dtype_is_float(x->dtype))
    return meta_error(m, "torch.frexp() only supports floating-point dtypes, got %s",
                      x ? alloy_dtype_name(x->dtype) : "a scalar");
  alloy_error *e = meta_out_like(m, 0, x, x->dtype);
  return e ? e : meta_out_like(m, 1, x, ALLOY_I32);
}

/* float_power computes in float64 (complex128 when an operand is complex):
 * the operands' promotion only decides the shape and whether it is
 * complex. */
static alloy_error *meta_float_power(alloy_meta *m) {
  alloy_error *e = meta_elementwise(m);
  if (e) return e;
  m->outs[0].dtype = alloy_dtype_is_complex(m->outs[0].dtype) ? ALLOY_C128 : ALLOY_F64;
  return NULL;
}

/* float_power_ writes a float64 result into self, which PyTorch requires to
 * be float64 already (complex128 for a complex result). */
static alloy_error *meta_float_power_(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  bool cplx = alloy_dtype_is_complex(x->dtype) || alloy_dtype_is_complex(meta_promo_operand(m, 1).dtype);
  alloy_dtype want = cplx ? ALLOY_C128 : ALLOY_F64;
  if (x->dtype != want)
    return meta_error(m, "the base given to float_power_ has dtype %s but the operation's result "
                         "requires dtype %s (argument 'self')",
                      alloy_dtype_name(x->dtype), alloy_dtype_name(want));
  return meta_elementwise(m);
}

/* positive(x) is x itself, a view; unary + refuses bool as - does. */
static alloy_error *meta_positive(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  if (x->dtype == ALLOY_BOOL)
    return meta_error(m, "The `+` operator, on a bool tensor is not supported (argument 'self').");
  return meta_out_like(m, 0, x, x->dtype);
}

/* isclose(self, other, rtol, atol, equal_nan): both of one dtype, the
 * tolerances not negative; the result is the broadcast shape, bool. */
static alloy_error *meta_isclose(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0), *b = meta_tensor(m, 1);
  if (a->dtype != b->dtype)
    return meta_error(m, "isclose expects self and other of one dtype: self is %s, other is %s",
                      alloy_dtype_name(a->dtype), alloy_dtype_name(b->dtype));
  for (int i = 2; i < 4; i++)
    if (meta_float(m, i) < 0)
      return meta_error(m, "%s must be greater than or equal to zero, but got %g", meta_arg_name(m, i),
                        meta_float(m, i));
  return meta_elementwise(m);
}

/* _add_relu(self, other, alpha): add's promotion; PyTorch's kernel picks its
 * bounds by self's dtype and has them for the signed integers, float32 and
 * float64 only, and computes in none but the integer and those float
 * dtypes. */
static alloy_error *meta_add_relu(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  if (x->dtype == ALLOY_BOOL || x->dtype == ALLOY_U8 || x->dtype == ALLOY_F16 ||
      x->dtype == ALLOY_BF16 || alloy_dtype_is_complex(x->dtype))
    return meta_error(m, "Unsupported datatype for add_relu: %s (argument 'self'; PyTorch's kernel "
                         "takes int8, int16, int32, int64, float32 and float64)",
                      alloy_dtype_name(x->dtype));
  alloy_error *e = meta_elementwise(m);
  if (e) return e;
  alloy_dtype t = m->outs[0].dtype;
  if (t == ALLOY_F16 || t == ALLOY_BF16)
    return meta_error(m, "\"add_clamp_cpu\" not implemented for '%s' (the dtype self and other "
                         "promote to)",
                      alloy_dtype_name(t));
  return NULL;
}

/* --- aliases (ir/pointwise_aliases.h) ---------------------------------------------
 * The op's type is its target's on the same arguments: the target's shape
 * function runs on them (a Python number where the target takes a tensor
 * is a wrapped number there, as in PyTorch), its outputs become the op's. */

#define ALIAS_ENTRY(op, target, form) {op, target, ALLOY_ALIAS_##form},
const alloy_pointwise_alias alloy_pointwise_aliases[] = {ALLOY_POINTWISE_ALIASES(ALIAS_ENTRY){NULL, NULL, 0}};
#undef ALIAS_ENTRY

const alloy_pointwise_alias *alloy_pointwise_alias_find(const char *op) {
  for (const alloy_pointwise_alias *a = alloy_pointwise_aliases; a->op; a++)
    if (!strcmp(a->op, op)) return a;
  return NULL;
}

enum { ALIAS_MAX_ARGS = 8 };

/* Op m's outputs are target's on m's arguments (mapped by form). */
static alloy_error *meta_as(alloy_meta *m, const char *target, alloy_alias_form form) {
  const alloy_op *t = alloy_op_find(target);
  if (!t || t->schema->nargs > ALIAS_MAX_ARGS || t->schema->nargs < m->nargs)
    return meta_error(m, "no op to stand for it");
  alloy_arg args[ALIAS_MAX_ARGS];
  for (int j = 0; j < t->schema->nargs; j++)
    args[j] = j < m->nargs ? m->args[alloy_alias_arg(form, j)] : t->schema->args[j].default_value;
  alloy_meta tm = {.node_name = m->node_name, .unbacked_next = m->unbacked_next};
  alloy_error *e = alloy_meta_run(t, m->st, args, &tm);
  m->unbacked_next = tm.unbacked_next;
  if (e) { /* named for the op: "aten.greater.Tensor: (as aten.gt.Tensor) ..." */
    const char *msg = alloy_error_message(e);
    size_t n = strlen(t->name);
    if (!strncmp(msg, t->name, n) && !strncmp(msg + n, ": ", 2)) msg += n + 2;
    alloy_error *named = meta_error(m, "(as %s) %s", t->name, msg);
    alloy_error_free(e);
    free(tm.outs);
    return named;
  }
  const alloy_schema *s = m->op->schema;
  if (s->nreturns == 1 && s->returns[0].type.list) e = meta_set_num_outputs(m, tm.nout);
  for (int k = 0; k < tm.nout && !e; k++)
    e = tm.outs[k].kind == ALLOY_VALUE_TENSOR
            ? meta_out_tensor(m, k, tm.outs[k].dtype, tm.outs[k].shape, tm.outs[k].rank)
            : meta_error(m, "%s gives no tensor", t->name);
  free(tm.outs);
  return e;
}

static alloy_error *meta_alias(alloy_meta *m) {
  const alloy_pointwise_alias *a = alloy_pointwise_alias_find(m->op->name);
  return a ? meta_as(m, a->target, a->form) : meta_error(m, "no op to stand for it");
}

/* where(condition) is nonzero_numpy(condition): one int64 [u] tensor of
 * coordinates per dim, u the data-dependent count. (No rule: the count of
 * a rewritten graph would be a new unknown; ref runs it itself.) */
static alloy_error *meta_where_condition(alloy_meta *m) {
  return meta_as(m, "aten.nonzero_numpy.default", ALLOY_ALIAS_SAME);
}

#define EW(name, kind) {name, meta_elementwise, K(kind)}
#define EWF(name, kind, flags) {name, meta_elementwise, K(kind) | (flags)}

const alloy_meta_entry alloy_meta_pointwise[] = {
    /* unary, result type of the input */
    EW("aten.bitwise_not.default", DEFAULT),
    EW("aten.ceil.default", DEFAULT),
    EW("aten.ceil_.default", DEFAULT),
    EW("aten.floor.default", DEFAULT),
    EW("aten.round.default", DEFAULT),
    EW("aten.round.decimals", DEFAULT),
    EW("aten.trunc.default", DEFAULT),
    EW("aten.frac.default", DEFAULT),
    EW("aten.sign.default", DEFAULT),
    EW("aten.sgn.default", DEFAULT),
    EW("aten.relu.default", DEFAULT),
    EW("aten.relu_.default", DEFAULT),
    EW("aten.nan_to_num.default", DEFAULT),
    EW("aten.fill.Scalar", DEFAULT),
    EW("aten.fill_.Scalar", DEFAULT),
    EW("aten.zero_.default", DEFAULT),
    EWF("aten.neg.default", DEFAULT, PW_NO_BOOL),
    EWF("aten.abs.default", COMPLEX_TO_FLOAT, 0),
    /* activations: their Scalar parameters never promote */
    /* PW_FLOAT: the CPU kernels of these dispatch on floating types only
     * (AT_DISPATCH_FLOATING_TYPES_AND2(kBFloat16, kHalf)) */
    {"aten.gelu.default", meta_gelu, K(DEFAULT) | PW_FLOAT},
    EW("aten.elu.default", DEFAULT),
    EW("aten.celu.default", DEFAULT),
    {"aten.hardtanh.default", meta_hardtanh, K(DEFAULT)},
    EWF("aten.leaky_relu.default", DEFAULT, PW_FLOAT),
    EWF("aten.hardshrink.default", DEFAULT, PW_FLOAT),
    EWF("aten.softshrink.default", DEFAULT, PW_FLOAT),
    EWF("aten.hardsigmoid.default", DEFAULT, PW_FLOAT),
    EWF("aten.hardswish.default", DEFAULT, PW_FLOAT),
    EW("aten.silu.default", DEFAULT),
    EW("aten.mish.default", DEFAULT),
    EW("aten.softplus.default", DEFAULT),
    {"aten.threshold.default", meta_threshold, K(DEFAULT)},
    /* unary, integers computed as float */
    EW("aten.acos.default", INT_TO_FLOAT),
    EW("aten.acosh.default", INT_TO_FLOAT),
    EW("aten.asin.default", INT_TO_FLOAT),
    EW("aten.asinh.default", INT_TO_FLOAT),
    EW("aten.atan.default", INT_TO_FLOAT),
    EW("aten.atanh.default", INT_TO_FLOAT),
    EW("aten.cos.default", INT_TO_FLOAT),
    EW("aten.cosh.default", INT_TO_FLOAT),
    EW("aten.sin.default", INT_TO_FLOAT),
    EW("aten.sinh.default", INT_TO_FLOAT),
    EW("aten.tan.default", INT_TO_FLOAT),
    EW("aten.tanh.default", INT_TO_FLOAT),
    EW("aten.erf.default", INT_TO_FLOAT),
    EW("aten.erfc.default", INT_TO_FLOAT),
    EW("aten.erfinv.default", INT_TO_FLOAT),
    EW("aten.exp.default", INT_TO_FLOAT),
    EW("aten.exp2.default", INT_TO_FLOAT),
    EW("aten.expm1.default", INT_TO_FLOAT),
    EW("aten.log.default", INT_TO_FLOAT),
    EW("aten.log10.default", INT_TO_FLOAT),
    EW("aten.log1p.default", INT_TO_FLOAT),
    EW("aten.log2.default", INT_TO_FLOAT),
    EW("aten.reciprocal.default", INT_TO_FLOAT),
    EW("aten.rsqrt.default", INT_TO_FLOAT),
    EW("aten.sqrt.default", INT_TO_FLOAT),
    EW("aten.sqrt_.default", INT_TO_FLOAT),
    EW("aten.sigmoid.default", INT_TO_FLOAT),
    EW("aten.deg2rad.default", INT_TO_FLOAT),
    EW("aten.rad2deg.default", INT_TO_FLOAT),
    EW("aten.digamma.default", INT_TO_FLOAT),
    EW("aten.lgamma.default", INT_TO_FLOAT),
    EW("aten.i0.default", INT_TO_FLOAT),
    EW("aten.sinc.default", INT_TO_FLOAT),
    EW("aten.logit.default", INT_TO_FLOAT),
    EWF("aten.angle.default", INT_TO_FLOAT, PW_REAL),
    {"aten.polygamma.default", meta_polygamma, K(INT_TO_FLOAT)},
    {"aten.mvlgamma.default", meta_mvlgamma, K(INT_TO_FLOAT)},
    EW("aten.special_airy_ai.default", INT_TO_FLOAT),
    EW("aten.special_bessel_j0.default", INT_TO_FLOAT),
    EW("aten.special_bessel_j1.default", INT_TO_FLOAT),
    EW("aten.special_bessel_y0.default", INT_TO_FLOAT),
    EW("aten.special_bessel_y1.default", INT_TO_FLOAT),
    EW("aten.special_entr.default", INT_TO_FLOAT),
    EW("aten.special_erfcx.default", INT_TO_FLOAT),
    EW("aten.special_i0e.default", INT_TO_FLOAT),
    EW("aten.special_i1.default", INT_TO_FLOAT),
    EW("aten.special_i1e.default", INT_TO_FLOAT),
    EW("aten.special_log_ndtr.default", INT_TO_FLOAT),
    EW("aten.special_modified_bessel_i0.default", INT_TO_FLOAT),
    EW("aten.special_modified_bessel_i1.default", INT_TO_FLOAT),
    EW("aten.special_modified_bessel_k0.default", INT_TO_FLOAT),
    EW("aten.special_modified_bessel_k1.default", INT_TO_FLOAT),
    EW("aten.special_ndtri.default", INT_TO_FLOAT),
    EW("aten.special_scaled_modified_bessel_k0.default", INT_TO_FLOAT),
    EW("aten.special_scaled_modified_bessel_k1.default", INT_TO_FLOAT),
    EW("aten.special_spherical_bessel_j0.default", INT_TO_FLOAT),
    /* unary predicates */
    EW("aten.isnan.default", ALWAYS_BOOL),
    EW("aten.isinf.default", ALWAYS_BOOL),
    EW("aten.isneginf.default", ALWAYS_BOOL),
    EW("aten.isposinf.default", ALWAYS_BOOL),
    EW("aten.signbit.default", ALWAYS_BOOL),
    EW("aten.logical_not.default", ALWAYS_BOOL),
    EW("aten.logical_not_.default", ALWAYS_BOOL),
    {"aten.frexp.Tensor", meta_frexp, 0},
    /* binary arithmetic */
    EW("aten.add.Tensor", DEFAULT),
    EW("aten.add.Scalar", DEFAULT),
    EW("aten.add_.Tensor", DEFAULT),
    EW("aten.add_.Scalar", DEFAULT),
    EWF("aten.sub.Tensor", DEFAULT, PW_NO_BOOL),
    EWF("aten.sub.Scalar", DEFAULT, PW_NO_BOOL),
    EWF("aten.sub_.Tensor", DEFAULT, PW_NO_BOOL),
    EWF("aten.rsub.Tensor", DEFAULT, PW_NO_BOOL),
    EWF("aten.rsub.Scalar", DEFAULT, PW_NO_BOOL),
    EW("aten.mul.Tensor", DEFAULT),
    EW("aten.mul.Scalar", DEFAULT),
    EW("aten.mul_.Tensor", DEFAULT),
    EW("aten.mul_.Scalar", DEFAULT),
    EW("aten.div.Tensor", INT_TO_FLOAT),
    EW("aten.div.Scalar", INT_TO_FLOAT),
    EW("aten.div_.Scalar", INT_TO_FLOAT),
    EWF("aten.div.Tensor_mode", DEFAULT, PW_ROUNDING),
    EWF("aten.div.Scalar_mode", DEFAULT, PW_ROUNDING),
    EWF("aten.floor_divide.default", DEFAULT, PW_FLOORDIV),
    EW("aten.fmod.Tensor", DEFAULT),
    EW("aten.fmod.Scalar", DEFAULT),
    EW("aten.remainder.Tensor", DEFAULT),
    EW("aten.remainder.Scalar", DEFAULT),
    EW("aten.pow.Tensor_Tensor", BOOL_TO_LONG),
    EW("aten.pow.Tensor_Scalar", BOOL_TO_LONG),
    EW("aten.pow.Scalar", BOOL_TO_LONG),
    EW("aten.maximum.default", DEFAULT),
    EW("aten.minimum.default", DEFAULT),
    EW("aten.fmax.default", DEFAULT),
    EW("aten.fmin.default", DEFAULT),
    EW("aten.hypot.default", DEFAULT),
    EWF("aten.logaddexp.default", DEFAULT, PW_FLOAT),
    EWF("aten.logaddexp2.default", DEFAULT, PW_FLOAT),
    EW("aten.nextafter.default", NO_OPMATH),
    EWF("aten.heaviside.default", NO_OPMATH, PW_SAME_DTYPE),
    EW("aten.atan2.default", INT_TO_FLOAT),
    EW("aten.atan2.out", INT_TO_FLOAT),
    EW("aten.copysign.Tensor", INT_TO_FLOAT),
    EW("aten.ldexp.Tensor", INT_TO_FLOAT),
    EW("aten.igamma.default", INT_TO_FLOAT),
    EW("aten.igammac.default", INT_TO_FLOAT),
    EW("aten.xlogy.Tensor", INT_TO_FLOAT),
    EW("aten.special_xlog1py.default", INT_TO_FLOAT),
    EW("aten.special_zeta.default", INT_TO_FLOAT),
    EW("aten.special_chebyshev_polynomial_t.default", INT_TO_FLOAT),
    EW("aten.special_chebyshev_polynomial_u.default", INT_TO_FLOAT),
    EW("aten.special_chebyshev_polynomial_v.default", INT_TO_FLOAT),
    EW("aten.special_chebyshev_polynomial_w.default", INT_TO_FLOAT),
    EW("aten.special_shifted_chebyshev_polynomial_t.default", INT_TO_FLOAT),
    EW("aten.special_shifted_chebyshev_polynomial_u.default", INT_TO_FLOAT),
    EW("aten.special_shifted_chebyshev_polynomial_v.default", INT_TO_FLOAT),
    EW("aten.special_shifted_chebyshev_polynomial_w.default", INT_TO_FLOAT),
    EW("aten.special_hermite_polynomial_h.default", INT_TO_FLOAT),
    EW("aten.special_hermite_polynomial_he.default", INT_TO_FLOAT),
    EW("aten.special_laguerre_polynomial_l.default", INT_TO_FLOAT),
    EW("aten.special_legendre_polynomial_p.default", INT_TO_FLOAT),
    /* bitwise and logical */
    EWF("aten.bitwise_and.Tensor", DEFAULT, PW_INTEGRAL),
    EWF("aten.bitwise_and.Scalar", DEFAULT, PW_INTEGRAL),
    EWF("aten.bitwise_and_.Tensor", DEFAULT, PW_INTEGRAL),
    EWF("aten.__and__.Tensor", DEFAULT, PW_INTEGRAL),
    EWF("aten.bitwise_or.Tensor", DEFAULT, PW_INTEGRAL),
    EWF("aten.bitwise_or.Scalar", DEFAULT, PW_INTEGRAL),
    EWF("aten.bitwise_or_.Tensor", DEFAULT, PW_INTEGRAL),
    EWF("aten.bitwise_xor.Tensor", DEFAULT, PW_INTEGRAL),
    EWF("aten.bitwise_xor.Scalar", DEFAULT, PW_INTEGRAL),
    EWF("aten.bitwise_left_shift.Tensor", DEFAULT, PW_INTEGRAL),
    EWF("aten.bitwise_right_shift.Tensor", DEFAULT, PW_INTEGRAL),
    EWF("aten.gcd.default", DEFAULT, PW_INTEGRAL),
    EWF("aten.lcm.default", DEFAULT, PW_INTEGRAL),
    EW("aten.logical_and.default", ALWAYS_BOOL),
    EW("aten.logical_and_.default", ALWAYS_BOOL),
    EW("aten.logical_or.default", ALWAYS_BOOL),
    EW("aten.logical_xor.default", ALWAYS_BOOL),
    /* comparisons */
    EW("aten.eq.Tensor", ALWAYS_BOOL),
    EW("aten.eq.Scalar", ALWAYS_BOOL),
    EW("aten.ne.Tensor", ALWAYS_BOOL),
    EW("aten.ne.Scalar", ALWAYS_BOOL),
    EW("aten.ge.Tensor", ALWAYS_BOOL),
    EW("aten.ge.Scalar", ALWAYS_BOOL),
    EW("aten.gt.Tensor", ALWAYS_BOOL),
    EW("aten.gt.Scalar", ALWAYS_BOOL),
    EW("aten.le.Tensor", ALWAYS_BOOL),
    EW("aten.le.Scalar", ALWAYS_BOOL),
    EW("aten.lt.Tensor", ALWAYS_BOOL),
    EW("aten.lt.Scalar", ALWAYS_BOOL),
    /* clamps: min and max take part in promotion */
    EWF("aten.clamp.default", DEFAULT, PW_CLAMP),
    EWF("aten.clamp.Tensor", DEFAULT, PW_CLAMP),
    EWF("aten.clamp_.default", DEFAULT, PW_CLAMP),
    EWF("aten.clamp_min.default", DEFAULT, PW_CLAMP),
    EW("aten.clamp_min.Tensor", DEFAULT),
    EWF("aten.clamp_min_.default", DEFAULT, PW_CLAMP),
    EW("aten.clamp_min_.Tensor", DEFAULT),
    EW("aten.clamp_max.Tensor", DEFAULT),
    /* ternary */
    EWF("aten.where.self", NO_OPMATH, PW_COND),
    EW("aten.addcmul.default", DEFAULT),
    EWF("aten.addcdiv.default", DEFAULT, PW_NO_INT_DIV),
    EWF("aten.lerp.Scalar", DEFAULT, PW_SAME_DTYPE),
    EWF("aten.lerp.Tensor", DEFAULT, PW_SAME_DTYPE),
    EWF("aten.lerp_.Tensor", DEFAULT, PW_SAME_DTYPE),
    /* the ops of ir/pointwise_aliases.h */
#define ALIAS_ROW(op, target, form) {op, meta_alias, 0},
    ALLOY_POINTWISE_ALIASES(ALIAS_ROW)
#undef ALIAS_ROW
    /* composites of the ops above (decompositions/rules_pointwise.c) */
    EWF("aten.clamp_max.default", DEFAULT, PW_CLAMP),
    EWF("aten.floor_divide.Scalar", DEFAULT, PW_FLOORDIV),
    EW("aten.isfinite.default", ALWAYS_BOOL),
    EW("aten.isreal.default", ALWAYS_BOOL),
    EW("aten.square.default", BOOL_TO_LONG),
    EW("aten.special_ndtr.default", INT_TO_FLOAT),
    {"aten.where.default", meta_where_condition, 0},
    {"aten.float_power.Tensor_Tensor", meta_float_power, K(DEFAULT)},
    {"aten.float_power.Tensor_Scalar", meta_float_power, K(DEFAULT)},
    {"aten.float_power.Scalar", meta_float_power, K(DEFAULT)},
    {"aten.float_power_.Tensor", meta_float_power_, K(DEFAULT)},
    {"aten.float_power_.Scalar", meta_float_power_, K(DEFAULT)},
    {"aten.isclose.default", meta_isclose, K(ALWAYS_BOOL)},
    {"aten._add_relu.Tensor", meta_add_relu, K(DEFAULT)},
    {"aten._add_relu.Scalar", meta_add_relu, K(DEFAULT)},
    {"aten.positive.default", meta_positive, 0},
    {NULL, NULL, 0},
};
