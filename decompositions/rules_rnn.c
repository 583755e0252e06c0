/*
 * decompositions/rules_rnn.c: the recurrent layers and cells, from ATen to
 * Core ATen: rnn_tanh, rnn_relu, gru and lstm over a padded batch of
 * sequences (.input, with layers, both directions, batch_first and LSTM's
 * projections) as loops over time unrolled into matrix products and
 * pointwise gates, and their cells rnn_tanh_cell, rnn_relu_cell, gru_cell
 * and lstm_cell. The shape functions are in ir/meta_rnn.c.
 *
 * The steps are PyTorch's (aten/src/ATen/native/RNN.cpp), op by op, so
 * that float16 and bfloat16 round where it rounds: a layer computes the
 * input's projection linear(x, w_ih, b_ih) for the whole sequence first
 * (its CPU path), then at each step linear(h, w_hh, b_hh) plus that
 * step's projection, and the gates:
 *
 *   simple  h' = act(hh + ih)
 *   gru     r = sigmoid(hh_r + ih_r), z = sigmoid(hh_z + ih_z),
 *           n = tanh(ih_n + hh_n r), h' = (h - n) z + n
 *   lstm    i, f, o = sigmoid(gates_i, _f, _o), g = tanh(gates_g),
 *           c' = f c + i g, h' = o tanh(c') (times w_hr^T when it projects)
 *
 * The reverse direction reads the sequence from its end and writes its
 * outputs back in order; a layer's output (both directions joined on the
 * last dim) is the next layer's input. Dropout between layers in training
 * is random: the rule declines it, as it does float16 and bfloat16 LSTM
 * layers, which PyTorch's CPU runs in oneDNN with roundings of its own
 * (its cells run here like the others). The packed-sequence overloads (.data)
 * take their batch sizes from a tensor's values, which a graph does not
 * know when it is built; they have no rule.
 */
#include <stdlib.h>

#include "decompositions/rules.h"
#include "decompositions/rules_nn_util.h"

enum cell_kind { CELL_TANH, CELL_RELU, CELL_GRU, CELL_LSTM };

/* linear(x, w, b), b may be NULL */
static alloy_value *linear(decomp *d, alloy_value *x, alloy_value *w, alloy_value *b) {
  return D(d, "aten.linear.default", V(x), V(w), b ? V(b) : NONE);
}

/* gate k of n along the last dim (unsafe_chunk's piece) */
static alloy_value *gate(decomp *d, alloy_value *g, int k, int n) {
  if (!g) return NULL;
  alloy_dim size = d_shape(g)[d_rank(g) - 1];
  alloy_dim piece = alloy_dim_floordiv(d_symtab(d), size, alloy_dim_const(n));
  alloy_symtab *st = d_symtab(d);
  alloy_dim start = alloy_dim_mul(st, piece, alloy_dim_const(k));
  return D(d, "aten.slice.Tensor", V(g), I(-1), SYM(start),
           SYM(alloy_dim_add(st, start, piece)));
}

/* One step of a cell: ih is the input's projection for this step (with
 * b_ih); h (and c for LSTM) the state; the new state in *h_out (*c_out). */
static void cell_step(decomp *d, enum cell_kind kind, alloy_value *ih, alloy_value *h,
                      alloy_value *c, alloy_value *w_hh, alloy_value *b_hh, alloy_value *w_hr,
                      alloy_value **h_out, alloy_value **c_out) {
  alloy_value *hh = linear(d, h, w_hh, b_hh);
  switch (kind) {
    case CELL_TANH:
    case CELL_RELU:
      *h_out = D(d, kind == CELL_TANH ? "aten.tanh.default" : "aten.relu.default",
                 V(nn_add(d, hh, ih)));
      return;
    case CELL_GRU: {
      alloy_value *r = D(d, "aten.sigmoid.default", V(nn_add(d, gate(d, hh, 0, 3), gate(d, ih, 0, 3))));
      alloy_value *z = D(d, "aten.sigmoid.default", V(nn_add(d, gate(d, hh, 1, 3), gate(d, ih, 1, 3))));
      alloy_value *n = D(d, "aten.tanh.default",
                         V(nn_add(d, gate(d, ih, 2, 3), nn_mul(d, gate(d, hh, 2, 3), r))));
      *h_out = nn_add(d, nn_mul(d, nn_sub(d, h, n), z), n);
      return;
    }
    case CELL_LSTM: {
      alloy_value *g = nn_add(d, hh, ih);
      alloy_value *i = D(d, "aten.sigmoid.default", V(gate(d, g, 0, 4)));
      alloy_value *f = D(d, "aten.sigmoid.default", V(gate(d, g, 1, 4)));
      alloy_value *cg = D(d, "aten.tanh.default", V(gate(d, g, 2, 4)));
      alloy_value *o = D(d, "aten.sigmoid.default", V(gate(d, g, 3, 4)));
      *c_out = nn_add(d, nn_mul(d, f, c), nn_mul(d, i, cg));
      alloy_value *hy = nn_mul(d, o, D(d, "aten.tanh.default", V(*c_out)));
      *h_out = w_hr ? linear(d, hy, w_hr, NULL) : hy;
      return;
    }
  }
}

