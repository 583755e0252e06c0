/*
 * sdk/src/partition.c: the partitioner's core (see partition.h and
 * docs/partitioner.md); claims.c builds its input from a real graph.
 *
 * The model. Each backend has its own launch cost and its own copy
 * bandwidth to and from host memory (what it declares, else the model's
 * defaults, unless the options override them all); a value crossing from
 * backend a to backend b costs bytes / min(bandwidth a, bandwidth b), and a
 * host-visible backend's side is free. A claim group's cost replaces its
 * members' costs when it runs whole in one partition of its backend.
 *
 * The steps. (1) Priority: backend by backend in priority order, each
 * claims its groups whose nodes are all still free, then its single nodes
 * still free. (2) Memory: a sweep in topological order keeps the bytes
 * alive on each backend (a value lives from its producer to its last
 * reader) under its limit, sending a node that would go over to the next
 * backend that claims it. (3) Islands move: the graph's nodes fall into
 * islands (connected groups of nodes on one backend; a whole claim group
 * is one island even where its nodes do not touch); an island moves to
 * another backend that can take all of it when the model says the move
 * pays: what its nodes cost there, the bytes that stop or start crossing,
 * and the launches saved by merging with that backend's islands. A pass
 * evaluates every island against the current assignment and applies the
 * moves that do not touch each other; a pass that does not lower the
 * modelled cost of the grouped partitions is undone and ends the search.
 * (4) Convex partitions: in topological order a node joins the newest
 * partition of its backend when every input it takes from another
 * partition comes from an older one; otherwise it opens a new partition. A
 * node of a claim group joins its group's partition instead, where its
 * inputs allow; where they do not, no convex partition holds the group, so
 * the group is dropped (its nodes run where they are claimed on their own)
 * and the grouping runs again. Partition numbers never decrease along an
 * edge, so the partition graph is acyclic and no path can leave a
 * partition and come back. (5) Whole graph: running everything on one
 * backend that claims all of it is a candidate too; the cheapest wins.
 *
 * part_reasons, last, turns a result into one line per node and backend
 * passed over, for `alloy partition` and alloy_mixture_node_reason.
 */
#include "sdk/src/partition.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

part_cost_model part_default_cost_model(void) {
  return (part_cost_model){.launch = 10e-6, .bandwidth = 10e9, .node_cost = 1e-6};
}

part_cost_model part_options_cost_model(double partition_launch_s, double link_bytes_per_s) {
  part_cost_model cm = part_default_cost_model();
  cm.launch_override = partition_launch_s;
  cm.bandwidth_override = link_bytes_per_s;
  return cm;
}

static alloy_error *oom(void) {
  return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
}

enum { MAX_BACKENDS = 64 }; /* a bit mask of backends fits a uint64_t */

/* --- the model per backend -------------------------------------------------------*/

typedef struct model {
  int nb;
  bool limited;                   /* some backend has a memory limit     */
  double node_cost;               /* a claim without an estimate         */
  double launch[MAX_BACKENDS];    /* seconds per partition               */
  double memory[MAX_BACKENDS];    /* bytes; 0: no limit                  */
  double inv[MAX_BACKENDS * MAX_BACKENDS]; /* seconds per byte from a to b */
} model;

/* Resolves each backend's parameters: the override, else what it declares,
 * else the default. */
static void model_free(model *m) { free(m); }

static model *model_new(const part_graph *g, const part_cost_model *cm) {
  model *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  int nb = m->nb = g->nbackends;
  m->node_cost = cm->node_cost;
  double bw[MAX_BACKENDS];
  for (int b = 0; b < nb; b++) {
    const part_backend_info *pb = g->backend ? &g->backend[b] : NULL;
    double launch = pb && pb->launch_s > 0 ? pb->launch_s : cm->launch;
    double w = pb && pb->bytes_per_s > 0 ? pb->bytes_per_s : cm->bandwidth;
    if (cm->launch_override != 0) launch = cm->launch_override > 0 ? cm->launch_override : 0;
    if (cm->bandwidth_override != 0) w = cm->bandwidth_override > 0 ? cm->bandwidth_override : INFINITY;
    m->launch[b] = launch;
    bw[b] = w;
    m->memory[b] = pb && pb->memory_bytes > 0 ? pb->memory_bytes : 0;
    m->limited |= m->memory[b] > 0;
  }
  for (int a = 0; a < nb; a++)
    for (int b = 0; b < nb; b++) {
      double link = fmin(bw[a], bw[b]);
      m->inv[a * nb + b] = a == b || isinf(link) || !(link > 0) ? 0 : 1 / link;
    }
  return m;
}

/* Seconds to move `bytes` from backend a to backend b. */
static double copy_s(const model *m, int a, int b, double bytes) {
  return bytes * m->inv[a * m->nb + b];
}

/* A node's compute on b when it runs there on its own. */
static double single_cost(const part_graph *g, const model *m, int n, int b) {
  double c = g->cost ? g->cost[(size_t)n * g->nbackends + b] : 0;
  return c > 0 ? c : m->node_cost;
}

/* --- claim groups ----------------------------------------------------------------*/

