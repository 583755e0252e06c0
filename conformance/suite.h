/*
 * conformance/suite.h: the tests of `alloy conform` and the driver that runs
 * them (suite.c).
 *
 * A suite is a list of tests drawn from sources: the op samples Alloy
 * generates (samples.c), the golden corpus PyTorch recorded (golden.c), the
 * graph-level tests (graphs.c) and a repro file given to --replay (repro.c).
 * The driver lists every test in the parent process, which never loads a
 * plugin, then hands them one at a time to worker processes (-j N of them),
 * each of which opens its own runtime, so that a plugin that crashes,
 * aborts or hangs costs one test and one worker, never the suite. Verdicts
 * come back over pipes; the driver prints failures, a progress line, the
 * summary table, the levels reached, and the --json and --junit reports.
 */
#ifndef ALLOY_CONFORM_SUITE_H
#define ALLOY_CONFORM_SUITE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "alloy/runtime.h"
#include "alloy/safetensors.h"

typedef enum conform_verdict {
  CONFORM_PASS = 0,
  CONFORM_FAIL = 1,    /* wrong values, an error, a crash or a timeout       */
  CONFORM_SKIP = 2,    /* could not run here (not claimed, ...): counted apart */
  CONFORM_INVALID = 3, /* the oracle rejects the generated sample: not a test */
} conform_verdict;

/* What a test counts toward (docs/conformance.md, "Levels"). */
enum {
  CONFORM_SET_PRIMS = 1u << 0, /* a sample of a prims op                */
  CONFORM_SET_CORE = 1u << 1,  /* a sample or case of a Core ATen op     */
  CONFORM_SET_OTHER = 1u << 2, /* a sample or case of any other ATen op  */
  CONFORM_SET_GRAPH = 1u << 3, /* a graph-level test or a model          */
};

/* How a suite runs. Strings are borrowed for the run. */
typedef struct conform_options {
  const char *backend;        /* the backend under test; "meta": shapes only */
  const char *golden_dir;     /* --golden: add the golden ops and models, or NULL */
  const char *ops_glob;       /* fnmatch pattern on op or test names, or NULL */
  const char *dtype;          /* only tests of this dtype ("float32"), or NULL */
  const char *set;            /* "core" or "noncore": only those, or NULL    */
  const char *known_failures; /* golden: "<case id> <op>  # reason" lines    */
  const char *only;           /* which sources: "samples", "golden", "graphs"
                               * (comma-separated), or NULL for all that apply */
  const char *replay;         /* --replay FILE.air: run that one repro       */
  const char *repro_dir;      /* --repro-dir: a repro per failure, or NULL   */
  bool repro_all;             /* --repro-all: a repro per sample that runs,
                               * passed too (ref's outputs for another oracle) */
  const char *json;           /* --json FILE: one JSON object per test       */
  const char *junit;          /* --junit FILE: JUnit XML                     */
  const char *summary;        /* --summary FILE: the whole op x dtype table  */
  uint64_t seed;              /* --seed: the generated samples' seed (0)     */
  long sample;                /* --sample K: only the op's sample K, or -1   */
  int jobs;                   /* -j N worker processes (1)                   */
  int decompose;              /* alloy_decompose_level forced before compile */
  bool no_fork;               /* run in this process (for debuggers)         */
  bool perf;                  /* --perf: time each op on the backend and ref */
  bool verbose;               /* also print passing tests                   */
  const char *backend_opts[16]; /* --backend-opt KEY=VALUE, set on the backend
                               * under test before it compiles (argv's)       */
  int nbackend_opts;
} conform_options;

/* The state a worker checks tests with: its own runtime. */
typedef struct conform_env {
  const conform_options *o;
  alloy_runtime *rt;  /* owned by the worker                                */
  int backend;        /* the backend under test, -1 for meta                */
  int ref;            /* the reference backend, the oracle                  */
  /* Set only when a test crashed or hung its worker and a fresh process
   * reruns it on ref alone (backend == ref) to write its repro: what
   * happened, for the repro's header. Sources then write the repro as for
   * a failure (conform_repro_wanted). */
  const char *repro_why;
} conform_env;

