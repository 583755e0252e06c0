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
#include "testgraph.h"

/* Output k's dim d with symbol `sym` (index in the table) bound to v. */
static int64_t eval_at(tg_fixture *f, const alloy_node *n, int k, int d, int sym, int64_t v) {
  int64_t values[4] = {0};
  bool bound[4] = {false};
  values[sym] = v;
  bound[sym] = true;
  int64_t out = -1;
  CHECK_OK(alloy_dim_eval(f->st, alloy_value_shape(alloy_node_output(n, k))[d], values, bound,
                          4, &out));
  return out;
}

static alloy_arg ints(const alloy_arg *items, int n) { return alloy_arg_list(items, n); }

TEST(meta_nn_conv2d_symbolic_batch) {
  tg_fixture f = tg_setup(1);
  alloy_dim xs[4] = {f.s0, K(3), K(32), K(32)}, ws[4] = {K(8), K(3), K(3), K(3)};
  alloy_dim bs[1] = {K(8)};
  alloy_value *x = tg_input(&f, ALLOY_F32, xs, 4), *w = tg_input(&f, ALLOY_F32, ws, 4);
  alloy_value *b = tg_input(&f, ALLOY_F32, bs, 1);
  alloy_arg one[2] = {alloy_arg_int(1), alloy_arg_int(1)};
  /* conv2d(x, w, b, stride=1, padding=1): same size */
  alloy_arg args[5] = {alloy_arg_value(x), alloy_arg_value(w), alloy_arg_value(b),
                       ints(one, 2), ints(one, 2)};
  alloy_node *n = tg_add(&f, "aten.conv2d.default", args, 5, NULL);
  CHECK_STR(tg_shape_of(n, 0), "s0, 8, 32, 32");
  CHECK(tg_dim_is(n, 0, 0, f.s0));
  CHECK_INT(tg_dtype_of(n, 0), ALLOY_F32);
  /* the same through aten.convolution, stride 2 and no padding */
  alloy_arg two[1] = {alloy_arg_int(2)}, zero[1] = {alloy_arg_int(0)};
  alloy_arg cargs[9] = {alloy_arg_value(x), alloy_arg_value(w), alloy_arg_none(),
                        ints(two, 1), ints(zero, 1), ints(one, 1),
                        alloy_arg_bool(false), ints(zero, 1), alloy_arg_int(1)};
  n = tg_add(&f, "aten.convolution.default", cargs, 9, NULL);
  CHECK_STR(tg_shape_of(n, 0), "s0, 8, 15, 15");
  CHECK_OK(alloy_graph_verify(f.g));
  alloy_graph_free(f.g);
}

TEST(meta_nn_conv_symbolic_image_and_transposed) {
  tg_fixture f = tg_setup(1);
  /* 1-d input of symbolic length s1, kernel 3, stride 2, padding 1 */
  alloy_dim xs[3] = {K(2), K(4), f.s1}, ws[3] = {K(4), K(6), K(3)};
  alloy_value *x = tg_input(&f, ALLOY_F32, xs, 3), *w = tg_input(&f, ALLOY_F32, ws, 3);
  alloy_arg s[1] = {alloy_arg_int(2)}, p[1] = {alloy_arg_int(1)}, d[1] = {alloy_arg_int(1)};
  alloy_arg op[1] = {alloy_arg_int(1)};
  alloy_arg args[9] = {alloy_arg_value(x), alloy_arg_value(w), alloy_arg_none(), ints(s, 1),
                       ints(p, 1), ints(d, 1), alloy_arg_bool(true), ints(op, 1),
                       alloy_arg_int(2)};
  /* transposed, groups 2: channels 6*2, length (L-1)*2 - 2 + 2 + 1 + 1 */
  alloy_node *n = tg_add(&f, "aten.convolution.default", args, 9, NULL);
  CHECK(tg_dim_is(n, 0, 1, K(12)));
  for (int64_t L = 1; L < 20 && n; L++) CHECK_INT(eval_at(&f, n, 0, 2, 1, L), 2 * L);
  /* not transposed: weight [4, 2, 3] with groups 2 over 4 channels */
  alloy_dim w2s[3] = {K(4), K(2), K(3)};
  alloy_value *w2 = tg_input(&f, ALLOY_F32, w2s, 3);
  args[1] = alloy_arg_value(w2);
  args[6] = alloy_arg_bool(false);
  n = tg_add(&f, "aten.convolution.default", args, 9, NULL);
  CHECK(tg_dim_is(n, 0, 1, K(4)));
  for (int64_t L = 1; L < 20 && n; L++)
    CHECK_INT(eval_at(&f, n, 0, 2, 1, L), (L + 2 - 2 - 1) / 2 + 1);
  alloy_graph_free(f.g);
}

