/*
 * tests/test_mixture.c: mixtures (sdk/src/mixture.c) over the example
 * plugin and the reference backend, both loaded like any vendor plugin.
 *
 * 1000 random graphs of elementwise ops: those the example runs (add, sub,
 * mul, neg, relu on float32) and those only the reference backend has
 * (abs, maximum, minimum), so the ops a graph draws are random claims. Each
 * graph runs as a mixture under free transfers (the priority choice: the
 * example takes all it claims, so partitions alternate) and under the
 * default cost model, and must give bit for bit what the reference backend
 * gives alone: every op here is exactly rounded in float32, so the two
 * backends agree exactly. The partitions must be numbered along every edge
 * and cover every node.
 */
#include <stdlib.h>
#include <string.h>

#include "alloy/graph.h"
#include "alloy/runtime.h"
#include "harness.h"
#include "testplugin.h"

static uint64_t state;
static unsigned rnd(unsigned n) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return n ? (unsigned)((state >> 33) % n) : 0;
}

static const char *const unary[] = {"aten.neg.default", "aten.relu.default", "aten.abs.default"};
static const char *const binary[] = {"aten.add.Tensor", "aten.sub.Tensor", "aten.mul.Tensor",
                                     "aten.maximum.default", "aten.minimum.default"};

/* A random graph over three f32[2, 3] inputs, drawing each node's op from
 * the unary ops (1 in 3 times) or the binary ones; outputs: the last node
 * and one more. */
static alloy_graph *random_graph_of(int nnodes, const char *const *un, int nun) {
  alloy_graph *g = alloy_graph_new();
  alloy_value *vals[64];
  int nv = 0;
  alloy_dim shape[2] = {alloy_dim_const(2), alloy_dim_const(3)};
  alloy_value_type t = {.kind = ALLOY_VALUE_TENSOR, .dtype = ALLOY_F32, .rank = 2, .shape = shape};
  for (int i = 0; i < 3; i++) CHECK_OK(alloy_graph_add_input(g, NULL, &t, &vals[nv++]));
  for (int k = 0; k < nnodes; k++) {
    bool bin = rnd(3) != 0;
    const char *op = bin ? binary[rnd(5)] : un[rnd((unsigned)nun)];
    alloy_arg args[2] = {alloy_arg_value(vals[rnd((unsigned)nv)]), alloy_arg_value(vals[rnd((unsigned)nv)])};
    alloy_node *n = NULL;
    CHECK_OK(alloy_graph_add_node(g, alloy_op_find(op), args, bin ? 2 : 1, NULL, NULL, 0, NULL, &n));
    if (n) vals[nv++] = alloy_node_output(n, 0);
  }
  alloy_value *outs[2] = {vals[nv - 1], vals[3 + rnd((unsigned)(nv - 3))]};
  CHECK_OK(alloy_graph_set_outputs(g, outs, 2));
  return g;
}

static alloy_graph *random_graph(int nnodes) { return random_graph_of(nnodes, unary, 3); }

TEST(mixture_matches_ref_alone_on_1000_random_graphs) {
  int example;
  alloy_runtime *rt = tp_open_example(&example);
  REQUIRE(rt && example >= 0);
  int ref = alloy_runtime_find_backend(rt, "ref");
  state = 99;
  int mismatches = 0, multi = 0;
  for (int t = 0; t < 1000; t++) {
    alloy_graph *g = random_graph(1 + (int)rnd(20));
    float data[3][6];
    int64_t sizes[2] = {2, 3};
    alloy_host_tensor in[3];
    for (int i = 0; i < 3; i++) {
      for (int k = 0; k < 6; k++) data[i][k] = (float)((int)rnd(2001) - 1000) / 64.0f;
      in[i] = (alloy_host_tensor){sizeof in[i], ALLOY_F32, 2, sizes, data[i]};
    }
    alloy_program *p = NULL;
    alloy_host_tensor want[2] = {{.struct_size = sizeof want[0]}, {.struct_size = sizeof want[1]}};
    CHECK_OK(alloy_program_compile(rt, ref, g, &p));
    if (p) CHECK_OK(alloy_program_run(p, in, 3, want, 2));
    for (int model = 0; model < 2; model++) {
      alloy_program_options po = {.struct_size = sizeof po};
      if (model == 0) po.partition_launch_s = po.link_bytes_per_s = -1;
      int backends[2] = {example, ref};
      alloy_mixture *m = NULL;
      alloy_host_tensor got[2] = {{.struct_size = sizeof got[0]}, {.struct_size = sizeof got[1]}};
      CHECK_OK(alloy_mixture_compile(rt, backends, 2, g, &po, &m));
      if (m) CHECK_OK(alloy_mixture_run(m, in, 3, got, 2));
      bool same = m && p;
      for (int k = 0; k < 2 && same; k++)
        same = got[k].data && want[k].data && !memcmp(got[k].data, want[k].data, 6 * sizeof(float));
      if (!same && mismatches++ < 3) harness_fail(__FILE__, __LINE__, "graph %d, cost model %d: values differ", t, model);
      if (m) {
        /* Every node in a partition, numbers increasing along edges. */
        const alloy_graph *pg = alloy_mixture_graph(m);
        int np = alloy_mixture_num_partitions(m);
        multi += model == 0 && np > 1;
        for (int i = 0; i < alloy_graph_num_nodes(pg); i++) {
          int q = alloy_mixture_node_partition(m, i);
          CHECK(q >= 0 && q < np);
        }
      }
      alloy_mixture_release(m);
    }
    alloy_program_release(p);
    alloy_graph_free(g);
  }
  CHECK_INT(mismatches, 0);
  /* The free cost model must give real mixtures, not one partition. */
  CHECK(multi > 500);
  alloy_runtime_close(rt);
}

