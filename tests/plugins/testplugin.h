/*
 * tests/plugins/testplugin.h: the backend every test plugin shares.
 *
 * Each tests/plugins/<name>.c is one situation the plugin loader must handle
 * (a newer minor, another major, a NULL required entry, a duplicate name, an
 * entry that always fails); tests/test_loader.c copies the built .so files
 * into scratch folders and checks what the host makes of them. What the
 * plugins have in common lives here, so that each file shows only what makes
 * it different: a complete, minimal, correct backend with one CPU device,
 * buffers from malloc and one op, aten.relu.default on f32, run on a
 * partition of exactly one such node. It is written the way docs/abi.md asks
 * a vendor to write one: only the host table, no Alloy library.
 *
 * Knobs, #defined before the #include:
 *   TP_NAME        the plugin's name: log lines, device names, messages
 *   TP_FAILING     1: the fallible entries listed in $ALLOY_TEST_FAIL fail
 *                  (failing.c explains), and buffers are not host-visible so
 *                  that the host has to use the copy entries
 *   TP_ABI_MINOR   the minor the plugin acts as if built against (default:
 *                  these headers' ALLOY_ABI_MINOR): it fills only the
 *                  fields of structs that minor had (abi_1_0.c, abi_1_1.c)
 *
 * Every object a backend hands out stays on a list until released, because
 * backend_close must release what the host did not (plugin.h); so valgrind
 * on the loader tests shows the host's leaks, never this file's.
 *
 * The functions are static in every plugin that includes this; the unused
 * attribute is for the few plugins (no_entry) that never reach some.
 */
#ifndef ALLOY_TEST_PLUGIN_H
#define ALLOY_TEST_PLUGIN_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/plugin.h"

#ifndef TP_NAME
#error "define TP_NAME before including testplugin.h"
#endif
#ifndef TP_FAILING
#define TP_FAILING 0
#endif
#ifndef TP_ABI_MINOR
#define TP_ABI_MINOR ALLOY_ABI_MINOR
#endif

#define TP_FN static __attribute__((unused))

/* The entry every plugin but no_entry defines (a prototype keeps
 * -Wmissing-prototypes quiet; declaring it exports nothing). */
ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(
    const alloy_host_api *host);

/* ---- the fallible entries, for the failing plugin ---------------------- */

enum {
  TP_E_BACKEND_OPEN,
  TP_E_DEVICE_INFO,
  TP_E_CLAIM,
  TP_E_COMPILE,
  TP_E_EXECUTE,
  TP_E_BUFFER_ALLOCATE,
  TP_E_BUFFER_COPY_FROM_HOST,
  TP_E_BUFFER_COPY_TO_HOST,
  TP_E_BUFFER_COPY,
  TP_E_QUEUE_CREATE,
  TP_E_EVENT_WAIT,
  TP_E_EXECUTABLE_SERIALIZE,
  TP_E_EXECUTABLE_DESERIALIZE,
  TP_E_COUNT
};

static const char *const tp_entry_names[TP_E_COUNT]
    __attribute__((unused)) = {
    "backend_open",          "device_info",
    "claim",                 "compile",
    "execute",               "buffer_allocate",
    "buffer_copy_from_host", "buffer_copy_to_host",
    "buffer_copy",           "queue_create",
    "event_wait",            "executable_serialize",
    "executable_deserialize",
};

/* ---- objects -------------------------------------------------------------
 * Every object starts with a list link, so one list per backend finds
 * whatever the host has not released by backend_close. */

typedef enum { TP_EXE, TP_BUF, TP_QUEUE, TP_EVENT } tp_kind;

typedef struct tp_obj {
  struct tp_obj *prev, *next;
  tp_kind kind;
} tp_obj;

struct alloy_backend {
  const alloy_host_api *host; /* valid until backend_close */
  tp_obj live;                /* sentinel of the list of live objects */
  unsigned fail;              /* bit TP_E_x: entry x fails */
};
struct alloy_executable {
  tp_obj obj;
};
struct alloy_buffer {
  tp_obj obj;
  unsigned char *data;
  uint64_t bytes;
};
struct alloy_queue {
  tp_obj obj;
};
/* Work here is synchronous, so an event is born signalled; it exists so
 * that the host's event handling (wait, release) is exercised at all. */
