/*
 * tests/test_ref_shape.c: the reference backend's shape-family kernels on
 * what the golden corpus does not hold: the prims (no golden cases at all)
 * and the ATen ops without samples (col2im, diff, slice_scatter, the 2-D and
 * 3-D paddings, to.dtype, resize_). Each test builds a one-node graph with
 * the runtime API, runs it on "ref" and compares with values worked out by
 * hand in the comments.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testref.h"

static bool floats_are(const alloy_host_tensor *h, const float *want, int n, float tol) {
  const float *got = h->data;
  for (int i = 0; i < n; i++)
    if (!(fabsf(got[i] - want[i]) <= tol)) {
      harness_fail(__FILE__, __LINE__, "element %d: got %g, expected %g", i, got[i], want[i]);
      return false;
    }
  return true;
}

/* x = [[0, 1, 2], [3, 4, 5]] as float32 */
static float mat23[6] = {0, 1, 2, 3, 4, 5};
static const int64_t shape23[2] = {2, 3};

TEST(ref_shape_broadcast_in_dim) {
  tr_case t;
  REQUIRE(tr_open(&t));
  float x[3] = {1, 2, 3};
  int64_t s3[1] = {3}, shape[2] = {2, 3}, bd[1] = {1};
  alloy_arg l1[2], l2[1];
  alloy_arg args[3] = {tr_input(&t, ALLOY_F32, s3, 1, x), tr_ints(l1, 2, shape), tr_ints(l2, 1, bd)};
  if (tr_run(&t, "prims.broadcast_in_dim.default", args, 3)) {
    CHECK(tr_shape_is(&t.out[0], 2, shape));
    CHECK(floats_are(&t.out[0], (float[]){1, 2, 3, 1, 2, 3}, 6, 0));
  }
  tr_close(&t);
}

TEST(ref_shape_prims_reshapes) {
  /* collapse_view(0, 1) and collapse: [2, 3] -> [6]; split_dim(0, 2) of
   * [6] -> [2, 3]; squeeze([1]) of [2, 1, 3]; reshape -> [3, 2]: all keep
   * row-major order. */
  static const struct {
    const char *op;
    int64_t a, b;
  } collapses[] = {{"prims.collapse_view.default", 0, 1}, {"prims.collapse.default", 0, 1}};
  for (int k = 0; k < 2; k++) {
    tr_case t;
    REQUIRE(tr_open(&t));
    alloy_arg args[3] = {tr_input(&t, ALLOY_F32, shape23, 2, mat23), alloy_arg_int(collapses[k].a),
                         alloy_arg_int(collapses[k].b)};
    if (tr_run(&t, collapses[k].op, args, 3)) {
      CHECK(tr_shape_is(&t.out[0], 1, (int64_t[]){6}));
      CHECK(floats_are(&t.out[0], mat23, 6, 0));
    }
    tr_close(&t);
  }
  tr_case t;
  REQUIRE(tr_open(&t));
  int64_t s6[1] = {6};
  alloy_arg args[3] = {tr_input(&t, ALLOY_F32, s6, 1, mat23), alloy_arg_int(0), alloy_arg_int(2)};
  if (tr_run(&t, "prims.split_dim.default", args, 3)) {
    CHECK(tr_shape_is(&t.out[0], 2, shape23));
    CHECK(floats_are(&t.out[0], mat23, 6, 0));
  }
  tr_close(&t);
  REQUIRE(tr_open(&t));
  int64_t s213[3] = {2, 1, 3}, one[1] = {1};
  alloy_arg l[1];
  alloy_arg sq[2] = {tr_input(&t, ALLOY_F32, s213, 3, mat23), tr_ints(l, 1, one)};
  if (tr_run(&t, "prims.squeeze.default", sq, 2)) {
    CHECK(tr_shape_is(&t.out[0], 2, shape23));
    CHECK(floats_are(&t.out[0], mat23, 6, 0));
  }
  tr_close(&t);
  REQUIRE(tr_open(&t));
  int64_t s32[2] = {3, 2};
  alloy_arg l2[2];
  alloy_arg rs[2] = {tr_input(&t, ALLOY_F32, shape23, 2, mat23), tr_ints(l2, 2, s32)};
  if (tr_run(&t, "prims.reshape.default", rs, 2)) {
    CHECK(tr_shape_is(&t.out[0], 2, s32));
    CHECK(floats_are(&t.out[0], mat23, 6, 0));
  }
  tr_close(&t);
}

