/*
 * decompositions/rules_nn_2.c: more of the neural-network composites, from
 * ATen to Core ATen: the losses, padding, upsampling (nearest, linear,
 * bicubic, antialiased), adaptive max pooling, max unpooling, im2col,
 * embedding_bag, and the channel rearrangements (pixel_shuffle,
 * channel_shuffle) with linalg_cross. The matrix products, attention and
 * normalizations are in rules_nn.c, which also defines the helpers of
 * rules_nn_util.h.
 *
 * The math follows PyTorch's decompositions (torch/_decomp) and, for the
 * C++ composites (cross_entropy_loss, nll_loss, pad), ATen's native code.
 * Losses that PyTorch decorates with pw_cast_for_opmath compute float16
 * and bfloat16 in float32 and round once at the end; where the native CPU
 * kernel rounds differently (interpolation weights kept in the dtype) the
 * rule follows the kernel, whose results are the reference.
 */
#include <math.h>
#include <string.h>

#include "decompositions/rules.h"
#include "decompositions/rules_nn_util.h"

enum { REDUCE_NONE = 0, REDUCE_MEAN = 1, REDUCE_SUM = 2 };

static alloy_value *mul(decomp *d, alloy_value *a, alloy_value *b) {
  return D(d, "aten.mul.Tensor", V(a), V(b));
}
static alloy_value *mulf(decomp *d, alloy_value *a, double k) {
  return D(d, "aten.mul.Tensor", V(a), F(k));
}
static alloy_value *add(decomp *d, alloy_value *a, alloy_value *b) {
  return D(d, "aten.add.Tensor", V(a), V(b));
}
static alloy_value *sub(decomp *d, alloy_value *a, alloy_value *b) {
  return D(d, "aten.sub.Tensor", V(a), V(b));
}
static alloy_value *neg(decomp *d, alloy_value *a) { return D(d, "aten.neg.default", V(a)); }
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
  alloy_value *z = sub(d, d_to(d, d_tensor(d, 0), c), d_to(d, d_tensor(d, 1), c));
  z = d_to(d, d_to(d, z, t), c);
  z = D(d, "aten.pow.Tensor_Scalar", V(z), I(2));
  d_out(d, 0, d_to(d, reduce_loss(d, z, d_int(d, 2)), t));
}

/* smooth_l1_loss: z = |x - y|; 0.5 z^2 / beta below beta, z - beta / 2 above */
static void smooth_l1_loss(decomp *d) {
  alloy_dtype t = out_dtype(d), c = d_opmath(t);
  double beta = d_float(d, 3);
  alloy_value *z =
      D(d, "aten.abs.default", V(sub(d, d_to(d, d_tensor(d, 0), c), d_to(d, d_tensor(d, 1), c))));
  alloy_value *quad =
      D(d, "aten.div.Tensor", V(mulf(d, D(d, "aten.pow.Tensor_Scalar", V(z), I(2)), 0.5)), F(beta));
  alloy_value *lin = D(d, "aten.sub.Tensor", V(z), F(0.5 * beta));
  alloy_value *loss =
      D(d, "aten.where.self", V(D(d, "aten.lt.Scalar", V(z), F(beta))), V(quad), V(lin));
  d_out(d, 0, d_to(d, reduce_loss(d, loss, d_int(d, 2)), t));
}

/* huber_loss: z = |x - y|; z^2 / 2 below delta, delta (z - delta / 2) above */
static void huber_loss(decomp *d) {
  double delta = d_float(d, 3);
  alloy_value *z = D(d, "aten.abs.default", V(sub(d, d_tensor(d, 0), d_tensor(d, 1))));
  alloy_value *quad = mul(d, mulf(d, z, 0.5), z);
  alloy_value *lin = mulf(d, D(d, "aten.sub.Tensor", V(z), F(0.5 * delta)), delta);
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
      D(d, "aten.clamp.default", V(D(d, "aten.log1p.default", V(neg(d, x)))), F(-100));
  alloy_value *logx = D(d, "aten.clamp.default", V(D(d, "aten.log.default", V(x))), F(-100));
  alloy_value *loss = sub(d, mul(d, D(d, "aten.sub.Tensor", V(y), I(1)), log1mx), mul(d, y, logx));
  if (w) loss = mul(d, loss, d_to(d, w, c));
  d_out(d, 0, d_to(d, reduce_loss(d, loss, d_int(d, 3)), t));
}

/* log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), stable for large |x| */
static alloy_value *log_sigmoid(decomp *d, alloy_value *x) {
  alloy_value *m = D(d, "aten.clamp.default", V(x), NONE, F(0));
  alloy_value *e = D(d, "aten.exp.default", V(neg(d, D(d, "aten.abs.default", V(x)))));
  return sub(d, m, D(d, "aten.log1p.default", V(e)));
}

/* binary_cross_entropy_with_logits = reduce(w * ((1 - y) x - lw log(sigmoid(x))))
 * with lw = (pos_weight - 1) y + 1, or 1 */
static void binary_cross_entropy_with_logits(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *y = d_tensor(d, 1), *w = d_tensor(d, 2), *pw = d_tensor(d, 3);
  alloy_dtype t = out_dtype(d);
  alloy_value *ls = d_to(d, log_sigmoid(d, d_to(d, x, d_opmath(t))), t);
  if (pw)
    ls = mul(d, ls,
             D(d, "aten.add.Tensor", V(mul(d, D(d, "aten.sub.Tensor", V(pw), I(1)), y)), I(1)));
  alloy_value *loss = sub(d, mul(d, D(d, "aten.rsub.Scalar", V(y), I(1)), x), ls);
  if (w) loss = mul(d, loss, w);
  d_out(d, 0, reduce_loss(d, loss, d_int(d, 4)));
}

/* soft_margin_loss = reduce(log(1 + exp(-x y))), each step in the
 * tensors' dtype as the native kernel (an exp that overflows float16 gives
 * an infinite loss there too). */
