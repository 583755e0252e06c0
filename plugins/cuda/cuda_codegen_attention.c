/*
 * plugins/cuda/cuda_codegen_attention.c: scaled_dot_product_attention as
 * one kernel, flash-style: the scores of a query row are never written to
 * memory. Each thread owns one query row (its q scaled, and its output
 * accumulator, in registers: every size is a constant of the code, so the
 * loops over the head dim unroll); a block of 128 rows walks the keys in
 * tiles staged through shared memory as float, keeping the running
 * maximum and sum of the online softmax. is_causal stops a block at its
 * last row's diagonal, so a causal sequence does half the work.
 *
 * Semantics are PyTorch's math path (aten._scaled_dot_product_attention_math
 * with _safe_softmax): a bool mask drops the keys where it is false, a
 * float mask is added to the scores, is_causal keeps key j of query i
 * where j <= i (top-left aligned, as torch.ones(L, S).tril()), and a row
 * with every key dropped gives zeros, not NaN. Arithmetic is float for
 * float16, bfloat16 and float32 alike (PyTorch's kernels accumulate there
 * too); only the output is rounded to the tensor's dtype.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/cuda/cuda_codegen.h"

enum { ATT_THREADS = 128, ATT_SMEM = 32 * 1024, ATT_MAX_HEAD = 128 };

typedef struct att_args {
  const alloy_value *q, *k, *v, *mask; /* mask may be NULL */
  bool causal;
  double scale; /* NAN: 1/sqrt(E) */
} att_args;

static void att_args_read(const alloy_host_api *h, const alloy_node *n, att_args *a) {
  memset(a, 0, sizeof *a);
  a->q = h->arg_value(h->node_arg(n, 0));
  a->k = h->arg_value(h->node_arg(n, 1));
  a->v = h->arg_value(h->node_arg(n, 2));
  const alloy_arg *m = cg_arg_named(h, n, "attn_mask");
  if (m && h->arg_type(m) == ALLOY_ARG_TYPE_VALUE) a->mask = h->arg_value(m);
  const alloy_arg *c = cg_arg_named(h, n, "is_causal");
  int causal = 0;
  if (c && h->arg_bool(c, &causal)) a->causal = causal != 0;
  const alloy_arg *s = cg_arg_named(h, n, "scale");
  a->scale = NAN;
  double v;
  if (s && h->arg_type(s) != ALLOY_ARG_TYPE_NONE && h->arg_float(s, &v)) a->scale = v;
}

static int64_t size_of(const alloy_host_api *h, const alloy_value *v, int d) {
  int64_t s = -1;
  return h->value_size(v, d, &s) ? s : -1;
}

/* What the kernel takes: no dropout, float q, k and v of one dtype and
 * rank, k and v with q's batch dims (no grouped heads), head dims up to 128
 * (each thread holds a row of q and of the output in registers), a bool
 * mask or one of q's dtype. */
const char *cuda_attention_check(const alloy_host_api *h, const alloy_node *n) {
  const alloy_arg *dp = cg_arg_named(h, n, "dropout_p");
  double p = 0;
  if (dp && h->arg_float(dp, &p) && p != 0) return "attention with dropout";
  const alloy_arg *gqa = cg_arg_named(h, n, "enable_gqa");
  int g = 0;
  if (gqa && h->arg_bool(gqa, &g) && g) return "attention with grouped heads (enable_gqa)";
  att_args a;
  att_args_read(h, n, &a);
  alloy_dtype t = h->value_dtype(a.q);
  if (t != ALLOY_F32 && t != ALLOY_F16 && t != ALLOY_BF16) return "attention of other than float32, float16, bfloat16";
  if (h->value_dtype(a.k) != t || h->value_dtype(a.v) != t) return "attention of mixed dtypes";
  int r = h->value_rank(a.q);
  if (r < 2 || r > CUDA_MAX_RANK || h->value_rank(a.k) != r || h->value_rank(a.v) != r)
    return "attention operands of different ranks";
  for (int d = 0; d < r - 2; d++)
    if (size_of(h, a.k, d) != size_of(h, a.q, d) || size_of(h, a.v, d) != size_of(h, a.q, d))
      return "attention with broadcast batch dims";
  int64_t e = size_of(h, a.q, r - 1), ev = size_of(h, a.v, r - 1);
  if (e < 1 || e > ATT_MAX_HEAD || ev < 1 || ev > ATT_MAX_HEAD) return "attention head dims past 128";
  if (size_of(h, a.k, r - 1) != e || size_of(h, a.v, r - 2) != size_of(h, a.k, r - 2))
    return "attention operands of mismatched sizes";
  if (a.mask) {
    alloy_dtype mt = h->value_dtype(a.mask);
    if (mt != ALLOY_BOOL && mt != t) return "attention mask of another dtype";
    if (h->value_rank(a.mask) > r) return "attention mask of more dims than q";
  }
  return NULL;
}

/* The offset text of batch index variables b0.. in tensor t (its batch dims
 * aligned right with the output's nb batch dims; size-1 dims broadcast). */
