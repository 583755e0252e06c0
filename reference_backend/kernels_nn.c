/*
 * reference_backend/kernels_nn.c: reference kernels, nn family:
 * the matrix products (mm, bmm, mv, dot, vdot, addmm, addbmm, baddbmm,
 * addmv, addr, linear, _trilinear, scaled_dot_product_attention), the
 * convolutions (forward, transposed, backward), the distances
 * (_cdist_forward, _pdist_forward) and the vector ops (linalg_cross,
 * renorm; linalg_vector_norm is a reduction, in kernels_reduce.c). Pooling is in kernels_pooling.c, norms in
 * kernels_norms.c, losses in kernels_losses.c, the activations that are not
 * pointwise in kernels_nn_activation.c, resampling in kernels_resample.c.
 *
 * Products and convolutions share one blocked GEMM (packed panels of A and
 * B, an MR x NR register tile), instantiated for three arithmetics chosen
 * by the output's dtype: float for float32, accumulated with fused
 * multiply-adds as the BLAS behind PyTorch's CPU GEMM does (where a sum
 * cancels, the corpus tells the roundings apart); double for float64,
 * float16 and bfloat16 (opmath, rounded once on store); uint64 for integers
 * and bool (wrapping, as PyTorch's integer kernels do). A convolution is
 * im2col + GEMM (a 1x1 one reads its input in place); the transposed form
 * and the input gradient are GEMM + col2im. float32, float64 and int64
 * inputs are read in place through their strides; other dtypes are first
 * converted to a dense copy in the arithmetic's type. Where PyTorch rounds
 * an intermediate to the dtype (addbmm's per-batch additions, addr's and
 * _trilinear's elementwise stages, linalg_cross), the kernel does too.
 *
 * Accumulation order: a GEMM sums k sequentially (fused, for float32)
 * within blocks of KC = 256 and adds the blocks in order; everything else
 * (attention's softmax, distances, _trilinear, norms, bias gradients) sums
 * sequentially in index order in double.
 */
#include <math.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference_backend/kernels_nn.h"

/* ---- dense scratch tensors ----------------------------------------------
 * Row-major buffers that kernels compute into, described as kernel tensors
 * so that the element loaders and ref_iter read them like any input. */

typedef struct dense {
  alloy_kernel_tensor t;
  int64_t sizes[MAX_RANK], strides[MAX_RANK];
} dense;

/* Zero-filled; returns nonzero when out of memory. d must not move while
 * in use (t points into it). */
static int dense_new(dense *d, alloy_dtype dtype, int rank, const int64_t *sizes) {
  int64_t n = 1;
  for (int i = rank - 1; i >= 0; i--) {
    d->sizes[i] = sizes[i];
    d->strides[i] = n;
    n *= sizes[i];
  }
  d->t = (alloy_kernel_tensor){NULL, dtype, rank, d->sizes, d->strides};
  d->t.data = calloc((size_t)(n > 0 ? n : 1), alloy_dtype_size(dtype));
  return d->t.data ? 0 : 1;
}

static void dense_free(dense *d) {
  free(d->t.data);
  d->t.data = NULL;
}

/* Row-major contiguous (size-1 dims aside). */
static bool is_dense(const alloy_kernel_tensor *t) {
  int64_t n = 1;
  for (int d = t->rank - 1; d >= 0; d--) {
    if (t->sizes[d] != 1 && t->strides[d] != n) return false;
    n *= t->sizes[d];
  }
  return true;
}

/* dst[i] = src[i] over dst's shape, src broadcast to it: through double
 * for a float destination (one rounding), int64 otherwise. */
static void copy_elems(const alloy_kernel_tensor *dst, const alloy_kernel_tensor *src) {
  bool same = dst->dtype == src->dtype && dst->rank == src->rank && is_dense(dst) && is_dense(src);
  for (int d = 0; same && d < dst->rank; d++) same = dst->sizes[d] == src->sizes[d];
  if (same) { /* the common case of a dense result: one block */
    int64_t n = ref_numel(dst);
    if (n > 0) memcpy(dst->data, src->data, (size_t)n * alloy_dtype_size(dst->dtype));
    return;
  }
  ref_iter it;
  ref_iter_init(&it, dst, &src, 1);
  bool fl = is_float(dst->dtype);
  while (ref_iter_next(&it)) {
    if (fl) ref_store_f(dst->data, dst->dtype, it.offset[0], ref_load_f(src->data, src->dtype, it.offset[1]));
    else ref_store_i(dst->data, dst->dtype, it.offset[0], ref_load_i(src->data, src->dtype, it.offset[1]));
  }
}

/* ---- the arithmetics and their GEMM -------------------------------------*/

typedef enum { NUM_F32, NUM_F64, NUM_U64, NUM_KINDS } num_kind;

/* The dtype a kind's dense buffers are described with (uint64 values are
 * stored as int64: the same bits). */
static const alloy_dtype kind_dtype[NUM_KINDS] = {ALLOY_F32, ALLOY_F64, ALLOY_I64};

/* float16 and bfloat16 multiply and accumulate in float32, as PyTorch's
 * CPU GEMM does: a product of two bfloat16 values can overflow there
 * (-2.97 * 3e38 is -inf, and meets +inf as NaN) where double would not. */
static num_kind kind_of(alloy_dtype t) {
  return ref_float32_opmath(t) ? NUM_F32 : is_float(t) ? NUM_F64 : NUM_U64;
}

/* C += A B; A is m x k, B k x n, C m x n, each through its own strides (in
 * elements of the kind's type). */
typedef struct gemm_op {
  int64_t m, n, k;
  const void *a;
  int64_t ars, acs;
  const void *b;
  int64_t brs, bcs;
  void *c;
  int64_t crs, ccs;
} gemm_op;

/* Register tile and cache blocks: a 4 x 16 tile of float accumulators
 * fits the vector registers of x86-64 (AVX2) and AArch64. */
enum { MR = 4, NR = 16, KC = 256, MC = 96, NC = 2048 };

/* The typed pieces of the GEMM and of im2col/col2im: everything else is
 * written once over these. */
typedef struct kit {
  size_t size;
  /* Packs `rows` rows (rounded up to w, the pad zeroed) of a k-long panel:
   * element (r, p) is src[r * rs + p * ks]; dst is rows-major in w-wide
   * strips, p-major within a strip. */
  void (*pack)(void *dst, const void *src, int64_t rs, int64_t ks, int64_t rows, int64_t kc, int w);
  /* tile[MR][NR] = sum over p of a[p][i] * b[p][j] (packed strips) */
  void (*micro)(int64_t kc, const void *a, const void *b, void *tile);
  /* c[i * crs + j * ccs] += tile[i][j] for i < mr, j < nr */
  void (*add_tile)(void *c, int64_t crs, int64_t ccs, const void *tile, int mr, int nr);
  /* dst[i * ds] = src[i * ss] and dst[i * ds] += src[i * ss], i < n */
  void (*copy)(void *dst, int64_t ds, const void *src, int64_t ss, int64_t n);
  void (*add)(void *dst, int64_t ds, const void *src, int64_t ss, int64_t n);
} kit;

/* The register tile: acc[i][j] = madd(acc[i][j], a[i], b[j]) over the
 * packed strips. */
#define DEFINE_MICRO(T, name, madd)                                                       \
  static inline void name(int64_t kc, const void *a, const void *b, void *tile) {         \
    const T *pa = a, *pb = b;                                                             \
    T acc[MR][NR];                                                                        \
    memset(acc, 0, sizeof acc);                                                           \
    for (int64_t p = 0; p < kc; p++, pa += MR, pb += NR)                                  \
      for (int i = 0; i < MR; i++)                                                        \
        for (int j = 0; j < NR; j++) acc[i][j] = madd(acc[i][j], pa[i], pb[j]);           \
    memcpy(tile, acc, sizeof acc);                                                        \
  }

#define MADD(acc, x, y) ((acc) + (x) * (y))
/* float32 accumulates with fused multiply-adds, as the BLAS PyTorch calls
 * does on current CPUs: where a sum cancels, the roundings decide. */
#define MADD_FUSED(acc, x, y) fmaf(x, y, acc)

DEFINE_MICRO(double, f64_micro, MADD)
DEFINE_MICRO(uint64_t, u64_micro, MADD)
DEFINE_MICRO(float, f32_micro_c, MADD_FUSED)

