/*
 * ir/meta_functional.c: shape functions of the ops that are other ops
 * (ir/meta_alias.h): the table of aliases (swapaxes is transpose, concat
 * is cat, item is _local_scalar_dense, ...), which their decompositions
 * (decompositions/rules_views.c) read too, and meta_as_op, with which a
 * composite's shape function runs the shape function of the op it is made
 * of. Also the view ops that the functionalization pass
 * (decompositions/functionalize.c) needs: narrow, chunk and _unsafe_view,
 * whose results alias self in PyTorch; here only their types matter.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/meta.h"
#include "ir/meta_alias.h"

/* narrow(self, dim, start, length): self with dim shrunk to length. */
static alloy_error *meta_narrow(alloy_meta *m) {
  const alloy_value *v = meta_tensor(m, 0);
  if (!v || v->rank == 0) return meta_error(m, "narrow() cannot be applied to a 0-dim tensor.");
  int64_t dim;
  int d;
  alloy_error *e = meta_int(m, 1, &dim);
  if (!e) e = meta_wrap_dim(m, 1, dim, v->rank, &d);
  if (e) return e;
  alloy_dim len = meta_dim(m, 3), start = meta_dim(m, 2), n = v->shape[d];
  if (alloy_dim_is_const(len) && len.value < 0) return meta_error(m, "narrow(): length must be non-negative.");
  if (alloy_dim_is_const(start) && alloy_dim_is_const(n) && alloy_dim_is_const(len)) {
    int64_t s = start.value < 0 ? start.value + n.value : start.value;
    if (s < 0 || s > n.value || len.value > n.value - s)
      return meta_error(m, "start (%lld) + length (%lld) exceeds dimension size (%lld).",
                        (long long)start.value, (long long)len.value, (long long)n.value);
  }
  alloy_dim out[ALLOY_MAX_RANK];
  for (int k = 0; k < v->rank; k++) out[k] = k == d ? len : v->shape[k];
  return meta_out_tensor(m, 0, v->dtype, out, v->rank);
}

/* chunk(self, chunks, dim): pieces of ceil(n / chunks), the last smaller;
 * there may be fewer than chunks of them, as in PyTorch. */
static alloy_error *meta_chunk(alloy_meta *m) {
  const alloy_value *v = meta_tensor(m, 0);
  if (!v || v->rank == 0) return meta_error(m, "chunk expects at least a 1-dimensional tensor");
  int64_t chunks, dim;
  int d;
  alloy_error *e = meta_int(m, 1, &chunks);
  if (!e) e = meta_int(m, 2, &dim);
  if (!e) e = meta_wrap_dim(m, 2, dim, v->rank, &d);
  if (e) return e;
  if (chunks <= 0) return meta_error(m, "chunk expects `chunks` to be greater than 0, got: %lld", (long long)chunks);
  if (!alloy_dim_is_const(v->shape[d]))
    return meta_error(m, "chunk: the size of dim %d must be concrete", d);
  /* Ceiling divisions written so that nothing overflows. */
  int64_t n = v->shape[d].value, size = n / chunks + (n % chunks != 0);
  int64_t count = size ? n / size + (n % size != 0) : 1;
  if (count < 1) count = 1;
  if ((e = meta_set_num_outputs(m, count))) return e;
  alloy_dim out[ALLOY_MAX_RANK];
  for (int k = 0; k < v->rank; k++) out[k] = v->shape[k];
  for (int64_t i = 0; i < count && !e; i++) {
    int64_t len = n - i * size < size ? n - i * size : size;
    out[d] = alloy_dim_const(size ? len : 0);
    e = meta_out_tensor(m, (int)i, v->dtype, out, v->rank);
  }
  return e;
}

/* _unsafe_view(self, size): view's shape (one -1 inferred). */
static alloy_error *meta_unsafe_view(alloy_meta *m) {
  const alloy_value *v = meta_tensor(m, 0);
  alloy_dim size[ALLOY_MAX_RANK];
  int n;
  alloy_error *e = meta_dims(m, 1, size, ALLOY_MAX_RANK, &n);
  if (e) return e;
  alloy_dim numel = meta_numel(m, v->shape, v->rank), known = alloy_dim_const(1);
  int infer = -1;
  for (int k = 0; k < n; k++) {
    if (alloy_dim_is_const(size[k]) && size[k].value == -1) {
      if (infer >= 0) return meta_error(m, "only one dimension can be inferred");
      infer = k;
    } else {
      known = alloy_dim_mul(m->st, known, size[k]);
    }
  }
  if (infer >= 0) size[infer] = alloy_dim_floordiv(m->st, numel, known);
  if ((e = meta_sym_check(m))) return e;
  return meta_out_tensor(m, 0, v->dtype, size, n);
}

