/*
 * reference_backend/kernels_nn_3.c: reference kernels, nn family, part 3:
 * normalization (layer, group and batch norm, forward and backward) and
 * the losses (binary cross entropy with and without logits, nll, mse,
 * huber, smooth l1, soft margin, multi margin, multilabel margin).
 *
 * Inputs are read into dense double arrays in row-major order (whatever
 * their strides) and results written back through the output's strides;
 * statistics are computed in double and rounded once to the dtype of the
 * tensor that holds them. A loss is computed as PyTorch does: the
 * elementwise loss is a tensor of the input's dtype (each value rounded to
 * it), which the reduction then sums or averages.
 *
 * Accumulation order: every sum runs sequentially in index order in double
 * (means and variances in two passes: the mean, then the squared
 * deviations), except where a kernel follows PyTorch's own order and
 * opmath (the batch norm's statistics, the layer and group norm
 * backwards), which the infinities and overflows of the samples show.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "reference_backend/kernels_nn.h"

/* ---- dense double arrays ------------------------------------------------*/

/* t's elements in row-major order as doubles (malloc'd; NULL when out of
 * memory). A NULL tensor gives NULL. */
static double *load_all(const alloy_kernel_tensor *t) {
  if (!t) return NULL;
  double *v = malloc(sizeof(double) * (size_t)max64(1, ref_numel(t)));
  if (!v) return NULL;
  ref_iter it;
  ref_iter_init(&it, t, NULL, 0);
  for (int64_t i = 0; ref_iter_next(&it); i++) v[i] = ref_load_f(t->data, t->dtype, it.offset[0]);
  return v;
}

static void store_all(const alloy_kernel_tensor *t, const double *v) {
  ref_iter it;
  ref_iter_init(&it, t, NULL, 0);
  for (int64_t i = 0; ref_iter_next(&it); i++) ref_store_f(t->data, t->dtype, it.offset[0], v[i]);
}

static void zero_fill(const alloy_kernel_tensor *t) {
  ref_iter it;
  ref_iter_init(&it, t, NULL, 0);
  while (ref_iter_next(&it)) ref_store_i(t->data, t->dtype, it.offset[0], 0);
}

/* The bool[3] output_mask (all true when absent). */
static void output_mask(const alloy_kernel_call *c, bool *mask) {
  int64_t m[3];
  int n = ref_ints(c, "output_mask", m, 3);
  for (int i = 0; i < 3; i++) mask[i] = i >= n || m[i] != 0;
}

/* ---- normalization ------------------------------------------------------*/

/* Mean and 1/sqrt(max(var, 0) + eps) of n values (biased variance). The
 * max is std::max(var, 0) as PyTorch's kernels write it: a NaN variance (an
 * infinite value in the group) stays NaN, where fmax would give 0. With
 * single (float32, float16 and bfloat16 inputs) the squared deviations
 * add up in float32 as PyTorch's Welford loop does: past FLT_MAX they are
 * inf, so the variance is inf and rstd 0. */
static void moments(const double *x, int64_t n, int64_t stride, double eps, bool single,
                    double *mean, double *rstd) {
  double s = 0.0, q = 0.0;
  for (int64_t i = 0; i < n; i++) s += x[i * stride];
  double m = n ? s / (double)n : NAN;
  for (int64_t i = 0; i < n; i++) q += (x[i * stride] - m) * (x[i * stride] - m);
  if (single && q > FLT_MAX) q = INFINITY;
  double var = n ? q / (double)n : NAN;
  *mean = m;
  *rstd = 1.0 / sqrt((var < 0.0 ? 0.0 : var) + eps);
}

/* native_layer_norm(input, normalized_shape, weight, bias, eps) -> (out,
 * mean, rstd) and layer_norm(...) -> out: each row of the last
 * len(normalized_shape) dims normalized, then scaled and shifted. */
