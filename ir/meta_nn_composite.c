/*
 * ir/meta_nn_composite.c: shape functions of the composite neural-network
 * ops that Alloy registers only to decompose them (decompositions/
 * rules_nn*.c): the normalizations group_norm, batch_norm, instance_norm
 * and rms_norm, whose result has the input's type, with _fused_rms_norm,
 * norm_except_dim and the weight norms; pad, which widens the
 * trailing dims; the losses (cross_entropy_loss, nll_loss and its nd/2d
 * forms, the elementwise losses, cosine embedding, triplet margin) and the
 * distances (pairwise_distance, cosine_similarity, pdist, _euclidean_dist);
 * embedding_bag, typed as the _embedding_bag it becomes, and
 * embedding_renorm; prelu, bilinear, _addmm_activation, and
 * the attention variants of the math reference and the CPU flash kernel.
 */
#include <string.h>

#include "ir/meta.h"

/* The result has the type of the input. */
static alloy_error *meta_like_input(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  return meta_out_like(m, 0, x, x->dtype);
}

/* pad: pairs (before, after) from the last dim backwards. */
static alloy_error *meta_pad(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  alloy_dim pad[2 * ALLOY_MAX_RANK], shape[ALLOY_MAX_RANK];
  int n;
  alloy_error *e = meta_dims(m, 1, pad, 2 * ALLOY_MAX_RANK, &n);
  if (e) return e;
  if (n % 2 || n / 2 > x->rank)
    return meta_error(m,
                      "Padding length must be divisible by 2 and at most twice the rank "
                      "(%d for a tensor of rank %d)",
                      n, x->rank);
  for (int i = 0; i < x->rank; i++) shape[i] = x->shape[i];
  for (int k = 0; k < n / 2; k++) {
    int d = x->rank - 1 - k;
    shape[d] = alloy_dim_add(m->st, shape[d], alloy_dim_add(m->st, pad[2 * k], pad[2 * k + 1]));
  }
  if ((e = meta_sym_check(m))) return e;
  return meta_out_tensor(m, 0, x->dtype, shape, x->rank);
}

/* The losses over classes on dim 1 (dim 0 for one unbatched sample):
 * reduction none keeps every other dim, mean and sum give a scalar. */
static alloy_error *meta_class_loss(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  if (m->param == 4 && x->rank != 4)
    return meta_error(m, "only batches of spatial inputs supported (4D tensors), but got input "
                      "of size: %s", meta_shape_text(x->shape, x->rank, (char[256]){0}, 256));
  if (x->rank < 1) return meta_error(m, "Expected 1 or more dimensions (got 0)");
  int64_t reduction;
  alloy_error *e = meta_int(m, 3, &reduction);
  if (e) return e;
  if (reduction != 0) return meta_out_tensor(m, 0, x->dtype, NULL, 0);
  alloy_dim shape[ALLOY_MAX_RANK];
  int r = 0;
  for (int i = 0; i < x->rank; i++)
    if (i != (x->rank == 1 ? 0 : 1)) shape[r++] = x->shape[i];
  return meta_out_tensor(m, 0, x->dtype, shape, r);
}

/* --- the losses of torch.nn.functional and the distances -------------------*/

/* A loss's result: the elementwise shape for reduction none, else a
 * scalar. */
static alloy_error *loss_out(alloy_meta *m, int i_reduction, alloy_dtype t, const alloy_dim *shape,
                             int rank) {
  int64_t r;
  alloy_error *e = meta_int(m, i_reduction, &r);
  if (e) return e;
  if (r < 0 || r > 2)
    return meta_error(m, "argument '%s': %lld is not a valid reduction (0 none, 1 mean, 2 sum)",
                      meta_arg_name(m, i_reduction), (long long)r);
  return r == 0 ? meta_out_tensor(m, 0, t, shape, rank) : meta_out_tensor(m, 0, t, NULL, 0);
}

/* The dtype and broadcast shape of tensor arguments 0..n-1; a loss that
 * adds a float to them (float_math) makes an integer result float32. */
static alloy_error *loss_operands(alloy_meta *m, int n, bool float_math, alloy_dtype *t,
                                  alloy_dim *shape, int *rank) {
  alloy_promo_operand ops[3];
  const alloy_value *x = meta_tensor(m, 0);
  memcpy(shape, x->shape, sizeof *shape * (size_t)x->rank);
  *rank = x->rank;
  for (int i = 0; i < n; i++) {
    ops[i] = meta_promo_operand(m, i);
    const alloy_value *v = meta_tensor(m, i);
    alloy_dim b[ALLOY_MAX_RANK];
    int rb;
    alloy_error *e = meta_broadcast(m, shape, *rank, v->shape, v->rank, b, &rb);
    if (e) return e;
    memcpy(shape, b, sizeof *b * (size_t)rb);
    *rank = rb;
  }
  *t = alloy_result_type(ops, n);
  if (alloy_dtype_is_complex(*t))
    return meta_error(m, "the losses take real tensors, got %s", alloy_dtype_name(*t));
  if (float_math && !alloy_dtype_is_float(*t)) *t = ALLOY_F32;
  return NULL;
}

