/*
 * tests/devsim/devsim_device.c: the device of the testing backend devsim
 * (devsim.c is the plugin around it; devsim_internal.h what they share).
 *
 * Memory is regions of mmap'd pages between PROT_NONE guard pages, each
 * counted by reference: the buffer that allocated it, buffers importing
 * it, and the queued commands that use it, so that a buffer released
 * while queued work still uses it stays mapped until that work is done.
 * Events are counted by reference too (their holder and their signaller).
 * A queue is a FIFO of commands and a worker thread that pauses a
 * pseudo-random while before each, runs it (copies, executes through the
 * kernel-table helper, event records and waits), lets go of what it held
 * and only then signals its event: a host that waited finds the memory
 * free and the executable idle.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "tests/devsim/devsim_internal.h"

/* Fresh memory holds this, not zeros: device memory holds whatever was
 * there, and a host reading what it never wrote must not see zeros. */
#define DS_POISON 0xA5

/* ---- statuses --------------------------------------------------------------- */

void ds_status_set(ds_status *st, alloy_error_code code, const char *fmt, ...) {
  if (st->code) return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  st->code = code;
  st->message = strdup(msg);
}

/* Takes over an error of the helper: its code and message, then frees it. */
void ds_status_from_error(ds_backend *be, ds_status *st, alloy_error *e) {
  if (!e) return;
  alloy_error_code code = e == ds_ctx.made ? ds_ctx.made_code : ALLOY_ERR_INTERNAL;
  ds_status_set(st, code, "%s", be->host->error_message(e));
  be->host->error_free(e);
}

alloy_error *ds_status_error(ds_backend *be, const ds_status *st) {
  return st->code ? be->host->error_new(st->code, st->message ? st->message : "(out of memory)")
                  : NULL;
}

/* ---- device memory ----------------------------------------------------------- */

void ds_region_unmap(ds_backend *be, ds_region *r) {
  pthread_mutex_lock(&be->lock);
  be->live_bytes -= r->bytes;
  pthread_mutex_unlock(&be->lock);
  munmap(r->map, r->map_bytes);
  free(r);
}

/* Takes a reference; under be->lock. */
ds_region *ds_region_ref(ds_region *r) {
  r->refs++;
  return r;
}

void ds_region_unref(ds_backend *be, ds_region *r) {
  if (!r) return;
  pthread_mutex_lock(&be->lock);
  bool last = --r->refs == 0;
  if (last) ds_list_remove(&r->link);
  pthread_mutex_unlock(&be->lock);
  if (last) ds_region_unmap(be, r);
}

/* A mapping of bytes between guard pages, counted against the device's
 * memory: beyond all of it is out of memory, beyond what is free now is
 * unavailable (it may fit once something is released). */
