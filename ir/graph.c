/*
 * ir/graph.c: the graph, its builder and the structural passes (dead-code
 * elimination, use replacement, clone, subgraph extraction, verification),
 * and the graph signature with the runtime attachments of inputs (data,
 * "intermediate"; ir/ir.h), which every copy keeps.
 *
 * Nodes are appended in topological order: a node may only use values that
 * already exist. Every node's arguments are normalized to its schema when it
 * is added, and its outputs' types come from the op's shape function, so a
 * graph is typed at all times. Memory comes from the graph's arena.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/graph_internal.h"
#include "ir/meta.h"

static alloy_error *oom(void) {
  return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
}

/* Grows *arr (of *cap elements of size elem) to hold at least need. */
static bool grow(void **arr, int *cap, int need, size_t elem) {
  if (need <= *cap) return true;
  int ncap = *cap ? *cap * 2 : 8;
  while (ncap < need) ncap *= 2;
  void *p = realloc(*arr, elem * (size_t)ncap);
  if (!p) return false;
  *arr = p;
  *cap = ncap;
  return true;
}

/* --- value names ------------------------------------------------------ */

alloy_value *alloy_graph_find_value(const alloy_graph *g, const char *name) {
  if (!g->name_slots) return NULL;
  size_t mask = (size_t)g->name_cap - 1;
  for (size_t i = alloy_hash_str(name) & mask; g->name_slots[i]; i = (i + 1) & mask)
    if (!strcmp(g->name_slots[i]->name, name)) return g->name_slots[i];
  return NULL;
}

static bool names_insert(alloy_graph *g, alloy_value *v) {
  if ((g->name_count + 1) * 2 > g->name_cap) {
    int ncap = g->name_cap ? g->name_cap * 2 : 64;
    alloy_value **slots = calloc((size_t)ncap, sizeof *slots);
    if (!slots) return false;
    for (int i = 0; i < g->name_cap; i++) {
      alloy_value *w = g->name_slots[i];
      if (!w) continue;
      size_t j = alloy_hash_str(w->name) & (size_t)(ncap - 1);
      while (slots[j]) j = (j + 1) & (size_t)(ncap - 1);
      slots[j] = w;
    }
    free(g->name_slots);
    g->name_slots = slots;
    g->name_cap = ncap;
  }
  size_t j = alloy_hash_str(v->name) & (size_t)(g->name_cap - 1);
  while (g->name_slots[j]) j = (j + 1) & (size_t)(g->name_cap - 1);
  g->name_slots[j] = v;
  g->name_count++;
  return true;
}

/* Creates a value, named `name` or, when NULL or taken by an automatic
 * name, "v<id>". An explicit name that is taken is an error. */
static alloy_error *value_new(alloy_graph *g, const char *name,
                              alloy_value **out) {
  char auto_name[32];
  if (!name) {
    int k = g->nvalues;
    do snprintf(auto_name, sizeof auto_name, "v%d", k++);
    while (alloy_graph_find_value(g, auto_name));
    name = auto_name;
  } else if (alloy_graph_find_value(g, name)) {
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                           "value name '%s' is already used", name);
  }
  alloy_value *v = alloy_arena_alloc(&g->arena, sizeof *v);
  if (!v || !(v->name = alloy_arena_strdup(&g->arena, name))) return oom();
  if (!grow((void **)&g->values, &g->cap_values, g->nvalues + 1, sizeof *g->values) ||
      !names_insert(g, v))
    return oom();
  v->id = g->nvalues;
  g->values[g->nvalues++] = v;
  *out = v;
  return NULL;
}

static alloy_error *value_set_type(alloy_graph *g, alloy_value *v,
                                   alloy_value_kind kind, alloy_dtype dtype,
                                   const alloy_dim *shape, int rank,
                                   const alloy_dim *strides,
                                   alloy_dim int_value) {
  if (rank < 0 || rank > ALLOY_MAX_RANK)
    return alloy_error_new(ALLOY_ERR_UNSUPPORTED, "rank %d exceeds %d", rank,
                           ALLOY_MAX_RANK);
  v->kind = kind;
  v->dtype = dtype;
  v->rank = rank;
  v->int_value = int_value;
  /* shape is never NULL, even for rank 0: code may memcpy rank dims from it. */
  v->shape = alloy_arena_alloc(&g->arena, sizeof *v->shape * (size_t)(rank ? rank : 1));
  if (!v->shape) return oom();
  if (rank) {
    memcpy(v->shape, shape, sizeof *v->shape * (size_t)rank);
    if (strides) {
      v->strides = alloy_arena_alloc(&g->arena, sizeof *v->strides * (size_t)rank);
      if (!v->strides) return oom();
      memcpy(v->strides, strides, sizeof *v->strides * (size_t)rank);
    }
  }
  return NULL;
}

/* Users stay in graph order: node ids increase with position in
 * g->nodes (nodes are only appended, and dce keeps the order), so the list
 * is kept sorted by id. A node being appended has the largest id so far and
 * goes at the end; only replace_uses inserts elsewhere. */
static bool value_add_user(alloy_value *v, alloy_node *n) {
  int at = v->nusers;
  while (at > 0 && v->users[at - 1]->id >= n->id) {
    if (v->users[at - 1] == n) return true;
    at--;
  }
  if (!grow((void **)&v->users, &v->cap_users, v->nusers + 1, sizeof *v->users))
    return false;
  memmove(&v->users[at + 1], &v->users[at], sizeof *v->users * (size_t)(v->nusers - at));
  v->users[at] = n;
  v->nusers++;
  return true;
}

static void value_remove_user(alloy_value *v, alloy_node *n) {
  for (int i = 0; i < v->nusers; i++)
    if (v->users[i] == n) {
      memmove(&v->users[i], &v->users[i + 1], sizeof *v->users * (size_t)(v->nusers - i - 1));
      v->nusers--;
      return;
    }
}

