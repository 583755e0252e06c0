/*
 * sdk/src/runtime_internal.h: the runtime's structures, shared by the loader
 * (loader.c), the guard (guard.c), the compile cache (cache.c), programs
 * (program.c) and the executor (exec.c).
 */
#ifndef ALLOY_SDK_RUNTIME_INTERNAL_H
#define ALLOY_SDK_RUNTIME_INTERNAL_H

#include "alloy/runtime.h"
#include "sdk/src/host.h"

/* One plugin found: loaded and open, or refused with a reason. */
typedef struct alloy_loaded {
  char *name, *vendor, *version, *path, *status, *devices;
  uint32_t abi_major, abi_minor;
  int num_devices;
  bool ok;
  void *dl;                   /* dlopen handle; NULL when built in */
  const alloy_plugin_api *api; /* valid when ok */
  alloy_backend *be;          /* valid when ok */
  /* Options set with alloy_runtime_set_backend_option: passed to every
   * compile (alloy_compile_options) and part of the compile cache's key. */
  alloy_option *options;      /* keys and values malloc'd */
  int noptions;
  /* The guard (guard.c): api points at counted, a copy of the plugin's
   * table whose entries count their calls, check what comes back and
   * forward to real_api. calls marks that counting was asked for. */
  const alloy_plugin_api *real_api;
  alloy_plugin_api counted;
  uint64_t *calls;            /* by entry, see guard.c; NULL when off */
} alloy_loaded;

/* The most devices the host believes a backend has. */
#define ALLOY_MAX_DEVICES 64

/* Guards row (guard.c): from now on every call the host makes into its
 * plugin's table goes through a trampoline that counts it and checks what
 * comes back. Called once the runtime's rows stop moving (the end of
 * alloy_runtime_open); an error when the process has too many backends
 * open at once. */
alloy_error *runtime_guard(alloy_loaded *row);

/* Entry counting (guard.c): from now on, every call the host makes into
 * backend i's plugin table is counted by entry name (the counters restart). For conformance, which
 * fails a backend whose required entries its suite never exercised. Call
 * before the backend is used by anything else; stays on until the runtime
 * closes. */
alloy_error *runtime_count_entries(alloy_runtime *rt, int backend);
/* Calls of the entry called name ("buffer_copy") since counting began; -1
 * when counting is off or the name is not an entry. */
int64_t runtime_entry_calls(const alloy_runtime *rt, int backend, const char *name);
/* The names of the plugin table's required entries, NULL-terminated. */
extern const char *const runtime_required_entries[];

typedef struct alloy_cache alloy_cache;

struct alloy_runtime {
  alloy_loaded *backends; /* in priority order once open returns */
  int num, cap;
  alloy_cache *cache;     /* compiled executables (cache.c), or NULL */
};

/* The compile cache (cache.c): the executable of g on row, from memory,
 * from $ALLOY_CACHE_DIR, or made by compile now (outside the cache's
 * lock: threads may compile at once; a graph two of them compiled at once
 * is kept once). Thread-safe. The runtime owns it;
 * cache_release drops the caller's hold (false: it was never cached, the
 * caller releases it itself). cache_close releases everything. */
alloy_error *cache_compile(alloy_runtime *rt, alloy_loaded *row, const alloy_graph *g,
                           alloy_error *(*compile)(alloy_loaded *, const alloy_graph *,
                                                   alloy_executable **),
                           alloy_executable **out);
bool cache_release(alloy_runtime *rt, alloy_executable *exe);
/* Reads a cache entry's bytes (what cache.c writes: "ALLOYEXE2\n", then the
 * fields backend, version, device, compat, text and exe, each "<name> <n>\n"
 * and n bytes) into CACHE_ENTRY_FIELDS pointers into buf and lengths; false
 * when buf is not exactly such an entry. Never reads outside buf[0..len). */
#define CACHE_ENTRY_FIELDS 6
bool cache_entry_parse(const char *buf, size_t len, const char **val, uint64_t *n);
void cache_close(alloy_runtime *rt);

/* Binds the graph's symbols from the inputs' sizes (program.c). */
alloy_error *program_bind_symbols(const alloy_graph *g, const alloy_host_tensor *inputs, int n,
                                  int64_t *values, bool *bound, int nsyms);
/* Brings g to what the backends accept together (program.c): the forced
 * level, then what no backend claims is decomposed until one does. With one
 * backend, a node it leaves unclaimed is an error. */
alloy_error *program_lower(alloy_loaded *const *rows, int nrows, const alloy_graph *g,
                           alloy_decompose_level level, alloy_graph **out);
/* Whether g has symbols bound by input sizes (compiled per binding). */
bool program_has_backed_symbols(alloy_graph *g);
/* A program for g as it is: g is already functional and claimed whole by
 * the backend (a mixture's partition), so it is not lowered again. The
 * program takes g over (freed on failure too). */
alloy_error *program_compile_lowered(alloy_runtime *rt, int backend, alloy_graph *g,
                                     alloy_program **out);
/* How many outputs a run must ask for: all but the input and buffer
 * mutations functionalization appends at the end (program.c). */
int program_outputs_needed(const alloy_graph *g);

/* Compile options shared by programs and mixtures (program.c): the
 * backend options of o go to their backends' rows; the weights o binds
 * are checked against g's inputs, attached to them
 * (alloy_graph_set_input_data) and returned by graph input (*out NULL when
 * o binds none; malloc'd). */
alloy_error *program_options_apply(alloy_runtime *rt, const alloy_program_options *o);
alloy_error *program_bind_weights(alloy_graph *g, const alloy_program_options *o,
                                  alloy_host_tensor **out);

/* The device side of a program, for the executor (exec.c). A choice is
 * what runs for one set of input sizes: the compiled graph and its
 * symbols' values. Each executor keeps its own for each partition, so that
 * threads running one program at once never share one (program.c). */
typedef struct program_compiled program_compiled;
typedef struct program_choice {
  const program_compiled *chosen; /* owned by the program; NULL: none yet   */
  int64_t *sym_values;            /* chosen graph's symbols; INT64_MIN: unbound */
  bool *sym_bound;
  int nsym_values, cap_sym;
} program_choice;
void program_choice_free(program_choice *c); /* its arrays; c stays usable */
/* choose: what runs for these input sizes, into *c (a specialization is
 * compiled now when new, under the program's lock), and each output's
 * sizes (out_sizes[k * ALLOY_MAX_RANK + d]; known[k] false:
 * data-dependent). launch: executes c on the queue (tensors as
 * alloy_execute_args says). Both may run on several threads at once, each
 * with its own c. */
alloy_error *program_choose(alloy_program *p, program_choice *c, const alloy_host_tensor *ins, int nin,
                            int64_t *out_sizes, bool *known);
alloy_error *program_launch(alloy_program *p, const program_choice *c, const alloy_tensor *ins, int nin,
                            alloy_tensor *outs, int nout, alloy_queue *queue, alloy_event **done);

#endif
