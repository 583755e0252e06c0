/*
 * alloy/runtime.h: the host side for applications: find and load backends
 * by name, compile a graph on one, run it on host tensors.
 *
 * A runtime owns the plugins it loaded (shared libraries found on the search
 * path, plus the reference backend built into the library) and every object
 * made through them; alloy_runtime_close releases all of it. Distinct
 * runtimes are independent.
 *
 * Threads (since 1.2.1): the calls that run what is compiled may be made
 * from many threads at once, on one program or mixture as on several:
 * alloy_program_run, _run_tensors, _run_on_stream, _run_async, _wait,
 * _prepare and _output_sizes, and their alloy_mixture_ twins. Each thread runs on an
 * executor of its own (its queues, arenas, output buffers and resident
 * copies of the weights on each backend), made on its first run of the
 * program and kept until the program's release; a specialization or plan
 * that a run needs is compiled under the program's lock, once, whichever
 * thread asks first. Every other call (open, close, compile, release,
 * options, stats, num_specializations, the mixture's partition info and
 * graph) comes from one thread at a time while no run of the runtime is
 * in flight.
 *
 * Search order for liballoy-<name>.so: each folder of $ALLOY_PLUGIN_PATH
 * (colon-separated), then ../lib/alloy/ next to the running program (the
 * build tree and an installed prefix both have it), then the extra folders
 * of the options. A file that fails to load, or is refused (another ABI
 * major, no entry symbol, a missing required entry, a name already taken),
 * is listed with its reason and never stops the others.
 */
#ifndef ALLOY_RUNTIME_H
#define ALLOY_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>

#include "alloy/graph.h"
#include "alloy/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct alloy_runtime alloy_runtime;
typedef struct alloy_program alloy_program;

/* Set by the application (struct_size: ALLOY_RUNTIME_OPTIONS_STRUCT_SIZE). */
typedef struct alloy_runtime_options {
  size_t struct_size;
  /* Extra folders searched after the standard ones (borrowed, may be
   * NULL); used by tests. */
  const char *const *plugin_dirs;
  int32_t num_plugin_dirs;
  /* Skip $ALLOY_PLUGIN_PATH and ../lib/alloy/ (tests that want only their
   * own folders). */
  bool no_default_paths;
  uint8_t reserved[3]; /* zero; makes the padding explicit, since 1.2 */
  /* since 1.2: open only these backends (names, case-insensitive; borrowed
   * for the call), besides the built-in reference backend: a file
   * liballoy-<name>.so whose <name> is not among them is not even loaded,
   * so a plugin that crashes on load cannot take down a run that does not
   * use it. NULL (or 0 names): every backend found, as `alloy backends`. */
  const char *const *only_backends;
  int32_t num_only_backends;
  int32_t reserved2;   /* zero */
} alloy_runtime_options;
#define ALLOY_RUNTIME_OPTIONS_STRUCT_SIZE ALLOY_STRUCT_SIZE(alloy_runtime_options, reserved2)

/* Loads every backend found. options may be NULL. Fails only when memory
 * runs out; refused plugins are reported by alloy_runtime_backend_info. */
alloy_error *alloy_runtime_open(const alloy_runtime_options *options,
                                alloy_runtime **out);
void alloy_runtime_close(alloy_runtime *rt); /* accepts NULL */

/* One row of `alloy backends`. Strings live as long as the runtime. The
 * caller sets struct_size (ALLOY_BACKEND_INFO_STRUCT_SIZE); the runtime
 * fills what it covers. */
typedef struct alloy_backend_info {
  size_t struct_size;
  const char *name;     /* the plugin's name, or the file's <name> when
                         * it was refused before its table could be read */
  const char *vendor;   /* "" when refused early                        */
  const char *version;  /* "" when refused early                        */
  uint32_t abi_major, abi_minor; /* the plugin's; 0 when unknown        */
  int32_t num_devices;
  const char *devices;  /* "cpu0 (cpu)", comma-separated                 */
  const char *path;     /* the file, or "(built in)"                    */
  bool ok;              /* loaded and usable                            */
  const char *status;   /* "ok", or "refused: <reason>"                 */
} alloy_backend_info;
#define ALLOY_BACKEND_INFO_STRUCT_SIZE ALLOY_STRUCT_SIZE(alloy_backend_info, status)

