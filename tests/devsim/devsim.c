/*
 * tests/devsim/devsim.c: the testing backend "devsim", a simulated
 * accelerator that nobody can see into. It proves the host runtime's
 * device-resident data path (sdk/src/exec.c) on a machine without one: a
 * host that forgets an event wait, reads a result too early or reuses
 * memory it lent a copy gets wrong values here, as it would on a GPU.
 * Loaded by dlopen like any vendor plugin (liballoy-devsim.so in
 * <build>/tests/plugins/, linked from the files of tests/devsim/, the
 * reference kernels and the kernel-table helper, as tests/chooser/chooser.c
 * is). It is an ABI 1.3 plugin written against the host table alone.
 * This file is the plugin: its entries check their arguments and hand
 * commands to queues; devsim_device.c is the device they run on (memory,
 * events, queues and their workers); devsim_internal.h what they share.
 *
 * What it simulates:
 *   - Its own address space. A buffer is an mmap'd region between two
 *     PROT_NONE guard pages, its data placed so that its end, rounded up to
 *     64 bytes, touches the trailing guard: an overrun faults. Fresh memory
 *     holds 0xA5 bytes, not zeros (device memory holds whatever was there).
 *     buffer_host_pointer is always NULL: the host reaches the data only
 *     through the copies, and every copy and every tensor execute is given
 *     is checked against its buffer's size before it is accepted.
 *   - Asynchronous queues. Each queue has a worker thread that runs its
 *     commands in order (copies in, out and across, executes, event records
 *     and event waits), sleeping a pseudo-random 0..delay_us microseconds
 *     before each one. Given a queue, execute and the copies only enqueue
 *     and hand back a completion event; a copy reads or writes the host
 *     memory it was lent when the worker gets there, and execute reads its
 *     tensors then too (alloy/plugin.h lends both until completion). Given
 *     no queue, an entry runs on devsim's default queue and waits for it,
 *     but not for the other queues (a CUDA non-blocking stream).
 *   - Events, signalled by the workers and counted by reference, so that
 *     the host may release one before it is signalled. A failed command's
 *     event keeps the code and message, and event_wait makes the error
 *     anew for each wait. A queue also keeps its first failure since its
 *     last event_record, which that record's event reports: a host that
 *     only waits for a record still learns that earlier work failed.
 *   - Buffer import of device pointers: only the data start of a live
 *     buffer of devsim itself is taken (devsim keeps a registry of them).
 *     Memory is counted by reference (handles, imports and queued commands),
 *     so releasing a buffer that queued work still uses is safe, as
 *     stream-ordered frees are.
 *   - A caller's stream (queue_import): one of devsim's own queues, made
 *     by the application with queue_create and named in an
 *     ALLOY_EXT_CUDA_STREAM extension, as a CUDA plugin takes a
 *     cudaStream_t; work given to the import runs on that queue.
 *
 * Kernels are the reference backend's through the kernel-table helper: a
 * partition is compiled by the helper, and an execute on the worker gives
 * the helper its own buffer structs (kt_internal.h) pointing into devsim's
 * memory. An output whose sizes depend on the data comes with no buffer;
 * the helper then makes one of its own, which devsim copies into a fresh
 * devsim buffer for the host. Because the sizes of such outputs are written
 * into the host's alloy_tensor, an execute with one runs synchronously: it
 * is enqueued, and the entry waits for it before returning.
 *
 * Claims are the reference kernels' at half the cost the helper estimates,
 * so that a devsim,ref mixture gives devsim every node it claims.
 * $ALLOY_DEVSIM_SKIP=GLOB[,GLOB...] leaves the nodes whose op names match,
 * with a reason (host->claims_reject), so that tests build real mixtures.
 *
 * Settings: $ALLOY_DEVSIM_MEMORY (bytes, a k/m/g suffix allowed; default 4
 * GiB; buffer_allocate beyond it fails), $ALLOY_DEVSIM_DELAY_US (default
 * 20) and $ALLOY_DEVSIM_SEED, the last two also backend options "delay_us"
 * and "seed" (backend_set_option, or compile options). $ALLOY_DEVSIM_STATS
 * names a file that backend_close appends its counters line to; the same
 * line is logged at info level, with another naming the required entries
 * the host never called.
 *
 * Threads: the host may call execute, the copies and event_wait from
 * several threads at once. Object lists, memory accounting and executable
 * use counts are under the backend's lock; events under its event lock;
 * each queue's FIFO under its own; counters and settings are atomics.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reference_backend/ref.h"
#include "tests/devsim/devsim_internal.h"

#define DS_DEFAULT_MEMORY (UINT64_C(4) << 30)
#define DS_DEFAULT_DELAY_US 20
#define DS_DEFAULT_SEED 0x5eed
/* A delay beyond ten seconds per command is a typo, not a test. */
#define DS_MAX_DELAY_US 10000000

/* ---- counters -------------------------------------------------------------- */

/* stat: the name in the counters line; abi: the entry's name in
 * alloy_plugin_api; required: a host that never calls it leaves part of
 * the plugin contract unexercised (logged at backend_close). */
static const struct ds_entry_name {
  const char *stat, *abi;
  bool required;
} ds_entry_names[DS_NUM_ENTRIES] = {
    [DS_BACKEND_OPEN] = {"backend_open", "backend_open", true},
    [DS_DEVICE_COUNT] = {"device_count", "device_count", true},
    [DS_DEVICE_INFO] = {"device_info", "device_info", true},
    [DS_CLAIM] = {"claim", "claim", true},
    [DS_COMPILE] = {"compile", "compile", true},
    [DS_EXECUTE] = {"execute", "execute", true},
    [DS_EXECUTABLE_RELEASE] = {"executable_release", "executable_release", true},
    [DS_BUFFER_ALLOCATE] = {"buffer_allocate", "buffer_allocate", true},
    [DS_BUFFER_RELEASE] = {"buffer_release", "buffer_release", true},
    [DS_BUFFER_HOST_POINTER] = {"buffer_host_pointer", "buffer_host_pointer", true},
    [DS_COPY_FROM_HOST] = {"copy_from_host", "buffer_copy_from_host", true},
    [DS_COPY_TO_HOST] = {"copy_to_host", "buffer_copy_to_host", true},
    [DS_COPY] = {"copy", "buffer_copy", true},
    [DS_QUEUE_CREATE] = {"queue_create", "queue_create", true},
    [DS_QUEUE_RELEASE] = {"queue_release", "queue_release", true},
    [DS_EVENT_WAIT] = {"event_wait", "event_wait", true},
    [DS_EVENT_QUERY] = {"event_query", "event_query", true},
    [DS_EVENT_RELEASE] = {"event_release", "event_release", true},
    [DS_EVENT_RECORD] = {"event_record", "event_record", false},
    [DS_QUEUE_WAIT_EVENT] = {"queue_wait_event", "queue_wait_event", false},
    [DS_HOST_BUFFER_ALLOCATE] = {"host_buffer_allocate", "host_buffer_allocate", false},
    [DS_HOST_BUFFER_RELEASE] = {"host_buffer_release", "host_buffer_release", false},
    [DS_BUFFER_IMPORT] = {"buffer_import", "buffer_import", false},
    [DS_BACKEND_SET_OPTION] = {"backend_set_option", "backend_set_option", false},
    [DS_QUEUE_IMPORT] = {"queue_import", "queue_import", false},
};

