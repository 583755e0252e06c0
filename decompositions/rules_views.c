/*
 * decompositions/rules_views.c: the composite views and the ops that are
 * other ops, from ATen to Core ATen.
 *
 * Aliases: each is the op ir/meta_alias.h's table says it is, on the
 * arguments the table maps (swapaxes is transpose, concat is cat, argsort
 * is sort's indices, _cast_Float is _to_copy to float32, item is
 * _local_scalar_dense). The same table gives their shape functions, so a
 * rule and its shape function cannot disagree.
 *
 * Composite views (shape functions in ir/meta_views.c): each is one or a
 * few core views (permute, view, slice, expand, flip, diagonal, ...) of
 * the same data, as PyTorch's CompositeImplicitAutograd kernels build
 * them. Where a result's shape is the node's own output type (atleast_3d,
 * view_as), the rule reads it from there, so sizes stay symbolic.
 *
 * Joins (shape functions in ir/meta_shape_composite.c): meshgrid is each
 * input viewed along its own dim and expanded; column_stack, dstack,
 * cartesian_prod and pad_sequence reshape or pad their items and cat or
 * stack them; combinations picks its index tuples from a mask of the
 * r-dim grid.
 */
#include <string.h>

#include "decompositions/rules.h"
#include "ir/meta_alias.h"

enum { MAX_ALIAS_OUTS = 64 }; /* the most outputs a rule may set (decompose.c) */

static alloy_dim C(int64_t v) { return alloy_dim_const(v); }

static const alloy_value *out_type(decomp *d, int k) { return alloy_node_output(d_node(d), k); }

static alloy_value *view_as_out(decomp *d, alloy_value *x, int k) {
  const alloy_value *t = out_type(d, k);
  return D(d, "aten.view.default", V(x), d_dim_list(d, d_shape(t), d_rank(t)));
}

static alloy_value *permute(decomp *d, alloy_value *x, const int64_t *perm, int n) {
  return D(d, "aten.permute.default", V(x), d_int_list(d, perm, n));
}

static void alias(decomp *d) {
  const alloy_node *n = d_node(d);
  const alloy_op *op = alloy_node_op(n);
  const meta_alias *a = meta_alias_find(alloy_op_name(op));
  if (!a) {
    d_fail(d, "%s is not in the alias table", alloy_op_name(op));
    return;
  }
  int nargs = alloy_op_schema(op)->nargs;
  alloy_arg src[ALIAS_MAX_ARGS], args[ALIAS_MAX_ARGS];
  if (nargs > ALIAS_MAX_ARGS) return d_decline(d, "%d arguments", nargs);
  for (int i = 0; i < nargs; i++) {
    src[i] = *d_arg(d, i);
    if (a->real_only && src[i].kind == ALLOY_ARG_VALUE &&
        alloy_value_kind_of(src[i].u.value) == ALLOY_VALUE_TENSOR &&
        alloy_dtype_is_complex(d_dtype(src[i].u.value)))
      return d_decline(d, "complex tensors are not computed on");
  }
  for (int j = 0; j < a->nargs; j++) args[j] = meta_alias_arg(a, j, src);
  int want = alloy_node_num_outputs(n);
  if (a->first_out + want > MAX_ALIAS_OUTS)
    return d_decline(d, "%d outputs are more than a rule can give", want);
  alloy_value *outs[MAX_ALIAS_OUTS];
  int got = d_op_n(d, a->as, args, a->nargs, outs, MAX_ALIAS_OUTS);
  if (d_failed(d)) return;
  if (a->first_out + want > got)
    return d_decline(d, "%s gives %d outputs, %d wanted", a->as, got, a->first_out + want);
  for (int k = 0; k < want; k++) d_out(d, k, outs[a->first_out + k]);
}

/* --- composite views ------------------------------------------------------------*/

/* movedim(source, destination): the permute that puts each source dim at
 * its destination and the other dims, in order, in the places left. */
