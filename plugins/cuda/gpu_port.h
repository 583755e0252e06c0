/*
 * plugins/cuda/gpu_port.h: the one place where the CUDA and HIP builds of
 * this backend differ in their view of the GPU runtime. The sources are
 * written against the CUDA driver API and NVRTC (cuMemAlloc, CUstream,
 * nvrtcCompileProgram); built with ALLOY_GPU_HIP, this header gives those
 * names HIP's meaning, the way ggml's vendors/hip.h maps its CUDA backend
 * onto HIP: types and constants become HIP's, and cuda_api.c looks each
 * entry point up in libamdhip64 under its HIP name (hipMalloc), or binds a
 * small adapter where HIP's signature differs (cuda_api.c says which).
 * The same sources build liballoy-cuda.so and liballoy-hip.so; nothing is
 * copied.
 *
 * What the two targets differ in besides names, for the code generator
 * (cuda_codegen.c reads GPU_TARGET): the warp (32 lanes on NVIDIA, a
 * wavefront of 64 on CDNA, 32 or 64 on RDNA: the generated code asks the
 * compiler, __AMDGCN_WAVEFRONT_SIZE), shuffles without masks, half
 * conversions through _Float16 instead of PTX, and no mma.sync (16-bit
 * attention takes the SIMT kernel there). The libraries differ too:
 * cuBLASLt's names map onto hipBLASLt's in blas_port.h, and the HIP build
 * compiles miopen_dnn.c (MIOpen) where the CUDA build compiles cuda_dnn.c
 * (cuDNN), both behind cuda_dnn.h.
 */
#ifndef ALLOY_GPU_PORT_H
#define ALLOY_GPU_PORT_H

#if !defined(ALLOY_GPU_HIP)

#include <cuda.h>
#include <nvrtc.h>

#define GPU_NAME "cuda"            /* the backend's name, and its messages' prefix */
#define GPU_RTC "NVRTC"             /* the run-time compiler, for messages */
#define GPU_INIT_CALL "cuInit"      /* the runtime's first call, for "no device" reasons */
#define GPU_INIT_HINT ""
#define GPU_DEVICE_KIND "CUDA"
#define GPU_ARCH_OPTION "--gpu-architecture=" /* then the device's architecture, "sm_90" */
#define GPU_RTC_OPTIONS CUDA_NVRTC_OPTIONS     /* the rest (cuda_internal.h) */
#define GPU_HAS_MMA_SYNC 1                     /* PTX mma.sync (sm_80 on): 16-bit attention's kernel */
#define GPU_EXT_STREAM ALLOY_EXT_CUDA_STREAM   /* the stream extension queue_import takes */
/* A default stream (a caller's may be one), which cannot be captured. */
#define GPU_STREAM_IS_DEFAULT(s) ((s) == NULL || (s) == CU_STREAM_LEGACY || (s) == CU_STREAM_PER_THREAD)

#else /* HIP */

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__
#endif
#include <hip/hip_runtime_api.h>
#include <hip/hiprtc.h>

#define GPU_NAME "hip"
#define GPU_RTC "hipRTC"
#define GPU_INIT_CALL "hipInit"
#define GPU_INIT_HINT " (no AMD GPU here, or no access to /dev/kfd)"
#define GPU_DEVICE_KIND "HIP"
#define GPU_ARCH_OPTION "--offload-arch=" /* then the gcnArchName, "gfx90a:sramecc+:xnack-" */
#define GPU_RTC_OPTIONS HIP_RTC_OPTIONS   /* the rest (cuda_internal.h) */
#define GPU_HAS_MMA_SYNC 0
#define GPU_EXT_STREAM ALLOY_EXT_HIP_STREAM
#define GPU_STREAM_IS_DEFAULT(s) ((s) == NULL || (s) == hipStreamPerThread)

/* Types. A device pointer stays an integer, as CUDA's, so that offsets add
 * to it; HIP's void * travels in the same register where the two meet. */
typedef hipError_t CUresult;
typedef unsigned long long CUdeviceptr;
typedef hipDevice_t CUdevice;
typedef hipCtx_t CUcontext;
typedef hipStream_t CUstream;
typedef hipEvent_t CUevent;
typedef hipModule_t CUmodule;
typedef hipFunction_t CUfunction;
typedef hipGraph_t CUgraph;
typedef hipGraphExec_t CUgraphExec;
typedef hipDeviceAttribute_t CUdevice_attribute;
typedef hipFuncAttribute CUfunction_attribute;
typedef hipStreamCaptureMode CUstreamCaptureMode;
typedef struct CUgraphExecUpdateResultInfo {
  hipGraphExecUpdateResult result;
  hipGraphNode_t errorNode;
  hipGraphNode_t errorFromNode;
} CUgraphExecUpdateResultInfo;
typedef hiprtcResult nvrtcResult;
typedef hiprtcProgram nvrtcProgram;