/* ---- the kernels, the helper's plugin, and what it sees of the host ----- */

static alloy_kernel all_kernels[4096];
static alloy_kernel_table table;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
const alloy_plugin_api *ds_kt_api; /* set once under init_lock */
static alloy_plugin_api api;       /* filled once under init_lock */
_Thread_local struct ds_thread ds_ctx;
/* The host that loaded devsim: errors made where no backend is known. */
static const alloy_host_api *_Atomic entry_host;

static void table_build(void) {
  int n = ref_kernels_join(all_kernels, (int)(sizeof all_kernels / sizeof *all_kernels));
  table = (alloy_kernel_table){.struct_size = ALLOY_KERNEL_TABLE_STRUCT_SIZE, .name = DS_NAME,
                               .vendor = "Alloy tests", .version = "0.1.0",
                               .kernels = all_kernels, .count = n};
}

void ds_log(ds_backend *be, alloy_log_level level, const char *fmt, ...) {
  const alloy_host_api *h = be->host;
  if (ALLOY_HAS_FIELD(h, alloy_host_api, log_level) && h->log_level && level < h->log_level()) return;
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  h->log(level, DS_NAME, msg);
}

alloy_error *ds_error(ds_backend *be, alloy_error_code code, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return be->host->error_new(code, msg);
}

static alloy_error *ds_kt_error_new(alloy_error_code code, const char *message) {
  const alloy_host_api *h = ds_ctx.be ? ds_ctx.be->host : atomic_load(&entry_host);
  alloy_error *e = h->error_new(code, message);
  ds_ctx.made = e;
  ds_ctx.made_code = code;
  return e;
}

static bool ds_skipped(const char *op) {
  const char *spec = getenv("ALLOY_DEVSIM_SKIP");
  if (!spec || !*spec || !op) return false;
  char globs[1024];
  snprintf(globs, sizeof globs, "%s", spec);
  for (char *save = NULL, *g = strtok_r(globs, ",", &save); g; g = strtok_r(NULL, ",", &save))
    if (!fnmatch(g, op, 0)) return true;
  return false;
}

static void ds_reject(ds_backend *be, alloy_claims *claims, int i, const char *reason) {
  const alloy_host_api *h = be->host;
  if (ALLOY_HAS_FIELD(h, alloy_host_api, claims_reject) && h->claims_reject)
    h->claims_reject(claims, i, reason);
}

/* Half the helper's estimate: devsim must be cheaper than ref, so that a
 * devsim,ref mixture whose launches and copies cost nothing gives devsim
 * everything it claims. */
static double ds_cost(double cost) { return cost > 0 ? cost / 2 : cost; }

static const char *ds_node_op(ds_backend *be, int i) {
  const alloy_host_api *h = be->host;
  const alloy_node *n = h->graph_node(ds_ctx.claiming, i);
  return n ? h->node_op_name(n) : NULL;
}

static void ds_kt_claims_add(alloy_claims *claims, int i, double cost) {
  ds_backend *be = ds_ctx.be;
  if (!be || !ds_ctx.claiming) return;
  if (ds_skipped(ds_node_op(be, i))) {
    ds_reject(be, claims, i, "skipped by $ALLOY_DEVSIM_SKIP");
    return;
  }
  be->host->claims_add(claims, i, ds_cost(cost));
}

/* A group is all or nothing: one skipped member leaves the whole group. */
static void ds_kt_claims_add_group(alloy_claims *claims, const int *nodes, int n, double cost) {
  ds_backend *be = ds_ctx.be;
  if (!be || !ds_ctx.claiming) return;
  bool skip = false;
  for (int k = 0; k < n && !skip; k++) skip = ds_skipped(ds_node_op(be, nodes[k]));
  if (!skip) {
    be->host->claims_add_group(claims, nodes, n, ds_cost(cost));
    return;
  }
  for (int k = 0; k < n; k++)
    ds_reject(be, claims, nodes[k],
              ds_skipped(ds_node_op(be, nodes[k]))
                  ? "skipped by $ALLOY_DEVSIM_SKIP"
                  : "its group holds a node skipped by $ALLOY_DEVSIM_SKIP");
}

/* ---- handles ------------------------------------------------------------------ */

static ds_backend *ds_be(alloy_backend *b) {
  ds_backend *be = (ds_backend *)(void *)b;
  ds_ctx.be = be;
  return be;
}

static void ds_count(ds_backend *be, enum ds_entry e) {
  atomic_fetch_add_explicit(&be->calls[e], 1, memory_order_relaxed);
}

/* NULL with *e set when b is not a live buffer of devsim (a buffer of
 * another backend handed over by mistake, or one released already). */
static ds_buffer *ds_buffer_arg(ds_backend *be, alloy_buffer *b, const char *what,
                                alloy_error **e) {
  ds_buffer *buf = (ds_buffer *)(void *)b;
  if (!buf) *e = ds_error(be, ALLOY_ERR_INVALID_ARGUMENT, "%s: no buffer given", what);
  else if (buf->head.magic != DEVSIM_BUFFER_MAGIC)
    *e = ds_error(be, ALLOY_ERR_INVALID_ARGUMENT,
                  "%s: %p is not a live buffer of devsim (another backend's, or released)", what,
                  (void *)b);
  return *e ? NULL : buf;
}

/* A queue argument: NULL stays NULL (the default queue). */
static alloy_error *ds_queue_arg(ds_backend *be, alloy_queue *q, alloy_event **done,
                                 const char *what, ds_queue **out) {
  ds_queue *dq = (ds_queue *)(void *)q;
  *out = dq;
  if (!dq) return NULL;
  if (dq->magic != DS_MAGIC_QUEUE)
    return ds_error(be, ALLOY_ERR_INVALID_ARGUMENT, "%s: %p is not a live queue of devsim", what,
                    (void *)q);
  if (dq->of) *out = dq->of; /* an imported queue: the caller's */
  /* Work on a queue finishes later: without its event the host could not
   * know when the memory it lent is free again. */
  if (!done)
    return ds_error(be, ALLOY_ERR_INVALID_ARGUMENT,
                    "%s: a queue was given but no place for the completion event (done is NULL)",
                    what);
  return NULL;
}

static ds_event *ds_event_arg(alloy_event *ev) {
  ds_event *e = (ds_event *)(void *)ev;
  return e && e->magic == DS_MAGIC_EVENT ? e : NULL;
}

