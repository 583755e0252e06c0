/*
 * decompositions/rules_losses.c: the loss functions, from ATen to Core
 * ATen: the pointwise losses (mse, smooth l1, huber, binary cross entropy
 * with and without logits, soft margin), the class losses (nll, cross
 * entropy, multi margin, multilabel margin) and the others of
 * torch.nn.functional, with the distances they rest on.
 *
 * The math follows PyTorch's decompositions (torch/_decomp) and, for the
 * C++ composites (cross_entropy_loss, nll_loss), ATen's native code.
 * Losses that PyTorch decorates with pw_cast_for_opmath compute float16
 * and bfloat16 in float32 and round once at the end; where the native CPU
 * kernel rounds differently the rule follows the kernel, whose results are
 * the reference. The shared helpers are in rules_nn_util.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decompositions/rules.h"
#include "decompositions/rules_nn_util.h"

enum { REDUCE_NONE = 0, REDUCE_MEAN = 1, REDUCE_SUM = 2 };

static alloy_value *sum_all(decomp *d, alloy_value *a) {
  return D(d, "aten.sum.dim_IntList", V(a), NONE);
}
static alloy_value *sum_dim(decomp *d, alloy_value *a, int dim, bool keep) {
  return D(d, "aten.sum.dim_IntList", V(a), LIST(I(dim)), B(keep));
}

/* none keeps the loss of every element, mean and sum reduce them all. */
static alloy_value *reduce_loss(decomp *d, alloy_value *loss, int64_t reduction) {
  if (reduction == REDUCE_MEAN) return D(d, "aten.mean.dim", V(loss), NONE);
  if (reduction == REDUCE_SUM) return sum_all(d, loss);
  return loss;
}

/* Output 0's dtype: the result a loss computed in opmath is rounded to. */
static alloy_dtype out_dtype(decomp *d) { return d_dtype(alloy_node_output(d_node(d), 0)); }

/* --- pointwise losses ---------------------------------------------------------*/

/* mse_loss = reduce((x - y)^2), the difference rounded to the dtype as the
 * kernel's is */
static void mse_loss(decomp *d) {
  alloy_dtype t = out_dtype(d), c = d_opmath(t);
  alloy_value *z = nn_sub(d, d_to(d, d_tensor(d, 0), c), d_to(d, d_tensor(d, 1), c));
  z = d_to(d, d_to(d, z, t), c);
  z = D(d, "aten.pow.Tensor_Scalar", V(z), I(2));
  d_out(d, 0, d_to(d, reduce_loss(d, z, d_int(d, 2)), t));
}

/* smooth_l1_loss: z = |x - y|; 0.5 z^2 / beta below beta, z - beta / 2 above */
static void smooth_l1_loss(decomp *d) {
  alloy_dtype t = out_dtype(d), c = d_opmath(t);
  double beta = d_float(d, 3);
  alloy_value *z =
      D(d, "aten.abs.default", V(nn_sub(d, d_to(d, d_tensor(d, 0), c), d_to(d, d_tensor(d, 1), c))));
  alloy_value *quad =
      D(d, "aten.div.Tensor", V(nn_mulf(d, D(d, "aten.pow.Tensor_Scalar", V(z), I(2)), 0.5)), F(beta));
  alloy_value *lin = D(d, "aten.sub.Tensor", V(z), F(0.5 * beta));
  alloy_value *loss =
      D(d, "aten.where.self", V(D(d, "aten.lt.Scalar", V(z), F(beta))), V(quad), V(lin));
  d_out(d, 0, d_to(d, reduce_loss(d, loss, d_int(d, 2)), t));
}

/* huber_loss: z = |x - y|; z^2 / 2 below delta, delta (z - delta / 2) above */
static void huber_loss(decomp *d) {
  double delta = d_float(d, 3);
  alloy_value *z = D(d, "aten.abs.default", V(nn_sub(d, d_tensor(d, 0), d_tensor(d, 1))));
  alloy_value *quad = nn_mul(d, nn_mulf(d, z, 0.5), z);
  alloy_value *lin = nn_mulf(d, D(d, "aten.sub.Tensor", V(z), F(0.5 * delta)), delta);
  alloy_value *loss =
      D(d, "aten.where.self", V(D(d, "aten.lt.Scalar", V(z), F(delta))), V(quad), V(lin));
  d_out(d, 0, reduce_loss(d, loss, d_int(d, 2)));
}

/* binary_cross_entropy = reduce(w * ((y - 1) max(log(1 - x), -100)
 *                                    - y max(log(x), -100))) */
static void binary_cross_entropy(decomp *d) {
  alloy_dtype t = out_dtype(d), c = d_opmath(t);
  alloy_value *x = d_to(d, d_tensor(d, 0), c), *y = d_to(d, d_tensor(d, 1), c);
  alloy_value *w = d_tensor(d, 2);
  alloy_value *log1mx =
      D(d, "aten.clamp.default", V(D(d, "aten.log1p.default", V(nn_neg(d, x)))), F(-100));
  alloy_value *logx = D(d, "aten.clamp.default", V(D(d, "aten.log.default", V(x))), F(-100));
  alloy_value *loss = nn_sub(d, nn_mul(d, D(d, "aten.sub.Tensor", V(y), I(1)), log1mx), nn_mul(d, y, logx));
  if (w) loss = nn_mul(d, loss, d_to(d, w, c));
  d_out(d, 0, d_to(d, reduce_loss(d, loss, d_int(d, 3)), t));
}

/* log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), stable for large |x| */
static alloy_value *log_sigmoid(decomp *d, alloy_value *x) {
  alloy_value *m = D(d, "aten.clamp.default", V(x), NONE, F(0));
  alloy_value *e = D(d, "aten.exp.default", V(nn_neg(d, D(d, "aten.abs.default", V(x)))));
  return nn_sub(d, m, D(d, "aten.log1p.default", V(e)));
}

