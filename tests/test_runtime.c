/*
 * tests/test_runtime.c: the device-resident data path (sdk/src/exec.c,
 * arena.c, fold.c and the program and mixture around them), checked from
 * the application API with the test plugins of tests/plugins and the
 * reference backend:
 *
 *   - the arena planner never lets two values alive at one step overlap;
 *   - a backend never sees a partition without nodes, nor a pass-through
 *     value of a dtype it did not claim (an f32-only plugin once corrupted
 *     its heap on one);
 *   - a partition whose compile fails falls back to the next backend
 *     instead of failing the mixture, and says why;
 *   - weights are copied to a backend once, and again only when a run
 *     passes other data; what depends only on bound weights is folded and
 *     gives the same values;
 *   - the asynchronous run gives what the synchronous one does, and a
 *     second run while one is in flight is refused;
 *   - what a plugin hands back is checked before it is believed (a lying
 *     test plugin, tests/plugins/liar.c), and a runtime asked for some
 *     backends never loads the others (one that crashes on open).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloy/graph.h"
#include "alloy/runtime.h"
#include "harness.h"
#include "sdk/src/arena.h"
#include "testplugin.h"

static alloy_runtime *open_test_plugins(void) {
  const char *dirs[1] = {tp_test_plugins_dir()};
  alloy_runtime_options o = {.struct_size = sizeof o, .plugin_dirs = dirs, .num_plugin_dirs = 1,
                             .no_default_paths = true};
  alloy_runtime *rt = NULL;
  CHECK_OK(alloy_runtime_open(&o, &rt));
  return rt;
}

static alloy_value *input(alloy_graph *g, const char *name, alloy_dtype dt, int64_t n) {
  alloy_dim shape[1] = {alloy_dim_const(n)};
  alloy_value_type t = {.kind = ALLOY_VALUE_TENSOR, .dtype = dt, .rank = 1, .shape = shape};
  alloy_value *v = NULL;
  CHECK_OK(alloy_graph_add_input(g, name, &t, &v));
  return v;
}

static alloy_value *node1(alloy_graph *g, const char *op, alloy_value *a, alloy_value *b) {
  alloy_arg args[2] = {alloy_arg_value(a), b ? alloy_arg_value(b) : alloy_arg_value(a)};
  alloy_node *n = NULL;
  CHECK_OK(alloy_graph_add_node(g, alloy_op_find(op), args, b ? 2 : 1, NULL, NULL, 0, NULL, &n));
  return n ? alloy_node_output(n, 0) : NULL;
}

static uint64_t rnd_state = 99;
static unsigned rnd(unsigned n) {
  rnd_state = rnd_state * 6364136223846793005ull + 1442695040888963407ull;
  return (unsigned)((rnd_state >> 33) % n);
}

TEST(arena_never_overlaps_values_alive_at_one_step) {
  for (int t = 0; t < 500; t++) {
    int n = 1 + (int)rnd(40);
    arena_item items[40];
    uint64_t off[40], total = 0, ideal = 0;
    for (int i = 0; i < n; i++) {
      int a = (int)rnd(20), b = a + (int)rnd(6);
      items[i] = (arena_item){rnd(4) ? 1 + rnd(5000) : 0, a, b};
    }
    CHECK_OK(arena_place(items, n, off, &total, &ideal));
    CHECK(ideal <= total);
    for (int i = 0; i < n; i++) {
      CHECK(off[i] % ARENA_ALIGN == 0);
      CHECK(off[i] + items[i].bytes <= total);
      for (int j = 0; j < i; j++) {
        bool time = items[i].first <= items[j].last && items[j].first <= items[i].last;
        bool space = off[i] < off[j] + items[j].bytes && off[j] < off[i] + items[i].bytes;
        if (time && space && items[i].bytes && items[j].bytes)
          harness_fail(__FILE__, __LINE__, "case %d: items %d and %d overlap", t, i, j);
      }
    }
  }
  /* Three values of a chain: the first and third share bytes. */
  arena_item chain[3] = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}};
  uint64_t off[3], total, ideal;
  CHECK_OK(arena_place(chain, 3, off, &total, &ideal));
  CHECK_INT(total, 2 * 1024);
  CHECK_INT(ideal, 2 * 1024);
  CHECK(off[0] == off[2]);
}

/* relu(x) on the f32-only plugin, with an i64 input passed straight
 * through: the plugin sees only the relu. */