TEST(mixture_refuses_an_unusable_backend) {
  int example;
  alloy_runtime *rt = tp_open_example(&example);
  REQUIRE(rt);
  alloy_graph *g = random_graph(3);
  int backends[1] = {999};
  alloy_mixture *m = NULL;
  alloy_error *e = alloy_mixture_compile(rt, backends, 1, g, NULL, &m);
  CHECK(e && strstr(alloy_error_message(e), "backend 999 is not usable"));
  CHECK(m == NULL);
  alloy_error_free(e);
  alloy_graph_free(g);
  alloy_runtime_close(rt);
}

/* The testing backend "chooser" runs the reference kernels and claims what
 * $ALLOY_CHOOSER says. The property test of the partitioner on real
 * graphs with random claims: on 10,000 random graphs every node is in one
 * partition of a backend that claimed it, partition numbers increase along
 * every edge (so the partition graph is acyclic and every partition
 * convex), compiling twice gives the same partitions, and the mixture
 * gives bit for bit what ref gives alone, whatever the ops. The same
 * runs beside devsim, the simulated accelerator (tests/devsim/). */
static const char *const any_unary[] = {"aten.neg.default", "aten.relu.default", "aten.abs.default",
                                        "aten.exp.default", "aten.tanh.default", "aten.sigmoid.default",
                                        "aten.sin.default"};

static alloy_graph *random_graph_any(int nnodes) { return random_graph_of(nnodes, any_unary, 7); }

/* Every node in a partition, numbers increasing along every edge. */
static bool partitions_ok(const alloy_mixture *m) {
  const alloy_graph *g = alloy_mixture_graph(m);
  int n = alloy_graph_num_nodes(g), np = alloy_mixture_num_partitions(m);
  for (int i = 0; i < n; i++) {
    int q = alloy_mixture_node_partition(m, i);
    if (q < 0 || q >= np) return false;
    const alloy_node *node = alloy_graph_node(g, i);
    for (int a = 0; a < alloy_node_num_args(node); a++) {
      const alloy_arg *arg = alloy_node_arg(node, a);
      if (arg->kind != ALLOY_ARG_VALUE) continue;
      alloy_node *prod = alloy_value_producer(arg->u.value, NULL);
      for (int j = 0; prod && j < i; j++)
        if (alloy_graph_node(g, j) == prod && alloy_mixture_node_partition(m, j) > q) return false;
    }
  }
  return true;
}

/* The claims of graph t: chooser by a random share of nodes; devsim by
 * leaving a random set of the ops (its claims are by op). */
static const char *const all_ops[] = {"aten.neg*", "aten.relu*", "aten.abs*", "aten.exp*",
                                      "aten.tanh*", "aten.sigmoid*", "aten.sin*", "aten.add*",
                                      "aten.sub*", "aten.mul*", "aten.maximum*", "aten.minimum*"};

static void choose_claims(const char *backend, int t) {
  char spec[512];
  if (!strcmp(backend, "chooser")) {
    snprintf(spec, sizeof spec, "random=%d:%u", t, 20 + rnd(61));
    setenv("ALLOY_CHOOSER", spec, 1);
    return;
  }
  size_t len = 0;
  spec[0] = '\0';
  for (int k = 0; k < 12; k++)
    if (rnd(100) < 40) len += (size_t)snprintf(spec + len, sizeof spec - len, "%s%s", len ? "," : "", all_ops[k]);
  setenv("ALLOY_DEVSIM_SKIP", spec, 1);
}

/* The property test on `backend` beside ref; returns how many partitions
 * were issued while the other backend still had work in flight. */
