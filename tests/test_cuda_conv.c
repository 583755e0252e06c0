/*
 * tests/test_cuda_conv.c: the cuda backend's plans for convolutional
 * networks (plugins/cuda/cuda_codegen_conv.c), which need no GPU: a
 * partition written in .air becomes a plan whose cuDNN steps (their
 * descriptors and operands), pooling and batch norm kernels are checked
 * here, and the claims' own rules say why a node is refused. That cuDNN
 * and the kernels compute PyTorch's numbers is the conformance suite's job
 * on a machine with a GPU (alloy conform --backend cuda).
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

/* Why node i would not be claimed: the general rules, then its op's own. */
static const char *refusal(const alloy_graph *g, int i) {
  const alloy_host_api *h = alloy_host_table();
  const alloy_node *n = h->graph_node(g, i);
  const char *why = cuda_node_unsupported(h, n);
  const cuda_op *op = cuda_op_find(h->node_op_name(n));
  if (!why && op && op->check) why = op->check(h, n);
  return why;
}

static int count(const char *s, const char *what) {
  int n = 0;
  for (const char *p = s; p && (p = strstr(p, what)); p += strlen(what))
    n++;
  return n;
}

/* conv (with a bias) + inference batch norm + relu, the block of a
 * ResNet: a cuDNN step reading x and w in place and writing y, then the
 * kernel adding the bias should cuDNN not fuse it, then batch norm and relu
 * as one fused pass; batch norm's two other outputs are empty. */
TEST(cuda_conv_block_is_a_cudnn_step_and_kernels) {
  alloy_graph *g =
      parse("input %x: f32[2, 3, 8, 8]\n"
            "input %w: f32[8, 3, 3, 3]\n"
            "input %cb: f32[8]\n"
            "input %gamma: f32[8]\n"
            "input %beta: f32[8]\n"
            "input %mean: f32[8]\n"
            "input %var: f32[8]\n"
            "%conv = aten.convolution.default(%x, %w, %cb, [2, 1], [1, 1], [1, 1], false, [0, 0], 1)"
            " : f32[2, 8, 4, 8]\n"
            "%bn, %bm, %bv = aten._native_batch_norm_legit_no_training.default(%conv, %gamma, %beta,"
            " %mean, %var, 0.1, 1e-05) : f32[2, 8, 4, 8], f32[0], f32[0]\n"
            "%y = aten.relu.default(%bn) : f32[2, 8, 4, 8]\n"
            "output %y\n");
  REQUIRE(g);
  const alloy_host_api *h = alloy_host_table();
  for (int i = 0; i < h->graph_num_nodes(g); i++)
    CHECK(refusal(g, i) == NULL);
  cuda_plan p;
  CHECK_OK(cuda_plan_build(h, g, NULL, NULL, &p));
  if (getenv("ALLOY_TEST_PRINT")) fputs(p.source, stderr);
  REQUIRE(p.nlaunches == 3); /* conv, its bias, batch norm + relu */
  const cuda_launch *l = &p.launches[0];
  CHECK(l->kind == LAUNCH_DNN);
  const cuda_conv_desc *c = &l->conv;
  CHECK(c->dtype == ALLOY_F32 && c->rank == 4 && c->bias && !c->allow_tf32);
  CHECK(c->x_sizes[0] == 2 && c->x_sizes[1] == 3 && c->x_sizes[3] == 8 && c->x_strides[0] == 192);
  CHECK(c->w_sizes[0] == 8 && c->w_strides[0] == 27);
  CHECK(c->y_sizes[2] == 4 && c->y_strides[1] == 32);
  CHECK(c->stride[0] == 2 && c->stride[1] == 1 && c->padding[0] == 1 && c->dilation[1] == 1);
  /* x, w and the bias are partition inputs 0, 1, 2, read in place */
  CHECK(p.bases[l->dbase[DNN_X]].kind == BASE_INPUT && p.bases[l->dbase[DNN_X]].index == 0);
  CHECK(p.bases[l->dbase[DNN_W]].index == 1 && p.bases[l->dbase[DNN_BIAS]].index == 2);
  CHECK(p.bases[l->dbase[DNN_Y]].kind == BASE_TEMP);
  CHECK(l->dnn_bias_step == 1);
  CHECK(p.launches[1].kind == LAUNCH_KERNEL && p.launches[1].n == 2 * 8 * 4 * 8);
  CHECK(!strcmp(p.launches[1].what, "conv bias"));
  CHECK(strstr(p.source, "float v2 = v0 + v1;") != NULL); /* y + bias */
  CHECK(strstr(p.source, "i1 * 1") != NULL);              /* bias along dim 1 */
  CHECK(strstr(p.source, "rsqrt((float)v") != NULL);      /* invstd in float */
  CHECK(strstr(p.source, "(float)1.0000000000000001e-05") != NULL);
  CHECK(strstr(p.source, "((float)v0 - (float)v3) * (float)v1 * inv5 + (float)v2") != NULL);
  CHECK(strstr(p.source, "op_relu") || strstr(p.source, "fmax"));
  CHECK(strstr(p.launches[2].what, "fused batch_norm") == p.launches[2].what);
  CHECK(p.nfused_nodes == 2);
  cuda_plan_free(&p);
  alloy_graph_free(g);
}

