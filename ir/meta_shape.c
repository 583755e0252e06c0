/*
 * ir/meta_shape.c: shape functions of the view and shape-manipulation ops
 * (see ir/meta.h): view/reshape, expand, permute, squeeze/unsqueeze, slice,
 * select, narrow, cat/stack and the splits, flip/roll/repeat, transposes,
 * diagonals, as_strided, unfold, the paddings, pixel and channel shuffles,
 * im2col/col2im, the *_copy and *_scatter variants and the dtype casts.
 *
 * Sizes stay symbolic: every size is computed with the symbol table's
 * algebra, and a check that the ranges cannot decide (ALLOY_UNKNOWN) is
 * accepted, as PyTorch would add a guard there; only what is provably wrong
 * is an error. A size must be concrete only where the op needs a number
 * (how many outputs a split or unbind has). PyTorch 2.11's meta functions
 * and C++ shape checks are the reference for semantics and messages.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/meta.h"

/* --- small helpers --------------------------------------------------------*/

/* Text of a dim or shape for messages; the struct lets a call's result be
 * used directly as a printf argument. */
typedef struct text {
  char s[256];
} text;

static text dim_text(alloy_dim d) {
  text t;
  alloy_dim_print(d, t.s, sizeof t.s);
  return t;
}

static text shape_text(const alloy_dim *shape, int rank) {
  text t;
  meta_shape_text(shape, rank, t.s, sizeof t.s);
  return t;
}

static text value_shape_text(const alloy_value *v) {
  return shape_text(v->shape, v->rank);
}

static alloy_dim C(int64_t v) { return alloy_dim_const(v); }

static bool is_const(alloy_dim d, int64_t v) {
  return alloy_dim_is_const(d) && d.value == v;
}

/* Provably false / provably true relations; unknown counts as neither. */
static bool never_eq(alloy_meta *m, alloy_dim a, alloy_dim b) {
  return alloy_dim_eq(m->st, a, b) == ALLOY_FALSE;
}
static bool surely_eq(alloy_meta *m, alloy_dim a, alloy_dim b) {
  return alloy_dim_eq(m->st, a, b) == ALLOY_TRUE;
}
static bool surely_lt(alloy_meta *m, alloy_dim a, alloy_dim b) {
  return alloy_dim_lt(m->st, a, b) == ALLOY_TRUE;
}

/* Of two sizes that must be equal, the more informative one. */
static alloy_dim pick_equal(alloy_dim a, alloy_dim b) {
  return alloy_dim_is_const(a) ? a : b;
}

/* The concrete int argument i as a dim index into rank dims. */
static alloy_error *dim_arg(alloy_meta *m, int i, int rank, int *out) {
  int64_t d;
  alloy_error *e = meta_int(m, i, &d);
  return e ? e : meta_wrap_dim(m, i, d, rank, out);
}

static const alloy_value *self_of(alloy_meta *m) { return meta_tensor(m, 0); }

/* A rank-0 value has no shape array at all, hence no plain memcpy. */
static void copy_dims(alloy_dim *out, const alloy_dim *in, int n) {
  if (n > 0) memcpy(out, in, sizeof *out * (size_t)n);
}

/* The shape of a with dim k removed. */
static int drop_dim(const alloy_dim *a, int rank, int k, alloy_dim *out) {
  int r = 0;
  for (int d = 0; d < rank; d++)
    if (d != k) out[r++] = a[d];
  return r;
}

/* A size that must not be negative, as "Trying to create tensor with
 * negative dimension" says in PyTorch. */
static alloy_error *check_sizes_nonneg(alloy_meta *m, int i, const alloy_dim *s,
                                       int n) {
  for (int k = 0; k < n; k++)
    if (surely_lt(m, s[k], C(0)))
      return meta_error(m,
                        "argument '%s': Trying to create tensor with negative "
                        "dimension %s: %s",
                        meta_arg_name(m, i), dim_text(s[k]).s, shape_text(s, n).s);
  return NULL;
}

/* A scatter's src must have exactly the shape of the view it is written to. */
static alloy_error *check_src(alloy_meta *m, int i, const alloy_dim *want, int rank) {
  const alloy_value *src = meta_tensor(m, i);
  bool ok = src->rank == rank;
  for (int d = 0; ok && d < rank; d++) ok = !never_eq(m, src->shape[d], want[d]);
  if (ok) return NULL;
  return meta_error(m,
                    "expected src to have a size equal to the slice of self. src "
                    "size = %s, slice size = %s",
                    value_shape_text(src).s, shape_text(want, rank).s);
}

/* A view's shape from self (v) and the op's arguments from position b on:
 * b is 1 for the view op and its *_copy, 2 for its *_scatter twin (whose
 * argument 1 is src). */
typedef alloy_error *view_shape_fn(alloy_meta *m, const alloy_value *v, int b, alloy_dim *out,
                                   int *rank);

/* A view op or its *_copy: the view's shape, in self's dtype. */
static alloy_error *view_result(alloy_meta *m, view_shape_fn *shape) {
  const alloy_value *v = self_of(m);
  alloy_dim out[ALLOY_MAX_RANK];
  int r;
  alloy_error *e = shape(m, v, 1, out, &r);
  return e ? e : meta_out_tensor(m, 0, v->dtype, out, r);
}

/* A *_scatter op (self, src, the view's arguments): src must have the
 * view's shape; the result is self's. */
static alloy_error *scatter_result(alloy_meta *m, view_shape_fn *shape) {
  const alloy_value *v = self_of(m);
  alloy_dim out[ALLOY_MAX_RANK];
  int r;
  alloy_error *e = shape(m, v, 2, out, &r);
  if (!e) e = check_src(m, 1, out, r);
  return e ? e : meta_out_like(m, 0, v, v->dtype);
}

/* torch.result_type over the tensors of list argument i. */
static alloy_error *list_result_type(alloy_meta *m, int i, alloy_dtype *out) {
  int n = meta_tensor_count(m, i);
  alloy_promo_operand *ops = malloc(sizeof *ops * (size_t)(n ? n : 1));
  if (!ops) return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  for (int k = 0; k < n; k++) {
    const alloy_value *t = meta_tensor_at(m, i, k);
    ops[k].kind = !t ? ALLOY_PROMO_ABSENT
                  : t->rank ? ALLOY_PROMO_TENSOR
                            : ALLOY_PROMO_ZERO_DIM;
    ops[k].dtype = t ? t->dtype : ALLOY_F32;
  }
  *out = alloy_result_type(ops, n);
  free(ops);
  return NULL;
}

/* Every item of list argument i is a tensor (the schema says Tensor[], but
 * a malformed node could hold None). */
static alloy_error *list_tensors(alloy_meta *m, int i, int *n) {
  *n = meta_tensor_count(m, i);
  for (int k = 0; k < *n; k++)
    if (!meta_tensor_at(m, i, k))
      return meta_error(m, "argument '%s': item %d is not a tensor",
                        meta_arg_name(m, i), k);
  return NULL;
}

/* --- same shape -----------------------------------------------------------*/

enum { LIKE_ANY = 0, LIKE_MATRIX = 1 };

/* alias, detach, clone, tril/triu: the output is self's type. */
static alloy_error *meta_like(alloy_meta *m) {
  const alloy_value *v = self_of(m);
  if (m->param == LIKE_MATRIX && v->rank < 2)
    return meta_error(m, "input tensor must have at least 2 dimensions, got %d",
                      (int)v->rank);
  return meta_out_like(m, 0, v, v->dtype);
}

/* copy/copy_: src is broadcast into self, whose type the result keeps. */
static alloy_error *meta_copy(alloy_meta *m) {
  const alloy_value *v = self_of(m), *src = meta_tensor(m, 1);
  bool ok = src->rank <= v->rank;
  for (int k = 0; ok && k < src->rank; k++) {
    alloy_dim s = src->shape[src->rank - 1 - k], d = v->shape[v->rank - 1 - k];
    ok = !never_eq(m, s, C(1)) || !never_eq(m, s, d);
  }
  if (!ok)
    return meta_error(m, "argument 'src' of shape %s cannot be broadcast to self's shape %s",
                      value_shape_text(src).s, value_shape_text(v).s);
  return meta_out_like(m, 0, v, v->dtype);
}

/* _to_copy, to.dtype, to.dtype_layout: argument 1 is the dtype (None keeps
 * self's); layout, device and memory format do not change the type. */
/* The to.* overloads; param is the position of their dtype argument. */
static alloy_error *meta_to(alloy_meta *m) {
  const alloy_value *v = self_of(m);
  return meta_out_like(m, 0, v, meta_dtype_or(m, m->param, v->dtype));
}

/* --- view / reshape -------------------------------------------------------*/

/* PyTorch's infer_size: at most one -1, which becomes numel // (product of
 * the others), kept symbolic. */
