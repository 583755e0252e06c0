/*
 * sdk/src/mixture.c: one graph over several backends (alloy_mixture in
 * alloy/runtime.h).
 *
 * Compiling lowers the graph so that every node is claimed by some backend
 * of the list (program_lower), folds what depends only on weights bound
 * at compile (fold.c), and, for a graph without symbolic sizes, plans it
 * at once: every backend claims the nodes it can run (claims.c), the
 * partitioner (partition.c) assigns nodes and groups them into convex
 * partitions numbered topologically, each partition is extracted as a
 * graph of its own and compiled on its backend as a program. A partition
 * whose compile fails, or that its plugin declines, is not fatal: its
 * nodes are taken from that backend and the graph is partitioned again, so
 * they go to the next backend that claims them (the reference backend
 * last), and the reason is logged and kept for alloy_mixture_node_reason.
 * A graph with symbolic sizes is planned per set of symbol values on the
 * run that needs it (specialized first, so no SymInt value crosses a
 * partition).
 *
 * Running hands the plan to the executor (exec.c): partitions run on their
 * backends' queues, values stay where they are used and cross backends
 * once, weights are uploaded once per backend (per executor). Threads run
 * one mixture at once, each on an executor of its own per plan; the plans
 * and the executors' pools are under the mixture's lock, so a plan for new
 * sizes is made once.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdk/src/claims.h"
#include "sdk/src/exec.h"
#include "sdk/src/fold.h"
#include "sdk/src/runtime_internal.h"

typedef struct part {
  int backend;            /* index in the runtime */
  alloy_program *prog;
  int nin, nout, nnodes;
  exec_src *in;           /* nin */
  double cost, bytes_in;
} part;

typedef struct plan {
  alloy_graph *graph;     /* the concrete graph partitioned */
  int64_t *key;           /* symbol values it was specialized for (NULL: none) */
  int npart;
  part *parts;
  exec_part *xparts;      /* the executor's view of parts */
  int *node_part;         /* by node index of graph */
  char **reason;          /* by node index: why not an earlier backend, or NULL */
  exec_src *outputs;      /* by graph output */
  exec_desc desc;         /* what its executors run */
  exec_pool pool;         /* an executor per thread that ran it (under the
                           * mixture's lock) */
} plan;

struct alloy_mixture {
  alloy_runtime *rt;
  part_cost_model cm;
  int nb;
  int backends[16];       /* runtime indices, priority order, ref last */
  alloy_graph *graph;     /* lowered, folded, maybe symbolic */
  /* Runs on several threads at once share the mixture: the plans (each
   * allocated alone, so that a thread's plan stays put while another adds
   * one), their executors, `last` and `fallbacks` are under this lock. */
  pthread_mutex_t lock;
  plan **plans;
  int nplans, cap_plans;
  plan *last;             /* the plan of the last run (or the only one) */
  feed feed;              /* weights bound and folded (fold.h); read-only */
  uint64_t fallbacks;     /* partitions moved off a backend at compile */
  exec_async async;        /* a run in flight (alloy_mixture_run_async) */
};

static alloy_error *oom(void) {
  return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
}

static void plan_free(plan *p) {
  exec_pool_free(&p->pool);
  for (int i = 0; i < p->npart; i++) {
    alloy_program_release(p->parts[i].prog);
    free(p->parts[i].in);
  }
  int n = p->graph ? alloy_graph_num_nodes(p->graph) : 0;
  for (int i = 0; p->reason && i < n; i++) free(p->reason[i]);
  free(p->reason);
  free(p->parts);
  free(p->xparts);
  free(p->node_part);
  free(p->outputs);
  free(p->key);
  alloy_graph_free(p->graph);
}

void alloy_mixture_release(alloy_mixture *m) {
  if (!m) return;
  exec_async_destroy(&m->async); /* waits for a run in flight */
  for (int i = 0; i < m->nplans; i++) {
    plan_free(m->plans[i]);
    free(m->plans[i]);
  }
  free(m->plans);
  pthread_mutex_destroy(&m->lock);
  feed_free(&m->feed);
  alloy_graph_free(m->graph);
  free(m);
}

