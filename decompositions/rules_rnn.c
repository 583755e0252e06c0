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
 * (its cells run here like the others). The packed-sequence overloads
 * (.data) run the same steps on a padded view of the packed rows, their
 * batch sizes read as tensors (see packing).
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

/* A packed batch (.data): the N rows of its T steps one after the other,
 * step t holding the first batch_sizes[t] of the B sequences. Which rows
 * those are is in batch_sizes' values, which the graph does not know when
 * it is built; the rule computes them as tensors: row[t B + b], step t's
 * packed row of sequence b (0 where that sequence has ended), live[t, b],
 * whether it has not, and at[n], packed row n's place t B + b among the
 * padded ones. The steps then run on all B sequences, and an ended one
 * keeps its state (where(live, new, old)): forward, its last step's;
 * backward, h0 until its last row is reached. That is what PyTorch's
 * packed layers compute by narrowing the batch step by step. */
typedef struct {
  alloy_value *row, *live, *at;
} packing;

static alloy_value *iota(decomp *d, int64_t n) {
  return D(d, "aten.arange.start_step", I(0), I(n), I(1), DT(ALLOY_I64));
}

static void packing_of(decomp *d, alloy_value *batch_sizes, int64_t N, int64_t T, int64_t batch,
                       packing *p) {
  alloy_value *ends = D(d, "aten.cumsum.default", V(batch_sizes), I(0));
  alloy_value *starts = nn_sub(d, ends, batch_sizes), *col = nn_unsqueeze(d, iota(d, batch), 0);
  p->live = D(d, "aten.lt.Tensor", V(col), V(nn_unsqueeze(d, batch_sizes, 1))); /* [T, B] */
  alloy_value *row = D(d, "aten.where.self", V(p->live), V(nn_add(d, nn_unsqueeze(d, starts, 1), col)),
                       I(0));
  alloy_dim tb = alloy_dim_const(T * batch);
  p->row = nn_reshape(d, row, &tb, 1);
  /* step of row n: how many steps end at or before it */
  alloy_value *n = iota(d, N);
  alloy_value *ended = D(d, "aten.ge.Tensor", V(nn_unsqueeze(d, n, 1)), V(nn_unsqueeze(d, ends, 0)));
  alloy_value *step = D(d, "aten.sum.dim_IntList", V(ended), LIST(I(1)), B(false), DT(ALLOY_I64));
  alloy_value *first = D(d, "aten.index_select.default", V(starts), I(0), V(step));
  p->at = nn_add(d, D(d, "aten.mul.Tensor", V(step), I(batch)), nn_sub(d, n, first));
}

/* rnn_tanh.input, rnn_relu.input, gru.input(input, hx, params, has_biases,
 * num_layers, dropout, train, bidirectional, batch_first) and
 * lstm.input(input, [h0, c0], ...); the packed forms .data(data,
 * batch_sizes, hx, ...) without batch_first. */
