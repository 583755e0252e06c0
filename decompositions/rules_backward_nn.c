/*
 * decompositions/rules_backward_nn.c: the backward ops of the layers of
 * training graphs, from ATen to Core ATen: batch norm and the other norms,
 * pooling, padding, upsampling, convolution, embedding and embedding bags,
 * distances and grid sampling. The backward ops of activations, losses
 * and views are in rules_backward.c, those of attention and recurrent
 * cells in rules_backward_seq.c; the shape functions in
 * ir/meta_backward.c.
 *
 * Pooling, padding and upsampling are linear maps that act on each
 * spatial dim separately: the gradient of an average pooling, of a
 * reflection padding or of a bicubic upsampling is the transpose of its
 * map, applied dim after dim. The map of one dim is read off the forward
 * op itself, applied to an identity matrix laid out along that dim, so
 * that window bounds, divisors, reflections and interpolation weights are
 * the forward's exactly (ceil_mode, count_include_pad, align_corners and
 * scales included); the gradient is then a product with the transpose.
 * Max pooling scatters the gradient to the recorded indices. Norms follow
 * PyTorch's decompositions (torch/_decomp/decompositions.py), in float32
 * for float16 and bfloat16; convolution backwards become
 * convolution_backward.
 */
#include <math.h>
#include <string.h>

#include "decompositions/rules.h"
#include "decompositions/rules_nn_util.h"

static alloy_dim C(int64_t v) { return alloy_dim_const(v); }

static alloy_value *zeros(decomp *d, const alloy_dim *shape, int n, alloy_dtype t) {
  return D(d, "aten.full.default", d_dim_list(d, shape, n), I(0), DT(t));
}

static alloy_value *permute(decomp *d, alloy_value *x, const int64_t *perm, int n) {
  return D(d, "aten.permute.default", V(x), d_int_list(d, perm, n));
}

/* --- separable linear maps -----------------------------------------------------------*/

/* x with its dim-th size O replaced by L through a [L, O]: the values
 * along dim are multiplied by the map's transpose (y_l = sum_o a_lo x_o). */
static alloy_value *apply_along(decomp *d, alloy_value *x, int dim, alloy_value *a) {
  int r = d_rank(x);
  int64_t perm[ALLOY_MAX_RANK], back[ALLOY_MAX_RANK];
  alloy_dim rest[ALLOY_MAX_RANK];
  for (int k = 0, j = 0; k < r; k++)
    if (k != dim) perm[j++] = k;
  perm[r - 1] = dim;
  for (int k = 0; k < r; k++) back[perm[k]] = k;
  for (int k = 0; k < r - 1; k++) rest[k] = d_shape(x)[perm[k]];
  alloy_dim lead = nn_prod(d, rest, r - 1), o = d_shape(x)[dim], flat[2] = {lead, o};
  alloy_value *x2 = nn_reshape(d, permute(d, x, perm, r), flat, 2);
  alloy_value *y2 = D(d, "aten.mm.default", V(x2), V(nn_mT(d, a)));
  rest[r - 1] = d_shape(a)[0];
  return permute(d, nn_view(d, y2, rest, r), back, r);
}

/* An identity of size L in dtype t, its rows as a batch of one-channel
 * signals that are L long along spatial dim k of n: [L, 1, 1.., L, ..1]. */
static alloy_value *identity_along(decomp *d, alloy_dim L, int k, int n, alloy_dtype t) {
  alloy_dim shape[ALLOY_MAX_RANK];
  shape[0] = L;
  shape[1] = C(1);
  for (int i = 0; i < n; i++) shape[2 + i] = i == k ? L : C(1);
  alloy_value *e = D(d, "aten.eye.default", SYM(L), DT(t));
  return nn_view(d, e, shape, n + 2);
}

/* The forward's output on identity_along ([L, 1, .., O, ..]) as the map
 * [L, O] of its dim. */
static alloy_value *map_of(decomp *d, alloy_value *y, alloy_dim L) {
  alloy_dim two[2] = {L, nn_prod(d, d_shape(y) + 2, d_rank(y) - 2)};
  return nn_reshape(d, y, two, 2);
}

/* What one dim's map needs: the spatial dim k of n, the input's and the
 * gradient's sizes along it, and the computation dtype. */
typedef struct {
  int k, n;
  alloy_dim in, out;
  alloy_dtype t;
} dim_map;

typedef alloy_value *(*map_fn)(decomp *d, const dim_map *m);

/* The gradient of a separable map whose last n dims are spatial: g taken
 * through each dim's transposed map, in the computation dtype, rounded
 * once to the output dtype. in: the input's spatial sizes. */
static void separable_backward(decomp *d, alloy_value *g, const alloy_dim *in, int n, map_fn fn) {
  alloy_dtype t = d_out_dtype(d, 0), c = d_opmath(t);
  alloy_value *x = d_to(d, g, c);
  int nb = d_rank(g) - n;
  for (int k = 0; k < n && !d_failed(d); k++) {
    dim_map m = {k, n, in[k], d_shape(g)[nb + k], c};
    x = apply_along(d, x, nb + k, fn(d, &m));
  }
  d_out(d, 0, d_to(d, x, t));
}

/* --- pooling ---------------------------------------------------------------------------*/

/* The backward of a max pooling whose indices are known: each gradient
 * added at the input position its output took the maximum from, plane by
 * plane (indices count positions within one plane). */
static void scatter_to_indices(decomp *d, alloy_value *g, alloy_value *self, alloy_value *idx, int n) {
  int r = d_rank(self), nb = r - n;
  const alloy_dim *s = d_shape(self);
  alloy_dim planes = nn_prod(d, s, nb);
  alloy_dim src[2] = {planes, nn_prod(d, d_shape(g) + nb, n)}, dst[2] = {planes, nn_prod(d, s + nb, n)};
  alloy_value *g2 = nn_reshape(d, g, src, 2), *i2 = nn_reshape(d, idx, src, 2);
  alloy_value *y = D(d, "aten.scatter_add.default", V(zeros(d, dst, 2, d_dtype(self))), I(1), V(i2), V(g2));
  d_out(d, 0, nn_view(d, y, s, r));
}

/* max_pool3d_with_indices_backward(g, self, kernel, stride, padding,
 * dilation, ceil_mode, indices) */
static void max_pool3d_backward(decomp *d) {
  scatter_to_indices(d, d_tensor(d, 0), d_tensor(d, 1), d_tensor(d, 7), 3);
}

/* adaptive_max_pool{2,3}d_backward(g, self, indices),
 * fractional_max_pool{2,3}d_backward(g, self, kernel, output_size, indices) */
static void adaptive_max_pool2d_backward(decomp *d) {
  scatter_to_indices(d, d_tensor(d, 0), d_tensor(d, 1), d_tensor(d, 2), 2);
}
static void adaptive_max_pool3d_backward(decomp *d) {
  scatter_to_indices(d, d_tensor(d, 0), d_tensor(d, 1), d_tensor(d, 2), 3);
}
static void fractional_max_pool2d_backward(decomp *d) {
  scatter_to_indices(d, d_tensor(d, 0), d_tensor(d, 1), d_tensor(d, 4), 2);
}
static void fractional_max_pool3d_backward(decomp *d) {
  scatter_to_indices(d, d_tensor(d, 0), d_tensor(d, 1), d_tensor(d, 4), 3);
}

/* avg_pool3d_backward(g, self, kernel, stride, padding, ceil_mode,
 * count_include_pad, divisor_override). A window's divisor is the product
 * of its extents along each dim (clipped as count_include_pad says), so
 * the pooling is separable: each dim's map is avg_pool3d of the identity
 * with that dim's kernel, stride and padding. A divisor_override divides
 * once: the maps then sum (divisor 1) and the gradient is divided. */
static int64_t pool_item(decomp *d, int i, int k, int64_t dflt) {
  int64_t v[3];
  int n = d_ints(d, i, v, 3);
  if (n <= 0) return dflt;
  return n == 1 ? v[0] : v[k];
}

static alloy_value *avg_pool3d_map(decomp *d, const dim_map *m) {
  int64_t k = pool_item(d, 2, m->k, 1), s = pool_item(d, 3, m->k, k), p = pool_item(d, 4, m->k, 0);
  int64_t ks[3] = {1, 1, 1}, ss[3] = {1, 1, 1}, ps[3] = {0, 0, 0};
  ks[m->k] = k;
  ss[m->k] = s;
  ps[m->k] = p;
  alloy_value *e = identity_along(d, m->in, m->k, 3, m->t);
  alloy_arg div = d_is_none(d, 7) ? NONE : I(1);
  alloy_value *y = D(d, "aten.avg_pool3d.default", V(e), d_int_list(d, ks, 3), d_int_list(d, ss, 3),
                     d_int_list(d, ps, 3), *d_arg(d, 5), *d_arg(d, 6), div);
  return map_of(d, y, m->in);
}

static void avg_pool3d_backward(decomp *d) {
  alloy_value *g = d_tensor(d, 0), *self = d_tensor(d, 1);
  if (!d_is_none(d, 7)) {
    int64_t div = d_int(d, 7);
    if (div == 0) return (void)d_fail(d, "argument 'divisor_override' must not be zero");
    g = D(d, "aten.div.Tensor", V(d_to(d, g, d_opmath(d_dtype(g)))), I(div));
  }
  separable_backward(d, g, d_shape(self) + d_rank(self) - 3, 3, avg_pool3d_map);
}

