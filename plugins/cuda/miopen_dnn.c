/*
 * plugins/cuda/miopen_dnn.c: the hip backend's convolutions through AMD's
 * MIOpen, behind the interface of cuda_dnn.h: the HIP build compiles this
 * file where the CUDA build compiles cuda_dnn.c (cuDNN), and the backend
 * (cuda_backend.c) cannot tell them apart. MIOpen is opened with dlopen
 * (libMIOpen.so.1 or .so on the loader's path, else under $ROCM_PATH/lib,
 * default /opt/rocm) and bound from a symbol table as cuda_blas.c binds
 * its library; its C API is declared in rocm_api.h, since Debian has
 * neither the library nor its headers. Without it, the backend runs the
 * convolutions on Alloy's own kernels (cuda_codegen_gemm.c).
 *
 * A convolution (cuda_conv_desc) is planned once with MIOpen's immediate
 * mode: tensor descriptors with the desc's sizes and strides, a
 * convolution descriptor (cross-correlation, paddings, strides,
 * dilations, the group count x's channels over w's), then the forward
 * solutions MIOpen lists for the problem, best first (by its find
 * database, else its heuristics). The first allowed one whose workspace
 * fits the caller's bound and that compiles is kept, or with tuning
 * (cuda_tuning) the fastest of the first few such, each timed on the
 * device; a run is one miopenConvolutionForwardImmediate. The bias is
 * never fused: cuda_conv_plan says so, and the caller adds it with its
 * own kernel after the convolution (as PyTorch adds it after
 * miopen_convolution).
 *
 * Numerics, honestly: the C API has no compute type, so that the
 * arithmetic is float for every dtype is MIOpen's design (its kernels and
 * matrix-core instructions accumulate in float), not something asked for
 * here or checked. What this file controls: for float32 without
 * allow_tf32, no solution of the FFT or Winograd algorithms is taken
 * (their transforms round apart from a direct sum, as cuda_dnn.c keeps
 * them out of cuDNN's engines), so the ones left are direct, GEMM and
 * implicit-GEMM solutions; and the alternate fp16 implementation (which
 * rounds float16 through bfloat16 on gfx90a) is turned off where
 * miopenSetConvolutionAttribute exists (MIOpen's forward default is off
 * too). What it cannot control: whether a solution of those algorithms
 * uses a reduced-precision float32 instruction (MI300's xf32) is not
 * something the C API says. Nothing of this has run on an AMD GPU yet:
 * tests/test_hip_vendor.c proves the calls and their values against a
 * fake libMIOpen.so only.
 *
 * Threads: as cuda_dnn.h says. Plans of equal descriptors are one plan,
 * counted; the library's lock guards the plan list and the handle's
 * stream, which a run sets before the call that reads it.
 */
#if defined(ALLOY_GPU_HIP)

#include "plugins/cuda/cuda_api.h"
#include "plugins/cuda/cuda_dnn.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/dtype.h"
#include "plugins/cuda/rocm_api.h"

/* The miopen.h entry points called, bound by name from the library. */
#define MIOPEN_FUNCTIONS(X)                                                                      \
  X(miopenGetVersion) X(miopenGetErrorString) X(miopenCreate) X(miopenDestroy) X(miopenSetStream)  \
  X(miopenCreateTensorDescriptor) X(miopenSetTensorDescriptor) X(miopenDestroyTensorDescriptor)    \
  X(miopenCreateConvolutionDescriptor) X(miopenInitConvolutionNdDescriptor)                        \
  X(miopenSetConvolutionGroupCount) X(miopenDestroyConvolutionDescriptor)                          \
  X(miopenConvolutionForwardGetSolutionCount) X(miopenConvolutionForwardGetSolution)               \
  X(miopenConvolutionForwardGetSolutionWorkspaceSize) X(miopenConvolutionForwardCompileSolution)   \
  X(miopenConvolutionForwardImmediate)

#define MIOPEN_FIELD(name) __typeof__(name) *name;

/* The oldest MIOpen taken (major * 10000 + minor * 100 + patch): the
 * immediate mode and the bfloat16 type are 2.0's. */
#define MIOPEN_MIN_VERSION 20000

