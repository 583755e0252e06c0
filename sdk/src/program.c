/*
 * sdk/src/program.c: a graph compiled on one backend. This is the
 * single-backend path (lower, claim, compile); a mixture's partitions are
 * programs too. Running goes through the executor (exec.c), which keeps
 * values on the backend: a program is an executor of one partition.
 *
 * A graph with symbolic sizes is compiled once per set of symbol values:
 * the program keeps the symbolic graph, and each set of input sizes looks
 * its symbol values up among the specializations compiled so far
 * (alloy_graph_specialize, then claim and compile), so one import serves
 * every batch size. A backend that declares ALLOY_CAP_SYMBOLIC_SHAPES
 * compiles the symbolic graph once instead and evaluates sizes from the
 * symbol values each execute gets.
 *
 * The host moves what needs no device itself: an output that is one of the
 * graph's inputs is copied by the executor, and a graph with nothing left
 * to compute is never offered to the plugin (it would see a partition
 * without nodes, carrying dtypes it never claimed).
 *
 * Threads run one program at once: each on an executor of its own (an
 * exec_pool keyed by thread), with what runs for its sizes kept in its
 * executor (program_choice), not in the program. The program's lock covers
 * what they share and change: the specializations (compiled under it, so
 * once) and the pool.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decompositions/decomp.h"
#include "decompositions/functionalize.h"
#include "sdk/src/claims.h"
#include "sdk/src/exec.h"
#include "sdk/src/fold.h"
#include "sdk/src/runtime_internal.h"

/* One compiled graph: the program's own, or a specialization of it. */
typedef struct program_compiled {
  alloy_graph *graph;
  alloy_executable *exe;
  int64_t *key; /* the backed symbols' values (specializations only) */
} compiled;

struct alloy_program {
  alloy_runtime *rt;
  alloy_loaded *be;        /* the backend row, owned by the runtime */
  alloy_graph *graph;      /* the program's own copy */
  bool specialize;         /* graph has backed symbols: compile per binding */
  compiled base;           /* graph compiled as it is (when !specialize) */
  /* Specializations, in the order they were made, each allocated alone so
   * that a choice (program_choice) made by one thread stays valid while
   * another adds more. Under lock. */
  compiled **specs;
  int nspecs, cap_specs;
  /* Runs on several threads at once share the program: what they change
   * (the specializations, the executors, the setup of the first run) is
   * under this lock; what a run changes as it goes is its executor's. */
  pthread_mutex_t lock;
  /* Running alone (alloy_program_run): the program that goes to the
   * device (this one, its graph less pass-through outputs, or NULL when
   * nothing is left to compute), and an executor per calling thread. */
  alloy_program *unit;
  bool ready;              /* desc and what it points at are made (under lock) */
  exec_desc desc;
  exec_pool pool;
  exec_part part;
  exec_src *part_in, *out_src;
  feed feed;               /* weights bound and folded (fold.h); read-only once ready */
  exec_async async;        /* a run in flight (alloy_program_run_async) */
};

static alloy_error *oom(void) {
  return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
}

/* Asks the backend to claim every node of g; the error names the first
 * node it leaves. */
static alloy_error *claim_all(alloy_loaded *row, const alloy_graph *g) {
  int n = alloy_graph_num_nodes(g);
  alloy_claims claims = {.num_nodes = n, .claimed = calloc((size_t)(n ? n : 1), sizeof(bool)),
                         .cost = calloc((size_t)(n ? n : 1), sizeof(double))};
  alloy_error *e = (!claims.claimed || !claims.cost) ? oom() : NULL;
  if (!e && (e = row->api->claim(row->be, g, &claims)))
    e = alloy_error_wrap(e, "backend %s: claim", row->name);
  for (int i = 0; i < n && !e; i++)
    if (!claims.claimed[i]) {
      alloy_node *node = alloy_graph_node(g, i);
      const char *vname = alloy_node_num_outputs(node) ? alloy_value_name(alloy_node_output(node, 0)) : "";
      const char *why = claims.reason && claims.reason[i] ? claims.reason[i] : NULL;
      e = alloy_error_new(ALLOY_ERR_UNSUPPORTED,
                          "backend %s does not claim node %d (%s, op %s)%s%s", row->name, i, vname,
                          alloy_op_name(alloy_node_op(node)), why ? ": " : "", why ? why : "");
    }
  claims_release(&claims);
  free(claims.claimed);
  free(claims.cost);
  return e;
}

static alloy_error *compile_now(alloy_loaded *row, const alloy_graph *g, alloy_executable **exe) {
  uint64_t t0 = trace_on() ? trace_clock_ns() : 0;
  alloy_error *e = claim_all(row, g);
  alloy_compile_options opts = {.struct_size = ALLOY_COMPILE_OPTIONS_STRUCT_SIZE, .device = 0,
                                .opt_level = 2, .options = row->options,
                                .num_options = row->noptions};
  if (!e && (e = row->api->compile(row->be, g, &opts, exe)))
    e = alloy_error_wrap(e, "backend %s: compile", row->name);
  if (t0) { /* the host's view of a partition's compile; the plugin may trace its parts */
    char what[96];
    snprintf(what, sizeof what, "compile %s (%d nodes)", row->name, alloy_graph_num_nodes(g));
    trace_range("alloy", "compile", what, t0, trace_clock_ns());
  }
  return e;
}