/* The elementwise losses: l1_loss(self, target, reduction), kl_div(self,
 * target, reduction), poisson_nll_loss(input, target, log_input, full,
 * eps, reduction), margin_ranking_loss(input1, input2, target, margin,
 * reduction), hinge_embedding_loss(self, target, margin, reduction): the
 * operands broadcast. param: tensor count * 16 + position of reduction
 * (+ 256: float arithmetic). */
static alloy_error *meta_elementwise_loss(alloy_meta *m) {
  alloy_dtype t;
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank;
  alloy_error *e = loss_operands(m, (m->param / 16) & 15, m->param & 256, &t, shape, &rank);
  return e ? e : loss_out(m, m->param & 15, t, shape, rank);
}

/* cosine_embedding_loss(input1, input2, target, margin, reduction): 2-D
 * inputs with a 1-D target, or 1-D inputs with a 0-D one; the loss of
 * each row. */
static alloy_error *meta_cosine_embedding_loss(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0), *b = meta_tensor(m, 1), *y = meta_tensor(m, 2);
  if (y->rank > 1)
    return meta_error(m, "0D or 1D target tensor expected, multi-target not supported");
  if (a->rank != y->rank + 1 || b->rank != y->rank + 1)
    return meta_error(m, "%dD target tensor expects %dD input tensors, but found inputs with "
                      "%d and %d dims", y->rank, y->rank + 1, a->rank, b->rank);
  alloy_dtype t;
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank;
  alloy_error *e = loss_operands(m, 2, true, &t, shape, &rank);
  return e ? e : loss_out(m, 4, t, shape, rank - 1);
}

/* ctc_loss.IntList(log_probs [T, N, C] or [T, C], targets, input_lengths,
 * target_lengths, blank, reduction, zero_infinity): one loss per sequence
 * (a scalar for an unbatched one) for reduction none, else a scalar. */
static alloy_error *meta_ctc_loss(alloy_meta *m) {
  const alloy_value *lp = meta_tensor(m, 0), *tg = meta_tensor(m, 1);
  int64_t il[ALLOY_MAX_RANK * 64], tl[ALLOY_MAX_RANK * 64], blank;
  int ni, nt;
  alloy_error *e;
  if ((e = meta_ints(m, 2, il, ALLOY_MAX_RANK * 64, &ni)) ||
      (e = meta_ints(m, 3, tl, ALLOY_MAX_RANK * 64, &nt)) || (e = meta_int(m, 4, &blank)))
    return e;
  if (lp->rank != 2 && lp->rank != 3)
    return meta_error(m, "argument 'log_probs': expected a 2-D or 3-D tensor, got %dD", lp->rank);
  if (!alloy_dtype_is_float(lp->dtype))
    return meta_error(m, "argument 'log_probs': expected a floating point tensor, got %s",
                      alloy_dtype_name(lp->dtype));
  if (alloy_dtype_is_float(tg->dtype) || tg->dtype == ALLOY_BOOL)
    return meta_error(m, "argument 'targets': expected integer targets, got %s",
                      alloy_dtype_name(tg->dtype));
  alloy_dim n = lp->rank == 3 ? lp->shape[1] : alloy_dim_const(1);
  if (!alloy_dim_is_const(n) || ni != n.value || nt != n.value)
    return meta_error(m, "input_lengths and target_lengths must have one length per sequence "
                      "(batch size %s), got %d and %d",
                      meta_shape_text(&n, 1, (char[64]){0}, 64), ni, nt);
  alloy_dim T = lp->shape[0], C = lp->shape[lp->rank - 1];
  if (alloy_dim_is_const(C) && (blank < 0 || blank >= C.value))
    return meta_error(m, "blank must be in label range");
  for (int i = 0; i < ni; i++)
    if (il[i] < 0 || (alloy_dim_is_const(T) && il[i] > T.value) || tl[i] < 0)
      return meta_error(m, "Expected input_lengths to be in [0, %s] and target lengths to be "
                        "non-negative", meta_shape_text(&T, 1, (char[64]){0}, 64));
  return loss_out(m, 5, lp->dtype, &n, lp->rank == 3 ? 1 : 0);
}

/* pairwise_distance(x1, x2, p, eps, keepdim): the p-norm of x1 - x2 + eps
 * over the last dim of the broadcast operands. */
