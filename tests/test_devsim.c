/*
 * tests/test_devsim.c: the testing backend devsim (tests/devsim/devsim.c),
 * a simulated accelerator whose memory the host cannot see and whose
 * queues really run later. These tests pin what makes it useful to the
 * host runtime's tests: a read that does not wait for an event sees stale
 * data (deterministic with a long delay and a fixed seed), events order
 * work across queues, copies and tensors outside a buffer are refused
 * before they could fault, an overrun does fault (the guard page), only its
 * own pointers import, options and counters do what devsim.c says, and it
 * runs programs and mixtures through the runtime exactly as ref does.
 *
 * Most tests drive the plugin through the ABI itself, as the host would:
 * dlopen (RTLD_LOCAL), alloy_plugin_init with the runtime's host table. The
 * plugin is found like test_kernel_table.c finds its plugins:
 * $ALLOY_TEST_PLUGIN_DIR, $ALLOY_TEST_BUILD/tests/plugins, beside this
 * binary, else build/tests/plugins.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloy/error.h"
#include "alloy/graph.h"
#include "alloy/runtime.h"
#include "harness.h"
#include "sdk/src/host.h"
#include "tests/devsim/devsim.h"
#include "tests/testplugin.h"

/* ---- finding and driving devsim ---------------------------------------------- */

static const char *devsim_path(void) {
  static char path[3 * PATH_MAX];
  const char *env = getenv("ALLOY_TEST_PLUGIN_DIR");
  if (env && *env) {
    snprintf(path, sizeof path, "%s/liballoy-devsim.so", env);
    if (access(path, R_OK) == 0) return path;
  }
  const char *build = getenv("ALLOY_TEST_BUILD");
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (!(build && *build) && n > 0) {
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) *slash = '\0';
    snprintf(path, sizeof path, "%s/../tests/plugins/liballoy-devsim.so", exe);
    if (access(path, R_OK) == 0) return path;
  }
  snprintf(path, sizeof path, "%s/tests/plugins/liballoy-devsim.so", build && *build ? build : "build");
  return path;
}

typedef struct dsd {
  void *dl;
  const alloy_host_api *host;
  const alloy_plugin_api *api;
  alloy_backend *be;
} dsd;

static bool dsd_open(dsd *d) {
  memset(d, 0, sizeof *d);
  d->host = alloy_host_table();
  d->dl = dlopen(devsim_path(), RTLD_NOW | RTLD_LOCAL);
  if (!d->dl) {
    harness_fail(__FILE__, __LINE__, "dlopen %s: %s", devsim_path(), dlerror());
    return false;
  }
  alloy_plugin_entry_fn init = (alloy_plugin_entry_fn)dlsym(d->dl, ALLOY_PLUGIN_ENTRY);
  d->api = init ? init(d->host) : NULL;
  if (!d->api) {
    harness_fail(__FILE__, __LINE__, "devsim refused to load");
    return false;
  }
  CHECK_OK(d->api->backend_open(d->host, &d->be));
  return d->be != NULL;
}

static void dsd_close(dsd *d) {
  if (d->api && d->be) d->api->backend_close(d->be);
  if (d->dl) dlclose(d->dl);
  memset(d, 0, sizeof *d);
}

/* Opens devsim with a delay and a seed set through backend_set_option. */
static bool dsd_open_slow(dsd *d, const char *delay_us) {
  if (!dsd_open(d)) return false;
  CHECK_OK(d->api->backend_set_option(d->be, "delay_us", delay_us));
  CHECK_OK(d->api->backend_set_option(d->be, "seed", "7"));
  return true;
}

/* A buffer holding data (synchronously, on the default queue). */
static alloy_buffer *dsd_buffer(dsd *d, const void *data, uint64_t bytes) {
  alloy_buffer *b = NULL;
  CHECK_OK(d->api->buffer_allocate(d->be, 0, bytes, &b));
  if (b && data) CHECK_OK(d->api->buffer_copy_from_host(d->be, b, 0, data, bytes, NULL, NULL));
  return b;
}

static void dsd_read(dsd *d, alloy_buffer *b, void *out, uint64_t bytes) {
  CHECK_OK(d->api->buffer_copy_to_host(d->be, out, b, 0, bytes, NULL, NULL));
}

/* Waits for ev and releases it. */
static void dsd_wait(dsd *d, alloy_event *ev) {
  REQUIRE(ev);
  CHECK_OK(d->api->event_wait(d->be, ev));
  d->api->event_release(d->be, ev);
}

/* n commands at the head of q that do nothing but sleep their delay:
 * with a long delay, what follows on q runs long after anything enqueued
 * on another queue now. */
static void dsd_stall(dsd *d, alloy_queue *q, int n) {
  for (int i = 0; i < n; i++) {
    alloy_event *ev = NULL;
    CHECK_OK(d->api->event_record(d->be, q, &ev));
    if (ev) d->api->event_release(d->be, ev);
  }
}

/* ---- graphs ---------------------------------------------------------------------- */

static alloy_value *input_f32(alloy_graph *g, const char *name, int64_t n) {
  alloy_dim shape[1] = {alloy_dim_const(n)};
  alloy_value_type t = {.kind = ALLOY_VALUE_TENSOR, .dtype = ALLOY_F32, .rank = 1, .shape = shape};
  alloy_value *v = NULL;
  CHECK_OK(alloy_graph_add_input(g, name, &t, &v));
  return v;
}

static alloy_value *node1(alloy_graph *g, const char *op, alloy_value *a, alloy_value *b) {
  alloy_arg args[2] = {alloy_arg_value(a), alloy_arg_value(b)};
  alloy_node *n = NULL;
  if (!a) return NULL;
  CHECK_OK(alloy_graph_add_node(g, alloy_op_find(op), args, b ? 2 : 1, NULL, NULL, 0, NULL, &n));
  return n ? alloy_node_output(n, 0) : NULL;
}

/* y = neg(x), x: f32[n]. */
static alloy_graph *graph_neg(int64_t n) {
  alloy_graph *g = alloy_graph_new();
  alloy_value *y = node1(g, "aten.neg.default", input_f32(g, "x", n), NULL);
  if (y) CHECK_OK(alloy_graph_set_outputs(g, &y, 1));
  return g;
}

