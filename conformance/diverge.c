/*
 * conformance/diverge.c: pins a wrong graph-level result (a graph test, a
 * golden model) to the first node where the backend under test parts from
 * the reference backend.
 *
 * A model's outputs say only that something went wrong somewhere in a few
 * hundred nodes. Here the graph (its symbols bound to the sizes of the run,
 * functionalized so that every value is computed once) runs on ref with
 * every node's tensors as outputs; then, in graph order, each node alone
 * (alloy_graph_extract) runs on the backend with ref's values of its
 * operands and is compared with ref's values of its results. The first one
 * outside the tolerance of whole models (compare.h: looser than an op's, so
 * that a contraction summed in another order is not blamed) is the node
 * that went wrong; its one-node graph, inputs and ref's outputs are written
 * as a repro that `alloy conform --replay` runs on its own. Nodes are fed
 * ref's operands, not the backend's, so an error is blamed on the node that
 * made it and not on the ones it flows through. Each node is checked the
 * way the test compiled the graph (alone or beside ref): a node the backend
 * does not claim there is not its to get wrong. Siblings: check.c (running
 * and comparing), graphs.c (the tests that call this).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloy/graph.h"
#include "alloy/runtime.h"
#include "conformance/compare.h"
#include "conformance/suite.h"
#include "decompositions/functionalize.h"

enum { MAX_NODE_IO = 16 };

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* g with its backed symbols bound from the inputs' sizes (as the runtime
 * binds them), then functionalized; NULL with the reason in why. */
static alloy_graph *concrete_functional(const alloy_graph *g, const alloy_host_tensor *in, int nin,
                                        char *why, size_t cap) {
  alloy_symtab *st = alloy_graph_symtab((alloy_graph *)g);
  int nsyms = alloy_symtab_count(st);
  int64_t *values = calloc((size_t)nsyms + 1, sizeof *values);
  bool *bound = calloc((size_t)nsyms + 1, sizeof *bound);
  alloy_graph *gs = NULL, *gf = NULL;
  alloy_error *e = NULL;
  if (!values || !bound) e = alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; !e && i < nin && i < alloy_graph_num_inputs(g); i++) {
    const alloy_value *v = alloy_graph_input(g, i);
    if (alloy_value_kind_of(v) != ALLOY_VALUE_TENSOR) continue;
    for (int d = 0; d < alloy_value_rank(v) && d < in[i].rank; d++)
      for (int s = 0; s < nsyms; s++)
        if (!bound[s] && alloy_dim_same(alloy_value_shape(v)[d], alloy_symtab_symbol(st, s)))
          values[s] = in[i].sizes[d], bound[s] = true;
  }
  if (!e) e = nsyms ? alloy_graph_specialize(g, values, bound, nsyms, &gs) : alloy_graph_clone(g, &gs);
  if (!e) e = alloy_functionalize(gs, &gf);
  if (e) snprintf(why, cap, "%s", alloy_error_message(e));
  alloy_error_free(e);
  alloy_graph_free(gs);
  free(values);
  free(bound);
  return gf;
}

/* ref's value of every node's tensor results, from one run. */
typedef struct probe {
  alloy_graph *all;          /* a copy of the graph whose outputs they are */
  alloy_program *prog;       /* owns the values until released             */
  alloy_host_tensor *in;     /* the graph's inputs (borrowed data)         */
  int nin;
  alloy_host_tensor *vals;   /* vals[k] is the value called names[k]      */
  const char **names;        /* borrowed from all                          */
  int n;
} probe;

static void probe_free(probe *p) {
  alloy_program_release(p->prog);
  alloy_graph_free(p->all);
  free(p->in);
  free(p->vals);
  free(p->names);
  *p = (probe){0};
}

/* The caller's input called name, by position in g. */
static int input_index(const alloy_graph *g, const char *name) {
  for (int i = 0; i < alloy_graph_num_inputs(g); i++)
    if (!strcmp(alloy_value_name(alloy_graph_input(g, i)), name)) return i;
  return -1;
}

