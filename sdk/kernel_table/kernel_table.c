/*
 * sdk/kernel_table/kernel_table.c: alloy_kernel_table_plugin(), the whole
 * plugin a vendor gets from a table of plain C kernels (alloy/kernel_table.h
 * is the contract). This file is the plugin around the kernels: the entry
 * that validates the table, the backend with its one host-memory device
 * ("cpu0" unless the table names another), buffers (its own, imported host pointers, and staging buffers
 * for the host), copies, queues, events and claim. Compiling a partition
 * into call plans and running them is kt_execute.c; reading signatures and
 * matching rows to nodes is kt_signature.c.
 *
 * The plugin is an ABI 1.3 one. Work is synchronous: every call is finished
 * when it returns, so execute and the copies hand back no event (*done
 * NULL), event_record hands back one already signalled, and
 * queue_wait_event has nothing to wait for.
 *
 * Everything about graphs goes through the host table, never liballoy, and
 * the only mutable state outside the objects handed out is the table
 * pointer set at load: execute may run on several threads at once. A host
 * older than 1.2 is read only up to its struct_size: claims_reject is
 * called only where ALLOY_HAS_FIELD finds it.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "sdk/kernel_table/kt_internal.h"

struct alloy_backend {
  const alloy_host_api *host;
  const alloy_kernel_table *table;
  uint64_t memory_bytes;
  char arch[96]; /* alloy_device_info.arch: "x86_64 avx2" */
  /* Creation and release are serialized by the host (alloy/plugin.h), but
   * the list is cheap to guard and a host that breaks the rule then costs
   * a wait, not a corrupted list. */
  pthread_mutex_t lock;
  kt_obj objects; /* sentinel of a circular list */
};

struct alloy_queue {
  kt_obj obj;
  int device;
};

/* Work is finished when a call returns: execute and the copies return no
 * event (NULL, "already complete"), and the events event_record makes are
 * signalled from birth. They are on the backend's list like every object. */
struct alloy_event {
  kt_obj obj;
};

/* What device_info says of the cost of running here (alloy_device_info).
 * launch_s: the helper's own work per execute (checking the arguments,
 * staging slots, one libffi call per node): 0.5 us for a one-node partition
 * of four floats on an x86-64 server core, rounded up to 1 us for the
 * staging a real partition adds (tests/test_kernel_table.c,
 * kt_launch_overhead_is_about_a_microsecond, prints it with
 * ALLOY_TEST_VERBOSE=1). host_bytes_per_s: buffers are host memory that the host reads
 * and writes in place (ALLOY_DEVICE_CAP_HOST_VISIBLE); a copy to or from
 * the host is a memcpy, which one core does at tens of GB/s: 50e9 tells the
 * partitioner that crossing to this backend costs little, but not nothing. */
#define KT_LAUNCH_S 1e-6
#define KT_HOST_BYTES_PER_S 50e9

/* host_buffer_allocate's memory: an object header in the first 64 bytes,
 * the caller's bytes after it (64-byte aligned). */
#define KT_HOST_BUFFER_HEADER 64
_Static_assert(sizeof(kt_obj) <= KT_HOST_BUFFER_HEADER, "the header holds a kt_obj");

/* The table of the image this file is linked into (one per plugin
 * library), and the plugin table made from it, filled at load. */
static const alloy_kernel_table *kt_loaded_table;
static alloy_plugin_api kt_api;

/* ---- small shared helpers ------------------------------------------------ */

alloy_error *alloy_kt_error(const alloy_host_api *host, alloy_error_code code, const char *fmt,
                            ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return host->error_new(code, msg);
}

void alloy_kt_node_label(const alloy_host_api *h, const alloy_node *n, int index, char *buf,
                         size_t cap) {
  const char *op = h->node_op_name(n);
  const alloy_value *v = h->node_num_outputs(n) > 0 ? h->node_output(n, 0) : NULL;
  const char *name = v ? h->value_name(v) : NULL;
  if (name && *name) snprintf(buf, cap, "node %s (%s)", name, op ? op : "?");
  else snprintf(buf, cap, "node #%d (%s)", index, op ? op : "?");
}

