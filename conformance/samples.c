/*
 * conformance/samples.c: the op samples Alloy generates, as a source of
 * tests (suite.h), checked against the reference backend as the oracle.
 *
 * Every op in the registry gets samples from recipes: a recipe is the op's
 * argument list written in a small language (recipes.h says it), with the
 * sample dtype T, the shapes S and B and alternatives {a|b} left open. An op
 * without a row in recipes.c gets a recipe derived from its schema. Each
 * recipe is expanded over
 *   - every dtype the op accepts (shape inference decides),
 *   - shape classes: a plain shape, broadcasting, size-1 dims, zero-dim,
 *     zero-size, and a large one (over 64k elements),
 *   - layouts: the first input transposed, sliced with a step, expanded
 *     with stride 0, or at a storage offset (views in the graph, in front
 *     of the op),
 *   - values: ordinary ones, and edge values (NaN, +-Inf, -0.0,
 *     denormals, huge and tiny magnitudes, integer extremes),
 *   - every alternative of an enumerated argument (reduction, rounding and
 *     approximation modes, keepdim, negative dims).
 * The parent keeps the candidates that shape inference accepts; a worker
 * rebuilds a sample from its row, fills the inputs from a generator seeded
 * by (--seed, op, sample number), runs it on ref and on the backend and
 * compares. A sample ref rejects at run time is not valid and not counted.
 */
#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/graph.h"
#include "conformance/compare.h"
#include "conformance/recipes.h"
#include "conformance/suite.h"
#include "ir/graph_internal.h"

/* ---- the variations ------------------------------------------------------ */

/* Shape classes: S is the main shape, B a shape that broadcasts with it. */
static const struct {
  const char *name, *S, *B;
  bool uses_b; /* only worth a sample when the recipe has a B */
} shape_classes[] = {
    {"", "3,5", "3,5", false},
    {"broadcast", "3,5", "5", true},
    {"size-1 broadcast", "2,1,5", "4,1", true},
    {"zero-dim", "", "", false},
    {"zero-size", "0,5", "5", false},
    {"large", "256,260", "260", false},
};
enum { SHAPE_BASE = 0, SHAPE_LARGE = 5, NSHAPES = 6 };

typedef enum { LAYOUT_CONTIGUOUS, LAYOUT_TRANSPOSED, LAYOUT_STEP, LAYOUT_EXPANDED,
               LAYOUT_OFFSET, NLAYOUTS } layout;
static const char *const layout_names[NLAYOUTS] = {"", "transposed", "sliced with step 2",
                                                   "expanded (stride 0)", "storage offset"};

static const alloy_dtype sample_dtypes[] = {ALLOY_F32, ALLOY_F64, ALLOY_F16, ALLOY_BF16,
                                            ALLOY_I64, ALLOY_I32, ALLOY_I16, ALLOY_I8,
                                            ALLOY_U8,  ALLOY_BOOL};
enum { NDTYPES = sizeof sample_dtypes / sizeof sample_dtypes[0] };

/* One sample: everything needed to rebuild it. */
typedef struct sample_spec {
  int32_t op;      /* op id */
  int16_t recipe;  /* row of conform_recipes, or -1: derived from the schema */
  uint8_t dtype;   /* alloy_dtype */
  uint8_t shape;   /* shape class */
  uint8_t layout;
  uint8_t edge;    /* edge values */
  uint16_t alt;    /* which combination of the alternatives */
} sample_spec;

/* The recipe tables, in the order their rows are numbered. */
static const conform_recipe *const recipe_tables[] = {conform_recipes, conform_recipes_nn,
                                                      conform_recipes_index};

typedef struct samples_state {
  const conform_recipe **rows; /* every row of every table */
  int nrows;
  uint64_t seed;
  sample_spec *specs;
  int n, cap;
  char **derived; /* per op id: the recipe derived from its schema, or NULL */
  int nops;
} samples_state;

/* ---- the recipe language ------------------------------------------------ */

/* Expands alternatives: combination alt picks one choice of each {a|b|c}
 * (mixed radix, first group fastest) and S and B become the shape class's
 * shapes. Returns the number of combinations, or 0 when the text is bad. */
static int recipe_expand(const char *recipe, int alt, int shape, char *out, size_t cap) {
  size_t n = 0;
  int combos = 1, radix = alt;
  for (const char *p = recipe; *p; p++) {
    if (*p == '{') {
      const char *end = strchr(p, '}');
      if (!end) return 0;
      int choices = 1;
      for (const char *q = p; q < end; q++) choices += *q == '|';
      int pick = radix % choices;
      radix /= choices;
      combos *= choices;
      const char *start = p + 1;
      for (int k = 0; k < pick; k++) start = strchr(start, '|') + 1;
      const char *stop = start;
      while (stop < end && *stop != '|') stop++;
      for (const char *q = start; q < stop && n + 1 < cap; q++) out[n++] = *q;
      p = end;
    } else if ((*p == 'S' || *p == 'B') && p > recipe && p[-1] == '[' && p[1] == ']') {
      const char *dims = *p == 'S' ? shape_classes[shape].S : shape_classes[shape].B;
      for (const char *q = dims; *q && n + 1 < cap; q++) out[n++] = *q;
    } else if (n + 1 < cap) {
      out[n++] = *p;
    }
  }
  out[n] = 0;
  return n + 1 < cap ? combos : 0;
}

/* How the values of one tensor are drawn. */
typedef enum { FILL_ANY, FILL_INDEX, FILL_POSITIVE, FILL_PROB, FILL_SPD, FILL_NONZERO } fill_kind;

typedef struct tensor_spec {
  alloy_dtype dtype;
  int rank;
  int64_t sizes[8];
  fill_kind fill;
  int64_t low, bound; /* FILL_INDEX: values in [low, bound) */
  bool sample_dtype; /* written T: takes edge values and layouts */
} tensor_spec;

typedef struct parser {
  const char *p;
  alloy_dtype T;
  alloy_graph *g;         /* NULL: only count and type the tensors */
  alloy_arena *arena;
  tensor_spec tensors[16];
  alloy_value *inputs[16]; /* the value each tensor argument reads */
  int ntensors;
  int layout_tensor;       /* which tensor gets the layout, -1 none */
  layout layout;
  char err[160];
} parser;