static alloy_error *infer_size(alloy_meta *m, int i, alloy_dim numel,
                               alloy_dim *out, int *rank) {
  alloy_error *e = meta_dims(m, i, out, ALLOY_MAX_RANK, rank);
  if (e) return e;
  int infer = -1;
  alloy_dim known = C(1);
  for (int k = 0; k < *rank; k++) {
    if (is_const(out[k], -1)) {
      if (infer >= 0)
        return meta_error(m, "argument '%s': only one dimension can be inferred",
                          meta_arg_name(m, i));
      infer = k;
    } else if (surely_lt(m, out[k], C(0))) {
      return meta_error(m, "argument '%s': invalid shape dimension %s",
                        meta_arg_name(m, i), dim_text(out[k]).s);
    } else {
      known = alloy_dim_mul(m->st, known, out[k]);
    }
  }
  if (infer >= 0) {
    if (surely_eq(m, known, C(0)))
      return meta_error(m,
                        "cannot reshape tensor of %s elements into shape %s because "
                        "the unspecified dimension size -1 can be any value and is "
                        "ambiguous",
                        dim_text(numel).s, shape_text(out, *rank).s);
    if (never_eq(m, alloy_dim_mod(m->st, numel, known), C(0)))
      return meta_error(m, "shape '%s' is invalid for input of size %s",
                        shape_text(out, *rank).s, dim_text(numel).s);
    out[infer] = alloy_dim_floordiv(m->st, numel, known);
  } else if (never_eq(m, known, numel)) {
    return meta_error(m, "shape '%s' is invalid for input of size %s",
                      shape_text(out, *rank).s, dim_text(numel).s);
  }
  return meta_sym_check(m);
}

/* view, view_copy, reshape: argument 1 is the new shape. */
static alloy_error *meta_view(alloy_meta *m) {
  const alloy_value *v = self_of(m);
  alloy_dim out[ALLOY_MAX_RANK];
  int r;
  alloy_error *e = infer_size(m, 1, meta_numel(m, v->shape, v->rank), out, &r);
  return e ? e : meta_out_tensor(m, 0, v->dtype, out, r);
}

/* flatten.using_ints(start_dim, end_dim). */
static alloy_error *meta_flatten(alloy_meta *m) {
  const alloy_value *v = self_of(m);
  int s, t;
  alloy_error *e = dim_arg(m, 1, v->rank, &s);
  if (!e) e = dim_arg(m, 2, v->rank, &t);
  if (e) return e;
  if (v->rank == 0) return meta_out_tensor(m, 0, v->dtype, (alloy_dim[]){C(1)}, 1);
  if (s > t)
    return meta_error(m, "flatten() has invalid args: start_dim cannot come after end_dim");
  alloy_dim out[ALLOY_MAX_RANK];
  int r = 0;
  for (int d = 0; d < s; d++) out[r++] = v->shape[d];
  out[r++] = meta_numel(m, v->shape + s, t - s + 1);
  for (int d = t + 1; d < v->rank; d++) out[r++] = v->shape[d];
  return meta_out_tensor(m, 0, v->dtype, out, r);
}

/* resize_(size): self takes the new shape; resize_as(the_template) (param
 * 1) the template's. (The functional resize(size) has none: functionalizing
 * resize_ through it would write its result back in self's old shape.) */
static alloy_error *meta_resize(alloy_meta *m) {
  const alloy_value *v = self_of(m);
  if (m->param) {
    const alloy_value *t = meta_tensor(m, 1);
    return meta_out_tensor(m, 0, v->dtype, t->shape, t->rank);
  }
  alloy_dim out[ALLOY_MAX_RANK];
  int r;
  alloy_error *e = meta_dims(m, 1, out, ALLOY_MAX_RANK, &r);
  if (!e) e = check_sizes_nonneg(m, 1, out, r);
  return e ? e : meta_out_tensor(m, 0, v->dtype, out, r);
}

/* --- expand / permute / squeeze ------------------------------------------*/

/* expand, expand_copy: -1 keeps the size, new dims are added in front. */
static alloy_error *meta_expand(alloy_meta *m) {
  const alloy_value *v = self_of(m);
  alloy_dim sz[ALLOY_MAX_RANK], out[ALLOY_MAX_RANK];
  int n;
  alloy_error *e = meta_dims(m, 1, sz, ALLOY_MAX_RANK, &n);
  if (e) return e;
  if (n < v->rank)
    return meta_error(m,
                      "the number of sizes provided (%d) must be greater or equal "
                      "to the number of dimensions in the tensor (%d)",
                      n, (int)v->rank);
  int lead = n - v->rank;
  for (int k = 0; k < n; k++) {
    alloy_dim t = sz[k];
    int j = k - lead;
    if (is_const(t, -1)) {
      if (j < 0)
        return meta_error(m,
                          "The expanded size of the tensor (-1) isn't allowed in a "
                          "leading, non-existing dimension %d",
                          k);
      out[k] = v->shape[j];
      continue;
    }
    if (surely_lt(m, t, C(0)))
      return meta_error(m, "Trying to create tensor with negative dimension %s: %s",
                        dim_text(t).s, shape_text(sz, n).s);
    if (j < 0) {
      out[k] = t;
      continue;
    }
    alloy_dim in = v->shape[j];
    if (never_eq(m, in, C(1))) {
      /* A non-singleton size is kept, so target and size must agree. */
      if (never_eq(m, in, t))
        return meta_error(m,
                          "The expanded size of the tensor (%s) must match the "
                          "existing size (%s) at non-singleton dimension %d.  "
                          "Target sizes: %s.  Tensor sizes: %s",
                          dim_text(t).s, dim_text(in).s, k, shape_text(sz, n).s,
                          value_shape_text(v).s);
      out[k] = pick_equal(in, t);
    } else {
      out[k] = t;
    }
  }
  return meta_out_tensor(m, 0, v->dtype, out, n);
}

/* permute, permute_copy. */
static alloy_error *meta_permute(alloy_meta *m) {
  const alloy_value *v = self_of(m);
  int64_t dims[ALLOY_MAX_RANK];
  int n;
  alloy_error *e = meta_ints(m, 1, dims, ALLOY_MAX_RANK, &n);
  if (e) return e;
  if (n != v->rank)
    return meta_error(m,
                      "number of dimensions in the tensor input does not match the "
                      "length of the desired ordering of dimensions i.e. input.dim() "
                      "= %d is not equal to len(dims) = %d",
                      (int)v->rank, n);
  bool seen[ALLOY_MAX_RANK] = {0};
  alloy_dim out[ALLOY_MAX_RANK];
  for (int k = 0; k < n; k++) {
    int d;
    if ((e = meta_wrap_dim(m, 1, dims[k], v->rank, &d))) return e;
    if (seen[d]) return meta_error(m, "permute(): duplicate dims are not allowed.");
    seen[d] = true;
    out[k] = v->shape[d];
  }
  return meta_out_tensor(m, 0, v->dtype, out, n);
}

enum { SQUEEZE_ALL = 0, SQUEEZE_DIM, SQUEEZE_DIMS };

/* squeeze (all overloads): a dim goes only when it is provably 1, as a
 * symbolic size that may be 1 cannot be removed without a guard. */
static alloy_error *meta_squeeze(alloy_meta *m) {
  const alloy_value *v = self_of(m);
  bool pick[ALLOY_MAX_RANK];
  alloy_error *e;
  for (int d = 0; d < ALLOY_MAX_RANK; d++) pick[d] = m->param == SQUEEZE_ALL;
  if (m->param == SQUEEZE_DIM) {
    int d;
    if ((e = dim_arg(m, 1, v->rank, &d))) return e;
    pick[d] = true;
  } else if (m->param == SQUEEZE_DIMS) {
    int64_t dims[ALLOY_MAX_RANK];
    int n;
    if ((e = meta_ints(m, 1, dims, ALLOY_MAX_RANK, &n))) return e;
    for (int k = 0; k < n; k++) {
      int d;
      if ((e = meta_wrap_dim(m, 1, dims[k], v->rank, &d))) return e;
      pick[d] = true;
    }
  }
  alloy_dim out[ALLOY_MAX_RANK];
  int r = 0;
  for (int d = 0; d < v->rank; d++)
    if (!pick[d] || !surely_eq(m, v->shape[d], C(1))) out[r++] = v->shape[d];
  return meta_out_tensor(m, 0, v->dtype, out, r);
}

/* unsqueeze, unsqueeze_copy. */
static alloy_error *meta_unsqueeze(alloy_meta *m) {
  const alloy_value *v = self_of(m);
  int d;
  alloy_error *e = dim_arg(m, 1, v->rank + 1, &d);
  if (e) return e;
  if (v->rank + 1 > ALLOY_MAX_RANK)
    return meta_error(m, "output rank %d exceeds %d", v->rank + 1, ALLOY_MAX_RANK);
  alloy_dim out[ALLOY_MAX_RANK];
  for (int k = 0, j = 0; k <= v->rank; k++) out[k] = k == d ? C(1) : v->shape[j++];
  return meta_out_tensor(m, 0, v->dtype, out, v->rank + 1);
}

