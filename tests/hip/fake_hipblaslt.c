/*
 * tests/hip/fake_hipblaslt.c: a stand-in libhipblaslt.so for
 * tests/test_hip_vendor.c, built by the Makefile into
 * BUILD/tests/hip/rocm/lib/ (and, with FAKE_LEAVE_OUT, into rocm-old/lib/
 * without hipblasLtMatmulAlgoGetHeuristic, to prove that a missing entry
 * point is named). It exports the hipBLASLt entry points the hip build
 * binds (declared in plugins/cuda/rocm_api.h), computes nothing and
 * needs no GPU: each call logs its arguments as the numbers it received
 * (fake_log.h) and returns what hipBLASLt would for a product it
 * supports: one algorithm of 4096 bytes of workspace from the heuristic.
 * $FAKE_HIPBLASLT_VERSION sets what hipblasLtGetVersion says (default
 * 1100, 0.11.0).
 */
#include <stdint.h>
#include <stdlib.h>

#include "plugins/cuda/rocm_api.h"
#include "tests/hip/fake_log.h"

/* An attribute's value as the number it holds (4 or 8 bytes). */
static long long value_of(const void *buf, size_t size) {
  if (size == 4) {
    int32_t v;
    memcpy(&v, buf, 4);
    return v;
  }
  if (size == 8) {
    int64_t v;
    memcpy(&v, buf, 8);
    return (long long)v;
  }
  return -1;
}

hipblasStatus_t hipblasLtGetVersion(hipblasLtHandle_t handle, int *version) {
  const char *v = getenv("FAKE_HIPBLASLT_VERSION");
  *version = v && *v ? atoi(v) : 1100;
  flog("GetVersion %s", fake_name(handle));
  return HIPBLAS_STATUS_SUCCESS;
}

hipblasStatus_t hipblasLtCreate(hipblasLtHandle_t *handle) {
  *handle = fake_make('H');
  flog("Create %s", fake_name(*handle));
  return HIPBLAS_STATUS_SUCCESS;
}

hipblasStatus_t hipblasLtDestroy(const hipblasLtHandle_t handle) {
  flog("Destroy %s", fake_name(handle));
  fake_drop(handle);
  return HIPBLAS_STATUS_SUCCESS;
}

hipblasStatus_t hipblasLtMatrixLayoutCreate(hipblasLtMatrixLayout_t *matLayout, rocm_data_type type,
                                            uint64_t rows, uint64_t cols, int64_t ld) {
  *matLayout = (hipblasLtMatrixLayout_t)fake_make('L');
  flog("LayoutCreate %s type=%d rows=%llu cols=%llu ld=%lld", fake_name(*matLayout), (int)type,
       (unsigned long long)rows, (unsigned long long)cols, (long long)ld);
  return HIPBLAS_STATUS_SUCCESS;
}

hipblasStatus_t hipblasLtMatrixLayoutDestroy(const hipblasLtMatrixLayout_t matLayout) {
  flog("LayoutDestroy %s", fake_name(matLayout));
  fake_drop(matLayout);
  return HIPBLAS_STATUS_SUCCESS;
}

hipblasStatus_t hipblasLtMatrixLayoutSetAttribute(hipblasLtMatrixLayout_t matLayout,
                                                  hipblasLtMatrixLayoutAttribute_t attr, const void *buf,
                                                  size_t sizeInBytes) {
  flog("LayoutSet %s attr=%d size=%zu value=%lld", fake_name(matLayout), (int)attr, sizeInBytes,
       value_of(buf, sizeInBytes));
  return HIPBLAS_STATUS_SUCCESS;
}

hipblasStatus_t hipblasLtMatmulDescCreate(hipblasLtMatmulDesc_t *matmulDesc, hipblasComputeType_t computeType,
                                          rocm_data_type scaleType) {
  *matmulDesc = (hipblasLtMatmulDesc_t)fake_make('D');
  flog("DescCreate %s compute=%d scale=%d", fake_name(*matmulDesc), (int)computeType, (int)scaleType);
  return HIPBLAS_STATUS_SUCCESS;
}

hipblasStatus_t hipblasLtMatmulDescDestroy(const hipblasLtMatmulDesc_t matmulDesc) {
  flog("DescDestroy %s", fake_name(matmulDesc));
  fake_drop(matmulDesc);
  return HIPBLAS_STATUS_SUCCESS;
}

