/*
 * decompositions/rules_shape.c: views, joins, splits, casts and factories,
 * from ATen to Core ATen.
 *
 * Alloy's values have no strides of their own: every node's result is a
 * value, and a view op (view, permute, slice, ...) gives a new value whose
 * elements are read in the logical order. So reshape is a view, every
 * *_copy op is its view op, and a split gives the pieces that
 * split_with_sizes computes. Where a result's shape is already known (the
 * node's own output type), a rule reads it from there rather than redoing
 * the arithmetic, and sizes stay symbolic that way.
 *
 * The selection and masking ops (tril, index_fill, eye, diag_embed, ...)
 * compare iota vectors (arange) to build a boolean mask and pick with
 * where, as PyTorch's references do; index_add and index_copy are an
 * index_put at one dim; the Scalar overloads of isin, bucketize and
 * searchsorted make their number a 0-dim tensor of the promoted dtype.
 * einsum is in rules_einsum.c, the composite views in rules_views.c.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "decompositions/rules.h"
#include "ir/promote.h"

enum { MAX_PIECES = 64 }; /* the most outputs a rule may set (decompose.c) */

/* --- small helpers -------------------------------------------------------------*/

static const alloy_value *out_type(decomp *d, int k) {
  return alloy_node_output(d_node(d), k);
}

static int num_outputs(decomp *d) { return alloy_node_num_outputs(d_node(d)); }

static alloy_dim C(int64_t v) { return alloy_dim_const(v); }

/* The argument exactly as the node holds it, to pass on unchanged. */
static alloy_arg same_arg(decomp *d, int i) { return *d_arg(d, i); }

static alloy_value *view(decomp *d, alloy_value *x, const alloy_dim *shape, int rank) {
  return D(d, "aten.view.default", V(x), d_dim_list(d, shape, rank));
}

/* x viewed as the node's output k. */
static alloy_value *view_as_out(decomp *d, alloy_value *x, int k) {
  const alloy_value *t = out_type(d, k);
  return view(d, x, d_shape(t), d_rank(t));
}

static alloy_value *permute(decomp *d, alloy_value *x, const int64_t *perm, int n) {
  return D(d, "aten.permute.default", V(x), d_int_list(d, perm, n));
}

static alloy_value *swap_dims(decomp *d, alloy_value *x, int a, int b) {
  int64_t perm[ALLOY_MAX_RANK];
  int r = d_rank(x);
  for (int k = 0; k < r; k++) perm[k] = k;
  if (r) {
    perm[a] = b;
    perm[b] = a;
  }
  return permute(d, x, perm, r);
}

static alloy_value *cast(decomp *d, alloy_value *x, alloy_dtype dt) {
  if (!x || d_dtype(x) == dt) return x;
  return D(d, "aten._to_copy.default", V(x), DT(dt));
}

/* A 0-d tensor holding value (a Scalar argument or a number) in dtype dt. */
static alloy_value *scalar_of(decomp *d, alloy_arg value, alloy_dtype dt) {
  return D(d, "aten.scalar_tensor.default", value, DT(dt));
}

/* 0, 1, ..., n-1 as int64. */
static alloy_value *iota(decomp *d, alloy_dim n) {
  return D(d, "aten.arange.start_step", I(0), SYM(n), I(1), DT(ALLOY_I64));
}

/* A 1-d tensor placed along dim of a rank-r tensor (size 1 elsewhere), so
 * that it broadcasts along that dim. */
static alloy_value *along(decomp *d, alloy_value *v, int dim, int r) {
  alloy_dim shape[ALLOY_MAX_RANK];
  for (int k = 0; k < r; k++) shape[k] = C(1);
  if (r) shape[dim] = d_shape(v)[0];
  return view(d, v, shape, r);
}

/* Input 0 (NULL after an error). */
static alloy_value *self_of(decomp *d) { return d_tensor(d, 0); }

static bool is_one(const alloy_arg *a) {
  return (a->kind == ALLOY_ARG_INT && alloy_dim_is_const(a->u.i) && a->u.i.value == 1) ||
         (a->kind == ALLOY_ARG_FLOAT && a->u.f == 1.0) || (a->kind == ALLOY_ARG_BOOL && a->u.b);
}

/* --- views and reshapes ------------------------------------------------------------
 * Each is one core view op (view, permute, expand, squeeze, slice, ...) of
 * the same data. */

/* reshape, _unsafe_view, view_copy, flatten, unflatten: a view to the
 * result shape. */
static void reshape(decomp *d) { d_out(d, 0, view_as_out(d, self_of(d), 0)); }

static int64_t known_numel(const alloy_value *v);

/* resize_as(self, the_template): a new tensor of the template's size,
 * holding self's elements in row-major order as far as they go, then zeros
 * (PyTorch leaves those uninitialized; the ref kernel of resize_ zeros them
 * too). A channels_last format would lay the elements out in another order,
 * which values without strides do not have: declined. */
static void resize_as(decomp *d) {
  alloy_value *x = self_of(d);
  const alloy_arg *format = d_arg(d, 2);
  if (!x || d_failed(d)) return;
  if (format->kind == ALLOY_ARG_MEMORY_FORMAT && format->u.memory_format != ALLOY_MEMORY_CONTIGUOUS &&
      format->u.memory_format != ALLOY_MEMORY_PRESERVE)
    return d_decline(d, "a resize to a channels_last memory format");
  int64_t have = known_numel(x), want = known_numel(out_type(d, 0));
  if (have < 0 || want < 0) return d_decline(d, "a resize of symbolic sizes");
  alloy_dim flat = alloy_dim_const(have);
  alloy_value *v = view(d, x, &flat, 1);
  if (want < have) v = D(d, "aten.slice.Tensor", V(v), I(0), I(0), I(want));
  else if (want > have) v = D(d, "aten.constant_pad_nd.default", V(v), LIST(I(0), I(want - have)));
  else v = D(d, "aten.clone.default", V(v));
  d_out(d, 0, view_as_out(d, v, 0));
}

/* transpose(d0, d1) = permute with the two dims swapped. */
static void transpose(decomp *d) {
  alloy_value *x = self_of(d);
  if (!x) return;
  int r = d_rank(x);
  int a = d_wrap_dim(d, d_int(d, 1), r), b = d_wrap_dim(d, d_int(d, 2), r);
  d_out(d, 0, swap_dims(d, x, a, b));
}

/* t: a matrix transposed; a vector or scalar is itself. */
static void t(decomp *d) {
  alloy_value *x = self_of(d);
  if (!x) return;
  d_out(d, 0, d_rank(x) < 2 ? D(d, "aten.alias.default", V(x)) : swap_dims(d, x, 0, 1));
}

static void detach(decomp *d) { d_out(d, 0, D(d, "aten.alias.default", V(self_of(d)))); }

static void permute_copy(decomp *d) {
  d_out(d, 0, D(d, "aten.permute.default", V(self_of(d)), same_arg(d, 1)));
}

static void expand_copy(decomp *d) {
  d_out(d, 0, D(d, "aten.expand.default", V(self_of(d)), same_arg(d, 1), same_arg(d, 2)));
}

static void unsqueeze_copy(decomp *d) {
  d_out(d, 0, D(d, "aten.unsqueeze.default", V(self_of(d)), same_arg(d, 1)));
}

static void squeeze_dim(decomp *d) {
  d_out(d, 0, D(d, "aten.squeeze.dim", V(self_of(d)), same_arg(d, 1)));
}

/* squeeze(): every dim of size 1 goes. */
static void squeeze_all(decomp *d) {
  alloy_value *x = self_of(d);
  int64_t dims[ALLOY_MAX_RANK];
  int n = 0;
  for (int k = 0; x && k < d_rank(x); k++)
    if (alloy_dim_is_const(d_shape(x)[k]) && d_shape(x)[k].value == 1) dims[n++] = k;
  d_out(d, 0, D(d, "aten.squeeze.dims", V(x), d_int_list(d, dims, n)));
}

static void diagonal_copy(decomp *d) {
  d_out(d, 0, D(d, "aten.diagonal.default", V(self_of(d)), same_arg(d, 1), same_arg(d, 2),
                same_arg(d, 3)));
}

/* narrow(dim, start, length) = slice(dim, start, start + length), a
 * negative start counting from the end. */
static void narrow(decomp *d) {
  alloy_value *x = self_of(d);
  if (!x) return;
  int dim = d_wrap_dim(d, d_int(d, 1), d_rank(x));
  alloy_dim start = d_dim(d, 2), len = d_dim(d, 3);
  if (d_failed(d)) return;
  alloy_symtab *st = d_symtab(d);
  if (alloy_dim_lt(st, start, C(0)) == ALLOY_TRUE) start = alloy_dim_add(st, start, d_shape(x)[dim]);
  else if (alloy_dim_lt(st, start, C(0)) != ALLOY_FALSE)
    return d_decline(d, "a symbolic start of unknown sign");
  d_out(d, 0, D(d, "aten.slice.Tensor", V(x), I(dim), SYM(start),
                SYM(alloy_dim_add(st, start, len)), I(1)));
}

/* unfold(dim, size, step): window w of the result is elements
 * [w*step, w*step + size) of dim, gathered with index_select and laid out
 * as [..., windows, ..., size]. */
