/*
 * sdk/src/claims.h: the backends' claims on a graph as the partitioner's
 * input (claims.c), and the node lookups the mixture shares with it.
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
 * nodes and fills pg; an error names a node that no backend claims.
 * claims_free releases what pg holds (also after a failure). */
alloy_error *claims_collect(alloy_runtime *rt, const int *backends, int nb, const alloy_graph *g,
                            part_graph *pg);
void claims_free(part_graph *pg);

#endif