void alloy_kt_track(alloy_backend *be, kt_obj *o, int kind) {
  o->kind = kind;
  pthread_mutex_lock(&be->lock);
  o->next = be->objects.next;
  o->prev = &be->objects;
  be->objects.next->prev = o;
  be->objects.next = o;
  pthread_mutex_unlock(&be->lock);
}

void alloy_kt_untrack(alloy_backend *be, kt_obj *o) {
  pthread_mutex_lock(&be->lock);
  o->prev->next = o->next;
  o->next->prev = o->prev;
  o->prev = o->next = o;
  pthread_mutex_unlock(&be->lock);
}

const alloy_host_api *alloy_kt_host(alloy_backend *be) { return be->host; }
const alloy_kernel_table *alloy_kt_table(alloy_backend *be) { return be->table; }

/* ---- backend and devices ------------------------------------------------- */

/* The host CPU as uname names it ("x86_64", "aarch64"), with the vector
 * extensions the compiler can test for. */
static void kt_arch(char *buf, size_t cap) {
  struct utsname u;
  snprintf(buf, cap, "%s", uname(&u) == 0 ? u.machine : "unknown");
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
  __builtin_cpu_init();
  size_t n = strlen(buf);
  if (__builtin_cpu_supports("avx2")) n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, " avx2");
  if (n < cap && __builtin_cpu_supports("avx512f"))
    snprintf(buf + n, cap - n, " avx512f");
#endif
}

/* Memory free now: MemAvailable of /proc/meminfo (what can be allocated
 * without swapping), else sysinfo's free RAM; 0 when neither says. */
static uint64_t kt_free_memory(void) {
  FILE *f = fopen("/proc/meminfo", "r");
  char line[256];
  unsigned long long kb = 0;
  bool found = false;
  while (f && !found && fgets(line, sizeof line, f))
    found = sscanf(line, "MemAvailable: %llu kB", &kb) == 1;
  if (f) fclose(f);
  if (found) return (uint64_t)kb * 1024;
  struct sysinfo si;
  if (sysinfo(&si) == 0) return (uint64_t)si.freeram * (si.mem_unit ? si.mem_unit : 1);
  return 0;
}

static alloy_error *kt_backend_open(const alloy_host_api *host, alloy_backend **out) {
  *out = NULL;
  alloy_backend *be = calloc(1, sizeof *be);
  if (!be) return host->error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory opening the backend");
  be->host = host;
  be->table = kt_loaded_table;
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  be->memory_bytes = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
  kt_arch(be->arch, sizeof be->arch);
  if (pthread_mutex_init(&be->lock, NULL) != 0) {
    free(be);
    return host->error_new(ALLOY_ERR_INTERNAL, "cannot create the backend's lock");
  }
  be->objects.next = be->objects.prev = &be->objects;
  *out = be;
  return NULL;
}

static void kt_free_object(kt_obj *o) {
  if (o->kind == KT_OBJ_BUFFER) {
    if (((alloy_buffer *)o)->owned) free(((alloy_buffer *)o)->mem);
    free(o);
  } else if (o->kind == KT_OBJ_EXECUTABLE) {
    alloy_kt_executable_free((alloy_executable *)o);
  } else {
    free(o);
  }
}

static void kt_backend_close(alloy_backend *be) {
  if (!be) return;
  while (be->objects.next != &be->objects) {
    kt_obj *o = be->objects.next;
    alloy_kt_untrack(be, o);
    kt_free_object(o);
  }
  pthread_mutex_destroy(&be->lock);
  free(be);
}