/* Through the runtime's compile cache (cache.c). */
static alloy_error *compile_graph(alloy_runtime *rt, alloy_loaded *row, compiled *c) {
  return cache_compile(rt, row, c->graph, compile_now, &c->exe);
}

static void exe_release(alloy_program *p, alloy_executable *exe) {
  if (exe && !cache_release(p->rt, exe)) p->be->api->executable_release(p->be->be, exe);
}

bool program_has_backed_symbols(alloy_graph *g) {
  alloy_symtab *st = alloy_graph_symtab(g);
  for (int i = 0; i < alloy_symtab_count(st); i++)
    if (!alloy_symtab_is_unbacked(st, i)) return true;
  return false;
}

/* The claims of one backend on the graph of the current decomposition
 * round. */
typedef struct claim_ctx {
  alloy_loaded *row;
  bool *claimed;
  int n;
} claim_ctx;

static alloy_error *claim_round(const alloy_graph *g, void *ctx) {
  claim_ctx *c = ctx;
  int n = alloy_graph_num_nodes(g);
  double *cost = calloc((size_t)(n ? n : 1), sizeof *cost);
  bool *claimed = calloc((size_t)(n ? n : 1), sizeof *claimed);
  free(c->claimed);
  c->claimed = claimed;
  c->n = n;
  if (!cost || !claimed) {
    free(cost);
    return oom();
  }
  alloy_claims claims = {.num_nodes = n, .claimed = claimed, .cost = cost};
  alloy_error *e = c->row->api->claim(c->row->be, g, &claims);
  claims_release(&claims);
  free(cost);
  return e ? alloy_error_wrap(e, "backend %s: claim", c->row->name) : NULL;
}

static bool claim_accept(const alloy_graph *g, int i, void *ctx) {
  (void)g;
  const claim_ctx *c = ctx;
  return i < c->n && c->claimed[i];
}

/* Brings g to what the backend accepts: the forced level first, then
 * whatever the backend still does not claim. */
static alloy_error *lower(alloy_loaded *row, const alloy_graph *g, alloy_decompose_level level,
                          alloy_graph **out) {
  return program_lower(&row, 1, g, level, out);
}

/* The claims of several backends: a node stays when any of them claims it. */
typedef struct claims_ctx {
  alloy_loaded *const *rows;
  int nrows;
  claim_ctx *each;
} claims_ctx;

static alloy_error *claims_round(const alloy_graph *g, void *ctx) {
  claims_ctx *c = ctx;
  alloy_error *e = NULL;
  for (int b = 0; b < c->nrows && !e; b++) e = claim_round(g, &c->each[b]);
  return e;
}

/* The last backend of several is the fallback (ref, in the default order).
 * Its claim keeps a node whole only at Core ATen: an ATen-level composite
 * (linear, layer_norm, scaled_dot_product_attention) that no backend before
 * it claims is decomposed, so that its pieces can go to those backends,
 * instead of running whole on the fallback with copies around it. */
static bool claims_accept(const alloy_graph *g, int i, void *ctx) {
  claims_ctx *c = ctx;
  int last = c->nrows - 1;
  for (int b = 0; b < last; b++)
    if (claim_accept(g, i, &c->each[b])) return true;
  return last >= 0 && claim_accept(g, i, &c->each[last]) && (last == 0 || decomp_accept_core(g, i, NULL));
}

static alloy_error *lower_for(alloy_loaded *const *rows, int nrows, const alloy_graph *g0,
                          alloy_decompose_level level, alloy_graph **out) {
  /* No mutation and no aliasing from here on (decompositions/functionalize.c). */
  alloy_graph *g = NULL, *forced = NULL;
  alloy_error *e = alloy_functionalize(g0, &g);
  if (e) return alloy_error_wrap(e, "functionalizing");
  if (level != ALLOY_DECOMPOSE_AUTO) {
    decomp_options fo = {.accept = level == ALLOY_DECOMPOSE_PRIMS ? decomp_accept_prims
                                                                  : decomp_accept_core};
    e = alloy_decompose(g, &fo, &forced, NULL, NULL);
    if (e) {
      alloy_graph_free(g);
      return alloy_error_wrap(e, "decomposing to %s",
                              level == ALLOY_DECOMPOSE_PRIMS ? "prims" : "Core ATen");
    }
  }
  claim_ctx each[16] = {{0}};
  if (nrows > 16) nrows = 16;
  for (int b = 0; b < nrows; b++) each[b].row = rows[b];
  claims_ctx cc = {rows, nrows, each};
  decomp_options ao = {.round_begin = claims_round, .accept = claims_accept, .ctx = &cc};
  char *why = NULL;
  e = alloy_decompose(forced ? forced : g, &ao, out, NULL, &why);
  for (int b = 0; b < nrows; b++) free(each[b].claimed);
  alloy_graph_free(forced);
  if (!e && nrows == 1 && (e = claim_all(rows[0], *out))) {
    /* Name the node of the graph as given, not a piece of its
     * decomposition, and say where decomposing it stopped. */
    alloy_error *orig = claim_all(rows[0], g);
    if (orig) {
      alloy_error_free(e);
      e = alloy_error_new(alloy_error_code_of(orig), "%s; decomposing did not help: %s",
                          alloy_error_message(orig), why ? why : "no rule applies");
      alloy_error_free(orig);
    } else if (why) {
      e = alloy_error_wrap(e, "the first piece that could not be decomposed: %s", why);
    }
    if (e) {
      alloy_graph_free(*out);
      *out = NULL;
    }
  }
  alloy_graph_free(g);
  free(why);
  return e;
}