/* Where the compiler targets x86-64 below FMA (its default), fmaf is a
 * library call: a copy of the tile compiled for AVX2 + FMA runs instead
 * when the CPU has them. Same results, only faster. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__FMA__)
__attribute__((target("avx2,fma"))) static void f32_micro_fma(int64_t kc, const void *a,
                                                               const void *b, void *tile) {
  const float *pa = a, *pb = b;
  float acc[MR][NR];
  memset(acc, 0, sizeof acc);
  for (int64_t p = 0; p < kc; p++, pa += MR, pb += NR)
    for (int i = 0; i < MR; i++)
      for (int j = 0; j < NR; j++) acc[i][j] = fmaf(pa[i], pb[j], acc[i][j]);
  memcpy(tile, acc, sizeof acc);
}
static void f32_micro(int64_t kc, const void *a, const void *b, void *tile) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) f32_micro_fma(kc, a, b, tile);
  else f32_micro_c(kc, a, b, tile);
}
#else
static void f32_micro(int64_t kc, const void *a, const void *b, void *tile) {
  f32_micro_c(kc, a, b, tile);
}
#endif

#define DEFINE_KIT(T, name)                                                                   \
  static void name##_pack(void *dst, const void *src, int64_t rs, int64_t ks, int64_t rows,  \
                          int64_t kc, int w) {                                                \
    T *d = dst;                                                                               \
    const T *s = src;                                                                         \
    for (int64_t r0 = 0; r0 < rows; r0 += w)                                                  \
      for (int64_t p = 0; p < kc; p++)                                                        \
        for (int i = 0; i < w; i++) *d++ = r0 + i < rows ? s[(r0 + i) * rs + p * ks] : (T)0;  \
  }                                                                                           \
  static void name##_add_tile(void *c, int64_t crs, int64_t ccs, const void *tile, int mr,   \
                              int nr) {                                                       \
    T *pc = c;                                                                                \
    const T *t = tile;                                                                        \
    for (int i = 0; i < mr; i++)                                                              \
      for (int j = 0; j < nr; j++) pc[i * crs + j * ccs] += t[i * NR + j];                    \
  }                                                                                           \
  static void name##_copy(void *dst, int64_t ds, const void *src, int64_t ss, int64_t n) {   \
    T *d = dst;                                                                               \
    const T *s = src;                                                                         \
    for (int64_t i = 0; i < n; i++) d[i * ds] = s[i * ss];                                    \
  }                                                                                           \
  static void name##_add(void *dst, int64_t ds, const void *src, int64_t ss, int64_t n) {    \
    T *d = dst;                                                                               \
    const T *s = src;                                                                         \
    for (int64_t i = 0; i < n; i++) d[i * ds] += s[i * ss];                                   \
  }                                                                                           \
  static const kit name##_kit = {sizeof(T),        name##_pack, name##_micro, name##_add_tile, \
                                 name##_copy, name##_add};

DEFINE_KIT(float, f32)
DEFINE_KIT(double, f64)
DEFINE_KIT(uint64_t, u64)

static const kit *const kits[NUM_KINDS] = {&f32_kit, &f64_kit, &u64_kit};

static const void *at(const void *p, int64_t i, size_t size) {
  return (const char *)p + i * (int64_t)size;
}
static void *at_mut(void *p, int64_t i, size_t size) { return (char *)p + i * (int64_t)size; }

static int gemm(const kit *K, const gemm_op *g) {
  if (g->m <= 0 || g->n <= 0 || g->k <= 0) return 0;
  /* packing buffers sized for this product: small ones stay small */
  size_t z = K->size, kmax = (size_t)min64(KC, g->k);
  size_t am = (size_t)((min64(MC, g->m) + MR - 1) / MR * MR), bn = (size_t)((min64(NC, g->n) + NR - 1) / NR * NR);
  void *ap = malloc(z * kmax * am), *bp = malloc(z * kmax * bn);
  alignas(16) uint64_t tile[MR * NR];
  if (!ap || !bp) {
    free(ap);
    free(bp);
    return 1;
  }
  for (int64_t jc = 0; jc < g->n; jc += NC) {
    int64_t nc = min64(NC, g->n - jc);
    for (int64_t pc = 0; pc < g->k; pc += KC) {
      int64_t kc = min64(KC, g->k - pc);
      K->pack(bp, at(g->b, pc * g->brs + jc * g->bcs, z), g->bcs, g->brs, nc, kc, NR);
      for (int64_t ic = 0; ic < g->m; ic += MC) {
        int64_t mc = min64(MC, g->m - ic);
        K->pack(ap, at(g->a, ic * g->ars + pc * g->acs, z), g->ars, g->acs, mc, kc, MR);
        for (int64_t jr = 0; jr < nc; jr += NR)
          for (int64_t ir = 0; ir < mc; ir += MR) {
            K->micro(kc, at(ap, ir * kc, z), at(bp, jr * kc, z), tile);
            K->add_tile(at_mut(g->c, (ic + ir) * g->crs + (jc + jr) * g->ccs, z), g->crs,
                        g->ccs, tile, (int)min64(MR, mc - ir), (int)min64(NR, nc - jr));
          }
      }
    }
  }
  free(ap);
  free(bp);
  return 0;
}

/* ---- typed views of inputs ----------------------------------------------*/

/* A tensor's elements in a kind's type: the tensor itself when its dtype
 * is the kind's (and it is dense, if asked), else a dense copy (owned). */
typedef struct tview {
  const void *p;
  int rank;
  int64_t sizes[MAX_RANK], st[MAX_RANK];
  dense owned;
  bool has_copy;
} tview;

static int view_of(const alloy_kernel_tensor *t, num_kind k, bool need_dense, tview *v) {
  v->has_copy = false;
  v->rank = t->rank;
  memcpy(v->sizes, t->sizes, sizeof *v->sizes * (size_t)t->rank);
  if (t->dtype == kind_dtype[k] && (!need_dense || is_dense(t))) {
    v->p = t->data;
    memcpy(v->st, t->strides, sizeof *v->st * (size_t)t->rank);
    return 0;
  }
  if (dense_new(&v->owned, kind_dtype[k], t->rank, t->sizes)) return 1;
  v->has_copy = true;
  copy_elems(&v->owned.t, t);
  v->p = v->owned.t.data;
  memcpy(v->st, v->owned.strides, sizeof *v->st * (size_t)t->rank);
  return 0;
}

static void view_free(tview *v) {
  if (v->has_copy) dense_free(&v->owned);
  v->has_copy = false;
}

/* The single stride that walks dims [from, to) of v in row-major order,
 * or -1 when they do not collapse into one. */
static int64_t collapsed_stride(const tview *v, int from, int to) {
  int64_t st = -1, want = -1;
  for (int d = to - 1; d >= from; d--) {
    if (v->sizes[d] == 1) continue;
    if (st < 0) st = want = v->st[d];
    else if (v->st[d] != want) return -1;
    want = v->st[d] * v->sizes[d];
  }
  return st < 0 ? 1 : st;
}

/* ---- products ----------------------------------------------------------*/

/* out = alpha * prod + beta * self (self broadcast; ignored when beta is
 * 0, as PyTorch does, so that its NaNs do not leak). bool: logical. */
static void product_epilogue(const alloy_kernel_tensor *out, const alloy_kernel_tensor *prod,
                             const alloy_kernel_tensor *self, double alpha, double beta) {
  bool use_self = self && beta != 0.0;
  const alloy_kernel_tensor *ins[2] = {prod, self};
  ref_iter it;
  ref_iter_init(&it, out, ins, use_self ? 2 : 1);
  while (ref_iter_next(&it)) {
    int64_t o = it.offset[0];
    if (out->dtype == ALLOY_BOOL) {
      bool v = alpha != 0.0 && ref_load_i(prod->data, prod->dtype, it.offset[1]) != 0;
      if (use_self) v = v || ref_load_i(self->data, self->dtype, it.offset[2]) != 0;
      ref_store_i(out->data, out->dtype, o, v);
    } else if (is_float(out->dtype)) {
      double v = ref_load_f(prod->data, prod->dtype, it.offset[1]);
      if (alpha != 1.0) v *= alpha;
      if (use_self) v += beta * ref_load_f(self->data, self->dtype, it.offset[2]);
      ref_store_f(out->data, out->dtype, o, v);
    } else {
      uint64_t v = (uint64_t)ref_load_i(prod->data, prod->dtype, it.offset[1]);
      v *= (uint64_t)(int64_t)alpha;
      if (use_self)
        v += (uint64_t)(int64_t)beta * (uint64_t)ref_load_i(self->data, self->dtype, it.offset[2]);
      ref_store_i(out->data, out->dtype, o, (int64_t)v);
    }
  }
}

/* The operand shapes of the product ops. */
typedef enum { P_MM, P_BMM, P_MV, P_DOT, P_BATCH_SUM } prod_shape;

/* A factor as a (batch, rows, cols) matrix through strides, vectors being
 * a row (as_row) or a column. */
static void as_matrix(const tview *v, bool as_row, int64_t *bs, int64_t *rs, int64_t *cs) {
  *bs = 0;
  if (v->rank == 1) {
    *rs = as_row ? 0 : v->st[0];
    *cs = as_row ? v->st[0] : 0;
  } else if (v->rank == 2) {
    *rs = v->st[0];
    *cs = v->st[1];
  } else {
    *bs = v->st[0];
    *rs = v->st[1];
    *cs = v->st[2];
  }
}

