/*
 * tests/test_meta_prims.c: the shape functions of the prims (ir/meta_prims.c)
 * and of the metadata ops (ir/meta_misc.c). The golden corpus has no prims
 * cases, so the expected types here are what torch/_prims' meta functions
 * give; the inputs carry a symbol s0 (range [2, inf), as torch.export makes
 * dynamic dims) to show that symbolic sizes flow through.
 */
#include "harness.h"

#include <stdlib.h>

#include "alloy/graph.h"
#include "ir/ir.h"

typedef struct {
  alloy_graph *g;
  alloy_symtab *st;
  alloy_dim s0;
} fixture;

static void fx_init(fixture *f) {
  f->g = alloy_graph_new();
  f->st = alloy_graph_symtab(f->g);
  CHECK_OK(alloy_sym_new(f->st, "s0", 2, ALLOY_SYM_INF, &f->s0));
}

static alloy_dim C(int64_t v) { return alloy_dim_const(v); }

static alloy_value *input(fixture *f, alloy_dtype t, const alloy_dim *shape,
                          int rank) {
  alloy_value_type vt = {0};
  vt.kind = ALLOY_VALUE_TENSOR;
  vt.dtype = t;
  vt.rank = rank;
  vt.shape = shape;
  vt.device.index = -1;
  alloy_value *v = NULL;
  CHECK_OK(alloy_graph_add_input(f->g, NULL, &vt, &v));
  return v;
}
#define IN(f, t, ...)                                                   \
  input(f, t, (const alloy_dim[]){__VA_ARGS__},                         \
        (int)(sizeof((const alloy_dim[]){__VA_ARGS__}) / sizeof(alloy_dim)))

static alloy_arg V(alloy_value *v) { return alloy_arg_value(v); }
static alloy_arg I(int64_t v) { return alloy_arg_int(v); }
static alloy_arg D(alloy_dim d) { return alloy_arg_dim(d); }
#define LIST(...)                                                       \
  alloy_arg_list((const alloy_arg[]){__VA_ARGS__},                      \
                 (int32_t)(sizeof((const alloy_arg[]){__VA_ARGS__}) /   \
                           sizeof(alloy_arg)))
static alloy_arg DEV(void) {
  alloy_arg a = {ALLOY_ARG_DEVICE, {0}};
  a.u.device.type = ALLOY_DEVICE_CPU;
  a.u.device.index = -1;
  return a;
}

/* Adds a node; returns its first output, or NULL with *err set. */
static alloy_value *apply_kw(fixture *f, const char *op, const alloy_arg *args,
                             int n, const char *const *kw,
                             const alloy_arg *kwargs, int nkw,
                             alloy_error **err) {
  const alloy_op *o = alloy_op_find(op);
  if (!o) {
    harness_fail(__FILE__, __LINE__, "no op %s", op);
    return NULL;
  }
  alloy_node *node = NULL;
  *err = alloy_graph_add_node(f->g, o, args, n, kw, kwargs, nkw, NULL, &node);
  if (*err || alloy_node_num_outputs(node) == 0) return NULL;
  return alloy_node_output(node, 0);
}
#define APPLY(f, op, ...)                                               \
  apply_ok(f, __LINE__, op, (const alloy_arg[]){__VA_ARGS__},           \
           (int)(sizeof((const alloy_arg[]){__VA_ARGS__}) / sizeof(alloy_arg)))
static alloy_value *apply_ok(fixture *f, int line, const char *op,
                             const alloy_arg *args, int n) {
  alloy_error *e;
  alloy_value *v = apply_kw(f, op, args, n, NULL, NULL, 0, &e);
  if (e) {
    harness_fail(__FILE__, line, "%s failed: %s", op, alloy_error_message(e));
    alloy_error_free(e);
  }
  return v;
}

/* The op must fail with a message containing want. */
#define CHECK_FAILS(f, want, op, ...)                                   \
  check_fails(f, __LINE__, want, op, (const alloy_arg[]){__VA_ARGS__},  \
              (int)(sizeof((const alloy_arg[]){__VA_ARGS__}) / sizeof(alloy_arg)))
