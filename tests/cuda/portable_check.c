/*
 * tests/cuda/portable_check.c: checks Alloy's portable product and
 * convolution kernels (plugins/cuda/cuda_codegen_gemm.c, the cuda backend's
 * option vendor_libs=0 and the HIP build's only kernels) on an NVIDIA GPU.
 * A standalone program, outside `make test` (that runs without a GPU): it
 * writes each kernel as the plan builder does, into a module holding the
 * plan prelude, compiles it with NVRTC for the device, runs it through the
 * driver (cuda_api.c), and compares every element of the result with a
 * double-precision reference computed from the same (rounded) inputs.
 * Products: edge sizes, A or B transposed, a batch with B broadcast
 * (stride 0), alpha and beta with C, C == D in place, a broadcast row as C
 * (ldc 0), a bias, relu and gelu epilogues, float32, float16 and bfloat16.
 * Convolutions: 1-, 2- and 3-d, groups, depthwise, stride, padding,
 * dilation, a bias, an input in channels-last strides. Then it times
 * model-sized shapes (4096x1024x1024 bf16, 4096x768x3072 f32, a resnet50
 * 3x3 convolution at batch 64 in f32), checking a sample of their outputs.
 *
 * Build and run (from the repository root, on a machine with a GPU):
 *   make -j BUILD=build build/lib/liballoy.a
 *   cc -std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -I. -Isdk/include \
 *      -isystem /usr/local/cuda/include -o build/portable_check tests/cuda/portable_check.c \
 *      plugins/cuda/cuda_codegen.c plugins/cuda/cuda_codegen_rows.c plugins/cuda/cuda_codegen_conv.c \
 *      plugins/cuda/cuda_codegen_attention.c plugins/cuda/cuda_codegen_gemm.c plugins/cuda/cuda_ops.c \
 *      plugins/cuda/cuda_api.c build/lib/liballoy.a -ldl -lm -pthread
 *   ./build/portable_check
 * Prints "PASS|FAIL name max_err (allowed)" per case and "TIME name ms
 * TFLOP/s" per timed shape; exits 1 on a failure, 2 when there is no GPU.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/graph.h"
#include "plugins/cuda/cuda_api.h"
#include "plugins/cuda/cuda_codegen.h"
#include "sdk/src/host.h"

static cuda_api api;
static CUdevice dev;
static CUstream stream;
#define CHECK_PROGRAM "portable_check"
#include "tests/cuda/check_util.h"
static char arch[32];
static int failures;

/* The relative rounding of a value of t. */
static double unit_of(alloy_dtype t) { return t == ALLOY_F32 ? 0x1p-24 : t == ALLOY_F16 ? 0x1p-11 : 0x1p-8; }

/* ---- a module of one step --------------------------------------------------*/

/* A builder whose module holds the plan prelude (a plan of one pointwise
 * kernel), portable, for one step written straight from its description. */
static void builder_begin(builder *b, cuda_plan *p) {
  static const char air[] = "input %x: f32[4]\n%y = aten.neg.default(%x) : f32[4]\noutput %y\n";
  alloy_graph *g = NULL;
  alloy_error *e = alloy_air_parse(air, strlen(air), "prelude.air", &g);
  cuda_plan pre;
  if (!e) e = cuda_plan_build(alloy_host_table(), g, NULL, &(cuda_plan_options){.portable = true}, &pre);
  if (e) {
    fprintf(stderr, "portable_check: the prelude's plan: %s\n", alloy_error_message(e));
    exit(2);
  }
  alloy_graph_free(g);
  cg_builder_over(b, alloy_host_table(), p, &pre, &(cuda_plan_options){.portable = true});
}

/* The step's kernel, loaded: its function and launch (the last step). */
typedef struct loaded {
  CUmodule module;
  CUfunction fn;
  cuda_launch launch;
  int bases[8];
} loaded;

