/*
 * decompositions/rules_pointwise.c: pointwise composites and the Scalar/Tensor overloads of elementwise ops, from ATen to Core ATen.
 */
#include "decompositions/rules.h"

const decomp_rule decomp_rules_pointwise[] = {
    {NULL, NULL, 0},
};
