/*
 * decompositions/rules_backward.c: the backward ops of activations, losses
 * and views, from ATen to Core ATen: tanh_backward, gelu_backward, ...,
 * mse_loss_backward, nll_loss_backward, ..., select_backward,
 * slice_backward, unfold_backward, masked_select_backward and the like.
 * The backward ops of norms, pooling, padding, upsampling, convolution and
 * embedding are in rules_backward_nn.c; their shape functions are in
 * ir/meta_backward.c.
 *
 * The math is PyTorch's decompositions (torch/_decomp/decompositions.py)
 * and, where the CPU kernel decides an edge differently (a comparison that
 * lets NaN through, a boundary taken on the other side), the kernel's,
 * because PyTorch's recorded results come from the CPU kernels. Pointwise
 * gradients of float16 and bfloat16 are computed in float32 and rounded
 * once, as the kernels' float paths do; composite ones (soft_margin,
 * infinitely_differentiable_gelu) round after each op as eager PyTorch.
 */
#include <math.h>
#include <string.h>

#include "decompositions/rules.h"
#include "decompositions/rules_nn_util.h"

enum { REDUCE_NONE = 0, REDUCE_MEAN = 1, REDUCE_SUM = 2 };

/* --- helpers -------------------------------------------------------------------*/

/* The computation dtype of the node's result: float32 for float16 and
 * bfloat16, the dtype itself otherwise. */
static alloy_dtype comp_dtype(decomp *d) { return d_opmath(d_out_dtype(d, 0)); }

/* Tensor argument i in the computation dtype. */
static alloy_value *in_comp(decomp *d, int i) { return d_to(d, d_tensor(d, i), comp_dtype(d)); }

/* y, rounded to the node's output dtype, is output 0. */
static void out_back(decomp *d, alloy_value *y) { d_out(d, 0, d_to(d, y, d_out_dtype(d, 0))); }

/* Complex gradients take conjugates this file does not build. */
static bool decline_complex(decomp *d) {
  if (!alloy_dtype_is_complex(d_out_dtype(d, 0))) return false;
  d_decline(d, "complex gradients are not decomposed");
  return true;
}

static alloy_value *where(decomp *d, alloy_value *c, alloy_arg a, alloy_arg b) {
  return D(d, "aten.where.self", V(c), a, b);
}

static alloy_value *and_(decomp *d, alloy_value *a, alloy_value *b) {
  return D(d, "aten.logical_and.default", V(a), V(b));
}

static alloy_value *or_(decomp *d, alloy_value *a, alloy_value *b) {
  return D(d, "aten.logical_or.default", V(a), V(b));
}

/* 1 / (1 + exp(-x)), as the CPU kernels write the sigmoid */
static alloy_value *sigmoid_of(decomp *d, alloy_value *x) {
  alloy_value *e = D(d, "aten.exp.default", V(nn_neg(d, x)));
  return D(d, "aten.reciprocal.default", V(D(d, "aten.add.Tensor", V(e), I(1))));
}

/* A tensor of zeros of the given (symbolic) shape and dtype. */
static alloy_value *zeros(decomp *d, const alloy_dim *shape, int n, alloy_dtype t) {
  return D(d, "aten.full.default", d_dim_list(d, shape, n), I(0), DT(t));
}

/* The int[] argument i as a shape. */
static int sizes_of(decomp *d, int i, alloy_dim *out) {
  int n = d_dims(d, i, out, ALLOY_MAX_RANK);
  if (n < 0) d_fail(d, "argument %d: expected a list of sizes", i);
  return n;
}

/* --- activations -----------------------------------------------------------------*/

/* tanh_backward(g, y) = g (1 - y^2) */
static void tanh_backward(decomp *d) {
  if (decline_complex(d)) return;
  alloy_value *g = in_comp(d, 0), *y = in_comp(d, 1);
  alloy_value *dy = D(d, "aten.rsub.Scalar", V(nn_mul(d, y, y)), I(1));
  out_back(d, nn_mul(d, g, dy));
}

/* sigmoid_backward(g, y) = g (1 - y) y */
static void sigmoid_backward(decomp *d) {
  if (decline_complex(d)) return;
  alloy_value *g = in_comp(d, 0), *y = in_comp(d, 1);
  out_back(d, nn_mul(d, nn_mul(d, g, D(d, "aten.rsub.Scalar", V(y), I(1))), y));
}

/* softplus_backward(g, x, beta, threshold): g where beta x passes the
 * threshold, else g z / (z + 1) with z = exp(beta x) */
static void softplus_backward(decomp *d) {
  alloy_value *g = in_comp(d, 0), *x = in_comp(d, 1);
  alloy_value *bx = D(d, "aten.mul.Tensor", V(x), *d_arg(d, 2));
  alloy_value *z = D(d, "aten.exp.default", V(bx));
  alloy_value *soft = D(d, "aten.div.Tensor", V(nn_mul(d, g, z)), V(D(d, "aten.add.Tensor", V(z), I(1))));
  out_back(d, where(d, D(d, "aten.gt.Scalar", V(bx), *d_arg(d, 3)), V(g), V(soft)));
}

/* elu_backward(g, alpha, scale, input_scale, is_result, self_or_result):
 * g scale for positive inputs; below, g input_scale (y + alpha scale) from
 * the result, g input_scale alpha scale exp(x input_scale) from the input.
 * The kernel tests x > 0, so NaN takes the negative branch. */
static void elu_backward(decomp *d) {
  alloy_value *g = in_comp(d, 0), *x = in_comp(d, 5);
  double alpha = d_float(d, 1), scale = d_float(d, 2), in_scale = d_float(d, 3);
  double negcoef = alpha * scale;
  alloy_value *neg;
  if (d_bool(d, 4))
    neg = nn_mul(d, nn_mulf(d, g, in_scale), D(d, "aten.add.Tensor", V(x), F(negcoef)));
  else
    neg = nn_mul(d, nn_mulf(d, nn_mulf(d, g, in_scale), negcoef),
                 D(d, "aten.exp.default", V(nn_mulf(d, x, in_scale))));
  out_back(d, where(d, D(d, "aten.gt.Scalar", V(x), I(0)), V(nn_mulf(d, g, scale)), V(neg)));
}

/* hardsigmoid_backward(g, x) = g / 6 on (-3, 3), else 0 */
static void hardsigmoid_backward(decomp *d) {
  alloy_value *g = in_comp(d, 0), *x = in_comp(d, 1);
  alloy_value *inside = and_(d, D(d, "aten.gt.Scalar", V(x), I(-3)), D(d, "aten.lt.Scalar", V(x), I(3)));
  out_back(d, where(d, inside, V(nn_mulf(d, g, (double)(1.0f / 6.0f))), I(0)));
}

