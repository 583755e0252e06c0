/*
 * tests/test_functionalize.c: the functionalization pass against the eager
 * interpreter (tests/eager.c). Each program of tests/aliasing/ (*.air) runs
 * (a) eagerly, with real aliasing, and (b) functionalized and then on the
 * reference backend; every output and the final value of every input must
 * agree exactly, and an input the eager run changed must come back as a
 * mutation output. A program may say what must happen instead:
 *   # expect-error: NODE: TEXT    both refuse it, naming node NODE, with TEXT
 *   # expect-parse-error: TEXT    the graph builder already refuses it
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/graph.h"
#include "alloy/runtime.h"
#include "decompositions/functionalize.h"
#include "eager.h"
#include "harness.h"
#include "ir/graph_internal.h"

#define ALIASING_DIR "tests/aliasing"

/* Deterministic contents: small integers (halves for floats), input j
 * shifted so that inputs differ. */
static void fill(eager_tensor *t, int j) {
  int64_t n = eager_numel(t);
  size_t es = alloy_dtype_size(t->dtype);
  t->data = calloc((size_t)(n ? n : 1), es);
  for (int64_t i = 0; i < n; i++) {
    double x = (double)((i * 7 + j * 5) % 19) - 9;
    unsigned char *p = (unsigned char *)t->data + (size_t)i * es;
    switch (t->dtype) {
    case ALLOY_F32: *(float *)p = (float)(x * 0.5); break;
    case ALLOY_F64: *(double *)p = x * 0.5; break;
    case ALLOY_F16: *(uint16_t *)p = alloy_f16_from_f32((float)(x * 0.5)); break;
    case ALLOY_BF16: *(uint16_t *)p = alloy_bf16_from_f32((float)(x * 0.5)); break;
    case ALLOY_I64: *(int64_t *)p = (int64_t)x; break;
    case ALLOY_I32: *(int32_t *)p = (int32_t)x; break;
    case ALLOY_I16: *(int16_t *)p = (int16_t)x; break;
    case ALLOY_I8: *(int8_t *)p = (int8_t)x; break;
    case ALLOY_U8: *(uint8_t *)p = (uint8_t)(x < 0 ? -x : x); break;
    case ALLOY_BOOL: *(uint8_t *)p = (i + j) % 3 == 0; break;
    default: break;
    }
  }
}

/* Exact equality; NaNs equal each other. */
static bool same_data(alloy_dtype dt, const void *a, const void *b, int64_t n) {
  if (dt == ALLOY_F32) {
    for (int64_t i = 0; i < n; i++) {
      float x = ((const float *)a)[i], y = ((const float *)b)[i];
      if (!(x == y || (isnan(x) && isnan(y)))) return false;
    }
    return true;
  }
  if (dt == ALLOY_F64) {
    for (int64_t i = 0; i < n; i++) {
      double x = ((const double *)a)[i], y = ((const double *)b)[i];
      if (!(x == y || (isnan(x) && isnan(y)))) return false;
    }
    return true;
  }
  return !memcmp(a, b, (size_t)n * alloy_dtype_size(dt));
}

static bool same_tensor(const char *prog, const char *what, const eager_tensor *e,
                        const alloy_host_tensor *h) {
  bool ok = e->dtype == h->dtype && e->rank == h->rank;
  for (int d = 0; ok && d < e->rank; d++) ok = e->sizes[d] == h->sizes[d];
  if (ok) ok = same_data(e->dtype, e->data, h->data, eager_numel(e));
  if (!ok) harness_fail(__FILE__, __LINE__, "%s: %s differs between eager and functionalized", prog, what);
  return ok;
}

static char *read_text(const char *path, size_t *len) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  fseek(fp, 0, SEEK_END);
  long n = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, fp) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(fp);
  if (buf) buf[n] = 0;
  *len = (size_t)n;
  return buf;
}

/* The text after `key` on its line, trimmed, into out. */
static bool directive(const char *text, const char *key, char *out, size_t cap) {
  const char *p = strstr(text, key);
  if (!p) return false;
  p += strlen(key);
  while (*p == ' ') p++;
  size_t n = strcspn(p, "\n");
  while (n && (p[n - 1] == ' ' || p[n - 1] == '\r')) n--;
  snprintf(out, cap, "%.*s", (int)n, p);
  return true;
}

