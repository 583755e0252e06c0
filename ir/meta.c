/*
 * ir/meta.c: the helpers shape functions are written with (see ir/meta.h)
 * and alloy_meta_run, which calls an op's shape function and checks that it
 * produced every output its schema promises.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/checked.h"
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
  if (a->kind == ALLOY_ARG_FLOAT) { /* truncated; saturated where a cast is undefined */
    int64_t v;
    if (!alloy_checked_from_double(a->u.f, &v)) v = a->u.f > 0 ? INT64_MAX : a->u.f < 0 ? INT64_MIN : 0;
    return alloy_dim_const(v);
  }
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

alloy_error *meta_set_num_outputs(alloy_meta *m, int64_t n) {
  if (n < 0 || n > META_MAX_OUTPUTS)
    return meta_error(m, "%lld outputs: a node has at most %d", (long long)n, META_MAX_OUTPUTS);
  if (n > m->cap_out) {
    alloy_meta_out *o = realloc(m->outs, sizeof *o * (size_t)n);
    if (!o) return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
    memset(o + m->cap_out, 0, sizeof *o * (size_t)(n - m->cap_out));
    for (int k = m->cap_out; k < n; k++) o[k].kind = (alloy_value_kind)-1;
    m->outs = o;
    m->cap_out = (int)n;
  }
  m->nout = (int)n;
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

/* The low end of dim d's range, at least 0 when d may be negative only
 * because its range is unknown; *negative when d is surely negative. */
static int64_t dim_low(alloy_dim d, bool *negative) {
  int64_t lo, hi;
  if (alloy_dim_is_const(d)) lo = hi = d.value;
  else alloy_dim_range(d, &lo, &hi);
  *negative = hi < 0;
  return lo > 0 ? lo : 0;
}

/* alloy_type_fits with a storage offset (in elements) for the strided case. */
static bool type_fits_at(alloy_dtype dtype, const alloy_dim *shape, const alloy_dim *strides,
                         alloy_dim offset, int rank, char *why, size_t cap) {
  int64_t sizes[ALLOY_MAX_RANK];
  size_t itemsize = alloy_dtype_size(dtype);
  if (rank < 0 || rank > ALLOY_MAX_RANK) {
    snprintf(why, cap, "rank %d is not in [0, %d]", rank, ALLOY_MAX_RANK);
    return false;
  }
  for (int d = 0; d < rank; d++) {
    bool negative;
    sizes[d] = dim_low(shape[d], &negative);
    if (negative) {
      char b[64];
      alloy_dim_print(shape[d], b, sizeof b);
      snprintf(why, cap, "its size %s at dimension %d is negative", b, d);
      return false;
    }
  }
  /* Contiguous: every dim counted as at least 1 (ir/checked.h). */
  if (!alloy_checked_tensor_bytes(sizes, rank, itemsize ? itemsize : 1, NULL, NULL)) {
    int64_t bytes = itemsize ? (int64_t)itemsize : 1;
    bool exact = true;
    for (int d = 0; d < rank && exact; d++)
      exact = alloy_checked_mul(bytes, sizes[d] > 1 ? sizes[d] : 1, &bytes);
    if (exact)
      snprintf(why, cap, "it spans %lld bytes, and a tensor may span at most %s",
               (long long)bytes, ALLOY_MAX_TENSOR_BYTES_TEXT);
    else
      snprintf(why, cap, "it spans over 2^63 bytes, and a tensor may span at most %s",
               ALLOY_MAX_TENSOR_BYTES_TEXT);
    return false;
  }
  if (!strides) return true;
  /* Strided (an input laid out by its producer): the storage it reaches. */
  int64_t st[ALLOY_MAX_RANK], lo, hi, end;
  bool empty;
  for (int d = 0; d < rank; d++) {
    int64_t l, h;
    if (alloy_dim_is_const(strides[d])) l = h = strides[d].value;
    else alloy_dim_range(strides[d], &l, &h);
    /* The smallest |stride| the range allows: the reach is at least that. */
    st[d] = l > 0 ? l : h < 0 && h > INT64_MIN ? -h : 0;
  }
  bool negative;
  int64_t off = dim_low(offset, &negative);
  if (!alloy_checked_span(sizes, st, rank, &lo, &hi, &empty) || !alloy_checked_add(hi, off, &hi) ||
      !alloy_checked_add(hi, 1, &end) ||
      !alloy_checked_mul(end, itemsize ? (int64_t)itemsize : 1, &end) ||
      end > ALLOY_MAX_TENSOR_BYTES) {
    snprintf(why, cap, "its strides reach past byte %s, the most a tensor may span",
             ALLOY_MAX_TENSOR_BYTES_TEXT);
    return false;
  }
  return true;
}

bool alloy_type_fits(alloy_dtype dtype, const alloy_dim *shape, const alloy_dim *strides, int rank,
                     char *why, size_t cap) {
  return type_fits_at(dtype, shape, strides, alloy_dim_const(0), rank, why, cap);
}

alloy_error *meta_check_window(alloy_meta *m, alloy_dtype dtype, const alloy_dim *size,
                               const alloy_dim *stride, int rank, alloy_dim offset) {
  char why[160];
  if (type_fits_at(dtype, size, stride, offset, rank, why, sizeof why)) return NULL;
  char s[256], t[256], o[64], node[160] = "";
  meta_shape_text(size, rank, s, sizeof s);
  meta_shape_text(stride, rank, t, sizeof t);
  alloy_dim_print(offset, o, sizeof o);
  if (m->node_name) snprintf(node, sizeof node, " of node '%s'", m->node_name);
  return meta_error(m, "the window%s (size %s, stride %s, storage offset %s) is too large: %s",
                    node, s, t, o, why);
}

/* Output k's size fits the ceiling of ir/checked.h: a tensor larger than
 * any memory, or with a negative size, is a type error here, before any
 * backend computes its bytes. */
static alloy_error *check_out_size(alloy_meta *m, int k) {
  const alloy_meta_out *o = &m->outs[k];
  char why[160];
  if (o->kind != ALLOY_VALUE_TENSOR || alloy_type_fits(o->dtype, o->shape, NULL, o->rank, why, sizeof why))
    return NULL;
  char dims[256], node[160] = "";
  meta_shape_text(o->shape, o->rank, dims, sizeof dims);
  if (m->node_name) snprintf(node, sizeof node, " of node '%s'", m->node_name);
  return meta_error(m, "output %d%s (%s%s) is too large: %s", k, node,
                    alloy_dtype_short_name(o->dtype), dims, why);
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

/* The shape function of an in-place, out= or mutable op that has none of its own:
 * its functional twin's, on the arguments the registry maps, after which
 * every written tensor must hold the result as PyTorch requires (the
 * result broadcasts to it: add_ of [3] into [2, 3] works, of [2, 3] into
 * [3] does not; Alloy does not resize an out= tensor), and the op's results
 * are the written tensors. */
static alloy_error *meta_mutation(alloy_meta *m) {
  const alloy_op *op = m->op, *fop = op->functional;
  int w[16], nw = alloy_op_written_args(op, w, 16);
  int nf = fop->schema->nargs;
  if (!nw || nf > 64) return meta_error(m, "%s: cannot map its arguments to %s", op->name, fop->name);
  const alloy_value *written[16];
  for (int k = 0; k < nw; k++)
    if (!(written[k] = meta_tensor(m, w[k])))
      return meta_error(m, "argument '%s' must be a tensor", meta_arg_name(m, w[k]));
  alloy_arg fargs[64];
  for (int j = 0; j < nf; j++) {
    int i = alloy_op_functional_arg(op, j);
    fargs[j] = i >= 0                      ? m->args[i]
               : i == ALLOY_FARG_OUT_DTYPE ? alloy_arg_dtype(written[0]->dtype)
               : i == ALLOY_FARG_DEFAULT   ? fop->schema->args[j].default_value
                                           : alloy_arg_none();
  }
  alloy_meta fm = {.node_name = m->node_name, .unbacked_next = m->unbacked_next};
  alloy_error *e = alloy_meta_run(fop, m->st, fargs, &fm);
  m->unbacked_next = fm.unbacked_next;
  /* An in-place view op (as_strided_, squeeze_) writes no data: self takes
   * the geometry of the view its twin makes, as functionalize.c has it. */
  if (!e && alloy_op_kind_of(fop) == ALLOY_OP_VIEW) {
    for (int k = 0; k < op->schema->nreturns && !e; k++)
      if (k >= fm.nout) e = meta_error(m, "%s gives no result %d", fop->name, k);
      else m->outs[k] = fm.outs[k];
    free(fm.outs);
    return e;
  }
  /* The written tensors' new values: the twin's results, or, for a mutable
   * op's _functional form, the results after the op's own. */
  const alloy_schema *s = op->schema;
  int first = alloy_op_functional_appends(op) ? s->nreturns : 0;
  for (int k = 0; k < nw && !e; k++) {
    if (first + k >= fm.nout || fm.outs[first + k].kind != ALLOY_VALUE_TENSOR) {
      e = meta_error(m, "%s gives no tensor for argument '%s'", fop->name, meta_arg_name(m, w[k]));
      break;
    }
    const alloy_meta_out *r = &fm.outs[first + k];
    alloy_dim b[ALLOY_MAX_RANK];
    int rb = 0;
    const alloy_dim *ws = alloy_value_shape(written[k]);
    int rw = alloy_value_rank(written[k]);
    alloy_error *no_fit = meta_broadcast(m, r->shape, r->rank, ws, rw, b, &rb);
    bool fits = !no_fit && rb == rw;
    alloy_error_free(no_fit); /* the message below says it better */
    for (int d = 0; fits && d < rb; d++) fits = alloy_dim_same(b[d], ws[d]);
    if (!fits) {
      char have[128], want[128];
      e = meta_error(m, "output with shape %s doesn't match the broadcast shape %s (argument '%s')",
                     meta_shape_text(ws, rw, have, sizeof have),
                     meta_shape_text(r->shape, r->rank, want, sizeof want), meta_arg_name(m, w[k]));
    }
  }
  alloy_symtab_clear_error(m->st);
  for (int k = 0; k < s->nreturns && !e; k++) {
    if (first) { /* the op's own results are the twin's first ones */
      if (k >= fm.nout) e = meta_error(m, "%s gives no result %d", fop->name, k);
      else m->outs[k] = fm.outs[k];
    } else {
      const alloy_value *v = written[k < nw ? k : 0];
      e = s->returns[k].type.kind == ALLOY_TYPE_TENSOR && !s->returns[k].type.list
              ? meta_out_like(m, k, v, v->dtype)
              : meta_error(m, "%s: return %d is not a tensor", op->name, k);
    }
  }
  free(fm.outs);
  return e;
}

alloy_error *alloy_meta_run(const alloy_op *op, alloy_symtab *st,
                            const alloy_arg *args, alloy_meta *m) {
  m->op = op;
  m->param = op->meta_param;
  m->st = st;
  m->args = args;
  m->nargs = op->schema->nargs;
  alloy_meta_fn fn = op->meta;
  if (!fn && op->functional && op->functional->meta) fn = meta_mutation;
  if (!fn) return alloy_error_new(ALLOY_ERR_UNSUPPORTED, "%s has no shape function", op->name);
  /* A Tensor[] return has as many outputs as the shape function says. */
  const alloy_schema *s = op->schema;
  bool list_return = s->nreturns == 1 && s->returns[0].type.list;
  alloy_error *e = meta_set_num_outputs(m, list_return ? 0 : s->nreturns);
  if (!e) e = fn(m);
  if (!e) e = meta_sym_check(m);
  if (!e && op->refused_dtypes) e = refuse_dtype(m);
  for (int k = 0; k < m->nout && !e; k++)
    if ((int)m->outs[k].kind < 0)
      e = alloy_error_new(ALLOY_ERR_INTERNAL, "%s: shape function left output %d unset",
                          op->name, k);
  for (int k = 0; k < m->nout && !e; k++) e = check_out_size(m, k);
  alloy_symtab_clear_error(st);
  return e;
}
