/*
 * sdk/src/exec.h: the executor (exec.c): runs a list of compiled
 * partitions, each on its backend, with the values between them kept on
 * the backends. Programs (one partition) and mixtures (many) both run
 * through it; docs/runtime.md draws the data path.
 */
#ifndef ALLOY_SDK_EXEC_H
#define ALLOY_SDK_EXEC_H

#include <pthread.h>

#include "sdk/src/runtime_internal.h"

/* Where a value comes from: input `index` of the run (part < 0), or output
 * `index` of partition `part`. */
typedef struct exec_src {
  int part;
  int index;
} exec_src;

typedef struct exec_part {
  int backend;         /* runtime backend index                         */
  alloy_program *prog; /* the partition, compiled (program.c); borrowed */
  int nin, nout;       /* its graph's inputs and outputs                */
  const exec_src *in;  /* nin sources, borrowed                         */
} exec_part;

/* What to run: borrowed by exec_new for the executor's life. */
typedef struct exec_desc {
  alloy_runtime *rt;
  int nparts;
  const exec_part *parts;   /* topological order                          */
  int ninputs;              /* inputs of a run                            */
  const bool *resident;     /* ninputs: parameter, buffer or constant: kept
                             * on each backend, copied again only when the
                             * run passes other data for it                */
  int noutputs;
  const exec_src *outputs;  /* noutputs                                    */
} exec_desc;

typedef struct exec exec;

alloy_error *exec_new(const exec_desc *d, exec **out);
void exec_free(exec *x); /* accepts NULL; waits for a run left on a caller's stream */
/* An executor serves one run at a time: the calls below on one executor
 * never overlap (exec_pool gives each thread its own). */

/* One run, synchronous: inputs (ninputs, host memory, borrowed for the
 * call); outputs[0..noutputs) receive dtype, rank, sizes and data owned by
 * the executor until the next run. Counters accumulate in stats. */
alloy_error *exec_run(exec *x, const alloy_host_tensor *inputs, alloy_host_tensor *outputs,
                      int noutputs);
/* The same, with tensors in the caller's device memory: in_where[i] (NULL:
 * all -1) is -1 for host memory or the runtime backend index whose device
 * memory inputs[i].data is (read in place on that backend, through host
 * memory on another). out_where non-NULL: the outputs are the caller's,
 * their dtype, rank and sizes what the run makes (else an error naming
 * the output) and data where to write them: host memory (-1) or device
 * memory of backend out_where[k]. Device memory is imported
 * (buffer_import) for the run and forgotten at its end. */
/* on non-NULL: the run is ordered on that stream of the caller's (see
 * exec.c's top: left on it when it can stay on the device, else the host
 * waits for the stream and runs it as any other). */
typedef struct exec_stream {
  int backend;         /* runtime backend index             */
  alloy_queue *queue;  /* the caller's stream, queue_import'd */
} exec_stream;
alloy_error *exec_run_placed(exec *x, const alloy_host_tensor *inputs, const int *in_where,
                             alloy_host_tensor *outputs, const int *out_where, int noutputs,
                             const exec_stream *on);
/* Wraps the caller's stream (an extension chain, borrowed) of runtime
 * backend `backend` as a queue for one run; an error naming the backend
 * when its plugin cannot (no queue_import). Close releases the wrapper,
 * never the stream. */
alloy_error *exec_stream_open(alloy_runtime *rt, int backend, const alloy_ext *stream, exec_stream *out);
void exec_stream_close(alloy_runtime *rt, exec_stream *st);
/* The rank and sizes output k will have for inputs (sizes and placement
 * are planned as a run would: the run after reuses them); an error when
 * they depend on the data. sizes holds ALLOY_MAX_RANK. */
alloy_error *exec_output_sizes(exec *x, const alloy_host_tensor *inputs, int k, int *rank, int64_t *sizes);
/* Counters since exec_new. */
const alloy_run_stats *exec_stats(const exec *x);
/* Partitions of the last run issued while another backend still had work
 * in flight (they overlapped it). */
int exec_concurrent(const exec *x);

/* Copies counters into the caller's struct as far as its struct_size goes
 * (keeping its struct_size). */
void exec_stats_copy(const alloy_run_stats *s, alloy_run_stats *out);

/* Executors by thread: a program (and each plan of a mixture) runs
 * several threads at once, each on an executor of its own, so that an
 * executor, its queues, arenas, outputs and per-run state are only ever
 * touched by one run at a time. key names the thread (pthread_self(), or
 * the thread that started an asynchronous run). The pool is the owner's
 * and every call is made under the owner's lock; the runs themselves are
 * not. */
typedef struct exec_pool {
  struct { pthread_t key; exec *x; } *v;
  int n, cap;
  exec *last;             /* the executor handed out last (introspection) */
} exec_pool;
/* key's executor, made from d (borrowed for its life) on key's first run. */
alloy_error *exec_pool_mine(exec_pool *pool, const exec_desc *d, pthread_t key, exec **out);
void exec_pool_free(exec_pool *pool); /* no run in flight */
/* Adds the pool's counters to sum; the arenas are those of `last`. Reads
 * counters that runs write: call when no run of the pool is in flight. */
void exec_pool_stats(const exec_pool *pool, alloy_run_stats *sum);

/* An asynchronous run (alloy_program_run_async, alloy_mixture_run_async):
 * fn(owner, key, ...) on a thread of its own, key the thread that started
 * it (whose executor it uses); wait joins it and returns its error. At most
 * one in flight per owner; its state is under a lock of its own, so that
 * any thread may start, wait for or ask about it. */
typedef alloy_error *(*exec_run_fn)(void *owner, pthread_t key, const alloy_host_tensor *inputs,
                                    alloy_host_tensor *outputs, int noutputs);
enum { ASYNC_IDLE, ASYNC_RUNNING, ASYNC_JOINING };
typedef struct exec_async {
  pthread_mutex_t lock;
  int state;              /* ASYNC_*, under lock */
  pthread_t by;           /* the thread that started the run in flight */
  pthread_t thread;
  exec_run_fn fn;
  void *owner;
  const alloy_host_tensor *inputs;
  alloy_host_tensor *outputs;
  int noutputs;
  alloy_error *err;
} exec_async;

void exec_async_init(exec_async *a);
void exec_async_destroy(exec_async *a); /* waits for a run in flight */
/* Starts fn, or an error (ALLOY_ERR_UNAVAILABLE, naming `what`) when a run
 * is in flight already; when no thread can be made, runs it here and
 * returns its error (then nothing is in flight). */
alloy_error *exec_async_start(exec_async *a, exec_run_fn fn, void *owner,
                              const alloy_host_tensor *inputs, alloy_host_tensor *outputs,
                              int noutputs, const char *what);
/* what names the owner in the error when nothing is in flight. */
alloy_error *exec_async_wait(exec_async *a, const char *what);
bool exec_async_in_flight(exec_async *a);
/* Whether a run started by thread key is in flight (or being joined):
 * then key's executor is taken. */
bool exec_async_mine(exec_async *a, pthread_t key);

#endif