/* --- graph ------------------------------------------------------------ */

alloy_graph *alloy_graph_new(void) {
  alloy_graph *g = calloc(1, sizeof *g);
  if (!g) return NULL;
  if (!(g->symtab = alloy_symtab_new())) {
    free(g);
    return NULL;
  }
  return g;
}

void alloy_graph_free(alloy_graph *g) {
  if (!g) return;
  for (int i = 0; i < g->nvalues; i++) free(g->values[i]->users);
  free(g->values);
  free(g->nodes);
  free(g->inputs);
  free(g->outputs);
  free(g->in_roles);
  free(g->out_roles);
  free(g->name_slots);
  alloy_symtab_free(g->symtab);
  alloy_arena_free(&g->arena);
  free(g);
}

alloy_symtab *alloy_graph_symtab(alloy_graph *g) { return g->symtab; }

alloy_error *alloy_graph_add_input(alloy_graph *g, const char *name,
                                   const alloy_value_type *type,
                                   alloy_value **out) {
  alloy_value *v;
  alloy_error *e = value_new(g, name, &v);
  if (!e) e = value_set_type(g, v, type->kind, type->dtype, type->shape,
                             type->kind == ALLOY_VALUE_TENSOR ? type->rank : 0,
                             type->strides, type->int_value);
  if (e) return e;
  if ((unsigned)type->dtype >= ALLOY_DTYPE_COUNT)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "input %s: invalid dtype %d",
                           v->name, (int)type->dtype);
  v->device = type->device;
  int cap = g->cap_inputs;
  if (!grow((void **)&g->inputs, &g->cap_inputs, g->ninputs + 1, sizeof *g->inputs))
    return oom();
  if (g->cap_inputs != cap) {
    alloy_graph_role *r = realloc(g->in_roles, sizeof *r * (size_t)g->cap_inputs);
    if (!r) return oom();
    g->in_roles = r;
  }
  g->in_roles[g->ninputs] = (alloy_graph_role){.role = ALLOY_INPUT_USER, .name = NULL};
  g->inputs[g->ninputs++] = v;
  if (out) *out = v;
  return NULL;
}

/* --- argument checking ------------------------------------------------ */

static const char *arg_kind_names[] = {
    "None", "a value", "int", "float", "bool", "str", "ScalarType",
    "Layout", "Device", "MemoryFormat", "list",
};

static bool value_in_graph(const alloy_graph *g, const alloy_value *v) {
  return v && v->id >= 0 && v->id < g->nvalues && g->values[v->id] == v;
}

/* Does a (non-list) argument fit the element type of t? */
static bool scalar_fits(const alloy_graph *g, const alloy_arg *a,
                        alloy_type_kind kind, bool none_ok) {
  if (a->kind == ALLOY_ARG_NONE) return none_ok;
  if (a->kind == ALLOY_ARG_VALUE) {
    if (!value_in_graph(g, a->u.value)) return false;
    alloy_value_kind vk = a->u.value->kind;
    switch (kind) {
      case ALLOY_TYPE_TENSOR: return vk == ALLOY_VALUE_TENSOR;
      case ALLOY_TYPE_INT:
      case ALLOY_TYPE_SYMINT: return vk == ALLOY_VALUE_INT;
      case ALLOY_TYPE_FLOAT:
      case ALLOY_TYPE_SYMFLOAT: return vk == ALLOY_VALUE_FLOAT || vk == ALLOY_VALUE_INT;
      case ALLOY_TYPE_BOOL:
      case ALLOY_TYPE_SYMBOOL: return vk == ALLOY_VALUE_BOOL;
      case ALLOY_TYPE_SCALAR: return vk != ALLOY_VALUE_TENSOR;
      case ALLOY_TYPE_ANY: return true;
      default: return false;
    }
  }
  switch (kind) {
    /* A Python number where a Tensor is expected is a "wrapped number", as
     * in FX graphs: it promotes like a scalar (see meta_promo_operand). */
    case ALLOY_TYPE_TENSOR:
      return a->kind == ALLOY_ARG_INT || a->kind == ALLOY_ARG_FLOAT || a->kind == ALLOY_ARG_BOOL;
    case ALLOY_TYPE_INT:
    case ALLOY_TYPE_SYMINT: return a->kind == ALLOY_ARG_INT;
    case ALLOY_TYPE_FLOAT:
    case ALLOY_TYPE_SYMFLOAT: return a->kind == ALLOY_ARG_FLOAT || a->kind == ALLOY_ARG_INT;
    case ALLOY_TYPE_BOOL:
    case ALLOY_TYPE_SYMBOOL: return a->kind == ALLOY_ARG_BOOL;
    case ALLOY_TYPE_SCALAR:
      return a->kind == ALLOY_ARG_INT || a->kind == ALLOY_ARG_FLOAT || a->kind == ALLOY_ARG_BOOL;
    case ALLOY_TYPE_SCALAR_TYPE: return a->kind == ALLOY_ARG_DTYPE;
    case ALLOY_TYPE_STR: return a->kind == ALLOY_ARG_STR;
    case ALLOY_TYPE_LAYOUT: return a->kind == ALLOY_ARG_LAYOUT;
    case ALLOY_TYPE_DEVICE: return a->kind == ALLOY_ARG_DEVICE;
    case ALLOY_TYPE_MEMORY_FORMAT: return a->kind == ALLOY_ARG_MEMORY_FORMAT;
    case ALLOY_TYPE_ANY: return true;
    default: return false; /* Generator, Dimname, Storage: only None */
  }
}

