/*
 * tests/test_pt2.c: the torch.export importer (ir/pt2_archive.c,
 * ir/pt2_graph.c) and the model API (alloy/model.h) on archives built here
 * with libzip: a small hand-written program, run on the reference backend
 * with values checked by hand, and one broken variant per error the
 * importer must name (a truncated archive, a missing entry, JSON of the
 * wrong shape, weights outside their storage, overflowing sizes, an unknown
 * op, dtype or argument kind, pickled weights).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>

#include "alloy/model.h"
#include "alloy/runtime.h"
#include "ir/model_internal.h"
#include "tests/harness.h"
#include "tests/testzip.h"

/* --- building archives -------------------------------------------------- */

typedef tz_entry entry;
#define zip_entries tz_archive

/* The program: y = x @ w^T + b over a symbolic batch s0 in [1, 8], and
 * flat = y viewed as [3 * s0] through sym_size and _operator.mul. */
#define SYM "{\"as_expr\": {\"expr_str\": \"Symbol('s0', positive=True, integer=True)\", \"hint\": {\"as_int\": 2}}}"
#define SYM3 "{\"as_expr\": {\"expr_str\": \"Mul(Integer(3), Symbol('s0', positive=True, integer=True))\", \"hint\": {\"as_int\": 6}}}"
#define META(dims) "{\"dtype\": 7, \"sizes\": [" dims "], \"device\": {\"type\": \"cpu\", \"index\": null}}"
#define I(n) "{\"as_int\": " #n "}"
#define TENSOR(n) "{\"as_tensor\": {\"name\": \"" n "\"}}"

static const char *model_json(const char *nodes_override, const char *version) {
  static char buf[8192];
  snprintf(buf, sizeof buf,
    "{\"schema_version\": {\"major\": %s, \"minor\": 17},"
    " \"range_constraints\": {\"s0\": {\"min_val\": 1, \"max_val\": 8}},"
    " \"graph_module\": {"
    "  \"signature\": {"
    "   \"input_specs\": ["
    "    {\"parameter\": {\"arg\": {\"name\": \"p_w\"}, \"parameter_name\": \"l.weight\"}},"
    "    {\"buffer\": {\"arg\": {\"name\": \"b_b\"}, \"buffer_name\": \"l.bias\", \"persistent\": true}},"
    "    {\"user_input\": {\"arg\": " TENSOR("x") "}}],"
    "   \"output_specs\": ["
    "    {\"user_output\": {\"arg\": " TENSOR("y") "}},"
    "    {\"user_output\": {\"arg\": " TENSOR("flat") "}}]},"
    "  \"graph\": {"
    "   \"inputs\": [" TENSOR("p_w") ", " TENSOR("b_b") ", " TENSOR("x") "],"
    "   \"outputs\": [" TENSOR("y") ", " TENSOR("flat") "],"
    "   \"tensor_values\": {"
    "    \"p_w\": " META(I(3) ", " I(4)) ", \"b_b\": " META(I(3)) ","
    "    \"x\": " META(SYM ", " I(4)) ", \"t\": " META(I(4) ", " I(3)) ","
    "    \"y\": " META(SYM ", " I(3)) ", \"flat\": " META(SYM3) "},"
    "   \"sym_int_values\": {\"n\": " SYM ", \"n3\": " SYM3 "},"
    "   \"nodes\": %s}}}",
    version, nodes_override ? nodes_override :
    "[{\"name\": \"t\", \"target\": \"torch.ops.aten.permute.default\","
    "  \"inputs\": [{\"name\": \"self\", \"arg\": " TENSOR("p_w") ", \"kind\": 1},"
    "             {\"name\": \"dims\", \"arg\": {\"as_ints\": [1, 0]}, \"kind\": 1}],"
    "  \"outputs\": [" TENSOR("t") "]},"
    " {\"name\": \"y\", \"target\": \"torch.ops.aten.addmm.default\","
    "  \"inputs\": [{\"name\": \"self\", \"arg\": " TENSOR("b_b") ", \"kind\": 1},"
    "             {\"name\": \"mat1\", \"arg\": " TENSOR("x") ", \"kind\": 1},"
    "             {\"name\": \"mat2\", \"arg\": " TENSOR("t") ", \"kind\": 1},"
    "             {\"name\": \"alpha\", \"arg\": {\"as_int\": 1}, \"kind\": 2}],"
    "  \"outputs\": [" TENSOR("y") "]},"
    " {\"name\": \"n\", \"target\": \"torch.ops.aten.sym_size.int\","
    "  \"inputs\": [{\"name\": \"self\", \"arg\": " TENSOR("x") ", \"kind\": 1},"
    "             {\"name\": \"dim\", \"arg\": {\"as_int\": 0}, \"kind\": 1}],"
    "  \"outputs\": [{\"as_sym_int\": {\"as_name\": \"n\"}}]},"
    " {\"name\": \"n3\", \"target\": \"_operator.mul\","
    "  \"inputs\": [{\"name\": \"a\", \"arg\": {\"as_sym_int\": {\"as_name\": \"n\"}}, \"kind\": 1},"
    "             {\"name\": \"b\", \"arg\": {\"as_int\": 3}, \"kind\": 1}],"
    "  \"outputs\": [{\"as_sym_int\": {\"as_name\": \"n3\"}}]},"
    " {\"name\": \"flat\", \"target\": \"torch.ops.aten.view.default\","
    "  \"inputs\": [{\"name\": \"self\", \"arg\": " TENSOR("y") ", \"kind\": 1},"
    "             {\"name\": \"size\", \"arg\": {\"as_sym_ints\": [{\"as_name\": \"n3\"}]}, \"kind\": 1}],"
    "  \"outputs\": [" TENSOR("flat") "]},"
    " {\"name\": \"check\", \"target\": \"torch.ops.aten._assert_tensor_metadata.default\","
    "  \"inputs\": [{\"name\": \"a\", \"arg\": " TENSOR("x") ", \"kind\": 1},"
    "             {\"name\": \"dtype\", \"arg\": {\"as_scalar_type\": 7}, \"kind\": 2}],"
    "  \"outputs\": []}]");
  return buf;
}

