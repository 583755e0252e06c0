/*
 * plugins/cuda/cuda_codegen_attention.c: scaled_dot_product_attention as
 * one kernel, flash-style: the scores of a query row are never written to
 * memory; a block of query rows walks the keys in tiles staged through
 * shared memory, keeping the running maximum and sum of the online
 * softmax. Two bodies: float16 and bfloat16 on the tensor cores (mma.sync,
 * FlashAttention-2's layout, att_body_mma), and every other case with a
 * thread per query row, its q scaled and its output accumulator in
 * registers, the keys' tiles as float (att_body_simt). Every size is a
 * constant of the code, so the loops over the head dims unroll. is_causal
 * stops a block at its last row's diagonal, so a causal sequence does half
 * the work.
 *
 * Semantics are PyTorch's math path (aten._scaled_dot_product_attention_math
 * with _safe_softmax): a bool mask drops the keys where it is false, a
 * float mask is added to the scores, is_causal keeps key j of query i
 * where j <= i (top-left aligned, as torch.ones(L, S).tril()), and a row
 * with every key dropped gives zeros, not NaN. Arithmetic is float for
 * float16, bfloat16 and float32 alike (PyTorch's kernels accumulate there
 * too); only the output is rounded to the tensor's dtype (and, on the
 * tensor cores, the probabilities before they multiply v).
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
  int64_t nbh;                      /* batch indices (the batch dims' product) */
  double scale;
  bool mask_tiles; /* the mma body stages the bool mask's tiles (rows x 64 keys) in shared memory */
  int mt;          /* the mma body: tiles of 16 query rows a warp (rows = 64 * mt) */
  bool qregs;      /* the mma body: q's fragments in registers for the whole kernel */
} att_kernel;

/* The lines both bodies begin with: the block's row tile and batch index,
 * each operand's batch offset, the mask's strides. */
