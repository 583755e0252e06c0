/*
 * tests/test_meta_reduce.c: the shape functions of ir/meta_reduce.c and
 * ir/meta_index.c on graphs with a symbolic batch s0: sizes come out as
 * expressions over s0, data-dependent sizes as unbacked symbols, advanced
 * indexing follows PyTorch's placement rule, and a bad argument gives an
 * error that says what is wrong.
 */
#include <stdint.h>
#include <stdlib.h>

#include "alloy/graph.h"
#include "harness.h"
#include "testgraph.h"

static alloy_dim dim_of(const alloy_node *n, int k, int d) {
  return alloy_value_shape(alloy_node_output(n, k))[d];
}

#define ARGS(...) ((const alloy_arg[]){__VA_ARGS__})
#define NARGS(...) ((int)(sizeof ARGS(__VA_ARGS__) / sizeof(alloy_arg)))
#define ADD(f, op, ...) tg_add((f), (op), ARGS(__VA_ARGS__), NARGS(__VA_ARGS__), NULL)
#define ADD_ERR(f, err, op, ...) tg_add((f), (op), ARGS(__VA_ARGS__), NARGS(__VA_ARGS__), (err))
#define V(v) alloy_arg_value(v)
#define I(v) alloy_arg_int(v)
#define B(v) alloy_arg_bool(v)
#define LIST(...) alloy_arg_list(ARGS(__VA_ARGS__), NARGS(__VA_ARGS__))

TEST(meta_reduce_sum_keeps_symbolic_batch) {
  tg_fixture f = tg_setup(2);
  alloy_value *x = tg_input(&f, ALLOY_F32, (alloy_dim[]){f.s0, K(3)}, 2);
  alloy_value *b = tg_input(&f, ALLOY_BOOL, (alloy_dim[]){f.s0, K(3)}, 2);
  alloy_node *n = ADD(&f, "aten.sum.dim_IntList", V(x), LIST(I(-1)));
  CHECK_STR(tg_shape_of(n, 0), "s0");
  n = ADD(&f, "aten.sum.dim_IntList", V(x), LIST(I(1)), B(true));
  CHECK_STR(tg_shape_of(n, 0), "s0, 1");
  /* dim=None and dim=[] both reduce every dim */
  n = ADD(&f, "aten.sum.dim_IntList", V(x), alloy_arg_none(), B(true));
  CHECK_STR(tg_shape_of(n, 0), "1, 1");
  n = ADD(&f, "aten.sum.dim_IntList", V(b), alloy_arg_list(NULL, 0));
  CHECK_STR(tg_shape_of(n, 0), "");
  CHECK_INT(tg_dtype_of(n, 0), ALLOY_I64); /* sum of bool is int64 */
  n = ADD(&f, "aten.any.dim", V(x), I(0));
  CHECK_STR(tg_shape_of(n, 0), "3");
  CHECK_INT(tg_dtype_of(n, 0), ALLOY_BOOL);
  n = ADD(&f, "aten.argmax.default", V(x), alloy_arg_none(), B(true));
  CHECK_STR(tg_shape_of(n, 0), "1, 1");
  CHECK_INT(tg_dtype_of(n, 0), ALLOY_I64);
  n = ADD(&f, "aten.max.dim", V(x), I(1), B(false));
  CHECK(n && alloy_dim_same(dim_of(n, 0, 0), f.s0) && alloy_dim_same(dim_of(n, 1, 0), f.s0));
  CHECK_INT(tg_dtype_of(n, 1), ALLOY_I64);
  n = ADD(&f, "aten.var_mean.correction", V(x), LIST(I(0)));
  CHECK_STR(tg_shape_of(n, 0), "3");
  CHECK_STR(tg_shape_of(n, 1), "3");
  alloy_value *i32 = tg_input(&f, ALLOY_I32, (alloy_dim[]){f.s0, K(3)}, 2);
  n = ADD(&f, "aten.cumsum.default", V(i32), I(0));
  CHECK_STR(tg_shape_of(n, 0), "s0, 3");
  CHECK_INT(tg_dtype_of(n, 0), ALLOY_I64);
  n = ADD(&f, "aten.topk.default", V(x), I(2), I(1));
  CHECK_STR(tg_shape_of(n, 0), "s0, 2");
  n = ADD(&f, "aten.topk.default", V(x), alloy_arg_dim(f.s0), I(0));
  CHECK_STR(tg_shape_of(n, 1), "s0, 3");
  n = ADD(&f, "aten.log_softmax.int", V(i32), I(1), alloy_arg_dtype(ALLOY_F64));
  CHECK_INT(tg_dtype_of(n, 0), ALLOY_F64);
  alloy_graph_free(f.g);
}

