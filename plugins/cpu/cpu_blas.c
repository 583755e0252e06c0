/*
 * plugins/cpu/cpu_blas.c: matrix products through OpenBLAS's cblas_sgemm.
 *
 * Why OpenBLAS and not blocked microkernels of our own: its sgemm is
 * written per CPU generation (AVX2, AVX-512) with packing and cache
 * blocking that an emitted loop nest does not reach: on this machine 512^3
 * runs at many times the emitted loop's GFLOP/s (docs/backends/cpu.md has
 * the numbers). Why dlopen and not a link: the plugin then loads (and
 * runs products as emitted loops) on a machine without OpenBLAS instead of
 * being refused, and its only link dependency stays LLVM.
 *
 * OpenBLAS picks its kernels by the CPU's model (DYNAMIC_ARCH); a model it
 * does not know (a virtual machine's "Intel Xeon Processor") gets its
 * oldest x86-64 kernels, Prescott's SSE3, at a third of the speed: on this
 * machine 512^3 ran at 31.5 GFLOP/s against 110 with the AVX-512 ones.
 * Unless OPENBLAS_CORETYPE is set already, the backend sets it from the
 * features LLVM detected (AVX-512: SkylakeX, Cooperlake with bfloat16
 * dot products; AVX2 and FMA: Haswell) before OpenBLAS loads.
 *
 * OpenBLAS's own threads are set to one: the backend splits a product's
 * rows over its own pool (cpu_pool.c), one sgemm per chunk, so that two
 * pools never fight over the cores (OpenBLAS's threads spin after a call,
 * which slows the pointwise loops that follow on a small machine).
 */
#include "plugins/cpu/cpu_blas.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 };

static const char *const names[] = {"libopenblas.so.0", "libopenblas.so", "libopenblasp.so.0"};

static bool has_feature(const char *features, const char *name) {
  size_t len = strlen(name);
  for (const char *p = features; (p = strstr(p, name)); p += len)
    if (p > features && p[-1] == '+' && (p[len] == ',' || p[len] == 0)) return true;
  return false;
}

/* OpenBLAS's kernels for features, or NULL to let it detect them. */
static const char *core_for(const char *f) {
  if (has_feature(f, "avx512f") && has_feature(f, "avx512bw") && has_feature(f, "avx512vl") &&
      has_feature(f, "avx512dq"))
    return has_feature(f, "avx512bf16") ? "Cooperlake" : "SkylakeX";
  if (has_feature(f, "avx2") && has_feature(f, "fma")) return "Haswell";
  return NULL;
}

const char *cpu_blas_open(cpu_blas *b, const char *features, char *why, size_t cap) {
  memset(b, 0, sizeof *b);
  const char *core = features ? core_for(features) : NULL;
  if (core && !getenv("OPENBLAS_CORETYPE")) setenv("OPENBLAS_CORETYPE", core, 0);
  for (size_t i = 0; i < sizeof names / sizeof *names && !b->lib; i++) b->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  if (!b->lib) {
    snprintf(why, cap, "OpenBLAS not found (libopenblas.so.0; Debian's libopenblas0): products run as emitted loops");
    return why;
  }
  *(void **)&b->sgemm = dlsym(b->lib, "cblas_sgemm");
  *(void **)&b->dgemm = dlsym(b->lib, "cblas_dgemm");
  *(void **)&b->set_num_threads = dlsym(b->lib, "openblas_set_num_threads");
  *(void **)&b->get_config = dlsym(b->lib, "openblas_get_config");
  *(void **)&b->get_corename = dlsym(b->lib, "openblas_get_corename");
  if (!b->sgemm) {
    snprintf(why, cap, "OpenBLAS has no cblas_sgemm");
    cpu_blas_close(b);
    return why;
  }
  if (b->set_num_threads) b->set_num_threads(1);
  return NULL;
}

void cpu_blas_close(cpu_blas *b) {
  if (b->lib) dlclose(b->lib);
  memset(b, 0, sizeof *b);
}

const char *cpu_blas_core(const cpu_blas *b) {
  const char *c = b->get_corename ? b->get_corename() : NULL;
  return c ? c : "?";
}

int cpu_blas_fits(const cpu_gemm_desc *g) {
  int64_t lim = INT_MAX;
  return g->m <= lim && g->n <= lim && g->k <= lim && g->lda <= lim && g->ldb <= lim && g->ldd <= lim;
}

void cpu_blas_rows(const cpu_blas *b, const cpu_gemm_desc *g, const float *const ops[GEMM_OPERANDS], int64_t begin,
                   int64_t end) {
  const float *a = ops[GEMM_A], *bm = ops[GEMM_B];
  float *d = (float *)ops[GEMM_D];
  if (g->attn.on)
    return cpu_attention_rows(b, g, a, bm, ops[GEMM_C], ops[GEMM_E], d, begin, end);
  if (g->conv.on) return cpu_conv_rows(b, g, a, bm, d, begin, end);
  for (int64_t r = begin; r < end;) {
    int64_t batch = r / g->m, i0 = r % g->m, i1 = g->m;
    if (batch * g->m + i1 > end) i1 = end - batch * g->m;
    const float *ab = a + batch * g->stride_a + (g->trans_a ? i0 : i0 * g->lda);
    const float *bb = bm + batch * g->stride_b;
    float *db = d + batch * g->stride_d + i0 * g->ldd;
    int rows = (int)(i1 - i0);
    if (g->k == 0) {
      for (int i = 0; i < rows; i++) memset(db + (int64_t)i * g->ldd, 0, sizeof *db * (size_t)g->n);
    } else {
      b->sgemm(CBLAS_ROW_MAJOR, g->trans_a ? CBLAS_TRANS : CBLAS_NO_TRANS, g->trans_b ? CBLAS_TRANS : CBLAS_NO_TRANS,
               rows, (int)g->n, (int)g->k, 1.0f, ab, (int)g->lda, bb, (int)g->ldb, 0.0f, db, (int)g->ldd);
    }
    r = batch * g->m + i1;
  }
}
