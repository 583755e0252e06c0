/*
 * tests/test_partition.c: the partitioner's core (sdk/src/partition.c) on
 * 10,000 random DAGs with random claims, costs and sizes: every node in
 * exactly one partition of a backend that claims it, every partition
 * convex, the partition graph acyclic (numbers increase along edges), the
 * result deterministic, and never costlier in the model than the plain
 * priority choice; plus small worked cases (an island absorbed, a
 * ping-pong chain kept apart when transfers are cheap, an unclaimed node).
 */
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
  part_graph g = {3, 2, pred_start, preds, claimed, NULL, bytes};
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
  part_graph g = {3, 2, pred_start, preds, claimed, cost, bytes};
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
  part_graph g = {2, 1, pred_start, preds, claimed, NULL, bytes};
  part_cost_model cm = part_default_cost_model();
  part_result r;
  alloy_error *e = part_compute(&g, &cm, &r);
  CHECK(e && strstr(alloy_error_message(e), "node 1 is claimed by no backend"));
  alloy_error_free(e);
}
