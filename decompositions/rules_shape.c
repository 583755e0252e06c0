/*
 * decompositions/rules_shape.c: (rules being written).
 */
#include "decompositions/rules.h"

const decomp_rule decomp_rules_shape[] = {
    {NULL, NULL, 0},
};
