/*
 * reference_backend/kernels_operator.c: Python's scalar operators on the
 * SymInts, SymBools and SymFloats of an exported graph (_operator.mul,
 * torch.sym_max, math.trunc, ...).
 *
 * An operand is a literal number or a scalar value of the graph. `call`
 * kernels see only tensor inputs, so the operands are bound by name with
 * arg(NAME) as well: the helper gives a literal as it is, evaluates a
 * SymInt value from the run's symbols (or reads its producer's output when
 * it is unbacked), and reads a SymBool or SymFloat value from its
 * producer's output. A bool is an int64 0 or 1 here. The result is the
 * zero-dim output, int64, bool or float64, as scalar outputs are on the
 * plugin ABI.
 *
 * Integers are Python's: floor division, a remainder with the divisor's
 * sign; a result beyond int64 (Python would grow the int) fails the run
 * rather than wrap, as does a division by zero.
 */
#include <math.h>

#include "reference_backend/ref.h"

static int put_i(const alloy_kernel_call *c, int64_t v) {
  ref_store_i(c->outputs[0].data, c->outputs[0].dtype, 0, v);
  return 0;
}

static int put_f(const alloy_kernel_call *c, double v) {
  ref_store_f(c->outputs[0].data, c->outputs[0].dtype, 0, v);
  return 0;
}

static int overflow(const alloy_kernel_call *c) {
  return ref_fail(c, "the result does not fit in int64");
}

static int div_zero(const alloy_kernel_call *c) {
  return ref_fail(c, "integer division or modulo by zero");
}

static int k_add(const alloy_kernel_call *c, int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? overflow(c) : put_i(c, r);
}

static int k_sub(const alloy_kernel_call *c, int64_t a, int64_t b) {
  int64_t r;
  return __builtin_sub_overflow(a, b, &r) ? overflow(c) : put_i(c, r);
}

static int k_mul(const alloy_kernel_call *c, int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? overflow(c) : put_i(c, r);
}

static int k_floordiv(const alloy_kernel_call *c, int64_t a, int64_t b) {
  if (b == 0) return div_zero(c);
  if (a == INT64_MIN && b == -1) return overflow(c);
  int64_t q = a / b;
  return put_i(c, a % b != 0 && (a < 0) != (b < 0) ? q - 1 : q);
}

static int k_mod(const alloy_kernel_call *c, int64_t a, int64_t b) {
  if (b == 0) return div_zero(c);
  if (b == -1) return put_i(c, 0); /* INT64_MIN % -1 traps in C */
  int64_t r = a % b;
  return put_i(c, r != 0 && (r < 0) != (b < 0) ? r + b : r);
}

/* By repeated squaring, squaring only while a higher bit remains, so that
 * no intermediate exceeds |a ** b|. */
static int k_pow(const alloy_kernel_call *c, int64_t a, int64_t b) {
  if (b < 0)
    return ref_fail(c, "negative exponent %lld: Python's int ** gives a float, not an int",
                    (long long)b);
  int64_t r = 1;
  while (b > 0) {
    if ((b & 1) && __builtin_mul_overflow(r, a, &r)) return overflow(c);
    b >>= 1;
    if (b && __builtin_mul_overflow(a, a, &a)) return overflow(c);
  }
  return put_i(c, r);
}

static int k_neg(const alloy_kernel_call *c, int64_t a) {
  return a == INT64_MIN ? overflow(c) : put_i(c, -a);
}

