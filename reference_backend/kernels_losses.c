/*
 * reference_backend/kernels_losses.c: reference kernels, nn family: the
 * losses (binary cross entropy with and without logits, nll, mse, huber,
 * smooth l1, soft margin, multi margin, multilabel margin).
 *
 * Inputs are read into dense double arrays in row-major order (whatever
 * their strides; kernels_nn.h) and results written back through the
 * output's strides. A loss is computed as PyTorch does: the elementwise
 * loss is a tensor of the input's dtype (each value rounded to it), which
 * the reduction then sums or averages.
 *
 * Accumulation order: every sum runs sequentially in index order in
 * double, except nll's, which follows the CPU kernel's cascade of partial
 * sums.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference_backend/kernels_nn.h"

enum { RED_NONE, RED_MEAN, RED_SUM };

static int64_t reduction_of(const alloy_kernel_call *c) {
  int64_t r = RED_MEAN;
  ref_int(c, "reduction", &r);
  return r;
}

/* Writes the elementwise losses v (n of them, already rounded to out's
 * dtype) as out: as they are, or their mean or sum. */
static void reduce_loss(const alloy_kernel_tensor *out, const double *v, int64_t n, int64_t red) {
  if (red == RED_NONE) {
    store_all(out, v);
    return;
  }
  double s = 0.0;
  for (int64_t i = 0; i < n; i++) s += v[i];
  ref_store_f(out->data, out->dtype, 0, red == RED_MEAN ? s / (double)n : s);
}

/* The elementwise part of a loss: one value from the operands' values at an
 * element (given[i]: operand i is there), with the op's scalar argument. */
typedef double (*loss_fn)(const double *v, const bool *given, double arg, alloy_dtype t);

/* Evaluates a loss over the broadcast of up to four named operands (the
 * first two required) and reduces it. */
static int pointwise_loss(const alloy_kernel_call *c, const char *const *names, int nnames,
                          loss_fn fn, double arg) {
  const alloy_kernel_tensor *out = &c->outputs[0], *in[4] = {NULL};
  for (int i = 0; i < nnames; i++) in[i] = ref_tensor(c, names[i]);
  if (!in[0] || !in[1]) return ref_fail(c, "missing tensor argument");
  /* the broadcast shape of the operands given */
  int64_t sizes[MAX_RANK];
  int rank = 0;
  for (int i = 0; i < nnames; i++)
    if (in[i] && in[i]->rank > rank) rank = in[i]->rank;
  for (int d = 0; d < rank; d++) {
    sizes[d] = 1;
    for (int i = 0; i < nnames; i++) {
      int di = d - (rank - (in[i] ? in[i]->rank : 0));
      if (in[i] && di >= 0 && in[i]->sizes[di] != 1) sizes[d] = in[i]->sizes[di];
    }
  }
  /* up to four operands: more than ref_iter carries, so each operand's
   * broadcast strides are walked here */
  int64_t bst[4][MAX_RANK] = {{0}}, idx[MAX_RANK] = {0}, total = 1;
  for (int d = 0; d < rank; d++) total *= sizes[d];
  for (int i = 0; i < nnames; i++)
    for (int d = 0; in[i] && d < rank; d++) {
      int di = d - (rank - in[i]->rank);
      bst[i][d] = di < 0 || in[i]->sizes[di] == 1 ? 0 : in[i]->strides[di];
    }
  bool given[4];
  for (int i = 0; i < nnames; i++) given[i] = in[i] != NULL;
  double *v = malloc(sizeof(double) * (size_t)max64(1, total));
  if (!v) return ref_fail(c, "out of memory");
  for (int64_t k = 0; k < total; k++) {
    double x[4] = {0, 0, 0, 0};
    for (int i = 0; i < nnames; i++) {
      if (!given[i]) continue;
      int64_t off = 0;
      for (int d = 0; d < rank; d++) off += idx[d] * bst[i][d];
      x[i] = ref_load_f(in[i]->data, in[i]->dtype, off);
    }
    v[k] = round_to(out->dtype, fn(x, given, arg, out->dtype));
    for (int d = rank - 1; d >= 0 && ++idx[d] == sizes[d]; d--) idx[d] = 0;
  }
  reduce_loss(out, v, total, reduction_of(c));
  free(v);
  return 0;
}

