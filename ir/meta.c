/*
 * ir/meta.c: the helpers shape functions are written with (see ir/meta.h)
 * and alloy_meta_run, which calls an op's shape function and checks that it
 * produced every output its schema promises.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/meta.h"

alloy_error *meta_error(alloy_meta *m, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return alloy_error_new(ALLOY_ERR_TYPE, "%s: %s", m->op->name, msg);
}

alloy_error *meta_sym_check(alloy_meta *m) {
  const char *err = alloy_symtab_error(m->st);
  if (!err) return NULL;
  alloy_error *e = meta_error(m, "%s", err);
  alloy_symtab_clear_error(m->st);
  return e;
}

const char *meta_arg_name(const alloy_meta *m, int i) {
  return m->op->schema->args[i].name;
}

alloy_error *meta_check_scalar_fits(alloy_meta *m, int i, alloy_dtype t) {
  const alloy_arg *a = &m->args[i];
  double lo, hi;
  if (!alloy_dtype_limits(t, &lo, &hi)) return NULL;
  bool bad;
  if (a->kind == ALLOY_ARG_INT && alloy_dim_is_const(a->u.i)) {
    int64_t v = a->u.i.value;
    bad = t == ALLOY_U8 ? v > 255 || v < -255 : (double)v < lo || (double)v > hi;
  } else if (a->kind == ALLOY_ARG_FLOAT) {
    double v = a->u.f;
    bad = alloy_dtype_is_float(t) ? !isinf(v) && (v < lo || v > hi) : !(v >= lo && v <= hi);
  } else {
    return NULL;
  }
  if (bad)
    return meta_error(m, "value cannot be converted to type %s without overflow (argument '%s')",
                      alloy_dtype_name(t), meta_arg_name(m, i));
  return NULL;
}

bool meta_is_none(const alloy_meta *m, int i) {
  return m->args[i].kind == ALLOY_ARG_NONE;
}

/* Wrapped numbers (a Python number given for a Tensor argument) read as the
 * zero-dim tensors PyTorch wraps them in: int64, float64 or bool. */
static alloy_dim no_dims[1];
static const alloy_value wrapped_i64 = {.name = "<int>", .dtype = ALLOY_I64, .shape = no_dims};
static const alloy_value wrapped_f64 = {.name = "<float>", .dtype = ALLOY_F64, .shape = no_dims};
static const alloy_value wrapped_bool = {.name = "<bool>", .dtype = ALLOY_BOOL, .shape = no_dims};

const alloy_value *meta_tensor(const alloy_meta *m, int i) {
  const alloy_arg *a = &m->args[i];
  switch (a->kind) {
    case ALLOY_ARG_VALUE: return a->u.value->kind == ALLOY_VALUE_TENSOR ? a->u.value : NULL;
    case ALLOY_ARG_INT: return &wrapped_i64;
    case ALLOY_ARG_FLOAT: return &wrapped_f64;
    case ALLOY_ARG_BOOL: return &wrapped_bool;
    default: return NULL;
  }
}

int meta_tensor_count(const alloy_meta *m, int i) {
  const alloy_arg *a = &m->args[i];
  return a->kind == ALLOY_ARG_LIST ? a->u.list.n : 0;
}

const alloy_value *meta_tensor_at(const alloy_meta *m, int i, int k) {
  const alloy_arg *a = &m->args[i];
  if (a->kind != ALLOY_ARG_LIST || k < 0 || k >= a->u.list.n) return NULL;
  const alloy_arg *it = &a->u.list.items[k];
  return it->kind == ALLOY_ARG_VALUE ? it->u.value : NULL;
}

static alloy_dim arg_dim(const alloy_arg *a) {
  if (a->kind == ALLOY_ARG_INT) return a->u.i;
  if (a->kind == ALLOY_ARG_VALUE && a->u.value->kind == ALLOY_VALUE_INT)
    return a->u.value->int_value;
  if (a->kind == ALLOY_ARG_BOOL) return alloy_dim_const(a->u.b);
  if (a->kind == ALLOY_ARG_FLOAT) return alloy_dim_const((int64_t)a->u.f);
  return alloy_dim_const(0);
}

