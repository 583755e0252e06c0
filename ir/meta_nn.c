/*
 * ir/meta_nn.c: shape functions of the neural-network ops (see ir/meta.h):
 * convolution, pooling (plain, adaptive, fractional, unpooling),
 * normalization, losses, upsampling, grid sampling, distances and the
 * activation kernels that are not plain pointwise ops.
 *
 * The reference is PyTorch 2.11's CPU kernels as its meta functions and
 * structured-kernel metas describe them; where the two differ (the dtype of
 * the statistics a norm saves, log_sigmoid's buffer) the CPU kernel wins,
 * because the golden corpus was recorded on CPU.
 *
 * Sizes stay symbolic: a check between sizes fails only when the symbols'
 * ranges prove it false; one they cannot decide is assumed to hold, as
 * PyTorch would record a guard for it. Kernel sizes, strides and paddings
 * of pooling are `int` in the schemas and therefore concrete.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/checked.h"
#include "ir/meta.h"

/* --- helpers ------------------------------------------------------------*/

static alloy_dim C(int64_t v) { return alloy_dim_const(v); }

static const char *dim_text(alloy_dim d, char *buf, size_t cap) {
  alloy_dim_print(d, buf, cap);
  return buf;
}

/* Relations that the symbols' ranges prove; an undecidable one counts as
 * holding (see the file comment). */
static bool never_eq(alloy_meta *m, alloy_dim a, alloy_dim b) {
  return alloy_dim_eq(m->st, a, b) == ALLOY_FALSE;
}
static bool surely_lt(alloy_meta *m, alloy_dim a, alloy_dim b) {
  return alloy_dim_lt(m->st, a, b) == ALLOY_TRUE;
}
static bool surely_zero(alloy_dim d) { return alloy_dim_is_const(d) && d.value == 0; }

static alloy_error *want_rank(alloy_meta *m, int i, const alloy_value *t, int lo, int hi) {
  if (t->rank >= lo && t->rank <= hi) return NULL;
  char s[256];
  meta_shape_text(t->shape, t->rank, s, sizeof s);
  if (lo == hi)
    return meta_error(m, "argument '%s': expected a %d-D tensor, got shape %s",
                      meta_arg_name(m, i), lo, s);
  return meta_error(m, "argument '%s': expected a %d-D to %d-D tensor, got shape %s",
                    meta_arg_name(m, i), lo, hi, s);
}

static alloy_error *want_float(alloy_meta *m, int i, const alloy_value *t) {
  if (alloy_dtype_is_float(t->dtype) || alloy_dtype_is_complex(t->dtype)) return NULL;
  return meta_error(m, "argument '%s': expected a floating point tensor, got %s",
                    meta_arg_name(m, i), alloy_dtype_name(t->dtype));
}

static alloy_error *want_same_dtype(alloy_meta *m, int i, const alloy_value *a, int j,
                                    const alloy_value *b) {
  if (a->dtype == b->dtype) return NULL;
  return meta_error(m, "expected '%s' and '%s' to have the same dtype, got %s and %s",
                    meta_arg_name(m, i), meta_arg_name(m, j), alloy_dtype_name(a->dtype),
                    alloy_dtype_name(b->dtype));
}

/* Tensor t (argument i) must have exactly shape s. */
static alloy_error *want_shape(alloy_meta *m, int i, const alloy_value *t,
                               const alloy_dim *s, int rank) {
  bool ok = t->rank == rank;
  for (int d = 0; d < rank && ok; d++) ok = !never_eq(m, t->shape[d], s[d]);
  if (ok) return NULL;
  char want[256], got[256];
  return meta_error(m, "argument '%s': expected shape %s, got %s", meta_arg_name(m, i),
                    meta_shape_text(s, rank, want, sizeof want),
                    meta_shape_text(t->shape, t->rank, got, sizeof got));
}

/* The int `reduction` of the losses: 0 none, 1 mean, 2 sum. */
static alloy_error *reduction_arg(alloy_meta *m, int i, int64_t *r) {
  alloy_error *e = meta_int(m, i, r);
  if (!e && (*r < 0 || *r > 2))
    e = meta_error(m, "argument '%s': %lld is not a valid reduction (0 none, 1 mean, 2 sum)",
                   meta_arg_name(m, i), (long long)*r);
  return e;
}

/* Spatial parameters given as int[N]/SymInt[N]: one value stands for all n
 * dims; an empty list (stride's default) takes dflt. */
static alloy_error *spatial_dims(alloy_meta *m, int i, int n, const alloy_dim *dflt,
                                 alloy_dim *out) {
  alloy_dim v[ALLOY_MAX_RANK];
  int k;
  alloy_error *e = meta_dims(m, i, v, ALLOY_MAX_RANK, &k);
  if (e) return e;
  if (k == 0 && dflt) {
    memcpy(out, dflt, sizeof *out * (size_t)n);
    return NULL;
  }
  if (k != 1 && k != n)
    return meta_error(m, "argument '%s' must be a single int or a list of %d ints, got %d items",
                      meta_arg_name(m, i), n, k);
  for (int d = 0; d < n; d++) out[d] = v[k == 1 ? 0 : d];
  return NULL;
}

static alloy_error *spatial_ints(alloy_meta *m, int i, int n, const int64_t *dflt,
                                 int64_t *out) {
  alloy_dim d[ALLOY_MAX_RANK], df[ALLOY_MAX_RANK] = {{0}};
  for (int k = 0; dflt && k < n; k++) df[k] = C(dflt[k]);
  alloy_error *e = spatial_dims(m, i, n, dflt ? df : NULL, d);
  for (int k = 0; !e && k < n; k++) {
    if (!alloy_dim_is_const(d[k]))
      return meta_error(m, "argument '%s' must hold concrete integers", meta_arg_name(m, i));
    out[k] = d[k].value;
  }
  return e;
}

/* A list argument that must have exactly n items (output sizes). */
static alloy_error *exact_dims(alloy_meta *m, int i, int n, alloy_dim *out) {
  int k;
  alloy_error *e = meta_dims(m, i, out, ALLOY_MAX_RANK, &k);
  if (!e && k != n)
    e = meta_error(m, "argument '%s' must have %d items, got %d", meta_arg_name(m, i), n, k);
  return e;
}

/* The dtype of the statistics a CPU norm kernel saves: a reduced-precision
 * input with float32 parameters ("mixed type") saves them in float32. */
static alloy_dtype stats_dtype(alloy_meta *m, const alloy_value *in, const int *params, int n) {
  if (in->dtype != ALLOY_F16 && in->dtype != ALLOY_BF16) return in->dtype;
  for (int k = 0; k < n; k++) {
    const alloy_value *p = params[k] >= 0 ? meta_tensor(m, params[k]) : NULL;
    if (p && p->dtype == ALLOY_F32) return ALLOY_F32;
  }
  return in->dtype;
}

/* --- convolution --------------------------------------------------------*/

/* A convolution's spatial list from argument i, or dflt when the op has no
 * such argument (i < 0). */
static alloy_error *conv_list(alloy_meta *m, int i, int n, const alloy_dim *dflt,
                              alloy_dim *out) {
  if (i >= 0) return spatial_dims(m, i, n, dflt, out);
  memcpy(out, dflt, sizeof *out * (size_t)n);
  return NULL;
}

/* Output shape of a convolution of input (N, C, *spatial) with weight; the
 * spatial lists are read from the given argument positions (output_padding
 * only when transposed; a position < 0: the op has no such argument, the
 * default holds), the padding from pad_given instead when it is not NULL. */
static alloy_error *conv_shape(alloy_meta *m, const alloy_value *in, const alloy_value *w,
                               const alloy_value *bias, int i_stride, int i_pad, int i_dil,
                               bool transposed, int i_outpad, alloy_dim groups,
                               const alloy_dim *pad_given, alloy_dim *out) {
  int n = in->rank - 2;
  char a[64], b[64];
  if (in->rank < 3 || in->rank > 5)
    return want_rank(m, 0, in, 3, 5);
  if (w->rank != in->rank)
    return meta_error(m, "expected weight to be %d-D for a %d-D input, got %d-D",
                      in->rank, in->rank, w->rank);
  if (alloy_dim_is_const(groups) && groups.value <= 0)
    return meta_error(m, "non-positive groups is not supported (groups=%lld)",
                      (long long)groups.value);
  alloy_dim ones[3] = {C(1), C(1), C(1)}, zeros[3] = {C(0), C(0), C(0)};
  alloy_dim stride[3], pad[3], dil[3], opad[3];
  alloy_error *e = conv_list(m, i_stride, n, ones, stride);
  if (!e) e = conv_list(m, pad_given ? -1 : i_pad, n, pad_given ? pad_given : zeros, pad);
  if (!e) e = conv_list(m, i_dil, n, ones, dil);
  if (!e) e = transposed ? conv_list(m, i_outpad, n, zeros, opad) : NULL;
  if (e) return e;
  for (int d = 0; d < n; d++) {
    if (alloy_dim_is_const(stride[d]) && stride[d].value <= 0)
      return meta_error(m, "non-positive stride is not supported");
    if (alloy_dim_is_const(dil[d]) && dil[d].value <= 0)
      return meta_error(m, "dilation should be greater than zero");
    if (alloy_dim_is_const(pad[d]) && pad[d].value < 0)
      return meta_error(m, "negative padding is not supported");
  }
  alloy_dim cin = in->shape[1], cout;
  if (transposed) {
    if (never_eq(m, w->shape[0], cin))
      return meta_error(m, "given transposed=1, weight of size %s expected input with %s "
                        "channels, but got %s channels",
                        meta_shape_text(w->shape, w->rank, (char[256]){0}, 256),
                        dim_text(w->shape[0], a, sizeof a), dim_text(cin, b, sizeof b));
    cout = alloy_dim_mul(m->st, w->shape[1], groups);
  } else {
    alloy_dim need = alloy_dim_mul(m->st, w->shape[1], groups);
    if (never_eq(m, need, cin))
      return meta_error(m, "given groups=%s, weight of size %s expected input with %s "
                        "channels, but got %s channels",
                        dim_text(groups, a, sizeof a),
                        meta_shape_text(w->shape, w->rank, (char[256]){0}, 256),
                        dim_text(need, (char[64]){0}, 64), dim_text(cin, b, sizeof b));
    cout = w->shape[0];
  }
  if (bias && (bias->rank != 1 || never_eq(m, bias->shape[0], cout)))
    return meta_error(m, "expected bias to be 1-D with %s elements, got shape %s",
                      dim_text(cout, a, sizeof a),
                      meta_shape_text(bias->shape, bias->rank, (char[256]){0}, 256));
  out[0] = in->shape[0];
  /* PyTorch's meta: an input with no channels gives an output with none. */
  out[1] = surely_zero(cin) ? C(0) : cout;
  bool any_positive = false, any_negative = false;
  for (int d = 0; d < n; d++) {
    alloy_dim L = in->shape[d + 2], k = w->shape[d + 2];
    alloy_dim reach = alloy_dim_mul(m->st, dil[d], alloy_dim_sub(m->st, k, C(1)));
    alloy_dim two_p = alloy_dim_mul(m->st, C(2), pad[d]);
    alloy_dim o;
    if (transposed) {
      o = alloy_dim_mul(m->st, alloy_dim_sub(m->st, L, C(1)), stride[d]);
      o = alloy_dim_add(m->st, alloy_dim_sub(m->st, o, two_p), reach);
      o = alloy_dim_add(m->st, o, alloy_dim_add(m->st, opad[d], C(1)));
    } else {
      o = alloy_dim_sub(m->st, alloy_dim_add(m->st, L, two_p), alloy_dim_add(m->st, reach, C(1)));
      o = alloy_dim_add(m->st, alloy_dim_floordiv(m->st, o, stride[d]), C(1));
    }
    out[d + 2] = o;
    any_positive |= !surely_lt(m, o, C(1));
    any_negative |= surely_lt(m, o, C(0));
  }
  if ((e = meta_sym_check(m))) return e;
  /* An empty output is PyTorch's answer for some sizes; a negative one
   * (a kernel reaching past the padded input) never is. */
  if (!any_positive || any_negative) {
    char s[256], o[256];
    return meta_error(m, "given input size per channel %s, the calculated output size per "
                      "channel %s is too small",
                      meta_shape_text(in->shape + 2, n, s, sizeof s),
                      meta_shape_text(out + 2, n, o, sizeof o));
  }
  return NULL;
}

