/*
 * tests/test_host_table.c: the host function table's ABI 1.2 entries
 * (sdk/src/host.c) and what they stand on: the graph-input attachments of
 * the IR (data and "intermediate", ir/graph.c) through clone, specialize,
 * the node-by-node copy and extract; node indices, producers, users in graph
 * order, strides, op ids; claim groups and reasons; the log level; and
 * tracing (sdk/src/trace.c), written as Chrome trace JSON and read back with
 * jansson. Kernel-table plugins on the same entries: test_kernel_table.c.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloy/graph.h"
#include "alloy/runtime.h"
#include "harness.h"
#include "ir/graph_internal.h"
#include "sdk/src/host.h"

static const alloy_host_api *H(void) { return alloy_host_table(); }

static alloy_value *input(alloy_graph *g, const char *name, const alloy_dim *shape, int rank,
                          const alloy_dim *strides) {
  alloy_value_type vt = {ALLOY_VALUE_TENSOR, ALLOY_F32, rank, shape, strides,
                         {ALLOY_DEVICE_CPU, -1}, {NULL, 0}};
  alloy_value *v = NULL;
  CHECK_OK(alloy_graph_add_input(g, name, &vt, &v));
  return v;
}

static alloy_node *node(alloy_graph *g, const char *op, const alloy_arg *args, int n,
                        const char *name) {
  alloy_node *nd = NULL;
  CHECK_OK(alloy_graph_add_node(g, alloy_op_find(op), args, n, NULL, NULL, 0, name, &nd));
  return nd;
}

static alloy_value *out0(alloy_node *n) { return n ? alloy_node_output(n, 0) : NULL; }

/* x: f32[s0, 4] (user), w: f32[4, 4] (parameter "fc.weight", data known),
 * b: f32[4] (buffer "fc.bias", data not known);
 * h = mm(x, w); hb = add(h, b); y = relu(hb). */
typedef struct mlp {
  alloy_graph *g;
  alloy_node *mm, *add, *relu;
  float w[16], b[4];
} mlp;

static void mlp_build(mlp *m) {
  memset(m, 0, sizeof *m);
  for (int i = 0; i < 16; i++) m->w[i] = (float)i;
  m->g = alloy_graph_new();
  alloy_dim s0;
  CHECK_OK(alloy_sym_new(alloy_graph_symtab(m->g), "s0", 1, 64, &s0));
  alloy_dim xs[2] = {s0, alloy_dim_const(4)}, ws[2] = {alloy_dim_const(4), alloy_dim_const(4)};
  alloy_dim bs[1] = {alloy_dim_const(4)};
  alloy_value *x = input(m->g, "x", xs, 2, NULL), *w = input(m->g, "w", ws, 2, NULL);
  alloy_value *b = input(m->g, "b", bs, 1, NULL);
  CHECK_OK(alloy_graph_set_input_role(m->g, 1, ALLOY_INPUT_PARAMETER, "fc.weight"));
  CHECK_OK(alloy_graph_set_input_role(m->g, 2, ALLOY_INPUT_BUFFER, "fc.bias"));
  alloy_graph_set_input_data(m->g, 1, m->w, sizeof m->w);
  alloy_arg a1[2] = {alloy_arg_value(x), alloy_arg_value(w)};
  m->mm = node(m->g, "aten.mm.default", a1, 2, "h");
  alloy_arg a2[2] = {alloy_arg_value(out0(m->mm)), alloy_arg_value(b)};
  m->add = m->mm ? node(m->g, "aten.add.Tensor", a2, 2, "hb") : NULL;
  alloy_arg a3[1] = {alloy_arg_value(out0(m->add))};
  m->relu = m->add ? node(m->g, "aten.relu.default", a3, 1, "y") : NULL;
  alloy_value *y = out0(m->relu);
  if (y) CHECK_OK(alloy_graph_set_outputs(m->g, &y, 1));
}

