/*
 * sdk/src/host.c: the host function table (alloy_host_api). It is the only
 * way a plugin sees Alloy: read-only views of graphs, nodes, values and
 * arguments over the IR's internal structures, plus errors, logging, memory,
 * claims (single nodes, groups, reasons) and tracing, whose buffer lives in
 * trace.c. Every entry is a thin, thread-safe reader: graphs handed to
 * plugins are not mutated while a plugin holds them. The claims entries fill
 * struct alloy_claims of host.h; claims.c and program.c ask for claims.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdk/src/host.h"

_Static_assert((int)ALLOY_ARG_TYPE_LIST == (int)ALLOY_ARG_LIST &&
                   (int)ALLOY_ARG_TYPE_VALUE == (int)ALLOY_ARG_VALUE &&
                   (int)ALLOY_ARG_TYPE_MEMORY_FORMAT == (int)ALLOY_ARG_MEMORY_FORMAT,
               "the ABI's argument types mirror alloy_arg_kind");

/* ---- errors plugins make --------------------------------------------------
 * Every error host->error_new makes is remembered until the host takes it
 * back (host_error_take, when a plugin returns it) or the plugin frees it
 * (host->error_free): so a returned pointer that is not one of them is
 * known to be bogus before anything reads it. Few are outstanding at once
 * (a plugin returns its errors at once), so a small array does. */
static pthread_mutex_t made_lock = PTHREAD_MUTEX_INITIALIZER;
static const alloy_error **made;
static size_t nmade, cap_made;

static void made_add(const alloy_error *e) {
  if (alloy_error_is_static(e)) return;
  pthread_mutex_lock(&made_lock);
  if (nmade == cap_made) {
    size_t cap = cap_made ? 2 * cap_made : 64;
    const alloy_error **grown = realloc(made, sizeof *grown * cap);
    if (grown) made = grown, cap_made = cap;
  }
  /* Out of memory: unrecorded, so the host later refuses this error (and
   * leaks it) rather than reading a pointer it cannot vouch for. */
  if (nmade < cap_made) made[nmade++] = e;
  pthread_mutex_unlock(&made_lock);
}

static bool made_remove(const alloy_error *e) {
  if (alloy_error_is_static(e)) return true;
  pthread_mutex_lock(&made_lock);
  bool found = false;
  for (size_t i = nmade; i-- > 0 && !found;)
    if (made[i] == e) {
      made[i] = made[--nmade];
      found = true;
    }
  pthread_mutex_unlock(&made_lock);
  return found;
}

static alloy_error *host_error_new(alloy_error_code code, const char *message) {
  alloy_error *e = alloy_error_new(code, "%s", message ? message : "(no message)");
  made_add(e);
  return e;
}

static void host_error_free(alloy_error *e) {
  if (!e) return;
  made_remove(e);
  alloy_error_free(e);
}

alloy_error *host_error_take(alloy_error *e, const char *backend, const char *entry) {
  if (!e || made_remove(e)) return e;
  return alloy_error_new(ALLOY_ERR_INTERNAL, "backend %s: %s returned an error the host did not "
                         "make (%p): not read (a plugin bug)", backend ? backend : "?",
                         entry ? entry : "?", (void *)e);
}

static _Thread_local char last_log[512];

const char *alloy_host_last_log(void) { return last_log[0] ? last_log : NULL; }
void alloy_host_clear_last_log(void) { last_log[0] = '\0'; }

/* Plugin logs go to stderr only when ALLOY_LOG asks for them (a level
 * number, 0 = debug); a library does not print on its own. Warnings and
 * errors are remembered for the loader's refusal messages. */
static void host_log(alloy_log_level level, const char *plugin, const char *message) {
  static const char *names[] = {"debug", "info", "warning", "error"};
  if (level >= ALLOY_LOG_WARNING)
    snprintf(last_log, sizeof last_log, "%s", message ? message : "");
  const char *env = getenv("ALLOY_LOG");
  if (env && (int)level >= atoi(env))
    fprintf(stderr, "alloy [%s] %s: %s\n", (unsigned)level < 4 ? names[level] : "?",
            plugin ? plugin : "?", message ? message : "");
}

/* The lowest level at which a log() call has an effect: $ALLOY_LOG as
 * host_log reads it (atoi, so "" and text read as 0, debug), but never
 * above warning, because warnings and errors are kept whether or not they
 * are printed (the loader quotes them when an entry refuses to load).
 * Without $ALLOY_LOG: warning. */
static alloy_log_level host_log_level(void) {
  const char *env = getenv("ALLOY_LOG");
  int level = env ? atoi(env) : ALLOY_LOG_WARNING;
  if (level <= ALLOY_LOG_DEBUG) return ALLOY_LOG_DEBUG;
  return level >= ALLOY_LOG_WARNING ? ALLOY_LOG_WARNING : (alloy_log_level)level;
}