static void builder_end_load(builder *b, cuda_plan *p, const char *name, loaded *out) {
  alloy_error *err = cg_builder_finish(b, p);
  if (err || p->nlaunches != 1) {
    fprintf(stderr, "portable_check: %s: planning failed: %s\n", name,
            err ? alloy_error_message(err) : "not one step");
    exit(2);
  }
  nvrtcProgram prog;
  if (api.nvrtcCreateProgram(&prog, p->source, "portable.cu", 0, NULL, NULL) != NVRTC_SUCCESS) {
    fprintf(stderr, "portable_check: nvrtcCreateProgram failed\n");
    exit(2);
  }
  char archopt[64];
  snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", arch);
  const char *opts[] = {archopt, CUDA_NVRTC_OPTIONS};
  nvrtcResult r = api.nvrtcCompileProgram(prog, (int)(sizeof opts / sizeof *opts), opts);
  if (r != NVRTC_SUCCESS) {
    size_t n = 0;
    api.nvrtcGetProgramLogSize(prog, &n);
    char *log = xmalloc(n + 1);
    api.nvrtcGetProgramLog(prog, log);
    log[n] = 0;
    fprintf(stderr, "portable_check: %s: NVRTC: %s\n", name, log);
    exit(2);
  }
  size_t size = 0;
  api.nvrtcGetCUBINSize(prog, &size);
  char *cubin = xmalloc(size);
  api.nvrtcGetCUBIN(prog, cubin);
  api.nvrtcDestroyProgram(&prog);
  check_cu(api.cuModuleLoadData(&out->module, cubin), "cuModuleLoadData");
  free(cubin);
  out->launch = p->launches[0];
  check_cu(api.cuModuleGetFunction(&out->fn, out->module, out->launch.name), "cuModuleGetFunction");
  for (int i = 0; i < out->launch.nbases && i < 8; i++) out->bases[i] = out->launch.bases[i];
  cuda_plan_free(p);
}

/* Launches the step with ptr[base] as each base's pointer. */
static void launch(const loaded *s, const CUdeviceptr *ptr) {
  void *params[10];
  CUdeviceptr vals[8];
  int64_t n = s->launch.n;
  for (int k = 0; k < s->launch.nbases; k++) vals[k] = ptr[s->bases[k]], params[k] = &vals[k];
  params[s->launch.nbases] = &n;
  const cuda_launch *l = &s->launch;
  check_cu(api.cuLaunchKernel(s->fn, l->grid[0], l->grid[1], l->grid[2], l->block, 1, 1, l->shmem, stream, params,
                              NULL),
           "cuLaunchKernel");
}

/* Milliseconds a run of the step takes, the mean of 20 after 3. */
static double time_step(const loaded *s, const CUdeviceptr *ptr) {
  CUevent a, b;
  check_cu(api.cuEventCreate(&a, CU_EVENT_DEFAULT), "cuEventCreate");
  check_cu(api.cuEventCreate(&b, CU_EVENT_DEFAULT), "cuEventCreate");
  for (int i = 0; i < 3; i++) launch(s, ptr);
  check_cu(api.cuEventRecord(a, stream), "cuEventRecord");
  for (int i = 0; i < 20; i++) launch(s, ptr);
  check_cu(api.cuEventRecord(b, stream), "cuEventRecord");
  check_cu(api.cuEventSynchronize(b), "cuEventSynchronize");
  float ms = 0;
  check_cu(api.cuEventElapsedTime(&ms, a, b), "cuEventElapsedTime");
  api.cuEventDestroy(a), api.cuEventDestroy(b);
  return ms / 20;
}

/* Compares got with ref (count values; mag: what each may be off by past
 * 2 units of its dtype's rounding: the float accumulation's 1e-5 of the
 * sum of its terms' magnitudes, and any rounding before the last),
 * prints the line. */
