/*
 * plugins/cuda/cuda_blas.c: the cuda backend's matrix products through
 * cuBLASLt (cuda_blas.h), opened with dlopen and bound from a symbol table
 * the way cuda_api.c binds the driver. The rest of the backend's kernels
 * are generated (cuda_codegen.c); a product big enough to matter goes here.
 *
 * Row-major on a column-major library: a row-major [r, c] matrix with row
 * stride ld is, byte for byte, the column-major [c, r] matrix with leading
 * dimension ld, its transpose. So PyTorch's D = op(A) op(B) is computed as
 * cuBLASLt's D^T = op(B)^T op(A)^T: B goes in cuBLASLt's A slot and A in its
 * B slot, m and n trade places, and each operand keeps its own transpose
 * flag (a row-major B [k, n] is already the column-major B^T [n, k] the
 * product wants; B given as [n, k], linear's weight, needs op T). D^T is
 * [n, m] column-major with ld n, which is D packed row-major; the bias
 * epilogue adds a vector along D^T's rows, i.e. bias[j] to D's column j.
 *
 * Precision as PyTorch's CUDA matmuls: f16 and bf16 multiply on tensor
 * cores and accumulate in f32 (CUBLAS_COMPUTE_32F, scale type float); f32 is
 * exact (CUBLAS_COMPUTE_32F) unless the caller allows TF32.
 *
 * The HIP build compiles this file against hipBLASLt, whose matmul API
 * mirrors cuBLASLt's: blas_port.h maps the names and enum values, and the
 * few things hipBLASLt lacks (a status-name function, alignment
 * preferences, TF32) are left out under its BLAS_HAS_* switches. The
 * row-major swap, the epilogues and the precision above are the same
 * there (f32 is always exact); nothing of it has run on an AMD GPU yet
 * (docs/backends/hip.md).
 */
#include "plugins/cuda/cuda_api.h"
#include "plugins/cuda/cuda_blas.h"

#include "plugins/cuda/blas_port.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The cublasLt.h entry points called, bound by name from the library (the
 * HIP build: their hipBLASLt namesakes, blas_port.h). */
#define CUDA_BLAS_FUNCTIONS(X)                                                                  \
  X(cublasLtCreate) X(cublasLtDestroy) X(cublasLtGetVersion) BLAS_OWN_FUNCTIONS(X)           \
  X(cublasLtMatmul) X(cublasLtMatmulDescCreate) X(cublasLtMatmulDescDestroy)                 \
  X(cublasLtMatmulDescSetAttribute) X(cublasLtMatrixLayoutCreate)                            \
  X(cublasLtMatrixLayoutDestroy) X(cublasLtMatrixLayoutSetAttribute)                         \
  X(cublasLtMatmulPreferenceCreate) X(cublasLtMatmulPreferenceDestroy)                       \
  X(cublasLtMatmulPreferenceSetAttribute) X(cublasLtMatmulAlgoGetHeuristic)

#define CUDA_BLAS_FIELD(name) __typeof__(name) *name;

struct cuda_blas {
  void *lib;               /* dlopen handle, closed by cuda_blas_close */
  cublasLtHandle_t handle; /* destroyed by cuda_blas_close */
  size_t version;          /* cublasLtGetVersion() (HIP: hipblasLtGetVersion's) */
  CUDA_BLAS_FUNCTIONS(CUDA_BLAS_FIELD)
};