/* The table's device (since 1.2): "cpu0" and cpu unless it says. */
static const char *kt_device_name(const alloy_kernel_table *t) {
  return t && ALLOY_HAS_FIELD(t, alloy_kernel_table, device_name) && t->device_name &&
                 *t->device_name
             ? t->device_name
             : "cpu0";
}

static alloy_device_kind kt_device_kind(const alloy_kernel_table *t) {
  return t && ALLOY_HAS_FIELD(t, alloy_kernel_table, device_kind) ? (alloy_device_kind)t->device_kind
                                                                   : ALLOY_DEVICE_KIND_CPU;
}

static int kt_device_count(alloy_backend *be) {
  (void)be;
  return 1;
}

static alloy_error *kt_device_info(alloy_backend *be, int device, alloy_device_info *info) {
  if (device != 0 || !info)
    return alloy_kt_error(be->host, ALLOY_ERR_INVALID_ARGUMENT,
                          "device %d does not exist: this backend has one device, 0", device);
  if (ALLOY_HAS_FIELD(info, alloy_device_info, name)) info->name = kt_device_name(be->table);
  if (ALLOY_HAS_FIELD(info, alloy_device_info, kind)) info->kind = kt_device_kind(be->table);
  if (ALLOY_HAS_FIELD(info, alloy_device_info, memory_bytes)) info->memory_bytes = be->memory_bytes;
  /* since 1.2 */
  if (ALLOY_HAS_FIELD(info, alloy_device_info, free_memory_bytes))
    info->free_memory_bytes = kt_free_memory();
  if (ALLOY_HAS_FIELD(info, alloy_device_info, arch)) info->arch = be->arch;
  if (ALLOY_HAS_FIELD(info, alloy_device_info, capabilities))
    info->capabilities = ALLOY_DEVICE_CAP_HOST_VISIBLE | ALLOY_DEVICE_CAP_IMPORT;
  if (ALLOY_HAS_FIELD(info, alloy_device_info, launch_s)) info->launch_s = KT_LAUNCH_S;
  if (ALLOY_HAS_FIELD(info, alloy_device_info, host_bytes_per_s))
    info->host_bytes_per_s = KT_HOST_BYTES_PER_S;
  return NULL;
}

/* ---- claim --------------------------------------------------------------- */

/* Seconds as a rough elementwise throughput of 1e9 elements per second:
 * only the ratio between backends matters to the partitioner. */
static double kt_cost(const alloy_host_api *h, const kt_operands *ops) {
  if (ops->nout == 0) return -1.0;
  const alloy_value *out0 = ops->values[ops->nin];
  double numel = 1.0;
  for (int d = 0; d < h->value_rank(out0); d++) {
    int64_t size;
    if (!h->value_size(out0, d, &size)) return -1.0;
    numel *= (double)size;
  }
  return numel * 1e-9;
}

/* A node no row runs is left with the reason alloy_kt_match gives
 * (host->claims_reject, a 1.2 host's), which `alloy partition` shows. */
static alloy_error *kt_claim(alloy_backend *be, const alloy_graph *g, alloy_claims *claims) {
  const alloy_host_api *h = be->host;
  bool reasons = ALLOY_HAS_FIELD(h, alloy_host_api, claims_reject) && h->claims_reject;
  for (int i = 0; i < h->graph_num_nodes(g); i++) {
    const alloy_node *n = h->graph_node(g, i);
    kt_operands ops;
    kt_sig sig;
    char why[384];
    if (!alloy_kt_operands(h, n, &ops))
      return h->error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory while claiming");
    if (alloy_kt_match(h, be->table, n, &ops, &sig, why, sizeof why) >= 0)
      h->claims_add(claims, i, kt_cost(h, &ops));
    else if (reasons)
      h->claims_reject(claims, i, why);
    alloy_kt_operands_free(&ops);
  }
  return NULL;
}

static void kt_executable_release(alloy_backend *be, alloy_executable *exe) {
  if (!exe) return;
  alloy_kt_untrack(be, (kt_obj *)exe);
  alloy_kt_executable_free(exe);
}

