/*
 * alloy/dtype.h: element types and exact conversions for the reduced-precision
 * floats.
 *
 * The enum values are part of the ABI: they never change and new types are
 * only appended. Every function here is static inline (header-only), pure and
 * thread-safe: a plugin includes this through alloy/plugin.h and must be able
 * to call all of it without linking liballoy (DESIGN.md, plugin ABI rule 9),
 * and the host, the tools and the plugins all compile the same code from the
 * one table below. Adding a type is adding an enum value and a row.
 */
#ifndef ALLOY_DTYPE_H
#define ALLOY_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum alloy_dtype {
  ALLOY_BOOL = 0,
  ALLOY_U8 = 1,
  ALLOY_I8 = 2,
  ALLOY_I16 = 3,
  ALLOY_I32 = 4,
  ALLOY_I64 = 5,
  ALLOY_F16 = 6,
  ALLOY_BF16 = 7,
  ALLOY_F32 = 8,
  ALLOY_F64 = 9,
  ALLOY_C64 = 10,  /* reserved: complex<float>, not computed on yet  */
  ALLOY_C128 = 11, /* reserved: complex<double>, not computed on yet */
  ALLOY_DTYPE_COUNT
} alloy_dtype;

/* The element-type table, one X(...) per type: the enum value; the long name
 * as PyTorch spells it; the short name of the .air format; the safetensors
 * code; the size in bytes; the kind: 'b' bool, 'u' unsigned and 'i' signed
 * integer, 'f' float, 'c' complex. Rows may come in any order: the helpers
 * switch on the enum value. */
#define ALLOY_DTYPE_ROWS(X)                                \
  X(ALLOY_BOOL, "bool", "bool", "BOOL", 1, 'b')           \
  X(ALLOY_U8, "uint8", "u8", "U8", 1, 'u')                \
  X(ALLOY_I8, "int8", "i8", "I8", 1, 'i')                 \
  X(ALLOY_I16, "int16", "i16", "I16", 2, 'i')             \
  X(ALLOY_I32, "int32", "i32", "I32", 4, 'i')             \
  X(ALLOY_I64, "int64", "i64", "I64", 8, 'i')             \
  X(ALLOY_F16, "float16", "f16", "F16", 2, 'f')           \
  X(ALLOY_BF16, "bfloat16", "bf16", "BF16", 2, 'f')       \
  X(ALLOY_F32, "float32", "f32", "F32", 4, 'f')           \
  X(ALLOY_F64, "float64", "f64", "F64", 8, 'f')           \
  X(ALLOY_C64, "complex64", "c64", "C64", 8, 'c')         \
  X(ALLOY_C128, "complex128", "c128", "C128", 16, 'c')

/* PyTorch's other spellings of the same types, X(alias, enum value). */
#define ALLOY_DTYPE_ALIASES(X)                                                \
  X("float", ALLOY_F32) X("double", ALLOY_F64) X("half", ALLOY_F16)          \
  X("long", ALLOY_I64) X("int", ALLOY_I32) X("short", ALLOY_I16)             \
  X("byte", ALLOY_U8) X("char", ALLOY_I8) X("cfloat", ALLOY_C64)             \
  X("cdouble", ALLOY_C128)

/* One row of the table, as the helpers below read it. Header-only: it never
 * crosses the plugin boundary (each image has its own copy). */
typedef struct alloy_dtype_row {
  const char *name, *short_name, *safetensors;
  size_t size;
  char kind;
} alloy_dtype_row;

/* The row of t, or NULL for a value that is no type (ALLOY_DTYPE_COUNT, a
 * type newer than these headers). */
static inline const alloy_dtype_row *alloy_dtype_row_of(alloy_dtype t) {
  switch (t) {
#define ALLOY_DTYPE_ROW_CASE_(e, name, short_name, safetensors, size, kind) \
  case e: {                                                                 \
    static const alloy_dtype_row row = {name, short_name, safetensors, size, kind}; \
    return &row;                                                            \
  }
    ALLOY_DTYPE_ROWS(ALLOY_DTYPE_ROW_CASE_)
#undef ALLOY_DTYPE_ROW_CASE_
    default:
      return NULL;
  }
}

/* Long name as PyTorch spells it ("float32", "bfloat16", "bool"); "invalid"
 * for a value that is no type. */
