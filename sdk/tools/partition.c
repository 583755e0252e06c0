/*
 * sdk/tools/partition.c: `alloy partition`, a picture of how a model is
 * spread over backends.
 *
 *   alloy partition MODEL --backends a,b [--inputs X.safetensors]
 *                   [--dot FILE] [--svg FILE] [--decompose core|prims]
 *                   [--cost-model default|free]
 *
 * It lowers and partitions the model exactly as `alloy run --backends`
 * would (a model with symbolic sizes is partitioned for the sizes of
 * --inputs), prints each partition (backend, node count, inputs and
 * outputs, estimated cost, bytes received from other backends), and writes
 * a Graphviz picture: one cluster per partition, nodes colored by backend,
 * edges between backends drawn bold with the bytes they carry. --svg runs
 * Graphviz's dot on it (`make deps` installs graphviz). Then, for every
 * node left to the last backend of the list (the reference backend), why
 * each earlier backend did not get it (alloy_mixture_node_reason): not
 * claimed and the backend's own reason, a cost comparison, a memory
 * limit, a claim group that went elsewhere.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>

#include "alloy/model.h"
#include "alloy/runtime.h"
#include "alloy/safetensors.h"
#include "sdk/tools/commands.h"

extern char **environ;

static const char *const palette[] = {"#8dd3c7", "#fdb462", "#bebada", "#fb8072",
                                      "#80b1d3", "#b3de69", "#fccde5", "#d9d9d9"};

static double value_bytes(const alloy_value *v) {
  double n = alloy_value_kind_of(v) == ALLOY_VALUE_TENSOR ? (double)alloy_dtype_size(alloy_value_dtype(v)) : 8;
  for (int d = 0; d < alloy_value_rank(v); d++) {
    alloy_dim dim = alloy_value_shape(v)[d];
    n *= alloy_dim_is_const(dim) ? (double)dim.value : 1;
  }
  return n;
}

/* The index of node n in g (graphs here are model-sized). */
static int index_of(const alloy_graph *g, const alloy_node *n) {
  for (int i = 0; i < alloy_graph_num_nodes(g); i++)
    if (alloy_graph_node(g, i) == n) return i;
  return -1;
}

static void dot_escape(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    fputc(*s, f);
  }
}

static int write_dot(const alloy_mixture *m, const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "alloy partition: cannot write %s\n", path);
    return 1;
  }
  const alloy_graph *g = alloy_mixture_graph(m);
  int n = alloy_graph_num_nodes(g), np = alloy_mixture_num_partitions(m);
  const char *names[8] = {0};
  int nnames = 0;
  fprintf(f, "digraph partitions {\n  rankdir=TB;\n  node [shape=box, style=filled, fontname=\"Helvetica\"];\n");
  for (int q = 0; q < np; q++) {
    alloy_partition_info pi = {.struct_size = sizeof pi};
    alloy_mixture_partition_info(m, q, &pi);
    int color = 0;
    while (color < nnames && strcmp(names[color], pi.backend)) color++;
    if (color == nnames && nnames < 8) names[nnames++] = pi.backend;
    fprintf(f, "  subgraph cluster_%d {\n    label=\"#%d %s (%d nodes)\";\n", q, q, pi.backend,
            pi.num_nodes);
    for (int i = 0; i < n; i++) {
      if (alloy_mixture_node_partition(m, i) != q) continue;
      const alloy_node *node = alloy_graph_node(g, i);
      fprintf(f, "    n%d [label=\"", i);
      dot_escape(f, alloy_op_name(alloy_node_op(node)));
      fprintf(f, "\", fillcolor=\"%s\"];\n", palette[color % 8]);
    }
    fprintf(f, "  }\n");
  }
  /* Edges: within a backend thin, across backends bold with their bytes. */
  for (int i = 0; i < n; i++) {
    const alloy_node *node = alloy_graph_node(g, i);
    int qi = alloy_mixture_node_partition(m, i);
    for (int a = 0; a < alloy_node_num_args(node); a++) {
      const alloy_arg *arg = alloy_node_arg(node, a);
      int items = arg->kind == ALLOY_ARG_LIST ? arg->u.list.n : 1;
      for (int k = 0; k < items; k++) {
        const alloy_arg *it = arg->kind == ALLOY_ARG_LIST ? &arg->u.list.items[k] : arg;
        if (it->kind != ALLOY_ARG_VALUE) continue;
        alloy_node *prod = alloy_value_producer(it->u.value, NULL);
        int j = prod ? index_of(g, prod) : -1;
        if (j < 0) continue;
        int qj = alloy_mixture_node_partition(m, j);
        alloy_partition_info a_info = {.struct_size = sizeof a_info}, b_info = {.struct_size = sizeof b_info};
        alloy_mixture_partition_info(m, qi, &a_info);
        alloy_mixture_partition_info(m, qj, &b_info);
        if (strcmp(a_info.backend, b_info.backend))
          fprintf(f, "  n%d -> n%d [penwidth=3, color=\"#d62728\", label=\"%.0f B\"];\n", j, i,
                  value_bytes(it->u.value));
        else
          fprintf(f, "  n%d -> n%d;\n", j, i);
      }
    }
  }
  fprintf(f, "}\n");
  return fclose(f) == 0 ? 0 : 1;
}