/* Which live group of backend b holds node n (of), and each group's fate
 * and cost per node when it runs whole (share). A group that shares a
 * node with an earlier group of its backend, or names a node or backend
 * out of range, is dropped at once: a node is in at most one live group
 * per backend. */
typedef struct gtab {
  int ng;
  int *of;             /* nnodes * nbackends, or NULL when there are no groups */
  unsigned char *fate; /* ngroups: PART_GROUP_*; LOST or KEPT while live       */
  double *share;       /* ngroups                                              */
} gtab;

static void gtab_free(gtab *t) {
  free(t->of);
  free(t->fate);
  free(t->share);
  memset(t, 0, sizeof *t);
}

static bool gtab_init(gtab *t, const part_graph *g, const model *m) {
  memset(t, 0, sizeof *t);
  int n = g->nnodes, nb = g->nbackends;
  if (!g->groups || g->ngroups <= 0) return true;
  t->ng = g->ngroups;
  t->of = malloc(sizeof *t->of * ((size_t)n * nb + 1));
  t->fate = calloc((size_t)t->ng, 1);
  t->share = calloc((size_t)t->ng, sizeof *t->share);
  if (!t->of || !t->fate || !t->share) {
    gtab_free(t);
    return false;
  }
  for (size_t i = 0; i < (size_t)n * nb; i++) t->of[i] = -1;
  for (int k = 0; k < t->ng; k++) {
    const part_group *gr = &g->groups[k];
    bool ok = gr->backend >= 0 && gr->backend < nb && gr->n > 0 && gr->nodes;
    for (int i = 0; ok && i < gr->n; i++)
      ok = gr->nodes[i] >= 0 && gr->nodes[i] < n && t->of[(size_t)gr->nodes[i] * nb + gr->backend] < 0;
    if (!ok) {
      t->fate[k] = PART_GROUP_OVERLAP;
      continue;
    }
    double sum = 0;
    for (int i = 0; i < gr->n; i++) {
      t->of[(size_t)gr->nodes[i] * nb + gr->backend] = k;
      sum += single_cost(g, m, gr->nodes[i], gr->backend);
    }
    t->share[k] = (gr->cost > 0 ? gr->cost : sum) / gr->n;
  }
  return true;
}

static bool alive(const gtab *t, int k) { return t->fate[k] <= PART_GROUP_KEPT; }

/* The live group of backend b holding node n, or -1. */
static int group_at(const gtab *t, int nb, int n, int b) {
  if (!t->of) return -1;
  int k = t->of[(size_t)n * nb + b];
  return k >= 0 && alive(t, k) ? k : -1;
}

/* --- consumers ---------------------------------------------------------------------*/

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

static void succs_free(succs *s) {
  free(s->start);
  free(s->list);
}

/* --- the objective -----------------------------------------------------------------*/

/* Which live groups run whole in one partition of their backend. */
static void kept_groups(const part_graph *g, const gtab *t, const int *node_part,
                        const int *part_backend, unsigned char *kept) {
  for (int k = 0; k < t->ng; k++) {
    kept[k] = 0;
    if (!alive(t, k)) continue;
    const part_group *gr = &g->groups[k];
    int p = node_part[gr->nodes[0]];
    bool whole = part_backend[p] == gr->backend;
    for (int i = 1; i < gr->n && whole; i++) whole = node_part[gr->nodes[i]] == p;
    kept[k] = whole;
  }
}

/* The modelled cost of a grouping: launches, compute (node_cost, when
 * given, receives each node's) and every value once to each other backend
 * that reads it. kept: ngroups bytes of scratch. */
static double cost_of(const part_graph *g, const model *m, const gtab *t,
                      const succs *s, const int *node_part, const int *part_backend, int npart,
                      unsigned char *kept, double *node_cost) {
  int nb = g->nbackends;
  double total = 0;
  for (int p = 0; p < npart; p++) total += m->launch[part_backend[p]];
  kept_groups(g, t, node_part, part_backend, kept);
  for (int v = 0; v < g->nnodes; v++) {
    int b = part_backend[node_part[v]], k = group_at(t, nb, v, b);
    double c = k >= 0 && kept[k] ? t->share[k] : single_cost(g, m, v, b);
    total += c;
    if (node_cost) node_cost[v] = c;
  }
  for (int p = 0; p < g->nnodes; p++) {
    int bp = part_backend[node_part[p]];
    uint64_t readers = 0;
    for (int e = s->start[p]; e < s->start[p + 1]; e++)
      readers |= UINT64_C(1) << part_backend[node_part[s->list[e]]];
    readers &= ~(UINT64_C(1) << bp);
    for (; readers; readers &= readers - 1) total += copy_s(m, bp, __builtin_ctzll(readers), g->bytes[p]);
  }
  return total;
}

double part_cost(const part_graph *g, const part_cost_model *cm, const int *node_part,
                 const int *part_backend, int npart) {
  if (g->nbackends < 1 || g->nbackends > MAX_BACKENDS) return -1;
  model *m = model_new(g, cm);
  gtab t;
  succs s = {0};
  bool ok = m && gtab_init(&t, g, m);
  unsigned char *kept = ok ? malloc((size_t)t.ng + 1) : NULL;
  double total = -1;
  if (ok && kept && succs_build(g, &s))
    total = cost_of(g, m, &t, &s, node_part, part_backend, npart, kept, NULL);
  succs_free(&s);
  free(kept);
  if (ok) gtab_free(&t);
  model_free(m);
  return total;
}