static void skip_spaces(parser *ps) {
  while (*ps->p == ' ') ps->p++;
}

static bool parse_dtype(parser *ps, alloy_dtype *out, bool *is_t) {
  const char *s = ps->p;
  size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzT0123456789");
  *is_t = n == 1 && s[0] == 'T';
  if (*is_t) *out = ps->T;
  else if (n == 1 && s[0] == 'b') *out = ALLOY_BOOL;
  else if (!alloy_dtype_from_name(s, n, out)) return false;
  ps->p += n;
  return true;
}

/* The graph input (and the view in front of it, for the layout) of a
 * tensor argument. */
static alloy_error *tensor_input(parser *ps, int k, alloy_value **out) {
  tensor_spec *t = &ps->tensors[k];
  int64_t in_sizes[8];
  memcpy(in_sizes, t->sizes, sizeof in_sizes);
  layout l = k == ps->layout_tensor ? ps->layout : LAYOUT_CONTIGUOUS;
  if (l == LAYOUT_TRANSPOSED) {
    int64_t s = in_sizes[t->rank - 1];
    in_sizes[t->rank - 1] = in_sizes[t->rank - 2];
    in_sizes[t->rank - 2] = s;
  }
  if (l == LAYOUT_STEP) in_sizes[0] = 2 * in_sizes[0];
  if (l == LAYOUT_EXPANDED) in_sizes[0] = 1;
  if (l == LAYOUT_OFFSET) in_sizes[0] += 1;
  alloy_dim dims[8];
  for (int d = 0; d < t->rank; d++) dims[d] = alloy_dim_const(in_sizes[d]);
  alloy_value_type vt = {ALLOY_VALUE_TENSOR, t->dtype, t->rank, dims, NULL, {ALLOY_DEVICE_CPU, -1}, {NULL, 0}};
  char name[16];
  snprintf(name, sizeof name, "x%d", k);
  alloy_value *x;
  alloy_error *e = alloy_graph_add_input(ps->g, name, &vt, &x);
  if (e || l == LAYOUT_CONTIGUOUS) return *out = x, e;
  alloy_node *n;
  alloy_arg a[5];
  const char *opname;
  int na;
  if (l == LAYOUT_TRANSPOSED) {
    alloy_arg *perm = alloy_arena_alloc(ps->arena, sizeof *perm * 8);
    if (!perm) return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
    for (int d = 0; d < t->rank; d++) perm[d] = alloy_arg_int(d);
    perm[t->rank - 1] = alloy_arg_int(t->rank - 2);
    perm[t->rank - 2] = alloy_arg_int(t->rank - 1);
    opname = "aten.permute.default", na = 2;
    a[0] = alloy_arg_value(x), a[1] = alloy_arg_list(perm, t->rank);
  } else if (l == LAYOUT_EXPANDED) {
    alloy_arg *size = alloy_arena_alloc(ps->arena, sizeof *size * 8);
    if (!size) return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
    for (int d = 0; d < t->rank; d++) size[d] = alloy_arg_int(t->sizes[d]);
    opname = "aten.expand.default", na = 3;
    a[0] = alloy_arg_value(x), a[1] = alloy_arg_list(size, t->rank), a[2] = alloy_arg_bool(false);
  } else {
    opname = "aten.slice.Tensor", na = 5;
    a[0] = alloy_arg_value(x), a[1] = alloy_arg_int(0);
    a[2] = alloy_arg_int(l == LAYOUT_OFFSET ? 1 : 0), a[3] = alloy_arg_int(INT64_MAX);
    a[4] = alloy_arg_int(l == LAYOUT_STEP ? 2 : 1);
  }
  e = alloy_graph_add_node(ps->g, alloy_op_find(opname), a, na, NULL, NULL, 0, "view", &n);
  if (!e) *out = alloy_node_output(n, 0);
  return e;
}

static bool parse_value(parser *ps, const alloy_type *t, alloy_arg *out);

/* A tensor: [kind:]DT[dims]. */
static bool parse_tensor(parser *ps, alloy_arg *out) {
  tensor_spec ts = {.fill = FILL_ANY};
  const char *colon = strchr(ps->p, ':'), *bracket = strchr(ps->p, '[');
  if (colon && bracket && colon < bracket) {
    size_t n = (size_t)(colon - ps->p);
    if (!strncmp(ps->p, "idx", 3)) {
      /* idxN: [0, N); idxA-N: [A, N) */
      char *end;
      ts.fill = FILL_INDEX;
      ts.bound = strtoll(ps->p + 3, &end, 10);
      if (*end == '-') ts.low = ts.bound, ts.bound = strtoll(end + 1, NULL, 10);
    }
    else if (n == 3 && !strncmp(ps->p, "pos", 3)) ts.fill = FILL_POSITIVE;
    else if (n == 4 && !strncmp(ps->p, "prob", 4)) ts.fill = FILL_PROB;
    else if (n == 3 && !strncmp(ps->p, "spd", 3)) ts.fill = FILL_SPD;
    else if (n == 2 && !strncmp(ps->p, "nz", 2)) ts.fill = FILL_NONZERO;
    else return snprintf(ps->err, sizeof ps->err, "unknown value kind '%.*s'", (int)n, ps->p), false;
    ps->p = colon + 1;
  }
  if (!parse_dtype(ps, &ts.dtype, &ts.sample_dtype) || *ps->p != '[')
    return snprintf(ps->err, sizeof ps->err, "bad tensor at '%.20s'", ps->p), false;
  ps->p++;
  while (*ps->p && *ps->p != ']') {
    if (ts.rank == 8) return snprintf(ps->err, sizeof ps->err, "rank over 8"), false;
    char *end;
    ts.sizes[ts.rank++] = strtoll(ps->p, &end, 10);
    if (end == ps->p) return snprintf(ps->err, sizeof ps->err, "bad size at '%.20s'", ps->p), false;
    ps->p = end;
    if (*ps->p == ',') ps->p++;
  }
  if (*ps->p != ']') return snprintf(ps->err, sizeof ps->err, "unclosed shape"), false;
  ps->p++;
  if (ps->ntensors == 16) return snprintf(ps->err, sizeof ps->err, "over 16 tensors"), false;
  int k = ps->ntensors++;
  ps->tensors[k] = ts;
  if (!ps->g) return *out = alloy_arg_none(), true;
  alloy_error *e = tensor_input(ps, k, &ps->inputs[k]);
  if (e) {
    snprintf(ps->err, sizeof ps->err, "%s", alloy_error_message(e));
    alloy_error_free(e);
    return false;
  }
  *out = alloy_arg_value(ps->inputs[k]);
  return true;
}

