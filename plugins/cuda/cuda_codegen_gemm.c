/*
 * plugins/cuda/cuda_codegen_gemm.c: Alloy's own matrix-product and
 * convolution kernels, written as CUDA C into the plan's module, so that
 * NVRTC and hipRTC compile the same text (the HIP build has no cuBLASLt or
 * cuDNN; the CUDA build takes them with the option vendor_libs=0).
 * cg_emit_gemm (cuda_codegen_rows.c) and cg_emit_conv (cuda_codegen_conv.c)
 * describe the step as they would for the vendor library, then hand it here.
 *
 * One kernel shape serves both: a block of 256 threads computes a BM x BN
 * tile of D = A B, walking K in steps of BK; the A and B tiles are staged
 * in shared memory as float (16-bit operands are widened as they are
 * loaded), double-buffered so that one __syncthreads a step suffices and
 * the next step's global loads are in flight while this one computes.
 * Each thread accumulates a TM x TN micro-tile in registers with fmaf in
 * float (float32 exact: no TF32), made of 4 x 4 pieces strided across the
 * tile so that the shared-memory reads of a warp fall in distinct banks
 * and its stores are contiguous. Sizes, strides and offsets are constants
 * of the text, as everywhere in the code generator; tiles at the edges are
 * bounds-checked (a value outside is read as 0). Nothing assumes a warp
 * size: the kernels use shared memory and __syncthreads only.
 *
 * A convolution is an implicit GEMM per group (grid z): rows the group's
 * output channels, columns N x the output's spatial positions, K its input
 * channels times the window taps; A is the weight, read as a matrix, and
 * B gathers the input through its strides, padding reading 0. Columns are
 * the spatial positions so that a warp's loads and stores run along the
 * input's and output's innermost dim.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/cuda/cuda_codegen.h"

enum { TILE_THREADS = 256 };

/* A block's tile: BM x BN outputs, BK of K a step, each thread TM x TN
 * (TM, TN multiples of 4; (BM / TM) * (BN / TN) == TILE_THREADS). */
typedef struct tile_cfg {
  int bm, bn, tm, tn, bk;
} tile_cfg;

/* The shapes to choose from: square tiles for large products, narrow ones
 * for a product with few rows (a depthwise convolution's one channel, a
 * matrix-vector product) or few columns. */
static const tile_cfg tile_cfgs[] = {
    {.bm = 128, .bn = 128, .tm = 8, .tn = 8, .bk = 8},
    {.bm = 128, .bn = 64, .tm = 8, .tn = 4, .bk = 8},
    {.bm = 64, .bn = 128, .tm = 4, .tn = 8, .bk = 8},
    {.bm = 64, .bn = 64, .tm = 4, .tn = 4, .bk = 16},
    {.bm = 16, .bn = 256, .tm = 4, .tn = 4, .bk = 8},
    {.bm = 256, .bn = 16, .tm = 4, .tn = 4, .bk = 8},
};
enum { CFG_SMALL = 3, CFG_FEW_ROWS = 4, CFG_FEW_COLS = 5 };

/* Blocks enough to fill a large GPU (an H100 has 132 SMs) before a larger
 * tile is worth its idle SMs. */
#define TILE_BLOCKS_WANTED 120

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The tile for an M x N product over z batches: the one wasting the least
 * of its blocks' area at the edges among those giving enough blocks (ties:
 * the larger), else the smallest. */
static const tile_cfg *choose_tile(int64_t m, int64_t n, int64_t z) {
  if (m <= 16 && n >= 64) return &tile_cfgs[CFG_FEW_ROWS];
  if (n <= 16 && m >= 64) return &tile_cfgs[CFG_FEW_COLS];
  const tile_cfg *best = NULL;
  double best_waste = 0;
  for (int i = 0; i <= CFG_SMALL; i++) {
    const tile_cfg *c = &tile_cfgs[i];
    int64_t tm = cdiv(m, c->bm), tn = cdiv(n, c->bn);
    if (tm * tn * z < TILE_BLOCKS_WANTED) continue;
    double waste = (double)(tm * c->bm * tn * c->bn) / ((double)m * (double)n);
    if (!best || waste < best_waste - 1e-9) best = c, best_waste = waste;
  }
  return best ? best : &tile_cfgs[CFG_SMALL];
}

/* ---- operands ---------------------------------------------------------------*/

enum { OPND_STRIDED = 0, OPND_CONV_X };