/* binary_cross_entropy_with_logits = reduce(w * ((1 - y) x - lw log(sigmoid(x))))
 * with lw = (pos_weight - 1) y + 1, or 1 */
static void binary_cross_entropy_with_logits(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *y = d_tensor(d, 1), *w = d_tensor(d, 2), *pw = d_tensor(d, 3);
  alloy_dtype t = out_dtype(d);
  alloy_value *ls = d_to(d, log_sigmoid(d, d_to(d, x, d_opmath(t))), t);
  if (pw)
    ls = nn_mul(d, ls,
             D(d, "aten.add.Tensor", V(nn_mul(d, D(d, "aten.sub.Tensor", V(pw), I(1)), y)), I(1)));
  alloy_value *loss = nn_sub(d, nn_mul(d, D(d, "aten.rsub.Scalar", V(y), I(1)), x), ls);
  if (w) loss = nn_mul(d, loss, w);
  d_out(d, 0, reduce_loss(d, loss, d_int(d, 4)));
}

/* soft_margin_loss = reduce(log(1 + exp(-x y))), each step in the
 * tensors' dtype as the native kernel (an exp that overflows float16 gives
 * an infinite loss there too). */
static void soft_margin_loss(decomp *d) {
  alloy_value *p = nn_mul(d, d_tensor(d, 0), d_tensor(d, 1));
  alloy_value *loss = D(d, "aten.log1p.default", V(D(d, "aten.exp.default", V(nn_neg(d, p)))));
  d_out(d, 0, reduce_loss(d, loss, d_int(d, 2)));
}

/* --- class losses -----------------------------------------------------------------*/

/* [C] shaped to broadcast along dim cd of a rank-r tensor. */
static alloy_value *along(decomp *d, alloy_value *w, int cd, int r) {
  if (r <= 1) return w;
  alloy_dim shape[ALLOY_MAX_RANK];
  for (int i = 0; i < r; i++) shape[i] = alloy_dim_const(1);
  shape[cd] = d_shape(w)[0];
  return nn_view(d, w, shape, r);
}

/* The sum of the elements of x, in x's dtype, as the CPU nll kernels make
 * it: each step rounded, with a cascade of partial sums 16 elements wide
 * (their level is max(4, ceil(log2(n)) / 8) bits, 4 below 2^40 elements).
 * Element 0 goes up to the last partial alone; elements 1.. are summed in
 * rows of 16, in order, the row sums in rows of 16 again, and so on; a
 * partial row padded with zeros (+0 is exact) gives what the kernel's
 * final sum of its partials gives, addition being commutative. Exact but
 * for one thing: the kernel skips the carry where an ignored target falls
 * on a multiple of 16, so its next row starts from the carried partial.
 * Symbolic sizes sum plainly. */
static alloy_value *cascade_sum(decomp *d, alloy_value *x) {
  if (!x) return NULL; /* an earlier step failed */
  alloy_dim n = nn_prod(d, d_shape(x), d_rank(x));
  if (!alloy_dim_is_const(n) || n.value < 2 || n.value > ((int64_t)1 << 28))
    return nn_sum_all(d, x);
  alloy_value *flat = nn_reshape(d, x, &n, 1);
  alloy_value *first = D(d, "aten.select.int", V(flat), I(0), I(0));
  alloy_value *row = D(d, "aten.slice.Tensor", V(flat), I(0), I(1), I(n.value));
  for (int64_t len = n.value - 1; len > 1; len = (len + 15) / 16) {
    int64_t rows = (len + 15) / 16;
    if (len % 16) row = D(d, "aten.constant_pad_nd.default", V(row), LIST(I(0), I(rows * 16 - len)), I(0));
    alloy_dim shape[2] = {alloy_dim_const(rows), alloy_dim_const(16)};
    alloy_value *m = nn_view(d, row, shape, 2);
    row = D(d, "aten.select.int", V(m), I(1), I(0));
    for (int k = 1; k < 16; k++) row = nn_add(d, row, D(d, "aten.select.int", V(m), I(1), I(k)));
  }
  return nn_add(d, nn_view(d, row, NULL, 0), first);
}

/* The negative log likelihood of the target classes along dim 1 (dim 0 of
 * one unbatched sample), classes equal to ignore_index left out; with
 * the total weight of the counted targets. Works for any rank, as
 * nll_loss_forward, nll_loss2d_forward and nll_loss's N-d form. The
 * reductions sum as the CPU kernel does (cascade_sum). */
static void nll(decomp *d, alloy_value *x, alloy_value *target, alloy_value *w, int64_t reduction,
                alloy_dim ignore, alloy_value **out, alloy_value **total) {
  if (!x) return; /* an earlier step failed */
  int r = d_rank(x), cd = r == 1 ? 0 : 1;
  alloy_dtype t = d_dtype(x);
  if (w) {
    w = along(d, w, cd, r);
    x = nn_mul(d, x, w);
  }
  alloy_value *keep = D(d, "aten.ne.Scalar", V(target), SYM(ignore));
  alloy_value *safe = D(d, "aten.where.self", V(keep), V(target), I(0));
  alloy_value *safe1 = nn_unsqueeze(d, safe, cd);
  alloy_value *res = nn_neg(d, nn_squeeze(d, D(d, "aten.gather.default", V(x), I(cd), V(safe1)), cd));
  res = D(d, "aten.where.self", V(keep), V(res), I(0));
  if (reduction == REDUCE_NONE && r > 1) {
    *out = res;
    *total = D(d, "aten.full.default", EMPTY_LIST, F(0), DT(t));
    return;
  }
  if (w) {
    alloy_value *we = D(d, "aten.expand.default", V(w), d_dim_list(d, d_shape(x), r));
    alloy_value *ws = nn_squeeze(d, D(d, "aten.gather.default", V(we), I(cd), V(safe1)), cd);
    *total = cascade_sum(d, D(d, "aten.where.self", V(keep), V(ws), I(0)));
  } else {
    *total = d_to(d, sum_all(d, keep), t);
  }
  res = cascade_sum(d, res);
  if (reduction == REDUCE_MEAN) res = D(d, "aten.div.Tensor", V(res), V(*total));
  *out = res;
}