TEST(meta_nn_conv_bad_channels) {
  tg_fixture f = tg_setup(1);
  alloy_dim xs[4] = {f.s0, K(4), K(8), K(8)}, ws[4] = {K(8), K(3), K(3), K(3)};
  alloy_value *x = tg_input(&f, ALLOY_F32, xs, 4), *w = tg_input(&f, ALLOY_F32, ws, 4);
  alloy_arg args[2] = {alloy_arg_value(x), alloy_arg_value(w)};
  alloy_error *e = NULL;
  tg_add(&f, "aten.conv2d.default", args, 2, &e);
  CHECK_ERROR(e, "expected input with 3 channels, but got 4 channels");
  alloy_graph_free(f.g);
}

TEST(meta_nn_addmm_symbolic_batch) {
  tg_fixture f = tg_setup(1);
  alloy_dim bs[1] = {K(4)}, xs[2] = {f.s0, K(3)}, ws[2] = {K(3), K(4)};
  alloy_value *b = tg_input(&f, ALLOY_F32, bs, 1), *x = tg_input(&f, ALLOY_F32, xs, 2);
  alloy_value *w = tg_input(&f, ALLOY_F32, ws, 2);
  alloy_arg args[3] = {alloy_arg_value(b), alloy_arg_value(x), alloy_arg_value(w)};
  alloy_node *n = tg_add(&f, "aten.addmm.default", args, 3, NULL);
  CHECK_STR(tg_shape_of(n, 0), "s0, 4");
  CHECK(tg_dim_is(n, 0, 0, f.s0));
  /* linear(x, w^T-shaped [4, 3], b) is the same product */
  alloy_dim lws[2] = {K(4), K(3)};
  alloy_value *lw = tg_input(&f, ALLOY_F32, lws, 2);
  alloy_arg largs[3] = {alloy_arg_value(x), alloy_arg_value(lw), alloy_arg_value(b)};
  n = tg_add(&f, "aten.linear.default", largs, 3, NULL);
  CHECK_STR(tg_shape_of(n, 0), "s0, 4");
  CHECK_OK(alloy_graph_verify(f.g));
  alloy_graph_free(f.g);
}

TEST(meta_nn_matmul_bad_arguments) {
  tg_fixture f = tg_setup(1);
  alloy_dim as[2] = {f.s0, K(3)}, bs[2] = {K(4), K(5)};
  alloy_value *a = tg_input(&f, ALLOY_F32, as, 2), *b = tg_input(&f, ALLOY_F32, bs, 2);
  alloy_value *h = tg_input(&f, ALLOY_F16, bs, 2);
  alloy_arg args[2] = {alloy_arg_value(a), alloy_arg_value(b)};
  alloy_error *e = NULL;
  tg_add(&f, "aten.mm.default", args, 2, &e);
  CHECK_ERROR(e, "shapes [s0, 3] and [4, 5] cannot be multiplied");
  args[1] = alloy_arg_value(h);
  tg_add(&f, "aten.mm.default", args, 2, &e);
  CHECK_ERROR(e, "same dtype, got float32 and float16");
  /* a self that does not broadcast to the product [s0, 5] */
  alloy_dim cs[2] = {K(3), K(5)};
  alloy_value *c = tg_input(&f, ALLOY_F32, cs, 2), *a4 = NULL;
  alloy_dim a4s[2] = {f.s0, K(4)};
  a4 = tg_input(&f, ALLOY_F32, a4s, 2);
  alloy_arg add_args[3] = {alloy_arg_value(c), alloy_arg_value(a4), alloy_arg_value(b)};
  tg_add(&f, "aten.addmm.default", add_args, 3, &e);
  CHECK(e != NULL);
  alloy_error_free(e);
  alloy_graph_free(f.g);
}

