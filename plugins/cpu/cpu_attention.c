/*
 * plugins/cpu/cpu_attention.c: scaled_dot_product_attention on the cpu
 * backend as one step, flash-style: the scores of a block of query rows
 * against a block of keys live in a buffer on the stack (32 x 128 floats),
 * never the whole [L, S] matrix. This file holds the node's claim
 * (cpu_attention_unsupported), its plan step (cp_emit_attention, a
 * STEP_GEMM whose cpu_gemm_desc.attn is on) and its run (cpu_attention_rows).
 *
 * The step's rows are units of (batch index, block of ATT_QB query rows),
 * which the backend's pool splits over its threads like a product's rows.
 * A unit walks the keys in blocks of ATT_KB: the block's scores Q K^T with
 * one sgemm, the scale, the mask and the causal cut, then the online
 * softmax (a running maximum and sum per row: the output accumulator is
 * rescaled when the maximum grows) and O += P V with a second sgemm.
 * is_causal stops a unit at its last row's diagonal.
 *
 * Semantics are PyTorch's math path (_scaled_dot_product_attention_math
 * with _safe_softmax), as the cuda backend's kernel has them: a bool mask
 * drops the keys where it is false, a float mask is added to the scores,
 * is_causal keeps key j of query i where j <= i (top-left aligned, as
 * torch.ones(L, S).tril()), and a row whose keys are all dropped gives
 * zeros, not NaN. float32 only, accumulated in float as PyTorch's CPU
 * kernels do; without OpenBLAS the two products are fused multiply-add
 * loops.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "plugins/cpu/cpu_blas.h"
#include "plugins/cpu/cpu_plan.h"

enum { ATT_QB = 32, ATT_KB = 128, ATT_MAX_HEAD = 256 };
enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 };

/* ---- the claim --------------------------------------------------------------*/

static int64_t size_of(const alloy_host_api *h, const alloy_value *v, int d) {
  int64_t s = -1;
  return h->value_size(v, d, &s) ? s : -1;
}

const char *cpu_attention_unsupported(const alloy_host_api *h, const alloy_node *n) {
  const alloy_arg *dp = cp_arg_named(h, n, "dropout_p");
  double p = 0;
  if (dp && h->arg_float(dp, &p) && p != 0) return "attention with dropout";
  if (cp_bool_arg(h, n, "enable_gqa", false)) return "attention with grouped heads (enable_gqa)";
  const alloy_value *q = cp_value_arg(h, n, "query"), *k = cp_value_arg(h, n, "key"), *v = cp_value_arg(h, n, "value");
  const alloy_value *m = cp_value_arg(h, n, "attn_mask");
  if (!q || !k || !v) return "attention without query, key and value tensors";
  if (h->value_dtype(q) != ALLOY_F32 || h->value_dtype(k) != ALLOY_F32 || h->value_dtype(v) != ALLOY_F32)
    return "attention of other than float32 (decomposed instead)";
  int r = h->value_rank(q);
  if (r < 2 || r > CPU_MAX_RANK || h->value_rank(k) != r || h->value_rank(v) != r)
    return "attention operands of different ranks";
  for (int d = 0; d < r - 2; d++)
    if (size_of(h, k, d) != size_of(h, q, d) || size_of(h, v, d) != size_of(h, q, d))
      return "attention with broadcast batch dims";
  int64_t e = size_of(h, q, r - 1), ev = size_of(h, v, r - 1);
  if (e < 1 || e > ATT_MAX_HEAD || ev < 1 || ev > ATT_MAX_HEAD) return "attention head dims past 256";
  if (size_of(h, k, r - 1) != e || size_of(h, v, r - 2) != size_of(h, k, r - 2))
    return "attention operands of mismatched sizes";
  if (m) {
    alloy_dtype mt = h->value_dtype(m);
    if (mt != ALLOY_BOOL && mt != ALLOY_F32) return "attention mask of other than bool or float32";
    if (h->value_rank(m) > r) return "attention mask of more dims than the query";
  }
  for (int d = 0; d < r; d++)
    if (size_of(h, q, d) < 0 || size_of(h, k, d) < 0 || size_of(h, v, d) < 0) return "symbolic sizes reach compile";
  return NULL;
}

/* ---- the plan ---------------------------------------------------------------*/

/* t with rows sgemm can read (its last dim packed, rows at least a row
 * apart: not an expanded stride-0 view), else a dense copy. */