static int run_product(const alloy_kernel_call *c, prod_shape shape, const char *an,
                       const char *bn, bool adds) {
  const alloy_kernel_tensor *out = &c->outputs[0], *a = ref_tensor(c, an), *b = ref_tensor(c, bn);
  const alloy_kernel_tensor *self = adds ? ref_tensor(c, "self") : NULL;
  if (!a || !b || (adds && !self)) return ref_fail(c, "missing tensor argument");
  double alpha = 1.0, beta = 1.0;
  ref_float(c, "alpha", &alpha);
  ref_float(c, "beta", &beta);
  num_kind k = kind_of(out->dtype);
  const kit *K = kits[k];
  tview va, vb;
  if (view_of(a, k, false, &va)) return ref_fail(c, "out of memory");
  if (view_of(b, k, false, &vb)) return view_free(&va), ref_fail(c, "out of memory");
  gemm_op g = {0};
  int64_t batch = 1, abs, bbs;
  switch (shape) {
    case P_MM: g.m = a->sizes[0], g.k = a->sizes[1], g.n = b->sizes[1]; break;
    case P_BMM:
    case P_BATCH_SUM:
      batch = a->sizes[0], g.m = a->sizes[1], g.k = a->sizes[2], g.n = b->sizes[2];
      break;
    case P_MV: g.m = a->sizes[0], g.k = a->sizes[1], g.n = 1; break;
    case P_DOT: g.m = 1, g.k = a->sizes[0], g.n = 1; break;
  }
  as_matrix(&va, shape == P_DOT, &abs, &g.ars, &g.acs);
  as_matrix(&vb, false, &bbs, &g.brs, &g.bcs);
  bool batched = shape == P_BMM;
  dense prod; /* the product has out's shape */
  int err = dense_new(&prod, kind_dtype[k], out->rank, out->sizes);
  /* addbmm adds each batch's product to out in turn, rounding each time,
   * as PyTorch's loop of addmm_ does */
  bool summed = shape == P_BATCH_SUM;
  if (summed && batch == 0) product_epilogue(out, &prod.t, self, alpha, beta);
  for (int64_t i = 0; !err && i < batch; i++) {
    g.a = at(va.p, i * abs, K->size);
    g.b = at(vb.p, i * bbs, K->size);
    g.c = at_mut(prod.t.data, batched ? i * g.m * g.n : 0, K->size);
    g.crs = g.n;
    g.ccs = 1;
    if (summed) memset(prod.t.data, 0, K->size * (size_t)(g.m * g.n));
    err = gemm(K, &g);
    if (summed && !err) product_epilogue(out, &prod.t, i ? out : self, alpha, i ? 1.0 : beta);
  }
  if (!err && !summed) product_epilogue(out, &prod.t, self, adds ? alpha : 1.0, beta);
  dense_free(&prod);
  view_free(&va);
  view_free(&vb);
  return err ? ref_fail(c, "out of memory") : 0;
}

static int k_mm(const alloy_kernel_call *c) { return run_product(c, P_MM, "self", "mat2", false); }
static int k_bmm(const alloy_kernel_call *c) { return run_product(c, P_BMM, "self", "mat2", false); }
static int k_mv(const alloy_kernel_call *c) { return run_product(c, P_MV, "self", "vec", false); }
static int k_dot(const alloy_kernel_call *c) { return run_product(c, P_DOT, "self", "tensor", false); }
/* vdot conjugates self: the same for real dtypes */
static int k_vdot(const alloy_kernel_call *c) { return run_product(c, P_DOT, "self", "other", false); }
static int k_addmm(const alloy_kernel_call *c) { return run_product(c, P_MM, "mat1", "mat2", true); }
static int k_baddbmm(const alloy_kernel_call *c) {
  return run_product(c, P_BMM, "batch1", "batch2", true);
}
static int k_addbmm(const alloy_kernel_call *c) {
  return run_product(c, P_BATCH_SUM, "batch1", "batch2", true);
}
static int k_addmv(const alloy_kernel_call *c) { return run_product(c, P_MV, "mat", "vec", true); }

/* linear(input, weight, bias): input (*, in) @ weight (out, in).T + bias;
 * a 1-D weight gives no out dim. */
static int k_linear(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0], *x = ref_tensor(c, "input"),
                            *w = ref_tensor(c, "weight"), *bias = ref_tensor(c, "bias");
  if (!x || !w) return ref_fail(c, "missing tensor argument");
  num_kind k = kind_of(out->dtype);
  tview vx, vw;
  if (view_of(x, k, false, &vx)) return ref_fail(c, "out of memory");
  /* the input's rows must walk with one stride: else it is copied dense */
  int64_t rs = collapsed_stride(&vx, 0, x->rank - 1);
  if (rs < 0) {
    view_free(&vx);
    if (view_of(x, k, true, &vx)) return ref_fail(c, "out of memory");
    rs = collapsed_stride(&vx, 0, x->rank - 1);
  }
  if (view_of(w, k, false, &vw)) return view_free(&vx), ref_fail(c, "out of memory");
  int64_t in = x->sizes[x->rank - 1];
  gemm_op g = {.m = 1, .k = in, .a = vx.p, .ars = rs, .acs = vx.st[x->rank - 1], .b = vw.p};
  for (int d = 0; d < x->rank - 1; d++) g.m *= x->sizes[d];
  g.n = w->rank == 2 ? w->sizes[0] : 1;
  g.brs = vw.st[w->rank - 1];
  g.bcs = w->rank == 2 ? vw.st[0] : 0;
  /* the product's shape: input's leading dims, then out (if any) */
  int64_t ps[MAX_RANK];
  int pr = 0;
  for (int d = 0; d < x->rank - 1; d++) ps[pr++] = x->sizes[d];
  if (w->rank == 2) ps[pr++] = g.n;
  dense prod;
  int err = dense_new(&prod, kind_dtype[k], pr, ps);
  if (!err) {
    g.c = prod.t.data;
    g.crs = g.n;
    g.ccs = 1;
    err = gemm(kits[k], &g);
  }
  if (!err) product_epilogue(out, &prod.t, bias, 1.0, 1.0);
  dense_free(&prod);
  view_free(&vx);
  view_free(&vw);
  return err ? ref_fail(c, "out of memory") : 0;
}

/* addr(self, vec1, vec2, beta, alpha) = beta * self + alpha * vec1 (x)
 * vec2, elementwise in the dtype as PyTorch's kernel computes it: each
 * operation rounded (alpha and beta too), (alpha * vec1) * vec2; self
 * ignored when beta is 0. Integers wrap, bool is logical. */
static int k_addr(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0], *self = ref_tensor(c, "self"),
                            *v1 = ref_tensor(c, "vec1"), *v2 = ref_tensor(c, "vec2");
  if (!self || !v1 || !v2) return ref_fail(c, "missing tensor argument");
  double alpha = 1.0, beta = 1.0;
  ref_float(c, "alpha", &alpha);
  ref_float(c, "beta", &beta);
  /* vec1 as a column, vec2 as a row */
  int64_t s1[2] = {v1->sizes[0], 1}, st1[2] = {v1->strides[0], 0};
  int64_t s2[2] = {1, v2->sizes[0]}, st2[2] = {0, v2->strides[0]};
  alloy_kernel_tensor col = {v1->data, v1->dtype, 2, s1, st1}, row = {v2->data, v2->dtype, 2, s2, st2};
  const alloy_kernel_tensor *ins[3] = {&col, &row, self};
  bool use_self = beta != 0.0;
  ref_iter it;
  ref_iter_init(&it, out, ins, use_self ? 3 : 2);
  alloy_dtype t = out->dtype;
  double a = round_to(t, alpha), b = round_to(t, beta);
  while (ref_iter_next(&it)) {
    if (t == ALLOY_BOOL) {
      bool v = alpha != 0.0 && ref_load_i(v1->data, v1->dtype, it.offset[1]) &&
               ref_load_i(v2->data, v2->dtype, it.offset[2]);
      if (use_self) v = v || (ref_load_i(self->data, self->dtype, it.offset[3]) != 0);
      ref_store_i(out->data, t, it.offset[0], v);
    } else if (is_float(t)) {
      double v = round_to(t, round_to(t, a * ref_load_f(v1->data, v1->dtype, it.offset[1])) *
                                 ref_load_f(v2->data, v2->dtype, it.offset[2]));
      if (use_self) v += round_to(t, b * ref_load_f(self->data, self->dtype, it.offset[3]));
      ref_store_f(out->data, t, it.offset[0], v);
    } else {
      uint64_t v = (uint64_t)(int64_t)alpha * (uint64_t)ref_load_i(v1->data, v1->dtype, it.offset[1]) *
                   (uint64_t)ref_load_i(v2->data, v2->dtype, it.offset[2]);
      if (use_self) v += (uint64_t)(int64_t)beta * (uint64_t)ref_load_i(self->data, self->dtype, it.offset[3]);
      ref_store_i(out->data, t, it.offset[0], (int64_t)v);
    }
  }
  return 0;
}