TEST(ref_shape_prims_transpose_rev) {
  tr_case t;
  REQUIRE(tr_open(&t));
  int64_t perm[2] = {1, 0};
  alloy_arg l[2];
  alloy_arg args[2] = {tr_input(&t, ALLOY_F32, shape23, 2, mat23), tr_ints(l, 2, perm)};
  /* transpose: [[0, 3], [1, 4], [2, 5]] */
  if (tr_run(&t, "prims.transpose.default", args, 2))
    CHECK(floats_are(&t.out[0], (float[]){0, 3, 1, 4, 2, 5}, 6, 0));
  tr_close(&t);
  REQUIRE(tr_open(&t));
  int64_t dims[1] = {1};
  alloy_arg l1[1];
  alloy_arg rv[2] = {tr_input(&t, ALLOY_F32, shape23, 2, mat23), tr_ints(l1, 1, dims)};
  /* rev along dim 1: [[2, 1, 0], [5, 4, 3]] */
  if (tr_run(&t, "prims.rev.default", rv, 2)) CHECK(floats_are(&t.out[0], (float[]){2, 1, 0, 5, 4, 3}, 6, 0));
  tr_close(&t);
}

TEST(ref_shape_prims_cat_where) {
  tr_case t;
  REQUIRE(tr_open(&t));
  float a[2] = {1, 2}, b[4] = {3, 4, 5, 6};
  int64_t s12[2] = {1, 2}, s22[2] = {2, 2};
  alloy_arg items[2] = {tr_input(&t, ALLOY_F32, s12, 2, a), tr_input(&t, ALLOY_F32, s22, 2, b)};
  alloy_arg args[2] = {alloy_arg_list(items, 2), alloy_arg_int(0)};
  if (tr_run(&t, "prims.cat.default", args, 2)) {
    CHECK(tr_shape_is(&t.out[0], 2, (int64_t[]){3, 2}));
    CHECK(floats_are(&t.out[0], (float[]){1, 2, 3, 4, 5, 6}, 6, 0));
  }
  tr_close(&t);
  REQUIRE(tr_open(&t));
  uint8_t pred[3] = {1, 0, 1};
  float x[3] = {1, 2, 3}, y[3] = {-1, -2, -3};
  int64_t s3[1] = {3};
  alloy_arg w[3] = {tr_input(&t, ALLOY_BOOL, s3, 1, pred), tr_input(&t, ALLOY_F32, s3, 1, x),
                    tr_input(&t, ALLOY_F32, s3, 1, y)};
  if (tr_run(&t, "prims.where.default", w, 3)) CHECK(floats_are(&t.out[0], (float[]){1, -2, 3}, 3, 0));
  tr_close(&t);
}

TEST(ref_shape_convert_element_type) {
  /* float -> int truncates toward zero; -0.5 -> 0; int -> bool is != 0 */
  tr_case t;
  REQUIRE(tr_open(&t));
  float x[4] = {2.7f, -2.7f, -0.5f, 100.0f};
  int64_t s4[1] = {4};
  alloy_arg args[2] = {tr_input(&t, ALLOY_F32, s4, 1, x), alloy_arg_dtype(ALLOY_I32)};
  if (tr_run(&t, "prims.convert_element_type.default", args, 2)) {
    const int32_t *got = t.out[0].data;
    CHECK(t.out[0].dtype == ALLOY_I32);
    CHECK_INT(got[0], 2);
    CHECK_INT(got[1], -2);
    CHECK_INT(got[2], 0);
    CHECK_INT(got[3], 100);
  }
  tr_close(&t);
  REQUIRE(tr_open(&t));
  int64_t v[3] = {0, -3, 4};
  int64_t s3[1] = {3};
  alloy_arg b[2] = {tr_input(&t, ALLOY_I64, s3, 1, v), alloy_arg_dtype(ALLOY_BOOL)};
  if (tr_run(&t, "prims.convert_element_type.default", b, 2)) {
    const uint8_t *got = t.out[0].data;
    CHECK(got[0] == 0 && got[1] == 1 && got[2] == 1);
  }
  tr_close(&t);
  /* aten.to.dtype: int64 2^53 + 1 to float64 rounds once to 2^53 */
  REQUIRE(tr_open(&t));
  int64_t big[1] = {(int64_t)9007199254740993LL};
  int64_t s1[1] = {1};
  alloy_arg to[2] = {tr_input(&t, ALLOY_I64, s1, 1, big), alloy_arg_dtype(ALLOY_F64)};
  if (tr_run(&t, "aten.to.dtype", to, 2)) CHECK(((double *)t.out[0].data)[0] == 9007199254740992.0);
  tr_close(&t);
}

