/*
 * tests/plugins/missing_required.c: a plugin whose table leaves a required
 * entry, compile, NULL. The host must refuse it at load time, naming the
 * entry, rather than crash on the first compile. The table is written out
 * in full (not with TP_REQUIRED_ENTRIES) so that the NULL is plain to see.
 */
#define TP_NAME "missing_required"
#include "testplugin.h"

static const alloy_plugin_api table = {
    .struct_size = ALLOY_PLUGIN_API_STRUCT_SIZE,
    .abi_major = ALLOY_ABI_MAJOR,
    .abi_minor = ALLOY_ABI_MINOR,
    .name = "missing_required",
    .vendor = "Alloy tests",
    .version = "1.0.0",
    .backend_open = tp_backend_open,
    .backend_close = tp_backend_close,
    .device_count = tp_device_count,
    .device_info = tp_device_info,
    .claim = tp_claim,
    .compile = NULL, /* required: the point of this plugin */
    .execute = tp_execute,
    .executable_release = tp_executable_release,
    .buffer_allocate = tp_buffer_allocate,
    .buffer_release = tp_buffer_release,
    .buffer_host_pointer = tp_buffer_host_pointer,
    .buffer_copy_from_host = tp_buffer_copy_from_host,
    .buffer_copy_to_host = tp_buffer_copy_to_host,
    .buffer_copy = tp_buffer_copy,
    .queue_create = tp_queue_create,
    .queue_release = tp_queue_release,
    .event_wait = tp_event_wait,
    .event_query = tp_event_query,
    .event_release = tp_event_release,
};

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(
    const alloy_host_api *host) {
  return tp_init(host, &table);
}
