/*
 * reference_backend/kernels_norms.c: reference kernels, nn family:
 * normalization (layer, group and batch norm, forward and backward, in
 * every mode of batch norm's running statistics).
 *
 * Inputs are read into dense double arrays in row-major order (whatever
 * their strides; kernels_nn.h) and results written back through the
 * output's strides; statistics are computed in double and rounded once to
 * the dtype of the tensor that holds them.
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
#include <stdlib.h>
#include <string.h>

#include "reference_backend/kernels_nn.h"

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

/* The end of a norm's forward: out stored, and mean and rstd where the op
 * returns them (stats, and outputs for them); then every buffer of the
 * computation goes. */
static int norm_forward_done(const alloy_kernel_call *c, int err, bool stats, const double *out,
                             const double *mean, const double *rstd, double **bufs, int n) {
  if (!err) {
    store_all(&c->outputs[0], out);
    if (stats && c->num_outputs >= 3) {
      store_all(&c->outputs[1], mean);
      store_all(&c->outputs[2], rstd);
    }
  }
  for (int i = 0; i < n; i++) free(bufs[i]);
  return err ? ref_fail(c, "out of memory") : 0;
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
  return norm_forward_done(c, err, stats, X, mean, rstd, (double *[]){X, W, B, mean, rstd}, 5);
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
  return norm_forward_done(c, err, true, X, mean, rstd, (double *[]){X, W, B, mean, rstd}, 5);
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
const alloy_kernel ref_kernels_norms[] = {
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
    {NULL, NULL, NULL, NULL},
};