static void layers(decomp *d, enum cell_kind kind, bool packed) {
  bool lstm = kind == CELL_LSTM;
  int o = packed; /* the arguments after the input move up by batch_sizes */
  alloy_value *x = d_tensor(d, 0), *batch_sizes = packed ? d_tensor(d, 1) : NULL;
  alloy_value *h0 = lstm ? d_tensor_at(d, 1 + o, 0) : d_tensor(d, 1 + o);
  alloy_value *c0 = lstm ? d_tensor_at(d, 1 + o, 1) : NULL;
  int nparams = d_tensor_count(d, 2 + o);
  bool biases = d_bool(d, 3 + o), train = d_bool(d, 6 + o), bidir = d_bool(d, 7 + o);
  bool batch_first = !packed && d_bool(d, 8);
  int64_t nlayers = d_int(d, 4 + o);
  double dropout = d_float(d, 5 + o);
  if (d_failed(d) || !x || !h0) return;
  if (train && dropout > 0 && nlayers > 1) return d_decline(d, "dropout between layers is random");
  int dirs = bidir ? 2 : 1;
  if (nlayers < 1 || nlayers > 64 || nparams % (int)(nlayers * dirs))
    return d_decline(d, "%d parameters for %lld layers", nparams, (long long)nlayers);
  int per = nparams / (int)(nlayers * dirs), base = biases ? 4 : 2;
  bool proj = lstm && per == base + 1;
  if (per != base && !proj) return d_decline(d, "%d parameters per layer and direction", per);
  if (batch_first) x = D(d, "aten.transpose.int", V(x), I(0), I(1));
  alloy_dim T = packed ? d_shape(batch_sizes)[0] : d_shape(x)[0];
  if (!alloy_dim_is_const(T) || T.value < 1 || T.value > MAX_STEPS)
    return d_decline(d, "a sequence of symbolic, no or over %d steps", MAX_STEPS);
  int64_t steps = T.value;
  packing pk = {0};
  alloy_dim batch = d_shape(h0)[1], N = d_shape(x)[0];
  if (packed) {
    if (!alloy_dim_is_const(batch) || !alloy_dim_is_const(N))
      return d_decline(d, "a packed batch of symbolic size");
    packing_of(d, batch_sizes, N.value, steps, batch.value, &pk);
  }
  /* LSTM layers of float16 and bfloat16 run in oneDNN on PyTorch's CPU,
   * whose roundings inside the fused primitive the steps here do not
   * reproduce (they differ where the gates cancel); packed ones run
   * ATen's cells, op by op, as here. */
  alloy_dtype t = d_dtype(x);
  if (lstm && !packed && (t == ALLOY_F16 || t == ALLOY_BF16))
    return d_decline(d, "float16 and bfloat16 LSTM layers (PyTorch's oneDNN path)");
  alloy_value **outs = calloc((size_t)steps, sizeof *outs);
  alloy_value **hn = calloc((size_t)(nlayers * dirs) * 2, sizeof *hn), **cn = hn + nlayers * dirs;
  if (!outs || !hn) {
    free(outs);
    free(hn);
    d_fail(d, "out of memory");
    return;
  }
  /* A batch_first input of more than one sequence and step is a strided
   * view [T, B, I] in PyTorch (input.transpose(0, 1)), which linear
   * computes as matmul, then adds the bias, rounding twice; a contiguous
   * one (the other layers' inputs) as one addmm. */
  alloy_dim x_batch = d_shape(x)[1];
  bool transposed = batch_first && steps > 1 && !(alloy_dim_is_const(x_batch) && x_batch.value == 1);
  alloy_value *input = x;
  for (int64_t l = 0; l < nlayers && !d_failed(d); l++) {
    alloy_value *dir_out[2] = {NULL, NULL};
    for (int dir = 0; dir < dirs && !d_failed(d); dir++) {
      int unit = (int)(l * dirs + dir), at = unit * per;
      alloy_value *w_ih = d_tensor_at(d, 2 + o, at), *w_hh = d_tensor_at(d, 2 + o, at + 1);
      alloy_value *b_ih = biases ? d_tensor_at(d, 2 + o, at + 2) : NULL;
      alloy_value *b_hh = biases ? d_tensor_at(d, 2 + o, at + 3) : NULL;
      alloy_value *w_hr = proj ? d_tensor_at(d, 2 + o, at + base) : NULL;
      alloy_value *h = D(d, "aten.select.int", V(h0), I(0), I(unit));
      alloy_value *c = lstm ? D(d, "aten.select.int", V(c0), I(0), I(unit)) : NULL;
      alloy_value *ih; /* [T, B, G H]; packed [N, G H] */
      if (l == 0 && transposed && b_ih) /* linear's unfused path: two roundings */
        ih = nn_add(d, D(d, "aten.matmul.default", V(input), V(nn_mT(d, w_ih))), b_ih);
      else
        ih = linear(d, input, w_ih, b_ih);
      if (packed) {
        alloy_dim padded[3] = {T, batch, d_shape(ih)[1]};
        ih = nn_view(d, D(d, "aten.index_select.default", V(ih), I(0), V(pk.row)), padded, 3);
      }
      for (int64_t s = 0; s < steps && !d_failed(d); s++) {
        int64_t at_t = dir ? steps - 1 - s : s;
        alloy_value *ih_t = D(d, "aten.select.int", V(ih), I(0), I(at_t)), *h2 = NULL, *c2 = NULL;
        cell_step(d, kind, ih_t, h, c, w_hh, b_hh, w_hr, &h2, &c2);
        outs[at_t] = nn_unsqueeze(d, h2, 0);
        if (packed) { /* an ended sequence keeps its state */
          alloy_value *live = nn_unsqueeze(d, D(d, "aten.select.int", V(pk.live), I(0), I(at_t)), 1);
          h2 = D(d, "aten.where.self", V(live), V(h2), V(h));
          if (lstm) c2 = D(d, "aten.where.self", V(live), V(c2), V(c));
        }
        h = h2;
        if (lstm) c = c2;
      }
      dir_out[dir] = D(d, "aten.cat.default", d_value_list(d, outs, (int)steps), I(0));
      hn[unit] = nn_unsqueeze(d, h, 0);
      if (lstm) cn[unit] = nn_unsqueeze(d, c, 0);
    }
    input = dirs == 2 ? D(d, "aten.cat.default", d_value_list(d, dir_out, 2), I(-1)) : dir_out[0];
    if (packed && input) { /* back to the packed rows */
      alloy_dim rows[2] = {alloy_dim_const(steps * batch.value), d_shape(input)[2]};
      input = D(d, "aten.index_select.default", V(nn_view(d, input, rows, 2)), I(0), V(pk.at));
    }
  }
  if (!d_failed(d)) {
    alloy_value *out = batch_first ? D(d, "aten.transpose.int", V(input), I(0), I(1)) : input;
    d_out(d, 0, packed ? out : D(d, "aten.clone.default", V(out)));
    d_out(d, 1, D(d, "aten.cat.default", d_value_list(d, hn, (int)(nlayers * dirs)), I(0)));
    if (lstm) d_out(d, 2, D(d, "aten.cat.default", d_value_list(d, cn, (int)(nlayers * dirs)), I(0)));
  }
  free(outs);
  free(hn);
}

