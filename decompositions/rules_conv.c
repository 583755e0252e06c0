/*
 * decompositions/rules_conv.c: the convolution wrappers (conv1d/2d/3d, conv_transpose*, _convolution), from ATen to Core ATen.
 */
#include "decompositions/rules.h"

const decomp_rule decomp_rules_conv[] = {
    {NULL, NULL, 0},
};
