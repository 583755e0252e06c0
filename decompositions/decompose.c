/*
 * decompositions/decompose.c: the decomposition pass and the rule-writing
 * helpers of decomp.h.
 *
 * The pass rewrites a graph round by round. Each round copies the graph
 * node by node into a new one; a node the caller's accept() refuses and for
 * which a rule exists is replaced by what the rule builds, and the old
 * node's outputs are mapped to the rule's results. Nodes a rule builds can
 * themselves be refused in the next round and be decomposed further, to a
 * fixed point. Every node remembers the chain of ops it was decomposed from
 * (its lineage); a rule is not applied to a node whose op is in its own
 * lineage, so a rule that (directly or through others) produces the op it
 * replaces stops instead of looping.
 *
 * A rule's result for each output must have the output's dtype and shape:
 * the pass checks this, so a wrong rule is an error naming it, not a silent
 * change of the graph's types.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decompositions/decomp.h"
#include "decompositions/rules.h"
#include "ir/graph_internal.h"

/* --- the rule tables --------------------------------------------------------*/

static const decomp_rule *find_in(const decomp_rule *table, const char *op, decomp_level level);

static const decomp_rule *const families[] = {
    decomp_rules_activation, decomp_rules_nn,        decomp_rules_pooling,
    decomp_rules_losses,     decomp_rules_resample,
    decomp_rules_shape,      decomp_rules_einsum,    decomp_rules_reduce,
    decomp_rules_pointwise,  decomp_rules_views,     decomp_rules_conv,
    decomp_rules_rnn,        decomp_rules_backward,  decomp_rules_backward_nn, decomp_rules_random,
    decomp_rules_backward_seq,
    decomp_rules_fft,        decomp_rules_linalg,
    decomp_prims_pointwise,  decomp_prims_reduce,    decomp_prims_shape,
};

const decomp_rule *decomp_find(const char *op, decomp_level level) {
  for (size_t f = 0; f < sizeof families / sizeof *families; f++) {
    const decomp_rule *r = find_in(families[f], op, level);
    if (r) return r;
  }
  return NULL;
}

int decomp_rule_count(void) {
  int n = 0;
  for (size_t f = 0; f < sizeof families / sizeof *families; f++)
    for (const decomp_rule *r = families[f]; r->op; r++) n++;
  return n;
}

const decomp_rule *decomp_rule_at(int i) {
  for (size_t f = 0; f < sizeof families / sizeof *families; f++)
    for (const decomp_rule *r = families[f]; r->op; r++)
      if (i-- == 0) return r;
  return NULL;
}

/* The rule that takes op one level down: to core for a non-core op, to
 * prims for a core one. */
static const decomp_rule *find_in(const decomp_rule *table, const char *op, decomp_level level) {
  for (const decomp_rule *r = table; r->op; r++)
    if (r->level == level && !strcmp(r->op, op)) return r;
  return NULL;
}

static const decomp_rule *rule_for(const decomp_options *o, const alloy_op *op) {
  uint32_t tags = alloy_op_tags(op);
  if (tags & ALLOY_TAG_PRIM) return NULL;
  const char *name = alloy_op_name(op);
  if (o->rules) {
    const decomp_rule *r = find_in(o->rules, name, DECOMP_TO_CORE);
    return r ? r : find_in(o->rules, name, DECOMP_TO_PRIMS);
  }
  const decomp_rule *r = decomp_find(name, DECOMP_TO_CORE);
  return r ? r : decomp_find(name, DECOMP_TO_PRIMS);
}

/* The scalar operators on SymInts (_operator.*, torch.sym_*) are not tensor
 * ops at all: every level keeps them. */
static bool is_scalar_op(const alloy_op *op) {
  const char *name = alloy_op_name(op);
  return !strncmp(name, "_operator.", 10) || !strncmp(name, "torch.", 6) ||
         !strncmp(name, "math.", 5);
}

bool decomp_accept_core(const alloy_graph *g, int i, void *ctx) {
  (void)ctx;
  const alloy_op *op = alloy_node_op(alloy_graph_node(g, i));
  return (alloy_op_tags(op) & (ALLOY_TAG_CORE | ALLOY_TAG_PRIM)) || is_scalar_op(op);
}

