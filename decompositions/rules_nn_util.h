/*
 * decompositions/rules_nn_util.h: small builders shared by the rules of the
 * neural-network family (rules_nn.c, rules_conv.c, rules_pooling.c,
 * rules_losses.c, rules_resample.c, rules_rnn.c): the arithmetic
 * one-liners inline here, the rest defined in rules_nn.c.
 */
#ifndef ALLOY_DECOMP_RULES_NN_UTIL_H
#define ALLOY_DECOMP_RULES_NN_UTIL_H

#include "decompositions/decomp.h"

alloy_value *nn_view(decomp *d, alloy_value *x, const alloy_dim *shape, int n);
alloy_value *nn_reshape(decomp *d, alloy_value *x, const alloy_dim *shape, int n);
alloy_value *nn_mT(decomp *d, alloy_value *x);                /* swap the last two dims */
alloy_dim nn_prod(decomp *d, const alloy_dim *dims, int n);
alloy_value *nn_unsqueeze(decomp *d, alloy_value *x, int dim);
alloy_value *nn_squeeze(decomp *d, alloy_value *x, int dim);
alloy_value *nn_sum_all(decomp *d, alloy_value *x);                /* in x's dtype */
alloy_value *nn_matmul(decomp *d, alloy_value *a, alloy_value *b); /* matmul's decomposition */
/* Scalar argument i as used with a tensor of dtype t (floats truncated for
 * integer tensors), and whether it is exactly n. */
alloy_arg nn_scalar(decomp *d, int i, alloy_dtype t);
bool nn_scalar_is(decomp *d, int i, alloy_dtype t, double n);

/* a + b, a - b, a * b, a * k, -a: the Tensor overloads, for rules that read
 * like the math. */
static inline alloy_value *nn_add(decomp *d, alloy_value *a, alloy_value *b) {
  return D(d, "aten.add.Tensor", V(a), V(b));
}
static inline alloy_value *nn_sub(decomp *d, alloy_value *a, alloy_value *b) {
  return D(d, "aten.sub.Tensor", V(a), V(b));
}
static inline alloy_value *nn_mul(decomp *d, alloy_value *a, alloy_value *b) {
  return D(d, "aten.mul.Tensor", V(a), V(b));
}
static inline alloy_value *nn_mulf(decomp *d, alloy_value *a, double k) {
  return D(d, "aten.mul.Tensor", V(a), F(k));
}
static inline alloy_value *nn_neg(decomp *d, alloy_value *a) {
  return D(d, "aten.neg.default", V(a));
}

#endif
