/*
 * sdk/src/counting.c: entry counting, for conformance (runtime_internal.h).
 *
 * runtime_count_entries(rt, i) points backend i's row at row->counted, a
 * copy of the plugin's table in which every non-NULL function entry but
 * backend_open is a trampoline here: it counts the call by entry and
 * forwards it to the plugin's own table (row->real_api). Only the first
 * struct_size bytes of the plugin's table are copied, and only entries
 * inside them are swapped (ALLOY_HAS_FIELD): what an older plugin's table
 * lacks stays NULL in the copy, and the copy keeps the plugin's struct_size,
 * so the host sees exactly the table the plugin gave, entry for entry.
 *
 * A trampoline gets the plugin's arguments and nothing else. Every entry but
 * backend_open takes the alloy_backend * first, so the row is found by that
 * pointer in a process-wide registry: a fixed array of COUNT_SLOTS slots,
 * each (backend, the plugin's table, the row, the counters), searched
 * lock-free by a linear scan. backend_open is left as it is: it runs at load,
 * before counting can start, and takes no backend to find the row by.
 *
 * A slot is taken when counting starts and given back by the backend_close
 * trampoline (the runtime's close, loader.c row_release, calls it through
 * the counted table), which also points the row back at the plugin's table:
 * after that the backend pointer is dead, and the plugin may hand the same
 * address to a later backend. So no hook in the loader is needed.
 *
 * Threads: execute, the copies and event_wait may be called from several
 * threads at once (alloy/plugin.h), so the counters are C11 atomics
 * (relaxed: they are tallies, read after the calls they count returned).
 * A slot is published with a release store of its backend pointer after
 * the rest of it is written, and found with acquire loads. Starting and
 * stopping counting follow the plugin table's own rule for creating and
 * releasing objects: one thread at a time per backend.
 */
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
  X(host_buffer_allocate) X(host_buffer_release) X(buffer_import) X(backend_set_option)

enum count_entry {
#define X(f) COUNT_##f,
  COUNT_ENTRIES(X)
#undef X
  COUNT_NUM
};