/* --- slice / select / narrow ---------------------------------------------*/

/* Python's clamping of a slice bound into [0, n]: negative bounds count
 * from the end. A symbolic bound whose sign the ranges cannot decide is
 * taken as non-negative (exported graphs slice with non-negative symbolic
 * bounds; PyTorch would guard on it). */
static alloy_dim clamp_bound(alloy_meta *m, alloy_dim b, alloy_dim n) {
  if (surely_lt(m, b, C(0))) return alloy_dim_max(m->st, alloy_dim_add(m->st, n, b), C(0));
  int64_t hi;
  alloy_dim_range(n, NULL, &hi);
  /* x[a:] stores end = INT64_MAX: that is n, whatever n's range. */
  if (alloy_dim_is_const(b) && b.value >= hi) return n;
  return alloy_dim_min(m->st, b, n);
}

/* The shape of self[dim, start:end:step], arguments from position b on
 * (dim, start, end, step). */
static alloy_error *slice_shape(alloy_meta *m, const alloy_value *v, int b,
                                alloy_dim *out, int *rank) {
  if (v->rank == 0) return meta_error(m, "slice() cannot be applied to a 0-dim tensor.");
  int d;
  alloy_error *e = dim_arg(m, b, v->rank, &d);
  if (e) return e;
  alloy_dim n = v->shape[d], step = meta_dim(m, b + 3);
  if (surely_lt(m, step, C(1))) return meta_error(m, "slice step must be positive");
  alloy_dim start = meta_is_none(m, b + 1) ? C(0) : clamp_bound(m, meta_dim(m, b + 1), n);
  alloy_dim end = meta_is_none(m, b + 2) ? n : meta_dim(m, b + 2);
  /* A negative end may land before 0: the max below gives an empty slice. */
  end = surely_lt(m, end, C(0)) ? alloy_dim_add(m->st, n, end) : clamp_bound(m, end, n);
  alloy_dim len = alloy_dim_max(m->st, alloy_dim_sub(m->st, end, start), C(0));
  copy_dims(out, v->shape, v->rank);
  out[d] = is_const(step, 1) ? len : alloy_dim_ceildiv(m->st, len, step);
  *rank = v->rank;
  return meta_sym_check(m);
}

static alloy_error *meta_slice(alloy_meta *m) { return view_result(m, slice_shape); }
static alloy_error *meta_slice_scatter(alloy_meta *m) { return scatter_result(m, slice_shape); }

/* The shape of self.select(dim, index), arguments at b and b + 1. */
static alloy_error *select_shape(alloy_meta *m, const alloy_value *v, int b,
                                 alloy_dim *out, int *rank) {
  if (v->rank == 0) return meta_error(m, "select() cannot be applied to a 0-dim tensor.");
  int d;
  alloy_error *e = dim_arg(m, b, v->rank, &d);
  if (e) return e;
  alloy_dim n = v->shape[d], index = meta_dim(m, b + 1);
  if (surely_lt(m, index, alloy_dim_sub(m->st, C(0), n)) ||
      alloy_dim_le(m->st, n, index) == ALLOY_TRUE)
    return meta_error(m, "select(): index %s out of range for tensor of size %s at dimension %d",
                      dim_text(index).s, value_shape_text(v).s, d);
  *rank = drop_dim(v->shape, v->rank, d, out);
  return meta_sym_check(m);
}

static alloy_error *meta_select(alloy_meta *m) { return view_result(m, select_shape); }
static alloy_error *meta_select_scatter(alloy_meta *m) { return scatter_result(m, select_shape); }

/* narrow_copy(dim, start, length). */
static alloy_error *meta_narrow_copy(alloy_meta *m) {
  const alloy_value *v = self_of(m);
  if (v->rank == 0) return meta_error(m, "narrow() cannot be applied to a 0-dim tensor.");
  int d;
  alloy_error *e = dim_arg(m, 1, v->rank, &d);
  if (e) return e;
  alloy_dim n = v->shape[d], start = meta_dim(m, 2), len = meta_dim(m, 3);
  if (surely_lt(m, len, C(0))) return meta_error(m, "narrow(): length must be non-negative.");
  if (surely_lt(m, start, C(0))) start = alloy_dim_add(m->st, start, n);
  if (surely_lt(m, start, C(0)) || surely_lt(m, n, start))
    return meta_error(m, "start out of range (expected to be in range of [%s, %s], but got %s)",
                      dim_text(alloy_dim_sub(m->st, C(0), n)).s, dim_text(n).s,
                      dim_text(meta_dim(m, 2)).s);
  if (surely_lt(m, n, alloy_dim_add(m->st, start, len)))
    return meta_error(m, "start (%s) + length (%s) exceeds dimension size (%s).",
                      dim_text(start).s, dim_text(len).s, dim_text(n).s);
  alloy_dim out[ALLOY_MAX_RANK];
  copy_dims(out, v->shape, v->rank);
  out[d] = len;
  return meta_out_tensor(m, 0, v->dtype, out, v->rank);
}

/* --- cat / stack / block_diag / _chunk_cat --------------------------------*/

/* cat: 1-D tensors of size 0 are skipped (PyTorch's legacy rule); the
 * dtype is torch.result_type over all inputs. */
static alloy_error *meta_cat(alloy_meta *m) {
  int n;
  alloy_error *e = list_tensors(m, 0, &n);
  if (e) return e;
  if (n == 0) return meta_error(m, "expected a non-empty list of Tensors");
  alloy_dtype dt;
  if ((e = list_result_type(m, 0, &dt))) return e;
  const alloy_value *ref = NULL;
  for (int k = 0; k < n; k++) {
    const alloy_value *t = meta_tensor_at(m, 0, k);
    if (t->rank == 0)
      return meta_error(m, "zero-dimensional tensor (at position %d) cannot be concatenated", k);
    if (!ref && !(t->rank == 1 && surely_eq(m, t->shape[0], C(0)))) ref = t;
  }
  int d;
  if ((e = dim_arg(m, 1, ref ? ref->rank : 1, &d))) return e;
  if (!ref) return meta_out_tensor(m, 0, dt, (alloy_dim[]){C(0)}, 1);
  alloy_dim out[ALLOY_MAX_RANK];
  copy_dims(out, ref->shape, ref->rank);
  out[d] = C(0);
  for (int k = 0; k < n; k++) {
    const alloy_value *t = meta_tensor_at(m, 0, k);
    if (t->rank == 1 && surely_eq(m, t->shape[0], C(0))) continue;
    if (t->rank != ref->rank)
      return meta_error(m, "Tensors must have same number of dimensions: got %d and %d",
                        (int)ref->rank, (int)t->rank);
    for (int j = 0; j < t->rank; j++) {
      if (j == d) continue;
      if (never_eq(m, out[j], t->shape[j]))
        return meta_error(m,
                          "Sizes of tensors must match except in dimension %d. "
                          "Expected size %s but got size %s for tensor number %d in "
                          "the list.",
                          d, dim_text(out[j]).s, dim_text(t->shape[j]).s, k);
      out[j] = pick_equal(out[j], t->shape[j]);
    }
    out[d] = alloy_dim_add(m->st, out[d], t->shape[d]);
  }
  return meta_out_tensor(m, 0, dt, out, ref->rank);
}

/* stack: equal shapes, a new dim of the list's length. */
static alloy_error *meta_stack(alloy_meta *m) {
  int n;
  alloy_error *e = list_tensors(m, 0, &n);
  if (e) return e;
  if (n == 0) return meta_error(m, "stack expects a non-empty TensorList");
  alloy_dtype dt;
  if ((e = list_result_type(m, 0, &dt))) return e;
  const alloy_value *ref = meta_tensor_at(m, 0, 0);
  alloy_dim shape[ALLOY_MAX_RANK];
  copy_dims(shape, ref->shape, ref->rank);
  for (int k = 1; k < n; k++) {
    const alloy_value *t = meta_tensor_at(m, 0, k);
    bool ok = t->rank == ref->rank;
    for (int j = 0; ok && j < t->rank; j++) {
      ok = !never_eq(m, shape[j], t->shape[j]);
      shape[j] = pick_equal(shape[j], t->shape[j]);
    }
    if (!ok)
      return meta_error(m,
                        "stack expects each tensor to be equal size, but got %s at entry 0 and %s "
                        "at entry %d",
                        value_shape_text(ref).s, value_shape_text(t).s, k);
  }
  int d;
  if ((e = dim_arg(m, 1, ref->rank + 1, &d))) return e;
  if (ref->rank + 1 > ALLOY_MAX_RANK)
    return meta_error(m, "output rank %d exceeds %d", ref->rank + 1, ALLOY_MAX_RANK);
  alloy_dim out[ALLOY_MAX_RANK];
  for (int k = 0, j = 0; k <= ref->rank; k++) out[k] = k == d ? C(n) : shape[j++];
  return meta_out_tensor(m, 0, dt, out, ref->rank + 1);
}

