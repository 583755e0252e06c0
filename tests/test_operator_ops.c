/*
 * tests/test_operator_ops.c: Python's scalar operators on SymInts, SymBools
 * and SymFloats (_operator.*, torch.sym_*, math.trunc) as torch.export
 * records them: the registry finds them by the exporter's target names, the
 * shape functions keep SymInt results symbolic (16*s0 feeds a view's size
 * list), Python's integer rules hold (-7 // 2 == -4, -7 % 2 == 1,
 * 7 % -2 == -1), a division by zero is an error naming the op, and the
 * reference backend computes every op, from literals and from the graph's
 * own SymInt, SymBool and SymFloat values.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sdk/src/host.h"
#include "testgraph.h"
#include "testref.h"

static alloy_arg V(alloy_value *v) { return alloy_arg_value(v); }
static alloy_arg I(int64_t v) { return alloy_arg_int(v); }
static alloy_arg F(double f) { return alloy_arg_float(f); }
static alloy_arg B(bool b) { return alloy_arg_bool(b); }

#define ARGS(...) \
  (alloy_arg[]){__VA_ARGS__}, (int)(sizeof((alloy_arg[]){__VA_ARGS__}) / sizeof(alloy_arg))

/* The first output of op(args), or NULL after a recorded failure. */
static alloy_value *apply(tg_fixture *f, const char *op, const alloy_arg *args, int n) {
  alloy_node *node = tg_add(f, op, args, n, NULL);
  return node ? alloy_node_output(node, 0) : NULL;
}
#define APPLY(f, op, ...) apply((f), (op), ARGS(__VA_ARGS__))

/* op(args) fails with a message naming the op and containing text. */
static void check_fails(tg_fixture *f, const char *op, const alloy_arg *args, int n,
                        const char *text, int line) {
  alloy_error *e = NULL;
  tg_add(f, op, args, n, &e);
  if (!e) {
    harness_fail(__FILE__, line, "%s succeeded, expected \"%s\"", op, text);
    return;
  }
  const char *msg = alloy_error_message(e);
  char name[64];
  snprintf(name, sizeof name, "%s.default", op);
  if (!strstr(msg, text) || !strstr(msg, name))
    harness_fail(__FILE__, line, "error \"%s\" does not name %s and say \"%s\"", msg, name, text);
  alloy_error_free(e);
}
#define CHECK_FAILS(f, text, op, ...) check_fails((f), (op), ARGS(__VA_ARGS__), (text), __LINE__)

static alloy_dim int_of(const alloy_value *v) {
  alloy_value_type t;
  alloy_value_get_type(v, &t);
  return t.int_value;
}

/* v is a SymInt whose value is the same dim as want. */
static void check_int(const alloy_value *v, alloy_dim want, int line) {
  char got[128], exp[128];
  alloy_dim_print(want, exp, sizeof exp);
  if (!v || alloy_value_kind_of(v) != ALLOY_VALUE_INT) {
    harness_fail(__FILE__, line, "not a SymInt, expected SymInt(%s)", exp);
    return;
  }
  alloy_dim_print(int_of(v), got, sizeof got);
  if (!alloy_dim_same(int_of(v), want))
    harness_fail(__FILE__, line, "SymInt(%s), expected SymInt(%s)", got, exp);
}
#define CHECK_SYMINT(v, want) check_int((v), (want), __LINE__)

/* v is a scalar (rank 0) of this kind and dtype. */
static void check_kind(const alloy_value *v, alloy_value_kind kind, alloy_dtype dtype, int line) {
  if (!v || alloy_value_kind_of(v) != kind || alloy_value_dtype(v) != dtype ||
      alloy_value_rank(v) != 0)
    harness_fail(__FILE__, line, "not a scalar of kind %d and dtype %s", (int)kind,
                 alloy_dtype_name(dtype));
}
#define CHECK_SYMBOOL(v) check_kind((v), ALLOY_VALUE_BOOL, ALLOY_BOOL, __LINE__)
#define CHECK_SYMFLOAT(v) check_kind((v), ALLOY_VALUE_FLOAT, ALLOY_F64, __LINE__)

