/*
 * ir/registry.c: the op registry, built once from the op table compiled into
 * the library (ir/ops/ops.txt, turned into a string array by the build) and
 * from the shape-function tables of ir/meta_*.c.
 *
 * Built lazily under pthread_once; afterwards it is read-only, so lookups
 * need no lock. Names are found through an open-addressing hash table that
 * holds both spellings, "aten.add.Tensor" and "aten::add.Tensor".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

extern const char *const alloy_op_table_lines[];
extern const int alloy_op_table_count;

/* The shape-function tables, one per family file; each ends with {NULL}. */
extern const alloy_meta_entry alloy_meta_pointwise[], alloy_meta_reduce[],
    alloy_meta_shape[], alloy_meta_nn[], alloy_meta_index[],
    alloy_meta_linalg[], alloy_meta_factory[], alloy_meta_prims[],
    alloy_meta_misc[];
extern const alloy_meta_entry alloy_meta_functional[];
extern const alloy_meta_entry alloy_meta_shape_composite[];
extern const alloy_meta_entry alloy_meta_activation[];
extern const alloy_meta_entry alloy_meta_nn_composite[];
static const alloy_meta_entry *const meta_tables[] = {
    alloy_meta_pointwise, alloy_meta_reduce,  alloy_meta_shape,
    alloy_meta_nn,        alloy_meta_index,   alloy_meta_linalg,
    alloy_meta_factory,   alloy_meta_prims,   alloy_meta_misc,
    alloy_meta_functional,
    alloy_meta_shape_composite,
    alloy_meta_activation,
    alloy_meta_nn_composite,
};

alloy_error *alloy_schema_parse_into(alloy_arena *arena, const char *text,
                                     alloy_schema *out);

static struct {
  alloy_arena arena;
  alloy_op *ops;
  int nops;
  const alloy_op **slots; /* hash table of names -> op */
  const char **slot_names;
  size_t nslots;
  alloy_error *err;
} reg;

static pthread_once_t reg_once = PTHREAD_ONCE_INIT;

static const alloy_op *lookup(const char *name) {
  if (!reg.nslots) return NULL;
  size_t mask = reg.nslots - 1;
  for (size_t i = alloy_hash_str(name) & mask;; i = (i + 1) & mask) {
    if (!reg.slot_names[i]) return NULL;
    if (!strcmp(reg.slot_names[i], name)) return reg.slots[i];
  }
}

static void insert(const char *name, const alloy_op *op) {
  size_t mask = reg.nslots - 1;
  size_t i = alloy_hash_str(name) & mask;
  while (reg.slot_names[i]) i = (i + 1) & mask;
  reg.slot_names[i] = name;
  reg.slots[i] = op;
}

static const struct {
  const char *name;
  uint32_t tag;
} tag_names[] = {
    {"core", ALLOY_TAG_CORE},
    {"pointwise", ALLOY_TAG_POINTWISE},
    {"nondeterministic", ALLOY_TAG_NONDETERMINISTIC},
    {"reduction", ALLOY_TAG_REDUCTION},
    {"dynamic_output_shape", ALLOY_TAG_DYNAMIC_OUTPUT_SHAPE},
    {"data_dependent_output", ALLOY_TAG_DATA_DEPENDENT_OUTPUT},
};

static alloy_error *parse_tags(const char *s, uint32_t *tags, int line) {
  while (*s) {
    while (*s == ' ') s++;
    size_t n = strcspn(s, " ");
    if (!n) break;
    size_t k = 0;
    while (k < sizeof tag_names / sizeof tag_names[0] &&
           !(strlen(tag_names[k].name) == n && !strncmp(tag_names[k].name, s, n)))
      k++;
    if (k == sizeof tag_names / sizeof tag_names[0])
      return alloy_error_new(ALLOY_ERR_INTERNAL, "ir/ops/ops.txt op %d: unknown tag '%.*s'",
                             line, (int)n, s);
    *tags |= tag_names[k].tag;
    s += n;
  }
  return NULL;
}

/* Tags that the alias annotations imply. */
static uint32_t schema_tags(const alloy_schema *s) {
  uint32_t tags = 0;
  bool writes = false;
  for (int i = 0; i < s->nargs; i++) writes |= s->args[i].alias_write;
  if (writes) tags |= ALLOY_TAG_MUTATES;
  size_t n = strlen(s->name);
  if (writes && s->nargs && s->args[0].alias_write && n > 1 && s->name[n - 1] == '_')
    tags |= ALLOY_TAG_INPLACE;
  for (int i = 0; i < s->nreturns; i++)
    if (s->returns[i].alias_set && !s->returns[i].alias_write) tags |= ALLOY_TAG_VIEW;
  if (!strncmp(s->name, "prims::", 7)) tags |= ALLOY_TAG_PRIM;
  return tags;
}

