/*
 * tests/test_cuda_codegen.c: the cuda backend's planner and code generator
 * (plugins/cuda/cuda_codegen.c), which need no GPU: a partition written in
 * .air becomes a plan whose kernels, launches, bases and CUDA C are checked
 * here. That the code computes the right numbers is the conformance suite's
 * job on a machine with a GPU (alloy conform --backend cuda).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/graph.h"
#include "harness.h"
#include "plugins/cuda/cuda_internal.h"
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

/* x * sigmoid(x) + bias: three pointwise nodes over [4, 8] are one kernel
 * that loads x once and the bias through a broadcast stride, and stores
 * only the output, straight into the output buffer. */
TEST(cuda_codegen_fuses_a_pointwise_chain) {
  alloy_graph *g = parse(
      "input %x: f32[4, 8]\n"
      "input %b: f32[8]\n"
      "%s = aten.sigmoid.default(%x) : f32[4, 8]\n"
      "%m = aten.mul.Tensor(%x, %s) : f32[4, 8]\n"
      "%y = aten.add.Tensor(%m, %b) : f32[4, 8]\n"
      "output %y\n");
  REQUIRE(g);
  cuda_plan p;
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, NULL, &p));
  CHECK(p.nlaunches == 1);
  CHECK(p.nfused_nodes == 3);
  CHECK(p.launches[0].n == 32);
  CHECK(p.scratch_bytes == 0);
  if (getenv("ALLOY_TEST_PRINT")) fputs(p.source, stderr);
  /* the body three times: four elements a thread by vector loads (x and
   * the output; b, broadcast, per element), else unrolled passes and a
   * checked last one, x and b loaded once in each */
  CHECK(count(p.source, "ldv_f32(p") == 1 && count(p.source, "stv_f32(p") == 1);
  CHECK(strstr(p.source, "if ((((unsigned long long)p0 & 15) | ((unsigned long long)p2 & 15)) == 0) {") != NULL);
  CHECK(count(p.source, "ld_f32(p") == 1 + 2 * 2);
  CHECK(count(p.source, "st_f32(p") == 0 + 1 * 2);
  CHECK(strstr(p.source, "if (i4 + 3 * (int)blockDim.x < n) {") != NULL);
  CHECK(strstr(p.source, "op_sigmoid(") != NULL);
  CHECK(strstr(p.source, "i1 * 1") != NULL); /* b: dim 1 of the iteration */
  cuda_plan_free(&p);
  alloy_graph_free(g);
}

/* A view between two pointwise nodes splits them: the value before the
 * transpose is stored in scratch memory and read through transposed
 * strides; the outputs go straight to the output buffers. */
TEST(cuda_codegen_views_are_strides) {
  alloy_graph *g = parse(
      "input %x: f16[2, 3]\n"
      "%e = aten.exp.default(%x) : f16[2, 3]\n"
      "%t = aten.permute.default(%e, [1, 0]) : f16[3, 2]\n"
      "%y = aten.neg.default(%t) : f16[3, 2]\n"
      "output %y, %e\n");
  REQUIRE(g);
  cuda_plan p;
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, NULL, &p));
  CHECK(p.nlaunches == 2);
  CHECK(p.scratch_bytes == 0); /* %e is output 1: stored there */
  CHECK(strstr(p.source, "rnd_f16(") != NULL);
  CHECK(strstr(p.source, "i0 * 1 + i1 * 3") != NULL); /* e read transposed */
  cuda_plan_free(&p);
  alloy_graph_free(g);
}

/* Comparisons compute in the promoted type; an output that is a graph
 * input or a view is a copy kernel. */
TEST(cuda_codegen_promotes_and_copies) {
  alloy_graph *g = parse(
      "input %a: i32[5]\n"
      "input %b: f32[5]\n"
      "%lt = aten.lt.Tensor(%a, %b) : bool[5]\n"
      "%v = aten.unsqueeze.default(%b, 0) : f32[1, 5]\n"
      "output %lt, %a, %v\n");
  REQUIRE(g);
  cuda_plan p;
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, NULL, &p));
  CHECK(p.nlaunches == 3);
  CHECK(strstr(p.source, "((float)v0) < v1") != NULL);
  cuda_plan_free(&p);
  alloy_graph_free(g);
}

/* What is not claimed says why. */
TEST(cuda_codegen_refusals_have_reasons) {
  alloy_graph *g = parse(
      "input %a: f32[5]\n"
      "%i = aten._to_copy.default(%a, dtype=i64) : i64[5]\n"
      "%s, %si = aten.sort.default(%a)\n"
      "output %i\n");
  REQUIRE(g);
  const alloy_host_api *h = alloy_host_table();
  const char *why = cuda_node_unsupported(h, h->graph_node(g, 0));
  CHECK(why && strstr(why, "float to integer"));
  why = cuda_node_unsupported(h, h->graph_node(g, 1));
  CHECK(why && strstr(why, "no CUDA kernel"));
  alloy_graph_free(g);
}

/* A reduction is a kernel of its own, a block per row: sum over dim 1 of
 * an [8, 3, 5] tensor has 8 * 5 rows of 3; softmax over the last dim
 * reads its input through the same row decomposition and writes rows. */
TEST(cuda_codegen_reductions_are_rows) {
  alloy_graph *g = parse(
      "input %x: f32[8, 3, 5]\n"
      "%e = aten.exp.default(%x) : f32[8, 3, 5]\n"
      "%s = aten.sum.dim_IntList(%e, [1], true) : f32[8, 1, 5]\n"
      "%p = aten._softmax.default(%x, -1, false) : f32[8, 3, 5]\n"
      "%c = aten.gt.Scalar(%p, 0.5) : bool[8, 3, 5]\n"
      "%w = aten.where.self(%c, %x, 0) : f32[8, 3, 5]\n"
      "output %s, %w\n");
  REQUIRE(g);
  cuda_plan p;
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, NULL, &p));
  REQUIRE(p.nlaunches == 4); /* exp, sum, softmax, gt+where */
  CHECK(!p.launches[0].rows && p.launches[0].n == 120);
  CHECK(p.launches[1].rows && p.launches[1].n == 40);
  CHECK(p.launches[2].rows && p.launches[2].n == 24);
  CHECK(strstr(p.source, "block_reduce(a, SumOp(), sh, (float)0)") != NULL);
  CHECK(strstr(p.source, "exp(x - m) / s") != NULL);
  CHECK(strstr(p.source, "((float)0LL)") != NULL); /* where's Python 0 as a literal */
  CHECK(p.scratch_bytes == 2 * 512); /* e and p, 480 bytes each, 256-aligned */
  cuda_plan_free(&p);
  alloy_graph_free(g);
}

/* A reduction over the trailing dims joins the pointwise work around it:
 * RMS norm as a bfloat16 Llama exports it (to float, pow, mean, add,
 * rsqrt, mul, to bfloat16, mul by the weight) is one kernel, a block per
 * row; the residual add before it is stored once for the next layer, the
 * float copy computed again in the second loop from it; the assert node
 * does not split the group. A decomposed softmax (amax, sub, exp, sum,
 * div) is one kernel of three loops. Short rows stay as they were. */
