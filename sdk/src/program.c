/*
 * sdk/src/program.c: a graph compiled on one backend, and running it on
 * host tensors. This is the single-backend path (claim, compile, execute);
 * the partitioner that spreads one graph over several backends builds on it.
 *
 * Running binds the graph's symbols from the inputs' actual sizes (a size
 * that is a plain symbol binds it; every other size must then evaluate to
 * the actual one), checks each symbol's range, allocates backend buffers,
 * copies inputs in, executes, waits, and copies outputs out.
 *
 * A graph with symbolic sizes is compiled once per set of symbol values:
 * the program keeps the symbolic graph, and each run looks its symbol values
 * up among the specializations compiled so far (alloy_graph_specialize, then
 * claim and compile), so one import serves every batch size. A backend
 * that declares ALLOY_CAP_SYMBOLIC_SHAPES compiles the symbolic graph once
 * instead and evaluates sizes from the symbol values each execute gets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decompositions/decomp.h"
#include "decompositions/functionalize.h"
#include "sdk/src/runtime_internal.h"

/* One compiled graph: the program's own, or a specialization of it. */
typedef struct compiled {
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
  compiled *specs;         /* specializations, in the order they were made */
  int nspecs, cap_specs;
  void **out_data;         /* outputs of the last run, owned here */
  int64_t *out_sizes;      /* num_outputs * ALLOY_MAX_RANK */
};

static alloy_error *oom(void) {
  return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
}

/* Asks the backend to claim every node of g; the error names the first
 * node it leaves. */
static alloy_error *claim_all(alloy_loaded *row, const alloy_graph *g) {
  int n = alloy_graph_num_nodes(g);
  alloy_claims claims = {n, calloc((size_t)(n ? n : 1), sizeof(bool)),
                         calloc((size_t)(n ? n : 1), sizeof(double))};
  alloy_error *e = (!claims.claimed || !claims.cost) ? oom() : NULL;
  if (!e && (e = row->api->claim(row->be, g, &claims)))
    e = alloy_error_wrap(e, "backend %s: claim", row->name);
  for (int i = 0; i < n && !e; i++)
    if (!claims.claimed[i]) {
      alloy_node *node = alloy_graph_node(g, i);
      const char *vname = alloy_node_num_outputs(node) ? alloy_value_name(alloy_node_output(node, 0)) : "";
      e = alloy_error_new(ALLOY_ERR_UNSUPPORTED,
                          "backend %s does not claim node %d (%s, op %s)", row->name, i, vname,
                          alloy_op_name(alloy_node_op(node)));
    }
  free(claims.claimed);
  free(claims.cost);
  return e;
}