static void batch_offset(const cuda_tensor *t, int nb, char *buf, size_t cap) {
  size_t len = (size_t)snprintf(buf, cap, "%" PRId64, t->offset);
  int lead = nb - (t->rank - 2);
  for (int d = 0; d < t->rank - 2 && len < cap; d++)
    if (t->sizes[d] != 1 && t->strides[d] != 0)
      len += (size_t)snprintf(buf + len, cap - len, " + b%d * %" PRId64, d + lead, t->strides[d]);
}

/* One attention node's kernel, as the two bodies below see it. */
typedef struct att_kernel {
  att_args a;
  cuda_tensor t[4], o; /* q, k, v, mask?; the output */
  int nin, nb;         /* tensor operands; batch dims */
  int64_t L, S, E, EV, tiles, rows; /* rows: query rows a block takes */
  double scale;
  bool mask_tiles; /* the mma body stages the bool mask's 64 x 64 tiles in shared memory */
} att_kernel;

/* The lines both bodies begin with: the block's row tile and batch index,
 * each operand's batch offset, the mask's strides. */
static void att_prologue(text *s, const att_kernel *ak) {
  cg_put(s, "extern \"C\" __global__ void __launch_bounds__(%d) KNAME(", ATT_THREADS);
  for (int i = 0; i < ak->nin; i++) cg_put(s, "const char *__restrict__ p%d, ", i);
  cg_put(s, "char *__restrict__ po, i64 n) {\n");
  /* blocks: the row tiles of each batch index, in x (y would stop at 65535) */
  cg_put(s, "  const i64 tile = blockIdx.x %% %" PRId64 ", r0 = tile * %" PRId64 ";\n", ak->tiles, ak->rows);
  if (ak->nb > 0) cg_put(s, "  i64 br = blockIdx.x / %" PRId64 ";\n", ak->tiles);
  for (int d = ak->nb - 1; d >= 0; d--)
    cg_put(s, "  const i64 b%d = br %% %" PRId64 "; br /= %" PRId64 ";\n", d, ak->o.sizes[d], ak->o.sizes[d]);
  char off[4][512], oo[512];
  for (int i = 0; i < 3; i++) batch_offset(&ak->t[i], ak->nb, off[i], sizeof off[i]);
  batch_offset(&ak->o, ak->nb, oo, sizeof oo);
  cg_put(s, "  const i64 qb = %s, kb = %s, vb = %s, ob = %s;\n", off[0], off[1], off[2], oo);
  if (ak->nin == 4) {
    /* the mask's own last two dims, broadcast where they are 1 */
    const cuda_tensor *m = &ak->t[3];
    int64_t msl = m->rank >= 2 && m->sizes[m->rank - 2] != 1 ? m->strides[m->rank - 2] : 0;
    int64_t mss = m->rank >= 1 && m->sizes[m->rank - 1] != 1 ? m->strides[m->rank - 1] : 0;
    cuda_tensor mb = *m;
    if (mb.rank < 2) mb.rank = 2; /* a mask of one dim (or none) has no batch dims */
    batch_offset(&mb, ak->nb, off[3], sizeof off[3]);
    cg_put(s, "  const i64 mb = %s, msl = %" PRId64 ", mss = %" PRId64 ";\n", off[3], msl, mss);
  }
  /* NVRTC has no math.h: minus infinity by its bits */
  cg_put(s, "  const float ninf = __int_as_float(0xff800000);\n");
  if (ak->a.causal)
    cg_put(s, "  const i64 last = min((i64)%" PRId64 ", r0 + %" PRId64 ");\n", ak->S, ak->rows);
  else cg_put(s, "  const i64 last = %" PRId64 ";\n", ak->S);
}

/* The score of key j for query `row`, in variable sc, dropped (ninf) where
 * the mask or the causal bound drops it. A score already dropped (a row
 * or key past the end) reads no mask. */
static void att_score_mask(text *s, const att_kernel *ak, const char *indent) {
  const cuda_tensor *m = ak->nin == 4 ? &ak->t[3] : NULL;
  if (ak->a.causal) cg_put(s, "%sif (j > row) sc = ninf;\n", indent);
  if (m && m->dtype == ALLOY_BOOL)
    cg_put(s, "%sif (sc != ninf && !ld_bool(p3, mb + row * msl + j * mss)) sc = ninf;\n", indent);
  else if (m) cg_put(s, "%sif (sc != ninf) sc += ld_%s(p3, mb + row * msl + j * mss);\n", indent, cg_dtype_tag(m->dtype));
}

/* Any dtype, any head dims up to 128: a thread per query row, its q and
 * output accumulator in registers, the keys' tile as float in shared
 * memory. */
