/*
 * reference_backend/kernels_shape.h: private to the shape family
 * (kernels_shape.c) and the FFTs of kernels_spectral.c: the strided windows
 * ("views") and their row-major walks, and the small helpers both files
 * use. Defined in kernels_shape.c.
 */
#ifndef ALLOY_REF_KERNELS_SHAPE_H
#define ALLOY_REF_KERNELS_SHAPE_H

#include <stdint.h>

#include "reference_backend/ref.h"

#define MAXR 16

/* A strided window on some data: element idx sits at
 * offset + sum(idx[d] * strides[d]). */
typedef struct view {
  int rank;
  int64_t sizes[MAXR], strides[MAXR], offset;
} view;

/* Row-major position in a view: index and element offset. */
typedef struct walker {
  const view *v;
  int64_t idx[MAXR], off;
} walker;

/* Logs "<op>: what" through the host and returns 1. */
int ref_shape_fail(const alloy_kernel_call *c, const char *what);
/* A negative dim counted from the end (a 0-dim tensor takes 0 and -1). */
int64_t ref_shape_wrap_dim(int64_t d, int rank);
/* The product of rank sizes. */
int64_t ref_shape_numel_of(const int64_t *sizes, int rank);
/* The whole of t as a view, and a view's element count. */
view ref_shape_view_of(const alloy_kernel_tensor *t);
int64_t ref_shape_view_numel(const view *v);
/* Starts a walk at v's first element; walk_next steps to the next one in
 * row-major order (wrapping back to the first after the last). */
void ref_shape_walk_init(walker *w, const view *v);
void ref_shape_walk_next(walker *w);

#endif