alloy_error *program_lower(alloy_loaded *const *rows, int nrows, const alloy_graph *g0,
                           alloy_decompose_level level, alloy_graph **out) {
  uint64_t t0 = trace_on() ? trace_clock_ns() : 0;
  alloy_error *e = lower_for(rows, nrows, g0, level, out);
  if (t0) trace_range("alloy", "compile", "functionalize and decompose", t0, trace_clock_ns());
  return e;
}

/* An output that is one of the graph's inputs needs no device. */
static bool passes_through(const alloy_graph *g, int k) {
  return alloy_value_producer(alloy_graph_output(g, k), NULL) == NULL;
}

/* A program for a graph the backend already claims whole (lowered): the
 * program takes the graph over, on success and on failure. alone: run by
 * alloy_program_run itself, so pass-through outputs stay with the host. */
static alloy_error *program_new(alloy_runtime *rt, alloy_loaded *row, alloy_graph *g, bool alone,
                                alloy_program **out) {
  alloy_program *p = calloc(1, sizeof *p);
  if (!p) {
    alloy_graph_free(g);
    return oom();
  }
  pthread_mutex_init(&p->lock, NULL);
  exec_async_init(&p->async);
  p->rt = rt;
  p->be = row;
  p->graph = g;
  /* A backend that compiles symbolic sizes itself gets the graph as it is;
   * for the others a symbolic graph is compiled per binding when it runs. */
  const alloy_plugin_api *api = row->api;
  bool symbolic_ok = ALLOY_HAS_FIELD(api, alloy_plugin_api, capabilities) &&
                     (api->capabilities & ALLOY_CAP_SYMBOLIC_SHAPES);
  p->specialize = !symbolic_ok && program_has_backed_symbols(g);
  /* Alone, the device gets only what it must compute: the graph less
   * its pass-through outputs and the inputs nothing reads (weights folded
   * away), which is the extract of all its nodes. */
  int nout = alloy_graph_num_outputs(g), nin = alloy_graph_num_inputs(g), nn = alloy_graph_num_nodes(g);
  bool whole = true;
  for (int k = 0; k < nout && whole; k++) whole = !passes_through(g, k);
  for (int i = 0; i < nin && whole; i++) whole = alloy_value_num_users(alloy_graph_input(g, i)) > 0;
  alloy_error *e = NULL;
  if (!alone || whole) {
    p->unit = p;
    if (!p->specialize) {
      p->base.graph = g;
      e = compile_graph(rt, row, &p->base);
    }
  } else if (nn > 0) {
    alloy_graph *dev = NULL;
    alloy_node **nodes = malloc(sizeof *nodes * (size_t)nn);
    if (!nodes) e = oom();
    for (int i = 0; i < nn && !e; i++) nodes[i] = alloy_graph_node(g, i);
    if (!e) e = alloy_graph_extract(g, nodes, nn, &dev);
    free(nodes);
    if (!e) e = program_new(rt, row, dev, false, &p->unit);
  }
  if (e) {
    alloy_program_release(p);
    return e;
  }
  *out = p;
  return NULL;
}

alloy_error *program_compile_lowered(alloy_runtime *rt, int backend, alloy_graph *g,
                                     alloy_program **out) {
  *out = NULL;
  return program_new(rt, &rt->backends[backend], g, false, out);
}

/* Records the options meant for the backends of rows (alloy_program_options
 * backend_options: "<backend>.<key>") on those rows, for compile. */
alloy_error *program_options_apply(alloy_runtime *rt, const alloy_program_options *o) {
  if (!o || !ALLOY_HAS_FIELD(o, alloy_program_options, num_backend_options)) return NULL;
  for (int i = 0; i < o->num_backend_options; i++) {
    const char *key = o->backend_options[i].key, *dot = key ? strchr(key, '.') : NULL;
    if (!dot)
      return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "backend option '%s' is not "
                             "<backend>.<key>", key ? key : "(null)");
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(dot - key), key);
    int b = alloy_runtime_find_backend(rt, name);
    if (b < 0)
      return alloy_error_new(ALLOY_ERR_NOT_FOUND, "backend option '%s': no usable backend '%s'", key,
                             name);
    alloy_error *e = alloy_runtime_set_backend_option(rt, b, dot + 1, o->backend_options[i].value);
    if (e) return e;
  }
  return NULL;
}

