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

#endif