/* _adaptive_avg_pool3d_backward(g, self): adaptive windows are separable
 * too, each divided by the product of its extents */
static alloy_value *adaptive_avg_pool3d_map(decomp *d, const dim_map *m) {
  alloy_dim size[3] = {C(1), C(1), C(1)};
  size[m->k] = m->out;
  alloy_value *y = D(d, "aten._adaptive_avg_pool3d.default", V(identity_along(d, m->in, m->k, 3, m->t)),
                     d_dim_list(d, size, 3));
  return map_of(d, y, m->in);
}

static void adaptive_avg_pool3d_backward(decomp *d) {
  alloy_value *self = d_tensor(d, 1);
  separable_backward(d, d_tensor(d, 0), d_shape(self) + d_rank(self) - 3, 3, adaptive_avg_pool3d_map);
}

/* --- padding ---------------------------------------------------------------------------*/

/* {reflection,replication}_pad{1,2,3}d_backward(g, self, padding): the
 * padding pairs run from the last dim backwards; each dim's map is the 1-d
 * padding of the identity with its pair. */
static alloy_value *pad_map(decomp *d, const dim_map *m, const char *op) {
  alloy_dim pads[6];
  int np = d_dims(d, 2, pads, 6);
  if (np != 2 * m->n) return d_fail(d, "argument 'padding' must have %d items, got %d", 2 * m->n, np);
  int at = 2 * (m->n - 1 - m->k);
  alloy_value *y = D(d, op, V(identity_along(d, m->in, 0, 1, m->t)), d_dim_list(d, pads + at, 2));
  return map_of(d, y, m->in);
}

static alloy_value *reflection_map(decomp *d, const dim_map *m) {
  return pad_map(d, m, "aten.reflection_pad1d.default");
}
static alloy_value *replication_map(decomp *d, const dim_map *m) {
  return pad_map(d, m, "aten.replication_pad1d.default");
}

static void pad_backward(decomp *d, int n, map_fn fn) {
  alloy_value *self = d_tensor(d, 1);
  separable_backward(d, d_tensor(d, 0), d_shape(self) + d_rank(self) - n, n, fn);
}

static void reflection_pad1d_backward(decomp *d) { pad_backward(d, 1, reflection_map); }
static void reflection_pad2d_backward(decomp *d) { pad_backward(d, 2, reflection_map); }
static void reflection_pad3d_backward(decomp *d) { pad_backward(d, 3, reflection_map); }
static void replication_pad1d_backward(decomp *d) { pad_backward(d, 1, replication_map); }
static void replication_pad2d_backward(decomp *d) { pad_backward(d, 2, replication_map); }
static void replication_pad3d_backward(decomp *d) { pad_backward(d, 3, replication_map); }

/* --- upsampling ------------------------------------------------------------------------*/

/* upsample_*_backward(grad_output, output_size, input_size, [align_corners,]
 * scales...): each dim's map is the upsampling of the identity along it.
 * One-dim kinds (nearest, nearest-exact, linear) use their 1-d op for every
 * dim with that dim's scale; bicubic and the antialiased kinds their 2-d
 * op with the other dim left at size 1. */
typedef struct {
  const char *op; /* the forward op the map comes from */
  bool two_d;     /* a 2-d op (H, W); else a 1-d op */
  bool align;     /* takes align_corners (argument 3; scales follow it) */
} upsample_kind;

static const upsample_kind *upsample_of(decomp *d);

static alloy_value *upsample_map(decomp *d, const dim_map *m) {
  const upsample_kind *u = upsample_of(d);
  int first_scale = u->align ? 4 : 3;
  alloy_arg scale = d_is_none(d, first_scale + m->k) ? NONE : *d_arg(d, first_scale + m->k);
  alloy_value *y;
  if (u->two_d) {
    alloy_dim size[2] = {C(1), C(1)};
    size[m->k] = m->out;
    alloy_arg scales[2] = {NONE, NONE};
    scales[m->k] = scale;
    y = D(d, u->op, V(identity_along(d, m->in, m->k, 2, m->t)), d_dim_list(d, size, 2), *d_arg(d, 3),
          scales[0], scales[1]);
  } else if (u->align) {
    y = D(d, u->op, V(identity_along(d, m->in, 0, 1, m->t)), d_dim_list(d, &m->out, 1), *d_arg(d, 3), scale);
  } else {
    y = D(d, u->op, V(identity_along(d, m->in, 0, 1, m->t)), d_dim_list(d, &m->out, 1), scale);
  }
  return map_of(d, y, m->in);
}

static const struct {
  const char *backward;
  upsample_kind kind;
} upsample_kinds[] = {
    {"aten.upsample_nearest1d_backward.default", {"aten.upsample_nearest1d.default", false, false}},
    {"aten.upsample_nearest2d_backward.default", {"aten.upsample_nearest1d.default", false, false}},
    {"aten.upsample_nearest3d_backward.default", {"aten.upsample_nearest1d.default", false, false}},
    {"aten._upsample_nearest_exact1d_backward.default",
     {"aten._upsample_nearest_exact1d.default", false, false}},
    {"aten._upsample_nearest_exact2d_backward.default",
     {"aten._upsample_nearest_exact1d.default", false, false}},
    {"aten._upsample_nearest_exact3d_backward.default",
     {"aten._upsample_nearest_exact1d.default", false, false}},
    {"aten.upsample_linear1d_backward.default", {"aten.upsample_linear1d.default", false, true}},
    {"aten.upsample_bilinear2d_backward.default", {"aten.upsample_linear1d.default", false, true}},
    {"aten.upsample_trilinear3d_backward.default", {"aten.upsample_linear1d.default", false, true}},
    {"aten.upsample_bicubic2d_backward.default", {"aten.upsample_bicubic2d.default", true, true}},
    {"aten._upsample_bilinear2d_aa_backward.default", {"aten._upsample_bilinear2d_aa.default", true, true}},
    {"aten._upsample_bicubic2d_aa_backward.default", {"aten._upsample_bicubic2d_aa.default", true, true}},
};

static const upsample_kind *upsample_of(decomp *d) {
  const char *name = alloy_op_name(alloy_node_op(d_node(d)));
  for (size_t i = 0; i < sizeof upsample_kinds / sizeof upsample_kinds[0]; i++)
    if (!strcmp(upsample_kinds[i].backward, name)) return &upsample_kinds[i].kind;
  return &upsample_kinds[0].kind;
}

static void upsample_backward(decomp *d) {
  alloy_dim in[ALLOY_MAX_RANK];
  int ni = d_dims(d, 2, in, ALLOY_MAX_RANK);
  if (ni < 3) return (void)d_fail(d, "argument 'input_size' must have at least 3 items");
  separable_backward(d, d_tensor(d, 0), in + 2, ni - 2, upsample_map);
}

/* --- norms -----------------------------------------------------------------------------*/

/* Where a batch norm backward keeps its arguments; train < 0: always in
 * training (cuDNN and MIOpen, whose backward reads the saved statistics). */
typedef struct {
  int g, in, w, rmean, rvar, smean, sinvstd, train, eps;
} bn_args;

/* native_batch_norm_backward: with x - mean over the channel's elements
 * and n their count, grad_input = (g - sum(g) / n - (x - mean) dot / n
 * invstd^2) invstd w in training, g invstd w in eval; grad_weight =
 * dot invstd, grad_bias = sum(g), where dot = sum(g (x - mean)).
 *
 * A float16 or bfloat16 batch norm whose parameters share its dtype runs
 * the CPU kernel with that dtype as its math type: x - mean, the
 * projection factor k = dot invstd invstd / n and every step of
 * grad_input are rounded to it (only the two sums accumulate in float32).
 * With float32 parameters ("mixed"), or in float32 and float64, all of it
 * is computed in float32 (float64) and rounded once. */
static bool bn_mixed(decomp *d, const bn_args *a, alloy_dtype t) {
  const int params[3] = {a->w, a->rmean, a->rvar};
  for (int k = 0; k < 3; k++) {
    alloy_value *p = d_tensor(d, params[k]);
    if (p && d_dtype(p) != t) return true;
  }
  return false;
}