/* block_diag: a 0-d tensor is a 1x1 block, a 1-d one a single row. */
static alloy_error *meta_block_diag(alloy_meta *m) {
  int n;
  alloy_error *e = list_tensors(m, 0, &n);
  if (e) return e;
  alloy_dtype dt = ALLOY_F32;
  if (n && (e = list_result_type(m, 0, &dt))) return e;
  /* torch.block_diag() of nothing is an empty 1x0 float tensor. */
  alloy_dim rows = C(n ? 0 : 1), cols = C(0);
  for (int k = 0; k < n; k++) {
    const alloy_value *t = meta_tensor_at(m, 0, k);
    if (t->rank > 2)
      return meta_error(m,
                        "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input %d "
                        "has %d dimensions",
                        k, (int)t->rank);
    rows = alloy_dim_add(m->st, rows, t->rank == 2 ? t->shape[0] : C(1));
    cols = alloy_dim_add(m->st, cols, t->rank ? t->shape[t->rank - 1] : C(1));
  }
  return meta_out_tensor(m, 0, dt, (alloy_dim[]){rows, cols}, 2);
}

/* _chunk_cat(tensors, dim, num_chunks): each tensor is padded at dim to a
 * multiple of num_chunks, viewed as [..., num_chunks, -1] and the views are
 * concatenated at dim + 1. */
static alloy_error *meta_chunk_cat(alloy_meta *m) {
  int n;
  int64_t chunks, dim;
  alloy_error *e = list_tensors(m, 0, &n);
  if (!e) e = meta_int(m, 1, &dim);
  if (!e) e = meta_int(m, 2, &chunks);
  if (e) return e;
  if (chunks < 1) return meta_error(m, "_chunk_cat expects positive num_chunks");
  if (n == 0) return meta_error(m, "_chunk_cat expects a non-empty input tensor list");
  const alloy_value *ref = meta_tensor_at(m, 0, 0);
  bool same_rank = true;
  for (int k = 0; k < n; k++) {
    const alloy_value *t = meta_tensor_at(m, 0, k);
    if (t->rank == 0) return meta_error(m, "_chunk_cat expects non-scalar input tensors");
    if (surely_eq(m, meta_numel(m, t->shape, t->rank), C(0)))
      return meta_error(m, "_chunk_cat expects non-empty tensor");
    if (t->dtype != ref->dtype)
      return meta_error(m, "_chunk_cat expects all input tensors with the same dtype");
    same_rank &= t->rank == ref->rank;
  }
  int d;
  if (same_rank) {
    if ((e = meta_wrap_dim(m, 1, dim, ref->rank, &d))) return e;
  } else {
    if (dim < 0)
      return meta_error(m,
                        "_chunk_cat expects non-negative dim when input tensors have different "
                        "ndims");
    for (int k = 0; k < n; k++)
      if (dim >= meta_tensor_at(m, 0, k)->rank)
        return meta_error(m, "_chunk_cat expects dim < ndim for all input tensors");
    d = (int)dim;
  }
  if (d + 2 > ALLOY_MAX_RANK)
    return meta_error(m, "output rank %d exceeds %d", d + 2, ALLOY_MAX_RANK);
  alloy_dim out[ALLOY_MAX_RANK], total = C(0);
  copy_dims(out, ref->shape, d);
  for (int k = 0; k < n; k++) {
    const alloy_value *t = meta_tensor_at(m, 0, k);
    for (int j = 0; j < d; j++) {
      if (never_eq(m, out[j], t->shape[j]))
        return meta_error(m,
                          "_chunk_cat expects same sizes of 0,...,dim-1 dimensions for all "
                          "tensors");
      out[j] = pick_equal(out[j], t->shape[j]);
    }
    alloy_dim per = alloy_dim_ceildiv(m->st, t->shape[d], C(chunks));
    per = alloy_dim_mul(m->st, per, meta_numel(m, t->shape + d + 1, t->rank - d - 1));
    total = alloy_dim_add(m->st, total, per);
  }
  out[d] = C(chunks);
  out[d + 1] = total;
  return meta_out_tensor(m, 0, ref->dtype, out, d + 2);
}

/* --- split / unbind (Tensor[] results) -----------------------------------*/

/* Writes one output per size in sizes, self's shape with dim d replaced. */
static alloy_error *split_outputs(alloy_meta *m, const alloy_value *v, int d,
                                  const alloy_dim *sizes, int n) {
  alloy_error *e = meta_set_num_outputs(m, n);
  alloy_dim out[ALLOY_MAX_RANK];
  copy_dims(out, v->shape, v->rank);
  for (int k = 0; k < n && !e; k++) {
    out[d] = sizes[k];
    e = meta_out_tensor(m, k, v->dtype, out, v->rank);
  }
  return e;
}

/* A number of outputs must be concrete: the node's arity depends on it. */
static alloy_error *count_of(alloy_meta *m, alloy_dim count, const char *what,
                             int64_t *out) {
  if (!alloy_dim_is_const(count))
    return meta_error(m, "%s: the number of outputs, %s, must be a concrete integer",
                      what, dim_text(count).s);
  if (count.value > META_MAX_OUTPUTS)
    return meta_error(m, "%s: %lld outputs are more than supported", what,
                      (long long)count.value);
  *out = count.value;
  return NULL;
}

/* split.Tensor, unsafe_split.Tensor(split_size, dim). */
static alloy_error *meta_split(alloy_meta *m) {
  const alloy_value *v = self_of(m);
  if (v->rank == 0) return meta_error(m, "split expects at least a 1-dimensional tensor");
  int d;
  alloy_error *e = dim_arg(m, 2, v->rank, &d);
  if (e) return e;
  alloy_dim n = v->shape[d], size = meta_dim(m, 1);
  if (surely_lt(m, size, C(0)))
    return meta_error(m, "split expects split_size be non-negative, but got split_size=%s",
                      dim_text(size).s);
  if (surely_eq(m, size, C(0))) {
    if (never_eq(m, n, C(0)))
      return meta_error(m,
                        "split_size can only be 0 if dimension size is 0, but got dimension size "
                        "of %s",
                        dim_text(n).s);
    return split_outputs(m, v, d, &n, 1);
  }
  alloy_dim count = alloy_dim_max(m->st, alloy_dim_ceildiv(m->st, n, size), C(1));
  int64_t k = 1;
  if ((e = meta_sym_check(m)) || (e = count_of(m, count, "split", &k))) return e;
  alloy_dim *sizes = malloc(sizeof *sizes * (size_t)k);
  if (!sizes) return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  for (int64_t i = 0; i + 1 < k; i++) sizes[i] = size;
  sizes[k - 1] = alloy_dim_sub(m->st, n, alloy_dim_mul(m->st, size, C(k - 1)));
  e = split_outputs(m, v, d, sizes, (int)k);
  free(sizes);
  return e;
}

/* split_with_sizes, split_with_sizes_copy(split_sizes, dim). */
static alloy_error *meta_split_with_sizes(alloy_meta *m) {
  const alloy_value *v = self_of(m);
  if (v->rank == 0) return meta_error(m, "split expects at least a 1-dimensional tensor");
  int d;
  alloy_error *e = dim_arg(m, 2, v->rank, &d);
  if (e) return e;
  /* meta_tensor_count is the length of any list argument. */
  int n = meta_tensor_count(m, 1) > 0 ? meta_tensor_count(m, 1) : 1;
  alloy_dim *sizes = malloc(sizeof *sizes * (size_t)n);
  if (!sizes) return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  e = meta_dims(m, 1, sizes, n, &n);
  alloy_dim sum = C(0);
  for (int k = 0; k < n && !e; k++) {
    if (surely_lt(m, sizes[k], C(0)))
      e = meta_error(m,
                     "split_with_sizes expects split_sizes have only non-negative entries, but got "
                     "split_sizes=%s",
                     shape_text(sizes, n).s);
    sum = alloy_dim_add(m->st, sum, sizes[k]);
  }
  if (!e && never_eq(m, sum, v->shape[d]))
    e = meta_error(m,
                   "split_with_sizes expects split_sizes to sum exactly to %s (input "
                   "tensor's size at dimension %d), but got split_sizes=%s",
                   dim_text(v->shape[d]).s, d, shape_text(sizes, n).s);
  if (!e) e = split_outputs(m, v, d, sizes, n);
  free(sizes);
  return e;
}

