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
