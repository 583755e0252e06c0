/*
 * sdk/src/mixture.c: one graph over several backends (alloy_mixture in
 * alloy/runtime.h).
 *
 * Compiling lowers the graph so that every node is claimed by some backend
 * of the list (program_lower), and, for a graph without symbolic sizes,
 * plans it at once: every backend claims the nodes it can run, the
 * partitioner (partition.c) assigns nodes and groups them into convex
 * partitions numbered topologically, each partition is extracted as a
 * graph of its own and compiled on its backend as a program. A graph with
 * symbolic sizes is planned per set of symbol values on the run that needs
 * it (specialized first, so no SymInt value crosses a partition).
 *
 * Running executes the partitions in dependency order, in waves:
 * independent partitions on different backends run at once, on threads.
 * Values cross partitions as host tensors (each program copies its inputs
 * in and its outputs out through its backend's copy entries); an
 * intermediate is released as soon as the last partition that reads it has
 * run, and the run's peak of live intermediate bytes is kept beside the sum
 * a run without releasing would hold.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdk/src/claims.h"
#include "sdk/src/runtime_internal.h"

/* Where a partition's input, or a graph output, comes from. */
typedef struct source {
  int part;  /* -1: graph input `index`; else output `index` of partition part */
  int index;
} source;

typedef struct part {
  int backend;            /* index in the runtime */
  alloy_program *prog;
  int nin, nout, nnodes;
  source *in;             /* nin */
  int *readers;           /* nout: how many partitions read each output (-1: a graph output,
                           * never released during a run) */
  int *left;              /* nout: readers still to run in the current run */
  uint64_t *out_bytes;    /* nout, bytes of the last run */
  alloy_host_tensor *outs;
  double cost, bytes_in;
} part;

typedef struct plan {
  alloy_graph *graph;     /* the concrete graph partitioned */
  int64_t *key;           /* symbol values it was specialized for (NULL: none) */
  int npart;
  part *parts;
  int *node_part;         /* by node index of graph */
  source *outputs;        /* by graph output */
} plan;

struct alloy_mixture {
  alloy_runtime *rt;
  part_cost_model cm;
  int nb;
  int backends[16];       /* runtime indices, priority order, ref last */
  alloy_graph *graph;     /* lowered, maybe symbolic */
  plan *plans;
  int nplans, cap_plans;
  plan *last;             /* the plan of the last run (or the only one) */
  uint64_t peak, naive;
  int concurrent;         /* partitions of the last run that ran beside another */
};

static alloy_error *oom(void) {
  return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
}

static void plan_free(plan *p) {
  for (int i = 0; i < p->npart; i++) {
    part *q = &p->parts[i];
    alloy_program_release(q->prog);
    free(q->in);
    free(q->readers);
    free(q->left);
    free(q->out_bytes);
    free(q->outs);
  }
  free(p->parts);
  free(p->node_part);
  free(p->outputs);
  free(p->key);
  alloy_graph_free(p->graph);
}

void alloy_mixture_release(alloy_mixture *m) {
  if (!m) return;
  for (int i = 0; i < m->nplans; i++) plan_free(&m->plans[i]);
  free(m->plans);
  alloy_graph_free(m->graph);
  free(m);
}

