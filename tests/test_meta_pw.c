/*
 * tests/test_meta_pw.c: shape functions of the elementwise and factory ops
 * (ir/meta_pointwise.c, ir/meta_factory.c): symbolic dims flow through
 * broadcasting, promotion and ranges, and bad arguments give errors that
 * say what is wrong.
 */
#include "harness.h"

#include <stdlib.h>

#include "alloy/graph.h"
#include "alloy/ops.h"

typedef struct {
  alloy_graph *g;
  alloy_symtab *st;
  alloy_dim s0, s1;
} fixture;

static bool fixture_init(fixture *f) {
  f->g = alloy_graph_new();
  if (!f->g) return false;
  f->st = alloy_graph_symtab(f->g);
  alloy_error *e = alloy_sym_new(f->st, "s0", 2, ALLOY_SYM_INF, &f->s0);
  if (!e) e = alloy_sym_new(f->st, "s1", 2, ALLOY_SYM_INF, &f->s1);
  if (e) {
    alloy_error_free(e);
    return false;
  }
  return true;
}

static alloy_value *input(fixture *f, alloy_dtype t, const alloy_dim *shape, int rank) {
  alloy_value_type ty = {ALLOY_VALUE_TENSOR, t, rank, shape, NULL, {ALLOY_DEVICE_CPU, -1},
                         {NULL, 0}};
  alloy_value *v = NULL;
  alloy_error *e = alloy_graph_add_input(f->g, NULL, &ty, &v);
  if (e) {
    harness_fail(__FILE__, __LINE__, "add_input: %s", alloy_error_message(e));
    alloy_error_free(e);
  }
  return v;
}

/* Adds a node; returns its error (the caller checks or frees it). */
static alloy_error *node(fixture *f, const char *op, const alloy_arg *args, int n,
                         const char *kw, const alloy_arg *kwarg, alloy_node **out) {
  const alloy_op *o = alloy_op_find(op);
  if (!o) return alloy_error_new(ALLOY_ERR_NOT_FOUND, "no op %s", op);
  const char *kwnames[1] = {kw};
  return alloy_graph_add_node(f->g, o, args, n, kw ? kwnames : NULL, kwarg, kw ? 1 : 0,
                              NULL, out);
}

/* Output k of nd has dtype t and the shape given (checked with alloy_dim_same). */
static bool has_type(const alloy_node *nd, int k, alloy_dtype t, const alloy_dim *shape,
                     int rank) {
  if (!nd || k >= alloy_node_num_outputs(nd)) return false;
  const alloy_value *v = alloy_node_output(nd, k);
  if (alloy_value_dtype(v) != t || alloy_value_rank(v) != rank) return false;
  const alloy_dim *s = alloy_value_shape(v);
  for (int d = 0; d < rank; d++)
    if (!alloy_dim_same(s[d], shape[d])) {
      char got[64], want[64];
      alloy_dim_print(s[d], got, sizeof got);
      alloy_dim_print(shape[d], want, sizeof want);
      printf("  dim %d: got %s, want %s\n", d, got, want);
      return false;
    }
  return true;
}

/* The error's message contains every needle; the error is freed. */
static bool fails_with(alloy_error *e, const char *needle) {
  if (!e) return false;
  bool ok = strstr(alloy_error_message(e), needle) != NULL;
  if (!ok) printf("  unexpected message: %s\n", alloy_error_message(e));
  alloy_error_free(e);
  return ok;
}

#define C(v) alloy_dim_const(v)