struct cuda_gemm {
  const cuda_blas *b;                       /* made from; its destroyers free the plan */
  cublasLtMatmulDesc_t op;                  /* compute type, transposes, epilogue */
  cublasLtMatrixLayout_t la, lb, lc, ld;    /* cuBLASLt's A (our B), B (our A), C, D; lc NULL: use ld */
  cublasLtMatmulAlgo_t algo;                /* for pointers aligned as align says */
  cublasLtMatmulAlgo_t algo_any;            /* for any 16-byte aligned pointers (algo when align is 16) */
  unsigned align[GEMM_OPERANDS];            /* desc's, each at least CUDA_BLAS_ALIGNMENT */
  int tuned;                                /* algorithms timed to choose algo (0: the heuristic's first) */
  uint64_t workspace;                       /* bytes the hungrier of the two algorithms needs */
  float alpha, beta;                        /* scale type float; beta 0 when C is not read */
  bool has_c, c_is_bias, bias, c_in_place_ok; /* C read; C's broadcast row fed as the bias */
  pthread_mutex_t lock;                     /* serialises setting the bias pointer and the call */
};

#define BLAS_ROW(name) CUDA_SYMBOL(struct cuda_blas, name)
static const cuda_symbol blas_symbols[] = {CUDA_BLAS_FUNCTIONS(BLAS_ROW)};

/* The status's name, for sentences. */
static const char *status_name(const cuda_blas *b, cublasStatus_t st) {
#if BLAS_HAS_STATUS_NAME
  return b->cublasLtGetStatusName(st);
#else /* hipBLASLt has no such entry point: blas_port.h names them */
  (void)b;
  return blas_status_name(st);
#endif
}

const char *cuda_blas_open(cuda_blas **out, char *why, size_t cap) {
  *out = NULL;
  cuda_blas *b = calloc(1, sizeof *b);
  if (!b) return "out of memory opening " BLAS_NAME;
  b->lib = blas_library_open();
  if (!b->lib) {
    free(b);
    return BLAS_NOT_FOUND;
  }
  const char *missing = cuda_library_bind(b, b->lib, blas_symbols, sizeof blas_symbols / sizeof *blas_symbols);
  if (missing) {
    snprintf(why, cap, BLAS_LIBRARY " has no %s: " BLAS_TOO_OLD, missing);
    dlclose(b->lib);
    free(b);
    return why;
  }
  cublasStatus_t st = b->cublasLtCreate(&b->handle);
  if (st != CUBLAS_STATUS_SUCCESS) {
    snprintf(why, cap, CUDA_STR(cublasLtCreate) " failed: %s", status_name(b, st));
    dlclose(b->lib);
    free(b);
    return why;
  }
#if !defined(ALLOY_GPU_HIP)
  b->version = b->cublasLtGetVersion();
#else
  /* hipblasLtGetVersion takes the handle; before 0.7 the type enums'
   * values were hipBLASLt's own, which the declarations here do not
   * follow */
  int v = 0;
  st = b->hipblasLtGetVersion(b->handle, &v);
  b->version = st == HIPBLAS_STATUS_SUCCESS && v > 0 ? (size_t)v : 0;
  if (b->version < BLAS_MIN_VERSION) {
    if (st != HIPBLAS_STATUS_SUCCESS)
      snprintf(why, cap, "hipblasLtGetVersion failed: %s", status_name(b, st));
    else
      snprintf(why, cap, BLAS_LIBRARY " is hipBLASLt %d.%d.%d: this build follows the types of 0.7 and later",
               v / 100000, v / 100 % 1000, v % 100);
    b->cublasLtDestroy(b->handle);
    dlclose(b->lib);
    free(b);
    return why;
  }
#endif
  *out = b;
  return NULL;
}

void cuda_blas_close(cuda_blas *b) {
  if (!b) return;
  if (b->handle) b->cublasLtDestroy(b->handle);
  dlclose(b->lib);
  free(b);
}

size_t cuda_blas_version(const cuda_blas *b) { return b->version; }

void cuda_gemm_free(cuda_gemm *g) {
  if (!g) return;
  const cuda_blas *b = g->b;
  if (g->la) b->cublasLtMatrixLayoutDestroy(g->la);
  if (g->lb) b->cublasLtMatrixLayoutDestroy(g->lb);
  if (g->lc) b->cublasLtMatrixLayoutDestroy(g->lc);
  if (g->ld) b->cublasLtMatrixLayoutDestroy(g->ld);
  if (g->op) b->cublasLtMatmulDescDestroy(g->op);
  pthread_mutex_destroy(&g->lock);
  free(g);
}

