/*
 * bench/bench_dispatch.c: what the executor (sdk/src/exec.c) costs the host
 * per partition, and how many bytes a run moves now against what the
 * runtime before the device-resident data path moved.
 *
 *   bench_dispatch PLUGIN_DIR [GOLDEN_MODELS_DIR]
 *
 * Dispatch: a chain of 2K one-element-wide nodes alternating relu and neg,
 * as a mixture where one backend takes the relus and ref the negs (free
 * cost model: the priority choice), so every node is a partition of its
 * own; the host's time in issuing (alloy_run_stats.dispatch_s: its own
 * work per partition, less event waits) over partitions issued. Run with
 * the test plugin "basic" (synchronous, trivial relu: nearly all of it is
 * host overhead plus a kernel-table call on ref's side) and with "devsim"
 * (asynchronous; its execute validates and enqueues, so this includes a
 * plugin's enqueue cost).
 *
 * Bytes: each golden model on devsim alone and on devsim,ref with devsim
 * leaving the matrix products (so values cross); the steady-state run's
 * counters against the old path, which copied every input of every
 * partition in (weights included) and every output out, each run.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/model.h"
#include "alloy/runtime.h"
#include "alloy/safetensors.h"

static void die(alloy_error *e, const char *what) {
  if (!e) return;
  fprintf(stderr, "bench_dispatch: %s: %s\n", what, alloy_error_message(e));
  exit(1);
}

static alloy_graph *chain(int k) {
  alloy_graph *g = alloy_graph_new();
  alloy_dim shape[1] = {alloy_dim_const(4)};
  alloy_value_type t = {.kind = ALLOY_VALUE_TENSOR, .dtype = ALLOY_F32, .rank = 1, .shape = shape};
  alloy_value *v = NULL;
  die(alloy_graph_add_input(g, "x", &t, &v), "input");
  for (int i = 0; i < 2 * k; i++) {
    alloy_arg a = alloy_arg_value(v);
    alloy_node *n = NULL;
    die(alloy_graph_add_node(g, alloy_op_find(i % 2 ? "aten.neg.default" : "aten.relu.default"), &a, 1,
                             NULL, NULL, 0, NULL, &n), "node");
    v = alloy_node_output(n, 0);
  }
  die(alloy_graph_set_outputs(g, &v, 1), "outputs");
  return g;
}

static void dispatch(alloy_runtime *rt, const char *backend, int k, int runs) {
  int b = alloy_runtime_find_backend(rt, backend), ref = alloy_runtime_find_backend(rt, "ref");
  if (b < 0) {
    printf("  %-8s (not found)\n", backend);
    return;
  }
  alloy_graph *g = chain(k);
  int backends[2] = {b, ref};
  alloy_program_options po = {.struct_size = ALLOY_PROGRAM_OPTIONS_STRUCT_SIZE,
                              .partition_launch_s = -1, .link_bytes_per_s = -1};
  alloy_mixture *m = NULL;
  die(alloy_mixture_compile(rt, backends, 2, g, &po, &m), "compile");
  float x[4] = {1, -2, 3, -4};
  int64_t n = 4;
  alloy_host_tensor in = {ALLOY_STRUCT_SIZE(alloy_host_tensor, data), ALLOY_F32, 1, &n, x};
  alloy_host_tensor out = {.struct_size = ALLOY_STRUCT_SIZE(alloy_host_tensor, data)};
  die(alloy_mixture_run(m, &in, 1, &out, 1), "warm-up run");
  alloy_run_stats a = {.struct_size = ALLOY_RUN_STATS_STRUCT_SIZE}, z = a;
  alloy_mixture_stats(m, &a);
  for (int r = 0; r < runs; r++) die(alloy_mixture_run(m, &in, 1, &out, 1), "run");
  alloy_mixture_stats(m, &z);
  double parts = (double)(z.partitions_run - a.partitions_run);
  printf("  %-8s %4d partitions per run, %d runs: %.2f us per partition issued, "
         "%.1f host waits per run\n", backend, alloy_mixture_num_partitions(m), runs,
         (z.dispatch_s - a.dispatch_s) * 1e6 / parts, (double)(z.host_waits - a.host_waits) / runs);
  alloy_mixture_release(m);
  alloy_graph_free(g);
}

/* The bytes of a tensor value of the plan's (concrete) graph. */
static double value_bytes(const alloy_value *v) {
  double b = (double)alloy_dtype_size(alloy_value_dtype(v));
  for (int d = 0; d < alloy_value_rank(v); d++) b *= (double)alloy_value_shape(v)[d].value;
  return b;
}