/* The last backend of the mixture: the reference backend, which joins
 * last when the list does not name it; else the list's last. */
static const char *last_backend(const char *list) {
  static char last[128];
  char names[512];
  snprintf(names, sizeof names, "%s", list);
  bool has_ref = false;
  for (char *save = NULL, *name = strtok_r(names, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
    has_ref |= !strcasecmp(name, "ref");
    snprintf(last, sizeof last, "%s", name);
  }
  if (!has_ref) snprintf(last, sizeof last, "ref");
  return last;
}

/* Each node the last backend got, with one line per earlier backend
 * saying why that one did not. */
static void print_reasons(const alloy_mixture *m, const char *last) {
  const alloy_graph *g = alloy_mixture_graph(m);
  int n = alloy_graph_num_nodes(g), shown = 0;
  for (int i = 0; i < n; i++) {
    alloy_partition_info pi = {.struct_size = sizeof pi};
    alloy_mixture_partition_info(m, alloy_mixture_node_partition(m, i), &pi);
    const char *why = alloy_mixture_node_reason(m, i);
    if (strcasecmp(pi.backend, last) || !why || !*why) continue;
    if (!shown++) printf("nodes left to %s, and why:\n", last);
    const alloy_node *node = alloy_graph_node(g, i);
    printf("  node %d %s (%s)\n", i,
           alloy_node_num_outputs(node) ? alloy_value_name(alloy_node_output(node, 0)) : "",
           alloy_op_name(alloy_node_op(node)));
    for (const char *line = why; *line;) {
      const char *end = strchr(line, '\n');
      int len = end ? (int)(end - line) : (int)strlen(line);
      printf("      %.*s\n", len, line);
      line += len + (end != NULL);
    }
  }
}

/* Runs Graphviz's dot without a shell. */
static int write_svg(const char *dot_path, const char *svg_path) {
  char out[4096];
  snprintf(out, sizeof out, "-o%s", svg_path);
  char *argv[] = {"dot", "-Tsvg", out, (char *)dot_path, NULL};
  pid_t pid;
  if (posix_spawnp(&pid, "dot", NULL, NULL, argv, environ) != 0) {
    fprintf(stderr, "alloy partition: Graphviz's dot is not installed (make deps installs graphviz); "
                    "the picture is in %s\n", dot_path);
    return 1;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "alloy partition: dot failed on %s\n", dot_path);
    return 1;
  }
  return 0;
}