hipblasStatus_t hipblasLtMatmulDescSetAttribute(hipblasLtMatmulDesc_t matmulDesc,
                                                hipblasLtMatmulDescAttributes_t attr, const void *buf,
                                                size_t sizeInBytes) {
  flog("DescSet %s attr=%d size=%zu value=%lld", fake_name(matmulDesc), (int)attr, sizeInBytes,
       value_of(buf, sizeInBytes));
  return HIPBLAS_STATUS_SUCCESS;
}

hipblasStatus_t hipblasLtMatmulPreferenceCreate(hipblasLtMatmulPreference_t *pref) {
  *pref = (hipblasLtMatmulPreference_t)fake_make('P');
  flog("PrefCreate %s", fake_name(*pref));
  return HIPBLAS_STATUS_SUCCESS;
}

hipblasStatus_t hipblasLtMatmulPreferenceDestroy(const hipblasLtMatmulPreference_t pref) {
  flog("PrefDestroy %s", fake_name(pref));
  fake_drop(pref);
  return HIPBLAS_STATUS_SUCCESS;
}

hipblasStatus_t hipblasLtMatmulPreferenceSetAttribute(hipblasLtMatmulPreference_t pref,
                                                      hipblasLtMatmulPreferenceAttributes_t attr,
                                                      const void *buf, size_t sizeInBytes) {
  flog("PrefSet %s attr=%d size=%zu value=%lld", fake_name(pref), (int)attr, sizeInBytes,
       value_of(buf, sizeInBytes));
  return HIPBLAS_STATUS_SUCCESS;
}

#if !defined(FAKE_LEAVE_OUT)
hipblasStatus_t hipblasLtMatmulAlgoGetHeuristic(hipblasLtHandle_t handle, hipblasLtMatmulDesc_t matmulDesc,
                                                hipblasLtMatrixLayout_t Adesc, hipblasLtMatrixLayout_t Bdesc,
                                                hipblasLtMatrixLayout_t Cdesc, hipblasLtMatrixLayout_t Ddesc,
                                                hipblasLtMatmulPreference_t pref, int requestedAlgoCount,
                                                hipblasLtMatmulHeuristicResult_t heuristicResultsArray[],
                                                int *returnAlgoCount) {
  (void)handle;
  flog("Heuristic %s A=%s B=%s C=%s D=%s pref=%s want=%d", fake_name(matmulDesc), fake_name(Adesc),
       fake_name(Bdesc), fake_name(Cdesc), fake_name(Ddesc), fake_name(pref), requestedAlgoCount);
  memset(&heuristicResultsArray[0], 0, sizeof heuristicResultsArray[0]);
  heuristicResultsArray[0].algo.data[0] = 42;
  heuristicResultsArray[0].workspaceSize = 4096;
  heuristicResultsArray[0].state = HIPBLAS_STATUS_SUCCESS;
  *returnAlgoCount = 1;
  return HIPBLAS_STATUS_SUCCESS;
}
#endif

hipblasStatus_t hipblasLtMatmul(hipblasLtHandle_t handle, hipblasLtMatmulDesc_t matmulDesc, const void *alpha,
                                const void *A, hipblasLtMatrixLayout_t Adesc, const void *B,
                                hipblasLtMatrixLayout_t Bdesc, const void *beta, const void *C,
                                hipblasLtMatrixLayout_t Cdesc, void *D, hipblasLtMatrixLayout_t Ddesc,
                                const hipblasLtMatmulAlgo_t *algo, void *workspace,
                                size_t workspaceSizeInBytes, hipStream_t stream) {
  (void)handle;
  flog("Matmul %s alpha=%g A=%p/%s B=%p/%s beta=%g C=%p/%s D=%p/%s algo=%d ws=%p/%zu stream=%p",
       fake_name(matmulDesc), (double)*(const float *)alpha, A, fake_name(Adesc), B, fake_name(Bdesc),
       (double)*(const float *)beta, C, fake_name(Cdesc), D, fake_name(Ddesc), algo->data[0], workspace,
       workspaceSizeInBytes, (void *)stream);
  return HIPBLAS_STATUS_SUCCESS;
}
