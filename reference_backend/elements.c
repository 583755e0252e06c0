/*
 * reference_backend/elements.c: reading and writing one element of any
 * dtype, and the strided iterator the reference kernels walk tensors with.
 * Floats travel as double and integers as int64, which hold every value of
 * their kinds exactly; float16 and bfloat16 are converted exactly
 * (alloy/dtype.h) and rounded once on store.
 */
#include <string.h>

#include "reference_backend/ref.h"

#define LOAD(type) \
  do {             \
    type x;        \
    memcpy(&x, (const char *)base + index * (int64_t)sizeof x, sizeof x); \
    return x;      \
  } while (0)

double ref_load_f(const void *base, alloy_dtype t, int64_t index) {
  switch (t) {
    case ALLOY_BOOL: LOAD(uint8_t);
    case ALLOY_U8: LOAD(uint8_t);
    case ALLOY_I8: LOAD(int8_t);
    case ALLOY_I16: LOAD(int16_t);
    case ALLOY_I32: LOAD(int32_t);
    case ALLOY_I64: LOAD(int64_t);
    case ALLOY_F16: {
      uint16_t h;
      memcpy(&h, (const char *)base + index * 2, 2);
      return alloy_f32_from_f16(h);
    }
    case ALLOY_BF16: {
      uint16_t h;
      memcpy(&h, (const char *)base + index * 2, 2);
      return alloy_f32_from_bf16(h);
    }
    case ALLOY_F32: LOAD(float);
    case ALLOY_F64: LOAD(double);
    default: return 0.0;
  }
}

/* A double as int64 the way x86's cvttsd2si converts it, which is what
 * PyTorch's CPU casts give: NaN, the infinities and anything beyond the
 * int64 range become INT64_MIN. (C leaves those conversions undefined.) */
static int64_t to_i64(double v) {
  return v >= -0x1p63 && v < 0x1p63 ? (int64_t)v : INT64_MIN;
}

int64_t ref_load_i(const void *base, alloy_dtype t, int64_t index) {
  switch (t) {
    case ALLOY_BOOL: LOAD(uint8_t);
    case ALLOY_U8: LOAD(uint8_t);
    case ALLOY_I8: LOAD(int8_t);
    case ALLOY_I16: LOAD(int16_t);
    case ALLOY_I32: LOAD(int32_t);
    case ALLOY_I64: LOAD(int64_t);
    default: return to_i64(ref_load_f(base, t, index));
  }
}

#define STORE(type, v)                                               \
  do {                                                               \
    type x = (type)(v);                                              \
    memcpy((char *)base + index * (int64_t)sizeof x, &x, sizeof x);  \
  } while (0)

void ref_store_f(void *base, alloy_dtype t, int64_t index, double v) {
  switch (t) {
    case ALLOY_BOOL: STORE(uint8_t, v != 0.0); break;
    case ALLOY_F16: {
      /* through float32, as PyTorch computes half ops in float */
      uint16_t h = alloy_f16_from_f32((float)v);
      memcpy((char *)base + index * 2, &h, 2);
      break;
    }
    case ALLOY_BF16: {
      uint16_t h = alloy_bf16_from_f32((float)v);
      memcpy((char *)base + index * 2, &h, 2);
      break;
    }
    case ALLOY_F32: STORE(float, v); break;
    case ALLOY_F64: STORE(double, v); break;
    default: ref_store_i(base, t, index, to_i64(v)); break;
  }
}

void ref_store_i(void *base, alloy_dtype t, int64_t index, int64_t v) {
  /* Integer overflow wraps, as in PyTorch: truncate through unsigned. */
  switch (t) {
    case ALLOY_BOOL: STORE(uint8_t, v != 0); break;
    case ALLOY_U8: STORE(uint8_t, (uint64_t)v); break;
    case ALLOY_I8: STORE(int8_t, (uint8_t)(uint64_t)v); break;
    case ALLOY_I16: STORE(int16_t, (uint16_t)(uint64_t)v); break;
    case ALLOY_I32: STORE(int32_t, (uint32_t)(uint64_t)v); break;
    case ALLOY_I64: STORE(int64_t, v); break;
    default: ref_store_f(base, t, index, (double)v); break;
  }
}

void ref_iter_init(ref_iter *it, const alloy_kernel_tensor *out,
                   const alloy_kernel_tensor *const *ins, int nins) {
  memset(it, 0, sizeof *it);
  it->rank = out->rank;
  it->nops = 1 + nins;
  it->remaining = 1;
  for (int d = 0; d < out->rank; d++) {
    it->sizes[d] = out->sizes[d];
    it->strides[0][d] = out->strides[d];
    it->remaining *= out->sizes[d];
  }
  for (int k = 0; k < nins; k++) {
    const alloy_kernel_tensor *in = ins[k];
    for (int d = 0; d < out->rank; d++) {
      int din = d - (out->rank - in->rank);
      it->strides[k + 1][d] = din < 0 || in->sizes[din] == 1 ? 0 : in->strides[din];
    }
  }
  it->index[0] = -1; /* the first next() lands on element 0 */
}

bool ref_iter_next(ref_iter *it) {
  if (it->remaining <= 0) return false;
  if (it->index[0] < 0) { /* first element: all offsets 0 */
    it->index[0] = 0;
    it->remaining--;
    return true;
  }
  for (int d = it->rank - 1; d >= 0; d--) {
    if (++it->index[d] < it->sizes[d]) {
      for (int k = 0; k < it->nops; k++) it->offset[k] += it->strides[k][d];
      break;
    }
    for (int k = 0; k < it->nops; k++) it->offset[k] -= it->strides[k][d] * (it->sizes[d] - 1);
    it->index[d] = 0;
  }
  it->remaining--;
  return true;
}

bool ref_next_index(int64_t *idx, const int64_t *sizes, int rank) {
  for (int d = rank - 1; d >= 0; d--) {
    if (++idx[d] < sizes[d]) return true;
    idx[d] = 0;
  }
  return false;
}

int64_t ref_linear_offset(const alloy_kernel_tensor *t, int64_t lin) {
  int64_t off = 0;
  for (int d = t->rank - 1; d >= 0; d--) {
    off += (lin % t->sizes[d]) * t->strides[d];
    lin /= t->sizes[d];
  }
  return off;
}