static int rows_packed(builder *b, int ti) {
  const cpu_tensor *t = &b->tensors[ti];
  int64_t cols = t->sizes[t->rank - 1], ld = t->strides[t->rank - 2];
  if ((t->strides[t->rank - 1] == 1 || cols == 1) && (ld >= cols || t->sizes[t->rank - 2] == 1)) return ti;
  int c = cp_temp_like(b, t, t->dtype);
  if (c >= 0) cp_emit_copy(b, &b->tensors[ti], &b->tensors[c]);
  return c;
}

/* t's stride along dim d counted from the right of its nb batch dims
 * (aligned right with the output's), 0 where it broadcasts. */
static int64_t batch_stride(const cpu_tensor *t, int tail, int nb, int d) {
  int lead = nb - (t->rank - tail), td = d - lead;
  return td < 0 || td >= t->rank - tail || t->sizes[td] == 1 ? 0 : t->strides[td];
}

void cp_emit_attention(builder *b, const alloy_node *n, const cpu_op *op) {
  (void)op;
  const alloy_host_api *h = b->host;
  const char *why = cpu_attention_unsupported(h, n);
  if (why) return (void)cp_fail(b, n, "%s", why);
  const alloy_value *qv = cp_value_arg(h, n, "query"), *kv = cp_value_arg(h, n, "key"), *vv = cp_value_arg(h, n, "value");
  const alloy_value *mv = cp_value_arg(h, n, "attn_mask");
  int ti[4] = {-1, -1, -1, -1};
  const alloy_value *vals[4] = {qv, kv, vv, mv};
  for (int i = 0; i < 4; i++)
    if (vals[i] && (ti[i] = cp_in_memory(b, n, vals[i])) < 0) return;
  for (int i = 0; i < 3; i++)
    if ((ti[i] = rows_packed(b, ti[i])) < 0) return;
  int oi = cp_materialize(b, h->node_output(n, 0));
  if (oi < 0) return;
  cpu_tensor out = b->tensors[oi], o = out;
  bool copy_out = o.strides[o.rank - 1] != 1 && o.sizes[o.rank - 1] != 1;
  if (copy_out) {
    int t = cp_temp_like(b, &out, ALLOY_F32);
    if (t < 0) return;
    o = b->tensors[t];
  }
  const cpu_tensor *q = &b->tensors[ti[0]], *k = &b->tensors[ti[1]], *v = &b->tensors[ti[2]];
  const cpu_tensor *m = ti[3] >= 0 ? &b->tensors[ti[3]] : NULL;
  int r = q->rank, nb = r - 2;
  cpu_attn_desc a = {.on = true, .causal = cp_bool_arg(h, n, "is_causal", false), .nb = nb};
  a.L = q->sizes[r - 2], a.S = k->sizes[r - 2], a.E = q->sizes[r - 1], a.EV = v->sizes[r - 1];
  double scale = cp_float_arg(h, n, "scale", NAN);
  a.scale = (float)(isnan(scale) ? 1.0 / sqrt((double)a.E) : scale);
  a.mask = !m ? 0 : m->dtype == ALLOY_BOOL ? 1 : 2;
  a.nbatch = 1;
  for (int d = 0; d < nb; d++) {
    a.bsizes[d] = o.sizes[d], a.nbatch *= o.sizes[d];
    a.qbs[d] = batch_stride(q, 2, nb, d), a.kbs[d] = batch_stride(k, 2, nb, d);
    a.vbs[d] = batch_stride(v, 2, nb, d), a.obs[d] = batch_stride(&o, 2, nb, d);
  }
  /* row strides; a single row's is any value sgemm takes */
  a.ldq = a.L == 1 ? a.E : q->strides[r - 2], a.ldk = a.S == 1 ? a.E : k->strides[r - 2];
  a.ldv = a.S == 1 ? a.EV : v->strides[r - 2], a.ldo = o.strides[r - 2];
  a.q_off = q->offset, a.k_off = k->offset, a.v_off = v->offset, a.o_off = o.offset;
  if (m) {
    /* the mask's last two dims (a mask of fewer dims broadcasts along the
     * missing ones) and its batch dims aligned right with the output's */
    int mr = m->rank;
    a.msl = mr >= 2 && m->sizes[mr - 2] != 1 ? m->strides[mr - 2] : 0;
    a.mss = mr >= 1 && m->sizes[mr - 1] != 1 ? m->strides[mr - 1] : 0;
    for (int d = 0; d < nb; d++) a.mbs[d] = mr >= 2 ? batch_stride(m, 2, nb, d) : 0;
    a.m_off = m->offset;
  }
  a.nqblocks = (a.L + ATT_QB - 1) / ATT_QB;
  cpu_step *st = cp_add_step(b);
  if (!st) return;
  st->kind = STEP_GEMM;
  cpu_gemm_desc *g = &st->gemm;
  g->attn = a;
  /* for cpu_blas_fits: the products' sizes */
  g->m = ATT_QB, g->n = ATT_KB > a.EV ? ATT_KB : a.EV, g->k = a.E > ATT_KB ? a.E : ATT_KB, g->batch = 1;
  g->lda = a.ldq, g->ldb = a.ldk > a.ldv ? a.ldk : a.ldv, g->ldd = a.ldo;
  st->gbase[GEMM_A] = q->base, st->gbase[GEMM_B] = k->base, st->gbase[GEMM_C] = v->base;
  st->gbase[GEMM_E] = m ? m->base : -1, st->gbase[GEMM_D] = o.base; /* offsets: a's */
  st->rows = a.nbatch * a.nqblocks;
  st->row_work = 2 * ATT_QB * a.S * (a.E + a.EV);
  snprintf(st->what, sizeof st->what, "attention%s%s", a.causal ? "+causal" : "",
           a.mask == 1 ? "+bool mask" : a.mask == 2 ? "+mask" : "");
  b->plan->nfused_nodes++;
  if (copy_out) cp_emit_copy(b, &o, &out);
}