/* ---- buffers and copies ---------------------------------------------------- */

alloy_error *alloy_kt_buffer_allocate(alloy_backend *be, int device, uint64_t bytes,
                                      alloy_buffer **out) {
  *out = NULL;
  if (device != 0)
    return alloy_kt_error(be->host, ALLOY_ERR_INVALID_ARGUMENT,
                          "device %d does not exist: this backend has one device, 0", device);
  if (bytes > SIZE_MAX - 64)
    return alloy_kt_error(be->host, ALLOY_ERR_OUT_OF_MEMORY, "cannot allocate %llu bytes",
                          (unsigned long long)bytes);
  alloy_buffer *b = calloc(1, sizeof *b);
  /* aligned_alloc wants a multiple of the alignment, and 0 bytes still
   * gives a distinct pointer. */
  size_t rounded = ((size_t)bytes + 63) & ~(size_t)63;
  void *mem = aligned_alloc(64, rounded ? rounded : 64);
  if (!b || !mem) {
    free(b);
    free(mem);
    return alloy_kt_error(be->host, ALLOY_ERR_OUT_OF_MEMORY, "cannot allocate %llu bytes",
                          (unsigned long long)bytes);
  }
  b->mem = mem;
  b->bytes = bytes;
  b->owned = true;
  alloy_kt_track(be, &b->obj, KT_OBJ_BUFFER);
  *out = b;
  return NULL;
}

static void kt_buffer_release(alloy_backend *be, alloy_buffer *b) {
  if (!b) return;
  alloy_kt_untrack(be, &b->obj);
  if (b->owned) free(b->mem);
  free(b);
}

/* Device memory of this backend is host memory: an imported pointer is any
 * host address, used in place and left to its owner at release. The
 * extension chain (a stream to order on) means nothing here: ignored. */
static alloy_error *kt_buffer_import(alloy_backend *be, int device, void *pointer, uint64_t bytes,
                                     const alloy_ext *ext, alloy_buffer **out) {
  (void)ext;
  if (device != 0)
    return alloy_kt_error(be->host, ALLOY_ERR_INVALID_ARGUMENT,
                          "device %d does not exist: this backend has one device, 0", device);
  if (!pointer && bytes)
    return alloy_kt_error(be->host, ALLOY_ERR_INVALID_ARGUMENT,
                          "buffer_import: no memory given for %llu bytes", (unsigned long long)bytes);
  alloy_buffer *b = calloc(1, sizeof *b);
  if (!b) return be->host->error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory importing a buffer");
  b->mem = pointer;
  b->bytes = bytes;
  b->owned = false;
  alloy_kt_track(be, &b->obj, KT_OBJ_BUFFER);
  *out = b;
  return NULL;
}

/* Staging memory for the host: 64-byte aligned host memory (all of ours is
 * "pinned" as far as a copy goes: copies are memcpy). */
static alloy_error *kt_host_buffer_allocate(alloy_backend *be, uint64_t bytes, void **out) {
  if (bytes > SIZE_MAX - 2 * KT_HOST_BUFFER_HEADER)
    return alloy_kt_error(be->host, ALLOY_ERR_OUT_OF_MEMORY, "cannot allocate %llu bytes",
                          (unsigned long long)bytes);
  size_t rounded = ((size_t)bytes + 63) & ~(size_t)63;
  char *base = aligned_alloc(64, KT_HOST_BUFFER_HEADER + rounded);
  if (!base)
    return alloy_kt_error(be->host, ALLOY_ERR_OUT_OF_MEMORY, "cannot allocate %llu bytes",
                          (unsigned long long)bytes);
  alloy_kt_track(be, (kt_obj *)base, KT_OBJ_HOST_BUFFER);
  *out = base + KT_HOST_BUFFER_HEADER;
  return NULL;
}

