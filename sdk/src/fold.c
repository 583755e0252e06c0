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

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* ---- evaluating: shares of the folded nodes, on threads -------------------- */

/* Folding is a chain per weight, mostly (a transpose of each matrix:
 * bert's 440 MB took a second on one thread), and the chains are
 * independent: the folded nodes are split into connected components,
 * dealt by bytes to at most FOLD_SHARES shares, each share's subgraph is
 * compiled on ref (compiles come one at a time) and the shares run at once,
 * each on a thread of its own, each copying its outputs out itself. */
enum { FOLD_SHARES = 8 };

typedef struct fold_share {
  alloy_graph *sub;
  alloy_program *prog;
  alloy_host_tensor *ins, *outs;
  int nin, nout;
  int at;           /* its outputs' first index in the fold_result */
  fold_result *f;
  alloy_error *err;
} fold_share;

/* Runs share s and copies its outputs into f from index s->at. */
static void *share_run(void *arg) {
  fold_share *s = arg;
  fold_result *f = s->f;
  for (int k = 0; k < s->nout; k++) s->outs[k].struct_size = ALLOY_STRUCT_SIZE(alloy_host_tensor, data);
  /* The program's own inputs: weights of the model; ref keeps none of
   * them after the program goes. */
  s->err = alloy_program_run(s->prog, s->ins, s->nin, s->outs, s->nout);
  for (int k = 0; k < s->nout && !s->err; k++) {
    const alloy_host_tensor *o = &s->outs[k];
    uint64_t bytes = alloy_dtype_size(o->dtype);
    for (int d = 0; d < o->rank; d++) bytes *= (uint64_t)o->sizes[d];
    int at = s->at + k;
    if (!(f->data[at] = malloc(bytes ? bytes : 1))) {
      s->err = oom();
      break;
    }
    memcpy(f->data[at], o->data, bytes);
    memcpy(&f->sizes[at * ALLOY_MAX_RANK], o->sizes, sizeof *f->sizes * (size_t)o->rank);
    f->t[at] = (alloy_host_tensor){.struct_size = ALLOY_STRUCT_SIZE(alloy_host_tensor, data), .dtype = o->dtype,
                                   .rank = o->rank, .sizes = &f->sizes[at * ALLOY_MAX_RANK], .data = f->data[at]};
  }
  return NULL;
}

/* Union-find over the folded nodes, by index. */
static int root_of(int *up, int i) {
  while (up[i] != i) i = up[i] = up[up[i]];
  return i;
}

typedef struct joiner {
  const int *producer; /* by value id: the folded node making it, or -1 */
  int *up;
  int node;
} joiner;

static void join_value(alloy_value *v, void *ctx) {
  joiner *j = ctx;
  int p = j->producer[v->id];
  if (p >= 0) j->up[root_of(j->up, p)] = root_of(j->up, j->node);
}

/* share[i]: which share folded node i goes to; returns the number of shares. */
static int deal_shares(const alloy_graph *g, alloy_node *const *nodes, int count, int *share) {
  int *producer = malloc(sizeof *producer * ((size_t)g->nvalues + 1)), *up = malloc(sizeof *up * ((size_t)count + 1));
  double *weight = calloc((size_t)count + 1, sizeof *weight), load[FOLD_SHARES] = {0};
  int *order = malloc(sizeof *order * ((size_t)count + 1)), *share_of = malloc(sizeof *share_of * ((size_t)count + 1));
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  int nshares = cpus < 2 ? 1 : cpus < FOLD_SHARES ? (int)cpus : FOLD_SHARES;
  if (!producer || !up || !weight || !order || !share_of) nshares = 1;
  for (int i = 0; i < count; i++) share[i] = 0;
  if (nshares > 1) {
    for (int v = 0; v < g->nvalues; v++) producer[v] = -1;
    for (int i = 0; i < count; i++) {
      up[i] = i;
      for (int k = 0; k < alloy_node_num_outputs(nodes[i]); k++) producer[alloy_node_output(nodes[i], k)->id] = i;
    }
    for (int i = 0; i < count; i++) {
      joiner j = {producer, up, i};
      for (int a = 0; a < alloy_node_num_args(nodes[i]); a++) alloy_arg_for_each_value(alloy_node_arg(nodes[i], a), join_value, &j);
    }
    int ncomp = 0;
    for (int i = 0; i < count; i++) {
      for (int k = 0; k < alloy_node_num_outputs(nodes[i]); k++)
        weight[root_of(up, i)] += concrete_bytes(alloy_node_output(nodes[i], k));
      if (root_of(up, i) == i) order[ncomp++] = i;
    }
    /* the heaviest component first, each onto the lightest share */
    for (int a = 1; a < ncomp; a++)
      for (int b = a; b > 0 && weight[order[b]] > weight[order[b - 1]]; b--) {
        int t = order[b];
        order[b] = order[b - 1], order[b - 1] = t;
      }
    if (ncomp < nshares) nshares = ncomp;
    for (int c = 0; c < ncomp; c++) {
      int light = 0;
      for (int k = 1; k < nshares; k++)
        if (load[k] < load[light]) light = k;
      load[light] += weight[order[c]];
      share_of[order[c]] = light; /* by the component's root */
    }
    for (int i = 0; i < count; i++) share[i] = share_of[root_of(up, i)];
  }
  free(producer), free(up), free(weight), free(order), free(share_of);
  return nshares;
}

