/*
 * tests/test_meta_nn.c: the shape functions of ir/meta_nn.c and
 * ir/meta_linalg.c on graphs with symbolic sizes, as a model exported with
 * a dynamic batch (or dynamic image size) has: the sizes must come out as
 * expressions over the symbols that evaluate to PyTorch's sizes, and a
 * provably bad argument must give an error that says what is wrong.
 */
#include <stdint.h>
#include <stdlib.h>

#include "alloy/graph.h"
#include "harness.h"

typedef struct fixture {
  alloy_graph *g;
  alloy_symtab *st;
  alloy_dim s0, s1;
} fixture;

static fixture setup(void) {
  fixture f;
  f.g = alloy_graph_new();
  f.st = alloy_graph_symtab(f.g);
  CHECK_OK(alloy_sym_new(f.st, "s0", 1, 64, &f.s0));
  CHECK_OK(alloy_sym_new(f.st, "s1", 1, ALLOY_SYM_INF, &f.s1));
  return f;
}

static alloy_dim K(int64_t v) { return alloy_dim_const(v); }

static alloy_value *input(fixture *f, alloy_dtype t, const alloy_dim *shape, int rank) {
  alloy_value_type vt = {ALLOY_VALUE_TENSOR, t, rank, shape, NULL, {ALLOY_DEVICE_CPU, -1},
                         {NULL, 0}};
  alloy_value *v = NULL;
  CHECK_OK(alloy_graph_add_input(f->g, NULL, &vt, &v));
  return v;
}

/* Adds a node; returns it, or NULL with *err set (the caller frees it)
 * when err is given; without err a failure is recorded. */
static alloy_node *add(fixture *f, const char *op, const alloy_arg *args, int n,
                       alloy_error **err) {
  alloy_node *node = NULL;
  const alloy_op *o = alloy_op_find(op);
  if (!o) {
    harness_fail(__FILE__, __LINE__, "op %s not in the registry", op);
    return NULL;
  }
  alloy_error *e = alloy_graph_add_node(f->g, o, args, n, NULL, NULL, 0, NULL, &node);
  if (err) {
    *err = e;
  } else if (e) {
    harness_fail(__FILE__, __LINE__, "%s failed: %s", op, alloy_error_message(e));
    alloy_error_free(e);
  }
  return e ? NULL : node;
}

/* Output k's shape as text: "s0, 8, 32, 32". */
static const char *shape_of(const alloy_node *n, int k) {
  static char buf[512];
  buf[0] = '\0';
  if (!n) return "(no node)";
  const alloy_value *v = alloy_node_output(n, k);
  size_t len = 0;
  for (int d = 0; d < alloy_value_rank(v) && len < sizeof buf; d++) {
    if (d) len += (size_t)snprintf(buf + len, sizeof buf - len, ", ");
    if (len < sizeof buf)
      len += alloy_dim_print(alloy_value_shape(v)[d], buf + len, sizeof buf - len);
  }
  return buf;
}

static alloy_dtype dtype_of(const alloy_node *n, int k) {
  return n ? alloy_value_dtype(alloy_node_output(n, k)) : ALLOY_DTYPE_COUNT;
}

static bool dim_is(const alloy_node *n, int k, int d, alloy_dim want) {
  if (!n || d >= alloy_value_rank(alloy_node_output(n, k))) return false;
  return alloy_dim_same(alloy_value_shape(alloy_node_output(n, k))[d], want);
}

/* Output k's dim d with symbol `sym` (index in the table) bound to v. */
static int64_t eval_at(fixture *f, const alloy_node *n, int k, int d, int sym, int64_t v) {
  int64_t values[4] = {0};
  bool bound[4] = {false};
  values[sym] = v;
  bound[sym] = true;
  int64_t out = -1;
  CHECK_OK(alloy_dim_eval(f->st, alloy_value_shape(alloy_node_output(n, k))[d], values, bound,
                          4, &out));
  return out;
}

/* The error exists and its message contains text. */
static void check_error(alloy_error *e, const char *text, int line) {
  if (!e) {
    harness_fail(__FILE__, line, "expected an error containing \"%s\"", text);
    return;
  }
  if (!strstr(alloy_error_message(e), text))
    harness_fail(__FILE__, line, "error \"%s\" does not contain \"%s\"",
                 alloy_error_message(e), text);
  alloy_error_free(e);
}

