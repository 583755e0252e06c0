/*
 * reference_backend/kernels_nn.h: private to the nn family (kernels_nn.c,
 * kernels_pooling.c, kernels_norms.c, kernels_losses.c,
 * kernels_nn_activation.c, kernels_resample.c): the small helpers the
 * files share, all static inline; the failure logger, ref_fail, lives in
 * reference_backend/args.c.
 */
#ifndef ALLOY_REF_KERNELS_NN_H
#define ALLOY_REF_KERNELS_NN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "reference_backend/ref.h"

enum { MAX_RANK = 16 }; /* as ref_iter */

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* ---- dense double arrays ------------------------------------------------*/

/* t's elements in row-major order as doubles (malloc'd; NULL when out of
 * memory). A NULL tensor gives NULL. */
static inline double *load_all(const alloy_kernel_tensor *t) {
  if (!t) return NULL;
  double *v = malloc(sizeof(double) * (size_t)max64(1, ref_numel(t)));
  if (!v) return NULL;
  ref_iter it;
  ref_iter_init(&it, t, NULL, 0);
  for (int64_t i = 0; ref_iter_next(&it); i++) v[i] = ref_load_f(t->data, t->dtype, it.offset[0]);
  return v;
}

static inline void store_all(const alloy_kernel_tensor *t, const double *v) {
  ref_iter it;
  ref_iter_init(&it, t, NULL, 0);
  for (int64_t i = 0; ref_iter_next(&it); i++) ref_store_f(t->data, t->dtype, it.offset[0], v[i]);
}

static inline void zero_fill(const alloy_kernel_tensor *t) {
  ref_iter it;
  ref_iter_init(&it, t, NULL, 0);
  while (ref_iter_next(&it)) ref_store_i(t->data, t->dtype, it.offset[0], 0);
}

/* The bool[3] output_mask (all true when absent). */
static inline void output_mask(const alloy_kernel_call *c, bool *mask) {
  int64_t m[3];
  int n = ref_ints(c, "output_mask", m, 3);
  for (int i = 0; i < 3; i++) mask[i] = i >= n || m[i] != 0;
}

#endif
