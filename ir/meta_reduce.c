/*
 * ir/meta_reduce.c: shape functions of reductions (sum, mean, var, amax,
 * argmax, max.dim, median, ...), scans (cumsum, cummax, ...), the softmax
 * family, sort/topk, and the data-dependent summaries (histograms, bincount,
 * unique, segment_reduce). See ir/meta.h.
 *
 * Most reductions differ only in where their dim, keepdim and dtype
 * arguments sit and in how the result dtype follows the input, so they are
 * rows of reduce_descs (indexed by the table's family parameter) read by one
 * function; ops with extra checks have small functions of their own that
 * reuse it. Dims follow PyTorch: dim=None and dim=[] reduce every dim, a
 * 0-dim tensor accepts dim 0 and -1, a dim listed twice is an error.
 */
#include <string.h>

#include "ir/meta.h"
#include "ir/meta_alias.h"

/* Copies n dims; a 0-dim tensor's shape may be NULL. */
static void copy_dims(alloy_dim *dst, const alloy_dim *src, int n) {
  if (n > 0) memcpy(dst, src, sizeof *dst * (size_t)n);
}

/* --- dtype rules ------------------------------------------------------------*/

typedef enum out_rule {
  OUT_SAME,         /* the input's dtype (amax, max, median, sort)        */
  OUT_SUM,          /* bool/int -> int64 unless dtype= (sum, prod, cumsum) */
  OUT_MEAN,         /* dtype= or the input's; must be float or complex     */
  OUT_REAL_FLOAT,   /* float input required; complex -> real (var, norm)  */
  OUT_INT_TO_FLOAT, /* bool/int -> float32 (logsumexp)                    */
  OUT_BOOL,         /* bool, but uint8 stays uint8 (any, all)             */
  OUT_I64,          /* argmax, count_nonzero                              */
} out_rule;

static alloy_dtype complex_to_real(alloy_dtype t) {
  return t == ALLOY_C64 ? ALLOY_F32 : t == ALLOY_C128 ? ALLOY_F64 : t;
}

static bool is_float_or_complex(alloy_dtype t) {
  return alloy_dtype_is_float(t) || alloy_dtype_is_complex(t);
}

/* The ScalarType argument i when one was given (i < 0: the op has none). */
static bool dtype_arg(const alloy_meta *m, int i, alloy_dtype *out) {
  if (i < 0) return false;
  const alloy_arg *a = &m->args[i];
  if (a->kind == ALLOY_ARG_DTYPE) return *out = a->u.dtype, true;
  return false;
}

static alloy_error *rule_dtype(alloy_meta *m, out_rule rule, alloy_dtype in,
                               int dtype_i, alloy_dtype *out) {
  alloy_dtype given;
  bool has = dtype_arg(m, dtype_i, &given);
  switch (rule) {
    case OUT_SAME: *out = in; break;
    case OUT_SUM:
      *out = has ? given
             : (in == ALLOY_BOOL || alloy_dtype_is_integer(in)) ? ALLOY_I64
                                                                : in;
      break;
    case OUT_MEAN:
      *out = has ? given : in;
      if (!is_float_or_complex(*out))
        return has ? meta_error(m, "optional dtype must be either a floating "
                                   "point or complex dtype, got %s",
                                alloy_dtype_name(*out))
                   : meta_error(m, "could not infer output dtype: input dtype "
                                   "must be either a floating point or complex "
                                   "dtype, got %s",
                                alloy_dtype_name(in));
      break;
    case OUT_REAL_FLOAT:
      if (!is_float_or_complex(has ? given : in))
        return meta_error(m, "expected a floating point or complex tensor as "
                             "input, got %s",
                          alloy_dtype_name(has ? given : in));
      *out = complex_to_real(has ? given : in);
      break;
    case OUT_INT_TO_FLOAT:
      *out = (in == ALLOY_BOOL || alloy_dtype_is_integer(in)) ? ALLOY_F32 : in;
      break;
    case OUT_BOOL: *out = in == ALLOY_U8 ? ALLOY_U8 : ALLOY_BOOL; break;
    case OUT_I64: *out = ALLOY_I64; break;
  }
  return NULL;
}

/* --- reduction shapes ---------------------------------------------------------*/

typedef enum dim_kind {
  DIM_ALL,  /* no dim argument: every dim                   */
  DIM_LIST, /* int[] / int[]?: None and [] mean every dim   */
  DIM_ONE,  /* int                                          */
  DIM_OPT,  /* int?: None means every dim                   */
} dim_kind;

/* Which dims to reduce, as a mask over x's dims. */
static alloy_error *reduce_mask(alloy_meta *m, const alloy_value *x,
                                dim_kind kind, int dim_i, bool *mask) {
  int rank = x->rank;
  memset(mask, 0, sizeof(bool) * ALLOY_MAX_RANK);
  int64_t dims[ALLOY_MAX_RANK + 1];
  int nd = 0;
  alloy_error *e = NULL;
  if (kind == DIM_LIST) {
    e = meta_ints(m, dim_i, dims, ALLOY_MAX_RANK + 1, &nd);
  } else if (kind == DIM_ONE || (kind == DIM_OPT && !meta_is_none(m, dim_i))) {
    e = meta_int(m, dim_i, &dims[0]);
    nd = 1;
  }
  if (e) return e;
  if (nd == 0) {
    for (int d = 0; d < rank; d++) mask[d] = true;
    return NULL;
  }
  bool seen[ALLOY_MAX_RANK] = {false};
  for (int k = 0; k < nd; k++) {
    int w;
    if ((e = meta_wrap_dim(m, dim_i, dims[k], rank, &w))) return e;
    if (seen[w])
      return meta_error(m, "argument '%s': dim %d appears multiple times in the "
                           "list of dims",
                        meta_arg_name(m, dim_i), w);
    seen[w] = true;
    if (rank) mask[w] = true;
  }
  return NULL;
}

