/*
 * ir/meta_activation.c: shape functions of the activation ops that the
 * decomposition rules of decompositions/rules_activation.c rewrite and that
 * ir/meta_pointwise.c's generic elementwise function does not cover:
 * softmax.int (the public softmax, with its optional dtype), selu, relu6,
 * rrelu and log_sigmoid.
 */
#include <string.h>

#include "ir/meta.h"

/* softmax.int(self, dim, dtype): self's shape, in dtype when given. The
 * result is computed in floating point, so an integer result is refused as
 * PyTorch's kernel refuses it. */
static alloy_error *meta_softmax_int(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  int64_t dim;
  int d;
  alloy_error *e = meta_int(m, 1, &dim);
  if (e || (e = meta_wrap_dim(m, 1, dim, x->rank, &d))) return e;
  alloy_dtype t = meta_dtype_or(m, 2, x->dtype);
  if (!alloy_dtype_is_float(t) && !alloy_dtype_is_complex(t))
    return meta_error(m, "softmax is computed in floating point: got %s (pass "
                         "dtype= to convert)",
                      alloy_dtype_name(t));
  return meta_out_like(m, 0, x, t);
}

/* selu(self): elementwise on a floating-point self, as elu is. */
static alloy_error *meta_selu(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  if (!alloy_dtype_is_float(x->dtype))
    return meta_error(m, "\"elu\" not implemented for '%s'", alloy_dtype_name(x->dtype));
  return meta_out_like(m, 0, x, x->dtype);
}

/* Activations that PyTorch's CPU kernels compute in floating types only:
 * self's type. */
static alloy_error *meta_float_like_self(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  if (!alloy_dtype_is_float(x->dtype)) {
    const char *name = strchr(m->op->name, '.') + 1;
    return meta_error(m, "%.*s: PyTorch's CPU kernel computes in floating types only, not in %s "
                         "(argument 'self')",
                      (int)strcspn(name, "."), name, alloy_dtype_name(x->dtype));
  }
  return meta_out_like(m, 0, x, x->dtype);
}

/* rrelu(self, lower, upper, training): floating point, lower <= upper. */
static alloy_error *meta_rrelu(alloy_meta *m) {
  if (meta_float(m, 1) > meta_float(m, 2))
    return meta_error(m, "Lower bound should be less than or equal to the upper bound (arguments "
                         "'lower' and 'upper': %g > %g)",
                      meta_float(m, 1), meta_float(m, 2));
  return meta_float_like_self(m);
}

/* relu6(self) = hardtanh(self, 0, 6): any dtype but bool. */
static alloy_error *meta_relu6(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  if (x->dtype == ALLOY_BOOL)
    return meta_error(m, "Bool inputs not supported for hardtanh (argument 'self')");
  return meta_out_like(m, 0, x, x->dtype);
}

const alloy_meta_entry alloy_meta_activation[] = {
    {"aten.softmax.int", meta_softmax_int, 0},
    {"aten.selu.default", meta_selu, 0},
    {"aten.relu6.default", meta_relu6, 0},
    {"aten.rrelu.default", meta_rrelu, 0},
    {"aten.log_sigmoid.default", meta_float_like_self, 0},
    {NULL, NULL, 0},
};
