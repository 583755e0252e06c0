/*
 * decompositions/rules_resample.c: the neural-network ops that move
 * values around a grid, from ATen to Core ATen: padding (pad's modes,
 * replication_pad1d), the channel rearrangements (pixel_shuffle,
 * pixel_unshuffle, channel_shuffle) and upsampling (nearest,
 * nearest-exact, linear, bilinear, bicubic, trilinear, antialiased), the
 * grids (grid_sampler, affine_grid_generator).
 *
 * The math follows PyTorch's decompositions (torch/_decomp) and, for the
 * C++ composites (pad), ATen's native code; where the native CPU kernel
 * rounds differently (interpolation weights kept in the dtype) the rule
 * follows the kernel, whose results are the reference. The shared helpers
 * are in rules_nn_util.h.
 */
#include <math.h>
#include <string.h>

#include "decompositions/rules.h"
#include "decompositions/rules_nn_util.h"

/* --- padding -----------------------------------------------------------------------*/

/* Circular padding: each padded dim wraps around, the last columns coming
 * before the first and the first after the last. */
static alloy_value *pad_circular(decomp *d, alloy_value *x, const alloy_dim *pad, int n) {
  for (int k = 0; k < n / 2 && x; k++) {
    int dim = d_rank(x) - 1 - k;
    alloy_dim l = pad[2 * k], r = pad[2 * k + 1], size = d_shape(x)[dim];
    if (!alloy_dim_is_const(l) || !alloy_dim_is_const(r) || l.value < 0 || r.value < 0) {
      d_decline(d, "circular padding by negative or symbolic amounts");
      return NULL;
    }
    alloy_value *parts[3];
    int np = 0;
    if (l.value)
      parts[np++] = D(d, "aten.slice.Tensor", V(x), I(dim),
                      SYM(alloy_dim_sub(d_symtab(d), size, l)), SYM(size));
    parts[np++] = x;
    if (r.value) parts[np++] = D(d, "aten.slice.Tensor", V(x), I(dim), I(0), SYM(r));
    if (np > 1) x = D(d, "aten.cat.default", d_value_list(d, parts, np), I(dim));
  }
  return x;
}

/* The padding op of each mode (the value at argument i_value). */
static void pad_by_mode(decomp *d, const char *mode, int i_value) {
  alloy_value *x = d_tensor(d, 0);
  alloy_dim p[2 * ALLOY_MAX_RANK];
  int n = d_dims(d, 1, p, 2 * ALLOY_MAX_RANK);
  if (d_failed(d)) return;
  if (!mode || !strcmp(mode, "constant")) {
    d_out(d, 0,
          D(d, "aten.constant_pad_nd.default", V(x), d_dim_list(d, p, n),
            d_is_none(d, i_value) ? I(0) : F(d_float(d, i_value))));
    return;
  }
  if (!d_is_none(d, i_value)) {
    d_fail(d, "padding mode \"%s\" does not take a value", mode);
    return;
  }
  int k = n / 2;
  if (n % 2 || k < 1 || k > 3 || (d_rank(x) != k + 1 && d_rank(x) != k + 2))
    return d_decline(d, "%s padding of %d dims of a rank-%d tensor", mode, k, d_rank(x));
  static const char *const reflect[] = {"aten.reflection_pad1d.default",
                                        "aten.reflection_pad2d.default",
                                        "aten.reflection_pad3d.default"};
  static const char *const replicate[] = {"aten.replication_pad1d.default",
                                          "aten.replication_pad2d.default",
                                          "aten.replication_pad3d.default"};
  if (!strcmp(mode, "reflect"))
    d_out(d, 0, D(d, reflect[k - 1], V(x), d_dim_list(d, p, n)));
  else if (!strcmp(mode, "replicate"))
    d_out(d, 0, D(d, replicate[k - 1], V(x), d_dim_list(d, p, n)));
  else if (!strcmp(mode, "circular"))
    d_out(d, 0, pad_circular(d, x, p, n));
  else
    d_fail(d, "unknown padding mode \"%s\"", mode);
}

/* pad(self, pad, mode, value) */
static void pad(decomp *d) { pad_by_mode(d, d_str(d, 2), 3); }

/* _pad_enum(self, pad, mode, value): mode as at::padding_mode numbers it */
static void pad_enum(decomp *d) {
  static const char *const modes[] = {"reflect", "replicate", "circular", "constant"};
  int64_t mode = d_int(d, 2);
  if (d_failed(d)) return;
  if (mode < 0 || mode > 3) {
    d_fail(d, "Unrecognised padding mode %lld", (long long)mode);
    return;
  }
  pad_by_mode(d, modes[mode], 3);
}

/* _pad_circular(self, pad) */
static void pad_circular_op(decomp *d) {
  alloy_dim p[2 * ALLOY_MAX_RANK];
  int n = d_dims(d, 1, p, 2 * ALLOY_MAX_RANK);
  if (d_failed(d)) return;
  alloy_value *y = pad_circular(d, d_tensor(d, 0), p, n);
  if (y) d_out(d, 0, y == d_tensor(d, 0) ? D(d, "aten.clone.default", V(y)) : y);
}

/* replication_pad1d(x, [l, r]) = replication_pad2d of x seen as one row */
static void replication_pad1d(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  alloy_dim p[2];
  if (d_dims(d, 1, p, 2) != 2) return d_decline(d, "padding needs 2 values");
  alloy_dim p4[4] = {p[0], p[1], alloy_dim_const(0), alloy_dim_const(0)};
  alloy_value *y =
      D(d, "aten.replication_pad2d.default", V(nn_unsqueeze(d, x, -2)), d_dim_list(d, p4, 4));
  d_out(d, 0, nn_squeeze(d, y, -2));
}

