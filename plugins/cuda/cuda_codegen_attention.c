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

void cg_emit_attention(builder *b, const alloy_node *n, const cuda_op *op) {
  (void)op;
  const alloy_host_api *h = b->host;
  att_args a;
  att_args_read(h, n, &a);
  const alloy_value *vals[4] = {a.q, a.k, a.v, a.mask};
  cuda_tensor t[4];
  int nin = a.mask ? 4 : 3;
  for (int i = 0; i < nin; i++) {
    vinfo *vi = cg_val(b, vals[i]);
    if (vi->tensor < 0) return (void)cg_fail(b, n, "an operand is not in memory");
    t[i] = b->tensors[vi->tensor];
  }
  int to = cg_materialize(b, h->node_output(n, 0));
  if (to < 0) return;
  cuda_tensor o = b->tensors[to];
  const cuda_tensor *q = &t[0], *k = &t[1], *v = &t[2], *m = a.mask ? &t[3] : NULL;
  int r = q->rank, nb = r - 2;
  int64_t L = q->sizes[r - 2], S = k->sizes[r - 2], E = q->sizes[r - 1], EV = v->sizes[r - 1];
  double scale = isnan(a.scale) ? 1.0 / sqrt((double)E) : a.scale;
  int64_t tk = ATT_SMEM / (int64_t)(4 * (E + EV));
  if (tk > 64) tk = 64;
  int64_t nbh = 1;
  for (int d = 0; d < nb; d++) nbh *= o.sizes[d];
  if (L == 0 || nbh == 0) return; /* nothing to compute */
  if ((L + ATT_THREADS - 1) / ATT_THREADS * nbh > INT32_MAX) return (void)cg_fail(b, n, "attention of too many rows");

  const char *tag = cg_dtype_tag(q->dtype), *otag = cg_dtype_tag(o.dtype);
  text s = {0};
  cg_put(&s, "extern \"C\" __global__ void __launch_bounds__(%d) KNAME(", ATT_THREADS);
  for (int i = 0; i < nin; i++) cg_put(&s, "const char *__restrict__ p%d, ", i);
  cg_put(&s, "char *__restrict__ po, i64 n) {\n");
  cg_put(&s, "  __shared__ float ks[%" PRId64 "][%" PRId64 "], vs[%" PRId64 "][%" PRId64 "];\n", tk, E, tk, EV);
  /* blocks: the row tiles of each batch index, in x (y would stop at 65535) */
  int64_t tiles = (L + ATT_THREADS - 1) / ATT_THREADS;
  cg_put(&s, "  const i64 tile = blockIdx.x %% %" PRId64 ", row = tile * %d + threadIdx.x;\n", tiles, ATT_THREADS);
  if (nb > 0) cg_put(&s, "  i64 br = blockIdx.x / %" PRId64 ";\n", tiles);
  for (int d = nb - 1; d >= 0; d--)
    cg_put(&s, "  const i64 b%d = br %% %" PRId64 "; br /= %" PRId64 ";\n", d, o.sizes[d], o.sizes[d]);
  char off[4][512], oo[512];
  for (int i = 0; i < nin; i++) batch_offset(&t[i], nb, off[i], sizeof off[i]);
  batch_offset(&o, nb, oo, sizeof oo);
  cg_put(&s, "  const i64 qb = %s, kb = %s, vb = %s, ob = %s;\n", off[0], off[1], off[2], oo);
  if (m) {
    /* the mask's own last two dims, broadcast where they are 1 */
    int64_t msl = m->rank >= 2 && m->sizes[m->rank - 2] != 1 ? m->strides[m->rank - 2] : 0;
    int64_t mss = m->rank >= 1 && m->sizes[m->rank - 1] != 1 ? m->strides[m->rank - 1] : 0;
    cuda_tensor mb = *m;
    if (mb.rank < 2) { /* a mask of one dim (or none) has no batch dims */
      mb.rank = 2;
      mb.offset = m->offset;
    }
    char mo[512];
    batch_offset(&mb, nb, mo, sizeof mo);
    cg_put(&s, "  const i64 mb = %s, msl = %" PRId64 ", mss = %" PRId64 ";\n", mo, msl, mss);
  }
  int64_t qsl = q->strides[r - 2], qse = q->strides[r - 1], ksl = k->strides[r - 2], kse = k->strides[r - 1],
          vsl = v->strides[r - 2], vse = v->strides[r - 1], osl = o.strides[r - 2], ose = o.strides[r - 1];
  cg_put(&s, "  const bool live = row < %" PRId64 ";\n", L);
  cg_put(&s, "  float q[%" PRId64 "], acc[%" PRId64 "];\n", E, EV);
  cg_put(&s, "  #pragma unroll\n  for (int e = 0; e < %" PRId64 "; e++) q[e] = live ? ld_%s(p0, qb + row * %" PRId64
             " + e * %" PRId64 ") * %.9gf : 0.f;\n", E, tag, qsl, qse, scale);
  cg_put(&s, "  #pragma unroll\n  for (int e = 0; e < %" PRId64 "; e++) acc[e] = 0.f;\n", EV);
  /* NVRTC has no math.h: minus infinity by its bits */
  cg_put(&s, "  const float ninf = __int_as_float(0xff800000);\n  float mx = ninf, sum = 0.f;\n");
  if (a.causal)
    cg_put(&s, "  const i64 last = min((i64)%" PRId64 ", tile * %d + %d);\n", S, ATT_THREADS, ATT_THREADS);
  else cg_put(&s, "  const i64 last = %" PRId64 ";\n", S);
  cg_put(&s, "  for (i64 j0 = 0; j0 < last; j0 += %" PRId64 ") {\n", tk);
  cg_put(&s, "    __syncthreads();\n");
  cg_put(&s, "    for (int x = threadIdx.x; x < %" PRId64 "; x += %d) {\n", tk * E, ATT_THREADS);
  cg_put(&s, "      const int jj = x / %" PRId64 ", e = x %% %" PRId64 "; const i64 j = j0 + jj;\n", E, E);
  cg_put(&s, "      ks[jj][e] = j < %" PRId64 " ? ld_%s(p1, kb + j * %" PRId64 " + e * %" PRId64 ") : 0.f;\n    }\n", S,
         tag, ksl, kse);
  cg_put(&s, "    for (int x = threadIdx.x; x < %" PRId64 "; x += %d) {\n", tk * EV, ATT_THREADS);
  cg_put(&s, "      const int jj = x / %" PRId64 ", e = x %% %" PRId64 "; const i64 j = j0 + jj;\n", EV, EV);
  cg_put(&s, "      vs[jj][e] = j < %" PRId64 " ? ld_%s(p2, vb + j * %" PRId64 " + e * %" PRId64 ") : 0.f;\n    }\n", S,
         tag, vsl, vse);
  cg_put(&s, "    __syncthreads();\n    if (!live) continue;\n");
  cg_put(&s, "    const int nj = (int)min((i64)%" PRId64 ", last - j0);\n", tk);
  cg_put(&s, "    for (int jj = 0; jj < nj; jj++) {\n      const i64 j = j0 + jj;\n");
  if (a.causal) cg_put(&s, "      if (j > row) break;\n");
  cg_put(&s, "      float sc = 0.f;\n      #pragma unroll\n      for (int e = 0; e < %" PRId64 "; e++) sc += q[e] * ks[jj][e];\n", E);
  if (m && m->dtype == ALLOY_BOOL) cg_put(&s, "      if (!ld_bool(p3, mb + row * msl + j * mss)) continue;\n");
  else if (m) cg_put(&s, "      sc += ld_%s(p3, mb + row * msl + j * mss);\n", cg_dtype_tag(m->dtype));
  cg_put(&s, "      if (sc == ninf) continue;\n");
  cg_put(&s, "      if (sc > mx) {\n        const float c = expf(mx - sc);\n        sum *= c;\n"
             "        #pragma unroll\n        for (int e = 0; e < %" PRId64 "; e++) acc[e] *= c;\n        mx = sc;\n      }\n", EV);
  cg_put(&s, "      const float pj = expf(sc - mx);\n      sum += pj;\n");
  cg_put(&s, "      #pragma unroll\n      for (int e = 0; e < %" PRId64 "; e++) acc[e] += pj * vs[jj][e];\n    }\n  }\n", EV);
  /* a row whose every key was dropped has sum 0: zeros (_safe_softmax) */
  cg_put(&s, "  if (live) {\n    const float inv = sum > 0.f ? 1.f / sum : 0.f;\n");
  cg_put(&s, "    #pragma unroll\n    for (int e = 0; e < %" PRId64 "; e++) st_%s(po, ob + row * %" PRId64 " + e * %" PRId64
             ", sum > 0.f ? acc[e] * inv : (sum != sum ? sum : 0.f));\n  }\n}\n", EV, otag, osl, ose);
  if (s.oom) {
    free(s.s);
    return (void)cg_fail(b, n, "out of memory");
  }
  int id = cg_custom_kernel(b, s.s, nin + 1);
  free(s.s);
  cuda_launch *l = cg_add_launch(b);
  if (!l) return;
  snprintf(l->name, sizeof l->name, "k%d", id);
  l->kind = LAUNCH_KERNEL;
  l->n = 1;
  l->block = ATT_THREADS;
  l->grid[0] = (unsigned)(tiles * nbh);
  l->grid[1] = l->grid[2] = 1;
  l->nbases = nin + 1;
  l->bases = malloc(sizeof *l->bases * (size_t)(nin + 1));
  if (!l->bases) return (void)cg_fail(b, n, "out of memory");
  for (int i = 0; i < nin; i++) l->bases[i] = t[i].base;
  l->bases[nin] = o.base;
}
