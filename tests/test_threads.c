/*
 * tests/test_threads.c: one compiled program (or mixture) run from many
 * threads at once (runtime.h's threading paragraph). Each thread runs 50
 * times on inputs of its own, and every output must equal, bit for bit,
 * what a single-threaded run of the same inputs gave on a runtime of its
 * own (so that the concurrent program compiles its specializations itself,
 * at the same time, rather than finding them in the compile cache). Built
 * under `make tsan` and `make asan` too: a race between the threads' runs
 * shows there even when the values come out right.
 *
 * Threads never call the harness's checks (it counts failures in a plain
 * static): each counts its own mismatches and the main thread checks them.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/graph.h"
#include "alloy/runtime.h"
#include "harness.h"
#include "testplugin.h"

enum { NTHREADS = 8, NRUNS = 50, MAXN = 64 * 32 };

static alloy_graph *parse(const char *air) {
  alloy_graph *g = NULL;
  CHECK_OK(alloy_air_parse(air, strlen(air), "test.air", &g));
  return g;
}

/* Where a test compiles: a program on ref or on devsim (the simulated
 * accelerator: its own memory, queues on worker threads), a mixture over
 * the example plugin and ref, or over devsim and ref. */
typedef enum { ON_REF, ON_DEVSIM, MIX_EXAMPLE, MIX_DEVSIM } where;

/* A runtime for w: *order gets the backends to compile on (1 for a
 * program, 2 for a mixture), ref_index ref's index. */
static alloy_runtime *open_for(where w, int order[2], int *ref_index) {
  alloy_runtime *rt = NULL;
  int first = -1;
  if (w == MIX_EXAMPLE) {
    rt = tp_open_example(&first);
  } else if (w == ON_REF) {
    CHECK_OK(alloy_runtime_open(NULL, &rt));
  } else {
    const char *dirs[1] = {tp_test_plugins_dir()};
    alloy_runtime_options o = {.struct_size = ALLOY_RUNTIME_OPTIONS_STRUCT_SIZE, .plugin_dirs = dirs,
                               .num_plugin_dirs = 1, .no_default_paths = true};
    CHECK_OK(alloy_runtime_open(&o, &rt));
    first = rt ? alloy_runtime_find_backend(rt, "devsim") : -1;
    if (rt && first < 0) harness_fail(__FILE__, __LINE__, "no backend devsim in %s", dirs[0]);
  }
  if (!rt) return NULL;
  *ref_index = alloy_runtime_find_backend(rt, "ref");
  order[0] = w == ON_REF ? *ref_index : first;
  order[1] = *ref_index;
  return rt;
}

static bool is_mixture(where w) { return w == MIX_EXAMPLE || w == MIX_DEVSIM; }

/* What one thread runs, and what it must get. */
typedef struct job {
  alloy_program *prog;     /* one of these two */
  alloy_mixture *mix;
  int in_backend;          /* run_tensors' input: ref's "device memory" (host
                            * memory), or -1 where the first backend's is
                            * not the test's to write (devsim) */
  int rank;
  int64_t sizes[2];        /* the input's sizes (the batch differs by thread) */
  int64_t out_sizes[2];
  float x[MAXN];
  float want[MAXN];        /* single-threaded result */
  float got[MAXN];         /* run_tensors writes here */
  int64_t n, nout;         /* elements of x and of the output */
  int failures;
  char first[256];         /* the first failure, said by the main thread */
} job;

static void job_fail(job *j, const char *what) {
  if (!j->failures++) snprintf(j->first, sizeof j->first, "%s", what);
}

static void job_fail_error(job *j, alloy_error *e) {
  char line[256];
  snprintf(line, sizeof line, "error: %s", alloy_error_message(e));
  job_fail(j, line);
  alloy_error_free(e);
}

static alloy_host_tensor host_of(job *j) {
  return (alloy_host_tensor){.struct_size = ALLOY_HOST_TENSOR_STRUCT_SIZE, .dtype = ALLOY_F32,
                             .rank = j->rank, .sizes = j->sizes, .data = j->x};
}

/* One run: odd runs through run_tensors (the input in ref's "device
 * memory", which is host memory, the output the caller's), even ones
 * through run (the output the executor's). */
