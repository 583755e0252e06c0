/*
 * tests/plugins/short_table.c: a plugin whose struct_size stops before the
 * last required entry (event_release), as a table truncated by a bad build
 * or a confused vendor would. Required entries are never optional, whatever
 * the minor: the host must refuse it naming the entry, not read past
 * struct_size and not treat it like a NULL optional entry.
 */
#define TP_NAME "short_table"
#include "testplugin.h"

static const alloy_plugin_api table = {
    .struct_size = offsetof(alloy_plugin_api, event_release),
    .abi_major = ALLOY_ABI_MAJOR,
    .abi_minor = ALLOY_ABI_MINOR,
    .name = "short_table",
    .vendor = "Alloy tests",
    .version = "1.0.0",
    TP_REQUIRED_ENTRIES,
};

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(
    const alloy_host_api *host) {
  return tp_init(host, &table);
}
