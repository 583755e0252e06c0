/*
 * tests/test_dtype.c: dtype names and the exact float16 / bfloat16
 * conversions (round to nearest even; NaN, Inf, -0.0, subnormals).
 */
#include <float.h>
#include <math.h>

#include "alloy/dtype.h"
#include "harness.h"

static uint32_t bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

TEST(dtype_names_round_trip) {
  for (int t = 0; t < ALLOY_DTYPE_COUNT; t++) {
    alloy_dtype back;
    const char *n = alloy_dtype_name((alloy_dtype)t);
    CHECK(alloy_dtype_from_name(n, strlen(n), &back) && back == (alloy_dtype)t);
    n = alloy_dtype_short_name((alloy_dtype)t);
    CHECK(alloy_dtype_from_name(n, strlen(n), &back) && back == (alloy_dtype)t);
  }
  alloy_dtype t;
  CHECK(alloy_dtype_from_name("long", 4, &t) && t == ALLOY_I64);
  CHECK(alloy_dtype_from_name("BF16", 4, &t) && t == ALLOY_BF16);
  CHECK(!alloy_dtype_from_name("float7", 6, &t));
  CHECK_INT(alloy_dtype_size(ALLOY_BF16), 2);
  CHECK(alloy_dtype_is_float(ALLOY_F16) && !alloy_dtype_is_float(ALLOY_I8));
  CHECK(alloy_dtype_is_integer(ALLOY_U8) && !alloy_dtype_is_integer(ALLOY_BOOL));
}

TEST(f16_known_values) {
  CHECK_INT(alloy_f16_from_f32(1.0f), 0x3c00);
  CHECK_INT(alloy_f16_from_f32(-2.0f), 0xc000);
  CHECK_INT(alloy_f16_from_f32(65504.0f), 0x7bff);
  CHECK_INT(alloy_f16_from_f32(65520.0f), 0x7c00);    /* rounds up to Inf */
  CHECK_INT(alloy_f16_from_f32(65519.0f), 0x7bff);
  CHECK_INT(alloy_f16_from_f32(-0.0f), 0x8000);
  CHECK_INT(alloy_f16_from_f32(INFINITY), 0x7c00);
  CHECK_INT(alloy_f16_from_f32(-INFINITY), 0xfc00);
  CHECK((alloy_f16_from_f32(NAN) & 0x7c00) == 0x7c00 && (alloy_f16_from_f32(NAN) & 0x3ff));
  CHECK_INT(alloy_f16_from_f32(5.9604645e-08f), 0x0001); /* smallest subnormal */
  CHECK_INT(alloy_f16_from_f32(2.9802322e-08f), 0x0000); /* exactly half: ties to even */
  CHECK_INT(alloy_f16_from_f32(2.9802326e-08f), 0x0001); /* just above half */
  /* 1 + 2^-11 is a tie between 1 and 1 + 2^-10: even wins */
  CHECK_INT(alloy_f16_from_f32(1.0f + 0x1p-11f), 0x3c00);
  CHECK_INT(alloy_f16_from_f32(1.0f + 3 * 0x1p-11f), 0x3c02);
  CHECK(alloy_f32_from_f16(0x3555) == 0.333251953125f);
  CHECK(bits(alloy_f32_from_f16(0x8000)) == 0x80000000u);
  CHECK(alloy_f32_from_f16(0x0001) == 0x1p-24f);
  CHECK(isnan(alloy_f32_from_f16(0x7e00)));
}

TEST(f16_every_value_round_trips) {
  for (uint32_t h = 0; h < 0x10000; h++) {
    float f = alloy_f32_from_f16((uint16_t)h);
    uint16_t back = alloy_f16_from_f32(f);
    if (isnan(f)) CHECK((back & 0x7c00) == 0x7c00 && (back & 0x3ff));
    else if (back != h) {
      harness_fail(__FILE__, __LINE__, "f16 0x%04x -> %g -> 0x%04x", h, f, back);
      return;
    }
  }
}

TEST(bf16_known_values) {
  CHECK_INT(alloy_bf16_from_f32(1.0f), 0x3f80);
  CHECK_INT(alloy_bf16_from_f32(-0.0f), 0x8000);
  CHECK_INT(alloy_bf16_from_f32(INFINITY), 0x7f80);
  CHECK_INT(alloy_bf16_from_f32(1.0f + 0x1p-8f), 0x3f80);     /* tie -> even */
  CHECK_INT(alloy_bf16_from_f32(1.0f + 3 * 0x1p-8f), 0x3f82); /* tie -> even (up) */
  CHECK_INT(alloy_bf16_from_f32(3.4028235e38f), 0x7f80);      /* max float rounds to Inf */
  uint16_t nan = alloy_bf16_from_f32(-NAN);
  CHECK((nan & 0x7f80) == 0x7f80 && (nan & 0x7f) && (nan & 0x8000));
  for (uint32_t b = 0; b < 0x10000; b++) {
    float f = alloy_f32_from_bf16((uint16_t)b);
    if (!isnan(f) && alloy_bf16_from_f32(f) != b) {
      harness_fail(__FILE__, __LINE__, "bf16 0x%04x does not round trip", b);
      return;
    }
  }
}

/* The limits are the formats' own: the largest finite half and bfloat16
 * round-trip through their conversions, and one ulp more overflows. */
TEST(dtype_limits) {
  double lo = 0, hi = 0;
  CHECK(alloy_dtype_limits(ALLOY_U8, &lo, &hi) && lo == 0 && hi == 255);
  CHECK(alloy_dtype_limits(ALLOY_I32, &lo, &hi) && lo == -2147483648.0 && hi == 2147483647.0);
  CHECK(alloy_dtype_limits(ALLOY_F16, &lo, &hi) && lo == -hi);
  CHECK(alloy_f32_from_f16(alloy_f16_from_f32((float)hi)) == (float)hi);
  CHECK(isinf(alloy_f32_from_f16(alloy_f16_from_f32((float)hi * 1.001f))));
  CHECK(alloy_dtype_limits(ALLOY_BF16, &lo, &hi));
  CHECK(alloy_f32_from_bf16(alloy_bf16_from_f32((float)hi)) == (float)hi);
  CHECK(alloy_dtype_limits(ALLOY_F32, &lo, &hi) && hi == FLT_MAX);
  CHECK(alloy_dtype_limits(ALLOY_F64, &lo, &hi) && hi == DBL_MAX && lo == -DBL_MAX);
  lo = hi = 7;
  CHECK(!alloy_dtype_limits(ALLOY_BOOL, &lo, &hi) && lo == 7 && hi == 7);
  CHECK(!alloy_dtype_limits(ALLOY_C64, &lo, &hi));
}