/* nll_loss_forward / nll_loss2d_forward(self, target, weight, reduction,
 * ignore_index) -> (output, total_weight) */
static void nll_loss_forward(decomp *d) {
  alloy_value *out = NULL, *total = NULL;
  nll(d, d_tensor(d, 0), d_tensor(d, 1), d_tensor(d, 2), d_int(d, 3), d_dim(d, 4), &out, &total);
  d_out(d, 0, out);
  d_out(d, 1, total);
}

static void nll_loss(decomp *d) {
  alloy_value *out = NULL, *total = NULL;
  nll(d, d_tensor(d, 0), d_tensor(d, 1), d_tensor(d, 2), d_int(d, 3), d_dim(d, 4), &out, &total);
  d_out(d, 0, out);
}

/* cross_entropy_loss(self, target, weight, reduction, ignore_index,
 * label_smoothing): the NLL of log_softmax over the class dim, for class
 * indices; -sum(target * log_softmax) for class probabilities (a target
 * of self's shape); label smoothing mixes in the loss against the uniform
 * distribution. */
static void cross_entropy_loss(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *target = d_tensor(d, 1), *w = d_tensor(d, 2);
  int64_t reduction = d_int(d, 3);
  alloy_dim ignore = d_dim(d, 4);
  double ls = d_float(d, 5);
  int r = d_rank(x), cd = r == 1 ? 0 : 1;
  if (d_failed(d)) return;
  alloy_dim nc = d_shape(x)[cd];
  if (!alloy_dim_is_const(nc) && ls > 0)
    return d_decline(d, "label smoothing over a symbolic class count");
  double ncf = alloy_dim_is_const(nc) ? (double)nc.value : 0;
  alloy_value *lsm = D(d, "aten._log_softmax.default", V(x), I(cd), B(false));
  alloy_value *wb = w ? along(d, w, cd, r) : NULL;
  if (d_rank(target) == r && alloy_dtype_is_float(d_dtype(target))) {
    /* class probabilities */
    if (ls > 0) target = D(d, "aten.add.Tensor", V(nn_mulf(d, target, 1 - ls)), F(ls / ncf));
    alloy_value *p = nn_mul(d, lsm, target);
    if (wb) p = nn_mul(d, p, wb);
    alloy_value *res;
    if (reduction == REDUCE_NONE) {
      res = nn_neg(d, sum_dim(d, p, cd, false));
    } else {
      res = nn_neg(d, sum_all(d, p));
      if (reduction == REDUCE_MEAN) {
        alloy_dim rows = alloy_dim_const(1);
        for (int i = 0; i < r; i++)
          if (i != cd) rows = alloy_dim_mul(d_symtab(d), rows, d_shape(x)[i]);
        res = D(d, "aten.div.Tensor", V(res), SYM(rows));
      }
    }
    d_out(d, 0, res);
    return;
  }
  alloy_value *loss = NULL, *total = NULL;
  nll(d, lsm, target, w, reduction, ignore, &loss, &total);
  if (ls <= 0) {
    d_out(d, 0, loss);
    return;
  }
  alloy_value *ignored = D(d, "aten.eq.Scalar", V(target), SYM(ignore));
  alloy_value *smooth = nn_neg(d, sum_dim(d, wb ? nn_mul(d, lsm, wb) : lsm, cd, false));
  smooth = D(d, "aten.where.self", V(ignored), I(0), V(smooth));
  if (reduction == REDUCE_SUM) {
    smooth = sum_all(d, smooth);
  } else if (reduction == REDUCE_MEAN) {
    alloy_value *den;
    if (w) {
      alloy_value *safe = D(d, "aten.where.self", V(ignored), I(0), V(target));
      alloy_value *tw = D(d, "aten.index.Tensor", V(w), d_value_list(d, &safe, 1));
      den = sum_all(d, D(d, "aten.where.self", V(ignored), I(0), V(tw)));
    } else {
      den = sum_all(d, D(d, "aten.logical_not.default", V(ignored)));
    }
    smooth = D(d, "aten.div.Tensor", V(sum_all(d, smooth)), V(den));
  }
  d_out(d, 0, nn_add(d, nn_mulf(d, loss, 1 - ls), nn_mulf(d, smooth, ls / ncf)));
}

/* multi_margin_loss: per sample, sum over the wrong classes i of
 * max(0, margin - x[y] + x[i])^p * w[y], divided by the class count. */
static void multi_margin_loss(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *y = d_tensor(d, 1), *w = d_tensor(d, 4);
  double p = d_float(d, 2);
  int64_t reduction = d_int(d, 5);
  if (p != 1 && p != 2) return d_decline(d, "p must be 1 or 2");
  while (x && d_rank(x) < 2) x = nn_unsqueeze(d, x, 0);
  if (y && d_rank(y) < 1) y = nn_unsqueeze(d, y, 0);
  if (!x || !y) return;
  alloy_dim nclass = d_shape(x)[1];
  alloy_value *y1 = nn_unsqueeze(d, y, 1);
  alloy_value *u = D(d, "aten.gather.default", V(x), I(1), V(y1));
  alloy_value *z = nn_add(d, D(d, "aten.rsub.Tensor", V(u), *d_arg(d, 3)), x);
  /* The kernel adds a term only where z > 0, which skips NaN (clamp would
   * keep it) and never weighs a skipped one. */
  alloy_value *idx = D(d, "aten.arange.start_step", I(0), SYM(nclass), I(1), DT(ALLOY_I64));
  alloy_value *keep = D(d, "aten.logical_and.default", V(D(d, "aten.gt.Scalar", V(z), I(0))),
                        V(D(d, "aten.ne.Tensor", V(idx), V(y1))));
  if (p == 2) z = nn_mul(d, z, z);
  if (w) z = nn_mul(d, z, nn_unsqueeze(d, D(d, "aten.index_select.default", V(w), I(0), V(y)), 1));
  z = D(d, "aten.where.self", V(keep), V(z), I(0));
  alloy_value *res;
  if (reduction == REDUCE_MEAN)
    res = D(d, "aten.mean.dim", V(z), NONE);
  else if (reduction == REDUCE_SUM)
    res = D(d, "aten.div.Tensor", V(sum_all(d, z)), SYM(nclass));
  else
    res = D(d, "aten.mean.dim", V(z), LIST(I(1)));
  const alloy_value *want = alloy_node_output(d_node(d), 0);
  if (res && d_rank(res) != d_rank(want)) res = nn_view(d, res, d_shape(want), d_rank(want));
  d_out(d, 0, res);
}