/* nz = nonzero(x), x: f32[n]: an output whose sizes depend on the data. */
static alloy_graph *graph_nonzero(int64_t n) {
  alloy_graph *g = alloy_graph_new();
  alloy_value *y = node1(g, "aten.nonzero.default", input_f32(g, "x", n), NULL);
  if (y) CHECK_OK(alloy_graph_set_outputs(g, &y, 1));
  return g;
}

static alloy_executable *dsd_compile(dsd *d, const alloy_graph *g) {
  int n = alloy_graph_num_nodes(g);
  bool claimed[8] = {false};
  double cost[8] = {0};
  alloy_claims claims = {.num_nodes = n, .claimed = claimed, .cost = cost};
  if (n > 8) return NULL;
  CHECK_OK(d->api->claim(d->be, g, &claims));
  for (int i = 0; i < n; i++) CHECK(claimed[i]);
  claims_release(&claims);
  alloy_compile_options opt = {.struct_size = ALLOY_COMPILE_OPTIONS_STRUCT_SIZE, .opt_level = 2};
  alloy_executable *exe = NULL;
  CHECK_OK(d->api->compile(d->be, g, &opt, &exe));
  return exe;
}

/* An execute of a one-input, one-output f32[n] graph: everything the
 * plugin may read until the execute completes lives here. */
typedef struct unary_call {
  int64_t in_size, in_stride, out_size, out_stride;
  alloy_tensor in, out;
  alloy_execute_args args;
} unary_call;

static alloy_error *unary_execute(dsd *d, alloy_executable *exe, unary_call *c, alloy_buffer *in,
                                  alloy_buffer *out, int64_t n, alloy_queue *q, alloy_event **done) {
  c->in_size = c->out_size = n;
  c->in_stride = c->out_stride = 1;
  c->in = (alloy_tensor){.struct_size = ALLOY_TENSOR_STRUCT_SIZE, .buffer = in, .dtype = ALLOY_F32,
                         .rank = 1, .sizes = &c->in_size, .strides = &c->in_stride};
  c->out = (alloy_tensor){.struct_size = ALLOY_TENSOR_STRUCT_SIZE, .buffer = out, .dtype = ALLOY_F32,
                          .rank = 1, .sizes = &c->out_size, .strides = &c->out_stride};
  c->args = (alloy_execute_args){.struct_size = ALLOY_EXECUTE_ARGS_STRUCT_SIZE, .inputs = &c->in,
                                 .num_inputs = 1, .outputs = &c->out, .num_outputs = 1,
                                 .queue = q, .done = done};
  return d->api->execute(d->be, exe, &c->args);
}

/* ---- the device ------------------------------------------------------------------- */

TEST(devsim_is_an_abi_1_3_accelerator_the_host_cannot_see_into) {
  setenv("ALLOY_DEVSIM_MEMORY", "1m", 1);
  dsd d;
  bool ok = dsd_open(&d);
  unsetenv("ALLOY_DEVSIM_MEMORY");
  if (!ok) {
    dsd_close(&d);
    return;
  }
  CHECK_STR(d.api->name, "devsim");
  CHECK_INT(d.api->abi_minor, ALLOY_ABI_MINOR);
  CHECK_INT(d.api->struct_size, ALLOY_PLUGIN_API_STRUCT_SIZE);
  CHECK_INT(d.api->device_count(d.be), 1);
  alloy_device_info info = {.struct_size = ALLOY_DEVICE_INFO_STRUCT_SIZE};
  CHECK_OK(d.api->device_info(d.be, 0, &info));
  CHECK_STR(info.name, "devsim0");
  CHECK_STR(info.arch, "devsim-1");
  CHECK_INT(info.kind, ALLOY_DEVICE_KIND_ACCELERATOR);
  CHECK_INT(info.memory_bytes, 1 << 20);
  CHECK_INT(info.free_memory_bytes, 1 << 20);
  CHECK_INT(info.capabilities, ALLOY_DEVICE_CAP_ASYNC | ALLOY_DEVICE_CAP_PINNED_HOST | ALLOY_DEVICE_CAP_IMPORT);
  CHECK(info.launch_s == 5e-6 && info.host_bytes_per_s == 20e9);
  /* A 1.0 host's struct stops after memory_bytes: nothing past it is written. */
  alloy_device_info old = {.struct_size = ALLOY_STRUCT_SIZE(alloy_device_info, memory_bytes),
                           .free_memory_bytes = 42, .launch_s = -1};
  CHECK_OK(d.api->device_info(d.be, 0, &old));
  CHECK(old.free_memory_bytes == 42 && old.arch == NULL && old.capabilities == 0 && old.launch_s == -1);

  alloy_buffer *a = dsd_buffer(&d, NULL, 600000);
  CHECK(a && d.api->buffer_host_pointer(d.be, a) == NULL);
  CHECK_OK(d.api->device_info(d.be, 0, &info));
  CHECK_INT(info.free_memory_bytes, (1 << 20) - 600000);
  alloy_buffer *b = NULL;
  alloy_error *e = d.api->buffer_allocate(d.be, 0, 600000, &b);
  CHECK(e && alloy_error_code_of(e) == ALLOY_ERR_UNAVAILABLE && b == NULL);
  alloy_error_free(e);
  e = d.api->buffer_allocate(d.be, 0, 2 << 20, &b);
  CHECK(e && alloy_error_code_of(e) == ALLOY_ERR_OUT_OF_MEMORY && b == NULL);
  alloy_error_free(e);
  e = d.api->buffer_allocate(d.be, 1, 16, &b);
  CHECK(e && alloy_error_code_of(e) == ALLOY_ERR_INVALID_ARGUMENT);
  alloy_error_free(e);
  /* Fresh memory is not zeroed: a host reading what it never wrote sees it. */
  unsigned char fresh[4] = {0};
  alloy_buffer *c = dsd_buffer(&d, NULL, 4);
  if (c) dsd_read(&d, c, fresh, 4);
  CHECK(fresh[0] == 0xA5 && fresh[3] == 0xA5);
  d.api->buffer_release(d.be, c);
  d.api->buffer_release(d.be, a);
  CHECK_OK(d.api->device_info(d.be, 0, &info));
  CHECK_INT(info.free_memory_bytes, 1 << 20);

  void *pinned = NULL;
  CHECK_OK(d.api->host_buffer_allocate(d.be, 100, &pinned));
  CHECK(pinned && (uintptr_t)pinned % (uintptr_t)sysconf(_SC_PAGESIZE) == 0);
  if (pinned) memset(pinned, 1, 100);
  d.api->host_buffer_release(d.be, pinned);
  dsd_close(&d);
}