bool decomp_accept_prims(const alloy_graph *g, int i, void *ctx) {
  (void)ctx;
  const alloy_op *op = alloy_node_op(alloy_graph_node(g, i));
  return (alloy_op_tags(op) & ALLOY_TAG_PRIM) || is_scalar_op(op);
}

/* --- the rule context ---------------------------------------------------------*/

enum { MAX_OUTS = 64 };

struct decomp {
  alloy_graph *g;          /* the graph being built */
  const alloy_node *node;  /* the copy of the node being replaced, in g */
  const decomp_rule *rule;
  alloy_value *outs[MAX_OUTS];
  bool set[MAX_OUTS];
  alloy_error *err;
  char *decline;
  alloy_arena scratch;     /* list arguments of this rule's D() calls */
};

static alloy_error *oom(void) {
  return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
}

void *d_fail(decomp *d, const char *fmt, ...) {
  if (d->err) return NULL;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  d->err = alloy_error_new(ALLOY_ERR_INTERNAL, "%s", msg);
  return NULL;
}

void d_decline(decomp *d, const char *fmt, ...) {
  if (d->decline || d->err) return;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  d->decline = strdup(msg);
  if (!d->decline) d->err = oom();
}

bool d_failed(const decomp *d) { return d->err || d->decline; }
const alloy_node *d_node(const decomp *d) { return d->node; }
alloy_symtab *d_symtab(decomp *d) { return alloy_graph_symtab(d->g); }

static const char *arg_name(const decomp *d, int i) {
  const alloy_schema *s = alloy_op_schema(alloy_node_op(d->node));
  return i >= 0 && i < alloy_schema_num_args(s) ? alloy_schema_arg_at(s, i)->name : "?";
}

const alloy_arg *d_arg(decomp *d, int i) {
  if (i < 0 || i >= alloy_node_num_args(d->node)) {
    d_fail(d, "argument %d does not exist", i);
    static const alloy_arg none = {ALLOY_ARG_NONE, {0}};
    return &none;
  }
  return alloy_node_arg(d->node, i);
}

bool d_is_none(decomp *d, int i) { return d_arg(d, i)->kind == ALLOY_ARG_NONE; }

alloy_value *d_tensor(decomp *d, int i) {
  const alloy_arg *a = d_arg(d, i);
  if (a->kind == ALLOY_ARG_NONE) return NULL;
  if (a->kind != ALLOY_ARG_VALUE) return d_fail(d, "argument '%s' is not a tensor", arg_name(d, i));
  return a->u.value;
}

int d_tensor_count(decomp *d, int i) {
  const alloy_arg *a = d_arg(d, i);
  if (a->kind != ALLOY_ARG_LIST) {
    d_fail(d, "argument '%s' is not a list", arg_name(d, i));
    return 0;
  }
  return a->u.list.n;
}

alloy_value *d_tensor_at(decomp *d, int i, int k) {
  const alloy_arg *a = d_arg(d, i);
  if (a->kind != ALLOY_ARG_LIST || k < 0 || k >= a->u.list.n)
    return d_fail(d, "argument '%s' has no item %d", arg_name(d, i), k);
  const alloy_arg *it = &a->u.list.items[k];
  return it->kind == ALLOY_ARG_VALUE ? it->u.value : NULL;
}

/* An int item: a literal, a symbolic dim, or a SymInt value's dim. */
static bool item_dim(const alloy_arg *a, alloy_dim *out) {
  if (a->kind == ALLOY_ARG_INT) return *out = a->u.i, true;
  if (a->kind == ALLOY_ARG_BOOL) return *out = alloy_dim_const(a->u.b), true;
  if (a->kind == ALLOY_ARG_VALUE && alloy_value_kind_of(a->u.value) == ALLOY_VALUE_INT) {
    alloy_value_type t;
    alloy_value_get_type(a->u.value, &t);
    return *out = t.int_value, true;
  }
  return false;
}

alloy_dim d_dim(decomp *d, int i) {
  alloy_dim v = alloy_dim_const(0);
  if (!item_dim(d_arg(d, i), &v)) d_fail(d, "argument '%s' is not an integer", arg_name(d, i));
  return v;
}

