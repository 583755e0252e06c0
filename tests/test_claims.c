/*
 * tests/test_claims.c: the partitioner's ABI 1.2 inputs, end to end and on
 * small graphs: claims collected from real plugins (sdk/src/claims.c), each
 * backend's launch cost, copy bandwidth and memory limit, claim groups
 * kept whole or dropped whole, and the reasons part_reasons gives for
 * every node that did not go to the first backend of the list. The
 * partitioner's own properties on random DAGs are in test_partition.c.
 *
 * The golden test plays the vendor who reported that a plugin claiming
 * everything for less than the reference backend got no node: every
 * golden model, lowered for the testing backend chooser (the reference
 * kernels, claims at half the reference backend's estimate, or at 1e-7 s a
 * node) and ref, must give chooser every node.
 */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/model.h"
#include "harness.h"
#include "sdk/src/claims.h"
#include "sdk/src/partition.h"
#include "sdk/src/runtime_internal.h"
#include "testplugin.h"

/* ---- small graphs ------------------------------------------------------------ */

/* A graph of up to 16 nodes and 4 backends, written as tables. */
typedef struct small {
  int n, nb;
  int pred_start[17], preds[64];
  bool claimed[64];
  double cost[64], bytes[16];
  part_backend_info be[4];
  part_group groups[4];
  int ngroups;
  const char *reject[64];
} small;

/* Nodes given by their producers: preds[v] lists v's producers, -1 ended. */
static void small_init(small *s, int n, int nb, const int (*preds)[4]) {
  memset(s, 0, sizeof *s);
  s->n = n, s->nb = nb;
  int ne = 0;
  for (int v = 0; v < n; v++) {
    s->pred_start[v] = ne;
    for (int k = 0; k < 4 && preds[v][k] >= 0; k++) s->preds[ne++] = preds[v][k];
    s->bytes[v] = 1000;
  }
  s->pred_start[n] = ne;
}

static void claim(small *s, int v, int b, double cost) {
  s->claimed[v * s->nb + b] = true;
  s->cost[v * s->nb + b] = cost;
}

static part_graph view(small *s) {
  return (part_graph){.nnodes = s->n, .nbackends = s->nb, .pred_start = s->pred_start,
                      .preds = s->preds, .claimed = s->claimed, .cost = s->cost, .bytes = s->bytes,
                      .backend = s->be, .groups = s->ngroups ? s->groups : NULL,
                      .ngroups = s->ngroups, .reject = s->reject};
}

static int backend_of(const part_result *r, int v) { return r->part_backend[r->node_part[v]]; }

/* a -> b -> c, each value 1 MB: backend 0 (a device) runs b in 1 us, the
 * host-visible fallback 1 runs everything, b in 20 us. */
static void chain(small *s, double link) {
  static const int preds[3][4] = {{-1}, {0, -1}, {1, -1}};
  small_init(s, 3, 2, preds);
  for (int v = 0; v < 3; v++) s->bytes[v] = 1 << 20, claim(s, v, 1, 1e-6);
  claim(s, 1, 0, 1e-6);
  s->cost[1 * 2 + 1] = 20e-6;
  s->be[0] = (part_backend_info){.launch_s = 1e-6, .bytes_per_s = link};
  s->be[1] = (part_backend_info){.launch_s = 1e-6, .bytes_per_s = INFINITY};
}