static int masked_shape(const alloy_value *x, const bool *mask, bool keepdim,
                        alloy_dim *out) {
  int r = 0;
  for (int d = 0; d < x->rank; d++) {
    if (!mask[d]) out[r++] = x->shape[d];
    else if (keepdim) out[r++] = alloy_dim_const(1);
  }
  return r;
}

/* Reductions without an identity (max, argmax, median, ...) reject an
 * empty reduced dim; only a size known to be 0 can be rejected here. */
static alloy_error *check_nonempty(alloy_meta *m, const alloy_value *x,
                                   const bool *mask, bool all) {
  for (int d = 0; d < x->rank; d++) {
    if (!mask[d] || !alloy_dim_is_const(x->shape[d]) || x->shape[d].value) continue;
    if (all)
      return meta_error(m, "expected reduction dim to be specified for "
                           "input.numel() == 0");
    return meta_error(m, "expected reduction dim %d to have non-zero size", d);
  }
  return NULL;
}

typedef struct reduce_desc {
  dim_kind dims;
  int dim_i, keepdim_i, dtype_i; /* schema positions; -1: absent     */
  out_rule rule;
  int nout;                      /* 1, or 2: values and a second output */
  out_rule second;               /* OUT_I64 indices, or OUT_SAME       */
  bool nonempty;                 /* no identity: empty dim is an error */
} reduce_desc;

enum {
  R_SUM, R_SUM_DIM, R_PROD_DIM, R_MEAN, R_MEAN_DIM, R_AMAX, R_ANY, R_ANY_DIM,
  R_ANY_DIMS, R_ARGMAX, R_VAR_DIM, R_VAR_CORR, R_VAR_MEAN, R_LOGSUMEXP,
  R_NORM, R_COUNT_NZ, R_COUNT_NZ_DIMS, R_MAX, R_MAX_DIM, R_MEDIAN_DIM,
  R_MODE, R_KTHVALUE, R_AMINMAX, R_VAR_ALL, R_VAR_MEAN_ALL,
};

static const reduce_desc reduce_descs[] = {
    /* sum(self, *, dtype), prod(self, *, dtype) */
    [R_SUM] = {DIM_ALL, -1, -1, 1, OUT_SUM, 1, OUT_SAME, false},
    /* sum.dim_IntList / nansum (self, dim, keepdim, *, dtype) */
    [R_SUM_DIM] = {DIM_LIST, 1, 2, 3, OUT_SUM, 1, OUT_SAME, false},
    [R_PROD_DIM] = {DIM_ONE, 1, 2, 3, OUT_SUM, 1, OUT_SAME, false},
    [R_MEAN] = {DIM_ALL, -1, -1, 1, OUT_MEAN, 1, OUT_SAME, false},
    [R_MEAN_DIM] = {DIM_LIST, 1, 2, 3, OUT_MEAN, 1, OUT_SAME, false},
    [R_AMAX] = {DIM_LIST, 1, 2, -1, OUT_SAME, 1, OUT_SAME, true},
    [R_ANY] = {DIM_ALL, -1, -1, -1, OUT_BOOL, 1, OUT_SAME, false},
    [R_ANY_DIM] = {DIM_ONE, 1, 2, -1, OUT_BOOL, 1, OUT_SAME, false},
    [R_ANY_DIMS] = {DIM_LIST, 1, 2, -1, OUT_BOOL, 1, OUT_SAME, false},
    [R_ARGMAX] = {DIM_OPT, 1, 2, -1, OUT_I64, 1, OUT_SAME, true},
    /* var.dim(self, dim, unbiased, keepdim) */
    [R_VAR_DIM] = {DIM_LIST, 1, 3, -1, OUT_REAL_FLOAT, 1, OUT_SAME, false},
    /* var/std.correction(self, dim, *, correction, keepdim) */
    [R_VAR_CORR] = {DIM_LIST, 1, 3, -1, OUT_REAL_FLOAT, 1, OUT_SAME, false},
    /* var_mean/std_mean: the mean keeps the input's (float) dtype */
    [R_VAR_MEAN] = {DIM_LIST, 1, 3, -1, OUT_REAL_FLOAT, 2, OUT_SAME, false},
    [R_LOGSUMEXP] = {DIM_LIST, 1, 2, -1, OUT_INT_TO_FLOAT, 1, OUT_SAME, false},
    /* norm.ScalarOpt_dim(self, p, dim, keepdim) */
    [R_NORM] = {DIM_LIST, 2, 3, -1, OUT_REAL_FLOAT, 1, OUT_SAME, false},
    [R_COUNT_NZ] = {DIM_OPT, 1, -1, -1, OUT_I64, 1, OUT_SAME, false},
    [R_COUNT_NZ_DIMS] = {DIM_LIST, 1, -1, -1, OUT_I64, 1, OUT_SAME, false},
    /* max(self), min(self), median(self), nanmedian(self) */
    [R_MAX] = {DIM_ALL, -1, -1, -1, OUT_SAME, 1, OUT_SAME, true},
    [R_MAX_DIM] = {DIM_ONE, 1, 2, -1, OUT_SAME, 2, OUT_I64, true},
    [R_MEDIAN_DIM] = {DIM_ONE, 1, 2, -1, OUT_SAME, 2, OUT_I64, true},
    [R_MODE] = {DIM_ONE, 1, 2, -1, OUT_SAME, 2, OUT_I64, false},
    /* kthvalue(self, k, dim, keepdim) */
    [R_KTHVALUE] = {DIM_ONE, 2, 3, -1, OUT_SAME, 2, OUT_I64, false},
    /* aminmax(self, *, dim=None, keepdim) */
    [R_AMINMAX] = {DIM_OPT, 1, 2, -1, OUT_SAME, 2, OUT_SAME, true},
    /* var/std(self, unbiased), var_mean/std_mean(self, unbiased) */
    [R_VAR_ALL] = {DIM_ALL, -1, -1, -1, OUT_REAL_FLOAT, 1, OUT_SAME, false},
    [R_VAR_MEAN_ALL] = {DIM_ALL, -1, -1, -1, OUT_REAL_FLOAT, 2, OUT_SAME, false},
};

