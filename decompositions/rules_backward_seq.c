/*
 * decompositions/rules_backward_seq.c: the backward ops of sequence models,
 * from ATen to Core ATen: scaled dot product attention (the CPU kernel's
 * and CUDA's memory-efficient one), the fused and the
 * differentiable LSTM and GRU cells, and packed sequences. The other
 * backward ops are in rules_backward.c and rules_backward_nn.c; the shape
 * functions in ir/meta_backward.c.
 *
 * Attention's gradients come from its saved log-sum-exp, as every kernel
 * computes them: P = exp(q k^T scale + bias - lse), dV = P^T dO, dS = P (dO
 * V^T - rowsum(dO O)), dQ = dS K scale, dK = dS^T Q scale, in float32 for
 * float16 and bfloat16 with P and dS rounded to the dtype before their
 * products (the kernels feed their matrix units that way). Dropout's mask
 * cannot be recomputed, so a nonzero dropout_p is declined. The cells
 * follow ATen's CUDA kernels and its composites (RNN.cpp).
 */
#include <math.h>
#include <string.h>

#include "decompositions/rules.h"
#include "decompositions/rules_nn_util.h"

static alloy_dim C(int64_t v) { return alloy_dim_const(v); }

static alloy_value *zeros(decomp *d, const alloy_dim *shape, int n, alloy_dtype t) {
  return D(d, "aten.full.default", d_dim_list(d, shape, n), I(0), DT(t));
}

/* --- attention -------------------------------------------------------------------------*/

/* What an attention backward has: the tensors (q, k, v [B, H, L|S, E], out
 * and dO [B, H, L, Ev], lse [B, H, >= L]), an additive bias or mask (or
 * NULL), causality and the scale (NaN: 1 / sqrt(E)). */
typedef struct {
  alloy_value *dO, *q, *k, *v, *o, *lse, *bias;
  bool causal;
  double scale;
} attention;

/* The gradients dq, dk, dv and the scores' gradient dS (NULL out-pointers
 * are not wanted). Returns false after a decline or an error. */
static bool attention_backward(decomp *d, const attention *a, alloy_value **dq, alloy_value **dk,
                               alloy_value **dv, alloy_value **dsout) {
  if (d_rank(a->q) != 4 || d_rank(a->k) != 4 || d_rank(a->v) != 4)
    return d_decline(d, "query, key and value must be 4-d"), false;
  alloy_symtab *st = d_symtab(d);
  if (alloy_dim_eq(st, d_shape(a->q)[1], d_shape(a->k)[1]) != ALLOY_TRUE)
    return d_decline(d, "grouped-query attention is not decomposed"), false;
  alloy_dtype t = d_dtype(a->q), c = d_opmath(t);
  alloy_dim e = d_shape(a->q)[3], l = d_shape(a->q)[2], sk = d_shape(a->k)[2];
  double s = a->scale;
  if (isnan(s)) {
    if (!alloy_dim_is_const(e)) return d_decline(d, "the default scale of a symbolic head size"), false;
    s = 1.0 / sqrt((double)e.value);
  }
  alloy_value *dO = d_to(d, a->dO, c), *q = d_to(d, a->q, c), *k = d_to(d, a->k, c);
  alloy_value *v = d_to(d, a->v, c), *o = d_to(d, a->o, c);
  alloy_value *att = nn_mulf(d, nn_matmul(d, q, nn_mT(d, k)), s);
  if (a->bias)
    att = d_dtype(a->bias) == ALLOY_BOOL ? D(d, "aten.where.self", V(a->bias), V(att), F(-INFINITY))
                                         : nn_add(d, att, d_to(d, a->bias, c));
  if (a->causal) {
    alloy_dim ls[2] = {l, sk};
    alloy_value *ones = D(d, "aten.full.default", d_dim_list(d, ls, 2), B(true), DT(ALLOY_BOOL));
    att = D(d, "aten.where.self", V(D(d, "aten.tril.default", V(ones))), V(att), F(-INFINITY));
  }
  /* the saved log-sum-exp may be padded past L (memory-efficient kernels) */
  alloy_value *lse = D(d, "aten.slice.Tensor", V(d_to(d, a->lse, c)), I(2), I(0), SYM(l));
  alloy_value *lc = nn_unsqueeze(d, lse, 3);
  alloy_value *p = D(d, "aten.exp.default", V(nn_sub(d, att, lc)));
  p = D(d, "aten.where.self", V(D(d, "aten.eq.Scalar", V(lc), F(-INFINITY))), F(0.0), V(p));
  alloy_value *pr = d_to(d, d_to(d, p, t), c);
  alloy_value *dp = nn_matmul(d, dO, nn_mT(d, v));
  /* rowsum(dO O) as a product of matrices like dO V^T, so that a row whose
   * output is one value row (a causal first row) cancels exactly */
  alloy_value *rows = nn_squeeze(d, nn_matmul(d, nn_unsqueeze(d, dO, 3), nn_unsqueeze(d, o, 4)), 4);
  alloy_value *ds = nn_mul(d, p, nn_sub(d, dp, rows));
  alloy_value *dsr = d_to(d, d_to(d, ds, t), c);
  if (dq) *dq = nn_mulf(d, nn_matmul(d, dsr, k), s);
  if (dk) *dk = nn_mulf(d, nn_matmul(d, nn_mT(d, dsr), q), s);
  if (dv) *dv = nn_matmul(d, nn_mT(d, pr), dO);
  if (dsout) *dsout = ds;
  return !d_failed(d);
}