static bool parse_list(parser *ps, const alloy_type *t, alloy_arg *out) {
  alloy_arg items[32];
  int n = 0;
  alloy_type et = *t;
  et.list = false;
  ps->p++; /* [ */
  skip_spaces(ps);
  while (*ps->p && *ps->p != ']') {
    if (n == 32) return snprintf(ps->err, sizeof ps->err, "list over 32 items"), false;
    if (!parse_value(ps, &et, &items[n++])) return false;
    skip_spaces(ps);
    if (*ps->p == ',') ps->p++;
    skip_spaces(ps);
  }
  if (*ps->p != ']') return snprintf(ps->err, sizeof ps->err, "unclosed list"), false;
  ps->p++;
  alloy_arg *copy = alloy_arena_alloc(ps->arena, sizeof *copy * (size_t)(n ? n : 1));
  if (!copy) return snprintf(ps->err, sizeof ps->err, "out of memory"), false;
  memcpy(copy, items, sizeof *copy * (size_t)n);
  *out = alloy_arg_list(copy, n);
  return true;
}

static bool parse_value(parser *ps, const alloy_type *t, alloy_arg *out) {
  const char *s = ps->p;
  if (*s == '[') return parse_list(ps, t, out);
  if (!strncmp(s, "None", 4)) return ps->p += 4, *out = alloy_arg_none(), true;
  if (!strncmp(s, "true", 4)) return ps->p += 4, *out = alloy_arg_bool(true), true;
  if (!strncmp(s, "false", 5)) return ps->p += 5, *out = alloy_arg_bool(false), true;
  /* The host's device: the graph is built for it, whatever runs it. */
  if (t->kind == ALLOY_TYPE_DEVICE && !strncmp(s, "cpu", 3)) {
    ps->p += 3;
    out->kind = ALLOY_ARG_DEVICE;
    out->u.device.type = ALLOY_DEVICE_CPU;
    out->u.device.index = -1;
    return true;
  }
  if (!strncmp(s, "dtype:", 6)) {
    ps->p += 6;
    alloy_dtype d;
    bool is_t;
    if (!parse_dtype(ps, &d, &is_t)) return snprintf(ps->err, sizeof ps->err, "bad dtype"), false;
    return *out = alloy_arg_dtype(d), true;
  }
  if (*s == '\'') {
    const char *end = strchr(s + 1, '\'');
    if (!end) return snprintf(ps->err, sizeof ps->err, "unclosed string"), false;
    *out = alloy_arg_str(alloy_arena_strndup(ps->arena, s + 1, (size_t)(end - s - 1)));
    ps->p = end + 1;
    return true;
  }
  if (*s == '-' || *s == '.' || (*s >= '0' && *s <= '9') || !strncmp(s, "inf", 3) || !strncmp(s, "nan", 3)) {
    char *end;
    double f = strtod(s, &end);
    bool is_float = false;
    for (const char *q = s; q < end; q++) is_float |= *q == '.' || *q == 'e' || *q == 'n' || *q == 'i';
    ps->p = end;
    bool want_float = t->kind == ALLOY_TYPE_FLOAT || t->kind == ALLOY_TYPE_SYMFLOAT;
    *out = is_float || want_float ? alloy_arg_float(f) : alloy_arg_int(strtoll(s, NULL, 10));
    return true;
  }
  return parse_tensor(ps, out);
}

/* Builds the one-op graph of an expanded recipe. With ps->g NULL only the
 * tensors are read (to find the layout tensor). */
static bool parse_args(parser *ps, const alloy_op *op, alloy_node **node) {
  const alloy_schema *s = alloy_op_schema(op);
  alloy_arg args[32], kwargs[32];
  const char *kwnames[32];
  int nargs = 0, nkw = 0;
  skip_spaces(ps);
  while (*ps->p) {
    const char *eq = strchr(ps->p, '='), *sp = strchr(ps->p, ' ');
    if (eq && (!sp || eq < sp) && eq > ps->p && eq[-1] != '\'') {
      char name[64];
      snprintf(name, sizeof name, "%.*s", (int)(eq - ps->p), ps->p);
      int i = alloy_schema_find_arg(s, name);
      if (i < 0 || nkw == 32) return snprintf(ps->err, sizeof ps->err, "no argument '%s'", name), false;
      ps->p = eq + 1;
      kwnames[nkw] = alloy_arena_strdup(ps->arena, name);
      if (!parse_value(ps, &alloy_schema_arg_at(s, i)->type, &kwargs[nkw++])) return false;
    } else {
      if (nargs >= alloy_schema_num_args(s) || nargs == 32)
        return snprintf(ps->err, sizeof ps->err, "more arguments than the schema has"), false;
      if (!parse_value(ps, &alloy_schema_arg_at(s, nargs)->type, &args[nargs])) return false;
      nargs++;
    }
    skip_spaces(ps);
  }
  if (!ps->g) return true;
  alloy_error *e = alloy_graph_add_node(ps->g, op, args, nargs, kwnames, kwargs, nkw, "out", node);
  if (e) {
    snprintf(ps->err, sizeof ps->err, "%s", alloy_error_message(e));
    alloy_error_free(e);
    return false;
  }
  return true;
}

/* ---- recipes derived from schemas --------------------------------------- */

/* Enumerated arguments: every value is sampled even where the schema has a
 * default. */
