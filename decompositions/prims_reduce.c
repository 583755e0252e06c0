/*
 * decompositions/prims_reduce.c: reductions and the normalizations built
 * on them, from Core ATen to prims, as torch._refs computes them: the
 * input converted to the computation dtype (float32 for float16/bfloat16),
 * the reduction prim over the reduced dims (which prims drop), the dims
 * given back with prims.broadcast_in_dim when keepdim, and one conversion
 * to the result dtype at the end. Softmax, log_softmax, layer norm and
 * inference batch norm are the refs' formulas over these.
 */
#include "decompositions/prims_common.h"

#include <string.h>

static alloy_value *prim_reduce(decomp *d, const char *prim, alloy_value *x, const p_dims *rd) {
  return D(d, prim, V(x), d_int_list(d, rd->list, rd->n));
}

/* A reduction to a result of the node's dtype: prim over the dims in the
 * computation dtype, keepdim restored, converted once. */
static void reduce_to_result(decomp *d, const char *prim, alloy_value *x, alloy_dtype compute,
                             const p_dims *rd, bool keepdim) {
  alloy_value *r = prim_reduce(d, prim, p_convert(d, x, compute), rd);
  if (keepdim) r = p_keepdim(d, r, x, rd);
  d_out(d, 0, p_convert(d, r, d_dtype(p_result(d, 0))));
}

/* sum and prod: integers and bools accumulate in int64 unless a dtype is
 * given. The args: self, dims (or -1 for none), keepdim, dtype. */
static void sum_prod(decomp *d, const char *prim, int dims_at, int keepdim_at, int dtype_at) {
  alloy_value *x = d_tensor(d, 0);
  p_dims rd;
  if (dims_at < 0) p_dims_from(0, d_rank(x), &rd);
  else p_reduce_dims(d, dims_at, d_rank(x), true, &rd);
  bool has_dtype = !d_is_none(d, dtype_at);
  alloy_dtype t = d_dtype_or(d, dtype_at, d_dtype(x)), compute, result;
  if (!has_dtype && (alloy_dtype_is_integer(t) || t == ALLOY_BOOL)) t = ALLOY_I64, has_dtype = true;
  alloy_reduction_dtypes(d_dtype(x), has_dtype, t, ALLOY_REDUCE_SAME, &compute, &result);
  /* PyTorch's prod multiplies in the result's dtype, each step rounded
   * there (a float16 partial product overflows), not in float32. */
  if (!strcmp(prim, "prims.prod.default")) compute = result;
  reduce_to_result(d, prim, x, compute, &rd, keepdim_at >= 0 && d_bool(d, keepdim_at));
}

static void sum_dim(decomp *d) { sum_prod(d, "prims.sum.default", 1, 2, 3); }
static void prod_all(decomp *d) { sum_prod(d, "prims.prod.default", -1, -1, 1); }

/* prod.dim_int: one dim. */
static void prod_dim(decomp *d) { sum_prod(d, "prims.prod.default", 1, 2, 3); }

/* amax/amin(self, dim=[], keepdim): [] reduces everything. */
static void amax_amin(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  p_dims rd;
  p_reduce_dims(d, 1, d_rank(x), true, &rd);
  const char *prim = strstr(p_op_name(d), "amax") ? "prims.amax.default" : "prims.amin.default";
  reduce_to_result(d, prim, x, d_dtype(x), &rd, d_bool(d, 2));
}

/* mean = sum / count, both in the computation dtype. */
static void mean_of(decomp *d, const p_dims *rd, bool keepdim, int dtype_at) {
  alloy_value *x = d_tensor(d, 0);
  alloy_dtype compute, result, t = d_dtype_or(d, dtype_at, d_dtype(x));
  alloy_reduction_dtypes(d_dtype(x), !d_is_none(d, dtype_at), t, ALLOY_REDUCE_KEEP_PROMOTED_TYPE,
                         &compute, &result);
  alloy_value *s = prim_reduce(d, "prims.sum.default", p_convert(d, x, compute), rd);
  alloy_value *m = D(d, "prims.div.default", V(s), V(p_count(d, x, rd, compute)));
  if (keepdim) m = p_keepdim(d, m, x, rd);
  d_out(d, 0, p_convert(d, m, d_dtype(p_result(d, 0))));
}

