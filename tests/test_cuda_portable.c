/*
 * tests/test_cuda_portable.c: the cuda backend's portable product and
 * convolution kernels (plugins/cuda/cuda_codegen_gemm.c), which need no
 * GPU to plan: with cuda_plan_options.portable (option vendor_libs=0, and
 * always in the HIP build) a product or a convolution is a LAUNCH_KERNEL
 * step of a tile kernel in the plan's module, never a cuBLASLt or cuDNN
 * step; its grid, operands and text are checked here. Where NVRTC and
 * hipRTC are (the Makefile says), every kind of module compiles for sm_90,
 * gfx90a (wavefronts of 64) and gfx1030 (of 32) without an error or a
 * warning. That the kernels compute the right numbers is
 * tests/cuda/portable_check.c's job on a GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/graph.h"
#include "harness.h"
#include "plugins/cuda/cuda_codegen.h"
#include "sdk/src/host.h"
#include "tests/rtc/rtc_compile.h"

static const cuda_plan_options portable = {.portable = true};

static alloy_graph *parse(const char *air) {
  alloy_graph *g = NULL;
  CHECK_OK(alloy_air_parse(air, strlen(air), "test.air", &g));
  return g;
}

/* The portable plan of air, which must build; the caller frees it. */
static void plan_of(const char *air, cuda_plan *p) {
  memset(p, 0, sizeof *p);
  alloy_graph *g = parse(air);
  REQUIRE(g);
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, &portable, p));
  alloy_graph_free(g);
  if (getenv("ALLOY_TEST_PRINT")) fputs(p->source, stderr);
}

static bool no_library_steps(const cuda_plan *p) {
  for (int i = 0; i < p->nlaunches; i++)
    if (p->launches[i].kind != LAUNCH_KERNEL) return false;
  return true;
}

/* A tile kernel's step: its own geometry, 256 threads, grid (column tiles,
 * row tiles, batches). */
static bool tile_step(const cuda_launch *l, unsigned gx, unsigned gy, unsigned gz) {
  return l->kind == LAUNCH_KERNEL && l->block == 256 && l->grid[0] == gx && l->grid[1] == gy && l->grid[2] == gz &&
         l->n == 1;
}

static const char mm_air[] = "input %a: f32[100, 70]\ninput %b: f32[70, 50]\n"
                             "%y = aten.mm.default(%a, %b) : f32[100, 50]\noutput %y\n";

/* mm of sizes no tile divides: one tile kernel (64 x 64 tiles: few
 * blocks), bounds-checked, its operands read where they are; without the
 * option the same graph is a cuBLASLt step. */
TEST(cuda_portable_mm_is_one_tile_kernel) {
  cuda_plan p;
  plan_of(mm_air, &p);
  REQUIRE(p.nlaunches == 1);
  CHECK(tile_step(&p.launches[0], 1, 2, 1));
  CHECK(p.launches[0].nbases == 3 && p.scratch_bytes == 0);
  CHECK(strstr(p.source, "fmaf(a[i], b[j], acc[i][j])") != NULL);
  CHECK(strstr(p.source, "if (go < 100 && gk < 70)") != NULL); /* A's edge */
  CHECK(strstr(p.source, "if (go < 50 && gk < 70)") != NULL);  /* B's */
  CHECK(strstr(p.source, "ra[j] = ld_f32(p0, at);") != NULL); /* k = 70: no 4-wide loads */
  CHECK(strstr(p.source, "cublas") == NULL);
  cuda_plan_free(&p);
  alloy_graph *g = parse(mm_air);
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, NULL, &p));
  CHECK(p.nlaunches == 1 && p.launches[0].kind == LAUNCH_GEMM);
  cuda_plan_free(&p);
  alloy_graph_free(g);
}

/* bmm of bf16 with B broadcast over the batch (expand: batch stride 0):
 * grid z is the batch, A steps by its batch stride and B does not. */
