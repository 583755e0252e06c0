/*
 * tests/plugins/other_major.c: a plugin built against the next major of the
 * ABI. The host must refuse it with a message naming both versions, and it
 * must not stop the other plugins of its folder from loading. The plugin
 * itself does what plugin.h allows across majors and no more: it may call
 * host->log (nothing else of the host table) and hands back its table, whose
 * first three fields are all a host of another major may read.
 */
#define TP_NAME "other_major"
#include "testplugin.h"

static const alloy_plugin_api table = {
    .struct_size = ALLOY_PLUGIN_API_STRUCT_SIZE,
    .abi_major = ALLOY_ABI_MAJOR + 1,
    .abi_minor = 0,
    .name = "other_major",
    .vendor = "Alloy tests",
    .version = "2.0.0",
    TP_REQUIRED_ENTRIES,
    TP_OPTIONAL_ENTRIES,
};

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(
    const alloy_host_api *host) {
  if (host->abi_major != table.abi_major)
    host->log(ALLOY_LOG_INFO, TP_NAME,
              "host of another ABI major: leaving the decision to it");
  return &table;
}