static alloy_error *reduce_with(alloy_meta *m, const reduce_desc *r) {
  const alloy_value *x = meta_tensor(m, 0);
  bool mask[ALLOY_MAX_RANK];
  alloy_error *e = reduce_mask(m, x, r->dims, r->dim_i, mask);
  if (e) return e;
  bool all = true;
  for (int d = 0; d < x->rank; d++) all &= mask[d];
  if (r->nonempty && (e = check_nonempty(m, x, mask, all))) return e;
  bool keepdim = r->keepdim_i >= 0 && meta_bool(m, r->keepdim_i);
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank = masked_shape(x, mask, keepdim, shape);
  alloy_dtype t0 = x->dtype, t1;
  if ((e = rule_dtype(m, r->rule, x->dtype, r->dtype_i, &t0))) return e;
  if ((e = meta_out_tensor(m, 0, t0, shape, rank))) return e;
  if (r->nout < 2) return NULL;
  t1 = r->second == OUT_I64 ? ALLOY_I64 : x->dtype;
  return meta_out_tensor(m, 1, t1, shape, rank);
}

static alloy_error *meta_reduce(alloy_meta *m) {
  return reduce_with(m, &reduce_descs[m->param]);
}

/* kthvalue(self, k, dim=-1, keepdim): 1 <= k <= size of dim. */
static alloy_error *meta_kthvalue(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  int64_t dim;
  int w;
  alloy_error *e = meta_int(m, 2, &dim);
  if (!e) e = meta_wrap_dim(m, 2, dim, x->rank, &w);
  if (e) return e;
  alloy_dim size = x->rank ? x->shape[w] : alloy_dim_const(1);
  alloy_dim k = meta_dim(m, 1);
  if (alloy_dim_lt(m->st, k, alloy_dim_const(1)) == ALLOY_TRUE ||
      alloy_dim_lt(m->st, size, k) == ALLOY_TRUE) {
    char kb[64], sb[64];
    alloy_dim_print(k, kb, sizeof kb);
    alloy_dim_print(size, sb, sizeof sb);
    return meta_error(m, "argument 'k': selected number k out of range for "
                         "dimension %d (k = %s, size %s)",
                      w, kb, sb);
  }
  return reduce_with(m, &reduce_descs[R_KTHVALUE]);
}

/* trace(self): the sum of a matrix's diagonal. */
static alloy_error *meta_trace(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  if (x->rank != 2)
    return meta_error(m, "argument 'self': expected a matrix, but got a tensor "
                         "with %d dims",
                      x->rank);
  alloy_dtype t;
  alloy_error *e = rule_dtype(m, OUT_SUM, x->dtype, -1, &t);
  return e ? e : meta_out_tensor(m, 0, t, NULL, 0);
}

/* dist(self, other, p) = vector_norm(self - other, p). */
static alloy_error *meta_dist(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0), *b = meta_tensor(m, 1);
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank = 0;
  alloy_error *e = meta_broadcast(m, a->shape, a->rank, b->shape, b->rank, shape, &rank);
  if (e) return e;
  alloy_promo_operand ops[2] = {meta_promo_operand(m, 0), meta_promo_operand(m, 1)};
  alloy_dtype compute, result;
  alloy_elementwise_dtypes(ops, 2, ALLOY_PROMO_DEFAULT, &compute, &result);
  if (!is_float_or_complex(result))
    return meta_error(m, "expected a floating point or complex tensor as input, "
                         "got %s",
                      alloy_dtype_name(result));
  return meta_out_tensor(m, 0, complex_to_real(result), NULL, 0);
}

/* equal(self, other) and allclose(self, other, ...): a bool known at run
 * time. allclose broadcasts and requires one dtype; equal compares anything. */
static alloy_error *meta_bool_compare(alloy_meta *m) {
  if (m->param) {
    const alloy_value *a = meta_tensor(m, 0), *b = meta_tensor(m, 1);
    alloy_dim shape[ALLOY_MAX_RANK];
    int rank;
    alloy_error *e = meta_broadcast(m, a->shape, a->rank, b->shape, b->rank, shape, &rank);
    if (e) return e;
    if (a->dtype != b->dtype)
      return meta_error(m, "argument 'other': dtype %s does not match self's %s",
                        alloy_dtype_name(b->dtype), alloy_dtype_name(a->dtype));
  }
  return meta_out_scalar(m, 0, ALLOY_VALUE_BOOL, alloy_dim_const(0));
}

/* --- reductions made of others ------------------------------------------------*/

enum { NORM_DTYPE, NORM_DIM_DTYPE, NORM_FROBENIUS };

/* norm.ScalarOpt_dtype(self, p, *, dtype), norm.ScalarOpt_dim_dtype(self,
 * p, dim, keepdim, *, dtype) and frobenius_norm.dim(self, dim, keepdim),
 * of at most 2 dims: linalg_vector_norm's, p = None being 2. */
static alloy_error *meta_norm_as_vector(alloy_meta *m) {
  alloy_arg none = alloy_arg_none(), dims = none, keep = alloy_arg_bool(false), dtype = none;
  alloy_arg p = m->param == NORM_FROBENIUS || meta_is_none(m, 1) ? alloy_arg_int(2) : m->args[1];
  if (m->param == NORM_DTYPE) dtype = m->args[2];
  if (m->param == NORM_DIM_DTYPE) dims = m->args[2], keep = m->args[3], dtype = m->args[4];
  if (m->param == NORM_FROBENIUS) {
    dims = m->args[1], keep = m->args[2];
    int n = dims.kind == ALLOY_ARG_LIST ? dims.u.list.n : 1;
    if (n > 2) return meta_error(m, "Expected at most 2 dimensions, but got %d dimensions instead.", n);
  }
  const alloy_value *x = meta_tensor(m, 0);
  if (m->param != NORM_FROBENIUS && !is_float_or_complex(x->dtype))
    return meta_error(m, "norm(): input dtype should be either floating point or complex. Got %s instead.",
                      alloy_dtype_name(x->dtype));
  alloy_arg args[5] = {m->args[0], p, dims, keep, dtype};
  return meta_as_op(m, "aten.linalg_vector_norm.default", args, 5, 0);
}

