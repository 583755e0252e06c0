/*
 * tests/plugins/quick_gelu.c: a backend that is right on every op but one,
 * and wrong there the way real kernels go wrong: its gelu is the "quick"
 * approximation x * sigmoid(1.702 x) whatever the node's `approximate`
 * says (off by up to about 0.02 from the exact erf form PyTorch computes).
 * Its relu and add are exact. A graph or model that runs relu or add
 * before gelu on it therefore goes wrong at the gelu node and nowhere
 * earlier: tests/cli.sh checks that `alloy conform` pins such a failure to
 * that node (conformance/diverge.c) and writes that node's repro.
 */
#include <math.h>
#include <stdint.h>

#include "alloy/kernel_table.h"

static void qg_relu(float *out, const float *x, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = x[i] > 0.0f ? x[i] : x[i] == x[i] ? 0.0f : x[i];
}

/* The helper broadcasts both operands to out's shape (the signature asks
 * no shape of them), so one index serves. alpha is 1 in the graphs used. */
static void qg_add(float *out, const float *a, const float *b, float alpha, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = a[i] + alpha * b[i];
}

static void qg_gelu(float *out, const float *x, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = x[i] / (1.0f + expf(-1.702f * x[i]));
}

static const alloy_kernel kernels[] = {
    {"aten.relu.default", "f32", (alloy_kernel_fn)qg_relu, "void(out0, in0, numel(out0))"},
    {"aten.add.Tensor", "f32", (alloy_kernel_fn)qg_add,
     "void(out0, in0, in1, arg(alpha):f32, numel(out0))"},
    {"aten.gelu.default", "f32", (alloy_kernel_fn)qg_gelu, "void(out0, in0, numel(out0))"},
};

static const alloy_kernel_table table = {
    .struct_size = ALLOY_KERNEL_TABLE_STRUCT_SIZE,
    .name = "quick_gelu",
    .vendor = "Alloy tests",
    .version = "0.1.0",
    .kernels = kernels,
    .count = (int)(sizeof kernels / sizeof kernels[0]),
};

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(const alloy_host_api *host);
ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(const alloy_host_api *host) {
  return alloy_kernel_table_plugin(&table, host);
}
