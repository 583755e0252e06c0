/*
 * decompositions/rules_nn.c: the neural-network composites, from ATen to
 * Core ATen: matrix products (linear, matmul, dot, mv, addmv, addr,
 * baddbmm, addbmm, CUDA's addmm.dtype and baddbmm.dtype, _trilinear,
 * bilinear, _addmm_activation), attention (and its math and CPU flash
 * variants), prelu, embedding_renorm, the normalizations (layer, batch in
 * all its modes and cuDNN's, group, instance, RMS, weight), conv2d, dropout,
 * linalg_cross and embedding_bag. The rest of the family: convolutions in
 * rules_conv.c, pooling in rules_pooling.c, losses and distances in
 * rules_losses.c, padding, shuffles and upsampling in rules_resample.c,
 * recurrent layers in rules_rnn.c; the helpers they share are declared in
 * rules_nn_util.h and defined here.
 *
 * The math follows PyTorch's own decompositions (torch/_decomp,
 * torch/_refs) and, where those are C++ composites, ATen's native code.
 * Reshapes that PyTorch can only do as a view of a contiguous tensor are
 * written aten.view (a product's fresh result); reshapes of an argument,
 * whose layout PyTorch does not know, are aten.reshape.
 */
#include <math.h>
#include <string.h>

#include "ir/checked.h"
#include "decompositions/rules.h"
#include "decompositions/rules_nn_util.h"

/* --- shared helpers (declared in rules_nn_util.h) ------------------------------*/

/* Whether x already has this shape (then views and expands are skipped). */
static bool has_shape(decomp *d, const alloy_value *x, const alloy_dim *shape, int n) {
  if (!x || d_rank(x) != n) return false;
  for (int i = 0; i < n; i++)
    if (!alloy_dim_same(d_shape(x)[i], shape[i]) &&
        alloy_dim_eq(d_symtab(d), d_shape(x)[i], shape[i]) != ALLOY_TRUE)
      return false;
  return true;
}

alloy_value *nn_view(decomp *d, alloy_value *x, const alloy_dim *shape, int n) {
  if (has_shape(d, x, shape, n)) return x;
  return D(d, "aten.view.default", V(x), d_dim_list(d, shape, n));
}

alloy_value *nn_reshape(decomp *d, alloy_value *x, const alloy_dim *shape, int n) {
  if (has_shape(d, x, shape, n)) return x;
  return D(d, "aten.reshape.default", V(x), d_dim_list(d, shape, n));
}

static alloy_value *expand(decomp *d, alloy_value *x, const alloy_dim *shape, int n) {
  if (has_shape(d, x, shape, n)) return x;
  return D(d, "aten.expand.default", V(x), d_dim_list(d, shape, n));
}

/* Swaps the last two dims (a matrix transpose of every batch item). */
alloy_value *nn_mT(decomp *d, alloy_value *x) {
  if (!x) return NULL;
  int r = d_rank(x);
  int64_t perm[ALLOY_MAX_RANK];
  for (int i = 0; i < r; i++) perm[i] = i;
  if (r >= 2) {
    perm[r - 2] = r - 1;
    perm[r - 1] = r - 2;
  }
  return D(d, "aten.permute.default", V(x), d_int_list(d, perm, r));
}

/* The product of n dims, symbolic where they are. */
alloy_dim nn_prod(decomp *d, const alloy_dim *dims, int n) {
  alloy_dim p = alloy_dim_const(1);
  for (int i = 0; i < n; i++) p = alloy_dim_mul(d_symtab(d), p, dims[i]);
  return p;
}

alloy_value *nn_unsqueeze(decomp *d, alloy_value *x, int dim) {
  return D(d, "aten.unsqueeze.default", V(x), I(dim));
}

alloy_value *nn_squeeze(decomp *d, alloy_value *x, int dim) {
  return D(d, "aten.squeeze.dim", V(x), I(dim));
}

/* The sum over every dim, in the input's dtype (sum would widen integers). */
alloy_value *nn_sum_all(decomp *d, alloy_value *x) {
  return D(d, "aten.sum.dim_IntList", V(x), NONE, B(false), DT(d_dtype(x)));
}

/* A Scalar argument as the number it is: an int stays an int; for an
 * integer tensor t a float is truncated, as PyTorch's int(beta) does. */
alloy_arg nn_scalar(decomp *d, int i, alloy_dtype t) {
  const alloy_arg *a = d_arg(d, i);
  if (a->kind == ALLOY_ARG_BOOL) return I(a->u.b);
  if (a->kind == ALLOY_ARG_FLOAT && !alloy_dtype_is_float(t) && !alloy_dtype_is_complex(t))
    return I(alloy_saturating_from_double(a->u.f));
  return *a;
}

/* A Scalar argument that is exactly n, once read as for a tensor of t. */
bool nn_scalar_is(decomp *d, int i, alloy_dtype t, double n) {
  alloy_arg a = nn_scalar(d, i, t);
  return a.kind == ALLOY_ARG_FLOAT
             ? a.u.f == n
             : a.kind == ALLOY_ARG_INT && alloy_dim_is_const(a.u.i) && (double)a.u.i.value == n;
}

/* --- matrix products --------------------------------------------------------------*/

/* dot(a, b) = sum(a * b), accumulated in opmath as the native kernels do
 * (products rounded to float16 one by one would lose what they keep). */
static void dot(decomp *d) {
  alloy_value *a = d_tensor(d, 0), *b = d_tensor(d, 1);
  alloy_dtype t = d_dtype(a), c = d_opmath(t);
  if (alloy_dtype_is_complex(t)) return d_decline(d, "complex dot");
  alloy_value *p = D(d, "aten.mul.Tensor", V(d_to(d, a, c)), V(d_to(d, b, c)));
  d_out(d, 0, d_to(d, nn_sum_all(d, p), t));
}

/* vdot(a, b) = dot(conj(a), b), the same as dot for real tensors */
static void vdot(decomp *d) {
  if (alloy_dtype_is_complex(d_dtype(d_tensor(d, 0)))) return d_decline(d, "complex vdot");
  dot(d);
}

/* mv(A, x)_i = sum_j A_ij x_j, in opmath */
static void mv(decomp *d) {
  alloy_value *a = d_tensor(d, 0), *x = d_tensor(d, 1);
  alloy_dtype t = d_dtype(a), c = d_opmath(t);
  alloy_value *p = D(d, "aten.mul.Tensor", V(d_to(d, a, c)), V(d_to(d, x, c)));
  p = D(d, "aten.sum.dim_IntList", V(p), LIST(I(1)), B(false), DT(c));
  d_out(d, 0, d_to(d, p, t));
}

/* matmul by the ranks of its operands, as PyTorch's: vector and matrix
 * cases map to dot/mv/mm; a batched left operand times a matrix or vector
 * folds its batch into the rows of one mm/mv; everything else broadcasts
 * the batch dims, flattens them and runs bmm. */
static alloy_value *matmul_of(decomp *d, alloy_value *a, alloy_value *b) {
  if (!a || !b) return NULL; /* an earlier step failed */
  int ra = d_rank(a), rb = d_rank(b);
  const alloy_dim *sa = d_shape(a), *sb = d_shape(b);
  alloy_symtab *st = d_symtab(d);
  if (ra == 0 || rb == 0) return d_fail(d, "matmul of a 0-dimensional tensor");
  if (ra == 1 && rb == 1) return D(d, "aten.dot.default", V(a), V(b));
  if (ra == 2 && rb == 1) return D(d, "aten.mv.default", V(a), V(b));
  if (ra == 1 && rb == 2)
    return nn_squeeze(d, D(d, "aten.mm.default", V(nn_unsqueeze(d, a, 0)), V(b)), 0);
  if (ra == 2 && rb == 2) return D(d, "aten.mm.default", V(a), V(b));
  alloy_dim shape[ALLOY_MAX_RANK + 1];
  if (ra >= 3 && rb <= 2) {
    /* [..., n, k] -> [prod(...) * n, k] */
    alloy_dim folded[2] = {nn_prod(d, sa, ra - 1), sa[ra - 1]};
    alloy_value *a2 = nn_reshape(d, a, folded, 2);
    memcpy(shape, sa, sizeof *shape * (size_t)(ra - 1));
    if (rb == 2) {
      shape[ra - 1] = sb[1];
      return nn_view(d, D(d, "aten.mm.default", V(a2), V(b)), shape, ra);
    }
    return nn_view(d, D(d, "aten.mv.default", V(a2), V(b)), shape, ra - 1);
  }
  /* Batched: broadcast the batch dims of both. */
  alloy_dim n = ra > 1 ? sa[ra - 2] : alloy_dim_const(1), m1 = sa[ra - 1];
  alloy_dim m2 = rb > 1 ? sb[rb - 2] : sb[0], p = rb > 1 ? sb[rb - 1] : alloy_dim_const(1);
  int nba = ra > 2 ? ra - 2 : 0, nbb = rb > 2 ? rb - 2 : 0;
  int nb = nba > nbb ? nba : nbb;
  alloy_dim batch[ALLOY_MAX_RANK];
  for (int i = 0; i < nb; i++) {
    int ia = i - (nb - nba), ib = i - (nb - nbb);
    alloy_dim x = ia >= 0 ? sa[ia] : alloy_dim_const(1), y = ib >= 0 ? sb[ib] : alloy_dim_const(1);
    alloy_error *e = alloy_dim_broadcast(st, x, y, &batch[i]);
    if (e) {
      d_fail(d, "matmul: %s", alloy_error_message(e));
      alloy_error_free(e);
      return NULL;
    }
  }
  alloy_dim bp = nn_prod(d, batch, nb);
  memcpy(shape, batch, sizeof *shape * (size_t)nb);
  shape[nb] = n;
  shape[nb + 1] = m1;
  alloy_value *ae = expand(d, a, shape, nb + 2);
  alloy_dim a3[3] = {bp, n, m1};
  ae = nn_reshape(d, ae, a3, 3);
  alloy_value *be;
  if (rb == 1) {
    shape[nb] = m2;
    be = expand(d, b, shape, nb + 1);
    alloy_dim b2[2] = {bp, m2};
    be = nn_unsqueeze(d, nn_reshape(d, be, b2, 2), 2);
  } else {
    shape[nb] = m2;
    shape[nb + 1] = p;
    be = expand(d, b, shape, nb + 2);
    alloy_dim b3[3] = {bp, m2, p};
    be = nn_reshape(d, be, b3, 3);
  }
  alloy_value *r = D(d, "aten.bmm.default", V(ae), V(be));
  if (rb == 1) r = nn_squeeze(d, r, -1);
  int no = nb;
  if (ra > 1) shape[no++] = n;
  if (rb > 1) shape[no++] = p;
  return nn_view(d, r, shape, no);
}