static alloy_arg ints(const alloy_arg *items, int n) { return alloy_arg_list(items, n); }

TEST(meta_nn_conv2d_symbolic_batch) {
  fixture f = setup();
  alloy_dim xs[4] = {f.s0, K(3), K(32), K(32)}, ws[4] = {K(8), K(3), K(3), K(3)};
  alloy_dim bs[1] = {K(8)};
  alloy_value *x = input(&f, ALLOY_F32, xs, 4), *w = input(&f, ALLOY_F32, ws, 4);
  alloy_value *b = input(&f, ALLOY_F32, bs, 1);
  alloy_arg one[2] = {alloy_arg_int(1), alloy_arg_int(1)};
  /* conv2d(x, w, b, stride=1, padding=1): same size */
  alloy_arg args[5] = {alloy_arg_value(x), alloy_arg_value(w), alloy_arg_value(b),
                       ints(one, 2), ints(one, 2)};
  alloy_node *n = add(&f, "aten.conv2d.default", args, 5, NULL);
  CHECK_STR(shape_of(n, 0), "s0, 8, 32, 32");
  CHECK(dim_is(n, 0, 0, f.s0));
  CHECK_INT(dtype_of(n, 0), ALLOY_F32);
  /* the same through aten.convolution, stride 2 and no padding */
  alloy_arg two[1] = {alloy_arg_int(2)}, zero[1] = {alloy_arg_int(0)};
  alloy_arg cargs[9] = {alloy_arg_value(x), alloy_arg_value(w), alloy_arg_none(),
                        ints(two, 1), ints(zero, 1), ints(one, 1),
                        alloy_arg_bool(false), ints(zero, 1), alloy_arg_int(1)};
  n = add(&f, "aten.convolution.default", cargs, 9, NULL);
  CHECK_STR(shape_of(n, 0), "s0, 8, 15, 15");
  CHECK_OK(alloy_graph_verify(f.g));
  alloy_graph_free(f.g);
}

TEST(meta_nn_conv_symbolic_image_and_transposed) {
  fixture f = setup();
  /* 1-d input of symbolic length s1, kernel 3, stride 2, padding 1 */
  alloy_dim xs[3] = {K(2), K(4), f.s1}, ws[3] = {K(4), K(6), K(3)};
  alloy_value *x = input(&f, ALLOY_F32, xs, 3), *w = input(&f, ALLOY_F32, ws, 3);
  alloy_arg s[1] = {alloy_arg_int(2)}, p[1] = {alloy_arg_int(1)}, d[1] = {alloy_arg_int(1)};
  alloy_arg op[1] = {alloy_arg_int(1)};
  alloy_arg args[9] = {alloy_arg_value(x), alloy_arg_value(w), alloy_arg_none(), ints(s, 1),
                       ints(p, 1), ints(d, 1), alloy_arg_bool(true), ints(op, 1),
                       alloy_arg_int(2)};
  /* transposed, groups 2: channels 6*2, length (L-1)*2 - 2 + 2 + 1 + 1 */
  alloy_node *n = add(&f, "aten.convolution.default", args, 9, NULL);
  CHECK(dim_is(n, 0, 1, K(12)));
  for (int64_t L = 1; L < 20 && n; L++) CHECK_INT(eval_at(&f, n, 0, 2, 1, L), 2 * L);
  /* not transposed: weight [4, 2, 3] with groups 2 over 4 channels */
  alloy_dim w2s[3] = {K(4), K(2), K(3)};
  alloy_value *w2 = input(&f, ALLOY_F32, w2s, 3);
  args[1] = alloy_arg_value(w2);
  args[6] = alloy_arg_bool(false);
  n = add(&f, "aten.convolution.default", args, 9, NULL);
  CHECK(dim_is(n, 0, 1, K(4)));
  for (int64_t L = 1; L < 20 && n; L++)
    CHECK_INT(eval_at(&f, n, 0, 2, 1, L), (L + 2 - 2 - 1) / 2 + 1);
  alloy_graph_free(f.g);
}

