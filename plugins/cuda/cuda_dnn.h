/*
 * plugins/cuda/cuda_dnn.h: convolutions through cuDNN 9's graph (backend)
 * API, which the cuda backend opens with dlopen like the driver and
 * cuBLASLt (cuda_api.h, cuda_blas.h): the plugin links against no CUDA
 * library and loads where there is none; without cuDNN its convolutions
 * stay on the next backend, and claims say why. The HIP build implements
 * this interface with MIOpen instead (miopen_dnn.c); what follows is
 * cuda_dnn.c's cuDNN. What does not depend on the library (the entries
 * below but cuda_conv_describe, around the library's own steps: the
 * checks, the shared plans and their counts, the lock) is dnn_common.c's,
 * one file for both builds (dnn_common.h).
 *
 * Where cuDNN is looked for, first found wins: $ALLOY_CUDNN_PATH (a folder
 * holding libcudnn.so.9, or the library's own path), $CUDNN_PATH/lib (the
 * nvidia-cudnn pip wheel's package folder, as PyTorch's tooling names it),
 * the loader's path (libcudnn.so.9), then $CUDA_HOME/lib64.
 *
 * A convolution (cuda_conv_desc, cuda_internal.h) is planned once: an
 * operation graph of the convolution, and of the bias add when there is
 * one; cuDNN's heuristics (mode A, then its fallback list) rank engines,
 * and the first whose numerics are allowed and whose plan finalizes within
 * the workspace bound is kept, or, when the caller asks for tuning
 * (cuda_tuning), the fastest of the first few of them, each timed on
 * the device (as torch.backends.cudnn.benchmark). Numerics as PyTorch's (aten/src/ATen/native/
 * cudnn/Conv_v8.cpp): the convolution computes in float for every dtype;
 * engines that down-convert their inputs or reduce in less than float are
 * never taken; for float32 without allow_tf32, engines on tensor cores
 * (TF32) are not taken, nor FFT or Winograd ones (their transforms round
 * apart from a direct sum), so float32 is exact as the reference's. A bias
 * goes into the graph (conv, then a pointwise add in float) when an engine
 * takes the pair; else the plan is of the convolution alone and says so,
 * and the caller adds the bias itself.
 *
 * Plans of equal descriptors are one plan (a ResNet repeats its shapes):
 * cuda_conv_plan hands out a counted reference to it.
 *
 * Threads: cuda_dnn_open and cuda_conv_plan run with the device's context
 * current. A cuda_dnn (one cuDNN handle) and its plans are shared:
 * cuda_conv_plan and cuda_conv_free take the library's lock; cuda_conv_run
 * may be called from several threads at once, on several streams (the
 * handle's stream is set and the plan run under the same lock). A run is
 * safe to capture into a CUDA graph: it allocates nothing and does not
 * synchronize (the workspace comes from the caller).
 */
#ifndef ALLOY_CUDA_DNN_H
#define ALLOY_CUDA_DNN_H

#include "plugins/cuda/gpu_port.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plugins/cuda/cuda_api.h"
#include "plugins/cuda/cuda_internal.h"

/* The pointer alignment (bytes) every plan assumes of its tensors. */
#define CUDA_DNN_ALIGNMENT 16

/* The cuDNN library and one handle; made by cuda_dnn_open, owned by the
 * caller, freed by cuda_dnn_close after every plan made from it. */
typedef struct cuda_dnn cuda_dnn;

/* Opens libcudnn.so.9 (where the file's paragraph says) and creates a
 * handle with the device's context current. Returns NULL and sets *out,
 * or a sentence saying why not (library missing, not version 9, a symbol
 * missing, cudnnCreate failed), which may point into why (cap bytes); then
 * *out is NULL and nothing stays open. */
const char *cuda_dnn_open(cuda_dnn **out, char *why, size_t cap);
/* Destroys the handle and every plan left, and closes the library; d may
 * be NULL. */
void cuda_dnn_close(cuda_dnn *d);
/* cudnnGetVersion() of the library opened, e.g. 91900 for 9.19.0. */
size_t cuda_dnn_version(const cuda_dnn *d);
/* The file the library was opened from, for logs; lives as long as d. */
const char *cuda_dnn_path(const cuda_dnn *d);

/* A planned convolution: made by cuda_conv_plan, released by cuda_conv_free
 * before the cuda_dnn it was made from is closed. */
typedef struct cuda_conv cuda_conv;


/* Checks desc, builds cuDNN's graph and picks an engine for a workspace of
 * at most max_workspace bytes; *workspace gets the bytes it needs, *fused
 * whether the bias is added by the plan (false without a bias, or when no
 * engine fuses it: then the caller adds it after cuda_conv_run). Returns
 * NULL and sets *out, or a sentence (maybe in why, cap bytes) saying why
 * not. tune may be NULL: then it calls no kernel and allocates no device
 * memory; else see cuda_tuning (the device's context current). */
const char *cuda_conv_plan(cuda_dnn *d, const cuda_conv_desc *desc, uint64_t max_workspace,
                           const cuda_tuning *tune, cuda_conv **out, uint64_t *workspace, bool *fused,
                           char *why, size_t cap);

/* What the plan runs, for logs: "engine 12, bias fused, 1048576 bytes of
 * workspace". */
void cuda_conv_describe(const cuda_conv *c, char *buf, size_t cap);

/* Enqueues the convolution on stream (any stream of the context current on
 * the calling thread). bias is read only when the plan fused it (0
 * otherwise); workspace holds workspace_bytes >= what the plan said (0 if
 * it said 0). The tensors must stay allocated until the stream reaches the
 * convolution. Returns NULL, or a sentence (maybe in why, cap bytes) saying
 * why nothing was enqueued. */
const char *cuda_conv_run(cuda_dnn *d, const cuda_conv *c, CUdeviceptr x, CUdeviceptr w, CUdeviceptr bias,
                          CUdeviceptr y, CUdeviceptr workspace, uint64_t workspace_bytes, CUstream stream,
                          char *why, size_t cap);

/* Drops a reference to the plan, freeing it with the last; c may be NULL. */
void cuda_conv_free(cuda_conv *c);

#endif