TEST(meta_nn_max_pool_ceil_mode_symbolic) {
  tg_fixture f = tg_setup(1);
  alloy_dim xs[4] = {f.s0, K(2), f.s1, K(6)};
  alloy_value *x = tg_input(&f, ALLOY_F32, xs, 4);
  alloy_arg k[2] = {alloy_arg_int(3), alloy_arg_int(3)};
  alloy_arg s[2] = {alloy_arg_int(2), alloy_arg_int(2)};
  alloy_arg p[2] = {alloy_arg_int(1), alloy_arg_int(1)};
  alloy_arg d[2] = {alloy_arg_int(1), alloy_arg_int(1)};
  alloy_arg args[6] = {alloy_arg_value(x), ints(k, 2), ints(s, 2), ints(p, 2), ints(d, 2),
                       alloy_arg_bool(true)};
  alloy_node *n = tg_add(&f, "aten.max_pool2d_with_indices.default", args, 6, NULL);
  REQUIRE(n);
  CHECK(tg_dim_is(n, 0, 0, f.s0));
  CHECK(tg_dim_is(n, 0, 3, K(4))); /* ceil((6 + 2 - 3) / 2) + 1 = 4 */
  CHECK_INT(tg_dtype_of(n, 1), ALLOY_I64);
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
  tg_fixture f = tg_setup(1);
  alloy_dim xs[3] = {f.s0, K(16), K(64)}, ws[1] = {K(64)};
  alloy_value *x = tg_input(&f, ALLOY_BF16, xs, 3), *w = tg_input(&f, ALLOY_BF16, ws, 1);
  alloy_arg ns[1] = {alloy_arg_int(64)};
  alloy_arg args[5] = {alloy_arg_value(x), ints(ns, 1), alloy_arg_value(w), alloy_arg_none(),
                       alloy_arg_float(1e-5)};
  alloy_node *n = tg_add(&f, "aten.native_layer_norm.default", args, 5, NULL);
  CHECK_STR(tg_shape_of(n, 0), "s0, 16, 64");
  CHECK_STR(tg_shape_of(n, 1), "s0, 16, 1");
  CHECK_INT(tg_dtype_of(n, 2), ALLOY_BF16); /* the CPU kernel's choice */
  /* a float32 weight on a bfloat16 input makes the statistics float32 */
  alloy_value *w32 = tg_input(&f, ALLOY_F32, ws, 1);
  args[2] = alloy_arg_value(w32);
  n = tg_add(&f, "aten.native_layer_norm.default", args, 5, NULL);
  CHECK_INT(tg_dtype_of(n, 1), ALLOY_F32);
  /* batch norm in training: per-channel statistics */
  alloy_dim is[4] = {f.s0, K(3), f.s1, f.s1}, cs[1] = {K(3)};
  alloy_value *img = tg_input(&f, ALLOY_F32, is, 4), *rm = tg_input(&f, ALLOY_F32, cs, 1);
  alloy_value *rv = tg_input(&f, ALLOY_F32, cs, 1);
  alloy_arg bn[8] = {alloy_arg_value(img), alloy_arg_none(), alloy_arg_none(),
                     alloy_arg_value(rm), alloy_arg_value(rv), alloy_arg_bool(true),
                     alloy_arg_float(0.1), alloy_arg_float(1e-5)};
  n = tg_add(&f, "aten.native_batch_norm.default", bn, 8, NULL);
  CHECK_STR(tg_shape_of(n, 0), "s0, 3, s1, s1");
  CHECK_STR(tg_shape_of(n, 1), "3");
  bn[5] = alloy_arg_bool(false);
  n = tg_add(&f, "aten.native_batch_norm.default", bn, 8, NULL);
  CHECK_STR(tg_shape_of(n, 2), "0");
  /* normalized_shape that does not match the input */
  alloy_arg bad[1] = {alloy_arg_int(32)};
  args[1] = ints(bad, 1);
  args[2] = alloy_arg_none();
  alloy_error *e = NULL;
  tg_add(&f, "aten.native_layer_norm.default", args, 5, &e);
  CHECK_ERROR(e, "given normalized_shape=[32], expected input with shape [*, 32]");
  alloy_graph_free(f.g);
}