static int layer_norm(const alloy_kernel_call *c, bool stats) {
  const alloy_kernel_tensor *x = ref_tensor(c, "input"), *w = ref_tensor(c, "weight"),
                            *b = ref_tensor(c, "bias");
  if (!x) return ref_fail(c, "missing tensor argument");
  int64_t ns[MAX_RANK];
  int k = ref_ints(c, "normalized_shape", ns, MAX_RANK);
  double eps = 1e-5;
  ref_float(c, "eps", &eps);
  int64_t N = 1, M = 1;
  for (int d = x->rank - k; d < x->rank; d++) N *= x->sizes[d];
  for (int d = 0; d < x->rank - k; d++) M *= x->sizes[d];
  double *X = load_all(x), *W = load_all(w), *B = load_all(b);
  double *mean = malloc(sizeof(double) * (size_t)max64(1, M)), *rstd = malloc(sizeof(double) * (size_t)max64(1, M));
  int err = !X || (w && !W) || (b && !B) || !mean || !rstd;
  for (int64_t r = 0; !err && r < M; r++) {
    double *row = X + r * N;
    moments(row, N, 1, eps, x->dtype != ALLOY_F64, &mean[r], &rstd[r]);
    for (int64_t j = 0; j < N; j++)
      row[j] = (row[j] - mean[r]) * rstd[r] * (W ? W[j] : 1.0) + (B ? B[j] : 0.0);
  }
  if (!err) {
    store_all(&c->outputs[0], X);
    if (stats && c->num_outputs >= 3) {
      store_all(&c->outputs[1], mean);
      store_all(&c->outputs[2], rstd);
    }
  }
  free(X);
  free(W);
  free(B);
  free(mean);
  free(rstd);
  return err ? ref_fail(c, "out of memory") : 0;
}

static int k_native_layer_norm(const alloy_kernel_call *c) { return layer_norm(c, true); }
static int k_layer_norm(const alloy_kernel_call *c) { return layer_norm(c, false); }

/* The end of a norm's backward: each of (grad_input, grad_weight,
 * grad_bias) that output_mask asks for is stored, the others (and the
 * grad_weight of a norm without weight, has_weight false) are zeros; then
 * every buffer of the computation goes. */
static int norm_backward_done(const alloy_kernel_call *c, int err, const bool mask[3],
                              bool has_weight, const double *const grads[3], double **bufs,
                              int n) {
  if (!err)
    for (int k = 0; k < 3; k++) {
      if (mask[k] && (k != 1 || has_weight)) store_all(&c->outputs[k], grads[k]);
      else zero_fill(&c->outputs[k]);
    }
  for (int i = 0; i < n; i++) free(bufs[i]);
  return err ? ref_fail(c, "out of memory") : 0;
}

/* native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd,
 * weight, bias, output_mask) -> (grad_input, grad_weight, grad_bias). In
 * PyTorch's CPU kernel's form (one thread), which decides where
 * infinities become NaN: per row, in float (op) for reduced dtypes,
 * ds = sum (dY X) w, db = sum dY w, and dX = rstd * dY * w + b * X + c with
 * b = (db * mean - ds) * rstd^3 / N, c = -b * mean - db * rstd / N. The
 * weight and bias gradients add dY * (X - mean) * rstd and dY row by row
 * into a buffer of the input's dtype (each sum rounded to it). */
