/*
 * ir/meta_misc.c: shape functions of the ATen ops that query or assert a
 * tensor's metadata rather than compute on its data: the sym_* accessors
 * (their SymInt results carry the symbolic size, stride or element count
 * itself), _local_scalar_dense (a value known only at run time: an int is a
 * fresh unbacked symbol), and the checks _assert_tensor_metadata and
 * _linalg_check_errors, which produce nothing; Python's scalar
 * operators on SymInts that torch.export records (_operator.mul,
 * torch.sym_max, ...), whose SymInt results are symbolic too; the other
 * reads of a tensor's metadata (dim, element_size, is_complex,
 * is_same_size, ...) and of its one element as a number (Int, Float,
 * Bool, the *Implicit conversions, is_nonzero); and the dtype conversions
 * to() takes in TorchScript's forms (to.other, to.prim_*), _autocast_to_*
 * and _to_cpu; and the runtime assertions torch.export writes into graphs
 * (_assert_async, _functional_assert_async, _functional_assert_scalar,
 * _functional_sym_constrain_range, _make_dep_token).
 *
 * Alloy does not model storage offsets, and a tensor without recorded
 * strides is taken to be contiguous, as graph values are by default.
 */
#include <stdio.h>
#include <string.h>

#include "ir/meta.h"

/* The tensor's strides: recorded ones, else contiguous ones, which skip
 * empty dims as c10 does (stride[d] = stride[d+1] * max(size[d+1], 1)). */
static void strides_of(alloy_meta *m, const alloy_value *v, alloy_dim *out) {
  if (v->strides) {
    memcpy(out, v->strides, sizeof *out * (size_t)v->rank);
    return;
  }
  alloy_dim s = alloy_dim_const(1);
  for (int d = v->rank - 1; d >= 0; d--) {
    out[d] = s;
    s = alloy_dim_mul(m->st, s, alloy_dim_max(m->st, v->shape[d], alloy_dim_const(1)));
  }
}

/* sym_size.int (param 0) and sym_stride.int (param 1). */
static alloy_error *meta_sym_dim(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  int64_t dim;
  int d;
  alloy_error *e = meta_int(m, 1, &dim);
  if (e || (e = meta_wrap_dim(m, 1, dim, a->rank, &d))) return e;
  if (a->rank == 0)
    return meta_error(m, "dimension specified as %lld but tensor has no "
                         "dimensions", (long long)dim);
  if (m->param == 0) return meta_out_scalar(m, 0, ALLOY_VALUE_INT, a->shape[d]);
  alloy_dim strides[ALLOY_MAX_RANK];
  strides_of(m, a, strides);
  return meta_out_scalar(m, 0, ALLOY_VALUE_INT, strides[d]);
}

static alloy_error *meta_sym_numel(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  return meta_out_scalar(m, 0, ALLOY_VALUE_INT,
                         meta_numel(m, a->shape, a->rank));
}

static alloy_error *meta_sym_storage_offset(alloy_meta *m) {
  return meta_out_scalar(m, 0, ALLOY_VALUE_INT, alloy_dim_const(0));
}

static alloy_error *meta_sym_is_contiguous(alloy_meta *m) {
  return meta_out_scalar(m, 0, ALLOY_VALUE_BOOL, alloy_dim_const(0));
}

/* The one element of a tensor as a Python number of its dtype's kind. */
static alloy_error *meta_local_scalar_dense(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  alloy_dim numel = meta_numel(m, a->shape, a->rank);
  if (alloy_dim_eq(m->st, numel, alloy_dim_const(1)) == ALLOY_FALSE) {
    char b[64];
    alloy_dim_print(numel, b, sizeof b);
    return meta_error(m, "a Tensor with %s elements cannot be converted to "
                         "Scalar", b);
  }
  if (a->dtype == ALLOY_BOOL)
    return meta_out_scalar(m, 0, ALLOY_VALUE_BOOL, alloy_dim_const(0));
  if (alloy_dtype_is_integer(a->dtype))
    return meta_out_scalar(m, 0, ALLOY_VALUE_INT, meta_unbacked(m));
  if (alloy_dtype_is_float(a->dtype))
    return meta_out_scalar(m, 0, ALLOY_VALUE_FLOAT, alloy_dim_const(0));
  return meta_error(m, "a torch.%s scalar (complex) cannot be represented",
                    alloy_dtype_name(a->dtype));
}