/* _trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim):
 * each input gets size-1 dims at its expand positions; the product of the
 * three, broadcast, is summed over sumdim. Computed in PyTorch's stages,
 * each rounded to the dtype: for each index k of unroll_dim, i1 * i2 summed
 * over the dims that i3 lacks, then times i3 summed over the rest, then
 * added to the output (summing over k when unroll_dim is summed). */
typedef struct trilinear {
  int total, unroll;
  int64_t sizes[MAX_RANK], st[3][MAX_RANK];
  int s12[MAX_RANK], s23[MAX_RANK], n12, n23; /* summed dims, unroll_dim aside */
  const alloy_kernel_tensor *in[3];
} trilinear;

/* Steps idx through the dims listed in dims (an odometer); false when it
 * wrapped around. */
static bool odometer(int64_t *idx, const int *dims, int n, const int64_t *sizes) {
  for (int e = n - 1; e >= 0; e--) {
    if (++idx[dims[e]] < sizes[dims[e]]) return true;
    idx[dims[e]] = 0;
  }
  return false;
}

static int64_t tri_offset(const trilinear *tr, int t, const int64_t *idx) {
  int64_t off = 0;
  for (int d = 0; d < tr->total; d++) off += idx[d] * tr->st[t][d];
  return off;
}

/* sum over s23 of round(sum over s12 of i1 * i2) * i3, at idx (its summed
 * entries are overwritten). Floats: */
static double tri_stage_f(const trilinear *tr, int64_t *idx, alloy_dtype t) {
  double buf = 0.0;
  for (int e = 0; e < tr->n23; e++) idx[tr->s23[e]] = 0;
  do {
    double b12 = 0.0;
    for (int e = 0; e < tr->n12; e++) idx[tr->s12[e]] = 0;
    do {
      b12 += ref_load_f(tr->in[0]->data, tr->in[0]->dtype, tri_offset(tr, 0, idx)) *
             ref_load_f(tr->in[1]->data, tr->in[1]->dtype, tri_offset(tr, 1, idx));
    } while (odometer(idx, tr->s12, tr->n12, tr->sizes));
    buf += round_to(t, b12) * ref_load_f(tr->in[2]->data, tr->in[2]->dtype, tri_offset(tr, 2, idx));
  } while (odometer(idx, tr->s23, tr->n23, tr->sizes));
  return round_to(t, buf);
}

/* ... and integers (wrapping; no rounding to speak of). */
static uint64_t tri_stage_i(const trilinear *tr, int64_t *idx) {
  uint64_t buf = 0;
  for (int e = 0; e < tr->n23; e++) idx[tr->s23[e]] = 0;
  do {
    uint64_t b12 = 0;
    for (int e = 0; e < tr->n12; e++) idx[tr->s12[e]] = 0;
    do {
      b12 += (uint64_t)ref_load_i(tr->in[0]->data, tr->in[0]->dtype, tri_offset(tr, 0, idx)) *
             (uint64_t)ref_load_i(tr->in[1]->data, tr->in[1]->dtype, tri_offset(tr, 1, idx));
    } while (odometer(idx, tr->s12, tr->n12, tr->sizes));
    buf += b12 * (uint64_t)ref_load_i(tr->in[2]->data, tr->in[2]->dtype, tri_offset(tr, 2, idx));
  } while (odometer(idx, tr->s23, tr->n23, tr->sizes));
  return buf;
}

static int k_trilinear(const alloy_kernel_call *c) {
  static const char *const names[3] = {"i1", "i2", "i3"};
  static const char *const expands[3] = {"expand1", "expand2", "expand3"};
  const alloy_kernel_tensor *out = &c->outputs[0];
  trilinear tr = {.total = 0};
  bool ex3[MAX_RANK] = {false}, ex_all[MAX_RANK];
  for (int d = 0; d < MAX_RANK; d++) tr.sizes[d] = 1, ex_all[d] = true;
  for (int t = 0; t < 3; t++) {
    tr.in[t] = ref_tensor(c, names[t]);
    int64_t ex[MAX_RANK];
    int n = ref_ints(c, expands[t], ex, MAX_RANK);
    if (!tr.in[t] || n < 0) return ref_fail(c, "missing tensor argument");
    tr.total = tr.in[t]->rank + n;
    bool expanded[MAX_RANK] = {false};
    for (int e = 0; e < n; e++) expanded[ex[e]] = true;
    for (int d = 0, src = 0; d < tr.total; d++) {
      int64_t size = expanded[d] ? 1 : tr.in[t]->sizes[src];
      tr.st[t][d] = expanded[d] || size == 1 ? 0 : tr.in[t]->strides[src];
      if (!expanded[d]) src++;
      if (size != 1) tr.sizes[d] = size;
      if (t == 2) ex3[d] = expanded[d];
      ex_all[d] = ex_all[d] && expanded[d];
    }
  }
  int64_t sd[MAX_RANK], unroll = 1;
  int nsum = ref_ints(c, "sumdim", sd, MAX_RANK);
  ref_int(c, "unroll_dim", &unroll);
  bool summed[MAX_RANK] = {false};
  for (int e = 0; e < nsum; e++) summed[sd[e]] = true;
  /* PyTorch loops over unroll_dim for as many indices as an operand that
   * has it holds: none when all three are expanded there, leaving zeros. */
  bool no_unroll = unroll >= 0 && unroll < tr.total && ex_all[unroll];
  for (int t = 0; t < 3; t++)
    if (ref_numel(tr.in[t]) == 0 || no_unroll) { /* an empty sum */
      zero_fill(out);
      return 0;
    }
  int od[MAX_RANK], no = 0;
  for (int d = 0; d < tr.total; d++) {
    if (!summed[d]) od[no++] = d;
    else if (d != unroll && ex3[d]) tr.s12[tr.n12++] = d;
    else if (d != unroll) tr.s23[tr.n23++] = d;
  }
  bool fl = is_float(out->dtype), unroll_summed = unroll >= 0 && unroll < tr.total && summed[unroll];
  int un[1] = {(int)unroll};
  ref_iter it;
  ref_iter_init(&it, out, NULL, 0);
  while (ref_iter_next(&it)) {
    int64_t idx[MAX_RANK] = {0};
    for (int e = 0; e < no; e++) idx[od[e]] = it.index[e];
    double accf = 0.0;
    uint64_t acci = 0;
    do {
      if (fl) accf = round_to(out->dtype, accf + tri_stage_f(&tr, idx, out->dtype));
      else acci += tri_stage_i(&tr, idx);
    } while (unroll_summed && odometer(idx, un, 1, tr.sizes));
    if (fl) ref_store_f(out->data, out->dtype, it.offset[0], accf);
    else ref_store_i(out->data, out->dtype, it.offset[0], (int64_t)acci);
  }
  return 0;
}

/* ---- attention ----------------------------------------------------------*/

/* The element offset, in t, of the batch position idx of an output whose
 * leading nb dims are the batch (t's batch dims right-aligned and
 * broadcast). heads_div divides the index of dim nb - 1 (GQA). */
static int64_t batch_offset(const alloy_kernel_tensor *t, int tail, const int64_t *idx, int nb,
                            int64_t heads_div) {
  int64_t off = 0;
  int tb = t->rank - tail;
  for (int d = 0; d < tb; d++) {
    int od = nb - tb + d;
    int64_t i = idx[od];
    if (od == nb - 1 && heads_div > 1) i /= heads_div;
    if (t->sizes[d] != 1) off += i * t->strides[d];
  }
  return off;
}

/* Loads an r x c matrix at off (strides rs, cs) into dense doubles. */
static void load_matrix(double *dst, const alloy_kernel_tensor *t, int64_t off, int64_t r,
                        int64_t cols, int64_t rs, int64_t cs) {
  for (int64_t i = 0; i < r; i++)
    for (int64_t j = 0; j < cols; j++)
      dst[i * cols + j] = ref_load_f(t->data, t->dtype, off + i * rs + j * cs);
}

/* scaled_dot_product_attention(query, key, value, attn_mask, dropout_p,
 * is_causal, scale, enable_gqa), PyTorch's math form in double:
 * _safe_softmax(q k^T * scale + mask) v, where a row whose every score is
 * -inf (all its keys masked) is zeros, not NaN. A bool mask keeps where
 * true; the causal mask is the top-left lower triangle. dropout_p is taken
 * as 0 (inference: a dropout here would be random). */