static int k_native_layer_norm_backward(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *go = ref_tensor(c, "grad_out"), *x = ref_tensor(c, "input"),
                            *w = ref_tensor(c, "weight"), *tm = ref_tensor(c, "mean"),
                            *tr = ref_tensor(c, "rstd");
  if (!go || !x || !tm || !tr) return ref_fail(c, "missing tensor argument");
  bool mask[3];
  output_mask(c, mask);
  int64_t ns[MAX_RANK];
  int k = ref_ints(c, "normalized_shape", ns, MAX_RANK);
  int64_t N = 1;
  for (int d = x->rank - k; d < x->rank; d++) N *= x->sizes[d];
  int64_t M = 1;
  for (int d = 0; d < x->rank - k; d++) M *= x->sizes[d];
  alloy_dtype t = x->dtype, op = t == ALLOY_F64 ? ALLOY_F64 : ALLOY_F32;
  double *X = load_all(x), *G = load_all(go), *W = load_all(w), *mean = load_all(tm),
         *rstd = load_all(tr);
  double *gw = calloc((size_t)max64(1, N), sizeof(double)), *gb = calloc((size_t)max64(1, N), sizeof(double));
  int err = !X || !G || (w && !W) || !mean || !rstd || !gw || !gb;
  double scale = round_to(op, 1.0 / (double)max64(1, N));
  for (int64_t r = 0; !err && r < M; r++) {
    double *xr = X + r * N, *gr = G + r * N, m = mean[r], a = rstd[r], ds = 0.0, db = 0.0;
    for (int64_t j = 0; j < N; j++) {
      double wj = W ? W[j] : 1.0;
      ds = round_to(op, ds + round_to(op, round_to(op, gr[j] * xr[j]) * wj)); /* dY * X first */
      db = round_to(op, db + round_to(op, gr[j] * wj));
      gw[j] = round_to(t, gw[j] + round_to(op, round_to(op, gr[j] * round_to(op, xr[j] - m)) * a));
      gb[j] = round_to(t, gb[j] + gr[j]);
    }
    double b = round_to(op, round_to(op, db * m) - ds);
    b = round_to(op, round_to(op, round_to(op, round_to(op, b * a) * a) * a) * scale);
    double cc = round_to(op, round_to(op, -b * m) - round_to(op, round_to(op, db * a) * scale));
    for (int64_t j = 0; j < N; j++) {
      double d1 = round_to(op, round_to(op, a * gr[j]) * (W ? W[j] : 1.0));
      xr[j] = round_to(op, round_to(op, d1 + round_to(op, b * xr[j])) + cc); /* X holds dx */
    }
  }
  double *bufs[] = {X, G, W, mean, rstd, gw, gb};
  return norm_backward_done(c, err, mask, w != NULL, (const double *const[3]){X, gw, gb}, bufs, 7);
}

/* The group norm's layout: N items of C channels of HxW values each,
 * grouped G channels... into `group` groups. */
typedef struct gn_dims {
  int64_t N, C, HxW, G, D; /* D: channels per group */
} gn_dims;

static int gn_dims_of(const alloy_kernel_call *c, gn_dims *g) {
  if (!ref_int(c, "N", &g->N) || !ref_int(c, "C", &g->C) || !ref_int(c, "HxW", &g->HxW) ||
      !ref_int(c, "group", &g->G) || g->G <= 0)
    return 1;
  g->D = g->C / g->G;
  return 0;
}

/* native_group_norm(input, weight, bias, N, C, HxW, group, eps) -> (out,
 * mean (N, group), rstd (N, group)). */
static int k_native_group_norm(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *x = ref_tensor(c, "input"), *w = ref_tensor(c, "weight"),
                            *b = ref_tensor(c, "bias");
  gn_dims d;
  if (!x || gn_dims_of(c, &d)) return ref_fail(c, "missing tensor argument");
  double eps = 1e-5;
  ref_float(c, "eps", &eps);
  double *X = load_all(x), *W = load_all(w), *B = load_all(b);
  double *mean = malloc(sizeof(double) * (size_t)max64(1, d.N * d.G)),
         *rstd = malloc(sizeof(double) * (size_t)max64(1, d.N * d.G));
  int err = !X || (w && !W) || (b && !B) || !mean || !rstd;
  int64_t span = d.D * d.HxW;
  for (int64_t n = 0; !err && n < d.N; n++)
    for (int64_t g = 0; g < d.G; g++) {
      int64_t ng = n * d.G + g;
      double *p = X + ng * span;
      moments(p, span, 1, eps, x->dtype != ALLOY_F64, &mean[ng], &rstd[ng]);
      for (int64_t ch = 0; ch < d.D; ch++) {
        int64_t cc = g * d.D + ch;
        for (int64_t i = 0; i < d.HxW; i++) {
          double *v = p + ch * d.HxW + i;
          *v = (*v - mean[ng]) * rstd[ng] * (W ? W[cc] : 1.0) + (B ? B[cc] : 0.0);
        }
      }
    }
  if (!err) {
    store_all(&c->outputs[0], X);
    store_all(&c->outputs[1], mean);
    store_all(&c->outputs[2], rstd);
  }
  free(X);
  free(W);
  free(B);
  free(mean);
  free(rstd);
  return err ? ref_fail(c, "out of memory") : 0;
}