static void att_body_simt(text *s, const att_kernel *ak) {
  const cuda_tensor *q = &ak->t[0], *k = &ak->t[1], *v = &ak->t[2];
  int r = q->rank;
  const char *tag = cg_dtype_tag(q->dtype);
  int64_t E = ak->E, EV = ak->EV, S = ak->S;
  int64_t tk = ATT_SMEM / (4 * (E + EV));
  if (tk > 64) tk = 64;
  cg_put(s, "  __shared__ float ks[%" PRId64 "][%" PRId64 "], vs[%" PRId64 "][%" PRId64 "];\n", tk, E, tk, EV);
  cg_put(s, "  const i64 row = r0 + threadIdx.x;\n  const bool live = row < %" PRId64 ";\n", ak->L);
  cg_put(s, "  float q[%" PRId64 "], acc[%" PRId64 "];\n", E, EV);
  cg_put(s, "  #pragma unroll\n  for (int e = 0; e < %" PRId64 "; e++) q[e] = live ? ld_%s(p0, qb + row * %" PRId64
            " + e * %" PRId64 ") * %.9gf : 0.f;\n", E, tag, q->strides[r - 2], q->strides[r - 1], ak->scale);
  cg_put(s, "  #pragma unroll\n  for (int e = 0; e < %" PRId64 "; e++) acc[e] = 0.f;\n", EV);
  cg_put(s, "  float mx = ninf, sum = 0.f;\n");
  cg_put(s, "  for (i64 j0 = 0; j0 < last; j0 += %" PRId64 ") {\n    __syncthreads();\n", tk);
  const struct { const char *arr; int p; const cuda_tensor *t; int64_t w; } tiles[2] = {{"ks", 1, k, E}, {"vs", 2, v, EV}};
  for (int i = 0; i < 2; i++) {
    cg_put(s, "    for (int x = threadIdx.x; x < %" PRId64 "; x += %d) {\n", tk * tiles[i].w, ATT_THREADS);
    cg_put(s, "      const int jj = x / %" PRId64 ", e = x %% %" PRId64 "; const i64 j = j0 + jj;\n", tiles[i].w,
           tiles[i].w);
    cg_put(s, "      %s[jj][e] = j < %" PRId64 " ? ld_%s(p%d, %cb + j * %" PRId64 " + e * %" PRId64 ") : 0.f;\n    }\n",
           tiles[i].arr, S, tag, tiles[i].p, tiles[i].arr[0], tiles[i].t->strides[r - 2], tiles[i].t->strides[r - 1]);
  }
  cg_put(s, "    __syncthreads();\n    if (!live) continue;\n");
  cg_put(s, "    const int nj = (int)min((i64)%" PRId64 ", last - j0);\n", tk);
  cg_put(s, "    for (int jj = 0; jj < nj; jj++) {\n      const i64 j = j0 + jj;\n");
  if (ak->a.causal) cg_put(s, "      if (j > row) break;\n");
  cg_put(s, "      float sc = 0.f;\n      #pragma unroll\n      for (int e = 0; e < %" PRId64 "; e++) sc += q[e] * ks[jj][e];\n", E);
  att_score_mask(s, ak, "      ");
  cg_put(s, "      if (sc == ninf) continue;\n");
  cg_put(s, "      if (sc > mx) {\n        const float c = expf(mx - sc);\n        sum *= c;\n"
            "        #pragma unroll\n        for (int e = 0; e < %" PRId64 "; e++) acc[e] *= c;\n        mx = sc;\n      }\n", EV);
  cg_put(s, "      const float pj = expf(sc - mx);\n      sum += pj;\n");
  cg_put(s, "      #pragma unroll\n      for (int e = 0; e < %" PRId64 "; e++) acc[e] += pj * vs[jj][e];\n    }\n  }\n", EV);
  /* a row whose every key was dropped has sum 0: zeros (_safe_softmax) */
  cg_put(s, "  if (live) {\n    const float inv = sum > 0.f ? 1.f / sum : 0.f;\n");
  cg_put(s, "    #pragma unroll\n    for (int e = 0; e < %" PRId64 "; e++) st_%s(po, ob + row * %" PRId64 " + e * %" PRId64
            ", sum > 0.f ? acc[e] * inv : (sum != sum ? sum : 0.f));\n  }\n}\n", EV, cg_dtype_tag(ak->o.dtype),
         ak->o.strides[r - 2], ak->o.strides[r - 1]);
}

/* Shared memory of the tensor-core body, in bytes: the block's 64 rows of
 * q, and two buffers of a tile of 64 keys' k and v rows (one filling while
 * the other is read), 16-bit, each row padded by 8 elements so that the
 * eight rows an ldmatrix reads fall in different banks. */
static int64_t att_mma_smem(const att_kernel *ak) {
  return 2 * 64 * (ak->E + 2 * ((ak->E + 8) + (ak->EV + 8))) + (ak->mask_tiles ? 2 * 64 * 64 : 0);
}

/* Whether the mma body can copy the mask 16 bytes at a time into tiles of
 * 64 x 64 bytes: a bool mask, dense along the keys, its rows and batch
 * strides and offset multiples of 16, whole 16-key chunks, no causal bound
 * on top (the kernel checks the base pointer's alignment at run time). */
static bool att_mask_tileable(const att_kernel *ak) {
  if (ak->nin != 4 || ak->a.causal || ak->S % 16) return false;
  const cuda_tensor *m = &ak->t[3];
  if (m->dtype != ALLOY_BOOL || m->rank < 1 || m->sizes[m->rank - 1] != ak->S || m->strides[m->rank - 1] != 1 ||
      m->offset % 16)
    return false;
  for (int d = 0; d < m->rank - 1; d++)
    if (m->sizes[d] != 1 && m->strides[d] % 16) return false;
  return true;
}

/* Whether tensor t's rows can be copied 16 bytes at a time: its last dim
 * dense, every other stride and its offset multiples of 8 elements (the
 * kernel checks the base pointer's alignment at run time). */