static alloy_error *check_arg(const alloy_graph *g, const alloy_op *op,
                              const alloy_schema_arg *sa, const alloy_arg *a) {
  bool fits;
  if (a->kind == ALLOY_ARG_NONE) {
    fits = sa->type.optional;
  } else if (sa->type.list) {
    if (a->kind == ALLOY_ARG_LIST) {
      fits = true;
      for (int i = 0; i < a->u.list.n && fits; i++)
        fits = scalar_fits(g, &a->u.list.items[i], sa->type.kind, sa->type.elem_optional);
    } else {
      /* int[N] accepts one int, as PyTorch does. */
      fits = sa->type.list_len > 0 && scalar_fits(g, a, sa->type.kind, false) &&
             a->kind != ALLOY_ARG_VALUE;
    }
  } else {
    fits = scalar_fits(g, a, sa->type.kind, false);
  }
  if (fits) return NULL;
  char type[48];
  alloy_type_print(sa->type, type, sizeof type);
  const char *got = (unsigned)a->kind <= ALLOY_ARG_LIST ? arg_kind_names[a->kind] : "?";
  if (a->kind == ALLOY_ARG_VALUE && !value_in_graph(g, a->u.value))
    got = "a value of another graph";
  else if (a->kind == ALLOY_ARG_VALUE)
    got = a->u.value->kind == ALLOY_VALUE_TENSOR ? "a tensor" : "a scalar value";
  return alloy_error_new(ALLOY_ERR_TYPE, "%s: argument '%s' expects %s, got %s",
                         op->name, sa->name, type, got);
}

/* Matches positional and named arguments to the schema, fills defaults and
 * type-checks; norm receives op->schema->nargs shallow copies. */
static alloy_error *normalize_args(const alloy_graph *g, const alloy_op *op,
                                   const alloy_arg *args, int nargs,
                                   const char *const *kwnames,
                                   const alloy_arg *kwargs, int nkw,
                                   alloy_arg *norm) {
  const alloy_schema *s = op->schema;
  bool set[256] = {false};
  if (s->nargs > 256)
    return alloy_error_new(ALLOY_ERR_UNSUPPORTED, "%s: too many arguments", op->name);
  if (nargs > s->nargs)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                           "%s: takes %d arguments, %d given", op->name,
                           s->nargs, nargs);
  for (int i = 0; i < nargs; i++) {
    norm[i] = args[i];
    set[i] = true;
  }
  for (int k = 0; k < nkw; k++) {
    int i = alloy_schema_find_arg(s, kwnames[k]);
    if (i < 0)
      return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                             "%s: no argument named '%s'", op->name, kwnames[k]);
    if (set[i])
      return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                             "%s: argument '%s' given twice", op->name, kwnames[k]);
    norm[i] = kwargs[k];
    set[i] = true;
  }
  for (int i = 0; i < s->nargs; i++) {
    if (!set[i]) {
      if (!s->args[i].has_default)
        return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                               "%s: missing argument '%s'", op->name, s->args[i].name);
      norm[i] = s->args[i].default_value;
    }
    alloy_error *e = check_arg(g, op, &s->args[i], &norm[i]);
    if (e) return e;
  }
  return NULL;
}

/* --- nodes ------------------------------------------------------------ */

typedef struct {
  alloy_graph *g;
  alloy_node *n;
  bool ok;
} user_ctx;

static void add_user_fn(alloy_value *v, void *ctx) {
  user_ctx *u = ctx;
  if (!value_add_user(v, u->n)) u->ok = false;
}

static void remove_user_fn(alloy_value *v, void *ctx) {
  value_remove_user(v, ((user_ctx *)ctx)->n);
}

/* Appends a node whose arguments are already normalized and checked and
 * whose outputs' types are known; args are deep-copied. */
alloy_error *alloy_graph_append(alloy_graph *g, const alloy_op *op,
                                const alloy_arg *args,
                                const alloy_meta_out *outs, int nout,
                                const char *name, int unbacked_first,
                                alloy_node **out) {
  alloy_node *n = alloy_arena_alloc(&g->arena, sizeof *n);
  if (!n) return oom();
  int na = op->schema->nargs;
  n->op = op;
  n->id = g->next_node_id++;
  n->unbacked_first = unbacked_first;
  n->args = alloy_arena_alloc(&g->arena, sizeof *n->args * (size_t)(na ? na : 1));
  n->outs = alloy_arena_alloc(&g->arena, sizeof *n->outs * (size_t)(nout ? nout : 1));
  if (!n->args || !n->outs) return oom();
  for (int i = 0; i < na; i++) {
    alloy_error *e = alloy_arg_copy(&g->arena, &args[i], &n->args[i]);
    if (e) return e;
  }
  for (int k = 0; k < nout; k++) {
    char buf[256];
    const char *vname = NULL;
    if (name && k == 0) vname = name;
    else if (name) snprintf(buf, sizeof buf, "%s_%d", name, k), vname = buf;
    alloy_value *v;
    alloy_error *e = value_new(g, vname, &v);
    if (!e) e = value_set_type(g, v, outs[k].kind, outs[k].dtype, outs[k].shape,
                               outs[k].kind == ALLOY_VALUE_TENSOR ? outs[k].rank : 0,
                               NULL, outs[k].int_value);
    if (e) return e;
    v->producer = n;
    v->output_index = k;
    n->outs[k] = v;
  }
  n->nout = nout;
  user_ctx u = {g, n, true};
  for (int i = 0; i < na; i++) alloy_arg_for_each_value(&n->args[i], add_user_fn, &u);
  if (!u.ok || !grow((void **)&g->nodes, &g->cap_nodes, g->nnodes + 1, sizeof *g->nodes))
    return oom();
  g->nodes[g->nnodes++] = n;
  if (out) *out = n;
  return NULL;
}