/* nanmean(self, dim, keepdim, *, dtype): nansum's type, of a floating
 * self. */
static alloy_error *meta_nanmean(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  if (!is_float_or_complex(x->dtype))
    return meta_error(m, "nanmean(): expected input to have floating point or complex dtype but got %s",
                      alloy_dtype_name(x->dtype));
  return reduce_with(m, &reduce_descs[R_SUM_DIM]);
}

/* sum_to_size(self, size): self summed down to size, which must expand to
 * self's shape. */
static alloy_error *meta_sum_to_size(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  alloy_dim size[ALLOY_MAX_RANK + 1];
  int n;
  alloy_error *e = meta_dims(m, 1, size, ALLOY_MAX_RANK + 1, &n);
  if (e) return e;
  bool ok = n <= x->rank;
  for (int k = 0; ok && k < n; k++) {
    alloy_dim s = size[n - 1 - k], t = x->shape[x->rank - 1 - k];
    ok = (alloy_dim_is_const(s) && s.value == 1) || alloy_dim_eq(m->st, s, t) != ALLOY_FALSE;
  }
  if (!ok) {
    char a[128], b[128];
    return meta_error(m, "size {%s} is not expandable to size {%s}.", meta_shape_text(size, n, a, sizeof a),
                      meta_shape_text(x->shape, x->rank, b, sizeof b));
  }
  return meta_out_tensor(m, 0, x->dtype, size, n);
}

/* _is_all_true / _is_any_true(self): a 0-dim bool, of a bool self. */
static alloy_error *meta_is_all_true(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  if (x->dtype != ALLOY_BOOL)
    return meta_error(m, "argument 'self' must be a bool tensor, got %s", alloy_dtype_name(x->dtype));
  return meta_out_tensor(m, 0, ALLOY_BOOL, NULL, 0);
}

/* --- integration ---------------------------------------------------------------
 * trapezoid / trapz / cumulative_trapezoid, as PyTorch's composites compute
 * them: with sample points x, the widths dx = x[1:] - x[:-1] (x a vector
 * laid along dim, or padded in front to y's rank) times the pairwise sums
 * of y, summed (or cumulatively summed) and halved; with a constant width,
 * the sum minus half the end points, times dx. */

enum { TRAPZ_X = 1, TRAPZ_CUMULATIVE = 2 };

/* The dtype: y's, promoted with x's; integers end as float32 (a division
 * by 2. or a product with 0.5). */
static alloy_dtype trapz_dtype(const alloy_value *y, const alloy_value *x) {
  alloy_dtype t = x ? alloy_promote_types(y->dtype, x->dtype) : y->dtype;
  return alloy_dtype_is_float(t) || alloy_dtype_is_complex(t) ? t : ALLOY_F32;
}

static alloy_error *meta_trapezoid(alloy_meta *m) {
  const alloy_value *y = meta_tensor(m, 0), *x = (m->param & TRAPZ_X) ? meta_tensor(m, 1) : NULL;
  bool cumulative = m->param & TRAPZ_CUMULATIVE;
  const char *name = cumulative ? "cumulative_trapezoid" : "trapezoid";
  int64_t dim;
  int d;
  alloy_error *e = meta_int(m, 2, &dim);
  if (!e) e = meta_wrap_dim(m, 2, dim, y->rank, &d);
  if (e) return e;
  if (y->rank == 0) return meta_error(m, "%s: argument 'y' must have at least 1 dim", name);
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank = 0;
  /* An empty dim integrates to zeros of y's own dtype. */
  if (!cumulative && alloy_dim_is_const(y->shape[d]) && y->shape[d].value == 0) {
    for (int k = 0; k < y->rank; k++)
      if (k != d) shape[rank++] = y->shape[k];
    return meta_out_tensor(m, 0, y->dtype, shape, rank);
  }
  if (y->dtype == ALLOY_BOOL || (x && x->dtype == ALLOY_BOOL))
    return meta_error(m, "%s: received a bool input for `%s`, but bool is not supported", name,
                      x ? "x` or `y" : "y");
  if (!x && m->args[1].kind == ALLOY_ARG_BOOL)
    return meta_error(m, "%s: Currently, we only support dx as a real number.", name);
  alloy_dim pairs[ALLOY_MAX_RANK];
  memcpy(pairs, y->shape, sizeof *pairs * (size_t)y->rank);
  pairs[d] = alloy_dim_max(m->st, alloy_dim_sub(m->st, y->shape[d], alloy_dim_const(1)), alloy_dim_const(0));
  rank = y->rank;
  memcpy(shape, pairs, sizeof *shape * (size_t)rank);
  if (x) {
    alloy_dim xs[ALLOY_MAX_RANK];
    int xr = x->rank;
    if (xr == 1) {
      if (alloy_dim_eq(m->st, x->shape[0], y->shape[d]) == ALLOY_FALSE)
        return meta_error(m, "%s: There must be one `x` value for each sample point", name);
      for (int k = 0; k < y->rank; k++) xs[k] = alloy_dim_const(1);
      xs[d] = x->shape[0];
      xr = y->rank;
    } else {
      int pad = xr < y->rank ? y->rank - xr : 0;
      for (int k = 0; k < pad; k++) xs[k] = alloy_dim_const(1);
      copy_dims(xs + pad, x->shape, xr);
      xr += pad;
    }
    if (d >= xr) return meta_error(m, "%s: dim %d is out of range for x", name, d);
    xs[d] = alloy_dim_max(m->st, alloy_dim_sub(m->st, xs[d], alloy_dim_const(1)), alloy_dim_const(0));
    if ((e = meta_broadcast(m, pairs, y->rank, xs, xr, shape, &rank))) return e;
  }
  /* the sum is over dim counted from the front of the product, as
   * PyTorch's (its rank may exceed y's when x has more dims) */
  if (!cumulative) {
    int r = 0;
    for (int k = 0; k < rank; k++)
      if (k != d) shape[r++] = shape[k];
    rank = r;
  }
  return meta_out_tensor(m, 0, trapz_dtype(y, x), shape, rank);
}