static void *host_alloc(size_t size) {
  return aligned_alloc(64, (size + 63) & ~(size_t)63);
}

/* ---- graphs --------------------------------------------------------- */

static int graph_num_nodes(const alloy_graph *g) { return alloy_graph_num_nodes(g); }
static const alloy_node *graph_node(const alloy_graph *g, int i) { return alloy_graph_node(g, i); }
static int graph_num_inputs(const alloy_graph *g) { return alloy_graph_num_inputs(g); }
static const alloy_value *graph_input(const alloy_graph *g, int i) { return alloy_graph_input(g, i); }
static int graph_num_outputs(const alloy_graph *g) { return alloy_graph_num_outputs(g); }
static const alloy_value *graph_output(const alloy_graph *g, int i) { return alloy_graph_output(g, i); }

static const char *node_op_name(const alloy_node *n) { return n->op->name; }
static int node_op_id(const alloy_node *n) { return n->op->id; }
static int node_num_args(const alloy_node *n) { return n->op->schema->nargs; }
static const alloy_arg *node_arg(const alloy_node *n, int i) { return alloy_node_arg(n, i); }
static const char *node_arg_name(const alloy_node *n, int i) {
  return i >= 0 && i < n->op->schema->nargs ? n->op->schema->args[i].name : NULL;
}
static int node_num_outputs(const alloy_node *n) { return n->nout; }
static const alloy_value *node_output(const alloy_node *n, int i) { return alloy_node_output(n, i); }

/* Node ids increase with position in g->nodes (ir/graph.c appends nodes
 * and dce keeps their order), so the index is a binary search over ids; the
 * node found must be n itself (another graph's node may share its id). */