TEST(meta_nn_sdpa_gqa_and_upsample) {
  tg_fixture f = tg_setup(1);
  alloy_dim qs[4] = {f.s0, K(8), f.s1, K(16)}, ks[4] = {f.s0, K(2), K(10), K(16)};
  alloy_dim vs[4] = {f.s0, K(2), K(10), K(32)};
  alloy_value *q = tg_input(&f, ALLOY_F16, qs, 4), *k = tg_input(&f, ALLOY_F16, ks, 4);
  alloy_value *v = tg_input(&f, ALLOY_F16, vs, 4);
  alloy_arg args[3] = {alloy_arg_value(q), alloy_arg_value(k), alloy_arg_value(v)};
  const char *names[1] = {"enable_gqa"};
  alloy_arg kw[1] = {alloy_arg_bool(true)};
  alloy_node *n = NULL;
  CHECK_OK(alloy_graph_add_node(f.g, alloy_op_find("aten.scaled_dot_product_attention"), args,
                                3, names, kw, 1, NULL, &n));
  CHECK_STR(tg_shape_of(n, 0), "s0, 8, s1, 32");
  /* without enable_gqa the head counts must broadcast */
  alloy_error *e = NULL;
  tg_add(&f, "aten.scaled_dot_product_attention.default", args, 3, &e);
  CHECK(e != NULL);
  alloy_error_free(e);
  /* upsample by scale 2 and 1.5 of a symbolic image */
  alloy_dim xs[4] = {f.s0, K(3), f.s1, K(10)};
  alloy_value *x = tg_input(&f, ALLOY_F32, xs, 4);
  alloy_arg sc[2] = {alloy_arg_float(2.0), alloy_arg_float(1.5)};
  alloy_arg up[3] = {alloy_arg_value(x), alloy_arg_none(), ints(sc, 2)};
  n = tg_add(&f, "aten.upsample_nearest2d.vec", up, 3, NULL);
  REQUIRE(n);
  CHECK_STR(tg_shape_of(n, 0), "s0, 3, 2*s1, 15");
  alloy_arg sc2[2] = {alloy_arg_float(1.5), alloy_arg_float(1.5)};
  up[2] = ints(sc2, 2);
  n = tg_add(&f, "aten.upsample_nearest2d.vec", up, 3, NULL);
  REQUIRE(n);
  for (int64_t L = 1; L < 30; L++) CHECK_INT(eval_at(&f, n, 0, 2, 1, L), (int64_t)(L * 1.5));
  alloy_graph_free(f.g);
}

TEST(meta_nn_linalg_batches) {
  tg_fixture f = tg_setup(1);
  alloy_dim as[3] = {f.s0, K(5), K(3)};
  alloy_value *a = tg_input(&f, ALLOY_F32, as, 3);
  alloy_arg args[1] = {alloy_arg_value(a)};
  alloy_node *n = tg_add(&f, "aten._linalg_svd.default", args, 1, NULL);
  CHECK_STR(tg_shape_of(n, 0), "s0, 5, 3");
  CHECK_STR(tg_shape_of(n, 1), "s0, 3");
  CHECK_STR(tg_shape_of(n, 2), "s0, 3, 3");
  n = tg_add(&f, "aten.linalg_lu_factor_ex.default", args, 1, NULL);
  CHECK_STR(tg_shape_of(n, 1), "s0, 3");
  CHECK_INT(tg_dtype_of(n, 1), ALLOY_I32);
  CHECK_STR(tg_shape_of(n, 2), "s0");
  CHECK_INT(tg_dtype_of(n, 2), ALLOY_I32);
  /* inverse of a non-square batch */
  alloy_error *e = NULL;
  tg_add(&f, "aten.linalg_inv_ex.default", args, 1, &e);
  CHECK_ERROR(e, "expected a batch of square matrices, got shape [s0, 5, 3]");
  /* solve with a batch of vectors */
  alloy_dim ss[3] = {f.s0, K(4), K(4)}, bs[2] = {f.s0, K(4)};
  alloy_value *sq = tg_input(&f, ALLOY_F32, ss, 3), *b = tg_input(&f, ALLOY_F32, bs, 2);
  alloy_arg sargs[2] = {alloy_arg_value(sq), alloy_arg_value(b)};
  n = tg_add(&f, "aten._linalg_solve_ex.default", sargs, 2, NULL);
  CHECK_STR(tg_shape_of(n, 0), "s0, 4");
  CHECK_STR(tg_shape_of(n, 2), "s0, 4");
  /* real FFT of a symbolic length keeps s1//2 + 1 bins */
  alloy_dim xs[2] = {f.s0, f.s1};
  alloy_value *x = tg_input(&f, ALLOY_F32, xs, 2);
  alloy_arg dim[1] = {alloy_arg_int(-1)};
  alloy_arg fargs[4] = {alloy_arg_value(x), ints(dim, 1), alloy_arg_int(0), alloy_arg_bool(true)};
  n = tg_add(&f, "aten._fft_r2c.default", fargs, 4, NULL);
  REQUIRE(n);
  CHECK_INT(tg_dtype_of(n, 0), ALLOY_C64);
  for (int64_t L = 1; L < 10; L++) CHECK_INT(eval_at(&f, n, 0, 1, 1, L), L / 2 + 1);
  alloy_graph_free(f.g);
}