static void movedim(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  int64_t src[ALLOY_MAX_RANK], dst[ALLOY_MAX_RANK], perm[ALLOY_MAX_RANK];
  bool list = d_arg(d, 1)->kind == ALLOY_ARG_LIST;
  int n = list ? d_ints(d, 1, src, ALLOY_MAX_RANK) : 1;
  if (list) d_ints(d, 2, dst, ALLOY_MAX_RANK);
  else src[0] = d_int(d, 1), dst[0] = d_int(d, 2);
  if (d_failed(d) || !x) return;
  int r = d_rank(x);
  bool used[ALLOY_MAX_RANK] = {false};
  for (int k = 0; k < r; k++) perm[k] = -1;
  for (int k = 0; k < n && r; k++) {
    int s = d_wrap_dim(d, src[k], r), t = d_wrap_dim(d, dst[k], r);
    if (d_failed(d)) return;
    perm[t] = s;
    used[s] = true;
  }
  for (int t = 0, s = 0; t < r; t++) {
    if (perm[t] >= 0) continue;
    while (used[s]) s++;
    perm[t] = s++;
  }
  d_out(d, 0, permute(d, x, perm, r));
}

/* mT, mH, adjoint, matrix_H: the last two dims swapped (on real tensors
 * mH is mT); numpy_T: every dim reversed. */
static void matrix_t(decomp *d, bool reverse_all, bool conjugates) {
  alloy_value *x = d_tensor(d, 0);
  if (!x) return;
  if (conjugates && alloy_dtype_is_complex(d_dtype(x)))
    return d_decline(d, "complex tensors are not computed on");
  int r = d_rank(x);
  int64_t perm[ALLOY_MAX_RANK];
  for (int k = 0; k < r; k++) perm[k] = reverse_all ? r - 1 - k : k;
  if (!reverse_all && r >= 2) perm[r - 2] = r - 1, perm[r - 1] = r - 2;
  d_out(d, 0, permute(d, x, perm, r));
}
static void mt(decomp *d) { matrix_t(d, false, false); }
static void mh(decomp *d) { matrix_t(d, false, true); }
static void numpy_t(decomp *d) { matrix_t(d, true, false); }

/* atleast_Nd: a view to the node's output type; the .Sequence overloads,
 * one per item. */
static void atleast(decomp *d) {
  if (d_arg(d, 0)->kind != ALLOY_ARG_LIST) return d_out(d, 0, view_as_out(d, d_tensor(d, 0), 0));
  int n = d_tensor_count(d, 0);
  if (n > MAX_ALIAS_OUTS) return d_decline(d, "%d tensors are more than a rule can give", n);
  for (int k = 0; k < n; k++) d_out(d, k, view_as_out(d, d_tensor_at(d, 0, k), k));
}

/* The dim tensor_split / hsplit / vsplit / dsplit cut along. */
static int split_dim(decomp *d, alloy_value *x) {
  const char *op = alloy_op_name(alloy_node_op(d_node(d)));
  int r = d_rank(x);
  if (!strncmp(op, "aten.hsplit.", 12)) return r == 1 ? 0 : 1;
  if (!strncmp(op, "aten.vsplit.", 12)) return 0;
  if (!strncmp(op, "aten.dsplit.", 12)) return 2;
  return d_wrap_dim(d, d_int(d, 2), r);
}

/* tensor_split and hsplit / vsplit / dsplit: one slice per piece; the
 * bounds are the given indices (slice wraps and clamps them as PyTorch's
 * does), or for sections the running sums of the pieces' sizes. */
static void tensor_split(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  if (!x) return;
  int dim = split_dim(d, x), n = alloy_node_num_outputs(d_node(d));
  if (d_failed(d)) return;
  if (n > MAX_ALIAS_OUTS) return d_decline(d, "%d pieces are more than a rule can give", n);
  alloy_dim bounds[MAX_ALIAS_OUTS + 1];
  bounds[0] = C(0);
  if (d_arg(d, 1)->kind == ALLOY_ARG_LIST) {
    if (d_dims(d, 1, bounds + 1, MAX_ALIAS_OUTS) != n - 1) return d_decline(d, "indices and pieces disagree");
  } else {
    for (int k = 0; k < n - 1; k++)
      bounds[k + 1] = alloy_dim_add(d_symtab(d), bounds[k], d_shape(out_type(d, k))[dim]);
  }
  bounds[n] = d_shape(x)[dim];
  for (int k = 0; k < n; k++)
    d_out(d, k, D(d, "aten.slice.Tensor", V(x), I(dim), SYM(bounds[k]), SYM(bounds[k + 1]), I(1)));
}

/* diag: a vector put on a diagonal (diag_embed), or a matrix's diagonal. */
static void diag(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  if (!x) return;
  const char *op = d_rank(x) == 1 ? "aten.diag_embed.default" : "aten.diagonal.default";
  d_out(d, 0, D(d, op, V(x), *d_arg(d, 1), I(0), I(1)));
}

