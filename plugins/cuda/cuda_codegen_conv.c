/*
 * plugins/cuda/cuda_codegen_conv.c: the plan's steps for a convolutional
 * network: convolutions (one cuDNN step each, cuda_dnn.c), max and average
 * pooling, adaptive average pooling and inference batch norm (kernels of
 * their own, written after PyTorch's CUDA kernels so that indices, NaNs,
 * padding and divisors come out as they do there). Like the rest of the
 * code generator it needs no GPU: tests/test_cuda_conv.c checks the plans.
 *
 * With a portable plan (option vendor_libs=0, or the HIP build) a
 * convolution is instead one implicit-GEMM kernel (cuda_codegen_gemm.c)
 * reading x and writing y through their strides, the bias in its epilogue.
 *
 * A convolution reads x, w and the bias where they are when cuDNN can
 * (packed, 16-byte aligned), else from a dense copy, and writes y in place
 * when y is packed, else into a temporary copied out after. A bias goes
 * into cuDNN's graph when an engine fuses it; for when none does, the plan
 * carries a kernel adding it (y += bias along dim 1, in float for the
 * 16-bit types, as PyTorch's output.add_(bias) after cudnn_convolution),
 * which the compile disables once cuDNN has fused it.
 *
 * The pooling kernels take a thread per output element over [..., C, OH,
 * OW] (a batch dim or not), with every size, stride and window a constant
 * of the code. The claims' own rules (transposed convolutions, dtypes,
 * argument shapes) are the op table's check functions, here too.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/cuda/cuda_codegen.h"

/* ---- arguments ----------------------------------------------------------------*/

/* The tensor value of argument `name`, or NULL when it is None or absent
 * (a node's arguments are its schema's, each named). */
static const alloy_value *tensor_arg(const alloy_host_api *h, const alloy_node *n, const char *name) {
  const alloy_arg *a = cg_arg_named(h, n, name);
  if (!a || h->arg_type(a) != ALLOY_ARG_TYPE_VALUE) return NULL;
  const alloy_value *v = h->arg_value(a);
  return v && h->value_kind(v) == 0 ? v : NULL;
}

/* The int list argument `name` as `want` ints: absent or [] gives dflt
 * each (and *given false), one int (or a list of one) is repeated. False
 * when it is none of these. */
static bool int_list(const alloy_host_api *h, const alloy_node *n, const char *name, int want, int64_t dflt,
                     int64_t *out, bool *given) {
  const alloy_arg *a = cg_arg_named(h, n, name);
  int size = !a || h->arg_type(a) == ALLOY_ARG_TYPE_NONE ? 0
             : h->arg_type(a) == ALLOY_ARG_TYPE_LIST     ? h->arg_list_size(a)
                                                         : 1;
  if (given) *given = size > 0;
  for (int k = 0; k < want; k++)
    out[k] = dflt;
  if (size == 0) return true;
  if (size != 1 && size != want) return false;
  for (int k = 0; k < want; k++) {
    const alloy_arg *item =
        h->arg_type(a) == ALLOY_ARG_TYPE_LIST ? h->arg_list_item(a, size == 1 ? 0 : k) : a;
    if (!h->arg_int(item, &out[k])) return false;
  }
  return true;
}

static bool bool_arg(const alloy_host_api *h, const alloy_node *n, const char *name, bool dflt) {
  const alloy_arg *a = cg_arg_named(h, n, name);
  int v;
  return a && h->arg_bool(a, &v) ? v != 0 : dflt;
}

static double float_arg(const alloy_host_api *h, const alloy_node *n, const char *name, double dflt) {
  const alloy_arg *a = cg_arg_named(h, n, name);
  double v;
  return a && h->arg_float(a, &v) ? v : dflt;
}

/* Value v's sizes, when all are known; its rank, or -1. */
static int sizes_of(const alloy_host_api *h, const alloy_value *v, int64_t *sizes) {
  int r = h->value_rank(v);
  if (r > CUDA_MAX_RANK) return -1;
  for (int d = 0; d < r; d++)
    if (!h->value_size(v, d, &sizes[d])) return -1;
  return r;
}

static bool conv_float(alloy_dtype t) { return t == ALLOY_F32 || t == ALLOY_F16 || t == ALLOY_BF16; }

/* ---- claims --------------------------------------------------------------------*/

/* convolution(input, weight, bias?, stride, padding, dilation, transposed,
 * output_padding, groups): what cuDNN's forward convolution computes. */
const char *cg_check_conv(const alloy_host_api *h, const alloy_node *n) {
  const alloy_value *x = tensor_arg(h, n, "input"), *w = tensor_arg(h, n, "weight"),
                    *bias = tensor_arg(h, n, "bias");
  if (!x || !w || h->node_num_outputs(n) < 1) return "a convolution without its input or weight";
  if (bool_arg(h, n, "transposed", false))
    return "transposed convolutions are not claimed (cuDNN's backward data)";
  const alloy_value *y = h->node_output(n, 0);
  int r = h->value_rank(x);
  if (r < 3 || r > 5 || h->value_rank(w) != r || h->value_rank(y) != r)
    return "convolutions of 1 to 3 spatial dims with a batch dim only";
  alloy_dtype t = h->value_dtype(x);
  if (!conv_float(t)) return "cuDNN convolutions take float32, float16 or bfloat16";
  if (h->value_dtype(w) != t || h->value_dtype(y) != t || (bias && h->value_dtype(bias) != t))
    return "a convolution of mixed dtypes";
  if (bias && h->value_rank(bias) != 1) return "a convolution bias that is not a vector";
  /* stride and dilation at least 1, padding at least 0, one per spatial dim */
  static const struct {
    const char *name;
    int64_t dflt, least;
  } lists[] = {{"stride", 1, 1}, {"padding", 0, 0}, {"dilation", 1, 1}};
  for (int i = 0; i < 3; i++) {
    int64_t v[3];
    bool ok = int_list(h, n, lists[i].name, r - 2, lists[i].dflt, v, NULL);
    for (int d = 0; ok && d < r - 2; d++)
      ok = v[d] >= lists[i].least;
    if (!ok) return "a convolution stride, padding or dilation cuDNN does not take";
  }
  int64_t groups = cg_int_arg(h, n, "groups", 1), xs[CUDA_MAX_RANK], ws[CUDA_MAX_RANK], ys[CUDA_MAX_RANK];
  if (groups < 1) return "a convolution of fewer than one group";
  if (sizes_of(h, x, xs) == r && sizes_of(h, w, ws) == r) {
    if (xs[1] != ws[1] * groups) return "a convolution whose channels do not match its weight and groups";
    for (int d = 0; d < r; d++)
      if (xs[d] == 0 || ws[d] == 0) return "an empty convolution (cuDNN takes none)";
  }
  if (sizes_of(h, y, ys) == r)
    for (int d = 0; d < r; d++)
      if (ys[d] == 0) return "an empty convolution (cuDNN takes none)";
  return NULL;
}

