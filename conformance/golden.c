/*
 * conformance/golden.c: the golden corpus as a source of tests (suite.h):
 * each case PyTorch recorded becomes a one-node graph checked against it.
 *
 * A case is one JSON line: the op, its positional args and kwargs as tagged
 * values ({"t": key} a tensor stored in a safetensors file, {"i": n}, {"f": x},
 * {"b": v}, {"l": [...]}, {"dtype": name}, {"s": text}, null), and the
 * recorded outputs. Values are typed by the op's schema, not by their
 * content: a {"s": "cpu"} is a Device where the schema says Device.
 */
#include "conformance/suite.h"

#include <fnmatch.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/graph.h"
#include "alloy/runtime.h"
#include "alloy/safetensors.h"
#include "conformance/compare.h"
#include "ir/graph_internal.h"

typedef conform_verdict verdict;


typedef struct {
  const char *dir;
  alloy_safetensors *files[8];
  char *names[8];
  int nfiles;
} golden_files;

static alloy_error *golden_file(golden_files *gf, const char *name,
                                alloy_safetensors **out) {
  for (int i = 0; i < gf->nfiles; i++)
    if (!strcmp(gf->names[i], name)) return *out = gf->files[i], NULL;
  if (gf->nfiles == 8) return alloy_error_new(ALLOY_ERR_UNSUPPORTED, "too many data files");
  char path[4096];
  snprintf(path, sizeof path, "%s/ops/%s", gf->dir, name);
  alloy_error *e = alloy_safetensors_open(path, &gf->files[gf->nfiles]);
  if (e) return e;
  gf->names[gf->nfiles] = strdup(name);
  *out = gf->files[gf->nfiles++];
  return NULL;
}

static void golden_files_close(golden_files *gf) {
  for (int i = 0; i < gf->nfiles; i++) {
    alloy_safetensors_close(gf->files[i]);
    free(gf->names[i]);
  }
}

/* Arguments are built in a scratch arena per case. */
typedef struct {
  alloy_graph *g;
  alloy_safetensors *data;
  alloy_arena arena;
  int ninputs;
  const alloy_st_entry *inputs[64]; /* the data of graph input k */
} case_ctx;

static const struct {
  const char *text;
  alloy_arg_kind kind;
  int value;
} golden_enums[] = {
    {"torch.strided", ALLOY_ARG_LAYOUT, ALLOY_LAYOUT_STRIDED},
    {"torch.contiguous_format", ALLOY_ARG_MEMORY_FORMAT, ALLOY_MEMORY_CONTIGUOUS},
    {"torch.preserve_format", ALLOY_ARG_MEMORY_FORMAT, ALLOY_MEMORY_PRESERVE},
    {"torch.channels_last", ALLOY_ARG_MEMORY_FORMAT, ALLOY_MEMORY_CHANNELS_LAST},
    {"torch.channels_last_3d", ALLOY_ARG_MEMORY_FORMAT, ALLOY_MEMORY_CHANNELS_LAST_3D},
};

static alloy_error *tensor_input(case_ctx *c, const char *key, alloy_value **out) {
  const alloy_st_entry *e = alloy_safetensors_find(c->data, key);
  if (!e) return alloy_error_new(ALLOY_ERR_NOT_FOUND, "tensor '%s' missing from the data file", key);
  alloy_dim shape[ALLOY_MAX_RANK];
  for (int d = 0; d < e->rank; d++) shape[d] = alloy_dim_const(e->shape[d]);
  alloy_value_type t = {ALLOY_VALUE_TENSOR, e->dtype, e->rank, shape, NULL,
                        {ALLOY_DEVICE_CPU, -1}, {NULL, 0}};
  if (c->ninputs == 64) return alloy_error_new(ALLOY_ERR_UNSUPPORTED, "more than 64 tensor arguments");
  char name[32];
  snprintf(name, sizeof name, "x%d", c->ninputs);
  c->inputs[c->ninputs++] = e;
  return alloy_graph_add_input(c->g, name, &t, out);
}