/* The SymInt v is a fresh unbacked symbol with range [lo, hi]. */
static void check_unbacked(const alloy_value *v, int64_t lo, int64_t hi, int line) {
  char name[64];
  if (!v || alloy_value_kind_of(v) != ALLOY_VALUE_INT) {
    harness_fail(__FILE__, line, "not a SymInt");
    return;
  }
  alloy_dim d = int_of(v);
  alloy_dim_print(d, name, sizeof name);
  int64_t dlo, dhi;
  alloy_dim_range(d, &dlo, &dhi);
  if (name[0] != 'u' || dlo != lo || dhi != hi)
    harness_fail(__FILE__, line, "SymInt(%s) in [%lld, %lld], expected an unbacked u<N> in "
                 "[%lld, %lld]", name, (long long)dlo, (long long)dhi, (long long)lo,
                 (long long)hi);
}
#define CHECK_UNBACKED(v, lo, hi) check_unbacked((v), (lo), (hi), __LINE__)

/* Every target torch.export's serializer allows for symbolic nodes
 * (torch/_export/serde/serialize.py, _SYM_OPS), as it writes them:
 * module.__name__, so torch.sym_sqrt is "torch._sym_sqrt". */
static const char *const targets[] = {
    "_operator.add",    "_operator.sub",  "_operator.mul",      "_operator.floordiv",
    "_operator.mod",    "_operator.pow",  "_operator.neg",      "_operator.pos",
    "_operator.eq",     "_operator.ne",   "_operator.lt",       "_operator.le",
    "_operator.gt",     "_operator.ge",   "_operator.and_",     "_operator.or_",
    "_operator.truediv", "torch.sym_not", "torch.sym_max",      "torch.sym_min",
    "torch.sym_ite",    "torch.sym_int",  "torch.sym_float",    "torch._sym_sqrt",
    "math.trunc",
};

TEST(operator_ops_found_by_export_target) {
  CHECK_OK(alloy_registry_init());
  const uint32_t none = ALLOY_TAG_CORE | ALLOY_TAG_PRIM | ALLOY_TAG_POINTWISE | ALLOY_TAG_VIEW |
                        ALLOY_TAG_INPLACE | ALLOY_TAG_MUTATES | ALLOY_TAG_REDUCTION;
  for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
    const alloy_op *op = alloy_op_find(targets[i]);
    if (!op) {
      harness_fail(__FILE__, __LINE__, "%s is not registered", targets[i]);
      continue;
    }
    char want[64];
    snprintf(want, sizeof want, "%s.default", targets[i]);
    CHECK_STR(alloy_op_name(op), want);
    if (alloy_op_tags(op) & none)
      harness_fail(__FILE__, __LINE__, "%s has tags %#x", targets[i], (unsigned)alloy_op_tags(op));
  }
  /* The schema spelling finds the same op, underscores and all. */
  CHECK(alloy_op_find("_operator::and_") == alloy_op_find("_operator.and_"));
  CHECK(alloy_op_find("torch::_sym_sqrt.default") == alloy_op_find("torch._sym_sqrt"));
  CHECK(alloy_op_find("_operator.nope") == NULL);
}

/* The schema parser takes a namespace that starts with '_' and an op name
 * that ends with one (not in-place: it writes nothing). */
TEST(operator_ops_schema_names_with_underscores) {
  static const char *const text = "_operator::and_(SymBool a, SymBool b) -> SymBool";
  alloy_schema *s = NULL;
  CHECK_OK(alloy_schema_parse(text, &s));
  REQUIRE(s);
  CHECK_STR(alloy_schema_name(s), "_operator::and_");
  CHECK_STR(alloy_schema_overload(s), "");
  CHECK_INT(alloy_schema_num_args(s), 2);
  CHECK_INT(alloy_schema_arg_at(s, 0)->type.kind, ALLOY_TYPE_SYMBOOL);
  CHECK_INT(alloy_schema_return_at(s, 0)->type.kind, ALLOY_TYPE_SYMBOOL);
  char buf[256];
  alloy_schema_print(s, buf, sizeof buf);
  CHECK_STR(buf, text);
  alloy_schema_free(s);
  const alloy_op *op = alloy_op_find("_operator.and_");
  REQUIRE(op);
  CHECK(!(alloy_op_tags(op) & (ALLOY_TAG_INPLACE | ALLOY_TAG_MUTATES)));
  CHECK_STR(alloy_op_schema_text(op), text);
}

/* sym_size of a symbolic batch dim, times 16, as a view's size: the view's
 * shape is [16*s0, 1], and (16*s0) // 16 gives s0 back. */
