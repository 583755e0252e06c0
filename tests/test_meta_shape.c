/*
 * tests/test_meta_shape.c: the shape functions of ir/meta_shape.c on graphs
 * with a symbolic batch s0, as a model exported with a dynamic batch has:
 * sizes must come out as expressions over s0 (never a guessed number), and
 * a provably bad argument must give an error that says what is wrong.
 */
#include <stdint.h>
#include <stdlib.h>

#include "alloy/graph.h"
#include "harness.h"
#include "testgraph.h"


/* Argument shorthands: ARGS(V(x), I(0)) expands to an array and its length. */
#define ARGS(...) \
  (alloy_arg[]){__VA_ARGS__}, (int)(sizeof((alloy_arg[]){__VA_ARGS__}) / sizeof(alloy_arg))
#define V(v) alloy_arg_value(v)
#define I(i) alloy_arg_int(i)
#define D(d) alloy_arg_dim(d)
#define NONE alloy_arg_none()
static alloy_arg ints(const alloy_arg *items, int n) { return alloy_arg_list(items, n); }

TEST(meta_shape_view_keeps_batch_symbolic) {
  tg_fixture f = tg_setup(2);
  alloy_value *x = tg_input(&f, ALLOY_F32, (alloy_dim[]){f.s0, K(16), K(64)}, 3);
  alloy_dim s16 = alloy_dim_mul(f.st, f.s0, K(16));
  /* view(x, [s0*16, 64]) */
  alloy_arg sz1[2] = {D(s16), I(64)};
  alloy_node *a = tg_add(&f, "aten.view.default", ARGS(V(x), ints(sz1, 2)), NULL);
  CHECK(tg_dim_is(a, 0, 0, s16));
  CHECK_STR(tg_shape_of(a, 0), "16*s0, 64");
  /* view(x, [-1, 64]): the -1 is numel // 64, kept symbolic */
  alloy_arg sz2[2] = {I(-1), I(64)};
  alloy_node *b = tg_add(&f, "aten.view.default", ARGS(V(x), ints(sz2, 2)), NULL);
  CHECK(tg_dim_is(b, 0, 0, s16));
  CHECK(tg_dim_is(b, 0, 1, K(64)));
  /* reshape(x, [s0, -1]) and back: [s0, 1024] */
  alloy_arg sz3[2] = {D(f.s0), I(-1)};
  alloy_node *c = tg_add(&f, "aten.reshape.default", ARGS(V(x), ints(sz3, 2)), NULL);
  CHECK_STR(tg_shape_of(c, 0), "s0, 1024");
  /* flatten(x, 0, 1) */
  alloy_node *d = tg_add(&f, "aten.flatten.using_ints", ARGS(V(x), I(0), I(1)), NULL);
  CHECK(tg_dim_is(d, 0, 0, s16));
  CHECK_OK(alloy_graph_verify(f.g));
  alloy_graph_free(f.g);
}

TEST(meta_shape_view_errors) {
  tg_fixture f = tg_setup(2);
  alloy_value *x = tg_input(&f, ALLOY_F32, (alloy_dim[]){K(2), K(3)}, 2);
  alloy_error *e;
  alloy_arg bad[1] = {I(4)};
  tg_add(&f, "aten.view.default", ARGS(V(x), ints(bad, 1)), &e);
  CHECK_ERROR(e, "shape '[4]' is invalid for input of size 6");
  alloy_arg two[2] = {I(-1), I(-1)};
  tg_add(&f, "aten.view.default", ARGS(V(x), ints(two, 2)), &e);
  CHECK_ERROR(e, "only one dimension can be inferred");
  alloy_arg odd[2] = {I(-1), I(4)};
  tg_add(&f, "aten.view.default", ARGS(V(x), ints(odd, 2)), &e);
  CHECK_ERROR(e, "is invalid for input of size 6");
  /* 1024*s0 elements with s0 in [2, 64] are never 300000 */
  alloy_value *y = tg_input(&f, ALLOY_F32, (alloy_dim[]){f.s0, K(1024)}, 2);
  alloy_arg big[2] = {I(100000), I(3)};
  tg_add(&f, "aten.view.default", ARGS(V(y), ints(big, 2)), &e);
  CHECK_ERROR(e, "is invalid for input of size 1024*s0");
  alloy_graph_free(f.g);
}

