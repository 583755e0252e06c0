/*
 * sdk/tools/isolate.h: `alloy run --isolate` (isolate.c): a run whose
 * plugins each work in a process of their own, so that one that crashes,
 * hangs or exits is reported by name instead of taking `alloy run` down.
 * run.c drives it the way it drives a program or a mixture: open (compile),
 * prepare (plan and compile for a set of input sizes), run, stats, close.
 */
#ifndef ALLOY_TOOLS_ISOLATE_H
#define ALLOY_TOOLS_ISOLATE_H

#include <stdbool.h>
#include <stdio.h>

#include "alloy/runtime.h"

typedef struct isolate isolate;

/* What an isolated run runs. Everything is borrowed for the isolate's
 * life: the children are forked from this process and read it there. */
typedef struct isolate_config {
  const char *list;                     /* --backends, as given ("devsim,ref") */
  const alloy_graph *graph;             /* the model's graph                   */
  const alloy_program_options *options; /* as alloy_mixture_compile takes them:
                                         * weights by graph input, decompose
                                         * level, cost model, backend options */
  double timeout_s;                     /* the longest wait on one child       */
} isolate_config;

/* Whether list names a backend other than the reference backend: without
 * one there is nothing to isolate. */
bool isolate_wanted(const char *list);

/* A runtime of the built-in reference backend alone, for the partitions
 * that run in this process (no plugin file is loaded here). */
alloy_error *isolate_runtime_open(alloy_runtime **out);

/* One backend listed: the model is compiled on it in its own process now
 * (when that compile fails, the model runs on rt's reference backend, as
 * `alloy run` without --isolate does, and a line says so). Several: the
 * plan waits for the first prepare, which knows the input sizes. rt is the
 * reference runtime (isolate_runtime_open), borrowed. */
alloy_error *isolate_open(alloy_runtime *rt, const isolate_config *c, isolate **out);
/* Plans (in a child) and compiles (each plugin in its own child) for these
 * inputs' sizes, unless the current plan already has them. */
alloy_error *isolate_prepare(isolate *iso, const alloy_host_tensor *ins, int nin);
/* As alloy_mixture_run: outputs are owned by iso until the next run or
 * close. A child that dies or runs past the timeout is an error naming the
 * backend, how it ended and what it was doing; the child is gone after. */
alloy_error *isolate_run(isolate *iso, const alloy_host_tensor *ins, int nin,
                         alloy_host_tensor *outs, int nout);
/* Counters of every partition's program, added up (as alloy_mixture_stats). */
void isolate_stats(const isolate *iso, alloy_run_stats *out);
/* The backend that runs the model when one was listed, else NULL. */
const char *isolate_backend(const isolate *iso);
/* Nodes of the graph that runs (after decomposition), or -1 when not known
 * yet. */
int isolate_num_nodes(const isolate *iso);
/* The compile line and the partitions of the current plan, as `alloy run`
 * prints a mixture's. */
void isolate_print_summary(const isolate *iso, double compile_ms, FILE *f);
/* Ends every child (each closes its backend) and frees iso. An error when
 * one dies or hangs while closing. Accepts NULL. */
alloy_error *isolate_close(isolate *iso);

#endif
