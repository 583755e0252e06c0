/*
 * ir/meta_index.c: shape functions of indexing ops: advanced indexing
 * (index.Tensor, index_put, _unsafe_masked_index*), masks (masked_fill,
 * masked_scatter, masked_select, nonzero), gather/scatter, index_select and
 * the index_add/copy/fill/reduce family, take/put, embeddings, searchsorted,
 * bucketize, isin and tril/triu_indices. See ir/meta.h.
 *
 * Sizes that depend on the data (how many elements a mask selects) are
 * fresh unbacked symbols. Advanced indexing follows PyTorch's (NumPy's)
 * rule: every index tensor broadcasts to one shape, which replaces the
 * indexed dims in place when they are adjacent and moves to the front when
 * a non-indexed dim separates them.
 */
#include <stdio.h>
#include <string.h>

#include "ir/checked.h"
#include "ir/meta.h"
#include "ir/meta_alias.h"

/* Copies n dims; a 0-dim tensor's shape may be NULL. */
static void copy_dims(alloy_dim *dst, const alloy_dim *src, int n) {
  if (n > 0) memcpy(dst, src, sizeof *dst * (size_t)n);
}

static bool is_index_dtype(alloy_dtype t) { return t == ALLOY_I64 || t == ALLOY_I32; }

/* A dim of argument i (wrapped), read from schema position dim_i. */
static alloy_error *arg_dim(alloy_meta *m, int dim_i, int rank, int *out) {
  int64_t dim;
  alloy_error *e = meta_int(m, dim_i, &dim);
  return e ? e : meta_wrap_dim(m, dim_i, dim, rank, out);
}

/* Errors only where the sizes are known to differ. */
static bool known_ne(alloy_meta *m, alloy_dim a, alloy_dim b) {
  return alloy_dim_eq(m->st, a, b) == ALLOY_FALSE;
}
static bool known_lt(alloy_meta *m, alloy_dim a, alloy_dim b) {
  return alloy_dim_lt(m->st, a, b) == ALLOY_TRUE;
}

static alloy_error *broadcast2(alloy_meta *m, const alloy_value *a,
                               const alloy_value *b, alloy_dim *out, int *rank) {
  return meta_broadcast(m, a->shape, a->rank, b->shape, b->rank, out, rank);
}

/* In-place ops cannot grow self: broadcasting other into it must give
 * self's shape back. */
static alloy_error *broadcast_into(alloy_meta *m, const alloy_value *self,
                                   const alloy_value *other, int other_i) {
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank = 0;
  alloy_error *e = broadcast2(m, self, other, shape, &rank);
  if (e) return e;
  bool same = rank == self->rank;
  for (int d = 0; d < rank && same; d++) same = alloy_dim_same(shape[d], self->shape[d]);
  if (same) return NULL;
  char a[256], b[256];
  return meta_error(m, "argument '%s': output with shape %s doesn't match the "
                       "broadcast shape %s",
                    meta_arg_name(m, other_i), meta_shape_text(self->shape, self->rank, a, sizeof a),
                    meta_shape_text(shape, rank, b, sizeof b));
}

static alloy_error *need_bool_mask(alloy_meta *m, int i, const alloy_value *mask) {
  if (mask->dtype == ALLOY_BOOL) return NULL;
  return meta_error(m, "argument '%s': expected a boolean mask, got %s",
                    meta_arg_name(m, i), alloy_dtype_name(mask->dtype));
}

static alloy_error *need_same_dtype(alloy_meta *m, int i, const alloy_value *self,
                                    const alloy_value *v) {
  if (v->dtype == self->dtype) return NULL;
  return meta_error(m, "argument '%s': expected dtype %s (self's), got %s",
                    meta_arg_name(m, i), alloy_dtype_name(self->dtype),
                    alloy_dtype_name(v->dtype));
}

/* --- advanced indexing -------------------------------------------------------*/

/* One index after boolean masks are expanded: a mask of rank k indexes k
 * dims with k index tensors of shape [u], u the mask's nonzero count. */
typedef struct index_entry {
  bool present;
  int rank;
  alloy_dim shape[ALLOY_MAX_RANK];
} index_entry;

typedef struct index_plan {
  index_entry e[ALLOY_MAX_RANK];
  int n;
  alloy_dim unbacked[ALLOY_MAX_RANK]; /* the mask counts made here */
  int nunbacked;
} index_plan;

/* Reads Tensor?[] argument idx_i against self. masks_ok: bool/uint8 masks
 * are allowed (they make unbacked sizes unless make_sizes is false, when
 * only the checks matter). */
static alloy_error *index_plan_read(alloy_meta *m, const alloy_value *self,
                                    int idx_i, bool masks_ok, bool make_sizes,
                                    index_plan *p) {
  p->n = 0;
  p->nunbacked = 0;
  int count = meta_tensor_count(m, idx_i);
  if (count == 0)
    return meta_error(m, "argument '%s': at least one index must be provided",
                      meta_arg_name(m, idx_i));
  for (int i = 0; i < count; i++) {
    const alloy_value *ix = meta_tensor_at(m, idx_i, i);
    bool mask = ix && (ix->dtype == ALLOY_BOOL || ix->dtype == ALLOY_U8);
    if (ix && !mask && !is_index_dtype(ix->dtype))
      return meta_error(m, "argument '%s': item %d: tensors used as indices must "
                           "be long, int, byte or bool tensors, got %s",
                        meta_arg_name(m, idx_i), i, alloy_dtype_name(ix->dtype));
    if (mask && !masks_ok)
      return meta_error(m, "argument '%s': item %d: expected an int64 or int32 "
                           "index, got a %s mask",
                        meta_arg_name(m, idx_i), i, alloy_dtype_name(ix->dtype));
    int need = mask ? ix->rank : 1;
    if (p->n + need > self->rank)
      return meta_error(m, "argument '%s': too many indices for tensor of "
                           "dimension %d",
                        meta_arg_name(m, idx_i), self->rank);
    if (!ix) {
      p->e[p->n++].present = false;
      continue;
    }
    if (!mask) {
      index_entry *en = &p->e[p->n++];
      en->present = true;
      en->rank = ix->rank;
      copy_dims(en->shape, ix->shape, ix->rank);
      continue;
    }
    for (int j = 0; j < ix->rank; j++)
      if (known_ne(m, ix->shape[j], self->shape[p->n + j])) {
        char a[256], b[256];
        return meta_error(m, "argument '%s': the shape of the mask %s at index %d "
                             "does not match the shape of the indexed tensor %s "
                             "at index %d",
                          meta_arg_name(m, idx_i), meta_shape_text(ix->shape, ix->rank, a, sizeof a),
                          i, meta_shape_text(self->shape, self->rank, b, sizeof b), p->n + j);
      }
    alloy_dim u = alloy_dim_const(0);
    if (make_sizes && ix->rank) {
      u = meta_unbacked(m);
      p->unbacked[p->nunbacked++] = u;
    }
    for (int j = 0; j < ix->rank; j++) {
      index_entry *en = &p->e[p->n++];
      en->present = true;
      en->rank = 1;
      en->shape[0] = u;
    }
  }
  return NULL;
}

