/*
 * ir/meta_factory.c: shape functions of the factory ops (see ir/meta.h):
 * tensors made from a size (full, zeros, ones, empty, rand, randn), from
 * another tensor (*_like, new_*), from a range (arange, linspace, logspace),
 * eye, scalar_tensor, randperm, and dropout (random like rand: the input's
 * type, plus native_dropout's bool mask); and the composites of them:
 * range (an inclusive arange), tensor / as_tensor of a number, fill with a
 * 0-dim tensor, empty_permuted, _dim_arange and _shape_as_tensor.
 *
 * Dtypes follow PyTorch: an explicit dtype wins; otherwise float32 (the
 * default dtype), except that *_like and new_* keep their input's dtype,
 * full infers it from its fill value (bool, int64 or float32), arange from
 * its bounds (int64 when all are integers) and randperm is int64. Sizes may
 * be symbolic; a range whose bounds are runtime floats has a data-dependent
 * length (an unbacked symbol).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/checked.h"
#include "ir/meta.h"

static alloy_dtype dtype_arg(const alloy_meta *m, alloy_dtype dflt) {
  int i = alloy_schema_find_arg(m->op->schema, "dtype");
  return i >= 0 ? meta_dtype_or(m, i, dflt) : dflt;
}

/* A size must not be provably negative (symbolic sizes get the benefit of
 * the doubt, as PyTorch's guards would). */
static alloy_error *check_size(alloy_meta *m, int i, const alloy_dim *shape, int rank) {
  for (int d = 0; d < rank; d++)
    if (alloy_dim_lt(m->st, shape[d], alloy_dim_const(0)) == ALLOY_TRUE) {
      char buf[64];
      alloy_dim_print(shape[d], buf, sizeof buf);
      return meta_error(m, "argument '%s': trying to create tensor with negative dimension %s",
                        meta_arg_name(m, i), buf);
    }
  return NULL;
}

/* The dtype PyTorch infers for a Python number. */
static alloy_dtype scalar_dtype(const alloy_meta *m, int i) {
  alloy_promo_operand o = meta_promo_operand(m, i);
  return o.dtype == ALLOY_F64 ? ALLOY_F32 : o.dtype;
}

/* zeros, ones, empty, rand, randn, full: the size is argument 0. m->param:
 * the position of full's fill value, whose type gives the default dtype, or
 * -1. */
static alloy_error *meta_sized(alloy_meta *m) {
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank;
  alloy_error *e = meta_dims(m, 0, shape, ALLOY_MAX_RANK, &rank);
  if (!e) e = check_size(m, 0, shape, rank);
  if (e) return e;
  alloy_dtype dflt = m->param >= 0 ? scalar_dtype(m, m->param) : ALLOY_F32;
  return meta_out_tensor(m, 0, dtype_arg(m, dflt), shape, rank);
}

/* randn: normal samples exist only in floating-point dtypes (PyTorch's
 * normal_ kernel dispatches on floating types, so randn(..., dtype=int64)
 * fails, even for an empty size). */
static alloy_error *meta_randn(alloy_meta *m) {
  alloy_dtype t = dtype_arg(m, ALLOY_F32);
  if (!alloy_dtype_is_float(t) && !alloy_dtype_is_complex(t))
    return meta_error(m, "\"normal_kernel_cpu\" not implemented for '%s': argument 'dtype' "
                         "must be a floating-point dtype",
                      alloy_dtype_name(t));
  return meta_sized(m);
}