static alloy_error *probe_run(conform_env *env, const alloy_graph *gf, const alloy_graph *g,
                              const alloy_host_tensor *in, int nin, probe *p) {
  *p = (probe){0};
  alloy_error *e = alloy_graph_clone(gf, &p->all);
  if (e) return e;
  int cap = 0;
  for (int i = 0; i < alloy_graph_num_nodes(p->all); i++)
    cap += alloy_node_num_outputs(alloy_graph_node(p->all, i));
  alloy_value **outs = calloc((size_t)cap + 1, sizeof *outs);
  p->names = calloc((size_t)cap + 1, sizeof *p->names);
  p->vals = calloc((size_t)cap + 1, sizeof *p->vals);
  p->nin = alloy_graph_num_inputs(p->all);
  p->in = calloc((size_t)p->nin + 1, sizeof *p->in);
  if (!outs || !p->names || !p->vals || !p->in)
    e = alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; !e && i < alloy_graph_num_nodes(p->all); i++) {
    alloy_node *node = alloy_graph_node(p->all, i);
    for (int k = 0; k < alloy_node_num_outputs(node); k++) {
      alloy_value *v = alloy_node_output(node, k);
      if (alloy_value_kind_of(v) != ALLOY_VALUE_TENSOR) continue;
      p->names[p->n] = alloy_value_name(v);
      p->vals[p->n].struct_size = sizeof p->vals[p->n];
      outs[p->n++] = v;
    }
  }
  /* Inputs by name: binding symbols and functionalizing keep them all. */
  for (int j = 0; !e && j < p->nin; j++) {
    int i = input_index(g, alloy_value_name(alloy_graph_input(p->all, j)));
    if (i < 0 || i >= nin)
      e = alloy_error_new(ALLOY_ERR_INTERNAL, "input %s has no value",
                          alloy_value_name(alloy_graph_input(p->all, j)));
    else p->in[j] = in[i];
  }
  if (!e) e = alloy_graph_set_outputs(p->all, outs, p->n);
  free(outs);
  /* ref as the oracle runs: without a decomposition forced on the backend. */
  alloy_program_options po = {.struct_size = sizeof po, .decompose = ALLOY_DECOMPOSE_AUTO};
  if (!e) e = alloy_program_compile_ex(env->rt, env->ref, p->all, &po, &p->prog);
  if (!e) e = alloy_program_run(p->prog, p->in, p->nin, p->vals, p->n);
  return e;
}

/* ref's value called name: an input of the graph or a node's result. */
static const alloy_host_tensor *probe_find(const probe *p, const char *name) {
  int i = input_index(p->all, name);
  if (i >= 0) return &p->in[i];
  for (int k = 0; k < p->n; k++)
    if (!strcmp(p->names[k], name)) return &p->vals[k];
  return NULL;
}

static conform_tensor borrowed(const alloy_host_tensor *h) {
  conform_tensor t = {.dtype = h->dtype, .rank = h->rank > 8 ? 8 : h->rank, .data = h->data};
  for (int d = 0; d < t.rank; d++) t.sizes[d] = h->sizes[d];
  return t;
}

/* The outcome of one node checked alone. */
typedef enum { NODE_AGREES, NODE_DIFFERS, NODE_NOT_RUN } node_outcome;

/* Runs node (of gf) alone on the backend with ref's operands; on
 * NODE_DIFFERS, msg says how and, when asked, its repro is written and
 * named in path. */
