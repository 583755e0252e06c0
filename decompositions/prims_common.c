/*
 * decompositions/prims_common.c: the helpers of prims_common.h -- dtype
 * conversion, broadcasting, the promotion of an elementwise op's operands
 * (torch._prims_common.elementwise_dtypes, through ir/promote.h), and the
 * dims of reductions.
 */
#include "ir/checked.h"
#include "decompositions/prims_common.h"

#include <math.h>

const alloy_value *p_result(decomp *d, int k) { return alloy_node_output(d_node(d), k); }

const char *p_op_name(decomp *d) { return alloy_op_name(alloy_node_op(d_node(d))); }

alloy_arg p_device(void) {
  alloy_arg a = {ALLOY_ARG_DEVICE, {0}};
  a.u.device.type = ALLOY_DEVICE_CPU;
  a.u.device.index = -1;
  return a;
}

alloy_value *p_convert(decomp *d, alloy_value *x, alloy_dtype t) {
  if (!x || d_dtype(x) == t) return x;
  return D(d, "prims.convert_element_type.default", V(x), DT(t));
}

static bool same_shape(decomp *d, const alloy_value *x, const alloy_dim *shape, int rank) {
  if (d_rank(x) != rank) return false;
  for (int k = 0; k < rank; k++)
    if (!alloy_dim_same(d_shape(x)[k], shape[k]) &&
        alloy_dim_eq(d_symtab(d), d_shape(x)[k], shape[k]) != ALLOY_TRUE)
      return false;
  return true;
}

alloy_value *p_broadcast(decomp *d, alloy_value *x, const alloy_dim *shape, int rank) {
  if (!x || same_shape(d, x, shape, rank)) return x;
  int r = d_rank(x);
  if (r > rank) return d_fail(d, "cannot broadcast a rank-%d tensor to rank %d", r, rank);
  int64_t bdims[ALLOY_MAX_RANK];
  for (int k = 0; k < r; k++) bdims[k] = rank - r + k;
  return D(d, "prims.broadcast_in_dim.default", V(x), d_dim_list(d, shape, rank),
           d_int_list(d, bdims, r));
}

alloy_value *p_full(decomp *d, const alloy_dim *shape, int rank, alloy_arg value, alloy_dtype t) {
  return D(d, "prims.full.default", d_dim_list(d, shape, rank), p_number_as(d, value, t), DT(t),
           p_device(), B(false));
}

bool p_is_number(alloy_arg a) {
  return a.kind == ALLOY_ARG_INT || a.kind == ALLOY_ARG_FLOAT || a.kind == ALLOY_ARG_BOOL;
}

alloy_arg p_number_as(decomp *d, alloy_arg a, alloy_dtype t) {
  if (!p_is_number(a)) return a;
  if (a.kind == ALLOY_ARG_INT && !alloy_dim_is_const(a.u.i)) {
    if (!alloy_dtype_is_integer(t)) d_decline(d, "a symbolic number in a %s computation",
                                              alloy_dtype_name(t));
    return a;
  }
  double v = a.kind == ALLOY_ARG_FLOAT ? a.u.f
             : a.kind == ALLOY_ARG_BOOL ? (double)a.u.b
                                        : (double)a.u.i.value;
  if (t == ALLOY_BOOL) return B(v != 0);
  if (alloy_dtype_is_integer(t))
    return a.kind == ALLOY_ARG_INT ? a : I(alloy_saturating_from_double(v));
  return F(v);
}

static alloy_promo_operand promo_of(alloy_arg a) {
  alloy_promo_operand p = {ALLOY_PROMO_ABSENT, ALLOY_F32};
  if (a.kind == ALLOY_ARG_VALUE && a.u.value) {
    if (alloy_value_kind_of(a.u.value) == ALLOY_VALUE_INT)
      return (alloy_promo_operand){ALLOY_PROMO_SCALAR, ALLOY_I64};
    p.kind = d_rank(a.u.value) ? ALLOY_PROMO_TENSOR : ALLOY_PROMO_ZERO_DIM;
    p.dtype = d_dtype(a.u.value);
  } else if (a.kind == ALLOY_ARG_INT) {
    p = (alloy_promo_operand){ALLOY_PROMO_SCALAR, ALLOY_I64};
  } else if (a.kind == ALLOY_ARG_FLOAT) {
    p = (alloy_promo_operand){ALLOY_PROMO_SCALAR, ALLOY_F64};
  } else if (a.kind == ALLOY_ARG_BOOL) {
    p = (alloy_promo_operand){ALLOY_PROMO_SCALAR, ALLOY_BOOL};
  }
  return p;
}

/* A float number meets a float16/bfloat16 tensor in that dtype: PyTorch
 * rounds the wrapped number to it before computing in float32. */
static alloy_arg round_to(alloy_arg a, alloy_dtype t) {
  if (a.kind != ALLOY_ARG_FLOAT) return a;
  if (t == ALLOY_F16) return F(alloy_f32_from_f16(alloy_f16_from_f32((float)a.u.f)));
  if (t == ALLOY_BF16) return F(alloy_f32_from_bf16(alloy_bf16_from_f32((float)a.u.f)));
  return a;
}

static bool is_tensor(alloy_arg a) {
  return a.kind == ALLOY_ARG_VALUE && a.u.value &&
         alloy_value_kind_of(a.u.value) != ALLOY_VALUE_INT;
}

