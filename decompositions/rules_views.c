/*
 * decompositions/rules_views.c: view, copy and factory overloads (the _copy twins, new_*, *_like, named overloads), from ATen to Core ATen.
 */
#include "decompositions/rules.h"

const decomp_rule decomp_rules_views[] = {
    {NULL, NULL, 0},
};
