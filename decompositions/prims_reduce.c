/*
 * decompositions/prims_reduce.c: (rules being written).
 */
#include "decompositions/rules.h"

const decomp_rule decomp_prims_reduce[] = {
    {NULL, NULL, 0},
};