static void unfold(decomp *d) {
  alloy_value *x = self_of(d);
  if (!x) return;
  int r = d_rank(x);
  int dim = d_wrap_dim(d, d_int(d, 1), r);
  int64_t size = d_int(d, 2), step = d_int(d, 3);
  if (d_failed(d)) return;
  if (r == 0) { /* the one element, as a window of size 1 (or 0) */
    alloy_value *one = view(d, x, (alloy_dim[]){C(1)}, 1);
    d_out(d, 0, D(d, "aten.slice.Tensor", V(one), I(0), I(0), I(size), I(1)));
    return;
  }
  alloy_dim windows = d_shape(out_type(d, 0))[dim];
  alloy_value *starts = D(d, "aten.mul.Tensor", V(iota(d, windows)), I(step));
  alloy_value *offsets = iota(d, C(size));
  alloy_value *idx = D(d, "aten.add.Tensor", V(D(d, "aten.unsqueeze.default", V(starts), I(1))),
                       V(D(d, "aten.unsqueeze.default", V(offsets), I(0))));
  alloy_dim flat = alloy_dim_mul(d_symtab(d), windows, C(size));
  alloy_value *picked = D(d, "aten.index_select.default", V(x), I(dim), V(view(d, idx, &flat, 1)));
  /* [..., windows, size, ...], then size moves to the end. */
  alloy_dim shape[ALLOY_MAX_RANK];
  int64_t perm[ALLOY_MAX_RANK];
  for (int k = 0; k < r; k++) shape[k + (k > dim)] = d_shape(x)[k];
  shape[dim] = windows;
  shape[dim + 1] = C(size);
  for (int k = 0; k < r; k++) perm[k] = k <= dim ? k : k + 1;
  perm[r] = dim + 1;
  d_out(d, 0, permute(d, view(d, picked, shape, r + 1), perm, r + 1));
}

/* --- casts --------------------------------------------------------------------------
 * to() is a copy only when it changes something or is asked to copy; a
 * device move is the partitioner's business, not the graph's. */

static void to_as(decomp *d, alloy_dtype dt, bool copy, alloy_arg layout, alloy_arg device,
                  alloy_arg pin, alloy_arg non_blocking, alloy_arg memory_format) {
  alloy_value *x = self_of(d);
  if (!x) return;
  if (!copy && dt == d_dtype(x)) return d_out(d, 0, x);
  d_out(d, 0, D(d, "aten._to_copy.default", V(x), DT(dt), layout, device, pin, non_blocking,
                memory_format));
}

/* to.dtype(dtype, non_blocking, copy, memory_format) */
static void to_dtype(decomp *d) {
  to_as(d, d_dtype_or(d, 1, ALLOY_F32), d_bool(d, 3), NONE, NONE, NONE, same_arg(d, 2),
        same_arg(d, 4));
}

/* to.dtype_layout(*, dtype, layout, device, pin_memory, non_blocking, copy,
 * memory_format) */
static void to_dtype_layout(decomp *d) {
  alloy_value *x = self_of(d);
  if (!x) return;
  to_as(d, d_dtype_or(d, 1, d_dtype(x)), d_bool(d, 6), same_arg(d, 2), same_arg(d, 3),
        same_arg(d, 4), same_arg(d, 5), same_arg(d, 7));
}

/* to.device(device, dtype, non_blocking, copy, memory_format) */
static void to_device(decomp *d) {
  to_as(d, d_dtype_or(d, 2, ALLOY_F32), d_bool(d, 4), NONE, same_arg(d, 1), NONE, same_arg(d, 3),
        same_arg(d, 5));
}

/* type_as(other) = to(other's dtype). */
static void type_as(decomp *d) {
  alloy_value *other = d_tensor(d, 1);
  if (other) to_as(d, d_dtype(other), false, NONE, NONE, NONE, B(false), NONE);
}

/* contiguous: every value is already laid out in order. */
static void contiguous(decomp *d) { d_out(d, 0, self_of(d)); }

static void expand_as(decomp *d) {
  const alloy_value *o = out_type(d, 0);
  d_out(d, 0, D(d, "aten.expand.default", V(self_of(d)), d_dim_list(d, d_shape(o), d_rank(o))));
}

/* _assert_tensor_metadata checks types the graph already carries: it
 * computes nothing and goes. */
static void assert_tensor_metadata(decomp *d) { (void)d; }

/* --- splits and joins ----------------------------------------------------------------*/

/* The pieces of x along dim with the sizes of the node's outputs. */
static void split_like_outputs(decomp *d, alloy_value *x, int dim) {
  int n = num_outputs(d);
  if (n > MAX_PIECES) return d_decline(d, "%d pieces are more than a rule can give", n);
  alloy_dim sizes[MAX_PIECES];
  for (int k = 0; k < n; k++) sizes[k] = d_shape(out_type(d, k))[dim];
  alloy_value *outs[MAX_PIECES];
  int got = DN(d, "aten.split_with_sizes.default", outs, MAX_PIECES, V(x),
               d_dim_list(d, sizes, n), I(dim));
  for (int k = 0; k < got && k < n; k++) d_out(d, k, outs[k]);
}

/* split(split_size, dim), unsafe_split, chunk(chunks, dim),
 * split_with_sizes_copy(sizes, dim): the dim is argument 2. */
static void split(decomp *d) {
  alloy_value *x = self_of(d);
  if (!x) return;
  split_like_outputs(d, x, d_wrap_dim(d, d_int(d, 2), d_rank(x)));
}

/* unbind(dim): select each index. */
static void unbind(decomp *d) {
  alloy_value *x = self_of(d);
  if (!x) return;
  int dim = d_wrap_dim(d, d_int(d, 1), d_rank(x)), n = num_outputs(d);
  if (n > MAX_PIECES) return d_decline(d, "%d pieces are more than a rule can give", n);
  for (int k = 0; k < n; k++) d_out(d, k, D(d, "aten.select.int", V(x), I(dim), I(k)));
}

/* The items of list argument 0 into items (at most cap). */
static int list_items(decomp *d, alloy_value **items, int cap) {
  int n = d_tensor_count(d, 0);
  if (n > cap) {
    d_decline(d, "%d tensors are more than this rule takes", n);
    return 0;
  }
  for (int k = 0; k < n; k++) items[k] = d_tensor_at(d, 0, k);
  return n;
}

/* stack(tensors, dim) = cat of each unsqueezed at dim. */
static void stack(decomp *d) {
  alloy_value *items[256];
  int n = list_items(d, items, 256);
  if (d_failed(d) || n == 0) return;
  int dim = d_wrap_dim(d, d_int(d, 1), d_rank(items[0]) + 1);
  for (int k = 0; k < n; k++) items[k] = D(d, "aten.unsqueeze.default", V(items[k]), I(dim));
  d_out(d, 0, D(d, "aten.cat.default", d_value_list(d, items, n), I(dim)));
}

/* hstack: items made at least 1-d, joined along dim 0 for vectors, dim 1
 * otherwise. vstack: items made at least 2-d (a vector as a row), joined
 * along dim 0. */
static void hvstack(decomp *d, bool vertical) {
  alloy_value *items[256];
  int n = list_items(d, items, 256);
  if (d_failed(d) || n == 0) return;
  for (int k = 0; k < n; k++) {
    int r = d_rank(items[k]);
    if (r == 0) items[k] = view(d, items[k], (alloy_dim[]){C(1), C(1)}, vertical ? 2 : 1);
    else if (r == 1 && vertical) items[k] = D(d, "aten.unsqueeze.default", V(items[k]), I(0));
  }
  int dim = vertical || d_rank(items[0]) == 1 ? 0 : 1;
  d_out(d, 0, D(d, "aten.cat.default", d_value_list(d, items, n), I(dim)));
}

static void hstack(decomp *d) { hvstack(d, false); }
static void vstack(decomp *d) { hvstack(d, true); }

/* _chunk_cat(tensors, dim, num_chunks): each tensor is padded with zeros at
 * dim to a multiple of num_chunks, viewed as [pre..., num_chunks, rest] and
 * the views are joined along dim + 1. */
static void chunk_cat(decomp *d) {
  alloy_value *items[256];
  int n = list_items(d, items, 256);
  if (d_failed(d) || n == 0) return;
  /* The output is [pre..., num_chunks, total]: its rank gives dim. */
  int64_t chunks = d_int(d, 2);
  int dim = d_rank(out_type(d, 0)) - 2;
  if (d_failed(d)) return;
  alloy_symtab *st = d_symtab(d);
  for (int k = 0; k < n; k++) {
    alloy_value *x = items[k];
    int r = d_rank(x);
    alloy_dim size = d_shape(x)[dim];
    alloy_dim padded = alloy_dim_mul(st, alloy_dim_ceildiv(st, size, C(chunks)), C(chunks));
    alloy_dim extra = alloy_dim_sub(st, padded, size);
    if (!(alloy_dim_is_const(extra) && extra.value == 0)) {
      alloy_dim pad[2 * ALLOY_MAX_RANK];
      int np = 2 * (r - dim);
      for (int j = 0; j < np; j++) pad[j] = C(0);
      pad[np - 1] = extra;
      x = D(d, "aten.constant_pad_nd.default", V(x), d_dim_list(d, pad, np), I(0));
    }
    alloy_dim shape[ALLOY_MAX_RANK];
    for (int j = 0; j < dim; j++) shape[j] = d_shape(x)[j];
    shape[dim] = C(chunks);
    shape[dim + 1] = alloy_dim_floordiv(st, padded, C(chunks));
    for (int j = dim + 1; j < r; j++) shape[dim + 1] = alloy_dim_mul(st, shape[dim + 1], d_shape(x)[j]);
    items[k] = view(d, x, shape, dim + 2);
  }
  d_out(d, 0, D(d, "aten.cat.default", d_value_list(d, items, n), I(dim + 1)));
}

/* block_diag(tensors): each block (a 0-d tensor is 1x1, a vector one row)
 * padded with zeros on the left and right to the full width, the padded
 * rows stacked. */