struct cuda_dnn {
  void *lib;             /* dlopen handle of libMIOpen */
  miopenHandle_t handle; /* destroyed by cuda_dnn_close */
  size_t version;        /* 30300 for 3.3.0 */
  char path[512];        /* the library's file, for logs */
  pthread_mutex_t lock;  /* the handle's stream while a plan runs; the plan list */
  cuda_conv *plans;      /* every plan alive, to share equal ones */
  /* (optional) miopenSetConvolutionAttribute (late 2021 on), or NULL */
  __typeof__(miopenSetConvolutionAttribute) *set_attribute;
  MIOPEN_FUNCTIONS(MIOPEN_FIELD)
};

struct cuda_conv {
  cuda_dnn *d;
  cuda_conv *next; /* in d->plans */
  int refs;
  cuda_conv_desc desc;
  uint64_t max_workspace;
  miopenTensorDescriptor_t x, w, y; /* alive as long as the plan */
  miopenConvolutionDescriptor_t conv;
  uint64_t solution;               /* MIOpen's id of the solution kept */
  miopenConvAlgorithm_t algorithm; /* its algorithm, for logs */
  float time;                      /* MIOpen's milliseconds for it, measured or estimated */
  uint64_t workspace;              /* bytes it needs */
  int listed;                      /* solutions MIOpen listed */
  int tuned;                       /* solutions timed to choose it (0: MIOpen's first allowed) */
};

#define MIOPEN_ROW(name) CUDA_SYMBOL(struct cuda_dnn, name)
static const cuda_symbol miopen_symbols[] = {MIOPEN_FUNCTIONS(MIOPEN_ROW)};

/* ---- opening -----------------------------------------------------------------*/

const char *cuda_dnn_open(cuda_dnn **out, char *why, size_t cap) {
  *out = NULL;
  cuda_dnn *d = calloc(1, sizeof *d);
  if (!d) return "out of memory opening MIOpen";
  static const char *const names[] = {"libMIOpen.so.1", "libMIOpen.so"};
  d->lib = rocm_library_open(names, 2);
  if (!d->lib) {
    free(d);
    return "libMIOpen.so not found: MIOpen is not in Debian; install ROCm's (libMIOpen.so.1 on the loader's "
           "path, or under $ROCM_PATH/lib, default /opt/rocm)";
  }
  const char *no = NULL;
  const char *missing =
      cuda_library_bind(d, d->lib, miopen_symbols, sizeof miopen_symbols / sizeof *miopen_symbols);
  size_t major = 0, minor = 0, patch = 0;
  if (missing) {
    snprintf(why, cap, "libMIOpen.so has no %s: it is older than MIOpen 2.0", missing);
    no = why;
  } else if (d->miopenGetVersion(&major, &minor, &patch) != miopenStatusSuccess ||
             (d->version = major * 10000 + minor * 100 + patch) < MIOPEN_MIN_VERSION) {
    snprintf(why, cap, "libMIOpen.so says it is version %zu.%zu.%zu; convolutions need MIOpen 2.0 or later",
             major, minor, patch);
    no = why;
  }
  if (!no) {
    void *fn = dlsym(d->lib, "miopenSetConvolutionAttribute");
    memcpy(&d->set_attribute, &fn, sizeof fn);
    Dl_info info;
    memcpy(&fn, &d->miopenCreate, sizeof fn);
    snprintf(d->path, sizeof d->path, "%s",
             dladdr(fn, &info) && info.dli_fname ? info.dli_fname : "libMIOpen.so");
    miopenStatus_t st = d->miopenCreate(&d->handle);
    if (st != miopenStatusSuccess) {
      snprintf(why, cap, "miopenCreate failed: %s", d->miopenGetErrorString(st));
      d->handle = NULL;
      no = why;
    }
  }
  if (no) {
    dlclose(d->lib);
    free(d);
    return no;
  }
  pthread_mutex_init(&d->lock, NULL);
  *out = d;
  return NULL;
}

static void conv_destroy(cuda_conv *c);

void cuda_dnn_close(cuda_dnn *d) {
  if (!d) return;
  while (d->plans) {
    cuda_conv *c = d->plans;
    d->plans = c->next;
    conv_destroy(c);
  }
  if (d->handle) d->miopenDestroy(d->handle);
  dlclose(d->lib);
  pthread_mutex_destroy(&d->lock);
  free(d);
}

size_t cuda_dnn_version(const cuda_dnn *d) { return d->version; }

const char *cuda_dnn_path(const cuda_dnn *d) { return d->path; }

