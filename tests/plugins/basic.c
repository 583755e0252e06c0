/*
 * tests/plugins/basic.c: a plugin that does everything right: the current
 * ABI, every required entry, no optional ones (serialize and deserialize are
 * NULL, which a host must accept and NULL-check). The loader tests use it as
 * the well-behaved neighbour of the broken plugins, to run relu through a
 * plugin, and as the plugin loaded twice (two paths, two runtimes).
 */
#define TP_NAME "basic"
#include "testplugin.h"

static const alloy_plugin_api table = {
    .struct_size = ALLOY_PLUGIN_API_STRUCT_SIZE,
    .abi_major = ALLOY_ABI_MAJOR,
    .abi_minor = ALLOY_ABI_MINOR,
    .name = "basic",
    .vendor = "Alloy tests",
    .version = "1.0.0",
    TP_REQUIRED_ENTRIES,
};

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(
    const alloy_host_api *host) {
  return tp_init(host, &table);
}
