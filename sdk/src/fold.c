/*
 * sdk/src/fold.c: constant folding at compile (fold.h). Exported models
 * compute on their weights in the forward pass: every addmm reads
 * permute(weight), a rotary table is sliced and cast, a constant is
 * expanded. Run per forward, that work is the same every time; here it is
 * done once, when the program is compiled with its weights bound, on the
 * reference backend (the oracle, so the folded values are exactly what the
 * unfolded graph would compute there), and the results become constant
 * inputs that stay resident on the backends like any weight.
 *
 * A node folds when every tensor it reads is a bound weight or a folded
 * value, it is deterministic (random ops draw anew each run), its sizes are
 * concrete, and it makes no more bytes than it reads: an expand or a
 * broadcast of a weight is cheaper to recompute than to keep.
 *
 * The feed (fold.h) is what programs and mixtures share around it: the
 * weights bound, the folding done, and each run's inputs assembled from the
 * caller's, the bound weights and the folded constants (into memory of the
 * run's own: runs of one program on several threads share the feed, which
 * they only read).
 */
#include "sdk/src/fold.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fold_result {
  int n;                 /* inputs added to the graph */
  alloy_host_tensor *t;  /* n */
  int64_t *sizes;        /* n * ALLOY_MAX_RANK */
  void **data;           /* n, malloc'd */
  int nodes;             /* nodes folded */
};

static alloy_error *oom(void) {
  return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
}

const alloy_host_tensor *fold_tensor(const fold_result *f, int k) { return &f->t[k]; }
int fold_nodes(const fold_result *f) { return f ? f->nodes : 0; }

void fold_free(fold_result *f) {
  if (!f) return;
  for (int k = 0; k < f->n; k++) free(f->data[k]);
  free(f->data);
  free(f->t);
  free(f->sizes);
  free(f);
}

/* Bytes of a tensor value with concrete sizes; -1 otherwise. */
static double concrete_bytes(const alloy_value *v) {
  if (alloy_value_kind_of(v) != ALLOY_VALUE_TENSOR) return -1;
  double n = (double)alloy_dtype_size(alloy_value_dtype(v));
  for (int d = 0; d < alloy_value_rank(v); d++) {
    alloy_dim dim = alloy_value_shape(v)[d];
    if (!alloy_dim_is_const(dim)) return -1;
    n *= (double)dim.value;
  }
  return n;
}

/* What a node reads, for the folding test. */
typedef struct reads {
  const bool *folded; /* by value id */
  bool all, any;
  double bytes;
} reads;

static void read_value(alloy_value *v, void *ctx) {
  reads *r = ctx;
  if (!r->folded[v->id]) {
    r->all = false;
    return;
  }
  r->any = true;
  r->bytes += concrete_bytes(v);
}

static const uint32_t no_fold_tags = ALLOY_TAG_NONDETERMINISTIC | ALLOY_TAG_MUTATES |
                                     ALLOY_TAG_DATA_DEPENDENT_OUTPUT |
                                     ALLOY_TAG_DYNAMIC_OUTPUT_SHAPE;

/* Marks the nodes that fold; returns how many. */
static int mark(alloy_graph *g, const alloy_host_tensor *weights, int nweights, bool *folded,
                alloy_node **nodes) {
  for (int i = 0; i < alloy_graph_num_inputs(g) && i < nweights; i++)
    if (weights[i].data) folded[alloy_graph_input(g, i)->id] = true;
  int count = 0;
  for (int i = 0; i < alloy_graph_num_nodes(g); i++) {
    alloy_node *n = alloy_graph_node(g, i);
    if (alloy_op_tags(n->op) & no_fold_tags) continue;
    reads r = {folded, true, false, 0};
    for (int a = 0; a < alloy_node_num_args(n) && r.all; a++)
      alloy_arg_for_each_value(alloy_node_arg(n, a), read_value, &r);
    if (!r.all || !r.any) continue;
    double out = 0;
    for (int k = 0; k < alloy_node_num_outputs(n) && out >= 0; k++) {
      double b = concrete_bytes(alloy_node_output(n, k));
      out = b < 0 ? -1 : out + b;
    }
    if (out < 0 || out > r.bytes) continue;
    for (int k = 0; k < alloy_node_num_outputs(n); k++) folded[alloy_node_output(n, k)->id] = true;
    nodes[count++] = n;
  }
  return count;
}