static void job_run_once(job *j, int r) {
  alloy_host_tensor in = host_of(j), out = {.struct_size = ALLOY_HOST_TENSOR_STRUCT_SIZE};
  alloy_error *e;
  const float *y;
  if (r & 1) {
    alloy_run_tensor ti = {.struct_size = ALLOY_RUN_TENSOR_STRUCT_SIZE, .dtype = ALLOY_F32, .rank = j->rank,
                           .sizes = j->sizes, .data = j->x, .backend = j->in_backend};
    alloy_run_tensor to = {.struct_size = ALLOY_RUN_TENSOR_STRUCT_SIZE, .dtype = ALLOY_F32, .rank = j->rank,
                           .sizes = j->out_sizes, .data = j->got, .backend = -1};
    memset(j->got, 0, sizeof j->got);
    e = j->prog ? alloy_program_run_tensors(j->prog, &ti, 1, &to, 1)
                : alloy_mixture_run_tensors(j->mix, &ti, 1, &to, 1);
    y = j->got;
  } else {
    e = j->prog ? alloy_program_run(j->prog, &in, 1, &out, 1) : alloy_mixture_run(j->mix, &in, 1, &out, 1);
    y = out.data;
    if (!e && (out.rank != j->rank || out.sizes[0] != j->out_sizes[0])) job_fail(j, "output sizes");
  }
  if (e) return job_fail_error(j, e);
  if (memcmp(y, j->want, sizeof(float) * (size_t)j->nout))
    job_fail(j, "output differs from the single-threaded run");
}

static void *job_main(void *arg) {
  job *j = arg;
  for (int r = 0; r < NRUNS; r++) job_run_once(j, r);
  return NULL;
}

/* Fills thread t's input (batch rows by thread when symbolic). */
static void job_init(job *j, int t, int64_t rows, int64_t cols, int64_t out_rows) {
  memset(j, 0, sizeof *j);
  j->rank = 2;
  j->sizes[0] = rows, j->sizes[1] = cols;
  j->out_sizes[0] = out_rows, j->out_sizes[1] = cols;
  j->n = rows * cols;
  j->nout = out_rows * cols;
  for (int64_t i = 0; i < j->n; i++) j->x[i] = (float)((i * 7 + t * 13) % 23) * 0.25f - 2.5f;
}

/* The single-threaded result of j's input on graph g compiled alone on a
 * runtime of its own. */
static void job_expect(job *j, const alloy_graph *g, where w) {
  int order[2], ref;
  alloy_runtime *rt = open_for(w, order, &ref);
  REQUIRE(rt);
  alloy_host_tensor in = host_of(j), out = {.struct_size = ALLOY_HOST_TENSOR_STRUCT_SIZE};
  if (is_mixture(w)) {
    alloy_program_options po = {.struct_size = ALLOY_PROGRAM_OPTIONS_STRUCT_SIZE, .partition_launch_s = -1,
                                .link_bytes_per_s = -1};
    alloy_mixture *m = NULL;
    CHECK_OK(alloy_mixture_compile(rt, order, 2, g, &po, &m));
    if (m) CHECK_OK(alloy_mixture_run(m, &in, 1, &out, 1));
    if (m && out.data) memcpy(j->want, out.data, sizeof(float) * (size_t)j->nout);
    alloy_mixture_release(m);
  } else {
    alloy_program *p = NULL;
    CHECK_OK(alloy_program_compile(rt, order[0], g, &p));
    if (p) CHECK_OK(alloy_program_run(p, &in, 1, &out, 1));
    if (p && out.data) memcpy(j->want, out.data, sizeof(float) * (size_t)j->nout);
    alloy_program_release(p);
  }
  alloy_runtime_close(rt);
}

/* Runs every job on a thread of its own at once, and checks them. */
static void run_jobs(job *jobs) {
  pthread_t th[NTHREADS];
  bool started[NTHREADS];
  for (int t = 0; t < NTHREADS; t++) started[t] = pthread_create(&th[t], NULL, job_main, &jobs[t]) == 0;
  for (int t = 0; t < NTHREADS; t++) {
    CHECK(started[t]);
    if (started[t]) pthread_join(th[t], NULL);
  }
  for (int t = 0; t < NTHREADS; t++) {
    if (jobs[t].failures) harness_fail(__FILE__, __LINE__, "thread %d: %d failures, the first: %s", t,
                                       jobs[t].failures, jobs[t].first);
  }
}