/* The three inputs of an mlp graph (or a whole copy of one) as built. */
static void check_mlp_inputs(const alloy_graph *g, const float *w) {
  const char *name = NULL;
  uint64_t bytes = 1;
  REQUIRE(alloy_graph_num_inputs(g) == 3);
  CHECK_INT(alloy_graph_input_role(g, 0, &name), ALLOY_INPUT_USER);
  CHECK(name == NULL);
  CHECK(alloy_graph_input_data(g, 0, &bytes) == NULL);
  CHECK_INT(bytes, 0);
  CHECK_INT(alloy_graph_input_role(g, 1, &name), ALLOY_INPUT_PARAMETER);
  CHECK_STR(name, "fc.weight");
  CHECK(alloy_graph_input_data(g, 1, &bytes) == w);
  CHECK_INT(bytes, 16 * sizeof(float));
  CHECK_INT(alloy_graph_input_role(g, 2, &name), ALLOY_INPUT_BUFFER);
  CHECK_STR(name, "fc.bias");
  CHECK(alloy_graph_input_data(g, 2, NULL) == NULL);
  for (int i = 0; i < 3; i++) CHECK(!alloy_graph_input_is_intermediate(g, i));
}

/* ---- graph-input attachments (ir/graph.c) ---------------------------------- */

TEST(graph_input_data_is_set_read_and_bounded) {
  mlp m;
  mlp_build(&m);
  check_mlp_inputs(m.g, m.w);
  /* Out of range: ignored when set, nothing when read. */
  alloy_graph_set_input_data(m.g, 3, m.b, 4);
  alloy_graph_set_input_data(m.g, -1, m.b, 4);
  uint64_t bytes = 7;
  CHECK(alloy_graph_input_data(m.g, 3, &bytes) == NULL);
  CHECK_INT(bytes, 0);
  CHECK(!alloy_graph_input_is_intermediate(m.g, 3));
  CHECK(!alloy_graph_input_is_intermediate(m.g, -1));
  /* A role set later keeps the data; NULL data clears the size too. */
  CHECK_OK(alloy_graph_set_input_role(m.g, 1, ALLOY_INPUT_CONSTANT, "c0"));
  CHECK(alloy_graph_input_data(m.g, 1, &bytes) == m.w);
  CHECK_INT(bytes, sizeof m.w);
  alloy_graph_set_input_data(m.g, 1, NULL, 99);
  CHECK(alloy_graph_input_data(m.g, 1, &bytes) == NULL);
  CHECK_INT(bytes, 0);
  alloy_graph_free(m.g);
}

TEST(graph_input_attachments_survive_clone_specialize_and_copy) {
  mlp m;
  mlp_build(&m);
  alloy_graph *c = NULL, *s = NULL, *k = NULL;
  CHECK_OK(alloy_graph_clone(m.g, &c));
  if (c) check_mlp_inputs(c, m.w);
  int64_t values[1] = {5};
  bool bound[1] = {true};
  CHECK_OK(alloy_graph_specialize(m.g, values, bound, 1, &s));
  if (s) check_mlp_inputs(s, m.w);
  /* The node-by-node copy the decompositions use. */
  alloy_graph_copy *cp = NULL;
  CHECK_OK(alloy_copy_begin(m.g, &cp));
  for (int i = 0; cp && i < alloy_graph_num_nodes(m.g); i++)
    CHECK_OK(alloy_copy_node(cp, alloy_graph_node(m.g, i), NULL));
  if (cp) CHECK_OK(alloy_copy_finish(cp, &k));
  if (k) check_mlp_inputs(k, m.w);
  alloy_graph_free(m.g); /* the copies stand alone, the data is the caller's */
  if (c) check_mlp_inputs(c, m.w);
  alloy_graph_free(c);
  alloy_graph_free(s);
  alloy_graph_free(k);
}