/* The scale argument i, NaN for the default. */
static double scale_arg(decomp *d, int i) { return d_is_none(d, i) ? NAN : d_float(d, i); }

static void out_qkv(decomp *d, alloy_value *dq, alloy_value *dk, alloy_value *dv) {
  d_out(d, 0, d_to(d, dq, d_out_dtype(d, 0)));
  d_out(d, 1, d_to(d, dk, d_out_dtype(d, 1)));
  d_out(d, 2, d_to(d, dv, d_out_dtype(d, 2)));
}

/* _scaled_dot_product_flash_attention_for_cpu_backward(grad_out, q, k, v,
 * out, logsumexp, dropout_p, is_causal, attn_mask, scale); causal is
 * aligned at the top left, as the CPU kernel's. */
static void flash_attention_cpu_backward(decomp *d) {
  if (d_float(d, 6) != 0.0) return d_decline(d, "dropout's mask cannot be recomputed");
  attention a = {d_tensor(d, 0), d_tensor(d, 1), d_tensor(d, 2), d_tensor(d, 3), d_tensor(d, 4),
                 d_tensor(d, 5), d_tensor(d, 8), d_bool(d, 7), scale_arg(d, 9)};
  alloy_value *dq, *dk, *dv;
  if (attention_backward(d, &a, &dq, &dk, &dv, NULL)) out_qkv(d, dq, dk, dv);
}

/* A causal mask of CUDA's kernel is the CPU's where L == S; elsewhere its
 * alignment differs between kernels and versions, so it is declined. */
static bool causal_ok(decomp *d, const attention *a) {
  if (!a->causal) return true;
  if (alloy_dim_eq(d_symtab(d), d_shape(a->q)[2], d_shape(a->k)[2]) == ALLOY_TRUE) return true;
  d_decline(d, "a causal mask with different query and key lengths");
  return false;
}

/* _scaled_dot_product_efficient_attention_backward(grad_out, q, k, v,
 * attn_bias, out, logsumexp, philox_seed, philox_offset, dropout_p,
 * grad_input_mask, is_causal, scale): the memory-efficient kernel, whose
 * fourth result is the bias's gradient, dS. */
static void efficient_attention_backward(decomp *d) {
  if (d_float(d, 9) != 0.0) return d_decline(d, "dropout's mask cannot be recomputed");
  alloy_value *bias = d_tensor(d, 4);
  attention a = {d_tensor(d, 0), d_tensor(d, 1), d_tensor(d, 2), d_tensor(d, 3), d_tensor(d, 5),
                 d_tensor(d, 6), bias, d_bool(d, 11), scale_arg(d, 12)};
  alloy_value *dq, *dk, *dv, *ds;
  if (!causal_ok(d, &a) || !attention_backward(d, &a, &dq, &dk, &dv, &ds)) return;
  out_qkv(d, dq, dk, dv);
  const alloy_value *gb = alloy_node_output(d_node(d), 3);
  if (bias) ds = D(d, "aten.expand.default", V(ds), d_dim_list(d, d_shape(gb), d_rank(gb)));
  else ds = zeros(d, d_shape(gb), d_rank(gb), d_dtype(gb));
  d_out(d, 3, d_to(d, ds, d_dtype(gb)));
}

