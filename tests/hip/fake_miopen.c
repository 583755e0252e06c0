/*
 * tests/hip/fake_miopen.c: a stand-in libMIOpen.so for
 * tests/test_hip_vendor.c, built by the Makefile into
 * BUILD/tests/hip/rocm/lib/ (and, with FAKE_LEAVE_OUT, into rocm-old/lib/
 * without miopenConvolutionForwardImmediate, to prove that a missing
 * entry point is named). It exports the MIOpen entry points the hip build
 * binds (declared in plugins/cuda/rocm_api.h), computes nothing and needs
 * no GPU: each call logs its arguments as the numbers it received
 * (fake_log.h) and returns what MIOpen would for a convolution it
 * supports. Its solutions, best first: a Winograd one (id 11, 1 MiB of
 * workspace), an implicit-GEMM one needing 1 GiB (id 12) and a direct one
 * (id 13, 4 KiB); $FAKE_MIOPEN_SOLUTIONS lists fewer. $FAKE_MIOPEN_VERSION
 * ("3.3.0" by default) is what miopenGetVersion says.
 */
#include <stdint.h>
#include <stdlib.h>

#include "plugins/cuda/rocm_api.h"
#include "tests/hip/fake_log.h"

static const miopenConvSolution_t solutions[] = {
    {0.1f, (size_t)1 << 20, 11, miopenConvolutionAlgoWinograd},
    {0.2f, (size_t)1 << 30, 12, miopenConvolutionAlgoImplicitGEMM},
    {0.3f, 4096, 13, miopenConvolutionAlgoDirect},
};

static size_t solutions_listed(void) {
  const char *n = getenv("FAKE_MIOPEN_SOLUTIONS");
  size_t all = sizeof solutions / sizeof *solutions;
  return n && *n && (size_t)atoi(n) < all ? (size_t)atoi(n) : all;
}

/* "[a, b, c]" of n ints into buf. */
static const char *ints(const int *v, int n, char *buf, size_t cap) {
  size_t len = (size_t)snprintf(buf, cap, "[");
  for (int i = 0; i < n && len < cap; i++)
    len += (size_t)snprintf(buf + len, cap - len, i ? ",%d" : "%d", v[i]);
  if (len < cap) snprintf(buf + len, cap - len, "]");
  return buf;
}

miopenStatus_t miopenGetVersion(size_t *major, size_t *minor, size_t *patch) {
  const char *v = getenv("FAKE_MIOPEN_VERSION");
  unsigned a = 3, b = 3, c = 0;
  if (v && *v) sscanf(v, "%u.%u.%u", &a, &b, &c);
  *major = a, *minor = b, *patch = c;
  flog("GetVersion");
  return miopenStatusSuccess;
}

const char *miopenGetErrorString(miopenStatus_t error) {
  return error == miopenStatusSuccess   ? "miopenStatusSuccess"
         : error == miopenStatusBadParm ? "miopenStatusBadParm"
                                        : "miopenStatusOther";
}

miopenStatus_t miopenCreate(miopenHandle_t *handle) {
  *handle = (miopenHandle_t)fake_make('M');
  flog("Create %s", fake_name(*handle));
  return miopenStatusSuccess;
}

miopenStatus_t miopenDestroy(miopenHandle_t handle) {
  flog("Destroy %s", fake_name(handle));
  fake_drop(handle);
  return miopenStatusSuccess;
}

miopenStatus_t miopenSetStream(miopenHandle_t handle, hipStream_t streamID) {
  flog("SetStream %s stream=%p", fake_name(handle), (void *)streamID);
  return miopenStatusSuccess;
}

miopenStatus_t miopenCreateTensorDescriptor(miopenTensorDescriptor_t *tensorDesc) {
  *tensorDesc = (miopenTensorDescriptor_t)fake_make('T');
  flog("TensorCreate %s", fake_name(*tensorDesc));
  return miopenStatusSuccess;
}

miopenStatus_t miopenSetTensorDescriptor(miopenTensorDescriptor_t tensorDesc, miopenDataType_t dataType,
                                         int nbDims, const int *dimsA, const int *stridesA) {
  char d[128], s[128];
  flog("TensorSet %s type=%d dims=%s strides=%s", fake_name(tensorDesc), (int)dataType,
       ints(dimsA, nbDims, d, sizeof d), ints(stridesA, nbDims, s, sizeof s));
  return miopenStatusSuccess;
}

miopenStatus_t miopenDestroyTensorDescriptor(miopenTensorDescriptor_t tensorDesc) {
  flog("TensorDestroy %s", fake_name(tensorDesc));
  fake_drop(tensorDesc);
  return miopenStatusSuccess;
}

miopenStatus_t miopenCreateConvolutionDescriptor(miopenConvolutionDescriptor_t *convDesc) {
  *convDesc = (miopenConvolutionDescriptor_t)fake_make('C');
  flog("ConvCreate %s", fake_name(*convDesc));
  return miopenStatusSuccess;
}