/* A test's outcome, filled in by its source's check. */
typedef struct conform_result {
  char why[1024];     /* the failure or skip reason, "" when passed       */
  double backend_s;   /* --perf: seconds per run on the backend, 0 if untimed */
  double ref_s;       /* --perf: seconds per run on ref                    */
  double bytes;       /* --perf: bytes read and written by one run         */
  double flops;       /* --perf: floating-point operations of one run       */
  double seconds;     /* the whole check, measured by the driver (JUnit)     */
} conform_result;

struct conform_source;
typedef struct conform_suite conform_suite;

/* A test as the parent lists it: small, and built before any worker runs. */
typedef struct conform_test {
  const struct conform_source *source;
  long index;        /* the source's number: golden case id, the op's sample
                      * number, the graph test's number                     */
  const char *op;    /* registry name, or the graph test's name (static, or
                      * owned by the source for the run)                     */
  char dtype[12];    /* "float32", or "" when the test has no single dtype */
  char variant[64];  /* what the sample varies: "transposed, edge values" */
  unsigned set;      /* CONFORM_SET_* bits                                  */
  long aux;          /* the source's own: a row of its private table       */
} conform_test;

/* A source of tests. list() runs in the parent, check() in a worker (or in
 * the parent with --no-fork); neither may keep a plugin loaded in the
 * parent. */
typedef struct conform_source {
  const char *name;  /* "samples", "golden", "graphs", "replay"            */
  void *self;        /* the source's state, owned by it                    */
  /* Appends the tests o selects with conform_suite_add; an error stops
   * the run (a missing corpus, a bad file). */
  alloy_error *(*list)(struct conform_source *src, const conform_options *o,
                       conform_suite *suite);
  conform_verdict (*check)(const struct conform_source *src, const conform_test *t,
                           conform_env *env, conform_result *res);
  /* One line telling how to rerun t alone ("--ops X --sample 17 --seed 0"),
   * or NULL for the default ("--ops <op>"). */
  void (*rerun)(const struct conform_source *src, const conform_test *t, char *buf, size_t cap);
  void (*close)(struct conform_source *src); /* frees self; may be NULL */
} conform_source;

/* Adds a copy of t to the suite; false when memory runs out. */
bool conform_suite_add(conform_suite *s, const conform_test *t);
/* A line printed before the run (what a source could not cover); copied. */
bool conform_suite_note(conform_suite *s, const char *text);

/* The suite's random numbers (samples.c): splitmix64 from *state, and a
 * double in [0, 1) from it. Pure functions of the state: reproducible. */
uint64_t conform_splitmix(uint64_t *state);
double conform_uniform(uint64_t *state);

/* The seconds a test may run before its worker is killed:
 * $ALLOY_CONFORM_TIMEOUT, 60 by default. */
double conform_timeout_s(void);

/* True when o->only is NULL or names this source. */
bool conform_wants_source(const conform_options *o, const char *name);

/* The sources (each file defines one). Their list() decides from o whether
 * they apply: golden needs golden_dir, replay needs replay. */
conform_source conform_samples_source(void);
conform_source conform_golden_source(void);
conform_source conform_graphs_source(void);
conform_source conform_abi_source(void);
conform_source conform_replay_source(void);

/* Runs the suite o describes, printing to out; returns the exit status
 * (0 all passed, 1 something failed, 2 the suite could not run). */
int conform_run(const conform_options *o, FILE *out);

/* ---- helpers the sources share (check.c) ------------------------------ */

/* A tensor owned by a case: host shape and data together. */
typedef struct conform_tensor {
  alloy_dtype dtype;
  int32_t rank;
  int64_t sizes[8];
  void *data; /* malloc'd, numel * size bytes */
} conform_tensor;