alloy_error *alloy_graph_add_node(alloy_graph *g, const alloy_op *op,
                                  const alloy_arg *args, int nargs,
                                  const char *const *kwnames,
                                  const alloy_arg *kwargs, int nkw,
                                  const char *name, alloy_node **out) {
  if (!op) return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "no op given");
  int na = op->schema->nargs;
  alloy_arg *norm = calloc((size_t)(na ? na : 1), sizeof *norm);
  if (!norm) return oom();
  alloy_error *e = normalize_args(g, op, args, nargs, kwnames, kwargs, nkw, norm);
  alloy_meta m = {0};
  m.unbacked_next = g->next_unbacked;
  if (!e) e = alloy_meta_run(op, g->symtab, norm, &m);
  if (!e) {
    e = alloy_graph_append(g, op, norm, m.outs, m.nout, name, g->next_unbacked, out);
    if (!e) g->next_unbacked = m.unbacked_next;
  }
  free(m.outs);
  free(norm);
  return e;
}

/* Whether every value among the arguments (lists included) is there: a
 * pass that builds from the results of earlier steps passes NULL for one
 * that failed. */
static bool values_present(const alloy_arg *args, int n) {
  for (int i = 0; i < n; i++) {
    if (args[i].kind == ALLOY_ARG_VALUE && !args[i].u.value) return false;
    if (args[i].kind == ALLOY_ARG_LIST && !values_present(args[i].u.list.items, args[i].u.list.n))
      return false;
  }
  return true;
}

alloy_error *alloy_graph_add_node_ordered(alloy_graph *g, const alloy_op *op,
                                         const alloy_arg *args, int nargs, const char *name,
                                         alloy_node **out) {
  const alloy_schema *s = op->schema;
  if (!values_present(args, nargs))
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                           "%s: an argument is missing (an earlier step failed)", op->name);
  if (nargs > s->nargs || nargs > 64)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "%s: %d arguments given, the schema has %d",
                           op->name, nargs, s->nargs);
  alloy_arg pos[64], kw[64];
  const char *kwnames[64];
  int npos = 0, nkw = 0;
  for (int i = 0; i < nargs; i++) {
    if (s->args[i].kwarg_only) {
      kwnames[nkw] = s->args[i].name;
      kw[nkw++] = args[i];
    } else {
      pos[npos++] = args[i];
    }
  }
  return alloy_graph_add_node(g, op, pos, npos, kwnames, kw, nkw, name, out);
}

alloy_error *alloy_graph_set_outputs(alloy_graph *g, alloy_value *const *values,
                                     int n) {
  for (int i = 0; i < n; i++)
    if (!value_in_graph(g, values[i]))
      return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                             "graph output %d is not a value of this graph", i);
  alloy_value **outs = malloc(sizeof *outs * (size_t)(n ? n : 1));
  alloy_graph_role *roles = calloc((size_t)(n ? n : 1), sizeof *roles);
  if (!outs || !roles) {
    free(outs);
    free(roles);
    return oom();
  }
  if (n) memcpy(outs, values, sizeof *outs * (size_t)n);
  free(g->outputs);
  free(g->out_roles);
  g->outputs = outs;
  g->out_roles = roles;
  g->noutputs = n;
  return NULL;
}

/* --- the graph signature ---------------------------------------------- */

static alloy_error *set_role(alloy_graph *g, alloy_graph_role *slot, int role, int user_role,
                             int max_role, const char *name, const char *what, int i) {
  if (role < 0 || role > max_role)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "%s %d: invalid role %d", what, i, role);
  if ((role == user_role) != (name == NULL))
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                           "%s %d: a name is required for this role, and only for it", what, i);
  const char *copy = name ? alloy_arena_strdup(&g->arena, name) : NULL;
  if (name && !copy) return oom();
  slot->role = role; /* an input's attachments stay */
  slot->name = copy;
  return NULL;
}

alloy_error *alloy_graph_set_input_role(alloy_graph *g, int i, alloy_input_role role,
                                        const char *name) {
  if (i < 0 || i >= g->ninputs)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "no graph input %d", i);
  return set_role(g, &g->in_roles[i], (int)role, ALLOY_INPUT_USER, ALLOY_INPUT_CONSTANT, name,
                  "input", i);
}

alloy_error *alloy_graph_set_output_role(alloy_graph *g, int i, alloy_output_role role,
                                         const char *name) {
  if (i < 0 || i >= g->noutputs)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "no graph output %d", i);
  return set_role(g, &g->out_roles[i], (int)role, ALLOY_OUTPUT_USER, ALLOY_OUTPUT_INPUT_MUTATION,
                  name, "output", i);
}

alloy_input_role alloy_graph_input_role(const alloy_graph *g, int i, const char **name) {
  bool ok = i >= 0 && i < g->ninputs;
  if (name) *name = ok ? g->in_roles[i].name : NULL;
  return ok ? (alloy_input_role)g->in_roles[i].role : ALLOY_INPUT_USER;
}

alloy_output_role alloy_graph_output_role(const alloy_graph *g, int i, const char **name) {
  bool ok = i >= 0 && i < g->noutputs;
  if (name) *name = ok ? g->out_roles[i].name : NULL;
  return ok ? (alloy_output_role)g->out_roles[i].role : ALLOY_OUTPUT_USER;
}

alloy_error *alloy_graph_set_weights_file(alloy_graph *g, const char *path) {
  if (!path) {
    g->weights_file = NULL;
    return NULL;
  }
  const char *copy = alloy_arena_strdup(&g->arena, path);
  if (!copy) return oom();
  g->weights_file = copy;
  return NULL;
}

const char *alloy_graph_weights_file(const alloy_graph *g) { return g->weights_file; }

/* --- runtime attachments of inputs (ir/ir.h) ------------------------ */

void alloy_graph_set_input_data(alloy_graph *g, int i, const void *data, uint64_t bytes) {
  if (i < 0 || i >= g->ninputs) return;
  g->in_roles[i].data = data;
  g->in_roles[i].data_bytes = data ? bytes : 0;
}

const void *alloy_graph_input_data(const alloy_graph *g, int i, uint64_t *bytes) {
  bool ok = i >= 0 && i < g->ninputs && g->in_roles[i].data;
  if (bytes) *bytes = ok ? g->in_roles[i].data_bytes : 0;
  return ok ? g->in_roles[i].data : NULL;
}

