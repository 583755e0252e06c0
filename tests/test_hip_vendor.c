/*
 * tests/test_hip_vendor.c: the hip backend's use of hipBLASLt and MIOpen,
 * on a machine with no AMD GPU and neither library (Debian has neither).
 * The Makefile links in cuda_blas.c and miopen_dnn.c compiled as the hip
 * build compiles them (-DALLOY_GPU_HIP, HIP's headers) and builds fake
 * libhipblaslt.so and libMIOpen.so (tests/hip/), which compute nothing
 * but log each call with its arguments as the numbers received; $ROCM_PATH
 * points the code at them, as it would at a ROCm install. Neither open
 * nor planning calls the HIP runtime, so nothing here needs one.
 *
 * What the tests pin: detection (a library under $ROCM_PATH is opened and
 * its version read; an absent one, one lacking an entry point and one too
 * old are each refused with a sentence naming the library, the entry
 * point or the version, and nothing stays loaded); a planned product's
 * hipBLASLt calls, with hipBLASLt's enum VALUES written here as literals
 * from upstream's headers (never through plugins/cuda/rocm_api.h, so a
 * wrong value there fails here) and the m, n, k and leading dimensions of
 * cuda_blas.c's row-major to column-major swap; a planned convolution's
 * MIOpen descriptors (dims, strides, pads, dilations, groups, dtype) and
 * solution choice (float32 exact: no Winograd or FFT unless allowed); and
 * the option vendor_libs of liballoy-hip.so. What they cannot prove: that
 * the real libraries compute the right numbers, or accept these calls on
 * an AMD GPU; nothing here has run on one.
 *
 * The values, from upstream (rocm_api.h names the commits): hipBLASLt
 * HIPBLASLT_MATMUL_DESC_TRANSA 0, TRANSB 1, EPILOGUE 2, BIAS_POINTER 3,
 * BIAS_DATA_TYPE 4; HIPBLASLT_MATRIX_LAYOUT_BATCH_COUNT 0,
 * STRIDED_BATCH_OFFSET 1; HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES 1;
 * HIPBLASLT_EPILOGUE_DEFAULT 1, RELU 2, BIAS 4, RELU_BIAS 6, GELU 32,
 * GELU_BIAS 36; HIPBLAS_OP_N 111, HIPBLAS_OP_T 112; HIPBLAS_COMPUTE_32F 2;
 * HIP_R_32F 0, HIP_R_16F 2, HIP_R_16BF 14. MIOpen miopenHalf 0,
 * miopenFloat 1, miopenBFloat16 5; miopenConvolution 0;
 * MIOPEN_CONVOLUTION_ATTRIB_FP16_ALT_IMPL 0.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/error.h"
#include "alloy/plugin.h"
#include "harness.h"
#include "plugins/cuda/cuda_blas.h"
#include "plugins/cuda/cuda_dnn.h"
#include "sdk/src/host.h"

/* ---- the fakes ------------------------------------------------------------------ */

static const char *build_dir(void) {
  const char *b = getenv("ALLOY_TEST_BUILD");
  return b && *b ? b : "build";
}

/* Points $ROCM_PATH at BUILD/tests/hip/<sub> ("rocm", "rocm-old", or one
 * that does not exist). */
static void use_rocm(const char *sub) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/tests/hip/%s", build_dir(), sub);
  setenv("ROCM_PATH", path, 1);
}

/* Runs body with $ROCM_PATH at BUILD/tests/hip/<sub>, and puts the
 * variable back after: the other suites' child processes (hipRTC's
 * compiles) read it too. */
static void with_rocm(const char *sub, void (*body)(void)) {
  const char *was = getenv("ROCM_PATH");
  char *saved = was ? strdup(was) : NULL;
  use_rocm(sub);
  body();
  if (saved)
    setenv("ROCM_PATH", saved, 1);
  else
    unsetenv("ROCM_PATH");
  free(saved);
}

