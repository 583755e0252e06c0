/*
 * tests/testgraph.h: helpers shared by the shape-function tests: a graph
 * with symbolic sizes s0 and s1, inputs, nodes, and readable checks on the
 * outputs' shapes and on error messages.
 */
#ifndef ALLOY_TEST_GRAPH_H
#define ALLOY_TEST_GRAPH_H

#include <stdint.h>

#include "alloy/graph.h"
#include "harness.h"

typedef struct tg_fixture {
  alloy_graph *g;
  alloy_symtab *st;
  alloy_dim s0; /* in [lo, 64]  */
  alloy_dim s1; /* in [lo, inf] */
} tg_fixture;

/* A new graph with symbols s0 and s1 whose ranges start at lo. */
tg_fixture tg_setup(int64_t lo);
static inline alloy_dim K(int64_t v) { return alloy_dim_const(v); }
/* An input tensor of dtype t and the given shape (NULL name: automatic). */
alloy_value *tg_input(tg_fixture *f, alloy_dtype t, const alloy_dim *shape, int rank);
/* Adds a node; returns it, or NULL with *err set (the caller frees it) when
 * err is given; without err a failure is recorded. */
alloy_node *tg_add(tg_fixture *f, const char *op, const alloy_arg *args, int n,
                   alloy_error **err);
/* Output k's shape as text, "16*s0, 64" (a static buffer). */
const char *tg_shape_of(const alloy_node *n, int k);
alloy_dtype tg_dtype_of(const alloy_node *n, int k);
/* Output k's dim d is the same dim as want. */
bool tg_dim_is(const alloy_node *n, int k, int d, alloy_dim want);
/* e exists and its message contains text; frees e. */
void tg_check_error(alloy_error *e, const char *text, const char *file, int line);
#define CHECK_ERROR(e, text) tg_check_error((e), (text), __FILE__, __LINE__)

#endif