TEST(meta_pw_binary_broadcasts_symbolic_dims) {
  fixture f;
  REQUIRE(fixture_init(&f));
  alloy_value *a = input(&f, ALLOY_F16, (alloy_dim[]){f.s0, C(1)}, 2);
  alloy_value *b = input(&f, ALLOY_F32, (alloy_dim[]){f.s1}, 1);
  alloy_value *i = input(&f, ALLOY_I64, (alloy_dim[]){f.s0, f.s1}, 2);
  alloy_node *n = NULL;
  /* A float16 matrix plus a float32 vector: float32 [s0, s1]. */
  CHECK_OK(node(&f, "aten.add.Tensor", (alloy_arg[]){alloy_arg_value(a), alloy_arg_value(b)},
                2, NULL, NULL, &n));
  CHECK(has_type(n, 0, ALLOY_F32, (alloy_dim[]){f.s0, f.s1}, 2));
  /* Integer true division is float32; comparisons are bool. */
  CHECK_OK(node(&f, "aten.div.Tensor", (alloy_arg[]){alloy_arg_value(i), alloy_arg_value(i)},
                2, NULL, NULL, &n));
  CHECK(has_type(n, 0, ALLOY_F32, (alloy_dim[]){f.s0, f.s1}, 2));
  CHECK_OK(node(&f, "aten.lt.Tensor", (alloy_arg[]){alloy_arg_value(i), alloy_arg_value(b)},
                2, NULL, NULL, &n));
  CHECK(has_type(n, 0, ALLOY_BOOL, (alloy_dim[]){f.s0, f.s1}, 2));
  /* where: the condition broadcasts but does not promote. */
  alloy_value *c = input(&f, ALLOY_BOOL, (alloy_dim[]){f.s0, C(1)}, 2);
  alloy_value *z = input(&f, ALLOY_I64, NULL, 0);
  CHECK_OK(node(&f, "aten.where.self",
                (alloy_arg[]){alloy_arg_value(c), alloy_arg_value(b), alloy_arg_value(z)}, 3,
                NULL, NULL, &n));
  CHECK(has_type(n, 0, ALLOY_F32, (alloy_dim[]){f.s0, f.s1}, 2));
  /* s0 against s1 cannot be proved broadcastable. */
  alloy_value *r = input(&f, ALLOY_F32, (alloy_dim[]){f.s0}, 1);
  CHECK(fails_with(node(&f, "aten.mul.Tensor",
                        (alloy_arg[]){alloy_arg_value(r), alloy_arg_value(b)}, 2, NULL, NULL, &n),
                   "aten.mul.Tensor"));
  alloy_graph_free(f.g);
}

TEST(meta_pw_scalars_promote_as_scalars) {
  fixture f;
  REQUIRE(fixture_init(&f));
  alloy_value *i = input(&f, ALLOY_I64, (alloy_dim[]){f.s0, C(3)}, 2);
  alloy_value *h = input(&f, ALLOY_BF16, (alloy_dim[]){f.s0}, 1);
  alloy_node *n = NULL;
  alloy_dim s03[] = {f.s0, C(3)};
  CHECK_OK(node(&f, "aten.add.Scalar", (alloy_arg[]){alloy_arg_value(i), alloy_arg_float(1.5)},
                2, NULL, NULL, &n));
  CHECK(has_type(n, 0, ALLOY_F32, s03, 2));
  CHECK_OK(node(&f, "aten.mul.Scalar", (alloy_arg[]){alloy_arg_value(i), alloy_arg_int(2)}, 2,
                NULL, NULL, &n));
  CHECK(has_type(n, 0, ALLOY_I64, s03, 2));
  /* A float scalar does not widen a bfloat16 tensor. */
  CHECK_OK(node(&f, "aten.pow.Tensor_Scalar",
                (alloy_arg[]){alloy_arg_value(h), alloy_arg_float(2.5)}, 2, NULL, NULL, &n));
  CHECK(has_type(n, 0, ALLOY_BF16, (alloy_dim[]){f.s0}, 1));
  /* Parameters such as hardtanh's bounds never promote. */
  CHECK_OK(node(&f, "aten.hardtanh.default",
                (alloy_arg[]){alloy_arg_value(i), alloy_arg_float(-0.5), alloy_arg_float(0.5)},
                3, NULL, NULL, &n));
  CHECK(has_type(n, 0, ALLOY_I64, s03, 2));
  /* clamp's min and max do. */
  CHECK_OK(node(&f, "aten.clamp.default", (alloy_arg[]){alloy_arg_value(i), alloy_arg_float(0.5)},
                2, NULL, NULL, &n));
  CHECK(has_type(n, 0, ALLOY_F32, s03, 2));
  /* pow(Scalar, Tensor): the scalar promotes; bools become int64. */
  alloy_value *b = input(&f, ALLOY_BOOL, (alloy_dim[]){f.s0}, 1);
  CHECK_OK(node(&f, "aten.pow.Scalar", (alloy_arg[]){alloy_arg_int(2), alloy_arg_value(b)}, 2,
                NULL, NULL, &n));
  CHECK(has_type(n, 0, ALLOY_I64, (alloy_dim[]){f.s0}, 1));
  CHECK_OK(node(&f, "aten.div.Scalar_mode", (alloy_arg[]){alloy_arg_value(i), alloy_arg_int(2)},
                2, "rounding_mode", (alloy_arg[]){alloy_arg_str("floor")}, &n));
  CHECK(has_type(n, 0, ALLOY_I64, s03, 2));
  /* atan2.out: the broadcast shape in out's dtype. */
  alloy_value *o = input(&f, ALLOY_F64, NULL, 0);
  alloy_value *r = input(&f, ALLOY_I64, (alloy_dim[]){C(3)}, 1);
  CHECK_OK(node(&f, "aten.atan2.out", (alloy_arg[]){alloy_arg_value(i), alloy_arg_value(r)}, 2,
                "out", (alloy_arg[]){alloy_arg_value(o)}, &n));
  CHECK(has_type(n, 0, ALLOY_F64, s03, 2));
  /* frexp: float mantissa, int32 exponent. */
  CHECK_OK(node(&f, "aten.frexp.Tensor", (alloy_arg[]){alloy_arg_value(h)}, 1, NULL, NULL, &n));
  CHECK(has_type(n, 0, ALLOY_BF16, (alloy_dim[]){f.s0}, 1));
  CHECK(has_type(n, 1, ALLOY_I32, (alloy_dim[]){f.s0}, 1));
  alloy_graph_free(f.g);
}

