/*
 * ir/meta_prims.c: shape functions of the PrimTorch prims (prims.*), after
 * the meta functions of torch/_prims/__init__.py.
 *
 * Prims are the floor of decomposition, so they are strict where ATen ops
 * are forgiving: elementwise prims neither promote nor broadcast (every
 * tensor operand has one dtype and one shape; only zero-dim CPU tensors,
 * PyTorch's "CPU scalars", may stand beside shaped ones, and a Python
 * number given for a Tensor takes no part in either check), and dimension
 * arguments are canonical (0 <= dim < rank, no negative wrapping) except
 * where torch/_prims canonicalizes them itself (the FFT prims). Every check
 * that depends on sizes must hold for every value of the symbols: a
 * condition the ranges cannot prove (s0 against s1) is an error, because
 * Alloy, unlike PyTorch's tracer, does not record guards.
 */
#include <stdio.h>
#include <string.h>

#include "ir/meta.h"

/* --- helpers ----------------------------------------------------------- */

static const char *dim_str(alloy_dim d, char *buf, size_t cap) {
  alloy_dim_print(d, buf, cap);
  return buf;
}

static const char *ints_str(const int64_t *v, int n, char *buf, size_t cap) {
  size_t len = (size_t)snprintf(buf, cap, "[");
  for (int k = 0; k < n && len < cap; k++)
    len += (size_t)snprintf(buf + len, cap - len, k ? ", %lld" : "%lld",
                            (long long)v[k]);
  if (len < cap) snprintf(buf + len, cap - len, "]");
  return buf;
}

/* Equal for every binding of the symbols. */
static bool dim_is(alloy_meta *m, alloy_dim a, alloy_dim b) {
  return alloy_dim_same(a, b) || alloy_dim_eq(m->st, a, b) == ALLOY_TRUE;
}

static bool dim_is_const(alloy_dim d, int64_t v) {
  return alloy_dim_is_const(d) && d.value == v;
}

static int arg_index(const alloy_meta *m, const char *name) {
  return alloy_schema_find_arg(m->op->schema, name);
}

static bool complex_to_real(alloy_dtype t, alloy_dtype *out) {
  if (t == ALLOY_C64) *out = ALLOY_F32;
  else if (t == ALLOY_C128) *out = ALLOY_F64;
  else return false;
  return true;
}

static bool real_to_complex(alloy_dtype t, alloy_dtype *out) {
  if (t == ALLOY_F32) *out = ALLOY_C64;
  else if (t == ALLOY_F64) *out = ALLOY_C128;
  else return false;
  return true;
}

/* utils.validate_idx: prims take canonical dims; a zero-dim tensor accepts
 * dim 0 where the prim allows it (allow_scalar). */
static alloy_error *prim_idx(alloy_meta *m, int arg, int64_t idx, int rank,
                             bool allow_scalar) {
  if (idx >= 0 && (idx < rank || (allow_scalar && idx == 0 && rank == 0)))
    return NULL;
  return meta_error(m,
                    "argument '%s': dimension %lld is out of range for a "
                    "tensor of rank %d (prims take dims in [0, %d), not "
                    "negative ones)",
                    meta_arg_name(m, arg), (long long)idx, rank,
                    rank > 0 ? rank : allow_scalar ? 1 : 0);
}

/* utils.validate_shape: no size may be negative. */
static alloy_error *prim_shape_ok(alloy_meta *m, int arg, const alloy_dim *s,
                                  int n) {
  for (int k = 0; k < n; k++)
    if (alloy_dim_lt(m->st, s[k], alloy_dim_const(0)) == ALLOY_TRUE) {
      char b[64];
      return meta_error(m, "argument '%s': size %s at index %d is negative",
                        meta_arg_name(m, arg), dim_str(s[k], b, sizeof b), k);
    }
  return NULL;
}

/* Reads a shape argument (SymInt[]) and validates it. */
static alloy_error *prim_shape_arg(alloy_meta *m, int arg, alloy_dim *s,
                                   int *n) {
  alloy_error *e = meta_dims(m, arg, s, ALLOY_MAX_RANK, n);
  return e ? e : prim_shape_ok(m, arg, s, *n);
}

/* utils.validate_dimension_indices: canonical and without repeats. */
static alloy_error *prim_dim_list(alloy_meta *m, int arg, int rank,
                                  bool allow_scalar, bool *marked) {
  int64_t dims[ALLOY_MAX_RANK];
  int n;
  alloy_error *e = meta_ints(m, arg, dims, ALLOY_MAX_RANK, &n);
  if (e) return e;
  memset(marked, 0, sizeof *marked * ALLOY_MAX_RANK);
  for (int k = 0; k < n; k++) {
    if ((e = prim_idx(m, arg, dims[k], rank, allow_scalar))) return e;
    if (marked[dims[k]])
      return meta_error(m, "argument '%s' repeats dimension %lld",
                        meta_arg_name(m, arg), (long long)dims[k]);
    marked[dims[k]] = true;
  }
  return NULL;
}

static bool is_cpu_scalar(const alloy_value *v) {
  return v->rank == 0 && v->device.type == ALLOY_DEVICE_CPU;
}

/* A tensor argument proper: NULL for a Python number given for a Tensor,
 * which torch/_prims leaves out of its dtype and shape checks. */
static const alloy_value *prim_tensor(const alloy_meta *m, int i) {
  return m->args[i].kind == ALLOY_ARG_VALUE ? meta_tensor(m, i) : NULL;
}

/* utils.check_same_dtype over the tensor arguments idx[0..n): *out is their
 * dtype; numbers alone give type_to_dtype of the first (a float is the
 * default dtype). */
static alloy_error *prim_same_dtype(alloy_meta *m, const int *idx, int n,
                                    alloy_dtype *out) {
  const alloy_value *first = NULL;
  int first_arg = -1;
  for (int k = 0; k < n; k++) {
    const alloy_value *v = prim_tensor(m, idx[k]);
    if (!v) continue;
    if (!first) {
      first = v, first_arg = idx[k];
    } else if (v->dtype != first->dtype) {
      return meta_error(m,
                        "argument '%s' has dtype torch.%s but argument '%s' "
                        "has torch.%s: prims do not promote (convert with "
                        "prims.convert_element_type first)",
                        meta_arg_name(m, idx[k]), alloy_dtype_name(v->dtype),
                        meta_arg_name(m, first_arg),
                        alloy_dtype_name(first->dtype));
    }
  }
  if (first) {
    *out = first->dtype;
  } else {
    *out = meta_promo_operand(m, idx[0]).dtype;
    if (*out == ALLOY_F64) *out = ALLOY_F32;
  }
  return NULL;
}