TEST(meta_nn_conv_bad_channels) {
  fixture f = setup();
  alloy_dim xs[4] = {f.s0, K(4), K(8), K(8)}, ws[4] = {K(8), K(3), K(3), K(3)};
  alloy_value *x = input(&f, ALLOY_F32, xs, 4), *w = input(&f, ALLOY_F32, ws, 4);
  alloy_arg args[2] = {alloy_arg_value(x), alloy_arg_value(w)};
  alloy_error *e = NULL;
  add(&f, "aten.conv2d.default", args, 2, &e);
  check_error(e, "expected input with 3 channels, but got 4 channels", __LINE__);
  alloy_graph_free(f.g);
}

TEST(meta_nn_addmm_symbolic_batch) {
  fixture f = setup();
  alloy_dim bs[1] = {K(4)}, xs[2] = {f.s0, K(3)}, ws[2] = {K(3), K(4)};
  alloy_value *b = input(&f, ALLOY_F32, bs, 1), *x = input(&f, ALLOY_F32, xs, 2);
  alloy_value *w = input(&f, ALLOY_F32, ws, 2);
  alloy_arg args[3] = {alloy_arg_value(b), alloy_arg_value(x), alloy_arg_value(w)};
  alloy_node *n = add(&f, "aten.addmm.default", args, 3, NULL);
  CHECK_STR(shape_of(n, 0), "s0, 4");
  CHECK(dim_is(n, 0, 0, f.s0));
  /* linear(x, w^T-shaped [4, 3], b) is the same product */
  alloy_dim lws[2] = {K(4), K(3)};
  alloy_value *lw = input(&f, ALLOY_F32, lws, 2);
  alloy_arg largs[3] = {alloy_arg_value(x), alloy_arg_value(lw), alloy_arg_value(b)};
  n = add(&f, "aten.linear.default", largs, 3, NULL);
  CHECK_STR(shape_of(n, 0), "s0, 4");
  CHECK_OK(alloy_graph_verify(f.g));
  alloy_graph_free(f.g);
}

TEST(meta_nn_matmul_bad_arguments) {
  fixture f = setup();
  alloy_dim as[2] = {f.s0, K(3)}, bs[2] = {K(4), K(5)};
  alloy_value *a = input(&f, ALLOY_F32, as, 2), *b = input(&f, ALLOY_F32, bs, 2);
  alloy_value *h = input(&f, ALLOY_F16, bs, 2);
  alloy_arg args[2] = {alloy_arg_value(a), alloy_arg_value(b)};
  alloy_error *e = NULL;
  add(&f, "aten.mm.default", args, 2, &e);
  check_error(e, "shapes [s0, 3] and [4, 5] cannot be multiplied", __LINE__);
  args[1] = alloy_arg_value(h);
  add(&f, "aten.mm.default", args, 2, &e);
  check_error(e, "same dtype, got float32 and float16", __LINE__);
  /* a self that does not broadcast to the product [s0, 5] */
  alloy_dim cs[2] = {K(3), K(5)};
  alloy_value *c = input(&f, ALLOY_F32, cs, 2), *a4 = NULL;
  alloy_dim a4s[2] = {f.s0, K(4)};
  a4 = input(&f, ALLOY_F32, a4s, 2);
  alloy_arg add_args[3] = {alloy_arg_value(c), alloy_arg_value(a4), alloy_arg_value(b)};
  add(&f, "aten.addmm.default", add_args, 3, &e);
  CHECK(e != NULL);
  alloy_error_free(e);
  alloy_graph_free(f.g);
}

TEST(meta_nn_max_pool_ceil_mode_symbolic) {
  fixture f = setup();
  alloy_dim xs[4] = {f.s0, K(2), f.s1, K(6)};
  alloy_value *x = input(&f, ALLOY_F32, xs, 4);
  alloy_arg k[2] = {alloy_arg_int(3), alloy_arg_int(3)};
  alloy_arg s[2] = {alloy_arg_int(2), alloy_arg_int(2)};
  alloy_arg p[2] = {alloy_arg_int(1), alloy_arg_int(1)};
  alloy_arg d[2] = {alloy_arg_int(1), alloy_arg_int(1)};
  alloy_arg args[6] = {alloy_arg_value(x), ints(k, 2), ints(s, 2), ints(p, 2), ints(d, 2),
                       alloy_arg_bool(true)};
  alloy_node *n = add(&f, "aten.max_pool2d_with_indices.default", args, 6, NULL);
  REQUIRE(n);
  CHECK(dim_is(n, 0, 0, f.s0));
  CHECK(dim_is(n, 0, 3, K(4))); /* ceil((6 + 2 - 3) / 2) + 1 = 4 */
  CHECK_INT(dtype_of(n, 1), ALLOY_I64);
  /* PyTorch's rule: ceil the window count, but the last window must start
   * inside the input or the left padding. */
  for (int64_t L = 1; L < 40; L++) {
    int64_t o = (L + 2 - 2 - 1 + 1) / 2 + 1;
    if ((o - 1) * 2 >= L + 1) o--;
    CHECK_INT(eval_at(&f, n, 0, 2, 1, L), o);
  }
  alloy_graph_free(f.g);
}