static int node_index(const alloy_graph *g, const alloy_node *n) {
  if (!g || !n) return -1;
  int lo = 0, hi = g->nnodes - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    int id = g->nodes[mid]->id;
    if (id == n->id) return g->nodes[mid] == n ? mid : -1;
    if (id < n->id) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

static int value_kind(const alloy_value *v) { return (int)v->kind; }
static const char *value_name(const alloy_value *v) { return v->name; }
static alloy_dtype value_dtype(const alloy_value *v) { return v->dtype; }
static int value_rank(const alloy_value *v) { return v->rank; }

static const alloy_dim *value_dim(const alloy_value *v, int d) {
  return d >= 0 && d < v->rank ? &v->shape[d] : NULL;
}

static int value_size(const alloy_value *v, int d, int64_t *size) {
  const alloy_dim *dim = value_dim(v, d);
  if (!dim || !alloy_dim_is_const(*dim)) return 0;
  *size = dim->value;
  return 1;
}

static size_t value_size_text(const alloy_value *v, int d, char *buf, size_t cap) {
  const alloy_dim *dim = value_dim(v, d);
  if (!dim) {
    if (cap) buf[0] = '\0';
    return 0;
  }
  return alloy_dim_print(*dim, buf, cap);
}

static void value_size_range(const alloy_value *v, int d, int64_t *lo, int64_t *hi) {
  const alloy_dim *dim = value_dim(v, d);
  if (!dim) {
    *lo = *hi = 0;
    return;
  }
  alloy_dim_range(*dim, lo, hi);
}

/* *output_index is -1 for a graph input. */
static const alloy_node *value_producer(const alloy_value *v, int *output_index) {
  if (output_index) *output_index = v->producer ? v->output_index : -1;
  return v->producer;
}

/* The IR keeps users once each, sorted by node id, which is graph order. */
static int value_num_users(const alloy_value *v) { return v->nusers; }
static const alloy_node *value_user(const alloy_value *v, int i) {
  return i >= 0 && i < v->nusers ? v->users[i] : NULL;
}

static int value_stride(const alloy_value *v, int d, int64_t *stride) {
  const alloy_dim *dim = v->strides ? value_dim(v, d) : NULL;
  if (!dim || !alloy_dim_is_const(v->strides[d])) return 0;
  *stride = v->strides[d].value;
  return 1;
}

static int value_size_eval(const alloy_value *v, int d, const int64_t *symbols,
                           int num_symbols, int64_t *out) {
  const alloy_dim *dim = v->kind == ALLOY_VALUE_INT ? &v->int_value : value_dim(v, d);
  if (!dim) return 0;
  /* INT64_MIN marks a symbol not bound yet (a data-dependent size). */
  bool small[64] = {false}, *bound = num_symbols <= 64 ? small : malloc((size_t)num_symbols);
  if (!bound) return 0;
  for (int i = 0; i < num_symbols; i++) bound[i] = symbols[i] != INT64_MIN;
  alloy_error *e = alloy_dim_eval(NULL, *dim, symbols, bound, num_symbols, out);
  if (bound != small) free(bound);
  alloy_error_free(e);
  return e == NULL;
}

/* ---- arguments ------------------------------------------------------ */

static alloy_arg_type arg_type(const alloy_arg *a) { return (alloy_arg_type)a->kind; }

static int arg_int(const alloy_arg *a, int64_t *out) {
  if (a->kind == ALLOY_ARG_INT && alloy_dim_is_const(a->u.i)) return *out = a->u.i.value, 1;
  if (a->kind == ALLOY_ARG_BOOL) return *out = a->u.b, 1;
  return 0;
}

static int arg_float(const alloy_arg *a, double *out) {
  if (a->kind == ALLOY_ARG_FLOAT) return *out = a->u.f, 1;
  if (a->kind == ALLOY_ARG_INT && alloy_dim_is_const(a->u.i)) return *out = (double)a->u.i.value, 1;
  if (a->kind == ALLOY_ARG_BOOL) return *out = a->u.b, 1;
  return 0;
}

static int arg_bool(const alloy_arg *a, int *out) {
  if (a->kind == ALLOY_ARG_BOOL) return *out = a->u.b, 1;
  return 0;
}

static const char *arg_str(const alloy_arg *a) {
  return a->kind == ALLOY_ARG_STR ? a->u.s : NULL;
}

static int arg_dtype(const alloy_arg *a, alloy_dtype *out) {
  if (a->kind == ALLOY_ARG_DTYPE) return *out = a->u.dtype, 1;
  return 0;
}

static int arg_enum(const alloy_arg *a, int *value, int *index) {
  switch (a->kind) {
    case ALLOY_ARG_LAYOUT: *value = (int)a->u.layout; break;
    case ALLOY_ARG_MEMORY_FORMAT: *value = (int)a->u.memory_format; break;
    case ALLOY_ARG_DEVICE:
      *value = (int)a->u.device.type;
      if (index) *index = a->u.device.index;
      break;
    default: return 0;
  }
  return 1;
}

static const alloy_value *arg_value(const alloy_arg *a) {
  return a->kind == ALLOY_ARG_VALUE ? a->u.value : NULL;
}

static int arg_list_size(const alloy_arg *a) {
  return a->kind == ALLOY_ARG_LIST ? a->u.list.n : 0;
}

static const alloy_arg *arg_list_item(const alloy_arg *a, int k) {
  return a->kind == ALLOY_ARG_LIST && k >= 0 && k < a->u.list.n ? &a->u.list.items[k] : NULL;
}

/* ---- ops and graph inputs ------------------------------------------- */

static int op_find(const char *name) {
  const alloy_op *op = name ? alloy_op_find(name) : NULL;
  return op ? op->id : -1;
}

_Static_assert((int)ALLOY_INPUT_KIND_USER == (int)ALLOY_INPUT_USER &&
                   (int)ALLOY_INPUT_KIND_PARAMETER == (int)ALLOY_INPUT_PARAMETER &&
                   (int)ALLOY_INPUT_KIND_BUFFER == (int)ALLOY_INPUT_BUFFER &&
                   (int)ALLOY_INPUT_KIND_CONSTANT == (int)ALLOY_INPUT_CONSTANT,
               "the ABI's input kinds mirror alloy_input_role");

/* An input extract made for a value of another partition is intermediate,
 * whatever its role says; out of range: user (0), like the other readers. */
static alloy_input_kind graph_input_kind(const alloy_graph *g, int i) {
  if (alloy_graph_input_is_intermediate(g, i)) return ALLOY_INPUT_KIND_INTERMEDIATE;
  return (alloy_input_kind)alloy_graph_input_role(g, i, NULL);
}

/* Data is shown for resident inputs only (parameter, buffer, constant):
 * a user input's or an intermediate's contents change from run to run. */
static const void *graph_input_data(const alloy_graph *g, int i, uint64_t *bytes) {
  alloy_input_kind kind = graph_input_kind(g, i);
  bool resident = kind == ALLOY_INPUT_KIND_PARAMETER || kind == ALLOY_INPUT_KIND_BUFFER ||
                  kind == ALLOY_INPUT_KIND_CONSTANT;
  uint64_t n = 0;
  const void *data = resident ? alloy_graph_input_data(g, i, &n) : NULL;
  if (bytes) *bytes = data ? n : 0;
  return data;
}

/* ---- claims ----------------------------------------------------------- */

static void claims_add(alloy_claims *c, int node_index, double cost) {
  if (!c || node_index < 0 || node_index >= c->num_nodes) return;
  c->claimed[node_index] = true;
  c->cost[node_index] = cost;
}

static int int_cmp(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* The group's members: the indices in range, sorted, duplicates dropped.
 * A group left empty, or memory running out, adds nothing (the entry
 * cannot report an error; the nodes are then simply not claimed). */
static void claims_add_group(alloy_claims *c, const int *idx, int n, double cost) {
  if (!c || !idx || n <= 0) return;
  int *nodes = malloc(sizeof *nodes * (size_t)n);
  if (!nodes) return;
  int k = 0;
  for (int i = 0; i < n; i++)
    if (idx[i] >= 0 && idx[i] < c->num_nodes) nodes[k++] = idx[i];
  qsort(nodes, (size_t)k, sizeof *nodes, int_cmp);
  int m = 0;
  for (int i = 0; i < k; i++)
    if (m == 0 || nodes[m - 1] != nodes[i]) nodes[m++] = nodes[i];
  if (m == 0) {
    free(nodes);
    return;
  }
  if (c->ngroups == c->cap_groups) {
    int cap = c->cap_groups ? 2 * c->cap_groups : 4;
    claims_group *grown = realloc(c->groups, sizeof *grown * (size_t)cap);
    if (!grown) {
      free(nodes);
      return;
    }
    c->groups = grown;
    c->cap_groups = cap;
  }
  c->groups[c->ngroups++] = (claims_group){.nodes = nodes, .n = m, .cost = cost};
  /* A member not claimed alone is marked claimed at cost 0 (group-only);
   * one already claimed alone keeps its own claim and cost. */
  for (int i = 0; i < m; i++)
    if (!c->claimed[nodes[i]]) {
      c->claimed[nodes[i]] = true;
      c->cost[nodes[i]] = 0;
    }
}

/* A later reason replaces an earlier one; NULL clears it. */
static void claims_reject(alloy_claims *c, int node_index, const char *reason) {
  if (!c || node_index < 0 || node_index >= c->num_nodes) return;
  if (!c->reason) {
    if (!reason) return;
    c->reason = calloc((size_t)c->num_nodes, sizeof *c->reason);
    if (!c->reason) return;
  }
  char *copy = reason ? strdup(reason) : NULL;
  if (reason && !copy) return;
  free(c->reason[node_index]);
  c->reason[node_index] = copy;
}

void claims_release(alloy_claims *c) {
  if (!c) return;
  for (int g = 0; g < c->ngroups; g++) free(c->groups[g].nodes);
  free(c->groups);
  c->groups = NULL;
  c->ngroups = c->cap_groups = 0;
  for (int i = 0; c->reason && i < c->num_nodes; i++) free(c->reason[i]);
  free(c->reason);
  c->reason = NULL;
}

/* ---- tracing (trace.c) ------------------------------------------------- */

static int host_trace_enabled(void) { return trace_on(); }

static const alloy_host_api host_table = {
    .struct_size = ALLOY_HOST_API_STRUCT_SIZE,
    .abi_major = ALLOY_ABI_MAJOR,
    .abi_minor = ALLOY_ABI_MINOR,
    .error_new = host_error_new,
    .error_free = host_error_free,
    .log = host_log,
    .error_message = alloy_error_message,
    .alloc = host_alloc,
    .free = free,
    .graph_num_nodes = graph_num_nodes,
    .graph_node = graph_node,
    .graph_num_inputs = graph_num_inputs,
    .graph_input = graph_input,
    .graph_num_outputs = graph_num_outputs,
    .graph_output = graph_output,
    .node_op_name = node_op_name,
    .node_op_id = node_op_id,
    .node_num_args = node_num_args,
    .node_arg = node_arg,
    .node_arg_name = node_arg_name,
    .node_num_outputs = node_num_outputs,
    .node_output = node_output,
    .value_kind = value_kind,
    .value_name = value_name,
    .value_dtype = value_dtype,
    .value_rank = value_rank,
    .value_size = value_size,
    .value_size_text = value_size_text,
    .value_size_range = value_size_range,
    .value_size_eval = value_size_eval,
    .arg_type = arg_type,
    .arg_int = arg_int,
    .arg_float = arg_float,
    .arg_bool = arg_bool,
    .arg_str = arg_str,
    .arg_dtype = arg_dtype,
    .arg_enum = arg_enum,
    .arg_value = arg_value,
    .arg_list_size = arg_list_size,
    .arg_list_item = arg_list_item,
    .claims_add = claims_add,
    /* since 1.2 */
    .log_level = host_log_level,
    .node_index = node_index,
    .value_producer = value_producer,
    .value_num_users = value_num_users,
    .value_user = value_user,
    .value_stride = value_stride,
    .op_find = op_find,
    .graph_input_kind = graph_input_kind,
    .graph_input_data = graph_input_data,
    .claims_add_group = claims_add_group,
    .claims_reject = claims_reject,
    .clock_ns = trace_clock_ns,
    .trace_enabled = host_trace_enabled,
    .trace_range = trace_range, /* the plugin's name is the process */
    .error_code = alloy_error_code_of,
};

const alloy_host_api *alloy_host_table(void) { return &host_table; }
