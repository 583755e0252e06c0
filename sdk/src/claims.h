/*
 * sdk/src/claims.h: the backends' claims on a graph as the partitioner's
 * input (claims.c): single claims and their costs, claim groups, the
 * reasons backends give for what they leave, and what each backend
 * declares of its launches, copies and memory; and the node lookups the
 * mixture shares with it.
 */
#ifndef ALLOY_SDK_CLAIMS_H
#define ALLOY_SDK_CLAIMS_H

#include "sdk/src/partition.h"
#include "sdk/src/runtime_internal.h"

/* Node index by node pointer: a sorted table searched by bsearch, so that
 * wiring a graph is O(n log n). */
typedef struct node_pos {
  const alloy_node *node;
  int index;
} node_pos;

node_pos *claims_node_table(const alloy_graph *g); /* malloc'd; NULL: out of memory */
int claims_node_index(const node_pos *t, int n, const alloy_node *node); /* -1: not there */
int claims_input_index(const alloy_graph *g, const alloy_value *v);       /* -1: not an input */
/* Bytes a value holds (a data-dependent size counts 1024). */
double claims_value_bytes(const alloy_value *v);

/* Asks backends[0..nb) (runtime indices, priority order) to claim g's
 * nodes and fills pg: single claims with their costs (a node a backend
 * claimed only in a group is not claimed on its own), the groups, the
 * reasons given with claims_reject, and each backend's launch, bandwidth
 * and memory from its device_info (device 0). An error names a node that
 * no backend claims, with the reasons given. claims_free releases what pg
 * holds (also after a failure). */
alloy_error *claims_collect(alloy_runtime *rt, const int *backends, int nb, const alloy_graph *g,
                            part_graph *pg);
void claims_free(part_graph *pg);

/* Takes back backend b's claims on node (a partition holding it did not
 * compile there): its single claim, and every group of b holding it; why
 * (copied; the first one stays) is what part_reasons says for b. false
 * when memory ran out (the claims are taken back all the same). */
bool claims_take_back(part_graph *pg, int node, int b, const char *why);
/* Whether some backend still claims node, on its own or in a group. */
bool claims_any(const part_graph *pg, int node);

#endif