static bool mutates_any(const alloy_graph *g) {
  for (int i = 0; i < alloy_graph_num_nodes(g); i++)
    if (alloy_op_tags(alloy_node_op(alloy_graph_node(g, i))) & (ALLOY_TAG_INPLACE | ALLOY_TAG_MUTATES))
      return true;
  return false;
}

/* Both errors exist and name the node and say text. */
static void check_refused(const char *prog, alloy_error *eager_err, alloy_error *fz_err,
                          const char *spec) {
  char node[128] = "", text[256] = "", named[160];
  const char *colon = strchr(spec, ':');
  if (colon) {
    snprintf(node, sizeof node, "%.*s", (int)(colon - spec), spec);
    snprintf(text, sizeof text, "%s", colon + 1 + (colon[1] == ' '));
  }
  snprintf(named, sizeof named, "node %s ", node);
  alloy_error *errs[2] = {eager_err, fz_err};
  const char *who[2] = {"eager", "functionalize"};
  for (int k = 0; k < 2; k++) {
    if (!errs[k]) {
      harness_fail(__FILE__, __LINE__, "%s: %s accepted it, expected: %s", prog, who[k], spec);
      continue;
    }
    const char *m = alloy_error_message(errs[k]);
    if (!strstr(m, named) || !strstr(m, text))
      harness_fail(__FILE__, __LINE__, "%s: %s said \"%s\", expected node %s and \"%s\"", prog,
                   who[k], m, node, text);
  }
}

/* Runs the functional graph fg on ref and compares with the eager run. */
static void compare_runs(const char *prog, alloy_runtime *rt, int ref, const alloy_graph *g,
                         const alloy_graph *fg, const eager_tensor *inputs,
                         const eager_tensor *outs, const eager_tensor *finals) {
  int nin = alloy_graph_num_inputs(g), nout = alloy_graph_num_outputs(g);
  int fout = alloy_graph_num_outputs(fg);
  alloy_host_tensor *hin = calloc((size_t)(nin ? nin : 1), sizeof *hin);
  alloy_host_tensor *hout = calloc((size_t)(fout ? fout : 1), sizeof *hout);
  for (int i = 0; i < nin; i++)
    hin[i] = (alloy_host_tensor){sizeof hin[i], inputs[i].dtype, inputs[i].rank, inputs[i].sizes,
                                 inputs[i].data};
  for (int k = 0; k < fout; k++) hout[k].struct_size = sizeof hout[k];
  alloy_program *p = NULL;
  alloy_error *e = alloy_program_compile(rt, ref, fg, &p);
  if (!e) e = alloy_program_run(p, hin, nin, hout, fout);
  if (e) {
    harness_fail(__FILE__, __LINE__, "%s: the functionalized graph does not run: %s", prog,
                 alloy_error_message(e));
    alloy_error_free(e);
  } else {
    CHECK(fout >= nout);
    for (int k = 0; k < nout && k < fout; k++) {
      char what[64];
      snprintf(what, sizeof what, "output %d", k);
      same_tensor(prog, what, &outs[k], &hout[k]);
    }
    /* Mutation outputs against the inputs' final values. */
    bool *reported = calloc((size_t)(nin ? nin : 1), sizeof *reported);
    for (int k = nout; k < fout; k++) {
      const char *name = NULL;
      alloy_output_role role = alloy_graph_output_role(fg, k, &name);
      int found = -1;
      for (int i = 0; i < nin && found < 0 && name; i++) {
        const char *in_name = NULL;
        alloy_input_role ir = alloy_graph_input_role(g, i, &in_name);
        if (role == ALLOY_OUTPUT_BUFFER_MUTATION ? ir == ALLOY_INPUT_BUFFER && in_name && !strcmp(in_name, name)
                                                 : !strcmp(alloy_value_name(alloy_graph_input(g, i)), name))
          found = i;
      }
      if (role == ALLOY_OUTPUT_USER || found < 0) {
        harness_fail(__FILE__, __LINE__, "%s: extra output %d is no mutation of an input", prog, k);
        continue;
      }
      reported[found] = true;
      char what[300];
      snprintf(what, sizeof what, "the final value of input %s", name);
      same_tensor(prog, what, &finals[found], &hout[k]);
    }
    for (int i = 0; i < nin; i++)
      if (!reported[i] && !same_data(inputs[i].dtype, inputs[i].data, finals[i].data, eager_numel(&inputs[i])))
        harness_fail(__FILE__, __LINE__, "%s: input %s changed but has no mutation output", prog,
                     alloy_value_name(alloy_graph_input(g, i)));
    free(reported);
  }
  alloy_program_release(p);
  free(hin);
  free(hout);
}