static node_outcome check_node(conform_env *env, const conform_test *t, const alloy_graph *gf,
                               alloy_node *node, int index, const probe *p, bool mixture,
                               char *msg, size_t cap, char *path, size_t pcap) {
  const char *op = alloy_op_name(alloy_node_op(node));
  path[0] = 0;
  if (alloy_op_tags(alloy_node_op(node)) & ALLOY_TAG_NONDETERMINISTIC) return NODE_NOT_RUN;
  alloy_graph *g1 = NULL;
  alloy_error *e = alloy_graph_extract(gf, &node, 1, &g1);
  if (e) {
    alloy_error_free(e);
    return NODE_NOT_RUN;
  }
  int nin = alloy_graph_num_inputs(g1), nout = alloy_graph_num_outputs(g1);
  node_outcome r = NODE_NOT_RUN;
  alloy_host_tensor in[64];
  conform_tensor want[MAX_NODE_IO], got[MAX_NODE_IO] = {{0}};
  bool ok = nin <= 64 && nout > 0 && nout <= MAX_NODE_IO;
  for (int i = 0; ok && i < nin; i++) {
    /* A scalar operand (a SymInt the graph computes) has no tensor here. */
    const alloy_host_tensor *h = probe_find(p, alloy_value_name(alloy_graph_input(g1, i)));
    if (!(ok = h != NULL)) break;
    in[i] = *h;
  }
  for (int k = 0; ok && k < nout; k++) {
    const alloy_host_tensor *h = probe_find(p, alloy_value_name(alloy_graph_output(g1, k)));
    if ((ok = h != NULL)) want[k] = borrowed(h);
  }
  char run_why[512];
  if (ok && conform_run_graph(env, env->backend, g1, mixture, in, nin, got, nout, NULL, run_why,
                              sizeof run_why) == CONFORM_PASS) {
    r = NODE_AGREES;
    for (int k = 0; k < nout && r == NODE_AGREES; k++) {
      alloy_host_tensor h = conform_tensor_host(&got[k]);
      alloy_st_entry w = conform_tensor_entry(&want[k], "expected");
      double max_abs, max_rel;
      char where[256];
      if (conform_measure(&h, &w, conform_model_tolerance(want[k].dtype), &max_abs, &max_rel, where,
                          sizeof where))
        continue;
      if (conform_op_has_ties(op) && nin > 0) {
        /* An index that picks another of equal values is not wrong. */
        int di = alloy_schema_find_arg(alloy_op_schema(alloy_node_op(node)), "dim");
        const alloy_arg *a = di >= 0 ? alloy_node_arg(node, di) : NULL;
        int64_t dim = a && a->kind == ALLOY_ARG_INT && alloy_dim_is_const(a->u.i) ? a->u.i.value : -1;
        conform_tensor self = borrowed(&in[0]);
        alloy_st_entry s = conform_tensor_entry(&self, "self");
        if (conform_ties_ok(op, &h, &w, &s, dim)) continue;
      }
      char label[32] = "";
      if (nout > 1) snprintf(label, sizeof label, "output %d: ", k);
      snprintf(msg, cap, "%s %%%s: given ref's inputs, %smax abs err %.3g, max rel err %.3g, %s", op,
               alloy_value_name(alloy_node_output(node, 0)), label, max_abs, max_rel, where);
      r = NODE_DIFFERS;
    }
  }
  if (r == NODE_DIFFERS && env->o->repro_dir) {
    /* The node as a test of its own: its op names the tolerance replay
     * uses; "beside ref" in the first line makes replay compile it so. */
    conform_test t1 = *t;
    t1.op = op;
    snprintf(t1.dtype, sizeof t1.dtype, "%s", alloy_dtype_name(want[0].dtype));
    snprintf(t1.variant, sizeof t1.variant, "node %d of %.24s%s", index + 1, t->op,
             mixture ? ", beside ref" : "");
    conform_env quiet = *env;
    quiet.repro_why = NULL;
    conform_repro_write(&quiet, &t1, g1, in, nin, want, nout, msg, path, pcap);
  }
  conform_tensors_free(got, nout);
  alloy_graph_free(g1);
  return r;
}

void conform_pin_divergence(conform_env *env, const conform_test *t, const alloy_graph *g,
                            const alloy_host_tensor *in, int nin, bool mixture, char *why,
                            size_t cap) {
  if (env->backend < 0 || env->backend == env->ref) return;
  size_t len = strlen(why);
  if (len + 1 >= cap) return;
  char reason[512] = "";
  alloy_graph *gf = concrete_functional(g, in, nin, reason, sizeof reason);
  probe p = {0};
  alloy_error *e = gf ? probe_run(env, gf, g, in, nin, &p) : NULL;
  if (!gf || e) {
    if (e) snprintf(reason, sizeof reason, "%s", alloy_error_message(e));
    alloy_error_free(e);
    snprintf(why + len, cap - len, "; no node pinned (ref's values of every node: %s)", reason);
    probe_free(&p);
    alloy_graph_free(gf);
    return;
  }
  /* A backend that compiles slowly pays once per node here: a third of the
   * test's time limit is spent at most, so that the failure is still
   * reported as itself and not as a timeout. */
  double deadline = now_s() + conform_timeout_s() / 3;
  int nnodes = alloy_graph_num_nodes(gf), compared = 0;
  for (int i = 0; i < nnodes; i++) {
    if (now_s() > deadline) {
      snprintf(why + len, cap - len, "; no node pinned among the first %d of %d (the rest were "
               "not checked: %.0f s, a third of the time limit, ran out)", i, nnodes,
               conform_timeout_s() / 3);
      probe_free(&p);
      alloy_graph_free(gf);
      return;
    }
    char msg[640], path[4096];
    node_outcome r = check_node(env, t, gf, alloy_graph_node(gf, i), i, &p, mixture, msg, sizeof msg,
                                path, sizeof path);
    compared += r != NODE_NOT_RUN;
    if (r != NODE_DIFFERS) continue;
    /* Counted from 1, in the order of the graph's node lines. */
    len += (size_t)snprintf(why + len, cap - len, "; first diverging node: %d of %d, %s", i + 1,
                            nnodes, msg);
    if (path[0] && len < cap) snprintf(why + len, cap - len, " [node repro: %s]", path);
    probe_free(&p);
    alloy_graph_free(gf);
    return;
  }
  snprintf(why + len, cap - len, "; no node diverges: each of the %d checked agrees with ref given "
           "ref's inputs (the difference builds up over nodes, or ref differs from PyTorch)", compared);
  probe_free(&p);
  alloy_graph_free(gf);
}