/* --- scans, softmax, sort ------------------------------------------------------*/

/* The dim argument 1 of an op that keeps its input's shape. */
static alloy_error *dim1_check(alloy_meta *m, const alloy_value *x) {
  int64_t dim;
  int w;
  alloy_error *e = meta_int(m, 1, &dim);
  return e ? e : meta_wrap_dim(m, 1, dim, x->rank, &w);
}

enum { SCAN_SUM, SCAN_FLOAT, SCAN_WITH_INDICES };

/* cumsum/cumprod(self, dim, *, dtype), logcumsumexp(self, dim),
 * cummax/cummin(self, dim) -> (values, indices). logcumsumexp keeps self's
 * dtype, so it takes floating-point selfs only (its CPU kernel dispatches on
 * floating and complex types, even for an empty self). */
static alloy_error *meta_scan(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  alloy_error *e = dim1_check(m, x);
  if (e) return e;
  alloy_dtype t = x->dtype;
  if (m->param == SCAN_SUM && (e = rule_dtype(m, OUT_SUM, x->dtype, 2, &t))) return e;
  if (m->param == SCAN_FLOAT && !is_float_or_complex(t))
    return meta_error(m, "\"logcumsumexp_out_cpu\" not implemented for '%s': argument "
                         "'self' must be a floating-point tensor",
                      alloy_dtype_name(t));
  if ((e = meta_out_like(m, 0, x, t))) return e;
  return m->param == SCAN_WITH_INDICES ? meta_out_like(m, 1, x, ALLOY_I64) : NULL;
}

enum { SOFTMAX_HALF_TO_FLOAT, SOFTMAX_DTYPE };

/* _softmax/_log_softmax(self, dim, half_to_float) and
 * _safe_softmax/log_softmax.int(self, dim, dtype). */
static alloy_error *meta_softmax(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  alloy_error *e = dim1_check(m, x);
  if (e) return e;
  alloy_dtype t = x->dtype;
  if (m->param == SOFTMAX_HALF_TO_FLOAT && meta_bool(m, 2)) {
    if (t != ALLOY_F16 && t != ALLOY_BF16)
      return meta_error(m, "argument 'half_to_float': conversion is supported "
                           "for half and bfloat16 inputs only, got %s",
                        alloy_dtype_name(t));
    t = ALLOY_F32;
  }
  if (m->param == SOFTMAX_DTYPE) dtype_arg(m, 2, &t);
  if (!is_float_or_complex(t))
    return meta_error(m, "softmax is computed in floating point: got %s (pass "
                         "dtype= to convert)",
                      alloy_dtype_name(t));
  return meta_out_like(m, 0, x, t);
}

/* sort(self, dim, descending) and sort.stable(self, *, stable, dim,
 * descending): the dim's position is the family parameter. */
static alloy_error *meta_sort(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  int64_t dim;
  int w;
  alloy_error *e = meta_int(m, m->param, &dim);
  if (!e) e = meta_wrap_dim(m, m->param, dim, x->rank, &w);
  if (!e) e = meta_out_like(m, 0, x, x->dtype);
  return e ? e : meta_out_like(m, 1, x, ALLOY_I64);
}

/* topk(self, k, dim=-1, largest, sorted): dim shrinks to k. */
static alloy_error *meta_topk(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  int64_t dim;
  int w;
  alloy_error *e = meta_int(m, 2, &dim);
  if (!e) e = meta_wrap_dim(m, 2, dim, x->rank, &w);
  if (e) return e;
  alloy_dim k = meta_dim(m, 1);
  alloy_dim size = x->rank ? x->shape[w] : alloy_dim_const(1);
  if (alloy_dim_lt(m->st, k, alloy_dim_const(0)) == ALLOY_TRUE ||
      alloy_dim_lt(m->st, size, k) == ALLOY_TRUE) {
    char kb[64], sb[64];
    alloy_dim_print(k, kb, sizeof kb);
    alloy_dim_print(size, sb, sizeof sb);
    return meta_error(m, "argument 'k': selected index k out of range (k = %s, "
                         "size of dim %d is %s)",
                      kb, w, sb);
  }
  alloy_dim shape[ALLOY_MAX_RANK];
  copy_dims(shape, x->shape, x->rank);
  if (x->rank) shape[w] = k;
  if ((e = meta_out_tensor(m, 0, x->dtype, shape, x->rank))) return e;
  return meta_out_tensor(m, 1, ALLOY_I64, shape, x->rank);
}

/* --- histograms, bincount, unique, segment_reduce ---------------------------*/

static alloy_error *need_float(alloy_meta *m, int i, const alloy_value *x) {
  if (alloy_dtype_is_float(x->dtype)) return NULL;
  return meta_error(m, "argument '%s' must be a floating point tensor, got %s",
                    meta_arg_name(m, i), alloy_dtype_name(x->dtype));
}

/* histc(self, bins=100, min=0, max=0) -> [bins]. */
static alloy_error *meta_histc(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  int64_t bins;
  alloy_error *e = need_float(m, 0, x);
  if (!e) e = meta_int(m, 1, &bins);
  if (e) return e;
  if (bins <= 0)
    return meta_error(m, "argument 'bins' must be > 0, got %lld", (long long)bins);
  if (meta_float(m, 3) < meta_float(m, 2))
    return meta_error(m, "argument 'max' must be larger than or equal to 'min'");
  alloy_dim shape[1] = {alloy_dim_const(bins)};
  return meta_out_tensor(m, 0, x->dtype, shape, 1);
}

/* histogram.bin_ct(self, bins, *, range, weight, density) -> (hist [bins],
 * edges [bins+1]); histogram.bins_tensor(self, bins, ...) -> (hist
 * [len(bins)-1], edges [len(bins)]). */