static alloy_error *ds_range(ds_backend *be, const char *what, const ds_buffer *b,
                             uint64_t offset, uint64_t bytes) {
  if (offset > b->head.bytes || bytes > b->head.bytes - offset)
    return ds_error(be, ALLOY_ERR_INVALID_ARGUMENT,
                    "%s: bytes [%llu, %llu%s) are outside the buffer of %llu bytes", what,
                    (unsigned long long)offset,
                    (unsigned long long)(offset + bytes < offset ? UINT64_MAX : offset + bytes),
                    offset + bytes < offset ? "+" : "", (unsigned long long)b->head.bytes);
  return NULL;
}

/* ---- settings ----------------------------------------------------------------- */

/* A decimal unsigned integer, with a k/m/g (binary) suffix when allowed. */
static bool ds_parse_u64(const char *s, bool suffix, uint64_t *out) {
  if (!s || !*s || *s == '-' || *s == '+') return false;
  errno = 0;
  char *end = NULL;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s) return false;
  unsigned shift = 0;
  if (suffix && *end) {
    const char *units = "kmg";
    const char *u = strchr(units, *end | 0x20);
    if (!u) return false;
    shift = 10 * (unsigned)(u - units + 1);
    end++;
  }
  if (*end || (shift && v > (UINT64_MAX >> shift))) return false;
  *out = (uint64_t)v << shift;
  return true;
}

static alloy_error *ds_set_option(ds_backend *be, const char *key, const char *value) {
  uint64_t v;
  if (!key) return ds_error(be, ALLOY_ERR_INVALID_ARGUMENT, "backend_set_option: no key");
  bool delay = !strcmp(key, "delay_us"), seed = !strcmp(key, "seed");
  if (!delay && !seed)
    return ds_error(be, ALLOY_ERR_NOT_FOUND,
                    "devsim has no option \"%s\" (it takes delay_us and seed)", key);
  if (!ds_parse_u64(value, false, &v) || (delay && v > DS_MAX_DELAY_US))
    return ds_error(be, ALLOY_ERR_INVALID_ARGUMENT, "option %s: \"%s\" is not %s", key,
                    value ? value : "(null)",
                    delay ? "a number of microseconds up to 10000000" : "an unsigned integer");
  atomic_store(delay ? &be->delay_us : &be->seed, v);
  return NULL;
}

static uint64_t ds_env_u64(ds_backend *be, const char *name, bool suffix, uint64_t max,
                           uint64_t fallback) {
  const char *s = getenv(name);
  uint64_t v;
  if (!s || !*s) return fallback;
  if (ds_parse_u64(s, suffix, &v) && v <= max) return v;
  ds_log(be, ALLOY_LOG_WARNING, "$%s=\"%s\" is not a number it takes; using %llu", name, s,
         (unsigned long long)fallback);
  return fallback;
}

/* ---- backend and devices ------------------------------------------------------ */

static alloy_error *ds_backend_open(const alloy_host_api *host, alloy_backend **out) {
  ds_backend *be = calloc(1, sizeof *be);
  if (!be) return host->error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory opening devsim");
  be->host = host;
  /* The helper sees the host's table with claims and errors wrapped; a
   * host older than these headers has a shorter table: copy what it has. */
  size_t have = host->struct_size < sizeof be->kt_host ? host->struct_size : sizeof be->kt_host;
  memcpy(&be->kt_host, host, have);
  be->kt_host.claims_add = ds_kt_claims_add;
  be->kt_host.error_new = ds_kt_error_new;
  if (ALLOY_HAS_FIELD(host, alloy_host_api, claims_add_group) && host->claims_add_group)
    be->kt_host.claims_add_group = ds_kt_claims_add_group;
  long page = sysconf(_SC_PAGESIZE);
  be->page = page > 0 ? (size_t)page : 4096;
  pthread_mutex_init(&be->lock, NULL);
  pthread_cond_init(&be->exe_idle, NULL);
  pthread_mutex_init(&be->ev_lock, NULL);
  pthread_cond_init(&be->ev_signal, NULL);
  ds_list_init(&be->buffers);
  ds_list_init(&be->regions);
  ds_list_init(&be->queues);
  ds_list_init(&be->exes);
  ds_list_init(&be->host_buffers);
  ds_list_init(&be->events);
  be->memory_bytes = ds_env_u64(be, "ALLOY_DEVSIM_MEMORY", true, UINT64_MAX, DS_DEFAULT_MEMORY);
  atomic_init(&be->delay_us, ds_env_u64(be, "ALLOY_DEVSIM_DELAY_US", false, DS_MAX_DELAY_US,
                                        DS_DEFAULT_DELAY_US));
  atomic_init(&be->seed, ds_env_u64(be, "ALLOY_DEVSIM_SEED", false, UINT64_MAX, DS_DEFAULT_SEED));
  ds_ctx.be = be;
  alloy_error *e = ds_kt_api->backend_open(&be->kt_host, &be->kt);
  if (e) {
    pthread_mutex_destroy(&be->lock);
    pthread_cond_destroy(&be->exe_idle);
    pthread_mutex_destroy(&be->ev_lock);
    pthread_cond_destroy(&be->ev_signal);
    free(be);
    return e;
  }
  ds_count(be, DS_BACKEND_OPEN);
  *out = (alloy_backend *)(void *)be;
  return NULL;
}

/* "devsim calls execute=N ... bytes_h2d=N bytes_d2h=N bytes_d2d=N peak_bytes=N" */
static void ds_stats_line(ds_backend *be, char *buf, size_t cap) {
  size_t n = (size_t)snprintf(buf, cap, "devsim calls");
  for (int i = 0; i < DS_NUM_ENTRIES && n < cap; i++)
    n += (size_t)snprintf(buf + n, cap - n, " %s=%llu", ds_entry_names[i].stat,
                          (unsigned long long)atomic_load(&be->calls[i]));
  if (n < cap)
    snprintf(buf + n, cap - n,
             " allocations=%llu executes=%llu bytes_h2d=%llu bytes_d2h=%llu bytes_d2d=%llu "
             "peak_bytes=%llu",
             (unsigned long long)atomic_load(&be->allocations),
             (unsigned long long)atomic_load(&be->executes),
             (unsigned long long)atomic_load(&be->bytes_h2d),
             (unsigned long long)atomic_load(&be->bytes_d2h),
             (unsigned long long)atomic_load(&be->bytes_d2d), (unsigned long long)be->peak_bytes);
}

