/*
 * plugins/cuda/cuda_dnn.c: the cuda backend's convolutions through cuDNN
 * 9's graph API (cuda_dnn.h), opened with dlopen and bound from a symbol
 * table the way cuda_api.c binds the driver and cuda_blas.c cuBLASLt. The
 * plan builder (cuda_codegen_conv.c) describes each convolution as a
 * cuda_conv_desc; the compile (cuda_backend.c) plans it here once per
 * step, and execute runs the plan with the step's device pointers and a
 * workspace after the run's temporaries.
 *
 * The graph API is descriptors all the way down: tensors (sizes, strides,
 * a unique id), a convolution descriptor, operation descriptors joining
 * them, an operation graph, heuristics that rank engine configurations for
 * it, an execution plan of one configuration, and at run time a variant
 * pack binding each unique id to a device pointer. cuDNN's C++ frontend
 * wraps the same calls; this file makes them plainly, and keeps every
 * descriptor a plan was made from alive as long as the plan.
 *
 * What is not cuDNN's (cuda_dnn.h's entries around these calls: opening
 * and closing, the checks, sharing equal plans, the lock, timing
 * candidates) is dnn_common.c's, which miopen_dnn.c shares; this file
 * gives it its hooks (dnn_library, at the end).
 */
#include "plugins/cuda/cuda_api.h"
#include "plugins/cuda/cuda_dnn.h"
#include "plugins/cuda/dnn_common.h"

#include <cudnn_graph.h>
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "alloy/dtype.h"

/* The cudnn_graph.h entry points called, bound by name from the library. */
#define CUDA_DNN_FUNCTIONS(X)                                                                 \
  X(cudnnGetVersion) X(cudnnGetErrorString) X(cudnnCreate) X(cudnnDestroy) X(cudnnSetStream) \
  X(cudnnBackendCreateDescriptor) X(cudnnBackendDestroyDescriptor) X(cudnnBackendFinalize)  \
  X(cudnnBackendSetAttribute) X(cudnnBackendGetAttribute) X(cudnnBackendExecute)

#define CUDA_DNN_FIELD(name) __typeof__(name) *name;

/* cuDNN 9's libcudnn.so.9 is a shim that loads these by soname when first
 * needed. Found through $ALLOY_CUDNN_PATH or $CUDNN_PATH, a folder the
 * loader does not search, they are loaded from that folder first: a later
 * dlopen of the same soname finds them loaded. Each may be missing (the
 * runtime-compiled engines need NVRTC); cuDNN says so if it needs one. */
static const char *const sublibraries[] = {
    "libcudnn_graph.so.9",
    "libcudnn_engines_precompiled.so.9",
    "libcudnn_engines_runtime_compiled.so.9",
    "libcudnn_heuristic.so.9",
    "libcudnn_ops.so.9",
    "libcudnn_cnn.so.9",
};
#define CUDA_DNN_SUBLIBRARIES (int)(sizeof sublibraries / sizeof *sublibraries)

struct cuda_dnn {
  dnn_base base;                      /* first (dnn_common.h): libcudnn.so.9, its version
                                         (cudnnGetVersion()), every plan alive, the lock */
  void *sub[CUDA_DNN_SUBLIBRARIES];   /* the sub-libraries loaded ahead of it, or NULL */
  cudnnHandle_t handle;               /* destroyed by library_close */
  void (*last_error)(char *, size_t); /* cudnnGetLastErrorString (9.0 on), or NULL */
  CUDA_DNN_FUNCTIONS(CUDA_DNN_FIELD)
};

/* Descriptors one plan is made from, at most: five tensors, the
 * convolution and pointwise descriptors and operations, the graph, the
 * heuristics and the configuration chosen. */
#define CUDA_DNN_HELD 16

/* The unique ids of the graph's tensors (the variant pack binds them). */
enum { UID_X = 1, UID_W, UID_BIAS, UID_Y, UID_CONV_OUT };

struct cuda_conv {
  dnn_plan head; /* first (dnn_common.h): the desc, the bound, the workspace, fused, refs */
  cudnnBackendDescriptor_t held[CUDA_DNN_HELD]; /* alive as long as the plan */
  int nheld;
  cudnnBackendDescriptor_t plan; /* the execution plan */
  int64_t engine;                /* cuDNN's global index of the engine, for logs */
  bool strict_nan;               /* the engine says it propagates NaN strictly (logs) */
  int tuned;                     /* engines timed to choose it (0: the heuristics' first) */
};