/* One column-major operand as cuBLASLt sees it (rows, cols, ld) and its batch
 * stride; name says which of the caller's operands it is, for sentences. */
typedef struct blas_operand {
  const char *name;
  int64_t rows, cols, ld, stride;
} blas_operand;

/* A leading dimension is only read past the first column: with one column any
 * ld will do, and PyTorch gives odd strides to size-1 dims, so it is mended.
 * Whether the operand is a matrix cuBLASLt can read; if not, why says so. */
static bool operand_ok(blas_operand *o, char *why, size_t cap) {
  if (o->cols == 1 && o->ld < o->rows) o->ld = o->rows;
  if (o->ld < o->rows) {
    snprintf(why, cap, BLAS_NAME " needs %s's row stride %lld to be at least its row length %lld",
             o->name, (long long)o->ld, (long long)o->rows);
    return false;
  }
  if (o->stride < 0) {
    snprintf(why, cap, "%s's batch stride %lld is negative", o->name, (long long)o->stride);
    return false;
  }
  return true;
}

/* Creates *out for o; the first failing call's status (SUCCESS when none). */
static cublasStatus_t make_layout(const cuda_blas *b, cublasLtMatrixLayout_t *out, cudaDataType type,
                                  const blas_operand *o, int32_t batch) {
  cublasStatus_t st = b->cublasLtMatrixLayoutCreate(out, type, (uint64_t)o->rows, (uint64_t)o->cols, o->ld);
  if (st != CUBLAS_STATUS_SUCCESS || batch == 1) return st;
  st = b->cublasLtMatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch);
  if (st != CUBLAS_STATUS_SUCCESS) return st;
  return b->cublasLtMatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &o->stride,
                                             sizeof o->stride);
}

/* Sets one attribute of the matmul descriptor unless an earlier call failed. */
static void set_op(const cuda_blas *b, cublasLtMatmulDesc_t op, cublasLtMatmulDescAttributes_t attr,
                   const void *value, size_t size, cublasStatus_t *st) {
  if (*st == CUBLAS_STATUS_SUCCESS) *st = b->cublasLtMatmulDescSetAttribute(op, attr, value, size);
}

/* The same for the heuristic's preferences. */
static void set_pref(const cuda_blas *b, cublasLtMatmulPreference_t pref,
                     cublasLtMatmulPreferenceAttributes_t attr, const void *value, size_t size,
                     cublasStatus_t *st) {
  if (*st == CUBLAS_STATUS_SUCCESS) *st = b->cublasLtMatmulPreferenceSetAttribute(pref, attr, value, size);
}

/* The product in the caller's terms, for sentences: "bf16 [4, 256, 128] @ [128, 512]". */
static void describe(const cuda_gemm_desc *d, char *buf, size_t cap) {
  snprintf(buf, cap, "%s [%lld, %lld, %lld]%s @ [%lld, %lld]%s", alloy_dtype_short_name(d->dtype),
           (long long)d->batch, (long long)d->m, (long long)d->k, d->trans_a ? " (given transposed)" : "",
           (long long)d->k, (long long)d->n, d->trans_b ? " (given transposed)" : "");
}

/* The most algorithms the heuristic is asked for when they are timed. */
#define CUDA_BLAS_CANDIDATES 8

/* Up to want algorithms for g's descriptors, best first, for pointers
 * aligned as align (bytes, per GEMM operand) and at most max_workspace
 * bytes of scratch; *found gets how many came, each of state SUCCESS. */
