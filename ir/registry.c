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
extern const alloy_meta_entry alloy_meta_shape_composite[], alloy_meta_views[];
extern const alloy_meta_entry alloy_meta_activation[];
extern const alloy_meta_entry alloy_meta_nn_composite[];
extern const alloy_meta_entry alloy_meta_backward[], alloy_meta_random[], alloy_meta_fft[],
    alloy_meta_rnn[];
static const alloy_meta_entry *const meta_tables[] = {
    alloy_meta_pointwise, alloy_meta_reduce,  alloy_meta_shape,
    alloy_meta_nn,        alloy_meta_index,   alloy_meta_linalg,
    alloy_meta_factory,   alloy_meta_prims,   alloy_meta_misc,
    alloy_meta_functional,
    alloy_meta_shape_composite, alloy_meta_views,
    alloy_meta_activation,
    alloy_meta_nn_composite,
    alloy_meta_backward, alloy_meta_random, alloy_meta_fft, alloy_meta_rnn,
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
    {"nondeterministic_seeded", ALLOY_TAG_NONDETERMINISTIC_SEEDED},
    {"generated", ALLOY_TAG_GENERATED},
    {"view_copy", ALLOY_TAG_VIEW_COPY},
    {"inplace_view", ALLOY_TAG_INPLACE_VIEW},
    {"pt2_compliant", ALLOY_TAG_PT2_COMPLIANT},
    {"maybe_aliasing_or_mutating", ALLOY_TAG_MAYBE_ALIASING_OR_MUTATING},
    {"needs_exact_strides", ALLOY_TAG_NEEDS_EXACT_STRIDES},
    {"needs_fixed_stride_order", ALLOY_TAG_NEEDS_FIXED_STRIDE_ORDER},
};

static const char *const kind_names[] = {
    [ALLOY_OP_FUNCTIONAL] = "functional",
    [ALLOY_OP_INPLACE] = "inplace",
    [ALLOY_OP_OUT] = "out",
    [ALLOY_OP_VIEW] = "view",
};