static alloy_error *load_op(int id, const char *line) {
  alloy_op *op = &reg.ops[id];
  const char *bar = strstr(line, " | ");
  size_t schema_len = bar ? (size_t)(bar - line) : strlen(line);
  op->id = id;
  op->schema_text = alloy_arena_strndup(&reg.arena, line, schema_len);
  op->schema = alloy_arena_alloc(&reg.arena, sizeof *op->schema);
  if (!op->schema_text || !op->schema)
    return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  alloy_error *e = alloy_schema_parse_into(&reg.arena, op->schema_text, op->schema);
  if (e) return alloy_error_wrap(e, "ir/ops/ops.txt op %d", id);
  if (bar && (e = parse_tags(bar + 3, &op->tags, id))) return e;
  op->tags |= schema_tags(op->schema);
  /* "aten::add" + "Tensor" -> "aten.add.Tensor"; no overload -> ".default" */
  const char *name = op->schema->name, *ov = op->schema->overload;
  char buf[256];
  const char *colons = strstr(name, "::");
  snprintf(buf, sizeof buf, "%.*s.%s.%s", (int)(colons - name), name, colons + 2,
           ov[0] ? ov : "default");
  char full[256];
  snprintf(full, sizeof full, "%s%s%s", name, ov[0] ? "." : "", ov);
  op->name = alloy_arena_strdup(&reg.arena, buf);
  char *full_copy = alloy_arena_strdup(&reg.arena, full);
  if (!op->name || !full_copy)
    return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  if (lookup(op->name))
    return alloy_error_new(ALLOY_ERR_INTERNAL, "ir/ops/ops.txt: %s listed twice", op->name);
  insert(op->name, op);
  insert(full_copy, op);
  return NULL;
}

static alloy_error *attach_meta(void) {
  for (size_t t = 0; t < sizeof meta_tables / sizeof meta_tables[0]; t++)
    for (const alloy_meta_entry *m = meta_tables[t]; m->op; m++) {
      alloy_op *op = (alloy_op *)lookup(m->op);
      if (!op)
        return alloy_error_new(ALLOY_ERR_INTERNAL,
                               "shape function table names unknown op %s", m->op);
      if (op->meta)
        return alloy_error_new(ALLOY_ERR_INTERNAL,
                               "two shape functions registered for %s", m->op);
      op->meta = m->fn;
      op->meta_param = m->param;
    }
  return NULL;
}

static alloy_error *attach_dtype_refusals(void) {
  for (const alloy_dtype_refusal *r = alloy_cpu_dtype_refusals; r->op; r++) {
    alloy_op *op = (alloy_op *)lookup(r->op);
    if (!op)
      return alloy_error_new(ALLOY_ERR_INTERNAL, "ir/meta_dtypes.c names unknown op %s", r->op);
    op->refused_dtypes = r->dtypes;
    op->refused_by_input = r->by_input;
  }
  return NULL;
}

static void registry_build(void) {
  int n = alloy_op_table_count;
  reg.nslots = 16;
  while (reg.nslots < (size_t)n * 4) reg.nslots *= 2;
  reg.ops = alloy_arena_alloc(&reg.arena, sizeof *reg.ops * (size_t)n);
  reg.slots = alloy_arena_alloc(&reg.arena, sizeof *reg.slots * reg.nslots);
  reg.slot_names = alloy_arena_alloc(&reg.arena, sizeof *reg.slot_names * reg.nslots);
  if (!reg.ops || !reg.slots || !reg.slot_names) {
    reg.err = alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
    return;
  }
  for (int i = 0; i < n && !reg.err; i++) reg.err = load_op(i, alloy_op_table_lines[i]);
  if (!reg.err) reg.err = attach_meta();
  if (!reg.err) reg.err = attach_dtype_refusals();
  reg.nops = reg.err ? 0 : n;
}

static void registry_release(void) {
  alloy_error_free(reg.err);
  alloy_arena_free(&reg.arena);
}

static void registry_once(void) {
  registry_build();
  atexit(registry_release); /* keeps leak checkers quiet */
}

alloy_error *alloy_registry_init(void) {
  pthread_once(&reg_once, registry_once);
  return reg.err ? alloy_error_new(alloy_error_code_of(reg.err), "%s",
                                   alloy_error_message(reg.err))
                 : NULL;
}

int alloy_op_count(void) {
  pthread_once(&reg_once, registry_once);
  return reg.nops;
}

const alloy_op *alloy_op_by_id(int id) {
  pthread_once(&reg_once, registry_once);
  return id >= 0 && id < reg.nops ? &reg.ops[id] : NULL;
}

const alloy_op *alloy_op_find(const char *name) {
  pthread_once(&reg_once, registry_once);
  if (reg.err) return NULL;
  const alloy_op *op = lookup(name);
  if (op) return op;
  /* "aten.abs" and "aten::abs.default" name the default overload. */
  char buf[256];
  size_t n = strlen(name);
  if (n + 9 >= sizeof buf) return NULL;
  const char *colons = strstr(name, "::");
  if (colons && n > 8 && !strcmp(name + n - 8, ".default")) {
    memcpy(buf, name, n - 8);
    buf[n - 8] = '\0';
    return lookup(buf);
  }
  snprintf(buf, sizeof buf, "%s.default", name);
  return lookup(buf);
}

int alloy_op_id(const alloy_op *op) { return op->id; }
const char *alloy_op_name(const alloy_op *op) { return op->name; }
const char *alloy_op_schema_text(const alloy_op *op) { return op->schema_text; }
uint32_t alloy_op_tags(const alloy_op *op) { return op->tags; }
const alloy_schema *alloy_op_schema(const alloy_op *op) { return op->schema; }
