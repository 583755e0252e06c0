/*
 * ir/dtype.c: the element-type table and exact float16 / bfloat16
 * conversions (see alloy/dtype.h). Names, sizes and kinds are one table so
 * that adding a type is adding a row.
 */
#include "alloy/dtype.h"

#include <string.h>

typedef struct {
  const char *name, *short_name, *safetensors;
  size_t size;
  char kind; /* 'b' bool, 'u'/'i' integer, 'f' float, 'c' complex */
} dtype_info;

static const dtype_info dtype_table[ALLOY_DTYPE_COUNT] = {
    [ALLOY_BOOL] = {"bool", "bool", "BOOL", 1, 'b'},
    [ALLOY_U8] = {"uint8", "u8", "U8", 1, 'u'},
    [ALLOY_I8] = {"int8", "i8", "I8", 1, 'i'},
    [ALLOY_I16] = {"int16", "i16", "I16", 2, 'i'},
    [ALLOY_I32] = {"int32", "i32", "I32", 4, 'i'},
    [ALLOY_I64] = {"int64", "i64", "I64", 8, 'i'},
    [ALLOY_F16] = {"float16", "f16", "F16", 2, 'f'},
    [ALLOY_BF16] = {"bfloat16", "bf16", "BF16", 2, 'f'},
    [ALLOY_F32] = {"float32", "f32", "F32", 4, 'f'},
    [ALLOY_F64] = {"float64", "f64", "F64", 8, 'f'},
    [ALLOY_C64] = {"complex64", "c64", "C64", 8, 'c'},
    [ALLOY_C128] = {"complex128", "c128", "C128", 16, 'c'},
};

/* PyTorch's other spellings of the same types. */
static const struct {
  const char *alias;
  alloy_dtype t;
} dtype_aliases[] = {
    {"float", ALLOY_F32},   {"double", ALLOY_F64},  {"half", ALLOY_F16},
    {"long", ALLOY_I64},    {"int", ALLOY_I32},     {"short", ALLOY_I16},
    {"byte", ALLOY_U8},     {"char", ALLOY_I8},     {"cfloat", ALLOY_C64},
    {"cdouble", ALLOY_C128},
};

static bool valid(alloy_dtype t) { return (unsigned)t < ALLOY_DTYPE_COUNT; }

const char *alloy_dtype_name(alloy_dtype t) {
  return valid(t) ? dtype_table[t].name : "invalid";
}
const char *alloy_dtype_short_name(alloy_dtype t) {
  return valid(t) ? dtype_table[t].short_name : "invalid";
}
size_t alloy_dtype_size(alloy_dtype t) {
  return valid(t) ? dtype_table[t].size : 0;
}
bool alloy_dtype_is_float(alloy_dtype t) {
  return valid(t) && dtype_table[t].kind == 'f';
}
bool alloy_dtype_is_integer(alloy_dtype t) {
  return valid(t) && (dtype_table[t].kind == 'i' || dtype_table[t].kind == 'u');
}
bool alloy_dtype_is_complex(alloy_dtype t) {
  return valid(t) && dtype_table[t].kind == 'c';
}

bool alloy_dtype_limits(alloy_dtype t, double *lowest, double *highest) {
  static const struct {
    alloy_dtype t;
    double lo, hi;
  } limits[] = {
      {ALLOY_U8, 0, 255},
      {ALLOY_I8, -128, 127},
      {ALLOY_I16, -32768, 32767},
      {ALLOY_I32, -2147483648.0, 2147483647.0},
      {ALLOY_I64, -9223372036854775808.0, 9223372036854775807.0},
      {ALLOY_F16, -65504, 65504},
      {ALLOY_BF16, -3.3895313892515355e38, 3.3895313892515355e38},
      {ALLOY_F32, -3.4028234663852886e38, 3.4028234663852886e38},
      {ALLOY_F64, -1.7976931348623157e308, 1.7976931348623157e308},
  };
  for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++)
    if (limits[i].t == t) {
      *lowest = limits[i].lo, *highest = limits[i].hi;
      return true;
    }
  return false;
}

static bool name_is(const char *name, size_t len, const char *candidate) {
  return strlen(candidate) == len && memcmp(name, candidate, len) == 0;
}

bool alloy_dtype_from_name(const char *name, size_t len, alloy_dtype *out) {
  for (int t = 0; t < ALLOY_DTYPE_COUNT; t++) {
    const dtype_info *d = &dtype_table[t];
    if (name_is(name, len, d->name) || name_is(name, len, d->short_name) ||
        name_is(name, len, d->safetensors)) {
      *out = (alloy_dtype)t;
      return true;
    }
  }
  for (size_t i = 0; i < sizeof dtype_aliases / sizeof dtype_aliases[0]; i++)
    if (name_is(name, len, dtype_aliases[i].alias)) {
      *out = dtype_aliases[i].t;
      return true;
    }
  return false;
}

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
static float f32_from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

uint16_t alloy_f16_from_f32(float f) {
  uint32_t x = f32_bits(f);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  uint32_t exp = (x >> 23) & 0xffu, mant = x & 0x7fffffu;
  if (exp == 0xff) /* Inf stays Inf; NaN stays a quiet NaN with its sign */
    return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u | (mant >> 13) : 0));
  int32_t e = (int32_t)exp - 127 + 15;
  if (e >= 0x1f) return (uint16_t)(sign | 0x7c00u); /* overflow */
  if (e <= 0) {
    /* Subnormal or zero in half: shift the full significand (with its
     * implicit bit) right, rounding to nearest even on the bits shifted out. */
    if (e < -10) return sign; /* below half the smallest subnormal */
    uint32_t m = mant | 0x800000u;
    uint32_t shift = (uint32_t)(14 - e);
    uint32_t half = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) half++;
    return (uint16_t)(sign | half);
  }
  uint32_t h = ((uint32_t)e << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  /* A carry out of the mantissa correctly bumps the exponent, up to Inf. */
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;
  return (uint16_t)(sign | h);
}

float alloy_f32_from_f16(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1f) return f32_from_bits(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    if (mant == 0) return f32_from_bits(sign);
    /* Normalise the subnormal: exact in float32. */
    int e = -1;
    do {
      e++;
      mant <<= 1;
    } while (!(mant & 0x400u));
    return f32_from_bits(sign | ((uint32_t)(127 - 15 - e) << 23) |
                         ((mant & 0x3ffu) << 13));
  }
  return f32_from_bits(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

uint16_t alloy_bf16_from_f32(float f) {
  uint32_t x = f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) /* NaN: keep sign, force quiet */
    return (uint16_t)((x >> 16) | 0x40u);
  uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb; /* round to nearest even; overflow rounds to Inf */
  return (uint16_t)(x >> 16);
}

float alloy_f32_from_bf16(uint16_t b) {
  return f32_from_bits((uint32_t)b << 16);
}
