/*
 * tests/cuda/check_util.h: what the standalone device checks
 * (tests/cuda/blas_check.c, tests/cuda/portable_check.c) share: ending on a
 * driver error, a fixed sequence of test values rounded to a dtype, and
 * copies of them to and from the device. Header-only; the includer defines
 * CHECK_PROGRAM (its name, for messages) and, before including, the driver
 * table and stream the copies use:
 *   static cuda_api api;
 *   static CUstream stream;
 */
#ifndef ALLOY_TESTS_CUDA_CHECK_UTIL_H
#define ALLOY_TESTS_CUDA_CHECK_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/dtype.h"
#include "plugins/cuda/cuda_api.h"

/* Ends the program on a driver error: the check cannot go on without it. */
static void check_cu(CUresult r, const char *what) {
  if (r == CUDA_SUCCESS) return;
  const char *s = NULL;
  api.cuGetErrorString(r, &s);
  fprintf(stderr, CHECK_PROGRAM ": %s failed: %s\n", what, s ? s : "unknown error");
  exit(2);
}

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, CHECK_PROGRAM ": out of memory\n");
    exit(2);
  }
  return p;
}

/* The next of a fixed sequence of values in [-1, 1). */
static double next_value(uint64_t *state) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(*state >> 40) / (double)(1ull << 23) - 1.0;
}

/* x rounded to dtype t, as the device will hold it. */
static double round_to(alloy_dtype t, double x) {
  float f = (float)x;
  if (t == ALLOY_F16) return alloy_f32_from_f16(alloy_f16_from_f32(f));
  if (t == ALLOY_BF16) return alloy_f32_from_bf16(alloy_bf16_from_f32(f));
  return f;
}

/* n deterministic values in [-1, 1) rounded to t; the caller frees them. */
static double *fill(alloy_dtype t, size_t n, uint64_t seed) {
  double *v = xmalloc(n * sizeof *v);
  for (size_t i = 0; i < n; i++) v[i] = round_to(t, next_value(&seed));
  return v;
}

/* A device buffer holding v (n values, already rounded) in dtype t, 256
 * bytes to spare; the caller frees it. */
static CUdeviceptr upload(alloy_dtype t, const double *v, size_t n) {
  size_t es = alloy_dtype_size(t);
  unsigned char *host = xmalloc(n * es);
  for (size_t i = 0; i < n; i++) {
    float f = (float)v[i];
    if (t == ALLOY_F32) memcpy(host + i * 4, &f, 4);
    else {
      uint16_t h = t == ALLOY_F16 ? alloy_f16_from_f32(f) : alloy_bf16_from_f32(f);
      memcpy(host + i * 2, &h, 2);
    }
  }
  CUdeviceptr d;
  check_cu(api.cuMemAlloc(&d, n * es + 256), "cuMemAlloc");
  check_cu(api.cuMemcpyHtoDAsync(d, host, n * es, stream), "cuMemcpyHtoDAsync");
  check_cu(api.cuStreamSynchronize(stream), "cuStreamSynchronize");
  free(host);
  return d;
}

/* n values of dtype t from the device, widened to double; the caller frees them. */
static double *download(alloy_dtype t, CUdeviceptr d, size_t n) {
  size_t es = alloy_dtype_size(t);
  unsigned char *host = xmalloc(n * es);
  double *v = xmalloc(n * sizeof *v);
  check_cu(api.cuMemcpyDtoHAsync(host, d, n * es, stream), "cuMemcpyDtoHAsync");
  check_cu(api.cuStreamSynchronize(stream), "cuStreamSynchronize");
  for (size_t i = 0; i < n; i++) {
    if (t == ALLOY_F32) {
      float f;
      memcpy(&f, host + i * 4, 4);
      v[i] = f;
    } else {
      uint16_t h;
      memcpy(&h, host + i * 2, 2);
      v[i] = t == ALLOY_F16 ? alloy_f32_from_f16(h) : alloy_f32_from_bf16(h);
    }
  }
  free(host);
  return v;
}

#endif