/* One program; returns 1 when it ran (or was refused as expected). */
static int run_program(alloy_runtime *rt, int ref, const char *dir, const char *file, int *refused) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  size_t len;
  char *text = read_text(path, &len);
  if (!text) {
    harness_fail(__FILE__, __LINE__, "cannot read %s", path);
    return 0;
  }
  char expect[512], parse_expect[512];
  bool want_err = directive(text, "# expect-error:", expect, sizeof expect);
  bool want_parse_err = directive(text, "# expect-parse-error:", parse_expect, sizeof parse_expect);
  alloy_graph *g = NULL;
  alloy_error *e = alloy_air_parse(text, len, file, &g);
  free(text);
  if (want_parse_err) {
    if (!e || !strstr(alloy_error_message(e), parse_expect))
      harness_fail(__FILE__, __LINE__, "%s: expected the parse to fail with \"%s\", got %s", file,
                   parse_expect, e ? alloy_error_message(e) : "success");
    alloy_error_free(e);
    alloy_graph_free(g);
    ++*refused;
    return 1;
  }
  if (e) {
    harness_fail(__FILE__, __LINE__, "%s: %s", file, alloy_error_message(e));
    alloy_error_free(e);
    return 0;
  }
  int nin = alloy_graph_num_inputs(g), nout = alloy_graph_num_outputs(g);
  eager_tensor *inputs = calloc((size_t)(nin ? nin : 1), sizeof *inputs);
  eager_tensor *outs = calloc((size_t)(nout ? nout : 1), sizeof *outs);
  eager_tensor *finals = calloc((size_t)(nin ? nin : 1), sizeof *finals);
  for (int i = 0; i < nin; i++) {
    alloy_value_type t;
    alloy_value_get_type(alloy_graph_input(g, i), &t);
    inputs[i].dtype = t.dtype;
    inputs[i].rank = t.rank;
    for (int d = 0; d < t.rank; d++) inputs[i].sizes[d] = t.shape[d].value;
    fill(&inputs[i], i);
  }
  alloy_error *ee = eager_run(rt, ref, g, inputs, outs, finals);
  alloy_graph *fg = NULL;
  alloy_error *fe = alloy_functionalize(g, &fg);
  if (want_err) {
    check_refused(file, ee, fe, expect);
    ++*refused;
  } else if (ee || fe) {
    if (ee) harness_fail(__FILE__, __LINE__, "%s: eager: %s", file, alloy_error_message(ee));
    if (fe) harness_fail(__FILE__, __LINE__, "%s: functionalize: %s", file, alloy_error_message(fe));
  } else {
    CHECK(!mutates_any(fg));
    CHECK_OK(alloy_graph_verify(fg));
    if (!mutates_any(g)) {
      char *a = NULL, *b = NULL;
      CHECK_OK(alloy_air_print(g, &a));
      CHECK_OK(alloy_air_print(fg, &b));
      if (a && b && strcmp(a, b))
        harness_fail(__FILE__, __LINE__, "%s: a graph without mutation changed", file);
      free(a);
      free(b);
    }
    compare_runs(file, rt, ref, g, fg, inputs, outs, finals);
  }
  if (!ee)
    for (int k = 0; k < nout; k++) eager_tensor_free(&outs[k]);
  if (!ee)
    for (int i = 0; i < nin; i++) eager_tensor_free(&finals[i]);
  for (int i = 0; i < nin; i++) eager_tensor_free(&inputs[i]);
  free(inputs);
  free(outs);
  free(finals);
  alloy_error_free(ee);
  alloy_error_free(fe);
  alloy_graph_free(fg);
  alloy_graph_free(g);
  return 1;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool open_ref(alloy_runtime **rt, int *ref) {
  alloy_runtime_options o = {.struct_size = sizeof o, .no_default_paths = true};
  alloy_error *e = alloy_runtime_open(&o, rt);
  if (e) {
    harness_fail(__FILE__, __LINE__, "runtime: %s", alloy_error_message(e));
    alloy_error_free(e);
    return false;
  }
  *ref = alloy_runtime_find_backend(*rt, "ref");
  return *ref >= 0;
}

