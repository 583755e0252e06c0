/*
 * tests/test_ref_index.c: the reference backend's indexing and factory
 * kernels where the golden corpus has no cases: the prims (iota, full,
 * full_like, scalar_tensor, empty*, normal), the random ops (by their
 * moments and invariants), the Philox4x32-10 generator (Random123's
 * known answers), and a few hand-checked indexing rules (non-adjacent
 * advanced indices around a None, negative indices, an out-of-range index
 * failing the run), isin's sorted search (NaN, -0.0, invert, and against
 * an all-against-all scan), and the LU pivots lu_unpack and linalg_lu_solve
 * refuse (out of [1, m], or shaped unlike lu_factor's). Each case is a
 * one-node graph run through the runtime on the "ref" backend, compared
 * with values worked out by hand.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "testref.h"

/* kernels_factory.c's generator, for the known-answer check. */
void ref_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

static alloy_arg device_cpu(void) {
  alloy_arg a = {ALLOY_ARG_DEVICE, {0}};
  a.u.device = (alloy_device){ALLOY_DEVICE_CPU, -1};
  return a;
}

/* Sample mean and standard deviation of a float output. */
static void moments(const alloy_host_tensor *t, double *mean, double *sd) {
  int64_t n = tr_numel(t);
  double s = 0, s2 = 0;
  for (int64_t i = 0; i < n; i++) {
    double x = t->dtype == ALLOY_F64 ? ((const double *)t->data)[i] : ((const float *)t->data)[i];
    s += x;
    s2 += x * x;
  }
  *mean = s / (double)n;
  *sd = sqrt(s2 / (double)n - *mean * *mean);
}

/* Random123's known answers for philox4x32-10. */
TEST(ref_philox_known_answers) {
  static const uint32_t ctr[3][4] = {{0, 0, 0, 0},
                                     {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
                                     {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}};
  static const uint32_t key[3][2] = {{0, 0}, {0xffffffffu, 0xffffffffu}, {0xa4093822u, 0x299f31d0u}};
  static const uint32_t want[3][4] = {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u},
                                      {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu},
                                      {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}};
  for (int k = 0; k < 3; k++) {
    uint32_t out[4];
    ref_philox4x32_10(ctr[k], key[k], out);
    for (int i = 0; i < 4; i++) CHECK_INT(out[i], want[k][i]);
  }
}

TEST(ref_prims_iota) {
  tr_case c;
  tr_open(&c);
  alloy_arg args[1] = {alloy_arg_int(5)};
  const char *kw[5] = {"start", "step", "dtype", "device", "requires_grad"};
  alloy_arg kwa[5] = {alloy_arg_int(3), alloy_arg_int(-2), alloy_arg_dtype(ALLOY_I64), device_cpu(),
                      alloy_arg_bool(false)};
  if (tr_run_kw(&c, "prims.iota.default", args, 1, kw, kwa, 5)) {
    const int64_t *v = c.out[0].data;
    static const int64_t want[5] = {3, 1, -1, -3, -5};
    CHECK_INT(c.out[0].dtype, ALLOY_I64);
    CHECK_INT(tr_numel(&c.out[0]), 5);
    for (int i = 0; i < 5; i++) CHECK_INT(v[i], want[i]);
  }
  tr_close(&c);
}

