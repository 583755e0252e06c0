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

/* A claim group (host->claims_add_group): nodes claimed all or nothing,
 * at one cost for the whole group. */
typedef struct claims_group {
  int *nodes;  /* malloc'd, n node indices, ascending, distinct */
  int n;
  double cost; /* seconds for the whole group; <= 0: no estimate */
} claims_group;

/* What a plugin's claim() fills: per node index, claimed or not and cost;
 * the groups it claimed; why it left a node (claims_reject). The first
 * three fields are set by whoever asks for claims; the rest start zeroed
 * (NULL, 0) and are filled by the host entries, then released with
 * claims_release. A member of a group not claimed alone is marked claimed
 * with cost 0 (what tells a group-only claim apart, claims.c); one claimed
 * alone keeps its claim and cost. */
struct alloy_claims {
  int num_nodes;
  bool *claimed;
  double *cost;
  claims_group *groups; /* malloc'd, ngroups entries                      */
  int ngroups, cap_groups;
  char **reason;        /* NULL, or num_nodes entries: malloc'd or NULL  */
};

/* Frees groups and reasons (not claimed/cost, which the caller owns) and
 * zeroes those fields. */
void claims_release(alloy_claims *c);

/* An error a plugin returned to the host (entry names the entry, backend
 * the plugin): the error itself when host->error_new made it and no one
 * took it yet, else a new error saying what came back instead (a pointer
 * the host never made is never read: a plugin's bug must not crash the
 * host). NULL stays NULL. Thread-safe. */
alloy_error *host_error_take(alloy_error *e, const char *backend, const char *entry);

/* Tracing (sdk/src/trace.c): the host's monotonic clock, whether a trace
 * is being recorded (alloy_trace_start), and a range on a track of the
 * host ("alloy") or of a plugin. Thread-safe; cheap when off. */
uint64_t trace_clock_ns(void);
bool trace_on(void);
void trace_range(const char *process, const char *track, const char *name, uint64_t begin_ns,
                 uint64_t end_ns);

/* The last line a plugin logged at warning level or above on this thread:
 * the loader quotes it when a plugin's entry refuses to load. */
const char *alloy_host_last_log(void);
void alloy_host_clear_last_log(void);

/* The reference backend built into the host (reference_backend/). */
const alloy_plugin_api *alloy_ref_plugin_entry(const alloy_host_api *host);

#endif
