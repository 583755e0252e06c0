/*
 * ir/meta_views.c: shape functions of the composite views and splits that
 * PyTorch builds from the core ones (CompositeImplicitAutograd): movedim,
 * the matrix transposes (mT, mH, adjoint, matrix_H, numpy_T), atleast_1d /
 * 2d / 3d, tensor_split and hsplit / vsplit / dsplit, diag and diagflat,
 * view_as / reshape_as, narrow with a tensor start, fliplr / flipud, tile
 * and broadcast_tensors. Their checks and messages are PyTorch 2.11's;
 * where the result is another op's on computed arguments, the shape comes
 * from that op's shape function (meta_as_op, ir/meta_alias.h). Their
 * decompositions are in decompositions/rules_views.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/meta.h"
#include "ir/meta_alias.h"

static alloy_dim C(int64_t v) { return alloy_dim_const(v); }

/* A list of ints as PyTorch prints one, for messages; the struct lets a
 * call be a printf argument. */
typedef struct text {
  char s[256];
} text;

static text ints_text(const int64_t *v, int n) {
  text t;
  size_t at = 0;
  at += (size_t)snprintf(t.s + at, sizeof t.s - at, "[");
  for (int k = 0; k < n && at < sizeof t.s; k++)
    at += (size_t)snprintf(t.s + at, sizeof t.s - at, "%s%lld", k ? ", " : "", (long long)v[k]);
  if (at < sizeof t.s) snprintf(t.s + at, sizeof t.s - at, "]");
  return t;
}

/* A list argument of ints, for meta_as_op (items borrowed from v). */
static alloy_arg int_list(alloy_arg *items, const int64_t *v, int n) {
  for (int k = 0; k < n; k++) items[k] = alloy_arg_int(v[k]);
  return alloy_arg_list(items, n);
}

static alloy_arg dim_list(alloy_arg *items, const alloy_dim *v, int n) {
  for (int k = 0; k < n; k++) items[k] = alloy_arg_dim(v[k]);
  return alloy_arg_list(items, n);
}

static alloy_arg value_arg(const alloy_value *v) { return alloy_arg_value((alloy_value *)v); }

/* --- movedim ------------------------------------------------------------------
 * movedim.int(source, destination) and .intlist: the dims in source go to
 * the places in destination; the others keep their order in the places
 * left. The result is a permute. */

static alloy_error *meta_movedim(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  int64_t src[ALLOY_MAX_RANK + 1], dst[ALLOY_MAX_RANK + 1];
  int ns = 1, nd = 1;
  alloy_error *e;
  if (m->param) {
    if ((e = meta_ints(m, 1, src, ALLOY_MAX_RANK + 1, &ns))) return e;
    if ((e = meta_ints(m, 2, dst, ALLOY_MAX_RANK + 1, &nd))) return e;
  } else if ((e = meta_int(m, 1, &src[0])) || (e = meta_int(m, 2, &dst[0]))) {
    return e;
  }
  if (ns != nd)
    return meta_error(m,
                      "movedim: Invalid source or destination dims: source (%s dims) should "
                      "contain the same number of dims as destination (%s dims)",
                      ints_text(src, ns).s, ints_text(dst, nd).s);
  int rank = x->rank;
  int64_t perm[ALLOY_MAX_RANK];
  bool src_used[ALLOY_MAX_RANK] = {false}, dst_used[ALLOY_MAX_RANK] = {false};
  for (int k = 0; k < rank; k++) perm[k] = -1;
  for (int k = 0; k < ns; k++) {
    int s, d;
    if ((e = meta_wrap_dim(m, 1, src[k], rank, &s)) || (e = meta_wrap_dim(m, 2, dst[k], rank, &d)))
      return e;
    if (rank == 0) continue;
    if (src_used[s]) return meta_error(m, "movedim: repeated dim in `source` (%s)", ints_text(src, ns).s);
    if (dst_used[d])
      return meta_error(m, "movedim: repeated dim in `destination` (%s)", ints_text(dst, nd).s);
    src_used[s] = dst_used[d] = true;
    perm[d] = s;
  }
  for (int d = 0, s = 0; d < rank; d++) {
    if (perm[d] >= 0) continue;
    while (src_used[s]) s++;
    perm[d] = s++;
  }
  alloy_arg items[ALLOY_MAX_RANK], args[2] = {value_arg(x), int_list(items, perm, rank)};
  return meta_as_op(m, "aten.permute.default", args, 2, 0);
}

