/*
 * conformance/graphs.c: the graph-level tests of `alloy conform`.
 *
 * Op samples check each op alone; a backend that fuses, tiles or partitions
 * can still go wrong where ops meet. These tests are small graphs in the
 * shapes real models take (a pointwise chain into a reduction, layer norm
 * and softmax written out from pieces, attention, conv + batch norm + relu,
 * a residual MLP block, views feeding pointwise ops), written in .air and
 * embedded here so that an installed `alloy` runs them without the repo.
 * Each runs on the backend alone and beside the reference backend (so the
 * partitioner cuts the graph where the backend stops claiming), and its
 * outputs are compared with the reference backend's on the same inputs.
 *
 * Graphs with a symbolic batch are compiled once and run at several batch
 * sizes, each checked against the reference backend compiled the same way:
 * that is what a shape-polymorphic compile has to get right.
 *
 * With --golden DIR, each torch.export model in DIR/models becomes a test
 * too, checked against the outputs PyTorch recorded; a model exported with a
 * symbolic batch also runs at batch 1, its inputs and expected outputs cut
 * to their first row (the samples of a batch are independent).
 */
#include <dirent.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/model.h"
#include "alloy/runtime.h"
#include "alloy/safetensors.h"
#include "conformance/compare.h"
#include "conformance/suite.h"

/* ---- the graphs ---------------------------------------------------------- */

/* A graph test. inputs has one letter per graph input saying how its values
 * are drawn: 'n' uniform in [-2, 2]; 'w' a weight, uniform in [-0.25, 0.25]
 * (scaled down as nn.Linear's init scales by fan-in, so that activations
 * stay near 1: with [-2, 2] weights, attention logits grow into the
 * hundreds and a float32 backend's rounding, amplified by exp, leaves the
 * tolerance); 'p' uniform in [0.5, 2] (a variance). The outputs are held
 * to the per-dtype tolerances of op samples: the graphs are small enough
 * that rounding differences stay within them. sizes: for a graph with a
 * symbol, the values it runs at (ending at 0); none for a graph without. */
typedef struct graph_case {
  const char *name;
  const char *inputs;
  int64_t sizes[6];
  const char *air;
} graph_case;