static void kt_host_buffer_release(alloy_backend *be, void *ptr) {
  if (!ptr) return;
  kt_obj *o = (kt_obj *)((char *)ptr - KT_HOST_BUFFER_HEADER);
  alloy_kt_untrack(be, o);
  free(o);
}

static void *kt_buffer_host_pointer(alloy_backend *be, alloy_buffer *b) {
  (void)be;
  return b ? b->mem : NULL;
}

static alloy_error *kt_range(alloy_backend *be, const char *what, const alloy_buffer *b,
                             uint64_t offset, uint64_t bytes) {
  if (!b)
    return alloy_kt_error(be->host, ALLOY_ERR_INVALID_ARGUMENT, "%s: no buffer given", what);
  if (offset > b->bytes || bytes > b->bytes - offset)
    return alloy_kt_error(be->host, ALLOY_ERR_INVALID_ARGUMENT,
                          "%s: bytes [%llu, %llu) are outside the buffer of %llu bytes", what,
                          (unsigned long long)offset, (unsigned long long)offset + bytes,
                          (unsigned long long)b->bytes);
  return NULL;
}

/* Copies finish before returning; with a queue the caller is told so
 * (*done NULL: already complete). Without one *done is left untouched, as
 * alloy/plugin.h says. */
static void kt_done(alloy_queue *queue, alloy_event **done) {
  if (queue && done) *done = NULL;
}

static alloy_error *kt_copy_from_host(alloy_backend *be, alloy_buffer *dst, uint64_t offset,
                                      const void *src, uint64_t bytes, alloy_queue *queue,
                                      alloy_event **done) {
  alloy_error *e = kt_range(be, "buffer_copy_from_host", dst, offset, bytes);
  if (e) return e;
  if (bytes) memcpy((char *)dst->mem + offset, src, (size_t)bytes);
  kt_done(queue, done);
  return NULL;
}

static alloy_error *kt_copy_to_host(alloy_backend *be, void *dst, alloy_buffer *src,
                                    uint64_t offset, uint64_t bytes, alloy_queue *queue,
                                    alloy_event **done) {
  alloy_error *e = kt_range(be, "buffer_copy_to_host", src, offset, bytes);
  if (e) return e;
  if (bytes) memcpy(dst, (const char *)src->mem + offset, (size_t)bytes);
  kt_done(queue, done);
  return NULL;
}

static alloy_error *kt_copy(alloy_backend *be, alloy_buffer *dst, uint64_t dst_offset,
                            alloy_buffer *src, uint64_t src_offset, uint64_t bytes,
                            alloy_queue *queue, alloy_event **done) {
  alloy_error *e = kt_range(be, "buffer_copy (destination)", dst, dst_offset, bytes);
  if (!e) e = kt_range(be, "buffer_copy (source)", src, src_offset, bytes);
  if (e) return e;
  /* Both ranges may lie in one buffer. */
  if (bytes) memmove((char *)dst->mem + dst_offset, (const char *)src->mem + src_offset, (size_t)bytes);
  kt_done(queue, done);
  return NULL;
}

/* ---- queues and events ------------------------------------------------------ */

static alloy_error *kt_queue_create(alloy_backend *be, int device, alloy_queue **out) {
  *out = NULL;
  if (device != 0)
    return alloy_kt_error(be->host, ALLOY_ERR_INVALID_ARGUMENT,
                          "device %d does not exist: this backend has one device, 0", device);
  alloy_queue *q = calloc(1, sizeof *q);
  if (!q) return be->host->error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory creating a queue");
  q->device = device;
  alloy_kt_track(be, &q->obj, KT_OBJ_QUEUE);
  *out = q;
  return NULL;
}

static void kt_queue_release(alloy_backend *be, alloy_queue *q) {
  if (!q) return;
  alloy_kt_untrack(be, &q->obj);
  free(q);
}