/* diagflat: the flattened tensor put on a diagonal. */
static void diagflat(decomp *d) {
  alloy_value *flat = D(d, "aten.view.default", V(d_tensor(d, 0)), LIST(I(-1)));
  d_out(d, 0, D(d, "aten.diag_embed.default", V(flat), *d_arg(d, 1), I(0), I(1)));
}

/* view_as / reshape_as: a view to the node's output type (other's shape). */
static void view_as(decomp *d) { d_out(d, 0, view_as_out(d, d_tensor(d, 0), 0)); }

/* narrow.Tensor(dim, start, length): the elements start + i, i < length,
 * of dim, start read at run time (negative counting from the end). */
static void narrow_tensor(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *start = d_tensor(d, 2);
  if (!x || !start) return;
  int dim = d_wrap_dim(d, d_int(d, 1), d_rank(x));
  alloy_dim len = d_dim(d, 3);
  if (d_failed(d)) return;
  start = d_to(d, start, ALLOY_I64);
  alloy_value *wrapped = D(d, "aten.add.Tensor", V(start), SYM(d_shape(x)[dim]));
  start = D(d, "aten.where.self", V(D(d, "aten.lt.Scalar", V(start), I(0))), V(wrapped), V(start));
  alloy_value *idx = D(d, "aten.add.Tensor",
                       V(D(d, "aten.arange.start_step", I(0), SYM(len), I(1), DT(ALLOY_I64))), V(start));
  d_out(d, 0, D(d, "aten.index_select.default", V(x), I(dim), V(idx)));
}

static void fliplr(decomp *d) { d_out(d, 0, D(d, "aten.flip.default", V(d_tensor(d, 0)), LIST(I(1)))); }
static void flipud(decomp *d) { d_out(d, 0, D(d, "aten.flip.default", V(d_tensor(d, 0)), LIST(I(0)))); }

/* tile(dims) = repeat(dims padded in front with ones to self's rank). */
static void tile(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  alloy_dim dims[ALLOY_MAX_RANK], full[ALLOY_MAX_RANK];
  int n = d_dims(d, 1, dims, ALLOY_MAX_RANK);
  if (d_failed(d) || !x) return;
  int pad = d_rank(x) > n ? d_rank(x) - n : 0;
  for (int k = 0; k < pad; k++) full[k] = C(1);
  for (int k = 0; k < n; k++) full[pad + k] = dims[k];
  d_out(d, 0, D(d, "aten.repeat.default", V(x), d_dim_list(d, full, pad + n)));
}

/* broadcast_tensors: each expanded to the common shape. */
static void broadcast_tensors(decomp *d) {
  int n = d_tensor_count(d, 0);
  if (n > MAX_ALIAS_OUTS) return d_decline(d, "%d tensors are more than a rule can give", n);
  for (int k = 0; k < n; k++) {
    const alloy_value *t = out_type(d, k);
    d_out(d, k, D(d, "aten.expand.default", V(d_tensor_at(d, 0, k)), d_dim_list(d, d_shape(t), d_rank(t))));
  }
}

/* --- joins ----------------------------------------------------------------------*/

/* column_stack: items of at most one dim as columns [numel, 1], then
 * hstack. */
static void column_stack(decomp *d) {
  int n = d_tensor_count(d, 0);
  if (n > 256) return d_decline(d, "%d tensors are more than this rule takes", n);
  alloy_value *items[256];
  for (int k = 0; k < n; k++) {
    items[k] = d_tensor_at(d, 0, k);
    if (items[k] && d_rank(items[k]) <= 1)
      items[k] = D(d, "aten.view.default", V(items[k]), LIST(I(-1), I(1)));
  }
  d_out(d, 0, D(d, "aten.hstack.default", d_value_list(d, items, n)));
}

/* dstack: items made at least 3-d, joined along dim 2. */
static void dstack(decomp *d) {
  int n = d_tensor_count(d, 0);
  if (n > 256) return d_decline(d, "%d tensors are more than this rule takes", n);
  alloy_value *items[256];
  for (int k = 0; k < n; k++) items[k] = D(d, "aten.atleast_3d.default", V(d_tensor_at(d, 0, k)));
  d_out(d, 0, D(d, "aten.cat.default", d_value_list(d, items, n), I(2)));
}

