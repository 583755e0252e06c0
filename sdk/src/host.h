/*
 * sdk/src/host.h: the host side of the plugin ABI, shared by the loader and
 * the runtime: the host function table every plugin receives, and the claims
 * object plugins fill through it.
 */
#ifndef ALLOY_SDK_HOST_H
#define ALLOY_SDK_HOST_H

#include "alloy/plugin.h"
#include "alloy/runtime.h"
#include "ir/ir.h"

/* The table handed to every plugin; static, valid for the process. */
const alloy_host_api *alloy_host_table(void);

/* What a plugin's claim() fills: per node index, claimed or not and cost. */
struct alloy_claims {
  int num_nodes;
  bool *claimed;
  double *cost;
};

/* The last line a plugin logged at warning level or above on this thread:
 * the loader quotes it when a plugin's entry refuses to load. */
const char *alloy_host_last_log(void);
void alloy_host_clear_last_log(void);

/* The reference backend built into the host (reference_backend/). */
const alloy_plugin_api *alloy_ref_plugin_entry(const alloy_host_api *host);

#endif
