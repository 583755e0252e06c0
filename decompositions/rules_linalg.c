/*
 * decompositions/rules_linalg.c: linear algebra composites, from ATen to
 * the ops ATen builds them from (torch/linalg's CompositeImplicit kernels
 * in aten/src/ATen/native/BatchLinearAlgebra.cpp and LinearAlgebra.cpp).
 *
 * Forms (ir/linalg_forms.h): an op that is another with some results and
 * arguments fixed (linalg_det is _linalg_det's first result, linalg_inv is
 * linalg_inv_ex with check_errors, svdvals is _linalg_svd's S) is built as
 * that op; the same table gives the shape functions.
 *
 * The factorizations themselves (_linalg_det, _linalg_svd, _linalg_eigh,
 * linalg_inv_ex, linalg_lu_factor_ex, ...) have no decomposition into Core
 * ATen: the reference backend runs them (reference_backend/kernels_linalg.c,
 * kernels_spectral.c), in double.
 */
#include <math.h>
#include <string.h>

#include "decompositions/rules.h"
#include "ir/linalg_forms.h"

/* --- helpers -------------------------------------------------------------------------*/

static const alloy_value *result(decomp *d, int k) { return alloy_node_output(d_node(d), k); }

static alloy_dtype real_of(alloy_dtype t) { return t == ALLOY_C64 ? ALLOY_F32 : t == ALLOY_C128 ? ALLOY_F64 : t; }

static bool refuse_complex(decomp *d, const alloy_value *a) {
  if (!alloy_dtype_is_complex(d_dtype(a))) return false;
  d_decline(d, "complex matrices are not computed on");
  return true;
}

/* A zero-dim float64 tensor holding v (ATen's tolerance tensors). */
static alloy_value *scalar64(decomp *d, double v) {
  return D(d, "aten.full.default", EMPTY_LIST, F(v), DT(ALLOY_F64));
}

/* zeros of the node's output k. */
static alloy_value *zeros_as(decomp *d, int k) {
  const alloy_value *r = result(d, k);
  return D(d, "aten.zeros.default", d_dim_list(d, d_shape(r), d_rank(r)), DT(d_dtype(r)));
}

static alloy_value *last_dims_swapped(decomp *d, alloy_value *x) {
  return D(d, "aten.transpose.int", V(x), I(-2), I(-1));
}

/* --- determinants, svd, qr -----------------------------------------------------------*/

/* logdet(A) = log|det A|, NaN where det A < 0 (slogdet's sign is -1). */
static void logdet(decomp *d) {
  alloy_value *a = d_tensor(d, 0), *outs[4];
  if (refuse_complex(d, a)) return;
  if (DN(d, "aten._linalg_slogdet.default", outs, 4, V(a)) < 2) return;
  alloy_value *negative = D(d, "aten.eq.Scalar", V(outs[0]), I(-1));
  d_out(d, 0, D(d, "aten.where.self", V(negative), F(NAN), V(outs[1])));
}

/* svd(A, some, compute_uv) -> (U, S, V): linalg_svd's U, S and Vh^T (full
 * matrices unless some); without compute_uv, S alone and zeros for U and V. */
static void svd_classic(decomp *d) {
  alloy_value *a = d_tensor(d, 0);
  bool some = d_bool(d, 1), uv = d_bool(d, 2);
  if (d_failed(d) || refuse_complex(d, a)) return;
  if (!uv) {
    d_out(d, 0, zeros_as(d, 0));
    d_out(d, 1, D(d, "aten.linalg_svdvals.default", V(a)));
    d_out(d, 2, zeros_as(d, 2));
    return;
  }
  alloy_value *outs[3];
  if (DN(d, "aten._linalg_svd.default", outs, 3, V(a), B(!some), B(true)) < 3) return;
  d_out(d, 0, outs[0]);
  d_out(d, 1, outs[1]);
  d_out(d, 2, last_dims_swapped(d, outs[2]));
}

/* qr(A, some): linalg_qr in mode "reduced" or "complete". */
static void qr_classic(decomp *d) {
  alloy_value *outs[2];
  if (DN(d, "aten.linalg_qr.default", outs, 2, V(d_tensor(d, 0)), S(d_bool(d, 1) ? "reduced" : "complete")) < 2)
    return;
  d_out(d, 0, outs[0]);
  d_out(d, 1, outs[1]);
}