TEST(ref_prims_full_and_scalar_tensor) {
  tr_case c;
  tr_open(&c);
  alloy_arg dims[2] = {alloy_arg_int(2), alloy_arg_int(3)};
  alloy_arg args[2] = {alloy_arg_list(dims, 2), alloy_arg_float(2.5)};
  const char *kw[3] = {"dtype", "device", "requires_grad"};
  alloy_arg kwa[3] = {alloy_arg_dtype(ALLOY_F32), device_cpu(), alloy_arg_bool(false)};
  if (tr_run_kw(&c, "prims.full.default", args, 2, kw, kwa, 3)) {
    CHECK_INT(tr_numel(&c.out[0]), 6);
    for (int i = 0; i < 6; i++) CHECK(((const float *)c.out[0].data)[i] == 2.5f);
  }
  tr_close(&c);

  /* full_like of a float tensor, as int32: 7.9 truncates to 7 */
  tr_open(&c);
  int64_t s[1] = {4};
  float x[4] = {1, 2, 3, 4};
  alloy_value *a = tr_input_value(&c, ALLOY_F32, s, 1, x);
  alloy_arg largs[2] = {alloy_arg_value(a), alloy_arg_float(7.9)};
  alloy_arg lkwa[3] = {alloy_arg_dtype(ALLOY_I32), device_cpu(), alloy_arg_bool(false)};
  if (tr_run_kw(&c, "prims.full_like.default", largs, 2, kw, lkwa, 3)) {
    CHECK_INT(c.out[0].dtype, ALLOY_I32);
    for (int i = 0; i < 4; i++) CHECK_INT(((const int32_t *)c.out[0].data)[i], 7);
  }
  tr_close(&c);

  tr_open(&c);
  alloy_arg sargs[1] = {alloy_arg_float(-3.25)};
  const char *skw[1] = {"dtype"};
  alloy_arg skwa[1] = {alloy_arg_dtype(ALLOY_F64)};
  if (tr_run_kw(&c, "prims.scalar_tensor.default", sargs, 1, skw, skwa, 1)) {
    CHECK_INT(c.out[0].rank, 0);
    CHECK(((const double *)c.out[0].data)[0] == -3.25);
  }
  tr_close(&c);
}

/* The empties are zero-filled, so that runs are reproducible. */
TEST(ref_prims_empty_are_zero) {
  static const char *const ops[3] = {"prims.empty.default", "prims.empty_strided.default",
                                     "prims.empty_permuted.default"};
  for (int k = 0; k < 3; k++) {
    tr_case c;
    tr_open(&c);
    alloy_arg dims[2] = {alloy_arg_int(3), alloy_arg_int(2)};
    alloy_arg second[2] = {alloy_arg_int(k == 2 ? 1 : 2), alloy_arg_int(k == 2 ? 0 : 1)};
    alloy_arg args[2] = {alloy_arg_list(dims, 2), alloy_arg_list(second, 2)};
    const char *kw[3] = {"dtype", "device", "requires_grad"};
    alloy_arg kwa[3] = {alloy_arg_dtype(ALLOY_F32), device_cpu(), alloy_arg_bool(false)};
    if (tr_run_kw(&c, ops[k], args, k == 0 ? 1 : 2, kw, kwa, 3)) {
      CHECK_INT(tr_numel(&c.out[0]), 6);
      for (int i = 0; i < 6; i++) CHECK(((const float *)c.out[0].data)[i] == 0.0f);
    }
    tr_close(&c);
  }
}

TEST(ref_prims_normal_moments) {
  tr_case c;
  tr_open(&c);
  alloy_arg dims[1] = {alloy_arg_int(8192)};
  alloy_arg args[1] = {alloy_arg_list(dims, 1)};
  const char *kw[5] = {"mean", "std", "dtype", "device", "requires_grad"};
  alloy_arg kwa[5] = {alloy_arg_float(2.0), alloy_arg_float(3.0), alloy_arg_dtype(ALLOY_F64),
                      device_cpu(), alloy_arg_bool(false)};
  if (tr_run_kw(&c, "prims.normal.default", args, 1, kw, kwa, 5)) {
    double mean, sd;
    moments(&c.out[0], &mean, &sd);
    /* 8192 samples: the standard error of the mean is 3/90.5 = 0.033 */
    CHECK(fabs(mean - 2.0) < 0.15);
    CHECK(fabs(sd - 3.0) < 0.15);
  }
  tr_close(&c);
}