/* The geometry of a convolution, its tensors lifted to 2 or 3 spatial dims
 * (a 1-d convolution gets a height of 1). */
typedef struct conv_geom {
  int nsp;                              /* spatial dims: 2 or 3 */
  int64_t n, cg, cog, groups;           /* batch, input and output channels a group */
  int64_t in[3], out[3], win[3];        /* spatial sizes: input, output, window */
  int64_t stride[3], pad[3], dil[3];
  int64_t xs[5], ys[5];                 /* x's and y's strides, N, C, spatial... */
  int64_t xoff, yoff;
} conv_geom;

/* One operand of the tile product, as the tile loads see it: element (o, k)
 * (o a row of A, or a column of B) of batch z. */
typedef struct operand {
  int kind;          /* OPND_* */
  int param;         /* its kernel parameter, p<param> */
  alloy_dtype dtype;
  /* OPND_STRIDED: at off + z * zs + o * so + k * sk */
  int64_t off, so, sk, zs;
  int64_t ext;       /* o's extent: M for A, N for B */
  bool along_o;      /* a warp's loads run along o (else along k) */
  int vec;           /* elements a load: 4 where alignment allows, else 1 */
  const conv_geom *cv; /* OPND_CONV_X */
} operand;

/* A tile product: D (M x N, Z batches) = A (M x K) B (K x N). */
typedef struct tile_product {
  const tile_cfg *cfg;
  int64_t m, n, k, z;
  operand a, b;
  const char *params; /* the kernel's parameter list, "const char *p0, ..." */
} tile_product;

/* Loads of 4 elements where the unit-stride dim, the other strides and
 * the offset are multiples of 4 (so every load is aligned, and a load at
 * the edge is wholly inside or wholly outside). */
static int strided_vec(const operand *op, int64_t k) {
  int64_t unit_ext = op->along_o ? op->ext : k, other = op->along_o ? op->sk : op->so;
  bool unit = op->along_o ? op->so == 1 : op->sk == 1;
  if (!unit || unit_ext % 4 || op->off % 4 || op->zs % 4) return 1;
  if (unit_ext > 1 && other % 4) return 1;
  return 4;
}

/* The text of the module's helpers for the tile kernels (once a module). */
static const char tile_helpers[] =
    "#ifndef ALLOY_TILE_HELPERS\n#define ALLOY_TILE_HELPERS\n"
    "struct alignas(16) af4 { float v[4]; };\n"
    "struct alignas(8) ah4 { unsigned short v[4]; };\n"
    "__device__ __forceinline__ void ld4_f32(const char *p, i64 k, float *r) {\n"
    "  const af4 t = *(const af4 *)((const float *)p + k);\n"
    "  r[0] = t.v[0]; r[1] = t.v[1]; r[2] = t.v[2]; r[3] = t.v[3]; }\n"
    "#define LD4_16(tag) __device__ __forceinline__ void ld4_##tag(const char *p, i64 k, float *r) {\\\n"
    "  const ah4 t = *(const ah4 *)((const unsigned short *)p + k);\\\n"
    "  r[0] = tag##_to_f32(t.v[0]); r[1] = tag##_to_f32(t.v[1]);\\\n"
    "  r[2] = tag##_to_f32(t.v[2]); r[3] = tag##_to_f32(t.v[3]); }\n"
    "LD4_16(f16) LD4_16(bf16)\n"
    "__device__ __forceinline__ void st4_f32(char *p, i64 k, const float *r) {\n"
    "  af4 t; t.v[0] = r[0]; t.v[1] = r[1]; t.v[2] = r[2]; t.v[3] = r[3];\n"
    "  *(af4 *)((float *)p + k) = t; }\n"
    "#define ST4_16(tag) __device__ __forceinline__ void st4_##tag(char *p, i64 k, const float *r) {\\\n"
    "  ah4 t; t.v[0] = f32_to_##tag(r[0]); t.v[1] = f32_to_##tag(r[1]);\\\n"
    "  t.v[2] = f32_to_##tag(r[2]); t.v[3] = f32_to_##tag(r[3]);\\\n"
    "  *(ah4 *)((unsigned short *)p + k) = t; }\n"
    "ST4_16(f16) ST4_16(bf16)\n"
    /* cuBLASLt's GELU epilogue: the tanh approximation */
    "__device__ __forceinline__ float gelu_tanh(float x) {\n"
    "  return 0.5f * x * (1.f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x))); }\n"
    "#endif\n";

