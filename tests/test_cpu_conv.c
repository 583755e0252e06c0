/*
 * tests/test_cpu_conv.c: the cpu backend's convolutions and pooling.
 *
 * The plans (cp_emit_conv, cp_emit_pool in plugins/cpu/cpu_rows.c) need
 * no LLVM: a convolution is one STEP_GEMM in convolution mode with its
 * geometry, a following relu taken into it, the bias packed after the
 * weights; refusals have reasons. The values need the plugin
 * (liballoy-cpu.so, built where llvm-config is): the tests that run
 * graphs open it from $ALLOY_TEST_BUILD/lib/alloy (else the build folder
 * of this program) and say that they skip when it is absent. They check
 * hand-computed small cases, and larger ones (sgemm, groups, stride,
 * padding, dilation, float64) against the reference backend within
 * DESIGN.md's tolerances.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static const alloy_host_api *H(void) { return alloy_host_table(); }

/* ---- plans ---------------------------------------------------------------------- */

/* conv + relu: copies of the weights and the bias into one packed
 * operand, then one convolution step writing the relu's output (the
 * graph's) with relu and bias in its tiles; no pointwise pass after. */
TEST(cpu_conv_plan_fuses_bias_and_relu) {
  alloy_graph *g = parse("input %x: f32[2, 3, 9, 9]\n"
                         "input %w: f32[8, 3, 3, 3]\n"
                         "input %b: f32[8]\n"
                         "%c = aten.convolution.default(%x, %w, %b, [2, 2], [1, 1], [1, 1], false, [0, 0], 1)"
                         " : f32[2, 8, 5, 5]\n"
                         "%y = aten.relu.default(%c) : f32[2, 8, 5, 5]\n"
                         "output %y\n");
  REQUIRE(g);
  for (int i = 0; i < H()->graph_num_nodes(g); i++) CHECK(cpu_node_unsupported(H(), H()->graph_node(g, i)) == NULL);
  cpu_plan p;
  cpu_plan_options o = {.blas = true};
  CHECK_OK(cpu_plan_build(H(), g, NULL, &o, &p));
  REQUIRE(p.nsteps == 3); /* weights, bias, the convolution */
  CHECK(p.steps[0].kind == STEP_KERNEL && p.steps[1].kind == STEP_KERNEL);
  const cpu_step *s = &p.steps[2];
  REQUIRE(s->kind == STEP_GEMM && s->gemm.conv.on);
  const cpu_conv_desc *c = &s->gemm.conv;
  CHECK(c->bias && c->relu && !c->direct && !c->f64);
  CHECK(c->n == 2 && c->groups == 1 && c->cin_g == 3 && c->cout_g == 8 && c->k == 27);
  CHECK(c->h == 9 && c->w == 9 && c->oh == 5 && c->ow == 5 && c->kh == 3 && c->sh == 2 && c->ph == 1 && c->dw == 1);
  CHECK(c->x_nstride == 243 && c->x_cstride == 81);
  CHECK(c->loop); /* 2 * 8 * 25 * 27 multiply-adds: the reference's order */
  CHECK(s->rows == c->n * c->groups * c->ntiles && c->tile * c->ntiles >= 25);
  CHECK(p.bases[s->gbase[GEMM_D]].kind == BASE_OUTPUT); /* the relu's output, written in place */
  CHECK(p.bases[s->gbase[GEMM_B]].kind == BASE_INPUT && p.bases[s->gbase[GEMM_A]].kind == BASE_TEMP);
  CHECK(p.bases[s->gbase[GEMM_A]].bytes == (8 * 27 + 8) * sizeof(float));
  CHECK(c->a_off == 0 && c->x_off == 0 && c->d_off == 0);
  CHECK(strcmp(s->what, "conv+bias+relu") == 0);
  CHECK(p.nfused_nodes == 1);
  cpu_plan_free(&p);
  alloy_graph_free(g);
}

/* A 1x1 convolution of groups without a bias reads x and w in place
 * (direct: x's planes are the matrix); a relu with another reader is not
 * taken in; a 1-d convolution has a height of 1. */
