/*
 * tests/test_schema.c: the schema parser and the op registry: every schema
 * in the op table and in the golden corpus parses and prints back exactly;
 * defaults, alias annotations and tags come out right.
 */
#include <jansson.h>
#include <stdlib.h>

#include "alloy/ops.h"
#include "harness.h"

static const alloy_schema_arg *arg(const alloy_schema *s, const char *name) {
  return alloy_schema_arg_at(s, alloy_schema_find_arg(s, name));
}

TEST(schema_parses_add_tensor) {
  alloy_schema *s;
  CHECK_OK(alloy_schema_parse(
      "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", &s));
  REQUIRE(s);
  CHECK_STR(alloy_schema_name(s), "aten::add");
  CHECK_STR(alloy_schema_overload(s), "Tensor");
  CHECK_INT(alloy_schema_num_args(s), 3);
  CHECK(!arg(s, "other")->kwarg_only);
  CHECK(arg(s, "alpha")->kwarg_only);
  CHECK(arg(s, "alpha")->has_default);
  CHECK_INT(arg(s, "alpha")->default_value.kind, ALLOY_ARG_INT);
  CHECK_INT(arg(s, "alpha")->default_value.u.i.value, 1);
  CHECK_INT(alloy_schema_num_returns(s), 1);
  alloy_schema_free(s);
}

TEST(schema_types_and_defaults) {
  alloy_schema *s;
  CHECK_OK(alloy_schema_parse(
      "aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], "
      "int[2] padding=0, int[2] dilation=1, bool ceil_mode=False, Tensor?[] idx, "
      "float eps=1e-05, float? scale=None, ScalarType? dtype=long, str mode=\"mean\", "
      "MemoryFormat fmt=contiguous_format, int reduction=Mean, float lo=-inf) -> Tensor", &s));
  REQUIRE(s);
  const alloy_schema_arg *padding = arg(s, "padding");
  CHECK(padding->type.list);
  CHECK_INT(padding->type.list_len, 2);
  /* `int[2] padding=0` means [0, 0] */
  CHECK_INT(padding->default_value.kind, ALLOY_ARG_LIST);
  CHECK_INT(padding->default_value.u.list.n, 2);
  CHECK_INT(arg(s, "stride")->default_value.u.list.n, 0);
  CHECK_INT(arg(s, "ceil_mode")->default_value.kind, ALLOY_ARG_BOOL);
  const alloy_schema_arg *idx = arg(s, "idx");
  CHECK(idx->type.list && idx->type.elem_optional && !idx->type.optional);
  CHECK_INT(arg(s, "eps")->default_value.kind, ALLOY_ARG_FLOAT);
  CHECK(arg(s, "eps")->default_value.u.f == 1e-05);
  CHECK(arg(s, "scale")->type.optional);
  CHECK_INT(arg(s, "dtype")->default_value.u.dtype, ALLOY_I64);
  CHECK_STR(arg(s, "mode")->default_value.u.s, "mean");
  CHECK_INT(arg(s, "fmt")->default_value.kind, ALLOY_ARG_MEMORY_FORMAT);
  CHECK_INT(arg(s, "reduction")->default_value.u.i.value, 1);
  CHECK(arg(s, "lo")->default_value.u.f < -1e308);
  alloy_schema_free(s);
}

TEST(schema_alias_annotations) {
  alloy_schema *s;
  CHECK_OK(alloy_schema_parse(
      "aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]", &s));
  REQUIRE(s);
  CHECK(alloy_schema_arg_at(s, 0)->alias_set == 'a');
  CHECK(alloy_schema_arg_at(s, 0)->alias_wildcard);
  CHECK(!alloy_schema_arg_at(s, 0)->alias_write);
  CHECK(alloy_schema_return_at(s, 0)->type.list);
  alloy_schema_free(s);
  CHECK_OK(alloy_schema_parse(
      "aten::max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, "
      "Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)", &s));
  REQUIRE(s);
  CHECK(arg(s, "max_values")->alias_write && arg(s, "max_values")->alias_set == 'b');
  CHECK_INT(alloy_schema_num_returns(s), 2);
  CHECK_STR(alloy_schema_return_at(s, 1)->name, "indices");
  alloy_schema_free(s);
}