/* Every plugin found, usable or not, in priority order: ALLOY_BACKENDS
 * (comma-separated names, case-insensitive) first in its order, then the
 * others in search order, the reference backend "ref" last. */
int alloy_runtime_num_backends(const alloy_runtime *rt);
void alloy_runtime_backend_info(const alloy_runtime *rt, int i,
                                alloy_backend_info *info);
/* The index of the usable backend called name (case-insensitive), or -1. */
int alloy_runtime_find_backend(const alloy_runtime *rt, const char *name);

/* A tensor in host memory, row-major contiguous. An array element
 * (inputs, outputs, weights): frozen, it never grows (docs/abi.md). */
typedef struct alloy_host_tensor {
  size_t struct_size;   /* ALLOY_HOST_TENSOR_STRUCT_SIZE */
  alloy_dtype dtype;
  int32_t rank;
  const int64_t *sizes; /* rank entries */
  void *data;           /* numel * dtype size bytes */
} alloy_host_tensor;
#define ALLOY_HOST_TENSOR_STRUCT_SIZE ALLOY_STRUCT_SIZE(alloy_host_tensor, data)

/* How far the graph is decomposed before it is compiled. */
typedef enum alloy_decompose_level {
  ALLOY_DECOMPOSE_AUTO = 0, /* only what the backend does not claim        */
  ALLOY_DECOMPOSE_CORE = 1, /* every non-core op that has a rule, then AUTO */
  ALLOY_DECOMPOSE_PRIMS = 2, /* every op with a rule down to prims, then AUTO */
} alloy_decompose_level;

typedef struct alloy_program_options {
  size_t struct_size;
  alloy_decompose_level decompose;
  /* Mixtures only: the partitioner's cost model. 0 takes each backend's
   * own (alloy_device_info's launch_s and host_bytes_per_s, else 10 us per
   * partition launch and 10 GB/s); a positive value overrides them all; a
   * negative value means free (no launch cost, infinite bandwidth), which
   * leaves the priority choice of backends standing. */
  double partition_launch_s;
  double link_bytes_per_s;
  /* since 1.2 */
  /* The data of the graph's parameter, buffer and constant inputs, known
   * at compile: by graph input index, num_weights entries (an entry with
   * data NULL, and user inputs, are not bound). Borrowed: the data must
   * stay valid and unchanged while the program lives. With them the
   * program folds what depends only on weights once (a transposed weight,
   * a cast constant), uploads each weight to its backend once, and lets
   * plugins pre-pack them at compile (host->graph_input_data); the tensors
   * later runs pass for those inputs are not read. */
  const alloy_host_tensor *weights;
  int32_t num_weights;
  int32_t reserved;      /* zero */
  /* Options for the backends, "<backend>.<key>" = value (borrowed for the
   * call): each backend receives its own, with the prefix removed, in
   * alloy_compile_options. */
  const alloy_option *backend_options;
  int32_t num_backend_options;
  int32_t reserved2;     /* zero */
} alloy_program_options;
#define ALLOY_PROGRAM_OPTIONS_STRUCT_SIZE ALLOY_STRUCT_SIZE(alloy_program_options, reserved2)

/* Compiles g to run wholly on backend i. A node the backend does not claim
 * is decomposed (decompositions/), round after round, until the backend
 * claims the pieces; a node that stays unclaimed is an error that names it
 * and says why it could not be decomposed. options may be NULL (AUTO). g is
 * borrowed for the call: the program keeps its own copy. */
alloy_error *alloy_program_compile_ex(alloy_runtime *rt, int backend,
                                      const alloy_graph *g,
                                      const alloy_program_options *options,
                                      alloy_program **out);
/* alloy_program_compile_ex with options NULL. */
alloy_error *alloy_program_compile(alloy_runtime *rt, int backend,
                                   const alloy_graph *g, alloy_program **out);
