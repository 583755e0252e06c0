/*
 * ir/meta_linalg.c: shape functions of linear algebra (see ir/meta.h): the
 * matrix products (mm, bmm, the add* forms, dot, mv, linear, _trilinear,
 * scaled_dot_product_attention), the torch.linalg decompositions and
 * solvers, vector norms, cross and renorm (the FFTs: ir/meta_fft.c).
 *
 * Linear-algebra ops treat the last two dims as the matrix and every dim
 * before them as a batch; pivots and info outputs are int32, ranks int64,
 * and singular/eigen values are real even for complex inputs, as in
 * PyTorch. Sizes stay symbolic: a check between sizes fails only when the
 * symbols' ranges prove it false (an undecidable one is assumed to hold,
 * as PyTorch would record a guard for it).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/linalg_forms.h"
#include "ir/meta.h"

/* --- helpers ------------------------------------------------------------*/

static alloy_dim C(int64_t v) { return alloy_dim_const(v); }

static bool never_eq(alloy_meta *m, alloy_dim a, alloy_dim b) {
  return alloy_dim_eq(m->st, a, b) == ALLOY_FALSE;
}

static alloy_error *want_rank(alloy_meta *m, int i, const alloy_value *t, int lo, int hi) {
  if (t->rank >= lo && t->rank <= hi) return NULL;
  char s[256];
  meta_shape_text(t->shape, t->rank, s, sizeof s);
  if (lo == hi)
    return meta_error(m, "argument '%s': expected a %d-D tensor, got shape %s",
                      meta_arg_name(m, i), lo, s);
  if (hi >= ALLOY_MAX_RANK)
    return meta_error(m, "argument '%s': expected a tensor with at least %d dimensions, got "
                      "shape %s", meta_arg_name(m, i), lo, s);
  return meta_error(m, "argument '%s': expected a %d-D to %d-D tensor, got shape %s",
                    meta_arg_name(m, i), lo, hi, s);
}

static alloy_error *want_same_dtype(alloy_meta *m, int i, const alloy_value *a, int j,
                                    const alloy_value *b) {
  if (a->dtype == b->dtype) return NULL;
  return meta_error(m, "expected '%s' and '%s' to have the same dtype, got %s and %s",
                    meta_arg_name(m, i), meta_arg_name(m, j), alloy_dtype_name(a->dtype),
                    alloy_dtype_name(b->dtype));
}

/* checkFloatingOrComplex; low: float16 and bfloat16 allowed. */
static alloy_error *want_float(alloy_meta *m, int i, const alloy_value *t, bool low) {
  bool ok = alloy_dtype_is_float(t->dtype) || alloy_dtype_is_complex(t->dtype);
  if (ok && !low && (t->dtype == ALLOY_F16 || t->dtype == ALLOY_BF16)) ok = false;
  if (ok) return NULL;
  return meta_error(m, "argument '%s': expected a %sfloating point or complex tensor, got %s",
                    meta_arg_name(m, i), low ? "" : "float32/float64 ", alloy_dtype_name(t->dtype));
}

/* Sizes a and b must agree; what names them in the error. */
static alloy_error *want_eq(alloy_meta *m, alloy_dim a, alloy_dim b, const char *what) {
  if (!never_eq(m, a, b)) return NULL;
  char x[64], y[64];
  alloy_dim_print(a, x, sizeof x);
  alloy_dim_print(b, y, sizeof y);
  return meta_error(m, "%s: %s != %s", what, x, y);
}

static alloy_dtype real_dtype(alloy_dtype t) {
  return t == ALLOY_C64 ? ALLOY_F32 : t == ALLOY_C128 ? ALLOY_F64 : t;
}

/* A batch of matrices: at least 2-D, and square when asked. */
static alloy_error *want_matrix(alloy_meta *m, int i, const alloy_value *t, bool square) {
  alloy_error *e = want_rank(m, i, t, 2, ALLOY_MAX_RANK);
  if (e || !square) return e;
  if (never_eq(m, t->shape[t->rank - 1], t->shape[t->rank - 2])) {
    char s[256];
    return meta_error(m, "argument '%s': expected a batch of square matrices, got shape %s",
                      meta_arg_name(m, i), meta_shape_text(t->shape, t->rank, s, sizeof s));
  }
  return NULL;
}

/* out = shape[:-drop] ++ tail (ntail dims); returns the rank. */
static int with_tail(const alloy_dim *shape, int rank, int drop, const alloy_dim *tail,
                     int ntail, alloy_dim *out) {
  memmove(out, shape, sizeof *out * (size_t)(rank - drop));
  memcpy(out + rank - drop, tail, sizeof *out * (size_t)ntail);
  return rank - drop + ntail;
}

/* The broadcast of the batch dims (all but the last two) of a and b. */
static alloy_error *batch_broadcast(alloy_meta *m, const alloy_value *a, const alloy_value *b,
                                    alloy_dim *out, int *rank) {
  return meta_broadcast(m, a->shape, a->rank - 2, b->shape, b->rank - 2, out, rank);
}

/* --- matrix products ----------------------------------------------------*/

enum { MM, BMM, MV, DOT, OUTER, BATCH_SUM }; /* shapes of a product */
#define ADDS 8       /* the add* form: self, then the two factors */
#define OUT_DTYPE 16 /* the CUDA .dtype form: out_dtype after the factors */

/* The .dtype forms (addmm.dtype, baddbmm.dtype; CUDA only in PyTorch) give
 * their result in out_dtype: the factors' own dtype, or float32 from
 * float16 or bfloat16 factors (the product accumulated in float32); self
 * is in either. PyTorch's checks and messages (cuda/Blas.cpp). */
static alloy_error *want_out_dtype(alloy_meta *m, int ia, const alloy_value *a, alloy_dtype out) {
  bool low = a->dtype == ALLOY_F16 || a->dtype == ALLOY_BF16;
  if (out != a->dtype && !(out == ALLOY_F32 && low))
    return meta_error(m, "out_dtype must be the same as input dtype or fp32 for fp16/bf16 inputs");
  const alloy_value *self = meta_tensor(m, 0);
  if (self->dtype != out && self->dtype != a->dtype)
    return meta_error(m, "self dtype must match either out_dtype or %s dtype", meta_arg_name(m, ia));
  return NULL;
}

/* mm, bmm, mv, dot, vdot and addmm, addbmm, baddbmm, addmv, addr. All
 * operands share one dtype (but in the .dtype forms); self of the add*
 * forms broadcasts to the product. param: the product's kind | ADDS |
 * OUT_DTYPE */
static alloy_error *meta_matmul(alloy_meta *m) {
  static const int ranks[][2] = {{2, 2}, {3, 3}, {2, 1}, {1, 1}, {1, 1}, {3, 3}};
  int kind = m->param & 7, ia = m->param & ADDS ? 1 : 0, ib = ia + 1;
  const alloy_value *a = meta_tensor(m, ia), *b = meta_tensor(m, ib);
  alloy_error *e = want_rank(m, ia, a, ranks[kind][0], ranks[kind][0]);
  if (!e) e = want_rank(m, ib, b, ranks[kind][1], ranks[kind][1]);
  if (!e) e = want_same_dtype(m, ia, a, ib, b);
  if (e) return e;
  alloy_dim out[3];
  int rank = 0;
  char sa[256], sb[256];
  meta_shape_text(a->shape, a->rank, sa, sizeof sa);
  meta_shape_text(b->shape, b->rank, sb, sizeof sb);
  bool ok = true;
  switch (kind) {
    case MM:
    case MV:
      ok = !never_eq(m, a->shape[1], b->shape[0]);
      out[rank++] = a->shape[0];
      if (kind == MM) out[rank++] = b->shape[1];
      break;
    case DOT: ok = !never_eq(m, a->shape[0], b->shape[0]); break;
    case OUTER:
      out[rank++] = a->shape[0];
      out[rank++] = b->shape[0];
      break;
    default: /* BMM, BATCH_SUM */
      ok = !never_eq(m, a->shape[0], b->shape[0]) && !never_eq(m, a->shape[2], b->shape[1]);
      if (kind == BMM) out[rank++] = a->shape[0];
      out[rank++] = a->shape[1];
      out[rank++] = b->shape[2];
  }
  if (!ok)
    return meta_error(m, "shapes %s and %s cannot be multiplied", sa, sb);
  if (m->param & ADDS) {
    const alloy_value *self = meta_tensor(m, 0);
    alloy_dim bc[ALLOY_MAX_RANK];
    int rbc;
    if (m->param & OUT_DTYPE) e = want_out_dtype(m, ia, a, meta_dtype_or(m, 3, a->dtype));
    else e = want_same_dtype(m, 0, self, ia, a);
    if (e) return e;
    e = meta_broadcast(m, self->shape, self->rank, out, rank, bc, &rbc);
    bool fits = !e && rbc == rank;
    for (int d = 0; d < rank && fits; d++) fits = !never_eq(m, bc[d], out[d]);
    if (e) return e;
    if (!fits)
      return meta_error(m, "argument 'self' of shape %s does not broadcast to the product's "
                        "shape %s", meta_shape_text(self->shape, self->rank, sa, sizeof sa),
                        meta_shape_text(out, rank, sb, sizeof sb));
  }
  return meta_out_tensor(m, 0, m->param & OUT_DTYPE ? meta_dtype_or(m, 3, a->dtype) : a->dtype, out,
                         rank);
}

