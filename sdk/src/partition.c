/*
 * sdk/src/partition.c: the partitioner's core (see partition.h and
 * docs/partitioner.md).
 *
 * Three steps. (1) Every node goes to the first backend, in priority
 * order, that claims it. (2) Islands move: the graph's nodes fall into
 * islands (connected groups of nodes on one backend); an island moves to
 * another backend that claims all of its nodes when the cost model says the
 * move pays: what its nodes cost there, the bytes that stop or start
 * crossing between devices, and a launch overhead saved for every island
 * the move merges with. A pass evaluates every island against the current
 * assignment and applies the moves that do not touch each other; a pass
 * that does not lower the modelled cost is undone and ends the search.
 * (3) Convex partitions: in topological order a node joins the newest
 * partition of its backend when every input it takes from another
 * partition comes from an older one; otherwise it opens a new partition.
 * Partition numbers therefore increase along every edge, so the partition
 * graph is acyclic and no path can leave a partition and come back.
 */
#include "sdk/src/partition.h"

#include <stdlib.h>
#include <string.h>

part_cost_model part_default_cost_model(void) {
  return (part_cost_model){.launch = 10e-6, .bandwidth = 10e9, .node_cost = 1e-6};
}

static alloy_error *oom(void) {
  return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
}

static double node_cost(const part_graph *g, const part_cost_model *cm, int n, int b) {
  double c = g->cost ? g->cost[(size_t)n * g->nbackends + b] : 0;
  return c > 0 ? c : cm->node_cost;
}

static bool claims(const part_graph *g, int n, int b) {
  return g->claimed[(size_t)n * g->nbackends + b];
}

/* Consumers of each node, from the producer lists. */
typedef struct succs {
  int *start, *list;
} succs;

static bool succs_build(const part_graph *g, succs *s) {
  int n = g->nnodes, ne = g->pred_start[n];
  s->start = calloc((size_t)n + 1, sizeof *s->start);
  s->list = malloc(sizeof *s->list * (size_t)(ne ? ne : 1));
  int *fill = calloc((size_t)n + 1, sizeof *fill);
  if (!s->start || !s->list || !fill) {
    free(fill);
    return false;
  }
  for (int e = 0; e < ne; e++) s->start[g->preds[e] + 1]++;
  for (int i = 0; i < n; i++) s->start[i + 1] += s->start[i];
  for (int v = 0; v < n; v++)
    for (int e = g->pred_start[v]; e < g->pred_start[v + 1]; e++) {
      int p = g->preds[e];
      s->list[s->start[p] + fill[p]++] = v;
    }
  free(fill);
  return true;
}

double part_cost(const part_graph *g, const part_cost_model *cm, const int *node_part,
                 const int *part_backend, int npart) {
  double total = npart * cm->launch;
  /* A value crosses once to each other backend that reads it. */
  bool seen[64];
  for (int v = 0; v < g->nnodes; v++) total += node_cost(g, cm, v, part_backend[node_part[v]]);
  succs s;
  if (!succs_build(g, &s)) return -1;
  for (int p = 0; p < g->nnodes; p++) {
    int bp = part_backend[node_part[p]];
    memset(seen, 0, sizeof seen);
    for (int e = s.start[p]; e < s.start[p + 1]; e++) {
      int bc = part_backend[node_part[s.list[e]]];
      if (bc != bp && bc < 64 && !seen[bc]) {
        seen[bc] = true;
        total += g->bytes[p] / cm->bandwidth;
      }
    }
  }
  free(s.start);
  free(s.list);
  return total;
}

/* --- step 2: islands ----------------------------------------------------------*/