/* --- matrix transposes -----------------------------------------------------------*/

enum { T_MT, T_MH, T_ADJOINT, T_MATRIX_H, T_NUMPY_T };

/* mT, mH, adjoint: the last two dims swapped (conjugated for complex, the
 * same on real tensors); matrix_H: the same on a matrix only; numpy_T: every
 * dim reversed. */
static alloy_error *meta_matrix_t(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  static const char *const names[] = {"tensor.mT", "tensor.mH", "tensor.adjoint()"};
  if (m->param == T_MATRIX_H && x->rank != 2)
    return meta_error(m,
                      "tensor.H is only supported on matrices (2-D tensors). Got %d-D tensor.%s",
                      x->rank, x->rank > 2 ? " For batches of matrices, consider using tensor.mH" : "");
  if (m->param <= T_ADJOINT && x->rank < 2)
    return meta_error(m, "%s is only supported on matrices or batches of matrices. Got %d-D tensor.",
                      names[m->param], x->rank);
  int64_t perm[ALLOY_MAX_RANK];
  for (int k = 0; k < x->rank; k++) perm[k] = m->param == T_NUMPY_T ? x->rank - 1 - k : k;
  if (m->param != T_NUMPY_T) {
    perm[x->rank - 2] = x->rank - 1;
    perm[x->rank - 1] = x->rank - 2;
  }
  alloy_arg items[ALLOY_MAX_RANK], args[2] = {value_arg(x), int_list(items, perm, x->rank)};
  return meta_as_op(m, "aten.permute.default", args, 2, 0);
}

/* --- atleast_Nd ----------------------------------------------------------------------
 * atleast_1d / 2d / 3d (param N, + 4 for the .Sequence overloads): a tensor
 * of fewer dims gets dims of size 1: [] -> [1] / [1, 1] / [1, 1, 1], [n]
 * -> [1, n] / [1, n, 1], [a, b] -> [a, b, 1]. */

static int atleast_shape(const alloy_value *x, int n, alloy_dim *out) {
  int r = x->rank;
  if (r >= n) {
    if (r) memcpy(out, x->shape, sizeof *out * (size_t)r);
    return r;
  }
  for (int k = 0; k < n; k++) out[k] = C(1);
  if (r == 1) out[n == 3 ? 1 : n - 1] = x->shape[0];
  if (r == 2) out[0] = x->shape[0], out[1] = x->shape[1];
  return n;
}

static alloy_error *meta_atleast(alloy_meta *m) {
  int n = m->param & 3;
  alloy_dim out[ALLOY_MAX_RANK];
  if (!(m->param & 4)) {
    const alloy_value *x = meta_tensor(m, 0);
    return meta_out_tensor(m, 0, x->dtype, out, atleast_shape(x, n, out));
  }
  int count = meta_tensor_count(m, 0);
  alloy_error *e = meta_set_num_outputs(m, count);
  for (int k = 0; k < count && !e; k++) {
    const alloy_value *x = meta_tensor_at(m, 0, k);
    if (!x) return meta_error(m, "argument 'tensors': item %d is None", k);
    e = meta_out_tensor(m, k, x->dtype, out, atleast_shape(x, n, out));
  }
  return e;
}

/* --- splits ------------------------------------------------------------------------*/

/* The pieces of x along dim d whose boundaries are bounds[0..n] (raw, as
 * slice takes them: negative counting from the end, clamped), each the
 * shape slice gives. */
