/*
 * decompositions/rules_activation.c: activation functions and softmax, from
 * ATen to Core ATen.
 *
 * relu6, rrelu (evaluation mode), log_sigmoid and _add_relu are
 * rewritten into the core activations they are in ATen.
 *
 * Where PyTorch computes an activation in its "opmath" type (float16 and
 * bfloat16 in float32, through pw_cast_for_opmath or the reference's
 * computation dtype), the rule does the same: it converts the input up,
 * computes, and converts the result back once, so that reduced-precision
 * results are rounded as PyTorch's are.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "decompositions/rules.h"

/* --- dtypes ------------------------------------------------------------------*/

/* Tensor argument i in the computation dtype of the node's result. */
static alloy_value *in_opmath(decomp *d, int i) {
  return d_to(d, d_tensor(d, i), d_opmath(d_out_dtype(d, 0)));
}

/* The result y, back in the node's output dtype. */
static void out_back(decomp *d, alloy_value *y) { d_out(d, 0, d_to(d, y, d_out_dtype(d, 0))); }

static bool refuse_complex(decomp *d) {
  if (!alloy_dtype_is_complex(d_out_dtype(d, 0))) return false;
  d_decline(d, "complex tensors are not computed on");
  return true;
}

/* --- activations ---------------------------------------------------------------*/

/* silu(x) = x * sigmoid(x) */
static void silu(decomp *d) {
  alloy_value *x = in_opmath(d, 0);
  out_back(d, D(d, "aten.mul.Tensor", V(x), V(D(d, "aten.sigmoid.default", V(x)))));
}

/* softplus(x) = log1p(exp(beta x)) / beta, and x itself where beta x passes
 * the threshold (exp would overflow there and the two agree). */
static alloy_value *softplus_of(decomp *d, alloy_value *x, alloy_arg beta, alloy_arg threshold) {
  alloy_value *bx = D(d, "aten.mul.Tensor", V(x), beta);
  alloy_value *soft = D(d, "aten.div.Tensor",
                        V(D(d, "aten.log1p.default", V(D(d, "aten.exp.default", V(bx))))), beta);
  return D(d, "aten.where.self", V(D(d, "aten.gt.Scalar", V(bx), threshold)), V(x), V(soft));
}

static void softplus(decomp *d) {
  out_back(d, softplus_of(d, in_opmath(d, 0), *d_arg(d, 1), *d_arg(d, 2)));
}

/* mish(x) = x * tanh(softplus(x)) */
static void mish(decomp *d) {
  alloy_value *x = in_opmath(d, 0);
  alloy_value *sp = softplus_of(d, x, I(1), I(20));
  out_back(d, D(d, "aten.mul.Tensor", V(x), V(D(d, "aten.tanh.default", V(sp)))));
}

/* hardsigmoid(x) = clamp(x + 3, 0, 6) / 6 */
static alloy_value *relu6_of_x_plus_3(decomp *d, alloy_value *x) {
  return D(d, "aten.clamp.default", V(D(d, "aten.add.Tensor", V(x), I(3))), I(0), I(6));
}

static void hardsigmoid(decomp *d) {
  out_back(d, D(d, "aten.div.Tensor", V(relu6_of_x_plus_3(d, in_opmath(d, 0))), I(6)));
}

/* hardswish(x) = x * clamp(x + 3, 0, 6) / 6 */
static void hardswish(decomp *d) {
  alloy_value *x = in_opmath(d, 0);
  alloy_value *xc = D(d, "aten.mul.Tensor", V(x), V(relu6_of_x_plus_3(d, x)));
  out_back(d, D(d, "aten.div.Tensor", V(xc), I(6)));
}

/* selu(x) = scale * elu(x, alpha), with the constants of Klambauer et al.
 * that make the activations self-normalizing. */
static void selu(decomp *d) {
  const double alpha = 1.6732632423543772848170429916717;
  const double scale = 1.0507009873554804934193349852946;
  d_out(d, 0, D(d, "aten.elu.default", V(d_tensor(d, 0)), F(alpha), F(scale), I(1)));
}