TEST(functionalize_aliasing_programs) {
  alloy_runtime *rt = NULL;
  int ref;
  REQUIRE(open_ref(&rt, &ref));
  DIR *d = opendir(ALIASING_DIR);
  if (!d) {
    harness_fail(__FILE__, __LINE__, "cannot open %s (run from the repository root)", ALIASING_DIR);
    alloy_runtime_close(rt);
    return;
  }
  char *names[512];
  int n = 0;
  for (struct dirent *de; (de = readdir(d)) && n < 512;) {
    size_t l = strlen(de->d_name);
    if (l > 4 && !strcmp(de->d_name + l - 4, ".air")) names[n++] = strdup(de->d_name);
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, cmp_names);
  int ran = 0, refused = 0;
  for (int i = 0; i < n; i++) {
    ran += run_program(rt, ref, ALIASING_DIR, names[i], &refused);
    free(names[i]);
  }
  CHECK(n >= 40);
  CHECK_INT(ran, n);
  if (getenv("ALLOY_TEST_VERBOSE"))
    printf("aliasing: %d programs, %d refused as expected\n", n, refused);
  alloy_runtime_close(rt);
}

/* An importer may build a node without its shape function: an int tensor
 * add_ a float one must still be refused by both, naming the node. */
TEST(functionalize_refuses_inplace_promotion) {
  alloy_runtime *rt = NULL;
  int ref;
  REQUIRE(open_ref(&rt, &ref));
  alloy_graph *g = alloy_graph_new();
  alloy_dim four = alloy_dim_const(4);
  alloy_value_type ti = {ALLOY_VALUE_TENSOR, ALLOY_I64, 1, &four, NULL, {ALLOY_DEVICE_CPU, -1}, {0}};
  alloy_value_type tf = ti;
  tf.dtype = ALLOY_F32;
  alloy_value *x = NULL, *y = NULL;
  CHECK_OK(alloy_graph_add_input(g, "x", &ti, &x));
  CHECK_OK(alloy_graph_add_input(g, "y", &tf, &y));
  alloy_arg args[3] = {alloy_arg_value(x), alloy_arg_value(y), alloy_arg_int(1)};
  alloy_meta_out o = {.kind = ALLOY_VALUE_TENSOR, .dtype = ALLOY_I64, .rank = 1};
  o.shape[0] = four;
  alloy_node *n = NULL;
  CHECK_OK(alloy_graph_append(g, alloy_op_find("aten.add_.Tensor"), args, &o, 1, "r", 0, &n));
  REQUIRE(n);
  alloy_value *out = alloy_node_output(n, 0);
  CHECK_OK(alloy_graph_set_outputs(g, &out, 1));
  eager_tensor in[2] = {{.dtype = ALLOY_I64, .rank = 1, .sizes = {4}},
                        {.dtype = ALLOY_F32, .rank = 1, .sizes = {4}}};
  fill(&in[0], 0);
  fill(&in[1], 1);
  eager_tensor res[1] = {{0}}, fin[2] = {{0}};
  alloy_error *ee = eager_run(rt, ref, g, in, res, fin);
  alloy_graph *fg = NULL;
  alloy_error *fe = alloy_functionalize(g, &fg);
  check_refused("add_ i64 f32", ee, fe, "r: can't be cast to the desired output type");
  alloy_error_free(ee);
  alloy_error_free(fe);
  alloy_graph_free(fg);
  eager_tensor_free(&in[0]);
  eager_tensor_free(&in[1]);
  alloy_graph_free(g);
  alloy_runtime_close(rt);
}

