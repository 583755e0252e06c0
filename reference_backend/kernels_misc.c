/*
 * reference_backend/kernels_misc.c: the ops that read a tensor's metadata
 * or one element (sym_size and friends, dim, element_size, is_complex,
 * is_same_size, get_device, ..., _local_scalar_dense), the runtime
 * assertions of export's graphs (_assert_async and the functional
 * assertions, which pass their dep_token on) and the
 * assertion ops that only check their input (_assert_tensor_metadata,
 * _linalg_check_errors). Metadata outputs are zero-dim tensors of the
 * scalar's dtype (int64, float64 or bool), as scalar outputs are on the
 * plugin ABI.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "reference_backend/ref.h"

static int write_int(const alloy_kernel_call *c, int64_t v) {
  ref_store_i(c->outputs[0].data, c->outputs[0].dtype, 0, v);
  return 0;
}

/* The size of dim `dim` of self; negative dims count from the end. */
static int k_sym_size(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *t = ref_tensor(c, "self");
  int64_t dim;
  if (!t || !ref_int(c, "dim", &dim)) return 1;
  if (dim < 0) dim += t->rank;
  if (dim < 0 || dim >= t->rank) return 1;
  return write_int(c, t->sizes[dim]);
}

/* Strides as the graph knows them: contiguous, with size-0/1 dims skipped
 * as c10 computes them. */
static int k_sym_stride(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *t = ref_tensor(c, "self");
  int64_t dim;
  if (!t || !ref_int(c, "dim", &dim)) return 1;
  if (dim < 0) dim += t->rank;
  if (dim < 0 || dim >= t->rank) return 1;
  int64_t stride = 1;
  for (int d = t->rank - 1; d > dim; d--) stride *= t->sizes[d] > 1 ? t->sizes[d] : 1;
  return write_int(c, stride);
}

static int k_sym_numel(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *t = ref_tensor(c, "self");
  return t ? write_int(c, ref_numel(t)) : 1;
}

static int k_sym_storage_offset(const alloy_kernel_call *c) { return write_int(c, 0); }
static int k_sym_is_contiguous(const alloy_kernel_call *c) { return write_int(c, 1); }

/* The one element of a one-element tensor, as the scalar output's dtype. */
static int k_local_scalar_dense(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *t = ref_tensor(c, "self");
  if (!t || ref_numel(t) != 1) return 1;
  const alloy_kernel_tensor *out = &c->outputs[0];
  if (alloy_dtype_is_float(out->dtype))
    ref_store_f(out->data, out->dtype, 0, ref_load_f(t->data, t->dtype, 0));
  else
    ref_store_i(out->data, out->dtype, 0, ref_load_i(t->data, t->dtype, 0));
  return 0;
}

/* dim and element_size. */
static int k_dim(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *t = ref_tensor(c, "self");
  return t ? write_int(c, t->rank) : 1;
}

static int k_element_size(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *t = ref_tensor(c, "self");
  return t ? write_int(c, (int64_t)alloy_dtype_size(t->dtype)) : 1;
}

/* The dtype predicates; is_conj, is_neg and is_inference are false (no
 * conjugate or negative bits here). */
static int k_is_complex(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *t = ref_tensor(c, "self");
  return t ? write_int(c, alloy_dtype_is_complex(t->dtype)) : 1;
}

static int k_is_floating_point(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *t = ref_tensor(c, "self");
  return t ? write_int(c, alloy_dtype_is_float(t->dtype)) : 1;
}

/* Signed: every dtype but bool and uint8. */
static int k_is_signed(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *t = ref_tensor(c, "self");
  return t ? write_int(c, t->dtype != ALLOY_BOOL && t->dtype != ALLOY_U8) : 1;
}

static int k_false(const alloy_kernel_call *c) { return write_int(c, 0); }

static int k_is_same_size(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *a = ref_tensor(c, "self"), *b = ref_tensor(c, "other");
  if (!a || !b) return 1;
  bool same = a->rank == b->rank;
  for (int d = 0; same && d < a->rank; d++) same = a->sizes[d] == b->sizes[d];
  return write_int(c, same);
}

/* get_device: -1, the CPU; is_non_overlapping_and_dense: every tensor
 * here is laid out densely. */
static int k_get_device(const alloy_kernel_call *c) { return write_int(c, -1); }
static int k_true(const alloy_kernel_call *c) { return write_int(c, 1); }

/* --- runtime assertions ---------------------------------------------------- */

/* The one element of self (or of a number argument) is nonzero. */
static bool element_nonzero(const alloy_kernel_call *c, const char *name, bool *ok) {
  ref_scalar_tensor scratch;
  const alloy_kernel_tensor *t = ref_operand(c, name, &scratch);
  if (!t || ref_numel(t) != 1) return false;
  *ok = alloy_dtype_is_float(t->dtype) ? ref_load_f(t->data, t->dtype, 0) != 0.0
                                      : ref_load_i(t->data, t->dtype, 0) != 0;
  return true;
}

/* The assertion's message, or PyTorch's own when it has none. */
static int assertion_failed(const alloy_kernel_call *c) {
  const char *msg = ref_str(c, "assert_msg");
  return ref_fail(c, "%s", msg ? msg : "Expected Tensor with single nonzero value, but got zero");
}

