/*
 * conformance/abi.c: the plugin-ABI tests of `alloy conform` (source "abi").
 *
 * Op samples and graph tests reach a plugin through the runtime, which uses
 * the entries its own way: a synchronous copy here, a queue there, never an
 * import. These tests call the plugin table directly (rt->backends[i].api,
 * sdk/src/runtime_internal.h), each entry as alloy/plugin.h describes it,
 * and check what comes back byte for byte:
 *
 *   abi.buffers       buffer_allocate, buffer_host_pointer, the three copies
 *                     with queue NULL (synchronous, *done untouched), at
 *                     offset 0 and at nonzero offsets, buffer_release
 *   abi.queues        the same copies ordered on a queue_create'd queue,
 *                     each handing back an event or NULL; every event is
 *                     queried, waited for, queried again and released
 *                     before host memory is read; queue_release
 *   abi.events        (1.2) event_record on one queue, queue_wait_event on
 *                     another, a copy there of what the first wrote
 *   abi.host_buffers  (1.2) host_buffer_allocate's memory as the source and
 *                     the destination of copies, with and without a queue
 *   abi.import        (1.2) buffer_import of a buffer's own device address
 *                     (where the device is host-visible); a plugin may
 *                     refuse with an error, which skips
 *   abi.streams       (1.3) queue_import of chains that name no stream it
 *                     can take (none, one of a type no plugin knows, a
 *                     stream extension cut short): each refused with an
 *                     error, *out untouched, nothing to release. A stream
 *                     of the device's own runtime is the application's
 *                     to make, which the suite cannot
 *   abi.entries       with entry counting on (sdk/src/guard.c), runs all
 *                     of the above and claims, compiles, executes and
 *                     releases a one-node graph through the table (not the
 *                     runtime, whose compile cache keeps executables past
 *                     the test), then fails naming every required entry
 *                     that was never called. Forked workers keep nothing
 *                     between tests that counts: this one test does all
 *                     the calls it counts.
 *
 * A 1.2 or 1.3 entry absent from the plugin's table (ALLOY_HAS_FIELD, or
 * NULL) skips its test with the reason; the four tests of optional entries
 * count toward no level. Each failure names the entry and what went wrong,
 * with the plugin's own error message. Host memory lent to a queued copy
 * stays alive until its event is waited for, also when a test fails
 * half-way: everything a test made is released at its end.
 */
#include <fnmatch.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/graph.h"
#include "conformance/suite.h"
#include "sdk/src/runtime_internal.h"

/* ---- the tests --------------------------------------------------------------- */

enum { ABI_BUFFERS, ABI_QUEUES, ABI_EVENTS, ABI_HOST_BUFFERS, ABI_IMPORT, ABI_STREAMS, ABI_ENTRIES, ABI_NTESTS };

static const char *const test_names[ABI_NTESTS] = {
    "abi.buffers", "abi.queues", "abi.events", "abi.host_buffers", "abi.import", "abi.streams", "abi.entries",
};

static const char *const test_variants[ABI_NTESTS] = {
    "synchronous copies",
    "copies on a queue, events",
    "event_record, queue_wait_event",
    "host_buffer_allocate",
    "buffer_import",
    "queue_import",
    "required entries exercised",
};

/* The size of the buffers the tests move, and the nonzero offsets and
 * length of the partial copies. */
enum { NBYTES = 4096, OFF_A = 64, OFF_B = 128, PART = 1000 };

/* ---- a test's state: what it made, released at its end ----------------------- */

typedef struct abi_ctx {
  const alloy_plugin_api *api;
  alloy_backend *be;
  const alloy_loaded *row;
  int device;
  char *why;
  size_t cap;
  bool failed;
  int events;                  /* non-NULL events the plugin handed out */
  alloy_buffer *bufs[8];
  int nbufs;
  alloy_queue *queues[4];
  int nqueues;
  alloy_event *pending[16];    /* handed out, not yet waited for and released */
  int npending;
  void *pinned[4];             /* host_buffer_allocate's */
  int npinned;
  void *mem[8];                /* malloc'd host memory */
  int nmem;
} abi_ctx;

/* An address no plugin hands out: what *done holds before a call, so that
 * an entry that leaves it can be told from one that writes NULL. */
static char done_sentinel;
#define UNSET ((alloy_event *)(void *)&done_sentinel)

static bool ctx_fail(abi_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool ctx_fail(abi_ctx *c, const char *fmt, ...) {
  if (c->failed) return false; /* the first failure is the one to read */
  c->failed = true;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->why, c->cap, fmt, ap);
  va_end(ap);
  return false;
}

/* A plugin error: "<what> failed: <its message>"; frees it. */
static bool ctx_error(abi_ctx *c, alloy_error *e, const char *what) {
  if (!e) return true;
  ctx_fail(c, "%s failed: %s", what, alloy_error_message(e));
  alloy_error_free(e);
  return false;
}

/* The backend's table as the runtime holds it now: the counted copy once
 * abi.entries has turned counting on. */
static void ctx_open(abi_ctx *c, conform_env *env, conform_result *res) {
  const alloy_loaded *row = &env->rt->backends[env->backend];
  *c = (abi_ctx){.api = row->api, .be = row->be, .row = row, .why = res->why,
                 .cap = sizeof res->why};
}

/* Keeps an event the plugin handed out until ctx_settle (or ctx_close). */
static void ctx_pend(abi_ctx *c, alloy_event *ev) {
  if (!ev) return;
  c->events++;
  if (c->npending < (int)(sizeof c->pending / sizeof c->pending[0])) {
    c->pending[c->npending++] = ev;
    return;
  }
  /* Never with the tests here (at most 5 at once); waited for at once. */
  alloy_error_free(c->api->event_wait(c->be, ev));
  c->api->event_release(c->be, ev);
}