/* The grid of item k of a meshgrid of n items whose full shape is out:
 * the item along dim `at`, expanded. */
static alloy_value *grid_of(decomp *d, alloy_value *x, int at, const alloy_value *out) {
  int r = d_rank(out);
  alloy_dim shape[ALLOY_MAX_RANK];
  for (int j = 0; j < r; j++) shape[j] = C(1);
  shape[at] = d_shape(out)[at];
  alloy_value *line = D(d, "aten.view.default", V(x), d_dim_list(d, shape, r));
  return D(d, "aten.expand.default", V(line), d_dim_list(d, d_shape(out), r));
}

/* meshgrid(tensors, indexing): item k along dim k ("ij"), or with the
 * first two dims swapped ("xy"). */
static void meshgrid(decomp *d) {
  int n = d_tensor_count(d, 0);
  if (n > MAX_ALIAS_OUTS) return d_decline(d, "%d tensors are more than a rule can give", n);
  const char *ix = alloy_op_schema(alloy_node_op(d_node(d)))->nargs > 1 ? d_str(d, 1) : "ij";
  bool xy = ix && !strcmp(ix, "xy") && n >= 2;
  for (int k = 0; k < n; k++) {
    int at = xy && k < 2 ? 1 - k : k;
    d_out(d, k, grid_of(d, d_tensor_at(d, 0, k), at, out_type(d, k)));
  }
}

/* cartesian_prod(tensors): one vector is itself; several are the meshgrid
 * of them, each grid flattened, stacked as columns. */
static void cartesian_prod(decomp *d) {
  int n = d_tensor_count(d, 0);
  if (n == 1) return d_out(d, 0, D(d, "aten.alias.default", V(d_tensor_at(d, 0, 0))));
  if (n > ALLOY_MAX_RANK) return d_decline(d, "%d tensors", n);
  alloy_dim shape[ALLOY_MAX_RANK];
  for (int k = 0; k < n; k++) {
    alloy_value *x = d_tensor_at(d, 0, k);
    if (!x) return;
    shape[k] = d_shape(x)[0];
  }
  alloy_value *cols[ALLOY_MAX_RANK];
  for (int k = 0; k < n; k++) {
    alloy_dim line[ALLOY_MAX_RANK];
    for (int j = 0; j < n; j++) line[j] = j == k ? shape[k] : C(1);
    alloy_value *x = D(d, "aten.view.default", V(d_tensor_at(d, 0, k)), d_dim_list(d, line, n));
    x = D(d, "aten.expand.default", V(x), d_dim_list(d, shape, n));
    cols[k] = D(d, "aten.view.default", V(x), LIST(I(-1)));
  }
  d_out(d, 0, D(d, "aten.stack.default", d_value_list(d, cols, n), I(1)));
}

/* combinations(self, r, with_replacement): the index tuples i0 < i1 < ...
 * (<= with replacement) of an r-dim grid are the true places of a mask,
 * in row-major order, as PyTorch's meshgrid and masked_select give them;
 * their count is known, so nonzero_static finds them, and self indexed by
 * them is the result. */
static void combinations(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  int64_t r = d_int(d, 1);
  bool repeat = d_bool(d, 2);
  if (d_failed(d) || !x) return;
  const alloy_value *o = out_type(d, 0);
  alloy_dim count = d_shape(o)[0];
  if (r == 0 || (alloy_dim_is_const(count) && count.value == 0))
    return d_out(d, 0, D(d, "aten.full.default", d_dim_list(d, d_shape(o), d_rank(o)), I(0), DT(d_dtype(x))));
  alloy_dim n = d_shape(x)[0];
  alloy_value *iota = D(d, "aten.arange.start_step", I(0), SYM(n), I(1), DT(ALLOY_I64));
  alloy_value *mask = NULL, *prev = NULL;
  for (int64_t k = 0; k < r; k++) {
    alloy_dim line[ALLOY_MAX_RANK];
    for (int64_t j = 0; j < r; j++) line[j] = j == k ? n : C(1);
    alloy_value *cur = D(d, "aten.view.default", V(iota), d_dim_list(d, line, (int)r));
    if (prev) {
      alloy_value *ok = D(d, repeat ? "aten.le.Tensor" : "aten.lt.Tensor", V(prev), V(cur));
      mask = mask ? D(d, "aten.logical_and.default", V(mask), V(ok)) : ok;
    }
    prev = cur;
  }
  if (!mask) { /* r == 1: every element */
    alloy_dim line[1] = {n};
    mask = D(d, "aten.full.default", d_dim_list(d, line, 1), B(true), DT(ALLOY_BOOL));
  }
  alloy_value *where = D(d, "aten.nonzero_static.default", V(mask), SYM(count));
  d_out(d, 0, D(d, "aten.index.Tensor", V(x), LIST(V(where))));
}

