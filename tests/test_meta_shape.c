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

typedef struct fixture {
  alloy_graph *g;
  alloy_symtab *st;
  alloy_dim s0, s1;
} fixture;

static fixture setup(void) {
  fixture f;
  f.g = alloy_graph_new();
  f.st = alloy_graph_symtab(f.g);
  CHECK_OK(alloy_sym_new(f.st, "s0", 2, 64, &f.s0));
  CHECK_OK(alloy_sym_new(f.st, "s1", 2, ALLOY_SYM_INF, &f.s1));
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

/* Adds a node; returns it, or NULL with *err set (caller frees) when err is
 * given, else the failure is recorded. */
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

/* The output's shape as text: "16*s0, 64". */
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

static bool dim_is(const alloy_node *n, int k, int d, alloy_dim want) {
  if (!n || d >= alloy_value_rank(alloy_node_output(n, k))) return false;
  return alloy_dim_same(alloy_value_shape(alloy_node_output(n, k))[d], want);
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
#define CHECK_ERROR(e, text) check_error((e), (text), __LINE__)

/* Argument shorthands: ARGS(V(x), I(0)) expands to an array and its length. */
#define ARGS(...) \
  (alloy_arg[]){__VA_ARGS__}, (int)(sizeof((alloy_arg[]){__VA_ARGS__}) / sizeof(alloy_arg))
#define V(v) alloy_arg_value(v)
#define I(i) alloy_arg_int(i)
#define D(d) alloy_arg_dim(d)
#define NONE alloy_arg_none()
static alloy_arg ints(const alloy_arg *items, int n) { return alloy_arg_list(items, n); }

TEST(meta_shape_view_keeps_batch_symbolic) {
  fixture f = setup();
  alloy_value *x = input(&f, ALLOY_F32, (alloy_dim[]){f.s0, K(16), K(64)}, 3);
  alloy_dim s16 = alloy_dim_mul(f.st, f.s0, K(16));
  /* view(x, [s0*16, 64]) */
  alloy_arg sz1[2] = {D(s16), I(64)};
  alloy_node *a = add(&f, "aten.view.default", ARGS(V(x), ints(sz1, 2)), NULL);
  CHECK(dim_is(a, 0, 0, s16));
  CHECK_STR(shape_of(a, 0), "16*s0, 64");
  /* view(x, [-1, 64]): the -1 is numel // 64, kept symbolic */
  alloy_arg sz2[2] = {I(-1), I(64)};
  alloy_node *b = add(&f, "aten.view.default", ARGS(V(x), ints(sz2, 2)), NULL);
  CHECK(dim_is(b, 0, 0, s16));
  CHECK(dim_is(b, 0, 1, K(64)));
  /* reshape(x, [s0, -1]) and back: [s0, 1024] */
  alloy_arg sz3[2] = {D(f.s0), I(-1)};
  alloy_node *c = add(&f, "aten.reshape.default", ARGS(V(x), ints(sz3, 2)), NULL);
  CHECK_STR(shape_of(c, 0), "s0, 1024");
  /* flatten(x, 0, 1) */
  alloy_node *d = add(&f, "aten.flatten.using_ints", ARGS(V(x), I(0), I(1)), NULL);
  CHECK(dim_is(d, 0, 0, s16));
  CHECK_OK(alloy_graph_verify(f.g));
  alloy_graph_free(f.g);
}

TEST(meta_shape_view_errors) {
  fixture f = setup();
  alloy_value *x = input(&f, ALLOY_F32, (alloy_dim[]){K(2), K(3)}, 2);
  alloy_error *e;
  alloy_arg bad[1] = {I(4)};
  add(&f, "aten.view.default", ARGS(V(x), ints(bad, 1)), &e);
  CHECK_ERROR(e, "shape '[4]' is invalid for input of size 6");
  alloy_arg two[2] = {I(-1), I(-1)};
  add(&f, "aten.view.default", ARGS(V(x), ints(two, 2)), &e);
  CHECK_ERROR(e, "only one dimension can be inferred");
  alloy_arg odd[2] = {I(-1), I(4)};
  add(&f, "aten.view.default", ARGS(V(x), ints(odd, 2)), &e);
  CHECK_ERROR(e, "is invalid for input of size 6");
  /* 1024*s0 elements with s0 in [2, 64] are never 300000 */
  alloy_value *y = input(&f, ALLOY_F32, (alloy_dim[]){f.s0, K(1024)}, 2);
  alloy_arg big[2] = {I(100000), I(3)};
  add(&f, "aten.view.default", ARGS(V(y), ints(big, 2)), &e);
  CHECK_ERROR(e, "is invalid for input of size 1024*s0");
  alloy_graph_free(f.g);
}

TEST(meta_shape_slice_on_symbolic_dim) {
  fixture f = setup();
  alloy_value *x = input(&f, ALLOY_F32, (alloy_dim[]){f.s0, K(3)}, 2);
  alloy_arg xv = V(x);
  /* x[1:] as exported: end = INT64_MAX */
  alloy_node *a = add(&f, "aten.slice.Tensor", ARGS(xv, I(0), I(1), I(INT64_MAX)), NULL);
  CHECK_STR(shape_of(a, 0), "s0 - 1, 3");
  /* x[-2:]: s0 >= 2, so exactly 2 rows */
  alloy_node *b = add(&f, "aten.slice.Tensor", ARGS(xv, I(0), I(-2), NONE), NULL);
  CHECK(dim_is(b, 0, 0, K(2)));
  /* x[::2]: ceil(s0 / 2) */
  alloy_node *c = add(&f, "aten.slice.Tensor", ARGS(xv, I(0), NONE, NONE, I(2)), NULL);
  CHECK(dim_is(c, 0, 0, alloy_dim_ceildiv(f.st, f.s0, K(2))));
  /* x[:100] on s0 <= 64 is all of it */
  alloy_node *d = add(&f, "aten.slice.Tensor", ARGS(xv, I(0), I(0), I(100)), NULL);
  CHECK(dim_is(d, 0, 0, f.s0));
  /* x[:s0-1] with a symbolic end */
  alloy_dim end = alloy_dim_sub(f.st, f.s0, K(1));
  alloy_node *e1 = add(&f, "aten.slice.Tensor", ARGS(xv, I(0), I(0), D(end)), NULL);
  CHECK(dim_is(e1, 0, 0, end));
  /* select on the batch keeps the rest; step 0 is an error */
  alloy_node *s = add(&f, "aten.select.int", ARGS(xv, I(1), I(-1)), NULL);
  CHECK(dim_is(s, 0, 0, f.s0));
  alloy_error *err;
  add(&f, "aten.slice.Tensor", ARGS(xv, I(0), I(0), I(1), I(0)), &err);
  CHECK_ERROR(err, "slice step must be positive");
  add(&f, "aten.select.int", ARGS(xv, I(1), I(3)), &err);
  CHECK_ERROR(err, "index 3 out of range");
  CHECK_OK(alloy_graph_verify(f.g));
  alloy_graph_free(f.g);
}

TEST(meta_shape_cat_symbolic_and_promotion) {
  fixture f = setup();
  alloy_value *a = input(&f, ALLOY_F32, (alloy_dim[]){f.s0, K(3)}, 2);
  alloy_value *b = input(&f, ALLOY_F32, (alloy_dim[]){f.s0, K(5)}, 2);
  alloy_arg ab[2] = {V(a), V(b)};
  alloy_node *n = add(&f, "aten.cat.default", ARGS(ints(ab, 2), I(1)), NULL);
  CHECK_STR(shape_of(n, 0), "s0, 8");
  /* along the batch: s0 + s1 rows; int32 with float16 promotes to float16 */
  alloy_value *c = input(&f, ALLOY_I32, (alloy_dim[]){f.s0, K(3)}, 2);
  alloy_value *d = input(&f, ALLOY_F16, (alloy_dim[]){f.s1, K(3)}, 2);
  alloy_arg cd[2] = {V(c), V(d)};
  alloy_node *m = add(&f, "aten.cat.default", ARGS(ints(cd, 2)), NULL);
  CHECK(dim_is(m, 0, 0, alloy_dim_add(f.st, f.s0, f.s1)));
  CHECK_INT(m ? (int)alloy_value_dtype(alloy_node_output(m, 0)) : -1, ALLOY_F16);
  /* a legacy empty [0] tensor is skipped for shapes, not for the dtype */
  alloy_value *empty = input(&f, ALLOY_F64, (alloy_dim[]){K(0)}, 1);
  alloy_arg ea[2] = {V(empty), V(a)};
  alloy_node *k = add(&f, "aten.cat.default", ARGS(ints(ea, 2), I(-1)), NULL);
  CHECK_STR(shape_of(k, 0), "s0, 3");
  CHECK_INT(k ? (int)alloy_value_dtype(alloy_node_output(k, 0)) : -1, ALLOY_F64);
  /* stack of the two [s0, 3] */
  alloy_arg aa[2] = {V(a), V(a)};
  alloy_node *s = add(&f, "aten.stack.default", ARGS(ints(aa, 2), I(1)), NULL);
  CHECK_STR(shape_of(s, 0), "s0, 2, 3");
  alloy_error *e;
  add(&f, "aten.cat.default", ARGS(ints(ab, 2), I(0)), &e);
  CHECK_ERROR(e, "must match except in dimension 0. Expected size 3 but got size 5");
  CHECK_OK(alloy_graph_verify(f.g));
  alloy_graph_free(f.g);
}

TEST(meta_shape_expand_permute_squeeze) {
  fixture f = setup();
  alloy_value *x = input(&f, ALLOY_BF16, (alloy_dim[]){K(1), f.s0, K(1)}, 3);
  alloy_arg xv = V(x);
  alloy_arg sz[4] = {I(2), D(f.s1), I(-1), I(7)};
  alloy_node *a = add(&f, "aten.expand.default", ARGS(xv, ints(sz, 4)), NULL);
  CHECK(dim_is(a, 0, 1, f.s1));
  CHECK(dim_is(a, 0, 2, f.s0));
  CHECK(dim_is(a, 0, 3, K(7)));
  alloy_arg pd[3] = {I(1), I(-1), I(0)};
  alloy_node *p = add(&f, "aten.permute.default", ARGS(xv, ints(pd, 3)), NULL);
  CHECK_STR(shape_of(p, 0), "s0, 1, 1");
  /* s0 >= 2 is never squeezed; the literal ones are */
  alloy_node *q = add(&f, "aten.squeeze.default", ARGS(xv), NULL);
  CHECK_STR(shape_of(q, 0), "s0");
  alloy_node *u = add(&f, "aten.unsqueeze.default", ARGS(xv, I(-1)), NULL);
  CHECK_STR(shape_of(u, 0), "1, s0, 1, 1");
  alloy_error *e;
  alloy_arg bad[3] = {I(1), I(5), I(1)};
  alloy_value *y = input(&f, ALLOY_F32, (alloy_dim[]){K(1), K(3), K(1)}, 3);
  add(&f, "aten.expand.default", ARGS(V(y), ints(bad, 3)), &e);
  CHECK_ERROR(e, "must match the existing size (3) at non-singleton dimension 1");
  add(&f, "aten.permute.default", ARGS(xv, ints(sz, 2)), &e);
  CHECK_ERROR(e, "argument 'dims' must hold concrete integers");
  alloy_graph_free(f.g);
}

TEST(meta_shape_split_and_pad) {
  fixture f = setup();
  alloy_dim two_s0 = alloy_dim_mul(f.st, f.s0, K(2));
  alloy_value *x = input(&f, ALLOY_F32, (alloy_dim[]){two_s0, K(6)}, 2);
  alloy_arg xv = V(x);
  /* split(x, s0): two halves of s0 rows */
  alloy_node *a = add(&f, "aten.split.Tensor", ARGS(xv, D(f.s0)), NULL);
  CHECK_INT(a ? alloy_node_num_outputs(a) : -1, 2);
  CHECK(dim_is(a, 0, 0, f.s0));
  CHECK(dim_is(a, 1, 0, f.s0));
  /* split along the concrete dim: sizes 4 and 2 */
  alloy_node *b = add(&f, "aten.split.Tensor", ARGS(xv, I(4), I(1)), NULL);
  CHECK_INT(b ? alloy_node_num_outputs(b) : -1, 2);
  CHECK_STR(shape_of(b, 1), "2*s0, 2");
  /* padding a symbolic dim */
  alloy_arg pads[4] = {I(1), I(2), I(-1), I(0)};
  alloy_node *p = add(&f, "aten.constant_pad_nd.default", ARGS(xv, ints(pads, 4)), NULL);
  CHECK_STR(shape_of(p, 0), "2*s0 - 1, 9");
  alloy_error *e;
  /* how many pieces s0 rows make in chunks of 3 depends on s0 */
  add(&f, "aten.split.Tensor", ARGS(xv, I(3)), &e);
  CHECK_ERROR(e, "must be a concrete integer");
  alloy_arg sizes[2] = {I(1), I(2)};
  add(&f, "aten.split_with_sizes.default", ARGS(xv, ints(sizes, 2), I(1)), &e);
  CHECK_ERROR(e, "split_with_sizes expects split_sizes to sum exactly to 6");
  alloy_graph_free(f.g);
}

/* Ops the golden corpus has no case for, against PyTorch's rules. */
TEST(meta_shape_ops_without_golden_cases) {
  fixture f = setup();
  alloy_error *e;
  /* col2im: 12 = 3 planes of 2x2 kernels, 3*4 = 12 sliding blocks */
  alloy_value *cols = input(&f, ALLOY_F32, (alloy_dim[]){f.s0, K(12), K(12)}, 3);
  alloy_arg osz[2] = {I(4), I(5)}, k2[2] = {I(2), I(2)}, one[2] = {I(1), I(1)},
            zero[2] = {I(0), I(0)};
  alloy_node *c = add(&f, "aten.col2im.default",
                      ARGS(V(cols), ints(osz, 2), ints(k2, 2), ints(one, 2), ints(zero, 2),
                           ints(one, 2)),
                      NULL);
  CHECK_STR(shape_of(c, 0), "s0, 3, 4, 5");
  alloy_arg osz2[2] = {I(4), I(6)};
  add(&f, "aten.col2im.default",
      ARGS(V(cols), ints(osz2, 2), ints(k2, 2), ints(one, 2), ints(zero, 2), ints(one, 2)), &e);
  CHECK_ERROR(e, "number of sliding blocks 3 * 5 = 15, but got input.size(2)=12");
  /* diff with a float64 prepend: promoted, and n elements shorter */
  alloy_value *x = input(&f, ALLOY_F32, (alloy_dim[]){f.s0, K(5)}, 2);
  alloy_value *pre = input(&f, ALLOY_F64, (alloy_dim[]){f.s0, K(1)}, 2);
  alloy_node *d = add(&f, "aten.diff.default", ARGS(V(x), I(2), I(-1), V(pre)), NULL);
  CHECK_STR(shape_of(d, 0), "s0, 4");
  CHECK_INT(d ? (int)alloy_value_dtype(alloy_node_output(d, 0)) : -1, ALLOY_F64);
  alloy_node *d2 = add(&f, "aten.diff.default", ARGS(V(x), I(9)), NULL);
  CHECK_STR(shape_of(d2, 0), "s0, 0");
  /* reflection_pad2d on [C, H, W] with a symbolic H */
  alloy_value *img = input(&f, ALLOY_F32, (alloy_dim[]){K(1), f.s0, K(8)}, 3);
  alloy_arg pads[4] = {I(2), I(3), I(1), I(1)};
  alloy_node *p = add(&f, "aten.reflection_pad2d.default", ARGS(V(img), ints(pads, 4)), NULL);
  CHECK_STR(shape_of(p, 0), "1, s0 + 2, 13");
  alloy_arg wide[4] = {I(8), I(0), I(0), I(0)};
  add(&f, "aten.reflection_pad2d.default", ARGS(V(img), ints(wide, 4)), &e);
  CHECK_ERROR(e, "Padding size should be less than the corresponding input dimension");
  /* slice_scatter checks src against the slice */
  alloy_value *self = input(&f, ALLOY_F32, (alloy_dim[]){f.s0, K(6)}, 2);
  alloy_value *src = input(&f, ALLOY_F32, (alloy_dim[]){f.s0, K(2)}, 2);
  alloy_node *s = add(&f, "aten.slice_scatter.default", ARGS(V(self), V(src), I(1), I(2), I(4)),
                      NULL);
  CHECK_STR(shape_of(s, 0), "s0, 6");
  add(&f, "aten.slice_scatter.default", ARGS(V(self), V(src), I(1), I(2), I(5)), &e);
  CHECK_ERROR(e, "expected src to have a size equal to the slice of self");
  /* to.dtype casts; _to_copy without a dtype keeps self's */
  alloy_node *t = add(&f, "aten.to.dtype", ARGS(V(x), alloy_arg_dtype(ALLOY_F16)), NULL);
  CHECK_INT(t ? (int)alloy_value_dtype(alloy_node_output(t, 0)) : -1, ALLOY_F16);
  CHECK_STR(shape_of(t, 0), "s0, 5");
  alloy_node *tc = add(&f, "aten._to_copy.default", ARGS(V(x)), NULL);
  CHECK_INT(tc ? (int)alloy_value_dtype(alloy_node_output(tc, 0)) : -1, ALLOY_F32);
  /* repeat_interleave without output_size: a data-dependent length */
  alloy_value *reps = input(&f, ALLOY_I64, (alloy_dim[]){K(3)}, 1);
  alloy_node *r = add(&f, "aten.repeat_interleave.Tensor", ARGS(V(reps)), NULL);
  CHECK(r && !alloy_dim_is_const(alloy_value_shape(alloy_node_output(r, 0))[0]));
  CHECK_OK(alloy_graph_verify(f.g));
  alloy_graph_free(f.g);
}