/* Runs the folded nodes on ref and keeps their outputs in f, in the order
 * of the shares' subgraphs' outputs; *subs receives the subgraphs (the
 * caller frees them), *nsubs their number. */
static alloy_error *evaluate(alloy_runtime *rt, const alloy_graph *g, alloy_node *const *nodes, int count,
                             const alloy_host_tensor *weights, fold_result *f, alloy_graph **subs, int *nsubs) {
  int ref = alloy_runtime_find_backend(rt, "ref");
  if (ref < 0) return alloy_error_new(ALLOY_ERR_NOT_FOUND, "no reference backend to fold on");
  int *share = malloc(sizeof *share * ((size_t)count + 1));
  alloy_node **mine = malloc(sizeof *mine * ((size_t)count + 1));
  fold_share sh[FOLD_SHARES] = {{0}};
  alloy_error *e = share && mine ? NULL : oom();
  int n = e ? 0 : deal_shares(g, nodes, count, share), nout = 0;
  for (int k = 0; k < n && !e; k++) {
    int m = 0;
    for (int i = 0; i < count; i++)
      if (share[i] == k) mine[m++] = nodes[i];
    e = alloy_graph_extract(g, mine, m, &sh[k].sub);
    if (e) break;
    subs[k] = sh[k].sub;
    *nsubs = k + 1;
    sh[k].nin = alloy_graph_num_inputs(sh[k].sub), sh[k].nout = alloy_graph_num_outputs(sh[k].sub);
    sh[k].at = nout, sh[k].f = f;
    nout += sh[k].nout;
    sh[k].ins = calloc((size_t)sh[k].nin + 1, sizeof *sh[k].ins);
    sh[k].outs = calloc((size_t)sh[k].nout + 1, sizeof *sh[k].outs);
    if (!sh[k].ins || !sh[k].outs) e = oom();
    for (int i = 0; i < sh[k].nin && !e; i++) {
      alloy_value *v = alloy_graph_find_value(g, alloy_value_name(alloy_graph_input(sh[k].sub, i)));
      int at = 0;
      while (alloy_graph_input(g, at) != v) at++;
      sh[k].ins[i] = weights[at];
    }
    if (!e) e = alloy_program_compile(rt, ref, sh[k].sub, &sh[k].prog);
  }
  free(share), free(mine);
  f->t = calloc((size_t)nout + 1, sizeof *f->t);
  f->sizes = calloc((size_t)nout * ALLOY_MAX_RANK + 1, sizeof *f->sizes);
  f->data = calloc((size_t)nout + 1, sizeof *f->data);
  if (!e && (!f->t || !f->sizes || !f->data)) e = oom();
  if (!e) f->n = nout;
  pthread_t th[FOLD_SHARES];
  bool started[FOLD_SHARES] = {false};
  for (int k = 1; k < n && !e; k++) started[k] = pthread_create(&th[k], NULL, share_run, &sh[k]) == 0;
  if (!e && n) share_run(&sh[0]);
  for (int k = 1; k < n && !e; k++) {
    if (started[k]) pthread_join(th[k], NULL);
    else share_run(&sh[k]); /* no thread to be had: here */
  }
  for (int k = 0; k < n; k++) {
    if (!e) e = sh[k].err;
    else alloy_error_free(sh[k].err);
    alloy_program_release(sh[k].prog);
    free(sh[k].ins), free(sh[k].outs);
  }
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
  alloy_graph *subs[FOLD_SHARES] = {NULL};
  int nsubs = 0;
  alloy_error *e = f ? evaluate(rt, g, nodes, count, weights, f, subs, &nsubs) : oom();
  free(nodes);
  if (e) {
    /* Folding is an optimization: a graph ref cannot run here still runs
     * unfolded on its backends. Say why, once, where logs go. */
    char line[512];
    snprintf(line, sizeof line, "not folding %d nodes that depend only on weights: %s", count,
             alloy_error_message(e));
    alloy_host_table()->log(ALLOY_LOG_INFO, "alloy", line);
    alloy_error_free(e);
    for (int k = 0; k < nsubs; k++) alloy_graph_free(subs[k]);
    fold_free(f);
    return NULL;
  }
  /* Each folded value the graph still reads becomes a constant input. */
  for (int k = 0, sk = 0, base = 0; k < f->n && !e; k++) {
    while (k - base >= alloy_graph_num_outputs(subs[sk])) base += alloy_graph_num_outputs(subs[sk++]);
    const char *name = alloy_value_name(alloy_graph_output(subs[sk], k - base));
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
  for (int k = 0; k < nsubs; k++) alloy_graph_free(subs[k]);
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