/* utils.check_same_shape(allow_cpu_scalar_tensors=True): *out is the tensor
 * whose shape the result has (the first that is not a CPU scalar), NULL
 * when only numbers were given (the result is zero-dim). */
static alloy_error *prim_same_shape(alloy_meta *m, const int *idx, int n,
                                    const alloy_value **out) {
  const alloy_value *shaped = NULL, *scalar = NULL;
  int shaped_arg = -1;
  for (int k = 0; k < n; k++) {
    const alloy_value *v = prim_tensor(m, idx[k]);
    if (!v) continue;
    if (is_cpu_scalar(v)) {
      if (!scalar) scalar = v;
      continue;
    }
    if (!shaped) {
      shaped = v, shaped_arg = idx[k];
      continue;
    }
    bool same = v->rank == shaped->rank;
    for (int d = 0; same && d < v->rank; d++)
      same = dim_is(m, v->shape[d], shaped->shape[d]);
    if (!same) {
      char a[256], b[256];
      return meta_error(m,
                        "argument '%s' has shape %s but argument '%s' has "
                        "shape %s: prims do not broadcast (use "
                        "prims.broadcast_in_dim first)",
                        meta_arg_name(m, idx[k]),
                        meta_shape_text(v->shape, v->rank, a, sizeof a),
                        meta_arg_name(m, shaped_arg),
                        meta_shape_text(shaped->shape, shaped->rank, b, sizeof b));
    }
  }
  *out = shaped ? shaped : scalar;
  return NULL;
}

static alloy_error *out_shaped_like(alloy_meta *m, int k, alloy_dtype t,
                                    const alloy_value *like) {
  return like ? meta_out_tensor(m, k, t, like->shape, like->rank)
              : meta_out_tensor(m, k, t, NULL, 0);
}

/* --- elementwise ------------------------------------------------------- */

/* m->param of the elementwise prims: the output dtype rule
 * (ELEMENTWISE_PRIM_TYPE_PROMOTION_KIND) and what the inputs may be. */
enum {
  EW_SAME = 0,            /* DEFAULT: the inputs' dtype                  */
  EW_BOOL = 1,            /* ALWAYS_BOOL: comparisons and predicates      */
  EW_TO_REAL = 2,         /* COMPLEX_TO_FLOAT: complex gives its real part */
  EW_RULE = 3,
  EW_BITWISE = 1 << 2,    /* integer or bool tensors only                 */
  EW_INTEGER = 1 << 3,    /* integer tensors only                         */
  EW_COMPLEX = 1 << 4,    /* complex tensors only                         */
};

/* Every Tensor argument takes part (fill's Scalar value does not). */
static alloy_error *meta_prim_elementwise(alloy_meta *m) {
  int idx[8], n = 0;
  for (int i = 0; i < m->nargs && n < 8; i++) {
    const alloy_type *t = &m->op->schema->args[i].type;
    if (t->kind == ALLOY_TYPE_TENSOR && !t->list && !meta_is_none(m, i))
      idx[n++] = i;
  }
  if (!n) return meta_error(m, "expects a tensor argument");
  alloy_dtype t;
  const alloy_value *like;
  alloy_error *e = prim_same_dtype(m, idx, n, &t);
  if (!e) e = prim_same_shape(m, idx, n, &like);
  if (e) return e;
  if ((m->param & EW_BITWISE) && !alloy_dtype_is_integer(t) && t != ALLOY_BOOL)
    return meta_error(m, "expects integer or bool tensors, got torch.%s",
                      alloy_dtype_name(t));
  if ((m->param & EW_INTEGER) && !alloy_dtype_is_integer(t))
    return meta_error(m, "expects integer tensors, got torch.%s",
                      alloy_dtype_name(t));
  if ((m->param & EW_COMPLEX) && !alloy_dtype_is_complex(t))
    return meta_error(m, "is only defined for complex dtypes, got torch.%s",
                      alloy_dtype_name(t));
  alloy_dtype out = t;
  if ((m->param & EW_RULE) == EW_BOOL) out = ALLOY_BOOL;
  if ((m->param & EW_RULE) == EW_TO_REAL) complex_to_real(t, &out);
  return out_shaped_like(m, 0, out, like);
}

static alloy_error *meta_prim_frexp(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  if (!alloy_dtype_is_float(a->dtype))
    return meta_error(m, "torch.frexp() only supports floating-point dtypes, "
                         "got torch.%s", alloy_dtype_name(a->dtype));
  alloy_error *e = meta_out_like(m, 0, a, a->dtype);
  return e ? e : meta_out_like(m, 1, a, ALLOY_I32);
}

/* where(pred, a, b): a and b share a dtype; all three share a shape. */
static alloy_error *meta_prim_where(alloy_meta *m) {
  const alloy_value *pred = prim_tensor(m, 0);
  if (pred && pred->dtype != ALLOY_BOOL)
    return meta_error(m, "argument 'pred' must be a bool tensor, got torch.%s",
                      alloy_dtype_name(pred->dtype));
  static const int ab[] = {1, 2}, all[] = {0, 1, 2};
  alloy_dtype t;
  const alloy_value *like;
  alloy_error *e = prim_same_dtype(m, ab, 2, &t);
  if (!e) e = prim_same_shape(m, all, 3, &like);
  return e ? e : out_shaped_like(m, 0, t, like);
}

/* --- views ------------------------------------------------------------- */

/* Output 0 is input 0 unchanged: view_of, clone, device_put. */
static alloy_error *meta_prim_same(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  return meta_out_like(m, 0, a, a->dtype);
}

static alloy_error *meta_prim_conj(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  if (!alloy_dtype_is_complex(a->dtype))
    return meta_error(m, "Expected complex dtype in prims.conj, got torch.%s",
                      alloy_dtype_name(a->dtype));
  return meta_out_like(m, 0, a, a->dtype);
}