TEST(cuda_codegen_row_groups_fuse_reductions) {
  alloy_graph *g = parse(
      "input %x: bf16[4, 8, 128]\ninput %r: bf16[4, 8, 128]\ninput %w: bf16[128]\ninput %y: f32[6, 100]\n"
      "input %z: f32[6, 10]\n"
      "%h = aten.add.Tensor(%x, %r) : bf16[4, 8, 128]\n"
      "%f = aten._to_copy.default(%h, dtype=f32) : f32[4, 8, 128]\n"
      "aten._assert_tensor_metadata.default(%f, None, None, f32)\n"
      "%p = aten.pow.Tensor_Scalar(%f, 2) : f32[4, 8, 128]\n"
      "%m = aten.mean.dim(%p, [-1], true) : f32[4, 8, 1]\n"
      "%e = aten.add.Tensor(%m, 1e-06) : f32[4, 8, 1]\n"
      "%q = aten.rsqrt.default(%e) : f32[4, 8, 1]\n"
      "%n = aten.mul.Tensor(%f, %q) : f32[4, 8, 128]\n"
      "%nb = aten._to_copy.default(%n, dtype=bf16) : bf16[4, 8, 128]\n"
      "%o = aten.mul.Tensor(%w, %nb) : bf16[4, 8, 128]\n"
      "%mx = aten.amax.default(%y, [1], true) : f32[6, 1]\n"
      "%d = aten.sub.Tensor(%y, %mx) : f32[6, 100]\n"
      "%ex = aten.exp.default(%d) : f32[6, 100]\n"
      "%sm = aten.sum.dim_IntList(%ex, [1], true) : f32[6, 1]\n"
      "%sf = aten.div.Tensor(%ex, %sm) : f32[6, 100]\n"
      "%zs = aten.sum.dim_IntList(%z, [1], true) : f32[6, 1]\n"
      "output %o, %h, %sf, %zs\n");
  REQUIRE(g);
  cuda_plan p;
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, NULL, &p));
  if (getenv("ALLOY_TEST_PRINT")) fputs(p.source, stderr);
  REQUIRE(p.nlaunches == 3); /* RMS norm, softmax, the short sum */
  CHECK(p.launches[0].rows && p.launches[0].n == 32 && p.launches[1].rows && p.launches[1].n == 6);
  CHECK(p.scratch_bytes == 0); /* no temporary: %p, %m, %q and %n live in registers */
  CHECK(count(p.source, "for (int j = threadIdx.x; j < 128; j += 256) {") == 2);
  CHECK(count(p.source, "for (int j = threadIdx.x; j < 100; j += 256) {") == 3);
  CHECK(strstr(p.source, "a0 = block_reduce(a0, SumOp(), sh0, (float)0);") != NULL);
  CHECK(strstr(p.source, "a0 = a0 / (float)128;") != NULL);
  CHECK(strstr(p.source, "a0 = block_reduce(a0, MaxOp(), sh0, a0);") != NULL);
  CHECK(strstr(p.source, "float a0 = (float)__int_as_float(0xff800000);") != NULL);
  CHECK(strstr(p.source, "a1 = block_reduce(a1, SumOp(), sh1, (float)0);") != NULL);
  /* %h is stored in the first loop and read back in the second */
  CHECK(count(p.source, "st_bf16(p2, 0 + i, v2);") == 1 && count(p.source, "float v8 = ld_bf16(p2, 0 + i);") == 1);
  CHECK(strstr(p.source, "float v9 = (float)(v8);") != NULL); /* %f again */
  CHECK(strstr(p.source, "float v12 = ld_bf16(p3, 0 + i2 * 1);") != NULL); /* the weight, over the last dim */
  CHECK(strstr(p.source, "block_reduce(a, SumOp(), sh, (float)0)") != NULL); /* %zs: 10 a row, its own kernel */
  cuda_plan_free(&p);
  alloy_graph_free(g);
}

/* Pointwise work moves down to the node reading it, so that SiLU(gate)
 * and the up product's mul fuse past the product between them; slices of
 * a tensor in memory keep the group open; rotary embedding's
 * cat([-x2, x1]) is a load from one input or the other inside the group
 * of the muls and the add around it, the neg computed by the cat on its
 * load of x2 (its one reader: cg_into_cat): one kernel. */
TEST(cuda_codegen_visiting_order_fuses_across_products) {
  alloy_graph *g = parse(
      "input %x: bf16[16, 64]\ninput %wg: bf16[128, 64]\ninput %wu: bf16[128, 64]\n"
      "input %q: f32[2, 4, 8, 16]\ninput %cos: f32[2, 1, 8, 16]\ninput %sin: f32[2, 1, 8, 16]\n"
      "%pg = aten.permute.default(%wg, [1, 0]) : bf16[64, 128]\n"
      "%gt = aten.mm.default(%x, %pg) : bf16[16, 128]\n"
      "%sg = aten.sigmoid.default(%gt) : bf16[16, 128]\n%s = aten.mul.Tensor(%gt, %sg) : bf16[16, 128]\n"
      "%pu = aten.permute.default(%wu, [1, 0]) : bf16[64, 128]\n"
      "%up = aten.mm.default(%x, %pu) : bf16[16, 128]\n"
      "%o = aten.mul.Tensor(%s, %up) : bf16[16, 128]\n"
      "%qc = aten.mul.Tensor(%q, %cos) : f32[2, 4, 8, 16]\n"
      "%x1 = aten.slice.Tensor(%q, 3, 0, 8) : f32[2, 4, 8, 8]\n"
      "%x2 = aten.slice.Tensor(%q, 3, 8, 16) : f32[2, 4, 8, 8]\n"
      "%n = aten.neg.default(%x2) : f32[2, 4, 8, 8]\n"
      "%c = aten.cat.default([%n, %x1], -1) : f32[2, 4, 8, 16]\n"
      "%cs = aten.mul.Tensor(%c, %sin) : f32[2, 4, 8, 16]\n"
      "%r = aten.add.Tensor(%qc, %cs) : f32[2, 4, 8, 16]\n"
      "output %o, %r\n");
  REQUIRE(g);
  cuda_plan p;
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, NULL, &p));
  if (getenv("ALLOY_TEST_PRINT")) fputs(p.source, stderr);
  REQUIRE(p.nlaunches == 4); /* mm, mm, silu * up, cat (neg) + mul + mul + add */
  CHECK(p.launches[0].kind == LAUNCH_GEMM && p.launches[1].kind == LAUNCH_GEMM);
  CHECK(p.launches[2].kind == LAUNCH_KERNEL && p.launches[2].n == 16 * 128);
  CHECK(p.launches[3].n == 2 * 4 * 8 * 16);
  /* temporaries: the two products; not %n, %s, %qc, %c or %cs */
  CHECK(p.scratch_bytes == 2 * 4096);
  CHECK(strstr(p.source, "    if (i3 < 8) {\n"
                         "    float v1 = ld_f32(p0, 8 + i0 * 512 + i1 * 128 + i2 * 16 + (i3 - 0) * 1);\n"
                         "    float v2 = (float)(op_sub((float)0, v1));\n    v0 = (float)v2;\n    }\n"
                         "    else v0 = (float)ld_f32(p0, 0 + i0 * 512 + i1 * 128 + i2 * 16 + (i3 - 8) * 1);\n") != NULL);
  cuda_plan_free(&p);
  alloy_graph_free(g);
}

/* nn.Linear as torch.export writes it, permute(W) then addmm(b, x, W^T):
 * one cuBLASLt product reading W transposed in place, the bias as the
 * epilogue; the relu after it a kernel reading D. */
