/*
 * reference_backend/kernels_misc.c: the ops that read a tensor's metadata
 * or one element (sym_size and friends, dim, element_size, is_complex,
 * is_same_size, ..., _local_scalar_dense) and the
 * assertion ops that only check their input (_assert_tensor_metadata,
 * _linalg_check_errors). Metadata outputs are zero-dim tensors of the
 * scalar's dtype (int64, float64 or bool), as scalar outputs are on the
 * plugin ABI.
 */
#include <stdio.h>

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
    {NULL, NULL, NULL, NULL},
};