static bool att_rows_vectorizable(const cuda_tensor *t) {
  if (t->strides[t->rank - 1] != 1 || t->sizes[t->rank - 1] % 8 || t->offset % 8) return false;
  for (int d = 0; d < t->rank - 1; d++)
    if (t->sizes[d] != 1 && t->strides[d] % 8) return false;
  return true;
}

/* float16 and bfloat16 with head dims that are multiples of 16, as
 * FlashAttention-2 does it: 64 query rows a block, 16 a warp; S = Q K^T
 * and O += P V by the tensor cores' mma.sync m16n8k16 (float
 * accumulators), S, P and O in registers (the accumulator layout of S is
 * the operand layout P needs); the online softmax's row max and sum over
 * the four lanes that share a row, in base 2 (the scores times log2(e),
 * so that exp2 does the exponentials). P is rounded to the 16-bit type
 * before P V, as FlashAttention does. Lane l holds rows g = l/4 and g + 8
 * of its warp's 16, columns 2t and 2t + 1 of each 8 (t = l % 4): PTX's
 * fragment layout of mma.m16n8k16; ldmatrix reads the k and v fragments
 * (v transposed) from shared memory.
 *
 * Key tiles stream through two shared buffers: cp.async copies the next
 * tile's k and v 16 bytes at a time while the tensor cores work on this
 * one (plain loads when the rows are not so aligned). With a mask, a first
 * pass lists the tiles where any of the block's rows keeps a key; the
 * others (a causal mask's upper triangle, padding) are never loaded. */
