/*
 * ir/pointwise_aliases.h: the elementwise overloads that are another op
 * under another name or with a Python number where the other op takes a
 * tensor (torch.multiply is mul, greater is gt, special_expit is sigmoid,
 * bitwise_left_shift.Tensor_Scalar is bitwise_left_shift.Tensor with its
 * number wrapped, xlogy.Scalar_Self is xlogy.Tensor ...), in one list read
 * by two files: ir/meta_pointwise.c, whose shape function for each runs
 * the other op's on the same arguments, and decompositions/rules_pointwise.c,
 * whose rule rewrites each into the other op (a number given for a tensor
 * becomes a zero-dim tensor of the result dtype, as PyTorch's
 * wrapped_scalar_tensor(s).to(result_type) does).
 *
 * X(op, target, form), where form says how the arguments map:
 *   SAME  argument i of op is argument i of target; arguments target has
 *         beyond op's take their defaults;
 *   SWAP  the first two are exchanged (bitwise_and.Scalar_Tensor(s, t) is
 *         bitwise_and.Scalar(t, s)).
 * (Aliases of other families, conj and _cast_* among them, are in
 * ir/meta_alias.h.)
 */
#ifndef ALLOY_POINTWISE_ALIASES_H
#define ALLOY_POINTWISE_ALIASES_H

typedef enum alloy_alias_form { ALLOY_ALIAS_SAME, ALLOY_ALIAS_SWAP } alloy_alias_form;

typedef struct alloy_pointwise_alias {
  const char *op;     /* "aten.multiply.Tensor" */
  const char *target; /* "aten.mul.Tensor"      */
  alloy_alias_form form;
} alloy_pointwise_alias;

/* The list below as a table (ir/meta_pointwise.c), ending with a NULL op,
 * and the row of an op in it (NULL when it is none of them). */
extern const alloy_pointwise_alias alloy_pointwise_aliases[];
const alloy_pointwise_alias *alloy_pointwise_alias_find(const char *op);

/* The argument of op that stands in position j of target's schema. */
static inline int alloy_alias_arg(alloy_alias_form form, int j) {
  return form == ALLOY_ALIAS_SWAP && j < 2 ? 1 - j : j;
}

#define ALLOY_POLY_ALIASES(X, name)                                                  \
  X("aten.special_" name ".x_scalar", "aten.special_" name ".default", SAME)         \
  X("aten.special_" name ".n_scalar", "aten.special_" name ".default", SAME)