/* --- recurrent cells -------------------------------------------------------------------*/

/* The four (LSTM) or three (GRU) gate blocks of [B, n H] along dim 1. */
static void gate_chunks(decomp *d, alloy_value *x, int n, alloy_value **out) {
  alloy_dim h = alloy_dim_floordiv(d_symtab(d), d_shape(x)[1], C(n));
  for (int k = 0; k < n; k++) {
    alloy_dim from = alloy_dim_mul(d_symtab(d), h, C(k)), to = alloy_dim_mul(d_symtab(d), h, C(k + 1));
    out[k] = D(d, "aten.slice.Tensor", V(x), I(1), SYM(from), SYM(to));
  }
}

static alloy_value *cat_gates(decomp *d, alloy_value **g, int n) {
  return D(d, "aten.cat.default", d_value_list(d, g, n), I(1));
}

static alloy_value *one_minus(decomp *d, alloy_value *x) { return D(d, "aten.rsub.Scalar", V(x), I(1)); }

/* An LSTM cell's gate gradients from its activated gates (i, f, c~, o),
 * cx, cy and the gradients of hy and cy (either may be NULL), in ATen's
 * CUDA kernel's order: with t = tanh(cy), go = dhy t o (1 - o),
 * dcy' = dhy o (1 - t^2) + dcy, gi = dcy' c~ i (1 - i), gf = dcy' cx f
 * (1 - f), gc = dcy' i (1 - c~^2), and dcx = dcy' f. */
static void lstm_cell_grads(decomp *d, alloy_value *const *gates, alloy_value *cx, alloy_value *cy,
                            alloy_value *ghy, alloy_value *gcy, alloy_value **grad_gates, alloy_value **gcx) {
  alloy_value *ig = gates[0], *fg = gates[1], *cg = gates[2], *og = gates[3];
  alloy_value *t = D(d, "aten.tanh.default", V(cy));
  alloy_value *g = ghy ? ghy : D(d, "aten.zeros_like.default", V(cy));
  alloy_value *gog = nn_mul(d, g, t);
  alloy_value *dc = nn_mul(d, nn_mul(d, g, og), one_minus(d, nn_mul(d, t, t)));
  if (gcy) dc = nn_add(d, dc, gcy);
  alloy_value *gig = nn_mul(d, nn_mul(d, nn_mul(d, dc, cg), one_minus(d, ig)), ig);
  alloy_value *gfg = nn_mul(d, nn_mul(d, nn_mul(d, dc, cx), one_minus(d, fg)), fg);
  alloy_value *gcg = nn_mul(d, nn_mul(d, dc, ig), one_minus(d, nn_mul(d, cg, cg)));
  gog = nn_mul(d, nn_mul(d, gog, one_minus(d, og)), og);
  alloy_value *all[4] = {gig, gfg, gcg, gog};
  *grad_gates = cat_gates(d, all, 4);
  *gcx = nn_mul(d, dc, fg);
}

static alloy_value *bias_grad(decomp *d, alloy_value *gates) {
  return D(d, "aten.sum.dim_IntList", V(gates), LIST(I(0)));
}

/* _thnn_fused_lstm_cell_backward_impl(grad_hy, grad_cy, cx, cy, workspace,
 * has_bias) -> (grad_gates, grad_cx, grad_bias): the workspace holds the
 * activated gates; each step is computed in float32 and rounded once. */