static void ds_report(ds_backend *be, const int *left) {
  char line[2048];
  ds_stats_line(be, line, sizeof line);
  be->host->log(ALLOY_LOG_INFO, DS_NAME, line);
  const char *path = getenv("ALLOY_DEVSIM_STATS");
  if (path && *path) {
    /* One write of the whole line, O_APPEND: lines of processes sharing
     * the file do not interleave. */
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    size_t len = strlen(line);
    line[len] = '\n';
    if (fd < 0 || write(fd, line, len + 1) != (ssize_t)(len + 1))
      ds_log(be, ALLOY_LOG_WARNING, "cannot append the counters to $ALLOY_DEVSIM_STATS=%s: %s",
             path, strerror(errno));
    if (fd >= 0) close(fd);
    line[len] = '\0';
  }
  char never[1024] = "";
  size_t n = 0;
  for (int i = 0; i < DS_NUM_ENTRIES; i++)
    if (ds_entry_names[i].required && !atomic_load(&be->calls[i]) && n < sizeof never)
      n += (size_t)snprintf(never + n, sizeof never - n, "%s%s", n ? ", " : "", ds_entry_names[i].abi);
  if (n) ds_log(be, ALLOY_LOG_INFO, "required entries the host never called: %s", never);
  if (left[0] || left[1] || left[2] || left[3] || left[4])
    ds_log(be, ALLOY_LOG_INFO,
           "backend_close released what the host left: %d buffers, %d queues, %d executables, "
           "%d events, %d host buffers", left[0], left[1], left[2], left[3], left[4]);
}

static void ds_backend_close(alloy_backend *b) {
  if (!b) return;
  ds_backend *be = ds_be(b);
  int left[5] = {0};
  /* Queues first: their workers finish what is queued, which may still
   * use every other object. */
  if (be->default_queue) ds_queue_stop(be->default_queue);
  be->default_queue = NULL;
  while (be->queues.next != &be->queues) {
    ds_queue *q = DS_OF(be->queues.next, ds_queue, link);
    ds_list_remove(&q->link);
    ds_queue_stop(q);
    left[1]++;
  }
  while (be->exes.next != &be->exes) {
    ds_exe *x = DS_OF(be->exes.next, ds_exe, link);
    ds_list_remove(&x->link);
    ds_kt_api->executable_release(be->kt, x->kt);
    free(x);
    left[2]++;
  }
  while (be->buffers.next != &be->buffers) {
    ds_buffer_free(be, DS_OF(be->buffers.next, ds_buffer, link));
    left[0]++;
  }
  /* Every reference is gone with the queues and buffers: nothing is left
   * mapped unless a count went wrong. */
  while (be->regions.next != &be->regions) {
    ds_region *r = DS_OF(be->regions.next, ds_region, link);
    ds_list_remove(&r->link);
    ds_region_unmap(be, r);
  }
  while (be->events.next != &be->events) {
    ds_event_free_locked(DS_OF(be->events.next, ds_event, link));
    left[3]++;
  }
  while (be->host_buffers.next != &be->host_buffers) {
    ds_host_buffer *hb = DS_OF(be->host_buffers.next, ds_host_buffer, link);
    ds_list_remove(&hb->link);
    free(hb->ptr);
    free(hb);
    left[4]++;
  }
  ds_kt_api->backend_close(be->kt);
  ds_report(be, left);
  pthread_mutex_destroy(&be->lock);
  pthread_cond_destroy(&be->exe_idle);
  pthread_mutex_destroy(&be->ev_lock);
  pthread_cond_destroy(&be->ev_signal);
  ds_ctx = (struct ds_thread){0};
  free(be);
}

static int ds_device_count(alloy_backend *b) {
  ds_count(ds_be(b), DS_DEVICE_COUNT);
  return 1;
}

static alloy_error *ds_device_arg(ds_backend *be, const char *what, int device) {
  if (device == 0) return NULL;
  return ds_error(be, ALLOY_ERR_INVALID_ARGUMENT, "%s: device %d does not exist: devsim has one, 0",
                  what, device);
}

static alloy_error *ds_device_info(alloy_backend *b, int device, alloy_device_info *info) {
  ds_backend *be = ds_be(b);
  ds_count(be, DS_DEVICE_INFO);
  alloy_error *e = ds_device_arg(be, "device_info", device);
  if (e || !info) return e ? e : ds_error(be, ALLOY_ERR_INVALID_ARGUMENT, "device_info: no info");
  pthread_mutex_lock(&be->lock);
  uint64_t live = be->live_bytes;
  pthread_mutex_unlock(&be->lock);
  if (ALLOY_HAS_FIELD(info, alloy_device_info, name)) info->name = "devsim0";
  if (ALLOY_HAS_FIELD(info, alloy_device_info, kind)) info->kind = ALLOY_DEVICE_KIND_ACCELERATOR;
  if (ALLOY_HAS_FIELD(info, alloy_device_info, memory_bytes)) info->memory_bytes = be->memory_bytes;
  if (ALLOY_HAS_FIELD(info, alloy_device_info, free_memory_bytes))
    info->free_memory_bytes = be->memory_bytes - live;
  if (ALLOY_HAS_FIELD(info, alloy_device_info, arch)) info->arch = "devsim-1";
  /* Not host-visible: the host must go through the copies. */
  if (ALLOY_HAS_FIELD(info, alloy_device_info, capabilities))
    info->capabilities = ALLOY_DEVICE_CAP_ASYNC | ALLOY_DEVICE_CAP_PINNED_HOST | ALLOY_DEVICE_CAP_IMPORT;
  if (ALLOY_HAS_FIELD(info, alloy_device_info, launch_s)) info->launch_s = 5e-6;
  if (ALLOY_HAS_FIELD(info, alloy_device_info, host_bytes_per_s)) info->host_bytes_per_s = 20e9;
  return NULL;
}

static alloy_error *ds_backend_set_option(alloy_backend *b, const char *key, const char *value) {
  ds_backend *be = ds_be(b);
  ds_count(be, DS_BACKEND_SET_OPTION);
  return ds_set_option(be, key, value);
}

/* ---- claim and compile --------------------------------------------------------- */

static alloy_error *ds_claim(alloy_backend *b, const alloy_graph *g, alloy_claims *claims) {
  ds_backend *be = ds_be(b);
  ds_count(be, DS_CLAIM);
  ds_ctx.claiming = g;
  alloy_error *e = ds_kt_api->claim(be->kt, g, claims);
  ds_ctx.claiming = NULL;
  return e;
}

static alloy_error *ds_compile(alloy_backend *b, const alloy_graph *partition,
                               const alloy_compile_options *options, alloy_executable **out) {
  ds_backend *be = ds_be(b);
  ds_count(be, DS_COMPILE);
  /* Options given to the program ("devsim.delay_us=0") arrive here. */
  if (options && ALLOY_HAS_FIELD(options, alloy_compile_options, num_options))
    for (int i = 0; i < options->num_options && options->options; i++) {
      alloy_error *e = ds_set_option(be, options->options[i].key, options->options[i].value);
      if (e) return e;
    }
  ds_exe *x = calloc(1, sizeof *x);
  if (!x) return ds_error(be, ALLOY_ERR_OUT_OF_MEMORY, "out of memory compiling");
  alloy_error *e = ds_kt_api->compile(be->kt, partition, options, &x->kt);
  if (e) {
    free(x);
    return e;
  }
  x->magic = DS_MAGIC_EXE;
  pthread_mutex_lock(&be->lock);
  ds_list_push(&be->exes, &x->link);
  pthread_mutex_unlock(&be->lock);
  *out = (alloy_executable *)(void *)x;
  return NULL;
}

