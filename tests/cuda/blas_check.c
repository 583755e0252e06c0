/*
 * tests/cuda/blas_check.c: checks plugins/cuda/cuda_blas.c on a GPU. A
 * standalone program, outside `make test` (that runs on machines without a
 * GPU): it opens the driver (cuda_api.c) and cuBLASLt, runs each kind of
 * product the cuda backend hands to cuBLASLt (mm, linear's transposed
 * weight, addmm in place and out of place, bias with relu or gelu, a
 * broadcast row as C, f16 and bf16, a bmm with a broadcast B, TF32), and
 * compares every element of D with a double-precision reference computed
 * from the same (rounded) inputs; a plan run on pointers less aligned than
 * it expected, and plans whose algorithm was timed. Then it times the
 * bench models' products, each planned three ways (the heuristic under a
 * 16-byte alignment, under the real 256, the fastest of eight timed).
 *
 * Build and run (from the repository root, on a machine with a GPU):
 *   cc -std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -I. -Isdk/include \
 *      -isystem /usr/local/cuda/include -o build/blas_check tests/cuda/blas_check.c \
 *      plugins/cuda/cuda_blas.c plugins/cuda/cuda_api.c -ldl -lm -pthread
 *   ./build/blas_check
 * Prints "PASS|FAIL name max_abs_err" per case; exits 1 on a failure, 2 when
 * there is no GPU or no cuBLASLt.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/cuda/cuda_api.h"
#include "plugins/cuda/cuda_blas.h"

#define STR_(x) #x
#define STR(x) STR_(x)

static cuda_api api;
static cuda_blas *blas;
static CUstream stream;
#define CHECK_PROGRAM "blas_check"
#include "tests/cuda/check_util.h"
static CUdeviceptr workspace;
static const uint64_t workspace_cap = 32u << 20; /* PyTorch's cuBLASLt workspace on Hopper */
static int failures;
/* run_case's plan: timed candidates (NULL: the heuristic's first), and a
 * shift in bytes of A's pointer past the alignment the plan expects (0:
 * none), which must make the run take the plan's 16-byte algorithm. */
static const cuda_tuning *case_tune;
static unsigned case_shift;