TEST(meta_nn_norms_symbolic_batch) {
  fixture f = setup();
  alloy_dim xs[3] = {f.s0, K(16), K(64)}, ws[1] = {K(64)};
  alloy_value *x = input(&f, ALLOY_BF16, xs, 3), *w = input(&f, ALLOY_BF16, ws, 1);
  alloy_arg ns[1] = {alloy_arg_int(64)};
  alloy_arg args[5] = {alloy_arg_value(x), ints(ns, 1), alloy_arg_value(w), alloy_arg_none(),
                       alloy_arg_float(1e-5)};
  alloy_node *n = add(&f, "aten.native_layer_norm.default", args, 5, NULL);
  CHECK_STR(shape_of(n, 0), "s0, 16, 64");
  CHECK_STR(shape_of(n, 1), "s0, 16, 1");
  CHECK_INT(dtype_of(n, 2), ALLOY_BF16); /* the CPU kernel's choice */
  /* a float32 weight on a bfloat16 input makes the statistics float32 */
  alloy_value *w32 = input(&f, ALLOY_F32, ws, 1);
  args[2] = alloy_arg_value(w32);
  n = add(&f, "aten.native_layer_norm.default", args, 5, NULL);
  CHECK_INT(dtype_of(n, 1), ALLOY_F32);
  /* batch norm in training: per-channel statistics */
  alloy_dim is[4] = {f.s0, K(3), f.s1, f.s1}, cs[1] = {K(3)};
  alloy_value *img = input(&f, ALLOY_F32, is, 4), *rm = input(&f, ALLOY_F32, cs, 1);
  alloy_value *rv = input(&f, ALLOY_F32, cs, 1);
  alloy_arg bn[8] = {alloy_arg_value(img), alloy_arg_none(), alloy_arg_none(),
                     alloy_arg_value(rm), alloy_arg_value(rv), alloy_arg_bool(true),
                     alloy_arg_float(0.1), alloy_arg_float(1e-5)};
  n = add(&f, "aten.native_batch_norm.default", bn, 8, NULL);
  CHECK_STR(shape_of(n, 0), "s0, 3, s1, s1");
  CHECK_STR(shape_of(n, 1), "3");
  bn[5] = alloy_arg_bool(false);
  n = add(&f, "aten.native_batch_norm.default", bn, 8, NULL);
  CHECK_STR(shape_of(n, 2), "0");
  /* normalized_shape that does not match the input */
  alloy_arg bad[1] = {alloy_arg_int(32)};
  args[1] = ints(bad, 1);
  args[2] = alloy_arg_none();
  alloy_error *e = NULL;
  add(&f, "aten.native_layer_norm.default", args, 5, &e);
  check_error(e, "given normalized_shape=[32], expected input with shape [*, 32]", __LINE__);
  alloy_graph_free(f.g);
}