/* The mutation outputs carry the roles and names of the graph signature. */
TEST(functionalize_mutation_roles) {
  const char *text =
      "input %x: f32[4]\n"
      "input %b: f32[4] buffer \"bn.running_mean\"\n"
      "%y = aten.add_.Tensor(%x, %b)\n"
      "%z = aten.mul_.Scalar(%b, 2)\n"
      "output %y\n";
  alloy_graph *g = NULL, *fg = NULL;
  CHECK_OK(alloy_air_parse(text, strlen(text), "roles.air", &g));
  REQUIRE(g);
  CHECK_OK(alloy_functionalize(g, &fg));
  REQUIRE(fg);
  CHECK_INT(alloy_graph_num_outputs(fg), 3);
  const char *name = NULL;
  CHECK_INT(alloy_graph_output_role(fg, 0, &name), ALLOY_OUTPUT_USER);
  CHECK_INT(alloy_graph_output_role(fg, 1, &name), ALLOY_OUTPUT_INPUT_MUTATION);
  CHECK_STR(name, "x");
  CHECK_INT(alloy_graph_output_role(fg, 2, &name), ALLOY_OUTPUT_BUFFER_MUTATION);
  CHECK_STR(name, "bn.running_mean");
  /* the user output is the mutated x itself */
  CHECK(alloy_graph_output(fg, 0) == alloy_graph_output(fg, 1));
  alloy_graph_free(fg);
  alloy_graph_free(g);
}

/* Symbolic sizes flow through the pass: a symbolic program, functionalized
 * and run with s0 = 5, agrees with the eager run of the same program with
 * 5 written for s0. */
TEST(functionalize_symbolic_sizes) {
  static const char *const progs[] = {
      "input %x: f32[s0, 4]\ninput %y: f32[4]\n"
      "%s = aten.slice.Tensor(%x, 0, 1, s0)\n%r = aten.add_.Tensor(%s, %y)\n"
      "%t = aten.t.default(%x)\n%q = aten.select.int(%t, 0, 2)\n%z = aten.mul_.Scalar(%q, 3)\n"
      "output %t\n",
      "input %x: f32[s0, 4]\n"
      "%a = aten.mul.Scalar(%x, 1)\n%d = aten.diagonal.default(%a)\n%r = aten.fill_.Scalar(%d, 2.5)\n"
      "%n = aten.narrow.default(%a, 0, 1, 2)\n%z = aten.zero_.default(%n)\n"
      "%u = aten.unfold.default(%a, 0, 2, 2)\n%w = aten.add_.Scalar(%u, 7)\n"
      "%v = aten.view.default(%a, [4, s0])\noutput %a, %v\n",
  };
  alloy_runtime *rt = NULL;
  int ref;
  REQUIRE(open_ref(&rt, &ref));
  for (size_t p = 0; p < sizeof progs / sizeof *progs; p++) {
    char sym_text[2048], conc[2048];
    snprintf(sym_text, sizeof sym_text, "sym s0 in [2, 16]\n%s", progs[p]);
    size_t o = 0;
    for (const char *c = progs[p]; *c && o + 2 < sizeof conc; c++) {
      if (c[0] == 's' && c[1] == '0') {
        conc[o++] = '5';
        c++;
      } else {
        conc[o++] = *c;
      }
    }
    conc[o] = 0;
    alloy_graph *gs = NULL, *gc = NULL, *fg = NULL;
    CHECK_OK(alloy_air_parse(sym_text, strlen(sym_text), "sym.air", &gs));
    CHECK_OK(alloy_air_parse(conc, strlen(conc), "conc.air", &gc));
    if (gs && gc) CHECK_OK(alloy_functionalize(gs, &fg));
    if (fg) CHECK_OK(alloy_graph_verify(fg));
    int nin = gc ? alloy_graph_num_inputs(gc) : 0, nout = gc ? alloy_graph_num_outputs(gc) : 0;
    eager_tensor in[4] = {{0}}, outs[4] = {{0}}, fin[4] = {{0}};
    for (int i = 0; i < nin; i++) {
      alloy_value_type t;
      alloy_value_get_type(alloy_graph_input(gc, i), &t);
      in[i].dtype = t.dtype;
      in[i].rank = t.rank;
      for (int d = 0; d < t.rank; d++) in[i].sizes[d] = t.shape[d].value;
      fill(&in[i], i);
    }
    alloy_error *e = gc ? eager_run(rt, ref, gc, in, outs, fin) : NULL;
    CHECK_OK(e);
    if (fg && !e && gc) compare_runs("symbolic", rt, ref, gc, fg, in, outs, fin);
    if (!e && gc) {
      for (int k = 0; k < nout; k++) eager_tensor_free(&outs[k]);
      for (int i = 0; i < nin; i++) eager_tensor_free(&fin[i]);
    }
    for (int i = 0; i < nin; i++) eager_tensor_free(&in[i]);
    alloy_graph_free(fg);
    alloy_graph_free(gs);
    alloy_graph_free(gc);
  }
  alloy_runtime_close(rt);
}