/* native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C,
 * HxW, group, output_mask) -> (grad_input, grad_weight, grad_bias). In
 * PyTorch's CPU kernel's form, which decides where infinities become NaN:
 * per (sample, channel) ds = sum dY * X and db = sum dY; per group
 * dX = rstd * w * dY + c2 * X + c3, with c2 = (sum db w * mean - sum ds w)
 * * rstd^3 / n and c3 = -c2 * mean - sum db w * rstd / n; grad_weight sums
 * (ds - db * mean) * rstd over the samples, grad_bias db. Reduced-precision
 * inputs are computed in float (op), as its accumulators are. */
static int k_native_group_norm_backward(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *go = ref_tensor(c, "grad_out"), *x = ref_tensor(c, "input"),
                            *tm = ref_tensor(c, "mean"), *tr = ref_tensor(c, "rstd"),
                            *w = ref_tensor(c, "weight");
  gn_dims d;
  if (!go || !x || !tm || !tr || gn_dims_of(c, &d)) return ref_fail(c, "missing tensor argument");
  bool mask[3];
  output_mask(c, mask);
  alloy_dtype op = x->dtype == ALLOY_F64 ? ALLOY_F64 : ALLOY_F32;
  double *X = load_all(x), *G = load_all(go), *W = load_all(w), *mean = load_all(tm),
         *rstd = load_all(tr);
  int64_t span = d.D * d.HxW, nc = max64(1, d.N * d.C);
  double *gw = calloc((size_t)max64(1, d.C), sizeof(double)), *gb = calloc((size_t)max64(1, d.C), sizeof(double));
  double *ds = calloc((size_t)nc, sizeof(double)), *db = calloc((size_t)nc, sizeof(double));
  int err = !X || !G || (w && !W) || !mean || !rstd || !gw || !gb || !ds || !db;
  for (int64_t i = 0; !err && i < d.N * d.C; i++)
    for (int64_t j = 0; j < d.HxW; j++) {
      double gv = G[i * d.HxW + j];
      ds[i] = round_to(op, ds[i] + round_to(op, gv * X[i * d.HxW + j]));
      db[i] = round_to(op, db[i] + gv);
    }
  double s = round_to(op, 1.0 / (double)max64(1, span));
  for (int64_t n = 0; !err && n < d.N; n++)
    for (int64_t gi = 0; gi < d.G; gi++) {
      int64_t ng = n * d.G + gi;
      double m = mean[ng], r = rstd[ng], dsv = 0.0, dbv = 0.0;
      for (int64_t ch = 0; ch < d.D; ch++) {
        int64_t cc = gi * d.D + ch, i = n * d.C + cc;
        double wc = W ? W[cc] : 1.0;
        dsv = round_to(op, dsv + round_to(op, ds[i] * wc));
        dbv = round_to(op, dbv + round_to(op, db[i] * wc));
      }
      double c2 = round_to(op, round_to(op, round_to(op, dbv * m) - dsv) * r);
      c2 = round_to(op, round_to(op, round_to(op, c2 * r) * r) * s);
      double c3 = round_to(op, round_to(op, -c2 * m) - round_to(op, round_to(op, dbv * r) * s));
      for (int64_t ch = 0; ch < d.D; ch++) {
        int64_t cc = gi * d.D + ch;
        double c1 = round_to(op, r * (W ? W[cc] : 1.0));
        for (int64_t j = 0; j < d.HxW; j++) {
          int64_t k = (n * d.C + cc) * d.HxW + j;
          X[k] = round_to(op, round_to(op, round_to(op, c1 * G[k]) + round_to(op, c2 * X[k])) + c3);
        }
        gw[cc] += round_to(op, (ds[n * d.C + cc] - round_to(op, db[n * d.C + cc] * m)) * r);
        gb[cc] += db[n * d.C + cc];
      }
    }
  double *bufs[] = {X, G, W, mean, rstd, gw, gb, ds, db};
  return norm_backward_done(c, err, mask, true, (const double *const[3]){X, gw, gb}, bufs, 9);
}