/* --- rearrangements ----------------------------------------------------------------*/

/* pixel_shuffle: [*, C r r, H, W] -> [*, C, H r, W r], each r x r block of
 * channels spread over a block of pixels; pixel_unshuffle the inverse. */
static void shuffle_pixels(decomp *d, bool un) {
  alloy_value *x = d_tensor(d, 0);
  int64_t f = d_int(d, 1);
  int r = d_rank(x), nb = r - 3;
  if (r < 3) return d_decline(d, "needs [*, C, H, W]");
  alloy_symtab *st = d_symtab(d);
  const alloy_dim *s = d_shape(x);
  alloy_dim fd = alloy_dim_const(f), c = s[r - 3], h = s[r - 2], w = s[r - 1];
  alloy_dim six[ALLOY_MAX_RANK + 3], out[ALLOY_MAX_RANK];
  int64_t perm[ALLOY_MAX_RANK + 3];
  memcpy(six, s, sizeof *six * (size_t)nb);
  memcpy(out, s, sizeof *out * (size_t)nb);
  for (int i = 0; i < nb; i++) perm[i] = i;
  if (!un) {
    /* [*, C, r, r, H, W] -> [*, C, H, r, W, r] */
    alloy_dim oc = alloy_dim_floordiv(st, c, alloy_dim_const(f * f));
    alloy_dim v[5] = {oc, fd, fd, h, w};
    memcpy(six + nb, v, sizeof v);
    int64_t p[5] = {0, 3, 1, 4, 2};
    for (int i = 0; i < 5; i++) perm[nb + i] = nb + p[i];
    out[nb] = oc;
    out[nb + 1] = alloy_dim_mul(st, h, fd);
    out[nb + 2] = alloy_dim_mul(st, w, fd);
  } else {
    /* [*, C, H/r, r, W/r, r] -> [*, C, r, r, H/r, W/r] */
    alloy_dim oh = alloy_dim_floordiv(st, h, fd), ow = alloy_dim_floordiv(st, w, fd);
    alloy_dim v[5] = {c, oh, fd, ow, fd};
    memcpy(six + nb, v, sizeof v);
    int64_t p[5] = {0, 2, 4, 1, 3};
    for (int i = 0; i < 5; i++) perm[nb + i] = nb + p[i];
    out[nb] = alloy_dim_mul(st, c, alloy_dim_const(f * f));
    out[nb + 1] = oh;
    out[nb + 2] = ow;
  }
  alloy_value *y = nn_reshape(d, x, six, nb + 5);
  y = D(d, "aten.permute.default", V(y), d_int_list(d, perm, nb + 5));
  y = D(d, "aten.clone.default", V(y));
  d_out(d, 0, nn_view(d, y, out, r));
}

static void pixel_shuffle(decomp *d) { shuffle_pixels(d, false); }
static void pixel_unshuffle(decomp *d) { shuffle_pixels(d, true); }

/* channel_shuffle: [N, g * k, *] -> [N, k * g, *], channel i*k+j moving
 * to j*g+i (a transpose of the group and member dims). */
static void channel_shuffle(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  alloy_dim g = d_dim(d, 1);
  int r = d_rank(x);
  if (r < 3) return d_decline(d, "needs [N, C, *]");
  const alloy_dim *s = d_shape(x);
  alloy_dim v[ALLOY_MAX_RANK + 1];
  int64_t perm[ALLOY_MAX_RANK + 1];
  v[0] = s[0];
  v[1] = g;
  v[2] = alloy_dim_floordiv(d_symtab(d), s[1], g);
  memcpy(v + 3, s + 2, sizeof *v * (size_t)(r - 2));
  for (int i = 0; i <= r; i++) perm[i] = i;
  perm[1] = 2;
  perm[2] = 1;
  alloy_value *y =
      D(d, "aten.permute.default", V(nn_reshape(d, x, v, r + 1)), d_int_list(d, perm, r + 1));
  d_out(d, 0, nn_view(d, D(d, "aten.clone.default", V(y)), s, r));
}
/* --- upsampling ---------------------------------------------------------------------*/

/* Reads the output sizes (arg at) and the optional per-dim scales
 * (args sat.. sat+n-1) of an upsample op over n spatial dims. */
static bool upsample_args(decomp *d, int at, int sat, int n, alloy_dim *osize, double *scale,
                          bool *has_scale) {
  if (d_dims(d, at, osize, n) != n) {
    d_decline(d, "output_size must have %d values", n);
    return false;
  }
  for (int i = 0; i < n; i++) {
    has_scale[i] = !d_is_none(d, sat + i);
    scale[i] = has_scale[i] ? d_float(d, sat + i) : 0;
  }
  return !d_failed(d);
}

/* The input index of every output position along one dim, as int64:
 * floor((o + offset) * isize / osize), or with 1/scale for the ratio
 * when a positive scale is given (computed in float32 as PyTorch). */
static alloy_value *nearest_index(decomp *d, alloy_dim isize, alloy_dim osize, bool has_scale,
                                  double scale, bool exact) {
  double ratio;
  if (has_scale && scale > 0) {
    ratio = 1.0 / scale;
  } else {
    if (!alloy_dim_is_const(isize) || !alloy_dim_is_const(osize)) {
      d_decline(d, "symbolic sizes for nearest upsampling");
      return NULL;
    }
    ratio = (double)isize.value / (double)osize.value;
  }
  alloy_value *o = D(d, "aten.arange.start_step", I(0), SYM(osize), I(1), DT(ALLOY_F32));
  if (exact) o = D(d, "aten.add.Tensor", V(o), F(0.5));
  alloy_value *idx = d_to(d, D(d, "aten.floor.default", V(nn_mulf(d, o, ratio))), ALLOY_I64);
  /* Cannot pass the end: the input index is below isize. */
  return D(d, "aten.clamp.default", V(idx), NONE,
           SYM(alloy_dim_sub(d_symtab(d), isize, alloy_dim_const(1))));
}