static alloy_error *convert(case_ctx *c, json_t *j, const alloy_type *t,
                            alloy_arg *out) {
  if (json_is_null(j)) return *out = alloy_arg_none(), NULL;
  const char *key;
  json_t *v;
  json_object_foreach(j, key, v) break;
  if (!key) return alloy_error_new(ALLOY_ERR_PARSE, "empty argument object");
  if (!strcmp(key, "t")) {
    alloy_value *val;
    alloy_error *e = tensor_input(c, json_string_value(v), &val);
    if (e) return e;
    *out = alloy_arg_value(val);
  } else if (!strcmp(key, "i")) {
    *out = alloy_arg_int(json_integer_value(v));
  } else if (!strcmp(key, "f")) {
    double f = json_real_value(v);
    if (json_is_integer(v)) f = (double)json_integer_value(v);
    if (json_is_string(v)) {
      const char *s = json_string_value(v);
      f = !strcmp(s, "nan") ? NAN : !strcmp(s, "-inf") ? -INFINITY : INFINITY;
    }
    *out = alloy_arg_float(f);
  } else if (!strcmp(key, "b")) {
    *out = alloy_arg_bool(json_is_true(v));
  } else if (!strcmp(key, "dtype")) {
    alloy_dtype dt;
    const char *s = json_string_value(v);
    if (!s || !alloy_dtype_from_name(s, strlen(s), &dt))
      return alloy_error_new(ALLOY_ERR_UNSUPPORTED, "unknown dtype %s", s ? s : "?");
    *out = alloy_arg_dtype(dt);
  } else if (!strcmp(key, "l")) {
    size_t n = json_array_size(v);
    alloy_arg *items = alloy_arena_alloc(&c->arena, sizeof *items * (n ? n : 1));
    if (!items) return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
    alloy_type et = *t;
    et.list = false;
    for (size_t i = 0; i < n; i++) {
      alloy_error *e = convert(c, json_array_get(v, i), &et, &items[i]);
      if (e) return e;
    }
    *out = alloy_arg_list(items, (int32_t)n);
  } else if (!strcmp(key, "s")) {
    const char *s = json_string_value(v);
    if (t->kind == ALLOY_TYPE_DEVICE) {
      out->kind = ALLOY_ARG_DEVICE;
      out->u.device.type = !strncmp(s, "cuda", 4) ? ALLOY_DEVICE_CUDA
                           : !strcmp(s, "meta")   ? ALLOY_DEVICE_META
                                                  : ALLOY_DEVICE_CPU;
      const char *colon = strchr(s, ':');
      out->u.device.index = colon ? atoi(colon + 1) : -1;
      return NULL;
    }
    for (size_t i = 0; i < sizeof golden_enums / sizeof golden_enums[0]; i++)
      if (!strcmp(s, golden_enums[i].text)) {
        out->kind = golden_enums[i].kind;
        if (out->kind == ALLOY_ARG_LAYOUT) out->u.layout = (alloy_layout)golden_enums[i].value;
        else out->u.memory_format = (alloy_memory_format)golden_enums[i].value;
        return NULL;
      }
    *out = alloy_arg_str(alloy_arena_strdup(&c->arena, s));
  } else {
    return alloy_error_new(ALLOY_ERR_PARSE, "unknown argument tag '%s'", key);
  }
  return NULL;
}