/* convolution(input, weight, bias, stride, padding, dilation, transposed,
 * output_padding, groups) */
static alloy_error *meta_convolution(alloy_meta *m) {
  const alloy_value *in = meta_tensor(m, 0), *w = meta_tensor(m, 1);
  alloy_dim out[ALLOY_MAX_RANK];
  alloy_error *e = conv_shape(m, in, w, meta_tensor(m, 2), 3, 4, 5, meta_bool(m, 6), 7,
                              meta_dim(m, 8), NULL, out);
  return e ? e : meta_out_tensor(m, 0, in->dtype, out, in->rank);
}

/* conv2d(input, weight, bias, stride, padding, dilation, groups): also takes
 * an unbatched (C, H, W) input, as the Python-level op does. */
static alloy_error *meta_conv2d(alloy_meta *m) {
  const alloy_value *in = meta_tensor(m, 0), *w = meta_tensor(m, 1);
  alloy_error *e = want_rank(m, 0, in, 3, 4);
  if (e) return e;
  alloy_value batched = *in;
  alloy_dim shape[ALLOY_MAX_RANK], out[ALLOY_MAX_RANK];
  bool unbatched = in->rank == 3;
  if (unbatched) {
    shape[0] = C(1);
    memcpy(shape + 1, in->shape, sizeof *shape * 3);
    batched.shape = shape;
    batched.rank = 4;
  }
  e = conv_shape(m, &batched, w, meta_tensor(m, 2), 3, 4, 5, false, -1, meta_dim(m, 6), NULL,
                 out);
  if (e) return e;
  return unbatched ? meta_out_tensor(m, 0, in->dtype, out + 1, 3)
                   : meta_out_tensor(m, 0, in->dtype, out, 4);
}

/* The other convolutions are convolution with their arguments named
 * differently, read here by name: conv1d/3d, conv_transpose1d/2d/3d, the
 * padding='same'/'valid' overloads, _convolution, _convolution_mode,
 * mkldnn_convolution, conv_tbc's kin thnn_conv2d, _slow_conv2d_forward,
 * slow_conv3d(_forward), slow_conv_dilated2d/3d, slow_conv_transpose2d/3d.
 * The param holds the spatial dim count (0: the weight's rank less 2) and
 * the flags below. */
enum {
  CONV_N = 3,            /* spatial dims                                        */
  CONV_UNBATCHED = 4,    /* also takes one unbatched sample, and drops the batch */
  CONV_KEEP_BATCH = 8,   /* ... but keeps its batch of one (slow_conv_transpose2d) */
  CONV_TRANSPOSED = 16,  /* transposed, when the op has no `transposed` argument */
  CONV_MKLDNN = 32,      /* oneDNN's dtypes only: float32, float16, bfloat16    */
};

static int arg_named(const alloy_meta *m, const char *name) {
  return alloy_schema_find_arg(alloy_op_schema(m->op), name);
}

/* The padding of a convolution given as a string: "valid" is none, "same"
 * pads dilation * (k - 1) in all, half on each side and the odd one on the
 * right, as PyTorch's _convolution_same (which pads the input by that one
 * first): *L_extra gets what the input grows by before the convolution. */
static alloy_error *conv_pad_mode(alloy_meta *m, int i_pad, int i_stride, int i_dil,
                                  const alloy_value *w, int n, alloy_dim *pad,
                                  alloy_dim *L_extra) {
  const char *mode = meta_str(m, i_pad);
  alloy_dim ones[3] = {C(1), C(1), C(1)}, stride[3], dil[3];
  alloy_error *e = conv_list(m, i_stride, n, ones, stride);
  if (!e) e = conv_list(m, i_dil, n, ones, dil);
  if (e) return e;
  bool same = mode && !strcmp(mode, "same");
  if (!same && !(mode && !strcmp(mode, "valid")))
    return meta_error(m, "Invalid padding string: '%s'", mode ? mode : "None");
  for (int d = 0; d < n; d++) {
    pad[d] = L_extra[d] = C(0);
    if (!same) continue;
    if (!alloy_dim_is_const(stride[d]) || stride[d].value != 1)
      return meta_error(m, "padding='same' is not supported for strided convolutions");
    alloy_dim total = alloy_dim_mul(m->st, dil[d], alloy_dim_sub(m->st, w->shape[d + 2], C(1)));
    pad[d] = alloy_dim_floordiv(m->st, total, C(2));
    L_extra[d] = alloy_dim_sub(m->st, total, alloy_dim_mul(m->st, C(2), pad[d]));
  }
  return meta_sym_check(m);
}

static alloy_error *meta_conv_named(alloy_meta *m) {
  const alloy_value *in = meta_tensor(m, 0), *w = meta_tensor(m, 1);
  int n = m->param & CONV_N;
  int i_stride = arg_named(m, "stride"), i_pad = arg_named(m, "padding");
  int i_dil = arg_named(m, "dilation"), i_opad = arg_named(m, "output_padding");
  int i_groups = arg_named(m, "groups"), i_tr = arg_named(m, "transposed");
  int i_bias = arg_named(m, "bias"), i_ks = arg_named(m, "kernel_size");
  bool transposed = i_tr >= 0 ? meta_bool(m, i_tr) : (m->param & CONV_TRANSPOSED) != 0;
  alloy_dim groups = i_groups >= 0 ? meta_dim(m, i_groups) : C(1);
  if ((m->param & CONV_MKLDNN) && in->dtype != ALLOY_F32 && in->dtype != ALLOY_F16 &&
      in->dtype != ALLOY_BF16)
    return meta_error(m, "argument '%s': oneDNN convolutions take float32, float16 and "
                      "bfloat16 tensors, got %s", meta_arg_name(m, 0),
                      alloy_dtype_name(in->dtype));
  if (n == 0) {
    if (w->rank < 3 || w->rank > 5)
      return meta_error(m, "argument '%s': expected a 3-D to 5-D weight, got %dD",
                        meta_arg_name(m, 1), w->rank);
    n = w->rank - 2;
  }
  bool unbatched = (m->param & (CONV_UNBATCHED | CONV_KEEP_BATCH)) && in->rank == n + 1;
  alloy_error *e;
  if (!unbatched && in->rank != n + 2)
    return want_rank(m, 0, in, m->param & (CONV_UNBATCHED | CONV_KEEP_BATCH) ? n + 1 : n + 2,
                     n + 2);
  if (w->rank != n + 2)
    return meta_error(m, "argument '%s': expected a %d-D weight, got %d-D", meta_arg_name(m, 1),
                      n + 2, w->rank);
  if (i_ks >= 0) {
    alloy_dim ks[3];
    if ((e = spatial_dims(m, i_ks, n, NULL, ks))) return e;
    for (int d = 0; d < n; d++)
      if (never_eq(m, ks[d], w->shape[d + 2])) {
        char a[256], b[256];
        return meta_error(m, "weight[2:] shape %s must be equal to kernel_size %s",
                          meta_shape_text(w->shape + 2, n, a, sizeof a),
                          meta_shape_text(ks, n, b, sizeof b));
      }
  }
  alloy_value batched = *in;
  alloy_dim shape[ALLOY_MAX_RANK], out[ALLOY_MAX_RANK], pad[3], extra[3];
  memcpy(shape + (unbatched ? 1 : 0), in->shape, sizeof *shape * (size_t)in->rank);
  if (unbatched) shape[0] = C(1);
  bool pad_mode = i_pad >= 0 && m->args[i_pad].kind == ALLOY_ARG_STR;
  if (pad_mode) {
    if ((e = conv_pad_mode(m, i_pad, i_stride, i_dil, w, n, pad, extra))) return e;
    for (int d = 0; d < n; d++) shape[d + 2] = alloy_dim_add(m->st, shape[d + 2], extra[d]);
  }
  batched.shape = shape;
  batched.rank = n + 2;
  e = conv_shape(m, &batched, w, i_bias >= 0 ? meta_tensor(m, i_bias) : NULL, i_stride, i_pad,
                 i_dil, transposed, i_opad, groups, pad_mode ? pad : NULL, out);
  if (e) return e;
  if (unbatched && !(m->param & CONV_KEEP_BATCH))
    return meta_out_tensor(m, 0, in->dtype, out + 1, n + 1);
  return meta_out_tensor(m, 0, in->dtype, out, n + 2);
}

/* conv_tbc(self [T, B, C_in], weight [K, C_in, C_out], bias [C_out], pad):
 * a 1-d convolution laid out time first, [T + 2 pad - K + 1, B, C_out]. */