/* hardswish_backward(g, x): 0 below -3, g above 3 (the vectorized
 * kernel's x >= 3), g (x / 3 + 1/2) between */
static void hardswish_backward(decomp *d) {
  alloy_value *g = in_comp(d, 0), *x = in_comp(d, 1);
  alloy_value *mid = nn_mul(d, g, D(d, "aten.add.Tensor", V(D(d, "aten.div.Tensor", V(x), I(3))), F(0.5)));
  alloy_value *r = where(d, D(d, "aten.ge.Scalar", V(x), I(3)), V(g), V(mid));
  out_back(d, where(d, D(d, "aten.lt.Scalar", V(x), I(-3)), I(0), V(r)));
}

/* hardtanh_backward(g, x, min, max) = g strictly inside (min, max), else 0
 * (NaN too, as the vectorized kernel) */
static void hardtanh_backward(decomp *d) {
  alloy_value *g = d_to(d, d_tensor(d, 0), d_out_dtype(d, 0)), *x = d_tensor(d, 1);
  alloy_value *inside = and_(d, D(d, "aten.gt.Scalar", V(x), *d_arg(d, 2)),
                             D(d, "aten.lt.Scalar", V(x), *d_arg(d, 3)));
  d_out(d, 0, where(d, inside, V(g), I(0)));
}

/* hardshrink_backward / softshrink_backward(g, x, lambd) = g outside
 * [-lambd, lambd], else 0 */
static void shrink_backward(decomp *d) {
  alloy_value *g = d_to(d, d_tensor(d, 0), d_out_dtype(d, 0)), *x = d_tensor(d, 1);
  double l = d_float(d, 2);
  alloy_value *out = or_(d, D(d, "aten.lt.Scalar", V(x), F(-l)), D(d, "aten.gt.Scalar", V(x), F(l)));
  d_out(d, 0, where(d, out, V(g), I(0)));
}

/* threshold_backward(g, x, threshold) = 0 where x <= threshold, else g;
 * an integer x compares with the truncated threshold. */
static void threshold_backward(decomp *d) {
  alloy_value *g = d_to(d, d_tensor(d, 0), d_out_dtype(d, 0)), *x = d_tensor(d, 1);
  alloy_value *below = D(d, "aten.le.Scalar", V(x), nn_scalar(d, 2, d_dtype(x)));
  d_out(d, 0, where(d, below, I(0), V(g)));
}

/* leaky_relu_backward(g, x, slope, self_is_result) = g where x > 0, else
 * g slope */
static alloy_value *leaky_of(decomp *d, alloy_value *g, alloy_value *x, double slope) {
  return where(d, D(d, "aten.gt.Scalar", V(x), I(0)), V(g), V(nn_mulf(d, g, slope)));
}

static void leaky_relu_backward(decomp *d) {
  double slope = d_float(d, 2);
  if (d_bool(d, 3) && slope < 0) {
    d_fail(d, "leaky_relu_backward: the in-place backward (self_is_result) is not supported "
              "with a negative slope (argument 'negative_slope' is %g)", slope);
    return;
  }
  out_back(d, leaky_of(d, in_comp(d, 0), in_comp(d, 1), slope));
}

/* rrelu_with_noise_backward(g, x, noise, lower, upper, training,
 * self_is_result): g noise when training with a range of slopes, else
 * leaky_relu_backward with the mean slope */
static void rrelu_with_noise_backward(decomp *d) {
  double lower = d_float(d, 3), upper = d_float(d, 4);
  if (d_bool(d, 5) && upper - lower > 1e-6) {
    out_back(d, nn_mul(d, in_comp(d, 0), in_comp(d, 2)));
    return;
  }
  out_back(d, leaky_of(d, in_comp(d, 0), in_comp(d, 1), (lower + upper) / 2));
}

/* gelu_backward(g, x, approximate): the derivative of x Phi(x), or of its
 * tanh approximation */
static void gelu_backward(decomp *d) {
  alloy_value *g = in_comp(d, 0), *x = in_comp(d, 1);
  const char *approx = d_str(d, 2);
  if (approx && !strcmp(approx, "tanh")) {
    const double beta = M_SQRT2 * M_2_SQRTPI * 0.5, kappa = 0.044715;
    alloy_value *x2 = nn_mul(d, x, x);
    alloy_value *inner = nn_mulf(d, nn_add(d, x, nn_mulf(d, nn_mul(d, x2, x), kappa)), beta);
    alloy_value *t = D(d, "aten.tanh.default", V(inner));
    alloy_value *left = nn_mulf(d, x, 0.5);
    alloy_value *right = D(d, "aten.add.Tensor", V(t), I(1));
    alloy_value *dleft = nn_mulf(d, right, 0.5);
    alloy_value *dtanh = D(d, "aten.rsub.Scalar", V(nn_mul(d, t, t)), I(1));
    alloy_value *dinner = nn_mulf(d, D(d, "aten.add.Tensor", V(nn_mulf(d, x2, 3 * kappa)), I(1)), beta);
    alloy_value *dright = nn_mul(d, nn_mul(d, left, dtanh), dinner);
    out_back(d, nn_mul(d, g, nn_add(d, dleft, dright)));
    return;
  }
  if (approx && strcmp(approx, "none")) {
    d_fail(d, "argument 'approximate' must be 'none' or 'tanh', got '%s'", approx);
    return;
  }
  const double alpha = M_SQRT1_2, beta = M_2_SQRTPI * M_SQRT1_2 * 0.5;
  alloy_value *cdf = nn_mulf(d, D(d, "aten.add.Tensor", V(D(d, "aten.erf.default", V(nn_mulf(d, x, alpha)))),
                                  I(1)), 0.5);
  alloy_value *pdf = nn_mulf(d, D(d, "aten.exp.default", V(nn_mulf(d, nn_mul(d, x, x), -0.5))), beta);
  out_back(d, nn_mul(d, g, nn_add(d, cdf, nn_mul(d, x, pdf))));
}

/* infinitely_differentiable_gelu_backward(g, x) = g (Phi(x) + x phi(x)),
 * ATen's composite, one eager op after the other */
static void infinitely_differentiable_gelu_backward(decomp *d) {
  alloy_value *g = d_tensor(d, 0), *x = d_tensor(d, 1);
  const double alpha = M_2_SQRTPI * M_SQRT1_2 * 0.5;
  alloy_value *cdf = D(d, "aten.erf.default", V(nn_mulf(d, x, M_SQRT1_2)));
  cdf = nn_mulf(d, D(d, "aten.add.Tensor", V(cdf), I(1)), 0.5);
  alloy_value *pdf = D(d, "aten.exp.default", V(nn_mul(d, nn_mulf(d, x, -0.5), x)));
  alloy_value *sum = D(d, "aten.add.Tensor", V(cdf), V(nn_mulf(d, nn_mul(d, x, pdf), alpha)));
  d_out(d, 0, d_to(d, nn_mul(d, sum, g), d_out_dtype(d, 0)));
}