TEST(ref_rand_randn_randperm) {
  tr_case c;
  tr_open(&c);
  alloy_arg dims[1] = {alloy_arg_int(8192)};
  alloy_arg args[1] = {alloy_arg_list(dims, 1)};
  if (tr_run_kw(&c, "aten.rand.default", args, 1, NULL, NULL, 0)) {
    const float *v = c.out[0].data;
    bool in_range = true;
    for (int i = 0; i < 8192; i++) in_range &= v[i] >= 0.0f && v[i] < 1.0f;
    CHECK(in_range);
    double mean, sd;
    moments(&c.out[0], &mean, &sd);
    CHECK(fabs(mean - 0.5) < 0.02);
    CHECK(fabs(sd - sqrt(1.0 / 12)) < 0.02);
  }
  tr_close(&c);

  tr_open(&c);
  if (tr_run_kw(&c, "aten.randn.default", args, 1, NULL, NULL, 0)) {
    double mean, sd;
    moments(&c.out[0], &mean, &sd);
    CHECK(fabs(mean) < 0.05);
    CHECK(fabs(sd - 1.0) < 0.05);
  }
  tr_close(&c);

  tr_open(&c);
  alloy_arg pargs[1] = {alloy_arg_int(50)};
  if (tr_run_kw(&c, "aten.randperm.default", pargs, 1, NULL, NULL, 0)) {
    const int64_t *v = c.out[0].data;
    bool seen[50] = {false}, ok = true;
    for (int i = 0; i < 50; i++) {
      ok &= v[i] >= 0 && v[i] < 50 && !seen[v[i] < 0 || v[i] >= 50 ? 0 : v[i]];
      if (v[i] >= 0 && v[i] < 50) seen[v[i]] = true;
    }
    CHECK(ok);
  }
  tr_close(&c);
}

/* native_dropout(ones, 0.25, train): the kept fraction is about 0.75,
 * each kept element is 1/0.75, the mask says which. */
TEST(ref_native_dropout) {
  tr_case c;
  tr_open(&c);
  static float x[4096];
  for (int i = 0; i < 4096; i++) x[i] = 1.0f;
  int64_t s[1] = {4096};
  alloy_value *a = tr_input_value(&c, ALLOY_F32, s, 1, x);
  alloy_arg args[3] = {alloy_arg_value(a), alloy_arg_float(0.25), alloy_arg_bool(true)};
  if (tr_run_kw(&c, "aten.native_dropout.default", args, 3, NULL, NULL, 0)) {
    const float *y = c.out[0].data;
    const uint8_t *m = c.out[1].data;
    int kept = 0;
    bool agree = true;
    for (int i = 0; i < 4096; i++) {
      kept += m[i];
      agree &= m[i] ? fabsf(y[i] - 1.0f / 0.75f) < 1e-6f : y[i] == 0.0f;
    }
    CHECK(agree);
    CHECK(kept > 2900 && kept < 3250); /* 3072 +- 5 sigma */
  }
  tr_close(&c);

  /* out of training: the input passes and the mask is all true */
  tr_open(&c);
  a = tr_input_value(&c, ALLOY_F32, s, 1, x);
  alloy_arg eargs[3] = {alloy_arg_value(a), alloy_arg_float(0.25), alloy_arg_bool(false)};
  if (tr_run_kw(&c, "aten.native_dropout.default", eargs, 3, NULL, NULL, 0)) {
    bool same = true;
    for (int i = 0; i < 4096; i++)
      same &= ((const float *)c.out[0].data)[i] == 1.0f && ((const uint8_t *)c.out[1].data)[i] == 1;
    CHECK(same);
  }
  tr_close(&c);
}

/* x = arange(24).view(2, 3, 4); x[[1, 0], :, [3, -3]]: the indexed dims
 * are not adjacent, so the broadcast index dim comes first: r[k, j] =
 * x[i0[k], j, i2[k]] = 12 * i0 + 4 * j + i2 (with -3 wrapping to 1). */