TEST(a_backend_never_sees_pass_through_values_or_empty_partitions) {
  alloy_runtime *rt = open_test_plugins();
  REQUIRE(rt);
  int basic = alloy_runtime_find_backend(rt, "basic");
  REQUIRE(basic >= 0);
  alloy_graph *g = alloy_graph_new();
  alloy_value *x = input(g, "x", ALLOY_F32, 4), *y = input(g, "y", ALLOY_I64, 3);
  alloy_value *outs[2] = {node1(g, "aten.relu.default", x, NULL), y};
  CHECK_OK(alloy_graph_set_outputs(g, outs, 2));
  alloy_program *p = NULL;
  CHECK_OK(alloy_program_compile(rt, basic, g, &p));
  float xs[4] = {-1, 2, -3, 4};
  int64_t ys[3] = {7, -8, 9}, n4 = 4, n3 = 3;
  alloy_host_tensor in[2] = {{sizeof in[0], ALLOY_F32, 1, &n4, xs}, {sizeof in[1], ALLOY_I64, 1, &n3, ys}};
  alloy_host_tensor out[2] = {{.struct_size = sizeof out[0]}, {.struct_size = sizeof out[1]}};
  if (p) CHECK_OK(alloy_program_run(p, in, 2, out, 2));
  if (p && out[0].data && out[1].data) {
    const float *r = out[0].data;
    CHECK(r[0] == 0 && r[1] == 2 && r[2] == 0 && r[3] == 4);
    CHECK(!memcmp(out[1].data, ys, sizeof ys));
    CHECK(out[1].dtype == ALLOY_I64 && out[1].sizes[0] == 3);
  }
  alloy_program_release(p);
  alloy_graph_free(g);
  /* Nothing to compute at all: the plugin is never asked. */
  g = alloy_graph_new();
  y = input(g, "y", ALLOY_I64, 3);
  CHECK_OK(alloy_graph_set_outputs(g, &y, 1));
  p = NULL;
  CHECK_OK(alloy_program_compile(rt, basic, g, &p));
  if (p) CHECK_OK(alloy_program_run(p, &in[1], 1, out, 1));
  if (p && out[0].data) CHECK(!memcmp(out[0].data, ys, sizeof ys));
  alloy_program_release(p);
  alloy_graph_free(g);
  alloy_runtime_close(rt);
}

TEST(a_partition_that_fails_to_compile_falls_back_to_the_next_backend) {
  setenv("ALLOY_TEST_FAIL", "compile", 1);
  alloy_runtime *rt = open_test_plugins();
  unsetenv("ALLOY_TEST_FAIL");
  REQUIRE(rt);
  int failing = alloy_runtime_find_backend(rt, "failing");
  REQUIRE(failing >= 0);
  alloy_graph *g = alloy_graph_new();
  alloy_value *x = input(g, "x", ALLOY_F32, 4);
  alloy_value *r = node1(g, "aten.relu.default", x, NULL);
  alloy_value *o = node1(g, "aten.neg.default", r, NULL);
  CHECK_OK(alloy_graph_set_outputs(g, &o, 1));
  alloy_mixture *m = NULL;
  alloy_program_options po = {.struct_size = ALLOY_PROGRAM_OPTIONS_STRUCT_SIZE,
                              .partition_launch_s = -1, .link_bytes_per_s = -1};
  CHECK_OK(alloy_mixture_compile(rt, &failing, 1, g, &po, &m));
  REQUIRE(m);
  float xs[4] = {-1, 2, -3, 4};
  int64_t n4 = 4;
  alloy_host_tensor in = {sizeof in, ALLOY_F32, 1, &n4, xs}, out = {.struct_size = sizeof out};
  CHECK_OK(alloy_mixture_run(m, &in, 1, &out, 1));
  if (out.data) {
    const float *v = out.data;
    CHECK(v[0] == 0 && v[1] == -2 && v[2] == 0 && v[3] == -4);
  }
  alloy_run_stats st = {.struct_size = ALLOY_RUN_STATS_STRUCT_SIZE};
  alloy_mixture_stats(m, &st);
  CHECK(st.fallbacks >= 1);
  /* Every node ran on ref, and the relu says why. */
  const alloy_graph *mg = alloy_mixture_graph(m);
  for (int i = 0; i < alloy_graph_num_nodes(mg); i++) {
    alloy_partition_info pi = {.struct_size = sizeof pi};
    alloy_mixture_partition_info(m, alloy_mixture_node_partition(m, i), &pi);
    CHECK_STR(pi.backend, "ref");
    if (!strcmp(alloy_op_name(alloy_node_op(alloy_graph_node(mg, i))), "aten.relu.default"))
      CHECK(strstr(alloy_mixture_node_reason(m, i), "failing: its partition did not compile"));
  }
  alloy_mixture_release(m);
  alloy_graph_free(g);
  alloy_runtime_close(rt);
}