static alloy_error *meta_prim_broadcast_in_dim(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  alloy_dim shape[ALLOY_MAX_RANK];
  int64_t bdims[ALLOY_MAX_RANK];
  int rank, nb;
  alloy_error *e = prim_shape_arg(m, 1, shape, &rank);
  if (!e) e = meta_ints(m, 2, bdims, ALLOY_MAX_RANK, &nb);
  if (e) return e;
  if (nb != a->rank)
    return meta_error(m,
                      "argument 'broadcast_dimensions' has %d entries, but "
                      "the tensor has rank %d (one entry per input dimension)",
                      nb, a->rank);
  if (rank < a->rank)
    return meta_error(m, "argument 'shape' has rank %d, less than the "
                         "tensor's rank %d", rank, a->rank);
  for (int k = 0; k < nb; k++)
    if (bdims[k] >= rank || bdims[k] <= (k ? bdims[k - 1] : -1)) {
      char b[256];
      return meta_error(m,
                        "argument 'broadcast_dimensions' must be strictly "
                        "increasing and within [0, %d), got %s",
                        rank, ints_str(bdims, nb, b, sizeof b));
    }
  for (int k = 0; k < nb; k++) {
    alloy_dim have = a->shape[k], want = shape[bdims[k]];
    if (!dim_is(m, have, alloy_dim_const(1)) && !dim_is(m, have, want)) {
      char x[64], y[64];
      return meta_error(m,
                        "%s must be broadcastable to %s (input dimension %d "
                        "to dimension %lld of 'shape')",
                        dim_str(have, x, sizeof x), dim_str(want, y, sizeof y),
                        k, (long long)bdims[k]);
    }
  }
  return meta_out_tensor(m, 0, a->dtype, shape, rank);
}

/* collapse (param 0) and collapse_view (param 1): dims start..end, both
 * inclusive, become one; a zero-dim tensor is treated as shape [1]. */
static alloy_error *meta_prim_collapse(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  int64_t start, end;
  alloy_error *e = meta_int(m, 1, &start);
  if (!e) e = meta_int(m, 2, &end);
  if (e) return e;
  int nd = a->rank > 0 ? a->rank : 1;
  if ((e = prim_idx(m, 1, start, nd, false))) return e;
  if ((e = prim_idx(m, 2, end, nd, false))) return e;
  if (end < start)
    return meta_error(m,
                      "Attempting to collapse but end, %lld, is less than "
                      "start, %lld!", (long long)end, (long long)start);
  alloy_dim in[ALLOY_MAX_RANK] = {alloy_dim_const(1)};
  if (a->rank) memcpy(in, a->shape, sizeof *in * (size_t)a->rank);
  /* A view exists only when the collapsed dims nest: known strides are
   * checked (an empty tensor always has one); unknown ones are contiguous. */
  if (m->param && a->strides && a->rank) {
    alloy_dim numel = meta_numel(m, a->shape, a->rank);
    bool empty = dim_is(m, numel, alloy_dim_const(0));
    for (int64_t i = start; i < end && !empty; i++) {
      const alloy_dim *s = a->strides;
      alloy_dim nest = alloy_dim_mul(m->st, s[i + 1], in[i + 1]);
      if (alloy_dim_eq(m->st, in[i], alloy_dim_const(1)) == ALLOY_FALSE &&
          alloy_dim_eq(m->st, in[i + 1], alloy_dim_const(1)) == ALLOY_FALSE &&
          alloy_dim_eq(m->st, s[i], nest) == ALLOY_FALSE)
        return meta_error(m, "Attempting to view a collapsed tensor, but no "
                             "such view exists!");
    }
  }
  alloy_dim out[ALLOY_MAX_RANK];
  int r = 0;
  for (int64_t i = 0; i < start; i++) out[r++] = in[i];
  out[r] = alloy_dim_const(1);
  for (int64_t i = start; i <= end; i++)
    out[r] = alloy_dim_mul(m->st, out[r], in[i]);
  r++;
  for (int64_t i = end + 1; i < nd; i++) out[r++] = in[i];
  return meta_out_tensor(m, 0, a->dtype, out, r);
}

static alloy_error *meta_prim_split_dim(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  int64_t dim;
  alloy_error *e = meta_int(m, 1, &dim);
  if (e || (e = prim_idx(m, 1, dim, a->rank, false))) return e;
  alloy_dim outer = meta_dim(m, 2), len = a->shape[dim];
  char x[64], y[64];
  if (alloy_dim_le(m->st, outer, alloy_dim_const(0)) == ALLOY_TRUE)
    return meta_error(m, "argument 'outer_length' must be positive, got %s",
                      dim_str(outer, x, sizeof x));
  alloy_dim rem = alloy_dim_mod(m->st, len, outer);
  if ((e = meta_sym_check(m))) return e;
  if (!dim_is(m, rem, alloy_dim_const(0)))
    return meta_error(m,
                      "Attempting to split dimension of length %s, but outer "
                      "length of %s divides it with a remainder%s!",
                      dim_str(len, x, sizeof x), dim_str(outer, y, sizeof y),
                      alloy_dim_is_const(rem) ? "" : " (not provably zero)");
  alloy_dim out[ALLOY_MAX_RANK];
  if (a->rank + 1 > ALLOY_MAX_RANK)
    return meta_error(m, "the result would exceed rank %d", ALLOY_MAX_RANK);
  int r = 0;
  for (int d = 0; d < a->rank; d++) {
    if (d == dim) {
      out[r++] = outer;
      out[r++] = alloy_dim_floordiv(m->st, len, outer);
    } else {
      out[r++] = a->shape[d];
    }
  }
  return meta_out_tensor(m, 0, a->dtype, out, r);
}

/* Dims may repeat, as torch/_prims allows. */
static alloy_error *meta_prim_squeeze(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  int64_t dims[ALLOY_MAX_RANK];
  int n;
  bool drop[ALLOY_MAX_RANK] = {false};
  alloy_error *e = meta_ints(m, 1, dims, ALLOY_MAX_RANK, &n);
  if (e) return e;
  for (int k = 0; k < n; k++) {
    if ((e = prim_idx(m, 1, dims[k], a->rank, false))) return e;
    if (!dim_is(m, a->shape[dims[k]], alloy_dim_const(1))) {
      char b[64];
      return meta_error(m,
                        "cannot squeeze dimension %lld of size %s: it must "
                        "have length 1", (long long)dims[k],
                        dim_str(a->shape[dims[k]], b, sizeof b));
    }
    drop[dims[k]] = true;
  }
  alloy_dim out[ALLOY_MAX_RANK];
  int r = 0;
  for (int d = 0; d < a->rank; d++)
    if (!drop[d]) out[r++] = a->shape[d];
  return meta_out_tensor(m, 0, a->dtype, out, r);
}