/* mse: the difference is rounded to the dtype, then squared (PyTorch's
 * kernel computes diff = a - b, diff * diff in the dtype) */
static double mse_f(const double *v, const bool *given, double arg, alloy_dtype t) {
  (void)given;
  (void)arg;
  double d = round_to(t, v[0] - v[1]);
  return d * d;
}
/* huber: PyTorch's kernel computes in the dtype itself (delta converted
 * to it), rounding each step; so does its decomposition. */
static double huber_f(const double *v, const bool *given, double delta, alloy_dtype t) {
  (void)given;
  double d = round_to(t, delta), z = fabs(round_to(t, v[0] - v[1]));
  return z < d ? round_to(t, round_to(t, 0.5 * z) * z)
               : round_to(t, d * round_to(t, z - round_to(t, 0.5 * d)));
}
static double smooth_l1_f(const double *v, const bool *given, double beta, alloy_dtype t) {
  (void)given;
  (void)t;
  double z = fabs(v[0] - v[1]);
  if (beta == 0.0) return z;
  return z < beta ? 0.5 * z * z / beta : z - 0.5 * beta;
}
/* log1p(exp(-x * y)), each step a tensor of the dtype (exp may overflow it) */
static double soft_margin_f(const double *v, const bool *given, double arg, alloy_dtype t) {
  (void)given;
  (void)arg;
  return log1p(round_to(t, exp(round_to(t, -v[1] * v[0]))));
}
/* PyTorch clamps the logs at -100; the weight multiplies the rounded loss */
static double bce_f(const double *v, const bool *given, double arg, alloy_dtype t) {
  (void)arg;
  double x = v[0], y = v[1];
  double l = (y - 1.0) * fmax(log1p(-x), -100.0) - y * fmax(log(x), -100.0);
  return given[2] ? round_to(t, l) * v[2] : l;
}
/* (1 - t) x - (1 + (pos_weight - 1) t) log_sigmoid(x), times weight.
 * PyTorch's composite runs one tensor op per step, each rounded to the
 * dtype: (1 - t) x overflows float16 where the whole loss would not. */
static double bce_logits_f(const double *v, const bool *given, double arg, alloy_dtype t) {
  (void)arg;
  double x = v[0], y = v[1];
  double log_sig = round_to(t, fmin(x, 0.0) - log1p(exp(-fabs(x))));
  if (given[3]) {
    double lw = round_to(t, round_to(t, round_to(t, v[3] - 1.0) * y) + 1.0);
    log_sig = round_to(t, log_sig * lw);
  }
  double l = round_to(t, round_to(t, round_to(t, 1.0 - y) * x) - log_sig);
  return given[2] ? l * v[2] : l;
}

static const char *const xy[] = {"self", "target"};

static int k_mse_loss(const alloy_kernel_call *c) { return pointwise_loss(c, xy, 2, mse_f, 0.0); }
static int k_huber_loss(const alloy_kernel_call *c) {
  double delta = 1.0;
  ref_float(c, "delta", &delta);
  return pointwise_loss(c, xy, 2, huber_f, delta);
}
static int k_smooth_l1_loss(const alloy_kernel_call *c) {
  double beta = 1.0;
  ref_float(c, "beta", &beta);
  return pointwise_loss(c, xy, 2, smooth_l1_f, beta);
}
static int k_soft_margin_loss(const alloy_kernel_call *c) {
  return pointwise_loss(c, xy, 2, soft_margin_f, 0.0);
}
/* True when every element of t lies in [0, 1] (NaN does not). */
static bool all_in_unit(const alloy_kernel_tensor *t) {
  ref_iter it;
  ref_iter_init(&it, t, NULL, 0);
  while (ref_iter_next(&it)) {
    double v = ref_load_f(t->data, t->dtype, it.offset[0]);
    if (!(v >= 0 && v <= 1)) return false;
  }
  return true;
}