/* The graph the program runs (after decomposition; before any per-shape
 * specialization). Owned by the program. */
const alloy_graph *alloy_program_graph(const alloy_program *p);
void alloy_program_release(alloy_program *p); /* accepts NULL */
/* A graph with symbolic sizes is compiled once per set of symbol values,
 * on the run that first needs it, unless its backend declares
 * ALLOY_CAP_SYMBOLIC_SHAPES (then once, for all sizes); this counts the
 * sets compiled so far (0 for a graph without backed symbols, and on such a
 * backend). */
int alloy_program_num_specializations(const alloy_program *p);

/* The runtime's compile cache: every graph a program or mixture compiles
 * is looked up by its content (ops, arguments, shapes, dtypes) and the
 * backend's name and version, in memory and, when $ALLOY_CACHE_DIR is set
 * and the backend can serialize executables, on disk. Counts since the
 * runtime opened. (No struct_size: this struct is from 1.0, before the
 * rule; it is frozen, and a new counter needs a new struct.) */
typedef struct alloy_cache_stats {
  uint64_t hits;      /* found in memory                              */
  uint64_t disk_hits; /* read back from $ALLOY_CACHE_DIR              */
  uint64_t misses;    /* compiled                                      */
  uint64_t uncached;  /* compiled without caching (.air cannot spell it) */
} alloy_cache_stats;
void alloy_runtime_cache_stats(const alloy_runtime *rt, alloy_cache_stats *out);


/* Compiles now the specialization that inputs (as for alloy_program_run)
 * would need, so that a later run with these sizes only runs: for timing
 * compilation apart from execution. A no-op without backed symbols. */
alloy_error *alloy_program_prepare(alloy_program *p, const alloy_host_tensor *inputs,
                                   int num_inputs);

/* Runs a compiled program. inputs match the graph's inputs in order (their
 * sizes bind the graph's symbols; a size outside a symbol's range or
 * disagreeing with the graph is an error naming the input and dim). outputs:
 * the caller passes num_outputs structs; each gets dtype, rank, sizes and
 * data allocated by the runtime and held by the calling thread's executor:
 * valid until this thread's next alloy_program_run or alloy_program_run_async
 * of the program, or the program's release (another thread's runs never
 * touch them; run_tensors and output_sizes neither). An executor belongs to
 * a thread id: once a thread has ended, a later thread the system gives the
 * same id takes it over, outputs included. Thread-safe: see the top of this
 * file. The program's graph (alloy_program_graph) may end with
 * outputs that functionalization added for mutated inputs (roles
 * ALLOY_OUTPUT_INPUT_MUTATION, ALLOY_OUTPUT_BUFFER_MUTATION): num_outputs may
 * stop before them. */
alloy_error *alloy_program_run(alloy_program *p,
                               const alloy_host_tensor *inputs,
                               int num_inputs, alloy_host_tensor *outputs,
                               int num_outputs);

/* Asynchronous runs (since 1.2). run_async checks the arguments, then
 * returns while the program runs on a thread of its own, on the executor of
 * the thread that called it; wait (from any thread) blocks until that run
 * is over and returns its error. Inputs (tensors, sizes, data) stay
 * borrowed and outputs must not be read until wait returns. At most one
 * asynchronous run of a program is in flight: another run_async before the
 * wait, from any thread, is an error (ALLOY_ERR_UNAVAILABLE), and so is a
 * run, run_tensors or output_sizes from the thread that started it (its
 * executor is taken); other threads' runs go on beside it on their own.
 * alloy_program_run does what run_async + wait would, on the calling
 * thread. */
alloy_error *alloy_program_run_async(alloy_program *p, const alloy_host_tensor *inputs,
                                     int num_inputs, alloy_host_tensor *outputs,
                                     int num_outputs);
alloy_error *alloy_program_wait(alloy_program *p);