static alloy_error *slice_pieces(alloy_meta *m, const alloy_value *x, int d, const alloy_dim *bounds,
                                 int n) {
  alloy_error *e = meta_set_num_outputs(m, n);
  for (int k = 0; k < n && !e; k++) {
    alloy_arg args[5] = {value_arg(x), alloy_arg_int(d), alloy_arg_dim(bounds[k]),
                         alloy_arg_dim(bounds[k + 1]), alloy_arg_int(1)};
    alloy_meta fm;
    e = meta_run_op(m, "aten.slice.Tensor", args, 5, &fm);
    if (!e) m->outs[k] = fm.outs[0];
    free(fm.outs);
  }
  return e;
}

/* tensor_split.sections(sections, dim): the first n % sections pieces have
 * n / sections + 1 elements, the rest n / sections (n concrete). */
static alloy_error *tensor_split_sections(alloy_meta *m, const alloy_value *x, int64_t sections,
                                          int d) {
  if (sections <= 0)
    return meta_error(m, "number of sections must be larger than 0, got %lld", (long long)sections);
  alloy_dim n = x->shape[d];
  if (!alloy_dim_is_const(n))
    return meta_error(m, "tensor_split: the size of dim %d must be concrete to split it into sections", d);
  if (sections > META_MAX_OUTPUTS)
    return meta_error(m, "%lld sections: a node has at most %d outputs", (long long)sections,
                      META_MAX_OUTPUTS);
  alloy_dim *bounds = malloc(sizeof *bounds * (size_t)(sections + 1));
  if (!bounds) return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  int64_t size = n.value / sections, extra = n.value % sections, at = 0;
  bounds[0] = C(0);
  for (int64_t k = 0; k < sections; k++) {
    at += size + (k < extra);
    bounds[k + 1] = C(at);
  }
  alloy_error *e = slice_pieces(m, x, d, bounds, (int)sections);
  free(bounds);
  return e;
}

/* tensor_split.indices(indices, dim): piece k is slice(indices[k-1],
 * indices[k]), from 0 and to the end. */
static alloy_error *tensor_split_indices(alloy_meta *m, const alloy_value *x, int i, int d) {
  int n = m->args[i].kind == ALLOY_ARG_LIST ? m->args[i].u.list.n : 0;
  alloy_dim *bounds = malloc(sizeof *bounds * (size_t)(n + 2));
  if (!bounds) return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  int got;
  alloy_error *e = meta_dims(m, i, bounds + 1, n, &got);
  if (!e) {
    bounds[0] = C(0);
    bounds[got + 1] = x->shape[d];
    e = slice_pieces(m, x, d, bounds, got + 1);
  }
  free(bounds);
  return e;
}

enum { SPLIT_SECTIONS = 0, SPLIT_INDICES = 1 };

/* tensor_split.sections / .indices(self, sections | indices, dim). */
static alloy_error *meta_tensor_split(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  if (x->rank == 0)
    return meta_error(m,
                      "tensor_split expected at least a 1-dimensional tensor, but got a tensor "
                      "with 0 dims");
  int64_t dim, sections;
  int d;
  alloy_error *e = meta_int(m, 2, &dim);
  if (!e) e = meta_wrap_dim(m, 2, dim, x->rank, &d);
  if (e) return e;
  if (m->param == SPLIT_INDICES) return tensor_split_indices(m, x, 1, d);
  if ((e = meta_int(m, 1, &sections))) return e;
  return tensor_split_sections(m, x, sections, d);
}

/* hsplit / vsplit / dsplit (param: the dim, 0 for hsplit, + 4 for the
 * .array overloads): tensor_split along dim 1 (hsplit of a vector: 0), 0
 * or 2, into sections that must divide the dim. */