static alloy_error *meta_pairwise_distance(alloy_meta *m) {
  alloy_dtype t;
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank;
  alloy_error *e = loss_operands(m, 2, true, &t, shape, &rank);
  if (e) return e;
  if (rank == 0) return meta_error(m, "pairwise_distance needs at least one dim");
  if (meta_bool(m, 4)) {
    shape[rank - 1] = alloy_dim_const(1);
    return meta_out_tensor(m, 0, t, shape, rank);
  }
  return meta_out_tensor(m, 0, t, shape, rank - 1);
}

/* triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
 * reduction): the pairwise distances' shape, of operands of one rank. */
static alloy_error *meta_triplet_margin_loss(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0), *p = meta_tensor(m, 1), *n = meta_tensor(m, 2);
  if (a->rank != p->rank || p->rank != n->rank)
    return meta_error(m, "The anchor, positive, and negative tensors are expected to have the "
                      "same number of dimensions, but got: anchor %dD, positive %dD, and "
                      "negative %dD inputs", a->rank, p->rank, n->rank);
  alloy_dtype t;
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank;
  alloy_error *e = loss_operands(m, 3, true, &t, shape, &rank);
  if (e) return e;
  if (rank == 0) return meta_error(m, "triplet_margin_loss needs at least one dim");
  return loss_out(m, 7, t, shape, rank - 1);
}

/* cosine_similarity(x1, x2, dim, eps): the broadcast operands reduced
 * over dim, in their common dtype, which must be floating. */
static alloy_error *meta_cosine_similarity(alloy_meta *m) {
  alloy_dtype t;
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank, d;
  alloy_error *e = loss_operands(m, 2, false, &t, shape, &rank);
  if (e) return e;
  if (!alloy_dtype_is_float(t))
    return meta_error(m, "expected common dtype to be floating point, yet common dtype is %s",
                      alloy_dtype_name(t));
  int64_t dim;
  if ((e = meta_int(m, 2, &dim)) || (e = meta_wrap_dim(m, 2, dim, rank, &d))) return e;
  if (rank > 0) {
    memmove(shape + d, shape + d + 1, sizeof *shape * (size_t)(rank - d - 1));
    rank--;
  }
  return meta_out_tensor(m, 0, t, shape, rank);
}

/* pdist(self, p): _pdist_forward's checks and result. */
static alloy_error *meta_pdist_checked(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  if (x->rank != 2)
    return meta_error(m, "pdist only supports 2D tensors, got: %dD", x->rank);
  if (!alloy_dtype_is_float(x->dtype)) return meta_error(m, "pdist only supports floating-point dtypes");
  if (meta_float(m, 1) < 0) return meta_error(m, "pdist only supports non-negative p values");
  alloy_dim n = x->shape[0], one = alloy_dim_const(1);
  alloy_dim pairs = alloy_dim_floordiv(m->st, alloy_dim_mul(m->st, n, alloy_dim_sub(m->st, n, one)),
                                       alloy_dim_const(2));
  alloy_error *e = meta_sym_check(m);
  return e ? e : meta_out_tensor(m, 0, x->dtype, &pairs, 1);
}

/* _euclidean_dist(x1, x2): [*, r1, m] and [*, r2, m] to [*, r1, r2]. */
static alloy_error *meta_euclidean_dist(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0), *b = meta_tensor(m, 1);
  if (a->rank < 2 || b->rank < 2)
    return meta_error(m, "_euclidean_dist takes matrices (or batches of them), got %dD and %dD",
                      a->rank, b->rank);
  if (!alloy_dtype_is_float(a->dtype) || a->dtype != b->dtype)
    return meta_error(m, "_euclidean_dist takes two floating-point tensors of one dtype, got %s "
                      "and %s", alloy_dtype_name(a->dtype), alloy_dtype_name(b->dtype));
  if (alloy_dim_eq(m->st, a->shape[a->rank - 1], b->shape[b->rank - 1]) == ALLOY_FALSE)
    return meta_error(m, "x1 and x2 must have the same number of columns");
  alloy_dim out[ALLOY_MAX_RANK];
  int rank;
  alloy_error *e = meta_broadcast(m, a->shape, a->rank - 2, b->shape, b->rank - 2, out, &rank);
  if (e) return e;
  out[rank] = a->shape[a->rank - 2];
  out[rank + 1] = b->shape[b->rank - 2];
  return meta_out_tensor(m, 0, a->dtype, out, rank + 2);
}

/* embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
 * per_sample_weights, include_last_offset) -> (output, offset2bag,
 * bag_size, max_indices), as _embedding_bag with no padding_idx on the
 * CPU: offset2bag is empty on the fast sum path of floating weights. */