static void *ctx_mem(abi_ctx *c, size_t bytes) {
  if (c->nmem == (int)(sizeof c->mem / sizeof c->mem[0])) return NULL;
  void *p = calloc(1, bytes ? bytes : 1);
  if (p) c->mem[c->nmem++] = p;
  return p;
}

static bool ctx_buffer(abi_ctx *c, uint64_t bytes, alloy_buffer **out) {
  *out = NULL;
  alloy_buffer *b = NULL;
  char what[96];
  snprintf(what, sizeof what, "buffer_allocate of %llu bytes on device %d",
           (unsigned long long)bytes, c->device);
  if (c->nbufs == (int)(sizeof c->bufs / sizeof c->bufs[0]))
    return ctx_fail(c, "too many buffers for one test (the suite's bug)");
  if (!ctx_error(c, c->api->buffer_allocate(c->be, c->device, bytes, &b), what)) return false;
  if (!b) return ctx_fail(c, "%s returned no error and no buffer", what);
  c->bufs[c->nbufs++] = b;
  *out = b;
  return true;
}

static bool ctx_queue(abi_ctx *c, alloy_queue **out) {
  *out = NULL;
  alloy_queue *q = NULL;
  char what[64];
  snprintf(what, sizeof what, "queue_create on device %d", c->device);
  if (!ctx_error(c, c->api->queue_create(c->be, c->device, &q), what)) return false;
  if (!q) return ctx_fail(c, "%s returned no error and no queue", what);
  c->queues[c->nqueues++] = q;
  *out = q;
  return true;
}

/* What a copy did to *done (which held UNSET): with a queue it must write
 * an event or NULL. Without one the copy is synchronous and *done is to be
 * left alone; writing NULL there ("complete") harms no host that passes a
 * place for it, and a plugin that writes without checking for done NULL
 * crashes on the calls that pass none, so only an event fails: the work
 * was not finished when the entry returned. A non-NULL event is kept
 * pending until ctx_settle. */
static bool ctx_done(abi_ctx *c, alloy_event *ev, bool queued, const char *what) {
  bool wrote = ev != UNSET;
  if (wrote) ctx_pend(c, ev);
  if (queued && !wrote)
    return ctx_fail(c, "%s on a queue left *done unset (alloy/plugin.h: it receives a completion "
                    "event, or NULL when the work is complete)", what);
  if (!queued && wrote && ev)
    return ctx_fail(c, "%s with queue NULL handed back an event in *done (alloy/plugin.h: queue "
                    "NULL is synchronous, *done untouched)", what);
  return true;
}

/* Queries, waits for, queries again and releases every pending event: the
 * host's duty before it reads host memory a queued copy wrote. */
static bool ctx_settle(abi_ctx *c, const char *what) {
  bool ok = true;
  for (int i = 0; i < c->npending; i++) {
    alloy_event *ev = c->pending[i];
    int before = c->api->event_query(c->be, ev);
    if (before != 0 && before != 1)
      ok = ctx_fail(c, "%s: event_query returned %d, expected 0 (pending) or 1 (signalled)", what,
                    before);
    alloy_error *e = c->api->event_wait(c->be, ev);
    if (e) {
      char w[160];
      snprintf(w, sizeof w, "%s: event_wait", what);
      ok = ctx_error(c, e, w);
    } else {
      int after = c->api->event_query(c->be, ev);
      if (after != 1)
        ok = ctx_fail(c, "%s: event_query returned %d after event_wait succeeded, expected 1 "
                      "(signalled)", what, after);
    }
    c->api->event_release(c->be, ev);
  }
  c->npending = 0;
  return ok;
}

/* Releases everything the test made: pending events first (waited for, so
 * that no queued copy still uses host memory), then the rest. */
static void ctx_close(abi_ctx *c) {
  for (int i = 0; i < c->npending; i++) {
    alloy_error *e = c->api->event_wait(c->be, c->pending[i]);
    alloy_error_free(e);
    c->api->event_release(c->be, c->pending[i]);
  }
  c->npending = 0;
  for (int i = c->npinned - 1; i >= 0; i--) c->api->host_buffer_release(c->be, c->pinned[i]);
  for (int i = c->nbufs - 1; i >= 0; i--) c->api->buffer_release(c->be, c->bufs[i]);
  for (int i = c->nqueues - 1; i >= 0; i--) c->api->queue_release(c->be, c->queues[i]);
  for (int i = 0; i < c->nmem; i++) free(c->mem[i]);
  c->npinned = c->nbufs = c->nqueues = c->nmem = 0;
}

/* ---- bytes ------------------------------------------------------------------- */

static void fill(uint8_t *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(i * 167u + seed * 59u + (i >> 8) * 13u + 1u);
}

/* Compares got (read from the device at device offset base) with want;
 * the failure names the first wrong byte by its offset in the buffer:
 * "<what> 0x3c at offset 128, expected 0x77". */
static bool same_bytes(abi_ctx *c, const uint8_t *got, const uint8_t *want, size_t n,
                       uint64_t base, const char *what) {
  for (size_t i = 0; i < n; i++)
    if (got[i] != want[i])
      return ctx_fail(c, "%s 0x%02x at offset %llu, expected 0x%02x", what, got[i],
                      (unsigned long long)(base + i), want[i]);
  return true;
}

/* A synchronous copy back of bytes [off, off + n) of b, compared with want;
 * what names the suspect ("buffer_copy (...) is wrong"). */