/* The weights the options bind, by graph input (NULL when none). */
alloy_error *program_bind_weights(alloy_graph *g, const alloy_program_options *o,
                                 alloy_host_tensor **out) {
  *out = NULL;
  if (!o || !ALLOY_HAS_FIELD(o, alloy_program_options, num_weights) || !o->weights) return NULL;
  int nin = alloy_graph_num_inputs(g);
  alloy_host_tensor *bound = calloc((size_t)nin + 1, sizeof *bound);
  if (!bound) return oom();
  for (int i = 0; i < nin && i < o->num_weights; i++) {
    const alloy_host_tensor *t = &o->weights[i];
    const alloy_value *v = alloy_graph_input(g, i);
    if (!t->data || alloy_graph_input_role(g, i, NULL) == ALLOY_INPUT_USER) continue;
    bool same = alloy_value_kind_of(v) == ALLOY_VALUE_TENSOR && t->dtype == alloy_value_dtype(v) &&
                t->rank == alloy_value_rank(v);
    uint64_t bytes = alloy_dtype_size(t->dtype);
    for (int d = 0; same && d < t->rank; d++) {
      alloy_dim dim = alloy_value_shape(v)[d];
      same = alloy_dim_is_const(dim) && dim.value == t->sizes[d];
      bytes *= (uint64_t)t->sizes[d];
    }
    if (!same) {
      free(bound);
      return alloy_error_new(ALLOY_ERR_TYPE, "weight for input %d (%s) does not match its type", i,
                             alloy_value_name(v));
    }
    bound[i] = *t;
    alloy_graph_set_input_data(g, i, t->data, bytes);
  }
  *out = bound;
  return NULL;
}

/* Lowered graph g: weights bound and folded, then the program. */
static alloy_error *program_build(alloy_runtime *rt, alloy_loaded *row, alloy_graph *g,
                                  const alloy_program_options *options, alloy_program **out) {
  feed f = {0};
  alloy_error *e = feed_prepare(rt, g, options, &f);
  if (e) alloy_graph_free(g);
  else e = program_new(rt, row, g, true, out);
  if (e) {
    feed_free(&f);
    return e;
  }
  (*out)->feed = f;
  return NULL;
}

alloy_error *alloy_program_compile_ex(alloy_runtime *rt, int backend, const alloy_graph *g,
                                      const alloy_program_options *options, alloy_program **out) {
  *out = NULL;
  if (backend < 0 || backend >= rt->num || !rt->backends[backend].ok)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "backend %d is not usable", backend);
  alloy_decompose_level level = options ? options->decompose : ALLOY_DECOMPOSE_AUTO;
  alloy_loaded *row = &rt->backends[backend];
  alloy_graph *lowered = NULL;
  alloy_error *e = program_options_apply(rt, options);
  if (!e) e = lower(row, g, level, &lowered);
  return e ? e : program_build(rt, row, lowered, options, out);
}

alloy_error *alloy_program_compile(alloy_runtime *rt, int backend, const alloy_graph *g,
                                   alloy_program **out) {
  return alloy_program_compile_ex(rt, backend, g, NULL, out);
}

const alloy_graph *alloy_program_graph(const alloy_program *p) { return p->graph; }

int alloy_program_num_specializations(const alloy_program *p) {
  alloy_program *u = p->unit && p->unit != p ? p->unit : (alloy_program *)p;
  pthread_mutex_lock(&u->lock);
  int n = u->nspecs;
  pthread_mutex_unlock(&u->lock);
  return n;
}

void alloy_program_release(alloy_program *p) {
  if (!p) return;
  exec_async_destroy(&p->async); /* waits for a run in flight */
  exec_pool_free(&p->pool);
  if (p->unit != p) alloy_program_release(p->unit);
  exe_release(p, p->base.exe);
  for (int i = 0; i < p->nspecs; i++) {
    exe_release(p, p->specs[i]->exe);
    alloy_graph_free(p->specs[i]->graph);
    free(p->specs[i]->key);
    free(p->specs[i]);
  }
  free(p->specs);
  pthread_mutex_destroy(&p->lock);
  free(p->part_in);
  free(p->out_src);
  feed_free(&p->feed);
  alloy_graph_free(p->graph);
  free(p);
}

/* Binds symbols from the inputs' sizes and checks every input dim. */
alloy_error *program_bind_symbols(const alloy_graph *g, const alloy_host_tensor *inputs, int n,
                                  int64_t *values, bool *bound, int nsyms) {
  alloy_symtab *st = alloy_graph_symtab((alloy_graph *)g);
  for (int i = 0; i < n; i++) {
    const alloy_value *v = alloy_graph_input(g, i);
    if (alloy_value_kind_of(v) != ALLOY_VALUE_TENSOR) continue;
    for (int d = 0; d < alloy_value_rank(v); d++) {
      alloy_dim dim = alloy_value_shape(v)[d];
      for (int s = 0; s < nsyms; s++)
        if (!bound[s] && alloy_dim_same(dim, alloy_symtab_symbol(st, s))) {
          int64_t lo, hi, got = inputs[i].sizes[d];
          alloy_symtab_range(st, s, &lo, &hi);
          if (got < lo || got > hi)
            return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                                   "input %d (%s) dim %d is %lld, outside the range [%lld, %lld] of "
                                   "symbol %s",
                                   i, alloy_value_name(v), d, (long long)got, (long long)lo,
                                   (long long)hi, alloy_symtab_name(st, s));
          values[s] = got;
          bound[s] = true;
        }
    }
  }
  for (int i = 0; i < n; i++) {
    const alloy_value *v = alloy_graph_input(g, i);
    if (alloy_value_kind_of(v) != ALLOY_VALUE_TENSOR) continue;
    for (int d = 0; d < alloy_value_rank(v); d++) {
      int64_t want;
      alloy_error *e = alloy_dim_eval(st, alloy_value_shape(v)[d], values, bound, nsyms, &want);
      if (e) return alloy_error_wrap(e, "input %d (%s) dim %d", i, alloy_value_name(v), d);
      if (want != inputs[i].sizes[d]) {
        char text[128];
        alloy_dim dim = alloy_value_shape(v)[d];
        alloy_dim_print(dim, text, sizeof text);
        if (alloy_dim_is_const(dim))
          return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                                 "input %d (%s) dim %d is %lld, the graph needs %lld", i,
                                 alloy_value_name(v), d, (long long)inputs[i].sizes[d],
                                 (long long)want);
        return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                               "input %d (%s) dim %d is %lld, the graph says %s = %lld", i,
                               alloy_value_name(v), d, (long long)inputs[i].sizes[d], text,
                               (long long)want);
      }
    }
  }
  return NULL;
}