TEST(cuda_codegen_linear_is_one_product) {
  alloy_graph *g = parse(
      "input %x: f32[8, 64]\n"
      "input %w: f32[32, 64]\n"
      "input %b: f32[32]\n"
      "%t = aten.permute.default(%w, [1, 0]) : f32[64, 32]\n"
      "%y = aten.addmm.default(%b, %x, %t) : f32[8, 32]\n"
      "%r = aten.relu.default(%y) : f32[8, 32]\n"
      "%z = aten.mm.default(%r, %w) : f32[8, 64]\n"
      "output %z\n");
  REQUIRE(g);
  cuda_plan p;
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, NULL, &p));
  REQUIRE(p.nlaunches == 3);
  const cuda_launch *l = &p.launches[0];
  CHECK(l->kind == LAUNCH_GEMM);
  CHECK(l->gemm.m == 8 && l->gemm.n == 32 && l->gemm.k == 64 && l->gemm.batch == 1);
  CHECK(!l->gemm.trans_a && l->gemm.lda == 64);
  CHECK(l->gemm.trans_b && l->gemm.ldb == 64); /* W [32, 64] read as W^T */
  CHECK(l->gemm.bias && !l->gemm.has_c && l->gemm.alpha == 1.0);
  CHECK(l->gbase[GEMM_BIAS] >= 0 && l->gbase[GEMM_C] < 0);
  CHECK(p.launches[1].kind == LAUNCH_KERNEL);
  CHECK(p.launches[2].kind == LAUNCH_GEMM && !p.launches[2].gemm.trans_b && p.launches[2].gemm.ldb == 64);
  cuda_plan_free(&p);
  alloy_graph_free(g);
}

/* The alignment a product's plan expects of each pointer: 256 bytes for a
 * whole buffer, less for a view whose offset breaks it (a slice starting
 * at row 1 of a [4, 64] f32 matrix is 256 bytes in; at column 4, 16). */
TEST(cuda_codegen_product_alignment_follows_views) {
  alloy_graph *g = parse(
      "input %x: f32[9, 64]\n"
      "input %w: f32[64, 32]\n"
      "%a = aten.slice.Tensor(%x, 0, 1, 9) : f32[8, 64]\n"
      "%y = aten.mm.default(%a, %w) : f32[8, 32]\n"
      "%c = aten.slice.Tensor(%w, 1, 4, 32) : f32[64, 28]\n"
      "%z = aten.mm.default(%x, %c) : f32[9, 28]\n"
      "output %y, %z\n");
  REQUIRE(g);
  cuda_plan p;
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, NULL, &p));
  REQUIRE(p.nlaunches == 2);
  const cuda_launch *l = &p.launches[0];
  REQUIRE(l->kind == LAUNCH_GEMM);
  CHECK(l->goff[GEMM_A] == 64);
  CHECK(l->gemm.align[GEMM_A] == 256 && l->gemm.align[GEMM_B] == 256 && l->gemm.align[GEMM_D] == 256);
  l = &p.launches[1];
  REQUIRE(l->kind == LAUNCH_GEMM);
  CHECK(l->goff[GEMM_B] == 4);
  CHECK(l->gemm.align[GEMM_B] == 16 && l->gemm.align[GEMM_A] == 256);
  cuda_plan_free(&p);
  alloy_graph_free(g);
}

/* The rest of a transformer's front: embedding (a gather kernel), arange
 * (a generator of the linear index), cat (one kernel, each element loaded
 * from the input it falls in), layer norm (a block per row writing y, mean
 * and rstd). */
TEST(cuda_codegen_embedding_cat_layer_norm) {
  alloy_graph *g = parse(
      "input %w: f32[100, 16]\n"
      "input %ids: i64[2, 5]\n"
      "input %g: f32[16]\n"
      "input %b: f32[16]\n"
      "%e = aten.embedding.default(%w, %ids) : f32[2, 5, 16]\n"
      "%a = aten.arange.start_step(0, 5, 1, dtype=i64) : i64[5]\n"
      "%c = aten.cat.default([%e, %e], 1) : f32[2, 10, 16]\n"
      "%y, %m, %r = aten.native_layer_norm.default(%c, [16], %g, %b, 1e-05)\n"
      "output %y, %a\n");
  REQUIRE(g);
  const alloy_host_api *h = alloy_host_table();
  for (int i = 0; i < h->graph_num_nodes(g); i++) CHECK(cuda_node_unsupported(h, h->graph_node(g, i)) == NULL);
  cuda_plan p;
  CHECK_OK(cuda_plan_build(h, g, NULL, NULL, &p));
  if (getenv("ALLOY_TEST_PRINT")) fputs(p.source, stderr);
  REQUIRE(p.nlaunches == 4); /* embedding, arange, cat, layer norm */
  CHECK(p.launches[0].n == 160 && !p.launches[0].rows);
  CHECK(p.launches[2].n == 320 && !p.launches[2].rows);
  CHECK(strstr(p.source, "if (i1 < 5) v0 = (float)ld_f32(p0, 0 + i0 * 80 + (i1 - 0) * 16 + i2 * 1);") != NULL);
  CHECK(strstr(p.source, "else v0 = (float)ld_f32(p0, 0 + i0 * 80 + (i1 - 5) * 16 + i2 * 1);") != NULL);
  CHECK(p.launches[3].rows && p.launches[3].n == 20);
  CHECK(strstr(p.source, "row >= 0 && row < 100") != NULL);
  CHECK(strstr(p.source, "((i64)1LL))) * (i64)i") != NULL);
  CHECK(strstr(p.source, "rsqrt(") != NULL);
  cuda_plan_free(&p);
  alloy_graph_free(g);
}

/* A squeezenet fire module, cat([relu(conv1x1(x)), relu(conv3x3(x))]):
 * each relu's one reader is the cat, which applies it to its load of the
 * convolution's result (as Inductor does), so the relus have no kernels
 * and no temporaries: the two convolutions, then one kernel. So with
 * cuDNN's steps and with Alloy's own convolution kernels alike. */
