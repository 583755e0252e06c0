/*
 * tests/hostile_plugins/crashy.c: a plugin that kills its process in one
 * of its entries, for `alloy run --isolate` (tests/hostile.sh): the run
 * must name the backend, how it died and what it was doing, and exit with
 * a status of its own rather than die with it.
 *
 * Otherwise it is the test plugins' backend (tests/plugins/testplugin.h):
 * it claims f32 aten.relu.default and runs one-node partitions of it.
 *
 *   ALLOY_TEST_CRASH_IN  the entry that dies: claim, compile or execute
 *                        (default execute)
 *   ALLOY_TEST_CRASH_BY  how: segv (default), abort, or exit (status 3,
 *                        as a plugin that calls exit() on an error would)
 *
 * A segv restores the default action first: a sanitizer's handler (make
 * asan) would otherwise turn the signal into an exit status, and the
 * tests want the death a plain build of the plugin would have.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define TP_NAME "crashy"
#include "../plugins/testplugin.h"

static void crashy_maybe_die(const char *entry) {
  const char *in = getenv("ALLOY_TEST_CRASH_IN");
  if (strcmp(in && *in ? in : "execute", entry) != 0) return;
  const char *by = getenv("ALLOY_TEST_CRASH_BY");
  if (by && !strcmp(by, "abort")) abort();
  if (by && !strcmp(by, "exit")) exit(3);
  signal(SIGSEGV, SIG_DFL);
  raise(SIGSEGV);
}

static alloy_error *crashy_claim(alloy_backend *be, const alloy_graph *g,
                                 alloy_claims *claims) {
  crashy_maybe_die("claim");
  return tp_claim(be, g, claims);
}

static alloy_error *crashy_compile(alloy_backend *be,
                                   const alloy_graph *partition,
                                   const alloy_compile_options *options,
                                   alloy_executable **out) {
  crashy_maybe_die("compile");
  return tp_compile(be, partition, options, out);
}

static alloy_error *crashy_execute(alloy_backend *be, alloy_executable *exe,
                                   const alloy_execute_args *args) {
  crashy_maybe_die("execute");
  return tp_execute(be, exe, args);
}

static alloy_plugin_api table = {
    .struct_size = ALLOY_PLUGIN_API_STRUCT_SIZE,
    .abi_major = ALLOY_ABI_MAJOR,
    .abi_minor = ALLOY_ABI_MINOR,
    .name = "crashy",
    .vendor = "Alloy tests",
    .version = "1.0.0",
    TP_REQUIRED_ENTRIES,
};

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(
    const alloy_host_api *host) {
  table.claim = crashy_claim;
  table.compile = crashy_compile;
  table.execute = crashy_execute;
  return tp_init(host, &table);
}