static void mean_dim(decomp *d) {
  p_dims rd;
  p_reduce_dims(d, 1, d_rank(d_tensor(d, 0)), true, &rd);
  mean_of(d, &rd, d_bool(d, 2), 3);
}

static void mean_all(decomp *d) {
  p_dims rd;
  p_dims_from(0, d_rank(d_tensor(d, 0)), &rd);
  mean_of(d, &rd, false, 1);
}

/* var with a correction (Bessel's is 1). */
static void var_of(decomp *d, double correction, bool keepdim) {
  alloy_value *x = d_tensor(d, 0);
  p_dims rd;
  p_reduce_dims(d, 1, d_rank(x), true, &rd);
  alloy_dtype compute, result;
  alloy_reduction_dtypes(d_dtype(x), false, d_dtype(x), ALLOY_REDUCE_COMPLEX_TO_FLOAT, &compute,
                         &result);
  alloy_value *r = D(d, "prims.var.default", V(p_convert(d, x, compute)),
                     d_int_list(d, rd.list, rd.n), F(correction));
  if (keepdim) r = p_keepdim(d, r, x, &rd);
  d_out(d, 0, p_convert(d, r, d_dtype(p_result(d, 0))));
}

static void var_correction(decomp *d) {
  var_of(d, d_is_none(d, 2) ? 1.0 : d_float(d, 2), d_bool(d, 3));
}

static void var_dim(decomp *d) { var_of(d, d_bool(d, 2) ? 1.0 : 0.0, d_bool(d, 3)); }

/* any = sum(x != 0) != 0, counted in int64 (torch._refs.any). */
static void any_of(decomp *d, const p_dims *rd, bool keepdim) {
  alloy_value *x = d_tensor(d, 0);
  alloy_value *b = p_convert(d, x, ALLOY_BOOL);
  alloy_value *n = prim_reduce(d, "prims.sum.default", p_convert(d, b, ALLOY_I64), rd);
  alloy_value *r = D(d, "prims.ne.default", V(n), I(0));
  if (keepdim) r = p_keepdim(d, r, x, rd);
  d_out(d, 0, p_convert(d, r, d_dtype(p_result(d, 0))));
}

static void any_all(decomp *d) {
  p_dims rd;
  p_dims_from(0, d_rank(d_tensor(d, 0)), &rd);
  any_of(d, &rd, false);
}

static void any_dim(decomp *d) {
  p_dims rd;
  p_reduce_dims(d, 1, d_rank(d_tensor(d, 0)), false, &rd);
  any_of(d, &rd, d_bool(d, 2));
}

static void any_dims(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  p_dims rd;
  p_reduce_dims(d, 1, d_rank(x), true, &rd);
  any_of(d, &rd, d_bool(d, 2));
}

/* cumsum(x, dim): as torch._refs, a sum over dim of x masked by
 * i <= j, where i runs along dim and j along a new dim after it. */
static void cumsum(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  int r = d_rank(x);
  if (r == 0) {
    sum_prod(d, "prims.sum.default", -1, -1, 2);
    return;
  }
  int dim = d_wrap_dim(d, d_int(d, 1), r);
  alloy_dim n = d_shape(x)[dim], shape[ALLOY_MAX_RANK], sq[2] = {n, n};
  if (r + 1 > ALLOY_MAX_RANK) return d_decline(d, "rank %d", r);
  bool has_dtype = !d_is_none(d, 2);
  alloy_dtype t = d_dtype_or(d, 2, d_dtype(x)), compute, result;
  if (!has_dtype && (alloy_dtype_is_integer(t) || t == ALLOY_BOOL)) t = ALLOY_I64, has_dtype = true;
  alloy_reduction_dtypes(d_dtype(x), has_dtype, t, ALLOY_REDUCE_SAME, &compute, &result);
  int64_t bx[ALLOY_MAX_RANK], bm[2] = {dim, dim + 1}, b0 = 0, b1 = 1;
  for (int k = 0, j = 0; k <= r; k++) {
    shape[k] = k <= dim ? d_shape(x)[k] : d_shape(x)[k - 1];
    if (k != dim + 1) bx[j++] = k;
  }
  alloy_value *i = D(d, "prims.iota.default", SYM(n), I(0), I(1), DT(ALLOY_I64), p_device(), B(false));
  alloy_value *rows = D(d, "prims.broadcast_in_dim.default", V(i), d_dim_list(d, sq, 2), d_int_list(d, &b0, 1));
  alloy_value *cols = D(d, "prims.broadcast_in_dim.default", V(i), d_dim_list(d, sq, 2), d_int_list(d, &b1, 1));
  alloy_value *mask = D(d, "prims.broadcast_in_dim.default", V(D(d, "prims.le.default", V(rows), V(cols))),
                        d_dim_list(d, shape, r + 1), d_int_list(d, bm, 2));
  alloy_value *xs = D(d, "prims.broadcast_in_dim.default", V(p_convert(d, x, compute)), d_dim_list(d, shape, r + 1),
                      d_int_list(d, bx, r));
  alloy_value *masked = D(d, "prims.where.default", V(mask), V(xs), p_number_as(d, I(0), compute));
  int64_t along = dim;
  alloy_value *s = D(d, "prims.sum.default", V(masked), d_int_list(d, &along, 1));
  d_out(d, 0, p_convert(d, s, d_dtype(p_result(d, 0))));
}