TEST(schema_errors_name_the_column) {
  static const char *bad[] = {
      "add(Tensor self) -> Tensor",             /* no namespace */
      "aten::add(Tensor self -> Tensor",        /* unclosed */
      "aten::add(Tensr self) -> Tensor",        /* unknown type */
      "aten::add(Tensor self=) -> Tensor",      /* empty default */
      "aten::add(Tensor self) -> Tensor x y",   /* trailing text */
      "aten::add(Tensor(a self) -> Tensor",     /* unclosed alias */
      "",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    alloy_schema *s = NULL;
    alloy_error *e = alloy_schema_parse(bad[i], &s);
    CHECK(e != NULL);
    CHECK(s == NULL);
    if (e) {
      CHECK_INT(alloy_error_code_of(e), ALLOY_ERR_PARSE);
      CHECK(strstr(alloy_error_message(e), "column") != NULL);
    }
    alloy_error_free(e);
  }
}

static void check_round_trip(const char *text) {
  alloy_schema *s = NULL;
  alloy_error *e = alloy_schema_parse(text, &s);
  if (e) {
    harness_fail(__FILE__, __LINE__, "%s", alloy_error_message(e));
    alloy_error_free(e);
    return;
  }
  char buf[2048];
  alloy_schema_print(s, buf, sizeof buf);
  if (strcmp(buf, text)) harness_fail(__FILE__, __LINE__, "printed\n    %s\n  for %s", buf, text);
  alloy_schema_free(s);
}

TEST(schema_every_registered_op_round_trips) {
  CHECK_OK(alloy_registry_init());
  for (int i = 0; i < alloy_op_count(); i++)
    check_round_trip(alloy_op_schema_text(alloy_op_by_id(i)));
  CHECK(alloy_op_count() >= 193 + 126);
}

TEST(schema_every_golden_schema_parses_and_is_registered) {
  const char *golden = harness_golden_dir();
  if (!golden) {
    harness_fail(__FILE__, __LINE__, "../shared/golden is missing: cannot check the corpus schemas");
    return;
  }
  char path[4200];
  snprintf(path, sizeof path, "%s/ops/ops.jsonl", golden);
  FILE *f = fopen(path, "r");
  REQUIRE(f);
  char *line = NULL;
  size_t cap = 0;
  int n = 0;
  while (getline(&line, &cap, f) > 0) {
    json_t *c = json_loads(line, 0, NULL);
    REQUIRE(c);
    const char *schema = json_string_value(json_object_get(c, "schema"));
    const char *op = json_string_value(json_object_get(c, "op"));
    check_round_trip(schema);
    const alloy_op *o = alloy_op_find(op);
    if (!o) harness_fail(__FILE__, __LINE__, "golden op %s is not registered", op);
    else if (strcmp(alloy_op_schema_text(o), schema))
      harness_fail(__FILE__, __LINE__, "%s: table says %s, corpus %s", op, alloy_op_schema_text(o), schema);
    json_decref(c);
    n++;
  }
  free(line);
  fclose(f);
  CHECK(n > 7000);
}

TEST(registry_counts_and_lookup) {
  int core = 0, prims = 0;
  for (int i = 0; i < alloy_op_count(); i++) {
    const alloy_op *op = alloy_op_by_id(i);
    CHECK_INT(alloy_op_id(op), i);
    if (alloy_op_tags(op) & ALLOY_TAG_CORE) core++;
    if (alloy_op_tags(op) & ALLOY_TAG_PRIM) prims++;
  }
  CHECK_INT(core, 193);
  CHECK_INT(prims, 126);
  const alloy_op *add = alloy_op_find("aten.add.Tensor");
  REQUIRE(add);
  CHECK(alloy_op_find("aten::add.Tensor") == add);
  CHECK_STR(alloy_op_name(alloy_op_find("aten.abs")), "aten.abs.default");
  CHECK(alloy_op_find("aten::abs.default") == alloy_op_find("aten.abs.default"));
  CHECK_STR(alloy_op_name(alloy_op_find("prims.iota.default")), "prims.iota.default");
  CHECK(alloy_op_find("aten.nope.default") == NULL);
  /* Ids are part of the format: the first ops of the table never move. */
  CHECK_STR(alloy_op_name(alloy_op_by_id(0)), "aten.native_dropout.default");
  CHECK_STR(alloy_op_name(alloy_op_by_id(1)), "aten.abs.default");
}