/* The weights: w (3x4) is a plain storage; b is a strided view (stride 2,
 * offset 1) of a storage of 7 floats, so it must be gathered. */
static const float w_data[12] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1};
static const float b_storage[7] = {-1, 10, -1, 20, -1, 30, -1};

static const char *weights_json(const char *b_meta) {
  static char buf[2048];
  snprintf(buf, sizeof buf,
    "{\"config\": {"
    " \"l.weight\": {\"path_name\": \"weight_0\", \"is_param\": true, \"use_pickle\": false,"
    "  \"tensor_meta\": {\"dtype\": 7, \"sizes\": [" I(3) ", " I(4) "], \"strides\": [" I(4) ", " I(1) "],"
    "   \"storage_offset\": " I(0) "}},"
    " \"l.bias\": {\"path_name\": \"weight_1\", \"is_param\": false, \"use_pickle\": false,"
    "  \"tensor_meta\": %s}}}",
    b_meta ? b_meta : "{\"dtype\": 7, \"sizes\": [" I(3) "], \"strides\": [" I(2) "], \"storage_offset\": " I(1) "}");
  return buf;
}

typedef struct variant {
  const char *nodes;      /* NULL: the good nodes */
  const char *version;    /* NULL: "8" */
  const char *b_meta;     /* NULL: the good view of l.bias */
  const char *model;      /* NULL: model_json(...) */
  const char *weights;    /* NULL: weights_json(...) */
  bool drop_weight_1;
  bool empty_weight_1;    /* weight_1 stored as an empty file */
  size_t truncate;        /* >0: keep only this many bytes of the archive */
} variant;