/* With channels_last (the backend's default), a ResNet block keeps its
 * activations N, H, W, C in memory: the N, C, H, W input is copied
 * channels last for the first convolution, which writes a channels-last
 * temporary; both read and write channels last with their weights copied
 * to the same layout;
 * batch norm + add + relu walk memory order (i is the NHWC index, the
 * channel i3, the vectors per channel), and the max pool's threads take
 * neighbouring channels. The output is written N, C, H, W. */
TEST(cuda_conv_channels_last_block) {
  alloy_graph *g =
      parse("input %x: f32[2, 3, 8, 8]\ninput %w: f32[8, 3, 3, 3]\ninput %w2: f32[8, 8, 3, 3]\n"
            "input %gamma: f32[8]\ninput %beta: f32[8]\ninput %mean: f32[8]\ninput %var: f32[8]\n"
            "%c1 = aten.convolution.default(%x, %w, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) : f32[2, 8, 8, 8]\n"
            "%c2 = aten.convolution.default(%c1, %w2, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) : f32[2, 8, 8, 8]\n"
            "%bn, %bm, %bv = aten._native_batch_norm_legit_no_training.default(%c2, %gamma, %beta,"
            " %mean, %var, 0.1, 1e-05) : f32[2, 8, 8, 8], f32[0], f32[0]\n"
            "%s = aten.add.Tensor(%bn, %c1) : f32[2, 8, 8, 8]\n"
            "%r = aten.relu.default(%s) : f32[2, 8, 8, 8]\n"
            "%mp, %mi = aten.max_pool2d_with_indices.default(%r, [2, 2], [2, 2]) : f32[2, 8, 4, 4], i64[2, 8, 4, 4]\n"
            "output %mp\n");
  REQUIRE(g);
  const cuda_plan_options cl = {.channels_last = true};
  cuda_plan p;
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, &cl, &p));
  if (getenv("ALLOY_TEST_PRINT")) fputs(p.source, stderr);
  /* x's copy, w's copy, conv, w2's copy, conv, batch norm + add + relu, max pool */
  REQUIRE(p.nlaunches == 7);
  const cuda_conv_desc *c1 = &p.launches[2].conv, *c2 = &p.launches[4].conv;
  CHECK(p.launches[2].kind == LAUNCH_DNN && p.launches[4].kind == LAUNCH_DNN);
  CHECK(c1->x_strides[1] == 1 && c1->x_strides[3] == 3 && c1->w_strides[1] == 1); /* both copied channels last */
  CHECK(p.bases[p.launches[0].bases[1]].kind == BASE_TEMP && p.launches[2].dbase[DNN_X] == p.launches[0].bases[1]);
  CHECK(c1->y_strides[0] == 512 && c1->y_strides[1] == 1 && c1->y_strides[2] == 64 && c1->y_strides[3] == 8);
  CHECK(c2->x_strides[1] == 1 && c2->y_strides[1] == 1);
  CHECK(c2->w_strides[0] == 72 && c2->w_strides[1] == 1 && c2->w_strides[2] == 24 && c2->w_strides[3] == 8);
  CHECK(p.bases[p.launches[3].bases[1]].kind == BASE_TEMP && p.launches[4].dbase[DNN_W] == p.launches[3].bases[1]);
  CHECK(p.launches[5].n == 2 * 8 * 8 * 8 && p.launches[5].per_thread == 4);
  CHECK(strstr(p.source, "ldv_f32(p") != NULL); /* c2 and c1 read in memory order, four at a time */
  CHECK(strstr(p.source, "i3 * 1") != NULL);      /* the per-channel vectors: the innermost index */
  CHECK(strstr(p.source, "const int l1 = q % 8; q /= 8;") != NULL); /* the pool: channel fastest */
  cuda_plan_free(&p);
  /* channels_last=0: every tensor N, C, H, W, no weight copy */
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, NULL, &p));
  REQUIRE(p.nlaunches == 4);
  CHECK(p.launches[1].conv.y_strides[1] == 64 && p.launches[1].conv.x_strides[1] == 64);
  cuda_plan_free(&p);
  alloy_graph_free(g);
  /* a squeezenet fire module: the cat along the channels of two
   * channels-last results walks memory order too (the channel is i3) */
  g = parse("input %x: f32[2, 8, 6, 6]\ninput %wa: f32[4, 8, 1, 1]\ninput %wb: f32[4, 8, 3, 3]\n"
            "%a = aten.convolution.default(%x, %wa, None, [1, 1], [0, 0], [1, 1], false, [0, 0], 1) : f32[2, 4, 6, 6]\n"
            "%ra = aten.relu.default(%a) : f32[2, 4, 6, 6]\n"
            "%b = aten.convolution.default(%x, %wb, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) : f32[2, 4, 6, 6]\n"
            "%rb = aten.relu.default(%b) : f32[2, 4, 6, 6]\n"
            "%c = aten.cat.default([%ra, %rb], 1) : f32[2, 8, 6, 6]\n"
            "%m = aten.mul.Tensor(%c, 2.0) : f32[2, 8, 6, 6]\noutput %m\n");
  REQUIRE(g);
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, &cl, &p));
  if (getenv("ALLOY_TEST_PRINT")) fputs(p.source, stderr);
  /* the cat computes the relus in its own kernel, loading at N, H, W, C */
  CHECK(strstr(p.source, "    if (i3 < 4) {\n    float v1 = ld_f32(p0, 0 + i0 * 144 + (i3 - 0) * 1 + i1 * 24 + i2 * 4);\n    float v2 = (float)(op_relu(v1));\n") != NULL);
  CHECK(strstr(p.source, "    else {\n    float v3 = ld_f32(p1, 0 + i0 * 144 + (i3 - 4) * 1 + i1 * 24 + i2 * 4);\n    float v4 = (float)(op_relu(v3));\n") != NULL);
  cuda_plan_free(&p);
  alloy_graph_free(g);
}