TEST(claims_a_slow_link_keeps_nodes_on_the_fallback) {
  small s;
  part_result r;
  part_graph g;
  part_cost_model cm = part_default_cost_model();
  /* At 1 MB/s the two copies b needs on backend 0 cost 2 s: b stays home. */
  chain(&s, 1e6);
  g = view(&s);
  CHECK_OK(part_compute(&g, &cm, &r));
  CHECK_INT(r.npart, 1);
  CHECK_INT(backend_of(&r, 1), 1);
  part_result_free(&r);
  /* At 1 TB/s they cost 2 us, and the 19 us saved pay for them and two
   * launches of 1 us. */
  chain(&s, 1e12);
  g = view(&s);
  CHECK_OK(part_compute(&g, &cm, &r));
  CHECK_INT(r.npart, 3);
  CHECK_INT(backend_of(&r, 1), 0);
  part_result_free(&r);
  /* The options override what backends declare: free copies and launches
   * send b to backend 0 over the slow link; a 1 MB/s link for all keeps
   * it home over the fast one. */
  chain(&s, 1e6);
  g = view(&s);
  cm = part_options_cost_model(-1, -1);
  CHECK_OK(part_compute(&g, &cm, &r));
  CHECK_INT(backend_of(&r, 1), 0);
  part_result_free(&r);
  chain(&s, 1e12);
  g = view(&s);
  cm = part_options_cost_model(0, 1e6);
  CHECK_OK(part_compute(&g, &cm, &r));
  CHECK_INT(backend_of(&r, 1), 1);
  part_result_free(&r);
  /* Both sides host-visible: crossing is free, b goes where it is cheap. */
  chain(&s, INFINITY);
  g = view(&s);
  cm = part_default_cost_model();
  CHECK_OK(part_compute(&g, &cm, &r));
  CHECK_INT(backend_of(&r, 1), 0);
  CHECK(r.cost < 10e-6);
  part_result_free(&r);
}

TEST(claims_a_dear_launch_keeps_an_island_home) {
  /* Backend 0 saves 19 us on b, over a free link, but launching one of
   * its partitions costs 1 ms. */
  small s;
  part_result r;
  chain(&s, INFINITY);
  s.be[0].launch_s = 1e-3;
  part_graph g = view(&s);
  part_cost_model cm = part_default_cost_model();
  CHECK_OK(part_compute(&g, &cm, &r));
  CHECK_INT(r.npart, 1);
  CHECK_INT(backend_of(&r, 1), 1);
  part_result_free(&r);
  /* Unknown parameters take the model's defaults: 10 us launches. */
  chain(&s, INFINITY);
  s.be[0].launch_s = 0;
  g = view(&s);
  CHECK_OK(part_compute(&g, &cm, &r));
  CHECK_INT(backend_of(&r, 1), 0);
  CHECK(fabs(r.cost - (1e-6 * 3 + 10e-6 + 2e-6)) < 1e-12);
  part_result_free(&r);
}

/* The most bytes alive at once on backend b, a value living from its
 * producer to its last reader (the partitioner's own measure). */
static double peak_on(const small *s, const part_result *r, int b) {
  double live = 0, peak = 0;
  int last[16];
  for (int v = 0; v < s->n; v++) last[v] = v;
  for (int v = 0; v < s->n; v++)
    for (int e = s->pred_start[v]; e < s->pred_start[v + 1]; e++) last[s->preds[e]] = v;
  for (int v = 0; v < s->n; v++) {
    if (backend_of(r, v) == b) live += s->bytes[v];
    peak = live > peak ? live : peak;
    for (int p = 0; p <= v; p++)
      if (last[p] == v && backend_of(r, p) == b) live -= s->bytes[p];
  }
  return peak;
}