/* matmul(a, b), torch.matmul's rank rules: a 1-D operand is a row (a) or a
 * column (b) that is dropped from the result again; 2-D and more multiply
 * their last two dims and broadcast the dims before them. */
static alloy_error *meta_matmul_nd(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0), *b = meta_tensor(m, 1);
  alloy_error *e = want_rank(m, 0, a, 1, ALLOY_MAX_RANK);
  if (!e) e = want_rank(m, 1, b, 1, ALLOY_MAX_RANK);
  if (!e) e = want_same_dtype(m, 0, a, 1, b);
  if (e) return e;
  /* The inner dims and the kept outer ones. */
  alloy_dim ka = a->shape[a->rank - 1], kb = b->shape[b->rank == 1 ? 0 : b->rank - 2];
  char sa[256], sb[256];
  if (never_eq(m, ka, kb))
    return meta_error(m, "shapes %s and %s cannot be multiplied",
                      meta_shape_text(a->shape, a->rank, sa, sizeof sa),
                      meta_shape_text(b->shape, b->rank, sb, sizeof sb));
  alloy_dim out[ALLOY_MAX_RANK];
  int rank = 0;
  int ba = a->rank > 2 ? a->rank - 2 : 0, bb = b->rank > 2 ? b->rank - 2 : 0;
  if ((e = meta_broadcast(m, a->shape, ba, b->shape, bb, out, &rank))) return e;
  if (a->rank >= 2) out[rank++] = a->shape[a->rank - 2];
  if (b->rank >= 2) out[rank++] = b->shape[b->rank - 1];
  return meta_out_tensor(m, 0, a->dtype, out, rank);
}

/* linear(input, weight, bias): input @ weight.T + bias */
static alloy_error *meta_linear(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0), *w = meta_tensor(m, 1), *bias = meta_tensor(m, 2);
  alloy_error *e = want_rank(m, 0, x, 1, ALLOY_MAX_RANK);
  if (!e) e = want_rank(m, 1, w, 1, 2);
  if (!e) e = want_same_dtype(m, 0, x, 1, w);
  if (e) return e;
  alloy_dim in = w->shape[w->rank - 1], out[ALLOY_MAX_RANK];
  e = want_eq(m, x->shape[x->rank - 1], in, "linear: input features and weight's in_features");
  if (e) return e;
  int rank = with_tail(x->shape, x->rank, 1, w->shape, w->rank - 1, out);
  if (bias) {
    if ((e = want_same_dtype(m, 0, x, 2, bias)) ||
        (e = meta_broadcast(m, out, rank, bias->shape, bias->rank, out, &rank)))
      return e;
  }
  return meta_out_tensor(m, 0, x->dtype, out, rank);
}

/* _trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim):
 * each input gets size-1 dims inserted at its expand positions, the three
 * broadcast, and the sumdim dims are summed away. */
static alloy_error *meta_trilinear(alloy_meta *m) {
  alloy_dim full[3][ALLOY_MAX_RANK];
  int total = -1;
  alloy_error *e;
  for (int t = 0; t < 3; t++) {
    const alloy_value *x = meta_tensor(m, t);
    int64_t ex[ALLOY_MAX_RANK];
    int n;
    if ((e = meta_ints(m, 3 + t, ex, ALLOY_MAX_RANK, &n))) return e;
    int rank = x->rank + n;
    if (total < 0) total = rank;
    if (rank != total || total > ALLOY_MAX_RANK)
      return meta_error(m, "argument '%s': %d dims plus %d expanded ones, expected %d in all",
                        meta_arg_name(m, t), x->rank, n, total);
    bool expanded[ALLOY_MAX_RANK] = {false};
    for (int k = 0; k < n; k++) {
      if (ex[k] < 0 || ex[k] >= total || expanded[ex[k]])
        return meta_error(m, "argument '%s': bad or repeated dim %lld",
                          meta_arg_name(m, 3 + t), (long long)ex[k]);
      expanded[ex[k]] = true;
    }
    for (int d = 0, src = 0; d < total; d++) full[t][d] = expanded[d] ? C(1) : x->shape[src++];
  }
  int64_t sd[ALLOY_MAX_RANK];
  int nsum;
  if ((e = meta_ints(m, 6, sd, ALLOY_MAX_RANK, &nsum))) return e;
  bool summed[ALLOY_MAX_RANK] = {false};
  for (int k = 0; k < nsum; k++) {
    if (sd[k] < 0 || sd[k] >= total)
      return meta_error(m, "argument 'sumdim': dim %lld out of range", (long long)sd[k]);
    summed[sd[k]] = true;
  }
  alloy_dim bc[ALLOY_MAX_RANK], out[ALLOY_MAX_RANK];
  int r;
  if ((e = meta_broadcast(m, full[0], total, full[1], total, bc, &r)) ||
      (e = meta_broadcast(m, bc, total, full[2], total, bc, &r)))
    return e;
  int rank = 0;
  for (int d = 0; d < total; d++)
    if (!summed[d]) out[rank++] = bc[d];
  alloy_dtype t = meta_tensor(m, 0)->dtype;
  for (int k = 1; k < 3; k++)
    if ((e = want_same_dtype(m, 0, meta_tensor(m, 0), k, meta_tensor(m, k)))) return e;
  return meta_out_tensor(m, 0, t, out, rank);
}

/* scaled_dot_product_attention(query, key, value, attn_mask, dropout_p,
 * is_causal, scale, enable_gqa): query (*batch, L, E), key (*batch, S, E),
 * value (*batch, S, Ev) give (*batch, L, Ev). With enable_gqa the key and
 * value heads (dim -3) may divide the query heads. */
static alloy_error *meta_sdpa(alloy_meta *m) {
  const alloy_value *q = meta_tensor(m, 0), *k = meta_tensor(m, 1), *v = meta_tensor(m, 2);
  const alloy_value *mask = meta_tensor(m, 3);
  alloy_error *e = want_rank(m, 0, q, 2, ALLOY_MAX_RANK);
  if (!e) e = want_rank(m, 1, k, 2, ALLOY_MAX_RANK);
  if (!e) e = want_rank(m, 2, v, 2, ALLOY_MAX_RANK);
  if (!e) e = want_same_dtype(m, 0, q, 1, k);
  if (!e) e = want_same_dtype(m, 0, q, 2, v);
  if (!e && !alloy_dtype_is_float(q->dtype))
    e = meta_error(m, "argument 'query': expected a floating point tensor, got %s",
                   alloy_dtype_name(q->dtype));
  if (e) return e;
  double p = meta_float(m, 4);
  if (p < 0 || p >= 1) return meta_error(m, "dropout_p must be in [0, 1), got %g", p);
  if ((e = want_eq(m, q->shape[q->rank - 1], k->shape[k->rank - 1],
                   "query and key must have the same embedding size")) ||
      (e = want_eq(m, k->shape[k->rank - 2], v->shape[v->rank - 2],
                   "key and value must have the same sequence length")))
    return e;
  alloy_dim kb[ALLOY_MAX_RANK], vb[ALLOY_MAX_RANK], out[ALLOY_MAX_RANK];
  memcpy(kb, k->shape, sizeof *kb * (size_t)k->rank);
  memcpy(vb, v->shape, sizeof *vb * (size_t)v->rank);
  if (meta_bool(m, 7) && q->rank >= 3 && k->rank >= 3 && v->rank >= 3) {
    alloy_dim hq = q->shape[q->rank - 3], hk = k->shape[k->rank - 3], hv = v->shape[v->rank - 3];
    if (alloy_dim_is_const(hq) && alloy_dim_is_const(hk) && alloy_dim_is_const(hv) &&
        (hk.value == 0 || hv.value == 0 || hq.value % hk.value || hq.value % hv.value))
      return meta_error(m, "enable_gqa: the number of query heads (%lld) must be a multiple of "
                        "the key (%lld) and value (%lld) heads",
                        (long long)hq.value, (long long)hk.value, (long long)hv.value);
    kb[k->rank - 3] = hq;
    vb[v->rank - 3] = hq;
  }
  int rank;
  if ((e = meta_broadcast(m, q->shape, q->rank - 2, kb, k->rank - 2, out, &rank)) ||
      (e = meta_broadcast(m, out, rank, vb, v->rank - 2, out, &rank)))
    return e;
  out[rank] = q->shape[q->rank - 2];
  out[rank + 1] = v->shape[v->rank - 1];
  if (mask) {
    alloy_dim scores[ALLOY_MAX_RANK], bc[ALLOY_MAX_RANK];
    int rb;
    memcpy(scores, out, sizeof *scores * (size_t)(rank + 1));
    scores[rank + 1] = k->shape[k->rank - 2];
    if (mask->dtype != ALLOY_BOOL && mask->dtype != q->dtype)
      return meta_error(m, "argument 'attn_mask': expected bool or %s, got %s",
                        alloy_dtype_name(q->dtype), alloy_dtype_name(mask->dtype));
    if ((e = meta_broadcast(m, mask->shape, mask->rank, scores, rank + 2, bc, &rb))) return e;
  }
  return meta_out_tensor(m, 0, q->dtype, out, rank + 2);
}