static bool read_back(abi_ctx *c, alloy_buffer *b, uint64_t off, size_t n, const uint8_t *want,
                      uint8_t *scratch, const char *what) {
  memset(scratch, 0, n);
  alloy_event *ev = UNSET;
  char w[256];
  snprintf(w, sizeof w, "buffer_copy_to_host (queue NULL, offset %llu, %zu bytes)",
           (unsigned long long)off, n);
  if (!ctx_error(c, c->api->buffer_copy_to_host(c->be, scratch, b, off, n, NULL, &ev), w) ||
      !ctx_done(c, ev, false, w))
    return false;
  snprintf(w, sizeof w, "%s: buffer_copy_to_host read back", what);
  return same_bytes(c, scratch, want, n, off, w);
}

/* ---- abi.buffers ------------------------------------------------------------- */

static conform_verdict run_buffers(abi_ctx *c) {
  alloy_buffer *a, *b;
  uint8_t *src = ctx_mem(c, NBYTES), *part = ctx_mem(c, PART), *want_a = ctx_mem(c, NBYTES),
          *want_b = ctx_mem(c, NBYTES), *scratch = ctx_mem(c, NBYTES);
  if (!src || !part || !want_a || !want_b || !scratch)
    return ctx_fail(c, "out of memory"), CONFORM_FAIL;
  fill(src, NBYTES, 1);
  fill(part, PART, 2);
  if (!ctx_buffer(c, NBYTES, &a) || !ctx_buffer(c, NBYTES, &b)) return CONFORM_FAIL;
  void *host_a = c->api->buffer_host_pointer(c->be, a); /* may be NULL */

  /* Host to device, whole; done given and NULL: both mean "untouched". */
  alloy_event *ev = UNSET;
  const char *w = "buffer_copy_from_host (queue NULL, offset 0, 4096 bytes)";
  if (!ctx_error(c, c->api->buffer_copy_from_host(c->be, a, 0, src, NBYTES, NULL, &ev), w) ||
      !ctx_done(c, ev, false, w))
    return CONFORM_FAIL;
  memcpy(want_a, src, NBYTES);
  if (!read_back(c, a, 0, NBYTES, want_a, scratch,
                 "buffer_copy_from_host (queue NULL, offset 0) or buffer_copy_to_host is wrong"))
    return CONFORM_FAIL;
  if (host_a && !same_bytes(c, host_a, want_a, NBYTES, 0,
                            "buffer_host_pointer's address does not show what buffer_copy_from_host wrote: it holds"))
    return CONFORM_FAIL;

  /* Host to device at a nonzero offset; the bytes around it stay. */
  w = "buffer_copy_from_host (queue NULL, offset 64, 1000 bytes)";
  if (!ctx_error(c, c->api->buffer_copy_from_host(c->be, a, OFF_A, part, PART, NULL, NULL), w))
    return CONFORM_FAIL;
  memcpy(want_a + OFF_A, part, PART);
  if (!read_back(c, a, 0, NBYTES, want_a, scratch,
                 "buffer_copy_from_host (queue NULL, 1000 bytes at offset 64) is wrong") ||
      !read_back(c, a, OFF_A, PART, part, scratch,
                 "buffer_copy_to_host at offset 64 (or buffer_copy_from_host there) is wrong"))
    return CONFORM_FAIL;

  /* Device to device, whole, then a part from offset 64 to offset 128. */
  ev = UNSET;
  w = "buffer_copy (queue NULL, 4096 bytes)";
  if (!ctx_error(c, c->api->buffer_copy(c->be, b, 0, a, 0, NBYTES, NULL, &ev), w) ||
      !ctx_done(c, ev, false, w))
    return CONFORM_FAIL;
  memcpy(want_b, want_a, NBYTES);
  if (!read_back(c, b, 0, NBYTES, want_b, scratch,
                 "buffer_copy (queue NULL, a whole buffer of 4096 bytes) is wrong"))
    return CONFORM_FAIL;
  w = "buffer_copy (queue NULL, 1000 bytes from offset 64 to offset 128)";
  if (!ctx_error(c, c->api->buffer_copy(c->be, b, OFF_B, a, OFF_A, PART, NULL, NULL), w))
    return CONFORM_FAIL;
  memcpy(want_b + OFF_B, want_a + OFF_A, PART);
  if (!read_back(c, b, 0, NBYTES, want_b, scratch,
                 "buffer_copy (queue NULL, 1000 bytes from offset 64 to offset 128) is wrong") ||
      !read_back(c, a, 0, NBYTES, want_a, scratch, "buffer_copy changed its source"))
    return CONFORM_FAIL;

  /* Host-visible memory is the buffer: what the host writes there, the
   * copies read. */
  if (host_a) {
    fill((uint8_t *)host_a + OFF_B, PART, 3);
    memcpy(want_a + OFF_B, (uint8_t *)host_a + OFF_B, PART);
    if (!read_back(c, a, 0, NBYTES, want_a, scratch,
                   "a write through buffer_host_pointer's address does not reach the buffer"))
      return CONFORM_FAIL;
  }
  return CONFORM_PASS;
}

/* ---- abi.queues -------------------------------------------------------------- */

/* One copy on q; its *done must be written, an event kept pending. */
#define ON_QUEUE(c, call, what)                                                   \
  do {                                                                            \
    alloy_event *ev_ = UNSET;                                                     \
    alloy_event **done = &ev_;                                                    \
    if (!ctx_error((c), (call), (what)) || !ctx_done((c), ev_, true, (what)))     \
      return CONFORM_FAIL;                                                        \
  } while (0)