/* relu(x @ w + x) with w a constant of the graph: the same sizes on every
 * thread, so the threads share one compiled graph and each has its own
 * executor. */
static const char *STATIC_AIR =
    "input %x: f32[32, 32]\n"
    "%w = aten.full.default([32, 32], 0.125, dtype=f32)\n"
    "%m = aten.mm.default(%x, %w)\n"
    "%s = aten.add.Tensor(%m, %x)\n"
    "%y = aten.relu.default(%s)\n"
    "output %y\n";

/* The same with a symbolic batch: thread t runs batch 1 + 3 t, so the
 * program compiles eight specializations, from eight threads at once. */
static const char *SYMBOLIC_AIR =
    "sym s0 in [1, 64]\n"
    "input %x: f32[s0, 32]\n"
    "%w = aten.full.default([32, 32], 0.125, dtype=f32)\n"
    "%m = aten.mm.default(%x, %w)\n"
    "%s = aten.add.Tensor(%m, %x)\n"
    "%y = aten.relu.default(%s)\n"
    "output %y\n";

/* Elementwise over backends: the example runs add and neg, ref abs, so a
 * mixture has two partitions at least and values cross backends. */
static const char *MIXED_AIR =
    "input %x: f32[256, 4]\n"
    "%a = aten.add.Tensor(%x, %x)\n"
    "%b = aten.abs.default(%x)\n"
    "%c = aten.abs.default(%a)\n"
    "%y = aten.add.Tensor(%c, %b)\n"
    "output %y\n";
static const char *MIXED_SYMBOLIC_AIR =
    "sym s0 in [1, 512]\n"
    "input %x: f32[s0, 4]\n"
    "%a = aten.add.Tensor(%x, %x)\n"
    "%b = aten.abs.default(%x)\n"
    "%c = aten.abs.default(%a)\n"
    "%y = aten.add.Tensor(%c, %b)\n"
    "output %y\n";

/* devsim leaves neg to ref when $ALLOY_DEVSIM_SKIP says so
 * (tests/devsim/devsim.c). */
static const char *DEVSIM_MIXED_AIR =
    "sym s0 in [1, 512]\n"
    "input %x: f32[s0, 4]\n"
    "%a = aten.mul.Tensor(%x, %x)\n"
    "%n = aten.neg.default(%x)\n"
    "%s = aten.sub.Tensor(%a, %n)\n"
    "%y = aten.relu.default(%s)\n"
    "output %y\n";

/* Compiles air for w once and runs it from NTHREADS threads at once, NRUNS
 * runs each; thread t's batch is rows(t) when the graph is symbolic. */
static void from_threads(const char *air, where w, bool symbolic, int64_t fixed_rows, int64_t cols) {
  alloy_graph *g = parse(air);
  REQUIRE(g);
  static job jobs[NTHREADS];
  for (int t = 0; t < NTHREADS; t++) {
    int64_t rows = symbolic ? 1 + 7 * t : fixed_rows;
    job_init(&jobs[t], t, rows, cols, rows);
    job_expect(&jobs[t], g, w);
  }
  int order[2], ref;
  alloy_runtime *rt = open_for(w, order, &ref);
  REQUIRE(rt);
  alloy_program *p = NULL;
  alloy_mixture *m = NULL;
  alloy_program_options po = {.struct_size = ALLOY_PROGRAM_OPTIONS_STRUCT_SIZE, .partition_launch_s = -1,
                              .link_bytes_per_s = -1};
  if (is_mixture(w)) CHECK_OK(alloy_mixture_compile(rt, order, 2, g, &po, &m));
  else CHECK_OK(alloy_program_compile(rt, order[0], g, &p));
  REQUIRE(p || m);
  for (int t = 0; t < NTHREADS; t++) {
    jobs[t].prog = p, jobs[t].mix = m;
    jobs[t].in_backend = order[0] == ref ? ref : w == MIX_EXAMPLE ? order[0] : -1;
  }
  run_jobs(jobs);
  alloy_run_stats st = {.struct_size = ALLOY_RUN_STATS_STRUCT_SIZE};
  if (p) {
    CHECK_INT(alloy_program_num_specializations(p), symbolic ? NTHREADS : 0);
    alloy_program_stats(p, &st);
  } else {
    CHECK(alloy_mixture_num_partitions(m) >= 2);
    alloy_mixture_stats(m, &st);
    CHECK(st.cross_bytes > 0);
  }
  CHECK_INT(st.runs, NTHREADS * NRUNS);
  alloy_program_release(p);
  alloy_mixture_release(m);
  alloy_graph_free(g);
  alloy_runtime_close(rt);
}

