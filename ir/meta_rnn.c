/*
 * ir/meta_rnn.c: shape functions of the recurrent layers and cells:
 * rnn_tanh, rnn_relu, gru and lstm over a padded sequence (.input) or a
 * packed one (.data, with batch_sizes), and their cells rnn_tanh_cell,
 * rnn_relu_cell, gru_cell and lstm_cell. Their decompositions, loops over
 * time of matrix products, are in decompositions/rules_rnn.c.
 *
 * A layer's input is [T, B, I] ([B, T, I] with batch_first), or, packed,
 * the N = sum(batch_sizes) rows [N, I] of its T steps one after the other
 * (batch_sizes [T], non-increasing, the first B); its hidden
 * state [L * D, B, H] (L layers, D = 2 when bidirectional), LSTM's a pair
 * (h [L * D, B, P], c [L * D, B, H], P the projection size or H). The
 * parameters are the flat list PyTorch's modules pass: per layer and
 * direction w_ih [G H, I], w_hh [G H, P], then b_ih and b_hh when
 * has_biases, then LSTM's w_hr [P, H] when it projects (G: 1, 3 or 4
 * gates).
 */
#include <string.h>

#include "ir/meta.h"

static alloy_error *want_float(alloy_meta *m, int i, const alloy_value *t) {
  if (alloy_dtype_is_float(t->dtype)) return NULL;
  return meta_error(m, "argument '%s': expected a floating point tensor, got %s",
                    meta_arg_name(m, i), alloy_dtype_name(t->dtype));
}

static bool differ(alloy_meta *m, alloy_dim a, alloy_dim b) {
  return alloy_dim_eq(m->st, a, b) == ALLOY_FALSE;
}

/* rnn_tanh.input, rnn_relu.input, gru.input(input, hx, params, has_biases,
 * num_layers, dropout, train, bidirectional, batch_first) -> (output, h_n)
 * and lstm.input(input, hx[2], ...) -> (output, h_n, c_n); the packed
 * forms .data(data, batch_sizes, hx, ...) take no batch_first. param:
 * RNN_LSTM | RNN_PACKED. */
enum { RNN_LSTM = 1, RNN_PACKED = 2 };
static alloy_error *meta_rnn_layer(alloy_meta *m) {
  bool lstm = m->param & RNN_LSTM, packed = m->param & RNN_PACKED;
  int o = packed; /* the arguments after the input move up by batch_sizes */
  const alloy_value *x = meta_tensor(m, 0);
  const alloy_value *h = lstm ? meta_tensor_at(m, 1 + o, 0) : meta_tensor(m, 1 + o);
  const alloy_value *c = lstm && meta_tensor_count(m, 1 + o) == 2 ? meta_tensor_at(m, 1 + o, 1) : NULL;
  int64_t layers;
  alloy_error *e = meta_int(m, 4 + o, &layers);
  if (e) return e;
  if (packed && x->rank != 2)
    return meta_error(m, "argument '%s': expected a 2-D packed input (steps of a batch, features), "
                      "got %dD", meta_arg_name(m, 0), x->rank);
  if (!packed && x->rank != 3)
    return meta_error(m, "argument '%s': expected a 3-D input (a batch of sequences), got %dD",
                      meta_arg_name(m, 0), x->rank);
  if ((e = want_float(m, 0, x))) return e;
  const alloy_value *bs = packed ? meta_tensor(m, 1) : NULL;
  if (bs && (bs->rank != 1 || bs->dtype != ALLOY_I64))
    return meta_error(m, "argument 'batch_sizes': expected a 1-D int64 tensor, got %dD %s", bs->rank,
                      alloy_dtype_name(bs->dtype));
  if (lstm && !c) return meta_error(m, "lstm: expected two hidden states (h and c)");
  if (!h || h->rank != 3 || (c && c->rank != 3))
    return meta_error(m, "argument 'hx': expected 3-D hidden states");
  int dirs = meta_bool(m, 7 + o) ? 2 : 1;
  int64_t nparams = meta_tensor_count(m, 2 + o);
  int per = layers > 0 && nparams % (layers * dirs) == 0 ? (int)(nparams / (layers * dirs)) : 0;
  bool biases = meta_bool(m, 3 + o);
  int want = biases ? 4 : 2;
  if (layers < 1 || (per != want && !(lstm && per == want + 1)))
    return meta_error(m, "argument 'params': %lld tensors for %lld layers%s%s", (long long)nparams,
                      (long long)layers, dirs == 2 ? " in two directions" : "",
                      biases ? " with biases" : "");
  bool batch_first = !packed && meta_bool(m, 8);
  /* A packed batch's size is its first step's, hx's; the sequence's length
   * is batch_sizes' */
  alloy_dim T = packed ? bs->shape[0] : x->shape[batch_first ? 1 : 0];
  alloy_dim B = packed ? h->shape[1] : x->shape[batch_first ? 0 : 1];
  alloy_dim units = alloy_dim_const(layers * dirs);
  if (differ(m, h->shape[0], units) || differ(m, h->shape[1], B) ||
      (c && (differ(m, c->shape[0], units) || differ(m, c->shape[1], B))))
    return meta_error(m, "Expected hidden size [%lld, B, H] for a batch of B sequences",
                      (long long)(layers * dirs));
  for (int64_t k = 0; k < nparams; k++) {
    const alloy_value *p = meta_tensor_at(m, 2 + o, (int)k);
    if (!p || p->dtype != x->dtype)
      return meta_error(m, "argument 'params': every parameter must be a %s tensor",
                        alloy_dtype_name(x->dtype));
  }
  alloy_dim out[3], features = alloy_dim_mul(m->st, h->shape[2], alloy_dim_const(dirs));
  int rank = 3;
  if (packed) { /* [N, D H]: the packed steps keep their rows */
    out[0] = x->shape[0];
    out[1] = features;
    rank = 2;
  } else {
    out[batch_first ? 1 : 0] = T;
    out[batch_first ? 0 : 1] = B;
    out[2] = features;
  }
  if ((e = meta_sym_check(m)) || (e = meta_out_tensor(m, 0, x->dtype, out, rank)) ||
      (e = meta_out_like(m, 1, h, x->dtype)))
    return e;
  return lstm ? meta_out_like(m, 2, c, x->dtype) : NULL;
}