static void batch_norm_backward_of(decomp *d, const bn_args *a) {
  alloy_value *x = d_tensor(d, a->in);
  alloy_dtype t = d_dtype(x), c = d_opmath(t);
  int r = d_rank(x);
  if (r < 2) return (void)d_fail(d, "the input of a batch norm must have at least 2 dims, got %d", r);
  /* m: the math type of the CPU kernel, t itself unless mixed */
  alloy_dtype m = t != c && !bn_mixed(d, a, t) ? t : c;
  alloy_value *g = d_tensor(d, a->g), *w = d_tensor(d, a->w);
  bool train = a->train < 0 || d_bool(d, a->train);
  alloy_value *mean, *invstd;
  if (train) {
    mean = d_tensor(d, a->smean);
    invstd = d_tensor(d, a->sinvstd);
    if (!mean || !invstd) return (void)d_fail(d, "save_mean and save_invstd are needed in training mode");
  } else {
    mean = d_tensor(d, a->rmean);
    alloy_value *var = d_tensor(d, a->rvar);
    if (!mean || !var) return (void)d_fail(d, "running_mean and running_var are needed in eval mode");
    invstd =
        D(d, "aten.rsqrt.default", V(D(d, "aten.add.Tensor", V(d_to(d, var, c)), F(d_float(d, a->eps)))));
  }
  alloy_dim bshape[ALLOY_MAX_RANK];
  int64_t axes[ALLOY_MAX_RANK];
  int na = 0;
  for (int k = 0; k < r; k++) {
    bshape[k] = k == 1 ? d_shape(x)[1] : C(1);
    if (k != 1) axes[na++] = k;
  }
  alloy_dim n = C(1);
  for (int k = 0; k < r; k++)
    if (k != 1) n = alloy_dim_mul(d_symtab(d), n, d_shape(x)[k]);
  alloy_value *inv_m = d_to(d, invstd, m), *inv_c = d_to(d, invstd, c);
  alloy_value *centered = nn_sub(d, d_to(d, x, m), nn_view(d, d_to(d, mean, m), bshape, r));
  alloy_value *gc = d_to(d, g, c);
  alloy_value *gsum = D(d, "aten.sum.dim_IntList", V(gc), d_int_list(d, axes, na));
  alloy_value *dot =
      D(d, "aten.sum.dim_IntList", V(nn_mul(d, gc, d_to(d, centered, c))), d_int_list(d, axes, na));
  alloy_value *wm = w ? nn_view(d, d_to(d, w, m), bshape, r) : NULL;
  alloy_value *gi;
  if (train) {
    alloy_value *k = nn_mul(d, nn_mul(d, d_to(d, dot, m), inv_m), inv_m);
    k = D(d, "aten.div.Tensor", V(k), SYM(n));
    alloy_value *gmean = D(d, "aten.div.Tensor", V(d_to(d, gsum, m)), SYM(n));
    gi = nn_sub(d, nn_sub(d, d_to(d, g, m), nn_view(d, gmean, bshape, r)),
                nn_mul(d, centered, nn_view(d, k, bshape, r)));
    gi = nn_mul(d, gi, nn_view(d, inv_m, bshape, r));
  } else {
    gi = nn_mul(d, d_to(d, g, m), nn_view(d, inv_m, bshape, r));
  }
  if (wm) gi = nn_mul(d, gi, wm);
  d_out(d, 0, d_to(d, gi, t));
  d_out(d, 1, d_to(d, nn_mul(d, dot, inv_c), d_out_dtype(d, 1)));
  d_out(d, 2, d_to(d, gsum, d_out_dtype(d, 2)));
}

static void native_batch_norm_backward(decomp *d) {
  static const bn_args a = {0, 1, 2, 3, 4, 5, 6, 7, 8};
  batch_norm_backward_of(d, &a);
}

/* _batch_norm_impl_index_backward(impl_index, input, grad_output, weight,
 * running_mean, running_var, save_mean, save_var_transform, train, eps,
 * output_mask, reservedSpace): the native kernel's (impl_index 0) */
static void batch_norm_impl_index_backward(decomp *d) {
  static const bn_args a = {2, 1, 3, 4, 5, 6, 7, 8, 9};
  if (d_int(d, 0) != 0) return d_decline(d, "impl_index %lld is a cuDNN or MIOpen batch norm",
                                         (long long)d_int(d, 0));
  batch_norm_backward_of(d, &a);
}

/* cudnn_batch_norm_backward(input, grad_output, weight, running_mean,
 * running_var, save_mean, save_var, epsilon, reserveSpace) and
 * miopen_batch_norm_backward (the same but the reserve), as PyTorch
 * decomposes them: native_batch_norm_backward in training, save_var being
 * the saved inverse standard deviation. */
static void vendor_batch_norm_backward(decomp *d) {
  static const bn_args a = {1, 0, 2, 3, 4, 5, 6, -1, 7};
  batch_norm_backward_of(d, &a);
}

/* The per-channel view [1, C, 1, ..] of a vector, for an input of rank r. */
static alloy_value *per_channel(decomp *d, alloy_value *v, const alloy_value *x, int r) {
  alloy_dim shape[ALLOY_MAX_RANK];
  for (int k = 0; k < r; k++) shape[k] = k == 1 ? d_shape(x)[1] : C(1);
  return nn_view(d, v, shape, r);
}

/* batch_norm_backward_reduce(grad_out, input, mean, invstd, weight,
 * input_g, weight_g, bias_g) -> (sum_dy, sum_dy_xmu, grad_weight,
 * grad_bias): the per-channel sums of a synchronized batch norm's
 * backward, sum(dy) and sum(dy (x - mean)), accumulated in float32 for
 * float16 and bfloat16; grad_weight = sum_dy_xmu invstd, grad_bias =
 * sum_dy. */
static void batch_norm_backward_reduce(decomp *d) {
  alloy_value *g = d_tensor(d, 0), *x = d_tensor(d, 1), *mean = d_tensor(d, 2), *invstd = d_tensor(d, 3);
  int r = d_rank(x);
  if (r < 2) return (void)d_fail(d, "the input of a batch norm must have at least 2 dims, got %d", r);
  alloy_dtype c = d_opmath(d_dtype(x));
  int64_t axes[ALLOY_MAX_RANK];
  int na = 0;
  for (int k = 0; k < r; k++)
    if (k != 1) axes[na++] = k;
  alloy_value *gc = d_to(d, g, c);
  alloy_value *xmu = nn_sub(d, d_to(d, x, c), per_channel(d, d_to(d, mean, c), x, r));
  alloy_value *sum = D(d, "aten.sum.dim_IntList", V(gc), d_int_list(d, axes, na));
  alloy_value *dot = D(d, "aten.sum.dim_IntList", V(nn_mul(d, gc, xmu)), d_int_list(d, axes, na));
  d_out(d, 0, d_to(d, sum, d_out_dtype(d, 0)));
  d_out(d, 1, d_to(d, dot, d_out_dtype(d, 1)));
  d_out(d, 2, d_to(d, nn_mul(d, dot, d_to(d, invstd, c)), d_out_dtype(d, 2)));
  d_out(d, 3, d_to(d, sum, d_out_dtype(d, 3)));
}

/* batch_norm_backward_elemt(grad_out, input, mean, invstd, weight, sum_dy,
 * sum_dy_xmu, count): a synchronized batch norm's grad_input from the sums
 * of every process (count holds their element counts): with n their total,
 * (dy - sum_dy / n - (x - mean) invstd^2 sum_dy_xmu / n) invstd w, in the
 * CUDA kernel's order, in float32 for float16 and bfloat16. */
static void batch_norm_backward_elemt(decomp *d) {
  alloy_value *g = d_tensor(d, 0), *x = d_tensor(d, 1), *w = d_tensor(d, 4);
  int r = d_rank(x);
  if (r < 2) return (void)d_fail(d, "the input of a batch norm must have at least 2 dims, got %d", r);
  alloy_dtype t = d_dtype(x), c = d_opmath(t);
  alloy_value *n = D(d, "aten.sum.dim_IntList", V(d_tensor(d, 7)), NONE, B(false), DT(ALLOY_I64));
  alloy_value *norm = D(d, "aten.reciprocal.default", V(d_to(d, n, c)));
  alloy_value *invstd = d_to(d, d_tensor(d, 3), c);
  alloy_value *m_dy = nn_mul(d, d_to(d, d_tensor(d, 5), c), norm);
  alloy_value *f1 = nn_mul(d, nn_mul(d, nn_mul(d, invstd, invstd), d_to(d, d_tensor(d, 6), c)), norm);
  alloy_value *f2 = w ? nn_mul(d, d_to(d, w, c), invstd) : invstd;
  alloy_value *xmu = nn_sub(d, d_to(d, x, c), per_channel(d, d_to(d, d_tensor(d, 2), c), x, r));
  alloy_value *gi = nn_sub(d, nn_sub(d, d_to(d, g, c), per_channel(d, m_dy, x, r)),
                           nn_mul(d, xmu, per_channel(d, f1, x, r)));
  d_out(d, 0, d_to(d, nn_mul(d, gi, per_channel(d, f2, x, r)), t));
}

/* _fused_rms_norm_backward(grad_out, input, normalized_shape, rstd,
 * weight, output_mask): with x^ = x rstd and gw = g w, grad_input =
 * (gw - x^ sum(x^ gw) / N) rstd over the normalized dims, grad_weight =
 * sum(g x^) over the others. */