/* --- factorizations -----------------------------------------------------*/

#define LOW_PRECISION 1 /* float16 and bfloat16 accepted */
#define SQUARE 2

/* cholesky, cholesky_inverse, linalg_matrix_exp,
 * linalg_householder_product, ormqr: the result has one input's shape.
 * param: LOW_PRECISION | SQUARE | position of that input * 4 */
static alloy_error *meta_matrix_like(alloy_meta *m) {
  int i = m->param / 4;
  const alloy_value *a = meta_tensor(m, 0), *r = meta_tensor(m, i);
  alloy_error *e = want_matrix(m, 0, a, m->param & SQUARE);
  if (!e) e = want_float(m, 0, a, m->param & LOW_PRECISION);
  for (int j = 1; j < m->nargs && !e; j++) {
    bool tensor = m->op->schema->args[j].type.kind == ALLOY_TYPE_TENSOR;
    const alloy_value *t = tensor ? meta_tensor(m, j) : NULL;
    if (t) e = want_same_dtype(m, 0, a, j, t);
  }
  if (!e && i) e = want_matrix(m, i, r, false);
  return e ? e : meta_out_like(m, 0, r, r->dtype);
}

/* linalg_householder_product(input, tau) and ormqr(input, tau, other):
 * tau has one dim less than input and no more reflectors than columns. */
static alloy_error *meta_householder(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0), *tau = meta_tensor(m, 1);
  alloy_error *e = want_rank(m, 1, tau, a->rank - 1, a->rank - 1);
  if (!e && a->rank >= 2 &&
      alloy_dim_lt(m->st, a->shape[a->rank - 1], tau->shape[tau->rank - 1]) == ALLOY_TRUE)
    e = meta_error(m, "tau.shape[-1] must be less than or equal to input.shape[-1]");
  return e ? e : meta_matrix_like(m);
}

/* geqrf(self) -> (a, tau) */
static alloy_error *meta_geqrf(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  alloy_error *e = want_matrix(m, 0, a, false);
  if (!e) e = want_float(m, 0, a, false);
  if (e) return e;
  alloy_dim k = alloy_dim_min(m->st, a->shape[a->rank - 2], a->shape[a->rank - 1]);
  alloy_dim tau[ALLOY_MAX_RANK];
  int r = with_tail(a->shape, a->rank, 2, &k, 1, tau);
  e = meta_out_like(m, 0, a, a->dtype);
  return e ? e : meta_out_tensor(m, 1, a->dtype, tau, r);
}

/* The outputs of the LU-based ops after the first: for a batch of square
 * n x n matrices, LU is A's shape, pivots (*batch, n) and info (*batch),
 * both int32. */
static alloy_error *lu_outputs(alloy_meta *m, const alloy_value *a, int k_lu, int k_piv,
                               int k_info) {
  alloy_dim s[ALLOY_MAX_RANK];
  alloy_error *e = NULL;
  if (k_lu >= 0) e = meta_out_like(m, k_lu, a, a->dtype);
  if (!e && k_piv >= 0) e = meta_out_tensor(m, k_piv, ALLOY_I32, a->shape, a->rank - 1);
  memcpy(s, a->shape, sizeof *s * (size_t)(a->rank - 2));
  if (!e && k_info >= 0) e = meta_out_tensor(m, k_info, ALLOY_I32, s, a->rank - 2);
  return e;
}

/* linalg_cholesky_ex, linalg_inv_ex (result, info); linalg_ldl_factor_ex
 * (LD, pivots, info); _linalg_det (det, LU, pivots); _linalg_slogdet
 * (sign, logabsdet, LU, pivots). param: which */
enum { CHOLESKY_EX, INV_EX, LDL_FACTOR_EX, DET, SLOGDET };
static alloy_error *meta_square_factor(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  bool low = m->param == CHOLESKY_EX || m->param == LDL_FACTOR_EX || m->param == DET;
  alloy_error *e = want_matrix(m, 0, a, true);
  if (!e) e = want_float(m, 0, a, low);
  if (e) return e;
  switch (m->param) {
    case CHOLESKY_EX:
    case INV_EX: return lu_outputs(m, a, 0, -1, 1);
    case LDL_FACTOR_EX: return lu_outputs(m, a, 0, 1, 2);
    case DET:
      if ((e = meta_out_tensor(m, 0, a->dtype, a->shape, a->rank - 2))) return e;
      return lu_outputs(m, a, 1, 2, -1);
    default:
      if ((e = meta_out_tensor(m, 0, a->dtype, a->shape, a->rank - 2)) ||
          (e = meta_out_tensor(m, 1, real_dtype(a->dtype), a->shape, a->rank - 2)))
        return e;
      return lu_outputs(m, a, 2, 3, -1);
  }
}

/* _linalg_eigh(A, UPLO, compute_v) -> (eigenvalues, eigenvectors) */
static alloy_error *meta_eigh(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  alloy_error *e = want_matrix(m, 0, a, true);
  if (!e) e = want_float(m, 0, a, false);
  if (e) return e;
  const char *uplo = meta_str(m, 1);
  if (!uplo || strlen(uplo) != 1 || !strchr("LlUu", uplo[0]))
    return meta_error(m, "expected UPLO argument to be 'L' or 'U', but got %s",
                      uplo ? uplo : "None");
  if ((e = meta_out_tensor(m, 0, real_dtype(a->dtype), a->shape, a->rank - 1))) return e;
  alloy_dim zero = C(0);
  return meta_bool(m, 2) ? meta_out_like(m, 1, a, a->dtype)
                         : meta_out_tensor(m, 1, a->dtype, &zero, 1);
}

/* _linalg_svd(A, full_matrices, compute_uv, driver) -> (U, S, Vh) */
static alloy_error *meta_svd(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  alloy_error *e = want_matrix(m, 0, a, false);
  if (!e) e = want_float(m, 0, a, true);
  if (e) return e;
  alloy_dim mm = a->shape[a->rank - 2], nn = a->shape[a->rank - 1];
  alloy_dim k = alloy_dim_min(m->st, mm, nn), s[ALLOY_MAX_RANK], zero = C(0);
  bool full = meta_bool(m, 1);
  int r = with_tail(a->shape, a->rank, 2, &k, 1, s);
  if ((e = meta_out_tensor(m, 1, real_dtype(a->dtype), s, r))) return e;
  if (!meta_bool(m, 2)) {
    if ((e = meta_out_tensor(m, 0, a->dtype, &zero, 1))) return e;
    return meta_out_tensor(m, 2, a->dtype, &zero, 1);
  }
  alloy_dim u[2] = {mm, full ? mm : k}, vh[2] = {full ? nn : k, nn};
  r = with_tail(a->shape, a->rank, 2, u, 2, s);
  if ((e = meta_out_tensor(m, 0, a->dtype, s, r))) return e;
  r = with_tail(a->shape, a->rank, 2, vh, 2, s);
  return meta_out_tensor(m, 2, a->dtype, s, r);
}

/* linalg_qr(A, mode) -> (Q, R) */
static alloy_error *meta_qr(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  alloy_error *e = want_matrix(m, 0, a, false);
  if (!e) e = want_float(m, 0, a, true);
  if (e) return e;
  const char *mode = meta_str(m, 1);
  bool compute_q = true, reduced = true;
  if (mode && !strcmp(mode, "complete")) reduced = false;
  else if (mode && !strcmp(mode, "r")) compute_q = false;
  else if (!mode || strcmp(mode, "reduced"))
    return meta_error(m, "qr received unrecognized mode '%s' but expected one of 'reduced' "
                      "(default), 'r', or 'complete'", mode ? mode : "None");
  alloy_dim rows = a->shape[a->rank - 2], cols = a->shape[a->rank - 1];
  alloy_dim k = alloy_dim_min(m->st, rows, cols), s[ALLOY_MAX_RANK], zero = C(0);
  alloy_dim q[2] = {rows, reduced ? k : rows}, r[2] = {reduced || !compute_q ? k : rows, cols};
  int n = with_tail(a->shape, a->rank, 2, q, 2, s);
  e = compute_q ? meta_out_tensor(m, 0, a->dtype, s, n) : meta_out_tensor(m, 0, a->dtype, &zero, 1);
  if (e) return e;
  n = with_tail(a->shape, a->rank, 2, r, 2, s);
  return meta_out_tensor(m, 1, a->dtype, s, n);
}

/* linalg_lu_factor_ex(A, pivot, check_errors) -> (LU, pivots, info) */
static alloy_error *meta_lu_factor(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  alloy_error *e = want_matrix(m, 0, a, false);
  if (!e) e = want_float(m, 0, a, true);
  if (e) return e;
  alloy_dim k = alloy_dim_min(m->st, a->shape[a->rank - 2], a->shape[a->rank - 1]);
  alloy_dim s[ALLOY_MAX_RANK];
  int r = with_tail(a->shape, a->rank, 2, &k, 1, s);
  if ((e = meta_out_like(m, 0, a, a->dtype)) || (e = meta_out_tensor(m, 1, ALLOY_I32, s, r)))
    return e;
  return meta_out_tensor(m, 2, ALLOY_I32, s, r - 1);
}