/* max_pool2d_with_indices, avg_pool2d, _adaptive_avg_pool2d over [C, H, W]
 * or [N, C, H, W] of a float dtype. */
const char *cg_check_pool(const alloy_host_api *h, const alloy_node *n) {
  const alloy_value *x = tensor_arg(h, n, "self");
  if (!x || h->node_num_outputs(n) < 1) return "a pooling without its input";
  int r = h->value_rank(x);
  if (r != 3 && r != 4) return "2-d pooling of [C, H, W] or [N, C, H, W] only";
  alloy_dtype t = h->value_dtype(x);
  if (!alloy_dtype_is_float(t) || h->value_dtype(h->node_output(n, 0)) != t)
    return "pooling of float dtypes only";
  if (strstr(h->node_op_name(n), "adaptive")) {
    int64_t o[2];
    if (!int_list(h, n, "output_size", 2, 0, o, NULL) || o[0] < 1 || o[1] < 1)
      return "an adaptive pooling of no output";
    return NULL;
  }
  int64_t k[2], s[2], p[2], d[2];
  bool strided = false;
  if (!int_list(h, n, "kernel_size", 2, 0, k, NULL) || k[0] < 1 || k[1] < 1)
    return "a pooling window of no size";
  if (!int_list(h, n, "stride", 2, 1, s, &strided) || s[0] < 1 || s[1] < 1) return "a pooling stride below 1";
  if (!int_list(h, n, "padding", 2, 0, p, NULL) || p[0] < 0 || p[1] < 0) return "a negative pooling padding";
  if (!int_list(h, n, "dilation", 2, 1, d, NULL) || d[0] < 1 || d[1] < 1) return "a pooling dilation below 1";
  const alloy_arg *div = cg_arg_named(h, n, "divisor_override");
  int64_t dv;
  if (div && h->arg_type(div) != ALLOY_ARG_TYPE_NONE && (!h->arg_int(div, &dv) || dv == 0))
    return "a divisor_override of 0";
  if (h->node_num_outputs(n) > 1 && h->value_dtype(h->node_output(n, 1)) != ALLOY_I64)
    return "max pooling indices other than int64";
  return NULL;
}

/* _native_batch_norm_legit_no_training(input, weight?, bias?, running_mean,
 * running_var, momentum, eps): float input of at least 2 dims. */
const char *cg_check_batch_norm(const alloy_host_api *h, const alloy_node *n) {
  const alloy_value *x = tensor_arg(h, n, "input"), *m = tensor_arg(h, n, "running_mean"),
                    *v = tensor_arg(h, n, "running_var");
  if (!x || !m || !v) return "an inference batch norm without its running statistics";
  if (h->value_rank(x) < 2) return "a batch norm of fewer than 2 dims";
  const char *names[] = {"weight", "bias", "running_mean", "running_var"};
  for (int i = 0; i < 4; i++) {
    const alloy_value *p = tensor_arg(h, n, names[i]);
    if (p && (h->value_rank(p) != 1 || !alloy_dtype_is_float(h->value_dtype(p))))
      return "batch norm parameters that are not float vectors";
  }
  return NULL;
}

double cuda_conv_flops(const alloy_host_api *h, const alloy_node *n) {
  const alloy_value *w = tensor_arg(h, n, "weight");
  if (!w || h->node_num_outputs(n) < 1) return 0;
  int64_t ws[CUDA_MAX_RANK], ys[CUDA_MAX_RANK];
  int rw = sizes_of(h, w, ws), ry = sizes_of(h, h->node_output(n, 0), ys);
  if (rw < 3 || ry < 0) return 0;
  double macs = (double)cg_numel_of(ys, ry);
  for (int d = 1; d < rw; d++)
    macs *= (double)ws[d]; /* C_in / groups times the window */
  return 2.0 * macs;
}

/* ---- tensors --------------------------------------------------------------------*/


/* Whether t is packed row-major or, 4-d, channels last (a dim of size 1
 * may have any stride) and 16-byte aligned at its offset, as cuDNN's
 * plans assume. */
static bool cudnn_reads(const cuda_tensor *t) {
  int64_t s = 1;
  bool packed = true;
  for (int k = t->rank - 1; k >= 0; k--) {
    if (t->sizes[k] != 1 && t->strides[k] != s) packed = false;
    s *= t->sizes[k];
  }
  return (packed || cg_is_channels_last(t)) && (uint64_t)t->offset * alloy_dtype_size(t->dtype) % 16 == 0;
}

/* A packed tensor of t's sizes and dtype in a new temporary. */
static cuda_tensor temp_like(builder *b, const cuda_tensor *t) {
  cuda_tensor d = *t;
  d.base =
      cg_add_base(b, BASE_TEMP, -1, (uint64_t)cg_numel_of(t->sizes, t->rank) * alloy_dtype_size(t->dtype));
  d.offset = 0;
  int64_t s = 1;
  for (int k = t->rank - 1; k >= 0; k--)
    d.strides[k] = s, s *= t->sizes[k];
  return d;
}