static const struct {
  const char *name;
  const char *choices;
} enumerated_args[] = {
    {"keepdim", "{false|true}"},
    {"reduction", "{0|1|2}"},
    {"rounding_mode", "{None|'trunc'|'floor'}"},
    {"approximate", "{'none'|'tanh'}"},
    {"descending", "{false|true}"},
    {"largest", "{false|true}"},
    {"stable", "{false|true}"},
    {"unbiased", "{false|true}"},
    {"correction", "{0|1|2}"},
    {"ceil_mode", "{false|true}"},
    {"count_include_pad", "{false|true}"},
    {"align_corners", "{false|true}"},
    {"half_to_float", "{false|true}"},
    {"exclusive", "{false|true}"},
    {"upper", "{false|true}"},
    {"left", "{false|true}"},
};

/* A value for a required argument, by its type and name. */
static const char *required_value(const alloy_schema_arg *a, bool pointwise, bool *first_tensor) {
  const char *name = a->name;
  switch (a->type.kind) {
    case ALLOY_TYPE_TENSOR:
      if (a->type.list) return "[T[S],T[S]]";
      if (*first_tensor) return *first_tensor = false, "T[S]";
      return pointwise ? "T[B]" : "T[S]";
    case ALLOY_TYPE_INT:
    case ALLOY_TYPE_SYMINT:
      if (a->type.list) return !strcmp(name, "dim") || !strcmp(name, "dims") ? "{[0]|[-1]|[0,-1]}" : "[1]";
      return !strcmp(name, "dim") ? "{0|-1}" : "1";
    case ALLOY_TYPE_FLOAT:
    case ALLOY_TYPE_SYMFLOAT: return "0.5";
    case ALLOY_TYPE_BOOL:
    case ALLOY_TYPE_SYMBOOL: return "{false|true}";
    case ALLOY_TYPE_SCALAR: return !strcmp(name, "alpha") ? "2" : "{3|0.5}";
    case ALLOY_TYPE_SCALAR_TYPE: return "dtype:T";
    case ALLOY_TYPE_DEVICE: return "cpu";
    default: return NULL;
  }
}

/* The recipe of an op without a row, or NULL when its schema asks for
 * what no generic value fits (a string, a generator). */
static char *derive_recipe(const alloy_op *op) {
  const alloy_schema *s = alloy_op_schema(op);
  bool pointwise = alloy_op_tags(op) & ALLOY_TAG_POINTWISE, first = true;
  char buf[1024];
  size_t n = 0;
  for (int i = 0; i < alloy_schema_num_args(s); i++) {
    const alloy_schema_arg *a = alloy_schema_arg_at(s, i);
    const char *v = NULL;
    for (size_t k = 0; k < sizeof enumerated_args / sizeof enumerated_args[0]; k++)
      if (!strcmp(a->name, enumerated_args[k].name) && !a->type.list &&
          (a->type.kind != ALLOY_TYPE_INT || strcmp(a->name, "correction")))
        v = enumerated_args[k].choices;
    if (!v && (a->has_default || a->type.optional)) continue;
    if (!v) v = required_value(a, pointwise, &first);
    if (!v) return NULL;
    n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s=%s", n ? " " : "", a->name, v);
    if (n >= sizeof buf) return NULL;
  }
  if (first && alloy_schema_find_arg(s, "dtype") >= 0 && !strstr(buf, "dtype="))
    n += (size_t)snprintf(buf + n, sizeof buf - n, "%sdtype=dtype:T", n ? " " : "");
  return strdup(buf);
}

/* ---- listing ------------------------------------------------------------- */

static const char *recipe_text(const samples_state *ss, const sample_spec *sp) {
  return sp->recipe >= 0 ? ss->rows[sp->recipe]->args : ss->derived[sp->op];
}

/* Builds a sample's graph (without data); false with why when shape
 * inference or the recipe rejects it. */
static bool sample_build(const samples_state *ss, const sample_spec *sp, alloy_graph **out,
                         parser *ps, alloy_arena *arena, char *why, size_t cap) {
  const alloy_op *op = alloy_op_by_id(sp->op);
  char text[1024];
  if (!recipe_expand(recipe_text(ss, sp), sp->alt, sp->shape, text, sizeof text)) {
    snprintf(why, cap, "recipe too long or unbalanced");
    return false;
  }
  /* First pass: find the tensor the layout applies to. */
  *ps = (parser){.p = text, .T = (alloy_dtype)sp->dtype, .arena = arena, .layout_tensor = -1};
  if (!parse_args(ps, op, NULL)) return snprintf(why, cap, "%s", ps->err), false;
  int lt = -1;
  for (int k = 0; k < ps->ntensors && lt < 0; k++) {
    const tensor_spec *t = &ps->tensors[k];
    int64_t numel = 1;
    for (int d = 0; d < t->rank; d++) numel *= t->sizes[d];
    if (!t->sample_dtype || numel == 0 || t->rank < 1) continue;
    if (sp->layout == LAYOUT_TRANSPOSED && (t->rank < 2 || t->sizes[t->rank - 1] == t->sizes[t->rank - 2])) continue;
    if (sp->layout == LAYOUT_EXPANDED && t->sizes[0] == 1) continue;
    lt = k;
  }
  if (sp->layout != LAYOUT_CONTIGUOUS && lt < 0) return snprintf(why, cap, "no input fits the layout"), false;
  alloy_graph *g = alloy_graph_new();
  if (!g) return snprintf(why, cap, "out of memory"), false;
  *ps = (parser){.p = text, .T = (alloy_dtype)sp->dtype, .g = g, .arena = arena,
                 .layout_tensor = lt, .layout = (layout)sp->layout};
  alloy_node *node = NULL;
  if (!parse_args(ps, op, &node)) {
    snprintf(why, cap, "%s", ps->err);
    alloy_graph_free(g);
    return false;
  }
  alloy_value *outs[16];
  int nout = alloy_node_num_outputs(node);
  if (nout > 16) nout = 16;
  for (int k = 0; k < nout; k++) outs[k] = alloy_node_output(node, k);
  /* The large class means inputs over 64k elements; an op whose output
   * multiplies its inputs' sizes (kron, diagflat, outer of the large shape:
   * billions of elements) makes no sample of it, since the oracle alone
   * would take minutes and gigabytes. */
  for (int k = 0; k < nout; k++) {
    const alloy_value *v = outs[k];
    double numel = 1;
    for (int d = 0; d < alloy_value_rank(v); d++) {
      alloy_dim sz = alloy_value_shape(v)[d];
      numel *= alloy_dim_is_const(sz) ? (double)sz.value : 1;
    }
    if (alloy_value_kind_of(v) == ALLOY_VALUE_TENSOR && numel > (double)(1 << 24)) {
      snprintf(why, cap, "output %d would have %.3g elements (samples stop at 2^24)", k, numel);
      alloy_graph_free(g);
      return false;
    }
  }
  alloy_error *e = alloy_graph_set_outputs(g, outs, nout);
  if (e) {
    snprintf(why, cap, "%s", alloy_error_message(e));
    alloy_error_free(e);
    alloy_graph_free(g);
    return false;
  }
  *out = g;
  return true;
}

