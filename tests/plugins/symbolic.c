/*
 * tests/plugins/symbolic.c: a plugin that declares ALLOY_CAP_SYMBOLIC_SHAPES
 * (ABI 1.1): its relu partition runs at whatever size the tensors have, so
 * the host must compile a graph with a symbolic batch once, not once per
 * size (tests/test_cache.c checks the count and the values).
 */
#define TP_NAME "symbolic"
#include "testplugin.h"

static const alloy_plugin_api table = {
    .struct_size = ALLOY_PLUGIN_API_STRUCT_SIZE,
    .abi_major = ALLOY_ABI_MAJOR,
    .abi_minor = ALLOY_ABI_MINOR,
    .name = "symbolic",
    .vendor = "Alloy tests",
    .version = "1.0.0",
    TP_REQUIRED_ENTRIES,
    .capabilities = ALLOY_CAP_SYMBOLIC_SHAPES,
};

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(
    const alloy_host_api *host) {
  return tp_init(host, &table);
}