static void fused_lstm_cell_backward_of(decomp *d, bool five) {
  alloy_value *ws = d_tensor(d, 4);
  alloy_dtype t = d_dtype(ws), c = d_opmath(t);
  alloy_value *ghy = d_tensor(d, 0), *gcy = d_tensor(d, 1);
  if (!ghy && !gcy) return d_decline(d, "neither grad_hy nor grad_cy is given");
  alloy_value *gates[4];
  gate_chunks(d, d_to(d, ws, c), 4, gates);
  alloy_value *gg, *gcx;
  lstm_cell_grads(d, gates, d_to(d, d_tensor(d, 2), c), d_to(d, d_tensor(d, 3), c),
                  ghy ? d_to(d, ghy, c) : NULL, gcy ? d_to(d, gcy, c) : NULL, &gg, &gcx);
  gg = d_to(d, gg, t);
  alloy_value *gb = bias_grad(d, gg);
  if (!five) {
    d_out(d, 0, gg);
    d_out(d, 1, d_to(d, gcx, t));
    d_out(d, 2, gb);
    return;
  }
  d_out(d, 0, gg);
  d_out(d, 1, gg);
  d_out(d, 2, d_to(d, gcx, t));
  d_out(d, 3, gb);
  d_out(d, 4, gb);
}

static void fused_lstm_cell_backward_impl(decomp *d) { fused_lstm_cell_backward_of(d, false); }

/* _thnn_fused_lstm_cell_backward(...) -> (grad_input_gates,
 * grad_hidden_gates, grad_cx, grad_input_bias, grad_hidden_bias): the
 * impl's gate and bias gradients twice */
static void fused_lstm_cell_backward(decomp *d) { fused_lstm_cell_backward_of(d, true); }

/* _thnn_fused_gru_cell_backward(grad_hy, workspace, has_bias): the
 * workspace holds r, z, n, hx and the hidden n-gate hn; with go = grad_hy,
 * gz = go (hx - n) (1 - z) z, gn = go (1 - z) (1 - n^2), ghn = gn r,
 * gr = gn hn (1 - r) r and grad_hx = go z. */
static void gru_cell_grads(decomp *d, alloy_value *go, alloy_value *rg, alloy_value *ig, alloy_value *ng,
                           alloy_value *hx, alloy_value *hn, alloy_value **in_gates, alloy_value **hid_gates,
                           alloy_value **ghx) {
  alloy_value *gig = nn_mul(d, nn_mul(d, nn_mul(d, go, nn_sub(d, hx, ng)), one_minus(d, ig)), ig);
  *ghx = nn_mul(d, go, ig);
  alloy_value *gin = nn_mul(d, nn_mul(d, go, one_minus(d, ig)), one_minus(d, nn_mul(d, ng, ng)));
  alloy_value *ghn = nn_mul(d, gin, rg);
  alloy_value *grg = nn_mul(d, nn_mul(d, nn_mul(d, gin, hn), one_minus(d, rg)), rg);
  alloy_value *a[3] = {grg, gig, gin}, *b[3] = {grg, gig, ghn};
  *in_gates = cat_gates(d, a, 3);
  *hid_gates = cat_gates(d, b, 3);
}

static void fused_gru_cell_backward(decomp *d) {
  alloy_value *go = d_tensor(d, 0), *ws = d_tensor(d, 1);
  alloy_dtype t = d_dtype(ws), c = d_opmath(t);
  alloy_value *parts[5];
  gate_chunks(d, d_to(d, ws, c), 5, parts);
  alloy_value *gi, *gh, *ghx;
  gru_cell_grads(d, d_to(d, go, c), parts[0], parts[1], parts[2], parts[3], parts[4], &gi, &gh, &ghx);
  gi = d_to(d, gi, t);
  gh = d_to(d, gh, t);
  d_out(d, 0, gi);
  d_out(d, 1, gh);
  d_out(d, 2, d_to(d, ghx, d_out_dtype(d, 2)));
  d_out(d, 3, bias_grad(d, gi));
  d_out(d, 4, bias_grad(d, gh));
}

/* The differentiable cells (ATen's composites, one eager op after the
 * other): the gates from the pre-activations and biases, then the
 * gradients as in the fused kernels, written with sigmoid_backward and
 * tanh_backward as RNN.cpp does. */
static alloy_value *sigmoid_bw(decomp *d, alloy_value *g, alloy_value *y) {
  return D(d, "aten.sigmoid_backward.default", V(g), V(y));
}
static alloy_value *tanh_bw(decomp *d, alloy_value *g, alloy_value *y) {
  return D(d, "aten.tanh_backward.default", V(g), V(y));
}