#define DNN_ROW(name) CUDA_SYMBOL(struct cuda_dnn, name)
static const cuda_symbol dnn_symbols[] = {CUDA_DNN_FUNCTIONS(DNN_ROW)};

_Static_assert(offsetof(struct cuda_dnn, base) == 0 && offsetof(struct cuda_conv, head) == 0,
               "dnn_common.c converts a cuda_dnn and a cuda_conv to their first members");

/* ---- opening -----------------------------------------------------------------*/

/* libcudnn.so.9 from folder dir, its sub-libraries first; NULL if absent. */
static void *open_in(cuda_dnn *d, const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/libcudnn.so.9", dir);
  struct stat st;
  if (stat(path, &st) != 0) return NULL;
  for (int i = 0; i < CUDA_DNN_SUBLIBRARIES; i++) {
    if (d->sub[i]) continue;
    snprintf(path, sizeof path, "%s/%s", dir, sublibraries[i]);
    d->sub[i] = dlopen(path, CUDA_DLOPEN_FLAGS);
  }
  snprintf(path, sizeof path, "%s/libcudnn.so.9", dir);
  return dlopen(path, CUDA_DLOPEN_FLAGS);
}

static void close_sublibraries(cuda_dnn *d) {
  for (int i = CUDA_DNN_SUBLIBRARIES - 1; i >= 0; i--)
    if (d->sub[i]) dlclose(d->sub[i]), d->sub[i] = NULL;
}

/* The close hook (dnn_common.h): the sub-libraries last, as they were
 * loaded first. */
static void library_close(cuda_dnn *d) {
  if (d->handle) d->cudnnDestroy(d->handle);
  if (d->base.lib) dlclose(d->base.lib);
  close_sublibraries(d);
}

/* The library, from the first place cuda_dnn.h lists that has it. */
static void *open_library(cuda_dnn *d) {
  const char *p = getenv("ALLOY_CUDNN_PATH");
  if (p && *p) {
    struct stat st;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", p);
    if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) { /* the library's own path: its folder */
      char *slash = strrchr(dir, '/');
      if (slash)
        *slash = 0;
      else
        snprintf(dir, sizeof dir, ".");
    }
    void *lib = open_in(d, dir);
    if (lib) return lib;
    snprintf(dir + strlen(dir), sizeof dir - strlen(dir), "/lib"); /* the wheel's package folder */
    if ((lib = open_in(d, dir))) return lib;
  }
  p = getenv("CUDNN_PATH");
  if (p && *p) {
    static const char *const under[] = {"lib", "lib64", "."};
    for (size_t i = 0; i < sizeof under / sizeof *under; i++) {
      char dir[4096];
      snprintf(dir, sizeof dir, "%s/%s", p, under[i]);
      void *lib = open_in(d, dir);
      if (lib) return lib;
    }
  }
  close_sublibraries(d);
  static const char *const names[] = {"libcudnn.so.9"};
  return cuda_library_open(names, 1, "libcudnn.so.9");
}

/* The status's name and cuDNN's last error message, for sentences. */
static void status_text(const cuda_dnn *d, cudnnStatus_t st, char *buf, size_t cap) {
  char last[256] = "";
  if (d->last_error) d->last_error(last, sizeof last);
  snprintf(buf, cap, "%s%s%.200s", d->cudnnGetErrorString(st), last[0] ? ": " : "", last);
}

/* The open hook (dnn_common.h): libcudnn.so.9 where cuda_dnn.h says,
 * bound, of version 9, and a handle. */
static const char *library_open(cuda_dnn *d, char *why, size_t cap) {
  dnn_base *b = &d->base;
  if (!(b->lib = open_library(d)))
    return "libcudnn.so.9 not found: convolutions need cuDNN 9 (set ALLOY_CUDNN_PATH to the folder "
           "holding libcudnn.so.9, e.g. the nvidia-cudnn wheel's lib folder)";
  const char *missing = cuda_library_bind(d, b->lib, dnn_symbols, sizeof dnn_symbols / sizeof *dnn_symbols);
  if (missing) {
    snprintf(why, cap, "libcudnn.so.9 has no %s", missing);
    return why;
  }
  if ((b->version = d->cudnnGetVersion()) < 90000 || b->version >= 100000) {
    snprintf(why, cap, "libcudnn.so.9 says it is version %zu; convolutions need cuDNN 9", b->version);
    return why;
  }
  void *fn = dlsym(b->lib, "cudnnGetLastErrorString"); /* status_text reads it from here on */
  memcpy(&d->last_error, &fn, sizeof fn);
  cudnnStatus_t st = d->cudnnCreate(&d->handle);
  if (st != CUDNN_STATUS_SUCCESS) {
    char text[320];
    status_text(d, st, text, sizeof text);
    snprintf(why, cap, "cudnnCreate failed: %s", text);
    d->handle = NULL;
    return why;
  }
  return NULL;
}