static alloy_error *meta_empty_strided(alloy_meta *m) {
  alloy_dim shape[ALLOY_MAX_RANK], stride[ALLOY_MAX_RANK];
  int rank, nstride;
  alloy_error *e = meta_dims(m, 0, shape, ALLOY_MAX_RANK, &rank);
  if (!e) e = meta_dims(m, 1, stride, ALLOY_MAX_RANK, &nstride);
  if (!e) e = check_size(m, 0, shape, rank);
  if (e) return e;
  if (nstride != rank)
    return meta_error(m, "mismatch in length of strides and shape: size has %d "
                         "dimensions, stride has %d", rank, nstride);
  alloy_dtype t = dtype_arg(m, ALLOY_F32);
  /* The storage the strides reach is allocated: it must be one that can exist. */
  if ((e = meta_check_window(m, t, shape, stride, rank, alloy_dim_const(0)))) return e;
  return meta_out_tensor(m, 0, t, shape, rank);
}

/* new_full, new_ones, new_zeros: self's dtype, the size of argument 1. */
static alloy_error *meta_new_sized(alloy_meta *m) {
  const alloy_value *self = meta_tensor(m, 0);
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank;
  alloy_error *e = meta_dims(m, 1, shape, ALLOY_MAX_RANK, &rank);
  if (!e) e = check_size(m, 1, shape, rank);
  return e ? e : meta_out_tensor(m, 0, dtype_arg(m, self->dtype), shape, rank);
}

/* full_like, ones_like, zeros_like. */
static alloy_error *meta_like(alloy_meta *m) {
  const alloy_value *self = meta_tensor(m, 0);
  return meta_out_like(m, 0, self, dtype_arg(m, self->dtype));
}

static alloy_error *meta_scalar_tensor(alloy_meta *m) {
  return meta_out_tensor(m, 0, dtype_arg(m, ALLOY_F32), NULL, 0);
}

static alloy_error *meta_randperm(alloy_meta *m) {
  alloy_dim n = meta_dim(m, 0);
  alloy_error *e = check_size(m, 0, &n, 1);
  return e ? e : meta_out_tensor(m, 0, dtype_arg(m, ALLOY_I64), &n, 1);
}

/* eye(n) and eye(n, m). */
static alloy_error *meta_eye(alloy_meta *m) {
  alloy_dim shape[2] = {meta_dim(m, 0), meta_dim(m, m->param ? 1 : 0)};
  for (int d = 0; d < 2; d++)
    if (alloy_dim_lt(m->st, shape[d], alloy_dim_const(0)) == ALLOY_TRUE) {
      char buf[64];
      alloy_dim_print(shape[d], buf, sizeof buf);
      return meta_error(m, "%s must be greater or equal to 0, got %s",
                        meta_arg_name(m, d && m->param ? 1 : 0), buf);
    }
  return meta_out_tensor(m, 0, dtype_arg(m, ALLOY_F32), shape, 2);
}

/* --- dropout: the input's type, and for native_dropout a bool mask ---------*/

static alloy_error *meta_dropout_p(alloy_meta *m, int i) {
  double p = meta_float(m, i);
  if (!(p >= 0.0 && p <= 1.0))
    return meta_error(m, "dropout probability has to be between 0 and 1, but got %g", p);
  return NULL;
}

/* native_dropout: the output and its bool keep-mask. */
static alloy_error *meta_native_dropout(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  alloy_error *e = meta_dropout_p(m, 1);
  if (!e) e = meta_out_like(m, 0, x, x->dtype);
  return e ? e : meta_out_like(m, 1, x, ALLOY_BOOL);
}

static alloy_error *meta_dropout(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  alloy_error *e = meta_dropout_p(m, 1);
  return e ? e : meta_out_like(m, 0, x, x->dtype);
}

/* --- arange ----------------------------------------------------------------*/

/* A bound of arange: an integer (maybe symbolic), a literal float, or a
 * number known only at run time. */
typedef struct {
  enum { BOUND_INT, BOUND_FLOAT, BOUND_RUNTIME } kind;
  bool is_float; /* makes the default dtype float32 */
  alloy_dim i;
  double f;
} bound;