static alloy_error *meta_hvdsplit(alloy_meta *m) {
  static const char *const names[] = {"hsplit", "vsplit", "dsplit"};
  static const int need[] = {1, 2, 3};
  int which = m->param & 3;
  const alloy_value *x = meta_tensor(m, 0);
  if (x->rank < need[which])
    return meta_error(m,
                      "torch.%s requires a tensor with at least %d dimension, but got a tensor "
                      "with %d dimensions!",
                      names[which], need[which], x->rank);
  int d = which == 0 ? (x->rank == 1 ? 0 : 1) : which == 1 ? 0 : 2;
  if (m->param & 4) return tensor_split_indices(m, x, 1, d);
  int64_t sections;
  alloy_error *e = meta_int(m, 1, &sections);
  if (e) return e;
  alloy_dim n = x->shape[d];
  bool divides = sections != 0 && (!alloy_dim_is_const(n) || n.value % sections == 0);
  if (!divides) {
    char b[64];
    alloy_dim_print(n, b, sizeof b);
    return meta_error(m,
                      "torch.%s attempted to split along dimension %d, but the size of the "
                      "dimension %s is not divisible by the split_size %lld!",
                      names[which], d, b, (long long)sections);
  }
  return tensor_split_sections(m, x, sections, d);
}

/* --- diagonals -------------------------------------------------------------------------*/

/* diag(self, diagonal): a vector becomes the matrix with it on diagonal
 * `diagonal` (diag_embed), a matrix gives that diagonal. */
static alloy_error *meta_diag(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  if (x->rank != 1 && x->rank != 2)
    return meta_error(m, "diag(): Supports 1D or 2D tensors. Got %dD", x->rank);
  alloy_arg args[4] = {value_arg(x), m->args[1], alloy_arg_int(0), alloy_arg_int(1)};
  return meta_as_op(m, x->rank == 1 ? "aten.diag_embed.default" : "aten.diagonal.default", args,
                    4, 0);
}

/* diagflat(self, offset): self flattened, on diagonal `offset`. */
static alloy_error *meta_diagflat(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  alloy_dim n = meta_numel(m, x->shape, x->rank);
  alloy_value flat = *x;
  flat.rank = 1;
  flat.shape = &n;
  flat.strides = NULL;
  alloy_arg args[4] = {value_arg(&flat), m->args[1], alloy_arg_int(0), alloy_arg_int(1)};
  return meta_as_op(m, "aten.diag_embed.default", args, 4, 0);
}

/* --- the rest ------------------------------------------------------------------------*/

/* view_as / reshape_as(other) (param 0 / 1): view / reshape to other's
 * shape. */
static alloy_error *meta_view_as(alloy_meta *m) {
  const alloy_value *o = meta_tensor(m, 1);
  alloy_arg items[ALLOY_MAX_RANK];
  alloy_arg args[2] = {m->args[0], dim_list(items, o->shape, o->rank)};
  return meta_as_op(m, m->param ? "aten.reshape.default" : "aten.view.default", args, 2, 0);
}

/* narrow.Tensor(dim, start, length): start is a 0-dim integer tensor, read
 * at run time; the result has length elements along dim. */
static alloy_error *meta_narrow_tensor(alloy_meta *m) {
  const alloy_value *start = meta_tensor(m, 2);
  if (start->rank != 0 || !alloy_dtype_is_integer(start->dtype))
    return meta_error(m, "start must be an 0-dim integral Tensor.");
  alloy_arg args[4] = {m->args[0], m->args[1], alloy_arg_int(0), m->args[3]};
  return meta_as_op(m, "aten.narrow.default", args, 4, 0);
}

/* fliplr (param 0): dim 1 reversed, of a tensor of at least 2 dims; flipud
 * (param 1): dim 0, of at least 1. */
static alloy_error *meta_flip_lr_ud(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  if (x->rank < 2 - m->param) return meta_error(m, "Input must be >= %d-d.", 2 - m->param);
  return meta_out_like(m, 0, x, x->dtype);
}

/* tile(dims): repeat, with dims padded in front by ones up to self's rank. */
static alloy_error *meta_tile(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  alloy_dim dims[ALLOY_MAX_RANK + 1], full[ALLOY_MAX_RANK];
  int n;
  alloy_error *e = meta_dims(m, 1, dims, ALLOY_MAX_RANK + 1, &n);
  if (e) return e;
  if (n > ALLOY_MAX_RANK) return meta_error(m, "argument 'dims': %d dims, at most %d", n, ALLOY_MAX_RANK);
  int pad = x->rank > n ? x->rank - n : 0;
  for (int k = 0; k < pad; k++) full[k] = C(1);
  for (int k = 0; k < n; k++) full[pad + k] = dims[k];
  alloy_arg items[ALLOY_MAX_RANK], args[2] = {value_arg(x), dim_list(items, full, pad + n)};
  return meta_as_op(m, "aten.repeat.default", args, 2, 0);
}