/* ---- planning ----------------------------------------------------------------*/

static miopenDataType_t data_type(alloy_dtype t) {
  return t == ALLOY_F16 ? miopenHalf : t == ALLOY_BF16 ? miopenBFloat16 : miopenFloat;
}

static const char *algorithm_name(miopenConvAlgorithm_t a) {
  switch (a) {
  case miopenConvolutionAlgoGEMM: return "GEMM";
  case miopenConvolutionAlgoDirect: return "direct";
  case miopenConvolutionAlgoFFT: return "FFT";
  case miopenConvolutionAlgoWinograd: return "Winograd";
  case miopenConvolutionAlgoImplicitGEMM: return "implicit GEMM";
  }
  return "an unknown algorithm";
}

/* Whether solutions of algorithm a compute as desc allows (the file's
 * paragraph): FFT and Winograd only where float32 need not be exact. */
static bool algorithm_allowed(miopenConvAlgorithm_t a, const cuda_conv_desc *desc) {
  const bool exact = desc->dtype == ALLOY_F32 && !desc->allow_tf32;
  return !exact || (a != miopenConvolutionAlgoFFT && a != miopenConvolutionAlgoWinograd);
}

/* The convolution in the caller's terms, for sentences:
 * "f16 x [8, 3, 224, 224] w [64, 3, 7, 7] stride [2, 2] padding [3, 3] dilation [1, 1]". */
static void describe(const cuda_conv_desc *d, char *buf, size_t cap) {
  size_t len = (size_t)snprintf(buf, cap, "%s", alloy_dtype_short_name(d->dtype));
  const struct {
    const char *name;
    const int64_t *v;
    int n;
  } parts[] = {
      {"x", d->x_sizes, d->rank},
      {"w", d->w_sizes, d->rank},
      {"stride", d->stride, d->rank - 2},
      {"padding", d->padding, d->rank - 2},
      {"dilation", d->dilation, d->rank - 2},
  };
  for (size_t p = 0; p < sizeof parts / sizeof *parts && len < cap; p++) {
    len += (size_t)snprintf(buf + len, cap - len, " %s [", parts[p].name);
    for (int k = 0; k < parts[p].n && len < cap; k++)
      len += (size_t)snprintf(buf + len, cap - len, k ? ", %lld" : "%lld", (long long)parts[p].v[k]);
    if (len < cap) len += (size_t)snprintf(buf + len, cap - len, "]");
  }
}

/* Whether every value of v (n of them) is in [lo, INT_MAX]: MIOpen takes int. */
static bool ints_ok(const int64_t *v, int n, int64_t lo) {
  for (int i = 0; i < n; i++)
    if (v[i] < lo || v[i] > INT_MAX) return false;
  return true;
}

/* Checks what MIOpen cannot be asked: a sentence, or NULL. */
static const char *desc_wrong(const cuda_conv_desc *d, char *why, size_t cap) {
  if (d->dtype != ALLOY_F32 && d->dtype != ALLOY_F16 && d->dtype != ALLOY_BF16) {
    snprintf(why, cap, "MIOpen convolutions take float32, float16 or bfloat16, not %s",
             alloy_dtype_name(d->dtype));
    return why;
  }
  if (d->rank != 4 && d->rank != 5) {
    snprintf(why, cap, "MIOpen convolutions here are of rank 4 or 5, not %d", d->rank);
    return why;
  }
  if (d->w_sizes[1] < 1 || d->x_sizes[1] % d->w_sizes[1] != 0) {
    snprintf(why, cap, "x's %lld channels are not a multiple of w's %lld", (long long)d->x_sizes[1],
             (long long)d->w_sizes[1]);
    return why;
  }
  for (int k = 0; k < d->rank; k++)
    if (d->x_sizes[k] < 1 || d->w_sizes[k] < 1 || d->y_sizes[k] < 1)
      return "MIOpen takes no empty convolution";
  const int r = d->rank, nsp = r - 2;
  if (!ints_ok(d->x_sizes, r, 1) || !ints_ok(d->w_sizes, r, 1) || !ints_ok(d->y_sizes, r, 1) ||
      !ints_ok(d->x_strides, r, 0) || !ints_ok(d->w_strides, r, 0) || !ints_ok(d->y_strides, r, 0) ||
      !ints_ok(d->stride, nsp, 1) || !ints_ok(d->padding, nsp, 0) || !ints_ok(d->dilation, nsp, 1))
    return "MIOpen takes sizes, strides, paddings and dilations as int: this convolution's do not fit, "
           "or one is negative";
  return NULL;
}