static void check_fails(fixture *f, int line, const char *want, const char *op,
                        const alloy_arg *args, int n) {
  alloy_error *e;
  apply_kw(f, op, args, n, NULL, NULL, 0, &e);
  if (!e) {
    harness_fail(__FILE__, line, "%s succeeded, expected an error", op);
    return;
  }
  if (!strstr(alloy_error_message(e), want))
    harness_fail(__FILE__, line, "%s: error \"%s\" lacks \"%s\"", op,
                 alloy_error_message(e), want);
  alloy_error_free(e);
}

static void print_shape(const alloy_dim *s, int rank, char *buf, size_t cap) {
  size_t n = (size_t)snprintf(buf, cap, "[");
  for (int d = 0; d < rank && n < cap; d++) {
    if (d) n += (size_t)snprintf(buf + n, cap - n, ", ");
    if (n < cap) n += alloy_dim_print(s[d], buf + n, cap - n);
  }
  if (n < cap) snprintf(buf + n, cap - n, "]");
}

/* v must be a tensor of dtype t and shape want. */
#define CHECK_TYPE(v, t, ...)                                           \
  check_type(__LINE__, v, t, (const alloy_dim[]){__VA_ARGS__},          \
             (int)(sizeof((const alloy_dim[]){__VA_ARGS__}) / sizeof(alloy_dim)))
#define CHECK_SCALAR_TENSOR(v, t) check_type(__LINE__, v, t, NULL, 0)
static void check_type(int line, const alloy_value *v, alloy_dtype t,
                       const alloy_dim *want, int rank) {
  if (!v) {
    harness_fail(__FILE__, line, "no output");
    return;
  }
  bool ok = alloy_value_kind_of(v) == ALLOY_VALUE_TENSOR &&
            alloy_value_dtype(v) == t && alloy_value_rank(v) == rank;
  for (int d = 0; ok && d < rank; d++)
    ok = alloy_dim_same(alloy_value_shape(v)[d], want[d]);
  if (ok) return;
  char got[256], exp[256];
  print_shape(alloy_value_shape(v), alloy_value_rank(v), got, sizeof got);
  print_shape(want, rank, exp, sizeof exp);
  harness_fail(__FILE__, line, "got %s%s, expected %s%s",
               alloy_dtype_short_name(alloy_value_dtype(v)), got,
               alloy_dtype_short_name(t), exp);
}

TEST(meta_prims_every_prim_has_a_shape_function) {
  CHECK_OK(alloy_registry_init());
  int prims = 0;
  for (int i = 0; i < alloy_op_count(); i++) {
    const alloy_op *op = alloy_op_by_id(i);
    if (!(alloy_op_tags(op) & ALLOY_TAG_PRIM)) continue;
    prims++;
    if (!op->meta) harness_fail(__FILE__, __LINE__, "%s has none", op->name);
  }
  CHECK_INT(prims, 126);
  static const char *const misc[] = {
      "aten.sym_size.int", "aten.sym_stride.int", "aten.sym_numel",
      "aten.sym_storage_offset", "aten.sym_is_contiguous",
      "aten._local_scalar_dense", "aten._linalg_check_errors",
      "aten._assert_tensor_metadata"};
  for (size_t i = 0; i < sizeof misc / sizeof misc[0]; i++) {
    const alloy_op *op = alloy_op_find(misc[i]);
    CHECK(op && op->meta);
  }
}

TEST(meta_prims_broadcast_in_dim) {
  fixture f;
  fx_init(&f);
  alloy_value *x = IN(&f, ALLOY_F32, f.s0, C(3));
  alloy_value *one = IN(&f, ALLOY_F32, C(1), C(3));
  /* New leading dim; existing dims kept. */
  CHECK_TYPE(APPLY(&f, "prims.broadcast_in_dim", V(x),
                   LIST(I(4), D(f.s0), I(3)), LIST(I(1), I(2))),
             ALLOY_F32, C(4), f.s0, C(3));
  /* A size-1 dim broadcast to a symbolic one. */
  CHECK_TYPE(APPLY(&f, "prims.broadcast_in_dim", V(one), LIST(D(f.s0), I(3)),
                   LIST(I(0), I(1))),
             ALLOY_F32, f.s0, C(3));
  CHECK_FAILS(&f, "must be broadcastable to", "prims.broadcast_in_dim", V(x),
              LIST(I(5), I(3)), LIST(I(0), I(1)));
  CHECK_FAILS(&f, "strictly increasing", "prims.broadcast_in_dim", V(x),
              LIST(D(f.s0), I(3), I(2)), LIST(I(1), I(0)));
  alloy_graph_free(f.g);
}