TEST(graph_extract_keeps_weight_roles_and_marks_intermediates) {
  mlp m;
  mlp_build(&m);
  /* mm alone: x and w are inputs of the graph, and stay what they are. */
  alloy_graph *p1 = NULL, *p2 = NULL, *p3 = NULL;
  CHECK_OK(alloy_graph_extract(m.g, &m.mm, 1, &p1));
  REQUIRE(p1);
  const char *name = NULL;
  uint64_t bytes = 0;
  REQUIRE(alloy_graph_num_inputs(p1) == 2);
  CHECK_STR(alloy_value_name(alloy_graph_input(p1, 0)), "x");
  CHECK_INT(alloy_graph_input_role(p1, 0, &name), ALLOY_INPUT_USER);
  CHECK(!alloy_graph_input_is_intermediate(p1, 0));
  CHECK_STR(alloy_value_name(alloy_graph_input(p1, 1)), "w");
  CHECK_INT(alloy_graph_input_role(p1, 1, &name), ALLOY_INPUT_PARAMETER);
  CHECK_STR(name, "fc.weight");
  CHECK(alloy_graph_input_data(p1, 1, &bytes) == m.w);
  CHECK_INT(bytes, sizeof m.w);
  CHECK(!alloy_graph_input_is_intermediate(p1, 1));
  /* add and relu: h comes from another partition; b keeps its role. */
  alloy_node *rest[2] = {m.relu, m.add}; /* any order */
  CHECK_OK(alloy_graph_extract(m.g, rest, 2, &p2));
  REQUIRE(p2);
  REQUIRE(alloy_graph_num_inputs(p2) == 2);
  CHECK_STR(alloy_value_name(alloy_graph_input(p2, 0)), "h");
  CHECK(alloy_graph_input_is_intermediate(p2, 0));
  CHECK_INT(alloy_graph_input_role(p2, 0, &name), ALLOY_INPUT_USER);
  CHECK(alloy_graph_input_data(p2, 0, NULL) == NULL);
  CHECK_STR(alloy_value_name(alloy_graph_input(p2, 1)), "b");
  CHECK(!alloy_graph_input_is_intermediate(p2, 1));
  CHECK_INT(alloy_graph_input_role(p2, 1, &name), ALLOY_INPUT_BUFFER);
  CHECK_STR(name, "fc.bias");
  /* Extracting from a partition: its intermediate input stays one. */
  alloy_node *relu2 = alloy_graph_node(p2, 1), *add2 = alloy_graph_node(p2, 0);
  CHECK_OK(alloy_graph_extract(p2, &add2, 1, &p3));
  if (p3) {
    CHECK(alloy_graph_input_is_intermediate(p3, 0));
    CHECK_INT(alloy_graph_input_role(p3, 1, NULL), ALLOY_INPUT_BUFFER);
  }
  alloy_graph_free(p3);
  p3 = NULL;
  CHECK_OK(alloy_graph_extract(p2, &relu2, 1, &p3));
  if (p3) {
    CHECK_STR(alloy_value_name(alloy_graph_input(p3, 0)), "hb");
    CHECK(alloy_graph_input_is_intermediate(p3, 0));
  }
  CHECK_OK(alloy_graph_verify(p2));
  alloy_graph_free(p1);
  alloy_graph_free(p2);
  alloy_graph_free(p3);
  alloy_graph_free(m.g);
}

/* ---- graph readers ----------------------------------------------------------- */

TEST(host_table_is_1_3_and_complete) {
  const alloy_host_api *h = H();
  CHECK_INT(h->struct_size, ALLOY_HOST_API_STRUCT_SIZE);
  CHECK_INT(h->abi_major, ALLOY_ABI_MAJOR);
  CHECK_INT(h->abi_minor, 3); /* 1.3 added a plugin entry; the host table is 1.2's */
  CHECK(ALLOY_HAS_FIELD(h, alloy_host_api, trace_range));
  CHECK(h->log_level && h->node_index && h->value_producer && h->value_num_users &&
        h->value_user && h->value_stride && h->op_find && h->graph_input_kind &&
        h->graph_input_data && h->claims_add_group && h->claims_reject && h->clock_ns &&
        h->trace_enabled && h->trace_range);
}

