/*
 * plugins/cuda/blas_port.h: the one place where the CUDA and HIP builds of
 * cuda_blas.c differ in their view of the BLAS library, as gpu_port.h is
 * for the runtime (and ggml's vendors/hip.h for its cuBLAS calls).
 * cuda_blas.c is written against cuBLASLt; the CUDA build includes
 * <cublasLt.h>, and the HIP build (ALLOY_GPU_HIP) gives the cublasLt*
 * names it uses hipBLASLt's meaning: types, entry points and enum
 * constants become hipBLASLt's (rocm_api.h declares them, with the
 * upstream header each value comes from). hipBLASLt's matmul API mirrors
 * cuBLASLt's, but its enum VALUES differ (CUBLAS_OP_T is 1, HIPBLAS_OP_T
 * 112; CUBLASLT_MATMUL_DESC_EPILOGUE is 7, HIPBLASLT_MATMUL_DESC_EPILOGUE
 * 2): every constant goes through a name here, never a number in
 * cuda_blas.c.
 *
 * What hipBLASLt lacks is said by the BLAS_HAS_* switches, each with why;
 * cuda_blas.c leaves those parts out under #if. The same source builds
 * both plugins; nothing is copied.
 */
#ifndef ALLOY_BLAS_PORT_H
#define ALLOY_BLAS_PORT_H

#include "plugins/cuda/cuda_api.h"

#if !defined(ALLOY_GPU_HIP)

#include <cublasLt.h>

#define BLAS_NAME "cuBLASLt" /* for sentences */
#define BLAS_LIBRARY "libcublasLt.so"
#define BLAS_NOT_FOUND "libcublasLt.so not found (set CUDA_HOME to the CUDA toolkit)"
#define BLAS_TOO_OLD "it is older than CUDA 12"
#define BLAS_HAS_STATUS_NAME 1     /* cublasLtGetStatusName */
#define BLAS_HAS_ALIGNMENT_PREFS 1 /* CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*_BYTES */
#define BLAS_HAS_TF32 1            /* CUBLAS_COMPUTE_32F_FAST_TF32 on the tensor cores */
/* The entry points bound besides the shared ones (cuda_blas.c's list). */
#define BLAS_OWN_FUNCTIONS(X) X(cublasLtGetStatusName)

/* Opens libcublasLt: the library matching the header first (13); 12's
 * matmul API is the same. Returns a dlopen handle, the caller's to
 * dlclose, or NULL. Any thread. */
static inline void *blas_library_open(void) {
  static const char *const names[] = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"};
  return cuda_library_open(names, 3, "libcublasLt.so");
}

#else /* HIP: hipBLASLt */

#include "plugins/cuda/rocm_api.h"

#define BLAS_NAME "hipBLASLt"
#define BLAS_LIBRARY "libhipblaslt.so"
#define BLAS_NOT_FOUND \
  "libhipblaslt.so not found: hipBLASLt is not in Debian (install ROCm's, or set ROCM_PATH)"
#define BLAS_TOO_OLD "it is older than hipBLASLt 0.7"
/* hipBLASLt exports no status-name function (hipBLAS's hipblasStatusToString
 * lives in another library): blas_status_name below names them. */
#define BLAS_HAS_STATUS_NAME 0
/* hipBLASLt's preferences are the search mode and the workspace bound
 * only: its heuristic takes no pointer alignment. */
#define BLAS_HAS_ALIGNMENT_PREFS 0
/* HIPBLAS_COMPUTE_32F_FAST_TF32 is MI300's xf32 (gfx942 alone) and has
 * not been tried here: float32 products stay exact on HIP. */
#define BLAS_HAS_TF32 0
#define BLAS_OWN_FUNCTIONS(X)

/* The minimum hipblasLtGetVersion() (MAJOR * 100000 + MINOR * 100 + PATCH):
 * 0.7.0, the first with hipDataType and hipblasComputeType_t. */
#define BLAS_MIN_VERSION 700

/* Opens hipBLASLt: its sonames under $ROCM_PATH/lib when set, on the
 * loader's path, then under /opt/rocm/lib (rocm_api.h). Returns a dlopen handle, the caller's to
 * dlclose, or NULL. Any thread. */
static inline void *blas_library_open(void) {
  static const char *const names[] = {"libhipblaslt.so.0", "libhipblaslt.so.1", "libhipblaslt.so"};
  return rocm_library_open(names, 3);
}

/* hipblasStatus_t's name, for sentences: a static string. Any thread. */
static inline const char *blas_status_name(hipblasStatus_t st) {
  static const char *const names[] = {
      "HIPBLAS_STATUS_SUCCESS",           "HIPBLAS_STATUS_NOT_INITIALIZED", "HIPBLAS_STATUS_ALLOC_FAILED",
      "HIPBLAS_STATUS_INVALID_VALUE",     "HIPBLAS_STATUS_MAPPING_ERROR",   "HIPBLAS_STATUS_EXECUTION_FAILED",
      "HIPBLAS_STATUS_INTERNAL_ERROR",    "HIPBLAS_STATUS_NOT_SUPPORTED",   "HIPBLAS_STATUS_ARCH_MISMATCH",
      "HIPBLAS_STATUS_HANDLE_IS_NULLPTR", "HIPBLAS_STATUS_INVALID_ENUM",    "HIPBLAS_STATUS_UNKNOWN"};
  return (unsigned)st < sizeof names / sizeof *names ? names[st] : "an unknown hipBLAS status";
}