static const graph_case cases[] = {
    /* mm, a broadcast bias, relu and a gate of pointwise ops, with an
     * intermediate that is also an output: only the ops every starting
     * backend has (plugins/example claims all of them), so that a backend
     * compiles a whole multi-node graph itself. */
    {"graph.mm_pointwise", "nwnn", {0},
     "input %x: f32[8, 16]\n"
     "input %w: f32[16, 24]\n"
     "input %b: f32[24]\n"
     "input %g: f32[8, 24]\n"
     "%mm = aten.mm.default(%x, %w) : f32[8, 24]\n"
     "%h = aten.add.Tensor(%mm, %b) : f32[8, 24]\n"
     "%r = aten.relu.default(%h) : f32[8, 24]\n"
     "%ng = aten.neg.default(%g) : f32[8, 24]\n"
     "%en = aten.exp.default(%ng) : f32[8, 24]\n"
     "%ep = aten.exp.default(%g) : f32[8, 24]\n"
     "%den = aten.add.Tensor(%ep, %en) : f32[8, 24]\n"
     "%gate = aten.div.Tensor(%r, %den) : f32[8, 24]\n"
     "%y = aten.sub.Tensor(%gate, %g, alpha=0.5) : f32[8, 24]\n"
     "output %y, %r\n"},
    /* x * w + b -> gelu -> sum: the pointwise chain a fuser folds into the
     * reduction after it. */
    {"graph.pointwise_sum", "nwn", {0},
     "input %x: f32[8, 32]\n"
     "input %w: f32[32]\n"
     "input %b: f32[32]\n"
     "%mul = aten.mul.Tensor(%x, %w) : f32[8, 32]\n"
     "%add = aten.add.Tensor(%mul, %b) : f32[8, 32]\n"
     "%gelu = aten.gelu.default(%add) : f32[8, 32]\n"
     "%sum = aten.sum.dim_IntList(%gelu, [1]) : f32[8]\n"
     "output %sum\n"},
    /* Layer norm as a decomposition writes it: two reductions, their
     * broadcasts back, a scalar operand (eps) and rsqrt. */
    {"graph.layer_norm", "nnn", {0},
     "input %x: f32[4, 16, 64]\n"
     "input %gamma: f32[64]\n"
     "input %beta: f32[64]\n"
     "%mean = aten.mean.dim(%x, [-1], true) : f32[4, 16, 1]\n"
     "%xc = aten.sub.Tensor(%x, %mean) : f32[4, 16, 64]\n"
     "%sq = aten.pow.Tensor_Scalar(%xc, 2) : f32[4, 16, 64]\n"
     "%var = aten.mean.dim(%sq, [-1], true) : f32[4, 16, 1]\n"
     "%veps = aten.add.Tensor(%var, 1e-05) : f32[4, 16, 1]\n"
     "%rstd = aten.rsqrt.default(%veps) : f32[4, 16, 1]\n"
     "%norm = aten.mul.Tensor(%xc, %rstd) : f32[4, 16, 64]\n"
     "%scaled = aten.mul.Tensor(%norm, %gamma) : f32[4, 16, 64]\n"
     "%y = aten.add.Tensor(%scaled, %beta) : f32[4, 16, 64]\n"
     "output %y\n"},
    /* Softmax from its pieces, over the last dim of three. */
    {"graph.softmax", "n", {0},
     "input %x: f32[6, 10, 24]\n"
     "%max = aten.amax.default(%x, [2], true) : f32[6, 10, 1]\n"
     "%shift = aten.sub.Tensor(%x, %max) : f32[6, 10, 24]\n"
     "%e = aten.exp.default(%shift) : f32[6, 10, 24]\n"
     "%sum = aten.sum.dim_IntList(%e, [2], true) : f32[6, 10, 1]\n"
     "%y = aten.div.Tensor(%e, %sum) : f32[6, 10, 24]\n"
     "output %y\n"},
    /* Attention over 4 heads of 8 as torch.export spells it with bmm: the
     * heads are split by view and permute, folded into the batch by
     * reshape (a copy, since the permuted tensor is not contiguous). */
    {"graph.attention", "nnn", {0},
     "input %q: f32[2, 8, 32]\n"
     "input %k: f32[2, 8, 32]\n"
     "input %v: f32[2, 8, 32]\n"
     "%qh = aten.view.default(%q, [2, 8, 4, 8]) : f32[2, 8, 4, 8]\n"
     "%kh = aten.view.default(%k, [2, 8, 4, 8]) : f32[2, 8, 4, 8]\n"
     "%vh = aten.view.default(%v, [2, 8, 4, 8]) : f32[2, 8, 4, 8]\n"
     "%qp = aten.permute.default(%qh, [0, 2, 1, 3]) : f32[2, 4, 8, 8]\n"
     "%kt = aten.permute.default(%kh, [0, 2, 3, 1]) : f32[2, 4, 8, 8]\n"
     "%vp = aten.permute.default(%vh, [0, 2, 1, 3]) : f32[2, 4, 8, 8]\n"
     "%q3 = aten.reshape.default(%qp, [8, 8, 8]) : f32[8, 8, 8]\n"
     "%k3 = aten.reshape.default(%kt, [8, 8, 8]) : f32[8, 8, 8]\n"
     "%v3 = aten.reshape.default(%vp, [8, 8, 8]) : f32[8, 8, 8]\n"
     "%s = aten.bmm.default(%q3, %k3) : f32[8, 8, 8]\n"
     "%scaled = aten.mul.Tensor(%s, 0.35355339059327373) : f32[8, 8, 8]\n"
     "%p = aten._softmax.default(%scaled, -1, false) : f32[8, 8, 8]\n"
     "%o = aten.bmm.default(%p, %v3) : f32[8, 8, 8]\n"
     "%o4 = aten.view.default(%o, [2, 4, 8, 8]) : f32[2, 4, 8, 8]\n"
     "%ot = aten.permute.default(%o4, [0, 2, 1, 3]) : f32[2, 8, 4, 8]\n"
     "%y = aten.reshape.default(%ot, [2, 8, 32]) : f32[2, 8, 32]\n"
     "output %y\n"},
    /* Conv + inference batch norm + relu, the block a backend folds into
     * one kernel; the running variance must be positive. */
    {"graph.conv_bn_relu", "nwnnnnp", {0},
     "input %x: f32[2, 3, 8, 8]\n"
     "input %w: f32[8, 3, 3, 3]\n"
     "input %cb: f32[8]\n"
     "input %gamma: f32[8]\n"
     "input %beta: f32[8]\n"
     "input %mean: f32[8]\n"
     "input %var: f32[8]\n"
     "%conv = aten.convolution.default(%x, %w, %cb, [1, 1], [1, 1], [1, 1], false, [0, 0], 1)"
     " : f32[2, 8, 8, 8]\n"
     "%bn, %bm, %bv = aten._native_batch_norm_legit_no_training.default(%conv, %gamma, %beta,"
     " %mean, %var, 0.1, 1e-05) : f32[2, 8, 8, 8], f32[0], f32[0]\n"
     "%y = aten.relu.default(%bn) : f32[2, 8, 8, 8]\n"
     "output %y\n"},
    /* x + W2 relu(W1 x + b1) + b2: nn.Linear as permute + addmm, and a
     * skip connection that keeps x alive across the block. */
    {"graph.residual_mlp", "nwnwn", {0},
     "input %x: f32[8, 32]\n"
     "input %w1: f32[64, 32]\n"
     "input %b1: f32[64]\n"
     "input %w2: f32[32, 64]\n"
     "input %b2: f32[32]\n"
     "%t1 = aten.permute.default(%w1, [1, 0]) : f32[32, 64]\n"
     "%h = aten.addmm.default(%b1, %x, %t1) : f32[8, 64]\n"
     "%r = aten.relu.default(%h) : f32[8, 64]\n"
     "%t2 = aten.permute.default(%w2, [1, 0]) : f32[64, 32]\n"
     "%o = aten.addmm.default(%b2, %r, %t2) : f32[8, 32]\n"
     "%y = aten.add.Tensor(%x, %o) : f32[8, 32]\n"
     "output %y\n"},
    /* Views in the middle: a transpose, a strided slice and an expand feed
     * pointwise ops, and one output is itself a view of an input (a
     * backend must hand back its values, not its storage). */
    {"graph.views", "nn", {0},
     "input %x: f32[4, 6, 8]\n"
     "input %y: f32[6, 1]\n"
     "%t = aten.transpose.int(%x, 0, 1) : f32[6, 4, 8]\n"
     "%s = aten.slice.Tensor(%t, 2, 1, 7, 2) : f32[6, 4, 3]\n"
     "%u = aten.unsqueeze.default(%y, 1) : f32[6, 1, 1]\n"
     "%e = aten.expand.default(%u, [6, 4, 3]) : f32[6, 4, 3]\n"
     "%m = aten.mul.Tensor(%s, %e) : f32[6, 4, 3]\n"
     "%p = aten.permute.default(%m, [2, 0, 1]) : f32[3, 6, 4]\n"
     "%n = aten.neg.default(%p) : f32[3, 6, 4]\n"
     "%ps = aten.permute.default(%s, [2, 0, 1]) : f32[3, 6, 4]\n"
     "%a = aten.add.Tensor(%n, %ps) : f32[3, 6, 4]\n"
     "output %a, %s\n"},
    /* graph.mm_pointwise at batch s0: a backend without symbolic shapes
     * compiles one specialization per size, on its first run. */
    {"graph.dyn.mm_pointwise", "nwnn", {1, 3, 8, 64, 0},
     "sym s0 in [1, 64]\n"
     "input %x: f32[s0, 16]\n"
     "input %w: f32[16, 24]\n"
     "input %b: f32[24]\n"
     "input %g: f32[s0, 24]\n"
     "%mm = aten.mm.default(%x, %w) : f32[s0, 24]\n"
     "%h = aten.add.Tensor(%mm, %b) : f32[s0, 24]\n"
     "%r = aten.relu.default(%h) : f32[s0, 24]\n"
     "%ng = aten.neg.default(%g) : f32[s0, 24]\n"
     "%en = aten.exp.default(%ng) : f32[s0, 24]\n"
     "%ep = aten.exp.default(%g) : f32[s0, 24]\n"
     "%den = aten.add.Tensor(%ep, %en) : f32[s0, 24]\n"
     "%gate = aten.div.Tensor(%r, %den) : f32[s0, 24]\n"
     "%y = aten.sub.Tensor(%gate, %g, alpha=0.5) : f32[s0, 24]\n"
     "output %y, %r\n"},
    /* A classifier MLP with a residual block and log-softmax, batch s0. */
    {"graph.dyn.mlp", "nwnwnwn", {1, 3, 8, 64, 0},
     "sym s0 in [1, 64]\n"
     "input %x: f32[s0, 32]\n"
     "input %w1: f32[48, 32]\n"
     "input %b1: f32[48]\n"
     "input %w2: f32[32, 48]\n"
     "input %b2: f32[32]\n"
     "input %w3: f32[10, 32]\n"
     "input %b3: f32[10]\n"
     "%t1 = aten.permute.default(%w1, [1, 0]) : f32[32, 48]\n"
     "%h = aten.addmm.default(%b1, %x, %t1) : f32[s0, 48]\n"
     "%g = aten.gelu.default(%h, approximate=\"tanh\") : f32[s0, 48]\n"
     "%t2 = aten.permute.default(%w2, [1, 0]) : f32[48, 32]\n"
     "%o = aten.addmm.default(%b2, %g, %t2) : f32[s0, 32]\n"
     "%r = aten.add.Tensor(%x, %o) : f32[s0, 32]\n"
     "%a = aten.relu.default(%r) : f32[s0, 32]\n"
     "%t3 = aten.permute.default(%w3, [1, 0]) : f32[32, 10]\n"
     "%logits = aten.addmm.default(%b3, %a, %t3) : f32[s0, 10]\n"
     "%y = aten._log_softmax.default(%logits, 1, false) : f32[s0, 10]\n"
     "output %y\n"},
    /* Self-attention with projections, batch s0: views to symbolic sizes
     * (8*s0 rows), 4-D matmul against a transposed view, and a clone that
     * makes the permuted heads contiguous before they are merged. */
    {"graph.dyn.attention", "nwwwwn", {1, 3, 8, 64, 0},
     "sym s0 in [1, 64]\n"
     "input %x: f32[s0, 8, 32]\n"
     "input %wq: f32[32, 32]\n"
     "input %wk: f32[32, 32]\n"
     "input %wv: f32[32, 32]\n"
     "input %wo: f32[32, 32]\n"
     "input %bo: f32[32]\n"
     "%x2 = aten.view.default(%x, [8*s0, 32]) : f32[8*s0, 32]\n"
     "%tq = aten.permute.default(%wq, [1, 0]) : f32[32, 32]\n"
     "%tk = aten.permute.default(%wk, [1, 0]) : f32[32, 32]\n"
     "%tv = aten.permute.default(%wv, [1, 0]) : f32[32, 32]\n"
     "%q2 = aten.mm.default(%x2, %tq) : f32[8*s0, 32]\n"
     "%k2 = aten.mm.default(%x2, %tk) : f32[8*s0, 32]\n"
     "%v2 = aten.mm.default(%x2, %tv) : f32[8*s0, 32]\n"
     "%q4 = aten.view.default(%q2, [s0, 8, 4, 8]) : f32[s0, 8, 4, 8]\n"
     "%k4 = aten.view.default(%k2, [s0, 8, 4, 8]) : f32[s0, 8, 4, 8]\n"
     "%v4 = aten.view.default(%v2, [s0, 8, 4, 8]) : f32[s0, 8, 4, 8]\n"
     "%qh = aten.permute.default(%q4, [0, 2, 1, 3]) : f32[s0, 4, 8, 8]\n"
     "%kh = aten.permute.default(%k4, [0, 2, 1, 3]) : f32[s0, 4, 8, 8]\n"
     "%vh = aten.permute.default(%v4, [0, 2, 1, 3]) : f32[s0, 4, 8, 8]\n"
     "%kt = aten.transpose.int(%kh, -2, -1) : f32[s0, 4, 8, 8]\n"
     "%s = aten.matmul.default(%qh, %kt) : f32[s0, 4, 8, 8]\n"
     "%scaled = aten.div.Tensor(%s, 2.8284271247461903) : f32[s0, 4, 8, 8]\n"
     "%p = aten._softmax.default(%scaled, -1, false) : f32[s0, 4, 8, 8]\n"
     "%o = aten.matmul.default(%p, %vh) : f32[s0, 4, 8, 8]\n"
     "%ot = aten.permute.default(%o, [0, 2, 1, 3]) : f32[s0, 8, 4, 8]\n"
     "%oc = aten.clone.default(%ot, memory_format=contiguous_format) : f32[s0, 8, 4, 8]\n"
     "%o2 = aten.view.default(%oc, [8*s0, 32]) : f32[8*s0, 32]\n"
     "%to = aten.permute.default(%wo, [1, 0]) : f32[32, 32]\n"
     "%proj = aten.addmm.default(%bo, %o2, %to) : f32[8*s0, 32]\n"
     "%y = aten.view.default(%proj, [s0, 8, 32]) : f32[s0, 8, 32]\n"
     "output %y\n"},
    /* A strided conv, batch norm, relu and global average pooling, batch
     * s0: the image models' stem. */
    {"graph.dyn.conv_pool", "nwnnnp", {1, 2, 5, 0},
     "sym s0 in [1, 16]\n"
     "input %x: f32[s0, 3, 10, 10]\n"
     "input %w: f32[6, 3, 3, 3]\n"
     "input %gamma: f32[6]\n"
     "input %beta: f32[6]\n"
     "input %mean: f32[6]\n"
     "input %var: f32[6]\n"
     "%conv = aten.convolution.default(%x, %w, None, [2, 2], [1, 1], [1, 1], false, [0, 0], 1)"
     " : f32[s0, 6, 5, 5]\n"
     "%bn, %bm, %bv = aten._native_batch_norm_legit_no_training.default(%conv, %gamma, %beta,"
     " %mean, %var, 0.1, 0.001) : f32[s0, 6, 5, 5], f32[0], f32[0]\n"
     "%r = aten.relu.default(%bn) : f32[s0, 6, 5, 5]\n"
     "%pool = aten.mean.dim(%r, [-1, -2], true) : f32[s0, 6, 1, 1]\n"
     "%y = aten.view.default(%pool, [s0, 6]) : f32[s0, 6]\n"
     "output %y\n"},
};
enum { NCASES = sizeof cases / sizeof cases[0] };


