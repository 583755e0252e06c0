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

/* The name table: open addressing with linear probing, at most half full.
 * Every operation is O(1) on average: lookups, inserts (the table doubles
 * when half full, which costs O(1) per insert amortized), and renames,
 * which take the value out (backward-shift deletion, so no tombstones) and
 * put it back under its new name. Importers and clones rename once per
 * value, so anything more than O(1) per rename makes them quadratic
 * (issue 15); name_work counts the slots every operation visits so that a
 * test can tell. */
static _Thread_local uint64_t name_work;

/* Test hook (tests/test_hostile_pt2.c): slots of name tables visited by
 * this thread so far. Declared here, not in a header: only tests use it. */
uint64_t alloy_graph_name_table_work(void);
uint64_t alloy_graph_name_table_work(void) { return name_work; }

alloy_value *alloy_graph_find_value(const alloy_graph *g, const char *name) {
  if (!g->name_slots) return NULL;
  size_t mask = (size_t)g->name_cap - 1;
  for (size_t i = alloy_hash_str(name) & mask; g->name_slots[i]; i = (i + 1) & mask) {
    name_work++;
    if (!strcmp(g->name_slots[i]->name, name)) return g->name_slots[i];
  }
  return NULL;
}

/* Puts v in the first free slot of its probe sequence in slots[0, cap). */
static void names_place(alloy_value **slots, int cap, alloy_value *v) {
  size_t mask = (size_t)cap - 1, j = alloy_hash_str(v->name) & mask;
  for (; slots[j]; j = (j + 1) & mask) name_work++;
  name_work++;
  slots[j] = v;
}

static bool names_insert(alloy_graph *g, alloy_value *v) {
  if ((g->name_count + 1) * 2 > g->name_cap) {
    int ncap = g->name_cap ? g->name_cap * 2 : 64;
    alloy_value **slots = calloc((size_t)ncap, sizeof *slots);
    if (!slots) return false;
    for (int i = 0; i < g->name_cap; i++)
      if (g->name_slots[i]) names_place(slots, ncap, g->name_slots[i]);
    free(g->name_slots);
    g->name_slots = slots;
    g->name_cap = ncap;
  }
  names_place(g->name_slots, g->name_cap, v);
  g->name_count++;
  return true;
}

/* Takes v (under its current name) out of the table. The entries after it
 * in its cluster move back into the hole when their probe sequence allows,
 * so that every lookup still finds them. */
static void names_remove(alloy_graph *g, const alloy_value *v) {
  if (!g->name_slots) return;
  size_t mask = (size_t)g->name_cap - 1, hole = alloy_hash_str(v->name) & mask;
  for (; g->name_slots[hole] != v; hole = (hole + 1) & mask) {
    name_work++;
    if (!g->name_slots[hole]) return; /* not there */
  }
  for (size_t j = (hole + 1) & mask; g->name_slots[j]; j = (j + 1) & mask) {
    name_work++;
    size_t home = alloy_hash_str(g->name_slots[j]->name) & mask;
    /* The entry at j may fill the hole unless its home lies cyclically in
     * (hole, j]: then its probe sequence does not pass the hole. */
    bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (stays) continue;
    g->name_slots[hole] = g->name_slots[j];
    hole = j;
  }
  g->name_slots[hole] = NULL;
  g->name_count--;
}

/* Creates a value, named `name` or, when NULL, automatically: "v<id>" (id:
 * the value's index), or "v<id>_<k>" with the smallest k that is free when
 * "v<id>" is taken. Each id is tried by one value only, so the probing
 * costs O(1) per value amortized, however the graph's other names were
 * chosen. An explicit name that is taken is an error. */
