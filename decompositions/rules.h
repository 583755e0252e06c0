/*
 * decompositions/rules.h: the rule tables, one per file of decompositions/,
 * each ending with a row whose op is NULL. decompose.c joins them; a rule
 * for an op is found by its name and level (to core or to prims).
 */
#ifndef ALLOY_DECOMP_RULES_H
#define ALLOY_DECOMP_RULES_H

#include "decompositions/decomp.h"

/* ATen to Core ATen. */
extern const decomp_rule decomp_rules_activation[]; /* rules_activation.c: activations, softmax */
extern const decomp_rule decomp_rules_nn[];         /* rules_nn.c: linear, matmul, norms, attention, pooling */
extern const decomp_rule decomp_rules_nn_2[];       /* rules_nn_2.c: losses, padding, upsampling, unpooling, shuffles */
extern const decomp_rule decomp_rules_shape[];      /* rules_shape.c: views, joins, splits, indexing, products */
extern const decomp_rule decomp_rules_shape_2[];    /* rules_shape_2.c: einsum */
extern const decomp_rule decomp_rules_reduce[];     /* rules_reduce.c: reductions, scans, pointwise odds and ends */

/* Core ATen to prims. */
extern const decomp_rule decomp_prims_pointwise[];  /* prims_pointwise.c */
extern const decomp_rule decomp_prims_reduce[];     /* prims_reduce.c */
extern const decomp_rule decomp_prims_shape[];      /* prims_shape.c */

#endif
