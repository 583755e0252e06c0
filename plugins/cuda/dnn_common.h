/*
 * plugins/cuda/dnn_common.h: what the two convolution libraries' files
 * behind cuda_dnn.h share, cuda_dnn.c (cuDNN, the CUDA build) and
 * miopen_dnn.c (MIOpen, the HIP build). dnn_common.c holds it, compiled
 * into both plugins: cuda_dnn.h's entries but cuda_conv_describe (opening
 * and closing around the library's own steps, the checks of a desc and of
 * a run's pointers, the list of plans alive with their reference counts,
 * so that equal descriptors share one plan, and the library's one lock),
 * and for tuning, the candidates' scratch operands and their timing with
 * events. It calls neither library: what differs comes in through the
 * build's dnn_library (the hooks below), which the library's file defines.
 * Internal to the two plugins.
 *
 * Layout: each file's struct cuda_dnn begins with a dnn_base, and its
 * struct cuda_conv with a dnn_plan (the first members, which the files
 * assert), so that dnn_common.c converts the one pointer to the other
 * (C11 6.7.2.1: a pointer to a struct is a pointer to its first member).
 *
 * Threads are cuda_dnn.h's: planning, running and freeing take the base's
 * lock; opening and closing run alone.
 */
#ifndef ALLOY_DNN_COMMON_H
#define ALLOY_DNN_COMMON_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plugins/cuda/cuda_dnn.h"

typedef struct dnn_base dnn_base;

/* The library-independent head of a plan, the first member of each
 * file's struct cuda_conv. */
typedef struct dnn_plan {
  struct dnn_plan *next;  /* in owner's list; read and written under owner->lock */
  dnn_base *owner;        /* the library it was planned by, which outlives it */
  int refs;               /* references handed out by cuda_conv_plan; under owner->lock */
  cuda_conv_desc desc;    /* in: what it was planned for (a copy) */
  uint64_t max_workspace; /* in: the workspace bound it was planned within */
  uint64_t workspace;     /* out (the build hook's): bytes of workspace a run needs */
  bool fused;             /* out (the build hook's): the plan adds the bias itself */
} dnn_plan;

/* The library-independent head of a library, the first member of each
 * file's struct cuda_dnn. */
struct dnn_base {
  void *lib;            /* its dlopen handle: opened by the open hook, closed by the close hook */
  size_t version;       /* set by the open hook: cuda_dnn_version's */
  char path[512];       /* the file the library was loaded from: cuda_dnn_path's */
  pthread_mutex_t lock; /* the plan list and every plan's refs and, while a plan runs, the
                           library's handle (its stream, then the call that reads it) */
  dnn_plan *plans;      /* every plan alive, newest first */
};

/* A run's device pointers in the order a library binds them: the run
 * hook's and the timed candidates' (dnn_timing's scratch) alike. */
enum { DNN_RUN_X, DNN_RUN_W, DNN_RUN_Y, DNN_RUN_BIAS, DNN_RUN_WORKSPACE, DNN_RUN_OPERANDS };

/* What one library does differently, its file's static table; every
 * entry but desc_wrong is required. d is the library's struct cuda_dnn,
 * plan the head of one of its struct cuda_conv. */
