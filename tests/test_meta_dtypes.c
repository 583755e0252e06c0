/*
 * tests/test_meta_dtypes.c: the dtypes PyTorch's CPU kernels refuse
 * (ir/meta_dtypes.c): the table stays sorted, a refused dtype gives an
 * error naming the argument, and the dtypes PyTorch takes still pass.
 */
#include "harness.h"

#include <string.h>

#include "alloy/graph.h"
#include "alloy/ops.h"
#include "ir/ir.h"
#include "testgraph.h"

TEST(meta_dtypes_table_is_sorted_and_names_real_ops) {
  const alloy_dtype_refusal *r = alloy_cpu_dtype_refusals;
  REQUIRE(r->op);
  for (; r->op; r++) {
    CHECK(alloy_op_find(r->op) != NULL);
    CHECK(r->dtypes != 0);
    if (r[1].op) CHECK(strcmp(r->op, r[1].op) < 0);
  }
}

/* mm of two bool matrices: PyTorch's addmm_impl_cpu_ is not implemented for
 * 'Bool'; float32 and int64 are. */
TEST(meta_dtypes_refuse_bool_mm_and_name_the_argument) {
  alloy_dim shape[2] = {K(2), K(2)};
  const alloy_dtype ok[] = {ALLOY_F32, ALLOY_I64};
  for (int k = 0; k < 3; k++) {
    tg_fixture f = tg_setup(0);
    alloy_dtype t = k < 2 ? ok[k] : ALLOY_BOOL;
    alloy_value *a = tg_input(&f, t, shape, 2), *b = tg_input(&f, t, shape, 2);
    alloy_arg args[2] = {alloy_arg_value(a), alloy_arg_value(b)};
    alloy_node *n = NULL;
    alloy_error *e = alloy_graph_add_node(f.g, alloy_op_find("aten.mm.default"), args, 2, NULL,
                                          NULL, 0, NULL, &n);
    if (k < 2) {
      CHECK(e == NULL);
    } else {
      REQUIRE(e);
      CHECK(strstr(alloy_error_message(e), "does not take bool") != NULL);
      CHECK(strstr(alloy_error_message(e), "argument 'self'") != NULL);
    }
    alloy_error_free(e);
    alloy_graph_free(f.g);
  }
}

/* searchsorted is checked on its input: the result is int64 whatever the
 * sorted sequence's dtype, and a bool sequence is what PyTorch refuses. */
TEST(meta_dtypes_check_searchsorted_on_its_input) {
  alloy_dim shape[1] = {K(4)};
  for (int k = 0; k < 2; k++) {
    tg_fixture f = tg_setup(0);
    alloy_dtype t = k ? ALLOY_BOOL : ALLOY_F32;
    alloy_value *s = tg_input(&f, t, shape, 1), *v = tg_input(&f, t, shape, 1);
    alloy_arg args[2] = {alloy_arg_value(s), alloy_arg_value(v)};
    alloy_node *n = NULL;
    alloy_error *e = alloy_graph_add_node(f.g, alloy_op_find("aten.searchsorted.Tensor"), args,
                                          2, NULL, NULL, 0, NULL, &n);
    CHECK((e != NULL) == (k == 1));
    alloy_error_free(e);
    alloy_graph_free(f.g);
  }
}