static void rnn_tanh(decomp *d) { layers(d, CELL_TANH, false); }
static void rnn_relu(decomp *d) { layers(d, CELL_RELU, false); }
static void gru(decomp *d) { layers(d, CELL_GRU, false); }
static void lstm(decomp *d) { layers(d, CELL_LSTM, false); }
static void rnn_tanh_packed(decomp *d) { layers(d, CELL_TANH, true); }
static void rnn_relu_packed(decomp *d) { layers(d, CELL_RELU, true); }
static void gru_packed(decomp *d) { layers(d, CELL_GRU, true); }
static void lstm_packed(decomp *d) { layers(d, CELL_LSTM, true); }

const decomp_rule decomp_rules_rnn[] = {
    {"aten.rnn_tanh_cell.default", rnn_tanh_cell, DECOMP_TO_CORE},
    {"aten.rnn_relu_cell.default", rnn_relu_cell, DECOMP_TO_CORE},
    {"aten.gru_cell.default", gru_cell, DECOMP_TO_CORE},
    {"aten.lstm_cell.default", lstm_cell, DECOMP_TO_CORE},
    {"aten.rnn_tanh.input", rnn_tanh, DECOMP_TO_CORE},
    {"aten.rnn_relu.input", rnn_relu, DECOMP_TO_CORE},
    {"aten.gru.input", gru, DECOMP_TO_CORE},
    {"aten.lstm.input", lstm, DECOMP_TO_CORE},
    {"aten.rnn_tanh.data", rnn_tanh_packed, DECOMP_TO_CORE},
    {"aten.rnn_relu.data", rnn_relu_packed, DECOMP_TO_CORE},
    {"aten.gru.data", gru_packed, DECOMP_TO_CORE},
    {"aten.lstm.data", lstm_packed, DECOMP_TO_CORE},
    {NULL, NULL, 0},
};
