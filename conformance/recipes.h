/*
 * conformance/recipes.h: how the conformance suite calls each op
 * (recipes.c holds the rows; samples.c expands them).
 *
 * A recipe is an op's argument list, positional then name=value, separated
 * by spaces:
 *   T[3,5]        a tensor of the sample dtype T (every dtype the op takes)
 *   f32[4] i64[]  a tensor of a fixed dtype (b is bool); [] is zero-dim
 *   T[S] T[B]     the shape class's main shape, and one that broadcasts
 *                 with it (plain, broadcast, size-1, zero-dim, zero-size,
 *                 large)
 *   idx5:i64[3]   values in [0, 5), for indices (idx1-5: in [1, 5)); pos: positive, prob: in
 *                 (0, 1), nz: nonzero, spd: a positive-definite matrix
 *   3 -1 0.5 1e-5 true false None 'mean'   scalars, strings, None
 *   [1,2] [T[S],T[S]]   lists of scalars or of tensors
 *   dtype:T dtype:f32   a ScalarType argument
 *   cpu           a Device argument (the host)
 *   {a|b|c}       alternatives: one sample per choice (with the plain
 *                 shape; combinations of several groups, up to 64)
 * Only T tensors are transposed, sliced, expanded, offset and given edge
 * values. An op without a row gets a recipe derived from its schema
 * (samples.c, derive_recipe); a row replaces that recipe, and an op may
 * have several rows.
 */
#ifndef ALLOY_CONFORM_RECIPES_H
#define ALLOY_CONFORM_RECIPES_H

typedef struct conform_recipe {
  const char *op;   /* registry name, "aten.add.Tensor" */
  const char *args; /* the recipe */
} conform_recipe;

/* Each table ends with a row of NULLs: recipes.c (pointwise, reductions,
 * shapes, matrix products), recipes_nn.c (convolution, pooling,
 * normalization, losses, padding, upsampling, embeddings) and
 * recipes_index.c (indexing, scatter and gather, sorting and searching,
 * linear algebra, FFT, histograms, everything else). */
extern const conform_recipe conform_recipes[], conform_recipes_nn[], conform_recipes_index[];

#endif