/* ---- tensors in device memory (since 1.2.1) ---------------------------------
 *
 * A run's tensor where the caller keeps it: host memory, or device memory
 * of a backend made outside Alloy (cudaMalloc, a torch tensor's
 * data_ptr()): an input there is read in place by a partition on that
 * backend (no copy), and an output is written there by a copy on the
 * backend (device to device) instead of a download. The backend's plugin
 * must import device memory (buffer_import, ALLOY_DEVICE_CAP_IMPORT; the
 * reference backend's device memory is host memory). The caller sets
 * struct_size (ALLOY_RUN_TENSOR_STRUCT_SIZE); tensors are dense, row-major.
 * Device memory must hold its data when the run starts (for CUDA: the
 * kernels writing it done, e.g. the producing stream synchronized), and
 * outputs hold theirs when the run returns. */
typedef struct alloy_run_tensor {
  size_t struct_size;
  alloy_dtype dtype;
  int32_t rank;
  const int64_t *sizes; /* rank; borrowed for the call */
  void *data;           /* host memory, or device memory of `backend`; borrowed for the call */
  int32_t backend;      /* -1: host memory; else the runtime backend index (alloy_runtime_find_backend)
                           whose device 0 the memory is on */
  int32_t reserved;     /* zero */
} alloy_run_tensor;
#define ALLOY_RUN_TENSOR_STRUCT_SIZE ALLOY_STRUCT_SIZE(alloy_run_tensor, reserved)

/* Runs a compiled program on tensors where the caller keeps them:
 * synchronously, as alloy_program_run. Inputs as there. Outputs are the
 * caller's: each with the dtype, rank and sizes the run makes (else an
 * error naming the output; alloy_program_output_sizes tells them before
 * the run) and data where the run writes it. Thread-safety as
 * alloy_program_run. */
alloy_error *alloy_program_run_tensors(alloy_program *p, const alloy_run_tensor *inputs, int num_inputs,
                                       const alloy_run_tensor *outputs, int num_outputs);
/* Runs as alloy_program_run_tensors, ordered on a stream of the caller's
 * (since 1.3): stream is an extension chain (alloy/plugin.h, borrowed for
 * the call) whose stream extension names it (ALLOY_EXT_CUDA_STREAM: a
 * cudaStream_t of runtime backend `backend`'s device 0). The run's device
 * work starts after the work the caller queued on that stream before the
 * call, so its device inputs need only be written in stream order, and
 * the caller's work queued there after the call sees its outputs.
 *   - When the whole run stays on `backend` (every partition there, the
 *     user's inputs and the outputs asked for in its device memory, sizes
 *     known before it starts), the call returns once the work is queued,
 *     without waiting. The caller's device memory must then stay valid
 *     until the stream has passed the run; a failure on the device shows
 *     in the stream (and in the next run of this thread on the program,
 *     which names it). The first run, which copies the weights in, waits.
 *   - Otherwise the host waits for the stream to reach the call, then
 *     runs as alloy_program_run_tensors does and returns when it is over.
 * The next run of this thread on the program, with or without a stream,
 * is ordered after this one, and releasing the program waits for it. The
 * backend's plugin must take streams (queue_import, ABI 1.3), else an
 * error naming it (ALLOY_ERR_UNSUPPORTED). Thread-safety as
 * alloy_program_run. */
alloy_error *alloy_program_run_on_stream(alloy_program *p, const alloy_run_tensor *inputs, int num_inputs,
                                         const alloy_run_tensor *outputs, int num_outputs, int backend,
                                         const alloy_ext *stream);
/* The rank and sizes (ALLOY_MAX_RANK of room) output `index` will have
 * for these inputs (only their dtype, rank and sizes are read; data may be
 * NULL): sizes bound to the graph's symbols are worked out, and the plan
 * made for them is the one the next run of these sizes uses. An error
 * when they depend on the data (nonzero, unique). */
alloy_error *alloy_program_output_sizes(alloy_program *p, const alloy_run_tensor *inputs, int num_inputs,
                                        int index, int *rank, int64_t *sizes);

