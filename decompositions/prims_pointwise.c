/*
 * decompositions/prims_pointwise.c: (rules being written).
 */
#include "decompositions/rules.h"

const decomp_rule decomp_prims_pointwise[] = {
    {NULL, NULL, 0},
};