/* What the old path moved per run: every partition copied each value it
 * reads from outside in, and each value it defines that is read outside
 * (or is a graph output) out. */
static double old_bytes(const alloy_mixture *m) {
  const alloy_graph *g = alloy_mixture_graph(m);
  double total = 0;
  int n = alloy_graph_num_nodes(g), np = alloy_mixture_num_partitions(m);
  for (int q = 0; q < np; q++) {
    const alloy_value *seen[4096];
    int nseen = 0;
    for (int i = 0; i < n; i++) {
      if (alloy_mixture_node_partition(m, i) != q) continue;
      const alloy_node *node = alloy_graph_node(g, i);
      for (int a = 0; a < alloy_node_num_args(node); a++) {
        const alloy_arg *arg = alloy_node_arg(node, a);
        int items = arg->kind == ALLOY_ARG_LIST ? arg->u.list.n : 1;
        for (int k = 0; k < items; k++) {
          const alloy_arg *it = arg->kind == ALLOY_ARG_LIST ? &arg->u.list.items[k] : arg;
          if (it->kind != ALLOY_ARG_VALUE || alloy_value_kind_of(it->u.value) != ALLOY_VALUE_TENSOR) continue;
          alloy_node *prod = alloy_value_producer(it->u.value, NULL);
          int pi = -1;
          for (int j = 0; prod && j < n && pi < 0; j++)
            if (alloy_graph_node(g, j) == prod) pi = j;
          if (pi >= 0 && alloy_mixture_node_partition(m, pi) == q) continue;
          bool dup = false;
          for (int s = 0; s < nseen && !dup; s++) dup = seen[s] == it->u.value;
          if (dup || nseen == 4096) continue;
          seen[nseen++] = it->u.value;
          total += value_bytes(it->u.value);
        }
      }
      for (int k = 0; k < alloy_node_num_outputs(node); k++) {
        const alloy_value *v = alloy_node_output(node, k);
        bool out = false;
        for (int o = 0; o < alloy_graph_num_outputs(g) && !out; o++) out = alloy_graph_output(g, o) == v;
        for (int u = 0; u < alloy_value_num_users(v) && !out; u++) {
          const alloy_node *user = alloy_value_user(v, u);
          for (int j = 0; j < n; j++)
            if (alloy_graph_node(g, j) == user) out |= alloy_mixture_node_partition(m, j) != q;
        }
        if (out) total += value_bytes(v);
      }
    }
  }
  return total;
}