/* multilabel_margin_loss_forward: the targets of a sample are its labels
 * up to the first -1; the loss sums max(0, 1 - x[target] + x[other]) over
 * target and non-target pairs, divided by the class count. The label
 * positions past the end are masked out of the pairs too (torch/_decomp
 * leaves them in, each counting as a target class 0; the kernel stops at
 * the -1). */
static void multilabel_margin_loss_forward(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *y = d_tensor(d, 1);
  int64_t reduction = d_int(d, 2);
  const alloy_value *want_t = alloy_node_output(d_node(d), 1);
  while (x && d_rank(x) < 2) x = nn_unsqueeze(d, x, 0);
  while (y && d_rank(y) < 2) y = nn_unsqueeze(d, y, 0);
  if (!x || !y) return;
  alloy_dim nclass = d_shape(x)[1];
  alloy_value *idx = D(d, "aten.arange.start_step", I(0), SYM(nclass), I(1), DT(ALLOY_I64));
  alloy_value *is_end = D(d, "aten.eq.Scalar", V(y), I(-1));
  alloy_value *end =
      D(d, "aten.amin.default", V(D(d, "aten.where.self", V(is_end), V(idx), SYM(nclass))),
        LIST(I(-1)), B(true));
  alloy_value *in_target = D(d, "aten.lt.Tensor", V(idx), V(end));
  alloy_value *u = D(d, "aten.gather.default", V(x), I(-1),
                     V(D(d, "aten.where.self", V(in_target), V(y), I(0))));
  alloy_value *t1 = D(d, "aten.where.self", V(in_target), V(y), I(-1));
  alloy_value *is_target =
      D(d, "aten.any.dim", V(D(d, "aten.eq.Tensor", V(idx), V(nn_unsqueeze(d, t1, -1)))), I(1));
  alloy_value *ut = nn_unsqueeze(d, D(d, "aten.permute.default", V(u), LIST(I(1), I(0))), -1);
  alloy_value *z = nn_add(d, D(d, "aten.rsub.Scalar", V(ut), F(1.0)), x);
  /* The kernel adds z only where z > 0, which skips NaN (clamp keeps it). */
  z = D(d, "aten.where.self", V(D(d, "aten.gt.Scalar", V(z), I(0))), V(z), I(0));
  z = D(d, "aten.div.Tensor", V(z), SYM(nclass));
  z = D(d, "aten.where.self", V(is_target), I(0), V(z));
  alloy_value *pos = nn_unsqueeze(d, D(d, "aten.permute.default", V(in_target), LIST(I(1), I(0))), -1);
  z = D(d, "aten.where.self", V(pos), V(z), I(0));
  alloy_value *res;
  if (reduction == REDUCE_MEAN)
    res = D(d, "aten.mean.dim", V(D(d, "aten.sum.dim_IntList", V(z), LIST(I(0), I(-1)))), NONE);
  else if (reduction == REDUCE_SUM)
    res = sum_all(d, z);
  else
    res = D(d, "aten.sum.dim_IntList", V(z), LIST(I(0), I(-1)));
  const alloy_value *want = alloy_node_output(d_node(d), 0);
  if (res && d_rank(res) != d_rank(want)) res = nn_view(d, res, d_shape(want), d_rank(want));
  d_out(d, 0, res);
  d_out(d, 1, nn_view(d, d_to(d, is_target, d_dtype(x)), d_shape(want_t), d_rank(want_t)));
}

/* multilabel_margin_loss: the loss of multilabel_margin_loss_forward */
static void multilabel_margin_loss(decomp *d) {
  alloy_value *o[2] = {0};
  if (DN(d, "aten.multilabel_margin_loss_forward.default", o, 2, V(d_tensor(d, 0)),
         V(d_tensor(d, 1)), I(d_int(d, 2))) < 2)
    return;
  d_out(d, 0, o[0]);
}

/* --- the other losses of torch.nn.functional (ATen's Loss.cpp) ----------------------*/

/* x clamped below at 0 */
static alloy_value *relu_of(decomp *d, alloy_value *x) {
  return D(d, "aten.clamp_min.default", V(x), I(0));
}

/* l1_loss = reduce(|x - y|) */
static void l1_loss(decomp *d) {
  alloy_value *z = D(d, "aten.abs.default", V(nn_sub(d, d_tensor(d, 0), d_tensor(d, 1))));
  d_out(d, 0, reduce_loss(d, z, d_int(d, 2)));
}

/* margin_ranking_loss = reduce(max(0, -y (x1 - x2) + margin)) */
static void margin_ranking_loss(decomp *d) {
  alloy_value *z = nn_mul(d, nn_neg(d, d_tensor(d, 2)), nn_sub(d, d_tensor(d, 0), d_tensor(d, 1)));
  z = relu_of(d, D(d, "aten.add.Tensor", V(z), F(d_float(d, 3))));
  d_out(d, 0, reduce_loss(d, z, d_int(d, 4)));
}

/* hinge_embedding_loss = reduce(where(y != 1, max(0, margin - x), 0)
 *                               + where(y != -1, x, 0)) */