static void att_body_mma(text *s, const att_kernel *ak) {
  const cuda_tensor *q = &ak->t[0], *k = &ak->t[1], *v = &ak->t[2], *m = ak->nin == 4 ? &ak->t[3] : NULL;
  int r = q->rank;
  int64_t E = ak->E, EV = ak->EV, S = ak->S, L = ak->L, LK = E + 8, LV = EV + 8;
  const int64_t ntiles = (S + 63) / 64;
  const char *tag = cg_dtype_tag(q->dtype);
  const double log2e = 1.4426950408889634;
  cg_put(s, "  extern __shared__ __align__(16) unsigned short smem[];\n");
  cg_put(s, "  unsigned short *qs = smem, *kbuf = qs + %" PRId64 ", *vbuf = kbuf + %" PRId64 ";\n", 64 * E, 2 * 64 * LK);
  cg_put(s, "  const int w = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;\n");
  cg_put(s, "  for (int x = threadIdx.x; x < %" PRId64 "; x += %d) {\n", 64 * E, ATT_THREADS);
  cg_put(s, "    const int rr = x / %" PRId64 ", e = x %% %" PRId64 "; const i64 qr = r0 + rr;\n", E, E);
  cg_put(s, "    qs[x] = qr < %" PRId64 " ? ((const unsigned short *)p0)[qb + qr * %" PRId64 " + e * %" PRId64 "] : 0;\n  }\n",
         L, q->strides[r - 2], q->strides[r - 1]);
  cg_put(s, "  __syncthreads();\n");
  /* q's A fragments, once: rows g and g + 8, columns 2t and 2t + 8 of each 16 */
  cg_put(s, "  unsigned qa[%" PRId64 "][4];\n", E / 16);
  cg_put(s, "  #pragma unroll\n  for (int kk = 0; kk < %" PRId64 "; kk++) {\n", E / 16);
  cg_put(s, "    const unsigned short *a = qs + (w * 16 + g) * %" PRId64 " + kk * 16 + 2 * t;\n", E);
  cg_put(s, "    qa[kk][0] = *(const unsigned *)a;\n    qa[kk][1] = *(const unsigned *)(a + %" PRId64 ");\n", 8 * E);
  cg_put(s, "    qa[kk][2] = *(const unsigned *)(a + 8);\n    qa[kk][3] = *(const unsigned *)(a + %" PRId64 ");\n  }\n",
         8 * E + 8);
  cg_put(s, "  float o[%" PRId64 "][4];\n", EV / 8);
  cg_put(s, "  #pragma unroll\n  for (int et = 0; et < %" PRId64 "; et++) o[et][0] = o[et][1] = o[et][2] = o[et][3] = 0.f;\n",
         EV / 8);
  cg_put(s, "  const i64 rowa = r0 + w * 16 + g, rowb = rowa + 8;\n");
  cg_put(s, "  float mx[2] = {ninf, ninf}, sum[2] = {0.f, 0.f};\n");

  /* the key tiles to visit: all up to `last`, or with a mask those where
   * a row of the block keeps a key (__syncthreads_or: every thread agrees) */
  if (ak->mask_tiles) /* the mask's tiles staged (below) when its pointer is 16-byte aligned */
    cg_put(s, "  const bool mtiles = (((unsigned long long)p3) & 15) == 0;\n"
              "  unsigned char *mbuf = (unsigned char *)(vbuf + %" PRId64 ");\n", 2 * 64 * LV);
  if (m) {
    cg_put(s, "  __shared__ int live[%" PRId64 "];\n  int nlive = 0;\n", ntiles);
    cg_put(s, "  for (int jt = 0; (i64)jt * 64 < last; jt++) {\n    int any = 0;\n");
    if (ak->mask_tiles) {
      /* 16 keys of a row at once: two loads a thread a tile */
      cg_put(s, "    if (mtiles) {\n      for (int x = threadIdx.x; x < 256; x += %d) {\n", ATT_THREADS);
      cg_put(s, "        const i64 row = r0 + (x >> 2), j = (i64)jt * 64 + (x & 3) * 16;\n");
      cg_put(s, "        if (row < %" PRId64 " && j < %" PRId64 ") {\n", L, S);
      cg_put(s, "          const uint4 c = *(const uint4 *)(p3 + mb + row * msl + j);\n");
      cg_put(s, "          any |= (c.x | c.y | c.z | c.w) != 0;\n        }\n      }\n    } else\n");
    }
    cg_put(s, "    for (int x = threadIdx.x; x < 4096 && !any; x += %d) {\n", ATT_THREADS);
    cg_put(s, "      const i64 row = r0 + (x >> 6), j = (i64)jt * 64 + (x & 63);\n");
    cg_put(s, "      if (row < %" PRId64 " && j < %" PRId64 "%s)\n", L, S, ak->a.causal ? " && j <= row" : "");
    if (m->dtype == ALLOY_BOOL) cg_put(s, "        any = ld_bool(p3, mb + row * msl + j * mss);\n");
    else cg_put(s, "        any = ld_%s(p3, mb + row * msl + j * mss) != ninf;\n", cg_dtype_tag(m->dtype));
    cg_put(s, "    }\n    if (__syncthreads_or(any)) {\n      if (threadIdx.x == 0) live[nlive] = jt;\n      nlive++;\n    }\n  }\n");
    cg_put(s, "  __syncthreads();\n");
  } else {
    cg_put(s, "  const int nlive = (int)((last + 63) / 64);\n");
  }
  /* the first key of the it-th tile visited */
  cg_put(s, "  auto key0 = [&](int it) -> i64 { return (i64)%s * 64; };\n", m ? "live[it]" : "it");

  /* one tile's k and v rows into buffer `buf`: 16-byte cp.async chunks
   * (zero-filled past the last key) when the rows allow, else plain loads */
  bool vec = att_rows_vectorizable(k) && att_rows_vectorizable(v);
  cg_put(s, "  const bool vec = %s;\n", vec ? "((((unsigned long long)p1) | ((unsigned long long)p2)) & 15) == 0" : "false");
  cg_put(s, "  auto load = [&](int buf, i64 j0) {\n");
  cg_put(s, "    unsigned short *kd = kbuf + buf * %" PRId64 ", *vd = vbuf + buf * %" PRId64 ";\n", 64 * LK, 64 * LV);
  const struct { const char *arr, *base; int p; const cuda_tensor *t; int64_t w, ld; } tiles[2] = {
      {"kd", "kb", 1, k, E, LK}, {"vd", "vb", 2, v, EV, LV}};
  cg_put(s, "    if (vec) {\n");
  for (int i = 0; i < 2; i++) {
    cg_put(s, "      for (int x = threadIdx.x; x < %" PRId64 "; x += %d) {\n", 64 * tiles[i].w / 8, ATT_THREADS);
    cg_put(s, "        const int jj = x / %" PRId64 ", e = (x %% %" PRId64 ") * 8; const i64 j = j0 + jj;\n",
           tiles[i].w / 8, tiles[i].w / 8);
    cg_put(s, "        cp_async16(%s + jj * %" PRId64 " + e, (const unsigned short *)p%d + %s + min(j, (i64)%" PRId64
              ") * %" PRId64 " + e, j < %" PRId64 ");\n      }\n",
           tiles[i].arr, tiles[i].ld, tiles[i].p, tiles[i].base, S - 1, tiles[i].t->strides[r - 2], S);
  }
  cg_put(s, "    } else {\n");
  for (int i = 0; i < 2; i++) {
    cg_put(s, "      for (int x = threadIdx.x; x < %" PRId64 "; x += %d) {\n", 64 * tiles[i].w, ATT_THREADS);
    cg_put(s, "        const int jj = x / %" PRId64 ", e = x %% %" PRId64 "; const i64 j = j0 + jj;\n", tiles[i].w,
           tiles[i].w);
    cg_put(s, "        %s[jj * %" PRId64 " + e] = j < %" PRId64 " ? ((const unsigned short *)p%d)[%s + j * %" PRId64
              " + e * %" PRId64 "] : 0;\n      }\n",
           tiles[i].arr, tiles[i].ld, S, tiles[i].p, tiles[i].base, tiles[i].t->strides[r - 2],
           tiles[i].t->strides[r - 1]);
  }
  cg_put(s, "    }\n");
  if (ak->mask_tiles) {
    cg_put(s, "    if (mtiles) {\n      unsigned char *md = mbuf + buf * 4096;\n");
    cg_put(s, "      for (int x = threadIdx.x; x < 256; x += %d) {\n", ATT_THREADS);
    cg_put(s, "        const i64 row = r0 + (x >> 2), j = j0 + (x & 3) * 16;\n");
    cg_put(s, "        const bool in = row < %" PRId64 " && j < %" PRId64 ";\n", L, S);
    cg_put(s, "        cp_async16((unsigned short *)(md + x * 16), (const unsigned short *)(p3 + mb + (in ? row * msl + j : 0)), in);\n      }\n    }\n");
  }
  cg_put(s, "    cp_async_commit();\n  };\n");

  cg_put(s, "  if (nlive > 0) load(0, key0(0));\n");
  cg_put(s, "  for (int it = 0; it < nlive; it++) {\n    const i64 j0 = key0(it);\n");
  /* the next tile's copies go out before this one's work; wait for all
   * but those, then every thread's part of this tile is in */
  cg_put(s, "    if (it + 1 < nlive) {\n      load((it + 1) & 1, key0(it + 1));\n      cp_async_wait1();\n    } else {\n      cp_async_wait0();\n    }\n    __syncthreads();\n");
  cg_put(s, "    const unsigned short *ks = kbuf + (it & 1) * %" PRId64 ", *vs = vbuf + (it & 1) * %" PRId64 ";\n",
         64 * LK, 64 * LV);
  if (ak->mask_tiles) cg_put(s, "    const unsigned char *mt = mbuf + (it & 1) * 4096;\n");
  /* S = Q K^T: column n of B is key n's row of k; ldmatrix x4 reads the
   * fragments of two key groups (nt, nt + 1) at once */
  cg_put(s, "    float sc4[8][4];\n    #pragma unroll\n    for (int nt = 0; nt < 8; nt++) sc4[nt][0] = sc4[nt][1] = sc4[nt][2] = sc4[nt][3] = 0.f;\n");
  cg_put(s, "    #pragma unroll\n    for (int nt = 0; nt < 8; nt += 2) {\n");
  cg_put(s, "      #pragma unroll\n      for (int kk = 0; kk < %" PRId64 "; kk++) {\n", E / 16);
  cg_put(s, "        unsigned bf[4];\n");
  cg_put(s, "        ldsm_x4(bf, ks + ((nt + (lane >> 4)) * 8 + (lane & 7)) * %" PRId64 " + kk * 16 + ((lane >> 3) & 1) * 8);\n", LK);
  cg_put(s, "        mma16816_%s(sc4[nt], qa[kk], bf[0], bf[1]);\n", tag);
  cg_put(s, "        mma16816_%s(sc4[nt + 1], qa[kk], bf[2], bf[3]);\n      }\n    }\n", tag);
  /* scale (base 2), drop, and the rows' maxima */
  cg_put(s, "    float tm[2] = {ninf, ninf};\n");
  /* A tile inside every bound (its rows and keys all there, below the
   * causal diagonal) with no mask or a staged one takes the short path: a
   * multiply and the staged mask byte per score. */
  const bool fast = !m || ak->mask_tiles;
  if (fast) {
    cg_put(s, "    if (r0 + 64 <= %" PRId64 " && j0 + 64 <= %" PRId64 "%s%s) {\n", L, S,
           ak->a.causal ? " && j0 + 63 <= r0" : "", ak->mask_tiles ? " && mtiles" : "");
    if (ak->mask_tiles) cg_put(s, "      const int mrow = (w * 16 + g) * 64 + 2 * t;\n");
    cg_put(s, "      #pragma unroll\n      for (int nt = 0; nt < 8; nt++)\n        #pragma unroll\n"
              "        for (int i = 0; i < 4; i++) {\n");
    cg_put(s, "          float sc = sc4[nt][i] * %.9gf;\n", ak->scale * log2e);
    if (ak->mask_tiles) cg_put(s, "          if (!mt[mrow + (i >> 1) * 512 + nt * 8 + (i & 1)]) sc = ninf;\n");
    cg_put(s, "          sc4[nt][i] = sc;\n          tm[i >> 1] = fmaxf(tm[i >> 1], sc);\n        }\n    } else {\n");
  }
  /* else each score checks its row and key against the bounds, the causal
   * diagonal and the mask (from the staged tile, or from memory) */
  cg_put(s, "    #pragma unroll\n    for (int nt = 0; nt < 8; nt++)\n      #pragma unroll\n      for (int i = 0; i < 4; i++) {\n");
  cg_put(s, "        const int row = (int)(i < 2 ? rowa : rowb), j = (int)j0 + nt * 8 + 2 * t + (i & 1);\n");
  cg_put(s, "        float sc = row < %" PRId64 " && j < %" PRId64 " ? sc4[nt][i] * %.9gf : ninf;\n", L, S, ak->scale);
  if (ak->mask_tiles) {
    cg_put(s, "        if (mtiles) {\n          if (sc != ninf && !mt[(row - (int)r0) * 64 + (j - (int)j0)]) sc = ninf;\n        } else {\n");
    att_score_mask(s, ak, "          ");
    cg_put(s, "        }\n");
  } else {
    att_score_mask(s, ak, "        ");
  }
  cg_put(s, "        sc4[nt][i] = sc * %.9gf;\n        tm[i >> 1] = fmaxf(tm[i >> 1], sc4[nt][i]);\n      }\n", log2e);
  if (fast) cg_put(s, "    }\n");
  cg_put(s, "    float al[2], ps[2] = {0.f, 0.f};\n    #pragma unroll\n    for (int h = 0; h < 2; h++) {\n");
  cg_put(s, "      tm[h] = fmaxf(tm[h], __shfl_xor_sync(0xffffffffu, tm[h], 1));\n");
  cg_put(s, "      tm[h] = fmaxf(tm[h], __shfl_xor_sync(0xffffffffu, tm[h], 2));\n");
  cg_put(s, "      const float mn = fmaxf(mx[h], tm[h]);\n      al[h] = mn == ninf ? 1.f : exp2f(mx[h] - mn);\n");
  cg_put(s, "      mx[h] = mn;\n    }\n");
  /* P, rounded to the 16-bit type, packed as the A fragments of P V */
  cg_put(s, "    unsigned pa[4][4];\n    #pragma unroll\n    for (int nt = 0; nt < 8; nt++) {\n      float p[4];\n");
  cg_put(s, "      #pragma unroll\n      for (int i = 0; i < 4; i++) {\n");
  cg_put(s, "        p[i] = mx[i >> 1] == ninf ? 0.f : exp2f(sc4[nt][i] - mx[i >> 1]);\n        ps[i >> 1] += p[i];\n      }\n");
  cg_put(s, "      pa[nt >> 1][(nt & 1) * 2] = pack16(f32_to_%s(p[0]), f32_to_%s(p[1]));\n", tag, tag);
  cg_put(s, "      pa[nt >> 1][(nt & 1) * 2 + 1] = pack16(f32_to_%s(p[2]), f32_to_%s(p[3]));\n    }\n", tag, tag);
  cg_put(s, "    #pragma unroll\n    for (int h = 0; h < 2; h++) {\n");
  cg_put(s, "      ps[h] += __shfl_xor_sync(0xffffffffu, ps[h], 1);\n      ps[h] += __shfl_xor_sync(0xffffffffu, ps[h], 2);\n");
  cg_put(s, "      sum[h] = sum[h] * al[h] + ps[h];\n    }\n");
  /* O = O * alpha + P V: row k of B is key k's row of v; ldmatrix x4
   * transposed reads the fragments of two column groups (et, et + 1) */
  cg_put(s, "    #pragma unroll\n    for (int et = 0; et < %" PRId64 "; et++)\n", EV / 8);
  cg_put(s, "      o[et][0] *= al[0], o[et][1] *= al[0], o[et][2] *= al[1], o[et][3] *= al[1];\n");
  cg_put(s, "    #pragma unroll\n    for (int et = 0; et < %" PRId64 "; et += 2) {\n", EV / 8);
  cg_put(s, "      #pragma unroll\n      for (int kk = 0; kk < 4; kk++) {\n        unsigned bf[4];\n");
  cg_put(s, "        ldsm_x4_trans(bf, vs + (kk * 16 + ((lane >> 3) & 1) * 8 + (lane & 7)) * %" PRId64
            " + (et + (lane >> 4)) * 8);\n", LV);
  cg_put(s, "        mma16816_%s(o[et], pa[kk], bf[0], bf[1]);\n", tag);
  cg_put(s, "        mma16816_%s(o[et + 1], pa[kk], bf[2], bf[3]);\n      }\n    }\n", tag);
  cg_put(s, "    __syncthreads();\n  }\n");
  /* a row whose every key was dropped has sum 0: zeros (_safe_softmax) */
  cg_put(s, "  #pragma unroll\n  for (int h = 0; h < 2; h++) {\n    const i64 row = h ? rowb : rowa;\n");
  cg_put(s, "    if (row >= %" PRId64 ") continue;\n", L);
  cg_put(s, "    const float inv = sum[h] > 0.f ? 1.f / sum[h] : 0.f;\n");
  cg_put(s, "    #pragma unroll\n    for (int et = 0; et < %" PRId64 "; et++)\n      #pragma unroll\n"
            "      for (int c = 0; c < 2; c++)\n", EV / 8);
  cg_put(s, "        st_%s(po, ob + row * %" PRId64 " + (et * 8 + 2 * t + c) * %" PRId64
            ", sum[h] > 0.f ? o[et][h * 2 + c] * inv : (sum[h] != sum[h] ? sum[h] : 0.f));\n  }\n}\n",
         cg_dtype_tag(ak->o.dtype), ak->o.strides[r - 2], ak->o.strides[r - 1]);
}