/* A 1-d convolution of groups over a transposed input: the input is
 * copied packed first (cuDNN's plans read packed tensors), and every
 * tensor gets a height of 1 before its last dim. No bias: no bias step. */
TEST(cuda_conv_one_dim_grouped_reads_a_packed_copy) {
  alloy_graph *g =
      parse("input %xt: f16[9, 2, 4]\n"
            "input %w: f16[6, 2, 3]\n"
            "%x = aten.permute.default(%xt, [1, 2, 0]) : f16[2, 4, 9]\n"
            "%y = aten.convolution.default(%x, %w, None, [2], [1], [2], false, [0], 2) : f16[2, 6, 4]\n"
            "output %y\n");
  REQUIRE(g);
  for (int i = 0; i < 2; i++)
    CHECK(refusal(g, i) == NULL);
  cuda_plan p;
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, NULL, &p));
  REQUIRE(p.nlaunches == 2); /* the copy, the convolution */
  CHECK(p.launches[0].kind == LAUNCH_KERNEL && p.launches[0].n == 72);
  const cuda_launch *l = &p.launches[1];
  REQUIRE(l->kind == LAUNCH_DNN);
  const cuda_conv_desc *c = &l->conv;
  CHECK(c->dtype == ALLOY_F16 && c->rank == 4 && !c->bias && l->dnn_bias_step == -1);
  CHECK(c->x_sizes[1] == 4 && c->x_sizes[2] == 1 && c->x_sizes[3] == 9 && c->x_strides[2] == 9);
  CHECK(c->w_sizes[1] == 2 && c->w_sizes[2] == 1 && c->w_sizes[3] == 3);
  CHECK(c->y_sizes[1] == 6 && c->y_sizes[3] == 4);
  CHECK(c->stride[0] == 1 && c->stride[1] == 2 && c->padding[0] == 0 && c->padding[1] == 1);
  CHECK(c->dilation[0] == 1 && c->dilation[1] == 2);
  CHECK(p.bases[l->dbase[DNN_X]].kind == BASE_TEMP);                               /* the copy */
  CHECK(p.bases[l->dbase[DNN_Y]].kind == BASE_OUTPUT && l->dbase[DNN_BIAS] == -1); /* in place */
  cuda_plan_free(&p);
  alloy_graph_free(g);
}

