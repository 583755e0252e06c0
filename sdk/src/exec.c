/*
 * sdk/src/exec.c: the executor. It runs compiled partitions in order, each
 * on its backend's queue, and keeps every value where it is used
 * (docs/runtime.md has the picture):
 *
 *   - parameters, buffers and constants are copied to each backend that
 *     reads them once, and stay (copied again only when a run passes other
 *     data for them);
 *   - a partition's outputs live in its backend's arena, placed by
 *     liveness (arena.c) once per set of sizes; a value read by a later
 *     partition of the same backend never leaves it;
 *   - a value read on another backend moves once, by the shortest way the
 *     two offer: a plain memcpy when both are host-visible, one copy into
 *     or out of the host-visible side, else two copies through a staging
 *     buffer (page-locked when a plugin offers host_buffer_allocate);
 *   - the host orders work with events: each backend's partitions and
 *     copies follow one another on its queue, and the host waits for an
 *     event only where one backend needs another's result, or where a
 *     size is known only once a partition has run.
 *
 * Backends are probed once for host-visible memory (buffer_host_pointer of
 * a small buffer), which decides the transfers. A copy that reads or
 * writes another backend's memory outside that backend's queue keeps its
 * bytes for the whole run, so that the arena's reuse, which is safe in
 * queue order, stays safe across queues. A run ends by waiting for every
 * event it made, on success and on failure alike: no plugin is left
 * writing into memory the host is about to reuse.
 *
 * The one exception is a run ordered on a stream of the caller's
 * (alloy_program_run_on_stream): when all of it runs on that stream's
 * backend, in that backend's memory, it is queued on the caller's stream
 * (queue_import) and the call returns without waiting, as a library call on
 * a CUDA stream does. Such a run leaves a tail, an event at its end: the
 * next run is ordered after it (on the device when it can be, else on the
 * host), the caller's device memory it borrowed is released once it has
 * passed, and nothing the run used (arena, weights) is released or moved
 * before then. A stream-ordered run that cannot stay on the device waits
 * for the caller's stream first and then runs as any other.
 *
 * An executor serves one run at a time. Threads running one program at
 * once each get their own from the program's pool (exec_pool, keyed by
 * thread, at the end of this file), so everything above (queues, arenas,
 * slots, outputs, events) is one thread's; asynchronous runs (exec_async)
 * use the executor of the thread that started them.
 */
#include "sdk/src/exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/checked.h"
#include "sdk/src/arena.h"

enum { XFER_MEMCPY, XFER_TO_HOST_SIDE, XFER_FROM_HOST_SIDE, XFER_STAGED };

/* One backend the run uses. */
typedef struct xbackend {
  alloy_loaded *row;
  alloy_queue *queue;     /* created at exec_new                          */
  bool host_visible;      /* buffers have host pointers                   */
  alloy_buffer *arena;    /* the intermediates, placed by arena.c         */
  uint64_t arena_bytes;
  char *arena_host;       /* its host pointer, when host-visible          */
  alloy_event *last;      /* its latest pending event of this run, or NULL */
} xbackend;

/* A value on one backend: a partition's output on its own backend, a copy
 * of one on another backend, or a run input on a backend that reads it. */
typedef enum { SLOT_OUTPUT, SLOT_CROSS, SLOT_INPUT } slot_kind;

typedef struct slot {
  slot_kind kind;
  int b;                  /* local backend index                          */
  exec_src src;           /* the value                                    */
  int first, last;        /* steps it is alive (arena placement)          */
  int xfer;               /* SLOT_CROSS: XFER_*                           */
  int from;               /* SLOT_CROSS: the slot it is copied from       */
  /* Per run. */
  bool known;             /* sizes known before the run                   */
  bool ready;             /* SLOT_CROSS: copied in this run               */
  alloy_dtype dtype;
  int rank;
  int64_t sizes[ALLOY_MAX_RANK], strides[ALLOY_MAX_RANK];
  uint64_t bytes;
  alloy_buffer *buf;      /* arena, own, or resident                      */
  uint64_t offset;
  bool own;               /* buf is this slot's alone, released at run end */
  alloy_buffer *imported; /* SLOT_INPUT: the caller's device memory on this
                           * backend, read in place this run; SLOT_OUTPUT:
                           * the caller's output memory the partition
                           * writes this run (direct_output); else NULL   */
  int outs;               /* SLOT_OUTPUT: run outputs it is               */
  const void *caller_last; /* SLOT_OUTPUT: the caller's memory it went to
                           * last run (direct_output's repeat test)       */
  bool crossed;           /* SLOT_OUTPUT: copied to another backend       */
  /* SLOT_INPUT: resident copy. */
  const void *res_data;   /* the host data last copied in (weights)       */
  uint64_t res_cap;       /* bytes of buf                                 */
  /* SLOT_CROSS, XFER_STAGED: host staging memory. */
  void *stage;
  uint64_t stage_cap;
  bool stage_pinned;
} slot;

typedef struct xpart {
  int b;                  /* local backend                                */
  int *in_slot;           /* nin                                          */
  int *out_slot;          /* nout                                         */
  alloy_event *done;      /* this run's completion event, or NULL         */
  bool dynamic;           /* an input's size is known only at run time    */
  alloy_tensor *t;        /* nin + nout: what execute borrows until done  */
  program_choice choice;  /* what runs for this run's sizes (program.c):
                           * this executor's own, so that threads running
                           * one program each keep theirs                 */
} xpart;

typedef struct pending {
  int b;
  alloy_event *ev;
} pending;

struct exec {
  exec_desc d;
  alloy_runtime *rt;
  int nb;
  xbackend be[16];
  xpart *parts;
  slot *slots;
  int nslots;
  int *in_slots;          /* ninputs * nb: slot of input i on backend b, or -1 */
  int *out_slot;          /* by run output: slot, or -1 for a run input   */
  /* The sizes of the last run's inputs: the layout is kept while they
   * repeat. */
  int64_t *last_sizes;
  int nlast;
  bool planned;
  /* This run's events, waited for and released at its end. */
  pending *pend;
  int npend, cap_pend;
  /* Outputs, owned here until the next run. */
  void **out_data;
  uint64_t *out_cap;
  int64_t *out_sizes;     /* noutputs * ALLOY_MAX_RANK */
  /* This run's borrowed device memory (released at its end, not freed)
   * and host temporaries for memory that changes backend. */
  struct { alloy_loaded *row; alloy_buffer *buf; } *imports;
  int nimports, cap_imports;
  /* Host memory a run left on a caller's stream lent its plugin (the
   * tensors each execute borrows until done), freed with the imports. */
  void **lent;
  int nlent, cap_lent;
  void **temps;
  int ntemps, cap_temps;
  /* The last run left in flight on a caller's stream (its work queued,
   * not waited for): its end on local backend tail_b, and the caller's
   * device memory borrowed by it and by runs before it, imports[0..
   * nretired) and lent[], released once the tail has passed. */
  alloy_event *tail;
  int tail_b;
  int nretired;
  bool host_read;         /* this run queued a copy from host memory      */
  bool staying;           /* this run may be left on the caller's stream  */
  uint64_t wait_ns;       /* this run's time blocked in event waits       */
  int concurrent;         /* this run's partitions issued while another
                           * backend still had work in flight             */
  alloy_run_stats stats;
};

static alloy_error *oom(void) {
  return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
}

const alloy_run_stats *exec_stats(const exec *x) { return &x->stats; }
int exec_concurrent(const exec *x) { return x->concurrent; }

static int local_backend(exec *x, int runtime_index) {
  for (int b = 0; b < x->nb; b++)
    if (x->be[b].row == &x->rt->backends[runtime_index]) return b;
  return -1;
}

static int slot_add(exec *x, slot s) {
  x->slots[x->nslots] = s;
  return x->nslots++;
}

/* Whether the backend's buffers have host pointers: asked once, of a
 * buffer made for the question. */
static alloy_error *probe(xbackend *xb) {
  alloy_buffer *buf = NULL;
  alloy_error *e = xb->row->api->buffer_allocate(xb->row->be, 0, 64, &buf);
  if (e) return alloy_error_wrap(e, "backend %s: buffer_allocate", xb->row->name);
  xb->host_visible = xb->row->api->buffer_host_pointer(xb->row->be, buf) != NULL;
  xb->row->api->buffer_release(xb->row->be, buf);
  return NULL;
}