static alloy_error *meta_embedding_bag(alloy_meta *m) {
  const alloy_value *w = meta_tensor(m, 0), *ix = meta_tensor(m, 1), *off = meta_tensor(m, 2);
  int64_t mode;
  alloy_error *e = meta_int(m, 4, &mode);
  if (e) return e;
  if (w->rank != 2 || ix->rank != 1 || off->rank != 1)
    return meta_error(m,
                      "expected a 2-D weight and 1-D indices and offsets, got %d, %d and %d dims",
                      w->rank, ix->rank, off->rank);
  if (mode < 0 || mode > 2)
    return meta_error(m, "argument 'mode': expected 0 (sum), 1 (mean) or 2 (max), got %lld",
                      (long long)mode);
  alloy_dim bags = off->shape[0];
  if (meta_bool(m, 7)) bags = alloy_dim_sub(m->st, bags, alloy_dim_const(1));
  alloy_dim two[2] = {bags, w->shape[1]}, one[1];
  if ((e = meta_out_tensor(m, 0, w->dtype, two, 2))) return e;
  /* .padding_idx: a padding index (wrapped) takes the CPU kernel off its
   * fast path */
  bool padded = m->nargs > 8 && !meta_is_none(m, 8);
  if (padded) {
    int64_t pi;
    if ((e = meta_int(m, 8, &pi))) return e;
    alloy_dim nw = w->shape[0];
    if (alloy_dim_is_const(nw) && (pi < -nw.value || pi >= nw.value))
      return meta_error(m, "padding_idx must be within the number of embeddings, -%lld through "
                        "%lld, but got %lld", (long long)nw.value, (long long)nw.value - 1,
                        (long long)pi);
  }
  bool fast = !padded && (w->dtype == ALLOY_F32 || w->dtype == ALLOY_F16 || w->dtype == ALLOY_BF16);
  one[0] = mode != 0 || !fast ? ix->shape[0] : alloy_dim_const(0);
  if ((e = meta_out_tensor(m, 1, off->dtype, one, 1))) return e;
  one[0] = bags;
  if ((e = meta_out_tensor(m, 2, off->dtype, one, 1))) return e;
  return mode == 2 ? meta_out_tensor(m, 3, off->dtype, two, 2)
                   : meta_out_tensor(m, 3, off->dtype, one, 1);
}

/* _fused_rms_norm(input, normalized_shape, weight, eps) -> (output,
 * rstd): the output has the input's type, rstd its shape with the
 * normalized dims 1, in opmath (float32 below it). */
static alloy_error *meta_fused_rms_norm(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0), *w = meta_tensor(m, 2);
  alloy_dim ns[ALLOY_MAX_RANK], shape[ALLOY_MAX_RANK];
  int n;
  alloy_error *e = meta_dims(m, 1, ns, ALLOY_MAX_RANK, &n);
  if (e) return e;
  if (!alloy_dtype_is_float(x->dtype))
    return meta_error(m, "\"rms_norm\" not implemented for '%s': argument '%s' must be a "
                      "floating-point tensor", alloy_dtype_name(x->dtype), meta_arg_name(m, 0));
  if (n < 1 || n > x->rank)
    return meta_error(m, "argument '%s': expected 1 to %d dims, got %d", meta_arg_name(m, 1),
                      x->rank, n);
  for (int i = 0; i < n; i++) {
    bool bad = alloy_dim_eq(m->st, x->shape[x->rank - n + i], ns[i]) == ALLOY_FALSE;
    bad |= w && (w->rank != n || alloy_dim_eq(m->st, w->shape[i], ns[i]) == ALLOY_FALSE);
    if (bad)
      return meta_error(m, "Given normalized_shape=%s, expected input and weight ending in it",
                        meta_shape_text(ns, n, (char[256]){0}, 256));
  }
  for (int i = 0; i < x->rank; i++) shape[i] = i < x->rank - n ? x->shape[i] : alloy_dim_const(1);
  if ((e = meta_out_like(m, 0, x, x->dtype))) return e;
  return meta_out_tensor(m, 1, alloy_opmath_dtype(x->dtype), shape, x->rank);
}

/* norm_except_dim(v, pow, dim): the p-norm of v over every dim but dim,
 * which alone keeps its size (dim -1: over all of v, a scalar). */
static alloy_error *meta_norm_except_dim(alloy_meta *m) {
  const alloy_value *v = meta_tensor(m, 0);
  int64_t dim;
  alloy_error *e = meta_int(m, 2, &dim);
  if (e) return e;
  if (!alloy_dtype_is_float(v->dtype) && !alloy_dtype_is_complex(v->dtype))
    return meta_error(m, "norm(): input dtype should be either floating point or complex. "
                      "Got %s instead.", alloy_dtype_name(v->dtype));
  if (dim == -1) return meta_out_tensor(m, 0, v->dtype, NULL, 0);
  int d;
  if ((e = meta_wrap_dim(m, 2, dim, v->rank, &d))) return e;
  alloy_dim shape[ALLOY_MAX_RANK];
  for (int i = 0; i < v->rank; i++) shape[i] = i == d ? v->shape[i] : alloy_dim_const(1);
  return meta_out_tensor(m, 0, v->dtype, shape, v->rank);
}