TEST(host_node_index_finds_position_after_dce) {
  const alloy_host_api *h = H();
  alloy_graph *g = alloy_graph_new();
  alloy_dim s[1] = {alloy_dim_const(8)};
  alloy_value *x = input(g, "x", s, 1, NULL);
  alloy_arg ax[1] = {alloy_arg_value(x)};
  alloy_node *nodes[6];
  for (int i = 0; i < 6; i++) nodes[i] = node(g, i % 2 ? "aten.exp.default" : "aten.neg.default", ax, 1, NULL);
  alloy_value *outs[3] = {out0(nodes[0]), out0(nodes[3]), out0(nodes[5])};
  CHECK_OK(alloy_graph_set_outputs(g, outs, 3));
  CHECK_INT(alloy_graph_dce(g), 3); /* 1, 2 and 4 go */
  CHECK_INT(h->node_index(g, nodes[0]), 0);
  CHECK_INT(h->node_index(g, nodes[3]), 1);
  CHECK_INT(h->node_index(g, nodes[5]), 2);
  CHECK_INT(h->node_index(g, nodes[2]), -1); /* dead */
  CHECK_INT(h->node_index(g, NULL), -1);
  for (int i = 0; i < h->graph_num_nodes(g); i++) CHECK_INT(h->node_index(g, h->graph_node(g, i)), i);
  /* A node of another graph, even with the same id, is not g's. */
  alloy_graph *c = NULL;
  CHECK_OK(alloy_graph_clone(g, &c));
  if (c) CHECK_INT(h->node_index(g, alloy_graph_node(c, 0)), -1);
  alloy_graph *empty = alloy_graph_new();
  CHECK_INT(h->node_index(empty, nodes[0]), -1);
  alloy_graph_free(empty);
  alloy_graph_free(c);
  alloy_graph_free(g);
}

TEST(host_value_producer_and_users_in_graph_order) {
  const alloy_host_api *h = H();
  alloy_graph *g = alloy_graph_new();
  alloy_dim s[1] = {alloy_dim_const(8)};
  alloy_value *x = input(g, "x", s, 1, NULL);
  alloy_arg ax[1] = {alloy_arg_value(x)};
  alloy_node *a = node(g, "aten.neg.default", ax, 1, "a");  /* x's user */
  alloy_node *b = node(g, "aten.exp.default", ax, 1, "b");  /* b's user is c */
  alloy_arg ab[1] = {alloy_arg_value(out0(b))};
  alloy_node *c = node(g, "aten.sin.default", ab, 1, "c");
  alloy_node *d = node(g, "aten.cos.default", ax, 1, "d");
  alloy_arg ad[2] = {alloy_arg_value(out0(d)), alloy_arg_value(out0(b))};
  alloy_node *e = node(g, "aten.add.Tensor", ad, 2, "e");
  REQUIRE(a && b && c && d && e);
  int k = 7;
  CHECK(h->value_producer(x, &k) == NULL);
  CHECK_INT(k, -1);
  CHECK(h->value_producer(out0(c), &k) == c);
  CHECK_INT(k, 0);
  CHECK(h->value_producer(out0(c), NULL) == c);
  /* x is used by a, b and d; add's two uses of values count once each. */
  CHECK_INT(h->value_num_users(x), 3);
  CHECK(h->value_user(x, 0) == a && h->value_user(x, 1) == b && h->value_user(x, 2) == d);
  CHECK(h->value_user(x, 3) == NULL && h->value_user(x, -1) == NULL);
  /* d's user e, then b's users c and e, move to a's value: c is added
   * after e but lands before it, in graph order, and e stays once. */
  CHECK_OK(alloy_graph_replace_uses(g, out0(d), out0(a)));
  CHECK_OK(alloy_graph_replace_uses(g, out0(b), out0(a)));
  CHECK_INT(h->value_num_users(out0(a)), 2);
  CHECK(h->value_user(out0(a), 0) == c && h->value_user(out0(a), 1) == e);
  CHECK_INT(h->value_num_users(out0(b)), 0);
  alloy_graph_free(g);
}

TEST(host_value_stride_only_when_recorded) {
  const alloy_host_api *h = H();
  alloy_graph *g = alloy_graph_new();
  alloy_dim sym;
  CHECK_OK(alloy_sym_new(alloy_graph_symtab(g), "s0", 1, 64, &sym));
  alloy_dim s[2] = {alloy_dim_const(3), alloy_dim_const(4)};
  alloy_dim st[2] = {alloy_dim_const(1), alloy_dim_const(3)};
  alloy_dim sst[2] = {sym, alloy_dim_const(1)};
  alloy_value *t = input(g, "t", s, 2, st), *c = input(g, "c", s, 2, NULL);
  alloy_value *v = input(g, "v", s, 2, sst);
  int64_t stride = -5;
  CHECK_INT(h->value_stride(t, 0, &stride), 1);
  CHECK_INT(stride, 1);
  CHECK_INT(h->value_stride(t, 1, &stride), 1);
  CHECK_INT(stride, 3);
  stride = -5;
  CHECK_INT(h->value_stride(t, 2, &stride), 0);
  CHECK_INT(h->value_stride(t, -1, &stride), 0);
  CHECK_INT(h->value_stride(c, 0, &stride), 0);
  CHECK_INT(h->value_stride(v, 0, &stride), 0); /* symbolic: not concrete */
  CHECK_INT(stride, -5);
  CHECK_INT(h->value_stride(v, 1, &stride), 1);
  CHECK_INT(stride, 1);
  alloy_graph_free(g);
}