static void fused_rms_norm_backward(decomp *d) {
  alloy_value *x = d_tensor(d, 1), *w = d_tensor(d, 4);
  alloy_dtype t = d_dtype(x), c = d_opmath(t);
  alloy_dim ns[ALLOY_MAX_RANK];
  int nn = d_dims(d, 2, ns, ALLOY_MAX_RANK), r = d_rank(x), axis = r - nn;
  if (nn < 1 || axis < 0) return (void)d_fail(d, "argument 'normalized_shape' does not fit the input");
  alloy_value *g = d_to(d, d_tensor(d, 0), c), *rstd = d_to(d, d_tensor(d, 3), c);
  x = d_to(d, x, c);
  alloy_dim rs[ALLOY_MAX_RANK];
  for (int k = 0; k < r; k++) rs[k] = k < axis ? d_shape(x)[k] : C(1);
  rstd = nn_reshape(d, rstd, rs, r);
  alloy_value *gw = w ? nn_mul(d, g, d_to(d, w, c)) : g;
  alloy_value *xh = nn_mul(d, x, rstd);
  int64_t inner[ALLOY_MAX_RANK], outer[ALLOY_MAX_RANK];
  for (int k = 0; k < r; k++) {
    if (k >= axis) inner[k - axis] = k;
    else outer[k] = k;
  }
  alloy_dim n = nn_prod(d, ns, nn);
  alloy_value *sum = D(d, "aten.sum.dim_IntList", V(nn_mul(d, xh, gw)), d_int_list(d, inner, nn), B(true));
  alloy_value *gi = nn_mul(d, nn_sub(d, gw, nn_mul(d, D(d, "aten.div.Tensor", V(xh), SYM(n)), sum)), rstd);
  d_out(d, 0, d_to(d, gi, t));
  alloy_value *gwt = nn_mul(d, g, xh);
  if (axis > 0) gwt = D(d, "aten.sum.dim_IntList", V(gwt), d_int_list(d, outer, axis));
  d_out(d, 1, d_to(d, gwt, d_out_dtype(d, 1)));
}

/* _weight_norm_interface_backward / _weight_norm_differentiable_backward
 * (grad_w, v, g, norms, dim): with s = sum(grad_w v) over every dim but
 * dim, grad_v = g / norms (grad_w - v s / norms^2) and grad_g = s / norms */
static void weight_norm_backward(decomp *d) {
  alloy_value *gw = d_tensor(d, 0), *v = d_tensor(d, 1);
  alloy_dtype t = d_dtype(v), c = d_opmath(t);
  int r = d_rank(v), dim = d_wrap_dim(d, d_int(d, 4), r);
  if (d_failed(d)) return;
  int64_t axes[ALLOY_MAX_RANK];
  int na = 0;
  for (int k = 0; k < r; k++)
    if (k != dim) axes[na++] = k;
  gw = d_to(d, gw, c);
  v = d_to(d, v, c);
  alloy_value *g = d_to(d, d_tensor(d, 2), c), *norms = d_to(d, d_tensor(d, 3), c);
  alloy_value *s = D(d, "aten.sum.dim_IntList", V(nn_mul(d, gw, v)), d_int_list(d, axes, na), B(true));
  alloy_value *frac = D(d, "aten.div.Tensor", V(s), V(nn_mul(d, norms, norms)));
  alloy_value *gv = nn_mul(d, D(d, "aten.div.Tensor", V(g), V(norms)), nn_sub(d, gw, nn_mul(d, v, frac)));
  d_out(d, 0, d_to(d, gv, t));
  d_out(d, 1, d_to(d, D(d, "aten.div.Tensor", V(s), V(norms)), d_out_dtype(d, 1)));
}

/* --- convolution and linear ------------------------------------------------------------*/

/* _slow_conv2d_backward.output_mask(grad_output, self, weight, kernel_size,
 * stride, padding, output_mask): a plain 2-d convolution's backward */
static void slow_conv2d_backward(decomp *d) {
  alloy_value *w = d_tensor(d, 2), *outs[3];
  alloy_dim bias = d_shape(w)[0];
  if (DN(d, "aten.convolution_backward.default", outs, 3, V(d_tensor(d, 0)), V(d_tensor(d, 1)), V(w),
         d_dim_list(d, &bias, 1), *d_arg(d, 4), *d_arg(d, 5), LIST(I(1), I(1)), B(false), LIST(I(0), I(0)),
         I(1), *d_arg(d, 6)) < 3)
    return;
  for (int k = 0; k < 3; k++) d_out(d, k, outs[k]);
}

/* conv_tbc_backward(grad, input, weight, bias, pad): conv_tbc is conv1d
 * on time-batch-channel layouts (input [T, B, Cin], weight [K, Cin, Cout]),
 * so its backward is convolution_backward on the permuted tensors. */
static void conv_tbc_backward(decomp *d) {
  static const int64_t to_ncl[3] = {1, 2, 0}, from_ncl[3] = {2, 0, 1}, wperm[3] = {2, 1, 0};
  alloy_value *g = d_tensor(d, 0), *x = d_tensor(d, 1), *w = d_tensor(d, 2), *outs[3];
  alloy_dim bias = d_shape(w)[2];
  int64_t pad = d_int(d, 4);
  if (DN(d, "aten.convolution_backward.default", outs, 3, V(permute(d, g, to_ncl, 3)),
         V(permute(d, x, to_ncl, 3)), V(permute(d, w, wperm, 3)), d_dim_list(d, &bias, 1), LIST(I(1)),
         LIST(I(pad)), LIST(I(1)), B(false), LIST(I(0)), I(1), LIST(B(true), B(true), B(true))) < 3)
    return;
  d_out(d, 0, D(d, "aten.clone.default", V(permute(d, outs[0], from_ncl, 3))));
  d_out(d, 1, D(d, "aten.clone.default", V(permute(d, outs[1], wperm, 3))));
  d_out(d, 2, outs[2]);
}

/* _convolution_double_backward(ggI, ggW, ggb, gO, weight, self, stride,
 * padding, dilation, transposed, output_padding, groups, output_mask) ->
 * (ggO, gI, gW): the gradients of convolution_backward's outputs. ggO =
 * conv(ggI, w) + conv(x, ggW) + ggb; gW comes from conv(ggI, .) and gI from
 * conv(., ggW), both against gO. Where PyTorch leaves one undefined (its
 * gg is None) it is zeros here. */
static void convolution_double_backward(decomp *d) {
  alloy_value *ggI = d_tensor(d, 0), *ggW = d_tensor(d, 1), *ggb = d_tensor(d, 2);
  alloy_value *gO = d_tensor(d, 3), *w = d_tensor(d, 4), *x = d_tensor(d, 5);
  alloy_arg stride = *d_arg(d, 6), pad = *d_arg(d, 7), dil = *d_arg(d, 8), tr = *d_arg(d, 9),
            opad = *d_arg(d, 10), groups = *d_arg(d, 11);
  alloy_value *ggO = NULL, *gW = NULL, *gI = NULL, *outs[3];
  if (ggI) {
    ggO = D(d, "aten.convolution.default", V(ggI), V(w), NONE, stride, pad, dil, tr, opad, groups);
    if (DN(d, "aten.convolution_backward.default", outs, 3, V(gO), V(ggI), V(w), NONE, stride, pad, dil, tr,
           opad, groups, LIST(B(false), B(true), B(false))) == 3)
      gW = outs[1];
  }
  if (ggW) {
    alloy_value *c = D(d, "aten.convolution.default", V(x), V(ggW), NONE, stride, pad, dil, tr, opad, groups);
    ggO = ggO ? nn_add(d, ggO, c) : c;
    if (DN(d, "aten.convolution_backward.default", outs, 3, V(gO), V(x), V(ggW), NONE, stride, pad, dil, tr,
           opad, groups, LIST(B(true), B(false), B(false))) == 3)
      gI = outs[0];
  }
  if (ggb) {
    alloy_dim bs[ALLOY_MAX_RANK];
    int r = d_rank(gO);
    for (int k = 0; k < r; k++) bs[k] = k == 1 ? d_shape(ggb)[0] : C(1);
    alloy_value *b = D(d, "aten.expand.default", V(nn_view(d, ggb, bs, r)), d_dim_list(d, d_shape(gO), r));
    ggO = ggO ? nn_add(d, ggO, b) : b;
  }
  if (d_failed(d)) return;
  d_out(d, 0, ggO ? d_to(d, ggO, d_out_dtype(d, 0)) : zeros(d, d_shape(gO), d_rank(gO), d_out_dtype(d, 0)));
  d_out(d, 1, gI ? gI : zeros(d, d_shape(x), d_rank(x), d_out_dtype(d, 1)));
  d_out(d, 2, gW ? gW : zeros(d, d_shape(w), d_rank(w), d_out_dtype(d, 2)));
}

/* --- embedding ---------------------------------------------------------------------------*/

/* embedding_backward(grad, indices, num_weights, padding_idx,
 * scale_grad_by_freq, sparse): the dense gradient */
static void embedding_backward(decomp *d) {
  if (d_bool(d, 5)) return d_decline(d, "sparse gradients are not decomposed");
  d_out(d, 0, D(d, "aten.embedding_dense_backward.default", V(d_tensor(d, 0)), V(d_tensor(d, 1)),
                *d_arg(d, 2), *d_arg(d, 3), *d_arg(d, 4)));
}

/* --- embedding bags ----------------------------------------------------------------------*/

/* The bag of each index: offset2bag as given, or, where the forward left
 * it empty (its fast sum path), made from the offsets as ATen does: a 1 at
 * each bag's first index, the first taken back, a running sum. */