/* ---- the source's state ---------------------------------------------------- */

/* The models found at list time; test i of the suite is row i / 2 (the
 * cases, then the models), run beside ref when i is odd. */
typedef struct graphs_state {
  char *models_dir; /* <golden>/models */
  char **files;     /* "mlp.core.pt2" */
  char **names;     /* "model.mlp.core": the tests' op names */
  int nmodels;
} graphs_state;

static void state_clear(graphs_state *st) {
  for (int i = 0; i < st->nmodels; i++) {
    free(st->files[i]);
    if (st->names) free(st->names[i]);
  }
  free(st->files);
  free(st->names);
  free(st->models_dir);
  *st = (graphs_state){0};
}

static alloy_error *oom(void) {
  return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every .pt2 file of <golden>/models, sorted by name. */
static alloy_error *find_models(graphs_state *st, const char *golden) {
  size_t len = strlen(golden) + sizeof "/models";
  if (!(st->models_dir = malloc(len))) return oom();
  snprintf(st->models_dir, len, "%s/models", golden);
  DIR *d = opendir(st->models_dir);
  if (!d) return alloy_error_new(ALLOY_ERR_NOT_FOUND, "%s: cannot open the golden models",
                                 st->models_dir);
  bool ok = true;
  for (struct dirent *de; ok && (de = readdir(d));) {
    size_t n = strlen(de->d_name);
    if (n <= 4 || strcmp(de->d_name + n - 4, ".pt2")) continue;
    char **files = realloc(st->files, (size_t)(st->nmodels + 1) * sizeof *files);
    if (files) st->files = files;
    ok = files && (st->files[st->nmodels] = strdup(de->d_name));
    st->nmodels += ok;
  }
  closedir(d);
  if (!ok || !(st->names = calloc((size_t)st->nmodels + 1, sizeof *st->names))) return oom();
  qsort(st->files, (size_t)st->nmodels, sizeof *st->files, by_name);
  for (int i = 0; i < st->nmodels; i++) {
    int stem = (int)strlen(st->files[i]) - 4;
    size_t n = (size_t)stem + sizeof "model.";
    if (!(st->names[i] = malloc(n))) return oom();
    snprintf(st->names[i], n, "model.%.*s", stem, st->files[i]);
  }
  return NULL;
}

static bool is_dynamic_model(const char *file) { return strstr(file, ".dyn.") != NULL; }

static alloy_error *graphs_list(conform_source *src, const conform_options *o,
                                conform_suite *suite) {
  graphs_state *st = src->self;
  if (!st) return oom();
  state_clear(st);
  /* Graph tests compare values, so meta has nothing to run; they are
   * neither core nor non-core op cases; all of them are float32. */
  if (!conform_wants_source(o, "graphs") || o->replay || o->set ||
      (o->backend && !strcmp(o->backend, "meta")) || (o->dtype && strcmp(o->dtype, "float32")))
    return NULL;
  if (o->golden_dir) {
    alloy_error *e = find_models(st, o->golden_dir);
    if (e) return e;
  }
  for (long row = 0; row < NCASES + st->nmodels; row++) {
    const char *name = row < NCASES ? cases[row].name : st->names[row - NCASES];
    if (o->ops_glob && fnmatch(o->ops_glob, name, 0)) continue;
    bool dynamic = row < NCASES ? cases[row].sizes[0] != 0
                                : is_dynamic_model(st->files[row - NCASES]);
    for (int mixture = 0; mixture < 2; mixture++) {
      conform_test t = {.source = src, .index = 2 * row + mixture, .op = name,
                        .dtype = "float32", .set = CONFORM_SET_GRAPH};
      size_t n = (size_t)snprintf(t.variant, sizeof t.variant, "%s",
                                  mixture ? "beside ref" : "backend alone");
      if (dynamic && row < NCASES) {
        n += (size_t)snprintf(t.variant + n, sizeof t.variant - n, ", batch");
        for (int k = 0; cases[row].sizes[k] && n < sizeof t.variant; k++)
          n += (size_t)snprintf(t.variant + n, sizeof t.variant - n, "%s%lld", k ? "," : " ",
                                (long long)cases[row].sizes[k]);
      } else if (dynamic) {
        snprintf(t.variant + n, sizeof t.variant - n, ", batch as recorded and 1");
      }
      if (!conform_suite_add(suite, &t)) return oom();
    }
  }
  return NULL;
}

/* ---- compiling once, running many times --------------------------------- */

/* A graph compiled on one backend, alone or beside ref (as conform_run_graph
 * does it), for runs at several sizes. */
typedef struct runner {
  alloy_program *prog;
  alloy_mixture *mix;
} runner;

static bool not_claimed(const alloy_error *e) {
  return e && strstr(alloy_error_message(e), "does not claim") != NULL;
}

static alloy_error *runner_compile(conform_env *env, int backend, bool mixture,
                                   const alloy_graph *g, runner *r) {
  alloy_program_options po = {.struct_size = sizeof po,
                              .decompose = (alloy_decompose_level)env->o->decompose};
  *r = (runner){0};
  /* Free moves leave the priority choice standing: the backend takes every
   * node it claims, ref the rest, so boundaries fall where claims stop
   * (the default cost model gives a small graph wholly to one backend). */
  if (mixture) po.partition_launch_s = po.link_bytes_per_s = -1;
  if (!mixture) return alloy_program_compile_ex(env->rt, backend, g, &po, &r->prog);
  int list[2] = {backend, env->ref};
  return alloy_mixture_compile(env->rt, list, backend == env->ref ? 1 : 2, g, &po, &r->mix);
}

/* Outputs are owned by the runner until its next run. */
static alloy_error *runner_run(runner *r, const alloy_host_tensor *in, int nin,
                               alloy_host_tensor *out, int nout) {
  for (int k = 0; k < nout; k++) out[k].struct_size = sizeof out[k];
  return r->prog ? alloy_program_run(r->prog, in, nin, out, nout)
                 : alloy_mixture_run(r->mix, in, nin, out, nout);
}

static void runner_release(runner *r) {
  alloy_program_release(r->prog);
  alloy_mixture_release(r->mix);
  *r = (runner){0};
}

/* A runtime-owned output seen as a conform_tensor (data borrowed). */
static conform_tensor borrowed(const alloy_host_tensor *h) {
  conform_tensor t = {.dtype = h->dtype, .rank = h->rank > 8 ? 8 : h->rank, .data = h->data};
  for (int d = 0; d < t.rank; d++) t.sizes[d] = h->sizes[d];
  return t;
}

/* ---- inputs --------------------------------------------------------------- */

static float uniform(uint64_t *s, float lo, float hi) {
  return lo + (hi - lo) * (float)conform_uniform(s);
}

/* Inputs of the graph at symbol values `size` (every backed symbol takes
 * it: each graph here has one), drawn as kinds says. The tensors own their
 * data; host[] points into them. */
static alloy_error *make_inputs(alloy_graph *g, const char *kinds, int64_t size, uint64_t seed,
                                conform_tensor *owned, alloy_host_tensor *host) {
  alloy_symtab *syms = alloy_graph_symtab(g);
  int nsyms = alloy_symtab_count(syms);
  int64_t values[8];
  bool bound[8];
  for (int i = 0; i < 8; i++) values[i] = size, bound[i] = true;
  if (nsyms > 8) return alloy_error_new(ALLOY_ERR_UNSUPPORTED, "more than 8 symbols");
  uint64_t s = seed;
  for (int i = 0; i < alloy_graph_num_inputs(g); i++) {
    alloy_value *v = alloy_graph_input(g, i);
    conform_tensor *t = &owned[i];
    *t = (conform_tensor){.dtype = alloy_value_dtype(v), .rank = alloy_value_rank(v)};
    if (t->dtype != ALLOY_F32 || t->rank > 8)
      return alloy_error_new(ALLOY_ERR_UNSUPPORTED, "input %d is not a float32 tensor", i);
    int64_t numel = 1;
    for (int d = 0; d < t->rank; d++) {
      alloy_error *e = alloy_dim_eval(syms, alloy_value_shape(v)[d], values, bound, nsyms,
                                      &t->sizes[d]);
      if (e) return e;
      numel *= t->sizes[d];
    }
    float *data = malloc((size_t)(numel ? numel : 1) * sizeof *data);
    if (!(t->data = data)) return oom();
    float lo = kinds[i] == 'p' ? 0.5f : kinds[i] == 'w' ? -0.25f : -2.0f;
    float hi = kinds[i] == 'p' ? 2.0f : kinds[i] == 'w' ? 0.25f : 2.0f;
    for (int64_t k = 0; k < numel; k++) data[k] = uniform(&s, lo, hi);
    host[i] = conform_tensor_host(t);
  }
  return NULL;
}

/* ---- the checks -------------------------------------------------------------- */

enum { MAX_IO = 16 };

static conform_verdict fail(conform_result *res, const char *prefix, alloy_error *e) {
  snprintf(res->why, sizeof res->why, "%s%s", prefix, alloy_error_message(e));
  alloy_error_free(e);
  return CONFORM_FAIL;
}

/* A failure's repro, named at the end of why. */
static void repro(const conform_env *env, const conform_test *t, const alloy_graph *g,
                  const alloy_host_tensor *in, int nin, const conform_tensor *want, int nwant,
                  conform_result *res) {
  char path[1024];
  conform_repro_write(env, t, g, in, nin, want, nwant, res->why, path, sizeof path);
  size_t n = strlen(res->why);
  if (path[0]) snprintf(res->why + n, sizeof res->why - n, " (repro: %s)", path);
}

/* A graph without symbols: one run on ref, one on the backend. */
static conform_verdict check_static(const conform_test *t, alloy_graph *g, uint64_t seed,
                                    const char *kinds, bool mixture, conform_env *env,
                                    conform_result *res) {
  int nin = alloy_graph_num_inputs(g), nout = alloy_graph_num_outputs(g);
  conform_tensor in[MAX_IO] = {{0}}, want[MAX_IO] = {{0}}, got[MAX_IO] = {{0}};
  alloy_host_tensor host[MAX_IO];
  bool perf = env->o->perf;
  conform_verdict v = CONFORM_FAIL;
  alloy_error *e = make_inputs(g, kinds, 0, seed, in, host);
  if (e) {
    v = fail(res, "inputs: ", e);
    goto done;
  }
  char why[768];
  conform_options oracle_o;
  conform_env oracle = conform_oracle_env(env, &oracle_o);
  v = conform_run_graph(&oracle, env->ref, g, false, host, nin, want, nout,
                        perf ? &res->ref_s : NULL, why, sizeof why);
  if (v != CONFORM_PASS) {
    /* The oracle must run every graph here: anything else is Alloy's bug. */
    snprintf(res->why, sizeof res->why, "the reference backend: %s", why);
    v = CONFORM_FAIL;
    goto done;
  }
  v = conform_run_graph(env, env->backend, g, mixture, host, nin, got, nout,
                        perf ? &res->backend_s : NULL, res->why, sizeof res->why);
  if (v == CONFORM_PASS && !conform_outputs_match(t->op, got, want, nout, true, NULL, 0, res->why,
                                                  sizeof res->why)) {
    /* Wrong values (not an error, which names its node): which node? */
    v = CONFORM_FAIL;
    conform_pin_divergence(env, t, g, host, nin, mixture, res->why, sizeof res->why);
  }
  if (conform_repro_wanted(env, v)) repro(env, t, g, host, nin, want, nout, res);
  conform_tensors_free(got, nout);
done:
  conform_tensors_free(want, nout);
  conform_tensors_free(in, nin);
  return v;
}

/* A compile or run error of the backend under test: a skip when it does
 * not claim what the graph needs (a backend without symbolic shapes claims
 * each specialization on the run that first needs it), else a failure. */
static conform_verdict backend_error(conform_result *res, const char *at, alloy_error *e) {
  bool skip = not_claimed(e);
  snprintf(res->why, sizeof res->why, "%s%s%s%s", at, skip ? "not claimed by the backend (" : "",
           alloy_error_message(e), skip ? ")" : "");
  alloy_error_free(e);
  return skip ? CONFORM_SKIP : CONFORM_FAIL;
}

/* A graph with a symbolic batch: compiled once on ref and once on the
 * backend, then run at each size. */
static conform_verdict check_dynamic(const conform_test *t, alloy_graph *g, uint64_t seed,
                                     const graph_case *c, bool mixture, conform_env *env,
                                     conform_result *res) {
  int nin = alloy_graph_num_inputs(g), nout = alloy_graph_num_outputs(g);
  runner ref, be;
  conform_options oracle_o;
  conform_env oracle = conform_oracle_env(env, &oracle_o);
  alloy_error *e = runner_compile(&oracle, env->ref, false, g, &ref);
  if (e) return fail(res, "the reference backend: ", e);
  if ((e = runner_compile(env, env->backend, mixture, g, &be))) {
    runner_release(&ref);
    return backend_error(res, "", e);
  }
  conform_verdict v = CONFORM_PASS;
  for (int k = 0; c->sizes[k] && v == CONFORM_PASS; k++) {
    conform_tensor in[MAX_IO] = {{0}}, want[MAX_IO], got[MAX_IO];
    alloy_host_tensor host[MAX_IO], ref_out[MAX_IO], be_out[MAX_IO];
    char at[64];
    snprintf(at, sizeof at, "at s0 = %lld: ", (long long)c->sizes[k]);
    int nwant = 0;
    if ((e = make_inputs(g, c->inputs, c->sizes[k], seed ^ (uint64_t)c->sizes[k], in, host))) {
      conform_tensors_free(in, nin);
      v = fail(res, "inputs: ", e);
      break;
    }
    /* The ref outputs stay valid until its next run: they are borrowed. */
    if (!(e = runner_run(&ref, host, nin, ref_out, nout)))
      for (int o = 0; o < nout; o++) want[o] = borrowed(&ref_out[o]);
    if (e) {
      char prefix[96];
      snprintf(prefix, sizeof prefix, "%sthe reference backend: ", at);
      v = fail(res, prefix, e);
    } else if ((nwant = nout), (e = runner_run(&be, host, nin, be_out, nout))) {
      v = backend_error(res, at, e);
    } else {
      for (int o = 0; o < nout; o++) got[o] = borrowed(&be_out[o]);
      size_t len = (size_t)snprintf(res->why, sizeof res->why, "%s", at);
      if (!conform_outputs_match(t->op, got, want, nout, true, NULL, 0, res->why + len,
                                 sizeof res->why - len)) {
        v = CONFORM_FAIL;
        conform_pin_divergence(env, t, g, host, nin, mixture, res->why, sizeof res->why);
      } else {
        res->why[0] = 0;
      }
    }
    /* A crash's repro (rerun on ref, all passing): the first size's. */
    bool stop = env->repro_why != NULL;
    if (conform_repro_wanted(env, v)) repro(env, t, g, host, nin, want, nwant, res);
    conform_tensors_free(in, nin);
    if (stop) break;
  }
  runner_release(&be);
  runner_release(&ref);
  return v;
}

static conform_verdict check_case(const conform_test *t, long row, bool mixture, conform_env *env,
                                  conform_result *res) {
  const graph_case *c = &cases[row];
  alloy_graph *g = NULL;
  alloy_error *e = alloy_air_parse(c->air, strlen(c->air), c->name, &g);
  if (e) return fail(res, "", e);
  if (alloy_graph_num_inputs(g) > MAX_IO || alloy_graph_num_outputs(g) > MAX_IO ||
      (int)strlen(c->inputs) != alloy_graph_num_inputs(g)) {
    alloy_graph_free(g);
    snprintf(res->why, sizeof res->why, "%s: its input kinds do not fit its graph", c->name);
    return CONFORM_FAIL;
  }
  /* Both variants of a test draw the same inputs. */
  uint64_t seed = env->o->seed ^ (0xD1B54A32D192ED03ull * (uint64_t)(row + 1));
  conform_verdict v = c->sizes[0] ? check_dynamic(t, g, seed, c, mixture, env, res)
                                  : check_static(t, g, seed, c->inputs, mixture, env, res);
  alloy_graph_free(g);
  return v;
}

/* ---- models ------------------------------------------------------------------ */

/* src with dim 0 made n rows by cycling its rows (n < 0: as it is), into
 * out, which owns its data. */
static bool resize_rows(const alloy_st_entry *src, int64_t n, conform_tensor *out) {
  *out = (conform_tensor){.dtype = src->dtype, .rank = src->rank > 8 ? 8 : src->rank};
  memcpy(out->sizes, src->shape, sizeof(int64_t) * (size_t)out->rank);
  size_t row = alloy_dtype_size(src->dtype);
  for (int d = 1; d < out->rank; d++) row *= (size_t)src->shape[d];
  int64_t have = out->rank ? src->shape[0] : 1;
  if (n < 0 || !out->rank) n = have;
  if (out->rank) out->sizes[0] = n;
  if (have == 0 && n > 0) return false;
  if (!(out->data = malloc(row * (size_t)n + 1))) return false;
  for (int64_t r = 0; r < n; r++)
    memcpy((char *)out->data + row * (size_t)r, (const char *)src->data + row * (size_t)(r % have),
           row);
  return true;
}

static bool leading_dim_symbolic(const alloy_value *v) {
  return alloy_value_rank(v) > 0 && !alloy_dim_is_const(alloy_value_shape(v)[0]);
}

/* The buffers of one model run, freed together. */
typedef struct model_run {
  conform_tensor *user, *want; /* user inputs and expected outputs, owned */
  alloy_host_tensor *users, *ins, *outs;
  int nuser, nwant;
} model_run;

static void model_run_free(model_run *r) {
  if (r->user) conform_tensors_free(r->user, r->nuser);
  if (r->want) conform_tensors_free(r->want, r->nwant);
  free(r->user);
  free(r->want);
  free(r->users);
  free(r->ins);
  free(r->outs);
}

/* Runs the compiled model once at batch n (< 0: as recorded) and compares
 * its user outputs with output0.. of io. */
static conform_verdict model_once(const conform_test *t, alloy_model *m,
                                  const alloy_safetensors *io, runner *rn, int64_t n,
                                  conform_env *env, conform_result *res) {
  bool mixture = rn->mix != NULL;
  alloy_graph *g = alloy_model_graph(m);
  int nin = alloy_graph_num_inputs(g), nout = alloy_graph_num_outputs(g);
  model_run r = {.nuser = alloy_model_num_user_inputs(m)};
  char at[64] = "";
  if (n >= 0) snprintf(at, sizeof at, "at batch %lld: ", (long long)n);
  r.user = calloc((size_t)r.nuser + 1, sizeof *r.user);
  r.want = calloc((size_t)nout + 1, sizeof *r.want);
  r.users = calloc((size_t)r.nuser + 1, sizeof *r.users);
  r.ins = calloc((size_t)nin + 1, sizeof *r.ins);
  r.outs = calloc((size_t)nout + 1, sizeof *r.outs);
  conform_verdict v = CONFORM_FAIL;
  alloy_error *e = NULL;
  if (!r.user || !r.want || !r.users || !r.ins || !r.outs) e = oom();
  /* User inputs, in order, are input0, input1, ...; only those batched by
   * the graph's symbol are resized. */
  for (int i = 0, u = 0; !e && i < nin; i++) {
    if (alloy_graph_input_role(g, i, NULL) != ALLOY_INPUT_USER) continue;
    char key[32];
    snprintf(key, sizeof key, "input%d", u);
    const alloy_st_entry *en = alloy_safetensors_find(io, key);
    if (!en) e = alloy_error_new(ALLOY_ERR_NOT_FOUND, "the recorded inputs have no %s", key);
    else if (!resize_rows(en, leading_dim_symbolic(alloy_graph_input(g, i)) ? n : -1, &r.user[u]))
      e = alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "%s: cannot resize to batch %lld", key,
                          (long long)n);
    else r.users[u] = conform_tensor_host(&r.user[u]);
    u++;
  }
  /* User outputs are numbered among themselves: output0, output1, ... */
  for (int i = 0; !e && i < nout; i++) {
    if (alloy_graph_output_role(g, i, NULL) != ALLOY_OUTPUT_USER) continue;
    char key[32];
    snprintf(key, sizeof key, "output%d", r.nwant);
    const alloy_st_entry *en = alloy_safetensors_find(io, key);
    if (!en) e = alloy_error_new(ALLOY_ERR_NOT_FOUND, "the recorded outputs have no %s", key);
    else if (!resize_rows(en, leading_dim_symbolic(alloy_graph_output(g, i)) ? n : -1,
                          &r.want[r.nwant]))
      e = alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "%s: cannot resize to batch %lld", key,
                          (long long)n);
    r.nwant++;
  }
  if (!e) e = alloy_model_bind_inputs(m, r.users, r.nuser, r.ins, nin);
  if (e) {
    model_run_free(&r);
    return fail(res, at, e);
  }
  if ((e = runner_run(rn, r.ins, nin, r.outs, nout))) {
    v = backend_error(res, at, e);
  } else {
    v = CONFORM_PASS;
    for (int i = 0, k = 0; i < nout && v == CONFORM_PASS; i++) {
      if (alloy_graph_output_role(g, i, NULL) != ALLOY_OUTPUT_USER) continue;
      alloy_st_entry w = conform_tensor_entry(&r.want[k], "expected");
      double max_abs, max_rel;
      char msg[768];
      if (!conform_measure(&r.outs[i], &w, conform_model_tolerance(w.dtype), &max_abs, &max_rel, msg,
                           sizeof msg)) {
        snprintf(res->why, sizeof res->why, "%soutput%d: max abs err %.3g, max rel err %.3g, %s",
                 at, k, max_abs, max_rel, msg);
        v = CONFORM_FAIL;
      }
      k++;
    }
    if (v == CONFORM_FAIL)
      conform_pin_divergence(env, t, g, r.ins, nin, mixture, res->why, sizeof res->why);
  }
  if (conform_repro_wanted(env, v)) repro(env, t, g, r.ins, nin, r.want, r.nwant, res);
  model_run_free(&r);
  return v;
}