/* Waits until no queued execute uses x: its partition graph is the
 * host's and may go once this returns. */
static void ds_executable_release(alloy_backend *b, alloy_executable *exe) {
  ds_backend *be = ds_be(b);
  ds_count(be, DS_EXECUTABLE_RELEASE);
  ds_exe *x = (ds_exe *)(void *)exe;
  if (!x) return;
  if (x->magic != DS_MAGIC_EXE) {
    ds_log(be, ALLOY_LOG_WARNING, "executable_release: %p is not a live executable of devsim",
           (void *)exe);
    return;
  }
  pthread_mutex_lock(&be->lock);
  while (x->pending) pthread_cond_wait(&be->exe_idle, &be->lock);
  ds_list_remove(&x->link);
  pthread_mutex_unlock(&be->lock);
  x->magic = 0;
  ds_kt_api->executable_release(be->kt, x->kt);
  free(x);
}

/* ---- execute ------------------------------------------------------------------- */

/* The bytes t spans must lie in its buffer (checked before enqueueing, so
 * that a bad tensor is an error, never a fault on the worker). */
static alloy_error *ds_tensor_check(ds_backend *be, const alloy_tensor *t, const ds_buffer *b,
                                    const char *what, int j) {
  size_t esize = alloy_dtype_size(t->dtype);
  if (!esize)
    return ds_error(be, ALLOY_ERR_TYPE, "execute: %s %d has an unknown dtype %d", what, j, (int)t->dtype);
  if (t->rank < 0 || t->rank > KT_MAX_RANK || (t->rank && (!t->sizes || !t->strides)))
    return ds_error(be, ALLOY_ERR_INVALID_ARGUMENT, "execute: %s %d has rank %d%s", what, j,
                    (int)t->rank, t->rank > 0 ? " without sizes or strides" : "");
  int64_t lo = 0, hi = 0;
  bool empty = false, overflow = false;
  for (int d = 0; d < t->rank; d++) {
    if (t->sizes[d] < 0)
      return ds_error(be, ALLOY_ERR_INVALID_ARGUMENT, "execute: %s %d has size %lld in dim %d",
                      what, j, (long long)t->sizes[d], d);
    empty = empty || t->sizes[d] == 0;
  }
  for (int d = 0; d < t->rank && !empty; d++) {
    int64_t span;
    overflow = overflow || __builtin_mul_overflow(t->sizes[d] - 1, t->strides[d], &span) ||
               __builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi);
  }
  int64_t first, last, end;
  overflow = overflow || __builtin_mul_overflow(lo, (int64_t)esize, &first) ||
             __builtin_add_overflow(hi, 1, &last) ||
             __builtin_mul_overflow(last, (int64_t)esize, &end) || t->offset > (uint64_t)INT64_MAX;
  bool inside = empty ? t->offset <= b->head.bytes
                      : !overflow && (int64_t)t->offset + first >= 0 &&
                            (uint64_t)end <= b->head.bytes &&
                            t->offset <= b->head.bytes - (uint64_t)end;
  if (!inside)
    return ds_error(be, ALLOY_ERR_INVALID_ARGUMENT,
                    "execute: %s %d: its sizes and strides at offset %llu reach outside its buffer "
                    "of %llu bytes", what, j, (unsigned long long)t->offset,
                    (unsigned long long)b->head.bytes);
  return NULL;
}

/* What the host lends execute until completion, as it is now: the run
 * checks the host left it alone. */
static alloy_error *ds_lend(ds_backend *be, ds_cmd *c) {
  const alloy_execute_args *a = &c->args;
  int nin = a->num_inputs, n = nin + a->num_outputs;
  int nsym = a->num_symbols > 0 ? a->num_symbols : 0;
  c->lent = calloc((size_t)n + 1, sizeof *c->lent);
  c->lent_dims = calloc((size_t)n * 2 * KT_MAX_RANK + 1, sizeof *c->lent_dims);
  c->lent_symbols = calloc((size_t)nsym + 1, sizeof *c->lent_symbols);
  if (!c->lent || !c->lent_dims || !c->lent_symbols)
    return ds_error(be, ALLOY_ERR_OUT_OF_MEMORY, "out of memory enqueueing an execute");
  for (int i = 0; i < n; i++) {
    if (!c->regions[i]) continue; /* an output devsim sizes itself */
    const alloy_tensor *t = i < nin ? &a->inputs[i] : &a->outputs[i - nin];
    int64_t *dims = c->lent_dims + (size_t)i * 2 * KT_MAX_RANK;
    c->lent[i] = *t;
    if (t->rank) {
      memcpy(dims, t->sizes, (size_t)t->rank * sizeof *dims);
      memcpy(dims + KT_MAX_RANK, t->strides, (size_t)t->rank * sizeof *dims);
    }
  }
  if (nsym) memcpy(c->lent_symbols, a->symbols, (size_t)nsym * sizeof *c->lent_symbols);
  return NULL;
}