/* " + <v> * <s>" for a stride s that is not 0 ("" then), without "* 1". */
static void term(char *buf, size_t cap, const char *v, int64_t s) {
  if (s == 0) buf[0] = 0;
  else if (s == 1) snprintf(buf, cap, " + %s", v);
  else snprintf(buf, cap, " + %s * %" PRId64, v, s);
}

/* The unit u's (o, kk) in the tile, as declarations. */
static void unit_coords(text *s, const operand *op, int rows, int bk, const char *ind) {
  int v = op->vec;
  if (op->along_o)
    cg_put(s, "%sconst int o = (u %% %d) * %d, kk = u / %d;\n", ind, rows / v, v, rows / v);
  else
    cg_put(s, "%sconst int kk = (u %% %d) * %d, o = u / %d;\n", ind, bk / v, v, bk / v);
}

static int units_of(const operand *op, int rows, int bk) { return rows * bk / op->vec; }

/* Before the K loop: what each of a thread's units of a convolution's input
 * keeps (its column's batch offset and the window's first input position). */
static void emit_conv_setup(text *s, const tile_product *tp, const operand *op, int rows) {
  const conv_geom *cv = op->cv;
  int units = units_of(op, rows, tp->cfg->bk), per = (units + TILE_THREADS - 1) / TILE_THREADS;
  cg_put(s, "    i64 xb[%d]; bool ok[%d]; int q0[%d], q1[%d];\n", per, per, per, per);
  if (cv->nsp == 3) cg_put(s, "    int q2[%d];\n", per);
  cg_put(s, "    #pragma unroll\n    for (int j = 0; j < %d; j++) {\n", per);
  cg_put(s, "      const int u = threadIdx.x + j * %d;\n", TILE_THREADS);
  unit_coords(s, op, rows, tp->cfg->bk, "      ");
  cg_put(s, "      (void)kk;\n      i64 r = n0 + o;\n      ok[j] = r < %" PRId64 ";\n", tp->n);
  const char *q[3] = {"q0", "q1", "q2"};
  for (int d = cv->nsp - 1; d >= 0; d--) {
    cg_put(s, "      { const i64 p = r %% %" PRId64 "; r /= %" PRId64 "; %s[j] = (int)(p * %" PRId64 " - %" PRId64
              "); }\n", cv->out[d], cv->out[d], q[d], cv->stride[d], cv->pad[d]);
  }
  cg_put(s, "      xb[j] = %" PRId64 " + bz * %" PRId64 " + r * %" PRId64 ";\n    }\n", cv->xoff, cv->cg * cv->xs[1],
         cv->xs[0]);
}

/* Loads the thread's units of operand op's tile at k0 into registers r<name>. */
static void emit_tile_load(text *s, const tile_product *tp, const operand *op, int rows, const char *name,
                           const char *obase) {
  const int bk = tp->cfg->bk, v = op->vec, units = units_of(op, rows, bk);
  const int per = (units + TILE_THREADS - 1) / TILE_THREADS;
  const char *tag = cg_dtype_tag(op->dtype);
  cg_put(s, "      #pragma unroll\n      for (int j = 0; j < %d; j++) {\n", per);
  cg_put(s, "        const int u = threadIdx.x + j * %d;\n", TILE_THREADS);
  if (units % TILE_THREADS) cg_put(s, "        if (u >= %d) break;\n", units);
  unit_coords(s, op, rows, bk, "        ");
  if (op->kind == OPND_STRIDED) {
    cg_put(s, "        const i64 go = %s + o, gk = k0 + kk;\n", obase);
    char to[64], tk[64], tz[64];
    term(to, sizeof to, "go", op->so), term(tk, sizeof tk, "gk", op->sk), term(tz, sizeof tz, "bz", op->zs);
    cg_put(s, "        if (go < %" PRId64 " && gk < %" PRId64 ") {\n", op->ext, tp->k);
    cg_put(s, "          const i64 at = %" PRId64 "%s%s%s;\n", op->off, tz, to, tk);
    if (v == 4) /* a partition's input may start anywhere: aligned pointers only */
      cg_put(s, "          if (al%s) ld4_%s(p%d, at, &r%s[j * 4]);\n"
                "          else for (int e = 0; e < 4; e++) r%s[j * 4 + e] = ld_%s(p%d, at + e);\n",
             name, tag, op->param, name, name, tag, op->param);
    else cg_put(s, "          r%s[j] = ld_%s(p%d, at);\n", name, tag, op->param);
    cg_put(s, "        } else {\n");
    for (int e = 0; e < v; e++) cg_put(s, "          r%s[j * %d + %d] = 0.f;\n", name, v, e);
    cg_put(s, "        }\n      }\n");
    return;
  }
  /* a convolution's input: k is (channel, window taps...), padding reads 0 */
  const conv_geom *cv = op->cv;
  int64_t taps = cv->win[0] * cv->win[1] * (cv->nsp == 3 ? cv->win[2] : 1);
  cg_put(s, "        const i64 gk = k0 + kk;\n        (void)o;\n");
  cg_put(s, "        float x = 0.f;\n        if (ok[j] && gk < %" PRId64 ") {\n", tp->k);
  cg_put(s, "          const int c = (int)(gk / %" PRId64 "), t = (int)(gk %% %" PRId64 ");\n", taps, taps);
  const char *q[3] = {"q0", "q1", "q2"};
  int64_t inner = 1;
  for (int d = cv->nsp - 1; d >= 0; d--) {
    cg_put(s, "          const int i%d = %s[j] + (t / %" PRId64 ") %% %" PRId64 " * %" PRId64 ";\n", d, q[d], inner,
           cv->win[d], cv->dil[d]);
    inner *= cv->win[d];
  }
  cg_put(s, "          if (");
  for (int d = 0; d < cv->nsp; d++)
    cg_put(s, "%s(unsigned)i%d < %" PRId64 "u", d ? " && " : "", d, cv->in[d]);
  cg_put(s, ")\n            x = ld_%s(p%d, xb[j] + c * (i64)%" PRId64, tag, op->param, cv->xs[1]);
  for (int d = 0; d < cv->nsp; d++) cg_put(s, " + i%d * (i64)%" PRId64, d, cv->xs[2 + d]);
  cg_put(s, ");\n        }\n        r%s[j] = x;\n      }\n", name);
}