TEST(cpu_conv_plan_direct_groups_and_one_dim) {
  alloy_graph *g = parse("input %x: f32[4, 6, 5, 7]\n"
                         "input %w: f32[9, 2, 1, 1]\n"
                         "%c = aten.convolution.default(%x, %w, None, [1, 1], [0, 0], [1, 1], false, [0, 0], 3)"
                         " : f32[4, 9, 5, 7]\n"
                         "%y = aten.relu.default(%c) : f32[4, 9, 5, 7]\n"
                         "output %c, %y\n");
  REQUIRE(g);
  cpu_plan p;
  cpu_plan_options o = {.blas = true};
  CHECK_OK(cpu_plan_build(H(), g, NULL, &o, &p));
  REQUIRE(p.nsteps >= 2);
  const cpu_step *s = &p.steps[0];
  REQUIRE(s->kind == STEP_GEMM && s->gemm.conv.on);
  CHECK(s->gemm.conv.direct && !s->gemm.conv.bias && !s->gemm.conv.relu);
  CHECK(s->gemm.conv.groups == 3 && s->gemm.conv.cin_g == 2 && s->gemm.conv.cout_g == 3 && s->gemm.conv.k == 2);
  CHECK(p.bases[s->gbase[GEMM_A]].kind == BASE_INPUT); /* w in place */
  CHECK(p.steps[1].kind == STEP_KERNEL && strstr(p.steps[1].what, "relu"));
  cpu_plan_free(&p);
  alloy_graph_free(g);
  g = parse("input %x: f32[2, 4, 10]\n"
            "input %w: f32[6, 4, 3]\n"
            "%y = aten.convolution.default(%x, %w, None, [2], [1], [2], false, [0], 1) : f32[2, 6, 4]\n"
            "output %y\n");
  REQUIRE(g);
  CHECK_OK(cpu_plan_build(H(), g, NULL, &o, &p));
  REQUIRE(p.nsteps == 1 && p.steps[0].gemm.conv.on);
  const cpu_conv_desc *c = &p.steps[0].gemm.conv;
  CHECK(c->h == 1 && c->oh == 1 && c->kh == 1 && c->w == 10 && c->ow == 4 && c->kw == 3);
  CHECK(c->sw == 2 && c->pw == 1 && c->dw == 2 && c->k == 12);
  cpu_plan_free(&p);
  alloy_graph_free(g);
}

/* Pooling is one kernel of window loops; the indices of max pooling are
 * computed only when something reads them. */
TEST(cpu_conv_plan_pooling_kernels) {
  alloy_graph *g = parse("input %x: f32[2, 3, 9, 9]\n"
                         "%m, %i = aten.max_pool2d_with_indices.default(%x, [3, 3], [2, 2], [0, 0], [1, 1], true)"
                         " : f32[2, 3, 4, 4], i64[2, 3, 4, 4]\n"
                         "output %m\n");
  REQUIRE(g);
  cpu_plan p;
  cpu_plan_options o = {.blas = true};
  CHECK_OK(cpu_plan_build(H(), g, NULL, &o, &p));
  REQUIRE(p.nsteps == 1 && p.steps[0].kind == STEP_KERNEL);
  CHECK(p.steps[0].rows == 2 * 3 * 4);
  const char *k = strstr(p.ir, "\ndefine void @k0(");
  REQUIRE(k);
  CHECK(p.steps[0].nparams == 2); /* x and the values: no indices */
  CHECK(strstr(k, "fcmp uno") != NULL);    /* NaN wins, as PyTorch's */
  cpu_plan_free(&p);
  alloy_graph_free(g);
}

/* What is declined says why. */
TEST(cpu_conv_refusals_have_reasons) {
  alloy_graph *g = parse("input %x: f32[1, 4, 5, 5]\n"
                         "input %w: f32[4, 2, 3, 3]\n"
                         "input %xi: i64[1, 4, 5, 5]\n"
                         "input %wi: i64[4, 4, 3, 3]\n"
                         "input %x3: f32[1, 4, 3, 5, 5]\n"
                         "input %w3: f32[4, 4, 1, 1, 1]\n"
                         "%t = aten.convolution.default(%x, %w, None, [1, 1], [0, 0], [1, 1], true, [0, 0], 2)"
                         " : f32[1, 4, 7, 7]\n"
                         "%ci = aten.convolution.default(%xi, %wi, None, [1, 1], [0, 0], [1, 1], false, [0, 0], 1)"
                         " : i64[1, 4, 3, 3]\n"
                         "%c3 = aten.convolution.default(%x3, %w3, None, [1, 1, 1], [0, 0, 0], [1, 1, 1], false,"
                         " [0, 0, 0], 1) : f32[1, 4, 3, 5, 5]\n"
                         "%ai = aten.avg_pool2d.default(%xi, [2, 2]) : i64[1, 4, 2, 2]\n"
                         "%mi, %ii = aten.max_pool2d_with_indices.default(%xi, [2, 2]) : i64[1, 4, 2, 2], i64[1, 4, 2, 2]\n"
                         "output %t, %ci, %c3, %ai, %mi\n");
  REQUIRE(g);
  const char *why[5];
  for (int i = 0; i < 5; i++) why[i] = cpu_node_unsupported(H(), H()->graph_node(g, i));
  CHECK(why[0] && strstr(why[0], "transposed"));
  CHECK(why[1] && strstr(why[1], "integer"));
  CHECK(why[2] && strstr(why[2], "1 or 2 spatial dims"));
  CHECK(why[3] && strstr(why[3], "average pooling of integers"));
  CHECK(why[4] == NULL); /* max pooling of integers is computed */
  alloy_graph_free(g);
}