/* --- softmax -------------------------------------------------------------------------*/

/* x - amax(x, dim), in the computation dtype, with the dim it reduces. An
 * empty x is not shifted: amax refuses an empty reduced dim, and the refs
 * skip the max when numel() == 0. */
static alloy_value *shifted(decomp *d, alloy_value *x, p_dims *rd) {
  int rank = d_rank(x);
  int64_t dim = rank ? d_wrap_dim(d, d_int(d, 1), rank) : 0;
  p_dims_from(rank, rank, rd);
  if (rank) rd->mask[dim] = true, rd->list[0] = dim, rd->n = 1;
  if (d_known_empty(x)) return x;
  alloy_value *m = p_keepdim(d, prim_reduce(d, "prims.amax.default", x, rd), x, rd);
  return D(d, "prims.sub.default", V(x), V(p_broadcast(d, m, d_shape(x), rank)));
}

/* sum(e, dim) given back the dim and broadcast to e's shape. */
static alloy_value *sum_back(decomp *d, alloy_value *e, const p_dims *rd) {
  alloy_value *s = p_keepdim(d, prim_reduce(d, "prims.sum.default", e, rd), e, rd);
  return p_broadcast(d, s, d_shape(e), d_rank(e));
}

/* softmax(x) = exp(x - max) / sum(exp(x - max)) */
static void softmax(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  p_dims rd;
  alloy_value *e = D(d, "prims.exp.default", V(shifted(d, p_convert(d, x, alloy_opmath_dtype(d_dtype(x))), &rd)));
  alloy_value *r = D(d, "prims.div.default", V(e), V(sum_back(d, e, &rd)));
  d_out(d, 0, p_convert(d, r, d_dtype(p_result(d, 0))));
}

/* log_softmax(x) = (x - max) - log(sum(exp(x - max))) */
static void log_softmax(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  p_dims rd;
  alloy_dtype t = d_dtype(p_result(d, 0)), c = alloy_opmath_dtype(d_dtype(x));
  alloy_value *s = shifted(d, p_convert(d, x, c), &rd);
  alloy_value *sum = sum_back(d, D(d, "prims.exp.default", V(s)), &rd);
  /* PyTorch's float16/bfloat16 kernel over the last dim holds the sum in
   * that dtype before its log (a dominant element comes out exactly 0). */
  if (t == d_dtype(x) && t != c && (d_rank(x) <= 1 || rd.list[0] == d_rank(x) - 1))
    sum = p_convert(d, p_convert(d, sum, t), c);
  alloy_value *lse = D(d, "prims.log.default", V(sum));
  alloy_value *r = D(d, "prims.sub.default", V(s), V(lse));
  d_out(d, 0, p_convert(d, r, d_dtype(p_result(d, 0))));
}

/* --- normalizations ----------------------------------------------------------------*/

/* t (a parameter of the trailing dims) in dtype c, broadcast to x. */
static alloy_value *param(decomp *d, alloy_value *t, const alloy_value *x, alloy_dtype c) {
  return p_broadcast(d, p_convert(d, t, c), d_shape(x), d_rank(x));
}