static conform_verdict run_queues(abi_ctx *c) {
  alloy_buffer *a, *b;
  alloy_queue *q;
  uint8_t *src = ctx_mem(c, NBYTES), *part = ctx_mem(c, PART), *want = ctx_mem(c, NBYTES),
          *dst = ctx_mem(c, NBYTES), *dst_part = ctx_mem(c, PART);
  if (!src || !part || !want || !dst || !dst_part) return ctx_fail(c, "out of memory"), CONFORM_FAIL;
  fill(src, NBYTES, 4);
  fill(part, PART, 5);
  memset(dst, 0, NBYTES);
  if (!ctx_buffer(c, NBYTES, &a) || !ctx_buffer(c, NBYTES, &b) || !ctx_queue(c, &q))
    return CONFORM_FAIL;
  /* All five in a row, none waited for: the queue orders them. The host
   * memory lent to them is read only after their events. */
  ON_QUEUE(c, c->api->buffer_copy_from_host(c->be, a, 0, src, NBYTES, q, done),
           "buffer_copy_from_host (on a queue, offset 0, 4096 bytes)");
  ON_QUEUE(c, c->api->buffer_copy_from_host(c->be, a, OFF_A, part, PART, q, done),
           "buffer_copy_from_host (on a queue, offset 64, 1000 bytes)");
  ON_QUEUE(c, c->api->buffer_copy(c->be, b, 0, a, 0, NBYTES, q, done),
           "buffer_copy (on a queue, 4096 bytes)");
  ON_QUEUE(c, c->api->buffer_copy_to_host(c->be, dst, b, 0, NBYTES, q, done),
           "buffer_copy_to_host (on a queue, offset 0, 4096 bytes)");
  ON_QUEUE(c, c->api->buffer_copy_to_host(c->be, dst_part, b, OFF_A, PART, q, done),
           "buffer_copy_to_host (on a queue, offset 64, 1000 bytes)");
  if (!ctx_settle(c, "the copies on a queue")) return CONFORM_FAIL;
  memcpy(want, src, NBYTES);
  memcpy(want + OFF_A, part, PART);
  if (!same_bytes(c, dst, want, NBYTES, 0,
                  "copies in, across and out on one queue, their events waited for, are wrong: "
                  "buffer_copy_to_host (offset 0) gave") ||
      !same_bytes(c, dst_part, part, PART, OFF_A,
                  "copies on one queue are wrong: buffer_copy_to_host at offset 64 gave"))
    return CONFORM_FAIL;
  return CONFORM_PASS;
}

/* ---- abi.events (1.2) ------------------------------------------------------------- */

#define HAS_ENTRY(api, f) (ALLOY_HAS_FIELD((api), alloy_plugin_api, f) && (api)->f)

/* since: the ABI version the entries arrived in ("1.2"). */
static conform_verdict skip_absent(abi_ctx *c, const char *entries, const char *since) {
  snprintf(c->why, c->cap, "the plugin's table has no %s (optional since ABI %s; the plugin is "
           "ABI %u.%u)", entries, since, c->row->abi_major, c->row->abi_minor);
  return CONFORM_SKIP;
}

static conform_verdict run_events(abi_ctx *c) {
  if (!HAS_ENTRY(c->api, event_record) || !HAS_ENTRY(c->api, queue_wait_event))
    return skip_absent(c, "event_record / queue_wait_event", "1.2");
  alloy_buffer *a, *b;
  alloy_queue *q1, *q2;
  uint8_t *src = ctx_mem(c, NBYTES), *dst = ctx_mem(c, NBYTES);
  if (!src || !dst) return ctx_fail(c, "out of memory"), CONFORM_FAIL;
  fill(src, NBYTES, 6);
  memset(dst, 0, NBYTES);
  if (!ctx_buffer(c, NBYTES, &a) || !ctx_buffer(c, NBYTES, &b) || !ctx_queue(c, &q1) ||
      !ctx_queue(c, &q2))
    return CONFORM_FAIL;
  ON_QUEUE(c, c->api->buffer_copy_from_host(c->be, a, 0, src, NBYTES, q1, done),
           "buffer_copy_from_host (on queue 1)");
  alloy_event *rec = NULL;
  if (!ctx_error(c, c->api->event_record(c->be, q1, &rec), "event_record (queue 1)"))
    return CONFORM_FAIL;
  if (!rec) return ctx_fail(c, "event_record (queue 1) returned no error and no event"), CONFORM_FAIL;
  ctx_pend(c, rec);
  if (!ctx_error(c, c->api->queue_wait_event(c->be, q2, rec),
                 "queue_wait_event (queue 2 on queue 1's recorded event)"))
    return CONFORM_FAIL;
  /* Enqueued on q2 after the wait: must see what q1 wrote. */
  ON_QUEUE(c, c->api->buffer_copy(c->be, b, 0, a, 0, NBYTES, q2, done),
           "buffer_copy (on queue 2, after queue_wait_event)");
  ON_QUEUE(c, c->api->buffer_copy_to_host(c->be, dst, b, 0, NBYTES, q2, done),
           "buffer_copy_to_host (on queue 2)");
  if (!ctx_settle(c, "the copies on two queues")) return CONFORM_FAIL;
  if (!same_bytes(c, dst, src, NBYTES, 0,
                  "queue_wait_event did not order queue 2 after queue 1's event_record: the "
                  "copy on queue 2 of what queue 1 wrote gave"))
    return CONFORM_FAIL;
  return CONFORM_PASS;
}

/* ---- abi.host_buffers (1.2) ------------------------------------------------------- */