TEST(meta_shape_slice_on_symbolic_dim) {
  tg_fixture f = tg_setup(2);
  alloy_value *x = tg_input(&f, ALLOY_F32, (alloy_dim[]){f.s0, K(3)}, 2);
  alloy_arg xv = V(x);
  /* x[1:] as exported: end = INT64_MAX */
  alloy_node *a = tg_add(&f, "aten.slice.Tensor", ARGS(xv, I(0), I(1), I(INT64_MAX)), NULL);
  CHECK_STR(tg_shape_of(a, 0), "s0 - 1, 3");
  /* x[-2:]: s0 >= 2, so exactly 2 rows */
  alloy_node *b = tg_add(&f, "aten.slice.Tensor", ARGS(xv, I(0), I(-2), NONE), NULL);
  CHECK(tg_dim_is(b, 0, 0, K(2)));
  /* x[::2]: ceil(s0 / 2) */
  alloy_node *c = tg_add(&f, "aten.slice.Tensor", ARGS(xv, I(0), NONE, NONE, I(2)), NULL);
  CHECK(tg_dim_is(c, 0, 0, alloy_dim_ceildiv(f.st, f.s0, K(2))));
  /* x[:100] on s0 <= 64 is all of it */
  alloy_node *d = tg_add(&f, "aten.slice.Tensor", ARGS(xv, I(0), I(0), I(100)), NULL);
  CHECK(tg_dim_is(d, 0, 0, f.s0));
  /* x[:s0-1] with a symbolic end */
  alloy_dim end = alloy_dim_sub(f.st, f.s0, K(1));
  alloy_node *e1 = tg_add(&f, "aten.slice.Tensor", ARGS(xv, I(0), I(0), D(end)), NULL);
  CHECK(tg_dim_is(e1, 0, 0, end));
  /* select on the batch keeps the rest; step 0 is an error */
  alloy_node *s = tg_add(&f, "aten.select.int", ARGS(xv, I(1), I(-1)), NULL);
  CHECK(tg_dim_is(s, 0, 0, f.s0));
  alloy_error *err;
  tg_add(&f, "aten.slice.Tensor", ARGS(xv, I(0), I(0), I(1), I(0)), &err);
  CHECK_ERROR(err, "slice step must be positive");
  tg_add(&f, "aten.select.int", ARGS(xv, I(1), I(3)), &err);
  CHECK_ERROR(err, "index 3 out of range");
  CHECK_OK(alloy_graph_verify(f.g));
  alloy_graph_free(f.g);
}

TEST(meta_shape_cat_symbolic_and_promotion) {
  tg_fixture f = tg_setup(2);
  alloy_value *a = tg_input(&f, ALLOY_F32, (alloy_dim[]){f.s0, K(3)}, 2);
  alloy_value *b = tg_input(&f, ALLOY_F32, (alloy_dim[]){f.s0, K(5)}, 2);
  alloy_arg ab[2] = {V(a), V(b)};
  alloy_node *n = tg_add(&f, "aten.cat.default", ARGS(ints(ab, 2), I(1)), NULL);
  CHECK_STR(tg_shape_of(n, 0), "s0, 8");
  /* along the batch: s0 + s1 rows; int32 with float16 promotes to float16 */
  alloy_value *c = tg_input(&f, ALLOY_I32, (alloy_dim[]){f.s0, K(3)}, 2);
  alloy_value *d = tg_input(&f, ALLOY_F16, (alloy_dim[]){f.s1, K(3)}, 2);
  alloy_arg cd[2] = {V(c), V(d)};
  alloy_node *m = tg_add(&f, "aten.cat.default", ARGS(ints(cd, 2)), NULL);
  CHECK(tg_dim_is(m, 0, 0, alloy_dim_add(f.st, f.s0, f.s1)));
  CHECK_INT(m ? (int)alloy_value_dtype(alloy_node_output(m, 0)) : -1, ALLOY_F16);
  /* a legacy empty [0] tensor is skipped for shapes, not for the dtype */
  alloy_value *empty = tg_input(&f, ALLOY_F64, (alloy_dim[]){K(0)}, 1);
  alloy_arg ea[2] = {V(empty), V(a)};
  alloy_node *k = tg_add(&f, "aten.cat.default", ARGS(ints(ea, 2), I(-1)), NULL);
  CHECK_STR(tg_shape_of(k, 0), "s0, 3");
  CHECK_INT(k ? (int)alloy_value_dtype(alloy_node_output(k, 0)) : -1, ALLOY_F64);
  /* stack of the two [s0, 3] */
  alloy_arg aa[2] = {V(a), V(a)};
  alloy_node *s = tg_add(&f, "aten.stack.default", ARGS(ints(aa, 2), I(1)), NULL);
  CHECK_STR(tg_shape_of(s, 0), "s0, 2, 3");
  alloy_error *e;
  tg_add(&f, "aten.cat.default", ARGS(ints(ab, 2), I(0)), &e);
  CHECK_ERROR(e, "must match except in dimension 0. Expected size 3 but got size 5");
  CHECK_OK(alloy_graph_verify(f.g));
  alloy_graph_free(f.g);
}