/* Stores the registers r<name> into shared tile <name>s[buf]. */
static void emit_tile_store(text *s, const tile_product *tp, const operand *op, int rows, const char *name,
                            const char *buf) {
  const int bk = tp->cfg->bk, v = op->vec, units = units_of(op, rows, bk);
  const int per = (units + TILE_THREADS - 1) / TILE_THREADS;
  cg_put(s, "      #pragma unroll\n      for (int j = 0; j < %d; j++) {\n", per);
  cg_put(s, "        const int u = threadIdx.x + j * %d;\n", TILE_THREADS);
  if (units % TILE_THREADS) cg_put(s, "        if (u >= %d) break;\n", units);
  unit_coords(s, op, rows, bk, "        ");
  cg_put(s, "        #pragma unroll\n        for (int e = 0; e < %d; e++) sm.%s[%s][kk%s][o%s] = r%s[j * %d + e];\n",
         v, name, buf, op->along_o ? "" : " + e", op->along_o ? " + e" : "", name, v);
  cg_put(s, "      }\n");
}

/* The kernel up to its epilogue: the tiles, the K loop, the accumulators
 * acc[TM][TN] of rows m0 + ci * CSM + ty * 4 + i (ci < TM / 4, i < 4), and
 * columns n0 + cj * CSN + tx * 4 + jj. The epilogue follows inside the
 * batch loop (variable bz), then closes it and the kernel. */