static void block_diag(decomp *d) {
  alloy_value *items[256];
  int n = list_items(d, items, 256);
  if (d_failed(d) || n == 0) return;
  const alloy_value *o = out_type(d, 0);
  alloy_dtype dt = d_dtype(o);
  alloy_dim width = d_shape(o)[1], left = C(0);
  alloy_symtab *st = d_symtab(d);
  for (int k = 0; k < n; k++) {
    alloy_value *x = cast(d, items[k], dt);
    if (!x) return;
    int r = d_rank(x);
    if (r < 2) {
      alloy_dim cols = r ? d_shape(x)[0] : C(1);
      x = view(d, x, (alloy_dim[]){C(1), cols}, 2);
    }
    alloy_dim cols = d_shape(x)[1];
    alloy_dim right = alloy_dim_sub(st, alloy_dim_sub(st, width, left), cols);
    alloy_dim pad[2] = {left, right};
    items[k] = D(d, "aten.constant_pad_nd.default", V(x), d_dim_list(d, pad, 2), I(0));
    left = alloy_dim_add(st, left, cols);
  }
  d_out(d, 0, D(d, "aten.cat.default", d_value_list(d, items, n), I(0)));
}

/* --- repeating, rolling, rotating ------------------------------------------------------*/

/* repeat_interleave.self_int(repeats, dim, output_size): each element of
 * dim repeated: a new dim after it expanded to repeats, then merged. */
static void repeat_interleave_int(decomp *d) {
  alloy_value *x = self_of(d);
  if (!x) return;
  int dim = 0;
  if (d_is_none(d, 2) || d_rank(x) == 0) {
    x = view(d, x, (alloy_dim[]){C(-1)}, 1);
  } else {
    dim = d_wrap_dim(d, d_int(d, 2), d_rank(x));
  }
  int r = d_rank(x);
  alloy_dim shape[ALLOY_MAX_RANK];
  for (int k = 0, j = 0; k <= r; k++) shape[k] = k == dim + 1 ? d_dim(d, 1) : d_shape(x)[j++];
  alloy_value *wide = D(d, "aten.expand.default",
                        V(D(d, "aten.unsqueeze.default", V(x), I(dim + 1))),
                        d_dim_list(d, shape, r + 1));
  d_out(d, 0, view_as_out(d, wide, 0));
}

/* The index vector of repeat_interleave.Tensor(repeats, output_size):
 * position j holds the number of running totals of repeats that are <= j,
 * which is the i whose run covers j. */
static alloy_value *run_index(decomp *d, alloy_value *repeats, alloy_dim len) {
  alloy_value *ends = D(d, "aten.cumsum.default", V(repeats), I(0), DT(ALLOY_I64));
  alloy_value *pos = D(d, "aten.unsqueeze.default", V(iota(d, len)), I(1));
  alloy_value *passed = D(d, "aten.le.Tensor", V(D(d, "aten.unsqueeze.default", V(ends), I(0))),
                          V(pos));
  return D(d, "aten.sum.dim_IntList", V(passed), LIST(I(1)), B(false), DT(ALLOY_I64));
}

/* repeat_interleave.Tensor(repeats, *, output_size): the length is data
 * unless output_size gives it. */
static void repeat_interleave_tensor(decomp *d) {
  alloy_value *rep = self_of(d);
  if (d_is_none(d, 1)) return d_decline(d, "the result's length depends on data (no output_size)");
  if (!rep) return;
  d_out(d, 0, cast(d, run_index(d, rep, d_dim(d, 1)), d_dtype(rep)));
}

/* repeat_interleave.self_Tensor(repeats, dim, *, output_size): index_select
 * along dim with the run index of repeats (one repeat count broadcasts to
 * every element). */
static void repeat_interleave_self_tensor(decomp *d) {
  alloy_value *x = self_of(d), *rep = d_tensor(d, 1);
  if (d_is_none(d, 3)) return d_decline(d, "the result's length depends on data (no output_size)");
  if (!x || !rep) return;
  int dim = 0;
  if (d_is_none(d, 2) || d_rank(x) == 0) x = view(d, x, (alloy_dim[]){C(-1)}, 1);
  else dim = d_wrap_dim(d, d_int(d, 2), d_rank(x));
  alloy_dim size = d_shape(x)[dim];
  if (d_rank(rep) == 0 ||
      (alloy_dim_is_const(d_shape(rep)[0]) && d_shape(rep)[0].value == 1 &&
       !(alloy_dim_is_const(size) && size.value == 1)))
    rep = D(d, "aten.expand.default", V(view(d, rep, (alloy_dim[]){C(1)}, 1)), d_dim_list(d, &size, 1));
  alloy_value *idx = run_index(d, rep, d_dim(d, 3));
  d_out(d, 0, D(d, "aten.index_select.default", V(x), I(dim), V(idx)));
}

/* One roll of x along dim by shift: result[j] = x[(j - shift) mod n]. */
static alloy_value *roll_one(decomp *d, alloy_value *x, int dim, int64_t shift) {
  alloy_dim n = d_shape(x)[dim];
  if (alloy_dim_is_const(n) && (n.value == 0 || shift % n.value == 0)) return x;
  alloy_value *src = D(d, "aten.remainder.Scalar",
                       V(D(d, "aten.sub.Scalar", V(iota(d, n)), I(shift), I(1))), SYM(n));
  return D(d, "aten.index_select.default", V(x), I(dim), V(src));
}

/* roll(shifts, dims): one roll per dim; without dims, of the flattened
 * tensor. */
static void roll(decomp *d) {
  alloy_value *x = self_of(d);
  int64_t shifts[ALLOY_MAX_RANK], dims[ALLOY_MAX_RANK];
  int ns = d_ints(d, 1, shifts, ALLOY_MAX_RANK), nd = d_ints(d, 2, dims, ALLOY_MAX_RANK);
  if (d_failed(d) || !x) return;
  if (nd <= 0) {
    if (ns != 1) return d_decline(d, "%d shifts without dims", ns);
    alloy_value *flat = view(d, x, (alloy_dim[]){C(-1)}, 1);
    return d_out(d, 0, view(d, roll_one(d, flat, 0, shifts[0]), d_shape(x), d_rank(x)));
  }
  if (ns != nd) return d_decline(d, "%d shifts for %d dims", ns, nd);
  alloy_value *y = x;
  for (int k = 0; k < nd; k++) y = roll_one(d, y, d_wrap_dim(d, dims[k], d_rank(x)), shifts[k]);
  d_out(d, 0, y == x ? D(d, "aten.clone.default", V(x)) : y);
}

/* rot90(k, dims): a quarter turn is a flip of the second dim then a
 * transpose; a half turn flips both. */
static void rot90(decomp *d) {
  alloy_value *x = self_of(d);
  int64_t k = d_int(d, 1), dims[2];
  if (d_ints(d, 2, dims, 2) != 2 || d_failed(d) || !x) return;
  int a = d_wrap_dim(d, dims[0], d_rank(x)), b = d_wrap_dim(d, dims[1], d_rank(x));
  k = ((k % 4) + 4) % 4;
  if (k == 0) return d_out(d, 0, D(d, "aten.clone.default", V(x)));
  if (k == 2) return d_out(d, 0, D(d, "aten.flip.default", V(x), LIST(I(a), I(b))));
  alloy_value *flipped = D(d, "aten.flip.default", V(x), LIST(I(k == 1 ? b : a)));
  d_out(d, 0, swap_dims(d, flipped, a, b));
}

/* diff(n, dim, prepend, append): prepend and append joined on, then n
 * times the difference of neighbours (exclusive or for bool). */
static void diff(decomp *d) {
  alloy_value *x = self_of(d), *pre = d_tensor(d, 3), *app = d_tensor(d, 4);
  int64_t n = d_int(d, 1);
  if (d_failed(d) || !x) return;
  int dim = d_wrap_dim(d, d_int(d, 2), d_rank(x));
  if (n == 0) return d_out(d, 0, x);
  if (pre || app) {
    alloy_value *parts[3];
    int np = 0;
    if (pre) parts[np++] = pre;
    parts[np++] = x;
    if (app) parts[np++] = app;
    x = D(d, "aten.cat.default", d_value_list(d, parts, np), I(dim));
  }
  for (int64_t i = 0; i < n && x; i++) {
    alloy_value *hi = D(d, "aten.slice.Tensor", V(x), I(dim), I(1), NONE, I(1));
    alloy_value *lo = D(d, "aten.slice.Tensor", V(x), I(dim), I(0), I(-1), I(1));
    x = d_dtype(x) == ALLOY_BOOL ? D(d, "aten.logical_xor.default", V(hi), V(lo))
                                 : D(d, "aten.sub.Tensor", V(hi), V(lo));
  }
  d_out(d, 0, x);
}

/* --- factories ------------------------------------------------------------------------*/

/* arange(end) = arange(0, end, 1). */
static void arange(decomp *d) {
  d_out(d, 0, D(d, "aten.arange.start_step", I(0), same_arg(d, 0), I(1), same_arg(d, 1),
                same_arg(d, 2), same_arg(d, 3), same_arg(d, 4)));
}

/* full(size, value) with the factory arguments at dtype_at..dtype_at+3;
 * a missing dtype is dflt. */
static void full_of(decomp *d, int size_at, alloy_arg value, int dtype_at, alloy_dtype dflt) {
  d_out(d, 0, D(d, "aten.full.default", same_arg(d, size_at), value,
                DT(d_dtype_or(d, dtype_at, dflt)), same_arg(d, dtype_at + 1),
                same_arg(d, dtype_at + 2), same_arg(d, dtype_at + 3)));
}