static void verdict(const char *name, alloy_dtype t, const double *got, const double *ref, const double *mag,
                    size_t count) {
  double worst = 0, worst_allowed = 0;
  bool bad = false;
  for (size_t i = 0; i < count; i++) {
    double err = fabs(got[i] - ref[i]), allowed = 2 * unit_of(t) * fabs(ref[i]) + mag[i] + 1e-30;
    if (!(err <= allowed)) {
      if (!bad) fprintf(stderr, "  %s: element %zu: %.9g, expected %.9g\n", name, i, got[i], ref[i]);
      bad = true;
    }
    if (err / allowed > worst / (worst_allowed ? worst_allowed : 1) || i == 0) worst = err, worst_allowed = allowed;
  }
  printf("%s %s %.3g (%.3g)\n", bad ? "FAIL" : "PASS", name, worst, worst_allowed);
  failures += bad;
}

/* ---- products ---------------------------------------------------------------*/

enum { PB_A = 0, PB_B, PB_C, PB_BIAS, PB_D };

static double gelu_tanh(double x) { return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }

/* One product: its kernel planned from g (C == D when in_place), checked
 * element by element (or at `samples` places when not 0), timed when
 * `timed`. */
static void product_case(const char *name, const cuda_gemm_desc *g, bool in_place, size_t samples, bool timed) {
  const alloy_dtype t = g->dtype;
  const int64_t m = g->m, n = g->n, k = g->k, nb = g->batch;
  const int64_t span_a = g->trans_a ? (k - 1) * g->lda + m : (m - 1) * g->lda + k;
  const int64_t span_b = g->trans_b ? (n - 1) * g->ldb + k : (k - 1) * g->ldb + n;
  const size_t na = (size_t)((nb - 1) * g->stride_a + span_a), nbm = (size_t)((nb - 1) * g->stride_b + span_b);
  const size_t nd = (size_t)(nb * m * n);
  const size_t nc = !g->has_c ? 0 : in_place ? nd : (size_t)((nb - 1) * g->stride_c + (m - 1) * g->ldc + n);
  double *a = fill(t, na, 1), *bm = fill(t, nbm, 2), *c = g->has_c ? fill(t, nc, 3) : NULL;
  double *bias = g->bias ? fill(t, (size_t)n, 4) : NULL;
  CUdeviceptr ptr[5] = {upload(t, a, na), upload(t, bm, nbm), 0, 0, 0};
  if (g->bias) ptr[PB_BIAS] = upload(t, bias, (size_t)n);
  if (in_place) ptr[PB_D] = ptr[PB_C] = upload(t, c, nc);
  else {
    check_cu(api.cuMemAlloc(&ptr[PB_D], nd * alloy_dtype_size(t) + 256), "cuMemAlloc");
    if (g->has_c) ptr[PB_C] = upload(t, c, nc);
  }
  builder b;
  cuda_plan p;
  builder_begin(&b, &p);
  cuda_launch l = {.kind = LAUNCH_GEMM, .gemm = *g};
  for (int i = 0; i < GEMM_OPERANDS; i++) l.gbase[i] = -1;
  l.gbase[GEMM_A] = PB_A, l.gbase[GEMM_B] = PB_B, l.gbase[GEMM_D] = PB_D;
  if (g->has_c) l.gbase[GEMM_C] = in_place ? PB_D : PB_C;
  if (g->bias) l.gbase[GEMM_BIAS] = PB_BIAS;
  snprintf(l.what, sizeof l.what, "%.40s", name);
  cg_gemm_kernel(&b, NULL, &l);
  loaded s;
  builder_end_load(&b, &p, name, &s);
  launch(&s, ptr);
  check_cu(api.cuStreamSynchronize(stream), "the product");
  double *got = download(t, ptr[PB_D], nd);
  size_t count = samples ? samples : nd;
  double *ref = xmalloc(count * sizeof *ref), *mag = xmalloc(count * sizeof *mag), *sel = xmalloc(count * sizeof *sel);
  uint64_t pick = 99;
  for (size_t q = 0; q < count; q++) {
    size_t at = samples ? (size_t)((next_value(&pick) + 1) / 2 * (double)nd) % nd : q;
    int64_t z = (int64_t)at / (m * n), i = (int64_t)at / n % m, j = (int64_t)at % n;
    double sum = 0, abs_sum = 0;
    for (int64_t kk = 0; kk < k; kk++) {
      double av = a[z * g->stride_a + (g->trans_a ? kk * g->lda + i : i * g->lda + kk)];
      double bv = bm[z * g->stride_b + (g->trans_b ? j * g->ldb + kk : kk * g->ldb + j)];
      sum += av * bv, abs_sum += fabs(av * bv);
    }
    double x = g->alpha * sum, xm = fabs(g->alpha) * abs_sum;
    if (g->has_c) {
      double cv = in_place ? c[at] : c[z * g->stride_c + i * g->ldc + j];
      x += g->beta * cv, xm += fabs(g->beta * cv);
    }
    if (g->bias) x += bias[j], xm += fabs(bias[j]);
    if (g->activation == 1) x = x > 0 ? x : 0;
    if (g->activation == 2) x = gelu_tanh(x);
    ref[q] = x, mag[q] = 1e-5 * xm, sel[q] = got[at];
  }
  verdict(name, t, sel, ref, mag, count);
  if (timed) {
    double ms = time_step(&s, ptr);
    printf("TIME %s %.3f ms %.2f TFLOP/s (grid %ux%ux%u)\n", name, ms, 2.0 * (double)(m * n * k * nb) / ms / 1e9,
           s.launch.grid[0], s.launch.grid[1], s.launch.grid[2]);
  }
  api.cuModuleUnload(s.module);
  for (int i = 0; i < 5; i++)
    if (ptr[i] && !(i == PB_C && in_place)) api.cuMemFree(ptr[i]);
  free(a), free(bm), free(c), free(bias), free(got), free(ref), free(mag), free(sel);
}