/* ---- asynchrony: what a host that does not wait sees ------------------------------ */

/* The set-up the queue tests share: devsim slowed to delay_us, neg over 4
 * floats compiled, buffers x and y (holding x0 and y0 when given) and one
 * queue. false (after recording why) when any of it is missing. */
typedef struct neg_rig {
  dsd d;
  alloy_graph *g;
  alloy_executable *exe;
  alloy_buffer *bx, *by;
  alloy_queue *q;
} neg_rig;

static void rig_close(neg_rig *r) {
  if (r->q) r->d.api->queue_release(r->d.be, r->q);
  if (r->bx) r->d.api->buffer_release(r->d.be, r->bx);
  if (r->by) r->d.api->buffer_release(r->d.be, r->by);
  if (r->exe) r->d.api->executable_release(r->d.be, r->exe);
  dsd_close(&r->d);
  alloy_graph_free(r->g);
}

static bool rig_open(neg_rig *r, const char *delay_us, const float *x0, const float *y0) {
  memset(r, 0, sizeof *r);
  if (!dsd_open_slow(&r->d, delay_us)) {
    dsd_close(&r->d);
    return false;
  }
  r->g = graph_neg(4);
  r->exe = dsd_compile(&r->d, r->g);
  r->bx = dsd_buffer(&r->d, x0, 4 * sizeof(float));
  r->by = dsd_buffer(&r->d, y0, 4 * sizeof(float));
  CHECK_OK(r->d.api->queue_create(r->d.be, 0, &r->q));
  if (r->exe && r->bx && r->by && r->q) return true;
  harness_fail(__FILE__, __LINE__, "devsim: the neg rig is incomplete");
  rig_close(r);
  return false;
}

/* An execute enqueued behind a stalled queue has not run when a read on the
 * default queue (queue NULL) happens: that read sees the old contents.
 * After waiting for the execute's event, the same read sees the result. */
TEST(devsim_read_before_the_event_wait_sees_stale_data) {
  float x[4] = {1, 2, 3, 4}, old[4] = {9, 9, 9, 9}, got[4] = {0};
  neg_rig r;
  if (!rig_open(&r, "20000", x, old)) return;
  dsd *d = &r.d;
  alloy_executable *exe = r.exe;
  alloy_buffer *bx = r.bx, *by = r.by;
  alloy_queue *q = r.q;
  dsd_stall(d, q, 20);
  unary_call call;
  alloy_event *done = NULL;
  CHECK_OK(unary_execute(d, exe, &call, bx, by, 4, q, &done));
  CHECK(done != NULL);
  CHECK(!d->api->event_query(d->be, done));
  dsd_read(d, by, got, sizeof got); /* premature: no wait for done */
  CHECK(got[0] == 9 && got[3] == 9);
  dsd_wait(d, done);
  dsd_read(d, by, got, sizeof got);
  CHECK(got[0] == -1 && got[1] == -2 && got[2] == -3 && got[3] == -4);
  rig_close(&r);
}

/* A copy given a queue reads the host memory when the worker gets to it:
 * a host that reuses the memory before the copy's event gets the new
 * values on the device, not the ones it meant. */
TEST(devsim_queued_copy_reads_host_memory_when_it_runs) {
  dsd d;
  if (!dsd_open_slow(&d, "20000")) {
    dsd_close(&d);
    return;
  }
  alloy_buffer *b = dsd_buffer(&d, NULL, 16);
  alloy_queue *q = NULL;
  CHECK_OK(d.api->queue_create(d.be, 0, &q));
  REQUIRE(b && q);
  dsd_stall(&d, q, 10);
  int32_t src[4] = {1, 2, 3, 4}, got[4] = {0};
  alloy_event *ev = NULL;
  CHECK_OK(d.api->buffer_copy_from_host(d.be, b, 0, src, sizeof src, q, &ev));
  src[0] = 100; /* reused too early */
  dsd_wait(&d, ev);
  dsd_read(&d, b, got, sizeof got);
  CHECK_INT(got[0], 100);
  CHECK_INT(got[1], 2);
  /* And a queued read-back lands in host memory only at its event. */
  int32_t back[4] = {-1, -1, -1, -1};
  dsd_stall(&d, q, 10);
  CHECK_OK(d.api->buffer_copy_to_host(d.be, back, b, 0, sizeof back, q, &ev));
  CHECK_INT(back[0], -1);
  dsd_wait(&d, ev);
  CHECK_INT(back[0], 100);
  CHECK_INT(back[3], 4);
  d.api->queue_release(d.be, q);
  d.api->buffer_release(d.be, b);
  dsd_close(&d);
}

/* q1 writes a buffer late; q2 copies it on and reads it back. With
 * queue_wait_event on an event recorded on q1, q2 sees q1's data; without
 * it, q2 runs ahead and reads the old contents. */
TEST(devsim_queue_wait_event_orders_work_across_queues) {
  dsd d;
  if (!dsd_open_slow(&d, "10000")) {
    dsd_close(&d);
    return;
  }
  for (int wait = 1; wait >= 0; wait--) {
    int32_t zero[4] = {0}, data[4] = {5, 6, 7, 8}, got[4] = {-1, -1, -1, -1};
    alloy_buffer *a = dsd_buffer(&d, zero, sizeof zero), *b = dsd_buffer(&d, zero, sizeof zero);
    alloy_queue *q1 = NULL, *q2 = NULL;
    CHECK_OK(d.api->queue_create(d.be, 0, &q1));
    CHECK_OK(d.api->queue_create(d.be, 0, &q2));
    REQUIRE(a && b && q1 && q2);
    dsd_stall(&d, q1, 20);
    alloy_event *copied = NULL, *recorded = NULL, *moved = NULL, *read = NULL;
    CHECK_OK(d.api->buffer_copy_from_host(d.be, a, 0, data, sizeof data, q1, &copied));
    CHECK_OK(d.api->event_record(d.be, q1, &recorded));
    REQUIRE(recorded);
    if (wait) CHECK_OK(d.api->queue_wait_event(d.be, q2, recorded));
    /* The host may let go of the event at once: the wait holds it. */
    d.api->event_release(d.be, recorded);
    CHECK_OK(d.api->buffer_copy(d.be, b, 0, a, 0, sizeof data, q2, &moved));
    CHECK_OK(d.api->buffer_copy_to_host(d.be, got, b, 0, sizeof got, q2, &read));
    dsd_wait(&d, read);
    if (wait) CHECK(got[0] == 5 && got[3] == 8);
    else CHECK(got[0] == 0 && got[3] == 0);
    dsd_wait(&d, moved);
    dsd_wait(&d, copied);
    d.api->queue_release(d.be, q1);
    d.api->queue_release(d.be, q2);
    d.api->buffer_release(d.be, a);
    d.api->buffer_release(d.be, b);
  }
  dsd_close(&d);
}