bool p_elementwise(decomp *d, const alloy_arg *in, int n, alloy_promo_kind kind, p_operands *out) {
  return p_elementwise_opmath(d, in, n, kind, false, out);
}

bool p_elementwise_opmath(decomp *d, const alloy_arg *in, int n, alloy_promo_kind kind,
                          bool keep_numbers, p_operands *out) {
  if (n > P_MAX_OPERANDS) return d_fail(d, "too many operands"), false;
  alloy_promo_operand ops[P_MAX_OPERANDS] = {{0}};
  for (int i = 0; i < n; i++) ops[i] = promo_of(in[i]);
  alloy_elementwise_dtypes(ops, n, kind, &out->compute, &out->result);
  /* The common shape, dims aligned to the right. */
  out->rank = 0;
  for (int i = 0; i < n; i++) {
    if (!is_tensor(in[i])) continue;
    const alloy_value *v = in[i].u.value;
    int r = d_rank(v);
    if (r > out->rank) {
      for (int k = out->rank - 1; k >= 0; k--) out->shape[k + r - out->rank] = out->shape[k];
      for (int k = 0; k < r - out->rank; k++) out->shape[k] = alloy_dim_const(1);
      out->rank = r;
    }
    for (int k = 0; k < r; k++) {
      alloy_dim *s = &out->shape[out->rank - r + k];
      alloy_error *e = alloy_dim_broadcast(d_symtab(d), *s, d_shape(v)[k], s);
      if (e) {
        d_fail(d, "%s", alloy_error_message(e));
        alloy_error_free(e);
        return false;
      }
    }
  }
  out->n = n;
  for (int i = 0; i < n; i++) {
    if (is_tensor(in[i])) {
      alloy_value *x = p_convert(d, in[i].u.value, out->compute);
      out->a[i] = V(p_broadcast(d, x, out->shape, out->rank));
    } else {
      out->a[i] = p_number_as(d, keep_numbers ? in[i] : round_to(in[i], out->result), out->compute);
    }
  }
  return !d_failed(d);
}

bool p_elementwise_args(decomp *d, const int *pos, int n, alloy_promo_kind kind, p_operands *out) {
  alloy_arg in[P_MAX_OPERANDS];
  for (int i = 0; i < n && i < P_MAX_OPERANDS; i++) in[i] = *d_arg(d, pos[i]);
  return p_elementwise(d, in, n, kind, out);
}

bool p_elementwise_args_opmath(decomp *d, const int *pos, int n, alloy_promo_kind kind,
                               p_operands *out) {
  alloy_arg in[P_MAX_OPERANDS];
  for (int i = 0; i < n && i < P_MAX_OPERANDS; i++) in[i] = *d_arg(d, pos[i]);
  return p_elementwise_opmath(d, in, n, kind, true, out);
}

/* --- reductions ---------------------------------------------------------------*/

void p_reduce_dims(decomp *d, int i, int rank, bool empty_is_all, p_dims *out) {
  int64_t dims[ALLOY_MAX_RANK];
  int n = d_is_none(d, i) ? -1 : d_ints(d, i, dims, ALLOY_MAX_RANK);
  for (int k = 0; k < ALLOY_MAX_RANK; k++) out->mask[k] = n < 0 || (n == 0 && empty_is_all);
  for (int k = 0; k < n; k++) out->mask[d_wrap_dim(d, dims[k], rank)] = true;
  out->n = 0;
  for (int k = 0; k < rank; k++)
    if (out->mask[k]) out->list[out->n++] = k;
}

void p_dims_from(int from, int rank, p_dims *out) {
  out->n = 0;
  for (int k = 0; k < ALLOY_MAX_RANK; k++) out->mask[k] = k >= from;
  for (int k = from; k < rank; k++) out->list[out->n++] = k;
}

alloy_value *p_keepdim(decomp *d, alloy_value *r, const alloy_value *in, const p_dims *rd) {
  int rank = d_rank(in);
  alloy_dim shape[ALLOY_MAX_RANK];
  int64_t bdims[ALLOY_MAX_RANK];
  int nb = 0;
  for (int k = 0; k < rank; k++) {
    shape[k] = rd->mask[k] ? alloy_dim_const(1) : d_shape(in)[k];
    if (!rd->mask[k]) bdims[nb++] = k;
  }
  return D(d, "prims.broadcast_in_dim.default", V(r), d_dim_list(d, shape, rank),
           d_int_list(d, bdims, nb));
}

alloy_value *p_count(decomp *d, const alloy_value *in, const p_dims *rd, alloy_dtype t) {
  alloy_dim n = alloy_dim_const(1);
  for (int k = 0; k < d_rank(in); k++)
    if (rd->mask[k]) n = alloy_dim_mul(d_symtab(d), n, d_shape(in)[k]);
  if (alloy_dim_is_const(n)) return p_full(d, NULL, 0, I(n.value), t);
  /* A symbolic count reaches a tensor as the one element of iota(1, start=n). */
  alloy_value *one = D(d, "prims.iota.default", I(1), SYM(n), I(1), DT(ALLOY_I64), p_device(),
                       B(false));
  int64_t zero = 0;
  return p_convert(d, D(d, "prims.squeeze.default", V(one), d_int_list(d, &zero, 1)), t);
}