/* y = mm(x, permute(w)) + b: w and b are parameters. */
static alloy_graph *linear_graph(void) {
  alloy_graph *g = alloy_graph_new();
  alloy_dim xs[2] = {alloy_dim_const(3), alloy_dim_const(4)}, ws[2] = {alloy_dim_const(5), alloy_dim_const(4)};
  alloy_dim bs[1] = {alloy_dim_const(5)};
  alloy_value_type tx = {.kind = ALLOY_VALUE_TENSOR, .dtype = ALLOY_F32, .rank = 2, .shape = xs};
  alloy_value_type tw = {.kind = ALLOY_VALUE_TENSOR, .dtype = ALLOY_F32, .rank = 2, .shape = ws};
  alloy_value_type tb = {.kind = ALLOY_VALUE_TENSOR, .dtype = ALLOY_F32, .rank = 1, .shape = bs};
  alloy_value *w, *b, *x;
  CHECK_OK(alloy_graph_add_input(g, "w", &tw, &w));
  CHECK_OK(alloy_graph_add_input(g, "b", &tb, &b));
  CHECK_OK(alloy_graph_add_input(g, "x", &tx, &x));
  CHECK_OK(alloy_graph_set_input_role(g, 0, ALLOY_INPUT_PARAMETER, "l.weight"));
  CHECK_OK(alloy_graph_set_input_role(g, 1, ALLOY_INPUT_PARAMETER, "l.bias"));
  alloy_arg perm[2] = {alloy_arg_int(1), alloy_arg_int(0)};
  alloy_arg pargs[2] = {alloy_arg_value(w), alloy_arg_list(perm, 2)};
  alloy_node *pn = NULL, *mn = NULL, *an = NULL;
  CHECK_OK(alloy_graph_add_node(g, alloy_op_find("aten.permute.default"), pargs, 2, NULL, NULL, 0, NULL, &pn));
  alloy_arg margs[2] = {alloy_arg_value(x), alloy_arg_value(alloy_node_output(pn, 0))};
  CHECK_OK(alloy_graph_add_node(g, alloy_op_find("aten.mm.default"), margs, 2, NULL, NULL, 0, NULL, &mn));
  alloy_arg aargs[2] = {alloy_arg_value(alloy_node_output(mn, 0)), alloy_arg_value(b)};
  CHECK_OK(alloy_graph_add_node(g, alloy_op_find("aten.add.Tensor"), aargs, 2, NULL, NULL, 0, NULL, &an));
  alloy_value *y = alloy_node_output(an, 0);
  CHECK_OK(alloy_graph_set_outputs(g, &y, 1));
  return g;
}

/* The inputs of linear_graph (w, b, x), their data filled from seed. */
typedef struct linear_inputs {
  float w[20], b[5], x[12];
  alloy_host_tensor in[3];
} linear_inputs;

static const int64_t lin_ws[2] = {5, 4}, lin_bs[1] = {5}, lin_xs[2] = {3, 4};

static void linear_fill(linear_inputs *l, int seed) {
  for (int i = 0; i < 20; i++) l->w[i] = (float)(i % (5 + seed)) - 2.0f - (float)seed;
  for (int i = 0; i < 5; i++) l->b[i] = 0.5f * (float)(i * (seed + 1));
  for (int i = 0; i < 12; i++) l->x[i] = (float)i / 4.0f - (float)seed;
  l->in[0] = (alloy_host_tensor){sizeof l->in[0], ALLOY_F32, 2, lin_ws, l->w};
  l->in[1] = (alloy_host_tensor){sizeof l->in[1], ALLOY_F32, 1, lin_bs, l->b};
  l->in[2] = (alloy_host_tensor){sizeof l->in[2], ALLOY_F32, 2, lin_xs, l->x};
}

