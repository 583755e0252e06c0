/*
 * ir/pt2_graph.c: models/model.json (torch.export's serialized
 * ExportedProgram, schema 8.x) onto an Alloy graph.
 *
 * Graph inputs come in the order of the graph signature's input specs and
 * take their roles from it (user input, parameter, buffer, tensor constant);
 * outputs take theirs from the output specs (user output, buffer mutation,
 * user-input mutation). Each node is resolved in the op registry and built
 * with the graph builder, so arguments are matched to the schema (keyword
 * arguments by name, left-out ones take their defaults) and checked, and
 * the op's shape function types the outputs; the types PyTorch recorded in
 * tensor_values must then agree with Alloy's. Arguments are converted by
 * the schema's type, not by how the JSON happens to spell them: an empty
 * list, or ints for a float[], come out as the schema wants.
 *
 * Symbolic sizes are sympy srepr strings (ir/sympy.c) over the symbols of
 * range_constraints. SymInt values (sym_size and the `_operator` arithmetic
 * on them) are graph values; the higher-order op wrap_with_set_grad_enabled
 * is inlined, since grad mode means nothing to inference.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/graph_internal.h"
#include "ir/pt2.h"
#include "ir/sympy.h"

static const char model_entry[] = "models/model.json";

typedef struct binding {
  const char *name; /* borrowed from the JSON document */
  alloy_value *v;
} binding;

/* Names visible to a graph's nodes. The top graph's values carry their
 * export names; a name that could not be given (taken, or the value already
 * named) and every name of an inlined subgraph are bindings here, found
 * through a hash index (a later binding of a name replaces the earlier):
 * O(1) a lookup, so that a subgraph of n nodes imports in O(n). */
typedef struct scope {
  bool top;
  binding *items;
  int n, cap;
  int *index;               /* open addressing: item + 1, 0 for empty */
  int index_cap;            /* a power of two, at least twice n, or 0 */
  const jv *tensor_values;  /* name -> TensorMeta of this (sub)graph */
  const jv *sym_int_values; /* name -> SymInt */
} scope;

static void scope_free(scope *sc) {
  free(sc->items);
  free(sc->index);
}

/* One node's argument lists: chunks bumped through for a node and rewound
 * for the next, freed when the import ends (not a malloc and a free of a
 * block per node). */
typedef struct chunk {
  struct chunk *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
} chunk;

typedef struct scratch {
  chunk *first, *cur;
} scratch;

static void *scratch_alloc(scratch *s, size_t size) {
  size = (size + 15) & ~(size_t)15;
  for (chunk *c = s->cur; c; c = c->next) {
    if (c->cap - c->used >= size) {
      void *p = c->data + c->used;
      c->used += size;
      s->cur = c;
      return p;
    }
  }
  /* None of the chunks after the current one has room: a new one, last. */
  size_t cap = 64 * 1024;
  while (cap < size) cap *= 2;
  chunk *c = malloc(sizeof *c + cap);
  if (!c) return NULL;
  *c = (chunk){.used = size, .cap = cap};
  chunk **at = &s->first;
  while (*at) at = &(*at)->next;
  *at = c;
  s->cur = c;
  return c->data;
}

static void scratch_rewind(scratch *s) {
  for (chunk *c = s->first; c; c = c->next) c->used = 0;
  s->cur = s->first;
}

static void scratch_free(scratch *s) {
  for (chunk *c = s->first, *next; c; c = next) {
    next = c->next;
    free(c);
  }
  s->first = s->cur = NULL;
}

typedef struct imp {
  const char *file;    /* the archive, for errors */
  const char *root;    /* its root folder */
  alloy_graph *g;
  alloy_symtab *st;
  scratch scratch;     /* one node's argument lists */
  const char *node;    /* the node being imported, for errors */
  const char *op;
  int depth;           /* nesting of inlined subgraphs */
} imp;

static alloy_error *oom(void) {
  return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
}