/* Constants. */
#define CUDA_SUCCESS hipSuccess
#define CUDA_ERROR_OUT_OF_MEMORY hipErrorOutOfMemory
#define CUDA_ERROR_NOT_READY hipErrorNotReady
#define CUDA_ERROR_LAUNCH_FAILED hipErrorLaunchFailure
#define CUDA_ERROR_ILLEGAL_ADDRESS hipErrorIllegalAddress
#define CUDA_ERROR_NOT_FOUND hipErrorNotFound
#define NVRTC_SUCCESS HIPRTC_SUCCESS
#define CU_STREAM_NON_BLOCKING hipStreamNonBlocking
#define CU_EVENT_DEFAULT hipEventDefault
#define CU_EVENT_DISABLE_TIMING hipEventDisableTiming
#define CU_STREAM_CAPTURE_MODE_THREAD_LOCAL hipStreamCaptureModeThreadLocal
#define CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES hipFuncAttributeMaxDynamicSharedMemorySize
#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT hipDeviceAttributeMultiprocessorCount
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR hipDeviceAttributeComputeCapabilityMajor
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR hipDeviceAttributeComputeCapabilityMinor
#define CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE hipDeviceAttributeMemoryClockRate
#define CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH hipDeviceAttributeMemoryBusWidth
#define CU_DEVICE_ATTRIBUTE_CLOCK_RATE hipDeviceAttributeClockRate

/* The entry points in CUDA's shape (declared, never defined: the table's
 * fields take their types; cuda_api.c fills them from libamdhip64). */
CUresult cuInit(unsigned int flags);
CUresult cuDriverGetVersion(int *version);
CUresult cuGetErrorString(CUresult error, const char **str);
CUresult cuDeviceGetCount(int *count);
CUresult cuDeviceGet(CUdevice *device, int ordinal);
CUresult cuDeviceGetName(char *name, int len, CUdevice dev);
CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attrib, CUdevice dev);
CUresult cuDeviceTotalMem(size_t *bytes, CUdevice dev);
CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev);
CUresult cuDevicePrimaryCtxRelease(CUdevice dev);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuCtxSynchronize(void);
CUresult cuMemGetInfo(size_t *free, size_t *total);
CUresult cuMemAlloc(CUdeviceptr *dptr, size_t bytes);
CUresult cuMemFree(CUdeviceptr dptr);
CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytes, CUstream stream);
CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream);
CUresult cuMemAllocHost(void **pp, size_t bytes);
CUresult cuMemFreeHost(void *p);
CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream);
CUresult cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t bytes, CUstream stream);
CUresult cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream);
CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t n, CUstream stream);
CUresult cuStreamCreate(CUstream *stream, unsigned int flags);
CUresult cuStreamDestroy(CUstream stream);
CUresult cuStreamSynchronize(CUstream stream);
CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags);
CUresult cuEventCreate(CUevent *event, unsigned int flags);
CUresult cuEventRecord(CUevent event, CUstream stream);
CUresult cuEventSynchronize(CUevent event);
CUresult cuEventQuery(CUevent event);
CUresult cuEventDestroy(CUevent event);
CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end);
CUresult cuModuleLoadData(CUmodule *module, const void *image);
CUresult cuModuleUnload(CUmodule module);
CUresult cuModuleGetFunction(CUfunction *fn, CUmodule module, const char *name);
CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                        unsigned int by, unsigned int bz, unsigned int shmem, CUstream stream, void **params,
                        void **extra);
CUresult cuFuncSetAttribute(CUfunction fn, CUfunction_attribute attrib, int value);
CUresult cuStreamBeginCapture(CUstream stream, CUstreamCaptureMode mode);
CUresult cuStreamEndCapture(CUstream stream, CUgraph *graph);
CUresult cuGraphInstantiate(CUgraphExec *exec, CUgraph graph, unsigned long long flags);
CUresult cuGraphExecUpdate(CUgraphExec exec, CUgraph graph, CUgraphExecUpdateResultInfo *info);
CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream);
CUresult cuGraphExecDestroy(CUgraphExec exec);
CUresult cuGraphDestroy(CUgraph graph);
nvrtcResult nvrtcVersion(int *major, int *minor);
const char *nvrtcGetErrorString(nvrtcResult result);
nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src, const char *name, int nheaders,
                               const char *const *headers, const char *const *include_names);
nvrtcResult nvrtcDestroyProgram(nvrtcProgram *prog);
nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int nopts, const char *const *opts);
nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram prog, size_t *size);
nvrtcResult nvrtcGetProgramLog(nvrtcProgram prog, char *log);
nvrtcResult nvrtcGetCUBINSize(nvrtcProgram prog, size_t *size);
nvrtcResult nvrtcGetCUBIN(nvrtcProgram prog, char *code);

#endif /* ALLOY_GPU_HIP */

#endif