/* The batch norms: out = input * alpha[c] + beta[c] with alpha = invstd *
 * weight and beta = bias - mean * alpha (PyTorch's form), the statistics
 * being the batch's (training: mean and biased variance over all but dim 1,
 * returned as save_mean and save_invstd) or the running ones (evaluation:
 * save_mean and save_invstd are empty). The update of the running stats is
 * a mutation and is not done: only the functional outputs are. training:
 * -1 read from the node, else the op's fixed mode. */
static int batch_norm(const alloy_kernel_call *c, int training_mode) {
  const alloy_kernel_tensor *x = ref_tensor(c, "input"), *w = ref_tensor(c, "weight"),
                            *b = ref_tensor(c, "bias"), *rm = ref_tensor(c, "running_mean"),
                            *rv = ref_tensor(c, "running_var");
  if (!x || x->rank < 2) return ref_fail(c, "missing tensor argument");
  bool training = training_mode == 1;
  if (training_mode < 0 && !ref_bool(c, "training", &training)) training = true;
  if (!rm || !rv) training = true; /* no running stats: the batch's */
  double eps = 1e-5;
  ref_float(c, "eps", &eps);
  int64_t C = x->sizes[1], N = x->sizes[0], S = 1;
  for (int d = 2; d < x->rank; d++) S *= x->sizes[d];
  double *X = load_all(x), *W = load_all(w), *B = load_all(b), *RM = load_all(rm), *RV = load_all(rv);
  double *mean = malloc(sizeof(double) * (size_t)max64(1, C)), *invstd = malloc(sizeof(double) * (size_t)max64(1, C));
  int err = !X || (w && !W) || (b && !B) || (rm && !RM) || (rv && !RV) || !mean || !invstd;
  for (int64_t ch = 0; !err && ch < C; ch++) {
    if (training) {
      /* As PyTorch's CPU kernel: the squared deviations from the unrounded
       * mean are summed; the mean is saved in the statistics' dtype. For
       * bfloat16 the sum is stored in a bfloat16 tensor and divided by the
       * count in bfloat16 (float16 keeps both in float, as the corpus
       * shows); the inverse std comes from that. */
      alloy_dtype st = c->outputs[1].dtype, qt = st == ALLOY_BF16 ? st : ALLOY_F64;
      /* the sums in opmath: float below float64, where 3e38 + 3e38 is inf */
      alloy_dtype op = x->dtype == ALLOY_F64 ? ALLOY_F64 : ALLOY_F32;
      double s = 0.0, q = 0.0;
      int64_t cnt = N * S;
      for (int64_t n = 0; n < N; n++)
        for (int64_t i = 0; i < S; i++) s = round_to(op, s + X[(n * C + ch) * S + i]);
      double m = round_to(op, s / (double)cnt);
      for (int64_t n = 0; n < N; n++)
        for (int64_t i = 0; i < S; i++) {
          double dv = round_to(op, X[(n * C + ch) * S + i] - m);
          q = round_to(op, q + round_to(op, dv * dv));
        }
      double var = round_to(qt, round_to(qt, q) / (double)cnt);
      mean[ch] = round_to(st, m);
      /* InvStd: 0 for a zero variance with a zero eps */
      invstd[ch] = round_to(st, var == 0.0 && eps == 0.0 ? 0.0 : 1.0 / sqrt(var + eps));
    } else {
      mean[ch] = RM[ch];
      invstd[ch] = 1.0 / sqrt(RV[ch] + eps);
    }
    double alpha = invstd[ch] * (W ? W[ch] : 1.0), beta = (B ? B[ch] : 0.0) - mean[ch] * alpha;
    for (int64_t n = 0; n < N; n++)
      for (int64_t i = 0; i < S; i++) {
        double *v = &X[(n * C + ch) * S + i];
        *v = *v * alpha + beta;
      }
  }
  if (!err) {
    store_all(&c->outputs[0], X);
    if (ref_numel(&c->outputs[1]) == C) store_all(&c->outputs[1], mean);
    if (ref_numel(&c->outputs[2]) == C) store_all(&c->outputs[2], invstd);
  }
  free(X);
  free(W);
  free(B);
  free(RM);
  free(RV);
  free(mean);
  free(invstd);
  return err ? ref_fail(c, "out of memory") : 0;
}

