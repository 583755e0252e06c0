/*
 * plugins/cuda/cuda_api.h: the CUDA driver and NVRTC entry points the cuda
 * backend calls, opened with dlopen at backend_open. The plugin links
 * against neither library: on a machine without a driver it still loads,
 * and `alloy backends` lists it as "no device" with the reason.
 *
 * Each table is an X-macro list of the functions' names as cuda.h and
 * nvrtc.h spell them; the headers' versioning macros (cuMemAlloc is
 * cuMemAlloc_v2) apply to the field names and to the symbols looked up
 * alike, so a call reads api->cuMemAlloc(...) as in plain CUDA code. The
 * HIP build (gpu_port.h) fills the same fields from libamdhip64, whose
 * hipRTC stands in for NVRTC.
 */
#ifndef ALLOY_CUDA_API_H
#define ALLOY_CUDA_API_H

#include "plugins/cuda/gpu_port.h"
#include <dlfcn.h>

/* Each entry: its CUDA name, then the HIP build's (gpu_port.h): the
 * function of libamdhip64 it is, or `adapter` where HIP's signature
 * differs and cuda_api.c binds a small function of its own. */
#define CUDA_DRIVER_FUNCTIONS(X)                                                                            \
  X(cuInit, hipInit) X(cuDriverGetVersion, hipDriverGetVersion) X(cuGetErrorString, adapter)              \
  X(cuDeviceGetCount, hipGetDeviceCount) X(cuDeviceGet, hipDeviceGet) X(cuDeviceGetName, hipDeviceGetName) \
  X(cuDeviceGetAttribute, hipDeviceGetAttribute) X(cuDeviceTotalMem, hipDeviceTotalMem)                    \
  X(cuDevicePrimaryCtxRetain, hipDevicePrimaryCtxRetain)                                                   \
  X(cuDevicePrimaryCtxRelease, hipDevicePrimaryCtxRelease) X(cuCtxSetCurrent, hipCtxSetCurrent)            \
  X(cuCtxSynchronize, hipCtxSynchronize) X(cuMemGetInfo, hipMemGetInfo) X(cuMemAlloc, hipMalloc)           \
  X(cuMemFree, hipFree) X(cuMemAllocAsync, hipMallocAsync) X(cuMemFreeAsync, hipFreeAsync)                 \
  X(cuMemAllocHost, adapter) X(cuMemFreeHost, hipHostFree) X(cuMemcpyHtoDAsync, hipMemcpyHtoDAsync)        \
  X(cuMemcpyDtoHAsync, hipMemcpyDtoHAsync) X(cuMemcpyDtoDAsync, hipMemcpyDtoDAsync)                        \
  X(cuMemsetD8Async, hipMemsetD8Async) X(cuStreamCreate, hipStreamCreateWithFlags)                         \
  X(cuStreamDestroy, hipStreamDestroy) X(cuStreamSynchronize, hipStreamSynchronize)                        \
  X(cuStreamWaitEvent, hipStreamWaitEvent) X(cuEventCreate, hipEventCreateWithFlags)                       \
  X(cuEventRecord, hipEventRecord) X(cuEventSynchronize, hipEventSynchronize) X(cuEventQuery, hipEventQuery) \
  X(cuEventDestroy, hipEventDestroy) X(cuModuleLoadData, hipModuleLoadData) X(cuModuleUnload, hipModuleUnload) \
  X(cuModuleGetFunction, hipModuleGetFunction) X(cuLaunchKernel, hipModuleLaunchKernel)                    \
  X(cuFuncSetAttribute, adapter) X(cuEventElapsedTime, hipEventElapsedTime)                                \
  X(cuStreamBeginCapture, hipStreamBeginCapture) X(cuStreamEndCapture, hipStreamEndCapture)                \
  X(cuGraphInstantiate, hipGraphInstantiateWithFlags) X(cuGraphExecUpdate, adapter)                         \
  X(cuGraphLaunch, hipGraphLaunch) X(cuGraphExecDestroy, hipGraphExecDestroy) X(cuGraphDestroy, hipGraphDestroy)

#define CUDA_NVRTC_FUNCTIONS(X)                                                                     \
  X(nvrtcGetErrorString, hiprtcGetErrorString) X(nvrtcVersion, hiprtcVersion)                      \
  X(nvrtcCreateProgram, hiprtcCreateProgram) X(nvrtcDestroyProgram, hiprtcDestroyProgram)          \
  X(nvrtcCompileProgram, hiprtcCompileProgram) X(nvrtcGetProgramLogSize, hiprtcGetProgramLogSize)  \
  X(nvrtcGetProgramLog, hiprtcGetProgramLog) X(nvrtcGetCUBINSize, hiprtcGetCodeSize)               \
  X(nvrtcGetCUBIN, hiprtcGetCode)

#define CUDA_API_FIELD(name, hip) __typeof__(name) *name;

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

/* How the GPU libraries are opened: never unloaded, even by the last
 * dlclose. A profiler (CUPTI, under torch.profiler or nsys) hooks the
 * driver, cuBLASLt and cuDNN once loaded; a library unloaded and loaded
 * again under those hooks crashes the next load (seen on an H100: a
 * Python model closed after profiling, the next one segfaulted in its
 * compile). PyTorch never unloads them either. */
#define CUDA_DLOPEN_FLAGS (RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)

/* Opens the first of names (sonames) that loads, else lib64/<fallback>
 * under $CUDA_HOME (default /usr/local/cuda); NULL when none does. */
void *cuda_library_open(const char *const *names, size_t n, const char *fallback);
/* Fills table's fields from lib; the first missing symbol's name, or NULL. */
const char *cuda_library_bind(void *table, void *lib, const cuda_symbol *rows, size_t n);

/* Opens libcuda.so.1 and NVRTC (HIP: libamdhip64, hipRTC within) and
 * fills *api. Returns NULL, or a static sentence saying what is missing
 * ("libcuda.so.1 not found: no NVIDIA driver"), in which case nothing
 * stays open. why_buf (cap bytes) holds the text the sentence may point
 * into. */
const char *cuda_api_open(cuda_api *api, char *why_buf, size_t cap);
/* The architecture run-time compiles target: "sm_90" from the compute
 * capability (CUDA), the gcnArchName "gfx90a:sramecc+:xnack-" (HIP); into
 * buf (cap bytes), which it returns. */
const char *cuda_device_arch(const cuda_api *api, CUdevice dev, char *buf, size_t cap);
void cuda_api_close(cuda_api *api);

/* Timing candidates at planning, for the library plans that can choose
 * (cuDNN's engines, cuBLASLt's algorithms), borrowed for the planning
 * call: the first `candidates` each run on scratch operands of the plan's
 * shapes (zeros, allocated and freed by the planner) on stream, once to
 * warm up and then `runs` times between two events; the fastest is kept.
 * candidates <= 1: the library's first choice, untimed. */
typedef struct cuda_tuning {
  const cuda_api *api; /* the driver's entry points */
  CUstream stream;
  int candidates;
  int runs;
} cuda_tuning;

#endif