TEST(operator_ops_size_arithmetic_feeds_a_view) {
  tg_fixture f = tg_setup(2);
  alloy_value *x = tg_input(&f, ALLOY_F32, (alloy_dim[]){f.s0, K(4), K(4)}, 3);
  alloy_value *sz = APPLY(&f, "aten.sym_size.int", V(x), I(0));
  CHECK_SYMINT(sz, f.s0);
  alloy_value *n = APPLY(&f, "_operator.mul", V(sz), I(16));
  alloy_dim sixteen_s0 = alloy_dim_mul(f.st, K(16), f.s0);
  CHECK_SYMINT(n, sixteen_s0);
  alloy_arg size[2] = {V(n), I(1)};
  alloy_node *view = tg_add(&f, "aten.view.default", ARGS(V(x), alloy_arg_list(size, 2)), NULL);
  CHECK_STR(tg_shape_of(view, 0), "16*s0, 1");
  CHECK(tg_dim_is(view, 0, 0, sixteen_s0));
  alloy_value *back = APPLY(&f, "_operator.floordiv", V(n), I(16));
  CHECK_SYMINT(back, f.s0);
  alloy_arg size2[3] = {V(back), I(8), I(2)};
  alloy_node *view2 = tg_add(&f, "aten.view.default", ARGS(V(x), alloy_arg_list(size2, 3)), NULL);
  CHECK(tg_dim_is(view2, 0, 0, f.s0));
  /* The graph verifies, and the .air text keeps the ops and their types. */
  CHECK_OK(alloy_graph_verify(f.g));
  char *text = NULL;
  CHECK_OK(alloy_air_print(f.g, &text));
  REQUIRE(text);
  CHECK(strstr(text, "_operator.mul.default") != NULL);
  CHECK(strstr(text, "SymInt(16*s0)") != NULL);
  alloy_graph *g2 = NULL;
  CHECK_OK(alloy_air_parse(text, strlen(text), "sizes.air", &g2));
  alloy_graph_free(g2);
  free(text);
  alloy_graph_free(f.g);
}