static int k_native_batch_norm(const alloy_kernel_call *c) { return batch_norm(c, -1); }
static int k_batch_norm_no_training(const alloy_kernel_call *c) { return batch_norm(c, 0); }
static int k_batch_norm_with_update(const alloy_kernel_call *c) { return batch_norm(c, 1); }

/* ---- losses -------------------------------------------------------------*/

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


/* ---- activations and their helpers -------------------------------------*/

/* glu(self, dim): a * sigmoid(b), a and b the halves of dim. */
static int k_glu(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0], *x = ref_tensor(c, "self");
  if (!x || x->rank < 1) return ref_fail(c, "missing tensor argument");
  int64_t dim = -1;
  ref_int(c, "dim", &dim);
  if (dim < 0) dim += x->rank;
  if (dim < 0 || dim >= x->rank) return ref_fail(c, "glu: dim %lld out of range", (long long)dim);
  int64_t half = x->sizes[dim] / 2;
  const alloy_kernel_tensor *in = x;
  ref_iter it;
  ref_iter_init(&it, out, &in, 1); /* x's first half has out's shape */
  while (ref_iter_next(&it)) {
    double a = ref_load_f(x->data, x->dtype, it.offset[1]);
    double b = ref_load_f(x->data, x->dtype, it.offset[1] + half * x->strides[dim]);
    ref_store_f(out->data, out->dtype, it.offset[0], a / (1.0 + exp(-b)));
  }
  return 0;
}

/* _prelu_kernel(self, weight): x where positive, else weight * x
 * (broadcast). */
static int k_prelu(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0], *ins[2] = {ref_tensor(c, "self"), ref_tensor(c, "weight")};
  if (!ins[0] || !ins[1]) return ref_fail(c, "missing tensor argument");
  ref_iter it;
  ref_iter_init(&it, out, ins, 2);
  while (ref_iter_next(&it)) {
    double x = ref_load_f(ins[0]->data, ins[0]->dtype, it.offset[1]);
    ref_store_f(out->data, out->dtype, it.offset[0],
                x > 0.0 ? x : ref_load_f(ins[1]->data, ins[1]->dtype, it.offset[2]) * x);
  }
  return 0;
}

/* Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
 * 3"): counter-based, so element k of a draw uses counter k. */
static void philox(uint32_t ctr[4], uint32_t key0, uint32_t key1) {
  for (int r = 0; r < 10; r++) {
    uint64_t p0 = (uint64_t)0xD2511F53u * ctr[0], p1 = (uint64_t)0xCD9E8D57u * ctr[2];
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ ctr[1] ^ key0, n2 = (uint32_t)(p0 >> 32) ^ ctr[3] ^ key1;
    ctr[1] = (uint32_t)p1;
    ctr[3] = (uint32_t)p0;
    ctr[0] = n0;
    ctr[2] = n2;
    key0 += 0x9E3779B9u;
    key1 += 0xBB67AE85u;
  }
}

/* A uniform double in [0, 1) for element k of draw `stream`. */
static double philox_uniform(uint64_t stream, uint64_t k) {
  uint32_t ctr[4] = {(uint32_t)k, (uint32_t)(k >> 32), (uint32_t)stream, (uint32_t)(stream >> 32)};
  philox(ctr, 0x2545F491u, 0x9E3779B9u);
  uint64_t bits = ((uint64_t)ctr[0] << 21) ^ ctr[1];
  return (double)(bits & ((1ull << 53) - 1)) / 9007199254740992.0;
}

/* Each training call of rrelu draws from a new stream. */
static _Atomic uint64_t rrelu_stream;