/* --- the search's state ----------------------------------------------------------------*/

typedef struct ctx {
  const part_graph *g;
  const part_cost_model *cm;
  model *m;
  gtab t;
  succs s;
  int n, nb;
  int *assign;          /* the backend of each node                         */
  int *first;           /* the priority choice                              */
  unsigned char *off;   /* nnodes * nbackends: PART_OFF_*                   */
  /* islands */
  int *parent, *members, *mstart, *stamp, *fill;
  bool *dirty;
  double *ccost;        /* each node's compute where it is now              */
  int *gcount, *gstamp;
  unsigned char *gwhole, *gsplit, *kept;
  int *gpart;
  /* memory */
  int *last_use;        /* the last reader of each node's outputs (itself: none) */
  bool *freed;
  /* a pass's snapshot */
  int *saved;
  unsigned char *saved_off, *saved_fate;
} ctx;

static void ctx_free(ctx *c) {
  void *all[] = {c->assign, c->first, c->off, c->parent, c->members, c->mstart, c->stamp, c->fill,
                 c->dirty, c->ccost, c->gcount, c->gstamp, c->gwhole, c->gsplit, c->kept, c->gpart,
                 c->last_use, c->freed, c->saved, c->saved_off, c->saved_fate};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]);
  model_free(c->m);
  gtab_free(&c->t);
  succs_free(&c->s);
}

static bool ctx_init(ctx *c, const part_graph *g, const part_cost_model *cm) {
  memset(c, 0, sizeof *c);
  c->g = g, c->cm = cm, c->n = g->nnodes, c->nb = g->nbackends;
  size_t n = c->n > 0 ? (size_t)c->n : 1, nnb = n * (size_t)c->nb, ng = (size_t)g->ngroups + 1;
  c->m = model_new(g, cm);
  if (!c->m || !gtab_init(&c->t, g, c->m) || !succs_build(g, &c->s)) return false;
  c->assign = malloc(sizeof *c->assign * n);
  c->first = malloc(sizeof *c->first * n);
  c->saved = malloc(sizeof *c->saved * n);
  c->off = calloc(nnb, 1);
  c->saved_off = malloc(nnb);
  c->parent = malloc(sizeof *c->parent * n);
  c->members = malloc(sizeof *c->members * n);
  c->mstart = malloc(sizeof *c->mstart * (n + 1));
  c->stamp = malloc(sizeof *c->stamp * n);
  c->fill = malloc(sizeof *c->fill * n);
  c->dirty = malloc(sizeof *c->dirty * n);
  c->ccost = malloc(sizeof *c->ccost * n);
  c->last_use = malloc(sizeof *c->last_use * n);
  c->freed = malloc(sizeof *c->freed * n);
  c->gcount = calloc(ng, sizeof *c->gcount);
  c->gstamp = calloc(ng, sizeof *c->gstamp);
  c->gpart = malloc(sizeof *c->gpart * ng);
  c->gwhole = calloc(ng, 1);
  c->gsplit = calloc(ng, 1);
  c->kept = calloc(ng, 1);
  c->saved_fate = calloc(ng, 1);
  if (!c->assign || !c->first || !c->saved || !c->off || !c->saved_off || !c->parent ||
      !c->members || !c->mstart || !c->stamp || !c->fill || !c->dirty || !c->ccost ||
      !c->last_use || !c->freed || !c->gcount || !c->gstamp || !c->gpart || !c->gwhole ||
      !c->gsplit || !c->kept || !c->saved_fate)
    return false;
  for (int v = 0; v < c->n; v++) {
    c->last_use[v] = v;
    for (int e = c->s.start[v]; e < c->s.start[v + 1]; e++)
      if (c->s.list[e] > c->last_use[v]) c->last_use[v] = c->s.list[e];
  }
  return true;
}

/* Node n claimed on its own by b, and not kept off it for memory. */
static bool single(const ctx *c, int n, int b) {
  size_t i = (size_t)n * c->nb + b;
  return c->g->claimed[i] && c->off[i] != PART_OFF_MEMORY;
}

/* Live groups whose nodes are all on their backend. */
static void whole_groups(ctx *c) {
  for (int k = 0; k < c->t.ng; k++) {
    const part_group *gr = &c->g->groups[k];
    bool whole = alive(&c->t, k);
    for (int i = 0; i < gr->n && whole; i++) whole = c->assign[gr->nodes[i]] == gr->backend;
    c->gwhole[k] = whole;
  }
}

/* The first backend in priority order, other than avoid, that claims n on
 * its own, where n fits (live: bytes alive per backend, or NULL for no
 * memory check); else the last such backend whatever its memory; -1 when
 * there is none. */
static int relocate(const ctx *c, int n, int avoid, const double *live) {
  int last = -1;
  for (int b = 0; b < c->nb; b++) {
    if (b == avoid || !single(c, n, b)) continue;
    if (!live || c->m->memory[b] <= 0 || live[b] + c->g->bytes[n] <= c->m->memory[b]) return b;
    last = b;
  }
  return last;
}