int64_t d_int(decomp *d, int i) {
  alloy_dim v = d_dim(d, i);
  if (!alloy_dim_is_const(v)) d_fail(d, "argument '%s' is symbolic", arg_name(d, i));
  return alloy_dim_is_const(v) ? v.value : 0;
}

int d_dims(decomp *d, int i, alloy_dim *out, int cap) {
  const alloy_arg *a = d_arg(d, i);
  if (a->kind == ALLOY_ARG_NONE) return -1;
  if (a->kind != ALLOY_ARG_LIST) {
    /* A single int given for int[N] */
    if (cap > 0 && item_dim(a, &out[0])) return 1;
    d_fail(d, "argument '%s' is not a list of integers", arg_name(d, i));
    return 0;
  }
  int n = a->u.list.n < cap ? a->u.list.n : cap;
  for (int k = 0; k < n; k++)
    if (!item_dim(&a->u.list.items[k], &out[k])) {
      d_fail(d, "argument '%s' item %d is not an integer", arg_name(d, i), k);
      return 0;
    }
  return n;
}

int d_ints(decomp *d, int i, int64_t *out, int cap) {
  alloy_dim dims[ALLOY_MAX_RANK * 4];
  int n = d_dims(d, i, dims, cap < (int)(sizeof dims / sizeof *dims) ? cap : (int)(sizeof dims / sizeof *dims));
  for (int k = 0; k < n; k++) {
    if (!alloy_dim_is_const(dims[k])) {
      d_fail(d, "argument '%s' item %d is symbolic", arg_name(d, i), k);
      return 0;
    }
    out[k] = dims[k].value;
  }
  return n;
}

double d_float(decomp *d, int i) {
  const alloy_arg *a = d_arg(d, i);
  if (a->kind == ALLOY_ARG_FLOAT) return a->u.f;
  if (a->kind == ALLOY_ARG_INT && alloy_dim_is_const(a->u.i)) return (double)a->u.i.value;
  if (a->kind == ALLOY_ARG_BOOL) return a->u.b;
  d_fail(d, "argument '%s' is not a number", arg_name(d, i));
  return 0;
}

bool d_bool(decomp *d, int i) {
  const alloy_arg *a = d_arg(d, i);
  if (a->kind == ALLOY_ARG_BOOL) return a->u.b;
  if (a->kind == ALLOY_ARG_INT && alloy_dim_is_const(a->u.i)) return a->u.i.value != 0;
  d_fail(d, "argument '%s' is not a bool", arg_name(d, i));
  return false;
}

alloy_dtype d_dtype_or(decomp *d, int i, alloy_dtype dflt) {
  const alloy_arg *a = d_arg(d, i);
  if (a->kind == ALLOY_ARG_DTYPE) return a->u.dtype;
  if (a->kind != ALLOY_ARG_NONE) d_fail(d, "argument '%s' is not a dtype", arg_name(d, i));
  return dflt;
}

const char *d_str(decomp *d, int i) {
  const alloy_arg *a = d_arg(d, i);
  if (a->kind == ALLOY_ARG_STR) return a->u.s;
  if (a->kind != ALLOY_ARG_NONE) d_fail(d, "argument '%s' is not a string", arg_name(d, i));
  return NULL;
}

alloy_dtype d_dtype(const alloy_value *v) { return alloy_value_dtype(v); }

alloy_dtype d_out_dtype(decomp *d, int k) {
  if (k < 0 || k >= alloy_node_num_outputs(d->node)) {
    d_fail(d, "the op has no output %d", k);
    return ALLOY_F32;
  }
  return alloy_value_dtype(alloy_node_output(d->node, k));
}

alloy_dtype d_opmath(alloy_dtype t) { return t == ALLOY_F16 || t == ALLOY_BF16 ? ALLOY_F32 : t; }

alloy_value *d_to(decomp *d, alloy_value *x, alloy_dtype t) {
  if (!x || alloy_value_dtype(x) == t) return x;
  return D(d, "aten._to_copy.default", V(x), DT(t));
}
int d_rank(const alloy_value *v) { return alloy_value_rank(v); }
const alloy_dim *d_shape(const alloy_value *v) { return alloy_value_shape(v); }