TEST(ref_index_non_adjacent_with_none) {
  tr_case c;
  tr_open(&c);
  static float x[24];
  for (int i = 0; i < 24; i++) x[i] = (float)i;
  int64_t xs[3] = {2, 3, 4}, is[1] = {2};
  int64_t i0[2] = {1, 0}, i2[2] = {3, -3};
  alloy_value *vx = tr_input_value(&c, ALLOY_F32, xs, 3, x);
  alloy_value *v0 = tr_input_value(&c, ALLOY_I64, is, 1, i0), *v2 = tr_input_value(&c, ALLOY_I64, is, 1, i2);
  alloy_arg items[3] = {alloy_arg_value(v0), alloy_arg_none(), alloy_arg_value(v2)};
  alloy_arg args[2] = {alloy_arg_value(vx), alloy_arg_list(items, 3)};
  if (tr_run_kw(&c, "aten.index.Tensor", args, 2, NULL, NULL, 0)) {
    static const float want[6] = {15, 19, 23, 1, 5, 9};
    REQUIRE(c.out[0].rank == 2);
    CHECK_INT(c.out[0].sizes[0], 2);
    CHECK_INT(c.out[0].sizes[1], 3);
    for (int i = 0; i < 6; i++) CHECK(((const float *)c.out[0].data)[i] == want[i]);
  }
  tr_close(&c);
}

/* index_put(zeros(3, 3), [[0, 0, -1], [1, 1, 2]], [1, 2, 4], accumulate):
 * the repeated (0, 1) gets 1 + 2, (2, 2) gets 4. */
TEST(ref_index_put_accumulate_repeats) {
  tr_case c;
  tr_open(&c);
  float z[9] = {0};
  float vals[3] = {1, 2, 4};
  int64_t zs[2] = {3, 3}, is[1] = {3};
  int64_t r[3] = {0, 0, -1}, k[3] = {1, 1, 2};
  alloy_value *vz = tr_input_value(&c, ALLOY_F32, zs, 2, z);
  alloy_value *vr = tr_input_value(&c, ALLOY_I64, is, 1, r), *vk = tr_input_value(&c, ALLOY_I64, is, 1, k);
  alloy_value *vv = tr_input_value(&c, ALLOY_F32, is, 1, vals);
  alloy_arg items[2] = {alloy_arg_value(vr), alloy_arg_value(vk)};
  alloy_arg args[4] = {alloy_arg_value(vz), alloy_arg_list(items, 2), alloy_arg_value(vv),
                       alloy_arg_bool(true)};
  if (tr_run_kw(&c, "aten.index_put.default", args, 4, NULL, NULL, 0)) {
    static const float want[9] = {0, 3, 0, 0, 0, 0, 0, 0, 4};
    for (int i = 0; i < 9; i++) CHECK(((const float *)c.out[0].data)[i] == want[i]);
  }
  tr_close(&c);
}

/* gather with an index past the end fails the run instead of reading. */
TEST(ref_gather_out_of_range_fails) {
  tr_case c;
  tr_open(&c);
  float x[3] = {1, 2, 3};
  int64_t s[1] = {3}, is[1] = {2};
  int64_t ix[2] = {0, 3};
  alloy_value *vx = tr_input_value(&c, ALLOY_F32, s, 1, x), *vi = tr_input_value(&c, ALLOY_I64, is, 1, ix);
  alloy_arg args[3] = {alloy_arg_value(vx), alloy_arg_int(0), alloy_arg_value(vi)};
  tr_run_fails(&c, "aten.gather.default", args, 3, NULL, NULL, 0);
  tr_close(&c);
}

/* scatter_reduce(amax, include_self=False) over [5, 1, 7] at [0, 0, 2]:
 * place 0 gets max(5, 1), place 1 keeps self, place 2 gets 7 alone. */