/* Wires each input of partition q to a graph input or an earlier
 * partition's output, by the value's name (extract keeps names). */
static alloy_error *wire(plan *p, int q, const node_pos *table) {
  const alloy_graph *g = p->graph;
  int n = alloy_graph_num_nodes(g);
  part *pt = &p->parts[q];
  const alloy_graph *sub = alloy_program_graph(pt->prog);
  for (int i = 0; i < pt->nin; i++) {
    const char *name = alloy_value_name(alloy_graph_input(sub, i));
    alloy_value *v = alloy_graph_find_value(g, name);
    alloy_node *prod = v ? alloy_value_producer(v, NULL) : NULL;
    if (!v)
      return alloy_error_new(ALLOY_ERR_INTERNAL, "partition %d reads an unknown value %s", q, name);
    if (!prod) {
      pt->in[i] = (exec_src){-1, claims_input_index(g, v)};
      continue;
    }
    int from = p->node_part[claims_node_index(table, n, prod)];
    const alloy_graph *fsub = from < q ? alloy_program_graph(p->parts[from].prog) : NULL;
    int j = 0;
    while (fsub && j < alloy_graph_num_outputs(fsub) &&
           strcmp(alloy_value_name(alloy_graph_output(fsub, j)), name))
      j++;
    if (!fsub || j == alloy_graph_num_outputs(fsub))
      return alloy_error_new(ALLOY_ERR_INTERNAL, "partition %d: value %s has no earlier producer", q,
                             name);
    pt->in[i] = (exec_src){from, j};
    if (p->parts[from].backend != pt->backend) pt->bytes_in += claims_value_bytes(v);
  }
  return NULL;
}

/* Partitions the concrete graph g (taken over by the plan on success) and
 * compiles each partition. A partition whose compile fails takes its
 * nodes off that backend, and the graph is partitioned again. */
