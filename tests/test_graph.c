/*
 * tests/test_graph.c: the graph builder and the structural passes: argument
 * normalization and checking, symbolic shapes through nodes, use lists,
 * dead-code elimination, use replacement, clone, subgraph extraction and the
 * verifier's errors.
 */
#include <stdlib.h>

#include "alloy/graph.h"
#include "harness.h"

static alloy_value *input(alloy_graph *g, const char *name, alloy_dtype t,
                          const alloy_dim *shape, int rank) {
  alloy_value_type vt = {ALLOY_VALUE_TENSOR, t, rank, shape, NULL, {ALLOY_DEVICE_CPU, -1}, {NULL, 0}};
  alloy_value *v = NULL;
  CHECK_OK(alloy_graph_add_input(g, name, &vt, &v));
  return v;
}

static alloy_value *node1(alloy_graph *g, const char *op, const alloy_arg *args, int n,
                          const char *name) {
  alloy_node *node = NULL;
  CHECK_OK(alloy_graph_add_node(g, alloy_op_find(op), args, n, NULL, NULL, 0, name, &node));
  return node ? alloy_node_output(node, 0) : NULL;
}

static char *dims(const alloy_value *v) {
  static char buf[256];
  size_t n = 0;
  buf[0] = '\0';
  for (int d = 0; d < alloy_value_rank(v); d++) {
    if (d) n += (size_t)snprintf(buf + n, sizeof buf - n, ", ");
    n += alloy_dim_print(alloy_value_shape(v)[d], buf + n, sizeof buf - n);
  }
  return buf;
}

/* x: f32[s0, 4], y = relu(x + x) ; z = x * 2 (dead) */
static alloy_graph *small_graph(alloy_value **x, alloy_value **y, alloy_value **z) {
  alloy_graph *g = alloy_graph_new();
  alloy_dim s0;
  CHECK_OK(alloy_sym_new(alloy_graph_symtab(g), "s0", 1, 64, &s0));
  alloy_dim shape[2] = {s0, alloy_dim_const(4)};
  *x = input(g, "x", ALLOY_F32, shape, 2);
  alloy_arg add[2] = {alloy_arg_value(*x), alloy_arg_value(*x)};
  alloy_value *sum = node1(g, "aten.add.Tensor", add, 2, "sum");
  alloy_arg relu[1] = {alloy_arg_value(sum)};
  *y = node1(g, "aten.relu.default", relu, 1, "y");
  alloy_arg mul[2] = {alloy_arg_value(*x), alloy_arg_int(2)};
  *z = node1(g, "aten.mul.Scalar", mul, 2, "z");
  CHECK_OK(alloy_graph_set_outputs(g, y, 1));
  return g;
}

TEST(graph_builder_infers_symbolic_shapes) {
  alloy_value *x, *y, *z;
  alloy_graph *g = small_graph(&x, &y, &z);
  CHECK(y && z);
  if (!y || !z) {
    alloy_graph_free(g);
    return;
  }
  CHECK_STR(dims(y), "s0, 4");
  CHECK_INT(alloy_value_dtype(y), ALLOY_F32);
  CHECK_INT(alloy_graph_num_nodes(g), 3);
  /* the add node's alpha was filled from its schema default */
  const alloy_node *add = alloy_graph_node(g, 0);
  CHECK_INT(alloy_node_num_args(add), 3);
  CHECK_INT(alloy_node_arg(add, 2)->kind, ALLOY_ARG_INT);
  CHECK_INT(alloy_node_arg(add, 2)->u.i.value, 1);
  /* x is used by two nodes (add uses it twice but counts once) */
  CHECK_INT(alloy_value_num_users(x), 2);
  CHECK(alloy_graph_find_value(g, "sum") != NULL);
  CHECK_OK(alloy_graph_verify(g));
  alloy_graph_free(g);
}

TEST(graph_builder_rejects_bad_arguments) {
  alloy_graph *g = alloy_graph_new();
  alloy_dim shape[1] = {alloy_dim_const(3)};
  alloy_value *x = input(g, "x", ALLOY_F32, shape, 1);
  const alloy_op *add = alloy_op_find("aten.add.Tensor");
  alloy_node *n = NULL;
  /* missing argument */
  alloy_arg one[1] = {alloy_arg_value(x)};
  alloy_error *e = alloy_graph_add_node(g, add, one, 1, NULL, NULL, 0, NULL, &n);
  CHECK(e && strstr(alloy_error_message(e), "missing argument 'other'"));
  alloy_error_free(e);
  /* wrong kind */
  alloy_arg bad[2] = {alloy_arg_value(x), alloy_arg_str("hello")};
  e = alloy_graph_add_node(g, add, bad, 2, NULL, NULL, 0, NULL, &n);
  CHECK(e && strstr(alloy_error_message(e), "argument 'other' expects Tensor, got str"));
  alloy_error_free(e);
  /* unknown keyword */
  alloy_arg two[2] = {alloy_arg_value(x), alloy_arg_value(x)};
  const char *kw[1] = {"beta"};
  alloy_arg kwv[1] = {alloy_arg_int(2)};
  e = alloy_graph_add_node(g, add, two, 2, kw, kwv, 1, NULL, &n);
  CHECK(e && strstr(alloy_error_message(e), "no argument named 'beta'"));
  alloy_error_free(e);
  /* duplicate value names */
  e = alloy_graph_add_input(g, "x", &(alloy_value_type){ALLOY_VALUE_TENSOR, ALLOY_F32, 1, shape, NULL, {0, -1}, {NULL, 0}}, NULL);
  CHECK(e && strstr(alloy_error_message(e), "'x' is already used"));
  alloy_error_free(e);
  /* a shape error from the shape function names the op */
  alloy_dim other[1] = {alloy_dim_const(4)};
  alloy_value *w = input(g, "w", ALLOY_F32, other, 1);
  alloy_arg mismatch[2] = {alloy_arg_value(x), alloy_arg_value(w)};
  e = alloy_graph_add_node(g, add, mismatch, 2, NULL, NULL, 0, NULL, &n);
  CHECK(e && strstr(alloy_error_message(e), "aten.add.Tensor"));
  alloy_error_free(e);
  CHECK_INT(alloy_graph_num_nodes(g), 0);
  alloy_graph_free(g);
}