/* What running moved and cost, counted since the program (or mixture)
 * was compiled, over every run of every thread (since 1.2; the arenas are
 * those of the run started last; each thread's executor copies the weights
 * once). Bytes are counted where the
 * host moves them: every copy the host asks a plugin for, and every host
 * memcpy. The caller sets struct_size (ALLOY_RUN_STATS_STRUCT_SIZE). */
typedef struct alloy_run_stats {
  size_t struct_size;
  uint64_t runs;
  uint64_t partitions_run;      /* executes issued                             */
  uint64_t weight_bytes_in;     /* parameter, buffer and constant inputs copied
                                 * to a backend: once per backend, then 0      */
  uint64_t input_bytes_in;      /* user inputs copied to a backend             */
  uint64_t output_bytes_out;    /* graph outputs copied back to the host       */
  uint64_t cross_bytes;         /* values moved from one backend to another    */
  uint64_t staged_bytes;        /* of those, through host staging buffers
                                 * (neither side host-visible)                 */
  uint64_t same_backend_round_trips; /* values between two partitions of one
                                 * backend that passed through host memory:
                                 * 0 by design; a test pins it               */
  uint64_t host_waits;          /* times the host blocked on a backend event   */
  uint64_t arena_bytes;         /* intermediates: the arenas' bytes (all
                                 * backends) planned for the last run          */
  uint64_t arena_ideal_bytes;   /* the most bytes alive at once in that run:
                                 * what perfect placement would need           */
  uint64_t fallbacks;           /* partitions whose compile failed or was
                                 * declined and went to the next backend       */
  uint64_t folded_nodes;        /* nodes folded at compile (weights only)      */
  double dispatch_s;            /* host seconds issuing partitions, all runs:
                                 * the executor's own time per partition
                                 * (copies in, execute call), less its waits;
                                 * a synchronous backend's compute is inside
                                 * its execute call and counts here          */
} alloy_run_stats;
#define ALLOY_RUN_STATS_STRUCT_SIZE ALLOY_STRUCT_SIZE(alloy_run_stats, dispatch_s)
void alloy_program_stats(const alloy_program *p, alloy_run_stats *out);

/* Sets a backend option ("arch", "sm_90") on backend i through its
 * backend_set_option entry; before compiling. An unknown key is an error
 * naming it; a backend without the entry takes no options. */
alloy_error *alloy_runtime_set_backend_option(alloy_runtime *rt, int backend, const char *key,
                                              const char *value);

/* Trace: from this call until alloy_trace_stop, the host and the
 * plugins (host->trace_range) record ranges, which stop writes to path as
 * Chrome trace JSON (Perfetto and chrome://tracing open it). One trace per
 * process at a time. */
alloy_error *alloy_trace_start(void);
alloy_error *alloy_trace_stop(const char *path);

/* --- mixtures: one graph over several backends --------------------------
 *
 * A mixture partitions a graph over backends given in priority order (the
 * reference backend is added last when it is not listed): each backend
 * claims the nodes it can run, with a cost; nodes nobody claims are
 * decomposed until someone does; the partitioner (docs/partitioner.md)
 * groups the nodes into convex partitions, one backend each, trading the
 * claimed costs against bytes moved between backends and a per-partition
 * launch cost. Each partition is compiled on its backend; running executes
 * them in dependency order, independent partitions of different backends at
 * the same time (on threads of the runtime's own), passing values between
 * backends through host memory and releasing each intermediate as soon as
 * its last reader ran.
 * A graph with symbolic sizes is partitioned per set of symbol values, like
 * a program. Same threading rules as programs: each thread has an executor
 * per plan, and a plan is made under the mixture's lock. */
typedef struct alloy_mixture alloy_mixture;

alloy_error *alloy_mixture_compile(alloy_runtime *rt, const int *backends, int num_backends,
                                   const alloy_graph *g, const alloy_program_options *options,
                                   alloy_mixture **out);
/* As alloy_program_run; outputs are held by the calling thread's executor
 * until this thread's next run (or run_async) of the mixture, or its
 * release. */