static cublasStatus_t heuristic(const cuda_blas *b, const cuda_gemm *g, const unsigned *align,
                                uint64_t max_workspace, int want, cublasLtMatmulHeuristicResult_t *results,
                                int *found) {
  *found = 0;
  cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
  if (g->bias) {
    /* the heuristic reads the bias pointer's alignment only: a stand-in
     * with the alignment asked for; cuda_gemm_run sets the real one */
    const void *stand_in = (const void *)(uintptr_t)align[GEMM_BIAS];
    st = b->cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &stand_in,
                                           sizeof stand_in);
  }
  cublasLtMatmulPreference_t pref = NULL;
  if (st == CUBLAS_STATUS_SUCCESS) st = b->cublasLtMatmulPreferenceCreate(&pref);
  set_pref(b, pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_workspace, sizeof max_workspace, &st);
#if BLAS_HAS_ALIGNMENT_PREFS /* hipBLASLt's heuristic takes no alignment (blas_port.h) */
  /* cuBLASLt's A is our B and its B our A; without C, D stands in for it */
  const uint32_t a = align[GEMM_B], bb = align[GEMM_A], c = align[g->has_c ? GEMM_C : GEMM_D], d = align[GEMM_D];
  set_pref(b, pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &a, sizeof a, &st);
  set_pref(b, pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &bb, sizeof bb, &st);
  set_pref(b, pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &c, sizeof c, &st);
  set_pref(b, pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &d, sizeof d, &st);
#endif
  int got = 0;
  memset(results, 0, (size_t)want * sizeof *results);
  if (st == CUBLAS_STATUS_SUCCESS)
    st = b->cublasLtMatmulAlgoGetHeuristic(b->handle, g->op, g->la, g->lb, g->lc ? g->lc : g->ld, g->ld, pref,
                                           want, results, &got);
  if (pref) b->cublasLtMatmulPreferenceDestroy(pref);
  for (int i = 0; st == CUBLAS_STATUS_SUCCESS && i < got && results[i].state == CUBLAS_STATUS_SUCCESS; i++)
    *found = i + 1;
  return st;
}

/* Elements a column-major operand spans over its batch. */
static uint64_t operand_span(const blas_operand *o, uint64_t batch) {
  return (uint64_t)((o->cols - 1) * o->ld + o->rows) + (batch - 1) * (uint64_t)o->stride;
}

/* Enqueues g's product with algorithm algo on stream (without C, D stands
 * in for it: beta is 0, so it is not read). */
static cublasStatus_t matmul(const cuda_blas *b, const cuda_gemm *g, const cublasLtMatmulAlgo_t *algo,
                             CUdeviceptr a, CUdeviceptr bm, CUdeviceptr c, CUdeviceptr d, CUdeviceptr ws,
                             uint64_t ws_bytes, CUstream stream) {
  const void *c_ptr = (const void *)(uintptr_t)(g->has_c ? c : d);
  return b->cublasLtMatmul(b->handle, g->op, &g->alpha, (const void *)(uintptr_t)bm, g->la,
                           (const void *)(uintptr_t)a, g->lb, &g->beta, c_ptr, g->lc ? g->lc : g->ld,
                           (void *)(uintptr_t)d, g->ld, algo, (void *)(uintptr_t)ws, (size_t)ws_bytes, stream);
}

/* Of the n algorithms found, the index of the fastest, each run on zeroed
 * scratch operands (operand_bytes each, by GEMM operand) tune->runs
 * times after one to warm up; 0 (the heuristic's first) when scratch
 * cannot be had or nothing could be timed. */