/* An output given channels last: cuDNN writes it in place, through its
 * strides (x and its weight are copied channels last first). */
TEST(cuda_conv_channels_last_output_is_written_in_place) {
  alloy_graph *g = parse("input %x: bf16[1, 4, 5, 5]\n"
                         "input %w: bf16[4, 2, 3, 3]\n"
                         "%y = aten.convolution.default(%x, %w, None, [1, 1], [1, 1], [1, 1], false, [0, 0], "
                         "2) : bf16[1, 4, 5, 5]\n"
                         "output %y\n");
  REQUIRE(g);
  int64_t xs[] = {1, 4, 5, 5}, xst[] = {100, 25, 5, 1}, ws[] = {4, 2, 3, 3}, wst[] = {18, 9, 3, 1};
  int64_t ys[] = {1, 4, 5, 5}, yst[] = {100, 1, 20, 4}; /* channels-last */
  alloy_tensor in[2] = {{.dtype = ALLOY_BF16, .rank = 4, .sizes = xs, .strides = xst},
                        {.dtype = ALLOY_BF16, .rank = 4, .sizes = ws, .strides = wst}};
  alloy_tensor out[1] = {{.dtype = ALLOY_BF16, .rank = 4, .sizes = ys, .strides = yst}};
  cuda_layout layout = {in, out};
  cuda_plan p;
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, &layout, NULL, &p));
  REQUIRE(p.nlaunches == 3);
  CHECK(p.launches[2].kind == LAUNCH_DNN && p.bases[p.launches[2].dbase[DNN_Y]].kind == BASE_OUTPUT);
  CHECK(p.launches[2].conv.y_strides[1] == 1 && p.launches[2].conv.y_strides[3] == 4);
  CHECK(p.launches[2].conv.x_strides[1] == 1 && p.launches[2].conv.w_strides[1] == 1);
  cuda_plan_free(&p);
  alloy_graph_free(g);
}

/* What a convolution claim refuses, with its reason. */
TEST(cuda_conv_refusals_have_reasons) {
  alloy_graph *g =
      parse("input %x: f32[2, 4, 5]\n"
            "input %w: f32[4, 3, 3]\n"
            "input %wh: f16[6, 4, 3]\n"
            "input %xi: i64[1, 2, 4, 4]\n"
            "%t = aten.convolution.default(%x, %w, None, [2], [1], [1], true, [0], 2) : f32[2, 6, 9]\n"
            "%m = aten.convolution.default(%x, %wh, None, [1], [0], [1], false, [0], 1) : f32[2, 6, 3]\n"
            "%p, %pi = aten.max_pool2d_with_indices.default(%xi, [2, 2]) : i64[1, 2, 2, 2], i64[1, 2, 2, 2]\n"
            "output %t, %m, %p\n");
  REQUIRE(g);
  const char *why = refusal(g, 0);
  CHECK(why && strstr(why, "transposed"));
  why = refusal(g, 1);
  CHECK(why && strstr(why, "mixed dtypes"));
  why = refusal(g, 2);
  CHECK(why && strstr(why, "float"));
  alloy_graph_free(g);
}

/* max_pool2d_with_indices with padding, dilation and ceil_mode (the
 * output sizes are the graph's): a thread per output, the window's start
 * stepped past the padding by the dilation, NaN winning, the index within
 * the input plane stored as int64 where something reads it; a [C, H, W]
 * input has one leading dim. */
