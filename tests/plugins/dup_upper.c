/*
 * tests/plugins/dup_upper.c: a plugin whose table says name "DUP". Names
 * match case-insensitively, so beside dup_a ("dup") it is a duplicate, and
 * refused naming both files, like dup_b.
 */
#define TP_NAME "DUP"
#include "testplugin.h"

static const alloy_plugin_api table = {
    .struct_size = ALLOY_PLUGIN_API_STRUCT_SIZE,
    .abi_major = ALLOY_ABI_MAJOR,
    .abi_minor = ALLOY_ABI_MINOR,
    .name = "DUP",
    .vendor = "dup_upper",
    .version = "1.0.0",
    TP_REQUIRED_ENTRIES,
};

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(
    const alloy_host_api *host) {
  return tp_init(host, &table);
}