static int k_pos(const alloy_kernel_call *c, int64_t a) { return put_i(c, a); }
static int k_eq(const alloy_kernel_call *c, int64_t a, int64_t b) { return put_i(c, a == b); }
static int k_ne(const alloy_kernel_call *c, int64_t a, int64_t b) { return put_i(c, a != b); }
static int k_lt(const alloy_kernel_call *c, int64_t a, int64_t b) { return put_i(c, a < b); }
static int k_le(const alloy_kernel_call *c, int64_t a, int64_t b) { return put_i(c, a <= b); }
static int k_gt(const alloy_kernel_call *c, int64_t a, int64_t b) { return put_i(c, a > b); }
static int k_ge(const alloy_kernel_call *c, int64_t a, int64_t b) { return put_i(c, a >= b); }
static int k_and(const alloy_kernel_call *c, int64_t a, int64_t b) { return put_i(c, a && b); }
static int k_or(const alloy_kernel_call *c, int64_t a, int64_t b) { return put_i(c, a || b); }
static int k_not(const alloy_kernel_call *c, int64_t a) { return put_i(c, !a); }
static int k_min(const alloy_kernel_call *c, int64_t a, int64_t b) { return put_i(c, a < b ? a : b); }
static int k_max(const alloy_kernel_call *c, int64_t a, int64_t b) { return put_i(c, a > b ? a : b); }

static int k_ite(const alloy_kernel_call *c, int64_t b, int64_t t, int64_t f) {
  return put_i(c, b ? t : f);
}

static int k_truediv(const alloy_kernel_call *c, double a, double b) {
  return b == 0.0 ? ref_fail(c, "division by zero") : put_f(c, a / b);
}

static int k_to_float(const alloy_kernel_call *c, double a) { return put_f(c, a); }

static int k_sqrt(const alloy_kernel_call *c, double a) {
  return a < 0.0 ? ref_fail(c, "math domain error (sqrt of %g)", a) : put_f(c, sqrt(a));
}

/* int(x) and math.trunc(x) of a float: toward zero; NaN, infinities and
 * values beyond int64 fail. (An int operand takes the i64 row: itself.) */
static int k_trunc(const alloy_kernel_call *c, double a) {
  if (!(a >= -0x1p63 && a < 0x1p63))
    return ref_fail(c, "cannot convert float %g to an int64 integer", a);
  return put_i(c, (int64_t)a);
}

#define INT1(op, fn, a) {op, "*", (alloy_kernel_fn)(fn), "int(call, arg(" a "):i64)"}
#define INT2(op, fn) {op, "*", (alloy_kernel_fn)(fn), "int(call, arg(a):i64, arg(b):i64)"}
#define FLOAT1(op, fn, a) {op, "*", (alloy_kernel_fn)(fn), "int(call, arg(" a "):f64)"}

/* One row per op (two for int() and trunc: an int operand is taken exactly
 * by the first, a float by the second). */
const alloy_kernel ref_kernels_operator[] = {
    INT2("_operator.add.default", k_add),
    INT2("_operator.sub.default", k_sub),
    INT2("_operator.mul.default", k_mul),
    INT2("_operator.floordiv.default", k_floordiv),
    INT2("_operator.mod.default", k_mod),
    INT2("_operator.pow.default", k_pow),
    INT1("_operator.neg.default", k_neg, "a"),
    INT1("_operator.pos.default", k_pos, "a"),
    INT2("_operator.eq.default", k_eq),
    INT2("_operator.ne.default", k_ne),
    INT2("_operator.lt.default", k_lt),
    INT2("_operator.le.default", k_le),
    INT2("_operator.gt.default", k_gt),
    INT2("_operator.ge.default", k_ge),
    INT2("_operator.and_.default", k_and),
    INT2("_operator.or_.default", k_or),
    {"_operator.truediv.default", "*", (alloy_kernel_fn)k_truediv,
     "int(call, arg(a):f64, arg(b):f64)"},
    INT1("torch.sym_not.default", k_not, "a"),
    INT2("torch.sym_max.default", k_max),
    INT2("torch.sym_min.default", k_min),
    {"torch.sym_ite.default", "*", (alloy_kernel_fn)k_ite,
     "int(call, arg(b):i64, arg(t):i64, arg(f):i64)"},
    INT1("torch.sym_int.default", k_pos, "a"),
    FLOAT1("torch.sym_int.default", k_trunc, "a"),
    FLOAT1("torch.sym_float.default", k_to_float, "a"),
    FLOAT1("torch._sym_sqrt.default", k_sqrt, "a"),
    INT1("math.trunc.default", k_pos, "x"),
    FLOAT1("math.trunc.default", k_trunc, "x"),
    {NULL, NULL, NULL, NULL},
};