bool d_known_empty(const alloy_value *v) {
  for (int k = 0; k < d_rank(v); k++)
    if (alloy_dim_is_const(d_shape(v)[k]) && d_shape(v)[k].value == 0) return true;
  return false;
}

int d_wrap_dim(decomp *d, int64_t dim, int rank) {
  int64_t r = rank > 0 ? rank : 1;
  if (dim < -r || dim >= r) {
    d_fail(d, "dimension %lld out of range for rank %d", (long long)dim, rank);
    return 0;
  }
  return (int)(dim < 0 ? dim + r : dim);
}

/* --- building ------------------------------------------------------------------*/

static alloy_arg *scratch_items(decomp *d, int n) {
  alloy_arg *items = alloy_arena_alloc(&d->scratch, sizeof *items * (size_t)(n ? n : 1));
  if (!items && !d->err) d->err = oom();
  return items;
}

alloy_arg d_dim_list(decomp *d, const alloy_dim *dims, int n) {
  alloy_arg *items = scratch_items(d, n);
  for (int k = 0; items && k < n; k++) items[k] = alloy_arg_dim(dims[k]);
  return alloy_arg_list(items, items ? n : 0);
}

alloy_arg d_int_list(decomp *d, const int64_t *v, int n) {
  alloy_arg *items = scratch_items(d, n);
  for (int k = 0; items && k < n; k++) items[k] = alloy_arg_int(v[k]);
  return alloy_arg_list(items, items ? n : 0);
}

alloy_arg d_value_list(decomp *d, alloy_value *const *v, int n) {
  alloy_arg *items = scratch_items(d, n);
  for (int k = 0; items && k < n; k++) items[k] = v[k] ? alloy_arg_value(v[k]) : alloy_arg_none();
  return alloy_arg_list(items, items ? n : 0);
}

int d_op_n(decomp *d, const char *name, const alloy_arg *args, int nargs, alloy_value **outs,
           int cap) {
  if (d->err || d->decline) return 0;
  const alloy_op *op = alloy_op_find(name);
  if (!op) {
    d_fail(d, "unknown op '%s'", name);
    return 0;
  }
  alloy_node *n;
  alloy_error *e = alloy_graph_add_node_ordered(d->g, op, args, nargs, NULL, &n);
  if (e) {
    d->err = e;
    return 0;
  }
  int nout = alloy_node_num_outputs(n);
  for (int k = 0; k < nout && k < cap; k++) outs[k] = alloy_node_output(n, k);
  return nout;
}

alloy_value *d_op(decomp *d, const char *name, const alloy_arg *args, int nargs) {
  alloy_value *out = NULL;
  int n = d_op_n(d, name, args, nargs, &out, 1);
  if (n == 0 && !d->err && !d->decline) d_fail(d, "%s has no output", name);
  return n ? out : NULL;
}

void d_out(decomp *d, int k, alloy_value *v) {
  if (d->err || d->decline) return;
  if (k < 0 || k >= alloy_node_num_outputs(d->node) || k >= MAX_OUTS) {
    d_fail(d, "the op has no output %d", k);
    return;
  }
  if (!v) {
    d_fail(d, "output %d: no value (an earlier step failed)", k);
    return;
  }
  d->outs[k] = v;
  d->set[k] = true;
}

void d_out_unused(decomp *d, int k) {
  if (k >= 0 && k < MAX_OUTS) d->set[k] = true;
}

/* --- the pass --------------------------------------------------------------------*/

/* Lineage: the ops a node was decomposed from, as a chain in a pool. */
typedef struct lineage {
  int op_id;
  int parent; /* index in the pool, -1 at the root */
} lineage;

typedef struct pass {
  lineage *pool;
  int npool, cap_pool;
  int *of_node; /* by node position in the current graph: pool index or -1 */
} pass;

static bool in_lineage(const pass *p, int at, int op_id) {
  for (; at >= 0; at = p->pool[at].parent)
    if (p->pool[at].op_id == op_id) return true;
  return false;
}

