/*
 * ir/promote.h: PyTorch's type promotion, as torch.result_type and
 * torch._prims_common.elementwise_dtypes / reduction_dtypes compute it.
 *
 * Operands are ranked by kind: tensors with dimensions outrank zero-dim
 * tensors, which outrank Python scalars; a lower-ranked operand only matters
 * when its category (bool < integer < float < complex) is higher.
 */
#ifndef ALLOY_PROMOTE_H
#define ALLOY_PROMOTE_H

#include <stdbool.h>

#include "alloy/dtype.h"

typedef enum alloy_promo_operand_kind {
  ALLOY_PROMO_ABSENT = 0, /* None: ignored                         */
  ALLOY_PROMO_TENSOR,     /* a tensor with at least one dimension  */
  ALLOY_PROMO_ZERO_DIM,   /* a zero-dim tensor                     */
  ALLOY_PROMO_SCALAR,     /* a Python number: bool, int64 or float64 */
} alloy_promo_operand_kind;

typedef struct alloy_promo_operand {
  alloy_promo_operand_kind kind;
  alloy_dtype dtype; /* Python scalars: ALLOY_BOOL, ALLOY_I64 or ALLOY_F64 */
} alloy_promo_operand;

/* ELEMENTWISE_TYPE_PROMOTION_KIND of torch._prims_common. */
typedef enum alloy_promo_kind {
  ALLOY_PROMO_DEFAULT = 0,
  ALLOY_PROMO_INT_TO_FLOAT,
  ALLOY_PROMO_NO_OPMATH,
  ALLOY_PROMO_ALWAYS_BOOL,
  ALLOY_PROMO_COMPLEX_TO_FLOAT,
  ALLOY_PROMO_BOOL_TO_LONG,
} alloy_promo_kind;

/* REDUCTION_OUTPUT_TYPE_KIND of torch._prims_common. */
typedef enum alloy_reduction_kind {
  ALLOY_REDUCE_SAME = 0,
  ALLOY_REDUCE_COMPLEX_TO_FLOAT,
  ALLOY_REDUCE_KEEP_PROMOTED_TYPE,
  ALLOY_REDUCE_ALWAYS_BOOL,
} alloy_reduction_kind;

/* torch.promote_types: the lattice of two dtypes. */
alloy_dtype alloy_promote_types(alloy_dtype a, alloy_dtype b);
/* torch.result_type over operands (absent ones skipped). When every operand
 * is absent the result is ALLOY_F32 (the default dtype). */
alloy_dtype alloy_result_type(const alloy_promo_operand *ops, int n);
/* The computation dtype of an op that runs in dtype t: float16 and bfloat16
 * compute in float32; everything else in itself. */
alloy_dtype alloy_opmath_dtype(alloy_dtype t);
/* elementwise_dtypes: the computation and result dtypes. */
void alloy_elementwise_dtypes(const alloy_promo_operand *ops, int n,
                              alloy_promo_kind kind, alloy_dtype *compute,
                              alloy_dtype *result);
/* reduction_dtypes: input dtype t, an explicit dtype argument (has_dtype),
 * and the kind give the computation and result dtypes. */
void alloy_reduction_dtypes(alloy_dtype t, bool has_dtype, alloy_dtype dtype,
                            alloy_reduction_kind kind, alloy_dtype *compute,
                            alloy_dtype *result);

#endif