/* ones / zeros(size, *, dtype, ...): the default dtype is float32. */
static void ones(decomp *d) { full_of(d, 0, I(1), 1, ALLOY_F32); }
static void zeros(decomp *d) { full_of(d, 0, I(0), 1, ALLOY_F32); }

/* new_ones / new_zeros / new_full(size, [fill,] *, dtype, ...): self's
 * dtype unless one is given. */
static void new_ones(decomp *d) {
  if (self_of(d)) full_of(d, 1, I(1), 2, d_dtype(self_of(d)));
}
static void new_zeros(decomp *d) {
  if (self_of(d)) full_of(d, 1, I(0), 2, d_dtype(self_of(d)));
}
static void new_full(decomp *d) {
  if (self_of(d)) full_of(d, 1, same_arg(d, 2), 3, d_dtype(self_of(d)));
}

/* ones_like / zeros_like(*, dtype, layout, device, pin_memory,
 * memory_format) = full_like with 1 or 0. */
static void like_of(decomp *d, int value) {
  d_out(d, 0, D(d, "aten.full_like.default", V(self_of(d)), I(value), same_arg(d, 1),
                same_arg(d, 2), same_arg(d, 3), same_arg(d, 4), same_arg(d, 5)));
}
static void ones_like(decomp *d) { like_of(d, 1); }
static void zeros_like(decomp *d) { like_of(d, 0); }

/* zero(self): the functional form of zero_, a tensor of zeros like self. */
static void zero(decomp *d) { d_out(d, 0, D(d, "aten.zeros_like.default", V(self_of(d)))); }

/* eye(n, m): row index == column index, in dtype (float32 by default). */
static void eye_of(decomp *d, alloy_dim n, alloy_dim m, int dtype_at) {
  alloy_value *rows = D(d, "aten.unsqueeze.default", V(iota(d, n)), I(1));
  alloy_value *mask = D(d, "aten.eq.Tensor", V(rows), V(iota(d, m)));
  d_out(d, 0, cast(d, mask, d_dtype_or(d, dtype_at, ALLOY_F32)));
}
static void eye(decomp *d) { eye_of(d, d_dim(d, 0), d_dim(d, 0), 1); }
static void eye_m(decomp *d) { eye_of(d, d_dim(d, 0), d_dim(d, 1), 2); }

/* An endpoint of linspace / logspace: a number, or a 0-d tensor read at
 * run time. */
typedef struct endpoint {
  alloy_value *t; /* NULL: the number v */
  double v;
} endpoint;

static endpoint endpoint_of(decomp *d, int i) {
  endpoint e = {NULL, 0};
  const alloy_arg *a = d_arg(d, i);
  if (a->kind == ALLOY_ARG_VALUE && alloy_value_kind_of(a->u.value) == ALLOY_VALUE_TENSOR)
    e.t = a->u.value;
  else
    e.v = d_float(d, i);
  return e;
}

/* An endpoint as Scalar::to<dt> gives it, a 0-d tensor of dtype dt: an
 * integer type truncates a float endpoint and wraps an int one into range
 * (uint8 reads -1 as 255). */
static alloy_value *endpoint_tensor(decomp *d, endpoint e, alloy_dtype dt) {
  bool integral = alloy_dtype_is_integer(dt);
  if (!e.t)
    return integral ? cast(d, D(d, "aten.scalar_tensor.default", I((int64_t)e.v), DT(ALLOY_I64)), dt)
                    : D(d, "aten.scalar_tensor.default", F(e.v), DT(dt));
  return cast(d, integral ? cast(d, e.t, ALLOY_I64) : e.t, dt);
}

/* The points of a range from start to end (0-d tensors of dtype comp)
 * by step, as PyTorch's CPU kernels place them: start + step * i for i <
 * steps / 2 (an integer division: the middle point of an odd count comes
 * from the end), end - step * (steps - 1 - i) for the rest, i converted
 * to comp before it multiplies. */
static alloy_value *range_points(decomp *d, alloy_value *start, alloy_value *end, alloy_value *step,
                                 int64_t steps, alloy_dtype comp) {
  alloy_value *i = iota(d, C(steps));
  alloy_value *back = D(d, "aten.sub.Scalar", V(D(d, "aten.neg.default", V(i))), I(-(steps - 1)), I(1));
  alloy_value *up = D(d, "aten.add.Tensor", V(start),
                      V(D(d, "aten.mul.Tensor", V(step), V(cast(d, i, comp)))), I(1));
  alloy_value *down = D(d, "aten.sub.Tensor", V(end),
                        V(D(d, "aten.mul.Tensor", V(step), V(cast(d, back, comp)))), I(1));
  alloy_value *first = D(d, "aten.lt.Scalar", V(i), I(steps / 2));
  return D(d, "aten.where.self", V(first), V(up), V(down));
}

/* linspace(start, end, steps) in dtype dt, as PyTorch's CPU kernel: the
 * endpoints converted to dt, step = (end - start) / (steps - 1) and the
 * points (range_points), every operation in dt for floats (float16 and
 * bfloat16 rounding each one, as their C++ arithmetic does; an end - start
 * past the dtype's range is inf there) and in float64 for integers, whose
 * points truncate. */
static alloy_value *linspace_of(decomp *d, endpoint s, endpoint e, int64_t steps, alloy_dtype dt) {
  alloy_dtype comp = alloy_dtype_is_float(dt) ? dt : ALLOY_F64;
  if (steps <= 1) {
    /* a fill with start; bool takes it so (a nonzero start is true, 0.5
     * too) */
    alloy_value *start = cast(d, endpoint_tensor(d, s, dt == ALLOY_BOOL ? ALLOY_F64 : dt), dt);
    alloy_dim one = C(steps);
    return D(d, "aten.expand.default", V(view(d, start, (alloy_dim[]){C(1)}, 1)), d_dim_list(d, &one, 1));
  }
  alloy_value *start = cast(d, endpoint_tensor(d, s, dt), comp), *end = cast(d, endpoint_tensor(d, e, dt), comp);
  /* the count in comp too (Half / int64 divides by the count as a Half) */
  alloy_value *step = D(d, "aten.div.Tensor", V(D(d, "aten.sub.Tensor", V(end), V(start), I(1))),
                        V(scalar_of(d, I(steps - 1), comp)));
  return cast(d, range_points(d, start, end, step, steps, comp), dt);
}

static alloy_dtype factory_dtype(decomp *d, int i) {
  return d_dtype_or(d, i, d_dtype(out_type(d, 0)));
}

/* linspace(start, end, steps, *, dtype, ...), any endpoint a tensor. */
static void linspace(decomp *d) {
  endpoint s = endpoint_of(d, 0), e = endpoint_of(d, 1);
  int64_t steps = d_int(d, 2);
  if (d_failed(d)) return;
  d_out(d, 0, linspace_of(d, s, e, steps, factory_dtype(d, 3)));
}

/* logspace(start, end, steps, base, *, dtype, ...) = base ** x in float64,
 * then cast, as PyTorch's CPU loop: the endpoints converted to the dtype,
 * end - start taken there (in int64 for integers), step = that / (steps -
 * 1) and the exponents x (range_points) in float64. */
static void logspace(decomp *d) {
  endpoint s = endpoint_of(d, 0), e = endpoint_of(d, 1);
  int64_t steps = d_int(d, 2);
  double base = d_float(d, 3);
  if (d_failed(d)) return;
  alloy_dtype dt = factory_dtype(d, 4);
  alloy_value *exps;
  if (steps <= 1) {
    /* One point is base ** start as given (PyTorch fills it). */
    exps = linspace_of(d, s, e, steps, ALLOY_F64);
  } else {
    /* integers subtract in int64 (C++ promotes a uint8 or int8 there) */
    alloy_dtype et = alloy_dtype_is_float(dt) ? dt : ALLOY_I64;
    alloy_value *start = cast(d, endpoint_tensor(d, s, dt), et), *end = cast(d, endpoint_tensor(d, e, dt), et);
    alloy_value *span = cast(d, D(d, "aten.sub.Tensor", V(end), V(start), I(1)), ALLOY_F64);
    alloy_value *step = D(d, "aten.div.Tensor", V(span), F((double)(steps - 1)));
    exps = range_points(d, cast(d, start, ALLOY_F64), cast(d, end, ALLOY_F64), step, steps, ALLOY_F64);
  }
  d_out(d, 0, cast(d, D(d, "aten.pow.Scalar", F(base), V(exps)), dt));
}

/* --- masks and selections ------------------------------------------------------------*/

/* tril / triu(diagonal): keep element (i, j) when j - i <= diagonal
 * (tril) or >= diagonal (triu). */
static void tri(decomp *d, const char *keep) {
  alloy_value *x = self_of(d);
  int64_t diagonal = d_int(d, 1);
  if (d_failed(d) || !x) return;
  int r = d_rank(x);
  if (r < 2) return d_decline(d, "a tensor of rank %d", r);
  alloy_value *cols = iota(d, d_shape(x)[r - 1]);
  alloy_value *rows = D(d, "aten.unsqueeze.default", V(iota(d, d_shape(x)[r - 2])), I(1));
  alloy_value *offset = D(d, "aten.sub.Tensor", V(cols), V(rows), I(1));
  alloy_value *mask = D(d, keep, V(offset), I(diagonal));
  d_out(d, 0, D(d, "aten.where.self", V(mask), V(x), V(scalar_of(d, I(0), d_dtype(x)))));
}
static void tril(decomp *d) { tri(d, "aten.le.Scalar"); }
static void triu(decomp *d) { tri(d, "aten.ge.Scalar"); }