static alloy_value *offset2bag_of(decomp *d, alloy_value *o2b, alloy_value *idx, alloy_value *offsets) {
  if (!d_known_empty(o2b) || d_known_empty(idx)) return o2b;
  alloy_dim l = d_shape(idx)[0], l1 = alloy_dim_add(d_symtab(d), l, C(1));
  alloy_value *ones = D(d, "aten.full.default", d_dim_list(d, d_shape(offsets), 1), I(1), DT(ALLOY_I64));
  alloy_value *starts = D(d, "aten.scatter_add.default", V(zeros(d, &l1, 1, ALLOY_I64)), I(0),
                          V(d_to(d, offsets, ALLOY_I64)), V(ones));
  alloy_value *first = D(d, "aten.arange.start_step", I(0), SYM(l1), I(1), DT(ALLOY_I64));
  starts = nn_sub(d, starts, d_to(d, D(d, "aten.eq.Scalar", V(first), I(0)), ALLOY_I64));
  alloy_value *bags = D(d, "aten.cumsum.default", V(starts), I(0));
  return D(d, "aten.slice.Tensor", V(bags), I(0), I(0), SYM(l));
}

/* _embedding_bag_dense_backward(grad, indices, offset2bag, bag_size,
 * maximum_indices, num_weights, scale_grad_by_freq, mode,
 * per_sample_weights, padding_idx): sum and mean add each index's bag
 * gradient, scaled by its weight, 1 / the index's count (see below) and 1 /
 * the bag's size (the scale in double, then in the dtype, as the CPU
 * kernel's axpy);
 * max adds each bag's gradient at its maxima, empty bags left out. */
static void embedding_bag_dense_backward_of(decomp *d, alloy_value *g, alloy_value *idx, alloy_value *o2b,
                                            alloy_value *bag_size, alloy_value *maxi, alloy_dim nw,
                                            bool by_freq, int64_t mode, alloy_value *psw, int64_t pad) {
  alloy_dtype t = d_dtype(g);
  alloy_dim out[2] = {nw, d_shape(g)[1]};
  if (mode == 2) {
    alloy_value *live = nn_unsqueeze(d, D(d, "aten.ne.Scalar", V(bag_size), I(0)), 1);
    alloy_value *at = D(d, "aten.where.self", V(live), V(d_to(d, maxi, ALLOY_I64)), I(0));
    alloy_value *src = D(d, "aten.where.self", V(live), V(g), I(0));
    d_out(d, 0, D(d, "aten.scatter_add.default", V(zeros(d, out, 2, t)), I(0), V(at), V(src)));
    return;
  }
  idx = d_to(d, idx, ALLOY_I64);
  o2b = d_to(d, o2b, ALLOY_I64);
  alloy_value *scale = psw ? d_to(d, psw, ALLOY_F64)
                           : D(d, "aten.full.default", d_dim_list(d, d_shape(idx), 1), F(1.0), DT(ALLOY_F64));
  if (by_freq) {
    /* The CPU kernel divides the gradient of the i-th distinct index (in
     * ascending order) by the count of sorted_indices[i], not of the index
     * itself; that is PyTorch's result, so it is the rule's too. */
    alloy_value *ones = D(d, "aten.full.default", d_dim_list(d, d_shape(idx), 1), I(1), DT(ALLOY_I64));
    alloy_value *counts =
        D(d, "aten.scatter_add.default", V(zeros(d, &nw, 1, ALLOY_I64)), I(0), V(idx), V(ones));
    alloy_value *seen = d_to(d, D(d, "aten.gt.Scalar", V(counts), I(0)), ALLOY_I64);
    alloy_value *rank = nn_sub(d, D(d, "aten.cumsum.default", V(seen), I(0)), seen);
    alloy_value *sorted[2];
    if (DN(d, "aten.sort.default", sorted, 2, V(idx)) < 2) return;
    alloy_value *group = D(d, "aten.index_select.default", V(rank), I(0), V(idx));
    alloy_value *by = D(d, "aten.index_select.default", V(sorted[0]), I(0), V(group));
    scale = D(d, "aten.div.Tensor", V(scale), V(D(d, "aten.index_select.default", V(counts), I(0), V(by))));
  }
  if (mode == 1) {
    alloy_value *size = D(d, "aten.index_select.default", V(d_to(d, bag_size, ALLOY_I64)), I(0), V(o2b));
    alloy_value *nz = D(d, "aten.ne.Scalar", V(size), I(0));
    scale = D(d, "aten.where.self", V(nz), V(D(d, "aten.div.Tensor", V(scale), V(size))), V(scale));
  }
  scale = D(d, "aten.where.self", V(D(d, "aten.ne.Scalar", V(idx), I(pad))), V(scale), F(0.0));
  alloy_value *rows = D(d, "aten.index_select.default", V(g), I(0), V(o2b));
  rows = nn_mul(d, rows, nn_unsqueeze(d, d_to(d, scale, t), 1));
  alloy_dim rs[2] = {d_shape(idx)[0], d_shape(g)[1]};
  alloy_value *at = D(d, "aten.expand.default", V(nn_unsqueeze(d, idx, 1)), d_dim_list(d, rs, 2));
  d_out(d, 0, D(d, "aten.scatter_add.default", V(zeros(d, out, 2, t)), I(0), V(at), V(rows)));
}

static int64_t padding_idx_of(decomp *d, int i) { return d_is_none(d, i) ? -1 : d_int(d, i); }

static void embedding_bag_dense_backward(decomp *d) {
  embedding_bag_dense_backward_of(d, d_tensor(d, 0), d_tensor(d, 1), d_tensor(d, 2), d_tensor(d, 3),
                                  d_tensor(d, 4), d_dim(d, 5), d_bool(d, 6), d_int(d, 7), d_tensor(d, 8),
                                  padding_idx_of(d, 9));
}

/* _embedding_bag_backward(grad, indices, offsets, offset2bag, bag_size,
 * maximum_indices, num_weights, scale_grad_by_freq, mode, sparse,
 * per_sample_weights, padding_idx): the dense backward */
static void embedding_bag_backward(decomp *d) {
  if (d_bool(d, 9)) return d_decline(d, "sparse gradients are not decomposed");
  alloy_value *idx = d_tensor(d, 1);
  alloy_value *o2b = offset2bag_of(d, d_tensor(d, 3), idx, d_tensor(d, 2));
  embedding_bag_dense_backward_of(d, d_tensor(d, 0), idx, o2b, d_tensor(d, 4), d_tensor(d, 5), d_dim(d, 6),
                                  d_bool(d, 7), d_int(d, 8), d_tensor(d, 10), padding_idx_of(d, 11));
}

/* _embedding_bag_per_sample_weights_backward(grad, weight, indices,
 * offsets, offset2bag, mode, padding_idx): each index's weight gets the dot
 * product of its bag's gradient with its embedding (0 at padding_idx) */
static void embedding_bag_per_sample_weights_backward(decomp *d) {
  if (d_int(d, 5) != 0) return (void)d_fail(d, "per_sample_weights are only supported for mode 'sum'");
  alloy_value *g = d_tensor(d, 0), *w = d_tensor(d, 1), *idx = d_to(d, d_tensor(d, 2), ALLOY_I64);
  alloy_value *o2b = offset2bag_of(d, d_tensor(d, 4), idx, d_tensor(d, 3));
  alloy_dtype t = d_dtype(g), c = d_opmath(t);
  alloy_value *rows = d_to(d, D(d, "aten.index_select.default", V(g), I(0), V(d_to(d, o2b, ALLOY_I64))), c);
  alloy_value *emb = d_to(d, D(d, "aten.index_select.default", V(w), I(0), V(idx)), c);
  alloy_value *dot = D(d, "aten.sum.dim_IntList", V(nn_mul(d, rows, emb)), LIST(I(1)));
  dot = D(d, "aten.where.self", V(D(d, "aten.ne.Scalar", V(idx), I(padding_idx_of(d, 6)))), V(dot), F(0.0));
  d_out(d, 0, d_to(d, dot, t));
}

/* --- distances -------------------------------------------------------------------------*/

/* The gradient of a p-norm distance d = |diff|_p with respect to diff,
 * times grad, as the CPU kernels write it per p (0 where d is 0). */
static alloy_value *dist_grad(decomp *d, alloy_value *diff, alloy_value *g, alloy_value *dist, double p) {
  alloy_value *sign = D(d, "aten.sign.default", V(diff));
  alloy_value *zero = D(d, "aten.eq.Scalar", V(dist), I(0));
  alloy_value *r;
  if (p == 1) return nn_mul(d, g, sign);
  if (isinf(p)) {
    alloy_value *at = D(d, "aten.eq.Tensor", V(D(d, "aten.abs.default", V(diff))), V(dist));
    return nn_mul(d, nn_mul(d, g, sign), d_to(d, at, d_dtype(diff)));
  }
  if (p == 2) {
    r = D(d, "aten.div.Tensor", V(nn_mul(d, g, diff)), V(dist));
  } else if (p < 2) {
    alloy_value *a = D(d, "aten.pow.Tensor_Scalar", V(D(d, "aten.abs.default", V(diff))), F(p - 1));
    r = D(d, "aten.div.Tensor", V(nn_mul(d, nn_mul(d, sign, a), g)),
          V(D(d, "aten.pow.Tensor_Scalar", V(dist), F(p - 1))));
    if (p < 1) r = D(d, "aten.where.self", V(D(d, "aten.eq.Scalar", V(diff), I(0))), F(0.0), V(r));
  } else {
    alloy_value *a = D(d, "aten.pow.Tensor_Scalar", V(D(d, "aten.abs.default", V(diff))), F(p - 2));
    r = D(d, "aten.div.Tensor", V(nn_mul(d, nn_mul(d, diff, a), g)),
          V(D(d, "aten.pow.Tensor_Scalar", V(dist), F(p - 1))));
  }
  return D(d, "aten.where.self", V(zero), F(0.0), V(r));
}