/* ---- values, through the plugin -------------------------------------------------------- */

/* A 3x3 image 1..9, a 2x2 kernel of ones, bias -13: the window sums
 * (12, 16, 24, 28) less 13, then relu: 0, 3, 11, 15. */
TEST(cpu_conv_values_by_hand) {
  int cpu, ref;
  alloy_runtime *rt = cpuref_open(&cpu, &ref);
  if (!rt) return;
  alloy_graph *g = parse("input %x: f32[1, 1, 3, 3]\n"
                         "input %w: f32[1, 1, 2, 2]\n"
                         "input %b: f32[1]\n"
                         "%c = aten.convolution.default(%x, %w, %b, [1, 1], [0, 0], [1, 1], false, [0, 0], 1)"
                         " : f32[1, 1, 2, 2]\n"
                         "%y = aten.relu.default(%c) : f32[1, 1, 2, 2]\n"
                         "output %y\n");
  REQUIRE(g);
  float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w[4] = {1, 1, 1, 1}, b[1] = {-13}, y[4] = {0};
  int64_t xs[] = {1, 1, 3, 3}, ws[] = {1, 1, 2, 2}, bs[] = {1};
  alloy_host_tensor in[3] = {cpuref_host(ALLOY_F32, 4, xs, x), cpuref_host(ALLOY_F32, 4, ws, w), cpuref_host(ALLOY_F32, 1, bs, b)};
  if (cpuref_run(rt, cpu, g, in, 3, y, sizeof y, 0)) {
    CHECK(y[0] == 0 && y[1] == 3 && y[2] == 11 && y[3] == 15);
  }
  alloy_graph_free(g);
  /* padding 1, stride 2 over the same image: the corners' windows */
  g = parse("input %x: f32[1, 1, 3, 3]\n"
            "input %w: f32[1, 1, 2, 2]\n"
            "%y = aten.convolution.default(%x, %w, None, [2, 2], [1, 1], [1, 1], false, [0, 0], 1)"
            " : f32[1, 1, 2, 2]\n"
            "output %y\n");
  REQUIRE(g);
  if (cpuref_run(rt, cpu, g, in, 2, y, sizeof y, 0)) {
    CHECK(y[0] == 1 && y[1] == 2 + 3 && y[2] == 4 + 7 && y[3] == 5 + 6 + 8 + 9);
  }
  alloy_graph_free(g);
  alloy_runtime_close(rt);
}

/* Max pooling with indices (NaN wins, ceil_mode's last window), average
 * pooling without the padding in the divisor, adaptive pooling of uneven
 * windows, by hand. */