static alloy_error *meta_prim_transpose(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  int64_t perm[ALLOY_MAX_RANK];
  int n;
  alloy_error *e = meta_ints(m, 1, perm, ALLOY_MAX_RANK, &n);
  if (e) return e;
  if (n != a->rank)
    return meta_error(m,
                      "Attempting to permute a tensor of rank %d, but "
                      "received a permutation of length %d!", a->rank, n);
  bool seen[ALLOY_MAX_RANK] = {false};
  alloy_dim out[ALLOY_MAX_RANK];
  for (int k = 0; k < n; k++) {
    if (perm[k] < 0 || perm[k] >= n || seen[perm[k]]) {
      char b[256];
      return meta_error(m, "Received an invalid permutation, %s!",
                        ints_str(perm, n, b, sizeof b));
    }
    seen[perm[k]] = true;
    out[k] = a->shape[perm[k]];
  }
  return meta_out_tensor(m, 0, a->dtype, out, n);
}

/* Tensor.view(dtype): same element size keeps the shape; otherwise the last
 * dimension is rescaled by the ratio of the sizes. */
static alloy_error *meta_prim_view_of_dtype(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  alloy_dtype t = meta_dtype_or(m, 1, a->dtype);
  size_t from = alloy_dtype_size(a->dtype), to = alloy_dtype_size(t);
  if (from == to) return meta_out_like(m, 0, a, t);
  if (a->rank == 0)
    return meta_error(m,
                      "self.dim() cannot be 0 to view %s as %s (different "
                      "element sizes)", alloy_dtype_name(a->dtype),
                      alloy_dtype_name(t));
  alloy_dim out[ALLOY_MAX_RANK];
  memcpy(out, a->shape, sizeof *out * (size_t)a->rank);
  alloy_dim *last = &out[a->rank - 1];
  if (from > to) {
    *last = alloy_dim_mul(m->st, *last, alloy_dim_const((int64_t)(from / to)));
  } else {
    alloy_dim ratio = alloy_dim_const((int64_t)(to / from));
    if (!dim_is(m, alloy_dim_mod(m->st, *last, ratio), alloy_dim_const(0))) {
      char b[64];
      return meta_error(m,
                        "self.size(-1) must be divisible by %lld to view %s "
                        "as %s (different element sizes), but got %s",
                        (long long)ratio.value, alloy_dtype_name(a->dtype),
                        alloy_dtype_name(t), dim_str(*last, b, sizeof b));
    }
    *last = alloy_dim_floordiv(m->st, *last, ratio);
  }
  return meta_out_tensor(m, 0, t, out, a->rank);
}

/* The elements a (size, stride, offset) view reaches: 0 when it is empty,
 * else offset + 1 + sum((size - 1) * stride). */
static alloy_dim required_storage(alloy_meta *m, const alloy_dim *size,
                                  const alloy_dim *stride, int n,
                                  alloy_dim offset, bool *maybe_empty) {
  alloy_dim need = alloy_dim_add(m->st, offset, alloy_dim_const(1));
  *maybe_empty = false;
  for (int k = 0; k < n; k++) {
    if (alloy_dim_eq(m->st, size[k], alloy_dim_const(0)) != ALLOY_FALSE)
      *maybe_empty = true;
    alloy_dim last = alloy_dim_sub(m->st, size[k], alloy_dim_const(1));
    need = alloy_dim_add(m->st, need, alloy_dim_mul(m->st, last, stride[k]));
  }
  return need;
}

/* as_strided and as_strided_scatter share the geometry arguments, starting
 * at schema position first. */
static alloy_error *strided_args(alloy_meta *m, int first, alloy_dim *size,
                                 int *n, alloy_dim *stride,
                                 alloy_dim *offset) {
  int ns;
  alloy_error *e = prim_shape_arg(m, first, size, n);
  if (!e) e = meta_dims(m, first + 1, stride, ALLOY_MAX_RANK, &ns);
  if (e) return e;
  if (ns != *n)
    return meta_error(m, "arguments '%s' and '%s' must have the same length, "
                         "got %d and %d", meta_arg_name(m, first),
                      meta_arg_name(m, first + 1), *n, ns);
  char b[64];
  for (int k = 0; k < ns; k++)
    if (alloy_dim_lt(m->st, stride[k], alloy_dim_const(0)) == ALLOY_TRUE)
      return meta_error(m, "argument '%s': stride %s at index %d is negative",
                        meta_arg_name(m, first + 1),
                        dim_str(stride[k], b, sizeof b), k);
  *offset = meta_dim(m, first + 2);
  if (alloy_dim_lt(m->st, *offset, alloy_dim_const(0)) == ALLOY_TRUE)
    return meta_error(m, "argument '%s' must be non-negative, got %s",
                      meta_arg_name(m, first + 2),
                      dim_str(*offset, b, sizeof b));
  /* The storage the window reaches must be one that can exist. */
  return meta_check_window(m, meta_tensor(m, 0)->dtype, size, stride, *n, *offset);
}

/* The storage of the input is not modelled, so the bounds are unchecked. */
static alloy_error *meta_prim_as_strided(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  alloy_dim size[ALLOY_MAX_RANK], stride[ALLOY_MAX_RANK], offset;
  int n;
  alloy_error *e = strided_args(m, 1, size, &n, stride, &offset);
  return e ? e : meta_out_tensor(m, 0, a->dtype, size, n);
}

static alloy_error *meta_prim_as_strided_scatter(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0), *src = meta_tensor(m, 1);
  alloy_dim size[ALLOY_MAX_RANK], stride[ALLOY_MAX_RANK], offset;
  int n;
  alloy_error *e = strided_args(m, 2, size, &n, stride, &offset);
  if (e) return e;
  bool same = src->rank == n;
  for (int d = 0; same && d < n; d++) same = dim_is(m, src->shape[d], size[d]);
  char x[256], y[256], z[64], w[64], v[64];
  if (!same)
    return meta_error(m,
                      "expected src to have a size equal to the slice of "
                      "self. src size = %s, slice size = %s",
                      meta_shape_text(src->shape, src->rank, x, sizeof x),
                      meta_shape_text(size, n, y, sizeof y));
  bool maybe_empty;
  alloy_dim need = required_storage(m, size, stride, n, offset, &maybe_empty);
  alloy_dim have = meta_numel(m, a->shape, a->rank);
  if ((e = meta_sym_check(m))) return e;
  if (!maybe_empty && alloy_dim_lt(m->st, have, need) == ALLOY_TRUE)
    return meta_error(m,
                      "sizes %s, strides %s, storage "
                      "offset %s require a storage of %s elements, out of "
                      "bounds for self's %s",
                      meta_shape_text(size, n, x, sizeof x),
                      meta_shape_text(stride, n, y, sizeof y),
                      dim_str(offset, z, sizeof z),
                      dim_str(need, w, sizeof w), dim_str(have, v, sizeof v));
  return meta_out_like(m, 0, a, a->dtype);
}