/* _cdist_backward(grad, x1, x2, p, cdist): for each row of x1, the sum over
 * the rows of x2 of the distance's gradient; the batch dims broadcast. */
static void cdist_backward(decomp *d) {
  alloy_value *g = d_tensor(d, 0), *x1 = d_tensor(d, 1), *x2 = d_tensor(d, 2), *dist = d_tensor(d, 4);
  double p = d_float(d, 3);
  const alloy_value *out = alloy_node_output(d_node(d), 0);
  if (p == 0 || d_known_empty(out)) {
    d_out(d, 0, zeros(d, d_shape(out), d_rank(out), d_dtype(out)));
    return;
  }
  alloy_value *diff = nn_sub(d, nn_unsqueeze(d, x1, -2), nn_unsqueeze(d, x2, -3));
  alloy_value *r = dist_grad(d, diff, nn_unsqueeze(d, g, -1), nn_unsqueeze(d, dist, -1), p);
  r = D(d, "aten.sum.dim_IntList", V(r), LIST(I(-2)));
  d_out(d, 0, D(d, "aten.expand.default", V(r), d_dim_list(d, d_shape(out), d_rank(out))));
}

/* _pdist_backward(grad, self, p, pdist): the pairs i < j in pdist's order
 * are the true cells of an upper triangle; each pair's gradient goes to
 * row i and, negated, to row j. */
static void pdist_backward(decomp *d) {
  alloy_value *g = d_tensor(d, 0), *x = d_tensor(d, 1), *dist = d_tensor(d, 3);
  double p = d_float(d, 2);
  alloy_dim n = d_shape(x)[0], nn2[2] = {n, n};
  if (p == 0 || d_known_empty(x) || d_known_empty(g)) {
    d_out(d, 0, zeros(d, d_shape(x), d_rank(x), d_dtype(x)));
    return;
  }
  alloy_value *i = D(d, "aten.arange.start_step", I(0), SYM(n), I(1), DT(ALLOY_I64));
  alloy_value *upper = D(d, "aten.lt.Tensor", V(nn_unsqueeze(d, i, 1)), V(nn_unsqueeze(d, i, 0)));
  alloy_value *gm = D(d, "aten.masked_scatter.default", V(zeros(d, nn2, 2, d_dtype(g))), V(upper), V(g));
  alloy_value *dm =
      D(d, "aten.masked_scatter.default", V(zeros(d, nn2, 2, d_dtype(dist))), V(upper), V(dist));
  alloy_value *diff = nn_sub(d, nn_unsqueeze(d, x, 1), nn_unsqueeze(d, x, 0));
  alloy_value *r = dist_grad(d, diff, nn_unsqueeze(d, gm, 2), nn_unsqueeze(d, dm, 2), p);
  r = D(d, "aten.where.self", V(nn_unsqueeze(d, upper, 2)), V(r), F(0.0));
  alloy_value *rows = D(d, "aten.sum.dim_IntList", V(r), LIST(I(1)));
  alloy_value *cols = D(d, "aten.sum.dim_IntList", V(r), LIST(I(0)));
  d_out(d, 0, nn_sub(d, rows, cols));
}

/* --- grids, sequences, matrices --------------------------------------------------------*/

/* ATen's linspace_from_neg_one: n points from -1 to 1 (scaled by (n - 1)
 * / n without align_corners), or one 0. */
static alloy_value *neg_one_to_one(decomp *d, int64_t n, bool align, alloy_dtype t) {
  if (n <= 1) return zeros(d, (alloy_dim[]){C(1)}, 1, t);
  alloy_value *r = D(d, "aten.linspace.default", I(-1), I(1), I(n), DT(t));
  if (!align) r = D(d, "aten.div.Tensor", V(D(d, "aten.mul.Tensor", V(r), I(n - 1))), I(n));
  return r;
}

/* affine_grid_generator_backward(grad, size, align_corners): the base grid
 * ([x, y, 1] per pixel, or [x, y, z, 1]) transposed times the grid's
 * gradient, per batch item */
static void affine_grid_generator_backward(decomp *d) {
  alloy_value *g = d_tensor(d, 0);
  int64_t size[5];
  int n = d_ints(d, 1, size, 5);
  if (n != 4 && n != 5) return (void)d_fail(d, "argument 'size' must have 4 or 5 items");
  bool align = d_bool(d, 2);
  alloy_dtype t = d_dtype(g);
  int ns = n - 2; /* spatial dims */
  alloy_dim grid[4];
  for (int k = 0; k < ns; k++) grid[k] = C(size[2 + k]);
  grid[ns] = C(1);
  /* coordinate k of the base grid varies along spatial dim ns - 1 - k */
  alloy_value *coords[4];
  for (int k = 0; k < ns; k++) {
    int along = ns - 1 - k;
    alloy_dim view[4];
    for (int j = 0; j < ns + 1; j++) view[j] = C(1);
    view[along] = C(size[2 + along] > 1 ? size[2 + along] : 1);
    alloy_value *c = nn_view(d, neg_one_to_one(d, size[2 + along], align, t), view, ns + 1);
    coords[k] = D(d, "aten.expand.default", V(c), d_dim_list(d, grid, ns + 1));
  }
  coords[ns] = D(d, "aten.full.default", d_dim_list(d, grid, ns + 1), I(1), DT(t));
  alloy_value *base = D(d, "aten.cat.default", d_value_list(d, coords, ns + 1), I(ns));
  alloy_dim pix = C(1);
  for (int k = 0; k < ns; k++) pix = alloy_dim_mul(d_symtab(d), pix, C(size[2 + k]));
  alloy_dim b2[2] = {pix, C(ns + 1)}, g3[3] = {C(size[0]), pix, C(ns)};
  alloy_value *th = nn_matmul(d, nn_mT(d, nn_reshape(d, base, b2, 2)), nn_reshape(d, g, g3, 3));
  d_out(d, 0, D(d, "aten.clone.default", V(nn_mT(d, th))));
}

/* matrix_exp_backward(self, grad): the top-right block of exp([[A^H, G],
 * [0, A^H]]), the derivative of an analytic matrix function */
static void matrix_exp_backward(decomp *d) {
  alloy_value *a = d_tensor(d, 0), *g = d_tensor(d, 1);
  if (alloy_dtype_is_complex(d_dtype(a))) return d_decline(d, "complex matrices are not decomposed");
  int r = d_rank(a);
  alloy_value *at = nn_mT(d, a);
  alloy_value *top[2] = {at, g}, *bottom[2] = {zeros(d, d_shape(a), r, d_dtype(a)), at};
  alloy_value *rows[2] = {D(d, "aten.cat.default", d_value_list(d, top, 2), I(r - 1)),
                          D(d, "aten.cat.default", d_value_list(d, bottom, 2), I(r - 1))};
  alloy_value *big = D(d, "aten.cat.default", d_value_list(d, rows, 2), I(r - 2));
  alloy_value *e = D(d, "aten.linalg_matrix_exp.default", V(big));
  alloy_dim n = d_shape(a)[r - 1], n2 = alloy_dim_mul(d_symtab(d), n, C(2));
  e = D(d, "aten.slice.Tensor", V(e), I(r - 2), I(0), SYM(n));
  e = D(d, "aten.slice.Tensor", V(e), I(r - 1), SYM(n), SYM(n2));
  d_out(d, 0, D(d, "aten.clone.default", V(e)));
}

/* --- grid sampling -----------------------------------------------------------------------*/

/* One coordinate of a grid: the source position along a dim of `size`,
 * and the factor d(position)/d(grid value). As the CPU kernel's
 * vectorized ComputeLocation: unnormalized from [-1, 1] (to [0, size - 1]
 * with align_corners, else to [-0.5, size - 0.5]), then clipped (border)
 * or reflected and clipped (reflection), the factor the scaling times
 * +-1 or 0 of those steps. */
typedef struct {
  alloy_value *at, *mult;
} grid_coord;

