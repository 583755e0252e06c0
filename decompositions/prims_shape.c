/*
 * decompositions/prims_shape.c: views, joins and creation ops from Core
 * ATen to prims. Views become the prims that state their shape fully
 * (reshape, transpose, broadcast_in_dim, squeeze); slicing and selecting
 * become prims.as_strided over the input's row-major elements, since the
 * registry has no prims.slice (every prim here is functional: a value's
 * elements in row-major order are all as_strided sees). Creation ops
 * become prims.full and prims.iota in the node's result dtype.
 */
#include "decompositions/prims_common.h"

#include <math.h>

/* The shape the node gives its output k. */
static const alloy_dim *out_shape(decomp *d, int k) { return d_shape(p_result(d, k)); }
static int out_rank(decomp *d, int k) { return d_rank(p_result(d, k)); }

/* A view that changes nothing still is a new value. */
static alloy_value *fresh(decomp *d, alloy_value *x, const alloy_value *in) {
  return x == in ? D(d, "prims.view_of.default", V(x)) : x;
}

/* view(x, size) = reshape(x, the size the node resolved) */
static void view(decomp *d) {
  d_out(d, 0, D(d, "prims.reshape.default", V(d_tensor(d, 0)), d_dim_list(d, out_shape(d, 0), out_rank(d, 0))));
}

static void permute(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  int64_t perm[ALLOY_MAX_RANK];
  int n = d_ints(d, 1, perm, ALLOY_MAX_RANK);
  for (int k = 0; k < n; k++) perm[k] = d_wrap_dim(d, perm[k], d_rank(x));
  d_out(d, 0, D(d, "prims.transpose.default", V(x), d_int_list(d, perm, n)));
}

static void expand(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  d_out(d, 0, fresh(d, p_broadcast(d, x, out_shape(d, 0), out_rank(d, 0)), x));
}

/* unsqueeze: every input dim maps to itself or, past the new one, the next. */
static void unsqueeze(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  int r = d_rank(x), at = d_wrap_dim(d, d_int(d, 1), r + 1);
  int64_t bdims[ALLOY_MAX_RANK];
  for (int k = 0; k < r; k++) bdims[k] = k < at ? k : k + 1;
  d_out(d, 0, D(d, "prims.broadcast_in_dim.default", V(x), d_dim_list(d, out_shape(d, 0), out_rank(d, 0)),
                d_int_list(d, bdims, r)));
}

/* squeeze.dim / squeeze.dims: the named dims of size 1 go; others stay. */
static void squeeze(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  int r = d_rank(x);
  int64_t dims[ALLOY_MAX_RANK], keep[ALLOY_MAX_RANK];
  int n = d_ints(d, 1, dims, ALLOY_MAX_RANK), m = 0;
  bool gone[ALLOY_MAX_RANK] = {false};
  for (int k = 0; k < n && r > 0; k++) {
    int dim = d_wrap_dim(d, dims[k], r);
    alloy_dim s = d_shape(x)[dim];
    if (!alloy_dim_is_const(s)) return d_decline(d, "squeezing a dim of symbolic size");
    if (s.value == 1) gone[dim] = true;
  }
  for (int k = 0; k < r; k++)
    if (gone[k]) keep[m++] = k;
  d_out(d, 0, m ? D(d, "prims.squeeze.default", V(x), d_int_list(d, keep, m))
                : D(d, "prims.view_of.default", V(x)));
}

/* --- windows: slice, select, split -------------------------------------------------*/

/* The row-major strides of x. */
static void row_major(decomp *d, const alloy_value *x, alloy_dim *stride) {
  alloy_dim s = alloy_dim_const(1);
  for (int k = d_rank(x) - 1; k >= 0; k--) {
    stride[k] = s;
    s = alloy_dim_mul(d_symtab(d), s, d_shape(x)[k]);
  }
}

/* The window of x of the given shape whose dim `dim` starts at `start` and
 * steps by `step` (drop: that dim is selected away). */