static bool plan_is_unbacked(const index_plan *p, alloy_dim d) {
  for (int i = 0; i < p->nunbacked; i++)
    if (alloy_dim_same(p->unbacked[i], d)) return true;
  return false;
}

/* Broadcasts the index shapes. A mask count u against a size n is assumed
 * equal (PyTorch defers that check to run time) and resolves to n. */
static alloy_error *index_broadcast(alloy_meta *m, const index_plan *p,
                                    alloy_dim *out, int *rout) {
  int r = 0;
  for (int i = 0; i < p->n; i++)
    if (p->e[i].present && p->e[i].rank > r) r = p->e[i].rank;
  for (int k = 0; k < r; k++) out[k] = alloy_dim_const(1);
  for (int i = 0; i < p->n; i++) {
    const index_entry *en = &p->e[i];
    if (!en->present) continue;
    for (int k = 0; k < en->rank; k++) {
      alloy_dim *o = &out[r - en->rank + k], d = en->shape[k];
      if (plan_is_unbacked(p, d) && !(alloy_dim_is_const(*o) && o->value == 1)) continue;
      if (plan_is_unbacked(p, *o)) {
        *o = d;
        continue;
      }
      alloy_error *e = alloy_dim_broadcast(m->st, *o, d, o);
      if (e) return alloy_error_wrap(e, "%s: shape mismatch: indexing tensors "
                                        "could not be broadcast together",
                                     m->op->name);
    }
  }
  *rout = r;
  return NULL;
}

/* The shape of self[indices] (index.Tensor). */
static alloy_error *index_result(alloy_meta *m, const alloy_value *self,
                                 const index_plan *p, alloy_dim *out, int *rout) {
  alloy_dim b[ALLOY_MAX_RANK];
  int br = 0;
  alloy_error *e = index_broadcast(m, p, b, &br);
  if (e) return e;
  /* Are the indexed dims adjacent? */
  int first = -1, last = -1;
  for (int d = 0; d < p->n; d++)
    if (p->e[d].present) {
      if (first < 0) first = d;
      last = d;
    }
  bool adjacent = true;
  for (int d = first; first >= 0 && d <= last; d++) adjacent &= p->e[d].present;
  int r = 0;
  alloy_dim tmp[2 * ALLOY_MAX_RANK];
  if (first < 0) {
    copy_dims(tmp, self->shape, self->rank);
    r = self->rank;
  } else if (adjacent) {
    for (int d = 0; d < first; d++) tmp[r++] = self->shape[d];
    for (int k = 0; k < br; k++) tmp[r++] = b[k];
    for (int d = last + 1; d < self->rank; d++) tmp[r++] = self->shape[d];
  } else {
    for (int k = 0; k < br; k++) tmp[r++] = b[k];
    for (int d = 0; d < self->rank; d++)
      if (d >= p->n || !p->e[d].present) tmp[r++] = self->shape[d];
  }
  if (r > ALLOY_MAX_RANK)
    return meta_error(m, "result rank %d exceeds %d", r, ALLOY_MAX_RANK);
  copy_dims(out, tmp, r);
  *rout = r;
  return NULL;
}

/* index.Tensor(self, indices). */
static alloy_error *meta_index(alloy_meta *m) {
  const alloy_value *self = meta_tensor(m, 0);
  index_plan p;
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank = 0;
  alloy_error *e = index_plan_read(m, self, 1, true, true, &p);
  if (!e) e = index_result(m, self, &p, shape, &rank);
  return e ? e : meta_out_tensor(m, 0, self->dtype, shape, rank);
}

/* index_put(self, indices, values, accumulate): self's type. */
static alloy_error *meta_index_put(alloy_meta *m) {
  const alloy_value *self = meta_tensor(m, 0), *values = meta_tensor(m, 2);
  index_plan p;
  alloy_error *e = index_plan_read(m, self, 1, true, false, &p);
  if (!e) e = need_same_dtype(m, 2, self, values);
  return e ? e : meta_out_like(m, 0, self, self->dtype);
}

/* _unsafe_masked_index(self, mask, indices, fill): self[indices] where mask
 * holds, fill elsewhere; one index per dim, no masks among them. */