/* PyTorch's kernel checks every probability it reads and raises on one
 * outside [0, 1] or NaN, for the input and the target alike. */
static int k_bce(const alloy_kernel_call *c) {
  static const char *const names[] = {"self", "target", "weight"};
  const alloy_kernel_tensor *x = ref_tensor(c, "self"), *y = ref_tensor(c, "target");
  if (x && !all_in_unit(x)) return ref_fail(c, "all elements of input should be between 0 and 1");
  if (y && !all_in_unit(y)) return ref_fail(c, "all elements of target should be between 0 and 1");
  return pointwise_loss(c, names, 3, bce_f, 0.0);
}
static int k_bce_with_logits(const alloy_kernel_call *c) {
  static const char *const names[] = {"self", "target", "weight", "pos_weight"};
  return pointwise_loss(c, names, 4, bce_logits_f, 0.0);
}

/* nll_loss_forward(self, target, weight, reduction, ignore_index) and
 * nll_loss2d_forward -> (output, total_weight): -weight[t] * self[.., t, ..]
 * for each target t other than ignore_index. Classes are dim 1 (dim 0 for
 * an unbatched 1-d input), the target has the other dims.
 *
 * Reduction none of a batch keeps the elements, total_weight 0. Otherwise
 * (an unbatched input with reduction none too: one element, unreduced) the
 * kernel sums in self's dtype, every step rounded, with a cascade of eight
 * partial sums: after the element at linear index b (not an ignored one)
 * partial j moves into partial j + 1 while the bits of b at level j are
 * zero, the level being max(4, ceil(log2(count)) / 8) bits wide; the
 * partials are added up in order. total_weight is the weights' sum so
 * made, or the count not ignored; the mean divides by it. */
static int nll_loss(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *x = ref_tensor(c, "self"), *t = ref_tensor(c, "target"),
                            *w = ref_tensor(c, "weight"), *out = &c->outputs[0],
                            *tw = &c->outputs[1];
  if (!x || !t) return ref_fail(c, "missing tensor argument");
  int64_t red = reduction_of(c), ignore = -100;
  ref_int(c, "ignore_index", &ignore);
  int cdim = x->rank == 1 ? 0 : 1;
  int64_t C = x->sizes[cdim], n = ref_numel(t);
  alloy_dtype dt = out->dtype;
  bool keep = red == RED_NONE && x->rank > 1;
  double *v = keep ? malloc(sizeof(double) * (size_t)max64(1, n)) : NULL;
  if (keep && !v) return ref_fail(c, "out of memory");
  int64_t level = 0, ignored = 0;
  while (level < 63 && ((int64_t)1 << level) < n) level++;
  level = max64(4, level / 8);
  double loss[8] = {0}, wsum[8] = {0};
  ref_iter it;
  ref_iter_init(&it, t, NULL, 0);
  for (int64_t k = 0; ref_iter_next(&it); k++) {
    int64_t cls = ref_load_i(t->data, t->dtype, it.offset[0]);
    if (cls == ignore) {
      if (keep) v[k] = 0.0;
      ignored++;
      continue;
    }
    if (cls < 0 || cls >= C) {
      free(v);
      return ref_fail(c, "nll_loss: target %lld (element %lld of target) is out of bounds for %lld "
                      "classes", (long long)cls, (long long)k, (long long)C);
    }
    /* self's offset: target's index with the class inserted at cdim */
    int64_t off = cls * x->strides[cdim];
    for (int d = 0, xd = 0; d < t->rank; d++, xd++) {
      if (xd == cdim) xd++;
      off += it.index[d] * x->strides[xd];
    }
    double xv = ref_load_f(x->data, x->dtype, off);
    double wt = w ? ref_load_f(w->data, w->dtype, cls * w->strides[0]) : 1.0;
    if (keep) {
      v[k] = round_to(dt, -xv * wt);
      continue;
    }
    loss[0] = round_to(dt, loss[0] - (w ? round_to(dt, xv * wt) : xv));
    if (w) wsum[0] = round_to(dt, wsum[0] + wt);
    for (int j = 0; j + 1 < 8 && !(k & (((int64_t)1 << level) - 1) << (j * level)); j++) {
      loss[j + 1] = round_to(dt, loss[j + 1] + loss[j]);
      wsum[j + 1] = round_to(dt, wsum[j + 1] + wsum[j]);
      loss[j] = wsum[j] = 0.0;
    }
  }
  if (keep) {
    store_all(out, v);
    ref_store_f(tw->data, tw->dtype, 0, 0.0);
    free(v);
    return 0;
  }
  double total = w ? 0.0 : round_to(dt, (double)(n - ignored)), s = 0.0;
  for (int j = 0; j < 8; j++) {
    s = round_to(dt, s + loss[j]);
    if (w) total = round_to(dt, total + wsum[j]);
  }
  if (n == 0) s = red == RED_MEAN ? NAN : 0.0, total = 0.0;
  else if (red == RED_MEAN) s = round_to(dt, s / total);
  ref_store_f(out->data, dt, 0, s);
  ref_store_f(tw->data, tw->dtype, 0, total);
  return 0;
}