/* --- pseudo-inverse -------------------------------------------------------------------*/

/* The float forms of linalg_pinv as .atol_rtol_tensor with zero-dim
 * float64 tolerances (ATen's get_atol_rtol): linalg_pinv(self, rcond,
 * hermitian) and pinverse(self, rcond) are atol 0, rtol rcond;
 * .atol_rtol_float gives either; an rtol left out stays None (the default
 * eps * max(m, n), or 0 beside a positive atol). */
static void pinv_form(decomp *d) {
  const char *name = alloy_op_name(alloy_node_op(d_node(d)));
  alloy_value *a = d_tensor(d, 0);
  alloy_arg atol = NONE, rtol = NONE, hermitian = B(false);
  if (!strcmp(name, "aten.linalg_pinv.atol_rtol_float")) {
    atol = d_is_none(d, 1) ? NONE : V(scalar64(d, d_float(d, 1)));
    rtol = d_is_none(d, 2) ? NONE : V(scalar64(d, d_float(d, 2)));
    hermitian = *d_arg(d, 3);
  } else if (!strcmp(name, "aten.linalg_pinv.rcond_tensor")) {
    alloy_value *rcond = d_tensor(d, 1);
    atol = V(D(d, "aten.zeros_like.default", V(rcond)));
    rtol = V(rcond);
    hermitian = *d_arg(d, 2);
  } else { /* linalg_pinv(self, rcond, hermitian), pinverse(self, rcond) */
    atol = V(scalar64(d, 0));
    rtol = V(scalar64(d, d_float(d, 1)));
    if (alloy_op_schema(alloy_node_op(d_node(d)))->nargs > 2) hermitian = *d_arg(d, 2);
  }
  d_out(d, 0, D(d, "aten.linalg_pinv.atol_rtol_tensor", V(a), atol, rtol, hermitian));
}

/* --- matrix power ------------------------------------------------------------------------*/

/* A^n (ATen's linalg_matrix_power): the identity for 0, the inverse's power
 * for n < 0, matmul for 1 to 3, else squarings by the bits of n from the
 * lowest, multiplied in as they come. */
static void matrix_power(decomp *d) {
  alloy_value *a = d_tensor(d, 0);
  int64_t n = d_int(d, 1);
  if (d_failed(d)) return;
  const alloy_dim *shape = d_shape(a);
  int r = d_rank(a);
  if (n == 0) {
    alloy_value *eye = D(d, "aten.eye.default", SYM(shape[r - 1]), DT(d_dtype(a)));
    return d_out(d, 0, D(d, "aten.clone.default", V(D(d, "aten.expand.default", V(eye), d_dim_list(d, shape, r)))));
  }
  if (n < 0) {
    a = D(d, "aten.linalg_inv.default", V(a));
    n = n == INT64_MIN ? INT64_MAX : -n;
  }
  if (n == 1) return d_out(d, 0, D(d, "aten.clone.default", V(a)));
  if (n == 2) return d_out(d, 0, D(d, "aten.matmul.default", V(a), V(a)));
  if (n == 3) return d_out(d, 0, D(d, "aten.matmul.default", V(D(d, "aten.matmul.default", V(a), V(a))), V(a)));
  alloy_value *z = NULL, *acc = NULL;
  while (n > 0 && !d_failed(d)) {
    bool bit = n % 2;
    n /= 2;
    z = z ? D(d, "aten.matmul.default", V(z), V(z)) : a;
    if (bit) acc = acc ? D(d, "aten.matmul.default", V(acc), V(z)) : z;
  }
  d_out(d, 0, acc);
}

/* --- norms ----------------------------------------------------------------------------------*/

/* The dims of a matrix norm, wrapped (the shape function checked them). */
static void norm_dims(decomp *d, int i, int rank, int *dim) {
  int64_t raw[2] = {-2, -1};
  if (i >= 0 && !d_is_none(d, i)) d_ints(d, i, raw, 2);
  for (int k = 0; k < 2; k++) dim[k] = d_wrap_dim(d, raw[k], rank);
}