/* pad_sequence(sequences, batch_first, padding_value, padding_side): each
 * sequence padded with the value at the end (or start) of dim 0 to the
 * longest, then stacked along dim 0 (batch first) or 1. */
static void pad_sequence(decomp *d) {
  int n = d_tensor_count(d, 0);
  bool batch_first = d_bool(d, 1);
  const char *side = d_str(d, 3);
  if (n > 256) return d_decline(d, "%d sequences are more than this rule takes", n);
  if (d_failed(d) || !side) return;
  const alloy_value *o = out_type(d, 0);
  alloy_dim longest = d_shape(o)[batch_first ? 1 : 0];
  alloy_dtype dt = d_dtype(o);
  alloy_value *items[256];
  for (int k = 0; k < n; k++) {
    alloy_value *x = d_to(d, d_tensor_at(d, 0, k), dt);
    if (!x) return;
    int r = d_rank(x);
    alloy_dim pad[2 * ALLOY_MAX_RANK];
    for (int j = 0; j < 2 * r; j++) pad[j] = C(0);
    pad[2 * r - (strcmp(side, "left") ? 1 : 2)] = alloy_dim_sub(d_symtab(d), longest, d_shape(x)[0]);
    items[k] = D(d, "aten.constant_pad_nd.default", V(x), d_dim_list(d, pad, 2 * r), *d_arg(d, 2));
  }
  d_out(d, 0, D(d, "aten.stack.default", d_value_list(d, items, n), I(batch_first ? 0 : 1)));
}

/* --- factories ------------------------------------------------------------------*/

/* The dtype range computes in (at::acc_type on CPU): float for float16 and
 * bfloat16, double for float32 and float64, int64 for integers. */
static alloy_dtype range_acc(alloy_dtype t) {
  if (t == ALLOY_F16 || t == ALLOY_BF16) return ALLOY_F32;
  return alloy_dtype_is_float(t) ? ALLOY_F64 : ALLOY_I64;
}

/* A Scalar argument as range's kernel reads it in acc: an integer acc
 * truncates a float. */
static alloy_arg acc_arg(decomp *d, int i, alloy_dtype acc) {
  const alloy_arg *a = d_arg(d, i);
  if (acc != ALLOY_I64 || a->kind != ALLOY_ARG_FLOAT) return *a;
  return I((int64_t)a->u.f);
}

/* range(start, end, step): start + step * i in the computation dtype,
 * converted to the result's; the count is the node's output size. */
static void range(decomp *d) {
  bool has_step = alloy_op_schema(alloy_node_op(d_node(d)))->nargs > 6;
  const alloy_value *o = out_type(d, 0);
  alloy_dim n = d_shape(o)[0];
  if (!alloy_dim_is_const(n)) return d_decline(d, "bounds known only at run time");
  alloy_dtype t = d_dtype(o), acc = range_acc(t);
  alloy_value *i = D(d, "aten.arange.start_step", I(0), SYM(n), I(1), DT(acc));
  alloy_value *steps = D(d, "aten.mul.Tensor", V(i), has_step ? acc_arg(d, 2, acc) : I(1));
  alloy_value *at = D(d, "aten.add.Tensor", V(steps), acc_arg(d, 0, acc));
  d_out(d, 0, d_to(d, at, t));
}

/* tensor / as_tensor of a number: scalar_tensor in the result's dtype. */
static void tensor_of(decomp *d) {
  d_out(d, 0, D(d, "aten.scalar_tensor.default", *d_arg(d, 0), DT(d_dtype(out_type(d, 0)))));
}

/* as_tensor(data, dtype): data, converted when dtype differs. */
static void as_tensor(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  alloy_dtype t = d_dtype(out_type(d, 0));
  if (x) d_out(d, 0, d_dtype(x) == t ? D(d, "aten.alias.default", V(x)) : d_to(d, x, t));
}

