/*
 * sdk/src/guard.c: every call the host makes into a plugin's table passes
 * through here (runtime_internal.h). The loader points each opened
 * backend's row at row->counted, a copy of the plugin's table in which
 * every non-NULL function entry but backend_open is a trampoline that
 *
 *   - counts the call by entry (conformance fails a backend whose required
 *     entries its suite never exercised: runtime_count_entries, and
 *     runtime_entry_calls), and
 *   - checks what the plugin hands back before the host believes it: an
 *     error pointer must be one host->error_new made (anything else is
 *     replaced by an error saying so, and never read), an entry that
 *     succeeds must fill its out-parameter (compile without an executable,
 *     buffer_allocate without a buffer), a device count must lie in
 *     [0, ALLOY_MAX_DEVICES].
 *
 * Only the first struct_size bytes of the plugin's table are copied, and
 * only entries inside them are swapped (ALLOY_HAS_FIELD): what an older
 * plugin's table lacks stays NULL in the copy, and the copy keeps the
 * plugin's struct_size, so the host sees exactly the table the plugin gave,
 * entry for entry.
 *
 * A trampoline gets the plugin's arguments and nothing else. Every entry but
 * backend_open takes the alloy_backend * first, so the row is found by that
 * pointer in a process-wide registry: a fixed array of GUARD_SLOTS slots,
 * each (backend, the plugin's table, the row, the counters), searched
 * lock-free by a linear scan. backend_open is called by the loader itself,
 * which checks its error the same way (host_error_take).
 *
 * A slot is taken when the backend opens and given back by the
 * backend_close trampoline (the runtime's close, loader.c row_release,
 * calls it through the guarded table), which also points the row back at
 * the plugin's table: after that the backend pointer is dead, and the
 * plugin may hand the same address to a later backend.
 *
 * Threads: execute, the copies and event_wait may be called from several
 * threads at once (alloy/plugin.h), so the counters are C11 atomics
 * (relaxed: they are tallies, read after the calls they count returned).
 * A slot is published with a release store of its backend pointer after
 * the rest of it is written, and found with acquire loads. Guarding starts
 * and stops as the plugin table's rule for creating and releasing objects
 * says: one thread at a time per backend.
 *
 * That rule is kept here, for every caller at once: the entries that
 * create, release or configure (claim and compile too, which plugins write
 * as single-threaded as the rest) take the slot's mutex around the call,
 * so runs of one program on several threads (each on its own queues) may
 * call execute, the copies and the waits at the same time while their
 * buffer_allocate and event_release calls come one at a time. No entry is
 * called with that mutex held but the plugin's own, which never calls back
 * into its table through the host.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdk/src/runtime_internal.h"

/* The entries of alloy_plugin_api in table order; the counter slots are
 * named by them (COUNT_buffer_copy). */
#define COUNT_ENTRIES(X)                                                                      \
  X(backend_open) X(backend_close) X(device_count) X(device_info) X(claim) X(compile)         \
  X(execute) X(executable_release) X(buffer_allocate) X(buffer_release)                       \
  X(buffer_host_pointer) X(buffer_copy_from_host) X(buffer_copy_to_host) X(buffer_copy)       \
  X(queue_create) X(queue_release) X(event_wait) X(event_query) X(event_release)              \
  X(executable_serialize) X(executable_deserialize) X(event_record) X(queue_wait_event)      \
  X(host_buffer_allocate) X(host_buffer_release) X(buffer_import) X(backend_set_option)       \
  X(queue_import)

enum count_entry {
#define X(f) COUNT_##f,
  COUNT_ENTRIES(X)
#undef X
  GUARD_NUM_ENTRIES
};

static const char *const entry_names[GUARD_NUM_ENTRIES] = {
#define X(f) #f,
    COUNT_ENTRIES(X)
#undef X
};

/* The plugin table's required entries: the list loader.c's check_table
 * refuses a plugin without (keep the two in step). */