static alloy_error *plan_build(alloy_mixture *m, alloy_graph *g, plan *p) {
  memset(p, 0, sizeof *p);
  p->graph = g;
  int n = alloy_graph_num_nodes(g), nb = m->nb;
  char **banned = calloc((size_t)n * nb + 1, sizeof *banned); /* why, by (node, backend) */
  p->reason = calloc((size_t)n + 1, sizeof *p->reason);
  node_pos *table = claims_node_table(g);
  alloy_node **members = malloc(sizeof *members * (size_t)(n ? n : 1));
  alloy_error *e = (!banned || !p->reason || !table || !members) ? oom() : NULL;
  for (int attempt = 0; !e; attempt++) {
    part_graph pg = {0};
    part_result r = {0};
    part_cost_model cm = m->cm;
    e = claims_collect(m->rt, m->backends, nb, g, &pg);
    /* Nodes whose partition a backend could not compile go elsewhere. */
    for (int i = 0; i < n * nb && !e; i++)
      if (banned[i] && !claims_take_back(&pg, i / nb, i % nb, banned[i])) e = oom();
    for (int i = 0; i < n && !e; i++) {
      if (!claims_any(&pg, i)) {
        const alloy_node *node = alloy_graph_node(g, i);
        e = alloy_error_new(ALLOY_ERR_UNSUPPORTED, "node %d (%s, op %s): %s", i,
                            alloy_node_num_outputs(node) ? alloy_value_name(alloy_node_output(node, 0)) : "",
                            alloy_op_name(alloy_node_op(node)),
                            "no backend claims it, or every one that did failed to compile it");
      }
    }
    if (!e) e = part_compute(&pg, &cm, &r);
    if (!e) {
      p->npart = r.npart;
      p->parts = calloc((size_t)(r.npart ? r.npart : 1), sizeof *p->parts);
      p->node_part = r.node_part;
      r.node_part = NULL;
      if (!p->parts) e = oom();
    }
    int failed = -1;
    /* Each partition's nodes, in graph order: bucketed once, so a plan of
     * many partitions costs what its nodes do. */
    int *first = e ? NULL : calloc((size_t)p->npart + 1, sizeof *first);
    if (!e && !first) e = oom();
    for (int i = 0; i < n && !e; i++) first[p->node_part[i] + 1]++;
    for (int q = 0; q < p->npart && !e; q++) first[q + 1] += first[q];
    int *order = e ? NULL : malloc(sizeof *order * ((size_t)n + 1));
    if (!e && !order) e = oom();
    if (!e) {
      int *next = malloc(sizeof *next * ((size_t)p->npart + 1));
      if (!next) e = oom();
      for (int q = 0; next && q < p->npart; q++) next[q] = first[q];
      for (int i = 0; next && i < n; i++) order[next[p->node_part[i]]++] = i;
      free(next);
    }
    for (int q = 0; q < p->npart && !e; q++) {
      part *pt = &p->parts[q];
      int cnt = 0;
      for (int k = first[q]; k < first[q + 1]; k++) {
        int i = order[k];
        members[cnt++] = alloy_graph_node(g, i);
        pt->cost += r.node_cost[i];
      }
      pt->backend = m->backends[r.part_backend[q]];
      pt->nnodes = cnt;
      alloy_graph *extracted = NULL;
      e = alloy_graph_extract(g, members, cnt, &extracted);
      if (!e && (e = program_compile_lowered(m->rt, pt->backend, extracted, &pt->prog)) &&
          r.part_backend[q] < nb - 1 && attempt < 4 * nb + 8) {
        /* Not fatal in a mixture: the next backend that claims them. */
        alloy_loaded *row = &m->rt->backends[pt->backend];
        char line[768];
        snprintf(line, sizeof line, "partition %d (%d nodes) falls back from %s: %s", q, cnt,
                 row->name, alloy_error_message(e));
        alloy_host_table()->log(ALLOY_LOG_WARNING, "alloy", line);
        snprintf(line, sizeof line, "its partition did not compile there (%s)",
                 alloy_error_message(e));
        for (int i = 0; i < n; i++)
          if (p->node_part[i] == q && !banned[(size_t)i * nb + r.part_backend[q]])
            banned[(size_t)i * nb + r.part_backend[q]] = strdup(line);
        alloy_error_free(e);
        e = NULL;
        failed = q;
        m->fallbacks++;
        break;
      }
      if (e) {
        e = alloy_error_wrap(e, "partition %d", q);
        break;
      }
      const alloy_graph *sub = alloy_program_graph(pt->prog);
      pt->nin = alloy_graph_num_inputs(sub);
      pt->nout = alloy_graph_num_outputs(sub);
      if (!(pt->in = calloc((size_t)pt->nin + 1, sizeof *pt->in))) e = oom();
      if (!e) e = wire(p, q, table);
    }
    free(first);
    free(order);
    if (failed < 0 && !e) {
      /* Why each node is not on an earlier backend of the list. */
      const char *names[16];
      for (int b = 0; b < nb; b++) names[b] = m->rt->backends[m->backends[b]].name;
      part_result view = r;
      view.node_part = p->node_part; /* the plan took it over */
      char **why = part_reasons(&pg, &cm, &view, names);
      for (int i = 0; why && i < n; i++) {
        free(p->reason[i]);
        p->reason[i] = why[i];
        why[i] = NULL;
      }
      part_reasons_free(why, n);
    }
    claims_free(&pg);
    part_result_free(&r);
    if (failed < 0 || e) break;
    /* Start again without what failed. */
    for (int q = 0; q < p->npart; q++) {
      alloy_program_release(p->parts[q].prog);
      free(p->parts[q].in);
    }
    free(p->parts);
    free(p->node_part);
    p->parts = NULL;
    p->node_part = NULL;
    p->npart = 0;
  }
  for (int i = 0; banned && i < n * nb; i++) free(banned[i]);
  free(banned);
  free(members);
  /* Graph outputs, and the executor's view. */
  p->outputs = e ? NULL : calloc((size_t)alloy_graph_num_outputs(g) + 1, sizeof *p->outputs);
  p->xparts = e ? NULL : calloc((size_t)p->npart + 1, sizeof *p->xparts);
  if (!e && (!p->outputs || !p->xparts)) e = oom();
  for (int k = 0; k < alloy_graph_num_outputs(g) && !e; k++) {
    alloy_value *v = alloy_graph_output(g, k);
    alloy_node *prod = alloy_value_producer(v, NULL);
    if (!prod) {
      p->outputs[k] = (exec_src){-1, claims_input_index(g, v)};
      continue;
    }
    int from = p->node_part[claims_node_index(table, n, prod)];
    const alloy_graph *fsub = alloy_program_graph(p->parts[from].prog);
    int j = 0;
    while (j < alloy_graph_num_outputs(fsub) &&
           strcmp(alloy_value_name(alloy_graph_output(fsub, j)), alloy_value_name(v)))
      j++;
    if (j == alloy_graph_num_outputs(fsub))
      e = alloy_error_new(ALLOY_ERR_INTERNAL, "graph output %d (%s) is no partition's output", k,
                          alloy_value_name(v));
    p->outputs[k] = (exec_src){from, j};
  }
  for (int q = 0; q < p->npart && !e; q++)
    p->xparts[q] = (exec_part){.backend = p->parts[q].backend, .prog = p->parts[q].prog,
                               .nin = p->parts[q].nin, .nout = p->parts[q].nout,
                               .in = p->parts[q].in};
  free(table);
  if (e) {
    p->graph = NULL; /* the caller still owns g on failure */
    plan_free(p);
    memset(p, 0, sizeof *p);
  }
  return e;
}

