/*
 * plugins/cuda/miopen_dnn.c: the hip backend's convolutions through AMD's
 * MIOpen, behind the interface of cuda_dnn.h: the HIP build compiles this
 * file where the CUDA build compiles cuda_dnn.c (cuDNN), and the backend
 * (cuda_backend.c) cannot tell them apart. MIOpen is opened with dlopen
 * (libMIOpen.so.1 or .so under $ROCM_PATH/lib when it is set, on the
 * loader's path, else under /opt/rocm/lib) and bound from a symbol table as cuda_blas.c binds
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
 * stream, which a run sets before the call that reads it. That, with the
 * checks, opening and closing around MIOpen's calls and timing candidates,
 * is dnn_common.c's, which cuda_dnn.c shares; this file gives it its hooks
 * (dnn_library, at the end).
 */
#if defined(ALLOY_GPU_HIP)

#include "plugins/cuda/cuda_api.h"
#include "plugins/cuda/cuda_dnn.h"

#include <dlfcn.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/dtype.h"
#include "plugins/cuda/dnn_common.h"
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
  dnn_base base;         /* first (dnn_common.h): libMIOpen, its version (30300 for 3.3.0),
                            every plan alive, the lock */
  miopenHandle_t handle; /* destroyed by library_close */
  /* (optional) miopenSetConvolutionAttribute (late 2021 on), or NULL */
  __typeof__(miopenSetConvolutionAttribute) *set_attribute;
  MIOPEN_FUNCTIONS(MIOPEN_FIELD)
};

struct cuda_conv {
  dnn_plan head; /* first (dnn_common.h): the desc, the bound, the workspace, refs; never fused */
  miopenTensorDescriptor_t x, w, y; /* alive as long as the plan */
  miopenConvolutionDescriptor_t conv;
  uint64_t solution;               /* MIOpen's id of the solution kept */
  miopenConvAlgorithm_t algorithm; /* its algorithm, for logs */
  float time;                      /* MIOpen's milliseconds for it, measured or estimated */
  int listed;                      /* solutions MIOpen listed */
  int tuned;                       /* solutions timed to choose it (0: MIOpen's first allowed) */
};

#define MIOPEN_ROW(name) CUDA_SYMBOL(struct cuda_dnn, name)
static const cuda_symbol miopen_symbols[] = {MIOPEN_FUNCTIONS(MIOPEN_ROW)};

/* dnn_common.c converts a cuda_dnn and a cuda_conv to their first members */
_Static_assert(offsetof(struct cuda_dnn, base) == 0, "the base first");
_Static_assert(offsetof(struct cuda_conv, head) == 0, "the head first");

/* ---- opening -----------------------------------------------------------------*/

/* The open hook (dnn_common.h): libMIOpen where the file's paragraph
 * says, bound, of version 2.0 or later, and a handle. */
static const char *library_open(cuda_dnn *d, char *why, size_t cap) {
  static const char *const names[] = {"libMIOpen.so.1", "libMIOpen.so"};
  dnn_base *b = &d->base;
  if (!(b->lib = rocm_library_open(names, 2)))
    return "libMIOpen.so not found: MIOpen is not in Debian; install ROCm's (libMIOpen.so.1 under "
           "$ROCM_PATH/lib, on the loader's path, or under /opt/rocm/lib)";
  const char *missing =
      cuda_library_bind(d, b->lib, miopen_symbols, sizeof miopen_symbols / sizeof *miopen_symbols);
  if (missing) {
    snprintf(why, cap, "libMIOpen.so has no %s: it is older than MIOpen 2.0", missing);
    return why;
  }
  size_t major = 0, minor = 0, patch = 0;
  if (d->miopenGetVersion(&major, &minor, &patch) != miopenStatusSuccess ||
      (b->version = major * 10000 + minor * 100 + patch) < MIOPEN_MIN_VERSION) {
    snprintf(why, cap, "libMIOpen.so says it is version %zu.%zu.%zu; convolutions need MIOpen 2.0 or later",
             major, minor, patch);
    return why;
  }
  void *fn = dlsym(b->lib, "miopenSetConvolutionAttribute");
  memcpy(&d->set_attribute, &fn, sizeof fn);
  miopenStatus_t st = d->miopenCreate(&d->handle);
  if (st != miopenStatusSuccess) {
    snprintf(why, cap, "miopenCreate failed: %s", d->miopenGetErrorString(st));
    d->handle = NULL;
    return why;
  }
  return NULL;
}