TEST(cpu_conv_pooling_values_by_hand) {
  int cpu, ref;
  alloy_runtime *rt = cpuref_open(&cpu, &ref);
  if (!rt) return;
  float x[16] = {1, 5, 2, 0, 3, 4, NAN, 8, 9, 1, 2, 7, 6, 6, 3, 2};
  int64_t xs[] = {1, 1, 4, 4};
  alloy_host_tensor in[1] = {cpuref_host(ALLOY_F32, 4, xs, x)};
  alloy_graph *g = parse("input %x: f32[1, 1, 4, 4]\n"
                         "%m, %i = aten.max_pool2d_with_indices.default(%x, [2, 2], [2, 2], [0, 0], [1, 1], false)"
                         " : f32[1, 1, 2, 2], i64[1, 1, 2, 2]\n"
                         "output %m, %i\n");
  REQUIRE(g);
  float m[4] = {0};
  int64_t idx[4] = {0};
  if (cpuref_run(rt, cpu, g, in, 1, m, sizeof m, 0) && cpuref_run(rt, cpu, g, in, 1, idx, sizeof idx, 1)) {
    CHECK(m[0] == 5 && isnan(m[1]) && m[2] == 9 && m[3] == 7);
    CHECK(idx[0] == 1 && idx[1] == 6 && idx[2] == 8 && idx[3] == 11);
  }
  alloy_graph_free(g);
  /* 3x3 windows, stride 2, ceil_mode: the last window holds one row and
   * column; a -inf plane keeps its first tap's index */
  float x2[16] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY,
                  -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, 4};
  alloy_host_tensor in2[1] = {cpuref_host(ALLOY_F32, 4, xs, x2)};
  g = parse("input %x: f32[1, 1, 4, 4]\n"
            "%m, %i = aten.max_pool2d_with_indices.default(%x, [3, 3], [2, 2], [0, 0], [1, 1], true)"
            " : f32[1, 1, 2, 2], i64[1, 1, 2, 2]\n"
            "output %m, %i\n");
  REQUIRE(g);
  if (cpuref_run(rt, cpu, g, in2, 1, m, sizeof m, 0) && cpuref_run(rt, cpu, g, in2, 1, idx, sizeof idx, 1)) {
    CHECK(m[0] == -INFINITY && m[3] == 4);
    CHECK(idx[0] == 0 && idx[1] == 2 && idx[2] == 8 && idx[3] == 15);
  }
  alloy_graph_free(g);
  /* avg 3x3, stride 2, padding 1, count_include_pad false: window
   * [0,2)x[0,2) = (1+5+3+4)/4 */
  g = parse("input %x: f32[1, 1, 4, 4]\n"
            "%a = aten.avg_pool2d.default(%x, [3, 3], [2, 2], [1, 1], false, false) : f32[1, 1, 2, 2]\n"
            "output %a\n");
  REQUIRE(g);
  float a[4] = {0};
  if (cpuref_run(rt, cpu, g, in, 1, a, sizeof a, 0)) {
    CHECK(a[0] == (1 + 5 + 3 + 4) / 4.0f);
    CHECK(isnan(a[1]));                                  /* the NaN's window */
    CHECK(a[2] == (3 + 4 + 9 + 1 + 6 + 6) / 6.0f);       /* rows 1-3, cols 0-1 */
  }
  alloy_graph_free(g);
  /* adaptive 4x4 -> 3x1: rows [0,2), [1,3), [2,4); every column */
  g = parse("input %x: f32[1, 1, 4, 4]\n"
            "%a = aten._adaptive_avg_pool2d.default(%x, [3, 1]) : f32[1, 1, 3, 1]\n"
            "output %a\n");
  REQUIRE(g);
  float ad[3] = {0};
  x[6] = 2;
  if (cpuref_run(rt, cpu, g, in, 1, ad, sizeof ad, 0)) {
    CHECK(ad[0] == (1 + 5 + 2 + 0 + 3 + 4 + 2 + 8) / 2.0f / 4.0f);
    CHECK(ad[2] == (9 + 1 + 2 + 7 + 6 + 6 + 3 + 2) / 2.0f / 4.0f);
  }
  alloy_graph_free(g);
  alloy_runtime_close(rt);
}

static uint64_t rng = 88172645463325252ull;
static double urand(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0 * 2 - 1;
}

/* Convolutions large enough for sgemm (groups, stride, padding,
 * dilation, a relu after), a float64 one through dgemm, and pooling,
 * against the reference backend within DESIGN.md's tolerances. */
