/*
 * sdk/tools/run.c: the model commands of the `alloy` tool.
 *
 *   alloy run MODEL [--inputs X.safetensors] [--outputs Y.safetensors]
 *             [--check Z.safetensors] [--backends a,b] [--batch N[,N...]]
 *             [--repeat N] [--stats] [--trace FILE] [--backend-opt NAME.KEY=VALUE]...
 *             [--isolate [--isolate-timeout SECONDS]]
 *   alloy convert MODEL OUT.air [--weights W.safetensors]
 *   alloy check MODEL.pt2
 *
 * MODEL is a torch.export .pt2 archive or .air text. User inputs are the
 * tensors input0, input1, ... of --inputs; user outputs are written and
 * checked as output0, output1, ... (the names of the golden corpus's
 * NAME.io.safetensors). --batch runs the model once per size N from one
 * import, with every user input's first dimension resized to N by cycling
 * its rows (and the --check tensors the same way): since the samples of a
 * batch are independent, this checks a dynamic-shape model at sizes PyTorch
 * did not record. The model's weights are bound when it is compiled, so
 * what depends only on them is folded once and each backend receives them
 * once. --repeat runs each size N times; --stats prints, per run, what
 * moved between the host and the backends (from alloy_run_stats);
 * --trace writes a Chrome trace of the whole command; --backend-opt passes
 * an option to a backend (repeatable). --isolate runs every plugin in a
 * process of its own (isolate.c), so that one that crashes, hangs or exits
 * is reported by name; a wait on one is bounded by --isolate-timeout
 * (60 s). Everything else works with it but --trace, whose ranges would be
 * spread over several processes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "alloy/model.h"
#include "alloy/runtime.h"
#include "alloy/safetensors.h"
#include "conformance/compare.h"
#include "sdk/tools/commands.h"
#include "sdk/tools/isolate.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int report(const char *cmd, alloy_error *e) {
  fprintf(stderr, "alloy %s: %s\n", cmd, alloy_error_message(e));
  alloy_error_free(e);
  return 1;
}


/* A tensor with dim 0 resized to n by cycling rows: sizes and data owned. */
typedef struct resized {
  alloy_host_tensor t;
  int64_t sizes[ALLOY_MAX_RANK];
  void *data;
} resized;

/* The largest --batch: far past any real batch, and small enough that
 * rows times it cannot overflow before the allocation is refused. */
#define RUN_MAX_BATCH ((int64_t)INT32_MAX)

static bool resize_rows(const alloy_host_tensor *src, int64_t n, resized *out) {
  memset(out, 0, sizeof *out);
  out->t = *src;
  memcpy(out->sizes, src->sizes, sizeof *out->sizes * (size_t)src->rank);
  out->t.sizes = out->sizes;
  if (src->rank == 0 || n < 0) return true; /* nothing to resize */
  if (n > RUN_MAX_BATCH) return false;
  size_t row = alloy_dtype_size(src->dtype), bytes;
  for (int d = 1; d < src->rank; d++)
    if (src->sizes[d] < 0 || __builtin_mul_overflow(row, (size_t)src->sizes[d], &row)) return false;
  int64_t have = src->sizes[0];
  if (have == 0) return n == 0;
  /* Past the machine's memory, malloc could only fail (or, under a
   * sanitizer, abort). */
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  size_t memory = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : SIZE_MAX / 2;
  if (__builtin_mul_overflow(row, (size_t)n, &bytes) || bytes > memory) return false;
  out->sizes[0] = n;
  if (!(out->data = malloc(bytes + 1))) return false;
  for (int64_t r = 0; r < n; r++)
    memcpy((char *)out->data + row * (size_t)r, (const char *)src->data + row * (size_t)(r % have),
           row);
  out->t.data = out->data;
  return true;
}

static alloy_host_tensor entry_tensor(const alloy_st_entry *e) {
  return (alloy_host_tensor){.struct_size = sizeof(alloy_host_tensor), .dtype = e->dtype,
                             .rank = e->rank, .sizes = e->shape, .data = (void *)e->data};
}

/* What runs the model: one program on one backend, a mixture of several
 * (--backends a,b), or either with every plugin in a process of its own
 * (--isolate). */
typedef struct runner {
  alloy_program *prog;
  alloy_mixture *mix;
  isolate *iso;
  alloy_program_options iso_options; /* what iso reads for its life */
  alloy_host_tensor *iso_weights;
  const char *used; /* the single backend's name */
} runner;