static bool ctx_pinned(abi_ctx *c, uint64_t bytes, uint8_t **out) {
  void *p = NULL;
  *out = NULL;
  if (!ctx_error(c, c->api->host_buffer_allocate(c->be, bytes, &p), "host_buffer_allocate"))
    return false;
  if (!p) return ctx_fail(c, "host_buffer_allocate returned no error and no memory");
  c->pinned[c->npinned++] = p;
  *out = p;
  return true;
}

static conform_verdict run_host_buffers(abi_ctx *c) {
  if (!HAS_ENTRY(c->api, host_buffer_allocate) || !HAS_ENTRY(c->api, host_buffer_release))
    return skip_absent(c, "host_buffer_allocate / host_buffer_release", "1.2");
  alloy_buffer *a;
  alloy_queue *q;
  uint8_t *in, *out, *out_q;
  if (!ctx_pinned(c, NBYTES, &in) || !ctx_pinned(c, NBYTES, &out) || !ctx_pinned(c, NBYTES, &out_q) ||
      !ctx_buffer(c, NBYTES, &a) || !ctx_queue(c, &q))
    return CONFORM_FAIL;
  /* The memory is the caller's to write and read, all of it. */
  fill(in, NBYTES, 7);
  memset(out, 0, NBYTES);
  memset(out_q, 0, NBYTES);
  if (!ctx_error(c, c->api->buffer_copy_from_host(c->be, a, 0, in, NBYTES, NULL, NULL),
                 "buffer_copy_from_host (queue NULL) from host_buffer_allocate's memory") ||
      !ctx_error(c, c->api->buffer_copy_to_host(c->be, out, a, 0, NBYTES, NULL, NULL),
                 "buffer_copy_to_host (queue NULL) into host_buffer_allocate's memory"))
    return CONFORM_FAIL;
  if (!same_bytes(c, out, in, NBYTES, 0,
                  "synchronous copies from and into host_buffer_allocate's memory are wrong: it got"))
    return CONFORM_FAIL;
  /* The staging use: on a queue, the memory lent until the event. */
  fill(in, NBYTES, 8);
  ON_QUEUE(c, c->api->buffer_copy_from_host(c->be, a, 0, in, NBYTES, q, done),
           "buffer_copy_from_host (on a queue) from host_buffer_allocate's memory");
  ON_QUEUE(c, c->api->buffer_copy_to_host(c->be, out_q, a, 0, NBYTES, q, done),
           "buffer_copy_to_host (on a queue) into host_buffer_allocate's memory");
  if (!ctx_settle(c, "copies through host_buffer_allocate's memory")) return CONFORM_FAIL;
  if (!same_bytes(c, out_q, in, NBYTES, 0,
                  "copies on a queue from and into host_buffer_allocate's memory are wrong: it got"))
    return CONFORM_FAIL;
  return CONFORM_PASS;
}

/* ---- abi.import (1.2) -------------------------------------------------------------- */

static conform_verdict run_import(abi_ctx *c) {
  if (!HAS_ENTRY(c->api, buffer_import)) return skip_absent(c, "buffer_import", "1.2");
  /* A device pointer comes from the device's own runtime (cudaMalloc), which
   * the suite cannot call. On a host-visible device a buffer's host address
   * is its device address: import that, as an application holding the
   * memory would. */
  alloy_device_info info = {.struct_size = ALLOY_DEVICE_INFO_STRUCT_SIZE};
  if (!ctx_error(c, c->api->device_info(c->be, c->device, &info), "device_info"))
    return CONFORM_FAIL;
  alloy_buffer *a, *imp = NULL;
  uint8_t *src = ctx_mem(c, NBYTES), *part = ctx_mem(c, PART), *want = ctx_mem(c, NBYTES),
          *scratch = ctx_mem(c, NBYTES);
  if (!src || !part || !want || !scratch) return ctx_fail(c, "out of memory"), CONFORM_FAIL;
  if (!ctx_buffer(c, NBYTES, &a)) return CONFORM_FAIL;
  void *addr = c->api->buffer_host_pointer(c->be, a);
  if (!(info.capabilities & ALLOY_DEVICE_CAP_HOST_VISIBLE) || !addr) {
    snprintf(c->why, c->cap, "no device pointer to import: device %d is not host-visible "
             "(ALLOY_DEVICE_CAP_HOST_VISIBLE and buffer_host_pointer), and device pointers come "
             "from the device's own runtime", c->device);
    return CONFORM_SKIP;
  }
  fill(src, NBYTES, 9);
  fill(part, PART, 10);
  if (!ctx_error(c, c->api->buffer_copy_from_host(c->be, a, 0, src, NBYTES, NULL, NULL),
                 "buffer_copy_from_host (queue NULL, 4096 bytes)"))
    return CONFORM_FAIL;
  alloy_error *e = c->api->buffer_import(c->be, c->device, addr, NBYTES, NULL, &imp);
  if (e) {
    /* Allowed: a plugin may take only memory it knows. */
    snprintf(c->why, c->cap, "buffer_import of a buffer's own address refused (allowed): %s",
             alloy_error_message(e));
    alloy_error_free(e);
    return CONFORM_SKIP;
  }
  if (!imp) return ctx_fail(c, "buffer_import returned no error and no buffer"), CONFORM_FAIL;
  /* Released before a (reverse order): the import must not free it. */
  c->bufs[c->nbufs++] = imp;
  memcpy(want, src, NBYTES);
  if (!read_back(c, imp, 0, NBYTES, want, scratch,
                 "the imported buffer does not hold the memory it imports"))
    return CONFORM_FAIL;
  if (!ctx_error(c, c->api->buffer_copy_from_host(c->be, imp, OFF_A, part, PART, NULL, NULL),
                 "buffer_copy_from_host into the imported buffer (offset 64, 1000 bytes)"))
    return CONFORM_FAIL;
  memcpy(want + OFF_A, part, PART);
  if (!read_back(c, a, 0, NBYTES, want, scratch,
                 "a write through the imported buffer does not reach the memory it imports"))
    return CONFORM_FAIL;
  /* buffer_release of an import forgets it and leaves the memory. */
  c->api->buffer_release(c->be, imp);
  c->nbufs--;
  if (!read_back(c, a, 0, NBYTES, want, scratch,
                 "buffer_release of the imported buffer changed the memory (not its to free)"))
    return CONFORM_FAIL;
  return CONFORM_PASS;
}