/* unbind, unbind_copy(dim). */
static alloy_error *meta_unbind(alloy_meta *m) {
  const alloy_value *v = self_of(m);
  if (v->rank == 0) return meta_error(m, "Dimension specified as 0 but tensor has no dimensions");
  int d;
  int64_t n = 0;
  alloy_error *e = dim_arg(m, 1, v->rank, &d);
  if (!e) e = count_of(m, v->shape[d], "unbind", &n);
  if (!e) e = meta_set_num_outputs(m, n);
  alloy_dim out[ALLOY_MAX_RANK];
  int r = drop_dim(v->shape, v->rank, d, out);
  for (int k = 0; k < n && !e; k++) e = meta_out_tensor(m, k, v->dtype, out, r);
  return e;
}

/* --- flip / roll / repeat / transpose -------------------------------------*/

/* Wraps the dims of int[] argument i and rejects repeats. */
static alloy_error *distinct_dims(alloy_meta *m, int i, int rank, int *dims, int *n) {
  int64_t raw[ALLOY_MAX_RANK];
  alloy_error *e = meta_ints(m, i, raw, ALLOY_MAX_RANK, n);
  bool seen[ALLOY_MAX_RANK] = {0};
  for (int k = 0; k < *n && !e; k++) {
    if ((e = meta_wrap_dim(m, i, raw[k], rank, &dims[k]))) break;
    if (seen[dims[k]])
      e = meta_error(m, "dim %d appears multiple times in the list of dims", dims[k]);
    seen[dims[k]] = true;
  }
  return e;
}

static alloy_error *meta_flip(alloy_meta *m) {
  const alloy_value *v = self_of(m);
  int dims[ALLOY_MAX_RANK], n;
  alloy_error *e = distinct_dims(m, 1, v->rank, dims, &n);
  return e ? e : meta_out_like(m, 0, v, v->dtype);
}

/* roll(shifts, dims): no dims means rolling the flattened tensor. */
static alloy_error *meta_roll(alloy_meta *m) {
  const alloy_value *v = self_of(m);
  alloy_dim shifts[ALLOY_MAX_RANK];
  int64_t dims[ALLOY_MAX_RANK];
  int ns, nd, d;
  alloy_error *e = meta_dims(m, 1, shifts, ALLOY_MAX_RANK, &ns);
  if (!e) e = meta_ints(m, 2, dims, ALLOY_MAX_RANK, &nd);
  if (e) return e;
  if (ns == 0) return meta_error(m, "`shifts` required");
  if (!(nd == 0 && ns == 1) && ns != nd)
    return meta_error(m, "shifts and dimensions must align. shifts: %d, dims:%d", ns, nd);
  for (int k = 0; k < nd; k++)
    if ((e = meta_wrap_dim(m, 2, dims[k], v->rank, &d))) return e;
  return meta_out_like(m, 0, v, v->dtype);
}

static alloy_error *meta_repeat(alloy_meta *m) {
  const alloy_value *v = self_of(m);
  alloy_dim rep[ALLOY_MAX_RANK], out[ALLOY_MAX_RANK];
  int n;
  alloy_error *e = meta_dims(m, 1, rep, ALLOY_MAX_RANK, &n);
  if (e) return e;
  if (n < v->rank)
    return meta_error(m,
                      "Number of dimensions of repeat dims can not be smaller than "
                      "number of dimensions of tensor");
  int lead = n - v->rank;
  for (int k = 0; k < n; k++)
    out[k] = k < lead ? rep[k] : alloy_dim_mul(m->st, v->shape[k - lead], rep[k]);
  if ((e = check_sizes_nonneg(m, 1, out, n))) return e;
  return meta_out_tensor(m, 0, v->dtype, out, n);
}

/* transpose.int, transpose_copy.int(dim0, dim1). */
static alloy_error *meta_transpose(alloy_meta *m) {
  const alloy_value *v = self_of(m);
  int a, b;
  alloy_error *e = dim_arg(m, 1, v->rank, &a);
  if (!e) e = dim_arg(m, 2, v->rank, &b);
  if (e) return e;
  alloy_dim out[ALLOY_MAX_RANK];
  copy_dims(out, v->shape, v->rank);
  if (v->rank) {
    out[a] = v->shape[b];
    out[b] = v->shape[a];
  }
  return meta_out_tensor(m, 0, v->dtype, out, v->rank);
}

/* t, t_copy: a transpose of the last two dims of a tensor of rank <= 2. */
static alloy_error *meta_t(alloy_meta *m) {
  const alloy_value *v = self_of(m);
  if (v->rank > 2)
    return meta_error(m, "t() expects a tensor with <= 2 dimensions, but self is %dD",
                      (int)v->rank);
  alloy_dim out[2];
  for (int k = 0; k < v->rank; k++) out[k] = v->shape[v->rank - 1 - k];
  return meta_out_tensor(m, 0, v->dtype, out, v->rank);
}

/* rot90(k, dims): odd quarter turns swap the two dims. */
static alloy_error *meta_rot90(alloy_meta *m) {
  const alloy_value *v = self_of(m);
  int64_t k, raw[ALLOY_MAX_RANK];
  int n, a, b;
  alloy_error *e = meta_int(m, 1, &k);
  if (!e) e = meta_ints(m, 2, raw, ALLOY_MAX_RANK, &n);
  if (e) return e;
  if (n != 2) return meta_error(m, "expected total rotation dims == 2, but got dims = %d", n);
  if (v->rank < 2)
    return meta_error(m, "expected total dims >= 2, but got total dims = %d", (int)v->rank);
  if ((e = meta_wrap_dim(m, 2, raw[0], v->rank, &a)) ||
      (e = meta_wrap_dim(m, 2, raw[1], v->rank, &b)))
    return e;
  if (a == b)
    return meta_error(m, "expected rotation dims to be different, but got dim0 = %d and dim1 = %d",
                      a, b);
  alloy_dim out[ALLOY_MAX_RANK];
  copy_dims(out, v->shape, v->rank);
  if (((k % 4) + 4) % 4 % 2) {
    out[a] = v->shape[b];
    out[b] = v->shape[a];
  }
  return meta_out_tensor(m, 0, v->dtype, out, v->rank);
}

/* --- diagonals ------------------------------------------------------------*/

/* The shape of self.diagonal(offset, dim1, dim2), arguments from b on. */
static alloy_error *diagonal_shape(alloy_meta *m, const alloy_value *v, int b,
                                   alloy_dim *out, int *rank) {
  int64_t offset, raw1, raw2;
  int d1, d2;
  alloy_error *e = meta_int(m, b, &offset);
  if (!e) e = meta_int(m, b + 1, &raw1);
  if (!e) e = meta_int(m, b + 2, &raw2);
  if (!e) e = meta_wrap_dim(m, b + 1, raw1, v->rank, &d1);
  if (!e) e = meta_wrap_dim(m, b + 2, raw2, v->rank, &d2);
  if (e) return e;
  if (d1 == d2 || v->rank < 2)
    return meta_error(m, "diagonal dimensions cannot be identical %lld, %lld",
                      (long long)raw1, (long long)raw2);
  alloy_dim n1 = v->shape[d1], n2 = v->shape[d2], len;
  if (offset >= 0)
    len = alloy_dim_min(m->st, n1, alloy_dim_sub(m->st, n2, C(offset)));
  else
    len = alloy_dim_min(m->st, alloy_dim_add(m->st, n1, C(offset)), n2);
  len = alloy_dim_max(m->st, len, C(0));
  int r = 0;
  for (int d = 0; d < v->rank; d++)
    if (d != d1 && d != d2) out[r++] = v->shape[d];
  out[r++] = len;
  *rank = r;
  return meta_sym_check(m);
}

static alloy_error *meta_diagonal(alloy_meta *m) { return view_result(m, diagonal_shape); }
static alloy_error *meta_diagonal_scatter(alloy_meta *m) { return scatter_result(m, diagonal_shape); }

/* diag_embed(offset, dim1, dim2): the last dim becomes a square of side
 * size + |offset| at dim1 and dim2 of the result. */
static alloy_error *meta_diag_embed(alloy_meta *m) {
  const alloy_value *v = self_of(m);
  int64_t offset, raw1, raw2;
  int d1, d2, r = v->rank + 1;
  alloy_error *e = meta_int(m, 1, &offset);
  if (!e) e = meta_int(m, 2, &raw1);
  if (!e) e = meta_int(m, 3, &raw2);
  if (!e) e = meta_wrap_dim(m, 2, raw1, r, &d1);
  if (!e) e = meta_wrap_dim(m, 3, raw2, r, &d2);
  if (e) return e;
  if (d1 == d2)
    return meta_error(m, "diagonal dimensions cannot be identical %lld, %lld",
                      (long long)raw1, (long long)raw2);
  if (r > ALLOY_MAX_RANK) return meta_error(m, "output rank %d exceeds %d", r, ALLOY_MAX_RANK);
  alloy_dim last = v->rank ? v->shape[v->rank - 1] : C(1);
  alloy_dim side = alloy_dim_add(m->st, last, offset < 0 ? alloy_dim_sub(m->st, C(0), C(offset)) : C(offset));
  alloy_dim out[ALLOY_MAX_RANK];
  for (int k = 0, j = 0; k < r; k++) out[k] = k == d1 || k == d2 ? side : v->shape[j++];
  return meta_out_tensor(m, 0, v->dtype, out, r);
}