alloy_error *alloy_mixture_run(alloy_mixture *m, const alloy_host_tensor *inputs, int num_inputs,
                               alloy_host_tensor *outputs, int num_outputs);
void alloy_mixture_release(alloy_mixture *m); /* accepts NULL */
/* As alloy_program_run_tensors and alloy_program_output_sizes, for a
 * mixture (since 1.2.1): an input in a backend's device memory is read in
 * place by the partitions on that backend, and copied to the others. */
alloy_error *alloy_mixture_run_tensors(alloy_mixture *m, const alloy_run_tensor *inputs, int num_inputs,
                                       const alloy_run_tensor *outputs, int num_outputs);
alloy_error *alloy_mixture_output_sizes(alloy_mixture *m, const alloy_run_tensor *inputs, int num_inputs,
                                        int index, int *rank, int64_t *sizes);
/* As alloy_program_run_on_stream (since 1.3): left on the stream only
 * when every partition runs on the stream's backend. */
alloy_error *alloy_mixture_run_on_stream(alloy_mixture *m, const alloy_run_tensor *inputs, int num_inputs,
                                         const alloy_run_tensor *outputs, int num_outputs, int backend,
                                         const alloy_ext *stream);
/* As alloy_program_run_async, alloy_program_wait, alloy_program_stats. */
alloy_error *alloy_mixture_run_async(alloy_mixture *m, const alloy_host_tensor *inputs,
                                     int num_inputs, alloy_host_tensor *outputs,
                                     int num_outputs);
alloy_error *alloy_mixture_wait(alloy_mixture *m);
void alloy_mixture_stats(const alloy_mixture *m, alloy_run_stats *out);
/* Partitions and compiles now for these inputs' sizes (a graph with
 * symbolic sizes is planned per set of sizes), without running. */
alloy_error *alloy_mixture_prepare(alloy_mixture *m, const alloy_host_tensor *inputs,
                                   int num_inputs);

/* The partitions of the last run (or of the compile, for a graph without
 * symbolic sizes; with several threads, of the run started last). Strings
 * live as long as the mixture. The caller sets
 * struct_size (ALLOY_PARTITION_INFO_STRUCT_SIZE). */
typedef struct alloy_partition_info {
  size_t struct_size;
  const char *backend;    /* its name                                    */
  int32_t num_nodes;
  int32_t num_inputs, num_outputs;
  double cost;            /* the model's estimate of its nodes, seconds  */
  double bytes_in;        /* bytes it receives from other backends       */
} alloy_partition_info;
#define ALLOY_PARTITION_INFO_STRUCT_SIZE ALLOY_STRUCT_SIZE(alloy_partition_info, bytes_in)
int alloy_mixture_num_partitions(const alloy_mixture *m);
void alloy_mixture_partition_info(const alloy_mixture *m, int i, alloy_partition_info *info);
/* The graph partitioned last (after decomposition and specialization),
 * owned by the mixture, and the partition of each of its nodes. */
const alloy_graph *alloy_mixture_graph(const alloy_mixture *m);
int alloy_mixture_node_partition(const alloy_mixture *m, int node_index);
/* Why node node_index of alloy_mixture_graph went to its backend rather
 * than to an earlier one of the list (since 1.2): one line per backend
 * passed over, "devsim: not claimed (f64 is not supported)", "cuda: 3.1e-06
 * s here against 1.0e-06 s plus 2.0e-06 s of copies", "npu: over its
 * memory limit"; "" when the node went to the first backend of the list.
 * Owned by the mixture, valid until its next run, prepare or release. */
const char *alloy_mixture_node_reason(const alloy_mixture *m, int node_index);
/* Host bytes of intermediates across partitions in the last run: the most
 * alive at once, and the sum if none were released. */
void alloy_mixture_memory(const alloy_mixture *m, uint64_t *peak, uint64_t *naive);
/* How many partitions of the last run ran at the same time as another
 * (independent partitions of different backends run at once). */
int alloy_mixture_concurrent_runs(const alloy_mixture *m);

#ifdef __cplusplus
}
#endif
#endif