TEST(meta_prims_collapse_and_split_dim) {
  fixture f;
  fx_init(&f);
  alloy_value *x = IN(&f, ALLOY_F16, f.s0, C(3), C(4));
  alloy_dim s0x3 = alloy_dim_mul(f.st, f.s0, C(3));
  CHECK_TYPE(APPLY(&f, "prims.collapse_view", V(x), I(1), I(2)), ALLOY_F16,
             f.s0, C(12));
  CHECK_TYPE(APPLY(&f, "prims.collapse_view", V(x), I(0), I(1)), ALLOY_F16,
             s0x3, C(4));
  CHECK_TYPE(APPLY(&f, "prims.collapse", V(x), I(0), I(2)), ALLOY_F16,
             alloy_dim_mul(f.st, f.s0, C(12)));
  CHECK_FAILS(&f, "less than start", "prims.collapse_view", V(x), I(2), I(1));
  CHECK_FAILS(&f, "out of range", "prims.collapse_view", V(x), I(-1), I(1));

  CHECK_TYPE(APPLY(&f, "prims.split_dim", V(x), I(2), I(2)), ALLOY_F16, f.s0,
             C(3), C(2), C(2));
  /* Splitting 3*s0 by 3 gives [3, s0]: the symbol divides out. */
  alloy_value *y = IN(&f, ALLOY_F16, s0x3);
  CHECK_TYPE(APPLY(&f, "prims.split_dim", V(y), I(0), I(3)), ALLOY_F16, C(3),
             f.s0);
  CHECK_FAILS(&f, "with a remainder", "prims.split_dim", V(x), I(2), I(3));
  CHECK_FAILS(&f, "with a remainder", "prims.split_dim", V(x), I(0), I(2));
  alloy_graph_free(f.g);
}

TEST(meta_prims_convert_element_type_and_views) {
  fixture f;
  fx_init(&f);
  alloy_value *x = IN(&f, ALLOY_F32, f.s0, C(3));
  CHECK_TYPE(APPLY(&f, "prims.convert_element_type", V(x),
                   alloy_arg_dtype(ALLOY_I64)),
             ALLOY_I64, f.s0, C(3));
  CHECK_TYPE(APPLY(&f, "prims.transpose", V(x), LIST(I(1), I(0))), ALLOY_F32,
             C(3), f.s0);
  CHECK_FAILS(&f, "invalid permutation", "prims.transpose", V(x),
              LIST(I(0), I(0)));
  alloy_value *z = IN(&f, ALLOY_F32, C(1), f.s0, C(1));
  CHECK_TYPE(APPLY(&f, "prims.squeeze", V(z), LIST(I(0), I(2))), ALLOY_F32,
             f.s0);
  CHECK_FAILS(&f, "must have length 1", "prims.squeeze", V(z), LIST(I(1)));
  /* float32 viewed as float16 doubles the last dim; as float64 halves it. */
  CHECK_TYPE(APPLY(&f, "prims.view_of_dtype", V(x),
                   alloy_arg_dtype(ALLOY_F16)),
             ALLOY_F16, f.s0, C(6));
  CHECK_FAILS(&f, "divisible by 2", "prims.view_of_dtype", V(x),
              alloy_arg_dtype(ALLOY_F64));
  alloy_graph_free(f.g);
}