/* --- as_strided / unfold ---------------------------------------------------*/

/* size, stride and storage_offset at b, b + 1, b + 2. */
static alloy_error *as_strided_shape(alloy_meta *m, const alloy_value *v, int b, alloy_dim *out,
                                     int *rank) {
  alloy_dim stride[ALLOY_MAX_RANK];
  int ns;
  alloy_error *e = meta_dims(m, b, out, ALLOY_MAX_RANK, rank);
  if (!e) e = meta_dims(m, b + 1, stride, ALLOY_MAX_RANK, &ns);
  if (e) return e;
  if (ns != *rank) return meta_error(m, "mismatch in length of strides and shape");
  for (int k = 0; k < ns; k++)
    if (surely_lt(m, stride[k], C(0)))
      return meta_error(m,
                        "as_strided: Negative strides are not supported at the moment, got "
                        "strides: %s",
                        shape_text(stride, ns).s);
  alloy_dim offset = meta_is_none(m, b + 2) ? C(0) : meta_dim(m, b + 2);
  if (surely_lt(m, offset, C(0)))
    return meta_error(m, "Tensor: invalid storage offset %s", dim_text(offset).s);
  if ((e = check_sizes_nonneg(m, b, out, *rank))) return e;
  /* The storage the window reaches must be one that can exist. */
  return meta_check_window(m, v->dtype, out, stride, *rank, offset);
}

static alloy_error *meta_as_strided(alloy_meta *m) { return view_result(m, as_strided_shape); }
static alloy_error *meta_as_strided_scatter(alloy_meta *m) { return scatter_result(m, as_strided_shape); }

/* unfold, unfold_copy(dimension, size, step): a 0-d tensor is a 1-element
 * row. */
static alloy_error *meta_unfold(alloy_meta *m) {
  const alloy_value *v = self_of(m);
  int d;
  int64_t size, step;
  alloy_error *e = dim_arg(m, 1, v->rank, &d);
  if (!e) e = meta_int(m, 2, &size);
  if (!e) e = meta_int(m, 3, &step);
  if (e) return e;
  alloy_dim max = v->rank ? v->shape[d] : C(1);
  if (surely_lt(m, max, C(size)))
    return meta_error(m, "maximum size for tensor at dimension %d is %s but size is %lld",
                      d, dim_text(max).s, (long long)size);
  if (size < 0) return meta_error(m, "size is %lld but must be >= 0", (long long)size);
  if (step <= 0) return meta_error(m, "step is %lld but must be > 0", (long long)step);
  if (v->rank + 1 > ALLOY_MAX_RANK)
    return meta_error(m, "output rank %d exceeds %d", v->rank + 1, ALLOY_MAX_RANK);
  alloy_dim out[ALLOY_MAX_RANK];
  copy_dims(out, v->shape, v->rank);
  if (v->rank) {
    alloy_dim span = alloy_dim_sub(m->st, max, C(size));
    out[d] = alloy_dim_add(m->st, alloy_dim_floordiv(m->st, span, C(step)), C(1));
  }
  out[v->rank] = C(size);
  return meta_out_tensor(m, 0, v->dtype, out, v->rank + 1);
}

/* --- padding --------------------------------------------------------------*/

/* constant_pad_nd(pad, value): pairs of pads from the last dim backwards;
 * negative pads shrink. */
static alloy_error *meta_constant_pad_nd(alloy_meta *m) {
  const alloy_value *v = self_of(m);
  alloy_dim pad[2 * ALLOY_MAX_RANK + 2];
  int n;
  alloy_error *e = meta_dims(m, 1, pad, 2 * ALLOY_MAX_RANK + 2, &n);
  if (e) return e;
  if (n % 2) return meta_error(m, "Length of pad must be even but instead it equals %d", n);
  if (n / 2 > v->rank)
    return meta_error(m,
                      "Length of pad should be no more than twice the number of "
                      "dimensions of the input. Pad length is %d while the input has "
                      "%d dimensions.",
                      n, (int)v->rank);
  alloy_dim out[ALLOY_MAX_RANK];
  copy_dims(out, v->shape, v->rank);
  for (int k = 0; k < n / 2; k++) {
    int d = v->rank - 1 - k;
    out[d] = alloy_dim_add(m->st, alloy_dim_add(m->st, out[d], pad[2 * k]), pad[2 * k + 1]);
    if (surely_lt(m, out[d], C(0)))
      return meta_error(m,
                        "The input size %s, plus negative padding %s and %s resulted "
                        "in a negative output size, which is invalid. Check dimension "
                        "%d of your input.",
                        dim_text(v->shape[d]).s, dim_text(pad[2 * k]).s,
                        dim_text(pad[2 * k + 1]).s, d);
  }
  return meta_out_tensor(m, 0, v->dtype, out, v->rank);
}

/* The family parameter of the reflection/replication pads: the number of
 * padded dims, plus PAD_REFLECT for reflection (a pad must be smaller than
 * the size it reflects). */
enum { PAD_REFLECT = 16 };

static alloy_error *meta_pad(alloy_meta *m) {
  const alloy_value *v = self_of(m);
  int k = m->param & 15, n;
  bool reflect = m->param & PAD_REFLECT;
  alloy_dim pad[6];
  alloy_error *e = meta_dims(m, 1, pad, 6, &n);
  if (e) return e;
  if (n != 2 * k)
    return meta_error(m, "padding size is expected to be %d, but got: %d", 2 * k, n);
  bool ok = v->rank == k + 1 || v->rank == k + 2;
  for (int d = 1; ok && d < v->rank; d++) ok = !surely_eq(m, v->shape[d], C(0));
  if (!ok)
    return meta_error(m,
                      "Expected %dD or %dD (batch mode) tensor with possibly 0 batch "
                      "size and other non-zero dimensions for input, but got: %s",
                      k + 1, k + 2, value_shape_text(v).s);
  alloy_dim out[ALLOY_MAX_RANK];
  copy_dims(out, v->shape, v->rank);
  for (int j = 0; j < k; j++) {
    int d = v->rank - 1 - j;
    alloy_dim lo = pad[2 * j], hi = pad[2 * j + 1], in = v->shape[d];
    if (reflect && (alloy_dim_le(m->st, in, lo) == ALLOY_TRUE ||
                    alloy_dim_le(m->st, in, hi) == ALLOY_TRUE))
      return meta_error(m,
                        "Argument #4: Padding size should be less than the "
                        "corresponding input dimension, but got: padding (%s, %s) at "
                        "dimension %d of input %s",
                        dim_text(lo).s, dim_text(hi).s, d, value_shape_text(v).s);
    out[d] = alloy_dim_add(m->st, alloy_dim_add(m->st, in, lo), hi);
    if (surely_lt(m, out[d], C(1)))
      return meta_error(m,
                        "input (size %s at dimension %d) is too small. Calculated "
                        "output size: %s",
                        dim_text(in).s, d, dim_text(out[d]).s);
  }
  return meta_out_tensor(m, 0, v->dtype, out, v->rank);
}

/* --- pixel / channel shuffles ---------------------------------------------*/

/* Divides size by f, failing when the division is provably inexact. */
static alloy_error *exact_div(alloy_meta *m, alloy_dim size, alloy_dim f,
                              const char *msg, alloy_dim *out) {
  if (never_eq(m, alloy_dim_mod(m->st, size, f), C(0)))
    return meta_error(m, "%s, but input size %s is not divisible by %s", msg,
                      dim_text(size).s, dim_text(f).s);
  *out = alloy_dim_floordiv(m->st, size, f);
  return meta_sym_check(m);
}

/* pixel_shuffle (param 0) and pixel_unshuffle (param 1) on the last three
 * dims [C, H, W]. */
static alloy_error *meta_pixel_shuffle(alloy_meta *m) {
  const alloy_value *v = self_of(m);
  bool un = m->param;
  const char *name = un ? "pixel_unshuffle" : "pixel_shuffle";
  int64_t f;
  alloy_error *e = meta_int(m, 1, &f);
  if (e) return e;
  if (v->rank < 3)
    return meta_error(m,
                      "%s expects input to have at least 3 dimensions, but got input with %d "
                      "dimension(s)",
                      name, (int)v->rank);
  if (f <= 0)
    return meta_error(m, "%s expects a positive %s, but got %lld", name,
                      un ? "downscale_factor" : "upscale_factor", (long long)f);
  alloy_dim out[ALLOY_MAX_RANK];
  copy_dims(out, v->shape, v->rank);
  alloy_dim *c = &out[v->rank - 3], *h = &out[v->rank - 2], *w = &out[v->rank - 1];
  if (!un) {
    e = exact_div(m, *c, alloy_dim_mul(m->st, C(f), C(f)),
                  "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
                  "square of upscale_factor", c);
    *h = alloy_dim_mul(m->st, *h, C(f));
    *w = alloy_dim_mul(m->st, *w, C(f));
  } else {
    e = exact_div(m, *h, C(f), "pixel_unshuffle expects height to be divisible by downscale_factor",
                  h);
    if (!e) e = exact_div(m, *w, C(f),
                          "pixel_unshuffle expects width to be divisible by downscale_factor", w);
    *c = alloy_dim_mul(m->st, *c, alloy_dim_mul(m->st, C(f), C(f)));
  }
  return e ? e : meta_out_tensor(m, 0, v->dtype, out, v->rank);
}