TEST(cuda_portable_bmm_broadcasts_a_batch) {
  cuda_plan p;
  plan_of("input %a: bf16[6, 256, 32]\ninput %b: bf16[32, 256]\n"
          "%e = aten.expand.default(%b, [6, 32, 256]) : bf16[6, 32, 256]\n"
          "%y = aten.bmm.default(%a, %e) : bf16[6, 256, 256]\noutput %y\n",
          &p);
  REQUIRE(p.nlaunches == 1 && no_library_steps(&p));
  CHECK(tile_step(&p.launches[0], 4, 4, 6)); /* 64 x 64 tiles: 96 blocks */
  CHECK(strstr(p.source, "+ bz * 8192") != NULL);  /* A: 256 x 32 a batch */
  CHECK(strstr(p.source, "ld4_bf16(p0") != NULL);   /* 4 of k a load */
  CHECK(strstr(p.source, "ld4_bf16(p1") != NULL);   /* 4 of n a load */
  CHECK(strstr(p.source, "st4_bf16(p2") != NULL);
  CHECK(strstr(p.source, "bz * 65536 + row * 256 + col") != NULL); /* D packed */
  cuda_plan_free(&p);
}

/* nn.Linear then relu: addmm(bias, x, W^T) reads W transposed in place
 * (B's loads run along k) and adds the bias in its epilogue; the relu is
 * the fused kernel after it. A 16-bit product accumulates in float. */
TEST(cuda_portable_linear_reads_w_transposed_with_bias) {
  cuda_plan p;
  plan_of("input %x: f16[512, 768]\ninput %w: f16[3072, 768]\ninput %b: f16[3072]\n"
          "%t = aten.permute.default(%w, [1, 0]) : f16[768, 3072]\n"
          "%y = aten.addmm.default(%b, %x, %t) : f16[512, 3072]\n"
          "%r = aten.relu.default(%y) : f16[512, 3072]\noutput %r\n",
          &p);
  REQUIRE(p.nlaunches == 2 && no_library_steps(&p));
  CHECK(tile_step(&p.launches[0], 48, 4, 1)); /* 128 x 64 tiles: 96 of 128 x 128 would leave SMs idle */
  CHECK(p.launches[0].nbases == 4);          /* x, W, bias, D */
  CHECK(strstr(p.source, "const int kk = (u % 2) * 4, o = u / 2;") != NULL); /* B along k, 4 a load */
  CHECK(strstr(p.source, "x += ld_f16(p2, 0 + cc);") != NULL);
  CHECK(strstr(p.source, "float acc[8][4];") != NULL);
  CHECK(strstr(p.source, "if (ala) ld4_f16(p0, at, &ra[j * 4]);") != NULL); /* 4 of k, if aligned */
  CHECK(strstr(p.source, "op_relu(") != NULL);
  CHECK(p.launches[1].block == 0); /* the relu: a pointwise kernel */
  cuda_plan_free(&p);
}

/* addmm with a full C, alpha and beta: D = alpha a b + beta C, C read in
 * the epilogue (float alpha and beta); baddbmm with a C that broadcasts
 * is expanded into D first and read back in place. */
TEST(cuda_portable_addmm_alpha_beta_and_in_place_c) {
  cuda_plan p;
  plan_of("input %c: f32[64, 96]\ninput %a: f32[64, 40]\ninput %b: f32[40, 96]\n"
          "input %c3: f32[1, 96]\ninput %a3: f32[3, 64, 40]\ninput %b3: f32[3, 40, 96]\n"
          "%y = aten.addmm.default(%c, %a, %b, beta=0.5, alpha=2.0) : f32[64, 96]\n"
          "%z = aten.baddbmm.default(%c3, %a3, %b3, beta=0.25) : f32[3, 64, 96]\n"
          "output %y, %z\n",
          &p);
  REQUIRE(no_library_steps(&p));
  REQUIRE(p.nlaunches == 3); /* addmm; baddbmm's C expanded into D, then the product */
  CHECK(strstr(p.source, "acc[ci * 4 + i][cj * 4 + jj] * (float)2;") != NULL);
  CHECK(strstr(p.source, "x = fmaf((float)0.5, cv, x);") != NULL);
  CHECK(strstr(p.source, "x = fmaf((float)0.25, cv, x);") != NULL);
  const cuda_launch *l = &p.launches[2];
  REQUIRE(l->nbases == 4);
  CHECK(l->bases[2] == l->bases[3]); /* C is D */
  CHECK(strstr(p.source, "const char *p2, char *p3") != NULL); /* neither __restrict__ */
  cuda_plan_free(&p);
}