static void matmul(decomp *d) { d_out(d, 0, matmul_of(d, d_tensor(d, 0), d_tensor(d, 1))); }

alloy_value *nn_matmul(decomp *d, alloy_value *a, alloy_value *b) { return matmul_of(d, a, b); }

/* linear(x, W, b) = x W^T + b; a batched x is flattened to one addmm. */
static void linear(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *w = d_tensor(d, 1), *b = d_tensor(d, 2);
  int r = d_rank(x);
  if (d_rank(w) != 2 || r < 2) {
    alloy_value *y = matmul_of(d, x, d_rank(w) == 2 ? nn_mT(d, w) : w);
    d_out(d, 0, b ? D(d, "aten.add.Tensor", V(y), V(b)) : y);
    return;
  }
  alloy_value *wt = nn_mT(d, w);
  const alloy_dim *sx = d_shape(x);
  alloy_value *x2 = x;
  if (r > 2) {
    alloy_dim folded[2] = {nn_prod(d, sx, r - 1), sx[r - 1]};
    x2 = nn_reshape(d, x, folded, 2);
  }
  alloy_value *y =
      b ? D(d, "aten.addmm.default", V(b), V(x2), V(wt)) : D(d, "aten.mm.default", V(x2), V(wt));
  if (r > 2) {
    alloy_dim shape[ALLOY_MAX_RANK];
    memcpy(shape, sx, sizeof *shape * (size_t)(r - 1));
    shape[r - 1] = d_shape(w)[0];
    y = nn_view(d, y, shape, r);
  }
  d_out(d, 0, y);
}

/* alpha * P + beta * self, where beta == 0 ignores self (its NaNs too).
 * PyTorch computes the whole in opmath; integer inputs take integer
 * scalars. */
static alloy_value *scaled_sum(decomp *d, alloy_value *self, alloy_value *p, int beta_at,
                               int alpha_at) {
  alloy_dtype t = d_dtype(p);
  alloy_value *out = nn_scalar_is(d, alpha_at, t, 1)
                         ? p
                         : D(d, "aten.mul.Tensor", V(p), nn_scalar(d, alpha_at, t));
  if (nn_scalar_is(d, beta_at, t, 0)) return out;
  alloy_value *s = nn_scalar_is(d, beta_at, t, 1)
                       ? self
                       : D(d, "aten.mul.Tensor", V(self), nn_scalar(d, beta_at, t));
  return D(d, "aten.add.Tensor", V(s), V(out));
}

/* addmv(self, A, x) = beta * self + alpha * (A x) */
static void addmv(decomp *d) {
  alloy_value *self = d_tensor(d, 0), *a = d_tensor(d, 1), *x = d_tensor(d, 2);
  alloy_dtype t = d_dtype(a), c = d_opmath(t);
  alloy_value *p = D(d, "aten.mv.default", V(d_to(d, a, c)), V(d_to(d, x, c)));
  alloy_value *r = scaled_sum(d, d_to(d, self, c), p, 3, 4);
  if (r && d_rank(r) != 1) {
    alloy_dim n = d_shape(a)[0];
    r = D(d, "aten.expand.default", V(r), d_dim_list(d, &n, 1));
  }
  d_out(d, 0, d_to(d, r, t));
}

/* addr(self, u, v) = beta * self + alpha * outer(u, v) in the tensors'
 * dtype, as PyTorch's reference; for bool tensors the products are ands
 * and the sum an or. */
static void addr(decomp *d) {
  alloy_value *self = d_tensor(d, 0), *u = d_tensor(d, 1), *v = d_tensor(d, 2);
  alloy_dtype t = d_dtype(self);
  alloy_dim shape[2] = {d_shape(u)[0], d_shape(v)[0]};
  alloy_value *r;
  if (t == ALLOY_F16 || t == ALLOY_BF16) {
    /* The native kernel reads beta and alpha in the tensor's dtype and
     * rounds beta * self + (alpha * u) * v at every step. */
    alloy_value *alpha = D(d, "aten.scalar_tensor.default", *d_arg(d, 4), DT(t));
    alloy_value *au = D(d, "aten.mul.Tensor", V(alpha), V(u));
    r = D(d, "aten.mul.Tensor", V(nn_unsqueeze(d, au, 1)), V(nn_unsqueeze(d, v, 0)));
    if (!nn_scalar_is(d, 3, t, 0)) {
      alloy_value *beta = D(d, "aten.scalar_tensor.default", *d_arg(d, 3), DT(t));
      r = D(d, "aten.add.Tensor", V(D(d, "aten.mul.Tensor", V(beta), V(self))), V(r));
    }
  } else {
    alloy_value *outer =
        D(d, "aten.mul.Tensor", V(nn_unsqueeze(d, u, 1)), V(nn_unsqueeze(d, v, 0)));
    if (t == ALLOY_BOOL) {
      bool beta = d_float(d, 3) != 0, alpha = d_float(d, 4) != 0;
      alloy_value *o =
          alpha ? outer
                : D(d, "aten.full.default", d_dim_list(d, shape, 2), B(false), DT(ALLOY_BOOL));
      r = beta ? D(d, "aten.logical_or.default", V(self), V(o)) : o;
    } else {
      r = scaled_sum(d, self, outer, 3, 4);
    }
  }
  if (r && d_rank(r) != 2) r = D(d, "aten.expand.default", V(r), d_dim_list(d, shape, 2));
  d_out(d, 0, r);
}

/* baddbmm(self, A, B) = beta * self + alpha * bmm(A, B), in opmath */
static void baddbmm(decomp *d) {
  alloy_value *self = d_tensor(d, 0), *a = d_tensor(d, 1), *b = d_tensor(d, 2);
  alloy_dtype t = d_dtype(self), c = d_opmath(t);
  alloy_value *p = D(d, "aten.bmm.default", V(d_to(d, a, c)), V(d_to(d, b, c)));
  alloy_value *r = scaled_sum(d, d_to(d, self, c), p, 3, 4);
  if (r && d_rank(r) != 3) {
    alloy_dim shape[3] = {d_shape(a)[0], d_shape(a)[1], d_shape(b)[2]};
    r = D(d, "aten.expand.default", V(r), d_dim_list(d, shape, 3));
  }
  d_out(d, 0, d_to(d, r, t));
}

/* addmm.dtype and baddbmm.dtype(self, A, B, out_dtype, beta, alpha): CUDA's
 * product of float16 or bfloat16 factors into a float32 result (cuBLAS
 * accumulates in float32; self is added in float32), or in the factors'
 * own dtype: the plain op on the operands converted to out_dtype (the
 * shape function refuses the other combinations as PyTorch does). A
 * float16 product is exact in float32, so only the sums round, as there. */
static void matmul_out_dtype(decomp *d) {
  alloy_value *self = d_tensor(d, 0), *a = d_tensor(d, 1), *b = d_tensor(d, 2);
  alloy_dtype t = d_out_dtype(d, 0);
  const char *op = d_rank(a) == 3 ? "aten.baddbmm.default" : "aten.addmm.default";
  d_out(d, 0, D(d, op, V(d_to(d, self, t)), V(d_to(d, a, t)), V(d_to(d, b, t)), *d_arg(d, 4),
                *d_arg(d, 5)));
}

/* addbmm(self, A, B) = beta * self + alpha * sum_b A_b B_b, in opmath.
 * The native kernel adds one batch's product after the other to the
 * result, rounding it to the dtype each time; for float16 and bfloat16
 * (and a known, modest batch count) the rule does the same. */
static void addbmm(decomp *d) {
  alloy_value *self = d_tensor(d, 0), *a = d_tensor(d, 1), *b = d_tensor(d, 2);
  alloy_dtype t = d_dtype(self), c = d_opmath(t);
  alloy_dim nb = d_shape(a)[0];
  alloy_value *p = D(d, "aten.bmm.default", V(d_to(d, a, c)), V(d_to(d, b, c)));
  alloy_value *r;
  if (c != t && alloy_dim_is_const(nb) && nb.value >= 1 && nb.value <= 64) {
    r = scaled_sum(d, d_to(d, self, c), D(d, "aten.select.int", V(p), I(0), I(0)), 3, 4);
    for (int64_t k = 1; k < nb.value; k++) {
      alloy_value *pk = D(d, "aten.select.int", V(p), I(0), I(k));
      if (!nn_scalar_is(d, 4, c, 1)) pk = D(d, "aten.mul.Tensor", V(pk), nn_scalar(d, 4, c));
      r = D(d, "aten.add.Tensor", V(d_to(d, d_to(d, r, t), c)), V(pk));
    }
  } else {
    r = scaled_sum(d, d_to(d, self, c), D(d, "aten.sum.dim_IntList", V(p), LIST(I(0))), 3, 4);
  }
  if (r && d_rank(r) != 2) {
    alloy_dim shape[2] = {d_shape(a)[1], d_shape(b)[2]};
    r = D(d, "aten.expand.default", V(r), d_dim_list(d, shape, 2));
  }
  d_out(d, 0, d_to(d, r, t));
}

