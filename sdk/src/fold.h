/*
 * sdk/src/fold.h: constant folding at compile (fold.c): what depends only
 * on weights bound at compile is computed once.
 */
#ifndef ALLOY_SDK_FOLD_H
#define ALLOY_SDK_FOLD_H

#include "sdk/src/runtime_internal.h"

typedef struct fold_result fold_result;

/* Folds g in place: nodes whose tensor arguments are all bound weights
 * (weights[i].data non-NULL for input i, nweights entries) or values
 * folded before them, that are deterministic, have concrete sizes and make
 * no more bytes than they read, are run once on the reference backend;
 * each folded value still used by the rest of the graph becomes a new
 * constant input at the end of g's inputs (its data bound with
 * alloy_graph_set_input_data), and the folded nodes go. *out holds the new
 * inputs' data (NULL when nothing was folded). A node the reference
 * backend cannot run is left as it is. */
alloy_error *fold_weights(alloy_runtime *rt, alloy_graph *g, const alloy_host_tensor *weights,
                          int nweights, fold_result **out);
/* The k-th input fold_weights added (k from 0), owned by f. */
const alloy_host_tensor *fold_tensor(const fold_result *f, int k);
int fold_nodes(const fold_result *f); /* nodes folded; 0 for NULL */
void fold_free(fold_result *f);       /* accepts NULL */

/* What a run feeds a graph whose weights may be bound and folded at
 * compile (programs and mixtures alike): the caller's inputs, weights bound
 * at compile in their place, and the folded constants after them. */
typedef struct feed {
  int ncaller;               /* inputs the caller passes (before folding)   */
  int ninputs;               /* the graph's inputs (after folding)          */
  alloy_host_tensor *bound;  /* by caller input, data NULL when unbound; or NULL */
  fold_result *fold;         /* the folded constants, or NULL               */
  bool *resident;            /* by graph input: parameter, buffer, constant */
} feed;

/* Binds the weights o binds (NULL: none) to g, folds what depends only on
 * them, and readies f for runs. f starts zeroed; after a failure it holds
 * what feed_free releases. */
alloy_error *feed_prepare(alloy_runtime *rt, alloy_graph *g, const alloy_program_options *o,
                          feed *f);
/* The run's inputs for the caller's (f->ncaller of them): f->ninputs,
 * malloc'd for the run (the caller frees them; NULL when memory ran out).
 * f is only read, so runs on several threads may call it at once. */
alloy_host_tensor *feed_inputs(const feed *f, const alloy_host_tensor *caller);
void feed_free(feed *f);
/* A run's placements by graph input (exec_run_placed's in_where) for the
 * caller's (f->ncaller of them): theirs, and host memory (-1) for what the
 * feed adds. full holds f->ninputs; returned. (program.c) */
const int *feed_places(const feed *f, const int *caller, int *full);
/* Splits the caller's run tensors into the host tensors the executor reads
 * and their placements (-1 host, else a runtime backend index), checking
 * struct sizes and backends; what names them in errors ("input").
 * (program.c) */
alloy_error *run_tensors_split(alloy_runtime *rt, const alloy_run_tensor *t, int n, const char *what,
                               alloy_host_tensor *host, int *where);
/* A run on the caller's tensors as the executor takes it: the caller's
 * split (run_tensors_split), the feed's full inputs and their placements.
 * (program.c) */
typedef struct run_io {
  alloy_host_tensor *hin, *hout, *full; /* the caller's inputs and outputs; by graph input */
  int *win, *wout, *wfull;              /* their placements */
} run_io;
/* Fills *io for f's graph (outputs may be NULL, num_outputs 0); on failure
 * what was made stays in *io for run_io_free. */
alloy_error *run_io_make(alloy_runtime *rt, feed *f, const alloy_run_tensor *inputs, int num_inputs,
                         const alloy_run_tensor *outputs, int num_outputs, run_io *io);
void run_io_free(run_io *io);

#endif