static alloy_value *window(decomp *d, alloy_value *x, int dim, alloy_dim start, int64_t step,
                           const alloy_dim *shape, int rank, bool drop) {
  alloy_dim stride[ALLOY_MAX_RANK], ostride[ALLOY_MAX_RANK];
  row_major(d, x, stride);
  alloy_dim offset = alloy_dim_mul(d_symtab(d), start, stride[dim]);
  for (int k = 0, j = 0; k < d_rank(x); k++) {
    if (k == dim && drop) continue;
    ostride[j++] = k == dim ? alloy_dim_mul(d_symtab(d), stride[k], alloy_dim_const(step)) : stride[k];
  }
  return D(d, "prims.as_strided.default", V(x), d_dim_list(d, shape, rank), d_dim_list(d, ostride, rank),
           SYM(offset));
}

/* slice_scatter / select_scatter: src written into self through the
 * window slice / select would read. */
static alloy_value *window_scatter(decomp *d, alloy_value *self, alloy_value *src, int dim, alloy_dim start,
                                   int64_t step, bool drop) {
  alloy_dim stride[ALLOY_MAX_RANK], ostride[ALLOY_MAX_RANK];
  row_major(d, self, stride);
  alloy_dim offset = alloy_dim_mul(d_symtab(d), start, stride[dim]);
  for (int k = 0, j = 0; k < d_rank(self); k++) {
    if (k == dim && drop) continue;
    ostride[j++] = k == dim ? alloy_dim_mul(d_symtab(d), stride[k], alloy_dim_const(step)) : stride[k];
  }
  src = p_convert(d, src, d_dtype(self));
  return D(d, "prims.as_strided_scatter.default", V(self), V(src), d_dim_list(d, d_shape(src), d_rank(src)),
           d_dim_list(d, ostride, d_rank(src)), SYM(offset));
}

/* A start index of a dim of size n as PyTorch clamps it: negative counts
 * from the end, the result lies in [0, n]. */
static bool clamp_index(decomp *d, alloy_dim i, alloy_dim n, alloy_dim *out) {
  alloy_symtab *st = d_symtab(d);
  if (!alloy_dim_is_const(i)) {
    if (alloy_dim_le(st, alloy_dim_const(0), i) != ALLOY_TRUE) return false;
    *out = alloy_dim_min(st, i, n);
    return true;
  }
  if (i.value < 0) {
    alloy_dim j = alloy_dim_add(st, n, i);
    *out = alloy_dim_is_const(j) ? alloy_dim_const(j.value < 0 ? 0 : j.value)
                                 : alloy_dim_max(st, j, alloy_dim_const(0));
  } else {
    *out = alloy_dim_min(st, i, n);
  }
  return true;
}

static void slice(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  int dim = d_wrap_dim(d, d_int(d, 1), d_rank(x));
  int64_t step = d_int(d, 4);
  alloy_dim start = alloy_dim_const(0);
  if (!d_is_none(d, 2) && !clamp_index(d, d_dim(d, 2), d_shape(x)[dim], &start))
    return d_decline(d, "a symbolic start that may be negative");
  d_out(d, 0, window(d, x, dim, start, step, out_shape(d, 0), out_rank(d, 0), false));
}

static void select_int(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  int dim = d_wrap_dim(d, d_int(d, 1), d_rank(x));
  alloy_dim i = d_dim(d, 2);
  if (!alloy_dim_is_const(i) && alloy_dim_le(d_symtab(d), alloy_dim_const(0), i) != ALLOY_TRUE)
    return d_decline(d, "a symbolic index that may be negative");
  if (alloy_dim_is_const(i) && i.value < 0) i = alloy_dim_add(d_symtab(d), d_shape(x)[dim], i);
  d_out(d, 0, window(d, x, dim, i, 1, out_shape(d, 0), out_rank(d, 0), true));
}

static void slice_scatter(decomp *d) {
  alloy_value *self = d_tensor(d, 0);
  int dim = d_wrap_dim(d, d_int(d, 2), d_rank(self));
  alloy_dim start = alloy_dim_const(0);
  if (!d_is_none(d, 3) && !clamp_index(d, d_dim(d, 3), d_shape(self)[dim], &start))
    return d_decline(d, "a symbolic start that may be negative");
  d_out(d, 0, window_scatter(d, self, d_tensor(d, 1), dim, start, d_int(d, 5), false));
}