/* f over the singular values of a with dims dim[0], dim[1] moved last
 * (amax, amin or sum over the last dim), put back in place when keepdim. */
static alloy_value *over_singular_values(decomp *d, alloy_value *a, const int *dim, bool keep, const char *f) {
  int r = d_rank(a);
  int64_t perm[ALLOY_MAX_RANK], back[ALLOY_MAX_RANK];
  int k = 0;
  for (int i = 0; i < r; i++)
    if (i != dim[0] && i != dim[1]) perm[k++] = i;
  perm[k++] = dim[0], perm[k++] = dim[1];
  for (int i = 0; i < r; i++) back[perm[i]] = i;
  alloy_value *s = D(d, "aten.linalg_svdvals.default", V(D(d, "aten.permute.default", V(a), d_int_list(d, perm, r))));
  alloy_value *y = D(d, f, V(s), LIST(I(-1)), B(keep));
  if (!keep) return y;
  y = D(d, "aten.unsqueeze.default", V(y), I(-1));
  return D(d, "aten.permute.default", V(y), d_int_list(d, back, r));
}

/* linalg_matrix_norm(A, ord, dim, keepdim, dtype) (ATen's): 'fro' is the
 * vector 2-norm over both dims; 'nuc' the sum of the singular values; +-2
 * their max or min; +-1 the max or min over dim[1] of the 1-norms along
 * dim[0] (+-inf: the dims swapped). */
static void matrix_norm_of(decomp *d, alloy_value *a, double ord, const char *sord, const int *dim_in, bool keep,
                           alloy_arg dtype) {
  int dim[2] = {dim_in[0], dim_in[1]};
  if (sord && !strcmp(sord, "fro")) {
    d_out(d, 0, D(d, "aten.linalg_vector_norm.default", V(a), I(2), LIST(I(dim[0]), I(dim[1])), B(keep), dtype));
    return;
  }
  if (refuse_complex(d, a)) return;
  if (dtype.kind != ALLOY_ARG_NONE) a = d_to(d, a, dtype.u.dtype);
  if (sord) return d_out(d, 0, over_singular_values(d, a, dim, keep, "aten.sum.dim_IntList"));
  const char *f = ord > 0 ? "aten.amax.default" : "aten.amin.default";
  if (fabs(ord) == 2) return d_out(d, 0, over_singular_values(d, a, dim, keep, f));
  if (isinf(ord)) {
    int t = dim[0];
    dim[0] = dim[1], dim[1] = t;
  }
  if (!keep && dim[0] < dim[1]) dim[1]--;
  alloy_value *n1 = D(d, "aten.linalg_vector_norm.default", V(a), F(1.0), LIST(I(dim[0])), B(keep));
  d_out(d, 0, D(d, f, V(n1), LIST(I(dim[1])), B(keep)));
}

static void matrix_norm(decomp *d) {
  alloy_value *a = d_tensor(d, 0);
  int dim[2];
  norm_dims(d, 2, d_rank(a), dim);
  bool str = d_arg(d, 1)->kind == ALLOY_ARG_STR;
  if (d_failed(d)) return;
  matrix_norm_of(d, a, str ? 0 : d_float(d, 1), str ? d_str(d, 1) : NULL, dim, d_bool(d, 3), *d_arg(d, 4));
}

/* linalg_norm(A, ord, dim, keepdim, dtype): a matrix norm for a string
 * ord, or a number ord over two dims (dims (0, 1) of a 2-D A when dim is
 * None); else the vector norm (ord 2 by default). */
static void linalg_norm(decomp *d) {
  alloy_value *a = d_tensor(d, 0);
  bool str = d_arg(d, 1)->kind == ALLOY_ARG_STR, has_ord = !d_is_none(d, 1), has_dim = !d_is_none(d, 2);
  int64_t raw[2] = {0, 1};
  int nd = has_dim ? d_ints(d, 2, raw, 2) : 2;
  if (d_failed(d)) return;
  if (str || (has_ord && nd == 2 && (has_dim || d_rank(a) == 2))) {
    int dim[2] = {d_wrap_dim(d, raw[0], d_rank(a)), d_wrap_dim(d, raw[1], d_rank(a))};
    if (d_failed(d)) return;
    return matrix_norm_of(d, a, str ? 0 : d_float(d, 1), str ? d_str(d, 1) : NULL, dim, d_bool(d, 3), *d_arg(d, 4));
  }
  d_out(d, 0, D(d, "aten.linalg_vector_norm.default", V(a), has_ord ? *d_arg(d, 1) : I(2), *d_arg(d, 2),
                *d_arg(d, 3), *d_arg(d, 4)));
}