/* rrelu_with_noise(self, noise, lower, upper, training, generator): in
 * evaluation, a leaky relu of slope (lower + upper) / 2; in training, each
 * non-positive x is scaled by a uniform draw from [lower, upper] (the noise
 * it writes is a mutation: only the output is produced). */
static int k_rrelu_with_noise(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0], *x = ref_tensor(c, "self");
  if (!x) return ref_fail(c, "missing tensor argument");
  double lower = 0.125, upper = 1.0 / 3.0;
  bool training = false;
  ref_float(c, "lower", &lower);
  ref_float(c, "upper", &upper);
  ref_bool(c, "training", &training);
  uint64_t stream = training ? rrelu_stream++ : 0;
  const alloy_kernel_tensor *in = x;
  ref_iter it;
  ref_iter_init(&it, out, &in, 1);
  for (uint64_t k = 0; ref_iter_next(&it); k++) {
    double v = ref_load_f(x->data, x->dtype, it.offset[1]);
    double slope = training ? round_to(x->dtype, lower + (upper - lower) * philox_uniform(stream, k))
                            : (lower + upper) / 2.0;
    ref_store_f(out->data, out->dtype, it.offset[0], v > 0.0 ? v : v * slope);
  }
  return 0;
}

/* log_sigmoid_forward(self) -> (output, buffer): min(x, 0) - log1p(z) with
 * z = exp(-|x|), the buffer PyTorch's CPU kernel keeps. */
static int k_log_sigmoid_forward(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0], *buf = &c->outputs[1], *x = ref_tensor(c, "self");
  if (!x) return ref_fail(c, "missing tensor argument");
  const alloy_kernel_tensor *ins[2] = {buf, x};
  ref_iter it;
  ref_iter_init(&it, out, ins, 2);
  while (ref_iter_next(&it)) {
    double v = ref_load_f(x->data, x->dtype, it.offset[2]), z = exp(-fabs(v));
    ref_store_f(out->data, out->dtype, it.offset[0], fmin(v, 0.0) - log1p(z));
    ref_store_f(buf->data, buf->dtype, it.offset[1], z);
  }
  return 0;
}

/* _softmax_backward_data(grad_output, output, dim, input_dtype):
 * y * (g - sum(g * y over dim)). float32, float16 and bfloat16 take the
 * products and their sum in float32, as PyTorch's kernel: past FLT_MAX
 * they are infinite. */
static int k_softmax_backward_data(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0], *g = ref_tensor(c, "grad_output"), *y = ref_tensor(c, "output");
  if (!g || !y) return ref_fail(c, "missing tensor argument");
  int64_t dim = 0;
  ref_int(c, "dim", &dim);
  if (dim < 0) dim += g->rank ? g->rank : 1;
  int64_t len = g->rank ? g->sizes[dim] : 1;
  int64_t gs = g->rank ? g->strides[dim] : 0, ys = y->rank ? y->strides[dim] : 0, os = out->rank ? out->strides[dim] : 0;
  /* iterate the positions with dim pinned to 0 */
  int64_t sizes[MAX_RANK];
  memcpy(sizes, out->sizes, sizeof *sizes * (size_t)out->rank);
  if (out->rank) sizes[dim] = 1;
  alloy_kernel_tensor o1 = {out->data, out->dtype, out->rank, sizes, out->strides};
  const alloy_kernel_tensor *ins[2] = {g, y};
  ref_iter it;
  ref_iter_init(&it, &o1, ins, 2);
  bool single = ref_float32_opmath(g->dtype);
  while (ref_iter_next(&it)) {
    double dot = 0.0;
    for (int64_t i = 0; i < len; i++) {
      double p = ref_load_f(g->data, g->dtype, it.offset[1] + i * gs) * ref_load_f(y->data, y->dtype, it.offset[2] + i * ys);
      dot += single && fabs(p) > FLT_MAX ? copysign(INFINITY, p) : p;
    }
    if (single && fabs(dot) > FLT_MAX) dot = copysign(INFINITY, dot);
    for (int64_t i = 0; i < len; i++) {
      double yv = ref_load_f(y->data, y->dtype, it.offset[2] + i * ys);
      ref_store_f(out->data, out->dtype, it.offset[0] + i * os,
                  yv * (ref_load_f(g->data, g->dtype, it.offset[1] + i * gs) - dot));
    }
  }
  return 0;
}