static int random_claims_hold(const char *backend) {
  const char *dirs[1] = {tp_test_plugins_dir()};
  alloy_runtime_options o = {.struct_size = sizeof o, .plugin_dirs = dirs, .num_plugin_dirs = 1,
                             .no_default_paths = true};
  alloy_runtime *rt = NULL;
  CHECK_OK(alloy_runtime_open(&o, &rt));
  if (!rt) return 0;
  int other = alloy_runtime_find_backend(rt, backend), ref = alloy_runtime_find_backend(rt, "ref");
  if (other < 0) harness_fail(__FILE__, __LINE__, "no backend %s in %s", backend, dirs[0]);
  if (other < 0) {
    alloy_runtime_close(rt);
    return 0;
  }
  state = 4242;
  int mismatches = 0, multi = 0, broken = 0, concurrent = 0;
  for (int t = 0; t < 10000; t++) {
    choose_claims(backend, t);
    alloy_graph *g = random_graph_any(1 + (int)rnd(24));
    float data[3][6];
    int64_t sizes[2] = {2, 3};
    alloy_host_tensor in[3];
    for (int i = 0; i < 3; i++) {
      for (int k = 0; k < 6; k++) data[i][k] = (float)((int)rnd(2001) - 1000) / 256.0f;
      in[i] = (alloy_host_tensor){sizeof in[i], ALLOY_F32, 2, sizes, data[i]};
    }
    alloy_program *p = NULL;
    alloy_host_tensor want[2] = {{.struct_size = sizeof want[0]}, {.struct_size = sizeof want[1]}};
    CHECK_OK(alloy_program_compile(rt, ref, g, &p));
    if (p) CHECK_OK(alloy_program_run(p, in, 3, want, 2));
    alloy_program_options po = {.struct_size = sizeof po};
    if (t % 2) po.partition_launch_s = po.link_bytes_per_s = -1;
    int backends[2] = {other, ref};
    alloy_mixture *m = NULL;
    alloy_host_tensor got[2] = {{.struct_size = sizeof got[0]}, {.struct_size = sizeof got[1]}};
    CHECK_OK(alloy_mixture_compile(rt, backends, 2, g, &po, &m));
    if (m) CHECK_OK(alloy_mixture_run(m, in, 3, got, 2));
    bool same = m && p;
    for (int k = 0; k < 2 && same; k++)
      same = got[k].data && want[k].data && !memcmp(got[k].data, want[k].data, 6 * sizeof(float));
    if (!same && mismatches++ < 3) harness_fail(__FILE__, __LINE__, "%s graph %d: values differ", backend, t);
    multi += m && alloy_mixture_num_partitions(m) > 1;
    concurrent += m ? alloy_mixture_concurrent_runs(m) : 0;
    /* Structure, and the same partitions from a second compile. */
    alloy_mixture *again = NULL;
    CHECK_OK(alloy_mixture_compile(rt, backends, 2, g, &po, &again));
    bool ok = m && again && partitions_ok(m) &&
              alloy_mixture_num_partitions(m) == alloy_mixture_num_partitions(again);
    for (int i = 0; ok && i < alloy_graph_num_nodes(alloy_mixture_graph(m)); i++)
      ok = alloy_mixture_node_partition(m, i) == alloy_mixture_node_partition(again, i);
    if (!ok && broken++ < 3) harness_fail(__FILE__, __LINE__, "%s graph %d: a partition property fails", backend, t);
    alloy_mixture_release(again);
    alloy_mixture_release(m);
    alloy_program_release(p);
    alloy_graph_free(g);
  }
  unsetenv("ALLOY_CHOOSER");
  unsetenv("ALLOY_DEVSIM_SKIP");
  CHECK_INT(mismatches, 0);
  CHECK_INT(broken, 0);
  CHECK(multi > 2500);
  alloy_runtime_close(rt);
  return concurrent;
}

TEST(mixture_with_random_claims_holds_its_properties_on_10000_graphs) {
  /* chooser runs synchronously (the kernel-table helper): nothing can
   * overlap it, so only the properties are checked. */
  random_claims_hold("chooser");
}

/* devsim is asynchronous, with its own memory: the same properties, and
 * values still equal to ref's although every value crossing to or from it
 * is copied and its work runs on worker threads with random delays. A
 * missing event wait or a premature host read would show as a mismatch. */
TEST(mixture_of_devsim_and_ref_holds_its_properties_on_10000_graphs) {
  setenv("ALLOY_DEVSIM_DELAY_US", "3", 1);
  int concurrent = random_claims_hold("devsim");
  unsetenv("ALLOY_DEVSIM_DELAY_US");
  /* Partitions of ref were issued while devsim still worked. */
  CHECK(concurrent > 100);
}
