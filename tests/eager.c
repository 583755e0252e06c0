/*
 * tests/eager.c: see eager.h. Views are computed here, op by op, from the
 * view's sizes, strides and offset (a table of view ops, as PyTorch's
 * TensorShape.cpp computes them); every other op is built alone in a
 * one-node graph (its shape function checks it again, so a node PyTorch
 * would refuse is refused here too), compiled and run on the backend.
 */
#include "alloy/kernel_table.h"
#include "eager.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

typedef struct storage {
  unsigned char *data;
  size_t nbytes;
} storage;

typedef struct view {
  bool set;
  int storage;
  alloy_dtype dtype;
  int rank;
  int64_t sizes[ALLOY_MAX_RANK], strides[ALLOY_MAX_RANK];
  int64_t offset; /* in elements */
} view;

typedef struct eager {
  alloy_runtime *rt;
  int backend;
  const alloy_graph *g;
  storage *st;
  int nst;
  view *vals; /* by value id */
  int nvals;
} eager;

void eager_tensor_free(eager_tensor *t) {
  if (!t) return;
  free(t->data);
  t->data = NULL;
}

int64_t eager_numel(const eager_tensor *t) {
  int64_t n = 1;
  for (int d = 0; d < t->rank; d++) n *= t->sizes[d];
  return n;
}

static alloy_error *oom(void) { return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory"); }

static const char *node_name(const alloy_node *n) {
  return alloy_node_num_outputs(n) ? alloy_value_name(alloy_node_output(n, 0)) : "";
}

static alloy_error *node_error(const alloy_node *n, const char *msg) {
  return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "node %s (%s): %s", node_name(n),
                         alloy_op_name(alloy_node_op(n)), msg);
}

static int64_t numel_of(const int64_t *sizes, int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= sizes[d];
  return n;
}

/* A new storage holding bytes (copied; NULL: zeros). */
static int new_storage(eager *E, const void *bytes, size_t nbytes) {
  storage *ns = realloc(E->st, sizeof *ns * (size_t)(E->nst + 1));
  if (!ns) return -1;
  E->st = ns;
  unsigned char *d = calloc(nbytes ? nbytes : 1, 1);
  if (!d) return -1;
  if (bytes && nbytes) memcpy(d, bytes, nbytes);
  E->st[E->nst] = (storage){d, nbytes};
  return E->nst++;
}

static void contiguous(view *v) {
  int64_t s = 1;
  for (int d = v->rank - 1; d >= 0; d--) {
    v->strides[d] = s;
    s *= v->sizes[d] > 1 ? v->sizes[d] : 1;
  }
}

/* Visits every element of v in row-major order: fn(storage offset, i). */
static void for_each(const view *v, void (*fn)(const view *, int64_t, int64_t, void *), void *ctx) {
  int64_t n = numel_of(v->sizes, v->rank), idx[ALLOY_MAX_RANK] = {0};
  for (int64_t i = 0; i < n; i++) {
    int64_t off = v->offset;
    for (int d = 0; d < v->rank; d++) off += idx[d] * v->strides[d];
    fn(v, off, i, ctx);
    for (int d = v->rank - 1; d >= 0; d--) {
      if (++idx[d] < v->sizes[d]) break;
      idx[d] = 0;
    }
  }
}

typedef struct {
  eager *E;
  unsigned char *buf;
} copy_ctx;

static void gather_fn(const view *v, int64_t off, int64_t i, void *ctx) {
  copy_ctx *c = ctx;
  size_t es = alloy_dtype_size(v->dtype);
  memcpy(c->buf + (size_t)i * es, c->E->st[v->storage].data + (size_t)off * es, es);
}

static void scatter_fn(const view *v, int64_t off, int64_t i, void *ctx) {
  copy_ctx *c = ctx;
  size_t es = alloy_dtype_size(v->dtype);
  memcpy(c->E->st[v->storage].data + (size_t)off * es, c->buf + (size_t)i * es, es);
}

/* The elements of v, contiguous, in a malloc'd buffer. */
static void *gather(eager *E, const view *v) {
  size_t n = (size_t)numel_of(v->sizes, v->rank), es = alloy_dtype_size(v->dtype);
  unsigned char *buf = malloc(n * es > 0 ? n * es : 1);
  if (!buf) return NULL;
  copy_ctx c = {E, buf};
  for_each(v, gather_fn, &c);
  return buf;
}