/* mish_backward(g, x) = g (t + x sigmoid(x) (1 - t^2)), t = tanh(softplus(x)) */
static void mish_backward(decomp *d) {
  alloy_value *g = in_comp(d, 0), *x = in_comp(d, 1);
  alloy_value *t = D(d, "aten.tanh.default",
                     V(D(d, "aten.log1p.default", V(D(d, "aten.exp.default", V(x))))));
  alloy_value *dt = D(d, "aten.rsub.Scalar", V(nn_mul(d, t, t)), I(1));
  alloy_value *r = nn_add(d, t, nn_mul(d, nn_mul(d, x, sigmoid_of(d, x)), dt));
  out_back(d, nn_mul(d, g, r));
}

/* silu_backward(g, x) = g s (1 + x (1 - s)), s = sigmoid(x) */
static void silu_backward(decomp *d) {
  if (decline_complex(d)) return;
  alloy_value *g = in_comp(d, 0), *x = in_comp(d, 1);
  alloy_value *s = sigmoid_of(d, x);
  alloy_value *r = D(d, "aten.add.Tensor", V(nn_mul(d, x, D(d, "aten.rsub.Scalar", V(s), I(1)))), I(1));
  out_back(d, nn_mul(d, nn_mul(d, g, s), r));
}

/* log_sigmoid_backward(g, x, buffer): with b = exp(-|x|) from the forward
 * (the CPU kernel uses its buffer), g (1 - b / (1 + b)) for negative x and
 * g b / (1 + b) otherwise */
static void log_sigmoid_backward(decomp *d) {
  alloy_value *g = in_comp(d, 0), *x = in_comp(d, 1), *b = in_comp(d, 2);
  alloy_value *q = D(d, "aten.div.Tensor", V(b), V(D(d, "aten.add.Tensor", V(b), I(1))));
  alloy_value *neg = D(d, "aten.lt.Scalar", V(x), I(0));
  alloy_value *deriv = where(d, neg, V(D(d, "aten.rsub.Scalar", V(q), I(1))), V(q));
  out_back(d, nn_mul(d, deriv, g));
}

/* logit_backward(g, x, eps) = g / (x (1 - x)); without eps NaN outside
 * [0, 1], with it 0 outside [eps, 1 - eps] */
static void logit_backward(decomp *d) {
  alloy_value *g = in_comp(d, 0), *x = in_comp(d, 1);
  double eps = d_is_none(d, 2) ? -1.0 : d_float(d, 2);
  alloy_value *r = D(d, "aten.div.Tensor", V(g),
                     V(nn_mul(d, x, D(d, "aten.rsub.Scalar", V(x), I(1)))));
  if (eps < 0) {
    alloy_value *outside = or_(d, D(d, "aten.lt.Scalar", V(x), I(0)), D(d, "aten.gt.Scalar", V(x), I(1)));
    out_back(d, where(d, outside, F(NAN), V(r)));
  } else {
    alloy_value *outside =
        or_(d, D(d, "aten.lt.Scalar", V(x), F(eps)), D(d, "aten.gt.Scalar", V(x), F(1.0 - eps)));
    out_back(d, where(d, outside, I(0), V(r)));
  }
}

/* _prelu_kernel_backward(g, x, w) = (g where x > 0 else w g,
 *                                    0 where x > 0 else x g) */
static void prelu_kernel_backward(decomp *d) {
  alloy_value *g = in_comp(d, 0), *x = in_comp(d, 1), *w = in_comp(d, 2);
  alloy_value *pos = D(d, "aten.gt.Scalar", V(x), I(0));
  out_back(d, where(d, pos, V(g), V(nn_mul(d, w, g))));
  d_out(d, 1, d_to(d, where(d, pos, I(0), V(nn_mul(d, x, g))), d_out_dtype(d, 1)));
}

/* native_dropout_backward(g, mask, scale) = g (mask scale), each op eager */
static void native_dropout_backward(decomp *d) {
  alloy_value *g = d_tensor(d, 0);
  alloy_value *m = d_to(d, d_tensor(d, 1), d_dtype(g));
  alloy_value *r = nn_mul(d, g, D(d, "aten.mul.Tensor", V(m), *d_arg(d, 2)));
  d_out(d, 0, d_to(d, r, d_out_dtype(d, 0)));
}

/* glu_backward(g, x, dim): with a, b the halves of x and s = sigmoid(b),
 * the gradient of a is s g and that of b (1 - s) s a g. The halves are
 * read through a view of dim as [2, n / 2] (see glu in rules_activation.c). */
static void glu_backward(decomp *d) {
  alloy_value *g = d_tensor(d, 0), *x = d_tensor(d, 1);
  int rank = d_rank(x), dim = d_wrap_dim(d, d_int(d, 2), rank);
  if (d_failed(d)) return;
  alloy_dim shape[ALLOY_MAX_RANK + 1];
  for (int k = 0, j = 0; k < rank; k++) {
    if (k == dim) {
      shape[j++] = alloy_dim_const(2);
      shape[j++] = alloy_dim_floordiv(d_symtab(d), d_shape(x)[k], alloy_dim_const(2));
    } else {
      shape[j++] = d_shape(x)[k];
    }
  }
  alloy_dtype t = d_out_dtype(d, 0), c = d_opmath(t);
  alloy_value *pair = D(d, "aten.view.default", V(x), d_dim_list(d, shape, rank + 1));
  alloy_value *a = D(d, "aten.select.int", V(pair), I(dim), I(0));
  alloy_value *b = D(d, "aten.select.int", V(pair), I(dim), I(1));
  /* the kernel keeps sigmoid(b) in the dtype, then multiplies */
  alloy_value *s = d_to(d, D(d, "aten.sigmoid.default", V(d_to(d, b, c))), t);
  alloy_value *ga = d_to(d, nn_mul(d, d_to(d, s, c), d_to(d, g, c)), t);
  alloy_value *sc = d_to(d, s, c);
  alloy_value *gb = nn_mul(d, nn_mul(d, nn_mul(d, D(d, "aten.rsub.Scalar", V(sc), I(1)), sc), d_to(d, a, c)),
                           d_to(d, g, c));
  alloy_value *halves[2] = {nn_unsqueeze(d, ga, dim), nn_unsqueeze(d, d_to(d, gb, t), dim)};
  alloy_value *both = D(d, "aten.cat.default", d_value_list(d, halves, 2), I(dim));
  d_out(d, 0, D(d, "aten.view.default", V(both), d_dim_list(d, d_shape(x), rank)));
}