/* A packed copy of t in a new temporary (a copy kernel first). */
static cuda_tensor packed_copy(builder *b, const cuda_tensor *t) {
  cuda_tensor d = temp_like(b, t);
  if (d.base >= 0) cg_emit_copy(b, t, &d);
  return d;
}

/* t as cuDNN reads it: itself, or a packed copy. */
static cuda_tensor readable(builder *b, const cuda_tensor *t) {
  return cudnn_reads(t) ? *t : packed_copy(b, t);
}

/* t's sizes and strides (t is as cudnn_reads says) into cuDNN's rank: a
 * 1-d convolution's tensors get a height of 1 before their last dim. */
static void conv_geometry(const cuda_tensor *t, int rank, int64_t *sizes, int64_t *strides) {
  int k = 0;
  for (int d = 0; d < t->rank; d++) {
    if (t->rank == 3 && d == 2) sizes[k++] = 1;
    sizes[k++] = t->sizes[d];
  }
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; d--)
    strides[d] = s, s *= sizes[d];
  if (cg_is_channels_last(t))
    for (int d = 0; d < 4; d++) strides[d] = t->strides[d];
}

/* A channels-last copy of 4-d t in a new temporary (a weight, for a
 * convolution whose x and y are channels last: cuDNN's engines then read
 * all three in one layout). */
static cuda_tensor temp_channels_last(builder *b, const cuda_tensor *t) {
  cuda_tensor d = temp_like(b, t);
  cg_strides_channels_last(&d);
  if (d.base >= 0) cg_emit_copy(b, t, &d);
  return d;
}

/* Whether t's dims after the first are packed (a weight whose every output
 * channel is one run of memory, as the portable kernel reads it). */
static bool inner_packed(const cuda_tensor *t) {
  int64_t s = 1;
  for (int k = t->rank - 1; k >= 1; k--) {
    if (t->sizes[k] != 1 && t->strides[k] != s) return false;
    s *= t->sizes[k];
  }
  return true;
}

/* y += bias along dim 1 (the bias a [C] vector), in the compute type and
 * rounded to y's dtype once: the step cuDNN may make unneeded. */
static void emit_bias_add(builder *b, const cuda_tensor *y, const cuda_tensor *bias) {
  cuda_tensor bv = *y;
  bv.base = bias->base, bv.dtype = bias->dtype, bv.offset = bias->offset;
  for (int d = 0; d < y->rank; d++)
    bv.sizes[d] = d == 1 ? y->sizes[1] : 1, bv.strides[d] = d == 1 ? bias->strides[0] : 0;
  kernel k;
  cg_kernel_begin(&k, y->sizes, y->rank);
  snprintf(k.what, sizeof k.what, "conv bias");
  k.nwhat = 1;
  int vy = cg_kernel_load(b, &k, y, -1), vb = cg_kernel_load(b, &k, &bv, -1), v = k.nvars++;
  cg_put(&k.body, "    %s v%d = v%d + v%d;\n", cg_reg_type(y->dtype), v, vy, vb);
  cg_kernel_store(&k, y, v);
  cg_kernel_finish(b, &k);
}

/* ---- convolution ------------------------------------------------------------------*/

void cg_emit_conv(builder *b, const alloy_node *n, const cuda_op *op) {
  (void)op;
  const alloy_host_api *h = b->host;
  const char *why = cg_check_conv(h, n);
  if (why) return (void)cg_fail(b, n, "%s", why);
  const alloy_value *xv = tensor_arg(h, n, "input"), *wv = tensor_arg(h, n, "weight"),
                    *bv = tensor_arg(h, n, "bias");
  cuda_tensor xt, wt, bt;
  if (!cg_in_memory(b, n, xv, &xt) || !cg_in_memory(b, n, wv, &wt) || (bv && !cg_in_memory(b, n, bv, &bt))) return;
  const cuda_tensor *xp = &xt, *wp = &wt, *bp = bv ? &bt : NULL;
  int to = cg_materialize(b, h->node_output(n, 0));
  if (to < 0) return;
  const cuda_tensor y = b->tensors[to];
  const int nsp = y.rank - 2, rank = y.rank == 3 ? 4 : y.rank;
  cuda_launch l = {.kind = LAUNCH_DNN, .dnn_bias_step = -1};
  snprintf(l.what, sizeof l.what, "%s", b->what);
  for (int k = 0; k < DNN_OPERANDS; k++)
    l.dbase[k] = -1;
  cuda_conv_desc *c = &l.conv;
  c->dtype = y.dtype;
  c->rank = rank;
  int64_t st[3], pad[3], dil[3];
  int_list(h, n, "stride", nsp, 1, st, NULL);
  int_list(h, n, "padding", nsp, 0, pad, NULL);
  int_list(h, n, "dilation", nsp, 1, dil, NULL);
  for (int d = 0, k = 0; d < rank - 2; d++) { /* a 1-d convolution: a height of 1, stride 1, no padding */
    bool lifted = nsp == 1 && d == 0;
    c->stride[d] = lifted ? 1 : st[k], c->padding[d] = lifted ? 0 : pad[k],
    c->dilation[d] = lifted ? 1 : dil[k];
    if (!lifted) k++;
  }
  if (b->portable_conv) { /* Alloy's own kernel, reading x and writing y where they are */
    cuda_tensor wk = inner_packed(wp) ? *wp : packed_copy(b, wp);
    if (b->err || wk.base < 0) return (void)cg_fail(b, n, "out of memory");
    cg_conv_kernel(b, n, xp, &wk, bp, &y, st, pad, dil, cg_int_arg(h, n, "groups", 1), l.what);
    return;
  }
  cuda_tensor x = readable(b, xp), w = readable(b, wp), bias = bp ? readable(b, bp) : x;
  /* an N, C, H, W input (the model's images) of a convolution whose
   * result is channels last is copied channels last first: cuDNN would
   * transpose it itself, slower (resnet50's 64 images: 140 us on an H200,
   * where a copy kernel moves the 38 MB in some 20) */
  if (cg_is_channels_last(&y) && !cg_is_channels_last(&x) && x.rank == 4 && x.base >= 0) x = temp_channels_last(b, &x);
  if (cg_is_channels_last(&x) && cg_is_channels_last(&y) && !cg_is_channels_last(&w) && w.base >= 0) w = temp_channels_last(b, &w);
  /* y is written in place when cuDNN can, else into a packed temporary */
  cuda_tensor yd = cudnn_reads(&y) ? y : temp_like(b, &y);
  if (b->err || x.base < 0 || w.base < 0 || yd.base < 0 || (bp && bias.base < 0))
    return (void)cg_fail(b, n, "out of memory");
  conv_geometry(&x, rank, c->x_sizes, c->x_strides);
  conv_geometry(&w, rank, c->w_sizes, c->w_strides);
  conv_geometry(&yd, rank, c->y_sizes, c->y_strides);
  l.dbase[DNN_X] = x.base, l.doff[DNN_X] = x.offset;
  l.dbase[DNN_W] = w.base, l.doff[DNN_W] = w.offset;
  l.dbase[DNN_Y] = yd.base, l.doff[DNN_Y] = yd.offset;
  if (bp) {
    c->bias = true;
    l.dbase[DNN_BIAS] = bias.base, l.doff[DNN_BIAS] = bias.offset;
  }
  cuda_launch *slot = cg_add_launch(b);
  if (!slot) return;
  snprintf(l.what, sizeof l.what, "%s", slot->what);
  *slot = l;
  int at = b->plan->nlaunches - 1;
  if (bp) {
    emit_bias_add(b, &yd, &bias);
    if (!b->err) b->plan->launches[at].dnn_bias_step = b->plan->nlaunches - 1;
  }
  if (yd.base != y.base) cg_emit_copy(b, &yd, &y);
}

