/*
 * decompositions/rules_pooling.c: pooling, from ATen to Core ATen: the
 * wrappers that pick a pooling kernel (max_pool1d/2d/3d and 1-d with
 * indices, adaptive_avg_pool2d/3d, adaptive_max_pool1d: the 1-d ones as
 * 2-d pooling of one row), adaptive max pooling over Core ATen gathers,
 * max unpooling and im2col (the patches of a convolution).
 *
 * The math follows PyTorch's decompositions (torch/_decomp) and its CPU
 * kernels where those decide ties and NaNs. The shared helpers are in
 * rules_nn_util.h.
 */
#include <math.h>
#include <string.h>

#include "decompositions/rules.h"
#include "decompositions/rules_nn_util.h"

/* --- pooling, unpooling, patches --------------------------------------------------------*/

static void max_pool2d(decomp *d) {
  alloy_value *o[2] = {0};
  if (DN(d, "aten.max_pool2d_with_indices.default", o, 2, V(d_tensor(d, 0)), *d_arg(d, 1),
         *d_arg(d, 2), *d_arg(d, 3), *d_arg(d, 4), *d_arg(d, 5)) < 2)
    return;
  d_out(d, 0, o[0]);
}

static void adaptive_avg_pool2d(decomp *d) {
  d_out(d, 0, D(d, "aten._adaptive_avg_pool2d.default", V(d_tensor(d, 0)), *d_arg(d, 1)));
}

/* max_pool1d_with_indices(self, kernel_size, stride, padding, dilation,
 * ceil_mode): max_pool2d_with_indices of the input seen as one row (its
 * flat indices are then the positions along the row). */
static void max_pool1d_with_indices(decomp *d) {
  int64_t k, s, p = 0, dil = 1;
  if (d_ints(d, 1, &k, 1) != 1) return d_decline(d, "kernel_size needs 1 value");
  int ns = d_ints(d, 2, &s, 1);
  if (ns == 0) s = k;
  d_ints(d, 3, &p, 1);
  d_ints(d, 4, &dil, 1);
  if (d_failed(d)) return;
  alloy_value *o[2] = {0};
  if (DN(d, "aten.max_pool2d_with_indices.default", o, 2, V(nn_unsqueeze(d, d_tensor(d, 0), -2)),
         LIST(I(1), I(k)), LIST(I(1), I(s)), LIST(I(0), I(p)), LIST(I(1), I(dil)),
         B(d_bool(d, 5))) < 2)
    return;
  d_out(d, 0, nn_squeeze(d, o[0], -2));
  if (alloy_node_num_outputs(d_node(d)) > 1) d_out(d, 1, nn_squeeze(d, o[1], -2));
}

/* max_pool3d: max_pool3d_with_indices without the indices */
static void max_pool3d(decomp *d) {
  alloy_value *o[2] = {0};
  if (DN(d, "aten.max_pool3d_with_indices.default", o, 2, V(d_tensor(d, 0)), *d_arg(d, 1),
         *d_arg(d, 2), *d_arg(d, 3), *d_arg(d, 4), *d_arg(d, 5)) < 2)
    return;
  d_out(d, 0, o[0]);
}

static void adaptive_avg_pool3d(decomp *d) {
  d_out(d, 0, D(d, "aten._adaptive_avg_pool3d.default", V(d_tensor(d, 0)), *d_arg(d, 1)));
}

/* adaptive_max_pool1d: adaptive_max_pool2d of the input seen as one row */
static void adaptive_max_pool1d(decomp *d) {
  int64_t o1;
  if (d_ints(d, 1, &o1, 1) != 1) return d_decline(d, "output_size needs 1 value");
  alloy_value *o[2] = {0};
  if (DN(d, "aten.adaptive_max_pool2d.default", o, 2, V(nn_unsqueeze(d, d_tensor(d, 0), -2)),
         LIST(I(1), I(o1))) < 2)
    return;
  d_out(d, 0, nn_squeeze(d, o[0], -2));
  d_out(d, 1, nn_squeeze(d, o[1], -2));
}

/* The windows of adaptive pooling along one dim of size in into out
 * cells: cell i covers [floor(i in / out), ceil((i + 1) in / out)). As
 * [out, maxlen] tables: the input index of each slot (clamped) and
 * whether the slot is inside the window. */