bool alloy_graph_input_is_intermediate(const alloy_graph *g, int i) {
  return i >= 0 && i < g->ninputs && g->in_roles[i].intermediate;
}

/* --- accessors -------------------------------------------------------- */

int alloy_graph_num_inputs(const alloy_graph *g) { return g->ninputs; }
alloy_value *alloy_graph_input(const alloy_graph *g, int i) {
  return i >= 0 && i < g->ninputs ? g->inputs[i] : NULL;
}
int alloy_graph_num_outputs(const alloy_graph *g) { return g->noutputs; }
alloy_value *alloy_graph_output(const alloy_graph *g, int i) {
  return i >= 0 && i < g->noutputs ? g->outputs[i] : NULL;
}
int alloy_graph_num_nodes(const alloy_graph *g) { return g->nnodes; }
alloy_node *alloy_graph_node(const alloy_graph *g, int i) {
  return i >= 0 && i < g->nnodes ? g->nodes[i] : NULL;
}

const alloy_op *alloy_node_op(const alloy_node *n) { return n->op; }
int alloy_node_num_args(const alloy_node *n) { return n->op->schema->nargs; }
const alloy_arg *alloy_node_arg(const alloy_node *n, int i) {
  return i >= 0 && i < n->op->schema->nargs ? &n->args[i] : NULL;
}
int alloy_node_num_outputs(const alloy_node *n) { return n->nout; }
alloy_value *alloy_node_output(const alloy_node *n, int i) {
  return i >= 0 && i < n->nout ? n->outs[i] : NULL;
}

const char *alloy_value_name(const alloy_value *v) { return v->name; }
void alloy_value_get_type(const alloy_value *v, alloy_value_type *t) {
  t->kind = v->kind;
  t->dtype = v->dtype;
  t->rank = v->rank;
  t->shape = v->shape;
  t->strides = v->strides;
  t->device = v->device;
  t->int_value = v->int_value;
}
alloy_value_kind alloy_value_kind_of(const alloy_value *v) { return v->kind; }
alloy_dtype alloy_value_dtype(const alloy_value *v) { return v->dtype; }
int alloy_value_rank(const alloy_value *v) { return v->rank; }
const alloy_dim *alloy_value_shape(const alloy_value *v) { return v->shape; }
alloy_node *alloy_value_producer(const alloy_value *v, int *output_index) {
  if (output_index) *output_index = v->output_index;
  return v->producer;
}
int alloy_value_num_users(const alloy_value *v) { return v->nusers; }
alloy_node *alloy_value_user(const alloy_value *v, int i) {
  return i >= 0 && i < v->nusers ? v->users[i] : NULL;
}

/* --- passes ----------------------------------------------------------- */

static bool is_graph_output(const alloy_graph *g, const alloy_value *v) {
  for (int i = 0; i < g->noutputs; i++)
    if (g->outputs[i] == v) return true;
  return false;
}

int alloy_graph_dce(alloy_graph *g) {
  int removed = 0;
  for (int i = g->nnodes - 1; i >= 0; i--) {
    alloy_node *n = g->nodes[i];
    /* Nodes that write an argument or return nothing (assertions) are kept
     * for their effect. */
    bool live = (n->op->tags & ALLOY_TAG_MUTATES) || n->nout == 0;
    for (int k = 0; k < n->nout && !live; k++)
      live = n->outs[k]->nusers > 0 || is_graph_output(g, n->outs[k]);
    if (live) continue;
    user_ctx u = {g, n, true};
    for (int a = 0; a < n->op->schema->nargs; a++)
      alloy_arg_for_each_value(&n->args[a], remove_user_fn, &u);
    n->dead = true;
    removed++;
  }
  int j = 0;
  for (int i = 0; i < g->nnodes; i++)
    if (!g->nodes[i]->dead) g->nodes[j++] = g->nodes[i];
  g->nnodes = j;
  return removed;
}

static void replace_in_arg(alloy_arg *a, alloy_value *from, alloy_value *to) {
  if (a->kind == ALLOY_ARG_VALUE && a->u.value == from) a->u.value = to;
  if (a->kind == ALLOY_ARG_LIST)
    for (int i = 0; i < a->u.list.n; i++)
      replace_in_arg((alloy_arg *)&a->u.list.items[i], from, to);
}

alloy_error *alloy_graph_replace_uses(alloy_graph *g, alloy_value *from,
                                      alloy_value *to) {
  if (!value_in_graph(g, from) || !value_in_graph(g, to))
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                           "replace_uses: value of another graph");
  if (from == to) return NULL;
  /* Keep the order topological: `to` must exist before every user. */
  if (to->producer) {
    int def = -1;
    for (int i = 0; i < g->nnodes && def < 0; i++)
      if (g->nodes[i] == to->producer) def = i;
    for (int i = 0; i <= def; i++)
      for (int u = 0; u < from->nusers; u++)
        if (from->users[u] == g->nodes[i])
          return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                                 "replace_uses: %s is defined after its new user (node %d)",
                                 to->name, i);
  }
  for (int i = 0; i < from->nusers; i++) {
    alloy_node *n = from->users[i];
    for (int a = 0; a < n->op->schema->nargs; a++) replace_in_arg(&n->args[a], from, to);
    if (!value_add_user(to, n)) return oom();
  }
  from->nusers = 0;
  for (int i = 0; i < g->noutputs; i++)
    if (g->outputs[i] == from) g->outputs[i] = to;
  return NULL;
}

/* Copying between graphs: values are mapped by id, dims re-interned in the
 * destination's symbol table. A specializing copy also has values for some
 * of the source's symbols: a dim they determine becomes concrete, and so
 * does a use of a SymInt value they determine. */