/* ---- pooling ------------------------------------------------------------------------*/

/* The text of a pooling kernel's start: the output element's indices from
 * i (ow, oh, then the leading dims l0, l1), and the element offset of its
 * plane in each of ts (named xb, yb, ib, ... after names). */
static void plane_indices(kernel *k, const cuda_tensor *y, const cuda_tensor *const *ts,
                          const char *const *names, int nts) {
  const int r = y->rank, lead = r - 2;
  cg_put(&k->body, "    IDX_T q = i;\n");
  /* a channels-last y: the channel varies fastest, so that neighbouring
   * threads read and write neighbouring elements */
  const bool cl = cg_is_channels_last(y) && y->sizes[1] > 1;
  if (cl) cg_put(&k->body, "    const IDX_T l1 = q %% %" PRId64 "; q /= %" PRId64 ";\n", y->sizes[1], y->sizes[1]);
  cg_put(&k->body, "    const IDX_T ow = q %% %" PRId64 "; q /= %" PRId64 ";\n", y->sizes[r - 1],
         y->sizes[r - 1]);
  cg_put(&k->body, "    const IDX_T oh = q %% %" PRId64 "; q /= %" PRId64 ";\n", y->sizes[r - 2],
         y->sizes[r - 2]);
  for (int d = lead - 1; d >= 0; d--) {
    if (cl && d == 1) continue;
    if (d > 0)
      cg_put(&k->body, "    const IDX_T l%d = q %% %" PRId64 "; q /= %" PRId64 ";\n", d, y->sizes[d],
             y->sizes[d]);
    else
      cg_put(&k->body, "    const IDX_T l0 = q;\n");
  }
  for (int t = 0; t < nts; t++) {
    cg_put(&k->body, "    const IDX_T %s = %" PRId64, names[t], ts[t]->offset);
    for (int d = 0; d < lead; d++)
      if (ts[t]->sizes[d] != 1) cg_put(&k->body, " + l%d * %" PRId64, d, ts[t]->strides[d]);
    cg_put(&k->body, ";\n");
  }
}

/* The offset text of output tensor t at (oh, ow) of its plane pb. */
static void out_at(const cuda_tensor *t, const char *pb, char *buf, size_t cap) {
  snprintf(buf, cap, "%s + oh * %" PRId64 " + ow * %" PRId64, pb, t->strides[t->rank - 2],
           t->strides[t->rank - 1]);
}

/* The pooling window of n: kernel, stride (default: the kernel), padding,
 * dilation, each [h, w]. */
static void window(const alloy_host_api *h, const alloy_node *n, int64_t *k, int64_t *s, int64_t *p,
                   int64_t *d) {
  bool strided = false;
  int_list(h, n, "kernel_size", 2, 1, k, NULL);
  int_list(h, n, "stride", 2, 1, s, &strided);
  if (!strided) s[0] = k[0], s[1] = k[1];
  int_list(h, n, "padding", 2, 0, p, NULL);
  int_list(h, n, "dilation", 2, 1, d, NULL);
}

/* The input, its first output and the kernel over that output, begun; the
 * input's plane height and width. False after failing. */
static bool pool_begin(builder *b, const alloy_node *n, const alloy_value *xv, kernel *k, cuda_tensor *x,
                       cuda_tensor *y, const char *what) {
  const alloy_host_api *h = b->host;
  const char *why = cg_check_pool(h, n);
  if (why) return cg_fail(b, n, "%s", why), false;
  if (!xv || !cg_in_memory(b, n, xv, x)) return false;
  int to = cg_materialize(b, h->node_output(n, 0));
  if (to < 0) return false;
  *y = b->tensors[to];
  cg_kernel_begin(k, y->sizes, y->rank);
  snprintf(k->what, sizeof k->what, "%s", what);
  k->nwhat = 1;
  /* int index arithmetic where everything it reaches fits (IDX_T) */
  k->narrow = true;
  cg_kernel_reach(k, x);
  cg_kernel_reach(k, y);
  return true;
}

