/*
 * tests/hostile_plugins/hang.c: a plugin that never returns from one of
 * its entries, for `alloy run --isolate --isolate-timeout SECONDS`
 * (tests/hostile.sh): the run must give up on it after the timeout, kill
 * its process, say which backend and what it was doing, and exit.
 *
 * Otherwise it is the test plugins' backend (tests/plugins/testplugin.h):
 * it claims f32 aten.relu.default and runs one-node partitions of it.
 *
 *   ALLOY_TEST_HANG_IN  the entry that hangs: compile or execute (default
 *                       execute)
 *
 * It sleeps rather than spins, so that a test machine is not kept busy
 * while the host waits it out.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TP_NAME "hang"
#include "../plugins/testplugin.h"

static void hang_maybe_hang(const char *entry) {
  const char *in = getenv("ALLOY_TEST_HANG_IN");
  if (strcmp(in && *in ? in : "execute", entry) != 0) return;
  for (;;) sleep(1000);
}

static alloy_error *hang_compile(alloy_backend *be, const alloy_graph *partition,
                                 const alloy_compile_options *options,
                                 alloy_executable **out) {
  hang_maybe_hang("compile");
  return tp_compile(be, partition, options, out);
}

static alloy_error *hang_execute(alloy_backend *be, alloy_executable *exe,
                                 const alloy_execute_args *args) {
  hang_maybe_hang("execute");
  return tp_execute(be, exe, args);
}

static alloy_plugin_api table = {
    .struct_size = ALLOY_PLUGIN_API_STRUCT_SIZE,
    .abi_major = ALLOY_ABI_MAJOR,
    .abi_minor = ALLOY_ABI_MINOR,
    .name = "hang",
    .vendor = "Alloy tests",
    .version = "1.0.0",
    TP_REQUIRED_ENTRIES,
};

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(
    const alloy_host_api *host) {
  table.compile = hang_compile;
  table.execute = hang_execute;
  return tp_init(host, &table);
}
