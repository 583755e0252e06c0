/*
 * tests/test_cpu_plan.c: the cpu backend's planner (plugins/cpu/cpu_plan.c
 * and cpu_rows.c) and the LLVM IR text it writes (cpu_ir.c), which need no
 * LLVM: a partition written in .air becomes a plan whose steps, bases and
 * IR are checked here. That LLVM takes the IR and the code computes the
 * right numbers is the conformance suite's job (alloy conform --backend
 * cpu), where llvm-config is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/graph.h"
#include "harness.h"
#include "plugins/cpu/cpu_internal.h"
#include "sdk/src/host.h"

static alloy_graph *parse(const char *air) {
  alloy_graph *g = NULL;
  CHECK_OK(alloy_air_parse(air, strlen(air), "test.air", &g));
  return g;
}

static int count(const char *s, const char *what) {
  int n = 0;
  for (const char *p = s; p && (p = strstr(p, what)); p += strlen(what)) n++;
  return n;
}

/* The module's text after the prelude: the kernels. */
static const char *kernels(const cpu_plan *p) {
  const char *k = strstr(p->ir, "\ndefine void @k0(");
  return k ? k : "";
}

static int kernel_steps(const cpu_plan *p) {
  int n = 0;
  for (int i = 0; i < p->nsteps; i++) n += p->steps[i].kind == STEP_KERNEL;
  return n;
}

static alloy_error *plan(alloy_graph *g, bool blas, cpu_plan *p) {
  cpu_plan_options o = {.blas = blas};
  alloy_error *e = cpu_plan_build(alloy_host_table(), g, NULL, &o, p);
  if (!e && getenv("ALLOY_TEST_PRINT")) fputs(kernels(p), stderr);
  return e;
}

/* x * sigmoid(x) + bias: three pointwise nodes over [4, 8] are one loop
 * nest that loads x once and the bias through a broadcast stride, and
 * stores only the output, straight into the output buffer; the [4, 8] of
 * a contiguous x coalesce into one row of 32. */
TEST(cpu_plan_fuses_a_pointwise_chain) {
  alloy_graph *g = parse(
      "input %x: f32[4, 8]\n"
      "input %b: f32[8]\n"
      "%s = aten.sigmoid.default(%x) : f32[4, 8]\n"
      "%m = aten.mul.Tensor(%x, %s) : f32[4, 8]\n"
      "%y = aten.add.Tensor(%m, %b) : f32[4, 8]\n"
      "output %y\n");
  REQUIRE(g);
  cpu_plan p;
  CHECK_OK(plan(g, true, &p));
  REQUIRE(p.nsteps == 1);
  CHECK(p.nfused_nodes == 3);
  CHECK(p.nkernels == 1);
  CHECK(p.scratch_bytes == 0);
  const char *k = kernels(&p);
  CHECK(count(k, "load float, float*") == 2); /* x once, b once */
  CHECK(count(k, "store float") == 1);
  CHECK(strstr(k, "@op.sigmoid.f32(") != NULL);
  /* the bias varies along dim 1 only: the rows of 8 stay apart */
  CHECK(p.steps[0].rows == 4);
  CHECK(strstr(p.steps[0].what, "sigmoid+mul+add") != NULL);
  cpu_plan_free(&p);
  alloy_graph_free(g);
}

/* A permute of an input between pointwise nodes is strides: the chain is
 * still one loop, reading w transposed in place. A view of a value the
 * loop computes makes it store that value (scratch memory), and the node
 * reading the view starts another loop. */
TEST(cpu_plan_views_are_strides_not_copies) {
  alloy_graph *g = parse(
      "input %x: f32[4, 8]\n"
      "input %w: f32[8, 4]\n"
      "%a = aten.exp.default(%x) : f32[4, 8]\n"
      "%t = aten.permute.default(%w, [1, 0]) : f32[4, 8]\n"
      "%y = aten.add.Tensor(%a, %t) : f32[4, 8]\n"
      "%v = aten.permute.default(%y, [1, 0]) : f32[8, 4]\n"
      "%z = aten.neg.default(%v) : f32[8, 4]\n"
      "output %z\n");
  REQUIRE(g);
  cpu_plan p;
  CHECK_OK(plan(g, true, &p));
  CHECK(p.nsteps == 2);
  CHECK(p.nfused_nodes == 3);
  CHECK(p.scratch_bytes == 128); /* y, 32 floats */
  CHECK(strstr(p.steps[0].what, "exp+add") != NULL);
  CHECK(strstr(p.steps[1].what, "neg") != NULL);
  cpu_plan_free(&p);
  alloy_graph_free(g);
}