/* --- running another op's shape function --------------------------------------*/

enum { VIA_MAX_ARGS = 64 };

alloy_error *meta_run_op(alloy_meta *m, const char *name, const alloy_arg *args, int n,
                         alloy_meta *out) {
  *out = (alloy_meta){.node_name = m->node_name, .unbacked_next = m->unbacked_next};
  const alloy_op *op = alloy_op_find(name);
  if (!op)
    return alloy_error_new(ALLOY_ERR_INTERNAL, "%s: its shape function names unknown op %s",
                           m->op->name, name);
  const alloy_schema *s = op->schema;
  if (s->nargs > VIA_MAX_ARGS || n > s->nargs)
    return alloy_error_new(ALLOY_ERR_INTERNAL, "%s: %d arguments for %s", m->op->name, n, name);
  alloy_arg full[VIA_MAX_ARGS];
  for (int j = 0; j < s->nargs; j++) {
    if (j < n) {
      full[j] = args[j];
    } else if (s->args[j].has_default) {
      full[j] = s->args[j].default_value;
    } else {
      return alloy_error_new(ALLOY_ERR_INTERNAL, "%s: argument '%s' of %s not given",
                             m->op->name, s->args[j].name, name);
    }
  }
  alloy_error *e = alloy_meta_run(op, m->st, full, out);
  m->unbacked_next = out->unbacked_next;
  return e;
}

alloy_error *meta_as_op(alloy_meta *m, const char *name, const alloy_arg *args, int n, int first) {
  alloy_meta fm;
  alloy_error *e = meta_run_op(m, name, args, n, &fm);
  const alloy_schema *ms = m->op->schema;
  bool list = ms->nreturns == 1 && ms->returns[0].type.list;
  int want = list ? fm.nout - first : ms->nreturns;
  if (!e && (want < 0 || first + want > fm.nout))
    e = alloy_error_new(ALLOY_ERR_INTERNAL, "%s: %s gives %d outputs, %d wanted from %d",
                        m->op->name, name, fm.nout, want, first);
  if (!e && list) e = meta_set_num_outputs(m, want);
  for (int k = 0; k < want && !e; k++) m->outs[k] = fm.outs[first + k];
  free(fm.outs);
  return e;
}

/* --- aliases --------------------------------------------------------------------
 * Each row: the op, the op it is, the target's output that is the op's
 * first, and where each of the target's arguments comes from. */

#define ALIAS_ROW(op, as, first, real, ...) \
  {op, as, first, (int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int)), {__VA_ARGS__}, real},

static const meta_alias aliases[] = {ALLOY_META_ALIASES(ALIAS_ROW)};

const meta_alias *meta_alias_find(const char *op) {
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (!strcmp(aliases[i].op, op)) return &aliases[i];
  return NULL;
}

alloy_arg meta_alias_arg(const meta_alias *a, int j, const alloy_arg *src) {
  int from = a->args[j];
  if (from >= 0) return src[from];
  switch (from) {
    case ALIAS_FALSE: return alloy_arg_bool(false);
    case ALIAS_TRUE: return alloy_arg_bool(true);
    case ALIAS_ZERO: return alloy_arg_int(0);
    case ALIAS_ONE: return alloy_arg_int(1);
    case ALIAS_MINUS_ONE: return alloy_arg_int(-1);
    case ALIAS_NONE: return alloy_arg_none();
    default: return alloy_arg_dtype((alloy_dtype)(ALIAS_DTYPE_BASE - from));
  }
}

/* The shape function of every row: the target's, on the mapped arguments. */
static alloy_error *meta_aliased(alloy_meta *m) {
  const meta_alias *a = meta_alias_find(m->op->name);
  if (!a) return alloy_error_new(ALLOY_ERR_INTERNAL, "%s: not in the alias table", m->op->name);
  alloy_arg args[ALIAS_MAX_ARGS];
  for (int j = 0; j < a->nargs; j++) args[j] = meta_alias_arg(a, j, m->args);
  return meta_as_op(m, a->as, args, a->nargs, a->first_out);
}

/* --- the table ---------------------------------------------------------------- */

const alloy_meta_entry alloy_meta_functional[] = {
    {"aten.narrow.default", meta_narrow, 0},
    {"aten.chunk.default", meta_chunk, 0},
    {"aten._unsafe_view.default", meta_unsafe_view, 0},
    /* aliases: the shape function of the op they are */
#define META_ROW(op, ...) {op, meta_aliased, 0},
    ALLOY_META_ALIASES(META_ROW)
#undef META_ROW
    {NULL, NULL, 0},
};
