/*
 * ir/einsum.h: the reading of an einsum equation, shared by einsum's shape
 * function (ir/meta_shape_composite.c) and its decomposition
 * (decompositions/rules_shape.c), so that both see the same labels.
 *
 * Each dim of each operand and of the result gets a label id: 0..51 for the
 * letters A-Z a-z (in ASCII order, which is also the order of the implicit
 * output), and ALLOY_EINSUM_ELLIPSIS + k for the dims an ellipsis covers,
 * right-aligned across operands as broadcasting aligns them.
 */
#ifndef ALLOY_EINSUM_H
#define ALLOY_EINSUM_H

#include "alloy/graph.h"

enum { ALLOY_EINSUM_MAX_OPS = 32, ALLOY_EINSUM_ELLIPSIS = 52 };

typedef struct alloy_einsum {
  int nops;
  int rank[ALLOY_EINSUM_MAX_OPS];
  signed char label[ALLOY_EINSUM_MAX_OPS][ALLOY_MAX_RANK];
  int out_rank;
  signed char out[ALLOY_MAX_RANK];
} alloy_einsum;

/* Reads equation for nops operands of the given ranks into *e; returns NULL
 * or a message (static text or written into err) saying what is wrong. */
const char *alloy_einsum_parse(const char *equation, int nops, const int *ranks, alloy_einsum *e,
                               char *err, size_t cap);

#endif