static bool spec_add(samples_state *ss, const sample_spec *sp) {
  if (ss->n == ss->cap) {
    int cap = ss->cap ? 2 * ss->cap : 4096;
    sample_spec *ns = realloc(ss->specs, sizeof *ns * (size_t)cap);
    if (!ns) return false;
    ss->specs = ns;
    ss->cap = cap;
  }
  ss->specs[ss->n++] = *sp;
  return true;
}

static unsigned op_set(const alloy_op *op) {
  uint32_t tags = alloy_op_tags(op);
  return tags & ALLOY_TAG_PRIM ? CONFORM_SET_PRIMS : tags & ALLOY_TAG_CORE ? CONFORM_SET_CORE
                                                                           : CONFORM_SET_OTHER;
}

static void spec_variant(const sample_spec *sp, char *buf, size_t cap) {
  size_t n = 0;
  const char *parts[3] = {shape_classes[sp->shape].name, layout_names[sp->layout],
                          sp->edge ? "edge values" : ""};
  for (int i = 0; i < 3; i++)
    if (parts[i][0] && n < cap) n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", parts[i]);
  if (sp->alt && n < cap) snprintf(buf + n, cap - n, "%soption set %d", n ? ", " : "", sp->alt);
}

/* Tries one candidate; adds it as a test when shape inference takes it. */
static alloy_error *try_candidate(conform_source *src, samples_state *ss, const conform_options *o,
                                  conform_suite *suite, const sample_spec *sp, long *number,
                                  bool *valid) {
  alloy_arena arena = {0};
  parser ps;
  alloy_graph *g = NULL;
  char why[256];
  *valid = sample_build(ss, sp, &g, &ps, &arena, why, sizeof why);
  alloy_graph_free(g);
  alloy_arena_free(&arena);
  if (!*valid) return NULL;
  long k = (*number)++;
  if (o->sample >= 0 && k != o->sample) return NULL;
  const alloy_op *op = alloy_op_by_id(sp->op);
  conform_test t = {.source = src, .index = k, .op = alloy_op_name(op), .set = op_set(op),
                    .aux = ss->n};
  snprintf(t.dtype, sizeof t.dtype, "%s", alloy_dtype_name((alloy_dtype)sp->dtype));
  spec_variant(sp, t.variant, sizeof t.variant);
  if (!spec_add(ss, sp) || !conform_suite_add(suite, &t))
    return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  return NULL;
}

/* Every sample of one recipe of op. */
static alloy_error *list_recipe(conform_source *src, samples_state *ss, const conform_options *o,
                                conform_suite *suite, int opid, int recipe, long *number) {
  sample_spec base = {.op = opid, .recipe = (int16_t)recipe};
  const char *text = recipe_text(ss, &base);
  bool has_b = strstr(text, "[B]") != NULL, has_s = strstr(text, "[S]") != NULL;
  char scratch[1024];
  int combos = recipe_expand(text, 0, 0, scratch, sizeof scratch);
  if (combos > 64) combos = 64;
  for (int di = 0; di < NDTYPES; di++) {
    alloy_dtype dt = sample_dtypes[di];
    if (o->dtype && strcmp(o->dtype, alloy_dtype_name(dt))) continue;
    bool uses_t = strstr(text, "T[") || strstr(text, "dtype:T");
    if (!uses_t && di > 0) break; /* the dtype does not vary */
    sample_spec sp = base;
    sp.dtype = (uint8_t)dt;
    bool valid;
    alloy_error *e;
    /* Every alternative, on the plain shape. */
    bool any = false;
    for (int a = 0; a < combos; a++) {
      sp.alt = (uint16_t)a;
      if ((e = try_candidate(src, ss, o, suite, &sp, number, &valid))) return e;
      any |= valid;
    }
    if (!any) continue; /* the op does not take this dtype */
    sp.alt = 0;
    for (int c = 1; c < NSHAPES && has_s; c++) {
      if (shape_classes[c].uses_b && !has_b) continue;
      sp.shape = (uint8_t)c;
      if ((e = try_candidate(src, ss, o, suite, &sp, number, &valid))) return e;
    }
    sp.shape = SHAPE_BASE;
    for (int l = 1; l < NLAYOUTS; l++) {
      sp.layout = (uint8_t)l;
      if ((e = try_candidate(src, ss, o, suite, &sp, number, &valid))) return e;
    }
    sp.layout = LAYOUT_CONTIGUOUS;
    if (dt != ALLOY_BOOL) {
      sp.edge = 1;
      if ((e = try_candidate(src, ss, o, suite, &sp, number, &valid))) return e;
    }
  }
  return NULL;
}