/* Partitions and compiles the concrete graph g (taken over by the plan). */
static alloy_error *plan_build(alloy_mixture *m, alloy_graph *g, plan *p) {
  memset(p, 0, sizeof *p);
  p->graph = g;
  part_graph pg = {0};
  part_result r = {0};
  part_cost_model cm = m->cm;
  alloy_error *e = claims_collect(m->rt, m->backends, m->nb, g, &pg);
  if (!e) e = part_compute(&pg, &cm, &r);
  int n = alloy_graph_num_nodes(g);
  if (!e) {
    p->npart = r.npart;
    p->parts = calloc((size_t)(r.npart ? r.npart : 1), sizeof *p->parts);
    p->node_part = r.node_part;
    r.node_part = NULL;
    p->outputs = calloc((size_t)alloy_graph_num_outputs(g) + 1, sizeof *p->outputs);
    if (!p->parts || !p->outputs) e = oom();
  }
  alloy_node **members = e ? NULL : malloc(sizeof *members * (size_t)(n ? n : 1));
  node_pos *table = e ? NULL : claims_node_table(g);
  if (!e && (!members || !table)) e = oom();
  /* Extract and compile each partition. */
  for (int q = 0; q < p->npart && !e; q++) {
    part *pt = &p->parts[q];
    int cnt = 0;
    for (int i = 0; i < n; i++)
      if (p->node_part[i] == q) {
        members[cnt++] = alloy_graph_node(g, i);
        pt->cost += pg.cost[(size_t)i * pg.nbackends + r.part_backend[q]] > 0
                        ? pg.cost[(size_t)i * pg.nbackends + r.part_backend[q]] : cm.node_cost;
      }
    pt->backend = m->backends[r.part_backend[q]];
    pt->nnodes = cnt;
    alloy_graph *extracted = NULL;
    e = alloy_graph_extract(g, members, cnt, &extracted);
    if (!e) e = program_compile_lowered(m->rt, pt->backend, extracted, &pt->prog);
    const alloy_graph *sub = e ? NULL : alloy_program_graph(pt->prog);
    if (e) e = alloy_error_wrap(e, "partition %d", q);
    if (!e) {
      pt->nin = alloy_graph_num_inputs(sub);
      pt->nout = alloy_graph_num_outputs(sub);
      pt->in = calloc((size_t)pt->nin + 1, sizeof *pt->in);
      pt->readers = calloc((size_t)pt->nout + 1, sizeof *pt->readers);
      pt->left = calloc((size_t)pt->nout + 1, sizeof *pt->left);
      pt->out_bytes = calloc((size_t)pt->nout + 1, sizeof *pt->out_bytes);
      pt->outs = calloc((size_t)pt->nout + 1, sizeof *pt->outs);
      if (!pt->in || !pt->readers || !pt->left || !pt->out_bytes || !pt->outs) e = oom();
    }
    /* Wire each input to a graph input or an earlier partition's output,
     * by the value's name (extract keeps names). */
    for (int i = 0; i < pt->nin && !e; i++) {
      const char *name = alloy_value_name(alloy_graph_input(sub, i));
      alloy_value *v = alloy_graph_find_value(g, name);
      alloy_node *prod = v ? alloy_value_producer(v, NULL) : NULL;
      if (!v) {
        e = alloy_error_new(ALLOY_ERR_INTERNAL, "partition %d reads an unknown value %s", q, name);
      } else if (!prod) {
        pt->in[i] = (source){-1, claims_input_index(g, v)};
      } else {
        int from = p->node_part[claims_node_index(table, n, prod)];
        const alloy_graph *fsub = alloy_program_graph(p->parts[from].prog);
        int j = 0;
        while (j < alloy_graph_num_outputs(fsub) &&
               strcmp(alloy_value_name(alloy_graph_output(fsub, j)), name))
          j++;
        if (from >= q || j == alloy_graph_num_outputs(fsub))
          e = alloy_error_new(ALLOY_ERR_INTERNAL, "partition %d: value %s has no earlier producer", q,
                              name);
        else {
          pt->in[i] = (source){from, j};
          p->parts[from].readers[j]++;
          if (p->parts[from].backend != pt->backend) pt->bytes_in += claims_value_bytes(v);
        }
      }
    }
  }
  free(members);
  /* Graph outputs: never released during a run. */
  for (int k = 0; k < alloy_graph_num_outputs(g) && !e; k++) {
    alloy_value *v = alloy_graph_output(g, k);
    alloy_node *prod = alloy_value_producer(v, NULL);
    if (!prod) {
      p->outputs[k] = (source){-1, claims_input_index(g, v)};
      continue;
    }
    int from = p->node_part[claims_node_index(table, n, prod)];
    const alloy_graph *fsub = alloy_program_graph(p->parts[from].prog);
    int j = 0;
    while (j < alloy_graph_num_outputs(fsub) &&
           strcmp(alloy_value_name(alloy_graph_output(fsub, j)), alloy_value_name(v)))
      j++;
    p->outputs[k] = (source){from, j};
    if (j < alloy_graph_num_outputs(fsub)) p->parts[from].readers[j] = -1;
  }
  free(table);
  claims_free(&pg);
  part_result_free(&r);
  if (e) {
    p->graph = NULL; /* the caller still owns g on failure */
    plan_free(p);
    memset(p, 0, sizeof *p);
  }
  return e;
}