/* Compiles g on the backend under test (alone, or beside ref when mixture
 * is set), runs it on inputs and returns its outputs in got (data malloc'd,
 * freed with conform_tensors_free). CONFORM_SKIP with why when the backend
 * does not claim what the graph needs. *seconds, when not NULL, gets the
 * time of one run (repeated until 20 ms have passed) for --perf. */
conform_verdict conform_run_graph(conform_env *env, int backend, const alloy_graph *g,
                                  bool mixture, const alloy_host_tensor *inputs, int ninputs,
                                  conform_tensor *got, int nout, double *seconds, char *why,
                                  size_t cap);
void conform_tensors_free(conform_tensor *t, int n);

/* The env the oracle runs in: ref as it is, without the decomposition
 * --decompose forces on the backend, so that a wrong rule shows up as a
 * difference instead of running on both sides. o is the caller's scratch
 * copy of the options; the result borrows it. */
conform_env conform_oracle_env(const conform_env *env, conform_options *o);

/* Compares n outputs got with want (the oracle's or PyTorch's) under the
 * tolerances of op (compare.c). values false checks only dtype and shape
 * (random ops). self and dim, when self is not NULL, let an index output of
 * an op that may break ties its own way pick any equal value. On mismatch
 * why says which output and how. */
bool conform_outputs_match(const char *op, const conform_tensor *got, const conform_tensor *want,
                           int n, bool values, const conform_tensor *self, int64_t dim,
                           char *why, size_t cap);
alloy_host_tensor conform_tensor_host(const conform_tensor *t);
alloy_st_entry conform_tensor_entry(const conform_tensor *t, const char *name);

/* For results that are sums of products: true when every element of got
 * is within atol + rtol * |want| + scale * |mag| of want, where mag holds
 * the same sums over the terms' absolute values. */
bool conform_within_bound(const char *op, const conform_tensor *got, const conform_tensor *want,
                          const conform_tensor *mag, double scale, char *why, size_t cap);

/* Whether a check that ended in v writes its repro: --repro-dir given, and
 * v a failure or the test rerun on ref after a crash (env->repro_why). */
bool conform_repro_wanted(const conform_env *env, conform_verdict v);

/* Writes a repro of a failed test to env->o->repro_dir: <name>.air (the
 * graph, with the test and the reason as comments) and <name>.safetensors
 * (its inputs as "input.<k>" and the expected outputs as "expected.<k>").
 * why is the failure ("" for a passed one, --repro-all); env->repro_why,
 * when set, replaces it. Returns the .air path in path (empty when no
 * repro was asked for or it could not be written). */
void conform_repro_write(const conform_env *env, const conform_test *t, const alloy_graph *g,
                         const alloy_host_tensor *inputs, int ninputs,
                         const conform_tensor *expected, int nexpected, const char *why,
                         char *path, size_t cap);
/* The .air path conform_repro_write gives t under o->repro_dir ("" without
 * one): the driver names a crashed test's repro with it. */
void conform_repro_path(const conform_options *o, const conform_test *t, char *path, size_t cap);

/* For a graph whose outputs on the backend differ from the expected ones
 * (a graph-level test, a golden model): finds the first node, in graph
 * order, whose outputs on the backend differ from ref's when it is given
 * ref's values of its operands (diverge.c), so that a mismatch at the end
 * of a model is pinned to the op that caused it. Appends to why what it
 * found ("; first diverging node 5 of 9: aten.gelu.default (%gelu): ...")
 * and, with --repro-dir, writes that node alone as a repro (its inputs and
 * ref's outputs) and names it. g is the graph as compiled (it may have
 * symbols: in gives their values); in are all of its inputs; mixture as the
 * test compiled it (beside ref). */
void conform_pin_divergence(conform_env *env, const conform_test *t, const alloy_graph *g,
                            const alloy_host_tensor *in, int nin, bool mixture, char *why,
                            size_t cap);

#endif