static const char *const entry_names[COUNT_NUM] = {
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

enum { COUNT_SLOTS = 64 };

typedef struct count_slot {
  atomic_int taken;                /* 0 free, 1 taken (compare-exchanged)    */
  _Atomic(alloy_backend *) be;     /* published last; NULL while not in use  */
  const alloy_plugin_api *real;    /* the plugin's own table                 */
  alloy_loaded *row;               /* the row whose api is the counted copy  */
  _Atomic uint64_t calls[COUNT_NUM];
} count_slot;

static count_slot slots[COUNT_SLOTS];

static count_slot *slot_of(const alloy_backend *be) {
  for (int i = 0; i < COUNT_SLOTS; i++)
    if (atomic_load_explicit(&slots[i].be, memory_order_acquire) == be) return &slots[i];
  return NULL;
}

/* The slot of be with entry's call counted. A backend the registry does
 * not know cannot be forwarded anywhere: that is a host bug (a call after
 * backend_close, or on a row whose counting was never started). */
static count_slot *enter(alloy_backend *be, enum count_entry entry) {
  count_slot *s = be ? slot_of(be) : NULL;
  if (!s) {
    fprintf(stderr, "alloy: entry counting: %s called with backend %p, which is not counted "
            "(closed, or never opened by this runtime)\n", entry_names[entry], (void *)be);
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
  atomic_store_explicit(&s->taken, 0, memory_order_release);
}

/* ---- the trampolines: count, then forward ----------------------------------- */

static void t_backend_close(alloy_backend *be) {
  count_slot *s = enter(be, COUNT_backend_close);
  const alloy_plugin_api *real = s->real;
  /* The last call of this backend: after it be is dead. */
  slot_release(s);
  real->backend_close(be);
}

static int t_device_count(alloy_backend *be) {
  return enter(be, COUNT_device_count)->real->device_count(be);
}

static alloy_error *t_device_info(alloy_backend *be, int device, alloy_device_info *info) {
  return enter(be, COUNT_device_info)->real->device_info(be, device, info);
}

static alloy_error *t_claim(alloy_backend *be, const alloy_graph *g, alloy_claims *claims) {
  return enter(be, COUNT_claim)->real->claim(be, g, claims);
}

static alloy_error *t_compile(alloy_backend *be, const alloy_graph *partition,
                              const alloy_compile_options *options, alloy_executable **out) {
  return enter(be, COUNT_compile)->real->compile(be, partition, options, out);
}

static alloy_error *t_execute(alloy_backend *be, alloy_executable *exe,
                              const alloy_execute_args *args) {
  return enter(be, COUNT_execute)->real->execute(be, exe, args);
}

static void t_executable_release(alloy_backend *be, alloy_executable *exe) {
  enter(be, COUNT_executable_release)->real->executable_release(be, exe);
}

static alloy_error *t_buffer_allocate(alloy_backend *be, int device, uint64_t bytes,
                                      alloy_buffer **out) {
  return enter(be, COUNT_buffer_allocate)->real->buffer_allocate(be, device, bytes, out);
}

static void t_buffer_release(alloy_backend *be, alloy_buffer *buf) {
  enter(be, COUNT_buffer_release)->real->buffer_release(be, buf);
}

static void *t_buffer_host_pointer(alloy_backend *be, alloy_buffer *buf) {
  return enter(be, COUNT_buffer_host_pointer)->real->buffer_host_pointer(be, buf);
}

static alloy_error *t_buffer_copy_from_host(alloy_backend *be, alloy_buffer *dst, uint64_t offset,
                                            const void *src, uint64_t bytes, alloy_queue *queue,
                                            alloy_event **done) {
  return enter(be, COUNT_buffer_copy_from_host)
      ->real->buffer_copy_from_host(be, dst, offset, src, bytes, queue, done);
}

static alloy_error *t_buffer_copy_to_host(alloy_backend *be, void *dst, alloy_buffer *src,
                                          uint64_t offset, uint64_t bytes, alloy_queue *queue,
                                          alloy_event **done) {
  return enter(be, COUNT_buffer_copy_to_host)
      ->real->buffer_copy_to_host(be, dst, src, offset, bytes, queue, done);
}

static alloy_error *t_buffer_copy(alloy_backend *be, alloy_buffer *dst, uint64_t dst_offset,
                                  alloy_buffer *src, uint64_t src_offset, uint64_t bytes,
                                  alloy_queue *queue, alloy_event **done) {
  return enter(be, COUNT_buffer_copy)
      ->real->buffer_copy(be, dst, dst_offset, src, src_offset, bytes, queue, done);
}

static alloy_error *t_queue_create(alloy_backend *be, int device, alloy_queue **out) {
  return enter(be, COUNT_queue_create)->real->queue_create(be, device, out);
}

static void t_queue_release(alloy_backend *be, alloy_queue *q) {
  enter(be, COUNT_queue_release)->real->queue_release(be, q);
}

static alloy_error *t_event_wait(alloy_backend *be, alloy_event *ev) {
  return enter(be, COUNT_event_wait)->real->event_wait(be, ev);
}

static int t_event_query(alloy_backend *be, alloy_event *ev) {
  return enter(be, COUNT_event_query)->real->event_query(be, ev);
}

static void t_event_release(alloy_backend *be, alloy_event *ev) {
  enter(be, COUNT_event_release)->real->event_release(be, ev);
}

static alloy_error *t_executable_serialize(alloy_backend *be, alloy_executable *exe, void **bytes,
                                           uint64_t *size, alloy_compat_info *info) {
  return enter(be, COUNT_executable_serialize)->real->executable_serialize(be, exe, bytes, size, info);
}

static alloy_error *t_executable_deserialize(alloy_backend *be, const alloy_graph *partition,
                                             const void *bytes, uint64_t size,
                                             alloy_executable **out) {
  return enter(be, COUNT_executable_deserialize)
      ->real->executable_deserialize(be, partition, bytes, size, out);
}

static alloy_error *t_event_record(alloy_backend *be, alloy_queue *q, alloy_event **out) {
  return enter(be, COUNT_event_record)->real->event_record(be, q, out);
}

static alloy_error *t_queue_wait_event(alloy_backend *be, alloy_queue *q, alloy_event *ev) {
  return enter(be, COUNT_queue_wait_event)->real->queue_wait_event(be, q, ev);
}

static alloy_error *t_host_buffer_allocate(alloy_backend *be, uint64_t bytes, void **out) {
  return enter(be, COUNT_host_buffer_allocate)->real->host_buffer_allocate(be, bytes, out);
}

static void t_host_buffer_release(alloy_backend *be, void *ptr) {
  enter(be, COUNT_host_buffer_release)->real->host_buffer_release(be, ptr);
}

static alloy_error *t_buffer_import(alloy_backend *be, int device, void *device_pointer,
                                    uint64_t bytes, const alloy_ext *ext, alloy_buffer **out) {
  return enter(be, COUNT_buffer_import)
      ->real->buffer_import(be, device, device_pointer, bytes, ext, out);
}

static alloy_error *t_backend_set_option(alloy_backend *be, const char *key, const char *value) {
  return enter(be, COUNT_backend_set_option)->real->backend_set_option(be, key, value);
}

/* ---- the interface ---------------------------------------------------------- */

alloy_error *runtime_count_entries(alloy_runtime *rt, int backend) {
  if (!rt || backend < 0 || backend >= rt->num || !rt->backends[backend].ok ||
      !rt->backends[backend].api || !rt->backends[backend].be)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                           "entry counting: backend %d is not an open backend", backend);
  alloy_loaded *row = &rt->backends[backend];
  if (row->calls) return NULL; /* already on */
  const alloy_plugin_api *real = row->api;
  count_slot *s = NULL;
  for (int i = 0; i < COUNT_SLOTS && !s; i++) {
    int free_slot = 0;
    if (atomic_compare_exchange_strong(&slots[i].taken, &free_slot, 1)) s = &slots[i];
  }
  if (!s)
    return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY,
                           "entry counting: backend %s: %d backends are counted already (the most "
                           "at once)", row->name, COUNT_SLOTS);
  for (int i = 0; i < COUNT_NUM; i++) atomic_store_explicit(&s->calls[i], 0, memory_order_relaxed);
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
  SWAP(host_buffer_release) SWAP(buffer_import) SWAP(backend_set_option)
#undef SWAP

  row->real_api = real;
  row->calls = (uint64_t *)s->calls; /* a marker only: read through runtime_entry_calls */
  /* Published last: from here on the trampolines find the slot. */
  atomic_store_explicit(&s->be, row->be, memory_order_release);
  row->api = &row->counted;
  return NULL;
}

int64_t runtime_entry_calls(const alloy_runtime *rt, int backend, const char *name) {
  if (!rt || !name || backend < 0 || backend >= rt->num) return -1;
  const alloy_loaded *row = &rt->backends[backend];
  if (!row->calls || !row->be) return -1;
  const count_slot *s = slot_of(row->be);
  if (!s || s->row != row) return -1;
  for (int i = 0; i < COUNT_NUM; i++)
    if (!strcmp(entry_names[i], name))
      return (int64_t)atomic_load_explicit(&s->calls[i], memory_order_relaxed);
  return -1;
}