static alloy_error *add_plan(alloy_mixture *m, alloy_graph *g, int64_t *key, plan **out) {
  if (m->nplans == m->cap_plans) {
    int cap = m->cap_plans ? 2 * m->cap_plans : 4;
    plan *np = realloc(m->plans, sizeof *np * (size_t)cap);
    if (!np) return oom();
    m->plans = np;
    m->cap_plans = cap;
  }
  plan *p = &m->plans[m->nplans];
  alloy_error *e = plan_build(m, g, p);
  if (e) return e;
  p->key = key;
  m->nplans++;
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
  m->cm = part_default_cost_model();
  if (options && options->struct_size >= sizeof *options) {
    if (options->partition_launch_s > 0) m->cm.launch = options->partition_launch_s;
    if (options->partition_launch_s < 0) m->cm.launch = 0;
    if (options->link_bytes_per_s > 0) m->cm.bandwidth = options->link_bytes_per_s;
    if (options->link_bytes_per_s < 0) m->cm.bandwidth = 1e300;
  }
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
  alloy_error *e = program_lower(rows, m->nb, g, options ? options->decompose : ALLOY_DECOMPOSE_AUTO,
                                 &m->graph);
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

/* The plan for these inputs' symbol values, made now when new. */
static alloy_error *plan_for(alloy_mixture *m, const alloy_host_tensor *inputs, int n, plan **out) {
  if (!program_has_backed_symbols(m->graph)) return *out = &m->plans[0], NULL;
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
    if (!memcmp(m->plans[i].key, values, sizeof *values * (size_t)nsyms)) {
      free(values);
      free(bound);
      return *out = &m->plans[i], NULL;
    }
  alloy_graph *g = NULL;
  if (!e) e = alloy_graph_specialize(m->graph, values, bound, nsyms, &g);
  free(bound);
  if (!e && (e = add_plan(m, g, values, out))) alloy_graph_free(g);
  if (e) free(values);
  return e;
}

/* --- running -------------------------------------------------------------------
 *
 * In waves: every partition whose inputs are ready runs, at most one per
 * backend (a backend's programs run one at a time); partitions of different
 * backends in one wave run at once, each on a thread of its own, since they
 * share nothing (each program has its own buffers, each plugin its own
 * state). After a wave, an intermediate that no partition still has to read
 * is released. */

typedef struct job {
  alloy_mixture *m;
  plan *p;
  int q;
  const alloy_host_tensor *inputs;
  alloy_error *err;
} job;

static alloy_error *run_part(alloy_mixture *m, plan *p, int q, const alloy_host_tensor *inputs) {
  part *pt = &p->parts[q];
  alloy_host_tensor stack[64] = {{0}}, *ins = pt->nin > 64 ? malloc(sizeof *ins * (size_t)pt->nin) : stack;
  if (!ins) return oom();
  for (int i = 0; i < pt->nin; i++) {
    source s = pt->in[i];
    ins[i] = s.part < 0 ? inputs[s.index] : p->parts[s.part].outs[s.index];
  }
  for (int k = 0; k < pt->nout; k++) pt->outs[k].struct_size = sizeof pt->outs[k];
  alloy_error *e = alloy_program_run(pt->prog, ins, pt->nin, pt->outs, pt->nout);
  if (ins != stack) free(ins);
  return e ? alloy_error_wrap(e, "partition %d (%s)", q, m->rt->backends[pt->backend].name) : NULL;
}

static void *job_main(void *arg) {
  job *j = arg;
  j->err = run_part(j->m, j->p, j->q, j->inputs);
  return NULL;
}

static alloy_error *run_waves(alloy_mixture *m, plan *p, const alloy_host_tensor *inputs) {
  int np = p->npart;
  bool *done = calloc((size_t)np + 1, sizeof *done);
  int *wave = malloc(sizeof *wave * ((size_t)np + 1));
  job *jobs = calloc((size_t)np + 1, sizeof *jobs);
  pthread_t *threads = malloc(sizeof *threads * ((size_t)np + 1));
  if (!done || !wave || !jobs || !threads) {
    free(done), free(wave), free(jobs), free(threads);
    return oom();
  }
  for (int q = 0; q < np; q++)
    memcpy(p->parts[q].left, p->parts[q].readers, sizeof *p->parts[q].left * (size_t)p->parts[q].nout);
  alloy_error *e = NULL;
  uint64_t live = 0;
  for (int ndone = 0; ndone < np && !e;) {
    /* Ready partitions, the lowest-numbered one per backend. */
    int nw = 0;
    for (int q = 0; q < np; q++) {
      if (done[q]) continue;
      bool ready = true, taken = false;
      for (int i = 0; i < p->parts[q].nin && ready; i++)
        ready = p->parts[q].in[i].part < 0 || done[p->parts[q].in[i].part];
      for (int k = 0; k < nw && !taken; k++) taken = p->parts[wave[k]].backend == p->parts[q].backend;
      if (ready && !taken) wave[nw++] = q;
    }
    if (nw == 0) {
      e = alloy_error_new(ALLOY_ERR_INTERNAL, "mixture: no partition is ready");
      break;
    }
    /* The first on this thread, the others beside it. */
    int started = 0;
    for (int k = 1; k < nw; k++) {
      jobs[k] = (job){m, p, wave[k], inputs, NULL};
      if (pthread_create(&threads[k], NULL, job_main, &jobs[k]) != 0) break;
      started = k;
    }
    jobs[0] = (job){m, p, wave[0], inputs, NULL};
    job_main(&jobs[0]);
    for (int k = started + 1; k < nw; k++) job_main(&jobs[k]); /* threads we could not start */
    for (int k = 1; k <= started; k++) pthread_join(threads[k], NULL);
    if (nw > 1) m->concurrent += nw;
    for (int k = 0; k < nw; k++) {
      if (jobs[k].err && !e) e = jobs[k].err;
      else alloy_error_free(jobs[k].err);
      done[wave[k]] = true;
      ndone++;
    }
    if (e) break;
    /* Bytes now alive; then release what nobody still reads. */
    for (int k = 0; k < nw; k++) {
      part *pt = &p->parts[wave[k]];
      for (int j = 0; j < pt->nout; j++) {
        uint64_t b = alloy_dtype_size(pt->outs[j].dtype);
        for (int d = 0; d < pt->outs[j].rank; d++) b *= (uint64_t)pt->outs[j].sizes[d];
        pt->out_bytes[j] = b;
        live += b;
        m->naive += b;
      }
    }
    if (live > m->peak) m->peak = live;
    for (int k = 0; k < nw; k++) {
      part *pt = &p->parts[wave[k]];
      for (int i = 0; i < pt->nin; i++) {
        source s = pt->in[i];
        if (s.part < 0) continue;
        part *from = &p->parts[s.part];
        if (from->left[s.index] > 0 && --from->left[s.index] == 0 && from->out_bytes[s.index]) {
          live -= from->out_bytes[s.index];
          from->out_bytes[s.index] = 0;
          program_drop_output(from->prog, s.index);
        }
      }
      /* An output nobody reads (nor the graph) goes at once. */
      for (int j = 0; j < pt->nout; j++)
        if (pt->readers[j] == 0 && pt->out_bytes[j]) {
          live -= pt->out_bytes[j];
          pt->out_bytes[j] = 0;
          program_drop_output(pt->prog, j);
        }
    }
  }
  free(done), free(wave), free(jobs), free(threads);
  return e;
}

int alloy_mixture_concurrent_runs(const alloy_mixture *m) { return m->concurrent; }

alloy_error *alloy_mixture_prepare(alloy_mixture *m, const alloy_host_tensor *inputs,
                                   int num_inputs) {
  if (num_inputs != alloy_graph_num_inputs(m->graph))
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "the graph has %d inputs; %d given",
                           alloy_graph_num_inputs(m->graph), num_inputs);
  plan *p;
  alloy_error *e = plan_for(m, inputs, num_inputs, &p);
  if (!e) m->last = p;
  return e;
}