/* trace = the sum of the main diagonal. */
static void trace(decomp *d) {
  alloy_value *diag = D(d, "aten.diagonal.default", V(self_of(d)), I(0), I(0), I(1));
  alloy_value *s = D(d, "aten.sum.dim_IntList", V(diag), LIST(I(0)), B(false));
  d_out(d, 0, cast(d, s, d_dtype(out_type(d, 0))));
}

/* take(index) = the flattened tensor indexed. */
static void take(decomp *d) {
  alloy_value *flat = view(d, self_of(d), (alloy_dim[]){C(-1)}, 1);
  d_out(d, 0, D(d, "aten.index.Tensor", V(flat), LIST(V(d_tensor(d, 1)))));
}

/* masked_fill(mask, value) = where(mask, value in self's dtype, self). */
static void masked_fill_scalar(decomp *d) {
  alloy_value *x = self_of(d);
  if (!x) return;
  alloy_value *v = scalar_of(d, same_arg(d, 2), d_dtype(x));
  d_out(d, 0, D(d, "aten.where.self", V(d_tensor(d, 1)), V(v), V(x)));
}
static void masked_fill_tensor(decomp *d) {
  alloy_value *x = self_of(d);
  if (!x) return;
  alloy_value *v = cast(d, d_tensor(d, 2), d_dtype(x));
  d_out(d, 0, D(d, "aten.where.self", V(d_tensor(d, 1)), V(v), V(x)));
}

/* index_fill(dim, index, value): positions of dim named by index (negative
 * ones counting from the end) take value. */
static void index_fill(decomp *d) {
  alloy_value *x = self_of(d), *index = d_tensor(d, 2);
  if (!x || !index) return;
  int r = d_rank(x), dim = d_wrap_dim(d, d_int(d, 1), r);
  alloy_dim n = r ? d_shape(x)[dim] : C(1);
  alloy_value *idx = view(d, index, (alloy_dim[]){C(-1)}, 1);
  idx = D(d, "aten.remainder.Scalar", V(idx), SYM(n));
  alloy_value *pos = D(d, "aten.unsqueeze.default", V(iota(d, n)), I(1));
  alloy_value *hit = D(d, "aten.any.dim",
                       V(D(d, "aten.eq.Tensor", V(pos), V(D(d, "aten.unsqueeze.default", V(idx), I(0))))),
                       I(1), B(false));
  alloy_value *mask = r ? along(d, hit, dim, r) : view(d, hit, NULL, 0);
  const alloy_arg *a = d_arg(d, 3);
  alloy_value *v = a->kind == ALLOY_ARG_VALUE &&
                           alloy_value_kind_of(a->u.value) == ALLOY_VALUE_TENSOR
                       ? cast(d, a->u.value, d_dtype(x))
                       : scalar_of(d, *a, d_dtype(x));
  d_out(d, 0, D(d, "aten.where.self", V(mask), V(v), V(x)));
}

/* index_put at one dim: None for the dims before it. */
static alloy_value *index_put_at(decomp *d, alloy_value *x, int dim, alloy_value *index,
                                 alloy_value *values, bool accumulate) {
  alloy_value *indices[ALLOY_MAX_RANK] = {NULL};
  indices[dim] = view(d, index, (alloy_dim[]){C(-1)}, 1);
  return D(d, "aten.index_put.default", V(x), d_value_list(d, indices, dim + 1), V(values),
           B(accumulate));
}

/* index_add(dim, index, source, alpha) = index_put(accumulate) of
 * source * alpha; index_copy(dim, index, source) = index_put. A 0-d self
 * is a vector of one. */
static void index_put_dim(decomp *d, alloy_value *src, bool accumulate) {
  alloy_value *x = self_of(d), *index = d_tensor(d, 2);
  if (!x || !src || !index) return;
  int r = d_rank(x), dim = d_wrap_dim(d, d_int(d, 1), r);
  if (r == 0) {
    x = view(d, x, (alloy_dim[]){C(1)}, 1);
    src = view(d, src, (alloy_dim[]){C(-1)}, 1);
  }
  alloy_value *y = index_put_at(d, x, dim, index, cast(d, src, d_dtype(x)), accumulate);
  d_out(d, 0, r ? y : view(d, y, NULL, 0));
}

static void index_add(decomp *d) {
  alloy_value *src = d_tensor(d, 3);
  if (src && !is_one(d_arg(d, 4))) src = D(d, "aten.mul.Tensor", V(src), same_arg(d, 4));
  index_put_dim(d, src, true);
}

static void index_copy(decomp *d) { index_put_dim(d, d_tensor(d, 3), false); }

/* The indices of _unsafe_masked_index(_put_accumulate), clamped into
 * range: where the mask is off they may point anywhere. */
static int clamped_indices(decomp *d, alloy_value *x, alloy_value **out) {
  int n = d_tensor_count(d, 2);
  if (n > d_rank(x)) {
    d_decline(d, "%d indices for rank %d", n, d_rank(x));
    return 0;
  }
  alloy_symtab *st = d_symtab(d);
  for (int k = 0; k < n; k++) {
    alloy_value *i = d_tensor_at(d, 2, k);
    alloy_dim size = d_shape(x)[k];
    out[k] = i ? D(d, "aten.clamp.default", V(i), SYM(alloy_dim_sub(st, C(0), size)),
                   SYM(alloy_dim_sub(st, size, C(1))))
               : NULL;
  }
  return n;
}

/* _unsafe_masked_index(mask, indices, fill) = where(mask, self[indices],
 * fill). */
static void unsafe_masked_index(decomp *d) {
  alloy_value *x = self_of(d), *idx[ALLOY_MAX_RANK];
  if (!x) return;
  int n = clamped_indices(d, x, idx);
  if (d_failed(d)) return;
  alloy_value *picked = D(d, "aten.index.Tensor", V(x), d_value_list(d, idx, n));
  d_out(d, 0, D(d, "aten.where.self", V(d_tensor(d, 1)), V(picked),
                V(scalar_of(d, same_arg(d, 3), d_dtype(x)))));
}

/* _unsafe_masked_index_put_accumulate(mask, indices, values): the masked
 * off values become zeros, then an accumulating index_put. */
static void unsafe_masked_index_put_accumulate(decomp *d) {
  alloy_value *x = self_of(d), *idx[ALLOY_MAX_RANK], *values = d_tensor(d, 3);
  if (!x || !values) return;
  int n = clamped_indices(d, x, idx);
  if (d_failed(d)) return;
  alloy_value *kept = D(d, "aten.where.self", V(d_tensor(d, 1)), V(values),
                        V(scalar_of(d, I(0), d_dtype(values))));
  d_out(d, 0, D(d, "aten.index_put.default", V(x), d_value_list(d, idx, n), V(kept), B(true)));
}

/* The number of elements of v when every size is known, else -1. */
static int64_t known_numel(const alloy_value *v) {
  int64_t n = 1;
  for (int k = 0; k < d_rank(v); k++) {
    alloy_dim s = d_shape(v)[k];
    if (!alloy_dim_is_const(s)) return -1;
    n *= s.value;
  }
  return n;
}

/* isin(elements, test_elements, assume_unique, invert) on the path
 * PyTorch's CPU kernel takes (and torch._decomp's isin): with fewer than
 * 10 * n^0.145 test elements, all against all in torch.result_type of the
 * two (a zero-dim operand counts less); with more, by sorting, in
 * torch.promote_types of the two: test_elements sorted, one searchsorted
 * per element and a look at the value found there (O(n + m) memory where
 * all against all takes n x m: 4e9 for two 66k-element tensors). With
 * assume_unique the kernel sorts both concatenated and marks an element
 * whose stable-sorted successor equals it, which differs when elements
 * repeat; that is done as it does. Sizes not known here: all against all,
 * unless the paths could answer differently (dtype or assume_unique). */
