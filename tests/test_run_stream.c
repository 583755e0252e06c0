/*
 * tests/test_run_stream.c: runs ordered on a stream of the caller's
 * (alloy_program_run_on_stream, alloy_mixture_run_on_stream; exec.c's
 * tail). The backend is devsim (tests/devsim/), whose queues run their
 * commands on worker threads after random delays: the caller's "stream"
 * is a devsim queue the test makes, its device memory devsim buffers
 * written and read by copies queued there. A run that ignored the
 * stream's order would read inputs before they are written, or be read
 * before it wrote; a run that waited would show in the count of the host's
 * event_wait calls, which the runtime's entry counter keeps.
 */
#include <stdlib.h>
#include <string.h>

#include "alloy/graph.h"
#include "alloy/runtime.h"
#include "harness.h"
#include "sdk/src/runtime_internal.h"
#include "tests/devsim/devsim.h"
#include "tests/testplugin.h"

typedef struct app {
  alloy_runtime *rt;
  int devsim;
  const alloy_plugin_api *api; /* devsim's table, as the runtime calls it */
  alloy_backend *be;
  alloy_queue *stream;         /* the application's stream */
  alloy_ext_stream ext;        /* names it */
} app;

static bool app_open(app *a, const char *delay_us) {
  memset(a, 0, sizeof *a);
  const char *dirs[1] = {tp_test_plugins_dir()};
  alloy_runtime_options o = {.struct_size = sizeof o, .plugin_dirs = dirs, .num_plugin_dirs = 1,
                             .no_default_paths = true};
  CHECK_OK(alloy_runtime_open(&o, &a->rt));
  a->devsim = a->rt ? alloy_runtime_find_backend(a->rt, "devsim") : -1;
  if (a->devsim < 0) {
    harness_fail(__FILE__, __LINE__, "no backend devsim in %s", dirs[0]);
    return false;
  }
  CHECK_OK(runtime_count_entries(a->rt, a->devsim));
  CHECK_OK(alloy_runtime_set_backend_option(a->rt, a->devsim, "delay_us", delay_us));
  a->api = a->rt->backends[a->devsim].api;
  a->be = a->rt->backends[a->devsim].be;
  CHECK_OK(a->api->queue_create(a->be, 0, &a->stream));
  a->ext = (alloy_ext_stream){.base = {.struct_size = ALLOY_EXT_STREAM_STRUCT_SIZE, .type = ALLOY_EXT_CUDA_STREAM},
                              .stream = a->stream};
  return a->stream != NULL;
}

static void app_close(app *a) {
  if (a->stream) a->api->queue_release(a->be, a->stream);
  alloy_runtime_close(a->rt);
}

static int64_t calls(const app *a, const char *entry) { return runtime_entry_calls(a->rt, a->devsim, entry); }

static alloy_buffer *device_buffer(app *a, uint64_t bytes) {
  alloy_buffer *b = NULL;
  CHECK_OK(a->api->buffer_allocate(a->be, 0, bytes, &b));
  return b;
}

static void *device_pointer(alloy_buffer *b) { return ((const devsim_buffer_head *)(const void *)b)->device_pointer; }

/* Host memory into b, queued on the application's stream (src lent until
 * it runs: the caller keeps it). */
static void stream_write(app *a, alloy_buffer *b, const void *src, uint64_t bytes) {
  alloy_event *ev = NULL;
  CHECK_OK(a->api->buffer_copy_from_host(a->be, b, 0, src, bytes, a->stream, &ev));
  if (ev) a->api->event_release(a->be, ev);
}

/* b into host memory, queued on the stream after everything before it,
 * then waited for. */
static void stream_read(app *a, void *dst, alloy_buffer *b, uint64_t bytes) {
  alloy_event *ev = NULL;
  CHECK_OK(a->api->buffer_copy_to_host(a->be, dst, b, 0, bytes, a->stream, &ev));
  if (ev) {
    CHECK_OK(a->api->event_wait(a->be, ev));
    a->api->event_release(a->be, ev);
  }
}