static alloy_error *meta_conv_tbc(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0), *w = meta_tensor(m, 1), *b = meta_tensor(m, 2);
  int64_t pad;
  alloy_error *e = meta_int(m, 3, &pad);
  if (e) return e;
  if (x->rank != 3) return want_rank(m, 0, x, 3, 3);
  if (w->rank != 3) return want_rank(m, 1, w, 3, 3);
  if (b->rank != 1) return want_rank(m, 2, b, 1, 1);
  if (never_eq(m, x->shape[2], w->shape[1]))
    return meta_error(m, "Input dim 2 (input channels) is not == dim 1 in the weight tensor");
  if (never_eq(m, b->shape[0], w->shape[2]))
    return meta_error(m, "Bias size must equal dim 2 in the weight tensor (output channels).");
  alloy_dim out[3] = {
      alloy_dim_add(m->st, alloy_dim_sub(m->st, alloy_dim_add(m->st, x->shape[0], C(2 * pad)),
                                         w->shape[0]),
                    C(1)),
      x->shape[1], w->shape[2]};
  if ((e = meta_sym_check(m))) return e;
  if (surely_lt(m, out[0], C(0)))
    return meta_error(m, "the kernel (%s wide) is longer than the padded input",
                      dim_text(w->shape[0], (char[64]){0}, 64));
  return meta_out_tensor(m, 0, x->dtype, out, 3);
}

/* convolution_backward(grad_output, input, weight, bias_sizes, stride,
 * padding, dilation, transposed, output_padding, groups, output_mask).
 * PyTorch leaves an output the mask turns off undefined; Alloy has no
 * undefined outputs, so each gets the shape it would have. */
static alloy_error *meta_convolution_backward(alloy_meta *m) {
  const alloy_value *go = meta_tensor(m, 0), *in = meta_tensor(m, 1), *w = meta_tensor(m, 2);
  alloy_dim bias[ALLOY_MAX_RANK];
  int nb = 0;
  alloy_error *e = meta_dims(m, 3, bias, ALLOY_MAX_RANK, &nb);
  if (e) return e;
  if (meta_is_none(m, 3)) {
    nb = 1;
    bias[0] = meta_bool(m, 7) ? alloy_dim_mul(m->st, w->shape[1], meta_dim(m, 9))
                              : w->shape[0];
  }
  if (!(e = meta_out_tensor(m, 0, go->dtype, in->shape, in->rank)) &&
      !(e = meta_out_tensor(m, 1, go->dtype, w->shape, w->rank)))
    e = meta_out_tensor(m, 2, go->dtype, bias, nb);
  return e;
}

/* --- pooling ------------------------------------------------------------*/

/* Where a pooling op keeps its arguments; dil < 0: no dilation. */
typedef struct {
  int self, kernel, stride, pad, dil, ceil;
} pool_args;

/* PyTorch's pooling_output_shape: floor (or ceil) of the window count,
 * where in ceil mode the last window must start inside the input or the
 * left padding. That last rule makes it min(o, ceil((L + pad) / stride)). */
static alloy_dim pool_out(alloy_meta *m, alloy_dim L, int64_t k, int64_t p, int64_t s,
                          int64_t d, bool ceil_mode) {
  /* Symbolic arithmetic: an overflow is the symbol table's error. */
  alloy_dim reach = alloy_dim_add(m->st, alloy_dim_mul(m->st, C(d), C(k - 1)), C(1));
  alloy_dim num = alloy_dim_sub(m->st, alloy_dim_add(m->st, L, alloy_dim_mul(m->st, C(2), C(p))),
                                reach);
  if (ceil_mode) num = alloy_dim_add(m->st, num, C(s - 1));
  alloy_dim o = alloy_dim_add(m->st, alloy_dim_floordiv(m->st, num, C(s)), C(1));
  if (ceil_mode)
    o = alloy_dim_min(m->st, o, alloy_dim_ceildiv(m->st, alloy_dim_add(m->st, L, C(p)), C(s)));
  return o;
}

/* Output shape of an n-d pooling (avg when a.dil < 0); the batch dim is
 * optional. avg3d also wants the input at least as large as the kernel. */
static alloy_error *pool_shape(alloy_meta *m, const pool_args *a, int n, alloy_dim *out,
                               int *rank) {
  const alloy_value *in = meta_tensor(m, a->self);
  alloy_error *e = want_rank(m, a->self, in, n + 1, n + 2);
  if (e) return e;
  int64_t k[3], s[3], p[3], d[3] = {1, 1, 1}, zeros[3] = {0, 0, 0};
  if ((e = spatial_ints(m, a->kernel, n, NULL, k))) return e;
  if ((e = spatial_ints(m, a->stride, n, k, s))) return e;
  if ((e = spatial_ints(m, a->pad, n, zeros, p))) return e;
  if (a->dil >= 0 && (e = spatial_ints(m, a->dil, n, NULL, d))) return e;
  bool avg = a->dil < 0, ceil_mode = meta_bool(m, a->ceil);
  if (avg && (in->dtype == ALLOY_BOOL || in->dtype == ALLOY_U8))
    return meta_error(m, "avg_pool: not implemented for %s", alloy_dtype_name(in->dtype));
  int batch = in->rank - n - 1; /* 0 or 1 */
  for (int i = batch; i < in->rank; i++)
    if (surely_zero(in->shape[i])) {
      char sh[256];
      return meta_error(m, "expected a %d-D or %d-D (batch mode) input with non-zero sizes "
                        "except the batch, got %s", n + 1, n + 2,
                        meta_shape_text(in->shape, in->rank, sh, sizeof sh));
    }
  for (int i = 0; i < n; i++) {
    const char *bad = k[i] <= 0   ? "kernel size"
                      : s[i] <= 0 ? "stride"
                      : d[i] <= 0 ? "dilation"
                                  : NULL;
    if (bad)
      return meta_error(m, "%s should be greater than zero, got kernel_size=%lld, stride=%lld, "
                        "dilation=%lld", bad, (long long)k[i], (long long)s[i], (long long)d[i]);
    if (p[i] < 0) return meta_error(m, "pad must be non-negative, got %lld", (long long)p[i]);
    int64_t reach; /* the dilated kernel's extent */
    if (!alloy_checked_mul(k[i] - 1, d[i], &reach) || !alloy_checked_add(reach, 1, &reach))
      return meta_error(m, "kernel_size=%lld with dilation=%lld overflows int64",
                        (long long)k[i], (long long)d[i]);
    if (p[i] > k[i] / 2 || p[i] > reach / 2)
      return meta_error(m, "pad should be at most half of effective kernel size, got pad=%lld, "
                        "kernel_size=%lld and dilation=%lld",
                        (long long)p[i], (long long)k[i], (long long)d[i]);
  }
  memcpy(out, in->shape, sizeof *out * (size_t)(batch + 1));
  for (int i = 0; i < n; i++) {
    alloy_dim L = in->shape[batch + 1 + i];
    if (avg && n == 3 && surely_lt(m, L, C(k[i])))
      return meta_error(m, "input image %s smaller than kernel size %lld",
                        dim_text(L, (char[64]){0}, 64), (long long)k[i]);
    out[batch + 1 + i] = pool_out(m, L, k[i], p[i], s[i], d[i], ceil_mode);
    if (surely_lt(m, out[batch + 1 + i], C(1))) {
      char sh[256], o[256];
      return meta_error(m, "given input size %s, the calculated output size %s is too small",
                        meta_shape_text(in->shape + batch + 1, n, sh, sizeof sh),
                        meta_shape_text(out + batch + 1, i + 1, o, sizeof o));
    }
  }
  *rank = in->rank;
  return meta_sym_check(m);
}

#define POOL_INDICES 8 /* max pooling that also returns the indices */

/* avg_poolNd(self, kernel_size, stride, padding, ceil_mode,
 * count_include_pad[, divisor_override]); param: N */
static alloy_error *meta_avg_pool(alloy_meta *m) {
  static const pool_args a = {0, 1, 2, 3, -1, 4};
  alloy_dim out[ALLOY_MAX_RANK];
  int rank;
  alloy_error *e = pool_shape(m, &a, m->param, out, &rank);
  if (e) return e;
  if (m->nargs > 6 && !meta_is_none(m, 6)) {
    int64_t div;
    if ((e = meta_int(m, 6, &div))) return e;
    if (div == 0) return meta_error(m, "divisor must be not zero");
  }
  return meta_out_tensor(m, 0, meta_tensor(m, 0)->dtype, out, rank);
}

/* max_poolNd[_with_indices](self, kernel_size, stride, padding, dilation,
 * ceil_mode); param: N | POOL_INDICES */
static alloy_error *meta_max_pool(alloy_meta *m) {
  static const pool_args a = {0, 1, 2, 3, 4, 5};
  alloy_dim out[ALLOY_MAX_RANK];
  int rank;
  alloy_error *e = pool_shape(m, &a, m->param & 7, out, &rank);
  if (e) return e;
  e = meta_out_tensor(m, 0, meta_tensor(m, 0)->dtype, out, rank);
  if (!e && (m->param & POOL_INDICES)) e = meta_out_tensor(m, 1, ALLOY_I64, out, rank);
  return e;
}

/* The backward of a pooling: the gradient of the input, after checking
 * that grad_output (argument 0) has the forward's output shape. */
static alloy_error *pool_backward(alloy_meta *m, const pool_args *a, int n, int i_indices) {
  alloy_dim out[ALLOY_MAX_RANK];
  int rank;
  alloy_error *e = pool_shape(m, a, n, out, &rank);
  if (!e) e = want_shape(m, 0, meta_tensor(m, 0), out, rank);
  if (!e && i_indices >= 0) e = want_shape(m, i_indices, meta_tensor(m, i_indices), out, rank);
  const alloy_value *self = meta_tensor(m, a->self);
  if (!e) e = want_same_dtype(m, 0, meta_tensor(m, 0), a->self, self);
  return e ? e : meta_out_like(m, 0, self, self->dtype);
}

/* avg_pool2d_backward(grad_output, self, kernel_size, stride, padding,
 * ceil_mode, count_include_pad, divisor_override); param: N */
static alloy_error *meta_avg_pool_backward(alloy_meta *m) {
  static const pool_args a = {1, 2, 3, 4, -1, 5};
  return pool_backward(m, &a, m->param, -1);
}

/* max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride,
 * padding, dilation, ceil_mode, indices); param: N */
static alloy_error *meta_max_pool_backward(alloy_meta *m) {
  static const pool_args a = {1, 2, 3, 4, 5, 6};
  return pool_backward(m, &a, m->param, 7);
}

#define ADAPTIVE_MAX 8