static double gelu_tanh(double x) {
  return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

/* One case: fills A, B, C, bias per desc, runs the product (in place over C
 * when in_place), compares D with the double reference, prints the line. */
static void run_case(const char *name, const cuda_gemm_desc *g, bool in_place, double rtol, double atol) {
  const alloy_dtype t = g->dtype;
  const int64_t m = g->m, n = g->n, k = g->k, nb = g->batch;
  /* Elements spanned: up to the last row's start, plus one row. */
  const int64_t span_a = g->trans_a ? (k - 1) * g->lda + m : (m - 1) * g->lda + k;
  const int64_t span_b = g->trans_b ? (n - 1) * g->ldb + k : (k - 1) * g->ldb + n;
  const size_t na = (size_t)((nb - 1) * g->stride_a + span_a);
  const size_t nbm = (size_t)((nb - 1) * g->stride_b + span_b);
  const size_t nc = g->has_c ? (size_t)((nb - 1) * g->stride_c + (g->ldc ? (m - 1) * g->ldc : 0) + n) : 0;
  const size_t nd = (size_t)(nb * m * n);
  double *a = fill(t, na, 1), *bm = fill(t, nbm, 2), *c = g->has_c ? fill(t, nc, 3) : NULL;
  double *bias = g->bias ? fill(t, (size_t)n, 4) : NULL;
  CUdeviceptr da = upload(t, a, na), db = upload(t, bm, nbm);
  if (case_shift) { /* A again, case_shift bytes into a buffer of its own */
    CUdeviceptr shifted;
    check_cu(api.cuMemAlloc(&shifted, na * alloy_dtype_size(t) + 256), "cuMemAlloc");
    check_cu(api.cuMemcpyDtoDAsync(shifted + case_shift, da, na * alloy_dtype_size(t), stream), "cuMemcpyDtoDAsync");
    check_cu(api.cuStreamSynchronize(stream), "cuStreamSynchronize");
    api.cuMemFree(da);
    da = shifted + case_shift;
  }
  CUdeviceptr dc = c ? upload(t, c, nc) : 0, dbias = bias ? upload(t, bias, (size_t)n) : 0;
  CUdeviceptr dd = in_place ? dc : 0;
  if (!in_place) check_cu(api.cuMemAlloc(&dd, nd * alloy_dtype_size(t)), "cuMemAlloc");

  char why[512];
  cuda_gemm *plan = NULL;
  uint64_t need = 0;
  cuda_gemm_desc planned = *g;
  for (int i = 0; i < GEMM_OPERANDS; i++) planned.align[i] = 256; /* as cuMemAlloc gives */
  const char *err = cuda_gemm_plan(blas, &planned, workspace_cap, case_tune, &plan, &need, why, sizeof why);
  if (!err && case_tune && cuda_gemm_tuned(plan) < 2) err = "the plan timed fewer than two algorithms";
  if (!err)
    err = cuda_gemm_run(blas, plan, da, db, dc, dd, dbias, workspace, workspace_cap, stream, why, sizeof why);
  if (!err && api.cuStreamSynchronize(stream) != CUDA_SUCCESS) err = "the product failed on the device";
  double max_err = 0, max_err_erf = 0;
  bool ok = err == NULL;
  if (ok) {
    double *d = download(t, dd, nd);
    for (int64_t b = 0; b < nb; b++)
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
          double sum = 0;
          for (int64_t p = 0; p < k; p++) {
            double av = a[b * g->stride_a + (g->trans_a ? p * g->lda + i : i * g->lda + p)];
            double bv = bm[b * g->stride_b + (g->trans_b ? j * g->ldb + p : p * g->ldb + j)];
            sum += av * bv;
          }
          double ref = g->alpha * sum;
          if (g->has_c) ref += g->beta * c[b * g->stride_c + i * g->ldc + j];
          if (g->bias) ref += bias[j];
          double ref_erf = 0.5 * ref * (1.0 + erf(ref / sqrt(2.0)));
          if (g->activation == 1) ref = ref > 0 ? ref : 0;
          if (g->activation == 2) ref = gelu_tanh(ref);
          double got = d[b * m * n + i * n + j], e = fabs(got - ref);
          if (e > max_err) max_err = e;
          if (fabs(got - ref_erf) > max_err_erf) max_err_erf = fabs(got - ref_erf);
          if (!(e <= atol + rtol * fabs(ref))) ok = false;
        }
    free(d);
  }
  if (err) printf("FAIL %s: %s\n", name, err);
  else if (g->activation == 2)
    printf("%s %s %.3g (workspace %llu; vs erf gelu %.3g)\n", ok ? "PASS" : "FAIL", name, max_err,
           (unsigned long long)need, max_err_erf);
  else printf("%s %s %.3g (workspace %llu)\n", ok ? "PASS" : "FAIL", name, max_err, (unsigned long long)need);
  if (!ok) failures++;
  cuda_gemm_free(plan);
  api.cuMemFree(da - case_shift);
  api.cuMemFree(db);
  if (dc) api.cuMemFree(dc);
  if (dbias) api.cuMemFree(dbias);
  if (!in_place) api.cuMemFree(dd);
  free(a);
  free(bm);
  free(c);
  free(bias);
}

/* A row-major mm desc: A [m, k], B [k, n] (or [n, k] when trans_b). */
static cuda_gemm_desc mm(alloy_dtype t, int64_t m, int64_t n, int64_t k, bool trans_b) {
  cuda_gemm_desc g = {.dtype = t, .m = m, .n = n, .k = k, .batch = 1, .lda = k, .ldb = trans_b ? k : n,
                      .ldc = n, .trans_b = trans_b, .alpha = 1.0};
  return g;
}