static alloy_graph *parse(const char *air) {
  alloy_graph *g = NULL;
  CHECK_OK(alloy_air_parse(air, strlen(air), "test.air", &g));
  return g;
}

static alloy_run_tensor tensor(int backend, int rank, const int64_t *sizes, void *data) {
  return (alloy_run_tensor){.struct_size = ALLOY_RUN_TENSOR_STRUCT_SIZE, .dtype = ALLOY_F32, .rank = rank,
                            .sizes = sizes, .data = data, .backend = backend};
}

/* y = relu(x * w + x): x and y in devsim memory, w a weight (the caller
 * passes its data, which the executor keeps a copy of on devsim). */
static const char *const graph_text = "input %x: f32[6]\n"
                                      "input %w: f32[6] parameter \"w\"\n"
                                      "%m = aten.mul.Tensor(%x, %w)\n"
                                      "%s = aten.add.Tensor(%m, %x)\n"
                                      "%y = aten.relu.default(%s)\n"
                                      "output %y\n";

static void expect_y(const float *x, const float *w, const float *y, const char *what) {
  for (int i = 0; i < 6; i++) {
    float s = x[i] * w[i] + x[i], want = s > 0 ? s : 0;
    if (y[i] != want) {
      harness_fail(__FILE__, __LINE__, "%s: y[%d] = %g, want %g", what, i, (double)y[i], (double)want);
      return;
    }
  }
}