/* ---- building a plan ---------------------------------------------------------*/

/* A plan being built: its first failing call's status and what it was
 * making; every call after a failure does nothing. */
typedef struct build {
  cuda_dnn *d;
  cuda_conv *c;
  cudnnStatus_t st;
  const char *step;
  bool with_bias;    /* the graph being planned has the bias add */
  dnn_timing timing; /* tuning: its cuda_tuning (or NULL) and scratch operands */
} build;

static cudnnBackendDescriptor_t make(build *b, cudnnBackendDescriptorType_t type, const char *what) {
  if (b->st != CUDNN_STATUS_SUCCESS) return NULL;
  if (b->c->nheld == CUDA_DNN_HELD) {
    b->st = CUDNN_STATUS_INTERNAL_ERROR, b->step = "more descriptors than a plan holds";
    return NULL;
  }
  cudnnBackendDescriptor_t desc = NULL;
  if ((b->st = b->d->cudnnBackendCreateDescriptor(type, &desc)) != CUDNN_STATUS_SUCCESS) {
    b->step = what;
    return NULL;
  }
  return b->c->held[b->c->nheld++] = desc;
}

static void set(build *b, cudnnBackendDescriptor_t desc, cudnnBackendAttributeName_t attr,
                cudnnBackendAttributeType_t type, int64_t count, const void *value, const char *what) {
  if (b->st != CUDNN_STATUS_SUCCESS) return;
  if ((b->st = b->d->cudnnBackendSetAttribute(desc, attr, type, count, value)) != CUDNN_STATUS_SUCCESS)
    b->step = what;
}

static void finalize(build *b, cudnnBackendDescriptor_t desc, const char *what) {
  if (b->st != CUDNN_STATUS_SUCCESS) return;
  if ((b->st = b->d->cudnnBackendFinalize(desc)) != CUDNN_STATUS_SUCCESS) b->step = what;
}

/* The deprecated handle attributes (9.x makes them optional where a device
 * descriptor is given; 9.0 needs them): set through one helper. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static const cudnnBackendAttributeName_t GRAPH_HANDLE = CUDNN_ATTR_OPERATIONGRAPH_HANDLE;
static const cudnnBackendAttributeName_t PLAN_HANDLE = CUDNN_ATTR_EXECUTION_PLAN_HANDLE;
#pragma GCC diagnostic pop

static cudnnDataType_t data_type(alloy_dtype t) {
  return t == ALLOY_F16 ? CUDNN_DATA_HALF : t == ALLOY_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
}

static cudnnBackendDescriptor_t tensor(build *b, int64_t uid, cudnnDataType_t type, int rank,
                                       const int64_t *sizes, const int64_t *strides, bool is_virtual) {
  cudnnBackendDescriptor_t t = make(b, CUDNN_BACKEND_TENSOR_DESCRIPTOR, "a tensor descriptor");
  const int64_t align = CUDA_DNN_ALIGNMENT;
  set(b, t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type, "a tensor's data type");
  set(b, t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, rank, sizes, "a tensor's sizes");
  set(b, t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, rank, strides, "a tensor's strides");
  set(b, t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid, "a tensor's id");
  set(b, t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align, "a tensor's alignment");
  set(b, t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual, "a tensor's virtual flag");
  finalize(b, t, "a tensor descriptor (cuDNN refuses its sizes or strides)");
  return t;
}

/* The operation graph of desc: the convolution into y, or with_bias, the
 * convolution into a virtual float tensor and a pointwise add of the bias
 * (as [1, C, 1, ...]) into y, in float. */