/* _log_softmax_backward_data(g, y, dim, input_dtype) = g - exp(y) sum(g, dim) */
static void log_softmax_backward_data(decomp *d) {
  alloy_dtype c = d_opmath(d_out_dtype(d, 0));
  alloy_value *g = d_to(d, d_tensor(d, 0), c), *y = d_to(d, d_tensor(d, 1), c);
  alloy_value *sum = D(d, "aten.sum.dim_IntList", V(g), LIST(I(d_int(d, 2))), B(true));
  out_back(d, nn_sub(d, g, nn_mul(d, D(d, "aten.exp.default", V(y)), sum)));
}

/* --- losses ----------------------------------------------------------------------*/

/* 1 / numel(x) for a mean, 1 otherwise, times k: the norm the loss
 * kernels scale by. A symbolic numel is a SymInt divisor instead. */
static alloy_value *scale_norm(decomp *d, alloy_value *v, alloy_value *x, int64_t reduction, double k) {
  if (reduction != REDUCE_MEAN) return k == 1 ? v : nn_mulf(d, v, k);
  alloy_dim n = nn_prod(d, d_shape(x), d_rank(x));
  if (alloy_dim_is_const(n)) return nn_mulf(d, v, k / (double)n.value);
  return D(d, "aten.div.Tensor", V(k == 1 ? v : nn_mulf(d, v, k)), SYM(n));
}

/* mse_loss_backward(g, x, y, reduction) = norm (x - y) g, norm = 2 / numel
 * for a mean and 2 otherwise */
static void mse_loss_backward(decomp *d) {
  alloy_value *g = in_comp(d, 0), *x = in_comp(d, 1), *y = in_comp(d, 2);
  alloy_value *r = scale_norm(d, nn_sub(d, x, y), d_tensor(d, 1), d_int(d, 3), 2.0);
  out_back(d, nn_mul(d, r, g));
}

/* smooth_l1_loss_backward(g, x, y, reduction, beta): with z = x - y,
 * -norm g at or below -beta, norm g at or above beta, norm z g / beta
 * between */
static void smooth_l1_loss_backward(decomp *d) {
  alloy_value *g = in_comp(d, 0), *x = in_comp(d, 1), *y = in_comp(d, 2);
  double beta = d_float(d, 4);
  alloy_value *z = nn_sub(d, x, y);
  alloy_value *ng = scale_norm(d, g, d_tensor(d, 1), d_int(d, 3), 1.0);
  alloy_value *mid = D(d, "aten.div.Tensor", V(nn_mul(d, ng, z)), F(beta));
  alloy_value *r = where(d, D(d, "aten.ge.Scalar", V(z), F(beta)), V(ng), V(mid));
  out_back(d, where(d, D(d, "aten.le.Scalar", V(z), F(-beta)), V(nn_neg(d, ng)), V(r)));
}

/* huber_loss_backward(g, x, y, reduction, delta): with z = x - y,
 * -norm g delta at or below -delta, norm g delta at or above delta,
 * norm z g between */
static void huber_loss_backward(decomp *d) {
  alloy_value *g = in_comp(d, 0), *x = in_comp(d, 1), *y = in_comp(d, 2);
  double delta = d_float(d, 4);
  alloy_value *z = nn_sub(d, x, y);
  alloy_value *ng = scale_norm(d, g, d_tensor(d, 1), d_int(d, 3), 1.0);
  alloy_value *edge = nn_mulf(d, ng, delta);
  alloy_value *r = where(d, D(d, "aten.ge.Scalar", V(z), F(delta)), V(edge), V(nn_mul(d, ng, z)));
  out_back(d, where(d, D(d, "aten.le.Scalar", V(z), F(-delta)), V(nn_neg(d, edge)), V(r)));
}

/* soft_margin_loss_backward(g, x, y, reduction) = -norm y z / (1 + z) g
 * with z = exp(-y x), in ATen's order of eager ops */
static void soft_margin_loss_backward(decomp *d) {
  alloy_value *g = d_tensor(d, 0), *x = d_tensor(d, 1), *y = d_tensor(d, 2);
  alloy_value *z = D(d, "aten.exp.default", V(nn_mul(d, nn_neg(d, y), x)));
  alloy_value *r = scale_norm(d, nn_mul(d, y, z), x, d_int(d, 3), -1.0);
  r = D(d, "aten.div.Tensor", V(r), V(D(d, "aten.add.Tensor", V(z), I(1))));
  d_out(d, 0, d_to(d, nn_mul(d, r, g), d_out_dtype(d, 0)));
}

/* binary_cross_entropy_backward(g, x, y, weight, reduction) =
 * g (x - y) / max((1 - x) x, 1e-12), times weight, over numel for a mean.
 * The kernel computes in the dtype itself, each op rounded (float16
 * included: its epsilon is 0 there). */
static void binary_cross_entropy_backward(decomp *d) {
  alloy_dtype t = d_out_dtype(d, 0);
  alloy_value *g = d_to(d, d_tensor(d, 0), t), *x = d_to(d, d_tensor(d, 1), t),
              *y = d_to(d, d_tensor(d, 2), t);
  alloy_value *w = d_tensor(d, 3);
  alloy_value *den = D(d, "aten.clamp.default", V(nn_mul(d, D(d, "aten.rsub.Scalar", V(x), I(1)), x)),
                       F(t == ALLOY_F16 ? 0.0 : 1e-12));
  alloy_value *r = D(d, "aten.div.Tensor", V(nn_mul(d, g, nn_sub(d, x, y))), V(den));
  if (w) r = nn_mul(d, r, w);
  if (d_int(d, 4) == REDUCE_MEAN) {
    alloy_dim n = nn_prod(d, d_shape(d_tensor(d, 1)), d_rank(d_tensor(d, 1)));
    r = D(d, "aten.div.Tensor", V(r), SYM(n));
  }
  d_out(d, 0, d_to(d, r, t));
}

/* nll_loss_backward / nll_loss2d_backward(g, x, target, weight, reduction,
 * ignore_index, total_weight): -g (divided by total_weight for a mean,
 * times the class weight) at each target's class, 0 elsewhere and for
 * ignored targets. */