static int fastest(const cuda_blas *b, cuda_gemm *g, const cuda_tuning *tune, const uint64_t *operand_bytes,
                   const cublasLtMatmulHeuristicResult_t *results, int n) {
  const cuda_api *api = tune->api;
  uint64_t bytes[GEMM_OPERANDS + 1]; /* the operands', then the workspace */
  memcpy(bytes, operand_bytes, GEMM_OPERANDS * sizeof *bytes);
  bytes[GEMM_OPERANDS] = 0;
  for (int i = 0; i < n; i++)
    if (results[i].workspaceSize > bytes[GEMM_OPERANDS]) bytes[GEMM_OPERANDS] = results[i].workspaceSize;
  CUdeviceptr scratch[GEMM_OPERANDS + 1] = {0};
  bool ok = true;
  for (int i = 0; i <= GEMM_OPERANDS && ok; i++)
    ok = !bytes[i] || (api->cuMemAlloc(&scratch[i], bytes[i]) == CUDA_SUCCESS &&
                       api->cuMemsetD8Async(scratch[i], 0, bytes[i], tune->stream) == CUDA_SUCCESS);
  int best = 0;
  double best_ms = -1;
  CUevent e0 = NULL, e1 = NULL;
  ok = ok && api->cuEventCreate(&e0, CU_EVENT_DEFAULT) == CUDA_SUCCESS &&
       api->cuEventCreate(&e1, CU_EVENT_DEFAULT) == CUDA_SUCCESS;
  if (ok && g->bias) {
    const void *bias_ptr = (const void *)(uintptr_t)(g->c_is_bias ? scratch[GEMM_C] : scratch[GEMM_BIAS]);
    ok = b->cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_ptr,
                                           sizeof bias_ptr) == CUBLAS_STATUS_SUCCESS;
  }
  for (int i = 0; i < n && ok; i++) {
    const cublasLtMatmulAlgo_t *algo = &results[i].algo;
    CUdeviceptr ws = scratch[GEMM_OPERANDS];
    uint64_t wsb = bytes[GEMM_OPERANDS];
    if (matmul(b, g, algo, scratch[GEMM_A], scratch[GEMM_B], scratch[GEMM_C], scratch[GEMM_D], ws, wsb,
               tune->stream) != CUBLAS_STATUS_SUCCESS)
      continue; /* not for these operands after all: never chosen */
    bool ran = api->cuEventRecord(e0, tune->stream) == CUDA_SUCCESS;
    for (int r = 0; r < tune->runs && ran; r++)
      ran = matmul(b, g, algo, scratch[GEMM_A], scratch[GEMM_B], scratch[GEMM_C], scratch[GEMM_D], ws, wsb,
                   tune->stream) == CUBLAS_STATUS_SUCCESS;
    float ms = 0;
    if (ran && api->cuEventRecord(e1, tune->stream) == CUDA_SUCCESS &&
        api->cuEventSynchronize(e1) == CUDA_SUCCESS && api->cuEventElapsedTime(&ms, e0, e1) == CUDA_SUCCESS &&
        (best_ms < 0 || ms < best_ms))
      best = i, best_ms = ms;
  }
  if (e0) api->cuEventDestroy(e0);
  if (e1) api->cuEventDestroy(e1);
  api->cuStreamSynchronize(tune->stream);
  for (int i = 0; i <= GEMM_OPERANDS; i++)
    if (scratch[i]) api->cuMemFree(scratch[i]);
  return best;
}

