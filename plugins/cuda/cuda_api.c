/*
 * plugins/cuda/cuda_api.c: opens the CUDA driver and NVRTC with dlopen and
 * looks up the entry points cuda_api.h lists. The driver is libcuda.so.1,
 * installed with the NVIDIA driver; NVRTC comes with the toolkit, found on
 * the loader's path or under $CUDA_HOME (default /usr/local/cuda). The HIP
 * build (gpu_port.h) opens libamdhip64.so.5 (or .6), which holds hipRTC
 * too, found on the loader's path or under $ROCM_PATH (default /opt/rocm),
 * and binds four adapters where HIP's entry point differs from CUDA's.
 */
#include "plugins/cuda/cuda_api.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(ALLOY_GPU_HIP)
#define DRIVER_ROW(name, hip) CUDA_SYMBOL(cuda_api, name)
#else
#define DRIVER_ROW(name, hip) {#hip, offsetof(cuda_api, name)},
#endif
static const cuda_symbol driver_symbols[] = {CUDA_DRIVER_FUNCTIONS(DRIVER_ROW)};
static const cuda_symbol nvrtc_symbols[] = {CUDA_NVRTC_FUNCTIONS(DRIVER_ROW)};

const char *cuda_library_bind(void *table, void *lib, const cuda_symbol *rows, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (!strcmp(rows[i].name, "adapter")) continue; /* bound by cuda_api_open (HIP) */
    void *fn = dlsym(lib, rows[i].name);
    if (!fn) return rows[i].name;
    memcpy((char *)table + rows[i].offset, &fn, sizeof fn);
  }
  return NULL;
}

void *cuda_library_open(const char *const *names, size_t n, const char *fallback) {
  for (size_t i = 0; i < n; i++) {
    void *lib = dlopen(names[i], CUDA_DLOPEN_FLAGS);
    if (lib) return lib;
  }
  const char *home = getenv("CUDA_HOME");
  char path[4096];
  snprintf(path, sizeof path, "%s/lib64/%s", home && *home ? home : "/usr/local/cuda", fallback);
  return dlopen(path, CUDA_DLOPEN_FLAGS);
}

#if !defined(ALLOY_GPU_HIP)

const char *cuda_api_open(cuda_api *api, char *why_buf, size_t cap) {
  memset(api, 0, sizeof *api);
  api->driver_lib = dlopen("libcuda.so.1", CUDA_DLOPEN_FLAGS);
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

const char *cuda_device_arch(const cuda_api *api, CUdevice dev, char *buf, size_t cap) {
  int major = 0, minor = 0;
  api->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  api->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  snprintf(buf, cap, "sm_%d%d", major, minor);
  return buf;
}

#else /* HIP */

/* HIP's own entry points the adapters call (one library per process). */
typedef struct hip_own {
  const char *(*get_error_string)(hipError_t);
  hipError_t (*host_malloc)(void **, size_t, unsigned int);
  hipError_t (*graph_exec_update)(hipGraphExec_t, hipGraph_t, hipGraphNode_t *, hipGraphExecUpdateResult *);
  hipError_t (*device_properties)(hipDeviceProp_t *, int);
} hip_own;
static hip_own hip;

/* hipGetErrorString returns the text rather than filling a pointer. */
static CUresult hip_get_error_string(CUresult error, const char **str) {
  *str = hip.get_error_string ? hip.get_error_string(error) : NULL;
  return *str ? hipSuccess : hipErrorInvalidValue;
}

/* hipHostMalloc takes flags (none: pinned, portable as CUDA's default). */
static CUresult hip_mem_alloc_host(void **pp, size_t bytes) { return hip.host_malloc(pp, bytes, 0); }

/* CUDA asks for dynamic shared memory past 48 KiB; an AMD GPU's LDS is 64
 * KiB to every kernel without asking, and nothing past it can be had. */
static CUresult hip_func_set_attribute(CUfunction fn, CUfunction_attribute attrib, int value) {
  (void)fn;
  return attrib == hipFuncAttributeMaxDynamicSharedMemorySize && value > 64 * 1024 ? hipErrorInvalidValue
                                                                                     : hipSuccess;
}

/* HIP reports the update's result in two outputs instead of a struct. */
static CUresult hip_graph_exec_update(CUgraphExec exec, CUgraph graph, CUgraphExecUpdateResultInfo *info) {
  CUgraphExecUpdateResultInfo tmp = {0};
  if (!info) info = &tmp;
  return hip.graph_exec_update(exec, graph, &info->errorNode, &info->result);
}

const char *cuda_api_open(cuda_api *api, char *why_buf, size_t cap) {
  memset(api, 0, sizeof *api);
  static const char *const names[] = {"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"};
  for (size_t i = 0; i < 3 && !api->driver_lib; i++) api->driver_lib = dlopen(names[i], CUDA_DLOPEN_FLAGS);
  if (!api->driver_lib) {
    const char *rocm = getenv("ROCM_PATH");
    snprintf(why_buf, cap, "%s/lib/libamdhip64.so", rocm && *rocm ? rocm : "/opt/rocm");
    api->driver_lib = dlopen(why_buf, CUDA_DLOPEN_FLAGS);
  }
  if (!api->driver_lib) return "libamdhip64.so not found: no HIP runtime (ROCm) on this machine";
  const char *missing = cuda_library_bind(api, api->driver_lib, driver_symbols,
                                          sizeof driver_symbols / sizeof *driver_symbols);
  if (!missing)
    missing = cuda_library_bind(api, api->driver_lib, nvrtc_symbols, sizeof nvrtc_symbols / sizeof *nvrtc_symbols);
  static const cuda_symbol own[] = {{"hipGetErrorString", offsetof(hip_own, get_error_string)},
                                    {"hipHostMalloc", offsetof(hip_own, host_malloc)},
                                    {"hipGraphExecUpdate", offsetof(hip_own, graph_exec_update)},
                                    {"hipGetDeviceProperties", offsetof(hip_own, device_properties)}};
  if (!missing) missing = cuda_library_bind(&hip, api->driver_lib, own, sizeof own / sizeof *own);
  if (missing) {
    snprintf(why_buf, cap, "libamdhip64.so has no %s: the HIP runtime is older than ROCm 5.2", missing);
    cuda_api_close(api);
    return why_buf;
  }
  api->cuGetErrorString = hip_get_error_string;
  api->cuMemAllocHost = hip_mem_alloc_host;
  api->cuFuncSetAttribute = hip_func_set_attribute;
  api->cuGraphExecUpdate = hip_graph_exec_update;
  return NULL;
}

const char *cuda_device_arch(const cuda_api *api, CUdevice dev, char *buf, size_t cap) {
  (void)api;
  hipDeviceProp_t p;
  memset(&p, 0, sizeof p);
  if (hip.device_properties(&p, dev) != hipSuccess || !p.gcnArchName[0]) snprintf(buf, cap, "gfx000");
  else snprintf(buf, cap, "%s", p.gcnArchName);
  return buf;
}

#endif

void cuda_api_close(cuda_api *api) {
  if (api->nvrtc_lib) dlclose(api->nvrtc_lib);
  if (api->driver_lib) dlclose(api->driver_lib);
  memset(api, 0, sizeof *api);
}