static void emit_tile_body(text *s, const tile_product *tp) {
  const tile_cfg *c = tp->cfg;
  const int tx = c->bn / c->tn, ty = c->bm / c->tm;
  const int ua = (units_of(&tp->a, c->bm, c->bk) + TILE_THREADS - 1) / TILE_THREADS * tp->a.vec;
  const int ub = (units_of(&tp->b, c->bn, c->bk) + TILE_THREADS - 1) / TILE_THREADS * tp->b.vec;
  const int64_t kt = cdiv(tp->k, c->bk);
  cg_put(s, "%s", tile_helpers);
  cg_put(s, "extern \"C\" __global__ void __launch_bounds__(%d) KNAME(%s, i64 n) {\n", TILE_THREADS, tp->params);
  /* a row of 4 floats more than the tile: 16-byte reads stay aligned */
  cg_put(s, "  struct alignas(16) tiles { float a[2][%d][%d]; float b[2][%d][%d]; };\n", c->bk, c->bm + 4, c->bk,
         c->bn + 4);
  cg_put(s, "  __shared__ tiles sm;\n  (void)n;\n");
  cg_put(s, "  const int tx = threadIdx.x %% %d, ty = threadIdx.x / %d;\n", tx, tx);
  /* The vector loads' alignment, known only at run time: a partition's
   * input or output is a buffer at any byte offset (alloy_tensor.offset). */
  const operand *ops[2] = {&tp->a, &tp->b};
  for (int i = 0; i < 2; i++)
    if (ops[i]->vec == 4)
      cg_put(s, "  const bool al%c = ((unsigned long long)p%d & %zu) == 0;\n", "ab"[i], ops[i]->param,
             4 * alloy_dtype_size(ops[i]->dtype) - 1);
  cg_put(s, "  const i64 m0 = (i64)blockIdx.y * %d, n0 = (i64)blockIdx.x * %d;\n", c->bm, c->bn);
  cg_put(s, "  for (i64 bz = blockIdx.z; bz < %" PRId64 "; bz += gridDim.z) {\n", tp->z);
  if (tp->b.kind == OPND_CONV_X) emit_conv_setup(s, tp, &tp->b, c->bn);
  cg_put(s, "    float acc[%d][%d];\n", c->tm, c->tn);
  cg_put(s, "    #pragma unroll\n    for (int i = 0; i < %d; i++)\n      #pragma unroll\n"
            "      for (int j = 0; j < %d; j++) acc[i][j] = 0.f;\n", c->tm, c->tn);
  cg_put(s, "    float ra[%d], rb[%d];\n", ua, ub);
  cg_put(s, "    {\n      const i64 k0 = 0;\n");
  emit_tile_load(s, tp, &tp->a, c->bm, "a", "m0");
  emit_tile_load(s, tp, &tp->b, c->bn, "b", "n0");
  emit_tile_store(s, tp, &tp->a, c->bm, "a", "0");
  emit_tile_store(s, tp, &tp->b, c->bn, "b", "0");
  cg_put(s, "    }\n    __syncthreads();\n");
  cg_put(s, "    for (int kt = 0; kt < %" PRId64 "; kt++) {\n      const int cur = kt & 1;\n", kt);
  cg_put(s, "      const i64 k0 = (i64)(kt + 1) * %d;\n", c->bk);
  /* the next step's loads, in flight while this one computes */
  cg_put(s, "      if (kt + 1 < %" PRId64 ") {\n", kt);
  emit_tile_load(s, tp, &tp->a, c->bm, "a", "m0");
  emit_tile_load(s, tp, &tp->b, c->bn, "b", "n0");
  cg_put(s, "      }\n");
  cg_put(s, "      #pragma unroll\n      for (int kk = 0; kk < %d; kk++) {\n        float a[%d], b[%d];\n", c->bk,
         c->tm, c->tn);
  cg_put(s, "        #pragma unroll\n        for (int ci = 0; ci < %d; ci++) {\n", c->tm / 4);
  cg_put(s, "          const af4 t = *(const af4 *)&sm.a[cur][kk][ci * %d + ty * 4];\n", ty * 4);
  cg_put(s, "          a[ci * 4] = t.v[0]; a[ci * 4 + 1] = t.v[1]; a[ci * 4 + 2] = t.v[2]; a[ci * 4 + 3] = t.v[3];\n"
            "        }\n");
  cg_put(s, "        #pragma unroll\n        for (int cj = 0; cj < %d; cj++) {\n", c->tn / 4);
  cg_put(s, "          const af4 t = *(const af4 *)&sm.b[cur][kk][cj * %d + tx * 4];\n", tx * 4);
  cg_put(s, "          b[cj * 4] = t.v[0]; b[cj * 4 + 1] = t.v[1]; b[cj * 4 + 2] = t.v[2]; b[cj * 4 + 3] = t.v[3];\n"
            "        }\n");
  cg_put(s, "        #pragma unroll\n        for (int i = 0; i < %d; i++)\n          #pragma unroll\n"
            "          for (int j = 0; j < %d; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);\n      }\n",
         c->tm, c->tn);
  cg_put(s, "      if (kt + 1 < %" PRId64 ") {\n", kt);
  emit_tile_store(s, tp, &tp->a, c->bm, "a", "cur ^ 1");
  emit_tile_store(s, tp, &tp->b, c->bn, "b", "cur ^ 1");
  cg_put(s, "      }\n      __syncthreads();\n    }\n");
}

/* The loops over a thread's outputs that both epilogues open: row, then
 * col, the first of 4 columns (cj's piece), its values in v[4]. */