static alloy_error *samples_list(conform_source *src, const conform_options *o, conform_suite *suite) {
  if (o->replay || !conform_wants_source(o, "samples")) return NULL;
  samples_state *ss = calloc(1, sizeof *ss);
  if (!ss) return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  src->self = ss;
  ss->seed = o->seed;
  for (size_t t = 0; t < sizeof recipe_tables / sizeof recipe_tables[0]; t++)
    for (const conform_recipe *r = recipe_tables[t]; r->op; r++) {
      const conform_recipe **nr = realloc(ss->rows, sizeof *nr * (size_t)(ss->nrows + 1));
      if (!nr) return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
      ss->rows = nr;
      ss->rows[ss->nrows++] = r;
    }
  ss->nops = alloy_op_count();
  int sampled = 0, unsampled = 0;
  ss->derived = calloc((size_t)ss->nops, sizeof *ss->derived);
  if (!ss->derived) return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  for (int id = 0; id < ss->nops; id++) {
    const alloy_op *op = alloy_op_by_id(id);
    const char *name = alloy_op_name(op);
    if (o->ops_glob && fnmatch(o->ops_glob, name, 0)) continue;
    unsigned set = op_set(op);
    if (o->set && !strcmp(o->set, "core") != !!(set & CONFORM_SET_CORE)) continue;
    long number = 0;
    bool has_row = false;
    for (int r = 0; r < ss->nrows; r++) {
      if (strcmp(ss->rows[r]->op, name)) continue;
      has_row = true;
      alloy_error *e = list_recipe(src, ss, o, suite, id, r, &number);
      if (e) return e;
    }
    if (!has_row && (ss->derived[id] = derive_recipe(op))) {
      alloy_error *e = list_recipe(src, ss, o, suite, id, -1, &number);
      if (e) return e;
    }
    sampled += number > 0;
    unsampled += number == 0;
    if (number == 0 && o->verbose) {
      char note[320];
      snprintf(note, sizeof note, "samples: no sample of %s (%s)", name,
               has_row ? "shape inference refuses its recipes" : "needs a recipe in conformance/recipes*.c");
      if (!conform_suite_note(suite, note)) return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
    }
  }
  if (sampled + unsampled) {
    char note[200];
    snprintf(note, sizeof note, "samples: %d ops sampled, %d without a sample%s", sampled, unsampled,
             unsampled && !o->verbose ? " (-v names them)" : "");
    if (!conform_suite_note(suite, note)) return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  }
  return NULL;
}

/* Ops that allocate and write nothing: their outputs hold no defined values
 * (ref's happen to be zeros; a backend need not clear them), so only dtype
 * and shape compare. */
static const char *const allocation_ops[] = {
    "aten.empty.memory_format", "aten.empty_strided.default", "prims.empty.default",
    "prims.empty_strided.default", "prims.empty_permuted.default",
};

static bool undefined_values(const char *op) {
  for (size_t i = 0; i < sizeof allocation_ops / sizeof allocation_ops[0]; i++)
    if (!strcmp(op, allocation_ops[i])) return true;
  return false;
}

/* ---- values -------------------------------------------------------------- */

/* splitmix64: a tiny generator whose stream depends only on the seed, so
 * a seed and a sample index name the same values on every machine. */
uint64_t conform_splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double conform_uniform(uint64_t *s) { return (double)(conform_splitmix(s) >> 11) * 0x1p-53; }

static uint64_t hash_str(const char *s, uint64_t h) {
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return h;
}

static void store(void *data, alloy_dtype t, int64_t i, double v, int64_t iv, bool use_int) {
  char *b = data;
  switch (t) {
    case ALLOY_BOOL: b[i] = use_int ? iv != 0 : v != 0; break;
    case ALLOY_U8: ((uint8_t *)data)[i] = (uint8_t)iv; break;
    case ALLOY_I8: ((int8_t *)data)[i] = (int8_t)iv; break;
    case ALLOY_I16: ((int16_t *)data)[i] = (int16_t)iv; break;
    case ALLOY_I32: ((int32_t *)data)[i] = (int32_t)iv; break;
    case ALLOY_I64: ((int64_t *)data)[i] = iv; break;
    case ALLOY_F16: ((uint16_t *)data)[i] = alloy_f16_from_f32((float)v); break;
    case ALLOY_BF16: ((uint16_t *)data)[i] = alloy_bf16_from_f32((float)v); break;
    case ALLOY_F32: ((float *)data)[i] = (float)v; break;
    case ALLOY_F64: ((double *)data)[i] = v; break;
    default: break;
  }
}

static void int_range(alloy_dtype t, int64_t *lo, int64_t *hi) {
  switch (t) {
    case ALLOY_U8: *lo = 0, *hi = UINT8_MAX; break;
    case ALLOY_I8: *lo = INT8_MIN, *hi = INT8_MAX; break;
    case ALLOY_I16: *lo = INT16_MIN, *hi = INT16_MAX; break;
    case ALLOY_I32: *lo = INT32_MIN, *hi = INT32_MAX; break;
    default: *lo = INT64_MIN, *hi = INT64_MAX; break;
  }
}

/* The edge values of a float dtype: every special the format has. */
static double float_edge(alloy_dtype t, int k) {
  double big = t == ALLOY_F64 ? 1e300 : t == ALLOY_F32 ? 3e38 : t == ALLOY_BF16 ? 3e38 : 65000;
  double denormal = t == ALLOY_F64 ? 4e-320 : t == ALLOY_F32 ? 1e-40 : t == ALLOY_BF16 ? 1e-40 : 3e-7;
  double tiny = t == ALLOY_F64 ? 1e-300 : t == ALLOY_F16 ? 1e-4 : 1e-37;
  const double v[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, denormal, -denormal, big, -big,
                      tiny, -tiny, 1.0, -1.0, 0.5};
  return v[k % (int)(sizeof v / sizeof v[0])];
}

static void fill(const tensor_spec *t, const int64_t *sizes, int rank, void *data, bool edge,
                 uint64_t *rng) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= sizes[d];
  bool is_float = alloy_dtype_is_float(t->dtype);
  int64_t lo, hi;
  int_range(t->dtype, &lo, &hi);
  for (int64_t i = 0; i < n; i++) {
    double u = conform_uniform(rng);
    double v = 0;
    int64_t iv = 0;
    switch (t->fill) {
      case FILL_INDEX: {
        int64_t span = t->bound > t->low ? t->bound - t->low : 1;
        iv = t->low + (int64_t)(u * (double)span);
        v = (double)iv;
        break;
      }
      case FILL_POSITIVE: v = 0.5 + 2.5 * u; iv = 1 + (int64_t)(u * 8); break;
      case FILL_PROB: v = 0.05 + 0.9 * u; iv = u < 0.5; break;
      case FILL_NONZERO: v = (u < 0.5 ? -1 : 1) * (0.5 + 2 * conform_uniform(rng)); iv = (u < 0.5 ? -1 : 1) * (1 + (int64_t)(conform_uniform(rng) * 8)); break;
      default:
        v = -3 + 6 * u;
        iv = t->dtype == ALLOY_U8 ? (int64_t)(u * 10) : (int64_t)(u * 19) - 9;
        if (edge && t->sample_dtype && (conform_splitmix(rng) & 1)) {
          int k = (int)(conform_splitmix(rng) % 16);
          if (is_float) v = float_edge(t->dtype, k);
          else {
            const int64_t ints[] = {lo, hi, 0, -1, 1, lo + 1, hi - 1, 2};
            iv = ints[k % 8];
            if (iv < lo || iv > hi) iv = 0;
          }
        }
        break;
    }
    store(data, t->dtype, i, v, iv, !is_float || t->fill == FILL_INDEX);
  }
  if (t->fill == FILL_SPD && rank >= 2 && is_float) {
    /* Diagonally dominant and symmetric: positive definite. */
    int64_t m = sizes[rank - 1], batch = m > 0 ? n / (m * m) : 0;
    for (int64_t b = 0; b < batch; b++)
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < m; j++) {
          double x = i == j ? (double)m + 1 : 0.1 * (double)((i + j) % 3);
          store(data, t->dtype, b * m * m + i * m + j, x, 0, false);
        }
  }
}

