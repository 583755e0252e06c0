/*
 * tests/plugins/liar.c: a plugin whose answers the host must not believe
 * (issue: hostile plugins). It is the shared test backend (relu on f32),
 * except for what $ALLOY_LIAR names, read at each call:
 *   many_devices   device_count returns INT_MAX (a host that believes it
 *                  hangs building device names)
 *   no_executable  compile returns success and no executable
 *   bogus_error    claim returns a pointer the host never made as its error
 *   no_buffer      buffer_allocate returns success and no buffer
 * The host's guard (sdk/src/guard.c) must turn each into a clear error or a
 * bounded value; tests/test_runtime.c checks it.
 */
#include <limits.h>

#define TP_NAME "liar"
#include "testplugin.h"

static int liar_says(const char *what) {
  const char *env = getenv("ALLOY_LIAR");
  return env && strstr(env, what) != NULL;
}

static int liar_device_count(alloy_backend *be) {
  return liar_says("many_devices") ? INT_MAX : tp_device_count(be);
}

static alloy_error *liar_compile(alloy_backend *be, const alloy_graph *g,
                                 const alloy_compile_options *o,
                                 alloy_executable **out) {
  if (liar_says("no_executable")) return NULL; /* and *out untouched */
  return tp_compile(be, g, o, out);
}

/* Never a real error: an address inside this plugin's own data. */
static char not_an_error[64] = "this is not an alloy_error";

static alloy_error *liar_claim(alloy_backend *be, const alloy_graph *g,
                               alloy_claims *claims) {
  if (liar_says("bogus_error")) return (alloy_error *)(void *)not_an_error;
  return tp_claim(be, g, claims);
}

static alloy_error *liar_buffer_allocate(alloy_backend *be, int device,
                                         uint64_t bytes, alloy_buffer **out) {
  if (liar_says("no_buffer")) return NULL;
  return tp_buffer_allocate(be, device, bytes, out);
}

static alloy_plugin_api table = {
    .struct_size = ALLOY_PLUGIN_API_STRUCT_SIZE,
    .abi_major = ALLOY_ABI_MAJOR,
    .abi_minor = ALLOY_ABI_MINOR,
    .name = "liar",
    .vendor = "Alloy tests",
    .version = "1.0.0",
    TP_REQUIRED_ENTRIES,
};

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(
    const alloy_host_api *host) {
  table.device_count = liar_device_count;
  table.compile = liar_compile;
  table.claim = liar_claim;
  table.buffer_allocate = liar_buffer_allocate;
  return tp_init(host, &table);
}