static alloy_error *meta_histogram(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  alloy_error *e = need_float(m, 0, x);
  if (e) return e;
  alloy_dim nbins;
  if (m->param) {
    const alloy_value *b = meta_tensor(m, 1);
    if (b->rank != 1)
      return meta_error(m, "argument 'bins' must be 1-dimensional, got %d dims", b->rank);
    if (b->dtype != x->dtype)
      return meta_error(m, "argument 'bins': dtype %s does not match self's %s",
                        alloy_dtype_name(b->dtype), alloy_dtype_name(x->dtype));
    nbins = alloy_dim_sub(m->st, b->shape[0], alloy_dim_const(1));
  } else {
    int64_t bins;
    if ((e = meta_int(m, 1, &bins))) return e;
    if (bins <= 0)
      return meta_error(m, "argument 'bins' must be > 0, got %lld", (long long)bins);
    nbins = alloy_dim_const(bins);
  }
  alloy_dim h[1] = {nbins}, edges[1] = {alloy_dim_add(m->st, nbins, alloy_dim_const(1))};
  if ((e = meta_out_tensor(m, 0, x->dtype, h, 1))) return e;
  return meta_out_tensor(m, 1, x->dtype, edges, 1);
}

enum { HDD_BIN_EDGES, HDD_FROM_BIN_CTS, HDD_FROM_BIN_TENSORS };

/* _histogramdd_*(self [..., N], bins, ...): N-dimensional histograms over
 * the last dim's N coordinates. bin_edges returns N edge tensors. */
static alloy_error *meta_histogramdd(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  alloy_error *e = need_float(m, 0, x);
  if (e) return e;
  if (x->rank < 1)
    return meta_error(m, "argument 'self' must have at least 1 dim");
  alloy_dim last = x->shape[x->rank - 1];
  if (!alloy_dim_is_const(last))
    return meta_error(m, "argument 'self': the size of the last dim (the number "
                         "of coordinates) must be concrete");
  int64_t n = last.value;
  if (n > ALLOY_MAX_RANK)
    return meta_error(m, "argument 'self': %lld coordinates, at most %d supported",
                      (long long)n, ALLOY_MAX_RANK);
  alloy_dim sizes[ALLOY_MAX_RANK];
  int nb;
  if (m->param == HDD_FROM_BIN_TENSORS) {
    nb = meta_tensor_count(m, 1);
    if (nb != n)
      return meta_error(m, "argument 'bins': expected %lld bin tensors, got %d",
                        (long long)n, nb);
    for (int i = 0; i < nb; i++) {
      const alloy_value *b = meta_tensor_at(m, 1, i);
      if (!b || b->rank != 1)
        return meta_error(m, "argument 'bins': item %d must be a 1-dimensional tensor", i);
      sizes[i] = alloy_dim_sub(m->st, b->shape[0], alloy_dim_const(1));
    }
  } else {
    int64_t bins[ALLOY_MAX_RANK];
    if ((e = meta_ints(m, 1, bins, ALLOY_MAX_RANK, &nb))) return e;
    if (nb != n)
      return meta_error(m, "argument 'bins': expected %lld bin counts, got %d",
                        (long long)n, nb);
    for (int i = 0; i < nb; i++) {
      if (bins[i] <= 0)
        return meta_error(m, "argument 'bins': item %d must be > 0, got %lld", i,
                          (long long)bins[i]);
      sizes[i] = alloy_dim_const(bins[i]);
    }
  }
  const alloy_value *w = meta_tensor(m, m->param == HDD_FROM_BIN_TENSORS ? 2 : 3);
  if (w) {
    alloy_dim outer = meta_numel(m, x->shape, x->rank - 1);
    if (alloy_dim_eq(m->st, meta_numel(m, w->shape, w->rank), outer) == ALLOY_FALSE)
      return meta_error(m, "argument 'weight' must have one element per point of "
                           "'self'");
  }
  if (m->param != HDD_BIN_EDGES) return meta_out_tensor(m, 0, x->dtype, sizes, nb);
  if ((e = meta_set_num_outputs(m, nb))) return e;
  for (int i = 0; i < nb && !e; i++) {
    alloy_dim edges[1] = {alloy_dim_add(m->st, sizes[i], alloy_dim_const(1))};
    e = meta_out_tensor(m, i, x->dtype, edges, 1);
  }
  return e;
}

/* bincount(self, weights, minlength): a length that depends on the data
 * (max(self) + 1, at least minlength). Counts are int64; weighted sums are
 * float32 for float32 weights and float64 otherwise. */
static alloy_error *meta_bincount(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0), *w = meta_tensor(m, 1);
  if (x->rank != 1 || !alloy_dtype_is_integer(x->dtype))
    return meta_error(m, "argument 'self': bincount only supports 1-d "
                         "non-negative integral inputs, got %s with %d dims",
                      alloy_dtype_name(x->dtype), x->rank);
  if (w && (w->rank != 1 || alloy_dim_eq(m->st, w->shape[0], x->shape[0]) == ALLOY_FALSE))
    return meta_error(m, "argument 'weights' should be 1-d and have the same "
                         "length as input");
  if (alloy_dim_lt(m->st, meta_dim(m, 2), alloy_dim_const(0)) == ALLOY_TRUE)
    return meta_error(m, "argument 'minlength' should be >= 0");
  alloy_dtype t = !w ? ALLOY_I64 : w->dtype == ALLOY_F32 ? ALLOY_F32 : ALLOY_F64;
  alloy_dim shape[1] = {meta_unbacked(m)};
  return meta_out_tensor(m, 0, t, shape, 1);
}

/* Where the unique ops keep their arguments (-1: absent, then inverse and
 * counts are always returned; dim -1: the flattened tensor). */
typedef struct unique_desc {
  int inverse_i, counts_i, dim_i;
  bool dim_required;
} unique_desc;

enum { UNIQUE2, UNIQUE_CONSECUTIVE, UNIQUE_PLAIN, UNIQUE_DIM, UNIQUE_DIM_CONSECUTIVE };