TEST(run_on_stream_is_queued_after_the_callers_work_and_before_its_next) {
  app a;
  if (!app_open(&a, "3000")) {
    app_close(&a);
    return;
  }
  alloy_graph *g = parse(graph_text);
  alloy_program *p = NULL;
  CHECK_OK(alloy_program_compile(a.rt, a.devsim, g, &p));
  REQUIRE(p);
  static const int64_t sz[1] = {6};
  static float x1[6] = {1, -2, 3, -4, 5, -6}, x2[6] = {-1, 2, -3, 4, -5, 6}, x3[6] = {7, 7, 7, 7, 7, 7};
  static const float w[6] = {0.5f, 1, 2, 0.25f, -3, 4};
  float y[6];
  alloy_buffer *xb = device_buffer(&a, sizeof x1), *yb = device_buffer(&a, sizeof y);
  REQUIRE(xb && yb);
  alloy_run_tensor in[2] = {tensor(a.devsim, 1, sz, device_pointer(xb)), tensor(-1, 1, sz, (void *)w)};
  alloy_run_tensor out[1] = {tensor(a.devsim, 1, sz, device_pointer(yb))};

  /* The first run copies the weight in from host memory: it waits. */
  stream_write(&a, xb, x1, sizeof x1);
  CHECK_OK(alloy_program_run_on_stream(p, in, 2, out, 1, a.devsim, &a.ext.base));
  stream_read(&a, y, yb, sizeof y);
  expect_y(x1, w, y, "first run");

  /* Then it is left on the stream: no event waited for, the input written
   * before it and the output read after it in the stream's order. */
  int64_t waits = calls(&a, "event_wait");
  stream_write(&a, xb, x2, sizeof x2);
  CHECK_OK(alloy_program_run_on_stream(p, in, 2, out, 1, a.devsim, &a.ext.base));
  CHECK_INT(calls(&a, "event_wait"), waits);
  stream_read(&a, y, yb, sizeof y);
  expect_y(x2, w, y, "second run");
  waits = calls(&a, "event_wait");
  stream_write(&a, xb, x3, sizeof x3);
  CHECK_OK(alloy_program_run_on_stream(p, in, 2, out, 1, a.devsim, &a.ext.base));
  stream_write(&a, xb, x1, sizeof x1); /* the next input, queued behind the run */
  CHECK_OK(alloy_program_run_on_stream(p, in, 2, out, 1, a.devsim, &a.ext.base));
  CHECK_INT(calls(&a, "event_wait"), waits);
  stream_read(&a, y, yb, sizeof y);
  expect_y(x1, w, y, "fourth run, queued behind the third");

  /* An output to host memory cannot stay on the device: the run waits for
   * the stream, runs, and has written it when the call returns. */
  stream_write(&a, xb, x2, sizeof x2);
  float host_y[6] = {0};
  out[0] = tensor(-1, 1, sz, host_y);
  CHECK_OK(alloy_program_run_on_stream(p, in, 2, out, 1, a.devsim, &a.ext.base));
  expect_y(x2, w, host_y, "output in host memory");

  /* An ordinary run after one left on the stream is ordered after it. */
  out[0] = tensor(a.devsim, 1, sz, device_pointer(yb));
  stream_write(&a, xb, x3, sizeof x3);
  CHECK_OK(alloy_program_run_on_stream(p, in, 2, out, 1, a.devsim, &a.ext.base));
  float x4[6] = {2, 2, 2, 2, 2, 2};
  in[0] = tensor(-1, 1, sz, x4);
  out[0] = tensor(-1, 1, sz, host_y);
  CHECK_OK(alloy_program_run_tensors(p, in, 2, out, 1));
  expect_y(x4, w, host_y, "ordinary run after a queued one");
  stream_read(&a, y, yb, sizeof y);
  expect_y(x3, w, y, "the queued run before it");

  /* Left in flight at release: the release waits for it. */
  in[0] = tensor(a.devsim, 1, sz, device_pointer(xb));
  out[0] = tensor(a.devsim, 1, sz, device_pointer(yb));
  stream_write(&a, xb, x2, sizeof x2);
  CHECK_OK(alloy_program_run_on_stream(p, in, 2, out, 1, a.devsim, &a.ext.base));
  alloy_program_release(p);
  stream_read(&a, y, yb, sizeof y);
  expect_y(x2, w, y, "run in flight at the program's release");
  CHECK_INT(calls(&a, "queue_import"), 7);
  /* The seven imports and the executor's own queue; the caller's stream
   * is never released (the read above ran on it after the release). */
  CHECK_INT(calls(&a, "queue_release"), 8);

  a.api->buffer_release(a.be, xb);
  a.api->buffer_release(a.be, yb);
  alloy_graph_free(g);
  app_close(&a);
}

TEST(run_on_stream_refuses_a_backend_without_streams_and_names_it) {
  app a;
  if (!app_open(&a, "0")) {
    app_close(&a);
    return;
  }
  alloy_graph *g = parse(graph_text);
  int ref = alloy_runtime_find_backend(a.rt, "ref");
  alloy_program *p = NULL;
  CHECK_OK(alloy_program_compile(a.rt, ref, g, &p));
  REQUIRE(p);
  static const int64_t sz[1] = {6};
  float x[6] = {1, 2, 3, 4, 5, 6}, w[6] = {1, 1, 1, 1, 1, 1}, y[6];
  alloy_run_tensor in[2] = {tensor(-1, 1, sz, x), tensor(-1, 1, sz, w)}, out[1] = {tensor(-1, 1, sz, y)};
  alloy_error *e = alloy_program_run_on_stream(p, in, 2, out, 1, ref, &a.ext.base);
  CHECK(e && alloy_error_code_of(e) == ALLOY_ERR_UNSUPPORTED);
  if (e) CHECK(strstr(alloy_error_message(e), "backend ref cannot run on a stream of the caller's") != NULL);
  alloy_error_free(e);
  e = alloy_program_run_on_stream(p, in, 2, out, 1, a.devsim, NULL);
  CHECK(e && strstr(alloy_error_message(e), "backend devsim: no stream given") != NULL);
  alloy_error_free(e);
  e = alloy_program_run_on_stream(p, in, 2, out, 1, 42, &a.ext.base);
  CHECK(e && strstr(alloy_error_message(e), "the stream's backend 42 is not an open backend") != NULL);
  alloy_error_free(e);
  /* A chain without devsim's stream: the plugin says so. */
  alloy_ext other = {.struct_size = ALLOY_EXT_STRUCT_SIZE, .type = ALLOY_EXT_HIP_STREAM};
  e = alloy_program_run_on_stream(p, in, 2, out, 1, a.devsim, &other);
  CHECK(e && strstr(alloy_error_message(e), "queue_import: the extension chain names no stream") != NULL);
  alloy_error_free(e);
  /* The program runs on ref with the stream of devsim: no partition on
   * it, so the host waits for the stream and runs as usual. */
  CHECK_OK(alloy_program_run_on_stream(p, in, 2, out, 1, a.devsim, &a.ext.base));
  expect_y(x, w, y, "a program on another backend than the stream's");
  alloy_program_release(p);
  alloy_graph_free(g);
  app_close(&a);
}