/* Builds the one-node graph of a case; *node receives the node. */
static alloy_error *case_build(case_ctx *c, const alloy_op *op, json_t *jc,
                               alloy_node **node) {
  const alloy_schema *s = alloy_op_schema(op);
  json_t *jargs = json_object_get(jc, "args"), *jkw = json_object_get(jc, "kwargs");
  int nargs = (int)json_array_size(jargs), nkw = (int)json_object_size(jkw);
  if (nargs > alloy_schema_num_args(s))
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "more arguments than the schema has");
  alloy_arg args[64], kwargs[64];
  const char *kwnames[64];
  if (nargs > 64 || nkw > 64) return alloy_error_new(ALLOY_ERR_UNSUPPORTED, "too many arguments");
  for (int i = 0; i < nargs; i++) {
    alloy_error *e = convert(c, json_array_get(jargs, (size_t)i),
                             &alloy_schema_arg_at(s, i)->type, &args[i]);
    if (e) return e;
  }
  int k = 0;
  const char *key;
  json_t *v;
  json_object_foreach(jkw, key, v) {
    int i = alloy_schema_find_arg(s, key);
    if (i < 0) return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "unknown keyword '%s'", key);
    kwnames[k] = key;
    alloy_error *e = convert(c, v, &alloy_schema_arg_at(s, i)->type, &kwargs[k]);
    if (e) return e;
    k++;
  }
  return alloy_graph_add_node(c->g, op, args, nargs, kwnames, kwargs, nkw, "out", node);
}

/* --- comparing outputs ------------------------------------------------ */