/* Opens the loops over a window's taps (k[0] x k[1]), unrolled up to 64
 * taps (constant counts: a thread has every load in flight at once): rows
 * h = h0 + kh * d[0] and columns w = w0 + kw * d[1], h0 and w0 C
 * expressions; taps outside the H x W plane are skipped. The caller
 * writes the tap's body and closes both loops. */
static void window_taps(text *s, const char *h0, const char *w0, const int64_t *k, const int64_t *d, int64_t H,
                        int64_t W) {
  const char *unroll = k[0] * k[1] <= 64 ? "#pragma unroll" : "#pragma unroll 1";
  cg_put(s,
         "    %s\n    for (int kh = 0; kh < %" PRId64 "; kh++) {\n      const IDX_T h = %s + kh * %" PRId64 ";\n"
         "      if (h < 0 || h >= %" PRId64 ") continue;\n",
         unroll, k[0], h0, d[0], H);
  cg_put(s,
         "      %s\n      for (int kw = 0; kw < %" PRId64 "; kw++) {\n        const IDX_T w = %s + kw * %" PRId64 ";\n"
         "        if (w < 0 || w >= %" PRId64 ") continue;\n",
         unroll, k[1], w0, d[1], W);
}

/* max_pool2d_with_indices(self, kernel_size, stride, padding, dilation,
 * ceil_mode) -> (values, indices), as PyTorch's max_pool_forward_nchw: the
 * window's first in-bounds row and column start the search (with the
 * index of that element); a value replaces the maximum when it is greater
 * or NaN, so a NaN wins and the last NaN's index is kept; an empty window
 * gives -inf. Indices count within the input's H x W plane. */
void cg_emit_max_pool(builder *b, const alloy_node *n, const cuda_op *op) {
  (void)op;
  const alloy_host_api *h = b->host;
  kernel k;
  cuda_tensor x, y;
  /* max(relu(x)) over a window is relu(max(x)): a relu only this pool
   * reads is applied here, to the maximum, and x read from before it */
  const alloy_value *xv = tensor_arg(h, n, "self"), *rx[1];
  const alloy_node *pre = xv && cg_val(b, xv)->into_pool ? h->value_producer(xv, NULL) : NULL;
  const bool relu = pre && cg_tensor_operands(h, pre, rx, 1) == 1;
  if (!pool_begin(b, n, relu ? rx[0] : xv, &k, &x, &y, relu ? "relu+max_pool2d" : "max_pool2d")) return;
  /* the indices only where something reads them: an inference graph's
   * max_pool2d leaves them unread, and at 8 bytes each they would be most
   * of the kernel's traffic */
  const alloy_value *iv = h->node_num_outputs(n) > 1 ? h->node_output(n, 1) : NULL;
  const bool indices = iv && (h->value_num_users(iv) > 0 || cg_val(b, iv)->output >= 0);
  int ti = indices ? cg_materialize(b, iv) : -1;
  if (indices && ti < 0) return;
  const cuda_tensor it = ti >= 0 ? b->tensors[ti] : y; /* a copy: see cg_in_memory */
  if (ti >= 0) cg_kernel_reach(&k, &it);
  int64_t ks[2], s[2], p[2], d[2];
  window(h, n, ks, s, p, d);
  const int r = x.rank;
  const int64_t H = x.sizes[r - 2], W = x.sizes[r - 1];
  const char *acc = cg_reg_type(x.dtype);
  const cuda_tensor *ts[3] = {&x, &y, ti >= 0 ? &it : NULL};
  const char *names[3] = {"xb", "yb", "ib"};
  plane_indices(&k, &y, ts, names, ti >= 0 ? 3 : 2);
  int px = cg_kernel_param(&k, x.base), py = cg_kernel_param(&k, y.base);
  /* the window's taps unrolled (a constant count), out-of-bounds ones
   * skipped, so that a thread has all its loads in flight at once; the
   * first in-bounds row and column start the index */
  cg_put(&k.body, "    const IDX_T h0 = oh * %" PRId64 " - %" PRId64 ", w0 = ow * %" PRId64 " - %" PRId64 ";\n", s[0],
         p[0], s[1], p[1]);
  if (ti >= 0) {
    cg_put(&k.body, "    IDX_T hs = h0, ws = w0;\n    while (hs < 0) hs += %" PRId64 ";\n    while (ws < 0) ws += %" PRId64
                    ";\n", d[0], d[1]);
    cg_put(&k.body, "    i64 mi = hs * %" PRId64 " + ws;\n", W);
  }
  cg_put(&k.body, "    %s m = -(%s)(1.0 / 0.0);\n", acc, acc);
  if (relu) cg_put(&k.body, "    int taps = 0;\n");
  window_taps(&k.body, "h0", "w0", ks, d, H, W);
  cg_put(&k.body, "        const %s v = (%s)ld_%s(p%d, xb + h * %" PRId64 " + w * %" PRId64 ");\n", acc, acc,
         cg_dtype_tag(x.dtype), px, x.strides[r - 2], x.strides[r - 1]);
  if (ti >= 0) cg_put(&k.body, "        if (v > m || op_isnan(v)) { mi = h * %" PRId64 " + w; m = v; }\n", W);
  else cg_put(&k.body, "        if (v > m || op_isnan(v)) m = v;\n");
  cg_put(&k.body, "%s      }\n    }\n", relu ? "        taps++;\n" : "");
  if (relu) /* an empty window stays -inf, as relu's values pooled would */
    cg_put(&k.body, "    if (taps) m = op_relu(m);\n");
  char off[160];
  out_at(&y, "yb", off, sizeof off);
  cg_put(&k.body, "    st_%s(p%d, %s, m);\n", cg_dtype_tag(y.dtype), py, off);
  if (ti >= 0) {
    int pi = cg_kernel_param(&k, it.base);
    out_at(&it, "ib", off, sizeof off);
    cg_put(&k.body, "    st_i64(p%d, %s, mi);\n", pi, off);
  }
  cg_kernel_finish(b, &k);
}