TEST(operator_ops_integer_shape_functions) {
  tg_fixture f = tg_setup(2);
  alloy_value *x = tg_input(&f, ALLOY_F32, (alloy_dim[]){f.s0, f.s1}, 2);
  alloy_value *s0 = APPLY(&f, "aten.sym_size.int", V(x), I(0));
  alloy_value *s1 = APPLY(&f, "aten.sym_size.int", V(x), I(1));
  alloy_symtab *st = f.st;
  /* symbolic operands: results are the symbol table's dims */
  CHECK_SYMINT(APPLY(&f, "_operator.add", V(s0), I(3)), alloy_dim_add(st, f.s0, K(3)));
  CHECK_SYMINT(APPLY(&f, "_operator.add", V(s0), V(s1)), alloy_dim_add(st, f.s0, f.s1));
  CHECK_SYMINT(APPLY(&f, "_operator.sub", V(s0), V(s0)), K(0));
  CHECK_SYMINT(APPLY(&f, "_operator.sub", I(3), V(s0)), alloy_dim_sub(st, K(3), f.s0));
  CHECK_SYMINT(APPLY(&f, "_operator.floordiv", V(s0), I(2)), alloy_dim_floordiv(st, f.s0, K(2)));
  CHECK_SYMINT(APPLY(&f, "_operator.floordiv", V(s0), V(s1)), alloy_dim_floordiv(st, f.s0, f.s1));
  alloy_value *odd = APPLY(&f, "_operator.add", V(APPLY(&f, "_operator.mul", V(s0), I(2))), I(1));
  CHECK_SYMINT(APPLY(&f, "_operator.mod", V(odd), I(2)), K(1));
  CHECK_SYMINT(APPLY(&f, "_operator.mod", V(s0), I(4)), alloy_dim_mod(st, f.s0, K(4)));
  /* s0 is in [2, 64]: max(s0, 1) and min(s0, 100) are s0 */
  CHECK_SYMINT(APPLY(&f, "torch.sym_max", V(s0), I(1)), f.s0);
  CHECK_SYMINT(APPLY(&f, "torch.sym_min", V(s0), I(100)), f.s0);
  CHECK_SYMINT(APPLY(&f, "torch.sym_max", V(s0), V(s1)), alloy_dim_max(st, f.s0, f.s1));
  CHECK_SYMINT(APPLY(&f, "torch.sym_min", V(s1), V(s0)), alloy_dim_min(st, f.s0, f.s1));
  alloy_value *neg = APPLY(&f, "_operator.neg", V(s0));
  CHECK_SYMINT(neg, alloy_dim_sub(st, K(0), f.s0));
  CHECK_SYMINT(APPLY(&f, "_operator.pos", V(s0)), f.s0);
  /* -s0 // 2 and -s0 % 2 floor like Python */
  CHECK_SYMINT(APPLY(&f, "_operator.floordiv", V(neg), I(2)),
               alloy_dim_floordiv(st, alloy_dim_sub(st, K(0), f.s0), K(2)));
  /* pow: a product of b factors; 0 factors is 1 */
  CHECK_SYMINT(APPLY(&f, "_operator.pow", V(s0), I(2)), alloy_dim_mul(st, f.s0, f.s0));
  alloy_dim cube = alloy_dim_mul(st, alloy_dim_mul(st, f.s0, f.s0), f.s0);
  CHECK_SYMINT(APPLY(&f, "_operator.pow", V(s0), I(3)), cube);
  CHECK_SYMINT(APPLY(&f, "_operator.pow", V(s0), I(0)), K(1));
  /* a symbolic exponent, or more factors than the cap: known at run time */
  CHECK_UNBACKED(APPLY(&f, "_operator.pow", I(2), V(s0)), 0, ALLOY_SYM_INF);
  CHECK_UNBACKED(APPLY(&f, "_operator.pow", V(s0), I(65)), 0, ALLOY_SYM_INF);
  /* (s0 + s1 + 1)**40 has more terms than the symbol table keeps */
  alloy_value *sum = APPLY(&f, "_operator.add", V(APPLY(&f, "_operator.add", V(s0), V(s1))), I(1));
  CHECK_UNBACKED(APPLY(&f, "_operator.pow", V(sum), I(40)), 0, ALLOY_SYM_INF);
  CHECK_SYMINT(APPLY(&f, "_operator.add", V(s0), I(0)), f.s0); /* no error left behind */

  /* concrete operands, Python's signs */
  static const struct {
    const char *op;
    int64_t a, b, want;
  } cases[] = {
      {"_operator.floordiv", -7, 2, -4}, {"_operator.floordiv", 7, -2, -4},
      {"_operator.floordiv", -7, -2, 3}, {"_operator.floordiv", 7, 2, 3},
      {"_operator.mod", -7, 2, 1},       {"_operator.mod", 7, -2, -1},
      {"_operator.mod", -7, -2, -1},     {"_operator.mod", 7, 2, 1},
      {"_operator.mod", INT64_MIN, -1, 0}, {"_operator.add", -3, 5, 2},
      {"_operator.sub", -3, 5, -8},      {"_operator.mul", -3, 5, -15},
      {"_operator.pow", -3, 3, -27},     {"_operator.pow", 2, 62, INT64_C(1) << 62},
      {"_operator.pow", 1, 1000000, 1},  {"_operator.pow", -1, 1000001, -1},
      {"_operator.pow", 0, 0, 1},        {"torch.sym_max", -3, -5, -3},
      {"torch.sym_min", -3, -5, -5},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    alloy_value *v = APPLY(&f, cases[i].op, I(cases[i].a), I(cases[i].b));
    if (!v || !alloy_dim_same(int_of(v), K(cases[i].want)))
      harness_fail(__FILE__, __LINE__, "%s(%lld, %lld) is not %lld", cases[i].op,
                   (long long)cases[i].a, (long long)cases[i].b, (long long)cases[i].want);
  }
  CHECK_SYMINT(APPLY(&f, "_operator.neg", I(-5)), K(5));
  alloy_graph_free(f.g);
}

TEST(operator_ops_errors_name_the_op) {
  tg_fixture f = tg_setup(2);
  alloy_value *x = tg_input(&f, ALLOY_F32, (alloy_dim[]){f.s0}, 1);
  alloy_value *s0 = APPLY(&f, "aten.sym_size.int", V(x), I(0));
  alloy_value *zero = APPLY(&f, "_operator.sub", V(s0), V(s0)); /* a SymInt that is 0 */
  CHECK_FAILS(&f, "integer division or modulo by zero", "_operator.floordiv", V(s0), I(0));
  CHECK_FAILS(&f, "integer division or modulo by zero", "_operator.mod", I(5), I(0));
  CHECK_FAILS(&f, "integer division or modulo by zero", "_operator.floordiv", V(s0), V(zero));
  CHECK_FAILS(&f, "division by zero", "_operator.truediv", V(s0), I(0));
  CHECK_FAILS(&f, "division by zero", "_operator.truediv", F(1.5), F(0.0));
  CHECK_FAILS(&f, "overflow", "_operator.floordiv", I(INT64_MIN), I(-1));
  CHECK_FAILS(&f, "overflow", "_operator.mul", I(INT64_C(1) << 62), I(4));
  CHECK_FAILS(&f, "overflow", "_operator.add", I(INT64_MAX), I(1));
  CHECK_FAILS(&f, "overflow", "_operator.pow", I(2), I(63));
  CHECK_FAILS(&f, "negative exponent -1", "_operator.pow", I(2), I(-1));
  CHECK_FAILS(&f, "math domain error", "torch._sym_sqrt", I(-4));
  CHECK_FAILS(&f, "cannot convert float", "math.trunc", F(NAN));
  CHECK_FAILS(&f, "cannot convert float", "torch.sym_int", F(1e300));
  /* a float is not a SymInt: the builder refuses it by the schema */
  alloy_error *e = NULL;
  tg_add(&f, "_operator.add.default", ARGS(F(1.5), I(1)), &e);
  CHECK_ERROR(e, "_operator.add");
  /* the failures left the graph usable */
  CHECK_SYMINT(APPLY(&f, "_operator.add", V(s0), I(1)), alloy_dim_add(f.st, f.s0, K(1)));
  CHECK_OK(alloy_graph_verify(f.g));
  alloy_graph_free(f.g);
}