/* A failure on a queue comes back from the command's own event, and from
 * the next event recorded on that queue (a host that waits only for the
 * record still learns of it), once. */
TEST(devsim_failed_execute_reports_through_its_event_and_the_next_record) {
  neg_rig r;
  if (!rig_open(&r, "100", NULL, NULL)) return;
  dsd *d = &r.d;
  alloy_executable *exe = r.exe;
  alloy_buffer *bx = r.bx, *by = r.by;
  alloy_queue *q = r.q;
  unary_call call;
  alloy_event *done = NULL, *rec = NULL, *rec2 = NULL;
  /* The graph wants f32: an i32 input is accepted at enqueue (its bytes
   * fit) and fails when it runs. */
  CHECK_OK(unary_execute(d, exe, &call, bx, by, 4, NULL, NULL));
  call.in.dtype = ALLOY_I32;
  call.args.queue = q;
  call.args.done = &done;
  CHECK_OK(d->api->execute(d->be, exe, &call.args));
  CHECK_OK(d->api->event_record(d->be, q, &rec));
  CHECK_OK(d->api->event_record(d->be, q, &rec2));
  REQUIRE(done && rec && rec2);
  for (int k = 0; k < 2; k++) { /* every wait makes the error anew */
    alloy_error *e = d->api->event_wait(d->be, done);
    CHECK(e && alloy_error_code_of(e) == ALLOY_ERR_TYPE);
    alloy_error_free(e);
  }
  CHECK(d->api->event_query(d->be, done));
  alloy_error *e = d->api->event_wait(d->be, rec);
  CHECK(e && alloy_error_code_of(e) == ALLOY_ERR_TYPE);
  alloy_error_free(e);
  CHECK_OK(d->api->event_wait(d->be, rec2));
  d->api->event_release(d->be, done);
  d->api->event_release(d->be, rec);
  d->api->event_release(d->be, rec2);
  /* Given no queue, the failure is the entry's own result. */
  call.args.queue = NULL;
  call.args.done = NULL;
  e = d->api->execute(d->be, exe, &call.args);
  CHECK(e && alloy_error_code_of(e) == ALLOY_ERR_TYPE);
  alloy_error_free(e);
  /* With a queue the completion event cannot be left out. */
  e = d->api->buffer_copy_from_host(d->be, bx, 0, &call, 4, q, NULL);
  CHECK(e && alloy_error_code_of(e) == ALLOY_ERR_INVALID_ARGUMENT);
  alloy_error_free(e);
  rig_close(&r);
}

/* execute's tensors are lent until completion: a host that reuses them
 * first (a stack array gone out of scope) fails the execute, by name,
 * instead of running it on whatever the memory holds by then. */
TEST(devsim_execute_fails_when_the_host_changes_lent_tensors_early) {
  neg_rig r;
  if (!rig_open(&r, "20000", NULL, NULL)) return;
  dsd *d = &r.d;
  alloy_executable *exe = r.exe;
  alloy_buffer *bx = r.bx, *by = r.by;
  alloy_queue *q = r.q;
  for (int what = 0; what < 2; what++) {
    dsd_stall(d, q, 10);
    unary_call call;
    alloy_event *done = NULL;
    CHECK_OK(unary_execute(d, exe, &call, bx, by, 4, q, &done));
    REQUIRE(done);
    if (what == 0) call.out.offset = 4; /* the struct itself reused */
    else call.in_size = 2;              /* the sizes array reused */
    alloy_error *e = d->api->event_wait(d->be, done);
    CHECK(e && alloy_error_code_of(e) == ALLOY_ERR_INVALID_ARGUMENT);
    if (e) CHECK(strstr(alloy_error_message(e), what == 0 ? "changed output 0" : "changed input 0"));
    alloy_error_free(e);
    d->api->event_release(d->be, done);
  }
  rig_close(&r);
}

/* Events the host lets go of before they are signalled, work left on a
 * queue, and objects the host never releases: backend_close runs and frees
 * it all (ASan's leak check and TSan watch this one). */
TEST(devsim_releases_early_events_and_leftover_objects_safely) {
  dsd d;
  if (!dsd_open_slow(&d, "2000")) {
    dsd_close(&d);
    return;
  }
  alloy_graph *g = graph_neg(4);
  alloy_executable *exe = dsd_compile(&d, g);
  float x[4] = {1, 2, 3, 4};
  alloy_buffer *bx = dsd_buffer(&d, x, sizeof x), *by = dsd_buffer(&d, NULL, 16);
  alloy_queue *q = NULL;
  CHECK_OK(d.api->queue_create(d.be, 0, &q));
  REQUIRE(exe && bx && by && q);
  static unary_call calls[8]; /* lent until completion: outlives the test's frame */
  for (int i = 0; i < 8; i++) {
    alloy_event *done = NULL;
    CHECK_OK(unary_execute(&d, exe, &calls[i], bx, by, 4, q, &done));
    if (done) d.api->event_release(d.be, done);
  }
  alloy_event *kept = NULL;
  CHECK_OK(d.api->event_record(d.be, q, &kept));
  void *pinned = NULL;
  CHECK_OK(d.api->host_buffer_allocate(d.be, 10, &pinned));
  /* A buffer released while queued work still uses it stays mapped until
   * that work is done. */
  d.api->buffer_release(d.be, bx);
  dsd_close(&d); /* runs the queue, then frees q, by, exe, kept, pinned */
  alloy_graph_free(g);
}

