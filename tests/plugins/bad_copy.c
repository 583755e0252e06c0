/*
 * tests/plugins/bad_copy.c: a backend that gets two things of the plugin
 * contract wrong, for the conformance suite's ABI tests (tests/cli.sh):
 * its buffer_copy ignores the source offset (it copies from the start of
 * the source buffer), which abi.buffers must catch, naming buffer_copy;
 * and it claims only aten.exp.default, none of the graphs abi.entries
 * runs, so compile, execute and executable_release are never exercised,
 * which abi.entries must report. Everything else is the kernel-table
 * helper's, right.
 */
#include <math.h>
#include <stdint.h>

#include "alloy/kernel_table.h"

static void exp_f32(float *out, const float *a, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = expf(a[i]);
}

static const alloy_kernel kernels[] = {
    {"aten.exp.default", "f32", (alloy_kernel_fn)exp_f32, "void(out0, in0, numel(out0))"},
};

static const alloy_kernel_table table = {
    .struct_size = ALLOY_KERNEL_TABLE_STRUCT_SIZE,
    .name = "bad_copy",
    .vendor = "Alloy tests",
    .version = "0.1.0",
    .kernels = kernels,
    .count = (int)(sizeof kernels / sizeof kernels[0]),
};

/* The helper's table, with buffer_copy replaced. */
static const alloy_plugin_api *helper;
static alloy_plugin_api api;

static alloy_error *bad_buffer_copy(alloy_backend *be, alloy_buffer *dst, uint64_t dst_offset,
                                    alloy_buffer *src, uint64_t src_offset, uint64_t bytes,
                                    alloy_queue *queue, alloy_event **done) {
  (void)src_offset; /* the bug: always from the source's first byte */
  return helper->buffer_copy(be, dst, dst_offset, src, 0, bytes, queue, done);
}

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(const alloy_host_api *host);
ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(const alloy_host_api *host) {
  helper = alloy_kernel_table_plugin(&table, host);
  /* Another major (or a refusal): the helper's answer as it is. */
  if (!helper || helper->abi_major != ALLOY_ABI_MAJOR) return helper;
  api = *helper;
  api.buffer_copy = bad_buffer_copy;
  return &api;
}