static int64_t adaptive_windows(decomp *d, int64_t in, int64_t out, alloy_value **idx,
                                alloy_value **valid) {
  int64_t maxlen = 0;
  for (int64_t i = 0; i < out; i++) {
    int64_t s = i * in / out, e = ((i + 1) * in + out - 1) / out;
    if (e - s > maxlen) maxlen = e - s;
  }
  alloy_value *cell =
      nn_unsqueeze(d, D(d, "aten.arange.start_step", I(0), I(out), I(1), DT(ALLOY_I64)), 1);
  alloy_value *start =
      D(d, "aten.div.Scalar_mode", V(D(d, "aten.mul.Tensor", V(cell), I(in))), I(out), S("floor"));
  alloy_value *end =
      D(d, "aten.div.Scalar_mode",
        V(D(d, "aten.add.Tensor", V(D(d, "aten.mul.Tensor", V(cell), I(in))), I(in + out - 1))),
        I(out), S("floor"));
  alloy_value *slot =
      nn_unsqueeze(d, D(d, "aten.arange.start_step", I(0), I(maxlen), I(1), DT(ALLOY_I64)), 0);
  alloy_value *at = D(d, "aten.add.Tensor", V(start), V(slot));
  *valid = D(d, "aten.lt.Tensor", V(at), V(end));
  *idx = D(d, "aten.clamp.default", V(at), NONE, I(in - 1));
  return maxlen;
}

/* adaptive_max_pool2d/3d -> (values, indices): the maximum of each
 * adaptive window over the last n dims and its flat index into the
 * input's spatial plane. The windows' slots are gathered dim by dim into
 * [*, o0, l0, o1, l1, ...], slots past a window's end masked to -inf,
 * then [*, o0, o1, ..., l0 * l1 * ...] reduced by max (ties: the first
 * slot, as the kernel's strict > keeps it). */
static void adaptive_max_pool(decomp *d, int n) {
  alloy_value *x = d_tensor(d, 0);
  int64_t os[3];
  if (d_ints(d, 1, os, n) != n) return d_decline(d, "output_size needs %d values", n);
  int r = d_rank(x), nb = r - n;
  if (nb < 1) return d_decline(d, "needs a channel dim");
  const alloy_dim *s = d_shape(x);
  int64_t in[3], len[3], total = 1;
  alloy_value *idx[3], *valid[3];
  for (int i = 0; i < n; i++) {
    if (!alloy_dim_is_const(s[nb + i])) return d_decline(d, "symbolic spatial sizes");
    in[i] = s[nb + i].value;
    if (in[i] == 0 || os[i] == 0) return d_decline(d, "empty windows");
    len[i] = adaptive_windows(d, in[i], os[i], &idx[i], &valid[i]);
    total *= len[i];
  }
  if (d_failed(d)) return;
  /* Every table broadcast to [o0, l0, o1, l1, ...]: dim i at 2i, 2i + 1. */
  alloy_dim win[6], shape[ALLOY_MAX_RANK + 6];
  for (int i = 0; i < n; i++) {
    win[2 * i] = alloy_dim_const(os[i]);
    win[2 * i + 1] = alloy_dim_const(len[i]);
  }
  alloy_value *v = x, *ok = NULL, *flat = NULL;
  for (int i = 0; i < n; i++) {
    alloy_dim nflat = alloy_dim_const(os[i] * len[i]), b[6];
    v = D(d, "aten.index_select.default", V(v), I(nb + i), V(nn_view(d, idx[i], &nflat, 1)));
    for (int k = 0; k < 2 * (n - i); k++) b[k] = k < 2 ? win[2 * i + k] : alloy_dim_const(1);
    alloy_value *vi = nn_view(d, valid[i], b, 2 * (n - i)),
                *ii = nn_view(d, idx[i], b, 2 * (n - i));
    ok = ok ? D(d, "aten.logical_and.default", V(ok), V(vi)) : vi;
    /* flat index: ((i0 * in1) + i1) * in2 + i2 */
    flat =
        flat ? D(d, "aten.add.Tensor", V(D(d, "aten.mul.Tensor", V(flat), I(in[i]))), V(ii)) : ii;
  }
  memcpy(shape, s, sizeof *shape * (size_t)nb);
  memcpy(shape + nb, win, sizeof *win * (size_t)(2 * n));
  v = D(d, "aten.where.self", V(ok), V(nn_view(d, v, shape, nb + 2 * n)), F(-INFINITY));
  int64_t perm[ALLOY_MAX_RANK + 6], fperm[6];
  for (int i = 0; i < nb; i++) perm[i] = i;
  for (int i = 0; i < n; i++) {
    fperm[i] = 2 * i;
    fperm[n + i] = 2 * i + 1;
  }
  for (int i = 0; i < 2 * n; i++) perm[nb + i] = nb + fperm[i];
  alloy_dim pooled[ALLOY_MAX_RANK + 4];
  memcpy(pooled, s, sizeof *pooled * (size_t)nb);
  for (int i = 0; i < n; i++) pooled[nb + i] = win[2 * i];
  pooled[nb + n] = alloy_dim_const(total);
  v = D(d, "aten.permute.default", V(v), d_int_list(d, perm, nb + 2 * n));
  v = nn_view(d, D(d, "aten.clone.default", V(v)), pooled, nb + n + 1);
  flat = D(d, "aten.permute.default", V(flat), d_int_list(d, fperm, 2 * n));
  flat = nn_view(d, D(d, "aten.clone.default", V(flat)), pooled + nb, n + 1);
  flat = D(d, "aten.expand.default", V(flat), d_dim_list(d, pooled, nb + n + 1));
  alloy_value *mx[2] = {0};
  if (DN(d, "aten.max.dim", mx, 2, V(v), I(-1)) < 2) return;
  /* The kernel lets every NaN replace the running maximum, so a window's
   * last NaN wins; max.dim would give its first. */
  alloy_value *slot = D(d, "aten.arange.start_step", I(0), I(total), I(1), DT(ALLOY_I64));
  alloy_value *last_nan =
      D(d, "aten.amax.default",
        V(D(d, "aten.where.self", V(D(d, "aten.isnan.default", V(v))), V(slot), I(-1))),
        LIST(I(-1)));
  alloy_value *at = D(d, "aten.where.self", V(D(d, "aten.ge.Scalar", V(last_nan), I(0))),
                      V(last_nan), V(mx[1]));
  d_out(d, 0, mx[0]);
  d_out(d, 1,
        nn_squeeze(d, D(d, "aten.gather.default", V(flat), I(-1), V(nn_unsqueeze(d, at, -1))),
                   -1));
}