/* --- step 1: priority ----------------------------------------------------------------*/

static alloy_error *priority(ctx *c) {
  const part_graph *g = c->g;
  int n = c->n, nb = c->nb;
  for (int v = 0; v < n; v++) c->assign[v] = -1;
  for (int b = 0; b < nb; b++) {
    for (int k = 0; k < c->t.ng; k++) {
      const part_group *gr = &g->groups[k];
      if (gr->backend != b || !alive(&c->t, k)) continue;
      bool free_all = true;
      for (int i = 0; i < gr->n && free_all; i++) free_all = c->assign[gr->nodes[i]] < 0;
      for (int i = 0; i < gr->n && free_all; i++) c->assign[gr->nodes[i]] = b;
    }
    for (int v = 0; v < n; v++)
      if (c->assign[v] < 0 && single(c, v, b)) c->assign[v] = b;
  }
  /* A node claimed only in groups that lost a node to an earlier backend:
   * its first group takes its nodes back from where they went on their
   * own (never from a group of theirs). */
  for (int v = 0; v < n; v++) {
    if (c->assign[v] >= 0) continue;
    bool any = false;
    for (int b = 0; b < nb && c->assign[v] < 0; b++) {
      int k = group_at(&c->t, nb, v, b);
      if (k < 0) continue;
      any = true;
      const part_group *gr = &g->groups[k];
      bool ok = true;
      for (int i = 0; i < gr->n && ok; i++) {
        int u = gr->nodes[i], a = c->assign[u];
        ok = a < 0 || (single(c, u, a) && group_at(&c->t, nb, u, a) < 0);
      }
      for (int i = 0; i < gr->n && ok; i++) c->assign[gr->nodes[i]] = b;
    }
    if (c->assign[v] < 0)
      return any ? alloy_error_new(ALLOY_ERR_UNSUPPORTED,
                                   "node %d is claimed only in groups whose other nodes went to "
                                   "other backends", v)
                 : alloy_error_new(ALLOY_ERR_UNSUPPORTED, "node %d is claimed by no backend", v);
  }
  memcpy(c->first, c->assign, sizeof *c->assign * (size_t)n);
  return NULL;
}

/* --- step 2: memory --------------------------------------------------------------------*/

/* Drops group k, sending its nodes before `upto` that were on its backend
 * only through it to where they are claimed on their own; true when one
 * moved (the sweep's past changed). */
static bool drop_group(ctx *c, int k, unsigned char fate, int upto) {
  const part_group *gr = &c->g->groups[k];
  bool moved = false;
  c->t.fate[k] = fate;
  for (int i = 0; i < gr->n && gr->nodes[i] < upto; i++) {
    int u = gr->nodes[i];
    if (c->assign[u] != gr->backend || single(c, u, gr->backend)) continue;
    int to = relocate(c, u, gr->backend, NULL);
    if (to >= 0) c->assign[u] = to, moved = true;
  }
  return moved;
}

/* One sweep in topological order with the bytes alive on each backend
 * (a value lives from its producer to its last reader); a node that would
 * take its backend over the limit goes to the next backend that claims it
 * and has room, and is kept off the first one from then on. A node no
 * other backend claims on its own stays, over the limit. Sweeps again
 * while dropping a group changed what was already swept (each such sweep
 * drops a group, so there are at most ngroups + 1). */
static alloy_error *fit_memory(ctx *c) {
  if (!c->m->limited) return NULL;
  const part_graph *g = c->g;
  int n = c->n, nb = c->nb;
  for (int round = 0; round <= c->t.ng; round++) {
    double live[MAX_BACKENDS] = {0};
    bool again = false;
    memset(c->freed, 0, sizeof *c->freed * (size_t)n);
    for (int v = 0; v < n; v++) {
      int b = c->assign[v];
      if (!single(c, v, b) && group_at(&c->t, nb, v, b) < 0) {
        /* Its group was dropped earlier in this sweep. */
        int to = relocate(c, v, b, live);
        if (to < 0)
          return alloy_error_new(ALLOY_ERR_UNSUPPORTED,
                                 "node %d is claimed only in a group that was dropped", v);
        c->assign[v] = b = to;
      }
      double lim = c->m->memory[b];
      if (lim > 0 && live[b] + g->bytes[v] > lim) {
        int to = relocate(c, v, b, live);
        if (to >= 0) {
          int k = group_at(&c->t, nb, v, b);
          c->off[(size_t)v * nb + b] = PART_OFF_MEMORY;
          if (k >= 0) again |= drop_group(c, k, PART_GROUP_MEMORY, v);
          c->assign[v] = b = to;
        }
      }
      live[b] += g->bytes[v];
      for (int e = g->pred_start[v]; e < g->pred_start[v + 1]; e++) {
        int p = g->preds[e];
        if (c->last_use[p] == v && !c->freed[p]) c->freed[p] = true, live[c->assign[p]] -= g->bytes[p];
      }
      if (c->last_use[v] == v) c->freed[v] = true, live[b] -= g->bytes[v];
    }
    if (!again) return NULL;
  }
  return NULL;
}