static void upsample_nearest(decomp *d, int n, bool exact) {
  alloy_value *x = d_tensor(d, 0);
  alloy_dim osize[3];
  double scale[3];
  bool has[3];
  if (!upsample_args(d, 1, 2, n, osize, scale, has)) return;
  int r = d_rank(x);
  for (int i = 0; i < n && x; i++) {
    int dim = r - n + i;
    alloy_value *idx = nearest_index(d, d_shape(x)[dim], osize[i], has[i], scale[i], exact);
    if (!idx) return;
    x = D(d, "aten.index_select.default", V(x), I(dim), V(idx));
  }
  d_out(d, 0, x);
}

static void upsample_nearest1d(decomp *d) { upsample_nearest(d, 1, false); }
static void upsample_nearest2d(decomp *d) { upsample_nearest(d, 2, false); }
static void upsample_nearest_exact1d(decomp *d) { upsample_nearest(d, 1, true); }

/* Linear interpolation along each spatial dim in turn, the last first
 * (the nesting of PyTorch's sums): the source coordinate of each output
 * position, its two neighbours and their weights 1 - t and t, in opmath.
 * PyTorch's CPU kernels store the weights in the input's dtype, except
 * the vectorized 2-d kernel it takes for small outputs (H + W <= 128),
 * which keeps them in opmath. A dim whose size does not change is copied. */
static void upsample_linear(decomp *d, int n) {
  alloy_value *x = d_tensor(d, 0);
  alloy_dim osize[3];
  double scale[3];
  bool has[3];
  bool align = d_bool(d, 2);
  if (!upsample_args(d, 1, 3, n, osize, scale, has)) return;
  alloy_dtype t = d_dtype(x), c = d_opmath(t);
  if (!alloy_dtype_is_float(t)) return d_decline(d, "integer upsampling rounds differently");
  for (int i = 0; i < n; i++)
    if (!alloy_dim_is_const(osize[i]) || !alloy_dim_is_const(d_shape(x)[d_rank(x) - n + i]))
      return d_decline(d, "symbolic sizes for linear upsampling");
  bool opmath_weights = n == 2 && osize[0].value + osize[1].value <= 128;
  x = d_to(d, x, c);
  int r = d_rank(x);
  for (int i = n - 1; i >= 0 && x; i--) {
    int dim = r - n + i;
    int64_t in = d_shape(x)[dim].value, out = osize[i].value;
    if (in == out) continue;
    double ratio;
    if (align)
      ratio = out > 1 ? (double)(in - 1) / (double)(out - 1) : 0;
    else
      ratio = has[i] && scale[i] > 0 ? 1.0 / scale[i] : (double)in / (double)out;
    alloy_value *o = D(d, "aten.arange.start_step", I(0), I(out), I(1), DT(c));
    alloy_value *src = align ? nn_mulf(d, o, ratio)
                             : D(d, "aten.sub.Tensor",
                                 V(nn_mulf(d, D(d, "aten.add.Tensor", V(o), F(0.5)), ratio)), F(0.5));
    src = D(d, "aten.clamp.default", V(src), F(0));
    alloy_value *i0 = D(d, "aten.clamp.default", V(d_to(d, src, ALLOY_I64)), NONE, I(in - 1));
    alloy_value *i1 =
        D(d, "aten.clamp.default", V(D(d, "aten.add.Tensor", V(i0), I(1))), NONE, I(in - 1));
    alloy_value *w1 = D(d, "aten.clamp.default", V(nn_sub(d, src, i0)), F(0), F(1));
    if (!opmath_weights) w1 = d_to(d, d_to(d, w1, t), c);
    alloy_value *w0 = D(d, "aten.rsub.Scalar", V(w1), F(1));
    if (!opmath_weights) w0 = d_to(d, d_to(d, w0, t), c);
    alloy_dim fshape[ALLOY_MAX_RANK];
    for (int k = 0; k < r - dim; k++) fshape[k] = alloy_dim_const(1);
    fshape[0] = osize[i];
    alloy_value *v0 = D(d, "aten.index_select.default", V(x), I(dim), V(i0));
    alloy_value *v1 = D(d, "aten.index_select.default", V(x), I(dim), V(i1));
    x = nn_add(d, nn_mul(d, v0, nn_view(d, w0, fshape, r - dim)),
            nn_mul(d, v1, nn_view(d, w1, fshape, r - dim)));
  }
  if (x == d_tensor(d, 0)) x = D(d, "aten.clone.default", V(x));
  d_out(d, 0, d_to(d, x, t));
}

static void upsample_linear1d(decomp *d) { upsample_linear(d, 1); }
static void upsample_bilinear2d(decomp *d) { upsample_linear(d, 2); }
static void upsample_trilinear3d(decomp *d) { upsample_linear(d, 3); }

/* A float64 scale or weight v as float32 holds it, or as it is (c: the
 * kernel's arithmetic dtype). */
static double in_dtype(double v, alloy_dtype c) { return c == ALLOY_F64 ? v : (double)(float)v; }

/* a * b + c with one rounding, as the kernels' fused multiply-adds (the
 * compiler contracts them): for float32 computed in float64, where the
 * product is exact, and rounded to float32, which differs only where
 * float64's rounding of the sum lands on a float32 tie. float64 has no
 * wider type: there the product is rounded before the add, which a sum
 * that cancels to far below its terms shows. b or c may be NULL for the
 * scalars kb, kc. */