const char *cuda_gemm_plan(cuda_blas *b, const cuda_gemm_desc *desc, uint64_t max_workspace,
                           const cuda_tuning *tune, cuda_gemm **out, uint64_t *workspace, char *why,
                           size_t cap) {
  *out = NULL;
  *workspace = 0;
  cudaDataType type;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  switch (desc->dtype) {
  case ALLOY_F32:
    type = CUDA_R_32F;
#if BLAS_HAS_TF32 /* hipBLASLt's xf32 is not used: float32 stays exact there (blas_port.h) */
    if (desc->allow_tf32) compute = CUBLAS_COMPUTE_32F_FAST_TF32;
#endif
    break;
  case ALLOY_F16: type = CUDA_R_16F; break;
  case ALLOY_BF16: type = CUDA_R_16BF; break;
  default:
    snprintf(why, cap, BLAS_NAME " products take float32, float16 or bfloat16, not %s",
             alloy_dtype_name(desc->dtype));
    return why;
  }
  if (desc->m < 1 || desc->n < 1 || desc->k < 1 || desc->batch < 1 || desc->batch > INT32_MAX) {
    snprintf(why, cap, "a product of m %lld, n %lld, k %lld, batch %lld is empty or too big for " BLAS_NAME,
             (long long)desc->m, (long long)desc->n, (long long)desc->k, (long long)desc->batch);
    return why;
  }
  if (desc->activation < 0 || desc->activation > 2) {
    snprintf(why, cap, "activation %d is none of 0 (none), 1 (relu), 2 (gelu)", desc->activation);
    return why;
  }
  /* cuBLASLt's A is our B and its B our A (the file's opening paragraph). */
  const int64_t m = desc->m, n = desc->n, k = desc->k;
  blas_operand ob = {"B", desc->trans_b ? k : n, desc->trans_b ? n : k, desc->ldb, desc->stride_b};
  blas_operand oa = {"A", desc->trans_a ? m : k, desc->trans_a ? k : m, desc->lda, desc->stride_a};
  blas_operand od = {"D", n, m, n, m * n};
  blas_operand oc = {"C", n, m, desc->ldc, desc->stride_c};
  if (!operand_ok(&ob, why, cap) || !operand_ok(&oa, why, cap)) return why;

  bool c_is_bias = false;
  if (desc->has_c) {
    if (oc.cols == 1 && oc.ld < oc.rows) oc.ld = oc.rows;
    if (oc.ld == 0 && (desc->batch == 1 || oc.stride == 0)) {
      /* One row broadcast to every row is a bias vector; cuBLASLt's C must
       * not overlap itself, so the row goes in through the bias epilogue,
       * which adds it unscaled. */
      if (desc->beta != 1.0 || desc->bias) {
        snprintf(why, cap, "a broadcast row C (ldc 0) needs beta 1 and no separate bias, not beta %g%s",
                 desc->beta, desc->bias ? " and a bias" : "");
        return why;
      }
      c_is_bias = true;
    } else if (!operand_ok(&oc, why, cap)) {
      return why;
    }
  }

  cuda_gemm *g = calloc(1, sizeof *g);
  if (!g) return "out of memory planning a " BLAS_NAME " product";
  g->b = b;
  pthread_mutex_init(&g->lock, NULL);
  g->alpha = (float)desc->alpha;
  g->beta = desc->has_c && !c_is_bias ? (float)desc->beta : 0.0f;
  g->has_c = desc->has_c && !c_is_bias;
  g->c_is_bias = c_is_bias;
  g->bias = desc->bias || c_is_bias;
  g->c_in_place_ok = oc.ld == n && (desc->batch == 1 || oc.stride == m * n);

  const int32_t batch = (int32_t)desc->batch;
  const char *step = CUDA_STR(cublasLtMatrixLayoutCreate); /* hipblasLt... on HIP */
  cublasStatus_t st = make_layout(b, &g->la, type, &ob, batch);
  if (st == CUBLAS_STATUS_SUCCESS) st = make_layout(b, &g->lb, type, &oa, batch);
  if (st == CUBLAS_STATUS_SUCCESS) st = make_layout(b, &g->ld, type, &od, batch);
  if (st == CUBLAS_STATUS_SUCCESS && g->has_c) st = make_layout(b, &g->lc, type, &oc, batch);

  if (st == CUBLAS_STATUS_SUCCESS) {
    step = CUDA_STR(cublasLtMatmulDescCreate);
    st = b->cublasLtMatmulDescCreate(&g->op, compute, CUDA_R_32F);
  }
  const int32_t trans_first = desc->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int32_t trans_second = desc->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  set_op(b, g->op, CUBLASLT_MATMUL_DESC_TRANSA, &trans_first, sizeof trans_first, &st);
  set_op(b, g->op, CUBLASLT_MATMUL_DESC_TRANSB, &trans_second, sizeof trans_second, &st);
  uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  if (desc->activation == 1) epilogue = g->bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
  else if (desc->activation == 2) epilogue = g->bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
  else if (g->bias) epilogue = CUBLASLT_EPILOGUE_BIAS;
  set_op(b, g->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue, &st);
  if (g->bias) {
    /* the bias is of D's type (cublasLt.h, BIAS_DATA_TYPE) */
    const int32_t bias_type = type;
    set_op(b, g->op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof bias_type, &st);
  }
  if (st != CUBLAS_STATUS_SUCCESS) {
    snprintf(why, cap, "%s failed: %s", step, status_name(b, st));
    cuda_gemm_free(g);
    return why;
  }

  for (int i = 0; i < GEMM_OPERANDS; i++)
    g->align[i] = desc->align[i] > CUDA_BLAS_ALIGNMENT && desc->align[i] <= 256 &&
                          !(desc->align[i] & (desc->align[i] - 1))
                      ? desc->align[i]
                      : CUDA_BLAS_ALIGNMENT;
  if (c_is_bias) g->align[GEMM_BIAS] = g->align[GEMM_C];

  /* Two algorithms: the fastest for the pointers' expected alignment (the
   * heuristic's first, or of its first few the fastest timed), and the
   * heuristic's first for any 16-byte aligned pointers, which a run takes
   * when its pointers fall short of the expectation. The default
   * preference assumes 256 bytes and would pick kernels that a less
   * aligned view breaks; PyTorch passes its pointers' real alignment, as
   * align does here. */
  static const unsigned any[GEMM_OPERANDS] = {CUDA_BLAS_ALIGNMENT, CUDA_BLAS_ALIGNMENT, CUDA_BLAS_ALIGNMENT,
                                             CUDA_BLAS_ALIGNMENT, CUDA_BLAS_ALIGNMENT};
  const int want = tune && tune->candidates > 1 ? tune->candidates : 1;
  cublasLtMatmulHeuristicResult_t results[CUDA_BLAS_CANDIDATES];
  int found = 0;
  st = heuristic(b, g, g->align, max_workspace, want < CUDA_BLAS_CANDIDATES ? want : CUDA_BLAS_CANDIDATES,
                 results, &found);
  cublasLtMatmulHeuristicResult_t first_any;
  int found_any = 0;
  if (st == CUBLAS_STATUS_SUCCESS) {
    if (memcmp(g->align, any, sizeof any)) st = heuristic(b, g, any, max_workspace, 1, &first_any, &found_any);
    else if (found > 0) first_any = results[0], found_any = 1;
  }
  if (st != CUBLAS_STATUS_SUCCESS || found < 1 || found_any < 1) {
    char what[160];
    describe(desc, what, sizeof what);
    if (st == CUBLAS_STATUS_SUCCESS) st = CUBLAS_STATUS_NOT_SUPPORTED;
    snprintf(why, cap, BLAS_NAME " has no algorithm for %s%s%s within %llu bytes of workspace (%s)", what,
             desc->bias || c_is_bias ? " with a bias" : "",
             desc->activation == 1 ? " and relu" : desc->activation == 2 ? " and gelu" : "",
             (unsigned long long)max_workspace,
             status_name(b, st));
    cuda_gemm_free(g);
    return why;
  }
  int best = 0;
  if (found > 1) {
    const uint64_t es = alloy_dtype_size(desc->dtype), nb = (uint64_t)desc->batch;
    uint64_t bytes[GEMM_OPERANDS] = {[GEMM_A] = operand_span(&oa, nb) * es, [GEMM_B] = operand_span(&ob, nb) * es,
                                     [GEMM_D] = operand_span(&od, nb) * es, [GEMM_BIAS] = (uint64_t)n * es};
    if (g->has_c) bytes[GEMM_C] = operand_span(&oc, nb) * es;
    else if (c_is_bias) bytes[GEMM_C] = (uint64_t)n * es;
    best = fastest(b, g, tune, bytes, results, found);
    g->tuned = found;
  }
  g->algo = results[best].algo;
  g->algo_any = first_any.algo;
  g->workspace = results[best].workspaceSize > first_any.workspaceSize ? results[best].workspaceSize
                                                                        : first_any.workspaceSize;
  *workspace = g->workspace;
  *out = g;
  return NULL;
}