/* Inputs must match the graph's in number, kind, dtype and rank before
 * their sizes are read. */
static alloy_error *check_inputs(const alloy_program *p, const alloy_host_tensor *inputs, int n) {
  /* Folded constants are the program's own (the feed is ready: program_exec
   * ran first). */
  int nin = p->feed.ncaller;
  if (n != nin)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "the graph has %d inputs; %d given", nin, n);
  for (int i = 0; i < nin; i++) {
    const alloy_value *v = alloy_graph_input(p->graph, i);
    if (alloy_value_kind_of(v) != ALLOY_VALUE_TENSOR)
      return alloy_error_new(ALLOY_ERR_UNSUPPORTED, "input %d (%s) is a scalar; only tensor inputs "
                             "can be passed to alloy_program_run", i, alloy_value_name(v));
    if (inputs[i].dtype != alloy_value_dtype(v) || inputs[i].rank != alloy_value_rank(v))
      return alloy_error_new(ALLOY_ERR_TYPE, "input %d (%s): expected %s of rank %d, got %s of rank %d",
                             i, alloy_value_name(v), alloy_dtype_name(alloy_value_dtype(v)),
                             alloy_value_rank(v), alloy_dtype_name(inputs[i].dtype), (int)inputs[i].rank);
  }
  return NULL;
}

/* The specialization of p for the symbol values its inputs give, compiled
 * now when it is new. The lookup and the compile are under p's lock: a
 * thread asking for sizes another is compiling waits for it, never
 * compiles them twice. Binding only reads the graph's symbol table
 * (alloy_dim_eval is const), so it runs outside the lock; specializing,
 * which makes dims in a table (not thread-safe, alloy/sym.h), runs under
 * it. */
static alloy_error *specialization(alloy_program *p, const alloy_host_tensor *inputs, int nin,
                                   const compiled **out) {
  alloy_symtab *st = alloy_graph_symtab(p->graph);
  int nsyms = alloy_symtab_count(st);
  int64_t *values = calloc((size_t)(nsyms ? nsyms : 1), sizeof *values);
  bool *bound = calloc((size_t)(nsyms ? nsyms : 1), sizeof *bound);
  alloy_error *e = (!values || !bound) ? oom() : NULL;
  if (!e) e = program_bind_symbols(p->graph, inputs, nin, values, bound, nsyms);
  /* The key: every symbol's value, unbound ones as INT64_MIN. */
  for (int i = 0; i < nsyms && !e; i++)
    if (!bound[i]) values[i] = INT64_MIN;
  if (e) {
    free(values);
    free(bound);
    return e;
  }
  pthread_mutex_lock(&p->lock);
  for (int i = 0; i < p->nspecs; i++)
    if (!memcmp(p->specs[i]->key, values, sizeof *values * (size_t)nsyms)) {
      *out = p->specs[i];
      pthread_mutex_unlock(&p->lock);
      free(values);
      free(bound);
      return NULL;
    }
  if (p->nspecs == p->cap_specs) {
    int cap = p->cap_specs ? 2 * p->cap_specs : 4;
    compiled **c = realloc(p->specs, sizeof *c * (size_t)cap);
    if (!c) e = oom();
    else p->specs = c, p->cap_specs = cap;
  }
  compiled *c = e ? NULL : calloc(1, sizeof *c);
  if (!e && !c) e = oom();
  if (!e) {
    c->key = values;
    e = alloy_graph_specialize(p->graph, values, bound, nsyms, &c->graph);
  }
  if (!e) e = compile_graph(p->rt, p->be, c);
  free(bound);
  if (e) {
    if (c) {
      exe_release(p, c->exe);
      alloy_graph_free(c->graph);
    }
    free(c);
    free(values);
  } else {
    p->specs[p->nspecs++] = c;
    *out = c;
  }
  pthread_mutex_unlock(&p->lock);
  return e;
}


void program_choice_free(program_choice *c) {
  free(c->sym_values);
  free(c->sym_bound);
  *c = (program_choice){0};
}

/* What runs for these input sizes, into c, and the sizes of its outputs
 * (known[k] false: data-dependent). The choice holds until c's next call. */