static alloy_error *ds_execute(alloy_backend *b, alloy_executable *exe, const alloy_execute_args *args) {
  ds_backend *be = ds_be(b);
  ds_count(be, DS_EXECUTE);
  ds_exe *x = (ds_exe *)(void *)exe;
  if (!x || x->magic != DS_MAGIC_EXE)
    return ds_error(be, ALLOY_ERR_INVALID_ARGUMENT, "execute: %p is not a live executable of devsim",
                    (void *)exe);
  if (!args || args->struct_size < ALLOY_STRUCT_SIZE(alloy_execute_args, done))
    return ds_error(be, ALLOY_ERR_INVALID_ARGUMENT, "execute: no arguments, or too short a struct");
  ds_queue *q = NULL;
  alloy_error *e = ds_queue_arg(be, args->queue, args->done, "execute", &q);
  if (e) return e;
  int nin = args->num_inputs, nout = args->num_outputs;
  if (nin < 0 || nout < 0 || (nin && !args->inputs) || (nout && !args->outputs) ||
      (args->num_symbols && !args->symbols))
    return ds_error(be, ALLOY_ERR_INVALID_ARGUMENT, "execute: %d inputs and %d outputs, arrays missing",
                    nin, nout);
  ds_cmd *c = ds_cmd_new(DS_RUN);
  if (c) {
    c->regions = calloc((size_t)(nin + nout) + 1, sizeof *c->regions);
    c->region_bytes = calloc((size_t)(nin + nout) + 1, sizeof *c->region_bytes);
    c->args.num_inputs = nin;
    c->args.num_outputs = nout;
  }
  if (!c || !c->regions || !c->region_bytes) {
    ds_cmd_free(be, c);
    return ds_error(be, ALLOY_ERR_OUT_OF_MEMORY, "out of memory enqueueing an execute");
  }
  bool data_dependent = false;
  for (int i = 0; i < nin + nout && !e; i++) {
    bool in = i < nin;
    const alloy_tensor *t = in ? &args->inputs[i] : &args->outputs[i - nin];
    if (!t->buffer && !in) {
      data_dependent = true; /* the helper makes it; devsim adopts it */
      continue;
    }
    ds_buffer *buf = ds_buffer_arg(be, t->buffer, "execute", &e);
    if (buf) e = ds_tensor_check(be, t, buf, in ? "input" : "output", in ? i : i - nin);
    if (e) break;
    pthread_mutex_lock(&be->lock);
    c->regions[i] = ds_region_ref(buf->region);
    pthread_mutex_unlock(&be->lock);
    c->region_bytes[i] = buf->head.bytes;
  }
  if (e) {
    ds_cmd_free(be, c);
    return e;
  }
  memcpy(&c->args, args, args->struct_size < sizeof c->args ? args->struct_size : sizeof c->args);
  e = ds_lend(be, c);
  if (e) {
    ds_cmd_free(be, c);
    return e;
  }
  c->exe = x;
  pthread_mutex_lock(&be->lock);
  x->pending++;
  pthread_mutex_unlock(&be->lock);
  /* Sizes known only from the data are written into the host's tensors:
   * such an execute runs before the entry returns. */
  e = ds_submit(be, q, c, args->done, data_dependent);
  if (!e && !q && args->done) *args->done = NULL;
  return e;
}

/* ---- buffers and copies --------------------------------------------------------- */

static alloy_error *ds_buffer_allocate(alloy_backend *b, int device, uint64_t bytes, alloy_buffer **out) {
  ds_backend *be = ds_be(b);
  ds_count(be, DS_BUFFER_ALLOCATE);
  alloy_error *e = ds_device_arg(be, "buffer_allocate", device);
  ds_buffer *buf = NULL;
  if (!e) e = ds_buffer_new(be, bytes, &buf);
  if (!e) *out = (alloy_buffer *)(void *)buf;
  return e;
}

static void ds_buffer_release(alloy_backend *b, alloy_buffer *buf) {
  ds_backend *be = ds_be(b);
  ds_count(be, DS_BUFFER_RELEASE);
  if (!buf) return;
  alloy_error *e = NULL;
  ds_buffer *db = ds_buffer_arg(be, buf, "buffer_release", &e);
  if (e) {
    ds_log(be, ALLOY_LOG_WARNING, "%s", be->host->error_message(e));
    be->host->error_free(e);
    return;
  }
  ds_buffer_free(be, db);
}

/* The memory is devsim's, not the host's: there is no host address. */
static void *ds_buffer_host_pointer(alloy_backend *b, alloy_buffer *buf) {
  (void)buf;
  ds_count(ds_be(b), DS_BUFFER_HOST_POINTER);
  return NULL;
}

static alloy_error *ds_copy_from_host(alloy_backend *b, alloy_buffer *dst, uint64_t offset,
                                      const void *src, uint64_t bytes, alloy_queue *queue,
                                      alloy_event **done) {
  ds_backend *be = ds_be(b);
  ds_count(be, DS_COPY_FROM_HOST);
  const char *what = "buffer_copy_from_host";
  ds_queue *q = NULL;
  alloy_error *e = ds_queue_arg(be, queue, done, what, &q);
  ds_buffer *d = e ? NULL : ds_buffer_arg(be, dst, what, &e);
  if (d) e = ds_range(be, what, d, offset, bytes);
  if (!e && bytes && !src) e = ds_error(be, ALLOY_ERR_INVALID_ARGUMENT, "%s: no source", what);
  ds_cmd *c = e ? NULL : ds_cmd_new(DS_FROM_HOST);
  if (!e && !c) e = ds_error(be, ALLOY_ERR_OUT_OF_MEMORY, "out of memory enqueueing a copy");
  if (e) return e;
  pthread_mutex_lock(&be->lock);
  c->dst = ds_region_ref(d->region);
  pthread_mutex_unlock(&be->lock);
  c->dst_offset = offset;
  c->host_src = src;
  c->bytes = bytes;
  return ds_submit(be, q, c, done, false);
}

static alloy_error *ds_copy_to_host(alloy_backend *b, void *dst, alloy_buffer *src, uint64_t offset,
                                    uint64_t bytes, alloy_queue *queue, alloy_event **done) {
  ds_backend *be = ds_be(b);
  ds_count(be, DS_COPY_TO_HOST);
  const char *what = "buffer_copy_to_host";
  ds_queue *q = NULL;
  alloy_error *e = ds_queue_arg(be, queue, done, what, &q);
  ds_buffer *s = e ? NULL : ds_buffer_arg(be, src, what, &e);
  if (s) e = ds_range(be, what, s, offset, bytes);
  if (!e && bytes && !dst) e = ds_error(be, ALLOY_ERR_INVALID_ARGUMENT, "%s: no destination", what);
  ds_cmd *c = e ? NULL : ds_cmd_new(DS_TO_HOST);
  if (!e && !c) e = ds_error(be, ALLOY_ERR_OUT_OF_MEMORY, "out of memory enqueueing a copy");
  if (e) return e;
  pthread_mutex_lock(&be->lock);
  c->src = ds_region_ref(s->region);
  pthread_mutex_unlock(&be->lock);
  c->src_offset = offset;
  c->host_dst = dst;
  c->bytes = bytes;
  return ds_submit(be, q, c, done, false);
}

static alloy_error *ds_copy(alloy_backend *b, alloy_buffer *dst, uint64_t dst_offset, alloy_buffer *src,
                            uint64_t src_offset, uint64_t bytes, alloy_queue *queue, alloy_event **done) {
  ds_backend *be = ds_be(b);
  ds_count(be, DS_COPY);
  ds_queue *q = NULL;
  alloy_error *e = ds_queue_arg(be, queue, done, "buffer_copy", &q);
  ds_buffer *d = e ? NULL : ds_buffer_arg(be, dst, "buffer_copy (destination)", &e);
  ds_buffer *s = e ? NULL : ds_buffer_arg(be, src, "buffer_copy (source)", &e);
  if (!e) e = ds_range(be, "buffer_copy (destination)", d, dst_offset, bytes);
  if (!e) e = ds_range(be, "buffer_copy (source)", s, src_offset, bytes);
  ds_cmd *c = e ? NULL : ds_cmd_new(DS_D2D);
  if (!e && !c) e = ds_error(be, ALLOY_ERR_OUT_OF_MEMORY, "out of memory enqueueing a copy");
  if (e) return e;
  pthread_mutex_lock(&be->lock);
  c->dst = ds_region_ref(d->region);
  c->src = ds_region_ref(s->region);
  pthread_mutex_unlock(&be->lock);
  c->dst_offset = dst_offset;
  c->src_offset = src_offset;
  c->bytes = bytes;
  return ds_submit(be, q, c, done, false);
}