const char *const runtime_required_entries[] = {
    "backend_open",          "backend_close",       "device_count",   "device_info",
    "claim",                 "compile",             "execute",        "executable_release",
    "buffer_allocate",       "buffer_release",      "buffer_host_pointer",
    "buffer_copy_from_host", "buffer_copy_to_host", "buffer_copy",    "queue_create",
    "queue_release",         "event_wait",          "event_query",    "event_release",
    NULL,
};

/* ---- the registry ---------------------------------------------------------- */

enum { GUARD_SLOTS = 256 };

typedef struct count_slot {
  atomic_int taken;                /* 0 free, 1 taken (compare-exchanged)    */
  _Atomic(alloy_backend *) be;     /* published last; NULL while not in use  */
  const alloy_plugin_api *real;    /* the plugin's own table                 */
  alloy_loaded *row;               /* the row whose api is the counted copy  */
  pthread_mutex_t serial;          /* around the entries that come one thread
                                    * at a time (made while the slot is taken) */
  _Atomic uint64_t calls[GUARD_NUM_ENTRIES];
} count_slot;

static count_slot slots[GUARD_SLOTS];

static count_slot *slot_of(const alloy_backend *be) {
  for (int i = 0; i < GUARD_SLOTS; i++)
    if (atomic_load_explicit(&slots[i].be, memory_order_acquire) == be) return &slots[i];
  return NULL;
}

/* The slot of be with entry's call counted. A backend the registry does
 * not know cannot be forwarded anywhere: that is a host bug (a call after
 * backend_close, or on a row whose counting was never started). */
static count_slot *enter(alloy_backend *be, enum count_entry entry) {
  count_slot *s = be ? slot_of(be) : NULL;
  if (!s) {
    fprintf(stderr, "alloy: %s called with backend %p, which is not open (closed, or never "
            "opened by this runtime): a host bug\n", entry_names[entry], (void *)be);
    abort();
  }
  atomic_fetch_add_explicit(&s->calls[entry], 1, memory_order_relaxed);
  return s;
}

/* Gives the slot back and points its row at the plugin's own table. */
static void slot_release(count_slot *s) {
  alloy_loaded *row = s->row;
  atomic_store_explicit(&s->be, NULL, memory_order_release);
  if (row) {
    row->api = s->real;
    row->real_api = NULL;
    row->calls = NULL;
  }
  s->row = NULL;
  s->real = NULL;
  pthread_mutex_destroy(&s->serial);
  atomic_store_explicit(&s->taken, 0, memory_order_release);
}

/* ---- checks of what a plugin hands back ------------------------------------ */

/* The plugin's error, if the host made it; else an error saying what came
 * back instead (never read). */
static alloy_error *took(const count_slot *s, enum count_entry entry, alloy_error *e) {
  return host_error_take(e, s->row ? s->row->name : "?", entry_names[entry]);
}

/* An entry that succeeded without filling its out-parameter. Called with
 * the entry's result already in hand: C leaves the order of a call's
 * arguments open, so the out-parameter is read after the entry returned,
 * never in the same argument list. */
static alloy_error *filled(const count_slot *s, enum count_entry entry, alloy_error *e,
                           const void *out) {
  e = took(s, entry, e);
  if (e || out) return e;
  return alloy_error_new(ALLOY_ERR_INTERNAL, "backend %s: %s returned success without its result "
                         "(a plugin bug)", s->row ? s->row->name : "?", entry_names[entry]);
}

/* The entries that come one thread at a time per backend (alloy/plugin.h)
 * enter with the slot's mutex held, and leave through serial_end. */
static count_slot *enter_serial(alloy_backend *be, enum count_entry entry) {
  count_slot *s = enter(be, entry);
  pthread_mutex_lock(&s->serial);
  return s;
}
static void serial_end(count_slot *s) { pthread_mutex_unlock(&s->serial); }

/* ---- the trampolines: count, check, forward -------------------------------- */

static void t_backend_close(alloy_backend *be) {
  count_slot *s = enter(be, COUNT_backend_close);
  const alloy_plugin_api *real = s->real;
  /* The last call of this backend: after it be is dead. */
  slot_release(s);
  real->backend_close(be);
}

static int t_device_count(alloy_backend *be) {
  count_slot *s = enter(be, COUNT_device_count);
  int n = s->real->device_count(be);
  return n < 0 ? 0 : n > ALLOY_MAX_DEVICES ? ALLOY_MAX_DEVICES : n;
}