/* Expects plan or run to refuse; prints PASS with the sentence. */
static void expect_refusal(const char *name, const cuda_gemm_desc *g, CUdeviceptr offset) {
  char why[512];
  cuda_gemm *plan = NULL;
  uint64_t need = 0;
  const char *err = cuda_gemm_plan(blas, g, workspace_cap, NULL, &plan, &need, why, sizeof why);
  if (!err) {
    CUdeviceptr buf;
    check_cu(api.cuMemAlloc(&buf, 1 << 20), "cuMemAlloc");
    err = cuda_gemm_run(blas, plan, buf + offset, buf, 0, buf, 0, workspace, workspace_cap, stream, why,
                        sizeof why);
    api.cuStreamSynchronize(stream);
    api.cuMemFree(buf);
  }
  cuda_gemm_free(plan);
  printf("%s %s: %s\n", err ? "PASS" : "FAIL", name, err ? err : "accepted");
  if (!err) failures++;
}

/* How a timed plan picks its algorithm. */
enum { PICK_ALIGN16, PICK_ALIGNED, PICK_TUNED };
static const char *const pick_names[] = {"heuristic, 16-byte alignment", "heuristic, 256-byte alignment",
                                         "fastest of 8 timed"};

/* Times 50 runs after 3 warm-ups of g, planned as pick says, on buffers
 * from cuMemAlloc; prints microseconds and TFLOP/s. */