/* A builder whose module already holds the prelude (a plan of one kernel,
 * k0), for steps written straight from a description: the epilogues the
 * planner does not produce from a graph yet (activations, a broadcast row
 * as C) are the tile kernel's too. */
static void direct_begin(builder *b, cuda_plan *p) {
  cuda_plan pre;
  plan_of("input %x: f32[4]\n%y = aten.neg.default(%x) : f32[4]\noutput %y\n", &pre);
  cg_builder_over(b, alloy_host_table(), p, &pre, &(cuda_plan_options){.portable = true});
}

static void direct_end(builder *b, cuda_plan *p) {
  alloy_error *e = cg_builder_finish(b, p);
  CHECK(e == NULL);
  alloy_error_free(e);
}

/* The product steps of the direct tests: gelu over a broadcast row as C
 * (f16, sizes no 4 divides: scalar stores), and relu after a bias with A
 * transposed (bf16). */
static void direct_products(cuda_plan *p) {
  builder b;
  direct_begin(&b, p);
  cuda_launch l = {.kind = LAUNCH_GEMM};
  for (int k = 0; k < GEMM_OPERANDS; k++) l.gbase[k] = -1;
  l.gemm = (cuda_gemm_desc){.dtype = ALLOY_F16, .m = 33, .n = 70, .k = 45, .batch = 2, .lda = 45, .ldb = 70,
                            .stride_a = 33 * 45, .stride_b = 0, .alpha = 1, .beta = 1, .has_c = true,
                            .ldc = 0, .stride_c = 0, .activation = 2};
  l.gbase[GEMM_A] = 0, l.gbase[GEMM_B] = 1, l.gbase[GEMM_C] = 2, l.gbase[GEMM_D] = 3;
  snprintf(l.what, sizeof l.what, "gelu");
  cg_gemm_kernel(&b, NULL, &l);
  l.gemm = (cuda_gemm_desc){.dtype = ALLOY_BF16, .m = 300, .n = 20, .k = 17, .batch = 1, .lda = 300, .ldb = 20,
                            .trans_a = true, .alpha = 1, .bias = true, .activation = 1};
  l.gbase[GEMM_C] = -1, l.gbase[GEMM_BIAS] = 2;
  snprintf(l.what, sizeof l.what, "relu");
  cg_gemm_kernel(&b, NULL, &l);
  direct_end(&b, p);
}

TEST(cuda_portable_epilogues_gelu_relu_and_a_broadcast_row) {
  cuda_plan p;
  direct_products(&p);
  REQUIRE(p.nlaunches == 2);
  CHECK(tile_step(&p.launches[0], 2, 1, 2) && tile_step(&p.launches[1], 1, 5, 1)); /* 64 x 64 tiles */
  CHECK(strstr(p.source, "const float cv = ld_f16(p2, 0 + cc);") != NULL); /* ldc 0: one row for all */
  CHECK(strstr(p.source, "x = gelu_tanh(x);") != NULL);
  CHECK(strstr(p.source, "x = op_relu(x);") != NULL);
  CHECK(strstr(p.source, "const int o = (u % 16) * 4, kk = u / 16;") != NULL); /* A^T: 4 of m a load */
  CHECK(strstr(p.source, "st4_f16") == NULL || strstr(p.source, "st4_f16(p3") == NULL);
  if (getenv("ALLOY_TEST_PRINT")) fputs(p.source, stderr);
  cuda_plan_free(&p);
}