static void bytes_of_model(alloy_runtime *rt, const char *dir, const char *name, const char *list) {
  char path[4096], io[4096];
  snprintf(path, sizeof path, "%s/%s.core.pt2", dir, name);
  snprintf(io, sizeof io, "%s/%s.io.safetensors", dir, name);
  alloy_model *model = NULL;
  alloy_safetensors *st = NULL;
  if (alloy_model_load(path, &model) || alloy_safetensors_open(io, &st)) {
    printf("  %-14s (missing)\n", name);
    alloy_model_free(model);
    return;
  }
  alloy_graph *g = alloy_model_graph(model);
  int nin = alloy_graph_num_inputs(g), nuser = alloy_model_num_user_inputs(model);
  alloy_host_tensor user[8], *ins = calloc((size_t)nin, sizeof *ins), *w = calloc((size_t)nin, sizeof *w);
  for (int i = 0; i < nuser && i < 8; i++) {
    char key[16];
    snprintf(key, sizeof key, "input%d", i);
    const alloy_st_entry *e = alloy_safetensors_find(st, key);
    user[i] = (alloy_host_tensor){ALLOY_STRUCT_SIZE(alloy_host_tensor, data), e->dtype, e->rank, e->shape,
                                  (void *)e->data};
  }
  die(alloy_model_bind_inputs(model, user, nuser, ins, nin), "bind");
  for (int i = 0; i < nin; i++)
    if (alloy_graph_input_role(g, i, NULL) != ALLOY_INPUT_USER) w[i] = ins[i];
  int idx[2] = {alloy_runtime_find_backend(rt, "devsim"), alloy_runtime_find_backend(rt, "ref")};
  alloy_program_options po = {.struct_size = ALLOY_PROGRAM_OPTIONS_STRUCT_SIZE, .weights = w, .num_weights = nin};
  alloy_mixture *m = NULL;
  die(alloy_mixture_compile(rt, idx, 2, g, &po, &m), name);
  int nout = alloy_graph_num_outputs(g);
  alloy_host_tensor outs[8];
  for (int k = 0; k < 8; k++) outs[k] = (alloy_host_tensor){.struct_size = ALLOY_STRUCT_SIZE(alloy_host_tensor, data)};
  die(alloy_mixture_run(m, ins, nin, outs, nout), "first run");
  alloy_run_stats a = {.struct_size = ALLOY_RUN_STATS_STRUCT_SIZE}, z = a, first = a;
  alloy_mixture_stats(m, &first);
  a = first;
  die(alloy_mixture_run(m, ins, nin, outs, nout), "second run");
  alloy_mixture_stats(m, &z);
  double now = (double)(z.weight_bytes_in - a.weight_bytes_in + z.input_bytes_in - a.input_bytes_in +
                        z.output_bytes_out - a.output_bytes_out + z.cross_bytes - a.cross_bytes);
  printf("  %-14s %-10s %3d partitions  first run %10.0f B  steady run %10.0f B  "
         "(weights %llu, between backends %llu)  before: %10.0f B per run\n", name, list,
         alloy_mixture_num_partitions(m),
         (double)(first.weight_bytes_in + first.input_bytes_in + first.output_bytes_out + first.cross_bytes),
         now, (unsigned long long)(z.weight_bytes_in - a.weight_bytes_in),
         (unsigned long long)(z.cross_bytes - a.cross_bytes), old_bytes(m));
  alloy_mixture_release(m);
  alloy_safetensors_close(st);
  alloy_model_free(model);
  free(ins);
  free(w);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_dispatch PLUGIN_DIR [GOLDEN_MODELS_DIR]\n");
    return 2;
  }
  setenv("ALLOY_DEVSIM_DELAY_US", "0", 1);
  const char *dirs[1] = {argv[1]};
  alloy_runtime_options o = {.struct_size = ALLOY_RUNTIME_OPTIONS_STRUCT_SIZE, .plugin_dirs = dirs,
                             .num_plugin_dirs = 1, .no_default_paths = true};
  alloy_runtime *rt = NULL;
  die(alloy_runtime_open(&o, &rt), "runtime");
  printf("dispatch: host time per partition (goal: under 2 us)\n");
  dispatch(rt, "basic", 32, 2000);
  setenv("ALLOY_DEVSIM_SKIP", "aten.neg*", 1); /* devsim the relus, ref the negs */
  dispatch(rt, "devsim", 32, 500);
  if (argc > 2) {
    printf("bytes moved per run: now against the path before (every partition copying its inputs "
           "in and outputs out)\n");
    static const char *const models[] = {"mlp", "attn_block", "bert_tiny", "llama_tiny", "squeezenet1_1"};
    for (int i = 0; i < 5; i++) {
      unsetenv("ALLOY_DEVSIM_SKIP");
      bytes_of_model(rt, argv[2], models[i], "devsim");
    }
    alloy_runtime_close(rt);
    /* devsim leaves the matrix products and convolutions to ref. */
    setenv("ALLOY_DEVSIM_SKIP", "aten.mm*,aten.addmm*,aten.bmm*,aten.convolution*", 1);
    die(alloy_runtime_open(&o, &rt), "runtime");
    for (int i = 0; i < 5; i++) bytes_of_model(rt, argv[2], models[i], "devsim,ref");
  }
  alloy_runtime_close(rt);
  return 0;
}
