/*
 * decompositions/rules_conv.c: the convolutions other than convolution
 * itself, from ATen to Core ATen: conv1d and conv3d (conv2d is in
 * rules_nn.c), conv_transpose1d/2d/3d, the padding='valid'/'same'
 * overloads, _convolution, _convolution_mode, and the CPU kernels an
 * export may name directly (mkldnn_convolution, thnn_conv2d,
 * _slow_conv2d_forward, slow_conv3d(_forward), slow_conv_dilated2d/3d,
 * slow_conv_transpose2d/3d), each one aten.convolution; conv_tbc, a
 * convolution of time-first tensors.
 *
 * The ops differ only in how they spell convolution's arguments, so one
 * rule reads them by name (a missing one takes convolution's default) and
 * the table says what else differs: whether an unbatched sample is taken
 * (and whether its batch of one is dropped again), and whether the op is
 * transposed when it has no `transposed` argument. The padding strings
 * follow PyTorch's _convolution_mode: "valid" is no padding, "same" pads
 * dilation * (k - 1) in all, half on each side and the odd one on the
 * right, that one by padding the input first. The shape functions
 * (ir/meta_nn.c, meta_conv_named) check the arguments.
 */
#include <string.h>

#include "decompositions/rules.h"
#include "decompositions/rules_nn_util.h"

enum {
  UNBATCHED = 1,   /* takes one unbatched sample and drops its batch again */
  KEEP_BATCH = 2,  /* takes one and keeps its batch of one                  */
  TRANSPOSED = 4,  /* transposed, when the op has no `transposed` argument  */
};

static int arg_named(decomp *d, const char *name) {
  return alloy_schema_find_arg(alloy_op_schema(alloy_node_op(d_node(d))), name);
}

/* A spatial list argument (one value standing for all n), or dflt when the
 * op has no such argument or it is empty. */
static bool spatial(decomp *d, const char *name, int n, int64_t dflt, alloy_dim *out) {
  int i = arg_named(d, name), k = 0;
  alloy_dim v[ALLOY_MAX_RANK];
  if (i >= 0) k = d_dims(d, i, v, ALLOY_MAX_RANK);
  for (int j = 0; j < n; j++) out[j] = k > 0 ? v[k == 1 ? 0 : j] : alloy_dim_const(dflt);
  if (k > 1 && k != n) {
    d_decline(d, "%s has %d values for %d spatial dims", name, k, n);
    return false;
  }
  return !d_failed(d);
}

/* The convolution these ops are, with flags from the table. */
static void conv_as(decomp *d, int flags) {
  alloy_value *x = d_tensor(d, 0), *w = d_tensor(d, 1);
  int i_bias = arg_named(d, "bias"), i_pad = arg_named(d, "padding");
  int i_groups = arg_named(d, "groups"), i_tr = arg_named(d, "transposed");
  alloy_value *b = i_bias >= 0 ? d_tensor(d, i_bias) : NULL;
  if (!x || !w) return;
  int n = d_rank(w) - 2;
  if (n < 1 || n > 3) return d_decline(d, "a %d-D weight", d_rank(w));
  bool unbatched = (flags & (UNBATCHED | KEEP_BATCH)) && d_rank(x) == n + 1;
  bool transposed = i_tr >= 0 ? d_bool(d, i_tr) : (flags & TRANSPOSED) != 0;
  alloy_dim groups = i_groups >= 0 ? d_dim(d, i_groups) : alloy_dim_const(1);
  alloy_dim stride[3], pad[3], dil[3], opad[3];
  if (!spatial(d, "stride", n, 1, stride) || !spatial(d, "dilation", n, 1, dil) ||
      !spatial(d, "output_padding", n, 0, opad))
    return;
  if (unbatched) x = nn_unsqueeze(d, x, 0);
  if (i_pad >= 0 && d_arg(d, i_pad)->kind == ALLOY_ARG_STR) {
    const char *mode = d_str(d, i_pad);
    bool same = !strcmp(mode, "same");
    if (!same && strcmp(mode, "valid")) return d_decline(d, "padding \"%s\"", mode);
    int64_t extra[6] = {0};
    bool odd = false;
    for (int k = 0; k < n; k++) {
      pad[k] = alloy_dim_const(0);
      if (!same) continue;
      alloy_dim ks = d_shape(w)[k + 2];
      if (!alloy_dim_is_const(ks) || !alloy_dim_is_const(dil[k]))
        return d_decline(d, "padding='same' with a symbolic kernel size or dilation");
      int64_t total = dil[k].value * (ks.value - 1);
      pad[k] = alloy_dim_const(total / 2);
      /* F.pad's order: the last dim first, (left, right) each */
      extra[2 * (n - 1 - k) + 1] = total % 2;
      odd |= total % 2 != 0;
    }
    if (odd)
      x = D(d, "aten.constant_pad_nd.default", V(x), d_int_list(d, extra, 2 * n), I(0));
  } else if (!spatial(d, "padding", n, 0, pad)) {
    return;
  }
  alloy_value *y = D(d, "aten.convolution.default", V(x), V(w), b ? V(b) : NONE,
                     d_dim_list(d, stride, n), d_dim_list(d, pad, n), d_dim_list(d, dil, n),
                     B(transposed), d_dim_list(d, opad, n), SYM(groups));
  d_out(d, 0, unbatched && !(flags & KEEP_BATCH) ? nn_squeeze(d, y, 0) : y);
}

