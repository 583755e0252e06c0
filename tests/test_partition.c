/*
 * tests/test_partition.c: the partitioner's core (sdk/src/partition.c) on
 * 10,000 random DAGs with random claims, costs and sizes: every node in
 * exactly one partition of a backend that claims it, every partition
 * convex, the partition graph acyclic (numbers increase along edges), the
 * result deterministic, and never costlier in the model than the plain
 * priority choice; the same with what ABI 1.2 adds (per-backend launch,
 * bandwidth and memory limit, claim groups); plus small worked cases (an
 * island absorbed, a ping-pong chain kept apart when transfers are cheap,
 * an unclaimed node). tests/test_claims.c has the 1.2 worked cases.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sdk/src/partition.h"
#include "tests/harness.h"

/* A deterministic generator (64-bit LCG, high bits). */
static uint64_t rng_state;
static unsigned rnd(unsigned n) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return n ? (unsigned)((rng_state >> 33) % n) : 0;
}

typedef struct dag {
  int n, nb;
  int pred_start[65], preds[64 * 4];
  bool claimed[64 * 4];
  double cost[64 * 4], bytes[64];
} dag;

static void random_dag(dag *d) {
  d->n = 1 + (int)rnd(40);
  d->nb = 1 + (int)rnd(4);
  int ne = 0;
  for (int v = 0; v < d->n; v++) {
    d->pred_start[v] = ne;
    int k = v ? (int)rnd(4) : 0;
    for (int j = 0; j < k; j++) d->preds[ne++] = (int)rnd((unsigned)v);
    for (int b = 0; b < d->nb; b++) {
      /* The last backend (the reference) claims everything. */
      d->claimed[v * d->nb + b] = b == d->nb - 1 || rnd(3) != 0;
      d->cost[v * d->nb + b] = rnd(4) ? (1 + rnd(100)) * 1e-6 : 0;
    }
    d->bytes[v] = (double)(rnd(5) ? 4 << rnd(16) : 0);
  }
  d->pred_start[d->n] = ne;
}

static part_graph view_of(const dag *d) {
  return (part_graph){.nnodes = d->n, .nbackends = d->nb, .pred_start = d->pred_start,
                      .preds = d->preds, .claimed = d->claimed, .cost = d->cost, .bytes = d->bytes};
}

/* No path leaves partition p and comes back: from every node outside p
 * that a node of p feeds, no node of p is reachable. */
static bool convex(const dag *d, const int *part, int p) {
  bool reach[64] = {false};
  /* Nodes are topological: propagate "reached from p through outside". */
  for (int v = 0; v < d->n; v++) {
    for (int e = d->pred_start[v]; e < d->pred_start[v + 1]; e++) {
      int u = d->preds[e];
      bool from = (part[u] == p) || reach[u];
      if (from && part[v] != p) reach[v] = true;
      if (reach[u] && part[v] == p) return false;
    }
  }
  return true;
}

TEST(partition_holds_its_properties_on_10000_random_dags) {
  rng_state = 20261122;
  part_cost_model cm = part_default_cost_model();
  int violations = 0, improved = 0;
  for (int t = 0; t < 10000; t++) {
    dag d;
    random_dag(&d);
    /* Cheap launches and links sometimes, dear ones other times. */
    cm.launch = (double)(1 + rnd(100)) * 1e-6;
    cm.bandwidth = (double)(1 + rnd(100)) * 1e8;
    part_graph g = view_of(&d);
    part_result r, again;
    alloy_error *e = part_compute(&g, &cm, &r);
    if (e) {
      harness_fail(__FILE__, __LINE__, "dag %d: %s", t, alloy_error_message(e));
      alloy_error_free(e);
      continue;
    }
    bool ok = r.npart >= 1 && r.npart <= d.n;
    for (int v = 0; v < d.n && ok; v++) {
      int p = r.node_part[v];
      ok = p >= 0 && p < r.npart && d.claimed[v * d.nb + r.part_backend[p]];
      for (int k = d.pred_start[v]; k < d.pred_start[v + 1] && ok; k++)
        ok = r.node_part[d.preds[k]] <= p; /* the partition graph is acyclic */
    }
    for (int p = 0; p < r.npart && ok; p++) ok = convex(&d, r.node_part, p);
    /* Deterministic. */
    CHECK_OK(part_compute(&g, &cm, &again));
    ok = ok && again.npart == r.npart &&
         !memcmp(again.node_part, r.node_part, sizeof *r.node_part * (size_t)d.n);
    /* Never worse than the priority choice alone. */
    int first[64], solo_part[64], solo_backend[64], nsolo = 0, newest[4] = {-1, -1, -1, -1};
    for (int v = 0; v < d.n; v++) {
      first[v] = 0;
      while (!d.claimed[v * d.nb + first[v]]) first[v]++;
      int p = newest[first[v]];
      bool join = p >= 0;
      for (int k = d.pred_start[v]; k < d.pred_start[v + 1] && join; k++)
        join = solo_part[d.preds[k]] <= p;
      if (!join) p = newest[first[v]] = nsolo, solo_backend[nsolo++] = first[v];
      solo_part[v] = p;
    }
    double naive = part_cost(&g, &cm, solo_part, solo_backend, nsolo);
    bool cheaper = r.cost <= naive * (1 + 1e-9) + 1e-15;
    improved += r.cost < naive * (1 - 1e-9);
    if ((!ok || !cheaper) && violations++ < 5)
      harness_fail(__FILE__, __LINE__, "dag %d: %s (cost %g, priority choice %g, %d partitions, %d nodes)",
                   t, ok ? "costlier than the priority choice" : "a structural property fails", r.cost, naive, r.npart, d.n);
    part_result_free(&r);
    part_result_free(&again);
  }
  CHECK_INT(violations, 0);
  /* The search must matter on some of them. */
  CHECK(improved > 100);
}