/* broadcast_tensors(tensors): each tensor expanded to the shape they all
 * broadcast to. */
static alloy_error *meta_broadcast_tensors(alloy_meta *m) {
  int n = meta_tensor_count(m, 0);
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank = 0;
  alloy_error *e;
  for (int k = 0; k < n; k++) {
    const alloy_value *x = meta_tensor_at(m, 0, k);
    if (!x) return meta_error(m, "argument 'tensors': item %d is None", k);
    alloy_dim b[ALLOY_MAX_RANK];
    int rb;
    if ((e = meta_broadcast(m, shape, rank, x->shape, x->rank, b, &rb))) return e;
    if (rb) memcpy(shape, b, sizeof *b * (size_t)rb);
    rank = rb;
  }
  if ((e = meta_set_num_outputs(m, n))) return e;
  for (int k = 0; k < n && !e; k++) e = meta_out_tensor(m, k, meta_tensor_at(m, 0, k)->dtype, shape, rank);
  return e;
}

const alloy_meta_entry alloy_meta_views[] = {
    {"aten.movedim.int", meta_movedim, 0},
    {"aten.movedim.intlist", meta_movedim, 1},
    {"aten.mT.default", meta_matrix_t, T_MT},
    {"aten.mT.a", meta_matrix_t, T_MT},
    {"aten.mH.default", meta_matrix_t, T_MH},
    {"aten.mH.a", meta_matrix_t, T_MH},
    {"aten.adjoint.default", meta_matrix_t, T_ADJOINT},
    {"aten.matrix_H.default", meta_matrix_t, T_MATRIX_H},
    {"aten.matrix_H.a", meta_matrix_t, T_MATRIX_H},
    {"aten.numpy_T.default", meta_matrix_t, T_NUMPY_T},
    {"aten.numpy_T.a", meta_matrix_t, T_NUMPY_T},
    {"aten.atleast_1d.default", meta_atleast, 1},
    {"aten.atleast_2d.default", meta_atleast, 2},
    {"aten.atleast_3d.default", meta_atleast, 3},
    {"aten.atleast_1d.Sequence", meta_atleast, 4 | 1},
    {"aten.atleast_2d.Sequence", meta_atleast, 4 | 2},
    {"aten.atleast_3d.Sequence", meta_atleast, 4 | 3},
    {"aten.tensor_split.sections", meta_tensor_split, SPLIT_SECTIONS},
    {"aten.tensor_split.indices", meta_tensor_split, SPLIT_INDICES},
    {"aten.hsplit.int", meta_hvdsplit, 0},
    {"aten.vsplit.int", meta_hvdsplit, 1},
    {"aten.dsplit.int", meta_hvdsplit, 2},
    {"aten.hsplit.array", meta_hvdsplit, 4 | 0},
    {"aten.vsplit.array", meta_hvdsplit, 4 | 1},
    {"aten.dsplit.array", meta_hvdsplit, 4 | 2},
    {"aten.diag.default", meta_diag, 0},
    {"aten.diagflat.default", meta_diagflat, 0},
    {"aten.view_as.default", meta_view_as, 0},
    {"aten.reshape_as.default", meta_view_as, 1},
    {"aten.narrow.Tensor", meta_narrow_tensor, 0},
    {"aten.fliplr.default", meta_flip_lr_ud, 0},
    {"aten.flipud.default", meta_flip_lr_ud, 1},
    {"aten.tile.default", meta_tile, 0},
    {"aten.broadcast_tensors.default", meta_broadcast_tensors, 0},
    {NULL, NULL, 0},
};