static alloy_error *meta_unsafe_masked_index(alloy_meta *m) {
  const alloy_value *self = meta_tensor(m, 0), *mask = meta_tensor(m, 1);
  index_plan p;
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank = 0;
  alloy_error *e = need_bool_mask(m, 1, mask);
  if (!e && meta_tensor_count(m, 2) != self->rank)
    e = meta_error(m, "argument 'indices': expected one index per dim of self "
                      "(%d), got %d",
                   self->rank, meta_tensor_count(m, 2));
  if (!e) e = index_plan_read(m, self, 2, false, false, &p);
  if (!e) e = index_result(m, self, &p, shape, &rank);
  if (!e) e = meta_broadcast(m, shape, rank, mask->shape, mask->rank, shape, &rank);
  if (e) return e;
  if (!m->param) return meta_out_tensor(m, 0, self->dtype, shape, rank);
  /* _unsafe_masked_index_put_accumulate(self, mask, indices, values) */
  const alloy_value *values = meta_tensor(m, 3);
  if ((e = need_same_dtype(m, 3, self, values))) return e;
  return meta_out_like(m, 0, self, self->dtype);
}

/* --- masks ----------------------------------------------------------------------*/

enum { MASKED_FILL_SCALAR, MASKED_FILL_TENSOR, MASKED_FILL_INPLACE };

/* masked_fill(self, mask, value): the out-of-place form broadcasts self
 * and mask; a tensor value must be 0-dim. */
static alloy_error *meta_masked_fill(alloy_meta *m) {
  const alloy_value *self = meta_tensor(m, 0), *mask = meta_tensor(m, 1);
  alloy_error *e = need_bool_mask(m, 1, mask);
  if (e) return e;
  if (m->param == MASKED_FILL_TENSOR) {
    const alloy_value *v = meta_tensor(m, 2);
    if (v->rank != 0)
      return meta_error(m, "argument 'value': masked_fill only supports a "
                           "0-dimensional value tensor, but got a tensor with %d "
                           "dimension(s)",
                        v->rank);
  }
  if (m->param == MASKED_FILL_INPLACE) {
    if ((e = broadcast_into(m, self, mask, 1))) return e;
    return meta_out_like(m, 0, self, self->dtype);
  }
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank = 0;
  if ((e = broadcast2(m, self, mask, shape, &rank))) return e;
  return meta_out_tensor(m, 0, self->dtype, shape, rank);
}

/* masked_scatter(self, mask, source): broadcast of self and mask. */
static alloy_error *meta_masked_scatter(alloy_meta *m) {
  const alloy_value *self = meta_tensor(m, 0), *mask = meta_tensor(m, 1),
                    *src = meta_tensor(m, 2);
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank = 0;
  alloy_error *e = need_bool_mask(m, 1, mask);
  if (!e) e = need_same_dtype(m, 2, self, src);
  if (!e) e = broadcast2(m, self, mask, shape, &rank);
  return e ? e : meta_out_tensor(m, 0, self->dtype, shape, rank);
}

/* masked_select(self, mask): the selected elements, a data-dependent count. */
static alloy_error *meta_masked_select(alloy_meta *m) {
  const alloy_value *self = meta_tensor(m, 0), *mask = meta_tensor(m, 1);
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank = 0;
  alloy_error *e = need_bool_mask(m, 1, mask);
  if (!e) e = broadcast2(m, self, mask, shape, &rank);
  if (e) return e;
  shape[0] = meta_unbacked(m);
  return meta_out_tensor(m, 0, self->dtype, shape, 1);
}

/* nonzero(self) -> int64 [u, rank]; nonzero_static(self, *, size, fill)
 * -> int64 [size, rank]. */
static alloy_error *meta_nonzero(alloy_meta *m) {
  const alloy_value *self = meta_tensor(m, 0);
  alloy_dim shape[2] = {alloy_dim_const(0), alloy_dim_const(self->rank)};
  if (m->param) {
    shape[0] = meta_dim(m, 1);
    if (known_lt(m, shape[0], alloy_dim_const(0)))
      return meta_error(m, "argument 'size' must be non-negative");
  } else {
    shape[0] = meta_unbacked(m);
  }
  return meta_out_tensor(m, 0, ALLOY_I64, shape, 2);
}

/* nonzero_numpy(self) -> one int64 [u] per dim of self (a 0-dim self
 * counts as one dim): the coordinates of its nonzero elements, dim by dim,
 * all u long. */
static alloy_error *meta_nonzero_numpy(alloy_meta *m) {
  const alloy_value *self = meta_tensor(m, 0);
  int n = self->rank ? self->rank : 1;
  alloy_dim u = meta_unbacked(m);
  alloy_error *e = meta_set_num_outputs(m, n);
  for (int k = 0; k < n && !e; k++) e = meta_out_tensor(m, k, ALLOY_I64, &u, 1);
  return e;
}

/* --- gather / scatter ----------------------------------------------------------*/

static int nonempty_rank(const alloy_value *v) { return v->rank ? v->rank : 1; }
static alloy_dim size_or_1(const alloy_value *v, int d) {
  return v->rank ? v->shape[d] : alloy_dim_const(1);
}

/* An index of gather/scatter: an integer tensor with self's number of dims
 * (0-dim counts as 1), no larger than self outside dim (and than src). */
static alloy_error *gather_scatter_check(alloy_meta *m, const alloy_value *self,
                                         int dim, const alloy_value *index,
                                         const alloy_value *src, const char *what) {
  /* An empty index touches nothing and is not checked. */
  alloy_dim numel = meta_numel(m, index->shape, index->rank);
  if (alloy_dim_is_const(numel) && numel.value == 0) return NULL;
  if (!is_index_dtype(index->dtype))
    return meta_error(m, "argument 'index': %s expected dtype int64 or int32 for "
                         "index, got %s",
                      what, alloy_dtype_name(index->dtype));
  if (nonempty_rank(index) != nonempty_rank(self))
    return meta_error(m, "argument 'index': index tensor must have the same "
                         "number of dimensions as self (%d), got %d",
                      self->rank, index->rank);
  if (src && nonempty_rank(src) != nonempty_rank(self))
    return meta_error(m, "argument 'src': src tensor must have the same number "
                         "of dimensions as self (%d), got %d",
                      self->rank, src->rank);
  for (int d = 0; d < nonempty_rank(self); d++) {
    alloy_dim i = size_or_1(index, d);
    if (d != dim && known_lt(m, size_or_1(self, d), i))
      return meta_error(m, "argument 'index': size does not match at dimension "
                           "%d: expected index to be no larger than self apart "
                           "from dimension %d",
                        d, dim);
    if (src && known_lt(m, size_or_1(src, d), i))
      return meta_error(m, "argument 'index': size does not match at dimension "
                           "%d: expected index to be no larger than src",
                        d);
  }
  return NULL;
}

