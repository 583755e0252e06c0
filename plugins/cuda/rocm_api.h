/*
 * plugins/cuda/rocm_api.h: the few parts of ROCm's hipBLASLt and MIOpen C
 * APIs the hip backend calls, declared here because neither library nor
 * its headers is in Debian (which has HIP 5.2's runtime and hipcc only):
 * opaque handles, the enum values used, and the entry points' signatures.
 * The libraries themselves are opened with dlopen at run time where a
 * machine has them (rocm_library_open below); blas_port.h maps cuBLASLt's
 * names onto the hipBLASLt part for cuda_blas.c, and miopen_dnn.c calls the
 * MIOpen part. Nothing here is code of those headers: each value and
 * signature was read from the upstream header named, and the tests'
 * fakes (tests/hip/) check the values with literals of their own.
 *
 *   hipBLASLt: library/include/hipblaslt.h of ROCm/hipBLASLt 0.11.0
 *     (commit 7d9fb683, 2024-10-25). Its enums have these values since
 *     0.7.0 (commit 95131d62, where hipDataType and hipblasComputeType_t
 *     replaced hipBLASLt's own type enums, whose values differ):
 *     cuda_blas.c refuses an older library. hipblasStatus_t,
 *     hipblasOperation_t and hipblasComputeType_t are hipBLAS-common's
 *     (library/include/hipblas-common.h of ROCm/hipBLAS-common 1.x);
 *     hipDataType is HIP's (hip/library_types.h of ROCm 6, the values
 *     CUDA's cudaDataType has). Debian's HIP 5.2 declares a hipDataType
 *     without HIP_R_16BF, so the one used here has a name of its own,
 *     rocm_data_type, and can never clash with a HIP header.
 *   MIOpen: include/miopen/miopen.h of ROCm/MIOpen 3.3.0 (commit
 *     2d1fd997, 2024-10-24); the immediate-mode calls exist since 2.0
 *     (commit e42664ed, 2019), miopenSetConvolutionAttribute since late
 *     2021 (commit 3ddeaaad, MIOpen 2.15's tree), so it is optional here.
 *
 * Ownership and threads are the libraries': every handle or descriptor a
 * *Create call makes is the caller's until the matching *Destroy; a
 * hipBLASLt handle may be used from several threads, a MIOpen handle's
 * stream is per handle (miopen_dnn.c holds a lock across setting it and
 * the call that reads it). Only the HIP build includes this header.
 */
#ifndef ALLOY_ROCM_API_H
#define ALLOY_ROCM_API_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "plugins/cuda/gpu_port.h" /* hipStream_t */

/* ---- hipBLASLt (and the hipBLAS-common and HIP types it takes) ------------- */

typedef enum {
  HIPBLAS_STATUS_SUCCESS = 0,
  HIPBLAS_STATUS_NOT_INITIALIZED = 1,
  HIPBLAS_STATUS_ALLOC_FAILED = 2,
  HIPBLAS_STATUS_INVALID_VALUE = 3,
  HIPBLAS_STATUS_MAPPING_ERROR = 4,
  HIPBLAS_STATUS_EXECUTION_FAILED = 5,
  HIPBLAS_STATUS_INTERNAL_ERROR = 6,
  HIPBLAS_STATUS_NOT_SUPPORTED = 7,
  HIPBLAS_STATUS_ARCH_MISMATCH = 8,
  HIPBLAS_STATUS_HANDLE_IS_NULLPTR = 9,
  HIPBLAS_STATUS_INVALID_ENUM = 10,
  HIPBLAS_STATUS_UNKNOWN = 11,
} hipblasStatus_t;

/* hipblasOperation_t: the Netlib values, not cuBLAS's 0 and 1 */
typedef enum { HIPBLAS_OP_N = 111, HIPBLAS_OP_T = 112 } hipblasOperation_t;

/* hipblasComputeType_t (the values of cuBLAS's order, not cuBLAS's values) */
typedef enum { HIPBLAS_COMPUTE_32F = 2, HIPBLAS_COMPUTE_32F_FAST_TF32 = 6 } hipblasComputeType_t;

/* hipDataType (HIP's name; see the file's paragraph) */
typedef enum { ROCM_R_32F = 0, ROCM_R_16F = 2, ROCM_R_16BF = 14 } rocm_data_type;