/* fill.Tensor(self, value): value in self's dtype, expanded to self. */
static void fill_tensor(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *v = d_tensor(d, 1);
  if (!x || !v) return;
  v = d_to(d, v, d_dtype(x));
  d_out(d, 0, D(d, "aten.expand.default", V(v), d_dim_list(d, d_shape(x), d_rank(x))));
}

/* empty_permuted(size, layout, dtype, ...): zeros of size (values of an
 * empty tensor are any). */
static void empty_permuted(decomp *d) {
  d_out(d, 0, D(d, "aten.zeros.default", *d_arg(d, 0), *d_arg(d, 2), *d_arg(d, 3), *d_arg(d, 4),
                *d_arg(d, 5)));
}

/* _dim_arange(like, dim) = arange(like.size(dim)). */
static void dim_arange(decomp *d) {
  alloy_dim n = d_shape(out_type(d, 0))[0];
  d_out(d, 0, D(d, "aten.arange.start_step", I(0), SYM(n), I(1), DT(ALLOY_I64)));
}

/* _shape_as_tensor(self): each size as a 0-dim int64, stacked. */
static void shape_as_tensor(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  if (!x) return;
  int r = d_rank(x);
  if (r == 0) return d_out(d, 0, D(d, "aten.full.default", LIST(I(0)), I(0), DT(ALLOY_I64)));
  alloy_value *sizes[ALLOY_MAX_RANK];
  for (int k = 0; k < r; k++) sizes[k] = D(d, "aten.scalar_tensor.default", SYM(d_shape(x)[k]), DT(ALLOY_I64));
  d_out(d, 0, D(d, "aten.stack.default", d_value_list(d, sizes, r)));
}

/* --- conversions --------------------------------------------------------------------
 * to() in its TorchScript forms and autocast's casts: a copy when the
 * dtype changes or a copy is asked for, else self; the dtype is the node's
 * output type (the shape functions read the arguments). */

static void to_like_out(decomp *d, int copy_at) {
  alloy_value *x = d_tensor(d, 0);
  if (!x) return;
  alloy_dtype t = d_dtype(out_type(d, 0));
  bool copy = copy_at >= 0 && d_bool(d, copy_at);
  if (d_failed(d)) return;
  if (!copy && t == d_dtype(x)) return d_out(d, 0, D(d, "aten.alias.default", V(x)));
  d_out(d, 0, D(d, "aten._to_copy.default", V(x), DT(t)));
}
static void to_other(decomp *d) { to_like_out(d, 3); }
static void to_prim_dtype(decomp *d) { to_like_out(d, 3); }
static void to_prim_device(decomp *d) { to_like_out(d, 4); }
static void to_prim_other(decomp *d) { to_like_out(d, 2); }
static void autocast(decomp *d) { to_like_out(d, -1); }

/* _to_cpu(tensors): each as it is. */
static void to_cpu(decomp *d) {
  int n = d_tensor_count(d, 0);
  if (n > MAX_ALIAS_OUTS) return d_decline(d, "%d tensors are more than a rule can give", n);
  for (int k = 0; k < n; k++) d_out(d, k, D(d, "aten.alias.default", V(d_tensor_at(d, 0, k))));
}

/* --- a tensor's one element as a number ---------------------------------------------
 * _local_scalar_dense of the tensor converted to the number's kind: int64
 * (a float truncates), float64, or bool (nonzero). */

static void as_number(decomp *d, alloy_dtype t) {
  alloy_value *x = d_tensor(d, 0);
  if (!x) return;
  x = t == ALLOY_BOOL ? D(d, "aten.ne.Scalar", V(x), I(0)) : d_to(d, x, t);
  d_out(d, 0, D(d, "aten._local_scalar_dense.default", V(x)));
}
static void as_int(decomp *d) { as_number(d, ALLOY_I64); }
static void as_float(decomp *d) { as_number(d, ALLOY_F64); }
static void as_bool(decomp *d) { as_number(d, ALLOY_BOOL); }
static void as_scalar(decomp *d) { d_out(d, 0, D(d, "aten._local_scalar_dense.default", V(d_tensor(d, 0)))); }

/* len.Tensor(t) = t.size(0); size / sym_size and stride / sym_stride:
 * each dim's. */
static void len_tensor(decomp *d) { d_out(d, 0, D(d, "aten.sym_size.int", V(d_tensor(d, 0)), I(0))); }

