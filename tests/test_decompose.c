/*
 * tests/test_decompose.c: the decomposition pass (decompositions/
 * decompose.c) with rule tables made here: a rule is applied where accept()
 * refuses a node, to a fixed point over rounds; a rule whose pieces lead
 * back to the op it replaces stops (the lineage guard); a declining rule
 * leaves the node; a rule with the wrong result type is an error naming it;
 * symbolic shapes stay symbolic; and Alloy's own silu rule gives the graph
 * PyTorch's decomposition does.
 */
#include <stdlib.h>
#include <string.h>

#include "decompositions/decomp.h"
#include "testgraph.h"

/* silu(x) = x * sigmoid(x) */
static void t_silu(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  d_out(d, 0, D(d, "aten.mul.Tensor", V(x), V(D(d, "aten.sigmoid.default", V(x)))));
}
/* A cycle: mish -> softplus -> mish. */
static void t_mish_to_softplus(decomp *d) {
  d_out(d, 0, D(d, "aten.softplus.default", V(d_tensor(d, 0))));
}
static void t_softplus_to_mish(decomp *d) {
  d_out(d, 0, D(d, "aten.mish.default", V(d_tensor(d, 0))));
}
/* A chain over rounds: hardswish -> hardsigmoid -> relu. */
static void t_hardswish(decomp *d) {
  d_out(d, 0, D(d, "aten.hardsigmoid.default", V(d_tensor(d, 0))));
}
static void t_hardsigmoid(decomp *d) { d_out(d, 0, D(d, "aten.relu.default", V(d_tensor(d, 0)))); }
/* Wrong: the result has another dtype. */
static void t_wrong(decomp *d) {
  d_out(d, 0, D(d, "aten._to_copy.default", V(d_tensor(d, 0)), DT(ALLOY_F64)));
}
static void t_declines(decomp *d) { d_decline(d, "only for rank 1, got rank %d", d_rank(d_tensor(d, 0))); }

static const decomp_rule test_rules[] = {
    {"aten.silu.default", t_silu, DECOMP_TO_CORE},
    {"aten.mish.default", t_mish_to_softplus, DECOMP_TO_CORE},
    {"aten.softplus.default", t_softplus_to_mish, DECOMP_TO_CORE},
    {"aten.hardswish.default", t_hardswish, DECOMP_TO_CORE},
    {"aten.hardsigmoid.default", t_hardsigmoid, DECOMP_TO_CORE},
    {"aten.hardshrink.default", t_wrong, DECOMP_TO_CORE},
    {"aten.celu.default", t_declines, DECOMP_TO_CORE},
    {NULL, NULL, 0},
};

/* A graph y = OP(x) with x: f32[s0, 3]. */
static tg_fixture one_op(const char *op) {
  tg_fixture f = tg_setup(1);
  alloy_dim shape[2] = {f.s0, K(3)};
  alloy_value *x = tg_input(&f, ALLOY_F32, shape, 2);
  alloy_arg a = alloy_arg_value(x);
  alloy_node *n = tg_add(&f, op, &a, 1, NULL);
  alloy_value *y = n ? alloy_node_output(n, 0) : NULL;
  if (y) CHECK_OK(alloy_graph_set_outputs(f.g, &y, 1));
  return f;
}

static const char *op_at(const alloy_graph *g, int i) {
  return alloy_op_name(alloy_node_op(alloy_graph_node(g, i)));
}

TEST(decompose_applies_a_rule_and_keeps_symbolic_shapes) {
  tg_fixture f = one_op("aten.silu.default");
  decomp_options o = {.accept = decomp_accept_core, .rules = test_rules};
  alloy_graph *out = NULL;
  decomp_stats st;
  CHECK_OK(alloy_decompose(f.g, &o, &out, &st, NULL));
  REQUIRE(out);
  CHECK_INT(alloy_graph_num_nodes(out), 2);
  CHECK_STR(op_at(out, 0), "aten.sigmoid.default");
  CHECK_STR(op_at(out, 1), "aten.mul.Tensor");
  char text[32];
  alloy_dim_print(alloy_value_shape(alloy_graph_output(out, 0))[0], text, sizeof text);
  CHECK_STR(text, "s0");
  CHECK_INT(st.decomposed, 1);
  CHECK_OK(alloy_graph_verify(out));
  alloy_graph_free(out);
  alloy_graph_free(f.g);
}