typedef struct run_opts {
  const char *model, *inputs, *outputs, *check, *backends, *batch, *decompose, *cost, *repeat,
      *trace;
  bool stats, isolate;
  double isolate_timeout;
  alloy_option opts[32]; /* --backend-opt, split at '=' (strings point into argv) */
  int nopts;
} run_opts;

/* The model's weights, by graph input, to bind at compile (data NULL for
 * user inputs). */
static alloy_host_tensor *model_weights(alloy_model *m) {
  alloy_graph *g = alloy_model_graph(m);
  int nin = alloy_graph_num_inputs(g);
  alloy_host_tensor *w = calloc((size_t)nin + 1, sizeof *w);
  for (int i = 0; w && i < nin; i++) {
    const char *name = NULL;
    w[i].struct_size = ALLOY_STRUCT_SIZE(alloy_host_tensor, data);
    if (alloy_graph_input_role(g, i, &name) != ALLOY_INPUT_USER && name)
      alloy_model_find_weight(m, name, &w[i]);
  }
  return w;
}

/* Several backends listed: a mixture partitioned over them (the reference
 * backend joins last). One, or none: a program on the first backend that
 * runs the whole graph, the reference backend last. */
static alloy_error *compile_on(alloy_runtime *rt, const char *list, alloy_model *model,
                               alloy_decompose_level level, bool free_moves, const run_opts *o,
                               runner *r) {
  alloy_graph *g = alloy_model_graph(model);
  alloy_host_tensor *weights = model_weights(model);
  if (!weights) return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  alloy_program_options po = {.struct_size = ALLOY_PROGRAM_OPTIONS_STRUCT_SIZE, .decompose = level,
                              .weights = weights, .num_weights = alloy_graph_num_inputs(g),
                              .backend_options = o->opts, .num_backend_options = o->nopts};
  alloy_error *e = NULL;
  if (free_moves) po.partition_launch_s = po.link_bytes_per_s = -1;
  if (o->isolate) {
    /* The children read the options, weights included, for the whole run. */
    r->iso_options = po;
    r->iso_weights = weights;
    r->iso_options.weights = weights;
    isolate_config c = {.list = list, .graph = g, .options = &r->iso_options,
                        .timeout_s = o->isolate_timeout};
    e = isolate_open(rt, &c, &r->iso);
    r->used = r->iso ? isolate_backend(r->iso) : NULL;
    return e;
  }
  char names[512];
  snprintf(names, sizeof names, "%s", list ? list : "");
  int idx[16], n = 0;
  for (char *save = NULL, *name = strtok_r(names, ",", &save); name && n < 16 && !e;
       name = strtok_r(NULL, ",", &save)) {
    if ((idx[n++] = alloy_runtime_find_backend(rt, name)) < 0)
      e = alloy_error_new(ALLOY_ERR_NOT_FOUND, "no usable backend '%s' (see alloy backends)", name);
  }
  if (e || n >= 2) {
    if (!e) e = alloy_mixture_compile(rt, idx, n, g, &po, &r->mix);
    free(weights);
    return e;
  }
  int ref = alloy_runtime_find_backend(rt, "ref");
  if (n == 0 || idx[0] != ref) idx[n++] = ref;
  alloy_error *last = NULL;
  for (int k = 0; k < n; k++) {
    if (last) {
      fprintf(stderr, "alloy run: passing over a backend: %s\n", alloy_error_message(last));
      alloy_error_free(last);
    }
    if (!(last = alloy_program_compile_ex(rt, idx[k], g, &po, &r->prog))) {
      alloy_backend_info info = {.struct_size = sizeof info};
      alloy_runtime_backend_info(rt, idx[k], &info);
      r->used = info.name;
      break;
    }
  }
  free(weights);
  return last;
}

/* Without --backends or $ALLOY_BACKENDS, the shipped backends that found a
 * device come first, in DESIGN.md's order (cuda, hip, then cpu), and ref
 * last: "cuda,ref" on a GPU machine; NULL (ref alone) where none did. */