TEST(meta_prims_sum_with_dims) {
  fixture f;
  fx_init(&f);
  alloy_value *x = IN(&f, ALLOY_I32, f.s0, C(3), C(4));
  /* No promotion: a sum of int32 stays int32 unless output_dtype says. */
  CHECK_TYPE(APPLY(&f, "prims.sum", V(x), LIST(I(0), I(2))), ALLOY_I32, C(3));
  CHECK_TYPE(APPLY(&f, "prims.amax", V(x), LIST(I(1))), ALLOY_I32, f.s0, C(4));
  CHECK_SCALAR_TENSOR(APPLY(&f, "prims.prod", V(x), alloy_arg_none()),
                      ALLOY_I32);
  static const char *const kw[] = {"output_dtype"};
  alloy_arg args[] = {V(x), LIST(I(2))};
  alloy_arg kwargs[] = {alloy_arg_dtype(ALLOY_I64)};
  alloy_error *e;
  CHECK_TYPE(apply_kw(&f, "prims.sum", args, 2, kw, kwargs, 1, &e), ALLOY_I64,
             f.s0, C(3));
  CHECK_OK(e);
  /* Prims take canonical dims only. */
  CHECK_FAILS(&f, "out of range", "prims.sum", V(x), LIST(I(-1)));
  alloy_value *c = IN(&f, ALLOY_C64, f.s0, C(2));
  CHECK_TYPE(APPLY(&f, "prims.var", V(c), LIST(I(1))), ALLOY_F32, f.s0);
  alloy_graph_free(f.g);
}

TEST(meta_prims_iota_and_creation) {
  fixture f;
  fx_init(&f);
  static const char *const kw[] = {"start", "step", "dtype", "device",
                                   "requires_grad"};
  alloy_arg len = D(alloy_dim_add(f.st, f.s0, C(1)));
  alloy_arg kwargs[] = {I(0), I(2), alloy_arg_dtype(ALLOY_I64), DEV(),
                        alloy_arg_bool(false)};
  alloy_error *e;
  CHECK_TYPE(apply_kw(&f, "prims.iota", &len, 1, kw, kwargs, 5, &e),
             ALLOY_I64, alloy_dim_add(f.st, f.s0, C(1)));
  CHECK_OK(e);
  kwargs[2] = alloy_arg_dtype(ALLOY_F32);
  apply_kw(&f, "prims.iota", &len, 1, kw, kwargs, 5, &e);
  CHECK(e && strstr(alloy_error_message(e), "integer dtypes"));
  alloy_error_free(e);

  static const char *const kw_full[] = {"dtype", "device", "requires_grad"};
  alloy_arg full_args[] = {LIST(D(f.s0), I(2)), alloy_arg_float(1.5)};
  alloy_arg full_kw[] = {alloy_arg_dtype(ALLOY_BF16), DEV(),
                         alloy_arg_bool(false)};
  CHECK_TYPE(apply_kw(&f, "prims.full", full_args, 2, kw_full, full_kw, 3, &e),
             ALLOY_BF16, f.s0, C(2));
  CHECK_OK(e);
  /* scalar_tensor without a dtype: a Python float is the default dtype. */
  CHECK_SCALAR_TENSOR(APPLY(&f, "prims.scalar_tensor", alloy_arg_float(2.0)),
                      ALLOY_F32);
  CHECK_SCALAR_TENSOR(APPLY(&f, "prims.scalar_tensor", I(2)), ALLOY_I64);
  CHECK_TYPE(apply_kw(&f, "prims._make_token", NULL, 0, NULL, NULL, 0, &e),
             ALLOY_F32, C(0));
  CHECK_OK(e);
  alloy_graph_free(f.g);
}

TEST(meta_prims_where_cat_reshape) {
  fixture f;
  fx_init(&f);
  alloy_value *pred = IN(&f, ALLOY_BOOL, f.s0, C(3));
  alloy_value *a = IN(&f, ALLOY_F32, f.s0, C(3));
  alloy_value *b = input(&f, ALLOY_F32, NULL, 0); /* a CPU scalar */
  alloy_value *c = IN(&f, ALLOY_F32, C(4), C(3));
  CHECK_TYPE(APPLY(&f, "prims.where", V(pred), V(a), V(b)), ALLOY_F32, f.s0,
             C(3));
  CHECK_FAILS(&f, "must be a bool tensor", "prims.where", V(a), V(a), V(a));
  CHECK_FAILS(&f, "do not broadcast", "prims.where", V(pred), V(a), V(c));

  CHECK_TYPE(APPLY(&f, "prims.cat", LIST(V(a), V(c), V(a)), I(0)), ALLOY_F32,
             alloy_dim_add(f.st, alloy_dim_mul(f.st, f.s0, C(2)), C(4)), C(3));
  CHECK_FAILS(&f, "Sizes of tensors must match", "prims.cat",
              LIST(V(a), V(c)), I(1));

  alloy_value *x = IN(&f, ALLOY_F32, f.s0, C(3), C(4));
  CHECK_TYPE(APPLY(&f, "prims.reshape", V(x), LIST(D(f.s0), I(12))),
             ALLOY_F32, f.s0, C(12));
  alloy_dim s0x6 = alloy_dim_mul(f.st, f.s0, C(6));
  CHECK_TYPE(APPLY(&f, "prims.reshape", V(x), LIST(I(2), D(s0x6))), ALLOY_F32,
             C(2), s0x6);
  CHECK_FAILS(&f, "to a shape with", "prims.reshape", V(x),
              LIST(D(f.s0), I(5)));
  alloy_graph_free(f.g);
}

