/*
 * plugins/cpu/cpu_blas.h: matrix products through OpenBLAS (cpu_blas.c),
 * opened with dlopen at backend_open. Without it the backend still loads:
 * products become emitted loop nests (cpu_plan_options.blas false), and
 * the device's description says why.
 */
#ifndef ALLOY_CPU_BLAS_H
#define ALLOY_CPU_BLAS_H

#include <stddef.h>
#include <stdint.h>

#include "plugins/cpu/cpu_internal.h"

typedef struct cpu_blas {
  void *lib;
  /* cblas_sgemm of Debian's OpenBLAS (32-bit blasint; CBLAS's enums) */
  void (*sgemm)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha, const float *a, int lda,
                const float *b, int ldb, float beta, float *c, int ldc);
  /* cblas_dgemm: float64 convolutions */
  void (*dgemm)(int order, int trans_a, int trans_b, int m, int n, int k, double alpha, const double *a, int lda,
                const double *b, int ldb, double beta, double *c, int ldc);
  void (*set_num_threads)(int n);
  char *(*get_config)(void);
  char *(*get_corename)(void);
} cpu_blas;

/* NULL, or why OpenBLAS cannot be used (written into why). features: the
 * host CPU's features in LLVM's words ("+avx2,+avx512f,..."), which pick
 * OpenBLAS's kernels where its own detection does not know the CPU. */
const char *cpu_blas_open(cpu_blas *b, const char *features, char *why, size_t cap);
/* The kernels OpenBLAS runs ("SkylakeX"), or "?". */
const char *cpu_blas_core(const cpu_blas *b);
void cpu_blas_close(cpu_blas *b);
/* Whether sgemm's 32-bit dimensions hold product g. */
int cpu_blas_fits(const cpu_gemm_desc *g);
/* Rows [begin, end) of D = op(A) @ op(B), rows numbered over the batch
 * (batch * m of them), each chunk one sgemm call per batch it touches; a
 * convolution's or attention's units when g->conv or g->attn is on. ops:
 * the operands' memory, by GEMM_* (C and E read by attention only). */
void cpu_blas_rows(const cpu_blas *b, const cpu_gemm_desc *g, const float *const ops[GEMM_OPERANDS], int64_t begin,
                   int64_t end);
/* A convolution's units [begin, end) (g->conv.on; cpu_conv.c): a the
 * weights (and the bias after them), x the input, d the output. b may lack
 * sgemm: the products are then loops. */
void cpu_conv_rows(const cpu_blas *b, const cpu_gemm_desc *g, const float *a, const float *x, float *d, int64_t begin,
                   int64_t end);

/* Attention's units [begin, end) (g->attn.on; cpu_attention.c): q, k, v,
 * the mask (bool or float32, or NULL) and the output. */
void cpu_attention_rows(const cpu_blas *b, const cpu_gemm_desc *g, const float *q, const float *k, const float *v,
                        const void *mask, float *out, int64_t begin, int64_t end);

#endif