static alloy_error *t_device_info(alloy_backend *be, int device, alloy_device_info *info) {
  count_slot *s = enter(be, COUNT_device_info);
  return took(s, COUNT_device_info, s->real->device_info(be, device, info));
}

static alloy_error *t_claim(alloy_backend *be, const alloy_graph *g, alloy_claims *claims) {
  count_slot *s = enter_serial(be, COUNT_claim);
  alloy_error *e = s->real->claim(be, g, claims);
  serial_end(s);
  return took(s, COUNT_claim, e);
}

static alloy_error *t_compile(alloy_backend *be, const alloy_graph *partition,
                              const alloy_compile_options *options, alloy_executable **out) {
  count_slot *s = enter_serial(be, COUNT_compile);
  alloy_executable *exe = NULL;
  alloy_error *e = s->real->compile(be, partition, options, &exe);
  serial_end(s);
  e = filled(s, COUNT_compile, e, exe);
  if (!e) *out = exe;
  return e;
}

static alloy_error *t_execute(alloy_backend *be, alloy_executable *exe,
                              const alloy_execute_args *args) {
  count_slot *s = enter(be, COUNT_execute);
  return took(s, COUNT_execute, s->real->execute(be, exe, args));
}

static void t_executable_release(alloy_backend *be, alloy_executable *exe) {
  count_slot *s = enter_serial(be, COUNT_executable_release);
  s->real->executable_release(be, exe);
  serial_end(s);
}

static alloy_error *t_buffer_allocate(alloy_backend *be, int device, uint64_t bytes,
                                      alloy_buffer **out) {
  count_slot *s = enter_serial(be, COUNT_buffer_allocate);
  alloy_buffer *b = NULL;
  alloy_error *e = s->real->buffer_allocate(be, device, bytes, &b);
  serial_end(s);
  e = filled(s, COUNT_buffer_allocate, e, b);
  if (!e) *out = b;
  return e;
}

static void t_buffer_release(alloy_backend *be, alloy_buffer *buf) {
  count_slot *s = enter_serial(be, COUNT_buffer_release);
  s->real->buffer_release(be, buf);
  serial_end(s);
}

static void *t_buffer_host_pointer(alloy_backend *be, alloy_buffer *buf) {
  return enter(be, COUNT_buffer_host_pointer)->real->buffer_host_pointer(be, buf);
}

static alloy_error *t_buffer_copy_from_host(alloy_backend *be, alloy_buffer *dst, uint64_t offset,
                                            const void *src, uint64_t bytes, alloy_queue *queue,
                                            alloy_event **done) {
  count_slot *s = enter(be, COUNT_buffer_copy_from_host);
  return took(s, COUNT_buffer_copy_from_host,
              s->real->buffer_copy_from_host(be, dst, offset, src, bytes, queue, done));
}

static alloy_error *t_buffer_copy_to_host(alloy_backend *be, void *dst, alloy_buffer *src,
                                          uint64_t offset, uint64_t bytes, alloy_queue *queue,
                                          alloy_event **done) {
  count_slot *s = enter(be, COUNT_buffer_copy_to_host);
  return took(s, COUNT_buffer_copy_to_host,
              s->real->buffer_copy_to_host(be, dst, src, offset, bytes, queue, done));
}

static alloy_error *t_buffer_copy(alloy_backend *be, alloy_buffer *dst, uint64_t dst_offset,
                                  alloy_buffer *src, uint64_t src_offset, uint64_t bytes,
                                  alloy_queue *queue, alloy_event **done) {
  count_slot *s = enter(be, COUNT_buffer_copy);
  return took(s, COUNT_buffer_copy,
              s->real->buffer_copy(be, dst, dst_offset, src, src_offset, bytes, queue, done));
}

static alloy_error *t_queue_create(alloy_backend *be, int device, alloy_queue **out) {
  count_slot *s = enter_serial(be, COUNT_queue_create);
  alloy_queue *q = NULL;
  alloy_error *e = s->real->queue_create(be, device, &q);
  serial_end(s);
  e = filled(s, COUNT_queue_create, e, q);
  if (!e) *out = q;
  return e;
}