/* avg_pool2d(self, kernel_size, stride, padding, ceil_mode,
 * count_include_pad, divisor_override), as PyTorch's
 * avg_pool2d_out_cuda_frame: the window clipped to the padded input gives
 * the count with padding, clipped to the input the elements summed (in
 * acc_type) and the count without; an empty window gives 0. */
void cg_emit_avg_pool(builder *b, const alloy_node *n, const cuda_op *op) {
  (void)op;
  const alloy_host_api *h = b->host;
  kernel k;
  cuda_tensor x, y;
  if (!pool_begin(b, n, tensor_arg(h, n, "self"), &k, &x, &y, "avg_pool2d")) return;
  int64_t ks[2], s[2], p[2], d[2];
  window(h, n, ks, s, p, d);
  const int r = x.rank;
  const int64_t H = x.sizes[r - 2], W = x.sizes[r - 1];
  const char *acc = cg_reg_type(x.dtype);
  bool include_pad = bool_arg(h, n, "count_include_pad", true);
  const alloy_arg *div = cg_arg_named(h, n, "divisor_override");
  int64_t divisor = 0;
  bool override = div && h->arg_type(div) != ALLOY_ARG_TYPE_NONE && h->arg_int(div, &divisor);
  const cuda_tensor *ts[2] = {&x, &y};
  const char *names[2] = {"xb", "yb"};
  plane_indices(&k, &y, ts, names, 2);
  int px = cg_kernel_param(&k, x.base), py = cg_kernel_param(&k, y.base);
  cg_put(&k.body, "    IDX_T hs = oh * %" PRId64 " - %" PRId64 ", ws = ow * %" PRId64 " - %" PRId64 ";\n", s[0],
         p[0], s[1], p[1]);
  cg_put(&k.body, "    IDX_T he = hs + %" PRId64 " < %" PRId64 " ? hs + %" PRId64 " : %" PRId64 ";\n", ks[0],
         H + p[0], ks[0], H + p[0]);
  cg_put(&k.body, "    IDX_T we = ws + %" PRId64 " < %" PRId64 " ? ws + %" PRId64 " : %" PRId64 ";\n", ks[1],
         W + p[1], ks[1], W + p[1]);
  cg_put(&k.body, "    const IDX_T pool = (he - hs) * (we - ws);\n");
  cg_put(&k.body, "    if (hs < 0) hs = 0;\n    if (ws < 0) ws = 0;\n");
  cg_put(&k.body,
         "    if (he > %" PRId64 ") he = %" PRId64 ";\n    if (we > %" PRId64 ") we = %" PRId64 ";\n", H, H,
         W, W);
  cg_put(&k.body, "    %s a = 0;\n    if (hs < he && ws < we) {\n", acc);
  cg_put(&k.body, "      for (IDX_T h = hs; h < he; h++)\n        for (IDX_T w = ws; w < we; w++)\n");
  cg_put(&k.body, "          a += (%s)ld_%s(p%d, xb + h * %" PRId64 " + w * %" PRId64 ");\n", acc,
         cg_dtype_tag(x.dtype), px, x.strides[r - 2], x.strides[r - 1]);
  if (override)
    cg_put(&k.body, "      a = a / (%s)%" PRId64 ";\n    }\n", acc, divisor);
  else if (include_pad)
    cg_put(&k.body, "      a = a / (%s)pool;\n    }\n", acc);
  else
    cg_put(&k.body, "      a = a / (%s)((he - hs) * (we - ws));\n    }\n", acc);
  char off[160];
  out_at(&y, "yb", off, sizeof off);
  cg_put(&k.body, "    (void)pool;\n    st_%s(p%d, %s, a);\n", cg_dtype_tag(y.dtype), py, off);
  cg_kernel_finish(b, &k);
}

/* _adaptive_avg_pool2d(self, output_size), as PyTorch's
 * adaptive_average_pool: output row oh averages input rows
 * [floor(oh H / OH), ceil((oh + 1) H / OH)), the same for columns; the sum
 * in opmath, divided by the rows, then by the columns. */
void cg_emit_adaptive_avg_pool(builder *b, const alloy_node *n, const cuda_op *op) {
  (void)op;
  kernel k;
  cuda_tensor x, y;
  if (!pool_begin(b, n, tensor_arg(b->host, n, "self"), &k, &x, &y, "adaptive_avg_pool2d")) return;
  const int r = x.rank;
  const int64_t H = x.sizes[r - 2], W = x.sizes[r - 1], OH = y.sizes[r - 2], OW = y.sizes[r - 1];
  const char *acc = cg_reg_type(x.dtype);
  const cuda_tensor *ts[2] = {&x, &y};
  const char *names[2] = {"xb", "yb"};
  plane_indices(&k, &y, ts, names, 2);
  int px = cg_kernel_param(&k, x.base), py = cg_kernel_param(&k, y.base);
  cg_put(&k.body,
         "    const IDX_T hs = oh * %" PRId64 " / %" PRId64 ", he = 1 + ((oh + 1) * %" PRId64 " - 1) / %" PRId64
         ";\n",
         H, OH, H, OH);
  cg_put(&k.body,
         "    const IDX_T ws = ow * %" PRId64 " / %" PRId64 ", we = 1 + ((ow + 1) * %" PRId64 " - 1) / %" PRId64
         ";\n",
         W, OW, W, OW);
  cg_put(&k.body, "    %s a = 0;\n    for (IDX_T h = hs; h < he; h++)\n      for (IDX_T w = ws; w < we; w++)\n",
         acc);
  cg_put(&k.body, "        a += (%s)ld_%s(p%d, xb + h * %" PRId64 " + w * %" PRId64 ");\n", acc,
         cg_dtype_tag(x.dtype), px, x.strides[r - 2], x.strides[r - 1]);
  cg_put(&k.body, "    a = a / (%s)(he - hs) / (%s)(we - ws);\n", acc, acc);
  char off[160];
  out_at(&y, "yb", off, sizeof off);
  cg_put(&k.body, "    st_%s(p%d, %s, a);\n", cg_dtype_tag(y.dtype), py, off);
  cg_kernel_finish(b, &k);
}