TEST(meta_nn_sdpa_gqa_and_upsample) {
  fixture f = setup();
  alloy_dim qs[4] = {f.s0, K(8), f.s1, K(16)}, ks[4] = {f.s0, K(2), K(10), K(16)};
  alloy_dim vs[4] = {f.s0, K(2), K(10), K(32)};
  alloy_value *q = input(&f, ALLOY_F16, qs, 4), *k = input(&f, ALLOY_F16, ks, 4);
  alloy_value *v = input(&f, ALLOY_F16, vs, 4);
  alloy_arg args[3] = {alloy_arg_value(q), alloy_arg_value(k), alloy_arg_value(v)};
  const char *names[1] = {"enable_gqa"};
  alloy_arg kw[1] = {alloy_arg_bool(true)};
  alloy_node *n = NULL;
  CHECK_OK(alloy_graph_add_node(f.g, alloy_op_find("aten.scaled_dot_product_attention"), args,
                                3, names, kw, 1, NULL, &n));
  CHECK_STR(shape_of(n, 0), "s0, 8, s1, 32");
  /* without enable_gqa the head counts must broadcast */
  alloy_error *e = NULL;
  add(&f, "aten.scaled_dot_product_attention.default", args, 3, &e);
  CHECK(e != NULL);
  alloy_error_free(e);
  /* upsample by scale 2 and 1.5 of a symbolic image */
  alloy_dim xs[4] = {f.s0, K(3), f.s1, K(10)};
  alloy_value *x = input(&f, ALLOY_F32, xs, 4);
  alloy_arg sc[2] = {alloy_arg_float(2.0), alloy_arg_float(1.5)};
  alloy_arg up[3] = {alloy_arg_value(x), alloy_arg_none(), ints(sc, 2)};
  n = add(&f, "aten.upsample_nearest2d.vec", up, 3, NULL);
  REQUIRE(n);
  CHECK_STR(shape_of(n, 0), "s0, 3, 2*s1, 15");
  alloy_arg sc2[2] = {alloy_arg_float(1.5), alloy_arg_float(1.5)};
  up[2] = ints(sc2, 2);
  n = add(&f, "aten.upsample_nearest2d.vec", up, 3, NULL);
  REQUIRE(n);
  for (int64_t L = 1; L < 30; L++) CHECK_INT(eval_at(&f, n, 0, 2, 1, L), (int64_t)(L * 1.5));
  alloy_graph_free(f.g);
}

TEST(meta_nn_linalg_batches) {
  fixture f = setup();
  alloy_dim as[3] = {f.s0, K(5), K(3)};
  alloy_value *a = input(&f, ALLOY_F32, as, 3);
  alloy_arg args[1] = {alloy_arg_value(a)};
  alloy_node *n = add(&f, "aten._linalg_svd.default", args, 1, NULL);
  CHECK_STR(shape_of(n, 0), "s0, 5, 3");
  CHECK_STR(shape_of(n, 1), "s0, 3");
  CHECK_STR(shape_of(n, 2), "s0, 3, 3");
  n = add(&f, "aten.linalg_lu_factor_ex.default", args, 1, NULL);
  CHECK_STR(shape_of(n, 1), "s0, 3");
  CHECK_INT(dtype_of(n, 1), ALLOY_I32);
  CHECK_STR(shape_of(n, 2), "s0");
  CHECK_INT(dtype_of(n, 2), ALLOY_I32);
  /* inverse of a non-square batch */
  alloy_error *e = NULL;
  add(&f, "aten.linalg_inv_ex.default", args, 1, &e);
  check_error(e, "expected a batch of square matrices, got shape [s0, 5, 3]", __LINE__);
  /* solve with a batch of vectors */
  alloy_dim ss[3] = {f.s0, K(4), K(4)}, bs[2] = {f.s0, K(4)};
  alloy_value *sq = input(&f, ALLOY_F32, ss, 3), *b = input(&f, ALLOY_F32, bs, 2);
  alloy_arg sargs[2] = {alloy_arg_value(sq), alloy_arg_value(b)};
  n = add(&f, "aten._linalg_solve_ex.default", sargs, 2, NULL);
  CHECK_STR(shape_of(n, 0), "s0, 4");
  CHECK_STR(shape_of(n, 2), "s0, 4");
  /* real FFT of a symbolic length keeps s1//2 + 1 bins */
  alloy_dim xs[2] = {f.s0, f.s1};
  alloy_value *x = input(&f, ALLOY_F32, xs, 2);
  alloy_arg dim[1] = {alloy_arg_int(-1)};
  alloy_arg fargs[4] = {alloy_arg_value(x), ints(dim, 1), alloy_arg_int(0), alloy_arg_bool(true)};
  n = add(&f, "aten._fft_r2c.default", fargs, 4, NULL);
  REQUIRE(n);
  CHECK_INT(dtype_of(n, 0), ALLOY_C64);
  for (int64_t L = 1; L < 10; L++) CHECK_INT(eval_at(&f, n, 0, 1, 1, L), L / 2 + 1);
  alloy_graph_free(f.g);
}