/* --- shape ------------------------------------------------------------- */

/* Unlike aten.cat, dim is canonical, empty tensors are not skipped and the
 * dtypes must agree (torch/_prims takes the first's; aten would promote). */
static alloy_error *meta_prim_cat(alloy_meta *m) {
  int n = meta_tensor_count(m, 0);
  if (n == 0) return meta_error(m, "argument 'tensors' must not be empty");
  int64_t dim;
  alloy_error *e = meta_int(m, 1, &dim);
  if (e) return e;
  const alloy_value *first = meta_tensor_at(m, 0, 0);
  if ((e = prim_idx(m, 1, dim, first->rank, false))) return e;
  alloy_dim out[ALLOY_MAX_RANK];
  memcpy(out, first->shape, sizeof *out * (size_t)first->rank);
  for (int k = 1; k < n; k++) {
    const alloy_value *t = meta_tensor_at(m, 0, k);
    if (t->rank != first->rank)
      return meta_error(m, "tensor %d has rank %d but tensor 0 has rank %d",
                        k, t->rank, first->rank);
    if (t->dtype != first->dtype)
      return meta_error(m,
                        "tensor %d has dtype torch.%s but tensor 0 has "
                        "torch.%s: prims do not promote", k,
                        alloy_dtype_name(t->dtype),
                        alloy_dtype_name(first->dtype));
    for (int d = 0; d < t->rank; d++) {
      if (d == dim) {
        out[d] = alloy_dim_add(m->st, out[d], t->shape[d]);
      } else if (!dim_is(m, t->shape[d], first->shape[d])) {
        char x[64], y[64];
        return meta_error(m,
                          "Sizes of tensors must match except in dimension "
                          "%lld. Expected %s in dimension %d but got %s for "
                          "tensor number %d in the list", (long long)dim,
                          dim_str(first->shape[d], x, sizeof x), d,
                          dim_str(t->shape[d], y, sizeof y), k);
      }
    }
  }
  return meta_out_tensor(m, 0, first->dtype, out, first->rank);
}

/* The shape is explicit: no -1 to infer. */
static alloy_error *meta_prim_reshape(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  alloy_dim shape[ALLOY_MAX_RANK];
  int n;
  alloy_error *e = prim_shape_arg(m, 1, shape, &n);
  if (e) return e;
  alloy_dim have = meta_numel(m, a->shape, a->rank);
  alloy_dim want = meta_numel(m, shape, n);
  if ((e = meta_sym_check(m))) return e;
  if (!dim_is(m, have, want)) {
    char x[64], y[64];
    return meta_error(m,
                      "Attempting to reshape a tensor with %s elements to a "
                      "shape with %s elements!", dim_str(have, x, sizeof x),
                      dim_str(want, y, sizeof y));
  }
  return meta_out_tensor(m, 0, a->dtype, shape, n);
}

static alloy_error *meta_prim_rev(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  bool marked[ALLOY_MAX_RANK];
  alloy_error *e = prim_dim_list(m, 1, a->rank, false, marked);
  return e ? e : meta_out_like(m, 0, a, a->dtype);
}

/* --- data conversion and movement -------------------------------------- */

static alloy_error *meta_prim_convert_element_type(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  return meta_out_like(m, 0, a, meta_dtype_or(m, 1, a->dtype));
}

/* The Python number type of a dtype, as the kind of a scalar value. */
static alloy_error *scalar_kind(alloy_meta *m, alloy_dtype t,
                                alloy_value_kind *kind) {
  if (t == ALLOY_BOOL) *kind = ALLOY_VALUE_BOOL;
  else if (alloy_dtype_is_integer(t)) *kind = ALLOY_VALUE_INT;
  else if (alloy_dtype_is_float(t)) *kind = ALLOY_VALUE_FLOAT;
  else
    return meta_error(m, "a torch.%s scalar (complex) cannot be represented",
                      alloy_dtype_name(t));
  return NULL;
}

/* The value is data: an int is a fresh unbacked symbol. Only an element
 * count that cannot be 1 is refused; the rest is the run time's check. */
static alloy_error *meta_prim_item(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  alloy_dim numel = meta_numel(m, a->shape, a->rank);
  if (alloy_dim_eq(m->st, numel, alloy_dim_const(1)) == ALLOY_FALSE) {
    char b[64];
    return meta_error(m, "a Tensor with %s elements cannot be converted to "
                         "Scalar", dim_str(numel, b, sizeof b));
  }
  alloy_value_kind kind;
  alloy_error *e = scalar_kind(m, a->dtype, &kind);
  if (e) return e;
  return meta_out_scalar(m, 0, kind,
                         kind == ALLOY_VALUE_INT ? meta_unbacked(m)
                                                 : alloy_dim_const(0));
}

/* maximum_value (param 1) and minimum_value (param 0): the finite extremes
 * of a dtype; an integer's is known, so it is returned as a concrete int. */
static alloy_error *meta_prim_extreme_value(alloy_meta *m) {
  alloy_dtype t = meta_dtype_or(m, 0, ALLOY_F32);
  bool max = m->param != 0;
  if (alloy_dtype_is_complex(t))
    return meta_out_scalar(m, 0, ALLOY_VALUE_FLOAT, alloy_dim_const(0));
  alloy_value_kind kind;
  alloy_error *e = scalar_kind(m, t, &kind);
  if (e || kind != ALLOY_VALUE_INT)
    return e ? e : meta_out_scalar(m, 0, kind, alloy_dim_const(0));
  int64_t v;
  switch (t) {
    case ALLOY_U8: v = max ? 255 : 0; break;
    case ALLOY_I8: v = max ? INT8_MAX : INT8_MIN; break;
    case ALLOY_I16: v = max ? INT16_MAX : INT16_MIN; break;
    case ALLOY_I32: v = max ? INT32_MAX : INT32_MIN; break;
    default: v = max ? INT64_MAX : INT64_MIN; break;
  }
  return meta_out_scalar(m, 0, ALLOY_VALUE_INT, alloy_dim_const(v));
}