/* --- step 3: islands --------------------------------------------------------------------*/

static int find(int *parent, int x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

static void unite(int *parent, int x, int y) {
  int a = find(parent, x), b = find(parent, y);
  if (a != b) parent[a < b ? b : a] = a < b ? a : b;
}

/* The islands of the assignment: a union-find forest whose roots are each
 * island's lowest node. A whole group is one island. */
static void islands_of(ctx *c) {
  const part_graph *g = c->g;
  for (int v = 0; v < c->n; v++) c->parent[v] = v;
  for (int v = 0; v < c->n; v++)
    for (int e = g->pred_start[v]; e < g->pred_start[v + 1]; e++)
      if (c->assign[g->preds[e]] == c->assign[v]) unite(c->parent, v, g->preds[e]);
  whole_groups(c);
  for (int k = 0; k < c->t.ng; k++)
    for (int i = 1; c->gwhole[k] && i < g->groups[k].n; i++)
      unite(c->parent, g->groups[k].nodes[0], g->groups[k].nodes[i]);
}

/* The change in modelled cost if island [lo, hi) of members moved from a
 * to b, or NAN when b cannot take all of it. */
static double move_delta(ctx *c, int r, int lo, int hi, int a, int b, int stamp_id) {
  const part_graph *g = c->g;
  const model *m = c->m;
  int nb = c->nb;
  /* Groups of b that the island holds whole run as groups there. */
  for (int k = lo; k < hi && c->t.of; k++) {
    int q = group_at(&c->t, nb, c->members[k], b);
    if (q < 0) continue;
    if (c->gstamp[q] != stamp_id) c->gstamp[q] = stamp_id, c->gcount[q] = 0;
    c->gcount[q]++;
  }
  double delta = 0;
  for (int k = lo; k < hi; k++) {
    int v = c->members[k], q = group_at(&c->t, nb, v, b);
    bool grouped = q >= 0 && c->gstamp[q] == stamp_id && c->gcount[q] == g->groups[q].n;
    if (!grouped && !single(c, v, b)) return NAN;
    delta += (grouped ? c->t.share[q] : single_cost(g, c->m, v, b)) - c->ccost[v];
  }
  /* Copies at the island's border, and the islands of b it would merge
   * with (each saves one of b's launches; the island's own launch on a
   * becomes one on b). */
  int merged = 0;
  for (int k = lo; k < hi; k++) {
    int v = c->members[k];
    for (int e = g->pred_start[v]; e < g->pred_start[v + 1]; e++) {
      int p = g->preds[e], q = find(c->parent, p), bp = c->assign[p];
      if (q == r) continue;
      delta += copy_s(m, bp, b, g->bytes[p]) - copy_s(m, bp, a, g->bytes[p]);
      if (bp == b && c->stamp[q] != stamp_id) c->stamp[q] = stamp_id, merged++;
    }
    for (int e = c->s.start[v]; e < c->s.start[v + 1]; e++) {
      int w = c->s.list[e], q = find(c->parent, w), bw = c->assign[w];
      if (q == r) continue;
      delta += copy_s(m, b, bw, g->bytes[v]) - copy_s(m, a, bw, g->bytes[v]);
      if (bw == b && c->stamp[q] != stamp_id) c->stamp[q] = stamp_id, merged++;
    }
  }
  return delta - m->launch[a] - (merged - 1) * m->launch[b];
}

/* One pass of island moves; returns the number of nodes moved. */
static int island_pass(ctx *c) {
  const part_graph *g = c->g;
  int n = c->n, nb = c->nb, moved = 0;
  islands_of(c);
  /* Islands as lists of members, by root, in node order. */
  memset(c->mstart, 0, sizeof *c->mstart * ((size_t)n + 1));
  for (int v = 0; v < n; v++) c->mstart[find(c->parent, v) + 1]++;
  for (int i = 0; i < n; i++) c->mstart[i + 1] += c->mstart[i];
  memset(c->fill, 0, sizeof *c->fill * (size_t)n);
  for (int v = 0; v < n; v++) {
    int r = find(c->parent, v);
    c->members[c->mstart[r] + c->fill[r]++] = v;
  }
  for (int v = 0; v < n; v++) {
    int k = group_at(&c->t, nb, v, c->assign[v]);
    c->ccost[v] = k >= 0 && c->gwhole[k] ? c->t.share[k] : single_cost(g, c->m, v, c->assign[v]);
  }
  memset(c->dirty, 0, sizeof *c->dirty * (size_t)n);
  memset(c->stamp, 0, sizeof *c->stamp * (size_t)n);
  memset(c->gstamp, 0, sizeof *c->gstamp * ((size_t)c->t.ng + 1));
  int stamp_id = 0;
  for (int r = 0; r < n; r++) {
    if (find(c->parent, r) != r || c->dirty[r]) continue;
    int a = c->assign[r], lo = c->mstart[r], hi = c->mstart[r + 1], best = -1;
    double best_delta = -1e-18;
    for (int b = 0; b < nb; b++) {
      if (b == a) continue;
      double delta = move_delta(c, r, lo, hi, a, b, ++stamp_id);
      /* A move must save more than rounding noise (1e-18 s). */
      if (delta < best_delta) best_delta = delta, best = b;
    }
    if (best < 0) continue;
    /* Move, and keep this pass's other moves away from its neighbours. */
    for (int k = lo; k < hi; k++) {
      int v = c->members[k];
      c->assign[v] = best;
      for (int e = g->pred_start[v]; e < g->pred_start[v + 1]; e++)
        c->dirty[find(c->parent, g->preds[e])] = true;
      for (int e = c->s.start[v]; e < c->s.start[v + 1]; e++)
        c->dirty[find(c->parent, c->s.list[e])] = true;
    }
    c->dirty[r] = true;
    moved += hi - lo;
  }
  return moved;
}

/* --- step 4: convex partitions -------------------------------------------------------------*/

/* Groups the assignment into partitions (out->node_part, part_backend,
 * npart); *split: some whole group could not be held by one partition
 * (c->gsplit says which). */
static alloy_error *group_parts(ctx *c, part_result *out, bool *split) {
  const part_graph *g = c->g;
  int n = c->n, nb = c->nb, newest[MAX_BACKENDS];
  size_t cap = n > 0 ? (size_t)n : 1;
  if (!out->node_part) out->node_part = malloc(sizeof *out->node_part * cap);
  if (!out->part_backend) out->part_backend = malloc(sizeof *out->part_backend * cap);
  if (!out->node_part || !out->part_backend) return oom();
  for (int b = 0; b < nb; b++) newest[b] = -1;
  whole_groups(c);
  for (int k = 0; k < c->t.ng; k++) c->gpart[k] = -1, c->gsplit[k] = 0;
  *split = false;
  out->npart = 0;
  for (int v = 0; v < n; v++) {
    int b = c->assign[v], k = group_at(&c->t, nb, v, b), p = -1;
    if (k >= 0 && !c->gwhole[k]) k = -1;
    if (k >= 0 && c->gpart[k] >= 0) {
      /* Into its group's partition, when its inputs are all there or older. */
      bool fits = true;
      for (int e = g->pred_start[v]; e < g->pred_start[v + 1] && fits; e++)
        fits = out->node_part[g->preds[e]] <= c->gpart[k];
      if (fits) p = c->gpart[k];
      else c->gsplit[k] = 1, *split = true;
    }
    if (p < 0) {
      p = newest[b];
      bool join = p >= 0;
      for (int e = g->pred_start[v]; e < g->pred_start[v + 1] && join; e++)
        join = out->node_part[g->preds[e]] <= p;
      if (!join) {
        p = newest[b] = out->npart++;
        out->part_backend[p] = b;
      }
    }
    if (k >= 0 && c->gpart[k] < 0) c->gpart[k] = p;
    out->node_part[v] = p;
  }
  return NULL;
}

/* The modelled cost of the assignment once grouped. */
static alloy_error *grouped_cost(ctx *c, double *cost) {
  part_result r = {0};
  bool split;
  alloy_error *e = group_parts(c, &r, &split);
  if (!e) *cost = cost_of(c->g, c->m, &c->t, &c->s, r.node_part, r.part_backend, r.npart, c->kept, NULL);
  part_result_free(&r);
  return e;
}

/* Groups, dropping every group no convex partition holds, until none is
 * split (each round drops one at least). */
static alloy_error *group_final(ctx *c, part_result *out) {
  for (;;) {
    bool split = false;
    alloy_error *e = group_parts(c, out, &split);
    if (e || !split) return e;
    int n = c->n;
    for (int k = 0; k < c->t.ng; k++)
      if (c->gsplit[k]) drop_group(c, k, PART_GROUP_SPLIT, n);
    if ((e = fit_memory(c))) return e;
  }
}

/* --- step 5: the whole graph on one backend ---------------------------------------------*/

/* What running every node on b costs, or INFINITY when b does not claim
 * them all or they do not fit its memory (checked exactly here, so an
 * earlier memory verdict on b does not count). */
static double whole_on(ctx *c, int b) {
  const part_graph *g = c->g;
  double lim = c->m->memory[b], total = c->m->launch[b], live = 0;
  memset(c->freed, 0, sizeof *c->freed * (size_t)c->n);
  for (int v = 0; v < c->n; v++) {
    int k = group_at(&c->t, c->nb, v, b);
    if (k < 0 && !g->claimed[(size_t)v * c->nb + b]) return INFINITY;
    total += k >= 0 ? c->t.share[k] : single_cost(g, c->m, v, b);
    live += g->bytes[v];
    if (lim > 0 && live > lim) return INFINITY;
    for (int e = g->pred_start[v]; e < g->pred_start[v + 1]; e++) {
      int p = g->preds[e];
      if (c->last_use[p] == v && !c->freed[p]) c->freed[p] = true, live -= g->bytes[p];
    }
    if (c->last_use[v] == v) c->freed[v] = true, live -= g->bytes[v];
  }
  return total;
}

alloy_error *part_compute(const part_graph *g, const part_cost_model *cm, part_result *out) {
  memset(out, 0, sizeof *out);
  int n = g->nnodes, nb = g->nbackends;
  if (nb < 1 || nb > MAX_BACKENDS)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "partition: %d backends (1 to %d)", nb,
                           MAX_BACKENDS);
  ctx c;
  alloy_error *e = ctx_init(&c, g, cm) ? NULL : oom();
  if (!e) e = priority(&c);
  if (!e) e = fit_memory(&c);
  /* A pass estimates each island move locally but is kept only when the
   * real objective, the grouped partitions' modelled cost, goes down.
   * Free launches and copies (both options negative) leave the priority
   * choice standing, as alloy_program_options promises: no moves. */
  bool free_model = cm->launch_override < 0 && cm->bandwidth_override < 0;
  double cost = 0;
  if (!e && !free_model) e = grouped_cost(&c, &cost);
  size_t nnb = (size_t)n * nb;
  for (int pass = 0; pass < 8 && !e && !free_model; pass++) {
    memcpy(c.saved, c.assign, sizeof *c.assign * (size_t)n);
    if (c.m->limited) memcpy(c.saved_off, c.off, nnb);
    if (c.t.ng) memcpy(c.saved_fate, c.t.fate, (size_t)c.t.ng);
    int moved = island_pass(&c);
    double after = cost;
    if (moved) e = fit_memory(&c);
    if (moved && !e) e = grouped_cost(&c, &after);
    if (e || !moved || !(after < cost)) {
      memcpy(c.assign, c.saved, sizeof *c.assign * (size_t)n);
      if (c.m->limited) memcpy(c.off, c.saved_off, nnb);
      if (c.t.ng) memcpy(c.t.fate, c.saved_fate, (size_t)c.t.ng);
      break;
    }
    cost = after;
  }
  if (!e) e = group_final(&c, out);
  if (!e) {
    out->node_cost = malloc(sizeof *out->node_cost * (n > 0 ? (size_t)n : 1));
    out->off = malloc(nnb + 1);
    out->group_fate = malloc((size_t)c.t.ng + 1);
    if (!out->node_cost || !out->off || !out->group_fate) e = oom();
  }
  if (!e) {
    /* A dropped group whose nodes still ended whole in one partition of
     * its backend runs as a group after all (as part_cost counts it). */
    if (c.t.ng) memcpy(c.saved_fate, c.t.fate, (size_t)c.t.ng);
    for (int k = 0; k < c.t.ng; k++)
      if (c.t.fate[k] == PART_GROUP_SPLIT || c.t.fate[k] == PART_GROUP_MEMORY)
        c.t.fate[k] = PART_GROUP_LOST;
    out->cost = cost_of(g, c.m, &c.t, &c.s, out->node_part, out->part_backend, out->npart, c.kept,
                        out->node_cost);
    /* The whole graph on one backend, when that is cheaper still. */
    for (int b = 0; b < nb && !free_model; b++) {
      double whole = whole_on(&c, b);
      if (!(whole < out->cost * (1 - 1e-12))) continue;
      for (int v = 0; v < n; v++) {
        c.assign[v] = b, out->node_part[v] = 0;
        c.off[(size_t)v * nb + b] = PART_OFF_NONE;
      }
      out->part_backend[0] = b;
      out->npart = n > 0;
      out->cost = cost_of(g, c.m, &c.t, &c.s, out->node_part, out->part_backend, out->npart,
                          c.kept, out->node_cost);
    }
    kept_groups(g, &c.t, out->node_part, out->part_backend, c.kept);
    for (int k = 0; k < c.t.ng; k++)
      out->group_fate[k] = c.kept[k] ? PART_GROUP_KEPT
                           : c.saved_fate[k] == PART_GROUP_KEPT ? PART_GROUP_LOST : c.saved_fate[k];
    memcpy(out->off, c.off, nnb);
    for (int v = 0; v < n; v++) {
      out->moved += c.assign[v] != c.first[v];
      /* Every step keeps each node where it is claimed; say so if not. */
      int b = c.assign[v], k = group_at(&c.t, nb, v, b);
      if (!e && !g->claimed[(size_t)v * nb + b] && !(k >= 0 && c.kept[k]))
        e = alloy_error_new(ALLOY_ERR_INTERNAL, "partition: node %d ended on backend %d, which "
                            "claims it neither alone nor in a kept group", v, b);
    }
  }
  ctx_free(&c);
  if (e) part_result_free(out);
  return e;
}

