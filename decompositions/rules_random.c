/*
 * decompositions/rules_random.c: random ops (bernoulli, normal, uniform, exponential, ...), from ATen to Core ATen.
 */
#include "decompositions/rules.h"

const decomp_rule decomp_rules_random[] = {
    {NULL, NULL, 0},
};