static bool same_desc(const cuda_conv_desc *a, const cuda_conv_desc *b) {
  if (a->dtype != b->dtype || a->rank != b->rank || a->bias != b->bias || a->allow_tf32 != b->allow_tf32)
    return false;
  size_t r = sizeof(int64_t) * (size_t)a->rank, s = sizeof(int64_t) * (size_t)(a->rank - 2);
  return !memcmp(a->x_sizes, b->x_sizes, r) && !memcmp(a->x_strides, b->x_strides, r) &&
         !memcmp(a->w_sizes, b->w_sizes, r) && !memcmp(a->w_strides, b->w_strides, r) &&
         !memcmp(a->y_sizes, b->y_sizes, r) && !memcmp(a->y_strides, b->y_strides, r) &&
         !memcmp(a->stride, b->stride, s) && !memcmp(a->padding, b->padding, s) &&
         !memcmp(a->dilation, b->dilation, s);
}

static void conv_destroy(cuda_conv *c) {
  cuda_dnn *d = c->d;
  if (c->x) d->miopenDestroyTensorDescriptor(c->x);
  if (c->w) d->miopenDestroyTensorDescriptor(c->w);
  if (c->y) d->miopenDestroyTensorDescriptor(c->y);
  if (c->conv) d->miopenDestroyConvolutionDescriptor(c->conv);
  free(c);
}

/* A plan being built: its first failing call's status and name; every
 * call after a failure does nothing. */
typedef struct build {
  cuda_dnn *d;
  cuda_conv *c;
  miopenStatus_t st;
  const char *step;
  const cuda_tuning *tune; /* or NULL */
  CUdeviceptr scratch[4];  /* tuning: x, w, y, the workspace (0: not yet) */
  bool scratch_failed;     /* an allocation failed: no more timing */
} build;

static void call(build *b, miopenStatus_t st, const char *step) {
  if (b->st == miopenStatusSuccess && st != miopenStatusSuccess) b->st = st, b->step = step;
}

/* A tensor descriptor of t's sizes and strides (ints: desc_wrong checked). */
static miopenTensorDescriptor_t tensor(build *b, miopenDataType_t type, int rank, const int64_t *sizes,
                                       const int64_t *strides) {
  if (b->st != miopenStatusSuccess) return NULL;
  miopenTensorDescriptor_t t = NULL;
  call(b, b->d->miopenCreateTensorDescriptor(&t), "miopenCreateTensorDescriptor");
  if (b->st != miopenStatusSuccess) return NULL;
  int dims[5], str[5];
  for (int k = 0; k < rank; k++) dims[k] = (int)sizes[k], str[k] = (int)strides[k];
  call(b, b->d->miopenSetTensorDescriptor(t, type, rank, dims, str), "miopenSetTensorDescriptor");
  return t;
}

/* The descriptors of c's convolution; false (b->st, b->step) if MIOpen
 * refuses one. */
static bool describe_problem(build *b) {
  cuda_dnn *d = b->d;
  cuda_conv *c = b->c;
  const cuda_conv_desc *desc = &c->desc;
  const int r = desc->rank, nsp = r - 2;
  const miopenDataType_t type = data_type(desc->dtype);
  c->x = tensor(b, type, r, desc->x_sizes, desc->x_strides);
  c->w = tensor(b, type, r, desc->w_sizes, desc->w_strides);
  c->y = tensor(b, type, r, desc->y_sizes, desc->y_strides);
  if (b->st == miopenStatusSuccess)
    call(b, d->miopenCreateConvolutionDescriptor(&c->conv), "miopenCreateConvolutionDescriptor");
  if (b->st != miopenStatusSuccess) return false;
  int pad[3], stride[3], dil[3];
  for (int k = 0; k < nsp; k++)
    pad[k] = (int)desc->padding[k], stride[k] = (int)desc->stride[k], dil[k] = (int)desc->dilation[k];
  /* cross-correlation, PyTorch's; the groups are x's channels over w's */
  call(b, d->miopenInitConvolutionNdDescriptor(c->conv, nsp, pad, stride, dil, miopenConvolution),
       "miopenInitConvolutionNdDescriptor");
  const int groups = (int)(desc->x_sizes[1] / desc->w_sizes[1]);
  if (b->st == miopenStatusSuccess)
    call(b, d->miopenSetConvolutionGroupCount(c->conv, groups), "miopenSetConvolutionGroupCount");
  /* float16 never rounded through bfloat16 (gfx90a's alternate kernels) */
  if (b->st == miopenStatusSuccess && d->set_attribute)
    call(b, d->set_attribute(c->conv, MIOPEN_CONVOLUTION_ATTRIB_FP16_ALT_IMPL, 0),
         "miopenSetConvolutionAttribute");
  return b->st == miopenStatusSuccess;
}

