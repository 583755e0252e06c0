/*
 * tests/plugins/kt_typo.c: a kernel table whose second row misspells its
 * op ("aten.relu.defualt"). Such a row would match no node, ever, and a
 * conformance run would skip everything and pass; the kernel-table helper
 * must refuse the table at load instead, naming the plugin, the row, the
 * name and the nearest op the registry knows, "aten.relu.default"
 * (tests/test_kernel_table.c and tests/cli.sh check).
 */
#include <stdint.h>

#include "alloy/kernel_table.h"

static void typo_neg(float *out, const float *in, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = -in[i];
}

static void typo_relu(float *out, const float *in, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
}

static const alloy_kernel typo_kernels[] = {
    {"aten.neg.default", "f32", (alloy_kernel_fn)typo_neg, "void(out0, in0, numel(out0))"},
    {"aten.relu.defualt", "f32", (alloy_kernel_fn)typo_relu, "void(out0, in0, numel(out0))"},
};

static const alloy_kernel_table typo_table = {
    .struct_size = ALLOY_KERNEL_TABLE_STRUCT_SIZE,
    .name = "kt_typo",
    .vendor = "Alloy tests",
    .version = "1.0.0",
    .kernels = typo_kernels,
    .count = 2,
};

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(const alloy_host_api *host);

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(const alloy_host_api *host) {
  return alloy_kernel_table_plugin(&typo_table, host);
}