/* P (*, m, m), L (*, m, k), U (*, k, n) of an m x n matrix; an output that
 * is not computed is empty. */
static alloy_error *plu_outputs(alloy_meta *m, const alloy_value *a, bool p, bool lu) {
  alloy_dim rows = a->shape[a->rank - 2], cols = a->shape[a->rank - 1];
  alloy_dim k = alloy_dim_min(m->st, rows, cols), s[ALLOY_MAX_RANK], zero = C(0);
  alloy_dim ps[2] = {rows, rows}, ls[2] = {rows, k}, us[2] = {k, cols};
  const alloy_dim *tails[3] = {ps, ls, us};
  for (int o = 0; o < 3; o++) {
    alloy_error *e;
    if (o == 0 ? p : lu) {
      int r = with_tail(a->shape, a->rank, 2, tails[o], 2, s);
      e = meta_out_tensor(m, o, a->dtype, s, r);
    } else {
      e = meta_out_tensor(m, o, a->dtype, &zero, 1);
    }
    if (e) return e;
  }
  return NULL;
}

/* linalg_lu(A, pivot) -> (P, L, U) */
static alloy_error *meta_lu(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  alloy_error *e = want_matrix(m, 0, a, false);
  if (!e) e = want_float(m, 0, a, true);
  return e ? e : plu_outputs(m, a, meta_bool(m, 1), true);
}

/* lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots) -> (P, L, U) */
static alloy_error *meta_lu_unpack(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0), *piv = meta_tensor(m, 1);
  bool data = meta_bool(m, 2), pivots = meta_bool(m, 3);
  alloy_error *e = want_matrix(m, 0, a, false);
  if (!e && pivots && piv->dtype != ALLOY_I32)
    e = meta_error(m, "LU_pivots is expected to be a tensor of torch.int32 dtype, got %s",
                   alloy_dtype_name(piv->dtype));
  return e ? e : plu_outputs(m, a, pivots, data);
}

/* --- solvers ------------------------------------------------------------*/

/* B's broadcast with the batch of A: (*batch(A, B), B[-2], B[-1]). */
static alloy_error *solve_shape(alloy_meta *m, const alloy_value *b, const alloy_value *a,
                                alloy_dim *out, int *rank) {
  alloy_error *e = batch_broadcast(m, b, a, out, rank);
  if (e) return e;
  out[*rank] = b->shape[b->rank - 2];
  out[*rank + 1] = b->shape[b->rank - 1];
  *rank += 2;
  return NULL;
}

/* Square A against B: A's size matches B's rows (left) or columns. */
static alloy_error *want_solvable(alloy_meta *m, const alloy_value *a, const alloy_value *b,
                                  bool left) {
  alloy_dim na = a->shape[a->rank - (left ? 2 : 1)], nb = b->shape[b->rank - (left ? 2 : 1)];
  if (!never_eq(m, na, nb)) return NULL;
  char sa[256], sb[256];
  return meta_error(m, "incompatible shapes of A and B for the equation %s (%s and %s)",
                    left ? "AX = B" : "XA = B", meta_shape_text(a->shape, a->rank, sa, sizeof sa),
                    meta_shape_text(b->shape, b->rank, sb, sizeof sb));
}

/* _linalg_solve_ex(A, B, left, check_errors) -> (result, LU, pivots, info).
 * B may be a vector (or a batch of vectors: one dim less than A). */
static alloy_error *meta_solve_ex(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0), *b = meta_tensor(m, 1);
  bool left = meta_bool(m, 2);
  alloy_error *e = want_matrix(m, 0, a, true);
  if (!e) e = want_float(m, 0, a, true);
  if (!e) e = want_same_dtype(m, 0, a, 1, b);
  if (!e) e = want_rank(m, 1, b, 1, ALLOY_MAX_RANK);
  if (e) return e;
  bool vector = b->rank == 1;
  if (b->rank == a->rank - 1) {
    vector = true;
    for (int d = 0; d < b->rank && vector; d++) vector = !never_eq(m, b->shape[d], a->shape[d]);
  }
  if (vector && !left)
    return meta_error(m, "vector broadcasting of the left hand side is not supported for "
                      "left=False");
  alloy_value bm = *b;
  alloy_dim bs[ALLOY_MAX_RANK + 1], out[ALLOY_MAX_RANK + 1];
  if (vector) {
    memcpy(bs, b->shape, sizeof *bs * (size_t)b->rank);
    bs[b->rank] = C(1);
    bm.shape = bs;
    bm.rank = b->rank + 1;
  }
  int rank;
  if ((e = want_solvable(m, a, &bm, left)) || (e = solve_shape(m, &bm, a, out, &rank))) return e;
  if ((e = meta_out_tensor(m, 0, b->dtype, out, vector ? rank - 1 : rank))) return e;
  return lu_outputs(m, a, 1, 2, 3);
}

/* linalg_solve_triangular(self=A, B, upper, left, unitriangular),
 * linalg_ldl_solve(LD, pivots, B), linalg_lu_solve(LU, pivots, B, left,
 * adjoint), cholesky_solve(self=B, input2=A, upper): the solution has
 * B's matrix shape and the broadcast batch. param: position of A | 4 *
 * position of B | 16 * position of left (0: always left) */
static alloy_error *meta_solve(alloy_meta *m) {
  int ia = m->param & 3, ib = (m->param >> 2) & 3, il = m->param >> 4;
  const alloy_value *a = meta_tensor(m, ia), *b = meta_tensor(m, ib);
  bool left = il ? meta_bool(m, il) : true;
  alloy_error *e = want_matrix(m, ia, a, true);
  if (!e) e = want_matrix(m, ib, b, false);
  if (!e) e = want_float(m, ia, a, true);
  if (!e) e = want_same_dtype(m, ia, a, ib, b);
  if (!e) e = want_solvable(m, a, b, left);
  if (e) return e;
  if (ia == 0 && ib == 2) { /* the pivots of ldl_solve and lu_solve */
    const alloy_value *p = meta_tensor(m, 1);
    bool ok = p->rank == a->rank - 1;
    for (int d = 0; d < p->rank && ok; d++) ok = !never_eq(m, p->shape[d], a->shape[d]);
    if (!ok)
      return meta_error(m, "expected pivots of shape %s (the matrix's shape without its last "
                        "dim), got %s", meta_shape_text(a->shape, a->rank - 1, (char[256]){0}, 256),
                        meta_shape_text(p->shape, p->rank, (char[256]){0}, 256));
    if (!alloy_dtype_is_integer(p->dtype))
      return meta_error(m, "expected integer pivots, got %s", alloy_dtype_name(p->dtype));
  }
  alloy_dim out[ALLOY_MAX_RANK];
  int rank;
  if ((e = solve_shape(m, b, a, out, &rank))) return e;
  return meta_out_tensor(m, 0, b->dtype, out, rank);
}

/* triangular_solve(self=B, A, upper, transpose, unitriangular) ->
 * (solution, cloned_coefficient), both with the broadcast batch. */
static alloy_error *meta_triangular_solve(alloy_meta *m) {
  const alloy_value *b = meta_tensor(m, 0), *a = meta_tensor(m, 1);
  alloy_error *e = want_matrix(m, 0, b, false);
  if (!e) e = want_matrix(m, 1, a, true);
  if (!e) e = want_float(m, 0, b, false);
  if (!e) e = want_same_dtype(m, 0, b, 1, a);
  if (!e) e = want_solvable(m, a, b, true);
  alloy_dim out[ALLOY_MAX_RANK];
  int rank;
  if (!e) e = solve_shape(m, b, a, out, &rank);
  if (!e) e = meta_out_tensor(m, 0, b->dtype, out, rank);
  if (!e) e = solve_shape(m, a, b, out, &rank);
  return e ? e : meta_out_tensor(m, 1, a->dtype, out, rank);
}

/* linalg_lstsq(self=A, b, rcond, driver) -> (solution, residuals, rank,
 * singular_values). What the last three hold depends on the driver (CPU's
 * default is gelsy): residuals only when m > n and the driver is not
 * gelsy, rank unless gels, singular values for gelsd and gelss. For gelsd
 * and gelss PyTorch returns residuals only when every matrix has full
 * rank, which depends on the data: Alloy assumes full rank. */