/* ---- checking ------------------------------------------------------------ */

/* Sums of products: a backend may add the K products in any order (in
 * blocks, in parallel, with FMA) where ref accumulates in double, and the
 * error of such a sum is bounded by K * u * sum|a||b| (Higham, Accuracy and
 * Stability of Numerical Algorithms, section 3.1), however small the result
 * is after cancellation. These outputs pass within that bound; the bound's
 * sums come from ref run on the inputs' absolute values. K is the last dim
 * of the input named here. */
static const struct {
  const char *op;
  int input;
} contractions[] = {
    {"aten.mm.default", 0},      {"aten.bmm.default", 0},     {"aten.addmm.default", 1},
    {"aten.matmul.default", 0},  {"aten.mv.default", 0},      {"aten.dot.default", 0},
    {"aten.baddbmm.default", 1}, {"aten.addmv.default", 1},   {"aten.addbmm.default", 1},
    {"aten.linear.default", 0},  {"aten.vdot.default", 0},
};

static double unit_roundoff(alloy_dtype t) {
  return t == ALLOY_F64 ? 0x1p-53 : t == ALLOY_F32 ? 0x1p-24 : t == ALLOY_F16 ? 0x1p-11 : 0x1p-8;
}

/* true when the contraction's outputs are within their bound. */
static bool contraction_ok(conform_env *env, const char *op, const alloy_graph *g,
                           const alloy_host_tensor *in, int nin, const conform_tensor *got,
                           const conform_tensor *want, int nout, char *why, size_t cap) {
  int row = -1;
  for (size_t i = 0; i < sizeof contractions / sizeof contractions[0]; i++)
    if (!strcmp(contractions[i].op, op)) row = (int)i;
  if (row < 0 || nout != 1 || !alloy_dtype_is_float(want[0].dtype)) return false;
  int k = contractions[row].input;
  if (k >= nin || in[k].rank < 1) return false;
  double K = (double)in[k].sizes[in[k].rank - 1];
  alloy_host_tensor abs_in[16];
  conform_tensor held[16] = {{0}}, mag = {0};
  bool ok = true;
  for (int i = 0; i < nin && ok; i++) {
    int64_t n = 1;
    for (int d = 0; d < in[i].rank; d++) n *= in[i].sizes[d];
    held[i] = (conform_tensor){in[i].dtype, in[i].rank, {0}, malloc((size_t)(n ? n : 1) * alloy_dtype_size(in[i].dtype))};
    for (int d = 0; d < in[i].rank; d++) held[i].sizes[d] = in[i].sizes[d];
    ok = held[i].data != NULL;
    alloy_st_entry e = {.dtype = in[i].dtype, .data = in[i].data};
    for (int64_t j = 0; ok && j < n; j++) {
      double x = fabs(conform_load(&e, j));
      store(held[i].data, in[i].dtype, j, x, (int64_t)x, !alloy_dtype_is_float(in[i].dtype));
    }
    abs_in[i] = conform_tensor_host(&held[i]);
  }
  char scratch[256];
  conform_options oo;
  conform_env oracle = conform_oracle_env(env, &oo);
  ok = ok && conform_run_graph(&oracle, env->ref, g, false, abs_in, nin, &mag, 1, NULL, scratch,
                               sizeof scratch) == CONFORM_PASS;
  ok = ok && conform_within_bound(op, &got[0], &want[0], &mag, K * unit_roundoff(want[0].dtype), why, cap);
  conform_tensors_free(held, nin);
  conform_tensors_free(&mag, 1);
  return ok;
}

static double flops_of(const char *op, const conform_tensor *out, const alloy_host_tensor *in, int nin) {
  int64_t n = 1;
  for (int d = 0; d < out->rank; d++) n *= out->sizes[d];
  /* Contractions: two flops per multiply-add over the shared dim. */
  if ((!strcmp(op, "aten.mm.default") || !strcmp(op, "aten.bmm.default")) && nin >= 1)
    return 2.0 * (double)n * (double)in[0].sizes[in[0].rank - 1];
  if (!strcmp(op, "aten.addmm.default") && nin >= 2)
    return 2.0 * (double)n * (double)in[1].sizes[in[1].rank - 1];
  return (double)n;
}