TEST(meta_prims_elementwise_no_promotion) {
  fixture f;
  fx_init(&f);
  alloy_value *a = IN(&f, ALLOY_F32, f.s0, C(3));
  alloy_value *a64 = IN(&f, ALLOY_F64, f.s0, C(3));
  alloy_value *row = IN(&f, ALLOY_F32, C(3));
  alloy_value *i = IN(&f, ALLOY_I32, f.s0, C(3));
  alloy_value *z = IN(&f, ALLOY_C64, f.s0, C(3));
  CHECK_TYPE(APPLY(&f, "prims.lt", V(a), V(a)), ALLOY_BOOL, f.s0, C(3));
  CHECK_TYPE(APPLY(&f, "prims.add", V(a), V(a)), ALLOY_F32, f.s0, C(3));
  CHECK_TYPE(APPLY(&f, "prims.div", V(i), V(i)), ALLOY_I32, f.s0, C(3));
  CHECK_TYPE(APPLY(&f, "prims.sin", V(i)), ALLOY_I32, f.s0, C(3));
  CHECK_TYPE(APPLY(&f, "prims.abs", V(z)), ALLOY_F32, f.s0, C(3));
  CHECK_TYPE(APPLY(&f, "prims.isfinite", V(a)), ALLOY_BOOL, f.s0, C(3));
  CHECK_TYPE(APPLY(&f, "prims.fill", V(i), alloy_arg_float(0.5)), ALLOY_I32,
             f.s0, C(3));
  /* A Python number stands beside tensors of any dtype, unpromoted. */
  CHECK_TYPE(APPLY(&f, "prims.mul", V(i), alloy_arg_float(0.5)), ALLOY_I32,
             f.s0, C(3));
  CHECK_FAILS(&f, "do not promote", "prims.add", V(a), V(a64));
  CHECK_FAILS(&f, "do not broadcast", "prims.mul", V(a), V(row));
  CHECK_FAILS(&f, "integer or bool", "prims.bitwise_and", V(a), V(a));
  CHECK_FAILS(&f, "complex", "prims.real", V(a));
  alloy_graph_free(f.g);
}

TEST(meta_prims_svd_and_fft) {
  fixture f;
  fx_init(&f);
  alloy_value *a = IN(&f, ALLOY_F32, C(2), f.s0, C(3));
  static const char *const kw[] = {"full_matrices"};
  alloy_arg kwargs[] = {alloy_arg_bool(false)};
  alloy_node *n = NULL;
  alloy_arg args[] = {V(a)};
  CHECK_OK(alloy_graph_add_node(f.g, alloy_op_find("prims.svd"), args, 1, kw,
                                kwargs, 1, NULL, &n));
  REQUIRE(n && alloy_node_num_outputs(n) == 3);
  alloy_dim k = alloy_dim_min(f.st, f.s0, C(3));
  CHECK_TYPE(alloy_node_output(n, 0), ALLOY_F32, C(2), f.s0, k);
  CHECK_TYPE(alloy_node_output(n, 1), ALLOY_F32, C(2), k);
  CHECK_TYPE(alloy_node_output(n, 2), ALLOY_F32, C(2), k, C(3));

  static const char *const kw_r2c[] = {"dim", "onesided"};
  alloy_value *x = IN(&f, ALLOY_F32, f.s0, C(8));
  alloy_arg r2c_kw[] = {LIST(I(-1)), alloy_arg_bool(true)};
  alloy_arg xarg = V(x);
  alloy_error *e;
  alloy_value *y = apply_kw(&f, "prims.fft_r2c", &xarg, 1, kw_r2c, r2c_kw, 2, &e);
  CHECK_OK(e);
  CHECK_TYPE(y, ALLOY_C64, f.s0, C(5));
  static const char *const kw_c2r[] = {"dim", "last_dim_size"};
  alloy_arg c2r_kw[] = {LIST(I(1)), I(8)};
  alloy_arg yarg = V(y);
  CHECK_TYPE(apply_kw(&f, "prims.fft_c2r", &yarg, 1, kw_c2r, c2r_kw, 2, &e),
             ALLOY_F32, f.s0, C(8));
  CHECK_OK(e);
  alloy_graph_free(f.g);
}