TEST(ref_scatter_reduce_amax_without_self) {
  tr_case c;
  tr_open(&c);
  int64_t self[3] = {-9, 42, -9}, src[3] = {5, 1, 7}, ix[3] = {0, 0, 2}, s[1] = {3};
  alloy_value *a = tr_input_value(&c, ALLOY_I64, s, 1, self), *i = tr_input_value(&c, ALLOY_I64, s, 1, ix),
              *b = tr_input_value(&c, ALLOY_I64, s, 1, src);
  alloy_arg args[5] = {alloy_arg_value(a), alloy_arg_int(0), alloy_arg_value(i), alloy_arg_value(b),
                       alloy_arg_str("amax")};
  const char *kw[1] = {"include_self"};
  alloy_arg kwa[1] = {alloy_arg_bool(false)};
  if (tr_run_kw(&c, "aten.scatter_reduce.two", args, 5, kw, kwa, 1)) {
    const int64_t *v = c.out[0].data;
    CHECK_INT(v[0], 5);
    CHECK_INT(v[1], 42);
    CHECK_INT(v[2], 7);
  }
  tr_close(&c);
}

/* x[mask]: a bool mask indexes by its nonzero places, so the result's
 * length depends on the data (the kernel allocates it). */
TEST(ref_index_bool_mask) {
  tr_case c;
  tr_open(&c);
  float x[4] = {1, 2, 3, 4};
  uint8_t m[4] = {1, 0, 1, 1};
  int64_t s[1] = {4};
  alloy_value *vx = tr_input_value(&c, ALLOY_F32, s, 1, x), *vm = tr_input_value(&c, ALLOY_BOOL, s, 1, m);
  alloy_arg items[1] = {alloy_arg_value(vm)};
  alloy_arg args[2] = {alloy_arg_value(vx), alloy_arg_list(items, 1)};
  if (tr_run_kw(&c, "aten.index.Tensor", args, 2, NULL, NULL, 0)) {
    REQUIRE(c.out[0].rank == 1);
    CHECK_INT(c.out[0].sizes[0], 3);
    static const float want[3] = {1, 3, 4};
    for (int i = 0; i < 3; i++) CHECK(((const float *)c.out[0].data)[i] == want[i]);
  }
  tr_close(&c);
}

/* isin(elements, test_elements, invert) on a float32 row against float64
 * test elements: NaN is in nothing (not even a NaN), -0.0 is 0.0, and
 * invert negates every answer, NaN's included (as PyTorch's isin). */
TEST(ref_isin_nan_signed_zero_invert) {
  static const float x[8] = {NAN, -0.0f, 0.0f, 1.5f, 2.0f, -INFINITY, INFINITY, 3.0f};
  static const double tv[5] = {0.0, NAN, 2.0, INFINITY, 1.5};
  static const uint8_t want[8] = {0, 1, 1, 1, 1, 0, 1, 0};
  for (int inv = 0; inv < 2; inv++) {
    tr_case c;
    tr_open(&c);
    alloy_arg args[2] = {tr_input1(&c, ALLOY_F32, 8, (void *)x), tr_input1(&c, ALLOY_F64, 5, (void *)tv)};
    const char *kw[1] = {"invert"};
    alloy_arg kwa[1] = {alloy_arg_bool(inv)};
    if (tr_run_kw(&c, "aten.isin.Tensor_Tensor", args, 2, kw, kwa, 1)) {
      CHECK_INT(c.out[0].dtype, ALLOY_BOOL);
      for (int i = 0; i < 8; i++) CHECK_INT(((const uint8_t *)c.out[0].data)[i], want[i] != inv);
    }
    tr_close(&c);
  }
}

/* Integers compare exactly across widths (int64 extremes against int32
 * test elements), and an integer against float test elements compares
 * the values (2 is in {2.0}); no test elements: nothing is in. */