static const unique_desc unique_descs[] = {
    [UNIQUE2] = {2, 3, -1, false},            /* _unique2(self, sorted, inverse, counts)        */
    [UNIQUE_CONSECUTIVE] = {1, 2, 3, false},  /* unique_consecutive(self, inverse, counts, dim) */
    [UNIQUE_PLAIN] = {2, -2, -1, false},      /* _unique(self, sorted, inverse): no counts     */
    [UNIQUE_DIM] = {-1, -1, 1, true},         /* unique_dim(self, dim, sorted, inverse, counts) */
    [UNIQUE_DIM_CONSECUTIVE] = {-1, -1, 1, true}, /* unique_dim_consecutive(self, dim, ...)    */
};

/* The unique ops: (values, inverse, counts). The number of distinct values
 * u is data dependent; inverse and counts are empty unless asked for
 * (unique_dim and unique_dim_consecutive always give them). Along a dim,
 * values keep the other dims (and every other dim must be nonempty). */
static alloy_error *meta_unique(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  const unique_desc *u_d = &unique_descs[m->param];
  bool inverse = u_d->inverse_i < 0 || meta_bool(m, u_d->inverse_i);
  bool counts = u_d->counts_i == -1 || (u_d->counts_i >= 0 && meta_bool(m, u_d->counts_i));
  alloy_dim u = meta_unbacked(m), zero[1] = {alloy_dim_const(0)};
  alloy_dim values[ALLOY_MAX_RANK], inv[ALLOY_MAX_RANK], cnt[1] = {u};
  int vrank = 1, irank = x->rank;
  values[0] = u;
  copy_dims(inv, x->shape, x->rank);
  alloy_error *e;
  if (u_d->dim_i >= 0 && (u_d->dim_required || !meta_is_none(m, u_d->dim_i))) {
    int64_t dim;
    int w;
    if ((e = meta_int(m, u_d->dim_i, &dim)) || (e = meta_wrap_dim(m, u_d->dim_i, dim, x->rank, &w))) return e;
    if (x->rank == 0)
      return meta_error(m, "argument 'dim': unique over a dim needs a tensor "
                           "with at least 1 dim");
    bool empty_dim = alloy_dim_is_const(x->shape[w]) && x->shape[w].value == 0;
    for (int d = 0; u_d->dim_required && d < x->rank; d++)
      if (d != w && alloy_dim_is_const(x->shape[d]) && x->shape[d].value == 0)
        return empty_dim ? meta_error(m, "Number of zero sized dimensions is more than one, so unique "
                                         "cannot be applied")
                         : meta_error(m, "There are 0 sized dimensions, and they aren't selected, so "
                                         "unique cannot be applied");
    copy_dims(values, x->shape, x->rank);
    values[w] = u;
    vrank = x->rank;
    inv[0] = x->shape[w];
    irank = 1;
  }
  if ((e = meta_out_tensor(m, 0, x->dtype, values, vrank))) return e;
  e = inverse ? meta_out_tensor(m, 1, ALLOY_I64, inv, irank)
              : meta_out_tensor(m, 1, ALLOY_I64, zero, 1);
  if (e || m->nout < 3) return e;
  return meta_out_tensor(m, 2, ALLOY_I64, counts ? cnt : zero, 1);
}

/* segment_reduce(data, reduce, *, lengths, indices, offsets, axis, ...):
 * lengths.shape + data.shape[axis+1:]; offsets stand for lengths with one
 * more item in their last dim. */
static alloy_error *meta_segment_reduce(alloy_meta *m) {
  static const char *const reduces[] = {"max", "mean", "min", "sum", "prod"};
  const alloy_value *data = meta_tensor(m, 0);
  const char *reduce = meta_str(m, 1);
  bool known = false;
  for (size_t i = 0; i < sizeof reduces / sizeof reduces[0]; i++)
    known |= reduce && !strcmp(reduce, reduces[i]);
  if (!known)
    return meta_error(m, "argument 'reduce': expected one of max, mean, min, "
                         "sum, prod, got '%s'",
                      reduce ? reduce : "None");
  if (!meta_is_none(m, 3))
    return meta_error(m, "argument 'indices': indices based reduction is not "
                         "supported yet");
  int64_t axis;
  int w;
  alloy_error *e = meta_int(m, 5, &axis);
  if (!e) e = meta_wrap_dim(m, 5, axis, data->rank, &w);
  if (e) return e;
  const alloy_value *lengths = meta_tensor(m, 2), *offsets = meta_tensor(m, 4);
  const alloy_value *seg = lengths ? lengths : offsets;
  if (!seg)
    return meta_error(m, "either 'lengths' or 'offsets' must be given");
  if (seg->rank < 1)
    return meta_error(m, "argument '%s' must have at least 1 dim",
                      lengths ? "lengths" : "offsets");
  alloy_dim shape[2 * ALLOY_MAX_RANK];
  int r = 0;
  for (int d = 0; d < seg->rank; d++) shape[r++] = seg->shape[d];
  if (!lengths) shape[r - 1] = alloy_dim_sub(m->st, shape[r - 1], alloy_dim_const(1));
  for (int d = w + 1; d < data->rank; d++) shape[r++] = data->shape[d];
  return meta_out_tensor(m, 0, data->dtype, shape, r);
}