static void isin(decomp *d) {
  alloy_value *x = self_of(d), *test = d_tensor(d, 1);
  if (!x || !test) return;
  bool unique = d_bool(d, 2), invert = d_bool(d, 3);
  int64_t n = known_numel(x), m = known_numel(test);
  alloy_promo_operand ops[2] = {
      {d_rank(x) ? ALLOY_PROMO_TENSOR : ALLOY_PROMO_ZERO_DIM, d_dtype(x)},
      {d_rank(test) ? ALLOY_PROMO_TENSOR : ALLOY_PROMO_ZERO_DIM, d_dtype(test)}};
  alloy_dtype rt = alloy_result_type(ops, 2), pt = alloy_promote_types(d_dtype(x), d_dtype(test));
  bool sorting;
  if (n >= 0 && m >= 0) sorting = n > 0 && m >= (int64_t)(10.0f * pow((double)n, 0.145));
  else if (m >= 0 && m < 10) sorting = false; /* n > 0 makes the bound at least 10 */
  else if (rt != pt || (unique && n != 1)) {
    d_decline(d, "isin's path depends on sizes not known here");
    return;
  } else sorting = false;
  alloy_dtype ct = sorting ? pt : rt;
  alloy_value *ex = cast(d, x, ct), *flat = view(d, cast(d, test, ct), (alloy_dim[]){C(-1)}, 1);
  const char *cmp = invert ? "aten.ne.Tensor" : "aten.eq.Tensor";
  if (!sorting) {
    alloy_value *eq = D(d, "aten.eq.Tensor", V(D(d, "aten.unsqueeze.default", V(ex), I(-1))), V(flat));
    alloy_value *found = D(d, "aten.any.dim", V(eq), I(-1), B(false));
    d_out(d, 0, invert ? D(d, "aten.logical_not.default", V(found)) : found);
    return;
  }
  alloy_value *ef = view(d, ex, (alloy_dim[]){C(-1)}, 1), *sorted[2];
  if (!unique) {
    /* m > 0 here (the bound is at least 10), so the clamped place exists */
    DN(d, "aten.sort.default", sorted, 2, V(flat), I(0), B(false));
    /* sort puts NaN last, but searchsorted's binary search takes NaN as
     * below everything: it searches the NaNs as +inf, and the value found
     * there (NaN) matches nothing */
    alloy_value *seq = sorted[0];
    if (alloy_dtype_is_float(ct))
      seq = D(d, "aten.where.self", V(D(d, "aten.ne.Tensor", V(seq), V(seq))),
              V(scalar_of(d, F(INFINITY), ct)), V(seq));
    alloy_value *at = D(d, "aten.searchsorted.Tensor", V(seq), V(ef));
    at = D(d, "aten.clamp.default", V(at), NONE, I(m - 1));
    alloy_value *found = D(d, cmp, V(D(d, "aten.index_select.default", V(sorted[0]), I(0), V(at))), V(ef));
    d_out(d, 0, view_as_out(d, found, 0));
    return;
  }
  alloy_value *both[2] = {ef, flat};
  alloy_value *all = D(d, "aten.cat.default", d_value_list(d, both, 2), I(0));
  DN(d, "aten.sort.stable", sorted, 2, V(all), B(true), I(0), B(false));
  alloy_value *next = D(d, "aten.slice.Tensor", V(sorted[0]), I(0), I(1), NONE, I(1));
  alloy_value *here = D(d, "aten.slice.Tensor", V(sorted[0]), I(0), I(0), I(-1), I(1));
  /* the last one has no successor: not in (in, with invert) */
  alloy_value *marks = D(d, "aten.constant_pad_nd.default", V(D(d, cmp, V(next), V(here))),
                         d_int_list(d, (const int64_t[]){0, 1}, 2), I(invert));
  /* back to the order of cat(elements, test_elements): every place is
   * written once, the order being a permutation */
  alloy_value *mask = D(d, "aten.scatter.src", V(marks), I(0), V(sorted[1]), V(marks));
  alloy_value *mine = D(d, "aten.slice.Tensor", V(mask), I(0), I(0), I(n), I(1));
  d_out(d, 0, view_as_out(d, mine, 0));
}

/* diag_embed(offset, dim1, dim2): the last dim of self laid on a diagonal
 * of an n x n plane, n = its length + |offset|. The plane is built last
 * (rows, then columns: element (i, j) on the diagonal when j - i ==
 * offset, taking self[i] for offset >= 0, self[j] otherwise) and moved to
 * dim1, dim2. */
static void diag_embed(decomp *d) {
  alloy_value *x = self_of(d);
  int64_t offset = d_int(d, 1);
  if (d_failed(d) || !x) return;
  const alloy_value *o = out_type(d, 0);
  int R = d_rank(o), r = d_rank(x);
  int d1 = d_wrap_dim(d, d_int(d, 2), R), d2 = d_wrap_dim(d, d_int(d, 3), R);
  if (r == 0) {
    x = view(d, x, (alloy_dim[]){C(1)}, 1);
    r = 1;
  }
  int64_t k = offset < 0 ? -offset : offset;
  alloy_dim n = d_shape(o)[d1];
  if (k) {
    alloy_dim pad[2] = {C(0), C(k)};
    x = D(d, "aten.constant_pad_nd.default", V(x), d_dim_list(d, pad, 2), I(0));
  }
  alloy_value *rows = D(d, "aten.unsqueeze.default", V(iota(d, n)), I(1));
  alloy_value *on = D(d, "aten.eq.Scalar",
                      V(D(d, "aten.sub.Tensor", V(iota(d, n)), V(rows), I(1))), I(offset));
  alloy_value *vals = D(d, "aten.unsqueeze.default", V(x), I(offset >= 0 ? -1 : -2));
  alloy_value *plane = D(d, "aten.where.self", V(on), V(vals), V(scalar_of(d, I(0), d_dtype(x))));
  int64_t perm[ALLOY_MAX_RANK];
  for (int p = 0, j = 0; p < R; p++) perm[p] = p == d1 ? R - 2 : p == d2 ? R - 1 : j++;
  d_out(d, 0, permute(d, plane, perm, R));
}

/* --- triangle indices -------------------------------------------------------------
 * The lower triangle with an offset is a trapezoid of rows (lengths
 * growing by one) then a rectangle of full rows; the upper one a rectangle
 * then a trapezoid. The k-th element of a trapezoid whose first row has m
 * elements is on row floor(-b + sqrt(b^2 + 2k)), b = m - 1/2 (solving
 * the triangular number for the row), computed in float64 as PyTorch's
 * reference does; a rectangle's is k // col. */

typedef struct tri_sizes {
  int64_t trapezoid, rectangle, first_row;
} tri_sizes;

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static tri_sizes tril_sizes(int64_t row, int64_t col, int64_t offset) {
  tri_sizes t = {0, 0, 0};
  if (row == 0 || col == 0) return t;
  t.first_row = offset > 0 ? min64(col, 1 + offset) : row + offset > 0;
  int64_t last_row = max64(0, min64(col, row + offset));
  int64_t rows_all = max64(0, min64(row, row + offset));
  int64_t rows_trapezoid = last_row - t.first_row + 1;
  t.trapezoid = (t.first_row + last_row) * rows_trapezoid / 2;
  t.rectangle = max64(0, (rows_all - rows_trapezoid) * col);
  return t;
}

static tri_sizes triu_sizes(int64_t row, int64_t col, int64_t offset) {
  tri_sizes t = {0, 0, 0};
  if (row == 0 || col == 0) return t;
  t.first_row = offset > 0 ? max64(0, col - offset) : col;
  t.rectangle = max64(0, min64(row, -offset) * col);
  tri_sizes below = tril_sizes(row, col, offset - 1);
  t.trapezoid = row * col - (below.trapezoid + below.rectangle) - t.rectangle;
  return t;
}

/* Rows and columns of the trapezoid's n elements (sign -1: the upper
 * triangle's, whose rows shrink), in dtype dt. */
static void trapezoid(decomp *d, int64_t n, double b, int sign, int64_t first, alloy_dtype dt,
                      alloy_value **rows, alloy_value **cols) {
  alloy_value *k = D(d, "aten.arange.start_step", I(0), I(n), I(1), DT(ALLOY_F64));
  alloy_value *disc = D(d, "aten.add.Tensor", V(D(d, "aten.mul.Tensor", V(k), F(2.0 * sign))),
                        F(b * b), I(1));
  alloy_value *root = D(d, "aten.mul.Tensor", V(D(d, "aten.sqrt.default", V(disc))), F(sign));
  alloy_value *r = D(d, "aten.floor.default", V(D(d, "aten.add.Tensor", V(root), F(-b), I(1))));
  /* elements before row r: (2 first - 1 + sign r) r / 2 */
  alloy_value *before = D(d, "aten.mul.Tensor",
                          V(D(d, "aten.mul.Tensor",
                              V(D(d, "aten.add.Tensor", V(D(d, "aten.mul.Tensor", V(r), F(sign))),
                                  F(2.0 * (double)first - 1), I(1))),
                              V(r))),
                          F(0.5));
  *cols = cast(d, D(d, "aten.floor.default", V(D(d, "aten.sub.Tensor", V(k), V(before), I(1)))), dt);
  *rows = cast(d, r, dt);
}

/* Rows and columns of a rectangle's n elements, col wide. */
static void rectangle(decomp *d, int64_t n, int64_t col, alloy_dtype dt, alloy_value **rows,
                      alloy_value **cols) {
  alloy_value *k = D(d, "aten.arange.start_step", I(0), I(n), I(1), DT(dt));
  *rows = D(d, "aten.div.Scalar_mode", V(k), I(col), S("floor"));
  *cols = D(d, "aten.remainder.Scalar", V(k), I(col));
}

static void triangle_out(decomp *d, alloy_value *r0, alloy_value *r1, alloy_value *c0,
                         alloy_value *c1) {
  alloy_value *rows = D(d, "aten.cat.default", LIST(V(r0), V(r1)), I(0));
  alloy_value *cols = D(d, "aten.cat.default", LIST(V(c0), V(c1)), I(0));
  d_out(d, 0, D(d, "aten.stack.default", LIST(V(rows), V(cols)), I(0)));
}

/* tril_indices(row, col, offset): the trapezoid's rows shifted down past
 * the rows a negative offset leaves empty, then the rectangle. */
static void tril_indices(decomp *d) {
  int64_t row = d_int(d, 0), col = d_int(d, 1), offset = d_int(d, 2);
  alloy_dtype dt = d_dtype(out_type(d, 0));
  if (d_failed(d)) return;
  tri_sizes t = tril_sizes(row, col, offset);
  if (t.trapezoid + t.rectangle == 0) {
    d_out(d, 0, D(d, "aten.full.default", LIST(I(2), I(0)), I(0), DT(dt)));
    return;
  }
  int64_t row_offset = max64(0, -offset);
  alloy_value *r1, *c1, *r2, *c2;
  trapezoid(d, t.trapezoid, (double)t.first_row - 0.5, 1, t.first_row, dt, &r1, &c1);
  r1 = D(d, "aten.add.Tensor", V(r1), I(row_offset), I(1));
  rectangle(d, t.rectangle, col, dt, &r2, &c2);
  r2 = D(d, "aten.add.Tensor", V(r2), I(col - t.first_row + 1 + row_offset), I(1));
  triangle_out(d, r1, r2, c1, c2);
}

/* triu_indices(row, col, offset): the rectangle of full rows a negative
 * offset gives, then the trapezoid, shifted right by a positive offset. */
