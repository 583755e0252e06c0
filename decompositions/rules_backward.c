/*
 * decompositions/rules_backward.c: the backward ops of training graphs (activation, loss, norm, pooling and view backwards), from ATen to Core ATen.
 */
#include "decompositions/rules.h"

const decomp_rule decomp_rules_backward[] = {
    {NULL, NULL, 0},
};
