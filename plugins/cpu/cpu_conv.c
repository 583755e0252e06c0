/*
 * plugins/cpu/cpu_conv.c: convolutions at run time, a STEP_GEMM whose
 * cpu_gemm_desc.conv is on (the planner's side is cp_emit_conv in
 * cpu_rows.c).
 *
 * The step's rows are units of (image, group, tile of output columns),
 * which the backend's pool splits over its threads like a product's rows.
 * A unit writes the tile's columns of im2col(x) (K = Cin/groups * kh * kw
 * rows; zero where a tap falls in the padding) into a buffer of its own,
 * small enough to stay in the core's cache (at most COL_FLOATS floats),
 * multiplies the group's weights [Cout/groups, K] by it with one
 * cblas_sgemm into D's columns (D dense [N, Cout, OH * OW], NCHW), then
 * adds the bias and applies relu to the tile while it is still in cache:
 * no pass over the whole output after the product. A 1x1 convolution with
 * stride 1 and no padding reads x's plane as the matrix itself.
 *
 * Accumulation is float32 (float64 in double, with dgemm), as PyTorch's
 * CPU convolution (mkldnn) and the reference backend: OpenBLAS's kernels sum k in their own order; a small
 * convolution (conv.loop: m n k up to the planner's bound) is fused
 * multiply-add chains in k's order instead, the reference's sum, as the
 * small products of cpu_rows.c are; so is every convolution when OpenBLAS
 * did not load. The bias is added after the sum, as PyTorch and the
 * reference add it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/cpu/cpu_blas.h"

enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111 };

/* The functions of one dtype T (float, double): the tile's columns
 * [c0, c1) of im2col(x) for the group's first channel plane xg, row-major
 * [K, c1 - c0]; D = A @ B as fused multiply-add chains from 0 in k's order
 * (the reference's sum: the small convolutions, and every one without
 * OpenBLAS); the units. */