static alloy_error *meta_lstsq(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0), *b = meta_tensor(m, 1);
  alloy_error *e = want_matrix(m, 0, a, false);
  if (!e) e = want_rank(m, 1, b, 1, ALLOY_MAX_RANK);
  if (!e) e = want_float(m, 0, a, false);
  if (!e) e = want_same_dtype(m, 0, a, 1, b);
  if (e) return e;
  const char *driver = meta_str(m, 3);
  if (!driver) driver = "gelsy";
  bool gels = !strcmp(driver, "gels"), gelsy = !strcmp(driver, "gelsy");
  bool svd = !strcmp(driver, "gelsd") || !strcmp(driver, "gelss");
  if (!gels && !gelsy && !svd)
    return meta_error(m, "parameter `driver` should be one of (gels, gelsy, gelsd, gelss), "
                      "got %s", driver);
  bool vector = b->rank == a->rank - 1;
  alloy_value bm = *b;
  alloy_dim bs[ALLOY_MAX_RANK + 1];
  if (vector) {
    memcpy(bs, b->shape, sizeof *bs * (size_t)b->rank);
    bs[b->rank] = C(1);
    bm.shape = bs;
    bm.rank = b->rank + 1;
  } else if ((e = want_rank(m, 1, b, a->rank, a->rank))) {
    return e;
  }
  if ((e = want_solvable(m, a, &bm, true))) return e;
  alloy_dim rows = a->shape[a->rank - 2], cols = a->shape[a->rank - 1];
  alloy_dim batch[ALLOY_MAX_RANK + 1], s[ALLOY_MAX_RANK + 1], zero = C(0);
  int nb;
  if ((e = batch_broadcast(m, a, &bm, batch, &nb))) return e;
  alloy_dim sol[2] = {cols, bm.shape[bm.rank - 1]};
  int r = with_tail(batch, nb, 0, sol, vector ? 1 : 2, s);
  if ((e = meta_out_tensor(m, 0, b->dtype, s, r))) return e;
  /* with symbolic sizes that do not settle m > n, residuals are assumed */
  bool residuals = !gelsy && alloy_dim_lt(m->st, cols, rows) != ALLOY_FALSE;
  r = with_tail(batch, nb, 0, sol + 1, vector ? 0 : 1, s);
  e = residuals ? meta_out_tensor(m, 1, real_dtype(a->dtype), s, r)
                : meta_out_tensor(m, 1, real_dtype(a->dtype), &zero, 1);
  if (e) return e;
  e = gels ? meta_out_tensor(m, 2, ALLOY_I64, &zero, 1)
           : meta_out_tensor(m, 2, ALLOY_I64, batch, nb);
  if (e) return e;
  alloy_dim k = alloy_dim_min(m->st, rows, cols);
  r = with_tail(batch, nb, 0, &k, 1, s);
  return svd ? meta_out_tensor(m, 3, real_dtype(a->dtype), s, r)
             : meta_out_tensor(m, 3, real_dtype(a->dtype), &zero, 1);
}

/* linalg_pinv.atol_rtol_tensor(self, atol, rtol, hermitian): (*, n, m) */
static alloy_error *meta_pinv(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  alloy_error *e = want_matrix(m, 0, a, meta_bool(m, 3));
  if (!e) e = want_float(m, 0, a, false);
  if (e) return e;
  alloy_dim t[2] = {a->shape[a->rank - 1], a->shape[a->rank - 2]}, s[ALLOY_MAX_RANK];
  int r = with_tail(a->shape, a->rank, 2, t, 2, s);
  return meta_out_tensor(m, 0, a->dtype, s, r);
}

/* --- vectors, norms ------------------------------------------------------*/

/* linalg_cross(self, other, dim): broadcast; dim must have size 3. */
static alloy_error *meta_cross(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0), *b = meta_tensor(m, 1);
  int64_t dim;
  int d;
  alloy_error *e = meta_int(m, 2, &dim);
  if (!e && a->rank != b->rank)
    e = meta_error(m, "linalg.cross: inputs must have the same number of dimensions");
  if (!e) e = meta_wrap_dim(m, 2, dim, a->rank, &d);
  if (!e) e = want_same_dtype(m, 0, a, 1, b);
  if (e) return e;
  /* The CPU kernel dispatches on every numeric type but bool
   * (AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND2(BFloat16, Half)). */
  if (a->dtype == ALLOY_BOOL)
    return meta_error(m, "\"cross\" not implemented for 'Bool': arguments 'self' and 'other' "
                         "must not be bool tensors");
  if (a->rank == 0 || never_eq(m, a->shape[d], C(3)) || never_eq(m, b->shape[d], C(3)))
    return meta_error(m, "linalg.cross: inputs dimension %lld must have length 3",
                      (long long)dim);
  alloy_dim out[ALLOY_MAX_RANK];
  int rank;
  if ((e = meta_broadcast(m, a->shape, a->rank, b->shape, b->rank, out, &rank))) return e;
  return meta_out_tensor(m, 0, a->dtype, out, rank);
}

/* linalg_vector_norm(self, ord, dim, keepdim, dtype): a reduction over dim
 * (None or empty: all dims) into a real dtype. */
static alloy_error *meta_vector_norm(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  if (!alloy_dtype_is_float(x->dtype) && !alloy_dtype_is_complex(x->dtype))
    return meta_error(m, "linalg.vector_norm: expected a floating point or complex tensor as "
                      "input, got %s", alloy_dtype_name(x->dtype));
  int64_t dims[ALLOY_MAX_RANK];
  int n;
  alloy_error *e = meta_ints(m, 2, dims, ALLOY_MAX_RANK, &n);
  if (e) return e;
  bool reduce[ALLOY_MAX_RANK] = {false};
  for (int k = 0; k < n; k++) {
    int d;
    if ((e = meta_wrap_dim(m, 2, dims[k], x->rank, &d))) return e;
    if (x->rank && reduce[d])
      return meta_error(m, "dim %d appears multiple times in the list of dims", d);
    reduce[d] = true;
  }
  double ord = meta_float(m, 1);
  bool keep = meta_bool(m, 3);
  alloy_dim out[ALLOY_MAX_RANK];
  int rank = 0;
  for (int d = 0; d < x->rank; d++) {
    bool r = n == 0 || reduce[d];
    if (r && (ord < 0 || isinf(ord)) && alloy_dim_is_const(x->shape[d]) && x->shape[d].value == 0)
      return meta_error(m, "linalg.vector_norm cannot compute the %g norm on an empty dimension "
                        "because the operation does not have an identity", ord);
    if (!r) out[rank++] = x->shape[d];
    else if (keep) out[rank++] = C(1);
  }
  bool has_dtype = !meta_is_none(m, 4);
  alloy_dtype compute, result;
  alloy_reduction_dtypes(x->dtype, has_dtype, meta_dtype_or(m, 4, x->dtype),
                         ALLOY_REDUCE_COMPLEX_TO_FLOAT, &compute, &result);
  return meta_out_tensor(m, 0, result, out, rank);
}

/* renorm(self, p, dim, maxnorm) */
static alloy_error *meta_renorm(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  int64_t dim;
  int d;
  alloy_error *e = meta_int(m, 2, &dim);
  if (!e && x->rank < 2)
    e = meta_error(m, "renorm: input needs at least 2 dimensions, got %d dimensions", x->rank);
  if (!e) e = meta_wrap_dim(m, 2, dim, x->rank, &d);
  if (e) return e;
  if (m->args[1].kind != ALLOY_ARG_VALUE && !(meta_float(m, 1) > 0))
    return meta_error(m, "renorm: non-positive norm not supported");
  if (m->args[3].kind != ALLOY_ARG_VALUE && meta_float(m, 3) < 0)
    return meta_error(m, "renorm: expected maxnorm to be >= 0 but got %g", meta_float(m, 3));
  /* The norm is linalg.vector_norm's, which takes floating-point tensors
   * only. */
  if (!alloy_dtype_is_float(x->dtype) && !alloy_dtype_is_complex(x->dtype))
    return meta_error(m, "linalg.vector_norm: Expected a floating point or complex tensor as "
                         "input (argument 'self'). Got %s",
                      alloy_dtype_name(x->dtype));
  return meta_out_like(m, 0, x, x->dtype);
}

/* --- composites ----------------------------------------------------------
 * Ops ATen builds from the factorizations (BatchLinearAlgebra.cpp,
 * LinearAlgebra.cpp); their rules are in decompositions/rules_linalg.c. */

/* logdet(self): one value per matrix, self's dtype. */
static alloy_error *meta_logdet(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  alloy_error *e = want_matrix(m, 0, a, true);
  if (!e) e = want_float(m, 0, a, false);
  return e ? e : meta_out_tensor(m, 0, a->dtype, a->shape, a->rank - 2);
}

/* svd(self, some, compute_uv) -> (U, S, V): linalg_svd's with V = Vh^H;
 * without compute_uv, U (*, m, m) and V (*, n, n) hold zeros. */
static alloy_error *meta_svd_classic(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  alloy_error *e = want_matrix(m, 0, a, false);
  if (e) return e;
  bool uv = meta_bool(m, 2);
  alloy_arg args[3] = {m->args[0], alloy_arg_bool(!meta_bool(m, 1)), alloy_arg_bool(uv)};
  alloy_meta fm;
  if ((e = meta_run_op(m, "aten._linalg_svd.default", args, 3, &fm))) {
    free(fm.outs);
    return e;
  }
  m->outs[1] = fm.outs[1];
  free(fm.outs);
  alloy_dim rows = a->shape[a->rank - 2], cols = a->shape[a->rank - 1], s[ALLOY_MAX_RANK];
  alloy_dim k = alloy_dim_min(m->st, rows, cols);
  bool full = !meta_bool(m, 1);
  alloy_dim u[2] = {rows, uv && !full ? k : rows}, v[2] = {cols, uv && !full ? k : cols};
  int r = with_tail(a->shape, a->rank, 2, u, 2, s);
  if ((e = meta_out_tensor(m, 0, a->dtype, s, r))) return e;
  r = with_tail(a->shape, a->rank, 2, v, 2, s);
  return meta_out_tensor(m, 2, a->dtype, s, r);
}