/* Only the data start of a live devsim buffer is a device pointer: a
 * registry lookup, so that a stray address is refused, never mapped. */
static alloy_error *ds_buffer_import(alloy_backend *b, int device, void *device_pointer, uint64_t bytes,
                                     const alloy_ext *ext, alloy_buffer **out) {
  ds_backend *be = ds_be(b);
  ds_count(be, DS_BUFFER_IMPORT);
  (void)ext; /* devsim has no streams of its own to order on */
  alloy_error *e = ds_device_arg(be, "buffer_import", device);
  if (e) return e;
  ds_region *found = NULL;
  pthread_mutex_lock(&be->lock);
  for (ds_link *l = be->regions.next; l != &be->regions && !found; l = l->next) {
    ds_region *r = DS_OF(l, ds_region, link);
    if (r->importable && r->data == (char *)device_pointer) found = r;
  }
  uint64_t have = found ? found->bytes : 0;
  if (found && bytes <= have) {
    ds_region_ref(found);
    found->imports++;
  }
  pthread_mutex_unlock(&be->lock);
  if (!found)
    return ds_error(be, ALLOY_ERR_INVALID_ARGUMENT,
                    "buffer_import: %p is not the start of a live devsim buffer", device_pointer);
  if (bytes > have)
    return ds_error(be, ALLOY_ERR_INVALID_ARGUMENT,
                    "buffer_import: %llu bytes at %p, but the buffer there holds %llu",
                    (unsigned long long)bytes, device_pointer, (unsigned long long)have);
  ds_buffer *buf = ds_buffer_wrap(be, found, bytes, true);
  if (!buf) {
    pthread_mutex_lock(&be->lock);
    found->imports--;
    pthread_mutex_unlock(&be->lock);
    ds_region_unref(be, found);
    return ds_error(be, ALLOY_ERR_OUT_OF_MEMORY, "out of memory importing a buffer");
  }
  *out = (alloy_buffer *)(void *)buf;
  return NULL;
}

/* Page-aligned host memory: "pinned" only in name (mlock is not needed to
 * prove the host uses it). */
static alloy_error *ds_host_buffer_allocate(alloy_backend *b, uint64_t bytes, void **out) {
  ds_backend *be = ds_be(b);
  ds_count(be, DS_HOST_BUFFER_ALLOCATE);
  if (bytes > SIZE_MAX - be->page)
    return ds_error(be, ALLOY_ERR_OUT_OF_MEMORY, "host_buffer_allocate: %llu bytes", (unsigned long long)bytes);
  size_t size = ((size_t)(bytes ? bytes : 1) + be->page - 1) / be->page * be->page;
  ds_host_buffer *hb = calloc(1, sizeof *hb);
  void *p = NULL;
  if (!hb || posix_memalign(&p, be->page, size) != 0) {
    free(hb);
    return ds_error(be, ALLOY_ERR_OUT_OF_MEMORY, "host_buffer_allocate: cannot allocate %llu bytes",
                    (unsigned long long)bytes);
  }
  hb->ptr = p;
  pthread_mutex_lock(&be->lock);
  ds_list_push(&be->host_buffers, &hb->link);
  pthread_mutex_unlock(&be->lock);
  *out = p;
  return NULL;
}

static void ds_host_buffer_release(alloy_backend *b, void *ptr) {
  ds_backend *be = ds_be(b);
  ds_count(be, DS_HOST_BUFFER_RELEASE);
  if (!ptr) return;
  ds_host_buffer *found = NULL;
  pthread_mutex_lock(&be->lock);
  for (ds_link *l = be->host_buffers.next; l != &be->host_buffers && !found; l = l->next)
    if (DS_OF(l, ds_host_buffer, link)->ptr == ptr) found = DS_OF(l, ds_host_buffer, link);
  if (found) ds_list_remove(&found->link);
  pthread_mutex_unlock(&be->lock);
  if (!found) {
    ds_log(be, ALLOY_LOG_WARNING, "host_buffer_release: %p is not a host buffer of devsim", ptr);
    return;
  }
  free(found->ptr);
  free(found);
}

/* ---- queues and events ---------------------------------------------------------- */

static alloy_error *ds_queue_create(alloy_backend *b, int device, alloy_queue **out) {
  ds_backend *be = ds_be(b);
  ds_count(be, DS_QUEUE_CREATE);
  alloy_error *e = ds_device_arg(be, "queue_create", device);
  if (e) return e;
  pthread_mutex_lock(&be->lock);
  unsigned serial = ++be->next_serial;
  pthread_mutex_unlock(&be->lock);
  ds_queue *q = NULL;
  e = ds_queue_new(be, serial, &q);
  if (e) return e;
  pthread_mutex_lock(&be->lock);
  ds_list_push(&be->queues, &q->link);
  pthread_mutex_unlock(&be->lock);
  *out = (alloy_queue *)(void *)q;
  return NULL;
}

/* Runs what is queued first (a queue's work is never dropped). */
static void ds_queue_release(alloy_backend *b, alloy_queue *queue) {
  ds_backend *be = ds_be(b);
  ds_count(be, DS_QUEUE_RELEASE);
  ds_queue *q = (ds_queue *)(void *)queue;
  if (!q) return;
  if (q->magic != DS_MAGIC_QUEUE) {
    ds_log(be, ALLOY_LOG_WARNING, "queue_release: %p is not a live queue of devsim", (void *)queue);
    return;
  }
  if (q->of) { /* the caller's queue goes on */
    q->magic = 0;
    free(q);
    return;
  }
  pthread_mutex_lock(&be->lock);
  ds_list_remove(&q->link);
  pthread_mutex_unlock(&be->lock);
  ds_queue_stop(q);
}

static alloy_error *ds_event_wait(alloy_backend *b, alloy_event *event) {
  ds_backend *be = ds_be(b);
  ds_count(be, DS_EVENT_WAIT);
  ds_event *ev = ds_event_arg(event);
  if (!ev)
    return ds_error(be, ALLOY_ERR_INVALID_ARGUMENT, "event_wait: %p is not a live event of devsim",
                    (void *)event);
  ds_status st = {0};
  ds_event_await(be, ev, &st);
  alloy_error *e = ds_status_error(be, &st);
  free(st.message);
  return e;
}