static void select_scatter(decomp *d) {
  alloy_value *self = d_tensor(d, 0);
  int dim = d_wrap_dim(d, d_int(d, 2), d_rank(self));
  alloy_dim i = d_dim(d, 3);
  if (!alloy_dim_is_const(i) && alloy_dim_le(d_symtab(d), alloy_dim_const(0), i) != ALLOY_TRUE)
    return d_decline(d, "a symbolic index that may be negative");
  if (alloy_dim_is_const(i) && i.value < 0) i = alloy_dim_add(d_symtab(d), d_shape(self)[dim], i);
  d_out(d, 0, window_scatter(d, self, d_tensor(d, 1), dim, i, 1, true));
}

/* as_strided over a value's row-major elements is the prim itself. */
static void as_strided(decomp *d) {
  alloy_dim size[ALLOY_MAX_RANK], stride[ALLOY_MAX_RANK];
  int n = d_dims(d, 1, size, ALLOY_MAX_RANK), m = d_dims(d, 2, stride, ALLOY_MAX_RANK);
  alloy_dim off = d_is_none(d, 3) ? alloy_dim_const(0) : d_dim(d, 3);
  d_out(d, 0, D(d, "prims.as_strided.default", V(d_tensor(d, 0)), d_dim_list(d, size, n),
                d_dim_list(d, stride, m), SYM(off)));
}

/* diagonal(x, offset, d1, d2): the other dims, then the diagonal, whose
 * step is the sum of d1's and d2's strides. */
static void diagonal(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  int r = d_rank(x), d1 = d_wrap_dim(d, d_int(d, 2), r), d2 = d_wrap_dim(d, d_int(d, 3), r);
  int64_t off = d_int(d, 1);
  alloy_symtab *st = d_symtab(d);
  alloy_dim stride[ALLOY_MAX_RANK], ostride[ALLOY_MAX_RANK];
  row_major(d, x, stride);
  int j = 0;
  for (int k = 0; k < r; k++)
    if (k != d1 && k != d2) ostride[j++] = stride[k];
  ostride[j++] = alloy_dim_add(st, stride[d1], stride[d2]);
  alloy_dim start = off >= 0 ? alloy_dim_mul(st, alloy_dim_const(off), stride[d2])
                             : alloy_dim_mul(st, alloy_dim_const(-off), stride[d1]);
  /* An empty diagonal starts nowhere. */
  const alloy_dim *os = out_shape(d, 0);
  if (alloy_dim_is_const(os[out_rank(d, 0) - 1]) && os[out_rank(d, 0) - 1].value == 0) start = alloy_dim_const(0);
  d_out(d, 0, D(d, "prims.as_strided.default", V(x), d_dim_list(d, os, out_rank(d, 0)), d_dim_list(d, ostride, j),
                SYM(start)));
}

/* constant_pad_nd(x, pad, v): x cropped where a pad is negative, written
 * into a tensor of v where the pads put it. pad pairs run from the last
 * dim backwards. */
static void constant_pad_nd(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  const alloy_value *r = p_result(d, 0);
  int rank = d_rank(x);
  alloy_dim pad[2 * ALLOY_MAX_RANK];
  int np = d_dims(d, 1, pad, 2 * ALLOY_MAX_RANK);
  alloy_symtab *st = d_symtab(d);
  alloy_dim lo[ALLOY_MAX_RANK], crop_lo[ALLOY_MAX_RANK], inner[ALLOY_MAX_RANK];
  bool crops = false;
  for (int k = 0; k < rank; k++) {
    int p = 2 * (rank - 1 - k);
    alloy_dim a = p < np ? pad[p] : alloy_dim_const(0), b = p + 1 < np ? pad[p + 1] : alloy_dim_const(0);
    if (!alloy_dim_is_const(a) || !alloy_dim_is_const(b)) return d_decline(d, "symbolic pads");
    lo[k] = alloy_dim_const(a.value > 0 ? a.value : 0);
    crop_lo[k] = alloy_dim_const(a.value < 0 ? -a.value : 0);
    alloy_dim n = d_shape(x)[k];
    if (a.value < 0) n = alloy_dim_add(st, n, a);
    if (b.value < 0) n = alloy_dim_add(st, n, b);
    inner[k] = n;
    crops |= a.value < 0 || b.value < 0;
  }
  for (int k = 0; k < rank; k++)
    if (alloy_dim_is_const(inner[k]) && inner[k].value <= 0)
      return d_out(d, 0, p_full(d, d_shape(r), d_rank(r), *d_arg(d, 2), d_dtype(r)));
  alloy_dim stride[ALLOY_MAX_RANK], off = alloy_dim_const(0);
  if (crops) {
    row_major(d, x, stride);
    for (int k = 0; k < rank; k++) off = alloy_dim_add(st, off, alloy_dim_mul(st, crop_lo[k], stride[k]));
    x = D(d, "prims.as_strided.default", V(x), d_dim_list(d, inner, rank), d_dim_list(d, stride, rank), SYM(off));
  }
  alloy_value *base = p_full(d, d_shape(r), d_rank(r), *d_arg(d, 2), d_dtype(r));
  row_major(d, r, stride);
  off = alloy_dim_const(0);
  for (int k = 0; k < rank; k++) off = alloy_dim_add(st, off, alloy_dim_mul(st, lo[k], stride[k]));
  d_out(d, 0, D(d, "prims.as_strided_scatter.default", V(base), V(x), d_dim_list(d, inner, rank),
                d_dim_list(d, stride, rank), SYM(off)));
}