static bound bound_of(const alloy_meta *m, int i) {
  const alloy_arg *a = &m->args[i];
  bound b = {BOUND_INT, false, alloy_dim_const(0), 0.0};
  if (a->kind == ALLOY_ARG_FLOAT) {
    b.kind = BOUND_FLOAT;
    b.is_float = true;
    b.f = a->u.f;
  } else if (a->kind == ALLOY_ARG_VALUE && a->u.value->kind != ALLOY_VALUE_INT) {
    b.kind = BOUND_RUNTIME;
    b.is_float = a->u.value->kind == ALLOY_VALUE_FLOAT;
  } else {
    b.i = meta_dim(m, i);
    b.f = alloy_dim_is_const(b.i) ? (double)b.i.value : 0.0;
  }
  return b;
}

/* The length of a range of concrete bounds, as ATen's compute_arange_size:
 * int64 results truncate the bounds and divide exactly, others divide in
 * double. */
static alloy_error *arange_length(alloy_meta *m, const bound *b, alloy_dtype dtype,
                                  int64_t *out) {
  double start = b[0].f, end = b[1].f, step = b[2].f;
  if (!isfinite(start) || !isfinite(end))
    return meta_error(m, "unsupported range: %g -> %g", start, end);
  if (step == 0) return meta_error(m, "step must be nonzero");
  if (!((step > 0 && end >= start) || (step < 0 && end <= start)))
    return meta_error(m, "upper bound and larger bound inconsistent with step sign "
                         "(start %g, end %g, step %g)", start, end, step);
  double len;
  if (dtype == ALLOY_I64) {
    /* Scalar::to<int64_t>: an int bound exactly, a float one truncated
     * when it fits; the sum is checked (PyTorch's overflows silently). */
    int64_t v[3];
    static const char *const names[3] = {"start", "end", "step"};
    for (int k = 0; k < 3; k++)
      if (b[k].kind == BOUND_INT) v[k] = b[k].i.value;
      else if (!alloy_checked_from_double(b[k].f, &v[k]))
        return meta_error(m, "value cannot be converted to type int64 without overflow "
                             "(argument '%s' is %g)", names[k], b[k].f);
    int64_t s = v[0], e = v[1], st = v[2], num;
    if (st == 0) return meta_error(m, "step must be nonzero");
    int64_t sgn = (st > 0) - (st < 0);
    if (!alloy_checked_sub(e, s, &num) || !alloy_checked_add(num, st - sgn, &num) ||
        (num == INT64_MIN && st == -1))
      return meta_error(m, "invalid size, possible overflow? (start %lld, end %lld, step %lld)",
                        (long long)s, (long long)e, (long long)st);
    len = (double)(num / st);
  } else {
    len = ceil((end - start) / step);
  }
  if (!(len >= 0 && len <= 9.2e18))
    return meta_error(m, "invalid size, possible overflow? (start %g, end %g, step %g)",
                      start, end, step);
  *out = (int64_t)len;
  return NULL;
}