static alloy_error *meta_prim_copy_strided(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  alloy_dim stride[ALLOY_MAX_RANK];
  int n;
  alloy_error *e = meta_dims(m, 1, stride, ALLOY_MAX_RANK, &n);
  if (e) return e;
  if (n != a->rank)
    return meta_error(m, "argument 'stride' has %d entries but the tensor "
                         "has rank %d", n, a->rank);
  return meta_out_like(m, 0, a, a->dtype);
}

/* copy_to(a, b) writes b's elements into a, whatever their shapes. */
static alloy_error *meta_prim_copy_to(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0), *b = meta_tensor(m, 1);
  alloy_dim na = meta_numel(m, a->shape, a->rank);
  alloy_dim nb = meta_numel(m, b->shape, b->rank);
  alloy_error *e = meta_sym_check(m);
  if (e) return e;
  if (!dim_is(m, na, nb)) {
    char x[64], y[64];
    return meta_error(m, "Attempting to copy %s elements to a tensor with %s "
                         "elements!", dim_str(nb, x, sizeof x),
                      dim_str(na, y, sizeof y));
  }
  return meta_out_like(m, 0, a, a->dtype);
}

static alloy_error *meta_prim_resize(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  alloy_dim shape[ALLOY_MAX_RANK];
  int n;
  alloy_error *e = prim_shape_arg(m, 1, shape, &n);
  return e ? e : meta_out_tensor(m, 0, a->dtype, shape, n);
}

/* --- reductions -------------------------------------------------------- */

enum { REDUCE_PLAIN = 0, REDUCE_VAR = 1 };

/* dims None reduces every dimension; the result keeps no reduced dims. The
 * dtype is output_dtype or the input's; var's is the input's real dtype. */
static alloy_error *meta_prim_reduction(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  bool reduce[ALLOY_MAX_RANK];
  alloy_error *e = NULL;
  if (meta_is_none(m, 1)) {
    for (int d = 0; d < ALLOY_MAX_RANK; d++) reduce[d] = true;
  } else {
    int64_t dims[ALLOY_MAX_RANK];
    int n;
    if ((e = meta_ints(m, 1, dims, ALLOY_MAX_RANK, &n))) return e;
    memset(reduce, 0, sizeof reduce);
    for (int k = 0; k < n; k++) {
      if ((e = prim_idx(m, 1, dims[k], a->rank, true))) return e;
      reduce[dims[k]] = true;
    }
  }
  int oi = arg_index(m, "output_dtype");
  alloy_dtype t = a->dtype;
  if (m->param == REDUCE_VAR) {
    if (oi >= 0 && !meta_is_none(m, oi))
      return meta_error(m, "takes no output_dtype: its result has the "
                           "input's real dtype");
    complex_to_real(t, &t);
  } else if (oi >= 0) {
    t = meta_dtype_or(m, oi, t);
  }
  alloy_dim out[ALLOY_MAX_RANK];
  int r = 0;
  for (int d = 0; d < a->rank; d++)
    if (!reduce[d]) out[r++] = a->shape[d];
  return meta_out_tensor(m, 0, t, out, r);
}

/* --- creation ---------------------------------------------------------- */

static alloy_dtype dtype_arg(const alloy_meta *m, alloy_dtype dflt) {
  int i = arg_index(m, "dtype");
  return i >= 0 ? meta_dtype_or(m, i, dflt) : dflt;
}

/* empty, full, uniform: shape (position 0) and dtype. */
static alloy_error *meta_prim_new(alloy_meta *m) {
  alloy_dim shape[ALLOY_MAX_RANK];
  int n;
  alloy_error *e = prim_shape_arg(m, 0, shape, &n);
  return e ? e : meta_out_tensor(m, 0, dtype_arg(m, ALLOY_F32), shape, n);
}

static alloy_error *meta_prim_normal(alloy_meta *m) {
  alloy_dtype t = dtype_arg(m, ALLOY_F32);
  int si = arg_index(m, "std");
  if (si >= 0 && meta_float(m, si) < 0.0)
    return meta_error(m, "expected non-negative standard deviation, but got "
                         "std=%g", meta_float(m, si));
  if (!alloy_dtype_is_float(t) && !alloy_dtype_is_complex(t))
    return meta_error(m, "expected a floating-point or complex dtype, but got "
                         "dtype=torch.%s", alloy_dtype_name(t));
  return meta_prim_new(m);
}

static alloy_error *meta_prim_empty_strided(alloy_meta *m) {
  alloy_dim shape[ALLOY_MAX_RANK], strides[ALLOY_MAX_RANK];
  int n, ns;
  alloy_error *e = prim_shape_arg(m, 0, shape, &n);
  if (!e) e = meta_dims(m, 1, strides, ALLOY_MAX_RANK, &ns);
  if (e) return e;
  if (ns != n)
    return meta_error(m, "argument 'strides' has %d entries but 'shape' has "
                         "%d", ns, n);
  return meta_out_tensor(m, 0, dtype_arg(m, ALLOY_F32), shape, n);
}

static alloy_error *meta_prim_empty_permuted(alloy_meta *m) {
  alloy_dim shape[ALLOY_MAX_RANK];
  int64_t layout[ALLOY_MAX_RANK];
  int n, nl;
  alloy_error *e = prim_shape_arg(m, 0, shape, &n);
  if (!e) e = meta_ints(m, 1, layout, ALLOY_MAX_RANK, &nl);
  if (e) return e;
  if (nl != n)
    return meta_error(m,
                      "Number of dimensions in the tensor input does not "
                      "match the length of the physical layout; i.e. "
                      "len(size) = %d is not equal to len(physical_layout) "
                      "= %d", n, nl);
  bool seen[ALLOY_MAX_RANK] = {false};
  for (int p = 0; p < nl; p++) {
    if (layout[p] < 0 || layout[p] >= n)
      return meta_error(m,
                        "Dimension out of range (expected to be between 0 "
                        "and %d, but got %lld at index %d)", n - 1,
                        (long long)layout[p], p);
    if (seen[layout[p]]) return meta_error(m, "Duplicate dim not allowed");
    seen[layout[p]] = true;
  }
  return meta_out_tensor(m, 0, dtype_arg(m, ALLOY_F32), shape, n);
}

static alloy_error *meta_prim_full_like(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  return meta_out_like(m, 0, a, dtype_arg(m, a->dtype));
}

/* Without a dtype the scalar's Python type decides: bool, int64, or the
 * default float dtype. */
static alloy_error *meta_prim_scalar_tensor(alloy_meta *m) {
  alloy_dtype t = meta_promo_operand(m, 0).dtype;
  if (t == ALLOY_F64) t = ALLOY_F32;
  return meta_out_tensor(m, 0, dtype_arg(m, t), NULL, 0);
}