static alloy_error *tail_settle(exec *x, bool wait);

void exec_free(exec *x) {
  if (!x) return;
  alloy_error_free(tail_settle(x, true));
  for (int i = 0; i < x->nslots; i++) {
    slot *s = &x->slots[i];
    xbackend *xb = &x->be[s->b];
    if (s->buf && (s->own || s->kind == SLOT_INPUT)) xb->row->api->buffer_release(xb->row->be, s->buf);
    if (s->stage) {
      if (s->stage_pinned) x->be[x->slots[s->from].b].row->api->host_buffer_release(
          x->be[x->slots[s->from].b].row->be, s->stage);
      else free(s->stage);
    }
  }
  for (int b = 0; b < x->nb; b++) {
    xbackend *xb = &x->be[b];
    if (xb->arena) xb->row->api->buffer_release(xb->row->be, xb->arena);
    if (xb->queue) xb->row->api->queue_release(xb->row->be, xb->queue);
  }
  for (int q = 0; x->parts && q < x->d.nparts; q++) {
    free(x->parts[q].in_slot);
    free(x->parts[q].out_slot);
    free(x->parts[q].t);
    program_choice_free(&x->parts[q].choice);
  }
  for (int k = 0; x->out_data && k < x->d.noutputs; k++) free(x->out_data[k]);
  free(x->out_data);
  free(x->out_cap);
  free(x->out_sizes);
  free(x->parts);
  free(x->slots);
  free(x->in_slots);
  free(x->out_slot);
  free(x->last_sizes);
  free(x->pend);
  free(x->imports);
  for (int i = 0; i < x->nlent; i++) free(x->lent[i]);
  free(x->lent);
  free(x->temps);
  free(x);
}

/* The transfer for a value going from backend a to backend b. */
static int xfer_kind(const exec *x, int a, int b) {
  bool ha = x->be[a].host_visible, hb = x->be[b].host_visible;
  return ha && hb ? XFER_MEMCPY : hb ? XFER_TO_HOST_SIDE : ha ? XFER_FROM_HOST_SIDE : XFER_STAGED;
}

alloy_error *exec_new(const exec_desc *d, exec **out) {
  *out = NULL;
  exec *x = calloc(1, sizeof *x);
  if (!x) return oom();
  x->d = *d;
  x->rt = d->rt;
  int np = d->nparts, nio = 0;
  for (int q = 0; q < np; q++) nio += d->parts[q].nin + d->parts[q].nout;
  /* Slots: every output, at most one cross copy per partition input, and
   * one per (input, backend). */
  x->parts = calloc((size_t)np + 1, sizeof *x->parts);
  x->slots = calloc((size_t)nio + (size_t)d->ninputs * 16 + 1, sizeof *x->slots);
  x->out_slot = calloc((size_t)d->noutputs + 1, sizeof *x->out_slot);
  x->out_data = calloc((size_t)d->noutputs + 1, sizeof *x->out_data);
  x->out_cap = calloc((size_t)d->noutputs + 1, sizeof *x->out_cap);
  x->out_sizes = calloc((size_t)d->noutputs * ALLOY_MAX_RANK + 1, sizeof *x->out_sizes);
  alloy_error *e = (!x->parts || !x->slots || !x->out_slot || !x->out_data || !x->out_cap ||
                    !x->out_sizes) ? oom() : NULL;
  /* The backends, in order of first use. */
  for (int q = 0; q < np && !e; q++) {
    int b = local_backend(x, d->parts[q].backend);
    if (b < 0) {
      if (x->nb == 16) {
        e = alloy_error_new(ALLOY_ERR_UNSUPPORTED, "a run may use at most 16 backends");
        break;
      }
      b = x->nb++;
      x->be[b].row = &x->rt->backends[d->parts[q].backend];
      if (!(e = probe(&x->be[b])) &&
          (e = x->be[b].row->api->queue_create(x->be[b].row->be, 0, &x->be[b].queue)))
        e = alloy_error_wrap(e, "backend %s: queue_create", x->be[b].row->name);
    }
    x->parts[q].b = b;
  }
  if (!e) {
    x->in_slots = malloc(sizeof *x->in_slots * ((size_t)d->ninputs * (size_t)x->nb + 1));
    if (!x->in_slots) e = oom();
    for (int i = 0; !e && i < d->ninputs * x->nb; i++) x->in_slots[i] = -1;
  }
  /* Outputs first, so that a partition's inputs find their producers. */
  for (int q = 0; q < np && !e; q++) {
    const exec_part *p = &d->parts[q];
    xpart *xp = &x->parts[q];
    xp->in_slot = calloc((size_t)p->nin + 1, sizeof *xp->in_slot);
    xp->out_slot = calloc((size_t)p->nout + 1, sizeof *xp->out_slot);
    xp->t = calloc((size_t)(p->nin + p->nout) + 1, sizeof *xp->t);
    if (!xp->in_slot || !xp->out_slot || !xp->t) {
      e = oom();
      break;
    }
    for (int j = 0; j < p->nout; j++)
      xp->out_slot[j] = slot_add(x, (slot){.kind = SLOT_OUTPUT, .b = xp->b, .src = {q, j},
                                           .first = q, .last = q});
  }
  /* The cross copy of output slot `from` on backend b, by from * 16 + b. */
  int nout_slots = x->nslots;
  int *cross_of = e ? NULL : malloc(sizeof *cross_of * ((size_t)nout_slots * 16 + 1));
  if (!e && !cross_of) e = oom();
  for (size_t i = 0; cross_of && i < (size_t)nout_slots * 16; i++) cross_of[i] = -1;
  for (int q = 0; q < np && !e; q++) {
    const exec_part *p = &d->parts[q];
    xpart *xp = &x->parts[q];
    for (int i = 0; i < p->nin; i++) {
      exec_src s = p->in[i];
      if (s.part < 0) {
        int *at = &x->in_slots[s.index * x->nb + xp->b];
        if (*at < 0) *at = slot_add(x, (slot){.kind = SLOT_INPUT, .b = xp->b, .src = s});
        xp->in_slot[i] = *at;
        continue;
      }
      int from = x->parts[s.part].out_slot[s.index];
      slot *src = &x->slots[from];
      if (src->b == xp->b) {
        if (q > src->last) src->last = q;
        xp->in_slot[i] = from;
        continue;
      }
      /* Another backend's value: one copy per (value, backend). */
      int *at_b = &cross_of[(size_t)from * 16 + (size_t)xp->b];
      int c = *at_b;
      if (c < 0) {
        int kind = xfer_kind(x, src->b, xp->b);
        /* The side whose queue does not order the copy keeps the bytes
         * for the whole run. */
        bool dst_outside = kind == XFER_MEMCPY || kind == XFER_TO_HOST_SIDE;
        bool src_outside = kind == XFER_MEMCPY || kind == XFER_FROM_HOST_SIDE;
        c = slot_add(x, (slot){.kind = SLOT_CROSS, .b = xp->b, .src = s, .from = from,
                               .xfer = kind, .first = dst_outside ? 0 : q, .last = q});
        *at_b = c;
        src = &x->slots[from];
        src->crossed = true;
        if (src_outside) src->last = np;
        else if (q > src->last) src->last = q;
      }
      if (q > x->slots[c].last) x->slots[c].last = q;
      xp->in_slot[i] = c;
    }
  }
  free(cross_of);
  /* Run outputs stay until they are copied out at the end. */
  for (int k = 0; k < d->noutputs && !e; k++) {
    exec_src s = d->outputs[k];
    x->out_slot[k] = s.part < 0 ? -1 : x->parts[s.part].out_slot[s.index];
    if (s.part >= 0) x->slots[x->out_slot[k]].last = np, x->slots[x->out_slot[k]].outs++;
  }
  x->stats.struct_size = ALLOY_RUN_STATS_STRUCT_SIZE;
  if (e) {
    exec_free(x);
    return e;
  }
  *out = x;
  return NULL;
}

/* ---- per run -------------------------------------------------------------- */