TEST(meta_pw_inplace_keeps_self) {
  fixture f;
  REQUIRE(fixture_init(&f));
  alloy_value *x = input(&f, ALLOY_F16, (alloy_dim[]){f.s0, C(3)}, 2);
  alloy_value *v = input(&f, ALLOY_F32, (alloy_dim[]){C(3)}, 1);
  alloy_value *i = input(&f, ALLOY_I64, (alloy_dim[]){C(3)}, 1);
  alloy_node *n = NULL;
  CHECK_OK(node(&f, "aten.add_.Tensor", (alloy_arg[]){alloy_arg_value(x), alloy_arg_value(v)},
                2, NULL, NULL, &n));
  CHECK(has_type(n, 0, ALLOY_F16, (alloy_dim[]){f.s0, C(3)}, 2));
  /* self cannot grow, and a float result cannot go back into int64. */
  CHECK(fails_with(node(&f, "aten.mul_.Tensor",
                        (alloy_arg[]){alloy_arg_value(v), alloy_arg_value(x)}, 2, NULL, NULL, &n),
                   "doesn't match the broadcast shape [s0, 3]"));
  CHECK(fails_with(node(&f, "aten.add_.Scalar",
                        (alloy_arg[]){alloy_arg_value(i), alloy_arg_float(0.5)}, 2, NULL, NULL, &n),
                   "result type float32 can't be cast to the desired output type int64"));
  CHECK(fails_with(node(&f, "aten.sqrt_.default", (alloy_arg[]){alloy_arg_value(i)}, 1, NULL,
                        NULL, &n),
                   "can't be cast"));
  alloy_graph_free(f.g);
}