/* Under m's lock (or before m is shared). */
static alloy_error *add_plan(alloy_mixture *m, alloy_graph *g, int64_t *key, plan **out) {
  if (m->nplans == m->cap_plans) {
    int cap = m->cap_plans ? 2 * m->cap_plans : 4;
    plan **np = realloc(m->plans, sizeof *np * (size_t)cap);
    if (!np) return oom();
    m->plans = np;
    m->cap_plans = cap;
  }
  plan *p = calloc(1, sizeof *p);
  if (!p) return oom();
  uint64_t t0 = trace_on() ? trace_clock_ns() : 0;
  alloy_error *e = plan_build(m, g, p);
  if (t0) trace_range("alloy", "compile", "partition and compile", t0, trace_clock_ns());
  if (e) {
    free(p);
    return e;
  }
  p->key = key;
  p->desc = (exec_desc){.rt = m->rt, .nparts = p->npart, .parts = p->xparts,
                        .ninputs = alloy_graph_num_inputs(m->graph), .resident = m->feed.resident,
                        .noutputs = alloy_graph_num_outputs(p->graph), .outputs = p->outputs};
  m->plans[m->nplans++] = p;
  *out = p;
  return NULL;
}

alloy_error *alloy_mixture_compile(alloy_runtime *rt, const int *backends, int num_backends,
                                   const alloy_graph *g, const alloy_program_options *options,
                                   alloy_mixture **out) {
  *out = NULL;
  alloy_mixture *m = calloc(1, sizeof *m);
  if (!m) return oom();
  m->rt = rt;
  pthread_mutex_init(&m->lock, NULL);
  exec_async_init(&m->async);
  bool costs = options && ALLOY_HAS_FIELD(options, alloy_program_options, link_bytes_per_s);
  m->cm = part_options_cost_model(costs ? options->partition_launch_s : 0,
                                  costs ? options->link_bytes_per_s : 0);
  int ref = alloy_runtime_find_backend(rt, "ref");
  for (int i = 0; i < num_backends && m->nb < 15; i++) {
    if (backends[i] < 0 || backends[i] >= rt->num || !rt->backends[backends[i]].ok) {
      alloy_mixture_release(m);
      return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "backend %d is not usable", backends[i]);
    }
    bool dup = false;
    for (int k = 0; k < m->nb; k++) dup |= m->backends[k] == backends[i];
    if (!dup) m->backends[m->nb++] = backends[i];
  }
  bool has_ref = false;
  for (int k = 0; k < m->nb; k++) has_ref |= m->backends[k] == ref;
  if (!has_ref && ref >= 0) m->backends[m->nb++] = ref;
  alloy_loaded *rows[16];
  for (int k = 0; k < m->nb; k++) rows[k] = &rt->backends[m->backends[k]];
  alloy_error *e = program_options_apply(rt, options);
  if (!e) e = program_lower(rows, m->nb, g, options ? options->decompose : ALLOY_DECOMPOSE_AUTO,
                            &m->graph);
  /* Weights bound at compile: what depends only on them is folded now. */
  if (!e) e = feed_prepare(rt, m->graph, options, &m->feed);
  if (!e && !program_has_backed_symbols(m->graph)) {
    alloy_graph *copy = NULL;
    e = alloy_graph_clone(m->graph, &copy);
    if (!e && (e = add_plan(m, copy, NULL, &m->last))) alloy_graph_free(copy);
  }
  if (e) {
    alloy_mixture_release(m);
    return e;
  }
  *out = m;
  return NULL;
}

