/*
 * decompositions/functionalize.c: the functionalization pass (see
 * functionalize.h and docs/functionalization.md).
 *
 * The graph is copied node by node. Every tensor of the source graph gets a
 * record: a base (a graph input or the result of an ordinary op) holds the
 * base's current value in the copy and a version that every write bumps; a
 * view records its parent (the tensor it was taken of) and the view node,
 * and caches its value in the copy together with the base version that
 * value was made from. Reading a tensor replays its view chain on the base
 * when the cache is stale. An in-place node becomes its functional variant;
 * the result is carried up the chain to the base, each step undone by the
 * view's inverse (slice -> slice_scatter, permute -> the inverse permute,
 * ...), and becomes the base's new value.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decompositions/functionalize.h"
#include "ir/graph_internal.h"

/* --- the view ops and their inverses ----------------------------------------*/

typedef enum inverse {
  INV_NONE = 0,
  INV_RESHAPE,   /* view the written value back as the parent's shape */
  INV_IDENTITY,  /* alias, detach                                      */
  INV_SLICE,     /* slice_scatter                                      */
  INV_NARROW,    /* slice_scatter of [start, start + length)           */
  INV_SELECT,    /* select_scatter                                     */
  INV_DIAGONAL,  /* diagonal_scatter                                   */
  INV_AS_STRIDED, /* as_strided_scatter                                */
  INV_UNFOLD,    /* as_strided_scatter over the parent's layout        */
  INV_PERMUTE,   /* permute by the inverse permutation                 */
  INV_TRANSPOSE, /* the same transpose                                 */
  INV_T,         /* t again                                            */
  INV_EXPAND,    /* refused when it broadcasts                         */
  INV_SPLIT,     /* slice_scatter of the piece's range                 */
  INV_UNBIND,    /* select_scatter of the piece's index                */
} inverse;

static const struct view_op {
  const char *op;
  inverse inv;
  bool reshape;  /* a view only when the input is laid out contiguously */
} view_ops[] = {
    {"aten.view.default", INV_RESHAPE, false},
    {"aten._unsafe_view.default", INV_RESHAPE, false},
    {"aten.reshape.default", INV_RESHAPE, true},
    {"aten.flatten.using_ints", INV_RESHAPE, true},
    {"aten.squeeze.default", INV_RESHAPE, false},
    {"aten.squeeze.dim", INV_RESHAPE, false},
    {"aten.squeeze.dims", INV_RESHAPE, false},
    {"aten.unsqueeze.default", INV_RESHAPE, false},
    {"aten.alias.default", INV_IDENTITY, false},
    {"aten.detach.default", INV_IDENTITY, false},
    {"aten.slice.Tensor", INV_SLICE, false},
    {"aten.narrow.default", INV_NARROW, false},
    {"aten.select.int", INV_SELECT, false},
    {"aten.diagonal.default", INV_DIAGONAL, false},
    {"aten.as_strided.default", INV_AS_STRIDED, false},
    {"aten.unfold.default", INV_UNFOLD, false},
    {"aten.permute.default", INV_PERMUTE, false},
    {"aten.transpose.int", INV_TRANSPOSE, false},
    {"aten.t.default", INV_T, false},
    {"aten.expand.default", INV_EXPAND, false},
    {"aten.split.Tensor", INV_SPLIT, false},
    {"aten.split_with_sizes.default", INV_SPLIT, false},
    {"aten.chunk.default", INV_SPLIT, false},
    {"aten.unbind.int", INV_UNBIND, false},
};

static const struct view_op *view_op_of(const alloy_op *op) {
  const char *name = alloy_op_name(op);
  for (size_t i = 0; i < sizeof view_ops / sizeof *view_ops; i++)
    if (!strcmp(view_ops[i].op, name)) return &view_ops[i];
  return NULL;
}

/* --- records ----------------------------------------------------------------*/

typedef struct rec {
  int base;               /* the record of the base (itself for a base) */
  int parent;             /* the record of the view's input; -1: a base  */
  const alloy_node *node; /* the view node making it                     */
  int out_index;
  inverse inv;
  alloy_value *cur;       /* the value in the copy (a view's: cached)    */
  int version;            /* a base's write count; a view's cache's     */
  bool contiguous;        /* laid out as a contiguous tensor would be     */
} rec;

typedef struct fz {
  const alloy_graph *src;
  alloy_graph_copy *c;
  alloy_graph *dst;
  rec *recs;
  int nrecs, cap;
  int *of; /* by source value id: record index + 1; 0 for none */
  int nof;
  alloy_arena scratch;
  int seq;
  alloy_error *err;
} fz;