void part_result_free(part_result *r) {
  free(r->node_part);
  free(r->part_backend);
  free(r->node_cost);
  free(r->off);
  free(r->group_fate);
  memset(r, 0, sizeof *r);
}

/* --- reasons ----------------------------------------------------------------------------*/

/* The copies node v would need on backend x: each input from another
 * backend (seen: per producer, the last node + 1 that counted it), and its
 * outputs to each other backend that reads them. */
static double copies_on(const part_graph *g, const model *m, const succs *s, const int *where, int v,
                        int x, int *seen) {
  double total = 0;
  uint64_t to = 0;
  for (int e = g->pred_start[v]; e < g->pred_start[v + 1]; e++) {
    int p = g->preds[e];
    if (seen[p] == v + 1) continue;
    seen[p] = v + 1;
    if (where[p] != x) total += copy_s(m, where[p], x, g->bytes[p]);
  }
  for (int e = s->start[v]; e < s->start[v + 1]; e++) to |= UINT64_C(1) << where[s->list[e]];
  for (to &= ~(UINT64_C(1) << x); to; to &= to - 1)
    total += copy_s(m, x, __builtin_ctzll(to), g->bytes[v]);
  return total;
}

/* Lets copies_on count v's inputs again. */
static void seen_reset(const part_graph *g, int *seen, int v) {
  for (int e = g->pred_start[v]; e < g->pred_start[v + 1]; e++) seen[g->preds[e]] = 0;
}