/* The bytes a tensor of these sizes and strides spans. */
static uint64_t span_bytes(const int64_t *sizes, const int64_t *strides, int rank, alloy_dtype t) {
  int64_t last = 0;
  for (int i = 0; i < rank; i++) last += (sizes[i] - 1) * strides[i];
  return (uint64_t)(last + 1) * alloy_dtype_size(t);
}

/* One run of solution id on the handle's stream (the caller holds d->lock
 * and has set it). */
static miopenStatus_t immediate(cuda_dnn *d, const cuda_conv *c, uint64_t id, CUdeviceptr x, CUdeviceptr w,
                                CUdeviceptr y, CUdeviceptr ws, uint64_t ws_bytes) {
  return d->miopenConvolutionForwardImmediate(d->handle, c->w, (const void *)(uintptr_t)w, c->x,
                                              (const void *)(uintptr_t)x, c->conv, c->y, (void *)(uintptr_t)y,
                                              ws_bytes ? (void *)(uintptr_t)ws : NULL, (size_t)ws_bytes, id);
}

/* Seconds a run of solution id takes (the mean of tune->runs after one to
 * warm up) on zeroed scratch tensors, or a negative value when it cannot
 * be timed. */
static double time_solution(build *b, uint64_t id, uint64_t ws) {
  const cuda_tuning *t = b->tune;
  const cuda_api *api = t->api;
  const cuda_conv_desc *c = &b->c->desc;
  cuda_dnn *d = b->d;
  if (b->scratch_failed) return -1;
  if (!b->scratch[0]) {
    const uint64_t bytes[4] = {span_bytes(c->x_sizes, c->x_strides, c->rank, c->dtype),
                               span_bytes(c->w_sizes, c->w_strides, c->rank, c->dtype),
                               span_bytes(c->y_sizes, c->y_strides, c->rank, c->dtype), b->c->max_workspace};
    for (int i = 0; i < 4 && !b->scratch_failed; i++)
      b->scratch_failed = api->cuMemAlloc(&b->scratch[i], bytes[i] ? bytes[i] : 16) != CUDA_SUCCESS ||
                          api->cuMemsetD8Async(b->scratch[i], 0, bytes[i], t->stream) != CUDA_SUCCESS;
    if (b->scratch_failed) return -1;
  }
  const CUdeviceptr *s = b->scratch;
  if (d->miopenSetStream(d->handle, t->stream) != miopenStatusSuccess ||
      immediate(d, b->c, id, s[0], s[1], s[2], s[3], ws) != miopenStatusSuccess)
    return -1;
  CUevent e0 = NULL, e1 = NULL;
  double secs = -1;
  if (api->cuEventCreate(&e0, CU_EVENT_DEFAULT) == CUDA_SUCCESS &&
      api->cuEventCreate(&e1, CU_EVENT_DEFAULT) == CUDA_SUCCESS &&
      api->cuEventRecord(e0, t->stream) == CUDA_SUCCESS) {
    bool ok = true;
    for (int r = 0; r < t->runs && ok; r++)
      ok = immediate(d, b->c, id, s[0], s[1], s[2], s[3], ws) == miopenStatusSuccess;
    float ms = 0;
    if (ok && api->cuEventRecord(e1, t->stream) == CUDA_SUCCESS &&
        api->cuEventSynchronize(e1) == CUDA_SUCCESS && api->cuEventElapsedTime(&ms, e0, e1) == CUDA_SUCCESS)
      secs = ms * 1e-3 / (t->runs > 0 ? t->runs : 1);
  }
  if (e0) api->cuEventDestroy(e0);
  if (e1) api->cuEventDestroy(e1);
  return secs;
}