/* nuclear_norm(A, keepdim), nuclear_norm.dim(A, dim, keepdim). */
static void nuclear_norm(decomp *d) {
  bool with_dim = alloy_op_schema(alloy_node_op(d_node(d)))->nargs == 3;
  alloy_value *a = d_tensor(d, 0);
  int dim[2];
  norm_dims(d, with_dim ? 1 : -1, d_rank(a), dim);
  if (d_failed(d)) return;
  matrix_norm_of(d, a, 0, "nuc", dim, d_bool(d, with_dim ? 2 : 1), NONE);
}

/* linalg_cond(A, p) (ATen's): 0 for empty matrices; for p None or +-2 the
 * ratio of the extreme singular values; "nuc" the sum of the singular
 * values times the sum of their reciprocals; else the norm of A times the
 * norm of its inverse (infinite where A is singular), 0 * inf as inf. */
static void cond(decomp *d) {
  alloy_value *a = d_tensor(d, 0);
  bool str = d_arg(d, 1)->kind == ALLOY_ARG_STR;
  const char *sp = str ? d_str(d, 1) : NULL;
  double p = str || d_is_none(d, 1) ? 2 : d_float(d, 1);
  if (d_failed(d) || refuse_complex(d, a)) return;
  if (d_known_empty(a)) return d_out(d, 0, zeros_as(d, 0));
  if (!str && fabs(p) == 2) {
    alloy_value *s = D(d, "aten.linalg_svdvals.default", V(a));
    alloy_value *hi = D(d, "aten.slice.Tensor", V(s), I(-1), I(0), I(1), I(1));
    alloy_value *lo = D(d, "aten.slice.Tensor", V(s), I(-1), I(-1), NONE, I(1));
    alloy_value *q = p < 0 ? D(d, "aten.div.Tensor", V(lo), V(hi)) : D(d, "aten.div.Tensor", V(hi), V(lo));
    return d_out(d, 0, D(d, "aten.squeeze.dim", V(q), I(-1)));
  }
  if (str && !strcmp(sp, "nuc")) {
    alloy_value *s = D(d, "aten.linalg_svdvals.default", V(a));
    alloy_value *sum = D(d, "aten.sum.dim_IntList", V(s), LIST(I(-1)));
    alloy_value *inv = D(d, "aten.sum.dim_IntList", V(D(d, "aten.reciprocal.default", V(s))), LIST(I(-1)));
    return d_out(d, 0, D(d, "aten.mul.Tensor", V(sum), V(inv)));
  }
  alloy_value *outs[2];
  if (DN(d, "aten.linalg_inv_ex.default", outs, 2, V(a)) < 2) return;
  alloy_value *info = D(d, "aten.unsqueeze.default", V(D(d, "aten.unsqueeze.default", V(outs[1]), I(-1))), I(-1));
  alloy_value *inv = D(d, "aten.where.self", V(D(d, "aten.gt.Scalar", V(info), I(0))), F(INFINITY), V(outs[0]));
  alloy_arg ord = str ? S(sp) : F(p);
  const char *mn = str ? "aten.linalg_matrix_norm.str_ord" : "aten.linalg_matrix_norm.default";
  alloy_value *na = D(d, mn, V(a), ord), *ni = D(d, mn, V(inv), ord);
  alloy_value *prod = D(d, "aten.mul.Tensor", V(na), V(ni));
  d_out(d, 0, D(d, "aten.nan_to_num.default", V(prod), F(INFINITY), F(INFINITY), F(-INFINITY)));
}

/* --- rank -------------------------------------------------------------------------------------*/