static const char *default_backends(alloy_runtime *rt, char *buf, size_t cap) {
  static const char *const shipped[] = {"cuda", "hip", "cpu"};
  size_t len = 0;
  buf[0] = 0;
  for (size_t k = 0; k < sizeof shipped / sizeof *shipped; k++) {
    int i = alloy_runtime_find_backend(rt, shipped[k]);
    if (i < 0) continue;
    alloy_backend_info info = {.struct_size = sizeof info};
    alloy_runtime_backend_info(rt, i, &info);
    if (info.ok && info.num_devices > 0 && len + strlen(shipped[k]) + 6 < cap)
      len += (size_t)snprintf(buf + len, cap - len, "%s,", shipped[k]);
  }
  if (!len) return NULL;
  snprintf(buf + len, cap - len, "ref");
  return buf;
}

/* Nodes of the graph that runs, after decomposition (-1: not known yet). */
static int runner_nodes(const runner *r) {
  if (r->iso) return isolate_num_nodes(r->iso);
  return alloy_graph_num_nodes(r->mix ? alloy_mixture_graph(r->mix) : alloy_program_graph(r->prog));
}

static void stats_of(const runner *rn, alloy_run_stats *s) {
  s->struct_size = ALLOY_RUN_STATS_STRUCT_SIZE;
  if (rn->iso) isolate_stats(rn->iso, s);
  else if (rn->prog) alloy_program_stats(rn->prog, s);
  else alloy_mixture_stats(rn->mix, s);
}

/* What one run moved: the difference of the counters around it. */
static void print_stats(const alloy_run_stats *a, const alloy_run_stats *b) {
  uint64_t parts = b->partitions_run - a->partitions_run;
  printf("    moved: weights in %llu B, inputs in %llu B, outputs out %llu B, between backends "
         "%llu B (%llu B staged), same-backend host round trips %llu\n",
         (unsigned long long)(b->weight_bytes_in - a->weight_bytes_in),
         (unsigned long long)(b->input_bytes_in - a->input_bytes_in),
         (unsigned long long)(b->output_bytes_out - a->output_bytes_out),
         (unsigned long long)(b->cross_bytes - a->cross_bytes),
         (unsigned long long)(b->staged_bytes - a->staged_bytes),
         (unsigned long long)(b->same_backend_round_trips - a->same_backend_round_trips));
  printf("    %llu partitions, %llu host waits, host time %.1f us (%.2f us per partition), arena %llu B "
         "(ideal %llu B)\n", (unsigned long long)parts,
         (unsigned long long)(b->host_waits - a->host_waits), (b->dispatch_s - a->dispatch_s) * 1e6,
         parts ? (b->dispatch_s - a->dispatch_s) * 1e6 / (double)parts : 0.0,
         (unsigned long long)b->arena_bytes, (unsigned long long)b->arena_ideal_bytes);
}

/* N for a tensor named "outputN" (N in decimal, no leading zero; huge N
 * stays huge), else -1. */
static int output_index(const char *name) {
  if (strncmp(name, "output", 6) || !name[6] || (name[6] == '0' && name[7])) return -1;
  long v = 0;
  for (const char *p = name + 6; *p; p++) {
    if (*p < '0' || *p > '9') return -1;
    if (v < 100000000) v = v * 10 + (*p - '0'); /* past it: more than any model has */
  }
  return (int)v;
}

/* Runs the model once with the user inputs resized to batch (-1: as given)
 * and checks, writes and prints the outputs. Returns the number of failed
 * checks, or -1 on error (reported). */
