/*
 * sdk/src/claims.c: every backend's claims on a graph, in the partitioner's
 * form (part_graph of partition.h): producers by node index, which backend
 * claims which node at what cost, the groups it claims all or nothing, why
 * it left the others (what plugins fill through the host entries of
 * host.c, released here with claims_release), the bytes each node's
 * outputs hold, and each backend's launch cost, copy bandwidth and memory
 * as its device_info declares them. The mixture (mixture.c) partitions
 * what this collects and may take claims back (claims_take_back) when a
 * partition does not compile.
 */
#include <math.h>
#include <stdio.h>
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

/* Growable arrays the collected claims end in. */
typedef struct collected {
  part_group *groups;
  int ngroups, cap;
  char **reject; /* n * nb, made when a backend first gives a reason */
} collected;

/* What backend row declares of device 0; a field it leaves (or a plugin
 * older than 1.2, which leaves every new field) stays unknown (0). */
static part_backend_info declared(alloy_loaded *row) {
  alloy_device_info info = {.struct_size = ALLOY_DEVICE_INFO_STRUCT_SIZE};
  part_backend_info out = {0};
  alloy_error *e = row->api->device_info ? row->api->device_info(row->be, 0, &info) : NULL;
  if (e || !row->api->device_info) {
    alloy_error_free(e);
    return out;
  }
  out.launch_s = info.launch_s;
  /* Host-visible memory: the host reads and writes it in place, so a copy
   * costs nothing on this backend's side. */
  out.bytes_per_s = info.capabilities & ALLOY_DEVICE_CAP_HOST_VISIBLE ? INFINITY : info.host_bytes_per_s;
  out.memory_bytes = (double)info.memory_bytes;
  return out;
}

/* Takes what backend b's claim() left in claims: its groups (their node
 * arrays change hands), its reasons, and its single claims (a node whose
 * only claim is a group's, marked claimed with cost 0 by the host, is not
 * claimed on its own). */
static alloy_error *take_claims(alloy_claims *claims, int b, int nb, bool *claimed, double *cost,
                                collected *out) {
  int n = claims->num_nodes;
  bool *grouped = calloc((size_t)n + 1, sizeof *grouped);
  if (!grouped) return oom();
  for (int j = 0; j < claims->ngroups; j++) {
    claims_group *cg = &claims->groups[j];
    if (out->ngroups == out->cap) {
      int cap = out->cap ? 2 * out->cap : 8;
      part_group *grown = realloc(out->groups, sizeof *grown * (size_t)cap);
      if (!grown) {
        free(grouped);
        return oom();
      }
      out->groups = grown;
      out->cap = cap;
    }
    const int *nodes = cg->nodes;
    out->groups[out->ngroups++] =
        (part_group){.backend = b, .n = cg->n, .nodes = nodes, .cost = cg->cost};
    cg->nodes = NULL;
    for (int i = 0; i < cg->n; i++)
      if (nodes[i] >= 0 && nodes[i] < n) grouped[nodes[i]] = true;
  }
  for (int i = 0; i < n; i++) {
    claimed[(size_t)i * nb + b] = claims->claimed[i] && !(grouped[i] && claims->cost[i] == 0);
    cost[(size_t)i * nb + b] = claims->cost[i];
  }
  free(grouped);
  for (int i = 0; claims->reason && i < n; i++) {
    if (!claims->reason[i]) continue;
    if (!out->reject && !(out->reject = calloc((size_t)n * nb + 1, sizeof *out->reject))) return oom();
    out->reject[(size_t)i * nb + b] = claims->reason[i];
    claims->reason[i] = NULL;
  }
  return NULL;
}

/* "node 3 (x, op aten.foo) is claimed by no backend, ...", with the
 * reasons the backends gave. */
static alloy_error *unclaimed(alloy_runtime *rt, const int *backends, int nb, const alloy_graph *g,
                              int i, char *const *reject) {
  const alloy_node *node = alloy_graph_node(g, i);
  char why[1024] = "";
  size_t len = 0;
  for (int b = 0; reject && b < nb && len < sizeof why; b++) {
    const char *r = reject[(size_t)i * nb + b];
    if (r)
      len += (size_t)snprintf(why + len, sizeof why - len, "%s%s: %s", len ? "; " : " (",
                              rt->backends[backends[b]].name, r);
  }
  if (len && len < sizeof why - 1) snprintf(why + len, sizeof why - len, ")");
  return alloy_error_new(ALLOY_ERR_UNSUPPORTED,
                         "node %d (%s, op %s) is claimed by no backend, and no decomposition rule "
                         "brought it to ops one does%s", i,
                         alloy_node_num_outputs(node) ? alloy_value_name(alloy_node_output(node, 0)) : "",
                         alloy_op_name(alloy_node_op(node)), why);
}

/* The graph in the partitioner's form: producers by node index, claims,
 * costs, groups and reasons of every backend, output bytes, and what each
 * backend declares of itself. */