static grid_coord grid_source(decomp *d, alloy_value *c, alloy_dim size, int64_t padding, bool align) {
  alloy_symtab *st = d_symtab(d);
  alloy_dim last = alloy_dim_sub(st, size, C(1));
  alloy_value *sz = D(d, "aten.scalar_tensor.default", SYM(align ? last : size), DT(d_dtype(c)));
  alloy_value *scale = D(d, "aten.div.Tensor", V(sz), I(2));
  alloy_value *x = nn_mul(d, D(d, "aten.add.Tensor", V(c), I(1)), scale);
  if (!align) x = D(d, "aten.sub.Tensor", V(x), F(0.5));
  alloy_value *mult = D(d, "aten.expand.default", V(scale), d_dim_list(d, d_shape(c), d_rank(c)));
  if (padding == 2) { /* reflection about [0, size - 1] or [-0.5, size - 0.5] */
    alloy_value *span = D(d, "aten.mul.Tensor", V(D(d, "aten.scalar_tensor.default", SYM(align ? last : size),
                                                    DT(d_dtype(c)))), I(2));
    alloy_value *from = align ? x : D(d, "aten.add.Tensor", V(x), F(0.5));
    alloy_value *neg = D(d, "aten.lt.Scalar", V(from), I(0));
    alloy_value *mag = D(d, "aten.abs.default", V(from));
    alloy_value *flips = D(d, "aten.trunc.default", V(D(d, "aten.div.Tensor", V(mag), V(span))));
    alloy_value *extra = nn_sub(d, mag, nn_mul(d, flips, span));
    alloy_value *back = nn_sub(d, span, extra);
    alloy_value *more = D(d, "aten.gt.Tensor", V(extra), V(back));
    alloy_value *r = D(d, "aten.where.self", V(more), V(back), V(extra));
    if (!align) r = D(d, "aten.sub.Tensor", V(r), F(0.5));
    alloy_value *sign =
        D(d, "aten.where.self", V(D(d, "aten.logical_xor.default", V(more), V(neg))), I(-1), I(1));
    alloy_value *flat = D(d, "aten.eq.Scalar", V(span), I(0));
    x = D(d, "aten.where.self", V(flat), F(0.0), V(r));
    mult = D(d, "aten.where.self", V(flat), F(0.0), V(nn_mul(d, mult, sign)));
  }
  if (padding == 1 || padding == 2) {
    alloy_value *hi = D(d, "aten.scalar_tensor.default", SYM(last), DT(d_dtype(c)));
    alloy_value *inside = D(d, "aten.logical_and.default", V(D(d, "aten.gt.Scalar", V(x), I(0))),
                            V(D(d, "aten.lt.Tensor", V(x), V(hi))));
    mult = D(d, "aten.where.self", V(inside), V(mult), F(0.0));
    x = D(d, "aten.clamp.Tensor", V(D(d, "aten.clamp.default", V(x), I(0))), NONE, V(hi));
  }
  return (grid_coord){x, mult};
}

/* grid_sampler_{2,3}d_backward(grad_output, input, grid, interpolation,
 * padding, align_corners, output_mask) -> (grad_input, grad_grid), for
 * bilinear and nearest interpolation. Each output position reads the
 * corners around its source position (2^n of them, or the nearest one);
 * the input's gradient is the output gradient added back at the corners
 * in bounds with their weights, the grid's the change of those weights
 * along each coordinate times the corner values, summed over channels,
 * times the coordinate's factor. Coordinate k of the grid runs along
 * spatial dim n - 1 - k (x along the width). */
static void grid_sampler_backward(decomp *d) {
  alloy_value *g = d_tensor(d, 0), *x = d_tensor(d, 1), *grid = d_tensor(d, 2);
  int64_t mode = d_int(d, 3), padding = d_int(d, 4);
  bool align = d_bool(d, 5);
  int n = d_rank(x) - 2;
  if (mode == 2) return d_decline(d, "bicubic interpolation is not decomposed");
  if (mode != 0 && mode != 1) return (void)d_fail(d, "argument 'interpolation_mode' must be 0, 1 or 2");
  if (n < 2 || n > 3) return (void)d_fail(d, "the input must be 4-d or 5-d");
  alloy_dtype t = d_dtype(x), c = d_opmath(t);
  alloy_symtab *st = d_symtab(d);
  const alloy_dim *xs = d_shape(x), *gs = d_shape(grid);
  alloy_dim nb = xs[0], ch = xs[1], in_pix = nn_prod(d, xs + 2, n), out_pix = nn_prod(d, gs + 1, n);
  alloy_dim flat_in[3] = {nb, ch, in_pix}, flat_out[3] = {nb, ch, out_pix}, flat_grid[2] = {nb, out_pix};
  alloy_value *xf = nn_reshape(d, d_to(d, x, c), flat_in, 3);
  alloy_value *gf = nn_reshape(d, d_to(d, g, c), flat_out, 3);
  grid_coord at[3];
  alloy_value *lo[3], *frac[3];
  for (int k = 0; k < n; k++) {
    alloy_value *ck =
        nn_reshape(d, D(d, "aten.select.int", V(d_to(d, grid, c)), I(n + 1), I(k)), flat_grid, 2);
    at[k] = grid_source(d, ck, xs[2 + n - 1 - k], padding, align);
    lo[k] = D(d, mode == 0 ? "aten.floor.default" : "aten.round.default", V(at[k].at));
    frac[k] = nn_sub(d, at[k].at, lo[k]); /* the weight of the upper corner */
  }
  int corners = mode == 0 ? 1 << n : 1;
  alloy_value *gi = zeros(d, flat_in, 3, c);
  alloy_value *gcoord[3] = {NULL, NULL, NULL};
  for (int q = 0; q < corners && !d_failed(d); q++) {
    alloy_value *inb = NULL, *flat = NULL, *w[3];
    for (int k = 0; k < n; k++) {
      bool up = (q >> k) & 1;
      alloy_value *idx = up ? D(d, "aten.add.Tensor", V(lo[k]), I(1)) : lo[k];
      w[k] = up ? frac[k] : D(d, "aten.rsub.Scalar", V(frac[k]), I(1));
      alloy_dim size = xs[2 + n - 1 - k];
      alloy_value *ok = D(d, "aten.logical_and.default", V(D(d, "aten.ge.Scalar", V(idx), I(0))),
                          V(D(d, "aten.lt.Scalar", V(idx), SYM(size))));
      inb = inb ? D(d, "aten.logical_and.default", V(inb), V(ok)) : ok;
      /* the flat position: x + W (y + H z) */
      alloy_value *ii = d_to(d, idx, ALLOY_I64);
      alloy_dim stride = C(1);
      for (int j = 0; j < k; j++) stride = alloy_dim_mul(st, stride, xs[2 + n - 1 - j]);
      alloy_value *term = D(d, "aten.mul.Tensor", V(ii), SYM(stride));
      flat = flat ? nn_add(d, flat, term) : term;
    }
    flat = D(d, "aten.where.self", V(inb), V(flat), I(0));
    alloy_value *weight = mode == 0 ? w[0] : NULL;
    for (int k = 1; k < n && mode == 0; k++) weight = nn_mul(d, weight, w[k]);
    alloy_value *live = nn_unsqueeze(d, inb, 1);
    alloy_value *idx3 = D(d, "aten.expand.default", V(nn_unsqueeze(d, flat, 1)), d_dim_list(d, flat_out, 3));
    alloy_value *src = weight ? nn_mul(d, gf, nn_unsqueeze(d, weight, 1)) : gf;
    src = D(d, "aten.where.self", V(live), V(src), F(0.0));
    gi = D(d, "aten.scatter_add.default", V(gi), I(2), V(idx3), V(src));
    if (mode != 0) continue;
    /* the corner's value times the output gradient, summed over channels */
    alloy_value *v = D(d, "aten.gather.default", V(xf), I(2), V(idx3));
    alloy_value *vg = D(d, "aten.sum.dim_IntList",
                        V(D(d, "aten.where.self", V(live), V(nn_mul(d, v, gf)), F(0.0))), LIST(I(1)));
    for (int k = 0; k < n; k++) {
      alloy_value *dw = NULL; /* d(weight)/d(coordinate k) without its sign */
      for (int j = 0; j < n; j++)
        if (j != k) dw = dw ? nn_mul(d, dw, w[j]) : w[j];
      alloy_value *term = nn_mul(d, vg, dw);
      if (!((q >> k) & 1)) term = nn_neg(d, term);
      gcoord[k] = gcoord[k] ? nn_add(d, gcoord[k], term) : term;
    }
  }
  alloy_dim gshape[ALLOY_MAX_RANK];
  memcpy(gshape, gs, sizeof *gs * (size_t)(n + 1));
  gshape[n + 1] = C(1);
  alloy_value *parts[3];
  for (int k = 0; k < n; k++) {
    alloy_value *gk = mode == 0 ? nn_mul(d, gcoord[k], at[k].mult) : zeros(d, flat_grid, 2, c);
    parts[k] = nn_reshape(d, gk, gshape, n + 2);
  }
  if (d_failed(d)) return;
  d_out(d, 0, d_to(d, nn_view(d, gi, xs, n + 2), d_out_dtype(d, 0)));
  d_out(d, 1, d_to(d, D(d, "aten.cat.default", d_value_list(d, parts, n), I(n + 1)), d_out_dtype(d, 1)));
}

/* --- small ones --------------------------------------------------------------------------*/

/* to_dense_backward(grad, input, masked_grad): a strided input's gradient
 * is grad itself */