static int run_once(const run_opts *o, alloy_model *m, runner *rn,
                    const alloy_safetensors *in, const alloy_safetensors *check, int64_t batch,
                    double *compile_ms) {
  alloy_graph *g = alloy_model_graph(m);
  int nuser = alloy_model_num_user_inputs(m), nin = alloy_graph_num_inputs(g);
  int nout = alloy_graph_num_outputs(g), failed = 0;
  resized *user = calloc((size_t)(nuser ? nuser : 1), sizeof *user);
  alloy_host_tensor *users = calloc((size_t)(nuser ? nuser : 1), sizeof *users);
  alloy_host_tensor *ins = calloc((size_t)(nin ? nin : 1), sizeof *ins);
  alloy_host_tensor *outs = calloc((size_t)(nout ? nout : 1), sizeof *outs);
  alloy_st_tensor *written = calloc((size_t)(nout ? nout : 1), sizeof *written);
  char (*names)[32] = calloc((size_t)(nout ? nout : 1), sizeof *names);
  alloy_error *e = NULL;
  if (!user || !users || !ins || !outs || !written || !names)
    e = alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; i < nuser && !e; i++) {
    char key[32];
    snprintf(key, sizeof key, "input%d", i);
    const alloy_st_entry *en = in ? alloy_safetensors_find(in, key) : NULL;
    if (!en) {
      e = alloy_error_new(ALLOY_ERR_NOT_FOUND, "the model takes %d user inputs: %s has no tensor %s",
                          nuser, o->inputs ? o->inputs : "(no --inputs)", key);
      break;
    }
    alloy_host_tensor t = entry_tensor(en);
    if (!resize_rows(&t, batch, &user[i]))
      e = alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                          "%s: cannot resize to batch %lld (no rows to cycle, or more bytes "
                          "than this machine's memory)", key, (long long)batch);
    users[i] = user[i].t;
  }
  if (!e) e = alloy_model_bind_inputs(m, users, nuser, ins, nin);
  double t0 = now_ms();
  if (!e && rn->prog) e = alloy_program_prepare(rn->prog, ins, nin);
  if (!e && rn->iso) e = isolate_prepare(rn->iso, ins, nin);
  double t1 = now_ms();
  *compile_ms += t1 - t0;
  if (!e && batch >= 0) printf("batch %lld\n", (long long)batch);
  int repeat = o->repeat ? atoi(o->repeat) : 1;
  for (int r = 0; r < repeat && !e; r++) {
    alloy_run_stats before, after;
    stats_of(rn, &before);
    double t2 = now_ms();
    e = rn->iso    ? isolate_run(rn->iso, ins, nin, outs, nout)
        : rn->prog ? alloy_program_run(rn->prog, ins, nin, outs, nout)
                   : alloy_mixture_run(rn->mix, ins, nin, outs, nout);
    double t3 = now_ms();
    if (e) break;
    if (repeat > 1) printf("  run %-4d %9.2f ms\n", r + 1, t3 - t2);
    else printf("  run      %9.2f ms\n", t3 - t2);
    stats_of(rn, &after);
    if (o->stats) print_stats(&before, &after);
  }
  if (e) {
    fprintf(stderr, "alloy run: %s\n", alloy_error_message(e));
    alloy_error_free(e);
    failed = -1;
  }
  /* User outputs are numbered among themselves: output0, output1, ... */
  int k = 0;
  for (int i = 0; i < nout && failed >= 0; i++) {
    if (alloy_graph_output_role(g, i, NULL) != ALLOY_OUTPUT_USER) continue;
    snprintf(names[k], sizeof names[k], "output%d", k);
    char shape[160] = "";
    size_t len = 0;
    for (int d = 0; d < outs[i].rank && len < sizeof shape; d++)
      len += (size_t)snprintf(shape + len, sizeof shape - len, d ? ", %lld" : "%lld",
                              (long long)outs[i].sizes[d]);
    printf("  %-8s %s[%s]", names[k], alloy_dtype_short_name(outs[i].dtype), shape);
    const alloy_st_entry *want = check ? alloy_safetensors_find(check, names[k]) : NULL;
    if (check && !want) {
      printf("  FAIL: %s has no tensor %s", o->check, names[k]);
      failed++;
    } else if (want) {
      alloy_host_tensor wt = entry_tensor(want);
      resized r;
      double max_abs = INFINITY, max_rel = INFINITY;
      char why[256] = "cannot resize the expected tensor";
      bool ok = resize_rows(&wt, batch, &r);
      alloy_st_entry wr = *want;
      memcpy(wr.shape, r.sizes, sizeof wr.shape);
      wr.data = r.t.data;
      ok = ok && conform_measure(&outs[i], &wr, conform_model_tolerance(outs[i].dtype), &max_abs, &max_rel,
                                 why, sizeof why);
      free(r.data);
      printf("  max abs err %.3g  max rel err %.3g  %s", max_abs, max_rel, ok ? "PASS" : "FAIL");
      if (!ok) printf(" (%s)", why);
      failed += !ok;
    }
    printf("\n");
    uint64_t numel = 1;
    for (int d = 0; d < outs[i].rank; d++) numel *= (uint64_t)outs[i].sizes[d];
    written[k] = (alloy_st_tensor){.name = names[k], .dtype = outs[i].dtype, .rank = outs[i].rank,
                                   .shape = outs[i].sizes, .data = outs[i].data,
                                   .nbytes = (size_t)numel * alloy_dtype_size(outs[i].dtype)};
    k++;
  }
  /* The expected file must hold no output the model does not produce. */
  for (int i = 0; check && failed >= 0 && i < alloy_safetensors_count(check); i++) {
    const char *name = alloy_safetensors_entry(check, i)->name;
    int idx = output_index(name);
    if (idx >= k) {
      printf("  %-8s FAIL: %s has it, but the model produces %d user output%s\n", name, o->check, k,
             k == 1 ? "" : "s");
      failed++;
    }
  }
  if (check && failed == 0 && k == 0) {
    printf("  FAIL: the model has no user outputs to check against %s\n", o->check);
    failed++;
  }
  if (failed >= 0 && o->outputs && (e = alloy_safetensors_write(o->outputs, written, k))) {
    fprintf(stderr, "alloy run: %s\n", alloy_error_message(e));
    alloy_error_free(e);
    failed = -1;
  }
  for (int i = 0; i < nuser && user; i++) free(user[i].data);
  free(user);
  free(users);
  free(ins);
  free(outs);
  free(written);
  free(names);
  return failed;
}