int cmd_partition(int argc, char **argv) {
  const char *model = NULL, *list = NULL, *inputs = NULL, *dot = NULL, *svg = NULL, *dec = NULL,
             *cost = NULL;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    const char **slot = !strcmp(a, "--backends")     ? &list
                        : !strcmp(a, "--inputs")     ? &inputs
                        : !strcmp(a, "--dot")        ? &dot
                        : !strcmp(a, "--svg")        ? &svg
                        : !strcmp(a, "--decompose")  ? &dec
                        : !strcmp(a, "--cost-model") ? &cost
                                                     : NULL;
    if (slot && i + 1 < argc) *slot = argv[++i];
    else if (!slot && a[0] != '-' && !model) model = a;
    else return tool_bad_arg("partition", a, slot != NULL);
  }
  if (!model) return tool_missing("partition", "which model? alloy partition MODEL --backends a,b");
  if (!list) return tool_missing("partition", "--backends a,b is required");
  alloy_program_options po = {.struct_size = sizeof po};
  if (dec) po.decompose = !strcmp(dec, "prims") ? ALLOY_DECOMPOSE_PRIMS : ALLOY_DECOMPOSE_CORE;
  if (cost && !strcmp(cost, "free")) po.partition_launch_s = po.link_bytes_per_s = -1;
  alloy_model *m = NULL;
  alloy_runtime *rt = NULL;
  alloy_mixture *mix = NULL;
  alloy_safetensors *st = NULL;
  alloy_error *e = alloy_model_load(model, &m);
  if (!e) e = tool_runtime_open(list, &rt);
  int idx[16], nb = 0;
  char names[512];
  snprintf(names, sizeof names, "%s", list);
  for (char *save = NULL, *name = strtok_r(names, ",", &save); name && nb < 16 && !e;
       name = strtok_r(NULL, ",", &save))
    if ((idx[nb++] = alloy_runtime_find_backend(rt, name)) < 0)
      e = alloy_error_new(ALLOY_ERR_NOT_FOUND, "no usable backend '%s' (see alloy backends)", name);
  if (!e) e = alloy_mixture_compile(rt, idx, nb, alloy_model_graph(m), &po, &mix);
  /* A symbolic model is partitioned for the sizes of --inputs. */
  if (!e && alloy_mixture_num_partitions(mix) == 0) {
    int nin = alloy_graph_num_inputs(alloy_model_graph(m)), nuser = alloy_model_num_user_inputs(m);
    alloy_host_tensor *user = calloc((size_t)nuser + 1, sizeof *user);
    alloy_host_tensor *ins = calloc((size_t)nin + 1, sizeof *ins);
    if (!inputs)
      e = alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                          "%s has symbolic sizes: give --inputs X.safetensors to partition it for "
                          "those sizes", model);
    else e = alloy_safetensors_open(inputs, &st);
    for (int i = 0; i < nuser && !e; i++) {
      char key[32];
      snprintf(key, sizeof key, "input%d", i);
      const alloy_st_entry *en = alloy_safetensors_find(st, key);
      if (!en) e = alloy_error_new(ALLOY_ERR_NOT_FOUND, "%s has no tensor %s", inputs, key);
      else user[i] = (alloy_host_tensor){sizeof user[i], en->dtype, en->rank, en->shape, (void *)en->data};
    }
    if (!e) e = alloy_model_bind_inputs(m, user, nuser, ins, nin);
    if (!e) e = alloy_mixture_prepare(mix, ins, nin);
    free(user);
    free(ins);
  }
  int status = 0;
  if (e) {
    fprintf(stderr, "alloy partition: %s\n", alloy_error_message(e));
    alloy_error_free(e);
    status = 1;
  } else {
    const alloy_graph *g = alloy_mixture_graph(mix);
    printf("%s: %d nodes over %s, %d partitions\n", model, alloy_graph_num_nodes(g), list,
           alloy_mixture_num_partitions(mix));
    double total = 0, moved = 0;
    for (int q = 0; q < alloy_mixture_num_partitions(mix); q++) {
      alloy_partition_info pi = {.struct_size = sizeof pi};
      alloy_mixture_partition_info(mix, q, &pi);
      printf("  #%-3d %-10s %4d nodes  %3d inputs  %3d outputs  est %9.1f us  %10.0f bytes in "
             "from other backends\n",
             q, pi.backend, pi.num_nodes, pi.num_inputs, pi.num_outputs, pi.cost * 1e6, pi.bytes_in);
      total += pi.cost;
      moved += pi.bytes_in;
    }
    printf("  total: est %.1f us of compute, %.0f bytes between backends\n", total * 1e6, moved);
    print_reasons(mix, last_backend(list));
    char dot_tmp[4096];
    const char *dot_path = dot;
    if (!dot_path && svg) {
      snprintf(dot_tmp, sizeof dot_tmp, "%s.dot", svg);
      dot_path = dot_tmp;
    }
    if (dot_path) status = write_dot(mix, dot_path);
    if (!status && dot_path) printf("wrote %s\n", dot_path);
    if (!status && svg && !(status = write_svg(dot_path, svg))) printf("wrote %s\n", svg);
  }
  alloy_safetensors_close(st);
  alloy_mixture_release(mix);
  alloy_runtime_close(rt);
  alloy_model_free(m);
  return status;
}