/* Contiguous operands coalesce to one dim; a long one is cut in tiles of
 * 4096 rows for the threads, with the tail's trip count computed. */
TEST(cpu_plan_coalesces_and_tiles) {
  alloy_graph *g = parse(
      "input %a: f16[4, 8, 16]\n"
      "input %b: f16[4, 8, 16]\n"
      "input %c: f32[100000]\n"
      "%s = aten.add.Tensor(%a, %b) : f16[4, 8, 16]\n"
      "%e = aten.exp.default(%c) : f32[100000]\n"
      "output %s, %e\n");
  REQUIRE(g);
  cpu_plan p;
  CHECK_OK(plan(g, true, &p));
  REQUIRE(p.nsteps == 2);
  CHECK(p.steps[0].rows == 1);  /* 512 elements, one row */
  CHECK(p.steps[1].rows == 25); /* 100000 = 24 tiles of 4096 and a tail */
  const char *k = kernels(&p);
  CHECK(strstr(k, "fptrunc float") != NULL); /* float16 computed in float, rounded */
  CHECK(strstr(k, "%trip = select") != NULL);
  cpu_plan_free(&p);
  alloy_graph_free(g);
}

/* Comparisons compute in the promoted type; where's Python 0 is a
 * constant; an output that is an input is a copy. */
TEST(cpu_plan_promotes_and_copies) {
  alloy_graph *g = parse(
      "input %a: i32[5]\n"
      "input %b: f32[5]\n"
      "%lt = aten.lt.Tensor(%a, %b) : bool[5]\n"
      "%w = aten.where.self(%lt, %b, 0) : f32[5]\n"
      "output %w, %a\n");
  REQUIRE(g);
  cpu_plan p;
  CHECK_OK(plan(g, true, &p));
  CHECK(p.nsteps == 2);
  const char *k = kernels(&p);
  CHECK(strstr(k, "sitofp i32") != NULL);
  CHECK(strstr(k, "fcmp olt float") != NULL);
  CHECK(strstr(k, "select i1") != NULL);
  cpu_plan_free(&p);
  alloy_graph_free(g);
}

/* A transformer's layers make the same loops over other buffers: the
 * module holds each once, the steps run it on their own pointers. */
TEST(cpu_plan_writes_a_repeated_kernel_once) {
  alloy_graph *g = parse(
      "input %x: f32[16]\n"
      "input %y: f32[16]\n"
      "%a = aten.relu.default(%x) : f32[16]\n"
      "%b = aten.sum.default(%a) : f32[]\n"
      "%c = aten.relu.default(%y) : f32[16]\n"
      "%d = aten.sum.default(%c) : f32[]\n"
      "output %b, %d\n");
  REQUIRE(g);
  cpu_plan p;
  CHECK_OK(plan(g, true, &p));
  CHECK(p.nsteps == 4);
  CHECK(p.nkernels == 2); /* the relu loop, the sum */
  cpu_plan_free(&p);
  alloy_graph_free(g);
}

/* A reduction's row loop runs over the kept dims (8 * 5 of them for a
 * sum over dim 1 of [8, 3, 5]); softmax reads and writes rows; a sum of
 * float32 accumulates in double, in blocks the vectorizer may reorder. */
TEST(cpu_plan_reductions_are_rows) {
  alloy_graph *g = parse(
      "input %x: f32[8, 3, 5]\n"
      "%e = aten.exp.default(%x) : f32[8, 3, 5]\n"
      "%s = aten.sum.dim_IntList(%e, [1], true) : f32[8, 1, 5]\n"
      "%p = aten._softmax.default(%x, -1, false) : f32[8, 3, 5]\n"
      "%c = aten.gt.Scalar(%p, 0.5) : bool[8, 3, 5]\n"
      "%w = aten.where.self(%c, %x, 0) : f32[8, 3, 5]\n"
      "output %s, %w\n");
  REQUIRE(g);
  cpu_plan p;
  CHECK_OK(plan(g, true, &p));
  REQUIRE(p.nsteps == 4); /* exp, sum, softmax, gt+where */
  CHECK(p.steps[1].rows == 40);
  CHECK(p.steps[2].rows == 24);
  const char *k = kernels(&p);
  CHECK(strstr(k, "fadd reassoc double") != NULL);
  CHECK(strstr(k, "@llvm.maxnum.f32") != NULL);
  /* e and p, 480 bytes each, 64-aligned: p takes e's place, dead once
   * the sum has read it */
  CHECK(p.scratch_bytes == 512);
  cpu_plan_free(&p);
  alloy_graph_free(g);
}

