/*
 * tests/plugins/broken.c: a deliberately broken backend, for the
 * conformance suite's own test (tests/cli.sh): written with the
 * kernel-table helper like a vendor's, it claims three float32 ops and gets
 * each wrong in its own way: add returns a + b + 1 (wrong values), mul
 * writes through a NULL pointer (a segfault), neg never returns (a hang).
 * `alloy conform --backend broken` must report all three and finish. It
 * also claims empty, which fills its output with NaN: right (an empty
 * tensor's values are undefined), and the suite must pass it.
 */
#include <stdint.h>
#include <unistd.h>

#include "alloy/kernel_table.h"

static void broken_add(float *out, const float *a, const float *b, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = a[i] + b[i] + 1.0f;
}

static void broken_mul(float *out, const float *a, const float *b, int64_t n) {
  (void)out, (void)a, (void)b, (void)n;
  volatile float *nowhere = (volatile float *)(uintptr_t)0;
  *nowhere = 1.0f;
}

static void broken_neg(float *out, const float *a, int64_t n) {
  (void)out, (void)a, (void)n;
  for (;;) sleep(1);
}

static void nan_empty(float *out, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = __builtin_nanf("");
}

static const alloy_kernel kernels[] = {
    {"aten.add.Tensor", "f32", (alloy_kernel_fn)broken_add, "void(out0, in0, in1, numel(out0))"},
    {"aten.mul.Tensor", "f32", (alloy_kernel_fn)broken_mul, "void(out0, in0, in1, numel(out0))"},
    {"aten.neg.default", "f32", (alloy_kernel_fn)broken_neg, "void(out0, in0, numel(out0))"},
    {"aten.empty.memory_format", "f32", (alloy_kernel_fn)nan_empty, "void(out0, numel(out0))"},
};

static const alloy_kernel_table table = {
    .struct_size = ALLOY_KERNEL_TABLE_STRUCT_SIZE,
    .name = "broken",
    .vendor = "Alloy tests",
    .version = "0.1.0",
    .kernels = kernels,
    .count = (int)(sizeof kernels / sizeof kernels[0]),
};

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(const alloy_host_api *host);
ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(const alloy_host_api *host) {
  return alloy_kernel_table_plugin(&table, host);
}