TEST(cuda_conv_max_pool_follows_pytorch_cuda) {
  alloy_graph *g =
      parse("input %x: f16[2, 3, 7, 8]\n"
            "input %u: f32[3, 5, 5]\n"
            "%v, %i = aten.max_pool2d_with_indices.default(%x, [3, 2], [2, 1], [1, 1], [2, 1], true)"
            " : f16[2, 3, 3, 9], i64[2, 3, 3, 9]\n"
            "%w, %j = aten.max_pool2d_with_indices.default(%u, [2, 2]) : f32[3, 2, 2], i64[3, 2, 2]\n"
            "output %v, %i, %w\n");
  REQUIRE(g);
  for (int i = 0; i < 2; i++)
    CHECK(refusal(g, i) == NULL);
  cuda_plan p;
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, NULL, &p));
  if (getenv("ALLOY_TEST_PRINT")) fputs(p.source, stderr);
  REQUIRE(p.nlaunches == 2);
  CHECK(p.launches[0].n == 2 * 3 * 3 * 9 && p.launches[1].n == 12);
  CHECK(strstr(p.source, "const int h0 = oh * 2 - 1, w0 = ow * 1 - 1;") != NULL);
  /* three rows, two apart (dilation 2), each checked against the plane */
  CHECK(strstr(p.source, "for (int kh = 0; kh < 3; kh++) {\n      const int h = h0 + kh * 2;\n"
                         "      if (h < 0 || h >= 7) continue;") != NULL);
  CHECK(strstr(p.source, "while (hs < 0) hs += 2;") != NULL);
  CHECK(strstr(p.source, "if (v > m || op_isnan(v)) { mi = h * 8 + w; m = v; }") != NULL);
  CHECK(strstr(p.source, "float m = -(float)(1.0 / 0.0);") != NULL);
  /* %i's, in the unrolled body and the last pass's checked one; %j is read by nothing */
  CHECK(count(p.source, "st_i64(p") == 2);
  CHECK(strstr(p.source, "const int l1 = q % 3; q /= 3;") != NULL); /* N, C */
  CHECK(strstr(p.source, "const int xb = 0 + l0 * 25;") != NULL);   /* C only */
  cuda_plan_free(&p);
  alloy_graph_free(g);
}

/* avg_pool2d's divisors: the window clipped to the padded input (with
 * padding), to the input (without), or divisor_override. */
TEST(cuda_conv_avg_pool_divisors) {
  alloy_graph *g =
      parse("input %x: f32[2, 3, 7, 8]\n"
            "%a = aten.avg_pool2d.default(%x, [3, 2], [2, 1], [1, 1], true, false) : f32[2, 3, 4, 9]\n"
            "%b = aten.avg_pool2d.default(%x, [3, 2], [2, 1], [1, 1], false, true) : f32[2, 3, 4, 9]\n"
            "%c = aten.avg_pool2d.default(%x, [2, 2], [], [0, 0], false, true, 3) : f32[2, 3, 3, 4]\n"
            "output %a, %b, %c\n");
  REQUIRE(g);
  for (int i = 0; i < 3; i++)
    CHECK(refusal(g, i) == NULL);
  cuda_plan p;
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, NULL, &p));
  if (getenv("ALLOY_TEST_PRINT")) fputs(p.source, stderr);
  REQUIRE(p.nlaunches == 3);
  CHECK(strstr(p.source, "int he = hs + 3 < 8 ? hs + 3 : 8;") != NULL); /* H + padding */
  CHECK(strstr(p.source, "a = a / (float)((he - hs) * (we - ws));") != NULL);
  CHECK(strstr(p.source, "a = a / (float)pool;") != NULL);
  CHECK(strstr(p.source, "a = a / (float)3;") != NULL);
  CHECK(strstr(p.source, "int hs = oh * 2 - 0, ws = ow * 2 - 0;") != NULL); /* stride []: the kernel */
  cuda_plan_free(&p);
  alloy_graph_free(g);
}

/* _adaptive_avg_pool2d: PyTorch's start and end indices, the sum divided
 * by the rows, then by the columns. */
