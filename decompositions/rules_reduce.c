/*
 * decompositions/rules_reduce.c: (rules being written).
 */
#include "decompositions/rules.h"

const decomp_rule decomp_rules_reduce[] = {
    {NULL, NULL, 0},
};