/* Errors name the archive, the entry and, inside a node, the node and op. */
static alloy_error *fail(const imp *im, alloy_error_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static alloy_error *fail(const imp *im, alloy_error_code code, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (im->node)
    return alloy_error_new(code, "%s: %s%s: node '%s' (%s): %s", im->file, im->root, model_entry,
                           im->node, im->op ? im->op : "?", msg);
  return alloy_error_new(code, "%s: %s%s: %s", im->file, im->root, model_entry, msg);
}

static alloy_error *wrap(const imp *im, alloy_error *e) {
  if (!e) return NULL;
  alloy_error *w = fail(im, alloy_error_code_of(e), "%s", alloy_error_message(e));
  alloy_error_free(e);
  return w;
}

/* --- names ---------------------------------------------------------------*/

/* The index slot of name: where it is, or the empty slot it would take. */
static size_t scope_slot(const scope *sc, const char *name) {
  size_t mask = (size_t)sc->index_cap - 1, i = alloy_hash_str(name) & mask;
  for (; sc->index[i]; i = (i + 1) & mask)
    if (!strcmp(sc->items[sc->index[i] - 1].name, name)) break;
  return i;
}

static alloy_value *lookup(const imp *im, const scope *sc, const char *name) {
  if (sc->index_cap) {
    size_t i = scope_slot(sc, name);
    if (sc->index[i]) return sc->items[sc->index[i] - 1].v;
  }
  return sc->top ? alloy_graph_find_value(im->g, name) : NULL;
}

/* Makes `name` mean v. A value just made at the top level takes the name
 * itself; anything else is remembered as a binding. */
static alloy_error *bind(imp *im, scope *sc, const char *name, alloy_value *v, bool fresh) {
  if (sc->top && fresh) {
    /* (the rename fails when the name is taken: no lookup of ours first) */
    alloy_error *e = alloy_graph_rename(im->g, v, name);
    if (!e) return NULL;
    alloy_error_free(e);
  }
  if (sc->n == sc->cap) {
    int cap = sc->cap ? 2 * sc->cap : 16;
    binding *b = realloc(sc->items, sizeof *b * (size_t)cap);
    if (!b) return oom();
    sc->items = b;
    sc->cap = cap;
  }
  if ((sc->n + 1) * 2 > sc->index_cap) {
    /* A bigger index, rebuilt from the items: O(1) a binding, amortized. */
    int ncap = sc->index_cap ? 2 * sc->index_cap : 64;
    int *index = calloc((size_t)ncap, sizeof *index);
    if (!index) return oom();
    free(sc->index);
    sc->index = index;
    sc->index_cap = ncap;
    for (int k = 0; k < sc->n; k++) sc->index[scope_slot(sc, sc->items[k].name)] = k + 1;
  }
  sc->items[sc->n] = (binding){name, v};
  sc->index[scope_slot(sc, name)] = ++sc->n;
  return NULL;
}

/* {"name": "x"} (a TensorArgument) or {"as_name": "s"} (a SymInt's). */
static const char *arg_name(const jv *o, const char *key) {
  const jv *n = jv_get(o, key);
  return jv_is_string(n) ? jv_str(n) : NULL;
}

/* --- sizes and types -----------------------------------------------------*/

/* A SymInt as TensorMeta and sym_int_values spell it: {"as_int": n} or
 * {"as_expr": {"expr_str": "<sympy srepr>", "hint": ...}}. value: the
 * tensor it is a size of, or NULL for an entry of sym_int_values; errors
 * say which (the words are made only for an error: this runs for every
 * size of every value). */
static alloy_error *read_symint(imp *im, const jv *v, const char *value, alloy_dim *out) {
  const jv *i = jv_get(v, "as_int");
  if (jv_is_int(i)) {
    *out = alloy_dim_const(jv_int(i));
    return NULL;
  }
  char what[300] = "sym_int_values";
  if (value) snprintf(what, sizeof what, "value '%s' size", value);
  const jv *s = jv_get(jv_get(v, "as_expr"), "expr_str");
  if (!jv_is_string(s))
    return fail(im, ALLOY_ERR_PARSE, "%s: expected {\"as_int\": n} or {\"as_expr\": {...}}", what);
  alloy_error *e = alloy_sympy_parse(im->st, jv_str(s), jv_strlen(s), out);
  if (e) {
    alloy_error *w = fail(im, alloy_error_code_of(e), "%s: \"%.200s\": %s", what,
                          jv_str(s), alloy_error_message(e));
    alloy_error_free(e);
    return w;
  }
  return NULL;
}

static alloy_error *read_device(imp *im, const jv *d, alloy_device *out) {
  static const struct {
    const char *name;
    alloy_device_type type;
  } types[] = {{"cpu", ALLOY_DEVICE_CPU}, {"cuda", ALLOY_DEVICE_CUDA},
               {"hip", ALLOY_DEVICE_HIP}, {"meta", ALLOY_DEVICE_META}};
  const char *t = arg_name(d, "type");
  const jv *idx = jv_get(d, "index");
  for (size_t i = 0; t && i < sizeof types / sizeof *types; i++)
    if (!strcmp(t, types[i].name)) {
      out->type = types[i].type;
      out->index = jv_is_int(idx) ? (int32_t)jv_int(idx) : -1;
      return NULL;
    }
  return fail(im, ALLOY_ERR_UNSUPPORTED, "unsupported device '%s'", t ? t : "(none)");
}

/* The TensorMeta PyTorch recorded for value `name`: tm, its entry in
 * tensor_values (NULL when it has none). */
static alloy_error *tensor_meta(imp *im, const jv *tm, const char *name, alloy_meta_out *t,
                                alloy_device *dev) {
  if (!jv_is_object(tm))
    return fail(im, ALLOY_ERR_PARSE, "value '%s' has no entry in tensor_values", name);
  const jv *dt = jv_get(tm, "dtype"), *sizes = jv_get(tm, "sizes");
  memset(t, 0, sizeof *t);
  t->kind = ALLOY_VALUE_TENSOR;
  if (!jv_is_int(dt) || !pt2_dtype(jv_int(dt), &t->dtype))
    return fail(im, ALLOY_ERR_UNSUPPORTED, "value '%s': unsupported dtype %s", name,
                jv_is_int(dt) ? "(ScalarType number)" : "(missing)");
  if (!jv_is_array(sizes) || jv_array_size(sizes) > ALLOY_MAX_RANK)
    return fail(im, ALLOY_ERR_PARSE, "value '%s': sizes must be a list of at most 16", name);
  t->rank = (int32_t)jv_array_size(sizes);
  for (int d = 0; d < t->rank; d++) {
    alloy_error *e = read_symint(im, jv_at(sizes, (size_t)d), name, &t->shape[d]);
    if (e) return e;
  }
  if (dev) {
    dev->type = ALLOY_DEVICE_CPU;
    dev->index = -1;
    const jv *d = jv_get(tm, "device");
    if (d) return read_device(im, d, dev);
  }
  return NULL;
}

/* Whether d involves a data-dependent symbol: it cannot be evaluated with
 * only the backed symbols bound. */
static bool has_unbacked(const alloy_symtab *st, alloy_dim d) {
  enum { CAP = 256 };
  int n = alloy_symtab_count(st);
  if (alloy_dim_is_const(d) || n > CAP) return !alloy_dim_is_const(d);
  int64_t values[CAP];
  bool bound[CAP];
  for (int s = 0; s < n; s++) {
    int64_t lo, hi;
    alloy_symtab_range(st, s, &lo, &hi);
    values[s] = lo > 1 ? lo : 1;
    bound[s] = !alloy_symtab_is_unbacked(st, s);
  }
  int64_t out;
  alloy_error *e = alloy_dim_eval(st, d, values, bound, n, &out);
  bool unbound = e != NULL;
  alloy_error_free(e);
  return unbound;
}

/* PyTorch's recorded type for a node output against Alloy's inferred one. */
static alloy_error *check_type(imp *im, const scope *sc, const char *name, const alloy_value *v) {
  if (v->kind == ALLOY_VALUE_INT) {
    const jv *s = jv_get(sc->sym_int_values, name);
    alloy_dim want;
    if (!s) return NULL;
    alloy_error *e = read_symint(im, s, NULL, &want);
    if (e) return e;
    if (alloy_dim_same(want, v->int_value) || alloy_dim_eq(im->st, want, v->int_value) == ALLOY_TRUE)
      return NULL;
    char a[128], b[128];
    alloy_dim_print(want, a, sizeof a);
    alloy_dim_print(v->int_value, b, sizeof b);
    return fail(im, ALLOY_ERR_TYPE, "PyTorch recorded SymInt %s = %s, Alloy infers %s", name, a, b);
  }
  const jv *tm;
  if (v->kind != ALLOY_VALUE_TENSOR || !(tm = jv_get(sc->tensor_values, name))) return NULL;
  alloy_meta_out t;
  alloy_error *e = tensor_meta(im, tm, name, &t, NULL);
  if (e) return e;
  bool same = t.dtype == v->dtype && t.rank == v->rank;
  for (int d = 0; same && d < t.rank; d++) {
    /* A data-dependent size is named by whoever made it: PyTorch's u3 may
     * be Alloy's u0. Such dims are not compared. */
    if (has_unbacked(im->st, v->shape[d])) continue;
    same = alloy_dim_same(t.shape[d], v->shape[d]) ||
           alloy_dim_eq(im->st, t.shape[d], v->shape[d]) == ALLOY_TRUE;
  }
  if (same) return NULL;
  char want[256], got[256];
  alloy_value_type_print(ALLOY_VALUE_TENSOR, t.dtype, t.shape, t.rank, want, sizeof want);
  alloy_value_type_print(v->kind, v->dtype, v->shape, v->rank, got, sizeof got);
  return fail(im, ALLOY_ERR_TYPE, "value '%s': PyTorch recorded %s, Alloy's shape function gives %s",
              name, want, got);
}

/* --- arguments -----------------------------------------------------------*/

static alloy_arg *scratch_items(imp *im, size_t n) {
  return scratch_alloc(&im->scratch, sizeof(alloy_arg) * (n ? n : 1));
}

static alloy_error *value_arg(imp *im, const scope *sc, const char *name, alloy_arg *out) {
  if (!name) return fail(im, ALLOY_ERR_PARSE, "an argument names no value");
  alloy_value *v = lookup(im, sc, name);
  if (!v) return fail(im, ALLOY_ERR_PARSE, "unknown value '%s'", name);
  *out = alloy_arg_value(v);
  return NULL;
}

static alloy_error *float_of(imp *im, const jv *j, double *out) {
  if (jv_is_number(j)) return *out = jv_number(j), NULL;
  const char *s = jv_is_string(j) ? jv_str(j) : "";
  if (!strcmp(s, "Infinity") || !strcmp(s, "inf")) return *out = INFINITY, NULL;
  if (!strcmp(s, "-Infinity") || !strcmp(s, "-inf")) return *out = -INFINITY, NULL;
  if (!strcmp(s, "NaN") || !strcmp(s, "nan")) return *out = NAN, NULL;
  return fail(im, ALLOY_ERR_PARSE, "expected a float");
}

/* {"as_name": n} for a graph value or {"as_int"/"as_bool"/"as_float": x}. */
static alloy_error *sym_item(imp *im, const scope *sc, const jv *j, alloy_arg *out) {
  const char *name = arg_name(j, "as_name");
  const jv *x;
  if (name) return value_arg(im, sc, name, out);
  if (jv_is_int(x = jv_get(j, "as_int")))
    return *out = alloy_arg_int(jv_int(x)), NULL;
  if (jv_is_bool(x = jv_get(j, "as_bool")))
    return *out = alloy_arg_bool(jv_is_true(x)), NULL;
  if ((x = jv_get(j, "as_float"))) {
    *out = alloy_arg_float(0);
    return float_of(im, x, &out->u.f);
  }
  return fail(im, ALLOY_ERR_PARSE, "expected a symbolic value or a constant");
}

/* The export schema's MemoryFormat and Layout numbers. */
static bool memory_format_of(int64_t code, alloy_memory_format *out) {
  static const alloy_memory_format table[] = {
      [1] = ALLOY_MEMORY_CONTIGUOUS, [2] = ALLOY_MEMORY_CHANNELS_LAST,
      [3] = ALLOY_MEMORY_CHANNELS_LAST_3D, [4] = ALLOY_MEMORY_PRESERVE};
  if (code < 1 || code > 4) return false;
  *out = table[code];
  return true;
}
enum { EXPORT_LAYOUT_STRIDED = 7 };

/* One Argument (a single-key object "as_<kind>") as the schema type t wants it. */
static alloy_error *convert(imp *im, const scope *sc, const jv *arg, alloy_type t, alloy_arg *out) {
  const char *kind = NULL;
  const jv *v = NULL;
  if (jv_is_object(arg) && jv_object_size(arg) == 1) {
    const jv_member *m = jv_member_at(arg, 0);
    kind = m->key;
    v = &m->value;
  }
  if (!kind) return fail(im, ALLOY_ERR_PARSE, "an argument is not a one-key object");
  bool floats = t.kind == ALLOY_TYPE_FLOAT || t.kind == ALLOY_TYPE_SYMFLOAT;
  if (!strcmp(kind, "as_none")) return *out = alloy_arg_none(), NULL;
  if (!strcmp(kind, "as_tensor")) return value_arg(im, sc, arg_name(v, "name"), out);
  if (!strcmp(kind, "as_int")) {
    if (!jv_is_int(v)) return fail(im, ALLOY_ERR_PARSE, "as_int is not an integer");
    return *out = alloy_arg_int(jv_int(v)), NULL;
  }
  if (!strcmp(kind, "as_float")) {
    *out = alloy_arg_float(0);
    return float_of(im, v, &out->u.f);
  }
  if (!strcmp(kind, "as_bool")) {
    if (!jv_is_bool(v)) return fail(im, ALLOY_ERR_PARSE, "as_bool is not a bool");
    return *out = alloy_arg_bool(jv_is_true(v)), NULL;
  }
  if (!strcmp(kind, "as_string")) {
    if (!jv_is_string(v)) return fail(im, ALLOY_ERR_PARSE, "as_string is not a string");
    return *out = alloy_arg_str(jv_str(v)), NULL;
  }
  if (!strcmp(kind, "as_sym_int") || !strcmp(kind, "as_sym_bool") || !strcmp(kind, "as_sym_float"))
    return sym_item(im, sc, v, out);
  if (!strcmp(kind, "as_scalar_type")) {
    alloy_dtype d;
    if (!jv_is_int(v) || !pt2_dtype(jv_int(v), &d))
      return fail(im, ALLOY_ERR_UNSUPPORTED, "unsupported ScalarType %lld",
                  jv_is_int(v) ? (long long)jv_int(v) : -1LL);
    return *out = alloy_arg_dtype(d), NULL;
  }
  if (!strcmp(kind, "as_memory_format")) {
    *out = (alloy_arg){ALLOY_ARG_MEMORY_FORMAT, {0}};
    if (!jv_is_int(v) || !memory_format_of(jv_int(v), &out->u.memory_format))
      return fail(im, ALLOY_ERR_UNSUPPORTED, "unsupported MemoryFormat %lld",
                  jv_is_int(v) ? (long long)jv_int(v) : -1LL);
    return NULL;
  }
  if (!strcmp(kind, "as_layout")) {
    if (!jv_is_int(v) || jv_int(v) != EXPORT_LAYOUT_STRIDED)
      return fail(im, ALLOY_ERR_UNSUPPORTED, "only the strided layout is supported (got %lld)",
                  jv_is_int(v) ? (long long)jv_int(v) : -1LL);
    *out = (alloy_arg){ALLOY_ARG_LAYOUT, {0}};
    out->u.layout = ALLOY_LAYOUT_STRIDED;
    return NULL;
  }
  if (!strcmp(kind, "as_device")) {
    *out = (alloy_arg){ALLOY_ARG_DEVICE, {0}};
    return read_device(im, v, &out->u.device);
  }
  /* Lists: the items' kind comes from the key, their final type from t. */
  static const char *const list_kinds[] = {
      "as_tensors", "as_optional_tensors", "as_ints", "as_floats", "as_bools",
      "as_strings", "as_sym_ints", "as_sym_bools", "as_sym_floats"};
  int lk = -1;
  for (int i = 0; i < (int)(sizeof list_kinds / sizeof *list_kinds); i++)
    if (!strcmp(kind, list_kinds[i])) lk = i;
  if (lk < 0) return fail(im, ALLOY_ERR_UNSUPPORTED, "unsupported argument kind '%s'", kind);
  if (!jv_is_array(v)) return fail(im, ALLOY_ERR_PARSE, "%s is not a list", kind);
  size_t n = jv_array_size(v);
  alloy_arg *items = scratch_items(im, n);
  if (!items) return oom();
  for (size_t k = 0; k < n; k++) {
    const jv *x = jv_at(v, k);
    alloy_error *e = NULL;
    switch (lk) {
      case 0: e = value_arg(im, sc, arg_name(x, "name"), &items[k]); break;
      case 1: {
        const jv *tn = jv_get(x, "as_tensor");
        if (tn) e = value_arg(im, sc, arg_name(tn, "name"), &items[k]);
        else items[k] = alloy_arg_none();
        break;
      }
      case 2:
        if (!jv_is_int(x)) return fail(im, ALLOY_ERR_PARSE, "as_ints holds a non-integer");
        items[k] = floats ? alloy_arg_float((double)jv_int(x))
                          : alloy_arg_int(jv_int(x));
        break;
      case 3:
        items[k] = alloy_arg_float(0);
        e = float_of(im, x, &items[k].u.f);
        break;
      case 4:
        if (!jv_is_bool(x)) return fail(im, ALLOY_ERR_PARSE, "as_bools holds a non-bool");
        items[k] = alloy_arg_bool(jv_is_true(x));
        break;
      case 5:
        if (!jv_is_string(x)) return fail(im, ALLOY_ERR_PARSE, "as_strings holds a non-string");
        items[k] = alloy_arg_str(jv_str(x));
        break;
      default: e = sym_item(im, sc, x, &items[k]); break;
    }
    if (e) return e;
  }
  *out = alloy_arg_list(items, (int32_t)n);
  return NULL;
}

/* --- nodes ---------------------------------------------------------------*/

static alloy_error *import_nodes(imp *im, scope *sc, const jv *nodes);

/* The names a node's outputs list gives, flattened (NULL for an unused
 * output written as as_none). Returns the count, or -1 when malformed. */
static int output_names(const jv *outputs, const char **names, int cap) {
  int n = 0;
  size_t i;
  const jv *o;
  jv_array_foreach(outputs, i, o) {
    const jv *x;
    if ((x = jv_get(o, "as_tensors")) || (x = jv_get(o, "as_optional_tensors"))) {
      size_t k;
      const jv *item;
      jv_array_foreach(x, k, item) {
        if (n == cap) return -1;
        const jv *tn = jv_get(item, "as_tensor");
        names[n++] = arg_name(tn ? tn : item, "name");
      }
    } else if ((x = jv_get(o, "as_tensor"))) {
      if (n == cap) return -1;
      names[n++] = arg_name(x, "name");
    } else if ((x = jv_get(o, "as_sym_int")) || (x = jv_get(o, "as_sym_bool")) ||
               (x = jv_get(o, "as_sym_float"))) {
      if (n == cap) return -1;
      names[n++] = arg_name(x, "as_name");
    } else if (jv_get(o, "as_none")) {
      if (n == cap) return -1;
      names[n++] = NULL;
    } else {
      return -1;
    }
  }
  return n;
}

enum { MAX_OUTPUTS = 1024 };

/* wrap_with_set_grad_enabled(enabled, subgraph, *operands): the subgraph's
 * nodes are imported in place, its inputs bound to the operands. */
static alloy_error *inline_subgraph(imp *im, scope *sc, const jv *node) {
  const jv *inputs = jv_get(node, "inputs"), *sub = NULL;
  size_t at = 0, i;
  const jv *in;
  jv_array_foreach(inputs, i, in) {
    const jv *g = jv_get(jv_get(in, "arg"), "as_graph");
    if (g) {
      sub = jv_get(g, "graph");
      at = i + 1;
      break;
    }
  }
  const jv *sub_in = jv_get(sub, "inputs"), *sub_out = jv_get(sub, "outputs");
  if (!jv_is_array(sub_in) || !jv_is_array(sub_out) ||
      jv_array_size(inputs) - at != jv_array_size(sub_in))
    return fail(im, ALLOY_ERR_PARSE, "expected a subgraph and one operand per subgraph input");
  if (++im->depth > 16) return fail(im, ALLOY_ERR_UNSUPPORTED, "subgraphs nested too deep");
  scope inner = {.top = false,
                 .tensor_values = jv_get(sub, "tensor_values"),
                 .sym_int_values = jv_get(sub, "sym_int_values")};
  alloy_error *e = NULL;
  jv_array_foreach(sub_in, i, in) {
    alloy_arg a;
    const char *name = arg_name(jv_get(in, "as_tensor"), "name");
    const jv *operand = jv_get(jv_at(inputs, at + i), "arg");
    if (!name) e = fail(im, ALLOY_ERR_UNSUPPORTED, "a subgraph input that is not a tensor");
    if (!e) e = convert(im, sc, operand, (alloy_type){.kind = ALLOY_TYPE_TENSOR}, &a);
    if (!e && a.kind != ALLOY_ARG_VALUE)
      e = fail(im, ALLOY_ERR_UNSUPPORTED, "a subgraph operand that is not a value");
    if (!e) e = bind(im, &inner, name, a.u.value, false);
    if (e) break;
  }
  const char *node_name = im->node, *op = im->op;
  if (!e) e = import_nodes(im, &inner, jv_get(sub, "nodes"));
  im->node = node_name;
  im->op = op;
  /* The node's outputs are the subgraph's outputs. */
  const char *outer[MAX_OUTPUTS], *result[MAX_OUTPUTS];
  int no = e ? 0 : output_names(jv_get(node, "outputs"), outer, MAX_OUTPUTS);
  int nr = e ? 0 : output_names(sub_out, result, MAX_OUTPUTS);
  if (!e && (no < 0 || nr < 0 || no != nr))
    e = fail(im, ALLOY_ERR_PARSE, "the node has %d outputs, its subgraph %d", no, nr);
  for (int k = 0; k < no && !e; k++) {
    alloy_value *v = result[k] ? lookup(im, &inner, result[k]) : NULL;
    if (!v) e = fail(im, ALLOY_ERR_PARSE, "subgraph output %d is not a value", k);
    else if (outer[k]) e = bind(im, sc, outer[k], v, false);
  }
  scope_free(&inner);
  im->depth--;
  return e;
}

static alloy_error *import_node(imp *im, scope *sc, const jv *node) {
  const char *target = arg_name(node, "target");
  im->node = arg_name(node, "name") ? arg_name(node, "name") : "?";
  im->op = target;
  if (!target) return fail(im, ALLOY_ERR_PARSE, "a node has no target");
  const char *name = target;
  if (!strncmp(name, "torch.ops.", 10)) name += 10;
  if (!strcmp(name, "higher_order.wrap_with_set_grad_enabled")) return inline_subgraph(im, sc, node);
  if (!strncmp(name, "higher_order.", 13))
    return fail(im, ALLOY_ERR_UNSUPPORTED, "the higher-order op %s is not supported", name);
  const alloy_op *op = alloy_op_find(name);
  if (!op) return fail(im, ALLOY_ERR_NOT_FOUND, "unknown op '%s'", name);
  im->op = alloy_op_name(op);
  const alloy_schema *s = alloy_op_schema(op);
  const jv *inputs = jv_get(node, "inputs");
  if (!jv_is_array(inputs)) return fail(im, ALLOY_ERR_PARSE, "inputs is not a list");
  size_t n = jv_array_size(inputs);
  alloy_arg *pos = scratch_items(im, n), *kw = scratch_items(im, n);
  const char **kwnames = scratch_alloc(&im->scratch, sizeof *kwnames * (n ? n : 1));
  if (!pos || !kw || !kwnames) return oom();
  int npos = 0, nkw = 0;
  for (size_t i = 0; i < n; i++) {
    const jv *in = jv_at(inputs, i), *k = jv_get(in, "kind");
    const char *an = arg_name(in, "name");
    /* ArgumentKind: 1 positional, 2 keyword. */
    bool keyword = jv_is_int(k) && jv_int(k) == 2;
    int si = keyword ? (an ? alloy_schema_find_arg(s, an) : -1) : npos;
    if (si < 0 || si >= alloy_schema_num_args(s))
      return fail(im, ALLOY_ERR_PARSE, "argument %s matches nothing in the schema %s",
                  an && *an ? an : "(unnamed)", alloy_op_schema_text(op));
    alloy_arg a;
    alloy_error *e = convert(im, sc, jv_get(in, "arg"), alloy_schema_arg_at(s, si)->type, &a);
    if (e) {
      alloy_error *w = fail(im, alloy_error_code_of(e), "argument '%s': %s",
                            alloy_schema_arg_at(s, si)->name, alloy_error_message(e));
      alloy_error_free(e);
      return w;
    }
    if (keyword) {
      kwnames[nkw] = alloy_schema_arg_at(s, si)->name;
      kw[nkw++] = a;
    } else {
      pos[npos++] = a;
    }
  }
  alloy_node *nd;
  alloy_error *e = alloy_graph_add_node(im->g, op, pos, npos, kwnames, kw, nkw, NULL, &nd);
  scratch_rewind(&im->scratch);
  if (e) return wrap(im, e);
  const char *names[MAX_OUTPUTS];
  int nn = output_names(jv_get(node, "outputs"), names, MAX_OUTPUTS);
  if (nn < 0) return fail(im, ALLOY_ERR_PARSE, "malformed outputs");
  /* A node with one Tensor[] output that nothing reads may list none. */
  if (nn != alloy_node_num_outputs(nd) && nn != 0)
    return fail(im, ALLOY_ERR_TYPE, "PyTorch lists %d outputs, Alloy's shape function gives %d",
                nn, alloy_node_num_outputs(nd));
  for (int k = 0; k < nn && !e; k++) {
    if (!names[k]) continue;
    alloy_value *v = alloy_node_output(nd, k);
    if (!(e = bind(im, sc, names[k], v, true))) e = check_type(im, sc, names[k], v);
  }
  return e;
}

static alloy_error *import_nodes(imp *im, scope *sc, const jv *nodes) {
  if (!jv_is_array(nodes)) return fail(im, ALLOY_ERR_PARSE, "nodes is not a list");
  size_t i;
  const jv *node;
  jv_array_foreach(nodes, i, node) {
    alloy_error *e = import_node(im, sc, node);
    if (e) return e;
  }
  im->node = NULL;
  return NULL;
}

/* --- the program ---------------------------------------------------------*/

static alloy_error *read_ranges(imp *im, const jv *ranges) {
  for (size_t i = 0; i < jv_object_size(ranges); i++) {
    const char *name = jv_member_at(ranges, i)->key;
    const jv *r = &jv_member_at(ranges, i)->value;
    const jv *lo = jv_get(r, "min_val"), *hi = jv_get(r, "max_val");
    /* Data-dependent symbols are made, and named, by the shape functions. */
    if (name[0] == 'u' && name[1] >= '0' && name[1] <= '9') continue;
    /* An unbounded end is written as null or as a huge integer. */
    int64_t l = jv_is_int(lo) ? jv_int(lo) : 0;
    int64_t h = jv_is_int(hi) && jv_int(hi) < ((int64_t)1 << 62) ? jv_int(hi) : ALLOY_SYM_INF;
    alloy_dim d;
    alloy_error *e = alloy_sym_new(im->st, name, l, h, &d);
    if (e) return wrap(im, e);
  }
  return NULL;
}

/* Graph inputs in input-spec order, with their roles. */
static alloy_error *read_inputs(imp *im, scope *sc, const jv *graph, const jv *specs) {
  const jv *inputs = jv_get(graph, "inputs");
  if (!jv_is_array(inputs) || !jv_is_array(specs) ||
      jv_array_size(inputs) != jv_array_size(specs))
    return fail(im, ALLOY_ERR_PARSE, "graph inputs and signature input_specs disagree in number");
  static const struct {
    const char *spec, *name_key;
    alloy_input_role role;
  } roles[] = {{"user_input", NULL, ALLOY_INPUT_USER},
               {"parameter", "parameter_name", ALLOY_INPUT_PARAMETER},
               {"buffer", "buffer_name", ALLOY_INPUT_BUFFER},
               {"tensor_constant", "tensor_constant_name", ALLOY_INPUT_CONSTANT}};
  size_t i;
  const jv *in;
  jv_array_foreach(inputs, i, in) {
    const jv *spec = jv_at(specs, i);
    const char *kind = jv_object_size(spec) ? jv_member_at(spec, 0)->key : NULL;
    const jv *body = kind ? jv_get(spec, kind) : NULL;
    int r = -1;
    for (int k = 0; kind && k < (int)(sizeof roles / sizeof *roles); k++)
      if (!strcmp(kind, roles[k].spec)) r = k;
    if (r < 0)
      return fail(im, ALLOY_ERR_UNSUPPORTED, "input %zu: unsupported input kind '%s'", i,
                  kind ? kind : "(none)");
    const char *ref = roles[r].name_key ? arg_name(body, roles[r].name_key) : NULL;
    if (roles[r].name_key && !ref)
      return fail(im, ALLOY_ERR_PARSE, "input %zu: %s without %s", i, kind, roles[r].name_key);
    alloy_value_type vt = {.kind = ALLOY_VALUE_TENSOR};
    alloy_meta_out t;
    const char *name = arg_name(jv_get(in, "as_tensor"), "name");
    alloy_error *e = NULL;
    if (name) {
      e = tensor_meta(im, jv_get(sc->tensor_values, name), name, &t, &vt.device);
      vt.dtype = t.dtype;
      vt.rank = t.rank;
      vt.shape = t.shape;
    } else if ((name = arg_name(jv_get(in, "as_sym_int"), "as_name"))) {
      vt.kind = ALLOY_VALUE_INT;
      vt.dtype = ALLOY_I64;
      const jv *sv = jv_get(sc->sym_int_values, name);
      e = sv ? read_symint(im, sv, NULL, &vt.int_value)
             : fail(im, ALLOY_ERR_PARSE, "input %s has no sym_int_values entry", name);
    } else {
      return fail(im, ALLOY_ERR_UNSUPPORTED, "input %zu is neither a tensor nor a SymInt", i);
    }
    alloy_value *v;
    if (!e) e = wrap(im, alloy_graph_add_input(im->g, name, &vt, &v));
    if (!e && r) e = wrap(im, alloy_graph_set_input_role(im->g, (int)i, roles[r].role, ref));
    if (e) return e;
  }
  return NULL;
}

static alloy_error *read_outputs(imp *im, scope *sc, const jv *graph, const jv *specs) {
  const jv *outputs = jv_get(graph, "outputs");
  if (!jv_is_array(outputs) || !jv_is_array(specs) ||
      jv_array_size(outputs) != jv_array_size(specs))
    return fail(im, ALLOY_ERR_PARSE, "graph outputs and signature output_specs disagree in number");
  size_t n = jv_array_size(outputs), i;
  alloy_value **vals = calloc(n ? n : 1, sizeof *vals);
  if (!vals) return oom();
  alloy_error *e = NULL;
  const jv *o;
  jv_array_foreach(outputs, i, o) {
    const char *name = arg_name(jv_get(o, "as_tensor"), "name");
    if (!name) name = arg_name(jv_get(o, "as_sym_int"), "as_name");
    if (!name || !(vals[i] = lookup(im, sc, name))) {
      e = fail(im, ALLOY_ERR_UNSUPPORTED, "output %zu is not a tensor or SymInt of the graph", i);
      break;
    }
  }
  if (!e) e = wrap(im, alloy_graph_set_outputs(im->g, vals, (int)n));
  free(vals);
  const jv *spec;
  jv_array_foreach(specs, i, spec) {
    if (e) break;
    /* (an empty object is no kind either: "" too, not a NULL for strcmp) */
    const char *kind = jv_object_size(spec) ? jv_member_at(spec, 0)->key : "";
    const jv *body = jv_get(spec, kind);
    if (!strcmp(kind, "user_output")) continue;
    if (!strcmp(kind, "buffer_mutation"))
      e = wrap(im, alloy_graph_set_output_role(im->g, (int)i, ALLOY_OUTPUT_BUFFER_MUTATION,
                                               arg_name(body, "buffer_name")));
    else if (!strcmp(kind, "user_input_mutation"))
      e = wrap(im, alloy_graph_set_output_role(im->g, (int)i, ALLOY_OUTPUT_INPUT_MUTATION,
                                               arg_name(body, "user_input_name")));
    else
      e = fail(im, ALLOY_ERR_UNSUPPORTED, "output %zu: unsupported output kind '%s'", i, kind);
  }
  return e;
}

alloy_error *pt2_graph_from_doc(const char *file, const char *folder, const jv *root,
                                alloy_graph **out) {
  alloy_error *e = NULL;
  imp im = {.file = file, .root = folder};
  *out = NULL;
  const jv *ver = jv_get(jv_get(root, "schema_version"), "major");
  const jv *gm = jv_get(root, "graph_module");
  const jv *graph = jv_get(gm, "graph"), *sig = jv_get(gm, "signature");
  if (!jv_is_int(ver) || jv_int(ver) != 8)
    e = fail(&im, ALLOY_ERR_UNSUPPORTED, "export schema version %lld; Alloy reads version 8",
             jv_is_int(ver) ? (long long)jv_int(ver) : -1LL);
  else if (!jv_is_object(graph) || !jv_is_object(sig))
    e = fail(&im, ALLOY_ERR_PARSE, "no graph_module.graph or graph_module.signature");
  if (!e && !(im.g = alloy_graph_new())) e = oom();
  scope top = {.top = true};
  if (!e) {
    im.st = alloy_graph_symtab(im.g);
    top.tensor_values = jv_get(graph, "tensor_values");
    top.sym_int_values = jv_get(graph, "sym_int_values");
    e = read_ranges(&im, jv_get(root, "range_constraints"));
  }
  if (!e) e = read_inputs(&im, &top, graph, jv_get(sig, "input_specs"));
  if (!e) e = import_nodes(&im, &top, jv_get(graph, "nodes"));
  if (!e) e = read_outputs(&im, &top, graph, jv_get(sig, "output_specs"));
  scope_free(&top);
  scratch_free(&im.scratch);
  if (e) alloy_graph_free(im.g);
  else *out = im.g;
  return e;
}

alloy_error *pt2_graph_from_json(const char *file, const char *folder, json_t *root,
                                 alloy_graph **out) {
  *out = NULL;
  /* Anything but an object is no export program: the same error as from
   * the document, without writing it out. */
  if (!json_is_object(root)) return pt2_graph_from_doc(file, folder, NULL, out);
  imp im = {.file = file, .root = folder};
  char *text = json_dumps(root, JSON_COMPACT);
  if (!text) return oom();
  jv_doc doc = {0};
  const jv *top;
  jv_error err;
  alloy_error *e = NULL;
  if (!jv_parse(&doc, text, strlen(text), &top, &err))
    e = err.oom ? oom() : fail(&im, ALLOY_ERR_PARSE, "%s", err.text);
  free(text);
  if (!e) e = pt2_graph_from_doc(file, folder, top, out);
  jv_doc_free(&doc);
  return e;
}

alloy_error *pt2_load_graph(pt2_archive *a, alloy_model *m) {
  jv_doc doc = {0};
  const jv *root;
  alloy_error *e = pt2_archive_doc(a, model_entry, &doc, &root);
  if (!e) e = pt2_graph_from_doc(pt2_archive_file(a), pt2_archive_root(a), root, &m->graph);
  jv_doc_free(&doc);
  return e;
}

alloy_error *alloy_pt2_load(const char *path, const void *data, size_t size, alloy_model *m) {
  pt2_archive *a;
  alloy_error *e = pt2_archive_open(path, data, size, &a);
  if (e) return e;
  /* The graph first: the weights are checked against its inputs' types
   * before their storages are read (pt2_archive.c). */
  e = pt2_load_graph(a, m);
  if (!e) e = pt2_load_weights(a, m);
  pt2_archive_close(a);
  return e;
}
