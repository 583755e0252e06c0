/*
 * tests/test_pointwise_aliases.c: the elementwise aliases and composites
 * of issue 16 (ir/pointwise_aliases.h, ir/meta_pointwise.c,
 * ir/meta_activation.c, decompositions/rules_pointwise.c): every alias
 * names a registered target whose arguments line up with its own, takes
 * its target's type on symbolic shapes, decomposes into it, and the
 * composites refuse what PyTorch refuses with the argument named. Their
 * numbers are held against PyTorch's in tests/vectors/pointwise.
 */
#include "harness.h"

#include <stdlib.h>

#include "alloy/graph.h"
#include "alloy/ops.h"
#include "decompositions/decomp.h"
#include "ir/pointwise_aliases.h"

#define C(v) alloy_dim_const(v)
#define VAL(v) alloy_arg_value(v)

static alloy_value *input(alloy_graph *g, alloy_dtype t, const alloy_dim *shape, int rank) {
  alloy_value_type ty = {ALLOY_VALUE_TENSOR, t, rank, shape, NULL, {ALLOY_DEVICE_CPU, -1},
                         {NULL, 0}};
  alloy_value *v = NULL;
  alloy_error *e = alloy_graph_add_input(g, NULL, &ty, &v);
  if (e) {
    harness_fail(__FILE__, __LINE__, "add_input: %s", alloy_error_message(e));
    alloy_error_free(e);
  }
  return v;
}

static alloy_error *node(alloy_graph *g, const char *op, const alloy_arg *args, int n,
                         alloy_node **out) {
  const alloy_op *o = alloy_op_find(op);
  if (!o) return alloy_error_new(ALLOY_ERR_NOT_FOUND, "no op %s", op);
  return alloy_graph_add_node(g, o, args, n, NULL, NULL, 0, NULL, out);
}

/* The error's message contains needle; the error is freed. */
static bool fails_with(alloy_error *e, const char *needle) {
  if (!e) return false;
  bool ok = strstr(alloy_error_message(e), needle) != NULL;
  if (!ok) printf("  unexpected message: %s\n", alloy_error_message(e));
  alloy_error_free(e);
  return ok;
}

TEST(pointwise_alias_targets_line_up) {
  int n = 0;
  for (const alloy_pointwise_alias *a = alloy_pointwise_aliases; a->op; a++, n++) {
    const alloy_op *op = alloy_op_find(a->op), *t = alloy_op_find(a->target);
    if (!op || !t) {
      harness_fail(__FILE__, __LINE__, "%s -> %s: not registered", a->op, a->target);
      continue;
    }
    CHECK(alloy_pointwise_alias_find(a->op) == a);
    CHECK(decomp_find(a->op, DECOMP_TO_CORE) != NULL);
    const alloy_schema *s = alloy_op_schema(op), *ts = alloy_op_schema(t);
    if (alloy_schema_num_args(s) > alloy_schema_num_args(ts)) {
      harness_fail(__FILE__, __LINE__, "%s has more arguments than %s", a->op, a->target);
      continue;
    }
    for (int j = 0; j < alloy_schema_num_args(s); j++) {
      alloy_type_kind mine = alloy_schema_arg_at(s, alloy_alias_arg(a->form, j))->type.kind;
      alloy_type_kind theirs = alloy_schema_arg_at(ts, j)->type.kind;
      if (mine != theirs && !(mine == ALLOY_TYPE_SCALAR && theirs == ALLOY_TYPE_TENSOR))
        harness_fail(__FILE__, __LINE__, "%s argument %d does not line up with %s's", a->op, j,
                     a->target);
    }
    for (int j = alloy_schema_num_args(s); j < alloy_schema_num_args(ts); j++)
      if (!alloy_schema_arg_at(ts, j)->has_default)
        harness_fail(__FILE__, __LINE__, "%s leaves %s's argument %d without a default", a->op,
                     a->target, j);
  }
  CHECK(n > 100);
}