TEST(meta_pw_bad_arguments) {
  fixture f;
  REQUIRE(fixture_init(&f));
  alloy_value *x = input(&f, ALLOY_F32, (alloy_dim[]){f.s0}, 1);
  alloy_value *b = input(&f, ALLOY_BOOL, (alloy_dim[]){f.s0}, 1);
  alloy_value *i = input(&f, ALLOY_I64, (alloy_dim[]){f.s0}, 1);
  alloy_node *n = NULL;
  alloy_arg bad = alloy_arg_str("fast");
  CHECK(fails_with(node(&f, "aten.gelu.default", (alloy_arg[]){alloy_arg_value(x)}, 1,
                        "approximate", &bad, &n),
                   "approximate argument must be either none or tanh, got 'fast'"));
  CHECK(fails_with(node(&f, "aten.div.Tensor_mode",
                        (alloy_arg[]){alloy_arg_value(x), alloy_arg_value(x)}, 2,
                        "rounding_mode", &bad, &n),
                   "rounding_mode"));
  CHECK(fails_with(node(&f, "aten.bitwise_and.Tensor",
                        (alloy_arg[]){alloy_arg_value(x), alloy_arg_value(i)}, 2, NULL, NULL, &n),
                   "integer or bool operands"));
  CHECK(fails_with(node(&f, "aten.sub.Tensor",
                        (alloy_arg[]){alloy_arg_value(b), alloy_arg_value(b)}, 2, NULL, NULL, &n),
                   "Subtraction, the `-` operator, with a bool tensor is not supported"));
  CHECK(fails_with(node(&f, "aten.clamp.default", (alloy_arg[]){alloy_arg_value(x)}, 1, NULL,
                        NULL, &n),
                   "At least one of 'min' or 'max'"));
  CHECK(fails_with(node(&f, "aten.where.self",
                        (alloy_arg[]){alloy_arg_value(x), alloy_arg_value(x), alloy_arg_value(x)},
                        3, NULL, NULL, &n),
                   "condition to be a boolean tensor"));
  CHECK(fails_with(node(&f, "aten.frexp.Tensor", (alloy_arg[]){alloy_arg_value(i)}, 1, NULL,
                        NULL, &n),
                   "floating-point"));
  CHECK(fails_with(node(&f, "aten.add.Tensor",
                        (alloy_arg[]){alloy_arg_value(i), alloy_arg_value(i)}, 2, "alpha",
                        (alloy_arg[]){alloy_arg_float(0.5)}, &n),
                   "alpha must not be a floating point number"));
  alloy_graph_free(f.g);
}