/* ---- ranges, guard pages, foreign handles ---------------------------------------- */

static void expect_invalid(alloy_error *e, const char *what) {
  if (!e) harness_fail(__FILE__, __LINE__, "%s was accepted", what);
  else if (alloy_error_code_of(e) != ALLOY_ERR_INVALID_ARGUMENT)
    harness_fail(__FILE__, __LINE__, "%s: %s", what, alloy_error_message(e));
  alloy_error_free(e);
}

TEST(devsim_refuses_copies_and_tensors_outside_a_buffer) {
  dsd d;
  if (!dsd_open(&d)) {
    dsd_close(&d);
    return;
  }
  char host[64] = {0};
  alloy_buffer *a = dsd_buffer(&d, NULL, 10), *b = dsd_buffer(&d, NULL, 10);
  REQUIRE(a && b);
  const alloy_plugin_api *api = d.api;
  expect_invalid(api->buffer_copy_from_host(d.be, a, 0, host, 11, NULL, NULL), "11 bytes into 10");
  expect_invalid(api->buffer_copy_from_host(d.be, a, 8, host, 3, NULL, NULL), "3 bytes at 8 of 10");
  expect_invalid(api->buffer_copy_from_host(d.be, a, 11, host, 0, NULL, NULL), "offset 11 of 10");
  expect_invalid(api->buffer_copy_to_host(d.be, host, a, UINT64_MAX, 2, NULL, NULL), "offset 2^64-1");
  expect_invalid(api->buffer_copy_to_host(d.be, host, a, 2, UINT64_MAX, NULL, NULL), "2^64-1 bytes");
  expect_invalid(api->buffer_copy(d.be, b, 5, a, 0, 6, NULL, NULL), "copy past the destination");
  expect_invalid(api->buffer_copy(d.be, b, 0, a, 5, 6, NULL, NULL), "copy past the source");
  /* Up to the last byte is fine, and so is an empty copy at the end. */
  memcpy(host, "0123456789", 10);
  CHECK_OK(api->buffer_copy_from_host(d.be, a, 0, host, 10, NULL, NULL));
  CHECK_OK(api->buffer_copy_from_host(d.be, a, 10, host, 0, NULL, NULL));
  CHECK_OK(api->buffer_copy(d.be, b, 0, a, 0, 10, NULL, NULL));
  char got[10] = {0};
  CHECK_OK(api->buffer_copy_to_host(d.be, got, b, 9, 1, NULL, NULL));
  CHECK(got[0] == '9');
  /* Something that is not a devsim buffer (a buffer of another backend). */
  devsim_buffer_head fake = {0};
  expect_invalid(api->buffer_copy_to_host(d.be, got, (alloy_buffer *)(void *)&fake, 0, 1, NULL, NULL),
                 "a foreign buffer");

  /* An execute whose tensor reaches past its buffer is refused at once. */
  alloy_graph *g = graph_neg(4);
  alloy_executable *exe = dsd_compile(&d, g);
  alloy_buffer *x = dsd_buffer(&d, NULL, 16), *y = dsd_buffer(&d, NULL, 16);
  REQUIRE(exe && x && y);
  unary_call call;
  CHECK_OK(unary_execute(&d, exe, &call, x, y, 4, NULL, NULL));
  call.out.offset = 4;
  expect_invalid(api->execute(d.be, exe, &call.args), "an output 4 bytes past its buffer's start");
  call.out.offset = 0;
  call.in_stride = 2;
  expect_invalid(api->execute(d.be, exe, &call.args), "an input strided past its buffer");
  call.in_stride = -1;
  expect_invalid(api->execute(d.be, exe, &call.args), "an input strided before its buffer");
  call.in_stride = 1;
  call.in.buffer = NULL;
  expect_invalid(api->execute(d.be, exe, &call.args), "an input without a buffer");
  api->executable_release(d.be, exe);
  alloy_graph_free(g);
  api->buffer_release(d.be, x);
  api->buffer_release(d.be, y);
  api->buffer_release(d.be, a);
  api->buffer_release(d.be, b);
  dsd_close(&d);
}

/* The data ends where the trailing guard page begins (after rounding up to
 * 64 bytes): the last rounded byte is readable, the next one faults. */
TEST(devsim_overrun_past_a_buffer_faults_on_its_guard_page) {
  dsd d;
  if (!dsd_open(&d)) {
    dsd_close(&d);
    return;
  }
  alloy_buffer *b = dsd_buffer(&d, NULL, 100);
  REQUIRE(b);
  const devsim_buffer_head *head = (const devsim_buffer_head *)(const void *)b;
  CHECK(head->magic == DEVSIM_BUFFER_MAGIC);
  volatile const char *end = (const char *)head->device_pointer + 128;
  CHECK_INT((uintptr_t)head->device_pointer % 64, 0);
  CHECK_INT((uintptr_t)end % (uintptr_t)sysconf(_SC_PAGESIZE), 0);
  CHECK((unsigned char)end[-1] == 0xA5);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, 2); /* a sanitizer's SEGV report is expected */
    (void)end[0];
    _exit(0);
  }
  int status = 0;
  REQUIRE(pid > 0 && waitpid(pid, &status, 0) == pid);
  bool faulted = (WIFSIGNALED(status) && (WTERMSIG(status) == SIGSEGV || WTERMSIG(status) == SIGBUS)) ||
                 (WIFEXITED(status) && WEXITSTATUS(status) != 0);
  if (!faulted) harness_fail(__FILE__, __LINE__, "reading past the buffer did not fault (status %d)", status);
  d.api->buffer_release(d.be, b);
  dsd_close(&d);
}

/* Only the data start of a live devsim buffer imports; the import shares
 * its memory, and releasing it leaves the memory to its owner. */
