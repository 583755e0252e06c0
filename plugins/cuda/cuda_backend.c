/*
 * plugins/cuda/cuda_backend.c: the cuda backend, liballoy-cuda.so. An ABI
 * 1.2 plugin over the CUDA driver API (opened with dlopen: cuda_api.c), so
 * that it loads on any machine; without a driver or a GPU it opens with no
 * device, claims nothing, and device_info(0) says why, which `alloy
 * backends` shows.
 *
 * Objects: a device is a primary context with two non-blocking streams of
 * its own (the default queue, and the synchronous copies'); a buffer is a
 * cuMemAlloc'd range; a queue is a stream (its own, or the caller's:
 * queue_import); an event a CUDA event. A
 * partition compiles (cuda_codegen.c) to one module of generated kernels,
 * built by NVRTC for the device's architecture; execute launches them in
 * order on the queue's stream, with the temporaries of the run in one
 * scratch range from the stream-ordered pool (cuMemAllocAsync).
 *
 * Threads (alloy/plugin.h): each entry makes its device's context current
 * on the calling thread; the driver is thread-safe, and the backend's own
 * state is read-only after backend_open, so execute and the copies may run
 * on several queues at once.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/cuda/cuda_api.h"
#include "plugins/cuda/cuda_blas.h"
#include "plugins/cuda/cuda_dnn.h"
#include "plugins/cuda/cuda_internal.h"
#include "plugins/cuda/cuda_rtc.h"

#define CUDA_MAX_DEVICES 16

typedef struct cuda_device {
  CUdevice dev;
  CUcontext ctx;
  CUstream queue, copies; /* the default queue; synchronous copies */
  char name[128], arch[16];
  int sms, cc_major, cc_minor;
  uint64_t memory;
  double bytes_per_s, flops_per_s; /* the roofline of claims' costs */
  cuda_blas *blas;                 /* cuBLASLt, or NULL (blas_why says why) */
  char blas_why[160];
  cuda_dnn *dnn;                   /* cuDNN, or NULL (dnn_why says why) */
  char dnn_why[320];
} cuda_device;

struct alloy_backend {
  const alloy_host_api *host;
  cuda_api api;
  bool allow_tf32; /* option allow_tf32: float32 products on TF32 tensor cores */
  bool cudnn_tf32; /* option cudnn_allow_tf32: float32 convolutions on TF32 tensor cores */
  bool no_graphs;  /* option graphs=0: steps are launched one by one */
  bool row_major;  /* option channels_last=0: convolutions' results stay N, C, H, W in memory */
  bool conv_tuning; /* option cudnn_benchmark=1: each convolution's engine timed at compile */
  bool gemm_tuning; /* option gemm_benchmark=1: each product's algorithm timed at compile */
  bool vendor_libs; /* option vendor_libs: products and convolutions through cuBLASLt and cuDNN (the
                       CUDA build's default), else Alloy's own kernels (cuda_codegen_gemm.c) */
  int ndev;
  cuda_device devs[CUDA_MAX_DEVICES];
  char why[256]; /* why there is no device, when ndev == 0 */
};

struct alloy_buffer {
  CUdeviceptr ptr;
  uint64_t bytes;
  int device;
  bool imported;
};

struct alloy_queue {
  CUstream stream;
  int device;
  bool imported; /* the caller's stream (queue_import): released, never destroyed */
};

struct alloy_event {
  CUevent ev;
  int device;
};

/* A partition compiled for one layout of its inputs and outputs: the
 * contiguous one at compile, others as executes bring them. */
typedef struct cuda_variant {
  int64_t *key; /* the strides of the inputs, then of the outputs; NULL: contiguous */
  int nkey;
  cuda_plan plan;
  CUmodule *modules; /* cubins.n: the module's pieces, loaded (cuda_rtc.h) */
  CUfunction *fns;   /* plan.nlaunches: each kernel launch's */
  cuda_gemm **gemms; /* plan.nlaunches: each product's cuBLASLt plan */
  cuda_conv **convs; /* plan.nlaunches: each convolution's cuDNN plan */
  uint64_t workspace; /* the products' workspace, after the scratch */
  /* Its steps captured as a CUDA graph (option graphs, on by default):
   * replayed while the bases' device pointers are those it was captured
   * with (the host's arena keeps them from run to run), captured again
   * otherwise. The graph's temporaries live in memory of its own, since
   * captured steps read fixed addresses. graph_lock keeps two runs from
   * issuing it at once (a run that finds it taken issues its steps one by
   * one, as without graphs); a run on another stream than the last one's
   * waits for graph_done, the end of the last replay, since both use that
   * memory. */
  pthread_mutex_t graph_lock;
  CUgraphExec graph;
  CUdeviceptr *graph_ptr; /* plan.nbases: the pointers captured */
  CUdeviceptr graph_scratch;
  CUstream graph_stream; /* of the last replay */
  CUevent graph_done;    /* recorded after the last replay */
  CUstream graph_capture; /* captures when the run's stream is a default
                           * stream (a caller's may be), which cannot be
                           * captured; made on first need */
  bool graph_failed;     /* capture failed once: steps one by one from then on */
  /* The module's compiled pieces, kept by the contiguous variant for
   * serialize (others free them once loaded). */
  cuda_cubins cubins;
  int nmodules; /* modules loaded */
  struct cuda_variant *next;
} cuda_variant;

struct alloy_executable {
  const alloy_graph *g; /* the host's, alive until the executable is released */
  int device;
  pthread_mutex_t lock; /* guards the variant list past its head */
  cuda_variant *variants;
};

/* ---- errors ------------------------------------------------------------------*/

static alloy_error *cu_error(alloy_backend *be, CUresult r, const char *what) {
  const char *s = NULL;
  if (be->api.cuGetErrorString) be->api.cuGetErrorString(r, &s);
  char msg[512];
  snprintf(msg, sizeof msg, GPU_NAME ": %s failed: %s (%d)", what, s ? s : "unknown error", (int)r);
  alloy_error_code code = r == CUDA_ERROR_OUT_OF_MEMORY ? ALLOY_ERR_OUT_OF_MEMORY
                          : r == CUDA_ERROR_LAUNCH_FAILED || r == CUDA_ERROR_ILLEGAL_ADDRESS
                              ? ALLOY_ERR_DEVICE_LOST
                              : ALLOY_ERR_INTERNAL;
  return be->host->error_new(code, msg);
}

