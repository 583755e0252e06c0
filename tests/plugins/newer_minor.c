/*
 * tests/plugins/newer_minor.c: a plugin built against the next minor of the
 * ABI, which (as a minor may) appended entries and a field to the plugin
 * table. Its table is a struct that embeds alloy_plugin_api and adds to its
 * end, and struct_size says so. A host of this minor must load it, use what
 * it knows and never touch the rest: the extra entries abort if called.
 * It also has the optional entries (serialize, deserialize), working.
 */
#define TP_NAME "newer_minor"
#include "testplugin.h"

/* What minor+1 appended, as this plugin was compiled. */
typedef struct newer_plugin_api {
  alloy_plugin_api base;
  alloy_error *(*executable_cost)(alloy_backend *be, alloy_executable *exe,
                                  double *seconds);
  uint64_t capability_flags;
  void (*backend_trim)(alloy_backend *be);
} newer_plugin_api;
#define NEWER_PLUGIN_API_STRUCT_SIZE ALLOY_STRUCT_SIZE(newer_plugin_api, backend_trim)

static alloy_error *newer_executable_cost(alloy_backend *be,
                                          alloy_executable *exe,
                                          double *seconds) {
  (void)be;
  (void)exe;
  (void)seconds;
  fprintf(stderr, "newer_minor: the host called executable_cost, an entry "
                  "beyond its own minor\n");
  abort();
}

static void newer_backend_trim(alloy_backend *be) {
  (void)be;
  fprintf(stderr, "newer_minor: the host called backend_trim, an entry "
                  "beyond its own minor\n");
  abort();
}

static const newer_plugin_api table = {
    .base =
        {
            .struct_size = NEWER_PLUGIN_API_STRUCT_SIZE,
            .abi_major = ALLOY_ABI_MAJOR,
            .abi_minor = ALLOY_ABI_MINOR + 1,
            .name = "newer_minor",
            .vendor = "Alloy tests",
            .version = "1.1.0",
            TP_REQUIRED_ENTRIES,
            TP_OPTIONAL_ENTRIES,
        },
    .executable_cost = newer_executable_cost,
    .capability_flags = ~(uint64_t)0,
    .backend_trim = newer_backend_trim,
};

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(
    const alloy_host_api *host) {
  return tp_init(host, &table.base);
}