TEST(meta_reduce_bad_arguments) {
  tg_fixture f = tg_setup(2);
  alloy_value *x = tg_input(&f, ALLOY_F32, (alloy_dim[]){f.s0, K(3)}, 2);
  alloy_value *i = tg_input(&f, ALLOY_I64, (alloy_dim[]){f.s0, K(3)}, 2);
  alloy_error *e = NULL;
  ADD_ERR(&f, &e, "aten.amax.default", V(x), LIST(I(0), I(-2)));
  CHECK_ERROR(e, "dim 0 appears multiple times");
  ADD_ERR(&f, &e, "aten.sum.dim_IntList", V(x), LIST(I(2)));
  CHECK_ERROR(e, "dimension out of range");
  ADD_ERR(&f, &e, "aten.mean.dim", V(i), LIST(I(0)));
  CHECK_ERROR(e, "floating point");
  ADD_ERR(&f, &e, "aten.var.correction", V(i));
  CHECK_ERROR(e, "floating point");
  ADD_ERR(&f, &e, "aten.topk.default", V(x), I(4), I(1));
  CHECK_ERROR(e, "out of range");
  ADD_ERR(&f, &e, "aten.trace.default", V(tg_input(&f, ALLOY_F32, (alloy_dim[]){K(3)}, 1)));
  CHECK_ERROR(e, "expected a matrix");
  alloy_value *empty = tg_input(&f, ALLOY_F32, (alloy_dim[]){K(0), K(3)}, 2);
  ADD_ERR(&f, &e, "aten.amax.default", V(empty), LIST(I(0)));
  CHECK_ERROR(e, "non-zero size");
  alloy_graph_free(f.g);
}

TEST(meta_reduce_data_dependent_sizes) {
  tg_fixture f = tg_setup(2);
  alloy_value *x = tg_input(&f, ALLOY_F32, (alloy_dim[]){f.s0}, 1);
  alloy_node *n = ADD(&f, "aten._unique2.default", V(x), B(true), B(false), B(true));
  REQUIRE(n);
  alloy_dim u = dim_of(n, 0, 0);
  CHECK(!alloy_dim_is_const(u));
  CHECK(alloy_dim_same(dim_of(n, 2, 0), u)); /* counts: one per value */
  CHECK_STR(tg_shape_of(n, 1), "0");            /* no inverse asked for */
  n = ADD(&f, "aten.unique_consecutive.default", V(x), B(true));
  CHECK(n && alloy_dim_same(dim_of(n, 1, 0), f.s0));
  alloy_value *ix = tg_input(&f, ALLOY_I64, (alloy_dim[]){f.s0}, 1);
  n = ADD(&f, "aten.bincount.default", V(ix));
  CHECK(n && !alloy_dim_is_const(dim_of(n, 0, 0)));
  alloy_graph_free(f.g);
}