static alloy_value *fused(decomp *d, alloy_value *a, alloy_value *b, double kb, alloy_value *c,
                          double kc, alloy_dtype t) {
  alloy_value *p = b ? nn_mul(d, d_to(d, a, ALLOY_F64), d_to(d, b, ALLOY_F64))
                     : nn_mulf(d, d_to(d, a, ALLOY_F64), kb);
  p = c ? nn_add(d, p, d_to(d, c, ALLOY_F64)) : D(d, "aten.add.Tensor", V(p), F(kc));
  return d_to(d, p, t);
}

/* PyTorch's area_pixel_compute_scale for one dim, in c. */
static double pixel_scale(int64_t in, int64_t out, bool align, bool has, double scale,
                          alloy_dtype c) {
  if (align) return out > 1 ? in_dtype((double)(in - 1) / (double)(out - 1), c) : 0;
  return in_dtype(has && scale > 0 ? 1.0 / scale : (double)in / (double)out, c);
}

/* One antialiased pass along dim (in -> out inputs), as the kernel's
 * separable pass computes it in the dtype t (float32 or float64): output
 * o centred at s (o + 0.5) takes the K = 2 ceil(support) + 1 slots from
 * xmin = trunc(centre - support + 0.5), the window ending at
 * trunc(centre + support + 0.5) (support max(s, 1), twice that for
 * bicubic); slot weights filter((xmin + k - centre + 0.5) / max(s, 1)),
 * summed in order and normalized; then the slots' products summed, the
 * first rounded and each further one fused onto the sum. Slots past the
 * window are not read (a zero weight would turn inf into NaN). The filter
 * is the triangle max(0, 1 - |x|) for bilinear, for bicubic Keys' cubic
 * with A = -0.5 (as PIL, not the -0.75 of plain bicubic):
 * ((A + 2)|x| - (A + 3))|x|^2 + 1 below 1, ((A|x| - 5A)|x| + 8A)|x| - 4A
 * below 2, 0 beyond. */
static alloy_value *aa_pass(decomp *d, alloy_value *x, int dim, int64_t in, int64_t out,
                            double s, alloy_dtype t, bool cubic) {
  double support = (s >= 1 ? s : 1) * (cubic ? 2 : 1), inv = s >= 1 ? in_dtype(1 / s, t) : 1;
  /* support comes from the scale: bounded before the cast (a huge scale
   * reaches every input anyway). */
  double reach = ceil(support) < (double)in ? ceil(support) : (double)in;
  int64_t K = (int64_t)reach * 2 + 1;
  alloy_value *o = nn_unsqueeze(d, D(d, "aten.arange.start_step", I(0), I(out), I(1), DT(t)), 1);
  alloy_value *center = nn_mulf(d, D(d, "aten.add.Tensor", V(o), F(0.5)), s);
  alloy_value *xmin = D(d, "aten.clamp.default",
                        V(d_to(d, D(d, "aten.add.Tensor",
                                    V(D(d, "aten.sub.Tensor", V(center), F(support))), F(0.5)),
                               ALLOY_I64)),
                        I(0));
  alloy_value *xend = D(d, "aten.clamp.default",
                        V(d_to(d, D(d, "aten.add.Tensor",
                                    V(D(d, "aten.add.Tensor", V(center), F(support))), F(0.5)),
                               ALLOY_I64)),
                        NONE, I(in));
  alloy_value *xsize = D(d, "aten.clamp.default", V(nn_sub(d, xend, xmin)), I(0), I(K));
  alloy_value *k = nn_unsqueeze(d, D(d, "aten.arange.start_step", I(0), I(K), I(1), DT(ALLOY_I64)), 0);
  alloy_value *pos = nn_add(d, xmin, k);
  alloy_value *valid = D(d, "aten.lt.Tensor", V(k), V(xsize));
  alloy_value *dist = D(
      d, "aten.abs.default",
      V(nn_mulf(d, D(d, "aten.add.Tensor", V(nn_sub(d, d_to(d, pos, t), center)), F(0.5)), inv)));
  alloy_value *w;
  if (cubic) {
    const double A = -0.5;
    alloy_value *near = nn_mul(d, D(d, "aten.sub.Tensor", V(nn_mulf(d, dist, A + 2)), F(A + 3)),
                               nn_mul(d, dist, dist));
    near = D(d, "aten.add.Tensor", V(near), F(1));
    alloy_value *far = D(d, "aten.sub.Tensor", V(nn_mulf(d, dist, A)), F(5 * A));
    far = D(d, "aten.add.Tensor", V(nn_mul(d, far, dist)), F(8 * A));
    far = D(d, "aten.sub.Tensor", V(nn_mul(d, far, dist)), F(4 * A));
    w = D(d, "aten.where.self", V(D(d, "aten.lt.Scalar", V(dist), F(2))), V(far), F(0));
    w = D(d, "aten.where.self", V(D(d, "aten.lt.Scalar", V(dist), F(1))), V(near), V(w));
  } else {
    w = D(d, "aten.where.self", V(D(d, "aten.lt.Scalar", V(dist), F(1))),
          V(D(d, "aten.rsub.Scalar", V(dist), F(1))), F(0));
  }
  w = D(d, "aten.where.self", V(valid), V(w), F(0));
  alloy_value *total = NULL;
  for (int64_t j = 0; j < K; j++) {
    alloy_value *wj = D(d, "aten.select.int", V(w), I(1), I(j));
    total = total ? nn_add(d, total, wj) : wj;
  }
  total = nn_unsqueeze(d, total, 1);
  w = D(d, "aten.where.self", V(D(d, "aten.ne.Scalar", V(total), F(0))),
        V(D(d, "aten.div.Tensor", V(w), V(total))), V(w));
  /* the slots of every output gathered: [.., out, K, ..] */
  int r = d_rank(x);
  alloy_dim flatk = alloy_dim_const(out * K), gshape[ALLOY_MAX_RANK + 1], wshape[ALLOY_MAX_RANK];
  alloy_value *idx = D(d, "aten.clamp.default", V(pos), NONE, I(in - 1));
  alloy_value *g = D(d, "aten.index_select.default", V(x), I(dim), V(nn_reshape(d, idx, &flatk, 1)));
  for (int i = 0, j = 0; i < r; i++) {
    gshape[j++] = i == dim ? alloy_dim_const(out) : d_shape(x)[i];
    if (i == dim) gshape[j++] = alloy_dim_const(K);
  }
  g = nn_view(d, g, gshape, r + 1);
  for (int i = 0; i < r - dim; i++) wshape[i] = alloy_dim_const(1);
  wshape[0] = alloy_dim_const(out);
  alloy_value *acc = NULL;
  for (int64_t j = 0; j < K; j++) {
    alloy_value *v = D(d, "aten.select.int", V(g), I(dim + 1), I(j));
    alloy_value *wj = nn_view(d, D(d, "aten.select.int", V(w), I(1), I(j)), wshape, r - dim);
    alloy_value *ok = nn_view(d, D(d, "aten.select.int", V(valid), I(1), I(j)), wshape, r - dim);
    alloy_value *next = acc ? fused(d, v, wj, 0, acc, 0, t) : nn_mul(d, v, wj);
    acc = acc ? D(d, "aten.where.self", V(ok), V(next), V(acc)) : next;
  }
  return acc;
}