/* The dep_token passed on, as the functional assertions return it. */
static int pass_token(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *t = ref_tensor(c, "dep_token"), *out = &c->outputs[0];
  if (!t) return 1;
  if (ref_numel(t)) memcpy(out->data, t->data, (size_t)ref_numel(t) * alloy_dtype_size(t->dtype));
  return 0;
}

/* _assert_async(self, [msg]) and _functional_assert_async(self, msg,
 * dep_token); _functional_assert_scalar(self, msg, dep_token). */
static int k_assert_async(const alloy_kernel_call *c) {
  bool ok;
  if (!element_nonzero(c, "self", &ok)) return 1;
  if (!ok) return assertion_failed(c);
  return c->num_outputs ? pass_token(c) : 0;
}

/* _functional_sym_constrain_range[_for_size](size, min, max, dep_token):
 * min <= size <= max when the graph runs (for_size: min at least 0). */
static int k_constrain_range(const alloy_kernel_call *c) {
  ref_scalar_tensor scratch;
  const alloy_kernel_tensor *t = ref_operand(c, "size", &scratch);
  if (!t || ref_numel(t) != 1) return 1;
  int64_t v = ref_load_i(t->data, t->dtype, 0), lo, hi;
  bool has_lo = ref_int(c, "min", &lo), has_hi = ref_int(c, "max", &hi);
  if ((has_lo && v < lo) || (has_hi && v > hi))
    return ref_fail(c, "Invalid value range for %lld between [%lld, %lld]", (long long)v,
                    has_lo ? (long long)lo : (long long)INT64_MIN, has_hi ? (long long)hi : (long long)INT64_MAX);
  return pass_token(c);
}

/* _make_dep_token: an empty tensor's one element (0 here). */
static int k_make_dep_token(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0];
  memset(out->data, 0, alloy_dtype_size(out->dtype));
  return 0;
}

/* LAPACK's info: nonzero means the factorization failed. */
static int k_linalg_check_errors(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *info = ref_tensor(c, "info");
  if (!info) return 1;
  for (int64_t i = 0; i < ref_numel(info); i++)
    if (ref_load_i(info->data, info->dtype, i) != 0) {
      const char *api = ref_str(c, "api_name");
      char msg[160];
      snprintf(msg, sizeof msg, "%s: the factorization failed (info = %lld at batch %lld)",
               api ? api : "linalg", (long long)ref_load_i(info->data, info->dtype, i),
               (long long)i);
      c->host->log(ALLOY_LOG_ERROR, "ref", msg);
      return 1;
    }
  return 0;
}

/* Everything _assert_tensor_metadata checks is static: its shape function
 * already checked it when the node was built. */
static int k_assert_tensor_metadata(const alloy_kernel_call *c) {
  (void)c;
  return 0;
}

const alloy_kernel ref_kernels_misc[] = {
    REF_KERNEL("aten.sym_size.int", k_sym_size),
    REF_KERNEL("aten.sym_stride.int", k_sym_stride),
    REF_KERNEL("aten.sym_numel.default", k_sym_numel),
    REF_KERNEL("aten.sym_storage_offset.default", k_sym_storage_offset),
    REF_KERNEL("aten.sym_is_contiguous.default", k_sym_is_contiguous),
    REF_KERNEL("aten._local_scalar_dense.default", k_local_scalar_dense),
    REF_KERNEL("aten._linalg_check_errors.default", k_linalg_check_errors),
    REF_KERNEL("aten._assert_tensor_metadata.default", k_assert_tensor_metadata),
    REF_KERNEL("aten.dim.default", k_dim),
    REF_KERNEL("aten.element_size.default", k_element_size),
    REF_KERNEL("aten.is_complex.default", k_is_complex),
    REF_KERNEL("aten.is_floating_point.default", k_is_floating_point),
    REF_KERNEL("aten.is_signed.default", k_is_signed),
    REF_KERNEL("aten.is_conj.default", k_false),
    REF_KERNEL("aten.is_neg.default", k_false),
    REF_KERNEL("aten.is_inference.default", k_false),
    REF_KERNEL("aten.is_same_size.default", k_is_same_size),
    REF_KERNEL("aten.get_device.default", k_get_device),
    REF_KERNEL("aten.is_pinned.default", k_false),
    REF_KERNEL("aten.is_distributed.default", k_false),
    REF_KERNEL("aten.is_non_overlapping_and_dense.default", k_true),
    REF_KERNEL("aten._assert_async.default", k_assert_async),
    REF_KERNEL("aten._assert_async.msg", k_assert_async),
    REF_KERNEL("aten._functional_assert_async.msg", k_assert_async),
    REF_KERNEL("aten._functional_assert_scalar.default", k_assert_async),
    REF_KERNEL("aten._functional_sym_constrain_range.default", k_constrain_range),
    REF_KERNEL("aten._functional_sym_constrain_range_for_size.default", k_constrain_range),
    REF_KERNEL("aten._make_dep_token.default", k_make_dep_token),
    {NULL, NULL, NULL, NULL},
};