/* The partition summary of a mixture's last run. */
static void print_partitions(const alloy_mixture *mix, double compile_ms) {
  uint64_t peak, naive;
  alloy_mixture_memory(mix, &peak, &naive);
  printf("  compile  %9.2f ms (partitions are compiled once per set of sizes)\n", compile_ms);
  printf("  %d partitions:\n", alloy_mixture_num_partitions(mix));
  for (int i = 0; i < alloy_mixture_num_partitions(mix); i++) {
    alloy_partition_info pi = {.struct_size = sizeof pi};
    alloy_mixture_partition_info(mix, i, &pi);
    printf("    #%-3d %-10s %4d nodes  %3d in  %3d out  est %8.1f us  %10.0f bytes in from other backends\n",
           i, pi.backend, pi.num_nodes, pi.num_inputs, pi.num_outputs, pi.cost * 1e6, pi.bytes_in);
  }
  printf("  intermediates: %llu bytes of arenas on the backends (the most alive at once: %llu)\n",
         (unsigned long long)peak, (unsigned long long)naive);
  printf("  %d partitions were issued while another backend was still busy\n",
         alloy_mixture_concurrent_runs(mix));
}

static const char *type_text(const alloy_value *v, char *buf, size_t cap);

int cmd_run(int argc, char **argv) {
  run_opts o = {0};
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    const char **slot = !strcmp(a, "--inputs")     ? &o.inputs
                        : !strcmp(a, "--outputs")  ? &o.outputs
                        : !strcmp(a, "--check")    ? &o.check
                        : !strcmp(a, "--backends") ? &o.backends
                        : !strcmp(a, "--batch")    ? &o.batch
                        : !strcmp(a, "--decompose") ? &o.decompose
                        : !strcmp(a, "--cost-model") ? &o.cost
                        : !strcmp(a, "--repeat") ? &o.repeat
                        : !strcmp(a, "--trace") ? &o.trace
                                                   : NULL;
    if (!strcmp(a, "--stats")) {
      o.stats = true;
      continue;
    }
    if (!strcmp(a, "--isolate")) {
      o.isolate = true;
      continue;
    }
    if (!strcmp(a, "--isolate-timeout") && i + 1 < argc) {
      char *end;
      o.isolate_timeout = strtod(argv[++i], &end);
      if (*end || end == argv[i] || !(o.isolate_timeout > 0) || o.isolate_timeout > 1e6) {
        fprintf(stderr, "alloy run: --isolate-timeout takes seconds, more than 0 and at most "
                        "1000000 (got '%s')\n", argv[i]);
        return 2;
      }
      continue;
    }
    if (!strcmp(a, "--backend-opt") && i + 1 < argc) {
      char *kv = argv[++i], *eq = strchr(kv, '=');
      if (!eq || eq == kv || !strchr(kv, '.') || strchr(kv, '.') > eq || o.nopts == 32) {
        fprintf(stderr, "alloy run: --backend-opt takes NAME.KEY=VALUE (got '%s')\n", kv);
        return 2;
      }
      *eq = '\0';
      o.opts[o.nopts++] = (alloy_option){kv, eq + 1};
      continue;
    }
    if (slot && i + 1 < argc) *slot = argv[++i];
    else if (!slot && a[0] != '-' && !o.model) o.model = a;
    else
      return tool_bad_arg("run", a, slot || !strcmp(a, "--isolate-timeout") ||
                                        !strcmp(a, "--backend-opt"));
  }
  if (!o.model) return tool_missing("run", "which model? alloy run MODEL.pt2|MODEL.air [flags]");
  if (o.isolate_timeout && !o.isolate) {
    fprintf(stderr, "alloy run: --isolate-timeout goes with --isolate\n");
    return 2;
  }
  if (o.isolate && o.trace) {
    /* Each plugin records its ranges in its own process: one file could
     * not hold them. */
    fprintf(stderr, "alloy run: --trace cannot be combined with --isolate (the plugins run in "
                    "other processes); trace without --isolate\n");
    return 2;
  }
  if (!o.isolate_timeout) o.isolate_timeout = 60;
  if (o.repeat && atoi(o.repeat) < 1) {
    fprintf(stderr, "alloy run: --repeat takes a count of at least 1 (got '%s')\n", o.repeat);
    return 2;
  }
  if (!o.backends) o.backends = getenv("ALLOY_BACKENDS");
  alloy_decompose_level level = ALLOY_DECOMPOSE_AUTO;
  if (o.decompose && !strcmp(o.decompose, "core")) level = ALLOY_DECOMPOSE_CORE;
  else if (o.decompose && !strcmp(o.decompose, "prims")) level = ALLOY_DECOMPOSE_PRIMS;
  else if (o.decompose) {
    fprintf(stderr, "alloy run: --decompose takes core or prims\n");
    return 2;
  }
  alloy_model *m = NULL;
  alloy_runtime *rt = NULL;
  runner rn = {0};
  alloy_safetensors *in = NULL, *check = NULL;
  double t0 = now_ms();
  alloy_error *e = alloy_model_load(o.model, &m);
  double t1 = now_ms();
  if (!e && !o.inputs && alloy_model_num_user_inputs(m) > 0) {
    /* Say what the model takes, before loading any backend. */
    alloy_graph *g = alloy_model_graph(m);
    char list[1024] = "";
    size_t len = 0;
    int k = 0, nuser = alloy_model_num_user_inputs(m);
    for (int i = 0; i < alloy_graph_num_inputs(g) && len < sizeof list; i++) {
      if (alloy_graph_input_role(g, i, NULL) != ALLOY_INPUT_USER) continue;
      char type[256];
      if (k == 4 && nuser > 5) {
        len += (size_t)snprintf(list + len, sizeof list - len, ", ... %d more", nuser - k);
        break;
      }
      len += (size_t)snprintf(list + len, sizeof list - len, "%sinput%d: %s", k ? ", " : "", k,
                              type_text(alloy_graph_input(g, i), type, sizeof type));
      k++;
    }
    fprintf(stderr, "alloy run: %s takes %d input%s (%s): pass --inputs FILE.safetensors with "
                    "tensors input0%s\n", o.model, nuser, nuser == 1 ? "" : "s", list,
            nuser > 1 ? ", input1, ..." : "");
    alloy_model_free(m);
    return 2;
  }
  if (!e && o.inputs) e = alloy_safetensors_open(o.inputs, &in);
  if (!e && o.check) e = alloy_safetensors_open(o.check, &check);
  /* Only those asked for (and ref); isolated, none here but ref. */
  bool here_ref_only = o.isolate;
  if (o.isolate && !isolate_wanted(o.backends)) {
    fprintf(stderr, "alloy run: --isolate: no plugin is asked for (only the reference backend, "
                    "which runs in this process)\n");
    o.isolate = false;
  }
  if (!e) e = here_ref_only ? isolate_runtime_open(&rt) : tool_runtime_open(o.backends, &rt);
  double t2 = now_ms();
  if (o.cost && strcmp(o.cost, "free") && strcmp(o.cost, "default")) {
    fprintf(stderr, "alloy run: --cost-model takes default or free\n");
    alloy_model_free(m);
    alloy_runtime_close(rt);
    alloy_safetensors_close(in);
    alloy_safetensors_close(check);
    return 2;
  }
  char defaults[64];
  if (!e && !o.backends && !o.isolate) o.backends = default_backends(rt, defaults, sizeof defaults);
  if (!e && o.trace) e = alloy_trace_start();
  if (!e) e = compile_on(rt, o.backends, m, level, o.cost && !strcmp(o.cost, "free"), &o, &rn);
  double compile_ms = now_ms() - t2;
  int status = 0, failed = 0;
  if (e) {
    status = report("run", e);
  } else {
    alloy_graph *g = alloy_model_graph(m);
    bool several = rn.mix || (rn.iso && !rn.used);
    printf("%s: %d nodes, %d weights, %s %s", o.model, alloy_graph_num_nodes(g),
           alloy_model_num_weights(m), several ? "backends" : "backend", several ? o.backends : rn.used);
    if (runner_nodes(&rn) >= 0 && runner_nodes(&rn) != alloy_graph_num_nodes(g))
      printf(" (%d nodes after decomposition)", runner_nodes(&rn));
    if (rn.iso) printf(", isolated (each plugin in a process of its own)");
    printf("\n");
    printf("  import   %9.2f ms\n", t1 - t0);
    char sizes[256];
    snprintf(sizes, sizeof sizes, "%s", o.batch ? o.batch : "-1");
    for (char *save = NULL, *b = strtok_r(sizes, ",", &save); b && failed >= 0;
         b = strtok_r(NULL, ",", &save)) {
      char *end;
      long long n = strtoll(b, &end, 10);
      if (*end || end == b || (o.batch && (n < 0 || n > RUN_MAX_BATCH))) {
        fprintf(stderr, "alloy run: --batch takes sizes like 1,2,7,64, from 0 to %lld (got '%s')\n",
                (long long)RUN_MAX_BATCH, b);
        status = 2;
        break;
      }
      int f = run_once(&o, m, &rn, in, check, n, &compile_ms);
      failed = f < 0 ? -1 : failed + f;
    }
    alloy_cache_stats cs;
    alloy_runtime_cache_stats(rt, &cs);
    printf("  compile cache: %llu hits, %llu from disk, %llu misses\n", (unsigned long long)cs.hits,
           (unsigned long long)cs.disk_hits, (unsigned long long)cs.misses);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    if (rn.iso)
      isolate_print_summary(rn.iso, compile_ms, stdout);
    else if (rn.prog)
      printf("  compile  %9.2f ms (%d specialization%s)\n", compile_ms,
             alloy_program_num_specializations(rn.prog),
             alloy_program_num_specializations(rn.prog) == 1 ? "" : "s");
    else
      print_partitions(rn.mix, compile_ms);
    printf("  peak memory %.1f MiB (resident)\n", ru.ru_maxrss / 1024.0);
    if (failed < 0) status = 1;
    else if (failed) status = 1, printf("%d output check%s FAILED\n", failed, failed == 1 ? "" : "s");
    else if (check) printf("all outputs PASS\n");
  }
  alloy_program_release(rn.prog);
  alloy_mixture_release(rn.mix);
  alloy_error *ie = isolate_close(rn.iso);
  if (ie) status = report("run", ie);
  free(rn.iso_weights);
  alloy_runtime_close(rt);
  if (o.trace) {
    alloy_error *te = alloy_trace_stop(o.trace);
    if (te) status = report("run", te);
    else printf("trace written to %s\n", o.trace);
  }
  alloy_safetensors_close(in);
  alloy_safetensors_close(check);
  alloy_model_free(m);
  return status;
}

