/*
 * conformance/recipes_nn.c: the recipes of the convolution, pooling, normalization, losses, padding, upsampling and
 * embedding ops (recipes.h gives the language).
 */
#include "conformance/recipes.h"

#include <stddef.h>

const conform_recipe conform_recipes_nn[] = {
    {NULL, NULL},
};