/* adaptive_{avg,max}_poolNd(self, output_size); param: N | ADAPTIVE_MAX */
static alloy_error *meta_adaptive_pool(alloy_meta *m) {
  int n = m->param & 7;
  bool max = m->param & ADAPTIVE_MAX;
  const alloy_value *in = meta_tensor(m, 0);
  alloy_error *e = want_rank(m, 0, in, n + 1, n + 2);
  alloy_dim size[3], out[ALLOY_MAX_RANK];
  if (!e) e = exact_dims(m, 1, n, size);
  if (e) return e;
  /* The CPU max kernels dispatch on floating types only
   * (AT_DISPATCH_FLOATING_TYPES_AND2(BFloat16, Half)). */
  if (max && !alloy_dtype_is_float(in->dtype))
    return meta_error(m, "\"adaptive_max_pool%dd\" not implemented for '%s': argument 'self' "
                         "must be a floating-point tensor",
                      n, alloy_dtype_name(in->dtype));
  int batch = in->rank - n - 1;
  /* max pooling cannot take an empty window; avg pooling of one is NaN */
  for (int i = max ? 1 : batch + 1; i < in->rank; i++)
    if (surely_zero(in->shape[i]))
      return meta_error(m, "expected input to have non-zero size for non-batch dimensions, "
                        "got shape %s", meta_shape_text(in->shape, in->rank, (char[256]){0}, 256));
  for (int i = 0; i < n; i++)
    if (alloy_dim_is_const(size[i]) && size[i].value < 0)
      return meta_error(m, "argument 'output_size' must be non-negative");
  memcpy(out, in->shape, sizeof *out * (size_t)(batch + 1));
  memcpy(out + batch + 1, size, sizeof *out * (size_t)n);
  e = meta_out_tensor(m, 0, in->dtype, out, in->rank);
  if (!e && max) e = meta_out_tensor(m, 1, ALLOY_I64, out, in->rank);
  return e;
}

/* _adaptive_avg_pool2d_backward(grad_output, self) */
static alloy_error *meta_adaptive_pool_backward(alloy_meta *m) {
  const alloy_value *go = meta_tensor(m, 0), *self = meta_tensor(m, 1);
  alloy_error *e = want_rank(m, 0, go, 3, 4);
  if (!e && go->rank != self->rank) e = want_rank(m, 1, self, go->rank, go->rank);
  if (!e) e = want_same_dtype(m, 0, go, 1, self);
  return e ? e : meta_out_like(m, 0, self, self->dtype);
}

/* fractional_max_poolNd(self, kernel_size, output_size, random_samples);
 * param: N */
static alloy_error *meta_fractional_max_pool(alloy_meta *m) {
  int n = m->param;
  const alloy_value *in = meta_tensor(m, 0), *rs = meta_tensor(m, 3);
  alloy_error *e = want_rank(m, 0, in, n + 1, n + 2);
  int64_t k[3], o[3];
  if (!e) e = spatial_ints(m, 1, n, NULL, k);
  if (!e) e = spatial_ints(m, 2, n, NULL, o);
  if (!e) e = want_rank(m, 3, rs, 3, 3);
  if (!e) e = want_same_dtype(m, 0, in, 3, rs);
  if (e) return e;
  int batch = in->rank - n - 1;
  alloy_dim out[ALLOY_MAX_RANK];
  memcpy(out, in->shape, sizeof *out * (size_t)(batch + 1));
  if (never_eq(m, rs->shape[1], in->shape[batch]) || never_eq(m, rs->shape[2], C(n)))
    return meta_error(m, "expected random_samples of shape [N, %s, %d], got %s",
                      dim_text(in->shape[batch], (char[64]){0}, 64), n,
                      meta_shape_text(rs->shape, rs->rank, (char[256]){0}, 256));
  for (int i = 0; i < n; i++) {
    alloy_dim L = in->shape[batch + 1 + i];
    if (surely_zero(L) || k[i] <= 0 || o[i] < 0)
      return meta_error(m, "expected a non-empty input, a positive kernel and a non-negative "
                        "output size");
    int64_t need; /* o windows of size k with stride at least 1 */
    if (!alloy_checked_add(o[i], k[i] - 1, &need))
      return meta_error(m, "output_size %lld with kernel size %lld overflows int64",
                        (long long)o[i], (long long)k[i]);
    if (surely_lt(m, L, C(need)))
      return meta_error(m, "kernel size %lld is too large relative to input size %s",
                        (long long)k[i], dim_text(L, (char[64]){0}, 64));
    out[batch + 1 + i] = C(o[i]);
  }
  e = meta_out_tensor(m, 0, in->dtype, out, in->rank);
  return e ? e : meta_out_tensor(m, 1, ALLOY_I64, out, in->rank);
}

/* max_unpoolNd(self, indices, output_size[, stride, padding]); param: N */
static alloy_error *meta_max_unpool(alloy_meta *m) {
  int n = m->param;
  const alloy_value *in = meta_tensor(m, 0), *idx = meta_tensor(m, 1);
  alloy_error *e = want_rank(m, 0, in, n + 1, n + 2);
  alloy_dim size[3], out[ALLOY_MAX_RANK];
  if (!e) e = exact_dims(m, 2, n, size);
  if (!e) e = want_shape(m, 1, idx, in->shape, in->rank);
  if (!e && idx->dtype != ALLOY_I64)
    e = meta_error(m, "argument 'indices': expected int64, got %s", alloy_dtype_name(idx->dtype));
  if (e) return e;
  if (n == 3) {
    int64_t s[3], p[3];
    if ((e = spatial_ints(m, 3, 3, NULL, s)) || (e = spatial_ints(m, 4, 3, NULL, p))) return e;
    for (int i = 0; i < 3; i++)
      if (s[i] <= 0)
        return meta_error(m, "strides should be greater than zero, got %lld", (long long)s[i]);
  }
  memcpy(out, in->shape, sizeof *out * (size_t)(in->rank - n));
  memcpy(out + in->rank - n, size, sizeof *out * (size_t)n);
  return meta_out_tensor(m, 0, in->dtype, out, in->rank);
}

/* --- normalization ------------------------------------------------------*/

/* native_layer_norm(input, normalized_shape, weight, bias, eps) and
 * layer_norm(input, normalized_shape, weight, bias, eps, cudnn_enable):
 * mean and rstd keep the leading dims and have 1 for each normalized one. */
static alloy_error *meta_layer_norm(alloy_meta *m) {
  const alloy_value *in = meta_tensor(m, 0);
  alloy_dim ns[ALLOY_MAX_RANK];
  int k;
  alloy_error *e = meta_dims(m, 1, ns, ALLOY_MAX_RANK, &k);
  if (e) return e;
  if (k < 1) return meta_error(m, "argument 'normalized_shape': expected at least one dim");
  int axis = in->rank - k;
  bool ok = axis >= 0;
  for (int d = 0; d < k && ok; d++) ok = !never_eq(m, in->shape[axis + d], ns[d]);
  if (!ok) {
    char a[256], b[256];
    return meta_error(m, "given normalized_shape=%s, expected input with shape [*, %s], got %s",
                      meta_shape_text(ns, k, a, sizeof a), meta_shape_text(ns, k, b, sizeof b) + 1,
                      meta_shape_text(in->shape, in->rank, (char[256]){0}, 256));
  }
  for (int i = 2; i <= 3; i++) {
    const alloy_value *p = meta_tensor(m, i);
    if (p && (e = want_shape(m, i, p, ns, k))) return e;
  }
  if ((e = want_float(m, 0, in)) || (e = meta_out_like(m, 0, in, in->dtype))) return e;
  if (m->nout == 1) return NULL;
  alloy_dim stat[ALLOY_MAX_RANK];
  memcpy(stat, in->shape, sizeof *stat * (size_t)axis);
  for (int d = axis; d < in->rank; d++) stat[d] = C(1);
  alloy_dtype t = stats_dtype(m, in, (const int[]){2, 3}, 2);
  e = meta_out_tensor(m, 1, t, stat, in->rank);
  return e ? e : meta_out_tensor(m, 2, t, stat, in->rank);
}

/* native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd,
 * weight, bias, output_mask): outputs turned off by the mask still get
 * their shape (see meta_convolution_backward). */
static alloy_error *meta_layer_norm_backward(alloy_meta *m) {
  const alloy_value *go = meta_tensor(m, 0), *in = meta_tensor(m, 1);
  alloy_dim ns[ALLOY_MAX_RANK];
  int k;
  alloy_error *e = meta_dims(m, 2, ns, ALLOY_MAX_RANK, &k);
  if (!e) e = want_shape(m, 0, go, in->shape, in->rank);
  if (!e) e = meta_out_like(m, 0, in, in->dtype);
  for (int i = 0; i < 2 && !e; i++) {
    const alloy_value *p = meta_tensor(m, 5 + i);
    e = p ? meta_out_like(m, 1 + i, p, p->dtype) : meta_out_tensor(m, 1 + i, in->dtype, ns, k);
  }
  return e;
}

/* native_group_norm(input, weight, bias, N, C, HxW, group, eps) */
static alloy_error *meta_group_norm(alloy_meta *m) {
  const alloy_value *in = meta_tensor(m, 0);
  alloy_dim n = meta_dim(m, 3), c = meta_dim(m, 4);
  int64_t group;
  alloy_error *e = meta_int(m, 6, &group);
  if (e) return e;
  if (group <= 0)
    return meta_error(m, "argument 'group': expected a positive number, got %lld",
                      (long long)group);
  if (alloy_dim_is_const(c) && c.value % group)
    return meta_error(m, "expected number of channels in input to be divisible by num_groups, "
                      "but got input of shape %s and num_groups=%lld",
                      meta_shape_text(in->shape, in->rank, (char[256]){0}, 256), (long long)group);
  for (int i = 1; i <= 2; i++) {
    const alloy_value *p = meta_tensor(m, i);
    if (p && (e = want_shape(m, i, p, &c, 1))) return e;
  }
  if ((e = want_float(m, 0, in)) || (e = meta_out_like(m, 0, in, in->dtype))) return e;
  alloy_dim stat[2] = {n, C(group)};
  alloy_dtype t = stats_dtype(m, in, (const int[]){1, 2}, 2);
  e = meta_out_tensor(m, 1, t, stat, 2);
  return e ? e : meta_out_tensor(m, 2, t, stat, 2);
}

/* native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW,
 * group, output_mask) */
static alloy_error *meta_group_norm_backward(alloy_meta *m) {
  const alloy_value *go = meta_tensor(m, 0), *in = meta_tensor(m, 1);
  alloy_dim c = meta_dim(m, 6);
  alloy_error *e = want_shape(m, 0, go, in->shape, in->rank);
  if (!e) e = meta_out_like(m, 0, in, in->dtype);
  if (!e) e = meta_out_tensor(m, 1, in->dtype, &c, 1);
  return e ? e : meta_out_tensor(m, 2, in->dtype, &c, 1);
}