TEST(ref_shape_identity_prims) {
  static const char *const ops[] = {"prims.clone.default", "prims.view_of.default", "prims.device_put.default"};
  for (int k = 0; k < 3; k++) {
    tr_case t;
    REQUIRE(tr_open(&t));
    alloy_arg args[2] = {tr_input(&t, ALLOY_F32, shape23, 2, mat23), {ALLOY_ARG_DEVICE, {0}}};
    args[1].u.device = (alloy_device){ALLOY_DEVICE_CPU, -1};
    if (tr_run(&t, ops[k], args, k == 2 ? 2 : 1)) {
      CHECK(tr_shape_is(&t.out[0], 2, shape23));
      CHECK(floats_are(&t.out[0], mat23, 6, 0));
    }
    tr_close(&t);
  }
}

TEST(ref_shape_scalar_prims) {
  /* item of [[7]] int64 is 7; maximum_value(int16) 32767; minimum_value
   * (float32) is -FLT_MAX. Scalar outputs come back as 0-dim tensors. */
  tr_case t;
  REQUIRE(tr_open(&t));
  int64_t seven[1] = {7}, s11[2] = {1, 1};
  alloy_arg args[1] = {tr_input(&t, ALLOY_I64, s11, 2, seven)};
  if (tr_run(&t, "prims.item.default", args, 1)) CHECK(t.out[0].rank == 0 && *(int64_t *)t.out[0].data == 7);
  tr_close(&t);
  REQUIRE(tr_open(&t));
  alloy_arg mx[1] = {alloy_arg_dtype(ALLOY_I16)};
  if (tr_run(&t, "prims.maximum_value.default", mx, 1)) CHECK(*(int64_t *)t.out[0].data == 32767);
  tr_close(&t);
  REQUIRE(tr_open(&t));
  alloy_arg mn[1] = {alloy_arg_dtype(ALLOY_F32)};
  if (tr_run(&t, "prims.minimum_value.default", mn, 1)) CHECK(*(double *)t.out[0].data == -3.4028234663852886e38);
  tr_close(&t);
}

TEST(ref_shape_conj) {
  /* conj of [1+2i, 3-4i] is [1-2i, 3+4i] */
  tr_case t;
  REQUIRE(tr_open(&t));
  float z[4] = {1, 2, 3, -4};
  int64_t s2[1] = {2};
  alloy_arg args[1] = {tr_input(&t, ALLOY_C64, s2, 1, z)};
  if (tr_run(&t, "prims.conj.default", args, 1)) CHECK(floats_are(&t.out[0], (float[]){1, -2, 3, 4}, 4, 0));
  tr_close(&t);
}

TEST(ref_shape_copy_strided_copy_to) {
  tr_case t;
  REQUIRE(tr_open(&t));
  int64_t st[2] = {1, 2};
  alloy_arg l[2];
  alloy_arg args[2] = {tr_input(&t, ALLOY_F32, shape23, 2, mat23), tr_ints(l, 2, st)};
  /* the values stay; only the layout PyTorch would give changes */
  if (tr_run(&t, "prims.copy_strided.default", args, 2)) CHECK(floats_are(&t.out[0], mat23, 6, 0));
  tr_close(&t);
  REQUIRE(tr_open(&t));
  float dst[6] = {0};
  int64_t src[6] = {6, 5, 4, 3, 2, 1};
  int64_t s6[1] = {6};
  /* copy_to(a [2, 3] f32, b [6] i64): b's elements, row-major, as float */
  alloy_arg c[2] = {tr_input(&t, ALLOY_F32, shape23, 2, dst), tr_input(&t, ALLOY_I64, s6, 1, src)};
  if (tr_run(&t, "prims.copy_to.default", c, 2)) {
    CHECK(tr_shape_is(&t.out[0], 2, shape23));
    CHECK(floats_are(&t.out[0], (float[]){6, 5, 4, 3, 2, 1}, 6, 0));
  }
  tr_close(&t);
}