/* linalg_matrix_rank, every overload (ATen's matrix_rank_impl): the count
 * of singular values (of absolute eigenvalues, hermitian) above
 * max(atol, rtol * the largest); atol defaults to 0 and rtol to
 * eps * max(m, n), or to 0 where a given atol is positive; float
 * tolerances are zero-dim float64 tensors. 0 for empty matrices. */
static void matrix_rank(decomp *d) {
  const char *name = alloy_op_name(alloy_node_op(d_node(d)));
  alloy_value *a = d_tensor(d, 0);
  alloy_value *atol = NULL, *rtol = NULL;
  bool hermitian;
  if (!strcmp(name, "aten.linalg_matrix_rank.default")) { /* (self, tol, hermitian) */
    atol = scalar64(d, d_float(d, 1)), rtol = scalar64(d, 0), hermitian = d_bool(d, 2);
  } else if (!strcmp(name, "aten.linalg_matrix_rank.tol_tensor")) { /* (input, tol, hermitian) */
    atol = d_tensor(d, 1), rtol = D(d, "aten.zeros_like.default", V(atol)), hermitian = d_bool(d, 2);
  } else {
    bool floats = !strcmp(name, "aten.linalg_matrix_rank.atol_rtol_float");
    if (!d_is_none(d, 1)) atol = floats ? scalar64(d, d_float(d, 1)) : d_tensor(d, 1);
    if (!d_is_none(d, 2)) rtol = floats ? scalar64(d, d_float(d, 2)) : d_tensor(d, 2);
    hermitian = d_bool(d, 3);
  }
  if (d_failed(d) || refuse_complex(d, a)) return;
  if (d_known_empty(a)) return d_out(d, 0, zeros_as(d, 0));
  const alloy_dim *sh = d_shape(a);
  int r = d_rank(a);
  if (!rtol) {
    alloy_dim big = alloy_dim_max(d_symtab(d), sh[r - 1], sh[r - 2]);
    double eps = real_of(d_dtype(a)) == ALLOY_F64 ? 0x1p-52 : 0x1p-23;
    alloy_value *deflt = D(d, "aten.mul.Tensor", V(scalar64(d, eps)), SYM(big));
    rtol = atol ? D(d, "aten.where.self", V(D(d, "aten.gt.Scalar", V(atol), I(0))), V(scalar64(d, 0)), V(deflt)) : deflt;
  }
  if (!atol) atol = scalar64(d, 0);
  alloy_value *s, *top;
  if (hermitian) {
    s = D(d, "aten.abs.default", V(D(d, "aten.linalg_eigvalsh.default", V(a))));
    top = D(d, "aten.amax.default", V(s), LIST(I(-1)), B(true));
  } else {
    s = D(d, "aten.linalg_svdvals.default", V(a));
    top = D(d, "aten.slice.Tensor", V(s), I(-1), I(0), I(1), I(1));
  }
  alloy_value *tol = D(d, "aten.maximum.default", V(D(d, "aten.unsqueeze.default", V(atol), I(-1))),
                       V(D(d, "aten.mul.Tensor", V(D(d, "aten.unsqueeze.default", V(rtol), I(-1))), V(top))));
  d_out(d, 0, D(d, "aten.sum.dim_IntList", V(D(d, "aten.gt.Tensor", V(s), V(tol))), LIST(I(-1))));
}

/* --- products ------------------------------------------------------------------------------------*/

/* tensors[i..j] multiplied in the order split[][] gives (ATen's
 * matrix_chain_multiplication). */
static alloy_value *chain(decomp *d, alloy_value **t, int (*split)[64], int i, int j) {
  if (i == j) return t[i];
  alloy_value *left = chain(d, t, split, i, split[i][j]), *right = chain(d, t, split, split[i][j] + 1, j);
  return D(d, "aten.mm.default", V(left), V(right));
}

/* linalg_multi_dot(tensors) and chain_matmul(matrices) (ATen's multi_dot):
 * a 1-D first operand is a row, a 1-D last a column; two are one mm;
 * three go (AB)C unless A(BC) costs less; more in the order of least
 * scalar multiplications (the textbook dynamic programme, ties to the
 * first split); the vectors' dims are dropped from the result. */