/* _thnn_differentiable_lstm_cell_backward(grad_hy, grad_cy, input_gates,
 * hidden_gates, input_bias, hidden_bias, cx, cy) */
static void differentiable_lstm_cell_backward(decomp *d) {
  alloy_value *ghy = d_tensor(d, 0), *gcy = d_tensor(d, 1);
  if (!ghy && !gcy) return d_decline(d, "neither grad_hy nor grad_cy is given");
  alloy_value *gates = nn_add(d, d_tensor(d, 2), d_tensor(d, 3));
  alloy_value *ib = d_tensor(d, 4), *hb = d_tensor(d, 5), *cx = d_tensor(d, 6), *cy = d_tensor(d, 7);
  if (ib) gates = nn_add(d, gates, ib);
  if (hb) gates = nn_add(d, gates, hb);
  alloy_value *ch[4];
  gate_chunks(d, gates, 4, ch);
  alloy_value *i = D(d, "aten.sigmoid.default", V(ch[0])), *f = D(d, "aten.sigmoid.default", V(ch[1]));
  alloy_value *cg = D(d, "aten.tanh.default", V(ch[2])), *o = D(d, "aten.sigmoid.default", V(ch[3]));
  alloy_value *gcx = D(d, "aten.tanh.default", V(cy));
  alloy_value *gog = NULL;
  if (ghy) {
    gog = sigmoid_bw(d, nn_mul(d, ghy, gcx), o);
    gcx = tanh_bw(d, nn_mul(d, ghy, o), gcx);
    if (gcy) gcx = nn_add(d, gcx, gcy);
  } else {
    gog = D(d, "aten.zeros_like.default", V(o));
    gcx = D(d, "aten.clone.default", V(gcy));
  }
  alloy_value *gig = sigmoid_bw(d, nn_mul(d, gcx, cg), i);
  alloy_value *gfg = sigmoid_bw(d, nn_mul(d, gcx, cx), f);
  alloy_value *gcg = tanh_bw(d, nn_mul(d, gcx, i), cg);
  gcx = nn_mul(d, gcx, f);
  alloy_value *all[4] = {gig, gfg, gcg, gog};
  alloy_value *gg = cat_gates(d, all, 4);
  alloy_value *gb = bias_grad(d, gg);
  d_out(d, 0, gg);
  d_out(d, 1, gg);
  d_out(d, 2, gcx);
  d_out(d, 3, gb);
  d_out(d, 4, gb);
}

/* _thnn_differentiable_gru_cell_backward(grad_hy, input_gates,
 * hidden_gates, hx, input_bias, hidden_bias) */
static void differentiable_gru_cell_backward(decomp *d) {
  alloy_value *go = d_tensor(d, 0), *hx = d_tensor(d, 3);
  alloy_value *in_g = d_tensor(d, 1), *h_g = d_tensor(d, 2), *ib = d_tensor(d, 4), *hb = d_tensor(d, 5);
  if (ib) in_g = nn_add(d, in_g, ib);
  if (hb) h_g = nn_add(d, h_g, hb);
  alloy_value *ic[3], *hc[3];
  gate_chunks(d, in_g, 3, ic);
  gate_chunks(d, h_g, 3, hc);
  alloy_value *rg = D(d, "aten.sigmoid.default", V(nn_add(d, ic[0], hc[0])));
  alloy_value *ig = D(d, "aten.sigmoid.default", V(nn_add(d, ic[1], hc[1])));
  alloy_value *ghx = nn_mul(d, go, ig);
  alloy_value *ng = D(d, "aten.tanh.default", V(nn_add(d, ic[2], nn_mul(d, rg, hc[2]))));
  alloy_value *gig = sigmoid_bw(d, nn_mul(d, go, nn_sub(d, hx, ng)), ig);
  alloy_value *gin = tanh_bw(d, nn_mul(d, go, one_minus(d, ig)), ng);
  alloy_value *ghn = nn_mul(d, gin, rg);
  alloy_value *grg = sigmoid_bw(d, nn_mul(d, gin, hc[2]), rg);
  alloy_value *a[3] = {grg, gig, gin}, *b[3] = {grg, gig, ghn};
  alloy_value *gi = cat_gates(d, a, 3), *gh = cat_gates(d, b, 3);
  d_out(d, 0, gi);
  d_out(d, 1, gh);
  d_out(d, 2, ghx);
  d_out(d, 3, bias_grad(d, gi));
  d_out(d, 4, bias_grad(d, gh));
}