/* native_layer_norm: out = (x - mean) rstd * w + b over the normalized
 * trailing dims, rstd = 1 / sqrt(var + eps) (biased var); mean and rstd
 * keep the dims. The deviations are taken from the mean in two steps, the
 * second subtracting the mean of the first's (the mean's rounding error): with
 * the mean large against the spread, x - mean in float32 would otherwise
 * carry the mean's rounding error many times over (6e-6 relative where
 * the kernel, exact to a rounding, is within 1e-7). */
static void native_layer_norm(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *w = d_tensor(d, 2), *b = d_tensor(d, 3);
  alloy_dim norm[ALLOY_MAX_RANK];
  int nn = d_dims(d, 1, norm, ALLOY_MAX_RANK), rank = d_rank(x);
  alloy_dtype c = alloy_opmath_dtype(d_dtype(x));
  p_dims rd;
  p_dims_from(rank - nn, rank, &rd);
  alloy_value *xc = p_convert(d, x, c), *count = p_count(d, x, &rd, c);
  alloy_value *mean0 = D(d, "prims.div.default", V(prim_reduce(d, "prims.sum.default", xc, &rd)), V(count));
  alloy_value *dev0 = D(d, "prims.sub.default", V(xc), V(p_broadcast(d, p_keepdim(d, mean0, x, &rd), d_shape(x), rank)));
  alloy_value *fix = D(d, "prims.div.default", V(prim_reduce(d, "prims.sum.default", dev0, &rd)), V(count));
  alloy_value *dev = D(d, "prims.sub.default", V(dev0), V(p_broadcast(d, p_keepdim(d, fix, x, &rd), d_shape(x), rank)));
  alloy_value *sq = prim_reduce(d, "prims.sum.default", D(d, "prims.mul.default", V(dev), V(dev)), &rd);
  alloy_value *var = p_keepdim(d, D(d, "prims.div.default", V(sq), V(count)), x, &rd);
  alloy_value *rstd = D(d, "prims.rsqrt.default", V(D(d, "prims.add.default", V(var), F(d_float(d, 4)))));
  alloy_value *out = D(d, "prims.mul.default", V(dev), V(p_broadcast(d, rstd, d_shape(x), rank)));
  if (w) out = D(d, "prims.mul.default", V(out), V(param(d, w, x, c)));
  if (b) out = D(d, "prims.add.default", V(out), V(param(d, b, x, c)));
  d_out(d, 0, p_convert(d, out, d_dtype(p_result(d, 0))));
  d_out(d, 1, p_convert(d, p_keepdim(d, mean0, x, &rd), d_dtype(p_result(d, 1))));
  d_out(d, 2, p_convert(d, rstd, d_dtype(p_result(d, 2))));
}

/* A per-channel vector (dim 1 of x) in dtype c, broadcast to x. */
static alloy_value *channel(decomp *d, alloy_value *t, const alloy_value *x, alloy_dtype c) {
  int64_t one = 1;
  alloy_value *v = D(d, "prims.broadcast_in_dim.default", V(p_convert(d, t, c)),
                     d_dim_list(d, d_shape(x), d_rank(x)), d_int_list(d, &one, 1));
  return v;
}

/* v (in c) rounded to dtype t and back: a value PyTorch keeps in a tensor
 * of dtype t before computing on with it. */
static alloy_value *rounded(decomp *d, alloy_value *v, alloy_dtype t, alloy_dtype c) {
  return t == c ? v : p_convert(d, p_convert(d, v, t), c);
}

/* The batch norms' output as PyTorch's CPU kernels form it: x * alpha +
 * beta per channel, alpha = invstd * w and beta = b - mean * alpha, all in
 * c. The form shows in the edge values: an infinite weight with a zero
 * mean makes beta NaN, so every output of the channel is NaN. */