/* _upsample_bilinear2d_aa and _upsample_bicubic2d_aa: antialiased
 * resampling, as PyTorch's separable CPU kernel: a pass along W, then one
 * along H, each in the dtype; a dim whose size stays is left as it is
 * (not even its zero weights applied). */
static void upsample_aa(decomp *d, bool cubic) {
  alloy_value *x = d_tensor(d, 0);
  alloy_dim osize[2];
  double scale[2];
  bool has[2];
  bool align = d_bool(d, 2);
  if (!upsample_args(d, 1, 3, 2, osize, scale, has)) return;
  alloy_dtype t = d_dtype(x);
  if (t != ALLOY_F32 && t != ALLOY_F64)
    return d_decline(d, "the kernel takes float32, float64 and uint8 (in fixed point)");
  int r = d_rank(x);
  for (int i = 0; i < 2; i++)
    if (!alloy_dim_is_const(d_shape(x)[r - 2 + i]) || !alloy_dim_is_const(osize[i]))
      return d_decline(d, "symbolic sizes for antialiased upsampling");
  for (int i = 1; i >= 0 && x; i--) {
    int64_t in = d_shape(x)[r - 2 + i].value, out = osize[i].value;
    if (in != out)
      x = aa_pass(d, x, r - 2 + i, in, out, pixel_scale(in, out, align, has[i], scale[i], t), t,
                  cubic);
  }
  if (x == d_tensor(d, 0)) x = D(d, "aten.clone.default", V(x));
  d_out(d, 0, x);
}

static void upsample_bilinear2d_aa(decomp *d) { upsample_aa(d, false); }
static void upsample_bicubic2d_aa(decomp *d) { upsample_aa(d, true); }

/* Keys' cubic convolution weights (A = -0.75) of the four neighbours of a
 * point at fraction t past the second: w0 = k2(t + 1), w1 = k1(t),
 * w2 = k1(1 - t), w3 = k2(1 - t + 1), each step in c as the kernel's
 * compiled code: k1(x) = ((1.25 x - 2.25) x) x + 1 and
 * k2(x) = ((-0.75 x + 3.75) x - 6) x + 3, the first steps fused, the last
 * not. Near 1 and 2 they cancel, so each rounding shows. */
static alloy_value *cubic_k1(decomp *d, alloy_value *x, alloy_dtype c) {
  alloy_value *p = fused(d, x, NULL, 1.25, NULL, -2.25, c);
  return D(d, "aten.add.Tensor", V(nn_mul(d, nn_mul(d, p, x), x)), F(1));
}
static alloy_value *cubic_k2(decomp *d, alloy_value *x, alloy_dtype c) {
  alloy_value *p = fused(d, fused(d, x, NULL, -0.75, NULL, 3.75, c), x, 0, NULL, -6, c);
  return D(d, "aten.add.Tensor", V(nn_mul(d, p, x)), F(3));
}

/* upsample_bicubic2d: cubic interpolation along W, then along H, in opmath
 * c, as the kernel's sums nest (it keeps the W sums in c too); the
 * neighbours clamped to the edges, the weights kept in the input's dtype.
 * The source index s (o + 0.5) - 0.5 is fused, and each sum of four takes
 * the second product rounded, the first fused onto it, then the others
 * fused in turn. */