struct alloy_graph_copy {
  const alloy_graph *src;
  alloy_graph *dst;
  alloy_value **map; /* src value id -> dst value */
  alloy_error *err;
  const int64_t *values; /* specializing: by source symbol index */
  const bool *bound;
  int nvalues;
  /* Node by node (alloy_copy_*): the pass adds values of its own, whose
   * automatic names may take a name a later source value has; that value
   * then keeps an automatic name too. */
  bool soft_names;
};
typedef struct alloy_graph_copy graph_copy;

static alloy_dim copy_dim(graph_copy *c, alloy_dim d) {
  alloy_dim out = alloy_dim_const(0);
  if (alloy_dim_is_const(d)) return d;
  if (c->values) {
    int64_t v;
    alloy_error *e = alloy_dim_eval(c->src->symtab, d, c->values, c->bound, c->nvalues, &v);
    if (!e) return alloy_dim_const(v);
    alloy_error_free(e); /* an unbound (data-dependent) symbol stays */
  }
  if (!c->err) c->err = alloy_dim_import(c->dst->symtab, c->src->symtab, d, &out);
  return out;
}

static void copy_arg(graph_copy *c, const alloy_arg *src, alloy_arg *dst) {
  *dst = *src;
  if (src->kind == ALLOY_ARG_VALUE && c->values && src->u.value->kind == ALLOY_VALUE_INT) {
    alloy_dim d = copy_dim(c, src->u.value->int_value);
    if (alloy_dim_is_const(d)) {
      *dst = alloy_arg_dim(d);
      return;
    }
  }
  if (src->kind == ALLOY_ARG_VALUE) {
    dst->u.value = c->map[src->u.value->id];
    if (!dst->u.value && !c->err)
      c->err = alloy_error_new(ALLOY_ERR_INTERNAL, "value %s used before defined",
                               src->u.value->name);
  } else if (src->kind == ALLOY_ARG_INT) {
    dst->u.i = copy_dim(c, src->u.i);
  } else if (src->kind == ALLOY_ARG_LIST) {
    /* items live in the destination arena; alloy_graph_append copies again,
     * which is harmless */
    alloy_arg *items = alloy_arena_alloc(&c->dst->arena,
                                         sizeof *items * (size_t)(src->u.list.n ? src->u.list.n : 1));
    if (!items) {
      if (!c->err) c->err = oom();
      return;
    }
    for (int i = 0; i < src->u.list.n; i++) copy_arg(c, &src->u.list.items[i], &items[i]);
    dst->u.list.items = items;
  }
}

static void copy_type(graph_copy *c, const alloy_value *v, alloy_meta_out *o) {
  o->kind = v->kind;
  o->dtype = v->dtype;
  o->rank = v->rank;
  for (int d = 0; d < v->rank; d++) o->shape[d] = copy_dim(c, v->shape[d]);
  o->int_value = copy_dim(c, v->int_value);
}

static alloy_error *copy_input(graph_copy *c, const alloy_value *v) {
  alloy_meta_out t;
  copy_type(c, v, &t);
  if (c->err) return c->err;
  alloy_value_type vt = {t.kind, t.dtype, t.rank, t.shape, NULL, v->device, t.int_value};
  alloy_value *nv;
  alloy_error *e = alloy_graph_add_input(c->dst, v->name, &vt, &nv);
  if (e) return e;
  c->map[v->id] = nv;
  return NULL;
}

static alloy_error *copy_node(graph_copy *c, const alloy_node *n) {
  int na = n->op->schema->nargs;
  alloy_arg *args = calloc((size_t)(na ? na : 1), sizeof *args);
  alloy_meta_out *outs = calloc((size_t)(n->nout ? n->nout : 1), sizeof *outs);
  alloy_error *e = NULL;
  if (!args || !outs) e = oom();
  for (int i = 0; i < na && !e; i++) copy_arg(c, &n->args[i], &args[i]);
  for (int k = 0; k < n->nout && !e; k++) copy_type(c, n->outs[k], &outs[k]);
  if (!e) e = c->err;
  alloy_node *nn = NULL;
  if (!e) e = alloy_graph_append(c->dst, n->op, args, outs, n->nout, NULL,
                                 n->unbacked_first, &nn);
  /* Keep the original value names (append chose automatic ones). */
  for (int k = 0; k < n->nout && !e; k++) {
    alloy_value *v = nn->outs[k];
    c->map[n->outs[k]->id] = v;
    if (!strcmp(v->name, n->outs[k]->name)) continue;
    if (c->soft_names && alloy_graph_find_value(c->dst, n->outs[k]->name)) continue;
    e = alloy_graph_rename(c->dst, v, n->outs[k]->name);
  }
  free(args);
  free(outs);
  return e;
}

static alloy_error *copy_begin(graph_copy *c, const alloy_graph *src) {
  c->src = src;
  c->err = NULL;
  c->dst = alloy_graph_new();
  c->map = calloc((size_t)(src->nvalues ? src->nvalues : 1), sizeof *c->map);
  if (!c->dst || !c->map) return oom();
  c->dst->next_unbacked = src->next_unbacked;
  /* Declare every symbol in the same order so printing is stable. */
  for (int i = 0; i < alloy_symtab_count(src->symtab) && !c->err; i++)
    (void)copy_dim(c, alloy_symtab_symbol(src->symtab, i));
  return c->err;
}

/* An input's role, name and attachments, from input i of src to input j
 * of dst. */
static alloy_error *copy_input_role(alloy_graph *dst, int j, const alloy_graph *src, int i) {
  const alloy_graph_role *r = &src->in_roles[i];
  alloy_error *e = alloy_graph_set_input_role(dst, j, (alloy_input_role)r->role, r->name);
  if (e) return e;
  dst->in_roles[j].data = r->data;
  dst->in_roles[j].data_bytes = r->data_bytes;
  dst->in_roles[j].intermediate = r->intermediate;
  return NULL;
}