TEST(meta_shape_expand_permute_squeeze) {
  tg_fixture f = tg_setup(2);
  alloy_value *x = tg_input(&f, ALLOY_BF16, (alloy_dim[]){K(1), f.s0, K(1)}, 3);
  alloy_arg xv = V(x);
  alloy_arg sz[4] = {I(2), D(f.s1), I(-1), I(7)};
  alloy_node *a = tg_add(&f, "aten.expand.default", ARGS(xv, ints(sz, 4)), NULL);
  CHECK(tg_dim_is(a, 0, 1, f.s1));
  CHECK(tg_dim_is(a, 0, 2, f.s0));
  CHECK(tg_dim_is(a, 0, 3, K(7)));
  alloy_arg pd[3] = {I(1), I(-1), I(0)};
  alloy_node *p = tg_add(&f, "aten.permute.default", ARGS(xv, ints(pd, 3)), NULL);
  CHECK_STR(tg_shape_of(p, 0), "s0, 1, 1");
  /* s0 >= 2 is never squeezed; the literal ones are */
  alloy_node *q = tg_add(&f, "aten.squeeze.default", ARGS(xv), NULL);
  CHECK_STR(tg_shape_of(q, 0), "s0");
  alloy_node *u = tg_add(&f, "aten.unsqueeze.default", ARGS(xv, I(-1)), NULL);
  CHECK_STR(tg_shape_of(u, 0), "1, s0, 1, 1");
  alloy_error *e;
  alloy_arg bad[3] = {I(1), I(5), I(1)};
  alloy_value *y = tg_input(&f, ALLOY_F32, (alloy_dim[]){K(1), K(3), K(1)}, 3);
  tg_add(&f, "aten.expand.default", ARGS(V(y), ints(bad, 3)), &e);
  CHECK_ERROR(e, "must match the existing size (3) at non-singleton dimension 1");
  tg_add(&f, "aten.permute.default", ARGS(xv, ints(sz, 2)), &e);
  CHECK_ERROR(e, "argument 'dims' must hold concrete integers");
  alloy_graph_free(f.g);
}

TEST(meta_shape_split_and_pad) {
  tg_fixture f = tg_setup(2);
  alloy_dim two_s0 = alloy_dim_mul(f.st, f.s0, K(2));
  alloy_value *x = tg_input(&f, ALLOY_F32, (alloy_dim[]){two_s0, K(6)}, 2);
  alloy_arg xv = V(x);
  /* split(x, s0): two halves of s0 rows */
  alloy_node *a = tg_add(&f, "aten.split.Tensor", ARGS(xv, D(f.s0)), NULL);
  CHECK_INT(a ? alloy_node_num_outputs(a) : -1, 2);
  CHECK(tg_dim_is(a, 0, 0, f.s0));
  CHECK(tg_dim_is(a, 1, 0, f.s0));
  /* split along the concrete dim: sizes 4 and 2 */
  alloy_node *b = tg_add(&f, "aten.split.Tensor", ARGS(xv, I(4), I(1)), NULL);
  CHECK_INT(b ? alloy_node_num_outputs(b) : -1, 2);
  CHECK_STR(tg_shape_of(b, 1), "2*s0, 2");
  /* padding a symbolic dim */
  alloy_arg pads[4] = {I(1), I(2), I(-1), I(0)};
  alloy_node *p = tg_add(&f, "aten.constant_pad_nd.default", ARGS(xv, ints(pads, 4)), NULL);
  CHECK_STR(tg_shape_of(p, 0), "2*s0 - 1, 9");
  alloy_error *e;
  /* how many pieces s0 rows make in chunks of 3 depends on s0 */
  tg_add(&f, "aten.split.Tensor", ARGS(xv, I(3)), &e);
  CHECK_ERROR(e, "must be a concrete integer");
  alloy_arg sizes[2] = {I(1), I(2)};
  tg_add(&f, "aten.split_with_sizes.default", ARGS(xv, ints(sizes, 2), I(1)), &e);
  CHECK_ERROR(e, "split_with_sizes expects split_sizes to sum exactly to 6");
  alloy_graph_free(f.g);
}