static void upsample_bicubic2d(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  alloy_dim osize[2];
  double scale[2];
  bool has[2];
  bool align = d_bool(d, 2);
  if (!upsample_args(d, 1, 3, 2, osize, scale, has)) return;
  alloy_dtype t = d_dtype(x), c = d_opmath(t);
  if (!alloy_dtype_is_float(t))
    return d_decline(d, "integer bicubic upsampling rounds differently");
  x = d_to(d, x, c);
  int r = d_rank(x);
  for (int i = 1; i >= 0 && x; i--) {
    int dim = r - 2 + i;
    alloy_dim isize = d_shape(x)[dim];
    if (!alloy_dim_is_const(isize) || !alloy_dim_is_const(osize[i]))
      return d_decline(d, "symbolic sizes for bicubic upsampling");
    int64_t in = isize.value;
    double ratio = pixel_scale(in, osize[i].value, align, has[i], scale[i], c);
    alloy_value *o = D(d, "aten.arange.start_step", I(0), SYM(osize[i]), I(1), DT(c));
    alloy_value *src = align ? nn_mulf(d, o, ratio)
                             : fused(d, D(d, "aten.add.Tensor", V(o), F(0.5)), NULL, ratio,
                                     NULL, -0.5, c);
    alloy_value *base = D(d, "aten.clamp.default",
                          V(d_to(d, D(d, "aten.floor.default", V(src)), ALLOY_I64)), NONE,
                          I(in - 1));
    alloy_value *tt = D(d, "aten.clamp.default", V(nn_sub(d, src, d_to(d, base, c))), F(0), F(1));
    alloy_value *t2 = D(d, "aten.rsub.Scalar", V(tt), F(1));
    alloy_value *w[4] = {
        cubic_k2(d, D(d, "aten.add.Tensor", V(tt), F(1)), c),
        cubic_k1(d, tt, c),
        cubic_k1(d, t2, c),
        cubic_k2(d, D(d, "aten.add.Tensor", V(t2), F(1)), c),
    };
    alloy_dim fshape[ALLOY_MAX_RANK];
    for (int k = 0; k < r - dim; k++) fshape[k] = alloy_dim_const(1);
    fshape[0] = osize[i];
    alloy_value *v[4];
    for (int k = 0; k < 4; k++) {
      /* The native kernel keeps its weights in the input's dtype. */
      w[k] = nn_view(d, d_to(d, d_to(d, w[k], t), c), fshape, r - dim);
      alloy_value *ix = D(d, "aten.clamp.default", V(D(d, "aten.add.Tensor", V(base), I(k - 1))),
                          I(0), I(in - 1));
      v[k] = D(d, "aten.index_select.default", V(x), I(dim), V(ix));
    }
    alloy_value *acc = fused(d, v[0], w[0], 0, nn_mul(d, v[1], w[1]), 0, c);
    for (int k = 2; k < 4; k++) acc = fused(d, v[k], w[k], 0, acc, 0, c);
    x = acc;
  }
  d_out(d, 0, d_to(d, x, t));
}

/* The .vec overloads (input, output_size?, [align_corners,] scale_factors?)
 * are the sized overload of the same op, given the sizes the shape
 * function computed (floor(size * scale) from scale factors) and the scale
 * factors as its scales, which then set the kernel's ratios, as PyTorch's
 * .vec forms do. */
typedef struct vec_form {
  const char *vec, *sized;
  int n;      /* spatial dims */
  bool align; /* takes align_corners */
} vec_form;

static const vec_form vec_forms[] = {
    {"aten.upsample_nearest1d.vec", "aten.upsample_nearest1d.default", 1, false},
    {"aten.upsample_nearest3d.vec", "aten.upsample_nearest3d.default", 3, false},
    {"aten._upsample_nearest_exact1d.vec", "aten._upsample_nearest_exact1d.default", 1, false},
    {"aten._upsample_nearest_exact2d.vec", "aten._upsample_nearest_exact2d.default", 2, false},
    {"aten._upsample_nearest_exact3d.vec", "aten._upsample_nearest_exact3d.default", 3, false},
    {"aten.upsample_linear1d.vec", "aten.upsample_linear1d.default", 1, true},
    {"aten.upsample_bicubic2d.vec", "aten.upsample_bicubic2d.default", 2, true},
    {"aten.upsample_trilinear3d.vec", "aten.upsample_trilinear3d.default", 3, true},
    {"aten._upsample_bilinear2d_aa.vec", "aten._upsample_bilinear2d_aa.default", 2, true},
    {"aten._upsample_bicubic2d_aa.vec", "aten._upsample_bicubic2d_aa.default", 2, true},
};

static void upsample_vec(decomp *d) {
  const char *name = alloy_op_name(alloy_node_op(d_node(d)));
  const vec_form *f = NULL;
  for (size_t i = 0; i < sizeof vec_forms / sizeof *vec_forms; i++)
    if (!strcmp(vec_forms[i].vec, name)) f = &vec_forms[i];
  if (!f) return d_decline(d, "not a .vec overload of an upsampling");
  const alloy_value *want = alloy_node_output(d_node(d), 0);
  int i_scales = f->align ? 3 : 2, nargs = 0;
  alloy_arg args[8];
  args[nargs++] = V(d_tensor(d, 0));
  args[nargs++] = d_dim_list(d, d_shape(want) + 2, f->n);
  if (f->align) args[nargs++] = B(d_bool(d, 2));
  const alloy_arg *sf = d_is_none(d, i_scales) ? NULL : d_arg(d, i_scales);
  if (sf && (sf->kind != ALLOY_ARG_LIST || sf->u.list.n != f->n))
    return d_decline(d, "scale_factors must hold %d numbers", f->n);
  for (int i = 0; i < f->n; i++) {
    const alloy_arg *it = sf ? &sf->u.list.items[i] : NULL;
    if (it && it->kind != ALLOY_ARG_FLOAT && it->kind != ALLOY_ARG_INT)
      return d_decline(d, "scale_factors must be literal numbers");
    args[nargs++] = !it ? NONE : it->kind == ALLOY_ARG_FLOAT ? F(it->u.f) : F((double)it->u.i.value);
  }
  d_out(d, 0, d_op(d, f->sized, args, nargs));
}

/* The TorchScript interpolation builtins (__interpolate, __upsample,
 * __upsample_nearest, __upsample_bilinear, each with its list
 * overloads), as TorchScript's interpolate: the mode and the input's rank
 * pick upsample_nearest1d/2d/3d, upsample_linear1d, upsample_bilinear2d,
 * upsample_bicubic2d, upsample_trilinear3d or adaptive_avg_pool1d/2d/3d
 * ("area"), given the output size the shape function computed. The scale
 * factors reach the op only with recompute_scale_factor=False (given
 * scales default it to True); align_corners defaults to False, and
 * __upsample_bilinear is bilinear with align_corners. */