int cmd_convert(int argc, char **argv) {
  const char *model = NULL, *air = NULL, *weights = NULL;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--weights") && i + 1 < argc) weights = argv[++i];
    else if (argv[i][0] != '-' && !model) model = argv[i];
    else if (argv[i][0] != '-' && !air) air = argv[i];
    else return tool_bad_arg("convert", argv[i], !strcmp(argv[i], "--weights"));
  }
  if (!model || !air) return tool_missing("convert", "alloy convert MODEL OUT.air needs both files");
  /* OUT.air's weights go to OUT.safetensors unless named. */
  char derived[4096];
  if (!weights) {
    size_t n = strlen(air);
    if (n > 4 && !strcmp(air + n - 4, ".air")) n -= 4;
    snprintf(derived, sizeof derived, "%.*s.safetensors", (int)n, air);
    weights = derived;
  }
  alloy_model *m = NULL;
  alloy_error *e = alloy_model_load(model, &m);
  if (!e) e = alloy_model_save_air(m, air, weights);
  if (!e) printf("wrote %s and %s (%d nodes, %d weights)\n", air, weights,
                 alloy_graph_num_nodes(alloy_model_graph(m)), alloy_model_num_weights(m));
  alloy_model_free(m);
  return e ? report("convert", e) : 0;
}