TEST(devsim_imports_only_its_own_live_device_pointers) {
  dsd d;
  if (!dsd_open(&d)) {
    dsd_close(&d);
    return;
  }
  const alloy_plugin_api *api = d.api;
  int32_t data[4] = {1, 2, 3, 4}, got[4] = {0};
  alloy_buffer *owner = dsd_buffer(&d, data, sizeof data), *imp = NULL;
  REQUIRE(owner);
  char *ptr = ((const devsim_buffer_head *)(const void *)owner)->device_pointer;
  alloy_error *e = api->buffer_import(d.be, 0, data, 16, NULL, &imp);
  CHECK(e && imp == NULL);
  if (e) {
    char want[64];
    snprintf(want, sizeof want, "%p", (void *)data);
    CHECK(strstr(alloy_error_message(e), want) != NULL);
  }
  expect_invalid(e, "a host pointer");
  expect_invalid(api->buffer_import(d.be, 0, ptr + 4, 4, NULL, &imp), "a pointer inside a buffer");
  expect_invalid(api->buffer_import(d.be, 0, ptr, 17, NULL, &imp), "more bytes than the buffer has");
  expect_invalid(api->buffer_import(d.be, 1, ptr, 16, NULL, &imp), "device 1");
  CHECK(imp == NULL);
  CHECK_OK(api->buffer_import(d.be, 0, ptr, 8, NULL, &imp));
  REQUIRE(imp);
  expect_invalid(api->buffer_copy_from_host(d.be, imp, 4, data, 8, NULL, NULL),
                 "a copy past the imported size");
  int32_t two[2] = {20, 30};
  CHECK_OK(api->buffer_copy_from_host(d.be, imp, 0, two, sizeof two, NULL, NULL));
  api->buffer_release(d.be, imp);
  dsd_read(&d, owner, got, sizeof got);
  CHECK(got[0] == 20 && got[1] == 30 && got[2] == 3 && got[3] == 4);
  api->buffer_release(d.be, owner);
  expect_invalid(api->buffer_import(d.be, 0, ptr, 16, NULL, &imp), "a released buffer's pointer");
  dsd_close(&d);
}

/* ---- options, counters ------------------------------------------------------------ */

TEST(devsim_takes_delay_and_seed_options_and_names_unknown_ones) {
  dsd d;
  if (!dsd_open(&d)) {
    dsd_close(&d);
    return;
  }
  const alloy_plugin_api *api = d.api;
  CHECK_OK(api->backend_set_option(d.be, "delay_us", "0"));
  CHECK_OK(api->backend_set_option(d.be, "seed", "123456789"));
  alloy_error *e = api->backend_set_option(d.be, "colour", "blue");
  CHECK(e && alloy_error_code_of(e) == ALLOY_ERR_NOT_FOUND && strstr(alloy_error_message(e), "colour"));
  alloy_error_free(e);
  e = api->backend_set_option(d.be, "delay_us", "soon");
  CHECK(e && alloy_error_code_of(e) == ALLOY_ERR_INVALID_ARGUMENT && strstr(alloy_error_message(e), "soon"));
  alloy_error_free(e);
  e = api->backend_set_option(d.be, "seed", "-1");
  CHECK(e && alloy_error_code_of(e) == ALLOY_ERR_INVALID_ARGUMENT);
  alloy_error_free(e);
  /* Compile options carry the same keys; an unknown one fails the compile. */
  alloy_graph *g = graph_neg(2);
  alloy_option opts[1] = {{"speed", "11"}};
  alloy_compile_options co = {.struct_size = ALLOY_COMPILE_OPTIONS_STRUCT_SIZE, .options = opts,
                              .num_options = 1};
  alloy_executable *exe = NULL;
  e = api->compile(d.be, g, &co, &exe);
  CHECK(e && alloy_error_code_of(e) == ALLOY_ERR_NOT_FOUND && exe == NULL);
  alloy_error_free(e);
  opts[0] = (alloy_option){"delay_us", "1"};
  CHECK_OK(api->compile(d.be, g, &co, &exe));
  api->executable_release(d.be, exe);
  alloy_graph_free(g);
  dsd_close(&d);
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  static char buf[8192];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

TEST(devsim_appends_its_counters_line_to_the_stats_file) {
  char path[] = "/tmp/alloy-devsim-stats-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  setenv("ALLOY_DEVSIM_STATS", path, 1);
  for (int round = 0; round < 2; round++) {
    dsd d;
    if (!dsd_open(&d)) {
      dsd_close(&d);
      break;
    }
    alloy_graph *g = graph_neg(4);
    alloy_executable *exe = dsd_compile(&d, g);
    float x[4] = {1, 2, 3, 4}, y[4] = {0};
    alloy_buffer *bx = dsd_buffer(&d, x, sizeof x), *by = dsd_buffer(&d, NULL, 16);
    alloy_buffer *bz = dsd_buffer(&d, NULL, 16);
    unary_call call;
    if (exe && bx && by) CHECK_OK(unary_execute(&d, exe, &call, bx, by, 4, NULL, NULL));
    CHECK_OK(d.api->buffer_copy(d.be, bz, 0, by, 0, 8, NULL, NULL));
    dsd_read(&d, by, y, sizeof y);
    CHECK(y[0] == -1 && y[3] == -4);
    d.api->executable_release(d.be, exe);
    d.api->buffer_release(d.be, bx);
    d.api->buffer_release(d.be, by);
    d.api->buffer_release(d.be, bz);
    dsd_close(&d);
    alloy_graph_free(g);
  }
  unsetenv("ALLOY_DEVSIM_STATS");
  const char *text = read_file(path);
  REQUIRE(text);
  int lines = 0;
  for (const char *p = text; (p = strstr(p, "devsim calls ")); p++) lines++;
  CHECK_INT(lines, 2);
  const char *want[] = {"devsim calls backend_open=1 ", " execute=1 ", " copy_from_host=1 ",
                        " copy_to_host=1 ", " copy=1 ", " buffer_allocate=3 ", " claim=1 ",
                        " compile=1 ", " queue_create=0 ", " allocations=3 ", " executes=1 ",
                        " bytes_h2d=16 ", " bytes_d2h=16 ", " bytes_d2d=8 ", " peak_bytes=48\n"};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++)
    if (!strstr(text, want[i])) harness_fail(__FILE__, __LINE__, "no \"%s\" in: %s", want[i], text);
  unlink(path);
}

/* ---- outputs sized by the data, and threads ------------------------------------------ */