static alloy_error *meta_prim_iota(alloy_meta *m) {
  alloy_dtype t = dtype_arg(m, ALLOY_I64);
  if (!alloy_dtype_is_integer(t))
    return meta_error(m, "prims.iota only supports integer dtypes, got "
                         "torch.%s", alloy_dtype_name(t));
  int si = arg_index(m, "step");
  if (si >= 0 && dim_is_const(meta_dim(m, si), 0))
    return meta_error(m, "step must be nonzero");
  alloy_dim len = meta_dim(m, 0);
  alloy_error *e = prim_shape_ok(m, 0, &len, 1);
  return e ? e : meta_out_tensor(m, 0, t, &len, 1);
}

/* A token is torch.tensor([]): float32, shape [0]. */
static alloy_error *meta_prim_make_token(alloy_meta *m) {
  alloy_dim zero = alloy_dim_const(0);
  return meta_out_tensor(m, 0, ALLOY_F32, &zero, 1);
}

static alloy_error *meta_prim_no_outputs(alloy_meta *m) {
  (void)m;
  return NULL;
}

/* --- linear algebra ---------------------------------------------------- */

/* U is [..., m, m or k], S [..., k] (real), Vh [..., n or k, n], k = min. */
static alloy_error *meta_prim_svd(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  if (a->rank < 2)
    return meta_error(m, "linalg.svd: The input tensor A must have at least "
                         "2 dimensions.");
  alloy_dtype t = a->dtype, real = t;
  if (t == ALLOY_F16 || t == ALLOY_BF16)
    return meta_error(m, "linalg.svd: Low precision dtypes not supported. "
                         "Got torch.%s", alloy_dtype_name(t));
  if (!alloy_dtype_is_float(t) && !complex_to_real(t, &real))
    return meta_error(m, "linalg.svd: Expected a floating point or complex "
                         "tensor as input. Got torch.%s", alloy_dtype_name(t));
  bool full = meta_bool(m, 1);
  int b = a->rank - 2;
  alloy_dim rows = a->shape[b], cols = a->shape[b + 1];
  alloy_dim k = alloy_dim_min(m->st, rows, cols);
  alloy_dim s[ALLOY_MAX_RANK];
  memcpy(s, a->shape, sizeof *s * (size_t)b);
  s[b] = rows, s[b + 1] = full ? rows : k;
  alloy_error *e = meta_out_tensor(m, 0, t, s, b + 2);
  s[b] = k;
  if (!e) e = meta_out_tensor(m, 1, real, s, b + 1);
  s[b] = full ? cols : k, s[b + 1] = cols;
  return e ? e : meta_out_tensor(m, 2, t, s, b + 2);
}

/* --- FFT --------------------------------------------------------------- */

/* utils.canonicalize_dims + validate_no_repeating_dims on argument 'dim';
 * *last receives the last dim listed. */
static alloy_error *fft_dims(alloy_meta *m, const alloy_value *a, int *last) {
  int i = arg_index(m, "dim");
  int64_t dims[ALLOY_MAX_RANK];
  int n;
  bool seen[ALLOY_MAX_RANK] = {false};
  alloy_error *e = meta_ints(m, i, dims, ALLOY_MAX_RANK, &n);
  if (e) return e;
  if (n == 0) return meta_error(m, "argument 'dim' must not be empty");
  if (a->rank == 0) return meta_error(m, "expects a tensor with dimensions");
  for (int k = 0; k < n; k++) {
    int d;
    if ((e = meta_wrap_dim(m, i, dims[k], a->rank, &d))) return e;
    if (seen[d])
      return meta_error(m, "duplicate value in the list of dims");
    seen[d] = true;
    *last = d;
  }
  return NULL;
}

static alloy_error *meta_prim_fft_r2c(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  alloy_dtype t;
  if (!real_to_complex(a->dtype, &t))
    return meta_error(m, "expects a float32 or float64 tensor (complex32 is "
                         "not supported), got torch.%s",
                      alloy_dtype_name(a->dtype));
  int last;
  alloy_error *e = fft_dims(m, a, &last);
  if (e) return e;
  alloy_dim s[ALLOY_MAX_RANK];
  memcpy(s, a->shape, sizeof *s * (size_t)a->rank);
  if (meta_bool(m, arg_index(m, "onesided")))
    s[last] = alloy_dim_add(m->st,
                            alloy_dim_floordiv(m->st, s[last], alloy_dim_const(2)),
                            alloy_dim_const(1));
  return meta_out_tensor(m, 0, t, s, a->rank);
}

static alloy_error *meta_prim_fft_c2c(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  if (!alloy_dtype_is_complex(a->dtype))
    return meta_error(m, "expects a complex tensor, got torch.%s",
                      alloy_dtype_name(a->dtype));
  int last;
  alloy_error *e = fft_dims(m, a, &last);
  return e ? e : meta_out_like(m, 0, a, a->dtype);
}

static alloy_error *meta_prim_fft_c2r(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  alloy_dtype t;
  if (!complex_to_real(a->dtype, &t))
    return meta_error(m, "expects a complex tensor, got torch.%s",
                      alloy_dtype_name(a->dtype));
  int last;
  alloy_error *e = fft_dims(m, a, &last);
  if (e) return e;
  int li = arg_index(m, "last_dim_size");
  alloy_dim s[ALLOY_MAX_RANK];
  memcpy(s, a->shape, sizeof *s * (size_t)a->rank);
  s[last] = meta_dim(m, li);
  if ((e = prim_shape_ok(m, li, &s[last], 1))) return e;
  return meta_out_tensor(m, 0, t, s, a->rank);
}

/* --- the table --------------------------------------------------------- */

/* An elementwise prim whose result has its inputs' dtype. */
#define SAME(name) {"prims." name ".default", meta_prim_elementwise, EW_SAME}

/* torch/_prims gives signbit the DEFAULT rule, so its meta says the input's
 * dtype while its implementation (torch.signbit) returns bool; Alloy follows
 * the implementation, like the other predicates. */