static alloy_error *pend_add(exec *x, int b, alloy_event *ev) {
  if (!ev) return NULL;
  if (x->npend == x->cap_pend) {
    int cap = x->cap_pend ? 2 * x->cap_pend : 32;
    pending *np = realloc(x->pend, sizeof *np * (size_t)cap);
    if (!np) {
      /* Cannot remember it: wait now rather than lose it. */
      alloy_loaded *row = x->be[b].row;
      alloy_error *we = row->api->event_wait(row->be, ev);
      row->api->event_release(row->be, ev);
      alloy_error_free(we);
      return oom();
    }
    x->pend = np;
    x->cap_pend = cap;
  }
  x->pend[x->npend++] = (pending){b, ev};
  x->be[b].last = ev;
  return NULL;
}

/* Waits for ev of backend b on the host (it stays pending: released at
 * the run's end). */
static alloy_error *host_wait(exec *x, int b, alloy_event *ev) {
  if (!ev) return NULL;
  alloy_loaded *row = x->be[b].row;
  if (row->api->event_query(row->be, ev)) return NULL;
  x->stats.host_waits++;
  uint64_t t0 = trace_clock_ns();
  alloy_error *e = row->api->event_wait(row->be, ev);
  x->wait_ns += trace_clock_ns() - t0;
  return e ? alloy_error_wrap(e, "backend %s: event_wait", row->name) : NULL;
}

/* Waits for and releases every event of the run; the first error wins. */
static alloy_error *drain(exec *x, alloy_error *e) {
  uint64_t t0 = trace_clock_ns();
  for (int i = 0; i < x->npend; i++) {
    alloy_loaded *row = x->be[x->pend[i].b].row;
    alloy_error *we = row->api->event_wait(row->be, x->pend[i].ev);
    if (we && !e) e = alloy_error_wrap(we, "backend %s: event_wait", row->name);
    else alloy_error_free(we);
    row->api->event_release(row->be, x->pend[i].ev);
  }
  x->npend = 0;
  for (int b = 0; b < x->nb; b++) x->be[b].last = NULL;
  x->wait_ns += trace_clock_ns() - t0;
  return e;
}

/* Forgets every event of the run without waiting (a run left on a
 * caller's stream: its tail stands for them). */
static void forget(exec *x) {
  for (int i = 0; i < x->npend; i++) x->be[x->pend[i].b].row->api->event_release(x->be[x->pend[i].b].row->be, x->pend[i].ev);
  x->npend = 0;
  for (int b = 0; b < x->nb; b++) x->be[b].last = NULL;
}

/* Waits on the host for event ev of row, counting the time as this run's
 * waiting. */
static alloy_error *wait_timed(exec *x, alloy_loaded *row, alloy_event *ev) {
  uint64_t t0 = trace_clock_ns();
  alloy_error *e = row->api->event_wait(row->be, ev);
  x->wait_ns += trace_clock_ns() - t0;
  return e;
}

/* The run left in flight on a caller's stream, if any: with wait, waited
 * for on the host, else only asked whether it has passed. Once it has,
 * the memory it borrowed is released and it is gone. Its error (work on
 * the device failed) is returned, naming it. */
static alloy_error *tail_settle(exec *x, bool wait) {
  if (!x->tail) return NULL;
  alloy_loaded *row = x->be[x->tail_b].row;
  alloy_error *e = NULL;
  if (wait) {
    e = wait_timed(x, row, x->tail);
    if (e) e = alloy_error_wrap(e, "backend %s: the previous run, left on the caller's stream", row->name);
  } else if (!row->api->event_query(row->be, x->tail)) {
    return NULL;
  }
  row->api->event_release(row->be, x->tail);
  x->tail = NULL;
  for (int i = 0; i < x->nretired; i++) x->imports[i].row->api->buffer_release(x->imports[i].row->be, x->imports[i].buf);
  memmove(x->imports, x->imports + x->nretired, sizeof *x->imports * (size_t)(x->nimports - x->nretired));
  x->nimports -= x->nretired;
  for (int i = 0; i < x->nlent; i++) free(x->lent[i]);
  x->nlent = 0;
  x->nretired = 0;
  return e;
}

static void contiguous(slot *s) {
  int64_t st = 1;
  for (int d = s->rank - 1; d >= 0; d--) {
    s->strides[d] = st;
    st *= s->sizes[d] > 1 ? s->sizes[d] : 1;
  }
}

/* Bytes of a tensor; sizes the graph checked, but a plugin-allocated
 * output's come from the plugin: overflow-checked (ir/checked.h), and
 * UINT64_MAX when they do not fit, which no buffer can satisfy. */
static uint64_t bytes_of(alloy_dtype t, int rank, const int64_t *sizes) {
  int64_t bytes = 0;
  if (!alloy_checked_tensor_bytes(sizes, rank, alloy_dtype_size(t), NULL, &bytes))
    return UINT64_MAX;
  return (uint64_t)bytes;
}

/* The sizes of every value: run inputs as given, each partition's outputs
 * from its inputs' (program_choose); a partition fed by a value whose size
 * is known only after running is dynamic, and so are its outputs. */
static alloy_error *size_all(exec *x, const alloy_host_tensor *inputs) {
  alloy_host_tensor stack[64], *view = stack;
  int most = 0;
  for (int q = 0; q < x->d.nparts; q++)
    if (x->d.parts[q].nin > most) most = x->d.parts[q].nin;
  if (most > 64 && !(view = malloc(sizeof *view * (size_t)most))) return oom();
  alloy_error *e = NULL;
  for (int q = 0; q < x->d.nparts && !e; q++) {
    const exec_part *p = &x->d.parts[q];
    xpart *xp = &x->parts[q];
    xp->dynamic = false;
    for (int i = 0; i < p->nin; i++) {
      slot *s = &x->slots[xp->in_slot[i]];
      if (s->kind == SLOT_INPUT) {
        const alloy_host_tensor *t = &inputs[s->src.index];
        view[i] = *t;
        continue;
      }
      const slot *o = s->kind == SLOT_CROSS ? &x->slots[s->from] : s;
      xp->dynamic |= !o->known;
      view[i] = (alloy_host_tensor){.struct_size = ALLOY_STRUCT_SIZE(alloy_host_tensor, data),
                                    .dtype = o->dtype, .rank = o->rank, .sizes = o->sizes};
    }
    const alloy_graph *g = alloy_program_graph(p->prog);
    int64_t sizes[ALLOY_MAX_RANK * 8], *osz = p->nout <= 8 ? sizes : malloc(sizeof *osz * ALLOY_MAX_RANK * (size_t)p->nout);
    bool known[8], *okn = p->nout <= 8 ? known : malloc((size_t)p->nout);
    if (!osz || !okn) e = oom();
    if (!e && !xp->dynamic) e = program_choose(p->prog, &xp->choice, view, p->nin, osz, okn);
    for (int j = 0; j < p->nout && !e; j++) {
      slot *s = &x->slots[xp->out_slot[j]];
      const alloy_value *v = alloy_graph_output(g, j);
      s->dtype = alloy_value_dtype(v);
      s->rank = alloy_value_rank(v);
      s->known = !xp->dynamic && okn[j];
      if (s->known) {
        memcpy(s->sizes, &osz[j * ALLOY_MAX_RANK], sizeof *s->sizes * (size_t)s->rank);
        contiguous(s);
        s->bytes = bytes_of(s->dtype, s->rank, s->sizes);
      }
    }
    if (osz != sizes) free(osz);
    if (okn != known) free(okn);
    if (e) e = alloy_error_wrap(e, "partition %d (%s)", q, x->be[xp->b].row->name);
  }
  /* Copies take their source's sizes. */
  for (int i = 0; i < x->nslots && !e; i++) {
    slot *s = &x->slots[i];
    if (s->kind != SLOT_CROSS) continue;
    const slot *o = &x->slots[s->from];
    s->dtype = o->dtype, s->rank = o->rank, s->known = o->known, s->bytes = o->bytes;
    memcpy(s->sizes, o->sizes, sizeof s->sizes);
    memcpy(s->strides, o->strides, sizeof s->strides);
  }
  if (view != stack) free(view);
  return e;
}

/* Places the known-size outputs and copies of each backend in its arena,
 * growing the arena when the layout needs more. */