static void emit_epilogue_loops(text *s, const tile_product *tp, const char *rows_bound) {
  const tile_cfg *c = tp->cfg;
  const int ty = c->bm / c->tm;
  cg_put(s, "    #pragma unroll\n    for (int ci = 0; ci < %d; ci++)\n", c->tm / 4);
  cg_put(s, "    #pragma unroll\n    for (int i = 0; i < 4; i++) {\n");
  cg_put(s, "      const i64 row = m0 + ci * %d + ty * 4 + i;\n      if (row >= %s) continue;\n", ty * 4, rows_bound);
}

/* Adds a LAUNCH_KERNEL step of tile product tp's kernel text def over the
 * bases given (its parameters, in order). */
static void add_tile_launch(builder *b, const alloy_node *n, const tile_product *tp, text *def, const int *bases,
                            int nbases, const char *what) {
  if (def->oom) {
    free(def->s);
    return (void)cg_fail(b, n, "out of memory");
  }
  const int64_t gx = cdiv(tp->n, tp->cfg->bn), gy = cdiv(tp->m, tp->cfg->bm);
  if (gx > INT32_MAX || gy > 65535) {
    free(def->s);
    return (void)cg_fail(b, n, "a product of %" PRId64 " x %" PRId64 " tiles, past the grid's limits", gy, gx);
  }
  int id = cg_custom_kernel(b, def->s, nbases);
  free(def->s);
  cuda_launch *l = cg_add_launch(b);
  if (!l) return;
  snprintf(l->name, sizeof l->name, "k%d", id), l->kernel = id;
  snprintf(l->what, sizeof l->what, "%s", what);
  l->kind = LAUNCH_KERNEL;
  l->n = 1;
  l->block = TILE_THREADS;
  l->grid[0] = (unsigned)gx, l->grid[1] = (unsigned)gy;
  l->grid[2] = (unsigned)(tp->z < 65535 ? tp->z : 65535);
  l->nbases = nbases;
  l->bases = malloc(sizeof *l->bases * (size_t)nbases);
  if (!l->bases) return (void)cg_fail(b, n, "out of memory");
  memcpy(l->bases, bases, sizeof *bases * (size_t)nbases);
}

/* ---- products --------------------------------------------------------------*/

/* The tile kernel of product step l (a LAUNCH_GEMM as cg_emit_gemm plans it
 * for cuBLASLt): D = alpha op(A) op(B) + beta C + bias, then the
 * activation, over the batch; the arithmetic in float, D rounded once. */