static int find(int *parent, int x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

/* The islands of an assignment: parent[] as a union-find forest whose
 * roots are each island's lowest node. */
static void islands_of(const part_graph *g, const int *assign, int *parent) {
  int n = g->nnodes;
  for (int v = 0; v < n; v++) parent[v] = v;
  for (int v = 0; v < n; v++)
    for (int e = g->pred_start[v]; e < g->pred_start[v + 1]; e++)
      if (assign[g->preds[e]] == assign[v]) {
        int a = find(parent, v), b = find(parent, g->preds[e]);
        if (a != b) parent[a < b ? b : a] = a < b ? a : b;
      }
}

/* One pass of island moves; returns the number of nodes moved. */
static int island_pass(const part_graph *g, const part_cost_model *cm, int *assign, int *parent,
                       const succs *s, int *members, int *mstart, bool *dirty, int *stamp) {
  int nb = g->nbackends, moved = 0;
  size_t n = g->nnodes > 0 ? (size_t)g->nnodes : 0;
  /* Islands as lists of members, by root, in node order. */
  memset(mstart, 0, sizeof *mstart * (n + 1));
  for (int v = 0; v < (int)n; v++) mstart[find(parent, v) + 1]++;
  for (size_t i = 0; i < n; i++) mstart[i + 1] += mstart[i];
  int *fill = calloc(n ? n : 1, sizeof *fill);
  if (!fill) return -1;
  for (int v = 0; v < (int)n; v++) {
    int r = find(parent, v);
    members[mstart[r] + fill[r]++] = v;
  }
  free(fill);
  memset(dirty, 0, sizeof *dirty * n);
  memset(stamp, 0, sizeof *stamp * n);
  int stamp_id = 0;
  for (int r = 0; r < (int)n; r++) {
    if (find(parent, r) != r || dirty[r]) continue;
    int a = assign[r], lo = mstart[r], hi = mstart[r + 1];
    int best = -1;
    double best_delta = -1e-15;
    for (int b = 0; b < nb; b++) {
      if (b == a) continue;
      bool all = true;
      for (int k = lo; k < hi && all; k++) all = claims(g, members[k], b);
      if (!all) continue;
      /* Compute, per-edge transfers at the island's border, and the islands
       * of backend b it would merge with (each saves a launch). */
      double delta = 0;
      int merged = 0;
      stamp_id++;
      for (int k = lo; k < hi; k++) {
        int v = members[k];
        delta += node_cost(g, cm, v, b) - node_cost(g, cm, v, a);
        for (int e = g->pred_start[v]; e < g->pred_start[v + 1]; e++) {
          int p = g->preds[e], q = find(parent, p);
          if (q == r) continue;
          int bp = assign[p];
          delta += ((bp != b) - (bp != a)) * g->bytes[p] / cm->bandwidth;
          if (bp == b && stamp[q] != stamp_id) stamp[q] = stamp_id, merged++;
        }
        for (int e = s->start[v]; e < s->start[v + 1]; e++) {
          int c = s->list[e], q = find(parent, c);
          if (q == r) continue;
          int bc = assign[c];
          delta += ((bc != b) - (bc != a)) * g->bytes[v] / cm->bandwidth;
          if (bc == b && stamp[q] != stamp_id) stamp[q] = stamp_id, merged++;
        }
      }
      delta -= merged * cm->launch;
      if (delta < best_delta) best_delta = delta, best = b;
    }
    if (best < 0) continue;
    /* Move, and keep this pass's other moves away from its neighbours. */
    for (int k = lo; k < hi; k++) {
      int v = members[k];
      assign[v] = best;
      for (int e = g->pred_start[v]; e < g->pred_start[v + 1]; e++) dirty[find(parent, g->preds[e])] = true;
      for (int e = s->start[v]; e < s->start[v + 1]; e++) dirty[find(parent, s->list[e])] = true;
    }
    dirty[r] = true;
    moved += hi - lo;
  }
  return moved;
}

/* --- step 3: convex partitions ------------------------------------------------*/

static alloy_error *group(const part_graph *g, const int *assign, part_result *out) {
  int n = g->nnodes, nb = g->nbackends;
  int *newest = malloc(sizeof *newest * (size_t)nb);
  out->node_part = malloc(sizeof *out->node_part * (size_t)(n ? n : 1));
  out->part_backend = malloc(sizeof *out->part_backend * (size_t)(n ? n : 1));
  if (!newest || !out->node_part || !out->part_backend) {
    free(newest);
    return oom();
  }
  for (int b = 0; b < nb; b++) newest[b] = -1;
  out->npart = 0;
  for (int v = 0; v < n; v++) {
    int b = assign[v], p = newest[b];
    bool join = p >= 0;
    for (int e = g->pred_start[v]; e < g->pred_start[v + 1] && join; e++) {
      int q = out->node_part[g->preds[e]];
      join = q == p || q < p;
    }
    if (!join) {
      p = newest[b] = out->npart++;
      out->part_backend[p] = b;
    }
    out->node_part[v] = p;
  }
  free(newest);
  return NULL;
}

/* The modelled cost of assign once grouped into convex partitions. */
static alloy_error *grouped_cost(const part_graph *g, const part_cost_model *cm, const int *assign,
                                 double *cost) {
  part_result r = {0};
  alloy_error *e = group(g, assign, &r);
  if (!e) *cost = part_cost(g, cm, r.node_part, r.part_backend, r.npart);
  part_result_free(&r);
  return e;
}

alloy_error *part_compute(const part_graph *g, const part_cost_model *cm, part_result *out) {
  memset(out, 0, sizeof *out);
  int n = g->nnodes, nb = g->nbackends;
  if (nb < 1 || nb > 64)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "partition: %d backends (1 to 64)", nb);
  int *assign = malloc(sizeof *assign * (size_t)(n ? n : 1));
  int *saved = malloc(sizeof *saved * (size_t)(n ? n : 1));
  int *parent = malloc(sizeof *parent * (size_t)(n ? n : 1));
  int *members = malloc(sizeof *members * (size_t)(n ? n : 1));
  int *mstart = malloc(sizeof *mstart * ((size_t)n + 1));
  bool *dirty = malloc(sizeof *dirty * (size_t)(n ? n : 1));
  int *stamp = malloc(sizeof *stamp * (size_t)(n ? n : 1));
  succs s = {0};
  alloy_error *e = NULL;
  if (!assign || !saved || !parent || !members || !mstart || !dirty || !stamp ||
      !succs_build(g, &s))
    e = oom();
  for (int v = 0; v < n && !e; v++) {
    assign[v] = -1;
    for (int b = 0; b < nb && assign[v] < 0; b++)
      if (claims(g, v, b)) assign[v] = b;
    if (assign[v] < 0)
      e = alloy_error_new(ALLOY_ERR_UNSUPPORTED, "node %d is claimed by no backend", v);
  }
  /* A pass estimates each island move locally (one launch per island) but
   * is kept only when the real objective, the grouped partitions' modelled
   * cost, goes down. */
  double cost = 0;
  if (!e) e = grouped_cost(g, cm, assign, &cost);
  for (int pass = 0; pass < 8 && !e; pass++) {
    memcpy(saved, assign, sizeof *assign * (size_t)n);
    islands_of(g, assign, parent);
    int moved = island_pass(g, cm, assign, parent, &s, members, mstart, dirty, stamp);
    double after = cost;
    if (moved < 0) e = oom();
    else if (moved) e = grouped_cost(g, cm, assign, &after);
    if (e || !moved || after >= cost) {
      memcpy(assign, saved, sizeof *assign * (size_t)n);
      break;
    }
    cost = after;
  }
  if (!e) e = group(g, assign, out);
  if (!e) {
    for (int v = 0; v < n; v++) {
      int first = 0;
      while (!claims(g, v, first)) first++;
      out->moved += assign[v] != first;
    }
    out->cost = part_cost(g, cm, out->node_part, out->part_backend, out->npart);
  }
  free(assign);
  free(saved);
  free(parent);
  free(members);
  free(mstart);
  free(dirty);
  free(stamp);
  free(s.start);
  free(s.list);
  if (e) part_result_free(out);
  return e;
}

void part_result_free(part_result *r) {
  free(r->node_part);
  free(r->part_backend);
  memset(r, 0, sizeof *r);
}