/* qr(self, some): linalg_qr's with mode "reduced" or "complete". */
static alloy_error *meta_qr_classic(alloy_meta *m) {
  alloy_arg args[2] = {m->args[0], alloy_arg_str(meta_bool(m, 1) ? "reduced" : "complete")};
  return meta_as_op(m, "aten.linalg_qr.default", args, 2, 0);
}

/* The pseudo-inverses with float tolerances (linalg_pinv, .atol_rtol_float,
 * .rcond_tensor, pinverse): (*, n, m), as .atol_rtol_tensor's. The
 * hermitian flag is the argument named so, if any. */
static alloy_error *meta_pinv_form(alloy_meta *m) {
  int h = alloy_schema_find_arg(m->op->schema, "hermitian");
  alloy_arg args[4] = {m->args[0], alloy_arg_none(), alloy_arg_none(),
                       h >= 0 ? m->args[h] : alloy_arg_bool(false)};
  return meta_as_op(m, "aten.linalg_pinv.atol_rtol_tensor", args, 4, 0);
}

/* linalg_matrix_power(self, n), matrix_power: square; a negative power
 * inverts, which takes float32 or float64 matrices only. */
static alloy_error *meta_matrix_power(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  int64_t n;
  alloy_error *e = want_matrix(m, 0, a, true);
  if (!e) e = meta_int(m, 1, &n);
  if (!e && n < 0) e = want_float(m, 0, a, false);
  return e ? e : meta_out_like(m, 0, a, a->dtype);
}

/* The dims of a matrix norm: two, wrapped, different. */
static alloy_error *matrix_norm_dims(alloy_meta *m, const alloy_value *a, int i, int *d) {
  int64_t raw[ALLOY_MAX_RANK];
  int n;
  alloy_error *e = meta_ints(m, i, raw, ALLOY_MAX_RANK, &n);
  if (e) return e;
  if (n != 2) return meta_error(m, "linalg.matrix_norm: dim must be a 2-tuple. Got %d dims", n);
  for (int k = 0; k < 2 && !e; k++) e = meta_wrap_dim(m, i, raw[k], a->rank, &d[k]);
  if (!e && d[0] == d[1]) e = meta_error(m, "linalg.matrix_norm: dims must be different. Got (%d, %d)", d[0], d[1]);
  return e;
}

/* The result of a reduction of a over dims d[0], d[1] (kept as 1s when
 * keepdim), of the real dtype of `dtype` or a's. */
static alloy_error *matrix_reduction_out(alloy_meta *m, const alloy_value *a, const int *d, bool keep,
                                         alloy_dtype t) {
  alloy_dim out[ALLOY_MAX_RANK];
  int r = 0;
  for (int k = 0; k < a->rank; k++)
    if (k != d[0] && k != d[1]) out[r++] = a->shape[k];
    else if (keep) out[r++] = C(1);
  return meta_out_tensor(m, 0, real_dtype(t), out, r);
}

/* linalg_matrix_norm(self, ord, dim, keepdim, dtype) (param 0: ord a
 * number, 1: a string): ord in {1, -1, 2, -2, inf, -inf} or {"fro",
 * "nuc"}; the SVD-based orders (2, -2, "nuc") take float32/float64 only. */
static alloy_error *meta_matrix_norm(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  bool svd_based;
  if (m->param) {
    const char *ord = meta_str(m, 1);
    if (!ord || (strcmp(ord, "fro") && strcmp(ord, "nuc")))
      return meta_error(m, "linalg.matrix_norm: Order %s not supported.", ord ? ord : "None");
    svd_based = !strcmp(ord, "nuc");
  } else {
    double ord = fabs(meta_float(m, 1));
    if (ord != 1 && ord != 2 && !isinf(ord))
      return meta_error(m, "linalg.matrix_norm: Order %g not supported.", meta_float(m, 1));
    svd_based = ord == 2;
  }
  int d[2];
  alloy_error *e = want_matrix(m, 0, a, false);
  if (!e) e = want_float(m, 0, a, !svd_based);
  if (!e) e = matrix_norm_dims(m, a, 2, d);
  if (e) return e;
  alloy_dtype t = meta_dtype_or(m, 4, a->dtype);
  if (!meta_is_none(m, 4) && real_dtype(t) != real_dtype(a->dtype) && alloy_dtype_is_complex(t) != alloy_dtype_is_complex(a->dtype))
    return meta_error(m, "linalg.matrix_norm: dtype should be %s for %s inputs, but got %s",
                      alloy_dtype_is_complex(a->dtype) ? "complex" : "real", alloy_dtype_name(a->dtype),
                      alloy_dtype_name(t));
  return matrix_reduction_out(m, a, d, meta_bool(m, 3), t);
}

/* linalg_norm(self, ord, dim, keepdim, dtype) (param 0) and .ord_str (1):
 * a matrix norm for two dims (or none given with an ord, on a 2-D input)
 * or a string ord, else a vector norm. */
static alloy_error *meta_linalg_norm(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  bool has_ord = !meta_is_none(m, 1), has_dim = !meta_is_none(m, 2);
  int64_t dims[ALLOY_MAX_RANK];
  int nd = 0;
  alloy_error *e = has_dim ? meta_ints(m, 2, dims, ALLOY_MAX_RANK, &nd) : NULL;
  if (e) return e;
  if (has_dim && nd != 1 && nd != 2)
    return meta_error(m, "linalg.norm: If dim is specified, it must be of length 1 or 2. Got %d dims", nd);
  if (!has_dim && (has_ord || m->param) && a->rank != 1 && a->rank != 2)
    return meta_error(m, "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got %dD.",
                      a->rank);
  alloy_arg dim01[2] = {alloy_arg_int(0), alloy_arg_int(1)};
  alloy_arg dim = has_dim ? m->args[2] : alloy_arg_list(dim01, 2);
  if (m->param) {
    alloy_arg args[5] = {m->args[0], m->args[1], dim, m->args[3], m->args[4]};
    return meta_as_op(m, "aten.linalg_matrix_norm.str_ord", args, 5, 0);
  }
  if (has_ord && ((has_dim && nd == 2) || (!has_dim && a->rank == 2))) {
    alloy_arg args[5] = {m->args[0], m->args[1], dim, m->args[3], m->args[4]};
    return meta_as_op(m, "aten.linalg_matrix_norm.default", args, 5, 0);
  }
  alloy_arg args[5] = {m->args[0], has_ord ? m->args[1] : alloy_arg_float(2), m->args[2], m->args[3], m->args[4]};
  return meta_as_op(m, "aten.linalg_vector_norm.default", args, 5, 0);
}

/* nuclear_norm(self, keepdim) (param 0: a 2-D self) and .dim(self, dim,
 * keepdim) (1): linalg_matrix_norm's "nuc". */
static alloy_error *meta_nuclear_norm(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  if (!m->param && a->rank != 2)
    return meta_error(m, "Expected a tensor with 2 dimensions, but got a tensor with %d dimension%s instead.",
                      a->rank, a->rank == 1 ? "" : "s");
  alloy_arg dim01[2] = {alloy_arg_int(-2), alloy_arg_int(-1)};
  alloy_arg args[4] = {m->args[0], alloy_arg_str("nuc"), m->param ? m->args[1] : alloy_arg_list(dim01, 2),
                       m->args[m->param ? 2 : 1]};
  return meta_as_op(m, "aten.linalg_matrix_norm.str_ord", args, 4, 0);
}

/* linalg_cond(self, p) (param 0) and .p_str (1): one real value per
 * matrix; p in {None, 1, -1, 2, -2, inf, -inf} or {"fro", "nuc"}; all
 * but None and +-2 need square matrices. */
static alloy_error *meta_cond(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  bool square = true;
  if (m->param) {
    const char *p = meta_str(m, 1);
    if (!p || (strcmp(p, "fro") && strcmp(p, "nuc")))
      return meta_error(m, "linalg.cond got an invalid norm type: %s", p ? p : "None");
  } else if (!meta_is_none(m, 1)) {
    double p = fabs(meta_float(m, 1));
    if (p != 1 && p != 2 && !isinf(p))
      return meta_error(m, "linalg.cond got an invalid norm type: %g", meta_float(m, 1));
    square = p != 2;
  } else {
    square = false;
  }
  if (a->rank < 2) return meta_error(m, "linalg.cond: The input tensor must have at least 2 dimensions.");
  alloy_error *e = want_matrix(m, 0, a, square);
  if (!e) e = want_float(m, 0, a, false);
  return e ? e : meta_out_tensor(m, 0, real_dtype(a->dtype), a->shape, a->rank - 2);
}