typedef enum {
  HIPBLASLT_EPILOGUE_DEFAULT = 1,
  HIPBLASLT_EPILOGUE_RELU = 2,
  HIPBLASLT_EPILOGUE_BIAS = 4,
  HIPBLASLT_EPILOGUE_RELU_BIAS = 6,
  HIPBLASLT_EPILOGUE_GELU = 32, /* the tanh approximation, as cuBLASLt's (Tensile's gelu constants) */
  HIPBLASLT_EPILOGUE_GELU_BIAS = 36,
} hipblasLtEpilogue_t;

typedef enum {
  HIPBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 0,          /* int32_t */
  HIPBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 1, /* int64_t, elements */
} hipblasLtMatrixLayoutAttribute_t;

typedef enum {
  HIPBLASLT_MATMUL_DESC_TRANSA = 0,         /* int32_t, a hipblasOperation_t */
  HIPBLASLT_MATMUL_DESC_TRANSB = 1,         /* int32_t */
  HIPBLASLT_MATMUL_DESC_EPILOGUE = 2,       /* uint32_t, a hipblasLtEpilogue_t */
  HIPBLASLT_MATMUL_DESC_BIAS_POINTER = 3,   /* const void *, device memory */
  HIPBLASLT_MATMUL_DESC_BIAS_DATA_TYPE = 4, /* int32_t, a hipDataType */
} hipblasLtMatmulDescAttributes_t;

/* The search mode (0) and this are all of them: no alignment preferences. */
typedef enum {
  HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1 /* uint64_t */
} hipblasLtMatmulPreferenceAttributes_t;

typedef void *hipblasLtHandle_t;
typedef struct rocm_hipblaslt_desc *hipblasLtMatmulDesc_t; /* upstream: pointers to opaque structs */
typedef struct rocm_hipblaslt_layout *hipblasLtMatrixLayout_t;
typedef struct rocm_hipblaslt_pref *hipblasLtMatmulPreference_t;

/* Passed by value and in arrays: the layout must be upstream's. */
typedef struct {
  uint8_t data[16];
  size_t max_workspace_bytes;
} hipblasLtMatmulAlgo_t;

typedef struct {
  hipblasLtMatmulAlgo_t algo;
  size_t workspaceSize;  /* bytes the algorithm needs */
  hipblasStatus_t state; /* the other fields hold only when SUCCESS */
  float wavesCount;
  int reserved[4];
} hipblasLtMatmulHeuristicResult_t;

_Static_assert(sizeof(hipblasLtMatmulAlgo_t) == 24,
               "hipblasLtMatmulAlgo_t is 16 bytes and a size_t upstream");
_Static_assert(sizeof(hipblasLtMatmulHeuristicResult_t) == 56,
               "hipblasLtMatmulHeuristicResult_t's upstream layout");

/* version: MAJOR * 100000 + MINOR * 100 + PATCH (hipblaslt.cpp), 1100 for 0.11.0 */
hipblasStatus_t hipblasLtGetVersion(hipblasLtHandle_t handle, int *version);
hipblasStatus_t hipblasLtCreate(hipblasLtHandle_t *handle);
hipblasStatus_t hipblasLtDestroy(const hipblasLtHandle_t handle);
hipblasStatus_t hipblasLtMatrixLayoutCreate(hipblasLtMatrixLayout_t *matLayout, rocm_data_type type,
                                            uint64_t rows, uint64_t cols, int64_t ld);
hipblasStatus_t hipblasLtMatrixLayoutDestroy(const hipblasLtMatrixLayout_t matLayout);
hipblasStatus_t hipblasLtMatrixLayoutSetAttribute(hipblasLtMatrixLayout_t matLayout,
                                                  hipblasLtMatrixLayoutAttribute_t attr, const void *buf,
                                                  size_t sizeInBytes);
hipblasStatus_t hipblasLtMatmulDescCreate(hipblasLtMatmulDesc_t *matmulDesc, hipblasComputeType_t computeType,
                                          rocm_data_type scaleType);
hipblasStatus_t hipblasLtMatmulDescDestroy(const hipblasLtMatmulDesc_t matmulDesc);
hipblasStatus_t hipblasLtMatmulDescSetAttribute(hipblasLtMatmulDesc_t matmulDesc,
                                                hipblasLtMatmulDescAttributes_t attr, const void *buf,
                                                size_t sizeInBytes);