/* arange(end) (m->param 0) and arange(start, end, step) (m->param 1). */
static alloy_error *meta_arange(alloy_meta *m) {
  bound b[3] = {{BOUND_INT, false, alloy_dim_const(0), 0.0},
                {BOUND_INT, false, alloy_dim_const(0), 0.0},
                {BOUND_INT, false, alloy_dim_const(1), 1.0}};
  if (m->param) {
    for (int k = 0; k < 3; k++) b[k] = bound_of(m, k);
  } else {
    b[1] = bound_of(m, 0);
  }
  bool any_float = false, any_runtime = false, any_symbolic = false;
  for (int k = 0; k < 3; k++) {
    any_float |= b[k].is_float;
    any_runtime |= b[k].kind == BOUND_RUNTIME;
    any_symbolic |= b[k].kind == BOUND_INT && !alloy_dim_is_const(b[k].i);
  }
  alloy_dtype dtype = dtype_arg(m, any_float ? ALLOY_F32 : ALLOY_I64);
  /* PyTorch's kernel dispatches on every type but bool, whatever the length. */
  if (dtype == ALLOY_BOOL)
    return meta_error(m, "\"arange_cpu\" not implemented for 'bool': argument 'dtype' "
                         "must not be bool");
  alloy_dim len;
  if (any_runtime) {
    len = meta_unbacked(m);
  } else if (any_symbolic) {
    /* Integer bounds: ceil((end - start) / step) with the step's sign known. */
    if (any_float)
      return meta_error(m, "symbolic bounds need integer start, end and step");
    if (!alloy_dim_is_const(b[2].i))
      return meta_error(m, "argument 'step' must be a concrete integer when a bound is symbolic");
    int64_t step = b[2].i.value;
    if (step == 0) return meta_error(m, "step must be nonzero");
    alloy_dim span = step > 0 ? alloy_dim_sub(m->st, b[1].i, b[0].i)
                              : alloy_dim_sub(m->st, b[0].i, b[1].i);
    if (alloy_dim_lt(m->st, span, alloy_dim_const(0)) == ALLOY_TRUE)
      return meta_error(m, "upper bound and larger bound inconsistent with step sign");
    len = alloy_dim_ceildiv(m->st, span, alloy_dim_const(step > 0 ? step : -step));
  } else {
    int64_t n = 0;
    alloy_error *e = arange_length(m, b, dtype, &n);
    if (e) return e;
    len = alloy_dim_const(n);
  }
  return meta_out_tensor(m, 0, dtype, &len, 1);
}

/* linspace and logspace, every overload: `steps` points. Tensor bounds must
 * be zero-dim; number bounds must fit the dtype (one point reads start
 * only, and logspace's is base ** start). */
static alloy_error *meta_linspace(alloy_meta *m) {
  for (int i = 0; i < 2; i++) {
    const alloy_value *t = meta_tensor(m, i);
    if (t && t->rank != 0)
      return meta_error(m, "only supports 0-dimensional start and end tensors, but "
                           "got %s with %d dimension(s)", meta_arg_name(m, i), t->rank);
  }
  alloy_dim steps = meta_dim(m, 2);
  if (alloy_dim_lt(m->st, steps, alloy_dim_const(0)) == ALLOY_TRUE) {
    char buf[64];
    alloy_dim_print(steps, buf, sizeof buf);
    return meta_error(m, "number of steps must be non-negative, got %s", buf);
  }
  /* One point is a fill (bool takes it: any nonzero start is true); more
   * go through a kernel that dispatches on every type but bool. */
  alloy_dtype t = dtype_arg(m, ALLOY_F32);
  if (t == ALLOY_BOOL && alloy_dim_lt(m->st, alloy_dim_const(1), steps) == ALLOY_TRUE)
    return meta_error(m, "\"%s_cpu\" not implemented for 'bool': argument 'dtype' must not "
                         "be bool when steps > 1",
                      strstr(m->op->name, "logspace") ? "logspace" : "linspace");
  bool log = strstr(m->op->name, "logspace") != NULL;
  bool many = alloy_dim_lt(m->st, alloy_dim_const(1), steps) == ALLOY_TRUE;
  bool one = alloy_dim_is_const(steps) && steps.value == 1;
  for (int i = 0; i < 2; i++) {
    alloy_error *e = (i == 0 ? many || (one && !log) : many) ? meta_check_scalar_fits(m, i, t) : NULL;
    if (e) return e;
  }
  return meta_out_tensor(m, 0, t, &steps, 1);
}

/* --- composites of the factories --------------------------------------------------*/

/* The type range computes in (at::acc_type on CPU): float for float16 and
 * bfloat16, double for float32 and float64, int64 for integers. */
static alloy_dtype range_acc(alloy_dtype t) {
  if (t == ALLOY_F16 || t == ALLOY_BF16) return ALLOY_F32;
  return alloy_dtype_is_float(t) ? ALLOY_F64 : ALLOY_I64;
}

/* range(start, end) (param 0) and range.step(start, end, step) (param 1):
 * start + step * i for i <= (end - start) / step, in dtype (float32 by
 * default); the bounds are read in range's computation type (ints
 * truncate them), where the count is computed as PyTorch's kernel does. */