static alloy_error *place_all(exec *x) {
  arena_item *items = malloc(sizeof *items * ((size_t)x->nslots + 1));
  uint64_t *offs = malloc(sizeof *offs * ((size_t)x->nslots + 1));
  int *which = malloc(sizeof *which * ((size_t)x->nslots + 1));
  alloy_error *e = (!items || !offs || !which) ? oom() : NULL;
  x->stats.arena_bytes = x->stats.arena_ideal_bytes = 0;
  for (int b = 0; b < x->nb && !e; b++) {
    int n = 0;
    for (int i = 0; i < x->nslots; i++) {
      slot *s = &x->slots[i];
      if (s->b != b || s->kind == SLOT_INPUT || !s->known) continue;
      items[n] = (arena_item){s->bytes, s->first, s->last};
      which[n++] = i;
    }
    uint64_t total = 0, ideal = 0;
    e = arena_place(items, n, offs, &total, &ideal);
    xbackend *xb = &x->be[b];
    if (!e && total > xb->arena_bytes) {
      if (xb->arena) xb->row->api->buffer_release(xb->row->be, xb->arena);
      xb->arena = NULL;
      xb->arena_bytes = 0;
      e = xb->row->api->buffer_allocate(xb->row->be, 0, total, &xb->arena);
      if (e) e = alloy_error_wrap(e, "backend %s: allocating an arena of %llu bytes", xb->row->name,
                                  (unsigned long long)total);
      else xb->arena_bytes = total;
      xb->arena_host = !e && xb->host_visible ? xb->row->api->buffer_host_pointer(xb->row->be, xb->arena)
                                               : NULL;
    }
    for (int k = 0; k < n && !e; k++) {
      x->slots[which[k]].buf = xb->arena;
      x->slots[which[k]].offset = offs[k];
      x->slots[which[k]].own = false;
    }
    x->stats.arena_bytes += total;
    x->stats.arena_ideal_bytes += ideal;
  }
  free(items), free(offs), free(which);
  return e;
}

/* Whether this run's input sizes repeat the last run's (then sizes and
 * placement carry over). Remembers them. */
static bool same_sizes(exec *x, const alloy_host_tensor *inputs) {
  int n = 0;
  for (int i = 0; i < x->d.ninputs; i++) n += 1 + inputs[i].rank;
  if (n > x->nlast) {
    int64_t *ls = realloc(x->last_sizes, sizeof *ls * (size_t)n);
    if (!ls) return false;
    x->last_sizes = ls;
    x->planned = false;
  }
  bool same = x->planned && n == x->nlast;
  int k = 0;
  for (int i = 0; i < x->d.ninputs; i++) {
    same = same && x->last_sizes[k] == inputs[i].rank;
    x->last_sizes[k++] = inputs[i].rank;
    for (int d = 0; d < inputs[i].rank; d++) {
      same = same && x->last_sizes[k] == inputs[i].sizes[d];
      x->last_sizes[k++] = inputs[i].sizes[d];
    }
  }
  x->nlast = n;
  return same;
}

static void *slot_host(const exec *x, const slot *s) {
  const xbackend *xb = &x->be[s->b];
  if (!xb->host_visible || !s->buf) return NULL;
  char *base = s->buf == xb->arena ? xb->arena_host : xb->row->api->buffer_host_pointer(xb->row->be, s->buf);
  return base ? base + s->offset : NULL;
}

/* Gives a slot of unknown size its own buffer, once its sizes are known. */
static alloy_error *own_buffer(exec *x, slot *s) {
  xbackend *xb = &x->be[s->b];
  contiguous(s);
  s->bytes = bytes_of(s->dtype, s->rank, s->sizes);
  s->offset = 0;
  s->own = true;
  alloy_error *e = xb->row->api->buffer_allocate(xb->row->be, 0, s->bytes ? s->bytes : 1, &s->buf);
  return e ? alloy_error_wrap(e, "backend %s: buffer_allocate", xb->row->name) : NULL;
}

/* ---- the caller's device memory (alloy_run_tensor) ------------------------ */

/* Wraps bytes of the caller's device memory at ptr on backend row as a
 * buffer, released (not freed) at the run's end. */
static alloy_error *import(exec *x, alloy_loaded *row, void *ptr, uint64_t bytes, alloy_buffer **out) {
  if (!row->api->buffer_import)
    return alloy_error_new(ALLOY_ERR_UNSUPPORTED, "backend %s cannot take device memory made outside "
                           "Alloy (its plugin has no buffer_import): pass host memory", row->name);
  if (x->nimports == x->cap_imports) {
    int cap = x->cap_imports ? 2 * x->cap_imports : 8;
    void *n = realloc(x->imports, sizeof *x->imports * (size_t)cap);
    if (!n) return oom();
    x->imports = n;
    x->cap_imports = cap;
  }
  alloy_error *e = row->api->buffer_import(row->be, 0, ptr, bytes ? bytes : 1, NULL, out);
  if (e) return alloy_error_wrap(e, "backend %s: buffer_import", row->name);
  x->imports[x->nimports].row = row;
  x->imports[x->nimports++].buf = *out;
  return NULL;
}

/* Host memory for this run alone, freed at its end. */
static alloy_error *temp_memory(exec *x, uint64_t bytes, void **out) {
  if (x->ntemps == x->cap_temps) {
    int cap = x->cap_temps ? 2 * x->cap_temps : 8;
    void **n = realloc(x->temps, sizeof *n * (size_t)cap);
    if (!n) return oom();
    x->temps = n;
    x->cap_temps = cap;
  }
  if (!(*out = malloc(bytes ? bytes : 1))) return oom();
  x->temps[x->ntemps++] = *out;
  return NULL;
}

/* The tensors partition q's execute borrows until it completes: the
 * partition's own array, or in a run left on a caller's stream, a new
 * one (the run before may still be reading the old), kept until the
 * tail has passed. */
static alloy_tensor *lent_tensors(exec *x, int q, bool fresh) {
  xpart *xp = &x->parts[q];
  if (!fresh) return xp->t;
  if (x->nlent == x->cap_lent) {
    int cap = x->cap_lent ? 2 * x->cap_lent : 8;
    void **n = realloc(x->lent, sizeof *n * (size_t)cap);
    if (!n) return NULL;
    x->lent = n;
    x->cap_lent = cap;
  }
  size_t count = (size_t)(x->d.parts[q].nin + x->d.parts[q].nout) + 1;
  alloy_tensor *t = calloc(count, sizeof *t);
  if (t) x->lent[x->nlent++] = t;
  return t;
}

/* The caller's device memory of backend `where` (t's) read into dst,
 * synchronously: the caller's data is ready when the run starts. */
static alloy_error *device_read(exec *x, int where, const alloy_host_tensor *t, void *dst) {
  alloy_loaded *row = &x->rt->backends[where];
  uint64_t bytes = bytes_of(t->dtype, t->rank, t->sizes);
  alloy_buffer *buf;
  alloy_error *e = import(x, row, t->data, bytes, &buf);
  if (!e && bytes) e = row->api->buffer_copy_to_host(row->be, dst, buf, 0, bytes, NULL, NULL);
  return e ? alloy_error_wrap(e, "backend %s: reading an input's device memory", row->name) : NULL;
}

/* The same into host memory of this run, *out. */
static alloy_error *device_to_host(exec *x, int where, const alloy_host_tensor *t, void **out) {
  alloy_error *e = temp_memory(x, bytes_of(t->dtype, t->rank, t->sizes), out);
  return e ? e : device_read(x, where, t, *out);
}

/* Releases the run's imports and frees its temporaries (its work done). */
static void run_memory_free(exec *x) {
  for (int i = x->nretired; i < x->nimports; i++)
    x->imports[i].row->api->buffer_release(x->imports[i].row->be, x->imports[i].buf);
  x->nimports = x->nretired;
  for (int i = 0; i < x->ntemps; i++) free(x->temps[i]);
  x->ntemps = 0;
  for (int i = 0; i < x->nslots; i++) x->slots[i].imported = NULL;
}