TEST(devsim_data_dependent_output_becomes_a_devsim_buffer) {
  dsd d;
  if (!dsd_open_slow(&d, "1000")) {
    dsd_close(&d);
    return;
  }
  alloy_graph *g = graph_nonzero(6);
  alloy_executable *exe = dsd_compile(&d, g);
  float x[6] = {0, 5, 0, 0, 7, 1};
  alloy_buffer *bx = dsd_buffer(&d, x, sizeof x);
  alloy_queue *q = NULL;
  CHECK_OK(d.api->queue_create(d.be, 0, &q));
  REQUIRE(exe && bx && q);
  for (int queued = 0; queued < 2; queued++) {
    int64_t xs = 6, xst = 1, ys[2] = {-1, 1}, yst[2] = {0, 0};
    alloy_tensor in = {.struct_size = ALLOY_TENSOR_STRUCT_SIZE, .buffer = bx, .dtype = ALLOY_F32,
                       .rank = 1, .sizes = &xs, .strides = &xst};
    alloy_tensor out = {.struct_size = ALLOY_TENSOR_STRUCT_SIZE, .buffer = NULL, .dtype = ALLOY_I64,
                        .rank = 2, .sizes = ys, .strides = yst};
    alloy_event *done = NULL;
    alloy_execute_args args = {.struct_size = ALLOY_EXECUTE_ARGS_STRUCT_SIZE, .inputs = &in,
                               .num_inputs = 1, .outputs = &out, .num_outputs = 1,
                               .queue = queued ? q : NULL, .done = &done};
    CHECK_OK(d.api->execute(d.be, exe, &args));
    /* Finished on return either way; with a queue, an event all the same. */
    CHECK(queued ? done != NULL : done == NULL);
    if (done) {
      CHECK(d.api->event_query(d.be, done));
      dsd_wait(&d, done);
    }
    REQUIRE(out.buffer);
    CHECK(d.api->buffer_host_pointer(d.be, out.buffer) == NULL);
    CHECK_INT(ys[0], 3);
    CHECK_INT(ys[1], 1);
    int64_t got[3] = {0};
    CHECK_OK(d.api->buffer_copy_to_host(d.be, got, out.buffer, out.offset, sizeof got, NULL, NULL));
    CHECK(got[0] == 1 && got[1] == 4 && got[2] == 5);
    d.api->buffer_release(d.be, out.buffer); /* the host owns it */
  }
  d.api->queue_release(d.be, q);
  d.api->buffer_release(d.be, bx);
  d.api->executable_release(d.be, exe);
  dsd_close(&d);
  alloy_graph_free(g);
}

typedef struct worker_arg {
  dsd *d;
  alloy_executable *exe;
  int seed, bad;
} worker_arg;

/* Copy in, execute, copy out, all on one queue of this thread's, waiting
 * only for the last event: queue order alone must give the right values. */
static void *worker_main(void *p) {
  worker_arg *w = p;
  const alloy_plugin_api *api = w->d->api;
  alloy_backend *be = w->d->be;
  alloy_queue *q = NULL;
  alloy_buffer *bx = NULL, *by = NULL;
  alloy_error *e = api->queue_create(be, 0, &q);
  if (!e) e = api->buffer_allocate(be, 0, 64, &bx);
  if (!e) e = api->buffer_allocate(be, 0, 64, &by);
  for (int it = 0; it < 40 && !e; it++) {
    float x[16], y[16];
    for (int i = 0; i < 16; i++) x[i] = (float)(w->seed * 1000 + it * 16 + i);
    unary_call call;
    alloy_event *ev[3] = {NULL, NULL, NULL};
    e = api->buffer_copy_from_host(be, bx, 0, x, sizeof x, q, &ev[0]);
    if (!e) e = unary_execute(w->d, w->exe, &call, bx, by, 16, q, &ev[1]);
    if (!e) e = api->buffer_copy_to_host(be, y, by, 0, sizeof y, q, &ev[2]);
    if (!e) e = api->event_wait(be, ev[2]);
    for (int k = 0; k < 3; k++)
      if (ev[k]) api->event_release(be, ev[k]);
    for (int i = 0; i < 16 && !e; i++) w->bad += y[i] != -x[i];
  }
  if (e) {
    w->bad++;
    alloy_error_free(e);
  }
  api->buffer_release(be, bx);
  api->buffer_release(be, by);
  api->queue_release(be, q);
  return NULL;
}

TEST(devsim_runs_queues_of_several_threads_at_once) {
  dsd d;
  if (!dsd_open_slow(&d, "200")) {
    dsd_close(&d);
    return;
  }
  alloy_graph *g = graph_neg(16);
  alloy_executable *exe = dsd_compile(&d, g);
  REQUIRE(exe);
  pthread_t th[3];
  worker_arg args[3];
  for (int t = 0; t < 3; t++) {
    args[t] = (worker_arg){.d = &d, .exe = exe, .seed = t + 1};
    CHECK(pthread_create(&th[t], NULL, worker_main, &args[t]) == 0);
  }
  for (int t = 0; t < 3; t++) {
    pthread_join(th[t], NULL);
    CHECK_INT(args[t].bad, 0);
  }
  d.api->executable_release(d.be, exe);
  dsd_close(&d);
  alloy_graph_free(g);
}

/* ---- through the runtime ---------------------------------------------------------- */

static alloy_runtime *open_test_plugins(void) {
  const char *dirs[1] = {tp_test_plugins_dir()};
  alloy_runtime_options o = {.struct_size = sizeof o, .plugin_dirs = dirs, .num_plugin_dirs = 1,
                             .no_default_paths = true};
  alloy_runtime *rt = NULL;
  CHECK_OK(alloy_runtime_open(&o, &rt));
  if (rt && alloy_runtime_find_backend(rt, "devsim") < 0)
    harness_fail(__FILE__, __LINE__, "no backend devsim in %s", dirs[0]);
  return rt;
}

/* out = relu(a * b - neg(a)) + nonzero-free ops: devsim and ref agree bit
 * for bit (the same kernels), as a program and as a mixture whose devsim
 * part leaves neg to ref. */
static alloy_graph *graph_mixed(void) {
  alloy_graph *g = alloy_graph_new();
  alloy_value *a = input_f32(g, "a", 5), *b = input_f32(g, "b", 5);
  alloy_value *m = node1(g, "aten.mul.Tensor", a, b);
  alloy_value *n = node1(g, "aten.neg.default", a, NULL);
  alloy_value *s = node1(g, "aten.sub.Tensor", m, n);
  alloy_value *r = node1(g, "aten.relu.default", s, NULL);
  if (r) CHECK_OK(alloy_graph_set_outputs(g, &r, 1));
  return g;
}