/* Ops the golden corpus has no case for, against PyTorch's rules. */
TEST(meta_shape_ops_without_golden_cases) {
  tg_fixture f = tg_setup(2);
  alloy_error *e;
  /* col2im: 12 = 3 planes of 2x2 kernels, 3*4 = 12 sliding blocks */
  alloy_value *cols = tg_input(&f, ALLOY_F32, (alloy_dim[]){f.s0, K(12), K(12)}, 3);
  alloy_arg osz[2] = {I(4), I(5)}, k2[2] = {I(2), I(2)}, one[2] = {I(1), I(1)},
            zero[2] = {I(0), I(0)};
  alloy_node *c = tg_add(&f, "aten.col2im.default",
                      ARGS(V(cols), ints(osz, 2), ints(k2, 2), ints(one, 2), ints(zero, 2),
                           ints(one, 2)),
                      NULL);
  CHECK_STR(tg_shape_of(c, 0), "s0, 3, 4, 5");
  alloy_arg osz2[2] = {I(4), I(6)};
  tg_add(&f, "aten.col2im.default",
      ARGS(V(cols), ints(osz2, 2), ints(k2, 2), ints(one, 2), ints(zero, 2), ints(one, 2)), &e);
  CHECK_ERROR(e, "number of sliding blocks 3 * 5 = 15, but got input.size(2)=12");
  /* diff with a float64 prepend: promoted, and n elements shorter */
  alloy_value *x = tg_input(&f, ALLOY_F32, (alloy_dim[]){f.s0, K(5)}, 2);
  alloy_value *pre = tg_input(&f, ALLOY_F64, (alloy_dim[]){f.s0, K(1)}, 2);
  alloy_node *d = tg_add(&f, "aten.diff.default", ARGS(V(x), I(2), I(-1), V(pre)), NULL);
  CHECK_STR(tg_shape_of(d, 0), "s0, 4");
  CHECK_INT(d ? (int)alloy_value_dtype(alloy_node_output(d, 0)) : -1, ALLOY_F64);
  alloy_node *d2 = tg_add(&f, "aten.diff.default", ARGS(V(x), I(9)), NULL);
  CHECK_STR(tg_shape_of(d2, 0), "s0, 0");
  /* reflection_pad2d on [C, H, W] with a symbolic H */
  alloy_value *img = tg_input(&f, ALLOY_F32, (alloy_dim[]){K(1), f.s0, K(8)}, 3);
  alloy_arg pads[4] = {I(2), I(3), I(1), I(1)};
  alloy_node *p = tg_add(&f, "aten.reflection_pad2d.default", ARGS(V(img), ints(pads, 4)), NULL);
  CHECK_STR(tg_shape_of(p, 0), "1, s0 + 2, 13");
  alloy_arg wide[4] = {I(8), I(0), I(0), I(0)};
  tg_add(&f, "aten.reflection_pad2d.default", ARGS(V(img), ints(wide, 4)), &e);
  CHECK_ERROR(e, "Padding size should be less than the corresponding input dimension");
  /* slice_scatter checks src against the slice */
  alloy_value *self = tg_input(&f, ALLOY_F32, (alloy_dim[]){f.s0, K(6)}, 2);
  alloy_value *src = tg_input(&f, ALLOY_F32, (alloy_dim[]){f.s0, K(2)}, 2);
  alloy_node *s = tg_add(&f, "aten.slice_scatter.default", ARGS(V(self), V(src), I(1), I(2), I(4)),
                      NULL);
  CHECK_STR(tg_shape_of(s, 0), "s0, 6");
  tg_add(&f, "aten.slice_scatter.default", ARGS(V(self), V(src), I(1), I(2), I(5)), &e);
  CHECK_ERROR(e, "expected src to have a size equal to the slice of self");
  /* to.dtype casts; _to_copy without a dtype keeps self's */
  alloy_node *t = tg_add(&f, "aten.to.dtype", ARGS(V(x), alloy_arg_dtype(ALLOY_F16)), NULL);
  CHECK_INT(t ? (int)alloy_value_dtype(alloy_node_output(t, 0)) : -1, ALLOY_F16);
  CHECK_STR(tg_shape_of(t, 0), "s0, 5");
  alloy_node *tc = tg_add(&f, "aten._to_copy.default", ARGS(V(x)), NULL);
  CHECK_INT(tc ? (int)alloy_value_dtype(alloy_node_output(tc, 0)) : -1, ALLOY_F32);
  /* repeat_interleave without output_size: a data-dependent length */
  alloy_value *reps = tg_input(&f, ALLOY_I64, (alloy_dim[]){K(3)}, 1);
  alloy_node *r = tg_add(&f, "aten.repeat_interleave.Tensor", ARGS(V(reps)), NULL);
  CHECK(r && !alloy_dim_is_const(alloy_value_shape(alloy_node_output(r, 0))[0]));
  CHECK_OK(alloy_graph_verify(f.g));
  alloy_graph_free(f.g);
}