/* The signature, the inputs' attachments and the weights file travel with
 * a whole-graph copy (whose inputs are the source's, in order). */
static alloy_error *copy_signature(graph_copy *c) {
  const alloy_graph *g = c->src;
  alloy_error *e = alloy_graph_set_weights_file(c->dst, g->weights_file);
  for (int i = 0; i < g->ninputs && !e; i++) e = copy_input_role(c->dst, i, g, i);
  for (int i = 0; i < g->noutputs && !e; i++)
    e = alloy_graph_set_output_role(c->dst, i, (alloy_output_role)g->out_roles[i].role,
                                    g->out_roles[i].name);
  return e;
}

static void copy_abort(graph_copy *c) {
  alloy_graph_free(c->dst);
  free(c->map);
}

static alloy_error *copy_whole(graph_copy *c, const alloy_graph *g, alloy_graph **out) {
  alloy_error *e = copy_begin(c, g);
  for (int i = 0; i < g->ninputs && !e; i++) e = copy_input(c, g->inputs[i]);
  for (int i = 0; i < g->nnodes && !e; i++) e = copy_node(c, g->nodes[i]);
  if (!e) {
    alloy_value **outs = malloc(sizeof *outs * (size_t)(g->noutputs ? g->noutputs : 1));
    if (!outs) e = oom();
    for (int i = 0; i < g->noutputs && !e; i++) outs[i] = c->map[g->outputs[i]->id];
    if (!e) e = alloy_graph_set_outputs(c->dst, outs, g->noutputs);
    free(outs);
  }
  if (!e) e = copy_signature(c);
  if (e) {
    copy_abort(c);
    return e;
  }
  free(c->map);
  *out = c->dst;
  return NULL;
}

alloy_error *alloy_graph_clone(const alloy_graph *g, alloy_graph **out) {
  graph_copy c = {0};
  return copy_whole(&c, g, out);
}

/* The incremental copy passes use (see graph_internal.h). */
alloy_error *alloy_copy_begin(const alloy_graph *src, alloy_graph_copy **out) {
  *out = NULL;
  graph_copy *c = calloc(1, sizeof *c);
  if (!c) return oom();
  c->soft_names = true;
  alloy_error *e = copy_begin(c, src);
  for (int i = 0; i < src->ninputs && !e; i++) e = copy_input(c, src->inputs[i]);
  if (e) {
    copy_abort(c);
    free(c);
    return e;
  }
  *out = c;
  return NULL;
}

alloy_graph *alloy_copy_dst(alloy_graph_copy *c) { return c->dst; }

alloy_value *alloy_copy_map(const alloy_graph_copy *c, const alloy_value *v) {
  return c->map[v->id];
}

void alloy_copy_set(alloy_graph_copy *c, const alloy_value *from, alloy_value *to) {
  c->map[from->id] = to;
}

alloy_error *alloy_copy_node(alloy_graph_copy *c, const alloy_node *n, alloy_node **out) {
  int before = c->dst->nnodes;
  alloy_error *e = copy_node(c, n);
  if (out) *out = e ? NULL : c->dst->nodes[before];
  return e;
}

alloy_error *alloy_copy_finish(alloy_graph_copy *c, alloy_graph **out) {
  const alloy_graph *g = c->src;
  alloy_error *e = NULL;
  alloy_value **outs = malloc(sizeof *outs * (size_t)(g->noutputs ? g->noutputs : 1));
  if (!outs) e = oom();
  for (int i = 0; i < g->noutputs && !e; i++)
    if (!(outs[i] = c->map[g->outputs[i]->id]))
      e = alloy_error_new(ALLOY_ERR_INTERNAL, "graph output %s has no value in the copy",
                          g->outputs[i]->name);
  if (!e) e = alloy_graph_set_outputs(c->dst, outs, g->noutputs);
  free(outs);
  if (!e) e = copy_signature(c);
  if (e) {
    copy_abort(c);
  } else {
    free(c->map);
    *out = c->dst;
  }
  free(c);
  return e;
}

void alloy_copy_abort(alloy_graph_copy *c) {
  if (!c) return;
  copy_abort(c);
  free(c);
}

alloy_error *alloy_graph_specialize(const alloy_graph *g, const int64_t *values,
                                    const bool *bound, int nvalues, alloy_graph **out) {
  *out = NULL;
  bool none = true;
  for (int i = 0; i < nvalues && none; i++) none = !bound[i];
  graph_copy c = {.values = values, .bound = bound, .nvalues = nvalues};
  if (none) c.values = NULL; /* nothing to substitute: a plain clone */
  alloy_error *e = copy_whole(&c, g, out);
  if (!e) alloy_graph_dce(*out); /* sym_size and friends whose uses became constants */
  return e;
}

typedef struct {
  graph_copy *c;
  const bool *inside; /* by node id */
  const int *input_index; /* by value id: its index among g's inputs, or -1 */
  alloy_error *err;
} extract_ctx;

/* A value defined outside the nodes becomes an input: a graph input keeps
 * its role, name and attachments; a value another node computes is an
 * intermediate. */
static void extract_input_fn(alloy_value *v, void *ctx) {
  extract_ctx *x = ctx;
  if (x->err || x->c->map[v->id]) return;
  if (v->producer && x->inside[v->producer->id]) return;
  alloy_graph *dst = x->c->dst;
  if ((x->err = copy_input(x->c, v))) return;
  int j = dst->ninputs - 1, i = x->input_index[v->id];
  if (i >= 0) x->err = copy_input_role(dst, j, x->c->src, i);
  else dst->in_roles[j].intermediate = true;
}