TEST(claims_a_memory_limit_moves_nodes_off_until_they_fit) {
  /* A chain of ten nodes of 1000 bytes each, node 0 also read by the last:
   * backend 0 claims everything cheaper. Values alive at once: node 0's
   * and two of the chain's, 3000 bytes, though they add up to 10,000. */
  static int preds[10][4];
  for (int v = 0; v < 10; v++) preds[v][0] = v - 1, preds[v][1] = -1;
  preds[9][1] = 0, preds[9][2] = -1;
  small s;
  small_init(&s, 10, 2, (const int(*)[4])preds);
  for (int v = 0; v < 10; v++) claim(&s, v, 0, 1e-6), claim(&s, v, 1, 2e-6);
  s.be[0].memory_bytes = 3000;
  part_graph g = view(&s);
  part_cost_model cm = part_default_cost_model();
  part_result r;
  CHECK_OK(part_compute(&g, &cm, &r));
  for (int v = 0; v < 10; v++) CHECK_INT(backend_of(&r, v), 0);
  part_result_free(&r);
  /* Under 2500 bytes something must go; what stays fits. (Free launches
   * and copies, so that only memory moves nodes.) */
  s.be[0].memory_bytes = 2500;
  g = view(&s);
  cm = part_options_cost_model(-1, -1);
  CHECK_OK(part_compute(&g, &cm, &r));
  int off = 0, on0 = 0;
  for (int v = 0; v < 10; v++) {
    on0 += backend_of(&r, v) == 0;
    off += r.off[v * 2 + 0] == PART_OFF_MEMORY;
  }
  CHECK(peak_on(&s, &r, 0) <= 2500);
  CHECK(off >= 1 && on0 == 6);
  const char *names[2] = {"npu", "ref"};
  char **why = part_reasons(&g, &cm, &r, names);
  REQUIRE(why);
  bool said = false;
  for (int v = 0; v < 10; v++)
    if (r.off[v * 2] == PART_OFF_MEMORY && backend_of(&r, v) == 1)
      said = why[v] && !strcmp(why[v], "npu: over its memory limit (2500 bytes)");
  CHECK(said);
  part_reasons_free(why, 10);
  part_result_free(&r);
  /* A node bigger than the limit by itself never goes there. */
  s.be[0].memory_bytes = 2500;
  s.bytes[4] = 4000;
  g = view(&s);
  CHECK_OK(part_compute(&g, &cm, &r));
  CHECK_INT(backend_of(&r, 4), 1);
  CHECK(peak_on(&s, &r, 0) <= 2500);
  part_result_free(&r);
}

/* 0 -> 1 -> 2 -> 3, three backends. */
static void four(small *s) {
  static const int preds[4][4] = {{-1}, {0, -1}, {1, -1}, {2, -1}};
  small_init(s, 4, 3, preds);
  for (int v = 0; v < 4; v++) claim(s, v, 2, 5e-6);
}

static void group(small *s, int b, const int *nodes, int n, double cost) {
  s->groups[s->ngroups++] = (part_group){.backend = b, .n = n, .nodes = nodes, .cost = cost};
}

TEST(claims_a_group_runs_whole_in_one_partition_at_its_cost) {
  static const int g12[2] = {1, 2};
  small s;
  four(&s);
  group(&s, 1, g12, 2, 2e-6);
  part_graph g = view(&s);
  part_cost_model cm = part_options_cost_model(-1, -1);
  part_result r;
  CHECK_OK(part_compute(&g, &cm, &r));
  CHECK_INT(backend_of(&r, 1), 1);
  CHECK_INT(backend_of(&r, 2), 1);
  CHECK_INT(r.node_part[1], r.node_part[2]);
  CHECK_INT(r.group_fate[0], PART_GROUP_KEPT);
  /* The group's cost replaces its nodes' (which backend 1 never gave). */
  CHECK(fabs(r.node_cost[1] + r.node_cost[2] - 2e-6) < 1e-15);
  CHECK(fabs(r.cost - (5e-6 * 2 + 2e-6)) < 1e-15);
  part_result_free(&r);
}

TEST(claims_a_group_is_all_or_nothing) {
  /* Backend 0, first, claims node 1 alone; backend 1 claims {1, 2} as a
   * group. Node 1 goes to 0, so the group cannot be whole: node 2, which
   * backend 1 claims only in the group, goes to the fallback. */
  static const int g12[2] = {1, 2};
  small s;
  four(&s);
  claim(&s, 1, 0, 1e-6);
  group(&s, 1, g12, 2, 1e-7);
  part_graph g = view(&s);
  part_cost_model cm = part_options_cost_model(-1, -1);
  part_result r;
  CHECK_OK(part_compute(&g, &cm, &r));
  CHECK_INT(backend_of(&r, 1), 0);
  CHECK_INT(backend_of(&r, 2), 2);
  CHECK_INT(r.group_fate[0], PART_GROUP_LOST);
  const char *names[3] = {"devsim", "npu", "ref"};
  char **why = part_reasons(&g, &cm, &r, names);
  REQUIRE(why);
  CHECK(why[1] == NULL);
  CHECK_STR(why[2], "devsim: not claimed (no reason given)\nnpu: part of a group that went elsewhere");
  part_reasons_free(why, 4);
  part_result_free(&r);
  /* A group too dear moves off whole: nothing of it stays on backend 1,
   * not even a node that backend 1 also claims on its own (an island
   * moves whole). */
  static const int g123[3] = {1, 2, 3};
  four(&s);
  group(&s, 1, g123, 3, 1.0);
  claim(&s, 3, 1, 1e-6);
  g = view(&s);
  cm = part_default_cost_model();
  CHECK_OK(part_compute(&g, &cm, &r));
  for (int v = 0; v < 4; v++) CHECK_INT(backend_of(&r, v), 2);
  CHECK_INT(r.group_fate[0], PART_GROUP_LOST);
  part_result_free(&r);
}