static alloy_error *load_variant(const variant *v, alloy_model **m, uint8_t **keep) {
  char model[8192], weights[2048];
  snprintf(model, sizeof model, "%s", v->model ? v->model : model_json(v->nodes, v->version ? v->version : "8"));
  snprintf(weights, sizeof weights, "%s", v->weights ? v->weights : weights_json(v->b_meta));
  entry es[] = {
      {"tiny/models/model.json", model, strlen(model), false},
      {"tiny/data/weights/model_weights_config.json", weights, strlen(weights), false},
      {"tiny/data/weights/weight_0", w_data, sizeof w_data, false},
      {"tiny/data/weights/weight_1", b_storage, v->empty_weight_1 ? 0 : sizeof b_storage, false},
  };
  size_t size = 0;
  uint8_t *zip = zip_entries(es, v->drop_weight_1 ? 3 : 4, &size);
  if (!zip) return alloy_error_new(ALLOY_ERR_INTERNAL, "test: cannot build the archive");
  if (v->truncate && v->truncate < size) size = v->truncate;
  *keep = zip;
  return alloy_model_load_pt2_memory(zip, size, "tiny.pt2", m);
}

/* Loads a broken variant and checks that the error mentions want. */
static void expect_error(const variant *v, const char *want) {
  alloy_model *m = NULL;
  uint8_t *zip = NULL;
  alloy_error *e = load_variant(v, &m, &zip);
  CHECK(e != NULL);
  CHECK(m == NULL);
  if (e && !strstr(alloy_error_message(e), want))
    harness_fail(__FILE__, __LINE__, "error \"%s\" does not mention \"%s\"", alloy_error_message(e), want);
  alloy_error_free(e);
  alloy_model_free(m);
  free(zip);
}

/* --- the good archive --------------------------------------------------- */

TEST(pt2_imports_graph_signature_and_weights) {
  variant v = {0};
  alloy_model *m = NULL;
  uint8_t *zip = NULL;
  CHECK_OK(load_variant(&v, &m, &zip));
  REQUIRE(m);
  alloy_graph *g = alloy_model_graph(m);
  CHECK_INT(alloy_graph_num_inputs(g), 3);
  const char *name;
  CHECK_INT(alloy_graph_input_role(g, 0, &name), ALLOY_INPUT_PARAMETER);
  CHECK_STR(name, "l.weight");
  CHECK_INT(alloy_graph_input_role(g, 1, &name), ALLOY_INPUT_BUFFER);
  CHECK_STR(name, "l.bias");
  CHECK_INT(alloy_graph_input_role(g, 2, &name), ALLOY_INPUT_USER);
  CHECK(name == NULL);
  CHECK_INT(alloy_model_num_user_inputs(m), 1);
  /* Symbolic shapes: y is [s0, 3] and flat [3*s0], through the SymInt nodes. */
  alloy_value *y = alloy_graph_find_value(g, "y"), *flat = alloy_graph_find_value(g, "flat");
  REQUIRE(y && flat);
  char text[64];
  alloy_dim_print(alloy_value_shape(y)[0], text, sizeof text);
  CHECK_STR(text, "s0");
  alloy_dim_print(alloy_value_shape(flat)[0], text, sizeof text);
  CHECK_STR(text, "3*s0");
  int64_t lo, hi;
  alloy_symtab_range(alloy_graph_symtab(g), 0, &lo, &hi);
  CHECK_INT(lo, 1);
  CHECK_INT(hi, 8);
  /* The strided view of l.bias was gathered; l.weight points into the archive. */
  alloy_host_tensor b, w;
  REQUIRE(alloy_model_find_weight(m, "l.bias", &b));
  CHECK_INT(b.rank, 1);
  CHECK_INT(b.sizes[0], 3);
  CHECK(((float *)b.data)[0] == 10 && ((float *)b.data)[1] == 20 && ((float *)b.data)[2] == 30);
  REQUIRE(alloy_model_find_weight(m, "l.weight", &w));
  /* (model.json comes first in the archive: a few kilobytes) */
  CHECK((const uint8_t *)w.data > zip && (const uint8_t *)w.data < zip + 65536);
  CHECK_OK(alloy_graph_verify(g));
  alloy_model_free(m);
  free(zip);
}

