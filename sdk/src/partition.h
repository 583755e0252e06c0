/*
 * sdk/src/partition.h: the partitioner's core, on an abstract graph: nodes
 * in topological order, each with its producers, the backends that claim
 * it (one node at a time, or in groups claimed all or nothing) and at what
 * cost, the bytes its outputs hold, and what each backend declares of its
 * launches, copies and memory. The runtime adapts an alloy_graph and the
 * backends' claims to this form (claims.c), and tests feed it random DAGs,
 * so the algorithm can be checked on its own. partition.c implements it;
 * docs/partitioner.md explains the model and the algorithm.
 */
#ifndef ALLOY_PARTITION_H
#define ALLOY_PARTITION_H

#include <stdbool.h>
#include <stdint.h>

#include "alloy/error.h"

/* The cost model, in seconds. A backend's own parameters (part_backend)
 * come first; these defaults fill what it leaves unknown, and the
 * overrides (alloy_program_options) replace them all. */
typedef struct part_cost_model {
  double launch;      /* per partition, for a backend that declares none   */
  double bandwidth;   /* bytes per second to or from host, likewise        */
  double node_cost;   /* a claim that gives no estimate                    */
  /* > 0: this value for every backend; < 0: free (no launch cost,
   * infinite bandwidth); 0: each backend's own or the default above. */
  double launch_override;
  double bandwidth_override;
} part_cost_model;

/* The default: 10 us per launch, 10 GB/s, 1 us per node, no overrides. */
part_cost_model part_default_cost_model(void);
/* The default with alloy_program_options' partition_launch_s and
 * link_bytes_per_s as overrides (positive: for every backend; negative:
 * free; 0: each backend's own). */
part_cost_model part_options_cost_model(double partition_launch_s, double link_bytes_per_s);

/* What a backend declares of itself (alloy_device_info, ABI 1.2). */
typedef struct part_backend {
  double launch_s;     /* seconds to start one partition; <= 0: unknown     */
  double bytes_per_s;  /* copies to and from host; <= 0: unknown; INFINITY:
                        * host-visible memory, copies free on its side      */
  double memory_bytes; /* what its values may occupy at once; <= 0: no limit */
} part_backend_info;

/* Nodes claimed all or nothing by one backend at one cost
 * (host->claims_add_group). */
typedef struct part_group {
  int backend;
  int n;
  const int *nodes; /* n node indices, ascending, distinct                  */
  double cost;      /* seconds for the whole group; <= 0: no estimate       */
} part_group;

typedef struct part_graph {
  int nnodes;
  int nbackends;          /* in priority order; the last is the fallback     */
  const int *pred_start;  /* nnodes + 1 offsets into preds                   */
  const int *preds;       /* producers of each node (earlier nodes), may repeat */
  const bool *claimed;    /* nnodes * nbackends: claimed[n * nbackends + b],
                           * the node on its own (groups are apart)          */
  const double *cost;     /* same shape; <= 0 means "no estimate"            */
  const double *bytes;    /* per node: bytes of its outputs                  */
  /* Optional (NULL / 0: none). */
  const part_backend_info *backend;  /* nbackends entries                         */
  const part_group *groups;     /* ngroups entries                           */
  int ngroups;
  const char *const *reject;    /* nnodes * nbackends: why b left the node
                                 * (host->claims_reject), or NULL entries    */
  const char *const *taken;     /* nnodes * nbackends: why the host took b's
                                 * claim back (its partition did not compile
                                 * there), or NULL entries                   */
} part_graph;

/* Why a node is not on a backend that claims it (part_result.off). */
enum {
  PART_OFF_NONE = 0,
  PART_OFF_MEMORY = 1, /* it would have taken the backend over its memory limit */
};

/* What became of a claim group (part_result.group_fate). */
enum {
  PART_GROUP_LOST = 0,    /* not whole on its backend: its nodes went elsewhere */
  PART_GROUP_KEPT = 1,    /* whole, in one partition of its backend            */
  PART_GROUP_SPLIT = 2,   /* dropped: no convex partition could hold it whole  */
  PART_GROUP_MEMORY = 3,  /* dropped: it did not fit its backend's memory      */
  PART_GROUP_OVERLAP = 4, /* dropped: it shares a node with an earlier group of
                           * the same backend                                 */
};

typedef struct part_result {
  int *node_part;    /* nnodes: the partition of each node (malloc'd)       */
  int *part_backend; /* npart: the backend of each partition (malloc'd)     */
  int npart;         /* partitions are numbered in a topological order      */
  double cost;       /* the model's estimate of the whole                   */
  int moved;         /* nodes the improvement moved off their first choice   */
  double *node_cost; /* nnodes: compute seconds of each node where it runs
                      * (a kept group's cost shared equally by its nodes)   */
  unsigned char *off; /* nnodes * nbackends: PART_OFF_* (malloc'd)          */
  unsigned char *group_fate; /* ngroups: PART_GROUP_* (malloc'd, or NULL)   */
} part_result;

/* Partitions g: every node to one backend that claims it (first the
 * priority choice, then moves that lower the modelled cost: a whole island
 * of nodes going where its neighbours are), kept under each backend's
 * memory limit, then nodes of one backend grouped into convex partitions
 * numbered so that every edge goes from a lower number to a higher one
 * (the partition graph is acyclic). A claim group ends whole in one
 * partition of its backend, or none of it there. The result never costs
 * more in the model than the priority choice, nor than running the whole
 * graph on any one backend that claims all of it. Deterministic.
 * O((nodes + edges) * backends) per improvement pass, at most 8 passes. A
 * node no backend claims is an error naming it. */
alloy_error *part_compute(const part_graph *g, const part_cost_model *cm, part_result *out);
void part_result_free(part_result *r);

/* The modelled cost of an assignment given as node_part/part_backend: a
 * launch per partition, each node's compute (a group's cost when the group
 * is whole in one partition of its backend), and each value once to every
 * other backend that reads it. */
double part_cost(const part_graph *g, const part_cost_model *cm, const int *node_part,
                 const int *part_backend, int npart);

/* Why each node of r runs where it does, for alloy_mixture_node_reason:
 * nnodes entries, NULL for a node on backend 0 (the first of the list),
 * else one line per backend before its own, joined by '\n':
 *   "devsim: not claimed (f64 is not supported)"   (or "no reason given")
 *   "devsim: <taken>"        (the host took the claim back: part_graph.taken)
 *   "devsim: over its memory limit (N bytes)"
 *   "devsim: part of a group that went elsewhere"
 *   "devsim: part of a group that no convex partition could hold"
 *   "devsim: X s here against Y s plus Z s of copies"
 * where X is what the node costs where it runs (compute and the copies its
 * inputs and outputs need there), Y its compute on devsim and Z the copies
 * it would need there (plus ", and L s of launch" when no neighbour of the
 * node runs on devsim, so it would open a partition of its own). names:
 * nbackends backend names. The array and every string are malloc'd: free
 * with part_reasons_free. NULL when memory runs out. */
char **part_reasons(const part_graph *g, const part_cost_model *cm, const part_result *r,
                    const char *const *names);
void part_reasons_free(char **reasons, int nnodes);

#endif