alloy_error *alloy_graph_extract(const alloy_graph *g,
                                 alloy_node *const *nodes, int n,
                                 alloy_graph **out) {
  bool *inside = calloc((size_t)(g->next_node_id ? g->next_node_id : 1), sizeof *inside);
  if (!inside) return oom();
  for (int i = 0; i < n; i++) {
    bool found = false;
    for (int j = 0; j < g->nnodes && !found; j++) found = g->nodes[j] == nodes[i];
    if (!found) {
      free(inside);
      return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                             "extract: node %d is not in the graph", i);
    }
    inside[nodes[i]->id] = true;
  }
  int *input_index = malloc(sizeof *input_index * (size_t)(g->nvalues ? g->nvalues : 1));
  if (!input_index) {
    free(inside);
    return oom();
  }
  for (int i = 0; i < g->nvalues; i++) input_index[i] = -1;
  for (int i = 0; i < g->ninputs; i++) input_index[g->inputs[i]->id] = i;
  graph_copy c = {0};
  alloy_error *e = copy_begin(&c, g);
  extract_ctx x = {&c, inside, input_index, NULL};
  /* Inputs first, in graph order of first use, then the nodes in graph
   * order (which is topological). */
  for (int j = 0; j < g->nnodes && !e; j++) {
    alloy_node *nd = g->nodes[j];
    if (!inside[nd->id]) continue;
    for (int a = 0; a < nd->op->schema->nargs && !x.err; a++)
      alloy_arg_for_each_value(&nd->args[a], extract_input_fn, &x);
    e = x.err;
  }
  for (int j = 0; j < g->nnodes && !e; j++)
    if (inside[g->nodes[j]->id]) e = copy_node(&c, g->nodes[j]);
  alloy_value **outs = NULL;
  int nouts = 0;
  if (!e && !(outs = malloc(sizeof *outs * (size_t)(g->nvalues ? g->nvalues : 1)))) e = oom();
  for (int j = 0; j < g->nnodes && !e; j++) {
    alloy_node *nd = g->nodes[j];
    if (!inside[nd->id]) continue;
    for (int k = 0; k < nd->nout; k++) {
      alloy_value *v = nd->outs[k];
      bool used_outside = is_graph_output(g, v);
      for (int u = 0; u < v->nusers && !used_outside; u++)
        used_outside = !inside[v->users[u]->id];
      if (used_outside) outs[nouts++] = c.map[v->id];
    }
  }
  if (!e) e = alloy_graph_set_outputs(c.dst, outs, nouts);
  free(outs);
  free(inside);
  free(input_index);
  if (e) {
    copy_abort(&c);
    return e;
  }
  free(c.map);
  *out = c.dst;
  return NULL;
}

alloy_error *alloy_graph_rename(alloy_graph *g, alloy_value *v,
                                const char *name) {
  if (alloy_graph_find_value(g, name))
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                           "value name '%s' is already used", name);
  char *copy = alloy_arena_strdup(&g->arena, name);
  if (!copy) return oom();
  /* Rebuild the name table: renames are rare (clone, parse). */
  v->name = copy;
  memset(g->name_slots, 0, sizeof *g->name_slots * (size_t)g->name_cap);
  g->name_count = 0;
  for (int i = 0; i < g->nvalues; i++)
    if (!names_insert(g, g->values[i])) return oom();
  return NULL;
}

/* --- verification ----------------------------------------------------- */

static alloy_error *verify_node(const alloy_graph *g, const alloy_node *n,
                                int index) {
  const alloy_op *op = n->op;
  for (int i = 0; i < op->schema->nargs; i++) {
    alloy_error *e = check_arg(g, op, &op->schema->args[i], &n->args[i]);
    if (e) return alloy_error_wrap(e, "node %d (%s)", index, n->nout ? n->outs[0]->name : op->name);
  }
  alloy_meta m = {0};
  m.unbacked_next = n->unbacked_first;
  alloy_error *e = alloy_meta_run(op, g->symtab, n->args, &m);
  if (e) {
    free(m.outs);
    return alloy_error_wrap(e, "node %d (%s)", index, n->nout ? n->outs[0]->name : op->name);
  }
  if (m.nout != n->nout) e = alloy_error_new(ALLOY_ERR_TYPE, "node %d (%s): %d outputs, shape function says %d",
                                             index, op->name, n->nout, m.nout);
  for (int k = 0; k < n->nout && !e; k++) {
    const alloy_value *v = n->outs[k];
    const alloy_meta_out *o = &m.outs[k];
    bool same = v->kind == o->kind;
    if (same && v->kind == ALLOY_VALUE_TENSOR) {
      same = v->dtype == o->dtype && v->rank == o->rank;
      for (int d = 0; d < v->rank && same; d++) same = alloy_dim_same(v->shape[d], o->shape[d]);
    }
    if (!same) {
      char want[256], got[256];
      alloy_value_type_print(v->kind, v->dtype, v->shape, v->rank, got, sizeof got);
      alloy_value_type_print(o->kind, o->dtype, o->shape, o->rank, want, sizeof want);
      e = alloy_error_new(ALLOY_ERR_TYPE, "node %d (%s, op %s): output %d is %s, but the shape function gives %s",
                          index, v->name, op->name, k, got, want);
    }
  }
  free(m.outs);
  return e;
}

alloy_error *alloy_graph_verify(const alloy_graph *g) {
  for (int i = 0; i < g->nnodes; i++) {
    alloy_error *e = verify_node(g, g->nodes[i], i);
    if (e) return e;
  }
  return NULL;
}

size_t alloy_value_type_print(alloy_value_kind kind, alloy_dtype dtype,
                              const alloy_dim *shape, int rank, char *buf,
                              size_t cap) {
  static const char *scalar_names[] = {"", "SymInt", "float", "bool"};
  if (kind != ALLOY_VALUE_TENSOR) return (size_t)snprintf(buf, cap, "%s", scalar_names[kind]);
  char dims[1024];
  meta_shape_text(shape, rank, dims, sizeof dims);
  return (size_t)snprintf(buf, cap, "%s%s", alloy_dtype_short_name(dtype), dims);
}