/* A packed product: m x n x k, A [batch, m, k] or its transpose, B [k, n]
 * or [n, k]. */
static cuda_gemm_desc packed(alloy_dtype t, int64_t m, int64_t n, int64_t k, int64_t batch, bool ta, bool tb) {
  return (cuda_gemm_desc){.dtype = t, .m = m, .n = n, .k = k, .batch = batch, .lda = ta ? m : k,
                          .ldb = tb ? k : n, .stride_a = m * k, .stride_b = k * n, .trans_a = ta, .trans_b = tb,
                          .alpha = 1};
}

static void products(void) {
  static const alloy_dtype types[] = {ALLOY_F32, ALLOY_F16, ALLOY_BF16};
  static const char *const names[] = {"f32", "f16", "bf16"};
  char name[96];
  for (int ti = 0; ti < 3; ti++) {
    alloy_dtype t = types[ti];
    /* sizes no tile divides; tiles of each shape */
    static const int64_t shapes[][3] = {{1, 1, 1}, {7, 5, 3}, {100, 70, 50}, {129, 257, 33}, {13, 300, 64},
                                        {300, 9, 40}, {640, 520, 96}, {2048, 1024, 72}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
      for (int tr = 0; tr < 4; tr++) {
        cuda_gemm_desc g = packed(t, shapes[s][0], shapes[s][1], shapes[s][2], 1, tr & 1, tr >> 1);
        snprintf(name, sizeof name, "mm_%s_%" PRId64 "x%" PRId64 "x%" PRId64 "%s%s", names[ti], g.m, g.n, g.k,
                 g.trans_a ? "_ta" : "", g.trans_b ? "_tb" : "");
        product_case(name, &g, false, 0, false);
      }
    /* a batch, B broadcast over it (stride 0), A with a padded leading dim */
    cuda_gemm_desc g = packed(t, 67, 45, 36, 5, false, false);
    g.lda = 40, g.stride_a = 67 * 40, g.stride_b = 0;
    snprintf(name, sizeof name, "bmm_%s_broadcast_b_lda40", names[ti]);
    product_case(name, &g, false, 0, false);
    /* alpha, beta with a full C; in place (C is D) */
    g = packed(t, 90, 130, 50, 3, false, true);
    g.alpha = 0.5, g.beta = 2, g.has_c = true, g.ldc = 130, g.stride_c = 90 * 130;
    snprintf(name, sizeof name, "baddbmm_%s_alpha_beta", names[ti]);
    product_case(name, &g, false, 0, false);
    snprintf(name, sizeof name, "baddbmm_%s_in_place", names[ti]);
    product_case(name, &g, true, 0, false);
    /* a broadcast row as C (ldc 0), then gelu; a bias, then relu */
    g = packed(t, 77, 96, 31, 2, true, false);
    g.has_c = true, g.beta = 1, g.ldc = 0, g.stride_c = 0, g.activation = 2;
    snprintf(name, sizeof name, "mm_%s_row_c_gelu", names[ti]);
    product_case(name, &g, false, 0, false);
    g = packed(t, 200, 3072, 768, 1, false, true);
    g.bias = true, g.activation = 1;
    snprintf(name, sizeof name, "linear_%s_bias_relu", names[ti]);
    product_case(name, &g, false, 4096, false);
  }
  /* model-sized: timed, a sample checked */
  cuda_gemm_desc g = packed(ALLOY_BF16, 4096, 1024, 1024, 1, false, false);
  product_case("mm_bf16_4096x1024x1024", &g, false, 4096, true);
  g = packed(ALLOY_F32, 4096, 768, 3072, 1, false, false);
  product_case("mm_f32_4096x768x3072", &g, false, 4096, true);
  g = packed(ALLOY_F32, 4096, 3072, 768, 1, false, true);
  product_case("linear_f32_4096x3072x768_tb", &g, false, 4096, true);
  g = packed(ALLOY_F32, 4096, 4096, 4096, 1, false, false);
  product_case("mm_f32_4096^3", &g, false, 2048, true);
}

/* ---- convolutions ----------------------------------------------------------------*/

/* A convolution: x [N, C, spatial...] (channels-last strides when
 * `nhwc`), w [C_out, C / groups, window...], y packed; rank 3 to 5. */
typedef struct conv_case {
  const char *name;
  alloy_dtype t;
  int rank;
  int64_t x[5], w[5], stride[3], pad[3], dil[3], groups;
  bool bias, nhwc;
} conv_case;

static void packed_strides(const int64_t *sizes, int rank, int64_t *strides) {
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; d--) strides[d] = s, s *= sizes[d];
}

