/*
 * decompositions/rules_activation.c: activation functions and softmax, from
 * ATen to Core ATen.
 */
#include "decompositions/rules.h"

/* silu(x) = x * sigmoid(x) */
static void silu(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  d_out(d, 0, D(d, "aten.mul.Tensor", V(x), V(D(d, "aten.sigmoid.default", V(x)))));
}

const decomp_rule decomp_rules_activation[] = {
    {"aten.silu.default", silu, DECOMP_TO_CORE},
    {NULL, NULL, 0},
};