/* The batch norms. Argument positions of the variants: */
typedef struct {
  int weight, bias, mean, var, training; /* -1: absent; training -2: always */
  bool reserve;                          /* a fourth, empty uint8 output     */
  bool running_out; /* then the updated running_mean and running_var (functional) */
  bool eval_empty_as_weight; /* empty statistics in evaluation take weight's dtype (cuDNN's) */
} bn_args;

static const bn_args bn_variants[] = {
    {1, 2, 3, 4, 5, false, false, false},   /* native_batch_norm, _native_batch_norm_legit */
    {1, 2, 3, 4, -1, false, false, false},  /* _native_batch_norm_legit_no_training       */
    {1, 2, -1, -1, 3, false, false, false}, /* _native_batch_norm_legit.no_stats          */
    {1, 2, 3, 4, -2, true, false, false},   /* _batch_norm_with_update                    */
    {1, 2, 3, 4, -1, true, false, false},   /* _batch_norm_no_update                      */
    {1, 2, 3, 4, -2, true, true, false},    /* _batch_norm_with_update_functional        */
    {1, 2, 3, 4, 5, false, true, false},    /* _native_batch_norm_legit_functional       */
    {1, 2, 3, 4, 5, true, false, true},     /* cudnn_batch_norm                           */
};

/* out has the input's shape; save_mean and save_invstd have one entry per
 * channel in training and are empty otherwise. param: index in bn_variants */
static alloy_error *meta_batch_norm(alloy_meta *m) {
  const bn_args *a = &bn_variants[m->param];
  const alloy_value *in = meta_tensor(m, 0);
  alloy_error *e = want_rank(m, 0, in, 2, ALLOY_MAX_RANK);
  if (!e) e = want_float(m, 0, in);
  if (e) return e;
  alloy_dim c = in->shape[1];
  const int idx[4] = {a->weight, a->bias, a->mean, a->var};
  for (int i = 0; i < 4; i++) {
    const alloy_value *p = idx[i] >= 0 ? meta_tensor(m, idx[i]) : NULL;
    if (p && (e = want_shape(m, idx[i], p, &c, 1))) return e;
  }
  bool training = a->training == -2 || (a->training >= 0 && meta_bool(m, a->training));
  if (training && a->mean >= 0 && !meta_tensor(m, a->mean) != !meta_tensor(m, a->var))
    return meta_error(m, "running_mean and running_var must both be given or both be None");
  if (!training && a->mean >= 0 && (!meta_tensor(m, a->mean) || !meta_tensor(m, a->var)))
    return meta_error(m, "running_mean and running_var must be defined in evaluation mode");
  alloy_dtype t = stats_dtype(m, in, idx, 4);
  if (!training && a->eval_empty_as_weight) t = meta_tensor(m, a->weight)->dtype;
  alloy_dim stat = training ? c : C(0);
  if ((e = meta_out_like(m, 0, in, in->dtype)) || (e = meta_out_tensor(m, 1, t, &stat, 1)) ||
      (e = meta_out_tensor(m, 2, t, &stat, 1)))
    return e;
  alloy_dim zero = C(0);
  if (a->reserve && (e = meta_out_tensor(m, 3, ALLOY_U8, &zero, 1))) return e;
  if (!a->running_out) return NULL;
  const alloy_value *rm = meta_tensor(m, a->mean), *rv = meta_tensor(m, a->var);
  if (!rm || !rv) return meta_error(m, "running_mean and running_var must be given");
  int k = a->reserve ? 4 : 3;
  return (e = meta_out_like(m, k, rm, rm->dtype)) ? e : meta_out_like(m, k + 1, rv, rv->dtype);
}

/* --- losses -------------------------------------------------------------*/

/* mse_loss, huber_loss, smooth_l1_loss, soft_margin_loss (self, target,
 * reduction, ...): elementwise over the broadcast shape, then reduced. Their
 * CPU kernels dispatch on floating types only (soft_margin_loss computes
 * exp_ in self's dtype), so integer and bool operands are refused. */
static alloy_error *meta_pointwise_loss(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0), *y = meta_tensor(m, 1);
  int64_t r;
  alloy_error *e = reduction_arg(m, 2, &r);
  if (e) return e;
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank;
  if ((e = meta_broadcast(m, x->shape, x->rank, y->shape, y->rank, shape, &rank))) return e;
  alloy_promo_operand ops[2] = {meta_promo_operand(m, 0), meta_promo_operand(m, 1)};
  alloy_dtype compute, result;
  alloy_elementwise_dtypes(ops, 2, ALLOY_PROMO_DEFAULT, &compute, &result);
  if (!alloy_dtype_is_float(result) && !alloy_dtype_is_complex(result)) {
    const char *op = strstr(m->op->schema->name, "::");
    return meta_error(m, "\"%s\" not implemented for '%s': arguments 'self' and 'target' "
                         "must be floating-point tensors",
                      op ? op + 2 : m->op->schema->name, alloy_dtype_name(result));
  }
  return meta_out_tensor(m, 0, result, shape, r == 0 ? rank : 0);
}

/* binary_cross_entropy(self, target, weight, reduction) wants the target of
 * the input's shape; the _with_logits form broadcasts. param: the position
 * of reduction */
static alloy_error *meta_bce(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0), *y = meta_tensor(m, 1);
  int64_t r;
  alloy_error *e = reduction_arg(m, m->param, &r);
  if (!e) e = want_float(m, 0, x);
  if (e) return e;
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank = x->rank;
  if (m->param == 3) {
    if ((e = want_shape(m, 1, y, x->shape, x->rank))) return e;
    memcpy(shape, x->shape, sizeof *shape * (size_t)rank);
  } else if ((e = meta_broadcast(m, x->shape, x->rank, y->shape, y->rank, shape, &rank))) {
    return e;
  }
  for (int i = 2; i < m->param; i++) { /* weight, pos_weight broadcast to it */
    const alloy_value *w = meta_tensor(m, i);
    alloy_dim bc[ALLOY_MAX_RANK];
    int rb;
    if (w && (e = meta_broadcast(m, w->shape, w->rank, shape, rank, bc, &rb))) return e;
  }
  return meta_out_tensor(m, 0, x->dtype, shape, r == 0 ? rank : 0);
}

/* multi_margin_loss(self, target, p, margin, weight, reduction) */
static alloy_error *meta_multi_margin_loss(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0), *y = meta_tensor(m, 1);
  int64_t r;
  alloy_error *e = reduction_arg(m, 5, &r);
  if (!e) e = want_rank(m, 0, x, 0, 2);
  if (!e) e = want_rank(m, 1, y, 0, 1);
  if (e) return e;
  /* The CPU kernel reads the target as int64 and the weight in self's
   * dtype, and dispatches on float32 and float64 only
   * (AT_DISPATCH_FLOATING_TYPES). */
  if (x->dtype != ALLOY_F32 && x->dtype != ALLOY_F64)
    return meta_error(m, "\"multi_margin_loss_cpu_kernel\" not implemented for '%s': argument "
                         "'self' must be float32 or float64",
                      alloy_dtype_name(x->dtype));
  if (y->dtype != ALLOY_I64)
    return meta_error(m, "argument 'target': expected scalar type Long but found %s",
                      alloy_dtype_name(y->dtype));
  const alloy_value *w = meta_tensor(m, 4);
  if (w && (e = want_same_dtype(m, 0, x, 4, w))) return e;
  double p = meta_float(m, 2);
  if (m->args[2].kind != ALLOY_ARG_VALUE && p != 1 && p != 2)
    return meta_error(m, "only p == 1 and p == 2 supported, got %g", p);
  alloy_dim nframe = x->rank <= 1 ? C(1) : x->shape[0];
  if (never_eq(m, meta_numel(m, y->shape, y->rank), nframe))
    return meta_error(m, "inconsistent target size: %s for input of size %s",
                      meta_shape_text(y->shape, y->rank, (char[256]){0}, 256),
                      meta_shape_text(x->shape, x->rank, (char[256]){0}, 256));
  bool keep = r == 0 && y->rank > 0;
  return meta_out_tensor(m, 0, x->dtype, &nframe, keep ? 1 : 0);
}

/* multilabel_margin_loss_forward(self, target, reduction) -> (output,
 * is_target) */
static alloy_error *meta_multilabel_margin_loss(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0), *y = meta_tensor(m, 1);
  int64_t r;
  alloy_error *e = reduction_arg(m, 2, &r);
  if (!e) e = want_rank(m, 0, x, 0, 2);
  if (!e) e = want_shape(m, 1, y, x->shape, x->rank);
  if (e) return e;
  /* The CPU kernel reads the target as int64 and dispatches on float32 and
   * float64 only (AT_DISPATCH_FLOATING_TYPES). */
  if (y->dtype != ALLOY_I64)
    return meta_error(m, "argument 'target': expected scalar type Long but found %s",
                      alloy_dtype_name(y->dtype));
  if (x->dtype != ALLOY_F32 && x->dtype != ALLOY_F64)
    return meta_error(m, "\"multilabel_margin_loss_forward_out_frame\" not implemented for "
                         "'%s': argument 'self' must be float32 or float64",
                      alloy_dtype_name(x->dtype));
  bool keep = r == 0 && y->rank == 2;
  e = meta_out_tensor(m, 0, x->dtype, x->shape, keep ? 1 : 0);
  /* param 1: multilabel_margin_loss, the loss alone */
  return e || m->param == 1 ? e : meta_out_like(m, 1, y, x->dtype);
}

/* nll_loss_forward(self, target, weight, reduction, ignore_index) and
 * nll_loss2d_forward: (output, total_weight). param: 1 or 2 (spatial) */