/* _weight_norm(v, g, dim) = v * (g / norm_except_dim(v, 2, dim));
 * _weight_norm_interface(v, g, dim) -> (w, norms), PyTorch's fused CPU
 * kernel (dim 0 or the last; v and g of one dtype), norms of g's shape in
 * opmath. _weight_norm takes the fused kernel where it can (param 0) and
 * refuses what it refuses; elsewhere its dtype is v's and g's promoted. */
static alloy_error *meta_weight_norm(alloy_meta *m) {
  const alloy_value *v = meta_tensor(m, 0), *g = meta_tensor(m, 1);
  int64_t dim;
  alloy_error *e = meta_int(m, 2, &dim);
  if (e) return e;
  bool interface = m->param == 1;
  bool half = v->dtype == ALLOY_F16 || g->dtype == ALLOY_F16;
  bool fused = interface || (!half && (dim == 0 || dim == v->rank - 1));
  if (interface && dim != 0 && dim != v->rank - 1)
    return meta_error(m, "argument '%s': the fused weight norm takes the first or the last dim "
                      "(0 or %d), got %lld", meta_arg_name(m, 2), v->rank - 1, (long long)dim);
  if (!alloy_dtype_is_float(v->dtype))
    return meta_error(m, "\"weight_norm_kernel\" not implemented for '%s'",
                      alloy_dtype_name(v->dtype));
  if (fused && v->dtype != g->dtype)
    return meta_error(m, "expected scalar type %s but found %s", alloy_dtype_name(v->dtype),
                      alloy_dtype_name(g->dtype));
  alloy_promo_operand ops[2] = {meta_promo_operand(m, 0), meta_promo_operand(m, 1)};
  alloy_dim shape[ALLOY_MAX_RANK];
  int r;
  if (fused) {
    if ((e = meta_out_like(m, 0, v, v->dtype))) return e;
  } else {
    if ((e = meta_broadcast(m, v->shape, v->rank, g->shape, g->rank, shape, &r))) return e;
    if ((e = meta_out_tensor(m, 0, alloy_result_type(ops, 2), shape, r))) return e;
  }
  return interface ? meta_out_like(m, 1, g, alloy_opmath_dtype(g->dtype)) : NULL;
}

/* prelu(self, weight): _prelu_kernel of the weight laid along dim 1; one
 * dtype, a weight of one element or of the channel count. */
static alloy_error *meta_prelu_checked(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0), *w = meta_tensor(m, 1);
  if (x->dtype != w->dtype)
    return meta_error(m, "prelu: Type promoting not supported. Got %s and %s",
                      alloy_dtype_name(x->dtype), alloy_dtype_name(w->dtype));
  if (w->rank > 1)
    return meta_error(m, "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = %d",
                      w->rank);
  alloy_dim nw = meta_numel(m, w->shape, w->rank);
  if (!(alloy_dim_is_const(nw) && nw.value == 1)) {
    if (x->rank == 0) return meta_error(m, "Not allow zero-dim input tensor.");
    alloy_dim ch = x->rank > 1 ? x->shape[1] : alloy_dim_const(1);
    if (alloy_dim_eq(m->st, ch, nw) == ALLOY_FALSE)
      return meta_error(m, "Mismatch of parameter numbers and input channel size.");
  }
  return meta_out_like(m, 0, x, x->dtype);
}

/* bilinear(input1, input2, weight [O, I1, I2], bias): input1's leading
 * dims and O. */
static alloy_error *meta_bilinear(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0), *b = meta_tensor(m, 1), *w = meta_tensor(m, 2);
  if (a->rank < 1 || a->rank != b->rank || w->rank != 3)
    return meta_error(m, "bilinear(): expected input1 and input2 of one rank and a 3-D weight, "
                      "got %d, %d and %d dims", a->rank, b->rank, w->rank);
  if (a->dtype != b->dtype || a->dtype != w->dtype)
    return meta_error(m, "bilinear(): expected input1, input2 and weight of one dtype");
  for (int i = 0; i < a->rank - 1; i++)
    if (alloy_dim_eq(m->st, a->shape[i], b->shape[i]) == ALLOY_FALSE)
      return meta_error(m, "bilinear(): input batch dimensions do not match");
  if (alloy_dim_eq(m->st, a->shape[a->rank - 1], w->shape[1]) == ALLOY_FALSE ||
      alloy_dim_eq(m->st, b->shape[b->rank - 1], w->shape[2]) == ALLOY_FALSE)
    return meta_error(m, "bilinear(): input sizes do not match the weight's");
  alloy_dim out[ALLOY_MAX_RANK];
  memcpy(out, a->shape, sizeof *out * (size_t)a->rank);
  out[a->rank - 1] = w->shape[0];
  return meta_out_tensor(m, 0, a->dtype, out, a->rank);
}