static void nll_loss_backward(decomp *d) {
  alloy_value *g = d_tensor(d, 0), *x = d_tensor(d, 1), *target = d_tensor(d, 2), *w = d_tensor(d, 3);
  alloy_value *tw = d_tensor(d, 6);
  int rank = d_rank(x), cd = rank < 2 ? 0 : 1;
  if (d_int(d, 4) == REDUCE_MEAN) g = D(d, "aten.div.Tensor", V(g), V(tw));
  alloy_value *t = nn_unsqueeze(d, target, cd);
  alloy_value *keep = D(d, "aten.ne.Scalar", V(t), *d_arg(d, 5));
  alloy_value *safe = where(d, keep, V(t), I(0));
  alloy_value *gi = D(d, "aten.scatter.value", V(zeros(d, d_shape(x), rank, d_dtype(x))), I(cd), V(safe),
                      F(-1.0));
  if (rank > d_rank(g) && d_rank(g) > 0) g = nn_unsqueeze(d, g, cd);
  if (w) {
    alloy_dim ws[ALLOY_MAX_RANK];
    for (int k = 0; k < rank; k++) ws[k] = alloy_dim_const(1);
    ws[cd] = d_shape(w)[0];
    g = nn_mul(d, g, nn_reshape(d, w, ws, rank));
  }
  g = where(d, keep, V(g), I(0));
  d_out(d, 0, d_to(d, nn_mul(d, gi, g), d_out_dtype(d, 0)));
}

/* multi_margin_loss_backward(g, x, target, p, margin, weight, reduction):
 * per row, with z_d = margin - x[y] + x[d], each other class d with z_d > 0
 * gets h = s (p 1) or 2 s z_d (p 2) times weight[y], and the target class
 * minus their sum; s is 1 / C (1 / (N C) for a mean) and everything is then
 * scaled by grad_output, as the CPU kernel does. */
static void multi_margin_loss_backward(decomp *d) {
  alloy_value *g = d_tensor(d, 0), *x = d_tensor(d, 1), *y = d_tensor(d, 2), *w = d_tensor(d, 5);
  int64_t p = d_int(d, 3), reduction = d_int(d, 6);
  if (p != 1 && p != 2) return (void)d_fail(d, "argument 'p': only p == 1 and p == 2 are supported");
  int rank = d_rank(x);
  alloy_dim n = rank == 2 ? d_shape(x)[0] : alloy_dim_const(1),
            c = rank >= 1 ? d_shape(x)[rank - 1] : alloy_dim_const(1);
  alloy_dim rows[2] = {n, c}, col[2] = {n, alloy_dim_const(1)};
  if (!alloy_dim_is_const(n) || !alloy_dim_is_const(c)) return d_decline(d, "symbolic sizes");
  double s = reduction == REDUCE_MEAN ? 1.0 / (double)(n.value * c.value) : 1.0 / (double)c.value;
  alloy_value *x2 = nn_reshape(d, x, rows, 2), *y2 = nn_reshape(d, y, col, 2);
  alloy_value *xy = D(d, "aten.gather.default", V(x2), I(1), V(y2));
  alloy_value *z = nn_add(d, D(d, "aten.rsub.Scalar", V(xy), *d_arg(d, 4)), x2);
  alloy_value *cls = D(d, "aten.arange.start_step", I(0), SYM(c), I(1), DT(ALLOY_I64));
  alloy_value *other = D(d, "aten.ne.Tensor", V(nn_unsqueeze(d, cls, 0)), V(y2));
  alloy_value *on = and_(d, other, D(d, "aten.gt.Scalar", V(z), I(0)));
  alloy_value *h = p == 1 ? D(d, "aten.full.default", d_dim_list(d, rows, 2), F(s), DT(d_dtype(x)))
                           : nn_mulf(d, z, 2 * s);
  if (w) h = nn_mul(d, h, D(d, "aten.index_select.default", V(w), I(0), V(nn_reshape(d, y, &n, 1))));
  h = where(d, on, V(h), I(0));
  alloy_value *sum = D(d, "aten.sum.dim_IntList", V(h), LIST(I(1)), B(true));
  alloy_value *gi = where(d, other, V(h), V(nn_neg(d, sum)));
  if (reduction == REDUCE_NONE && d_rank(g) > 0) g = nn_reshape(d, g, col, 2);
  gi = nn_mul(d, gi, g);
  d_out(d, 0, nn_view(d, gi, d_shape(x), rank));
}

/* multilabel_margin_loss_backward(g, x, target, reduction, is_target): for
 * each row, the targets are the classes before the first -1; every pair of
 * a target t and a non-target d with 1 - x[t] + x[d] > 0 adds s to d and
 * takes s from t (s = 1 / C, or 1 / (N C) for a mean); then scaled by
 * grad_output. */
static void multilabel_margin_loss_backward(decomp *d) {
  alloy_value *g = d_tensor(d, 0), *x = d_tensor(d, 1), *y = d_tensor(d, 2), *ist = d_tensor(d, 4);
  int64_t reduction = d_int(d, 3);
  int rank = d_rank(x);
  alloy_dim n = rank == 2 ? d_shape(x)[0] : alloy_dim_const(1),
            c = rank >= 1 ? d_shape(x)[rank - 1] : alloy_dim_const(1);
  if (!alloy_dim_is_const(n) || !alloy_dim_is_const(c)) return d_decline(d, "symbolic sizes");
  alloy_dim rows[2] = {n, c}, col[2] = {n, alloy_dim_const(1)}, cube[3] = {n, c, alloy_dim_const(1)};
  double s = reduction == REDUCE_MEAN ? 1.0 / (double)(n.value * c.value) : 1.0 / (double)c.value;
  alloy_value *x2 = nn_reshape(d, x, rows, 2), *y2 = nn_reshape(d, y, rows, 2);
  /* valid targets: a running product of (y >= 0) */
  alloy_value *valid =
      D(d, "aten.cumprod.default", V(D(d, "aten.ge.Scalar", V(y2), I(0))), I(1), DT(ALLOY_I64));
  valid = D(d, "aten.ne.Scalar", V(valid), I(0));
  alloy_value *safe = where(d, valid, V(y2), I(0));
  alloy_value *xt = D(d, "aten.gather.default", V(x2), I(1), V(safe));            /* [N, C]: x[t_j] */
  alloy_value *z =
      nn_add(d, D(d, "aten.rsub.Scalar", V(nn_reshape(d, xt, cube, 3)), I(1)), nn_unsqueeze(d, x2, 1));
  alloy_value *nontarget = nn_unsqueeze(d, D(d, "aten.eq.Scalar", V(nn_reshape(d, ist, rows, 2)), I(0)), 1);
  alloy_value *on = and_(d, and_(d, D(d, "aten.gt.Scalar", V(z), I(0)), nontarget),
                         nn_reshape(d, valid, cube, 3));
  alloy_value *cnt = d_to(d, on, d_dtype(x));                                      /* [N, Cj, Cd] */
  alloy_value *up = nn_mulf(d, D(d, "aten.sum.dim_IntList", V(cnt), LIST(I(1))), s);
  alloy_value *down = nn_mulf(d, D(d, "aten.sum.dim_IntList", V(cnt), LIST(I(2))), -s);
  alloy_value *gi = D(d, "aten.scatter_add.default", V(up), I(1), V(safe), V(down));
  if (reduction == REDUCE_NONE && d_rank(g) > 0) g = nn_reshape(d, g, col, 2);
  gi = nn_mul(d, gi, g);
  d_out(d, 0, nn_view(d, gi, d_shape(x), rank));
}

