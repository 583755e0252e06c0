/*
 * tests/test_cpu_attention.c: scaled_dot_product_attention on the cpu
 * backend (plugins/cpu/cpu_attention.c). The plan needs no LLVM: the node
 * is one STEP_GEMM in attention mode with its sizes, mask kind, scale and
 * causal flag, and float64 or dropout is refused with a reason. The
 * values need the plugin (tests/cpuref.h): causal attention, a bool mask
 * broadcast over heads with a row whose every key is masked (zeros, as
 * PyTorch's _safe_softmax gives), a float mask broadcast over the batch
 * with an explicit scale, and more keys than one block, against the
 * reference backend within DESIGN.md's float32 tolerance.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/graph.h"
#include "alloy/runtime.h"
#include "cpuref.h"
#include "harness.h"
#include "plugins/cpu/cpu_internal.h"
#include "sdk/src/host.h"

static alloy_graph *parse(const char *air) {
  alloy_graph *g = NULL;
  CHECK_OK(alloy_air_parse(air, strlen(air), "test.air", &g));
  return g;
}

TEST(cpu_attention_plan_is_one_step) {
  alloy_graph *g = parse("input %q: f32[2, 4, 40, 16]\ninput %k: f32[2, 4, 50, 16]\ninput %v: f32[2, 4, 50, 8]\n"
                         "input %m: bool[2, 1, 40, 50]\n"
                         "%a = aten.scaled_dot_product_attention.default(%q, %k, %v, %m, 0.0, false, scale=0.25)"
                         " : f32[2, 4, 40, 8]\noutput %a\n");
  REQUIRE(g);
  const alloy_host_api *h = alloy_host_table();
  CHECK(cpu_node_unsupported(h, h->graph_node(g, 0)) == NULL);
  cpu_plan p;
  cpu_plan_options o = {.blas = true};
  CHECK_OK(cpu_plan_build(h, g, NULL, &o, &p));
  REQUIRE(p.nsteps == 1);
  const cpu_step *s = &p.steps[0];
  CHECK(s->kind == STEP_GEMM && s->gemm.attn.on);
  const cpu_attn_desc *a = &s->gemm.attn;
  CHECK(a->L == 40 && a->S == 50 && a->E == 16 && a->EV == 8 && a->nb == 2 && a->nbatch == 8);
  CHECK(a->mask == 1 && !a->causal && fabsf(a->scale - 0.25f) < 1e-7f);
  CHECK(a->mbs[1] == 0); /* the mask broadcasts over the heads */
  CHECK(s->rows == 8 * a->nqblocks);
  CHECK(s->gbase[GEMM_E] >= 0 && s->gbase[GEMM_C] >= 0);
  cpu_plan_free(&p);
  alloy_graph_free(g);
}