/* _addmm_activation(self, mat1, mat2, beta, alpha, use_gelu): addmm's
 * [n, m] in self's dtype. */
static alloy_error *meta_addmm_activation(alloy_meta *m) {
  const alloy_value *s = meta_tensor(m, 0), *a = meta_tensor(m, 1), *b = meta_tensor(m, 2);
  if (a->rank != 2 || b->rank != 2)
    return meta_error(m, "mat1 and mat2 must be matrices, got %dD and %dD", a->rank, b->rank);
  if (alloy_dim_eq(m->st, a->shape[1], b->shape[0]) == ALLOY_FALSE)
    return meta_error(m, "mat1 and mat2 shapes cannot be multiplied");
  if (a->dtype != b->dtype || a->dtype != s->dtype)
    return meta_error(m, "expected self, mat1 and mat2 of one dtype, got %s, %s and %s",
                      alloy_dtype_name(s->dtype), alloy_dtype_name(a->dtype),
                      alloy_dtype_name(b->dtype));
  alloy_dim out[2] = {a->shape[0], b->shape[1]}, bs[ALLOY_MAX_RANK];
  int rb;
  alloy_error *e = meta_broadcast(m, s->shape, s->rank, out, 2, bs, &rb);
  if (e) return e;
  if (rb != 2) return meta_error(m, "self must broadcast to [n, m]");
  return meta_out_tensor(m, 0, s->dtype, out, 2);
}

/* embedding_renorm(self, indices, max_norm, norm_type): self's type. */
static alloy_error *meta_embedding_renorm(alloy_meta *m) {
  const alloy_value *w = meta_tensor(m, 0), *ix = meta_tensor(m, 1);
  if (w->rank != 2) return meta_error(m, "argument 'self': expected a 2-D weight, got %dD", w->rank);
  if (ix->dtype != ALLOY_I64 && ix->dtype != ALLOY_I32)
    return meta_error(m, "argument 'indices': expected Long or Int indices, got %s",
                      alloy_dtype_name(ix->dtype));
  return meta_out_like(m, 0, w, w->dtype);
}

/* _scaled_dot_product_attention_math (param 0) -> (output [*, L, Ev],
 * weights [*, L, S]) and _scaled_dot_product_flash_attention_for_cpu
 * (param 1; [B, H, *] operands) -> (output, logsumexp [B, H, L] in
 * opmath), the batch dims broadcast. */
static alloy_error *meta_sdpa_variant(alloy_meta *m) {
  const alloy_value *q = meta_tensor(m, 0), *k = meta_tensor(m, 1), *v = meta_tensor(m, 2);
  bool flash = m->param == 1;
  int lo = flash ? 4 : 2;
  if (q->rank < lo || k->rank < lo || v->rank < lo || (flash && (q->rank != 4 || k->rank != 4 ||
                                                                   v->rank != 4)))
    return meta_error(m, "query, key and value must be %s tensors, got %dD, %dD and %dD",
                      flash ? "4-D" : "at least 2-D", q->rank, k->rank, v->rank);
  if (!alloy_dtype_is_float(q->dtype) || q->dtype != k->dtype || q->dtype != v->dtype)
    return meta_error(m, "query, key and value must be floating-point tensors of one dtype");
  if (alloy_dim_eq(m->st, q->shape[q->rank - 1], k->shape[k->rank - 1]) == ALLOY_FALSE ||
      alloy_dim_eq(m->st, k->shape[k->rank - 2], v->shape[v->rank - 2]) == ALLOY_FALSE)
    return meta_error(m, "query and key must have the same embedding size, key and value the "
                      "same sequence length");
  alloy_dim out[ALLOY_MAX_RANK];
  int rank;
  alloy_error *e = meta_broadcast(m, q->shape, q->rank - 2, k->shape, k->rank - 2, out, &rank);
  if (!flash && !e && !meta_bool(m, 8))
    e = meta_broadcast(m, out, rank, v->shape, v->rank - 2, out, &rank);
  if (e) return e;
  if (!flash && meta_bool(m, 8)) memcpy(out, q->shape, sizeof *out * (size_t)(q->rank - 2));
  out[rank] = q->shape[q->rank - 2];
  out[rank + 1] = v->shape[v->rank - 1];
  if ((e = meta_out_tensor(m, 0, q->dtype, out, rank + 2))) return e;
  if (flash) return meta_out_tensor(m, 1, alloy_opmath_dtype(q->dtype), out, rank + 1);
  out[rank + 1] = k->shape[k->rank - 2];
  return meta_out_tensor(m, 1, q->dtype, out, rank + 2);
}