static void sizes_of(decomp *d, const char *op) {
  alloy_value *x = d_tensor(d, 0);
  if (!x) return;
  for (int k = 0; k < d_rank(x); k++) d_out(d, k, D(d, op, V(x), I(k)));
}
static void sizes(decomp *d) { sizes_of(d, "aten.sym_size.int"); }
static void strides(decomp *d) { sizes_of(d, "aten.sym_stride.int"); }

/* flatten_dense_tensors: each flattened, then cat. */
static void flatten_dense(decomp *d) {
  int n = d_tensor_count(d, 0);
  if (n > 256) return d_decline(d, "%d tensors are more than this rule takes", n);
  alloy_value *items[256];
  for (int k = 0; k < n; k++) items[k] = D(d, "aten.view.default", V(d_tensor_at(d, 0, k)), LIST(I(-1)));
  d_out(d, 0, n == 1 ? items[0] : D(d, "aten.cat.default", d_value_list(d, items, n)));
}

/* unflatten_dense_tensors(flat, tensors): consecutive slices of flat, each
 * viewed as its tensor (an empty one is a fresh empty tensor). */
static void unflatten_dense(decomp *d) {
  alloy_value *flat = d_tensor(d, 0);
  int n = d_tensor_count(d, 1);
  if (n > MAX_ALIAS_OUTS) return d_decline(d, "%d tensors are more than a rule can give", n);
  if (!flat) return;
  alloy_dim at = C(0);
  for (int k = 0; k < n; k++) {
    const alloy_value *o = out_type(d, k);
    alloy_dim numel = C(1);
    for (int j = 0; j < d_rank(o); j++) numel = alloy_dim_mul(d_symtab(d), numel, d_shape(o)[j]);
    if (alloy_dim_is_const(numel) && numel.value == 0) {
      d_out(d, k, D(d, "aten.full.default", d_dim_list(d, d_shape(o), d_rank(o)), I(0), DT(d_dtype(flat))));
      continue;
    }
    alloy_dim end = alloy_dim_add(d_symtab(d), at, numel);
    alloy_value *piece = D(d, "aten.slice.Tensor", V(flat), I(0), SYM(at), SYM(end), I(1));
    d_out(d, k, view_as_out(d, piece, k));
    at = end;
  }
}

