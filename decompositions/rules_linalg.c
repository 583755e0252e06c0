/*
 * decompositions/rules_linalg.c: linear algebra composites (linalg_*, det, inverse, solve, ...), from ATen to Core ATen.
 */
#include "decompositions/rules.h"

const decomp_rule decomp_rules_linalg[] = {
    {NULL, NULL, 0},
};