TEST(cuda_conv_adaptive_avg_pool_windows) {
  alloy_graph *g = parse("input %x: bf16[2, 3, 7, 9]\n"
                         "%y = aten._adaptive_avg_pool2d.default(%x, [3, 4]) : bf16[2, 3, 3, 4]\n"
                         "output %y\n");
  REQUIRE(g);
  CHECK(refusal(g, 0) == NULL);
  cuda_plan p;
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, NULL, &p));
  REQUIRE(p.nlaunches == 1);
  CHECK(strstr(p.source, "const int hs = oh * 7 / 3, he = 1 + ((oh + 1) * 7 - 1) / 3;") != NULL);
  CHECK(strstr(p.source, "const int ws = ow * 9 / 4, we = 1 + ((ow + 1) * 9 - 1) / 4;") != NULL);
  CHECK(strstr(p.source, "a = a / (float)(he - hs) / (float)(we - ws);") != NULL);
  CHECK(strstr(p.source, "ld_bf16(p") != NULL && strstr(p.source, "st_bf16(p") != NULL);
  cuda_plan_free(&p);
  alloy_graph_free(g);
}

/* Batch norm without weight and bias: 1 and 0 in their place; hardswish
 * and hardsigmoid fuse with it into one pass, the result rounded to half
 * between each as PyTorch's separate kernels round it. */
TEST(cuda_conv_batch_norm_without_affine_and_hard_activations) {
  alloy_graph *g = parse("input %x: f16[2, 4, 3]\n"
                         "input %mean: f32[4]\n"
                         "input %var: f32[4]\n"
                         "%bn, %bm, %bv = aten._native_batch_norm_legit_no_training.default(%x, None, None,"
                         " %mean, %var, 0.1, 0.5) : f16[2, 4, 3], f32[0], f32[0]\n"
                         "%s = aten.hardswish.default(%bn) : f16[2, 4, 3]\n"
                         "%t = aten.hardsigmoid.default(%s) : f16[2, 4, 3]\n"
                         "output %t, %bm\n");
  REQUIRE(g);
  for (int i = 0; i < 3; i++)
    CHECK(refusal(g, i) == NULL);
  cuda_plan p;
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, NULL, &p));
  if (getenv("ALLOY_TEST_PRINT")) fputs(p.source, stderr);
  REQUIRE(p.nlaunches == 1); /* batch norm + hardswish + hardsigmoid */
  CHECK(p.nfused_nodes == 3);
  CHECK(strstr(p.source, "rnd_f16(((float)v0 - (float)v1) * (float)1 * inv3 + (float)0);") != NULL);
  CHECK(strstr(p.source, "(float)0.5)") != NULL);
  CHECK(count(p.source, "op_clamp(v") == 2 * 3); /* the body thrice: vector loads, unrolled and checked passes */
  CHECK(strstr(p.source, "* ((float)(1.0f / 6.0f))") || strstr(p.source, "* (float)(1.0f / 6.0f)"));
  cuda_plan_free(&p);
  alloy_graph_free(g);
}

/* A depthwise convolution (groups == channels, a [C, 1, 3, 3] weight) is
 * pointwise work of its output's shape: with channels last one kernel
 * walks y in N, H, W, C order, sums the window's taps (stride 2, padding
 * 1: the out-of-bounds ones skipped), adds the bias and goes on into the
 * batch norm and hardswish after it, with no cuDNN step and no temporary.
 * A grouped convolution that is not depthwise stays cuDNN's. */
