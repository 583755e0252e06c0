/*
 * tests/plugins/refuse_init.c: a plugin that declines to load: its entry
 * logs why through host->log and returns NULL, as a vendor plugin does when
 * it finds no device or a driver too old. The host must list it as refused,
 * with the reason it logged, and load the others.
 */
#define TP_NAME "refuse_init"
#include "testplugin.h"

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(
    const alloy_host_api *host) {
  host->log(ALLOY_LOG_ERROR, TP_NAME,
            "refuse_init plugin: no device present, declining to load");
  return NULL;
}