/* The tensor-core helpers the mma body calls, once per module: mma.sync,
 * ldmatrix (plain and transposed) and cp.async (16 bytes, zero-filled
 * when `full` is false), all sm_80 and later. */
static const char mma_helpers[] =
    "#ifndef ALLOY_MMA16816\n#define ALLOY_MMA16816\n"
    "__device__ __forceinline__ unsigned pack16(unsigned short lo, unsigned short hi) {\n"
    "  return (unsigned)lo | ((unsigned)hi << 16); }\n"
    "#define MMA16816(tag, ty) __device__ __forceinline__ void mma16816_##tag(float c[4], const unsigned a[4], "
    "unsigned b0, unsigned b1) {\\\n"
    "  asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.\" ty \".\" ty \".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
    "{%8,%9}, {%0,%1,%2,%3};\"\\\n"
    "               : \"+f\"(c[0]), \"+f\"(c[1]), \"+f\"(c[2]), \"+f\"(c[3])\\\n"
    "               : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b0), \"r\"(b1)); }\n"
    "MMA16816(f16, \"f16\") MMA16816(bf16, \"bf16\")\n"
    "__device__ __forceinline__ unsigned smem_addr(const void *p) {\n"
    "  return (unsigned)__cvta_generic_to_shared(p); }\n"
    "__device__ __forceinline__ void ldsm_x4(unsigned r[4], const unsigned short *p) {\n"
    "  asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\"\n"
    "               : \"=r\"(r[0]), \"=r\"(r[1]), \"=r\"(r[2]), \"=r\"(r[3]) : \"r\"(smem_addr(p))); }\n"
    "__device__ __forceinline__ void ldsm_x4_trans(unsigned r[4], const unsigned short *p) {\n"
    "  asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\"\n"
    "               : \"=r\"(r[0]), \"=r\"(r[1]), \"=r\"(r[2]), \"=r\"(r[3]) : \"r\"(smem_addr(p))); }\n"
    "__device__ __forceinline__ void cp_async16(unsigned short *dst, const unsigned short *src, bool full) {\n"
    "  asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16, %2;\" :: \"r\"(smem_addr(dst)), \"l\"(src),\n"
    "               \"r\"(full ? 16 : 0) : \"memory\"); }\n"
    "__device__ __forceinline__ void cp_async_commit() { asm volatile(\"cp.async.commit_group;\" ::: \"memory\"); }\n"
    "__device__ __forceinline__ void cp_async_wait0() { asm volatile(\"cp.async.wait_group 0;\" ::: \"memory\"); }\n"
    "__device__ __forceinline__ void cp_async_wait1() { asm volatile(\"cp.async.wait_group 1;\" ::: \"memory\"); }\n"
    "#endif\n";

