/*
 * plugins/cuda/cuda_blas.h: matrix products (mm, bmm, addmm, baddbmm,
 * linear, with a bias and relu or gelu fused) through cuBLASLt, which the
 * cuda backend opens with dlopen like the driver (cuda_api.h): the plugin
 * links against no CUDA library and loads where there is none.
 *
 * Tensors are ROW-MAJOR, as PyTorch lays them out; cuda_blas.c turns each
 * product into cuBLASLt's column-major terms. A product is planned once
 * (descriptors and an algorithm from cuBLASLt's heuristic, for a workspace
 * the caller bounds) and run many times; the library allocates no device
 * memory: the caller hands in the workspace and every operand.
 *
 * Threads: cuda_blas_open and cuda_gemm_plan run with the device's context
 * current. A cuda_blas (one cuBLASLt handle) and a cuda_gemm are shared
 * read-only after they are made: cuda_gemm_run may be called from several
 * threads at once, on several streams, with the same plan (the one field it
 * sets per call, the bias pointer, is set under the plan's lock).
 *
 * Alignment: plans assume every pointer (a, bm, c, d, bias, workspace) is
 * 16-byte aligned, as PyTorch's allocator gives (cuMemAlloc gives 256);
 * cuda_gemm_run refuses a less aligned one with a sentence, so that the
 * caller can fall back to its own kernel.
 */
#ifndef ALLOY_CUDA_BLAS_H
#define ALLOY_CUDA_BLAS_H

#include "plugins/cuda/gpu_port.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloy/dtype.h"
#include "plugins/cuda/cuda_api.h"
#include "plugins/cuda/cuda_internal.h"

/* The pointer alignment (bytes) every plan assumes of its operands. */
#define CUDA_BLAS_ALIGNMENT 16

/* The cuBLASLt library and one handle; made by cuda_blas_open, owned by the
 * caller, freed by cuda_blas_close after every plan made from it. */
typedef struct cuda_blas cuda_blas;

/* Opens libcublasLt (libcublasLt.so.13, .so.12, .so, or under $CUDA_HOME/lib64,
 * default /usr/local/cuda) and creates a handle with the device's context
 * current. Returns NULL and sets *out, or a sentence saying why not (library
 * missing, a symbol missing, cublasLtCreate failed), which may point into why
 * (cap bytes); then *out is NULL and nothing stays open. */
const char *cuda_blas_open(cuda_blas **out, char *why, size_t cap);
/* Destroys the handle and closes the library; b may be NULL. */
void cuda_blas_close(cuda_blas *b);
/* cublasLtGetVersion() of the library opened, e.g. 130100 for 13.1.0. */
size_t cuda_blas_version(const cuda_blas *b);

/* cuda_gemm_desc, the product a plan asks for, is in cuda_internal.h. */

/* A planned product: descriptors and the algorithm chosen; made by
 * cuda_gemm_plan, owned by the caller, freed by cuda_gemm_free before the
 * cuda_blas it was made from is closed. */
typedef struct cuda_gemm cuda_gemm;

/* Checks desc, builds cuBLASLt's descriptors and picks two algorithms for
 * a workspace of at most max_workspace bytes (32 MiB is what PyTorch gives
 * Hopper): one for pointers aligned as desc->align expects (the heuristic's
 * first, or with tune the fastest of its first tune->candidates, at most
 * 8), and the heuristic's first for any 16-byte aligned pointers, which a
 * run whose pointers fall short takes. *workspace gets the bytes the
 * hungrier needs (often 0). Returns NULL and sets *out, or a sentence
 * (maybe in why, cap bytes) saying why not: a dtype or shape outside the
 * above, or cuBLASLt has no algorithm for it. tune may be NULL: then it
 * calls no kernel and allocates no device memory; else see cuda_tuning
 * (cuda_api.h; the device's context current). */
const char *cuda_gemm_plan(cuda_blas *b, const cuda_gemm_desc *desc, uint64_t max_workspace,
                           const cuda_tuning *tune, cuda_gemm **out, uint64_t *workspace, char *why,
                           size_t cap);
/* How many algorithms were timed to choose g's (0: the heuristic's first). */
int cuda_gemm_tuned(const cuda_gemm *g);

/* Enqueues the product on stream (any stream of the context current on the
 * calling thread). c may be 0 when !has_c, bias 0 when !bias; workspace holds
 * workspace_bytes >= what the plan said (0 if it said 0). The operands must
 * stay allocated until the stream reaches the product. Returns NULL, or a
 * sentence (maybe in why, cap bytes) saying why nothing was enqueued. */
const char *cuda_gemm_run(cuda_blas *b, const cuda_gemm *g, CUdeviceptr a, CUdeviceptr bm,
                          CUdeviceptr c, CUdeviceptr d, CUdeviceptr bias, CUdeviceptr workspace,
                          uint64_t workspace_bytes, CUstream stream, char *why, size_t cap);

/* Frees the plan's descriptors and the plan; g may be NULL. */
void cuda_gemm_free(cuda_gemm *g);

#endif
