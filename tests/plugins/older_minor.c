/*
 * tests/plugins/older_minor.c: a plugin as if built against a minor from
 * before the optional entries (executable_serialize/deserialize) were
 * appended: its struct_size ends where they begin. The host must treat them
 * as absent, exactly as if NULL. To catch a host that reads past
 * struct_size, the slots are filled anyway, with functions that abort.
 * The required entries work: the loader tests compile and run relu on it.
 */
#define TP_NAME "older_minor"
#include "testplugin.h"

static alloy_error *older_serialize(alloy_backend *be, alloy_executable *exe,
                                    void **bytes, uint64_t *size,
                                    alloy_compat_info *info) {
  (void)be;
  (void)exe;
  (void)bytes;
  (void)size;
  (void)info;
  fprintf(stderr, "older_minor: the host called executable_serialize, "
                  "beyond the plugin table's struct_size\n");
  abort();
}

static alloy_error *older_deserialize(alloy_backend *be,
                                      const alloy_graph *partition,
                                      const void *bytes, uint64_t size,
                                      alloy_executable **out) {
  (void)be;
  (void)partition;
  (void)bytes;
  (void)size;
  (void)out;
  fprintf(stderr, "older_minor: the host called executable_deserialize, "
                  "beyond the plugin table's struct_size\n");
  abort();
}

static const alloy_plugin_api table = {
    .struct_size = offsetof(alloy_plugin_api, executable_serialize),
    .abi_major = ALLOY_ABI_MAJOR,
    /* The minor before this one; at minor 0 there is none, and the
     * struct_size alone makes the point. */
    .abi_minor = ALLOY_ABI_MINOR > 0 ? ALLOY_ABI_MINOR - 1 : 0,
    .name = "older_minor",
    .vendor = "Alloy tests",
    .version = "0.9.0",
    TP_REQUIRED_ENTRIES,
    .executable_serialize = older_serialize,
    .executable_deserialize = older_deserialize,
};

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(
    const alloy_host_api *host) {
  return tp_init(host, &table);
}