TEST(pointwise_alias_types_follow_the_target) {
  alloy_graph *g = alloy_graph_new();
  REQUIRE(g);
  alloy_symtab *st = alloy_graph_symtab(g);
  alloy_dim s0;
  CHECK_OK(alloy_sym_new(st, "s0", 2, ALLOY_SYM_INF, &s0));
  alloy_value *x = input(g, ALLOY_F16, (alloy_dim[]){s0, C(4)}, 2);
  alloy_value *i = input(g, ALLOY_I32, (alloy_dim[]){C(4)}, 1);
  alloy_node *n = NULL;
  /* multiply: float16 [s0, 4] times int32 [4] */
  CHECK_OK(node(g, "aten.multiply.Tensor", (alloy_arg[]){VAL(x), VAL(i)}, 2, &n));
  REQUIRE(n);
  CHECK_INT(alloy_value_dtype(alloy_node_output(n, 0)), ALLOY_F16);
  CHECK(alloy_dim_same(alloy_value_shape(alloy_node_output(n, 0))[0], s0));
  /* a number where the target takes a tensor promotes as a number */
  CHECK_OK(node(g, "aten.xlogy.Scalar_Self", (alloy_arg[]){alloy_arg_float(2.5), VAL(i)}, 2, &n));
  CHECK_INT(alloy_value_dtype(alloy_node_output(n, 0)), ALLOY_F32);
  CHECK_OK(node(g, "aten.bitwise_and.Scalar_Tensor", (alloy_arg[]){alloy_arg_int(6), VAL(i)}, 2, &n));
  CHECK_INT(alloy_value_dtype(alloy_node_output(n, 0)), ALLOY_I32);
  CHECK_OK(node(g, "aten.float_power.Tensor_Scalar", (alloy_arg[]){VAL(i), alloy_arg_int(2)}, 2, &n));
  CHECK_INT(alloy_value_dtype(alloy_node_output(n, 0)), ALLOY_F64);
  /* where(condition): one int64 [u] per dim, u one data-dependent count */
  CHECK_OK(node(g, "aten.where.default", (alloy_arg[]){VAL(x)}, 1, &n));
  REQUIRE(n && alloy_node_num_outputs(n) == 2);
  CHECK_INT(alloy_value_dtype(alloy_node_output(n, 1)), ALLOY_I64);
  CHECK(alloy_dim_same(alloy_value_shape(alloy_node_output(n, 0))[0],
                       alloy_value_shape(alloy_node_output(n, 1))[0]));
  CHECK(!alloy_dim_is_const(alloy_value_shape(alloy_node_output(n, 0))[0]));
  /* the target's refusal, named for the alias */
  CHECK(fails_with(node(g, "aten.bitwise_and.Scalar_Tensor",
                        (alloy_arg[]){alloy_arg_float(1.5), VAL(i)}, 2, &n),
                   "aten.bitwise_and.Scalar_Tensor: (as aten.bitwise_and.Scalar)"));
  alloy_graph_free(g);
}

TEST(pointwise_composites_refuse_like_pytorch) {
  alloy_graph *g = alloy_graph_new();
  REQUIRE(g);
  alloy_value *x = input(g, ALLOY_F32, (alloy_dim[]){C(2), C(3)}, 2);
  alloy_value *b = input(g, ALLOY_BOOL, (alloy_dim[]){C(3)}, 1);
  alloy_value *u = input(g, ALLOY_U8, (alloy_dim[]){C(3)}, 1);
  alloy_node *n = NULL;
  CHECK(fails_with(node(g, "aten.positive.default", (alloy_arg[]){VAL(b)}, 1, &n),
                   "on a bool tensor"));
  CHECK(fails_with(node(g, "aten.relu6.default", (alloy_arg[]){VAL(b)}, 1, &n),
                   "Bool inputs not supported"));
  CHECK(fails_with(node(g, "aten._add_relu.Tensor", (alloy_arg[]){VAL(u), VAL(u)}, 2, &n),
                   "argument 'self'"));
  CHECK(fails_with(node(g, "aten.isclose.default", (alloy_arg[]){VAL(u), VAL(b)}, 2, &n),
                   "one dtype"));
  CHECK(fails_with(node(g, "aten.float_power_.Scalar", (alloy_arg[]){VAL(x), alloy_arg_int(2)}, 2, &n),
                   "requires dtype float64"));
  CHECK(fails_with(node(g, "aten.log_sigmoid.default", (alloy_arg[]){VAL(u)}, 1, &n),
                   "floating types only"));
  CHECK(fails_with(node(g, "aten.rrelu.default",
                        (alloy_arg[]){VAL(x), alloy_arg_float(0.5), alloy_arg_float(0.1)}, 3, &n),
                   "Lower bound"));
  alloy_graph_free(g);
}