TEST(cuda_conv_depthwise_fuses_with_its_epilogue) {
  alloy_graph *g =
      parse("input %x: f32[2, 8, 9, 9]\ninput %w: f32[8, 1, 3, 3]\ninput %cb: f32[8]\ninput %g4: f32[8, 2, 3, 3]\n"
            "input %gamma: f32[8]\ninput %beta: f32[8]\ninput %mean: f32[8]\ninput %var: f32[8]\n"
            "%c = aten.convolution.default(%x, %w, %cb, [2, 2], [1, 1], [1, 1], false, [0, 0], 8) : f32[2, 8, 5, 5]\n"
            "%bn, %bm, %bv = aten._native_batch_norm_legit_no_training.default(%c, %gamma, %beta,"
            " %mean, %var, 0.1, 1e-05) : f32[2, 8, 5, 5], f32[0], f32[0]\n"
            "%y = aten.hardswish.default(%bn) : f32[2, 8, 5, 5]\n"
            "%z = aten.convolution.default(%y, %g4, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 4) : f32[2, 8, 5, 5]\n"
            "output %y, %z\n");
  REQUIRE(g);
  const cuda_plan_options cl = {.channels_last = true};
  cuda_plan p;
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, &cl, &p));
  if (getenv("ALLOY_TEST_PRINT")) fputs(p.source, stderr);
  int dnn = 0, kernels = 0;
  for (int i = 0; i < p.nlaunches; i++) dnn += p.launches[i].kind == LAUNCH_DNN, kernels += p.launches[i].kind == LAUNCH_KERNEL;
  CHECK(dnn == 1); /* %z: groups of 2 channels */
  REQUIRE(p.launches[0].kind == LAUNCH_KERNEL);
  CHECK(p.launches[0].n == 2 * 8 * 5 * 5);
  CHECK(strstr(p.launches[0].what, "convolution") != NULL && strstr(p.launches[0].what, "hardswish") != NULL);
  /* i3 is the channel of the channels-last walk, i1 and i2 the row and column */
  CHECK(strstr(p.source, "const int xb0 = 0 + i0 * 648 + i3 * 81, wb0 = 0 + i3 * 9;") != NULL);
  CHECK(strstr(p.source, "const int h = i1 * 2 - 1 + kh * 1;") != NULL);
  CHECK(strstr(p.source, "if (h < 0 || h >= 9) continue;") != NULL);
  CHECK(strstr(p.source, "if (w < 0 || w >= 9) continue;") != NULL);
  CHECK(strstr(p.source, "a0 += (float)ld_f32(p") != NULL && strstr(p.source, "xb0 + h * 9 + w * 1)") != NULL);
  CHECK(strstr(p.source, "a0 += (float)ld_f32(p") != NULL && strstr(p.source, "+ i3 * 1);") != NULL); /* the bias */
  CHECK(strstr(p.source, "rsqrt(") != NULL); /* the batch norm */
  cuda_plan_free(&p);
  alloy_graph_free(g);
}

/* max(relu(x)) is relu(max(x)): a relu whose one reader is a max pool
 * with unread indices is applied by the pool, to the maximum, and the
 * pool reads the convolution's result itself; a relu read elsewhere too
 * stays a kernel of its own. */