TEST(pt2_runs_on_ref_for_two_batch_sizes) {
  variant v = {0};
  alloy_model *m = NULL;
  uint8_t *zip = NULL;
  alloy_runtime *rt = NULL;
  alloy_program *p = NULL;
  CHECK_OK(load_variant(&v, &m, &zip));
  REQUIRE(m);
  alloy_runtime_options opts = {.struct_size = sizeof opts, .no_default_paths = true};
  CHECK_OK(alloy_runtime_open(&opts, &rt));
  REQUIRE(rt);
  CHECK_OK(alloy_program_compile(rt, alloy_runtime_find_backend(rt, "ref"), alloy_model_graph(m), &p));
  REQUIRE(p);
  for (int64_t batch = 1; batch <= 5; batch += 4) {
    float x[5 * 4];
    for (int i = 0; i < 5 * 4; i++) x[i] = (float)i;
    int64_t xs[2] = {batch, 4};
    alloy_host_tensor user = {.struct_size = sizeof user, .dtype = ALLOY_F32, .rank = 2, .sizes = xs, .data = x};
    alloy_host_tensor ins[3], outs[2];
    CHECK_OK(alloy_model_bind_inputs(m, &user, 1, ins, 3));
    CHECK_OK(alloy_program_run(p, ins, 3, outs, 2));
    /* w picks x0, x1 and x2 + x3; b adds 10, 20, 30. */
    CHECK_INT(outs[0].sizes[0], batch);
    CHECK_INT(outs[1].sizes[0], 3 * batch);
    for (int r = 0; r < batch; r++) {
      const float *row = (const float *)outs[0].data + 3 * r, *xr = x + 4 * r;
      CHECK(row[0] == xr[0] + 10 && row[1] == xr[1] + 20 && row[2] == xr[2] + xr[3] + 30);
      CHECK(memcmp(outs[1].data, outs[0].data, sizeof(float) * 3 * (size_t)batch) == 0);
    }
  }
  CHECK_INT(alloy_program_num_specializations(p), 2);
  /* A batch outside the range constraint is refused, naming the symbol. */
  float x9[9 * 4] = {0};
  int64_t xs9[2] = {9, 4};
  alloy_host_tensor user9 = {.struct_size = sizeof user9, .dtype = ALLOY_F32, .rank = 2, .sizes = xs9, .data = x9};
  alloy_host_tensor ins[3], outs[2];
  CHECK_OK(alloy_model_bind_inputs(m, &user9, 1, ins, 3));
  alloy_error *e = alloy_program_run(p, ins, 3, outs, 2);
  CHECK(e && strstr(alloy_error_message(e), "outside the range [1, 8] of symbol s0"));
  alloy_error_free(e);
  alloy_program_release(p);
  alloy_runtime_close(rt);
  alloy_model_free(m);
  free(zip);
}

TEST(pt2_converts_to_air_and_back) {
  variant v = {0};
  alloy_model *m = NULL, *back = NULL;
  uint8_t *zip = NULL;
  CHECK_OK(load_variant(&v, &m, &zip));
  REQUIRE(m);
  char air[64], st[64];
  snprintf(air, sizeof air, "/tmp/alloy-test-%d.air", (int)getpid());
  snprintf(st, sizeof st, "/tmp/alloy-test-%d.safetensors", (int)getpid());
  CHECK_OK(alloy_model_save_air(m, air, st));
  CHECK_OK(alloy_model_load(air, &back));
  REQUIRE(back);
  char *a = NULL, *b = NULL;
  CHECK_OK(alloy_air_print(alloy_model_graph(m), &a));
  CHECK_OK(alloy_air_print(alloy_model_graph(back), &b));
  /* Equal but for the weights line, which only the saved one has. */
  REQUIRE(a && b);
  const char *body = strstr(b, "input ");
  CHECK(body && strstr(a, "input ") && !strcmp(strstr(a, "input "), body));
  CHECK(strstr(b, "weights \"alloy-test-") != NULL);
  alloy_host_tensor w1, w2;
  REQUIRE(alloy_model_find_weight(back, "l.bias", &w2) && alloy_model_find_weight(m, "l.bias", &w1));
  CHECK(memcmp(w1.data, w2.data, 3 * sizeof(float)) == 0);
  free(a);
  free(b);
  remove(air);
  remove(st);
  alloy_model_free(back);
  alloy_model_free(m);
  free(zip);
}