/* Run input i onto backend b: parameters, buffers and constants once. */
static alloy_error *upload(exec *x, slot *s, const alloy_host_tensor *t, int where) {
  xbackend *xb = &x->be[s->b];
  const alloy_plugin_api *api = xb->row->api;
  bool resident = x->d.resident && x->d.resident[s->src.index];
  if (where >= 0) {
    s->dtype = t->dtype;
    s->rank = t->rank;
    memcpy(s->sizes, t->sizes, sizeof *s->sizes * (size_t)t->rank);
    contiguous(s);
    if (&x->rt->backends[where] == xb->row) /* on this backend already: read in place */
      return import(x, xb->row, t->data, bytes_of(t->dtype, t->rank, t->sizes), &s->imported);
    /* on another backend: through host memory */
    alloy_host_tensor h = *t;
    alloy_error *e = device_to_host(x, where, t, &h.data);
    return e ? e : upload(x, s, &h, -1);
  }
  s->dtype = t->dtype;
  s->rank = t->rank;
  memcpy(s->sizes, t->sizes, sizeof *s->sizes * (size_t)t->rank);
  contiguous(s);
  uint64_t bytes = bytes_of(t->dtype, t->rank, t->sizes);
  if (resident && s->buf && s->res_data == t->data && s->bytes == bytes) return NULL;
  s->bytes = bytes;
  if (!s->buf || s->res_cap < bytes) {
    alloy_error *te = s->buf ? tail_settle(x, true) : NULL; /* a run in flight may still read it */
    if (te) return te;
    if (s->buf) api->buffer_release(xb->row->be, s->buf);
    s->buf = NULL;
    s->res_cap = 0;
    alloy_error *e = api->buffer_allocate(xb->row->be, 0, bytes ? bytes : 1, &s->buf);
    if (e) return alloy_error_wrap(e, "backend %s: buffer_allocate", xb->row->name);
    s->res_cap = bytes;
  }
  s->offset = 0;
  s->res_data = resident ? t->data : NULL;
  if (!bytes) return NULL;
  alloy_event *ev = NULL;
  x->host_read = true;
  alloy_error *e = api->buffer_copy_from_host(xb->row->be, s->buf, 0, t->data, bytes, xb->queue, &ev);
  if (e) {
    s->res_data = NULL;
    return alloy_error_wrap(e, "backend %s: copying input %d in", xb->row->name, s->src.index);
  }
  if (resident) x->stats.weight_bytes_in += bytes;
  else x->stats.input_bytes_in += bytes;
  return pend_add(x, s->b, ev);
}

static alloy_error *stage_memory(exec *x, slot *s, uint64_t bytes) {
  if (s->stage && s->stage_cap >= bytes) return NULL;
  xbackend *src = &x->be[x->slots[s->from].b];
  if (s->stage) {
    if (s->stage_pinned) src->row->api->host_buffer_release(src->row->be, s->stage);
    else free(s->stage);
    s->stage = NULL;
  }
  const alloy_plugin_api *api = src->row->api;
  s->stage_pinned = ALLOY_HAS_FIELD(api, alloy_plugin_api, host_buffer_release) &&
                    api->host_buffer_allocate && api->host_buffer_release;
  if (s->stage_pinned) {
    alloy_error *e = api->host_buffer_allocate(src->row->be, bytes ? bytes : 1, &s->stage);
    if (e) {
      alloy_error_free(e);
      s->stage_pinned = false;
      s->stage = NULL;
    }
  }
  if (!s->stage && !(s->stage = malloc(bytes ? bytes : 1))) return oom();
  s->stage_cap = bytes;
  return NULL;
}

/* Copies the cross-backend value s in, the shortest way there is. */
static alloy_error *transfer(exec *x, slot *s) {
  slot *o = &x->slots[s->from];
  xbackend *a = &x->be[o->b], *b = &x->be[s->b];
  xpart *producer = &x->parts[o->src.part];
  alloy_error *e = NULL;
  if (!s->known) {
    s->dtype = o->dtype, s->rank = o->rank;
    memcpy(s->sizes, o->sizes, sizeof s->sizes);
    if ((e = own_buffer(x, s))) return e;
  }
  uint64_t bytes = o->bytes;
  s->ready = true;
  x->stats.cross_bytes += bytes;
  if (!bytes) return NULL;
  alloy_event *ev = NULL;
  switch (s->xfer) {
    case XFER_MEMCPY:
      if ((e = host_wait(x, producer->b, producer->done))) return e;
      memcpy(slot_host(x, s), slot_host(x, o), bytes);
      return NULL;
    case XFER_TO_HOST_SIDE:
      /* On a's queue, after the producer: b waits on the host. */
      e = a->row->api->buffer_copy_to_host(a->row->be, slot_host(x, s), o->buf, o->offset, bytes,
                                           a->queue, &ev);
      if (e) return alloy_error_wrap(e, "backend %s: copying a value out", a->row->name);
      if (!(e = pend_add(x, o->b, ev))) e = host_wait(x, o->b, ev);
      return e;
    case XFER_FROM_HOST_SIDE:
      if ((e = host_wait(x, producer->b, producer->done))) return e;
      e = b->row->api->buffer_copy_from_host(b->row->be, s->buf, s->offset, slot_host(x, o), bytes,
                                             b->queue, &ev);
      if (e) return alloy_error_wrap(e, "backend %s: copying a value in", b->row->name);
      return pend_add(x, s->b, ev);
    default: /* XFER_STAGED */
      if ((e = stage_memory(x, s, bytes))) return e;
      x->stats.staged_bytes += bytes;
      e = a->row->api->buffer_copy_to_host(a->row->be, s->stage, o->buf, o->offset, bytes, a->queue,
                                           &ev);
      if (e) return alloy_error_wrap(e, "backend %s: copying a value out", a->row->name);
      if ((e = pend_add(x, o->b, ev)) || (e = host_wait(x, o->b, ev))) return e;
      ev = NULL;
      e = b->row->api->buffer_copy_from_host(b->row->be, s->buf, s->offset, s->stage, bytes,
                                             b->queue, &ev);
      if (e) return alloy_error_wrap(e, "backend %s: copying a value in", b->row->name);
      return pend_add(x, s->b, ev);
  }
}

static alloy_tensor tensor_of(slot *s) {
  return (alloy_tensor){.struct_size = ALLOY_TENSOR_STRUCT_SIZE, .buffer = s->imported ? s->imported : s->buf,
                        .offset = s->imported ? 0 : s->offset, .dtype = s->dtype, .rank = s->rank,
                        .sizes = s->sizes, .strides = s->strides};
}

/* Issues partition q on its backend's queue. */
static alloy_error *issue_part(exec *x, int q);

/* Issues partition q, counting the host's own time in it (not its waits)
 * as dispatch time. */
static alloy_error *issue(exec *x, int q) {
  uint64_t t0 = trace_clock_ns(), w0 = x->wait_ns;
  alloy_error *e = issue_part(x, q);
  uint64_t spent = trace_clock_ns() - t0, waited = x->wait_ns - w0;
  x->stats.dispatch_s += (double)(spent > waited ? spent - waited : 0) * 1e-9;
  return e;
}