static int ds_event_query(alloy_backend *b, alloy_event *event) {
  ds_backend *be = ds_be(b);
  ds_count(be, DS_EVENT_QUERY);
  ds_event *ev = ds_event_arg(event);
  if (!ev) return 1; /* nothing to wait for: event_wait says what is wrong */
  pthread_mutex_lock(&be->ev_lock);
  int signalled = ev->signalled;
  pthread_mutex_unlock(&be->ev_lock);
  return signalled;
}

/* May come before the event is signalled: the worker holds its own
 * reference until it has signalled it. */
static void ds_event_release(alloy_backend *b, alloy_event *event) {
  ds_backend *be = ds_be(b);
  ds_count(be, DS_EVENT_RELEASE);
  if (!event) return;
  ds_event *ev = ds_event_arg(event);
  if (!ev) {
    ds_log(be, ALLOY_LOG_WARNING, "event_release: %p is not a live event of devsim", (void *)event);
    return;
  }
  ds_event_drop(be, ev);
}

static alloy_error *ds_event_record(alloy_backend *b, alloy_queue *queue, alloy_event **out) {
  ds_backend *be = ds_be(b);
  ds_count(be, DS_EVENT_RECORD);
  ds_queue *q = NULL;
  alloy_error *e = ds_queue_arg(be, queue, out, "event_record", &q);
  if (!e && !q) e = ds_error(be, ALLOY_ERR_INVALID_ARGUMENT, "event_record: no queue given");
  ds_cmd *c = e ? NULL : ds_cmd_new(DS_RECORD);
  if (!e && !c) e = ds_error(be, ALLOY_ERR_OUT_OF_MEMORY, "out of memory recording an event");
  return e ? e : ds_submit(be, q, c, out, false);
}

static alloy_error *ds_queue_wait_event(alloy_backend *b, alloy_queue *queue, alloy_event *event) {
  ds_backend *be = ds_be(b);
  ds_count(be, DS_QUEUE_WAIT_EVENT);
  ds_queue *q = (ds_queue *)(void *)queue;
  ds_event *ev = ds_event_arg(event);
  if (!q || q->magic != DS_MAGIC_QUEUE)
    return ds_error(be, ALLOY_ERR_INVALID_ARGUMENT, "queue_wait_event: %p is not a live queue of devsim",
                    (void *)queue);
  if (q->of) q = q->of;
  if (!ev)
    return ds_error(be, ALLOY_ERR_INVALID_ARGUMENT, "queue_wait_event: %p is not a live event of devsim",
                    (void *)event);
  if (!ds_enqueue_wait(be, q, ev))
    return ds_error(be, ALLOY_ERR_OUT_OF_MEMORY, "out of memory enqueueing an event wait");
  return NULL;
}

/* devsim's streams are its queues: an application makes one with
 * queue_create and names it in a stream extension (ALLOY_EXT_CUDA_STREAM,
 * as a CUDA plugin takes a cudaStream_t; devsim has no kind of its own).
 * The import stands for it: work given to either runs in one order. */
static alloy_error *ds_queue_import(alloy_backend *b, int device, const alloy_ext *ext, alloy_queue **out) {
  ds_backend *be = ds_be(b);
  ds_count(be, DS_QUEUE_IMPORT);
  alloy_error *e = ds_device_arg(be, "queue_import", device);
  if (e) return e;
  while (ext && !(ext->type == ALLOY_EXT_CUDA_STREAM && ext->struct_size >= ALLOY_EXT_STREAM_STRUCT_SIZE))
    ext = ext->next;
  const void *stream = ext ? ((const alloy_ext_stream *)(const void *)ext)->stream : NULL;
  /* a registry lookup, as buffer_import's: a stray address is refused, never read */
  ds_queue *of = NULL;
  pthread_mutex_lock(&be->lock);
  for (ds_link *l = be->queues.next; l != &be->queues && !of; l = l->next)
    if ((const void *)DS_OF(l, ds_queue, link) == stream) of = DS_OF(l, ds_queue, link);
  pthread_mutex_unlock(&be->lock);
  if (!of)
    return ds_error(be, ALLOY_ERR_INVALID_ARGUMENT, "queue_import: %s", ext ? "the stream is not a live queue of "
                    "devsim" : "the extension chain names no stream");
  ds_queue *q = calloc(1, sizeof *q);
  if (!q) return ds_error(be, ALLOY_ERR_OUT_OF_MEMORY, "out of memory importing a queue");
  q->magic = DS_MAGIC_QUEUE;
  q->be = be;
  q->of = of;
  *out = (alloy_queue *)(void *)q;
  return NULL;
}

/* ---- the entry ------------------------------------------------------------------- */

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(const alloy_host_api *host);
ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(const alloy_host_api *host) {
  if (!host) return NULL;
  pthread_once(&table_once, table_build);
  atomic_store(&entry_host, host);
  /* Filled once: two runtimes may load devsim at once, and a table is
   * never rewritten under a reader. */
  pthread_mutex_lock(&init_lock);
  if (!api.struct_size) {
    ds_kt_api = alloy_kernel_table_plugin(&table, host);
    if (ds_kt_api)
      api = (alloy_plugin_api){
          .struct_size = ALLOY_PLUGIN_API_STRUCT_SIZE,
          .abi_major = ALLOY_ABI_MAJOR,
          .abi_minor = ALLOY_ABI_MINOR,
          .name = DS_NAME,
          .vendor = "Alloy tests",
          .version = "0.1.0",
          .backend_open = ds_backend_open,
          .backend_close = ds_backend_close,
          .device_count = ds_device_count,
          .device_info = ds_device_info,
          .claim = ds_claim,
          .compile = ds_compile,
          .execute = ds_execute,
          .executable_release = ds_executable_release,
          .buffer_allocate = ds_buffer_allocate,
          .buffer_release = ds_buffer_release,
          .buffer_host_pointer = ds_buffer_host_pointer,
          .buffer_copy_from_host = ds_copy_from_host,
          .buffer_copy_to_host = ds_copy_to_host,
          .buffer_copy = ds_copy,
          .queue_create = ds_queue_create,
          .queue_release = ds_queue_release,
          .event_wait = ds_event_wait,
          .event_query = ds_event_query,
          .event_release = ds_event_release,
          .executable_serialize = NULL,
          .executable_deserialize = NULL,
          /* What the helper can do (symbolic shapes) devsim can do. */
          .capabilities = ALLOY_HAS_FIELD(ds_kt_api, alloy_plugin_api, capabilities) ? ds_kt_api->capabilities : 0,
          .event_record = ds_event_record,
          .queue_wait_event = ds_queue_wait_event,
          .host_buffer_allocate = ds_host_buffer_allocate,
          .host_buffer_release = ds_host_buffer_release,
          .buffer_import = ds_buffer_import,
          .backend_set_option = ds_backend_set_option,
          .queue_import = ds_queue_import,
      };
  }
  const alloy_plugin_api *out = api.struct_size ? &api : NULL;
  pthread_mutex_unlock(&init_lock);
  return out;
}