TEST(operator_ops_bool_and_float_shape_functions) {
  tg_fixture f = tg_setup(2);
  alloy_value *x = tg_input(&f, ALLOY_F32, (alloy_dim[]){f.s0, f.s1}, 2);
  alloy_value *s0 = APPLY(&f, "aten.sym_size.int", V(x), I(0));
  static const char *const cmps[] = {"_operator.eq", "_operator.ne", "_operator.lt",
                                     "_operator.le", "_operator.gt", "_operator.ge"};
  for (size_t i = 0; i < sizeof cmps / sizeof cmps[0]; i++)
    CHECK_SYMBOOL(APPLY(&f, cmps[i], V(s0), I(3)));
  /* s0 >= 2 proves s0 > 1, but a SymBool carries no value: still a SymBool */
  alloy_value *gt = APPLY(&f, "_operator.gt", V(s0), I(1));
  CHECK_SYMBOOL(gt);
  alloy_value *lt = APPLY(&f, "_operator.lt", V(s0), I(8));
  CHECK_SYMBOOL(APPLY(&f, "_operator.and_", V(gt), V(lt)));
  CHECK_SYMBOOL(APPLY(&f, "_operator.or_", V(gt), B(false)));
  CHECK_SYMBOOL(APPLY(&f, "torch.sym_not", V(lt)));
  CHECK_SYMBOOL(APPLY(&f, "torch.sym_not", B(true)));

  /* sym_ite: a literal condition or equal branches decide it; otherwise
   * an unbacked symbol spanning both branches' ranges */
  CHECK_SYMINT(APPLY(&f, "torch.sym_ite", B(true), V(s0), I(3)), f.s0);
  CHECK_SYMINT(APPLY(&f, "torch.sym_ite", B(false), V(s0), I(3)), K(3));
  CHECK_SYMINT(APPLY(&f, "torch.sym_ite", V(lt), V(s0), V(s0)), f.s0);
  CHECK_UNBACKED(APPLY(&f, "torch.sym_ite", V(lt), V(s0), I(1)), 1, 64);
  CHECK_UNBACKED(APPLY(&f, "torch.sym_ite", V(lt), I(-5), I(7)), -5, 7);

  alloy_value *half = APPLY(&f, "_operator.truediv", V(s0), I(2));
  CHECK_SYMFLOAT(half);
  CHECK_SYMFLOAT(APPLY(&f, "_operator.truediv", F(1.0), V(half)));
  CHECK_SYMFLOAT(APPLY(&f, "torch.sym_float", V(s0)));
  CHECK_SYMFLOAT(APPLY(&f, "torch._sym_sqrt", V(s0)));
  /* int() and trunc(): an int is itself, a literal float truncates toward
   * zero, a float value is known at run time */
  CHECK_SYMINT(APPLY(&f, "torch.sym_int", V(s0)), f.s0);
  CHECK_SYMINT(APPLY(&f, "math.trunc", I(7)), K(7));
  CHECK_SYMINT(APPLY(&f, "math.trunc", F(-2.5)), K(-2));
  CHECK_SYMINT(APPLY(&f, "torch.sym_int", F(2.9)), K(2));
  CHECK_UNBACKED(APPLY(&f, "torch.sym_int", V(half)), INT64_MIN, ALLOY_SYM_INF);
  /* Re-running the shape functions names the unbacked symbols the same,
   * so the graph verifies and its .air text parses back. */
  CHECK_OK(alloy_graph_verify(f.g));
  char *text = NULL;
  CHECK_OK(alloy_air_print(f.g, &text));
  REQUIRE(text);
  alloy_graph *g2 = NULL;
  CHECK_OK(alloy_air_parse(text, strlen(text), "scalars.air", &g2));
  CHECK_OK(g2 ? alloy_graph_verify(g2) : NULL);
  alloy_graph_free(g2);
  free(text);
  alloy_graph_free(f.g);
}