TEST(claims_a_group_no_convex_partition_holds_is_dropped) {
  /* x -> y -> z and x -> z: backend 0 claims {x, z} as a group, not y.
   * With y on backend 1, z needs y's partition before it and x's after
   * it: no partition holds x and z without y. The group is dropped, and
   * its nodes run where they are claimed on their own. */
  static const int preds[3][4] = {{-1}, {0, -1}, {0, 1, -1}};
  static const int xz[2] = {0, 2};
  small s;
  small_init(&s, 3, 2, preds);
  for (int v = 0; v < 3; v++) claim(&s, v, 1, 5e-6);
  group(&s, 0, xz, 2, 1e-9);
  part_graph g = view(&s);
  part_cost_model cm = part_options_cost_model(-1, -1);
  part_result r;
  CHECK_OK(part_compute(&g, &cm, &r));
  for (int v = 0; v < 3; v++) CHECK_INT(backend_of(&r, v), 1);
  CHECK_INT(r.group_fate[0], PART_GROUP_SPLIT);
  const char *names[2] = {"devsim", "ref"};
  char **why = part_reasons(&g, &cm, &r, names);
  REQUIRE(why);
  CHECK_STR(why[0], "devsim: part of a group that no convex partition could hold");
  part_reasons_free(why, 3);
  part_result_free(&r);
  /* x also claimed alone by backend 0 stays there when the group goes. */
  claim(&s, 0, 0, 1e-9);
  g = view(&s);
  CHECK_OK(part_compute(&g, &cm, &r));
  CHECK_INT(backend_of(&r, 0), 0);
  CHECK_INT(backend_of(&r, 2), 1);
  CHECK(r.node_part[0] < r.node_part[1] && r.node_part[1] == r.node_part[2]);
  part_result_free(&r);
  /* Without the edge x -> y the group fits one partition, even with an
   * unrelated node of backend 1 between its nodes. */
  static const int apart[3][4] = {{-1}, {-1}, {0, -1}};
  small_init(&s, 3, 2, apart);
  for (int v = 0; v < 3; v++) claim(&s, v, 1, 5e-6);
  group(&s, 0, xz, 2, 1e-9);
  g = view(&s);
  CHECK_OK(part_compute(&g, &cm, &r));
  CHECK_INT(r.group_fate[0], PART_GROUP_KEPT);
  CHECK_INT(r.node_part[0], r.node_part[2]);
  part_result_free(&r);
}