/* a -> b -> c where backend 0 (first in priority) claims a and c but not b:
 * the priority choice splits the chain three ways; moving a and c to
 * backend 1, which claims everything, leaves one partition. */
TEST(partition_absorbs_islands_into_their_neighbour) {
  int pred_start[4] = {0, 0, 1, 2}, preds[2] = {0, 1};
  bool claimed[6] = {true, true, false, true, true, true};
  double bytes[3] = {4096, 4096, 4096};
  part_graph g = {.nnodes = 3, .nbackends = 2, .pred_start = pred_start, .preds = preds,
                  .claimed = claimed, .bytes = bytes};
  part_cost_model cm = part_default_cost_model();
  part_result r;
  CHECK_OK(part_compute(&g, &cm, &r));
  CHECK_INT(r.npart, 1);
  CHECK_INT(r.part_backend[0], 1);
  CHECK_INT(r.moved, 2);
  part_result_free(&r);
  /* When backend 0 claims b as well, priority already gives one partition. */
  bool all[6] = {true, true, true, true, true, true};
  g.claimed = all;
  CHECK_OK(part_compute(&g, &cm, &r));
  CHECK_INT(r.npart, 1);
  CHECK_INT(r.part_backend[0], 0);
  CHECK_INT(r.moved, 0);
  part_result_free(&r);
}

TEST(partition_moves_an_island_when_it_pays) {
  /* a -> b -> c: a and c only on backend 1, b first on backend 0 (cheap
   * there) but also on 1. Moving b to 1 saves two transfers of 1 MB and
   * two launches; it costs 5 us more to compute. */
  int pred_start[4] = {0, 0, 1, 2}, preds[2] = {0, 1};
  bool claimed[6] = {false, true, true, true, false, true};
  double cost[6] = {0, 1e-6, 1e-6, 6e-6, 0, 1e-6};
  double bytes[3] = {1 << 20, 1 << 20, 1 << 20};
  part_graph g = {.nnodes = 3, .nbackends = 2, .pred_start = pred_start, .preds = preds,
                  .claimed = claimed, .cost = cost, .bytes = bytes};
  part_cost_model cm = part_default_cost_model();
  part_result r;
  CHECK_OK(part_compute(&g, &cm, &r));
  CHECK_INT(r.npart, 1);
  CHECK_INT(r.part_backend[0], 1);
  CHECK_INT(r.moved, 1);
  part_result_free(&r);
  /* With free transfers and launches, b stays where it is cheap. */
  cm.launch = 0;
  cm.bandwidth = 1e30;
  CHECK_OK(part_compute(&g, &cm, &r));
  CHECK_INT(r.npart, 3);
  CHECK_INT(r.moved, 0);
  part_result_free(&r);
}

TEST(partition_names_an_unclaimed_node) {
  int pred_start[3] = {0, 0, 1}, preds[1] = {0};
  bool claimed[2] = {true, false};
  double bytes[2] = {4, 4};
  part_graph g = {.nnodes = 2, .nbackends = 1, .pred_start = pred_start, .preds = preds,
                  .claimed = claimed, .bytes = bytes};
  part_cost_model cm = part_default_cost_model();
  part_result r;
  alloy_error *e = part_compute(&g, &cm, &r);
  CHECK(e && strstr(alloy_error_message(e), "node 1 is claimed by no backend"));
  alloy_error_free(e);
}

/* The most bytes alive at once on backend b (a value lives from its
 * producer to its last reader), the partitioner's measure for memory. */
static double peak_bytes(const dag *d, const int *node_backend, int b) {
  int last[64];
  double live = 0, peak = 0;
  for (int v = 0; v < d->n; v++) last[v] = v;
  for (int v = 0; v < d->n; v++)
    for (int k = d->pred_start[v]; k < d->pred_start[v + 1]; k++) last[d->preds[k]] = v;
  for (int v = 0; v < d->n; v++) {
    if (node_backend[v] == b) live += d->bytes[v];
    if (live > peak) peak = live;
    for (int p = 0; p <= v; p++)
      if (last[p] == v && node_backend[p] == b) live -= d->bytes[p];
  }
  return peak;
}

/* The same random DAGs with what ABI 1.2 adds: each backend's own launch
 * cost, bandwidth (host-visible sometimes) and memory limit (the fallback,
 * last, has none), and claim groups. Every node runs where it is claimed
 * on its own or as part of a group kept whole in one partition; every
 * limited backend stays under its limit; partitions stay convex and
 * numbered along edges; the result is deterministic and its cost is what
 * part_cost says. */