/* ---- the reference backend ------------------------------------------------ */

/* A graph input of c's graph with the given (maybe symbolic) dims, run
 * with the given sizes. */
static alloy_value *sym_input(tr_case *c, const alloy_dim *dims, const int64_t *sizes, int rank,
                              void *data) {
  alloy_value_type ty = {ALLOY_VALUE_TENSOR, ALLOY_F32, rank, dims, NULL, {ALLOY_DEVICE_CPU, -1},
                         {0}};
  alloy_value *v = NULL;
  CHECK_OK(alloy_graph_add_input(c->g, NULL, &ty, &v));
  memcpy(c->shapes[c->nin], sizes, sizeof *sizes * (size_t)rank);
  c->in[c->nin] = (alloy_host_tensor){sizeof(alloy_host_tensor), ALLOY_F32, rank,
                                      c->shapes[c->nin], data};
  c->nin++;
  return v;
}

static alloy_value *node_out(alloy_node *n) { return n ? alloy_node_output(n, 0) : NULL; }
#define NODE(c, op, ...) node_out(tr_node((c), (op), ARGS(__VA_ARGS__), NULL, NULL, 0))

static int64_t out_i(const tr_case *c, int k) {
  const alloy_host_tensor *t = &c->out[k];
  if (t->dtype == ALLOY_BOOL) return *(const uint8_t *)t->data;
  return t->dtype == ALLOY_I64 ? *(const int64_t *)t->data : INT64_MIN;
}
static double out_f(const tr_case *c, int k) {
  return c->out[k].dtype == ALLOY_F64 ? *(const double *)c->out[k].data : NAN;
}

/* Every integer and bool op on literal operands, one node each. */
TEST(operator_ops_ref_literals) {
  static const struct {
    const char *op;
    int64_t a, b, want;
    alloy_dtype dtype;
  } cases[] = {
      {"_operator.add", -3, 5, 2, ALLOY_I64},       {"_operator.sub", -3, 5, -8, ALLOY_I64},
      {"_operator.mul", -3, 5, -15, ALLOY_I64},     {"_operator.floordiv", -7, 2, -4, ALLOY_I64},
      {"_operator.floordiv", 7, -2, -4, ALLOY_I64}, {"_operator.floordiv", -7, -2, 3, ALLOY_I64},
      {"_operator.mod", -7, 2, 1, ALLOY_I64},       {"_operator.mod", 7, -2, -1, ALLOY_I64},
      {"_operator.mod", -7, -2, -1, ALLOY_I64},     {"_operator.mod", INT64_MIN, -1, 0, ALLOY_I64},
      {"_operator.pow", -3, 3, -27, ALLOY_I64},     {"_operator.pow", 2, 62, INT64_C(1) << 62, ALLOY_I64},
      {"_operator.pow", 7, 0, 1, ALLOY_I64},        {"_operator.eq", 3, 3, 1, ALLOY_BOOL},
      {"_operator.ne", 3, 3, 0, ALLOY_BOOL},        {"_operator.lt", -4, 3, 1, ALLOY_BOOL},
      {"_operator.le", 3, 3, 1, ALLOY_BOOL},        {"_operator.gt", -4, 3, 0, ALLOY_BOOL},
      {"_operator.ge", 3, 4, 0, ALLOY_BOOL},        {"torch.sym_max", -3, -5, -3, ALLOY_I64},
      {"torch.sym_min", -3, -5, -5, ALLOY_I64},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tr_case c;
    tr_open(&c);
    if (tr_run(&c, cases[i].op, ARGS(I(cases[i].a), I(cases[i].b)))) {
      CHECK_INT(c.out[0].rank, 0);
      CHECK_INT(c.out[0].dtype, cases[i].dtype);
      if (out_i(&c, 0) != cases[i].want)
        harness_fail(__FILE__, __LINE__, "%s(%lld, %lld) gave %lld, expected %lld", cases[i].op,
                     (long long)cases[i].a, (long long)cases[i].b, (long long)out_i(&c, 0),
                     (long long)cases[i].want);
    }
    tr_close(&c);
  }
  const struct {
    const char *op;
    alloy_arg a[2];
    int n;
    int64_t want;
  } more[] = {
      {"_operator.neg", {I(-5)}, 1, 5},
      {"_operator.pos", {I(-5)}, 1, -5},
      {"_operator.and_", {B(true), B(false)}, 2, 0},
      {"_operator.or_", {B(true), B(false)}, 2, 1},
      {"torch.sym_not", {B(false)}, 1, 1},
      {"math.trunc", {F(-2.5)}, 1, -2},
      {"math.trunc", {I(-7)}, 1, -7},
      {"torch.sym_int", {F(2.9)}, 1, 2},
      {"torch.sym_int", {I(INT64_MAX)}, 1, INT64_MAX}, /* exactly, not through a double */
  };
  for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) {
    tr_case c;
    tr_open(&c);
    if (tr_run(&c, more[i].op, more[i].a, more[i].n) && out_i(&c, 0) != more[i].want)
      harness_fail(__FILE__, __LINE__, "%s gave %lld, expected %lld", more[i].op,
                   (long long)out_i(&c, 0), (long long)more[i].want);
    tr_close(&c);
  }
  const struct {
    const char *op;
    alloy_arg a[2];
    int n;
    double want;
  } floats[] = {
      {"_operator.truediv", {I(7), I(-2)}, 2, -3.5},
      {"_operator.truediv", {F(1.0), F(4.0)}, 2, 0.25},
      {"torch.sym_float", {I(-3)}, 1, -3.0},
      {"torch._sym_sqrt", {F(2.25)}, 1, 1.5},
  };
  for (size_t i = 0; i < sizeof floats / sizeof floats[0]; i++) {
    tr_case c;
    tr_open(&c);
    if (tr_run(&c, floats[i].op, floats[i].a, floats[i].n) && out_f(&c, 0) != floats[i].want)
      harness_fail(__FILE__, __LINE__, "%s gave %g, expected %g", floats[i].op, out_f(&c, 0),
                   floats[i].want);
    tr_close(&c);
  }
}