static alloy_error *compile_now(alloy_loaded *row, const alloy_graph *g, alloy_executable **exe) {
  alloy_error *e = claim_all(row, g);
  alloy_compile_options opts = {.struct_size = sizeof opts, .device = 0, .opt_level = 2};
  if (!e && (e = row->api->compile(row->be, g, &opts, exe)))
    e = alloy_error_wrap(e, "backend %s: compile", row->name);
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
  alloy_claims claims = {n, claimed, cost};
  alloy_error *e = c->row->api->claim(c->row->be, g, &claims);
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

static bool claims_accept(const alloy_graph *g, int i, void *ctx) {
  claims_ctx *c = ctx;
  for (int b = 0; b < c->nrows; b++)
    if (claim_accept(g, i, &c->each[b])) return true;
  return false;
}

alloy_error *program_lower(alloy_loaded *const *rows, int nrows, const alloy_graph *g0,
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

/* A program for a graph the backend already claims whole (lowered): the
 * program takes the graph over, on success and on failure. */
static alloy_error *program_new(alloy_runtime *rt, alloy_loaded *row, alloy_graph *g,
                                alloy_program **out) {
  alloy_program *p = calloc(1, sizeof *p);
  if (!p) {
    alloy_graph_free(g);
    return oom();
  }
  p->rt = rt;
  p->be = row;
  p->graph = g;
  /* A backend that compiles symbolic sizes itself gets the graph as it is;
   * for the others a symbolic graph is compiled per binding when it runs. */
  const alloy_plugin_api *api = row->api;
  bool symbolic_ok = ALLOY_HAS_FIELD(api, alloy_plugin_api, capabilities) &&
                     (api->capabilities & ALLOY_CAP_SYMBOLIC_SHAPES);
  p->specialize = !symbolic_ok && program_has_backed_symbols(g);
  alloy_error *e = NULL;
  if (!p->specialize) {
    p->base.graph = g;
    e = compile_graph(rt, row, &p->base);
  }
  int nout = alloy_graph_num_outputs(g);
  if (!e) {
    p->out_data = calloc((size_t)(nout ? nout : 1), sizeof *p->out_data);
    p->out_sizes = calloc((size_t)(nout ? nout : 1) * ALLOY_MAX_RANK, sizeof *p->out_sizes);
    if (!p->out_data || !p->out_sizes) e = oom();
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
  return program_new(rt, &rt->backends[backend], g, out);
}

alloy_error *alloy_program_compile_ex(alloy_runtime *rt, int backend, const alloy_graph *g,
                                      const alloy_program_options *options, alloy_program **out) {
  *out = NULL;
  if (backend < 0 || backend >= rt->num || !rt->backends[backend].ok)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "backend %d is not usable", backend);
  alloy_decompose_level level = options ? options->decompose : ALLOY_DECOMPOSE_AUTO;
  alloy_loaded *row = &rt->backends[backend];
  alloy_graph *lowered = NULL;
  alloy_error *e = lower(row, g, level, &lowered);
  return e ? e : program_new(rt, row, lowered, out);
}

alloy_error *alloy_program_compile(alloy_runtime *rt, int backend, const alloy_graph *g,
                                   alloy_program **out) {
  return alloy_program_compile_ex(rt, backend, g, NULL, out);
}

const alloy_graph *alloy_program_graph(const alloy_program *p) { return p->graph; }

int alloy_program_num_specializations(const alloy_program *p) { return p->nspecs; }

static void free_outputs(alloy_program *p) {
  int nout = alloy_graph_num_outputs(p->graph);
  for (int i = 0; i < nout; i++) {
    free(p->out_data[i]);
    p->out_data[i] = NULL;
  }
}

void program_drop_output(alloy_program *p, int k) {
  if (k < 0 || k >= alloy_graph_num_outputs(p->graph)) return;
  free(p->out_data[k]);
  p->out_data[k] = NULL;
}

void alloy_program_release(alloy_program *p) {
  if (!p) return;
  exe_release(p, p->base.exe);
  for (int i = 0; i < p->nspecs; i++) {
    exe_release(p, p->specs[i].exe);
    alloy_graph_free(p->specs[i].graph);
    free(p->specs[i].key);
  }
  free(p->specs);
  if (p->graph && p->out_data) free_outputs(p);
  free(p->out_data);
  free(p->out_sizes);
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

static int64_t numel_of(const int64_t *sizes, int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= sizes[d];
  return n;
}

static void contiguous_strides(const int64_t *sizes, int rank, int64_t *strides) {
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; d--) {
    strides[d] = s;
    s *= sizes[d] > 1 ? sizes[d] : 1;
  }
}

static bool alloy_tensor_contiguous(const alloy_tensor *t) {
  int64_t want[ALLOY_MAX_RANK];
  contiguous_strides(t->sizes, t->rank, want);
  for (int d = 0; d < t->rank; d++)
    if (t->sizes[d] > 1 && t->strides[d] != want[d]) return false;
  return true;
}

typedef struct {
  alloy_buffer *buf;
  int64_t sizes[ALLOY_MAX_RANK], strides[ALLOY_MAX_RANK];
  uint64_t bytes;
} run_tensor;

/* Inputs must match the graph's in number, kind, dtype and rank before
 * their sizes are read. */
static alloy_error *check_inputs(const alloy_program *p, const alloy_host_tensor *inputs, int n) {
  int nin = alloy_graph_num_inputs(p->graph);
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
 * now when it is new. */
static alloy_error *specialization(alloy_program *p, const alloy_host_tensor *inputs, int nin,
                                   compiled **out) {
  alloy_symtab *st = alloy_graph_symtab(p->graph);
  int nsyms = alloy_symtab_count(st);
  int64_t *values = calloc((size_t)(nsyms ? nsyms : 1), sizeof *values);
  bool *bound = calloc((size_t)(nsyms ? nsyms : 1), sizeof *bound);
  alloy_error *e = (!values || !bound) ? oom() : NULL;
  if (!e) e = program_bind_symbols(p->graph, inputs, nin, values, bound, nsyms);
  /* The key: every symbol's value, unbound ones as INT64_MIN. */
  for (int i = 0; i < nsyms && !e; i++)
    if (!bound[i]) values[i] = INT64_MIN;
  for (int i = 0; i < p->nspecs && !e; i++)
    if (!memcmp(p->specs[i].key, values, sizeof *values * (size_t)nsyms)) {
      *out = &p->specs[i];
      free(values);
      free(bound);
      return NULL;
    }
  if (!e && p->nspecs == p->cap_specs) {
    int cap = p->cap_specs ? 2 * p->cap_specs : 4;
    compiled *c = realloc(p->specs, sizeof *c * (size_t)cap);
    if (!c) e = oom();
    else p->specs = c, p->cap_specs = cap;
  }
  compiled c = {NULL, NULL, values};
  if (!e) e = alloy_graph_specialize(p->graph, values, bound, nsyms, &c.graph);
  if (!e) e = compile_graph(p->rt, p->be, &c);
  free(bound);
  if (e) {
    exe_release(p, c.exe);
    alloy_graph_free(c.graph);
    free(values);
    return e;
  }
  p->specs[p->nspecs] = c;
  *out = &p->specs[p->nspecs++];
  return NULL;
}

alloy_error *alloy_program_prepare(alloy_program *p, const alloy_host_tensor *inputs,
                                   int num_inputs) {
  compiled *c;
  alloy_error *e = check_inputs(p, inputs, num_inputs);
  if (e || !p->specialize) return e;
  return specialization(p, inputs, num_inputs, &c);
}

alloy_error *alloy_program_run(alloy_program *p, const alloy_host_tensor *inputs, int num_inputs,
                               alloy_host_tensor *outputs, int num_outputs) {
  const alloy_plugin_api *api = p->be->api;
  alloy_backend *be = p->be->be;
  int nin = alloy_graph_num_inputs(p->graph), nout = alloy_graph_num_outputs(p->graph);
  /* The mutation outputs functionalization appends may be left out. */
  int need = nout;
  while (need > 0 && alloy_graph_output_role(p->graph, need - 1, NULL) != ALLOY_OUTPUT_USER) need--;
  if (num_outputs < need || num_outputs > nout)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                           "the graph has %d outputs (the last %d of them input mutations that "
                           "may be left out); %d given", nout, nout - need, num_outputs);
  alloy_error *ce = check_inputs(p, inputs, num_inputs);
  if (ce) return ce;
  compiled *c = &p->base;
  if (p->specialize) {
    alloy_error *se = specialization(p, inputs, nin, &c);
    if (se) return se;
  }
  alloy_graph *g = c->graph;
  alloy_symtab *st = alloy_graph_symtab(g);
  int nsyms = alloy_symtab_count(st);
  int64_t *values = calloc((size_t)(nsyms ? nsyms : 1), sizeof *values);
  bool *bound = calloc((size_t)(nsyms ? nsyms : 1), sizeof *bound);
  run_tensor *rts = calloc((size_t)(nin + nout ? nin + nout : 1), sizeof *rts);
  alloy_tensor *tensors = calloc((size_t)(nin + nout ? nin + nout : 1), sizeof *tensors);
  alloy_error *e = (!values || !bound || !rts || !tensors) ? oom() : NULL;
  if (!e) e = program_bind_symbols(g, inputs, nin, values, bound, nsyms);
  /* Sizes of every tensor: inputs as given, outputs evaluated. */
  for (int k = 0; k < nin + nout && !e; k++) {
    const alloy_value *v = k < nin ? alloy_graph_input(g, k) : alloy_graph_output(g, k - nin);
    int rank = alloy_value_rank(v);
    run_tensor *t = &rts[k];
    bool data_dependent = false;
    for (int d = 0; d < rank && !e; d++) {
      if (k < nin) {
        t->sizes[d] = inputs[k].sizes[d];
      } else {
        alloy_error *de = alloy_dim_eval(st, alloy_value_shape(v)[d], values, bound, nsyms, &t->sizes[d]);
        /* A size no input binds is known only after running: the plugin
         * allocates that output (alloy_tensor with buffer NULL). */
        if (de) data_dependent = true, t->sizes[d] = -1;
        alloy_error_free(de);
      }
    }
    if (e) break;
    tensors[k] = (alloy_tensor){.struct_size = sizeof(alloy_tensor), .buffer = NULL, .offset = 0,
                                .dtype = alloy_value_dtype(v), .rank = rank, .sizes = t->sizes,
                                .strides = t->strides};
    if (data_dependent) continue;
    contiguous_strides(t->sizes, rank, t->strides);
    t->bytes = (uint64_t)numel_of(t->sizes, rank) * alloy_dtype_size(alloy_value_dtype(v));
    if ((e = api->buffer_allocate(be, 0, t->bytes ? t->bytes : 1, &t->buf))) {
      e = alloy_error_wrap(e, "backend %s: buffer_allocate", p->be->name);
      break;
    }
    if (k < nin && t->bytes &&
        (e = api->buffer_copy_from_host(be, t->buf, 0, inputs[k].data, t->bytes, NULL, NULL)))
      e = alloy_error_wrap(e, "backend %s: copying input %d in", p->be->name, k);
    tensors[k].buffer = t->buf;
  }
  /* Symbols no input bound (data-dependent sizes) travel as INT64_MIN. */
  for (int i = 0; i < nsyms && !e; i++)
    if (!bound[i]) values[i] = INT64_MIN;
  if (!e) {
    alloy_event *done = NULL;
    alloy_execute_args args = {.struct_size = sizeof args, .inputs = tensors, .num_inputs = nin,
                               .outputs = tensors + nin, .num_outputs = nout, .symbols = values,
                               .num_symbols = nsyms, .queue = NULL, .done = &done, .ext = NULL};
    e = api->execute(be, c->exe, &args);
    if (!e && done) e = api->event_wait(be, done);
    if (done) api->event_release(be, done);
    if (e) e = alloy_error_wrap(e, "backend %s: execute", p->be->name);
  }
  /* Outputs the plugin allocated: the host owns them now. */
  for (int k = nin; k < nin + nout; k++)
    if (!rts[k].buf && tensors[k].buffer) {
      rts[k].buf = tensors[k].buffer;
      if (!e && !alloy_tensor_contiguous(&tensors[k]))
        e = alloy_error_new(ALLOY_ERR_UNSUPPORTED, "backend %s: output %d came back non-contiguous",
                            p->be->name, k - nin);
      rts[k].bytes = (uint64_t)numel_of(rts[k].sizes, tensors[k].rank) *
                     alloy_dtype_size(tensors[k].dtype);
    }
  for (int k = nin; k < nin + nout && !e; k++)
    if (!rts[k].buf)
      e = alloy_error_new(ALLOY_ERR_INTERNAL, "backend %s: output %d has data-dependent sizes and "
                          "the plugin did not allocate it", p->be->name, k - nin);
  if (!e) free_outputs(p);
  for (int k = 0; k < nout && !e; k++) {
    run_tensor *t = &rts[nin + k];
    const alloy_value *v = alloy_graph_output(g, k);
    uint64_t offset = tensors[nin + k].offset;
    p->out_data[k] = malloc(t->bytes ? t->bytes : 1);
    if (!p->out_data[k]) {
      e = oom();
      break;
    }
    if (t->bytes && (e = api->buffer_copy_to_host(be, p->out_data[k], t->buf, offset, t->bytes, NULL, NULL))) {
      e = alloy_error_wrap(e, "backend %s: copying output %d out", p->be->name, k);
      break;
    }
    int64_t *sizes = &p->out_sizes[k * ALLOY_MAX_RANK];
    memcpy(sizes, t->sizes, sizeof *sizes * ALLOY_MAX_RANK);
    if (k >= num_outputs) continue;
    outputs[k].dtype = alloy_value_dtype(v);
    outputs[k].rank = alloy_value_rank(v);
    outputs[k].sizes = sizes;
    outputs[k].data = p->out_data[k];
  }
  for (int k = 0; k < nin + nout && rts; k++)
    if (rts[k].buf) api->buffer_release(be, rts[k].buf);
  free(values);
  free(bound);
  free(rts);
  free(tensors);
  return e;
}