static alloy_error *meta_channel_shuffle(alloy_meta *m) {
  const alloy_value *v = self_of(m);
  alloy_dim g = meta_dim(m, 1);
  if (v->rank < 3)
    return meta_error(m,
                      "channel_shuffle expects input to have at least 3 dimensions, but got input "
                      "with %d dimension(s)",
                      (int)v->rank);
  if (surely_lt(m, g, C(1)))
    return meta_error(m,
                      "Number of groups to divide channels in must be positive. Value of groups:%s",
                      dim_text(g).s);
  if (never_eq(m, alloy_dim_mod(m->st, v->shape[1], g), C(0)))
    return meta_error(m,
                      "Number of channels must be divisible by groups. Got %s channels and %s "
                      "groups.",
                      dim_text(v->shape[1]).s, dim_text(g).s);
  return meta_out_like(m, 0, v, v->dtype);
}

/* --- im2col / col2im --------------------------------------------------------*/

typedef struct window {
  int64_t kernel[2], dilation[2], padding[2], stride[2];
} window;

/* Reads kernel_size, dilation, padding and stride from b on and checks
 * them as im2col_shape_check does. */
static alloy_error *window_args(alloy_meta *m, int b, window *w) {
  int64_t *f[4] = {w->kernel, w->dilation, w->padding, w->stride};
  for (int k = 0; k < 4; k++) {
    int n;
    alloy_error *e = meta_ints(m, b + k, f[k], 2, &n);
    if (e) return e;
    if (n != 2)
      return meta_error(m, "argument '%s' must have 2 items, got %d", meta_arg_name(m, b + k), n);
  }
  if (w->kernel[0] <= 0 || w->kernel[1] <= 0)
    return meta_error(m,
                      "kernel size should be greater than zero, but got kernel_height: %lld "
                      "kernel_width: %lld",
                      (long long)w->kernel[0], (long long)w->kernel[1]);
  if (w->dilation[0] <= 0 || w->dilation[1] <= 0)
    return meta_error(m,
                      "dilation should be greater than zero, but got dilation_height: %lld "
                      "dilation_width: %lld",
                      (long long)w->dilation[0], (long long)w->dilation[1]);
  if (w->padding[0] < 0 || w->padding[1] < 0)
    return meta_error(m, "padding should be non-negative, but got pad_height: %lld pad_width: %lld",
                      (long long)w->padding[0], (long long)w->padding[1]);
  if (w->stride[0] <= 0 || w->stride[1] <= 0)
    return meta_error(m,
                      "stride should be greater than zero, but got stride_height: %lld "
                      "stride_width: %lld",
                      (long long)w->stride[0], (long long)w->stride[1]);
  return NULL;
}

/* The number of sliding blocks along spatial dim k of a size-n input
 * (symbolic arithmetic: an overflow is the symbol table's error). */
static alloy_dim blocks(alloy_meta *m, const window *w, int k, alloy_dim n) {
  alloy_dim span = alloy_dim_mul(m->st, C(w->dilation[k]), C(w->kernel[k] - 1));
  alloy_dim x = alloy_dim_add(m->st, n, alloy_dim_mul(m->st, C(2), C(w->padding[k])));
  x = alloy_dim_sub(m->st, x, alloy_dim_add(m->st, span, C(1)));
  return alloy_dim_add(m->st, alloy_dim_floordiv(m->st, x, C(w->stride[k])), C(1));
}

/* im2col(kernel_size, dilation, padding, stride): [N?, C, H, W] ->
 * [N?, C*kh*kw, L]. */
static alloy_error *meta_im2col(alloy_meta *m) {
  const alloy_value *v = self_of(m);
  window w;
  alloy_error *e = window_args(m, 1, &w);
  if (e) return e;
  bool ok = v->rank == 3 || v->rank == 4;
  for (int d = v->rank - 3; ok && d < v->rank; d++) ok = !surely_eq(m, v->shape[d], C(0));
  if (!ok)
    return meta_error(m,
                      "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                      "and other non-zero dimensions for input, but got: %s",
                      value_shape_text(v).s);
  int b = v->rank - 3;
  alloy_dim bh = blocks(m, &w, 0, v->shape[b + 1]), bw = blocks(m, &w, 1, v->shape[b + 2]);
  if ((e = meta_sym_check(m))) return e;
  if (surely_lt(m, bh, C(1)) || surely_lt(m, bw, C(1)))
    return meta_error(m,
                      "Given input with spatial size (%s, %s), kernel_size=(%lld, %lld), "
                      "dilation=(%lld, %lld), padding=(%lld, %lld), calculated shape of "
                      "the array of sliding blocks as (%s, %s), but its components must "
                      "be at least one.",
                      dim_text(v->shape[b + 1]).s, dim_text(v->shape[b + 2]).s,
                      (long long)w.kernel[0], (long long)w.kernel[1],
                      (long long)w.dilation[0], (long long)w.dilation[1],
                      (long long)w.padding[0], (long long)w.padding[1], dim_text(bh).s,
                      dim_text(bw).s);
  alloy_dim out[3];
  int r = 0;
  if (b) out[r++] = v->shape[0];
  out[r++] = alloy_dim_mul(m->st, v->shape[b], alloy_dim_mul(m->st, C(w.kernel[0]), C(w.kernel[1])));
  out[r++] = alloy_dim_mul(m->st, bh, bw);
  return meta_out_tensor(m, 0, v->dtype, out, r);
}

/* col2im(output_size, kernel_size, dilation, padding, stride): [N?,
 * C*kh*kw, L] -> [N?, C, oh, ow]. */
static alloy_error *meta_col2im(alloy_meta *m) {
  const alloy_value *v = self_of(m);
  alloy_dim osz[2];
  int n;
  window w;
  alloy_error *e = meta_dims(m, 1, osz, 2, &n);
  if (!e) e = window_args(m, 2, &w);
  if (e) return e;
  if (n != 2) return meta_error(m, "argument 'output_size' must have 2 items, got %d", n);
  bool ok = v->rank == 2 || v->rank == 3;
  for (int d = v->rank - 2; ok && d < v->rank; d++) ok = !surely_eq(m, v->shape[d], C(0));
  if (!ok)
    return meta_error(m,
                      "Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                      "batch size and non-zero dimensions for input, but got: %s",
                      value_shape_text(v).s);
  int b = v->rank - 2;
  alloy_dim kk = alloy_dim_mul(m->st, C(w.kernel[0]), C(w.kernel[1]));
  alloy_dim planes = v->shape[b];
  if ((e = meta_sym_check(m))) return e;
  if (never_eq(m, alloy_dim_mod(m->st, planes, kk), C(0)))
    return meta_error(m,
                      "Expected size of input's dimension %d to be divisible by the "
                      "product of kernel_size, but got input.size(%d)=%s and "
                      "kernel_size=(%lld, %lld)",
                      b, b, dim_text(planes).s, (long long)w.kernel[0], (long long)w.kernel[1]);
  alloy_dim bh = blocks(m, &w, 0, osz[0]), bw = blocks(m, &w, 1, osz[1]);
  alloy_dim nblocks = alloy_dim_mul(m->st, bh, bw);
  if ((e = meta_sym_check(m))) return e;
  if (surely_lt(m, bh, C(1)) || surely_lt(m, bw, C(1)))
    return meta_error(m,
                      "Given output_size=(%s, %s), kernel_size=(%lld, %lld), "
                      "dilation=(%lld, %lld), padding=(%lld, %lld), stride=(%lld, %lld), "
                      "calculated shape of the array of sliding blocks as (%s, %s), "
                      "which is too small (non-positive)",
                      dim_text(osz[0]).s, dim_text(osz[1]).s, (long long)w.kernel[0],
                      (long long)w.kernel[1], (long long)w.dilation[0],
                      (long long)w.dilation[1], (long long)w.padding[0],
                      (long long)w.padding[1], (long long)w.stride[0],
                      (long long)w.stride[1], dim_text(bh).s, dim_text(bw).s);
  if (never_eq(m, v->shape[b + 1], nblocks))
    return meta_error(m,
                      "expected size of input's dimension %d to match the calculated "
                      "number of sliding blocks %s * %s = %s, but got input.size(%d)=%s.",
                      b + 1, dim_text(bh).s, dim_text(bw).s, dim_text(nblocks).s, b + 1,
                      dim_text(v->shape[b + 1]).s);
  alloy_dim out[4];
  int r = 0;
  if (b) out[r++] = v->shape[0];
  out[r++] = alloy_dim_floordiv(m->st, planes, kk);
  out[r++] = osz[0];
  out[r++] = osz[1];
  return meta_out_tensor(m, 0, v->dtype, out, r);
}