static void split_with_sizes(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  int dim = d_wrap_dim(d, d_int(d, 2), d_rank(x));
  int n = alloy_node_num_outputs(d_node(d));
  alloy_dim start = alloy_dim_const(0);
  for (int k = 0; k < n; k++) {
    d_out(d, k, window(d, x, dim, start, 1, out_shape(d, k), out_rank(d, k), false));
    start = alloy_dim_add(d_symtab(d), start, out_shape(d, k)[dim]);
  }
}

/* cat: every tensor in the result dtype; legacy empty 1-d tensors left
 * out, as PyTorch skips them. */
static void cat(decomp *d) {
  int n = d_tensor_count(d, 0);
  const alloy_value *r = p_result(d, 0);
  alloy_value *parts[256];
  int m = 0;
  if (n > 256) return d_decline(d, "%d tensors", n);
  for (int k = 0; k < n; k++) {
    alloy_value *t = d_tensor_at(d, 0, k);
    if (d_rank(r) != 1 && d_rank(t) == 1 && alloy_dim_is_const(d_shape(t)[0]) && d_shape(t)[0].value == 0)
      continue;
    parts[m++] = p_convert(d, t, d_dtype(r));
  }
  if (m == 0) return d_out(d, 0, p_full(d, d_shape(r), d_rank(r), I(0), d_dtype(r)));
  if (m == 1) return d_out(d, 0, D(d, "prims.clone.default", V(parts[0])));
  int dim = d_wrap_dim(d, d_int(d, 1), d_rank(r));
  d_out(d, 0, D(d, "prims.cat.default", d_value_list(d, parts, m), I(dim)));
}

/* flip = rev over the dims. */
static void flip(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  int64_t dims[ALLOY_MAX_RANK];
  int n = d_ints(d, 1, dims, ALLOY_MAX_RANK);
  for (int k = 0; k < n; k++) dims[k] = d_wrap_dim(d, dims[k], d_rank(x));
  /* A zero-dim tensor takes dim 0 or -1 (as if it had rank 1) and has
   * nothing to reverse; prims.rev takes no dims for it. */
  if (d_rank(x) == 0) n = 0;
  d_out(d, 0, D(d, "prims.rev.default", V(x), d_int_list(d, dims, n)));
}

/* repeat(x, r): x broadcast into [r0, s0, r1, s1, ...] (dims padded with
 * leading 1s), reshaped to [r0 s0, r1 s1, ...]. */
static void repeat(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  alloy_dim reps[ALLOY_MAX_RANK], shape[2 * ALLOY_MAX_RANK];
  int n = d_dims(d, 1, reps, ALLOY_MAX_RANK), r = d_rank(x), pad = n - r;
  if (pad < 0 || 2 * n > ALLOY_MAX_RANK) return d_decline(d, "%d repeats of a rank-%d tensor", n, r);
  int64_t bdims[ALLOY_MAX_RANK];
  for (int k = 0; k < n; k++) {
    shape[2 * k] = reps[k];
    shape[2 * k + 1] = k < pad ? alloy_dim_const(1) : d_shape(x)[k - pad];
    if (k >= pad) bdims[k - pad] = 2 * k + 1;
  }
  alloy_value *b = D(d, "prims.broadcast_in_dim.default", V(x), d_dim_list(d, shape, 2 * n), d_int_list(d, bdims, r));
  d_out(d, 0, D(d, "prims.reshape.default", V(b), d_dim_list(d, out_shape(d, 0), out_rank(d, 0))));
}