/* --- views and indexing ----------------------------------------------------------*/

/* select_backward(g, input_sizes, dim, index): g scattered into zeros */
static void select_backward(decomp *d) {
  alloy_dim s[ALLOY_MAX_RANK];
  int n = sizes_of(d, 1, s);
  alloy_value *g = d_tensor(d, 0);
  if (d_failed(d)) return;
  d_out(d, 0, D(d, "aten.select_scatter.default", V(zeros(d, s, n, d_dtype(g))), V(g), *d_arg(d, 2),
                *d_arg(d, 3)));
}

/* slice_backward(g, input_sizes, dim, start, end, step) */
static void slice_backward(decomp *d) {
  alloy_dim s[ALLOY_MAX_RANK];
  int n = sizes_of(d, 1, s);
  alloy_value *g = d_tensor(d, 0);
  if (d_failed(d)) return;
  d_out(d, 0, D(d, "aten.slice_scatter.default", V(zeros(d, s, n, d_dtype(g))), V(g), *d_arg(d, 2),
                *d_arg(d, 3), *d_arg(d, 4), *d_arg(d, 5)));
}

/* diagonal_backward(g, input_sizes, offset, dim1, dim2) */
static void diagonal_backward(decomp *d) {
  alloy_dim s[ALLOY_MAX_RANK];
  int n = sizes_of(d, 1, s);
  alloy_value *g = d_tensor(d, 0);
  if (d_failed(d)) return;
  d_out(d, 0, D(d, "aten.diagonal_scatter.default", V(zeros(d, s, n, d_dtype(g))), V(g), *d_arg(d, 2),
                *d_arg(d, 3), *d_arg(d, 4)));
}

/* trace_backward(g, sizes): g written every (columns + 1) elements of the
 * flattened zero matrix, as ATen does (for a wide or tall matrix that is
 * not only the diagonal: [4, 2] takes (0, 0), (1, 1) and (3, 0)) */
static void trace_backward(decomp *d) {
  alloy_dim s[ALLOY_MAX_RANK];
  int n = sizes_of(d, 1, s);
  alloy_value *g = d_tensor(d, 0);
  if (d_failed(d)) return;
  if (n != 2) return (void)d_fail(d, "argument 'sizes': expected a matrix, got %d sizes", n);
  alloy_symtab *st = d_symtab(d);
  alloy_dim all = alloy_dim_mul(st, s[0], s[1]), step = alloy_dim_add(st, s[1], alloy_dim_const(1));
  alloy_value *at = D(d, "aten.arange.start_step", I(0), SYM(all), SYM(step), DT(ALLOY_I64));
  alloy_value *flat = D(d, "aten.index_put.default", V(zeros(d, &all, 1, d_dtype(g))),
                        d_value_list(d, &at, 1), V(g), B(false));
  d_out(d, 0, nn_view(d, flat, s, 2));
}

/* A 1-d int64 index along dim of a tensor of the given shape, viewed and
 * expanded to that shape (scatter_add's index has its source's shape). */
static alloy_value *index_along(decomp *d, alloy_value *idx, int dim, const alloy_dim *shape, int rank) {
  alloy_dim view[ALLOY_MAX_RANK];
  for (int k = 0; k < rank; k++) view[k] = alloy_dim_const(1);
  view[dim] = d_shape(idx)[0];
  idx = nn_view(d, d_to(d, idx, ALLOY_I64), view, rank);
  return D(d, "aten.expand.default", V(idx), d_dim_list(d, shape, rank));
}

/* unfold_backward(g, input_sizes, dim, size, step): every window's
 * gradient added back at the positions it was taken from. g has the
 * windows along dim and their elements last; moved next to each other and
 * flattened, window w's element k came from position w step + k. */
static void unfold_backward(decomp *d) {
  alloy_dim s[ALLOY_MAX_RANK];
  int n = sizes_of(d, 1, s);
  alloy_value *g = d_tensor(d, 0);
  if (d_failed(d)) return;
  if (n == 0) {
    d_out(d, 0, D(d, "aten.squeeze.dim", V(g), I(0)));
    return;
  }
  int dim = d_wrap_dim(d, d_int(d, 2), n);
  int64_t size = d_int(d, 3), step = d_int(d, 4);
  if (d_failed(d)) return;
  alloy_symtab *st = d_symtab(d);
  const alloy_dim *gs = d_shape(g);
  alloy_dim nw = gs[dim];
  int64_t perm[ALLOY_MAX_RANK + 1];
  for (int k = 0, j = 0; k <= n; k++) {
    if (k == dim + 1) perm[k] = n;
    else perm[k] = j++;
  }
  alloy_value *moved = D(d, "aten.permute.default", V(g), d_int_list(d, perm, n + 1));
  alloy_dim flat[ALLOY_MAX_RANK];
  for (int k = 0; k < n; k++) flat[k] = s[k];
  flat[dim] = alloy_dim_mul(st, nw, alloy_dim_const(size));
  moved = nn_reshape(d, moved, flat, n);
  alloy_value *w = D(d, "aten.arange.start_step", I(0), SYM(nw), I(1), DT(ALLOY_I64));
  alloy_value *k = D(d, "aten.arange.start_step", I(0), I(size), I(1), DT(ALLOY_I64));
  alloy_value *pos =
      nn_add(d, D(d, "aten.mul.Tensor", V(nn_unsqueeze(d, w, 1)), I(step)), nn_unsqueeze(d, k, 0));
  pos = nn_reshape(d, pos, &flat[dim], 1);
  alloy_value *idx = index_along(d, pos, dim, flat, n);
  d_out(d, 0, D(d, "aten.scatter_add.default", V(zeros(d, s, n, d_dtype(g))), I(dim), V(idx), V(moved)));
}

/* index_select_backward(g, self_sizes, dim, index): g added into zeros at
 * the selected positions (index_add, as scatter_add along dim) */