/* multi_margin_loss(self, target, p, margin, weight, reduction): for each
 * row x with target y, the sum over j != y of max(0, margin - x[y] +
 * x[j])^p (times weight[y]) over the number of classes; a term is added
 * only where z > 0, so NaN ones are skipped. The rows' mean or sum is
 * taken in double (the kernel's accumulate type). */
static int k_multi_margin_loss(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *x = ref_tensor(c, "self"), *t = ref_tensor(c, "target"),
                            *w = ref_tensor(c, "weight"), *out = &c->outputs[0];
  if (!x || !t) return ref_fail(c, "missing tensor argument");
  double p = 1.0, margin = 1.0;
  ref_float(c, "p", &p);
  ref_float(c, "margin", &margin);
  int64_t red = reduction_of(c);
  int64_t rows = x->rank == 2 ? x->sizes[0] : 1, C = x->rank == 0 ? 1 : x->sizes[x->rank - 1];
  int64_t rs = x->rank == 2 ? x->strides[0] : 0, cs = x->rank == 0 ? 0 : x->strides[x->rank - 1];
  double *v = malloc(sizeof(double) * (size_t)max64(1, rows));
  if (!v) return ref_fail(c, "out of memory");
  for (int64_t r = 0; r < rows; r++) {
    int64_t y = ref_load_i(t->data, t->dtype, t->rank ? r * t->strides[0] : 0);
    if (y < 0 || y >= C) {
      free(v);
      return ref_fail(c, "multi_margin_loss: target %lld (row %lld) is out of bounds for %lld "
                      "classes", (long long)y, (long long)r, (long long)C);
    }
    /* in the dtype, each step rounded, as the kernel (float32, float64) */
    alloy_dtype dt = out->dtype;
    double xy_ = ref_load_f(x->data, x->dtype, r * rs + y * cs), s = 0.0;
    double m = round_to(dt, margin);
    for (int64_t j = 0; j < C; j++) {
      if (j == y) continue;
      double z = round_to(dt, round_to(dt, m - xy_) + ref_load_f(x->data, x->dtype, r * rs + j * cs));
      if (z > 0) {
        double h = p == 1.0 ? z : round_to(dt, z * z);
        if (w) h = round_to(dt, h * ref_load_f(w->data, w->dtype, y * w->strides[0]));
        s = round_to(dt, s + h);
      }
    }
    v[r] = round_to(dt, s / (double)C);
  }
  reduce_loss(out, v, rows, red);
  free(v);
  return 0;
}