/* gather(self, dim, index, sparse_grad): index's shape, self's dtype. */
static alloy_error *meta_gather(alloy_meta *m) {
  const alloy_value *self = meta_tensor(m, 0), *index = meta_tensor(m, 2);
  int dim;
  alloy_error *e = arg_dim(m, 1, self->rank, &dim);
  if (!e) e = gather_scatter_check(m, self, dim, index, NULL, "gather():");
  return e ? e : meta_out_like(m, 0, index, self->dtype);
}

enum {
  SCATTER_SRC = 1,       /* argument 3 is a tensor of self's dtype   */
  SCATTER_REDUCE_OLD = 2, /* reduce (arg 4): "add" or "multiply"     */
  SCATTER_REDUCE_TWO = 4, /* reduce (arg 4): sum prod mean amax amin */
};

/* scatter.src/.value/.reduce, scatter_, scatter_add, scatter_reduce.two:
 * self's type. */
static alloy_error *meta_scatter(alloy_meta *m) {
  const alloy_value *self = meta_tensor(m, 0), *index = meta_tensor(m, 2);
  const alloy_value *src = (m->param & SCATTER_SRC) ? meta_tensor(m, 3) : NULL;
  int dim;
  alloy_error *e = arg_dim(m, 1, self->rank, &dim);
  if (!e && src) e = need_same_dtype(m, 3, self, src);
  if (!e) e = gather_scatter_check(m, self, dim, index, src, "scatter():");
  if (e) return e;
  if (m->param & (SCATTER_REDUCE_OLD | SCATTER_REDUCE_TWO)) {
    static const char *const old[] = {"add", "multiply", NULL};
    static const char *const two[] = {"sum", "prod", "mean", "amax", "amin", NULL};
    const char *const *ok = (m->param & SCATTER_REDUCE_OLD) ? old : two;
    const char *r = meta_str(m, 4);
    bool found = false;
    for (int i = 0; ok[i]; i++) found |= r && !strcmp(r, ok[i]);
    if (!found)
      return meta_error(m, "argument 'reduce': unknown reduction '%s' (expected %s)",
                        r ? r : "None",
                        (m->param & SCATTER_REDUCE_OLD) ? "add or multiply"
                                                        : "sum, prod, mean, amax or amin");
  }
  return meta_out_like(m, 0, self, self->dtype);
}

/* --- index_select and the index_* family ------------------------------------------*/

static alloy_error *vector_index(alloy_meta *m, int i, const alloy_value *index,
                                 bool long_only) {
  if (index->rank > 1)
    return meta_error(m, "argument '%s': index is supposed to be a vector, got %d dims",
                      meta_arg_name(m, i), index->rank);
  if (long_only ? index->dtype != ALLOY_I64 : !is_index_dtype(index->dtype))
    return meta_error(m, "argument '%s': expected dtype %s for index, got %s",
                      meta_arg_name(m, i), long_only ? "int64" : "int32 or int64",
                      alloy_dtype_name(index->dtype));
  return NULL;
}

/* index_select(self, dim, index): dim's size becomes index.numel(). */
static alloy_error *meta_index_select(alloy_meta *m) {
  const alloy_value *self = meta_tensor(m, 0), *index = meta_tensor(m, 2);
  int dim;
  alloy_error *e = arg_dim(m, 1, self->rank, &dim);
  if (!e) e = vector_index(m, 2, index, false);
  if (e) return e;
  alloy_dim shape[ALLOY_MAX_RANK];
  copy_dims(shape, self->shape, self->rank);
  if (self->rank) shape[dim] = meta_numel(m, index->shape, index->rank);
  return meta_out_tensor(m, 0, self->dtype, shape, self->rank);
}

enum { INDEX_ADD, INDEX_COPY, INDEX_REDUCE, INDEX_FILL_SCALAR, INDEX_FILL_TENSOR };

/* index_add/index_copy/index_reduce(self, dim, index, source, ...) and
 * index_fill(self, dim, index, value): self's type. source holds one slice
 * of self per index. */
static alloy_error *meta_index_family(alloy_meta *m) {
  const alloy_value *self = meta_tensor(m, 0), *index = meta_tensor(m, 2);
  bool fill = m->param == INDEX_FILL_SCALAR || m->param == INDEX_FILL_TENSOR;
  int dim;
  alloy_error *e = arg_dim(m, 1, self->rank, &dim);
  if (!e) e = vector_index(m, 2, index, m->param == INDEX_COPY || fill);
  if (e) return e;
  if (m->param == INDEX_FILL_TENSOR && meta_tensor(m, 3)->rank != 0)
    return meta_error(m, "argument 'value': index_fill only supports a "
                         "0-dimensional value tensor, but got a tensor with %d "
                         "dimension(s)",
                      meta_tensor(m, 3)->rank);
  if (m->param == INDEX_REDUCE) {
    static const char *const ok[] = {"prod", "mean", "amax", "amin"};
    const char *r = meta_str(m, 4);
    bool found = false;
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) found |= r && !strcmp(r, ok[i]);
    if (!found)
      return meta_error(m, "argument 'reduce': expected one of prod, mean, amax, "
                           "amin, got '%s'",
                        r ? r : "None");
  }
  if (!fill) {
    const alloy_value *src = meta_tensor(m, 3);
    if ((e = need_same_dtype(m, 3, self, src))) return e;
    if (src->rank && self->rank && src->rank != self->rank)
      return meta_error(m, "argument 'source': expected %d dims like self, got %d",
                        self->rank, src->rank);
    alloy_dim slices = src->rank ? src->shape[dim < src->rank ? dim : 0] : alloy_dim_const(1);
    if (known_ne(m, meta_numel(m, index->shape, index->rank), slices))
      return meta_error(m, "argument 'index': number of indices should be equal "
                           "to source.size(dim)");
  }
  return meta_out_like(m, 0, self, self->dtype);
}