TEST(ref_isin_integers_and_mixed) {
  tr_case c;
  tr_open(&c);
  int64_t x[5] = {INT64_MIN, -1, 0, 5, INT64_MAX};
  int32_t tv[3] = {5, -1, INT32_MIN};
  alloy_arg args[2] = {tr_input1(&c, ALLOY_I64, 5, x), tr_input1(&c, ALLOY_I32, 3, tv)};
  if (tr_run(&c, "aten.isin.Tensor_Tensor", args, 2)) {
    static const uint8_t want[5] = {0, 1, 0, 1, 0};
    for (int i = 0; i < 5; i++) CHECK_INT(((const uint8_t *)c.out[0].data)[i], want[i]);
  }
  tr_close(&c);

  tr_open(&c);
  int64_t y[4] = {0, 1, 2, 3};
  double fv[3] = {2.0, 0.5, -0.0};
  alloy_arg margs[2] = {tr_input1(&c, ALLOY_I64, 4, y), tr_input1(&c, ALLOY_F64, 3, fv)};
  if (tr_run(&c, "aten.isin.Tensor_Tensor", margs, 2)) {
    static const uint8_t want[4] = {1, 0, 1, 0};
    for (int i = 0; i < 4; i++) CHECK_INT(((const uint8_t *)c.out[0].data)[i], want[i]);
  }
  tr_close(&c);

  tr_open(&c);
  int64_t none = 0;
  alloy_arg eargs[2] = {tr_input1(&c, ALLOY_I64, 4, y), tr_input1(&c, ALLOY_I64, 0, &none)};
  if (tr_run(&c, "aten.isin.Tensor_Tensor", eargs, 2))
    for (int i = 0; i < 4; i++) CHECK_INT(((const uint8_t *)c.out[0].data)[i], 0);
  tr_close(&c);
}

/* The sorted search gives what comparing with every test element gives,
 * on values with many repeats, NaNs and both zeros. */
TEST(ref_isin_matches_all_against_all) {
  enum { N = 3000, M = 2000 };
  static double x[N], tv[M];
  static uint8_t want[N];
  tr_fill(x, N, 7);
  tr_fill(tv, M, 11);
  for (int i = 0; i < N; i++) x[i] = i % 13 == 0 ? NAN : i % 17 == 0 ? -0.0 : floor(x[i] * 2000) / 4;
  for (int j = 0; j < M; j++) tv[j] = j % 11 == 0 ? NAN : j % 19 == 0 ? 0.0 : floor(tv[j] * 2000) / 4;
  for (int i = 0; i < N; i++) {
    want[i] = 0;
    for (int j = 0; j < M && !want[i]; j++) want[i] = x[i] == tv[j];
  }
  tr_case c;
  tr_open(&c);
  alloy_arg args[2] = {tr_input1(&c, ALLOY_F64, N, x), tr_input1(&c, ALLOY_F64, M, tv)};
  if (tr_run(&c, "aten.isin.Tensor_Tensor", args, 2)) {
    int bad = 0, found = 0;
    for (int i = 0; i < N; i++) {
      bad += ((const uint8_t *)c.out[0].data)[i] != want[i];
      found += want[i];
    }
    CHECK_INT(bad, 0);
    CHECK(found > N / 10 && found < N - N / 10); /* the case tests both answers */
  }
  tr_close(&c);
}

/* lu_unpack of an integer LU (PyTorch accepts any dtype there: it only
 * copies triangles and writes 0/1) with pivots (2, 2): P swaps the rows. */
TEST(ref_lu_unpack_int_data) {
  tr_case c;
  tr_open(&c);
  int32_t lu[4] = {1, 2, 3, 4}, piv[2] = {2, 2};
  int64_t s[2] = {2, 2};
  alloy_arg args[2] = {tr_input(&c, ALLOY_I32, s, 2, lu), tr_input1(&c, ALLOY_I32, 2, piv)};
  if (tr_run(&c, "aten.lu_unpack.default", args, 2)) {
    static const int32_t P[4] = {0, 1, 1, 0}, L[4] = {1, 0, 3, 1}, U[4] = {1, 2, 0, 4};
    for (int k = 0; k < 3; k++) {
      CHECK_INT(c.out[k].dtype, ALLOY_I32);
      tr_shape_is(&c.out[k], 2, s);
    }
    for (int i = 0; i < 4; i++) {
      CHECK_INT(((const int32_t *)c.out[0].data)[i], P[i]);
      CHECK_INT(((const int32_t *)c.out[1].data)[i], L[i]);
      CHECK_INT(((const int32_t *)c.out[2].data)[i], U[i]);
    }
  }
  tr_close(&c);
}

