/*
 * tests/hostile_plugins/crash_open.c: a plugin that crashes when its backend
 * opens. A runtime asked for other backends (alloy_runtime_options
 * only_backends, as `alloy run --backends ref` and `alloy conform` ask)
 * must never load it; tests/test_loader.c checks in a child process.
 */
#include <stdlib.h>

#define TP_NAME "crash_open"
#include "../plugins/testplugin.h"

static alloy_error *crash_backend_open(const alloy_host_api *host,
                                       alloy_backend **out) {
  (void)host;
  (void)out;
  abort(); /* dies by a signal (ASan leaves SIGABRT alone: no report) */
  return NULL;
}

static alloy_plugin_api table = {
    .struct_size = ALLOY_PLUGIN_API_STRUCT_SIZE,
    .abi_major = ALLOY_ABI_MAJOR,
    .abi_minor = ALLOY_ABI_MINOR,
    .name = "crash_open",
    .vendor = "Alloy tests",
    .version = "1.0.0",
    TP_REQUIRED_ENTRIES,
};

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(
    const alloy_host_api *host) {
  table.backend_open = crash_backend_open;
  return tp_init(host, &table);
}
