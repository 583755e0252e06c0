/*
 * plugins/example/example.c: the example vendor backend, "example", and the
 * file a vendor copies to start a backend of their own (README.md beside it
 * walks through it). Its kernels are ordinary float32 C functions; the table
 * at the bottom tells the kernel-table helper (alloy/kernel_table.h) which
 * op each one implements and how to call it, and the helper makes the whole
 * plugin from that: claiming nodes, compiling partitions, running them,
 * memory, queues. The only exported symbol is alloy_plugin_init.
 *
 * Each kernel sees contiguous float32 data; pointwise kernels index their
 * inputs with out0's element count, because the helper broadcasts an input
 * to out0's shape when the signature asks nothing about that input's shape.
 */
#include <math.h>
#include <stdint.h>

#include "alloy/kernel_table.h"

/* ---- pointwise ---------------------------------------------------------- */

/* PyTorch computes add/sub with alpha as a + alpha * b. */
static void example_add_f32(float *out, const float *a, const float *b, float alpha, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = a[i] + alpha * b[i];
}

static void example_sub_f32(float *out, const float *a, const float *b, float alpha, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = a[i] - alpha * b[i];
}

static void example_mul_f32(float *out, const float *a, const float *b, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = a[i] * b[i];
}

static void example_div_f32(float *out, const float *a, const float *b, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = a[i] / b[i];
}

static void example_neg_f32(float *out, const float *a, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = -a[i];
}

/* relu keeps NaN, as PyTorch's does: only values known to be <= 0 clear. */
static void example_relu_f32(float *out, const float *a, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = a[i] <= 0.0f ? 0.0f : a[i];
}

static void example_exp_f32(float *out, const float *a, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = expf(a[i]);
}

/* ---- matrix multiply ---------------------------------------------------- */

/* out[m, n] = a[m, k] @ b[k, n]. The i-k-j loop order walks b and out row
 * by row, so the inner loop reads and writes consecutive floats (and
 * vectorizes); i-j-k would stride through b by n floats per step. */
static void example_mm_f32(float *out, const float *a, const float *b, int64_t m, int64_t k,
                           int64_t n) {
  for (int64_t i = 0; i < m * n; i++) out[i] = 0.0f;
  for (int64_t i = 0; i < m; i++) {
    float *orow = out + i * n;
    for (int64_t p = 0; p < k; p++) {
      const float aip = a[i * k + p];
      const float *brow = b + p * n;
      for (int64_t j = 0; j < n; j++) orow[j] += aip * brow[j];
    }
  }
}

/* ---- the table ---------------------------------------------------------- */

/* Signatures: inK is the K-th tensor argument, outK the K-th output;
 * arg(alpha):f32 reads the schema's `alpha` (an int or a float) as float;
 * size(in0, 1) is dim 1 of in0. alloy/kernel_table.h lists the rest. */
static const alloy_kernel example_kernels[] = {
    {"aten.add.Tensor", "f32", (alloy_kernel_fn)example_add_f32,
     "void(out0, in0, in1, arg(alpha):f32, numel(out0))"},
    {"aten.sub.Tensor", "f32", (alloy_kernel_fn)example_sub_f32,
     "void(out0, in0, in1, arg(alpha):f32, numel(out0))"},
    {"aten.mul.Tensor", "f32", (alloy_kernel_fn)example_mul_f32, "void(out0, in0, in1, numel(out0))"},
    {"aten.div.Tensor", "f32", (alloy_kernel_fn)example_div_f32, "void(out0, in0, in1, numel(out0))"},
    {"aten.neg.default", "f32", (alloy_kernel_fn)example_neg_f32, "void(out0, in0, numel(out0))"},
    {"aten.relu.default", "f32", (alloy_kernel_fn)example_relu_f32, "void(out0, in0, numel(out0))"},
    {"aten.exp.default", "f32", (alloy_kernel_fn)example_exp_f32, "void(out0, in0, numel(out0))"},
    {"aten.mm.default", "f32", (alloy_kernel_fn)example_mm_f32,
     "void(out0, in0, in1, size(in0, 0), size(in0, 1), size(in1, 1))"},
};

static const alloy_kernel_table example_table = {
    .struct_size = ALLOY_KERNEL_TABLE_STRUCT_SIZE,
    .name = "example",
    .vendor = "Alloy Example Vendor",
    .version = "1.0.0",
    .kernels = example_kernels,
    .count = (int)(sizeof example_kernels / sizeof example_kernels[0]),
};

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(const alloy_host_api *host);

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(const alloy_host_api *host) {
  return alloy_kernel_table_plugin(&example_table, host);
}