alloy_error *program_choose(alloy_program *p, program_choice *ch, const alloy_host_tensor *ins, int nin,
                            int64_t *out_sizes, bool *known) {
  const compiled *c = &p->base;
  alloy_error *e = p->specialize ? specialization(p, ins, nin, &c) : NULL;
  if (e) return e;
  alloy_graph *g = c->graph;
  alloy_symtab *st = alloy_graph_symtab(g);
  int nsyms = alloy_symtab_count(st);
  if (nsyms > ch->cap_sym) {
    int64_t *v = realloc(ch->sym_values, sizeof *v * (size_t)nsyms);
    if (v) ch->sym_values = v;
    bool *b = v ? realloc(ch->sym_bound, sizeof *b * (size_t)nsyms) : NULL;
    if (b) ch->sym_bound = b;
    if (!v || !b) return oom();
    ch->cap_sym = nsyms;
  }
  ch->nsym_values = nsyms;
  for (int i = 0; i < nsyms; i++) ch->sym_bound[i] = false;
  if (nsyms && (e = program_bind_symbols(g, ins, nin, ch->sym_values, ch->sym_bound, nsyms)))
    return e;
  for (int k = 0; k < alloy_graph_num_outputs(g); k++) {
    const alloy_value *v = alloy_graph_output(g, k);
    known[k] = true;
    for (int d = 0; d < alloy_value_rank(v) && known[k]; d++) {
      alloy_error *de = alloy_dim_eval(st, alloy_value_shape(v)[d], ch->sym_values, ch->sym_bound,
                                       nsyms, &out_sizes[k * ALLOY_MAX_RANK + d]);
      /* A size no input binds is known only after running. */
      if (de) known[k] = false;
      alloy_error_free(de);
    }
  }
  for (int i = 0; i < nsyms; i++)
    if (!ch->sym_bound[i]) ch->sym_values[i] = INT64_MIN;
  ch->chosen = c;
  return NULL;
}

alloy_error *program_launch(alloy_program *p, const program_choice *ch, const alloy_tensor *ins, int nin,
                            alloy_tensor *outs, int nout, alloy_queue *queue, alloy_event **done) {
  if (!ch->chosen || !ch->chosen->exe)
    return alloy_error_new(ALLOY_ERR_INTERNAL, "program launched before a choice was made");
  alloy_execute_args args = {.struct_size = ALLOY_EXECUTE_ARGS_STRUCT_SIZE, .inputs = ins,
                             .num_inputs = nin, .outputs = outs, .num_outputs = nout,
                             .symbols = ch->sym_values, .num_symbols = ch->nsym_values,
                             .queue = queue, .done = done, .ext = NULL};
  alloy_error *e = p->be->api->execute(p->be->be, ch->chosen->exe, &args);
  return e ? alloy_error_wrap(e, "backend %s: execute", p->be->name) : NULL;
}

/* What the executors of a program run alone run: one partition (the
 * unit), outputs from it or passed through. Made on the first run, under
 * p's lock. */
static alloy_error *program_setup(alloy_program *p) {
  const alloy_graph *g = p->graph;
  int nin = alloy_graph_num_inputs(g), nout = alloy_graph_num_outputs(g);
  /* A program made without weights options (a partition run alone) still
   * needs its feed. */
  alloy_error *fe = p->feed.resident ? NULL : feed_prepare(p->rt, p->graph, NULL, &p->feed);
  if (fe) return fe;
  if (!p->out_src && !(p->out_src = calloc((size_t)nout + 1, sizeof *p->out_src))) return oom();
  int nparts = 0;
  const alloy_graph *ug = p->unit ? p->unit->graph : NULL;
  if (ug) {
    int unin = alloy_graph_num_inputs(ug);
    if (!p->part_in && !(p->part_in = calloc((size_t)unin + 1, sizeof *p->part_in))) return oom();
    /* The unit is g itself or the extract of its nodes: same names. */
    for (int i = 0; i < unin; i++)
      p->part_in[i] = (exec_src){-1, claims_input_index(g, alloy_graph_find_value(
                                          g, alloy_value_name(alloy_graph_input(ug, i))))};
    p->part = (exec_part){.backend = (int)(p->be - p->rt->backends), .prog = p->unit,
                          .nin = unin, .nout = alloy_graph_num_outputs(ug), .in = p->part_in};
    nparts = 1;
  }
  for (int k = 0; k < nout; k++) {
    const alloy_value *v = alloy_graph_output(g, k);
    if (passes_through(g, k)) {
      p->out_src[k] = (exec_src){-1, claims_input_index(g, v)};
      continue;
    }
    int j = 0;
    while (j < alloy_graph_num_outputs(ug) &&
           strcmp(alloy_value_name(alloy_graph_output(ug, j)), alloy_value_name(v)))
      j++;
    if (j == alloy_graph_num_outputs(ug))
      return alloy_error_new(ALLOY_ERR_INTERNAL, "output %d (%s) is not computed", k,
                             alloy_value_name(v));
    p->out_src[k] = (exec_src){0, j};
  }
  p->desc = (exec_desc){.rt = p->rt, .nparts = nparts, .parts = &p->part, .ninputs = nin,
                        .resident = p->feed.resident, .noutputs = nout, .outputs = p->out_src};
  p->ready = true;
  return NULL;
}

