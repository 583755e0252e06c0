/*
 * tests/plugins/no_entry.c: a shared library that looks like a plugin (the
 * file name, a complete table) but exports no alloy_plugin_init: the host
 * must refuse it for the missing entry symbol. It exports a near miss,
 * alloy_plugin_initialize, so that a host matching symbol names loosely
 * would be caught.
 */
#define TP_NAME "no_entry"
#include "testplugin.h"

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_initialize(
    const alloy_host_api *host);

static const alloy_plugin_api table = {
    .struct_size = ALLOY_PLUGIN_API_STRUCT_SIZE,
    .abi_major = ALLOY_ABI_MAJOR,
    .abi_minor = ALLOY_ABI_MINOR,
    .name = "no_entry",
    .vendor = "Alloy tests",
    .version = "1.0.0",
    TP_REQUIRED_ENTRIES,
};

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_initialize(
    const alloy_host_api *host) {
  return tp_init(host, &table);
}
