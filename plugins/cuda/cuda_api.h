/*
 * plugins/cuda/cuda_api.h: the CUDA driver and NVRTC entry points the cuda
 * backend calls, opened with dlopen at backend_open. The plugin links
 * against neither library: on a machine without a driver it still loads,
 * and `alloy backends` lists it as "no device" with the reason.
 *
 * Each table is an X-macro list of the functions' names as cuda.h and
 * nvrtc.h spell them; the headers' versioning macros (cuMemAlloc is
 * cuMemAlloc_v2) apply to the field names and to the symbols looked up
 * alike, so a call reads api->cuMemAlloc(...) as in plain CUDA code.
 */
#ifndef ALLOY_CUDA_API_H
#define ALLOY_CUDA_API_H

#include <cuda.h>
#include <nvrtc.h>

#define CUDA_DRIVER_FUNCTIONS(X)                                                               \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorString) X(cuDeviceGetCount) X(cuDeviceGet)    \
  X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain) \
  X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuCtxSynchronize) X(cuMemGetInfo)        \
  X(cuMemAlloc) X(cuMemFree) X(cuMemAllocAsync) X(cuMemFreeAsync) X(cuMemAllocHost)         \
  X(cuMemFreeHost) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) X(cuMemcpyDtoDAsync)           \
  X(cuMemsetD8Async) X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize)            \
  X(cuStreamWaitEvent) X(cuEventCreate) X(cuEventRecord) X(cuEventSynchronize)              \
  X(cuEventQuery) X(cuEventDestroy) X(cuModuleLoadData) X(cuModuleUnload)                   \
  X(cuModuleGetFunction) X(cuLaunchKernel) X(cuFuncSetAttribute) X(cuEventElapsedTime)         \
  X(cuStreamBeginCapture) X(cuStreamEndCapture) X(cuGraphInstantiate) X(cuGraphExecUpdate)   \
  X(cuGraphLaunch) X(cuGraphExecDestroy) X(cuGraphDestroy)

#define CUDA_NVRTC_FUNCTIONS(X)                                                               \
  X(nvrtcGetErrorString) X(nvrtcVersion) X(nvrtcCreateProgram) X(nvrtcDestroyProgram)       \
  X(nvrtcCompileProgram) X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog) X(nvrtcGetCUBINSize) \
  X(nvrtcGetCUBIN)

#define CUDA_API_FIELD(name) __typeof__(name) *name;

typedef struct cuda_api {
  void *driver_lib, *nvrtc_lib; /* dlopen handles, closed by cuda_api_close */
  CUDA_DRIVER_FUNCTIONS(CUDA_API_FIELD)
  CUDA_NVRTC_FUNCTIONS(CUDA_API_FIELD)
} cuda_api;

/* A library entry point to look up: its symbol (after the headers'
 * versioning macros) and where its pointer goes in the table being filled. */
typedef struct cuda_symbol {
  const char *name;
  size_t offset;
} cuda_symbol;
#define CUDA_STR_(x) #x
#define CUDA_STR(x) CUDA_STR_(x)
#define CUDA_SYMBOL(table, name) {CUDA_STR(name), offsetof(table, name)},

/* Opens the first of names (sonames) that loads, else lib64/<fallback>
 * under $CUDA_HOME (default /usr/local/cuda); NULL when none does. */
void *cuda_library_open(const char *const *names, size_t n, const char *fallback);
/* Fills table's fields from lib; the first missing symbol's name, or NULL. */
const char *cuda_library_bind(void *table, void *lib, const cuda_symbol *rows, size_t n);

/* Opens libcuda.so.1 and NVRTC and fills *api. Returns NULL, or a static
 * sentence saying what is missing ("libcuda.so.1 not found: no NVIDIA
 * driver"), in which case nothing stays open. why_buf (cap bytes) holds
 * the dlerror text the sentence may point into. */
const char *cuda_api_open(cuda_api *api, char *why_buf, size_t cap);
void cuda_api_close(cuda_api *api);

#endif