/* The close hook (dnn_common.h). */
static void library_close(cuda_dnn *d) {
  if (d->handle) d->miopenDestroy(d->handle);
  if (d->base.lib) dlclose(d->base.lib);
}

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

/* Whether every value of v (n of them) is in [lo, INT_MAX]: MIOpen takes int. */
static bool ints_ok(const int64_t *v, int n, int64_t lo) {
  for (int i = 0; i < n; i++)
    if (v[i] < lo || v[i] > INT_MAX) return false;
  return true;
}

/* The desc_wrong hook (dnn_common.h), after the checks both libraries
 * make: what MIOpen's int parameters cannot hold. */
static const char *ints_wrong(const cuda_conv_desc *d, char *why, size_t cap) {
  (void)why, (void)cap;
  const int r = d->rank, nsp = r - 2;
  if (!ints_ok(d->x_sizes, r, 1) || !ints_ok(d->w_sizes, r, 1) || !ints_ok(d->y_sizes, r, 1) ||
      !ints_ok(d->x_strides, r, 0) || !ints_ok(d->w_strides, r, 0) || !ints_ok(d->y_strides, r, 0) ||
      !ints_ok(d->stride, nsp, 1) || !ints_ok(d->padding, nsp, 0) || !ints_ok(d->dilation, nsp, 1))
    return "MIOpen takes sizes, strides, paddings and dilations as int: this convolution's do not fit, "
           "or one is negative";
  return NULL;
}

/* The release hook (dnn_common.h): the descriptors describe_problem made
 * (NULL past where it stopped). */
static void conv_release(cuda_dnn *d, dnn_plan *plan) {
  cuda_conv *c = (cuda_conv *)plan; /* the head is its first member */
  if (c->x) d->miopenDestroyTensorDescriptor(c->x);
  if (c->w) d->miopenDestroyTensorDescriptor(c->w);
  if (c->y) d->miopenDestroyTensorDescriptor(c->y);
  if (c->conv) d->miopenDestroyConvolutionDescriptor(c->conv);
}

/* A plan being built: its first failing call's status and name; every
 * call after a failure does nothing. */
typedef struct build {
  cuda_dnn *d;
  cuda_conv *c;
  miopenStatus_t st;
  const char *step;
  dnn_timing timing; /* tuning: its cuda_tuning (or NULL) and scratch operands */
} build;

static void call(build *b, miopenStatus_t st, const char *step) {
  if (b->st == miopenStatusSuccess && st != miopenStatusSuccess) b->st = st, b->step = step;
}

/* A tensor descriptor of t's sizes and strides (ints: ints_wrong checked). */
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
  const cuda_conv_desc *desc = &c->head.desc;
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

/* One run of solution id on the operands (DNN_RUN_ order), on the
 * handle's stream (the caller holds d->base.lock and has set it). */
static miopenStatus_t immediate(cuda_dnn *d, const cuda_conv *c, uint64_t id, const CUdeviceptr *operands,
                                uint64_t ws_bytes) {
  const void *x = (const void *)(uintptr_t)operands[DNN_RUN_X];
  const void *w = (const void *)(uintptr_t)operands[DNN_RUN_W];
  void *y = (void *)(uintptr_t)operands[DNN_RUN_Y];
  void *ws = ws_bytes ? (void *)(uintptr_t)operands[DNN_RUN_WORKSPACE] : NULL;
  return d->miopenConvolutionForwardImmediate(d->handle, c->w, w, c->x, x, c->conv, c->y, y, ws,
                                              (size_t)ws_bytes, id);
}

/* A candidate timed: the plan's descriptors, a solution of them. */
typedef struct candidate {
  cuda_dnn *d;
  const cuda_conv *c;
  uint64_t id, ws; /* the solution, the workspace bytes it needs */
} candidate;

/* dnn_timing_seconds's run: the handle's stream is set, d's base lock held. */
static bool run_candidate(void *arg, const CUdeviceptr *operands) {
  const candidate *k = arg;
  return immediate(k->d, k->c, k->id, operands, k->ws) == miopenStatusSuccess;
}

/* Seconds a run of solution id takes (dnn_timing_seconds) on zeroed
 * scratch tensors, or a negative value when it cannot be timed. */