static alloy_value *bn_output(decomp *d, alloy_value *xc, const alloy_value *x, alloy_value *mean,
                              alloy_value *invstd, alloy_value *w, alloy_value *b, alloy_dtype c) {
  alloy_value *alpha = w ? D(d, "prims.mul.default", V(invstd), V(p_convert(d, w, c))) : invstd;
  alloy_value *ma = D(d, "prims.mul.default", V(mean), V(alpha));
  alloy_value *beta = b ? D(d, "prims.sub.default", V(p_convert(d, b, c)), V(ma))
                        : D(d, "prims.sub.default", V(p_full(d, d_shape(ma), d_rank(ma), I(0), c)), V(ma));
  return D(d, "prims.add.default", V(D(d, "prims.mul.default", V(xc), V(channel(d, alpha, x, c)))),
           V(channel(d, beta, x, c)));
}

/* Inference batch norm: x * alpha + beta from the running stats, invstd =
 * 1 / sqrt(running_var + eps); the saved mean and rstd are empty. */
static void batch_norm_no_training(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *w = d_tensor(d, 1), *b = d_tensor(d, 2);
  alloy_value *rm = d_tensor(d, 3), *rv = d_tensor(d, 4);
  if (d_rank(x) < 2) return d_decline(d, "input of rank %d", d_rank(x));
  alloy_dtype c = alloy_opmath_dtype(d_dtype(x));
  alloy_value *invstd = D(d, "prims.rsqrt.default", V(D(d, "prims.add.default", V(p_convert(d, rv, c)), F(d_float(d, 6)))));
  alloy_value *out = bn_output(d, p_convert(d, x, c), x, p_convert(d, rm, c), invstd, w, b, c);
  d_out(d, 0, p_convert(d, out, d_dtype(p_result(d, 0))));
  for (int k = 1; k < 3; k++) {
    const alloy_value *r = p_result(d, k);
    d_out(d, k, p_full(d, d_shape(r), d_rank(r), I(0), d_dtype(r)));
  }
}

/* Training batch norm without running stats: x normalized per channel
 * over the batch and spatial dims (biased var); mean and rstd are [C].
 * As PyTorch's CPU kernel, the output is computed from the statistics as
 * they are saved, in their dtype (float16 or bfloat16 for such inputs):
 * mean and invstd are rounded to it before alpha and beta are formed, and
 * for bfloat16 the sum of squared deviations is kept in bfloat16 and
 * divided by the count there too. invstd is 0 for a zero variance when
 * eps is 0 (its InvStd). */
static void batch_norm_no_stats(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *w = d_tensor(d, 1), *b = d_tensor(d, 2);
  if (d_rank(x) < 2 || !d_bool(d, 3)) return d_decline(d, "inference without running stats");
  alloy_dtype c = alloy_opmath_dtype(d_dtype(x)), st = d_dtype(p_result(d, 1));
  double eps = d_float(d, 5);
  alloy_value *xc = p_convert(d, x, c);
  p_dims rd;
  p_dims_from(0, d_rank(x), &rd);
  rd.mask[1] = false, rd.n = 0;
  for (int k = 0; k < d_rank(x); k++)
    if (rd.mask[k]) rd.list[rd.n++] = k;
  alloy_value *count = p_count(d, x, &rd, c);
  alloy_value *mean = D(d, "prims.div.default", V(prim_reduce(d, "prims.sum.default", xc, &rd)), V(count));
  alloy_value *var;
  if (st == ALLOY_BF16) {
    alloy_value *dev = D(d, "prims.sub.default", V(xc), V(channel(d, mean, x, c)));
    alloy_value *q = prim_reduce(d, "prims.sum.default", D(d, "prims.mul.default", V(dev), V(dev)), &rd);
    var = rounded(d, D(d, "prims.div.default", V(rounded(d, q, st, c)), V(count)), st, c);
  } else {
    var = D(d, "prims.var.default", V(xc), d_int_list(d, rd.list, rd.n), F(0));
  }
  alloy_value *rstd = D(d, "prims.rsqrt.default", V(D(d, "prims.add.default", V(var), F(eps))));
  if (eps == 0.0)
    rstd = D(d, "prims.where.default", V(D(d, "prims.eq.default", V(var), F(0))), F(0), V(rstd));
  mean = rounded(d, mean, st, c);
  rstd = rounded(d, rstd, st, c);
  alloy_value *out = bn_output(d, xc, x, mean, rstd, w, b, c);
  d_out(d, 0, p_convert(d, out, d_dtype(p_result(d, 0))));
  d_out(d, 1, p_convert(d, mean, st));
  d_out(d, 2, p_convert(d, rstd, d_dtype(p_result(d, 2))));
}

