/*
 * reference_backend/kernels_nn.h: private to the nn family (kernels_nn.c,
 * kernels_nn_2.c, kernels_nn_3.c, kernels_nn_4.c): the small helpers the
 * four files share. The tiny ones are static inline; the failure logger,
 * ref_fail, lives in reference_backend/args.c.
 */
#ifndef ALLOY_REF_KERNELS_NN_H
#define ALLOY_REF_KERNELS_NN_H

#include <stdbool.h>
#include <stdint.h>

#include "reference_backend/ref.h"

enum { MAX_RANK = 16 }; /* as ref_iter */

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* v rounded to dtype t, as a tensor of t holds it (float64: unchanged;
 * PyTorch rounds float16 / bfloat16 intermediates where it materializes
 * them). */
static inline double round_to(alloy_dtype t, double v) {
  uint64_t buf;
  ref_store_f(&buf, t, 0, v);
  return ref_load_f(&buf, t, 0);
}

/* Logs why a kernel fails; returns the nonzero status it returns. */

#endif
