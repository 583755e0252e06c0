/*
 * decompositions/prims_shape.c: (rules being written).
 */
#include "decompositions/rules.h"

const decomp_rule decomp_prims_shape[] = {
    {NULL, NULL, 0},
};