static const char conv_air[] =
    "input %x: f32[2, 8, 15, 13]\ninput %w: f32[12, 4, 3, 3]\ninput %b: f32[12]\n"
    "input %xd: f16[1, 16, 9, 9]\ninput %wd: f16[16, 2, 3, 3]\n"
    "input %x3: bf16[2, 3, 5, 6, 7]\ninput %w3: bf16[4, 3, 2, 3, 3]\ninput %b3: bf16[4]\n"
    "input %x1: f32[3, 6, 40]\ninput %w1: f32[5, 6, 4]\n"
    /* grouped, strided, padded, dilated, with a bias: 2-d */
    "%y = aten.convolution.default(%x, %w, %b, [2, 1], [1, 2], [1, 2], false, [0, 0], 2) : f32[2, 12, 8, 13]\n"
    /* groups of 2 channels, no bias, 16-bit (a depthwise one is a fused
     * group's, as with cuDNN: test_cuda_conv.c) */
    "%d = aten.convolution.default(%xd, %wd, None, [1, 1], [1, 1], [1, 1], false, [0, 0], 8)"
    " : f16[1, 16, 9, 9]\n"
    /* 3-d, bf16, a bias */
    "%v = aten.convolution.default(%x3, %w3, %b3, [1, 2, 1], [0, 1, 1], [1, 1, 2], false, [0, 0, 0], 1)"
    " : bf16[2, 4, 4, 3, 5]\n"
    /* 1-d */
    "%u = aten.convolution.default(%x1, %w1, None, [3], [2], [1], false, [0], 1) : f32[3, 5, 14]\n"
    "output %y, %d, %v, %u\n";

/* Convolutions as implicit GEMMs: a kernel each, rows the output channels
 * of a group (grid z the groups), columns N x the output positions, the
 * input gathered through its strides with padding read as 0, the bias in
 * the epilogue; no cuDNN step, no copy. */
TEST(cuda_portable_convolutions_are_implicit_gemms) {
  cuda_plan p;
  plan_of(conv_air, &p);
  REQUIRE(p.nlaunches == 4 && no_library_steps(&p));
  CHECK(p.scratch_bytes == 0);
  /* 2-d: 6 channels a group, 2 x 8 x 13 = 208 columns, 2 groups */
  CHECK(tile_step(&p.launches[0], 1, 1, 2)); /* 16 x 256 tiles: few rows */
  CHECK(strstr(p.source, "(unsigned)i0 < 15u && (unsigned)i1 < 13u") != NULL);
  CHECK(strstr(p.source, "q0[j] = (int)(p * 2 - 1)") != NULL);        /* stride 2, padding 1 */
  CHECK(strstr(p.source, "(t / 1) % 3 * 2") != NULL);                 /* width's dilation 2 */
  CHECK(strstr(p.source, "xb[j] = 0 + bz * 780 + r * 1560;") != NULL); /* group: 4 channels of 195 */
  CHECK(strstr(p.source, "const float bv = ld_f32(p2, 0 + co * 1);") != NULL);
  CHECK(tile_step(&p.launches[1], 1, 1, 8)); /* a group of 2 channels each */
  CHECK(strstr(p.source, "v += bv;") != NULL && strstr(p.source, "rnd_bf16(v)") == NULL); /* the bias in float,
                                                             then y's one rounding, as ref and cuDNN's fused graph */
  CHECK(strstr(p.source, "(unsigned)i2 < 7u") != NULL);        /* 3-d */
  CHECK(strstr(p.source, "(unsigned)i0 < 1u && (unsigned)i1 < 40u") != NULL); /* 1-d: a height of 1 */
  CHECK(strstr(p.source, "cudnn") == NULL);
  cuda_plan_free(&p);
}

/* A weight not packed past its first dim (a permuted view) is copied
 * first; an input read through strides is not. */