static void hinge_embedding_loss(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *y = d_tensor(d, 1);
  alloy_value *zeros = D(d, "aten.zeros_like.default", V(x));
  alloy_value *clamped = relu_of(d, D(d, "aten.rsub.Scalar", V(x), F(d_float(d, 2))));
  alloy_value *a = D(d, "aten.where.self", V(D(d, "aten.ne.Scalar", V(y), I(1))), V(clamped),
                     V(zeros));
  alloy_value *b = D(d, "aten.where.self", V(D(d, "aten.ne.Scalar", V(y), I(-1))), V(x), V(zeros));
  d_out(d, 0, reduce_loss(d, nn_add(d, a, b), d_int(d, 3)));
}

/* cosine_embedding_loss: cos = <x1, x2> / sqrt((|x1|^2 + 1e-12)(|x2|^2 +
 * 1e-12)) along the last dim; 1 - cos where y is 1, max(0, cos - margin)
 * where y is -1, else 0. */
static void cosine_embedding_loss(decomp *d) {
  alloy_value *a = d_tensor(d, 0), *b = d_tensor(d, 1), *y = d_tensor(d, 2);
  int dim = d_rank(y);
  alloy_value *prod = sum_dim(d, nn_mul(d, a, b), dim, false);
  alloy_value *m1 = D(d, "aten.add.Tensor", V(sum_dim(d, nn_mul(d, a, a), dim, false)), F(1e-12));
  alloy_value *m2 = D(d, "aten.add.Tensor", V(sum_dim(d, nn_mul(d, b, b), dim, false)), F(1e-12));
  alloy_value *cos = D(d, "aten.div.Tensor", V(prod),
                       V(D(d, "aten.sqrt.default", V(nn_mul(d, m1, m2)))));
  alloy_value *zeros = D(d, "aten.zeros_like.default", V(cos));
  alloy_value *pos = D(d, "aten.rsub.Scalar", V(cos), I(1));
  alloy_value *neg = relu_of(d, D(d, "aten.sub.Tensor", V(cos), F(d_float(d, 3))));
  pos = D(d, "aten.where.self", V(D(d, "aten.eq.Scalar", V(y), I(1))), V(pos), V(zeros));
  neg = D(d, "aten.where.self", V(D(d, "aten.eq.Scalar", V(y), I(-1))), V(neg), V(zeros));
  d_out(d, 0, reduce_loss(d, nn_add(d, pos, neg), d_int(d, 4)));
}

/* kl_div = reduce(exp(y) (y - x)) with log_target, else
 * reduce(xlogy(y, y) - y x) */
static void kl_div(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *y = d_tensor(d, 1), *z;
  if (d_bool(d, 3))
    z = nn_mul(d, D(d, "aten.exp.default", V(y)), nn_sub(d, y, x));
  else
    z = nn_sub(d, D(d, "aten.xlogy.Tensor", V(y), V(y)), nn_mul(d, y, x));
  d_out(d, 0, reduce_loss(d, z, d_int(d, 2)));
}

/* poisson_nll_loss = reduce(exp(x) - y x) with log_input, else
 * reduce(x - y log(x + eps)); full adds Stirling's term
 * y log(y) - y + log(2 pi y) / 2 where y > 1. */
static void poisson_nll_loss(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *y = d_tensor(d, 1), *z;
  if (d_bool(d, 2)) {
    z = nn_sub(d, D(d, "aten.exp.default", V(x)), nn_mul(d, y, x));
  } else {
    alloy_value *lg = D(d, "aten.log.default", V(D(d, "aten.add.Tensor", V(x), F(d_float(d, 4)))));
    z = nn_sub(d, x, nn_mul(d, y, lg));
  }
  if (d_bool(d, 3)) {
    alloy_value *st = nn_sub(d, nn_mul(d, y, D(d, "aten.log.default", V(y))), y);
    alloy_value *lg = D(d, "aten.log.default", V(nn_mulf(d, y, 2 * M_PI)));
    st = nn_add(d, st, nn_mulf(d, lg, 0.5));
    st = D(d, "aten.masked_fill.Scalar", V(st), V(D(d, "aten.le.Scalar", V(y), I(1))), I(0));
    z = nn_add(d, z, st);
  }
  d_out(d, 0, reduce_loss(d, z, d_int(d, 5)));
}

/* ctc_loss.IntList(log_probs [T, N, C], targets, input_lengths,
 * target_lengths, blank, reduction, zero_infinity): the negative log
 * likelihood of each target under the CTC alignment model, as PyTorch's
 * CPU _ctc_loss computes it. The targets (padded [N, S] or concatenated)
 * are extended with blanks, l' = [blank, t0, blank, t1, ..., blank] of
 * width W = 2 S + 1; alpha_0 is log_probs[0] at l'_0 and l'_1, -inf
 * beyond, and each step
 *   alpha_t(s) = log(e^(a1 - m) + e^(a2 - m) + e^(a3 - m)) + m + lp_t(l'_s)
 * of a1 = alpha_{t-1}(s), a2 = alpha_{t-1}(s - 1) and a3 = alpha_{t-1}(s -
 * 2) where l'_s differs from l'_{s-2} (else -inf), m their maximum (0 when
 * -inf), unrolled over time for the whole batch. Sequence n's likelihood
 * is the same sum of alpha at its last step at 2 S_n and 2 S_n - 1. Then
 * zero_infinity turns inf into 0, and mean divides each loss by its target
 * length (at least 1) before averaging. */
enum { CTC_MAX_BATCH = 256, CTC_MAX_STEPS = 4096 };

static alloy_value *logsumexp3(decomp *d, alloy_value *a1, alloy_value *a2, alloy_value *a3) {
  alloy_value *m = D(d, "aten.maximum.default", V(a1), V(a2));
  if (a3) m = D(d, "aten.maximum.default", V(m), V(a3));
  m = D(d, "aten.where.self", V(D(d, "aten.eq.Scalar", V(m), F(-INFINITY))), F(0), V(m));
  alloy_value *e = nn_add(d, D(d, "aten.exp.default", V(nn_sub(d, a1, m))),
                          D(d, "aten.exp.default", V(nn_sub(d, a2, m))));
  if (a3) e = nn_add(d, e, D(d, "aten.exp.default", V(nn_sub(d, a3, m))));
  return nn_add(d, D(d, "aten.log.default", V(e)), m);
}