TEST(devsim_programs_and_mixtures_give_what_ref_gives) {
  alloy_runtime *rt = open_test_plugins();
  int devsim = rt ? alloy_runtime_find_backend(rt, "devsim") : -1;
  REQUIRE(devsim >= 0);
  int ref = alloy_runtime_find_backend(rt, "ref");
  alloy_backend_info info = {.struct_size = sizeof info};
  alloy_runtime_backend_info(rt, devsim, &info);
  CHECK(info.abi_major == 1 && info.abi_minor == ALLOY_ABI_MINOR);
  CHECK(strstr(info.devices, "devsim0") != NULL);
  alloy_graph *g = graph_mixed();
  float a[5] = {1, -2, 3, -4, 0.5f}, b[5] = {2, 2, -1, 0.25f, 8};
  int64_t sizes[1] = {5};
  alloy_host_tensor in[2] = {{sizeof in[0], ALLOY_F32, 1, sizes, a}, {sizeof in[1], ALLOY_F32, 1, sizes, b}};
  alloy_host_tensor want = {.struct_size = sizeof want}, got = {.struct_size = sizeof got};
  alloy_program *pr = NULL, *pd = NULL;
  CHECK_OK(alloy_program_compile(rt, ref, g, &pr));
  CHECK_OK(alloy_program_compile(rt, devsim, g, &pd));
  REQUIRE(pr && pd);
  CHECK_OK(alloy_program_run(pr, in, 2, &want, 1));
  CHECK_OK(alloy_program_run(pd, in, 2, &got, 1));
  CHECK(want.data && got.data && !memcmp(want.data, got.data, sizeof a));

  setenv("ALLOY_DEVSIM_SKIP", "aten.neg.*,aten.nothing", 1);
  int backends[2] = {devsim, ref};
  /* Free transfers and launches: half ref's cost then wins every node
   * devsim claims (with the default model, a launch of 5 us outweighs what
   * halving a 5-element op saves, and ref alone is cheapest). */
  alloy_program_options po = {.struct_size = sizeof po, .partition_launch_s = -1, .link_bytes_per_s = -1};
  alloy_mixture *m = NULL;
  alloy_host_tensor mixed = {.struct_size = sizeof mixed};
  CHECK_OK(alloy_mixture_compile(rt, backends, 2, g, &po, &m));
  if (m) CHECK_OK(alloy_mixture_run(m, in, 2, &mixed, 1));
  unsetenv("ALLOY_DEVSIM_SKIP");
  CHECK(m && mixed.data && !memcmp(want.data, mixed.data, sizeof a));
  int on_devsim = 0, on_ref = 0;
  for (int i = 0; m && i < alloy_mixture_num_partitions(m); i++) {
    alloy_partition_info pi = {.struct_size = ALLOY_PARTITION_INFO_STRUCT_SIZE};
    alloy_mixture_partition_info(m, i, &pi);
    if (!strcmp(pi.backend, "devsim")) on_devsim += pi.num_nodes;
    else if (!strcmp(pi.backend, "ref")) on_ref += pi.num_nodes;
  }
  CHECK_INT(on_devsim, 3);
  CHECK_INT(on_ref, 1);
  alloy_mixture_release(m);
  alloy_program_release(pr);
  alloy_program_release(pd);

  /* An output sized by the data, through program_run (queue NULL). */
  alloy_graph *gz = graph_nonzero(4);
  float x[4] = {0, 3, 0, 1};
  alloy_host_tensor xin = {sizeof xin, ALLOY_F32, 1, (int64_t[1]){4}, x};
  alloy_host_tensor nz = {.struct_size = sizeof nz};
  alloy_program *pz = NULL;
  CHECK_OK(alloy_program_compile(rt, devsim, gz, &pz));
  if (pz) CHECK_OK(alloy_program_run(pz, &xin, 1, &nz, 1));
  CHECK(nz.data && nz.rank == 2 && nz.sizes[0] == 2 && nz.sizes[1] == 1);
  if (nz.data) CHECK(((int64_t *)nz.data)[0] == 1 && ((int64_t *)nz.data)[1] == 3);
  alloy_program_release(pz);
  alloy_graph_free(gz);
  alloy_graph_free(g);
  alloy_runtime_close(rt);
}

/* Half of what the kernel-table helper estimates (less than ref), and a
 * reason for every node $ALLOY_DEVSIM_SKIP leaves. */
TEST(devsim_claims_at_half_the_reference_cost_and_says_what_it_skips) {
  dsd d;
  if (!dsd_open(&d)) {
    dsd_close(&d);
    return;
  }
  alloy_graph *g = graph_mixed();
  int n = alloy_graph_num_nodes(g);
  REQUIRE(n == 4);
  const alloy_plugin_api *ref = alloy_ref_plugin_entry(d.host);
  alloy_backend *rbe = NULL;
  CHECK_OK(ref->backend_open(d.host, &rbe));
  bool rc[4] = {false}, dc[4] = {false};
  double rcost[4] = {0}, dcost[4] = {0};
  alloy_claims rcl = {.num_nodes = n, .claimed = rc, .cost = rcost};
  alloy_claims dcl = {.num_nodes = n, .claimed = dc, .cost = dcost};
  CHECK_OK(ref->claim(rbe, g, &rcl));
  setenv("ALLOY_DEVSIM_SKIP", "aten.neg.default", 1);
  CHECK_OK(d.api->claim(d.be, g, &dcl));
  unsetenv("ALLOY_DEVSIM_SKIP");
  for (int i = 0; i < n; i++) {
    const char *op = alloy_op_name(alloy_node_op(alloy_graph_node(g, i)));
    bool neg = !strcmp(op, "aten.neg.default");
    CHECK(rc[i]);
    CHECK(dc[i] == !neg);
    if (!neg) CHECK(dcost[i] == rcost[i] / 2 && dcost[i] > 0);
    const alloy_host_api *h = d.host;
    if (neg && ALLOY_HAS_FIELD(h, alloy_host_api, claims_reject) && h->claims_reject)
      CHECK(dcl.reason && dcl.reason[i] && strstr(dcl.reason[i], "ALLOY_DEVSIM_SKIP"));
  }
  claims_release(&rcl);
  claims_release(&dcl);
  ref->backend_close(rbe);
  alloy_graph_free(g);
  dsd_close(&d);
}