static void multi_dot(decomp *d) {
  int n = d_tensor_count(d, 0);
  if (n == 1) return d_out(d, 0, D(d, "aten.clone.default", V(d_tensor_at(d, 0, 0))));
  if (n > 64) return d_decline(d, "a chain of %d matrices", n);
  alloy_value *t[64];
  for (int k = 0; k < n; k++) t[k] = d_tensor_at(d, 0, k);
  if (d_failed(d)) return;
  if (d_rank(t[0]) == 1) t[0] = D(d, "aten.unsqueeze.default", V(t[0]), I(0));
  if (d_rank(t[n - 1]) == 1) t[n - 1] = D(d, "aten.unsqueeze.default", V(t[n - 1]), I(-1));
  alloy_value *y;
  if (n == 2) {
    y = D(d, "aten.mm.default", V(t[0]), V(t[1]));
  } else {
    int64_t p[65];
    for (int k = 0; k < n; k++) {
      if (!alloy_dim_is_const(d_shape(t[k])[0])) return d_decline(d, "the order of the chain needs concrete sizes");
      p[k] = d_shape(t[k])[0].value;
    }
    if (!alloy_dim_is_const(d_shape(t[n - 1])[1])) return d_decline(d, "the order of the chain needs concrete sizes");
    p[n] = d_shape(t[n - 1])[1].value;
    static int split[64][64];
    if (n == 3) {
      int64_t cost_ab_c = p[0] * p[2] * (p[1] + p[3]), cost_a_bc = p[1] * p[3] * (p[0] + p[2]);
      split[0][2] = cost_ab_c > cost_a_bc ? 0 : 1;
      split[0][1] = 0, split[1][2] = 1;
    } else {
      int64_t cost[64][64] = {{0}};
      for (int l = 1; l < n; l++)
        for (int i = 0; i + l < n; i++) {
          int j = i + l;
          cost[i][j] = INT64_MAX;
          for (int k = i; k < j; k++) {
            int64_t q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1];
            if (q < cost[i][j]) cost[i][j] = q, split[i][j] = k;
          }
        }
    }
    y = chain(d, t, split, 0, n - 1);
  }
  const alloy_value *r = result(d, 0);
  d_out(d, 0, D(d, "aten.view.default", V(y), d_dim_list(d, d_shape(r), d_rank(r))));
}

/* vander(x, N, increasing): powers 0 .. N-1 of x in x's dtype promoted
 * with int64, made as a cumulative product (ATen's), decreasing unless
 * increasing. */
static void vander(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  bool increasing = d_bool(d, 2);
  const alloy_value *r = result(d, 0);
  alloy_dim len = d_shape(r)[0], n = d_shape(r)[1];
  alloy_dtype t = d_dtype(r);
  if (d_failed(d)) return;
  if (!alloy_dim_is_const(n)) return d_decline(d, "a symbolic N");
  if (n.value == 0) return d_out(d, 0, D(d, "aten.zeros.default", d_dim_list(d, d_shape(r), 2), DT(t)));
  alloy_dim one[2] = {len, alloy_dim_const(1)}, rest[2] = {len, alloy_dim_const(n.value - 1)};
  alloy_value *ones = D(d, "aten.ones.default", d_dim_list(d, one, 2), DT(t)), *y = ones;
  if (n.value > 1) {
    alloy_value *cols = D(d, "aten.expand.default", V(D(d, "aten.unsqueeze.default", V(d_to(d, x, t)), I(1))),
                          d_dim_list(d, rest, 2));
    alloy_value *pw = D(d, "aten.cumprod.default", V(cols), I(1));
    y = D(d, "aten.cat.default", LIST(V(ones), V(pw)), I(1));
  }
  d_out(d, 0, increasing ? y : D(d, "aten.flip.default", V(y), LIST(I(1))));
}

/* linalg_vander(x, N): [1, x, x^2, ...] along a new last dim (ATen's: the
 * cumulative product of x repeated N - 1 times, after a column of ones; a
 * 0-dim x as one of one element). */