/* --- packed sequences ------------------------------------------------------------------*/

/* _pack_padded_sequence_backward(grad, input_size, batch_sizes,
 * batch_first): row r of the packed gradient came from time step t (the
 * number of steps whose running total of batch sizes is <= r) and batch
 * item r - (the total before t). */
static void pack_padded_sequence_backward(decomp *d) {
  alloy_value *g = d_tensor(d, 0), *bs = d_to(d, d_tensor(d, 2), ALLOY_I64);
  alloy_dim in[ALLOY_MAX_RANK];
  int n = d_dims(d, 1, in, ALLOY_MAX_RANK);
  if (n < 2) return (void)d_fail(d, "argument 'input_size' must have at least 2 items");
  bool bf = d_bool(d, 3);
  alloy_dim tb[ALLOY_MAX_RANK];
  memcpy(tb, in, sizeof *in * (size_t)n);
  if (bf) {
    tb[0] = in[1];
    tb[1] = in[0];
  }
  alloy_symtab *st = d_symtab(d);
  alloy_dim total = d_shape(g)[0], cells = alloy_dim_mul(st, tb[0], tb[1]);
  alloy_value *ends = D(d, "aten.cumsum.default", V(bs), I(0));
  alloy_value *r = D(d, "aten.arange.start_step", I(0), SYM(total), I(1), DT(ALLOY_I64));
  alloy_value *step = D(d, "aten.sum.dim_IntList", V(D(d, "aten.le.Tensor", V(nn_unsqueeze(d, ends, 0)),
                                                       V(nn_unsqueeze(d, r, 1)))),
                        LIST(I(1)), B(false), DT(ALLOY_I64));
  alloy_value *starts = nn_sub(d, ends, bs);
  alloy_value *item = nn_sub(d, r, D(d, "aten.index_select.default", V(starts), I(0), V(step)));
  alloy_value *at = nn_add(d, D(d, "aten.mul.Tensor", V(step), SYM(tb[1])), item);
  alloy_dim flat[ALLOY_MAX_RANK];
  flat[0] = cells;
  for (int k = 2; k < n; k++) flat[k - 1] = tb[k];
  alloy_value *y = D(d, "aten.index_put.default", V(zeros(d, flat, n - 1, d_dtype(g))),
                     d_value_list(d, &at, 1), V(g), B(false));
  y = nn_view(d, y, tb, n);
  if (bf) y = D(d, "aten.transpose.int", V(y), I(0), I(1));
  d_out(d, 0, y);
}

const decomp_rule decomp_rules_backward_seq[] = {
    {"aten._scaled_dot_product_flash_attention_for_cpu_backward.default", flash_attention_cpu_backward,
     DECOMP_TO_CORE},
    {"aten._scaled_dot_product_efficient_attention_backward.default", efficient_attention_backward,
     DECOMP_TO_CORE},
    {"aten._thnn_fused_lstm_cell_backward_impl.default", fused_lstm_cell_backward_impl, DECOMP_TO_CORE},
    {"aten._thnn_fused_lstm_cell_backward.default", fused_lstm_cell_backward, DECOMP_TO_CORE},
    {"aten._thnn_fused_gru_cell_backward.default", fused_gru_cell_backward, DECOMP_TO_CORE},
    {"aten._thnn_differentiable_lstm_cell_backward.default", differentiable_lstm_cell_backward,
     DECOMP_TO_CORE},
    {"aten._thnn_differentiable_gru_cell_backward.default", differentiable_gru_cell_backward, DECOMP_TO_CORE},
    {"aten._pack_padded_sequence_backward.default", pack_padded_sequence_backward, DECOMP_TO_CORE},
    {NULL, NULL, 0},
};