TEST(meta_prims_sym_size_of_a_symbolic_dim) {
  fixture f;
  fx_init(&f);
  alloy_value *x = IN(&f, ALLOY_F32, f.s0, C(3), C(4));
  alloy_value *v = APPLY(&f, "aten.sym_size.int", V(x), I(0));
  REQUIRE(v && alloy_value_kind_of(v) == ALLOY_VALUE_INT);
  alloy_value_type t;
  alloy_value_get_type(v, &t);
  CHECK(alloy_dim_same(t.int_value, f.s0));
  /* The symbolic size feeds a shape argument downstream. */
  alloy_value *y = APPLY(&f, "prims.reshape", V(x), LIST(V(v), I(12)));
  CHECK_TYPE(y, ALLOY_F32, f.s0, C(12));

  v = APPLY(&f, "aten.sym_size.int", V(x), I(-1));
  alloy_value_get_type(v, &t);
  CHECK(alloy_dim_same(t.int_value, C(4)));
  v = APPLY(&f, "aten.sym_stride.int", V(x), I(0));
  alloy_value_get_type(v, &t);
  CHECK(alloy_dim_same(t.int_value, C(12)));
  /* Contiguous strides multiply by max(size, 1); s0 >= 2 simplifies it. */
  v = APPLY(&f, "aten.sym_stride.int", V(IN(&f, ALLOY_F32, C(2), f.s0)), I(0));
  alloy_value_get_type(v, &t);
  CHECK(alloy_dim_same(t.int_value, f.s0));
  v = APPLY(&f, "aten.sym_numel", V(x));
  alloy_value_get_type(v, &t);
  CHECK(alloy_dim_same(t.int_value, alloy_dim_mul(f.st, f.s0, C(12))));
  CHECK_FAILS(&f, "out of range", "aten.sym_size.int", V(x), I(3));
  alloy_graph_free(f.g);
}

TEST(meta_prims_local_scalar_dense_and_asserts) {
  fixture f;
  fx_init(&f);
  alloy_value *i = input(&f, ALLOY_I64, NULL, 0);
  alloy_value *x = IN(&f, ALLOY_F32, f.s0, C(3));
  alloy_value *v = APPLY(&f, "aten._local_scalar_dense", V(i));
  REQUIRE(v && alloy_value_kind_of(v) == ALLOY_VALUE_INT);
  alloy_value_type t;
  alloy_value_get_type(v, &t);
  char name[32];
  alloy_dim_print(t.int_value, name, sizeof name);
  CHECK_STR(name, "u0"); /* data-dependent: a fresh unbacked symbol */
  v = APPLY(&f, "prims.item", V(IN(&f, ALLOY_F32, C(1))));
  CHECK(v && alloy_value_kind_of(v) == ALLOY_VALUE_FLOAT);
  CHECK_FAILS(&f, "cannot be converted to Scalar", "aten._local_scalar_dense",
              V(x));

  APPLY(&f, "aten._assert_tensor_metadata", V(x), LIST(D(f.s0), I(3)),
        alloy_arg_none(), alloy_arg_dtype(ALLOY_F32));
  CHECK_FAILS(&f, "dtype mismatch", "aten._assert_tensor_metadata", V(x),
              alloy_arg_none(), alloy_arg_none(), alloy_arg_dtype(ALLOY_F16));
  CHECK_FAILS(&f, "sizes mismatch", "aten._assert_tensor_metadata", V(x),
              LIST(D(f.s0), I(4)));
  alloy_graph_free(f.g);
}