TEST(decompose_reaches_a_fixed_point_over_rounds) {
  tg_fixture f = one_op("aten.hardswish.default");
  decomp_options o = {.accept = decomp_accept_core, .rules = test_rules};
  alloy_graph *out = NULL;
  decomp_stats st;
  CHECK_OK(alloy_decompose(f.g, &o, &out, &st, NULL));
  REQUIRE(out);
  CHECK_INT(alloy_graph_num_nodes(out), 1);
  CHECK_STR(op_at(out, 0), "aten.relu.default");
  CHECK_INT(st.decomposed, 2);
  CHECK_INT(st.rounds, 3); /* two rewriting rounds and one that changes nothing */
  alloy_graph_free(out);
  alloy_graph_free(f.g);
}

TEST(decompose_stops_a_cycle_through_its_lineage) {
  tg_fixture f = one_op("aten.mish.default");
  decomp_options o = {.accept = decomp_accept_core, .rules = test_rules};
  alloy_graph *out = NULL;
  char *why = NULL;
  CHECK_OK(alloy_decompose(f.g, &o, &out, NULL, &why));
  REQUIRE(out);
  /* mish became softplus, softplus became mish again, and that mish is
   * left: its rule would lead back to itself. */
  CHECK_INT(alloy_graph_num_nodes(out), 1);
  CHECK_STR(op_at(out, 0), "aten.mish.default");
  CHECK(why && strstr(why, "leads back to itself"));
  free(why);
  alloy_graph_free(out);
  alloy_graph_free(f.g);
}

TEST(decompose_leaves_a_declined_node_and_says_why) {
  tg_fixture f = one_op("aten.celu.default");
  decomp_options o = {.accept = decomp_accept_core, .rules = test_rules};
  alloy_graph *out = NULL;
  char *why = NULL;
  decomp_stats st;
  CHECK_OK(alloy_decompose(f.g, &o, &out, &st, &why));
  REQUIRE(out);
  CHECK_STR(op_at(out, 0), "aten.celu.default");
  CHECK(why && strstr(why, "its rule declines: only for rank 1, got rank 2"));
  CHECK_INT(st.declined, 1);
  free(why);
  alloy_graph_free(out);
  alloy_graph_free(f.g);
}

TEST(decompose_refuses_a_rule_with_the_wrong_type) {
  tg_fixture f = one_op("aten.hardshrink.default");
  decomp_options o = {.accept = decomp_accept_core, .rules = test_rules};
  alloy_graph *out = NULL;
  alloy_error *e = alloy_decompose(f.g, &o, &out, NULL, NULL);
  CHECK(out == NULL);
  CHECK_ERROR(e, "the rule for aten.hardshrink.default (node v1) gives f64[s0, 3] for output 0, the op gives f32[s0, 3]");
  alloy_graph_free(f.g);
}

TEST(decompose_keeps_what_accept_keeps) {
  tg_fixture f = one_op("aten.silu.default");
  decomp_options o = {.accept = decomp_accept_prims, .rules = test_rules};
  alloy_graph *out = NULL;
  CHECK_OK(alloy_decompose(f.g, &o, &out, NULL, NULL));
  REQUIRE(out);
  /* Down to core ops, which have no prims rule in this table: they stay. */
  CHECK_INT(alloy_graph_num_nodes(out), 2);
  alloy_graph_free(out);
  alloy_graph_free(f.g);
}

TEST(decompose_uses_alloys_silu_rule) {
  tg_fixture f = one_op("aten.silu.default");
  decomp_options o = {.accept = decomp_accept_core};
  alloy_graph *out = NULL;
  CHECK_OK(alloy_decompose(f.g, &o, &out, NULL, NULL));
  REQUIRE(out);
  bool has_sigmoid = false, has_silu = false;
  for (int i = 0; i < alloy_graph_num_nodes(out); i++) {
    has_sigmoid |= !strcmp(op_at(out, i), "aten.sigmoid.default");
    has_silu |= !strcmp(op_at(out, i), "aten.silu.default");
  }
  CHECK(has_sigmoid && !has_silu);
  alloy_graph_free(out);
  alloy_graph_free(f.g);
}