/* --- view geometry ------------------------------------------------------------*/

/* c10's computeStride (alloy/kernel_table.h): the strides that view `in`
 * as shape `sizes` without copying, or false when there are none. */
static bool compute_stride(const view *in, const int64_t *sizes, int rank, int64_t *out) {
  return alloy_view_strides(in->sizes, in->strides, in->rank, sizes, rank, out);
}

typedef enum geom {
  G_RESHAPE, /* computeStride, else an error */
  G_RESHAPE_OR_COPY, /* computeStride, else a copy (reshape, flatten) */
  G_SAME,
  G_SLICE,
  G_NARROW,
  G_SELECT,
  G_DIAGONAL,
  G_AS_STRIDED,
  G_UNFOLD,
  G_PERMUTE,
  G_TRANSPOSE,
  G_T,
  G_EXPAND,
  G_SPLIT,
  G_UNBIND,
} geom;

static const struct {
  const char *op;
  geom g;
} view_table[] = {
    {"aten.view.default", G_RESHAPE},
    {"aten._unsafe_view.default", G_RESHAPE},
    {"aten.squeeze.default", G_RESHAPE},
    {"aten.squeeze.dim", G_RESHAPE},
    {"aten.squeeze.dims", G_RESHAPE},
    {"aten.squeeze_.dim", G_RESHAPE}, /* changes self's shape, writes no data */
    {"aten.unsqueeze.default", G_RESHAPE},
    {"aten.reshape.default", G_RESHAPE_OR_COPY},
    {"aten.flatten.using_ints", G_RESHAPE_OR_COPY},
    {"aten.alias.default", G_SAME},
    {"aten.detach.default", G_SAME},
    {"aten.slice.Tensor", G_SLICE},
    {"aten.narrow.default", G_NARROW},
    {"aten.select.int", G_SELECT},
    {"aten.diagonal.default", G_DIAGONAL},
    {"aten.as_strided.default", G_AS_STRIDED},
    {"aten.unfold.default", G_UNFOLD},
    {"aten.permute.default", G_PERMUTE},
    {"aten.transpose.int", G_TRANSPOSE},
    {"aten.t.default", G_T},
    {"aten.expand.default", G_EXPAND},
    {"aten.split.Tensor", G_SPLIT},
    {"aten.split_with_sizes.default", G_SPLIT},
    {"aten.chunk.default", G_SPLIT},
    {"aten.unbind.int", G_UNBIND},
};

static int view_geom(const alloy_op *op) {
  for (size_t i = 0; i < sizeof view_table / sizeof *view_table; i++)
    if (!strcmp(view_table[i].op, alloy_op_name(op))) return (int)view_table[i].g;
  return -1;
}

static int64_t iarg(const alloy_node *n, int i, int64_t dflt) {
  const alloy_arg *a = alloy_node_arg(n, i);
  if (a->kind == ALLOY_ARG_INT && alloy_dim_is_const(a->u.i)) return a->u.i.value;
  if (a->kind == ALLOY_ARG_BOOL) return a->u.b;
  return dflt;
}

static int ilist(const alloy_node *n, int i, int64_t *out) {
  const alloy_arg *a = alloy_node_arg(n, i);
  if (a->kind != ALLOY_ARG_LIST) return 0;
  for (int k = 0; k < a->u.list.n && k < ALLOY_MAX_RANK; k++)
    out[k] = a->u.list.items[k].u.i.value;
  return a->u.list.n;
}

static int wrapd(int64_t d, int rank) { return (int)(d < 0 ? d + (rank ? rank : 1) : d); }