static void interpolate(decomp *d) {
  const alloy_schema *sc = alloy_op_schema(alloy_node_op(d_node(d)));
  alloy_value *x = d_tensor(d, 0);
  if (!x) return;
  bool bilinear_op = alloy_schema_find_arg(sc, "mode") < 0 &&
                     strstr(alloy_op_name(alloy_node_op(d_node(d))), "bilinear");
  int i_mode = alloy_schema_find_arg(sc, "mode"), i_align = alloy_schema_find_arg(sc, "align_corners");
  int i_rec = alloy_schema_find_arg(sc, "recompute_scale_factor");
  const char *mode = bilinear_op ? "bilinear" : i_mode >= 0 ? d_str(d, i_mode) : "nearest";
  if (!mode) mode = "nearest";
  bool align = bilinear_op || (i_align >= 0 && !d_is_none(d, i_align) && d_bool(d, i_align));
  bool pass_scales = !d_is_none(d, 2) && i_rec >= 0 && !d_is_none(d, i_rec) && !d_bool(d, i_rec);
  int r = d_rank(x), n = r - 2;
  const alloy_value *want = alloy_node_output(d_node(d), 0);
  alloy_arg args[8];
  int na = 0;
  args[na++] = V(x);
  args[na++] = d_dim_list(d, d_shape(want) + 2, n);
  static const char *const nearest[] = {"aten.upsample_nearest1d.default",
                                        "aten.upsample_nearest2d.default",
                                        "aten.upsample_nearest3d.default"};
  static const char *const area[] = {"aten.adaptive_avg_pool1d.default",
                                     "aten.adaptive_avg_pool2d.default",
                                     "aten.adaptive_avg_pool3d.default"};
  const char *op;
  if (!strcmp(mode, "area")) {
    d_out(d, 0, d_op(d, area[n - 1], args, na));
    return;
  }
  if (!strcmp(mode, "nearest")) {
    op = nearest[n - 1];
  } else {
    op = !strcmp(mode, "linear") ? "aten.upsample_linear1d.default"
         : !strcmp(mode, "bilinear") ? "aten.upsample_bilinear2d.default"
         : !strcmp(mode, "bicubic") ? "aten.upsample_bicubic2d.default"
                                    : "aten.upsample_trilinear3d.default";
    args[na++] = B(align);
  }
  const alloy_arg *sf = d_arg(d, 2);
  for (int i = 0; i < n; i++) {
    const alloy_arg *it = sf->kind == ALLOY_ARG_LIST ? &sf->u.list.items[i] : sf;
    args[na++] = !pass_scales ? NONE
                 : it->kind == ALLOY_ARG_FLOAT ? F(it->u.f) : F((double)it->u.i.value);
  }
  d_out(d, 0, d_op(d, op, args, na));
}

static void upsample_nearest3d(decomp *d) { upsample_nearest(d, 3, false); }
static void upsample_nearest_exact2d(decomp *d) { upsample_nearest(d, 2, true); }
static void upsample_nearest_exact3d(decomp *d) { upsample_nearest(d, 3, true); }

/* --- grids ---------------------------------------------------------------------------*/

/* grid_sampler picks grid_sampler_2d or _3d by the input's rank;
 * _grid_sampler_2d_cpu_fallback is grid_sampler_2d's scalar code. */
static void grid_sampler(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  if (!x) return;
  const char *op = d_rank(x) == 5 ? "aten.grid_sampler_3d.default" : "aten.grid_sampler_2d.default";
  d_out(d, 0, D(d, op, V(x), V(d_tensor(d, 1)), *d_arg(d, 2), *d_arg(d, 3), *d_arg(d, 4)));
}

/* The n coordinates of a grid dim, linspace(-1, 1, n), times (n - 1) / n
 * (the two steps rounded) unless align_corners; 0 for n <= 1. */
static alloy_value *grid_coords(decomp *d, int64_t n, bool align, alloy_dtype t) {
  if (n <= 1) return D(d, "aten.full.default", LIST(I(n)), I(0), DT(t));
  alloy_value *r = D(d, "aten.linspace.default", F(-1), F(1), I(n), DT(t));
  if (!align) r = D(d, "aten.div.Tensor", V(nn_mulf(d, r, (double)(n - 1))), F((double)n));
  return r;
}

/* affine_grid_generator(theta, size, align_corners): the base grid [N,
 * (D,) H, W, k + 1] of the coordinates (x along W, y along H, z along D)
 * and 1, times theta^T by bmm, viewed as [N, (D,) H, W, k]. */