static void index_select_backward(decomp *d) {
  alloy_dim s[ALLOY_MAX_RANK];
  int n = sizes_of(d, 1, s);
  alloy_value *g = d_tensor(d, 0), *idx = d_tensor(d, 3);
  if (d_failed(d)) return;
  if (n == 0) return d_decline(d, "a zero-dim self is not decomposed");
  int dim = d_wrap_dim(d, d_int(d, 2), n);
  if (d_failed(d)) return;
  alloy_dim one = alloy_dim_const(1);
  if (d_rank(idx) == 0) idx = nn_view(d, idx, &one, 1);
  alloy_value *at = index_along(d, idx, dim, d_shape(g), d_rank(g));
  d_out(d, 0, D(d, "aten.scatter_add.default", V(zeros(d, s, n, d_dtype(g))), I(dim), V(at), V(g)));
}

/* value_selecting_reduction_backward(grad, dim, indices, sizes, keepdim):
 * the gradient of max/min/median along dim, scattered to the indices */
static void value_selecting_reduction_backward(decomp *d) {
  alloy_dim s[ALLOY_MAX_RANK];
  int n = sizes_of(d, 3, s);
  alloy_value *g = d_tensor(d, 0), *idx = d_tensor(d, 2);
  if (d_failed(d)) return;
  if (n == 0) {
    d_out(d, 0, g);
    return;
  }
  int dim = d_wrap_dim(d, d_int(d, 1), n);
  if (d_failed(d)) return;
  if (!d_bool(d, 4)) {
    g = nn_unsqueeze(d, g, dim);
    idx = nn_unsqueeze(d, idx, dim);
  }
  d_out(d, 0, D(d, "aten.scatter.src", V(zeros(d, s, n, d_dtype(g))), I(dim), V(idx), V(g)));
}

/* gather_backward(grad, self, dim, index, sparse_grad): the gradients
 * added back at the gathered positions */
static void gather_backward(decomp *d) {
  alloy_value *g = d_tensor(d, 0), *x = d_tensor(d, 1), *idx = d_tensor(d, 3);
  if (d_bool(d, 4)) return d_decline(d, "sparse gradients are not decomposed");
  int rank = d_rank(x);
  if (rank == 0) {
    d_out(d, 0, d_to(d, g, d_dtype(x)));
    return;
  }
  int dim = d_wrap_dim(d, d_int(d, 2), rank);
  d_out(d, 0, D(d, "aten.scatter_add.default", V(zeros(d, d_shape(x), rank, d_dtype(g))), I(dim), V(idx),
                V(g)));
}

/* cummaxmin_backward(grad, input, indices, dim): the gradients added at
 * the positions each running extreme came from */
static void cummaxmin_backward(decomp *d) {
  alloy_value *g = d_tensor(d, 0), *x = d_tensor(d, 1), *idx = d_tensor(d, 2);
  if (d_known_empty(x)) {
    d_out(d, 0, x);
    return;
  }
  int rank = d_rank(x);
  if (rank == 0) {
    d_out(d, 0, d_to(d, g, d_dtype(x)));
    return;
  }
  int dim = d_wrap_dim(d, d_int(d, 3), rank);
  d_out(d, 0, D(d, "aten.scatter_add.default", V(zeros(d, d_shape(x), rank, d_dtype(x))), I(dim), V(idx),
                V(d_to(d, g, d_dtype(x)))));
}

/* cumprod_backward(grad, input, dim, output): ATen's zero-aware formula.
 * With w = output grad, positions before the first zero of their slice get
 * the reversed running sum of w divided by the input; the first zero gets
 * sum(grad_k prod(x[z1+1..k])) over k up to the second zero, times the
 * output just before it; later positions 0. A slice without zeros is the
 * first case throughout, PyTorch's plain formula. */
static alloy_value *reversed_cumsum(decomp *d, alloy_value *x, int dim) {
  alloy_value *f = D(d, "aten.flip.default", V(x), LIST(I(dim)));
  return D(d, "aten.flip.default", V(D(d, "aten.cumsum.default", V(f), I(dim))), LIST(I(dim)));
}

static void cumprod_backward(decomp *d) {
  alloy_value *g = d_tensor(d, 0), *x = d_tensor(d, 1), *y = d_tensor(d, 3);
  if (alloy_dtype_is_complex(d_dtype(x))) return d_decline(d, "complex inputs are not decomposed");
  int rank = d_rank(x);
  if (rank == 0) {
    d_out(d, 0, D(d, "aten.clone.default", V(g)));
    return;
  }
  int dim = d_wrap_dim(d, d_int(d, 2), rank);
  if (d_failed(d)) return;
  alloy_dim n = d_shape(x)[dim];
  if (alloy_dim_is_const(n) && n.value <= 1) {
    d_out(d, 0, D(d, "aten.clone.default", V(g)));
    return;
  }
  alloy_value *w = nn_mul(d, y, g);
  alloy_value *zero = D(d, "aten.eq.Scalar", V(x), I(0));
  alloy_value *count = D(d, "aten.cumsum.default", V(zero), I(dim), DT(ALLOY_I64));
  alloy_value *before = D(d, "aten.eq.Scalar", V(count), I(0));
  alloy_value *gb = D(d, "aten.div.Tensor", V(reversed_cumsum(d, where(d, before, V(w), I(0)), dim)), V(x));
  alloy_value *span = D(d, "aten.eq.Scalar", V(count), I(1));
  alloy_value *first = and_(d, span, zero);
  alloy_value *mid = and_(d, span, D(d, "aten.logical_not.default", V(zero)));
  alloy_value *tail = D(d, "aten.cumprod.default", V(where(d, mid, V(x), I(1))), I(dim));
  alloy_value *sum =
      D(d, "aten.sum.dim_IntList", V(nn_mul(d, tail, where(d, span, V(g), I(0)))), LIST(I(dim)), B(true));
  /* the output just before each position (1 before the first) */
  alloy_dim one_at[ALLOY_MAX_RANK];
  memcpy(one_at, d_shape(y), sizeof *one_at * (size_t)rank);
  one_at[dim] = alloy_dim_const(1);
  alloy_value *parts[2] = {
      D(d, "aten.full.default", d_dim_list(d, one_at, rank), I(1), DT(d_dtype(y))),
      D(d, "aten.slice.Tensor", V(y), I(dim), I(0), SYM(alloy_dim_sub(d_symtab(d), n, alloy_dim_const(1))))};
  alloy_value *prev = D(d, "aten.cat.default", d_value_list(d, parts, 2), I(dim));
  alloy_value *gz = nn_mul(d, sum, prev);
  alloy_value *r = where(d, before, V(gb), V(where(d, first, V(gz), I(0))));
  d_out(d, 0, d_to(d, r, d_out_dtype(d, 0)));
}

/* masked_select_backward(grad, input, mask): zeros of input's shape
 * broadcast with the mask's, grad written at the true positions in order */
static void masked_select_backward(decomp *d) {
  alloy_value *g = d_tensor(d, 0), *mask = d_tensor(d, 2);
  const alloy_value *out = alloy_node_output(d_node(d), 0);
  alloy_value *z = zeros(d, d_shape(out), d_rank(out), d_dtype(out));
  d_out(d, 0, D(d, "aten.masked_scatter.default", V(z), V(mask), V(g)));
}