/* "f32[s77, 3, 16, 16]" into buf. */
static const char *type_text(const alloy_value *v, char *buf, size_t cap) {
  size_t len = (size_t)snprintf(buf, cap, "%s[", alloy_dtype_short_name(alloy_value_dtype(v)));
  for (int d = 0; d < alloy_value_rank(v) && len < cap; d++) {
    char dim[96];
    alloy_dim_print(alloy_value_shape(v)[d], dim, sizeof dim);
    len += (size_t)snprintf(buf + len, cap - len, d ? ", %s" : "%s", dim);
  }
  if (len < cap) snprintf(buf + len, cap - len, "]");
  return buf;
}

/* One line per input and output, and how often each op appears. */
int cmd_check_model(const char *path) {
  alloy_model *m = NULL;
  double t0 = now_ms();
  alloy_error *e = alloy_model_load(path, &m);
  double t1 = now_ms();
  if (!e) e = alloy_graph_verify(alloy_model_graph(m));
  if (e) {
    alloy_model_free(m);
    return report("check", e);
  }
  alloy_graph *g = alloy_model_graph(m);
  static const char *const in_roles[] = {"input", "parameter", "buffer", "constant"};
  static const char *const out_roles[] = {"output", "buffer mutation", "input mutation"};
  alloy_symtab *st = alloy_graph_symtab(g);
  for (int i = 0; i < alloy_symtab_count(st); i++) {
    int64_t lo, hi;
    if (alloy_symtab_is_unbacked(st, i)) continue;
    alloy_symtab_range(st, i, &lo, &hi);
    printf("symbol %s in [%lld, %s%lld]\n", alloy_symtab_name(st, i), (long long)lo,
           hi == ALLOY_SYM_INF ? "inf" : "", hi == ALLOY_SYM_INF ? 0LL : (long long)hi);
  }
  int nweights = 0;
  for (int i = 0; i < alloy_graph_num_inputs(g); i++) {
    const char *name;
    alloy_input_role r = alloy_graph_input_role(g, i, &name);
    if (r != ALLOY_INPUT_USER) {
      nweights++;
      continue;
    }
    alloy_value *v = alloy_graph_input(g, i);
    char shape[256];
    printf("%-9s %%%s: %s\n", in_roles[r], alloy_value_name(v), type_text(v, shape, sizeof shape));
  }
  printf("weights   %d inputs read weights (%d tensors in the file)\n", nweights,
         alloy_model_num_weights(m));
  for (int i = 0; i < alloy_graph_num_outputs(g); i++) {
    const char *name;
    alloy_output_role r = alloy_graph_output_role(g, i, &name);
    alloy_value *v = alloy_graph_output(g, i);
    char shape[256];
    printf("%-9s %%%s: %s%s%s\n", out_roles[r], alloy_value_name(v),
           type_text(v, shape, sizeof shape), name ? " -> " : "", name ? name : "");
  }
  /* The op histogram, most frequent first. */
  int n = alloy_graph_num_nodes(g), nops = 0;
  const alloy_op **ops = calloc((size_t)(n ? n : 1), sizeof *ops);
  int *counts = calloc((size_t)(n ? n : 1), sizeof *counts);
  for (int i = 0; ops && counts && i < n; i++) {
    const alloy_op *op = alloy_node_op(alloy_graph_node(g, i));
    int k = 0;
    while (k < nops && ops[k] != op) k++;
    if (k == nops) ops[nops++] = op;
    counts[k]++;
  }
  for (int a = 0; a < nops; a++)
    for (int b = a + 1; b < nops; b++)
      if (counts[b] > counts[a] || (counts[b] == counts[a] &&
                                    strcmp(alloy_op_name(ops[b]), alloy_op_name(ops[a])) < 0)) {
        const alloy_op *t = ops[a];
        int c = counts[a];
        ops[a] = ops[b], counts[a] = counts[b];
        ops[b] = t, counts[b] = c;
      }
  for (int k = 0; k < nops; k++) printf("%6d  %s\n", counts[k], alloy_op_name(ops[k]));
  printf("# ok: %d nodes, %d ops, imported in %.2f ms\n", n, nops, t1 - t0);
  free(ops);
  free(counts);
  alloy_model_free(m);
  return 0;
}