void cg_gemm_kernel(builder *b, const alloy_node *n, const cuda_launch *l) {
  const cuda_gemm_desc *g = &l->gemm;
  const char *tag = cg_dtype_tag(g->dtype);
  tile_product tp = {.m = g->m, .n = g->n, .k = g->k, .z = g->batch};
  tp.cfg = choose_tile(g->m, g->n, g->batch);
  /* A's element (row i, k) and B's (k, column j), each as operand (o, k) */
  tp.a = (operand){.kind = OPND_STRIDED, .param = 0, .dtype = g->dtype, .off = l->goff[GEMM_A],
                   .so = g->trans_a ? 1 : g->lda, .sk = g->trans_a ? g->lda : 1, .zs = g->stride_a, .ext = g->m};
  tp.b = (operand){.kind = OPND_STRIDED, .param = 1, .dtype = g->dtype, .off = l->goff[GEMM_B],
                   .so = g->trans_b ? g->ldb : 1, .sk = g->trans_b ? 1 : g->ldb, .zs = g->stride_b, .ext = g->n};
  tp.a.along_o = tp.a.so == 1 && tp.a.sk != 1;
  tp.b.along_o = !(tp.b.sk == 1 && tp.b.so != 1);
  tp.a.vec = strided_vec(&tp.a, g->k), tp.b.vec = strided_vec(&tp.b, g->k);
  int bases[GEMM_OPERANDS], nb = 0, pc = -1, pbias = -1, pd;
  bases[nb++] = l->gbase[GEMM_A], bases[nb++] = l->gbase[GEMM_B];
  char params[256];
  int len = snprintf(params, sizeof params, "const char *__restrict__ p0, const char *__restrict__ p1");
  if (g->has_c) { /* C may be D (in place): neither is __restrict__ */
    pc = nb, bases[nb++] = l->gbase[GEMM_C];
    len += snprintf(params + len, sizeof params - (size_t)len, ", const char *p%d", pc);
  }
  if (g->bias) {
    pbias = nb, bases[nb++] = l->gbase[GEMM_BIAS];
    len += snprintf(params + len, sizeof params - (size_t)len, ", const char *__restrict__ p%d", pbias);
  }
  pd = nb, bases[nb++] = l->gbase[GEMM_D];
  snprintf(params + len, sizeof params - (size_t)len, ", char *p%d", pd);
  tp.params = params;

  text s = {0};
  emit_tile_body(&s, &tp);
  char mb[32];
  snprintf(mb, sizeof mb, "%" PRId64, g->m);
  emit_epilogue_loops(&s, &tp, mb);
  const int64_t doff = l->goff[GEMM_D];
  const bool vec_d = g->n % 4 == 0 && doff % 4 == 0;
  cg_put(&s, "      #pragma unroll\n      for (int cj = 0; cj < %d; cj++) {\n", tp.cfg->tn / 4);
  cg_put(&s, "        const i64 col = n0 + cj * %d + tx * 4;\n        float v[4];\n", tp.cfg->bn / tp.cfg->tn * 4);
  cg_put(&s, "        #pragma unroll\n        for (int jj = 0; jj < 4; jj++) {\n");
  cg_put(&s, "          const i64 cc = col + jj;\n          float x = acc[ci * 4 + i][cj * 4 + jj]");
  if (g->alpha != 1) cg_put(&s, " * (float)%.17g", g->alpha); /* alpha and beta are float, as cuBLASLt's */
  cg_put(&s, ";\n          if (cc < %" PRId64 ") {\n", g->n);
  if (g->has_c) {
    char tz[64], tr[64];
    term(tz, sizeof tz, "bz", g->stride_c), term(tr, sizeof tr, "row", g->ldc);
    cg_put(&s, "            const float cv = ld_%s(p%d, %" PRId64 "%s%s + cc);\n", tag, pc, l->goff[GEMM_C], tz, tr);
    if (g->beta == 1) cg_put(&s, "            x += cv;\n");
    else cg_put(&s, "            x = fmaf((float)%.17g, cv, x);\n", g->beta);
  }
  if (g->bias) cg_put(&s, "            x += ld_%s(p%d, %" PRId64 " + cc);\n", tag, pbias, l->goff[GEMM_BIAS]);
  if (g->activation == 1) cg_put(&s, "            x = op_relu(x);\n");
  else if (g->activation == 2) cg_put(&s, "            x = gelu_tanh(x);\n");
  cg_put(&s, "          }\n          v[jj] = x;\n        }\n");
  cg_put(&s, "        const i64 at = %" PRId64 " + bz * %" PRId64 " + row * %" PRId64 " + col;\n", doff, g->m * g->n,
         g->n);
  if (vec_d)
    cg_put(&s, "        if (col < %" PRId64 " && ((unsigned long long)p%d & %zu) == 0) st4_%s(p%d, at, v);\n"
               "        else\n", g->n, pd, 4 * alloy_dtype_size(g->dtype) - 1, tag, pd);
  cg_put(&s, "        #pragma unroll\n        for (int jj = 0; jj < 4; jj++)\n"
             "          if (col + jj < %" PRId64 ") st_%s(p%d, at + jj, v[jj]);\n", g->n, tag, pd);
  cg_put(&s, "      }\n    }\n  }\n}\n");
  add_tile_launch(b, n, &tp, &s, bases, nb, l->what);
}

/* ---- convolutions ------------------------------------------------------------*/

/* y = conv(x, w) (+ bias along dim 1) as an implicit GEMM per group. The
 * tensors are rank 3 to 5 with their own strides (x and y are read and
 * written where they are); w must have its (C_in / groups, window) dims
 * packed, so that a row of A is a run of memory (the caller copies it
 * otherwise). In float, the bias added before the one rounding to y's
 * dtype: as the reference backend, and cuDNN's graph with the bias fused
 * (the conformance suite holds a 16-bit y to that). */