static void conv_run(const conv_case *cc, size_t samples, bool timed) {
  const int r = cc->rank, nsp = r - 2;
  const alloy_dtype t = cc->t;
  cuda_tensor x = {.base = 0, .dtype = t, .rank = r}, w = {.base = 1, .dtype = t, .rank = r},
              bias = {.base = 2, .dtype = t, .rank = 1}, y = {.base = 3, .dtype = t, .rank = r};
  memcpy(x.sizes, cc->x, sizeof cc->x), memcpy(w.sizes, cc->w, sizeof cc->w);
  y.sizes[0] = cc->x[0], y.sizes[1] = cc->w[0];
  for (int d = 0; d < nsp; d++)
    y.sizes[2 + d] = (cc->x[2 + d] + 2 * cc->pad[d] - cc->dil[d] * (cc->w[2 + d] - 1) - 1) / cc->stride[d] + 1;
  packed_strides(x.sizes, r, x.strides), packed_strides(w.sizes, r, w.strides), packed_strides(y.sizes, r, y.strides);
  if (cc->nhwc) { /* channels last: C innermost */
    int64_t s = x.sizes[1];
    for (int d = r - 1; d >= 2; d--) x.strides[d] = s, s *= x.sizes[d];
    x.strides[1] = 1, x.strides[0] = s;
  }
  bias.sizes[0] = y.sizes[1], bias.strides[0] = 1;
  size_t nx = (size_t)cg_numel_of(x.sizes, r), nw = (size_t)cg_numel_of(w.sizes, r), ny = (size_t)cg_numel_of(y.sizes, r);
  double *xv = fill(t, nx, 5), *wv = fill(t, nw, 6), *bv = fill(t, (size_t)y.sizes[1], 7);
  CUdeviceptr ptr[4] = {upload(t, xv, nx), upload(t, wv, nw), upload(t, bv, (size_t)y.sizes[1]), 0};
  check_cu(api.cuMemAlloc(&ptr[3], ny * alloy_dtype_size(t) + 256), "cuMemAlloc");
  builder b;
  cuda_plan p;
  builder_begin(&b, &p);
  cg_conv_kernel(&b, NULL, &x, &w, cc->bias ? &bias : NULL, &y, cc->stride, cc->pad, cc->dil, cc->groups, cc->name);
  loaded s;
  builder_end_load(&b, &p, cc->name, &s);
  launch(&s, ptr);
  check_cu(api.cuStreamSynchronize(stream), "the convolution");
  double *got = download(t, ptr[3], ny);
  size_t count = samples ? samples : ny;
  double *ref = xmalloc(count * sizeof *ref), *mag = xmalloc(count * sizeof *mag), *sel = xmalloc(count * sizeof *sel);
  const int64_t cg = x.sizes[1] / cc->groups, cog = y.sizes[1] / cc->groups;
  uint64_t pick = 77;
  for (size_t q = 0; q < count; q++) {
    size_t at = samples ? (size_t)((next_value(&pick) + 1) / 2 * (double)ny) % ny : q;
    int64_t idx[5], rem = (int64_t)at; /* y is packed: its index */
    for (int d = r - 1; d >= 0; d--) idx[d] = rem % y.sizes[d], rem /= y.sizes[d];
    const int64_t g = idx[1] / cog;
    double sum = 0, abs_sum = 0;
    int64_t taps = 1;
    for (int d = 0; d < nsp; d++) taps *= w.sizes[2 + d];
    for (int64_t c = 0; c < cg; c++)
      for (int64_t tp = 0; tp < taps; tp++) {
        int64_t rt = tp, xo = idx[0] * x.strides[0] + (g * cg + c) * x.strides[1];
        int64_t wo = idx[1] * w.strides[0] + c * w.strides[1];
        bool inside = true;
        for (int d = nsp - 1; d >= 0; d--) {
          int64_t kd = rt % w.sizes[2 + d];
          rt /= w.sizes[2 + d];
          int64_t pos = idx[2 + d] * cc->stride[d] - cc->pad[d] + kd * cc->dil[d];
          if (pos < 0 || pos >= x.sizes[2 + d]) inside = false;
          xo += pos * x.strides[2 + d], wo += kd * w.strides[2 + d];
        }
        if (!inside) continue;
        sum += xv[xo] * wv[wo], abs_sum += fabs(xv[xo] * wv[wo]);
      }
    /* the bias is added in float before y's one rounding */
    double early = 0;
    if (cc->bias) sum += bv[idx[1]], abs_sum += fabs(bv[idx[1]]);
    ref[q] = sum, mag[q] = 1e-5 * abs_sum + early, sel[q] = got[at];
  }
  verdict(cc->name, t, sel, ref, mag, count);
  if (timed) {
    double ms = time_step(&s, ptr);
    double flops = 2.0 * (double)ny * (double)cg * (double)cg_numel_of(w.sizes + 2, nsp);
    printf("TIME %s %.3f ms %.2f TFLOP/s (grid %ux%ux%u)\n", cc->name, ms, flops / ms / 1e9, s.launch.grid[0],
           s.launch.grid[1], s.launch.grid[2]);
  }
  api.cuModuleUnload(s.module);
  for (int i = 0; i < 4; i++) api.cuMemFree(ptr[i]);
  free(xv), free(wv), free(bv), free(got), free(ref), free(mag), free(sel);
}