static void att_prologue(text *s, const att_kernel *ak) {
  cg_put(s, "extern \"C\" __global__ void __launch_bounds__(%d) KNAME(", ATT_THREADS);
  for (int i = 0; i < ak->nin; i++) cg_put(s, "const char *__restrict__ p%d, ", i);
  cg_put(s, "char *__restrict__ po, i64 n) {\n");
  /* blocks: the row tiles of each batch index, in x (y would stop at
   * 65535), every batch index's last tile first: with a causal bound the
   * later rows are the longer work, and the short blocks are best left to
   * fill the end of the grid */
  cg_put(s, "  const i64 tile = %" PRId64 " - blockIdx.x / %" PRId64 ", r0 = tile * %" PRId64 ";\n", ak->tiles - 1,
         ak->nbh, ak->rows);
  if (ak->nb > 0) cg_put(s, "  i64 br = blockIdx.x %% %" PRId64 ";\n", ak->nbh);
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

/* The tensor-core body's key tiles: 64 keys, staged as k and v rows padded
 * by 8 elements (so that the eight rows an ldmatrix reads fall in
 * different banks); a staged mask tile's rows are 64 bytes padded to 80
 * for the same reason (a warp reads 8 rows of a column pair at once). */
enum { ATT_KT = 64, ATT_MROW = 80, ATT_MANY = 256 };

/* Shared memory of the tensor-core body, in bytes: the block's rows of q,
 * two buffers of a key tile's k and v (one filling while the other is
 * read), and two of the mask's tile where it is staged. */
static int64_t att_mma_smem(const att_kernel *ak) {
  return 2 * (ak->rows * (ak->E + 8) + 2 * ATT_KT * ((ak->E + 8) + (ak->EV + 8))) +
         (ak->mask_tiles ? 2 * ak->rows * ATT_MROW : 0);
}

/* Whether the mma body can copy the mask 16 bytes at a time into tiles of
 * rows x 64 bytes: a bool mask, dense along the keys, its rows and batch
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

/* Whether tensor t's rows can be copied `elems` elements at a time: its
 * last dim dense, every other stride and its offset multiples of elems
 * (the kernel checks the base pointer's alignment at run time). */
static bool att_rows_dense(const cuda_tensor *t, int64_t elems) {
  if (t->strides[t->rank - 1] != 1 || t->sizes[t->rank - 1] % elems || t->offset % elems) return false;
  for (int d = 0; d < t->rank - 1; d++)
    if (t->sizes[d] != 1 && t->strides[d] % elems) return false;
  return true;
}

/* A loop header of the mma body, unrolled: `for (int v = 0; v < n; v += step)`. */
static void att_for(text *s, const char *indent, const char *v, int64_t n, int step) {
  cg_put(s, "%s#pragma unroll\n%sfor (int %s = 0; %s < %" PRId64 "; %s += %d)\n", indent, indent, v, v, n, v, step);
}

/* Rows of one operand into shared memory, as the mma body copies them:
 * `n` rows from `first` on into `dst` (its rows `ld` elements apart), rows
 * past `bound` zero-filled; 16-byte cp.async chunks, or elements. */
typedef struct att_rows {
  const char *dst, *base, *first, *on; /* on: a condition on the whole copy ("" for none) */
  int p;
  const cuda_tensor *t;
  int64_t w, ld, n, bound;
} att_rows;

static void att_copy_rows(text *s, const char *in, const att_rows *x, int r, bool vec) {
  if (vec) { /* n * w / 8 is a multiple of the block (w of 16s, n of 64s): unrolled, no bound on x */
    cg_put(s, "%s#pragma unroll\n%sfor (int c = 0; c < %" PRId64 "; c++) {\n", in, in, x->n * x->w / 8 / ATT_THREADS);
    cg_put(s, "%s  const int x = threadIdx.x + c * %d, jj = x / %" PRId64 ", e = (x %% %" PRId64 ") * 8; const i64 j = %s + jj;\n",
           in, ATT_THREADS, x->w / 8, x->w / 8, x->first);
    cg_put(s, "%s  cp_async16(%s + jj * %" PRId64 " + e, (const unsigned short *)p%d + %s + min(j, (i64)%" PRId64
              ") * %" PRId64 " + e, %sj < %" PRId64 ");\n",
           in, x->dst, x->ld, x->p, x->base, x->bound - 1, x->t->strides[r - 2], x->on, x->bound);
  } else {
    cg_put(s, "%sfor (int x = threadIdx.x; x < %" PRId64 "; x += %d) {\n", in, x->n * x->w, ATT_THREADS);
    cg_put(s, "%s  const int jj = x / %" PRId64 ", e = x %% %" PRId64 "; const i64 j = %s + jj;\n", in, x->w, x->w,
           x->first);
    cg_put(s, "%s  %s[jj * %" PRId64 " + e] = %sj < %" PRId64 " ? ((const unsigned short *)p%d)[%s + j * %" PRId64
              " + e * %" PRId64 "] : 0;\n",
           in, x->dst, x->ld, x->on, x->bound, x->p, x->base, x->t->strides[r - 2], x->t->strides[r - 1]);
  }
  cg_put(s, "%s}\n", in);
}

/* One key tile's work for one warp, in one of the ways to drop scores
 * (att_body_mma says which applies when), each its own straight run of
 * code (a branch inside would split what ptxas can schedule together):
 * S = Q K^T, the scores dropped, the rows' maxima, and in two steps of 32
 * keys the exponentials and O += P V, so that ptxas can put one step's
 * exponentials beside the other's products. */
enum { P_PLAIN, P_BYTES, P_BOUNDS, P_SLOW };

static void att_tile(text *s, const att_kernel *ak, int pk, const char *qa, const char *cs, bool fused) {
  const cuda_tensor *m = ak->nin == 4 ? &ak->t[3] : NULL;
  /* H steps of 8 / H key groups (the checked way, which holds indices
   * and loads in flight: one) */
  const int MT = ak->mt, H = pk == P_SLOW ? 1 : 2, NH = 8 / H;
  const int64_t E = ak->E, EV = ak->EV, S = ak->S, L = ak->L, LQ = E + 8, LK = E + 8, LV = EV + 8;
  const char *tag = cg_dtype_tag(ak->t[0].dtype);
  const double log2e = 1.4426950408889634, c = ak->scale * log2e;
  cg_put(s, "    float sa[%d][8][4];\n", MT);
  att_for(s, "    ", "mi", MT, 1);
  att_for(s, "      ", "nt", 8, 1);
  cg_put(s, "        sa[mi][nt][0] = sa[mi][nt][1] = sa[mi][nt][2] = sa[mi][nt][3] = 0.f;\n");
  /* column n of B is key n's row of k; ldmatrix x4 reads the fragments
   * of two key groups (nt, nt + 1) at once */
  att_for(s, "    ", "kk", E / 16, 1);
  cg_put(s, "    {\n");
  if (!ak->qregs) {
    cg_put(s, "      unsigned qa[%d][4];\n", MT);
    att_for(s, "      ", "mi", MT, 1);
    cg_put(s, "        ldsm_x4(qa[mi], qs + (wr + mi * 16 + (lane & 15)) * %" PRId64 " + kk * 16 + (lane >> 4) * 8);\n",
           LQ);
  }
  att_for(s, "      ", "nt", 8, 2);
  cg_put(s, "      {\n        unsigned bf[4];\n");
  cg_put(s, "        ldsm_x4(bf, ks + ((nt + (lane >> 4)) * 8 + (lane & 7)) * %" PRId64
            " + kk * 16 + ((lane >> 3) & 1) * 8);\n", LK);
  att_for(s, "        ", "mi", MT, 1);
  cg_put(s, "        {\n          mma16816_%s(sa[mi][nt], %s, bf[0], bf[1]);\n", tag, qa);
  cg_put(s, "          mma16816_%s(sa[mi][nt + 1], %s, bf[2], bf[3]);\n        }\n      }\n    }\n", tag, qa);

  /* each row's maximum in two chains (even and odd columns) */
  cg_put(s, "    float tm[%d][2];\n", 2 * MT);
  att_for(s, "    ", "ri", 2 * MT, 1);
  cg_put(s, "      tm[ri][0] = tm[ri][1] = ninf;\n");
  att_for(s, "    ", "mi", MT, 1);
  att_for(s, "      ", "nt", 8, 1);
  cg_put(s, "      {\n");
  if (pk == P_BYTES)
    cg_put(s, "        const unsigned m0 = *(const unsigned short *)(mt + (wr + mi * 16 + g) * %d + nt * 8 + 2 * t),\n"
              "                       m1 = *(const unsigned short *)(mt + (wr + mi * 16 + g + 8) * %d + nt * 8 + 2 * t);\n",
           ATT_MROW, ATT_MROW);
  att_for(s, "        ", "i", 4, 1);
  cg_put(s, "        {\n");
  if (pk == P_BOUNDS) {
    /* key minus row, and the keys left, as offsets from constants */
    if (fused) cg_put(s, "          float sc = sa[mi][nt][i];\n");
    else cg_put(s, "          float sc = sa[mi][nt][i] * %.9gf;\n", c);
    if (ak->a.causal) cg_put(s, "          if (dj + (nt * 8 + (i & 1) - mi * 16 - (i >> 1) * 8) > 0) sc = ninf;\n");
    if (S % ATT_KT) cg_put(s, "          if (nt * 8 + (i & 1) >= sj) sc = ninf;\n");
  } else if (pk == P_SLOW) {
    cg_put(s, "          const int row = (int)wrow + mi * 16 + g + (i >> 1) * 8, j = (int)j0 + nt * 8 + 2 * t + "
              "(i & 1);\n");
    if (fused) cg_put(s, "          float sc = sa[mi][nt][i];\n");
    else cg_put(s, "          float sc = sa[mi][nt][i] * %.9gf;\n", ak->scale);
    /* a mask in memory is read only inside both bounds */
    if (m) cg_put(s, "          if (j >= %" PRId64 " || row >= %" PRId64 ") sc = ninf;\n", S, L);
    else if (S % ATT_KT) cg_put(s, "          if (j >= %" PRId64 ") sc = ninf;\n", S);
    att_score_mask(s, ak, "          ");
    if (!fused) cg_put(s, "          sc *= %.9gf;\n", log2e);
  } else {
    if (fused) cg_put(s, "          float sc = sa[mi][nt][i];\n");
    else cg_put(s, "          float sc = sa[mi][nt][i] * %.9gf;\n", c);
    if (pk == P_BYTES) cg_put(s, "          if (!(((i < 2 ? m0 : m1) >> ((i & 1) * 8)) & 255)) sc = ninf;\n");
  }
  cg_put(s, "          sa[mi][nt][i] = sc;\n");
  cg_put(s, "          tm[mi * 2 + (i >> 1)][i & 1] = fmaxf(tm[mi * 2 + (i >> 1)][i & 1], sc);\n        }\n      }\n");
  /* the rows' maxima over their four lanes */
  cg_put(s, "    {\n      float tq[%d];\n", 2 * MT);
  att_for(s, "      ", "ri", 2 * MT, 1);
  cg_put(s, "      {\n        tq[ri] = fmaxf(tm[ri][0], tm[ri][1]);\n");
  cg_put(s, "        tq[ri] = fmaxf(tq[ri], __shfl_xor_sync(0xffffffffu, tq[ri], 1));\n");
  cg_put(s, "        tq[ri] = fmaxf(tq[ri], __shfl_xor_sync(0xffffffffu, tq[ri], 2));\n      }\n");
  /* the maximum the exponents are taken from moves only when a row's
   * passes it by 8 in base 2 (p then stays below 256, far inside float and
   * both 16-bit types), a warp's rows together: after the first tiles
   * hardly ever, and the rescaling of the sums and outputs with it */
  cg_put(s, "      bool grow = false;\n");
  att_for(s, "      ", "ri", 2 * MT, 1);
  cg_put(s, "        grow |= tq[ri] * %s > mx[ri] * %s + 8.f;\n", cs, cs);
  cg_put(s, "      if (__any_sync(0xffffffffu, grow)) {\n");
  att_for(s, "        ", "ri", 2 * MT, 1);
  cg_put(s, "        {\n          const float mn = fmaxf(mx[ri], tq[ri]), al = mn == ninf ? 1.f : att_ex2((mx[ri] - mn) * %s);\n", cs);
  cg_put(s, "          mx[ri] = mn;\n          mc[ri] = mn == ninf ? 0.f : mn * %s;\n", cs);
  cg_put(s, "          sum[ri][0] *= al, sum[ri][1] *= al;\n");
  att_for(s, "          ", "et", EV / 8, 1);
  cg_put(s, "            o[ri >> 1][et][(ri & 1) * 2] *= al, o[ri >> 1][et][(ri & 1) * 2 + 1] *= al;\n        }\n      }\n");
  /* P, rounded to the 16-bit type, packed as the A fragments of P V; row
   * k of B is key k's row of v (ldmatrix x4 transposed reads the fragments
   * of two column groups et, et + 1) */
  att_for(s, "      ", "hh", H, 1);
  cg_put(s, "      {\n      unsigned pa[%d][%d][4];\n", MT, NH / 2);
  att_for(s, "      ", "mi", MT, 1);
  att_for(s, "        ", "nt", NH, 1);
  cg_put(s, "        {\n          float p[4];\n");
  att_for(s, "          ", "i", 4, 1);
  cg_put(s, "          {\n            p[i] = att_ex2(fmaf(sa[mi][hh * %d + nt][i], %s, -mc[mi * 2 + (i >> 1)]));\n", NH, cs);
  cg_put(s, "            sum[mi * 2 + (i >> 1)][i & 1] += p[i];\n          }\n");
  cg_put(s, "          pa[mi][nt >> 1][(nt & 1) * 2] = pack2_%s(p[0], p[1]);\n", tag);
  cg_put(s, "          pa[mi][nt >> 1][(nt & 1) * 2 + 1] = pack2_%s(p[2], p[3]);\n        }\n", tag);
  att_for(s, "      ", "kk", NH / 2, 1);
  att_for(s, "        ", "et", EV / 8, 2);
  cg_put(s, "        {\n          unsigned bf[4];\n");
  cg_put(s, "          ldsm_x4_trans(bf, vs + ((hh * %d + kk) * 16 + ((lane >> 3) & 1) * 8 + (lane & 7)) * %" PRId64
            " + (et + (lane >> 4)) * 8);\n", NH / 2, LV);
  att_for(s, "          ", "mi", MT, 1);
  cg_put(s, "          {\n            mma16816_%s(o[mi][et], pa[mi][kk], bf[0], bf[1]);\n", tag);
  cg_put(s, "            mma16816_%s(o[mi][et + 1], pa[mi][kk], bf[2], bf[3]);\n          }\n        }\n      }\n    }\n", tag);
}

/* float16 and bfloat16 with head dims that are multiples of 16, as
 * FlashAttention-2 does it: 4 warps a block, each owning mt tiles of 16
 * query rows (64 * mt rows a block); S = Q K^T and O += P V by the tensor
 * cores' mma.sync m16n8k16 (float accumulators), S, P and O in registers
 * (the accumulator layout of S is the operand layout P needs). Every k and
 * v fragment a warp reads from shared memory serves its mt row tiles:
 * two tiles halve the shared-memory reads per product. Lane l holds rows
 * g = l/4 and g + 8 of each of its warp's row tiles, columns 2t and
 * 2t + 1 of each 8 (t = l % 4): PTX's fragment layout of mma.m16n8k16;
 * ldmatrix reads the q, k and v (transposed) fragments.
 *
 * The online softmax keeps each row's maximum of the raw scores and sums
 * exp2(s * c - max * c), c = scale * log2(e): per score one FMNMX, one
 * FFMA, one MUFU ex2, one FADD and half a cvt packing two of P (a float
 * mask, added to the scaled score, or a scale that is not positive scales
 * the scores first instead). The sums stay per lane, the four lanes of a
 * row adding up once at the end. P is rounded to the 16-bit type before
 * P V, as FlashAttention does.
 *
 * Key tiles of 64 stream through two shared buffers: cp.async copies the
 * next tile's k and v 16 bytes at a time while the tensor cores work on
 * this one (plain loads where the rows are not so aligned), one barrier a
 * tile. With a mask, a first pass lists the tiles where any row of the
 * block keeps a key; the others (a causal mask's upper triangle, padding)
 * are never loaded. A tile that drops no score of a warp takes a path with
 * no mask work at all; with is_causal a warp whose rows all precede the
 * tile skips it, as does a warp whose rows a staged mask tile drops
 * whole. */
static void att_body_mma(text *s, const att_kernel *ak) {
  const cuda_tensor *q = &ak->t[0], *k = &ak->t[1], *v = &ak->t[2], *m = ak->nin == 4 ? &ak->t[3] : NULL;
  const int r = q->rank, MT = ak->mt;
  const int64_t E = ak->E, EV = ak->EV, S = ak->S, L = ak->L, R = ak->rows, WR = R / 4;
  const int64_t LQ = E + 8, LK = E + 8, LV = EV + 8, ntiles = (S + ATT_KT - 1) / ATT_KT;
  const char *otag = cg_dtype_tag(ak->o.dtype);
  const double log2e = 1.4426950408889634, c = ak->scale * log2e;
  /* the raw scores' maximum is the scaled one's only for a positive scale;
   * a float mask is added after the scale */
  const bool fused = c > 0 && isfinite(c) && !(m && m->dtype != ALLOY_BOOL);
  char cs[32];
  snprintf(cs, sizeof cs, fused ? "%.9gf" : "1.f", c);
  cg_put(s, "  extern __shared__ __align__(16) unsigned short smem[];\n");
  cg_put(s, "  unsigned short *qs = smem, *kbuf = qs + %" PRId64 ", *vbuf = kbuf + %" PRId64 ";\n", R * LQ,
         2 * ATT_KT * LK);
  cg_put(s, "  const int w = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3, wr = w * %" PRId64
            ";\n  const i64 wrow = r0 + wr;\n", WR);

  /* the key tiles to visit: all up to `last`, or with a mask those where
   * a row of the block keeps a key */
  if (ak->mask_tiles) /* the mask's tiles staged (below) when its pointer is 16-byte aligned */
    cg_put(s, "  const bool mtiles = (((unsigned long long)p3) & 15) == 0;\n"
              "  unsigned char *mbuf = (unsigned char *)(vbuf + %" PRId64 ");\n", 2 * ATT_KT * LV);
  if (m) {
    cg_put(s, "  __shared__ int live[%" PRId64 "];\n  int nlive = 0;\n", ntiles);
    if (ak->mask_tiles) {
      /* 16 keys of a row at once, with no barrier between tiles: a flag a
       * tile (the loads of two tiles in flight), then warp 0 turns the
       * flags into the list in place (a ballot and a prefix count) */
      cg_put(s, "  if (mtiles) {\n    __shared__ int nls;\n    const int ntl = (int)((last + 63) / 64);\n");
      cg_put(s, "    for (int x = threadIdx.x; x < ntl; x += %d) live[x] = 0;\n    __syncthreads();\n", ATT_THREADS);
      cg_put(s, "    #pragma unroll 2\n    for (int jt = 0; jt < ntl; jt++) {\n      unsigned on = 0u;\n");
      att_for(s, "      ", "c", R * 4 / ATT_THREADS, 1);
      cg_put(s, "      {\n        const int x = threadIdx.x + c * %d;\n", ATT_THREADS);
      cg_put(s, "        const i64 row = r0 + (x >> 2), j = (i64)jt * 64 + (x & 3) * 16;\n");
      cg_put(s, "        if (row < %" PRId64 " && j < %" PRId64 ") {\n", L, S);
      cg_put(s, "          const uint4 u = __ldg((const uint4 *)(p3 + mb + row * msl + j));\n");
      cg_put(s, "          on |= u.x | u.y | u.z | u.w;\n        }\n      }\n      if (on) live[jt] = 1;\n    }\n");
      cg_put(s, "    __syncthreads();\n    if (w == 0) {\n      int n = 0;\n");
      cg_put(s, "      for (int b = 0; b < ntl; b += 32) {\n        const bool f = b + lane < ntl && live[b + lane];\n");
      cg_put(s, "        const unsigned bal = __ballot_sync(0xffffffffu, f);\n");
      cg_put(s, "        if (f) live[n + __popc(bal & ((1u << lane) - 1u))] = b + lane;\n        n += __popc(bal);\n      }\n");
      cg_put(s, "      if (lane == 0) nls = n;\n    }\n    __syncthreads();\n    nlive = nls;\n  } else {\n");
    }
    /* else an element at a time, a barrier a tile (__syncthreads_or:
     * every thread agrees) */
    const char *in = ak->mask_tiles ? "  " : "";
    cg_put(s, "%s  for (int jt = 0; (i64)jt * 64 < last; jt++) {\n%s    int any = 0;\n", in, in);
    cg_put(s, "%s    for (int x = threadIdx.x; x < %" PRId64 " && !any; x += %d) {\n", in, R * 64, ATT_THREADS);
    cg_put(s, "%s      const i64 row = r0 + (x >> 6), j = (i64)jt * 64 + (x & 63);\n", in);
    cg_put(s, "%s      if (row < %" PRId64 " && j < %" PRId64 "%s)\n", in, L, S, ak->a.causal ? " && j <= row" : "");
    if (m->dtype == ALLOY_BOOL) cg_put(s, "%s        any = ld_bool(p3, mb + row * msl + j * mss);\n", in);
    else cg_put(s, "%s        any = ld_%s(p3, mb + row * msl + j * mss) != ninf;\n", in, cg_dtype_tag(m->dtype));
    cg_put(s, "%s    }\n%s    if (__syncthreads_or(any)) {\n%s      if (threadIdx.x == 0) live[nlive] = jt;\n%s      nlive++;\n"
              "%s    }\n%s  }\n%s  __syncthreads();\n", in, in, in, in, in, in, in);
    if (ak->mask_tiles) cg_put(s, "  }\n");
  } else {
    /* through an asm move: NVVM unrolls a loop of a known trip count
     * whole, #pragma unroll 1 or not, copying the tile's code past what the
     * instruction cache holds */
    cg_put(s, "  int nlive;\n  asm(\"mov.b32 %%0, %%1;\" : \"=r\"(nlive) : \"r\"((int)((last + 63) / 64)));\n");
  }
  /* the first key of the it-th tile visited */
  cg_put(s, "  auto key0 = [&](int it) -> i64 { return (i64)%s * 64; };\n", m ? "live[it]" : "it");

  /* q's rows and a tile's k and v rows: 16-byte cp.async chunks
   * (zero-filled past the last row) when the rows allow, else plain loads */
  const att_rows rows[3] = {{"qs", "qb", "r0", "", 0, q, E, LQ, R, L}, {"kd", "kb", "j0", "on && ", 1, k, E, LK, ATT_KT, S},
                            {"vd", "vb", "j0", "on && ", 2, v, EV, LV, ATT_KT, S}};
  const bool qvec = att_rows_dense(q, 8), vec = att_rows_dense(k, 8) && att_rows_dense(v, 8);
  cg_put(s, "  const bool qvec = %s;\n", qvec ? "(((unsigned long long)p0) & 15) == 0" : "false");
  cg_put(s, "  const bool vec = %s;\n", vec ? "((((unsigned long long)p1) | ((unsigned long long)p2)) & 15) == 0" : "false");
  cg_put(s, "  if (qvec) {\n");
  att_copy_rows(s, "    ", &rows[0], r, true);
  cg_put(s, "  } else {\n");
  att_copy_rows(s, "    ", &rows[0], r, false);
  /* `on` false: the copies read nothing and fill zeros, a branch less in
   * the loop (whose branches make ptxas copy the code after them) */
  cg_put(s, "  }\n  auto load = [&](int buf, i64 j0, bool on) {\n");
  cg_put(s, "    unsigned short *kd = kbuf + buf * %" PRId64 ", *vd = vbuf + buf * %" PRId64 ";\n    if (vec) {\n",
         ATT_KT * LK, ATT_KT * LV);
  for (int i = 1; i < 3; i++) att_copy_rows(s, "      ", &rows[i], r, true);
  cg_put(s, "    } else {\n");
  for (int i = 1; i < 3; i++) att_copy_rows(s, "      ", &rows[i], r, false);
  cg_put(s, "    }\n");
  if (ak->mask_tiles) {
    cg_put(s, "    unsigned char *md = mbuf + buf * %" PRId64 ";\n    if (mtiles) {\n", R * ATT_MROW);
    cg_put(s, "      #pragma unroll\n      for (int c = 0; c < %" PRId64 "; c++) {\n", R * 4 / ATT_THREADS);
    cg_put(s, "        const int x = threadIdx.x + c * %d;\n        const i64 row = r0 + (x >> 2), j = j0 + (x & 3) * 16;\n",
           ATT_THREADS);
    cg_put(s, "        const bool in = on && row < %" PRId64 " && j < %" PRId64 ";\n", L, S);
    cg_put(s, "        cp_async16((unsigned short *)(md + (x >> 2) * %d + (x & 3) * 16), (const unsigned short *)(p3 + mb + "
              "(in ? row * msl + j : 0)), in);\n      }\n    } else {\n", ATT_MROW);
    /* a mask pointer not 16-byte aligned: the same tile, a byte at a time */
    cg_put(s, "      for (int x = threadIdx.x; x < %" PRId64 "; x += %d) {\n", R * 64, ATT_THREADS);
    cg_put(s, "        const i64 row = r0 + (x >> 6), j = j0 + (x & 63);\n");
    cg_put(s, "        md[(x >> 6) * %d + (x & 63)] = on && row < %" PRId64 " && j < %" PRId64 " && ld_bool(p3, mb + row * msl + j);\n"
              "      }\n    }\n", ATT_MROW, L, S);
  }
  cg_put(s, "    cp_async_commit();\n  };\n");
  /* q and the first tile in one group; q's fragments before the loop */
  cg_put(s, "  if (nlive > 0) load(0, key0(0), true);\n  else cp_async_commit();\n  cp_async_wait0();\n  __syncthreads();\n");
  char qa[32];
  if (ak->qregs) {
    cg_put(s, "  unsigned qa[%d][%" PRId64 "][4];\n", MT, E / 16);
    att_for(s, "  ", "mi", MT, 1);
    att_for(s, "    ", "kk", E / 16, 1);
    cg_put(s, "      ldsm_x4(qa[mi][kk], qs + (wr + mi * 16 + (lane & 15)) * %" PRId64 " + kk * 16 + (lane >> 4) * 8);\n",
           LQ);
    snprintf(qa, sizeof qa, "qa[mi][kk]");
  } else {
    snprintf(qa, sizeof qa, "qa[mi]");
  }
  /* mx: each row's maximum score; mc: the offset its exponents take,
   * mx * c (0 while mx is minus infinity, so that exp2 gives 0); the sum
   * in two parts (the lane's even and odd columns), two chains of
   * additions instead of one twice as long */
  cg_put(s, "  float o[%d][%" PRId64 "][4], mx[%d], mc[%d], sum[%d][2];\n", MT, EV / 8, 2 * MT, 2 * MT, 2 * MT);
  att_for(s, "  ", "mi", MT, 1);
  att_for(s, "    ", "et", EV / 8, 1);
  cg_put(s, "      o[mi][et][0] = o[mi][et][1] = o[mi][et][2] = o[mi][et][3] = 0.f;\n");
  att_for(s, "  ", "ri", 2 * MT, 1);
  cg_put(s, "    mx[ri] = ninf, mc[ri] = sum[ri][0] = sum[ri][1] = 0.f;\n");

  /* One barrier a tile: past it, this tile is in (each thread waited for
   * its own copies) and every warp is done with the last one, whose
   * buffers the next tile's copies then fill while this one is worked. */
  cg_put(s, "  for (int it = 0; it < nlive; it++) {\n    const i64 j0 = key0(it);\n");
  cg_put(s, "    cp_async_wait0();\n    __syncthreads();\n");
  cg_put(s, "    load((it + 1) & 1, key0(it + 1 < nlive ? it + 1 : it), it + 1 < nlive);\n");
  cg_put(s, "    const unsigned short *ks = kbuf + (it & 1) * %" PRId64 ", *vs = vbuf + (it & 1) * %" PRId64 ";\n",
         ATT_KT * LK, ATT_KT * LV);
  /* a staged mask tile: whether the warp's rows keep every key of it (no
   * mask work) or none (nothing to do); rows and keys past the end are
   * zeros there, so neither holds for a tile that crosses them */
  if (ak->mask_tiles) {
    cg_put(s, "    const unsigned char *mt = mbuf + (it & 1) * %" PRId64 ";\n", R * ATT_MROW);
    cg_put(s, "    unsigned an = 0x01010101u, on = 0u;\n");
    att_for(s, "    ", "c", WR * 4 / 32, 1);
    cg_put(s, "    {\n      const int x = lane + c * 32;\n");
    cg_put(s, "      const uint4 u = *(const uint4 *)(mt + (wr + (x >> 2)) * %d + (x & 3) * 16);\n", ATT_MROW);
    cg_put(s, "      an &= u.x & u.y & u.z & u.w;\n      on |= u.x | u.y | u.z | u.w;\n    }\n");
    cg_put(s, "    const bool wall = __all_sync(0xffffffffu, an == 0x01010101u), wany = __any_sync(0xffffffffu, on != 0u);\n");
  }
  /* with is_causal, the tiles past a warp's last row are nothing to it */
  if (ak->a.causal) cg_put(s, "    if (j0 <= wrow + %" PRId64 ") {\n", WR - 1);
  else if (ak->mask_tiles) cg_put(s, "    if (wany) {\n");
  const bool visit = ak->a.causal || ak->mask_tiles;
  /* the tile's work (att_tile), the way to drop scores picked for the
   * warp: none dropped (a tile inside the keys' bound, below the causal
   * diagonal for every row of the warp, or a staged mask tile whose bytes
   * for the warp's rows are all ones): no index arithmetic; else a staged
   * mask tile's bytes (zeros past the bounds), or the key and row indices
   * as offsets from constants against the bound and the causal diagonal,
   * or each score checked against a mask in memory */
  char plain[256] = "";
  size_t cl = 0;
  if (!m) {
    if (S % ATT_KT) cl += (size_t)snprintf(plain + cl, sizeof plain - cl, " && j0 + 64 <= %" PRId64, S);
    if (ak->a.causal) cl += (size_t)snprintf(plain + cl, sizeof plain - cl, " && j0 + 63 <= wrow");
  } else if (ak->mask_tiles) {
    snprintf(plain, sizeof plain, " && wall");
  }
  int paths[2], np = 0;
  if (!m || ak->mask_tiles) paths[np++] = P_PLAIN;
  if (ak->mask_tiles) paths[np++] = P_BYTES;
  else if (m) paths[np++] = P_SLOW;
  else if (cl > 0) {
    paths[np++] = P_BOUNDS;
    /* key minus row at the lane's first score, keys left after its first column */
    if (ak->a.causal) cg_put(s, "    const int dj = (int)(j0 - wrow) + 2 * t - g;\n");
    if (S % ATT_KT) cg_put(s, "    const int sj = %" PRId64 " - (int)j0 - 2 * t;\n", S);
  }
  for (int pi = 0; pi < np; pi++) {
    if (np > 1) cg_put(s, pi == 0 ? "    if (%s) {\n" : "    } else {\n", plain + 4);
    att_tile(s, ak, paths[pi], qa, cs, fused);
  }
  if (np > 1) cg_put(s, "    }\n");
  if (visit) cg_put(s, "    }\n");
  /* the last iteration's empty copies are not left in flight as the block
   * ends and its shared memory passes to the next */
  cg_put(s, "  }\n  cp_async_wait0();\n");

  /* the rows' sums over their four lanes; a row whose every key was
   * dropped has sum 0: zeros (_safe_softmax). Two columns a store where
   * the output's rows are dense. */
  const cuda_tensor *o = &ak->o;
  const bool ovec = att_rows_dense(o, 2);
  cg_put(s, "  float rs[%d];\n", 2 * MT);
  att_for(s, "  ", "ri", 2 * MT, 1);
  cg_put(s, "  {\n    rs[ri] = sum[ri][0] + sum[ri][1];\n    rs[ri] += __shfl_xor_sync(0xffffffffu, rs[ri], 1);\n");
  cg_put(s, "    rs[ri] += __shfl_xor_sync(0xffffffffu, rs[ri], 2);\n  }\n");
  cg_put(s, "  const bool ovec = %s;\n", ovec ? "(((unsigned long long)po) & 3) == 0" : "false");
  att_for(s, "  ", "ri", 2 * MT, 1);
  cg_put(s, "  {\n    const int mi = ri >> 1, h = ri & 1;\n    const i64 row = wrow + mi * 16 + g + h * 8;\n");
  cg_put(s, "    if (row >= %" PRId64 ") continue;\n", L);
  cg_put(s, "    const float inv = rs[ri] > 0.f ? 1.f / rs[ri] : 0.f, z = rs[ri] != rs[ri] ? rs[ri] : 0.f;\n");
  cg_put(s, "    if (ovec) {\n");
  att_for(s, "      ", "et", EV / 8, 1);
  cg_put(s, "        *(unsigned *)(po + 2 * (ob + row * %" PRId64 " + et * 8 + 2 * t)) =\n"
            "            pack2_%s(rs[ri] > 0.f ? o[mi][et][h * 2] * inv : z, rs[ri] > 0.f ? o[mi][et][h * 2 + 1] * inv : z);\n",
         o->strides[r - 2], otag);
  cg_put(s, "    } else {\n");
  att_for(s, "      ", "et", EV / 8, 1);
  att_for(s, "        ", "c", 2, 1);
  cg_put(s, "          st_%s(po, ob + row * %" PRId64 " + (et * 8 + 2 * t + c) * %" PRId64
            ", rs[ri] > 0.f ? o[mi][et][h * 2 + c] * inv : z);\n    }\n  }\n}\n",
         otag, o->strides[r - 2], o->strides[r - 1]);
}

/* The tensor-core helpers the mma body calls, once per module: mma.sync,
 * ldmatrix (plain and transposed), cp.async (16 bytes, zero-filled when
 * `full` is false), two floats rounded to a 16-bit pair by one cvt, all
 * sm_80 and later; and exp2 as the one MUFU instruction (exp2f without
 * fast math adds a fix-up for results below float's normal range, which
 * a probability rounded to 16 bits does not need). */
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
    "__device__ __forceinline__ float att_ex2(float x) { float y; asm(\"ex2.approx.ftz.f32 %0, %1;\" : \"=f\"(y) : \"f\"(x)); "
    "return y; }\n"
    "__device__ __forceinline__ unsigned pack2_bf16(float lo, float hi) {\n"
    "  unsigned d; asm(\"cvt.rn.bf16x2.f32 %0, %1, %2;\" : \"=r\"(d) : \"f\"(hi), \"f\"(lo)); return d; }\n"
    "__device__ __forceinline__ unsigned pack2_f16(float lo, float hi) {\n"
    "  unsigned d; asm(\"cvt.rn.f16x2.f32 %0, %1, %2;\" : \"=r\"(d) : \"f\"(hi), \"f\"(lo)); return d; }\n"
    "#endif\n";

/* The mma body's shape. Two row tiles a warp (each k and v fragment it
 * reads serving both) where the queries fill them, both tiles' outputs
 * and scores fit the registers beside the rest (head dims up to 64; ptxas
 * for sm_90: no spills) and the grid stays some waves deep (two blocks an
 * SM of an H100's 132, the occupancy those registers allow); else one,
 * twice the blocks. q's fragments stay in registers, but where two row
 * tiles share a kernel with another way through a tile (a mask, a causal
 * or the keys' bound): the registers go to that code, q's fragments are
 * read from shared memory each tile (H100: is_causal 35 against 40 us). */
static void att_mma_shape(att_kernel *ak) {
  ak->mt = ak->L > 64 && ak->E <= 64 && ak->EV <= 64 && ak->nbh * ((ak->L + 127) / 128) >= ATT_MANY ? 2 : 1;
  ak->qregs = ak->mt == 1 || (ak->nin == 3 && !ak->a.causal && ak->S % ATT_KT == 0);
  ak->rows = 64 * ak->mt;
}

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
  int64_t nbh = 1;
  for (int d = 0; d < ak.nb; d++) nbh *= ak.o.sizes[d];
  ak.nbh = nbh;
  if (ak.L == 0 || nbh == 0) return; /* nothing to compute */
  ak.mask_tiles = mma && att_mask_tileable(&ak);
  if (mma) att_mma_shape(&ak);
  else ak.rows = ATT_THREADS;
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
  snprintf(l->name, sizeof l->name, "k%d", id), l->kernel = id;
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