/* ---- batch norm ---------------------------------------------------------------------*/

/* _native_batch_norm_legit_no_training(input, weight?, bias?, running_mean,
 * running_var, momentum, eps) -> (y, [0], [0]), as PyTorch's CUDA
 * batch_norm_cuda_out in inference: invstd = rsqrt(var + eps) in acc_type
 * (float for the 16-bit types and float32, eps rounded to it), then
 * y = (x - mean) * weight * invstd + bias per element, the parameters read
 * in acc_type along dim 1 (weight 1 and bias 0 when absent); the other two
 * outputs are the empty tensors PyTorch returns for them. y is pointwise
 * work of the open group: the convolution's epilogue (batch norm, the
 * residual add, relu) is one pass over the activations, as Inductor's. */
int cg_fuse_batch_norm(builder *b, void *kp, int gid, const alloy_node *n) {
  kernel *k = kp;
  const alloy_host_api *h = b->host;
  const char *why = cg_check_batch_norm(h, n);
  if (why) return cg_fail(b, n, "%s", why), -1;
  static const char *const names[] = {"weight", "bias", "running_mean", "running_var"};
  cuda_tensor pt[4];
  const cuda_tensor *pp[4];
  for (int i = 0; i < 4; i++) {
    const alloy_value *v = tensor_arg(h, n, names[i]);
    pp[i] = v ? &pt[i] : NULL;
    if (v && !cg_in_memory(b, n, v, &pt[i])) return -1;
  }
  for (int j = 1; j < h->node_num_outputs(n); j++) /* empty: in memory, never written */
    if (cg_materialize(b, h->node_output(n, j)) < 0) return -1;
  const alloy_value *xv = tensor_arg(h, n, "input");
  int vx = xv ? cg_operand_var(b, k, gid, xv) : -1;
  if (vx < 0) return xv ? -1 : (cg_fail(b, n, "no input tensor"), -1);
  const char *acc = h->value_dtype(xv) == ALLOY_F64 ? "double" : "float";
  int vp[4] = {-1, -1, -1, -1};
  for (int i = 0; i < 4; i++) {
    if (!pp[i]) continue;
    cuda_tensor pv = *pp[i]; /* the vector along dim 1, broadcast elsewhere */
    pv.rank = k->rank;
    for (int d = 0; d < k->rank; d++)
      pv.sizes[d] = d == 1 ? k->lsizes[1] : 1, pv.strides[d] = d == 1 ? pp[i]->strides[0] : 0;
    vp[i] = cg_kernel_load(b, k, &pv, -1);
  }
  int v = k->nvars++;
  double eps = float_arg(h, n, "eps", 1e-5);
  cg_put(&k->body, "    const %s inv%d = rsqrt((%s)v%d + (%s)%.17g);\n", acc, v, acc, vp[3], acc, eps);
  char w[32], bb[32];
  if (vp[0] >= 0)
    snprintf(w, sizeof w, "(%s)v%d", acc, vp[0]);
  else
    snprintf(w, sizeof w, "(%s)1", acc);
  if (vp[1] >= 0)
    snprintf(bb, sizeof bb, "(%s)v%d", acc, vp[1]);
  else
    snprintf(bb, sizeof bb, "(%s)0", acc);
  alloy_dtype rt = h->value_dtype(h->node_output(n, 0));
  /* the result rounded to its dtype, as the group's other values are */
  const char *rnd = rt == ALLOY_F16 ? "rnd_f16" : rt == ALLOY_BF16 ? "rnd_bf16" : "";
  cg_put(&k->body, "    const %s v%d = %s(((%s)v%d - (%s)v%d) * %s * inv%d + %s);\n",
         rt == ALLOY_F64 ? "double" : "float", v, rnd, acc, vx, acc, vp[2], w, v, bb);
  return v;
}

/* ---- depthwise convolution, fused ------------------------------------------------*/

/* The largest depthwise window written out whole (unrolled): 7 x 7. */
enum { DEPTHWISE_MAX_TAPS = 49 };

/* Whether n is a 2-d depthwise convolution (groups == C_in == C_out, a
 * [C, 1, KH, KW] weight) of a window up to DEPTHWISE_MAX_TAPS. It does a
 * few multiply-adds per element it reads, so it is bound by memory, and
 * cuDNN's engines for it are slow here (on an H100, mobilenet_v3_small's
 * nine took 1.1 ms a run, against 0.2 ms for the activations around them):
 * it is better as pointwise work of its output's shape, the batch norm and
 * activation after it in the same kernel. */
static bool depthwise(const alloy_host_api *h, const alloy_node *n) {
  if (cg_check_conv(h, n)) return false;
  const alloy_value *x = tensor_arg(h, n, "input"), *w = tensor_arg(h, n, "weight");
  int64_t xs[CUDA_MAX_RANK], ws[CUDA_MAX_RANK], ys[CUDA_MAX_RANK];
  if (sizes_of(h, x, xs) != 4 || sizes_of(h, w, ws) != 4 || sizes_of(h, h->node_output(n, 0), ys) != 4) return false;
  int64_t groups = cg_int_arg(h, n, "groups", 1);
  return groups > 1 && xs[1] == groups && ys[1] == groups && ws[0] == groups && ws[1] == 1 &&
         ws[2] * ws[3] <= DEPTHWISE_MAX_TAPS;
}