/* nn.Linear as torch.export writes it, permute(W) then addmm(b, x, W^T),
 * then relu: one sgemm reading W transposed in place, then one loop that
 * adds the bias and applies relu. Without OpenBLAS the product is a loop
 * nest of its own. */
TEST(cpu_plan_products_fuse_bias_and_activation) {
  const char *air =
      "input %x: f32[64, 96]\n"
      "input %w: f32[128, 96]\n"
      "input %b: f32[128]\n"
      "%t = aten.permute.default(%w, [1, 0]) : f32[96, 128]\n"
      "%y = aten.addmm.default(%b, %x, %t) : f32[64, 128]\n"
      "%r = aten.relu.default(%y) : f32[64, 128]\n"
      "output %r\n";
  alloy_graph *g = parse(air);
  REQUIRE(g);
  cpu_plan p;
  CHECK_OK(plan(g, true, &p));
  REQUIRE(p.nsteps == 2);
  CHECK(p.steps[0].kind == STEP_GEMM);
  CHECK(p.steps[0].gemm.trans_b && !p.steps[0].gemm.trans_a);
  CHECK(p.steps[0].gemm.m == 64 && p.steps[0].gemm.n == 128 && p.steps[0].gemm.k == 96);
  CHECK(p.steps[0].gemm.ldb == 96);
  CHECK(p.steps[1].kind == STEP_KERNEL);
  CHECK(strstr(p.steps[1].what, "addmm+relu") != NULL);
  cpu_plan_free(&p);
  CHECK_OK(plan(g, false, &p));
  CHECK(p.nsteps == 2 && kernel_steps(&p) == 2);
  CHECK(strstr(kernels(&p), "@llvm.fma.f32") != NULL);
  cpu_plan_free(&p);
  alloy_graph_free(g);
}

/* bfloat16 products: operands converted to float32 temporaries, one
 * sgemm, the result rounded once in the loop after it. */
TEST(cpu_plan_bf16_products_go_through_float32) {
  alloy_graph *g = parse(
      "input %a: bf16[4, 128, 64]\n"
      "input %b: bf16[4, 64, 32]\n"
      "%c = aten.bmm.default(%a, %b) : bf16[4, 128, 32]\n"
      "output %c\n");
  REQUIRE(g);
  cpu_plan p;
  CHECK_OK(plan(g, true, &p));
  REQUIRE(p.nsteps == 4); /* two conversions, the product, the rounding */
  CHECK(p.steps[2].kind == STEP_GEMM && p.steps[2].gemm.batch == 4);
  CHECK(p.steps[2].gemm.stride_a == 128 * 64);
  CHECK(strstr(kernels(&p), "@op.to_bf16(") != NULL);
  cpu_plan_free(&p);
  alloy_graph_free(g);
}

/* What is not claimed says why. */
TEST(cpu_plan_refusals_have_reasons) {
  alloy_graph *g = parse(
      "input %a: f32[5]\n"
      "%i = aten._to_copy.default(%a, dtype=i64) : i64[5]\n"
      "%s, %si = aten.sort.default(%a)\n"
      "%m = aten.amax.default(%a, [0]) : f32[]\n"
      "output %i, %m\n");
  REQUIRE(g);
  const alloy_host_api *h = alloy_host_table();
  const char *why = cpu_node_unsupported(h, h->graph_node(g, 0));
  CHECK(why && strstr(why, "float to integer"));
  why = cpu_node_unsupported(h, h->graph_node(g, 1));
  CHECK(why && strstr(why, "no cpu kernel"));
  CHECK(cpu_node_unsupported(h, h->graph_node(g, 2)) == NULL);
  alloy_graph_free(g);
}