/* A rule's new values take automatic names that later nodes of the source
 * graph already have: the copy must not trip over them. */
TEST(decompose_survives_name_collisions_with_rule_values) {
  tg_fixture f = one_op("aten.hardswish.default");
  alloy_arg a = alloy_arg_value(alloy_graph_output(f.g, 0));
  alloy_node *r1 = tg_add(&f, "aten.relu.default", &a, 1, NULL);
  REQUIRE(r1);
  a = alloy_arg_value(alloy_node_output(r1, 0));
  alloy_node *r2 = tg_add(&f, "aten.neg.default", &a, 1, NULL);
  REQUIRE(r2);
  alloy_value *y = alloy_node_output(r2, 0);
  CHECK_OK(alloy_graph_set_outputs(f.g, &y, 1));
  decomp_options o = {.accept = decomp_accept_core, .rules = test_rules};
  alloy_graph *out = NULL;
  CHECK_OK(alloy_decompose(f.g, &o, &out, NULL, NULL));
  REQUIRE(out);
  CHECK_INT(alloy_graph_num_nodes(out), 3);
  CHECK_STR(op_at(out, 0), "aten.relu.default");
  CHECK_STR(op_at(out, 2), "aten.neg.default");
  CHECK_OK(alloy_graph_verify(out));
  alloy_graph_free(out);
  alloy_graph_free(f.g);
}

/* One node OP(args) whose argument 0 is an input of dtype t and shape,
 * decomposed to what accept keeps with Alloy's own rules; the result graph
 * (verified), or NULL after an error. */
static alloy_graph *rules_on(const char *op, alloy_dtype t, const alloy_dim *shape, int rank,
                             alloy_arg *args, int nargs,
                             bool (*accept)(const alloy_graph *, int, void *)) {
  tg_fixture f = tg_setup(1);
  args[0] = alloy_arg_value(tg_input(&f, t, shape, rank));
  alloy_node *n = tg_add(&f, op, args, nargs, NULL);
  alloy_graph *out = NULL;
  if (n) {
    alloy_value *y = alloy_node_output(n, 0);
    CHECK_OK(alloy_graph_set_outputs(f.g, &y, 1));
    decomp_options o = {.accept = accept};
    CHECK_OK(alloy_decompose(f.g, &o, &out, NULL, NULL));
    if (out) CHECK_OK(alloy_graph_verify(out));
  }
  alloy_graph_free(f.g);
  return out;
}

/* y = OP(x, args...) on x: f32[shape] (up to three more arguments). */
static alloy_graph *alloys_rules_on(const char *op, const alloy_dim *shape, int rank,
                                    const alloy_arg *args, int nargs,
                                    bool (*accept)(const alloy_graph *, int, void *)) {
  alloy_arg a[4];
  for (int i = 0; i < nargs && i < 3; i++) a[i + 1] = args[i];
  return rules_on(op, ALLOY_F32, shape, rank, a, (nargs < 3 ? nargs : 3) + 1, accept);
}

static bool has_op(const alloy_graph *g, const char *op) {
  for (int i = 0; i < alloy_graph_num_nodes(g); i++)
    if (!strcmp(op_at(g, i), op)) return true;
  return false;
}

/* flip(x, [0]) of a zero-dim x takes dim 0 as PyTorch does (rank 1 for
 * wrapping) and reverses nothing: prims.rev with no dims, not an error. */
TEST(decompose_flip_of_a_zero_dim_tensor) {
  alloy_arg dims = LIST(I(0));
  alloy_graph *out = alloys_rules_on("aten.flip.default", NULL, 0, &dims, 1, decomp_accept_prims);
  REQUIRE(out);
  CHECK_INT(alloy_graph_num_nodes(out), 1);
  CHECK_STR(op_at(out, 0), "prims.rev.default");
  alloy_graph_free(out);
}

/* logsumexp over an empty dim has no max to subtract (amax refuses an empty
 * reduced dim): log(sum(exp(x))), as PyTorch computes it when numel() is 0. */