static int lineage_push(pass *p, int parent, int op_id) {
  if (p->npool == p->cap_pool) {
    int cap = p->cap_pool ? 2 * p->cap_pool : 256;
    lineage *np = realloc(p->pool, sizeof *np * (size_t)cap);
    if (!np) return -2;
    p->pool = np;
    p->cap_pool = cap;
  }
  p->pool[p->npool] = (lineage){op_id, parent};
  return p->npool++;
}

static bool same_type(alloy_symtab *st, const alloy_value *a, const alloy_value *b) {
  if (alloy_value_kind_of(a) != alloy_value_kind_of(b)) return false;
  if (alloy_value_kind_of(a) != ALLOY_VALUE_TENSOR) return true;
  if (alloy_value_dtype(a) != alloy_value_dtype(b) || alloy_value_rank(a) != alloy_value_rank(b))
    return false;
  for (int i = 0; i < alloy_value_rank(a); i++) {
    alloy_dim x = alloy_value_shape(a)[i], y = alloy_value_shape(b)[i];
    if (!alloy_dim_same(x, y) && alloy_dim_eq(st, x, y) != ALLOY_TRUE) return false;
  }
  return true;
}

static void type_text(const alloy_value *v, char *buf, size_t cap) {
  alloy_value_type t;
  alloy_value_get_type(v, &t);
  alloy_value_type_print(t.kind, t.dtype, t.shape, t.rank, buf, cap);
}

/* Runs rule r on node n (already copied into the destination as copy).
 * On success maps n's outputs to the rule's results and returns true. */
static alloy_error *apply(alloy_graph_copy *c, const alloy_node *n, const alloy_node *copy,
                          const decomp_rule *r, char **declined, bool *done) {
  decomp d = {.g = alloy_copy_dst(c), .node = copy, .rule = r};
  *done = false;
  r->fn(&d);
  alloy_arena_free(&d.scratch);
  const char *vname = alloy_node_num_outputs(n) ? alloy_value_name(alloy_node_output(n, 0)) : "";
  if (d.err) {
    alloy_error *e = alloy_error_wrap(d.err, "decomposing node %s (%s)", vname, r->op);
    free(d.decline);
    return e;
  }
  if (d.decline) {
    if (declined && !*declined) {
      if (asprintf(declined, "node %s (%s): its rule declines: %s", vname, r->op, d.decline) < 0)
        *declined = NULL;
    }
    free(d.decline);
    return NULL;
  }
  int nout = alloy_node_num_outputs(n);
  for (int k = 0; k < nout; k++) {
    if (!d.set[k])
      return alloy_error_new(ALLOY_ERR_INTERNAL, "the rule for %s (node %s) sets no output %d",
                             r->op, vname, k);
    const alloy_value *want = alloy_node_output(copy, k);
    if (!d.outs[k]) continue; /* unused */
    if (!same_type(alloy_graph_symtab(d.g), want, d.outs[k])) {
      char a[256], b[256];
      type_text(want, a, sizeof a);
      type_text(d.outs[k], b, sizeof b);
      return alloy_error_new(ALLOY_ERR_INTERNAL,
                             "the rule for %s (node %s) gives %s for output %d, the op gives %s",
                             r->op, vname, b, k, a);
    }
  }
  for (int k = 0; k < nout; k++)
    if (d.outs[k]) alloy_copy_set(c, alloy_node_output(n, k), d.outs[k]);
  *done = true;
  return NULL;
}

