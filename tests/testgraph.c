/*
 * tests/testgraph.c: see testgraph.h.
 */
#include "testgraph.h"

#include <stdlib.h>

tg_fixture tg_setup(int64_t lo) {
  tg_fixture f;
  f.g = alloy_graph_new();
  f.st = alloy_graph_symtab(f.g);
  CHECK_OK(alloy_sym_new(f.st, "s0", lo, 64, &f.s0));
  CHECK_OK(alloy_sym_new(f.st, "s1", lo, ALLOY_SYM_INF, &f.s1));
  return f;
}

alloy_value *tg_input(tg_fixture *f, alloy_dtype t, const alloy_dim *shape, int rank) {
  alloy_value_type vt = {ALLOY_VALUE_TENSOR, t, rank, shape, NULL, {ALLOY_DEVICE_CPU, -1},
                         {NULL, 0}};
  alloy_value *v = NULL;
  CHECK_OK(alloy_graph_add_input(f->g, NULL, &vt, &v));
  return v;
}

alloy_node *tg_add(tg_fixture *f, const char *op, const alloy_arg *args, int n,
                   alloy_error **err) {
  alloy_node *node = NULL;
  const alloy_op *o = alloy_op_find(op);
  if (!o) {
    harness_fail(__FILE__, __LINE__, "op %s not in the registry", op);
    return NULL;
  }
  alloy_error *e = alloy_graph_add_node(f->g, o, args, n, NULL, NULL, 0, NULL, &node);
  if (err) {
    *err = e;
  } else if (e) {
    harness_fail(__FILE__, __LINE__, "%s failed: %s", op, alloy_error_message(e));
    alloy_error_free(e);
  }
  return e ? NULL : node;
}

const char *tg_shape_of(const alloy_node *n, int k) {
  static char buf[512];
  buf[0] = '\0';
  if (!n) return "(no node)";
  const alloy_value *v = alloy_node_output(n, k);
  size_t len = 0;
  for (int d = 0; d < alloy_value_rank(v) && len < sizeof buf; d++) {
    if (d) len += (size_t)snprintf(buf + len, sizeof buf - len, ", ");
    if (len < sizeof buf)
      len += alloy_dim_print(alloy_value_shape(v)[d], buf + len, sizeof buf - len);
  }
  return buf;
}

alloy_dtype tg_dtype_of(const alloy_node *n, int k) {
  return n ? alloy_value_dtype(alloy_node_output(n, k)) : ALLOY_DTYPE_COUNT;
}

bool tg_dim_is(const alloy_node *n, int k, int d, alloy_dim want) {
  if (!n || d >= alloy_value_rank(alloy_node_output(n, k))) return false;
  return alloy_dim_same(alloy_value_shape(alloy_node_output(n, k))[d], want);
}

void tg_check_error(alloy_error *e, const char *text, const char *file, int line) {
  if (!e) {
    harness_fail(file, line, "expected an error containing \"%s\"", text);
    return;
  }
  if (!strstr(alloy_error_message(e), text))
    harness_fail(file, line, "error \"%s\" does not contain \"%s\"", alloy_error_message(e), text);
  alloy_error_free(e);
}
