/*
 * tests/testref.h: helpers shared by the reference-backend tests
 * (test_ref_*.c): a case opens a runtime and finds backend "ref", takes
 * graph inputs backed by host tensors, adds a node (usually one), compiles
 * and runs the graph, and leaves the outputs in out[] for checks on their
 * shapes and values. Inputs' data are borrowed until the run; the outputs
 * stay valid until tr_close. Failures are recorded with harness_fail.
 */
#ifndef ALLOY_TEST_REF_H
#define ALLOY_TEST_REF_H

#include <stdbool.h>
#include <stdint.h>

#include "alloy/graph.h"
#include "alloy/ops.h"
#include "alloy/runtime.h"
#include "harness.h"

enum { TR_MAX_IN = 16, TR_MAX_OUT = 8, TR_MAX_RANK = 8 };

/* A program on "ref" under construction. */
typedef struct tr_case {
  alloy_runtime *rt;
  int backend;
  alloy_graph *g;
  alloy_program *prog;
  alloy_host_tensor in[TR_MAX_IN];
  int64_t shapes[TR_MAX_IN][TR_MAX_RANK];
  int nin;
  alloy_host_tensor out[TR_MAX_OUT];
} tr_case;

/* Opens the runtime, finds "ref" and starts a graph; false on failure. */
bool tr_open(tr_case *t);
void tr_close(tr_case *t);
/* A graph input of the given shape holding data (borrowed until the run). */
alloy_value *tr_input_value(tr_case *t, alloy_dtype dt, const int64_t *shape, int rank, void *data);
alloy_arg tr_input(tr_case *t, alloy_dtype dt, const int64_t *shape, int rank, void *data);
/* The same, 1-D with n elements. */
alloy_arg tr_input1(tr_case *t, alloy_dtype dt, int64_t n, void *data);
/* Adds op(args; kwargs); NULL (after a recorded failure) on error. */
alloy_node *tr_node(tr_case *t, const char *op, const alloy_arg *args, int n,
                    const char *const *kwn, const alloy_arg *kw, int nkw);
/* The ways a value test runs its case: whole (as ref claims it), and
 * decomposed to Core ATen and to prims. */
enum { TR_WHOLE, TR_CORE, TR_PRIMS, TR_NLEVELS };
extern const alloy_decompose_level tr_levels[TR_NLEVELS];
/* Adds a case's inputs and node to t; returns its node (NULL after a
 * recorded failure). */
typedef alloy_node *(*tr_build_fn)(tr_case *t, const void *ctx);
/* Opens t, builds the graph and runs it decomposed to level, all the
 * node's outputs in t->out. The caller closes t either way. */
bool tr_run_built(tr_case *t, tr_build_fn build, const void *ctx, alloy_decompose_level level);
/* Runs the graph with the given outputs, left in t->out. */
bool tr_run_values(tr_case *t, alloy_value *const *outs, int nout);
/* The same with the ops decomposed to level first (ALLOY_DECOMPOSE_AUTO:
 * as the backend claims). With limit > 0, a compiled graph holding a
 * tensor of more elements is a recorded failure and does not run. */
bool tr_run_level(tr_case *t, alloy_value *const *outs, int nout, alloy_decompose_level level,
                  int64_t limit);
/* Adds op(args; kwargs) with all its outputs and runs it; returns the
 * error (NULL on success, the outputs then in t->out). */
alloy_error *tr_try(tr_case *t, const char *op, const alloy_arg *args, int n,
                    const char *const *kwn, const alloy_arg *kw, int nkw);
/* tr_try, recording any error; true on success. */
bool tr_run_kw(tr_case *t, const char *op, const alloy_arg *args, int n, const char *const *kwn,
               const alloy_arg *kw, int nkw);
bool tr_run(tr_case *t, const char *op, const alloy_arg *args, int n);
/* Deterministic values in [-1, 1) from seed (an LCG). */
void tr_fill(double *v, int64_t n, uint32_t seed);
/* The node is added and compiles but the run fails, as expected; true then. */
bool tr_run_fails(tr_case *t, const char *op, const alloy_arg *args, int n,
                  const char *const *kwn, const alloy_arg *kw, int nkw);

/* An int list argument of v[0..n), stored in items. */
alloy_arg tr_ints(alloy_arg *items, int n, const int64_t *v);
int64_t tr_numel(const alloy_host_tensor *h);
/* Element k of a float, uint8, bool or int64 output as a double. */
double tr_out_f(const alloy_host_tensor *h, int64_t k);
/* h has this rank and these sizes (a mismatch is recorded). */
bool tr_shape_is(const alloy_host_tensor *h, int rank, const int64_t *want);
/* h's first n int64 elements equal want. */
bool tr_longs_are(const alloy_host_tensor *h, const int64_t *want, int n);

#endif
