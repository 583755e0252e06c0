/*
 * reference_backend/ref.c: the reference CPU backend, "ref": the oracle
 * every other backend is compared with, and the backend Alloy runs on when
 * no plugin is found. It is written with the same kernel-table helper a
 * vendor uses (alloy/kernel_table.h), so it is built into the host and
 * shipped as liballoy-ref.so from this one source.
 *
 * Its kernels take the whole call (`call` signature): they read strided
 * inputs of any dtype and compute as PyTorch does, float16 and bfloat16 in
 * float32 ("opmath") rounded once on store, integers in wrapping int64.
 * The kernels live by family in reference_backend/kernels_*.c; this file
 * holds the table and the entry.
 */
#include <pthread.h>

#include "reference_backend/ref.h"

/* The helper takes one array: the families are joined once, under
 * pthread_once, into a static one. */
static alloy_kernel all_kernels[4096];
static alloy_kernel_table table;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_build(void) {
  int n = ref_kernels_join(all_kernels, (int)(sizeof all_kernels / sizeof all_kernels[0]));
  table = (alloy_kernel_table){.struct_size = sizeof(alloy_kernel_table),
                               .name = "ref",
                               .vendor = "Alloy",
                               .version = "0.1.0",
                               .kernels = all_kernels,
                               .count = n};
}

static const alloy_plugin_api *ref_plugin(const alloy_host_api *host) {
  pthread_once(&table_once, table_build);
  return alloy_kernel_table_plugin(&table, host);
}

#ifdef ALLOY_PLUGIN_BUILD
ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(const alloy_host_api *host);
ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(const alloy_host_api *host) {
  return ref_plugin(host);
}
#else
const alloy_plugin_api *alloy_ref_plugin_entry(const alloy_host_api *host);
const alloy_plugin_api *alloy_ref_plugin_entry(const alloy_host_api *host) {
  return ref_plugin(host);
}
#endif