/* The plan for these inputs' symbol values, made now when new. Under m's
 * lock: a thread asking for sizes another is planning waits for it. */
static alloy_error *plan_for(alloy_mixture *m, const alloy_host_tensor *inputs, int n, plan **out) {
  if (!program_has_backed_symbols(m->graph)) return *out = m->plans[0], NULL;
  alloy_symtab *st = alloy_graph_symtab(m->graph);
  int nsyms = alloy_symtab_count(st);
  int64_t *values = calloc((size_t)nsyms + 1, sizeof *values);
  bool *bound = calloc((size_t)nsyms + 1, sizeof *bound);
  alloy_error *e = (!values || !bound) ? oom() : NULL;
  for (int i = 0; i < n && !e; i++) {
    const alloy_value *v = alloy_graph_input(m->graph, i);
    if (alloy_value_kind_of(v) != ALLOY_VALUE_TENSOR || inputs[i].rank != alloy_value_rank(v) ||
        inputs[i].dtype != alloy_value_dtype(v))
      e = alloy_error_new(ALLOY_ERR_TYPE, "input %d (%s): expected %s of rank %d", i,
                          alloy_value_name(v), alloy_dtype_name(alloy_value_dtype(v)),
                          alloy_value_rank(v));
  }
  if (!e) e = program_bind_symbols(m->graph, inputs, n, values, bound, nsyms);
  for (int i = 0; i < nsyms && !e; i++)
    if (!bound[i]) values[i] = INT64_MIN;
  for (int i = 0; i < m->nplans && !e; i++)
    if (!memcmp(m->plans[i]->key, values, sizeof *values * (size_t)nsyms)) {
      free(values);
      free(bound);
      return *out = m->plans[i], NULL;
    }
  alloy_graph *g = NULL;
  if (!e) e = alloy_graph_specialize(m->graph, values, bound, nsyms, &g);
  free(bound);
  if (!e && (e = add_plan(m, g, values, out))) alloy_graph_free(g);
  if (e) free(values);
  return e;
}


/* --- running ------------------------------------------------------------------ */

static alloy_error *check_run(alloy_mixture *m, pthread_t key, int num_inputs, int num_outputs) {
  int nout = alloy_graph_num_outputs(m->graph), need = program_outputs_needed(m->graph);
  if (num_inputs != m->feed.ncaller || num_outputs < need || num_outputs > nout)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                           "the graph has %d inputs and %d outputs (%d of them input mutations "
                           "that may be left out); %d and %d given", m->feed.ncaller, nout, nout - need,
                           num_inputs, num_outputs);
  /* A run this thread started asynchronously holds its executors. */
  if (exec_async_mine(&m->async, key))
    return alloy_error_new(ALLOY_ERR_UNAVAILABLE, "a run of this mixture is in flight: "
                           "alloy_mixture_wait first");
  return NULL;
}