static void soft_margin_loss(decomp *d) {
  alloy_value *p = mul(d, d_tensor(d, 0), d_tensor(d, 1));
  alloy_value *loss = D(d, "aten.log1p.default", V(D(d, "aten.exp.default", V(neg(d, p)))));
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
    for (int k = 1; k < 16; k++) row = add(d, row, D(d, "aten.select.int", V(m), I(1), I(k)));
  }
  return add(d, nn_view(d, row, NULL, 0), first);
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
    x = mul(d, x, w);
  }
  alloy_value *keep = D(d, "aten.ne.Scalar", V(target), SYM(ignore));
  alloy_value *safe = D(d, "aten.where.self", V(keep), V(target), I(0));
  alloy_value *safe1 = nn_unsqueeze(d, safe, cd);
  alloy_value *res = neg(d, nn_squeeze(d, D(d, "aten.gather.default", V(x), I(cd), V(safe1)), cd));
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
    if (ls > 0) target = D(d, "aten.add.Tensor", V(mulf(d, target, 1 - ls)), F(ls / ncf));
    alloy_value *p = mul(d, lsm, target);
    if (wb) p = mul(d, p, wb);
    alloy_value *res;
    if (reduction == REDUCE_NONE) {
      res = neg(d, sum_dim(d, p, cd, false));
    } else {
      res = neg(d, sum_all(d, p));
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
  alloy_value *smooth = neg(d, sum_dim(d, wb ? mul(d, lsm, wb) : lsm, cd, false));
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
  d_out(d, 0, add(d, mulf(d, loss, 1 - ls), mulf(d, smooth, ls / ncf)));
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
  alloy_value *z = add(d, D(d, "aten.rsub.Tensor", V(u), *d_arg(d, 3)), x);
  /* The kernel adds a term only where z > 0, which skips NaN (clamp would
   * keep it) and never weighs a skipped one. */
  alloy_value *idx = D(d, "aten.arange.start_step", I(0), SYM(nclass), I(1), DT(ALLOY_I64));
  alloy_value *keep = D(d, "aten.logical_and.default", V(D(d, "aten.gt.Scalar", V(z), I(0))),
                        V(D(d, "aten.ne.Tensor", V(idx), V(y1))));
  if (p == 2) z = mul(d, z, z);
  if (w) z = mul(d, z, nn_unsqueeze(d, D(d, "aten.index_select.default", V(w), I(0), V(y)), 1));
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
  alloy_value *z = add(d, D(d, "aten.rsub.Scalar", V(ut), F(1.0)), x);
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

/* --- padding -----------------------------------------------------------------------*/

/* Circular padding: each padded dim wraps around, the last columns coming
 * before the first and the first after the last. */
static alloy_value *pad_circular(decomp *d, alloy_value *x, const alloy_dim *pad, int n) {
  for (int k = 0; k < n / 2 && x; k++) {
    int dim = d_rank(x) - 1 - k;
    alloy_dim l = pad[2 * k], r = pad[2 * k + 1], size = d_shape(x)[dim];
    if (!alloy_dim_is_const(l) || !alloy_dim_is_const(r) || l.value < 0 || r.value < 0) {
      d_decline(d, "circular padding by negative or symbolic amounts");
      return NULL;
    }
    alloy_value *parts[3];
    int np = 0;
    if (l.value)
      parts[np++] = D(d, "aten.slice.Tensor", V(x), I(dim),
                      SYM(alloy_dim_sub(d_symtab(d), size, l)), SYM(size));
    parts[np++] = x;
    if (r.value) parts[np++] = D(d, "aten.slice.Tensor", V(x), I(dim), I(0), SYM(r));
    if (np > 1) x = D(d, "aten.cat.default", d_value_list(d, parts, np), I(dim));
  }
  return x;
}

/* pad(self, pad, mode, value): the padding op of each mode. */
static void pad(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  alloy_dim p[2 * ALLOY_MAX_RANK];
  int n = d_dims(d, 1, p, 2 * ALLOY_MAX_RANK);
  const char *mode = d_str(d, 2);
  if (d_failed(d)) return;
  if (!mode || !strcmp(mode, "constant")) {
    d_out(d, 0,
          D(d, "aten.constant_pad_nd.default", V(x), d_dim_list(d, p, n),
            d_is_none(d, 3) ? I(0) : F(d_float(d, 3))));
    return;
  }
  if (!d_is_none(d, 3)) {
    d_fail(d, "padding mode \"%s\" does not take a value", mode);
    return;
  }
  int k = n / 2;
  if (n % 2 || k < 1 || k > 3 || (d_rank(x) != k + 1 && d_rank(x) != k + 2))
    return d_decline(d, "%s padding of %d dims of a rank-%d tensor", mode, k, d_rank(x));
  static const char *const reflect[] = {"aten.reflection_pad1d.default",
                                        "aten.reflection_pad2d.default",
                                        "aten.reflection_pad3d.default"};
  static const char *const replicate[] = {"aten.replication_pad1d.default",
                                          "aten.replication_pad2d.default",
                                          "aten.replication_pad3d.default"};
  if (!strcmp(mode, "reflect"))
    d_out(d, 0, D(d, reflect[k - 1], V(x), d_dim_list(d, p, n)));
  else if (!strcmp(mode, "replicate"))
    d_out(d, 0, D(d, replicate[k - 1], V(x), d_dim_list(d, p, n)));
  else if (!strcmp(mode, "circular"))
    d_out(d, 0, pad_circular(d, x, p, n));
  else
    d_fail(d, "unknown padding mode \"%s\"", mode);
}

/* replication_pad1d(x, [l, r]) = replication_pad2d of x seen as one row */
static void replication_pad1d(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  alloy_dim p[2];
  if (d_dims(d, 1, p, 2) != 2) return d_decline(d, "padding needs 2 values");
  alloy_dim p4[4] = {p[0], p[1], alloy_dim_const(0), alloy_dim_const(0)};
  alloy_value *y =
      D(d, "aten.replication_pad2d.default", V(nn_unsqueeze(d, x, -2)), d_dim_list(d, p4, 4));
  d_out(d, 0, nn_squeeze(d, y, -2));
}

/* --- rearrangements ----------------------------------------------------------------*/

/* pixel_shuffle: [*, C r r, H, W] -> [*, C, H r, W r], each r x r block of
 * channels spread over a block of pixels; pixel_unshuffle the inverse. */
static void shuffle_pixels(decomp *d, bool un) {
  alloy_value *x = d_tensor(d, 0);
  int64_t f = d_int(d, 1);
  int r = d_rank(x), nb = r - 3;
  if (r < 3) return d_decline(d, "needs [*, C, H, W]");
  alloy_symtab *st = d_symtab(d);
  const alloy_dim *s = d_shape(x);
  alloy_dim fd = alloy_dim_const(f), c = s[r - 3], h = s[r - 2], w = s[r - 1];
  alloy_dim six[ALLOY_MAX_RANK + 3], out[ALLOY_MAX_RANK];
  int64_t perm[ALLOY_MAX_RANK + 3];
  memcpy(six, s, sizeof *six * (size_t)nb);
  memcpy(out, s, sizeof *out * (size_t)nb);
  for (int i = 0; i < nb; i++) perm[i] = i;
  if (!un) {
    /* [*, C, r, r, H, W] -> [*, C, H, r, W, r] */
    alloy_dim oc = alloy_dim_floordiv(st, c, alloy_dim_const(f * f));
    alloy_dim v[5] = {oc, fd, fd, h, w};
    memcpy(six + nb, v, sizeof v);
    int64_t p[5] = {0, 3, 1, 4, 2};
    for (int i = 0; i < 5; i++) perm[nb + i] = nb + p[i];
    out[nb] = oc;
    out[nb + 1] = alloy_dim_mul(st, h, fd);
    out[nb + 2] = alloy_dim_mul(st, w, fd);
  } else {
    /* [*, C, H/r, r, W/r, r] -> [*, C, r, r, H/r, W/r] */
    alloy_dim oh = alloy_dim_floordiv(st, h, fd), ow = alloy_dim_floordiv(st, w, fd);
    alloy_dim v[5] = {c, oh, fd, ow, fd};
    memcpy(six + nb, v, sizeof v);
    int64_t p[5] = {0, 2, 4, 1, 3};
    for (int i = 0; i < 5; i++) perm[nb + i] = nb + p[i];
    out[nb] = alloy_dim_mul(st, c, alloy_dim_const(f * f));
    out[nb + 1] = oh;
    out[nb + 2] = ow;
  }
  alloy_value *y = nn_reshape(d, x, six, nb + 5);
  y = D(d, "aten.permute.default", V(y), d_int_list(d, perm, nb + 5));
  y = D(d, "aten.clone.default", V(y));
  d_out(d, 0, nn_view(d, y, out, r));
}

static void pixel_shuffle(decomp *d) { shuffle_pixels(d, false); }
static void pixel_unshuffle(decomp *d) { shuffle_pixels(d, true); }

/* channel_shuffle: [N, g * k, *] -> [N, k * g, *], channel i*k+j moving
 * to j*g+i (a transpose of the group and member dims). */
static void channel_shuffle(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  alloy_dim g = d_dim(d, 1);
  int r = d_rank(x);
  if (r < 3) return d_decline(d, "needs [N, C, *]");
  const alloy_dim *s = d_shape(x);
  alloy_dim v[ALLOY_MAX_RANK + 1];
  int64_t perm[ALLOY_MAX_RANK + 1];
  v[0] = s[0];
  v[1] = g;
  v[2] = alloy_dim_floordiv(d_symtab(d), s[1], g);
  memcpy(v + 3, s + 2, sizeof *v * (size_t)(r - 2));
  for (int i = 0; i <= r; i++) perm[i] = i;
  perm[1] = 2;
  perm[2] = 1;
  alloy_value *y =
      D(d, "aten.permute.default", V(nn_reshape(d, x, v, r + 1)), d_int_list(d, perm, r + 1));
  d_out(d, 0, nn_view(d, D(d, "aten.clone.default", V(y)), s, r));
}

/* linalg_cross(a, b, dim): the cross product of 3-vectors along dim,
 * a1 b2 - a2 b1 from the vectors rotated by one and by two. */
static void linalg_cross(decomp *d) {
  alloy_value *a = d_tensor(d, 0), *b = d_tensor(d, 1);
  const alloy_value *want = alloy_node_output(d_node(d), 0);
  int r = d_rank(want), dim = d_wrap_dim(d, d_int(d, 2), r);
  if (d_failed(d)) return;
  a = D(d, "aten.expand.default", V(a), d_dim_list(d, d_shape(want), r));
  b = D(d, "aten.expand.default", V(b), d_dim_list(d, d_shape(want), r));
  alloy_value *i1 = D(d, "aten.arange.start_step", I(0), I(3), I(1), DT(ALLOY_I64));
  i1 = D(d, "aten.remainder.Scalar", V(D(d, "aten.add.Tensor", V(i1), I(1))), I(3));
  alloy_value *i2 = D(d, "aten.remainder.Scalar", V(D(d, "aten.add.Tensor", V(i1), I(1))), I(3));
  alloy_value *a1 = D(d, "aten.index_select.default", V(a), I(dim), V(i1));
  alloy_value *a2 = D(d, "aten.index_select.default", V(a), I(dim), V(i2));
  alloy_value *b1 = D(d, "aten.index_select.default", V(b), I(dim), V(i1));
  alloy_value *b2 = D(d, "aten.index_select.default", V(b), I(dim), V(i2));
  d_out(d, 0, sub(d, mul(d, a1, b2), mul(d, a2, b1)));
}

/* --- upsampling ---------------------------------------------------------------------*/

/* Reads the output sizes (arg at) and the optional per-dim scales
 * (args sat.. sat+n-1) of an upsample op over n spatial dims. */
static bool upsample_args(decomp *d, int at, int sat, int n, alloy_dim *osize, double *scale,
                          bool *has_scale) {
  if (d_dims(d, at, osize, n) != n) {
    d_decline(d, "output_size must have %d values", n);
    return false;
  }
  for (int i = 0; i < n; i++) {
    has_scale[i] = !d_is_none(d, sat + i);
    scale[i] = has_scale[i] ? d_float(d, sat + i) : 0;
  }
  return !d_failed(d);
}

/* The input index of every output position along one dim, as int64:
 * floor((o + offset) * isize / osize), or with 1/scale for the ratio
 * when a positive scale is given (computed in float32 as PyTorch). */
static alloy_value *nearest_index(decomp *d, alloy_dim isize, alloy_dim osize, bool has_scale,
                                  double scale, bool exact) {
  double ratio;
  if (has_scale && scale > 0) {
    ratio = 1.0 / scale;
  } else {
    if (!alloy_dim_is_const(isize) || !alloy_dim_is_const(osize)) {
      d_decline(d, "symbolic sizes for nearest upsampling");
      return NULL;
    }
    ratio = (double)isize.value / (double)osize.value;
  }
  alloy_value *o = D(d, "aten.arange.start_step", I(0), SYM(osize), I(1), DT(ALLOY_F32));
  if (exact) o = D(d, "aten.add.Tensor", V(o), F(0.5));
  alloy_value *idx = d_to(d, D(d, "aten.floor.default", V(mulf(d, o, ratio))), ALLOY_I64);
  /* Cannot pass the end: the input index is below isize. */
  return D(d, "aten.clamp.default", V(idx), NONE,
           SYM(alloy_dim_sub(d_symtab(d), isize, alloy_dim_const(1))));
}

static void upsample_nearest(decomp *d, int n, bool exact) {
  alloy_value *x = d_tensor(d, 0);
  alloy_dim osize[3];
  double scale[3];
  bool has[3];
  if (!upsample_args(d, 1, 2, n, osize, scale, has)) return;
  int r = d_rank(x);
  for (int i = 0; i < n && x; i++) {
    int dim = r - n + i;
    alloy_value *idx = nearest_index(d, d_shape(x)[dim], osize[i], has[i], scale[i], exact);
    if (!idx) return;
    x = D(d, "aten.index_select.default", V(x), I(dim), V(idx));
  }
  d_out(d, 0, x);
}

static void upsample_nearest1d(decomp *d) { upsample_nearest(d, 1, false); }
static void upsample_nearest2d(decomp *d) { upsample_nearest(d, 2, false); }
static void upsample_nearest_exact1d(decomp *d) { upsample_nearest(d, 1, true); }

/* Linear interpolation along each spatial dim in turn, the last first
 * (the nesting of PyTorch's sums): the source coordinate of each output
 * position, its two neighbours and their weights 1 - t and t, in opmath.
 * PyTorch's CPU kernels store the weights in the input's dtype, except
 * the vectorized 2-d kernel it takes for small outputs (H + W <= 128),
 * which keeps them in opmath. A dim whose size does not change is copied. */
static void upsample_linear(decomp *d, int n) {
  alloy_value *x = d_tensor(d, 0);
  alloy_dim osize[3];
  double scale[3];
  bool has[3];
  bool align = d_bool(d, 2);
  if (!upsample_args(d, 1, 3, n, osize, scale, has)) return;
  alloy_dtype t = d_dtype(x), c = d_opmath(t);
  if (!alloy_dtype_is_float(t)) return d_decline(d, "integer upsampling rounds differently");
  for (int i = 0; i < n; i++)
    if (!alloy_dim_is_const(osize[i]) || !alloy_dim_is_const(d_shape(x)[d_rank(x) - n + i]))
      return d_decline(d, "symbolic sizes for linear upsampling");
  bool opmath_weights = n == 2 && osize[0].value + osize[1].value <= 128;
  x = d_to(d, x, c);
  int r = d_rank(x);
  for (int i = n - 1; i >= 0 && x; i--) {
    int dim = r - n + i;
    int64_t in = d_shape(x)[dim].value, out = osize[i].value;
    if (in == out) continue;
    double ratio;
    if (align)
      ratio = out > 1 ? (double)(in - 1) / (double)(out - 1) : 0;
    else
      ratio = has[i] && scale[i] > 0 ? 1.0 / scale[i] : (double)in / (double)out;
    alloy_value *o = D(d, "aten.arange.start_step", I(0), I(out), I(1), DT(c));
    alloy_value *src = align ? mulf(d, o, ratio)
                             : D(d, "aten.sub.Tensor",
                                 V(mulf(d, D(d, "aten.add.Tensor", V(o), F(0.5)), ratio)), F(0.5));
    src = D(d, "aten.clamp.default", V(src), F(0));
    alloy_value *i0 = D(d, "aten.clamp.default", V(d_to(d, src, ALLOY_I64)), NONE, I(in - 1));
    alloy_value *i1 =
        D(d, "aten.clamp.default", V(D(d, "aten.add.Tensor", V(i0), I(1))), NONE, I(in - 1));
    alloy_value *w1 = D(d, "aten.clamp.default", V(sub(d, src, i0)), F(0), F(1));
    if (!opmath_weights) w1 = d_to(d, d_to(d, w1, t), c);
    alloy_value *w0 = D(d, "aten.rsub.Scalar", V(w1), F(1));
    if (!opmath_weights) w0 = d_to(d, d_to(d, w0, t), c);
    alloy_dim fshape[ALLOY_MAX_RANK];
    for (int k = 0; k < r - dim; k++) fshape[k] = alloy_dim_const(1);
    fshape[0] = osize[i];
    alloy_value *v0 = D(d, "aten.index_select.default", V(x), I(dim), V(i0));
    alloy_value *v1 = D(d, "aten.index_select.default", V(x), I(dim), V(i1));
    x = add(d, mul(d, v0, nn_view(d, w0, fshape, r - dim)),
            mul(d, v1, nn_view(d, w1, fshape, r - dim)));
  }
  if (x == d_tensor(d, 0)) x = D(d, "aten.clone.default", V(x));
  d_out(d, 0, d_to(d, x, t));
}

static void upsample_linear1d(decomp *d) { upsample_linear(d, 1); }
static void upsample_bilinear2d(decomp *d) { upsample_linear(d, 2); }
static void upsample_trilinear3d(decomp *d) { upsample_linear(d, 3); }

/* A float64 scale or weight v as float32 holds it, or as it is (c: the
 * kernel's arithmetic dtype). */
static double in_dtype(double v, alloy_dtype c) { return c == ALLOY_F64 ? v : (double)(float)v; }

/* a * b + c with one rounding, as the kernels' fused multiply-adds (the
 * compiler contracts them): for float32 computed in float64, where the
 * product is exact, and rounded to float32, which differs only where
 * float64's rounding of the sum lands on a float32 tie. float64 has no
 * wider type: there the product is rounded before the add, which a sum
 * that cancels to far below its terms shows. b or c may be NULL for the
 * scalars kb, kc. */
static alloy_value *fused(decomp *d, alloy_value *a, alloy_value *b, double kb, alloy_value *c,
                          double kc, alloy_dtype t) {
  alloy_value *p = b ? mul(d, d_to(d, a, ALLOY_F64), d_to(d, b, ALLOY_F64))
                     : mulf(d, d_to(d, a, ALLOY_F64), kb);
  p = c ? add(d, p, d_to(d, c, ALLOY_F64)) : D(d, "aten.add.Tensor", V(p), F(kc));
  return d_to(d, p, t);
}

/* PyTorch's area_pixel_compute_scale for one dim, in c. */
static double pixel_scale(int64_t in, int64_t out, bool align, bool has, double scale,
                          alloy_dtype c) {
  if (align) return out > 1 ? in_dtype((double)(in - 1) / (double)(out - 1), c) : 0;
  return in_dtype(has && scale > 0 ? 1.0 / scale : (double)in / (double)out, c);
}

/* One antialiased pass along dim (in -> out inputs), as the kernel's
 * separable pass computes it in the dtype t (float32 or float64): output
 * o centred at s (o + 0.5) takes the K = 2 ceil(support) + 1 slots from
 * xmin = trunc(centre - support + 0.5), the window ending at
 * trunc(centre + support + 0.5) (support s, at least 1); slot weights
 * max(0, 1 - |(xmin + k - centre + 0.5) / max(s, 1)|), summed in order
 * and normalized; then the slots' products summed, the first rounded and
 * each further one fused onto the sum. Slots past the window are not
 * read (a zero weight would turn inf into NaN). */
static alloy_value *aa_pass(decomp *d, alloy_value *x, int dim, int64_t in, int64_t out,
                            double s, alloy_dtype t) {
  double support = s >= 1 ? s : 1, inv = s >= 1 ? in_dtype(1 / s, t) : 1;
  /* support comes from the scale: bounded before the cast (a huge scale
   * reaches every input anyway). */
  double reach = ceil(support) < (double)in ? ceil(support) : (double)in;
  int64_t K = (int64_t)reach * 2 + 1;
  alloy_value *o = nn_unsqueeze(d, D(d, "aten.arange.start_step", I(0), I(out), I(1), DT(t)), 1);
  alloy_value *center = mulf(d, D(d, "aten.add.Tensor", V(o), F(0.5)), s);
  alloy_value *xmin = D(d, "aten.clamp.default",
                        V(d_to(d, D(d, "aten.add.Tensor",
                                    V(D(d, "aten.sub.Tensor", V(center), F(support))), F(0.5)),
                               ALLOY_I64)),
                        I(0));
  alloy_value *xend = D(d, "aten.clamp.default",
                        V(d_to(d, D(d, "aten.add.Tensor",
                                    V(D(d, "aten.add.Tensor", V(center), F(support))), F(0.5)),
                               ALLOY_I64)),
                        NONE, I(in));
  alloy_value *xsize = D(d, "aten.clamp.default", V(sub(d, xend, xmin)), I(0), I(K));
  alloy_value *k = nn_unsqueeze(d, D(d, "aten.arange.start_step", I(0), I(K), I(1), DT(ALLOY_I64)), 0);
  alloy_value *pos = add(d, xmin, k);
  alloy_value *valid = D(d, "aten.lt.Tensor", V(k), V(xsize));
  alloy_value *dist = D(
      d, "aten.abs.default",
      V(mulf(d, D(d, "aten.add.Tensor", V(sub(d, d_to(d, pos, t), center)), F(0.5)), inv)));
  alloy_value *w = D(d, "aten.where.self", V(D(d, "aten.lt.Scalar", V(dist), F(1))),
                     V(D(d, "aten.rsub.Scalar", V(dist), F(1))), F(0));
  w = D(d, "aten.where.self", V(valid), V(w), F(0));
  alloy_value *total = NULL;
  for (int64_t j = 0; j < K; j++) {
    alloy_value *wj = D(d, "aten.select.int", V(w), I(1), I(j));
    total = total ? add(d, total, wj) : wj;
  }
  total = nn_unsqueeze(d, total, 1);
  w = D(d, "aten.where.self", V(D(d, "aten.ne.Scalar", V(total), F(0))),
        V(D(d, "aten.div.Tensor", V(w), V(total))), V(w));
  /* the slots of every output gathered: [.., out, K, ..] */
  int r = d_rank(x);
  alloy_dim flatk = alloy_dim_const(out * K), gshape[ALLOY_MAX_RANK + 1], wshape[ALLOY_MAX_RANK];
  alloy_value *idx = D(d, "aten.clamp.default", V(pos), NONE, I(in - 1));
  alloy_value *g = D(d, "aten.index_select.default", V(x), I(dim), V(nn_reshape(d, idx, &flatk, 1)));
  for (int i = 0, j = 0; i < r; i++) {
    gshape[j++] = i == dim ? alloy_dim_const(out) : d_shape(x)[i];
    if (i == dim) gshape[j++] = alloy_dim_const(K);
  }
  g = nn_view(d, g, gshape, r + 1);
  for (int i = 0; i < r - dim; i++) wshape[i] = alloy_dim_const(1);
  wshape[0] = alloy_dim_const(out);
  alloy_value *acc = NULL;
  for (int64_t j = 0; j < K; j++) {
    alloy_value *v = D(d, "aten.select.int", V(g), I(dim + 1), I(j));
    alloy_value *wj = nn_view(d, D(d, "aten.select.int", V(w), I(1), I(j)), wshape, r - dim);
    alloy_value *ok = nn_view(d, D(d, "aten.select.int", V(valid), I(1), I(j)), wshape, r - dim);
    alloy_value *next = acc ? fused(d, v, wj, 0, acc, 0, t) : mul(d, v, wj);
    acc = acc ? D(d, "aten.where.self", V(ok), V(next), V(acc)) : next;
  }
  return acc;
}

/* _upsample_bilinear2d_aa: antialiased bilinear resampling, as PyTorch's
 * separable CPU kernel: a pass along W, then one along H, each in the
 * dtype; a dim whose size stays is left as it is (not even its zero
 * weights applied). */
static void upsample_bilinear2d_aa(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  alloy_dim osize[2];
  double scale[2];
  bool has[2];
  bool align = d_bool(d, 2);
  if (!upsample_args(d, 1, 3, 2, osize, scale, has)) return;
  alloy_dtype t = d_dtype(x);
  if (t != ALLOY_F32 && t != ALLOY_F64)
    return d_decline(d, "the kernel takes float32, float64 and uint8 (in fixed point)");
  int r = d_rank(x);
  for (int i = 0; i < 2; i++)
    if (!alloy_dim_is_const(d_shape(x)[r - 2 + i]) || !alloy_dim_is_const(osize[i]))
      return d_decline(d, "symbolic sizes for antialiased upsampling");
  for (int i = 1; i >= 0 && x; i--) {
    int64_t in = d_shape(x)[r - 2 + i].value, out = osize[i].value;
    if (in != out)
      x = aa_pass(d, x, r - 2 + i, in, out, pixel_scale(in, out, align, has[i], scale[i], t), t);
  }
  if (x == d_tensor(d, 0)) x = D(d, "aten.clone.default", V(x));
  d_out(d, 0, x);
}

/* Keys' cubic convolution weights (A = -0.75) of the four neighbours of a
 * point at fraction t past the second: w0 = k2(t + 1), w1 = k1(t),
 * w2 = k1(1 - t), w3 = k2(1 - t + 1), each step in c as the kernel's
 * compiled code: k1(x) = ((1.25 x - 2.25) x) x + 1 and
 * k2(x) = ((-0.75 x + 3.75) x - 6) x + 3, the first steps fused, the last
 * not. Near 1 and 2 they cancel, so each rounding shows. */
static alloy_value *cubic_k1(decomp *d, alloy_value *x, alloy_dtype c) {
  alloy_value *p = fused(d, x, NULL, 1.25, NULL, -2.25, c);
  return D(d, "aten.add.Tensor", V(mul(d, mul(d, p, x), x)), F(1));
}
static alloy_value *cubic_k2(decomp *d, alloy_value *x, alloy_dtype c) {
  alloy_value *p = fused(d, fused(d, x, NULL, -0.75, NULL, 3.75, c), x, 0, NULL, -6, c);
  return D(d, "aten.add.Tensor", V(mul(d, p, x)), F(3));
}

/* upsample_bicubic2d: cubic interpolation along W, then along H, in opmath
 * c, as the kernel's sums nest (it keeps the W sums in c too); the
 * neighbours clamped to the edges, the weights kept in the input's dtype.
 * The source index s (o + 0.5) - 0.5 is fused, and each sum of four takes
 * the second product rounded, the first fused onto it, then the others
 * fused in turn. */
static void upsample_bicubic2d(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  alloy_dim osize[2];
  double scale[2];
  bool has[2];
  bool align = d_bool(d, 2);
  if (!upsample_args(d, 1, 3, 2, osize, scale, has)) return;
  alloy_dtype t = d_dtype(x), c = d_opmath(t);
  if (!alloy_dtype_is_float(t))
    return d_decline(d, "integer bicubic upsampling rounds differently");
  x = d_to(d, x, c);
  int r = d_rank(x);
  for (int i = 1; i >= 0 && x; i--) {
    int dim = r - 2 + i;
    alloy_dim isize = d_shape(x)[dim];
    if (!alloy_dim_is_const(isize) || !alloy_dim_is_const(osize[i]))
      return d_decline(d, "symbolic sizes for bicubic upsampling");
    int64_t in = isize.value;
    double ratio = pixel_scale(in, osize[i].value, align, has[i], scale[i], c);
    alloy_value *o = D(d, "aten.arange.start_step", I(0), SYM(osize[i]), I(1), DT(c));
    alloy_value *src = align ? mulf(d, o, ratio)
                             : fused(d, D(d, "aten.add.Tensor", V(o), F(0.5)), NULL, ratio,
                                     NULL, -0.5, c);
    alloy_value *base = D(d, "aten.clamp.default",
                          V(d_to(d, D(d, "aten.floor.default", V(src)), ALLOY_I64)), NONE,
                          I(in - 1));
    alloy_value *tt = D(d, "aten.clamp.default", V(sub(d, src, d_to(d, base, c))), F(0), F(1));
    alloy_value *t2 = D(d, "aten.rsub.Scalar", V(tt), F(1));
    alloy_value *w[4] = {
        cubic_k2(d, D(d, "aten.add.Tensor", V(tt), F(1)), c),
        cubic_k1(d, tt, c),
        cubic_k1(d, t2, c),
        cubic_k2(d, D(d, "aten.add.Tensor", V(t2), F(1)), c),
    };
    alloy_dim fshape[ALLOY_MAX_RANK];
    for (int k = 0; k < r - dim; k++) fshape[k] = alloy_dim_const(1);
    fshape[0] = osize[i];
    alloy_value *v[4];
    for (int k = 0; k < 4; k++) {
      /* The native kernel keeps its weights in the input's dtype. */
      w[k] = nn_view(d, d_to(d, d_to(d, w[k], t), c), fshape, r - dim);
      alloy_value *ix = D(d, "aten.clamp.default", V(D(d, "aten.add.Tensor", V(base), I(k - 1))),
                          I(0), I(in - 1));
      v[k] = D(d, "aten.index_select.default", V(x), I(dim), V(ix));
    }
    alloy_value *acc = fused(d, v[0], w[0], 0, mul(d, v[1], w[1]), 0, c);
    for (int k = 2; k < 4; k++) acc = fused(d, v[k], w[k], 0, acc, 0, c);
    x = acc;
  }
  d_out(d, 0, d_to(d, x, t));
}

/* --- pooling, unpooling, patches --------------------------------------------------------*/

/* The windows of adaptive pooling along one dim of size in into out
 * cells: cell i covers [floor(i in / out), ceil((i + 1) in / out)). As
 * [out, maxlen] tables: the input index of each slot (clamped) and
 * whether the slot is inside the window. */
static int64_t adaptive_windows(decomp *d, int64_t in, int64_t out, alloy_value **idx,
                                alloy_value **valid) {
  int64_t maxlen = 0;
  for (int64_t i = 0; i < out; i++) {
    int64_t s = i * in / out, e = ((i + 1) * in + out - 1) / out;
    if (e - s > maxlen) maxlen = e - s;
  }
  alloy_value *cell =
      nn_unsqueeze(d, D(d, "aten.arange.start_step", I(0), I(out), I(1), DT(ALLOY_I64)), 1);
  alloy_value *start =
      D(d, "aten.div.Scalar_mode", V(D(d, "aten.mul.Tensor", V(cell), I(in))), I(out), S("floor"));
  alloy_value *end =
      D(d, "aten.div.Scalar_mode",
        V(D(d, "aten.add.Tensor", V(D(d, "aten.mul.Tensor", V(cell), I(in))), I(in + out - 1))),
        I(out), S("floor"));
  alloy_value *slot =
      nn_unsqueeze(d, D(d, "aten.arange.start_step", I(0), I(maxlen), I(1), DT(ALLOY_I64)), 0);
  alloy_value *at = D(d, "aten.add.Tensor", V(start), V(slot));
  *valid = D(d, "aten.lt.Tensor", V(at), V(end));
  *idx = D(d, "aten.clamp.default", V(at), NONE, I(in - 1));
  return maxlen;
}

/* adaptive_max_pool2d/3d -> (values, indices): the maximum of each
 * adaptive window over the last n dims and its flat index into the
 * input's spatial plane. The windows' slots are gathered dim by dim into
 * [*, o0, l0, o1, l1, ...], slots past a window's end masked to -inf,
 * then [*, o0, o1, ..., l0 * l1 * ...] reduced by max (ties: the first
 * slot, as the kernel's strict > keeps it). */
static void adaptive_max_pool(decomp *d, int n) {
  alloy_value *x = d_tensor(d, 0);
  int64_t os[3];
  if (d_ints(d, 1, os, n) != n) return d_decline(d, "output_size needs %d values", n);
  int r = d_rank(x), nb = r - n;
  if (nb < 1) return d_decline(d, "needs a channel dim");
  const alloy_dim *s = d_shape(x);
  int64_t in[3], len[3], total = 1;
  alloy_value *idx[3], *valid[3];
  for (int i = 0; i < n; i++) {
    if (!alloy_dim_is_const(s[nb + i])) return d_decline(d, "symbolic spatial sizes");
    in[i] = s[nb + i].value;
    if (in[i] == 0 || os[i] == 0) return d_decline(d, "empty windows");
    len[i] = adaptive_windows(d, in[i], os[i], &idx[i], &valid[i]);
    total *= len[i];
  }
  if (d_failed(d)) return;
  /* Every table broadcast to [o0, l0, o1, l1, ...]: dim i at 2i, 2i + 1. */
  alloy_dim win[6], shape[ALLOY_MAX_RANK + 6];
  for (int i = 0; i < n; i++) {
    win[2 * i] = alloy_dim_const(os[i]);
    win[2 * i + 1] = alloy_dim_const(len[i]);
  }
  alloy_value *v = x, *ok = NULL, *flat = NULL;
  for (int i = 0; i < n; i++) {
    alloy_dim nflat = alloy_dim_const(os[i] * len[i]), b[6];
    v = D(d, "aten.index_select.default", V(v), I(nb + i), V(nn_view(d, idx[i], &nflat, 1)));
    for (int k = 0; k < 2 * (n - i); k++) b[k] = k < 2 ? win[2 * i + k] : alloy_dim_const(1);
    alloy_value *vi = nn_view(d, valid[i], b, 2 * (n - i)),
                *ii = nn_view(d, idx[i], b, 2 * (n - i));
    ok = ok ? D(d, "aten.logical_and.default", V(ok), V(vi)) : vi;
    /* flat index: ((i0 * in1) + i1) * in2 + i2 */
    flat =
        flat ? D(d, "aten.add.Tensor", V(D(d, "aten.mul.Tensor", V(flat), I(in[i]))), V(ii)) : ii;
  }
  memcpy(shape, s, sizeof *shape * (size_t)nb);
  memcpy(shape + nb, win, sizeof *win * (size_t)(2 * n));
  v = D(d, "aten.where.self", V(ok), V(nn_view(d, v, shape, nb + 2 * n)), F(-INFINITY));
  int64_t perm[ALLOY_MAX_RANK + 6], fperm[6];
  for (int i = 0; i < nb; i++) perm[i] = i;
  for (int i = 0; i < n; i++) {
    fperm[i] = 2 * i;
    fperm[n + i] = 2 * i + 1;
  }
  for (int i = 0; i < 2 * n; i++) perm[nb + i] = nb + fperm[i];
  alloy_dim pooled[ALLOY_MAX_RANK + 4];
  memcpy(pooled, s, sizeof *pooled * (size_t)nb);
  for (int i = 0; i < n; i++) pooled[nb + i] = win[2 * i];
  pooled[nb + n] = alloy_dim_const(total);
  v = D(d, "aten.permute.default", V(v), d_int_list(d, perm, nb + 2 * n));
  v = nn_view(d, D(d, "aten.clone.default", V(v)), pooled, nb + n + 1);
  flat = D(d, "aten.permute.default", V(flat), d_int_list(d, fperm, 2 * n));
  flat = nn_view(d, D(d, "aten.clone.default", V(flat)), pooled + nb, n + 1);
  flat = D(d, "aten.expand.default", V(flat), d_dim_list(d, pooled, nb + n + 1));
  alloy_value *mx[2] = {0};
  if (DN(d, "aten.max.dim", mx, 2, V(v), I(-1)) < 2) return;
  /* The kernel lets every NaN replace the running maximum, so a window's
   * last NaN wins; max.dim would give its first. */
  alloy_value *slot = D(d, "aten.arange.start_step", I(0), I(total), I(1), DT(ALLOY_I64));
  alloy_value *last_nan =
      D(d, "aten.amax.default",
        V(D(d, "aten.where.self", V(D(d, "aten.isnan.default", V(v))), V(slot), I(-1))),
        LIST(I(-1)));
  alloy_value *at = D(d, "aten.where.self", V(D(d, "aten.ge.Scalar", V(last_nan), I(0))),
                      V(last_nan), V(mx[1]));
  d_out(d, 0, mx[0]);
  d_out(d, 1,
        nn_squeeze(d, D(d, "aten.gather.default", V(flat), I(-1), V(nn_unsqueeze(d, at, -1))),
                   -1));
}

static void adaptive_max_pool2d(decomp *d) { adaptive_max_pool(d, 2); }
static void adaptive_max_pool3d(decomp *d) { adaptive_max_pool(d, 3); }

/* max_unpool: every value written at its flat index within its own
 * (sample, channel) plane of an output of zeros. */
static void max_unpool(decomp *d, int n) {
  alloy_value *x = d_tensor(d, 0), *ix = d_tensor(d, 1);
  alloy_dim os[3];
  if (d_dims(d, 2, os, n) != n) return d_decline(d, "output_size needs %d values", n);
  int r = d_rank(x), nb = r - n;
  const alloy_dim *s = d_shape(x);
  alloy_symtab *st = d_symtab(d);
  alloy_dim shape[ALLOY_MAX_RANK], plane = nn_prod(d, os, n), planes = nn_prod(d, s, nb);
  memcpy(shape, s, sizeof *shape * (size_t)nb);
  memcpy(shape + nb, os, sizeof *os * (size_t)n);
  alloy_dim total = alloy_dim_mul(st, planes, plane), one = alloy_dim_const(1),
            all = nn_prod(d, s, r);
  alloy_dim pshape[ALLOY_MAX_RANK];
  memcpy(pshape, s, sizeof *pshape * (size_t)nb);
  for (int i = nb; i < r; i++) pshape[i] = one;
  alloy_value *base = D(d, "aten.arange.start_step", I(0), SYM(planes), I(1), DT(ALLOY_I64));
  base = nn_view(d, D(d, "aten.mul.Tensor", V(base), SYM(plane)), pshape, r);
  alloy_value *at = nn_reshape(d, D(d, "aten.add.Tensor", V(ix), V(base)), &all, 1);
  alloy_value *zeros = D(d, "aten.full.default", d_dim_list(d, &total, 1), I(0), DT(d_dtype(x)));
  alloy_value *y = D(d, "aten.index_put.default", V(zeros), d_value_list(d, &at, 1),
                     V(nn_reshape(d, x, &all, 1)), B(false));
  d_out(d, 0, nn_view(d, y, shape, r));
}

static void max_unpool2d(decomp *d) { max_unpool(d, 2); }
static void max_unpool3d(decomp *d) { max_unpool(d, 3); }

/* im2col: every kernel-sized block of the padded input as one column,
 * [N, C, H, W] -> [N, C * kh * kw, blocks]; the rows of the blocks are
 * picked along H, their columns along W, then laid out per channel and
 * kernel position. */
static void im2col(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  int64_t k[2], dil[2], pad[2], st[2];
  if (d_ints(d, 1, k, 2) != 2 || d_ints(d, 2, dil, 2) != 2 || d_ints(d, 3, pad, 2) != 2 ||
      d_ints(d, 4, st, 2) != 2)
    return d_decline(d, "kernel_size, dilation, padding and stride need 2 values each");
  bool batched = d_rank(x) == 4;
  if (!batched) x = nn_unsqueeze(d, x, 0);
  if (!x) return;
  const alloy_dim *s = d_shape(x);
  if (!alloy_dim_is_const(s[2]) || !alloy_dim_is_const(s[3]))
    return d_decline(d, "symbolic spatial sizes");
  int64_t in[2] = {s[2].value, s[3].value}, nblk[2];
  alloy_value *at[2];
  for (int i = 0; i < 2; i++) {
    int64_t span = in[i] + 2 * pad[i] - dil[i] * (k[i] - 1);
    nblk[i] = (span - 1) / st[i] + 1;
    if (span <= 0 || nblk[i] <= 0) return d_decline(d, "no blocks fit");
    /* [k, blocks]: block start plus kernel offset */
    alloy_value *starts = nn_unsqueeze(
        d, D(d, "aten.arange.start_step", I(0), I(nblk[i] * st[i]), I(st[i]), DT(ALLOY_I64)), 0);
    alloy_value *offs = nn_unsqueeze(
        d, D(d, "aten.arange.start_step", I(0), I(k[i] * dil[i]), I(dil[i]), DT(ALLOY_I64)), 1);
    alloy_dim n = alloy_dim_const(k[i] * nblk[i]);
    at[i] = nn_view(d, D(d, "aten.add.Tensor", V(starts), V(offs)), &n, 1);
  }
  alloy_value *p = D(d, "aten.constant_pad_nd.default", V(x),
                     LIST(I(pad[1]), I(pad[1]), I(pad[0]), I(pad[0])), I(0));
  p = D(d, "aten.index_select.default", V(D(d, "aten.index_select.default", V(p), I(2), V(at[0]))),
        I(3), V(at[1]));
  alloy_dim six[6] = {s[0],
                      s[1],
                      alloy_dim_const(k[0]),
                      alloy_dim_const(nblk[0]),
                      alloy_dim_const(k[1]),
                      alloy_dim_const(nblk[1])};
  p = D(d, "aten.permute.default", V(nn_view(d, p, six, 6)),
        LIST(I(0), I(1), I(2), I(4), I(3), I(5)));
  alloy_dim out[3] = {s[0], alloy_dim_mul(d_symtab(d), s[1], alloy_dim_const(k[0] * k[1])),
                      alloy_dim_const(nblk[0] * nblk[1])};
  alloy_value *y = nn_view(d, D(d, "aten.clone.default", V(p)), out, 3);
  d_out(d, 0, batched ? y : nn_squeeze(d, y, 0));
}

/* embedding_bag is _embedding_bag without a padding index, and
 * _embedding_bag_forward_only the same kernel without the backward's
 * bookkeeping (the same outputs on the CPU). */
static void embedding_bag(decomp *d) {
  alloy_value *o[4] = {0}, *psw = d_tensor(d, 6);
  bool has_padding_idx = alloy_schema_num_args(alloy_op_schema(alloy_node_op(d_node(d)))) > 8;
  if (DN(d, "aten._embedding_bag.default", o, 4, V(d_tensor(d, 0)), V(d_tensor(d, 1)),
         V(d_tensor(d, 2)), B(d_bool(d, 3)), I(d_int(d, 4)), B(d_bool(d, 5)), psw ? V(psw) : NONE,
         B(d_bool(d, 7)), I(has_padding_idx ? d_int(d, 8) : -1)) < 4)
    return;
  for (int k = 0; k < 4; k++) d_out(d, k, o[k]);
}

const decomp_rule decomp_rules_nn_2[] = {
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
    {"aten.cross_entropy_loss.default", cross_entropy_loss, DECOMP_TO_CORE},
    {"aten.multi_margin_loss.default", multi_margin_loss, DECOMP_TO_CORE},
    {"aten.multilabel_margin_loss_forward.default", multilabel_margin_loss_forward, DECOMP_TO_CORE},
    {"aten.pad.default", pad, DECOMP_TO_CORE},
    {"aten.replication_pad1d.default", replication_pad1d, DECOMP_TO_CORE},
    {"aten.pixel_shuffle.default", pixel_shuffle, DECOMP_TO_CORE},
    {"aten.pixel_unshuffle.default", pixel_unshuffle, DECOMP_TO_CORE},
    {"aten.channel_shuffle.default", channel_shuffle, DECOMP_TO_CORE},
    {"aten.linalg_cross.default", linalg_cross, DECOMP_TO_CORE},
    {"aten.upsample_nearest1d.default", upsample_nearest1d, DECOMP_TO_CORE},
    {"aten.upsample_nearest2d.default", upsample_nearest2d, DECOMP_TO_CORE},
    {"aten._upsample_nearest_exact1d.default", upsample_nearest_exact1d, DECOMP_TO_CORE},
    {"aten.upsample_linear1d.default", upsample_linear1d, DECOMP_TO_CORE},
    {"aten.upsample_bilinear2d.default", upsample_bilinear2d, DECOMP_TO_CORE},
    {"aten.upsample_bicubic2d.default", upsample_bicubic2d, DECOMP_TO_CORE},
    {"aten._upsample_bilinear2d_aa.default", upsample_bilinear2d_aa, DECOMP_TO_CORE},
    {"aten.adaptive_max_pool2d.default", adaptive_max_pool2d, DECOMP_TO_CORE},
    {"aten.adaptive_max_pool3d.default", adaptive_max_pool3d, DECOMP_TO_CORE},
    {"aten.max_unpool2d.default", max_unpool2d, DECOMP_TO_CORE},
    {"aten.max_unpool3d.default", max_unpool3d, DECOMP_TO_CORE},
    {"aten.im2col.default", im2col, DECOMP_TO_CORE},
    {"aten.embedding_bag.default", embedding_bag, DECOMP_TO_CORE},
    {"aten._embedding_bag_forward_only.default", embedding_bag, DECOMP_TO_CORE},
    {"aten.upsample_trilinear3d.default", upsample_trilinear3d, DECOMP_TO_CORE},
    {NULL, NULL, 0},
};