/* Readies p for runs (once), and with x non-NULL gives thread key's
 * executor, made on its first run. */
static alloy_error *program_exec(alloy_program *p, pthread_t key, exec **x) {
  pthread_mutex_lock(&p->lock);
  alloy_error *e = p->ready ? NULL : program_setup(p);
  if (!e && x) e = exec_pool_mine(&p->pool, &p->desc, key, x);
  pthread_mutex_unlock(&p->lock);
  return e;
}

/* Inputs must match the graph's in number, kind, dtype and rank before
 * their sizes are read; the outputs asked for, in number. A run this
 * thread started asynchronously holds its executor until the wait. */
static alloy_error *check_run(alloy_program *p, pthread_t key, const alloy_host_tensor *inputs,
                              int num_inputs, int num_outputs) {
  int nout = alloy_graph_num_outputs(p->graph), need = program_outputs_needed(p->graph);
  if (num_outputs < need || num_outputs > nout)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                           "the graph has %d outputs (the last %d of them input mutations that "
                           "may be left out); %d given", nout, nout - need, num_outputs);
  if (exec_async_mine(&p->async, key))
    return alloy_error_new(ALLOY_ERR_UNAVAILABLE, "a run of this program is in flight: "
                           "alloy_program_wait first");
  alloy_error *e = program_exec(p, key, NULL);
  return e ? e : check_inputs(p, inputs, num_inputs);
}

alloy_error *alloy_program_prepare(alloy_program *p, const alloy_host_tensor *inputs,
                                   int num_inputs) {
  alloy_error *e = program_exec(p, pthread_self(), NULL);
  if (!e) e = check_inputs(p, inputs, num_inputs);
  if (e || !p->unit || !p->unit->specialize) return e;
  /* The unit's inputs are some of the program's, in its own order. */
  alloy_host_tensor *full = feed_inputs(&p->feed, inputs);
  alloy_host_tensor *mine = full ? malloc(sizeof *mine * ((size_t)p->part.nin + 1)) : NULL;
  if (!mine) {
    free(full);
    return oom();
  }
  for (int i = 0; i < p->part.nin; i++) mine[i] = full[p->part_in[i].index];
  const compiled *c;
  e = specialization(p->unit, mine, p->part.nin, &c);
  free(mine);
  free(full);
  return e;
}

/* A run on thread key's executor (key: the caller, or the thread that
 * started an asynchronous run). */
static alloy_error *run_now(alloy_program *p, pthread_t key, const alloy_host_tensor *inputs,
                            alloy_host_tensor *outputs, int num_outputs) {
  exec *x;
  alloy_error *e = program_exec(p, key, &x);
  if (e) return e;
  alloy_host_tensor *full = feed_inputs(&p->feed, inputs);
  e = full ? exec_run(x, full, outputs, num_outputs) : oom();
  free(full);
  return e;
}

alloy_error *alloy_program_run(alloy_program *p, const alloy_host_tensor *inputs, int num_inputs,
                               alloy_host_tensor *outputs, int num_outputs) {
  pthread_t self = pthread_self();
  alloy_error *e = check_run(p, self, inputs, num_inputs, num_outputs);
  return e ? e : run_now(p, self, inputs, outputs, num_outputs);
}

static alloy_error *run_owner(void *owner, pthread_t key, const alloy_host_tensor *inputs,
                              alloy_host_tensor *outputs, int num_outputs) {
  return run_now(owner, key, inputs, outputs, num_outputs);
}

alloy_error *alloy_program_run_async(alloy_program *p, const alloy_host_tensor *inputs,
                                     int num_inputs, alloy_host_tensor *outputs,
                                     int num_outputs) {
  alloy_error *e = check_run(p, pthread_self(), inputs, num_inputs, num_outputs);
  return e ? e : exec_async_start(&p->async, run_owner, p, inputs, outputs, num_outputs, "program");
}

alloy_error *alloy_program_wait(alloy_program *p) { return exec_async_wait(&p->async, "program"); }

/* ---- tensors where the caller keeps them ---------------------------------- */

alloy_error *run_tensors_split(alloy_runtime *rt, const alloy_run_tensor *t, int n, const char *what,
                               alloy_host_tensor *host, int *where) {
  for (int i = 0; i < n; i++) {
    if (t[i].struct_size < ALLOY_RUN_TENSOR_STRUCT_SIZE)
      return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "%s %d: struct_size %zu, not ALLOY_RUN_TENSOR_STRUCT_SIZE",
                             what, i, t[i].struct_size);
    if (t[i].backend < -1 || t[i].backend >= rt->num || (t[i].backend >= 0 && !rt->backends[t[i].backend].ok))
      return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "%s %d: backend %d is not an open backend of the runtime",
                             what, i, (int)t[i].backend);
    host[i] = (alloy_host_tensor){.struct_size = ALLOY_STRUCT_SIZE(alloy_host_tensor, data), .dtype = t[i].dtype,
                                  .rank = t[i].rank, .sizes = t[i].sizes, .data = t[i].data};
    where[i] = t[i].backend;
  }
  return NULL;
}