static cudnnBackendDescriptor_t op_graph(build *b, const cuda_conv_desc *desc, bool with_bias) {
  const int r = desc->rank, nsp = r - 2;
  const cudnnDataType_t type = data_type(desc->dtype), fl = CUDNN_DATA_FLOAT;
  cudnnBackendDescriptor_t x = tensor(b, UID_X, type, r, desc->x_sizes, desc->x_strides, false);
  cudnnBackendDescriptor_t w = tensor(b, UID_W, type, r, desc->w_sizes, desc->w_strides, false);
  cudnnBackendDescriptor_t y = tensor(b, UID_Y, type, r, desc->y_sizes, desc->y_strides, false);
  cudnnBackendDescriptor_t cv = y, bias = NULL;
  if (with_bias) {
    int64_t bsizes[5], bstrides[5];
    for (int k = 0; k < r; k++)
      bsizes[k] = k == 1 ? desc->y_sizes[1] : 1, bstrides[k] = k == 0 ? desc->y_sizes[1] : 1;
    /* the convolution's float result, laid out as y (packed or channels last) */
    cv = tensor(b, UID_CONV_OUT, fl, r, desc->y_sizes, desc->y_strides, true);
    bias = tensor(b, UID_BIAS, type, r, bsizes, bstrides, false);
  }
  cudnnBackendDescriptor_t conv = make(b, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, "the convolution descriptor");
  const int64_t spatial = nsp;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION; /* PyTorch's: the kernel is not flipped */
  set(b, conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &fl, "the compute type");
  set(b, conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode, "the mode");
  set(b, conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial, "the spatial dims");
  set(b, conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, nsp, desc->stride, "the strides");
  set(b, conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, nsp, desc->padding, "the paddings");
  set(b, conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, nsp, desc->padding, "the paddings");
  set(b, conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, nsp, desc->dilation, "the dilations");
  finalize(b, conv, "the convolution descriptor");

  cudnnBackendDescriptor_t ops[2];
  int nops = 0;
  const float one = 1.0f, zero = 0.0f;
  cudnnBackendDescriptor_t fwd =
      make(b, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, "the convolution");
  set(b, fwd, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x,
      "the convolution's x");
  set(b, fwd, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w,
      "the convolution's w");
  set(b, fwd, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cv,
      "the convolution's y");
  set(b, fwd, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv,
      "the convolution's descriptor");
  set(b, fwd, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &one, "alpha");
  set(b, fwd, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &zero, "beta");
  finalize(b, fwd, "the convolution operation (cuDNN refuses its shapes)");
  ops[nops++] = fwd;
  if (with_bias) {
    const cudnnPointwiseMode_t add = CUDNN_POINTWISE_ADD;
    cudnnBackendDescriptor_t pw = make(b, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, "the bias add");
    set(b, pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &add, "the bias add's mode");
    set(b, pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &fl, "the bias add's precision");
    finalize(b, pw, "the bias add");
    cudnnBackendDescriptor_t op = make(b, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, "the bias add");
    set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw,
        "the bias add");
    set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cv,
        "the bias add's x");
    set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &bias, "the bias");
    set(b, op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y,
        "the bias add's y");
    finalize(b, op, "the bias add operation");
    ops[nops++] = op;
  }
  cudnnBackendDescriptor_t g = make(b, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "the operation graph");
  set(b, g, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, nops, ops,
      "the graph's operations");
  set(b, g, GRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &b->d->handle, "the graph's handle");
  finalize(b, g,
           with_bias ? "the operation graph of the convolution and its bias"
                     : "the operation graph of the convolution");
  return g;
}

/* Whether the engine of configuration cfg computes as desc allows (the
 * file's paragraph in cuda_dnn.h); its global index in *index, whether it
 * propagates NaN strictly in *strict_nan. */
