/*
 * alloy/dtype.h: element types and exact conversions for the reduced-precision
 * floats.
 *
 * The enum values are part of the ABI: they never change and new types are
 * only appended. Every function here is pure and thread-safe.
 */
#ifndef ALLOY_DTYPE_H
#define ALLOY_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* Long name as PyTorch spells it ("float32", "bfloat16", "bool"). */
const char *alloy_dtype_name(alloy_dtype t);
/* Short name used by the .air text format ("f32", "bf16", "bool"). */
const char *alloy_dtype_short_name(alloy_dtype t);
/* Accepts the long name, the short name, PyTorch's aliases ("float", "long",
 * "half", "int", "double") and safetensors codes ("F32", "BOOL"). Returns
 * false when the name is unknown. */
bool alloy_dtype_from_name(const char *name, size_t len, alloy_dtype *out);
size_t alloy_dtype_size(alloy_dtype t);
bool alloy_dtype_is_float(alloy_dtype t);   /* f16 bf16 f32 f64 */
bool alloy_dtype_is_integer(alloy_dtype t); /* u8 i8 i16 i32 i64, not bool */
bool alloy_dtype_is_complex(alloy_dtype t);
/* The lowest and highest finite values of a real dtype, as doubles (int64's
 * are -2^63 and 2^63, the nearest doubles; float64's +-DBL_MAX). False, the
 * outputs untouched, for bool, complex and unknown dtypes. Thread-safe. */
bool alloy_dtype_limits(alloy_dtype t, double *lowest, double *highest);

/* IEEE binary16 and bfloat16 conversions. Narrowing rounds to nearest, ties
 * to even; NaN stays NaN (quiet, sign kept), infinities and -0.0 are kept,
 * overflow gives infinity. Widening is exact. */
uint16_t alloy_f16_from_f32(float f);
float alloy_f32_from_f16(uint16_t h);
uint16_t alloy_bf16_from_f32(float f);
float alloy_f32_from_bf16(uint16_t b);

#ifdef __cplusplus
}
#endif
#endif