/* celu(x) = max(0, x) + min(0, alpha (exp(x / alpha) - 1)): elu with its
 * input scaled by 1 / alpha. */
static void celu(decomp *d) {
  double alpha = d_float(d, 1);
  d_out(d, 0, D(d, "aten.elu.default", V(d_tensor(d, 0)), *d_arg(d, 1), I(1), F(1.0 / alpha)));
}

/* prelu(x, w) = x where x > 0, else w x (w already broadcast to x). */
static void prelu_kernel(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *w = d_tensor(d, 1);
  alloy_value *pos = D(d, "aten.gt.Scalar", V(x), I(0));
  d_out(d, 0, D(d, "aten.where.self", V(pos), V(x), V(D(d, "aten.mul.Tensor", V(w), V(x)))));
}

/* glu(x, dim) = a * sigmoid(b), a and b the two halves of x along dim.
 * The halves are taken by viewing dim as [2, n / 2] and selecting, so that
 * a symbolic n gives both halves the same size n // 2 (slicing would give
 * sizes the shape arithmetic cannot prove equal). */
static void glu(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  int rank = d_rank(x), dim = d_wrap_dim(d, d_int(d, 1), rank);
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
  alloy_value *pair = D(d, "aten.view.default", V(x), d_dim_list(d, shape, rank + 1));
  alloy_value *a = d_to(d, D(d, "aten.select.int", V(pair), I(dim), I(0)), d_opmath(d_dtype(x)));
  alloy_value *b = d_to(d, D(d, "aten.select.int", V(pair), I(dim), I(1)), d_opmath(d_dtype(x)));
  out_back(d, D(d, "aten.mul.Tensor", V(a), V(D(d, "aten.sigmoid.default", V(b)))));
}

/* hardshrink(x) = 0 where |x| <= lambd, else x */
static void hardshrink(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  alloy_value *small = D(d, "aten.le.Scalar", V(D(d, "aten.abs.default", V(x))), *d_arg(d, 1));
  d_out(d, 0, D(d, "aten.where.self", V(small), I(0), V(x)));
}

/* softshrink(x) = x - lambd above lambd, x + lambd below -lambd, else
 * x * 0 (0, but NaN stays NaN, as in PyTorch's kernel and reference). */
static void softshrink(decomp *d) {
  alloy_value *x = in_opmath(d, 0);
  double lambd = d_float(d, 1);
  alloy_value *up = D(d, "aten.gt.Scalar", V(x), F(lambd));
  alloy_value *down = D(d, "aten.lt.Scalar", V(x), F(-lambd));
  alloy_value *r = D(d, "aten.where.self", V(up), V(D(d, "aten.sub.Tensor", V(x), F(lambd))),
                     V(D(d, "aten.mul.Tensor", V(x), I(0))));
  out_back(d, D(d, "aten.where.self", V(down), V(D(d, "aten.add.Tensor", V(x), F(lambd))), V(r)));
}

/* A number argument as the integer PyTorch's kernel converts it to for an
 * integer tensor (Scalar::to<int64_t>: a float truncates, -0.5 is 0). */
static alloy_arg int_param(decomp *d, int i) {
  const alloy_arg *a = d_arg(d, i);
  return a->kind == ALLOY_ARG_FLOAT ? I((int64_t)d_float(d, i)) : *a;
}

/* threshold(x, t, v) = v where x <= t, else x. An integer x compares with
 * and takes the truncated t and v, as the kernel does (threshold -0.5
 * replaces 0; value 2.5 gives 2), which also keeps the result's dtype. */
static void threshold(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  bool integral = alloy_dtype_is_integer(d_dtype(x));
  alloy_arg t = integral ? int_param(d, 1) : *d_arg(d, 1);
  alloy_arg v = integral ? int_param(d, 2) : *d_arg(d, 2);
  alloy_value *below = D(d, "aten.le.Scalar", V(x), t);
  d_out(d, 0, D(d, "aten.where.self", V(below), v, V(x)));
}

/* log_sigmoid(x) = min(0, x) - log1p(exp(-|x|)); the buffer is exp(-|x|),
 * as PyTorch's CPU kernel keeps it for the backward. */
