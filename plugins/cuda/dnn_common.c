/*
 * plugins/cuda/dnn_common.c: the library-independent half of the cuda and
 * hip backends' convolutions (dnn_common.h): cuda_dnn.h's entries for both
 * builds but cuda_conv_describe (opening and closing around the library's
 * own steps, the desc checks, the shared-plan list and its reference
 * counts, a run's pointer checks, the lock), and the candidates' scratch
 * operands and event timing, which cuda_dnn.c (cuDNN) and miopen_dnn.c
 * (MIOpen) call when tuning. It calls neither library, only the build's
 * dnn_library hooks and the driver entry points of cuda_tuning (HIP's in
 * the hip build, through gpu_port.h), so it is compiled into both plugins.
 */
#include "plugins/cuda/dnn_common.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/dtype.h"
#include "plugins/cuda/cuda_api.h"

/* Each file's struct cuda_dnn begins with its dnn_base and its struct
 * cuda_conv with its dnn_plan (dnn_common.h, asserted there): the same
 * addresses, seen as the other type. */
static dnn_base *base_of(cuda_dnn *d) { return (dnn_base *)d; }
static const dnn_base *const_base_of(const cuda_dnn *d) { return (const dnn_base *)d; }
static cuda_dnn *dnn_of(dnn_base *b) { return (cuda_dnn *)b; }

/* ---- the library ------------------------------------------------------------*/

const char *cuda_dnn_open(cuda_dnn **out, char *why, size_t cap) {
  const dnn_hooks *h = &dnn_library;
  *out = NULL;
  cuda_dnn *d = calloc(1, h->dnn_size);
  if (!d) {
    snprintf(why, cap, "out of memory opening %s", h->library);
    return why;
  }
  const char *no = h->open(d, why, cap);
  if (no) {
    h->close(d);
    free(d);
    return no;
  }
  dnn_base *b = base_of(d);
  /* the file the entry point came from: the loader's search (or a
   * folder's) may have found any of several */
  Dl_info info;
  const void *entry = dlsym(b->lib, h->entry);
  snprintf(b->path, sizeof b->path, "%s",
           entry && dladdr(entry, &info) && info.dli_fname ? info.dli_fname : h->soname);
  pthread_mutex_init(&b->lock, NULL);
  *out = d;
  return NULL;
}

void cuda_dnn_close(cuda_dnn *d) {
  if (!d) return;
  dnn_base *b = base_of(d);
  /* the plans first: they hold what the library made with its handle */
  while (b->plans) {
    dnn_plan *plan = b->plans;
    b->plans = plan->next;
    dnn_library.release(d, plan);
    free(plan);
  }
  dnn_library.close(d);
  pthread_mutex_destroy(&b->lock);
  free(d);
}

size_t cuda_dnn_version(const cuda_dnn *d) { return const_base_of(d)->version; }

const char *cuda_dnn_path(const cuda_dnn *d) { return const_base_of(d)->path; }

/* ---- planning ---------------------------------------------------------------*/

/* What neither library can be asked: a sentence naming it, or NULL. */
static const char *desc_wrong(const char *library, const cuda_conv_desc *d, char *why, size_t cap) {
  if (d->dtype != ALLOY_F32 && d->dtype != ALLOY_F16 && d->dtype != ALLOY_BF16) {
    snprintf(why, cap, "%s convolutions take float32, float16 or bfloat16, not %s", library,
             alloy_dtype_name(d->dtype));
    return why;
  }
  if (d->rank != 4 && d->rank != 5) {
    snprintf(why, cap, "%s convolutions here are of rank 4 or 5, not %d", library, d->rank);
    return why;
  }
  if (d->w_sizes[1] < 1 || d->x_sizes[1] % d->w_sizes[1] != 0) {
    snprintf(why, cap, "x's %lld channels are not a multiple of w's %lld", (long long)d->x_sizes[1],
             (long long)d->w_sizes[1]);
    return why;
  }
  for (int k = 0; k < d->rank; k++)
    if (d->x_sizes[k] < 1 || d->w_sizes[k] < 1 || d->y_sizes[k] < 1) {
      snprintf(why, cap, "%s takes no empty convolution", library);
      return why;
    }
  return NULL;
}

/* Whether two checked descriptors ask for the same convolution: only the
 * ranks' worth of each array counts (the rest is not the caller's). */
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