/* Output k of view node n of `in` into *o; *copy when it must be a copy. */
static alloy_error *view_of(const alloy_node *n, geom gm, int k, const view *in, view *o,
                            bool *copy) {
  const alloy_value *ov = alloy_node_output(n, k);
  *o = *in;
  *copy = false;
  o->rank = alloy_value_rank(ov);
  for (int d = 0; d < o->rank; d++) {
    alloy_dim s = alloy_value_shape(ov)[d];
    if (!alloy_dim_is_const(s)) return node_error(n, "symbolic sizes are not supported");
    o->sizes[d] = s.value;
  }
  int r = in->rank;
  switch (gm) {
  case G_RESHAPE:
  case G_RESHAPE_OR_COPY:
    if (!compute_stride(in, o->sizes, o->rank, o->strides)) {
      if (gm == G_RESHAPE)
        return node_error(n, "view size is not compatible with input tensor's size and stride");
      *copy = true;
    }
    return NULL;
  case G_SAME:
    return NULL;
  case G_SLICE: {
    int d = wrapd(iarg(n, 1, 0), r);
    int64_t start = iarg(n, 2, 0), step = iarg(n, 4, 1);
    if (start < 0) start += in->sizes[d];
    if (start < 0) start = 0;
    if (start > in->sizes[d]) start = in->sizes[d];
    o->offset += start * in->strides[d];
    o->strides[d] = in->strides[d] * step;
    return NULL;
  }
  case G_NARROW: {
    int d = wrapd(iarg(n, 1, 0), r);
    int64_t start = iarg(n, 2, 0);
    if (start < 0) start += in->sizes[d];
    o->offset += start * in->strides[d];
    return NULL;
  }
  case G_SELECT:
  case G_UNBIND: {
    int d = wrapd(iarg(n, 1, 0), r);
    int64_t index = gm == G_UNBIND ? k : iarg(n, 2, 0);
    if (index < 0) index += in->sizes[d];
    o->offset += index * in->strides[d];
    for (int i = d; i + 1 < r; i++) o->strides[i] = in->strides[i + 1];
    return NULL;
  }
  case G_DIAGONAL: {
    int64_t off = iarg(n, 1, 0);
    int d1 = wrapd(iarg(n, 2, 0), r), d2 = wrapd(iarg(n, 3, 1), r);
    if (o->sizes[o->rank - 1] > 0) o->offset += off >= 0 ? off * in->strides[d2] : -off * in->strides[d1];
    for (int i = 0, j = 0; i < r; i++)
      if (i != d1 && i != d2) o->strides[j++] = in->strides[i];
    o->strides[o->rank - 1] = in->strides[d1] + in->strides[d2];
    return NULL;
  }
  case G_AS_STRIDED: {
    ilist(n, 2, o->strides);
    const alloy_arg *a = alloy_node_arg(n, 3);
    if (a->kind != ALLOY_ARG_NONE) o->offset = iarg(n, 3, 0);
    return NULL;
  }
  case G_UNFOLD: {
    int d = wrapd(iarg(n, 1, 0), r);
    int64_t step = iarg(n, 3, 1);
    o->strides[d] = in->strides[d] * step;
    o->strides[r] = in->strides[d];
    return NULL;
  }
  case G_PERMUTE: {
    int64_t p[ALLOY_MAX_RANK];
    ilist(n, 1, p);
    for (int i = 0; i < r; i++) o->strides[i] = in->strides[wrapd(p[i], r)];
    return NULL;
  }
  case G_TRANSPOSE:
  case G_T: {
    int a = gm == G_T ? 0 : wrapd(iarg(n, 1, 0), r), b = gm == G_T ? 1 : wrapd(iarg(n, 2, 0), r);
    if (r < 2 && gm == G_T) return NULL;
    o->strides[a] = in->strides[b];
    o->strides[b] = in->strides[a];
    return NULL;
  }
  case G_EXPAND: {
    int lead = o->rank - r;
    for (int i = 0; i < o->rank; i++)
      o->strides[i] = i < lead || in->sizes[i - lead] != o->sizes[i] ? 0 : in->strides[i - lead];
    return NULL;
  }
  case G_SPLIT: {
    int d = wrapd(iarg(n, 2, 0), r);
    int64_t start = 0;
    for (int i = 0; i < k; i++) start += alloy_value_shape(alloy_node_output(n, i))[d].value;
    o->offset += start * in->strides[d];
    return NULL;
  }
  }
  return node_error(n, "unknown view");
}

/* --- running one node on the backend --------------------------------------------*/

static view *val(eager *E, const alloy_value *v) {
  return v->id < E->nvals && E->vals[v->id].set ? &E->vals[v->id] : NULL;
}