static alloy_error *value_new(alloy_graph *g, const char *name,
                              alloy_value **out) {
  char auto_name[48];
  if (!name) {
    snprintf(auto_name, sizeof auto_name, "v%d", g->nvalues);
    for (int k = 1; alloy_graph_find_value(g, auto_name); k++)
      snprintf(auto_name, sizeof auto_name, "v%d_%d", g->nvalues, k);
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
  char why[160];
  if (type->kind == ALLOY_VALUE_TENSOR && type->rank >= 0 && type->rank <= ALLOY_MAX_RANK &&
      (unsigned)type->dtype < ALLOY_DTYPE_COUNT &&
      !alloy_type_fits(type->dtype, type->shape, type->strides, type->rank, why, sizeof why))
    return alloy_error_new(ALLOY_ERR_TYPE, "input %s is too large: %s", name ? name : "?", why);
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
 * whose outputs' types are known; args are deep-copied. Output k is named
 * names[k] when names is given (NULL there, or with soft a name already
 * taken: automatic), else name, name_1, name_2, ... (all automatic when
 * name is NULL). */
static alloy_error *append_node(alloy_graph *g, const alloy_op *op, const alloy_arg *args,
                                const alloy_meta_out *outs, int nout, const char *name,
                                const char *const *names, bool soft, int unbacked_first,
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
    if (names) vname = soft && names[k] && alloy_graph_find_value(g, names[k]) ? NULL : names[k];
    else if (name && k == 0) vname = name;
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

alloy_error *alloy_graph_append(alloy_graph *g, const alloy_op *op,
                                const alloy_arg *args,
                                const alloy_meta_out *outs, int nout,
                                const char *name, int unbacked_first,
                                alloy_node **out) {
  return append_node(g, op, args, outs, nout, name, NULL, false, unbacked_first, out);
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
  m.node_name = name;
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

/* The graph's outputs as a set: out[v->id] is true for each (calloc'd,
 * the caller frees it; NULL when memory runs out). One pass, so that the
 * passes below ask "is v an output?" in O(1) rather than O(outputs). */
static bool *output_set(const alloy_graph *g) {
  bool *out = calloc((size_t)(g->nvalues ? g->nvalues : 1), sizeof *out);
  for (int i = 0; out && i < g->noutputs; i++) out[g->outputs[i]->id] = true;
  return out;
}

static bool is_graph_output(const alloy_graph *g, const bool *set, const alloy_value *v) {
  if (set) return set[v->id];
  for (int i = 0; i < g->noutputs; i++)
    if (g->outputs[i] == v) return true;
  return false;
}

/* Counts a dead node's use of v once (a node that reads v twice is one
 * user of it). */
typedef struct dce_ctx {
  int *live_users; /* by value id: users not found dead yet */
  int *seen;       /* by value id: the last node (id + 1) that counted */
  int node;
} dce_ctx;

static void dce_unuse_fn(alloy_value *v, void *ctx) {
  dce_ctx *d = ctx;
  if (d->seen[v->id] == d->node + 1) return;
  d->seen[v->id] = d->node + 1;
  d->live_users[v->id]--;
}

/* The slow way, when there is no memory for the counts: each dead node
 * leaves its values' user lists at once (O(users) per use). */
static bool dce_node_dead_slow(alloy_graph *g, const bool *outputs, alloy_node *n) {
  bool live = (n->op->tags & ALLOY_TAG_MUTATES) || n->nout == 0;
  for (int k = 0; k < n->nout && !live; k++)
    live = n->outs[k]->nusers > 0 || is_graph_output(g, outputs, n->outs[k]);
  if (live) return false;
  user_ctx u = {g, n, true};
  for (int a = 0; a < n->op->schema->nargs; a++)
    alloy_arg_for_each_value(&n->args[a], remove_user_fn, &u);
  return true;
}

/* Linear in nodes, arguments and uses: going backwards, a node is dead when
 * none of its outputs has a user left alive; the counts of live users drop
 * as nodes die, and each user list is filtered once at the end (taking dead
 * users out one by one costs O(users) each: quadratic when many dead nodes
 * read one value, as after a decomposition round). */
int alloy_graph_dce(alloy_graph *g) {
  int removed = 0;
  bool *outputs = output_set(g); /* NULL (out of memory): ask the slow way */
  int *live_users = malloc(sizeof *live_users * (size_t)(g->nvalues ? g->nvalues : 1));
  int *seen = calloc((size_t)(g->nvalues ? g->nvalues : 1), sizeof *seen);
  bool fast = live_users && seen;
  for (int i = 0; fast && i < g->nvalues; i++) live_users[i] = g->values[i]->nusers;
  for (int i = g->nnodes - 1; i >= 0; i--) {
    alloy_node *n = g->nodes[i];
    if (!fast) {
      if (dce_node_dead_slow(g, outputs, n)) n->dead = true, removed++;
      continue;
    }
    /* Nodes that write an argument or return nothing (assertions) are kept
     * for their effect. */
    bool live = (n->op->tags & ALLOY_TAG_MUTATES) || n->nout == 0;
    for (int k = 0; k < n->nout && !live; k++)
      live = live_users[n->outs[k]->id] > 0 || is_graph_output(g, outputs, n->outs[k]);
    if (live) continue;
    dce_ctx d = {live_users, seen, n->id};
    for (int a = 0; a < n->op->schema->nargs; a++)
      alloy_arg_for_each_value(&n->args[a], dce_unuse_fn, &d);
    n->dead = true;
    removed++;
  }
  for (int i = 0; fast && removed && i < g->nvalues; i++) {
    alloy_value *v = g->values[i];
    if (live_users[i] == v->nusers) continue;
    int j = 0;
    for (int u = 0; u < v->nusers; u++)
      if (!v->users[u]->dead) v->users[j++] = v->users[u];
    v->nusers = j;
  }
  free(live_users);
  free(seen);
  free(outputs);
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
  /* Keep the order topological: `to` must exist before every user. Node
   * ids grow with position and user lists are sorted by id, so the first
   * user tells, in O(1). */
  if (to->producer && !to->producer->dead && from->nusers &&
      from->users[0]->id <= to->producer->id) {
    int at = 0;
    while (at < g->nnodes && g->nodes[at] != from->users[0]) at++;
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                           "replace_uses: %s is defined after its new user (node %d)",
                           to->name, at);
  }
  /* to's users and from's, merged by id (both sorted), each node once:
   * O(both), where inserting one by one would cost O(to's users) each. */
  int n = to->nusers + from->nusers;
  alloy_node **merged = malloc(sizeof *merged * (size_t)(n ? n : 1));
  if (!merged) return oom();
  int i = 0, j = 0, k = 0;
  while (i < to->nusers || j < from->nusers) {
    alloy_node *a = i < to->nusers ? to->users[i] : NULL;
    alloy_node *b = j < from->nusers ? from->users[j] : NULL;
    alloy_node *next = !b || (a && a->id <= b->id) ? a : b;
    if (next == a) i++;
    if (next == b) j++;
    if (!k || merged[k - 1] != next) merged[k++] = next;
  }
  for (int u = 0; u < from->nusers; u++) {
    alloy_node *user = from->users[u];
    for (int a = 0; a < user->op->schema->nargs; a++) replace_in_arg(&user->args[a], from, to);
  }
  free(to->users);
  to->users = merged;
  to->nusers = k;
  to->cap_users = n ? n : 1;
  from->nusers = 0;
  for (int o = 0; o < g->noutputs; o++)
    if (g->outputs[o] == from) g->outputs[o] = to;
  return NULL;
}

/* Copying between graphs: values are mapped by id, dims re-interned in the
 * destination's symbol table. A specializing copy also has values for some
 * of the source's symbols: a dim they determine becomes concrete, and so
 * does a use of a SymInt value they determine. */
/* A map from ids (>= 0) to pointers, by open addressing: for work that
 * must be proportional to what it touches rather than to the graph (an
 * extracted partition of a few nodes out of 100k). */
typedef struct idmap {
  int *keys; /* -1: empty */
  void **vals;
  size_t cap, n;
} idmap;

static bool idmap_init(idmap *m, size_t expect) {
  m->cap = 16;
  while (m->cap < 2 * expect) m->cap *= 2;
  m->n = 0;
  m->keys = malloc(sizeof *m->keys * m->cap);
  m->vals = calloc(m->cap, sizeof *m->vals);
  if (!m->keys || !m->vals) {
    free(m->keys), free(m->vals);
    m->keys = NULL, m->vals = NULL;
    return false;
  }
  memset(m->keys, 0xff, sizeof *m->keys * m->cap);
  return true;
}

static void idmap_free(idmap *m) {
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

static size_t idmap_slot(const idmap *m, int key) {
  size_t mask = m->cap - 1, i = ((uint32_t)key * 2654435761u) & mask;
  while (m->keys[i] != -1 && m->keys[i] != key) i = (i + 1) & mask;
  return i;
}

static void *idmap_get(const idmap *m, int key) {
  if (!m->keys) return NULL;
  size_t i = idmap_slot(m, key);
  return m->keys[i] == key ? m->vals[i] : NULL;
}

static bool idmap_put(idmap *m, int key, void *val) {
  if (2 * (m->n + 1) > m->cap) {
    idmap bigger;
    if (!idmap_init(&bigger, m->cap)) return false;
    for (size_t i = 0; i < m->cap; i++)
      if (m->keys[i] != -1) {
        size_t j = idmap_slot(&bigger, m->keys[i]);
        bigger.keys[j] = m->keys[i], bigger.vals[j] = m->vals[i], bigger.n++;
      }
    idmap_free(m);
    *m = bigger;
  }
  size_t i = idmap_slot(m, key);
  if (m->keys[i] == -1) m->keys[i] = key, m->n++;
  m->vals[i] = val;
  return true;
}

struct alloy_graph_copy {
  const alloy_graph *src;
  alloy_graph *dst;
  alloy_value **map; /* src value id -> dst value; NULL when sparse */
  idmap sparse;      /* the same, for a copy of a few values (extract) */
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

static alloy_value *map_get(const graph_copy *c, const alloy_value *v) {
  return c->map ? c->map[v->id] : idmap_get(&c->sparse, v->id);
}

static void map_put(graph_copy *c, const alloy_value *v, alloy_value *to) {
  if (c->map) c->map[v->id] = to;
  else if (!idmap_put(&c->sparse, v->id, to) && !c->err) c->err = oom();
}

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
    dst->u.value = map_get(c, src->u.value);
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
  map_put(c, v, nv);
  return c->err;
}

static alloy_error *copy_node(graph_copy *c, const alloy_node *n) {
  /* Most nodes have a few arguments and one output: those are copied
   * through the stack (a clone copies every node, so three heap blocks a
   * node were a good part of its cost). */
  enum { SMALL_ARGS = 16, SMALL_OUTS = 4 };
  alloy_arg args_small[SMALL_ARGS];
  alloy_meta_out outs_small[SMALL_OUTS];
  const char *names_small[SMALL_OUTS];
  int na = n->op->schema->nargs;
  bool big_args = na > SMALL_ARGS, big_outs = n->nout > SMALL_OUTS;
  alloy_arg *args = big_args ? calloc((size_t)na, sizeof *args) : args_small;
  alloy_meta_out *outs = big_outs ? calloc((size_t)n->nout, sizeof *outs) : outs_small;
  const char **names = big_outs ? calloc((size_t)n->nout, sizeof *names) : names_small;
  alloy_error *e = NULL;
  if (!args || !outs || !names) e = oom();
  for (int i = 0; i < na && !e; i++) copy_arg(c, &n->args[i], &args[i]);
  for (int k = 0; k < n->nout && !e; k++) copy_type(c, n->outs[k], &outs[k]);
  if (!e) e = c->err;
  /* The outputs keep their names; in a node-by-node copy, a name that a
   * value the pass added has taken gives way to an automatic one. */
  for (int k = 0; k < n->nout && !e; k++) names[k] = n->outs[k]->name;
  alloy_node *nn = NULL;
  if (!e) e = append_node(c->dst, n->op, args, outs, n->nout, NULL, names, c->soft_names,
                          n->unbacked_first, &nn);
  for (int k = 0; k < n->nout && !e; k++) map_put(c, n->outs[k], nn->outs[k]);
  if (!e) e = c->err;
  if (big_args) free(args);
  if (big_outs) free(outs), free(names);
  return e;
}

/* Starts a copy of src: a map by value id for a whole-graph copy, or, when
 * sparse (the number of values it will map, about), a hash map, so that
 * the copy costs what it copies. */
static alloy_error *copy_begin(graph_copy *c, const alloy_graph *src, size_t sparse) {
  c->src = src;
  c->err = NULL;
  c->dst = alloy_graph_new();
  if (sparse) {
    if (!idmap_init(&c->sparse, sparse)) return oom();
  } else if (!(c->map = calloc((size_t)(src->nvalues ? src->nvalues : 1), sizeof *c->map))) {
    return oom();
  }
  if (!c->dst) return oom();
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

static void copy_free_map(graph_copy *c) {
  free(c->map);
  c->map = NULL;
  idmap_free(&c->sparse);
}

static void copy_abort(graph_copy *c) {
  alloy_graph_free(c->dst);
  copy_free_map(c);
}

static alloy_error *copy_whole(graph_copy *c, const alloy_graph *g, alloy_graph **out) {
  alloy_error *e = copy_begin(c, g, 0);
  for (int i = 0; i < g->ninputs && !e; i++) e = copy_input(c, g->inputs[i]);
  for (int i = 0; i < g->nnodes && !e; i++) e = copy_node(c, g->nodes[i]);
  if (!e) {
    alloy_value **outs = malloc(sizeof *outs * (size_t)(g->noutputs ? g->noutputs : 1));
    if (!outs) e = oom();
    for (int i = 0; i < g->noutputs && !e; i++) outs[i] = map_get(c, g->outputs[i]);
    if (!e) e = alloy_graph_set_outputs(c->dst, outs, g->noutputs);
    free(outs);
  }
  if (!e) e = copy_signature(c);
  if (e) {
    copy_abort(c);
    return e;
  }
  copy_free_map(c);
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
  alloy_error *e = copy_begin(c, src, 0);
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
  return map_get(c, v);
}

void alloy_copy_set(alloy_graph_copy *c, const alloy_value *from, alloy_value *to) {
  map_put(c, from, to);
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
    if (!(outs[i] = map_get(c, g->outputs[i])))
      e = alloy_error_new(ALLOY_ERR_INTERNAL, "graph output %s has no value in the copy",
                          g->outputs[i]->name);
  if (!e) e = alloy_graph_set_outputs(c->dst, outs, g->noutputs);
  free(outs);
  if (!e) e = copy_signature(c);
  if (e) {
    copy_abort(c);
  } else {
    copy_free_map(c);
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
  const idmap *inside; /* node id -> node, the extracted ones */
  alloy_error *err;
} extract_ctx;

/* The position of v among g's inputs, or -1: g->inputs is in id order (an
 * input is appended as it is made), so a binary search finds it. */
static int input_index(const alloy_graph *g, const alloy_value *v) {
  int lo = 0, hi = g->ninputs - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    if (g->inputs[mid]->id == v->id) return g->inputs[mid] == v ? mid : -1;
    if (g->inputs[mid]->id < v->id) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/* Whether node is one of g's: g->nodes is in id order (nodes are appended
 * with growing ids and dce keeps the order), so a binary search tells. */
static bool node_in_graph(const alloy_graph *g, const alloy_node *node) {
  int lo = 0, hi = g->nnodes - 1;
  while (node && lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    if (g->nodes[mid]->id == node->id) return g->nodes[mid] == node;
    if (g->nodes[mid]->id < node->id) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

static int by_node_id(const void *a, const void *b) {
  const alloy_node *x = *(alloy_node *const *)a, *y = *(alloy_node *const *)b;
  return (x->id > y->id) - (x->id < y->id);
}

/* A value defined outside the nodes becomes an input: a graph input keeps
 * its role, name and attachments; a value another node computes is an
 * intermediate. */
static void extract_input_fn(alloy_value *v, void *ctx) {
  extract_ctx *x = ctx;
  if (x->err || map_get(x->c, v)) return;
  if (v->producer && idmap_get(x->inside, v->producer->id)) return;
  alloy_graph *dst = x->c->dst;
  if ((x->err = copy_input(x->c, v))) return;
  int j = dst->ninputs - 1, i = input_index(x->c->src, v);
  if (i >= 0) x->err = copy_input_role(dst, j, x->c->src, i);
  else dst->in_roles[j].intermediate = true;
}

/* O(n log n + the values the nodes touch + g's outputs), independent of
 * the size of g: a mixture extracts every partition of a graph, and a
 * cost proportional to g made that quadratic. */
alloy_error *alloy_graph_extract(const alloy_graph *g,
                                 alloy_node *const *nodes, int n,
                                 alloy_graph **out) {
  for (int i = 0; i < n; i++)
    if (!node_in_graph(g, nodes[i]))
      return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                             "extract: node %d is not in the graph", i);
  /* The nodes in graph order (which is topological), each once. */
  alloy_node **order = malloc(sizeof *order * (size_t)(n ? n : 1));
  if (!order) return oom();
  if (n) memcpy(order, nodes, sizeof *order * (size_t)n);
  qsort(order, (size_t)n, sizeof *order, by_node_id);
  int m = 0, nouts_max = 0;
  for (int i = 0; i < n; i++)
    if (!m || order[m - 1] != order[i]) order[m++] = order[i], nouts_max += order[i]->nout;
  idmap inside = {0}, outputs = {0};
  graph_copy c = {0};
  alloy_error *e = NULL;
  if (!idmap_init(&inside, (size_t)m) || !idmap_init(&outputs, (size_t)g->noutputs)) e = oom();
  for (int i = 0; i < m && !e; i++)
    if (!idmap_put(&inside, order[i]->id, order[i])) e = oom();
  for (int i = 0; i < g->noutputs && !e; i++)
    if (!idmap_put(&outputs, g->outputs[i]->id, g->outputs[i])) e = oom();
  if (!e) e = copy_begin(&c, g, (size_t)m * 4 + 16);
  extract_ctx x = {&c, &inside, NULL};
  /* Inputs first, in graph order of first use, then the nodes. */
  for (int j = 0; j < m && !e; j++) {
    alloy_node *nd = order[j];
    for (int a = 0; a < nd->op->schema->nargs && !x.err; a++)
      alloy_arg_for_each_value(&nd->args[a], extract_input_fn, &x);
    e = x.err;
  }
  for (int j = 0; j < m && !e; j++) e = copy_node(&c, order[j]);
  alloy_value **outs = NULL;
  int nouts = 0;
  if (!e && !(outs = malloc(sizeof *outs * (size_t)(nouts_max ? nouts_max : 1)))) e = oom();
  for (int j = 0; j < m && !e; j++) {
    alloy_node *nd = order[j];
    for (int k = 0; k < nd->nout; k++) {
      alloy_value *v = nd->outs[k];
      bool used_outside = idmap_get(&outputs, v->id) == v;
      for (int u = 0; u < v->nusers && !used_outside; u++)
        used_outside = !idmap_get(&inside, v->users[u]->id);
      if (used_outside) outs[nouts++] = map_get(&c, v);
    }
  }
  if (!e) e = alloy_graph_set_outputs(c.dst, outs, nouts);
  free(outs);
  free(order);
  idmap_free(&inside);
  idmap_free(&outputs);
  if (e) {
    copy_abort(&c);
    return e;
  }
  copy_free_map(&c);
  *out = c.dst;
  return NULL;
}

alloy_error *alloy_graph_rename(alloy_graph *g, alloy_value *v,
                                const char *name) {
  if (!value_in_graph(g, v))
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "rename: a value of another graph");
  if (alloy_graph_find_value(g, name))
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                           "value name '%s' is already used", name);
  char *copy = alloy_arena_strdup(&g->arena, name);
  if (!copy) return oom();
  /* Out under the old name, in under the new: O(1), with no allocation
   * (the count is unchanged, so the table does not grow). */
  names_remove(g, v);
  v->name = copy;
  if (!names_insert(g, v)) return oom();
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