/* masked_scatter_backward(grad_output, mask, sizes): the elements of
 * grad_output at the mask's true positions, in order, then zeros, viewed
 * as sizes. The k-th true position's element goes to k: its place is the
 * running count of trues, less one. */
static void masked_scatter_backward(decomp *d) {
  alloy_dim s[ALLOY_MAX_RANK];
  int n = sizes_of(d, 2, s);
  alloy_value *g = d_tensor(d, 0), *mask = d_tensor(d, 1);
  if (d_failed(d)) return;
  alloy_dim b[ALLOY_MAX_RANK];
  int rb = d_rank(g) > d_rank(mask) ? d_rank(g) : d_rank(mask);
  alloy_symtab *st = d_symtab(d);
  for (int k = 0; k < rb; k++) {
    int kg = k - (rb - d_rank(g)), km = k - (rb - d_rank(mask));
    alloy_dim a = kg >= 0 ? d_shape(g)[kg] : alloy_dim_const(1);
    alloy_dim c = km >= 0 ? d_shape(mask)[km] : alloy_dim_const(1);
    if (alloy_dim_broadcast(st, a, c, &b[k])) return (void)d_fail(d, "grad_output and mask do not broadcast");
  }
  alloy_dim all = nn_prod(d, b, rb), total = nn_prod(d, s, n);
  alloy_value *gf = nn_reshape(d, D(d, "aten.expand.default", V(g), d_dim_list(d, b, rb)), &all, 1);
  alloy_value *mf = nn_reshape(d, D(d, "aten.expand.default", V(mask), d_dim_list(d, b, rb)), &all, 1);
  alloy_value *place = D(d, "aten.cumsum.default", V(mf), I(0), DT(ALLOY_I64));
  place = where(d, mf, V(D(d, "aten.sub.Tensor", V(place), I(1))), I(0));
  alloy_value *src = where(d, mf, V(gf), I(0));
  alloy_value *r = D(d, "aten.scatter_add.default", V(zeros(d, &total, 1, d_dtype(g))), I(0), V(place),
                     V(src));
  d_out(d, 0, nn_view(d, r, s, n));
}

const decomp_rule decomp_rules_backward[] = {
    {"aten.tanh_backward.default", tanh_backward, DECOMP_TO_CORE},
    {"aten.sigmoid_backward.default", sigmoid_backward, DECOMP_TO_CORE},
    {"aten.softplus_backward.default", softplus_backward, DECOMP_TO_CORE},
    {"aten.elu_backward.default", elu_backward, DECOMP_TO_CORE},
    {"aten.hardsigmoid_backward.default", hardsigmoid_backward, DECOMP_TO_CORE},
    {"aten.hardswish_backward.default", hardswish_backward, DECOMP_TO_CORE},
    {"aten.hardtanh_backward.default", hardtanh_backward, DECOMP_TO_CORE},
    {"aten.hardshrink_backward.default", shrink_backward, DECOMP_TO_CORE},
    {"aten.softshrink_backward.default", shrink_backward, DECOMP_TO_CORE},
    {"aten.threshold_backward.default", threshold_backward, DECOMP_TO_CORE},
    {"aten.leaky_relu_backward.default", leaky_relu_backward, DECOMP_TO_CORE},
    {"aten.rrelu_with_noise_backward.default", rrelu_with_noise_backward, DECOMP_TO_CORE},
    {"aten.gelu_backward.default", gelu_backward, DECOMP_TO_CORE},
    {"aten.infinitely_differentiable_gelu_backward.default", infinitely_differentiable_gelu_backward,
     DECOMP_TO_CORE},
    {"aten.mish_backward.default", mish_backward, DECOMP_TO_CORE},
    {"aten.silu_backward.default", silu_backward, DECOMP_TO_CORE},
    {"aten.log_sigmoid_backward.default", log_sigmoid_backward, DECOMP_TO_CORE},
    {"aten.logit_backward.default", logit_backward, DECOMP_TO_CORE},
    {"aten._prelu_kernel_backward.default", prelu_kernel_backward, DECOMP_TO_CORE},
    {"aten.native_dropout_backward.default", native_dropout_backward, DECOMP_TO_CORE},
    {"aten.glu_backward.default", glu_backward, DECOMP_TO_CORE},
    {"aten._log_softmax_backward_data.default", log_softmax_backward_data, DECOMP_TO_CORE},
    {"aten.mse_loss_backward.default", mse_loss_backward, DECOMP_TO_CORE},
    {"aten.smooth_l1_loss_backward.default", smooth_l1_loss_backward, DECOMP_TO_CORE},
    {"aten.huber_loss_backward.default", huber_loss_backward, DECOMP_TO_CORE},
    {"aten.soft_margin_loss_backward.default", soft_margin_loss_backward, DECOMP_TO_CORE},
    {"aten.binary_cross_entropy_backward.default", binary_cross_entropy_backward, DECOMP_TO_CORE},
    {"aten.nll_loss_backward.default", nll_loss_backward, DECOMP_TO_CORE},
    {"aten.nll_loss2d_backward.default", nll_loss_backward, DECOMP_TO_CORE},
    {"aten.multi_margin_loss_backward.default", multi_margin_loss_backward, DECOMP_TO_CORE},
    {"aten.multilabel_margin_loss_backward.default", multilabel_margin_loss_backward, DECOMP_TO_CORE},
    {"aten.select_backward.default", select_backward, DECOMP_TO_CORE},
    {"aten.slice_backward.default", slice_backward, DECOMP_TO_CORE},
    {"aten.diagonal_backward.default", diagonal_backward, DECOMP_TO_CORE},
    {"aten.trace_backward.default", trace_backward, DECOMP_TO_CORE},
    {"aten.unfold_backward.default", unfold_backward, DECOMP_TO_CORE},
    {"aten.index_select_backward.default", index_select_backward, DECOMP_TO_CORE},
    {"aten.value_selecting_reduction_backward.default", value_selecting_reduction_backward,
     DECOMP_TO_CORE},
    {"aten.cummaxmin_backward.default", cummaxmin_backward, DECOMP_TO_CORE},
    {"aten.gather_backward.default", gather_backward, DECOMP_TO_CORE},
    {"aten.cumprod_backward.default", cumprod_backward, DECOMP_TO_CORE},
    {"aten.masked_select_backward.default", masked_select_backward, DECOMP_TO_CORE},
    {"aten.masked_scatter_backward.default", masked_scatter_backward, DECOMP_TO_CORE},
    {NULL, NULL, 0},
};