/* x shifted right by k along dim 1, -inf coming in */
static alloy_value *shifted(decomp *d, alloy_value *x, int64_t k, alloy_dim n, int64_t w,
                            alloy_dtype t) {
  alloy_dim pad[2] = {n, alloy_dim_const(k)};
  alloy_value *fill = D(d, "aten.full.default", d_dim_list(d, pad, 2), F(-INFINITY), DT(t));
  if (w <= k) return D(d, "aten.slice.Tensor", V(fill), I(1), I(0), I(w));
  alloy_value *parts[2] = {fill, D(d, "aten.slice.Tensor", V(x), I(1), I(0), I(w - k))};
  return D(d, "aten.cat.default", d_value_list(d, parts, 2), I(1));
}

static void ctc_loss(decomp *d) {
  alloy_value *lp = d_tensor(d, 0), *tg = d_tensor(d, 1);
  int64_t il[CTC_MAX_BATCH], tl[CTC_MAX_BATCH];
  int n = d_ints(d, 2, il, CTC_MAX_BATCH), nt = d_ints(d, 3, tl, CTC_MAX_BATCH);
  int64_t blank = d_int(d, 4), reduction = d_int(d, 5);
  bool zero_inf = d_bool(d, 6);
  if (d_failed(d) || !lp || !tg) return;
  if (n != nt || n < 1 || n >= CTC_MAX_BATCH) return d_decline(d, "%d sequences", n);
  bool batched = d_rank(lp) == 3;
  if (!batched) lp = nn_unsqueeze(d, lp, 1);
  alloy_dim N = d_shape(lp)[1];
  alloy_dtype t = d_dtype(lp);
  int64_t S = 0, steps = 0, total = 0;
  for (int i = 0; i < n; i++) {
    S = tl[i] > S ? tl[i] : S;
    steps = il[i] > steps ? il[i] : steps;
    total += tl[i];
  }
  if (steps > CTC_MAX_STEPS) return d_decline(d, "over %d steps", CTC_MAX_STEPS);
  int64_t W = 2 * S + 1;
  alloy_dim nw[2] = {N, alloy_dim_const(W)}, ns[2] = {N, alloy_dim_const(S)};
  /* the extended labels l' [N, W] */
  alloy_value *ext = D(d, "aten.full.default", d_dim_list(d, nw, 2), I(blank), DT(ALLOY_I64));
  if (S > 0) {
    alloy_value *tgt;
    if (d_rank(tg) == 2 && batched) {
      tgt = D(d, "aten.slice.Tensor", V(tg), I(1), I(0), I(S));
    } else {
      /* concatenated: sequence i's labels start at the sum of the lengths before it */
      alloy_value **offs = calloc((size_t)n, sizeof *offs);
      if (!offs) {
        d_fail(d, "out of memory");
        return;
      }
      for (int64_t i = 0, at = 0; i < n; at += tl[i], i++)
        offs[i] = D(d, "aten.full.default", LIST(I(1), I(1)), I(at), DT(ALLOY_I64));
      alloy_value *base = D(d, "aten.cat.default", d_value_list(d, offs, n), I(0));
      free(offs);
      alloy_value *idx = nn_add(d, base, nn_unsqueeze(d, D(d, "aten.arange.start_step", I(0), I(S),
                                                         I(1), DT(ALLOY_I64)), 0));
      idx = D(d, "aten.clamp.default", V(idx), NONE, I(total - 1));
      alloy_dim flat = alloy_dim_const(n * S);
      tgt = D(d, "aten.index_select.default", V(tg), I(0), V(nn_reshape(d, idx, &flat, 1)));
      tgt = nn_reshape(d, tgt, ns, 2);
    }
    alloy_value *blanks = D(d, "aten.full.default", d_dim_list(d, ns, 2), I(blank), DT(ALLOY_I64));
    alloy_value *pair[2] = {blanks, d_to(d, tgt, ALLOY_I64)};
    alloy_dim n2s[2] = {N, alloy_dim_const(2 * S)};
    alloy_value *inter = nn_reshape(d, D(d, "aten.stack.default", d_value_list(d, pair, 2), I(2)), n2s, 2);
    alloy_value *tail[2] = {inter, D(d, "aten.slice.Tensor", V(ext), I(1), I(0), I(1))};
    ext = D(d, "aten.cat.default", d_value_list(d, tail, 2), I(1));
  }
  alloy_value *pos = D(d, "aten.arange.start_step", I(0), I(W), I(1), DT(ALLOY_I64));
  alloy_value *prev2 = D(d, "aten.cat.default",
                         LIST(V(D(d, "aten.full.default", d_dim_list(d, (alloy_dim[2]){N, alloy_dim_const(2)}, 2),
                                  I(-1), DT(ALLOY_I64))),
                              V(D(d, "aten.slice.Tensor", V(ext), I(1), I(0), I(W - 2 > 0 ? W - 2 : 0)))),
                         I(1));
  prev2 = D(d, "aten.slice.Tensor", V(prev2), I(1), I(0), I(W));
  alloy_value *skip = D(d, "aten.logical_and.default", V(D(d, "aten.ne.Tensor", V(ext), V(prev2))),
                        V(D(d, "aten.ge.Scalar", V(pos), I(2))));
  /* log_probs at the extended labels, [T, N, W] */
  alloy_dim tnw[3] = {d_shape(lp)[0], N, alloy_dim_const(W)};
  alloy_value *lpp = D(d, "aten.gather.default", V(lp), I(2),
                       V(D(d, "aten.expand.default", V(nn_unsqueeze(d, ext, 0)), d_dim_list(d, tnw, 3))));
  alloy_value **alpha = calloc((size_t)(steps > 0 ? steps : 1), sizeof *alpha);
  alloy_value **loss = calloc((size_t)n, sizeof *loss);
  if (!alpha || !loss) {
    free(alpha);
    free(loss);
    d_fail(d, "out of memory");
    return;
  }
  alloy_value *ninf = D(d, "aten.scalar_tensor.default", F(-INFINITY), DT(t));
  if (steps > 0) {
    alloy_value *a0 = D(d, "aten.select.int", V(lpp), I(0), I(0));
    alpha[0] = D(d, "aten.where.self", V(D(d, "aten.lt.Scalar", V(pos), I(2))), V(a0), V(ninf));
  }
  for (int64_t s = 1; s < steps && !d_failed(d); s++) {
    alloy_value *a = alpha[s - 1];
    alloy_value *a3 = D(d, "aten.where.self", V(skip), V(shifted(d, a, 2, N, W, t)), V(ninf));
    alpha[s] = nn_add(d, logsumexp3(d, a, shifted(d, a, 1, N, W, t), a3),
                      D(d, "aten.select.int", V(lpp), I(0), I(s)));
  }
  for (int i = 0; i < n && !d_failed(d); i++) {
    alloy_value *ll;
    if (il[i] == 0) {
      ll = D(d, "aten.scalar_tensor.default", F(tl[i] == 0 ? 0.0 : -INFINITY), DT(t));
    } else {
      alloy_value *an = D(d, "aten.select.int", V(alpha[il[i] - 1]), I(0), I(i));
      alloy_value *l1 = D(d, "aten.select.int", V(an), I(0), I(2 * tl[i]));
      ll = tl[i] > 0 ? logsumexp3(d, l1, D(d, "aten.select.int", V(an), I(0), I(2 * tl[i] - 1)), NULL)
                     : l1;
    }
    alloy_value *v = nn_neg(d, ll);
    if (zero_inf)
      v = D(d, "aten.where.self", V(D(d, "aten.eq.Scalar", V(v), F(INFINITY))), F(0), V(v));
    if (reduction == REDUCE_MEAN) v = D(d, "aten.div.Tensor", V(v), F(tl[i] > 1 ? (double)tl[i] : 1.0));
    loss[i] = nn_unsqueeze(d, v, 0);
  }
  alloy_value *res = D(d, "aten.cat.default", d_value_list(d, loss, n), I(0));
  free(alpha);
  free(loss);
  if (reduction == REDUCE_MEAN) res = D(d, "aten.mean.dim", V(res), NONE);
  else if (reduction == REDUCE_SUM) res = sum_all(d, res);
  else if (!batched) res = nn_squeeze(d, res, 0);
  d_out(d, 0, res);
}

