/*
 * tests/plugins/dup_a.c: one of two plugins (dup_a, dup_b) whose tables both
 * say name "dup". Two plugins claiming one name is an error that names both
 * files: the host keeps the first found and refuses the second. The vendor
 * string tells the test which of the two it is looking at.
 */
#define TP_NAME "dup"
#include "testplugin.h"

static const alloy_plugin_api table = {
    .struct_size = ALLOY_PLUGIN_API_STRUCT_SIZE,
    .abi_major = ALLOY_ABI_MAJOR,
    .abi_minor = ALLOY_ABI_MINOR,
    .name = "dup",
    .vendor = "dup_a",
    .version = "1.0.0",
    TP_REQUIRED_ENTRIES,
};

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(
    const alloy_host_api *host) {
  return tp_init(host, &table);
}