/* --- cells ---------------------------------------------------------------------------*/

/* rnn_tanh_cell, rnn_relu_cell, gru_cell(input, hx, w_ih, w_hh, b_ih,
 * b_hh) and lstm_cell(input, [hx, cx], ...) */
static void cell(decomp *d, enum cell_kind kind) {
  alloy_value *x = d_tensor(d, 0), *w_ih = d_tensor(d, 2), *w_hh = d_tensor(d, 3);
  alloy_value *b_ih = d_tensor(d, 4), *b_hh = d_tensor(d, 5);
  alloy_value *h = kind == CELL_LSTM ? d_tensor_at(d, 1, 0) : d_tensor(d, 1);
  alloy_value *c = kind == CELL_LSTM ? d_tensor_at(d, 1, 1) : NULL;
  if (d_failed(d)) return;
  alloy_value *h2 = NULL, *c2 = NULL;
  cell_step(d, kind, linear(d, x, w_ih, b_ih), h, c, w_hh, b_hh, NULL, &h2, &c2);
  d_out(d, 0, h2);
  if (kind == CELL_LSTM) d_out(d, 1, c2);
}

static void rnn_tanh_cell(decomp *d) { cell(d, CELL_TANH); }
static void rnn_relu_cell(decomp *d) { cell(d, CELL_RELU); }
static void gru_cell(decomp *d) { cell(d, CELL_GRU); }
static void lstm_cell(decomp *d) { cell(d, CELL_LSTM); }

/* --- layers --------------------------------------------------------------------------*/

/* The largest sequence a rule unrolls: each step is a handful of nodes per
 * layer and direction. */
enum { MAX_STEPS = 4096 };

/* rnn_tanh.input, rnn_relu.input, gru.input(input, hx, params, has_biases,
 * num_layers, dropout, train, bidirectional, batch_first) and
 * lstm.input(input, [h0, c0], ...). */