TEST(ref_shape_as_strided_prims) {
  /* as_strided([2, 2], [1, 2], 1) of 0..5: elements 1 + i + 2j:
   * [[1, 3], [2, 4]] */
  tr_case t;
  REQUIRE(tr_open(&t));
  int64_t size[2] = {2, 2}, stride[2] = {1, 2};
  alloy_arg l1[2], l2[2];
  alloy_arg args[4] = {tr_input(&t, ALLOY_F32, shape23, 2, mat23), tr_ints(l1, 2, size), tr_ints(l2, 2, stride),
                       alloy_arg_int(1)};
  if (tr_run(&t, "prims.as_strided.default", args, 4)) CHECK(floats_are(&t.out[0], (float[]){1, 3, 2, 4}, 4, 0));
  tr_close(&t);
  /* as_strided_scatter: the same window of 0..5 gets [[10, 30], [20, 40]]:
   * storage 0 10 20 30 40 5 */
  REQUIRE(tr_open(&t));
  float src[4] = {10, 30, 20, 40};
  alloy_arg s[5] = {tr_input(&t, ALLOY_F32, shape23, 2, mat23), tr_input(&t, ALLOY_F32, size, 2, src),
                    tr_ints(l1, 2, size), tr_ints(l2, 2, stride), alloy_arg_int(1)};
  if (tr_run(&t, "prims.as_strided_scatter.default", s, 5))
    CHECK(floats_are(&t.out[0], (float[]){0, 10, 20, 30, 40, 5}, 6, 0));
  tr_close(&t);
}

TEST(ref_shape_view_of_dtype) {
  /* 1.0f is 0x3f800000; -2.0f is 0xc0000000 */
  tr_case t;
  REQUIRE(tr_open(&t));
  float x[2] = {1.0f, -2.0f};
  int64_t s2[1] = {2};
  alloy_arg args[2] = {tr_input(&t, ALLOY_F32, s2, 1, x), alloy_arg_dtype(ALLOY_I32)};
  if (tr_run(&t, "prims.view_of_dtype.default", args, 2)) {
    const int32_t *got = t.out[0].data;
    CHECK_INT(got[0], 0x3f800000);
    CHECK_INT(got[1], (int32_t)0xc0000000u);
  }
  tr_close(&t);
  /* to int16 halves: little-endian low half first: 0x0000, 0x3f80 */
  REQUIRE(tr_open(&t));
  alloy_arg h[2] = {tr_input(&t, ALLOY_F32, s2, 1, x), alloy_arg_dtype(ALLOY_I16)};
  if (tr_run(&t, "prims.view_of_dtype.default", h, 2)) {
    const int16_t *got = t.out[0].data;
    CHECK(tr_shape_is(&t.out[0], 1, (int64_t[]){4}));
    CHECK_INT(got[0], 0);
    CHECK_INT(got[1], 0x3f80);
  }
  tr_close(&t);
}