TEST(pt2_reads_an_empty_storage_as_zeros) {
  variant v = {.empty_weight_1 = true};
  alloy_model *m = NULL;
  uint8_t *zip = NULL;
  CHECK_OK(load_variant(&v, &m, &zip));
  REQUIRE(m);
  alloy_host_tensor b;
  REQUIRE(alloy_model_find_weight(m, "l.bias", &b));
  CHECK_INT(b.sizes[0], 3);
  CHECK(((float *)b.data)[0] == 0 && ((float *)b.data)[1] == 0 && ((float *)b.data)[2] == 0);
  alloy_model_free(m);
  free(zip);
}

TEST(pt2_shares_one_storage_between_names) {
  /* l.bias is a view of weight_0's storage: its third row (offset 8). */
  variant v = {.b_meta = NULL};
  char w[2048];
  snprintf(w, sizeof w, "%s", weights_json("{\"dtype\": 7, \"sizes\": [" I(3) "], \"strides\": [" I(1) "], \"storage_offset\": " I(8) "}"));
  /* point l.bias at weight_0 */
  char *at = strstr(w, "\"path_name\": \"weight_1\"");
  REQUIRE(at);
  at[strlen("\"path_name\": \"weight_")] = '0';
  v.weights = w;
  alloy_model *m = NULL;
  uint8_t *zip = NULL;
  CHECK_OK(load_variant(&v, &m, &zip));
  REQUIRE(m);
  alloy_host_tensor b, wt;
  REQUIRE(alloy_model_find_weight(m, "l.bias", &b) && alloy_model_find_weight(m, "l.weight", &wt));
  CHECK((const float *)b.data == (const float *)wt.data + 8);
  alloy_model_free(m);
  free(zip);
}

/* --- bad archives -------------------------------------------------------- */

TEST(pt2_refuses_truncated_archive) {
  variant v = {.truncate = 200};
  expect_error(&v, "tiny.pt2: not a readable ZIP archive");
}

TEST(pt2_names_missing_entry) {
  variant v = {.drop_weight_1 = true};
  expect_error(&v, "missing entry tiny/data/weights/weight_1");
}

TEST(pt2_names_bad_json) {
  variant v = {.model = "{\"schema_version\": {\"major\": 8,"};
  expect_error(&v, "tiny/models/model.json: line 1");
  variant shape = {.model = "{\"schema_version\": {\"major\": 8}, \"graph_module\": []}"};
  expect_error(&shape, "no graph_module.graph");
  variant version = {.version = "9"};
  expect_error(&version, "export schema version 9");
}

TEST(pt2_names_weight_outside_storage) {
  variant v = {.b_meta = "{\"dtype\": 7, \"sizes\": [" I(3) "], \"strides\": [" I(3) "], \"storage_offset\": " I(1) "}"};
  expect_error(&v, "tensor 'l.bias': its view reads 32 bytes of entry tiny/data/weights/weight_1, which holds 28");
}

TEST(pt2_names_overflowing_sizes) {
  variant v = {.b_meta = "{\"dtype\": 7, \"sizes\": [" I(4611686018427387904) ", " I(8) "], \"strides\": [" I(1) ", " I(1) "], \"storage_offset\": " I(0) "}"};
  expect_error(&v, "tensor 'l.bias': sizes overflow");
}

TEST(pt2_names_unknown_dtype) {
  variant v = {.b_meta = "{\"dtype\": 10, \"sizes\": [" I(3) "], \"strides\": [" I(1) "], \"storage_offset\": " I(0) "}"};
  expect_error(&v, "tensor 'l.bias': unsupported dtype 10");
}

