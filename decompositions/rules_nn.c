/*
 * decompositions/rules_nn.c: (rules being written).
 */
#include "decompositions/rules.h"

const decomp_rule decomp_rules_nn[] = {
    {NULL, NULL, 0},
};