TEST(graph_dce_removes_unused_nodes) {
  alloy_value *x, *y, *z;
  alloy_graph *g = small_graph(&x, &y, &z);
  CHECK_INT(alloy_graph_dce(g), 1);
  CHECK_INT(alloy_graph_num_nodes(g), 2);
  CHECK_INT(alloy_value_num_users(x), 1);
  CHECK_INT(alloy_graph_dce(g), 0);
  alloy_graph_free(g);
}

TEST(graph_replace_uses) {
  alloy_value *x, *y, *z;
  alloy_graph *g = small_graph(&x, &y, &z);
  /* outputs now z instead of y: relu and add become dead */
  CHECK_OK(alloy_graph_replace_uses(g, y, z));
  CHECK(alloy_graph_output(g, 0) == z);
  CHECK_INT(alloy_graph_dce(g), 2);
  CHECK_INT(alloy_graph_num_nodes(g), 1);
  alloy_graph_free(g);
}

TEST(graph_clone_is_deep) {
  alloy_value *x, *y, *z;
  alloy_graph *g = small_graph(&x, &y, &z);
  alloy_graph *c = NULL;
  CHECK_OK(alloy_graph_clone(g, &c));
  REQUIRE(c);
  CHECK_INT(alloy_graph_num_nodes(c), 3);
  alloy_value *cy = alloy_graph_output(c, 0);
  CHECK(cy != y);
  CHECK_STR(alloy_value_name(cy), "y");
  CHECK_STR(dims(cy), "s0, 4");
  CHECK(alloy_graph_symtab(c) != alloy_graph_symtab(g));
  alloy_graph_free(g); /* the clone must not depend on the original */
  CHECK_OK(alloy_graph_verify(c));
  CHECK_STR(dims(alloy_graph_output(c, 0)), "s0, 4");
  alloy_graph_free(c);
}

TEST(graph_extract_subgraph) {
  alloy_value *x, *y, *z;
  alloy_graph *g = small_graph(&x, &y, &z);
  alloy_node *relu = alloy_graph_node(g, 1);
  alloy_graph *sub = NULL;
  CHECK_OK(alloy_graph_extract(g, &relu, 1, &sub));
  REQUIRE(sub);
  /* relu's input "sum" is defined outside: it becomes the input */
  CHECK_INT(alloy_graph_num_inputs(sub), 1);
  CHECK_STR(alloy_value_name(alloy_graph_input(sub, 0)), "sum");
  CHECK_INT(alloy_graph_num_nodes(sub), 1);
  CHECK_INT(alloy_graph_num_outputs(sub), 1);
  CHECK_STR(alloy_value_name(alloy_graph_output(sub, 0)), "y");
  CHECK_OK(alloy_graph_verify(sub));
  alloy_graph_free(sub);
  alloy_graph_free(g);
}

TEST(graph_unbacked_sizes_are_stable) {
  alloy_graph *g = alloy_graph_new();
  alloy_dim shape[2] = {alloy_dim_const(5), alloy_dim_const(3)};
  alloy_value *x = input(g, "x", ALLOY_F32, shape, 2);
  alloy_arg a[1] = {alloy_arg_value(x)};
  alloy_value *nz = node1(g, "aten.nonzero.default", a, 1, "nz");
  alloy_value *nz2 = node1(g, "aten.nonzero.default", a, 1, "nz2");
  CHECK(nz && nz2);
  if (nz && nz2) {
    CHECK_STR(dims(nz), "u0, 2");
    CHECK_STR(dims(nz2), "u1, 2");
    CHECK_INT(alloy_value_dtype(nz), ALLOY_I64);
    /* re-running the shape functions names the sizes the same */
    CHECK_OK(alloy_graph_verify(g));
    alloy_graph *c = NULL;
    CHECK_OK(alloy_graph_clone(g, &c));
    CHECK_OK(alloy_graph_verify(c));
    alloy_graph_free(c);
  }
  alloy_graph_free(g);
}