/* --- creation -------------------------------------------------------------------------*/

static alloy_value *full_like_result(decomp *d, alloy_arg value) {
  const alloy_value *r = p_result(d, 0);
  return p_full(d, d_shape(r), d_rank(r), value, d_dtype(r));
}

static void full(decomp *d) { d_out(d, 0, full_like_result(d, *d_arg(d, 1))); }
static void scalar_tensor(decomp *d) { d_out(d, 0, full_like_result(d, *d_arg(d, 0))); }

static void empty(decomp *d) {
  const alloy_value *r = p_result(d, 0);
  d_out(d, 0, D(d, "prims.empty.default", d_dim_list(d, d_shape(r), d_rank(r)), DT(d_dtype(r)), p_device(),
                B(false)));
}

static void empty_strided(decomp *d) {
  const alloy_value *r = p_result(d, 0);
  alloy_dim stride[ALLOY_MAX_RANK];
  int m = d_dims(d, 1, stride, ALLOY_MAX_RANK);
  d_out(d, 0, D(d, "prims.empty_strided.default", d_dim_list(d, d_shape(r), d_rank(r)), d_dim_list(d, stride, m),
                DT(d_dtype(r)), p_device(), B(false)));
}

/* arange(start, end, step): iota for integer results; otherwise
 * start + step * i computed in the accumulation dtype (float64 for
 * float32, float32 for reduced precision), as torch._refs.arange. */
static void arange(decomp *d) {
  const alloy_value *r = p_result(d, 0);
  alloy_dim len = d_shape(r)[0];
  alloy_dtype t = d_dtype(r);
  for (int k = 0; k < 3; k++)
    if (!p_is_number(*d_arg(d, k)) || (d_arg(d, k)->kind == ALLOY_ARG_INT && !alloy_dim_is_const(d_arg(d, k)->u.i)))
      return d_decline(d, "arange of symbolic bounds");
  double start = d_float(d, 0), step = d_float(d, 2);
  bool int_args = d_arg(d, 0)->kind != ALLOY_ARG_FLOAT && d_arg(d, 2)->kind != ALLOY_ARG_FLOAT;
  if (alloy_dtype_is_integer(t) && int_args) {
    d_out(d, 0, D(d, "prims.iota.default", SYM(len), I((int64_t)start), I((int64_t)step), DT(t), p_device(),
                  B(false)));
    return;
  }
  alloy_value *i = D(d, "prims.iota.default", SYM(len), I(0), I(1), DT(ALLOY_I64), p_device(), B(false));
  alloy_dtype acc = int_args ? ALLOY_I64 : t == ALLOY_F32 || t == ALLOY_F64 ? ALLOY_F64 : ALLOY_F32;
  i = p_convert(d, i, acc);
  alloy_value *v = D(d, "prims.add.default", p_number_as(d, *d_arg(d, 0), acc),
                     V(D(d, "prims.mul.default", p_number_as(d, *d_arg(d, 2), acc), V(i))));
  d_out(d, 0, p_convert(d, v, t));
}

/* rand / randn: uniform in [0, 1) / standard normal samples. */
static alloy_value *uniform(decomp *d, const alloy_dim *shape, int rank, alloy_dtype t) {
  alloy_dim stride[ALLOY_MAX_RANK], s = alloy_dim_const(1);
  for (int k = rank - 1; k >= 0; k--) stride[k] = s, s = alloy_dim_mul(d_symtab(d), s, shape[k]);
  return D(d, "prims.uniform.default", d_dim_list(d, shape, rank), F(0), F(1), DT(t), p_device(),
           d_dim_list(d, stride, rank));
}

