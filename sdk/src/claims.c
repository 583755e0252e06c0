/*
 * sdk/src/claims.c: every backend's claims on a graph, in the partitioner's
 * form (part_graph of partition.h): producers by node index, which backend
 * claims which node at what cost, the bytes each node's outputs hold. The
 * mixture (mixture.c) partitions what this collects.
 */
#include <stdlib.h>
#include <string.h>

#include "sdk/src/claims.h"

static alloy_error *oom(void) {
  return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
}

/* Node index by node pointer: a sorted table searched by bsearch, so that
 * wiring a graph is O(n log n). */

static int pos_cmp(const void *a, const void *b) {
  const alloy_node *x = ((const node_pos *)a)->node, *y = ((const node_pos *)b)->node;
  return x < y ? -1 : x > y;
}

node_pos *claims_node_table(const alloy_graph *g) {
  int n = alloy_graph_num_nodes(g);
  node_pos *t = malloc(sizeof *t * (size_t)(n ? n : 1));
  if (!t) return NULL;
  for (int i = 0; i < n; i++) t[i] = (node_pos){alloy_graph_node(g, i), i};
  qsort(t, (size_t)n, sizeof *t, pos_cmp);
  return t;
}

int claims_node_index(const node_pos *t, int n, const alloy_node *node) {
  node_pos key = {node, -1};
  const node_pos *hit = bsearch(&key, t, (size_t)n, sizeof *t, pos_cmp);
  return hit ? hit->index : -1;
}

int claims_input_index(const alloy_graph *g, const alloy_value *v) {
  for (int i = 0; i < alloy_graph_num_inputs(g); i++)
    if (alloy_graph_input(g, i) == v) return i;
  return -1;
}

double claims_value_bytes(const alloy_value *v) {
  if (alloy_value_kind_of(v) != ALLOY_VALUE_TENSOR) return 8;
  double n = (double)alloy_dtype_size(alloy_value_dtype(v));
  for (int d = 0; d < alloy_value_rank(v); d++) {
    alloy_dim dim = alloy_value_shape(v)[d];
    n *= alloy_dim_is_const(dim) ? (double)dim.value : 1024; /* data-dependent: a guess */
  }
  return n;
}

/* The graph in the partitioner's form: producers by node index, claims
 * and costs of every backend, output bytes. */
alloy_error *claims_collect(alloy_runtime *rt, const int *backends, int nb, const alloy_graph *g,
                            part_graph *pg) {
  int n = alloy_graph_num_nodes(g);
  int *start = calloc((size_t)n + 1, sizeof *start);
  bool *claimed = calloc((size_t)n * nb + 1, sizeof *claimed);
  double *cost = calloc((size_t)n * nb + 1, sizeof *cost);
  double *bytes = calloc((size_t)n + 1, sizeof *bytes);
  int cap = 4 * n + 16, ne = 0;
  int *preds = malloc(sizeof *preds * (size_t)cap);
  alloy_error *e = (!start || !claimed || !cost || !bytes || !preds) ? oom() : NULL;
  node_pos *table = claims_node_table(g);
  if (!table && !e) e = oom();
  for (int i = 0; i < n && !e; i++) {
    const alloy_node *node = alloy_graph_node(g, i);
    start[i] = ne;
    for (int a = 0; a < alloy_node_num_args(node); a++) {
      const alloy_arg *arg = alloy_node_arg(node, a);
      int nitems = arg->kind == ALLOY_ARG_LIST ? arg->u.list.n : 1;
      for (int k = 0; k < nitems; k++) {
        const alloy_arg *it = arg->kind == ALLOY_ARG_LIST ? &arg->u.list.items[k] : arg;
        if (it->kind != ALLOY_ARG_VALUE) continue;
        alloy_node *prod = alloy_value_producer(it->u.value, NULL);
        if (!prod) continue;
        int pi = claims_node_index(table, n, prod);
        if (pi < 0) continue;
        if (ne == cap) {
          int *np = realloc(preds, sizeof *np * (size_t)(cap *= 2));
          if (!np) {
            e = oom();
            break;
          }
          preds = np;
        }
        preds[ne++] = pi;
      }
    }
    for (int k = 0; k < alloy_node_num_outputs(node); k++)
      bytes[i] += claims_value_bytes(alloy_node_output(node, k));
  }
  if (!e) start[n] = ne;
  free(table);
  /* Every backend's claims on this graph. */
  for (int b = 0; b < nb && !e; b++) {
    alloy_loaded *row = &rt->backends[backends[b]];
    bool *c = calloc((size_t)n + 1, sizeof *c);
    double *k = calloc((size_t)n + 1, sizeof *k);
    alloy_claims claims = {n, c, k};
    if (!c || !k) e = oom();
    else if ((e = row->api->claim(row->be, g, &claims)))
      e = alloy_error_wrap(e, "backend %s: claim", row->name);
    for (int i = 0; i < n && !e; i++) {
      claimed[(size_t)i * nb + b] = c[i];
      cost[(size_t)i * nb + b] = k[i];
    }
    free(c);
    free(k);
  }
  for (int i = 0; i < n && !e; i++) {
    bool any = false;
    for (int b = 0; b < nb; b++) any |= claimed[(size_t)i * nb + b];
    if (!any) {
      const alloy_node *node = alloy_graph_node(g, i);
      e = alloy_error_new(ALLOY_ERR_UNSUPPORTED,
                          "node %d (%s, op %s) is claimed by no backend, and no decomposition "
                          "rule brought it to ops one does", i,
                          alloy_node_num_outputs(node) ? alloy_value_name(alloy_node_output(node, 0)) : "",
                          alloy_op_name(alloy_node_op(node)));
    }
  }
  *pg = (part_graph){n, nb, start, preds, claimed, cost, bytes};
  return e;
}

void claims_free(part_graph *pg) {
  free((void *)pg->pred_start);
  free((void *)pg->preds);
  free((void *)pg->claimed);
  free((void *)pg->cost);
  free((void *)pg->bytes);
}