static bool engine_allowed(cuda_dnn *d, cudnnBackendDescriptor_t cfg, const cuda_conv_desc *desc,
                           int64_t *index, bool *strict_nan) {
  cudnnBackendDescriptor_t engine = NULL;
  if (d->cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine) != CUDNN_STATUS_SUCCESS)
    return false;
  int64_t n = 0;
  cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  bool ok = d->cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                        &n, &engine) == CUDNN_STATUS_SUCCESS;
  if (ok)
    ok = d->cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                     CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &n, notes) == CUDNN_STATUS_SUCCESS;
  *index = -1;
  if (ok)
    d->cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &(int64_t){0},
                                index);
  const bool strict = desc->dtype == ALLOY_F32 && !desc->allow_tf32;
  *strict_nan = false;
  for (int64_t i = 0; ok && i < n && i < CUDNN_NUMERICAL_NOTE_TYPE_COUNT; i++) {
    switch (notes[i]) {
    case CUDNN_NUMERICAL_NOTE_STRICT_NAN_PROP:
      *strict_nan = true;
      break;
    case CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS: /* computes below the compute type */
    case CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION:
      ok = false;
      break;
    case CUDNN_NUMERICAL_NOTE_TENSOR_CORE: /* for float32: TF32 */
    case CUDNN_NUMERICAL_NOTE_FFT:
    case CUDNN_NUMERICAL_NOTE_WINOGRAD:
    case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_4x4:
    case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_6x6:
    case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_13x13:
      ok = !strict;
      break;
    default:
      break;
    }
  }
  d->cudnnBackendDestroyDescriptor(engine);
  return ok;
}

/* An execution plan of cfg within max_workspace bytes, or NULL. */
static cudnnBackendDescriptor_t plan_of(cuda_dnn *d, cudnnBackendDescriptor_t cfg, uint64_t max_workspace,
                                        int64_t *workspace) {
  cudnnBackendDescriptor_t plan = NULL;
  if (d->cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan) != CUDNN_STATUS_SUCCESS)
    return NULL;
  int64_t n = 0;
  bool ok = d->cudnnBackendSetAttribute(plan, PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &d->handle) ==
                CUDNN_STATUS_SUCCESS &&
            d->cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                        CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg) == CUDNN_STATUS_SUCCESS &&
            d->cudnnBackendFinalize(plan) == CUDNN_STATUS_SUCCESS &&
            d->cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                                        &n, workspace) == CUDNN_STATUS_SUCCESS &&
            *workspace >= 0 && (uint64_t)*workspace <= max_workspace;
  if (!ok) {
    d->cudnnBackendDestroyDescriptor(plan);
    return NULL;
  }
  return plan;
}

/* Runs plan on the handle's stream (the caller holds d->base.lock and has set
 * it): the variant pack binds x, w, y and, when fused, the bias. */
static cudnnStatus_t execute(cuda_dnn *d, cudnnBackendDescriptor_t plan, bool fused, void *const ptrs[4], void *ws,
                             const char **step) {
  int64_t uids[4] = {UID_X, UID_W, UID_Y, UID_BIAS};
  const int64_t n = fused ? 4 : 3;
  cudnnBackendDescriptor_t pack = NULL;
  *step = "cudnnBackendCreateDescriptor (variant pack)";
  cudnnStatus_t st = d->cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack);
  if (st == CUDNN_STATUS_SUCCESS)
    st = d->cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids);
  if (st == CUDNN_STATUS_SUCCESS)
    st = d->cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n,
                                     (void *)ptrs);
  if (st == CUDNN_STATUS_SUCCESS)
    st = d->cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws);
  if (st == CUDNN_STATUS_SUCCESS) st = d->cudnnBackendFinalize(pack);
  if (st == CUDNN_STATUS_SUCCESS) *step = "cudnnBackendExecute", st = d->cudnnBackendExecute(d->handle, plan, pack);
  if (pack) d->cudnnBackendDestroyDescriptor(pack);
  return st;
}

/* Runs plan on the operands (DNN_RUN_ order): execute's pointers from
 * them, the workspace only where the plan needs some. */
static cudnnStatus_t execute_on(cuda_dnn *d, cudnnBackendDescriptor_t plan, bool fused,
                                const CUdeviceptr *operands, bool workspace, const char **step) {
  void *ptrs[4]; /* x, w, y, the bias: DNN_RUN_'s order is execute's */
  for (int i = 0; i < 4; i++) ptrs[i] = (void *)(uintptr_t)operands[i];
  void *ws = workspace ? (void *)(uintptr_t)operands[DNN_RUN_WORKSPACE] : NULL;
  return execute(d, plan, fused, ptrs, ws, step);
}

/* A candidate timed: a plan of the graph being planned. */
typedef struct candidate {
  cuda_dnn *d;
  cudnnBackendDescriptor_t plan;
  bool with_bias;
  bool workspace; /* the plan needs some */
} candidate;