static alloy_error *issue_part(exec *x, int q) {
  const exec_part *p = &x->d.parts[q];
  xpart *xp = &x->parts[q];
  xbackend *xb = &x->be[xp->b];
  /* The plugin borrows the tensors until the execute completes: they
   * live in the partition's own array (or a run's), not on this stack. */
  alloy_tensor *t = lent_tensors(x, q, x->staying);
  if (!t) return oom();
  alloy_error *e = NULL;
  for (int i = 0; i < p->nin && !e; i++) {
    slot *s = &x->slots[xp->in_slot[i]];
    if (s->kind == SLOT_CROSS && !s->ready) e = transfer(x, s);
    t[i] = tensor_of(s);
  }
  /* A dynamic partition learns its sizes now that its inputs are there. */
  if (!e && xp->dynamic) {
    alloy_host_tensor hv[32];
    int64_t osz[ALLOY_MAX_RANK * 8];
    bool okn[8];
    if (p->nin > 32 || p->nout > 8)
      e = alloy_error_new(ALLOY_ERR_UNSUPPORTED, "partition %d: a data-dependent partition takes at "
                          "most 32 inputs and 8 outputs", q);
    for (int i = 0; i < p->nin && !e; i++)
      hv[i] = (alloy_host_tensor){.struct_size = ALLOY_STRUCT_SIZE(alloy_host_tensor, data),
                                  .dtype = t[i].dtype, .rank = t[i].rank, .sizes = t[i].sizes};
    if (!e) e = program_choose(p->prog, &xp->choice, hv, p->nin, osz, okn);
    for (int j = 0; j < p->nout && !e; j++) {
      slot *s = &x->slots[xp->out_slot[j]];
      s->buf = NULL;
      if (!okn[j]) continue;
      memcpy(s->sizes, &osz[j * ALLOY_MAX_RANK], sizeof *s->sizes * (size_t)s->rank);
      e = own_buffer(x, s);
    }
  }
  bool after = false; /* an output whose size only running tells */
  for (int j = 0; j < p->nout && !e; j++) {
    slot *s = &x->slots[xp->out_slot[j]];
    if (!s->known && !xp->dynamic) s->buf = NULL;
    after |= !s->buf;
    t[p->nin + j] = tensor_of(s);
  }
  xp->done = NULL;
  /* Does another backend still have work in flight? Its latest pending
   * event tells: one query per backend, not a walk of the run's events. */
  for (int ob = 0; ob < x->nb && !e; ob++) {
    alloy_event *ev = x->be[ob].last;
    if (ob != xp->b && ev && !x->be[ob].row->api->event_query(x->be[ob].row->be, ev)) {
      x->concurrent++;
      break;
    }
  }
  uint64_t t0 = trace_on() ? trace_clock_ns() : 0;
  if (!e) e = program_launch(p->prog, &xp->choice, t, p->nin, t + p->nin, p->nout, xb->queue, &xp->done);
  if (t0) trace_range("alloy", "issue", xb->row->name, t0, trace_clock_ns());
  if (!e) e = pend_add(x, xp->b, xp->done);
  x->stats.partitions_run++;
  if (!e && after) {
    /* The plugin allocated those outputs: wait, then take them over. */
    e = host_wait(x, xp->b, xp->done);
    for (int j = 0; j < p->nout; j++) {
      slot *s = &x->slots[xp->out_slot[j]];
      if (s->buf) continue;
      s->buf = t[p->nin + j].buffer;
      s->offset = t[p->nin + j].offset;
      s->own = s->buf != NULL;
      if (!e && !s->buf)
        e = alloy_error_new(ALLOY_ERR_INTERNAL, "backend %s: output %d has data-dependent sizes "
                            "and the plugin did not allocate it", xb->row->name, j);
      if (!e) {
        int64_t want[ALLOY_MAX_RANK];
        memcpy(want, s->strides, sizeof want);
        contiguous(s);
        for (int d = 0; d < s->rank && !e; d++)
          if (s->sizes[d] > 1 && want[d] != s->strides[d])
            e = alloy_error_new(ALLOY_ERR_UNSUPPORTED, "backend %s: output %d came back "
                                "non-contiguous", xb->row->name, j);
        s->bytes = bytes_of(s->dtype, s->rank, s->sizes);
        if (!e && s->bytes == UINT64_MAX)
          e = alloy_error_new(ALLOY_ERR_INTERNAL, "backend %s: output %d came back with sizes "
                              "that are negative or too large (a plugin bug)", xb->row->name, j);
      }
    }
  }
  return e ? alloy_error_wrap(e, "partition %d (%s)", q, xb->row->name) : NULL;
}

/* "f32[2, 3]" into buf (cap bytes). */
static void shape_format(alloy_dtype t, int rank, const int64_t *sizes, char *buf, size_t cap) {
  size_t n = (size_t)snprintf(buf, cap, "%s[", alloy_dtype_short_name(t));
  for (int d = 0; d < rank && n < cap; d++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%lld", d ? ", " : "", (long long)sizes[d]);
  if (n < cap) snprintf(buf + n, cap - n, "]");
}

/* Whether the caller's output tensor is the one the run makes; if not,
 * an error naming the output and what differs. */
static alloy_error *output_matches(int k, const alloy_host_tensor *want, alloy_dtype dt, int rank,
                                   const int64_t *sizes) {
  bool same = want->dtype == dt && want->rank == rank;
  for (int d = 0; same && d < rank; d++) same = want->sizes[d] == sizes[d];
  if (same) return NULL;
  char got[160], made[160];
  shape_format(want->dtype, want->rank, want->sizes, got, sizeof got);
  shape_format(dt, rank, sizes, made, sizeof made);
  return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "output %d: the caller's tensor is %s, the run makes %s",
                         k, got, made);
}

/* Output k's value (input pass of the run, on the host or, pass_where >=
 * 0, in that backend's device memory; else slot s) into host memory, bytes
 * of it: a copy on s's queue, waited for when wait (the host reads it next)
 * and counted as bytes out when count. */
static alloy_error *value_to_host(exec *x, int k, slot *s, const alloy_host_tensor *pass, int pass_where,
                                  void *host, uint64_t bytes, bool wait, bool count) {
  if (pass && pass_where >= 0) return device_read(x, pass_where, pass, host);
  if (pass) return memcpy(host, pass->data, bytes), NULL;
  xbackend *xb = &x->be[s->b];
  if (count) x->stats.output_bytes_out += bytes;
  alloy_event *ev = NULL;
  alloy_error *e = xb->row->api->buffer_copy_to_host(xb->row->be, host, s->buf, s->offset, bytes, xb->queue, &ev);
  if (e) return alloy_error_wrap(e, "backend %s: copying output %d out", xb->row->name, k);
  e = pend_add(x, s->b, ev);
  return !e && wait ? host_wait(x, s->b, ev) : e;
}

/* Graph output k into host memory owned here, or (out_where non-NULL)
 * into the caller's memory: host memory (-1) or device memory of backend
 * out_where[k], by a copy on that backend when the value is there, else
 * through host memory. */
static alloy_error *download(exec *x, int k, const alloy_host_tensor *inputs, const int *in_where,
                             alloy_host_tensor *out, const int *out_where) {
  exec_src src = x->d.outputs[k];
  const alloy_host_tensor *pass = src.part < 0 ? &inputs[src.index] : NULL;
  slot *s = pass ? NULL : &x->slots[x->out_slot[k]];
  alloy_dtype dt = pass ? pass->dtype : s->dtype;
  int rank = pass ? pass->rank : s->rank;
  const int64_t *sizes = pass ? pass->sizes : s->sizes;
  uint64_t bytes = bytes_of(dt, rank, sizes);
  int pass_where = pass && in_where ? in_where[src.index] : -1;
  alloy_loaded *row = NULL; /* the backend of the caller's device memory, if that is where it goes */
  alloy_buffer *dst = NULL;
  void *host;
  alloy_error *e = NULL;
  if (out_where) {
    if (!out || (e = output_matches(k, out, dt, rank, sizes))) return e;
    if (s && s->imported) return NULL; /* the partition wrote it there (direct_output) */
    host = out->data;
    if (out_where[k] >= 0) {
      row = &x->rt->backends[out_where[k]];
      if ((e = import(x, row, out->data, bytes, &dst)) || !bytes) return e;
      if (s && x->be[s->b].row == row) { /* on that backend: a copy there */
        alloy_event *ev = NULL;
        e = row->api->buffer_copy(row->be, dst, 0, s->buf, s->offset, bytes, x->be[s->b].queue, &ev);
        return e ? alloy_error_wrap(e, "backend %s: copying output %d", row->name, k) : pend_add(x, s->b, ev);
      }
      if ((e = temp_memory(x, bytes, &host))) return e; /* elsewhere: through host memory */
    }
  } else {
    if (x->out_cap[k] < bytes || !x->out_data[k]) {
      free(x->out_data[k]);
      x->out_cap[k] = 0;
      if (!(x->out_data[k] = malloc(bytes ? bytes : 1))) return oom();
      x->out_cap[k] = bytes;
    }
    int64_t *osz = &x->out_sizes[k * ALLOY_MAX_RANK];
    memcpy(osz, sizes, sizeof *osz * (size_t)rank);
    if (out) *out = (alloy_host_tensor){.struct_size = out->struct_size, .dtype = dt, .rank = rank,
                                        .sizes = osz, .data = x->out_data[k]};
    host = x->out_data[k];
  }
  if (!bytes) return NULL;
  e = value_to_host(x, k, s, pass, pass_where, host, bytes, dst != NULL, dst == NULL);
  if (!e && dst) e = row->api->buffer_copy_from_host(row->be, dst, 0, host, bytes, NULL, NULL);
  return e && dst ? alloy_error_wrap(e, "backend %s: writing output %d", row->name, k) : e;
}