/* Only the check that the factorization's info tensor is what LAPACK
 * wrappers produce can be made here: its values are data. */
static alloy_error *meta_linalg_check_errors(alloy_meta *m) {
  const alloy_value *info = meta_tensor(m, 0);
  if (info->dtype != ALLOY_I32)
    return meta_error(m, "argument 'info' must be an int32 tensor, got "
                         "torch.%s", alloy_dtype_name(info->dtype));
  return NULL;
}

/* Sizes must agree for every binding of the symbols that the ranges allow:
 * only a provable disagreement is an error, the rest is a run-time check. */
static bool may_equal(alloy_meta *m, alloy_dim a, alloy_dim b) {
  return alloy_dim_same(a, b) || alloy_dim_eq(m->st, a, b) != ALLOY_FALSE;
}

static const char *device_name(alloy_device_type t) {
  static const char *const names[] = {"cpu", "cuda", "hip", "meta"};
  return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

static alloy_error *meta_assert_tensor_metadata(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  alloy_dim want[ALLOY_MAX_RANK], have[ALLOY_MAX_RANK];
  char x[256], y[256];
  int n;
  alloy_error *e;
  if (!meta_is_none(m, 1)) {
    if ((e = meta_dims(m, 1, want, ALLOY_MAX_RANK, &n))) return e;
    bool ok = n == a->rank;
    for (int d = 0; ok && d < n; d++) ok = may_equal(m, a->shape[d], want[d]);
    if (!ok)
      return meta_error(m, "Tensor sizes mismatch! Expected: %s, Got: %s",
                        meta_shape_text(want, n, x, sizeof x),
                        meta_shape_text(a->shape, a->rank, y, sizeof y));
  }
  /* Strides are compared only when the tensor records them. */
  if (!meta_is_none(m, 2) && a->strides) {
    if ((e = meta_dims(m, 2, want, ALLOY_MAX_RANK, &n))) return e;
    strides_of(m, a, have);
    bool ok = n == a->rank;
    for (int d = 0; ok && d < n; d++) ok = may_equal(m, have[d], want[d]);
    if (!ok)
      return meta_error(m, "Tensor strides mismatch! Expected: %s, Got: %s",
                        meta_shape_text(want, n, x, sizeof x),
                        meta_shape_text(have, a->rank, y, sizeof y));
  }
  if (!meta_is_none(m, 3)) {
    alloy_dtype t = meta_dtype_or(m, 3, a->dtype);
    if (t != a->dtype)
      return meta_error(m, "Tensor dtype mismatch! Expected: torch.%s, Got: "
                           "torch.%s", alloy_dtype_name(t),
                        alloy_dtype_name(a->dtype));
  }
  /* Devices are known for graph inputs only: node outputs do not carry one. */
  int di = alloy_schema_find_arg(m->op->schema, "device");
  if (di >= 0 && m->args[di].kind == ALLOY_ARG_DEVICE && !a->producer) {
    alloy_device want_dev = m->args[di].u.device, dev = a->device;
    if (want_dev.type != dev.type ||
        (want_dev.index >= 0 && dev.index >= 0 && want_dev.index != dev.index))
      return meta_error(m, "Tensor device mismatch! Expected: %s:%d, Got: %s:%d",
                        device_name(want_dev.type), want_dev.index,
                        device_name(dev.type), dev.index);
  }
  return NULL;
}

/* ---- Python's scalar operators ---------------------------------------------
 * torch.export records arithmetic on sizes as nodes whose target is a Python
 * function: _operator.mul(sym_size_int_2, 16), torch.sym_max(a, b). A SymInt
 * result is computed with the symbol table's arithmetic, so 16*s0 stays
 * 16*s0 and (16*s0)//16 is s0 again. A SymBool or SymFloat result is a
 * value known only at run time: the IR's bool and float scalars carry no
 * value, even where the ranges prove a comparison (s0 >= 2 proves s0 > 1). A
 * SymInt the IR cannot express (t if b else f, int() of a float, a symbolic
 * exponent) is a fresh unbacked symbol, with the range the operands allow. */

/* The families' parameters; the binary family's index this table. */
enum { SYM_ADD, SYM_SUB, SYM_MUL, SYM_FLOORDIV, SYM_MOD, SYM_MIN, SYM_MAX };
enum { SYM_NEG, SYM_POS };
enum { SYM_TRUEDIV, SYM_TO_FLOAT, SYM_SQRT };
static alloy_dim (*const sym_binary_fns[])(alloy_symtab *, alloy_dim, alloy_dim) = {
    [SYM_ADD] = alloy_dim_add,           [SYM_SUB] = alloy_dim_sub,
    [SYM_MUL] = alloy_dim_mul,           [SYM_FLOORDIV] = alloy_dim_floordiv,
    [SYM_MOD] = alloy_dim_mod,           [SYM_MIN] = alloy_dim_min,
    [SYM_MAX] = alloy_dim_max,
};

/* Largest exponent expanded into a product of a symbolic base (s0**64 is 64
 * factors); a concrete base needs no cap, int64 overflow stops it first.
 * A power beyond the cap, or one the symbol table cannot hold ((s0 + s1)**40
 * has too many terms), is known at run time only. */
enum { SYM_POW_MAX_FACTORS = 64 };

/* A SymInt known only at run time: an unbacked symbol in [lo, hi], named
 * from the node's numbering as meta_unbacked names its sizes, so that
 * running the shape function again gives the same symbol. */
static alloy_dim sym_unknown(alloy_meta *m, int64_t lo, int64_t hi) {
  char name[32];
  snprintf(name, sizeof name, "u%d", m->unbacked_next++);
  alloy_dim d = alloy_dim_const(0);
  alloy_error *e = alloy_sym_new_unbacked(m->st, name, lo, hi, &d);
  if (e) {
    alloy_error_free(e); /* the name is taken with another range */
    d = alloy_sym_unbacked(m->st, lo, hi);
  }
  return d;
}

static bool provably_zero(alloy_meta *m, alloy_dim d) {
  return alloy_dim_eq(m->st, d, alloy_dim_const(0)) == ALLOY_TRUE;
}

/* add, sub, mul, floordiv, mod (Python's: floor division, a remainder with
 * the divisor's sign), sym_min, sym_max. */
static alloy_error *meta_sym_binary(alloy_meta *m) {
  alloy_dim a = meta_dim(m, 0), b = meta_dim(m, 1);
  if ((m->param == SYM_FLOORDIV || m->param == SYM_MOD) && provably_zero(m, b))
    return meta_error(m, "integer division or modulo by zero");
  /* int64 overflow (INT64_MIN // -1) is the symbol table's sticky error,
   * which meta_out_scalar reports. */
  return meta_out_scalar(m, 0, ALLOY_VALUE_INT, sym_binary_fns[m->param](m->st, a, b));
}

/* a ** b for b >= 0, by repeated squaring: a product of b factors of a. */
static alloy_error *meta_sym_pow(alloy_meta *m) {
  alloy_dim a = meta_dim(m, 0), b = meta_dim(m, 1);
  int64_t alo, ahi, blo, bhi;
  alloy_dim_range(a, &alo, &ahi);
  alloy_dim_range(b, &blo, &bhi);
  if (bhi < 0) {
    char text[128];
    alloy_dim_print(b, text, sizeof text);
    return meta_error(m, "negative exponent %s: Python's int ** gives a float, not a "
                         "SymInt", text);
  }
  bool symbolic = !alloy_dim_is_const(a);
  if (!alloy_dim_is_const(b) || (symbolic && b.value > SYM_POW_MAX_FACTORS))
    return meta_out_scalar(m, 0, ALLOY_VALUE_INT,
                           sym_unknown(m, alo >= 0 ? 0 : INT64_MIN, ALLOY_SYM_INF));
  alloy_dim r = alloy_dim_const(1), base = a;
  for (int64_t e = b.value; e > 0;) {
    if (e & 1) r = alloy_dim_mul(m->st, r, base);
    e >>= 1;
    if (e) base = alloy_dim_mul(m->st, base, base); /* never past a ** b */
  }
  /* A concrete overflow is an error (meta_out_scalar reports it); a
   * symbolic power too large to write is a value of the run. */
  if (symbolic && alloy_symtab_error(m->st)) {
    alloy_symtab_clear_error(m->st);
    r = sym_unknown(m, alo >= 0 ? 0 : INT64_MIN, ALLOY_SYM_INF);
  }
  return meta_out_scalar(m, 0, ALLOY_VALUE_INT, r);
}

/* neg and pos. */
static alloy_error *meta_sym_unary(alloy_meta *m) {
  alloy_dim a = meta_dim(m, 0);
  if (m->param == SYM_NEG) a = alloy_dim_sub(m->st, alloy_dim_const(0), a);
  return meta_out_scalar(m, 0, ALLOY_VALUE_INT, a);
}

/* Comparisons, and_, or_, sym_not: a SymBool. */
static alloy_error *meta_sym_bool(alloy_meta *m) {
  return meta_out_scalar(m, 0, ALLOY_VALUE_BOOL, alloy_dim_const(0));
}

/* sym_ite(b, t, f): t if b else f. */
static alloy_error *meta_sym_ite(alloy_meta *m) {
  alloy_dim t = meta_dim(m, 1), f = meta_dim(m, 2);
  if (m->args[0].kind == ALLOY_ARG_BOOL) /* a literal condition */
    return meta_out_scalar(m, 0, ALLOY_VALUE_INT, meta_bool(m, 0) ? t : f);
  if (alloy_dim_same(t, f)) return meta_out_scalar(m, 0, ALLOY_VALUE_INT, t);
  int64_t tlo, thi, flo, fhi;
  alloy_dim_range(t, &tlo, &thi);
  alloy_dim_range(f, &flo, &fhi);
  return meta_out_scalar(m, 0, ALLOY_VALUE_INT,
                         sym_unknown(m, tlo < flo ? tlo : flo, thi > fhi ? thi : fhi));
}

/* A SymFloat argument that is a float: a literal or a graph float value
 * (an int or a SymInt is not). */
static bool is_float_arg(const alloy_meta *m, int i) {
  const alloy_arg *a = &m->args[i];
  return a->kind == ALLOY_ARG_FLOAT ||
         (a->kind == ALLOY_ARG_VALUE && a->u.value->kind == ALLOY_VALUE_FLOAT);
}

/* sym_int and math.trunc: an int is itself; a float rounds toward zero. */
static alloy_error *meta_sym_to_int(alloy_meta *m) {
  const alloy_arg *a = &m->args[0];
  if (!is_float_arg(m, 0)) return meta_out_scalar(m, 0, ALLOY_VALUE_INT, meta_dim(m, 0));
  if (a->kind == ALLOY_ARG_VALUE) /* a float known at run time */
    return meta_out_scalar(m, 0, ALLOY_VALUE_INT, sym_unknown(m, INT64_MIN, ALLOY_SYM_INF));
  double f = a->u.f;
  if (!(f >= -0x1p63 && f < 0x1p63)) /* NaN and infinities fail too */
    return meta_error(m, "cannot convert float %g to an int64 integer", f);
  return meta_out_scalar(m, 0, ALLOY_VALUE_INT, alloy_dim_const((int64_t)f));
}

/* truediv, sym_float, _sym_sqrt: a SymFloat. A divisor that is provably
 * zero and a square root of a provably negative number fail as in Python. */
static alloy_error *meta_sym_float(alloy_meta *m) {
  int i = m->param == SYM_TRUEDIV ? 1 : 0;
  bool zero, negative;
  if (is_float_arg(m, i)) {
    bool lit = m->args[i].kind == ALLOY_ARG_FLOAT;
    zero = lit && m->args[i].u.f == 0.0;
    negative = lit && m->args[i].u.f < 0.0;
  } else {
    alloy_dim d = meta_dim(m, i);
    zero = provably_zero(m, d);
    negative = alloy_dim_lt(m->st, d, alloy_dim_const(0)) == ALLOY_TRUE;
  }
  if (m->param == SYM_TRUEDIV && zero) return meta_error(m, "division by zero");
  if (m->param == SYM_SQRT && negative)
    return meta_error(m, "math domain error (a negative square root)");
  return meta_out_scalar(m, 0, ALLOY_VALUE_FLOAT, alloy_dim_const(0));
}

/* --- more metadata ------------------------------------------------------------------*/

enum { IS_COMPLEX, IS_FLOATING_POINT, IS_SIGNED, IS_FALSE, IS_TRUE, IS_SAME_SIZE };

/* is_complex, is_floating_point, is_signed; is_conj, is_neg and
 * is_inference (false here: Alloy's tensors carry no conjugate or negative
 * bit, and graphs are not run in inference mode's sense); is_same_size:
 * a bool known when the graph is built, computed by the kernel. */
static alloy_error *meta_is(alloy_meta *m) {
  return meta_out_scalar(m, 0, ALLOY_VALUE_BOOL, alloy_dim_const(0));
}

/* dim (param 0) and element_size (param 1): ints known now. */
static alloy_error *meta_dim_of(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  int64_t v = m->param ? (int64_t)alloy_dtype_size(a->dtype) : a->rank;
  return meta_out_scalar(m, 0, ALLOY_VALUE_INT, alloy_dim_const(v));
}

/* --- a tensor's one element as a number --------------------------------------------*/

enum { AS_INT, AS_FLOAT, AS_BOOL, AS_INT_IMPLICIT, AS_FLOAT_IMPLICIT, AS_SCALAR_IMPLICIT };

/* Int.Tensor, Float.Tensor, Bool.Tensor and is_nonzero read a tensor of
 * one element; IntImplicit, FloatImplicit and ScalarImplicit a 0-dim one
 * (IntImplicit of an integer dtype). Ints are unbacked symbols. */
static alloy_error *meta_as_number(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  if (m->param >= AS_INT_IMPLICIT) {
    if (a->rank != 0) return meta_error(m, "Cannot input a tensor of dimension other than 0 as a scalar argument");
    if (m->param == AS_INT_IMPLICIT && !alloy_dtype_is_integer(a->dtype))
      return meta_error(m, "Cannot input a tensor of type %s as an integral argument",
                        alloy_dtype_name(a->dtype));
  } else {
    alloy_dim numel = meta_numel(m, a->shape, a->rank);
    if (alloy_dim_eq(m->st, numel, alloy_dim_const(1)) == ALLOY_FALSE)
      return m->param == AS_BOOL
                 ? meta_error(m, "Boolean value of Tensor with more than one value is ambiguous")
                 : meta_error(m, "a Tensor with more than one element cannot be converted to Scalar");
  }
  if (alloy_dtype_is_complex(a->dtype))
    return meta_error(m, "a torch.%s scalar (complex) cannot be represented", alloy_dtype_name(a->dtype));
  switch (m->param) {
    case AS_INT:
    case AS_INT_IMPLICIT: return meta_out_scalar(m, 0, ALLOY_VALUE_INT, meta_unbacked(m));
    case AS_FLOAT:
    case AS_FLOAT_IMPLICIT: return meta_out_scalar(m, 0, ALLOY_VALUE_FLOAT, alloy_dim_const(0));
    case AS_BOOL: return meta_out_scalar(m, 0, ALLOY_VALUE_BOOL, alloy_dim_const(0));
    default: return meta_local_scalar_dense(m);
  }
}

/* --- conversions ---------------------------------------------------------------------*/

/* PyTorch's ScalarType numbering, which to.prim_dtype's int dtype uses. */
static const struct {
  int code;
  alloy_dtype t;
} scalar_types[] = {
    {0, ALLOY_U8},  {1, ALLOY_I8},  {2, ALLOY_I16}, {3, ALLOY_I32},   {4, ALLOY_I64},    {5, ALLOY_F16},
    {6, ALLOY_F32}, {7, ALLOY_F64}, {9, ALLOY_C64}, {10, ALLOY_C128}, {11, ALLOY_BOOL}, {15, ALLOY_BF16},
};

static alloy_error *meta_scalar_type_code(alloy_meta *m, int i, alloy_dtype dflt, alloy_dtype *out) {
  *out = dflt;
  if (meta_is_none(m, i)) return NULL;
  if (m->args[i].kind == ALLOY_ARG_DTYPE) return *out = m->args[i].u.dtype, NULL;
  int64_t code;
  alloy_error *e = meta_int(m, i, &code);
  if (e) return e;
  for (size_t k = 0; k < sizeof scalar_types / sizeof scalar_types[0]; k++)
    if (scalar_types[k].code == code) return *out = scalar_types[k].t, NULL;
  return meta_error(m, "argument '%s': %lld is not a ScalarType Alloy has", meta_arg_name(m, i),
                    (long long)code);
}

enum { TO_OTHER, TO_PRIM_DTYPE, TO_PRIM_DEVICE, TO_PRIM_OTHER };

/* to.other(other): other's dtype; to.prim_dtype(dtype) and
 * to.prim_Device(device, dtype): the ScalarType numbered dtype (None:
 * self's); to.prim_other: self's. */
static alloy_error *meta_to_prim(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  alloy_dtype t = x->dtype;
  alloy_error *e = NULL;
  if (m->param == TO_OTHER) t = meta_tensor(m, 1)->dtype;
  if (m->param == TO_PRIM_DTYPE) e = meta_scalar_type_code(m, 1, x->dtype, &t);
  if (m->param == TO_PRIM_DEVICE) e = meta_scalar_type_code(m, 2, x->dtype, &t);
  return e ? e : meta_out_like(m, 0, x, t);
}

/* _autocast_to_reduced_precision(cuda_enabled, cpu_enabled, cuda_dtype,
 * cpu_dtype): a float32 tensor becomes cpu_dtype when the CPU's autocast
 * is on (graph values live on the CPU's side of that choice); param 1:
 * _autocast_to_full_precision(cuda_enabled, cpu_enabled): float16 and
 * bfloat16 become float32. Anything else stays. */
static alloy_dtype meta_autocast_dtype(alloy_dtype t, bool full, bool cpu_enabled, alloy_dtype cpu_dtype) {
  if (!cpu_enabled) return t;
  if (full) return t == ALLOY_F16 || t == ALLOY_BF16 ? ALLOY_F32 : t;
  return t == ALLOY_F32 ? cpu_dtype : t;
}

static alloy_error *meta_autocast(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  alloy_dtype cpu_dtype = m->param ? x->dtype : meta_dtype_or(m, 4, x->dtype);
  return meta_out_like(m, 0, x, meta_autocast_dtype(x->dtype, m->param, meta_bool(m, 2), cpu_dtype));
}

/* _to_cpu(tensors): each as it is. */
static alloy_error *meta_to_cpu(alloy_meta *m) {
  int n = meta_tensor_count(m, 0);
  alloy_error *e = meta_set_num_outputs(m, n);
  for (int k = 0; k < n && !e; k++) {
    const alloy_value *t = meta_tensor_at(m, 0, k);
    e = t ? meta_out_like(m, k, t, t->dtype) : meta_error(m, "argument 'tensors': item %d is None", k);
  }
  return e;
}

/* --- more reads of a tensor's metadata --------------------------------------------------*/

/* get_device (param 0): -1, the CPU's; is_pinned, is_distributed (false)
 * and is_non_overlapping_and_dense (true) are bools for the kernel to
 * write. */
static alloy_error *meta_device_of(alloy_meta *m) {
  return meta_out_scalar(m, 0, ALLOY_VALUE_INT, alloy_dim_const(-1));
}

/* len.Tensor(t): the size of dim 0. */
static alloy_error *meta_len(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  if (a->rank == 0) return meta_error(m, "len() of a 0-d tensor");
  return meta_out_scalar(m, 0, ALLOY_VALUE_INT, a->shape[0]);
}

/* size / sym_size (param 0) and stride / sym_stride (param 1): one int
 * output per dim. */
static alloy_error *meta_sizes(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  alloy_dim strides[ALLOY_MAX_RANK];
  strides_of(m, a, strides);
  alloy_error *e = meta_set_num_outputs(m, a->rank);
  for (int d = 0; d < a->rank && !e; d++)
    e = meta_out_scalar(m, d, ALLOY_VALUE_INT, m->param ? strides[d] : a->shape[d]);
  return e;
}

/* --- the runtime assertions of export's graphs -------------------------------------------*/

/* _assert_async(self, [assert_msg]): self is one element, checked nonzero
 * when the graph runs; no result. */
static alloy_error *meta_assert_async(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  alloy_dim numel = meta_numel(m, a->shape, a->rank);
  if (alloy_dim_eq(m->st, numel, alloy_dim_const(1)) == ALLOY_FALSE)
    return meta_error(m, "Boolean value of Tensor with more than one value is ambiguous");
  if (m->param < 0) return NULL;
  /* the functional forms pass on their dep_token (argument param) */
  const alloy_value *token = meta_tensor(m, m->param);
  return meta_out_like(m, 0, token, token->dtype);
}

/* _functional_assert_scalar(self, msg, dep_token) and
 * _functional_sym_constrain_range[_for_size](size, min, max, dep_token):
 * the token passed on (argument param), the check made at run time. */
static alloy_error *meta_pass_token(alloy_meta *m) {
  const alloy_value *token = meta_tensor(m, m->param);
  return meta_out_like(m, 0, token, token->dtype);
}

/* _make_dep_token(*, dtype, ...): a 0-dim tensor (float32 by default). */
static alloy_error *meta_make_dep_token(alloy_meta *m) {
  return meta_out_tensor(m, 0, meta_dtype_or(m, 0, ALLOY_F32), NULL, 0);
}

const alloy_meta_entry alloy_meta_misc[] = {
    {"aten.sym_size.int", meta_sym_dim, 0},
    {"aten.sym_stride.int", meta_sym_dim, 1},
    {"aten.sym_numel.default", meta_sym_numel, 0},
    {"aten.sym_storage_offset.default", meta_sym_storage_offset, 0},
    {"aten.sym_is_contiguous.default", meta_sym_is_contiguous, 0},
    {"aten._local_scalar_dense.default", meta_local_scalar_dense, 0},
    {"aten._linalg_check_errors.default", meta_linalg_check_errors, 0},
    {"aten._assert_tensor_metadata.default", meta_assert_tensor_metadata, 0},
    {"aten.is_complex.default", meta_is, IS_COMPLEX},
    {"aten.is_floating_point.default", meta_is, IS_FLOATING_POINT},
    {"aten.is_signed.default", meta_is, IS_SIGNED},
    {"aten.is_conj.default", meta_is, IS_FALSE},
    {"aten.is_neg.default", meta_is, IS_FALSE},
    {"aten.is_inference.default", meta_is, IS_FALSE},
    {"aten.is_same_size.default", meta_is, IS_SAME_SIZE},
    {"aten.dim.default", meta_dim_of, 0},
    {"aten.element_size.default", meta_dim_of, 1},
    {"aten.Int.Tensor", meta_as_number, AS_INT},
    {"aten.Float.Tensor", meta_as_number, AS_FLOAT},
    {"aten.Bool.Tensor", meta_as_number, AS_BOOL},
    {"aten.is_nonzero.default", meta_as_number, AS_BOOL},
    {"aten.IntImplicit.default", meta_as_number, AS_INT_IMPLICIT},
    {"aten.FloatImplicit.default", meta_as_number, AS_FLOAT_IMPLICIT},
    {"aten.ScalarImplicit.default", meta_as_number, AS_SCALAR_IMPLICIT},
    {"aten.to.other", meta_to_prim, TO_OTHER},
    {"aten.to.prim_dtype", meta_to_prim, TO_PRIM_DTYPE},
    {"aten.to.prim_Device", meta_to_prim, TO_PRIM_DEVICE},
    {"aten.to.prim_other", meta_to_prim, TO_PRIM_OTHER},
    {"aten._autocast_to_reduced_precision.default", meta_autocast, 0},
    {"aten._autocast_to_full_precision.default", meta_autocast, 1},
    {"aten._to_cpu.default", meta_to_cpu, 0},
    {"aten.get_device.default", meta_device_of, 0},
    {"aten.is_pinned.default", meta_is, IS_FALSE},
    {"aten.is_distributed.default", meta_is, IS_FALSE},
    {"aten.is_non_overlapping_and_dense.default", meta_is, IS_TRUE},
    {"aten.len.Tensor", meta_len, 0},
    {"aten.size.default", meta_sizes, 0},
    {"aten.sym_size.default", meta_sizes, 0},
    {"aten.stride.default", meta_sizes, 1},
    {"aten.sym_stride.default", meta_sizes, 1},
    {"aten._assert_async.default", meta_assert_async, -1},
    {"aten._assert_async.msg", meta_assert_async, -1},
    {"aten._functional_assert_async.msg", meta_assert_async, 2},
    {"aten._functional_assert_scalar.default", meta_pass_token, 2},
    {"aten._functional_sym_constrain_range.default", meta_pass_token, 3},
    {"aten._functional_sym_constrain_range_for_size.default", meta_pass_token, 3},
    {"aten._make_dep_token.default", meta_make_dep_token, 0},
    /* Python's scalar operators */
    {"_operator.add.default", meta_sym_binary, SYM_ADD},
    {"_operator.sub.default", meta_sym_binary, SYM_SUB},
    {"_operator.mul.default", meta_sym_binary, SYM_MUL},
    {"_operator.floordiv.default", meta_sym_binary, SYM_FLOORDIV},
    {"_operator.mod.default", meta_sym_binary, SYM_MOD},
    {"torch.sym_min.default", meta_sym_binary, SYM_MIN},
    {"torch.sym_max.default", meta_sym_binary, SYM_MAX},
    {"_operator.pow.default", meta_sym_pow, 0},
    {"_operator.neg.default", meta_sym_unary, SYM_NEG},
    {"_operator.pos.default", meta_sym_unary, SYM_POS},
    {"_operator.eq.default", meta_sym_bool, 0},
    {"_operator.ne.default", meta_sym_bool, 0},
    {"_operator.lt.default", meta_sym_bool, 0},
    {"_operator.le.default", meta_sym_bool, 0},
    {"_operator.gt.default", meta_sym_bool, 0},
    {"_operator.ge.default", meta_sym_bool, 0},
    {"_operator.and_.default", meta_sym_bool, 0},
    {"_operator.or_.default", meta_sym_bool, 0},
    {"torch.sym_not.default", meta_sym_bool, 0},
    {"torch.sym_ite.default", meta_sym_ite, 0},
    {"torch.sym_int.default", meta_sym_to_int, 0},
    {"math.trunc.default", meta_sym_to_int, 0},
    {"_operator.truediv.default", meta_sym_float, SYM_TRUEDIV},
    {"torch.sym_float.default", meta_sym_float, SYM_TO_FLOAT},
    {"torch._sym_sqrt.default", meta_sym_float, SYM_SQRT},
    {NULL, NULL, 0},
};