/* Operands that are the graph's own scalars: a SymInt from sym_size, the
 * SymBools and SymFloats that other scalar ops made. */
TEST(operator_ops_ref_graph_values) {
  tr_case c;
  tr_open(&c);
  float data[7 * 2] = {0};
  alloy_value *x = tr_input_value(&c, ALLOY_F32, (int64_t[]){7, 2}, 2, data);
  alloy_value *sz = NODE(&c, "aten.sym_size.int", V(x), I(0)); /* 7 */
  alloy_value *lt = NODE(&c, "_operator.lt", V(sz), I(10));    /* True */
  alloy_value *nt = NODE(&c, "torch.sym_not", V(lt));          /* False */
  alloy_value *outs[8] = {
      NODE(&c, "_operator.floordiv", V(sz), I(-2)),      /* -4 */
      NODE(&c, "_operator.mod", V(sz), I(-2)),           /* -1 */
      NODE(&c, "_operator.pow", V(sz), I(2)),            /* 49 */
      NODE(&c, "_operator.and_", V(lt), V(nt)),          /* False */
      NODE(&c, "_operator.or_", V(nt), V(lt)),           /* True */
      NODE(&c, "torch.sym_ite", V(lt), V(sz), I(100)),   /* 7 */
      NODE(&c, "torch.sym_ite", V(nt), V(sz), I(100)),   /* 100 */
      nt,
  };
  if (tr_run_values(&c, outs, 8)) {
    static const int64_t want[8] = {-4, -1, 49, 0, 1, 7, 100, 0};
    for (int k = 0; k < 8; k++)
      if (out_i(&c, k) != want[k])
        harness_fail(__FILE__, __LINE__, "output %d is %lld, expected %lld", k,
                     (long long)out_i(&c, k), (long long)want[k]);
  }
  tr_close(&c);

  tr_open(&c);
  x = tr_input_value(&c, ALLOY_F32, (int64_t[]){7, 2}, 2, data);
  sz = NODE(&c, "aten.sym_size.int", V(x), I(0));
  alloy_value *half = NODE(&c, "_operator.truediv", V(sz), I(2)); /* 3.5 */
  alloy_value *fouts[6] = {
      half,
      NODE(&c, "torch.sym_int", V(half)),                   /* 3 */
      NODE(&c, "math.trunc", V(NODE(&c, "_operator.truediv", V(sz), I(-2)))), /* -3 */
      NODE(&c, "torch.sym_float", V(sz)),                   /* 7.0 */
      NODE(&c, "torch._sym_sqrt", V(NODE(&c, "_operator.truediv", V(half), F(0.14)))), /* 5 */
      NODE(&c, "_operator.neg", V(sz)),                     /* -7 */
  };
  if (tr_run_values(&c, fouts, 6)) {
    CHECK(out_f(&c, 0) == 3.5);
    CHECK_INT(out_i(&c, 1), 3);
    CHECK_INT(out_i(&c, 2), -3);
    CHECK(out_f(&c, 3) == 7.0);
    CHECK(fabs(out_f(&c, 4) - 5.0) < 1e-12);
    CHECK_INT(out_i(&c, 5), -7);
  }
  tr_close(&c);
}