TEST(claims_reasons_name_every_backend_passed_over) {
  /* Four independent nodes, three backends. */
  static const int preds[4][4] = {{-1}, {-1}, {-1}, {-1}};
  small s;
  small_init(&s, 4, 3, preds);
  for (int v = 0; v < 4; v++) claim(&s, v, 2, 1e-6);
  claim(&s, 0, 0, 1e-6);   /* node 0 on the first backend: no reason */
  claim(&s, 1, 0, 50e-6);  /* node 1: dearer on devsim than on ref   */
  s.reject[2 * 3 + 0] = "f64 is not supported";
  claim(&s, 3, 1, 1e-6);   /* node 3 goes to npu                     */
  part_graph g = view(&s);
  /* Free launches: otherwise ref alone (one launch) would beat them all. */
  part_cost_model cm = part_options_cost_model(-1, 0);
  part_result r;
  CHECK_OK(part_compute(&g, &cm, &r));
  const char *names[3] = {"devsim", "npu", "ref"};
  char **why = part_reasons(&g, &cm, &r, names);
  REQUIRE(why);
  CHECK(why[0] == NULL);
  CHECK_STR(why[1], "devsim: would cost 5.0e-05 s plus 0.0e+00 s of copies, against 1.0e-06 s where it runs\n"
                    "npu: not claimed (no reason given)");
  CHECK_STR(why[2], "devsim: not claimed (f64 is not supported)\nnpu: not claimed (no reason given)");
  CHECK(why[3] && !strncmp(why[3], "devsim: not claimed", 19) && !strchr(why[3], '\n'));
  part_reasons_free(why, 4);
  part_result_free(&r);
  /* A claim the host took back says why, and copies and launches count:
   * node 1 reads node 0 (1000 bytes at the default 10 GB/s). */
  static const int chain2[2][4] = {{-1}, {0, -1}};
  small_init(&s, 2, 2, chain2);
  for (int v = 0; v < 2; v++) claim(&s, v, 1, 1e-6);
  claim(&s, 1, 0, 2e-6);
  const char *taken[4] = {"its partition did not compile there (no)", NULL, NULL, NULL};
  claim(&s, 0, 0, 1e-6);
  g = view(&s);
  g.taken = taken;
  cm = part_default_cost_model();
  s.claimed[0] = false; /* taken back: no longer claimed */
  CHECK_OK(part_compute(&g, &cm, &r));
  CHECK_INT(backend_of(&r, 0), 1);
  CHECK_INT(backend_of(&r, 1), 1);
  const char *two[2] = {"devsim", "ref"};
  why = part_reasons(&g, &cm, &r, two);
  REQUIRE(why);
  CHECK_STR(why[0], "devsim: its partition did not compile there (no)");
  CHECK_STR(why[1], "devsim: would cost 2.0e-06 s plus 1.0e-07 s of copies and 1.0e-05 s of "
                    "launch, against 1.0e-06 s where it runs");
  part_reasons_free(why, 2);
  part_result_free(&r);
}

TEST(claims_take_back_drops_the_claim_and_its_groups) {
  /* A part_graph owned as claims_collect leaves it, so claims_free frees it. */
  part_graph pg = {.nnodes = 2, .nbackends = 2};
  int *start = calloc(3, sizeof *start);
  bool *claimed = calloc(4, sizeof *claimed);
  part_group *groups = calloc(2, sizeof *groups);
  int *nodes = malloc(2 * sizeof *nodes), *other = malloc(sizeof *other);
  REQUIRE(start && claimed && groups && nodes && other);
  claimed[0] = claimed[1] = claimed[3] = true;
  nodes[0] = 0, nodes[1] = 1, other[0] = 1;
  groups[0] = (part_group){.backend = 0, .n = 2, .nodes = nodes};
  groups[1] = (part_group){.backend = 1, .n = 1, .nodes = other};
  pg.pred_start = start, pg.claimed = claimed, pg.groups = groups, pg.ngroups = 2;
  CHECK(claims_take_back(&pg, 1, 0, "did not compile"));
  CHECK(!pg.claimed[1 * 2 + 0] && pg.claimed[1 * 2 + 1]);
  CHECK_INT(pg.ngroups, 1);
  CHECK_INT(pg.groups[0].backend, 1);
  CHECK_STR(pg.taken[1 * 2 + 0], "did not compile");
  CHECK(claims_take_back(&pg, 1, 0, "second"));
  CHECK_STR(pg.taken[1 * 2 + 0], "did not compile");
  CHECK(claims_any(&pg, 1));
  CHECK(claims_take_back(&pg, 1, 1, NULL));
  CHECK(!claims_any(&pg, 1));
  CHECK(claims_any(&pg, 0));
  claims_free(&pg);
}

/* ---- real plugins ---------------------------------------------------------------- */

static alloy_runtime *open_with_chooser(int *chooser, int *ref) {
  const char *dirs[1] = {tp_test_plugins_dir()};
  alloy_runtime_options o = {.struct_size = sizeof o, .plugin_dirs = dirs, .num_plugin_dirs = 1,
                             .no_default_paths = true};
  alloy_runtime *rt = NULL;
  CHECK_OK(alloy_runtime_open(&o, &rt));
  *chooser = rt ? alloy_runtime_find_backend(rt, "chooser") : -1;
  *ref = rt ? alloy_runtime_find_backend(rt, "ref") : -1;
  if (rt && *chooser < 0) harness_fail(__FILE__, __LINE__, "no backend chooser in %s", dirs[0]);
  return rt;
}