/* take(self, index): index's shape. */
static alloy_error *meta_take(alloy_meta *m) {
  const alloy_value *self = meta_tensor(m, 0), *index = meta_tensor(m, 1);
  if (index->dtype != ALLOY_I64)
    return meta_error(m, "argument 'index': expected a long tensor, got %s",
                      alloy_dtype_name(index->dtype));
  return meta_out_like(m, 0, index, self->dtype);
}

/* put(self, index, source, accumulate): self's type. */
static alloy_error *meta_put(alloy_meta *m) {
  const alloy_value *self = meta_tensor(m, 0), *index = meta_tensor(m, 1),
                    *src = meta_tensor(m, 2);
  if (index->dtype != ALLOY_I64)
    return meta_error(m, "argument 'index': expected a long tensor, got %s",
                      alloy_dtype_name(index->dtype));
  alloy_error *e = need_same_dtype(m, 2, self, src);
  if (e) return e;
  if (known_ne(m, meta_numel(m, index->shape, index->rank), meta_numel(m, src->shape, src->rank)))
    return meta_error(m, "argument 'source': expected source and index to have "
                         "the same number of elements");
  return meta_out_like(m, 0, self, self->dtype);
}

/* --- embeddings ------------------------------------------------------------------*/

static alloy_error *embedding_args(alloy_meta *m, const alloy_value *w,
                                   const alloy_value *ix) {
  if (w->rank != 2)
    return meta_error(m, "argument '%s' must be 2-D, got %d dims", meta_arg_name(m, 0), w->rank);
  if (!is_index_dtype(ix->dtype))
    return meta_error(m, "argument 'indices': expected int64 or int32, got %s",
                      alloy_dtype_name(ix->dtype));
  return NULL;
}

/* embedding(weight, indices, ...): indices.shape + [embedding_dim]. */
static alloy_error *meta_embedding(alloy_meta *m) {
  const alloy_value *w = meta_tensor(m, 0), *ix = meta_tensor(m, 1);
  alloy_error *e = embedding_args(m, w, ix);
  if (e) return e;
  if (ix->rank + 1 > ALLOY_MAX_RANK)
    return meta_error(m, "result rank %d exceeds %d", ix->rank + 1, ALLOY_MAX_RANK);
  alloy_dim shape[ALLOY_MAX_RANK];
  copy_dims(shape, ix->shape, ix->rank);
  shape[ix->rank] = w->shape[1];
  return meta_out_tensor(m, 0, w->dtype, shape, ix->rank + 1);
}

/* embedding_renorm_(self, indices, max_norm, norm_type): self. */
static alloy_error *meta_embedding_renorm(alloy_meta *m) {
  const alloy_value *w = meta_tensor(m, 0), *ix = meta_tensor(m, 1);
  alloy_error *e = embedding_args(m, w, ix);
  return e ? e : meta_out_like(m, 0, w, w->dtype);
}

enum { BAG_SUM, BAG_MEAN, BAG_MAX };

/* _embedding_bag / _embedding_bag_forward_only(weight, indices, offsets,
 * scale_grad_by_freq, mode, sparse, per_sample_weights, include_last_offset,
 * padding_idx) -> (output, offset2bag, bag_size, max_indices). The CPU
 * kernel's fast sum path (float, half or bfloat16 weights, no padding_idx)
 * skips offset2bag, which is then empty. */
static alloy_error *meta_embedding_bag(alloy_meta *m) {
  const alloy_value *w = meta_tensor(m, 0), *ix = meta_tensor(m, 1),
                    *off = meta_tensor(m, 2), *psw = meta_tensor(m, 6);
  int64_t mode, padding_idx;
  alloy_error *e = meta_int(m, 4, &mode);
  if (!e) e = meta_int(m, 8, &padding_idx);
  if (e) return e;
  if (!is_index_dtype(ix->dtype) || !is_index_dtype(off->dtype))
    return meta_error(m, "argument '%s': expected int64 or int32, got %s",
                      is_index_dtype(ix->dtype) ? "offsets" : "indices",
                      alloy_dtype_name(is_index_dtype(ix->dtype) ? off->dtype : ix->dtype));
  if (!alloy_dtype_is_float(w->dtype))
    return meta_error(m, "argument 'weight': expected a floating point type, got %s",
                      alloy_dtype_name(w->dtype));
  if (w->rank != 2 || ix->rank != 1 || off->rank != 1)
    return meta_error(m, "expected a 2-D weight and 1-D indices and offsets, got "
                         "%d, %d and %d dims",
                      w->rank, ix->rank, off->rank);
  if (mode < BAG_SUM || mode > BAG_MAX)
    return meta_error(m, "argument 'mode': expected 0 (sum), 1 (mean) or 2 (max), "
                         "got %lld",
                      (long long)mode);
  alloy_dim bags = off->shape[0];
  if (meta_bool(m, 7)) {
    if (known_lt(m, bags, alloy_dim_const(1)))
      return meta_error(m, "include_last_offset: numBags should be at least 1");
    bags = alloy_dim_sub(m->st, bags, alloy_dim_const(1));
  }
  if (psw) {
    if (mode != BAG_SUM)
      return meta_error(m, "argument 'per_sample_weights' is only supported with "
                           "mode='sum'");
    if (psw->rank != 1 || known_ne(m, psw->shape[0], ix->shape[0]))
      return meta_error(m, "argument 'per_sample_weights': expected a 1-D tensor "
                           "with one weight per index");
  }
  alloy_dim out[2] = {bags, w->shape[1]};
  if ((e = meta_out_tensor(m, 0, w->dtype, out, 2))) return e;
  alloy_dim one[1], two[2] = {bags, w->shape[1]};
  if (off->device.type != ALLOY_DEVICE_CPU) {
    /* The GPU kernels always fill offset2bag and size bag_size by offsets. */
    one[0] = ix->shape[0];
    if ((e = meta_out_tensor(m, 1, ix->dtype, one, 1))) return e;
    if ((e = meta_out_like(m, 2, off, ix->dtype))) return e;
    one[0] = alloy_dim_const(0);
    return mode == BAG_MAX ? meta_out_tensor(m, 3, ix->dtype, two, 2)
                           : meta_out_tensor(m, 3, ix->dtype, one, 1);
  }
  bool fast = (w->dtype == ALLOY_F32 || w->dtype == ALLOY_F16 || w->dtype == ALLOY_BF16) &&
              padding_idx < 0;
  one[0] = mode != BAG_SUM || !fast ? ix->shape[0] : alloy_dim_const(0);
  if ((e = meta_out_tensor(m, 1, off->dtype, one, 1))) return e;
  one[0] = bags;
  if ((e = meta_out_tensor(m, 2, off->dtype, one, 1))) return e;
  return mode == BAG_MAX ? meta_out_tensor(m, 3, off->dtype, two, 2)
                         : meta_out_tensor(m, 3, off->dtype, one, 1);
}