/* batch_norm_update_stats(input, running_mean, running_var, momentum) ->
 * (mean, biased variance) per channel, in the running statistics' dtype
 * (the input's when there are none). */
static alloy_error *meta_bn_update_stats(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0), *rm = meta_tensor(m, 1);
  if (x->rank < 2) return meta_error(m, "argument 'input': expected at least 2 dims, got %dD", x->rank);
  if (!alloy_dtype_is_float(x->dtype))
    return meta_error(m, "argument 'input': expected a floating point tensor, got %s",
                      alloy_dtype_name(x->dtype));
  alloy_dtype t = rm ? rm->dtype : x->dtype;
  alloy_error *e = meta_out_tensor(m, 0, t, x->shape + 1, 1);
  return e ? e : meta_out_tensor(m, 1, t, x->shape + 1, 1);
}

/* _masked_softmax(self, mask, dim, mask_type): self's type. The mask is
 * bool, of self's shape (mask_type 2, and any mask but a 2-D one with a
 * 4-D input), [B, L] padding keys (1) or [L, L] (0) for [B, H, L, L]. */
static alloy_error *meta_masked_softmax(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0), *mask = meta_tensor(m, 1);
  if (mask->dtype != ALLOY_BOOL) return meta_error(m, "Mask should be a boolean tensor");
  int64_t type = 2;
  alloy_error *e;
  if (!meta_is_none(m, 3) && (e = meta_int(m, 3, &type))) return e;
  if (mask->rank != 2 || x->rank != 4) type = 2;
  bool ok;
  if (type == 2) {
    ok = mask->rank == x->rank;
    for (int i = 0; ok && i < x->rank; i++)
      ok = alloy_dim_eq(m->st, mask->shape[i], x->shape[i]) != ALLOY_FALSE;
    if (!ok) return meta_error(m, "For mask_type == 2 mask shape should match input shape");
  } else if (type == 1) {
    ok = alloy_dim_eq(m->st, x->shape[0], mask->shape[0]) != ALLOY_FALSE &&
         alloy_dim_eq(m->st, x->shape[2], mask->shape[1]) != ALLOY_FALSE;
    if (!ok) return meta_error(m, "For mask_type == 1 mask shape should be (B, L)");
  } else if (type == 0) {
    ok = alloy_dim_eq(m->st, x->shape[2], mask->shape[0]) != ALLOY_FALSE &&
         alloy_dim_eq(m->st, x->shape[2], mask->shape[1]) != ALLOY_FALSE;
    if (!ok) return meta_error(m, "For mask_type == 0 mask shape should be (L, L)");
  } else {
    return meta_error(m, "Unsupported mask type");
  }
  if (!alloy_dtype_is_float(x->dtype))
    return meta_error(m, "argument 'self': expected a floating point tensor, got %s",
                      alloy_dtype_name(x->dtype));
  return meta_out_like(m, 0, x, x->dtype);
}

/* _transform_bias_rescale_qkv(qkv [B, T, 3 D], qkv_bias, num_heads) ->
 * (q, k, v), each [B, heads, T, D / heads]. */
static alloy_error *meta_transform_qkv(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0), *b = meta_tensor(m, 1);
  int64_t heads;
  alloy_error *e = meta_int(m, 2, &heads);
  if (e) return e;
  if (x->rank != 3 || b->rank != 1 || !alloy_dim_is_const(x->shape[2]))
    return meta_error(m, "expected qkv [B, T, 3 D] of a known D and a 1-D qkv_bias");
  int64_t d3 = x->shape[2].value;
  if (heads < 1 || d3 % 3 || (d3 / 3) % heads)
    return meta_error(m, "the embedding size %lld must split into 3 x %lld heads",
                      (long long)d3, (long long)heads);
  alloy_dim out[4] = {x->shape[0], alloy_dim_const(heads), x->shape[1],
                      alloy_dim_const(d3 / 3 / heads)};
  for (int k = 0; k < 3; k++)
    if ((e = meta_out_tensor(m, k, x->dtype, out, 4))) return e;
  return NULL;
}

/* _native_multi_head_attention(...) -> (output [B, T, D], weights [B, T,
 * T], or [B, heads, T, T] without averaging, or empty without weights). */