TEST(host_op_find_gives_node_op_ids) {
  const alloy_host_api *h = H();
  alloy_graph *g = alloy_graph_new();
  alloy_dim s[1] = {alloy_dim_const(8)};
  alloy_value *x = input(g, "x", s, 1, NULL);
  alloy_arg ax[2] = {alloy_arg_value(x), alloy_arg_value(x)};
  alloy_node *n = node(g, "aten.add.Tensor", ax, 2, NULL);
  REQUIRE(n);
  CHECK(h->op_find("aten.add.Tensor") >= 0);
  CHECK_INT(h->op_find("aten.add.Tensor"), h->node_op_id(n));
  CHECK(h->op_find("aten.relu.default") != h->op_find("aten.add.Tensor"));
  CHECK_INT(h->op_find("aten.no_such_op.default"), -1);
  CHECK_INT(h->op_find(NULL), -1);
  alloy_graph_free(g);
}

TEST(host_graph_input_kind_and_resident_data) {
  const alloy_host_api *h = H();
  mlp m;
  mlp_build(&m);
  alloy_graph *p = NULL;
  alloy_node *rest[2] = {m.add, m.relu};
  CHECK_OK(alloy_graph_extract(m.g, rest, 2, &p));
  REQUIRE(p);
  CHECK_INT(h->graph_input_kind(m.g, 0), ALLOY_INPUT_KIND_USER);
  CHECK_INT(h->graph_input_kind(m.g, 1), ALLOY_INPUT_KIND_PARAMETER);
  CHECK_INT(h->graph_input_kind(m.g, 2), ALLOY_INPUT_KIND_BUFFER);
  CHECK_INT(h->graph_input_kind(m.g, 3), ALLOY_INPUT_KIND_USER); /* out of range */
  CHECK_INT(h->graph_input_kind(p, 0), ALLOY_INPUT_KIND_INTERMEDIATE);
  CHECK_INT(h->graph_input_kind(p, 1), ALLOY_INPUT_KIND_BUFFER);
  uint64_t bytes = 1;
  CHECK(h->graph_input_data(m.g, 1, &bytes) == m.w);
  CHECK_INT(bytes, sizeof m.w);
  CHECK(h->graph_input_data(m.g, 2, &bytes) == NULL); /* not known */
  CHECK_INT(bytes, 0);
  CHECK(h->graph_input_data(m.g, 1, NULL) == m.w);
  /* Data on a user input is not shown: its contents change between runs. */
  alloy_graph_set_input_data(m.g, 0, m.b, sizeof m.b);
  bytes = 1;
  CHECK(h->graph_input_data(m.g, 0, &bytes) == NULL);
  CHECK_INT(bytes, 0);
  CHECK_OK(alloy_graph_set_input_role(m.g, 0, ALLOY_INPUT_CONSTANT, "k"));
  CHECK_INT(h->graph_input_kind(m.g, 0), ALLOY_INPUT_KIND_CONSTANT);
  CHECK(h->graph_input_data(m.g, 0, &bytes) == m.b);
  CHECK_INT(bytes, sizeof m.b);
  alloy_graph_free(p);
  alloy_graph_free(m.g);
}

/* ---- claims ---------------------------------------------------------------------- */