const alloy_meta_entry alloy_meta_reduce[] = {
    {"aten.sum.default", meta_reduce, R_SUM},
    {"aten.sum.dim_IntList", meta_reduce, R_SUM_DIM},
    {"aten.nansum.default", meta_reduce, R_SUM_DIM},
    {"aten.prod.default", meta_reduce, R_SUM},
    {"aten.prod.dim_int", meta_reduce, R_PROD_DIM},
    {"aten.mean.default", meta_reduce, R_MEAN},
    {"aten.mean.dim", meta_reduce, R_MEAN_DIM},
    {"aten.amax.default", meta_reduce, R_AMAX},
    {"aten.amin.default", meta_reduce, R_AMAX},
    {"aten.any.default", meta_reduce, R_ANY},
    {"aten.all.default", meta_reduce, R_ANY},
    {"aten.any.dim", meta_reduce, R_ANY_DIM},
    {"aten.all.dim", meta_reduce, R_ANY_DIM},
    {"aten.any.dims", meta_reduce, R_ANY_DIMS},
    {"aten.all.dims", meta_reduce, R_ANY_DIMS},
    {"aten.argmax.default", meta_reduce, R_ARGMAX},
    {"aten.argmin.default", meta_reduce, R_ARGMAX},
    {"aten.var.dim", meta_reduce, R_VAR_DIM},
    {"aten.var.correction", meta_reduce, R_VAR_CORR},
    {"aten.std.correction", meta_reduce, R_VAR_CORR},
    {"aten.var_mean.correction", meta_reduce, R_VAR_MEAN},
    {"aten.std_mean.correction", meta_reduce, R_VAR_MEAN},
    {"aten.logsumexp.default", meta_reduce, R_LOGSUMEXP},
    {"aten.norm.ScalarOpt_dim", meta_reduce, R_NORM},
    {"aten.count_nonzero.default", meta_reduce, R_COUNT_NZ},
    {"aten.count_nonzero.dim_IntList", meta_reduce, R_COUNT_NZ_DIMS},
    {"aten.max.default", meta_reduce, R_MAX},
    {"aten.min.default", meta_reduce, R_MAX},
    {"aten.median.default", meta_reduce, R_MAX},
    {"aten.nanmedian.default", meta_reduce, R_MAX},
    {"aten.max.dim", meta_reduce, R_MAX_DIM},
    {"aten.min.dim", meta_reduce, R_MAX_DIM},
    {"aten.median.dim", meta_reduce, R_MEDIAN_DIM},
    {"aten.nanmedian.dim", meta_reduce, R_MEDIAN_DIM},
    {"aten.mode.default", meta_reduce, R_MODE},
    {"aten.aminmax.default", meta_reduce, R_AMINMAX},
    {"aten.var.default", meta_reduce, R_VAR_ALL},
    {"aten.std.default", meta_reduce, R_VAR_ALL},
    {"aten.std.dim", meta_reduce, R_VAR_DIM},
    {"aten.var_mean.default", meta_reduce, R_VAR_MEAN_ALL},
    {"aten.std_mean.default", meta_reduce, R_VAR_MEAN_ALL},
    {"aten.var_mean.dim", meta_reduce, R_VAR_MEAN},
    {"aten.std_mean.dim", meta_reduce, R_VAR_MEAN},
    {"aten.norm.ScalarOpt_dtype", meta_norm_as_vector, NORM_DTYPE},
    {"aten.norm.ScalarOpt_dim_dtype", meta_norm_as_vector, NORM_DIM_DTYPE},
    {"aten.frobenius_norm.dim", meta_norm_as_vector, NORM_FROBENIUS},
    {"aten.nanmean.default", meta_nanmean, 0},
    {"aten.sum_to_size.default", meta_sum_to_size, 0},
    {"aten._is_all_true.default", meta_is_all_true, 0},
    {"aten._is_any_true.default", meta_is_all_true, 0},
    {"aten.trapezoid.x", meta_trapezoid, TRAPZ_X},
    {"aten.trapezoid.dx", meta_trapezoid, 0},
    {"aten.trapz.x", meta_trapezoid, TRAPZ_X},
    {"aten.trapz.dx", meta_trapezoid, 0},
    {"aten.cumulative_trapezoid.x", meta_trapezoid, TRAPZ_X | TRAPZ_CUMULATIVE},
    {"aten.cumulative_trapezoid.dx", meta_trapezoid, TRAPZ_CUMULATIVE},
    {"aten.kthvalue.default", meta_kthvalue, 0},
    {"aten.trace.default", meta_trace, 0},
    {"aten.dist.default", meta_dist, 0},
    {"aten.equal.default", meta_bool_compare, 0},
    {"aten.allclose.default", meta_bool_compare, 1},
    {"aten.cumsum.default", meta_scan, SCAN_SUM},
    {"aten.cumprod.default", meta_scan, SCAN_SUM},
    {"aten.logcumsumexp.default", meta_scan, SCAN_FLOAT},
    {"aten.cummax.default", meta_scan, SCAN_WITH_INDICES},
    {"aten.cummin.default", meta_scan, SCAN_WITH_INDICES},
    {"aten._softmax.default", meta_softmax, SOFTMAX_HALF_TO_FLOAT},
    {"aten._log_softmax.default", meta_softmax, SOFTMAX_HALF_TO_FLOAT},
    {"aten._safe_softmax.default", meta_softmax, SOFTMAX_DTYPE},
    {"aten.log_softmax.int", meta_softmax, SOFTMAX_DTYPE},
    {"aten.sort.default", meta_sort, 1},
    {"aten.sort.stable", meta_sort, 2},
    {"aten.topk.default", meta_topk, 0},
    {"aten.histc.default", meta_histc, 0},
    {"aten.histogram.bin_ct", meta_histogram, 0},
    {"aten.histogram.bins_tensor", meta_histogram, 1},
    {"aten._histogramdd_bin_edges.default", meta_histogramdd, HDD_BIN_EDGES},
    {"aten._histogramdd_from_bin_cts.default", meta_histogramdd, HDD_FROM_BIN_CTS},
    {"aten._histogramdd_from_bin_tensors.default", meta_histogramdd, HDD_FROM_BIN_TENSORS},
    {"aten.bincount.default", meta_bincount, 0},
    {"aten._unique2.default", meta_unique, UNIQUE2},
    {"aten.unique_consecutive.default", meta_unique, UNIQUE_CONSECUTIVE},
    {"aten._unique.default", meta_unique, UNIQUE_PLAIN},
    {"aten.unique_dim.default", meta_unique, UNIQUE_DIM},
    {"aten.unique_dim_consecutive.default", meta_unique, UNIQUE_DIM_CONSECUTIVE},
    {"aten.segment_reduce.default", meta_segment_reduce, 0},
    {NULL, NULL, 0},
};