int cg_conv_groupable(builder *b, const alloy_node *n, int open) {
  (void)open; /* its input is read at other indices: from memory, so it starts a group */
  return depthwise(b->host, n) ? 0 : -1;
}

/* y[n, c, oh, ow] = sum over the window of x[n, c, oh * s - p + kh * d,
 * ow * s - p + kw * d] * w[c, 0, kh, kw], then + bias[c]: the window's
 * taps in order, out-of-bounds taps skipped (zero padding), accumulated in
 * float (double for float64) and rounded to y's dtype once. */
int cg_fuse_conv(builder *b, void *kp, int gid, const alloy_node *n) {
  (void)gid;
  kernel *k = kp;
  const alloy_host_api *h = b->host;
  const alloy_value *xv = tensor_arg(h, n, "input"), *wv = tensor_arg(h, n, "weight"),
                    *bv = tensor_arg(h, n, "bias");
  cuda_tensor xm, wm, bm;
  if (!xv || !wv || !cg_in_memory(b, n, xv, &xm) || !cg_in_memory(b, n, wv, &wm) ||
      (bv && !cg_in_memory(b, n, bv, &bm)))
    return xv && wv ? -1 : (cg_fail(b, n, "a convolution without its input or weight"), -1);
  const cuda_tensor *x = &xm, *w = &wm, *bias = bv ? &bm : NULL;
  if (k->rank != 4) return cg_fail(b, n, "a depthwise convolution outside a 4-d group"), -1;
  int64_t st[2], pad[2], dil[2];
  int_list(h, n, "stride", 2, 1, st, NULL);
  int_list(h, n, "padding", 2, 0, pad, NULL);
  int_list(h, n, "dilation", 2, 1, dil, NULL);
  int pos[CUDA_MAX_RANK]; /* the iteration index of the values' dim d */
  for (int d = 0; d < k->rank; d++) pos[k->perm[d]] = d;
  cg_index_split(k);
  int px = cg_kernel_param(k, x->base), pw = cg_kernel_param(k, w->base);
  int pb = bias ? cg_kernel_param(k, bias->base) : 0;
  if (px < 0 || pw < 0 || pb < 0) return cg_fail(b, n, "too many tensors in one kernel"), -1;
  cg_kernel_reach(k, x);
  cg_kernel_reach(k, w);
  if (bias) cg_kernel_reach(k, bias);
  alloy_dtype yt = h->value_dtype(h->node_output(n, 0));
  const char *acc = yt == ALLOY_F64 ? "double" : "float", *xt = cg_dtype_tag(x->dtype);
  int v = k->nvars++;
  cg_put(&k->body, "    %s a%d = 0;\n", acc, v);
  cg_put(&k->body,
         "    const IDX_T xb%d = %" PRId64 " + i%d * %" PRId64 " + i%d * %" PRId64 ", wb%d = %" PRId64
         " + i%d * %" PRId64 ";\n",
         v, x->offset, pos[0], x->strides[0], pos[1], x->strides[1], v, w->offset, pos[1], w->strides[0]);
  char h0[64], w0[64];
  snprintf(h0, sizeof h0, "i%d * %" PRId64 " - %" PRId64, pos[2], st[0], pad[0]);
  snprintf(w0, sizeof w0, "i%d * %" PRId64 " - %" PRId64, pos[3], st[1], pad[1]);
  window_taps(&k->body, h0, w0, &w->sizes[2], dil, x->sizes[2], x->sizes[3]);
  cg_put(&k->body,
         "        a%d += (%s)ld_%s(p%d, xb%d + h * %" PRId64 " + w * %" PRId64 ") * (%s)ld_%s(p%d, wb%d + kh * %" PRId64
         " + kw * %" PRId64 ");\n      }\n    }\n",
         v, acc, xt, px, v, x->strides[2], x->strides[3], acc, cg_dtype_tag(w->dtype), pw, v, w->strides[2],
         w->strides[3]);
  if (bias)
    cg_put(&k->body, "    a%d += (%s)ld_%s(p%d, %" PRId64 " + i%d * %" PRId64 ");\n", v, acc,
           cg_dtype_tag(bias->dtype), pb, bias->offset, pos[1], bias->strides[0]);
  if (yt == ALLOY_F16 || yt == ALLOY_BF16)
    cg_put(&k->body, "    float v%d = rnd_%s(a%d);\n", v, cg_dtype_tag(yt), v);
  else cg_put(&k->body, "    %s v%d = a%d;\n", cg_reg_type(yt), v, v);
  return v;
}

bool cg_relu_into_pool(builder *b, const alloy_node *n) {
  const alloy_host_api *h = b->host;
  if (strcmp(h->node_op_name(n), "aten.relu.default") || h->node_num_outputs(n) != 1) return false;
  const alloy_value *v = h->node_output(n, 0), *x[1];
  if (h->value_num_users(v) != 1 || cg_val(b, v)->output >= 0 || cg_tensor_operands(h, n, x, 1) != 1 ||
      h->value_dtype(x[0]) != h->value_dtype(v) || !alloy_dtype_is_float(h->value_dtype(v)))
    return false;
  const alloy_node *pool = h->value_user(v, 0);
  if (strcmp(h->node_op_name(pool), "aten.max_pool2d_with_indices.default") || tensor_arg(h, pool, "self") != v ||
      cg_check_pool(h, pool))
    return false;
  const alloy_value *iv = h->node_num_outputs(pool) > 1 ? h->node_output(pool, 1) : NULL;
  return !iv || (h->value_num_users(iv) == 0 && cg_val(b, iv)->output < 0); /* ties' indices would differ */
}