/* A mixture whose every partition is on the stream's backend stays on
 * it; one with a partition elsewhere waits and still gives the result. */
TEST(mixture_run_on_stream_stays_when_every_partition_is_on_the_streams_backend) {
  app a;
  if (!app_open(&a, "2000")) {
    app_close(&a);
    return;
  }
  alloy_graph *g = parse(graph_text);
  int ref = alloy_runtime_find_backend(a.rt, "ref");
  int both[2] = {a.devsim, ref};
  alloy_program_options po = {.struct_size = sizeof po, .partition_launch_s = -1, .link_bytes_per_s = -1};
  static const int64_t sz[1] = {6};
  static float x1[6] = {1, -2, 3, -4, 5, -6}, x2[6] = {3, 1, -1, 2, -2, 0.5f};
  static const float w[6] = {0.5f, 1, 2, 0.25f, -3, 4};
  float y[6];
  alloy_buffer *xb = device_buffer(&a, sizeof x1), *yb = device_buffer(&a, sizeof y);
  REQUIRE(xb && yb);
  alloy_run_tensor in[2] = {tensor(a.devsim, 1, sz, device_pointer(xb)), tensor(-1, 1, sz, (void *)w)};
  alloy_run_tensor out[1] = {tensor(a.devsim, 1, sz, device_pointer(yb))};
  for (int skip = 0; skip < 2; skip++) {
    if (skip) setenv("ALLOY_DEVSIM_SKIP", "aten.relu.*", 1); /* relu on ref: two backends */
    alloy_mixture *m = NULL;
    CHECK_OK(alloy_mixture_compile(a.rt, both, 2, g, &po, &m));
    unsetenv("ALLOY_DEVSIM_SKIP");
    REQUIRE(m);
    stream_write(&a, xb, x1, sizeof x1);
    CHECK_OK(alloy_mixture_run_on_stream(m, in, 2, out, 1, a.devsim, &a.ext.base)); /* the weight's copy */
    int64_t waits = calls(&a, "event_wait");
    stream_write(&a, xb, x2, sizeof x2);
    CHECK_OK(alloy_mixture_run_on_stream(m, in, 2, out, 1, a.devsim, &a.ext.base));
    if (skip) CHECK(calls(&a, "event_wait") > waits);
    else CHECK_INT(calls(&a, "event_wait"), waits);
    stream_read(&a, y, yb, sizeof y);
    expect_y(x2, w, y, skip ? "mixture over devsim and ref" : "mixture on devsim alone");
    alloy_mixture_release(m);
  }
  a.api->buffer_release(a.be, xb);
  a.api->buffer_release(a.be, yb);
  alloy_graph_free(g);
  app_close(&a);
}

/* An output of 1 MiB or more, to the memory the last run's went to, is
 * written by its partition straight into it: no copy after the execute.
 * A new address, and one whose memory an input of the run reads, are
 * copied to (still right). */