/* The input with size-1 dims inserted at the positions listed in arg ai. */
static alloy_value *expanded_at(decomp *d, alloy_value *x, int ai) {
  int64_t pos[ALLOY_MAX_RANK];
  int n = d_ints(d, ai, pos, ALLOY_MAX_RANK);
  bool at[ALLOY_MAX_RANK * 2] = {false};
  for (int k = 0; k < n; k++)
    if (pos[k] >= 0 && pos[k] < ALLOY_MAX_RANK * 2) at[pos[k]] = true;
  for (int k = 0; x && k < ALLOY_MAX_RANK * 2; k++)
    if (at[k]) x = nn_unsqueeze(d, x, k);
  return x;
}

/* _trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim):
 * sum over sumdim of i1 * i2 * i3, each given size-1 dims at its expand
 * positions. In the native kernel's stages, each rounded to the dtype:
 * i1 * i2 summed over the summed dims i3 lacks, times i3 summed over the
 * rest (but unroll_dim), then added up along unroll_dim index by index. */
static void trilinear(decomp *d) {
  alloy_value *u1 = expanded_at(d, d_tensor(d, 0), 3), *u2 = expanded_at(d, d_tensor(d, 1), 4);
  alloy_value *u3 = expanded_at(d, d_tensor(d, 2), 5);
  int64_t sd[ALLOY_MAX_RANK], ex3[ALLOY_MAX_RANK];
  int nsum = d_ints(d, 6, sd, ALLOY_MAX_RANK), nex3 = d_ints(d, 5, ex3, ALLOY_MAX_RANK);
  int64_t unroll = d_int(d, 7);
  if (d_failed(d) || !u1 || !u2 || !u3) return;
  const alloy_value *want = alloy_node_output(d_node(d), 0);
  alloy_dtype t = d_dtype(want), c = d_opmath(t);
  /* The kernel loops over unroll_dim as far as an operand that has it
   * reaches: not at all when the three are expanded there (zeros). */
  bool no_unroll = true;
  for (int k = 3; k < 6; k++) {
    int64_t ex[ALLOY_MAX_RANK];
    int n = d_ints(d, k, ex, ALLOY_MAX_RANK);
    bool has = false;
    for (int e = 0; e < n; e++) has |= ex[e] == unroll;
    no_unroll &= has;
  }
  if (no_unroll) {
    d_out(d, 0, D(d, "aten.full.default", d_dim_list(d, d_shape(want), d_rank(want)), I(0), DT(t)));
    return;
  }
  int total = d_rank(u1);
  int64_t s12[ALLOY_MAX_RANK], s23[ALLOY_MAX_RANK];
  int n12 = 0, n23 = 0;
  bool unroll_summed = false;
  for (int k = 0; k < nsum; k++) {
    bool lacks3 = false;
    for (int e = 0; e < nex3; e++) lacks3 |= ex3[e] == sd[k];
    if (sd[k] == unroll)
      unroll_summed = true;
    else if (lacks3)
      s12[n12++] = sd[k];
    else
      s23[n23++] = sd[k];
  }
  alloy_value *p = D(d, "aten.mul.Tensor", V(d_to(d, u1, c)), V(d_to(d, u2, c)));
  if (n12)
    p = d_to(d, d_to(d, D(d, "aten.sum.dim_IntList", V(p), d_int_list(d, s12, n12), B(true)), t),
              c);
  p = D(d, "aten.mul.Tensor", V(p), V(d_to(d, u3, c)));
  if (n23) p = D(d, "aten.sum.dim_IntList", V(p), d_int_list(d, s23, n23), B(true));
  p = d_to(d, p, t);
  if (unroll_summed && p) {
    alloy_dim un = d_shape(p)[d_wrap_dim(d, unroll, total)];
    if (c != t && alloy_dim_is_const(un) && un.value >= 1 && un.value <= 64) {
      alloy_value *acc = D(d, "aten.slice.Tensor", V(p), I(unroll), I(0), I(1));
      for (int64_t k = 1; k < un.value; k++)
        acc = D(d, "aten.add.Tensor", V(acc),
                V(D(d, "aten.slice.Tensor", V(p), I(unroll), I(k), I(k + 1))));
      p = acc;
    } else {
      /* An integer sum is int64; the native kernel accumulates into a
       * tensor of the dtype, which wraps alike. */
      p = d_to(d, D(d, "aten.sum.dim_IntList", V(p), LIST(I(unroll)), B(true)), t);
    }
  }
  if (nsum) p = D(d, "aten.squeeze.dims", V(p), d_int_list(d, sd, nsum));
  if (p && !d_failed(d) && d_rank(p) == d_rank(want)) p = expand(d, p, d_shape(want), d_rank(want));
  d_out(d, 0, p);
}

/* --- attention ------------------------------------------------------------------------*/

/* key [..., Hk, S, E] -> [..., Hk * r, S, E], each head repeated r times
 * in place (repeat_interleave on dim -3). */
static alloy_value *repeat_heads(decomp *d, alloy_value *k, int64_t r) {
  int n = d_rank(k);
  const alloy_dim *s = d_shape(k);
  alloy_dim big[ALLOY_MAX_RANK + 1], out[ALLOY_MAX_RANK];
  memcpy(big, s, sizeof *big * (size_t)(n - 2));
  big[n - 2] = alloy_dim_const(r);
  big[n - 1] = s[n - 2];
  big[n] = s[n - 1];
  memcpy(out, s, sizeof *out * (size_t)n);
  out[n - 3] = alloy_dim_mul(d_symtab(d), s[n - 3], alloy_dim_const(r));
  alloy_value *e =
      D(d, "aten.expand.default", V(nn_unsqueeze(d, k, n - 2)), d_dim_list(d, big, n + 1));
  return nn_reshape(d, e, out, n);
}

/* The boolean mask as an additive one: 0 where attended, -inf elsewhere. */
static alloy_value *additive_mask(decomp *d, alloy_value *mask, alloy_dtype t) {
  alloy_value *zero = D(d, "aten.scalar_tensor.default", F(0), DT(t));
  alloy_value *ninf = D(d, "aten.scalar_tensor.default", F(-INFINITY), DT(t));
  return D(d, "aten.where.self", V(mask), V(zero), V(ninf));
}

/* softmax over the last dim, where a row that is -inf throughout gives 0
 * instead of NaN (PyTorch's _safe_softmax). A row is live when any of it
 * is not -inf: any() also takes an empty row (no keys), where amax would
 * refuse the empty dim. */
static alloy_value *safe_softmax(decomp *d, alloy_value *x) {
  if (!x) return NULL;
  alloy_value *sm = D(d, "aten._softmax.default", V(x), I(-1), B(false));
  alloy_value *live = D(d, "aten.ne.Scalar", V(x), F(-INFINITY));
  alloy_value *any = D(d, "aten.any.dim", V(live), I(-1), B(true));
  alloy_value *zero = D(d, "aten.scalar_tensor.default", F(0), DT(d_dtype(x)));
  return D(d, "aten.where.self", V(any), V(sm), V(zero));
}

/* softmax(q k^T * scale + mask) v, the scale split as sqrt(scale) on each
 * of q and k as PyTorch's math reference does. That reference keeps
 * float16 and bfloat16 q, k and v in float32 throughout and converts the
 * result once. The attention weights (after the softmax, in opmath) go to
 * *weights when it is not NULL, the scores before the softmax to *scores;
 * a dropout mask (the math reference's testing path) zeroes the weights
 * it leaves out and scales v by 1 / (1 - dropout_p). */
typedef struct sdpa_args {
  alloy_value *q, *k, *v, *mask, *dropout_mask;
  double dropout_p;
  bool causal, gqa, has_scale;
  double scale;
  bool bool_mask_adds; /* a bool attn_mask is added as 0/1 (the math op's add_) */
  bool flash;          /* the CPU flash kernel's roundings for float16/bfloat16 */
} sdpa_args;