void cg_emit_attention(builder *b, const alloy_node *n, const cuda_op *op) {
  (void)op;
  const alloy_host_api *h = b->host;
  att_kernel ak = {0};
  att_args_read(h, n, &ak.a);
  const alloy_value *vals[4] = {ak.a.q, ak.a.k, ak.a.v, ak.a.mask};
  ak.nin = ak.a.mask ? 4 : 3;
  for (int i = 0; i < ak.nin; i++) {
    vinfo *vi = cg_val(b, vals[i]);
    if (vi->tensor < 0) return (void)cg_fail(b, n, "an operand is not in memory");
    ak.t[i] = b->tensors[vi->tensor];
  }
  int to = cg_materialize(b, h->node_output(n, 0));
  if (to < 0) return;
  ak.o = b->tensors[to];
  int r = ak.t[0].rank;
  ak.nb = r - 2;
  ak.L = ak.t[0].sizes[r - 2], ak.S = ak.t[1].sizes[r - 2], ak.E = ak.t[0].sizes[r - 1], ak.EV = ak.t[2].sizes[r - 1];
  ak.scale = isnan(ak.a.scale) ? 1.0 / sqrt((double)ak.E) : ak.a.scale;
  alloy_dtype dt = ak.t[0].dtype;
  /* the tensor cores' body needs PTX (not in a portable plan) and sm_80 */
  bool mma = !b->simt_attention && (dt == ALLOY_F16 || dt == ALLOY_BF16) && ak.E % 16 == 0 &&
             ak.EV % 16 == 0;
  ak.rows = mma ? 64 : ATT_THREADS;
  ak.mask_tiles = mma && att_mask_tileable(&ak);
  int64_t nbh = 1;
  for (int d = 0; d < ak.nb; d++) nbh *= ak.o.sizes[d];
  if (ak.L == 0 || nbh == 0) return; /* nothing to compute */
  ak.tiles = (ak.L + ak.rows - 1) / ak.rows;
  if (ak.tiles * nbh > INT32_MAX || ak.L > INT32_MAX / 2 || ak.S > INT32_MAX / 2)
    return (void)cg_fail(b, n, "attention of too many rows"); /* rows and keys are ints in the kernel */

  text s = {0};
  if (mma) cg_put(&s, "%s", mma_helpers);
  att_prologue(&s, &ak);
  (mma ? att_body_mma : att_body_simt)(&s, &ak);
  if (s.oom) {
    free(s.s);
    return (void)cg_fail(b, n, "out of memory");
  }
  int id = cg_custom_kernel(b, s.s, ak.nin + 1);
  free(s.s);
  cuda_launch *l = cg_add_launch(b);
  if (!l) return;
  snprintf(l->name, sizeof l->name, "k%d", id);
  l->kind = LAUNCH_KERNEL;
  l->n = 1;
  l->block = ATT_THREADS;
  l->grid[0] = (unsigned)(ak.tiles * nbh);
  l->grid[1] = l->grid[2] = 1;
  l->shmem = mma ? (unsigned)att_mma_smem(&ak) : 0;
  l->nbases = ak.nin + 1;
  l->bases = malloc(sizeof *l->bases * (size_t)(ak.nin + 1));
  if (!l->bases) return (void)cg_fail(b, n, "out of memory");
  for (int i = 0; i < ak.nin; i++) l->bases[i] = ak.t[i].base;
  l->bases[ak.nin] = ak.o.base;
}