/* The run's placements by graph input: the caller's, and host memory for
 * the weights and constants the feed adds (f->full's order). */
const int *feed_places(const feed *f, const int *caller, int *full) {
  for (int i = 0; i < f->ninputs; i++)
    full[i] = i < f->ncaller && !(f->bound && f->bound[i].data) ? caller[i] : -1;
  return full;
}

alloy_error *run_io_make(alloy_runtime *rt, feed *f, const alloy_run_tensor *inputs, int num_inputs,
                         const alloy_run_tensor *outputs, int num_outputs, run_io *io) {
  memset(io, 0, sizeof *io);
  if (num_inputs < 0 || num_outputs < 0 || num_inputs > 4096 || num_outputs > 4096)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "%d inputs and %d outputs", num_inputs, num_outputs);
  io->hin = calloc((size_t)num_inputs + 1, sizeof *io->hin);
  io->hout = calloc((size_t)num_outputs + 1, sizeof *io->hout);
  io->win = calloc((size_t)num_inputs + 1, sizeof *io->win);
  io->wout = calloc((size_t)num_outputs + 1, sizeof *io->wout);
  io->wfull = calloc((size_t)f->ninputs + 1, sizeof *io->wfull);
  alloy_error *e = io->hin && io->hout && io->win && io->wout && io->wfull ? NULL : oom();
  if (!e) e = run_tensors_split(rt, inputs, num_inputs, "input", io->hin, io->win);
  if (!e) e = run_tensors_split(rt, outputs, num_outputs, "output", io->hout, io->wout);
  if (!e && !(io->full = feed_inputs(f, io->hin))) e = oom();
  if (!e) feed_places(f, io->win, io->wfull);
  return e;
}

void run_io_free(run_io *io) {
  free(io->hin), free(io->hout), free(io->full), free(io->win), free(io->wout), free(io->wfull);
  memset(io, 0, sizeof *io);
}

static alloy_error *run_placed(alloy_program *p, const alloy_run_tensor *inputs, int num_inputs,
                               const alloy_run_tensor *outputs, int num_outputs, const exec_stream *on) {
  pthread_t self = pthread_self();
  alloy_error *e = program_exec(p, self, NULL); /* the feed, for its size */
  if (e) return e;
  run_io io;
  e = run_io_make(p->rt, &p->feed, inputs, num_inputs, outputs, num_outputs, &io);
  if (!e) e = check_run(p, self, io.hin, num_inputs, num_outputs);
  exec *x = NULL;
  if (!e) e = program_exec(p, self, &x);
  if (!e) e = exec_run_placed(x, io.full, io.wfull, io.hout, io.wout, num_outputs, on);
  run_io_free(&io);
  return e;
}

alloy_error *alloy_program_run_tensors(alloy_program *p, const alloy_run_tensor *inputs, int num_inputs,
                                       const alloy_run_tensor *outputs, int num_outputs) {
  return run_placed(p, inputs, num_inputs, outputs, num_outputs, NULL);
}

alloy_error *alloy_program_run_on_stream(alloy_program *p, const alloy_run_tensor *inputs, int num_inputs,
                                         const alloy_run_tensor *outputs, int num_outputs, int backend,
                                         const alloy_ext *stream) {
  exec_stream on;
  alloy_error *e = exec_stream_open(p->rt, backend, stream, &on);
  if (!e) e = run_placed(p, inputs, num_inputs, outputs, num_outputs, &on);
  exec_stream_close(p->rt, &on);
  return e;
}

alloy_error *alloy_program_output_sizes(alloy_program *p, const alloy_run_tensor *inputs, int num_inputs,
                                        int index, int *rank, int64_t *sizes) {
  pthread_t self = pthread_self();
  alloy_error *e = exec_async_mine(&p->async, self)
                       ? alloy_error_new(ALLOY_ERR_UNAVAILABLE, "a run of this program is in flight: "
                                         "alloy_program_wait first")
                       : NULL;
  exec *x = NULL;
  if (!e) e = program_exec(p, self, &x);
  run_io io = {0};
  if (!e) e = run_io_make(p->rt, &p->feed, inputs, num_inputs, NULL, 0, &io);
  if (!e) e = check_inputs(p, io.hin, num_inputs);
  if (!e) e = exec_output_sizes(x, io.full, index, rank, sizes);
  run_io_free(&io);
  return e;
}

int program_outputs_needed(const alloy_graph *g) {
  /* The mutation outputs functionalization appends may be left out. */
  int need = alloy_graph_num_outputs(g);
  while (need > 0 && alloy_graph_output_role(g, need - 1, NULL) != ALLOY_OUTPUT_USER) need--;
  return need;
}

void alloy_program_stats(const alloy_program *p, alloy_run_stats *out) {
  alloy_run_stats s = {.struct_size = ALLOY_RUN_STATS_STRUCT_SIZE};
  alloy_program *mp = (alloy_program *)p; /* the lock only */
  pthread_mutex_lock(&mp->lock);
  exec_pool_stats(&p->pool, &s);
  pthread_mutex_unlock(&mp->lock);
  s.folded_nodes = (uint64_t)fold_nodes(p->feed.fold);
  exec_stats_copy(&s, out);
}