/* rnn_tanh_cell, rnn_relu_cell, gru_cell(input [B, I], hx [B, H], w_ih
 * [G H, I], w_hh [G H, H], b_ih, b_hh) -> h' [B, H]; lstm_cell(input,
 * hx [h, c], ...) -> (h', c'). param: the gate count G. */
static alloy_error *meta_rnn_cell(alloy_meta *m) {
  int gates = m->param;
  bool lstm = gates == 4;
  const alloy_value *x = meta_tensor(m, 0), *wi = meta_tensor(m, 2), *wh = meta_tensor(m, 3);
  const alloy_value *h = lstm ? meta_tensor_at(m, 1, 0) : meta_tensor(m, 1);
  const alloy_value *c = lstm && meta_tensor_count(m, 1) == 2 ? meta_tensor_at(m, 1, 1) : NULL;
  alloy_error *e = want_float(m, 0, x);
  if (e) return e;
  if (lstm && !c) return meta_error(m, "lstm_cell: expected two hidden states (h and c)");
  if (x->rank != 2 || !h || h->rank != 2 || wi->rank != 2 || wh->rank != 2)
    return meta_error(m, "expected a 2-D input, hidden state and weights");
  if (differ(m, x->shape[1], wi->shape[1]))
    return meta_error(m, "input has inconsistent input_size: got %s expected %s",
                      meta_shape_text(x->shape + 1, 1, (char[64]){0}, 64),
                      meta_shape_text(wi->shape + 1, 1, (char[64]){0}, 64));
  if (differ(m, x->shape[0], h->shape[0]))
    return meta_error(m, "Input batch size %s doesn't match hidden0 batch size %s",
                      meta_shape_text(x->shape, 1, (char[64]){0}, 64),
                      meta_shape_text(h->shape, 1, (char[64]){0}, 64));
  if (differ(m, h->shape[1], wh->shape[1]))
    return meta_error(m, "hidden0 has inconsistent hidden_size: got %s, expected %s",
                      meta_shape_text(h->shape + 1, 1, (char[64]){0}, 64),
                      meta_shape_text(wh->shape + 1, 1, (char[64]){0}, 64));
  alloy_dim gh = alloy_dim_mul(m->st, h->shape[1], alloy_dim_const(gates));
  if (differ(m, wi->shape[0], gh) || differ(m, wh->shape[0], gh))
    return meta_error(m, "the weights must have %d x hidden_size rows", gates);
  if ((e = meta_out_like(m, 0, h, x->dtype))) return e;
  return lstm ? meta_out_like(m, 1, c, x->dtype) : NULL;
}

const alloy_meta_entry alloy_meta_rnn[] = {
    {"aten.rnn_tanh.input", meta_rnn_layer, 0},
    {"aten.rnn_relu.input", meta_rnn_layer, 0},
    {"aten.gru.input", meta_rnn_layer, 0},
    {"aten.lstm.input", meta_rnn_layer, RNN_LSTM},
    {"aten.rnn_tanh.data", meta_rnn_layer, RNN_PACKED},
    {"aten.rnn_relu.data", meta_rnn_layer, RNN_PACKED},
    {"aten.gru.data", meta_rnn_layer, RNN_PACKED},
    {"aten.lstm.data", meta_rnn_layer, RNN_LSTM | RNN_PACKED},
    {"aten.rnn_tanh_cell.default", meta_rnn_cell, 1},
    {"aten.rnn_relu_cell.default", meta_rnn_cell, 1},
    {"aten.gru_cell.default", meta_rnn_cell, 3},
    {"aten.lstm_cell.default", meta_rnn_cell, 4},
    {NULL, NULL, 0},
};
