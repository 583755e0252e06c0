/*
 * tests/testref.c: see testref.h.
 */
#include "testref.h"

#include <math.h>
#include <string.h>

bool tr_open(tr_case *t) {
  memset(t, 0, sizeof *t);
  alloy_error *e = alloy_runtime_open(NULL, &t->rt);
  if (e) {
    harness_fail(__FILE__, __LINE__, "runtime: %s", alloy_error_message(e));
    alloy_error_free(e);
    return false;
  }
  t->backend = alloy_runtime_find_backend(t->rt, "ref");
  t->g = alloy_graph_new();
  return t->backend >= 0 && t->g;
}

void tr_close(tr_case *t) {
  alloy_program_release(t->prog);
  alloy_graph_free(t->g);
  alloy_runtime_close(t->rt);
}

alloy_value *tr_input_value(tr_case *t, alloy_dtype dt, const int64_t *shape, int rank, void *data) {
  if (t->nin == TR_MAX_IN || rank > TR_MAX_RANK) {
    harness_fail(__FILE__, __LINE__, "a case takes at most %d inputs of rank %d", TR_MAX_IN,
                 TR_MAX_RANK);
    return NULL;
  }
  alloy_dim dims[TR_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    dims[d] = alloy_dim_const(shape[d]);
    t->shapes[t->nin][d] = shape[d];
  }
  alloy_value_type ty = {ALLOY_VALUE_TENSOR, dt, rank, dims, NULL, {ALLOY_DEVICE_CPU, -1}, {0}};
  alloy_value *v = NULL;
  CHECK_OK(alloy_graph_add_input(t->g, NULL, &ty, &v));
  t->in[t->nin] = (alloy_host_tensor){sizeof(alloy_host_tensor), dt, rank, t->shapes[t->nin], data};
  t->nin++;
  return v;
}

alloy_arg tr_input(tr_case *t, alloy_dtype dt, const int64_t *shape, int rank, void *data) {
  return alloy_arg_value(tr_input_value(t, dt, shape, rank, data));
}

alloy_arg tr_input1(tr_case *t, alloy_dtype dt, int64_t n, void *data) {
  return tr_input(t, dt, &n, 1, data);
}

alloy_node *tr_node(tr_case *t, const char *op, const alloy_arg *args, int n,
                    const char *const *kwn, const alloy_arg *kw, int nkw) {
  const alloy_op *o = alloy_op_find(op);
  if (!o) {
    harness_fail(__FILE__, __LINE__, "no op %s", op);
    return NULL;
  }
  alloy_node *node = NULL;
  alloy_error *e = alloy_graph_add_node(t->g, o, args, n, kwn, kw, nkw, NULL, &node);
  if (e) {
    harness_fail(__FILE__, __LINE__, "%s: %s", op, alloy_error_message(e));
    alloy_error_free(e);
    return NULL;
  }
  return node;
}

/* The largest number of elements of any tensor of g. */
static int64_t largest_value(const alloy_graph *g) {
  int64_t most = 0;
  for (int i = 0; i < alloy_graph_num_nodes(g); i++) {
    const alloy_node *n = alloy_graph_node(g, i);
    for (int k = 0; k < alloy_node_num_outputs(n); k++) {
      const alloy_value *v = alloy_node_output(n, k);
      if (alloy_value_kind_of(v) != ALLOY_VALUE_TENSOR) continue;
      int64_t numel = 1;
      for (int d = 0; d < alloy_value_rank(v); d++) numel *= alloy_value_shape(v)[d].value;
      if (numel > most) most = numel;
    }
  }
  return most;
}

bool tr_run_level(tr_case *t, alloy_value *const *outs, int nout, alloy_decompose_level level,
                  int64_t limit) {
  alloy_error *e = alloy_graph_set_outputs(t->g, outs, nout);
  alloy_program_options o = {.struct_size = sizeof o, .decompose = level};
  if (!e) e = alloy_program_compile_ex(t->rt, t->backend, t->g, &o, &t->prog);
  if (!e && limit > 0 && largest_value(alloy_program_graph(t->prog)) > limit) {
    harness_fail(__FILE__, __LINE__, "level %d: a value of %lld elements, over %lld", (int)level,
                 (long long)largest_value(alloy_program_graph(t->prog)), (long long)limit);
    return false;
  }
  for (int k = 0; k < TR_MAX_OUT; k++) t->out[k].struct_size = sizeof t->out[k];
  if (!e) e = alloy_program_run(t->prog, t->in, t->nin, t->out, nout);
  if (e) {
    harness_fail(__FILE__, __LINE__, "run (decompose level %d): %s", (int)level,
                 alloy_error_message(e));
    alloy_error_free(e);
    return false;
  }
  return true;
}

const alloy_decompose_level tr_levels[TR_NLEVELS] = {
    ALLOY_DECOMPOSE_AUTO, ALLOY_DECOMPOSE_CORE, ALLOY_DECOMPOSE_PRIMS};

bool tr_run_built(tr_case *t, tr_build_fn build, const void *ctx, alloy_decompose_level level) {
  if (!tr_open(t)) return false;
  alloy_node *n = build(t, ctx);
  if (!n) return false;
  alloy_value *outs[TR_MAX_OUT];
  int nout = alloy_node_num_outputs(n);
  for (int k = 0; k < nout; k++) outs[k] = alloy_node_output(n, k);
  return tr_run_level(t, outs, nout, level, 0);
}