TEST(host_claim_groups_are_sorted_distinct_and_claimed) {
  const alloy_host_api *h = H();
  bool claimed[6] = {false};
  double cost[6] = {0};
  alloy_claims c = {.num_nodes = 6, .claimed = claimed, .cost = cost};
  h->claims_add(&c, 0, 5e-6);
  int g1[5] = {3, 1, 3, 7, -1};
  h->claims_add_group(&c, g1, 5, 2e-6);
  h->claims_add_group(&c, g1, 0, 1.0);   /* n <= 0: nothing */
  h->claims_add_group(&c, NULL, 3, 1.0); /* no indices: nothing */
  int bad[2] = {6, -3};
  h->claims_add_group(&c, bad, 2, 1.0);  /* none in range: nothing */
  int g2[2] = {5, 0};                    /* a node claimed alone too */
  h->claims_add_group(&c, g2, 2, -1.0);
  REQUIRE(c.ngroups == 2);
  CHECK(c.cap_groups >= 2);
  CHECK_INT(c.groups[0].n, 2);
  CHECK(c.groups[0].nodes[0] == 1 && c.groups[0].nodes[1] == 3);
  CHECK(c.groups[0].cost == 2e-6);
  CHECK_INT(c.groups[1].n, 2);
  CHECK(c.groups[1].nodes[0] == 0 && c.groups[1].nodes[1] == 5);
  CHECK(c.groups[1].cost == -1.0);
  CHECK(claimed[0] && claimed[1] && !claimed[2] && claimed[3] && !claimed[4] && claimed[5]);
  /* Node 0 was claimed alone first: it keeps that claim and its cost. */
  CHECK(cost[1] == 0 && cost[3] == 0 && cost[5] == 0 && cost[0] == 5e-6);
  /* Many groups: the array grows. */
  for (int i = 0; i < 40; i++) h->claims_add_group(&c, &g1[i % 2], 1, 1e-9);
  CHECK_INT(c.ngroups, 42);
  CHECK(c.reason == NULL);
  claims_release(&c);
  CHECK(c.groups == NULL && c.ngroups == 0 && c.cap_groups == 0 && c.reason == NULL);
  CHECK(claimed[1] && c.claimed == claimed); /* the caller's arrays stay */
  claims_release(&c);                        /* twice: nothing left to free */
}

TEST(host_claim_reasons_are_copied_and_replaced) {
  const alloy_host_api *h = H();
  bool claimed[3] = {false};
  double cost[3] = {0};
  alloy_claims c = {.num_nodes = 3, .claimed = claimed, .cost = cost};
  h->claims_reject(&c, 1, NULL); /* nothing to clear: nothing allocated */
  CHECK(c.reason == NULL);
  h->claims_reject(&c, 3, "out of range");
  h->claims_reject(&c, -1, "out of range");
  CHECK(c.reason == NULL);
  char why[32] = "f64 is not supported";
  h->claims_reject(&c, 1, why);
  REQUIRE(c.reason);
  why[0] = 'X'; /* copied */
  CHECK_STR(c.reason[1], "f64 is not supported");
  CHECK(c.reason[0] == NULL && c.reason[2] == NULL);
  h->claims_reject(&c, 1, "rank 9 is too large");
  CHECK_STR(c.reason[1], "rank 9 is too large");
  h->claims_reject(&c, 2, "no kernel row");
  h->claims_reject(&c, 2, NULL); /* cleared */
  CHECK(c.reason[2] == NULL);
  CHECK(!claimed[1]);
  claims_release(&c);
  CHECK(c.reason == NULL);
}

/* ---- the log level ----------------------------------------------------------------- */

TEST(host_log_level_follows_alloy_log) {
  const alloy_host_api *h = H();
  const char *old = getenv("ALLOY_LOG");
  char *saved = old ? strdup(old) : NULL;
  unsetenv("ALLOY_LOG");
  CHECK_INT(h->log_level(), ALLOY_LOG_WARNING); /* kept for the loader even unprinted */
  setenv("ALLOY_LOG", "0", 1);
  CHECK_INT(h->log_level(), ALLOY_LOG_DEBUG);
  setenv("ALLOY_LOG", "1", 1);
  CHECK_INT(h->log_level(), ALLOY_LOG_INFO);
  setenv("ALLOY_LOG", "3", 1);
  CHECK_INT(h->log_level(), ALLOY_LOG_WARNING);
  setenv("ALLOY_LOG", "-2", 1);
  CHECK_INT(h->log_level(), ALLOY_LOG_DEBUG);
  if (saved) setenv("ALLOY_LOG", saved, 1);
  else unsetenv("ALLOY_LOG");
  free(saved);
}