static alloy_error *oom(void) { return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory"); }

static void fail(fz *f, alloy_error *e) {
  if (!f->err) f->err = e;
  else alloy_error_free(e);
}

static const char *node_name(const alloy_node *n) {
  return alloy_node_num_outputs(n) ? alloy_value_name(alloy_node_output(n, 0)) : "";
}

static int rec_of(const fz *f, const alloy_value *v) {
  return v->id < f->nof ? f->of[v->id] - 1 : -1;
}

static void set_rec(fz *f, const alloy_value *v, int r) {
  if (v->id < f->nof) f->of[v->id] = r + 1;
}

static int new_rec(fz *f, rec r) {
  if (f->nrecs == f->cap) {
    int cap = f->cap ? 2 * f->cap : 64;
    rec *nr = realloc(f->recs, sizeof *nr * (size_t)cap);
    if (!nr) {
      fail(f, oom());
      return -1;
    }
    f->recs = nr;
    f->cap = cap;
  }
  f->recs[f->nrecs] = r;
  return f->nrecs++;
}

static int new_base(fz *f, alloy_value *cur) {
  int i = new_rec(f, (rec){.parent = -1, .cur = cur, .contiguous = true});
  if (i >= 0) f->recs[i].base = i;
  return i;
}

/* --- building in the copy ---------------------------------------------------*/

static const char *fresh_name(fz *f, char *buf, size_t cap) {
  do snprintf(buf, cap, "fz%d", f->seq++);
  while (alloy_graph_find_value(f->dst, buf) || alloy_graph_find_value(f->src, buf));
  return buf;
}

/* Adds op(args) to the copy; args in schema order (a prefix of it). */
static alloy_node *emit(fz *f, const char *opname, const alloy_arg *args, int nargs) {
  if (f->err) return NULL;
  const alloy_op *op = alloy_op_find(opname);
  if (!op) {
    fail(f, alloy_error_new(ALLOY_ERR_NOT_FOUND, "unknown op %s", opname));
    return NULL;
  }
  char name[32];
  alloy_node *n = NULL;
  alloy_error *e = alloy_graph_add_node_ordered(f->dst, op, args, nargs,
                                                fresh_name(f, name, sizeof name), &n);
  if (e) fail(f, e);
  return e ? NULL : n;
}

static alloy_value *emit1(fz *f, const char *opname, const alloy_arg *args, int nargs) {
  alloy_node *n = emit(f, opname, args, nargs);
  return n ? alloy_node_output(n, 0) : NULL;
}

static alloy_arg V(alloy_value *v) { return alloy_arg_value(v); }

static alloy_arg dim_list(fz *f, const alloy_dim *d, int n) {
  alloy_arg *items = alloy_arena_alloc(&f->scratch, sizeof *items * (size_t)(n ? n : 1));
  if (!items) fail(f, oom());
  for (int k = 0; items && k < n; k++) items[k] = alloy_arg_dim(d[k]);
  return alloy_arg_list(items, items ? n : 0);
}

static alloy_value *fresh(fz *f, int r);
static const alloy_op *functional_of(const alloy_op *op);

/* A source argument in the copy's terms: tensors read at their current
 * value, other values mapped, symbolic sizes imported. */
static alloy_arg map_arg(fz *f, const alloy_arg *a) {
  alloy_arg out = *a;
  if (a->kind == ALLOY_ARG_VALUE) {
    int r = rec_of(f, a->u.value);
    out.u.value = r >= 0 ? fresh(f, r) : alloy_copy_map(f->c, a->u.value);
    if (!out.u.value && !f->err)
      fail(f, alloy_error_new(ALLOY_ERR_INTERNAL, "value %s used before defined",
                              alloy_value_name(a->u.value)));
  } else if (a->kind == ALLOY_ARG_INT && !alloy_dim_is_const(a->u.i)) {
    alloy_error *e = alloy_dim_import(alloy_graph_symtab(f->dst),
                                      alloy_graph_symtab((alloy_graph *)f->src), a->u.i, &out.u.i);
    if (e) fail(f, e);
  } else if (a->kind == ALLOY_ARG_LIST) {
    int n = a->u.list.n;
    alloy_arg *items = alloy_arena_alloc(&f->scratch, sizeof *items * (size_t)(n ? n : 1));
    if (!items) {
      fail(f, oom());
      return alloy_arg_list(NULL, 0);
    }
    for (int k = 0; k < n; k++) items[k] = map_arg(f, &a->u.list.items[k]);
    out.u.list.items = items;
  }
  return out;
}

static const char *arg_name(const alloy_node *n, int i) {
  return alloy_schema_arg_at(alloy_op_schema(alloy_node_op(n)), i)->name;
}

static int64_t int_arg(const alloy_node *n, int i) {
  const alloy_arg *a = alloy_node_arg(n, i);
  return a->kind == ALLOY_ARG_INT && alloy_dim_is_const(a->u.i) ? a->u.i.value : 0;
}

static int wrap(int64_t d, int rank) {
  int r = rank > 0 ? rank : 1;
  return (int)(d < 0 ? d + r : d);
}

/* --- views --------------------------------------------------------------------*/

/* The view node n applied to x (a value of the copy): output k. Ops the
 * backends may not know are replayed as the core op they stand for. */
static alloy_value *replay(fz *f, const alloy_node *n, int k, alloy_value *x) {
  const char *name = alloy_op_name(alloy_node_op(n));
  if (alloy_op_tags(alloy_node_op(n)) & ALLOY_TAG_INPLACE) /* squeeze_ */
    name = alloy_op_name(functional_of(alloy_node_op(n)));
  int na = alloy_node_num_args(n);
  alloy_arg args[16];
  args[0] = V(x);
  for (int i = 1; i < na && i < 16; i++) args[i] = map_arg(f, alloy_node_arg(n, i));
  if (!strcmp(name, "aten.narrow.default")) {
    /* narrow(dim, start, length) = slice(dim, start, start + length) */
    alloy_symtab *st = alloy_graph_symtab(f->dst);
    int d = wrap(int_arg(n, 1), alloy_value_rank(x));
    alloy_dim start = args[2].u.i;
    if (alloy_dim_is_const(start) && start.value < 0)
      start = alloy_dim_add(st, start, alloy_value_shape(x)[d]);
    alloy_dim len = args[3].u.i, size = alloy_value_shape(x)[d];
    if (!alloy_dim_is_const(start) || !alloy_dim_is_const(len) || !alloy_dim_is_const(size)) {
      /* a slice's size would read min(n, start + length) - start */
      alloy_arg s[4] = {V(x), args[1], alloy_arg_dim(start), args[3]};
      return emit1(f, "aten.narrow_copy.default", s, 4);
    }
    alloy_arg s[5] = {V(x), args[1], alloy_arg_dim(start),
                      alloy_arg_dim(alloy_dim_add(st, start, len)), alloy_arg_int(1)};
    return emit1(f, "aten.slice.Tensor", s, 5);
  }
  if (!strcmp(name, "aten.chunk.default")) {
    /* the pieces' sizes are those chunk gave */
    int m = alloy_node_num_outputs(n), d = wrap(int_arg(n, 2), alloy_value_rank(x));
    alloy_dim *sizes = alloy_arena_alloc(&f->scratch, sizeof *sizes * (size_t)(m ? m : 1));
    if (!sizes) return fail(f, oom()), NULL;
    for (int i = 0; i < m; i++) sizes[i] = alloy_value_shape(alloy_node_output(n, i))[d];
    alloy_arg s[3] = {V(x), dim_list(f, sizes, m), args[2]};
    alloy_node *sp = emit(f, "aten.split_with_sizes.default", s, 3);
    return sp ? alloy_node_output(sp, k) : NULL;
  }
  if (!strcmp(name, "aten._unsafe_view.default")) name = "aten.view.default";
  alloy_node *v = emit(f, name, args, na);
  return v ? alloy_node_output(v, k) : NULL;
}

/* The current value of record r in the copy. */
static alloy_value *fresh(fz *f, int r) {
  if (f->err || r < 0) return NULL;
  if (f->recs[r].parent < 0) return f->recs[r].cur;
  int version = f->recs[f->recs[r].base].version;
  /* Up the chain to the first view (or the base) that is current, then
   * replay the views below it in order: a loop, not recursion, so a chain
   * of any depth costs no stack. The walk is linked through a scratch
   * array of record indices. */
  int n = 0;
  for (int q = r; f->recs[q].parent >= 0 && !(f->recs[q].cur && f->recs[q].version == version);
       q = f->recs[q].parent)
    n++;
  if (n == 0) return f->recs[r].cur;
  int *chain = malloc(sizeof *chain * (size_t)n);
  if (!chain) {
    fail(f, alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory"));
    return NULL;
  }
  int k = n, top = r;
  for (int q = r; k > 0; q = f->recs[q].parent) chain[--k] = q, top = f->recs[q].parent;
  alloy_value *in = f->recs[top].cur;
  for (int i = 0; i < n && in; i++) {
    int q = chain[i];
    in = replay(f, f->recs[q].node, f->recs[q].out_index, in);
    f->recs[q].cur = in;
    f->recs[q].version = version;
  }
  free(chain);
  return in;
}

/* Whether view node n keeps a contiguous input contiguous. */
static bool keeps_contiguous(const alloy_node *n, inverse inv) {
  switch (inv) {
  case INV_RESHAPE:
  case INV_IDENTITY:
    return true;
  case INV_SLICE: /* dim 0, step 1 */
    return wrap(int_arg(n, 1), 1) == 0 && int_arg(n, 4) == 1;
  case INV_NARROW:
  case INV_SELECT:
  case INV_UNBIND:
    return int_arg(n, 1) == 0;
  case INV_SPLIT:
    return int_arg(n, 2) == 0;
  default:
    return false;
  }
}

/* Sizes of x's contiguous layout. */
static void contiguous_strides(alloy_symtab *st, const alloy_value *x, alloy_dim *out) {
  alloy_dim s = alloy_dim_const(1);
  for (int d = alloy_value_rank(x) - 1; d >= 0; d--) {
    out[d] = s;
    s = alloy_dim_mul(st, s, alloy_dim_max(st, alloy_value_shape(x)[d], alloy_dim_const(1)));
  }
}

static bool dim_is(alloy_dim d, int64_t v) { return alloy_dim_is_const(d) && d.value == v; }

/* Undoes view record r: parent is the parent's current value, val the new
 * value of the view; returns the parent's new value. */
static alloy_value *invert(fz *f, int r, alloy_value *parent, alloy_value *val,
                           const alloy_node *at) {
  const alloy_node *n = f->recs[r].node;
  int k = f->recs[r].out_index, rank = alloy_value_rank(parent);
  alloy_symtab *st = alloy_graph_symtab(f->dst);
  alloy_arg a[8];
  switch (f->recs[r].inv) {
  case INV_NONE:
    break;
  case INV_IDENTITY:
    return val;
  case INV_RESHAPE: {
    alloy_arg s[2] = {V(val), dim_list(f, alloy_value_shape(parent), rank)};
    return emit1(f, "aten.view.default", s, 2);
  }
  case INV_EXPAND: {
    int vr = alloy_value_rank(val), lead = vr - rank;
    bool broadcasts = false;
    for (int d = 0; d < vr; d++) {
      alloy_dim o = alloy_value_shape(val)[d];
      if (d < lead) broadcasts |= !dim_is(o, 1);
      else broadcasts |= !alloy_dim_same(o, alloy_value_shape(parent)[d - lead]);
    }
    if (broadcasts) {
      fail(f, alloy_error_new(ALLOY_ERR_UNSUPPORTED,
                              "node %s (%s): unsupported operation: more than one element of the "
                              "written-to tensor refers to a single memory location (it writes "
                              "through the expanded view %s)",
                              node_name(at), alloy_op_name(alloy_node_op(at)), node_name(n)));
      return NULL;
    }
    alloy_arg s[2] = {V(val), dim_list(f, alloy_value_shape(parent), rank)};
    return emit1(f, "aten.view.default", s, 2);
  }
  case INV_SLICE:
    a[0] = V(parent), a[1] = V(val);
    for (int i = 1; i <= 4; i++) a[i + 1] = map_arg(f, alloy_node_arg(n, i));
    return emit1(f, "aten.slice_scatter.default", a, 6);
  case INV_SELECT:
  case INV_DIAGONAL:
    a[0] = V(parent), a[1] = V(val);
    for (int i = 1; i < alloy_node_num_args(n); i++) a[i + 1] = map_arg(f, alloy_node_arg(n, i));
    return emit1(f, f->recs[r].inv == INV_SELECT ? "aten.select_scatter.default"
                                                 : "aten.diagonal_scatter.default",
                 a, alloy_node_num_args(n) + 1);
  case INV_AS_STRIDED:
    a[0] = V(parent), a[1] = V(val);
    for (int i = 1; i <= 3; i++) a[i + 1] = map_arg(f, alloy_node_arg(n, i));
    return emit1(f, "aten.as_strided_scatter.default", a, 5);
  case INV_NARROW: {
    int d = wrap(int_arg(n, 1), rank);
    alloy_dim start = map_arg(f, alloy_node_arg(n, 2)).u.i;
    if (dim_is(start, start.value) && start.value < 0)
      start = alloy_dim_add(st, start, alloy_value_shape(parent)[d]);
    alloy_dim len = alloy_value_shape(val)[d];
    alloy_arg s[6] = {V(parent), V(val), alloy_arg_int(d), alloy_arg_dim(start),
                      alloy_arg_dim(alloy_dim_add(st, start, len)), alloy_arg_int(1)};
    return emit1(f, "aten.slice_scatter.default", s, 6);
  }
  case INV_SPLIT: {
    /* The piece starts where the pieces before it end: their sizes are
     * read from the copy's split node, which has them all. */
    int d = wrap(int_arg(n, 2), rank), out_k;
    alloy_value *piece = fresh(f, r);
    if (!piece) return NULL;
    alloy_node *sp = alloy_value_producer(piece, &out_k);
    alloy_dim start = alloy_dim_const(0);
    for (int i = 0; i < k; i++)
      start = alloy_dim_add(st, start, alloy_value_shape(alloy_node_output(sp, i))[d]);
    alloy_dim end = alloy_dim_add(st, start, alloy_value_shape(val)[d]);
    alloy_arg s[6] = {V(parent), V(val), alloy_arg_int(d), alloy_arg_dim(start),
                      alloy_arg_dim(end), alloy_arg_int(1)};
    return emit1(f, "aten.slice_scatter.default", s, 6);
  }
  case INV_UNBIND: {
    alloy_arg s[4] = {V(parent), V(val), alloy_arg_int(wrap(int_arg(n, 1), rank)),
                      alloy_arg_int(k)};
    return emit1(f, "aten.select_scatter.default", s, 4);
  }
  case INV_UNFOLD: {
    /* unfold of a contiguous tensor is an as_strided of it */
    int d = wrap(int_arg(n, 1), rank);
    int64_t size = int_arg(n, 2), step = int_arg(n, 3);
    alloy_dim strides[ALLOY_MAX_RANK + 1], sizes[ALLOY_MAX_RANK + 1];
    contiguous_strides(st, parent, strides);
    for (int i = 0; i < rank; i++) sizes[i] = alloy_value_shape(parent)[i];
    sizes[d] = alloy_dim_add(st, alloy_dim_floordiv(st, alloy_dim_sub(st, sizes[d], alloy_dim_const(size)),
                                                    alloy_dim_const(step)),
                             alloy_dim_const(1));
    sizes[rank] = alloy_dim_const(size);
    strides[rank] = strides[d];
    strides[d] = alloy_dim_mul(st, strides[d], alloy_dim_const(step));
    alloy_arg s[5] = {V(parent), V(val), dim_list(f, sizes, rank + 1),
                      dim_list(f, strides, rank + 1), alloy_arg_int(0)};
    return emit1(f, "aten.as_strided_scatter.default", s, 5);
  }
  case INV_PERMUTE: {
    const alloy_arg *dims = alloy_node_arg(n, 1);
    int64_t inv[ALLOY_MAX_RANK] = {0};
    for (int i = 0; i < dims->u.list.n && i < ALLOY_MAX_RANK; i++) {
      const alloy_arg *it = &dims->u.list.items[i];
      int p = wrap(it->kind == ALLOY_ARG_INT ? it->u.i.value : 0, rank);
      if (p >= 0 && p < ALLOY_MAX_RANK) inv[p] = i;
    }
    alloy_arg items[ALLOY_MAX_RANK];
    for (int i = 0; i < rank; i++) items[i] = alloy_arg_int(inv[i]);
    alloy_arg s[2] = {V(val), alloy_arg_list(items, rank)};
    return emit1(f, "aten.permute.default", s, 2);
  }
  case INV_TRANSPOSE: {
    alloy_arg s[3] = {V(val), map_arg(f, alloy_node_arg(n, 1)), map_arg(f, alloy_node_arg(n, 2))};
    return emit1(f, "aten.transpose.int", s, 3);
  }
  case INV_T: {
    alloy_arg s[1] = {V(val)};
    return emit1(f, "aten.t.default", s, 1);
  }
  }
  fail(f, alloy_error_new(ALLOY_ERR_INTERNAL, "node %s: no inverse", node_name(n)));
  return NULL;
}

/* Record r (a tensor) now holds val: carry it to the base. */
static void write_back(fz *f, int r, alloy_value *val, const alloy_node *at) {
  while (!f->err && val && f->recs[r].parent >= 0) {
    alloy_value *parent = fresh(f, f->recs[r].parent);
    if (!parent) return;
    val = invert(f, r, parent, val, at);
    r = f->recs[r].parent;
  }
  if (f->err || !val) return;
  f->recs[r].cur = val;
  f->recs[r].version++;
}

/* --- nodes ------------------------------------------------------------------*/

typedef struct refresh_ctx {
  fz *f;
} refresh_ctx;

/* Points the copy's map of every tensor argument at its current value, so
 * that alloy_copy_node reads it. */
static void refresh_fn(alloy_value *v, void *ctx) {
  fz *f = ((refresh_ctx *)ctx)->f;
  int r = rec_of(f, v);
  if (r < 0 || f->err) return;
  alloy_value *cur = fresh(f, r);
  if (cur) alloy_copy_set(f->c, v, cur);
}

static void refresh_args(fz *f, const alloy_node *n) {
  refresh_ctx ctx = {f};
  for (int i = 0; i < alloy_node_num_args(n); i++)
    alloy_arg_for_each_value(alloy_node_arg(n, i), refresh_fn, &ctx);
}

/* Copies n as an ordinary op: each tensor output is a new base. */
static void copy_plain(fz *f, const alloy_node *n) {
  refresh_args(f, n);
  if (f->err) return;
  alloy_node *copy;
  alloy_error *e = alloy_copy_node(f->c, n, &copy);
  if (e) {
    fail(f, e);
    return;
  }
  for (int k = 0; k < alloy_node_num_outputs(n); k++) {
    alloy_value *v = alloy_node_output(n, k);
    if (alloy_value_kind_of(v) != ALLOY_VALUE_TENSOR) continue;
    int b = new_base(f, alloy_copy_map(f->c, v));
    if (b >= 0) set_rec(f, v, b);
  }
}

/* A view node: its outputs are views of its input. The copy keeps the
 * source's names. */
static void copy_view(fz *f, const alloy_node *n, const struct view_op *vo) {
  const alloy_arg *self = alloy_node_arg(n, 0);
  int parent = self->kind == ALLOY_ARG_VALUE ? rec_of(f, self->u.value) : -1;
  if (parent < 0 || (vo->reshape && !f->recs[parent].contiguous)) {
    /* reshape of a non-contiguous tensor copies */
    copy_plain(f, n);
    return;
  }
  alloy_value *in = fresh(f, parent), *first = in ? replay(f, n, 0, in) : NULL;
  int idx;
  alloy_node *made = first ? alloy_value_producer(first, &idx) : NULL;
  for (int k = 0; made && k < alloy_node_num_outputs(n) && !f->err; k++) {
    alloy_value *v = alloy_node_output(n, k), *cur = alloy_node_output(made, k);
    if (!alloy_graph_find_value(f->dst, alloy_value_name(v))) {
      alloy_error *e = alloy_graph_rename(f->dst, cur, alloy_value_name(v));
      if (e) {
        fail(f, e);
        return;
      }
    }
    alloy_copy_set(f->c, v, cur);
    rec r = {.base = f->recs[parent].base, .parent = parent, .node = n, .out_index = k,
             .inv = vo->inv, .cur = cur, .version = f->recs[f->recs[parent].base].version,
             .contiguous = f->recs[parent].contiguous && keeps_contiguous(n, vo->inv)};
    int i = new_rec(f, r);
    if (i >= 0) set_rec(f, v, i);
  }
}

/* c10::canCast */
static bool can_cast(alloy_dtype from, alloy_dtype to) {
  if (alloy_dtype_is_float(from) && (alloy_dtype_is_integer(to) || to == ALLOY_BOOL)) return false;
  if (from != ALLOY_BOOL && to == ALLOY_BOOL) return false;
  return true;
}

/* PyTorch's names of dtypes in its cast messages. */
static const char *torch_type_name(alloy_dtype t) {
  static const struct {
    alloy_dtype t;
    const char *name;
  } names[] = {{ALLOY_F32, "Float"}, {ALLOY_F64, "Double"}, {ALLOY_F16, "Half"},
               {ALLOY_BF16, "BFloat16"}, {ALLOY_I64, "Long"}, {ALLOY_I32, "Int"},
               {ALLOY_I16, "Short"}, {ALLOY_I8, "Char"}, {ALLOY_U8, "Byte"}, {ALLOY_BOOL, "Bool"}};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (names[i].t == t) return names[i].name;
  return alloy_dtype_name(t);
}

/* The functional op that in-place or out= op computes, paired by the
 * registry from the schemas (add_.Tensor and add.out -> add.Tensor), when
 * it is one Alloy can compute (it has a shape function); else NULL. */
static const alloy_op *functional_of(const alloy_op *op) {
  const alloy_op *fop = alloy_op_functional(op);
  return fop && fop->meta ? fop : NULL;
}

/* The functional node for mutating node n, whose written tensors have the
 * current values cur[]: its arguments as the registry maps them
 * (alloy_op_functional_arg), self read at its current value. */
static alloy_node *functional_node(fz *f, const alloy_node *n, const int *w, int nw,
                                   alloy_value *const *cur, const alloy_op *fop) {
  const alloy_op *op = alloy_node_op(n);
  const alloy_schema *fs = alloy_op_schema(fop);
  int nf = alloy_schema_num_args(fs);
  alloy_arg args[64];
  if (nf > 64) {
    fail(f, alloy_error_new(ALLOY_ERR_UNSUPPORTED, "node %s (%s): %s takes more than 64 arguments",
                            node_name(n), alloy_op_name(op), alloy_op_name(fop)));
    return NULL;
  }
  for (int j = 0; j < nf; j++) {
    int i = alloy_op_functional_arg(op, j);
    const alloy_schema_arg *fa = alloy_schema_arg_at(fs, j);
    if (i >= 0 && nw && i == w[0] && alloy_op_kind_of(op) != ALLOY_OP_OUT) args[j] = V(cur[0]);
    else if (i >= 0) args[j] = map_arg(f, alloy_node_arg(n, i));
    else if (i == ALLOY_FARG_OUT_DTYPE) args[j] = alloy_arg_dtype(alloy_value_dtype(cur[0]));
    else if (i == ALLOY_FARG_DEFAULT) args[j] = fa->default_value;
    else args[j] = alloy_arg_none();
  }
  return emit(f, alloy_op_name(fop), args, nf);
}

/* res, made to be written into a tensor like self: cast to its dtype (as
 * PyTorch's in-place and out= ops do, refusing what it refuses) and
 * broadcast to its shape. */
static alloy_value *fit_to(fz *f, const alloy_node *n, alloy_value *res, alloy_value *self) {
  alloy_dtype want = alloy_value_dtype(self), got = alloy_value_dtype(res);
  if (got != want) {
    if (!can_cast(got, want)) {
      fail(f, alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                              "node %s (%s): result type %s can't be cast to the desired output "
                              "type %s",
                              node_name(n), alloy_op_name(alloy_node_op(n)), torch_type_name(got),
                              torch_type_name(want)));
      return NULL;
    }
    alloy_arg a[2] = {V(res), alloy_arg_dtype(want)};
    res = emit1(f, "aten._to_copy.default", a, 2);
  }
  int rank = alloy_value_rank(self);
  bool same = res && alloy_value_rank(res) == rank;
  for (int d = 0; same && d < rank; d++)
    same = alloy_dim_same(alloy_value_shape(res)[d], alloy_value_shape(self)[d]);
  if (res && !same) {
    alloy_arg a[2] = {V(res), dim_list(f, alloy_value_shape(self), rank)};
    res = emit1(f, "aten.expand.default", a, 2);
  }
  return res;
}

static void copy_mutation(fz *f, const alloy_node *n) {
  const alloy_op *op = alloy_node_op(n);
  const alloy_op *fop = functional_of(op);
  int w[16];
  int nw = fop ? alloy_op_written_args(op, w, 16) : 0;
  if (!nw) {
    /* No functional form Alloy computes: a mutating op that is neither
     * in-place nor out= (batch norm's running statistics), or one whose
     * functional twin has no shape function (resize_). It is kept as it is
     * and its result is a new tensor; its write to the argument is not
     * seen by later reads of it. */
    copy_plain(f, n);
    return;
  }
  if (view_op_of(fop)) {
    /* An in-place view op (squeeze_) writes no data: its result is the
     * view its functional op makes. */
    copy_view(f, n, view_op_of(fop));
    return;
  }
  int recs[16];
  alloy_value *cur[16];
  for (int k = 0; k < nw; k++) {
    const alloy_arg *wa = alloy_node_arg(n, w[k]);
    recs[k] = wa->kind == ALLOY_ARG_VALUE ? rec_of(f, wa->u.value) : -1;
    if (recs[k] < 0) {
      fail(f, alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "node %s (%s): argument '%s' is not a tensor",
                              node_name(n), alloy_op_name(op), arg_name(n, w[k])));
      return;
    }
    if (!(cur[k] = fresh(f, recs[k]))) return;
  }
  alloy_node *fn = functional_node(f, n, w, nw, cur, fop);
  if (!fn) return;
  /* The written tensors' new values are the twin's results, or, for a
   * mutable op's _functional form, the results after the op's own. */
  int first = alloy_op_functional_appends(op) ? alloy_node_num_outputs(n) : 0;
  if (alloy_node_num_outputs(fn) < first + nw) {
    fail(f, alloy_error_new(ALLOY_ERR_UNSUPPORTED, "node %s (%s): %s gives %d results for %d written tensors",
                            node_name(n), alloy_op_name(op), alloy_op_name(fop),
                            alloy_node_num_outputs(fn), nw));
    return;
  }
  for (int k = 0; k < nw && !f->err; k++) {
    alloy_value *res = fit_to(f, n, alloy_node_output(fn, first + k), cur[k]);
    if (res) write_back(f, recs[k], res, n);
  }
  for (int k = 0; k < alloy_node_num_outputs(n) && !f->err; k++) {
    alloy_value *v = alloy_node_output(n, k);
    if (first) { /* the op's own results: the twin's first ones, new bases */
      alloy_copy_set(f->c, v, alloy_node_output(fn, k));
      int b = alloy_value_kind_of(v) == ALLOY_VALUE_TENSOR ? new_base(f, alloy_node_output(fn, k)) : -1;
      if (b >= 0) set_rec(f, v, b);
      continue;
    }
    /* An in-place or out= op's results are the written tensors themselves. */
    if (alloy_value_kind_of(v) != ALLOY_VALUE_TENSOR) continue;
    int r = recs[k < nw ? k : 0];
    set_rec(f, v, r);
    alloy_copy_set(f->c, v, fresh(f, r));
  }
}

