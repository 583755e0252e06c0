/*
 * bench/bench_partition.c: the partitioner's core (sdk/src/partition.c) on
 * random DAGs of 10k, 100k and 1M nodes: each node reads up to three
 * earlier nodes (mostly near ones, as real graphs do), three backends in
 * priority order claim random subsets (the last claims everything). Prints
 * the time per size and the time per node, to show the growth; the goal
 * (issue 7): 100k nodes under 1 s, close to linear. A second table runs
 * the same graphs with what ABI 1.2 adds: each backend's own launch cost
 * and bandwidth (the last host-visible), a memory limit on the second of a
 * quarter of all the bytes, and a claim group of three nodes in every
 * thirty on the first.
 *
 *   build/bench/bench_partition [max_nodes]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sdk/src/partition.h"

static uint64_t state = 7;
static unsigned rnd(unsigned n) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return n ? (unsigned)((state >> 33) % n) : 0;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

enum { NB = 3 };

/* One random DAG of n nodes, partitioned; with_12: the 1.2 inputs too. */
static int run(int n, bool with_12) {
  int *start = malloc(sizeof *start * ((size_t)n + 1)), *preds = malloc(sizeof *preds * (size_t)n * 3);
  bool *claimed = malloc((size_t)n * NB);
  double *cost = malloc(sizeof *cost * (size_t)n * NB), *bytes = malloc(sizeof *bytes * (size_t)n);
  int ngroups = with_12 ? n / 30 : 0;
  part_group *groups = malloc(sizeof *groups * (size_t)(ngroups + 1));
  int *members = malloc(sizeof *members * (size_t)(3 * ngroups + 1));
  if (!start || !preds || !claimed || !cost || !bytes || !groups || !members) return 1;
  int ne = 0;
  double total = 0;
  for (int v = 0; v < n; v++) {
    start[v] = ne;
    int k = v ? (int)rnd(4) : 0;
    for (int j = 0; j < k; j++) {
      int back = rnd(10) ? 1 + (int)rnd(8) : 1 + (int)rnd((unsigned)v);
      preds[ne++] = v - (back > v ? v : back);
    }
    for (int b = 0; b < NB; b++) {
      claimed[(size_t)v * NB + b] = b == NB - 1 || rnd(4) != 0;
      cost[(size_t)v * NB + b] = (1 + rnd(50)) * 1e-6;
    }
    bytes[v] = (double)(4 << rnd(16));
    total += bytes[v];
  }
  start[n] = ne;
  for (int k = 0; k < ngroups; k++) {
    for (int i = 0; i < 3; i++) members[3 * k + i] = 30 * k + 10 + i;
    groups[k] = (part_group){.backend = 0, .n = 3, .nodes = &members[3 * k], .cost = 5e-6};
  }
  part_backend_info be[NB] = {{.launch_s = 5e-6, .bytes_per_s = 20e9},
                              {.launch_s = 1e-6, .bytes_per_s = 50e9, .memory_bytes = total / 4},
                              {.launch_s = 1e-6, .bytes_per_s = INFINITY}};
  part_graph g = {.nnodes = n, .nbackends = NB, .pred_start = start, .preds = preds,
                  .claimed = claimed, .cost = cost, .bytes = bytes,
                  .backend = with_12 ? be : NULL, .groups = ngroups ? groups : NULL,
                  .ngroups = ngroups};
  part_cost_model cm = part_default_cost_model();
  part_result r;
  double t0 = now_s();
  alloy_error *e = part_compute(&g, &cm, &r);
  double t = now_s() - t0;
  if (e) {
    fprintf(stderr, "%s\n", alloy_error_message(e));
    return 1;
  }
  int kept = 0;
  for (int k = 0; k < ngroups; k++) kept += r.group_fate[k] == PART_GROUP_KEPT;
  printf("%10d %8d %10.3f %12.3f %10d", n, r.npart, t, t / n * 1e6, r.moved);
  if (with_12) printf(" %10d of %d", kept, ngroups);
  printf("\n");
  part_result_free(&r);
  free(start);
  free(preds);
  free(claimed);
  free(cost);
  free(bytes);
  free(groups);
  free(members);
  return 0;
}

int main(int argc, char **argv) {
  int max = argc > 1 ? atoi(argv[1]) : 1000000;
  printf("%10s %8s %10s %12s %10s\n", "nodes", "parts", "seconds", "us per node", "moved");
  for (int n = 10000; n <= max; n *= 10)
    if (run(n, false)) return 1;
  printf("with per-backend launch, bandwidth and memory, and claim groups:\n");
  printf("%10s %8s %10s %12s %10s %10s\n", "nodes", "parts", "seconds", "us per node", "moved",
         "groups kept");
  state = 7;
  for (int n = 10000; n <= max; n *= 10)
    if (run(n, true)) return 1;
  return 0;
}