alloy_dim meta_dim(const alloy_meta *m, int i) { return arg_dim(&m->args[i]); }

alloy_error *meta_int(alloy_meta *m, int i, int64_t *out) {
  alloy_dim d = meta_dim(m, i);
  if (!alloy_dim_is_const(d)) {
    char buf[128];
    alloy_dim_print(d, buf, sizeof buf);
    return meta_error(m, "argument '%s' must be a concrete integer, got %s",
                      meta_arg_name(m, i), buf);
  }
  *out = d.value;
  return NULL;
}

alloy_error *meta_dims(alloy_meta *m, int i, alloy_dim *out, int cap, int *n) {
  const alloy_arg *a = &m->args[i];
  const alloy_type *t = &m->op->schema->args[i].type;
  if (a->kind == ALLOY_ARG_LIST) {
    if (a->u.list.n > cap)
      return meta_error(m, "argument '%s' has %d items, at most %d supported",
                        meta_arg_name(m, i), a->u.list.n, cap);
    for (int k = 0; k < a->u.list.n; k++) out[k] = arg_dim(&a->u.list.items[k]);
    *n = a->u.list.n;
    return NULL;
  }
  if (a->kind == ALLOY_ARG_NONE) {
    *n = 0;
    return NULL;
  }
  /* A single int for int[N]. */
  int len = t->list_len > 0 ? t->list_len : 1;
  if (len > cap) return meta_error(m, "argument '%s' is too long", meta_arg_name(m, i));
  for (int k = 0; k < len; k++) out[k] = arg_dim(a);
  *n = len;
  return NULL;
}

alloy_error *meta_ints(alloy_meta *m, int i, int64_t *out, int cap, int *n) {
  alloy_dim dims[64];
  alloy_error *e = meta_dims(m, i, dims, cap < 64 ? cap : 64, n);
  if (e) return e;
  for (int k = 0; k < *n; k++) {
    if (!alloy_dim_is_const(dims[k]))
      return meta_error(m, "argument '%s' must hold concrete integers",
                        meta_arg_name(m, i));
    out[k] = dims[k].value;
  }
  return NULL;
}

double meta_float(const alloy_meta *m, int i) {
  const alloy_arg *a = &m->args[i];
  if (a->kind == ALLOY_ARG_FLOAT) return a->u.f;
  if (a->kind == ALLOY_ARG_INT) return (double)a->u.i.value;
  if (a->kind == ALLOY_ARG_BOOL) return a->u.b;
  return 0.0;
}

bool meta_bool(const alloy_meta *m, int i) {
  const alloy_arg *a = &m->args[i];
  if (a->kind == ALLOY_ARG_BOOL) return a->u.b;
  if (a->kind == ALLOY_ARG_INT) return a->u.i.value != 0;
  return false;
}

alloy_dtype meta_dtype_or(const alloy_meta *m, int i, alloy_dtype dflt) {
  const alloy_arg *a = &m->args[i];
  return a->kind == ALLOY_ARG_DTYPE ? a->u.dtype : dflt;
}

const char *meta_str(const alloy_meta *m, int i) {
  const alloy_arg *a = &m->args[i];
  return a->kind == ALLOY_ARG_STR ? a->u.s : NULL;
}

alloy_promo_operand meta_promo_operand(const alloy_meta *m, int i) {
  const alloy_arg *a = &m->args[i];
  alloy_promo_operand op = {ALLOY_PROMO_ABSENT, ALLOY_F32};
  switch (a->kind) {
    case ALLOY_ARG_VALUE: {
      const alloy_value *v = a->u.value;
      if (v->kind == ALLOY_VALUE_TENSOR) {
        op.kind = v->rank ? ALLOY_PROMO_TENSOR : ALLOY_PROMO_ZERO_DIM;
        op.dtype = v->dtype;
      } else {
        op.kind = ALLOY_PROMO_SCALAR;
        op.dtype = v->kind == ALLOY_VALUE_INT ? ALLOY_I64
                   : v->kind == ALLOY_VALUE_BOOL ? ALLOY_BOOL
                                                 : ALLOY_F64;
      }
      break;
    }
    case ALLOY_ARG_INT: op = (alloy_promo_operand){ALLOY_PROMO_SCALAR, ALLOY_I64}; break;
    case ALLOY_ARG_FLOAT: op = (alloy_promo_operand){ALLOY_PROMO_SCALAR, ALLOY_F64}; break;
    case ALLOY_ARG_BOOL: op = (alloy_promo_operand){ALLOY_PROMO_SCALAR, ALLOY_BOOL}; break;
    default: break;
  }
  return op;
}