/* native_group_norm: x seen as [N, group, rest], normalized over rest
 * like layer norm, then scaled and shifted per channel; mean and rstd are
 * [N, group]. */
static void native_group_norm(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *w = d_tensor(d, 1), *b = d_tensor(d, 2);
  if (d_rank(x) < 2) return d_decline(d, "input of rank %d", d_rank(x));
  alloy_symtab *st = d_symtab(d);
  alloy_dim g = alloy_dim_const(d_int(d, 6));
  alloy_dim shape[3] = {d_dim(d, 3), g, alloy_dim_mul(st, alloy_dim_floordiv(st, d_dim(d, 4), g), d_dim(d, 5))};
  alloy_dtype c = alloy_opmath_dtype(d_dtype(x));
  alloy_value *xr = D(d, "prims.reshape.default", V(p_convert(d, x, c)), d_dim_list(d, shape, 3));
  p_dims rd;
  p_dims_from(2, 3, &rd);
  alloy_value *mean = D(d, "prims.div.default", V(prim_reduce(d, "prims.sum.default", xr, &rd)),
                        V(p_count(d, xr, &rd, c)));
  alloy_value *var = D(d, "prims.var.default", V(xr), d_int_list(d, rd.list, rd.n), F(0));
  alloy_value *rstd = D(d, "prims.rsqrt.default", V(D(d, "prims.add.default", V(var), F(d_float(d, 7)))));
  alloy_value *out = D(d, "prims.sub.default", V(xr), V(p_broadcast(d, p_keepdim(d, mean, xr, &rd), shape, 3)));
  out = D(d, "prims.mul.default", V(out), V(p_broadcast(d, p_keepdim(d, rstd, xr, &rd), shape, 3)));
  out = D(d, "prims.reshape.default", V(out), d_dim_list(d, d_shape(x), d_rank(x)));
  if (w) out = D(d, "prims.mul.default", V(out), V(channel(d, w, x, c)));
  if (b) out = D(d, "prims.add.default", V(out), V(channel(d, b, x, c)));
  d_out(d, 0, p_convert(d, out, d_dtype(p_result(d, 0))));
  d_out(d, 1, p_convert(d, mean, d_dtype(p_result(d, 1))));
  d_out(d, 2, p_convert(d, rstd, d_dtype(p_result(d, 2))));
}

const decomp_rule decomp_prims_reduce[] = {
    {"aten.native_group_norm.default", native_group_norm, DECOMP_TO_PRIMS},
    {"aten.cumsum.default", cumsum, DECOMP_TO_PRIMS},
    {"aten._native_batch_norm_legit.no_stats", batch_norm_no_stats, DECOMP_TO_PRIMS},
    {"aten.sum.dim_IntList", sum_dim, DECOMP_TO_PRIMS},
    {"aten.prod.default", prod_all, DECOMP_TO_PRIMS},
    {"aten.prod.dim_int", prod_dim, DECOMP_TO_PRIMS},
    {"aten.amax.default", amax_amin, DECOMP_TO_PRIMS},
    {"aten.amin.default", amax_amin, DECOMP_TO_PRIMS},
    {"aten.mean.dim", mean_dim, DECOMP_TO_PRIMS},
    {"aten.mean.default", mean_all, DECOMP_TO_PRIMS},
    {"aten.var.correction", var_correction, DECOMP_TO_PRIMS},
    {"aten.var.dim", var_dim, DECOMP_TO_PRIMS},
    {"aten.any.default", any_all, DECOMP_TO_PRIMS},
    {"aten.any.dim", any_dim, DECOMP_TO_PRIMS},
    {"aten.any.dims", any_dims, DECOMP_TO_PRIMS},
    {"aten._softmax.default", softmax, DECOMP_TO_PRIMS},
    {"aten._log_softmax.default", log_softmax, DECOMP_TO_PRIMS},
    {"aten.native_layer_norm.default", native_layer_norm, DECOMP_TO_PRIMS},
    {"aten._native_batch_norm_legit_no_training.default", batch_norm_no_training, DECOMP_TO_PRIMS},
    {NULL, NULL, 0},
};
