/*
 * tests/plugins/abi_1_1.c: a plugin exactly as built against ABI 1.1: its
 * table says minor 1 and its struct_size is ALLOY_PLUGIN_API_1_1_STRUCT_SIZE
 * (it ends at capabilities). A 1.2 host must load it and run relu on it
 * without touching what 1.2 appended: those slots are filled anyway, with
 * entries that abort if called (testplugin.h, TP_ENTRIES_BEYOND_1_1). Its
 * device_info fills only the fields alloy_device_info had in 1.1 (name,
 * kind, memory_bytes), whatever struct_size the host passes; the loader
 * tests check that it writes nothing past them. It has the optional compile
 * cache entries of 1.0, working.
 */
#define TP_NAME "abi_1_1"
#define TP_ABI_MINOR 1
#include "testplugin.h"

static const alloy_plugin_api table = {
    .struct_size = ALLOY_PLUGIN_API_1_1_STRUCT_SIZE,
    .abi_major = 1,
    .abi_minor = 1,
    .name = "abi_1_1",
    .vendor = "Alloy tests",
    .version = "1.1.0",
    TP_REQUIRED_ENTRIES,
    TP_OPTIONAL_ENTRIES,
    .capabilities = 0,
    TP_ENTRIES_BEYOND_1_1,
};

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(
    const alloy_host_api *host) {
  return tp_init(host, &table);
}