bool tr_run_values(tr_case *t, alloy_value *const *outs, int nout) {
  return tr_run_level(t, outs, nout, ALLOY_DECOMPOSE_AUTO, 0);
}

double tr_out_f(const alloy_host_tensor *h, int64_t k) {
  switch (h->dtype) {
    case ALLOY_F64: return ((const double *)h->data)[k];
    case ALLOY_F32: return ((const float *)h->data)[k];
    case ALLOY_F16: return alloy_f32_from_f16(((const uint16_t *)h->data)[k]);
    case ALLOY_BF16: return alloy_f32_from_bf16(((const uint16_t *)h->data)[k]);
    case ALLOY_I64: return (double)((const int64_t *)h->data)[k];
    case ALLOY_U8:
    case ALLOY_BOOL: return ((const uint8_t *)h->data)[k];
    default: return NAN;
  }
}

/* Adds op(args; kwargs) as node "out" with all its outputs and compiles;
 * *nout is the number of outputs. */
static alloy_error *tr_build(tr_case *t, const char *op, const alloy_arg *args, int n,
                             const char *const *kwn, const alloy_arg *kw, int nkw, int *nout) {
  *nout = 0;
  const alloy_op *o = alloy_op_find(op);
  if (!o) return alloy_error_new(ALLOY_ERR_NOT_FOUND, "no op %s", op);
  alloy_node *node = NULL;
  alloy_error *e = alloy_graph_add_node(t->g, o, args, n, kwn, kw, nkw, "out", &node);
  *nout = node ? alloy_node_num_outputs(node) : 0;
  alloy_value *outs[TR_MAX_OUT];
  for (int k = 0; k < *nout && k < TR_MAX_OUT; k++) outs[k] = alloy_node_output(node, k);
  if (!e) e = alloy_graph_set_outputs(t->g, outs, *nout);
  if (!e) e = alloy_program_compile(t->rt, t->backend, t->g, &t->prog);
  for (int k = 0; k < TR_MAX_OUT; k++) t->out[k].struct_size = sizeof t->out[k];
  return e;
}

alloy_error *tr_try(tr_case *t, const char *op, const alloy_arg *args, int n,
                    const char *const *kwn, const alloy_arg *kw, int nkw) {
  int nout;
  alloy_error *e = tr_build(t, op, args, n, kwn, kw, nkw, &nout);
  if (!e) e = alloy_program_run(t->prog, t->in, t->nin, t->out, nout);
  return e;
}

bool tr_run_kw(tr_case *t, const char *op, const alloy_arg *args, int n, const char *const *kwn,
               const alloy_arg *kw, int nkw) {
  alloy_error *e = tr_try(t, op, args, n, kwn, kw, nkw);
  if (e) {
    harness_fail(__FILE__, __LINE__, "%s: %s", op, alloy_error_message(e));
    alloy_error_free(e);
    return false;
  }
  return true;
}

bool tr_run(tr_case *t, const char *op, const alloy_arg *args, int n) {
  return tr_run_kw(t, op, args, n, NULL, NULL, 0);
}

bool tr_run_fails(tr_case *t, const char *op, const alloy_arg *args, int n,
                  const char *const *kwn, const alloy_arg *kw, int nkw) {
  int nout;
  alloy_error *e = tr_build(t, op, args, n, kwn, kw, nkw, &nout);
  if (e) {
    harness_fail(__FILE__, __LINE__, "%s: %s", op, alloy_error_message(e));
    alloy_error_free(e);
    return false;
  }
  e = alloy_program_run(t->prog, t->in, t->nin, t->out, nout);
  if (!e) {
    harness_fail(__FILE__, __LINE__, "%s: the run succeeded, expected it to fail", op);
    return false;
  }
  alloy_error_free(e);
  return true;
}

alloy_arg tr_ints(alloy_arg *items, int n, const int64_t *v) {
  for (int k = 0; k < n; k++) items[k] = alloy_arg_int(v[k]);
  return alloy_arg_list(items, n);
}

int64_t tr_numel(const alloy_host_tensor *h) {
  int64_t n = 1;
  for (int d = 0; d < h->rank; d++) n *= h->sizes[d];
  return n;
}

bool tr_shape_is(const alloy_host_tensor *h, int rank, const int64_t *want) {
  if (h->rank != rank) {
    harness_fail(__FILE__, __LINE__, "rank %d, expected %d", (int)h->rank, rank);
    return false;
  }
  for (int d = 0; d < rank; d++)
    if (h->sizes[d] != want[d]) {
      harness_fail(__FILE__, __LINE__, "size %lld at dim %d, expected %lld", (long long)h->sizes[d], d,
                   (long long)want[d]);
      return false;
    }
  return true;
}

bool tr_longs_are(const alloy_host_tensor *h, const int64_t *want, int n) {
  const int64_t *got = h->data;
  for (int i = 0; i < n; i++)
    if (got[i] != want[i]) {
      harness_fail(__FILE__, __LINE__, "element %d: got %lld, expected %lld", i, (long long)got[i],
                   (long long)want[i]);
      return false;
    }
  return true;
}

void tr_fill(double *v, int64_t n, uint32_t seed) {
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = (double)(seed >> 8) / (double)(1u << 23) - 1.0;
  }
}