/* A fresh input name for the folded value called name. */
static void fresh_name(const alloy_graph *g, const char *name, char *buf, size_t cap) {
  snprintf(buf, cap, "%s_folded", name);
  for (int k = 2; alloy_graph_find_value(g, buf); k++) snprintf(buf, cap, "%s_folded%d", name, k);
}

/* Runs the folded subgraph on ref and keeps its outputs. */
static alloy_error *evaluate(alloy_runtime *rt, const alloy_graph *g, const alloy_graph *sub,
                             const alloy_host_tensor *weights, fold_result *f) {
  int ref = alloy_runtime_find_backend(rt, "ref");
  if (ref < 0) return alloy_error_new(ALLOY_ERR_NOT_FOUND, "no reference backend to fold on");
  int nin = alloy_graph_num_inputs(sub), nout = alloy_graph_num_outputs(sub);
  alloy_host_tensor *ins = calloc((size_t)nin + 1, sizeof *ins);
  alloy_host_tensor *outs = calloc((size_t)nout + 1, sizeof *outs);
  f->t = calloc((size_t)nout + 1, sizeof *f->t);
  f->sizes = calloc((size_t)nout * ALLOY_MAX_RANK + 1, sizeof *f->sizes);
  f->data = calloc((size_t)nout + 1, sizeof *f->data);
  alloy_error *e = (!ins || !outs || !f->t || !f->sizes || !f->data) ? oom() : NULL;
  for (int i = 0; i < nin && !e; i++) {
    alloy_value *v = alloy_graph_find_value(g, alloy_value_name(alloy_graph_input(sub, i)));
    int at = 0;
    while (alloy_graph_input(g, at) != v) at++;
    ins[i] = weights[at];
  }
  alloy_program *prog = NULL;
  if (!e) e = alloy_program_compile(rt, ref, sub, &prog);
  for (int k = 0; k < nout; k++) outs[k].struct_size = ALLOY_STRUCT_SIZE(alloy_host_tensor, data);
  /* The program's own inputs: weights of the model; ref keeps none of
   * them after the program goes. */
  if (!e) e = alloy_program_run(prog, ins, nin, outs, nout);
  for (int k = 0; k < nout && !e; k++) {
    uint64_t bytes = alloy_dtype_size(outs[k].dtype);
    for (int d = 0; d < outs[k].rank; d++) bytes *= (uint64_t)outs[k].sizes[d];
    if (!(f->data[k] = malloc(bytes ? bytes : 1))) {
      e = oom();
      break;
    }
    memcpy(f->data[k], outs[k].data, bytes);
    memcpy(&f->sizes[k * ALLOY_MAX_RANK], outs[k].sizes, sizeof *f->sizes * (size_t)outs[k].rank);
    f->t[k] = (alloy_host_tensor){.struct_size = ALLOY_STRUCT_SIZE(alloy_host_tensor, data),
                                  .dtype = outs[k].dtype, .rank = outs[k].rank,
                                  .sizes = &f->sizes[k * ALLOY_MAX_RANK], .data = f->data[k]};
    f->n = k + 1;
  }
  alloy_program_release(prog);
  free(ins);
  free(outs);
  return e;
}