/* Lowers g for backends[0..2), collects their claims and partitions them
 * with the default model; returns how many nodes went to `want` (-1 on an
 * error, reported), and the reason of the first node that did not in why. */
static int nodes_on(alloy_runtime *rt, const int *backends, const alloy_graph *g, int want,
                    int *total, char *why, size_t cap) {
  alloy_loaded *rows[2] = {&rt->backends[backends[0]], &rt->backends[backends[1]]};
  alloy_graph *low = NULL;
  part_graph pg = {0};
  part_result r = {0};
  part_cost_model cm = part_options_cost_model(0, 0);
  alloy_error *e = program_lower(rows, 2, g, ALLOY_DECOMPOSE_AUTO, &low);
  if (!e) e = claims_collect(rt, backends, 2, low, &pg);
  if (!e) e = part_compute(&pg, &cm, &r);
  int on = -1;
  if (e) {
    snprintf(why, cap, "%s", alloy_error_message(e));
    alloy_error_free(e);
  } else {
    const char *names[2] = {rows[0]->name, rows[1]->name};
    char **reasons = part_reasons(&pg, &cm, &r, names);
    on = 0;
    why[0] = '\0';
    for (int v = 0; v < pg.nnodes; v++) {
      bool there = backends[r.part_backend[r.node_part[v]]] == want;
      on += there;
      if (!there && !why[0])
        snprintf(why, cap, "node %d (%s): %s", v, alloy_op_name(alloy_node_op(alloy_graph_node(low, v))),
                 reasons && reasons[v] ? reasons[v] : "(first backend)");
    }
    *total = pg.nnodes;
    part_reasons_free(reasons, pg.nnodes);
  }
  part_result_free(&r);
  claims_free(&pg);
  alloy_graph_free(low);
  return on;
}

static int name_cmp(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every golden model to a plugin cheaper than ref: at half ref's estimate
 * and at the vendor's 1e-7 s a node, listed first or after ref. With ref
 * first, a node neither backend estimates (a symbolic
 * size) costs the same on both and stays with the priority choice, so
 * that order is checked on the models of static sizes. */
static void golden_models_go_to_a_cheaper_plugin(void) {
  char dir[4200];
  snprintf(dir, sizeof dir, "%s/models", harness_golden_dir());
  DIR *d = opendir(dir);
  REQUIRE(d);
  char *files[64];
  int nfiles = 0;
  for (struct dirent *de; (de = readdir(d)) && nfiles < 64;) {
    size_t len = strlen(de->d_name);
    if (len > 4 && !strcmp(de->d_name + len - 4, ".pt2")) files[nfiles++] = strdup(de->d_name);
  }
  closedir(d);
  qsort(files, (size_t)nfiles, sizeof *files, name_cmp);
  int chooser, ref;
  alloy_runtime *rt = open_with_chooser(&chooser, &ref);
  REQUIRE(rt && chooser >= 0 && ref >= 0);
  static const struct {
    const char *var, *value;
    bool ref_first;
  } cases[] = {{"ALLOY_CHOOSER_SCALE", "0.5", false},
               {"ALLOY_CHOOSER_SCALE", "0.5", true},
               {"ALLOY_CHOOSER_COST", "1e-7", false},
               {"ALLOY_CHOOSER_COST", "1e-7", true}};
  unsetenv("ALLOY_CHOOSER");
  int checked = 0;
  for (int f = 0; f < nfiles; f++) {
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, files[f]);
    alloy_model *m = NULL;
    CHECK_OK(alloy_model_load(path, &m));
    for (size_t c = 0; m && c < sizeof cases / sizeof *cases; c++) {
      if (cases[c].ref_first && strstr(files[f], ".dyn.")) continue;
      setenv(cases[c].var, cases[c].value, 1);
      int backends[2] = {chooser, ref}, total = 0;
      if (cases[c].ref_first) backends[0] = ref, backends[1] = chooser;
      char why[1024];
      int on = nodes_on(rt, backends, alloy_model_graph(m), chooser, &total, why, sizeof why);
      unsetenv(cases[c].var);
      checked++;
      if (on != total)
        harness_fail(__FILE__, __LINE__, "%s, %s=%s%s: %d of %d nodes on chooser; %s", files[f],
                     cases[c].var, cases[c].value, cases[c].ref_first ? ", ref first" : "", on,
                     total, why);
    }
    alloy_model_free(m);
    free(files[f]);
  }
  CHECK(checked >= 10);
  alloy_runtime_close(rt);
}