/* dnn_timing_seconds's run: the handle's stream is set, d's base lock held. */
static bool run_candidate(void *arg, const CUdeviceptr *operands) {
  const candidate *k = arg;
  const char *step;
  return execute_on(k->d, k->plan, k->with_bias, operands, k->workspace, &step) == CUDNN_STATUS_SUCCESS;
}

/* Seconds a run of plan takes (dnn_timing_seconds), or a negative value
 * when it cannot be timed. */
static double time_plan(build *b, cudnnBackendDescriptor_t plan, int64_t ws) {
  /* the bias operand whether this graph reads it or not: the scratch is
   * allocated once for both attempts */
  if (!dnn_timing_scratch(&b->timing, &b->c->head, true)) return -1;
  cuda_dnn *d = b->d;
  if (d->cudnnSetStream(d->handle, (cudaStream_t)b->timing.tune->stream) != CUDNN_STATUS_SUCCESS) return -1;
  candidate k = {.d = d, .plan = plan, .with_bias = b->with_bias, .workspace = ws != 0};
  return dnn_timing_seconds(&b->timing, run_candidate, &k);
}

/* The most configurations tried of one heuristics mode. */
#define CUDA_DNN_CONFIGS 64

/* Ranks engines for graph g by heuristics mode, and keeps the plan of the
 * first one allowed that finalizes; false when none does. */
static bool pick(build *b, cudnnBackendDescriptor_t g, cudnnBackendHeurMode_t mode, uint64_t max_workspace) {
  cuda_dnn *d = b->d;
  cuda_conv *c = b->c;
  int held = c->nheld;
  cudnnBackendDescriptor_t heur = make(b, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, "the heuristics");
  set(b, heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g,
      "the heuristics' graph");
  set(b, heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, "the heuristics' mode");
  finalize(b, heur, "the heuristics");
  int64_t count = 0;
  if (b->st == CUDNN_STATUS_SUCCESS &&
      (b->st = d->cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                           0, &count, NULL)) != CUDNN_STATUS_SUCCESS)
    b->step = "the heuristics' results";
  if (count > CUDA_DNN_CONFIGS) count = CUDA_DNN_CONFIGS;
  cudnnBackendDescriptor_t cfgs[CUDA_DNN_CONFIGS];
  int64_t made = 0;
  while (b->st == CUDNN_STATUS_SUCCESS && made < count &&
         d->cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfgs[made]) ==
             CUDNN_STATUS_SUCCESS)
    made++;
  int64_t got = 0;
  if (made > 0 &&
      d->cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, made,
                                  &got, cfgs) != CUDNN_STATUS_SUCCESS)
    got = 0;
  /* The first allowed engine whose plan finalizes; with tuning, the
   * fastest of the first few such. */
  const cuda_tuning *tune = b->timing.tune;
  const int want = tune && tune->candidates > 1 ? tune->candidates : 1;
  int64_t chosen = -1;
  double best = 0;
  for (int64_t i = 0, tried = 0; i < got && i < made && tried < want; i++) {
    int64_t engine = -1, ws = 0;
    bool strict_nan = false;
    if (!engine_allowed(d, cfgs[i], &c->head.desc, &engine, &strict_nan)) continue;
    cudnnBackendDescriptor_t plan = plan_of(d, cfgs[i], max_workspace, &ws);
    if (!plan) continue;
    tried++;
    double secs = want > 1 ? time_plan(b, plan, ws) : 0;
    if (secs < 0 || (chosen >= 0 && secs >= best)) { /* slower, or it failed to run */
      d->cudnnBackendDestroyDescriptor(plan);
      continue;
    }
    if (c->plan) d->cudnnBackendDestroyDescriptor(c->plan);
    c->plan = plan, chosen = i, best = secs;
    c->head.workspace = (uint64_t)ws, c->engine = engine, c->strict_nan = strict_nan;
    c->tuned = want > 1 ? tried : 0;
  }
  for (int64_t i = 0; i < made; i++)
    if (i != chosen) d->cudnnBackendDestroyDescriptor(cfgs[i]);
  if (chosen >= 0 && c->nheld < CUDA_DNN_HELD) {
    c->held[c->nheld++] = cfgs[chosen]; /* the plan was made from it: kept as long */
    return true;
  }
  if (chosen >= 0) d->cudnnBackendDestroyDescriptor(cfgs[chosen]);
  /* nothing chosen: the heuristics are not needed past here */
  while (c->nheld > held)
    d->cudnnBackendDestroyDescriptor(c->held[--c->nheld]);
  if (b->st == CUDNN_STATUS_SUCCESS) b->st = CUDNN_STATUS_NOT_SUPPORTED, b->step = "an engine";
  return false;
}