TEST(meta_pw_factories_take_symbolic_sizes) {
  fixture f;
  REQUIRE(fixture_init(&f));
  alloy_value *x = input(&f, ALLOY_BF16, (alloy_dim[]){f.s0, C(3)}, 2);
  alloy_node *n = NULL;
  alloy_arg size[] = {alloy_arg_dim(f.s0), alloy_arg_int(4)};
  CHECK_OK(node(&f, "aten.zeros.default", (alloy_arg[]){alloy_arg_list(size, 2)}, 1, NULL, NULL,
                &n));
  CHECK(has_type(n, 0, ALLOY_F32, (alloy_dim[]){f.s0, C(4)}, 2));
  /* full infers its dtype from the fill value. */
  CHECK_OK(node(&f, "aten.full.default",
                (alloy_arg[]){alloy_arg_list(size, 2), alloy_arg_bool(true)}, 2, NULL, NULL, &n));
  CHECK(has_type(n, 0, ALLOY_BOOL, (alloy_dim[]){f.s0, C(4)}, 2));
  CHECK_OK(node(&f, "aten.full.default",
                (alloy_arg[]){alloy_arg_list(size, 2), alloy_arg_int(7)}, 2, NULL, NULL, &n));
  CHECK(has_type(n, 0, ALLOY_I64, (alloy_dim[]){f.s0, C(4)}, 2));
  CHECK_OK(node(&f, "aten.ones_like.default", (alloy_arg[]){alloy_arg_value(x)}, 1, NULL, NULL,
                &n));
  CHECK(has_type(n, 0, ALLOY_BF16, (alloy_dim[]){f.s0, C(3)}, 2));
  alloy_dim twice = alloy_dim_mul(f.st, f.s0, C(2));
  alloy_arg nsize[] = {alloy_arg_dim(twice)};
  CHECK_OK(node(&f, "aten.new_zeros.default", (alloy_arg[]){alloy_arg_value(x), alloy_arg_list(nsize, 1)},
                2, NULL, NULL, &n));
  CHECK(has_type(n, 0, ALLOY_BF16, &twice, 1));
  CHECK_OK(node(&f, "aten.eye.m", (alloy_arg[]){alloy_arg_dim(f.s0), alloy_arg_dim(f.s1)}, 2,
                NULL, NULL, &n));
  CHECK(has_type(n, 0, ALLOY_F32, (alloy_dim[]){f.s0, f.s1}, 2));
  /* arange(end=s0) is int64 [s0]; arange(2, s0, 3) has ceil((s0 - 2) / 3). */
  CHECK_OK(node(&f, "aten.arange.default", (alloy_arg[]){alloy_arg_dim(f.s0)}, 1, NULL, NULL,
                &n));
  CHECK(has_type(n, 0, ALLOY_I64, &f.s0, 1));
  CHECK_OK(node(&f, "aten.arange.start_step",
                (alloy_arg[]){alloy_arg_int(2), alloy_arg_dim(f.s0), alloy_arg_int(3)}, 3, NULL,
                NULL, &n));
  alloy_dim want = alloy_dim_ceildiv(f.st, alloy_dim_sub(f.st, f.s0, C(2)), C(3));
  CHECK(has_type(n, 0, ALLOY_I64, &want, 1));
  /* Concrete float bounds: float32, ceil(2.5 / 0.5) = 5 points. */
  CHECK_OK(node(&f, "aten.arange.start_step",
                (alloy_arg[]){alloy_arg_float(0.5), alloy_arg_int(3), alloy_arg_float(0.5)}, 3,
                NULL, NULL, &n));
  CHECK(has_type(n, 0, ALLOY_F32, (alloy_dim[]){C(5)}, 1));
  CHECK_OK(node(&f, "aten.linspace.default",
                (alloy_arg[]){alloy_arg_float(0), alloy_arg_float(1), alloy_arg_int(7)}, 3, NULL,
                NULL, &n));
  CHECK(has_type(n, 0, ALLOY_F32, (alloy_dim[]){C(7)}, 1));
  CHECK_OK(node(&f, "aten.randperm.default", (alloy_arg[]){alloy_arg_dim(f.s1)}, 1, NULL, NULL,
                &n));
  CHECK(has_type(n, 0, ALLOY_I64, &f.s1, 1));
  alloy_arg stride[] = {alloy_arg_int(4), alloy_arg_int(1)};
  CHECK_OK(node(&f, "aten.empty_strided.default",
                (alloy_arg[]){alloy_arg_list(size, 2), alloy_arg_list(stride, 2)}, 2, NULL, NULL,
                &n));
  CHECK(has_type(n, 0, ALLOY_F32, (alloy_dim[]){f.s0, C(4)}, 2));
  CHECK_OK(node(&f, "aten.randn.default", (alloy_arg[]){alloy_arg_list(size, 2)}, 1, "dtype",
                (alloy_arg[]){alloy_arg_dtype(ALLOY_F16)}, &n));
  CHECK(has_type(n, 0, ALLOY_F16, (alloy_dim[]){f.s0, C(4)}, 2));
  /* native_dropout: the input's type and a bool mask. */
  CHECK_OK(node(&f, "aten.native_dropout.default",
                (alloy_arg[]){alloy_arg_value(x), alloy_arg_float(0.1), alloy_arg_bool(true)}, 3,
                NULL, NULL, &n));
  CHECK(has_type(n, 0, ALLOY_BF16, (alloy_dim[]){f.s0, C(3)}, 2));
  CHECK(has_type(n, 1, ALLOY_BOOL, (alloy_dim[]){f.s0, C(3)}, 2));
  alloy_graph_free(f.g);
}

TEST(meta_pw_factory_bad_arguments) {
  fixture f;
  REQUIRE(fixture_init(&f));
  alloy_node *n = NULL;
  alloy_arg size[] = {alloy_arg_int(2), alloy_arg_int(-1)};
  CHECK(fails_with(node(&f, "aten.ones.default", (alloy_arg[]){alloy_arg_list(size, 2)}, 1, NULL,
                        NULL, &n),
                   "negative dimension -1"));
  CHECK(fails_with(node(&f, "aten.arange.start_step",
                        (alloy_arg[]){alloy_arg_int(5), alloy_arg_int(1), alloy_arg_int(1)}, 3,
                        NULL, NULL, &n),
                   "inconsistent with step sign"));
  CHECK(fails_with(node(&f, "aten.arange.start_step",
                        (alloy_arg[]){alloy_arg_int(0), alloy_arg_int(1), alloy_arg_int(0)}, 3,
                        NULL, NULL, &n),
                   "step must be nonzero"));
  CHECK(fails_with(node(&f, "aten.linspace.default",
                        (alloy_arg[]){alloy_arg_float(0), alloy_arg_float(1), alloy_arg_int(-2)},
                        3, NULL, NULL, &n),
                   "number of steps must be non-negative"));
  alloy_graph_free(f.g);
}