/* Registered only where ../shared/golden is: without it the test is
 * neither passed nor failed, and says so. */
__attribute__((constructor)) static void golden_models_register(void) {
  if (harness_golden_dir())
    harness_register("claims_golden_models_go_to_a_plugin_cheaper_than_ref", __FILE__,
                     golden_models_go_to_a_cheaper_plugin);
  else
    printf("skipped: claims_golden_models_go_to_a_plugin_cheaper_than_ref: ../shared/golden missing\n");
}

TEST(claims_collect_reads_costs_reasons_and_device_parameters) {
  /* chooser with half ref's cost on one op only: the reasons come from its
   * claims_reject, the parameters from the helper's device_info. */
  int chooser, ref;
  alloy_runtime *rt = open_with_chooser(&chooser, &ref);
  REQUIRE(rt && chooser >= 0 && ref >= 0);
  alloy_graph *g = alloy_graph_new();
  alloy_dim shape[1] = {alloy_dim_const(64)};
  alloy_value_type t = {.kind = ALLOY_VALUE_TENSOR, .dtype = ALLOY_F32, .rank = 1, .shape = shape};
  alloy_value *x = NULL;
  CHECK_OK(alloy_graph_add_input(g, "x", &t, &x));
  alloy_node *a = NULL, *b = NULL;
  alloy_arg ax = alloy_arg_value(x);
  CHECK_OK(alloy_graph_add_node(g, alloy_op_find("aten.neg.default"), &ax, 1, NULL, NULL, 0, NULL, &a));
  REQUIRE(a);
  alloy_arg aa = alloy_arg_value(alloy_node_output(a, 0));
  CHECK_OK(alloy_graph_add_node(g, alloy_op_find("aten.relu.default"), &aa, 1, NULL, NULL, 0, NULL, &b));
  REQUIRE(b);
  alloy_value *out = alloy_node_output(b, 0);
  CHECK_OK(alloy_graph_set_outputs(g, &out, 1));
  setenv("ALLOY_CHOOSER", "ops=aten.relu.*", 1);
  setenv("ALLOY_CHOOSER_SCALE", "0.5", 1);
  int backends[2] = {chooser, ref};
  part_graph pg = {0};
  CHECK_OK(claims_collect(rt, backends, 2, g, &pg));
  unsetenv("ALLOY_CHOOSER");
  unsetenv("ALLOY_CHOOSER_SCALE");
  REQUIRE(pg.nnodes == 2 && pg.backend);
  CHECK(!pg.claimed[0 * 2 + 0] && pg.claimed[0 * 2 + 1] && pg.claimed[1 * 2 + 0]);
  CHECK(fabs(pg.cost[1 * 2 + 0] - 0.5 * pg.cost[1 * 2 + 1]) < 1e-18 && pg.cost[1 * 2 + 1] > 0);
  CHECK(pg.reject && pg.reject[0] && strstr(pg.reject[0], "$ALLOY_CHOOSER"));
  CHECK(pg.bytes[0] == 256);
  /* The kernel-table helper's device: host-visible, with a launch cost. */
  for (int k = 0; k < 2; k++) {
    CHECK(isinf(pg.backend[k].bytes_per_s));
    CHECK(pg.backend[k].launch_s > 0);
    CHECK(pg.backend[k].memory_bytes > 0);
  }
  claims_free(&pg);
  alloy_graph_free(g);
  alloy_runtime_close(rt);
}