typedef struct {
  alloy_graph *sub;
  const alloy_value **srcs; /* the source values of sub's inputs */
  int n, cap;
  alloy_error *err;
} sub_ctx;

/* The argument in the one-node graph: each tensor becomes an input. */
static alloy_arg sub_arg(sub_ctx *s, const alloy_arg *a, alloy_arg *pool, int *npool) {
  alloy_arg out = *a;
  if (a->kind == ALLOY_ARG_VALUE) {
    const alloy_value *v = a->u.value;
    for (int i = 0; i < s->n; i++)
      if (s->srcs[i] == v) return alloy_arg_value(alloy_graph_input(s->sub, i));
    if (alloy_value_kind_of(v) != ALLOY_VALUE_TENSOR) {
      if (!s->err) s->err = alloy_error_new(ALLOY_ERR_UNSUPPORTED, "scalar values are not supported");
      return out;
    }
    alloy_value_type t;
    alloy_value_get_type(v, &t);
    t.strides = NULL;
    alloy_value *in = NULL;
    alloy_error *e = alloy_graph_add_input(s->sub, alloy_value_name(v), &t, &in);
    if (e) {
      if (!s->err) s->err = e;
      else alloy_error_free(e);
      return out;
    }
    s->srcs[s->n++] = v;
    return alloy_arg_value(in);
  }
  if (a->kind == ALLOY_ARG_LIST) {
    alloy_arg *items = pool + *npool;
    *npool += a->u.list.n;
    for (int k = 0; k < a->u.list.n; k++) items[k] = sub_arg(s, &a->u.list.items[k], pool, npool);
    out.u.list.items = items;
  }
  return out;
}

/* Runs node n alone; results[k] get its outputs (malloc'd). */
static alloy_error *run_node(eager *E, const alloy_node *n, eager_tensor *results) {
  const alloy_op *op = alloy_node_op(n);
  const alloy_schema *s = alloy_op_schema(op);
  int na = alloy_node_num_args(n);
  const alloy_value *srcs[64];
  sub_ctx sc = {alloy_graph_new(), srcs, 0, 64, NULL};
  alloy_arg pool[256], pos[64], kw[64];
  const char *kwn[64];
  int npool = 0, np = 0, nk = 0;
  for (int i = 0; i < na && i < 64; i++) {
    alloy_arg a = sub_arg(&sc, alloy_node_arg(n, i), pool, &npool);
    const alloy_schema_arg *sa = alloy_schema_arg_at(s, i);
    if (sa->kwarg_only) {
      kwn[nk] = sa->name;
      kw[nk++] = a;
    } else {
      pos[np++] = a;
    }
  }
  alloy_node *node = NULL;
  alloy_error *e = sc.err;
  if (!e) e = alloy_graph_add_node(sc.sub, op, pos, np, kwn, kw, nk, "out", &node);
  int nout = node ? alloy_node_num_outputs(node) : 0;
  alloy_value *outs[64];
  for (int k = 0; k < nout && k < 64; k++) outs[k] = alloy_node_output(node, k);
  if (!e) e = alloy_graph_set_outputs(sc.sub, outs, nout);
  alloy_program *prog = NULL;
  if (!e) e = alloy_program_compile(E->rt, E->backend, sc.sub, &prog);
  /* inputs: the arguments' views, made contiguous */
  alloy_host_tensor in[64];
  int64_t sizes[64][ALLOY_MAX_RANK];
  void *bufs[64] = {0};
  for (int i = 0; i < sc.n && !e; i++) {
    view *v = val(E, srcs[i]);
    if (!v) {
      e = alloy_error_new(ALLOY_ERR_INTERNAL, "value %s has no tensor", alloy_value_name(srcs[i]));
      break;
    }
    if (!(bufs[i] = gather(E, v))) e = oom();
    memcpy(sizes[i], v->sizes, sizeof v->sizes);
    in[i] = (alloy_host_tensor){sizeof in[i], v->dtype, v->rank, sizes[i], bufs[i]};
  }
  /* A program may have more outputs than the node (the new values of
   * inputs it writes, when compilation functionalizes); the node's come
   * first. */
  int pout = prog ? alloy_graph_num_outputs(alloy_program_graph(prog)) : 0;
  alloy_host_tensor *ho = calloc((size_t)(pout ? pout : 1), sizeof *ho);
  if (!e && !ho) e = oom();
  for (int k = 0; k < pout && !e; k++) ho[k].struct_size = sizeof ho[k];
  if (!e) e = alloy_program_run(prog, in, sc.n, ho, pout);
  for (int k = 0; k < nout && !e; k++) {
    eager_tensor *t = &results[k];
    t->dtype = ho[k].dtype;
    t->rank = ho[k].rank;
    for (int d = 0; d < t->rank; d++) t->sizes[d] = ho[k].sizes[d];
    size_t nb = (size_t)eager_numel(t) * alloy_dtype_size(t->dtype);
    if (!(t->data = malloc(nb ? nb : 1))) e = oom();
    else if (nb) memcpy(t->data, ho[k].data, nb);
  }
  free(ho);
  for (int i = 0; i < sc.n; i++) free(bufs[i]);
  alloy_program_release(prog);
  alloy_graph_free(sc.sub);
  return e ? alloy_error_wrap(e, "node %s (%s)", node_name(n), alloy_op_name(op)) : NULL;
}