TEST(cuda_codegen_cat_computes_the_relus_only_it_reads) {
  alloy_graph *g =
      parse("input %x: f32[2, 8, 6, 6]\ninput %wa: f32[4, 8, 1, 1]\ninput %wb: f32[4, 8, 3, 3]\n"
            "%a = aten.convolution.default(%x, %wa, None, [1, 1], [0, 0], [1, 1], false, [0, 0], 1) : f32[2, 4, 6, 6]\n"
            "%ra = aten.relu.default(%a) : f32[2, 4, 6, 6]\n"
            "%b = aten.convolution.default(%x, %wb, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) : f32[2, 4, 6, 6]\n"
            "%rb = aten.relu.default(%b) : f32[2, 4, 6, 6]\n"
            "%c = aten.cat.default([%ra, %rb], 1) : f32[2, 8, 6, 6]\noutput %c\n");
  REQUIRE(g);
  static const char both[] =
      "    if (i1 < 4) {\n    float v1 = ld_f32(p0, 0 + i0 * 144 + (i1 - 0) * 36 + i2 * 6 + i3 * 1);\n"
      "    float v2 = (float)(op_relu(v1));\n    v0 = (float)v2;\n    }\n"
      "    else {\n    float v3 = ld_f32(p1, 0 + i0 * 144 + (i1 - 4) * 36 + i2 * 6 + i3 * 1);\n"
      "    float v4 = (float)(op_relu(v3));\n    v0 = (float)v4;\n    }\n";
  for (int portable = 0; portable < 2; portable++) {
    const cuda_plan_options o = {.portable = portable};
    cuda_plan p;
    CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, &o, &p));
    if (getenv("ALLOY_TEST_PRINT")) fputs(p.source, stderr);
    REQUIRE(p.nlaunches == 3); /* conv, conv, cat (five with a kernel a relu) */
    const int kind = portable ? LAUNCH_KERNEL : LAUNCH_DNN;
    CHECK(p.launches[0].kind == kind && p.launches[1].kind == kind);
    const cuda_launch *cat = &p.launches[2];
    CHECK(cat->kind == LAUNCH_KERNEL && cat->n == 2 * 8 * 6 * 6 && !strcmp(cat->what, "fused cat+relu+relu"));
    CHECK(p.nfused_nodes == 3);
    REQUIRE(cat->nbases == 3); /* the convolutions' results, the output */
    if (!portable) {
      CHECK(cat->bases[0] == p.launches[0].dbase[DNN_Y] && cat->bases[1] == p.launches[1].dbase[DNN_Y]);
    } else {
      CHECK(cat->bases[0] == p.launches[0].bases[p.launches[0].nbases - 1]);
      CHECK(cat->bases[1] == p.launches[1].bases[p.launches[1].nbases - 1]);
    }
    CHECK(p.bases[cat->bases[2]].kind == BASE_OUTPUT);
    CHECK(p.scratch_bytes == 2 * 1280); /* a and b (1152 bytes each, 256-aligned); not ra or rb */
    CHECK(strstr(p.source, both) != NULL);
    cuda_plan_free(&p);
  }
  alloy_graph_free(g);
  /* a chain of two operands each, in float16: a + bias (a vector per
   * channel, the cat's dim) times g (broadcast along the cat's dim and
   * the batch), then relu; each node computed in float and rounded to
   * float16, as its own kernel would */
  g = parse("input %a: f16[2, 4, 3, 5]\ninput %bias: f16[4, 1, 1]\ninput %gm: f16[1, 1, 3, 5]\n"
            "input %y: f16[2, 2, 3, 5]\n"
            "%s = aten.add.Tensor(%a, %bias) : f16[2, 4, 3, 5]\n%m = aten.mul.Tensor(%s, %gm) : f16[2, 4, 3, 5]\n"
            "%r = aten.relu.default(%m) : f16[2, 4, 3, 5]\n%c = aten.cat.default([%y, %r], 1) : f16[2, 6, 3, 5]\n"
            "output %c\n");
  REQUIRE(g);
  cuda_plan p;
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, NULL, &p));
  if (getenv("ALLOY_TEST_PRINT")) fputs(p.source, stderr);
  REQUIRE(p.nlaunches == 1);
  CHECK(p.nfused_nodes == 4 && p.scratch_bytes == 0);
  CHECK(strstr(p.source,
               "    if (i1 < 2) v0 = (float)ld_f16(p0, 0 + i0 * 30 + (i1 - 0) * 15 + i2 * 5 + i3 * 1);\n"
               "    else {\n    float v1 = ld_f16(p1, 0 + i0 * 60 + (i1 - 2) * 15 + i2 * 5 + i3 * 1);\n"
               "    float v2 = ld_f16(p2, 0 + (i1 - 2) * 1);\n"
               "    float v3 = rnd_f16((float)(op_add(v1, op_mul(((float)(((float)1LL))), v2))));\n"
               "    float v4 = ld_f16(p3, 0 + i2 * 5 + i3 * 1);\n    float v5 = rnd_f16((float)(op_mul(v3, v4)));\n"
               "    float v6 = rnd_f16((float)(op_relu(v5)));\n    v0 = (float)v6;\n    }\n") != NULL);
  cuda_plan_free(&p);
  alloy_graph_free(g);
}

/* What the cat does not take over: a relu read by the cat and by a mul
 * keeps its kernel (and its result in memory, which the cat loads), the
 * other relu is the cat's; work computed from a value of the group open
 * at the cat (a row group's maximum) makes the cat start a kernel of its
 * own, for it loads that value from memory, at other indices than the
 * group wrote it. */
TEST(cuda_codegen_cat_leaves_work_read_elsewhere_or_in_its_group) {
  alloy_graph *g =
      parse("input %x: f32[2, 8, 6, 6]\ninput %wa: f32[4, 8, 1, 1]\ninput %wb: f32[4, 8, 3, 3]\n"
            "%a = aten.convolution.default(%x, %wa, None, [1, 1], [0, 0], [1, 1], false, [0, 0], 1) : f32[2, 4, 6, 6]\n"
            "%ra = aten.relu.default(%a) : f32[2, 4, 6, 6]\n"
            "%b = aten.convolution.default(%x, %wb, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) : f32[2, 4, 6, 6]\n"
            "%rb = aten.relu.default(%b) : f32[2, 4, 6, 6]\n"
            "%c = aten.cat.default([%ra, %rb], 1) : f32[2, 8, 6, 6]\n"
            "%m = aten.mul.Tensor(%ra, 2.0) : f32[2, 4, 6, 6]\noutput %c, %m\n");
  REQUIRE(g);
  for (int portable = 0; portable < 2; portable++) {
    const cuda_plan_options o = {.portable = portable};
    cuda_plan p;
    CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, &o, &p));
    if (getenv("ALLOY_TEST_PRINT")) fputs(p.source, stderr);
    REQUIRE(p.nlaunches == 5); /* conv, relu, conv, cat (rb's relu), mul */
    CHECK(!strcmp(p.launches[1].what, "relu") && p.launches[1].n == 2 * 4 * 6 * 6);
    CHECK(!strcmp(p.launches[3].what, "fused cat+relu") && !strcmp(p.launches[4].what, "mul"));
    REQUIRE(p.launches[1].nbases == 2 && p.launches[3].nbases == 3);
    CHECK(p.launches[3].bases[0] == p.launches[1].bases[1]); /* ra where its kernel wrote it */
    CHECK(strstr(p.source, "    if (i1 < 4) v0 = (float)ld_f32(p0, 0 + i0 * 144 + (i1 - 0) * 36 + i2 * 6 + i3 * 1);\n"
                           "    else {\n    float v1 = ld_f32(p1, 0 + i0 * 144 + (i1 - 4) * 36 + i2 * 6 + i3 * 1);\n"
                           "    float v2 = (float)(op_relu(v1));\n    v0 = (float)v2;\n    }\n") != NULL);
    cuda_plan_free(&p);
  }
  alloy_graph_free(g);
  /* relu(x - amax(p)) inside cat([., y]) of p's shape: without the care
   * the cat would join amax's row group and load m as thread 0 stores it */
  g = parse("input %p: f32[2, 64]\ninput %x: f32[2, 32]\ninput %y: f32[2, 32]\n"
            "%m = aten.amax.default(%p, [1], true) : f32[2, 1]\n%d = aten.sub.Tensor(%x, %m) : f32[2, 32]\n"
            "%r = aten.relu.default(%d) : f32[2, 32]\n%c = aten.cat.default([%r, %y], 1) : f32[2, 64]\n"
            "%e = aten.mul.Tensor(%c, %p) : f32[2, 64]\noutput %e\n");
  REQUIRE(g);
  cuda_plan p;
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, NULL, &p));
  if (getenv("ALLOY_TEST_PRINT")) fputs(p.source, stderr);
  REQUIRE(p.nlaunches == 2); /* amax; cat (sub, relu) + mul */
  CHECK(p.launches[0].rows && p.launches[0].n == 2 && !p.launches[1].rows && p.launches[1].n == 128);
  CHECK(!strcmp(p.launches[1].what, "fused cat+sub+relu+1"));
  CHECK(p.launches[1].bases[1] == p.launches[0].bases[1]); /* m, where the row kernel wrote it */
  CHECK(strstr(p.source, "    float v2 = ld_f32(p1, 0 + i0 * 1);\n") != NULL); /* m broadcast along the row */
  cuda_plan_free(&p);
  alloy_graph_free(g);
}