/* Whether a neighbour of v runs on x (else v there opens a partition). */
static bool neighbour_on(const part_graph *g, const succs *s, const int *where, int v, int x) {
  for (int e = g->pred_start[v]; e < g->pred_start[v + 1]; e++)
    if (where[g->preds[e]] == x) return true;
  for (int e = s->start[v]; e < s->start[v + 1]; e++)
    if (where[s->list[e]] == x) return true;
  return false;
}

/* One line: why node v, on backend c, is not on backend b < c. The group
 * of b that holds v is in_group (the first that named it), or -1. */
static void reason_line(FILE *f, const part_graph *g, const model *m,
                        const succs *s, const part_result *r, const int *where, int *seen,
                        const char *name, int v, int b, int in_group) {
  int nb = g->nbackends, c = where[v];
  size_t i = (size_t)v * nb + b;
  bool memory = r->off && r->off[i] == PART_OFF_MEMORY;
  if (g->taken && g->taken[i]) {
    fprintf(f, "%s: %s", name, g->taken[i]);
  } else if (memory) {
    fprintf(f, "%s: over its memory limit (%.0f bytes)", name, m->memory[b]);
  } else if (!g->claimed[i] && in_group >= 0) {
    bool split = r->group_fate && r->group_fate[in_group] == PART_GROUP_SPLIT;
    fprintf(f, "%s: part of a group that %s", name,
            split ? "no convex partition could hold" : "went elsewhere");
  } else if (!g->claimed[i]) {
    const char *why = g->reject ? g->reject[i] : NULL;
    fprintf(f, "%s: not claimed (%s)", name, why && *why ? why : "no reason given");
  } else {
    double here = r->node_cost[v] + copies_on(g, m, s, where, v, c, seen);
    seen_reset(g, seen, v);
    double there = single_cost(g, m, v, b), copies = copies_on(g, m, s, where, v, b, seen);
    seen_reset(g, seen, v);
    fprintf(f, "%s: would cost %.1e s plus %.1e s of copies", name, there, copies);
    if (!neighbour_on(g, s, where, v, b) && m->launch[b] > 0)
      fprintf(f, " and %.1e s of launch", m->launch[b]);
    fprintf(f, ", against %.1e s where it runs", here);
  }
}