static void t_queue_release(alloy_backend *be, alloy_queue *q) {
  count_slot *s = enter_serial(be, COUNT_queue_release);
  s->real->queue_release(be, q);
  serial_end(s);
}

static alloy_error *t_event_wait(alloy_backend *be, alloy_event *ev) {
  count_slot *s = enter(be, COUNT_event_wait);
  return took(s, COUNT_event_wait, s->real->event_wait(be, ev));
}

static int t_event_query(alloy_backend *be, alloy_event *ev) {
  return enter(be, COUNT_event_query)->real->event_query(be, ev);
}

static void t_event_release(alloy_backend *be, alloy_event *ev) {
  count_slot *s = enter_serial(be, COUNT_event_release);
  s->real->event_release(be, ev);
  serial_end(s);
}

static alloy_error *t_executable_serialize(alloy_backend *be, alloy_executable *exe, void **bytes,
                                           uint64_t *size, alloy_compat_info *info) {
  count_slot *s = enter_serial(be, COUNT_executable_serialize);
  alloy_error *e = s->real->executable_serialize(be, exe, bytes, size, info);
  serial_end(s);
  return took(s, COUNT_executable_serialize, e);
}

static alloy_error *t_executable_deserialize(alloy_backend *be, const alloy_graph *partition,
                                             const void *bytes, uint64_t size,
                                             alloy_executable **out) {
  count_slot *s = enter_serial(be, COUNT_executable_deserialize);
  alloy_executable *exe = NULL;
  alloy_error *e = s->real->executable_deserialize(be, partition, bytes, size, &exe);
  serial_end(s);
  e = filled(s, COUNT_executable_deserialize, e, exe);
  if (!e) *out = exe;
  return e;
}

static alloy_error *t_event_record(alloy_backend *be, alloy_queue *q, alloy_event **out) {
  count_slot *s = enter_serial(be, COUNT_event_record);
  alloy_error *e = s->real->event_record(be, q, out);
  serial_end(s);
  return took(s, COUNT_event_record, e);
}

static alloy_error *t_queue_wait_event(alloy_backend *be, alloy_queue *q, alloy_event *ev) {
  count_slot *s = enter(be, COUNT_queue_wait_event);
  return took(s, COUNT_queue_wait_event, s->real->queue_wait_event(be, q, ev));
}

static alloy_error *t_host_buffer_allocate(alloy_backend *be, uint64_t bytes, void **out) {
  count_slot *s = enter_serial(be, COUNT_host_buffer_allocate);
  void *p = NULL;
  alloy_error *e = s->real->host_buffer_allocate(be, bytes, &p);
  serial_end(s);
  e = filled(s, COUNT_host_buffer_allocate, e, p);
  if (!e) *out = p;
  return e;
}

static void t_host_buffer_release(alloy_backend *be, void *ptr) {
  count_slot *s = enter_serial(be, COUNT_host_buffer_release);
  s->real->host_buffer_release(be, ptr);
  serial_end(s);
}

static alloy_error *t_buffer_import(alloy_backend *be, int device, void *device_pointer,
                                    uint64_t bytes, const alloy_ext *ext, alloy_buffer **out) {
  count_slot *s = enter_serial(be, COUNT_buffer_import);
  alloy_buffer *b = NULL;
  alloy_error *e = s->real->buffer_import(be, device, device_pointer, bytes, ext, &b);
  serial_end(s);
  e = filled(s, COUNT_buffer_import, e, b);
  if (!e) *out = b;
  return e;
}

static alloy_error *t_backend_set_option(alloy_backend *be, const char *key, const char *value) {
  count_slot *s = enter_serial(be, COUNT_backend_set_option);
  alloy_error *e = s->real->backend_set_option(be, key, value);
  serial_end(s);
  return took(s, COUNT_backend_set_option, e);
}