/* With channels_last, the convolutions write N, H, W, C temporaries: the
 * relus the cat takes over keep their layout (vinfo.cl), so that the cat
 * walks memory order (the channel is i3) and writes its result channels
 * last for the convolution after it, which reads it where it is. */
TEST(cuda_codegen_cat_takes_relus_of_channels_last_results) {
  alloy_graph *g =
      parse("input %x: f32[2, 8, 6, 6]\ninput %wa: f32[4, 8, 1, 1]\ninput %wb: f32[4, 8, 3, 3]\n"
            "input %wc: f32[2, 8, 1, 1]\n"
            "%a = aten.convolution.default(%x, %wa, None, [1, 1], [0, 0], [1, 1], false, [0, 0], 1) : f32[2, 4, 6, 6]\n"
            "%ra = aten.relu.default(%a) : f32[2, 4, 6, 6]\n"
            "%b = aten.convolution.default(%x, %wb, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) : f32[2, 4, 6, 6]\n"
            "%rb = aten.relu.default(%b) : f32[2, 4, 6, 6]\n"
            "%c = aten.cat.default([%ra, %rb], 1) : f32[2, 8, 6, 6]\n"
            "%y = aten.convolution.default(%c, %wc, None, [1, 1], [0, 0], [1, 1], false, [0, 0], 1) : f32[2, 2, 6, 6]\n"
            "output %y\n");
  REQUIRE(g);
  const cuda_plan_options cl = {.channels_last = true};
  cuda_plan p;
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, &cl, &p));
  if (getenv("ALLOY_TEST_PRINT")) fputs(p.source, stderr);
  /* x's copy, conv, x's copy (the same kernel), wb's copy, conv, cat, conv */
  REQUIRE(p.nlaunches == 7);
  const cuda_launch *ca = &p.launches[1], *cb = &p.launches[4], *cat = &p.launches[5], *cy = &p.launches[6];
  REQUIRE(ca->kind == LAUNCH_DNN && cb->kind == LAUNCH_DNN && cy->kind == LAUNCH_DNN);
  CHECK(ca->conv.y_strides[1] == 1 && cb->conv.y_strides[1] == 1); /* a and b channels last */
  CHECK(cat->kind == LAUNCH_KERNEL && !strcmp(cat->what, "fused cat+relu+relu") && cat->n == 2 * 8 * 6 * 6);
  REQUIRE(cat->nbases == 3);
  CHECK(cat->bases[0] == ca->dbase[DNN_Y] && cat->bases[1] == cb->dbase[DNN_Y]);
  /* the next convolution reads the cat's result in place, channels last */
  CHECK(cy->dbase[DNN_X] == cat->bases[2]);
  CHECK(cy->conv.x_strides[0] == 288 && cy->conv.x_strides[1] == 1 && cy->conv.x_strides[2] == 48 &&
        cy->conv.x_strides[3] == 8);
  CHECK(strstr(p.source, "    if (i3 < 4) {\n"
                         "    float v1 = ld_f32(p0, 0 + i0 * 144 + (i3 - 0) * 1 + i1 * 24 + i2 * 4);\n"
                         "    float v2 = (float)(op_relu(v1));\n    v0 = (float)v2;\n    }\n"
                         "    else {\n    float v3 = ld_f32(p1, 0 + i0 * 144 + (i3 - 4) * 1 + i1 * 24 + i2 * 4);\n"
                         "    float v4 = (float)(op_relu(v3));\n    v0 = (float)v4;\n    }\n") != NULL);
  CHECK(strstr(p.source, "stv_f32(p2, 0 + t * 4, S0);") != NULL); /* written in memory order, four at a time */
  cuda_plan_free(&p);
  alloy_graph_free(g);
}

/* A llama's rotary tables and causal mask: cos[position_ids] (index.Tensor
 * with one index tensor), a cumsum along a row, a bitwise and of masks and
 * the metadata assertion torch.export leaves (no kernel). */
TEST(cuda_codegen_index_cumsum_bitwise) {
  alloy_graph *g = parse(
      "input %cos: f32[64, 8]\n"
      "input %pos: i64[2, 5]\n"
      "input %m: bool[2, 5]\n"
      "input %k: bool[2, 5]\n"
      "aten._assert_tensor_metadata.default(%pos, dtype=i64)\n"
      "%c = aten.index.Tensor(%cos, [%pos]) : f32[2, 5, 8]\n"
      "%s = aten.cumsum.default(%pos, 1) : i64[2, 5]\n"
      "%a = aten.bitwise_and.Tensor(%m, %k) : bool[2, 5]\n"
      "%b = aten.unsqueeze.default(%pos, 1) : i64[2, 1, 5]\n"
      "%r = aten.view.default(%pos, [2, 5, 1]) : i64[2, 5, 1]\n"
      "%q = aten.index.Tensor(%cos, [%r, %b]) : f32[2, 5, 5]\n"
      "%z = aten.index.Tensor(%m, [None, %pos]) : bool[2, 2, 5]\n"
      "output %c, %s, %a, %q, %z\n");
  REQUIRE(g);
  const alloy_host_api *h = alloy_host_table();
  for (int i = 0; i < h->graph_num_nodes(g); i++) CHECK(cuda_node_unsupported(h, h->graph_node(g, i)) == NULL);
  cuda_plan p;
  CHECK_OK(cuda_plan_build(h, g, NULL, NULL, &p));
  if (getenv("ALLOY_TEST_PRINT")) fputs(p.source, stderr);
  REQUIRE(p.nlaunches == 5);
  CHECK(p.launches[0].n == 80 && p.launches[1].n == 2 && p.launches[2].n == 10);
  CHECK(p.launches[3].n == 50 && p.launches[4].n == 20);
  CHECK(strstr(p.source, "if (at0 < 0) at0 += 64;") != NULL);
  /* two index tensors broadcast to [2, 5, 5]: cos[r[i, j, 0], b[i, 0, k]] */
  CHECK(strstr(p.source, "if (at1 < 0) at1 += 8;") != NULL);
  CHECK(strstr(p.source, "at0 >= 0 && at0 < 64 && at1 >= 0 && at1 < 8") != NULL);
  CHECK(strstr(p.source, "0 + at0 * 8 + at1 * 1") != NULL);
  CHECK(strstr(p.source, "for (i64 j = 0; j < 5; j++)") != NULL);
  cuda_plan_free(&p);
  alloy_graph_free(g);
}

/* Two layers of the same shapes make the same kernels over other buffers:
 * the module holds each once, the launches name it twice. */
TEST(cuda_codegen_same_kernels_are_written_once) {
  alloy_graph *g = parse(
      "input %x: f32[4, 8]\n"
      "input %y: f32[4, 8]\n"
      "%a = aten.tanh.default(%x) : f32[4, 8]\n"
      "%s = aten.sum.dim_IntList(%a, [1]) : f32[4]\n"
      "%b = aten.tanh.default(%y) : f32[4, 8]\n"
      "%t = aten.sum.dim_IntList(%b, [1]) : f32[4]\n"
      "output %s, %t\n");
  REQUIRE(g);
  cuda_plan p;
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, NULL, &p));
  REQUIRE(p.nlaunches == 4);
  CHECK(p.nkernels == 2);
  CHECK(!strcmp(p.launches[0].name, p.launches[2].name));
  CHECK(!strcmp(p.launches[1].name, p.launches[3].name));
  CHECK(strcmp(p.launches[0].name, p.launches[1].name) != 0);
  CHECK(p.launches[0].bases[0] != p.launches[2].bases[0]);
  cuda_plan_free(&p);
  alloy_graph_free(g);
}