static alloy_value *sdpa_of(decomp *d, const sdpa_args *a, alloy_value **weights,
                            alloy_value **scores) {
  alloy_value *q = a->q, *k = a->k, *v = a->v, *mask = a->mask;
  if (!q || !k || !v) return NULL;
  if (a->dropout_p != 0 && !a->dropout_mask) {
    d_decline(d, "dropout_p > 0 is random");
    return NULL;
  }
  alloy_dtype out = d_dtype(q), t = d_opmath(out);
  q = d_to(d, q, t);
  k = d_to(d, k, d_opmath(d_dtype(k)));
  v = d_to(d, v, d_opmath(d_dtype(v)));
  int rq = d_rank(q), rk = d_rank(k);
  if (rq < 2 || rk < 2) {
    d_decline(d, "query and key must be at least 2-D");
    return NULL;
  }
  if (a->causal && mask) return d_fail(d, "is_causal with an explicit attn_mask");
  const alloy_dim *sq = d_shape(q), *sk = d_shape(k);
  double scale;
  if (a->has_scale) {
    scale = a->scale;
  } else {
    if (!alloy_dim_is_const(sq[rq - 1])) {
      d_decline(d, "symbolic head size");
      return NULL;
    }
    scale = 1.0 / sqrt((double)sq[rq - 1].value);
  }
  double sf = sqrt(fabs(scale));
  if (a->gqa && rq >= 3 && rk >= 3) {
    alloy_dim hq = sq[rq - 3], hk = sk[rk - 3], hv = d_shape(v)[d_rank(v) - 3];
    if (!alloy_dim_is_const(hq) || !alloy_dim_is_const(hk) || !alloy_dim_is_const(hv)) {
      if (!alloy_dim_same(hq, hk) || !alloy_dim_same(hq, hv)) {
        d_decline(d, "symbolic head counts for grouped-query attention");
        return NULL;
      }
    } else {
      if (hk.value && hq.value != hk.value) k = repeat_heads(d, k, hq.value / hk.value);
      if (hv.value && hq.value != hv.value) v = repeat_heads(d, v, hq.value / hv.value);
    }
  }
  if (a->causal) {
    alloy_dim l = sq[rq - 2], s = sk[rk - 2];
    alloy_value *rows = D(d, "aten.arange.start_step", I(0), SYM(l), I(1), DT(ALLOY_I64));
    alloy_value *cols = D(d, "aten.arange.start_step", I(0), SYM(s), I(1), DT(ALLOY_I64));
    mask = D(d, "aten.ge.Tensor", V(nn_unsqueeze(d, rows, 1)), V(nn_unsqueeze(d, cols, 0)));
    mask = additive_mask(d, mask, t);
  }
  if (mask && d_dtype(mask) == ALLOY_BOOL)
    mask = a->bool_mask_adds ? d_to(d, mask, t) : additive_mask(d, mask, t);
  alloy_value *qs = D(d, "aten.mul.Tensor", V(q), F(scale < 0 ? -sf : sf));
  alloy_value *kt = D(d, "aten.mul.Tensor", V(nn_mT(d, k)), F(sf));
  alloy_value *attn = matmul_of(d, qs, kt);
  if (mask) attn = d_to(d, D(d, "aten.add.Tensor", V(attn), V(mask)), t);
  if (scores) *scores = attn;
  if (a->flash && t != out && alloy_dim_is_const(sk[rk - 2]) && sk[rk - 2].value <= 512) {
    /* One block of keys (the kernel splits them by 512): the unnormalized
     * probabilities exp(s - max) rounded to the dtype for the product with
     * v, their sum kept in float32, the product divided by it. */
    alloy_value *mx = D(d, "aten.amax.default", V(attn), LIST(I(-1)), B(true));
    alloy_value *e = D(d, "aten.exp.default", V(nn_sub(d, attn, mx)));
    alloy_value *sum = D(d, "aten.sum.dim_IntList", V(e), LIST(I(-1)), B(true));
    alloy_value *pv = matmul_of(d, d_to(d, d_to(d, e, out), t), v);
    return d_to(d, D(d, "aten.div.Tensor", V(pv), V(sum)), out);
  }
  alloy_value *w = safe_softmax(d, attn);
  if (a->dropout_mask) {
    w = D(d, "aten.masked_fill.Scalar", V(w),
          V(D(d, "aten.logical_not.default", V(a->dropout_mask))), F(0));
    v = nn_mulf(d, v, 1.0 / (1.0 - a->dropout_p));
  }
  if (weights) *weights = w;
  return d_to(d, matmul_of(d, w, v), out);
}

static void scaled_dot_product_attention(decomp *d) {
  sdpa_args a = {d_tensor(d, 0), d_tensor(d, 1), d_tensor(d, 2), d_tensor(d, 3), NULL,
                 d_float(d, 4), d_bool(d, 5), d_bool(d, 7), !d_is_none(d, 6), 0, false, false};
  if (a.has_scale) a.scale = d_float(d, 6);
  alloy_value *y = sdpa_of(d, &a, NULL, NULL);
  if (y) d_out(d, 0, y);
}

/* _scaled_dot_product_attention_math(q, k, v, attn_mask, dropout_p,
 * is_causal, dropout_mask, scale, enable_gqa) -> (output, attention
 * weights), both in the query's dtype. Called directly it adds a bool
 * attn_mask as numbers (scaled_dot_product_attention turns it into -inf
 * first). */
static void sdpa_math(decomp *d) {
  sdpa_args a = {d_tensor(d, 0), d_tensor(d, 1), d_tensor(d, 2), d_tensor(d, 3), d_tensor(d, 6),
                 d_float(d, 4), d_bool(d, 5), d_bool(d, 8), !d_is_none(d, 7), 0, true, false};
  if (a.has_scale) a.scale = d_float(d, 7);
  alloy_value *w = NULL, *y = sdpa_of(d, &a, &w, NULL);
  if (!y) return;
  d_out(d, 0, y);
  d_out(d, 1, d_to(d, w, d_dtype(a.q)));
}

/* _scaled_dot_product_flash_attention_for_cpu(q, k, v, dropout_p,
 * is_causal, attn_mask, scale) -> (output, logsumexp): [B, H, L, E]
 * operands; the log-sum-exp of each query's scores over the keys, in
 * opmath. */
static void sdpa_flash_cpu(decomp *d) {
  sdpa_args a = {d_tensor(d, 0), d_tensor(d, 1), d_tensor(d, 2), d_tensor(d, 5), NULL,
                 d_float(d, 3), d_bool(d, 4), false, !d_is_none(d, 6), 0, false, true};
  if (a.has_scale) a.scale = d_float(d, 6);
  alloy_value *scores = NULL, *y = sdpa_of(d, &a, NULL, &scores);
  if (!y) return;
  d_out(d, 0, y);
  d_out(d, 1, D(d, "aten.logsumexp.default", V(scores), LIST(I(-1)), B(false)));
}

/* _addmm_activation(self, mat1, mat2, beta, alpha, use_gelu): addmm, then
 * relu or gelu, as the CPU kernel applies them to its result (the exact
 * gelu there; CUDA's fused epilogue takes the tanh approximation). */
static void addmm_activation(decomp *d) {
  alloy_value *y = D(d, "aten.addmm.default", V(d_tensor(d, 0)), V(d_tensor(d, 1)),
                     V(d_tensor(d, 2)), *d_arg(d, 3), *d_arg(d, 4));
  d_out(d, 0, d_bool(d, 5) ? D(d, "aten.gelu.default", V(y))
                           : D(d, "aten.relu.default", V(y)));
}

/* bilinear(x1, x2, W, b) = x1 W x2 + b per output feature: the inputs
 * flattened to rows, _trilinear(x1, W, x2) as ATen's bilinear calls it,
 * viewed back, plus the bias. */
static void bilinear(decomp *d) {
  alloy_value *a = d_tensor(d, 0), *b = d_tensor(d, 1), *w = d_tensor(d, 2), *bias = d_tensor(d, 3);
  if (!a || !b || !w) return;
  int r = d_rank(a);
  alloy_dim fa[2] = {nn_prod(d, d_shape(a), r - 1), d_shape(a)[r - 1]};
  alloy_dim fb[2] = {nn_prod(d, d_shape(b), r - 1), d_shape(b)[r - 1]};
  alloy_value *y = D(d, "aten._trilinear.default", V(nn_reshape(d, a, fa, 2)), V(w),
                     V(nn_reshape(d, b, fb, 2)), LIST(I(1), I(3)), LIST(I(0)), LIST(I(1), I(2)),
                     LIST(I(2), I(3)));
  const alloy_value *want = alloy_node_output(d_node(d), 0);
  y = nn_reshape(d, y, d_shape(want), d_rank(want));
  d_out(d, 0, bias ? nn_add(d, y, bias) : y);
}

/* prelu(self, weight): _prelu_kernel with the weight along dim 1 */
static void prelu(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *w = d_tensor(d, 1);
  if (!x || !w) return;
  int r = d_rank(x);
  if (r != d_rank(w)) {
    alloy_dim shape[ALLOY_MAX_RANK];
    for (int i = 0; i < r; i++) shape[i] = alloy_dim_const(1);
    if (r > 1) shape[1] = nn_prod(d, d_shape(w), d_rank(w));
    w = nn_reshape(d, w, shape, r);
  }
  d_out(d, 0, D(d, "aten._prelu_kernel.default", V(x), V(w)));
}

/* embedding_renorm(self, indices, max_norm, norm_type): each row named by
 * an index whose norm passes max_norm scaled by max_norm / (norm + 1e-7),
 * the scale in float64 and rounded to the dtype, as the CPU kernel's
 * row *= scale. */