#define CONV_FUNCS(T, S, FMA, GEMM_FIELD)                                                                        \
  static void im2col_tile_##S(const cpu_conv_desc *c, const T *xg, T *col, int64_t c0, int64_t c1) {             \
    int64_t cols = c1 - c0;                                                                                      \
    T *row = col;                                                                                                \
    for (int64_t ch = 0; ch < c->cin_g; ch++) {                                                                  \
      const T *plane = xg + ch * c->x_cstride;                                                                   \
      for (int64_t ki = 0; ki < c->kh; ki++)                                                                     \
        for (int64_t kj = 0; kj < c->kw; kj++, row += cols) {                                                    \
          for (int64_t p = c0; p < c1;) {                                                                        \
            int64_t oh = p / c->ow, ow0 = p % c->ow, ow1 = c->ow;                                                \
            if (oh * c->ow + ow1 > c1) ow1 = c1 - oh * c->ow;                                                    \
            T *dst = row + (p - c0) - ow0;                                                                       \
            int64_t ih = oh * c->sh - c->ph + ki * c->dh, off = kj * c->dw - c->pw;                              \
            if (ih < 0 || ih >= c->h) {                                                                          \
              memset(dst + ow0, 0, sizeof *dst * (size_t)(ow1 - ow0));                                           \
            } else if (c->sw == 1) { /* iw = ow + off, in the row for ow in [lo, hi) */                          \
              const T *src = plane + ih * c->w + off;                                                            \
              int64_t lo = -off > ow0 ? -off : ow0, hi = c->w - off < ow1 ? c->w - off : ow1;                    \
              if (lo > ow1) lo = ow1;                                                                            \
              if (hi < lo) hi = lo;                                                                              \
              for (int64_t o = ow0; o < lo; o++) dst[o] = 0;                                                     \
              if (hi > lo) memcpy(dst + lo, src + lo, sizeof *dst * (size_t)(hi - lo));                          \
              for (int64_t o = hi; o < ow1; o++) dst[o] = 0;                                                     \
            } else {                                                                                             \
              const T *src = plane + ih * c->w;                                                                  \
              for (int64_t o = ow0; o < ow1; o++) {                                                              \
                int64_t iw = o * c->sw + off;                                                                    \
                dst[o] = iw >= 0 && iw < c->w ? src[iw] : (T)0;                                                  \
              }                                                                                                  \
            }                                                                                                    \
            p += ow1 - ow0;                                                                                      \
          }                                                                                                      \
        }                                                                                                        \
    }                                                                                                            \
  }                                                                                                              \
                                                                                                                 \
  static void loop_gemm_##S(int64_t m, int64_t n, int64_t k, const T *a, int64_t lda, const T *b, int64_t ldb,   \
                            T *d, int64_t ldd) {                                                                 \
    for (int64_t i = 0; i < m; i++) {                                                                            \
      T *dr = d + i * ldd;                                                                                       \
      for (int64_t j = 0; j < n; j++) dr[j] = 0;                                                                 \
      for (int64_t p = 0; p < k; p++) {                                                                          \
        T av = a[i * lda + p];                                                                                   \
        const T *br = b + p * ldb;                                                                               \
        for (int64_t j = 0; j < n; j++) dr[j] = FMA(av, br[j], dr[j]);                                           \
      }                                                                                                          \
    }                                                                                                            \
  }                                                                                                              \
                                                                                                                 \
  /* Without an im2col buffer: each output of the tile as fused multiply-   \
   * adds over the taps in im2col's k order (channel, row, column). */       \
  static void taps_tile_##S(const cpu_conv_desc *c, const T *w, const T *xg, T *dt, int64_t c0, int64_t c1,      \
                            int64_t npos) {                                                                      \
    for (int64_t i = 0; i < c->cout_g; i++)                                                                      \
      for (int64_t p = c0; p < c1; p++) {                                                                        \
        int64_t oh = p / c->ow, ow = p % c->ow;                                                                  \
        T acc = 0;                                                                                               \
        const T *wi = w + i * c->k;                                                                              \
        for (int64_t ch = 0; ch < c->cin_g; ch++)                                                                \
          for (int64_t ki = 0; ki < c->kh; ki++)                                                                 \
            for (int64_t kj = 0; kj < c->kw; kj++) {                                                             \
              int64_t ih = oh * c->sh - c->ph + ki * c->dh, iw = ow * c->sw - c->pw + kj * c->dw;                \
              T xv = ih >= 0 && ih < c->h && iw >= 0 && iw < c->w ? xg[ch * c->x_cstride + ih * c->w + iw] : 0;  \
              acc = FMA(wi[(ch * c->kh + ki) * c->kw + kj], xv, acc);                                            \
            }                                                                                                    \
        dt[i * npos + (p - c0)] = acc;                                                                           \
      }                                                                                                          \
  }                                                                                                              \
                                                                                                                 \
  static void conv_rows_##S(const cpu_blas *bl, const cpu_conv_desc *c, const T *a, const T *x, T *d,            \
                            int64_t begin, int64_t end) {                                                        \
    int64_t npos = c->oh * c->ow, m = c->cout_g, cout = c->cout_g * c->groups;                                   \
    const T *bias = c->bias ? a + cout * c->k : NULL;                                                            \
    T *col = NULL;                                                                                               \
    if (!c->direct) /* a few hundred kilobytes; without them each tile is summed tap by tap instead */           \
      col = malloc(sizeof *col * (size_t)(c->k * c->tile > 0 ? c->k * c->tile : 1));                             \
    for (int64_t u = begin; u < end; u++) {                                                                      \
      int64_t t = u % c->ntiles, gi = (u / c->ntiles) % c->groups, img = u / (c->ntiles * c->groups);            \
      int64_t c0 = t * c->tile, c1 = c0 + c->tile < npos ? c0 + c->tile : npos;                                  \
      if (c1 <= c0) continue;                                                                                    \
      int64_t cols = c1 - c0, ldb;                                                                               \
      const T *xg = x + img * c->x_nstride + gi * c->cin_g * c->x_cstride, *bmat;                                \
      const T *w = a + gi * m * c->k;                                                                            \
      T *dt = d + (img * cout + gi * m) * npos + c0;                                                             \
      if (c->direct) {                                                                                           \
        bmat = xg + c0, ldb = c->x_cstride;                                                                      \
      } else if (col) {                                                                                          \
        im2col_tile_##S(c, xg, col, c0, c1);                                                                     \
        bmat = col, ldb = cols;                                                                                  \
      } else {                                                                                                   \
        taps_tile_##S(c, w, xg, dt, c0, c1, npos);                                                               \
        bmat = NULL, ldb = 0;                                                                                    \
      }                                                                                                          \
      if (!bmat) {                                                                                               \
        /* summed tap by tap already (no im2col buffer) */                                                       \
      } else if (c->k == 0) {                                                                                    \
        for (int64_t i = 0; i < m; i++) memset(dt + i * npos, 0, sizeof *dt * (size_t)cols);                     \
      } else if (c->loop || !bl || !bl->GEMM_FIELD) {                                                            \
        loop_gemm_##S(m, cols, c->k, w, c->k, bmat, ldb, dt, npos);                                              \
      } else {                                                                                                   \
        bl->GEMM_FIELD(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, (int)m, (int)cols, (int)c->k, 1, w,      \
                       (int)c->k, bmat, (int)ldb, 0, dt, (int)npos);                                             \
      }                                                                                                          \
      /* the epilogue, on the tile while it is in cache; relu as op.relu: */                                     \
      /* x <= 0 is false for NaN, which passes */                                                                \
      if (bias || c->relu)                                                                                       \
        for (int64_t i = 0; i < m; i++) {                                                                        \
          T *dr = dt + i * npos, bv = bias ? bias[gi * m + i] : 0;                                               \
          if (bias && c->relu)                                                                                   \
            for (int64_t j = 0; j < cols; j++) {                                                                 \
              T v = dr[j] + bv;                                                                                  \
              dr[j] = v <= 0 ? 0 : v;                                                                            \
            }                                                                                                    \
          else if (bias)                                                                                         \
            for (int64_t j = 0; j < cols; j++) dr[j] += bv;                                                      \
          else                                                                                                   \
            for (int64_t j = 0; j < cols; j++) dr[j] = dr[j] <= 0 ? 0 : dr[j];                                   \
        }                                                                                                        \
    }                                                                                                            \
    free(col);                                                                                                   \
  }

CONV_FUNCS(float, f32, fmaf, sgemm)
CONV_FUNCS(double, f64, fma, dgemm)

/* The operands' element offsets are the desc's (the step's own are 0):
 * the executor counts the step's offsets in floats. */
void cpu_conv_rows(const cpu_blas *bl, const cpu_gemm_desc *g, const float *a, const float *x, float *d,
                   int64_t begin, int64_t end) {
  const cpu_conv_desc *c = &g->conv;
  if (c->f64)
    conv_rows_f64(bl, c, (const double *)(const void *)a + c->a_off, (const double *)(const void *)x + c->x_off,
                  (double *)(void *)d + c->d_off, begin, end);
  else
    conv_rows_f32(bl, c, a + c->a_off, x + c->x_off, d + c->d_off, begin, end);
}