alloy_error *meta_wrap_dim(alloy_meta *m, int i, int64_t dim, int rank,
                           int *out) {
  int64_t r = rank > 0 ? rank : 1; /* a scalar accepts dim 0 and -1 */
  if (dim < -r || dim >= r)
    return meta_error(m,
                      "argument '%s': dimension out of range (expected to be in "
                      "range of [%lld, %lld], but got %lld)",
                      meta_arg_name(m, i), (long long)-r, (long long)(r - 1),
                      (long long)dim);
  *out = (int)(dim < 0 ? dim + r : dim);
  return NULL;
}

const char *meta_shape_text(const alloy_dim *shape, int rank, char *buf,
                            size_t cap) {
  size_t n = (size_t)snprintf(buf, cap, "[");
  for (int d = 0; d < rank && n < cap; d++) {
    if (d) n += (size_t)snprintf(buf + n, cap - n, ", ");
    if (n < cap) n += alloy_dim_print(shape[d], buf + n, cap - n);
  }
  if (n < cap) snprintf(buf + n, cap - n, "]");
  return buf;
}

alloy_error *meta_broadcast(alloy_meta *m, const alloy_dim *a, int ra,
                            const alloy_dim *b, int rb, alloy_dim *out,
                            int *rout) {
  int r = ra > rb ? ra : rb;
  alloy_dim tmp[ALLOY_MAX_RANK];
  for (int k = 0; k < r; k++) {
    int ia = ra - r + k, ib = rb - r + k;
    if (ia < 0) {
      tmp[k] = b[ib];
    } else if (ib < 0) {
      tmp[k] = a[ia];
    } else {
      alloy_error *e = alloy_dim_broadcast(m->st, a[ia], b[ib], &tmp[k]);
      if (e) return alloy_error_wrap(e, "%s: broadcasting at dimension %d", m->op->name, k);
    }
  }
  memcpy(out, tmp, sizeof *out * (size_t)r);
  *rout = r;
  return NULL;
}

alloy_dim meta_numel(alloy_meta *m, const alloy_dim *shape, int rank) {
  alloy_dim n = alloy_dim_const(1);
  for (int d = 0; d < rank; d++) n = alloy_dim_mul(m->st, n, shape[d]);
  return n;
}

alloy_dim meta_unbacked(alloy_meta *m) {
  char name[32];
  snprintf(name, sizeof name, "u%d", m->unbacked_next++);
  alloy_dim d = alloy_dim_const(0);
  alloy_error *e = alloy_sym_new_unbacked(m->st, name, 0, ALLOY_SYM_INF, &d);
  if (e) {
    /* The name is taken with another range: fall back to a fresh one. */
    alloy_error_free(e);
    d = alloy_sym_unbacked(m->st, 0, ALLOY_SYM_INF);
  }
  return d;
}

alloy_error *meta_set_num_outputs(alloy_meta *m, int n) {
  if (n > m->cap_out) {
    alloy_meta_out *o = realloc(m->outs, sizeof *o * (size_t)n);
    if (!o) return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
    memset(o + m->cap_out, 0, sizeof *o * (size_t)(n - m->cap_out));
    for (int k = m->cap_out; k < n; k++) o[k].kind = (alloy_value_kind)-1;
    m->outs = o;
    m->cap_out = n;
  }
  m->nout = n;
  return NULL;
}

alloy_error *meta_out_tensor(alloy_meta *m, int k, alloy_dtype dtype,
                             const alloy_dim *shape, int rank) {
  if (k < 0 || k >= m->nout)
    return alloy_error_new(ALLOY_ERR_INTERNAL, "%s: shape function wrote output %d of %d",
                           m->op->name, k, m->nout);
  if (rank < 0 || rank > ALLOY_MAX_RANK)
    return meta_error(m, "output rank %d exceeds %d", rank, ALLOY_MAX_RANK);
  alloy_meta_out *o = &m->outs[k];
  o->kind = ALLOY_VALUE_TENSOR;
  o->dtype = dtype;
  o->rank = rank;
  if (rank) memmove(o->shape, shape, sizeof *shape * (size_t)rank);
  return meta_sym_check(m);
}