hipblasStatus_t hipblasLtMatmulPreferenceCreate(hipblasLtMatmulPreference_t *pref);
hipblasStatus_t hipblasLtMatmulPreferenceDestroy(const hipblasLtMatmulPreference_t pref);
hipblasStatus_t hipblasLtMatmulPreferenceSetAttribute(hipblasLtMatmulPreference_t pref,
                                                      hipblasLtMatmulPreferenceAttributes_t attr,
                                                      const void *buf, size_t sizeInBytes);
hipblasStatus_t hipblasLtMatmulAlgoGetHeuristic(hipblasLtHandle_t handle, hipblasLtMatmulDesc_t matmulDesc,
                                                hipblasLtMatrixLayout_t Adesc, hipblasLtMatrixLayout_t Bdesc,
                                                hipblasLtMatrixLayout_t Cdesc, hipblasLtMatrixLayout_t Ddesc,
                                                hipblasLtMatmulPreference_t pref, int requestedAlgoCount,
                                                hipblasLtMatmulHeuristicResult_t heuristicResultsArray[],
                                                int *returnAlgoCount);
hipblasStatus_t hipblasLtMatmul(hipblasLtHandle_t handle, hipblasLtMatmulDesc_t matmulDesc, const void *alpha,
                                const void *A, hipblasLtMatrixLayout_t Adesc, const void *B,
                                hipblasLtMatrixLayout_t Bdesc, const void *beta, const void *C,
                                hipblasLtMatrixLayout_t Cdesc, void *D, hipblasLtMatrixLayout_t Ddesc,
                                const hipblasLtMatmulAlgo_t *algo, void *workspace,
                                size_t workspaceSizeInBytes, hipStream_t stream);

/* ---- MIOpen ------------------------------------------------------------------- */

typedef enum {
  miopenStatusSuccess = 0,
  miopenStatusNotInitialized = 1,
  miopenStatusInvalidValue = 2,
  miopenStatusBadParm = 3,
  miopenStatusAllocFailed = 4,
  miopenStatusInternalError = 5,
  miopenStatusNotImplemented = 6,
  miopenStatusUnknownError = 7,
  miopenStatusUnsupportedOp = 8,
  miopenStatusGpuOperationsSkipped = 9,
  miopenStatusVersionMismatch = 10,
} miopenStatus_t;

typedef enum { miopenHalf = 0, miopenFloat = 1, miopenBFloat16 = 5 } miopenDataType_t;

/* cross-correlation, PyTorch's convolution (the kernel is not flipped) */
typedef enum { miopenConvolution = 0 } miopenConvolutionMode_t;

/* 0 off, 1 on, -1 MIOpen's default (forward off, the backward passes on) */
typedef enum { MIOPEN_CONVOLUTION_ATTRIB_FP16_ALT_IMPL = 0 } miopenConvolutionAttrib_t;

typedef enum {
  miopenConvolutionAlgoGEMM = 0,
  miopenConvolutionAlgoDirect = 1,
  miopenConvolutionAlgoFFT = 2,
  miopenConvolutionAlgoWinograd = 3,
  miopenConvolutionAlgoImplicitGEMM = 5,
} miopenConvAlgorithm_t;

/* One applicable solution, as miopenConvolutionForwardGetSolution fills them
 * (best first, by MIOpen's measurements or its heuristics). */
typedef struct {
  float time;            /* milliseconds, measured or estimated */
  size_t workspace_size; /* bytes */
  uint64_t solution_id;
  miopenConvAlgorithm_t algorithm;
} miopenConvSolution_t;

_Static_assert(sizeof(miopenConvSolution_t) == 32, "miopenConvSolution_t's upstream layout");

/* upstream: MIOPEN_DECLARE_OBJECT, pointers to empty structs */
typedef struct rocm_miopen_handle *miopenHandle_t;
typedef struct rocm_miopen_tensor *miopenTensorDescriptor_t;
typedef struct rocm_miopen_conv *miopenConvolutionDescriptor_t;