static void layers(decomp *d, enum cell_kind kind) {
  bool lstm = kind == CELL_LSTM;
  alloy_value *x = d_tensor(d, 0);
  alloy_value *h0 = lstm ? d_tensor_at(d, 1, 0) : d_tensor(d, 1);
  alloy_value *c0 = lstm ? d_tensor_at(d, 1, 1) : NULL;
  int nparams = d_tensor_count(d, 2);
  bool biases = d_bool(d, 3), train = d_bool(d, 6), bidir = d_bool(d, 7), batch_first = d_bool(d, 8);
  int64_t nlayers = d_int(d, 4);
  double dropout = d_float(d, 5);
  if (d_failed(d) || !x || !h0) return;
  if (train && dropout > 0 && nlayers > 1) return d_decline(d, "dropout between layers is random");
  int dirs = bidir ? 2 : 1;
  if (nlayers < 1 || nlayers > 64 || nparams % (int)(nlayers * dirs))
    return d_decline(d, "%d parameters for %lld layers", nparams, (long long)nlayers);
  int per = nparams / (int)(nlayers * dirs), base = biases ? 4 : 2;
  bool proj = lstm && per == base + 1;
  if (per != base && !proj) return d_decline(d, "%d parameters per layer and direction", per);
  if (batch_first) x = D(d, "aten.transpose.int", V(x), I(0), I(1));
  alloy_dim T = d_shape(x)[0];
  if (!alloy_dim_is_const(T) || T.value < 1 || T.value > MAX_STEPS)
    return d_decline(d, "a sequence of symbolic, no or over %d steps", MAX_STEPS);
  int64_t steps = T.value;
  alloy_value **outs = calloc((size_t)steps, sizeof *outs);
  alloy_value **hn = calloc((size_t)(nlayers * dirs) * 2, sizeof *hn), **cn = hn + nlayers * dirs;
  if (!outs || !hn) {
    free(outs);
    free(hn);
    d_fail(d, "out of memory");
    return;
  }
  /* LSTM layers of float16 and bfloat16 run in oneDNN on PyTorch's CPU,
   * whose roundings inside the fused primitive the steps here do not
   * reproduce (they differ where the gates cancel). */
  alloy_dtype t = d_dtype(x);
  if (lstm && (t == ALLOY_F16 || t == ALLOY_BF16))
    return d_decline(d, "float16 and bfloat16 LSTM layers (PyTorch's oneDNN path)");
  alloy_value *input = x;
  for (int64_t l = 0; l < nlayers && !d_failed(d); l++) {
    alloy_value *dir_out[2] = {NULL, NULL};
    for (int dir = 0; dir < dirs && !d_failed(d); dir++) {
      int unit = (int)(l * dirs + dir), at = unit * per;
      alloy_value *w_ih = d_tensor_at(d, 2, at), *w_hh = d_tensor_at(d, 2, at + 1);
      alloy_value *b_ih = biases ? d_tensor_at(d, 2, at + 2) : NULL;
      alloy_value *b_hh = biases ? d_tensor_at(d, 2, at + 3) : NULL;
      alloy_value *w_hr = proj ? d_tensor_at(d, 2, at + base) : NULL;
      alloy_value *h = D(d, "aten.select.int", V(h0), I(0), I(unit));
      alloy_value *c = lstm ? D(d, "aten.select.int", V(c0), I(0), I(unit)) : NULL;
      alloy_value *ih = linear(d, input, w_ih, b_ih); /* [T, B, G H] */
      for (int64_t s = 0; s < steps && !d_failed(d); s++) {
        int64_t at_t = dir ? steps - 1 - s : s;
        alloy_value *ih_t = D(d, "aten.select.int", V(ih), I(0), I(at_t)), *c2 = NULL;
        cell_step(d, kind, ih_t, h, c, w_hh, b_hh, w_hr, &h, &c2);
        if (lstm) c = c2;
        outs[at_t] = nn_unsqueeze(d, h, 0);
      }
      dir_out[dir] = D(d, "aten.cat.default", d_value_list(d, outs, (int)steps), I(0));
      hn[unit] = nn_unsqueeze(d, h, 0);
      if (lstm) cn[unit] = nn_unsqueeze(d, c, 0);
    }
    input = dirs == 2 ? D(d, "aten.cat.default", d_value_list(d, dir_out, 2), I(-1)) : dir_out[0];
  }
  if (!d_failed(d)) {
    alloy_value *out = batch_first ? D(d, "aten.transpose.int", V(input), I(0), I(1)) : input;
    d_out(d, 0, D(d, "aten.clone.default", V(out)));
    d_out(d, 1, D(d, "aten.cat.default", d_value_list(d, hn, (int)(nlayers * dirs)), I(0)));
    if (lstm) d_out(d, 2, D(d, "aten.cat.default", d_value_list(d, cn, (int)(nlayers * dirs)), I(0)));
  }
  free(outs);
  free(hn);
}

static void rnn_tanh(decomp *d) { layers(d, CELL_TANH); }
static void rnn_relu(decomp *d) { layers(d, CELL_RELU); }
static void gru(decomp *d) { layers(d, CELL_GRU); }
static void lstm(decomp *d) { layers(d, CELL_LSTM); }

const decomp_rule decomp_rules_rnn[] = {
    {"aten.rnn_tanh_cell.default", rnn_tanh_cell, DECOMP_TO_CORE},
    {"aten.rnn_relu_cell.default", rnn_relu_cell, DECOMP_TO_CORE},
    {"aten.gru_cell.default", gru_cell, DECOMP_TO_CORE},
    {"aten.lstm_cell.default", lstm_cell, DECOMP_TO_CORE},
    {"aten.rnn_tanh.input", rnn_tanh, DECOMP_TO_CORE},
    {"aten.rnn_relu.input", rnn_relu, DECOMP_TO_CORE},
    {"aten.gru.input", gru, DECOMP_TO_CORE},
    {"aten.lstm.input", lstm, DECOMP_TO_CORE},
    {NULL, NULL, 0},
};