/* Everything enqueued on q is done already: the event is born signalled.
 * q may be NULL (the default queue). */
static alloy_error *kt_event_record(alloy_backend *be, alloy_queue *q, alloy_event **out) {
  (void)q;
  alloy_event *ev = calloc(1, sizeof *ev);
  if (!ev) return be->host->error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory recording an event");
  alloy_kt_track(be, &ev->obj, KT_OBJ_EVENT);
  *out = ev;
  return NULL;
}

/* Work is never pending, so there is nothing to order after ev. */
static alloy_error *kt_queue_wait_event(alloy_backend *be, alloy_queue *q, alloy_event *ev) {
  (void)be;
  (void)q;
  (void)ev;
  return NULL;
}

/* Every event of ours is signalled, and NULL ("already complete") too. */
static alloy_error *kt_event_wait(alloy_backend *be, alloy_event *ev) {
  (void)be;
  (void)ev;
  return NULL;
}

static int kt_event_query(alloy_backend *be, alloy_event *ev) {
  (void)be;
  (void)ev;
  return 1;
}

static void kt_event_release(alloy_backend *be, alloy_event *ev) {
  if (!ev) return;
  alloy_kt_untrack(be, &ev->obj);
  free(ev);
}

/* ---- the entry ----------------------------------------------------------------- */

static bool kt_row_ok(const alloy_kernel_table *t, int r, char *err, size_t cap) {
  const alloy_kernel *k = &t->kernels[r];
  char why[384];
  kt_sig sig;
  int nin, nout;
  if (!k->op || !*k->op) return snprintf(err, cap, "row %d: no op name", r), false;
  if (!k->fn) return snprintf(err, cap, "row %d (%s): no function", r, k->op), false;
  if (!alloy_kt_dtypes_check(k->dtypes, &nin, &nout, why, sizeof why) ||
      !alloy_kt_sig_parse(k->signature, &sig, why, sizeof why))
    return snprintf(err, cap, "row %d (%s): %s", r, k->op, why), false;
  /* A per-operand constraint fixes the operand counts: a signature that
   * reaches past them describes a row that can never run. */
  int max_in = alloy_kt_sig_max_operand(&sig, false), max_out = alloy_kt_sig_max_operand(&sig, true);
  bool bad_in = nin >= 0 && max_in >= nin, bad_out = nout >= 0 && max_out >= nout;
  if (bad_in || bad_out)
    return snprintf(err, cap, "row %d (%s): the signature uses %s%d but the dtype constraint \"%s\" "
                    "lists %d inputs and %d outputs", r, k->op, bad_in ? "in" : "out",
                    bad_in ? max_in : max_out, k->dtypes, nin, nout),
           false;
  return true;
}

static bool kt_table_ok(const alloy_kernel_table *t, char *err, size_t cap) {
  if (!t) return snprintf(err, cap, "no kernel table"), false;
  if (t->struct_size < offsetof(alloy_kernel_table, count) + sizeof t->count)
    return snprintf(err, cap, "struct_size %zu is too small for an alloy_kernel_table", t->struct_size),
           false;
  if (!t->name || !*t->name) return snprintf(err, cap, "the table has no name"), false;
  if (!t->vendor || !t->version) return snprintf(err, cap, "vendor or version missing"), false;
  if (t->count < 0 || (t->count > 0 && !t->kernels))
    return snprintf(err, cap, "count %d with %s kernels", t->count, t->kernels ? "some" : "no"), false;
  if (ALLOY_HAS_FIELD(t, alloy_kernel_table, device_kind) &&
      (t->device_kind < ALLOY_DEVICE_KIND_CPU || t->device_kind > ALLOY_DEVICE_KIND_ACCELERATOR))
    return snprintf(err, cap, "device_kind %d is not an alloy_device_kind (0 cpu, 1 gpu, 2 accelerator)",
                    (int)t->device_kind),
           false;
  for (int r = 0; r < t->count; r++)
    if (!kt_row_ok(t, r, err, cap)) return false;
  return true;
}