static alloy_error *meta_range(alloy_meta *m) {
  alloy_dtype t = dtype_arg(m, ALLOY_F32);
  if (t == ALLOY_BOOL)
    return meta_error(m, "\"range_cpu\" not implemented for 'bool': argument 'dtype' must not be bool");
  double v[3] = {0, 0, 1};
  for (int k = 0; k < 2 + m->param; k++) {
    const alloy_arg *a = &m->args[k];
    bool literal = a->kind == ALLOY_ARG_FLOAT || a->kind == ALLOY_ARG_BOOL ||
                   (a->kind == ALLOY_ARG_INT && alloy_dim_is_const(a->u.i));
    if (!literal) {
      alloy_dim u = meta_unbacked(m);
      return meta_out_tensor(m, 0, t, &u, 1);
    }
    v[k] = meta_float(m, k);
  }
  alloy_dtype acc = range_acc(t);
  if (acc == ALLOY_I64)
    for (int k = 0; k < 3; k++) v[k] = trunc(v[k]);
  if (acc == ALLOY_F32)
    for (int k = 0; k < 3; k++) v[k] = (float)v[k];
  double start = v[0], end = v[1], step = v[2];
  if (!(step > 0 || step < 0)) return meta_error(m, "step must be nonzero");
  if (!isfinite(start) || !isfinite(end)) return meta_error(m, "unsupported range: %g -> %g", start, end);
  if (!((step > 0 && end >= start) || (step < 0 && end <= start)))
    return meta_error(m, "upper bound and larger bound inconsistent with step sign");
  double len = acc == ALLOY_F32 ? (double)((float)((float)(end - start) / (float)step) + 1.0f)
               : acc == ALLOY_I64 ? (double)(((int64_t)end - (int64_t)start) / (int64_t)step + 1)
                                  : (end - start) / step + 1;
  if (!(len >= 0 && len <= 9.2e18))
    return meta_error(m, "invalid size, possible overflow? (start %g, end %g, step %g)", start, end, step);
  alloy_dim n = alloy_dim_const((int64_t)len);
  return meta_out_tensor(m, 0, t, &n, 1);
}

/* tensor.float / .int / .bool and as_tensor of a number (t, dtype, ...):
 * a 0-dim tensor of dtype, else of the number's kind (float32, int64,
 * bool). param: that default dtype. */
static alloy_error *meta_tensor_of(alloy_meta *m) {
  return meta_out_tensor(m, 0, dtype_arg(m, (alloy_dtype)m->param), NULL, 0);
}

/* as_tensor(data, dtype, device): data, converted to dtype. */
static alloy_error *meta_as_tensor(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  return meta_out_like(m, 0, x, dtype_arg(m, x->dtype));
}

/* fill.Tensor(self, value): self's type, every element value (0-dim). */
static alloy_error *meta_fill_tensor(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0), *v = meta_tensor(m, 1);
  if (v->rank != 0)
    return meta_error(m, "fill_ only supports 0-dimension value tensor but got tensor with %d dimensions.",
                      v->rank);
  return meta_out_like(m, 0, x, x->dtype);
}

/* empty_permuted(size, physical_layout, *, dtype, ...): empty's, with a
 * layout of as many dims as size. */
static alloy_error *meta_empty_permuted(alloy_meta *m) {
  alloy_dim shape[ALLOY_MAX_RANK];
  int64_t perm[ALLOY_MAX_RANK + 1];
  int rank, np;
  alloy_error *e = meta_dims(m, 0, shape, ALLOY_MAX_RANK, &rank);
  if (!e) e = meta_ints(m, 1, perm, ALLOY_MAX_RANK + 1, &np);
  if (!e) e = check_size(m, 0, shape, rank);
  if (e) return e;
  if (np != rank)
    return meta_error(m,
                      "Number of dimensions in size does not match the length of the "
                      "physical_layout; i.e. len(size) = %d is not equal to len(physical_layout) = %d",
                      rank, np);
  return meta_out_tensor(m, 0, dtype_arg(m, ALLOY_F32), shape, rank);
}