/* pairwise_distance(x1, x2, p, eps, keepdim) = |x1 - x2 + eps|_p over the
 * last dim of the broadcast operands */
static alloy_value *pairwise_distance_of(decomp *d, alloy_value *a, alloy_value *b, double p,
                                         double eps, bool keepdim) {
  if (!a || !b) return NULL;
  int r = d_rank(a) > d_rank(b) ? d_rank(a) : d_rank(b);
  alloy_value *diff = D(d, "aten.add.Tensor", V(nn_sub(d, a, b)), F(eps));
  return D(d, "aten.linalg_vector_norm.default", V(diff), F(p), LIST(I(r - 1)), B(keepdim));
}

static void pairwise_distance(decomp *d) {
  d_out(d, 0, pairwise_distance_of(d, d_tensor(d, 0), d_tensor(d, 1), d_float(d, 2),
                                   d_float(d, 3), d_bool(d, 4)));
}

/* triplet_margin_loss = reduce(max(0, margin + d(a, p) - d(a, n))), d the
 * pairwise distance; with swap d(a, n) is min(d(a, n), d(p, n)) */
static void triplet_margin_loss(decomp *d) {
  alloy_value *a = d_tensor(d, 0), *pos = d_tensor(d, 1), *neg = d_tensor(d, 2);
  double p = d_float(d, 4), eps = d_float(d, 5);
  alloy_value *dp = pairwise_distance_of(d, a, pos, p, eps, false);
  alloy_value *dn = pairwise_distance_of(d, a, neg, p, eps, false);
  if (d_bool(d, 6))
    dn = D(d, "aten.minimum.default", V(dn), V(pairwise_distance_of(d, pos, neg, p, eps, false)));
  alloy_value *z = nn_sub(d, D(d, "aten.add.Tensor", V(dp), F(d_float(d, 3))), dn);
  d_out(d, 0, reduce_loss(d, relu_of(d, z), d_int(d, 7)));
}

/* cosine_similarity(x1, x2, dim, eps) = sum(x1 / max(|x1|, eps) *
 * x2 / max(|x2|, eps)) along dim, the operands broadcast first and made
 * floating (each divided by its own clamped norm first, as PyTorch's
 * stable form). */