/* Sizes and placement for these inputs: carried over while they repeat. */
static alloy_error *plan_run(exec *x, const alloy_host_tensor *inputs) {
  if (same_sizes(x, inputs)) return NULL;
  x->planned = false;
  /* New sizes move values and may grow the arena: not under a run in flight. */
  alloy_error *te = tail_settle(x, true);
  if (te) return te;
  for (int i = 0; i < x->nslots; i++) {
    slot *s = &x->slots[i];
    if (s->kind != SLOT_INPUT && !s->own) s->buf = NULL;
  }
  alloy_error *e = size_all(x, inputs);
  if (!e) e = place_all(x);
  x->planned = !e;
  return e;
}

alloy_error *exec_output_sizes(exec *x, const alloy_host_tensor *inputs, int k, int *rank, int64_t *sizes) {
  if (k < 0 || k >= x->d.noutputs)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "no output %d: the graph has %d", k, x->d.noutputs);
  exec_src src = x->d.outputs[k];
  if (src.part < 0) {
    *rank = inputs[src.index].rank;
    memcpy(sizes, inputs[src.index].sizes, sizeof *sizes * (size_t)*rank);
    return NULL;
  }
  alloy_error *e = plan_run(x, inputs);
  if (e) return e;
  const slot *s = &x->slots[x->out_slot[k]];
  if (!s->known)
    return alloy_error_new(ALLOY_ERR_UNSUPPORTED, "output %d: its sizes depend on the data; only a run "
                           "tells them", k);
  *rank = s->rank;
  memcpy(sizes, s->sizes, sizeof *sizes * (size_t)s->rank);
  return NULL;
}

/* Outputs this size or larger are written by their partition straight
 * into the caller's device memory; smaller ones are copied there after
 * (a copy costs less than capturing the CUDA graph again for the new
 * address). */
#define DIRECT_OUTPUT_MIN_BYTES (UINT64_C(1) << 20)

/* Run output k into the caller's device memory out (of backend out_where),
 * written there by the partition that computes it rather than copied
 * after: when that partition is on the same backend, the value is this
 * output alone, on no other backend, its sizes known before the run (and
 * the caller's tensor of those), large enough, its memory overlaps none of
 * the run's inputs on that backend, and it is the memory the last run's
 * output went to. A partition's outputs are part of what a captured graph
 * replays: an application that keeps the last output while it asks for
 * the next gets two addresses in turn, and writing into each would capture
 * the graph anew every run; a repeated address (an output dropped before
 * the next call, as a loop over a model does) is written in place. */
static alloy_error *direct_output(exec *x, int k, const alloy_host_tensor *inputs, const int *in_where,
                                  const alloy_host_tensor *out, int out_where) {
  exec_src src = x->d.outputs[k];
  if (src.part < 0 || out_where < 0) return NULL;
  slot *s = &x->slots[x->out_slot[k]];
  alloy_loaded *row = &x->rt->backends[out_where];
  const void *last = s->caller_last;
  s->caller_last = out->data;
  if (x->be[s->b].row != row || s->outs != 1 || s->crossed || !s->known ||
      s->bytes < DIRECT_OUTPUT_MIN_BYTES || s->imported || out->data != last)
    return NULL;
  alloy_error *e = output_matches(k, out, s->dtype, s->rank, s->sizes);
  if (e) return e;
  const char *o = out->data;
  for (int i = 0; in_where && i < x->d.ninputs; i++) {
    if (in_where[i] < 0 || &x->rt->backends[in_where[i]] != row) continue;
    const char *d = inputs[i].data;
    uint64_t n = bytes_of(inputs[i].dtype, inputs[i].rank, inputs[i].sizes);
    if (d < o + s->bytes && o < d + n) return NULL; /* read and written at once: copied after */
  }
  return import(x, row, out->data, s->bytes, &s->imported);
}

static bool records_events(const alloy_loaded *row) {
  return ALLOY_HAS_FIELD(row->api, alloy_plugin_api, event_record) && row->api->event_record;
}

/* Whether a run on a caller's stream of local backend b can be left on it:
 * everything runs on b, sized before it starts; every input is in b's
 * memory or a weight (resident: the program's, which outlives the run);
 * every output asked for is computed on b and written into b's memory. */
static bool run_stays_on(const exec *x, int b, const int *in_where, const int *out_where, int noutputs) {
  if (x->nb != 1 || b != 0) return false;
  for (int q = 0; q < x->d.nparts; q++)
    if (x->parts[q].dynamic) return false;
  for (int i = 0; i < x->nslots; i++)
    if (x->slots[i].kind != SLOT_INPUT && !x->slots[i].known) return false;
  for (int i = 0; i < x->d.ninputs; i++) {
    int w = in_where ? in_where[i] : -1;
    if (w < 0 ? !(x->d.resident && x->d.resident[i]) : &x->rt->backends[w] != x->be[b].row) return false;
  }
  for (int k = 0; k < noutputs; k++)
    if (x->d.outputs[k].part < 0 || !out_where || out_where[k] < 0 ||
        &x->rt->backends[out_where[k]] != x->be[b].row)
      return false;
  return true;
}

/* The start of a run on the caller's stream `on` that cannot stay on it:
 * the host waits until the stream has reached the call, so that the
 * caller's device inputs are written; the run is then an ordinary one. */
static alloy_error *stream_reached(exec *x, const exec_stream *on) {
  alloy_loaded *row = &x->rt->backends[on->backend];
  if (!records_events(row))
    return alloy_error_new(ALLOY_ERR_UNSUPPORTED, "backend %s cannot order a run on the caller's "
                           "stream (its plugin has no event_record)", row->name);
  alloy_event *ev = NULL;
  alloy_error *e = row->api->event_record(row->be, on->queue, &ev);
  if (!e && ev) {
    e = wait_timed(x, row, ev);
    row->api->event_release(row->be, ev);
  }
  return e ? alloy_error_wrap(e, "backend %s: waiting for the caller's stream", row->name) : NULL;
}

/* Orders the run that stays on queue q of local backend b after the tail
 * of the last one: on the device when the plugin can, else on the host. */
static alloy_error *tail_order(exec *x, int b, alloy_queue *q) {
  if (!x->tail) return NULL;
  alloy_loaded *row = x->be[b].row;
  if (x->tail_b != b || !ALLOY_HAS_FIELD(row->api, alloy_plugin_api, queue_wait_event) ||
      !row->api->queue_wait_event)
    return tail_settle(x, true);
  alloy_error *e = row->api->queue_wait_event(row->be, q, x->tail);
  if (e) return alloy_error_wrap(e, "backend %s: queue_wait_event", row->name);
  return tail_settle(x, false);
}

alloy_error *exec_run_placed(exec *x, const alloy_host_tensor *inputs, const int *in_where,
                             alloy_host_tensor *outputs, const int *out_where, int noutputs,
                             const exec_stream *on) {
  uint64_t t0 = trace_clock_ns();
  x->wait_ns = 0;
  x->concurrent = 0;
  x->host_read = false;
  alloy_error *e = plan_run(x, inputs);
  /* Left on the caller's stream, or an ordinary run once the stream is reached. */
  int sb = on && !e ? local_backend(x, on->backend) : -1;
  bool stays = sb >= 0 && run_stays_on(x, sb, in_where, out_where, noutputs) && records_events(x->be[sb].row);
  alloy_queue *own = stays ? x->be[sb].queue : NULL;
  x->staying = stays;
  if (stays) {
    e = tail_order(x, sb, on->queue);
    x->be[sb].queue = on->queue;
  } else if (!e) {
    e = tail_settle(x, true);
    if (!e && on) e = stream_reached(x, on);
  }
  int lent_mark = x->nlent; /* what runs before this one lent (settled above when they are over) */
  for (int i = 0; i < x->nslots; i++) x->slots[i].ready = false;
  for (int i = 0; i < x->nslots && !e; i++) {
    slot *s = &x->slots[i];
    if (s->kind == SLOT_INPUT) e = upload(x, s, &inputs[s->src.index], in_where ? in_where[s->src.index] : -1);
  }
  for (int k = 0; out_where && k < noutputs && !e; k++)
    e = direct_output(x, k, inputs, in_where, &outputs[k], out_where[k]);
  for (int q = 0; q < x->d.nparts && !e; q++) e = issue(x, q);
  for (int k = 0; k < x->d.noutputs && !e; k++)
    e = download(x, k, inputs, in_where, k < noutputs ? &outputs[k] : NULL, out_where);
  alloy_event *tail = NULL;
  if (stays && !e && !x->host_read) {
    /* Queued, not waited for: its end is the tail, the memory it
     * borrowed stays with the run before it until then. */
    alloy_loaded *row = x->be[sb].row;
    e = row->api->event_record(row->be, on->queue, &tail);
    if (e) e = alloy_error_wrap(e, "backend %s: event_record", row->name);
  }
  if (tail) {
    forget(x);
    if (x->tail) x->be[x->tail_b].row->api->event_release(x->be[x->tail_b].row->be, x->tail);
    x->tail = tail, x->tail_b = sb;
    x->nretired = x->nimports;
  } else {
    e = drain(x, e);
    for (int i = lent_mark; i < x->nlent; i++) free(x->lent[i]);
    x->nlent = lent_mark;
  }
  if (stays) x->be[sb].queue = own;
  x->staying = false;
  run_memory_free(x);
  /* Buffers sized by this run alone go; the plan's stay. */
  for (int i = 0; i < x->nslots; i++) {
    slot *s = &x->slots[i];
    if (s->own && s->buf) {
      x->be[s->b].row->api->buffer_release(x->be[s->b].row->be, s->buf);
      s->buf = NULL;
      s->own = false;
    }
  }
  uint64_t t1 = trace_clock_ns();
  x->stats.runs++;

  if (trace_on()) trace_range("alloy", "run", tail ? "run (queued)" : "run", t0, t1);
  return e;
}

