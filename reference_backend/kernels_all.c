/*
 * reference_backend/kernels_all.c: every family table of the reference
 * kernels joined into one array, for the backends built from them: the
 * reference backend itself (ref.c) and the testing backend chooser
 * (tests/chooser/chooser.c).
 */
#include "reference_backend/ref.h"

/* The family tables (reference_backend/kernels_*.c), each ending with a
 * row whose op is NULL. */
static const alloy_kernel *const families[] = {
    ref_kernels_pointwise, ref_kernels_reduce,   ref_kernels_histogram, ref_kernels_shape,
    ref_kernels_spectral,   ref_kernels_index,    ref_kernels_nn,       ref_kernels_pooling,
    ref_kernels_norms,     ref_kernels_losses,   ref_kernels_nn_activation,
    ref_kernels_resample,  ref_kernels_factory,  ref_kernels_linalg,
    ref_kernels_misc,      ref_kernels_ldl,      ref_kernels_operator, ref_kernels_random,
};

int ref_kernels_join(alloy_kernel *out, int cap) {
  int n = 0;
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
    for (const alloy_kernel *k = families[f]; k->op && n < cap; k++) out[n++] = *k;
  return n;
}