static void describe_expected(case_ctx *c, json_t *j, char *buf, size_t cap) {
  const char *key;
  json_t *v;
  json_object_foreach(j, key, v) break;
  if (json_is_null(j) || !key) {
    snprintf(buf, cap, "None");
  } else if (!strcmp(key, "t")) {
    const alloy_st_entry *e = alloy_safetensors_find(c->data, json_string_value(v));
    if (!e) {
      snprintf(buf, cap, "?");
      return;
    }
    size_t n = (size_t)snprintf(buf, cap, "%s[", alloy_dtype_short_name(e->dtype));
    for (int d = 0; d < e->rank && n < cap; d++)
      n += (size_t)snprintf(buf + n, cap - n, d ? ", %lld" : "%lld", (long long)e->shape[d]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
  } else {
    snprintf(buf, cap, "%s", !strcmp(key, "b") ? "bool" : !strcmp(key, "i") ? "SymInt" : "float");
  }
}

static void describe_value(const alloy_value *v, char *buf, size_t cap) {
  alloy_value_type t;
  alloy_value_get_type(v, &t);
  alloy_value_type_print(t.kind, t.dtype, t.shape, t.rank, buf, cap);
}

/* Does output v agree with the recorded value j? */
static bool output_matches(case_ctx *c, const alloy_value *v, json_t *j) {
  const char *key;
  json_t *jv;
  json_object_foreach(j, key, jv) break;
  if (!key) return false;
  alloy_value_type t;
  alloy_value_get_type(v, &t);
  if (!strcmp(key, "b")) return t.kind == ALLOY_VALUE_BOOL;
  if (!strcmp(key, "i")) return t.kind == ALLOY_VALUE_INT;
  if (!strcmp(key, "f")) return t.kind == ALLOY_VALUE_FLOAT;
  if (strcmp(key, "t") || t.kind != ALLOY_VALUE_TENSOR) return false;
  const alloy_st_entry *e = alloy_safetensors_find(c->data, json_string_value(jv));
  if (!e || e->dtype != t.dtype || e->rank != t.rank) return false;
  for (int d = 0; d < t.rank; d++)
    /* Inputs are concrete, so a symbolic output size is data-dependent
     * (an unbacked symbol): PyTorch's meta device cannot know it either. */
    if (alloy_dim_is_const(t.shape[d]) && t.shape[d].value != e->shape[d]) return false;
  return true;
}

/* Compares the node's outputs with the case's "out"; on mismatch writes
 * "expected X, got Y" to why. */
static bool outputs_match(case_ctx *c, const alloy_node *n, json_t *jout,
                          char *why, size_t cap) {
  json_t *items = NULL;
  int nexp;
  json_t *l = json_object_get(jout, "l");
  if (json_is_null(jout)) nexp = 0;
  else if (l) items = l, nexp = (int)json_array_size(l);
  else nexp = 1;
  int nout = alloy_node_num_outputs(n);
  bool ok = nout == nexp;
  for (int k = 0; k < nexp && k < nout && ok; k++)
    ok = output_matches(c, alloy_node_output(n, k), items ? json_array_get(items, (size_t)k) : jout);
  if (ok) return true;
  size_t len = (size_t)snprintf(why, cap, "expected (");
  for (int k = 0; k < nexp && len < cap; k++) {
    if (k) len += (size_t)snprintf(why + len, cap - len, ", ");
    if (len < cap) describe_expected(c, items ? json_array_get(items, (size_t)k) : jout, why + len, cap - len);
    len = strlen(why);
  }
  if (len < cap) len += (size_t)snprintf(why + len, cap - len, "), got (");
  for (int k = 0; k < nout && len < cap; k++) {
    if (k) len += (size_t)snprintf(why + len, cap - len, ", ");
    if (len < cap) describe_value(alloy_node_output(n, k), why + len, cap - len);
    len = strlen(why);
  }
  if (len < cap) snprintf(why + len, cap - len, ")");
  return false;
}

/* The outputs PyTorch recorded, as a list of tagged values. */
static int expected_outputs(json_t *jout, json_t **items) {
  json_t *l = json_object_get(jout, "l");
  *items = l;
  return json_is_null(jout) ? 0 : l ? (int)json_array_size(l) : 1;
}

static json_t *expected_output(json_t *jout, json_t *items, int k) {
  return items ? json_array_get(items, (size_t)k) : jout;
}

/* A recorded Python scalar ({"b": v}, {"i": n}, {"f": x}) as the zero-dim
 * tensor a backend returns for a scalar output. */
static bool scalar_expected(json_t *je, alloy_st_entry *out) {
  static _Thread_local union {
    uint8_t b;
    int64_t i;
    double f;
  } value;
  memset(out, 0, sizeof *out);
  json_t *v;
  if ((v = json_object_get(je, "b"))) {
    value.b = json_is_true(v);
    out->dtype = ALLOY_BOOL;
  } else if ((v = json_object_get(je, "i"))) {
    value.i = json_integer_value(v);
    out->dtype = ALLOY_I64;
  } else if ((v = json_object_get(je, "f"))) {
    value.f = json_number_value(v);
    out->dtype = ALLOY_F64;
  } else {
    return false;
  }
  out->name = "scalar";
  out->rank = 0;
  out->data = &value;
  out->nbytes = alloy_dtype_size(out->dtype);
  return true;
}

/* An index output that picks other positions of equal values, for the ops
 * where PyTorch does not promise which of equal values wins. */
static bool ties_accepted(case_ctx *c, alloy_node *node, const alloy_host_tensor *got,
                          const alloy_st_entry *want) {
  const char *op = alloy_op_name(alloy_node_op(node));
  if (!conform_op_has_ties(op) || c->ninputs < 1) return false;
  const alloy_schema *s = alloy_op_schema(alloy_node_op(node));
  int di = alloy_schema_find_arg(s, "dim");
  int64_t dim = -1;
  const alloy_arg *a = di >= 0 ? alloy_node_arg(node, di) : NULL;
  if (a && a->kind == ALLOY_ARG_INT && alloy_dim_is_const(a->u.i)) dim = a->u.i.value;
  return conform_ties_ok(op, got, want, c->inputs[0], dim);
}

/* Random ops are checked by what the randomness cannot change (shape,
 * dtype, the range each value must lie in), never value by value: PyTorch's
 * generator stream is not Alloy's. Each row says when an op is random and
 * how to check it. */
static double host_value(const alloy_host_tensor *t, int64_t i) {
  alloy_st_entry e = {.dtype = t->dtype, .data = t->data};
  return conform_load(&e, i);
}

/* rrelu in training mode: x >= 0 passes through; a negative x is scaled by
 * a slope drawn from [lower, upper]. */
static bool check_rrelu(case_ctx *c, alloy_node *node, const alloy_host_tensor *got, char *why,
                        size_t cap) {
  const alloy_st_entry *x = c->inputs[0];
  double lower = 0.125, upper = 1.0 / 3.0;
  const alloy_arg *lo = alloy_node_arg(node, 2), *hi = alloy_node_arg(node, 3);
  if (lo->kind == ALLOY_ARG_FLOAT) lower = lo->u.f;
  if (lo->kind == ALLOY_ARG_INT) lower = (double)lo->u.i.value;
  if (hi->kind == ALLOY_ARG_FLOAT) upper = hi->u.f;
  if (hi->kind == ALLOY_ARG_INT) upper = (double)hi->u.i.value;
  conform_tolerance tol = conform_tolerance_for(alloy_op_name(alloy_node_op(node)), got->dtype);
  int64_t n = 1;
  for (int d = 0; d < got->rank; d++) n *= got->sizes[d];
  for (int64_t i = 0; i < n; i++) {
    double xi = conform_load(x, i), o = host_value(got, i);
    bool ok = xi >= 0 || isnan(xi)
                  ? (o == xi || (isnan(o) && isnan(xi)) || fabs(o - xi) <= tol.atol + tol.rtol * fabs(xi))
                  : o <= xi * lower + tol.atol + tol.rtol * fabs(xi * lower) &&
                        o >= xi * upper - tol.atol - tol.rtol * fabs(xi * upper);
    if (!ok) {
      snprintf(why, cap, "element %lld: rrelu(%g) = %g is not x for x >= 0, nor x times a slope in "
               "[%g, %g]", (long long)i, xi, o, lower, upper);
      return false;
    }
  }
  return true;
}

static bool rrelu_training(alloy_node *node) {
  const alloy_arg *a = alloy_node_arg(node, 4);
  return a && a->kind == ALLOY_ARG_BOOL && a->u.b;
}

static const struct {
  const char *op;
  bool (*is_random)(alloy_node *node);
  bool (*check)(case_ctx *c, alloy_node *node, const alloy_host_tensor *got, char *why, size_t cap);
} random_ops[] = {
    {"aten.rrelu_with_noise.default", rrelu_training, check_rrelu},
};

/* The random-op row for node, or -1 when its values are deterministic. */
static int random_row(alloy_node *node) {
  for (size_t i = 0; i < sizeof random_ops / sizeof random_ops[0]; i++)
    if (!strcmp(random_ops[i].op, alloy_op_name(alloy_node_op(node))) && random_ops[i].is_random(node))
      return (int)i;
  return -1;
}

/* Runs the case's graph on a backend and compares values. */
static verdict check_on_backend(conform_env *env, const conform_test *t, case_ctx *c,
                                alloy_node *node, json_t *jc, char *why, size_t cap) {
  json_t *items, *jout = json_object_get(jc, "out");
  int nexp = expected_outputs(jout, &items), nout = alloy_node_num_outputs(node);
  if (nexp != nout) {
    snprintf(why, cap, "%d outputs, PyTorch gives %d", nout, nexp);
    return CONFORM_FAIL;
  }
  if (nout > 16) return snprintf(why, cap, "more than 16 outputs"), CONFORM_SKIP;
  alloy_value *outs[16];
  for (int k = 0; k < nout; k++) outs[k] = alloy_node_output(node, k);
  alloy_error *e = alloy_graph_set_outputs(c->g, outs, nout);
  alloy_program *prog = NULL;
  alloy_program_options po = {.struct_size = sizeof po,
                              .decompose = (alloy_decompose_level)env->o->decompose};
  if (!e) e = alloy_program_compile_ex(env->rt, env->backend, c->g, &po, &prog);
  if (e && alloy_error_code_of(e) == ALLOY_ERR_UNSUPPORTED && strstr(alloy_error_message(e), "does not claim")) {
    alloy_error_free(e);
    snprintf(why, cap, "not claimed by the backend");
    return CONFORM_SKIP;
  }
  alloy_host_tensor in[64], res[16];
  for (int i = 0; i < c->ninputs; i++)
    in[i] = (alloy_host_tensor){sizeof in[i], c->inputs[i]->dtype, c->inputs[i]->rank,
                                c->inputs[i]->shape, (void *)c->inputs[i]->data};
  for (int k = 0; k < nout; k++) res[k].struct_size = sizeof res[k];
  if (!e) e = alloy_program_run(prog, in, c->ninputs, res, nout);
  verdict v = CONFORM_PASS;
  if (e) {
    snprintf(why, cap, "%s", alloy_error_message(e));
    alloy_error_free(e);
    v = CONFORM_FAIL;
  }
  for (int k = 0; k < nout && v == CONFORM_PASS; k++) {
    json_t *je = expected_output(jout, items, k);
    const char *key = json_string_value(json_object_get(je, "t"));
    const alloy_st_entry *want = key ? alloy_safetensors_find(c->data, key) : NULL;
    alloy_st_entry scalar;
    if (!want && scalar_expected(je, &scalar)) want = &scalar;
    if (!want) {
      snprintf(why, cap, "output %d: PyTorch's value is not a tensor", k);
      v = CONFORM_FAIL;
    } else if (random_row(node) >= 0) {
      int r = random_row(node);
      if (res[k].dtype != want->dtype || res[k].rank != want->rank) {
        snprintf(why, cap, "output %d: got %s of rank %d, expected %s of rank %d", k,
                 alloy_dtype_name(res[k].dtype), (int)res[k].rank, alloy_dtype_name(want->dtype), want->rank);
        v = CONFORM_FAIL;
      }
      for (int d = 0; d < res[k].rank && v == CONFORM_PASS; d++)
        if (res[k].sizes[d] != want->shape[d]) {
          snprintf(why, cap, "output %d: size %lld at dim %d, expected %lld", k,
                   (long long)res[k].sizes[d], d, (long long)want->shape[d]);
          v = CONFORM_FAIL;
        }
      if (v == CONFORM_PASS && !random_ops[r].check(c, node, &res[k], why, cap)) v = CONFORM_FAIL;
    } else if (!conform_compare(alloy_op_name(alloy_node_op(node)), &res[k], want, why, cap) &&
               !ties_accepted(c, node, &res[k], want)) {
      v = CONFORM_FAIL;
    }
  }
  if (conform_repro_wanted(env, v)) {
    /* The repro carries PyTorch's tensors as the expected outputs. */
    conform_tensor want[16];
    int nwant = 0;
    for (int k = 0; k < nout; k++) {
      const char *key = json_string_value(json_object_get(expected_output(jout, items, k), "t"));
      const alloy_st_entry *w = key ? alloy_safetensors_find(c->data, key) : NULL;
      if (!w) break;
      want[nwant] = (conform_tensor){w->dtype, w->rank, {0}, (void *)w->data};
      for (int d = 0; d < w->rank && d < 8; d++) want[nwant].sizes[d] = w->shape[d];
      nwant++;
    }
    char path[4096];
    conform_repro_write(env, t, c->g, in, c->ninputs, want, nwant, why, path, sizeof path);
    size_t len = strlen(why);
    if (path[0] && len < cap && v == CONFORM_FAIL)
      snprintf(why + len, cap - len, " [repro: %.900s]", path);
  }
  alloy_program_release(prog);
  return v;
}

static verdict check_meta(case_ctx *c, alloy_node *node, json_t *jc, char *why, size_t cap) {
  return outputs_match(c, node, json_object_get(jc, "out"), why, cap) ? CONFORM_PASS : CONFORM_FAIL;
}


/* --- the source ---------------------------------------------------------- */

/* The key of the first tensor in a tagged value ({"t": key}, or inside a
 * list), or NULL. */
static const char *first_tensor(json_t *j) {
  const char *key = json_string_value(json_object_get(j, "t"));
  json_t *l = json_object_get(j, "l");
  for (size_t i = 0; !key && i < json_array_size(l); i++) key = first_tensor(json_array_get(l, i));
  return key;
}

/* What a case's test says of its dtypes: the dtype of its first tensor
 * argument (of its first output when it takes none), read from the data
 * file, and in variant the output's when that differs. The case's own
 * "dtype" is the OpInfo sample's label, which the tensors often do not
 * carry (aten.view.default of int64 indices in a float32 sample,
 * comparisons returning bool), so it names nothing a reader can check. */
static alloy_error *case_dtypes(golden_files *gf, json_t *jc, conform_test *t) {
  const char *file = json_string_value(json_object_get(jc, "file"));
  alloy_safetensors *data = NULL;
  alloy_error *e = file ? golden_file(gf, file, &data) : NULL;
  if (e || !file) return e;
  const char *in = NULL, *key;
  json_t *v, *args = json_object_get(jc, "args");
  for (size_t i = 0; !in && i < json_array_size(args); i++) in = first_tensor(json_array_get(args, i));
  json_object_foreach(json_object_get(jc, "kwargs"), key, v) if (!in) in = first_tensor(v);
  const char *out = first_tensor(json_object_get(jc, "out"));
  const alloy_st_entry *ei = in ? alloy_safetensors_find(data, in) : NULL;
  const alloy_st_entry *eo = out ? alloy_safetensors_find(data, out) : NULL;
  if (!ei) ei = eo;
  if (ei) snprintf(t->dtype, sizeof t->dtype, "%s", alloy_dtype_name(ei->dtype));
  if (ei && eo && eo->dtype != ei->dtype)
    snprintf(t->variant, sizeof t->variant, "out %s", alloy_dtype_name(eo->dtype));
  return NULL;
}

/* The corpus, read once in the parent; workers parse a case's line when
 * they check it and open its data files on first use. */
typedef struct golden_state {
  char **lines;    /* the selected cases' JSON lines */
  char **ops;      /* their op names */
  int n;
  int *line_of;    /* case id -> index in lines, -1 when not selected */
  long max_id;
  golden_files gf; /* opened in the worker, on first use */
} golden_state;

static alloy_error *golden_list(conform_source *src, const conform_options *o, conform_suite *suite) {
  if (!o->golden_dir || o->replay || !conform_wants_source(o, "golden")) return NULL;
  golden_state *gs = calloc(1, sizeof *gs);
  if (!gs) return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  src->self = gs;
  gs->gf.dir = o->golden_dir;
  char path[4096];
  snprintf(path, sizeof path, "%s/ops/ops.jsonl", o->golden_dir);
  FILE *f = fopen(path, "r");
  if (!f)
    return alloy_error_new(ALLOY_ERR_IO, "cannot open %s: the golden corpus is missing (pass --golden DIR)",
                           path);
  char *line = NULL;
  size_t linecap = 0;
  int lineno = 0, cap = 0;
  alloy_error *e = NULL;
  while (!e && getline(&line, &linecap, f) > 0) {
    lineno++;
    json_error_t je;
    json_t *jc = json_loads(line, 0, &je);
    if (!jc) {
      e = alloy_error_new(ALLOY_ERR_PARSE, "%s:%d:%d: %s", path, lineno, je.column, je.text);
      break;
    }
    long id = (long)json_integer_value(json_object_get(jc, "id"));
    const char *opname = json_string_value(json_object_get(jc, "op"));
    bool core = json_is_true(json_object_get(jc, "core"));
    conform_test t = {.source = src, .index = id,
                      .set = opname && !strncmp(opname, "prims.", 6) ? CONFORM_SET_PRIMS
                             : core                                  ? CONFORM_SET_CORE
                                                                     : CONFORM_SET_OTHER};
    bool keep = opname && id >= 0 && (!o->ops_glob || !fnmatch(o->ops_glob, opname, 0)) &&
                (!o->set || !strcmp(o->set, core ? "core" : "noncore"));
    /* The dtypes come from the data file's header: read only for the cases
     * the other filters keep. */
    if (keep && (e = case_dtypes(&gs->gf, jc, &t))) {
      json_decref(jc);
      break;
    }
    keep = keep && (!o->dtype || !strcmp(o->dtype, t.dtype));
    if (keep && gs->n == cap) {
      cap = cap ? 2 * cap : 1024;
      char **nl = realloc(gs->lines, sizeof *nl * (size_t)cap);
      char **no = nl ? realloc(gs->ops, sizeof *no * (size_t)cap) : NULL;
      if (nl) gs->lines = nl;
      if (no) gs->ops = no;
      if (!nl || !no) e = alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
    }
    if (keep && !e) {
      gs->lines[gs->n] = strdup(line);
      gs->ops[gs->n] = strdup(opname);
      if (!gs->lines[gs->n] || !gs->ops[gs->n]) e = alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
      gs->n++;
      t.op = gs->ops[gs->n - 1];
      if (!e && !conform_suite_add(suite, &t)) e = alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
      if (id > gs->max_id) gs->max_id = id;
    }
    json_decref(jc);
  }
  free(line);
  fclose(f);
  if (e) return e;
  gs->line_of = malloc(sizeof *gs->line_of * (size_t)(gs->max_id + 1));
  if (!gs->line_of) return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  for (long i = 0; i <= gs->max_id; i++) gs->line_of[i] = -1;
  for (int i = 0; i < gs->n; i++) {
    json_t *jc = json_loads(gs->lines[i], 0, NULL);
    gs->line_of[json_integer_value(json_object_get(jc, "id"))] = i;
    json_decref(jc);
  }
  return NULL;
}

static conform_verdict golden_check(const conform_source *src, const conform_test *t,
                                    conform_env *env, conform_result *res) {
  golden_state *gs = src->self;
  char *why = res->why;
  size_t cap = sizeof res->why;
  const alloy_op *op = alloy_op_find(t->op);
  if (!op) return snprintf(why, cap, "op not in the registry"), CONFORM_SKIP;
  json_t *jc = json_loads(gs->lines[gs->line_of[t->index]], 0, NULL);
  const char *file = json_string_value(json_object_get(jc, "file"));
  case_ctx c = {0};
  alloy_error *e = file ? golden_file(&gs->gf, file, &c.data)
                        : alloy_error_new(ALLOY_ERR_PARSE, "the case names no data file");
  verdict v = CONFORM_FAIL;
  alloy_node *node = NULL;
  if (!e) {
    c.g = alloy_graph_new();
    e = c.g ? case_build(&c, op, jc, &node) : alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  }
  if (e && alloy_error_code_of(e) == ALLOY_ERR_UNSUPPORTED &&
      strstr(alloy_error_message(e), "has no shape function")) {
    v = CONFORM_SKIP;
    snprintf(why, cap, "no shape function");
  } else if (e) {
    snprintf(why, cap, "%s", alloy_error_message(e));
  } else {
    v = env->backend < 0 ? check_meta(&c, node, jc, why, cap)
                         : check_on_backend(env, t, &c, node, jc, why, cap);
  }
  alloy_error_free(e);
  alloy_graph_free(c.g);
  alloy_arena_free(&c.arena);
  json_decref(jc);
  return v;
}

/* The flags that run this test's op again: the corpus folder as given. */
static void golden_rerun(const conform_source *src, const conform_test *t, char *buf, size_t cap) {
  const golden_state *gs = src->self;
  snprintf(buf, cap, "--golden '%s' --ops '%s' --only golden", gs && gs->gf.dir ? gs->gf.dir : "DIR", t->op);
}

static void golden_close(conform_source *src) {
  golden_state *gs = src->self;
  if (!gs) return;
  for (int i = 0; i < gs->n; i++) free(gs->lines[i]), free(gs->ops[i]);
  free(gs->lines);
  free(gs->ops);
  free(gs->line_of);
  golden_files_close(&gs->gf);
  free(gs);
  src->self = NULL;
}

conform_source conform_golden_source(void) {
  return (conform_source){.name = "golden", .list = golden_list, .check = golden_check,
                          .rerun = golden_rerun, .close = golden_close};
}
