/*
 * sdk/src/runtime_internal.h: the runtime's structures, shared by the loader
 * (loader.c) and programs (program.c).
 */
#ifndef ALLOY_SDK_RUNTIME_INTERNAL_H
#define ALLOY_SDK_RUNTIME_INTERNAL_H

#include "sdk/src/host.h"

/* One plugin found: loaded and open, or refused with a reason. */
typedef struct alloy_loaded {
  char *name, *vendor, *version, *path, *status, *devices;
  uint32_t abi_major, abi_minor;
  int num_devices;
  bool ok;
  void *dl;                   /* dlopen handle; NULL when built in */
  const alloy_plugin_api *api; /* valid when ok */
  alloy_backend *be;          /* valid when ok */
} alloy_loaded;

struct alloy_runtime {
  alloy_loaded *backends; /* in priority order once open returns */
  int num, cap;
};

#endif