TEST(cpu_attention_refusals_have_reasons) {
  alloy_graph *g = parse("input %q: f64[1, 4, 8]\ninput %k: f64[1, 4, 8]\ninput %v: f64[1, 4, 8]\n"
                         "input %q32: f32[1, 4, 8]\n"
                         "%a = aten.scaled_dot_product_attention.default(%q, %k, %v) : f64[1, 4, 8]\n"
                         "%b = aten.scaled_dot_product_attention.default(%q32, %q32, %q32, None, 0.5) : f32[1, 4, 8]\n"
                         "output %a, %b\n");
  REQUIRE(g);
  const alloy_host_api *h = alloy_host_table();
  const char *w0 = cpu_node_unsupported(h, h->graph_node(g, 0)), *w1 = cpu_node_unsupported(h, h->graph_node(g, 1));
  CHECK(w0 && strstr(w0, "float32"));
  CHECK(w1 && strstr(w1, "dropout"));
  alloy_graph_free(g);
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static float urand(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (float)((double)(rng >> 11) / 9007199254740992.0 * 2 - 1);
}

static float *filled(int64_t n) {
  float *p = malloc(sizeof *p * (size_t)n);
  for (int64_t i = 0; p && i < n; i++) p[i] = 2 * urand();
  return p;
}

TEST(cpu_attention_matches_ref) {
  int cpu, ref;
  alloy_runtime *rt = cpuref_open(&cpu, &ref);
  if (!rt) return;
  REQUIRE(ref >= 0);
  static const struct {
    const char *air;
    int64_t q[4], k[4], v[4], m[4];
    int mrank; /* 0: no mask */
    bool bool_mask;
  } cases[] = {
      {"input %q: f32[2, 3, 70, 16]\ninput %k: f32[2, 3, 70, 16]\ninput %v: f32[2, 3, 70, 24]\n"
       "%a = aten.scaled_dot_product_attention.default(%q, %k, %v, None, 0.0, true) : f32[2, 3, 70, 24]\noutput %a\n",
       {2, 3, 70, 16}, {2, 3, 70, 16}, {2, 3, 70, 24}, {0}, 0, false},
      {"input %q: f32[2, 3, 40, 16]\ninput %k: f32[2, 3, 300, 16]\ninput %v: f32[2, 3, 300, 8]\n"
       "input %m: bool[2, 1, 40, 300]\n"
       "%a = aten.scaled_dot_product_attention.default(%q, %k, %v, %m) : f32[2, 3, 40, 8]\noutput %a\n",
       {2, 3, 40, 16}, {2, 3, 300, 16}, {2, 3, 300, 8}, {2, 1, 40, 300}, 4, true},
      {"input %q: f32[3, 33, 32]\ninput %k: f32[3, 129, 32]\ninput %v: f32[3, 129, 32]\ninput %m: f32[33, 129]\n"
       "%a = aten.scaled_dot_product_attention.default(%q, %k, %v, %m, 0.0, false, scale=0.3) : f32[3, 33, 32]\n"
       "output %a\n",
       {3, 33, 32}, {3, 129, 32}, {3, 129, 32}, {33, 129}, 2, false},
  };
  for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
    alloy_graph *g = parse(cases[ci].air);
    REQUIRE(g);
    int rank = cases[ci].q[3] ? 4 : 3;
    int64_t nq = 1, nk = 1, nv = 1, nm = 1, no;
    for (int d = 0; d < rank; d++) nq *= cases[ci].q[d], nk *= cases[ci].k[d], nv *= cases[ci].v[d];
    for (int d = 0; d < cases[ci].mrank; d++) nm *= cases[ci].m[d];
    no = nq / cases[ci].q[rank - 1] * cases[ci].v[rank - 1];
    float *q = filled(nq), *k = filled(nk), *v = filled(nv), *fm = filled(nm);
    unsigned char *bm = malloc((size_t)nm);
    float *yc = calloc((size_t)no, sizeof *yc), *yr = calloc((size_t)no, sizeof *yr);
    REQUIRE(q && k && v && fm && bm && yc && yr);
    /* the bool mask keeps about two keys in three; row 5 of batch 0 none */
    for (int64_t i = 0; i < nm; i++) bm[i] = urand() > -0.33f;
    if (cases[ci].bool_mask)
      for (int64_t j = 0; j < cases[ci].m[3]; j++) bm[5 * cases[ci].m[3] + j] = 0;
    alloy_host_tensor in[4] = {cpuref_host(ALLOY_F32, rank, cases[ci].q, q),
                               cpuref_host(ALLOY_F32, rank, cases[ci].k, k),
                               cpuref_host(ALLOY_F32, rank, cases[ci].v, v),
                               cpuref_host(cases[ci].bool_mask ? ALLOY_BOOL : ALLOY_F32, cases[ci].mrank, cases[ci].m,
                                           cases[ci].bool_mask ? (void *)bm : (void *)fm)};
    int nin = cases[ci].mrank ? 4 : 3;
    size_t bytes = (size_t)no * sizeof *yc;
    if (cpuref_run(rt, cpu, g, in, nin, yc, bytes, 0) && cpuref_run(rt, ref, g, in, nin, yr, bytes, 0)) {
      int bad = 0;
      double worst = 0;
      for (int64_t i = 0; i < no; i++) {
        double err = fabs((double)yc[i] - yr[i]);
        if (!(err <= 1e-5 + 1.3e-6 * fabs(yr[i]))) bad++;
        if (err > worst) worst = err;
      }
      if (bad) harness_fail(__FILE__, __LINE__, "case %zu: %d of %lld elements off (largest error %g)", ci, bad,
                            (long long)no, worst);
      if (cases[ci].bool_mask) { /* the masked row: zeros in every head of batch 0 */
        int64_t ev = cases[ci].v[3];
        for (int64_t hd = 0; hd < cases[ci].q[1]; hd++)
          for (int64_t c = 0; c < ev; c++) CHECK(yc[(hd * cases[ci].q[2] + 5) * ev + c] == 0.0f);
      }
    }
    free(q), free(k), free(v), free(fm), free(bm), free(yc), free(yr);
    alloy_graph_free(g);
  }
  alloy_runtime_close(rt);
}