/* ---- abi.streams (1.3) -------------------------------------------------------------- */

static conform_verdict run_streams(abi_ctx *c) {
  if (!HAS_ENTRY(c->api, queue_import)) return skip_absent(c, "queue_import", "1.3");
  /* A type no plugin knows, which a reader skips; stream extensions too
   * short to hold their stream, which it must not read past (the chain's
   * rules, alloy/plugin.h). */
  const alloy_ext unknown = {.struct_size = ALLOY_EXT_STRUCT_SIZE, .type = 0x7fffu};
  const alloy_ext short_hip = {.struct_size = ALLOY_EXT_STRUCT_SIZE, .type = ALLOY_EXT_HIP_STREAM, .next = &unknown};
  const alloy_ext short_cuda = {.struct_size = ALLOY_EXT_STRUCT_SIZE, .type = ALLOY_EXT_CUDA_STREAM, .next = &short_hip};
  const alloy_ext *const chains[3] = {NULL, &unknown, &short_cuda};
  static const char *const what[3] = {"no chain (NULL)", "a chain of one extension of an unknown type",
                                      "a chain of stream extensions cut short before their stream"};
  for (int k = 0; k < 3; k++) {
    alloy_queue *const unset = (alloy_queue *)(void *)&done_sentinel, *q = unset;
    alloy_error *e = c->api->queue_import(c->be, c->device, chains[k], &q);
    if (!e) {
      if (q && q != unset) c->api->queue_release(c->be, q);
      return ctx_fail(c, "queue_import of %s returned no error (alloy/plugin.h: a chain naming no stream it "
                      "takes is an error)", what[k]), CONFORM_FAIL;
    }
    alloy_error_free(e);
    if (q != unset)
      return ctx_fail(c, "queue_import of %s failed but wrote its out parameter (alloy/plugin.h: a failing "
                      "entry leaves it untouched)", what[k]), CONFORM_FAIL;
  }
  return CONFORM_PASS;
}

/* ---- abi.entries ---------------------------------------------------------------- */

/* One-node graphs of ops most backends have: the first the backend claims
 * (and compiles: ALLOY_ERR_DECLINED tries the next) is run. */
static const struct {
  const char *op;
  int nin;
  const char *air;
} candidates[] = {
    {"aten.relu.default", 1,
     "input %x: f32[4]\n%y = aten.relu.default(%x) : f32[4]\noutput %y\n"},
    {"aten.add.Tensor", 2,
     "input %x: f32[4]\ninput %w: f32[4]\n%y = aten.add.Tensor(%x, %w) : f32[4]\noutput %y\n"},
    {"aten.neg.default", 1,
     "input %x: f32[4]\n%y = aten.neg.default(%x) : f32[4]\noutput %y\n"},
};
enum { NCANDIDATES = sizeof candidates / sizeof candidates[0] };

static const float in_x[4] = {-2.0f, -0.5f, 0.0f, 3.0f}, in_w[4] = {1.0f, 2.0f, 3.0f, 4.0f};

static void expected(int k, float *out) {
  for (int i = 0; i < 4; i++)
    out[i] = k == 0 ? (in_x[i] > 0 ? in_x[i] : 0.0f) : k == 1 ? in_x[i] + in_w[i] : -in_x[i];
}

/* Claims g; *claimed false when the backend leaves its node. */
static bool claim_graph(abi_ctx *c, const alloy_graph *g, const char *op, bool *claimed,
                        char *left, size_t cap) {
  int n = alloy_graph_num_nodes(g);
  bool flags[4] = {false};
  double cost[4] = {0};
  alloy_claims claims = {.num_nodes = n, .claimed = flags, .cost = cost};
  char what[96];
  snprintf(what, sizeof what, "claim of a graph of %s", op);
  alloy_error *e = c->api->claim(c->be, g, &claims);
  *claimed = !e && flags[0];
  if (!e && !flags[0]) {
    size_t len = strlen(left);
    const char *why = claims.reason && claims.reason[0] ? claims.reason[0] : "not claimed";
    snprintf(left + len, cap - len, "%s%s (%s)", len ? ", " : "", op, why);
  }
  claims_release(&claims);
  return ctx_error(c, e, what);
}

/* Runs exe on the candidate's inputs: with queue NULL, then on q; checks
 * the output each time. The output sits at a nonzero offset of its buffer. */