static alloy_error *meta_native_mha(alloy_meta *m) {
  const alloy_value *q = meta_tensor(m, 0), *k = meta_tensor(m, 1), *v = meta_tensor(m, 2);
  int64_t D, heads;
  alloy_error *e;
  if ((e = meta_int(m, 3, &D)) || (e = meta_int(m, 4, &heads))) return e;
  if (q->rank != 3 || k->rank != 3 || v->rank != 3)
    return meta_error(m, "expected 3-D `query`, `key` and `value`");
  if (!alloy_dim_is_const(q->shape[2]) || q->shape[2].value != D)
    return meta_error(m, "passed-in embed_dim %lld didn't match last dim of query", (long long)D);
  if (heads < 1 || D % heads) return meta_error(m, "`embed_dim` must divide evenly by `num_heads`");
  if (!alloy_dtype_is_float(q->dtype))
    return meta_error(m, "argument 'query': expected a floating point tensor, got %s",
                      alloy_dtype_name(q->dtype));
  if ((e = meta_out_like(m, 0, q, q->dtype))) return e;
  alloy_dim w[4] = {q->shape[0], alloy_dim_const(heads), q->shape[1], q->shape[1]}, none = alloy_dim_const(0);
  if (!meta_bool(m, 10)) return meta_out_tensor(m, 1, q->dtype, &none, 1);
  if (meta_bool(m, 11)) {
    w[1] = q->shape[1];
    return meta_out_tensor(m, 1, q->dtype, w, 3);
  }
  return meta_out_tensor(m, 1, q->dtype, w, 4);
}

const alloy_meta_entry alloy_meta_nn_composite[] = {
    {"aten.group_norm.default", meta_like_input, 0},
    {"aten.batch_norm.default", meta_like_input, 0},
    {"aten.instance_norm.default", meta_like_input, 0},
    {"aten.rms_norm.default", meta_like_input, 0},
    {"aten._fused_rms_norm.default", meta_fused_rms_norm, 0},
    {"aten.norm_except_dim.default", meta_norm_except_dim, 0},
    {"aten._weight_norm.default", meta_weight_norm, 0},
    {"aten._weight_norm_interface.default", meta_weight_norm, 1},
    {"aten.pad.default", meta_pad, 0},
    {"aten._pad_circular.default", meta_pad, 0},
    {"aten._pad_enum.default", meta_pad, 0},
    {"aten.native_channel_shuffle.default", meta_like_input, 0},
    {"aten.prelu.default", meta_prelu_checked, 0},
    {"aten.bilinear.default", meta_bilinear, 0},
    {"aten._addmm_activation.default", meta_addmm_activation, 0},
    {"aten.embedding_renorm.default", meta_embedding_renorm, 0},
    {"aten.batch_norm_update_stats.default", meta_bn_update_stats, 0},
    {"aten._masked_softmax.default", meta_masked_softmax, 0},
    {"aten._scaled_dot_product_attention_math.default", meta_sdpa_variant, 0},
    {"aten._transform_bias_rescale_qkv.default", meta_transform_qkv, 0},
    {"aten._native_multi_head_attention.default", meta_native_mha, 0},
    {"aten._scaled_dot_product_flash_attention_for_cpu.default", meta_sdpa_variant, 1},
    {"aten.cross_entropy_loss.default", meta_class_loss, 0},
    {"aten.nll_loss.default", meta_class_loss, 0},
    {"aten.embedding_bag.default", meta_embedding_bag, 0},
    {"aten.embedding_bag.padding_idx", meta_embedding_bag, 0},
    {"aten.nll_loss_nd.default", meta_class_loss, 0},
    {"aten.nll_loss2d.default", meta_class_loss, 4},
    {"aten.l1_loss.default", meta_elementwise_loss, 2 * 16 + 2},
    {"aten.kl_div.default", meta_elementwise_loss, 2 * 16 + 2 + 256},
    {"aten.poisson_nll_loss.default", meta_elementwise_loss, 2 * 16 + 5 + 256},
    {"aten.margin_ranking_loss.default", meta_elementwise_loss, 3 * 16 + 4 + 256},
    {"aten.hinge_embedding_loss.default", meta_elementwise_loss, 2 * 16 + 3 + 256},
    {"aten.cosine_embedding_loss.default", meta_cosine_embedding_loss, 0},
    {"aten.triplet_margin_loss.default", meta_triplet_margin_loss, 0},
    {"aten.ctc_loss.IntList", meta_ctc_loss, 0},
    {"aten.pairwise_distance.default", meta_pairwise_distance, 0},
    {"aten.cosine_similarity.default", meta_cosine_similarity, 0},
    {"aten.pdist.default", meta_pdist_checked, 0},
    {"aten._euclidean_dist.default", meta_euclidean_dist, 0},
    {NULL, NULL, 0},
};