alloy_error *alloy_mixture_prepare(alloy_mixture *m, const alloy_host_tensor *inputs,
                                   int num_inputs) {
  if (num_inputs != m->feed.ncaller)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "the graph has %d inputs; %d given",
                           m->feed.ncaller, num_inputs);
  if (exec_async_mine(&m->async, pthread_self()))
    return alloy_error_new(ALLOY_ERR_UNAVAILABLE, "a run of this mixture is in flight");
  alloy_host_tensor *full = feed_inputs(&m->feed, inputs);
  if (!full) return oom();
  plan *p;
  pthread_mutex_lock(&m->lock);
  alloy_error *e = plan_for(m, full, alloy_graph_num_inputs(m->graph), &p);
  if (!e) m->last = p;
  pthread_mutex_unlock(&m->lock);
  free(full);
  return e;
}

/* Thread key's executor of the plan for these inputs (full: the feed's),
 * each made on first use. */
static alloy_error *mixture_exec(alloy_mixture *m, pthread_t key, const alloy_host_tensor *full, exec **out) {
  plan *p;
  pthread_mutex_lock(&m->lock);
  alloy_error *e = plan_for(m, full, alloy_graph_num_inputs(m->graph), &p);
  if (!e) {
    m->last = p;
    e = exec_pool_mine(&p->pool, &p->desc, key, out);
  }
  pthread_mutex_unlock(&m->lock);
  return e;
}

static alloy_error *run_now(alloy_mixture *m, pthread_t key, const alloy_host_tensor *inputs,
                            alloy_host_tensor *outputs, int num_outputs) {
  alloy_host_tensor *full = feed_inputs(&m->feed, inputs);
  exec *x = NULL;
  alloy_error *e = full ? mixture_exec(m, key, full, &x) : oom();
  if (!e) e = exec_run(x, full, outputs, num_outputs);
  free(full);
  return e;
}

alloy_error *alloy_mixture_run(alloy_mixture *m, const alloy_host_tensor *inputs, int num_inputs,
                               alloy_host_tensor *outputs, int num_outputs) {
  pthread_t self = pthread_self();
  alloy_error *e = check_run(m, self, num_inputs, num_outputs);
  return e ? e : run_now(m, self, inputs, outputs, num_outputs);
}

static alloy_error *run_owner(void *owner, pthread_t key, const alloy_host_tensor *inputs,
                              alloy_host_tensor *outputs, int num_outputs) {
  return run_now(owner, key, inputs, outputs, num_outputs);
}

alloy_error *alloy_mixture_run_async(alloy_mixture *m, const alloy_host_tensor *inputs,
                                     int num_inputs, alloy_host_tensor *outputs,
                                     int num_outputs) {
  alloy_error *e = check_run(m, pthread_self(), num_inputs, num_outputs);
  return e ? e : exec_async_start(&m->async, run_owner, m, inputs, outputs, num_outputs, "mixture");
}

alloy_error *alloy_mixture_wait(alloy_mixture *m) { return exec_async_wait(&m->async, "mixture"); }

static alloy_error *run_placed(alloy_mixture *m, const alloy_run_tensor *inputs, int num_inputs,
                               const alloy_run_tensor *outputs, int num_outputs, const exec_stream *on) {
  pthread_t self = pthread_self();
  alloy_error *e = check_run(m, self, num_inputs, num_outputs);
  run_io io = {0};
  if (!e) e = run_io_make(m->rt, &m->feed, inputs, num_inputs, outputs, num_outputs, &io);
  exec *x = NULL;
  if (!e) e = mixture_exec(m, self, io.full, &x);
  if (!e) e = exec_run_placed(x, io.full, io.wfull, io.hout, io.wout, num_outputs, on);
  run_io_free(&io);
  return e;
}

alloy_error *alloy_mixture_run_tensors(alloy_mixture *m, const alloy_run_tensor *inputs, int num_inputs,
                                       const alloy_run_tensor *outputs, int num_outputs) {
  return run_placed(m, inputs, num_inputs, outputs, num_outputs, NULL);
}