/* A test of the code against the fakes under BUILD/tests/hip/<sub>. */
#define ROCM_TEST(name, sub)                  \
  static void name##_body(void);              \
  TEST(name) { with_rocm(sub, name##_body); } \
  static void name##_body(void)

/* The fake file the code opens under $ROCM_PATH. */
static const char *fake_path(const char *sub, const char *file) {
  static char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/tests/hip/%s/lib/%s", build_dir(), sub, file);
  return path;
}

/* Whether a real library of that soname is on the loader's path: with
 * $ROCM_PATH naming no ROCm the code would open it, so the tests of a
 * missing library say they skip (the others set $ROCM_PATH, which wins). */
static bool real_library(const char *soname) {
  void *lib = dlopen(soname, RTLD_LAZY | RTLD_LOCAL);
  if (lib) {
    dlclose(lib);
    printf("  (skipped: a real %s is on the loader's path, which the hip build opens first)\n", soname);
  }
  return lib != NULL;
}

/* A fake, opened by the test too so that its log outlives the code's
 * dlclose. */
typedef struct fake {
  void *dl;
  const char *(*log)(void);
  void (*clear)(void);
  int (*live)(void);
} fake;

static bool fake_open(fake *f, const char *sub, const char *file) {
  memset(f, 0, sizeof *f);
  f->dl = dlopen(fake_path(sub, file), RTLD_NOW | RTLD_LOCAL);
  if (!f->dl) {
    harness_fail(__FILE__, __LINE__, "no fake %s: %s (make builds it)", fake_path(sub, file), dlerror());
    return false;
  }
  void *fn = dlsym(f->dl, "fake_log");
  memcpy(&f->log, &fn, sizeof fn);
  fn = dlsym(f->dl, "fake_log_clear");
  memcpy(&f->clear, &fn, sizeof fn);
  fn = dlsym(f->dl, "fake_live");
  memcpy(&f->live, &fn, sizeof fn);
  if (!f->log || !f->clear || !f->live)
    return harness_fail(__FILE__, __LINE__, "a fake without its log"), false;
  f->clear();
  return true;
}

/* Whether the file is loaded no more (the code closed what it opened). */
static bool unloaded(const char *path) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (lib) dlclose(lib);
  return lib == NULL;
}

/* Drops the test's own reference to f; the file must then be unloaded. */
static void fake_close(fake *f, const char *sub, const char *file) {
  CHECK_INT(f->live(), 0);
  dlclose(f->dl);
  CHECK(unloaded(fake_path(sub, file)));
}

#define CONTAINS(text, part)                                                           \
  do {                                                                                 \
    const char *t_ = (text), *p_ = (part);                                             \
    if (!t_ || !strstr(t_, p_))                                                        \
      harness_fail(__FILE__, __LINE__, "\"%s\" lacks \"%s\"", t_ ? t_ : "(null)", p_); \
  } while (0)

/* ---- hipBLASLt: detection ------------------------------------------------------ */

ROCM_TEST(hip_vendor_blas_is_found_under_rocm_path_and_its_version_read, "rocm") {
  fake f;
  if (!fake_open(&f, "rocm", "libhipblaslt.so")) return;
  char why[256];
  cuda_blas *b = NULL;
  const char *no = cuda_blas_open(&b, why, sizeof why);
  CHECK(no == NULL && b != NULL);
  if (b) {
    CHECK_INT(cuda_blas_version(b), 1100); /* 0.11.0 */
    CHECK_STR(f.log(), "Create H1\nGetVersion H1\n");
    cuda_blas_close(b);
    CONTAINS(f.log(), "Destroy H1\n");
  }
  fake_close(&f, "rocm", "libhipblaslt.so");
}

ROCM_TEST(hip_vendor_blas_absent_is_a_sentence_naming_the_library, "none") {
  if (real_library("libhipblaslt.so.0") || real_library("libhipblaslt.so.1")) return;
  char why[256] = "";
  cuda_blas *b = (cuda_blas *)&why;
  const char *no = cuda_blas_open(&b, why, sizeof why);
  CHECK(b == NULL);
  CONTAINS(no, "libhipblaslt.so not found");
  CONTAINS(no, "ROCM_PATH");
}

ROCM_TEST(hip_vendor_blas_without_an_entry_point_names_it_and_closes, "rocm-old") {
  char why[256];
  cuda_blas *b = NULL;
  const char *no = cuda_blas_open(&b, why, sizeof why);
  CHECK(b == NULL);
  CONTAINS(no, "libhipblaslt.so has no hipblasLtMatmulAlgoGetHeuristic");
  CHECK(unloaded(fake_path("rocm-old", "libhipblaslt.so")));
}

ROCM_TEST(hip_vendor_blas_older_than_0_7_is_refused_with_its_version, "rocm") {
  fake f;
  if (!fake_open(&f, "rocm", "libhipblaslt.so")) return;
  setenv("FAKE_HIPBLASLT_VERSION", "600", 1); /* 0.6.0: hipBLASLt's own type enums */
  char why[256];
  cuda_blas *b = NULL;
  const char *no = cuda_blas_open(&b, why, sizeof why);
  unsetenv("FAKE_HIPBLASLT_VERSION");
  CHECK(b == NULL);
  CONTAINS(no, "hipBLASLt 0.6.0");
  CONTAINS(f.log(), "Destroy H1\n"); /* the handle made to ask is not left */
  fake_close(&f, "rocm", "libhipblaslt.so");
}

/* ---- hipBLASLt: products ------------------------------------------------------- */

/* A product desc with every pointer 16-byte aligned. */
static cuda_gemm_desc gemm(alloy_dtype t, int64_t m, int64_t n, int64_t k) {
  cuda_gemm_desc d = {.dtype = t, .m = m, .n = n, .k = k, .batch = 1, .alpha = 1.0};
  for (int i = 0; i < GEMM_OPERANDS; i++) d.align[i] = 16;
  return d;
}

/* nn.Linear in bfloat16: y[4, 6] = x[4, 8] @ W[6, 8]^T + bias[6]. cuda_blas.c
 * hands hipBLASLt y^T = W x^T, column-major: its A is W read as [8, 6]
 * with ld 8 and op T, its B is x read as [8, 4] with ld 8 and op N, D is
 * [6, 4] with ld 6, and the bias runs along D^T's rows (6 of them). */
ROCM_TEST(hip_vendor_linear_bf16_with_bias_sets_hipblaslt_values, "rocm") {
  fake f;
  if (!fake_open(&f, "rocm", "libhipblaslt.so")) return;
  char why[512];
  cuda_blas *b = NULL;
  REQUIRE(cuda_blas_open(&b, why, sizeof why) == NULL);
  f.clear();
  cuda_gemm_desc d = gemm(ALLOY_BF16, 4, 6, 8);
  d.lda = 8, d.ldb = 8, d.trans_b = true, d.bias = true;
  cuda_gemm *g = NULL;
  uint64_t ws = 0;
  const char *no = cuda_gemm_plan(b, &d, (uint64_t)32 << 20, NULL, &g, &ws, why, sizeof why);
  CHECK(no == NULL && g != NULL);
  CHECK_INT(ws, 4096);
  CHECK_STR(f.log(), "LayoutCreate L1 type=14 rows=8 cols=6 ld=8\n" /* hipBLASLt's A: our W, HIP_R_16BF */
                     "LayoutCreate L2 type=14 rows=8 cols=4 ld=8\n" /* its B: our x */
                     "LayoutCreate L3 type=14 rows=6 cols=4 ld=6\n" /* D^T */
                     "DescCreate D1 compute=2 scale=0\n"            /* HIPBLAS_COMPUTE_32F, HIP_R_32F */
                     "DescSet D1 attr=0 size=4 value=112\n"         /* TRANSA = HIPBLAS_OP_T */
                     "DescSet D1 attr=1 size=4 value=111\n"         /* TRANSB = HIPBLAS_OP_N */
                     "DescSet D1 attr=2 size=4 value=4\n"           /* EPILOGUE = BIAS */
                     "DescSet D1 attr=4 size=4 value=14\n"          /* BIAS_DATA_TYPE = HIP_R_16BF */
                     "DescSet D1 attr=3 size=8 value=16\n"          /* BIAS_POINTER: a stand-in, 16-aligned */
                     "PrefCreate P1\n"
                     "PrefSet P1 attr=1 size=8 value=33554432\n" /* MAX_WORKSPACE_BYTES */
                     "Heuristic D1 A=L1 B=L2 C=L3 D=L3 pref=P1 want=1\n"
                     "PrefDestroy P1\n");
  if (g) {
    /* a run: the real bias pointer, then the product with the operands
     * swapped (hipBLASLt's A is our B) */
    f.clear();
    no =
        cuda_gemm_run(b, g, 0x1000, 0x2000, 0, 0x3000, 0x4000, 0x5000, 4096, (CUstream)0x77, why, sizeof why);
    CHECK(no == NULL);
    CHECK_STR(f.log(), "DescSet D1 attr=3 size=8 value=16384\n"
                       "Matmul D1 alpha=1 A=0x2000/L1 B=0x1000/L2 beta=0 C=0x3000/L3 D=0x3000/L3 algo=42 "
                       "ws=0x5000/4096 stream=0x77\n");
    /* a run with too little workspace is refused before any call */
    f.clear();
    CONTAINS(
        cuda_gemm_run(b, g, 0x1000, 0x2000, 0, 0x3000, 0x4000, 0x5000, 16, (CUstream)0x77, why, sizeof why),
        "the hipBLASLt product needs 4096 bytes of workspace");
    CHECK_STR(f.log(), "");
  }
  cuda_gemm_free(g);
  cuda_blas_close(b);
  fake_close(&f, "rocm", "libhipblaslt.so");
}

/* baddbmm-like in float16: D[3, 5, 7] = A^T (A given [3, 9, 5]) @ B[9, 7]
 * broadcast over the batch, + 0.5 C, then relu. Each layout gets the
 * batch count and its stride (0 for B, the broadcast). */
ROCM_TEST(hip_vendor_batched_transposed_product_sets_batch_strides, "rocm") {
  fake f;
  if (!fake_open(&f, "rocm", "libhipblaslt.so")) return;
  char why[512];
  cuda_blas *b = NULL;
  REQUIRE(cuda_blas_open(&b, why, sizeof why) == NULL);
  f.clear();
  cuda_gemm_desc d = gemm(ALLOY_F16, 5, 7, 9);
  d.batch = 3, d.trans_a = true, d.lda = 5, d.stride_a = 45, d.ldb = 7, d.stride_b = 0;
  d.has_c = true, d.ldc = 7, d.stride_c = 35, d.beta = 0.5, d.activation = 1;
  cuda_gemm *g = NULL;
  uint64_t ws = 0;
  CHECK(cuda_gemm_plan(b, &d, (uint64_t)32 << 20, NULL, &g, &ws, why, sizeof why) == NULL);
  CHECK_STR(f.log(), "LayoutCreate L1 type=2 rows=7 cols=9 ld=7\n" /* B, HIP_R_16F */
                     "LayoutSet L1 attr=0 size=4 value=3\n"        /* BATCH_COUNT */
                     "LayoutSet L1 attr=1 size=8 value=0\n"        /* STRIDED_BATCH_OFFSET: broadcast */
                     "LayoutCreate L2 type=2 rows=5 cols=9 ld=5\n" /* A, given transposed */
                     "LayoutSet L2 attr=0 size=4 value=3\n"
                     "LayoutSet L2 attr=1 size=8 value=45\n"
                     "LayoutCreate L3 type=2 rows=7 cols=5 ld=7\n" /* D */
                     "LayoutSet L3 attr=0 size=4 value=3\n"
                     "LayoutSet L3 attr=1 size=8 value=35\n"
                     "LayoutCreate L4 type=2 rows=7 cols=5 ld=7\n" /* C */
                     "LayoutSet L4 attr=0 size=4 value=3\n"
                     "LayoutSet L4 attr=1 size=8 value=35\n"
                     "DescCreate D1 compute=2 scale=0\n"
                     "DescSet D1 attr=0 size=4 value=111\n" /* B not transposed */
                     "DescSet D1 attr=1 size=4 value=112\n" /* A transposed */
                     "DescSet D1 attr=2 size=4 value=2\n"   /* RELU */
                     "PrefCreate P1\n"
                     "PrefSet P1 attr=1 size=8 value=33554432\n"
                     "Heuristic D1 A=L1 B=L2 C=L4 D=L3 pref=P1 want=1\n"
                     "PrefDestroy P1\n");
  if (g) {
    f.clear();
    CHECK(cuda_gemm_run(b, g, 0x1000, 0x2000, 0x3000, 0x4000, 0, 0x5000, 4096, NULL, why, sizeof why) ==
          NULL);
    CONTAINS(f.log(), "alpha=1 A=0x2000/L1 B=0x1000/L2 beta=0.5 C=0x3000/L4 D=0x4000/L3");
  }
  cuda_gemm_free(g);
  CHECK_INT(f.live(), 1); /* the handle */
  cuda_blas_close(b);
  fake_close(&f, "rocm", "libhipblaslt.so");
}

/* Each activation and bias pair's epilogue value; float32 stays
 * HIPBLAS_COMPUTE_32F though TF32 is allowed (hipBLASLt's xf32 unused). */
ROCM_TEST(hip_vendor_epilogues_and_float32_compute_type, "rocm") {
  fake f;
  if (!fake_open(&f, "rocm", "libhipblaslt.so")) return;
  char why[512];
  cuda_blas *b = NULL;
  REQUIRE(cuda_blas_open(&b, why, sizeof why) == NULL);
  static const struct {
    int activation;
    bool bias;
    int epilogue;
  } cases[] = {{0, false, 1}, {1, false, 2}, {0, true, 4}, {1, true, 6}, {2, false, 32}, {2, true, 36}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    f.clear();
    cuda_gemm_desc d = gemm(ALLOY_F32, 16, 32, 64);
    d.lda = 64, d.ldb = 32, d.activation = cases[i].activation, d.bias = cases[i].bias, d.allow_tf32 = true;
    cuda_gemm *g = NULL;
    uint64_t ws = 0;
    CHECK(cuda_gemm_plan(b, &d, 0, NULL, &g, &ws, why, sizeof why) == NULL);
    char line[64];
    snprintf(line, sizeof line, "DescSet D1 attr=2 size=4 value=%d\n", cases[i].epilogue);
    CONTAINS(f.log(), line);
    CONTAINS(f.log(), "LayoutCreate L1 type=0 rows=32 cols=64 ld=32\n"); /* HIP_R_32F */
    CONTAINS(f.log(), "DescCreate D1 compute=2 scale=0\n");
    CHECK((strstr(f.log(), "attr=4 size=4 value=0\n") != NULL) == cases[i].bias); /* the bias in float */
    cuda_gemm_free(g);
  }
  /* a dtype hipBLASLt is not asked for: a sentence, no call */
  f.clear();
  cuda_gemm_desc d = gemm(ALLOY_F64, 2, 2, 2);
  d.lda = d.ldb = 2;
  cuda_gemm *g = NULL;
  uint64_t ws = 0;
  CONTAINS(cuda_gemm_plan(b, &d, 0, NULL, &g, &ws, why, sizeof why), "hipBLASLt products take float32");
  CHECK(g == NULL);
  CHECK_STR(f.log(), "");
  cuda_blas_close(b);
  fake_close(&f, "rocm", "libhipblaslt.so");
}

/* ---- MIOpen: detection --------------------------------------------------------- */

ROCM_TEST(hip_vendor_miopen_is_found_under_rocm_path_and_its_version_read, "rocm") {
  fake f;
  if (!fake_open(&f, "rocm", "libMIOpen.so")) return;
  char why[320];
  cuda_dnn *d = NULL;
  CHECK(cuda_dnn_open(&d, why, sizeof why) == NULL && d != NULL);
  if (d) {
    CHECK_INT(cuda_dnn_version(d), 30300); /* 3.3.0 */
    CONTAINS(cuda_dnn_path(d), "tests/hip/rocm/lib/libMIOpen.so");
    CHECK_STR(f.log(), "GetVersion\nCreate M1\n");
    cuda_dnn_close(d);
    CONTAINS(f.log(), "Destroy M1\n");
  }
  fake_close(&f, "rocm", "libMIOpen.so");
}

ROCM_TEST(hip_vendor_miopen_absent_old_or_incomplete_is_a_sentence, "none") {
  if (real_library("libMIOpen.so.1")) return;
  char why[320];
  cuda_dnn *d = NULL;
  const char *no = cuda_dnn_open(&d, why, sizeof why);
  CHECK(d == NULL);
  CONTAINS(no, "libMIOpen.so not found");
  use_rocm("rocm-old");
  no = cuda_dnn_open(&d, why, sizeof why);
  CHECK(d == NULL);
  CONTAINS(no, "libMIOpen.so has no miopenConvolutionForwardImmediate");
  CHECK(unloaded(fake_path("rocm-old", "libMIOpen.so")));
  use_rocm("rocm");
  setenv("FAKE_MIOPEN_VERSION", "1.9.0", 1);
  no = cuda_dnn_open(&d, why, sizeof why);
  unsetenv("FAKE_MIOPEN_VERSION");
  CHECK(d == NULL);
  CONTAINS(no, "version 1.9.0");
  CHECK(unloaded(fake_path("rocm", "libMIOpen.so")));
}

/* ---- MIOpen: convolutions ------------------------------------------------------ */

/* x [2, 8, 10, 12] * w [16, 4, 3, 3] (2 groups), stride [2, 1], padding
 * [1, 2], dilation [1, 2], with a bias: y [2, 16, 5, 12]; packed NCHW as
 * cuda_codegen_conv.c hands them over. */
static cuda_conv_desc conv(alloy_dtype t) {
  cuda_conv_desc c = {.dtype = t, .rank = 4, .bias = true};
  const int64_t x[4] = {2, 8, 10, 12}, w[4] = {16, 4, 3, 3}, y[4] = {2, 16, 5, 12};
  for (int k = 3, sx = 1, sw = 1, sy = 1; k >= 0; k--) {
    c.x_sizes[k] = x[k], c.w_sizes[k] = w[k], c.y_sizes[k] = y[k];
    c.x_strides[k] = sx, c.w_strides[k] = sw, c.y_strides[k] = sy;
    sx *= (int)x[k], sw *= (int)w[k], sy *= (int)y[k];
  }
  c.stride[0] = 2, c.stride[1] = 1, c.padding[0] = 1, c.padding[1] = 2, c.dilation[0] = 1, c.dilation[1] = 2;
  return c;
}

/* What every plan of conv() asks MIOpen first, with its dtype's value. */
static void describes(const char *log, int type) {
  char want[1024];
  snprintf(want, sizeof want,
           "TensorCreate T1\nTensorSet T1 type=%d dims=[2,8,10,12] strides=[960,120,12,1]\n"
           "TensorCreate T2\nTensorSet T2 type=%d dims=[16,4,3,3] strides=[36,9,3,1]\n"
           "TensorCreate T3\nTensorSet T3 type=%d dims=[2,16,5,12] strides=[960,60,12,1]\n"
           "ConvCreate C1\nConvInit C1 spatial=2 pad=[1,2] stride=[2,1] dilation=[1,2] mode=0\n"
           "ConvGroups C1 groups=2\nConvAttribute C1 attr=0 value=0\n"
           "SolutionCount w=T2 x=T1 conv=C1 y=T3\nSolutions w=T2 x=T1 conv=C1 y=T3 max=3\n",
           type, type, type);
  CHECK(strncmp(log, want, strlen(want)) == 0);
  if (strncmp(log, want, strlen(want))) printf("  log:\n%s  wanted first:\n%s", log, want);
}

ROCM_TEST(hip_vendor_conv_f16_describes_groups_strides_pads_dilations, "rocm") {
  fake f;
  if (!fake_open(&f, "rocm", "libMIOpen.so")) return;
  char why[640];
  cuda_dnn *d = NULL;
  REQUIRE(cuda_dnn_open(&d, why, sizeof why) == NULL);
  f.clear();
  const cuda_conv_desc desc = conv(ALLOY_F16);
  cuda_conv *c = NULL;
  uint64_t ws = 0;
  bool fused = true;
  CHECK(cuda_conv_plan(d, &desc, (uint64_t)64 << 20, NULL, &c, &ws, &fused, why, sizeof why) == NULL);
  describes(f.log(), 0); /* miopenHalf */
  /* float16 may take MIOpen's first (Winograd) solution */
  CONTAINS(f.log(), "max=3\nWorkspaceSize id=11\nCompile id=11\n");
  CHECK(!fused); /* the caller adds the bias */
  CHECK_INT(ws, 1 << 20);
  if (c) {
    char text[200];
    cuda_conv_describe(c, text, sizeof text);
    CONTAINS(text, "MIOpen solution 11 (Winograd");
    CONTAINS(text, "bias added apart, 1048576 bytes of workspace");
    /* equal descriptors share the plan, with no call */
    f.clear();
    cuda_conv *again = NULL;
    CHECK(cuda_conv_plan(d, &desc, (uint64_t)64 << 20, NULL, &again, &ws, &fused, why, sizeof why) == NULL);
    CHECK(again == c);
    CHECK_STR(f.log(), "");
    cuda_conv_free(again);
    /* a run: the stream, then the immediate call with the solution */
    f.clear();
    CHECK(cuda_conv_run(d, c, 0x1000, 0x2000, 0, 0x3000, 0x4000, 1 << 20, (CUstream)0x77, why, sizeof why) ==
          NULL);
    CHECK_STR(f.log(), "SetStream M1 stream=0x77\n"
                       "Immediate M1 w=T2@0x2000 x=T1@0x1000 conv=C1 y=T3@0x3000 ws=0x4000/1048576 id=11\n");
    CONTAINS(cuda_conv_run(d, c, 0x1008, 0x2000, 0, 0x3000, 0x4000, 1 << 20, NULL, why, sizeof why),
             "x at 0x1008 is not 16-byte aligned");
  }
  cuda_conv_free(c);
  CHECK_INT(f.live(), 1); /* the handle: the descriptors went with the plan */
  cuda_dnn_close(d);
  fake_close(&f, "rocm", "libMIOpen.so");
}

/* float32 is exact: the Winograd solution is passed over, the implicit
 * GEMM one needs more than 64 MiB, so the direct one is kept; with TF32
 * allowed the Winograd one is. bfloat16 is miopenBFloat16. */
ROCM_TEST(hip_vendor_conv_f32_takes_no_winograd_unless_allowed, "rocm") {
  fake f;
  if (!fake_open(&f, "rocm", "libMIOpen.so")) return;
  char why[640];
  cuda_dnn *d = NULL;
  REQUIRE(cuda_dnn_open(&d, why, sizeof why) == NULL);
  f.clear();
  cuda_conv_desc desc = conv(ALLOY_F32);
  cuda_conv *c = NULL, *tf32 = NULL, *bf16 = NULL;
  uint64_t ws = 0;
  bool fused = false;
  CHECK(cuda_conv_plan(d, &desc, (uint64_t)64 << 20, NULL, &c, &ws, &fused, why, sizeof why) == NULL);
  describes(f.log(), 1); /* miopenFloat */
  CONTAINS(f.log(), "max=3\nWorkspaceSize id=12\nWorkspaceSize id=13\nCompile id=13\n");
  CHECK_INT(ws, 4096);
  f.clear();
  desc.allow_tf32 = true;
  CHECK(cuda_conv_plan(d, &desc, (uint64_t)64 << 20, NULL, &tf32, &ws, &fused, why, sizeof why) == NULL);
  CHECK(tf32 != c);
  CONTAINS(f.log(), "max=3\nWorkspaceSize id=11\nCompile id=11\n");
  f.clear();
  desc = conv(ALLOY_BF16);
  CHECK(cuda_conv_plan(d, &desc, (uint64_t)64 << 20, NULL, &bf16, &ws, &fused, why, sizeof why) == NULL);
  describes(f.log(), 5); /* miopenBFloat16 */
  /* with only the Winograd solution listed, float32 has none: a sentence */
  f.clear();
  setenv("FAKE_MIOPEN_SOLUTIONS", "1", 1);
  desc = conv(ALLOY_F32);
  desc.padding[0] = 0; /* not the shared plan */
  cuda_conv *none = NULL;
  const char *no = cuda_conv_plan(d, &desc, (uint64_t)64 << 20, NULL, &none, &ws, &fused, why, sizeof why);
  unsetenv("FAKE_MIOPEN_SOLUTIONS");
  CHECK(none == NULL);
  CONTAINS(no, "MIOpen has no solution for the convolution f32 x [2, 8, 10, 12] w [16, 4, 3, 3]");
  CONTAINS(no,
           "(1 listed; 1 FFT or Winograd, not exact for float32; 0 needing more workspace; 0 not compiling)");
  CHECK(strstr(f.log(), "TensorDestroy T1\nTensorDestroy T2\nTensorDestroy T3\nConvDestroy C1\n") != NULL);
  /* what MIOpen cannot be asked: sentences, no call */
  f.clear();
  desc = conv(ALLOY_F64);
  CONTAINS(cuda_conv_plan(d, &desc, 0, NULL, &none, &ws, &fused, why, sizeof why),
           "MIOpen convolutions take float32, float16 or bfloat16, not float64");
  desc = conv(ALLOY_F32);
  desc.x_strides[0] = (int64_t)INT_MAX + 1;
  CONTAINS(cuda_conv_plan(d, &desc, 0, NULL, &none, &ws, &fused, why, sizeof why), "MIOpen takes sizes");
  CHECK_STR(f.log(), "");
  cuda_conv_free(tf32);
  cuda_conv_free(bf16);
  cuda_dnn_close(d); /* frees c, left to it */
  fake_close(&f, "rocm", "libMIOpen.so");
}

/* ---- the option vendor_libs -------------------------------------------------- */

/* liballoy-hip.so takes vendor_libs=1 (its default now: the libraries
 * where found) and 0, and refuses anything else. Without an AMD GPU it
 * opens with no device, so no library is looked for here. */
TEST(hip_vendor_option_vendor_libs_takes_0_and_1) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/lib/alloy/liballoy-hip.so", build_dir());
  void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!dl) return (void)harness_fail(__FILE__, __LINE__, "dlopen %s: %s (make builds it)", path, dlerror());
  alloy_plugin_entry_fn init = NULL;
  void *fn = dlsym(dl, ALLOY_PLUGIN_ENTRY);
  memcpy(&init, &fn, sizeof fn);
  const alloy_plugin_api *api = init ? init(alloy_host_table()) : NULL;
  alloy_backend *be = NULL;
  if (api) CHECK_OK(api->backend_open(alloy_host_table(), &be));
  if (be) {
    CHECK_OK(api->backend_set_option(be, "vendor_libs", "1"));
    CHECK_OK(api->backend_set_option(be, "vendor_libs", "0"));
    alloy_error *e = api->backend_set_option(be, "vendor_libs", "2");
    CHECK(e != NULL);
    if (e) CONTAINS(alloy_error_message(e), "hip: option vendor_libs takes 0 or 1");
    alloy_error_free(e);
    api->backend_close(be);
  }
  CHECK(api != NULL && be != NULL);
  dlclose(dl);
}
