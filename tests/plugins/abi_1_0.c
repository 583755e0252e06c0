/*
 * tests/plugins/abi_1_0.c: a plugin exactly as built against ABI 1.0: its
 * table says minor 0 and its struct_size ends at executable_deserialize,
 * before capabilities (1.1) and the entries of 1.2. A 1.2 host must load it
 * and run relu on it reading nothing past struct_size. The 1.2 slots abort
 * if called (testplugin.h, TP_ENTRIES_BEYOND_1_1), and the capabilities slot
 * claims ALLOY_CAP_SYMBOLIC_SHAPES, which this plugin does not have: a host
 * that read it would compile a symbolic graph once instead of once per size,
 * which the loader tests count. Its device_info fills only the 1.0 fields.
 */
#define TP_NAME "abi_1_0"
#define TP_ABI_MINOR 0
#include "testplugin.h"

/* What a 1.0 plugin put in struct_size: the table as 1.0 had it, which ended
 * with the compile cache entries. */
#define ABI_1_0_PLUGIN_API_STRUCT_SIZE ALLOY_STRUCT_SIZE(alloy_plugin_api, executable_deserialize)

static const alloy_plugin_api table = {
    .struct_size = ABI_1_0_PLUGIN_API_STRUCT_SIZE,
    .abi_major = 1,
    .abi_minor = 0,
    .name = "abi_1_0",
    .vendor = "Alloy tests",
    .version = "1.0.0",
    TP_REQUIRED_ENTRIES,
    TP_OPTIONAL_ENTRIES,
    .capabilities = ALLOY_CAP_SYMBOLIC_SHAPES, /* beyond struct_size: a lie */
    TP_ENTRIES_BEYOND_1_1,
};

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(
    const alloy_host_api *host) {
  return tp_init(host, &table);
}