/* scaled_dot_product_attention is one kernel of its own geometry. In
 * bfloat16 with head dims of 16s it is the tensor-core body: 64 query rows
 * a block (4 warps of 16), or 128 (of 32, two row tiles a warp) where the
 * grid is some 256 blocks deep, mma.sync, q and k read through their
 * strides (k here transposed in memory), the bool mask broadcast over
 * heads, staged tile by tile where it is dense, the causal bound and the
 * keys' as offsets, the fully masked row's zeros; two layers' identical
 * attentions share one kernel's text. In float32 it is a thread per query
 * row. */
TEST(cuda_codegen_attention_is_one_kernel) {
  alloy_graph *g = parse(
      "input %q: bf16[2, 4, 200, 64]\n"
      "input %kt: bf16[2, 4, 64, 300]\n"
      "input %v: bf16[2, 4, 300, 32]\n"
      "input %m: bool[2, 1, 200, 300]\n"
      "input %x: f32[3, 50, 24]\n"
      "input %q2: bf16[1, 2, 64, 32]\n"
      "input %m2: bool[1, 1, 64, 64]\n"
      "input %q3: bf16[8, 32, 256, 64]\n"
      "%k = aten.transpose.int(%kt, 2, 3) : bf16[2, 4, 300, 64]\n"
      "%a = aten.scaled_dot_product_attention.default(%q, %k, %v, %m) : bf16[2, 4, 200, 32]\n"
      "%b = aten.scaled_dot_product_attention.default(%q, %k, %v, %m) : bf16[2, 4, 200, 32]\n"
      "%c = aten.scaled_dot_product_attention.default(%q, %k, %v, None, 0.0, true, scale=0.5) : bf16[2, 4, 200, 32]\n"
      "%d = aten.scaled_dot_product_attention.default(%x, %x, %x, None, 0.0, true) : f32[3, 50, 24]\n"
      "%e = aten.scaled_dot_product_attention.default(%q, %q, %q) : bf16[2, 4, 200, 64]\n"
      "%f = aten.scaled_dot_product_attention.default(%q2, %q2, %q2, %m2) : bf16[1, 2, 64, 32]\n"
      "%h = aten.scaled_dot_product_attention.default(%q3, %q3, %q3) : bf16[8, 32, 256, 64]\n"
      "output %a, %b, %c, %d, %e, %f, %h\n");
  REQUIRE(g);
  for (int i = 0; i < alloy_graph_num_nodes(g); i++)
    CHECK(cuda_node_unsupported(alloy_host_table(), alloy_graph_node(g, i)) == NULL);
  cuda_plan p;
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, NULL, &p));
  if (getenv("ALLOY_TEST_PRINT")) fputs(p.source, stderr);
  CHECK(p.nlaunches == 7);
  CHECK(p.nkernels == 6); /* %a and %b: one text */
  /* 8 batch indices x 4 tiles of 64 rows: too few blocks for two row
   * tiles a warp; the last tiles first */
  CHECK(p.launches[0].block == 128 && p.launches[0].grid[0] == 4 * 2 * 4);
  CHECK(strstr(p.source, "const i64 tile = 3 - blockIdx.x / 8, r0 = tile * 64;") != NULL);
  CHECK(p.launches[0].shmem == 2 * (64 * 72 + 2 * 64 * (72 + 40))); /* q; two buffers of k and v */
  CHECK(!strcmp(p.launches[0].name, p.launches[1].name));
  CHECK(strstr(p.source, "kb + j * 1 + e * 300") != NULL); /* k: the transposed strides */
  CHECK(strstr(p.source, "if (sc != ninf && !ld_bool(p3, mb + row * msl + j * mss)) sc = ninf;") != NULL);
  CHECK(strstr(p.source, "b0 * 60000") != NULL); /* the mask's batch stride; its heads broadcast */
  CHECK(strstr(p.source, "mma.sync.aligned.m16n8k16.row.col.f32") != NULL);
  CHECK(count(p.source, "#define ALLOY_MMA16816") == 5); /* guarded: defined once */
  /* exp2(s * c - max * c): c = scale * log2(e), 1/sqrt(64) or scale= */
  CHECK(strstr(p.source, "att_ex2(fmaf(sa[mi][hh * 4 + nt][i], 0.18033688f, -mc[mi * 2 + (i >> 1)]))") != NULL);
  CHECK(strstr(p.source, "0.72134752f") != NULL);
  CHECK(strstr(p.source, "if (__any_sync(0xffffffffu, grow)) {") != NULL); /* the maximum moves by 2^8 */
  /* %c: causal, 300 keys: the last tile and the diagonal's checked by
   * offsets, the others not at all */
  CHECK(strstr(p.source, "if (j0 + 64 <= 300 && j0 + 63 <= wrow) {") != NULL);
  CHECK(strstr(p.source, "if (dj + (nt * 8 + (i & 1) - mi * 16 - (i >> 1) * 8) > 0) sc = ninf;") != NULL);
  CHECK(strstr(p.source, "const int sj = 300 - (int)j0 - 2 * t;") != NULL);
  CHECK(strstr(p.source, "if (j0 <= wrow + 15) {") != NULL); /* a warp past the diagonal skips the tile */
  CHECK(strstr(p.source, "rs[ri] > 0.f ? o[mi][et][h * 2 + c] * inv : z") != NULL);
  /* with the mask, the key tiles where some row keeps a key are listed
   * first; k transposed in memory is copied element by element, %e's
   * dense rows 16 bytes at a time; fragments by ldmatrix */
  CHECK(count(p.source, "if (__syncthreads_or(any))") == 2); /* %a and %f's fallback */
  CHECK(strstr(p.source, "return (i64)live[it] * 64;") != NULL);
  CHECK(strstr(p.source, "return (i64)it * 64;") != NULL);
  CHECK(count(p.source, "const bool vec = false;") == 2);
  CHECK(strstr(p.source, "const bool vec = ((((unsigned long long)p1) | ((unsigned long long)p2)) & 15) == 0;") != NULL);
  CHECK(strstr(p.source, "cp_async16(kd + jj * 72 + e, (const unsigned short *)p1 + kb + min(j, (i64)199) * 64 + e, on && "
                         "j < 200);") != NULL);
  CHECK(strstr(p.source, "ldsm_x4_trans(bf, vs + ") != NULL);
  /* %f's mask (64 keys, dense) is staged tile by tile (rows padded to 80
   * bytes), its tiles listed without a barrier each; each warp sees
   * whether its rows keep all of a tile; %a's (300 keys) is not staged */
  CHECK(count(p.source, "const bool mtiles = (((unsigned long long)p3) & 15) == 0;") == 1);
  CHECK(p.launches[5].shmem == 2 * (64 * 40 + 2 * 64 * (40 + 40)) + 2 * 64 * 80);
  CHECK(strstr(p.source, "const uint4 u = __ldg((const uint4 *)(p3 + mb + row * msl + j));") != NULL);
  CHECK(strstr(p.source, "wall = __all_sync(0xffffffffu, an == 0x01010101u)") != NULL);
  CHECK(strstr(p.source, "if (!(((i < 2 ? m0 : m1) >> ((i & 1) * 8)) & 255)) sc = ninf;") != NULL);
  /* %h: 256 batch indices: 128 rows a block, two row tiles a warp; one
   * way through a tile, so q's fragments stay in registers */
  CHECK(p.launches[6].block == 128 && p.launches[6].grid[0] == 2 * 256);
  CHECK(p.launches[6].shmem == 2 * (128 * 72 + 2 * 64 * (72 + 72)));
  CHECK(strstr(p.source, "const i64 tile = 1 - blockIdx.x / 256, r0 = tile * 128;") != NULL);
  CHECK(strstr(p.source, "unsigned qa[2][4][4];") != NULL);
  CHECK(strstr(p.source, "asm(\"mov.b32 %0, %1;\" : \"=r\"(nlive) : \"r\"((int)((last + 63) / 64)));") != NULL);
  CHECK(strstr(p.source, "pack2_bf16(rs[ri] > 0.f ? o[mi][et][h * 2] * inv : z") != NULL); /* two columns a store */
  /* float32: a thread per row, 128 rows a block, no batch dims but one */
  CHECK(p.launches[3].block == 128 && p.launches[3].grid[0] == 3 && p.launches[3].shmem == 0);
  CHECK(strstr(p.source, "if (j > row) break;") != NULL);
  CHECK(strstr(p.source, "if (j > row) sc = ninf;") != NULL);
  CHECK(strstr(p.source, "sum > 0.f ? acc[e] * inv") != NULL);
  cuda_plan_free(&p);
  /* planned portable (vendor_libs=0, the HIP build) or for a device before
   * sm_80, every attention is the SIMT kernel: no PTX, 128 rows a block */
  static const cuda_plan_options simt[2] = {{.portable = true}, {.simt_attention = true}};
  for (int i = 0; i < 2; i++) {
    CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, &simt[i], &p));
    CHECK(p.nlaunches == 7 && strstr(p.source, "mma.sync") == NULL && strstr(p.source, "ldmatrix") == NULL);
    CHECK(p.launches[0].block == 128 && p.launches[0].grid[0] == 2 * 2 * 4 && p.launches[0].shmem == 0);
    CHECK(strstr(p.source, "ld_bf16(p0, qb + row * 64 + e * 1) * 0.125f") != NULL);
    cuda_plan_free(&p);
  }
  alloy_graph_free(g);
}