char **part_reasons(const part_graph *g, const part_cost_model *cm, const part_result *r,
                    const char *const *names) {
  int n = g->nnodes, nb = g->nbackends;
  if (nb < 1 || nb > MAX_BACKENDS) return NULL;
  char **out = calloc(n > 0 ? (size_t)n : 1, sizeof *out);
  int *where = malloc(sizeof *where * (n > 0 ? (size_t)n : 1));
  int *seen = calloc(n > 0 ? (size_t)n : 1, sizeof *seen);
  int *in_group = g->groups && g->ngroups > 0 ? malloc(sizeof *in_group * ((size_t)n * nb + 1)) : NULL;
  model *m = model_new(g, cm);
  succs s = {0};
  bool ok = out && where && seen && m && succs_build(g, &s) &&
            (in_group || !g->groups || g->ngroups <= 0);
  for (int v = 0; ok && v < n; v++) where[v] = r->part_backend[r->node_part[v]];
  if (ok && in_group) {
    /* The group of each backend that holds each node: the first that named it. */
    for (size_t i = 0; i < (size_t)n * nb; i++) in_group[i] = -1;
    for (int k = g->ngroups - 1; k >= 0; k--) {
      const part_group *gr = &g->groups[k];
      for (int j = 0; gr->backend >= 0 && gr->backend < nb && j < gr->n; j++)
        if (gr->nodes[j] >= 0 && gr->nodes[j] < n) in_group[(size_t)gr->nodes[j] * nb + gr->backend] = k;
    }
  }
  for (int v = 0; ok && v < n; v++) {
    if (where[v] == 0) continue;
    size_t len = 0;
    FILE *f = open_memstream(&out[v], &len);
    if (!f) {
      ok = false;
      break;
    }
    for (int b = 0; b < where[v]; b++) {
      if (b) fputc('\n', f);
      reason_line(f, g, m, &s, r, where, seen, names[b], v, b,
                  in_group ? in_group[(size_t)v * nb + b] : -1);
    }
    ok = fclose(f) == 0;
  }
  succs_free(&s);
  model_free(m);
  free(where);
  free(seen);
  free(in_group);
  if (!ok && out) {
    part_reasons_free(out, n);
    return NULL;
  }
  return out;
}

void part_reasons_free(char **reasons, int nnodes) {
  if (!reasons) return;
  for (int v = 0; v < nnodes; v++) free(reasons[v]);
  free(reasons);
}