typedef struct dnn_hooks {
  const char *library; /* "cuDNN", "MIOpen": its name in sentences */
  const char *entry;   /* one of its entry points: the file holding it is cuda_dnn_path's */
  const char *soname;  /* cuda_dnn_path's where the loader cannot name the file */
  size_t dnn_size;     /* sizeof the file's struct cuda_dnn, allocated zeroed by cuda_dnn_open */
  size_t plan_size;    /* sizeof its struct cuda_conv, allocated zeroed for each plan */
  /* Finds and opens the library (sets the base's lib), binds it, checks its version (sets
   * the base's version) and creates its handle, the device's context current. NULL, or a
   * sentence (maybe in why, cap bytes) saying why not, after which close undoes what it
   * made (it leaves NULL what it did not make). */
  const char *(*open)(cuda_dnn *d, char *why, size_t cap);
  /* Destroys the handle and closes the library, as far as open got: after a failed open,
   * or in cuda_dnn_close once every plan is released. */
  void (*close)(cuda_dnn *d);
  /* (optional) what else the library cannot be asked, checked after dnn_common.c's own
   * checks and before any lock: a sentence (maybe in why, cap bytes), or NULL */
  const char *(*desc_wrong)(const cuda_conv_desc *desc, char *why, size_t cap);
  /* Makes the library's plan of plan->desc within plan->max_workspace, under the lock: sets
   * plan->workspace and plan->fused and returns NULL, or returns a sentence (maybe in why,
   * cap bytes), release then following. tune is cuda_conv_plan's, maybe NULL. */
  const char *(*build)(cuda_dnn *d, dnn_plan *plan, const cuda_tuning *tune, char *why, size_t cap);
  /* Releases what the library made for plan, not plan's memory (dnn_common.c frees that):
   * after a failed build, at the last cuda_conv_free, in cuda_dnn_close. No lock needed:
   * the plan is out of the list, or the library closing. */
  void (*release)(cuda_dnn *d, dnn_plan *plan);
  /* Sets the handle's stream and enqueues one run of plan on it, under the lock (so that
   * no other thread sets the stream in between); operands in DNN_RUN_ order, checked.
   * NULL, or a sentence (maybe in why, cap bytes) saying why nothing was enqueued. */
  const char *(*run)(cuda_dnn *d, const dnn_plan *plan, const CUdeviceptr *operands, CUstream stream,
                     char *why, size_t cap);
} dnn_hooks;

/* The build's library: cuda_dnn.c defines it in the CUDA build, miopen_dnn.c in the HIP
 * build (each plugin links one of them, so cuda_dnn_open needs no argument to find it);
 * constant, read by any thread. */
extern const dnn_hooks dnn_library;

/* The convolution in the caller's terms, for sentences, into buf (cap
 * bytes): "f16 x [8, 3, 224, 224] w [64, 3, 7, 7] stride [2, 2] padding
 * [3, 3] dilation [1, 1]". */
void dnn_desc_text(const cuda_conv_desc *desc, char *buf, size_t cap);

/* ---- timing candidates (cuda_tuning) ------------------------------------------ */

/* One planning call's timing: lives in the build hook's frame, made as
 * {.tune = tune}, and owns its scratch until dnn_timing_free; used under
 * the base's lock, like the handle it times. */
typedef struct dnn_timing {
  const cuda_tuning *tune;               /* in: borrowed for the call, or NULL (no timing) */
  CUdeviceptr scratch[DNN_RUN_OPERANDS]; /* zeroed device buffers; 0: not allocated (yet) */
  bool failed;                           /* an allocation failed: no more timing */
} dnn_timing;

/* Allocates the scratch operands at the first call, zeroed on
 * tune->stream: x, w and y as plan->desc spans them, the bias (y's
 * channels) when bias is true, plan->max_workspace bytes of workspace.
 * False when they cannot be had, now or at an earlier call. */
bool dnn_timing_scratch(dnn_timing *t, const dnn_plan *plan, bool bias);
/* Seconds one run of a candidate takes: run(arg, t->scratch) once to warm
 * up, then tune->runs times between two events recorded on tune->stream,
 * the mean; negative when a run fails or the events do. run enqueues one
 * run on tune->stream (the caller has set the library's handle to it) and
 * says whether it did. Waits for the second event: planning only. */
double dnn_timing_seconds(dnn_timing *t, bool (*run)(void *arg, const CUdeviceptr *operands), void *arg);
/* Frees the scratch operands (none without tune); the build hook calls it
 * before it returns. */
void dnn_timing_free(dnn_timing *t);

#endif