/* A symbolic batch: sym_size(x, 0) * 16 sizes a view; run with s0 = 3. */
TEST(operator_ops_ref_symbolic_batch) {
  tr_case c;
  tr_open(&c);
  alloy_dim s0;
  CHECK_OK(alloy_sym_new(alloy_graph_symtab(c.g), "s0", 1, 64, &s0));
  float data[3 * 4 * 4];
  for (int i = 0; i < 48; i++) data[i] = (float)i;
  alloy_value *x = sym_input(&c, (alloy_dim[]){s0, K(4), K(4)}, (int64_t[]){3, 4, 4}, 3, data);
  alloy_value *sz = NODE(&c, "aten.sym_size.int", V(x), I(0));
  alloy_value *n = NODE(&c, "_operator.mul", V(sz), I(16));
  alloy_arg size[2] = {V(n), I(1)};
  alloy_value *view = NODE(&c, "aten.view.default", V(x), alloy_arg_list(size, 2));
  alloy_value *outs[4] = {
      view, n,
      NODE(&c, "_operator.floordiv", V(n), I(5)),                          /* 48 // 5 = 9 */
      NODE(&c, "_operator.mod", V(NODE(&c, "_operator.neg", V(n))), I(5)), /* -48 % 5 = 2 */
  };
  if (tr_run_values(&c, outs, 4)) {
    tr_shape_is(&c.out[0], 2, (int64_t[]){48, 1});
    CHECK(((const float *)c.out[0].data)[47] == 47.0f);
    CHECK_INT(out_i(&c, 1), 48);
    CHECK_INT(out_i(&c, 2), 9);
    CHECK_INT(out_i(&c, 3), 2);
  }
  tr_close(&c);
}

/* What only the run can tell: a divisor that is 0 for this input, a power
 * that overflows. The run fails with the kernel's reason. */
TEST(operator_ops_ref_run_time_errors) {
  static const struct {
    const char *op;
    bool size_first; /* op(size, 5) rather than op(5, size) */
    int64_t size, want; /* want == INT64_MIN: the run fails */
    const char *why;
  } cases[] = {
      {"_operator.floordiv", false, 3, 1, NULL},
      {"_operator.floordiv", false, 0, INT64_MIN, "integer division or modulo by zero"},
      {"_operator.mod", false, 0, INT64_MIN, "integer division or modulo by zero"},
      {"_operator.pow", false, 2, 25, NULL},
      {"_operator.pow", false, 64, INT64_MIN, "does not fit in int64"},
      {"_operator.pow", true, 0, 0, NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tr_case c;
    tr_open(&c);
    alloy_dim s0;
    CHECK_OK(alloy_sym_new(alloy_graph_symtab(c.g), "s0", 0, 64, &s0));
    float data[64] = {0};
    alloy_value *x = sym_input(&c, (alloy_dim[]){s0}, (int64_t[]){cases[i].size}, 1, data);
    alloy_value *sz = NODE(&c, "aten.sym_size.int", V(x), I(0));
    alloy_value *r = cases[i].size_first ? NODE(&c, cases[i].op, V(sz), I(5))
                                         : NODE(&c, cases[i].op, I(5), V(sz));
    REQUIRE(r);
    if (cases[i].want != INT64_MIN) {
      if (tr_run_values(&c, &r, 1)) CHECK_INT(out_i(&c, 0), cases[i].want);
    } else {
      alloy_error *e = alloy_graph_set_outputs(c.g, &r, 1);
      if (!e) e = alloy_program_compile(c.rt, c.backend, c.g, &c.prog);
      CHECK_OK(e);
      alloy_host_clear_last_log();
      c.out[0].struct_size = sizeof c.out[0];
      e = c.prog ? alloy_program_run(c.prog, c.in, c.nin, c.out, 1) : NULL;
      if (!e) {
        harness_fail(__FILE__, __LINE__, "%s with size %lld ran, expected it to fail",
                     cases[i].op, (long long)cases[i].size);
      } else {
        const char *why = alloy_host_last_log();
        if (!why || !strstr(why, cases[i].why) || !strstr(why, cases[i].op))
          harness_fail(__FILE__, __LINE__, "%s: logged \"%s\", expected \"%s\"", cases[i].op,
                       why ? why : "(nothing)", cases[i].why);
        alloy_error_free(e);
      }
    }
    tr_close(&c);
  }
}