static int k_sdpa(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0], *q = ref_tensor(c, "query"),
                            *k = ref_tensor(c, "key"), *v = ref_tensor(c, "value"),
                            *mask = ref_tensor(c, "attn_mask");
  if (!q || !k || !v) return ref_fail(c, "missing tensor argument");
  bool causal = false, gqa = false;
  ref_bool(c, "is_causal", &causal);
  ref_bool(c, "enable_gqa", &gqa);
  int64_t L = q->sizes[q->rank - 2], E = q->sizes[q->rank - 1], S = k->sizes[k->rank - 2],
          Ev = v->sizes[v->rank - 1];
  double scale = 1.0 / sqrt((double)E);
  ref_float(c, "scale", &scale);
  int nb = out->rank - 2;
  int64_t hq = nb >= 1 ? out->sizes[nb - 1] : 1;
  int64_t kdiv = gqa && k->rank >= 3 && k->sizes[k->rank - 3] ? hq / k->sizes[k->rank - 3] : 1;
  int64_t vdiv = gqa && v->rank >= 3 && v->sizes[v->rank - 3] ? hq / v->sizes[v->rank - 3] : 1;
  double *Q = malloc(sizeof(double) * (size_t)(L * E + 1)),
         *Kt = malloc(sizeof(double) * (size_t)(E * S + 1)),
         *V = malloc(sizeof(double) * (size_t)(S * Ev + 1)),
         *P = malloc(sizeof(double) * (size_t)(L * S + 1)),
         *O = malloc(sizeof(double) * (size_t)(L * Ev + 1));
  int err = !Q || !Kt || !V || !P || !O;
  int64_t nbatch = 1, idx[MAX_RANK] = {0};
  for (int d = 0; d < nb; d++) nbatch *= out->sizes[d];
  for (int64_t b = 0; !err && b < nbatch; b++) {
    for (int64_t rem = b, d = nb - 1; d >= 0; d--) {
      idx[d] = rem % out->sizes[d];
      rem /= out->sizes[d];
    }
    int64_t qo = batch_offset(q, 2, idx, nb, 1), ko = batch_offset(k, 2, idx, nb, kdiv),
            vo = batch_offset(v, 2, idx, nb, vdiv);
    load_matrix(Q, q, qo, L, E, q->strides[q->rank - 2], q->strides[q->rank - 1]);
    load_matrix(Kt, k, ko, E, S, k->strides[k->rank - 1], k->strides[k->rank - 2]);
    load_matrix(V, v, vo, S, Ev, v->strides[v->rank - 2], v->strides[v->rank - 1]);
    memset(P, 0, sizeof(double) * (size_t)(L * S));
    memset(O, 0, sizeof(double) * (size_t)(L * Ev));
    gemm(&f64_kit, &(gemm_op){L, S, E, Q, E, 1, Kt, S, 1, P, S, 1});
    int64_t mo = mask ? batch_offset(mask, 2, idx, nb, 1) : 0;
    int64_t mrs = mask && mask->rank >= 2 && mask->sizes[mask->rank - 2] != 1 ? mask->strides[mask->rank - 2] : 0;
    int64_t mcs = mask && mask->rank >= 1 && mask->sizes[mask->rank - 1] != 1 ? mask->strides[mask->rank - 1] : 0;
    for (int64_t i = 0; i < L; i++) {
      double *row = P + i * S, mx = -INFINITY, sum = 0.0;
      for (int64_t j = 0; j < S; j++) {
        row[j] *= scale;
        if (causal && j > i) row[j] = -INFINITY;
        if (mask) {
          int64_t mi = mo + i * mrs + j * mcs;
          if (mask->dtype == ALLOY_BOOL) {
            if (!ref_load_i(mask->data, mask->dtype, mi)) row[j] = -INFINITY;
          } else {
            row[j] += ref_load_f(mask->data, mask->dtype, mi);
          }
        }
        if (row[j] > mx) mx = row[j];
      }
      bool all_ninf = true; /* _safe_softmax: a row of only -inf (every key masked) is zeros */
      for (int64_t j = 0; j < S && all_ninf; j++) all_ninf = row[j] == -INFINITY;
      if (all_ninf && S > 0) {
        for (int64_t j = 0; j < S; j++) row[j] = 0.0;
        continue;
      }
      for (int64_t j = 0; j < S; j++) sum += row[j] = exp(row[j] - mx);
      for (int64_t j = 0; j < S; j++) row[j] /= sum;
    }
    gemm(&f64_kit, &(gemm_op){L, Ev, S, P, S, 1, V, Ev, 1, O, Ev, 1});
    int64_t oo = 0;
    for (int d = 0; d < nb; d++) oo += idx[d] * out->strides[d];
    for (int64_t i = 0; i < L; i++)
      for (int64_t j = 0; j < Ev; j++)
        ref_store_f(out->data, out->dtype,
                    oo + i * out->strides[nb] + j * out->strides[nb + 1], O[i * Ev + j]);
  }
  free(Q);
  free(Kt);
  free(V);
  free(P);
  free(O);
  return err ? ref_fail(c, "out of memory") : 0;
}

/* ---- convolution --------------------------------------------------------*/

/* The geometry of an im2col / col2im: an image of img[] positions is read
 * at pos * stride - pad + k * dil for each of pos[] positions and each
 * kernel offset k. Spatial dims are right-aligned in 3 (a 1-d convolution
 * has img = {1, 1, L}). */
typedef struct geom {
  int n; /* spatial dims */
  int64_t img[3], pos[3], ker[3], s[3], p[3], d[3];
  int64_t img_n, pos_n, ker_n; /* products */
} geom;

static void geom_finish(geom *g) {
  g->img_n = g->pos_n = g->ker_n = 1;
  for (int i = 0; i < 3; i++) {
    g->img_n *= g->img[i];
    g->pos_n *= g->pos[i];
    g->ker_n *= g->ker[i];
  }
}

/* Positions o in [lo, hi) of n whose index start + o * step lies in
 * [0, size). */
static void valid_range(int64_t n, int64_t start, int64_t step, int64_t size, int64_t *lo,
                        int64_t *hi) {
  *lo = start >= 0 ? 0 : (-start + step - 1) / step;
  *hi = start > size - 1 ? 0 : min64(n, (size - 1 - start) / step + 1);
  if (*hi < *lo) *hi = *lo;
}

/* cols[(c, kd, kh, kw), (od, oh, ow)] = img[c, od*s - p + kd*d, ...] or 0.
 * img is the image of channel 0 with channel stride cs and spatial strides
 * ss[3]; cols is dense and zero on entry. With add, the reverse: the image
 * accumulates the columns (col2im). */
static void im2col(const kit *K, bool add, void *cols, void *img, int64_t cs, const int64_t *ss,
                   int64_t channels, const geom *g) {
  size_t z = K->size;
  int64_t row = 0;
  for (int64_t ch = 0; ch < channels; ch++)
    for (int64_t kd = 0; kd < g->ker[0]; kd++)
      for (int64_t kh = 0; kh < g->ker[1]; kh++)
        for (int64_t kw = 0; kw < g->ker[2]; kw++, row++) {
          int64_t lo[3], hi[3], start[3], k3[3] = {kd, kh, kw};
          for (int i = 0; i < 3; i++) {
            start[i] = k3[i] * g->d[i] - g->p[i];
            valid_range(g->pos[i], start[i], g->s[i], g->img[i], &lo[i], &hi[i]);
          }
          for (int64_t od = lo[0]; od < hi[0]; od++)
            for (int64_t oh = lo[1]; oh < hi[1]; oh++) {
              int64_t id = start[0] + od * g->s[0], ih = start[1] + oh * g->s[1],
                      iw = start[2] + lo[2] * g->s[2];
              int64_t ci = row * g->pos_n + (od * g->pos[1] + oh) * g->pos[2] + lo[2];
              void *pi = at_mut(img, ch * cs + id * ss[0] + ih * ss[1] + iw * ss[2], z);
              void *pc = at_mut(cols, ci, z);
              if (add) K->add(pi, g->s[2] * ss[2], pc, 1, hi[2] - lo[2]);
              else K->copy(pc, 1, pi, g->s[2] * ss[2], hi[2] - lo[2]);
            }
        }
}

/* Spatial strides of a view (N, C, *spatial) right-aligned in 3. */
static void spatial_strides(const tview *v, int n, int64_t *ss) {
  for (int i = 0; i < 3; i++) ss[i] = i < 3 - n ? 0 : v->st[2 + i - (3 - n)];
}

/* out[N, Cout, pos] += conv(x, w): x (N, C, img) through its strides, w
 * dense (Cout, C/groups * ker_n), out dense. */
