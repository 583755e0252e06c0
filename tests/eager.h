/*
 * tests/eager.h: an eager interpreter with real aliasing, the oracle of
 * the functionalization tests (tests/test_functionalize.c). It runs a graph
 * as PyTorch eager would: every tensor is a view (storage, sizes, strides,
 * offset); view ops make new views of the same storage, in-place and out=
 * ops write their result through the written tensor's view into the shared
 * storage, and every other op runs alone on a backend (the reference one)
 * on contiguous copies of its arguments. Test-only code.
 */
#ifndef ALLOY_TEST_EAGER_H
#define ALLOY_TEST_EAGER_H

#include <stdint.h>

#include "alloy/graph.h"
#include "alloy/runtime.h"

/* A contiguous host tensor; data is malloc'd (eager_tensor_free). */
typedef struct eager_tensor {
  alloy_dtype dtype;
  int32_t rank;
  int64_t sizes[ALLOY_MAX_RANK];
  void *data;
} eager_tensor;

void eager_tensor_free(eager_tensor *t);
int64_t eager_numel(const eager_tensor *t);

/* Runs g (concrete shapes, tensor inputs only) on backend `backend` of rt.
 * inputs: one per graph input (borrowed, copied into the run's storages).
 * outputs: alloy_graph_num_outputs(g) entries, read through their views at
 * the end; final_inputs: one per input, its storage after the run (NULL to
 * skip). On error nothing needs freeing; the error names the node and op. */
alloy_error *eager_run(alloy_runtime *rt, int backend, const alloy_graph *g,
                       const eager_tensor *inputs, eager_tensor *outputs,
                       eager_tensor *final_inputs);

#endif