static void cosine_similarity(decomp *d) {
  alloy_value *a = d_tensor(d, 0), *b = d_tensor(d, 1);
  const alloy_value *want = alloy_node_output(d_node(d), 0);
  alloy_dtype t = d_dtype(want);
  double eps = d_float(d, 3);
  a = d_to(d, a, alloy_dtype_is_float(d_dtype(a)) ? d_dtype(a) : t);
  b = d_to(d, b, alloy_dtype_is_float(d_dtype(b)) ? d_dtype(b) : t);
  if (!a || !b) return;
  alloy_dim shape[ALLOY_MAX_RANK];
  int ra = d_rank(a), rb = d_rank(b), r = ra > rb ? ra : rb;
  for (int i = 0; i < r; i++) {
    int ia = i - (r - ra), ib = i - (r - rb);
    alloy_dim x = ia >= 0 ? d_shape(a)[ia] : alloy_dim_const(1);
    alloy_dim y = ib >= 0 ? d_shape(b)[ib] : alloy_dim_const(1);
    shape[i] = alloy_dim_is_const(x) && x.value == 1 ? y : x;
  }
  a = D(d, "aten.expand.default", V(a), d_dim_list(d, shape, r));
  b = D(d, "aten.expand.default", V(b), d_dim_list(d, shape, r));
  int dim = d_wrap_dim(d, d_int(d, 2), r);
  if (d_failed(d)) return;
  alloy_value *na = D(d, "aten.linalg_vector_norm.default", V(a), F(2), LIST(I(dim)), B(true));
  alloy_value *nb = D(d, "aten.linalg_vector_norm.default", V(b), F(2), LIST(I(dim)), B(true));
  na = D(d, "aten.clamp_min.default", V(na), F(eps));
  nb = D(d, "aten.clamp_min.default", V(nb), F(eps));
  alloy_value *q = nn_mul(d, D(d, "aten.div.Tensor", V(a), V(na)),
                          D(d, "aten.div.Tensor", V(b), V(nb)));
  d_out(d, 0, D(d, "aten.sum.dim_IntList", V(q), LIST(I(dim))));
}

/* pdist and cdist are _pdist_forward and _cdist_forward, whose kernels
 * pick PyTorch's algorithms (cdist's matrix-product form for p = 2 and
 * large inputs) */
static void pdist(decomp *d) {
  d_out(d, 0, D(d, "aten._pdist_forward.default", V(d_tensor(d, 0)), F(d_float(d, 1))));
}

static void cdist(decomp *d) {
  d_out(d, 0, D(d, "aten._cdist_forward.default", V(d_tensor(d, 0)), V(d_tensor(d, 1)),
                F(d_float(d, 2)), *d_arg(d, 3)));
}

/* _euclidean_dist(x1, x2): the distances as one matrix product,
 * [-2 x1, |x1|^2, 1] [x2, 1, |x2|^2]^T, clamped at 0 and square-rooted. */
static void euclidean_dist(decomp *d) {
  alloy_value *a = d_tensor(d, 0), *b = d_tensor(d, 1);
  alloy_value *na = D(d, "aten.sum.dim_IntList", V(D(d, "aten.pow.Tensor_Scalar", V(a), I(2))),
                      LIST(I(-1)), B(true));
  alloy_value *nb = D(d, "aten.sum.dim_IntList", V(D(d, "aten.pow.Tensor_Scalar", V(b), I(2))),
                      LIST(I(-1)), B(true));
  alloy_value *pa[3] = {nn_mulf(d, a, -2), na, D(d, "aten.ones_like.default", V(na))};
  alloy_value *pb[3] = {b, D(d, "aten.ones_like.default", V(nb)), nb};
  alloy_value *ca = D(d, "aten.cat.default", d_value_list(d, pa, 3), I(-1));
  alloy_value *cb = D(d, "aten.cat.default", d_value_list(d, pb, 3), I(-1));
  alloy_value *r = nn_matmul(d, ca, nn_mT(d, cb));
  d_out(d, 0, D(d, "aten.sqrt.default", V(D(d, "aten.clamp_min.default", V(r), I(0)))));
}

const decomp_rule decomp_rules_losses[] = {
    {"aten.mse_loss.default", mse_loss, DECOMP_TO_CORE},
    {"aten.smooth_l1_loss.default", smooth_l1_loss, DECOMP_TO_CORE},
    {"aten.huber_loss.default", huber_loss, DECOMP_TO_CORE},
    {"aten.binary_cross_entropy.default", binary_cross_entropy, DECOMP_TO_CORE},
    {"aten.binary_cross_entropy_with_logits.default", binary_cross_entropy_with_logits,
     DECOMP_TO_CORE},
    {"aten.soft_margin_loss.default", soft_margin_loss, DECOMP_TO_CORE},
    {"aten.nll_loss_forward.default", nll_loss_forward, DECOMP_TO_CORE},
    {"aten.nll_loss2d_forward.default", nll_loss_forward, DECOMP_TO_CORE},
    {"aten.nll_loss.default", nll_loss, DECOMP_TO_CORE},
    {"aten.nll_loss_nd.default", nll_loss, DECOMP_TO_CORE},
    {"aten.nll_loss2d.default", nll_loss, DECOMP_TO_CORE},
    {"aten.multilabel_margin_loss.default", multilabel_margin_loss, DECOMP_TO_CORE},
    {"aten.l1_loss.default", l1_loss, DECOMP_TO_CORE},
    {"aten.margin_ranking_loss.default", margin_ranking_loss, DECOMP_TO_CORE},
    {"aten.hinge_embedding_loss.default", hinge_embedding_loss, DECOMP_TO_CORE},
    {"aten.cosine_embedding_loss.default", cosine_embedding_loss, DECOMP_TO_CORE},
    {"aten.kl_div.default", kl_div, DECOMP_TO_CORE},
    {"aten.poisson_nll_loss.default", poisson_nll_loss, DECOMP_TO_CORE},
    {"aten.triplet_margin_loss.default", triplet_margin_loss, DECOMP_TO_CORE},
    {"aten.ctc_loss.IntList", ctc_loss, DECOMP_TO_CORE},
    {"aten.pairwise_distance.default", pairwise_distance, DECOMP_TO_CORE},
    {"aten.cosine_similarity.default", cosine_similarity, DECOMP_TO_CORE},
    {"aten.pdist.default", pdist, DECOMP_TO_CORE},
    {"aten.cdist.default", cdist, DECOMP_TO_CORE},
    {"aten._euclidean_dist.default", euclidean_dist, DECOMP_TO_CORE},
    {"aten.cross_entropy_loss.default", cross_entropy_loss, DECOMP_TO_CORE},
    {"aten.multi_margin_loss.default", multi_margin_loss, DECOMP_TO_CORE},
    {"aten.multilabel_margin_loss_forward.default", multilabel_margin_loss_forward, DECOMP_TO_CORE},
    {NULL, NULL, 0},
};