static double time_solution(build *b, uint64_t id, uint64_t ws) {
  if (!dnn_timing_scratch(&b->timing, &b->c->head, false)) return -1; /* never fused: no bias */
  cuda_dnn *d = b->d;
  if (d->miopenSetStream(d->handle, b->timing.tune->stream) != miopenStatusSuccess) return -1;
  candidate k = {.d = d, .c = b->c, .id = id, .ws = ws};
  return dnn_timing_seconds(&b->timing, run_candidate, &k);
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
  const cuda_tuning *tune = b->timing.tune;
  const int want = tune && tune->candidates > 1 ? tune->candidates : 1;
  bool chosen = false;
  double best = 0;
  for (size_t i = 0, tried = 0; i < got && (int)tried < want; i++) {
    if (!algorithm_allowed(sols[i].algorithm, &c->head.desc)) {
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
    c->head.workspace = ws, c->tuned = want > 1 ? (int)tried : 0;
  }
  return chosen;
}

/* The build hook (dnn_common.h): the descriptors, then a solution. The
 * bias is never fused (plan->fused stays false: the file's paragraph). */
static const char *conv_build(cuda_dnn *d, dnn_plan *plan, const cuda_tuning *tune, char *why, size_t cap) {
  build b = {.d = d, .c = (cuda_conv *)plan, .timing = {.tune = tune}};
  refusals no = {0};
  const bool ok = describe_problem(&b) && pick(&b, plan->max_workspace, &no);
  dnn_timing_free(&b.timing);
  if (ok) return NULL;
  char what[320];
  dnn_desc_text(&plan->desc, what, sizeof what);
  if (b.st != miopenStatusSuccess)
    snprintf(why, cap, "MIOpen refuses the convolution %s: %s failed: %s", what, b.step,
             d->miopenGetErrorString(b.st));
  else
    snprintf(why, cap,
             "MIOpen has no solution for the convolution %s within %llu bytes of workspace (%d listed; %d "
             "FFT or Winograd, not exact for float32; %d needing more workspace; %d not compiling%s%s)",
             what, (unsigned long long)plan->max_workspace, b.c->listed, no.inexact, no.too_big,
             no.no_compile, no.no_compile ? ": " : "",
             no.no_compile ? d->miopenGetErrorString(no.compile_st) : "");
  return why; /* cuda_conv_plan (dnn_common.c) releases the descriptors made */
}

void cuda_conv_describe(const cuda_conv *c, char *buf, size_t cap) {
  snprintf(buf, cap,
           "MIOpen solution %llu (%s, %.3g ms by MIOpen's reckoning%s), %s, %llu bytes of workspace",
           (unsigned long long)c->solution, algorithm_name(c->algorithm), (double)c->time,
           c->tuned ? "; the fastest of those timed" : "", c->head.desc.bias ? "bias added apart" : "no bias",
           (unsigned long long)c->head.workspace);
}

/* ---- running -------------------------------------------------------------------*/

/* The run hook (dnn_common.h): under d's base lock, the operands checked (the
 * bias never, as never fused). */
static const char *conv_run(cuda_dnn *d, const dnn_plan *plan, const CUdeviceptr *operands, CUstream stream,
                            char *why, size_t cap) {
  const cuda_conv *c = (const cuda_conv *)plan; /* the head is its first member */
  const char *step = "miopenSetStream";
  miopenStatus_t st = d->miopenSetStream(d->handle, stream);
  if (st == miopenStatusSuccess)
    step = "miopenConvolutionForwardImmediate", st = immediate(d, c, c->solution, operands, plan->workspace);
  if (st == miopenStatusSuccess) return NULL;
  snprintf(why, cap, "%s failed: %s", step, d->miopenGetErrorString(st));
  return why;
}

/* What dnn_common.c calls (dnn_common.h). */
const dnn_hooks dnn_library = {
    .library = "MIOpen", .entry = "miopenCreate", .soname = "libMIOpen.so",
    .dnn_size = sizeof(cuda_dnn), .plan_size = sizeof(cuda_conv),
    .open = library_open, .close = library_close, .desc_wrong = ints_wrong,
    .build = conv_build, .release = conv_release, .run = conv_run,
};

#else /* the CUDA build */

/* The Makefile's plugin rule compiles every file of plugins/cuda into
 * liballoy-cuda.so: there this one is empty (cuda_dnn.c is cuDNN's). */
typedef int miopen_dnn_is_for_the_hip_build;

#endif