TEST(decompose_logsumexp_of_an_empty_tensor) {
  alloy_dim shape[2] = {K(0), K(3)};
  alloy_arg args[2] = {LIST(I(0)), B(false)};
  alloy_graph *out = alloys_rules_on("aten.logsumexp.default", shape, 2, args, 2, decomp_accept_core);
  REQUIRE(out);
  CHECK(!has_op(out, "aten.amax.default"));
  CHECK(has_op(out, "aten.sum.dim_IntList") && has_op(out, "aten.log.default"));
  alloy_graph_free(out);
}

/* softmax over an empty dim has no max to subtract either (the refs skip
 * it when numel() is 0): exp, sum and div only. */
TEST(decompose_softmax_over_an_empty_dim) {
  alloy_dim shape[2] = {K(3), K(0)};
  alloy_arg args[2] = {I(1), B(false)};
  alloy_graph *out = alloys_rules_on("aten._softmax.default", shape, 2, args, 2, decomp_accept_prims);
  REQUIRE(out);
  CHECK(!has_op(out, "prims.amax.default"));
  CHECK(has_op(out, "prims.exp.default") && has_op(out, "prims.div.default"));
  alloy_graph_free(out);
}

/* OP(args) on an input of dtype t and shape, with Alloy's rules down to core. */
static alloy_graph *core_of(const char *op, alloy_dtype t, const alloy_dim *shape, int rank,
                            alloy_arg *args, int nargs) {
  return rules_on(op, t, shape, rank, args, nargs, decomp_accept_core);
}

/* threshold on an integer tensor compares with and replaces by the
 * truncated numbers, as the kernel's Scalar::to<int> does: threshold -0.5
 * is 0 (so 0 is replaced), value 2.5 is 2, and the result stays int32. */
TEST(decompose_threshold_of_an_integer_tensor_truncates_its_numbers) {
  alloy_dim shape[1] = {K(4)};
  alloy_arg args[3] = {NONE, F(-0.5), F(2.5)};
  alloy_graph *out = core_of("aten.threshold.default", ALLOY_I32, shape, 1, args, 3);
  REQUIRE(out);
  CHECK_INT(alloy_value_dtype(alloy_graph_output(out, 0)), ALLOY_I32);
  int seen = 0;
  for (int i = 0; i < alloy_graph_num_nodes(out); i++) {
    const alloy_node *n = alloy_graph_node(out, i);
    const char *op = op_at(out, i);
    int k = !strcmp(op, "aten.le.Scalar") ? 1 : !strcmp(op, "aten.where.self") ? 1 : -1;
    if (k < 0) continue;
    const alloy_arg *a = alloy_node_arg(n, k);
    CHECK_INT(a->kind, ALLOY_ARG_INT);
    if (a->kind == ALLOY_ARG_INT) CHECK_INT(a->u.i.value, !strcmp(op, "aten.le.Scalar") ? 0 : 2);
    seen++;
  }
  CHECK_INT(seen, 2);
  alloy_graph_free(out);
}

/* _trilinear of int32 tensors summed along unroll_dim: the int64 sum is
 * converted back, the result is int32 (the pass checks the dtype). */
TEST(decompose_trilinear_of_int32_keeps_the_dtype) {
  alloy_dim shape[2] = {K(3), K(4)};
  tg_fixture f = tg_setup(1);
  alloy_value *a = tg_input(&f, ALLOY_I32, shape, 2), *b = tg_input(&f, ALLOY_I32, shape, 2),
              *c = tg_input(&f, ALLOY_I32, shape, 2);
  alloy_arg args[8] = {alloy_arg_value(a), alloy_arg_value(b), alloy_arg_value(c), EMPTY_LIST,
                       EMPTY_LIST, EMPTY_LIST, LIST(I(1)), I(1)};
  alloy_node *n = tg_add(&f, "aten._trilinear.default", args, 8, NULL);
  REQUIRE(n);
  alloy_value *y = alloy_node_output(n, 0);
  CHECK_OK(alloy_graph_set_outputs(f.g, &y, 1));
  decomp_options o = {.accept = decomp_accept_core};
  alloy_graph *out = NULL;
  CHECK_OK(alloy_decompose(f.g, &o, &out, NULL, NULL));
  REQUIRE(out);
  CHECK_INT(alloy_value_dtype(alloy_graph_output(out, 0)), ALLOY_I32);
  alloy_graph_free(out);
  alloy_graph_free(f.g);
}
