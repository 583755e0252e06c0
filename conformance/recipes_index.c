/*
 * conformance/recipes_index.c: the recipes of the indexing, scatter and gather, sorting and searching,
 * linear algebra, FFT and histogram ops, and the rest (recipes.h gives the language).
 */
#include "conformance/recipes.h"

#include <stddef.h>

const conform_recipe conform_recipes_index[] = {
    {NULL, NULL},
};
