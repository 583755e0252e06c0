/*
 * tests/plugins/failing.c: a plugin whose entries fail on purpose, each with
 * the message "failing plugin: <entry> always fails", so that the loader
 * tests can check that every failure reaches the caller with the plugin's
 * own message, and that nothing leaks on the way (valgrind). It has one
 * device, claims aten.relu.default, and its buffers are not host-visible, so
 * a run has to go through the copy entries.
 *
 * Which entries fail is read from $ALLOY_TEST_FAIL at backend_open (names
 * of entries, comma-separated, or "all" or "none"); unset, every fallible
 * entry fails except backend_open and claim, so that the backend opens and
 * claims relu and each later step fails. testplugin.h has the details.
 */
#define TP_NAME "failing"
#define TP_FAILING 1
#include "testplugin.h"

static const alloy_plugin_api table = {
    .struct_size = ALLOY_PLUGIN_API_STRUCT_SIZE,
    .abi_major = ALLOY_ABI_MAJOR,
    .abi_minor = ALLOY_ABI_MINOR,
    .name = "failing",
    .vendor = "Alloy tests",
    .version = "1.0.0",
    TP_REQUIRED_ENTRIES,
    TP_OPTIONAL_ENTRIES,
};

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(
    const alloy_host_api *host) {
  return tp_init(host, &table);
}