TEST(weights_are_copied_once_and_folding_keeps_values) {
  alloy_runtime *rt = NULL;
  CHECK_OK(alloy_runtime_open(NULL, &rt));
  REQUIRE(rt);
  int ref = alloy_runtime_find_backend(rt, "ref");
  alloy_graph *g = linear_graph();
  linear_inputs l;
  linear_fill(&l, 2);
  alloy_host_tensor *in = l.in;
  float w2[20];
  for (int i = 0; i < 20; i++) w2[i] = -l.w[i];
  /* Unbound: resident by data pointer. */
  alloy_program *p = NULL;
  CHECK_OK(alloy_program_compile(rt, ref, g, &p));
  REQUIRE(p);
  alloy_host_tensor out = {.struct_size = sizeof out};
  alloy_run_stats s1 = {.struct_size = sizeof s1}, s2 = s1, s3 = s1;
  CHECK_OK(alloy_program_run(p, in, 3, &out, 1));
  alloy_program_stats(p, &s1);
  float want[15];
  if (out.data) memcpy(want, out.data, sizeof want);
  CHECK_OK(alloy_program_run(p, in, 3, &out, 1));
  alloy_program_stats(p, &s2);
  CHECK_INT(s1.weight_bytes_in, sizeof l.w + sizeof l.b);
  CHECK_INT(s2.weight_bytes_in, s1.weight_bytes_in);   /* the second run copied no weight */
  CHECK_INT(s2.input_bytes_in, 2 * sizeof l.x);
  CHECK_INT(s2.same_backend_round_trips, 0);
  /* Other data for a weight: copied again, and used. */
  in[0].data = w2;
  CHECK_OK(alloy_program_run(p, in, 3, &out, 1));
  alloy_program_stats(p, &s3);
  CHECK_INT(s3.weight_bytes_in, s2.weight_bytes_in + sizeof w2);
  if (out.data) CHECK(((float *)out.data)[0] != want[0] || want[0] == 0);
  in[0].data = l.w;
  alloy_program_release(p);
  /* Bound at compile: permute(w) folds, values are the same. */
  alloy_program_options po = {.struct_size = ALLOY_PROGRAM_OPTIONS_STRUCT_SIZE, .weights = in,
                              .num_weights = 3};
  p = NULL;
  CHECK_OK(alloy_program_compile_ex(rt, ref, g, &po, &p));
  REQUIRE(p);
  out = (alloy_host_tensor){.struct_size = sizeof out};
  CHECK_OK(alloy_program_run(p, in, 3, &out, 1));
  alloy_program_stats(p, &s1);
  CHECK(s1.folded_nodes >= 1);
  if (out.data) CHECK(!memcmp(out.data, want, sizeof want));
  alloy_program_release(p);
  alloy_graph_free(g);
  alloy_runtime_close(rt);
}

/* Folding runs its independent chains (one per weight, or per weights
 * combined) in shares on threads: the values are those of the unfolded
 * graph, every chain folds, and each folded value lands on its own use. */