/* linalg_matrix_rank, every overload: one int64 per matrix. Tolerance
 * tensors must be real. */
static alloy_error *meta_matrix_rank(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  alloy_error *e = want_matrix(m, 0, a, false);
  if (!e) e = want_float(m, 0, a, false);
  for (int i = 1; i < m->nargs && !e; i++) {
    const alloy_value *t = m->op->schema->args[i].type.kind == ALLOY_TYPE_TENSOR ? meta_tensor(m, i) : NULL;
    if (t && alloy_dtype_is_complex(t->dtype))
      e = meta_error(m, "torch.linalg.matrix_rank: %s tensor of complex type is not supported.", meta_arg_name(m, i));
  }
  return e ? e : meta_out_tensor(m, 0, ALLOY_I64, a->shape, a->rank - 2);
}

/* linalg_multi_dot(tensors) (param 0) and chain_matmul(matrices) (1): the
 * first may be a row (1-D) and the last a column, the others are matrices
 * of one dtype that chain; the result drops the vectors' dims. */
static alloy_error *meta_multi_dot(alloy_meta *m) {
  int n = meta_tensor_count(m, 0);
  const char *fn = m->param ? "chain_matmul" : "multi_dot";
  if (n == 0 && m->param) return meta_error(m, "chain_matmul(): Expected one or more matrices");
  if (n < (m->param ? 1 : 2)) return meta_error(m, "%s(): expected at least 2 tensors but got %d", fn, n);
  const alloy_value *t[256];
  if (n > 256) return meta_error(m, "%s(): at most 256 tensors", fn);
  for (int k = 0; k < n; k++) {
    t[k] = meta_tensor_at(m, 0, k);
    int lo = (!m->param && (k == 0 || k == n - 1)) ? 1 : 2;
    if (!t[k] || t[k]->rank < lo || t[k]->rank > 2)
      return meta_error(m, "%s(): tensor %d must be %s but got %dD", fn, k, lo == 1 ? "1D or 2D" : "2D",
                        t[k] ? t[k]->rank : 0);
    if (t[k]->dtype != t[0]->dtype)
      return meta_error(m, "%s(): all tensors must have be the same dtype but tensor 0 is %s and tensor %d %s", fn,
                        alloy_dtype_name(t[0]->dtype), k, alloy_dtype_name(t[k]->dtype));
  }
  if (n == 1) return meta_out_like(m, 0, t[0], t[0]->dtype);
  for (int k = 1; k < n; k++) {
    alloy_dim left = t[k - 1]->shape[t[k - 1]->rank - 1], right = t[k]->shape[0];
    if (never_eq(m, left, right))
      return meta_error(m, "%s(): tensors %d and %d with shapes %s and %s cannot be multiplied", fn, k - 1, k,
                        meta_shape_text(t[k - 1]->shape, t[k - 1]->rank, (char[128]){0}, 128),
                        meta_shape_text(t[k]->shape, t[k]->rank, (char[128]){0}, 128));
  }
  alloy_dim out[2];
  int r = 0;
  if (t[0]->rank == 2) out[r++] = t[0]->shape[0];
  if (t[n - 1]->rank == 2) out[r++] = t[n - 1]->shape[1];
  return meta_out_tensor(m, 0, t[0]->dtype, out, r);
}

/* vander(x, N, increasing): [len(x), N] of x's dtype promoted with int64
 * (integers and bool give int64). */
static alloy_error *meta_vander(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  if (x->rank != 1) return meta_error(m, "x must be a one-dimensional tensor.");
  alloy_dim n = meta_is_none(m, 1) ? x->shape[0] : meta_dim(m, 1);
  if (alloy_dim_lt(m->st, n, C(0)) == ALLOY_TRUE) return meta_error(m, "N must be non-negative.");
  alloy_dim out[2] = {x->shape[0], n};
  bool whole = !alloy_dtype_is_float(x->dtype) && !alloy_dtype_is_complex(x->dtype);
  return meta_out_tensor(m, 0, whole ? ALLOY_I64 : x->dtype, out, 2);
}

/* linalg_vander(x, N): x.shape + [N] (a 0-dim x is one of one element),
 * N > 1 (x's last size by default); float32, float64, complex or integer
 * x, integers giving int64 (cumprod's promotion). */
static alloy_error *meta_linalg_vander(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  alloy_dtype t = x->dtype;
  if (t == ALLOY_F16 || t == ALLOY_BF16 || t == ALLOY_BOOL)
    return meta_error(m, "linalg.vander supports floating point, complex, and integer tensors, but got %s",
                      alloy_dtype_name(t));
  alloy_dim one = C(1);
  const alloy_dim *shape = x->rank ? x->shape : &one;
  int rank = x->rank ? x->rank : 1;
  alloy_dim n = meta_is_none(m, 1) ? shape[rank - 1] : meta_dim(m, 1);
  if (alloy_dim_le(m->st, n, C(1)) == ALLOY_TRUE) return meta_error(m, "N must be greater than 1.");
  alloy_dim out[ALLOY_MAX_RANK];
  int r = with_tail(shape, rank, 0, &n, 1, out);
  return meta_out_tensor(m, 0, alloy_dtype_is_integer(t) ? ALLOY_I64 : t, out, r);
}

/* linalg_tensorinv(self, ind): shape[ind:] + shape[:ind], whose two
 * products must agree (the reshaped square matrix). */