static conform_verdict check_model(const graphs_state *st, int i, const conform_test *t,
                                   bool mixture, conform_env *env, conform_result *res) {
  const char *file = st->files[i];
  char path[4096], io_path[4096];
  snprintf(path, sizeof path, "%s/%s", st->models_dir, file);
  /* mlp.dyn.core.pt2 -> mlp.io.safetensors */
  snprintf(io_path, sizeof io_path, "%s/%.*s.io.safetensors", st->models_dir,
           (int)strcspn(file, "."), file);
  alloy_model *m = NULL;
  alloy_safetensors *io = NULL;
  runner rn = {0};
  alloy_error *e = alloy_model_load(path, &m);
  if (e) return fail(res, "", e);
  conform_verdict v;
  if ((e = alloy_safetensors_open(io_path, &io))) {
    v = fail(res, "", e);
  } else if ((e = runner_compile(env, env->backend, mixture, alloy_model_graph(m), &rn))) {
    v = backend_error(res, "", e);
  } else if (!is_dynamic_model(file)) {
    v = model_once(t, m, io, &rn, -1, env, res);
  } else {
    /* One compile, run at the recorded batch and at 1 (where size-1
     * broadcasting and specialization go wrong); a third size would cost
     * squeezenet's time again and find little more. */
    const alloy_st_entry *in0 = alloy_safetensors_find(io, "input0");
    int64_t b = in0 && in0->rank ? in0->shape[0] : 1;
    v = model_once(t, m, io, &rn, b, env, res);
    if (v == CONFORM_PASS && b != 1) v = model_once(t, m, io, &rn, 1, env, res);
  }
  runner_release(&rn);
  alloy_safetensors_close(io);
  alloy_model_free(m);
  return v;
}