miopenStatus_t miopenGetVersion(size_t *major, size_t *minor, size_t *patch);
const char *miopenGetErrorString(miopenStatus_t error);
miopenStatus_t miopenCreate(miopenHandle_t *handle);
miopenStatus_t miopenDestroy(miopenHandle_t handle);
miopenStatus_t miopenSetStream(miopenHandle_t handle, hipStream_t streamID);
miopenStatus_t miopenCreateTensorDescriptor(miopenTensorDescriptor_t *tensorDesc);
miopenStatus_t miopenSetTensorDescriptor(miopenTensorDescriptor_t tensorDesc, miopenDataType_t dataType,
                                         int nbDims, const int *dimsA, const int *stridesA);
miopenStatus_t miopenDestroyTensorDescriptor(miopenTensorDescriptor_t tensorDesc);
miopenStatus_t miopenCreateConvolutionDescriptor(miopenConvolutionDescriptor_t *convDesc);
miopenStatus_t miopenInitConvolutionNdDescriptor(miopenConvolutionDescriptor_t convDesc, int spatialDim,
                                                 const int *padA, const int *strideA, const int *dilationA,
                                                 miopenConvolutionMode_t c_mode);
miopenStatus_t miopenSetConvolutionGroupCount(miopenConvolutionDescriptor_t convDesc, int groupCount);
miopenStatus_t miopenSetConvolutionAttribute(miopenConvolutionDescriptor_t convDesc,
                                             const miopenConvolutionAttrib_t attr, int value);
miopenStatus_t miopenDestroyConvolutionDescriptor(miopenConvolutionDescriptor_t convDesc);
miopenStatus_t miopenConvolutionForwardGetSolutionCount(miopenHandle_t handle,
                                                        const miopenTensorDescriptor_t wDesc,
                                                        const miopenTensorDescriptor_t xDesc,
                                                        const miopenConvolutionDescriptor_t convDesc,
                                                        const miopenTensorDescriptor_t yDesc,
                                                        size_t *solutionCount);
miopenStatus_t miopenConvolutionForwardGetSolution(
    miopenHandle_t handle, const miopenTensorDescriptor_t wDesc, const miopenTensorDescriptor_t xDesc,
    const miopenConvolutionDescriptor_t convDesc, const miopenTensorDescriptor_t yDesc,
    const size_t maxSolutionCount, size_t *solutionCount, miopenConvSolution_t *solutions);
miopenStatus_t miopenConvolutionForwardGetSolutionWorkspaceSize(
    miopenHandle_t handle, const miopenTensorDescriptor_t wDesc, const miopenTensorDescriptor_t xDesc,
    const miopenConvolutionDescriptor_t convDesc, const miopenTensorDescriptor_t yDesc,
    const uint64_t solution_id, size_t *workSpaceSize);
miopenStatus_t miopenConvolutionForwardCompileSolution(miopenHandle_t handle,
                                                       const miopenTensorDescriptor_t wDesc,
                                                       const miopenTensorDescriptor_t xDesc,
                                                       const miopenConvolutionDescriptor_t convDesc,
                                                       const miopenTensorDescriptor_t yDesc,
                                                       const uint64_t solution_id);
miopenStatus_t miopenConvolutionForwardImmediate(miopenHandle_t handle, const miopenTensorDescriptor_t wDesc,
                                                 const void *w, const miopenTensorDescriptor_t xDesc,
                                                 const void *x, const miopenConvolutionDescriptor_t convDesc,
                                                 const miopenTensorDescriptor_t yDesc, void *y,
                                                 void *workSpace, size_t workSpaceSize,
                                                 const uint64_t solution_id);

/* ---- finding the libraries ------------------------------------------------------ */

/* The first of names (sonames) under dir/lib that loads, or NULL. */
static inline void *rocm_library_in(const char *dir, const char *const *names, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/lib/%s", dir, names[i]);
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib) return lib;
  }
  return NULL;
}

/* Opens the first of names (sonames) under $ROCM_PATH/lib when it is set
 * (the ROCm asked for wins, as $ALLOY_CUDNN_PATH does for cuDNN), else
 * the first the loader finds, else under /opt/rocm/lib. Returns the
 * dlopen handle (RTLD_LOCAL), the caller's to dlclose, or NULL when none
 * loads. Any thread; it reads the environment. */
static inline void *rocm_library_open(const char *const *names, size_t n) {
  const char *rocm = getenv("ROCM_PATH");
  void *lib = rocm && *rocm ? rocm_library_in(rocm, names, n) : NULL;
  for (size_t i = 0; i < n && !lib; i++) lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  return lib ? lib : rocm_library_in("/opt/rocm", names, n);
}

#endif