static void scratch_free(build *b) {
  for (int i = 0; i < 4; i++)
    if (b->scratch[i]) b->tune->api->cuMemFree(b->scratch[i]), b->scratch[i] = 0;
}

/* The most solutions asked for. */
#define MIOPEN_SOLUTIONS 64

/* Why no solution was kept, counted for the sentence. */
typedef struct refusals {
  int inexact, too_big, no_compile;
  miopenStatus_t compile_st;
} refusals;

/* Keeps the first allowed solution (or with tuning the fastest of the
 * first few) that fits max_workspace and compiles; false when none does. */
static bool pick(build *b, uint64_t max_workspace, refusals *why) {
  cuda_dnn *d = b->d;
  cuda_conv *c = b->c;
  size_t count = 0;
  call(b, d->miopenConvolutionForwardGetSolutionCount(d->handle, c->w, c->x, c->conv, c->y, &count),
       "miopenConvolutionForwardGetSolutionCount");
  if (b->st != miopenStatusSuccess) return false;
  miopenConvSolution_t sols[MIOPEN_SOLUTIONS];
  size_t got = 0;
  if (count > 0)
    call(b,
         d->miopenConvolutionForwardGetSolution(d->handle, c->w, c->x, c->conv, c->y,
                                                count < MIOPEN_SOLUTIONS ? count : MIOPEN_SOLUTIONS, &got,
                                                sols),
         "miopenConvolutionForwardGetSolution");
  if (b->st != miopenStatusSuccess) return false;
  if (got > MIOPEN_SOLUTIONS) got = MIOPEN_SOLUTIONS;
  c->listed = (int)got;
  const int want = b->tune && b->tune->candidates > 1 ? b->tune->candidates : 1;
  bool chosen = false;
  double best = 0;
  for (size_t i = 0, tried = 0; i < got && (int)tried < want; i++) {
    if (!algorithm_allowed(sols[i].algorithm, &c->desc)) {
      why->inexact++;
      continue;
    }
    size_t ws = 0;
    if (d->miopenConvolutionForwardGetSolutionWorkspaceSize(d->handle, c->w, c->x, c->conv, c->y,
                                                            sols[i].solution_id, &ws) != miopenStatusSuccess)
      ws = sols[i].workspace_size;
    if (ws > max_workspace) {
      why->too_big++;
      continue;
    }
    /* compiled now, so that the first run does not compile */
    miopenStatus_t st =
        d->miopenConvolutionForwardCompileSolution(d->handle, c->w, c->x, c->conv, c->y, sols[i].solution_id);
    if (st != miopenStatusSuccess) {
      why->no_compile++, why->compile_st = st;
      continue;
    }
    tried++;
    double secs = want > 1 ? time_solution(b, sols[i].solution_id, ws) : 0;
    if (secs < 0 || (chosen && secs >= best)) continue; /* slower, or it failed to run */
    chosen = true, best = secs;
    c->solution = sols[i].solution_id, c->algorithm = sols[i].algorithm, c->time = sols[i].time;
    c->workspace = ws, c->tuned = want > 1 ? (int)tried : 0;
  }
  return chosen;
}

const char *cuda_conv_plan(cuda_dnn *d, const cuda_conv_desc *desc, uint64_t max_workspace,
                           const cuda_tuning *tune, cuda_conv **out, uint64_t *workspace, bool *fused,
                           char *why, size_t cap) {
  *out = NULL;
  *workspace = 0;
  *fused = false; /* never: the caller adds the bias (the file's paragraph) */
  const char *wrong = desc_wrong(desc, why, cap);
  if (wrong) return wrong;
  pthread_mutex_lock(&d->lock);
  for (cuda_conv *c = d->plans; c; c = c->next)
    if (c->max_workspace == max_workspace && same_desc(&c->desc, desc)) {
      c->refs++;
      pthread_mutex_unlock(&d->lock);
      *out = c, *workspace = c->workspace;
      return NULL;
    }
  cuda_conv *c = calloc(1, sizeof *c);
  if (!c) {
    pthread_mutex_unlock(&d->lock);
    return "out of memory planning a MIOpen convolution";
  }
  c->d = d, c->desc = *desc, c->max_workspace = max_workspace, c->refs = 1;
  build b = {.d = d, .c = c, .tune = tune};
  refusals no = {0};
  const bool ok = describe_problem(&b) && pick(&b, max_workspace, &no);
  if (tune) scratch_free(&b);
  if (!ok) {
    char what[320];
    describe(desc, what, sizeof what);
    if (b.st != miopenStatusSuccess)
      snprintf(why, cap, "MIOpen refuses the convolution %s: %s failed: %s", what, b.step,
               d->miopenGetErrorString(b.st));
    else
      snprintf(why, cap,
               "MIOpen has no solution for the convolution %s within %llu bytes of workspace (%d listed; %d "
               "FFT or Winograd, not exact for float32; %d needing more workspace; %d not compiling%s%s)",
               what, (unsigned long long)max_workspace, c->listed, no.inexact, no.too_big, no.no_compile,
               no.no_compile ? ": " : "", no.no_compile ? d->miopenGetErrorString(no.compile_st) : "");
    conv_destroy(c);
    pthread_mutex_unlock(&d->lock);
    return why;
  }
  c->next = d->plans;
  d->plans = c;
  pthread_mutex_unlock(&d->lock);
  *out = c, *workspace = c->workspace;
  return NULL;
}