/* What the attention kernel does not take is left to the next backend,
 * with the reason. */
TEST(cuda_codegen_attention_refusals) {
  alloy_graph *g = parse(
      "input %q: f32[2, 8, 16, 256]\n"
      "input %k: f32[2, 8, 16, 256]\n"
      "input %x: f32[2, 8, 16, 64]\n"
      "%a = aten.scaled_dot_product_attention.default(%q, %k, %k) : f32[2, 8, 16, 256]\n"
      "%b = aten.scaled_dot_product_attention.default(%x, %x, %x, None, 0.1) : f32[2, 8, 16, 64]\n"
      "output %a, %b\n");
  REQUIRE(g);
  const char *why = cuda_node_unsupported(alloy_host_table(), alloy_graph_node(g, 0));
  CHECK(why && strstr(why, "head dims"));
  why = cuda_node_unsupported(alloy_host_table(), alloy_graph_node(g, 1));
  CHECK(why && strstr(why, "dropout"));
  alloy_graph_free(g);
}

#if defined(ALLOY_TEST_NVRTC) || defined(ALLOY_TEST_HIPRTC)
/* Where a run-time compiler is (the Makefile defines ALLOY_TEST_NVRTC as
 * the CUDA toolkit's NVRTC library and ALLOY_TEST_HIPRTC as the HIP
 * runtime, which holds hipRTC), every module the planner writes must
 * compile, for an H100 (sm_90) and for an MI200 (gfx90a, wavefronts of
 * 64): both compile without a GPU, so a kernel that does not compile (NVRTC
 * has no math.h, no INFINITY; hipRTC has no PTX) fails here rather than on
 * the device. The plans are the other tests' kinds of graphs, one module
 * each, planned as each build plans them: HIP's portable (its products,
 * convolutions and 16-bit attention without PTX); on NVIDIA 16-bit
 * attention both ways, mma.sync and the SIMT kernel. */
#include "tests/rtc/rtc_compile.h"

/* Where a module goes: NVRTC in this process (the library's path), or
 * hipRTC through the helper program for an AMD architecture
 * (tests/rtc/rtc_compile.h has both). */
typedef struct rtc {
  const char *nvrtc;  /* NVRTC: the library, else NULL */
  bool nvidia;        /* compiles NVIDIA-only kernels (PTX) */
  const char *helper; /* hipRTC: the helper program, or NULL */
  const char *arch;   /* hipRTC: "gfx90a" */
  cuda_plan_options opts; /* how the build plans */
} rtc;

static void rtc_compiles_as(const rtc *r, const char *air, const cuda_plan_options *opts) {
  alloy_graph *g = parse(air);
  REQUIRE(g);
  cuda_plan p;
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, opts, &p));
  alloy_graph_free(g);
  REQUIRE(p.source);
#ifdef ALLOY_TEST_HIPRTC
  if (r->helper) rtc_hiprtc_compiles(r->helper, ALLOY_TEST_HIPRTC, p.source, r->arch, HIP_RTC_OPTIONS);
#endif
  if (r->nvrtc) {
    static const char *const flags[] = {"--gpu-architecture=sm_90", CUDA_NVRTC_OPTIONS};
    rtc_nvrtc_compiles(r->nvrtc, p.source, flags, (int)(sizeof flags / sizeof *flags));
  }
  cuda_plan_free(&p);
}

static void rtc_compiles(const rtc *r, const char *air) { rtc_compiles_as(r, air, &r->opts); }