static void embedding_renorm(decomp *d) {
  alloy_value *w = d_tensor(d, 0), *ix = d_tensor(d, 1);
  double max_norm = d_float(d, 2), p = d_float(d, 3);
  if (!w || !ix) return;
  alloy_dtype t = d_dtype(w);
  alloy_value *norm = D(d, "aten.linalg_vector_norm.default", V(w), F(p), LIST(I(1)), B(true));
  alloy_value *norm64 = d_to(d, norm, ALLOY_F64);
  alloy_value *scale = D(d, "aten.reciprocal.default",
                         V(D(d, "aten.add.Tensor", V(norm64), F(1e-7))));
  scale = d_to(d, nn_mulf(d, scale, max_norm), t);
  alloy_dim rows = d_shape(w)[0], col = alloy_dim_const(1), shape[2] = {rows, col};
  alloy_value *named = D(d, "aten.full.default", d_dim_list(d, shape, 2), B(false), DT(ALLOY_BOOL));
  alloy_value *flat = nn_reshape(d, ix, (alloy_dim[1]){nn_prod(d, d_shape(ix), d_rank(ix))}, 1);
  alloy_value *yes = D(d, "aten.full.default", LIST(I(1)), B(true), DT(ALLOY_BOOL));
  named = D(d, "aten.index_put.default", V(named), d_value_list(d, &flat, 1), V(yes), B(false));
  alloy_value *big = D(d, "aten.gt.Scalar", V(norm), F(max_norm));
  alloy_value *hit = D(d, "aten.logical_and.default", V(named), V(big));
  d_out(d, 0, D(d, "aten.where.self", V(hit), V(nn_mul(d, w, scale)), V(w)));
}

/* _masked_softmax(self, mask, dim, mask_type): softmax over dim (the last
 * by default) with the masked elements at -inf; a row masked throughout
 * is NaN, as on PyTorch's CPU. A [B, L] padding mask (type 1) covers the
 * keys of [B, H, L, L], an [L, L] one (type 0) every batch and head. */
static void masked_softmax(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *mask = d_tensor(d, 1);
  if (!x || !mask) return;
  int r = d_rank(x);
  int64_t type = d_is_none(d, 3) ? 2 : d_int(d, 3);
  if (d_rank(mask) != 2 || r != 4) type = 2;
  if (type != 2) {
    alloy_dim v[4] = {alloy_dim_const(1), alloy_dim_const(1), alloy_dim_const(1),
                      alloy_dim_const(1)};
    if (type == 1) {
      v[0] = d_shape(mask)[0];
      v[3] = d_shape(mask)[1];
    } else {
      v[2] = d_shape(mask)[0];
      v[3] = d_shape(mask)[1];
    }
    mask = D(d, "aten.expand.default", V(nn_view(d, mask, v, 4)), d_dim_list(d, d_shape(x), r));
  }
  int dim = d_is_none(d, 2) ? r - 1 : d_wrap_dim(d, d_int(d, 2), r);
  if (d_failed(d)) return;
  /* As the CPU kernel's loop: z = exp(x - max), the difference and z
   * each rounded to the dtype; their sum and its reciprocal in the
   * accumulation type (float64 for float32, float32 below); z times it,
   * rounded once more. */
  alloy_dtype t = d_dtype(x), acc = t == ALLOY_F16 || t == ALLOY_BF16 ? ALLOY_F32 : ALLOY_F64;
  alloy_value *ninf = D(d, "aten.scalar_tensor.default", F(-INFINITY), DT(t));
  alloy_value *y = D(d, "aten.where.self", V(mask), V(ninf), V(x));
  alloy_value *mx = D(d, "aten.amax.default", V(y), LIST(I(dim)), B(true));
  alloy_value *z = d_to(d, D(d, "aten.exp.default", V(nn_sub(d, y, mx))), acc);
  alloy_value *inv = D(d, "aten.reciprocal.default",
                       V(D(d, "aten.sum.dim_IntList", V(z), LIST(I(dim)), B(true))));
  d_out(d, 0, d_to(d, nn_mul(d, z, inv), t));
}

/* batch_norm_update_stats(input, running_mean, running_var, momentum) ->
 * (mean, biased variance) over every dim but the channels', in opmath,
 * in the running statistics' dtype. */
static void batch_norm_update_stats(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  if (!x) return;
  const alloy_value *want = alloy_node_output(d_node(d), 0);
  alloy_dtype t = d_dtype(want);
  int r = d_rank(x);
  int64_t dims[ALLOY_MAX_RANK];
  dims[0] = 0;
  for (int i = 2; i < r; i++) dims[i - 1] = i;
  alloy_value *xc = d_to(d, x, d_opmath(d_dtype(x)));
  alloy_value *o[2] = {0};
  if (DN(d, "aten.var_mean.correction", o, 2, V(xc), d_int_list(d, dims, r - 1), I(0),
         B(false)) < 2)
    return;
  d_out(d, 0, d_to(d, o[1], t));
  d_out(d, 1, d_to(d, o[0], t));
}

/* q = (qkv_q + b_q) / sqrt(d), k = qkv_k + b_k, v = qkv_v + b_v, each
 * [B, heads, T, d] from qkv [B, T, 3 D]: _transform_bias_rescale_qkv's
 * kernel, the sum and the scaling each rounded to the dtype, the scale
 * 1 / sqrt(d) itself in the dtype. */
static void qkv_heads(decomp *d, alloy_value *qkv, alloy_value *bias, int64_t heads,
                      alloy_value **out) {
  if (!qkv || !bias) return;
  const alloy_dim *s = d_shape(qkv);
  alloy_dtype t = d_dtype(qkv);
  alloy_dim three = alloy_dim_const(3), h = alloy_dim_const(heads);
  alloy_dim D = alloy_dim_floordiv(d_symtab(d), s[2], three);
  alloy_dim dph = alloy_dim_floordiv(d_symtab(d), D, h);
  if (!alloy_dim_is_const(dph)) {
    d_decline(d, "a symbolic head size");
    return;
  }
  alloy_dim five[5] = {s[0], s[1], three, h, dph};
  alloy_value *x = nn_view(d, nn_add(d, qkv, bias), five, 5);
  x = D(d, "aten.permute.default", V(x), LIST(I(2), I(0), I(3), I(1), I(4)));
  double inv = 1.0 / sqrt((double)dph.value);
  if (t != ALLOY_F64) inv = (double)(float)(1.0 / sqrtf((float)dph.value));
  for (int k = 0; k < 3; k++) {
    alloy_value *y = D(d, "aten.clone.default", V(D(d, "aten.select.int", V(x), I(0), I(k))));
    out[k] = k == 0 ? D(d, "aten.mul.Tensor", V(y), V(D(d, "aten.scalar_tensor.default", F(inv),
                                                      DT(t))))
                    : y;
  }
}

static void transform_bias_rescale_qkv(decomp *d) {
  alloy_value *o[3] = {0};
  int64_t heads = d_int(d, 2);
  if (d_failed(d)) return;
  qkv_heads(d, d_tensor(d, 0), d_tensor(d, 1), heads, o);
  if (!o[0]) return;
  for (int k = 0; k < 3; k++) d_out(d, k, o[k]);
}

/* _native_multi_head_attention(query, key, value, embed_dim, num_head,
 * qkv_weight, qkv_bias, proj_weight, proj_bias, mask, need_weights,
 * average_attn_weights, mask_type), the CPU kernel's path when it returns
 * the weights: the q, k, v projections (one product when query, key and
 * value are one tensor, two when key is value), the heads split and q
 * scaled as _transform_bias_rescale_qkv, q k^T by bmm, a (masked)
 * softmax, times v by bmm, the heads joined and projected; the weights
 * averaged over the heads when asked. Without weights PyTorch returns an
 * undefined tensor, which a graph cannot hold: the rule declines. */
static void native_multi_head_attention(decomp *d) {
  alloy_value *q = d_tensor(d, 0), *k = d_tensor(d, 1), *v = d_tensor(d, 2);
  int64_t D = d_int(d, 3), heads = d_int(d, 4);
  alloy_value *w = d_tensor(d, 5), *b = d_tensor(d, 6), *pw = d_tensor(d, 7), *pb = d_tensor(d, 8);
  alloy_value *mask = d_tensor(d, 9);
  bool need = d_bool(d, 10), average = d_bool(d, 11);
  if (d_failed(d) || !q || !k || !v) return;
  if (!need) return d_decline(d, "need_weights=False returns an undefined tensor");
  alloy_value *qkv;
  if (q == k && k == v) {
    qkv = nn_matmul(d, q, nn_mT(d, w));
  } else {
    alloy_value *parts[3];
    int np = 0;
    alloy_value *wq = D(d, "aten.slice.Tensor", V(w), I(0), I(0), I(D));
    parts[np++] = nn_matmul(d, q, nn_mT(d, wq));
    if (k == v) {
      alloy_value *wkv = D(d, "aten.slice.Tensor", V(w), I(0), I(D), I(3 * D));
      parts[np++] = nn_matmul(d, k, nn_mT(d, wkv));
    } else {
      for (int i = 1; i < 3; i++) {
        alloy_value *wi = D(d, "aten.slice.Tensor", V(w), I(0), I(i * D), I((i + 1) * D));
        parts[np++] = nn_matmul(d, i == 1 ? k : v, nn_mT(d, wi));
      }
    }
    qkv = D(d, "aten.cat.default", d_value_list(d, parts, np), I(2));
  }
  alloy_value *o[3] = {0};
  qkv_heads(d, qkv, b, heads, o);
  if (!o[0]) return;
  const alloy_dim *s = d_shape(o[0]); /* [B, heads, T, d] */
  alloy_dim bh = alloy_dim_mul(d_symtab(d), s[0], s[1]);
  alloy_dim q3[3] = {bh, s[2], s[3]}, scores[4] = {s[0], s[1], s[2], s[2]}, s3[3] = {bh, s[2], s[2]};
  alloy_value *qkt = D(d, "aten.bmm.default", V(nn_view(d, o[0], q3, 3)),
                       V(D(d, "aten.transpose.int", V(nn_view(d, o[1], q3, 3)), I(2), I(1))));
  qkt = nn_view(d, qkt, scores, 4);
  if (mask) {
    if (d_dtype(mask) != ALLOY_BOOL) mask = d_to(d, mask, ALLOY_BOOL);
    qkt = D(d, "aten._masked_softmax.default", V(qkt), V(mask), I(3), *d_arg(d, 12));
  } else {
    qkt = D(d, "aten._softmax.default", V(qkt), I(3), B(false));
  }
  alloy_value *ctx = D(d, "aten.bmm.default", V(nn_view(d, qkt, s3, 3)), V(nn_view(d, o[2], q3, 3)));
  ctx = nn_view(d, ctx, s, 4);
  ctx = D(d, "aten.clone.default", V(D(d, "aten.permute.default", V(ctx), LIST(I(0), I(2), I(1), I(3)))));
  alloy_dim rows[2] = {alloy_dim_mul(d_symtab(d), s[0], s[2]), alloy_dim_const(D)};
  alloy_dim out3[3] = {s[0], s[2], alloy_dim_const(D)};
  alloy_value *proj = D(d, "aten.linear.default", V(nn_view(d, ctx, rows, 2)), V(pw), V(pb));
  d_out(d, 0, nn_view(d, proj, out3, 3));
  if (average)
    qkt = D(d, "aten.div.Tensor", V(D(d, "aten.sum.dim_IntList", V(qkt), LIST(I(1)))), I(heads));
  d_out(d, 1, qkt);
}