struct alloy_event {
  tp_obj obj;
};

TP_FN void tp_link(alloy_backend *be, tp_obj *o, tp_kind kind) {
  o->kind = kind;
  o->next = be->live.next;
  o->prev = &be->live;
  be->live.next->prev = o;
  be->live.next = o;
}

TP_FN void tp_unlink_free(tp_obj *o) {
  o->prev->next = o->next;
  o->next->prev = o->prev;
  if (o->kind == TP_BUF) free(((alloy_buffer *)o)->data);
  free(o);
}

/* ---- errors ---------------------------------------------------------------
 * Messages are formatted here and copied by host->error_new, which is the
 * only way a plugin makes an error the host can free. */

TP_FN alloy_error *tp_error(const alloy_host_api *host, alloy_error_code code,
                            const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
TP_FN alloy_error *tp_error(const alloy_host_api *host, alloy_error_code code,
                            const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return host->error_new(code, msg);
}

TP_FN alloy_error *tp_oom(const alloy_host_api *host) {
  return tp_error(host, ALLOY_ERR_OUT_OF_MEMORY, TP_NAME ": out of memory");
}

#define TP_MAYBE_FAIL(be, e)                                                \
  do {                                                                      \
    if ((be)->fail & (1u << (e)))                                           \
      return tp_error((be)->host, ALLOY_ERR_INTERNAL,                       \
                      TP_NAME " plugin: %s always fails", tp_entry_names[e]); \
  } while (0)

/* Which entries fail: the names in $ALLOY_TEST_FAIL, comma-separated;
 * "all", or "none". Unset: every fallible entry but backend_open and
 * claim, so that the backend opens with its one device and claims relu,
 * and every later step fails. Only the failing plugin reads this. */
TP_FN unsigned tp_fail_mask(const alloy_host_api *host) {
  if (!TP_FAILING) return 0;
  const char *env = getenv("ALLOY_TEST_FAIL");
  if (!env)
    return ((1u << TP_E_COUNT) - 1) &
           ~((1u << TP_E_BACKEND_OPEN) | (1u << TP_E_CLAIM));
  if (strcmp(env, "all") == 0) return (1u << TP_E_COUNT) - 1;
  unsigned mask = 0;
  const char *p = env;
  while (*p) {
    size_t len = strcspn(p, ",");
    int found = 0;
    for (int e = 0; e < TP_E_COUNT; e++) {
      if (strlen(tp_entry_names[e]) == len &&
          strncmp(p, tp_entry_names[e], len) == 0) {
        mask |= 1u << e;
        found = 1;
      }
    }
    if (!found && !(len == 4 && strncmp(p, "none", 4) == 0) && len > 0) {
      /* A typo in a test would otherwise fail nothing and pass. */
      char msg[256];
      snprintf(msg, sizeof msg, "ALLOY_TEST_FAIL names no entry \"%.*s\"",
               (int)len, p);
      host->log(ALLOY_LOG_WARNING, TP_NAME, msg);
    }
    p += len;
    if (*p == ',') p++;
  }
  return mask;
}

/* ---- the entries ----------------------------------------------------------
 */

TP_FN alloy_error *tp_backend_open(const alloy_host_api *host,
                                   alloy_backend **out) {
  unsigned fail = tp_fail_mask(host);
  if (fail & (1u << TP_E_BACKEND_OPEN))
    return tp_error(host, ALLOY_ERR_INTERNAL,
                    TP_NAME " plugin: backend_open always fails");
  alloy_backend *be = calloc(1, sizeof *be);
  if (!be) return tp_oom(host);
  be->host = host;
  be->live.next = be->live.prev = &be->live;
  be->fail = fail;
  *out = be;
  return NULL;
}

TP_FN void tp_backend_close(alloy_backend *be) {
  int left = 0;
  while (be->live.next != &be->live) {
    tp_unlink_free(be->live.next);
    left++;
  }
  if (left) {
    /* Legal (close releases the rest), but worth a line for whoever is
     * chasing a host leak. */
    char msg[128];
    snprintf(msg, sizeof msg, "backend_close released %d objects the host "
             "did not", left);
    be->host->log(ALLOY_LOG_DEBUG, TP_NAME, msg);
  }
  free(be);
}

TP_FN int tp_device_count(alloy_backend *be) {
  (void)be;
  return 1;
}

TP_FN alloy_error *tp_device_info(alloy_backend *be, int device,
                                  alloy_device_info *info) {
  TP_MAYBE_FAIL(be, TP_E_DEVICE_INFO);
  if (device != 0)
    return tp_error(be->host, ALLOY_ERR_INVALID_ARGUMENT,
                    TP_NAME ": no device %d (there is one)", device);
  /* The host may be of an older minor: fill only what its struct holds.
   * And a plugin of an older minor knows only that minor's fields: the
   * rest of a newer host's struct stays as the host left it (zero). */
  if (ALLOY_HAS_FIELD(info, alloy_device_info, name))
    info->name = TP_NAME " cpu";
  if (ALLOY_HAS_FIELD(info, alloy_device_info, kind))
    info->kind = ALLOY_DEVICE_KIND_CPU;
  if (ALLOY_HAS_FIELD(info, alloy_device_info, memory_bytes))
    info->memory_bytes = 0;
#if TP_ABI_MINOR >= 2
  if (ALLOY_HAS_FIELD(info, alloy_device_info, arch)) info->arch = "testcpu";
#endif
  return NULL;
}

/* Whether node i is a relu on f32, the one thing this backend runs. */
TP_FN int tp_is_f32_relu(const alloy_host_api *h, const alloy_node *n) {
  const char *op = h->node_op_name(n);
  return op && strcmp(op, "aten.relu.default") == 0 &&
         h->node_num_outputs(n) == 1 &&
         h->value_dtype(h->node_output(n, 0)) == ALLOY_F32;
}

TP_FN alloy_error *tp_claim(alloy_backend *be, const alloy_graph *g,
                            alloy_claims *claims) {
  const alloy_host_api *h = be->host;
  for (int i = 0; i < h->graph_num_nodes(g); i++)
    if (tp_is_f32_relu(h, h->graph_node(g, i))) h->claims_add(claims, i, -1.0);
  /* Claims first, then the failure: a host must not use claims from a call
   * that failed. */
  TP_MAYBE_FAIL(be, TP_E_CLAIM);
  return NULL;
}

TP_FN alloy_error *tp_check_partition(alloy_backend *be,
                                      const alloy_graph *g) {
  const alloy_host_api *h = be->host;
  if (h->graph_num_nodes(g) != 1 || !tp_is_f32_relu(h, h->graph_node(g, 0)) ||
      h->graph_num_inputs(g) != 1 || h->graph_num_outputs(g) != 1)
    return tp_error(h, ALLOY_ERR_UNSUPPORTED,
                    TP_NAME ": runs only a partition of one f32 "
                    "aten.relu.default node (got %d nodes)",
                    h->graph_num_nodes(g));
  return NULL;
}

TP_FN alloy_error *tp_new_executable(alloy_backend *be,
                                     alloy_executable **out) {
  alloy_executable *exe = calloc(1, sizeof *exe);
  if (!exe) return tp_oom(be->host);
  tp_link(be, &exe->obj, TP_EXE);
  *out = exe;
  return NULL;
}

TP_FN alloy_error *tp_compile(alloy_backend *be, const alloy_graph *partition,
                              const alloy_compile_options *options,
                              alloy_executable **out) {
  TP_MAYBE_FAIL(be, TP_E_COMPILE);
  if (options && ALLOY_HAS_FIELD(options, alloy_compile_options, device) &&
      options->device != 0)
    return tp_error(be->host, ALLOY_ERR_INVALID_ARGUMENT,
                    TP_NAME ": compile for device %d (there is one)",
                    (int)options->device);
  alloy_error *err = tp_check_partition(be, partition);
  if (err) return err;
  return tp_new_executable(be, out);
}

TP_FN void tp_executable_release(alloy_backend *be, alloy_executable *exe) {
  (void)be;
  if (exe) tp_unlink_free(&exe->obj);
}

/* Element i of an array of ABI structs. Stepping by the writer's
 * struct_size rather than our sizeof stays right even if alloy_tensor ever
 * grows (docs/abi.md, "Reading across minors", arrays of structs). */
TP_FN const alloy_tensor *tp_tensor_at(const alloy_tensor *a, int i) {
  return (const alloy_tensor *)((const char *)a + (size_t)i * a[0].struct_size);
}

/* The f32 data of a tensor, after checking it lies inside its buffer and is
 * contiguous; NULL with *err set otherwise. */
TP_FN float *tp_f32_data(alloy_backend *be, const alloy_tensor *t,
                         const char *what, int64_t *numel,
                         alloy_error **err) {
  const alloy_host_api *h = be->host;
  *err = NULL;
  if (t->dtype != ALLOY_F32 || !t->buffer) {
    *err = tp_error(h, ALLOY_ERR_TYPE, TP_NAME ": %s is not an f32 tensor",
                    what);
    return NULL;
  }
  int64_t n = 1, stride = 1;
  for (int d = t->rank - 1; d >= 0; d--) {
    if (t->strides && t->sizes[d] != 1 && t->strides[d] != stride) {
      *err = tp_error(h, ALLOY_ERR_UNSUPPORTED,
                      TP_NAME ": %s is not contiguous", what);
      return NULL;
    }
    stride *= t->sizes[d];
    n *= t->sizes[d];
  }
  if (t->offset > t->buffer->bytes ||
      (uint64_t)n * 4 > t->buffer->bytes - t->offset) {
    *err = tp_error(h, ALLOY_ERR_INVALID_ARGUMENT,
                    TP_NAME ": %s (%lld floats at offset %llu) overruns its "
                    "buffer of %llu bytes",
                    what, (long long)n, (unsigned long long)t->offset,
                    (unsigned long long)t->buffer->bytes);
    return NULL;
  }
  *numel = n;
  return (float *)(void *)(t->buffer->data + t->offset);
}

TP_FN alloy_error *tp_new_event(alloy_backend *be, alloy_event **out) {
  alloy_event *ev = calloc(1, sizeof *ev);
  if (!ev) return tp_oom(be->host);
  tp_link(be, &ev->obj, TP_EVENT);
  *out = ev;
  return NULL;
}

/* Work is done by the time an entry returns; with a queue the host still
 * gets an (already signalled) event, as a real device would give it. */
TP_FN alloy_error *tp_finish(alloy_backend *be, alloy_queue *queue,
                             alloy_event **done) {
  if (!done) return NULL;
  *done = NULL;
  if (!queue) return NULL;
  return tp_new_event(be, done);
}

TP_FN alloy_error *tp_execute(alloy_backend *be, alloy_executable *exe,
                              const alloy_execute_args *args) {
  TP_MAYBE_FAIL(be, TP_E_EXECUTE);
  const alloy_host_api *h = be->host;
  if (!exe || !args || args->num_inputs != 1 || args->num_outputs != 1)
    return tp_error(h, ALLOY_ERR_INVALID_ARGUMENT,
                    TP_NAME ": execute wants one input and one output");
  const alloy_tensor *in = tp_tensor_at(args->inputs, 0);
  const alloy_tensor *out = tp_tensor_at(args->outputs, 0);
  if (in->rank != out->rank)
    return tp_error(h, ALLOY_ERR_INVALID_ARGUMENT,
                    TP_NAME ": input rank %d, output rank %d", (int)in->rank,
                    (int)out->rank);
  for (int d = 0; d < in->rank; d++)
    if (in->sizes[d] != out->sizes[d])
      return tp_error(h, ALLOY_ERR_INVALID_ARGUMENT,
                      TP_NAME ": input and output differ in dim %d", d);
  alloy_error *err = NULL;
  int64_t n = 0, m = 0;
  const float *x = tp_f32_data(be, in, "input 0", &n, &err);
  if (err) return err;
  float *y = tp_f32_data(be, out, "output 0", &m, &err);
  if (err) return err;
  /* NaN stays NaN, as in PyTorch: only values known to be <= 0 clear. */
  for (int64_t i = 0; i < n; i++) y[i] = x[i] <= 0.0f ? 0.0f : x[i];
  alloy_queue *queue =
      ALLOY_HAS_FIELD(args, alloy_execute_args, queue) ? args->queue : NULL;
  alloy_event **done =
      ALLOY_HAS_FIELD(args, alloy_execute_args, done) ? args->done : NULL;
  return tp_finish(be, queue, done);
}

TP_FN alloy_error *tp_buffer_allocate(alloy_backend *be, int device,
                                      uint64_t bytes, alloy_buffer **out) {
  TP_MAYBE_FAIL(be, TP_E_BUFFER_ALLOCATE);
  if (device != 0)
    return tp_error(be->host, ALLOY_ERR_INVALID_ARGUMENT,
                    TP_NAME ": no device %d", device);
  alloy_buffer *buf = calloc(1, sizeof *buf);
  /* calloc(0) may return NULL: a zero-byte buffer is still a buffer. */
  unsigned char *data = calloc(1, bytes ? (size_t)bytes : 1);
  if (!buf || !data) {
    free(buf);
    free(data);
    return tp_oom(be->host);
  }
  buf->data = data;
  buf->bytes = bytes;
  tp_link(be, &buf->obj, TP_BUF);
  *out = buf;
  return NULL;
}

TP_FN void tp_buffer_release(alloy_backend *be, alloy_buffer *buf) {
  (void)be;
  if (buf) tp_unlink_free(&buf->obj);
}

TP_FN void *tp_buffer_host_pointer(alloy_backend *be, alloy_buffer *buf) {
  (void)be;
  /* The failing plugin acts like device memory, so that the host has to go
   * through the copy entries (and meet their failures). */
  return TP_FAILING ? NULL : buf->data;
}

TP_FN alloy_error *tp_check_range(alloy_backend *be, const alloy_buffer *buf,
                                  uint64_t offset, uint64_t bytes) {
  if (!buf || offset > buf->bytes || bytes > buf->bytes - offset)
    return tp_error(be->host, ALLOY_ERR_INVALID_ARGUMENT,
                    TP_NAME ": copy of %llu bytes at offset %llu overruns a "
                    "buffer of %llu bytes",
                    (unsigned long long)bytes, (unsigned long long)offset,
                    (unsigned long long)(buf ? buf->bytes : 0));
  return NULL;
}

TP_FN alloy_error *tp_buffer_copy_from_host(alloy_backend *be,
                                            alloy_buffer *dst, uint64_t offset,
                                            const void *src, uint64_t bytes,
                                            alloy_queue *queue,
                                            alloy_event **done) {
  TP_MAYBE_FAIL(be, TP_E_BUFFER_COPY_FROM_HOST);
  alloy_error *err = tp_check_range(be, dst, offset, bytes);
  if (err) return err;
  if (bytes) memcpy(dst->data + offset, src, (size_t)bytes);
  return tp_finish(be, queue, done);
}

TP_FN alloy_error *tp_buffer_copy_to_host(alloy_backend *be, void *dst,
                                          alloy_buffer *src, uint64_t offset,
                                          uint64_t bytes, alloy_queue *queue,
                                          alloy_event **done) {
  TP_MAYBE_FAIL(be, TP_E_BUFFER_COPY_TO_HOST);
  alloy_error *err = tp_check_range(be, src, offset, bytes);
  if (err) return err;
  if (bytes) memcpy(dst, src->data + offset, (size_t)bytes);
  return tp_finish(be, queue, done);
}

TP_FN alloy_error *tp_buffer_copy(alloy_backend *be, alloy_buffer *dst,
                                  uint64_t dst_offset, alloy_buffer *src,
                                  uint64_t src_offset, uint64_t bytes,
                                  alloy_queue *queue, alloy_event **done) {
  TP_MAYBE_FAIL(be, TP_E_BUFFER_COPY);
  alloy_error *err = tp_check_range(be, dst, dst_offset, bytes);
  if (!err) err = tp_check_range(be, src, src_offset, bytes);
  if (err) return err;
  if (bytes) memmove(dst->data + dst_offset, src->data + src_offset, bytes);
  return tp_finish(be, queue, done);
}

TP_FN alloy_error *tp_queue_create(alloy_backend *be, int device,
                                   alloy_queue **out) {
  TP_MAYBE_FAIL(be, TP_E_QUEUE_CREATE);
  if (device != 0)
    return tp_error(be->host, ALLOY_ERR_INVALID_ARGUMENT,
                    TP_NAME ": no device %d", device);
  alloy_queue *q = calloc(1, sizeof *q);
  if (!q) return tp_oom(be->host);
  tp_link(be, &q->obj, TP_QUEUE);
  *out = q;
  return NULL;
}

TP_FN void tp_queue_release(alloy_backend *be, alloy_queue *q) {
  (void)be;
  if (q) tp_unlink_free(&q->obj);
}

TP_FN alloy_error *tp_event_wait(alloy_backend *be, alloy_event *ev) {
  (void)ev;
  TP_MAYBE_FAIL(be, TP_E_EVENT_WAIT);
  return NULL;
}

TP_FN int tp_event_query(alloy_backend *be, alloy_event *ev) {
  (void)be;
  (void)ev;
  return 1;
}

TP_FN void tp_event_release(alloy_backend *be, alloy_event *ev) {
  (void)be;
  if (ev) tp_unlink_free(&ev->obj);
}

/* The optional compile cache. A relu executable has no state, so its
 * serialized form is a tag that says which plugin wrote it. */
static const char tp_serial_tag[] __attribute__((unused)) =
    "alloy-test-relu:" TP_NAME ":1";

TP_FN alloy_error *tp_executable_serialize(alloy_backend *be,
                                           alloy_executable *exe,
                                           void **bytes, uint64_t *size,
                                           alloy_compat_info *info) {
  (void)exe;
  TP_MAYBE_FAIL(be, TP_E_EXECUTABLE_SERIALIZE);
  void *p = be->host->alloc(sizeof tp_serial_tag);
  if (!p) return tp_oom(be->host);
  memcpy(p, tp_serial_tag, sizeof tp_serial_tag);
  *bytes = p;
  *size = sizeof tp_serial_tag;
  if (info && ALLOY_HAS_FIELD(info, alloy_compat_info, plugin_version))
    info->plugin_version = "1.0.0";
  if (info && ALLOY_HAS_FIELD(info, alloy_compat_info, device_model))
    info->device_model = "testcpu";
  return NULL;
}

TP_FN alloy_error *tp_executable_deserialize(alloy_backend *be,
                                             const alloy_graph *partition,
                                             const void *bytes, uint64_t size,
                                             alloy_executable **out) {
  TP_MAYBE_FAIL(be, TP_E_EXECUTABLE_DESERIALIZE);
  if (size != sizeof tp_serial_tag || memcmp(bytes, tp_serial_tag, size) != 0)
    return tp_error(be->host, ALLOY_ERR_VERSION,
                    TP_NAME ": not an executable this plugin wrote");
  alloy_error *err = tp_check_partition(be, partition);
  if (err) return err;
  return tp_new_executable(be, out);
}

/* The required entries, for a designated initializer of alloy_plugin_api.
 * The optional ones (serialize, deserialize) are left to each plugin. */
#define TP_REQUIRED_ENTRIES                                  \
  .backend_open = tp_backend_open,                           \
  .backend_close = tp_backend_close,                         \
  .device_count = tp_device_count,                           \
  .device_info = tp_device_info,                             \
  .claim = tp_claim,                                         \
  .compile = tp_compile,                                     \
  .execute = tp_execute,                                     \
  .executable_release = tp_executable_release,               \
  .buffer_allocate = tp_buffer_allocate,                     \
  .buffer_release = tp_buffer_release,                       \
  .buffer_host_pointer = tp_buffer_host_pointer,             \
  .buffer_copy_from_host = tp_buffer_copy_from_host,         \
  .buffer_copy_to_host = tp_buffer_copy_to_host,             \
  .buffer_copy = tp_buffer_copy,                             \
  .queue_create = tp_queue_create,                           \
  .queue_release = tp_queue_release,                         \
  .event_wait = tp_event_wait,                               \
  .event_query = tp_event_query,                             \
  .event_release = tp_event_release

#define TP_OPTIONAL_ENTRIES                                  \
  .executable_serialize = tp_executable_serialize,           \
  .executable_deserialize = tp_executable_deserialize

/* ---- entries beyond an older minor's table ------------------------------
 * abi_1_0.c and abi_1_1.c present exactly the tables of ABI 1.0 and 1.1:
 * their struct_size ends before the entries 1.2 appended. The slots are
 * filled anyway, with these, which abort: a host that reads an entry past
 * struct_size crashes the test instead of passing it. */

TP_FN void tp_beyond(const char *entry) {
  fprintf(stderr, TP_NAME ": the host called %s, beyond the plugin table's "
                  "struct_size\n", entry);
  abort();
}
TP_FN alloy_error *tp_beyond_event_record(alloy_backend *be, alloy_queue *q,
                                          alloy_event **out) {
  (void)be, (void)q, (void)out;
  tp_beyond("event_record");
  return NULL;
}
TP_FN alloy_error *tp_beyond_queue_wait_event(alloy_backend *be,
                                              alloy_queue *q,
                                              alloy_event *ev) {
  (void)be, (void)q, (void)ev;
  tp_beyond("queue_wait_event");
  return NULL;
}
TP_FN alloy_error *tp_beyond_host_buffer_allocate(alloy_backend *be,
                                                  uint64_t bytes, void **out) {
  (void)be, (void)bytes, (void)out;
  tp_beyond("host_buffer_allocate");
  return NULL;
}
TP_FN void tp_beyond_host_buffer_release(alloy_backend *be, void *ptr) {
  (void)be, (void)ptr;
  tp_beyond("host_buffer_release");
}
TP_FN alloy_error *tp_beyond_buffer_import(alloy_backend *be, int device,
                                           void *device_pointer,
                                           uint64_t bytes,
                                           const alloy_ext *ext,
                                           alloy_buffer **out) {
  (void)be, (void)device, (void)device_pointer, (void)bytes, (void)ext,
      (void)out;
  tp_beyond("buffer_import");
  return NULL;
}
TP_FN alloy_error *tp_beyond_backend_set_option(alloy_backend *be,
                                                const char *key,
                                                const char *value) {
  (void)be, (void)key, (void)value;
  tp_beyond("backend_set_option");
  return NULL;
}

/* Every entry ABI 1.2 appended, each an abort. */
#define TP_ENTRIES_BEYOND_1_1                                \
  .event_record = tp_beyond_event_record,                    \
  .queue_wait_event = tp_beyond_queue_wait_event,            \
  .host_buffer_allocate = tp_beyond_host_buffer_allocate,    \
  .host_buffer_release = tp_beyond_host_buffer_release,      \
  .buffer_import = tp_beyond_buffer_import,                  \
  .backend_set_option = tp_beyond_backend_set_option

/* What a well-behaved entry does before handing out its table: refuse a
 * host of another major (using nothing but host->log, the one call that is
 * safe then), and one too old to have the entries this plugin uses. */
TP_FN const alloy_plugin_api *tp_init(const alloy_host_api *host,
                                      const alloy_plugin_api *table) {
  char msg[160];
  if (host->abi_major != table->abi_major) {
    snprintf(msg, sizeof msg, "built for ABI %u.%u, the host has %u.%u",
             (unsigned)table->abi_major, (unsigned)table->abi_minor,
             (unsigned)host->abi_major, (unsigned)host->abi_minor);
    host->log(ALLOY_LOG_ERROR, TP_NAME, msg);
    return NULL;
  }
  if (!ALLOY_HAS_FIELD(host, alloy_host_api, claims_add)) {
    host->log(ALLOY_LOG_ERROR, TP_NAME,
              "the host table lacks entries this plugin needs");
    return NULL;
  }
  return table;
}

#endif
