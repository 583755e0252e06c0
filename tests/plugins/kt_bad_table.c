/*
 * tests/plugins/kt_bad_table.c: a kernel table with a typo in a signature.
 * The kernel-table helper must refuse it at load, logging the row, the op
 * and the column of the mistake, so the loader's status line tells the
 * vendor what to fix (tests/test_kernel_table.c checks).
 */
#include <stdint.h>

#include "alloy/kernel_table.h"

static void bad_relu(float *out, const float *in, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
}

static const alloy_kernel bad_kernels[] = {
    {"aten.relu.default", "f32", (alloy_kernel_fn)bad_relu, "void(out0, in0, numel(out0))"},
    {"aten.neg.default", "f32", (alloy_kernel_fn)bad_relu, "void(out0, in0, nummel(out0))"},
};

static const alloy_kernel_table bad_table = {
    .struct_size = ALLOY_KERNEL_TABLE_STRUCT_SIZE,
    .name = "kt_bad_table",
    .vendor = "Alloy tests",
    .version = "1.0.0",
    .kernels = bad_kernels,
    .count = 2,
};

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(const alloy_host_api *host);

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(const alloy_host_api *host) {
  return alloy_kernel_table_plugin(&bad_table, host);
}