/* --- repeat_interleave / diff ----------------------------------------------*/

/* repeat_interleave.Tensor(repeats, output_size): the length is the sum of
 * repeats, known only from data unless output_size gives it. */
static alloy_error *meta_repeat_interleave(alloy_meta *m) {
  const alloy_value *rep = self_of(m);
  if (rep->rank != 1)
    return meta_error(m, "repeat_interleave only accept 1D vector as repeat");
  if (rep->dtype != ALLOY_I64 && rep->dtype != ALLOY_I32)
    return meta_error(m, "repeats has to be Long or Int tensor, got %s",
                      alloy_dtype_name(rep->dtype));
  alloy_dim len = meta_is_none(m, 1) ? meta_unbacked(m) : meta_dim(m, 1);
  if (surely_lt(m, len, C(0)))
    return meta_error(m, "argument 'output_size' must be non-negative, got %s", dim_text(len).s);
  return meta_out_tensor(m, 0, rep->dtype, &len, 1);
}

/* diff(n, dim, prepend, append): prepend and append are concatenated at dim
 * (with cat's promotion), then n differences remove n elements (down to 0).
 * Bool differences are logical xor and stay bool. */
static alloy_error *meta_diff(alloy_meta *m) {
  const alloy_value *v = self_of(m);
  int64_t n;
  int d;
  if (v->rank == 0) return meta_error(m, "diff expects input to be at least one-dimensional");
  alloy_error *e = meta_int(m, 1, &n);
  if (!e) e = dim_arg(m, 2, v->rank, &d);
  if (e) return e;
  if (n < 0) return meta_error(m, "order must be non-negative but got %lld", (long long)n);
  alloy_dim out[ALLOY_MAX_RANK];
  copy_dims(out, v->shape, v->rank);
  alloy_promo_operand ops[3] = {meta_promo_operand(m, 0)};
  for (int i = 3; i <= 4; i++) {
    const alloy_value *t = meta_tensor(m, i);
    if (!t) continue;
    if (t->rank != v->rank)
      return meta_error(m, "diff expects prepend or append to be the same dimension as input");
    for (int j = 0; j < v->rank; j++)
      if (j != d && never_eq(m, t->shape[j], v->shape[j]))
        return meta_error(m,
                          "diff expects the shape of tensor to prepend or append to "
                          "match that of input except along the differencing "
                          "dimension; input.size(%d) = %s, but got tensor.size(%d) = %s",
                          j, dim_text(v->shape[j]).s, j, dim_text(t->shape[j]).s);
    if (n == 0) continue; /* diff with n = 0 returns self untouched */
    ops[i - 2] = meta_promo_operand(m, i);
    out[d] = alloy_dim_add(m->st, out[d], t->shape[d]);
  }
  out[d] = alloy_dim_max(m->st, alloy_dim_sub(m->st, out[d], C(n)), C(0));
  return meta_out_tensor(m, 0, alloy_result_type(ops, 3), out, v->rank);
}

/* --- the table ------------------------------------------------------------*/

const alloy_meta_entry alloy_meta_shape[] = {
    /* same type as self */
    {"aten.alias.default", meta_like, LIKE_ANY},
    {"aten.detach.default", meta_like, LIKE_ANY},
    {"aten.clone.default", meta_like, LIKE_ANY},
    {"aten.zero.default", meta_like, LIKE_ANY},
    {"aten.tril.default", meta_like, LIKE_MATRIX},
    {"aten.triu.default", meta_like, LIKE_MATRIX},
    {"aten.copy.default", meta_copy, 0},
    {"aten.copy_.default", meta_copy, 0},
    {"aten._to_copy.default", meta_to, 1},
    {"aten.to.dtype", meta_to, 1},
    {"aten.to.dtype_layout", meta_to, 1},
    {"aten.to.device", meta_to, 2},
    /* reshaping */
    {"aten.view.default", meta_view, 0},
    {"aten.view_copy.default", meta_view, 0},
    {"aten.reshape.default", meta_view, 0},
    {"aten.flatten.using_ints", meta_flatten, 0},
    {"aten.resize_.default", meta_resize, 0},
    {"aten.resize_as.default", meta_resize, 1},
    {"aten.expand.default", meta_expand, 0},
    {"aten.expand_copy.default", meta_expand, 0},
    {"aten.permute.default", meta_permute, 0},
    {"aten.permute_copy.default", meta_permute, 0},
    {"aten.squeeze.default", meta_squeeze, SQUEEZE_ALL},
    {"aten.squeeze_copy.default", meta_squeeze, SQUEEZE_ALL},
    {"aten.squeeze.dim", meta_squeeze, SQUEEZE_DIM},
    {"aten.squeeze_.dim", meta_squeeze, SQUEEZE_DIM},
    {"aten.squeeze_copy.dim", meta_squeeze, SQUEEZE_DIM},
    {"aten.squeeze.dims", meta_squeeze, SQUEEZE_DIMS},
    {"aten.unsqueeze.default", meta_unsqueeze, 0},
    {"aten.unsqueeze_copy.default", meta_unsqueeze, 0},
    {"aten.transpose.int", meta_transpose, 0},
    {"aten.transpose_copy.int", meta_transpose, 0},
    {"aten.t.default", meta_t, 0},
    {"aten.t_copy.default", meta_t, 0},
    {"aten.rot90.default", meta_rot90, 0},
    /* indexing views and their scatters */
    {"aten.slice.Tensor", meta_slice, 0},
    {"aten.slice_scatter.default", meta_slice_scatter, 0},
    {"aten.select.int", meta_select, 0},
    {"aten.select_scatter.default", meta_select_scatter, 0},
    {"aten.narrow_copy.default", meta_narrow_copy, 0},
    {"aten.diagonal.default", meta_diagonal, 0},
    {"aten.diagonal_copy.default", meta_diagonal, 0},
    {"aten.diagonal_scatter.default", meta_diagonal_scatter, 0},
    {"aten.diag_embed.default", meta_diag_embed, 0},
    {"aten.as_strided.default", meta_as_strided, 0},
    {"aten.as_strided_copy.default", meta_as_strided, 0},
    {"aten.as_strided_scatter.default", meta_as_strided_scatter, 0},
    {"aten.unfold.default", meta_unfold, 0},
    {"aten.unfold_copy.default", meta_unfold, 0},
    /* joining and splitting */
    {"aten.cat.default", meta_cat, 0},
    {"aten.stack.default", meta_stack, 0},
    {"aten.block_diag.default", meta_block_diag, 0},
    {"aten._chunk_cat.default", meta_chunk_cat, 0},
    {"aten.split.Tensor", meta_split, 0},
    {"aten.unsafe_split.Tensor", meta_split, 0},
    {"aten.split_with_sizes.default", meta_split_with_sizes, 0},
    {"aten.split_with_sizes_copy.default", meta_split_with_sizes, 0},
    {"aten.unbind.int", meta_unbind, 0},
    {"aten.unbind_copy.int", meta_unbind, 0},
    /* reordering and repeating */
    {"aten.flip.default", meta_flip, 0},
    {"aten.roll.default", meta_roll, 0},
    {"aten.repeat.default", meta_repeat, 0},
    {"aten.repeat_interleave.Tensor", meta_repeat_interleave, 0},
    {"aten.pixel_shuffle.default", meta_pixel_shuffle, 0},
    {"aten.pixel_unshuffle.default", meta_pixel_shuffle, 1},
    {"aten.channel_shuffle.default", meta_channel_shuffle, 0},
    {"aten.diff.default", meta_diff, 0},
    /* padding and sliding windows */
    {"aten.constant_pad_nd.default", meta_constant_pad_nd, 0},
    {"aten.reflection_pad1d.default", meta_pad, 1 | PAD_REFLECT},
    {"aten.reflection_pad2d.default", meta_pad, 2 | PAD_REFLECT},
    {"aten.reflection_pad3d.default", meta_pad, 3 | PAD_REFLECT},
    {"aten.replication_pad1d.default", meta_pad, 1},
    {"aten.replication_pad2d.default", meta_pad, 2},
    {"aten.replication_pad3d.default", meta_pad, 3},
    {"aten.im2col.default", meta_im2col, 0},
    {"aten.col2im.default", meta_col2im, 0},
    {NULL, NULL, 0},
};
