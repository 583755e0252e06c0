/*
 * decompositions/rules.h: the rule tables, one per file of decompositions/,
 * each ending with a row whose op is NULL. decompose.c joins them; a rule
 * for an op is found by its name and level (to core or to prims).
 */
#ifndef ALLOY_DECOMP_RULES_H
#define ALLOY_DECOMP_RULES_H

#include "decompositions/decomp.h"

/* ATen to Core ATen. */
extern const decomp_rule decomp_rules_activation[]; /* rules_activation.c: activations, softmax */
extern const decomp_rule decomp_rules_nn[];         /* rules_nn.c: linear, matmul, norms, attention, dropout */
extern const decomp_rule decomp_rules_pooling[];    /* rules_pooling.c: pooling, unpooling, im2col */
extern const decomp_rule decomp_rules_losses[];     /* rules_losses.c: losses and distances */
extern const decomp_rule decomp_rules_resample[];   /* rules_resample.c: padding, upsampling, shuffles */
extern const decomp_rule decomp_rules_shape[];      /* rules_shape.c: views, joins, splits, indexing, products */
extern const decomp_rule decomp_rules_einsum[];     /* rules_einsum.c: einsum */
extern const decomp_rule decomp_rules_reduce[];     /* rules_reduce.c: reductions, scans, pointwise odds and ends */
extern const decomp_rule decomp_rules_pointwise[];  /* rules_pointwise.c: pointwise composites, Scalar/Tensor overloads */
extern const decomp_rule decomp_rules_views[];      /* rules_views.c: _copy twins, new_*, *_like, named overloads */
extern const decomp_rule decomp_rules_conv[];       /* rules_conv.c: conv1d/2d/3d, conv_transpose*, _convolution */
extern const decomp_rule decomp_rules_rnn[];        /* rules_rnn.c: rnn_tanh, rnn_relu, lstm, gru and their cells */
extern const decomp_rule decomp_rules_backward[];   /* rules_backward.c: activation, loss and view backwards */
extern const decomp_rule decomp_rules_backward_nn[]; /* rules_backward_nn.c: norm, pool, pad, upsample, conv backwards */
extern const decomp_rule decomp_rules_backward_seq[]; /* rules_backward_seq.c: attention, recurrent cell backwards */
extern const decomp_rule decomp_rules_random[];     /* rules_random.c: bernoulli, normal, uniform, ... */
extern const decomp_rule decomp_rules_fft[];        /* rules_fft.c: fft_* */
extern const decomp_rule decomp_rules_linalg[];     /* rules_linalg.c: linalg_* and friends */

/* Core ATen to prims. */
extern const decomp_rule decomp_prims_pointwise[];  /* prims_pointwise.c */
extern const decomp_rule decomp_prims_reduce[];     /* prims_reduce.c */
extern const decomp_rule decomp_prims_shape[];      /* prims_shape.c */

#endif