TEST(cuda_conv_relu_before_max_pool_is_the_pools) {
  alloy_graph *g =
      parse("input %x: f32[2, 3, 8, 8]\ninput %w: f32[8, 3, 3, 3]\n"
            "%c = aten.convolution.default(%x, %w, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) : f32[2, 8, 8, 8]\n"
            "%r = aten.relu.default(%c) : f32[2, 8, 8, 8]\n"
            "%mp, %mi = aten.max_pool2d_with_indices.default(%r, [3, 3], [2, 2]) : f32[2, 8, 3, 3], i64[2, 8, 3, 3]\n"
            "output %mp\n");
  REQUIRE(g);
  cuda_plan p;
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, NULL, &p));
  if (getenv("ALLOY_TEST_PRINT")) fputs(p.source, stderr);
  REQUIRE(p.nlaunches == 2); /* the convolution, the pool */
  CHECK(p.launches[0].kind == LAUNCH_DNN && !strcmp(p.launches[1].what, "relu+max_pool2d"));
  CHECK(p.launches[1].bases[0] == p.launches[0].dbase[DNN_Y]); /* reads the convolution's result */
  CHECK(strstr(p.source, "if (taps) m = op_relu(m);") != NULL);
  CHECK(strstr(p.source, "op_relu(v") == NULL);
  cuda_plan_free(&p);
  alloy_graph_free(g);
  /* channels last: the pool keeps the convolution's layout, and the next
   * convolution reads its result in place (no copy between) */
  g = parse("input %x: f32[2, 3, 8, 8]\ninput %w: f32[8, 3, 3, 3]\ninput %w2: f32[8, 8, 1, 1]\n"
            "%c = aten.convolution.default(%x, %w, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 1) : f32[2, 8, 8, 8]\n"
            "%r = aten.relu.default(%c) : f32[2, 8, 8, 8]\n"
            "%mp, %mi = aten.max_pool2d_with_indices.default(%r, [3, 3], [2, 2]) : f32[2, 8, 3, 3], i64[2, 8, 3, 3]\n"
            "%c2 = aten.convolution.default(%mp, %w2, None, [1, 1], [0, 0], [1, 1], false, [0, 0], 1) : f32[2, 8, 3, 3]\n"
            "output %c2\n");
  REQUIRE(g);
  const cuda_plan_options cl = {.channels_last = true};
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, &cl, &p));
  int pool = -1, conv2 = -1;
  for (int i = 0; i < p.nlaunches; i++) {
    if (!strcmp(p.launches[i].what, "relu+max_pool2d")) pool = i;
    if (p.launches[i].kind == LAUNCH_DNN) conv2 = i;
  }
  REQUIRE(pool >= 0 && conv2 > pool);
  CHECK(p.launches[conv2].dbase[DNN_X] == p.launches[pool].bases[1]); /* the pool's result, in place */
  CHECK(p.launches[conv2].conv.x_strides[1] == 1);                  /* channels last */
  cuda_plan_free(&p);
  alloy_graph_free(g);
  g = parse("input %x: f32[2, 8, 8, 8]\n"
            "%r = aten.relu.default(%x) : f32[2, 8, 8, 8]\n"
            "%mp, %mi = aten.max_pool2d_with_indices.default(%r, [3, 3], [2, 2]) : f32[2, 8, 3, 3], i64[2, 8, 3, 3]\n"
            "output %mp, %r\n");
  REQUIRE(g);
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, NULL, &p));
  REQUIRE(p.nlaunches == 2); /* relu (an output too), then the pool */
  CHECK(strstr(p.source, "op_relu(m)") == NULL && strstr(p.source, "op_relu(v") != NULL);
  cuda_plan_free(&p);
  alloy_graph_free(g);
}

/* The plan's tensors move when their array grows: a step that kept a
 * pointer to its operand across its output's materialize read freed memory
 * (on the GPU, a flaky illegal address of portable squeezenet). Here the
 * 16 inputs fill the array's first capacity, so each step's output is the
 * tensor that moves it; the steps must still read their operands' bases
 * (under ASan, `make asan`, a read of the freed array fails outright). */
TEST(cuda_conv_steps_keep_their_operands_when_tensors_move) {
  static const char *const steps[] = {
      "%y, %i = aten.max_pool2d_with_indices.default(%x, [2, 2], [2, 2]) : f32[1, 4, 4, 4], i64[1, 4, 4, 4]\n",
      "%y = aten.convolution.default(%x, %w, %cb, [2, 2], [0, 0], [1, 1], false, [0, 0], 1) : f32[1, 4, 4, 4]\n",
      "%y = aten.cumsum.default(%x, 3) : f32[1, 4, 8, 8]\n",
  };
  for (size_t s = 0; s < sizeof steps / sizeof *steps; s++) {
    char air[2048];
    int len = snprintf(air, sizeof air, "input %%x: f32[1, 4, 8, 8]\ninput %%w: f32[4, 4, 2, 2]\ninput %%cb: f32[4]\n");
    for (int d = 0; d < 13; d++) len += snprintf(air + len, sizeof air - (size_t)len, "input %%d%d: f32[2]\n", d);
    snprintf(air + len, sizeof air - (size_t)len, "%soutput %%y\n", steps[s]);
    alloy_graph *g = parse(air);
    REQUIRE(g);
    cuda_plan p;
    CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, NULL, &p));
    REQUIRE(p.nlaunches >= 1);
    const cuda_launch *l = &p.launches[p.nlaunches - 1]; /* the pool's, the scan's */
    for (int i = 0; i < p.nlaunches; i++)
      if (p.launches[i].kind == LAUNCH_DNN) l = &p.launches[i]; /* the convolution's (its bias kernel after it) */
    const int xin = l->kind == LAUNCH_DNN ? l->dbase[DNN_X] : l->bases[0];
    CHECK(xin >= 0 && xin < p.nbases && p.bases[xin].kind == BASE_INPUT && p.bases[xin].index == 0);
    cuda_plan_free(&p);
    alloy_graph_free(g);
  }
}