static void triu_indices(decomp *d) {
  int64_t row = d_int(d, 0), col = d_int(d, 1), offset = d_int(d, 2);
  alloy_dtype dt = d_dtype(out_type(d, 0));
  if (d_failed(d)) return;
  tri_sizes t = triu_sizes(row, col, offset);
  if (t.trapezoid + t.rectangle == 0) {
    d_out(d, 0, D(d, "aten.full.default", LIST(I(2), I(0)), I(0), DT(dt)));
    return;
  }
  alloy_value *r1, *c1, *r2, *c2;
  rectangle(d, t.rectangle, col, dt, &r2, &c2);
  trapezoid(d, t.trapezoid, -0.5 - (double)t.first_row, -1, t.first_row, dt, &r1, &c1);
  r1 = D(d, "aten.add.Tensor", V(r1), I(t.rectangle / col), I(1));
  c1 = D(d, "aten.add.Tensor", V(c1), I(max64(0, offset)), I(1));
  triangle_out(d, r2, r1, c2, c1);
}

/* --- scatters into views ----------------------------------------------------------*/

static void as_strided_copy(decomp *d) {
  d_out(d, 0, D(d, "aten.as_strided.default", V(self_of(d)), same_arg(d, 1), same_arg(d, 2),
                same_arg(d, 3)));
}

/* as_strided_scatter(src, size, stride, storage_offset): the element of
 * the view at (i0, i1, ...) is storage element offset + sum ik * stride_k
 * of self (contiguous, as every value is): an index_put into self's flat
 * form. */
static void as_strided_scatter(decomp *d) {
  alloy_value *x = self_of(d), *src = d_tensor(d, 1);
  alloy_dim size[ALLOY_MAX_RANK], stride[ALLOY_MAX_RANK];
  int r = d_dims(d, 2, size, ALLOY_MAX_RANK), ns = d_dims(d, 3, stride, ALLOY_MAX_RANK);
  if (d_failed(d) || !x || !src) return;
  if (r != ns) return d_decline(d, "%d sizes for %d strides", r, ns);
  alloy_value *pos = D(d, "aten.scalar_tensor.default",
                       d_is_none(d, 4) ? I(0) : SYM(d_dim(d, 4)), DT(ALLOY_I64));
  for (int k = 0; k < r; k++) {
    alloy_value *step = D(d, "aten.mul.Tensor", V(iota(d, size[k])), SYM(stride[k]));
    pos = D(d, "aten.add.Tensor", V(pos), V(along(d, step, k, r)));
  }
  alloy_value *flat = view(d, x, (alloy_dim[]){C(-1)}, 1);
  alloy_value *idx = view(d, pos, (alloy_dim[]){C(-1)}, 1);
  alloy_value *vals = view(d, src, (alloy_dim[]){C(-1)}, 1);
  alloy_value *y = D(d, "aten.index_put.default", V(flat), LIST(V(idx)), V(vals), B(false));
  d_out(d, 0, view(d, y, d_shape(x), d_rank(x)));
}

/* diagonal_scatter(src, offset, dim1, dim2): with dim1, dim2 moved last,
 * element (i, j) with j - i == offset takes src's element i (offset >= 0)
 * or j (offset < 0); the rest keep self's. */
static void diagonal_scatter(decomp *d) {
  alloy_value *x = self_of(d), *src = d_tensor(d, 1);
  int64_t offset = d_int(d, 2);
  if (d_failed(d) || !x || !src) return;
  int R = d_rank(x), d1 = d_wrap_dim(d, d_int(d, 3), R), d2 = d_wrap_dim(d, d_int(d, 4), R);
  if (d_failed(d)) return;
  if (d1 == d2) return d_decline(d, "dim1 == dim2");
  int64_t perm[ALLOY_MAX_RANK], back[ALLOY_MAX_RANK];
  int j = 0;
  for (int k = 0; k < R; k++)
    if (k != d1 && k != d2) perm[j++] = k;
  perm[R - 2] = d1;
  perm[R - 1] = d2;
  for (int k = 0; k < R; k++) back[perm[k]] = k;
  alloy_value *xp = permute(d, x, perm, R);
  alloy_dim n1 = d_shape(x)[d1], n2 = d_shape(x)[d2];
  alloy_dim want = offset >= 0 ? n1 : n2, have = d_shape(src)[d_rank(src) - 1];
  alloy_dim extra = alloy_dim_sub(d_symtab(d), want, have);
  if (!(alloy_dim_is_const(extra) && extra.value == 0)) {
    alloy_dim pad[2] = {C(0), extra};
    src = D(d, "aten.constant_pad_nd.default", V(src), d_dim_list(d, pad, 2), I(0));
  }
  alloy_value *rows = D(d, "aten.unsqueeze.default", V(iota(d, n1)), I(1));
  alloy_value *on = D(d, "aten.eq.Scalar",
                      V(D(d, "aten.sub.Tensor", V(iota(d, n2)), V(rows), I(1))), I(offset));
  alloy_value *vals = D(d, "aten.unsqueeze.default", V(src), I(offset >= 0 ? -1 : -2));
  alloy_value *y = D(d, "aten.where.self", V(on), V(vals), V(xp));
  d_out(d, 0, permute(d, cast(d, y, d_dtype(x)), back, R));
}

/* put(index, source, accumulate): an index_put into the flat form. */
static void put(decomp *d) {
  alloy_value *x = self_of(d), *index = d_tensor(d, 1), *src = d_tensor(d, 2);
  if (!x || !index || !src) return;
  alloy_value *flat = view(d, x, (alloy_dim[]){C(-1)}, 1);
  alloy_value *idx = view(d, index, (alloy_dim[]){C(-1)}, 1);
  alloy_value *vals = view(d, src, (alloy_dim[]){C(-1)}, 1);
  alloy_value *y = D(d, "aten.index_put.default", V(flat), LIST(V(idx)), V(vals), same_arg(d, 3));
  d_out(d, 0, view(d, y, d_shape(x), d_rank(x)));
}

/* --- the Scalar overloads of searching ------------------------------------------------
 * The number is a wrapped number in PyTorch: it and the tensor promote to
 * a common dtype (as torch.result_type with a Python scalar), in which the
 * number becomes a 0-dim tensor and the comparisons are made. */

static alloy_dtype with_number(decomp *d, int i, alloy_value *t) {
  const alloy_arg *a = d_arg(d, i);
  alloy_dtype nt = a->kind == ALLOY_ARG_FLOAT ? ALLOY_F64 : a->kind == ALLOY_ARG_BOOL ? ALLOY_BOOL : ALLOY_I64;
  alloy_promo_operand ops[2] = {{d_rank(t) ? ALLOY_PROMO_TENSOR : ALLOY_PROMO_ZERO_DIM, d_dtype(t)},
                                {ALLOY_PROMO_SCALAR, nt}};
  return alloy_result_type(ops, 2);
}

/* isin.Scalar_Tensor(element, test_elements, ...) and .Tensor_Scalar(
 * elements, test_element, ...): isin with the number as a 0-dim tensor. */
static void isin_scalar(decomp *d, int num) {
  alloy_value *t = d_tensor(d, 1 - num);
  if (!t) return;
  alloy_value *v = scalar_of(d, same_arg(d, num), with_number(d, num, t));
  alloy_value *e = num ? t : v, *test = num ? v : t;
  d_out(d, 0, D(d, "aten.isin.Tensor_Tensor", V(e), V(test), same_arg(d, 2), same_arg(d, 3)));
}
static void isin_scalar_tensor(decomp *d) { isin_scalar(d, 0); }
static void isin_tensor_scalar(decomp *d) { isin_scalar(d, 1); }

/* bucketize.Scalar(self, boundaries, out_int32, right) and
 * searchsorted.Scalar(sorted_sequence, self, out_int32, right, side,
 * sorter): both in the common dtype, then the Tensor overload. */
static void bucketize_scalar(decomp *d) {
  alloy_value *b = d_tensor(d, 1);
  if (!b) return;
  alloy_dtype t = with_number(d, 0, b);
  d_out(d, 0, D(d, "aten.bucketize.Tensor", V(scalar_of(d, same_arg(d, 0), t)), V(cast(d, b, t)),
                same_arg(d, 2), same_arg(d, 3)));
}

static void searchsorted_scalar(decomp *d) {
  alloy_value *b = d_tensor(d, 0);
  if (!b) return;
  alloy_dtype t = with_number(d, 1, b);
  d_out(d, 0, D(d, "aten.searchsorted.Tensor", V(cast(d, b, t)), V(scalar_of(d, same_arg(d, 1), t)),
                same_arg(d, 2), same_arg(d, 3), same_arg(d, 4), same_arg(d, 5)));
}

/* take_along_dim(indices, dim): without dim, the flattened self gathered
 * at the flattened indices; with, both expanded to the result's shape
 * (self keeping its size at dim, indices theirs), then gather. */
static void take_along_dim(decomp *d) {
  alloy_value *x = self_of(d), *idx = d_tensor(d, 1);
  if (!x || !idx) return;
  if (d_is_none(d, 2)) {
    alloy_value *flat = view(d, x, (alloy_dim[]){C(-1)}, 1);
    alloy_value *at = view(d, idx, (alloy_dim[]){C(-1)}, 1);
    return d_out(d, 0, D(d, "aten.gather.default", V(flat), I(0), V(at)));
  }
  int r = d_rank(x), dim = d_wrap_dim(d, d_int(d, 2), r);
  if (d_failed(d)) return;
  const alloy_value *o = out_type(d, 0);
  alloy_dim xs[ALLOY_MAX_RANK];
  for (int k = 0; k < r; k++) xs[k] = k == dim ? d_shape(x)[k] : d_shape(o)[k];
  alloy_value *xb = D(d, "aten.expand.default", V(x), d_dim_list(d, xs, r));
  alloy_value *ib = D(d, "aten.expand.default", V(idx), d_dim_list(d, d_shape(o), r));
  d_out(d, 0, D(d, "aten.gather.default", V(xb), I(dim), V(ib)));
}