static void linalg_vander(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  const alloy_value *r = result(d, 0);
  int rank = d_rank(r);
  if (d_rank(x) == 0) x = D(d, "aten.unsqueeze.default", V(x), I(0));
  alloy_dim shape[ALLOY_MAX_RANK];
  memcpy(shape, d_shape(r), sizeof *shape * (size_t)rank);
  shape[rank - 1] = alloy_dim_sub(d_symtab(d), shape[rank - 1], alloy_dim_const(1));
  alloy_value *rep = D(d, "aten.expand.default", V(D(d, "aten.unsqueeze.default", V(x), I(-1))),
                       d_dim_list(d, shape, rank));
  alloy_value *pw = D(d, "aten.cumprod.default", V(rep), I(-1), DT(d_dtype(r)));
  shape[rank - 1] = alloy_dim_const(1);
  alloy_value *ones = D(d, "aten.ones.default", d_dim_list(d, shape, rank), DT(d_dtype(r)));
  d_out(d, 0, D(d, "aten.cat.default", LIST(V(ones), V(pw)), I(-1)));
}

/* linalg_tensorinv(A, ind): the inverse of A as a square matrix
 * (prod(shape[:ind]) rows), shaped shape[ind:] + shape[:ind]. */
static void tensorinv(decomp *d) {
  alloy_value *a = d_tensor(d, 0);
  int64_t ind = d_int(d, 1);
  if (d_failed(d)) return;
  alloy_dim p = alloy_dim_const(1);
  for (int k = 0; k < ind && k < d_rank(a); k++) p = alloy_dim_mul(d_symtab(d), p, d_shape(a)[k]);
  alloy_dim sq[2] = {p, p};
  alloy_value *inv = D(d, "aten.linalg_inv.default", V(D(d, "aten.reshape.default", V(a), d_dim_list(d, sq, 2))));
  const alloy_value *r = result(d, 0);
  d_out(d, 0, D(d, "aten.reshape.default", V(inv), d_dim_list(d, d_shape(r), d_rank(r))));
}

/* linalg_tensorsolve(A, B, dims): A with dims moved last, as a square
 * matrix, solved against B flattened; shaped as the result. */
static void tensorsolve(decomp *d) {
  alloy_value *a = d_tensor(d, 0), *b = d_tensor(d, 1);
  int r = d_rank(a);
  if (!d_is_none(d, 2)) {
    int64_t src[ALLOY_MAX_RANK], dst[ALLOY_MAX_RANK];
    int n = d_ints(d, 2, src, ALLOY_MAX_RANK);
    for (int k = 0; k < n; k++) dst[k] = r - n + k;
    a = D(d, "aten.movedim.intlist", V(a), d_int_list(d, src, n), d_int_list(d, dst, n));
  }
  alloy_dim p = alloy_dim_const(1);
  for (int k = 0; k < d_rank(b); k++) p = alloy_dim_mul(d_symtab(d), p, d_shape(b)[k]);
  alloy_dim sq[2] = {p, p};
  alloy_value *m = D(d, "aten.reshape.default", V(a), d_dim_list(d, sq, 2));
  alloy_value *x = D(d, "aten.linalg_solve.default", V(m), V(D(d, "aten.flatten.using_ints", V(b))));
  const alloy_value *res = result(d, 0);
  d_out(d, 0, D(d, "aten.reshape.default", V(x), d_dim_list(d, d_shape(res), d_rank(res))));
}

/* linalg_vecdot(x, y, dim) = sum(x * y, dim) for real x. */
static void vecdot(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *y = d_tensor(d, 1);
  if (refuse_complex(d, x)) return;
  d_out(d, 0, D(d, "aten.sum.dim_IntList", V(D(d, "aten.mul.Tensor", V(x), V(y))), LIST(*d_arg(d, 2))));
}

/* linalg__powsum(x, ord, dim, keepdim, dtype) = sum |x|^ord over dim (all
 * when None or empty), in the result's opmath, x first converted to dtype. */
static void powsum(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  if (refuse_complex(d, x)) return;
  alloy_dtype t = d_out_dtype(d, 0);
  if (!d_is_none(d, 4)) x = d_to(d, x, d_dtype_or(d, 4, t));
  x = D(d, "aten.abs.default", V(d_to(d, x, d_opmath(t))));
  alloy_value *s = D(d, "aten.sum.dim_IntList", V(D(d, "aten.pow.Tensor_Scalar", V(x), *d_arg(d, 1))),
                     d_is_none(d, 2) ? EMPTY_LIST : *d_arg(d, 2), *d_arg(d, 3));
  d_out(d, 0, d_to(d, s, t));
}