static inline const char *alloy_dtype_name(alloy_dtype t) {
  const alloy_dtype_row *r = alloy_dtype_row_of(t);
  return r ? r->name : "invalid";
}
/* Short name used by the .air text format ("f32", "bf16", "bool"). */
static inline const char *alloy_dtype_short_name(alloy_dtype t) {
  const alloy_dtype_row *r = alloy_dtype_row_of(t);
  return r ? r->short_name : "invalid";
}
/* Bytes per element; 0 for a value that is no type. */
static inline size_t alloy_dtype_size(alloy_dtype t) {
  const alloy_dtype_row *r = alloy_dtype_row_of(t);
  return r ? r->size : 0;
}
static inline bool alloy_dtype_is_float(alloy_dtype t) { /* f16 bf16 f32 f64 */
  const alloy_dtype_row *r = alloy_dtype_row_of(t);
  return r && r->kind == 'f';
}
/* u8 i8 i16 i32 i64, not bool. */
static inline bool alloy_dtype_is_integer(alloy_dtype t) {
  const alloy_dtype_row *r = alloy_dtype_row_of(t);
  return r && (r->kind == 'i' || r->kind == 'u');
}
static inline bool alloy_dtype_is_complex(alloy_dtype t) {
  const alloy_dtype_row *r = alloy_dtype_row_of(t);
  return r && r->kind == 'c';
}

/* Whether name[0..len) is candidate, whole. */
static inline bool alloy_dtype_name_is_(const char *name, size_t len, const char *candidate) {
  return strlen(candidate) == len && memcmp(name, candidate, len) == 0;
}

/* Accepts the long name, the short name, PyTorch's aliases ("float", "long",
 * "half", "int", "double") and safetensors codes ("F32", "BOOL"). Returns
 * false, *out untouched, when the name is unknown. */
static inline bool alloy_dtype_from_name(const char *name, size_t len, alloy_dtype *out) {
#define ALLOY_DTYPE_NAME_TRY_(e, long_name, short_name, safetensors, size, kind)             \
  if (alloy_dtype_name_is_(name, len, long_name) || alloy_dtype_name_is_(name, len, short_name) || \
      alloy_dtype_name_is_(name, len, safetensors)) {                                         \
    *out = e;                                                                                 \
    return true;                                                                              \
  }
#define ALLOY_DTYPE_ALIAS_TRY_(alias, e)     \
  if (alloy_dtype_name_is_(name, len, alias)) { \
    *out = e;                                \
    return true;                             \
  }
  ALLOY_DTYPE_ROWS(ALLOY_DTYPE_NAME_TRY_)
  ALLOY_DTYPE_ALIASES(ALLOY_DTYPE_ALIAS_TRY_)
#undef ALLOY_DTYPE_NAME_TRY_
#undef ALLOY_DTYPE_ALIAS_TRY_
  return false;
}

/* The lowest and highest finite values of a real dtype, as doubles (int64's
 * are -2^63 and 2^63, the nearest doubles; float64's +-DBL_MAX). False, the
 * outputs untouched, for bool, complex and unknown dtypes. */
static inline bool alloy_dtype_limits(alloy_dtype t, double *lowest, double *highest) {
  double lo, hi;
  switch (t) {
    case ALLOY_U8: lo = 0, hi = 255; break;
    case ALLOY_I8: lo = -128, hi = 127; break;
    case ALLOY_I16: lo = -32768, hi = 32767; break;
    case ALLOY_I32: lo = -2147483648.0, hi = 2147483647.0; break;
    case ALLOY_I64: lo = -9223372036854775808.0, hi = 9223372036854775807.0; break;
    case ALLOY_F16: lo = -65504, hi = 65504; break;
    case ALLOY_BF16: lo = -3.3895313892515355e38, hi = 3.3895313892515355e38; break;
    case ALLOY_F32: lo = -3.4028234663852886e38, hi = 3.4028234663852886e38; break;
    case ALLOY_F64: lo = -1.7976931348623157e308, hi = 1.7976931348623157e308; break;
    default: return false;
  }
  *lowest = lo, *highest = hi;
  return true;
}

/* The bits of a float32 and back (memcpy: no aliasing question). */
static inline uint32_t alloy_f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
static inline float alloy_f32_from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* IEEE binary16 and bfloat16 conversions. Narrowing rounds to nearest, ties
 * to even; NaN stays NaN (quiet, sign kept), infinities and -0.0 are kept,
 * overflow gives infinity. Widening is exact. */
static inline uint16_t alloy_f16_from_f32(float f) {
  uint32_t x = alloy_f32_bits(f);
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

static inline float alloy_f32_from_f16(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1f) return alloy_f32_from_bits(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    if (mant == 0) return alloy_f32_from_bits(sign);
    /* Normalise the subnormal: exact in float32. */
    int e = -1;
    do {
      e++;
      mant <<= 1;
    } while (!(mant & 0x400u));
    return alloy_f32_from_bits(sign | ((uint32_t)(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13));
  }
  return alloy_f32_from_bits(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

static inline uint16_t alloy_bf16_from_f32(float f) {
  uint32_t x = alloy_f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) /* NaN: keep sign, force quiet */
    return (uint16_t)((x >> 16) | 0x40u);
  uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb; /* round to nearest even; overflow rounds to Inf */
  return (uint16_t)(x >> 16);
}

static inline float alloy_f32_from_bf16(uint16_t b) {
  return alloy_f32_from_bits((uint32_t)b << 16);
}

#ifdef __cplusplus
}
#endif
#endif