/* The tensor an in-place or out= op writes: its argument index, or -1. */
static int written_arg(const alloy_op *op) {
  uint32_t tags = alloy_op_tags(op);
  if (tags & ALLOY_TAG_INPLACE) return 0;
  if (!(tags & ALLOY_TAG_MUTATES)) return -1;
  const alloy_schema *s = alloy_op_schema(op);
  for (int i = 0; i < alloy_schema_num_args(s); i++) {
    const alloy_schema_arg *a = alloy_schema_arg_at(s, i);
    if (a->alias_write && a->kwarg_only) return i;
  }
  return -1;
}

static alloy_error *set_val(eager *E, const alloy_value *v, const view *w) {
  if (v->id >= E->nvals) return alloy_error_new(ALLOY_ERR_INTERNAL, "value id out of range");
  E->vals[v->id] = *w;
  E->vals[v->id].set = true;
  return NULL;
}

/* A new storage holding t; its contiguous view. */
static alloy_error *fresh_view(eager *E, const eager_tensor *t, view *out) {
  size_t nb = (size_t)eager_numel(t) * alloy_dtype_size(t->dtype);
  int s = new_storage(E, t->data, nb);
  if (s < 0) return oom();
  *out = (view){.set = true, .storage = s, .dtype = t->dtype, .rank = t->rank};
  memcpy(out->sizes, t->sizes, sizeof t->sizes);
  contiguous(out);
  return NULL;
}

static alloy_error *step(eager *E, const alloy_node *n) {
  const alloy_op *op = alloy_node_op(n);
  int gm = view_geom(op);
  if (gm >= 0) {
    const alloy_arg *a = alloy_node_arg(n, 0);
    view *in = a->kind == ALLOY_ARG_VALUE ? val(E, a->u.value) : NULL;
    if (!in) return node_error(n, "its input has no tensor");
    view base = *in;
    for (int k = 0; k < alloy_node_num_outputs(n); k++) {
      view o;
      bool copy;
      alloy_error *e = view_of(n, (geom)gm, k, &base, &o, &copy);
      if (e) return e;
      if (copy) {
        /* reshape that cannot view: a contiguous copy */
        eager_tensor t = {.dtype = base.dtype, .rank = o.rank};
        memcpy(t.sizes, o.sizes, sizeof o.sizes);
        if (!(t.data = gather(E, &base))) return oom();
        e = fresh_view(E, &t, &o);
        free(t.data);
        if (e) return e;
      }
      if ((e = set_val(E, alloy_node_output(n, k), &o))) return e;
    }
    return NULL;
  }
  int w = written_arg(op);
  view *target = NULL;
  if (w >= 0) {
    const alloy_arg *a = alloy_node_arg(n, w);
    target = a->kind == ALLOY_ARG_VALUE ? val(E, a->u.value) : NULL;
    if (!target) return node_error(n, "the written argument has no tensor");
    for (int d = 0; d < target->rank; d++)
      if (target->strides[d] == 0 && target->sizes[d] > 1)
        return node_error(n, "unsupported operation: more than one element of the written-to "
                             "tensor refers to a single memory location. Please clone() the "
                             "tensor before performing the operation.");
  }
  eager_tensor res[64] = {{0}};
  int nout = alloy_node_num_outputs(n);
  alloy_error *e = run_node(E, n, res);
  if (!e && target) {
    /* the functional result, written through the view */
    if (nout < 1 || res[0].dtype != target->dtype ||
        eager_numel(&res[0]) != numel_of(target->sizes, target->rank))
      e = node_error(n, "its result does not fit the written tensor");
    else {
      copy_ctx c = {E, res[0].data};
      view t = *target;
      for_each(&t, scatter_fn, &c);
      for (int k = 0; k < nout && !e; k++)
        if (alloy_value_kind_of(alloy_node_output(n, k)) == ALLOY_VALUE_TENSOR)
          e = set_val(E, alloy_node_output(n, k), &t);
    }
  } else {
    for (int k = 0; k < nout && !e; k++) {
      if (alloy_value_kind_of(alloy_node_output(n, k)) != ALLOY_VALUE_TENSOR) {
        e = node_error(n, "scalar outputs are not supported");
        break;
      }
      view o;
      if (!(e = fresh_view(E, &res[k], &o))) e = set_val(E, alloy_node_output(n, k), &o);
    }
  }
  for (int k = 0; k < nout && k < 64; k++) eager_tensor_free(&res[k]);
  return e;
}