alloy_error *claims_collect(alloy_runtime *rt, const int *backends, int nb, const alloy_graph *g,
                            part_graph *pg) {
  int n = alloy_graph_num_nodes(g);
  int *start = calloc((size_t)n + 1, sizeof *start);
  bool *claimed = calloc((size_t)n * nb + 1, sizeof *claimed);
  double *cost = calloc((size_t)n * nb + 1, sizeof *cost);
  double *bytes = calloc((size_t)n + 1, sizeof *bytes);
  part_backend_info *info = calloc((size_t)nb + 1, sizeof *info);
  int cap = 4 * n + 16, ne = 0;
  int *preds = malloc(sizeof *preds * (size_t)cap);
  collected got = {0};
  alloy_error *e = (!start || !claimed || !cost || !bytes || !info || !preds) ? oom() : NULL;
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
  /* Every backend's claims on this graph, and what it declares. */
  for (int b = 0; b < nb && !e; b++) {
    alloy_loaded *row = &rt->backends[backends[b]];
    info[b] = declared(row);
    bool *c = calloc((size_t)n + 1, sizeof *c);
    double *k = calloc((size_t)n + 1, sizeof *k);
    alloy_claims claims = {.num_nodes = n, .claimed = c, .cost = k};
    if (!c || !k) e = oom();
    else if ((e = row->api->claim(row->be, g, &claims)))
      e = alloy_error_wrap(e, "backend %s: claim", row->name);
    if (!e) e = take_claims(&claims, b, nb, claimed, cost, &got);
    claims_release(&claims);
    free(c);
    free(k);
  }
  *pg = (part_graph){.nnodes = n, .nbackends = nb, .pred_start = start, .preds = preds,
                     .claimed = claimed, .cost = cost, .bytes = bytes, .backend = info,
                     .groups = got.groups, .ngroups = got.ngroups,
                     .reject = (const char *const *)got.reject};
  if (e) return e;
  /* A node nobody claims, on its own or in a group. */
  bool *any = calloc((size_t)n + 1, sizeof *any);
  if (!any) return oom();
  for (int k = 0; k < got.ngroups; k++)
    for (int i = 0; i < got.groups[k].n; i++)
      if (got.groups[k].nodes[i] >= 0 && got.groups[k].nodes[i] < n) any[got.groups[k].nodes[i]] = true;
  for (int i = 0; i < n && !e; i++) {
    for (int b = 0; b < nb; b++) any[i] |= claimed[(size_t)i * nb + b];
    if (!any[i]) e = unclaimed(rt, backends, nb, g, i, got.reject);
  }
  free(any);
  return e;
}

static void free_strings(const char *const *s, size_t count) {
  for (size_t i = 0; s && i < count; i++) free((char *)s[i]);
  free((void *)s);
}

void claims_free(part_graph *pg) {
  size_t cells = (size_t)pg->nnodes * (size_t)pg->nbackends;
  free((void *)pg->pred_start);
  free((void *)pg->preds);
  free((void *)pg->claimed);
  free((void *)pg->cost);
  free((void *)pg->bytes);
  free((void *)pg->backend);
  for (int k = 0; pg->groups && k < pg->ngroups; k++) free((void *)pg->groups[k].nodes);
  free((void *)pg->groups);
  free_strings(pg->reject, cells);
  free_strings(pg->taken, cells);
  memset(pg, 0, sizeof *pg);
}

bool claims_take_back(part_graph *pg, int node, int b, const char *why) {
  int nb = pg->nbackends;
  if (node < 0 || node >= pg->nnodes || b < 0 || b >= nb) return true;
  size_t i = (size_t)node * nb + b;
  ((bool *)pg->claimed)[i] = false;
  /* Groups of b holding the node go (the array is claims_collect's). */
  part_group *groups = (part_group *)pg->groups;
  int kept = 0;
  for (int k = 0; k < pg->ngroups; k++) {
    bool holds = false;
    for (int j = 0; j < groups[k].n && groups[k].backend == b && !holds; j++)
      holds = groups[k].nodes[j] == node;
    if (holds) free((void *)groups[k].nodes);
    else groups[kept++] = groups[k];
  }
  pg->ngroups = kept;
  if (!why) return true;
  if (!pg->taken && !(pg->taken = calloc((size_t)pg->nnodes * nb + 1, sizeof *pg->taken))) return false;
  char **taken = (char **)pg->taken;
  if (!taken[i] && !(taken[i] = strdup(why))) return false;
  return true;
}

bool claims_any(const part_graph *pg, int node) {
  for (int b = 0; b < pg->nbackends; b++)
    if (pg->claimed[(size_t)node * pg->nbackends + b]) return true;
  for (int k = 0; k < pg->ngroups; k++)
    for (int j = 0; j < pg->groups[k].n; j++)
      if (pg->groups[k].nodes[j] == node) return true;
  return false;
}
