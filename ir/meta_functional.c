/*
 * ir/meta_functional.c: shape functions of the view ops that the
 * functionalization pass (decompositions/functionalize.c) and its tests
 * need and that had none: narrow, chunk and _unsafe_view. Their results
 * alias self in PyTorch; here only their types matter.
 */
#include <stdio.h>

#include "ir/meta.h"

/* narrow(self, dim, start, length): self with dim shrunk to length. */
static alloy_error *meta_narrow(alloy_meta *m) {
  const alloy_value *v = meta_tensor(m, 0);
  if (!v || v->rank == 0) return meta_error(m, "narrow() cannot be applied to a 0-dim tensor.");
  int64_t dim;
  int d;
  alloy_error *e = meta_int(m, 1, &dim);
  if (!e) e = meta_wrap_dim(m, 1, dim, v->rank, &d);
  if (e) return e;
  alloy_dim len = meta_dim(m, 3), start = meta_dim(m, 2), n = v->shape[d];
  if (alloy_dim_is_const(len) && len.value < 0) return meta_error(m, "narrow(): length must be non-negative.");
  if (alloy_dim_is_const(start) && alloy_dim_is_const(n) && alloy_dim_is_const(len)) {
    int64_t s = start.value < 0 ? start.value + n.value : start.value;
    if (s < 0 || s > n.value || len.value > n.value - s)
      return meta_error(m, "start (%lld) + length (%lld) exceeds dimension size (%lld).",
                        (long long)start.value, (long long)len.value, (long long)n.value);
  }
  alloy_dim out[ALLOY_MAX_RANK];
  for (int k = 0; k < v->rank; k++) out[k] = k == d ? len : v->shape[k];
  return meta_out_tensor(m, 0, v->dtype, out, v->rank);
}

/* chunk(self, chunks, dim): pieces of ceil(n / chunks), the last smaller;
 * there may be fewer than chunks of them, as in PyTorch. */
static alloy_error *meta_chunk(alloy_meta *m) {
  const alloy_value *v = meta_tensor(m, 0);
  if (!v || v->rank == 0) return meta_error(m, "chunk expects at least a 1-dimensional tensor");
  int64_t chunks, dim;
  int d;
  alloy_error *e = meta_int(m, 1, &chunks);
  if (!e) e = meta_int(m, 2, &dim);
  if (!e) e = meta_wrap_dim(m, 2, dim, v->rank, &d);
  if (e) return e;
  if (chunks <= 0) return meta_error(m, "chunk expects `chunks` to be greater than 0, got: %lld", (long long)chunks);
  if (!alloy_dim_is_const(v->shape[d]))
    return meta_error(m, "chunk: the size of dim %d must be concrete", d);
  /* Ceiling divisions written so that nothing overflows. */
  int64_t n = v->shape[d].value, size = n / chunks + (n % chunks != 0);
  int64_t count = size ? n / size + (n % size != 0) : 1;
  if (count < 1) count = 1;
  if ((e = meta_set_num_outputs(m, count))) return e;
  alloy_dim out[ALLOY_MAX_RANK];
  for (int k = 0; k < v->rank; k++) out[k] = v->shape[k];
  for (int64_t i = 0; i < count && !e; i++) {
    int64_t len = n - i * size < size ? n - i * size : size;
    out[d] = alloy_dim_const(size ? len : 0);
    e = meta_out_tensor(m, (int)i, v->dtype, out, v->rank);
  }
  return e;
}

/* _unsafe_view(self, size): view's shape (one -1 inferred). */
static alloy_error *meta_unsafe_view(alloy_meta *m) {
  const alloy_value *v = meta_tensor(m, 0);
  alloy_dim size[ALLOY_MAX_RANK];
  int n;
  alloy_error *e = meta_dims(m, 1, size, ALLOY_MAX_RANK, &n);
  if (e) return e;
  alloy_dim numel = meta_numel(m, v->shape, v->rank), known = alloy_dim_const(1);
  int infer = -1;
  for (int k = 0; k < n; k++) {
    if (alloy_dim_is_const(size[k]) && size[k].value == -1) {
      if (infer >= 0) return meta_error(m, "only one dimension can be inferred");
      infer = k;
    } else {
      known = alloy_dim_mul(m->st, known, size[k]);
    }
  }
  if (infer >= 0) size[infer] = alloy_dim_floordiv(m->st, numel, known);
  if ((e = meta_sym_check(m))) return e;
  return meta_out_tensor(m, 0, v->dtype, size, n);
}

const alloy_meta_entry alloy_meta_functional[] = {
    {"aten.narrow.default", meta_narrow, 0},
    {"aten.chunk.default", meta_chunk, 0},
    {"aten._unsafe_view.default", meta_unsafe_view, 0},
    {NULL, NULL, 0},
};