static conform_verdict samples_check(const conform_source *src, const conform_test *t,
                                     conform_env *env, conform_result *res) {
  const samples_state *ss = src->self;
  const sample_spec *sp = &ss->specs[t->aux];
  const conform_options *o = env->o;
  char *why = res->why;
  size_t cap = sizeof res->why;
  alloy_arena arena = {0};
  parser ps;
  alloy_graph *g = NULL;
  if (!sample_build(ss, sp, &g, &ps, &arena, why, cap)) {
    alloy_arena_free(&arena);
    return CONFORM_INVALID;
  }
  /* Inputs: as the graph's inputs ask (a layout's view reads a larger or
   * smaller tensor than the op). */
  uint64_t rng = hash_str(t->op, o->seed * 0x9e3779b97f4a7c15ull ^ (uint64_t)t->index);
  alloy_host_tensor in[16];
  conform_tensor held[16];
  int nin = alloy_graph_num_inputs(g);
  for (int k = 0; k < nin; k++) {
    alloy_value_type vt;
    alloy_value_get_type(alloy_graph_input(g, k), &vt);
    conform_tensor *h = &held[k];
    h->dtype = vt.dtype, h->rank = vt.rank;
    int64_t n = 1;
    for (int d = 0; d < vt.rank; d++) n *= h->sizes[d] = vt.shape[d].value;
    h->data = malloc((size_t)(n ? n : 1) * alloy_dtype_size(vt.dtype));
    if (h->data) fill(&ps.tensors[k], h->sizes, h->rank, h->data, sp->edge, &rng);
    in[k] = conform_tensor_host(h);
  }
  int nout = alloy_graph_num_outputs(g);
  conform_tensor want[16] = {{0}}, got[16] = {{0}};
  double ref_s = 0, be_s = 0;
  /* --perf times the large sample, or a fixed-shape recipe's first. */
  bool fixed = !strstr(recipe_text(ss, sp), "[S]");
  bool timed = o->perf && sp->layout == LAYOUT_CONTIGUOUS && !sp->edge &&
               (sp->shape == SHAPE_LARGE || (fixed && sp->alt == 0));
  conform_options oo;
  conform_env oracle = conform_oracle_env(env, &oo);
  conform_verdict v = conform_run_graph(&oracle, env->ref, g, false, in, nin, want, nout,
                                        timed ? &ref_s : NULL, why, cap);
  if (v != CONFORM_PASS) {
    /* The oracle cannot run it: not a sample of the op's domain. */
    v = CONFORM_INVALID;
  } else if (env->backend < 0) {
    /* meta: the inferred types must be what ref produced. */
    for (int k = 0; k < nout && v == CONFORM_PASS; k++) {
      alloy_value_type vt;
      alloy_value_get_type(alloy_graph_output(g, k), &vt);
      bool ok = vt.kind != ALLOY_VALUE_TENSOR || (vt.dtype == want[k].dtype && vt.rank == want[k].rank);
      for (int d = 0; ok && vt.kind == ALLOY_VALUE_TENSOR && d < vt.rank; d++)
        ok = !alloy_dim_is_const(vt.shape[d]) || vt.shape[d].value == want[k].sizes[d];
      if (!ok) {
        char a[128], b[128];
        alloy_value_type_print(vt.kind, vt.dtype, vt.shape, vt.rank, a, sizeof a);
        alloy_value_type_print(ALLOY_VALUE_TENSOR, want[k].dtype, NULL, 0, b, sizeof b);
        snprintf(why, cap, "output %d: inferred %s, ref computes %s of rank %d", k, a, b,
                 (int)want[k].rank);
        v = CONFORM_FAIL;
      }
    }
  } else {
    v = conform_run_graph(env, env->backend, g, false, in, nin, got, nout, timed ? &be_s : NULL,
                          why, cap);
    if (v == CONFORM_PASS) {
      const alloy_op *op = alloy_op_by_id(sp->op);
      bool values = !(alloy_op_tags(op) & ALLOY_TAG_NONDETERMINISTIC) && !undefined_values(t->op);
      const alloy_schema *s = alloy_op_schema(op);
      int di = alloy_schema_find_arg(s, "dim");
      int64_t dim = -1;
      alloy_node *node = NULL;
      for (int i = alloy_graph_num_nodes(g) - 1; i >= 0 && !node; i--) node = alloy_graph_node(g, i);
      const alloy_arg *a = node && di >= 0 ? alloy_node_arg(node, di) : NULL;
      if (a && a->kind == ALLOY_ARG_INT && alloy_dim_is_const(a->u.i)) dim = a->u.i.value;
      if (!conform_outputs_match(t->op, got, want, nout, values, nin ? &held[0] : NULL, dim, why, cap) &&
          !contraction_ok(env, t->op, g, in, nin, got, want, nout, why, cap))
        v = CONFORM_FAIL;
      if (conform_repro_wanted(env, v)) {
        char path[4096];
        conform_repro_write(env, t, g, in, nin, want, nout, why, path, sizeof path);
        size_t len = strlen(why);
        if (path[0] && len < cap && v == CONFORM_FAIL)
          snprintf(why + len, cap - len, " [repro: %.900s]", path);
      } else if (o->repro_all) {
        char path[4096];
        conform_repro_write(env, t, g, in, nin, want, nout, "", path, sizeof path);
      }
    }
    if (timed && v == CONFORM_PASS) {
      res->backend_s = be_s, res->ref_s = ref_s;
      double bytes = 0;
      for (int k = 0; k < nin; k++) {
        int64_t n = 1;
        for (int d = 0; d < in[k].rank; d++) n *= in[k].sizes[d];
        bytes += (double)n * (double)alloy_dtype_size(in[k].dtype);
      }
      for (int k = 0; k < nout; k++) {
        int64_t n = 1;
        for (int d = 0; d < want[k].rank; d++) n *= want[k].sizes[d];
        bytes += (double)n * (double)alloy_dtype_size(want[k].dtype);
      }
      res->bytes = bytes;
      res->flops = nout ? flops_of(t->op, &want[0], in, nin) : 0;
    }
  }
  conform_tensors_free(want, nout);
  conform_tensors_free(got, nout);
  conform_tensors_free(held, nin);
  alloy_graph_free(g);
  alloy_arena_free(&arena);
  return v;
}

static void samples_rerun(const conform_source *src, const conform_test *t, char *buf, size_t cap) {
  const samples_state *ss = src->self;
  snprintf(buf, cap, "--only samples --ops '%s' --sample %ld --seed %llu", t->op, t->index,
           (unsigned long long)ss->seed);
}

static void samples_close(conform_source *src) {
  samples_state *ss = src->self;
  if (!ss) return;
  for (int i = 0; i < ss->nops; i++) free(ss->derived[i]);
  free(ss->derived);
  free(ss->rows);
  free(ss->specs);
  free(ss);
  src->self = NULL;
}

conform_source conform_samples_source(void) {
  return (conform_source){.name = "samples", .list = samples_list, .check = samples_check,
                          .rerun = samples_rerun, .close = samples_close};
}