/* embedding_dense_backward(grad_output, indices, num_weights, padding_idx,
 * scale_grad_by_freq): each gradient row added to the row of its index
 * (not padding_idx), divided by the index's count when scale_grad_by_freq;
 * the additions round in the gradient's dtype, in index order, as
 * PyTorch's add_ does. */
static int k_embedding_dense_backward(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0], *g = ref_tensor(c, "grad_output"), *idx = ref_tensor(c, "indices");
  if (!g || !idx || out->rank != 2) return ref_fail(c, "missing tensor argument");
  int64_t padding = -1, rows = out->sizes[0], D = out->sizes[1];
  bool by_freq = false;
  ref_int(c, "padding_idx", &padding);
  ref_bool(c, "scale_grad_by_freq", &by_freq);
  int64_t n = ref_numel(idx);
  int64_t *ids = malloc(sizeof(int64_t) * (size_t)max64(1, n)), *count = calloc((size_t)max64(1, rows), sizeof(int64_t));
  double *G = load_all(g);
  int err = !ids || !count || !G ? ref_fail(c, "out of memory") : 0;
  zero_fill(out);
  ref_iter it;
  ref_iter_init(&it, idx, NULL, 0);
  for (int64_t k = 0; !err && ref_iter_next(&it); k++) {
    ids[k] = ref_load_i(idx->data, idx->dtype, it.offset[0]);
    if (ids[k] < 0 || ids[k] >= rows)
      err = ref_fail(c, "embedding_dense_backward: index %lld (element %lld of indices) is out of "
                     "range for %lld rows", (long long)ids[k], (long long)k, (long long)rows);
    else count[ids[k]]++;
  }
  for (int64_t k = 0; !err && k < n; k++) {
    if (ids[k] == padding) continue;
    double scale = by_freq ? 1.0 / (double)count[ids[k]] : 1.0;
    for (int64_t j = 0; j < D; j++) {
      int64_t off = ids[k] * out->strides[0] + j * out->strides[1];
      ref_store_f(out->data, out->dtype, off, ref_load_f(out->data, out->dtype, off) + G[k * D + j] * scale);
    }
  }
  free(ids);
  free(count);
  free(G);
  return err;
}

const alloy_kernel ref_kernels_nn_3[] = {
    REF_KERNEL("aten.native_layer_norm.default", k_native_layer_norm),
    REF_KERNEL("aten.layer_norm.default", k_layer_norm),
    REF_KERNEL("aten.native_layer_norm_backward.default", k_native_layer_norm_backward),
    REF_KERNEL("aten.native_group_norm.default", k_native_group_norm),
    REF_KERNEL("aten.native_group_norm_backward.default", k_native_group_norm_backward),
    REF_KERNEL("aten.native_batch_norm.default", k_native_batch_norm),
    REF_KERNEL("aten._native_batch_norm_legit.default", k_native_batch_norm),
    REF_KERNEL("aten._native_batch_norm_legit.no_stats", k_native_batch_norm),
    REF_KERNEL("aten._native_batch_norm_legit_no_training.default", k_batch_norm_no_training),
    REF_KERNEL("aten._batch_norm_with_update.default", k_batch_norm_with_update),
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
    REF_KERNEL("aten.glu.default", k_glu),
    REF_KERNEL("aten._prelu_kernel.default", k_prelu),
    REF_KERNEL("aten.rrelu_with_noise.default", k_rrelu_with_noise),
    REF_KERNEL("aten.log_sigmoid_forward.default", k_log_sigmoid_forward),
    REF_KERNEL("aten._softmax_backward_data.default", k_softmax_backward_data),
    REF_KERNEL("aten.embedding_dense_backward.default", k_embedding_dense_backward),
    {NULL, NULL, NULL, NULL},
};