static void conv_batched(decomp *d) { conv_as(d, 0); }
static void conv_batchable(decomp *d) { conv_as(d, UNBATCHED); }
static void conv_transpose_batchable(decomp *d) { conv_as(d, UNBATCHED | TRANSPOSED); }
/* slow_conv_transpose2d gives an unbatched sample back with a batch of one */
static void conv_transpose_keep_batch(decomp *d) { conv_as(d, KEEP_BATCH | TRANSPOSED); }

/* conv_tbc(self [T, B, C_in], weight [K, C_in, C_out], bias, pad): the 1-d
 * convolution of [B, C_in, T] by [C_out, C_in, K], laid out time first
 * again. */
static void conv_tbc(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *w = d_tensor(d, 1), *b = d_tensor(d, 2);
  int64_t pad = d_int(d, 3);
  if (d_failed(d)) return;
  alloy_value *xt = D(d, "aten.permute.default", V(x), LIST(I(1), I(2), I(0)));
  alloy_value *wt = D(d, "aten.permute.default", V(w), LIST(I(2), I(1), I(0)));
  alloy_value *y = D(d, "aten.convolution.default", V(xt), V(wt), V(b), LIST(I(1)), LIST(I(pad)),
                     LIST(I(1)), B(false), LIST(I(0)), I(1));
  d_out(d, 0, D(d, "aten.permute.default", V(y), LIST(I(2), I(0), I(1))));
}

const decomp_rule decomp_rules_conv[] = {
    {"aten.conv1d.default", conv_batchable, DECOMP_TO_CORE},
    {"aten.conv3d.default", conv_batchable, DECOMP_TO_CORE},
    {"aten.conv1d.padding", conv_batchable, DECOMP_TO_CORE},
    {"aten.conv2d.padding", conv_batchable, DECOMP_TO_CORE},
    {"aten.conv3d.padding", conv_batchable, DECOMP_TO_CORE},
    {"aten.conv_transpose1d.default", conv_transpose_batchable, DECOMP_TO_CORE},
    {"aten.conv_transpose2d.input", conv_transpose_batchable, DECOMP_TO_CORE},
    {"aten.conv_transpose3d.input", conv_transpose_batchable, DECOMP_TO_CORE},
    {"aten._convolution.default", conv_batched, DECOMP_TO_CORE},
    {"aten._convolution.deprecated", conv_batched, DECOMP_TO_CORE},
    {"aten._convolution_mode.default", conv_batched, DECOMP_TO_CORE},
    {"aten.mkldnn_convolution.default", conv_batched, DECOMP_TO_CORE},
    {"aten.thnn_conv2d.default", conv_batched, DECOMP_TO_CORE},
    {"aten._slow_conv2d_forward.default", conv_batched, DECOMP_TO_CORE},
    {"aten.slow_conv3d.default", conv_batched, DECOMP_TO_CORE},
    {"aten.slow_conv3d_forward.default", conv_batched, DECOMP_TO_CORE},
    {"aten.slow_conv_dilated2d.default", conv_batchable, DECOMP_TO_CORE},
    {"aten.slow_conv_dilated3d.default", conv_batchable, DECOMP_TO_CORE},
    {"aten.slow_conv_transpose2d.default", conv_transpose_keep_batch, DECOMP_TO_CORE},
    {"aten.slow_conv_transpose3d.default", conv_transpose_batchable, DECOMP_TO_CORE},
    {"aten.conv_tbc.default", conv_tbc, DECOMP_TO_CORE},
    {NULL, NULL, 0},
};