static alloy_error *read_view(eager *E, const view *v, eager_tensor *out) {
  memset(out, 0, sizeof *out);
  out->dtype = v->dtype;
  out->rank = v->rank;
  memcpy(out->sizes, v->sizes, sizeof v->sizes);
  out->data = gather(E, v);
  return out->data ? NULL : oom();
}

alloy_error *eager_run(alloy_runtime *rt, int backend, const alloy_graph *g,
                       const eager_tensor *inputs, eager_tensor *outputs,
                       eager_tensor *final_inputs) {
  eager E = {.rt = rt, .backend = backend, .g = g};
  int nin = alloy_graph_num_inputs(g), nn = alloy_graph_num_nodes(g),
      nout = alloy_graph_num_outputs(g), max_id = 0;
  for (int i = 0; i < nin; i++)
    if (alloy_graph_input(g, i)->id > max_id) max_id = alloy_graph_input(g, i)->id;
  for (int i = 0; i < nn; i++) {
    alloy_node *n = alloy_graph_node(g, i);
    for (int k = 0; k < alloy_node_num_outputs(n); k++)
      if (alloy_node_output(n, k)->id > max_id) max_id = alloy_node_output(n, k)->id;
  }
  E.nvals = max_id + 1;
  E.vals = calloc((size_t)E.nvals, sizeof *E.vals);
  view *initial = calloc((size_t)(nin ? nin : 1), sizeof *initial);
  alloy_error *e = E.vals && initial ? NULL : oom();
  for (int i = 0; i < nin && !e; i++) {
    alloy_value *v = alloy_graph_input(g, i);
    if (alloy_value_kind_of(v) != ALLOY_VALUE_TENSOR) {
      e = alloy_error_new(ALLOY_ERR_UNSUPPORTED, "input %s: only tensor inputs", alloy_value_name(v));
      break;
    }
    if ((e = fresh_view(&E, &inputs[i], &initial[i]))) break;
    e = set_val(&E, v, &initial[i]);
  }
  for (int i = 0; i < nn && !e; i++) e = step(&E, alloy_graph_node(g, i));
  int done = 0;
  for (; done < nout && !e; done++) {
    view *v = val(&E, alloy_graph_output(g, done));
    e = v ? read_view(&E, v, &outputs[done])
          : alloy_error_new(ALLOY_ERR_UNSUPPORTED, "output %d is not a tensor", done);
  }
  int fdone = 0;
  for (; final_inputs && fdone < nin && !e; fdone++) e = read_view(&E, &initial[fdone], &final_inputs[fdone]);
  if (e) {
    for (int k = 0; k < done; k++) eager_tensor_free(&outputs[k]);
    for (int k = 0; k < fdone; k++) eager_tensor_free(&final_inputs[k]);
  }
  for (int s = 0; s < E.nst; s++) free(E.st[s].data);
  free(E.st);
  free(E.vals);
  free(initial);
  return e;
}