static bool mutates(const alloy_op *op) {
  return alloy_op_tags(op) & (ALLOY_TAG_INPLACE | ALLOY_TAG_MUTATES);
}

/* --- the pass -----------------------------------------------------------------*/

static alloy_error *add_mutation_outputs(fz *f, const int *input_rec, alloy_graph *ng) {
  const alloy_graph *g = f->src;
  int nin = alloy_graph_num_inputs(g), nout = alloy_graph_num_outputs(ng), extra = 0;
  for (int i = 0; i < nin; i++) extra += input_rec[i] >= 0 && f->recs[input_rec[i]].version > 0;
  if (!extra) return NULL;
  int total = nout + extra;
  alloy_value **outs = malloc(sizeof *outs * (size_t)total);
  int *roles = malloc(sizeof *roles * (size_t)total);
  char **names = calloc((size_t)total, sizeof *names);
  alloy_error *e = outs && roles && names ? NULL : oom();
  for (int i = 0; i < nout && !e; i++) {
    const char *nm;
    outs[i] = alloy_graph_output(ng, i);
    roles[i] = alloy_graph_output_role(ng, i, &nm);
    if (nm && !(names[i] = strdup(nm))) e = oom();
  }
  for (int i = 0, k = nout; i < nin && !e; i++) {
    int r = input_rec[i];
    if (r < 0 || f->recs[r].version == 0) continue;
    const char *nm = NULL;
    alloy_input_role role = alloy_graph_input_role(g, i, &nm);
    outs[k] = f->recs[r].cur;
    roles[k] = role == ALLOY_INPUT_BUFFER ? ALLOY_OUTPUT_BUFFER_MUTATION : ALLOY_OUTPUT_INPUT_MUTATION;
    if (role != ALLOY_INPUT_BUFFER || !nm) nm = alloy_value_name(alloy_graph_input(g, i));
    if (!(names[k] = strdup(nm))) e = oom();
    k++;
  }
  if (!e) e = alloy_graph_set_outputs(ng, outs, total);
  for (int i = 0; i < total && !e; i++)
    e = alloy_graph_set_output_role(ng, i, (alloy_output_role)roles[i],
                                    roles[i] == ALLOY_OUTPUT_USER ? NULL : names[i]);
  for (int i = 0; names && i < total; i++) free(names[i]);
  free(names);
  free(roles);
  free(outs);
  return e;
}