static alloy_error *meta_nll_loss(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0), *y = meta_tensor(m, 1), *w = meta_tensor(m, 2);
  int64_t r;
  alloy_error *e = reduction_arg(m, 3, &r);
  if (e) return e;
  bool two_d = m->param == 2;
  if ((e = want_rank(m, 0, x, two_d ? 4 : 1, two_d ? 4 : 2))) return e;
  if ((e = want_rank(m, 1, y, two_d ? 3 : 0, two_d ? 3 : 1))) return e;
  /* The CPU kernels dispatch on floating types only
   * (AT_DISPATCH_FLOATING_TYPES_AND2(BFloat16, Half)), read the weight in
   * self's dtype and the target as int64 (nll_loss_forward takes uint8
   * too). */
  if (!alloy_dtype_is_float(x->dtype))
    return meta_error(m, "\"%s\" not implemented for '%s': argument 'self' must be a "
                         "floating-point tensor",
                      two_d ? "nll_loss2d_forward_out_frame" : "nll_loss_out_frame",
                      alloy_dtype_name(x->dtype));
  if (y->dtype != ALLOY_I64 && (two_d || y->dtype != ALLOY_U8))
    return meta_error(m, "argument 'target': expected scalar type Long but found %s",
                      alloy_dtype_name(y->dtype));
  if (w && (e = want_same_dtype(m, 0, x, 2, w))) return e;
  alloy_dim out[3];
  int rank = 0;
  if (two_d) {
    alloy_dim want[3] = {x->shape[0], x->shape[2], x->shape[3]};
    if ((e = want_shape(m, 1, y, want, 3))) return e;
    memcpy(out, want, sizeof want);
    rank = 3;
  } else if (x->rank == 2 || y->rank == 1) {
    if (y->rank != 1 || never_eq(m, y->shape[0], x->shape[0]))
      return meta_error(m, "expected input batch_size (%s) to match target batch_size (%s)",
                        dim_text(x->shape[0], (char[64]){0}, 64),
                        y->rank ? dim_text(y->shape[0], (char[64]){0}, 64) : "none");
    out[0] = x->shape[0];
    rank = x->rank - 1;
  }
  alloy_dim nclass = x->shape[x->rank == 1 ? 0 : 1];
  if (w && (w->rank != 1 || never_eq(m, w->shape[0], nclass)))
    return meta_error(m, "weight tensor should be defined either for all %s classes or no "
                      "classes but got weight tensor of shape %s",
                      dim_text(nclass, (char[64]){0}, 64),
                      meta_shape_text(w->shape, w->rank, (char[256]){0}, 256));
  e = meta_out_tensor(m, 0, x->dtype, out, r == 0 ? rank : 0);
  return e ? e : meta_out_tensor(m, 1, x->dtype, NULL, 0);
}

/* --- upsampling ---------------------------------------------------------*/

/* floor(L * scale) as PyTorch's sym_int(L * scale) computes it; for a
 * symbolic L the scale must be a ratio p/q of small integers. */
static alloy_error *scaled_size(alloy_meta *m, alloy_dim L, double scale, alloy_dim *out) {
  if (!(scale > 0) || !isfinite(scale))
    return meta_error(m, "scale factors must be positive, got %g", scale);
  if (scale == floor(scale) && scale < 1e15) {
    *out = alloy_dim_mul(m->st, L, C((int64_t)scale));
    return NULL;
  }
  int64_t v;
  if (alloy_dim_is_const(L)) {
    if (!alloy_checked_from_double(floor((double)L.value * scale), &v))
      return meta_error(m, "the size %lld scaled by %g overflows int64", (long long)L.value, scale);
    *out = C(v);
    return NULL;
  }
  for (int64_t q = 2; q <= 1000; q++) {
    double p = scale * (double)q;
    if (fabs(p - nearbyint(p)) < 1e-9 * p && alloy_checked_from_double(nearbyint(p), &v)) {
      *out = alloy_dim_floordiv(m->st, alloy_dim_mul(m->st, L, C(v)), C(q));
      return NULL;
    }
  }
  return meta_error(m, "cannot scale the symbolic size %s by %g: give output_size instead",
                    dim_text(L, (char[64]){0}, 64), scale);
}

#define UP_VEC 4          /* the .vec overload: output_size or scale_factors */
#define UP_SCALES_AT 8    /* .vec: position of scale_factors, times 8 */
#define UP_U8 64          /* takes uint8 besides the floating types */
#define UP_NO_HALF 128    /* refuses float16 and bfloat16 */

/* upsample_*(self, output_size, ...) and the .vec forms (input,
 * output_size?, [align_corners,] scale_factors?). param: number of spatial
 * dims | UP_VEC | position of scale_factors * UP_SCALES_AT | the dtype
 * flags. The CPU kernels compute their indices and weights for floating
 * types only, plus uint8 for nearest, bilinear and bicubic; the
 * antialiased one has no float16 or bfloat16 kernel. */
static alloy_error *meta_upsample(alloy_meta *m) {
  int n = m->param & 3, i_scales = (m->param / UP_SCALES_AT) & 7;
  const alloy_value *in = meta_tensor(m, 0);
  alloy_error *e = want_rank(m, 0, in, n + 2, n + 2);
  if (e) return e;
  alloy_dtype t = in->dtype;
  bool half = t == ALLOY_F16 || t == ALLOY_BF16;
  if (!(t == ALLOY_F32 || t == ALLOY_F64 || (half && !(m->param & UP_NO_HALF)) ||
        (t == ALLOY_U8 && (m->param & UP_U8)))) {
    const char *op = strstr(m->op->schema->name, "::");
    return meta_error(m, "\"%s\" not implemented for '%s': argument '%s' has a dtype the CPU "
                         "kernel does not take",
                      op ? op + 2 : m->op->schema->name, alloy_dtype_name(t),
                      meta_arg_name(m, 0));
  }
  alloy_dim out[ALLOY_MAX_RANK];
  out[0] = in->shape[0];
  out[1] = in->shape[1];
  bool use_scales = (m->param & UP_VEC) && meta_is_none(m, 1);
  if ((m->param & UP_VEC) && use_scales == meta_is_none(m, i_scales))
    return meta_error(m, "must specify exactly one of output_size and scale_factors");
  if (use_scales) {
    const alloy_arg *a = &m->args[i_scales];
    if (a->kind != ALLOY_ARG_LIST || a->u.list.n != n)
      return meta_error(m, "argument 'scale_factors' must have %d items", n);
    for (int i = 0; i < n && !e; i++) {
      const alloy_arg *it = &a->u.list.items[i];
      if (it->kind != ALLOY_ARG_FLOAT && it->kind != ALLOY_ARG_INT)
        return meta_error(m, "argument 'scale_factors' must hold literal numbers");
      double s = it->kind == ALLOY_ARG_FLOAT ? it->u.f : (double)it->u.i.value;
      e = scaled_size(m, in->shape[2 + i], s, &out[2 + i]);
    }
  } else {
    e = exact_dims(m, 1, n, out + 2);
  }
  if (e) return e;
  for (int i = 2; i < n + 2; i++)
    if (surely_lt(m, in->shape[i], C(1)) || surely_lt(m, out[i], C(1)))
      return meta_error(m, "input and output sizes should be greater than 0, got input size "
                        "%s and output size %s",
                        meta_shape_text(in->shape, in->rank, (char[256]){0}, 256),
                        meta_shape_text(out, n + 2, (char[256]){0}, 256));
  return meta_out_tensor(m, 0, in->dtype, out, n + 2);
}

/* The TorchScript interpolation builtins (__interpolate, __upsample,
 * __upsample_nearest, __upsample_bilinear and their list overloads), as
 * TorchScript's interpolate: the mode (bilinear with align_corners for
 * __upsample_bilinear, param 1; nearest by default) picks an upsampling or
 * adaptive average pooling op by the input's rank; the size is given (one
 * int for every dim, or a list) or floor(size * scale_factor). */
static alloy_error *interp_mode(alloy_meta *m, const char **mode) {
  int i_mode = alloy_schema_find_arg(alloy_op_schema(m->op), "mode");
  *mode = m->param == 1 ? "bilinear" : i_mode >= 0 ? meta_str(m, i_mode) : "nearest";
  if (!*mode) *mode = "nearest";
  int r = meta_tensor(m, 0)->rank;
  static const struct {
    const char *mode;
    int rank; /* 0: any of 3 to 5 */
  } ok[] = {{"nearest", 0}, {"area", 0}, {"linear", 3}, {"bilinear", 4}, {"bicubic", 4},
            {"trilinear", 5}};
  if (r < 3 || r > 5)
    return meta_error(m, "Input Error: Only 3D, 4D and 5D input Tensors supported (got %dD) for "
                      "the modes: nearest | linear | bilinear | trilinear (got %s)", r, *mode);
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
    if (!strcmp(ok[i].mode, *mode)) {
      if (ok[i].rank && ok[i].rank != r)
        return meta_error(m, "Got %dD input, but %s mode needs %dD input", r, *mode, ok[i].rank);
      return NULL;
    }
  return meta_error(m, "Input Error: Only 3D, 4D and 5D input Tensors supported (got %dD) for "
                    "the modes: nearest | linear | bilinear | trilinear (got %s)", r, *mode);
}

static alloy_error *meta_interpolate(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  const char *mode;
  alloy_error *e = interp_mode(m, &mode);
  if (e) return e;
  int n = x->rank - 2;
  int i_align = alloy_schema_find_arg(alloy_op_schema(m->op), "align_corners");
  int i_aa = alloy_schema_find_arg(alloy_op_schema(m->op), "antialias");
  bool plain = !strcmp(mode, "nearest") || !strcmp(mode, "area");
  if (plain && i_align >= 0 && !meta_is_none(m, i_align))
    return meta_error(m, "align_corners option can only be set with the interpolating modes: "
                      "linear | bilinear | bicubic | trilinear");
  if (i_aa >= 0 && meta_bool(m, i_aa)) return meta_error(m, "Antialias is not yet supported");
  alloy_dim out[5] = {x->shape[0], x->shape[1]};
  const alloy_arg *size = &m->args[1], *scale = &m->args[2];
  if (size->kind == ALLOY_ARG_INT) {
    for (int i = 0; i < n; i++) out[2 + i] = size->u.i;
  } else if (size->kind == ALLOY_ARG_LIST) {
    if ((e = exact_dims(m, 1, n, out + 2))) return e;
  } else if (scale->kind == ALLOY_ARG_NONE) {
    return meta_error(m, "either size or scale_factor should be defined");
  } else {
    int k = scale->kind == ALLOY_ARG_LIST ? scale->u.list.n : n; /* one number: every dim */
    if (k < n) return meta_error(m, "argument 'scale_factor' must have %d items", n);
    for (int i = 0; i < n && !e; i++) {
      const alloy_arg *it = scale->kind == ALLOY_ARG_LIST ? &scale->u.list.items[i] : scale;
      if (it->kind != ALLOY_ARG_FLOAT && it->kind != ALLOY_ARG_INT)
        return meta_error(m, "argument 'scale_factor' must hold literal numbers");
      double f = it->kind == ALLOY_ARG_FLOAT ? it->u.f : (double)it->u.i.value;
      e = scaled_size(m, x->shape[2 + i], f, &out[2 + i]);
    }
    if (e) return e;
  }
  return meta_out_tensor(m, 0, x->dtype, out, x->rank);
}