TEST(run_tensors_write_large_outputs_in_place) {
  app a;
  if (!app_open(&a, "200")) {
    app_close(&a);
    return;
  }
  enum { N = 1 << 18 }; /* floats: 1 MiB */
  alloy_graph *g = parse("input %x: f32[262144]\n"
                         "input %w: f32[262144] parameter \"w\"\n"
                         "%m = aten.mul.Tensor(%x, %w)\n"
                         "%s = aten.add.Tensor(%m, %x)\n"
                         "%y = aten.relu.default(%s)\n"
                         "output %y\n");
  alloy_program *p = NULL;
  CHECK_OK(alloy_program_compile(a.rt, a.devsim, g, &p));
  REQUIRE(p);
  static const int64_t sz[1] = {N};
  static float x[N], w[N], y[N], want[N];
  for (int i = 0; i < N; i++) {
    x[i] = (float)(i % 13) - 6, w[i] = (float)(i % 7) * 0.5f - 1;
    float t = x[i] * w[i] + x[i];
    want[i] = t > 0 ? t : 0;
  }
  alloy_buffer *xb = device_buffer(&a, sizeof x), *yb = device_buffer(&a, sizeof y);
  REQUIRE(xb && yb);
  stream_write(&a, xb, x, sizeof x);
  alloy_run_tensor in[2] = {tensor(a.devsim, 1, sz, device_pointer(xb)), tensor(-1, 1, sz, w)};
  alloy_run_tensor out[1] = {tensor(a.devsim, 1, sz, device_pointer(yb))};
  int64_t copies = calls(&a, "buffer_copy");
  CHECK_OK(alloy_program_run_on_stream(p, in, 2, out, 1, a.devsim, &a.ext.base));
  CHECK_INT(calls(&a, "buffer_copy"), copies + 1); /* a new address: copied to */
  CHECK_OK(alloy_program_run_on_stream(p, in, 2, out, 1, a.devsim, &a.ext.base));
  CHECK_INT(calls(&a, "buffer_copy"), copies + 1); /* the same again: the partition wrote y */
  stream_read(&a, y, yb, sizeof y);
  CHECK(!memcmp(y, want, sizeof y));
  /* y's memory is x's: the run reads x while it would write y, so y is
   * computed into the executor's memory and copied over x after, the
   * address repeated or not. */
  out[0] = tensor(a.devsim, 1, sz, device_pointer(xb));
  for (int r = 0; r < 2; r++) {
    stream_write(&a, xb, x, sizeof x); /* the last run wrote y over it */
    CHECK_OK(alloy_program_run_on_stream(p, in, 2, out, 1, a.devsim, &a.ext.base));
  }
  CHECK_INT(calls(&a, "buffer_copy"), copies + 3);
  stream_read(&a, y, xb, sizeof y);
  CHECK(!memcmp(y, want, sizeof y));
  /* Two outputs in turn (the caller keeps the last while it asks for the
   * next): each a new address, copied to every run. */
  out[0] = tensor(a.devsim, 1, sz, device_pointer(yb));
  stream_write(&a, xb, x, sizeof x);
  alloy_buffer *zb = device_buffer(&a, sizeof y);
  REQUIRE(zb);
  for (int r = 0; r < 4; r++) {
    out[0] = tensor(a.devsim, 1, sz, device_pointer(r % 2 ? zb : yb));
    CHECK_OK(alloy_program_run_on_stream(p, in, 2, out, 1, a.devsim, &a.ext.base));
  }
  CHECK_INT(calls(&a, "buffer_copy"), copies + 7);
  stream_read(&a, y, zb, sizeof y);
  CHECK(!memcmp(y, want, sizeof y));
  a.api->buffer_release(a.be, zb);
  alloy_program_release(p);
  a.api->buffer_release(a.be, xb);
  a.api->buffer_release(a.be, yb);
  alloy_graph_free(g);
  app_close(&a);
}