/* --- forms -------------------------------------------------------------------------*/

static void form(decomp *d) {
  const alloy_op *op = alloy_node_op(d_node(d));
  const linalg_form *f = linalg_form_find(alloy_op_name(op));
  if (!f) {
    d_fail(d, "%s is not in the linalg forms", alloy_op_name(op));
    return;
  }
  int nargs = alloy_op_schema(op)->nargs;
  if (nargs > ALIAS_MAX_ARGS) return d_decline(d, "%d arguments", nargs);
  alloy_arg src[ALIAS_MAX_ARGS], args[ALIAS_MAX_ARGS];
  for (int i = 0; i < nargs; i++) src[i] = *d_arg(d, i);
  for (int j = 0; j < f->alias.nargs; j++) args[j] = meta_alias_arg(&f->alias, j, src);
  alloy_value *outs[8];
  int n = d_op_n(d, f->alias.as, args, f->alias.nargs, outs, 8);
  for (int o = 0, k = 0; o < n; o++)
    if (f->outs >> o & 1) d_out(d, k++, outs[o]);
}

const decomp_rule decomp_rules_linalg[] = {
    {"aten.logdet.default", logdet, DECOMP_TO_CORE},
    {"aten.svd.default", svd_classic, DECOMP_TO_CORE},
    {"aten.qr.default", qr_classic, DECOMP_TO_CORE},
    {"aten.linalg_pinv.default", pinv_form, DECOMP_TO_CORE},
    {"aten.linalg_pinv.atol_rtol_float", pinv_form, DECOMP_TO_CORE},
    {"aten.linalg_pinv.rcond_tensor", pinv_form, DECOMP_TO_CORE},
    {"aten.pinverse.default", pinv_form, DECOMP_TO_CORE},
    {"aten.linalg_matrix_power.default", matrix_power, DECOMP_TO_CORE},
    {"aten.matrix_power.default", matrix_power, DECOMP_TO_CORE},
    {"aten.linalg_matrix_norm.default", matrix_norm, DECOMP_TO_CORE},
    {"aten.linalg_matrix_norm.str_ord", matrix_norm, DECOMP_TO_CORE},
    {"aten.linalg_norm.default", linalg_norm, DECOMP_TO_CORE},
    {"aten.linalg_norm.ord_str", linalg_norm, DECOMP_TO_CORE},
    {"aten.nuclear_norm.default", nuclear_norm, DECOMP_TO_CORE},
    {"aten.nuclear_norm.dim", nuclear_norm, DECOMP_TO_CORE},
    {"aten.linalg_cond.default", cond, DECOMP_TO_CORE},
    {"aten.linalg_cond.p_str", cond, DECOMP_TO_CORE},
    {"aten.linalg_matrix_rank.default", matrix_rank, DECOMP_TO_CORE},
    {"aten.linalg_matrix_rank.atol_rtol_float", matrix_rank, DECOMP_TO_CORE},
    {"aten.linalg_matrix_rank.atol_rtol_tensor", matrix_rank, DECOMP_TO_CORE},
    {"aten.linalg_matrix_rank.tol_tensor", matrix_rank, DECOMP_TO_CORE},
    {"aten.linalg_multi_dot.default", multi_dot, DECOMP_TO_CORE},
    {"aten.chain_matmul.default", multi_dot, DECOMP_TO_CORE},
    {"aten.vander.default", vander, DECOMP_TO_CORE},
    {"aten.linalg_vander.default", linalg_vander, DECOMP_TO_CORE},
    {"aten.linalg_tensorinv.default", tensorinv, DECOMP_TO_CORE},
    {"aten.linalg_tensorsolve.default", tensorsolve, DECOMP_TO_CORE},
    {"aten.linalg_vecdot.default", vecdot, DECOMP_TO_CORE},
    {"aten.linalg__powsum.default", powsum, DECOMP_TO_CORE},
#define FORM_RULE(op, ...) {op, form, DECOMP_TO_CORE},
    ALLOY_LINALG_FORMS(FORM_RULE)
#undef FORM_RULE
    {NULL, NULL, 0},
};