/* Destroys every descriptor of the plan, newest first: after a failed
 * attempt, to try again, and as the release hook (dnn_common.h). */
static void conv_release(cuda_dnn *d, dnn_plan *plan) {
  cuda_conv *c = (cuda_conv *)plan; /* the head is its first member */
  if (c->plan) d->cudnnBackendDestroyDescriptor(c->plan), c->plan = NULL;
  for (int i = c->nheld - 1; i >= 0; i--)
    d->cudnnBackendDestroyDescriptor(c->held[i]);
  c->nheld = 0;
}

/* One attempt: desc's graph (with the bias or not), an engine for it. */
static bool attempt(build *b, bool with_bias, uint64_t max_workspace) {
  b->st = CUDNN_STATUS_SUCCESS, b->step = NULL, b->with_bias = with_bias;
  cudnnBackendDescriptor_t g = op_graph(b, &b->c->head.desc, with_bias);
  if (b->st != CUDNN_STATUS_SUCCESS) return false;
  return pick(b, g, CUDNN_HEUR_MODE_A, max_workspace) ||
         (b->st = CUDNN_STATUS_SUCCESS, pick(b, g, CUDNN_HEUR_MODE_FALLBACK, max_workspace));
}

/* The build hook (dnn_common.h): the bias in the graph when an engine
 * takes the pair, else the convolution alone (the caller adds the bias). */
static const char *conv_build(cuda_dnn *d, dnn_plan *plan, const cuda_tuning *tune, char *why, size_t cap) {
  build b = {.d = d, .c = (cuda_conv *)plan, .timing = {.tune = tune}};
  bool ok = plan->desc.bias && attempt(&b, true, plan->max_workspace);
  if (ok)
    plan->fused = true;
  else {
    conv_release(d, plan);
    ok = attempt(&b, false, plan->max_workspace);
  }
  dnn_timing_free(&b.timing);
  if (ok) return NULL;
  char what[320], text[320];
  dnn_desc_text(&plan->desc, what, sizeof what);
  status_text(d, b.st, text, sizeof text);
  snprintf(why, cap, "cuDNN has no plan for the convolution %s within %llu bytes of workspace (%s: %s)", what,
           (unsigned long long)plan->max_workspace, b.step ? b.step : "an engine", text);
  return why; /* cuda_conv_plan (dnn_common.c) releases what the attempt left */
}

void cuda_conv_describe(const cuda_conv *c, char *buf, size_t cap) {
  snprintf(buf, cap, "engine %lld%s%s, %s, %lld bytes of workspace", (long long)c->engine,
           c->strict_nan ? " (strict NaN)" : "", c->tuned ? " (fastest of those timed)" : "",
           c->head.fused       ? "bias fused"
           : c->head.desc.bias ? "bias added apart"
                               : "no bias",
           (long long)c->head.workspace);
}

/* ---- running -------------------------------------------------------------------*/

/* The run hook (dnn_common.h): under d's base lock, the operands checked. */
static const char *conv_run(cuda_dnn *d, const dnn_plan *plan, const CUdeviceptr *operands, CUstream stream,
                            char *why, size_t cap) {
  const cuda_conv *c = (const cuda_conv *)plan; /* the head is its first member */
  const char *step = "cudnnSetStream";
  cudnnStatus_t st = d->cudnnSetStream(d->handle, (cudaStream_t)stream);
  if (st == CUDNN_STATUS_SUCCESS)
    st = execute_on(d, c->plan, plan->fused, operands, plan->workspace != 0, &step);
  if (st == CUDNN_STATUS_SUCCESS) return NULL;
  char text[320];
  status_text(d, st, text, sizeof text);
  snprintf(why, cap, "%s failed: %s", step, text);
  return why;
}

/* What dnn_common.c calls (dnn_common.h): no desc_wrong, as its checks are
 * all cuDNN needs. */
const dnn_hooks dnn_library = {
    .library = "cuDNN", .entry = "cudnnCreate", .soname = "libcudnn.so.9",
    .dnn_size = sizeof(cuda_dnn), .plan_size = sizeof(cuda_conv),
    .open = library_open, .close = library_close,
    .build = conv_build, .release = conv_release, .run = conv_run,
};