static bool execute_checked(abi_ctx *c, int k, alloy_executable *exe, alloy_queue *q) {
  alloy_buffer *in[2], *out;
  int nin = candidates[k].nin;
  for (int i = 0; i < nin; i++) {
    if (!ctx_buffer(c, sizeof in_x, &in[i]) ||
        !ctx_error(c, c->api->buffer_copy_from_host(c->be, in[i], 0, i ? in_w : in_x, sizeof in_x,
                                                    NULL, NULL),
                   "buffer_copy_from_host of an execute input"))
      return false;
  }
  if (!ctx_buffer(c, OFF_A + sizeof in_x, &out)) return false;
  int64_t sizes[3][1] = {{4}, {4}, {4}}, strides[3][1] = {{1}, {1}, {1}};
  alloy_tensor tin[2], tout;
  for (int i = 0; i < nin; i++)
    tin[i] = (alloy_tensor){.struct_size = ALLOY_TENSOR_STRUCT_SIZE, .buffer = in[i], .offset = 0,
                            .dtype = ALLOY_F32, .rank = 1, .sizes = sizes[i], .strides = strides[i]};
  float want[4], got[4];
  expected(k, want);
  for (int pass = 0; pass < 2; pass++) {
    tout = (alloy_tensor){.struct_size = ALLOY_TENSOR_STRUCT_SIZE, .buffer = out, .offset = OFF_A,
                          .dtype = ALLOY_F32, .rank = 1, .sizes = sizes[2], .strides = strides[2]};
    alloy_queue *queue = pass ? q : NULL;
    alloy_event *ev = NULL;
    alloy_execute_args args = {.struct_size = ALLOY_EXECUTE_ARGS_STRUCT_SIZE, .inputs = tin,
                               .num_inputs = nin, .outputs = &tout, .num_outputs = 1,
                               .queue = queue, .done = &ev};
    char what[128];
    snprintf(what, sizeof what, "execute of %s (%s)", candidates[k].op,
             pass ? "on a queue" : "queue NULL");
    if (!ctx_error(c, c->api->execute(c->be, exe, &args), what)) return false;
    ctx_pend(c, ev);
    if (!ctx_settle(c, what)) return false;
    memset(got, 0, sizeof got);
    if (!ctx_error(c, c->api->buffer_copy_to_host(c->be, got, out, OFF_A, sizeof got, NULL, NULL),
                   "buffer_copy_to_host of an execute output"))
      return false;
    for (int i = 0; i < 4; i++)
      if (memcmp(&got[i], &want[i], sizeof got[i]))
        return ctx_fail(c, "%s: output element %d (at byte offset %d of its buffer) is %g, expected "
                        "%g (inputs x = [-2, -0.5, 0, 3]%s)", what, i, OFF_A + 4 * i, (double)got[i],
                        (double)want[i], nin > 1 ? ", w = [1, 2, 3, 4]" : "");
  }
  return true;
}

/* Claim, compile, execute and executable_release of the first candidate
 * the backend takes. */
static bool run_graph(abi_ctx *c) {
  alloy_queue *q;
  if (!ctx_queue(c, &q)) return false;
  char left[512] = "";
  for (int k = 0; k < NCANDIDATES; k++) {
    alloy_graph *g = NULL;
    alloy_error *e = alloy_air_parse(candidates[k].air, strlen(candidates[k].air), candidates[k].op, &g);
    if (e) return ctx_error(c, e, "parsing a test graph (Alloy's bug)");
    bool claimed = false;
    if (!claim_graph(c, g, candidates[k].op, &claimed, left, sizeof left) || !claimed) {
      alloy_graph_free(g);
      if (c->failed) return false;
      continue;
    }
    alloy_compile_options opts = {.struct_size = ALLOY_COMPILE_OPTIONS_STRUCT_SIZE,
                                  .device = c->device, .opt_level = 2,
                                  .options = c->row->options, .num_options = c->row->noptions};
    alloy_executable *exe = NULL;
    char what[96];
    snprintf(what, sizeof what, "compile of a graph of %s", candidates[k].op);
    e = c->api->compile(c->be, g, &opts, &exe);
    if (e && alloy_error_code_of(e) == ALLOY_ERR_DECLINED) {
      size_t len = strlen(left);
      snprintf(left + len, sizeof left - len, "%s%s (declined at compile: %s)", len ? ", " : "",
               candidates[k].op, alloy_error_message(e));
      alloy_error_free(e);
      alloy_graph_free(g);
      continue;
    }
    bool ok = ctx_error(c, e, what);
    if (ok && !exe) ok = ctx_fail(c, "%s returned no error and no executable", what);
    if (ok) ok = execute_checked(c, k, exe, q);
    if (exe) {
      /* Nothing may be in flight on exe when it goes. */
      ctx_settle(c, "execute");
      c->api->executable_release(c->be, exe);
    }
    alloy_graph_free(g); /* the graph lives until its executable is released */
    return ok;
  }
  /* Not a failure here: the entries check names what stayed uncalled. */
  snprintf(c->why, c->cap, "claims none of the graphs: %s", left);
  return true;
}

typedef conform_verdict (*data_test)(abi_ctx *c);
static const data_test data_tests[] = {run_buffers, run_queues, run_events, run_host_buffers,
                                       run_import,  run_streams};

/* Whether the entry counts as exercised without a call in the test. */
static bool exempt(const char *name, int events) {
  /* Called at load, before counting could start: the backend loaded. */
  if (!strcmp(name, "backend_open") || !strcmp(name, "backend_close") ||
      !strcmp(name, "device_count") || !strcmp(name, "device_info"))
    return true;
  /* A plugin that never hands out an event gives nothing to call these on. */
  return !events && (!strcmp(name, "event_wait") || !strcmp(name, "event_query") ||
                     !strcmp(name, "event_release"));
}

/* Appends "; " and text to why (cap bytes), as far as it fits. */
static void append(char *why, size_t cap, const char *text) {
  size_t n = strlen(why);
  for (const char *p = n ? "; " : ""; *p && n + 1 < cap; p++) why[n++] = *p;
  for (const char *p = text; *p && n + 1 < cap; p++) why[n++] = *p;
  why[n] = 0;
}