/* Every row's op is one the host knows, as a graph names it (a host
 * older than 1.2 has no op_find: its rows go unchecked). */
static bool kt_ops_known(const alloy_kernel_table *t, const alloy_host_api *host, char *err,
                         size_t cap) {
  if (host->abi_major != ALLOY_ABI_MAJOR || !ALLOY_HAS_FIELD(host, alloy_host_api, op_find) ||
      !host->op_find)
    return true;
  char why[512];
  for (int r = 0; r < t->count; r++)
    if (!alloy_kt_op_name_ok(host->op_find, t->kernels[r].op, why, sizeof why))
      return snprintf(err, cap, "row %d (%s): %s", r, t->kernels[r].op, why), false;
  return true;
}

const alloy_plugin_api *alloy_kernel_table_plugin(const alloy_kernel_table *t,
                                                  const alloy_host_api *host) {
  if (!host) return NULL;
  const char *name = t && t->name && *t->name ? t->name : "kernel_table";
  char err[768], msg[1024];
  if (!kt_table_ok(t, err, sizeof err) || !kt_ops_known(t, host, err, sizeof err)) {
    snprintf(msg, sizeof msg, "kernel table %s is wrong: %s", name, err);
    host->log(ALLOY_LOG_ERROR, name, msg);
    return NULL;
  }
  /* Another major: hand the table back untouched so that the host refuses
   * it naming both versions (we may only log to such a host). */
  if (host->abi_major == ALLOY_ABI_MAJOR && !ALLOY_HAS_FIELD(host, alloy_host_api, claims_add)) {
    host->log(ALLOY_LOG_ERROR, name, "the host's function table is too short for ABI 1.0");
    return NULL;
  }
  /* Filled once: a host may load the built-in copy from several threads,
   * and a table is never rewritten under a reader. */
  static pthread_mutex_t fill_lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&fill_lock);
  if (kt_loaded_table == t) {
    pthread_mutex_unlock(&fill_lock);
    return &kt_api;
  }
  kt_loaded_table = t;
  kt_api = (alloy_plugin_api){
      .struct_size = ALLOY_PLUGIN_API_STRUCT_SIZE,
      .abi_major = ALLOY_ABI_MAJOR,
      .abi_minor = ALLOY_ABI_MINOR,
      .name = t->name,
      .vendor = t->vendor,
      .version = t->version,
      .backend_open = kt_backend_open,
      .backend_close = kt_backend_close,
      .device_count = kt_device_count,
      .device_info = kt_device_info,
      .claim = kt_claim,
      .compile = alloy_kt_compile,
      .execute = alloy_kt_execute,
      .executable_release = kt_executable_release,
      .buffer_allocate = alloy_kt_buffer_allocate,
      .buffer_release = kt_buffer_release,
      .buffer_host_pointer = kt_buffer_host_pointer,
      .buffer_copy_from_host = kt_copy_from_host,
      .buffer_copy_to_host = kt_copy_to_host,
      .buffer_copy = kt_copy,
      .queue_create = kt_queue_create,
      .queue_release = kt_queue_release,
      .event_wait = kt_event_wait,
      .event_query = kt_event_query,
      .event_release = kt_event_release,
      .executable_serialize = NULL,
      .executable_deserialize = NULL,
      .capabilities = 0,
      /* since 1.2 */
      .event_record = kt_event_record,
      .queue_wait_event = kt_queue_wait_event,
      .host_buffer_allocate = kt_host_buffer_allocate,
      .host_buffer_release = kt_host_buffer_release,
      .buffer_import = kt_buffer_import,
      .backend_set_option = NULL, /* the helper has no options */
      .queue_import = NULL,       /* nor streams of a caller's: its queues are its own threads */
  };
  pthread_mutex_unlock(&fill_lock);
  return &kt_api;
}