TEST(registry_tags_from_schema_and_table) {
  uint32_t t = alloy_op_tags(alloy_op_find("aten.add_.Tensor"));
  CHECK(t & ALLOY_TAG_INPLACE);
  CHECK(t & ALLOY_TAG_MUTATES);
  CHECK(!(t & ALLOY_TAG_CORE));
  t = alloy_op_tags(alloy_op_find("aten.add.Tensor"));
  CHECK((t & ALLOY_TAG_CORE) && (t & ALLOY_TAG_POINTWISE));
  CHECK(!(t & (ALLOY_TAG_INPLACE | ALLOY_TAG_VIEW)));
  CHECK(alloy_op_tags(alloy_op_find("aten.view.default")) & ALLOY_TAG_VIEW);
  CHECK(alloy_op_tags(alloy_op_find("aten.native_dropout.default")) & ALLOY_TAG_NONDETERMINISTIC);
  CHECK(alloy_op_tags(alloy_op_find("prims.broadcast_in_dim.default")) & ALLOY_TAG_VIEW);
}

/* PyTorch's own table of every ATen and prims overload
 * (../shared/reference/aten_ops.tsv, made by PyTorch 2.11): the registry
 * knows each one with PyTorch's schema, kind and tags, and says what
 * PyTorch's decomposition tables cover. */
static const struct {
  const char *name;
  uint32_t tag;
} pytorch_tags[] = {
    {"core", ALLOY_TAG_CORE},
    {"pointwise", ALLOY_TAG_POINTWISE},
    {"reduction", ALLOY_TAG_REDUCTION},
    {"dynamic_output_shape", ALLOY_TAG_DYNAMIC_OUTPUT_SHAPE},
    {"data_dependent_output", ALLOY_TAG_DATA_DEPENDENT_OUTPUT},
    {"nondeterministic_seeded", ALLOY_TAG_NONDETERMINISTIC_SEEDED},
    {"generated", ALLOY_TAG_GENERATED},
    {"view_copy", ALLOY_TAG_VIEW_COPY},
    {"inplace_view", ALLOY_TAG_INPLACE_VIEW},
    {"pt2_compliant_tag", ALLOY_TAG_PT2_COMPLIANT},
    {"maybe_aliasing_or_mutating", ALLOY_TAG_MAYBE_ALIASING_OR_MUTATING},
    {"needs_exact_strides", ALLOY_TAG_NEEDS_EXACT_STRIDES},
    {"needs_fixed_stride_order", ALLOY_TAG_NEEDS_FIXED_STRIDE_ORDER},
};

static bool schemas_same(const char *a, const char *b) {
  if (!strcmp(a, b)) return true;
  /* PyTorch prints some defaults differently from how its yaml writes
   * them (1e-05 / 1.0000000000000001e-05, dtype=long / dtype=4): the two
   * must parse to the same schema. */
  alloy_schema *sa = NULL, *sb = NULL;
  alloy_error *ea = alloy_schema_parse(a, &sa), *eb = alloy_schema_parse(b, &sb);
  bool same = !ea && !eb && alloy_schema_num_args(sa) == alloy_schema_num_args(sb);
  for (int i = 0; same && i < alloy_schema_num_args(sa); i++) {
    const alloy_schema_arg *x = alloy_schema_arg_at(sa, i), *y = alloy_schema_arg_at(sb, i);
    same = !strcmp(x->name, y->name) && x->type.kind == y->type.kind && x->has_default == y->has_default &&
           x->alias_set == y->alias_set && x->alias_write == y->alias_write;
  }
  alloy_error_free(ea);
  alloy_error_free(eb);
  alloy_schema_free(sa);
  alloy_schema_free(sb);
  return same;
}

TEST(schema_registry_knows_every_pytorch_overload) {
  const char *golden = harness_golden_dir();
  if (!golden) {
    harness_fail(__FILE__, __LINE__, "../shared/golden is missing: cannot read ../shared/reference/aten_ops.tsv");
    return;
  }
  char path[4200];
  snprintf(path, sizeof path, "%s/../reference/aten_ops.tsv", golden);
  FILE *f = fopen(path, "r");
  REQUIRE(f);
  char *line = NULL;
  size_t cap = 0;
  int rows = 0, known = 0, decomp = 0;
  while (getline(&line, &cap, f) > 0) {
    line[strcspn(line, "\n")] = 0;
    char *col[7] = {line};
    int n = 1;
    for (char *p = line; *p && n < 7; p++)
      if (*p == '\t') *p = 0, col[n++] = p + 1;
    if (n < 7 || !strcmp(col[0], "name")) continue;
    rows++;
    const alloy_op *op = alloy_op_find(col[0]);
    if (!op) {
      harness_fail(__FILE__, __LINE__, "%s is not registered", col[0]);
      continue;
    }
    known++;
    if (!schemas_same(alloy_op_schema_text(op), col[1]))
      harness_fail(__FILE__, __LINE__, "%s: table says %s, PyTorch %s", col[0], alloy_op_schema_text(op), col[1]);
    if (strcmp(alloy_op_kind_name(alloy_op_kind_of(op)), col[5]))
      harness_fail(__FILE__, __LINE__, "%s: kind %s, PyTorch says %s", col[0],
                   alloy_op_kind_name(alloy_op_kind_of(op)), col[5]);
    for (char *t = strtok(col[2], ","); t; t = strtok(NULL, ",")) {
      size_t k = 0;
      while (k < sizeof pytorch_tags / sizeof *pytorch_tags && strcmp(pytorch_tags[k].name, t)) k++;
      if (k == sizeof pytorch_tags / sizeof *pytorch_tags)
        harness_fail(__FILE__, __LINE__, "%s: PyTorch tag %s has no Alloy tag", col[0], t);
      else if (!(alloy_op_tags(op) & pytorch_tags[k].tag))
        harness_fail(__FILE__, __LINE__, "%s lacks PyTorch's tag %s", col[0], t);
    }
    decomp += !strcmp(col[3], "1");
  }
  free(line);
  fclose(f);
  CHECK_INT(rows, 3978);
  CHECK_INT(known, rows);
  CHECK_INT(decomp, 1126);
}