/* Types */
#define cublasStatus_t hipblasStatus_t
#define cudaDataType rocm_data_type
#define cublasComputeType_t hipblasComputeType_t
#define cublasLtHandle_t hipblasLtHandle_t
#define cublasLtMatmulDesc_t hipblasLtMatmulDesc_t
#define cublasLtMatrixLayout_t hipblasLtMatrixLayout_t
#define cublasLtMatmulPreference_t hipblasLtMatmulPreference_t
#define cublasLtMatmulAlgo_t hipblasLtMatmulAlgo_t
#define cublasLtMatmulHeuristicResult_t hipblasLtMatmulHeuristicResult_t
#define cublasLtMatmulDescAttributes_t hipblasLtMatmulDescAttributes_t
#define cublasLtMatmulPreferenceAttributes_t hipblasLtMatmulPreferenceAttributes_t

/* Constants */
#define CUBLAS_STATUS_SUCCESS HIPBLAS_STATUS_SUCCESS
#define CUBLAS_STATUS_NOT_SUPPORTED HIPBLAS_STATUS_NOT_SUPPORTED
#define CUDA_R_32F ROCM_R_32F
#define CUDA_R_16F ROCM_R_16F
#define CUDA_R_16BF ROCM_R_16BF
#define CUBLAS_COMPUTE_32F HIPBLAS_COMPUTE_32F
#define CUBLAS_OP_N HIPBLAS_OP_N
#define CUBLAS_OP_T HIPBLAS_OP_T
#define CUBLASLT_MATMUL_DESC_TRANSA HIPBLASLT_MATMUL_DESC_TRANSA
#define CUBLASLT_MATMUL_DESC_TRANSB HIPBLASLT_MATMUL_DESC_TRANSB
#define CUBLASLT_MATMUL_DESC_EPILOGUE HIPBLASLT_MATMUL_DESC_EPILOGUE
#define CUBLASLT_MATMUL_DESC_BIAS_POINTER HIPBLASLT_MATMUL_DESC_BIAS_POINTER
#define CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE HIPBLASLT_MATMUL_DESC_BIAS_DATA_TYPE
#define CUBLASLT_EPILOGUE_DEFAULT HIPBLASLT_EPILOGUE_DEFAULT
#define CUBLASLT_EPILOGUE_RELU HIPBLASLT_EPILOGUE_RELU
#define CUBLASLT_EPILOGUE_BIAS HIPBLASLT_EPILOGUE_BIAS
#define CUBLASLT_EPILOGUE_RELU_BIAS HIPBLASLT_EPILOGUE_RELU_BIAS
#define CUBLASLT_EPILOGUE_GELU HIPBLASLT_EPILOGUE_GELU
#define CUBLASLT_EPILOGUE_GELU_BIAS HIPBLASLT_EPILOGUE_GELU_BIAS
#define CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT HIPBLASLT_MATRIX_LAYOUT_BATCH_COUNT
#define CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET HIPBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET
#define CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES

/* Entry points: the names bound from the library and the table's fields.
 * cublasLtGetVersion becomes hipblasLtGetVersion, which takes the handle
 * and an int * (cuda_blas_open calls it under #if). */
#define cublasLtCreate hipblasLtCreate
#define cublasLtDestroy hipblasLtDestroy
#define cublasLtGetVersion hipblasLtGetVersion
#define cublasLtMatmul hipblasLtMatmul
#define cublasLtMatmulDescCreate hipblasLtMatmulDescCreate
#define cublasLtMatmulDescDestroy hipblasLtMatmulDescDestroy
#define cublasLtMatmulDescSetAttribute hipblasLtMatmulDescSetAttribute
#define cublasLtMatrixLayoutCreate hipblasLtMatrixLayoutCreate
#define cublasLtMatrixLayoutDestroy hipblasLtMatrixLayoutDestroy
#define cublasLtMatrixLayoutSetAttribute hipblasLtMatrixLayoutSetAttribute
#define cublasLtMatmulPreferenceCreate hipblasLtMatmulPreferenceCreate
#define cublasLtMatmulPreferenceDestroy hipblasLtMatmulPreferenceDestroy
#define cublasLtMatmulPreferenceSetAttribute hipblasLtMatmulPreferenceSetAttribute
#define cublasLtMatmulAlgoGetHeuristic hipblasLtMatmulAlgoGetHeuristic

#endif /* ALLOY_GPU_HIP */

#endif