TEST(cuda_portable_conv_copies_only_a_strided_weight) {
  cuda_plan p;
  plan_of("input %x: f32[1, 10, 10, 4]\ninput %w: f32[8, 3, 3, 4]\n"
          "%xp = aten.permute.default(%x, [0, 3, 1, 2]) : f32[1, 4, 10, 10]\n"
          "%wp = aten.permute.default(%w, [0, 3, 1, 2]) : f32[8, 4, 3, 3]\n"
          "%y = aten.convolution.default(%xp, %wp, None, [1, 1], [0, 0], [1, 1], false, [0, 0], 1)"
          " : f32[1, 8, 8, 8]\noutput %y\n",
          &p);
  REQUIRE(p.nlaunches == 2 && no_library_steps(&p));
  CHECK(p.launches[0].block == 0 && p.launches[1].block == 256); /* w's copy, then the conv */
  CHECK(strstr(p.source, "c * (i64)1 + i0 * (i64)40 + i1 * (i64)4") != NULL); /* x channels-last */
  cuda_plan_free(&p);
}

#if defined(ALLOY_TEST_NVRTC) || defined(ALLOY_TEST_HIPRTC)
/* Every kind of module above, for a compiler: each graph's plan and the
 * direct epilogues. */
static const char products_air[] =
    "input %a: f32[100, 70]\ninput %b: f32[70, 50]\n"
    "input %a3: bf16[6, 256, 32]\ninput %b3: bf16[32, 256]\n"
    "input %x: f16[512, 768]\ninput %w: f16[3072, 768]\ninput %bias: f16[3072]\n"
    "input %c: f32[1, 96]\ninput %ca: f32[3, 64, 40]\ninput %cb: f32[3, 40, 96]\n"
    "%y = aten.mm.default(%a, %b) : f32[100, 50]\n"
    "%e = aten.expand.default(%b3, [6, 32, 256]) : bf16[6, 32, 256]\n"
    "%z = aten.bmm.default(%a3, %e) : bf16[6, 256, 256]\n"
    "%t = aten.permute.default(%w, [1, 0]) : f16[768, 3072]\n"
    "%l = aten.addmm.default(%bias, %x, %t) : f16[512, 3072]\n"
    "%d = aten.baddbmm.default(%c, %ca, %cb, beta=0.25, alpha=3.0) : f32[3, 64, 96]\n"
    "output %y, %z, %l, %d\n";

typedef void (*compile_fn)(const char *source, const void *ctx);

static void every_module(compile_fn compile, const void *ctx) {
  const char *airs[] = {products_air, conv_air};
  for (int i = 0; i < 2; i++) {
    cuda_plan p;
    plan_of(airs[i], &p);
    compile(p.source, ctx);
    cuda_plan_free(&p);
  }
  cuda_plan p;
  direct_products(&p);
  compile(p.source, ctx);
  cuda_plan_free(&p);
}
#endif

#ifdef ALLOY_TEST_NVRTC
static void nvrtc_sm90(const char *source, const void *ctx) {
  (void)ctx;
  static const char *const opts[] = {"--gpu-architecture=sm_90", CUDA_NVRTC_OPTIONS};
  rtc_nvrtc_compiles(ALLOY_TEST_NVRTC, source, opts, (int)(sizeof opts / sizeof *opts));
}

TEST(cuda_portable_kernels_compile_with_nvrtc) { every_module(nvrtc_sm90, NULL); }
#endif

#ifdef ALLOY_TEST_HIPRTC
static void hiprtc_arch(const char *source, const void *arch) {
  char helper[512];
  snprintf(helper, sizeof helper, "%s/tests/hiprtc_compile",
           getenv("ALLOY_TEST_BUILD") ? getenv("ALLOY_TEST_BUILD") : "build");
  rtc_hiprtc_compiles(helper, ALLOY_TEST_HIPRTC, source, arch, HIP_RTC_OPTIONS);
}

/* gfx90a (MI200, wavefronts of 64) and gfx1030 (RDNA2, of 32): the
 * targets Debian's HIP 5.2 compiles (docs/backends/hip.md) */
TEST(cuda_portable_kernels_compile_with_hiprtc_for_gfx90a_and_gfx1030) {
  every_module(hiprtc_arch, "gfx90a");
  every_module(hiprtc_arch, "gfx1030");
}
#endif
