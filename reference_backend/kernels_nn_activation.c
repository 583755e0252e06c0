/*
 * reference_backend/kernels_nn_activation.c: reference kernels, nn
 * family: the activations that are not plain pointwise ops (glu,
 * _prelu_kernel, rrelu_with_noise, log_sigmoid_forward) and two backward
 * helpers of nn layers (_softmax_backward_data, embedding_dense_backward).
 *
 * Values are computed in double and rounded once on store, except where
 * a comment says PyTorch rounds an intermediate.
 */
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference_backend/kernels_nn.h"

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
 * non-positive x is scaled by a uniform draw from [lower, upper]. The
 * mutable op's write to noise is not seen (only the output is produced);
 * its _functional form returns the new noise as its second result, as
 * PyTorch's CPU kernel writes it: the slope where x <= 0 and 1 elsewhere
 * in training, noise unchanged in evaluation. */
static int k_rrelu_with_noise(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0], *x = ref_tensor(c, "self");
  const alloy_kernel_tensor *noise = ref_tensor(c, "noise");
  const alloy_kernel_tensor *noise_out = c->num_outputs > 1 ? &c->outputs[1] : NULL;
  if (!x || (noise_out && !noise)) return ref_fail(c, "missing tensor argument");
  double lower = 0.125, upper = 1.0 / 3.0;
  bool training = false;
  ref_float(c, "lower", &lower);
  ref_float(c, "upper", &upper);
  ref_bool(c, "training", &training);
  uint64_t stream = training ? rrelu_stream++ : 0;
  /* noise and noise_out walk beside x; x stands in for whichever is absent */
  const alloy_kernel_tensor *ins[3] = {x, noise_out && !training ? noise : x, noise_out ? noise_out : x};
  ref_iter it;
  ref_iter_init(&it, out, ins, 3);
  for (uint64_t k = 0; ref_iter_next(&it); k++) {
    double v = ref_load_f(x->data, x->dtype, it.offset[1]);
    double slope = training ? round_to(x->dtype, lower + (upper - lower) * philox_uniform(stream, k))
                            : (lower + upper) / 2.0;
    ref_store_f(out->data, out->dtype, it.offset[0], v > 0.0 ? v : v * slope);
    if (!noise_out) continue;
    double nv = training ? (v > 0.0 ? 1.0 : slope) : ref_load_f(noise->data, noise->dtype, it.offset[2]);
    ref_store_f(noise_out->data, noise_out->dtype, it.offset[3], nv);
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

const alloy_kernel ref_kernels_nn_activation[] = {
    REF_KERNEL("aten.glu.default", k_glu),
    REF_KERNEL("aten._prelu_kernel.default", k_prelu),
    REF_KERNEL("aten.rrelu_with_noise.default", k_rrelu_with_noise),
    REF_KERNEL("aten.rrelu_with_noise_functional.default", k_rrelu_with_noise),
    REF_KERNEL("aten.log_sigmoid_forward.default", k_log_sigmoid_forward),
    REF_KERNEL("aten._softmax_backward_data.default", k_softmax_backward_data),
    REF_KERNEL("aten.embedding_dense_backward.default", k_embedding_dense_backward),
    {NULL, NULL, NULL, NULL},
};