/* One round: returns through *changed whether any node was replaced. */
static alloy_error *round_once(pass *p, const alloy_graph *g, const decomp_options *o,
                               alloy_graph **out, bool *changed, decomp_stats *st, char **why) {
  alloy_graph_copy *c;
  alloy_error *e = alloy_copy_begin(g, &c);
  if (e) return e;
  int n = alloy_graph_num_nodes(g);
  /* Lineage of the new graph's nodes, by position. */
  int cap = n * 4 + 16, *next = malloc(sizeof *next * (size_t)cap);
  if (!next) e = oom();
  *changed = false;
  for (int i = 0; i < n && !e; i++) {
    const alloy_node *node = alloy_graph_node(g, i);
    alloy_graph *dst = alloy_copy_dst(c);
    int before = alloy_graph_num_nodes(dst), at = p->of_node ? p->of_node[i] : -1;
    alloy_node *copy;
    if ((e = alloy_copy_node(c, node, &copy))) break;
    const decomp_rule *r = NULL;
    int op_id = alloy_op_id(alloy_node_op(node));
    if (!o->accept(g, i, o->ctx)) {
      r = rule_for(o, alloy_node_op(node));
      if (!r || in_lineage(p, at, op_id)) {
        st->declined++;
        if (why && !*why) {
          const char *vname = alloy_node_num_outputs(node) ? alloy_value_name(alloy_node_output(node, 0)) : "";
          if (asprintf(why, r ? "node %s (%s): its decomposition leads back to itself"
                              : "node %s (%s): no decomposition rule", vname,
                       alloy_op_name(alloy_node_op(node))) < 0)
            *why = NULL;
        }
        r = NULL;
      }
    }
    bool done = false;
    if (r && (e = apply(c, node, copy, r, why, &done))) break;
    if (r && !done) st->declined++;
    if (done) {
      st->decomposed++;
      *changed = true;
    }
    /* Nodes built here descend from node (and from its op when replaced). */
    int after = alloy_graph_num_nodes(dst), tag = at;
    if (done && (tag = lineage_push(p, at, op_id)) == -2) e = oom();
    if (after > cap) {
      int *nn = realloc(next, sizeof *nn * (size_t)(cap = after * 2));
      if (!nn) e = oom();
      else next = nn;
    }
    for (int k = before; k < after && !e; k++) next[k] = tag;
  }
  alloy_graph *ng = NULL;
  if (e) alloy_copy_abort(c);
  else e = alloy_copy_finish(c, &ng);
  if (e) {
    free(next);
    return e;
  }
  /* Replaced nodes are unused now. DCE keeps node order, so lineage is
   * compacted alongside. */
  int total = alloy_graph_num_nodes(ng);
  const alloy_node **before_dce = malloc(sizeof *before_dce * (size_t)(total ? total : 1));
  if (!before_dce) {
    free(next);
    alloy_graph_free(ng);
    return oom();
  }
  for (int k = 0; k < total; k++) before_dce[k] = alloy_graph_node(ng, k);
  alloy_graph_dce(ng);
  int kept = alloy_graph_num_nodes(ng);
  free(p->of_node);
  p->of_node = malloc(sizeof *p->of_node * (size_t)(kept ? kept : 1));
  for (int k = 0, j = 0; p->of_node && k < total && j < kept; k++)
    if (before_dce[k] == alloy_graph_node(ng, j)) p->of_node[j++] = next[k];
  free(before_dce);
  free(next);
  if (!p->of_node) {
    alloy_graph_free(ng);
    return oom();
  }
  *out = ng;
  return NULL;
}

alloy_error *alloy_decompose(const alloy_graph *g, const decomp_options *opts, alloy_graph **out,
                             decomp_stats *stats, char **why) {
  *out = NULL;
  if (why) *why = NULL;
  decomp_stats st = {0};
  pass p = {0};
  alloy_graph *cur = NULL;
  alloy_error *e = alloy_graph_clone(g, &cur);
  enum { MAX_ROUNDS = 64 };
  for (int r = 0; r < MAX_ROUNDS && !e; r++) {
    bool changed;
    alloy_graph *next = NULL;
    if (opts->round_begin && (e = opts->round_begin(cur, opts->ctx))) break;
    decomp_stats round = {0};
    char *round_why = NULL;
    e = round_once(&p, cur, opts, &next, &changed, &round, why ? &round_why : NULL);
    if (e) {
      free(round_why);
      break;
    }
    st.rounds++;
    st.decomposed += round.decomposed;
    st.declined = round.declined; /* what the last round left */
    if (why) {
      free(*why);
      *why = round_why;
    }
    alloy_graph_free(cur);
    cur = next;
    if (!changed) break;
  }
  free(p.pool);
  free(p.of_node);
  if (e) {
    alloy_graph_free(cur);
    if (why) {
      free(*why);
      *why = NULL;
    }
    return e;
  }
  if (stats) *stats = st;
  *out = cur;
  return NULL;
}