const char *cuda_conv_plan(cuda_dnn *d, const cuda_conv_desc *desc, uint64_t max_workspace,
                           const cuda_tuning *tune, cuda_conv **out, uint64_t *workspace, bool *fused,
                           char *why, size_t cap) {
  const dnn_hooks *h = &dnn_library;
  dnn_base *b = base_of(d);
  *out = NULL;
  *workspace = 0;
  *fused = false;
  const char *wrong = desc_wrong(h->library, desc, why, cap);
  if (!wrong && h->desc_wrong) wrong = h->desc_wrong(desc, why, cap);
  if (wrong) return wrong;
  /* the build runs under the lock too: two threads planning one shape
   * build it once, the second then shares it */
  pthread_mutex_lock(&b->lock);
  dnn_plan *plan = b->plans;
  while (plan && !(plan->max_workspace == max_workspace && same_desc(&plan->desc, desc))) plan = plan->next;
  if (plan) {
    plan->refs++;
  } else {
    if (!(plan = calloc(1, h->plan_size))) {
      pthread_mutex_unlock(&b->lock);
      snprintf(why, cap, "out of memory planning a %s convolution", h->library);
      return why;
    }
    plan->owner = b, plan->refs = 1, plan->desc = *desc, plan->max_workspace = max_workspace;
    const char *no = h->build(d, plan, tune, why, cap);
    if (no) {
      h->release(d, plan);
      free(plan);
      pthread_mutex_unlock(&b->lock);
      return no;
    }
    plan->next = b->plans;
    b->plans = plan;
  }
  pthread_mutex_unlock(&b->lock);
  /* what a plan in the list says of itself stays as built: read unlocked */
  *out = (cuda_conv *)plan, *workspace = plan->workspace, *fused = plan->fused;
  return NULL;
}

void cuda_conv_free(cuda_conv *c) {
  if (!c) return;
  dnn_plan *plan = (dnn_plan *)c; /* its head */
  dnn_base *b = plan->owner;
  pthread_mutex_lock(&b->lock);
  bool last = --plan->refs == 0;
  if (last)
    for (dnn_plan **at = &b->plans; *at; at = &(*at)->next)
      if (*at == plan) {
        *at = plan->next;
        break;
      }
  pthread_mutex_unlock(&b->lock);
  /* out of the list and unreferenced: no other thread can reach it */
  if (last) {
    dnn_library.release(dnn_of(b), plan);
    free(plan);
  }
}

void dnn_desc_text(const cuda_conv_desc *desc, char *buf, size_t cap) {
  size_t len = (size_t)snprintf(buf, cap, "%s", alloy_dtype_short_name(desc->dtype));
  const struct {
    const char *name;
    const int64_t *v;
    int n;
  } parts[] = {
      {"x", desc->x_sizes, desc->rank},
      {"w", desc->w_sizes, desc->rank},
      {"stride", desc->stride, desc->rank - 2},
      {"padding", desc->padding, desc->rank - 2},
      {"dilation", desc->dilation, desc->rank - 2},
  };
  for (size_t i = 0; i < sizeof parts / sizeof *parts && len < cap; i++) {
    len += (size_t)snprintf(buf + len, cap - len, " %s [", parts[i].name);
    for (int k = 0; k < parts[i].n && len < cap; k++)
      len += (size_t)snprintf(buf + len, cap - len, k ? ", %lld" : "%lld", (long long)parts[i].v[k]);
    if (len < cap) len += (size_t)snprintf(buf + len, cap - len, "]");
  }
}

/* ---- running -------------------------------------------------------------------*/

static bool pointer_ok(const char *library, CUdeviceptr ptr, const char *name, char *why, size_t cap) {
  if (ptr == 0) {
    snprintf(why, cap, "the %s convolution's %s is a null pointer", library, name);
    return false;
  }
  if (ptr % CUDA_DNN_ALIGNMENT) {
    snprintf(why, cap, "the %s convolution's %s at 0x%llx is not %d-byte aligned", library, name,
             (unsigned long long)ptr, CUDA_DNN_ALIGNMENT);
    return false;
  }
  return true;
}

/* Checks a run's operands against its plan before anything is enqueued:
 * NULL, or a sentence in why. */
static const char *run_wrong(const dnn_plan *plan, const CUdeviceptr *ops, uint64_t workspace_bytes,
                             char *why, size_t cap) {
  const char *lib = dnn_library.library;
  bool ok = pointer_ok(lib, ops[DNN_RUN_X], "x", why, cap) &&
            pointer_ok(lib, ops[DNN_RUN_W], "w", why, cap) &&
            pointer_ok(lib, ops[DNN_RUN_Y], "y", why, cap);
  if (ok && plan->fused) ok = pointer_ok(lib, ops[DNN_RUN_BIAS], "bias", why, cap);
  if (ok && plan->workspace) ok = pointer_ok(lib, ops[DNN_RUN_WORKSPACE], "workspace", why, cap);
  if (!ok) return why;
  if (workspace_bytes < plan->workspace) {
    snprintf(why, cap, "the %s convolution needs %llu bytes of workspace, given %llu", lib,
             (unsigned long long)plan->workspace, (unsigned long long)workspace_bytes);
    return why;
  }
  return NULL;
}