TEST(schema_parses_torchscript_types) {
  alloy_schema *s = NULL;
  CHECK_OK(alloy_schema_parse("aten::update.str(Dict(str, t)(a!) self, Dict(str, t)(a!) to_add) -> ()", &s));
  REQUIRE(s);
  CHECK_INT(alloy_schema_arg_at(s, 0)->type.kind, ALLOY_TYPE_OTHER);
  CHECK_STR(alloy_schema_arg_at(s, 0)->type_text, "Dict(str, t)(a!)");
  CHECK(alloy_schema_arg_at(s, 0)->alias_write);
  CHECK_INT(alloy_schema_num_returns(s), 0);
  alloy_schema_free(s);
  CHECK_OK(alloy_schema_parse("aten::cpu(Tensor(a) self) -> Tensor(b|a)", &s));
  REQUIRE(s);
  CHECK_INT(alloy_schema_return_at(s, 0)->alias_set, 'a');
  alloy_schema_free(s);
  CHECK_OK(alloy_schema_parse("aten::format(str self, ...) -> str", &s));
  REQUIRE(s);
  CHECK_INT(alloy_schema_num_args(s), 1);
  alloy_schema_free(s);
  CHECK_OK(alloy_schema_parse("aten::_test_string_default(Tensor dummy, str a=\"\\\"\\'\\\\\", str b='\"') -> Tensor", &s));
  REQUIRE(s);
  CHECK_STR(alloy_schema_arg_at(s, 1)->default_value.u.s, "\"'\\");
  CHECK_STR(alloy_schema_arg_at(s, 2)->default_value.u.s, "\"");
  alloy_schema_free(s);
  /* A name that is no type is still refused. */
  alloy_error *e = alloy_schema_parse("aten::f(Tensr self) -> Tensor", &s);
  CHECK(e != NULL);
  alloy_error_free(e);
}

/* torchgen's grouping, from the schemas: in-place and out= overloads find
 * the functional overload they compute. */
TEST(schema_functional_twins) {
  static const char *const pairs[][2] = {
      {"aten.add_.Tensor", "aten.add.Tensor"},         {"aten.add.out", "aten.add.Tensor"},
      {"aten.pow.Tensor_Scalar_out", "aten.pow.Tensor_Scalar"},
      {"aten.max.dim_max", "aten.max.dim"},            {"aten.dropout_.default", "aten.dropout.default"},
      {"aten.__iand__.Tensor", "aten.__and__.Tensor"}, {"aten.zeros.out", "aten.zeros.default"},
      {"aten.hardswish_.default", "aten.hardswish.default"},
      {"aten.sum.IntList_out", "aten.sum.dim_IntList"},
  };
  for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
    const alloy_op *op = alloy_op_find(pairs[i][0]), *f = op ? alloy_op_functional(op) : NULL;
    if (!f || strcmp(alloy_op_name(f), pairs[i][1]))
      harness_fail(__FILE__, __LINE__, "%s pairs with %s, not %s", pairs[i][0], f ? alloy_op_name(f) : "nothing",
                   pairs[i][1]);
  }
  CHECK(alloy_op_functional(alloy_op_find("aten.add.Tensor")) == NULL);
  CHECK_INT(alloy_op_kind_of(alloy_op_find("aten.add.out")), ALLOY_OP_OUT);
}