/* --- searching ----------------------------------------------------------------------*/

static alloy_dtype search_dtype(const alloy_meta *m, int out_int32_i) {
  return meta_bool(m, out_int32_i) ? ALLOY_I32 : ALLOY_I64;
}

/* searchsorted.Tensor(sorted_sequence, self, *, out_int32, right, side,
 * sorter): self's shape. The sequence is 1-D or shares self's leading dims. */
static alloy_error *meta_searchsorted(alloy_meta *m) {
  const alloy_value *seq = meta_tensor(m, 0), *self = meta_tensor(m, 1),
                    *sorter = meta_tensor(m, 5);
  if (seq->rank == 0)
    return meta_error(m, "argument 'sorted_sequence' must have at least 1 dim");
  if (seq->rank != 1) {
    bool ok = seq->rank == self->rank;
    for (int d = 0; ok && d < seq->rank - 1; d++)
      ok = !known_ne(m, seq->shape[d], self->shape[d]);
    if (!ok)
      return meta_error(m, "argument 'sorted_sequence' should be 1 dimension or "
                           "the first N-1 dimensions of boundaries tensor and "
                           "input value tensor must match");
  }
  const char *side = meta_str(m, 4);
  if (side && strcmp(side, "left") && strcmp(side, "right"))
    return meta_error(m, "argument 'side' can only be 'left' or 'right', got '%s'", side);
  if (side && meta_bool(m, 3) && !strcmp(side, "left"))
    return meta_error(m, "argument 'side': side and right can't be set to "
                         "opposites, got side of left while right was True");
  if (sorter) {
    bool ok = sorter->dtype == ALLOY_I64 && sorter->rank == seq->rank;
    for (int d = 0; ok && d < seq->rank; d++) ok = !known_ne(m, sorter->shape[d], seq->shape[d]);
    if (!ok)
      return meta_error(m, "argument 'sorter' must be an int64 tensor of "
                           "sorted_sequence's shape");
  }
  return meta_out_like(m, 0, self, search_dtype(m, 2));
}

/* bucketize.Tensor(self, boundaries, *, out_int32, right): self's shape. */
static alloy_error *meta_bucketize(alloy_meta *m) {
  const alloy_value *self = meta_tensor(m, 0), *b = meta_tensor(m, 1);
  if (b->rank != 1)
    return meta_error(m, "argument 'boundaries' must be 1 dimension, but got "
                         "dim(%d)",
                      b->rank);
  return meta_out_like(m, 0, self, search_dtype(m, 2));
}

/* isin(elements, test_elements, ...): bool of elements' shape. PyTorch
 * refuses bool and complex operands (its sorting path cannot take them,
 * and the meta function bails out for both paths). */
static alloy_error *meta_isin(alloy_meta *m) {
  for (int i = 0; i < 2; i++) {
    const alloy_value *v = meta_tensor(m, i);
    if (v && (v->dtype == ALLOY_BOOL || alloy_dtype_is_complex(v->dtype)))
      return meta_error(m, "Unsupported input type encountered for isin(): %s (argument '%s')",
                        v->dtype == ALLOY_BOOL ? "Bool" : alloy_dtype_name(v->dtype), meta_arg_name(m, i));
  }
  return meta_out_like(m, 0, meta_tensor(m, 0), ALLOY_BOOL);
}

/* --- the Scalar overloads of searching -----------------------------------------------
 * A number given for a tensor argument is a wrapped number: a 0-dim tensor
 * of the number's kind that promotes like a Python scalar. These ops
 * compare in the dtype it and the tensor promote to. */

/* The dtype a number argument i and tensor t promote to. */
static alloy_dtype with_number(const alloy_meta *m, int i, const alloy_value *t) {
  alloy_promo_operand ops[2] = {{t->rank ? ALLOY_PROMO_TENSOR : ALLOY_PROMO_ZERO_DIM, t->dtype},
                                meta_promo_operand(m, i)};
  return alloy_result_type(ops, 2);
}

/* A 0-dim tensor of dtype t standing for a number argument. */
static alloy_value number_value(alloy_dtype t) {
  alloy_value v = {.kind = ALLOY_VALUE_TENSOR, .dtype = t, .rank = 0};
  return v;
}

/* isin.Scalar_Tensor(element, test_elements, ...) and isin.Tensor_Scalar
 * (param 1)(elements, test_element, ...): isin with the number as a 0-dim
 * tensor. */
static alloy_error *meta_isin_scalar(alloy_meta *m) {
  int num = m->param ? 1 : 0;
  alloy_value v = number_value(meta_promo_operand(m, num).dtype);
  alloy_arg args[4] = {m->args[0], m->args[1], m->args[2], m->args[3]};
  args[num] = alloy_arg_value(&v);
  return meta_as_op(m, "aten.isin.Tensor_Tensor", args, 4, 0);
}