/* scatter.value_reduce(dim, index, value, reduce): scatter.reduce of a
 * tensor of index's shape holding value in self's dtype. */
static void scatter_value_reduce(decomp *d) {
  alloy_value *x = self_of(d), *idx = d_tensor(d, 2);
  if (!x || !idx) return;
  alloy_value *src = D(d, "aten.full.default", d_dim_list(d, d_shape(idx), d_rank(idx)), same_arg(d, 3),
                       DT(d_dtype(x)));
  d_out(d, 0, D(d, "aten.scatter.reduce", V(x), same_arg(d, 1), V(idx), V(src), same_arg(d, 4)));
}

/* one_hot(num_classes): self (as a new last dim) compared with 0 ..
 * num_classes - 1, as int64; -1 classes (max + 1) depends on the data. */
static void one_hot(decomp *d) {
  alloy_value *x = self_of(d);
  alloy_dim n = d_dim(d, 1);
  if (d_failed(d) || !x) return;
  if (alloy_dim_is_const(n) && n.value == -1)
    return d_decline(d, "the number of classes depends on the data (num_classes=-1)");
  alloy_value *hit = D(d, "aten.eq.Tensor", V(D(d, "aten.unsqueeze.default", V(x), I(-1))), V(iota(d, n)));
  d_out(d, 0, cast(d, hit, ALLOY_I64));
}

const decomp_rule decomp_rules_shape[] = {
    /* views and reshapes */
    {"aten.reshape.default", reshape, DECOMP_TO_CORE},
    {"aten._unsafe_view.default", reshape, DECOMP_TO_CORE},
    {"aten.view_copy.default", reshape, DECOMP_TO_CORE},
    {"aten.flatten.using_ints", reshape, DECOMP_TO_CORE},
    {"aten.resize_as.default", resize_as, DECOMP_TO_CORE},
    {"aten.unflatten.int", reshape, DECOMP_TO_CORE},
    {"aten.transpose.int", transpose, DECOMP_TO_CORE},
    {"aten.transpose_copy.int", transpose, DECOMP_TO_CORE},
    {"aten.t.default", t, DECOMP_TO_CORE},
    {"aten.t_copy.default", t, DECOMP_TO_CORE},
    {"aten.detach.default", detach, DECOMP_TO_CORE},
    {"aten.permute_copy.default", permute_copy, DECOMP_TO_CORE},
    {"aten.expand_copy.default", expand_copy, DECOMP_TO_CORE},
    {"aten.unsqueeze_copy.default", unsqueeze_copy, DECOMP_TO_CORE},
    {"aten.squeeze.default", squeeze_all, DECOMP_TO_CORE},
    {"aten.squeeze_copy.default", squeeze_all, DECOMP_TO_CORE},
    {"aten.squeeze_copy.dim", squeeze_dim, DECOMP_TO_CORE},
    {"aten.diagonal_copy.default", diagonal_copy, DECOMP_TO_CORE},
    {"aten.narrow.default", narrow, DECOMP_TO_CORE},
    {"aten.narrow_copy.default", narrow, DECOMP_TO_CORE},
    {"aten.unfold.default", unfold, DECOMP_TO_CORE},
    {"aten.unfold_copy.default", unfold, DECOMP_TO_CORE},
    /* casts */
    {"aten.to.dtype", to_dtype, DECOMP_TO_CORE},
    {"aten.to.dtype_layout", to_dtype_layout, DECOMP_TO_CORE},
    {"aten.to.device", to_device, DECOMP_TO_CORE},
    {"aten.type_as.default", type_as, DECOMP_TO_CORE},
    {"aten.contiguous.default", contiguous, DECOMP_TO_CORE},
    {"aten.expand_as.default", expand_as, DECOMP_TO_CORE},
    {"aten._assert_tensor_metadata.default", assert_tensor_metadata, DECOMP_TO_CORE},
    /* splits and joins */
    {"aten.split.Tensor", split, DECOMP_TO_CORE},
    {"aten.unsafe_split.Tensor", split, DECOMP_TO_CORE},
    {"aten.chunk.default", split, DECOMP_TO_CORE},
    {"aten.split_with_sizes_copy.default", split, DECOMP_TO_CORE},
    {"aten.unbind.int", unbind, DECOMP_TO_CORE},
    {"aten.unbind_copy.int", unbind, DECOMP_TO_CORE},
    {"aten.stack.default", stack, DECOMP_TO_CORE},
    {"aten.hstack.default", hstack, DECOMP_TO_CORE},
    {"aten.vstack.default", vstack, DECOMP_TO_CORE},
    {"aten._chunk_cat.default", chunk_cat, DECOMP_TO_CORE},
    {"aten.block_diag.default", block_diag, DECOMP_TO_CORE},
    /* repeating, rolling, rotating */
    {"aten.repeat_interleave.self_int", repeat_interleave_int, DECOMP_TO_CORE},
    {"aten.repeat_interleave.self_Tensor", repeat_interleave_self_tensor, DECOMP_TO_CORE},
    {"aten.repeat_interleave.Tensor", repeat_interleave_tensor, DECOMP_TO_CORE},
    {"aten.roll.default", roll, DECOMP_TO_CORE},
    {"aten.rot90.default", rot90, DECOMP_TO_CORE},
    {"aten.diff.default", diff, DECOMP_TO_CORE},
    /* factories */
    {"aten.arange.default", arange, DECOMP_TO_CORE},
    {"aten.ones.default", ones, DECOMP_TO_CORE},
    {"aten.zeros.default", zeros, DECOMP_TO_CORE},
    {"aten.new_ones.default", new_ones, DECOMP_TO_CORE},
    {"aten.new_zeros.default", new_zeros, DECOMP_TO_CORE},
    {"aten.new_full.default", new_full, DECOMP_TO_CORE},
    {"aten.ones_like.default", ones_like, DECOMP_TO_CORE},
    {"aten.zeros_like.default", zeros_like, DECOMP_TO_CORE},
    {"aten.zero.default", zero, DECOMP_TO_CORE},
    {"aten.eye.default", eye, DECOMP_TO_CORE},
    {"aten.eye.m", eye_m, DECOMP_TO_CORE},
    {"aten.linspace.default", linspace, DECOMP_TO_CORE},
    {"aten.linspace.Scalar_Tensor", linspace, DECOMP_TO_CORE},
    {"aten.linspace.Tensor_Scalar", linspace, DECOMP_TO_CORE},
    {"aten.linspace.Tensor_Tensor", linspace, DECOMP_TO_CORE},
    {"aten.logspace.default", logspace, DECOMP_TO_CORE},
    {"aten.logspace.Scalar_Tensor", logspace, DECOMP_TO_CORE},
    {"aten.logspace.Tensor_Scalar", logspace, DECOMP_TO_CORE},
    {"aten.logspace.Tensor_Tensor", logspace, DECOMP_TO_CORE},
    /* masks and selections */
    {"aten.tril.default", tril, DECOMP_TO_CORE},
    {"aten.triu.default", triu, DECOMP_TO_CORE},
    {"aten.trace.default", trace, DECOMP_TO_CORE},
    {"aten.take.default", take, DECOMP_TO_CORE},
    {"aten.masked_fill.Scalar", masked_fill_scalar, DECOMP_TO_CORE},
    {"aten.masked_fill.Tensor", masked_fill_tensor, DECOMP_TO_CORE},
    {"aten.index_fill.int_Scalar", index_fill, DECOMP_TO_CORE},
    {"aten.index_fill.int_Tensor", index_fill, DECOMP_TO_CORE},
    {"aten.index_add.default", index_add, DECOMP_TO_CORE},
    {"aten.index_copy.default", index_copy, DECOMP_TO_CORE},
    {"aten._unsafe_masked_index.default", unsafe_masked_index, DECOMP_TO_CORE},
    {"aten._unsafe_masked_index_put_accumulate.default", unsafe_masked_index_put_accumulate,
     DECOMP_TO_CORE},
    {"aten.isin.Tensor_Tensor", isin, DECOMP_TO_CORE},
    {"aten.isin.Scalar_Tensor", isin_scalar_tensor, DECOMP_TO_CORE},
    {"aten.isin.Tensor_Scalar", isin_tensor_scalar, DECOMP_TO_CORE},
    {"aten.bucketize.Scalar", bucketize_scalar, DECOMP_TO_CORE},
    {"aten.searchsorted.Scalar", searchsorted_scalar, DECOMP_TO_CORE},
    {"aten.take_along_dim.default", take_along_dim, DECOMP_TO_CORE},
    {"aten.one_hot.default", one_hot, DECOMP_TO_CORE},
    {"aten.scatter.value_reduce", scatter_value_reduce, DECOMP_TO_CORE},
    {"aten.diag_embed.default", diag_embed, DECOMP_TO_CORE},
    {"aten.tril_indices.default", tril_indices, DECOMP_TO_CORE},
    {"aten.triu_indices.default", triu_indices, DECOMP_TO_CORE},
    /* scatters into views */
    {"aten.as_strided_copy.default", as_strided_copy, DECOMP_TO_CORE},
    {"aten.as_strided_scatter.default", as_strided_scatter, DECOMP_TO_CORE},
    {"aten.diagonal_scatter.default", diagonal_scatter, DECOMP_TO_CORE},
    {"aten.put.default", put, DECOMP_TO_CORE},
    {NULL, NULL, 0},
};
