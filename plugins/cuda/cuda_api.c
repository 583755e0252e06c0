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

#define STR_(x) #x
#define STR(x) STR_(x)

typedef struct symbol_row {
  const char *name; /* the symbol, after cuda.h's versioning macros */
  size_t offset;    /* of its field in cuda_api */
} symbol_row;

#define SYMBOL_ROW(name) {STR(name), offsetof(cuda_api, name)},
static const symbol_row driver_symbols[] = {CUDA_DRIVER_FUNCTIONS(SYMBOL_ROW)};
static const symbol_row nvrtc_symbols[] = {CUDA_NVRTC_FUNCTIONS(SYMBOL_ROW)};

/* Fills the fields of rows from lib; the first missing symbol's name, or NULL. */
static const char *bind(cuda_api *api, void *lib, const symbol_row *rows, size_t n) {
  for (size_t i = 0; i < n; i++) {
    void *fn = dlsym(lib, rows[i].name);
    if (!fn) return rows[i].name;
    memcpy((char *)api + rows[i].offset, &fn, sizeof fn);
  }
  return NULL;
}

static void *open_nvrtc(void) {
  static const char *names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (lib) return lib;
  }
  const char *home = getenv("CUDA_HOME");
  char path[4096];
  snprintf(path, sizeof path, "%s/lib64/libnvrtc.so", home && *home ? home : "/usr/local/cuda");
  return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

const char *cuda_api_open(cuda_api *api, char *why_buf, size_t cap) {
  memset(api, 0, sizeof *api);
  api->driver_lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!api->driver_lib) return "libcuda.so.1 not found: no NVIDIA driver on this machine";
  const char *missing = bind(api, api->driver_lib, driver_symbols,
                             sizeof driver_symbols / sizeof *driver_symbols);
  if (missing) {
    snprintf(why_buf, cap, "libcuda.so.1 has no %s: the driver is older than CUDA 12", missing);
    cuda_api_close(api);
    return why_buf;
  }
  api->nvrtc_lib = open_nvrtc();
  if (!api->nvrtc_lib) {
    cuda_api_close(api);
    return "libnvrtc.so not found (set CUDA_HOME to the CUDA toolkit)";
  }
  missing = bind(api, api->nvrtc_lib, nvrtc_symbols, sizeof nvrtc_symbols / sizeof *nvrtc_symbols);
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