/* bucketize.Scalar(self, boundaries, *, out_int32, right) and
 * searchsorted.Scalar(sorted_sequence, self, ...) (param 1): a 0-dim
 * result; the sequence must be 1-dim. */
static alloy_error *meta_search_scalar(alloy_meta *m) {
  int num = m->param ? 1 : 0, ten = 1 - num;
  const alloy_value *seq = meta_tensor(m, ten);
  if (m->param && seq->rank != 1)
    return meta_error(m,
                      "torch.searchsorted(): input value can be a scalar only when boundaries tensor "
                      "dimension is 1, but we got boundaries tensor dim(%d) and input value's dim(0) "
                      "numel(1)",
                      seq->rank);
  alloy_value v = number_value(with_number(m, num, seq));
  alloy_arg args[6];
  for (int k = 0; k < m->nargs && k < 6; k++) args[k] = m->args[k];
  args[num] = alloy_arg_value(&v);
  return meta_as_op(m, m->param ? "aten.searchsorted.Tensor" : "aten.bucketize.Tensor", args,
                    m->nargs, 0);
}

/* take_along_dim(self, indices, dim): with dim, self and indices (int64,
 * as many dims) broadcast to each other outside dim, then gather; without,
 * the flattened self at the flattened indices. */
static alloy_error *meta_take_along_dim(alloy_meta *m) {
  const alloy_value *self = meta_tensor(m, 0), *idx = meta_tensor(m, 1);
  if (meta_is_none(m, 2)) {
    if (idx->dtype != ALLOY_I64)
      return meta_error(m, "gather(): Expected dtype int64 for index (argument 'indices'), got %s",
                        alloy_dtype_name(idx->dtype));
    alloy_dim n = meta_numel(m, idx->shape, idx->rank);
    return meta_out_tensor(m, 0, self->dtype, &n, 1);
  }
  if (self->rank != idx->rank)
    return meta_error(m,
                      "torch.take_along_dim(): input and indices should have the same number of "
                      "dimensions, but got %d dimensions for input, and %d dimensions for indices",
                      self->rank, idx->rank);
  if (idx->dtype != ALLOY_I64)
    return meta_error(m, "torch.take_along_dim(): dtype of indices should be Long but got %s",
                      alloy_dtype_name(idx->dtype));
  int dim;
  alloy_error *e = arg_dim(m, 2, self->rank, &dim);
  if (e) return e;
  alloy_dim a[ALLOY_MAX_RANK], out[ALLOY_MAX_RANK];
  int r;
  for (int k = 0; k < self->rank; k++) a[k] = k == dim ? idx->shape[k] : self->shape[k];
  if ((e = meta_broadcast(m, a, self->rank, idx->shape, idx->rank, out, &r))) return e;
  return meta_out_tensor(m, 0, self->dtype, out, r);
}

/* one_hot(self, num_classes): int64 self.shape + [num_classes]; -1 (the
 * default) takes max(self) + 1, a data-dependent size. */
static alloy_error *meta_one_hot(alloy_meta *m) {
  const alloy_value *self = meta_tensor(m, 0);
  if (self->dtype != ALLOY_I64)
    return meta_error(m, "one_hot is only applicable to index tensor of type LongTensor.");
  if (self->rank + 1 > ALLOY_MAX_RANK)
    return meta_error(m, "output rank %d exceeds %d", self->rank + 1, ALLOY_MAX_RANK);
  alloy_dim n = meta_dim(m, 1), shape[ALLOY_MAX_RANK];
  if (alloy_dim_is_const(n) && n.value == -1) n = meta_unbacked(m);
  else if (alloy_dim_lt(m->st, n, alloy_dim_const(0)) == ALLOY_TRUE)
    return meta_error(m, "argument 'num_classes' must be -1 or non-negative");
  for (int d = 0; d < self->rank; d++) shape[d] = self->shape[d];
  shape[self->rank] = n;
  return meta_out_tensor(m, 0, ALLOY_I64, shape, self->rank + 1);
}

/* PyTorch's ScalarType numbers, for defaults such as `dtype=4`. */
static bool scalar_type_number(int64_t n, alloy_dtype *out) {
  static const struct {
    int64_t n;
    alloy_dtype t;
  } map[] = {{0, ALLOY_U8},  {1, ALLOY_I8},  {2, ALLOY_I16},   {3, ALLOY_I32},
             {4, ALLOY_I64}, {5, ALLOY_F16}, {6, ALLOY_F32},   {7, ALLOY_F64},
             {9, ALLOY_C64}, {10, ALLOY_C128}, {11, ALLOY_BOOL}, {15, ALLOY_BF16}};
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (map[i].n == n) return *out = map[i].t, true;
  return false;
}

/* The number of elements of the lower triangle (row, col, offset), as
 * PyTorch's get_tril_size counts it, for row, col >= 0; false when it
 * overflows int64 (PyTorch's arithmetic wraps). An offset past either edge
 * gives what the edge gives, so it is clamped first. */
static bool tril_size(int64_t row, int64_t col, int64_t offset, int64_t *out) {
  *out = 0;
  if (row == 0 || col == 0) return true;
  if (offset > col) offset = col;
  if (offset < -row) offset = -row;
  int64_t row_off, first, last, rows_all, rows_trapezoid, size, rect;
  if (!alloy_checked_add(row, offset, &row_off)) return false; /* in [0, row + col] */
  first = offset > 0 ? (offset >= col ? col : 1 + offset) : row_off > 0;
  last = row_off < col ? row_off : col;
  rows_all = row_off < row ? row_off : row;
  rows_trapezoid = last - first + 1;
  if (!alloy_checked_add(first, last, &size) || !alloy_checked_mul(size, rows_trapezoid, &size))
    return false;
  size /= 2;
  if (rows_all > rows_trapezoid &&
      (!alloy_checked_mul(rows_all - rows_trapezoid, col, &rect) ||
       !alloy_checked_add(size, rect, &size)))
    return false;
  *out = size;
  return true;
}