static void to_dense_backward(decomp *d) { d_out(d, 0, D(d, "aten.clone.default", V(d_tensor(d, 0)))); }

/* fake_quantize_per_{tensor,channel}_affine_cachemask_backward(grad, mask):
 * the gradient where the value was inside the quantization range */
static void fake_quantize_cachemask_backward(decomp *d) {
  alloy_value *g = d_tensor(d, 0);
  d_out(d, 0, nn_mul(d, g, d_to(d, d_tensor(d, 1), d_dtype(g))));
}

/* _masked_softmax_backward(grad, output, mask, dim): softmax's gradient on
 * the unmasked elements (mask false), 0 on the masked */
static void masked_softmax_backward(decomp *d) {
  alloy_value *g = d_tensor(d, 0), *y = d_tensor(d, 1), *mask = d_tensor(d, 2);
  alloy_dtype t = d_dtype(g), c = d_opmath(t);
  int rank = d_rank(g);
  int dim = d_is_none(d, 3) ? rank - 1 : d_wrap_dim(d, d_int(d, 3), rank > 0 ? rank : 1);
  if (rank == 0) return d_decline(d, "a zero-dim gradient is not decomposed");
  g = d_to(d, g, c);
  y = d_to(d, y, c);
  alloy_value *gy = D(d, "aten.where.self", V(mask), F(0.0), V(nn_mul(d, g, y)));
  alloy_value *sum = D(d, "aten.sum.dim_IntList", V(gy), LIST(I(dim)), B(true));
  alloy_value *gi = D(d, "aten.where.self", V(mask), F(0.0), V(nn_mul(d, y, nn_sub(d, g, sum))));
  d_out(d, 0, d_to(d, gi, t));
}

/* glu_jvp(glu, x, dx, dim): with b the second half of x, s = sigmoid(b)
 * and da, db the halves of dx: da s + glu (db - s db) */
static void glu_jvp(decomp *d) {
  alloy_value *y = d_tensor(d, 0), *x = d_tensor(d, 1), *dx = d_tensor(d, 2);
  int rank = d_rank(x), dim = d_wrap_dim(d, d_int(d, 3), rank);
  if (d_failed(d)) return;
  alloy_dim h = alloy_dim_floordiv(d_symtab(d), d_shape(x)[dim], C(2)),
            n = d_shape(x)[dim];
  alloy_value *b = D(d, "aten.slice.Tensor", V(x), I(dim), SYM(h), SYM(n));
  alloy_value *da = D(d, "aten.slice.Tensor", V(dx), I(dim), I(0), SYM(h));
  alloy_value *db = D(d, "aten.slice.Tensor", V(dx), I(dim), SYM(h), SYM(n));
  alloy_value *sb = D(d, "aten.reciprocal.default",
                      V(D(d, "aten.add.Tensor", V(D(d, "aten.exp.default", V(nn_neg(d, b)))), I(1))));
  d_out(d, 0, nn_add(d, nn_mul(d, da, sb), nn_mul(d, y, nn_sub(d, db, nn_mul(d, sb, db)))));
}

const decomp_rule decomp_rules_backward_nn[] = {
    {"aten.max_pool3d_with_indices_backward.default", max_pool3d_backward, DECOMP_TO_CORE},
    {"aten.adaptive_max_pool2d_backward.default", adaptive_max_pool2d_backward, DECOMP_TO_CORE},
    {"aten.adaptive_max_pool3d_backward.default", adaptive_max_pool3d_backward, DECOMP_TO_CORE},
    {"aten.fractional_max_pool2d_backward.default", fractional_max_pool2d_backward, DECOMP_TO_CORE},
    {"aten.fractional_max_pool3d_backward.default", fractional_max_pool3d_backward, DECOMP_TO_CORE},
    {"aten.avg_pool3d_backward.default", avg_pool3d_backward, DECOMP_TO_CORE},
    {"aten._adaptive_avg_pool3d_backward.default", adaptive_avg_pool3d_backward, DECOMP_TO_CORE},
    {"aten.reflection_pad1d_backward.default", reflection_pad1d_backward, DECOMP_TO_CORE},
    {"aten.reflection_pad2d_backward.default", reflection_pad2d_backward, DECOMP_TO_CORE},
    {"aten.reflection_pad3d_backward.default", reflection_pad3d_backward, DECOMP_TO_CORE},
    {"aten.replication_pad1d_backward.default", replication_pad1d_backward, DECOMP_TO_CORE},
    {"aten.replication_pad2d_backward.default", replication_pad2d_backward, DECOMP_TO_CORE},
    {"aten.replication_pad3d_backward.default", replication_pad3d_backward, DECOMP_TO_CORE},
    {"aten.upsample_nearest1d_backward.default", upsample_backward, DECOMP_TO_CORE},
    {"aten.upsample_nearest2d_backward.default", upsample_backward, DECOMP_TO_CORE},
    {"aten.upsample_nearest3d_backward.default", upsample_backward, DECOMP_TO_CORE},
    {"aten._upsample_nearest_exact1d_backward.default", upsample_backward, DECOMP_TO_CORE},
    {"aten._upsample_nearest_exact2d_backward.default", upsample_backward, DECOMP_TO_CORE},
    {"aten._upsample_nearest_exact3d_backward.default", upsample_backward, DECOMP_TO_CORE},
    {"aten.upsample_linear1d_backward.default", upsample_backward, DECOMP_TO_CORE},
    {"aten.upsample_bilinear2d_backward.default", upsample_backward, DECOMP_TO_CORE},
    {"aten.upsample_trilinear3d_backward.default", upsample_backward, DECOMP_TO_CORE},
    {"aten.upsample_bicubic2d_backward.default", upsample_backward, DECOMP_TO_CORE},
    {"aten._upsample_bilinear2d_aa_backward.default", upsample_backward, DECOMP_TO_CORE},
    {"aten._upsample_bicubic2d_aa_backward.default", upsample_backward, DECOMP_TO_CORE},
    {"aten.native_batch_norm_backward.default", native_batch_norm_backward, DECOMP_TO_CORE},
    {"aten.batch_norm_backward.default", native_batch_norm_backward, DECOMP_TO_CORE},
    {"aten._batch_norm_impl_index_backward.default", batch_norm_impl_index_backward, DECOMP_TO_CORE},
    {"aten.cudnn_batch_norm_backward.default", vendor_batch_norm_backward, DECOMP_TO_CORE},
    {"aten.miopen_batch_norm_backward.default", vendor_batch_norm_backward, DECOMP_TO_CORE},
    {"aten.batch_norm_backward_reduce.default", batch_norm_backward_reduce, DECOMP_TO_CORE},
    {"aten.batch_norm_backward_elemt.default", batch_norm_backward_elemt, DECOMP_TO_CORE},
    {"aten._fused_rms_norm_backward.default", fused_rms_norm_backward, DECOMP_TO_CORE},
    {"aten._weight_norm_interface_backward.default", weight_norm_backward, DECOMP_TO_CORE},
    {"aten._weight_norm_differentiable_backward.default", weight_norm_backward, DECOMP_TO_CORE},
    {"aten._slow_conv2d_backward.output_mask", slow_conv2d_backward, DECOMP_TO_CORE},
    {"aten.conv_tbc_backward.default", conv_tbc_backward, DECOMP_TO_CORE},
    {"aten._convolution_double_backward.default", convolution_double_backward, DECOMP_TO_CORE},
    {"aten.embedding_backward.default", embedding_backward, DECOMP_TO_CORE},
    {"aten._embedding_bag_dense_backward.default", embedding_bag_dense_backward, DECOMP_TO_CORE},
    {"aten._embedding_bag_backward.default", embedding_bag_backward, DECOMP_TO_CORE},
    {"aten._embedding_bag_per_sample_weights_backward.default", embedding_bag_per_sample_weights_backward,
     DECOMP_TO_CORE},
    {"aten._cdist_backward.default", cdist_backward, DECOMP_TO_CORE},
    {"aten._pdist_backward.default", pdist_backward, DECOMP_TO_CORE},
    {"aten.affine_grid_generator_backward.default", affine_grid_generator_backward, DECOMP_TO_CORE},
    {"aten.matrix_exp_backward.default", matrix_exp_backward, DECOMP_TO_CORE},
    {"aten.to_dense_backward.default", to_dense_backward, DECOMP_TO_CORE},
    {"aten.fake_quantize_per_tensor_affine_cachemask_backward.default", fake_quantize_cachemask_backward,
     DECOMP_TO_CORE},
    {"aten.fake_quantize_per_channel_affine_cachemask_backward.default", fake_quantize_cachemask_backward,
     DECOMP_TO_CORE},
    {"aten._masked_softmax_backward.default", masked_softmax_backward, DECOMP_TO_CORE},
    {"aten.glu_jvp.default", glu_jvp, DECOMP_TO_CORE},
    {"aten.grid_sampler_2d_backward.default", grid_sampler_backward, DECOMP_TO_CORE},
    {"aten.grid_sampler_3d_backward.default", grid_sampler_backward, DECOMP_TO_CORE},
    {"aten._grid_sampler_2d_cpu_fallback_backward.default", grid_sampler_backward, DECOMP_TO_CORE},
    {NULL, NULL, 0},
};