/* ---- tracing ------------------------------------------------------------------------- */

TEST(trace_is_off_until_started) {
  const alloy_host_api *h = H();
  CHECK(!trace_on());
  CHECK_INT(h->trace_enabled(), 0);
  h->trace_range("dev", "q", "ignored", 1, 2); /* a no-op */
  alloy_error *e = alloy_trace_stop(NULL);
  CHECK(e != NULL);
  alloy_error_free(e);
  uint64_t a = h->clock_ns(), b = trace_clock_ns();
  CHECK(a > 0 && b >= a);
}

typedef struct tracer {
  const char *process, *track;
  int n;
} tracer;

static void *trace_thread(void *arg) {
  const tracer *t = arg;
  const alloy_host_api *h = H();
  char name[32];
  for (int i = 0; i < t->n; i++) {
    uint64_t b = h->clock_ns();
    snprintf(name, sizeof name, "r%d", i);
    h->trace_range(t->process, t->track, name, b, b + 1500 + (uint64_t)i);
  }
  return NULL;
}

static char trace_path[64];

static json_t *trace_load(void) {
  json_error_t err;
  json_t *root = json_load_file(trace_path, 0, &err);
  if (!root) harness_fail(__FILE__, __LINE__, "%s: line %d: %s", trace_path, err.line, err.text);
  return root;
}

/* The name of (pid, tid) from the metadata events; tid 0: the process. */
static const char *trace_meta_name(json_t *events, json_int_t pid, json_int_t tid) {
  size_t i;
  json_t *ev;
  json_array_foreach(events, i, ev) {
    const char *ph = json_string_value(json_object_get(ev, "ph"));
    const char *what = json_string_value(json_object_get(ev, "name"));
    if (!ph || strcmp(ph, "M") || json_integer_value(json_object_get(ev, "pid")) != pid) continue;
    bool process = what && !strcmp(what, "process_name");
    if (process != (tid == 0)) continue;
    if (!process && json_integer_value(json_object_get(ev, "tid")) != tid) continue;
    return json_string_value(json_object_get(json_object_get(ev, "args"), "name"));
  }
  return NULL;
}