#define CU(be, call)                                      \
  do {                                                    \
    CUresult r_ = (be)->api.call;                         \
    if (r_ != CUDA_SUCCESS) return cu_error(be, r_, #call); \
  } while (0)

static alloy_error *use_device(alloy_backend *be, int device) {
  if (device < 0 || device >= be->ndev)
    return be->host->error_new(ALLOY_ERR_INVALID_ARGUMENT, GPU_NAME ": no such device");
  CU(be, cuCtxSetCurrent(be->devs[device].ctx));
  return NULL;
}

/* ---- open and close ---------------------------------------------------------*/

static int attr(alloy_backend *be, CUdevice d, CUdevice_attribute a) {
  int v = 0;
  be->api.cuDeviceGetAttribute(&v, a, d);
  return v;
}

static alloy_error *open_device(alloy_backend *be, int i) {
  cuda_device *d = &be->devs[i];
  CU(be, cuDeviceGet(&d->dev, i));
  CU(be, cuDeviceGetName(d->name, sizeof d->name, d->dev));
  size_t mem = 0;
  CU(be, cuDeviceTotalMem(&mem, d->dev));
  d->memory = mem;
  d->sms = attr(be, d->dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  d->cc_major = attr(be, d->dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  d->cc_minor = attr(be, d->dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  cuda_device_arch(&be->api, d->dev, d->arch, sizeof d->arch);
  /* The roofline: DRAM bandwidth (double data rate over the bus) and
   * float32 throughput (128 FMA lanes per SM from sm_80 on). */
  double mem_khz = attr(be, d->dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  double bus_bits = attr(be, d->dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  double clock_khz = attr(be, d->dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  d->bytes_per_s = mem_khz > 0 && bus_bits > 0 ? 2.0 * mem_khz * 1e3 * bus_bits / 8 : 1e12;
  d->flops_per_s = clock_khz > 0 ? 2.0 * 128 * d->sms * clock_khz * 1e3 : 1e13;
  CU(be, cuDevicePrimaryCtxRetain(&d->ctx, d->dev));
  CU(be, cuCtxSetCurrent(d->ctx));
  CU(be, cuStreamCreate(&d->queue, CU_STREAM_NON_BLOCKING));
  CU(be, cuStreamCreate(&d->copies, CU_STREAM_NON_BLOCKING));
  /* The BLAS and DNN libraries, opened whatever the option vendor_libs
   * (the option may change after open). CUDA: without cuBLASLt the
   * products, without cuDNN the convolutions stay on the next backend.
   * HIP: hipBLASLt and MIOpen are loaded where a machine has them; without
   * one, its kind of op runs on Alloy's own kernels (plan_options). */
  const char *why = cuda_blas_open(&d->blas, d->blas_why, sizeof d->blas_why);
  if (why && why != d->blas_why) snprintf(d->blas_why, sizeof d->blas_why, "%s", why);
  why = cuda_dnn_open(&d->dnn, d->dnn_why, sizeof d->dnn_why);
  if (why && why != d->dnn_why) snprintf(d->dnn_why, sizeof d->dnn_why, "%s", why);
  char msg[640];
#if defined(ALLOY_GPU_HIP) /* which library runs which ops, for `alloy backends` with ALLOY_LOG=0 */
  if (d->blas) {
    size_t v = cuda_blas_version(d->blas); /* hipBLASLt's: MAJOR * 100000 + MINOR * 100 + PATCH */
    snprintf(msg, sizeof msg, "device %d: products through hipBLASLt %zu.%zu.%zu", i, v / 100000, v / 100 % 1000,
             v % 100);
  } else {
    snprintf(msg, sizeof msg, "device %d: products on Alloy's own kernels: %s", i, d->blas_why);
  }
  be->host->log(ALLOY_LOG_DEBUG, GPU_NAME, msg);
  if (d->dnn) {
    size_t v = cuda_dnn_version(d->dnn);
    snprintf(msg, sizeof msg, "device %d: convolutions through MIOpen %zu.%zu.%zu from %s", i, v / 10000,
             v / 100 % 100, v % 100, cuda_dnn_path(d->dnn));
  } else {
    snprintf(msg, sizeof msg, "device %d: convolutions on Alloy's own kernels: %s", i, d->dnn_why);
  }
  be->host->log(ALLOY_LOG_DEBUG, GPU_NAME, msg);
#else
  if (d->dnn) {
    size_t v = cuda_dnn_version(d->dnn);
    snprintf(msg, sizeof msg, "device %d: cuDNN %zu.%zu.%zu from %s", i, v / 10000, v / 100 % 100, v % 100,
             cuda_dnn_path(d->dnn));
    be->host->log(ALLOY_LOG_DEBUG, GPU_NAME, msg);
  }
#endif
  return NULL;
}

static void close_devices(alloy_backend *be) {
  for (int i = 0; i < be->ndev; i++) {
    cuda_device *d = &be->devs[i];
    if (!d->ctx) continue;
    be->api.cuCtxSetCurrent(d->ctx);
    if (d->queue) be->api.cuStreamDestroy(d->queue);
    if (d->copies) be->api.cuStreamDestroy(d->copies);
    if (d->blas) cuda_blas_close(d->blas);
    if (d->dnn) cuda_dnn_close(d->dnn);
    be->api.cuDevicePrimaryCtxRelease(d->dev);
  }
  be->ndev = 0;
}

static alloy_error *cuda_backend_open(const alloy_host_api *host, alloy_backend **out) {
  alloy_backend *be = calloc(1, sizeof *be);
  if (!be) return host->error_new(ALLOY_ERR_OUT_OF_MEMORY, GPU_NAME ": out of memory");
  be->host = host;
  be->vendor_libs = true; /* the libraries where found (HIP: each missing one's ops on Alloy's kernels) */
  char buf[256];
  const char *why = cuda_api_open(&be->api, buf, sizeof buf);
  int count = 0;
  CUresult r = CUDA_SUCCESS;
  if (!why && (r = be->api.cuInit(0)) != CUDA_SUCCESS) {
    const char *s = NULL;
    be->api.cuGetErrorString(r, &s);
    snprintf(buf, sizeof buf, GPU_INIT_CALL " failed: %s" GPU_INIT_HINT, s ? s : "unknown error");
    why = buf;
  }
  if (!why && be->api.cuDeviceGetCount(&count) == CUDA_SUCCESS && count == 0)
    why = "the driver finds no " GPU_DEVICE_KIND " device";
  if (why) {
    snprintf(be->why, sizeof be->why, "%s", why);
    *out = be;
    return NULL;
  }
  be->ndev = count < CUDA_MAX_DEVICES ? count : CUDA_MAX_DEVICES;
  for (int i = 0; i < be->ndev; i++) {
    alloy_error *e = open_device(be, i);
    if (e) {
      /* a device that does not open leaves the backend without devices */
      snprintf(be->why, sizeof be->why, "device %d: %s", i, host->error_message(e));
      host->error_free(e);
      be->ndev = i + 1;
      close_devices(be);
      break;
    }
  }
  *out = be;
  return NULL;
}

static void cuda_backend_close(alloy_backend *be) {
  close_devices(be);
  cuda_api_close(&be->api);
  free(be);
}

static int cuda_device_count(alloy_backend *be) { return be->ndev; }

static alloy_error *cuda_device_info(alloy_backend *be, int device, alloy_device_info *info) {
  if (be->ndev == 0) return be->host->error_new(ALLOY_ERR_UNAVAILABLE, be->why);
  alloy_error *e = use_device(be, device);
  if (e) return e;
  cuda_device *d = &be->devs[device];
  alloy_device_info full = {.struct_size = info->struct_size};
  full.name = d->name;
  full.kind = ALLOY_DEVICE_KIND_GPU;
  full.memory_bytes = d->memory;
  size_t free_b = 0, total = 0;
  if (be->api.cuMemGetInfo(&free_b, &total) == CUDA_SUCCESS) full.free_memory_bytes = free_b;
  full.arch = d->arch;
  full.capabilities = ALLOY_DEVICE_CAP_ASYNC | ALLOY_DEVICE_CAP_PINNED_HOST | ALLOY_DEVICE_CAP_IMPORT;
  full.launch_s = 5e-6;
  full.host_bytes_per_s = 2e10;
  size_t n = info->struct_size < sizeof full ? info->struct_size : sizeof full;
  memcpy(info, &full, n);
  return NULL;
}

/* ---- claims -------------------------------------------------------------------*/

static double bytes_of(const alloy_host_api *h, const alloy_value *v) {
  if (h->value_kind(v) != 0) return 0;
  double n = (double)alloy_dtype_size(h->value_dtype(v));
  for (int d = 0; d < h->value_rank(v); d++) {
    int64_t s = 1;
    if (!h->value_size(v, d, &s)) {
      int64_t lo = 1, hi = 1;
      h->value_size_range(v, d, &lo, &hi);
      s = hi > 0 && hi < (int64_t)1 << 20 ? hi : 1024;
    }
    n *= (double)s;
  }
  return n;
}

/* The flops a second a product or convolution of dtype t runs at: the
 * vendor libraries' reach the float32 SIMT peak, and 12 times it on the
 * tensor cores for the 16-bit floats; Alloy's portable kernels use no
 * tensor cores, and a tiled SIMT kernel gets about half the peak. */
static double product_peak(const alloy_backend *be, alloy_dtype t, bool portable) {
  double simt = be->devs[0].flops_per_s;
  if (portable) return 0.5 * simt;
  return t == ALLOY_F32 ? simt : 12.0 * simt;
}

static cuda_plan_options plan_options(const alloy_backend *be);

/* A node's cost on the roofline: the bytes it reads and writes at the
 * device's bandwidth (a view moves none). Fusion makes a group cheaper
 * than the sum; the estimate errs high, as a lone node is. */
static alloy_error *cuda_claim(alloy_backend *be, const alloy_graph *g, alloy_claims *claims) {
  const alloy_host_api *h = be->host;
  int nn = h->graph_num_nodes(g);
  for (int i = 0; i < nn; i++) {
    const alloy_node *n = h->graph_node(g, i);
    if (be->ndev == 0) {
      if (h->claims_reject) h->claims_reject(claims, i, be->why);
      continue;
    }
    const char *why = cuda_node_unsupported(h, n);
    if (why) {
      if (h->claims_reject) h->claims_reject(claims, i, why);
      continue;
    }
    const cuda_op *op = cuda_op_find(h->node_op_name(n));
    /* with the portable kernels, products and convolutions need no library
     * (vendor_libs=0; HIP: also the kind whose library is missing) */
    const cuda_plan_options po = plan_options(be);
    const bool portable = op->kind == CUDA_OP_CONV ? po.portable_conv : po.portable_gemm;
    if (op->kind == CUDA_OP_GEMM && !portable && !be->devs[0].blas) {
      if (h->claims_reject) h->claims_reject(claims, i, be->devs[0].blas_why);
      continue;
    }
    if (op->kind == CUDA_OP_CONV && !portable && !be->devs[0].dnn) { /* without cuDNN, as without cuBLASLt */
      if (h->claims_reject) h->claims_reject(claims, i, be->devs[0].dnn_why);
      continue;
    }
    double bytes = 0;
    for (int k = 0; k < h->node_num_outputs(n); k++) bytes += bytes_of(h, h->node_output(n, k));
    for (int a = 0; a < h->node_num_args(n); a++) {
      const alloy_arg *arg = h->node_arg(n, a);
      if (h->arg_type(arg) == ALLOY_ARG_TYPE_VALUE) bytes += bytes_of(h, h->arg_value(arg));
    }
    double cost = op->kind == CUDA_OP_VIEW ? 1e-9 : 1e-6 + bytes / be->devs[0].bytes_per_s;
    if (op->kind == CUDA_OP_GEMM) { /* 2 m n k flops, tensor cores for the 16-bit floats */
      const alloy_value *o = h->node_output(n, 0);
      double flops = 2.0 * bytes_of(h, o) / (double)alloy_dtype_size(h->value_dtype(o));
      const alloy_value *ops[3];
      int nops = 0;
      for (int a = 0; a < h->node_num_args(n) && nops < 3; a++) {
        const alloy_arg *arg = h->node_arg(n, a);
        if (h->arg_type(arg) == ALLOY_ARG_TYPE_VALUE) ops[nops++] = h->arg_value(arg);
      }
      int64_t kdim = 1;
      if (nops >= 2) h->value_size(ops[nops - 2], h->value_rank(ops[nops - 2]) - 1, &kdim);
      cost += flops * (double)kdim / product_peak(be, h->value_dtype(o), portable);
    }
    if (op->kind == CUDA_OP_CONV) { /* as a product: tensor cores for the 16-bit floats */
      const alloy_value *o = h->node_output(n, 0);
      cost += cuda_conv_flops(h, n) / product_peak(be, h->value_dtype(o), portable);
    }
    h->claims_add(claims, i, cost);
  }
  return NULL;
}

/* ---- compile ------------------------------------------------------------------*/

static void variant_free(alloy_backend *be, cuda_variant *v) {
  cuda_cubins_free(&v->cubins);
  if (v->graph) be->api.cuGraphExecDestroy(v->graph);
  if (v->graph_done) be->api.cuEventDestroy(v->graph_done);
  if (v->graph_capture) be->api.cuStreamDestroy(v->graph_capture);
  if (v->graph_scratch) be->api.cuMemFree(v->graph_scratch);
  free(v->graph_ptr);
  pthread_mutex_destroy(&v->graph_lock);
  for (int i = 0; v->gemms && i < v->plan.nlaunches; i++) cuda_gemm_free(v->gemms[i]);
  for (int i = 0; v->convs && i < v->plan.nlaunches; i++) cuda_conv_free(v->convs[i]);
  free(v->gemms);
  free(v->convs);
  for (int i = 0; i < v->nmodules; i++) be->api.cuModuleUnload(v->modules[i]);
  free(v->modules);
  free(v->fns);
  free(v->key);
  cuda_plan_free(&v->plan);
  free(v);
}

static void cuda_executable_release(alloy_backend *be, alloy_executable *exe) {
  if (!exe) return;
  bool current = use_device(be, exe->device) == NULL;
  for (cuda_variant *v = exe->variants, *next; v; v = next) {
    next = v->next;
    if (!current)
      v->nmodules = 0, v->graph = NULL, v->graph_scratch = 0, v->graph_done = NULL, v->graph_capture = NULL;
    variant_free(be, v);
  }
  pthread_mutex_destroy(&exe->lock);
  free(exe);
}

/* Plans, generates and loads the kernels of exe's partition for layout. */
/* FNV-1a of a plan's module text: a cached cubin belongs to the plan whose
 * text has its hash. */
static uint64_t source_hash(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

/* The plan options the backend's options give: with vendor_libs=0 every
 * product and convolution is Alloy's own kernel. With vendor_libs=1 the
 * HIP build also takes its own kernel for each kind of op whose library
 * (hipBLASLt, MIOpen) the machine lacks, open_device having logged why;
 * the CUDA build leaves those ops unclaimed instead (cuda_claim). */
static cuda_plan_options plan_options(const alloy_backend *be) {
  const bool own = !be->vendor_libs;
  cuda_plan_options po = {.portable = own, .portable_gemm = own, .portable_conv = own,
                          .simt_attention = !GPU_HAS_MMA_SYNC || be->devs[0].cc_major < 8,
                          .channels_last = !be->row_major};
#if defined(ALLOY_GPU_HIP)
  po.portable_gemm = own || !be->devs[0].blas;
  po.portable_conv = own || !be->devs[0].dnn;
#endif
  return po;
}

/* The module's compile on a thread of its own (its pieces on threads of
 * theirs), while the caller plans the products and convolutions. */
typedef struct rtc_job {
  alloy_backend *be;
  const char *arch;
  const cuda_plan *plan;
  cuda_cubins *out;
  alloy_error *err;
} rtc_job;

static void *rtc_job_run(void *arg) {
  rtc_job *j = arg;
  const alloy_host_api *h = j->be->host;
  const bool tracing = h->trace_enabled && h->trace_enabled();
  uint64_t t0 = tracing ? h->clock_ns() : 0;
  j->err = cuda_rtc_compile(&j->be->api, h, j->arch, j->plan, cuda_rtc_threads(), j->out);
  if (tracing) h->trace_range(GPU_NAME, "compile", GPU_RTC, t0, h->clock_ns());
  return NULL;
}

/* cuBLASLt's and cuDNN's plans (HIP: hipBLASLt's and MIOpen's) of v's
 * product and convolution steps. */
static alloy_error *library_plans(alloy_backend *be, const alloy_executable *exe, cuda_variant *v) {
  alloy_error *e = NULL;
  cuda_device *d = &be->devs[exe->device];
  for (int i = 0; !e && i < v->plan.nlaunches; i++) {
    cuda_launch *l = &v->plan.launches[i];
    if (l->kind == LAUNCH_GEMM) {
      uint64_t ws = 0;
      l->gemm.allow_tf32 = be->allow_tf32;
      char why[512];
      /* with gemm_benchmark, the fastest of the heuristic's first eight */
      const cuda_tuning tune = {.api = &be->api, .stream = d->copies, .candidates = 8, .runs = 5};
      const char *no = d->blas ? cuda_gemm_plan(d->blas, &l->gemm, (uint64_t)32 << 20,
                                                be->gemm_tuning ? &tune : NULL, &v->gemms[i], &ws, why, sizeof why)
                               : d->blas_why;
      if (no) e = be->host->error_new(ALLOY_ERR_DECLINED, no);
      if (ws > v->workspace) v->workspace = ws;
      continue;
    }
    if (l->kind == LAUNCH_DNN) {
      /* a cuDNN (HIP: MIOpen) plan (64 MiB of workspace at most); once it
       * fuses the bias, the kernel the plan carries to add it has nothing
       * to do */
      uint64_t ws = 0;
      l->conv.allow_tf32 = be->allow_tf32 || be->cudnn_tf32;
      char why[640];
      bool fused = false;
      /* with cudnn_benchmark, the fastest of cuDNN's first four engines */
      const cuda_tuning tune = {.api = &be->api, .stream = d->copies, .candidates = 4, .runs = 3};
      const char *no = d->dnn ? cuda_conv_plan(d->dnn, &l->conv, (uint64_t)64 << 20,
                                               be->conv_tuning ? &tune : NULL, &v->convs[i], &ws, &fused,
                                               why, sizeof why)
                              : d->dnn_why;
      if (no) e = be->host->error_new(ALLOY_ERR_DECLINED, no);
      if (!no && fused && l->dnn_bias_step > i && l->dnn_bias_step < v->plan.nlaunches)
        v->plan.launches[l->dnn_bias_step].n = 0;
      if (!no) {
        char msg[200];
        cuda_conv_describe(v->convs[i], msg, sizeof msg);
        be->host->log(ALLOY_LOG_DEBUG, GPU_NAME, msg);
      }
      if (ws > v->workspace) v->workspace = ws;
    }
  }
  return e;
}

/* Loads v's compiled pieces as modules and finds each kernel step's
 * function in the one holding it. */
static alloy_error *kernels_bind(alloy_backend *be, cuda_variant *v) {
  alloy_error *e = NULL;
  if (!(v->modules = calloc((size_t)v->cubins.n + 1, sizeof *v->modules)))
    return be->host->error_new(ALLOY_ERR_OUT_OF_MEMORY, GPU_NAME ": out of memory");
  for (int i = 0; !e && i < v->cubins.n; i++) {
    CUresult r = be->api.cuModuleLoadData(&v->modules[i], v->cubins.bin[i]);
    if (r != CUDA_SUCCESS) e = cu_error(be, r, "cuModuleLoadData");
    else v->nmodules++;
  }
  for (int i = 0; !e && i < v->plan.nlaunches; i++) {
    const cuda_launch *l = &v->plan.launches[i];
    if (l->kind != LAUNCH_KERNEL) continue;
    CUresult r = l->kernel < 0 || l->kernel >= v->cubins.nkernels
                     ? CUDA_ERROR_NOT_FOUND
                     : be->api.cuModuleGetFunction(&v->fns[i], v->modules[v->cubins.piece_of[l->kernel]], l->name);
    if (r != CUDA_SUCCESS) e = cu_error(be, r, "cuModuleGetFunction");
    else if (l->shmem > 48 * 1024 &&
             (r = be->api.cuFuncSetAttribute(v->fns[i], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                             (int)l->shmem)) != CUDA_SUCCESS)
      e = cu_error(be, r, "cuFuncSetAttribute"); /* past 48 KiB a kernel asks for it */
  }
  return e;
}

/* Plans exe's partition for layout (or takes over *planned) and loads its
 * module: the pieces given (from the compile cache, whose text hash the
 * caller checked; taken over), or those NVRTC builds on several threads
 * (cuda_rtc.c) while this thread makes the library plans. The contiguous
 * variant keeps its pieces for serialize. */
static alloy_error *variant_build_from(alloy_backend *be, alloy_executable *exe, const cuda_layout *layout,
                                       cuda_plan *planned, cuda_cubins *cached, cuda_variant **out) {
  cuda_variant *v = calloc(1, sizeof *v);
  if (!v) {
    if (planned) cuda_plan_free(planned);
    if (cached) cuda_cubins_free(cached);
    return be->host->error_new(ALLOY_ERR_OUT_OF_MEMORY, GPU_NAME ": out of memory");
  }
  pthread_mutex_init(&v->graph_lock, NULL);
  alloy_error *e = NULL;
  const cuda_plan_options po = plan_options(be);
  const alloy_host_api *h = be->host;
  const bool tracing = h->trace_enabled && h->trace_enabled();
  uint64_t t0 = tracing ? h->clock_ns() : 0;
  if (planned) v->plan = *planned; /* taken over */
  else e = cuda_plan_build(h, exe->g, layout, &po, &v->plan);
  if (tracing) h->trace_range(GPU_NAME, "compile", "plan", t0, h->clock_ns());
  if (!e && (!(v->fns = calloc((size_t)v->plan.nlaunches + 1, sizeof *v->fns)) ||
             !(v->gemms = calloc((size_t)v->plan.nlaunches + 1, sizeof *v->gemms)) ||
             !(v->convs = calloc((size_t)v->plan.nlaunches + 1, sizeof *v->convs))))
    e = h->error_new(ALLOY_ERR_OUT_OF_MEMORY, GPU_NAME ": out of memory");
  rtc_job job = {.be = be, .arch = be->devs[exe->device].arch, .plan = &v->plan, .out = &v->cubins};
  pthread_t compiler;
  bool compiling = false;
  if (!e && cached) v->cubins = *cached, memset(cached, 0, sizeof *cached); /* taken over */
  else if (!e && !(compiling = pthread_create(&compiler, NULL, rtc_job_run, &job) == 0))
    rtc_job_run(&job); /* no thread: NVRTC first, then the libraries */
  if (cached) cuda_cubins_free(cached);
  t0 = tracing ? h->clock_ns() : 0;
  if (!e) e = library_plans(be, exe, v);
  if (tracing) h->trace_range(GPU_NAME, "compile", "library plans", t0, h->clock_ns());
  if (compiling) pthread_join(compiler, NULL);
  if (!e) e = job.err;
  else if (job.err) h->error_free(job.err);
  t0 = tracing ? h->clock_ns() : 0;
  if (!e) e = kernels_bind(be, v);
  if (tracing) h->trace_range(GPU_NAME, "compile", "load modules", t0, h->clock_ns());
  if (layout) cuda_cubins_free(&v->cubins); /* only the contiguous variant is serialized */
  if (e) {
    variant_free(be, v);
    return e;
  }
  *out = v;
  return NULL;
}

static alloy_error *variant_build(alloy_backend *be, alloy_executable *exe, const cuda_layout *layout,
                                  cuda_variant **out) {
  return variant_build_from(be, exe, layout, NULL, NULL, out);
}

static alloy_error *cuda_compile(alloy_backend *be, const alloy_graph *partition,
                                 const alloy_compile_options *options, alloy_executable **out) {
  int device = options ? options->device : 0;
  alloy_error *e = use_device(be, device);
  if (e) return e;
  alloy_executable *exe = calloc(1, sizeof *exe);
  if (!exe) return be->host->error_new(ALLOY_ERR_OUT_OF_MEMORY, GPU_NAME ": out of memory");
  exe->device = device;
  exe->g = partition;
  pthread_mutex_init(&exe->lock, NULL);
  e = variant_build(be, exe, NULL, &exe->variants);
  if (e) {
    cuda_executable_release(be, exe);
    return e;
  }
  *out = exe;
  return NULL;
}

/* ---- the compile cache -----------------------------------------------------------*/

/* A serialized executable: the magic, the architecture it was built for
 * (16 bytes, NUL-padded), the FNV-1a of its plan's module text, the size
 * of the rest, then the module's compiled pieces (cuda_cubins_write), in
 * the host's byte order (the cache's entries never leave this machine's
 * kind). Deserialize plans the partition again (milliseconds: the plan is
 * a function of the graph and the options, which the cache's key holds)
 * and loads the pieces in place of NVRTC's seconds, when the plan's text
 * still hashes to what was stored. */
#define CUDA_CACHE_MAGIC "alloycu2"
enum { CACHE_HEAD = 8 + 16 + 8 + 8 };

static alloy_error *cuda_executable_serialize(alloy_backend *be, alloy_executable *exe, void **bytes,
                                              uint64_t *size, alloy_compat_info *info) {
  const cuda_variant *v = exe->variants;
  if (!v || !v->cubins.n)
    return be->host->error_new(ALLOY_ERR_UNSUPPORTED, GPU_NAME ": the executable keeps no cubin to serialize");
  uint64_t cs = cuda_cubins_bytes(&v->cubins), n = CACHE_HEAD + cs;
  unsigned char *b = be->host->alloc(n);
  if (!b) return be->host->error_new(ALLOY_ERR_OUT_OF_MEMORY, GPU_NAME ": out of memory");
  memset(b, 0, CACHE_HEAD);
  memcpy(b, CUDA_CACHE_MAGIC, 8);
  snprintf((char *)b + 8, 16, "%s", be->devs[exe->device].arch);
  uint64_t hash = source_hash(v->plan.source, v->plan.source_len);
  memcpy(b + 24, &hash, 8);
  memcpy(b + 32, &cs, 8);
  cuda_cubins_write(&v->cubins, b + CACHE_HEAD);
  *bytes = b;
  *size = n;
  if (info && info->struct_size >= ALLOY_COMPAT_INFO_STRUCT_SIZE) {
    info->plugin_version = "0.1.0";
    info->device_model = be->devs[exe->device].arch;
  }
  return NULL;
}

static alloy_error *cuda_executable_deserialize(alloy_backend *be, const alloy_graph *partition, const void *bytes,
                                                uint64_t size, alloy_executable **out) {
  const alloy_host_api *h = be->host;
  const unsigned char *b = bytes;
  uint64_t hash = 0, cs = 0;
  if (size >= CACHE_HEAD) memcpy(&hash, b + 24, 8), memcpy(&cs, b + 32, 8);
  if (size < CACHE_HEAD || memcmp(b, CUDA_CACHE_MAGIC, 8) != 0 || cs != size - CACHE_HEAD)
    return h->error_new(ALLOY_ERR_VERSION, GPU_NAME ": not a cached executable of this backend");
  if (be->ndev == 0) return h->error_new(ALLOY_ERR_UNAVAILABLE, be->why);
  char arch[17] = {0};
  memcpy(arch, b + 8, 16);
  if (strcmp(arch, be->devs[0].arch) != 0)
    return h->error_new(ALLOY_ERR_VERSION, GPU_NAME ": a cached executable of another GPU architecture");
  alloy_error *e = use_device(be, 0);
  if (e) return e;
  cuda_plan plan;
  const cuda_plan_options po = plan_options(be);
  if ((e = cuda_plan_build(h, partition, NULL, &po, &plan))) return e;
  if (source_hash(plan.source, plan.source_len) != hash) {
    cuda_plan_free(&plan);
    return h->error_new(ALLOY_ERR_VERSION, GPU_NAME ": a cached executable of other kernels");
  }
  cuda_cubins pieces;
  if (!cuda_cubins_read(b + CACHE_HEAD, (size_t)cs, plan.nkernels, &pieces)) {
    cuda_plan_free(&plan);
    return h->error_new(ALLOY_ERR_VERSION, GPU_NAME ": a cached executable whose compiled pieces do not read");
  }
  alloy_executable *exe = calloc(1, sizeof *exe);
  if (!exe) {
    cuda_plan_free(&plan);
    cuda_cubins_free(&pieces);
    return h->error_new(ALLOY_ERR_OUT_OF_MEMORY, GPU_NAME ": out of memory");
  }
  exe->g = partition;
  pthread_mutex_init(&exe->lock, NULL);
  e = variant_build_from(be, exe, NULL, &plan, &pieces, &exe->variants);
  if (e) {
    cuda_executable_release(be, exe);
    return e;
  }
  *out = exe;
  return NULL;
}

/* ---- execute ------------------------------------------------------------------*/

static bool contiguous(const alloy_tensor *t) {
  int64_t s = 1;
  for (int d = 0; d < t->rank; d++)
    if (t->sizes[d] == 0) return true; /* no element: any strides will do */
  for (int d = t->rank - 1; d >= 0; d--) {
    if (t->sizes[d] != 1 && t->strides[d] != s) return false;
    s *= t->sizes[d];
  }
  return true;
}

/* Ends work issued on stream (a run, a copy): with a queue, an event for
 * *done; without, waits for the stream. */
static alloy_error *work_done(alloy_backend *be, int device, alloy_queue *q, CUstream stream,
                              alloy_event **done) {
  if (!q) {
    CU(be, cuStreamSynchronize(stream));
    return NULL;
  }
  alloy_event *ev = calloc(1, sizeof *ev);
  if (!ev) return be->host->error_new(ALLOY_ERR_OUT_OF_MEMORY, GPU_NAME ": out of memory");
  ev->device = device;
  CUresult r = be->api.cuEventCreate(&ev->ev, CU_EVENT_DISABLE_TIMING);
  if (r == CUDA_SUCCESS) r = be->api.cuEventRecord(ev->ev, stream);
  if (r != CUDA_SUCCESS) {
    if (ev->ev) be->api.cuEventDestroy(ev->ev);
    free(ev);
    return cu_error(be, r, "cuEventRecord");
  }
  if (done) *done = ev;
  else be->api.cuEventDestroy(ev->ev), free(ev);
  return NULL;
}

/* The variant of exe for the layout of args: the contiguous one, one made
 * before for the same strides, or a new one. */
static alloy_error *variant_for(alloy_backend *be, alloy_executable *exe, const alloy_execute_args *args,
                                cuda_variant **out) {
  int nkey = 0;
  bool dense = true;
  for (int i = 0; i < args->num_inputs; i++) nkey += args->inputs[i].rank, dense &= contiguous(&args->inputs[i]);
  for (int i = 0; i < args->num_outputs; i++)
    nkey += args->outputs[i].rank, dense &= contiguous(&args->outputs[i]);
  *out = exe->variants;
  if (dense) return NULL;
  int64_t *key = malloc(sizeof *key * (size_t)(nkey + 1));
  if (!key) return be->host->error_new(ALLOY_ERR_OUT_OF_MEMORY, GPU_NAME ": out of memory");
  int k = 0;
  for (int i = 0; i < args->num_inputs; i++)
    for (int d = 0; d < args->inputs[i].rank; d++) key[k++] = args->inputs[i].strides[d];
  for (int i = 0; i < args->num_outputs; i++)
    for (int d = 0; d < args->outputs[i].rank; d++) key[k++] = args->outputs[i].strides[d];
  pthread_mutex_lock(&exe->lock);
  cuda_variant *v = exe->variants->next;
  while (v && !(v->nkey == nkey && !memcmp(v->key, key, sizeof *key * (size_t)nkey))) v = v->next;
  alloy_error *e = NULL;
  if (!v) {
    cuda_layout layout = {args->inputs, args->outputs};
    e = variant_build(be, exe, &layout, &v);
    if (!e) {
      v->key = key, key = NULL;
      v->nkey = nkey;
      v->next = exe->variants->next;
      exe->variants->next = v;
    }
  }
  pthread_mutex_unlock(&exe->lock);
  free(key);
  *out = v;
  return e;
}

static alloy_error *cuda_buffer_allocate(alloy_backend *be, int device, uint64_t bytes, alloy_buffer **out);

/* Output k of exe's partition, given with no buffer: a buffer of its sizes,
 * contiguous, which the host owns from here (alloy/plugin.h). */
static alloy_error *output_allocate(alloy_backend *be, alloy_executable *exe, alloy_tensor *t, int k) {
  const alloy_host_api *h = be->host;
  const alloy_value *v = h->graph_output(exe->g, k);
  int64_t numel = 1;
  for (int d = 0; d < t->rank; d++) {
    int64_t s = 0;
    if (!h->value_size(v, d, &s)) return h->error_new(ALLOY_ERR_UNSUPPORTED, GPU_NAME ": an output of unknown size");
    t->sizes[d] = s;
    numel *= s;
  }
  int64_t stride = 1;
  /* PyTorch's contiguous strides: an empty dim counts as 1 */
  for (int d = t->rank - 1; d >= 0; d--) t->strides[d] = stride, stride *= t->sizes[d] > 1 ? t->sizes[d] : 1;
  t->offset = 0;
  return cuda_buffer_allocate(be, exe->device, (uint64_t)numel * alloy_dtype_size(t->dtype), &t->buffer);
}

/* Issues step i of var's plan on stream: a kernel launch or a product.
 * ptr: the device pointer of each base; scratch: the run's temporaries,
 * the products' workspace after them. */
static alloy_error *step_issue(alloy_backend *be, cuda_device *d, const cuda_variant *var, int i,
                               const CUdeviceptr *ptr, CUdeviceptr scratch, CUstream stream) {
  const cuda_plan *p = &var->plan;
  const cuda_launch *l = &p->launches[i];
  if (l->kind == LAUNCH_GEMM) {
    CUdeviceptr at[GEMM_OPERANDS] = {0};
    size_t es = alloy_dtype_size(l->gemm.dtype);
    for (int k = 0; k < GEMM_OPERANDS; k++)
      if (l->gbase[k] >= 0) at[k] = ptr[l->gbase[k]] + (CUdeviceptr)l->goff[k] * es;
    char why[512];
    const char *no = cuda_gemm_run(d->blas, var->gemms[i], at[GEMM_A], at[GEMM_B], at[GEMM_C], at[GEMM_D],
                                   at[GEMM_BIAS], scratch + p->scratch_bytes, var->workspace, stream, why,
                                   sizeof why);
    return no ? be->host->error_new(ALLOY_ERR_INTERNAL, no) : NULL;
  }
  if (l->kind == LAUNCH_DNN) {
    CUdeviceptr at[DNN_OPERANDS] = {0};
    size_t es = alloy_dtype_size(l->conv.dtype);
    for (int k = 0; k < DNN_OPERANDS; k++)
      if (l->dbase[k] >= 0) at[k] = ptr[l->dbase[k]] + (CUdeviceptr)l->doff[k] * es;
    char why[512];
    const char *no = cuda_conv_run(d->dnn, var->convs[i], at[DNN_X], at[DNN_W], at[DNN_BIAS], at[DNN_Y],
                                   scratch + p->scratch_bytes, var->workspace, stream, why, sizeof why);
    return no ? be->host->error_new(ALLOY_ERR_INTERNAL, no) : NULL;
  }
  if (l->n == 0) return NULL;
  void *params[66];
  CUdeviceptr vals[64];
  for (int k = 0; k < l->nbases; k++) vals[k] = ptr[l->bases[k]], params[k] = &vals[k];
  int64_t n = l->n;
  params[l->nbases] = &n;
  unsigned grid[3] = {l->grid[0], l->grid[1], l->grid[2]}, block = l->block;
  if (!block) { /* grid-stride: a block per row, or 256 elements a block, at most 16 blocks an SM */
    int64_t each = 256 * (int64_t)(l->per_thread > 1 ? l->per_thread : 1);
    int64_t blocks = l->rows ? n : (n + each - 1) / each, cap = (int64_t)d->sms * 16;
    grid[0] = (unsigned)(blocks < cap ? blocks : cap), grid[1] = grid[2] = 1, block = 256;
  }
  CU(be, cuLaunchKernel(var->fns[i], grid[0], grid[1] ? grid[1] : 1, grid[2] ? grid[2] : 1, block, 1, 1,
                        l->shmem, stream, params, NULL));
  return NULL;
}

/* Issues every step, each between two timing events, then waits for the
 * stream and puts each step's GPU time on the trace's "gpu" track (the
 * events' times, anchored at the host's clock when the last one ended). */
static alloy_error *steps_traced(alloy_backend *be, cuda_device *d, const cuda_variant *var,
                                 const CUdeviceptr *ptr, CUdeviceptr scratch, CUstream stream) {
  const alloy_host_api *h = be->host;
  int n = var->plan.nlaunches;
  CUevent *ev = calloc((size_t)n + 1, sizeof *ev);
  if (!ev) return h->error_new(ALLOY_ERR_OUT_OF_MEMORY, GPU_NAME ": out of memory");
  alloy_error *e = NULL;
  int made = 0;
  for (; made <= n; made++)
    if (be->api.cuEventCreate(&ev[made], CU_EVENT_DEFAULT) != CUDA_SUCCESS) break;
  if (made <= n) e = h->error_new(ALLOY_ERR_INTERNAL, GPU_NAME ": cuEventCreate failed");
  for (int i = 0; i < n && !e; i++) {
    CUresult r = be->api.cuEventRecord(ev[i], stream);
    e = r != CUDA_SUCCESS ? cu_error(be, r, "cuEventRecord") : step_issue(be, d, var, i, ptr, scratch, stream);
  }
  if (!e && be->api.cuEventRecord(ev[n], stream) == CUDA_SUCCESS &&
      be->api.cuEventSynchronize(ev[n]) == CUDA_SUCCESS) {
    uint64_t end = h->clock_ns();
    for (int i = 0; i < n; i++) {
      float to_begin = 0, to_end = 0;
      if (be->api.cuEventElapsedTime(&to_begin, ev[i], ev[n]) != CUDA_SUCCESS ||
          be->api.cuEventElapsedTime(&to_end, ev[i + 1], ev[n]) != CUDA_SUCCESS)
        continue;
      const cuda_launch *l = &var->plan.launches[i];
      h->trace_range(GPU_NAME, "gpu", l->what[0] ? l->what : l->name, end - (uint64_t)(to_begin * 1e6),
                     end - (uint64_t)(to_end * 1e6));
    }
  }
  for (int i = 0; i < made; i++) be->api.cuEventDestroy(ev[i]);
  free(ev);
  return e;
}

/* Issues var's steps as its CUDA graph: replayed when ptr is what it was
 * captured with, else captured (again) first. Returns false, having issued
 * nothing, when another run is issuing it. */
static bool steps_graphed(alloy_backend *be, cuda_device *d, cuda_variant *var, CUdeviceptr *ptr,
                          CUstream stream, alloy_error **err) {
  const cuda_plan *p = &var->plan;
  if (pthread_mutex_trylock(&var->graph_lock) != 0) return false;
  if (var->graph_failed) {
    pthread_mutex_unlock(&var->graph_lock);
    return false;
  }
  alloy_error *e = NULL;
  CUresult r = CUDA_SUCCESS;
  uint64_t bytes = p->scratch_bytes + var->workspace;
  if (bytes && !var->graph_scratch && (r = be->api.cuMemAlloc(&var->graph_scratch, bytes)) != CUDA_SUCCESS)
    e = cu_error(be, r, "cuMemAlloc");
  if (!e && !var->graph_done && (r = be->api.cuEventCreate(&var->graph_done, CU_EVENT_DISABLE_TIMING)) != CUDA_SUCCESS)
    var->graph_done = NULL, e = cu_error(be, r, "cuEventCreate");
  if (!e && var->graph_stream && var->graph_stream != stream &&
      (r = be->api.cuStreamWaitEvent(stream, var->graph_done, 0)) != CUDA_SUCCESS)
    e = cu_error(be, r, "cuStreamWaitEvent");
  for (int i = 0; i < p->nbases && !e; i++)
    if (p->bases[i].kind == BASE_TEMP) ptr[i] = var->graph_scratch + p->bases[i].offset;
  size_t key = sizeof *ptr * (size_t)p->nbases;
  if (!e && !(var->graph && !memcmp(var->graph_ptr, ptr, key))) {
    if (!var->graph_ptr && !(var->graph_ptr = malloc(key + 1)))
      e = be->host->error_new(ALLOY_ERR_OUT_OF_MEMORY, GPU_NAME ": out of memory");
    CUgraph graph = NULL;
    CUstream cap = stream;
    if (!e && GPU_STREAM_IS_DEFAULT(stream)) {
      if (!var->graph_capture && (r = be->api.cuStreamCreate(&var->graph_capture, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS)
        var->graph_capture = NULL, e = cu_error(be, r, "cuStreamCreate");
      cap = var->graph_capture;
    }
    if (!e && (r = be->api.cuStreamBeginCapture(cap, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)) != CUDA_SUCCESS)
      e = cu_error(be, r, "cuStreamBeginCapture");
    else if (!e) {
      for (int i = 0; i < p->nlaunches && !e; i++)
        e = step_issue(be, d, var, i, ptr, var->graph_scratch, cap);
      r = be->api.cuStreamEndCapture(cap, &graph);
      if (!e && r != CUDA_SUCCESS) e = cu_error(be, r, "cuStreamEndCapture");
    }
    /* the pointers changed, not the steps: update the graph in place when
     * the driver can, else instantiate it anew */
    CUgraphExecUpdateResultInfo info;
    if (!e && !(var->graph && be->api.cuGraphExecUpdate(var->graph, graph, &info) == CUDA_SUCCESS)) {
      if (var->graph) be->api.cuGraphExecDestroy(var->graph), var->graph = NULL;
      if ((r = be->api.cuGraphInstantiate(&var->graph, graph, 0)) != CUDA_SUCCESS)
        var->graph = NULL, e = cu_error(be, r, "cuGraphInstantiate");
    }
    if (graph) be->api.cuGraphDestroy(graph);
    if (!e) memcpy(var->graph_ptr, ptr, key);
    if (e) {
      /* Nothing ran: a step that cannot be captured (a library that
       * synchronizes) makes the variant issue its steps one by one. */
      char msg[640];
      snprintf(msg, sizeof msg, "a partition runs without a CUDA graph: %s", be->host->error_message(e));
      be->host->log(ALLOY_LOG_WARNING, GPU_NAME, msg);
      be->host->error_free(e);
      var->graph_failed = true;
      pthread_mutex_unlock(&var->graph_lock);
      return false;
    }
  }
  if (!e && (r = be->api.cuGraphLaunch(var->graph, stream)) != CUDA_SUCCESS) e = cu_error(be, r, "cuGraphLaunch");
  if (!e && (r = be->api.cuEventRecord(var->graph_done, stream)) != CUDA_SUCCESS) e = cu_error(be, r, "cuEventRecord");
  if (!e) var->graph_stream = stream;
  pthread_mutex_unlock(&var->graph_lock);
  *err = e;
  return true;
}

static alloy_error *cuda_execute(alloy_backend *be, alloy_executable *exe, const alloy_execute_args *args) {
  alloy_error *e = use_device(be, exe->device);
  if (e) return e;
  cuda_device *d = &be->devs[exe->device];
  CUstream stream = args->queue ? args->queue->stream : d->queue;
  cuda_variant *var;
  if ((e = variant_for(be, exe, args, &var))) return e;
  const cuda_plan *p = &var->plan;
  CUdeviceptr *ptr = calloc((size_t)p->nbases + 1, sizeof *ptr);
  if (!ptr) return be->host->error_new(ALLOY_ERR_OUT_OF_MEMORY, GPU_NAME ": out of memory");
  for (int i = 0; i < p->nbases && !e; i++) {
    const cuda_base *b = &p->bases[i];
    const alloy_tensor *t = b->kind == BASE_INPUT    ? &args->inputs[b->index]
                            : b->kind == BASE_OUTPUT ? &args->outputs[b->index]
                                                     : NULL;
    if (!t) continue; /* a temporary: placed below */
    if (!t->buffer && b->kind == BASE_OUTPUT) {
      /* An output that comes without memory (the host gives an empty one
       * none) gets its own: every size is known here. */
      e = output_allocate(be, exe, &args->outputs[b->index], b->index);
      if (!e) ptr[i] = args->outputs[b->index].buffer->ptr;
    } else if (t->buffer) {
      ptr[i] = t->buffer->ptr + t->offset;
    } /* else an empty input: nothing reads it */
  }
  bool tracing = be->host->trace_enabled && be->host->trace_enabled();
  bool issued = false;
  if (!e && !tracing && !be->no_graphs && p->nlaunches > 1) issued = steps_graphed(be, d, var, ptr, stream, &e);
  if (!e && !issued) {
    CUdeviceptr scratch = 0;
    uint64_t scratch_bytes = p->scratch_bytes + var->workspace;
    CUresult r = CUDA_SUCCESS;
    if (scratch_bytes && (r = be->api.cuMemAllocAsync(&scratch, scratch_bytes, stream)) != CUDA_SUCCESS)
      e = cu_error(be, r, "cuMemAllocAsync");
    for (int i = 0; i < p->nbases && !e; i++)
      if (p->bases[i].kind == BASE_TEMP) ptr[i] = scratch + p->bases[i].offset;
    if (!e && tracing) e = steps_traced(be, d, var, ptr, scratch, stream);
    for (int i = 0; i < p->nlaunches && !e && !tracing; i++) e = step_issue(be, d, var, i, ptr, scratch, stream);
    if (scratch) be->api.cuMemFreeAsync(scratch, stream);
  }
  free(ptr);
  if (e) return e;
  if (!args->queue && args->done) *args->done = NULL;
  return work_done(be, exe->device, args->queue, stream, args->done);
}

/* ---- memory --------------------------------------------------------------------*/

static alloy_error *cuda_buffer_allocate(alloy_backend *be, int device, uint64_t bytes, alloy_buffer **out) {
  alloy_error *e = use_device(be, device);
  if (e) return e;
  alloy_buffer *b = calloc(1, sizeof *b);
  if (!b) return be->host->error_new(ALLOY_ERR_OUT_OF_MEMORY, GPU_NAME ": out of memory");
  CUresult r = be->api.cuMemAlloc(&b->ptr, bytes ? bytes : 1);
  if (r != CUDA_SUCCESS) {
    free(b);
    return cu_error(be, r, "cuMemAlloc");
  }
  b->bytes = bytes;
  b->device = device;
  *out = b;
  return NULL;
}

static void cuda_buffer_release(alloy_backend *be, alloy_buffer *b) {
  if (!b) return;
  if (!b->imported && use_device(be, b->device) == NULL) be->api.cuMemFree(b->ptr);
  free(b);
}

static void *cuda_buffer_host_pointer(alloy_backend *be, alloy_buffer *b) {
  (void)be, (void)b;
  return NULL; /* device memory: the host uses the copies */
}

static alloy_error *bounds(alloy_backend *be, const alloy_buffer *b, uint64_t offset, uint64_t bytes) {
  if (offset > b->bytes || bytes > b->bytes - offset)
    return be->host->error_new(ALLOY_ERR_INVALID_ARGUMENT, GPU_NAME ": a copy passes the end of its buffer");
  return NULL;
}

static alloy_error *cuda_copy_from_host(alloy_backend *be, alloy_buffer *dst, uint64_t offset, const void *src,
                                        uint64_t bytes, alloy_queue *q, alloy_event **done) {
  alloy_error *e = use_device(be, dst->device);
  if (!e) e = bounds(be, dst, offset, bytes);
  if (e) return e;
  CUstream s = q ? q->stream : be->devs[dst->device].copies;
  if (bytes) CU(be, cuMemcpyHtoDAsync(dst->ptr + offset, src, bytes, s));
  return work_done(be, dst->device, q, s, done);
}

static alloy_error *cuda_copy_to_host(alloy_backend *be, void *dst, alloy_buffer *src, uint64_t offset,
                                      uint64_t bytes, alloy_queue *q, alloy_event **done) {
  alloy_error *e = use_device(be, src->device);
  if (!e) e = bounds(be, src, offset, bytes);
  if (e) return e;
  CUstream s = q ? q->stream : be->devs[src->device].copies;
  if (bytes) CU(be, cuMemcpyDtoHAsync(dst, src->ptr + offset, bytes, s));
  return work_done(be, src->device, q, s, done);
}

static alloy_error *cuda_copy(alloy_backend *be, alloy_buffer *dst, uint64_t dst_offset, alloy_buffer *src,
                              uint64_t src_offset, uint64_t bytes, alloy_queue *q, alloy_event **done) {
  alloy_error *e = use_device(be, dst->device);
  if (!e) e = bounds(be, dst, dst_offset, bytes);
  if (!e) e = bounds(be, src, src_offset, bytes);
  if (e) return e;
  CUstream s = q ? q->stream : be->devs[dst->device].copies;
  if (bytes) CU(be, cuMemcpyDtoDAsync(dst->ptr + dst_offset, src->ptr + src_offset, bytes, s));
  return work_done(be, dst->device, q, s, done);
}

static alloy_error *cuda_host_buffer_allocate(alloy_backend *be, uint64_t bytes, void **out) {
  alloy_error *e = use_device(be, 0);
  if (e) return e;
  CU(be, cuMemAllocHost(out, bytes ? bytes : 1));
  return NULL;
}

static void cuda_host_buffer_release(alloy_backend *be, void *p) {
  if (p && use_device(be, 0) == NULL) be->api.cuMemFreeHost(p);
}

static alloy_error *cuda_buffer_import(alloy_backend *be, int device, void *device_pointer, uint64_t bytes,
                                       const alloy_ext *ext, alloy_buffer **out) {
  (void)ext;
  alloy_error *e = use_device(be, device);
  if (e) return e;
  alloy_buffer *b = calloc(1, sizeof *b);
  if (!b) return be->host->error_new(ALLOY_ERR_OUT_OF_MEMORY, GPU_NAME ": out of memory");
  *b = (alloy_buffer){.ptr = (CUdeviceptr)(uintptr_t)device_pointer, .bytes = bytes, .device = device,
                      .imported = true};
  *out = b;
  return NULL;
}

/* ---- queues and events -------------------------------------------------------*/

static alloy_error *cuda_queue_create(alloy_backend *be, int device, alloy_queue **out) {
  alloy_error *e = use_device(be, device);
  if (e) return e;
  alloy_queue *q = calloc(1, sizeof *q);
  if (!q) return be->host->error_new(ALLOY_ERR_OUT_OF_MEMORY, GPU_NAME ": out of memory");
  CUresult r = be->api.cuStreamCreate(&q->stream, CU_STREAM_NON_BLOCKING);
  if (r != CUDA_SUCCESS) {
    free(q);
    return cu_error(be, r, "cuStreamCreate");
  }
  q->device = device;
  *out = q;
  return NULL;
}

/* The caller's stream as a queue: the first stream extension of ours in
 * the chain. */
static alloy_error *cuda_queue_import(alloy_backend *be, int device, const alloy_ext *ext, alloy_queue **out) {
  alloy_error *e = use_device(be, device);
  if (e) return e;
  while (ext && !(ext->type == GPU_EXT_STREAM && ext->struct_size >= ALLOY_EXT_STREAM_STRUCT_SIZE)) ext = ext->next;
  if (!ext)
    return be->host->error_new(ALLOY_ERR_INVALID_ARGUMENT, GPU_NAME ": queue_import: the extension chain names "
                               "no " GPU_DEVICE_KIND " stream (alloy_ext_stream)");
  alloy_queue *q = calloc(1, sizeof *q);
  if (!q) return be->host->error_new(ALLOY_ERR_OUT_OF_MEMORY, GPU_NAME ": out of memory");
  *q = (alloy_queue){.stream = (CUstream)((const alloy_ext_stream *)(const void *)ext)->stream, .device = device,
                     .imported = true};
  *out = q;
  return NULL;
}

static void cuda_queue_release(alloy_backend *be, alloy_queue *q) {
  if (!q) return;
  if (!q->imported && use_device(be, q->device) == NULL) {
    be->api.cuStreamSynchronize(q->stream);
    be->api.cuStreamDestroy(q->stream);
  }
  free(q);
}

static alloy_error *cuda_event_wait(alloy_backend *be, alloy_event *ev) {
  alloy_error *e = use_device(be, ev->device);
  if (e) return e;
  CU(be, cuEventSynchronize(ev->ev));
  return NULL;
}

static int cuda_event_query(alloy_backend *be, alloy_event *ev) {
  if (use_device(be, ev->device)) return 1;
  return be->api.cuEventQuery(ev->ev) != CUDA_ERROR_NOT_READY;
}

static void cuda_event_release(alloy_backend *be, alloy_event *ev) {
  if (!ev) return;
  if (use_device(be, ev->device) == NULL) be->api.cuEventDestroy(ev->ev);
  free(ev);
}

static alloy_error *cuda_event_record(alloy_backend *be, alloy_queue *q, alloy_event **out) {
  alloy_error *e = use_device(be, q->device);
  if (e) return e;
  return work_done(be, q->device, q, q->stream, out);
}

static alloy_error *cuda_queue_wait_event(alloy_backend *be, alloy_queue *q, alloy_event *ev) {
  alloy_error *e = use_device(be, q->device);
  if (e) return e;
  CU(be, cuStreamWaitEvent(q->stream, ev->ev, 0));
  return NULL;
}

/* ---- options ------------------------------------------------------------------*/

/* The options, each 0 or 1:
 *   channels_last  1 (the default): 4-d convolutions' results, and what is
 *               computed from them pointwise or by pooling, are laid out
 *               N, H, W, C in memory (as Inductor's layout optimization
 *               does): cuDNN's tensor-core engines then need no
 *               transposes; 0: N, C, H, W;
 *   allow_tf32  float32 matrix products on TF32 tensor cores (as
 *               torch.backends.cuda.matmul.allow_tf32; off by default, as there);
 *   cudnn_allow_tf32  float32 convolutions on TF32 tensor cores (as
 *               torch.backends.cudnn.allow_tf32, which PyTorch turns on by
 *               default; off here, so that float32 agrees with the
 *               reference backend; allow_tf32=1 turns it on too);
 *   graphs      each partition's steps replayed as a CUDA graph (on by default);
 *   cudnn_benchmark  each convolution's engine the fastest of cuDNN's first
 *               four, timed at compile (as torch.backends.cudnn.benchmark,
 *               and off by default as there: the engine, and so the rounding
 *               of edge cases, then depends on timings; on an H100 it gained
 *               0-9% on resnet50 and squeezenet1_1, bench/results);
 *   gemm_benchmark  each product's algorithm the fastest of the cuBLASLt
 *               heuristic's first eight, timed at compile;
 *   vendor_libs  1 (the default): products through cuBLASLt and
 *               convolutions through cuDNN; the HIP build's through
 *               hipBLASLt and MIOpen where the machine has them, and each
 *               kind whose library is missing on Alloy's own kernels. 0:
 *               Alloy's own tiled kernels for every product and
 *               convolution, generated into the plan's module
 *               (cuda_codegen_gemm.c), in both builds.
 * In the HIP build allow_tf32 leaves products exact (hipBLASLt's xf32 is
 * not used) and lets MIOpen take FFT and Winograd solutions for float32
 * convolutions, as cudnn_allow_tf32 does; the benchmark options time
 * hipBLASLt's algorithms and MIOpen's solutions as they time NVIDIA's. */
static alloy_error *cuda_backend_set_option(alloy_backend *be, const char *key, const char *value) {
  bool *flag = !strcmp(key, "allow_tf32")         ? &be->allow_tf32
               : !strcmp(key, "cudnn_allow_tf32") ? &be->cudnn_tf32
               : !strcmp(key, "graphs")           ? &be->no_graphs
               : !strcmp(key, "channels_last")    ? &be->row_major
               : !strcmp(key, "cudnn_benchmark")  ? &be->conv_tuning
               : !strcmp(key, "gemm_benchmark")   ? &be->gemm_tuning
               : !strcmp(key, "vendor_libs")      ? &be->vendor_libs
                                                  : NULL;
  if (!flag) {
    char msg[224];
    snprintf(msg, sizeof msg, GPU_NAME ": no option '%s' (the options: allow_tf32, cudnn_allow_tf32, cudnn_benchmark, "
             "channels_last, gemm_benchmark, graphs, vendor_libs)", key);
    return be->host->error_new(ALLOY_ERR_NOT_FOUND, msg);
  }
  if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0) {
    char msg[160];
    snprintf(msg, sizeof msg, GPU_NAME ": option %s takes 0 or 1, not '%.40s'", key, value);
    return be->host->error_new(ALLOY_ERR_INVALID_ARGUMENT, msg);
  }
  *flag = (value[0] == '1') != (flag == &be->no_graphs || flag == &be->row_major); /* stored negated */
  return NULL;
}

/* ---- the table ------------------------------------------------------------------*/

static const alloy_plugin_api cuda_plugin = {
    .struct_size = ALLOY_PLUGIN_API_STRUCT_SIZE,
    .abi_major = ALLOY_ABI_MAJOR,
    .abi_minor = ALLOY_ABI_MINOR,
    .name = GPU_NAME,
    .vendor = "Alloy",
    .version = "0.1.0",
    .backend_open = cuda_backend_open,
    .backend_close = cuda_backend_close,
    .device_count = cuda_device_count,
    .device_info = cuda_device_info,
    .claim = cuda_claim,
    .compile = cuda_compile,
    .execute = cuda_execute,
    .executable_release = cuda_executable_release,
    .buffer_allocate = cuda_buffer_allocate,
    .buffer_release = cuda_buffer_release,
    .buffer_host_pointer = cuda_buffer_host_pointer,
    .buffer_copy_from_host = cuda_copy_from_host,
    .buffer_copy_to_host = cuda_copy_to_host,
    .buffer_copy = cuda_copy,
    .queue_create = cuda_queue_create,
    .queue_release = cuda_queue_release,
    .event_wait = cuda_event_wait,
    .event_query = cuda_event_query,
    .event_release = cuda_event_release,
    .capabilities = 0,
    .event_record = cuda_event_record,
    .queue_wait_event = cuda_queue_wait_event,
    .host_buffer_allocate = cuda_host_buffer_allocate,
    .host_buffer_release = cuda_host_buffer_release,
    .buffer_import = cuda_buffer_import,
    .backend_set_option = cuda_backend_set_option,
    .queue_import = cuda_queue_import,
    .executable_serialize = cuda_executable_serialize,
    .executable_deserialize = cuda_executable_deserialize,
};

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(const alloy_host_api *host);
ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(const alloy_host_api *host) {
  if (host->abi_major != ALLOY_ABI_MAJOR) {
    char msg[128];
    snprintf(msg, sizeof msg, GPU_NAME ": built for ABI %d.x, the host has %u.x", ALLOY_ABI_MAJOR, host->abi_major);
    host->log(ALLOY_LOG_ERROR, GPU_NAME, msg);
    return NULL;
  }
  return &cuda_plugin;
}