#define ALLOY_POINTWISE_ALIASES(X)                                                   \
  /* names of the unary math functions */                                           \
  X("aten.absolute.default", "aten.abs.default", SAME)                               \
  X("aten.arccos.default", "aten.acos.default", SAME)                                \
  X("aten.arccosh.default", "aten.acosh.default", SAME)                              \
  X("aten.arcsin.default", "aten.asin.default", SAME)                                \
  X("aten.arcsinh.default", "aten.asinh.default", SAME)                              \
  X("aten.arctan.default", "aten.atan.default", SAME)                                \
  X("aten.arctanh.default", "aten.atanh.default", SAME)                              \
  X("aten.arctan2.default", "aten.atan2.default", SAME)                              \
  X("aten.negative.default", "aten.neg.default", SAME)                               \
  X("aten.fix.default", "aten.trunc.default", SAME)                                  \
  /* arithmetic */                                                                   \
  X("aten.multiply.Tensor", "aten.mul.Tensor", SAME)                                 \
  X("aten.multiply.Scalar", "aten.mul.Scalar", SAME)                                 \
  X("aten.subtract.Tensor", "aten.sub.Tensor", SAME)                                 \
  X("aten.subtract.Scalar", "aten.sub.Scalar", SAME)                                 \
  X("aten.divide.Tensor", "aten.div.Tensor", SAME)                                   \
  X("aten.divide.Scalar", "aten.div.Scalar", SAME)                                   \
  X("aten.divide.Tensor_mode", "aten.div.Tensor_mode", SAME)                         \
  X("aten.divide.Scalar_mode", "aten.div.Scalar_mode", SAME)                         \
  X("aten.true_divide.Tensor", "aten.div.Tensor", SAME)                              \
  X("aten.true_divide.Scalar", "aten.div.Scalar", SAME)                              \
  X("aten.remainder.Scalar_Tensor", "aten.remainder.Tensor", SAME)                   \
  X("aten.copysign.Scalar", "aten.copysign.Tensor", SAME)                            \
  X("aten.xlogy.Scalar_Self", "aten.xlogy.Tensor", SAME)                             \
  X("aten.xlogy.Scalar_Other", "aten.xlogy.Tensor", SAME)                            \
  X("aten.special_xlogy.default", "aten.xlogy.Tensor", SAME)                         \
  X("aten.special_xlogy.self_scalar", "aten.xlogy.Tensor", SAME)                     \
  X("aten.special_xlogy.other_scalar", "aten.xlogy.Tensor", SAME)                    \
  X("aten.special_xlog1py.self_scalar", "aten.special_xlog1py.default", SAME)        \
  X("aten.special_xlog1py.other_scalar", "aten.special_xlog1py.default", SAME)       \
  X("aten.special_zeta.self_scalar", "aten.special_zeta.default", SAME)              \
  X("aten.special_zeta.other_scalar", "aten.special_zeta.default", SAME)             \
  /* comparisons, min and max, clamps */                                             \
  X("aten.greater.Tensor", "aten.gt.Tensor", SAME)                                   \
  X("aten.greater.Scalar", "aten.gt.Scalar", SAME)                                   \
  X("aten.greater_equal.Tensor", "aten.ge.Tensor", SAME)                             \
  X("aten.greater_equal.Scalar", "aten.ge.Scalar", SAME)                             \
  X("aten.less.Tensor", "aten.lt.Tensor", SAME)                                      \
  X("aten.less.Scalar", "aten.lt.Scalar", SAME)                                      \
  X("aten.less_equal.Tensor", "aten.le.Tensor", SAME)                                \
  X("aten.less_equal.Scalar", "aten.le.Scalar", SAME)                                \
  X("aten.not_equal.Tensor", "aten.ne.Tensor", SAME)                                 \
  X("aten.not_equal.Scalar", "aten.ne.Scalar", SAME)                                 \
  X("aten.max.other", "aten.maximum.default", SAME)                                  \
  X("aten.min.other", "aten.minimum.default", SAME)                                  \
  X("aten.clip.default", "aten.clamp.default", SAME)                                 \
  X("aten.clip.Tensor", "aten.clamp.Tensor", SAME)                                   \
  /* bits: Python's operators and the Scalar overloads */                           \
  X("aten.__and__.Scalar", "aten.bitwise_and.Scalar", SAME)                          \
  X("aten.__or__.Scalar", "aten.bitwise_or.Scalar", SAME)                            \
  X("aten.__or__.Tensor", "aten.bitwise_or.Tensor", SAME)                            \
  X("aten.__xor__.Scalar", "aten.bitwise_xor.Scalar", SAME)                          \
  X("aten.__xor__.Tensor", "aten.bitwise_xor.Tensor", SAME)                          \
  X("aten.__lshift__.Scalar", "aten.bitwise_left_shift.Tensor", SAME)                \
  X("aten.__lshift__.Tensor", "aten.bitwise_left_shift.Tensor", SAME)                \
  X("aten.__rshift__.Scalar", "aten.bitwise_right_shift.Tensor", SAME)               \
  X("aten.__rshift__.Tensor", "aten.bitwise_right_shift.Tensor", SAME)               \
  X("aten.bitwise_left_shift.Tensor_Scalar", "aten.bitwise_left_shift.Tensor", SAME) \
  X("aten.bitwise_left_shift.Scalar_Tensor", "aten.bitwise_left_shift.Tensor", SAME) \
  X("aten.bitwise_right_shift.Tensor_Scalar", "aten.bitwise_right_shift.Tensor", SAME) \
  X("aten.bitwise_right_shift.Scalar_Tensor", "aten.bitwise_right_shift.Tensor", SAME) \
  X("aten.bitwise_and.Scalar_Tensor", "aten.bitwise_and.Scalar", SWAP)               \
  X("aten.bitwise_or.Scalar_Tensor", "aten.bitwise_or.Scalar", SWAP)                 \
  X("aten.bitwise_xor.Scalar_Tensor", "aten.bitwise_xor.Scalar", SWAP)               \
  /* selection */                                                                    \
  X("aten.where.Scalar", "aten.where.self", SAME)                                    \
  X("aten.where.ScalarSelf", "aten.where.self", SAME)                                \
  X("aten.where.ScalarOther", "aten.where.self", SAME)                               \
  /* torch.special's names */                                                        \
  X("aten.special_digamma.default", "aten.digamma.default", SAME)                    \
  X("aten.special_psi.default", "aten.digamma.default", SAME)                        \
  X("aten.special_erf.default", "aten.erf.default", SAME)                            \
  X("aten.special_erfc.default", "aten.erfc.default", SAME)                          \
  X("aten.special_erfinv.default", "aten.erfinv.default", SAME)                      \
  X("aten.special_exp2.default", "aten.exp2.default", SAME)                          \
  X("aten.special_expit.default", "aten.sigmoid.default", SAME)                      \
  X("aten.special_expm1.default", "aten.expm1.default", SAME)                        \
  X("aten.special_gammainc.default", "aten.igamma.default", SAME)                    \
  X("aten.special_gammaincc.default", "aten.igammac.default", SAME)                  \
  X("aten.special_gammaln.default", "aten.lgamma.default", SAME)                     \
  X("aten.special_i0.default", "aten.i0.default", SAME)                              \
  X("aten.special_log1p.default", "aten.log1p.default", SAME)                        \
  X("aten.special_logit.default", "aten.logit.default", SAME)                        \
  X("aten.special_sinc.default", "aten.sinc.default", SAME)                          \
  X("aten.special_round.default", "aten.round.decimals", SAME)                       \
  X("aten.special_polygamma.default", "aten.polygamma.default", SAME)                \
  X("aten.special_multigammaln.default", "aten.mvlgamma.default", SAME)              \
  X("aten.special_log_softmax.default", "aten.log_softmax.int", SAME)                \
  X("aten.special_softmax.default", "aten.softmax.int", SAME)                        \
  ALLOY_POLY_ALIASES(X, "chebyshev_polynomial_t")                                    \
  ALLOY_POLY_ALIASES(X, "chebyshev_polynomial_u")                                    \
  ALLOY_POLY_ALIASES(X, "chebyshev_polynomial_v")                                    \
  ALLOY_POLY_ALIASES(X, "chebyshev_polynomial_w")                                    \
  ALLOY_POLY_ALIASES(X, "shifted_chebyshev_polynomial_t")                            \
  ALLOY_POLY_ALIASES(X, "shifted_chebyshev_polynomial_u")                            \
  ALLOY_POLY_ALIASES(X, "shifted_chebyshev_polynomial_v")                            \
  ALLOY_POLY_ALIASES(X, "shifted_chebyshev_polynomial_w")                            \
  ALLOY_POLY_ALIASES(X, "hermite_polynomial_h")                                      \
  ALLOY_POLY_ALIASES(X, "hermite_polynomial_he")                                     \
  ALLOY_POLY_ALIASES(X, "laguerre_polynomial_l")                                     \
  ALLOY_POLY_ALIASES(X, "legendre_polynomial_p")

#endif