/* ---- the run ------------------------------------------------------------------*/

/* e^x for float, vectorizable: Cephes's expf (a power of two times a
 * degree-6 polynomial of the remainder, within 2 ulp; the same one the
 * emitted loops use, cpu_ir.c), since a loop calling libm's expf stays
 * scalar. Overflow, underflow (subnormals in two steps) and NaN as libm. */
static inline float exp_f32(float x) {
  float c = x < -104.0f ? -104.0f : x;
  c = c > 89.0f ? 89.0f : c;
  /* round to nearest even by the 1.5 * 2^23 trick (no roundps before SSE4.1) */
  float n = (c * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = (c - n * 0.693359375f) - n * -2.12194440e-4f, z = r * r;
  float q = ((((1.9875691500e-4f * r + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r + 4.1665795894e-2f) * r +
             1.6666665459e-1f) * r + 5.0000001201e-1f;
  float y = q * z + r + 1.0f;
  int32_t ni = (int32_t)(n == n ? n : 0.0f), n1 = ni >> 1, n2 = ni - n1; /* NaN: its result is x, below */
  uint32_t b1 = (uint32_t)(n1 + 127) << 23, b2 = (uint32_t)(n2 + 127) << 23;
  float f1, f2;
  memcpy(&f1, &b1, sizeof f1);
  memcpy(&f2, &b2, sizeof f2);
  float v = y * f1 * f2;
  v = x > 88.72283935546875f ? INFINITY : v;
  v = x < -103.97208404541015625f ? 0.0f : v;
  return x != x ? x : v;
}

/* s[j] = e^(s[j] - m) (0 for a dropped key, -inf), and their sum: the
 * softmax's inner loop, cloned for AVX-512 and AVX2 (the loader picks). */
#if defined(__x86_64__) && (defined(__clang__) || __GNUC__ >= 6)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static float exp_sum(float *s, int64_t n, float m) {
  for (int64_t j = 0; j < n; j++) { /* vectorized: no reduction in it */
    float p = exp_f32(s[j] - m);
    s[j] = s[j] == -INFINITY ? 0.0f : p;
  }
  float sum = 0; /* in order, as a float sum without reassociation is */
  for (int64_t j = 0; j < n; j++) sum += s[j];
  return sum;
}

/* D (m x n, row stride ldd) = A (m x k, lda) @ B^T (B: n x k, ldb) or
 * D += A @ B (B: k x n, ldb): fused multiply-adds in k's order. */
static void loop_abt(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *bt, int64_t ldb,
                     float *d, int64_t ldd) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      float acc = 0;
      for (int64_t p = 0; p < k; p++) acc = fmaf(a[i * lda + p], bt[j * ldb + p], acc);
      d[i * ldd + j] = acc;
    }
}