void cg_conv_kernel(builder *b, const alloy_node *n, const cuda_tensor *x, const cuda_tensor *w,
                    const cuda_tensor *bias, const cuda_tensor *y, const int64_t *stride, const int64_t *pad,
                    const int64_t *dil, int64_t groups, const char *what) {
  if (groups < 1 || x->sizes[1] % groups || y->sizes[1] % groups || w->sizes[0] != y->sizes[1])
    return (void)cg_fail(b, n, "%" PRId64 " groups do not divide the convolution's channels", groups);
  conv_geom cv = {.groups = groups, .xoff = x->offset, .yoff = y->offset};
  /* lift a 1-d convolution to 2-d: a height of 1 */
  const bool lift = x->rank == 3;
  cv.nsp = lift ? 2 : x->rank - 2;
  cv.xs[0] = x->strides[0], cv.xs[1] = x->strides[1];
  cv.ys[0] = y->strides[0], cv.ys[1] = y->strides[1];
  for (int d = 0, s = 0; d < cv.nsp; d++) {
    bool one = lift && d == 0;
    cv.in[d] = one ? 1 : x->sizes[2 + s], cv.out[d] = one ? 1 : y->sizes[2 + s], cv.win[d] = one ? 1 : w->sizes[2 + s];
    cv.xs[2 + d] = one ? 0 : x->strides[2 + s], cv.ys[2 + d] = one ? 0 : y->strides[2 + s];
    cv.stride[d] = one ? 1 : stride[s], cv.pad[d] = one ? 0 : pad[s], cv.dil[d] = one ? 1 : dil[s];
    if (!one) s++;
  }
  cv.n = x->sizes[0], cv.cg = x->sizes[1] / groups, cv.cog = y->sizes[1] / groups;
  int64_t taps = 1, cols = cv.n;
  for (int d = 0; d < cv.nsp; d++) taps *= cv.win[d], cols *= cv.out[d];
  tile_product tp = {.m = cv.cog, .n = cols, .k = cv.cg * taps, .z = groups};
  tp.cfg = choose_tile(tp.m, tp.n, tp.z);
  tp.a = (operand){.kind = OPND_STRIDED, .param = 1, .dtype = w->dtype, .off = w->offset, .so = w->strides[0],
                   .sk = 1, .zs = cv.cog * w->strides[0], .ext = cv.cog};
  tp.a.vec = strided_vec(&tp.a, tp.k);
  tp.b = (operand){.kind = OPND_CONV_X, .param = 0, .dtype = x->dtype, .ext = cols, .along_o = true, .vec = 1,
                   .cv = &cv};
  const char *tag = cg_dtype_tag(y->dtype);
  int bases[4] = {x->base, w->base}, nb = 2;
  char params[192];
  int len = snprintf(params, sizeof params, "const char *__restrict__ p0, const char *__restrict__ p1");
  if (bias) {
    bases[nb++] = bias->base;
    len += snprintf(params + len, sizeof params - (size_t)len, ", const char *__restrict__ p2");
  }
  bases[nb] = y->base;
  snprintf(params + len, sizeof params - (size_t)len, ", char *__restrict__ p%d", nb);
  const int py = nb++;
  tp.params = params;

  text s = {0};
  emit_tile_body(&s, &tp);
  char mb[32];
  snprintf(mb, sizeof mb, "%" PRId64, cv.cog);
  emit_epilogue_loops(&s, &tp, mb);
  cg_put(&s, "      const i64 co = bz * %" PRId64 " + row;\n", cv.cog);
  if (bias) cg_put(&s, "      const float bv = ld_%s(p2, %" PRId64 " + co * %" PRId64 ");\n", tag, bias->offset,
                   bias->strides[0]);
  cg_put(&s, "      #pragma unroll\n      for (int cj = 0; cj < %d; cj++)\n", tp.cfg->tn / 4);
  cg_put(&s, "      #pragma unroll\n      for (int jj = 0; jj < 4; jj++) {\n");
  cg_put(&s, "        i64 r = n0 + cj * %d + tx * 4 + jj;\n        if (r >= %" PRId64 ") continue;\n",
         tp.cfg->bn / tp.cfg->tn * 4, cols);
  cg_put(&s, "        i64 at = %" PRId64 " + co * %" PRId64 ";\n", cv.yoff, cv.ys[1]);
  for (int d = cv.nsp - 1; d >= 0; d--)
    cg_put(&s, "        at += r %% %" PRId64 " * %" PRId64 "; r /= %" PRId64 ";\n", cv.out[d], cv.ys[2 + d],
           cv.out[d]);
  cg_put(&s, "        at += r * %" PRId64 ";\n", cv.ys[0]);
  cg_put(&s, "        float v = acc[ci * 4 + i][cj * 4 + jj];\n");
  if (bias) cg_put(&s, "        v += bv;\n");
  cg_put(&s, "        st_%s(p%d, at, v);\n      }\n    }\n  }\n}\n", tag, py);
  add_tile_launch(b, n, &tp, &s, bases, nb, what);
}