/* grid_sampler_Nd(input, grid, interpolation_mode, padding_mode,
 * align_corners); param: N */
static alloy_error *meta_grid_sampler(alloy_meta *m) {
  int n = m->param;
  const alloy_value *in = meta_tensor(m, 0), *grid = meta_tensor(m, 1);
  alloy_error *e = want_rank(m, 0, in, n + 2, n + 2);
  if (!e) e = want_rank(m, 1, grid, n + 2, n + 2);
  if (!e) e = want_float(m, 0, in);
  if (!e) e = want_same_dtype(m, 0, in, 1, grid);
  if (e) return e;
  int64_t mode;
  if ((e = meta_int(m, 2, &mode))) return e;
  if (n == 3 && mode == 2)
    return meta_error(m, "bicubic interpolation only supports 4D input");
  if (never_eq(m, in->shape[0], grid->shape[0]) || never_eq(m, grid->shape[n + 1], C(n)))
    return meta_error(m, "expected grid of shape [%s, ..., %d] for input of shape %s, got %s",
                      dim_text(in->shape[0], (char[64]){0}, 64), n,
                      meta_shape_text(in->shape, in->rank, (char[256]){0}, 256),
                      meta_shape_text(grid->shape, grid->rank, (char[256]){0}, 256));
  for (int i = 2; i < n + 2; i++)
    if (surely_zero(in->shape[i]))
      return meta_error(m, "expected input to have non-empty spatial dimensions");
  alloy_dim out[5] = {in->shape[0], in->shape[1]};
  memcpy(out + 2, grid->shape + 1, sizeof *out * (size_t)n);
  return meta_out_tensor(m, 0, in->dtype, out, n + 2);
}

/* grid_sampler and _grid_sampler_2d_cpu_fallback: grid_sampler_2d's or
 * _3d's shape by the input's rank (the fallback: 2-d only). */
static alloy_error *meta_grid_sampler_any(alloy_meta *m) {
  const alloy_value *in = meta_tensor(m, 0);
  alloy_meta at = *m;
  at.param = m->param ? m->param : in->rank == 5 ? 3 : 2;
  alloy_error *e = meta_grid_sampler(&at);
  m->outs = at.outs;
  m->nout = at.nout;
  m->cap_out = at.cap_out;
  return e;
}

/* affine_grid_generator(theta, size, align_corners): size [N, C, H, W]
 * with theta [N, 2, 3] gives [N, H, W, 2]; [N, C, D, H, W] with theta
 * [N, 3, 4] gives [N, D, H, W, 3]. */
static alloy_error *meta_affine_grid(alloy_meta *m) {
  const alloy_value *theta = meta_tensor(m, 0);
  alloy_dim size[ALLOY_MAX_RANK], out[5];
  int n;
  alloy_error *e = meta_dims(m, 1, size, ALLOY_MAX_RANK, &n);
  if (e) return e;
  if (n != 4 && n != 5)
    return meta_error(m, "AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.");
  if ((e = want_float(m, 0, theta))) return e;
  int k = n - 2;
  alloy_dim want[3] = {size[0], C(k), C(k + 1)};
  if ((e = want_shape(m, 0, theta, want, 3))) return e;
  out[0] = size[0];
  memcpy(out + 1, size + 2, sizeof *out * (size_t)k);
  out[k + 1] = C(k);
  return meta_out_tensor(m, 0, theta->dtype, out, k + 2);
}

/* --- distances ----------------------------------------------------------*/

/* _cdist_forward(x1, x2, p, compute_mode): [*batch, r1, r2] */
static alloy_error *meta_cdist(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0), *b = meta_tensor(m, 1);
  alloy_error *e = want_rank(m, 0, a, 2, ALLOY_MAX_RANK);
  if (!e) e = want_rank(m, 1, b, 2, ALLOY_MAX_RANK);
  if (!e && !alloy_dtype_is_float(a->dtype))
    e = meta_error(m, "cdist only supports floating-point dtypes, got %s",
                   alloy_dtype_name(a->dtype));
  if (!e) e = want_same_dtype(m, 0, a, 1, b);
  if (e) return e;
  if (never_eq(m, a->shape[a->rank - 1], b->shape[b->rank - 1]))
    return meta_error(m, "x1 and x2 must have the same number of columns, got %s and %s",
                      dim_text(a->shape[a->rank - 1], (char[64]){0}, 64),
                      dim_text(b->shape[b->rank - 1], (char[64]){0}, 64));
  if (meta_float(m, 2) < 0) return meta_error(m, "cdist only supports non-negative p values");
  alloy_dim out[ALLOY_MAX_RANK];
  int rank;
  if ((e = meta_broadcast(m, a->shape, a->rank - 2, b->shape, b->rank - 2, out, &rank))) return e;
  out[rank] = a->shape[a->rank - 2];
  out[rank + 1] = b->shape[b->rank - 2];
  return meta_out_tensor(m, 0, a->dtype, out, rank + 2);
}

/* _pdist_forward(self, p): the n*(n-1)/2 pairs of rows (0 for n <= 1). */
static alloy_error *meta_pdist(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  alloy_error *e = want_rank(m, 0, x, 2, 2);
  if (!e) e = want_float(m, 0, x);
  if (e) return e;
  if (meta_float(m, 1) < 0) return meta_error(m, "pdist only supports non-negative p values");
  alloy_dim n = x->shape[0];
  alloy_dim pairs = alloy_dim_mul(m->st, n, alloy_dim_sub(m->st, n, C(1)));
  pairs = alloy_dim_floordiv(m->st, pairs, C(2));
  return meta_out_tensor(m, 0, x->dtype, &pairs, 1);
}

/* --- activations and their helpers --------------------------------------*/

/* glu(self, dim): halves dim. */
static alloy_error *meta_glu(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  int64_t dim;
  int d;
  alloy_error *e = meta_int(m, 1, &dim);
  if (!e && x->rank == 0)
    e = meta_error(m, "glu does not support scalars because halving size must be even");
  if (!e) e = meta_wrap_dim(m, 1, dim, x->rank, &d);
  if (!e) e = want_float(m, 0, x);
  if (e) return e;
  alloy_dim L = x->shape[d];
  if (alloy_dim_is_const(L) && L.value % 2)
    return meta_error(m, "halving dimension must be even, but dimension %d is size %lld", d,
                      (long long)L.value);
  alloy_dim out[ALLOY_MAX_RANK];
  memcpy(out, x->shape, sizeof *out * (size_t)x->rank);
  out[d] = alloy_dim_floordiv(m->st, L, C(2));
  return meta_out_tensor(m, 0, x->dtype, out, x->rank);
}

/* _prelu_kernel(self, weight): elementwise over the broadcast shape. */
static alloy_error *meta_prelu(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0), *w = meta_tensor(m, 1);
  alloy_dim out[ALLOY_MAX_RANK];
  int rank;
  alloy_error *e = meta_broadcast(m, x->shape, x->rank, w->shape, w->rank, out, &rank);
  if (e) return e;
  alloy_promo_operand ops[2] = {meta_promo_operand(m, 0), meta_promo_operand(m, 1)};
  alloy_dtype compute, result;
  alloy_elementwise_dtypes(ops, 2, ALLOY_PROMO_DEFAULT, &compute, &result);
  /* The CPU kernel dispatches on floating types only ("prelu_cpu"). */
  if (!alloy_dtype_is_float(result) && !alloy_dtype_is_complex(result))
    return meta_error(m, "\"prelu_cpu\" not implemented for '%s': arguments 'self' and "
                         "'weight' must be floating-point tensors",
                      alloy_dtype_name(result));
  return meta_out_tensor(m, 0, result, out, rank);
}

/* Every output like self: rrelu_with_noise (and its _functional form's new
 * noise), log_sigmoid_forward (whose CPU buffer has the input's shape). */
static alloy_error *meta_like_self(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  alloy_error *e = want_float(m, 0, x);
  for (int k = 0; k < m->nout && !e; k++) e = meta_out_like(m, k, x, x->dtype);
  return e;
}

/* _softmax_backward_data(grad_output, output, dim, input_dtype) */
static alloy_error *meta_softmax_backward(alloy_meta *m) {
  const alloy_value *g = meta_tensor(m, 0), *y = meta_tensor(m, 1);
  int64_t dim;
  int d;
  alloy_error *e = meta_int(m, 2, &dim);
  if (!e) e = meta_wrap_dim(m, 2, dim, g->rank, &d);
  if (!e) e = want_shape(m, 1, y, g->shape, g->rank);
  /* The CPU kernel dispatches on floating types only. */
  if (!e) e = want_float(m, 0, g);
  return e ? e : meta_out_like(m, 0, g, meta_dtype_or(m, 3, g->dtype));
}

/* embedding_dense_backward(grad_output, indices, num_weights, padding_idx,
 * scale_grad_by_freq): [num_weights, embedding_dim] */
static alloy_error *meta_embedding_dense_backward(alloy_meta *m) {
  const alloy_value *g = meta_tensor(m, 0), *idx = meta_tensor(m, 1);
  alloy_error *e = want_rank(m, 0, g, 1, ALLOY_MAX_RANK);
  if (e) return e;
  if (idx->dtype != ALLOY_I64 && idx->dtype != ALLOY_I32)
    return meta_error(m, "argument 'indices': expected int32 or int64, got %s",
                      alloy_dtype_name(idx->dtype));
  alloy_dim out[2] = {meta_dim(m, 2), g->shape[g->rank - 1]};
  if (surely_lt(m, out[0], C(0)))
    return meta_error(m, "argument 'num_weights' must be non-negative");
  return meta_out_tensor(m, 0, g->dtype, out, 2);
}

/* --- registration -------------------------------------------------------*/