int cuda_gemm_tuned(const cuda_gemm *g) { return g->tuned; }

/* Whether the plan's kernels can read ptr, the operand named; if not, why
 * says so. */
static bool pointer_ok(CUdeviceptr ptr, const char *name, char *why, size_t cap) {
  if (ptr == 0) {
    snprintf(why, cap, "the " BLAS_NAME " product's %s is a null pointer", name);
    return false;
  }
  if (ptr % CUDA_BLAS_ALIGNMENT) {
    snprintf(why, cap, "the " BLAS_NAME " product's %s at 0x%llx is not %d-byte aligned", name,
             (unsigned long long)ptr, CUDA_BLAS_ALIGNMENT);
    return false;
  }
  return true;
}

const char *cuda_gemm_run(cuda_blas *b, const cuda_gemm *g, CUdeviceptr a, CUdeviceptr bm,
                          CUdeviceptr c, CUdeviceptr d, CUdeviceptr bias, CUdeviceptr workspace,
                          uint64_t workspace_bytes, CUstream stream, char *why, size_t cap) {
  bool ok = pointer_ok(a, "A", why, cap) && pointer_ok(bm, "B", why, cap) && pointer_ok(d, "D", why, cap);
  if (ok && (g->has_c || g->c_is_bias)) ok = pointer_ok(c, "C", why, cap);
  if (ok && g->bias && !g->c_is_bias) ok = pointer_ok(bias, "bias", why, cap);
  if (ok && g->workspace) ok = pointer_ok(workspace, "workspace", why, cap);
  if (!ok) return why;
  if (workspace_bytes < g->workspace) {
    snprintf(why, cap, "the " BLAS_NAME " product needs %llu bytes of workspace, given %llu",
             (unsigned long long)g->workspace, (unsigned long long)workspace_bytes);
    return why;
  }
  if (g->has_c && c == d && !g->c_in_place_ok)
    return BLAS_NAME " writes D over C only when C is laid out as D (ldc n, stride_c m*n)";
  /* the planned algorithm when every pointer is as aligned as it assumes */
  const CUdeviceptr ptrs[GEMM_OPERANDS] = {a, bm, g->has_c || g->c_is_bias ? c : d, d, g->c_is_bias ? c : bias};
  bool aligned = true;
  for (int i = 0; i < GEMM_OPERANDS; i++) aligned = aligned && ptrs[i] % g->align[i] == 0;
  const cublasLtMatmulAlgo_t *algo = aligned ? &g->algo : &g->algo_any;
  cublasStatus_t st;
  cuda_gemm *mut = (cuda_gemm *)g; /* the lock and the bias pointer; the plan was made non-const */
  if (g->bias) {
    /* The bias pointer lives in the shared descriptor, which cublasLtMatmul
     * reads on the host while enqueueing: hold the lock across both. */
    const void *bias_ptr = (const void *)(uintptr_t)ptrs[GEMM_BIAS];
    pthread_mutex_lock(&mut->lock);
    st = b->cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_ptr,
                                           sizeof bias_ptr);
    if (st == CUBLAS_STATUS_SUCCESS) st = matmul(b, g, algo, a, bm, c, d, workspace, workspace_bytes, stream);
    pthread_mutex_unlock(&mut->lock);
  } else {
    st = matmul(b, g, algo, a, bm, c, d, workspace, workspace_bytes, stream);
  }
  if (st != CUBLAS_STATUS_SUCCESS) {
    snprintf(why, cap, CUDA_STR(cublasLtMatmul) " failed: %s", status_name(b, st));
    return why;
  }
  return NULL;
}