static int conv_forward(const kit *K, const tview *x, const void *w, int64_t cout, int64_t groups,
                        const geom *g, void *out) {
  size_t z = K->size;
  int64_t N = x->sizes[0], cg = x->sizes[1] / groups, og = cout / groups, kdim = cg * g->ker_n;
  int64_t ss[3];
  spatial_strides(x, g->n, ss);
  /* a 1x1 convolution with stride 1 and no padding reads x as it is */
  int64_t xs = collapsed_stride(x, 2, x->rank);
  bool direct = g->ker_n == 1 && g->img_n == g->pos_n && xs >= 0;
  for (int i = 0; i < 3; i++) direct = direct && g->s[i] == 1 && g->p[i] == 0;
  void *cols = direct ? NULL : malloc(z * (size_t)max64(1, kdim * g->pos_n));
  if (!direct && !cols) return 1;
  int err = 0;
  for (int64_t n = 0; n < N && !err; n++)
    for (int64_t gi = 0; gi < groups && !err; gi++) {
      const void *img = at(x->p, n * x->st[0] + gi * cg * x->st[1], z);
      gemm_op op = {og, g->pos_n, kdim, at(w, gi * og * kdim, z), kdim, 1,
                    img, x->st[1], xs, at_mut(out, (n * cout + gi * og) * g->pos_n, z), g->pos_n, 1};
      if (!direct) {
        memset(cols, 0, z * (size_t)(kdim * g->pos_n));
        im2col(K, false, cols, (void *)(uintptr_t)img, x->st[1], ss, cg, g);
        op.b = cols, op.brs = g->pos_n, op.bcs = 1;
      }
      err = gemm(K, &op);
    }
  free(cols);
  return err;
}

/* out[N, groups * og, img] += col2im(w^T x): the transposed convolution. x
 * (N, Cin, pos) through its strides (its spatial dims collapsed), w dense
 * (Cin, og * ker_n), out dense. */
static int conv_transposed(const kit *K, const tview *x, const void *w, int64_t og,
                           int64_t groups, const geom *g, void *out) {
  size_t z = K->size;
  int64_t N = x->sizes[0], cg = x->sizes[1] / groups, rows = og * g->ker_n;
  int64_t xs = collapsed_stride(x, 2, x->rank), os[3] = {g->img[1] * g->img[2], g->img[2], 1};
  void *cols = malloc(z * (size_t)max64(1, rows * g->pos_n));
  if (!cols) return 1;
  int err = 0;
  for (int64_t n = 0; n < N && !err; n++)
    for (int64_t gi = 0; gi < groups && !err; gi++) {
      memset(cols, 0, z * (size_t)(rows * g->pos_n));
      gemm_op op = {rows, g->pos_n, cg, at(w, gi * cg * rows, z), 1, rows,
                    at(x->p, n * x->st[0] + gi * cg * x->st[1], z), x->st[1], xs,
                    cols, g->pos_n, 1};
      err = gemm(K, &op);
      im2col(K, true, cols, at_mut(out, (n * groups * og + gi * og) * g->img_n, z), g->img_n, os,
             og, g);
    }
  free(cols);
  return err;
}

/* w[groups * og, cg * ker_n] += sum over n of a[n, g] (og, pos) @
 * im2col(img[n, g])^T: the weight gradient of conv_forward (a = grad_output,
 * img = input) and of conv_transposed (a = input, img = grad_output, with
 * og and cg exchanged by the caller). a's spatial dims collapse. */
static int conv_weight_grad(const kit *K, const tview *a, const tview *img, int64_t og,
                            int64_t cg, int64_t groups, const geom *g, void *w) {
  size_t z = K->size;
  int64_t kdim = cg * g->ker_n, as = collapsed_stride(a, 2, a->rank), ss[3];
  spatial_strides(img, g->n, ss);
  void *cols = malloc(z * (size_t)max64(1, kdim * g->pos_n));
  if (!cols) return 1;
  int err = 0;
  for (int64_t n = 0; n < a->sizes[0] && !err; n++)
    for (int64_t gi = 0; gi < groups && !err; gi++) {
      memset(cols, 0, z * (size_t)(kdim * g->pos_n));
      im2col(K, false, cols,
             (void *)(uintptr_t)at(img->p, n * img->st[0] + gi * cg * img->st[1], z), img->st[1],
             ss, cg, g);
      gemm_op op = {og, kdim, g->pos_n, at(a->p, n * a->st[0] + gi * og * a->st[1], z), a->st[1],
                    as, cols, 1, g->pos_n, at_mut(w, gi * og * kdim, z), kdim, 1};
      err = gemm(K, &op);
    }
  free(cols);
  return err;
}

/* An int list argument of n spatial dims: one value repeats, none (or an
 * empty list) takes dflt. */
static void spatial_arg(const alloy_kernel_call *c, const char *name, int n, int64_t dflt,
                        int64_t *out) {
  int64_t v[MAX_RANK];
  int k = ref_ints(c, name, v, MAX_RANK);
  for (int i = 0; i < n; i++) out[i] = k <= 0 ? dflt : v[k == 1 ? 0 : i];
}

/* The geometry of a convolution of x's spatial dims (img) into pos
 * positions, from the node's stride, padding and dilation. */
static void conv_geom(const alloy_kernel_call *c, int n, const int64_t *img, const int64_t *ker,
                      const int64_t *pos, geom *g) {
  int64_t s[3], p[3], d[3];
  spatial_arg(c, "stride", n, 1, s);
  spatial_arg(c, "padding", n, 0, p);
  spatial_arg(c, "dilation", n, 1, d);
  g->n = n;
  for (int i = 0; i < 3; i++) {
    int j = i - (3 - n);
    bool real = j >= 0;
    g->img[i] = real ? img[j] : 1;
    g->pos[i] = real ? pos[j] : 1;
    g->ker[i] = real ? ker[j] : 1;
    g->s[i] = real ? s[j] : 1;
    g->p[i] = real ? p[j] : 0;
    g->d[i] = real ? d[j] : 1;
  }
  geom_finish(g);
}

/* Adds bias[c] to every position of channel c of out (N, C, npos), dense. */
static void add_bias(const kit *K, void *out, const void *bias, int64_t N, int64_t C, int64_t npos) {
  for (int64_t n = 0; n < N; n++)
    for (int64_t ch = 0; ch < C; ch++)
      K->add(at_mut(out, (n * C + ch) * npos, K->size), 1, at(bias, ch, K->size), 0, npos);
}

/* The convolution of input with weight into out, both with a batch dim
 * (unbatched inputs are given one by the caller's view). */
static int conv_run(const alloy_kernel_call *c, tview *x, const alloy_kernel_tensor *w,
                    const alloy_kernel_tensor *bias, bool transposed, int64_t groups,
                    const alloy_kernel_tensor *out, num_kind k) {
  const kit *K = kits[k];
  int n = x->rank - 2;
  if (n < 1 || n > 3 || groups < 1) return ref_fail(c, "convolution: %d spatial dims, groups %lld", n, (long long)groups);
  /* out's spatial dims are its last n whatever its batch */
  const int64_t *osp = out->sizes + out->rank - n;
  int64_t cout = out->sizes[out->rank - n - 1];
  geom g;
  if (transposed) conv_geom(c, n, osp, w->sizes + 2, x->sizes + 2, &g);
  else conv_geom(c, n, x->sizes + 2, w->sizes + 2, osp, &g);
  tview vw, vb = {0};
  if (view_of(w, k, true, &vw)) return ref_fail(c, "out of memory");
  if (bias && view_of(bias, k, true, &vb)) return view_free(&vw), ref_fail(c, "out of memory");
  dense res;
  int err = dense_new(&res, kind_dtype[k], out->rank, out->sizes);
  if (!err && transposed && collapsed_stride(x, 2, x->rank) < 0) {
    /* the transposed GEMM reads x's positions with one stride */
    tview dx;
    alloy_kernel_tensor xt = {(void *)(uintptr_t)x->p, kind_dtype[k], x->rank, x->sizes, x->st};
    err = view_of(&xt, k, true, &dx);
    if (!err) {
      err = conv_transposed(K, &dx, vw.p, w->sizes[1], groups, &g, res.t.data);
      view_free(&dx);
    }
  } else if (!err) {
    err = transposed ? conv_transposed(K, x, vw.p, w->sizes[1], groups, &g, res.t.data)
                     : conv_forward(K, x, vw.p, cout, groups, &g, res.t.data);
  }
  if (!err && bias) add_bias(K, res.t.data, vb.p, x->sizes[0], cout, transposed ? g.img_n : g.pos_n);
  if (!err) copy_elems(out, &res.t);
  dense_free(&res);
  view_free(&vw);
  view_free(&vb);
  return err ? ref_fail(c, "out of memory") : 0;
}

/* convolution(input, weight, bias, stride, padding, dilation, transposed,
 * output_padding, groups); output_padding only shapes the output, which
 * shape inference already did. */