alloy_error *exec_run(exec *x, const alloy_host_tensor *inputs, alloy_host_tensor *outputs,
                      int noutputs) {
  return exec_run_placed(x, inputs, NULL, outputs, NULL, noutputs, NULL);
}

void exec_stats_copy(const alloy_run_stats *s, alloy_run_stats *out) {
  size_t keep = out->struct_size, n = keep < sizeof *s ? keep : sizeof *s;
  memcpy(out, s, n);
  out->struct_size = keep;
}

alloy_error *exec_stream_open(alloy_runtime *rt, int backend, const alloy_ext *stream, exec_stream *out) {
  memset(out, 0, sizeof *out);
  if (backend < 0 || backend >= rt->num || !rt->backends[backend].ok)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "the stream's backend %d is not an open backend of the "
                           "runtime", backend);
  alloy_loaded *row = &rt->backends[backend];
  if (!stream)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "backend %s: no stream given (the extension chain is NULL)",
                           row->name);
  if (!ALLOY_HAS_FIELD(row->api, alloy_plugin_api, queue_import) || !row->api->queue_import)
    return alloy_error_new(ALLOY_ERR_UNSUPPORTED, "backend %s cannot run on a stream of the caller's (its "
                           "plugin has no queue_import, ABI 1.3)", row->name);
  alloy_error *e = row->api->queue_import(row->be, 0, stream, &out->queue);
  if (e) return alloy_error_wrap(e, "backend %s: queue_import", row->name);
  out->backend = backend;
  return NULL;
}

void exec_stream_close(alloy_runtime *rt, exec_stream *st) {
  if (st->queue) rt->backends[st->backend].api->queue_release(rt->backends[st->backend].be, st->queue);
  st->queue = NULL;
}

/* ---- executors by thread, asynchronous runs --------------------------------- */

alloy_error *exec_pool_mine(exec_pool *pool, const exec_desc *d, pthread_t key, exec **out) {
  for (int i = 0; i < pool->n; i++)
    if (pthread_equal(pool->v[i].key, key)) {
      pool->last = pool->v[i].x;
      return *out = pool->v[i].x, NULL;
    }
  if (pool->n == pool->cap) {
    int cap = pool->cap ? 2 * pool->cap : 4;
    void *v = realloc(pool->v, sizeof *pool->v * (size_t)cap);
    if (!v) return oom();
    pool->v = v;
    pool->cap = cap;
  }
  exec *x = NULL;
  alloy_error *e = exec_new(d, &x);
  if (e) return e;
  pool->v[pool->n].key = key;
  pool->v[pool->n++].x = x;
  pool->last = x;
  *out = x;
  return NULL;
}

void exec_pool_free(exec_pool *pool) {
  for (int i = 0; i < pool->n; i++) exec_free(pool->v[i].x);
  free(pool->v);
  *pool = (exec_pool){0};
}

void exec_pool_stats(const exec_pool *pool, alloy_run_stats *sum) {
  for (int i = 0; i < pool->n; i++) {
    const alloy_run_stats *x = &pool->v[i].x->stats;
    sum->runs += x->runs;
    sum->partitions_run += x->partitions_run;
    sum->weight_bytes_in += x->weight_bytes_in;
    sum->input_bytes_in += x->input_bytes_in;
    sum->output_bytes_out += x->output_bytes_out;
    sum->cross_bytes += x->cross_bytes;
    sum->staged_bytes += x->staged_bytes;
    sum->same_backend_round_trips += x->same_backend_round_trips;
    sum->host_waits += x->host_waits;
    sum->dispatch_s += x->dispatch_s;
  }
  if (pool->last) {
    sum->arena_bytes = pool->last->stats.arena_bytes;
    sum->arena_ideal_bytes = pool->last->stats.arena_ideal_bytes;
  }
}

void exec_async_init(exec_async *a) {
  *a = (exec_async){0};
  pthread_mutex_init(&a->lock, NULL);
}

void exec_async_destroy(exec_async *a) {
  if (exec_async_in_flight(a)) alloy_error_free(exec_async_wait(a, "program"));
  pthread_mutex_destroy(&a->lock);
}

bool exec_async_in_flight(exec_async *a) {
  pthread_mutex_lock(&a->lock);
  bool busy = a->state == ASYNC_RUNNING;
  pthread_mutex_unlock(&a->lock);
  return busy;
}

bool exec_async_mine(exec_async *a, pthread_t key) {
  pthread_mutex_lock(&a->lock);
  bool mine = a->state != ASYNC_IDLE && pthread_equal(a->by, key);
  pthread_mutex_unlock(&a->lock);
  return mine;
}

static void *async_main(void *arg) {
  exec_async *a = arg;
  a->err = a->fn(a->owner, a->by, a->inputs, a->outputs, a->noutputs);
  return NULL;
}

alloy_error *exec_async_start(exec_async *a, exec_run_fn fn, void *owner,
                              const alloy_host_tensor *inputs, alloy_host_tensor *outputs,
                              int noutputs, const char *what) {
  pthread_t self = pthread_self();
  pthread_mutex_lock(&a->lock);
  bool busy = a->state != ASYNC_IDLE;
  if (!busy) a->state = ASYNC_RUNNING, a->by = self;
  pthread_mutex_unlock(&a->lock);
  if (busy)
    return alloy_error_new(ALLOY_ERR_UNAVAILABLE, "a run of this %s is in flight: alloy_%s_wait first",
                           what, what);
  /* The fields below are the starter's until the thread starts, then the
   * thread's until the wait joins it: no lock needed (by, which others
   * read, was set under it). */
  a->fn = fn, a->owner = owner, a->inputs = inputs, a->outputs = outputs;
  a->noutputs = noutputs, a->err = NULL;
  if (pthread_create(&a->thread, NULL, async_main, a) != 0) {
    alloy_error *e = fn(owner, self, inputs, outputs, noutputs); /* no thread: run here */
    pthread_mutex_lock(&a->lock);
    a->state = ASYNC_IDLE;
    pthread_mutex_unlock(&a->lock);
    return e;
  }
  return NULL;
}

alloy_error *exec_async_wait(exec_async *a, const char *what) {
  pthread_mutex_lock(&a->lock);
  bool running = a->state == ASYNC_RUNNING;
  if (running) a->state = ASYNC_JOINING; /* one waiter joins */
  pthread_mutex_unlock(&a->lock);
  if (!running)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "no run of this %s is in flight", what);
  pthread_join(a->thread, NULL);
  alloy_error *e = a->err;
  a->err = NULL;
  pthread_mutex_lock(&a->lock);
  a->state = ASYNC_IDLE;
  pthread_mutex_unlock(&a->lock);
  return e;
}