/* multilabel_margin_loss_forward(self, target, reduction) -> (output,
 * is_target): the target row lists class indices up to the first -1; for
 * each listed class y and each class j not listed, max(0, 1 - x[y] + x[j]),
 * summed, over the number of classes. is_target marks the listed classes. */
static int k_multilabel_margin_loss(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *x = ref_tensor(c, "self"), *t = ref_tensor(c, "target"),
                            *out = &c->outputs[0], *ist = &c->outputs[1];
  if (!x || !t) return ref_fail(c, "missing tensor argument");
  int64_t red = reduction_of(c);
  int64_t rows = x->rank == 2 ? x->sizes[0] : 1, C = x->rank == 0 ? 1 : x->sizes[x->rank - 1];
  int64_t rs = x->rank == 2 ? x->strides[0] : 0, cs = x->rank == 0 ? 0 : x->strides[x->rank - 1];
  int64_t trs = t->rank == 2 ? t->strides[0] : 0, tcs = t->rank == 0 ? 0 : t->strides[t->rank - 1];
  int64_t irs = ist->rank == 2 ? ist->strides[0] : 0, ics = ist->rank == 0 ? 0 : ist->strides[ist->rank - 1];
  double *v = malloc(sizeof(double) * (size_t)max64(1, rows));
  bool *is = malloc(sizeof(bool) * (size_t)max64(1, C));
  int err = !v || !is ? ref_fail(c, "out of memory") : 0;
  for (int64_t r = 0; !err && r < rows; r++) {
    memset(is, 0, sizeof(bool) * (size_t)C);
    int64_t nl = 0;
    for (; nl < C; nl++) {
      int64_t y = ref_load_i(t->data, t->dtype, r * trs + nl * tcs);
      if (y < 0) break;
      if (y >= C) {
        err = ref_fail(c, "multilabel_margin_loss: target %lld (row %lld, label %lld) is out of "
                       "bounds for %lld classes", (long long)y, (long long)r, (long long)nl,
                       (long long)C);
        break;
      }
      is[y] = true;
    }
    double s = 0.0;
    for (int64_t k = 0; !err && k < nl; k++) {
      int64_t y = ref_load_i(t->data, t->dtype, r * trs + k * tcs);
      double xy_ = ref_load_f(x->data, x->dtype, r * rs + y * cs);
      for (int64_t j = 0; j < C; j++) {
        if (is[j]) continue;
        double z = 1.0 - xy_ + ref_load_f(x->data, x->dtype, r * rs + j * cs);
        if (z > 0) s += z;
      }
    }
    v[r] = round_to(out->dtype, s / (double)C);
    for (int64_t j = 0; j < C; j++) ref_store_f(ist->data, ist->dtype, r * irs + j * ics, is[j]);
  }
  if (!err) reduce_loss(out, v, rows, red);
  free(v);
  free(is);
  return err;
}

const alloy_kernel ref_kernels_losses[] = {
    REF_KERNEL("aten.mse_loss.default", k_mse_loss),
    REF_KERNEL("aten.huber_loss.default", k_huber_loss),
    REF_KERNEL("aten.smooth_l1_loss.default", k_smooth_l1_loss),
    REF_KERNEL("aten.soft_margin_loss.default", k_soft_margin_loss),
    REF_KERNEL("aten.binary_cross_entropy.default", k_bce),
    REF_KERNEL("aten.binary_cross_entropy_with_logits.default", k_bce_with_logits),
    REF_KERNEL("aten.nll_loss_forward.default", nll_loss),
    REF_KERNEL("aten.nll_loss2d_forward.default", nll_loss),
    REF_KERNEL("aten.multi_margin_loss.default", k_multi_margin_loss),
    REF_KERNEL("aten.multilabel_margin_loss_forward.default", k_multilabel_margin_loss),
    {NULL, NULL, NULL, NULL},
};