static conform_verdict run_entries(conform_env *env, conform_result *res) {
  alloy_error *e = runtime_count_entries(env->rt, env->backend);
  if (e) {
    snprintf(res->why, sizeof res->why, "cannot count entries: %s", alloy_error_message(e));
    alloy_error_free(e);
    return CONFORM_FAIL;
  }
  int events = 0;
  abi_ctx c;
  /* The data-path tests, each as it runs alone; all of them run, so that a
   * failure of one still leaves the others' entries exercised. */
  char sub_failed[640] = "";
  for (int t = 0; t < ABI_ENTRIES; t++) {
    conform_result sub;
    memset(&sub, 0, sizeof sub);
    ctx_open(&c, env, &sub);
    conform_verdict v = data_tests[t](&c);
    ctx_close(&c);
    events += c.events;
    if (v == CONFORM_FAIL && !sub_failed[0])
      snprintf(sub_failed, sizeof sub_failed, "%s (run here too) failed: %.580s", test_names[t],
               sub.why);
  }
  /* The compute path, and the device entries through the counted table. */
  conform_result graph;
  memset(&graph, 0, sizeof graph);
  ctx_open(&c, env, &graph);
  int ndev = c.api->device_count(c.be);
  alloy_device_info info = {.struct_size = ALLOY_DEVICE_INFO_STRUCT_SIZE};
  bool ok = ndev > 0 && ctx_error(&c, c.api->device_info(c.be, c.device, &info), "device_info");
  if (ndev <= 0) ctx_fail(&c, "device_count returned %d, but the backend loaded", ndev);
  if (ok) ok = run_graph(&c);
  ctx_close(&c);
  events += c.events;
  /* What stayed uncalled, with why the compute path did not run when it
   * did not ("claims none of the graphs: ..."). */
  char never[512] = "";
  size_t n = 0;
  for (int i = 0; runtime_required_entries[i]; i++) {
    const char *name = runtime_required_entries[i];
    int64_t calls = runtime_entry_calls(env->rt, env->backend, name);
    if (calls < 0) {
      snprintf(res->why, sizeof res->why, "entry counting lost %s (Alloy's bug)", name);
      return CONFORM_FAIL;
    }
    if (calls > 0 || exempt(name, events) || n + 1 >= sizeof never) continue;
    n += (size_t)snprintf(never + n, sizeof never - n, "%s%s",
                          n ? ", " : "required entries never exercised: ", name);
  }
  res->why[0] = 0;
  if (n) {
    char text[1024];
    snprintf(text, sizeof text, "%s%s%.400s%s", never, ok && graph.why[0] ? " (the backend " : "",
             ok ? graph.why : "", ok && graph.why[0] ? ")" : "");
    append(res->why, sizeof res->why, text);
  }
  if (!ok) {
    char text[640];
    snprintf(text, sizeof text, "the one-node graph: %.600s", graph.why);
    append(res->why, sizeof res->why, text);
  }
  if (sub_failed[0]) append(res->why, sizeof res->why, sub_failed);
  return res->why[0] ? CONFORM_FAIL : CONFORM_PASS;
}

/* ---- the source --------------------------------------------------------------- */

static alloy_error *abi_list(conform_source *src, const conform_options *o, conform_suite *suite) {
  /* The plugin table is what these test: meta has none. They move bytes,
   * so they have no dtype and count toward no op set but the graph level. */
  if (!conform_wants_source(o, "abi") || o->replay || o->set || o->dtype ||
      (o->backend && !strcmp(o->backend, "meta")))
    return NULL;
  for (long i = 0; i < ABI_NTESTS; i++) {
    if (o->ops_glob && fnmatch(o->ops_glob, test_names[i], 0)) continue;
    /* The optional 1.2 and 1.3 entries count toward no level: a plugin without
     * them, or whose device pointers the suite cannot make (abi.import on
     * a device that is not host-visible), must still reach "models". When
     * they are there, they must be right: a failure fails the run. */
    bool optional = i == ABI_EVENTS || i == ABI_HOST_BUFFERS || i == ABI_IMPORT || i == ABI_STREAMS;
    conform_test t = {.source = src, .index = i, .op = test_names[i],
                      .set = optional ? 0u : CONFORM_SET_GRAPH};
    snprintf(t.variant, sizeof t.variant, "%s", test_variants[i]);
    if (!conform_suite_add(suite, &t))
      return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  }
  return NULL;
}

static conform_verdict abi_check(const conform_source *src, const conform_test *t,
                                 conform_env *env, conform_result *res) {
  (void)src;
  if (env->backend < 0) {
    snprintf(res->why, sizeof res->why, "ABI tests call a plugin table: no backend to call");
    return CONFORM_SKIP;
  }
  if (env->rt->backends[env->backend].num_devices <= 0) {
    snprintf(res->why, sizeof res->why, "the backend has no devices (device_count)");
    return CONFORM_SKIP;
  }
  if (t->index == ABI_ENTRIES) return run_entries(env, res);
  if (t->index < 0 || t->index >= ABI_ENTRIES) {
    snprintf(res->why, sizeof res->why, "no ABI test %ld", t->index);
    return CONFORM_FAIL;
  }
  abi_ctx c;
  ctx_open(&c, env, res);
  conform_verdict v = data_tests[t->index](&c);
  ctx_close(&c);
  return v;
}

static void abi_rerun(const conform_source *src, const conform_test *t, char *buf, size_t cap) {
  (void)src;
  snprintf(buf, cap, "--only abi --ops %s", t->op);
}

conform_source conform_abi_source(void) {
  return (conform_source){.name = "abi", .list = abi_list, .check = abi_check,
                          .rerun = abi_rerun};
}