/* --- normalization ----------------------------------------------------------------------*/

static void layer_norm(decomp *d) {
  alloy_dim shape[ALLOY_MAX_RANK];
  int n = d_dims(d, 1, shape, ALLOY_MAX_RANK);
  alloy_value *w = d_tensor(d, 2), *b = d_tensor(d, 3);
  d_out(d, 0,
        D(d, "aten.native_layer_norm.default", V(d_tensor(d, 0)), d_dim_list(d, shape, n),
          w ? V(w) : NONE, b ? V(b) : NONE, F(d_float(d, 4))));
}

/* Batch norm by its mode, as PyTorch dispatches it: training with running
 * statistics updates them in place (_native_batch_norm_legit), evaluation
 * reads them, no statistics at all normalizes by the batch's own. */
static int batch_norm_of(decomp *d, alloy_value *x, alloy_value *w, alloy_value *b, alloy_value *rm,
                         alloy_value *rv, bool training, double momentum, double eps,
                         alloy_value **outs) {
  alloy_arg aw = w ? V(w) : NONE, ab = b ? V(b) : NONE;
  if (!rm && !rv)
    return DN(d, "aten._native_batch_norm_legit.no_stats", outs, 3, V(x), aw, ab, B(training),
              F(momentum), F(eps));
  if (!rm || !rv) {
    d_fail(d, "running_mean and running_var must both be given or both be None");
    return 0;
  }
  if (training)
    return DN(d, "aten._native_batch_norm_legit.default", outs, 3, V(x), aw, ab, V(rm), V(rv),
              B(true), F(momentum), F(eps));
  return DN(d, "aten._native_batch_norm_legit_no_training.default", outs, 3, V(x), aw, ab, V(rm),
            V(rv), F(momentum), F(eps));
}

static void native_batch_norm(decomp *d) {
  alloy_value *o[3] = {0};
  if (batch_norm_of(d, d_tensor(d, 0), d_tensor(d, 1), d_tensor(d, 2), d_tensor(d, 3),
                    d_tensor(d, 4), d_bool(d, 5), d_float(d, 6), d_float(d, 7), o) < 3)
    return;
  for (int k = 0; k < 3; k++) d_out(d, k, o[k]);
}

/* batch_norm(input, weight, bias, running_mean, running_var, training,
 * momentum, eps, cudnn_enabled) */
static void batch_norm(decomp *d) {
  alloy_value *o[3] = {0};
  if (batch_norm_of(d, d_tensor(d, 0), d_tensor(d, 1), d_tensor(d, 2), d_tensor(d, 3),
                    d_tensor(d, 4), d_bool(d, 5), d_float(d, 6), d_float(d, 7), o) < 3)
    return;
  d_out(d, 0, o[0]);
}

/* _batch_norm_with_update: training batch norm plus an empty reserve
 * (cuDNN's workspace, none on other backends). */
static void batch_norm_with_update(decomp *d) {
  alloy_value *o[3] = {0};
  if (batch_norm_of(d, d_tensor(d, 0), d_tensor(d, 1), d_tensor(d, 2), d_tensor(d, 3),
                    d_tensor(d, 4), true, d_float(d, 5), d_float(d, 6), o) < 3)
    return;
  for (int k = 0; k < 3; k++) d_out(d, k, o[k]);
  d_out(d, 3, D(d, "aten.full.default", LIST(I(0)), I(0), DT(ALLOY_U8)));
}

/* _batch_norm_no_update: evaluation batch norm plus the empty reserve. */
static void batch_norm_no_update(decomp *d) {
  alloy_value *o[3] = {0};
  if (batch_norm_of(d, d_tensor(d, 0), d_tensor(d, 1), d_tensor(d, 2), d_tensor(d, 3),
                    d_tensor(d, 4), false, d_float(d, 5), d_float(d, 6), o) < 3)
    return;
  for (int k = 0; k < 3; k++) d_out(d, k, o[k]);
  d_out(d, 3, D(d, "aten.full.default", LIST(I(0)), I(0), DT(ALLOY_U8)));
}

/* cudnn_batch_norm(input, weight, bias, running_mean, running_var,
 * training, exponential_average_factor, epsilon), as PyTorch decomposes it:
 * native_batch_norm, whose saved statistics it returns in training and
 * empty ones of weight's dtype in evaluation, and an empty reserve (cuDNN's
 * workspace, which no other backend has). */
static void cudnn_batch_norm(decomp *d) {
  alloy_value *w = d_tensor(d, 1), *o[3] = {0};
  bool training = d_bool(d, 5);
  if (batch_norm_of(d, d_tensor(d, 0), w, d_tensor(d, 2), d_tensor(d, 3), d_tensor(d, 4), training,
                    d_float(d, 6), d_float(d, 7), o) < 3)
    return;
  d_out(d, 0, o[0]);
  for (int k = 1; k < 3; k++)
    d_out(d, k, training ? o[k] : D(d, "aten.full.default", LIST(I(0)), I(0), DT(d_dtype(w))));
  d_out(d, 3, D(d, "aten.full.default", LIST(I(0)), I(0), DT(ALLOY_U8)));
}

/* The running statistics after a training step, as the CPU kernel updates
 * them: momentum * batch mean + (1 - momentum) * running mean, and the
 * same of the unbiased batch variance (n / (n - 1) times the biased one),
 * in opmath of the running statistics' dtype. */
static void updated_running_stats(decomp *d, alloy_value *x, alloy_value *mean, alloy_value *rm,
                                  alloy_value *rv, double momentum, alloy_value **new_rm,
                                  alloy_value **new_rv) {
  if (!x || !mean) return;
  int r = d_rank(x);
  int64_t dims[ALLOY_MAX_RANK];
  dims[0] = 0;
  for (int i = 2; i < r; i++) dims[i - 1] = i;
  alloy_dtype tm = d_dtype(rm), tv = d_dtype(rv), cm = d_opmath(tm), cv = d_opmath(tv);
  alloy_value *var = D(d, "aten.var.correction", V(d_to(d, x, d_opmath(d_dtype(x)))),
                       d_int_list(d, dims, r - 1), I(1), B(false));
  *new_rm = d_to(d, nn_add(d, nn_mulf(d, d_to(d, mean, cm), momentum),
                           nn_mulf(d, d_to(d, rm, cm), 1 - momentum)), tm);
  *new_rv = d_to(d, nn_add(d, nn_mulf(d, d_to(d, var, cv), momentum),
                           nn_mulf(d, d_to(d, rv, cv), 1 - momentum)), tv);
}

/* _batch_norm_with_update_functional: training batch norm, the empty
 * reserve, and the updated running statistics as outputs. */
static void batch_norm_with_update_functional(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *rm = d_tensor(d, 3), *rv = d_tensor(d, 4), *o[3] = {0};
  double momentum = d_float(d, 5);
  if (!rm || !rv) return d_decline(d, "no running statistics to update");
  if (batch_norm_of(d, x, d_tensor(d, 1), d_tensor(d, 2), rm, rv, true, momentum, d_float(d, 6),
                    o) < 3)
    return;
  alloy_value *new_rm = NULL, *new_rv = NULL;
  updated_running_stats(d, x, o[1], rm, rv, momentum, &new_rm, &new_rv);
  for (int k = 0; k < 3; k++) d_out(d, k, o[k]);
  d_out(d, 3, D(d, "aten.full.default", LIST(I(0)), I(0), DT(ALLOY_U8)));
  d_out(d, 4, new_rm);
  d_out(d, 5, new_rv);
}

/* _native_batch_norm_legit_functional: batch norm in either mode, with the
 * running statistics as outputs (updated in training, as they were in
 * evaluation). */
static void native_batch_norm_legit_functional(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *rm = d_tensor(d, 3), *rv = d_tensor(d, 4), *o[3] = {0};
  bool training = d_bool(d, 5);
  double momentum = d_float(d, 6);
  if (!rm || !rv) return d_decline(d, "no running statistics");
  if (batch_norm_of(d, x, d_tensor(d, 1), d_tensor(d, 2), rm, rv, training, momentum,
                    d_float(d, 7), o) < 3)
    return;
  alloy_value *new_rm = NULL, *new_rv = NULL;
  if (training) {
    updated_running_stats(d, x, o[1], rm, rv, momentum, &new_rm, &new_rv);
  } else {
    new_rm = D(d, "aten.clone.default", V(rm));
    new_rv = D(d, "aten.clone.default", V(rv));
  }
  for (int k = 0; k < 3; k++) d_out(d, k, o[k]);
  d_out(d, 3, new_rm);
  d_out(d, 4, new_rv);
}