alloy_error *fold_weights(alloy_runtime *rt, alloy_graph *g, const alloy_host_tensor *weights,
                          int nweights, fold_result **out) {
  *out = NULL;
  bool *folded = calloc((size_t)g->nvalues + 1, sizeof *folded);
  alloy_node **nodes = malloc(sizeof *nodes * ((size_t)alloy_graph_num_nodes(g) + 1));
  if (!folded || !nodes) {
    free(folded), free(nodes);
    return oom();
  }
  int count = mark(g, weights, nweights, folded, nodes);
  free(folded);
  if (!count) {
    free(nodes);
    return NULL;
  }
  fold_result *f = calloc(1, sizeof *f);
  alloy_graph *sub = NULL;
  alloy_error *e = f ? alloy_graph_extract(g, nodes, count, &sub) : oom();
  free(nodes);
  if (!e) e = evaluate(rt, g, sub, weights, f);
  if (e) {
    /* Folding is an optimization: a graph ref cannot run here still runs
     * unfolded on its backends. Say why, once, where logs go. */
    char line[512];
    snprintf(line, sizeof line, "not folding %d nodes that depend only on weights: %s", count,
             alloy_error_message(e));
    alloy_host_table()->log(ALLOY_LOG_INFO, "alloy", line);
    alloy_error_free(e);
    alloy_graph_free(sub);
    fold_free(f);
    return NULL;
  }
  /* Each folded value the graph still reads becomes a constant input. */
  for (int k = 0; k < f->n && !e; k++) {
    const char *name = alloy_value_name(alloy_graph_output(sub, k));
    alloy_value *v = alloy_graph_find_value(g, name), *in = NULL;
    alloy_value_type ty;
    alloy_value_get_type(v, &ty);
    ty.strides = NULL;
    char fresh[256];
    fresh_name(g, name, fresh, sizeof fresh);
    e = alloy_graph_add_input(g, fresh, &ty, &in);
    int at = alloy_graph_num_inputs(g) - 1;
    if (!e) e = alloy_graph_set_input_role(g, at, ALLOY_INPUT_CONSTANT, fresh);
    if (!e) {
      uint64_t bytes = alloy_dtype_size(f->t[k].dtype);
      for (int d = 0; d < f->t[k].rank; d++) bytes *= (uint64_t)f->t[k].sizes[d];
      alloy_graph_set_input_data(g, at, f->data[k], bytes);
      e = alloy_graph_replace_uses(g, v, in);
    }
  }
  f->nodes = count;
  alloy_graph_dce(g);
  alloy_graph_free(sub);
  if (e) {
    fold_free(f);
    return alloy_error_wrap(e, "folding weights");
  }
  *out = f;
  return NULL;
}

alloy_error *feed_prepare(alloy_runtime *rt, alloy_graph *g, const alloy_program_options *o,
                          feed *f) {
  f->ncaller = alloy_graph_num_inputs(g);
  alloy_error *e = program_bind_weights(g, o, &f->bound);
  uint64_t t0 = trace_on() ? trace_clock_ns() : 0;
  if (!e && f->bound) e = fold_weights(rt, g, f->bound, f->ncaller, &f->fold);
  if (t0 && f->bound) trace_range("alloy", "compile", "fold weights", t0, trace_clock_ns());
  if (e) return e;
  int nin = f->ninputs = alloy_graph_num_inputs(g);
  f->resident = calloc((size_t)nin + 1, sizeof *f->resident);
  if (!f->resident) return oom();
  for (int i = 0; i < nin; i++) f->resident[i] = alloy_graph_input_role(g, i, NULL) != ALLOY_INPUT_USER;
  return NULL;
}

alloy_host_tensor *feed_inputs(const feed *f, const alloy_host_tensor *caller) {
  alloy_host_tensor *full = malloc(sizeof *full * ((size_t)f->ninputs + 1));
  for (int i = 0; full && i < f->ninputs; i++)
    full[i] = i >= f->ncaller ? *fold_tensor(f->fold, i - f->ncaller)
              : f->bound && f->bound[i].data ? f->bound[i] : caller[i];
  return full;
}

void feed_free(feed *f) {
  free(f->bound);
  fold_free(f->fold);
  free(f->resident);
  memset(f, 0, sizeof *f);
}