TEST(partition_keeps_groups_whole_and_backends_in_memory_on_10000_random_dags) {
  rng_state = 77;
  int violations = 0, kept = 0, dropped = 0, limited = 0;
  for (int t = 0; t < 10000; t++) {
    dag d;
    random_dag(&d);
    part_backend_info be[4] = {{0}};
    double total = 0;
    for (int v = 0; v < d.n; v++) total += d.bytes[v];
    for (int b = 0; b < d.nb; b++) {
      be[b].launch_s = rnd(4) ? (double)rnd(20) * 1e-6 : 0;
      be[b].bytes_per_s = rnd(3) ? (double)(1 + rnd(100)) * 1e8 : (rnd(2) ? INFINITY : 0);
      if (b < d.nb - 1 && rnd(3) == 0) be[b].memory_bytes = total * (double)(1 + rnd(60)) / 100, limited++;
    }
    part_group groups[3];
    int members[3][4], ngroups = d.nb > 1 ? (int)rnd(4) : 0;
    for (int k = 0; k < ngroups; k++) {
      int n = 2 + (int)rnd(3), m = 0;
      for (int i = 0; i < n; i++) {
        int v = (int)rnd((unsigned)d.n), at = 0;
        while (at < m && members[k][at] < v) at++;
        if (at < m && members[k][at] == v) continue;
        memmove(&members[k][at + 1], &members[k][at], sizeof(int) * (size_t)(m - at));
        members[k][at] = v, m++;
      }
      groups[k] = (part_group){.backend = (int)rnd((unsigned)d.nb - 1), .n = m, .nodes = members[k],
                               .cost = rnd(3) ? (double)(1 + rnd(50)) * 1e-7 : 0};
    }
    part_graph g = view_of(&d);
    g.backend = be;
    g.groups = ngroups ? groups : NULL;
    g.ngroups = ngroups;
    part_cost_model cm = rnd(4) ? part_default_cost_model() : part_options_cost_model(-1, -1);
    part_result r, again;
    alloy_error *e = part_compute(&g, &cm, &r);
    if (e) {
      harness_fail(__FILE__, __LINE__, "dag %d: %s", t, alloy_error_message(e));
      alloy_error_free(e);
      continue;
    }
    int where[64];
    const char *what = r.npart >= 1 && r.npart <= d.n ? NULL : "partition count";
    for (int v = 0; v < d.n && !what; v++) {
      int p = r.node_part[v], b = r.part_backend[p];
      where[v] = b;
      bool grouped = false;
      for (int k = 0; k < ngroups; k++)
        for (int i = 0; i < groups[k].n; i++)
          grouped |= groups[k].nodes[i] == v && groups[k].backend == b && r.group_fate[k] == PART_GROUP_KEPT;
      if (!d.claimed[v * d.nb + b] && !grouped) what = "a node where it is not claimed";
      for (int k = d.pred_start[v]; k < d.pred_start[v + 1] && !what; k++)
        if (r.node_part[d.preds[k]] > p) what = "an edge against the numbering";
    }
    for (int k = 0; k < ngroups && !what; k++) {
      kept += r.group_fate[k] == PART_GROUP_KEPT;
      dropped += r.group_fate[k] == PART_GROUP_SPLIT || r.group_fate[k] == PART_GROUP_MEMORY;
      for (int i = 0; i < groups[k].n && !what && r.group_fate[k] == PART_GROUP_KEPT; i++)
        if (r.node_part[groups[k].nodes[i]] != r.node_part[groups[k].nodes[0]] ||
            where[groups[k].nodes[i]] != groups[k].backend)
          what = "a kept group not whole in one partition";
    }
    for (int p = 0; p < r.npart && !what; p++)
      if (!convex(&d, r.node_part, p)) what = "a partition not convex";
    for (int b = 0; b < d.nb && !what; b++)
      if (be[b].memory_bytes > 0 && peak_bytes(&d, where, b) > be[b].memory_bytes)
        what = "over a memory limit";
    double recomputed = part_cost(&g, &cm, r.node_part, r.part_backend, r.npart);
    if (!what && fabs(recomputed - r.cost) > 1e-9 * (fabs(r.cost) + 1e-12)) what = "a cost part_cost disowns";
    CHECK_OK(part_compute(&g, &cm, &again));
    if (!what && (again.npart != r.npart ||
                  memcmp(again.node_part, r.node_part, sizeof *r.node_part * (size_t)d.n)))
      what = "another result the second time";
    if (what && violations++ < 5)
      harness_fail(__FILE__, __LINE__, "dag %d: %s (%d nodes, %d backends, %d groups)", t, what, d.n,
                   d.nb, ngroups);
    part_result_free(&r);
    part_result_free(&again);
  }
  CHECK_INT(violations, 0);
  /* Groups were kept and dropped, and limits were in play. */
  CHECK(kept > 1000);
  CHECK(dropped > 10);
  CHECK(limited > 1000);
}