static void loop_ab_acc(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *bm, int64_t ldb,
                        float *d, int64_t ldd) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t p = 0; p < k; p++) {
      float av = a[i * lda + p];
      if (av == 0) continue; /* a dropped key: nothing to add (and no 0 * inf) */
      for (int64_t j = 0; j < n; j++) d[i * ldd + j] = fmaf(av, bm[p * ldb + j], d[i * ldd + j]);
    }
}

void cpu_attention_rows(const cpu_blas *bl, const cpu_gemm_desc *g, const float *qb, const float *kb,
                        const float *vb, const void *mb, float *ob, int64_t begin, int64_t end) {
  const cpu_attn_desc *a = &g->attn;
  bool blas = bl && bl->sgemm;
  float s[ATT_QB * ATT_KB], acc[ATT_QB * ATT_MAX_HEAD], mx[ATT_QB], sum[ATT_QB];
  for (int64_t u = begin; u < end; u++) {
    int64_t qblk = u % a->nqblocks, bi = u / a->nqblocks, rest = bi;
    int64_t qo = a->q_off, ko = a->k_off, vo = a->v_off, oo = a->o_off, mo = a->m_off;
    for (int d = a->nb - 1; d >= 0; d--) {
      int64_t idx = rest % a->bsizes[d];
      rest /= a->bsizes[d];
      qo += idx * a->qbs[d], ko += idx * a->kbs[d], vo += idx * a->vbs[d], oo += idx * a->obs[d];
      mo += idx * a->mbs[d];
    }
    int64_t r0 = qblk * ATT_QB, rows = a->L - r0 < ATT_QB ? a->L - r0 : ATT_QB;
    const float *q = qb + qo + r0 * a->ldq;
    for (int64_t i = 0; i < rows; i++) mx[i] = -INFINITY, sum[i] = 0;
    memset(acc, 0, sizeof *acc * (size_t)(rows * a->EV));
    /* causal: no key past the last row's diagonal */
    int64_t last = a->causal ? (r0 + rows < a->S ? r0 + rows : a->S) : a->S;
    for (int64_t j0 = 0; j0 < last; j0 += ATT_KB) {
      int64_t cols = last - j0 < ATT_KB ? last - j0 : ATT_KB;
      const float *k = kb + ko + j0 * a->ldk, *v = vb + vo + j0 * a->ldv;
      if (blas)
        bl->sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_TRANS, (int)rows, (int)cols, (int)a->E, 1.0f, q,
                  (int)a->ldq, k, (int)a->ldk, 0.0f, s, ATT_KB);
      else
        loop_abt(rows, cols, a->E, q, a->ldq, k, a->ldk, s, ATT_KB);
      for (int64_t i = 0; i < rows; i++) {
        float *si = s + i * ATT_KB, m_new = mx[i];
        int64_t qi = r0 + i;
        for (int64_t j = 0; j < cols; j++) {
          float x = si[j] * a->scale;
          int64_t kj = j0 + j, moff = mo + qi * a->msl + kj * a->mss;
          if (a->causal && kj > qi) x = -INFINITY;
          else if (a->mask == 1 && !((const unsigned char *)mb)[moff]) x = -INFINITY;
          else if (a->mask == 2) x += ((const float *)mb)[moff];
          si[j] = x;
          if (isnan(x) || x > m_new) m_new = isnan(m_new) ? m_new : x; /* NaN stays */
        }
        /* every key so far dropped: nothing to add yet */
        if (m_new == -INFINITY) {
          for (int64_t j = 0; j < cols; j++) si[j] = 0;
          continue;
        }
        float alpha = mx[i] == -INFINITY ? 0.0f : expf(mx[i] - m_new), part = exp_sum(si, cols, m_new);
        sum[i] = sum[i] * alpha + part;
        mx[i] = m_new;
        if (alpha != 1.0f)
          for (int64_t c = 0; c < a->EV; c++) acc[i * a->EV + c] *= alpha;
      }
      if (blas)
        bl->sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, (int)rows, (int)a->EV, (int)cols, 1.0f, s, ATT_KB,
                  v, (int)a->ldv, 1.0f, acc, (int)a->EV);
      else
        loop_ab_acc(rows, a->EV, cols, s, ATT_KB, v, a->ldv, acc, a->EV);
    }
    /* _safe_softmax: a row with every key dropped is zeros */
    for (int64_t i = 0; i < rows; i++) {
      float *o = ob + oo + (r0 + i) * a->ldo;
      for (int64_t c = 0; c < a->EV; c++) o[c] = mx[i] == -INFINITY ? 0.0f : acc[i * a->EV + c] / sum[i];
    }
  }
}