TEST(trace_records_ranges_of_two_threads_as_chrome_json) {
  const alloy_host_api *h = H();
  snprintf(trace_path, sizeof trace_path, "/tmp/alloy_trace_%d.json", (int)getpid());
  CHECK_OK(alloy_trace_start());
  alloy_error *e = alloy_trace_start(); /* one at a time */
  CHECK(e != NULL);
  alloy_error_free(e);
  CHECK(trace_on() && h->trace_enabled());
  /* Strings JSON must escape, and bytes that are not UTF-8. */
  const char *odd_process = "dev\"sim\\";
  const char *odd_name = "tab\there\nnl \x01 caf\xc3\xa9 bad\xff end";
  uint64_t t0 = h->clock_ns();
  trace_range("alloy", "partitions", "run", t0, t0 + 2000);
  h->trace_range(odd_process, "queue 0", odd_name, t0 + 10, t0 + 20);
  h->trace_range(odd_process, "queue 0", "before start", t0 - 1000000, t0 + 5);
  tracer a = {"alloy", "host", 500}, b = {odd_process, "queue 1", 700};
  pthread_t ta, tb;
  CHECK_INT(pthread_create(&ta, NULL, trace_thread, &a), 0);
  CHECK_INT(pthread_create(&tb, NULL, trace_thread, &b), 0);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  CHECK_OK(alloy_trace_stop(trace_path));
  CHECK(!trace_on());
  h->trace_range("alloy", "host", "after stop", t0, t0 + 1); /* dropped silently */

  json_t *root = trace_load();
  REQUIRE(root);
  CHECK_INT(json_integer_value(json_object_get(json_object_get(root, "otherData"), "dropped_ranges")), 0);
  json_t *events = json_object_get(root, "traceEvents");
  REQUIRE(json_is_array(events));
  int ranges = 0, per_track[4] = {0}, odd_seen = 0, early_seen = 0;
  size_t i;
  json_t *ev;
  json_array_foreach(events, i, ev) {
    const char *ph = json_string_value(json_object_get(ev, "ph"));
    if (!ph || strcmp(ph, "X")) continue;
    ranges++;
    json_int_t pid = json_integer_value(json_object_get(ev, "pid"));
    json_int_t tid = json_integer_value(json_object_get(ev, "tid"));
    const char *process = trace_meta_name(events, pid, 0), *track = trace_meta_name(events, pid, tid);
    const char *name = json_string_value(json_object_get(ev, "name"));
    const char *cat = json_string_value(json_object_get(ev, "cat"));
    double ts = json_number_value(json_object_get(ev, "ts"));
    double dur = json_number_value(json_object_get(ev, "dur"));
    if (!process || !track || !name || !cat) {
      harness_fail(__FILE__, __LINE__, "event %zu: pid %lld tid %lld unnamed", i, (long long)pid,
                   (long long)tid);
      continue;
    }
    CHECK_STR(cat, process);
    CHECK(ts >= 0);
    if (!strcmp(process, "alloy") && !strcmp(track, "host")) {
      per_track[0]++;
      int k = atoi(name + 1);
      CHECK(dur > 1.4999 + k * 1e-3 && dur < 1.5001 + k * 1e-3);
    } else if (!strcmp(process, "alloy") && !strcmp(track, "partitions")) {
      per_track[1]++;
      CHECK_STR(name, "run");
      CHECK(dur > 1.9999 && dur < 2.0001);
    } else if (!strcmp(process, odd_process) && !strcmp(track, "queue 1")) {
      per_track[2]++;
    } else if (!strcmp(process, odd_process) && !strcmp(track, "queue 0")) {
      per_track[3]++;
      if (!strcmp(name, "tab\there\nnl \x01 caf\xc3\xa9 bad\xef\xbf\xbd end")) odd_seen++;
      if (!strcmp(name, "before start")) {
        early_seen++;
        CHECK(ts == 0); /* cut at the start */
      }
    } else {
      harness_fail(__FILE__, __LINE__, "unexpected track %s / %s", process, track);
    }
  }
  CHECK_INT(ranges, 1203);
  CHECK(per_track[0] == 500 && per_track[1] == 1 && per_track[2] == 700 && per_track[3] == 2);
  CHECK_INT(odd_seen, 1);
  CHECK_INT(early_seen, 1);
  json_decref(root);
  unlink(trace_path);

  /* A second trace starts empty. */
  CHECK_OK(alloy_trace_start());
  trace_range("alloy", "host", "only", t0, t0 + 1);
  CHECK_OK(alloy_trace_stop(trace_path));
  root = trace_load();
  int n = 0;
  json_array_foreach(json_object_get(root, "traceEvents"), i, ev) n += !strcmp(
      json_string_value(json_object_get(ev, "ph")), "X");
  CHECK_INT(n, 1);
  json_decref(root);
  unlink(trace_path);
}

TEST(trace_stop_to_an_unwritable_path_fails_and_ends_the_trace) {
  CHECK_OK(alloy_trace_start());
  trace_range("alloy", "host", "x", 1, 2);
  alloy_error *e = alloy_trace_stop("/nonexistent-dir/trace.json");
  CHECK(e != NULL);
  if (e) CHECK(strstr(alloy_error_message(e), "/nonexistent-dir/trace.json") != NULL);
  alloy_error_free(e);
  CHECK(!trace_on());
}

TEST(trace_drops_and_counts_ranges_past_its_bound) {
  snprintf(trace_path, sizeof trace_path, "/tmp/alloy_trace_%d.json", (int)getpid());
  CHECK_OK(alloy_trace_start());
  uint64_t t0 = trace_clock_ns();
  for (uint32_t i = 0; i < (1u << 20) + 5; i++) trace_range("p", "t", "n", t0, t0 + 1);
  CHECK_OK(alloy_trace_stop(trace_path));
  /* The count leads the file: no need to parse a million events. */
  char head[128] = {0};
  FILE *f = fopen(trace_path, "r");
  REQUIRE(f);
  size_t got = fread(head, 1, sizeof head - 1, f);
  fclose(f);
  unlink(trace_path);
  CHECK(got > 0 && strstr(head, "\"dropped_ranges\":5}") != NULL);
}