TEST(pt2_refuses_pickled_weights) {
  variant v = {.weights = "{\"config\": {\"l.weight\": {\"path_name\": \"weight_0\", \"use_pickle\": true, \"tensor_meta\": {}}}}"};
  expect_error(&v, "is pickled (an archive written by PyTorch 2.7 or 2.8)");
}

TEST(pt2_names_unknown_op_and_node) {
  variant v = {.nodes = "[{\"name\": \"q\", \"target\": \"torch.ops.aten.frobnicate.default\", \"inputs\": [], \"outputs\": []}]"};
  expect_error(&v, "node 'q' (torch.ops.aten.frobnicate.default): unknown op 'aten.frobnicate.default'");
}

TEST(pt2_names_unsupported_argument_kind) {
  variant v = {.nodes = "[{\"name\": \"r\", \"target\": \"torch.ops.aten.relu.default\", \"inputs\": "
                        "[{\"name\": \"self\", \"arg\": {\"as_custom_obj\": {}}, \"kind\": 1}], \"outputs\": []}]"};
  expect_error(&v, "node 'r' (aten.relu.default): argument 'self': ");
  expect_error(&v, "unsupported argument kind 'as_custom_obj'");
}

TEST(pt2_names_unknown_value_and_type_disagreement) {
  variant v = {.nodes = "[{\"name\": \"r\", \"target\": \"torch.ops.aten.relu.default\", \"inputs\": "
                        "[{\"name\": \"self\", \"arg\": {\"as_tensor\": {\"name\": \"nope\"}}, \"kind\": 1}], \"outputs\": []}]"};
  expect_error(&v, "unknown value 'nope'");
  /* relu of w is [3, 4]; tensor_values says t is [4, 3]. */
  variant t = {.nodes = "[{\"name\": \"t\", \"target\": \"torch.ops.aten.relu.default\", \"inputs\": "
                        "[{\"name\": \"self\", \"arg\": {\"as_tensor\": {\"name\": \"p_w\"}}, \"kind\": 1}], "
                        "\"outputs\": [{\"as_tensor\": {\"name\": \"t\"}}]}]"};
  expect_error(&t, "value 't': PyTorch recorded f32[4, 3], Alloy's shape function gives f32[3, 4]");
}

TEST(pt2_refuses_non_archive_files) {
  alloy_model *m = NULL;
  alloy_error *e = alloy_model_load("/nonexistent/model.pt2", &m);
  CHECK(e && strstr(alloy_error_message(e), "/nonexistent/model.pt2: cannot open"));
  alloy_error_free(e);
  CHECK(m == NULL);
}

/* Weights are found by name through an index (ir/model.c), whatever their
 * number; a second weight of one name is refused. */
TEST(model_finds_every_one_of_many_weights_by_name) {
  alloy_model *m = calloc(1, sizeof *m);
  REQUIRE(m);
  int64_t sizes[1] = {1};
  static const float one = 1.0f;
  char name[32];
  for (int i = 0; i < 20000; i++) {
    snprintf(name, sizeof name, "layer%d.weight", i);
    alloy_error *e = model_add_weight(m, name, ALLOY_F32, 1, sizes, &one, NULL);
    if (e) {
      harness_fail(__FILE__, __LINE__, "adding %s: %s", name, alloy_error_message(e));
      alloy_error_free(e);
      break;
    }
  }
  int found = 0;
  for (int i = 0; i < 20000; i++) {
    snprintf(name, sizeof name, "layer%d.weight", i);
    const model_weight *w = model_find_weight(m, name);
    found += w && !strcmp(w->name, name);
  }
  CHECK_INT(found, 20000);
  CHECK(model_find_weight(m, "layer20000.weight") == NULL);
  alloy_error *e = model_add_weight(m, "layer7.weight", ALLOY_F32, 1, sizes, &one, NULL);
  CHECK(e && strstr(alloy_error_message(e), "two weights are named 'layer7.weight'"));
  alloy_error_free(e);
  alloy_model_free(m);
}