static void adaptive_max_pool2d(decomp *d) { adaptive_max_pool(d, 2); }
static void adaptive_max_pool3d(decomp *d) { adaptive_max_pool(d, 3); }

/* max_unpool: every value written at its flat index within its own
 * (sample, channel) plane of an output of zeros. */
static void max_unpool(decomp *d, int n) {
  alloy_value *x = d_tensor(d, 0), *ix = d_tensor(d, 1);
  alloy_dim os[3];
  if (d_dims(d, 2, os, n) != n) return d_decline(d, "output_size needs %d values", n);
  int r = d_rank(x), nb = r - n;
  const alloy_dim *s = d_shape(x);
  alloy_symtab *st = d_symtab(d);
  alloy_dim shape[ALLOY_MAX_RANK], plane = nn_prod(d, os, n), planes = nn_prod(d, s, nb);
  memcpy(shape, s, sizeof *shape * (size_t)nb);
  memcpy(shape + nb, os, sizeof *os * (size_t)n);
  alloy_dim total = alloy_dim_mul(st, planes, plane), one = alloy_dim_const(1),
            all = nn_prod(d, s, r);
  alloy_dim pshape[ALLOY_MAX_RANK];
  memcpy(pshape, s, sizeof *pshape * (size_t)nb);
  for (int i = nb; i < r; i++) pshape[i] = one;
  alloy_value *base = D(d, "aten.arange.start_step", I(0), SYM(planes), I(1), DT(ALLOY_I64));
  base = nn_view(d, D(d, "aten.mul.Tensor", V(base), SYM(plane)), pshape, r);
  alloy_value *at = nn_reshape(d, D(d, "aten.add.Tensor", V(ix), V(base)), &all, 1);
  alloy_value *zeros = D(d, "aten.full.default", d_dim_list(d, &total, 1), I(0), DT(d_dtype(x)));
  alloy_value *y = D(d, "aten.index_put.default", V(zeros), d_value_list(d, &at, 1),
                     V(nn_reshape(d, x, &all, 1)), B(false));
  d_out(d, 0, nn_view(d, y, shape, r));
}

static void max_unpool2d(decomp *d) { max_unpool(d, 2); }
static void max_unpool3d(decomp *d) { max_unpool(d, 3); }