static void convolutions(void) {
  static const conv_case cases[] = {
      {"conv2d_f32_3x3_pad1", ALLOY_F32, 4, {2, 3, 9, 11}, {8, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true, false},
      {"conv2d_f32_grouped_strided_dilated", ALLOY_F32, 4, {2, 8, 15, 13}, {12, 4, 3, 3}, {2, 1}, {1, 2}, {1, 2}, 2,
       true, false},
      {"conv2d_f16_depthwise", ALLOY_F16, 4, {3, 16, 9, 10}, {16, 1, 3, 3}, {1, 2}, {1, 1}, {1, 1}, 16, false,
       false},
      {"conv2d_bf16_1x1_stride2", ALLOY_BF16, 4, {4, 64, 14, 14}, {128, 64, 1, 1}, {2, 2}, {0, 0}, {1, 1}, 1, true,
       false},
      {"conv2d_f32_channels_last_7x7", ALLOY_F32, 4, {2, 3, 32, 30}, {16, 3, 7, 7}, {2, 2}, {3, 3}, {1, 1}, 1, true,
       true},
      {"conv1d_f32_stride3_pad2", ALLOY_F32, 3, {3, 6, 40}, {5, 6, 4}, {3}, {2}, {1}, 1, false, false},
      {"conv3d_bf16_bias", ALLOY_BF16, 5, {2, 3, 5, 6, 7}, {4, 3, 2, 3, 3}, {1, 2, 1}, {0, 1, 1}, {1, 1, 2}, 1, true,
       false},
      {"conv3d_f16_groups", ALLOY_F16, 5, {1, 6, 4, 5, 6}, {9, 2, 3, 1, 2}, {1, 1, 2}, {1, 0, 1}, {1, 1, 1}, 3, true,
       false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) conv_run(&cases[i], 0, false);
  /* resnet50's layer1 3x3 and layer3 3x3 convolutions at batch 64 */
  static const conv_case timed[] = {
      {"resnet50_3x3_64ch_56x56_b64_f32", ALLOY_F32, 4, {64, 64, 56, 56}, {64, 64, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1,
       false, false},
      {"resnet50_3x3_256ch_14x14_b64_f32", ALLOY_F32, 4, {64, 256, 14, 14}, {256, 256, 3, 3}, {1, 1}, {1, 1},
       {1, 1}, 1, false, false},
  };
  for (size_t i = 0; i < sizeof timed / sizeof *timed; i++) conv_run(&timed[i], 2048, true);
}

int main(void) {
  char why[256];
  const char *no = cuda_api_open(&api, why, sizeof why);
  if (no) {
    fprintf(stderr, "portable_check: %s\n", no);
    return 2;
  }
  int count = 0;
  if (api.cuInit(0) != CUDA_SUCCESS || api.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    fprintf(stderr, "portable_check: no GPU\n");
    return 2;
  }
  CUcontext ctx;
  check_cu(api.cuDeviceGet(&dev, 0), "cuDeviceGet");
  check_cu(api.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  check_cu(api.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  check_cu(api.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  cuda_device_arch(&api, dev, arch, sizeof arch);
  char devname[128] = "?";
  api.cuDeviceGetName(devname, sizeof devname, dev);
  printf("device %s (%s)\n", devname, arch);
  products();
  convolutions();
  printf("%d failed\n", failures);
  api.cuStreamDestroy(stream);
  api.cuDevicePrimaryCtxRelease(dev);
  cuda_api_close(&api);
  return failures ? 1 : 0;
}