/* group_norm(x, G, w, b, eps) = native_group_norm over N, C, H*W... */
static void group_norm(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *w = d_tensor(d, 2), *b = d_tensor(d, 3);
  int r = d_rank(x);
  if (r < 2) return d_decline(d, "group_norm needs a batch and a channel dim");
  const alloy_dim *s = d_shape(x);
  d_out(d, 0,
        D(d, "aten.native_group_norm.default", V(x), w ? V(w) : NONE, b ? V(b) : NONE, SYM(s[0]),
          SYM(s[1]), SYM(nn_prod(d, s + 2, r - 2)), I(d_int(d, 1)), F(d_float(d, 4))));
}

/* Shapes [C] to broadcast against [N, C, *] of rank r. */
static alloy_value *per_channel(decomp *d, alloy_value *c, int r) {
  if (!c) return NULL;
  alloy_dim shape[ALLOY_MAX_RANK];
  for (int i = 0; i < r - 1; i++) shape[i] = alloy_dim_const(1);
  shape[0] = d_shape(c)[0];
  return nn_view(d, c, shape, r - 1);
}

/* instance_norm in opmath: every (sample, channel) normalized by its own
 * mean and biased variance over the spatial dims (use_input_stats), or by
 * the running statistics. */
static void instance_norm_opmath(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *w = d_tensor(d, 1), *b = d_tensor(d, 2);
  alloy_value *rm = d_tensor(d, 3), *rv = d_tensor(d, 4);
  bool use_input_stats = d_bool(d, 5);
  double eps = d_float(d, 7);
  int r = d_rank(x);
  if (r < 3) return d_decline(d, "instance_norm needs [N, C, *]");
  alloy_dtype t = d_dtype(x), c = d_opmath(t);
  alloy_value *xc = d_to(d, x, c), *mean, *rstd;
  if (use_input_stats) {
    if (rm || rv) return d_decline(d, "updating running statistics in place");
    int64_t dims[ALLOY_MAX_RANK];
    for (int i = 2; i < r; i++) dims[i - 2] = i;
    alloy_value *var =
        D(d, "aten.var.correction", V(xc), d_int_list(d, dims, r - 2), I(0), B(true));
    mean = D(d, "aten.mean.dim", V(xc), d_int_list(d, dims, r - 2), B(true));
    rstd = D(d, "aten.rsqrt.default", V(D(d, "aten.add.Tensor", V(var), F(eps))));
  } else {
    if (!rm || !rv) {
      d_fail(d, "instance_norm without input stats needs running stats");
      return;
    }
    mean = per_channel(d, d_to(d, rm, c), r);
    rstd = per_channel(
        d, D(d, "aten.rsqrt.default", V(D(d, "aten.add.Tensor", V(d_to(d, rv, c)), F(eps)))), r);
  }
  alloy_value *y = D(d, "aten.mul.Tensor", V(D(d, "aten.sub.Tensor", V(xc), V(mean))), V(rstd));
  if (w) y = D(d, "aten.mul.Tensor", V(y), V(per_channel(d, w, r)));
  if (b) y = D(d, "aten.add.Tensor", V(y), V(per_channel(d, b, r)));
  d_out(d, 0, d_to(d, y, t));
}

/* instance_norm as PyTorch computes it (float16 and bfloat16): the input
 * viewed as one sample of N * C channels, the weight, bias and running statistics repeated N
 * times, through native_batch_norm (whose kernel fixes where the
 * statistics are rounded to the dtype), viewed back. Updating the running
 * statistics from the batch is not done here: the rule declines that. */
static void instance_norm(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *w = d_tensor(d, 1), *b = d_tensor(d, 2);
  alloy_value *rm = d_tensor(d, 3), *rv = d_tensor(d, 4);
  bool use_input_stats = d_bool(d, 5);
  double momentum = d_float(d, 6), eps = d_float(d, 7);
  int r = d_rank(x);
  if (r < 3) return d_decline(d, "instance_norm needs [N, C, *]");
  /* float16 and bfloat16 need the batch norm's roundings; float32 and
   * float64 (and integers) keep the opmath form, which the prims
   * decompositions of the batch norms agree with on overflowing inputs */
  if (d_dtype(x) != ALLOY_F16 && d_dtype(x) != ALLOY_BF16) return instance_norm_opmath(d);
  if (use_input_stats && (rm || rv)) return d_decline(d, "updating running statistics in place");
  if (!use_input_stats && (!rm || !rv)) {
    d_fail(d, "instance_norm without input stats needs running stats");
    return;
  }
  const alloy_dim *s = d_shape(x);
  alloy_dim flat[ALLOY_MAX_RANK], n = s[0];
  memcpy(flat, s, sizeof *flat * (size_t)r);
  flat[0] = alloy_dim_const(1);
  flat[1] = alloy_dim_mul(d_symtab(d), s[0], s[1]);
  alloy_value *per[4] = {w, b, use_input_stats ? NULL : rm, use_input_stats ? NULL : rv};
  for (int i = 0; i < 4; i++)
    if (per[i]) per[i] = D(d, "aten.repeat.default", V(per[i]), d_dim_list(d, &n, 1));
  alloy_value *y = D(d, "aten.native_batch_norm.default", V(nn_reshape(d, x, flat, r)),
                     per[0] ? V(per[0]) : NONE, per[1] ? V(per[1]) : NONE,
                     per[2] ? V(per[2]) : NONE, per[3] ? V(per[3]) : NONE, B(use_input_stats),
                     F(momentum), F(eps));
  d_out(d, 0, y ? nn_reshape(d, y, s, r) : NULL);
}

/* rms_norm(x) = x * rsqrt(mean(x^2 over the normalized dims) + eps) * w,
 * in opmath; eps defaults to the opmath type's machine epsilon. */
static void rms_norm(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *w = d_tensor(d, 2);
  alloy_dim ns[ALLOY_MAX_RANK];
  int n = d_dims(d, 1, ns, ALLOY_MAX_RANK), r = d_rank(x);
  alloy_dtype t = d_dtype(x), c = d_opmath(t);
  double eps = d_is_none(d, 3) ? (c == ALLOY_F64 ? 2.220446049250313e-16 : 1.1920928955078125e-07)
                               : d_float(d, 3);
  int64_t dims[ALLOY_MAX_RANK];
  for (int i = 0; i < n; i++) dims[i] = r - 1 - i;
  alloy_value *xc = d_to(d, x, c);
  alloy_value *ms = D(d, "aten.mean.dim", V(D(d, "aten.mul.Tensor", V(xc), V(xc))),
                      d_int_list(d, dims, n), B(true));
  alloy_value *rstd = D(d, "aten.rsqrt.default", V(D(d, "aten.add.Tensor", V(ms), F(eps))));
  alloy_value *y = D(d, "aten.mul.Tensor", V(xc), V(rstd));
  if (w) y = D(d, "aten.mul.Tensor", V(y), V(w));
  d_out(d, 0, d_to(d, y, t));
  /* _fused_rms_norm also gives rstd, in opmath */
  if (alloy_node_num_outputs(d_node(d)) > 1) d_out(d, 1, rstd);
}

/* norm_except_dim(v, pow, dim): the pow-norm over every dim but dim (all
 * of them for dim -1). */
static alloy_value *norm_except_dim_of(decomp *d, alloy_value *v, double p, int64_t dim) {
  if (!v) return NULL;
  int r = d_rank(v), k = 0;
  int64_t dims[ALLOY_MAX_RANK];
  if (dim == -1)
    return D(d, "aten.linalg_vector_norm.default", V(v), F(p));
  int keep = d_wrap_dim(d, dim, r);
  for (int i = 0; i < r; i++)
    if (i != keep) dims[k++] = i;
  return D(d, "aten.linalg_vector_norm.default", V(v), F(p), d_int_list(d, dims, k), B(true));
}

static void norm_except_dim(decomp *d) {
  d_out(d, 0, norm_except_dim_of(d, d_tensor(d, 0), d_float(d, 1), d_int(d, 2)));
}

/* The weight norm w = v * (g / |v|), the norm over every dim but dim. As
 * PyTorch's fused CPU kernel (_weight_norm_interface; _weight_norm's pick
 * for dim 0 or the last without float16) it is computed in opmath, the
 * norms (of g's shape) kept in it; elsewhere _weight_norm is its three
 * ops, each rounded to its dtype. */
static void weight_norm(decomp *d) {
  alloy_value *v = d_tensor(d, 0), *g = d_tensor(d, 1);
  int64_t dim = d_int(d, 2);
  if (d_failed(d)) return;
  bool interface = alloy_node_num_outputs(d_node(d)) > 1;
  bool half = d_dtype(v) == ALLOY_F16 || d_dtype(g) == ALLOY_F16;
  if (!interface && (half || (dim != 0 && dim != d_rank(v) - 1))) {
    alloy_value *q = D(d, "aten.div.Tensor", V(g), V(norm_except_dim_of(d, v, 2, dim)));
    d_out(d, 0, D(d, "aten.mul.Tensor", V(v), V(q)));
    return;
  }
  alloy_dtype t = d_dtype(v), c = d_opmath(t);
  alloy_value *norm = norm_except_dim_of(d, d_to(d, v, c), 2, dim);
  if (!norm) return;
  alloy_value *gc = nn_reshape(d, d_to(d, g, c), d_shape(norm), d_rank(norm));
  alloy_value *w = D(d, "aten.mul.Tensor", V(d_to(d, v, c)),
                     V(D(d, "aten.div.Tensor", V(gc), V(norm))));
  d_out(d, 0, d_to(d, w, t));
  if (interface) d_out(d, 1, nn_reshape(d, norm, d_shape(g), d_rank(g)));
}

