/*
 * sdk/src/partition.h: the partitioner's core, on an abstract graph: nodes
 * in topological order, each with its producers, the backends that claim
 * it and at what cost, and the bytes its outputs hold. The runtime adapts
 * an alloy_graph and the backends' claims to this form (and tests feed it
 * random DAGs), so the algorithm can be checked on its own. See
 * docs/partitioner.md.
 */
#ifndef ALLOY_PARTITION_H
#define ALLOY_PARTITION_H

#include <stdbool.h>
#include <stdint.h>

#include "alloy/error.h"

/* The cost model, in seconds. */
typedef struct part_cost_model {
  double launch;      /* per partition: compile-once launch overhead         */
  double bandwidth;   /* bytes per second between two backends' devices      */
  double node_cost;   /* a claim that gives no estimate                      */
} part_cost_model;

/* The default: 10 us per launch, 10 GB/s links, 1 us per node. */
part_cost_model part_default_cost_model(void);

typedef struct part_graph {
  int nnodes;
  int nbackends;          /* in priority order; the last is the fallback     */
  const int *pred_start;  /* nnodes + 1 offsets into preds                   */
  const int *preds;       /* producers of each node (earlier nodes), may repeat */
  const bool *claimed;    /* nnodes * nbackends: claimed[n * nbackends + b]  */
  const double *cost;     /* same shape; <= 0 means "no estimate"            */
  const double *bytes;    /* per node: bytes of its outputs                  */
} part_graph;

typedef struct part_result {
  int *node_part;    /* nnodes: the partition of each node (malloc'd)       */
  int *part_backend; /* npart: the backend of each partition (malloc'd)     */
  int npart;         /* partitions are numbered in a topological order      */
  double cost;       /* the model's estimate of the whole                   */
  int moved;         /* nodes the improvement moved off their first choice   */
} part_result;

/* Partitions g: every node to one backend that claims it (first the
 * priority choice, then moves that lower the modelled cost: a node or a
 * whole island of nodes going where its neighbours are), then nodes of one
 * backend grouped into convex partitions numbered so that every edge goes
 * from a lower number to a higher one (the partition graph is acyclic).
 * Deterministic. O((nodes + edges) * backends) per improvement pass, at
 * most 8 passes. A node no backend claims is an error naming it. */
alloy_error *part_compute(const part_graph *g, const part_cost_model *cm, part_result *out);
void part_result_free(part_result *r);

/* The modelled cost of an assignment given as node_part/part_backend. */
double part_cost(const part_graph *g, const part_cost_model *cm, const int *node_part,
                 const int *part_backend, int npart);

#endif
