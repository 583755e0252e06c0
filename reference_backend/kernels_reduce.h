/*
 * reference_backend/kernels_reduce.h: private to the reduce family
 * (kernels_reduce.c, kernels_histogram.c): the small helpers and the lane
 * and sort-entry types both files use. The helpers are static inline; the
 * lane sort, ref_reduce_sort_lane, is defined once in kernels_reduce.c.
 */
#ifndef ALLOY_REF_KERNELS_REDUCE_H
#define ALLOY_REF_KERNELS_REDUCE_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "reference_backend/ref.h"

#define MAX_DIMS 16 /* ALLOY_MAX_RANK */


/* A double as int64 without C's undefined behaviour for NaN or range. */
static inline int64_t f_to_i(double v) {
  if (isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return INT64_MAX;
  if (v <= -9.2233720368547758e18) return INT64_MIN;
  return (int64_t)v;
}

/* The element offset of row-major element `flat` of a strided tensor. */
static inline int64_t offset_of(int64_t flat, int rank, const int64_t *sizes,
                                const int64_t *strides) {
  int64_t off = 0;
  for (int d = rank - 1; d >= 0; d--) {
    if (sizes[d] == 0) return 0;
    off += (flat % sizes[d]) * strides[d];
    flat /= sizes[d];
  }
  return off;
}

static inline int64_t flat_offset(const alloy_kernel_tensor *t, int64_t flat) {
  return offset_of(flat, t->rank, t->sizes, t->strides);
}

/* A dim wrapped into [0, rank); a 0-dim tensor takes 0 and -1. */
static inline int wrap_dim(int64_t d, int rank, int *out) {
  int r = rank > 0 ? rank : 1;
  if (d < -r || d >= r) return 1;
  *out = (int)(d < 0 ? d + r : d);
  return 0;
}

/* A sort entry: the value both ways, and its position in the lane. */
typedef struct entry {
  double f;
  int64_t i, idx;
} entry;

/* A lane of values: f holds them as double, and i exactly as int64 when the
 * compute dtype is an integer or bool (is_int). */
typedef struct lane {
  int64_t n;
  double *f;
  int64_t *i;
  bool is_int;
  entry **scratch; /* n entries for the sorting lane functions, made on use */
} lane;

static inline bool entries_equal(const entry *a, const entry *b, bool is_int) {
  return is_int ? a->i == b->i : a->f == b->f;
}

/* The lane sorted, as entries in its scratch (NULL when memory runs out):
 * stable, NaN above everything (descending: first). */
entry *ref_reduce_sort_lane(const lane *in, bool descending);

#endif