TEST(meta_index_advanced_indexing_placement) {
  tg_fixture f = tg_setup(2);
  alloy_value *x = tg_input(&f, ALLOY_F32, (alloy_dim[]){f.s0, K(4), K(5)}, 3);
  alloy_value *i23 = tg_input(&f, ALLOY_I64, (alloy_dim[]){K(2), K(3)}, 2);
  alloy_value *i3 = tg_input(&f, ALLOY_I32, (alloy_dim[]){K(3)}, 1);
  /* adjacent index tensors replace their dims in place */
  alloy_node *n = ADD(&f, "aten.index.Tensor", V(x), LIST(alloy_arg_none(), V(i23), V(i3)));
  CHECK_STR(tg_shape_of(n, 0), "s0, 2, 3");
  n = ADD(&f, "aten.index.Tensor", V(x), LIST(alloy_arg_none(), V(i23)));
  CHECK_STR(tg_shape_of(n, 0), "s0, 2, 3, 5");
  /* separated by a sliced dim: the broadcast dims move to the front */
  n = ADD(&f, "aten.index.Tensor", V(x), LIST(V(i3), alloy_arg_none(), V(i23)));
  CHECK_STR(tg_shape_of(n, 0), "2, 3, 4");
  /* a bool mask over dims 1..2 selects a data-dependent count */
  alloy_value *mask = tg_input(&f, ALLOY_BOOL, (alloy_dim[]){K(4), K(5)}, 2);
  n = ADD(&f, "aten.index.Tensor", V(x), LIST(alloy_arg_none(), V(mask)));
  REQUIRE(n);
  CHECK(alloy_dim_same(dim_of(n, 0, 0), f.s0));
  CHECK(!alloy_dim_is_const(dim_of(n, 0, 1)));
  CHECK_INT(alloy_value_rank(alloy_node_output(n, 0)), 2);
  alloy_error *e = NULL;
  alloy_value *bad = tg_input(&f, ALLOY_BOOL, (alloy_dim[]){K(3), K(5)}, 2);
  ADD_ERR(&f, &e, "aten.index.Tensor", V(x), LIST(alloy_arg_none(), V(bad)));
  CHECK_ERROR(e, "does not match the shape of the indexed tensor");
  alloy_value *fl = tg_input(&f, ALLOY_F32, (alloy_dim[]){K(3)}, 1);
  ADD_ERR(&f, &e, "aten.index.Tensor", V(x), LIST(V(fl)));
  CHECK_ERROR(e, "must be long, int, byte or bool");
  ADD_ERR(&f, &e, "aten.index.Tensor", V(x), LIST(V(i3), V(i3), V(i3), V(i3)));
  CHECK_ERROR(e, "too many indices");
  alloy_graph_free(f.g);
}

TEST(meta_index_gather_select_embedding) {
  tg_fixture f = tg_setup(2);
  alloy_value *x = tg_input(&f, ALLOY_F32, (alloy_dim[]){f.s0, K(5)}, 2);
  alloy_value *idx = tg_input(&f, ALLOY_I64, (alloy_dim[]){K(7)}, 1);
  alloy_node *n = ADD(&f, "aten.index_select.default", V(x), I(1), V(idx));
  CHECK_STR(tg_shape_of(n, 0), "s0, 7");
  alloy_value *g = tg_input(&f, ALLOY_I64, (alloy_dim[]){f.s0, K(2)}, 2);
  n = ADD(&f, "aten.gather.default", V(x), I(1), V(g));
  CHECK_STR(tg_shape_of(n, 0), "s0, 2");
  CHECK_INT(tg_dtype_of(n, 0), ALLOY_F32);
  n = ADD(&f, "aten.nonzero.default", V(x));
  REQUIRE(n);
  CHECK(!alloy_dim_is_const(dim_of(n, 0, 0)));
  CHECK(alloy_dim_same(dim_of(n, 0, 1), K(2)));
  CHECK_INT(tg_dtype_of(n, 0), ALLOY_I64);
  alloy_value *w = tg_input(&f, ALLOY_F32, (alloy_dim[]){K(100), K(16)}, 2);
  alloy_value *tok = tg_input(&f, ALLOY_I64, (alloy_dim[]){f.s0, K(7)}, 2);
  n = ADD(&f, "aten.embedding.default", V(w), V(tok));
  CHECK_STR(tg_shape_of(n, 0), "s0, 7, 16");
  n = ADD(&f, "aten.tril_indices.default", I(4), I(4));
  CHECK_STR(tg_shape_of(n, 0), "2, 10");
  alloy_error *e = NULL;
  alloy_value *g1 = tg_input(&f, ALLOY_I64, (alloy_dim[]){K(2)}, 1);
  ADD_ERR(&f, &e, "aten.gather.default", V(x), I(1), V(g1));
  CHECK_ERROR(e, "same number of dimensions");
  alloy_value *fmask = tg_input(&f, ALLOY_F32, (alloy_dim[]){f.s0, K(5)}, 2);
  ADD_ERR(&f, &e, "aten.masked_fill.Scalar", V(x), V(fmask), I(0));
  CHECK_ERROR(e, "boolean mask");
  alloy_graph_free(f.g);
}