/* --- convolution, dropout --------------------------------------------------------*/

/* conv2d on [N, C, H, W], or on an unbatched [C, H, W] given a batch of one. */
static void conv2d(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *b = d_tensor(d, 2);
  bool unbatched = d_rank(x) == 3;
  if (unbatched) x = nn_unsqueeze(d, x, 0);
  alloy_dim st[2], pad[2], dil[2];
  int ns = d_dims(d, 3, st, 2), np = d_dims(d, 4, pad, 2), nd = d_dims(d, 5, dil, 2);
  if (ns == 1) st[1] = st[0];
  if (np == 1) pad[1] = pad[0];
  if (nd == 1) dil[1] = dil[0];
  alloy_value *y = D(d, "aten.convolution.default", V(x), V(d_tensor(d, 1)), b ? V(b) : NONE,
                     d_dim_list(d, st, 2), d_dim_list(d, pad, 2), d_dim_list(d, dil, 2), B(false),
                     LIST(I(0), I(0)), SYM(d_dim(d, 6)));
  d_out(d, 0, unbatched ? nn_squeeze(d, y, 0) : y);
}

/* Evaluation dropout, or dropout with p == 0, passes its input through. */
static void dropout(decomp *d) {
  if (d_bool(d, 2) && d_float(d, 1) != 0) return d_decline(d, "training dropout is random");
  d_out(d, 0, D(d, "aten.clone.default", V(d_tensor(d, 0))));
}

/* --- vectors, bags ------------------------------------------------------------------*/

/* linalg_cross(a, b, dim): the cross product of 3-vectors along dim,
 * a1 b2 - a2 b1 from the vectors rotated by one and by two. */
static void linalg_cross(decomp *d) {
  alloy_value *a = d_tensor(d, 0), *b = d_tensor(d, 1);
  const alloy_value *want = alloy_node_output(d_node(d), 0);
  int r = d_rank(want), dim = d_wrap_dim(d, d_int(d, 2), r);
  if (d_failed(d)) return;
  a = D(d, "aten.expand.default", V(a), d_dim_list(d, d_shape(want), r));
  b = D(d, "aten.expand.default", V(b), d_dim_list(d, d_shape(want), r));
  alloy_value *i1 = D(d, "aten.arange.start_step", I(0), I(3), I(1), DT(ALLOY_I64));
  i1 = D(d, "aten.remainder.Scalar", V(D(d, "aten.add.Tensor", V(i1), I(1))), I(3));
  alloy_value *i2 = D(d, "aten.remainder.Scalar", V(D(d, "aten.add.Tensor", V(i1), I(1))), I(3));
  alloy_value *a1 = D(d, "aten.index_select.default", V(a), I(dim), V(i1));
  alloy_value *a2 = D(d, "aten.index_select.default", V(a), I(dim), V(i2));
  alloy_value *b1 = D(d, "aten.index_select.default", V(b), I(dim), V(i1));
  alloy_value *b2 = D(d, "aten.index_select.default", V(b), I(dim), V(i2));
  d_out(d, 0, nn_sub(d, nn_mul(d, a1, b2), nn_mul(d, a2, b1)));
}

/* embedding_bag is _embedding_bag without a padding index, and
 * _embedding_bag_forward_only the same kernel without the backward's
 * bookkeeping (the same outputs on the CPU). */
static void embedding_bag(decomp *d) {
  alloy_value *o[4] = {0}, *psw = d_tensor(d, 6), *w = d_tensor(d, 0);
  bool has_padding_idx = alloy_schema_num_args(alloy_op_schema(alloy_node_op(d_node(d)))) > 8;
  /* embedding_bag.padding_idx: None is none (-1 to the kernel); a negative
   * index counts from the end of the weight's rows, as embedding_bag wraps
   * it. _embedding_bag_forward_only's is the kernel's own (-1: none). */
  bool wraps = !strcmp(alloy_op_name(alloy_node_op(d_node(d))), "aten.embedding_bag.padding_idx");
  int64_t padding_idx = -1;
  if (has_padding_idx && !wraps) {
    padding_idx = d_int(d, 8);
  } else if (has_padding_idx && !d_is_none(d, 8)) {
    padding_idx = d_int(d, 8);
    alloy_dim rows = w ? d_shape(w)[0] : alloy_dim_const(0);
    if (padding_idx < 0 && !alloy_dim_is_const(rows))
      return d_decline(d, "a negative padding_idx of a symbolic number of embeddings");
    if (padding_idx < 0) padding_idx += rows.value;
  }
  if (DN(d, "aten._embedding_bag.default", o, 4, V(w), V(d_tensor(d, 1)), V(d_tensor(d, 2)),
         B(d_bool(d, 3)), I(d_int(d, 4)), B(d_bool(d, 5)), psw ? V(psw) : NONE, B(d_bool(d, 7)),
         I(padding_idx)) < 4)
    return;
  for (int k = 0; k < 4; k++) d_out(d, k, o[k]);
}

const decomp_rule decomp_rules_nn[] = {
    {"aten.linear.default", linear, DECOMP_TO_CORE},
    {"aten.matmul.default", matmul, DECOMP_TO_CORE},
    {"aten.dot.default", dot, DECOMP_TO_CORE},
    {"aten.vdot.default", vdot, DECOMP_TO_CORE},
    {"aten.mv.default", mv, DECOMP_TO_CORE},
    {"aten.addmv.default", addmv, DECOMP_TO_CORE},
    {"aten.addr.default", addr, DECOMP_TO_CORE},
    {"aten.baddbmm.default", baddbmm, DECOMP_TO_CORE},
    {"aten.addmm.dtype", matmul_out_dtype, DECOMP_TO_CORE},
    {"aten.baddbmm.dtype", matmul_out_dtype, DECOMP_TO_CORE},
    {"aten.addbmm.default", addbmm, DECOMP_TO_CORE},
    {"aten._trilinear.default", trilinear, DECOMP_TO_CORE},
    {"aten._addmm_activation.default", addmm_activation, DECOMP_TO_CORE},
    {"aten.bilinear.default", bilinear, DECOMP_TO_CORE},
    {"aten.prelu.default", prelu, DECOMP_TO_CORE},
    {"aten.embedding_renorm.default", embedding_renorm, DECOMP_TO_CORE},
    {"aten.scaled_dot_product_attention.default", scaled_dot_product_attention, DECOMP_TO_CORE},
    {"aten._scaled_dot_product_attention_math.default", sdpa_math, DECOMP_TO_CORE},
    {"aten._scaled_dot_product_flash_attention_for_cpu.default", sdpa_flash_cpu, DECOMP_TO_CORE},
    {"aten._transform_bias_rescale_qkv.default", transform_bias_rescale_qkv, DECOMP_TO_CORE},
    {"aten._native_multi_head_attention.default", native_multi_head_attention, DECOMP_TO_CORE},
    {"aten.layer_norm.default", layer_norm, DECOMP_TO_CORE},
    {"aten.native_batch_norm.default", native_batch_norm, DECOMP_TO_CORE},
    {"aten.batch_norm.default", batch_norm, DECOMP_TO_CORE},
    {"aten._batch_norm_with_update.default", batch_norm_with_update, DECOMP_TO_CORE},
    {"aten._batch_norm_no_update.default", batch_norm_no_update, DECOMP_TO_CORE},
    {"aten.cudnn_batch_norm.default", cudnn_batch_norm, DECOMP_TO_CORE},
    {"aten.batch_norm_update_stats.default", batch_norm_update_stats, DECOMP_TO_CORE},
    {"aten._masked_softmax.default", masked_softmax, DECOMP_TO_CORE},
    {"aten._batch_norm_with_update_functional.default", batch_norm_with_update_functional,
     DECOMP_TO_CORE},
    {"aten._native_batch_norm_legit_functional.default", native_batch_norm_legit_functional,
     DECOMP_TO_CORE},
    {"aten.group_norm.default", group_norm, DECOMP_TO_CORE},
    {"aten.instance_norm.default", instance_norm, DECOMP_TO_CORE},
    {"aten.rms_norm.default", rms_norm, DECOMP_TO_CORE},
    {"aten._fused_rms_norm.default", rms_norm, DECOMP_TO_CORE},
    {"aten.norm_except_dim.default", norm_except_dim, DECOMP_TO_CORE},
    {"aten._weight_norm.default", weight_norm, DECOMP_TO_CORE},
    {"aten._weight_norm_interface.default", weight_norm, DECOMP_TO_CORE},
    {"aten.conv2d.default", conv2d, DECOMP_TO_CORE},
    {"aten.dropout.default", dropout, DECOMP_TO_CORE},
    {"aten.linalg_cross.default", linalg_cross, DECOMP_TO_CORE},
    {"aten.embedding_bag.default", embedding_bag, DECOMP_TO_CORE},
    {"aten.embedding_bag.padding_idx", embedding_bag, DECOMP_TO_CORE},
    {"aten._embedding_bag_forward_only.default", embedding_bag, DECOMP_TO_CORE},
    {NULL, NULL, 0},
};