/* im2col: every kernel-sized block of the padded input as one column,
 * [N, C, H, W] -> [N, C * kh * kw, blocks]; the rows of the blocks are
 * picked along H, their columns along W, then laid out per channel and
 * kernel position. */
static void im2col(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  int64_t k[2], dil[2], pad[2], st[2];
  if (d_ints(d, 1, k, 2) != 2 || d_ints(d, 2, dil, 2) != 2 || d_ints(d, 3, pad, 2) != 2 ||
      d_ints(d, 4, st, 2) != 2)
    return d_decline(d, "kernel_size, dilation, padding and stride need 2 values each");
  bool batched = d_rank(x) == 4;
  if (!batched) x = nn_unsqueeze(d, x, 0);
  if (!x) return;
  const alloy_dim *s = d_shape(x);
  if (!alloy_dim_is_const(s[2]) || !alloy_dim_is_const(s[3]))
    return d_decline(d, "symbolic spatial sizes");
  int64_t in[2] = {s[2].value, s[3].value}, nblk[2];
  alloy_value *at[2];
  for (int i = 0; i < 2; i++) {
    int64_t span = in[i] + 2 * pad[i] - dil[i] * (k[i] - 1);
    nblk[i] = (span - 1) / st[i] + 1;
    if (span <= 0 || nblk[i] <= 0) return d_decline(d, "no blocks fit");
    /* [k, blocks]: block start plus kernel offset */
    alloy_value *starts = nn_unsqueeze(
        d, D(d, "aten.arange.start_step", I(0), I(nblk[i] * st[i]), I(st[i]), DT(ALLOY_I64)), 0);
    alloy_value *offs = nn_unsqueeze(
        d, D(d, "aten.arange.start_step", I(0), I(k[i] * dil[i]), I(dil[i]), DT(ALLOY_I64)), 1);
    alloy_dim n = alloy_dim_const(k[i] * nblk[i]);
    at[i] = nn_view(d, D(d, "aten.add.Tensor", V(starts), V(offs)), &n, 1);
  }
  alloy_value *p = D(d, "aten.constant_pad_nd.default", V(x),
                     LIST(I(pad[1]), I(pad[1]), I(pad[0]), I(pad[0])), I(0));
  p = D(d, "aten.index_select.default", V(D(d, "aten.index_select.default", V(p), I(2), V(at[0]))),
        I(3), V(at[1]));
  alloy_dim six[6] = {s[0],
                      s[1],
                      alloy_dim_const(k[0]),
                      alloy_dim_const(nblk[0]),
                      alloy_dim_const(k[1]),
                      alloy_dim_const(nblk[1])};
  p = D(d, "aten.permute.default", V(nn_view(d, p, six, 6)),
        LIST(I(0), I(1), I(2), I(4), I(3), I(5)));
  alloy_dim out[3] = {s[0], alloy_dim_mul(d_symtab(d), s[1], alloy_dim_const(k[0] * k[1])),
                      alloy_dim_const(nblk[0] * nblk[1])};
  alloy_value *y = nn_view(d, D(d, "aten.clone.default", V(p)), out, 3);
  d_out(d, 0, batched ? y : nn_squeeze(d, y, 0));
}
const decomp_rule decomp_rules_pooling[] = {
    {"aten.max_pool2d.default", max_pool2d, DECOMP_TO_CORE},
    {"aten.adaptive_avg_pool2d.default", adaptive_avg_pool2d, DECOMP_TO_CORE},
    {"aten.max_pool1d.default", max_pool1d_with_indices, DECOMP_TO_CORE},
    {"aten.max_pool1d_with_indices.default", max_pool1d_with_indices, DECOMP_TO_CORE},
    {"aten.max_pool3d.default", max_pool3d, DECOMP_TO_CORE},
    {"aten.adaptive_avg_pool3d.default", adaptive_avg_pool3d, DECOMP_TO_CORE},
    {"aten.adaptive_max_pool1d.default", adaptive_max_pool1d, DECOMP_TO_CORE},
    {"aten.adaptive_max_pool2d.default", adaptive_max_pool2d, DECOMP_TO_CORE},
    {"aten.adaptive_max_pool3d.default", adaptive_max_pool3d, DECOMP_TO_CORE},
    {"aten.max_unpool2d.default", max_unpool2d, DECOMP_TO_CORE},
    {"aten.max_unpool3d.default", max_unpool3d, DECOMP_TO_CORE},
    {"aten.im2col.default", im2col, DECOMP_TO_CORE},
    {NULL, NULL, 0},
};