static void log_sigmoid_forward(decomp *d) {
  alloy_value *x = in_opmath(d, 0);
  alloy_value *z = D(d, "aten.exp.default", V(D(d, "aten.neg.default", V(D(d, "aten.abs.default", V(x))))));
  alloy_value *m = D(d, "aten.clamp.default", V(x), NONE, I(0));
  alloy_value *y = D(d, "aten.sub.Tensor", V(m), V(D(d, "aten.log1p.default", V(z))));
  d_out(d, 0, d_to(d, y, d_out_dtype(d, 0)));
  d_out(d, 1, d_to(d, z, d_out_dtype(d, 1)));
}

/* relu6(x) = hardtanh(x, 0, 6) */
static void relu6(decomp *d) {
  d_out(d, 0, D(d, "aten.hardtanh.default", V(d_tensor(d, 0)), I(0), I(6)));
}

/* rrelu in evaluation mode is leaky_relu with the mean slope
 * (lower + upper) / 2, computed in double as ATen does; in training it
 * draws a slope per element, which is rrelu_with_noise's business. */
static void rrelu(decomp *d) {
  if (d_bool(d, 3)) return d_decline(d, "training=True draws random slopes (rrelu_with_noise)");
  double lower = d_float(d, 1), upper = d_float(d, 2);
  d_out(d, 0, D(d, "aten.leaky_relu.default", V(d_tensor(d, 0)), F((lower + upper) / 2)));
}

/* log_sigmoid(x) is the first output of log_sigmoid_forward. */
static void log_sigmoid(decomp *d) {
  d_out(d, 0, D(d, "aten.log_sigmoid_forward.default", V(d_tensor(d, 0))));
}

/* _add_relu(a, b, alpha) = min(hi, max(0, a + alpha b)), hi the largest
 * value of self's dtype, as ATen's fused kernel bounds it (an int32 self
 * added to an int64 other still stops at 2^31 - 1; float32 at FLT_MAX, so
 * inf does too), and 0 where the sum is NaN, as its scalar loop gives
 * (its vector loop keeps NaN; the reference kernel keeps to the scalar
 * loop too). */
static void add_relu(decomp *d) {
  alloy_value *a = d_tensor(d, 0);
  static const struct {
    alloy_dtype t;
    int64_t hi;
  } int_max[] = {
      {ALLOY_I8, INT8_MAX}, {ALLOY_I16, INT16_MAX}, {ALLOY_I32, INT32_MAX}, {ALLOY_I64, INT64_MAX}};
  alloy_arg hi = d_dtype(a) == ALLOY_F64 ? F(DBL_MAX) : F(FLT_MAX);
  for (size_t k = 0; k < sizeof int_max / sizeof *int_max; k++)
    if (int_max[k].t == d_dtype(a)) hi = I(int_max[k].hi);
  const alloy_arg *b = d_arg(d, 1);
  bool tensor = b->kind == ALLOY_ARG_VALUE && alloy_value_kind_of(b->u.value) == ALLOY_VALUE_TENSOR;
  alloy_value *sum = D(d, tensor ? "aten.add.Tensor" : "aten.add.Scalar", V(a), *b, *d_arg(d, 2));
  alloy_value *capped = D(d, "aten.clamp.default", V(sum), NONE, hi);
  d_out(d, 0, D(d, "aten.where.self", V(D(d, "aten.gt.Scalar", V(sum), I(0))), V(capped), I(0)));
}

/* --- softmax -------------------------------------------------------------------*/

/* softmax / log_softmax with an optional dtype: the input converted to
 * dtype first, then the core kernel. */
static void softmax_like(decomp *d, const char *core) {
  alloy_value *x = d_tensor(d, 0);
  x = d_to(d, x, d_dtype_or(d, 2, d_dtype(x)));
  d_out(d, 0, D(d, core, V(x), *d_arg(d, 1), B(false)));
}

static void softmax_int(decomp *d) { softmax_like(d, "aten._softmax.default"); }
static void log_softmax_int(decomp *d) { softmax_like(d, "aten._log_softmax.default"); }