TEST(ref_shape_resize) {
  /* prims.resize and aten.resize_ to [2, 2] keep the first 4 elements; to
   * [8] add zeros */
  static const char *const ops[] = {"prims.resize.default", "aten.resize_.default"};
  for (int k = 0; k < 2; k++) {
    tr_case t;
    REQUIRE(tr_open(&t));
    int64_t s22[2] = {2, 2};
    alloy_arg l[2];
    alloy_arg args[2] = {tr_input(&t, ALLOY_F32, shape23, 2, mat23), tr_ints(l, 2, s22)};
    if (tr_run(&t, ops[k], args, 2)) {
      CHECK(tr_shape_is(&t.out[0], 2, s22));
      CHECK(floats_are(&t.out[0], (float[]){0, 1, 2, 3}, 4, 0));
    }
    tr_close(&t);
  }
  tr_case t;
  REQUIRE(tr_open(&t));
  int64_t s8[1] = {8};
  alloy_arg l[1];
  alloy_arg args[2] = {tr_input(&t, ALLOY_F32, shape23, 2, mat23), tr_ints(l, 1, s8)};
  if (tr_run(&t, "prims.resize.default", args, 2)) CHECK(floats_are(&t.out[0], (float[]){0, 1, 2, 3, 4, 5, 0, 0}, 8, 0));
  tr_close(&t);
}

TEST(ref_shape_svd) {
  /* A = [[3, 0], [4, 5]]: A^T A = [[25, 20], [20, 25]], eigenvalues 45 and
   * 5, so S = [sqrt(45), sqrt(5)]; U S Vh must give A back, U and Vh
   * orthogonal. Also the wide A^T and full_matrices of a 3 x 2. */
  for (int wide = 0; wide < 2; wide++) {
    tr_case t;
    REQUIRE(tr_open(&t));
    double a[2][4] = {{3, 0, 4, 5}, {3, 4, 0, 5}};
    int64_t s22[2] = {2, 2};
    alloy_arg args[2] = {tr_input(&t, ALLOY_F64, s22, 2, a[wide]), alloy_arg_bool(false)};
    if (tr_run(&t, "prims.svd.default", args, 2)) {
      const double *u = t.out[0].data, *s = t.out[1].data, *vh = t.out[2].data;
      CHECK(fabs(s[0] - sqrt(45.0)) < 1e-12 && fabs(s[1] - sqrt(5.0)) < 1e-12);
      for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
          double r = 0, uu = 0, vv = 0;
          for (int k = 0; k < 2; k++) {
            r += u[i * 2 + k] * s[k] * vh[k * 2 + j];
            uu += u[k * 2 + i] * u[k * 2 + j];
            vv += vh[i * 2 + k] * vh[j * 2 + k];
          }
          CHECK(fabs(r - a[wide][i * 2 + j]) < 1e-12);
          CHECK(fabs(uu - (i == j)) < 1e-12 && fabs(vv - (i == j)) < 1e-12);
        }
    }
    tr_close(&t);
  }
  tr_case t;
  REQUIRE(tr_open(&t));
  /* [[1, 0], [0, 2], [0, 0]]: S = [2, 1]; full U is 3 x 3 orthogonal */
  float a[6] = {1, 0, 0, 2, 0, 0};
  int64_t s32[2] = {3, 2};
  alloy_arg args[2] = {tr_input(&t, ALLOY_F32, s32, 2, a), alloy_arg_bool(true)};
  if (tr_run(&t, "prims.svd.default", args, 2)) {
    const float *u = t.out[0].data, *s = t.out[1].data;
    CHECK(tr_shape_is(&t.out[0], 2, (int64_t[]){3, 3}));
    CHECK(tr_shape_is(&t.out[2], 2, (int64_t[]){2, 2}));
    CHECK(fabsf(s[0] - 2) < 1e-6f && fabsf(s[1] - 1) < 1e-6f);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        float uu = 0;
        for (int k = 0; k < 3; k++) uu += u[k * 3 + i] * u[k * 3 + j];
        CHECK(fabsf(uu - (i == j)) < 1e-6f);
      }
  }
  tr_close(&t);
}

TEST(ref_shape_uniform) {
  /* 4096 draws in [2, 4): all inside, mean 3 within 5 standard errors
   * (sd of U(2, 4) is 2/sqrt(12), so se = 0.009) */
  tr_case t;
  REQUIRE(tr_open(&t));
  int64_t shape[1] = {4096}, stride[1] = {1};
  alloy_arg l1[1], l2[1];
  alloy_arg args[1] = {tr_ints(l1, 1, shape)};
  alloy_arg dev = {ALLOY_ARG_DEVICE, {0}};
  dev.u.device = (alloy_device){ALLOY_DEVICE_CPU, -1};
  const char *kwn[5] = {"low", "high", "dtype", "device", "stride"};
  alloy_arg kw[5] = {alloy_arg_float(2), alloy_arg_float(4), alloy_arg_dtype(ALLOY_F32), dev, tr_ints(l2, 1, stride)};
  if (tr_run_kw(&t, "prims.uniform.default", args, 1, kwn, kw, 5)) {
    const float *x = t.out[0].data;
    double sum = 0;
    bool inside = true;
    for (int i = 0; i < 4096; i++) sum += x[i], inside &= x[i] >= 2 && x[i] < 4;
    CHECK(inside);
    CHECK(fabs(sum / 4096 - 3) < 0.045);
  }
  tr_close(&t);
}