const alloy_meta_entry alloy_meta_prims[] = {
    /* elementwise unary */
    {"prims.abs.default", meta_prim_elementwise, EW_TO_REAL},
    SAME("acos"), SAME("acosh"), SAME("asin"), SAME("asinh"),
    SAME("atan"), SAME("atanh"), SAME("bessel_i0"), SAME("bessel_i0e"),
    SAME("bessel_i1"), SAME("bessel_i1e"), SAME("bessel_j0"),
    SAME("bessel_j1"),
    {"prims.bitwise_not.default", meta_prim_elementwise, EW_SAME | EW_BITWISE},
    SAME("cbrt"), SAME("ceil"),
    {"prims.conj_physical.default", meta_prim_elementwise, EW_SAME | EW_COMPLEX},
    SAME("cos"), SAME("cosh"), SAME("digamma"), SAME("erf"),
    SAME("erf_inv"), SAME("erfc"), SAME("erfcx"), SAME("exp"),
    SAME("exp2"), SAME("expm1"), SAME("fill"), SAME("floor"),
    {"prims.imag.default", meta_prim_elementwise, EW_TO_REAL | EW_COMPLEX},
    {"prims.isfinite.default", meta_prim_elementwise, EW_BOOL},
    SAME("lgamma"), SAME("log"), SAME("log10"), SAME("log1p"),
    SAME("log2"), SAME("ndtri"), SAME("neg"),
    {"prims.real.default", meta_prim_elementwise, EW_TO_REAL | EW_COMPLEX},
    SAME("reciprocal"), SAME("round"), SAME("rsqrt"), SAME("sign"),
    {"prims.signbit.default", meta_prim_elementwise, EW_BOOL},
    SAME("sin"), SAME("sinh"), SAME("spherical_bessel_j0"), SAME("sqrt"),
    SAME("tan"), SAME("tanh"), SAME("trunc"),
    {"prims.frexp.default", meta_prim_frexp, 0},
    /* elementwise binary */
    SAME("add"), SAME("atan2"),
    {"prims.bitwise_and.default", meta_prim_elementwise, EW_SAME | EW_BITWISE},
    {"prims.bitwise_or.default", meta_prim_elementwise, EW_SAME | EW_BITWISE},
    {"prims.bitwise_xor.default", meta_prim_elementwise, EW_SAME | EW_BITWISE},
    SAME("div"),
    {"prims.eq.default", meta_prim_elementwise, EW_BOOL},
    SAME("fmax"), SAME("fmin"), SAME("fmod"),
    {"prims.gcd.default", meta_prim_elementwise, EW_SAME | EW_INTEGER},
    {"prims.ge.default", meta_prim_elementwise, EW_BOOL},
    {"prims.gt.default", meta_prim_elementwise, EW_BOOL},
    SAME("hypot"), SAME("igamma"), SAME("igammac"),
    {"prims.le.default", meta_prim_elementwise, EW_BOOL},
    {"prims.lt.default", meta_prim_elementwise, EW_BOOL},
    SAME("maximum"), SAME("minimum"), SAME("mul"),
    {"prims.ne.default", meta_prim_elementwise, EW_BOOL},
    SAME("nextafter"), SAME("pow"), SAME("remainder"),
    {"prims.shift_left.default", meta_prim_elementwise, EW_SAME | EW_INTEGER},
    {"prims.shift_right_arithmetic.default", meta_prim_elementwise,
     EW_SAME | EW_INTEGER},
    SAME("sub"), SAME("zeta"),
    {"prims.where.default", meta_prim_where, 0},
    /* views */
    {"prims.as_strided.default", meta_prim_as_strided, 0},
    {"prims.as_strided_scatter.default", meta_prim_as_strided_scatter, 0},
    {"prims.broadcast_in_dim.default", meta_prim_broadcast_in_dim, 0},
    {"prims.collapse_view.default", meta_prim_collapse, 1},
    {"prims.conj.default", meta_prim_conj, 0},
    {"prims.split_dim.default", meta_prim_split_dim, 0},
    {"prims.squeeze.default", meta_prim_squeeze, 0},
    {"prims.transpose.default", meta_prim_transpose, 0},
    {"prims.view_of.default", meta_prim_same, 0},
    {"prims.view_of_dtype.default", meta_prim_view_of_dtype, 0},
    /* shape */
    {"prims.cat.default", meta_prim_cat, 0},
    {"prims.collapse.default", meta_prim_collapse, 0},
    {"prims.reshape.default", meta_prim_reshape, 0},
    {"prims.rev.default", meta_prim_rev, 0},
    /* data conversion and movement */
    {"prims.clone.default", meta_prim_same, 0},
    {"prims.convert_element_type.default", meta_prim_convert_element_type, 0},
    {"prims.device_put.default", meta_prim_same, 0},
    {"prims.item.default", meta_prim_item, 0},
    {"prims.maximum_value.default", meta_prim_extreme_value, 1},
    {"prims.minimum_value.default", meta_prim_extreme_value, 0},
    {"prims.copy_strided.default", meta_prim_copy_strided, 0},
    {"prims.copy_to.default", meta_prim_copy_to, 0},
    {"prims.resize.default", meta_prim_resize, 0},
    /* reductions */
    {"prims.amax.default", meta_prim_reduction, REDUCE_PLAIN},
    {"prims.amin.default", meta_prim_reduction, REDUCE_PLAIN},
    {"prims.prod.default", meta_prim_reduction, REDUCE_PLAIN},
    {"prims.sum.default", meta_prim_reduction, REDUCE_PLAIN},
    {"prims.xor_sum.default", meta_prim_reduction, REDUCE_PLAIN},
    {"prims.var.default", meta_prim_reduction, REDUCE_VAR},
    /* creation */
    {"prims.empty.default", meta_prim_new, 0},
    {"prims.empty_strided.default", meta_prim_empty_strided, 0},
    {"prims.empty_permuted.default", meta_prim_empty_permuted, 0},
    {"prims.full.default", meta_prim_new, 0},
    {"prims.full_like.default", meta_prim_full_like, 0},
    {"prims.scalar_tensor.default", meta_prim_scalar_tensor, 0},
    {"prims.iota.default", meta_prim_iota, 0},
    {"prims.normal.default", meta_prim_normal, 0},
    {"prims.uniform.default", meta_prim_new, 0},
    /* linear algebra, FFT, tokens */
    {"prims.svd.default", meta_prim_svd, 0},
    {"prims.fft_r2c.default", meta_prim_fft_r2c, 0},
    {"prims.fft_c2c.default", meta_prim_fft_c2c, 0},
    {"prims.fft_c2r.default", meta_prim_fft_c2r, 0},
    {"prims._make_token.default", meta_prim_make_token, 0},
    {"prims._sink_tokens.default", meta_prim_no_outputs, 0},
    {NULL, NULL, 0},
};