static int k_convolution(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0], *x = ref_tensor(c, "input");
  bool transposed = false;
  int64_t groups = 1;
  ref_bool(c, "transposed", &transposed);
  ref_int(c, "groups", &groups);
  num_kind k = kind_of(out->dtype);
  tview vx;
  if (!x || view_of(x, k, false, &vx)) return ref_fail(c, "out of memory");
  int err = conv_run(c, &vx, ref_tensor(c, "weight"), ref_tensor(c, "bias"), transposed, groups, out, k);
  view_free(&vx);
  return err;
}

/* conv2d(input, weight, bias, stride, padding, dilation, groups): a (C, H,
 * W) input is one batch item. */
static int k_conv2d(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0], *x = ref_tensor(c, "input");
  int64_t groups = 1;
  ref_int(c, "groups", &groups);
  num_kind k = kind_of(out->dtype);
  tview vx;
  if (!x || view_of(x, k, false, &vx)) return ref_fail(c, "out of memory");
  if (vx.rank == 3) {
    memmove(vx.sizes + 1, vx.sizes, sizeof *vx.sizes * 3);
    memmove(vx.st + 1, vx.st, sizeof *vx.st * 3);
    vx.sizes[0] = 1;
    vx.st[0] = 0;
    vx.rank = 4;
  }
  int err = conv_run(c, &vx, ref_tensor(c, "weight"), ref_tensor(c, "bias"), false, groups, out, k);
  view_free(&vx);
  return err;
}

/* convolution_backward(grad_output, input, weight, bias_sizes, stride,
 * padding, dilation, transposed, output_padding, groups, output_mask) ->
 * (grad_input, grad_weight, grad_bias). For the plain convolution y =
 * w * im2col(x): grad_input is the transposed convolution of grad_output
 * (col2im(w^T gy)), grad_weight sums gy im2col(x)^T over the batch. For the
 * transposed one, y = col2im(w^T x): grad_input is the plain convolution of
 * grad_output, grad_weight sums x im2col(gy)^T. grad_bias sums gy over all
 * but the channel dim. Outputs off in the mask are zero. */
static int k_convolution_backward(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *go = ref_tensor(c, "grad_output"), *x = ref_tensor(c, "input"),
                            *w = ref_tensor(c, "weight");
  if (!go || !x || !w) return ref_fail(c, "missing tensor argument");
  bool transposed = false, mask[3] = {true, true, true};
  int64_t groups = 1;
  ref_bool(c, "transposed", &transposed);
  ref_int(c, "groups", &groups);
  int64_t m[3]; /* bool[3], read as ints */
  int nm = ref_ints(c, "output_mask", m, 3);
  for (int i = 0; i < nm; i++) mask[i] = m[i] != 0;
  int n = x->rank - 2;
  if (n < 1 || n > 3 || groups < 1)
    return ref_fail(c, "convolution_backward: %d spatial dims, groups %lld", n, (long long)groups);
  num_kind k = kind_of(go->dtype);
  const kit *K = kits[k];
  geom g; /* the forward's image is x (plain) or y (transposed) */
  if (transposed) conv_geom(c, n, go->sizes + 2, w->sizes + 2, x->sizes + 2, &g);
  else conv_geom(c, n, x->sizes + 2, w->sizes + 2, go->sizes + 2, &g);
  tview vgo, vx, vw;
  if (view_of(go, k, true, &vgo)) return ref_fail(c, "out of memory");
  if (view_of(x, k, true, &vx)) return view_free(&vgo), ref_fail(c, "out of memory");
  if (view_of(w, k, true, &vw)) return view_free(&vgo), view_free(&vx), ref_fail(c, "out of memory");
  int err = 0;
  const alloy_kernel_tensor *gi = &c->outputs[0], *gw = &c->outputs[1], *gb = &c->outputs[2];
  if (mask[0]) {
    dense r;
    err = dense_new(&r, kind_dtype[k], gi->rank, gi->sizes);
    if (!err)
      err = transposed ? conv_forward(K, &vgo, vw.p, x->sizes[1], groups, &g, r.t.data)
                       : conv_transposed(K, &vgo, vw.p, x->sizes[1] / groups, groups, &g, r.t.data);
    if (!err) copy_elems(gi, &r.t);
    dense_free(&r);
  } else {
    zero_fill(gi);
  }
  if (mask[1] && !err) {
    dense r;
    err = dense_new(&r, kind_dtype[k], gw->rank, gw->sizes);
    if (!err)
      err = transposed ? conv_weight_grad(K, &vx, &vgo, x->sizes[1] / groups, w->sizes[1], groups,
                                          &g, r.t.data)
                       : conv_weight_grad(K, &vgo, &vx, w->sizes[0] / groups, w->sizes[1], groups,
                                          &g, r.t.data);
    if (!err) copy_elems(gw, &r.t);
    dense_free(&r);
  } else {
    zero_fill(gw);
  }
  if (mask[2] && !err) {
    int64_t C = go->sizes[1], npos = ref_numel(go) / max64(1, go->sizes[0] * C);
    for (int64_t ch = 0; ch < gb->sizes[0]; ch++) {
      double accf = 0.0;
      uint64_t acci = 0;
      for (int64_t b = 0; b < go->sizes[0]; b++)
        for (int64_t i = 0; i < npos; i++) {
          int64_t off = b * vgo.st[0] + ch * vgo.st[1] + i;
          if (is_float(go->dtype)) accf += ref_load_f(vgo.p, kind_dtype[k], off);
          else acci += (uint64_t)ref_load_i(vgo.p, kind_dtype[k], off);
        }
      if (is_float(gb->dtype)) ref_store_f(gb->data, gb->dtype, ch * gb->strides[0], accf);
      else ref_store_i(gb->data, gb->dtype, ch * gb->strides[0], (int64_t)acci);
    }
  } else {
    zero_fill(gb);
  }
  view_free(&vgo);
  view_free(&vx);
  view_free(&vw);
  return err ? ref_fail(c, "out of memory") : 0;
}

/* ---- distances ----------------------------------------------------------*/

/* The p-norm of the difference of two rows of m columns (a at ao, stride
 * as; b likewise): p = 0 counts nonzeros (min(ceil(|d|), 1): a NaN
 * difference makes NaN), inf takes the largest. Each step is rounded to t
 * as PyTorch's scalar loop computes in the dtype (float32 squares
 * overflow to inf). */
static double row_distance(const alloy_kernel_tensor *a, int64_t ao, int64_t as,
                           const alloy_kernel_tensor *b, int64_t bo, int64_t bs, int64_t m,
                           double p, alloy_dtype t) {
  double acc = 0.0;
  for (int64_t j = 0; j < m; j++) {
    double d = fabs(round_to(t, ref_load_f(a->data, a->dtype, ao + j * as) -
                                    ref_load_f(b->data, b->dtype, bo + j * bs)));
    if (p == 0.0) acc += isnan(d) ? d : d != 0.0;
    else if (isinf(p)) acc = d > acc || isnan(d) ? d : acc;
    else if (p == 1.0) acc = round_to(t, acc + d);
    else if (p == 2.0) acc = round_to(t, acc + round_to(t, d * d));
    else acc = round_to(t, acc + round_to(t, pow(d, p)));
  }
  if (p == 0.0 || p == 1.0 || isinf(p)) return acc;
  return p == 2.0 ? sqrt(acc) : pow(acc, 1.0 / p);
}

/* _cdist_forward(x1, x2, p, compute_mode): [*batch, r1, r2] distances of
 * the rows. compute_mode 1 (and None or 0 past 25 rows) makes PyTorch
 * compute p = 2 as sqrt(|a|^2 + |b|^2 - 2 a.b) by a matrix product, whose
 * rounding differs from the direct form: it is followed here. */