void cuda_conv_describe(const cuda_conv *c, char *buf, size_t cap) {
  snprintf(buf, cap,
           "MIOpen solution %llu (%s, %.3g ms by MIOpen's reckoning%s), %s, %llu bytes of workspace",
           (unsigned long long)c->solution, algorithm_name(c->algorithm), (double)c->time,
           c->tuned ? "; the fastest of those timed" : "", c->desc.bias ? "bias added apart" : "no bias",
           (unsigned long long)c->workspace);
}

void cuda_conv_free(cuda_conv *c) {
  if (!c) return;
  cuda_dnn *d = c->d;
  pthread_mutex_lock(&d->lock);
  bool last = --c->refs == 0;
  if (last)
    for (cuda_conv **p = &d->plans; *p; p = &(*p)->next)
      if (*p == c) {
        *p = c->next;
        break;
      }
  pthread_mutex_unlock(&d->lock);
  if (last) conv_destroy(c);
}

/* ---- running -------------------------------------------------------------------*/

static bool pointer_ok(CUdeviceptr ptr, const char *name, char *why, size_t cap) {
  if (ptr == 0) {
    snprintf(why, cap, "the MIOpen convolution's %s is a null pointer", name);
    return false;
  }
  if (ptr % CUDA_DNN_ALIGNMENT) {
    snprintf(why, cap, "the MIOpen convolution's %s at 0x%llx is not %d-byte aligned", name,
             (unsigned long long)ptr, CUDA_DNN_ALIGNMENT);
    return false;
  }
  return true;
}

const char *cuda_conv_run(cuda_dnn *d, const cuda_conv *c, CUdeviceptr x, CUdeviceptr w, CUdeviceptr bias,
                          CUdeviceptr y, CUdeviceptr workspace, uint64_t workspace_bytes, CUstream stream,
                          char *why, size_t cap) {
  (void)bias; /* never fused */
  bool ok = pointer_ok(x, "x", why, cap) && pointer_ok(w, "w", why, cap) && pointer_ok(y, "y", why, cap);
  if (ok && c->workspace) ok = pointer_ok(workspace, "workspace", why, cap);
  if (!ok) return why;
  if (workspace_bytes < c->workspace) {
    snprintf(why, cap, "the MIOpen convolution needs %llu bytes of workspace, given %llu",
             (unsigned long long)c->workspace, (unsigned long long)workspace_bytes);
    return why;
  }
  /* one handle: its stream and the call that reads it, together */
  pthread_mutex_lock(&d->lock);
  const char *step = "miopenSetStream";
  miopenStatus_t st = d->miopenSetStream(d->handle, stream);
  if (st == miopenStatusSuccess)
    step = "miopenConvolutionForwardImmediate",
    st = immediate(d, c, c->solution, x, w, y, workspace, c->workspace);
  pthread_mutex_unlock(&d->lock);
  if (st != miopenStatusSuccess) {
    snprintf(why, cap, "%s failed: %s", step, d->miopenGetErrorString(st));
    return why;
  }
  return NULL;
}

#else /* the CUDA build */

/* The Makefile's plugin rule compiles every file of plugins/cuda into
 * liballoy-cuda.so: there this one is empty (cuda_dnn.c is cuDNN's). */
typedef int miopen_dnn_is_for_the_hip_build;

#endif