static void rtc_compiles_every_kind(const rtc *r) {
  rtc_compiles(r,
               "input %x: bf16[4, 8]\ninput %b: f32[8]\n"
                 "%s = aten.sigmoid.default(%x) : bf16[4, 8]\n%m = aten.mul.Tensor(%x, %s) : bf16[4, 8]\n"
                 "%y = aten.add.Tensor(%m, %b) : f32[4, 8]\n%t = aten.permute.default(%y, [1, 0]) : f32[8, 4]\n"
                 "%z = aten.sum.dim_IntList(%t, [1]) : f32[8]\n%w = aten._softmax.default(%y, 1, false) : f32[4, 8]\n"
                 "output %z, %w\n");
  rtc_compiles(r,
               "input %x: f16[2, 16, 32]\ninput %w: f16[32]\ninput %c: f16[32]\n"
                 "%y, %mu, %rs = aten.native_layer_norm.default(%x, [32], %w, %c, 1e-5) : "
                 "f16[2, 16, 32], f16[2, 16, 1], f16[2, 16, 1]\noutput %y\n");
  rtc_compiles(r, /* row groups: RMS norm, and a decomposed softmax in float64 */
               "input %x: bf16[4, 8, 128]\ninput %w: bf16[128]\ninput %y: f64[6, 100]\n"
                 "%f = aten._to_copy.default(%x, dtype=f32) : f32[4, 8, 128]\n"
                 "%p = aten.pow.Tensor_Scalar(%f, 2) : f32[4, 8, 128]\n%m = aten.mean.dim(%p, [-1], true) : f32[4, 8, 1]\n"
                 "%q = aten.rsqrt.default(%m) : f32[4, 8, 1]\n%n = aten.mul.Tensor(%f, %q) : f32[4, 8, 128]\n"
                 "%o = aten.mul.Tensor(%w, %n) : f32[4, 8, 128]\n"
                 "%mx = aten.amin.default(%y, [1], true) : f64[6, 1]\n%d = aten.sub.Tensor(%y, %mx) : f64[6, 100]\n"
                 "%sm = aten.sum.dim_IntList(%d, [1], true) : f64[6, 1]\n%sf = aten.div.Tensor(%d, %sm) : f64[6, 100]\n"
                 "output %o, %m, %sf\n");
  rtc_compiles(r, /* a cat inside a group (rotary embedding) */
               "input %q: f16[2, 4, 8, 16]\ninput %sin: f16[2, 1, 8, 16]\n"
                 "%x1 = aten.slice.Tensor(%q, 3, 0, 8) : f16[2, 4, 8, 8]\n%x2 = aten.slice.Tensor(%q, 3, 8, 16) : f16[2, 4, 8, 8]\n"
                 "%n = aten.neg.default(%x2) : f16[2, 4, 8, 8]\n%c = aten.cat.default([%n, %x1], -1) : f16[2, 4, 8, 16]\n"
                 "%cs = aten.mul.Tensor(%c, %sin) : f16[2, 4, 8, 16]\noutput %cs\n");
  rtc_compiles(r, /* a cat computing the pointwise work only it reads, in bfloat16 */
               "input %x: bf16[2, 8, 6, 6]\ninput %wa: bf16[4, 8, 1, 1]\ninput %wb: bf16[4, 8, 3, 3]\n"
                 "input %bias: bf16[4, 1, 1]\n"
                 "%a = aten.convolution.default(%x, %wa, None, [1, 1], [0, 0], [1, 1], false, [0, 0], 1)"
                 " : bf16[2, 4, 6, 6]\n%ra = aten.relu.default(%a) : bf16[2, 4, 6, 6]\n"
                 "%b = aten.convolution.default(%x, %wb, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 1)"
                 " : bf16[2, 4, 6, 6]\n%s = aten.add.Tensor(%b, %bias) : bf16[2, 4, 6, 6]\n"
                 "%rb = aten.hardswish.default(%s) : bf16[2, 4, 6, 6]\n"
                 "%c = aten.cat.default([%ra, %rb], 1) : bf16[2, 8, 6, 6]\noutput %c\n");
  static const char attention16[] =
      "input %q: bf16[2, 4, 200, 64]\ninput %k: bf16[2, 4, 300, 64]\ninput %v: bf16[2, 4, 300, 32]\n"
      "input %m: bool[2, 1, 200, 300]\ninput %f: bf16[200, 300]\n"
      "%a = aten.scaled_dot_product_attention.default(%q, %k, %v, %m) : bf16[2, 4, 200, 32]\n"
      "%b = aten.scaled_dot_product_attention.default(%q, %k, %v, %f) : bf16[2, 4, 200, 32]\n"
      "%q3 = aten.select.int(%q, 0, 0) : bf16[4, 200, 64]\n%k3 = aten.select.int(%k, 0, 0) : bf16[4, 300, 64]\n"
      "%v3 = aten.select.int(%v, 0, 0) : bf16[4, 300, 32]\n"
      "%c = aten.scaled_dot_product_attention.default(%q3, %k3, %v3, None, 0.0, true) : bf16[4, 200, 32]\n"
      "output %a, %b, %c\n";
  rtc_compiles(r, attention16); /* NVIDIA: mma.sync; HIP: the SIMT kernel */
  if (r->nvidia) rtc_compiles_as(r, attention16, &(cuda_plan_options){.simt_attention = true});
  rtc_compiles(r,
               "input %x: f32[2, 3, 8, 8]\ninput %w: f32[8, 3, 3, 3]\ninput %cb: f32[8]\ninput %gamma: f32[8]\n"
                 "input %wd: f32[8, 1, 3, 3]\n"
                 "input %beta: f32[8]\ninput %mean: f32[8]\ninput %var: f32[8]\n"
                 "%conv = aten.convolution.default(%x, %w, %cb, [2, 1], [1, 1], [1, 1], false, [0, 0], 1)"
                 " : f32[2, 8, 4, 8]\n"
                 "%bn, %bm, %bv = aten._native_batch_norm_legit_no_training.default(%conv, %gamma, %beta,"
                 " %mean, %var, 0.1, 1e-05) : f32[2, 8, 4, 8], f32[0], f32[0]\n"
                 "%y = aten.hardswish.default(%bn) : f32[2, 8, 4, 8]\n"
                 "%v, %i = aten.max_pool2d_with_indices.default(%y, [3, 2], [2, 1], [1, 1], [2, 1], true)"
                 " : f32[2, 8, 2, 9], i64[2, 8, 2, 9]\n"
                 "%a = aten.avg_pool2d.default(%y, [3, 2], [2, 1], [1, 1], true, false) : f32[2, 8, 3, 9]\n"
                 "%p = aten._adaptive_avg_pool2d.default(%y, [3, 4]) : f32[2, 8, 3, 4]\n"
                 "%dw = aten.convolution.default(%y, %wd, %cb, [2, 1], [1, 1], [1, 2], false, [0, 0], 8)"
                 " : f32[2, 8, 2, 6]\n"
                 "%rl = aten.relu.default(%y) : f32[2, 8, 4, 8]\n"
                 "%rp, %ri = aten.max_pool2d_with_indices.default(%rl, [2, 2], [2, 2]) : f32[2, 8, 2, 4], i64[2, 8, 2, 4]\n"
                 "output %v, %i, %a, %p, %dw, %rp\n");
  /* float32 attention: the SIMT kernel, HIP's too */
  rtc_compiles(r, "input %q: f32[2, 4, 20, 16]\ninput %k: f32[2, 4, 30, 16]\ninput %v: f32[2, 4, 30, 8]\n"
                  "%a = aten.scaled_dot_product_attention.default(%q, %k, %v, None, 0.0, true) : f32[2, 4, 20, 8]\n"
                  "output %a\n");
}
#endif

#ifdef ALLOY_TEST_NVRTC
TEST(cuda_codegen_modules_compile_with_nvrtc) {
  rtc r = {.nvrtc = ALLOY_TEST_NVRTC, .nvidia = true};
  rtc_compiles_every_kind(&r);
}
#endif

#ifdef ALLOY_TEST_HIPRTC
TEST(cuda_codegen_modules_compile_with_hiprtc_for_wavefronts_of_64_and_32) {
  char helper[512];
  snprintf(helper, sizeof helper, "%s/tests/hiprtc_compile", getenv("ALLOY_TEST_BUILD") ? getenv("ALLOY_TEST_BUILD") : "build");
  if (access(helper, X_OK) != 0) harness_fail(__FILE__, __LINE__, "%s is not built", helper);
  REQUIRE(access(helper, X_OK) == 0);
  /* an MI200 (gfx90a, wavefronts of 64) and RDNA2 (gfx1030, of 32): of
   * docs/backends/hip.md's targets, those Debian's HIP 5.2 compiles (its
   * device libraries stop before gfx1100; its hipRTC aborts on gfx940) */
  rtc r = {.helper = helper, .arch = "gfx90a", .opts = {.portable = true}};
  rtc_compiles_every_kind(&r);
  rtc r32 = {.helper = helper, .arch = "gfx1030", .opts = {.portable = true}};
  rtc_compiles_every_kind(&r32);
}
#endif