static alloy_error *parse_tags(const char *s, alloy_op *op, int line) {
  while (*s) {
    while (*s == ' ') s++;
    size_t n = strcspn(s, " ");
    if (!n) break;
    if (n > 5 && !strncmp(s, "kind=", 5)) {
      int k = 0;
      while (k < ALLOY_OP_KIND_COUNT &&
             !(strlen(kind_names[k]) == n - 5 && !strncmp(kind_names[k], s + 5, n - 5)))
        k++;
      if (k == ALLOY_OP_KIND_COUNT)
        return alloy_error_new(ALLOY_ERR_INTERNAL, "ir/ops/ops.txt op %d: unknown kind '%.*s'",
                               line, (int)n, s);
      op->kind = (alloy_op_kind)k;
      op->kind_given = true;
      s += n;
      continue;
    }
    if ((n == 9 && !strncmp(s, "pt_decomp", 9)) || (n == 14 && !strncmp(s, "pt_core_decomp", 14))) {
      *(n == 9 ? &op->pt_decomp : &op->pt_core_decomp) = true;
      s += n;
      continue;
    }
    uint32_t *tags = &op->tags;
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

/* The kind of an op PyTorch's table does not classify (the Python
 * operators), by torchgen's rules: kwarg-only written tensors are out=,
 * a written self of a trailing-underscore op is in-place. */
static alloy_op_kind schema_kind(const alloy_schema *s, uint32_t tags) {
  for (int i = 0; i < s->nargs; i++)
    if (s->args[i].kwarg_only && s->args[i].alias_write) return ALLOY_OP_OUT;
  if (tags & ALLOY_TAG_INPLACE) return ALLOY_OP_INPLACE;
  if (tags & ALLOY_TAG_VIEW) return ALLOY_OP_VIEW;
  return ALLOY_OP_FUNCTIONAL;
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
  if (bar && (e = parse_tags(bar + 3, op, id))) return e;
  op->tags |= schema_tags(op->schema);
  if (!op->kind_given) op->kind = schema_kind(op->schema, op->tags);
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

/* --- functional siblings -------------------------------------------------------
 *
 * torchgen groups an in-place op (add_.Tensor), its out= op (add.out) and
 * its functional op (add.Tensor) by signature: the same base name, and the
 * same arguments once self's write and the out= tensors are set aside.
 * The registry pairs them the same way, so that functionalization turns any
 * of the 1,500 mutating overloads into its functional op from the schemas
 * alone. The overload name picks first (add_.Tensor -> add.Tensor,
 * pow.Tensor_Scalar_out -> pow.Tensor_Scalar, add.out -> add.default);
 * otherwise any functional overload of the base name whose arguments match
 * (max.dim_max -> max.dim). */

static bool type_same(const alloy_schema_arg *a, const alloy_schema_arg *b) {
  return a->type.kind == b->type.kind && a->type.list == b->type.list &&
         a->type.optional == b->type.optional;
}

static bool is_inplace(const alloy_op *op) {
  return op->kind == ALLOY_OP_INPLACE || (op->tags & ALLOY_TAG_INPLACE);
}

/* Whether functional op f computes mutating op m: every argument of m but
 * its out= tensors is an argument of f of the same name and type (an
 * in-place op's self may be f's first tensor under another name: dropout_'s
 * self is dropout's input), and every other argument of f has a default
 * (the TensorOptions a factory's out= form leaves to its out tensor). */
static bool signature_matches(const alloy_op *m, const alloy_op *f) {
  const alloy_schema *ms = m->schema, *fs = f->schema;
  bool self_renamed = is_inplace(m) && ms->nargs && fs->nargs &&
                      alloy_schema_find_arg(fs, ms->args[0].name) < 0;
  for (int i = 0; i < ms->nargs; i++) {
    const alloy_schema_arg *a = &ms->args[i];
    if (a->alias_write && a->kwarg_only) continue; /* an out= tensor */
    int j = i == 0 && self_renamed ? 0 : alloy_schema_find_arg(fs, a->name);
    if (j < 0 || !type_same(a, &fs->args[j])) return false;
  }
  for (int j = self_renamed; j < fs->nargs; j++) {
    int i = alloy_schema_find_arg(ms, fs->args[j].name);
    bool given = i >= 0 && !(ms->args[i].alias_write && ms->args[i].kwarg_only);
    if (!given && !fs->args[j].has_default && !fs->args[j].type.optional) return false;
  }
  return true;
}

/* The base name of op's functional twin: "aten::add_" -> "aten::add",
 * Python's augmented operators "aten::__iand__" -> "aten::__and__"; the
 * name itself for out= ops. */
static void functional_base(const alloy_op *op, char *buf, size_t cap) {
  const char *name = op->schema->name, *sep = strstr(name, "::");
  const char *base = sep ? sep + 2 : name;
  size_t n = strlen(name), nb = strlen(base);
  if (!is_inplace(op)) snprintf(buf, cap, "%s", name);
  else if (nb > 5 && !strncmp(base, "__i", 3) && !strcmp(base + nb - 2, "__"))
    snprintf(buf, cap, "%.*s__%s", (int)(base - name), name, base + 3);
  else
    snprintf(buf, cap, "%.*s", (int)(n > 1 && name[n - 1] == '_' ? n - 1 : n), name);
}

static const alloy_op *sibling_by_name(const alloy_op *op, const char *fbase) {
  const char *ov = op->schema->overload;
  size_t ol = strlen(ov);
  char buf[400];
  if (is_inplace(op)) snprintf(buf, sizeof buf, "%s%s%s", fbase, ol ? "." : "", ov);
  else if (ol > 4 && !strcmp(ov + ol - 4, "_out"))
    snprintf(buf, sizeof buf, "%s.%.*s", fbase, (int)(ol - 4), ov);
  else if (!strcmp(ov, "out"))
    snprintf(buf, sizeof buf, "%s", fbase);
  else
    return NULL;
  const alloy_op *f = lookup(buf);
  return f && f != op && !(f->tags & ALLOY_TAG_MUTATES) ? f : NULL;
}

/* How each argument of op's functional twin is given (alloy_op_functional_arg). */
static void map_arguments(alloy_op *op) {
  const alloy_schema *ms = op->schema, *fs = op->functional->schema;
  int16_t *map = alloy_arena_alloc(&reg.arena, sizeof *map * (size_t)(fs->nargs ? fs->nargs : 1));
  if (!map) {
    op->functional = NULL; /* out of memory: the op is left as it is */
    return;
  }
  bool self_renamed = is_inplace(op) && ms->nargs && fs->nargs &&
                      alloy_schema_find_arg(fs, ms->args[0].name) < 0;
  for (int j = 0; j < fs->nargs; j++) {
    const alloy_schema_arg *fa = &fs->args[j];
    int i = j == 0 && self_renamed ? 0 : alloy_schema_find_arg(ms, fa->name);
    if (i >= 0 && !(ms->args[i].alias_write && ms->args[i].kwarg_only)) map[j] = (int16_t)i;
    else if (fa->type.kind == ALLOY_TYPE_SCALAR_TYPE) map[j] = ALLOY_FARG_OUT_DTYPE;
    else if (fa->has_default) map[j] = ALLOY_FARG_DEFAULT;
    else map[j] = ALLOY_FARG_NONE;
  }
  op->functional_args = map;
}

int alloy_op_written_args(const alloy_op *op, int *w, int cap);

/* torchgen's "<name>_functional" twin of a mutable op (normal_ ->
 * normal_functional; _native_batch_norm_legit, which writes its running
 * statistics, -> _native_batch_norm_legit_functional): the same arguments,
 * returning the op's own results and then, for an op that is not in-place,
 * the new values of the tensors it writes. */
static const alloy_op *functional_form(const alloy_op *op, const char *fbase, bool *appends) {
  char buf[400];
  const char *ov = op->schema->overload;
  /* an out= op's twin is the default overload (normal.out -> normal_functional) */
  if (op->kind == ALLOY_OP_OUT && !strcmp(ov, "out")) ov = "";
  snprintf(buf, sizeof buf, "%s_functional%s%s", fbase, *ov ? "." : "", ov);
  const alloy_op *f = lookup(buf);
  if (!f || (f->tags & ALLOY_TAG_MUTATES) || !signature_matches(op, f)) return NULL;
  int w[16];
  int nw = alloy_op_written_args(op, w, 16);
  *appends = !is_inplace(op) && op->kind != ALLOY_OP_OUT;
  int want = *appends ? op->schema->nreturns + nw : nw;
  return f->schema->nreturns == want ? f : NULL;
}

static void pair_siblings(void) {
  int n = reg.nops;
  for (int i = 0; i < n; i++) {
    alloy_op *op = &reg.ops[i];
    if (!(op->tags & ALLOY_TAG_MUTATES)) continue;
    char fbase[256];
    functional_base(op, fbase, sizeof fbase);
    if (!is_inplace(op) && op->kind != ALLOY_OP_OUT) { /* a mutable op */
      op->functional = functional_form(op, fbase, &op->functional_appends);
      continue;
    }
    const alloy_op *f = sibling_by_name(op, fbase);
    if (f && signature_matches(op, f)) {
      op->functional = f;
      continue;
    }
    /* Any functional overload of the base name with the same arguments. */
    for (int k = 0; k < n && !op->functional; k++) {
      const alloy_op *c = &reg.ops[k];
      if (c != op && !(c->tags & ALLOY_TAG_MUTATES) && !strcmp(c->schema->name, fbase) &&
          signature_matches(op, c))
        op->functional = c;
    }
    if (!op->functional) op->functional = functional_form(op, fbase, &op->functional_appends);
  }
  for (int i = 0; i < n; i++)
    if (reg.ops[i].functional) map_arguments(&reg.ops[i]);
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
  pair_siblings();
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
alloy_op_kind alloy_op_kind_of(const alloy_op *op) { return op->kind; }
const alloy_op *alloy_op_functional(const alloy_op *op) { return op->functional; }
int alloy_op_written_args(const alloy_op *op, int *w, int cap) {
  /* An in-place op writes self first; an out= op its keyword-only out=
   * tensors first, in order, so that they line up with the op's results.
   * After them come the other tensors the op writes (rrelu_with_noise_'s
   * noise, _native_batch_norm_legit.out's running statistics), which its
   * _functional twin returns after its own results. A mutable op's written
   * tensors are wherever the schema has them. */
  const alloy_schema *s = op->schema;
  bool inplace = is_inplace(op), out = op->kind == ALLOY_OP_OUT;
  int n = 0;
  if (inplace && cap > 0) w[n++] = 0;
  for (int i = 0; out && i < s->nargs && n < cap; i++)
    if (s->args[i].alias_write && s->args[i].kwarg_only) w[n++] = i;
  for (int i = inplace; i < s->nargs && n < cap; i++) {
    const alloy_schema_arg *a = &s->args[i];
    if (a->alias_write && !(out && a->kwarg_only) && a->type.kind == ALLOY_TYPE_TENSOR && !a->type.list)
      w[n++] = i;
  }
  return n;
}

bool alloy_op_functional_appends(const alloy_op *op) { return op->functional_appends; }

int alloy_op_functional_arg(const alloy_op *op, int j) {
  return op->functional && j >= 0 && j < op->functional->schema->nargs ? op->functional_args[j]
                                                                        : ALLOY_FARG_NONE;
}
const char *alloy_op_kind_name(alloy_op_kind k) {
  return k >= 0 && k < ALLOY_OP_KIND_COUNT ? kind_names[k] : "?";
}
const alloy_schema *alloy_op_schema(const alloy_op *op) { return op->schema; }