static void affine_grid_generator(decomp *d) {
  alloy_value *theta = d_tensor(d, 0);
  int64_t size[5];
  int n = d_ints(d, 1, size, 5);
  bool align = d_bool(d, 2);
  if (d_failed(d) || (n != 4 && n != 5)) return d_decline(d, "size needs 4 or 5 values");
  alloy_dtype t = d_dtype(theta);
  int k = n - 2;
  alloy_dim grid[5], flat[3], out[5];
  grid[0] = alloy_dim_const(size[0]);
  for (int i = 0; i < k; i++) grid[1 + i] = alloy_dim_const(size[2 + i]);
  alloy_value *cols[4];
  /* coordinate c runs along spatial dim k - 1 - c of the grid */
  for (int c = 0; c < k; c++) {
    int along = k - c; /* its position in [N, (D,) H, W] */
    alloy_dim shape[4];
    for (int i = 0; i <= k; i++) shape[i] = alloy_dim_const(1);
    shape[along] = grid[along];
    alloy_value *v = nn_view(d, grid_coords(d, size[2 + along - 1], align, t), shape, k + 1);
    cols[c] = D(d, "aten.expand.default", V(v), d_dim_list(d, grid, k + 1));
  }
  cols[k] = D(d, "aten.full.default", d_dim_list(d, grid, k + 1), I(1), DT(t));
  alloy_value *base = D(d, "aten.stack.default", d_value_list(d, cols, k + 1), I(-1));
  flat[0] = grid[0];
  flat[1] = nn_prod(d, grid + 1, k);
  flat[2] = alloy_dim_const(k + 1);
  alloy_value *g = D(d, "aten.bmm.default", V(nn_view(d, base, flat, 3)),
                     V(D(d, "aten.transpose.int", V(theta), I(1), I(2))));
  memcpy(out, grid, sizeof *out * (size_t)(k + 1));
  out[k + 1] = alloy_dim_const(k);
  d_out(d, 0, nn_view(d, g, out, k + 2));
}

const decomp_rule decomp_rules_resample[] = {
    {"aten.pad.default", pad, DECOMP_TO_CORE},
    {"aten.grid_sampler.default", grid_sampler, DECOMP_TO_CORE},
    {"aten._grid_sampler_2d_cpu_fallback.default", grid_sampler, DECOMP_TO_CORE},
    {"aten.affine_grid_generator.default", affine_grid_generator, DECOMP_TO_CORE},
    {"aten._pad_enum.default", pad_enum, DECOMP_TO_CORE},
    {"aten._pad_circular.default", pad_circular_op, DECOMP_TO_CORE},
    {"aten.native_channel_shuffle.default", channel_shuffle, DECOMP_TO_CORE},
    {"aten.replication_pad1d.default", replication_pad1d, DECOMP_TO_CORE},
    {"aten.pixel_shuffle.default", pixel_shuffle, DECOMP_TO_CORE},
    {"aten.pixel_unshuffle.default", pixel_unshuffle, DECOMP_TO_CORE},
    {"aten.channel_shuffle.default", channel_shuffle, DECOMP_TO_CORE},
    {"aten.upsample_nearest1d.default", upsample_nearest1d, DECOMP_TO_CORE},
    {"aten.upsample_nearest2d.default", upsample_nearest2d, DECOMP_TO_CORE},
    {"aten._upsample_nearest_exact1d.default", upsample_nearest_exact1d, DECOMP_TO_CORE},
    {"aten.upsample_linear1d.default", upsample_linear1d, DECOMP_TO_CORE},
    {"aten.upsample_bilinear2d.default", upsample_bilinear2d, DECOMP_TO_CORE},
    {"aten.upsample_bicubic2d.default", upsample_bicubic2d, DECOMP_TO_CORE},
    {"aten._upsample_bilinear2d_aa.default", upsample_bilinear2d_aa, DECOMP_TO_CORE},
    {"aten.upsample_trilinear3d.default", upsample_trilinear3d, DECOMP_TO_CORE},
    {"aten.upsample_nearest3d.default", upsample_nearest3d, DECOMP_TO_CORE},
    {"aten._upsample_nearest_exact2d.default", upsample_nearest_exact2d, DECOMP_TO_CORE},
    {"aten._upsample_nearest_exact3d.default", upsample_nearest_exact3d, DECOMP_TO_CORE},
    {"aten._upsample_bicubic2d_aa.default", upsample_bicubic2d_aa, DECOMP_TO_CORE},
    {"aten.__interpolate.default", interpolate, DECOMP_TO_CORE},
    {"aten.__interpolate.scale_list", interpolate, DECOMP_TO_CORE},
    {"aten.__interpolate.size_list", interpolate, DECOMP_TO_CORE},
    {"aten.__interpolate.size_list_scale_list", interpolate, DECOMP_TO_CORE},
    {"aten.__upsample.default", interpolate, DECOMP_TO_CORE},
    {"aten.__upsample.size_list", interpolate, DECOMP_TO_CORE},
    {"aten.__upsample_nearest.default", interpolate, DECOMP_TO_CORE},
    {"aten.__upsample_nearest.size_list", interpolate, DECOMP_TO_CORE},
    {"aten.__upsample_bilinear.default", interpolate, DECOMP_TO_CORE},
    {"aten.__upsample_bilinear.scale_list", interpolate, DECOMP_TO_CORE},
    {"aten.__upsample_bilinear.size_list", interpolate, DECOMP_TO_CORE},
    {"aten.__upsample_bilinear.size_list_scale_list", interpolate, DECOMP_TO_CORE},
    {"aten.upsample_nearest1d.vec", upsample_vec, DECOMP_TO_CORE},
    {"aten.upsample_nearest3d.vec", upsample_vec, DECOMP_TO_CORE},
    {"aten._upsample_nearest_exact1d.vec", upsample_vec, DECOMP_TO_CORE},
    {"aten._upsample_nearest_exact2d.vec", upsample_vec, DECOMP_TO_CORE},
    {"aten._upsample_nearest_exact3d.vec", upsample_vec, DECOMP_TO_CORE},
    {"aten.upsample_linear1d.vec", upsample_vec, DECOMP_TO_CORE},
    {"aten.upsample_bicubic2d.vec", upsample_vec, DECOMP_TO_CORE},
    {"aten.upsample_trilinear3d.vec", upsample_vec, DECOMP_TO_CORE},
    {"aten._upsample_bilinear2d_aa.vec", upsample_vec, DECOMP_TO_CORE},
    {"aten._upsample_bicubic2d_aa.vec", upsample_vec, DECOMP_TO_CORE},
    {NULL, NULL, 0},
};