static void time_case(const char *name, cuda_gemm_desc g, int pick) {
  /* cuda_api.h lists no cuEventElapsedTime: looked up here, as cuda.h versions it. */
  typedef __typeof__(cuEventElapsedTime) elapsed_fn;
  elapsed_fn *elapsed = (elapsed_fn *)dlsym(api.driver_lib, STR(cuEventElapsedTime));
  const size_t es = alloy_dtype_size(g.dtype);
  const size_t bytes[3] = {(size_t)(g.m * g.k) * es, (size_t)(g.k * g.n) * es, (size_t)(g.m * g.n) * es};
  CUdeviceptr buf[4];
  for (int i = 0; i < 3; i++) {
    check_cu(api.cuMemAlloc(&buf[i], bytes[i]), "cuMemAlloc");
    check_cu(api.cuMemsetD8Async(buf[i], 0x3c, bytes[i], stream), "cuMemsetD8Async"); /* ~0.01 in every dtype */
  }
  check_cu(api.cuMemAlloc(&buf[3], (size_t)g.n * es), "cuMemAlloc");
  check_cu(api.cuMemsetD8Async(buf[3], 0, (size_t)g.n * es, stream), "cuMemsetD8Async");
  for (int i = 0; i < GEMM_OPERANDS; i++) g.align[i] = pick == PICK_ALIGN16 ? 16 : 256;
  const cuda_tuning tune = {.api = &api, .stream = stream, .candidates = 8, .runs = 5};
  char why[512];
  cuda_gemm *plan = NULL;
  uint64_t need = 0;
  const char *err = cuda_gemm_plan(blas, &g, workspace_cap, pick == PICK_TUNED ? &tune : NULL, &plan, &need, why,
                                   sizeof why);
  CUevent start, stop;
  check_cu(api.cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
  check_cu(api.cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
  for (int i = 0; i < 3 && !err; i++)
    err = cuda_gemm_run(blas, plan, buf[0], buf[1], 0, buf[2], buf[3], workspace, workspace_cap, stream, why,
                        sizeof why);
  check_cu(api.cuEventRecord(start, stream), "cuEventRecord");
  for (int i = 0; i < 50 && !err; i++)
    err = cuda_gemm_run(blas, plan, buf[0], buf[1], 0, buf[2], buf[3], workspace, workspace_cap, stream, why,
                        sizeof why);
  check_cu(api.cuEventRecord(stop, stream), "cuEventRecord");
  check_cu(api.cuEventSynchronize(stop), "cuEventSynchronize");
  float ms = 0;
  if (!err && elapsed) check_cu(elapsed(&ms, start, stop), "cuEventElapsedTime");
  if (err) {
    printf("FAIL time %s: %s\n", name, err);
    failures++;
  } else {
    double us = ms * 1e3 / 50, tflops = 2.0 * (double)g.m * (double)g.n * (double)g.k / (us * 1e-6) / 1e12;
    printf("TIME %s %lldx%lldx%lld (%s): %.1f us, %.0f TFLOP/s\n", name, (long long)g.m, (long long)g.k,
           (long long)g.n, pick_names[pick], us, tflops);
  }
  cuda_gemm_free(plan);
  api.cuEventDestroy(start);
  api.cuEventDestroy(stop);
  for (int i = 0; i < 4; i++) api.cuMemFree(buf[i]);
}

int main(void) {
  char why[512];
  const char *err = cuda_api_open(&api, why, sizeof why);
  if (err) {
    printf("SKIP no CUDA: %s\n", err);
    return 2;
  }
  check_cu(api.cuInit(0), "cuInit");
  CUdevice dev;
  CUcontext ctx;
  char name[128] = "";
  check_cu(api.cuDeviceGet(&dev, 0), "cuDeviceGet");
  api.cuDeviceGetName(name, sizeof name, dev);
  check_cu(api.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  check_cu(api.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  check_cu(api.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  err = cuda_blas_open(&blas, why, sizeof why);
  if (err) {
    printf("SKIP no cuBLASLt: %s\n", err);
    return 2;
  }
  printf("device %s, cuBLASLt %zu\n", name, cuda_blas_version(blas));
  check_cu(api.cuMemAlloc(&workspace, workspace_cap), "cuMemAlloc");

  const double f32_tol = 1e-4, half_tol = 1e-2;
  cuda_gemm_desc g = mm(ALLOY_F32, 256, 512, 128, false);
  run_case("f32 mm 256x512x128", &g, false, f32_tol, f32_tol);

  g = mm(ALLOY_F32, 256, 512, 128, true);
  run_case("f32 linear (B given [n, k]) 256x512x128", &g, false, f32_tol, f32_tol);

  g = mm(ALLOY_F32, 256, 512, 128, false);
  g.has_c = true, g.beta = 1.0;
  run_case("f32 addmm beta 1, C is D", &g, true, f32_tol, f32_tol);

  g = mm(ALLOY_F32, 200, 136, 72, false);
  g.trans_a = true, g.lda = 200, g.has_c = true, g.ldc = 144, g.alpha = 2.0, g.beta = 0.5;
  run_case("f32 addmm alpha 2 beta 0.5, A given [k, m], ldc 144 > n", &g, false, f32_tol, f32_tol);

  g = mm(ALLOY_F32, 256, 512, 128, true);
  g.bias = true, g.activation = 1;
  run_case("f32 linear + bias + relu", &g, false, f32_tol, f32_tol);

  g = mm(ALLOY_F32, 256, 512, 128, true);
  g.bias = true, g.activation = 2;
  run_case("f32 linear + bias + gelu (tanh)", &g, false, f32_tol, f32_tol);

  g = mm(ALLOY_F32, 256, 512, 128, true);
  g.has_c = true, g.ldc = 0, g.beta = 1.0;
  run_case("f32 addmm with a broadcast row C (ldc 0)", &g, false, f32_tol, f32_tol);

  g = mm(ALLOY_BF16, 256, 512, 128, false);
  run_case("bf16 mm 256x512x128", &g, false, half_tol, half_tol);

  g = mm(ALLOY_F16, 256, 512, 128, false);
  run_case("f16 mm 256x512x128", &g, false, half_tol, half_tol);

  g = mm(ALLOY_BF16, 256, 512, 128, true);
  g.bias = true, g.activation = 1;
  run_case("bf16 linear + bias + relu", &g, false, half_tol, half_tol);

  g = mm(ALLOY_F16, 256, 512, 128, true);
  g.bias = true, g.activation = 2;
  run_case("f16 linear + bias + gelu", &g, false, half_tol, half_tol);

  g = mm(ALLOY_F32, 64, 96, 32, false);
  g.batch = 4, g.stride_a = 64 * 32, g.stride_b = 0;
  run_case("f32 bmm batch 4, B broadcast (stride_b 0)", &g, false, f32_tol, f32_tol);

  g = mm(ALLOY_BF16, 64, 96, 32, true);
  g.batch = 4, g.stride_a = 64 * 32, g.stride_b = 96 * 32, g.has_c = true, g.stride_c = 64 * 96, g.beta = 1.0;
  run_case("bf16 baddbmm batch 4, B given [n, k], C is D", &g, true, half_tol, half_tol);

  g = mm(ALLOY_F32, 256, 512, 128, false);
  g.allow_tf32 = true;
  run_case("f32 mm with TF32 allowed", &g, false, 5e-3, 5e-3);

  g = mm(ALLOY_F32, 1, 512, 128, true);
  g.lda = 1; /* a size-1 dim's stride is arbitrary in PyTorch */
  run_case("f32 linear of one row, lda 1", &g, false, f32_tol, f32_tol);

  g = mm(ALLOY_F32, 64, 64, 64, false);
  expect_refusal("refuses an A that is not 16-byte aligned", &g, 4);
  g = mm(ALLOY_I32, 64, 64, 64, false);
  expect_refusal("refuses int32", &g, 0);
  g = mm(ALLOY_F32, 64, 64, 64, false);
  g.lda = 32;
  expect_refusal("refuses lda < k", &g, 0);

  /* a plan for 256-byte pointers run on an A 16 bytes past that takes its
   * 16-byte algorithm, and gives the same products */
  case_shift = 16;
  g = mm(ALLOY_BF16, 512, 1024, 256, false);
  run_case("bf16 mm, A 16 bytes past the planned alignment", &g, false, half_tol, half_tol);
  g = mm(ALLOY_F32, 256, 512, 128, true);
  g.bias = true;
  run_case("f32 linear + bias, A 16 bytes past the planned alignment", &g, false, f32_tol, f32_tol);
  case_shift = 0;
  /* the fastest of the heuristic's first eight is still right */
  const cuda_tuning tune = {.api = &api, .stream = stream, .candidates = 8, .runs = 2};
  case_tune = &tune;
  g = mm(ALLOY_BF16, 512, 1024, 256, true);
  g.bias = true, g.activation = 2;
  run_case("bf16 linear + bias + gelu, algorithm timed", &g, false, half_tol, half_tol);
  g = mm(ALLOY_F32, 256, 512, 128, false);
  run_case("f32 mm, algorithm timed", &g, false, f32_tol, f32_tol);
  case_tune = NULL;

  /* the models' products (bench/cuda_models.py), each picked three ways */
  static const struct {
    const char *name;
    alloy_dtype t;
    int64_t m, k, n;
    bool trans_b, bias, tf32;
  } shapes[] = {
      {"llama qkv/o bf16", ALLOY_BF16, 4096, 1024, 1024, true, false, false},
      {"llama up bf16", ALLOY_BF16, 4096, 1024, 2816, true, false, false},
      {"llama down bf16", ALLOY_BF16, 4096, 2816, 1024, true, false, false},
      {"bert qkv f32", ALLOY_F32, 4096, 768, 768, true, true, false},
      {"bert ffn1 f32", ALLOY_F32, 4096, 768, 3072, true, true, false},
      {"bert ffn2 f32", ALLOY_F32, 4096, 3072, 768, true, true, false},
      {"resnet fc f32", ALLOY_F32, 64, 2048, 1000, true, true, false},
      {"square f32", ALLOY_F32, 4096, 4096, 4096, false, false, false},
      {"square tf32", ALLOY_F32, 4096, 4096, 4096, false, false, true},
      {"square bf16", ALLOY_BF16, 4096, 4096, 4096, false, false, false},
  };
  for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
    for (int pick = PICK_ALIGN16; pick <= PICK_TUNED; pick++) {
      g = mm(shapes[i].t, shapes[i].m, shapes[i].n, shapes[i].k, shapes[i].trans_b);
      g.bias = shapes[i].bias, g.allow_tf32 = shapes[i].tf32;
      time_case(shapes[i].name, g, pick);
    }

  api.cuMemFree(workspace);
  cuda_blas_close(blas);
  api.cuStreamDestroy(stream);
  api.cuDevicePrimaryCtxRelease(dev);
  cuda_api_close(&api);
  printf("%s: %d failure%s\n", failures ? "FAIL" : "PASS", failures, failures == 1 ? "" : "s");
  return failures ? 1 : 0;
}