TEST(threads_run_one_program_at_once) { from_threads(STATIC_AIR, ON_REF, false, 32, 32); }

TEST(threads_compile_specializations_of_one_program_at_once) {
  from_threads(SYMBOLIC_AIR, ON_REF, true, 0, 32);
}

TEST(threads_run_one_program_on_an_asynchronous_device_at_once) {
  from_threads(STATIC_AIR, ON_DEVSIM, false, 32, 32);
}

TEST(threads_run_one_mixture_at_once) { from_threads(MIXED_AIR, MIX_EXAMPLE, false, 256, 4); }

TEST(threads_plan_one_symbolic_mixture_at_once) { from_threads(MIXED_SYMBOLIC_AIR, MIX_EXAMPLE, true, 0, 4); }

TEST(threads_run_one_mixture_over_an_asynchronous_device_at_once) {
  setenv("ALLOY_DEVSIM_SKIP", "aten.neg.*", 1); /* before any thread starts */
  from_threads(DEVSIM_MIXED_AIR, MIX_DEVSIM, true, 0, 4);
  unsetenv("ALLOY_DEVSIM_SKIP");
}

/* An asynchronous run holds its starter's executor: that thread's next
 * run before the wait is refused, another thread's runs go on. */
typedef struct other_run {
  alloy_program *p;
  alloy_host_tensor in;
  alloy_error *e;
} other_run;

static void *other_main(void *arg) {
  other_run *o = arg;
  alloy_host_tensor out = {.struct_size = ALLOY_HOST_TENSOR_STRUCT_SIZE};
  o->e = alloy_program_run(o->p, &o->in, 1, &out, 1);
  return NULL;
}

TEST(threads_run_beside_an_asynchronous_run) {
  alloy_graph *g = parse(STATIC_AIR);
  REQUIRE(g);
  alloy_runtime *rt = NULL;
  CHECK_OK(alloy_runtime_open(NULL, &rt));
  REQUIRE(rt);
  alloy_program *p = NULL;
  CHECK_OK(alloy_program_compile(rt, alloy_runtime_find_backend(rt, "ref"), g, &p));
  REQUIRE(p);
  static job j;
  job_init(&j, 0, 32, 32, 32);
  alloy_host_tensor in = host_of(&j), out = {.struct_size = ALLOY_HOST_TENSOR_STRUCT_SIZE},
                    out2 = {.struct_size = ALLOY_HOST_TENSOR_STRUCT_SIZE};
  CHECK_OK(alloy_program_run_async(p, &in, 1, &out, 1));
  alloy_error *e = alloy_program_run(p, &in, 1, &out2, 1);
  CHECK(e && alloy_error_code_of(e) == ALLOY_ERR_UNAVAILABLE);
  alloy_error_free(e);
  e = alloy_program_run_async(p, &in, 1, &out2, 1);
  CHECK(e && alloy_error_code_of(e) == ALLOY_ERR_UNAVAILABLE);
  alloy_error_free(e);
  other_run o = {.p = p, .in = in};
  pthread_t th;
  REQUIRE(pthread_create(&th, NULL, other_main, &o) == 0);
  pthread_join(th, NULL);
  CHECK_OK(o.e);
  CHECK_OK(alloy_program_wait(p));
  REQUIRE(out.data && out.rank == 2 && out.sizes[0] == 32);
  static float first[32 * 32];
  memcpy(first, out.data, sizeof first);
  e = alloy_program_wait(p);
  CHECK(e && alloy_error_code_of(e) == ALLOY_ERR_INVALID_ARGUMENT);
  alloy_error_free(e);
  CHECK_OK(alloy_program_run(p, &in, 1, &out2, 1));
  CHECK(out2.data && !memcmp(first, out2.data, sizeof first));
  alloy_program_release(p);
  alloy_graph_free(g);
  alloy_runtime_close(rt);
}