const alloy_meta_entry alloy_meta_nn[] = {
    {"aten.convolution.default", meta_convolution, 0},
    {"aten.conv2d.default", meta_conv2d, 0},
    {"aten.convolution_backward.default", meta_convolution_backward, 0},
    {"aten.conv1d.default", meta_conv_named, 1 | CONV_UNBATCHED},
    {"aten.conv3d.default", meta_conv_named, 3 | CONV_UNBATCHED},
    {"aten.conv1d.padding", meta_conv_named, 1 | CONV_UNBATCHED},
    {"aten.conv2d.padding", meta_conv_named, 2 | CONV_UNBATCHED},
    {"aten.conv3d.padding", meta_conv_named, 3 | CONV_UNBATCHED},
    {"aten.conv_transpose1d.default", meta_conv_named, 1 | CONV_UNBATCHED | CONV_TRANSPOSED},
    {"aten.conv_transpose2d.input", meta_conv_named, 2 | CONV_UNBATCHED | CONV_TRANSPOSED},
    {"aten.conv_transpose3d.input", meta_conv_named, 3 | CONV_UNBATCHED | CONV_TRANSPOSED},
    {"aten._convolution.default", meta_conv_named, 0},
    {"aten._convolution.deprecated", meta_conv_named, 0},
    {"aten._convolution_mode.default", meta_conv_named, 0},
    {"aten.mkldnn_convolution.default", meta_conv_named, CONV_MKLDNN},
    {"aten.thnn_conv2d.default", meta_conv_named, 2},
    {"aten._slow_conv2d_forward.default", meta_conv_named, 2},
    {"aten.slow_conv3d.default", meta_conv_named, 3},
    {"aten.slow_conv3d_forward.default", meta_conv_named, 3},
    {"aten.slow_conv_dilated2d.default", meta_conv_named, 2 | CONV_UNBATCHED},
    {"aten.slow_conv_dilated3d.default", meta_conv_named, 3 | CONV_UNBATCHED},
    {"aten.slow_conv_transpose2d.default", meta_conv_named, 2 | CONV_KEEP_BATCH | CONV_TRANSPOSED},
    {"aten.slow_conv_transpose3d.default", meta_conv_named, 3 | CONV_UNBATCHED | CONV_TRANSPOSED},
    {"aten.conv_tbc.default", meta_conv_tbc, 0},


    {"aten.avg_pool1d.default", meta_avg_pool, 1},
    {"aten.avg_pool2d.default", meta_avg_pool, 2},
    {"aten.avg_pool3d.default", meta_avg_pool, 3},
    {"aten.avg_pool2d_backward.default", meta_avg_pool_backward, 2},
    {"aten.max_pool1d.default", meta_max_pool, 1},
    {"aten.max_pool1d_with_indices.default", meta_max_pool, 1 | POOL_INDICES},
    {"aten.max_pool3d.default", meta_max_pool, 3},
    {"aten.max_pool2d.default", meta_max_pool, 2},
    {"aten.max_pool2d_with_indices.default", meta_max_pool, 2 | POOL_INDICES},
    {"aten.max_pool3d_with_indices.default", meta_max_pool, 3 | POOL_INDICES},
    {"aten.max_pool2d_with_indices_backward.default", meta_max_pool_backward, 2},
    {"aten.adaptive_avg_pool1d.default", meta_adaptive_pool, 1},
    {"aten.adaptive_avg_pool2d.default", meta_adaptive_pool, 2},
    {"aten._adaptive_avg_pool2d.default", meta_adaptive_pool, 2},
    {"aten._adaptive_avg_pool3d.default", meta_adaptive_pool, 3},
    {"aten.adaptive_avg_pool3d.default", meta_adaptive_pool, 3},
    {"aten.adaptive_max_pool1d.default", meta_adaptive_pool, 1 | ADAPTIVE_MAX},
    {"aten.adaptive_max_pool2d.default", meta_adaptive_pool, 2 | ADAPTIVE_MAX},
    {"aten.adaptive_max_pool3d.default", meta_adaptive_pool, 3 | ADAPTIVE_MAX},
    {"aten._adaptive_avg_pool2d_backward.default", meta_adaptive_pool_backward, 0},
    {"aten.fractional_max_pool2d.default", meta_fractional_max_pool, 2},
    {"aten.fractional_max_pool3d.default", meta_fractional_max_pool, 3},
    {"aten.max_unpool2d.default", meta_max_unpool, 2},
    {"aten.max_unpool3d.default", meta_max_unpool, 3},

    {"aten.native_layer_norm.default", meta_layer_norm, 0},
    {"aten.layer_norm.default", meta_layer_norm, 0},
    {"aten.native_layer_norm_backward.default", meta_layer_norm_backward, 0},
    {"aten.native_group_norm.default", meta_group_norm, 0},
    {"aten.native_group_norm_backward.default", meta_group_norm_backward, 0},
    {"aten.native_batch_norm.default", meta_batch_norm, 0},
    {"aten._native_batch_norm_legit.default", meta_batch_norm, 0},
    {"aten._native_batch_norm_legit_no_training.default", meta_batch_norm, 1},
    {"aten._native_batch_norm_legit.no_stats", meta_batch_norm, 2},
    {"aten._batch_norm_with_update.default", meta_batch_norm, 3},
    {"aten._batch_norm_no_update.default", meta_batch_norm, 4},
    {"aten._batch_norm_with_update_functional.default", meta_batch_norm, 5},
    {"aten._native_batch_norm_legit_functional.default", meta_batch_norm, 6},
    {"aten.cudnn_batch_norm.default", meta_batch_norm, 7},

    {"aten.mse_loss.default", meta_pointwise_loss, 0},
    {"aten.huber_loss.default", meta_pointwise_loss, 0},
    {"aten.smooth_l1_loss.default", meta_pointwise_loss, 0},
    {"aten.soft_margin_loss.default", meta_pointwise_loss, 0},
    {"aten.binary_cross_entropy.default", meta_bce, 3},
    {"aten.binary_cross_entropy_with_logits.default", meta_bce, 4},
    {"aten.multi_margin_loss.default", meta_multi_margin_loss, 0},
    {"aten.multilabel_margin_loss_forward.default", meta_multilabel_margin_loss, 0},
    {"aten.multilabel_margin_loss.default", meta_multilabel_margin_loss, 1},
    {"aten.cdist.default", meta_cdist, 0},
    {"aten.nll_loss_forward.default", meta_nll_loss, 1},
    {"aten.nll_loss2d_forward.default", meta_nll_loss, 2},

    {"aten.upsample_nearest1d.default", meta_upsample, 1 | UP_U8},
    {"aten._upsample_nearest_exact1d.default", meta_upsample, 1 | UP_U8},
    {"aten.upsample_nearest2d.default", meta_upsample, 2 | UP_U8},
    {"aten.upsample_nearest2d.vec", meta_upsample, 2 | UP_VEC | 2 * UP_SCALES_AT | UP_U8},
    {"aten.upsample_linear1d.default", meta_upsample, 1},
    {"aten.upsample_bilinear2d.default", meta_upsample, 2 | UP_U8},
    {"aten.upsample_bilinear2d.vec", meta_upsample, 2 | UP_VEC | 3 * UP_SCALES_AT | UP_U8},
    {"aten._upsample_bilinear2d_aa.default", meta_upsample, 2 | UP_U8 | UP_NO_HALF},
    {"aten.upsample_bicubic2d.default", meta_upsample, 2 | UP_U8},
    {"aten.upsample_trilinear3d.default", meta_upsample, 3},
    {"aten.upsample_nearest1d.vec", meta_upsample, 1 | UP_VEC | 2 * UP_SCALES_AT | UP_U8},
    {"aten.upsample_nearest3d.default", meta_upsample, 3 | UP_U8},
    {"aten.upsample_nearest3d.vec", meta_upsample, 3 | UP_VEC | 2 * UP_SCALES_AT | UP_U8},
    {"aten._upsample_nearest_exact1d.vec", meta_upsample, 1 | UP_VEC | 2 * UP_SCALES_AT | UP_U8},
    {"aten._upsample_nearest_exact2d.default", meta_upsample, 2 | UP_U8},
    {"aten._upsample_nearest_exact2d.vec", meta_upsample, 2 | UP_VEC | 2 * UP_SCALES_AT | UP_U8},
    {"aten._upsample_nearest_exact3d.default", meta_upsample, 3 | UP_U8},
    {"aten._upsample_nearest_exact3d.vec", meta_upsample, 3 | UP_VEC | 2 * UP_SCALES_AT | UP_U8},
    {"aten.upsample_linear1d.vec", meta_upsample, 1 | UP_VEC | 3 * UP_SCALES_AT},
    {"aten.upsample_bicubic2d.vec", meta_upsample, 2 | UP_VEC | 3 * UP_SCALES_AT | UP_U8},
    {"aten.upsample_trilinear3d.vec", meta_upsample, 3 | UP_VEC | 3 * UP_SCALES_AT},
    {"aten._upsample_bilinear2d_aa.vec", meta_upsample,
     2 | UP_VEC | 3 * UP_SCALES_AT | UP_U8 | UP_NO_HALF},
    {"aten._upsample_bicubic2d_aa.default", meta_upsample, 2 | UP_U8 | UP_NO_HALF},
    {"aten._upsample_bicubic2d_aa.vec", meta_upsample,
     2 | UP_VEC | 3 * UP_SCALES_AT | UP_U8 | UP_NO_HALF},
    {"aten.__interpolate.default", meta_interpolate, 0},
    {"aten.__interpolate.scale_list", meta_interpolate, 0},
    {"aten.__interpolate.size_list", meta_interpolate, 0},
    {"aten.__interpolate.size_list_scale_list", meta_interpolate, 0},
    {"aten.__upsample.default", meta_interpolate, 0},
    {"aten.__upsample.size_list", meta_interpolate, 0},
    {"aten.__upsample_nearest.default", meta_interpolate, 0},
    {"aten.__upsample_nearest.size_list", meta_interpolate, 0},
    {"aten.__upsample_bilinear.default", meta_interpolate, 1},
    {"aten.__upsample_bilinear.scale_list", meta_interpolate, 1},
    {"aten.__upsample_bilinear.size_list", meta_interpolate, 1},
    {"aten.__upsample_bilinear.size_list_scale_list", meta_interpolate, 1},
    {"aten.grid_sampler_2d.default", meta_grid_sampler, 2},
    {"aten.grid_sampler_3d.default", meta_grid_sampler, 3},
    {"aten.grid_sampler.default", meta_grid_sampler_any, 0},
    {"aten._grid_sampler_2d_cpu_fallback.default", meta_grid_sampler_any, 2},
    {"aten.affine_grid_generator.default", meta_affine_grid, 0},

    {"aten._cdist_forward.default", meta_cdist, 0},
    {"aten._pdist_forward.default", meta_pdist, 0},
    {"aten.glu.default", meta_glu, 0},
    {"aten._prelu_kernel.default", meta_prelu, 0},
    {"aten.rrelu_with_noise.default", meta_like_self, 0},
    {"aten.rrelu_with_noise_functional.default", meta_like_self, 0},
    {"aten.log_sigmoid_forward.default", meta_like_self, 0},
    {"aten._softmax_backward_data.default", meta_softmax_backward, 0},
    {"aten.embedding_dense_backward.default", meta_embedding_dense_backward, 0},
    {NULL, NULL, 0},
};
