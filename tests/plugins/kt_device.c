/*
 * tests/plugins/kt_device.c: a kernel table that describes its device
 * (alloy_kernel_table.device_name and device_kind, since 1.2): `alloy
 * backends` lists it as "npu0 (accelerator)". With $ALLOY_KT_DEVICE_TABLE
 * set to "old" it hands over the same table with the struct_size of a
 * table written before those fields, and garbage in them: the helper must
 * not read past struct_size, and reports "cpu0 (cpu)" as it always did
 * (tests/test_kernel_table.c and tests/cli.sh check).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/kernel_table.h"

static void dev_neg(float *out, const float *in, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = -in[i];
}

static const alloy_kernel dev_kernels[] = {
    {"aten.neg.default", "f32", (alloy_kernel_fn)dev_neg, "void(out0, in0, numel(out0))"},
};

static const alloy_kernel_table dev_table = {
    .struct_size = ALLOY_KERNEL_TABLE_STRUCT_SIZE,
    .name = "kt_device",
    .vendor = "Alloy tests",
    .version = "1.0.0",
    .kernels = dev_kernels,
    .count = 1,
    .device_name = "npu0",
    .device_kind = ALLOY_DEVICE_KIND_ACCELERATOR,
};

/* Written before the device fields: they are past its struct_size. */
static const alloy_kernel_table old_table = {
    .struct_size = ALLOY_STRUCT_SIZE(alloy_kernel_table, reserved),
    .name = "kt_device",
    .vendor = "Alloy tests",
    .version = "1.0.0",
    .kernels = dev_kernels,
    .count = 1,
    .device_name = "garbage",
    .device_kind = 77,
};

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(const alloy_host_api *host);

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(const alloy_host_api *host) {
  const char *which = getenv("ALLOY_KT_DEVICE_TABLE");
  return alloy_kernel_table_plugin(which && !strcmp(which, "old") ? &old_table : &dev_table, host);
}