TEST(folding_in_shares_keeps_each_chain_with_its_use) {
  alloy_runtime *rt = NULL;
  CHECK_OK(alloy_runtime_open(NULL, &rt));
  REQUIRE(rt);
  int ref = alloy_runtime_find_backend(rt, "ref");
  static const char air[] =
      "input %x: f32[3, 4]\n"
      "input %w1: f32[5, 4] parameter \"w1\"\ninput %w2: f32[6, 4] parameter \"w2\"\n"
      "input %w3: f32[7, 4] parameter \"w3\"\ninput %w4: f32[2, 4] parameter \"w4\"\n"
      "input %w5: f32[2, 4] parameter \"w5\"\n"
      "%t1 = aten.permute.default(%w1, [1, 0])\n%y1 = aten.mm.default(%x, %t1)\n"
      "%t2 = aten.permute.default(%w2, [1, 0])\n%n2 = aten.neg.default(%t2)\n%y2 = aten.mm.default(%x, %n2)\n"
      "%t3 = aten.permute.default(%w3, [1, 0])\n%y3 = aten.mm.default(%x, %t3)\n"
      "%s4 = aten.sub.Tensor(%w4, %w5)\n%t4 = aten.permute.default(%s4, [1, 0])\n%y4 = aten.mm.default(%x, %t4)\n"
      "output %y1, %y2, %y3, %y4\n";
  alloy_graph *g = NULL;
  CHECK_OK(alloy_air_parse(air, sizeof air - 1, "fold.air", &g));
  REQUIRE(g);
  static const int64_t sx[2] = {3, 4}, s1[2] = {5, 4}, s2[2] = {6, 4}, s3[2] = {7, 4}, s4[2] = {2, 4};
  static float x[12], w1[20], w2[24], w3[28], w4[8], w5[8];
  float *all[6] = {x, w1, w2, w3, w4, w5};
  const int counts[6] = {12, 20, 24, 28, 8, 8};
  for (int k = 0; k < 6; k++)
    for (int i = 0; i < counts[k]; i++) all[k][i] = (float)((i * 7 + k * 3) % 11) - 5.0f + 0.25f * (float)k;
  alloy_host_tensor in[6] = {{sizeof in[0], ALLOY_F32, 2, sx, x},  {sizeof in[0], ALLOY_F32, 2, s1, w1},
                             {sizeof in[0], ALLOY_F32, 2, s2, w2}, {sizeof in[0], ALLOY_F32, 2, s3, w3},
                             {sizeof in[0], ALLOY_F32, 2, s4, w4}, {sizeof in[0], ALLOY_F32, 2, s4, w5}};
  alloy_program *plain = NULL, *folded = NULL;
  alloy_program_options po = {.struct_size = ALLOY_PROGRAM_OPTIONS_STRUCT_SIZE, .weights = in, .num_weights = 6};
  CHECK_OK(alloy_program_compile(rt, ref, g, &plain));
  CHECK_OK(alloy_program_compile_ex(rt, ref, g, &po, &folded));
  REQUIRE(plain && folded);
  alloy_host_tensor want[4], got[4];
  for (int k = 0; k < 4; k++) want[k] = got[k] = (alloy_host_tensor){.struct_size = sizeof want[k]};
  CHECK_OK(alloy_program_run(plain, in, 6, want, 4));
  CHECK_OK(alloy_program_run(folded, in, 6, got, 4));
  static const int64_t cols[4] = {5, 6, 7, 2};
  for (int k = 0; k < 4; k++) {
    CHECK(got[k].rank == 2 && got[k].sizes[0] == 3 && got[k].sizes[1] == cols[k]);
    if (want[k].data && got[k].data) CHECK(!memcmp(want[k].data, got[k].data, sizeof(float) * 3 * (size_t)cols[k]));
  }
  alloy_run_stats st = {.struct_size = sizeof st};
  alloy_program_stats(folded, &st);
  CHECK_INT(st.folded_nodes, 6); /* t1; t2, n2; t3; s4, t4 */
  alloy_program_release(plain);
  alloy_program_release(folded);
  alloy_graph_free(g);
  alloy_runtime_close(rt);
}

TEST(an_async_run_gives_what_a_run_gives_and_refuses_a_second_one) {
  alloy_runtime *rt = NULL;
  CHECK_OK(alloy_runtime_open(NULL, &rt));
  REQUIRE(rt);
  int ref = alloy_runtime_find_backend(rt, "ref");
  alloy_graph *g = linear_graph();
  linear_inputs l;
  linear_fill(&l, 0);
  alloy_host_tensor *in = l.in;
  alloy_program *p = NULL;
  CHECK_OK(alloy_program_compile(rt, ref, g, &p));
  REQUIRE(p);
  alloy_host_tensor out = {.struct_size = sizeof out};
  float want[15];
  CHECK_OK(alloy_program_run(p, in, 3, &out, 1));
  if (out.data) memcpy(want, out.data, sizeof want);
  alloy_error *e = alloy_program_wait(p);
  CHECK(e && alloy_error_code_of(e) == ALLOY_ERR_INVALID_ARGUMENT);
  alloy_error_free(e);
  CHECK_OK(alloy_program_run_async(p, in, 3, &out, 1));
  e = alloy_program_run(p, in, 3, &out, 1);
  CHECK(e && alloy_error_code_of(e) == ALLOY_ERR_UNAVAILABLE);
  alloy_error_free(e);
  CHECK_OK(alloy_program_wait(p));
  if (out.data) CHECK(!memcmp(out.data, want, sizeof want));
  alloy_program_release(p);
  alloy_graph_free(g);
  alloy_runtime_close(rt);
}

TEST(backend_options_reach_only_backends_that_take_them) {
  alloy_runtime *rt = NULL;
  CHECK_OK(alloy_runtime_open(NULL, &rt));
  REQUIRE(rt);
  int ref = alloy_runtime_find_backend(rt, "ref");
  alloy_error *e = alloy_runtime_set_backend_option(rt, ref, "arch", "x");
  CHECK(e && alloy_error_code_of(e) == ALLOY_ERR_UNSUPPORTED && strstr(alloy_error_message(e), "arch"));
  alloy_error_free(e);
  alloy_graph *g = linear_graph();
  alloy_option opt = {"nosuch.arch", "sm_90"};
  alloy_program_options po = {.struct_size = ALLOY_PROGRAM_OPTIONS_STRUCT_SIZE,
                              .backend_options = &opt, .num_backend_options = 1};
  alloy_program *p = NULL;
  e = alloy_program_compile_ex(rt, ref, g, &po, &p);
  CHECK(e && strstr(alloy_error_message(e), "nosuch"));
  alloy_error_free(e);
  CHECK(!p);
  alloy_graph_free(g);
  alloy_runtime_close(rt);
}