/* _dim_arange(like, dim): arange(like.size(dim)), int64. */
static alloy_error *meta_dim_arange(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  int64_t dim;
  int d;
  alloy_error *e = meta_int(m, 1, &dim);
  if (!e) e = meta_wrap_dim(m, 1, dim, x->rank, &d);
  if (e) return e;
  alloy_dim n = x->rank ? x->shape[d] : alloy_dim_const(1);
  return meta_out_tensor(m, 0, ALLOY_I64, &n, 1);
}

/* _shape_as_tensor(self): self's sizes as an int64 vector. */
static alloy_error *meta_shape_as_tensor(alloy_meta *m) {
  alloy_dim n = alloy_dim_const(meta_tensor(m, 0)->rank);
  return meta_out_tensor(m, 0, ALLOY_I64, &n, 1);
}

const alloy_meta_entry alloy_meta_factory[] = {
    {"aten.zeros.default", meta_sized, -1},
    {"aten.ones.default", meta_sized, -1},
    {"aten.empty.memory_format", meta_sized, -1},
    {"aten.rand.default", meta_sized, -1},
    {"aten.randn.default", meta_randn, -1},
    {"aten.full.default", meta_sized, 1},
    {"aten.empty_strided.default", meta_empty_strided, 0},
    {"aten.new_full.default", meta_new_sized, 0},
    {"aten.new_ones.default", meta_new_sized, 0},
    {"aten.new_zeros.default", meta_new_sized, 0},
    {"aten.full_like.default", meta_like, 0},
    {"aten.ones_like.default", meta_like, 0},
    {"aten.zeros_like.default", meta_like, 0},
    {"aten.scalar_tensor.default", meta_scalar_tensor, 0},
    {"aten.randperm.default", meta_randperm, 0},
    {"aten.eye.default", meta_eye, 0},
    {"aten.eye.m", meta_eye, 1},
    {"aten.arange.default", meta_arange, 0},
    {"aten.arange.start_step", meta_arange, 1},
    {"aten.linspace.default", meta_linspace, 0},
    {"aten.linspace.Scalar_Tensor", meta_linspace, 0},
    {"aten.linspace.Tensor_Scalar", meta_linspace, 0},
    {"aten.linspace.Tensor_Tensor", meta_linspace, 0},
    {"aten.logspace.default", meta_linspace, 0},
    {"aten.logspace.Scalar_Tensor", meta_linspace, 0},
    {"aten.logspace.Tensor_Scalar", meta_linspace, 0},
    {"aten.logspace.Tensor_Tensor", meta_linspace, 0},
    {"aten.native_dropout.default", meta_native_dropout, 0},
    {"aten.dropout.default", meta_dropout, 0},
    {"aten.range.default", meta_range, 0},
    {"aten.range.step", meta_range, 1},
    {"aten.tensor.float", meta_tensor_of, ALLOY_F32},
    {"aten.tensor.int", meta_tensor_of, ALLOY_I64},
    {"aten.tensor.bool", meta_tensor_of, ALLOY_BOOL},
    {"aten.as_tensor.float", meta_tensor_of, ALLOY_F32},
    {"aten.as_tensor.int", meta_tensor_of, ALLOY_I64},
    {"aten.as_tensor.bool", meta_tensor_of, ALLOY_BOOL},
    {"aten.as_tensor.default", meta_as_tensor, 0},
    {"aten.fill.Tensor", meta_fill_tensor, 0},
    {"aten.empty_permuted.default", meta_empty_permuted, 0},
    {"aten._dim_arange.default", meta_dim_arange, 0},
    {"aten._shape_as_tensor.default", meta_shape_as_tensor, 0},
    {NULL, NULL, 0},
};