/* Pivots outside [1, m] fail the run (PyTorch's check) instead of swapping
 * outside the permutation; so do pivots with fewer entries than min(m, n)
 * or a batch that does not match LU's, which would be read out of bounds. */
TEST(ref_lu_unpack_bad_pivots_fail) {
  static const int32_t bad[5] = {0, -1, 4, INT32_MIN, INT32_MAX};
  double lu[9] = {4, 1, 2, 0.5, 3, 1, 0.25, 0.5, 2};
  int64_t s[2] = {3, 3};
  for (int k = 0; k < 5; k++) {
    tr_case c;
    tr_open(&c);
    int32_t piv[3] = {3, bad[k], 3};
    alloy_arg args[2] = {tr_input(&c, ALLOY_F64, s, 2, lu), tr_input1(&c, ALLOY_I32, 3, piv)};
    CHECK(tr_run_fails(&c, "aten.lu_unpack.default", args, 2, NULL, NULL, 0));
    tr_close(&c);
  }
  /* pivots of rank 0, too short, and a batch of 2 against LU's 3 */
  int32_t piv[6] = {1, 2, 3, 1, 2, 3};
  double blu[27] = {0};
  int64_t bs[3] = {3, 3, 3}, ps[3][2] = {{0, 0}, {2, 0}, {2, 3}};
  int prank[3] = {0, 1, 2};
  for (int k = 0; k < 3; k++) {
    tr_case c;
    tr_open(&c);
    alloy_arg args[2] = {k == 2 ? tr_input(&c, ALLOY_F64, bs, 3, blu) : tr_input(&c, ALLOY_F64, s, 2, lu),
                         tr_input(&c, ALLOY_I32, ps[k], prank[k], piv)};
    CHECK(tr_run_fails(&c, "aten.lu_unpack.default", args, 2, NULL, NULL, 0));
    tr_close(&c);
  }
  /* good pivots still unpack: (3, 3, 3) swaps rows 0 and 2, then 1 and 2 */
  tr_case c;
  tr_open(&c);
  int32_t good[3] = {3, 3, 3};
  alloy_arg args[2] = {tr_input(&c, ALLOY_F64, s, 2, lu), tr_input1(&c, ALLOY_I32, 3, good)};
  if (tr_run(&c, "aten.lu_unpack.default", args, 2)) {
    /* perm = (2, 0, 1): P[perm[i]][i] = 1 */
    static const double P[9] = {0, 1, 0, 0, 0, 1, 1, 0, 0};
    for (int i = 0; i < 9; i++) CHECK(((const double *)c.out[0].data)[i] == P[i]);
  }
  tr_close(&c);
}

/* linalg_lu_solve with pivots outside [1, n] fails the run rather than
 * swapping outside the permutation; good pivots solve: with LU of
 * A = P L U for P swapping rows 0 and 1, L = I, U = diag(2, 4), A x = b
 * for b = (8, 2) is x = (1, 2). */
TEST(ref_lu_solve_bad_pivots_fail) {
  static const int32_t bad[4] = {0, 3, INT32_MIN, INT32_MAX};
  double lu[4] = {2, 0, 0, 4}, b[2] = {8, 2};
  int64_t s[2] = {2, 2}, bs[2] = {2, 1};
  for (int k = 0; k < 5; k++) {
    tr_case c;
    tr_open(&c);
    int32_t piv[2] = {k < 4 ? bad[k] : 2, 2};
    alloy_arg args[3] = {tr_input(&c, ALLOY_F64, s, 2, lu), tr_input1(&c, ALLOY_I32, 2, piv),
                         tr_input(&c, ALLOY_F64, bs, 2, b)};
    if (k < 4) {
      CHECK(tr_run_fails(&c, "aten.linalg_lu_solve.default", args, 3, NULL, NULL, 0));
    } else if (tr_run(&c, "aten.linalg_lu_solve.default", args, 3)) {
      CHECK(((const double *)c.out[0].data)[0] == 1.0);
      CHECK(((const double *)c.out[0].data)[1] == 2.0);
    }
    tr_close(&c);
  }
}