alloy_error *meta_out_like(alloy_meta *m, int k, const alloy_value *v,
                           alloy_dtype dtype) {
  return meta_out_tensor(m, k, dtype, v->shape, v->rank);
}

alloy_error *meta_out_scalar(alloy_meta *m, int k, alloy_value_kind kind,
                             alloy_dim int_value) {
  if (k < 0 || k >= m->nout)
    return alloy_error_new(ALLOY_ERR_INTERNAL, "%s: shape function wrote output %d of %d",
                           m->op->name, k, m->nout);
  m->outs[k].kind = kind;
  m->outs[k].dtype = kind == ALLOY_VALUE_INT ? ALLOY_I64
                     : kind == ALLOY_VALUE_BOOL ? ALLOY_BOOL
                                                : ALLOY_F64;
  m->outs[k].rank = 0;
  m->outs[k].int_value = int_value;
  return meta_sym_check(m);
}

/* An op PyTorch's CPU kernel does not take in this dtype (ir/meta_dtypes.c):
 * the error names the dtype and the argument it came from. */
static alloy_error *refuse_dtype(alloy_meta *m) {
  const alloy_op *op = m->op;
  int arg = -1;
  alloy_dtype t;
  if (op->refused_by_input || m->nout == 0 || m->outs[0].kind != ALLOY_VALUE_TENSOR) {
    /* Refused when every tensor argument is: igamma(int, float) computes
     * in float, igamma(int, int) in int64, which PyTorch refuses. */
    for (int i = 0; i < m->nargs; i++) {
      const alloy_value *v = m->args[i].kind == ALLOY_ARG_VALUE ? meta_tensor(m, i) : NULL;
      if (!v) continue;
      if (!(op->refused_dtypes & (1u << v->dtype))) return NULL;
      if (arg < 0) arg = i;
    }
    if (arg < 0) return NULL;
    t = meta_tensor(m, arg)->dtype;
  } else {
    t = m->outs[0].dtype;
    for (int i = 0; i < m->nargs && arg < 0; i++)
      if (m->args[i].kind == ALLOY_ARG_VALUE && meta_tensor(m, i)) arg = i;
  }
  if (!(op->refused_dtypes & (1u << t))) return NULL;
  if (arg >= 0)
    return meta_error(m, "PyTorch's CPU kernel does not take %s (argument '%s'%s)",
                      alloy_dtype_name(t), meta_arg_name(m, arg),
                      op->refused_by_input ? "" : ", or the dtype the operands promote to");
  return meta_error(m, "PyTorch's CPU kernel does not make %s tensors (argument 'dtype')",
                    alloy_dtype_name(t));
}

alloy_error *alloy_meta_run(const alloy_op *op, alloy_symtab *st,
                            const alloy_arg *args, alloy_meta *m) {
  m->op = op;
  m->param = op->meta_param;
  m->st = st;
  m->args = args;
  m->nargs = op->schema->nargs;
  if (!op->meta)
    return alloy_error_new(ALLOY_ERR_UNSUPPORTED, "%s has no shape function", op->name);
  /* A Tensor[] return has as many outputs as the shape function says. */
  const alloy_schema *s = op->schema;
  bool list_return = s->nreturns == 1 && s->returns[0].type.list;
  alloy_error *e = meta_set_num_outputs(m, list_return ? 0 : s->nreturns);
  if (!e) e = op->meta(m);
  if (!e) e = meta_sym_check(m);
  if (!e && op->refused_dtypes) e = refuse_dtype(m);
  for (int k = 0; k < m->nout && !e; k++)
    if ((int)m->outs[k].kind < 0)
      e = alloy_error_new(ALLOY_ERR_INTERNAL, "%s: shape function left output %d unset",
                          op->name, k);
  alloy_symtab_clear_error(st);
  return e;
}
