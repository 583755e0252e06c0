/*
 * conformance/recipes.c: the recipes of the ops whose arguments the schema
 * alone cannot say (recipes.h gives the language). Rows are grouped as the
 * registry's meta files are; within a group, by op name.
 */
#include "conformance/recipes.h"

#include <stddef.h>

const conform_recipe conform_recipes[] = {
    /* ---- pointwise with options ---- */
    {"aten.add.Tensor", "T[S] T[B] alpha={1|2}"},
    {"aten.sub.Tensor", "T[S] T[B] alpha={1|2}"},
    {"aten.div.Tensor_mode", "T[S] T[B] rounding_mode={None|'trunc'|'floor'}"},
    /* Laguerre and Legendre run their recurrence n times, in PyTorch as in
     * every backend: a degree of 2^31 - 1 (an int32 edge value) is 25 s of
     * one core for one element. x keeps its edge values; n is a degree. */
    {"aten.special_laguerre_polynomial_l.default", "T[S] idx64:i64[S]"},
    {"aten.special_legendre_polynomial_p.default", "T[S] idx64:i64[S]"},
    /* ---- linear algebra ---- */
    {"aten.mm.default", "T[3,4] T[4,5]"},
    {"aten.mm.default", "T[64,300] T[300,64]"},
    {"aten.bmm.default", "T[2,3,4] T[2,4,5]"},
    {"aten.addmm.default", "T[5] T[3,4] T[4,5] beta={1|0.5} alpha={1|2}"},
    /* ---- LU ---- */
    /* pivots are 1-based row numbers in [1, m] */
    {"aten.lu_unpack.default", "T[4,4] idx1-5:i32[4] unpack_data={true|false} unpack_pivots={true|false}"},
    {"aten.lu_unpack.default", "T[2,5,3] idx1-6:i32[2,3]"},
    {NULL, NULL},
};