TEST(ref_shape_fft) {
  /* r2c of [1, 2, 3, 4], onesided: [10, -2+2i, -2] */
  tr_case t;
  REQUIRE(tr_open(&t));
  float x[4] = {1, 2, 3, 4};
  int64_t s4[1] = {4}, d0[1] = {0};
  alloy_arg l[1];
  alloy_arg args[1] = {tr_input(&t, ALLOY_F32, s4, 1, x)};
  const char *kwn[2] = {"dim", "onesided"};
  alloy_arg kw[2] = {tr_ints(l, 1, d0), alloy_arg_bool(true)};
  if (tr_run_kw(&t, "prims.fft_r2c.default", args, 1, kwn, kw, 2)) {
    CHECK(t.out[0].dtype == ALLOY_C64 && tr_shape_is(&t.out[0], 1, (int64_t[]){3}));
    CHECK(floats_are(&t.out[0], (float[]){10, 0, -2, 2, -2, 0}, 6, 1e-5f));
  }
  tr_close(&t);
  /* c2c backward of [10, -2+2i, -2, -2-2i] is 4 * [1, 2, 3, 4] */
  REQUIRE(tr_open(&t));
  float z[8] = {10, 0, -2, 2, -2, 0, -2, -2};
  alloy_arg c[1] = {tr_input(&t, ALLOY_C64, s4, 1, z)};
  const char *kwc[2] = {"dim", "forward"};
  alloy_arg kc[2] = {tr_ints(l, 1, d0), alloy_arg_bool(false)};
  if (tr_run_kw(&t, "prims.fft_c2c.default", c, 1, kwc, kc, 2))
    CHECK(floats_are(&t.out[0], (float[]){4, 0, 8, 0, 12, 0, 16, 0}, 8, 1e-5f));
  tr_close(&t);
  /* c2r of the half spectrum [10, -2+2i, -2] with last_dim_size 4: the
   * same 4 * [1, 2, 3, 4] */
  REQUIRE(tr_open(&t));
  int64_t s3[1] = {3};
  alloy_arg r[1] = {tr_input(&t, ALLOY_C64, s3, 1, z)};
  const char *kwr[2] = {"dim", "last_dim_size"};
  alloy_arg kr[2] = {tr_ints(l, 1, d0), alloy_arg_int(4)};
  if (tr_run_kw(&t, "prims.fft_c2r.default", r, 1, kwr, kr, 2))
    CHECK(floats_are(&t.out[0], (float[]){4, 8, 12, 16}, 4, 1e-5f));
  tr_close(&t);
}

TEST(ref_shape_tokens) {
  tr_case t;
  REQUIRE(tr_open(&t));
  if (tr_run(&t, "prims._make_token.default", NULL, 0)) CHECK(tr_shape_is(&t.out[0], 1, (int64_t[]){0}));
  tr_close(&t);
}

/* ---- ATen ops the golden corpus has no samples of --------------------- */