alloy_error *alloy_functionalize(const alloy_graph *g, alloy_graph **out) {
  *out = NULL;
  int nn = alloy_graph_num_nodes(g), nin = alloy_graph_num_inputs(g);
  bool any = false;
  for (int i = 0; i < nn && !any; i++) any = mutates(alloy_node_op(alloy_graph_node(g, i)));
  if (!any) return alloy_graph_clone(g, out);

  fz f = {.src = g};
  int max_id = 0;
  for (int i = 0; i < nin; i++)
    if (alloy_graph_input(g, i)->id > max_id) max_id = alloy_graph_input(g, i)->id;
  for (int i = 0; i < nn; i++) {
    const alloy_node *n = alloy_graph_node(g, i);
    for (int k = 0; k < alloy_node_num_outputs(n); k++)
      if (alloy_node_output(n, k)->id > max_id) max_id = alloy_node_output(n, k)->id;
  }
  f.nof = max_id + 1;
  f.of = calloc((size_t)f.nof, sizeof *f.of);
  int *input_rec = malloc(sizeof *input_rec * (size_t)(nin ? nin : 1));
  alloy_error *e = f.of && input_rec ? NULL : oom();
  if (!e) e = alloy_copy_begin(g, &f.c);
  if (!e) f.dst = alloy_copy_dst(f.c);
  for (int i = 0; i < nin && !e; i++) {
    alloy_value *v = alloy_graph_input(g, i);
    input_rec[i] = -1;
    if (alloy_value_kind_of(v) != ALLOY_VALUE_TENSOR) continue;
    input_rec[i] = new_base(&f, alloy_copy_map(f.c, v));
    set_rec(&f, v, input_rec[i]);
  }
  for (int i = 0; i < nn && !e && !f.err; i++) {
    const alloy_node *n = alloy_graph_node(g, i);
    const alloy_op *op = alloy_node_op(n);
    const struct view_op *vo = view_op_of(op);
    if (mutates(op)) copy_mutation(&f, n);
    else if (vo) copy_view(&f, n, vo);
    else copy_plain(&f, n);
  }
  if (!e) e = f.err;
  /* Outputs read their final values. */
  for (int i = 0; i < alloy_graph_num_outputs(g) && !e; i++) {
    alloy_value *v = alloy_graph_output(g, i);
    int r = rec_of(&f, v);
    alloy_value *cur = r >= 0 ? fresh(&f, r) : NULL;
    if (f.err) e = f.err;
    else if (cur) alloy_copy_set(f.c, v, cur);
  }
  alloy_graph *ng = NULL;
  if (e) {
    if (f.c) alloy_copy_abort(f.c);
  } else {
    e = alloy_copy_finish(f.c, &ng);
  }
  if (!e) e = add_mutation_outputs(&f, input_rec, ng);
  if (!e) alloy_graph_dce(ng); /* views replayed but never read */
  if (e) alloy_graph_free(ng);
  else *out = ng;
  alloy_arena_free(&f.scratch);
  free(f.recs);
  free(f.of);
  free(input_rec);
  return e;
}