TEST(cpu_conv_matches_ref) {
  int cpu, ref;
  alloy_runtime *rt = cpuref_open(&cpu, &ref);
  if (!rt) return;
  REQUIRE(ref >= 0);
  static const struct {
    const char *air;
    alloy_dtype t;
    int64_t xs[4], ws[4], outn;
  } cases[] = {
      {"input %x: f32[3, 8, 17, 15]\ninput %w: f32[12, 4, 3, 3]\ninput %b: f32[12]\n"
       "%c = aten.convolution.default(%x, %w, %b, [2, 1], [1, 2], [1, 2], false, [0, 0], 2) : f32[3, 12, 9, 15]\n"
       "%y = aten.relu.default(%c) : f32[3, 12, 9, 15]\noutput %y\n",
       ALLOY_F32, {3, 8, 17, 15}, {12, 4, 3, 3}, 3 * 12 * 9 * 15},
      {"input %x: f32[2, 64, 13, 13]\ninput %w: f32[100, 64, 1, 1]\ninput %b: f32[100]\n"
       "%c = aten.convolution.default(%x, %w, %b, [1, 1], [0, 0], [1, 1], false, [0, 0], 1) : f32[2, 100, 13, 13]\n"
       "%p = aten._adaptive_avg_pool2d.default(%c, [1, 1]) : f32[2, 100, 1, 1]\noutput %p\n",
       ALLOY_F32, {2, 64, 13, 13}, {100, 64, 1, 1}, 200},
      /* an input expanded along its channels (stride 0): every channel
       * reads the one plane (a conformance sample found it read apart) */
      {"input %x: f32[2, 1, 9, 9]\ninput %w: f32[6, 4, 3, 3]\ninput %b: f32[6]\n"
       "%e = aten.expand.default(%x, [2, 4, 9, 9]) : f32[2, 4, 9, 9]\n"
       "%c = aten.convolution.default(%e, %w, %b, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) : f32[2, 6, 9, 9]\n"
       "output %c\n",
       ALLOY_F32, {2, 1, 9, 9}, {6, 4, 3, 3}, 2 * 6 * 81},
      {"input %x: f64[2, 6, 11, 11]\ninput %w: f64[8, 6, 3, 3]\ninput %b: f64[8]\n"
       "%c = aten.convolution.default(%x, %w, %b, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) : f64[2, 8, 11, 11]\n"
       "%m, %i = aten.max_pool2d_with_indices.default(%c, [3, 3], [2, 2], [1, 1], [1, 1], true)"
       " : f64[2, 8, 6, 6], i64[2, 8, 6, 6]\noutput %m\n",
       ALLOY_F64, {2, 6, 11, 11}, {8, 6, 3, 3}, 2 * 8 * 36},
  };
  for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
    alloy_graph *g = parse(cases[ci].air);
    REQUIRE(g);
    size_t es = alloy_dtype_size(cases[ci].t);
    int64_t nx = 1, nw = 1, cout = cases[ci].ws[0], bsz[1] = {cout};
    for (int d = 0; d < 4; d++) nx *= cases[ci].xs[d], nw *= cases[ci].ws[d];
    void *x = malloc(nx * es), *w = malloc(nw * es), *b = malloc(cout * es);
    void *yc = calloc(cases[ci].outn, es), *yr = calloc(cases[ci].outn, es);
    REQUIRE(x && w && b && yc && yr);
    for (int64_t i = 0; i < nx + nw + cout; i++) {
      double v = urand();
      void *p = i < nx ? x : i < nx + nw ? w : b;
      int64_t j = i < nx ? i : i < nx + nw ? i - nx : i - nx - nw;
      if (es == 8) ((double *)p)[j] = v;
      else ((float *)p)[j] = (float)v;
    }
    alloy_host_tensor in[3] = {cpuref_host(cases[ci].t, 4, cases[ci].xs, x), cpuref_host(cases[ci].t, 4, cases[ci].ws, w),
                               cpuref_host(cases[ci].t, 1, bsz, b)};
    size_t bytes = (size_t)cases[ci].outn * es;
    if (cpuref_run(rt, cpu, g, in, 3, yc, bytes, 0) && cpuref_run(rt, ref, g, in, 3, yr, bytes, 0)) {
      double rtol = es == 8 ? 1e-7 : 1.3e-6, atol = es == 8 ? 1e-7 : 1e-5, worst = 0;
      int bad = 0;
      for (int64_t i = 0; i < cases[ci].outn; i++) {
        double c = es == 8 ? ((double *)yc)[i] : ((float *)yc)[i], r = es == 8 ? ((double *)yr)[i] : ((float *)yr)[i];
        double err = fabs(c - r);
        if (err > atol + rtol * fabs(r)) bad++;
        if (err > worst) worst = err;
      }
      if (bad) harness_fail(__FILE__, __LINE__, "case %zu: %d elements off (largest error %g)", ci, bad, worst);
    }
    free(x), free(w), free(b), free(yc), free(yr);
    alloy_graph_free(g);
  }
  alloy_runtime_close(rt);
}