alloy_error *alloy_mixture_run(alloy_mixture *m, const alloy_host_tensor *inputs, int num_inputs,
                               alloy_host_tensor *outputs, int num_outputs) {
  int nin = alloy_graph_num_inputs(m->graph), nout = alloy_graph_num_outputs(m->graph);
  /* The mutation outputs functionalization appends may be left out. */
  int need = nout;
  while (need > 0 && alloy_graph_output_role(m->graph, need - 1, NULL) != ALLOY_OUTPUT_USER) need--;
  if (num_inputs != nin || num_outputs < need || num_outputs > nout)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                           "the graph has %d inputs and %d outputs (%d of them input mutations "
                           "that may be left out); %d and %d given", nin, nout, nout - need,
                           num_inputs, num_outputs);
  plan *p;
  alloy_error *e = plan_for(m, inputs, nin, &p);
  if (e) return e;
  m->last = p;
  m->peak = m->naive = 0;
  m->concurrent = 0;
  e = run_waves(m, p, inputs);
  for (int k = 0; k < num_outputs && !e; k++) {
    source s = p->outputs[k];
    outputs[k] = s.part < 0 ? inputs[s.index] : p->parts[s.part].outs[s.index];
  }
  return e;
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

void alloy_mixture_memory(const alloy_mixture *m, uint64_t *peak, uint64_t *naive) {
  *peak = m->peak;
  *naive = m->naive;
}