/* ---- what a plugin hands back is checked before it is believed ---------- */

static alloy_graph *relu_graph(void) {
  alloy_graph *g = alloy_graph_new();
  alloy_value *x = input(g, "x", ALLOY_F32, 4);
  alloy_value *r = node1(g, "aten.relu.default", x, NULL);
  CHECK_OK(alloy_graph_set_outputs(g, &r, 1));
  return g;
}

/* The error compiling relu on the liar when $ALLOY_LIAR says what. */
static alloy_error *liar_compile_run(const char *what) {
  setenv("ALLOY_LIAR", what, 1);
  alloy_runtime *rt = open_test_plugins();
  int liar = rt ? alloy_runtime_find_backend(rt, "liar") : -1;
  alloy_error *e = liar < 0 ? alloy_error_new(ALLOY_ERR_NOT_FOUND, "no liar plugin") : NULL;
  alloy_graph *g = relu_graph();
  alloy_program *p = NULL;
  if (!e) e = alloy_program_compile(rt, liar, g, &p);
  float xs[4] = {1, -1, 2, -2};
  int64_t n4 = 4;
  alloy_host_tensor in = {sizeof in, ALLOY_F32, 1, &n4, xs}, out = {.struct_size = sizeof out};
  if (!e) e = alloy_program_run(p, &in, 1, &out, 1);
  alloy_program_release(p);
  alloy_graph_free(g);
  alloy_runtime_close(rt);
  unsetenv("ALLOY_LIAR");
  return e;
}

TEST(a_plugin_s_bogus_answers_become_errors_naming_the_entry) {
  static const struct {
    const char *lie, *want;
  } cases[] = {
      {"no_executable", "liar: compile returned success without its result"},
      {"bogus_error", "liar: claim returned an error the host did not make"},
      {"no_buffer", "liar: buffer_allocate returned success without its result"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    alloy_error *e = liar_compile_run(cases[i].lie);
    if (!e || !strstr(alloy_error_message(e), cases[i].want))
      harness_fail(__FILE__, __LINE__, "%s: got \"%s\", expected \"%s\"", cases[i].lie,
                   e ? alloy_error_message(e) : "success", cases[i].want);
    alloy_error_free(e);
  }
  /* Honest, the same plugin runs relu. */
  CHECK_OK(liar_compile_run(""));
  /* A device count of INT_MAX is believed only up to the bound. */
  setenv("ALLOY_LIAR", "many_devices", 1);
  alloy_runtime *rt = open_test_plugins();
  unsetenv("ALLOY_LIAR");
  REQUIRE(rt);
  alloy_backend_info info = {.struct_size = ALLOY_BACKEND_INFO_STRUCT_SIZE};
  alloy_runtime_backend_info(rt, alloy_runtime_find_backend(rt, "liar"), &info);
  CHECK(info.num_devices > 0 && info.num_devices <= 64);
  alloy_runtime_close(rt);
}

/* Opens a runtime over the hostile plugins' folder in a child: its exit
 * status, or 128 + the signal that killed it. */
static int open_in_child(bool only_ref) {
  pid_t pid = fork();
  if (pid == 0) {
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/../hostile_plugins", tp_test_plugins_dir());
    const char *dirs[1] = {dir}, *only[1] = {"ref"};
    alloy_runtime_options o = {.struct_size = ALLOY_RUNTIME_OPTIONS_STRUCT_SIZE, .plugin_dirs = dirs,
                               .num_plugin_dirs = 1, .no_default_paths = true,
                               .only_backends = only_ref ? only : NULL,
                               .num_only_backends = only_ref ? 1 : 0};
    alloy_runtime *rt = NULL;
    alloy_error *e = alloy_runtime_open(&o, &rt);
    int ok = !e && rt && alloy_runtime_find_backend(rt, "ref") >= 0;
    alloy_error_free(e);
    alloy_runtime_close(rt);
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

TEST(a_runtime_opens_only_the_backends_asked_for) {
  /* The plugin really kills its process when opened ... */
  CHECK_INT(open_in_child(false), 128 + SIGABRT);
  /* ... and a runtime asked for ref alone never loads it. */
  CHECK_INT(open_in_child(true), 0);
}