miopenStatus_t miopenInitConvolutionNdDescriptor(miopenConvolutionDescriptor_t convDesc, int spatialDim,
                                                 const int *padA, const int *strideA, const int *dilationA,
                                                 miopenConvolutionMode_t c_mode) {
  char p[64], s[64], d[64];
  flog("ConvInit %s spatial=%d pad=%s stride=%s dilation=%s mode=%d", fake_name(convDesc), spatialDim,
       ints(padA, spatialDim, p, sizeof p), ints(strideA, spatialDim, s, sizeof s),
       ints(dilationA, spatialDim, d, sizeof d), (int)c_mode);
  return miopenStatusSuccess;
}

miopenStatus_t miopenSetConvolutionGroupCount(miopenConvolutionDescriptor_t convDesc, int groupCount) {
  flog("ConvGroups %s groups=%d", fake_name(convDesc), groupCount);
  return miopenStatusSuccess;
}

miopenStatus_t miopenSetConvolutionAttribute(miopenConvolutionDescriptor_t convDesc,
                                             const miopenConvolutionAttrib_t attr, int value) {
  flog("ConvAttribute %s attr=%d value=%d", fake_name(convDesc), (int)attr, value);
  return miopenStatusSuccess;
}

miopenStatus_t miopenDestroyConvolutionDescriptor(miopenConvolutionDescriptor_t convDesc) {
  flog("ConvDestroy %s", fake_name(convDesc));
  fake_drop(convDesc);
  return miopenStatusSuccess;
}

miopenStatus_t miopenConvolutionForwardGetSolutionCount(miopenHandle_t handle,
                                                        const miopenTensorDescriptor_t wDesc,
                                                        const miopenTensorDescriptor_t xDesc,
                                                        const miopenConvolutionDescriptor_t convDesc,
                                                        const miopenTensorDescriptor_t yDesc,
                                                        size_t *solutionCount) {
  (void)handle;
  flog("SolutionCount w=%s x=%s conv=%s y=%s", fake_name(wDesc), fake_name(xDesc), fake_name(convDesc),
       fake_name(yDesc));
  *solutionCount = solutions_listed();
  return miopenStatusSuccess;
}

miopenStatus_t miopenConvolutionForwardGetSolution(
    miopenHandle_t handle, const miopenTensorDescriptor_t wDesc, const miopenTensorDescriptor_t xDesc,
    const miopenConvolutionDescriptor_t convDesc, const miopenTensorDescriptor_t yDesc,
    const size_t maxSolutionCount, size_t *solutionCount, miopenConvSolution_t *solutions_out) {
  (void)handle;
  flog("Solutions w=%s x=%s conv=%s y=%s max=%zu", fake_name(wDesc), fake_name(xDesc), fake_name(convDesc),
       fake_name(yDesc), maxSolutionCount);
  size_t n = solutions_listed();
  if (n > maxSolutionCount) n = maxSolutionCount;
  memcpy(solutions_out, solutions, n * sizeof *solutions);
  *solutionCount = n;
  return miopenStatusSuccess;
}

miopenStatus_t miopenConvolutionForwardGetSolutionWorkspaceSize(
    miopenHandle_t handle, const miopenTensorDescriptor_t wDesc, const miopenTensorDescriptor_t xDesc,
    const miopenConvolutionDescriptor_t convDesc, const miopenTensorDescriptor_t yDesc,
    const uint64_t solution_id, size_t *workSpaceSize) {
  (void)handle, (void)wDesc, (void)xDesc, (void)convDesc, (void)yDesc;
  flog("WorkspaceSize id=%llu", (unsigned long long)solution_id);
  for (size_t i = 0; i < sizeof solutions / sizeof *solutions; i++)
    if (solutions[i].solution_id == solution_id) {
      *workSpaceSize = solutions[i].workspace_size;
      return miopenStatusSuccess;
    }
  return miopenStatusBadParm;
}

miopenStatus_t miopenConvolutionForwardCompileSolution(miopenHandle_t handle,
                                                       const miopenTensorDescriptor_t wDesc,
                                                       const miopenTensorDescriptor_t xDesc,
                                                       const miopenConvolutionDescriptor_t convDesc,
                                                       const miopenTensorDescriptor_t yDesc,
                                                       const uint64_t solution_id) {
  (void)handle, (void)wDesc, (void)xDesc, (void)convDesc, (void)yDesc;
  flog("Compile id=%llu", (unsigned long long)solution_id);
  return miopenStatusSuccess;
}

#if !defined(FAKE_LEAVE_OUT)
miopenStatus_t miopenConvolutionForwardImmediate(miopenHandle_t handle, const miopenTensorDescriptor_t wDesc,
                                                 const void *w, const miopenTensorDescriptor_t xDesc,
                                                 const void *x, const miopenConvolutionDescriptor_t convDesc,
                                                 const miopenTensorDescriptor_t yDesc, void *y,
                                                 void *workSpace, size_t workSpaceSize,
                                                 const uint64_t solution_id) {
  flog("Immediate %s w=%s@%p x=%s@%p conv=%s y=%s@%p ws=%p/%zu id=%llu", fake_name(handle), fake_name(wDesc),
       w, fake_name(xDesc), x, fake_name(convDesc), fake_name(yDesc), y, workSpace, workSpaceSize,
       (unsigned long long)solution_id);
  return miopenStatusSuccess;
}
#endif