/* ---- the source ---------------------------------------------------------------- */

static conform_verdict graphs_check(const conform_source *src, const conform_test *t,
                                    conform_env *env, conform_result *res) {
  const graphs_state *st = src->self;
  long row = t->index / 2;
  bool mixture = t->index % 2;
  if (env->backend < 0) {
    snprintf(res->why, sizeof res->why, "graph tests compare values: no backend to run");
    return CONFORM_SKIP;
  }
  if (row < NCASES) return check_case(t, row, mixture, env, res);
  if (row - NCASES < st->nmodels) return check_model(st, (int)(row - NCASES), t, mixture, env, res);
  snprintf(res->why, sizeof res->why, "no graph test %ld", t->index);
  return CONFORM_FAIL;
}

static void graphs_rerun(const conform_source *src, const conform_test *t, char *buf, size_t cap) {
  const graphs_state *st = src->self;
  /* A model needs its corpus: the golden folder is models_dir less "/models". */
  if (t->index / 2 >= NCASES && st->models_dir)
    snprintf(buf, cap, "--only graphs --ops %s --golden %.*s", t->op,
             (int)(strlen(st->models_dir) - strlen("/models")), st->models_dir);
  else
    snprintf(buf, cap, "--only graphs --ops %s", t->op);
}

static void graphs_close(conform_source *src) {
  if (!src->self) return;
  state_clear(src->self);
  free(src->self);
  src->self = NULL;
}

conform_source conform_graphs_source(void) {
  return (conform_source){.name = "graphs", .self = calloc(1, sizeof(graphs_state)),
                          .list = graphs_list, .check = graphs_check, .rerun = graphs_rerun,
                          .close = graphs_close};
}