static alloy_error *ds_region_new(ds_backend *be, uint64_t bytes, ds_region **out) {
  size_t page = be->page;
  if (bytes > be->memory_bytes || bytes > SIZE_MAX / 2)
    return ds_error(be, ALLOY_ERR_OUT_OF_MEMORY,
                    "cannot allocate %llu bytes: the device has %llu", (unsigned long long)bytes,
                    (unsigned long long)be->memory_bytes);
  size_t rounded = ((size_t)(bytes ? bytes : 1) + 63) & ~(size_t)63;
  size_t inner = (rounded + page - 1) / page * page;
  pthread_mutex_lock(&be->lock);
  bool fits = be->live_bytes + bytes <= be->memory_bytes;
  uint64_t live = be->live_bytes;
  if (fits) {
    be->live_bytes += bytes;
    if (be->live_bytes > be->peak_bytes) be->peak_bytes = be->live_bytes;
  }
  pthread_mutex_unlock(&be->lock);
  if (!fits)
    return ds_error(be, ALLOY_ERR_UNAVAILABLE,
                    "cannot allocate %llu bytes: %llu of the device's %llu are in use",
                    (unsigned long long)bytes, (unsigned long long)live,
                    (unsigned long long)be->memory_bytes);
  ds_region *r = calloc(1, sizeof *r);
  char *map = MAP_FAILED;
  if (r) map = mmap(NULL, inner + 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (map != MAP_FAILED && mprotect(map + page, inner, PROT_READ | PROT_WRITE) != 0) {
    munmap(map, inner + 2 * page);
    map = MAP_FAILED;
  }
  if (map == MAP_FAILED) {
    free(r);
    pthread_mutex_lock(&be->lock);
    be->live_bytes -= bytes;
    pthread_mutex_unlock(&be->lock);
    return ds_error(be, ALLOY_ERR_OUT_OF_MEMORY, "cannot map %llu bytes: %s",
                    (unsigned long long)bytes, strerror(errno));
  }
  r->map = map;
  r->map_bytes = inner + 2 * page;
  /* The end, rounded up to 64 bytes, touches the trailing guard page. */
  r->data = map + page + inner - rounded;
  r->bytes = bytes;
  r->refs = 1;
  r->importable = true;
  memset(r->data, DS_POISON, rounded);
  pthread_mutex_lock(&be->lock);
  ds_list_push(&be->regions, &r->link);
  pthread_mutex_unlock(&be->lock);
  atomic_fetch_add_explicit(&be->allocations, 1, memory_order_relaxed);
  *out = r;
  return NULL;
}

ds_buffer *ds_buffer_wrap(ds_backend *be, ds_region *r, uint64_t bytes, bool imported) {
  ds_buffer *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  b->head = (devsim_buffer_head){.magic = DEVSIM_BUFFER_MAGIC, .device_pointer = r->data,
                                 .bytes = bytes};
  b->region = r;
  b->imported = imported;
  pthread_mutex_lock(&be->lock);
  ds_list_push(&be->buffers, &b->link);
  pthread_mutex_unlock(&be->lock);
  return b;
}

alloy_error *ds_buffer_new(ds_backend *be, uint64_t bytes, ds_buffer **out) {
  ds_region *r = NULL;
  alloy_error *e = ds_region_new(be, bytes, &r);
  if (e) return e;
  ds_buffer *b = ds_buffer_wrap(be, r, bytes, false);
  if (!b) {
    ds_region_unref(be, r);
    return ds_error(be, ALLOY_ERR_OUT_OF_MEMORY, "out of memory making a buffer");
  }
  *out = b;
  return NULL;
}

void ds_buffer_free(ds_backend *be, ds_buffer *b) {
  ds_region *r = b->region;
  pthread_mutex_lock(&be->lock);
  ds_list_remove(&b->link);
  int imports = 0;
  if (b->imported) {
    r->imports--;
  } else {
    r->importable = false;
    imports = r->imports;
  }
  pthread_mutex_unlock(&be->lock);
  if (imports)
    ds_log(be, ALLOY_LOG_WARNING,
           "buffer %p released while %d imported buffer(s) still use its memory (alloy/plugin.h: "
           "imported memory must outlive them); it stays mapped until they are released",
           (void *)b, imports);
  b->head.magic = 0;
  ds_region_unref(be, r);
  free(b);
}

/* ---- events ----------------------------------------------------------------- */

/* An event with two references: the holder's and the signaller's. */
static ds_event *ds_event_new(ds_backend *be) {
  ds_event *ev = calloc(1, sizeof *ev);
  if (!ev) return NULL;
  ev->magic = DS_MAGIC_EVENT;
  ev->refs = 2;
  ev->held = true;
  pthread_mutex_lock(&be->ev_lock);
  ds_list_push(&be->events, &ev->link);
  pthread_mutex_unlock(&be->ev_lock);
  return ev;
}

void ds_event_free_locked(ds_event *ev) {
  ds_list_remove(&ev->link);
  ev->magic = 0;
  free(ev->status.message);
  free(ev);
}

static void ds_event_unref_locked(ds_event *ev) {
  if (--ev->refs == 0) ds_event_free_locked(ev);
}

static void ds_event_unref(ds_backend *be, ds_event *ev) {
  pthread_mutex_lock(&be->ev_lock);
  ds_event_unref_locked(ev);
  pthread_mutex_unlock(&be->ev_lock);
}

/* The holder lets go (event_release, or an entry done waiting). */
void ds_event_drop(ds_backend *be, ds_event *ev) {
  pthread_mutex_lock(&be->ev_lock);
  if (ev->held) {
    ev->held = false;
    ds_event_unref_locked(ev);
  }
  pthread_mutex_unlock(&be->ev_lock);
}

/* Signals ev with st (taken over) and drops the signaller's reference. */
static void ds_event_signal(ds_backend *be, ds_event *ev, ds_status *st) {
  pthread_mutex_lock(&be->ev_lock);
  ev->status = *st;
  *st = (ds_status){0};
  ev->signalled = true;
  pthread_cond_broadcast(&be->ev_signal);
  ds_event_unref_locked(ev);
  pthread_mutex_unlock(&be->ev_lock);
}

/* Waits for ev; copies its failure into st when st is given. */
void ds_event_await(ds_backend *be, ds_event *ev, ds_status *st) {
  pthread_mutex_lock(&be->ev_lock);
  while (!ev->signalled) pthread_cond_wait(&be->ev_signal, &be->ev_lock);
  if (st && ev->status.code)
    ds_status_set(st, ev->status.code, "%s", ev->status.message ? ev->status.message : "");
  pthread_mutex_unlock(&be->ev_lock);
}

/* ---- commands and queues ----------------------------------------------------- */

ds_cmd *ds_cmd_new(ds_cmd_kind kind) {
  ds_cmd *c = calloc(1, sizeof *c);
  if (c) c->kind = kind;
  return c;
}

/* Lets go of what c holds: its memory, the event it waited for, its
 * executable. Done before its event is signalled, so that a host that
 * waited for the event finds the memory free and the executable idle. */
static void ds_cmd_unhold(ds_backend *be, ds_cmd *c) {
  ds_region_unref(be, c->dst);
  ds_region_unref(be, c->src);
  c->dst = c->src = NULL;
  int n = c->kind == DS_RUN ? c->args.num_inputs + c->args.num_outputs : 0;
  for (int i = 0; c->regions && i < n; i++) ds_region_unref(be, c->regions[i]);
  free(c->regions);
  free(c->region_bytes);
  c->regions = NULL;
  c->region_bytes = NULL;
  free(c->lent);
  free(c->lent_dims);
  free(c->lent_symbols);
  c->lent = NULL;
  c->lent_dims = c->lent_symbols = NULL;
  if (c->wait_for) ds_event_unref(be, c->wait_for);
  c->wait_for = NULL;
  if (c->exe) {
    pthread_mutex_lock(&be->lock);
    if (--c->exe->pending == 0) pthread_cond_broadcast(&be->exe_idle);
    pthread_mutex_unlock(&be->lock);
  }
  c->exe = NULL;
}

/* Finishes c: lets go of what it holds, signals its event with st (taken
 * over), frees it. */
static void ds_cmd_finish(ds_backend *be, ds_cmd *c, ds_status *st) {
  ds_cmd_unhold(be, c);
  if (c->done) ds_event_signal(be, c->done, st);
  free(st->message);
  *st = (ds_status){0};
  free(c);
}

/* A command that never ran (its enqueue failed) still owes its event a
 * signal when it has one. */
void ds_cmd_free(ds_backend *be, ds_cmd *c) {
  if (!c) return;
  ds_status st = {ALLOY_ERR_INTERNAL, c->done ? strdup("the command never ran") : NULL};
  ds_cmd_finish(be, c, &st);
}

static uint64_t ds_mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/* The pause before each command: pseudo-random in [0, delay_us], one
 * stream per queue from the seed and the queue's serial number, so that a
 * seed replays the same interleaving as far as the scheduler lets it. */
static void ds_pause(ds_queue *q) {
  ds_backend *be = q->be;
  uint64_t delay = atomic_load_explicit(&be->delay_us, memory_order_relaxed);
  uint64_t seed = atomic_load_explicit(&be->seed, memory_order_relaxed);
  if (seed != q->rng_seed || !q->rng) {
    q->rng_seed = seed;
    q->rng = ds_mix(seed ^ ds_mix(q->serial)) | 1;
  }
  q->rng = ds_mix(q->rng);
  if (!delay) return;
  uint64_t us = q->rng % (delay + 1);
  struct timespec ts = {.tv_sec = (time_t)(us / 1000000), .tv_nsec = (long)(us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* Outputs the helper made (sizes known only from the data) become devsim
 * buffers the host owns; the helper's are released either way. */
static void ds_run_adopt(ds_backend *be, ds_cmd *c, alloy_tensor *kts, ds_status *st) {
  const alloy_execute_args *a = &c->args;
  int nin = a->num_inputs, nout = a->num_outputs;
  ds_buffer **made = calloc((size_t)nout + 1, sizeof *made);
  if (!made) ds_status_set(st, ALLOY_ERR_OUT_OF_MEMORY, "out of memory adopting outputs");
  for (int j = 0; j < nout; j++) {
    if (c->regions[nin + j]) continue;
    struct alloy_buffer *kb = kts[nin + j].buffer;
    if (!kb) {
      ds_status_set(st, ALLOY_ERR_INTERNAL, "output %d: its sizes depend on the data and no buffer "
                    "was made for it", j);
      continue;
    }
    if (!st->code) {
      alloy_error *e = ds_buffer_new(be, kb->bytes, &made[j]);
      if (e) ds_status_from_error(be, st, e);
      else if (kb->bytes) memcpy(made[j]->region->data, kb->mem, (size_t)kb->bytes);
    }
    ds_kt_api->buffer_release(be->kt, (alloy_buffer *)kb);
  }
  for (int j = 0; made && j < nout; j++) {
    if (!made[j]) continue;
    if (st->code) {
      ds_buffer_free(be, made[j]);
    } else {
      a->outputs[j].buffer = (alloy_buffer *)(void *)made[j];
      a->outputs[j].offset = kts[nin + j].offset;
    }
  }
  free(made);
}

/* The first tensor (n for the symbols) the host changed between
 * execute() and now, or -1. Pointers are compared before anything is read
 * through them: memory the host reused may hold anything. */
static int ds_lent_changed(const ds_cmd *c) {
  const alloy_execute_args *a = &c->args;
  int nin = a->num_inputs, n = nin + a->num_outputs;
  for (int i = 0; i < n; i++) {
    if (!c->regions[i]) continue; /* an output devsim sizes itself */
    const alloy_tensor *now = i < nin ? &a->inputs[i] : &a->outputs[i - nin], *then = &c->lent[i];
    const int64_t *dims = c->lent_dims + (size_t)i * 2 * KT_MAX_RANK;
    size_t rank_bytes = (size_t)then->rank * sizeof *dims;
    if (now->buffer != then->buffer || now->offset != then->offset || now->dtype != then->dtype ||
        now->rank != then->rank || now->sizes != then->sizes || now->strides != then->strides ||
        (rank_bytes && (memcmp(now->sizes, dims, rank_bytes) ||
                        memcmp(now->strides, dims + KT_MAX_RANK, rank_bytes))))
      return i;
  }
  if (a->num_symbols > 0 &&
      memcmp(a->symbols, c->lent_symbols, (size_t)a->num_symbols * sizeof *c->lent_symbols))
    return n;
  return -1;
}

/* An execute on the worker: the helper's buffer structs over devsim's
 * memory. The host's tensors are lent until completion: one it changed
 * meanwhile fails the execute, naming it (rather than running on whatever
 * the memory holds now), and the run uses the values execute() saw. */
static void ds_run_execute(ds_backend *be, ds_cmd *c, ds_status *st) {
  const alloy_execute_args *a = &c->args;
  int nin = a->num_inputs, nout = a->num_outputs, n = nin + nout;
  int changed = ds_lent_changed(c);
  if (changed >= 0) {
    ds_status_set(st, ALLOY_ERR_INVALID_ARGUMENT,
                  "execute: the host changed %s%d%s before the execute completed (alloy/plugin.h "
                  "lends execute's tensors, arrays and symbols until *done is signalled)",
                  changed == n ? "the symbol values" : changed < nin ? "input " : "output ",
                  changed == n ? 0 : changed < nin ? changed : changed - nin,
                  changed == n ? "" : "'s alloy_tensor or its sizes or strides");
    return;
  }
  struct alloy_buffer *kbs = calloc((size_t)n + 1, sizeof *kbs);
  alloy_tensor *kts = calloc((size_t)n + 1, sizeof *kts);
  if (!kbs || !kts) {
    ds_status_set(st, ALLOY_ERR_OUT_OF_MEMORY, "out of memory running a partition");
  } else {
    for (int i = 0; i < n; i++) {
      /* An output sized by the data: the helper writes its sizes into the
       * host's arrays (the host waits for this execute). */
      kts[i] = c->regions[i] ? c->lent[i] : a->outputs[i - nin];
      kts[i].struct_size = ALLOY_TENSOR_STRUCT_SIZE;
      kts[i].buffer = NULL;
      if (!c->regions[i]) continue;
      kts[i].sizes = c->lent_dims + (size_t)i * 2 * KT_MAX_RANK;
      kts[i].strides = kts[i].sizes + KT_MAX_RANK;
      kbs[i].mem = c->regions[i]->data;
      kbs[i].bytes = c->region_bytes[i];
      kts[i].buffer = &kbs[i];
    }
    alloy_event *kdone = NULL;
    alloy_execute_args ka = {.struct_size = ALLOY_EXECUTE_ARGS_STRUCT_SIZE, .inputs = kts,
                             .num_inputs = nin, .outputs = kts + nin, .num_outputs = nout,
                             .symbols = c->lent_symbols, .num_symbols = a->num_symbols,
                             .queue = NULL, .done = &kdone, .ext = NULL};
    alloy_error *e = ds_kt_api->execute(be->kt, c->exe->kt, &ka);
    if (!e && kdone) e = ds_kt_api->event_wait(be->kt, kdone);
    if (kdone) ds_kt_api->event_release(be->kt, kdone);
    ds_status_from_error(be, st, e);
    ds_run_adopt(be, c, kts, st);
    if (!st->code) atomic_fetch_add_explicit(&be->executes, 1, memory_order_relaxed);
  }
  free(kbs);
  free(kts);
}

/* Runs c on q's worker; its outcome goes to st. */
static void ds_cmd_run(ds_queue *q, ds_cmd *c, ds_status *out) {
  ds_backend *be = q->be;
  ds_status st = {0};
  switch (c->kind) {
    case DS_FROM_HOST:
      if (c->bytes) memcpy(c->dst->data + c->dst_offset, c->host_src, (size_t)c->bytes);
      atomic_fetch_add_explicit(&be->bytes_h2d, c->bytes, memory_order_relaxed);
      break;
    case DS_TO_HOST:
      if (c->bytes) memcpy(c->host_dst, c->src->data + c->src_offset, (size_t)c->bytes);
      atomic_fetch_add_explicit(&be->bytes_d2h, c->bytes, memory_order_relaxed);
      break;
    case DS_D2D: /* both ranges may lie in one region */
      if (c->bytes) memmove(c->dst->data + c->dst_offset, c->src->data + c->src_offset, (size_t)c->bytes);
      atomic_fetch_add_explicit(&be->bytes_d2d, c->bytes, memory_order_relaxed);
      break;
    case DS_RUN:
      ds_run_execute(be, c, &st);
      break;
    case DS_RECORD: /* everything before it on q is done: report what failed */
      st = q->unreported;
      q->unreported = (ds_status){0};
      break;
    case DS_WAIT: {
      ds_status waited = {0};
      ds_event_await(be, c->wait_for, &waited);
      if (waited.code)
        ds_status_set(&st, waited.code, "an event this queue waited for failed: %s",
                      waited.message ? waited.message : "");
      free(waited.message);
      break;
    }
  }
  /* A failure the entry returned itself is reported; any other is kept
   * for the queue's next record. */
  if (st.code && !c->sync && c->kind != DS_RECORD)
    ds_status_set(&q->unreported, st.code, "%s", st.message ? st.message : "");
  *out = st;
}

static void *ds_worker(void *arg) {
  ds_queue *q = arg;
  ds_ctx.be = q->be;
  for (;;) {
    pthread_mutex_lock(&q->lock);
    while (!q->head && !q->closing) pthread_cond_wait(&q->wake, &q->lock);
    ds_cmd *c = q->head;
    if (c) {
      q->head = c->next;
      if (!q->head) q->tail = NULL;
    }
    pthread_mutex_unlock(&q->lock);
    if (!c) break; /* closing, and nothing left */
    ds_status st = {0};
    ds_pause(q);
    const alloy_host_api *h = q->be->host;
    bool traced = ALLOY_HAS_FIELD(h, alloy_host_api, trace_range) && h->trace_enabled &&
                  h->trace_enabled();
    uint64_t t0 = traced ? h->clock_ns() : 0;
    ds_cmd_run(q, c, &st);
    if (traced) {
      /* The device's timeline beside the host's, one track per queue. */
      static const char *const names[] = {[DS_FROM_HOST] = "copy in", [DS_TO_HOST] = "copy out",
                                          [DS_D2D] = "copy", [DS_RUN] = "execute",
                                          [DS_RECORD] = "record", [DS_WAIT] = "wait"};
      char track[32];
      snprintf(track, sizeof track, "queue %u", q->serial);
      h->trace_range("devsim", track, names[c->kind] ? names[c->kind] : "command", t0, h->clock_ns());
    }
    ds_cmd_finish(q->be, c, &st);
  }
  return NULL;
}

alloy_error *ds_queue_new(ds_backend *be, unsigned serial, ds_queue **out) {
  ds_queue *q = calloc(1, sizeof *q);
  if (!q) return ds_error(be, ALLOY_ERR_OUT_OF_MEMORY, "out of memory creating a queue");
  q->magic = DS_MAGIC_QUEUE;
  q->be = be;
  q->serial = serial;
  ds_list_init(&q->link);
  pthread_mutex_init(&q->lock, NULL);
  pthread_cond_init(&q->wake, NULL);
  int rc = pthread_create(&q->worker, NULL, ds_worker, q);
  if (rc) {
    pthread_mutex_destroy(&q->lock);
    pthread_cond_destroy(&q->wake);
    free(q);
    return ds_error(be, ALLOY_ERR_UNAVAILABLE, "cannot start a queue's worker thread: %s", strerror(rc));
  }
  *out = q;
  return NULL;
}

/* Runs what is left on q, then stops its worker and frees it. */
void ds_queue_stop(ds_queue *q) {
  pthread_mutex_lock(&q->lock);
  q->closing = true;
  pthread_cond_signal(&q->wake);
  pthread_mutex_unlock(&q->lock);
  pthread_join(q->worker, NULL);
  q->magic = 0;
  pthread_mutex_destroy(&q->lock);
  pthread_cond_destroy(&q->wake);
  free(q->unreported.message);
  free(q);
}

static void ds_enqueue(ds_queue *q, ds_cmd *c) {
  pthread_mutex_lock(&q->lock);
  if (q->tail) q->tail->next = c;
  else q->head = c;
  q->tail = c;
  pthread_cond_signal(&q->wake);
  pthread_mutex_unlock(&q->lock);
}

static alloy_error *ds_default_queue(ds_backend *be, ds_queue **out) {
  alloy_error *e = NULL;
  pthread_mutex_lock(&be->lock);
  if (!be->default_queue) e = ds_queue_new(be, 0, &be->default_queue);
  *out = be->default_queue;
  pthread_mutex_unlock(&be->lock);
  return e;
}

alloy_error *ds_submit(ds_backend *be, ds_queue *q, ds_cmd *c, alloy_event **done, bool wait) {
  ds_queue *target = q;
  alloy_error *e = q ? NULL : ds_default_queue(be, &target);
  ds_event *ev = e ? NULL : ds_event_new(be);
  if (!e && !ev) e = ds_error(be, ALLOY_ERR_OUT_OF_MEMORY, "out of memory making an event");
  if (e) {
    ds_cmd_free(be, c);
    return e;
  }
  wait = wait || !q;
  c->done = ev;
  c->sync = wait;
  ds_enqueue(target, c);
  if (!wait) {
    *done = (alloy_event *)(void *)ev;
    return NULL;
  }
  ds_status st = {0};
  ds_event_await(be, ev, &st);
  e = ds_status_error(be, &st);
  free(st.message);
  if (q && !e) *done = (alloy_event *)(void *)ev; /* already signalled */
  else ds_event_drop(be, ev);
  return e;
}

bool ds_enqueue_wait(ds_backend *be, ds_queue *q, ds_event *ev) {
  ds_cmd *c = ds_cmd_new(DS_WAIT);
  if (!c) return false;
  pthread_mutex_lock(&be->ev_lock);
  ev->refs++;
  pthread_mutex_unlock(&be->ev_lock);
  c->wait_for = ev;
  ds_enqueue(q, c);
  return true;
}