TEST(ref_shape_col2im) {
  /* 1 channel, 2x2 kernel, stride 1, 3x3 image: 4 windows; columns of ones
   * add up to how many windows cover each pixel: [[1,2,1],[2,4,2],[1,2,1]] */
  tr_case t;
  REQUIRE(tr_open(&t));
  float cols[16];
  for (int i = 0; i < 16; i++) cols[i] = 1;
  int64_t s[2] = {4, 4}, os[2] = {3, 3}, k[2] = {2, 2}, one[2] = {1, 1}, zero[2] = {0, 0};
  alloy_arg l[5][2];
  alloy_arg args[6] = {tr_input(&t, ALLOY_F32, s, 2, cols), tr_ints(l[0], 2, os), tr_ints(l[1], 2, k),
                       tr_ints(l[2], 2, one), tr_ints(l[3], 2, zero), tr_ints(l[4], 2, one)};
  if (tr_run(&t, "aten.col2im.default", args, 6)) {
    CHECK(tr_shape_is(&t.out[0], 3, (int64_t[]){1, 3, 3}));
    CHECK(floats_are(&t.out[0], (float[]){1, 2, 1, 2, 4, 2, 1, 2, 1}, 9, 0));
  }
  tr_close(&t);
}

TEST(ref_shape_diff) {
  /* diff of [1, 4, 9, 16] with n = 2 and prepend [0]: [0, 1, 4, 9, 16] ->
   * [1, 3, 5, 7] -> [2, 2, 2] */
  tr_case t;
  REQUIRE(tr_open(&t));
  int64_t x[4] = {1, 4, 9, 16}, p[1] = {0};
  int64_t s4[1] = {4}, s1[1] = {1};
  alloy_arg args[5] = {tr_input(&t, ALLOY_I64, s4, 1, x), alloy_arg_int(2), alloy_arg_int(-1),
                       tr_input(&t, ALLOY_I64, s1, 1, p), alloy_arg_none()};
  if (tr_run(&t, "aten.diff.default", args, 5)) {
    CHECK(tr_shape_is(&t.out[0], 1, (int64_t[]){3}));
    CHECK(tr_longs_are(&t.out[0], (int64_t[]){2, 2, 2}, 3));
  }
  tr_close(&t);
  /* bool differences are xor: [1, 1, 0, 1] -> [0, 1, 1] */
  REQUIRE(tr_open(&t));
  uint8_t b[4] = {1, 1, 0, 1};
  alloy_arg bargs[1] = {tr_input(&t, ALLOY_BOOL, s4, 1, b)};
  if (tr_run(&t, "aten.diff.default", bargs, 1)) {
    const uint8_t *got = t.out[0].data;
    CHECK(got[0] == 0 && got[1] == 1 && got[2] == 1);
  }
  tr_close(&t);
}

TEST(ref_shape_slice_scatter) {
  /* slice_scatter(zeros [2, 4], src [2, 2], dim 1, start 1, end None,
   * step 2): columns 1 and 3 */
  tr_case t;
  REQUIRE(tr_open(&t));
  float self[8] = {0}, src[4] = {1, 2, 3, 4};
  int64_t s24[2] = {2, 4}, s22[2] = {2, 2};
  alloy_arg args[6] = {tr_input(&t, ALLOY_F32, s24, 2, self), tr_input(&t, ALLOY_F32, s22, 2, src), alloy_arg_int(1),
                       alloy_arg_int(1), alloy_arg_none(), alloy_arg_int(2)};
  if (tr_run(&t, "aten.slice_scatter.default", args, 6))
    CHECK(floats_are(&t.out[0], (float[]){0, 1, 0, 2, 0, 3, 0, 4}, 8, 0));
  tr_close(&t);
}

TEST(ref_shape_pads_2d_3d) {
  /* reflection_pad2d([1, 0, 1, 0]) of [[0, 1, 2], [3, 4, 5]] (as [1, 2, 3]):
   * rows [4 3 4 5], [1 0 1 2], [4 3 4 5] */
  tr_case t;
  REQUIRE(tr_open(&t));
  int64_t s123[3] = {1, 2, 3}, p[4] = {1, 0, 1, 0};
  alloy_arg l[4];
  alloy_arg args[2] = {tr_input(&t, ALLOY_F32, s123, 3, mat23), tr_ints(l, 4, p)};
  if (tr_run(&t, "aten.reflection_pad2d.default", args, 2)) {
    CHECK(tr_shape_is(&t.out[0], 3, (int64_t[]){1, 3, 4}));
    CHECK(floats_are(&t.out[0], (float[]){4, 3, 4, 5, 1, 0, 1, 2, 4, 3, 4, 5}, 12, 0));
  }
  tr_close(&t);
  /* replication_pad3d([0, 1, 0, 0, 1, 0]) of [1, 1, 2, 3]: the depth doubles
   * (first slice repeated) and each row repeats its last element */
  REQUIRE(tr_open(&t));
  int64_t s1123[4] = {1, 1, 2, 3}, p3[6] = {0, 1, 0, 0, 1, 0};
  alloy_arg l3[6];
  alloy_arg a3[2] = {tr_input(&t, ALLOY_F32, s1123, 4, mat23), tr_ints(l3, 6, p3)};
  if (tr_run(&t, "aten.replication_pad3d.default", a3, 2)) {
    CHECK(tr_shape_is(&t.out[0], 4, (int64_t[]){1, 2, 2, 4}));
    CHECK(floats_are(&t.out[0], (float[]){0, 1, 2, 2, 3, 4, 5, 5, 0, 1, 2, 2, 3, 4, 5, 5}, 16, 0));
  }
  tr_close(&t);
}