/* tril_indices/triu_indices(row, col, offset, *, dtype=long, ...) ->
 * [2, count]. */
static alloy_error *meta_tri_indices(alloy_meta *m) {
  int64_t row, col, offset;
  alloy_error *e = meta_int(m, 0, &row);
  if (!e) e = meta_int(m, 1, &col);
  if (!e) e = meta_int(m, 2, &offset);
  if (e) return e;
  if (row < 0 || col < 0)
    return meta_error(m, "argument '%s' must be non-negative, got %lld",
                      row < 0 ? "row" : "col", (long long)(row < 0 ? row : col));
  alloy_dtype t = ALLOY_I64;
  const alloy_arg *a = &m->args[3];
  if (a->kind == ALLOY_ARG_DTYPE) t = a->u.dtype;
  else if (a->kind == ALLOY_ARG_INT && alloy_dim_is_const(a->u.i) &&
           !scalar_type_number(a->u.i.value, &t))
    return meta_error(m, "argument 'dtype': unknown ScalarType %lld",
                      (long long)a->u.i.value);
  /* PyTorch's kernels dispatch on the index types only (torch._refs checks
   * the same). */
  if (t != ALLOY_I64 && t != ALLOY_I32)
    return meta_error(m, "\"%s\" not implemented for '%s': argument 'dtype' must be int32 "
                         "or int64",
                      m->param ? "triu_indices" : "tril_indices", alloy_dtype_name(t));
  /* triu counts what the tril one below the diagonal leaves; an offset of
   * INT64_MIN leaves everything either way. */
  int64_t n, all, below;
  bool ok = m->param ? tril_size(row, col, offset > INT64_MIN ? offset - 1 : offset, &below) &&
                           alloy_checked_mul(row, col, &all) && alloy_checked_sub(all, below, &n)
                     : tril_size(row, col, offset, &n);
  if (!ok)
    return meta_error(m, "the number of indices of a %lld x %lld matrix (offset %lld) overflows "
                         "int64",
                      (long long)row, (long long)col, (long long)offset);
  alloy_dim shape[2] = {alloy_dim_const(2), alloy_dim_const(n)};
  return meta_out_tensor(m, 0, t, shape, 2);
}

const alloy_meta_entry alloy_meta_index[] = {
    {"aten.index.Tensor", meta_index, 0},
    {"aten.index_put.default", meta_index_put, 0},
    {"aten._unsafe_masked_index.default", meta_unsafe_masked_index, 0},
    {"aten._unsafe_masked_index_put_accumulate.default", meta_unsafe_masked_index, 1},
    {"aten.masked_fill.Scalar", meta_masked_fill, MASKED_FILL_SCALAR},
    {"aten.masked_fill.Tensor", meta_masked_fill, MASKED_FILL_TENSOR},
    {"aten.masked_fill_.Scalar", meta_masked_fill, MASKED_FILL_INPLACE},
    {"aten.masked_scatter.default", meta_masked_scatter, 0},
    {"aten.masked_select.default", meta_masked_select, 0},
    {"aten.nonzero.default", meta_nonzero, 0},
    {"aten.nonzero_static.default", meta_nonzero, 1},
    {"aten.argwhere.default", meta_nonzero, 0},
    {"aten.nonzero_numpy.default", meta_nonzero_numpy, 0},
    {"aten.gather.default", meta_gather, 0},
    {"aten.scatter.src", meta_scatter, SCATTER_SRC},
    {"aten.scatter.value", meta_scatter, 0},
    {"aten.scatter_.value", meta_scatter, 0},
    {"aten.scatter.reduce", meta_scatter, SCATTER_SRC | SCATTER_REDUCE_OLD},
    {"aten.scatter_add.default", meta_scatter, SCATTER_SRC},
    {"aten.scatter_reduce.two", meta_scatter, SCATTER_SRC | SCATTER_REDUCE_TWO},
    {"aten.index_select.default", meta_index_select, 0},
    {"aten.index_add.default", meta_index_family, INDEX_ADD},
    {"aten.index_copy.default", meta_index_family, INDEX_COPY},
    {"aten.index_reduce.default", meta_index_family, INDEX_REDUCE},
    {"aten.index_fill.int_Scalar", meta_index_family, INDEX_FILL_SCALAR},
    {"aten.index_fill.int_Tensor", meta_index_family, INDEX_FILL_TENSOR},
    {"aten.take.default", meta_take, 0},
    {"aten.put.default", meta_put, 0},
    {"aten.embedding.default", meta_embedding, 0},
    {"aten.embedding_renorm_.default", meta_embedding_renorm, 0},
    {"aten._embedding_bag.default", meta_embedding_bag, 0},
    {"aten._embedding_bag_forward_only.default", meta_embedding_bag, 0},
    {"aten.searchsorted.Tensor", meta_searchsorted, 0},
    {"aten.bucketize.Tensor", meta_bucketize, 0},
    {"aten.isin.Tensor_Tensor", meta_isin, 0},
    {"aten.isin.Scalar_Tensor", meta_isin_scalar, 0},
    {"aten.isin.Tensor_Scalar", meta_isin_scalar, 1},
    {"aten.bucketize.Scalar", meta_search_scalar, 0},
    {"aten.searchsorted.Scalar", meta_search_scalar, 1},
    {"aten.take_along_dim.default", meta_take_along_dim, 0},
    {"aten.one_hot.default", meta_one_hot, 0},
    {"aten.scatter.value_reduce", meta_scatter, SCATTER_REDUCE_OLD},
    {"aten.tril_indices.default", meta_tri_indices, 0},
    {"aten.triu_indices.default", meta_tri_indices, 1},
    {NULL, NULL, 0},
};