const char *cuda_conv_run(cuda_dnn *d, const cuda_conv *c, CUdeviceptr x, CUdeviceptr w, CUdeviceptr bias,
                          CUdeviceptr y, CUdeviceptr workspace, uint64_t workspace_bytes, CUstream stream,
                          char *why, size_t cap) {
  const dnn_plan *plan = (const dnn_plan *)c; /* its head */
  const CUdeviceptr ops[DNN_RUN_OPERANDS] = {
      [DNN_RUN_X] = x, [DNN_RUN_W] = w, [DNN_RUN_Y] = y, [DNN_RUN_BIAS] = bias,
      [DNN_RUN_WORKSPACE] = workspace,
  };
  const char *wrong = run_wrong(plan, ops, workspace_bytes, why, cap);
  if (wrong) return wrong;
  dnn_base *b = base_of(d);
  /* one handle: its stream and the call that reads it, together */
  pthread_mutex_lock(&b->lock);
  const char *no = dnn_library.run(d, plan, ops, stream, why, cap);
  pthread_mutex_unlock(&b->lock);
  return no;
}

/* ---- timing candidates ----------------------------------------------------------*/

/* The bytes a tensor of these sizes and strides spans. */
static uint64_t span_bytes(const int64_t *sizes, const int64_t *strides, int rank, alloy_dtype t) {
  int64_t last = 0;
  for (int i = 0; i < rank; i++) {
    if (sizes[i] == 0) return 0;
    last += (sizes[i] - 1) * strides[i];
  }
  return (uint64_t)(last + 1) * alloy_dtype_size(t);
}

bool dnn_timing_scratch(dnn_timing *t, const dnn_plan *plan, bool bias) {
  if (t->failed) return false;
  if (t->scratch[DNN_RUN_X]) return true;
  const cuda_api *api = t->tune->api;
  const cuda_conv_desc *c = &plan->desc;
  const uint64_t bytes[DNN_RUN_OPERANDS] = {
      [DNN_RUN_X] = span_bytes(c->x_sizes, c->x_strides, c->rank, c->dtype),
      [DNN_RUN_W] = span_bytes(c->w_sizes, c->w_strides, c->rank, c->dtype),
      [DNN_RUN_Y] = span_bytes(c->y_sizes, c->y_strides, c->rank, c->dtype),
      [DNN_RUN_BIAS] = (uint64_t)c->y_sizes[1] * alloy_dtype_size(c->dtype),
      [DNN_RUN_WORKSPACE] = plan->max_workspace,
  };
  /* zeros: whatever the memory held could be NaNs or denormals, which
   * some candidates run slower on; 16 bytes where there are none (a
   * workspace bound of 0), as the allocator refuses 0 */
  for (int i = 0; i < DNN_RUN_OPERANDS && !t->failed; i++)
    if (i != DNN_RUN_BIAS || bias)
      t->failed = api->cuMemAlloc(&t->scratch[i], bytes[i] ? bytes[i] : 16) != CUDA_SUCCESS ||
                  api->cuMemsetD8Async(t->scratch[i], 0, bytes[i], t->tune->stream) != CUDA_SUCCESS;
  return !t->failed;
}

double dnn_timing_seconds(dnn_timing *t, bool (*run)(void *arg, const CUdeviceptr *operands), void *arg) {
  const cuda_tuning *tune = t->tune;
  const cuda_api *api = tune->api;
  /* the first run apart: it may load or compile what the timed ones reuse */
  if (!run(arg, t->scratch)) return -1;
  CUevent e0 = NULL, e1 = NULL;
  double secs = -1;
  if (api->cuEventCreate(&e0, CU_EVENT_DEFAULT) == CUDA_SUCCESS &&
      api->cuEventCreate(&e1, CU_EVENT_DEFAULT) == CUDA_SUCCESS &&
      api->cuEventRecord(e0, tune->stream) == CUDA_SUCCESS) {
    bool ok = true;
    for (int r = 0; r < tune->runs && ok; r++) ok = run(arg, t->scratch);
    float ms = 0;
    if (ok && api->cuEventRecord(e1, tune->stream) == CUDA_SUCCESS &&
        api->cuEventSynchronize(e1) == CUDA_SUCCESS && api->cuEventElapsedTime(&ms, e0, e1) == CUDA_SUCCESS)
      secs = ms * 1e-3 / (tune->runs > 0 ? tune->runs : 1);
  }
  if (e0) api->cuEventDestroy(e0);
  if (e1) api->cuEventDestroy(e1);
  return secs;
}

void dnn_timing_free(dnn_timing *t) {
  for (int i = 0; i < DNN_RUN_OPERANDS; i++)
    if (t->scratch[i]) t->tune->api->cuMemFree(t->scratch[i]), t->scratch[i] = 0;
}