TEST(ref_shape_flatten_reshape_copy) {
  tr_case t;
  REQUIRE(tr_open(&t));
  alloy_arg args[3] = {tr_input(&t, ALLOY_F32, shape23, 2, mat23), alloy_arg_int(0), alloy_arg_int(-1)};
  if (tr_run(&t, "aten.flatten.using_ints", args, 3)) {
    CHECK(tr_shape_is(&t.out[0], 1, (int64_t[]){6}));
    CHECK(floats_are(&t.out[0], mat23, 6, 0));
  }
  tr_close(&t);
  /* copy(self [2, 3] int64, src [3] f32 = [1.5, -2.5, 3]): broadcast, and
   * truncated to int64 */
  REQUIRE(tr_open(&t));
  int64_t self[6] = {0};
  float src[3] = {1.5f, -2.5f, 3};
  int64_t s3[1] = {3};
  alloy_arg c[2] = {tr_input(&t, ALLOY_I64, shape23, 2, self), tr_input(&t, ALLOY_F32, s3, 1, src)};
  if (tr_run(&t, "aten.copy.default", c, 2)) CHECK(tr_longs_are(&t.out[0], (int64_t[]){1, -2, 3, 1, -2, 3}, 6));
  tr_close(&t);
}

/* aten._fft_r2c of [1, 2, 3, 4] over dim 0, onesided, normalized by 1/n:
 * the DFT is [10, -2+2i, -2], so [2.5, -0.5+0.5i, -0.5]; and _fft_c2r of
 * the unnormalized half spectrum, normalized by 1/n, gives the signal back. */
TEST(ref_shape_aten_fft_normalization) {
  tr_case t;
  if (!tr_open(&t)) return;
  float x[4] = {1, 2, 3, 4};
  alloy_arg dims[1];
  int64_t d0[1] = {0};
  alloy_arg args[4] = {tr_input1(&t, ALLOY_F32, 4, x), tr_ints(dims, 1, d0), alloy_arg_int(2),
                       alloy_arg_bool(true)};
  if (tr_run(&t, "aten._fft_r2c.default", args, 4)) {
    CHECK_INT(t.out[0].dtype, ALLOY_C64);
    CHECK(tr_shape_is(&t.out[0], 1, (int64_t[]){3}));
    const float *z = t.out[0].data;
    const float want[6] = {2.5f, 0, -0.5f, 0.5f, -0.5f, 0};
    for (int i = 0; i < 6; i++) CHECK(fabsf(z[i] - want[i]) < 1e-6f);
  }
  tr_close(&t);
  if (!tr_open(&t)) return;
  float spec[6] = {10, 0, -2, 2, -2, 0};
  alloy_arg cargs[4] = {tr_input1(&t, ALLOY_C64, 3, spec), tr_ints(dims, 1, d0), alloy_arg_int(2),
                        alloy_arg_int(4)};
  if (tr_run(&t, "aten._fft_c2r.default", cargs, 4)) {
    CHECK_INT(t.out[0].dtype, ALLOY_F32);
    const float *y = t.out[0].data;
    for (int i = 0; i < 4; i++) CHECK(fabsf(y[i] - x[i]) < 1e-5f);
  }
  tr_close(&t);
}