/* _safe_softmax: softmax, but 0 on rows that are -inf throughout (fully
 * masked attention rows), where softmax would give NaN. */
static void safe_softmax(decomp *d) {
  alloy_value *x = d_tensor(d, 0);
  alloy_value *s = d_to(d, x, d_dtype_or(d, 2, d_dtype(x)));
  s = D(d, "aten._softmax.default", V(s), *d_arg(d, 1), B(false));
  alloy_value *live = D(d, "aten.ne.Scalar", V(x), F(-INFINITY));
  alloy_value *any = D(d, "aten.any.dim", V(live), *d_arg(d, 1), B(true));
  d_out(d, 0, D(d, "aten.where.self", V(any), V(s), F(0.0)));
}

/* The gradient of softmax: y (g - sum(g y, dim)), y the softmax output.
 * Factored as PyTorch's kernel computes it (torch/_decomp's g y - y sum
 * gives NaN where g y overflows to inf, the kernel inf). */
static void softmax_backward_data(decomp *d) {
  alloy_dtype t = d_opmath(d_out_dtype(d, 0));
  alloy_value *g = d_to(d, d_tensor(d, 0), t), *y = d_to(d, d_tensor(d, 1), t);
  int64_t dim = d_int(d, 2);
  alloy_value *gy = D(d, "aten.mul.Tensor", V(g), V(y));
  alloy_value *sum = D(d, "aten.sum.dim_IntList", V(gy), LIST(I(dim)), B(true));
  out_back(d, D(d, "aten.mul.Tensor", V(y), V(D(d, "aten.sub.Tensor", V(g), V(sum)))));
}

/* --- logical -------------------------------------------------------------------*/

/* a & b is bitwise_and, which on bool tensors is the logical and. */
static void and_tensor(decomp *d) {
  if (refuse_complex(d)) return;
  d_out(d, 0, D(d, "aten.bitwise_and.Tensor", V(d_tensor(d, 0)), V(d_tensor(d, 1))));
}

const decomp_rule decomp_rules_activation[] = {
    {"aten.silu.default", silu, DECOMP_TO_CORE},
    {"aten.softplus.default", softplus, DECOMP_TO_CORE},
    {"aten.mish.default", mish, DECOMP_TO_CORE},
    {"aten.hardsigmoid.default", hardsigmoid, DECOMP_TO_CORE},
    {"aten.hardswish.default", hardswish, DECOMP_TO_CORE},
    {"aten.selu.default", selu, DECOMP_TO_CORE},
    {"aten.celu.default", celu, DECOMP_TO_CORE},
    {"aten._prelu_kernel.default", prelu_kernel, DECOMP_TO_CORE},
    {"aten.glu.default", glu, DECOMP_TO_CORE},
    {"aten.hardshrink.default", hardshrink, DECOMP_TO_CORE},
    {"aten.softshrink.default", softshrink, DECOMP_TO_CORE},
    {"aten.threshold.default", threshold, DECOMP_TO_CORE},
    {"aten.log_sigmoid_forward.default", log_sigmoid_forward, DECOMP_TO_CORE},
    {"aten.relu6.default", relu6, DECOMP_TO_CORE},
    {"aten.rrelu.default", rrelu, DECOMP_TO_CORE},
    {"aten.log_sigmoid.default", log_sigmoid, DECOMP_TO_CORE},
    {"aten._add_relu.Tensor", add_relu, DECOMP_TO_CORE},
    {"aten._add_relu.Scalar", add_relu, DECOMP_TO_CORE},
    {"aten.softmax.int", softmax_int, DECOMP_TO_CORE},
    {"aten.log_softmax.int", log_softmax_int, DECOMP_TO_CORE},
    {"aten._safe_softmax.default", safe_softmax, DECOMP_TO_CORE},
    {"aten._softmax_backward_data.default", softmax_backward_data, DECOMP_TO_CORE},
    {"aten.__and__.Tensor", and_tensor, DECOMP_TO_CORE},
    {NULL, NULL, 0},
};
