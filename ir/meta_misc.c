/*
 * ir/meta_misc.c: shape functions of the ATen ops that query or assert a
 * tensor's metadata rather than compute on its data: the sym_* accessors
 * (their SymInt results carry the symbolic size, stride or element count
 * itself), _local_scalar_dense (a value known only at run time: an int is a
 * fresh unbacked symbol), and the checks _assert_tensor_metadata and
 * _linalg_check_errors, which produce nothing.
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

const alloy_meta_entry alloy_meta_misc[] = {
    {"aten.sym_size.int", meta_sym_dim, 0},
    {"aten.sym_stride.int", meta_sym_dim, 1},
    {"aten.sym_numel.default", meta_sym_numel, 0},
    {"aten.sym_storage_offset.default", meta_sym_storage_offset, 0},
    {"aten.sym_is_contiguous.default", meta_sym_is_contiguous, 0},
    {"aten._local_scalar_dense.default", meta_local_scalar_dense, 0},
    {"aten._linalg_check_errors.default", meta_linalg_check_errors, 0},
    {"aten._assert_tensor_metadata.default", meta_assert_tensor_metadata, 0},
    {NULL, NULL, 0},
};