static void rand_(decomp *d) {
  const alloy_value *r = p_result(d, 0);
  d_out(d, 0, uniform(d, d_shape(r), d_rank(r), d_dtype(r)));
}

static void randn(decomp *d) {
  const alloy_value *r = p_result(d, 0);
  d_out(d, 0, D(d, "prims.normal.default", d_dim_list(d, d_shape(r), d_rank(r)), F(0), F(1), DT(d_dtype(r)),
                p_device(), B(false)));
}

/* native_dropout(x, p, train): in training, x kept where a uniform sample
 * exceeds p and scaled by 1 / (1 - p); the mask is the second result. */
static void native_dropout(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  double p = d_float(d, 1);
  bool train = d_is_none(d, 2) || d_bool(d, 2);
  const alloy_dim *shape = d_shape(x);
  int rank = d_rank(x);
  if (!train || p == 0) {
    d_out(d, 0, D(d, "prims.clone.default", V(x)));
    d_out(d, 1, p_full(d, shape, rank, B(true), ALLOY_BOOL));
    return;
  }
  alloy_dtype c = alloy_opmath_dtype(d_dtype(x));
  alloy_value *keep = D(d, "prims.gt.default", V(uniform(d, shape, rank, d_dtype(x))), F(p));
  alloy_value *scaled = D(d, "prims.mul.default", V(p_convert(d, x, c)), F(p == 1 ? 0.0 : 1.0 / (1.0 - p)));
  alloy_value *res = D(d, "prims.where.default", V(keep), V(scaled), F(0));
  d_out(d, 0, p_convert(d, res, d_dtype(x)));
  d_out(d, 1, keep);
}

static void local_scalar_dense(decomp *d) { d_out(d, 0, D(d, "prims.item.default", V(d_tensor(d, 0)))); }

static void full_like(decomp *d) { d_out(d, 0, full_like_result(d, *d_arg(d, 1))); }

const decomp_rule decomp_prims_shape[] = {
    {"aten.view.default", view, DECOMP_TO_PRIMS},
    {"aten.permute.default", permute, DECOMP_TO_PRIMS},
    {"aten.expand.default", expand, DECOMP_TO_PRIMS},
    {"aten.unsqueeze.default", unsqueeze, DECOMP_TO_PRIMS},
    {"aten.squeeze.dim", squeeze, DECOMP_TO_PRIMS},
    {"aten.squeeze.dims", squeeze, DECOMP_TO_PRIMS},
    {"aten.slice.Tensor", slice, DECOMP_TO_PRIMS},
    {"aten.select.int", select_int, DECOMP_TO_PRIMS},
    {"aten.slice_scatter.default", slice_scatter, DECOMP_TO_PRIMS},
    {"aten.select_scatter.default", select_scatter, DECOMP_TO_PRIMS},
    {"aten.as_strided.default", as_strided, DECOMP_TO_PRIMS},
    {"aten.empty_strided.default", empty_strided, DECOMP_TO_PRIMS},
    {"aten.diagonal.default", diagonal, DECOMP_TO_PRIMS},
    {"aten.constant_pad_nd.default", constant_pad_nd, DECOMP_TO_PRIMS},
    {"aten.split_with_sizes.default", split_with_sizes, DECOMP_TO_PRIMS},
    {"aten.cat.default", cat, DECOMP_TO_PRIMS},
    {"aten.flip.default", flip, DECOMP_TO_PRIMS},
    {"aten.repeat.default", repeat, DECOMP_TO_PRIMS},
    {"aten.full.default", full, DECOMP_TO_PRIMS},
    {"aten.full_like.default", full_like, DECOMP_TO_PRIMS},
    {"aten.scalar_tensor.default", scalar_tensor, DECOMP_TO_PRIMS},
    {"aten.empty.memory_format", empty, DECOMP_TO_PRIMS},
    {"aten.arange.start_step", arange, DECOMP_TO_PRIMS},
    {"aten.rand.default", rand_, DECOMP_TO_PRIMS},
    {"aten.randn.default", randn, DECOMP_TO_PRIMS},
    {"aten.native_dropout.default", native_dropout, DECOMP_TO_PRIMS},
    {"aten._local_scalar_dense.default", local_scalar_dense, DECOMP_TO_PRIMS},
    {NULL, NULL, 0},
};