static alloy_error *t_queue_import(alloy_backend *be, int device, const alloy_ext *ext, alloy_queue **out) {
  count_slot *s = enter_serial(be, COUNT_queue_import);
  alloy_queue *q = NULL;
  alloy_error *e = s->real->queue_import(be, device, ext, &q);
  serial_end(s);
  e = filled(s, COUNT_queue_import, e, q);
  if (!e) *out = q;
  return e;
}

/* ---- the interface ---------------------------------------------------------- */

alloy_error *runtime_guard(alloy_loaded *row) {
  if (row->real_api) return NULL; /* already guarded */
  const alloy_plugin_api *real = row->api;
  count_slot *s = NULL;
  for (int i = 0; i < GUARD_SLOTS && !s; i++) {
    int free_slot = 0;
    if (atomic_compare_exchange_strong(&slots[i].taken, &free_slot, 1)) s = &slots[i];
  }
  if (!s)
    return alloy_error_new(ALLOY_ERR_UNAVAILABLE,
                           "backend %s: %d backends are open in this process already (the most "
                           "at once)", row->name, GUARD_SLOTS);
  for (int i = 0; i < GUARD_NUM_ENTRIES; i++) atomic_store_explicit(&s->calls[i], 0, memory_order_relaxed);
  pthread_mutex_init(&s->serial, NULL);
  s->real = real;
  s->row = row;

  /* The copy: the plugin's bytes up to its struct_size, no further. */
  size_t size = real->struct_size < sizeof row->counted ? real->struct_size : sizeof row->counted;
  memset(&row->counted, 0, sizeof row->counted);
  memcpy(&row->counted, real, size);
  row->counted.struct_size = real->struct_size;
  alloy_plugin_api *c = &row->counted;
#define SWAP(f)                                                                   \
  if (size >= offsetof(alloy_plugin_api, f) + sizeof c->f && c->f) c->f = t_##f;
  SWAP(backend_close) SWAP(device_count) SWAP(device_info) SWAP(claim) SWAP(compile)
  SWAP(execute) SWAP(executable_release) SWAP(buffer_allocate) SWAP(buffer_release)
  SWAP(buffer_host_pointer) SWAP(buffer_copy_from_host) SWAP(buffer_copy_to_host)
  SWAP(buffer_copy) SWAP(queue_create) SWAP(queue_release) SWAP(event_wait) SWAP(event_query)
  SWAP(event_release) SWAP(executable_serialize) SWAP(executable_deserialize)
  SWAP(event_record) SWAP(queue_wait_event) SWAP(host_buffer_allocate)
  SWAP(host_buffer_release) SWAP(buffer_import) SWAP(backend_set_option) SWAP(queue_import)
#undef SWAP

  row->real_api = real;
  /* Published last: from here on the trampolines find the slot. */
  atomic_store_explicit(&s->be, row->be, memory_order_release);
  row->api = &row->counted;
  return NULL;
}

alloy_error *runtime_count_entries(alloy_runtime *rt, int backend) {
  if (!rt || backend < 0 || backend >= rt->num || !rt->backends[backend].ok ||
      !rt->backends[backend].real_api || !rt->backends[backend].be)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                           "entry counting: backend %d is not an open backend", backend);
  alloy_loaded *row = &rt->backends[backend];
  count_slot *s = slot_of(row->be);
  if (!s) return alloy_error_new(ALLOY_ERR_INTERNAL, "backend %s is not guarded", row->name);
  for (int i = 0; i < GUARD_NUM_ENTRIES; i++) atomic_store_explicit(&s->calls[i], 0, memory_order_relaxed);
  row->calls = (uint64_t *)s->calls; /* a marker only: read through runtime_entry_calls */
  return NULL;
}

int64_t runtime_entry_calls(const alloy_runtime *rt, int backend, const char *name) {
  if (!rt || !name || backend < 0 || backend >= rt->num) return -1;
  const alloy_loaded *row = &rt->backends[backend];
  if (!row->calls || !row->be) return -1;
  const count_slot *s = slot_of(row->be);
  if (!s || s->row != row) return -1;
  for (int i = 0; i < GUARD_NUM_ENTRIES; i++)
    if (!strcmp(entry_names[i], name))
      return (int64_t)atomic_load_explicit(&s->calls[i], memory_order_relaxed);
  return -1;
}
