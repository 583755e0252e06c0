/*
 * plugins/cuda/cuda_api.c: opens the CUDA driver and NVRTC with dlopen and
 * looks up the entry points cuda_api.h lists. The driver is libcuda.so.1,
 * installed with the NVIDIA driver; NVRTC comes with the toolkit, found on
 * the loader's path or under $CUDA_HOME (default /usr/local/cuda).
 */
#include "plugins/cuda/cuda_api.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DRIVER_ROW(name) CUDA_SYMBOL(cuda_api, name)
static const cuda_symbol driver_symbols[] = {CUDA_DRIVER_FUNCTIONS(DRIVER_ROW)};
static const cuda_symbol nvrtc_symbols[] = {CUDA_NVRTC_FUNCTIONS(DRIVER_ROW)};

const char *cuda_library_bind(void *table, void *lib, const cuda_symbol *rows, size_t n) {
  for (size_t i = 0; i < n; i++) {
    void *fn = dlsym(lib, rows[i].name);
    if (!fn) return rows[i].name;
    memcpy((char *)table + rows[i].offset, &fn, sizeof fn);
  }
  return NULL;
}

void *cuda_library_open(const char *const *names, size_t n, const char *fallback) {
  for (size_t i = 0; i < n; i++) {
    void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (lib) return lib;
  }
  const char *home = getenv("CUDA_HOME");
  char path[4096];
  snprintf(path, sizeof path, "%s/lib64/%s", home && *home ? home : "/usr/local/cuda", fallback);
  return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

const char *cuda_api_open(cuda_api *api, char *why_buf, size_t cap) {
  memset(api, 0, sizeof *api);
  api->driver_lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!api->driver_lib) return "libcuda.so.1 not found: no NVIDIA driver on this machine";
  const char *missing = cuda_library_bind(api, api->driver_lib, driver_symbols,
                                          sizeof driver_symbols / sizeof *driver_symbols);
  if (missing) {
    snprintf(why_buf, cap, "libcuda.so.1 has no %s: the driver is older than CUDA 12", missing);
    cuda_api_close(api);
    return why_buf;
  }
  static const char *const nvrtc_names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"};
  api->nvrtc_lib = cuda_library_open(nvrtc_names, 3, "libnvrtc.so");
  if (!api->nvrtc_lib) {
    cuda_api_close(api);
    return "libnvrtc.so not found (set CUDA_HOME to the CUDA toolkit)";
  }
  missing = cuda_library_bind(api, api->nvrtc_lib, nvrtc_symbols, sizeof nvrtc_symbols / sizeof *nvrtc_symbols);
  if (missing) {
    snprintf(why_buf, cap, "libnvrtc.so has no %s", missing);
    cuda_api_close(api);
    return why_buf;
  }
  return NULL;
}

void cuda_api_close(cuda_api *api) {
  if (api->nvrtc_lib) dlclose(api->nvrtc_lib);
  if (api->driver_lib) dlclose(api->driver_lib);
  memset(api, 0, sizeof *api);
}