static alloy_error *meta_tensorinv(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  int64_t ind;
  alloy_error *e = meta_int(m, 1, &ind);
  if (e) return e;
  if (ind <= 0) return meta_error(m, "Expected a strictly positive integer for 'ind', but got %lld", (long long)ind);
  if (ind > a->rank) ind = a->rank;
  alloy_dim lead = meta_numel(m, a->shape, (int)ind), tail = meta_numel(m, a->shape + ind, a->rank - (int)ind);
  if ((e = want_eq(m, tail, lead, "Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                                  "prod(self.shape[:ind])")))
    return e;
  if ((e = want_float(m, 0, a, false))) return e;
  alloy_dim out[ALLOY_MAX_RANK];
  int r = with_tail(a->shape + ind, a->rank - (int)ind, 0, a->shape, (int)ind, out);
  return meta_out_tensor(m, 0, a->dtype, out, r);
}

/* linalg_tensorsolve(self, other, dims): self with dims moved last;
 * the result has its sizes after other's rank, whose product must be
 * other's element count. */
static alloy_error *meta_tensorsolve(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0), *b = meta_tensor(m, 1);
  alloy_dim moved[ALLOY_MAX_RANK];
  int order[ALLOY_MAX_RANK], r = a->rank;
  alloy_error *e = want_float(m, 0, a, false);
  if (!e) e = want_same_dtype(m, 0, a, 1, b);
  if (e) return e;
  bool last[ALLOY_MAX_RANK] = {false};
  int nd = 0;
  if (!meta_is_none(m, 2)) {
    int64_t raw[ALLOY_MAX_RANK];
    if ((e = meta_ints(m, 2, raw, ALLOY_MAX_RANK, &nd))) return e;
    for (int k = 0; k < nd; k++) {
      if ((e = meta_wrap_dim(m, 2, raw[k], r, &order[r - nd + k]))) return e;
      if (last[order[r - nd + k]]) return meta_error(m, "movedim: repeated dim in `source`");
      last[order[r - nd + k]] = true;
    }
  }
  for (int d = 0, k = 0; d < r; d++)
    if (!last[d]) order[k++] = d;
  for (int k = 0; k < r; k++) moved[k] = a->shape[order[k]];
  if (b->rank > r) return meta_error(m, "linalg.tensorsolve: other has more dimensions than self");
  alloy_dim res = meta_numel(m, moved + b->rank, r - b->rank), oth = meta_numel(m, b->shape, b->rank);
  if ((e = want_eq(m, res, oth, "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                                "prod(self.shape[:other.ndim])")))
    return e;
  return meta_out_tensor(m, 0, a->dtype, moved + b->rank, r - b->rank);
}

/* linalg_vecdot(x, y, dim): x and y broadcast, then summed over dim. */
static alloy_error *meta_vecdot(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0), *y = meta_tensor(m, 1);
  if (!alloy_dtype_is_float(x->dtype) && !alloy_dtype_is_complex(x->dtype))
    return meta_error(m, "linalg.vecdot: Expected a floating point or complex tensor as input. Got %s",
                      alloy_dtype_name(x->dtype));
  if (x->dtype != y->dtype)
    return meta_error(m, "linalg.vecdot: Expected x and y to have the same dtype, but found x of type %s and y of "
                         "type %s instead", alloy_dtype_name(x->dtype), alloy_dtype_name(y->dtype));
  alloy_dim b[ALLOY_MAX_RANK];
  int r, d;
  int64_t dim;
  alloy_error *e = meta_broadcast(m, x->shape, x->rank, y->shape, y->rank, b, &r);
  if (!e) e = meta_int(m, 2, &dim);
  if (!e) e = meta_wrap_dim(m, 2, dim, r, &d);
  if (e) return e;
  if (r == 0) return meta_out_tensor(m, 0, x->dtype, b, 0); /* a 0-dim sum over dim -1 or 0 */
  memmove(b + d, b + d + 1, sizeof *b * (size_t)(r - d - 1));
  return meta_out_tensor(m, 0, x->dtype, b, r - 1);
}

/* linalg__powsum(self, ord, dim, keepdim, dtype): sum |x|^ord, shaped as
 * linalg_vector_norm's result (with no root, an empty dim is no error). */
static alloy_error *meta_powsum(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  if (!alloy_dtype_is_float(x->dtype) && !alloy_dtype_is_complex(x->dtype))
    return meta_error(m, "\"powsum_cpu\" not implemented for '%s' (argument 'self')", alloy_dtype_name(x->dtype));
  alloy_arg args[5] = {m->args[0], alloy_arg_int(2), m->args[2], m->args[3], m->args[4]};
  return meta_as_op(m, "aten.linalg_vector_norm.default", args, 5, 0);
}

/* linalg_eig(A) -> (eigenvalues, eigenvectors) (param 1) and
 * _linalg_eigvals(A) (0): complex results, (*, n) and (*, n, n). */
static alloy_error *meta_eig(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  alloy_error *e = want_matrix(m, 0, a, true);
  if (!e) e = want_float(m, 0, a, false);
  if (e) return e;
  alloy_dtype t = a->dtype == ALLOY_F64 || a->dtype == ALLOY_C128 ? ALLOY_C128 : ALLOY_C64;
  if ((e = meta_out_tensor(m, 0, t, a->shape, a->rank - 1))) return e;
  return m->param ? meta_out_tensor(m, 1, t, a->shape, a->rank) : NULL;
}

/* --- forms of other ops (ir/linalg_forms.h) -----------------------------*/

#define FORM_ROW(op, as, outs, ...) \
  {{op, as, 0, (int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int)), {__VA_ARGS__}, false}, outs},

static const linalg_form forms[] = {ALLOY_LINALG_FORMS(FORM_ROW)};

const linalg_form *linalg_form_find(const char *op) {
  for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++)
    if (!strcmp(forms[i].alias.op, op)) return &forms[i];
  return NULL;
}

/* The target's shape function on the mapped arguments; the form's results
 * are the target's the mask names. */
static alloy_error *meta_linalg_form(alloy_meta *m) {
  const linalg_form *f = linalg_form_find(m->op->name);
  if (!f) return alloy_error_new(ALLOY_ERR_INTERNAL, "%s: not in the linalg forms", m->op->name);
  alloy_arg args[ALIAS_MAX_ARGS];
  for (int j = 0; j < f->alias.nargs; j++) args[j] = meta_alias_arg(&f->alias, j, m->args);
  alloy_meta fm;
  alloy_error *e = meta_run_op(m, f->alias.as, args, f->alias.nargs, &fm);
  for (int o = 0, k = 0; o < fm.nout && !e; o++)
    if (f->outs >> o & 1) {
      if (k >= m->nout) e = alloy_error_new(ALLOY_ERR_INTERNAL, "%s: too many results", m->op->name);
      else m->outs[k++] = fm.outs[o];
    }
  free(fm.outs);
  return e;
}

/* --- registration -------------------------------------------------------*/

const alloy_meta_entry alloy_meta_linalg[] = {
    {"aten.mm.default", meta_matmul, MM},
    {"aten.matmul.default", meta_matmul_nd, 0},
    {"aten.bmm.default", meta_matmul, BMM},
    {"aten.mv.default", meta_matmul, MV},
    {"aten.dot.default", meta_matmul, DOT},
    {"aten.vdot.default", meta_matmul, DOT},
    {"aten.addmm.default", meta_matmul, MM | ADDS},
    {"aten.baddbmm.default", meta_matmul, BMM | ADDS},
    {"aten.addmm.dtype", meta_matmul, MM | ADDS | OUT_DTYPE},
    {"aten.baddbmm.dtype", meta_matmul, BMM | ADDS | OUT_DTYPE},
    {"aten.addbmm.default", meta_matmul, BATCH_SUM | ADDS},
    {"aten.addmv.default", meta_matmul, MV | ADDS},
    {"aten.addr.default", meta_matmul, OUTER | ADDS},
    {"aten.linear.default", meta_linear, 0},
    {"aten._trilinear.default", meta_trilinear, 0},
    {"aten.scaled_dot_product_attention.default", meta_sdpa, 0},

    {"aten.cholesky.default", meta_matrix_like, SQUARE},
    {"aten.cholesky_inverse.default", meta_matrix_like, SQUARE},
    {"aten.linalg_matrix_exp.default", meta_matrix_like, SQUARE | LOW_PRECISION},
    {"aten.linalg_householder_product.default", meta_householder, 0},
    {"aten.ormqr.default", meta_householder, 2 * 4},
    {"aten.geqrf.default", meta_geqrf, 0},
    {"aten.linalg_cholesky_ex.default", meta_square_factor, CHOLESKY_EX},
    {"aten.linalg_inv_ex.default", meta_square_factor, INV_EX},
    {"aten.linalg_ldl_factor_ex.default", meta_square_factor, LDL_FACTOR_EX},
    {"aten._linalg_det.default", meta_square_factor, DET},
    {"aten._linalg_slogdet.default", meta_square_factor, SLOGDET},
    {"aten._linalg_eigh.default", meta_eigh, 0},
    {"aten.linalg_eig.default", meta_eig, 1},
    {"aten._linalg_eigvals.default", meta_eig, 0},
    {"aten._linalg_svd.default", meta_svd, 0},
    {"aten.linalg_qr.default", meta_qr, 0},
    {"aten.linalg_lu_factor_ex.default", meta_lu_factor, 0},
    {"aten.linalg_lu.default", meta_lu, 0},
    {"aten.lu_unpack.default", meta_lu_unpack, 0},

    {"aten._linalg_solve_ex.default", meta_solve_ex, 0},
    {"aten.linalg_solve_triangular.default", meta_solve, 0 | 1 * 4 | 3 * 16},
    {"aten.linalg_ldl_solve.default", meta_solve, 0 | 2 * 4},
    {"aten.linalg_lu_solve.default", meta_solve, 0 | 2 * 4 | 3 * 16},
    {"aten.cholesky_solve.default", meta_solve, 1 | 0 * 4},
    {"aten.triangular_solve.default", meta_triangular_solve, 0},
    {"aten.linalg_lstsq.default", meta_lstsq, 0},
    {"aten.linalg_pinv.atol_rtol_tensor", meta_pinv, 0},

    {"aten.linalg_cross.default", meta_cross, 0},
    {"aten.linalg_vector_norm.default", meta_vector_norm, 0},
    {"aten.renorm.default", meta_renorm, 0},
    {"aten.logdet.default", meta_logdet, 0},
    {"aten.svd.default", meta_svd_classic, 0},
    {"aten.qr.default", meta_qr_classic, 0},
    {"aten.linalg_pinv.default", meta_pinv_form, 0},
    {"aten.linalg_pinv.atol_rtol_float", meta_pinv_form, 0},
    {"aten.linalg_pinv.rcond_tensor", meta_pinv_form, 0},
    {"aten.pinverse.default", meta_pinv_form, 0},
    {"aten.linalg_matrix_power.default", meta_matrix_power, 0},
    {"aten.matrix_power.default", meta_matrix_power, 0},
    {"aten.linalg_matrix_norm.default", meta_matrix_norm, 0},
    {"aten.linalg_matrix_norm.str_ord", meta_matrix_norm, 1},
    {"aten.linalg_norm.default", meta_linalg_norm, 0},
    {"aten.linalg_norm.ord_str", meta_linalg_norm, 1},
    {"aten.nuclear_norm.default", meta_nuclear_norm, 0},
    {"aten.nuclear_norm.dim", meta_nuclear_norm, 1},
    {"aten.linalg_cond.default", meta_cond, 0},
    {"aten.linalg_cond.p_str", meta_cond, 1},
    {"aten.linalg_matrix_rank.default", meta_matrix_rank, 0},
    {"aten.linalg_matrix_rank.atol_rtol_float", meta_matrix_rank, 0},
    {"aten.linalg_matrix_rank.atol_rtol_tensor", meta_matrix_rank, 0},
    {"aten.linalg_matrix_rank.tol_tensor", meta_matrix_rank, 0},
    {"aten.linalg_multi_dot.default", meta_multi_dot, 0},
    {"aten.chain_matmul.default", meta_multi_dot, 1},
    {"aten.vander.default", meta_vander, 0},
    {"aten.linalg_vander.default", meta_linalg_vander, 0},
    {"aten.linalg_tensorinv.default", meta_tensorinv, 0},
    {"aten.linalg_tensorsolve.default", meta_tensorsolve, 0},
    {"aten.linalg_vecdot.default", meta_vecdot, 0},
    {"aten.linalg__powsum.default", meta_powsum, 0},
#define FORM_META(op, ...) {op, meta_linalg_form, 0},
    ALLOY_LINALG_FORMS(FORM_META)
#undef FORM_META
    {NULL, NULL, 0},
};