const decomp_rule decomp_rules_views[] = {
#define RULE_ROW(op, ...) {op, alias, DECOMP_TO_CORE},
    ALLOY_META_ALIASES(RULE_ROW)
#undef RULE_ROW
    /* composite views */
    {"aten.movedim.int", movedim, DECOMP_TO_CORE},
    {"aten.movedim.intlist", movedim, DECOMP_TO_CORE},
    {"aten.mT.default", mt, DECOMP_TO_CORE},
    {"aten.mT.a", mt, DECOMP_TO_CORE},
    {"aten.mH.default", mh, DECOMP_TO_CORE},
    {"aten.mH.a", mh, DECOMP_TO_CORE},
    {"aten.adjoint.default", mh, DECOMP_TO_CORE},
    {"aten.matrix_H.default", mh, DECOMP_TO_CORE},
    {"aten.matrix_H.a", mh, DECOMP_TO_CORE},
    {"aten.numpy_T.default", numpy_t, DECOMP_TO_CORE},
    {"aten.numpy_T.a", numpy_t, DECOMP_TO_CORE},
    {"aten.atleast_1d.default", atleast, DECOMP_TO_CORE},
    {"aten.atleast_2d.default", atleast, DECOMP_TO_CORE},
    {"aten.atleast_3d.default", atleast, DECOMP_TO_CORE},
    {"aten.atleast_1d.Sequence", atleast, DECOMP_TO_CORE},
    {"aten.atleast_2d.Sequence", atleast, DECOMP_TO_CORE},
    {"aten.atleast_3d.Sequence", atleast, DECOMP_TO_CORE},
    {"aten.tensor_split.sections", tensor_split, DECOMP_TO_CORE},
    {"aten.tensor_split.indices", tensor_split, DECOMP_TO_CORE},
    {"aten.hsplit.int", tensor_split, DECOMP_TO_CORE},
    {"aten.vsplit.int", tensor_split, DECOMP_TO_CORE},
    {"aten.dsplit.int", tensor_split, DECOMP_TO_CORE},
    {"aten.hsplit.array", tensor_split, DECOMP_TO_CORE},
    {"aten.vsplit.array", tensor_split, DECOMP_TO_CORE},
    {"aten.dsplit.array", tensor_split, DECOMP_TO_CORE},
    {"aten.diag.default", diag, DECOMP_TO_CORE},
    {"aten.diagflat.default", diagflat, DECOMP_TO_CORE},
    {"aten.view_as.default", view_as, DECOMP_TO_CORE},
    {"aten.reshape_as.default", view_as, DECOMP_TO_CORE},
    {"aten.narrow.Tensor", narrow_tensor, DECOMP_TO_CORE},
    {"aten.fliplr.default", fliplr, DECOMP_TO_CORE},
    {"aten.flipud.default", flipud, DECOMP_TO_CORE},
    {"aten.tile.default", tile, DECOMP_TO_CORE},
    {"aten.broadcast_tensors.default", broadcast_tensors, DECOMP_TO_CORE},
    /* factories */
    {"aten.range.default", range, DECOMP_TO_CORE},
    {"aten.range.step", range, DECOMP_TO_CORE},
    {"aten.tensor.float", tensor_of, DECOMP_TO_CORE},
    {"aten.tensor.int", tensor_of, DECOMP_TO_CORE},
    {"aten.tensor.bool", tensor_of, DECOMP_TO_CORE},
    {"aten.as_tensor.float", tensor_of, DECOMP_TO_CORE},
    {"aten.as_tensor.int", tensor_of, DECOMP_TO_CORE},
    {"aten.as_tensor.bool", tensor_of, DECOMP_TO_CORE},
    {"aten.as_tensor.default", as_tensor, DECOMP_TO_CORE},
    {"aten.fill.Tensor", fill_tensor, DECOMP_TO_CORE},
    {"aten.empty_permuted.default", empty_permuted, DECOMP_TO_CORE},
    {"aten._dim_arange.default", dim_arange, DECOMP_TO_CORE},
    {"aten._shape_as_tensor.default", shape_as_tensor, DECOMP_TO_CORE},
    /* conversions */
    {"aten.to.other", to_other, DECOMP_TO_CORE},
    {"aten.to.prim_dtype", to_prim_dtype, DECOMP_TO_CORE},
    {"aten.to.prim_Device", to_prim_device, DECOMP_TO_CORE},
    {"aten.to.prim_other", to_prim_other, DECOMP_TO_CORE},
    {"aten._autocast_to_reduced_precision.default", autocast, DECOMP_TO_CORE},
    {"aten._autocast_to_full_precision.default", autocast, DECOMP_TO_CORE},
    {"aten._to_cpu.default", to_cpu, DECOMP_TO_CORE},
    /* a tensor's one element as a number */
    {"aten.Int.Tensor", as_int, DECOMP_TO_CORE},
    {"aten.Float.Tensor", as_float, DECOMP_TO_CORE},
    {"aten.Bool.Tensor", as_bool, DECOMP_TO_CORE},
    {"aten.is_nonzero.default", as_bool, DECOMP_TO_CORE},
    {"aten.IntImplicit.default", as_int, DECOMP_TO_CORE},
    {"aten.FloatImplicit.default", as_float, DECOMP_TO_CORE},
    {"aten.ScalarImplicit.default", as_scalar, DECOMP_TO_CORE},
    {"aten.len.Tensor", len_tensor, DECOMP_TO_CORE},
    {"aten.size.default", sizes, DECOMP_TO_CORE},
    {"aten.sym_size.default", sizes, DECOMP_TO_CORE},
    {"aten.stride.default", strides, DECOMP_TO_CORE},
    {"aten.sym_stride.default", strides, DECOMP_TO_CORE},
    /* joins */
    {"aten.column_stack.default", column_stack, DECOMP_TO_CORE},
    {"aten.dstack.default", dstack, DECOMP_TO_CORE},
    {"aten.meshgrid.default", meshgrid, DECOMP_TO_CORE},
    {"aten.meshgrid.indexing", meshgrid, DECOMP_TO_CORE},
    {"aten.cartesian_prod.default", cartesian_prod, DECOMP_TO_CORE},
    {"aten.combinations.default", combinations, DECOMP_TO_CORE},
    {"aten.pad_sequence.default", pad_sequence, DECOMP_TO_CORE},
    {"aten.flatten_dense_tensors.default", flatten_dense, DECOMP_TO_CORE},
    {"aten.unflatten_dense_tensors.default", unflatten_dense, DECOMP_TO_CORE},
    {NULL, NULL, 0},
};