alloy_error *alloy_mixture_run_on_stream(alloy_mixture *m, const alloy_run_tensor *inputs, int num_inputs,
                                         const alloy_run_tensor *outputs, int num_outputs, int backend,
                                         const alloy_ext *stream) {
  exec_stream on;
  alloy_error *e = exec_stream_open(m->rt, backend, stream, &on);
  if (!e) e = run_placed(m, inputs, num_inputs, outputs, num_outputs, &on);
  exec_stream_close(m->rt, &on);
  return e;
}

alloy_error *alloy_mixture_output_sizes(alloy_mixture *m, const alloy_run_tensor *inputs, int num_inputs,
                                        int index, int *rank, int64_t *sizes) {
  pthread_t self = pthread_self();
  alloy_error *e = check_run(m, self, num_inputs, program_outputs_needed(m->graph));
  run_io io = {0};
  if (!e) e = run_io_make(m->rt, &m->feed, inputs, num_inputs, NULL, 0, &io);
  exec *x = NULL;
  if (!e) e = mixture_exec(m, self, io.full, &x);
  if (!e) e = exec_output_sizes(x, io.full, index, rank, sizes);
  run_io_free(&io);
  return e;
}

/* Counters over every plan's executors (read when no run is in flight). */
void alloy_mixture_stats(const alloy_mixture *m, alloy_run_stats *out) {
  alloy_run_stats s = {.struct_size = ALLOY_RUN_STATS_STRUCT_SIZE};
  alloy_mixture *mm = (alloy_mixture *)m; /* the lock only */
  pthread_mutex_lock(&mm->lock);
  for (int i = 0; i < m->nplans; i++) exec_pool_stats(&m->plans[i]->pool, &s);
  s.arena_bytes = s.arena_ideal_bytes = 0;
  if (m->last && m->last->pool.last) {
    s.arena_bytes = exec_stats(m->last->pool.last)->arena_bytes;
    s.arena_ideal_bytes = exec_stats(m->last->pool.last)->arena_ideal_bytes;
  }
  s.fallbacks = m->fallbacks;
  pthread_mutex_unlock(&mm->lock);
  s.folded_nodes = (uint64_t)fold_nodes(m->feed.fold);
  exec_stats_copy(&s, out);
}

int alloy_mixture_num_partitions(const alloy_mixture *m) { return m->last ? m->last->npart : 0; }

void alloy_mixture_partition_info(const alloy_mixture *m, int i, alloy_partition_info *info) {
  const part *pt = &m->last->parts[i];
  info->backend = m->rt->backends[pt->backend].name;
  info->num_nodes = pt->nnodes;
  info->num_inputs = pt->nin;
  info->num_outputs = pt->nout;
  info->cost = pt->cost;
  info->bytes_in = pt->bytes_in;
}

const alloy_graph *alloy_mixture_graph(const alloy_mixture *m) {
  return m->last ? m->last->graph : m->graph;
}

int alloy_mixture_node_partition(const alloy_mixture *m, int node_index) {
  if (!m->last || node_index < 0 || node_index >= alloy_graph_num_nodes(m->last->graph)) return -1;
  return m->last->node_part[node_index];
}

const char *alloy_mixture_node_reason(const alloy_mixture *m, int node_index) {
  if (!m->last || node_index < 0 || node_index >= alloy_graph_num_nodes(m->last->graph)) return "";
  const char *r = m->last->reason[node_index];
  return r ? r : "";
}

/* The arenas of the last run's plan: the bytes placed, and what perfect
 * placement would need. */
void alloy_mixture_memory(const alloy_mixture *m, uint64_t *peak, uint64_t *naive) {
  const exec *x = m->last ? m->last->pool.last : NULL;
  *peak = x ? exec_stats(x)->arena_bytes : 0;
  *naive = x ? exec_stats(x)->arena_ideal_bytes : 0;
}

/* Partitions of the last run issued while another backend still had
 * work in flight. */
int alloy_mixture_concurrent_runs(const alloy_mixture *m) {
  const exec *x = m->last ? m->last->pool.last : NULL;
  return x ? exec_concurrent(x) : 0;
}