static int k_cdist(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0], *a = ref_tensor(c, "x1"), *b = ref_tensor(c, "x2");
  if (!a || !b) return ref_fail(c, "missing tensor argument");
  double p = 2.0;
  int64_t mode = 0;
  ref_float(c, "p", &p);
  ref_int(c, "compute_mode", &mode);
  int nb = out->rank - 2;
  int64_t r1 = a->sizes[a->rank - 2], r2 = b->sizes[b->rank - 2], m = a->sizes[a->rank - 1];
  bool use_mm = p == 2.0 && (mode == 1 || (mode == 0 && (r1 > 25 || r2 > 25)));
  int64_t nbatch = 1, idx[MAX_RANK] = {0};
  for (int d = 0; d < nb; d++) nbatch *= out->sizes[d];
  int64_t ars = a->strides[a->rank - 2], acs = a->strides[a->rank - 1];
  int64_t brs = b->strides[b->rank - 2], bcs = b->strides[b->rank - 1];
  for (int64_t bi = 0; bi < nbatch; bi++) {
    for (int64_t rem = bi, d = nb - 1; d >= 0; d--) {
      idx[d] = rem % out->sizes[d];
      rem /= out->sizes[d];
    }
    int64_t ao = batch_offset(a, 2, idx, nb, 1), bo = batch_offset(b, 2, idx, nb, 1), oo = 0;
    for (int d = 0; d < nb; d++) oo += idx[d] * out->strides[d];
    for (int64_t i = 0; i < r1; i++)
      for (int64_t j = 0; j < r2; j++) {
        double v;
        if (use_mm) {
          /* PyTorch's [-2 a, |a|^2, 1] . [b, 1, |b|^2], each piece a tensor
           * of the dtype (rounded to it), the sums in double here */
          alloy_dtype t = out->dtype;
          double na = 0.0, nbn = 0.0, dot = 0.0;
          for (int64_t k = 0; k < m; k++) {
            double x = ref_load_f(a->data, a->dtype, ao + i * ars + k * acs);
            double y = ref_load_f(b->data, b->dtype, bo + j * brs + k * bcs);
            na += round_to(t, x * x);
            nbn += round_to(t, y * y);
            dot += round_to(t, -2.0 * x) * y;
          }
          v = sqrt(fmax(round_to(t, dot + round_to(t, na) + round_to(t, nbn)), 0.0));
        } else {
          v = row_distance(a, ao + i * ars, acs, b, bo + j * brs, bcs, m, p, out->dtype);
        }
        ref_store_f(out->data, out->dtype, oo + i * out->strides[nb] + j * out->strides[nb + 1], v);
      }
  }
  return 0;
}

/* _pdist_forward(self, p): the distances of rows i < j, in row-major order
 * of the upper triangle. */
static int k_pdist(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0], *x = ref_tensor(c, "self");
  if (!x) return ref_fail(c, "missing tensor argument");
  double p = 2.0;
  ref_float(c, "p", &p);
  int64_t n = x->sizes[0], m = x->sizes[1], k = 0;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = i + 1; j < n; j++, k++)
      ref_store_f(out->data, out->dtype, k * out->strides[0],
                  row_distance(x, i * x->strides[0], x->strides[1], x, j * x->strides[0],
                               x->strides[1], m, p, out->dtype));
  return 0;
}

/* ---- vector ops ---------------------------------------------------------*/

/* linalg_cross(self, other, dim): the cross product along dim (size 3) of
 * the broadcast operands: out[i] = a[i+1] b[i+2] - a[i+2] b[i+1]. Each
 * product and the difference are rounded to the dtype, as PyTorch's kernel
 * computes in it; integers wrap. */
static int k_linalg_cross(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0], *a = ref_tensor(c, "self"), *b = ref_tensor(c, "other");
  if (!a || !b) return ref_fail(c, "missing tensor argument");
  int64_t dim = -1;
  ref_int(c, "dim", &dim);
  if (dim < 0) dim += out->rank;
  if (dim < 0 || dim >= out->rank || out->sizes[dim] != 3)
    return ref_fail(c, "linalg_cross: dim %lld does not have size 3", (long long)dim);
  /* iterate the output with dim pinned to 0, then visit the 3 components */
  int64_t sizes[MAX_RANK];
  memcpy(sizes, out->sizes, sizeof *sizes * (size_t)out->rank);
  sizes[dim] = 1;
  alloy_kernel_tensor o1 = {out->data, out->dtype, out->rank, sizes, out->strides};
  const alloy_kernel_tensor *ins[2] = {a, b};
  int64_t sa = a->sizes[dim - (out->rank - a->rank)] == 1 ? 0 : a->strides[dim - (out->rank - a->rank)];
  int64_t sb = b->sizes[dim - (out->rank - b->rank)] == 1 ? 0 : b->strides[dim - (out->rank - b->rank)];
  bool fl = is_float(out->dtype);
  ref_iter it;
  ref_iter_init(&it, &o1, ins, 2);
  while (ref_iter_next(&it)) {
    for (int i = 0; i < 3; i++) {
      int j = (i + 1) % 3, k = (i + 2) % 3;
      int64_t oo = it.offset[0] + i * out->strides[dim];
      if (fl) {
        double aj = ref_load_f(a->data, a->dtype, it.offset[1] + j * sa), ak = ref_load_f(a->data, a->dtype, it.offset[1] + k * sa);
        double bj = ref_load_f(b->data, b->dtype, it.offset[2] + j * sb), bk = ref_load_f(b->data, b->dtype, it.offset[2] + k * sb);
        ref_store_f(out->data, out->dtype, oo, round_to(out->dtype, aj * bk) - round_to(out->dtype, ak * bj));
      } else {
        uint64_t aj = (uint64_t)ref_load_i(a->data, a->dtype, it.offset[1] + j * sa), ak = (uint64_t)ref_load_i(a->data, a->dtype, it.offset[1] + k * sa);
        uint64_t bj = (uint64_t)ref_load_i(b->data, b->dtype, it.offset[2] + j * sb), bk = (uint64_t)ref_load_i(b->data, b->dtype, it.offset[2] + k * sb);
        ref_store_i(out->data, out->dtype, oo, (int64_t)(aj * bk - ak * bj));
      }
    }
  }
  return 0;
}

/* renorm(self, p, dim, maxnorm): each slice along dim whose p-norm exceeds
 * maxnorm is scaled by maxnorm / (norm + 1e-7). As PyTorch: the norm in
 * opmath, the factor rounded to the dtype, then self * factor. */
static int k_renorm(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0], *x = ref_tensor(c, "self");
  if (!x || x->rank < 1) return ref_fail(c, "missing tensor argument");
  double p = 2.0, maxnorm = 0.0;
  int64_t dim = 0;
  ref_float(c, "p", &p);
  ref_float(c, "maxnorm", &maxnorm);
  ref_int(c, "dim", &dim);
  if (dim < 0) dim += x->rank;
  if (dim < 0 || dim >= x->rank) return ref_fail(c, "renorm: dim %lld out of range", (long long)dim);
  int64_t ns = x->sizes[dim];
  ref_pnorm *acc = malloc(sizeof(ref_pnorm) * (size_t)max64(1, ns));
  double *factor = malloc(sizeof(double) * (size_t)max64(1, ns));
  if (!acc || !factor) {
    free(acc);
    free(factor);
    return ref_fail(c, "out of memory");
  }
  for (int64_t i = 0; i < ns; i++) acc[i] = ref_pnorm_start(p);
  ref_iter it;
  ref_iter_init(&it, x, NULL, 0);
  while (ref_iter_next(&it))
    ref_pnorm_add(&acc[it.index[dim]], ref_load_f(x->data, x->dtype, it.offset[0]));
  /* float32, float16 and bfloat16 accumulate the norm in float32, where a
   * sum past FLT_MAX is inf (the factor is then 0). */
  bool single = ref_float32_opmath(x->dtype);
  for (int64_t i = 0; i < ns; i++) {
    double norm = ref_pnorm_value(&acc[i], single);
    factor[i] = round_to(out->dtype, norm > maxnorm ? maxnorm / (norm + 1e-7) : 1.0);
  }
  const alloy_kernel_tensor *in = x;
  ref_iter_init(&it, out, &in, 1);
  while (ref_iter_next(&it))
    ref_store_f(out->data, out->dtype, it.offset[0],
                ref_load_f(x->data, x->dtype, it.offset[1]) * factor[it.index[dim]]);
  free(acc);
  free(factor);
  return 0;
}

const alloy_kernel ref_kernels_nn[] = {
    REF_KERNEL("aten.mm.default", k_mm),
    REF_KERNEL("aten.bmm.default", k_bmm),
    REF_KERNEL("aten.mv.default", k_mv),
    REF_KERNEL("aten.dot.default", k_dot),
    REF_KERNEL("aten.vdot.default", k_vdot),
    REF_KERNEL("aten.addmm.default", k_addmm),
    REF_KERNEL("aten.baddbmm.default", k_baddbmm),
    REF_KERNEL("aten.addbmm.default", k_addbmm),
    REF_KERNEL("aten.addmv.default", k_addmv),
    REF_KERNEL("aten.addr.default", k_addr),
    REF_KERNEL("aten.linear.default", k_linear),
    REF_KERNEL("aten._trilinear.default", k_trilinear),
    REF_KERNEL("aten.scaled_dot_product_attention.default", k_sdpa),
    REF_KERNEL("aten.convolution.default", k_convolution),
    REF_KERNEL("aten.conv2d.default", k_conv2d),
    REF_KERNEL("aten.convolution_backward.default", k_convolution_backward),
    REF_KERNEL("aten._cdist_forward.default", k_cdist),
    REF_KERNEL("aten._pdist_forward.default", k_pdist),
    REF_KERNEL("aten.linalg_cross.default", k_linalg_cross),
    REF_KERNEL("aten.renorm.default", k_renorm),
    {NULL, NULL, NULL, NULL},
};
