/*
 * tests/test_hostile_shapes.c: sizes chosen by an attacker. A graph (built
 * with the C builder, parsed from .air text or imported from a .pt2) whose
 * tensors would span more bytes than the ceiling of ir/checked.h (2^62),
 * whose size arithmetic would overflow int64, or whose arguments would make
 * a shape function cast an out-of-range double, is refused when the node is
 * added, with a type error naming the op (and the node and output where it
 * has them); nothing reaches a kernel. The kernel-table helper refuses a
 * tensor whose extent does not fit its buffer, with every product checked,
 * and a kernel that finds an index out of range says which index, which
 * value and which bound in the run's error.
 *
 * Several of these only misbehaved under UBSan before (an out-of-range
 * double cast, a signed overflow): the tests pin the answer the defined
 * arithmetic gives, which the wrapped one did not.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>

#include "alloy/graph.h"
#include "alloy/model.h"
#include "alloy/plugin.h"
#include "harness.h"
#include "testzip.h"
#include "ir/checked.h"
#include "ir/model_internal.h"
#include "sdk/src/host.h"
#include "testgraph.h"
#include "testref.h"

#define ARGS(...) \
  (alloy_arg[]){__VA_ARGS__}, (int)(sizeof((alloy_arg[]){__VA_ARGS__}) / sizeof(alloy_arg))
#define V(v) alloy_arg_value(v)
#define I(i) alloy_arg_int(i)
#define L(...) \
  alloy_arg_list((alloy_arg[]){__VA_ARGS__}, \
                 (int)(sizeof((alloy_arg[]){__VA_ARGS__}) / sizeof(alloy_arg)))

/* 2^62 + 1: as f32, 2^64 + 4 bytes, which wraps to 4. */
#define HUGE_TEXT "4611686018427387905"
static const int64_t huge = ((int64_t)1 << 62) + 1;

/* Parses .air text; the error must contain every one of want (NULL-ended). */
static void air_refused(const char *text, const char *const *want, const char *file, int line) {
  alloy_graph *g = NULL;
  alloy_error *e = alloy_air_parse(text, strlen(text), "hostile.air", &g);
  if (!e) {
    harness_fail(file, line, "parsed; expected an error mentioning \"%s\"", want[0]);
    alloy_graph_free(g);
    return;
  }
  for (int i = 0; want[i]; i++)
    if (!strstr(alloy_error_message(e), want[i]))
      harness_fail(file, line, "error \"%s\" does not mention \"%s\"", alloy_error_message(e),
                   want[i]);
  if (alloy_error_code_of(e) != ALLOY_ERR_TYPE)
    harness_fail(file, line, "error code %d, expected a type error (%d): %s",
                 (int)alloy_error_code_of(e), (int)ALLOY_ERR_TYPE, alloy_error_message(e));
  alloy_error_free(e);
}
#define AIR_REFUSED(text, ...) \
  air_refused((text), (const char *const[]){__VA_ARGS__, NULL}, __FILE__, __LINE__)

/* Parses .air text that must be accepted; returns the graph (caller frees). */
static alloy_graph *air_ok(const char *text) {
  alloy_graph *g = NULL;
  CHECK_OK(alloy_air_parse(text, strlen(text), "ok.air", &g));
  return g;
}

/* The shape of output k of the node defining graph output i, as text. */
static const char *out_shape(const alloy_graph *g, int i) {
  static char buf[256];
  const alloy_value *v = alloy_graph_output(g, i);
  size_t n = 0;
  buf[0] = '\0';
  for (int d = 0; v && d < alloy_value_rank(v) && n < sizeof buf; d++) {
    if (d) n += (size_t)snprintf(buf + n, sizeof buf - n, ", ");
    if (n < sizeof buf) n += alloy_dim_print(alloy_value_shape(v)[d], buf + n, sizeof buf - n);
  }
  return buf;
}

/* ---- item 1: element counts whose bytes overflow ------------------------------ */

TEST(hostile_expand_past_the_byte_ceiling_is_a_type_error_naming_node_and_op) {
  /* The C builder: f32[1] expanded to [2^62 + 1]. */
  alloy_graph *g = alloy_graph_new();
  alloy_dim one = alloy_dim_const(1);
  alloy_value_type vt = {ALLOY_VALUE_TENSOR, ALLOY_F32, 1, &one, NULL, {ALLOY_DEVICE_CPU, -1},
                         {NULL, 0}};
  alloy_value *x = NULL;
  CHECK_OK(alloy_graph_add_input(g, "x", &vt, &x));
  alloy_node *n = NULL;
  alloy_error *e = alloy_graph_add_node(g, alloy_op_find("aten.expand.default"),
                                        ARGS(V(x), L(I(huge))), NULL, NULL, 0, "wide", &n);
  CHECK(e && alloy_error_code_of(e) == ALLOY_ERR_TYPE);
  CHECK_ERROR(e, "aten.expand.default: output 0 of node 'wide' (f32[" HUGE_TEXT "]) is too large");
  CHECK(n == NULL);
  CHECK_INT(alloy_graph_num_nodes(g), 0);
  /* Just under the ceiling is fine: bool[2^62]. */
  alloy_value_type bt = vt;
  bt.dtype = ALLOY_BOOL;
  alloy_value *b = NULL;
  CHECK_OK(alloy_graph_add_input(g, "b", &bt, &b));
  CHECK_OK(alloy_graph_add_node(g, alloy_op_find("aten.expand.default"),
                                ARGS(V(b), L(I((int64_t)1 << 62))), NULL, NULL, 0, "ok", &n));
  alloy_graph_free(g);
  /* The same in .air text. */
  AIR_REFUSED("input %x: f32[1]\n%e = aten.expand.default(%x, [" HUGE_TEXT "])\noutput %e\n",
              "hostile.air:2:", "aten.expand.default", "output 0", "node 'e'", "too large",
              "2^62");
}

TEST(hostile_factories_and_reductions_past_the_ceiling_are_refused) {
  AIR_REFUSED("%z = aten.zeros.default([" HUGE_TEXT "], dtype=f32)\n%s = aten.sum.default(%z)\n"
              "output %s\n",
              "hostile.air:1:", "aten.zeros.default", "too large");
  AIR_REFUSED("%z = aten.ones.default([2147483648, 2147483648], dtype=i64)\noutput %z\n",
              "aten.ones.default", "too large");
  AIR_REFUSED("%z = aten.full.default([3037000500, 3037000500], 1.5)\noutput %z\n",
              "aten.full.default", "too large");
  AIR_REFUSED("%z = aten.empty.memory_format([1, " HUGE_TEXT "], dtype=u8)\noutput %z\n",
              "aten.empty.memory_format", "too large");
  /* A zero dim does not excuse the others: their strides must still fit. */
  AIR_REFUSED("%z = aten.zeros.default([0, " HUGE_TEXT ", 4], dtype=u8)\noutput %z\n",
              "aten.zeros.default", "too large");
  AIR_REFUSED("%z = aten.arange.default(" HUGE_TEXT ", dtype=f32)\noutput %z\n",
              "aten.arange.default", "too large");
  AIR_REFUSED("%z = aten.linspace.default(0, 1, " HUGE_TEXT ")\noutput %z\n",
              "aten.linspace.default", "too large");
  AIR_REFUSED("%z = aten.empty_strided.default([2, 2], [4611686018427387904, 1], dtype=u8)\n"
              "output %z\n",
              "aten.empty_strided.default", "window", "too large");
}

TEST(hostile_as_strided_counts_and_windows_past_the_ceiling_are_refused) {
  /* Many elements over one: the view itself is too large. */
  AIR_REFUSED("input %x: f32[4]\n%v = aten.as_strided.default(%x, [" HUGE_TEXT "], [0])\n"
              "output %v\n",
              "aten.as_strided.default", "node 'v'", "too large");
  /* Two elements, 2^62 apart: the storage the window reaches cannot exist. */
  AIR_REFUSED("input %x: f32[4]\n%v = aten.as_strided.default(%x, [2], [4611686018427387904])\n"
              "output %v\n",
              "aten.as_strided.default", "window", "too large");
  /* offset + (size - 1) * stride overflowing int64. */
  AIR_REFUSED("input %x: f32[4]\n"
              "%v = aten.as_strided.default(%x, [3], [4611686018427387904], 4611686018427387904)\n"
              "output %v\n",
              "aten.as_strided.default", "window");
  AIR_REFUSED("input %x: f32[4]\n"
              "%v = prims.as_strided.default(%x, [2], [1], 9223372036854775807)\n"
              "output %v\n",
              "prims.as_strided.default", "window");
}

TEST(hostile_shape_arithmetic_that_overflows_is_refused) {
  /* cat: the sum of the sizes. Each bool[2^61] fits; three do not. */
  AIR_REFUSED("input %x: bool[1]\n%e = aten.expand.default(%x, [2305843009213693952])\n"
              "%c = aten.cat.default([%e, %e, %e])\noutput %c\n",
              "aten.cat.default", "too large");
  /* repeat: 2^40 * 2^30 wraps nothing now. */
  AIR_REFUSED("input %x: bool[1099511627776]\n%r = aten.repeat.default(%x, [1073741824])\n"
              "output %r\n",
              "aten.repeat.default");
  /* view/reshape into an oversized shape of an empty tensor. */
  AIR_REFUSED("input %x: f32[0]\n%r = aten.view.default(%x, [0, " HUGE_TEXT ", 8])\noutput %r\n",
              "aten.view.default");
  /* constant_pad_nd past the ceiling. */
  AIR_REFUSED("input %x: bool[4611686018427387904]\n%p = aten.constant_pad_nd.default(%x, [1, 1])\n"
              "output %p\n",
              "aten.constant_pad_nd.default", "too large");
  /* A graph input that is too large is refused where it is declared. */
  AIR_REFUSED("input %x: f32[" HUGE_TEXT "]\noutput %x\n", "input x is too large");
}

TEST(hostile_inputs_with_strides_past_the_ceiling_are_refused) {
  alloy_graph *g = alloy_graph_new();
  alloy_dim shape[2] = {alloy_dim_const(2), alloy_dim_const(2)};
  alloy_dim strides[2] = {alloy_dim_const((int64_t)1 << 61), alloy_dim_const(1)};
  alloy_value_type vt = {ALLOY_VALUE_TENSOR, ALLOY_F32, 2, shape, strides, {ALLOY_DEVICE_CPU, -1},
                         {NULL, 0}};
  CHECK_ERROR(alloy_graph_add_input(g, "w", &vt, NULL), "input w is too large");
  CHECK_INT(alloy_graph_num_inputs(g), 0);
  /* Stride 0 over a large count is a broadcast: 4 bytes of storage. */
  alloy_dim big[2] = {alloy_dim_const(30000), alloy_dim_const(30000)};
  alloy_dim zero[2] = {alloy_dim_const(0), alloy_dim_const(0)};
  alloy_value_type bt = {ALLOY_VALUE_TENSOR, ALLOY_F32, 2, big, zero, {ALLOY_DEVICE_CPU, -1},
                         {NULL, 0}};
  CHECK_OK(alloy_graph_add_input(g, "b", &bt, NULL));
  alloy_graph_free(g);
}

/* A .pt2 archive (stored zip) with one user input and one node. */
static uint8_t *pt2_archive(const char *input_size, const char *expand_to, size_t *size) {
  char model[4096];
  snprintf(model, sizeof model,
           "{\"schema_version\": {\"major\": 8, \"minor\": 17}, \"range_constraints\": {},"
           " \"graph_module\": {\"signature\": {"
           "  \"input_specs\": [{\"user_input\": {\"arg\": {\"as_tensor\": {\"name\": \"x\"}}}}],"
           "  \"output_specs\": [{\"user_output\": {\"arg\": {\"as_tensor\": {\"name\": \"e\"}}}}]},"
           "  \"graph\": {\"inputs\": [{\"as_tensor\": {\"name\": \"x\"}}],"
           "   \"outputs\": [{\"as_tensor\": {\"name\": \"e\"}}],"
           "   \"tensor_values\": {"
           "    \"x\": {\"dtype\": 7, \"sizes\": [{\"as_int\": %s}], \"device\": {\"type\": \"cpu\"}},"
           "    \"e\": {\"dtype\": 7, \"sizes\": [{\"as_int\": %s}], \"device\": {\"type\": \"cpu\"}}},"
           "   \"sym_int_values\": {},"
           "   \"nodes\": [{\"name\": \"e\", \"target\": \"torch.ops.aten.expand.default\","
           "    \"inputs\": [{\"name\": \"self\", \"arg\": {\"as_tensor\": {\"name\": \"x\"}}, \"kind\": 1},"
           "     {\"name\": \"size\", \"arg\": {\"as_ints\": [%s]}, \"kind\": 1}],"
           "    \"outputs\": [{\"as_tensor\": {\"name\": \"e\"}}]}]}}}",
           input_size, expand_to, expand_to);
  const char *weights = "{\"config\": {}}";
  tz_entry es[2] = {{"m/models/model.json", model, strlen(model), false},
                    {"m/data/weights/model_weights_config.json", weights, strlen(weights), false}};
  return tz_archive(es, 2, size);
}

static void pt2_refused(const char *input_size, const char *expand_to, const char *want,
                        int line) {
  size_t size = 0;
  uint8_t *zip = pt2_archive(input_size, expand_to, &size);
  if (!zip) {
    harness_fail(__FILE__, line, "cannot build the archive");
    return;
  }
  alloy_model *m = NULL;
  alloy_error *e = alloy_model_load_pt2_memory(zip, size, "hostile.pt2", &m);
  if (!e) harness_fail(__FILE__, line, "loaded; expected an error mentioning \"%s\"", want);
  else if (!strstr(alloy_error_message(e), want))
    harness_fail(__FILE__, line, "error \"%s\" does not mention \"%s\"", alloy_error_message(e), want);
  alloy_error_free(e);
  alloy_model_free(m);
  free(zip);
}

TEST(hostile_pt2_with_oversized_tensors_is_refused) {
  /* The archive builder works: a small expand loads. */
  size_t size = 0;
  uint8_t *zip = pt2_archive("1", "8", &size);
  alloy_model *m = NULL;
  if (zip) CHECK_OK(alloy_model_load_pt2_memory(zip, size, "fine.pt2", &m));
  alloy_model_free(m);
  free(zip);
  pt2_refused("1", HUGE_TEXT, "too large", __LINE__);
  pt2_refused(HUGE_TEXT, HUGE_TEXT, "too large", __LINE__);
}

/* ---- item 8: undefined behaviour in shape functions ---------------------------- */

TEST(hostile_arange_near_int64_max_is_exact) {
  /* The bounds were cast from double: 2^63 - 11 became 2^63, then UB. */
  alloy_graph *g = air_ok("%a = aten.arange.start_step(9223372036854775797, 9223372036854775807, 1)\n"
                          "output %a\n");
  if (g) CHECK_STR(out_shape(g, 0), "10");
  alloy_graph_free(g);
  g = air_ok("%a = aten.arange.start_step(9223372036854775807, 9223372036854775797, -3)\n"
             "output %a\n");
  if (g) CHECK_STR(out_shape(g, 0), "4");
  alloy_graph_free(g);
  AIR_REFUSED("%a = aten.arange.default(9223372036854775807)\noutput %a\n",
              "aten.arange.default");
  /* end - start + step - 1 overflowing int64. */
  AIR_REFUSED("%a = aten.arange.start_step(-9223372036854775808, 9223372036854775807, "
              "4611686018427387904)\noutput %a\n",
              "aten.arange.start_step", "possible overflow");
  /* A float bound past int64 for an int64 range. */
  AIR_REFUSED("%a = aten.arange.start_step(0, 1e19, 1, dtype=i64)\noutput %a\n",
              "aten.arange.start_step", "without overflow");
}

TEST(hostile_tri_indices_with_huge_sides_are_refused_not_wrapped) {
  /* 2^32 * (2^32 + 1) / 2 > INT64_MAX: the count wrapped. */
  AIR_REFUSED("%t = aten.tril_indices.default(4294967296, 4294967296)\noutput %t\n",
              "aten.tril_indices.default", "overflows int64");
  AIR_REFUSED("%t = aten.triu_indices.default(4294967296, 4294967296)\noutput %t\n",
              "aten.triu_indices.default", "overflows int64");
  /* Offsets at the ends of int64: offset - 1 and row + offset overflowed. */
  alloy_graph *g = air_ok("%t = aten.triu_indices.default(3, 3, -9223372036854775808)\noutput %t\n");
  if (g) CHECK_STR(out_shape(g, 0), "2, 9");
  alloy_graph_free(g);
  g = air_ok("%t = aten.tril_indices.default(3, 4, 9223372036854775807)\noutput %t\n");
  if (g) CHECK_STR(out_shape(g, 0), "2, 12");
  alloy_graph_free(g);
  g = air_ok("%t = aten.tril_indices.default(3, 4, 1)\noutput %t\n");
  if (g) CHECK_STR(out_shape(g, 0), "2, 9");
  alloy_graph_free(g);
}

TEST(hostile_convolution_with_huge_dilation_is_refused) {
  /* One spatial dim fine, the other reaching past the input: a negative
   * size passed before. */
  AIR_REFUSED("input %x: f32[1, 1, 8, 8]\ninput %w: f32[1, 1, 2, 2]\n"
              "%y = aten.convolution.default(%x, %w, None, [1, 1], [0, 0], [1, 4611686018427387904],"
              " false, [0, 0], 1)\noutput %y\n",
              "aten.convolution.default", "too small");
  AIR_REFUSED("input %x: f32[1, 1, 8, 8]\ninput %w: f32[1, 1, 3, 3]\n"
              "%y = aten.convolution.default(%x, %w, None, [1, 1], [0, 0], [1, 4611686018427387904],"
              " false, [0, 0], 1)\noutput %y\n",
              "aten.convolution.default", "overflow");
  AIR_REFUSED("input %x: f32[1, 1, 8, 8]\n"
              "%y = aten.max_pool2d_with_indices.default(%x, [2, 4611686018427387904], [1, 1], "
              "[0, 0], [1, 4])\noutput %y\n",
              "aten.max_pool2d_with_indices.default", "overflows int64");
  AIR_REFUSED("input %x: f32[1, 1, 8, 8]\n"
              "%y = aten.im2col.default(%x, [2, 3], [1, 4611686018427387904], [0, 0], [1, 1])\n"
              "output %y\n",
              "aten.im2col.default", "overflow");
  AIR_REFUSED("input %x: f32[1, 4, 2, 2]\n%y = aten.pixel_shuffle.default(%x, 4294967296)\n"
              "output %y\n",
              "aten.pixel_shuffle.default", "overflow");
  AIR_REFUSED("input %x: f32[1, 1, 8, 8]\n"
              "%y = aten.upsample_nearest2d.vec(%x, None, [1e300, 1e300])\noutput %y\n",
              "aten.upsample_nearest2d.vec", "overflows int64");
  AIR_REFUSED("input %x: f32[4]\n%y = aten.diag_embed.default(%x, -9223372036854775808)\n"
              "output %y\n",
              "aten.diag_embed.default", "overflow");
}

TEST(hostile_split_sizes_do_not_wrap) {
  /* chunks = INT64_MAX: n + chunks - 1 wrapped. */
  alloy_graph *g = air_ok("input %x: f32[5]\n"
                          "%a, %b, %c, %d, %e = aten.chunk.default(%x, 9223372036854775807)\n"
                          "output %a, %e\n");
  if (g) CHECK_STR(out_shape(g, 1), "1");
  alloy_graph_free(g);
  /* narrow: start + length wrapped past the size check. */
  AIR_REFUSED("input %x: u8[5]\n%n = aten.narrow.default(%x, 0, 2, 9223372036854775807)\n"
              "output %n\n",
              "aten.narrow.default", "exceeds dimension size");
  /* A node has at most 65536 outputs (each is a value of the graph). */
  AIR_REFUSED("input %x: bool[100000]\n%u = aten.unbind.int(%x)\noutput %x\n",
              "aten.unbind.int", "outputs");
}

/* ---- item 9: a kernel says which index, which value, which bound ---------------- */

/* Runs op on ref; the run must fail with an error mentioning every want. */
static void run_refused(tr_case *t, const char *op, const alloy_arg *args, int n,
                        const char *const *want, int line) {
  alloy_error *e = tr_try(t, op, args, n, NULL, NULL, 0);
  if (!e) {
    harness_fail(__FILE__, line, "%s ran; expected an error mentioning \"%s\"", op, want[0]);
    return;
  }
  for (int i = 0; want[i]; i++)
    if (!strstr(alloy_error_message(e), want[i]))
      harness_fail(__FILE__, line, "error \"%s\" does not mention \"%s\"", alloy_error_message(e),
                   want[i]);
  alloy_error_free(e);
}
#define RUN_REFUSED(t, op, args, ...) \
  run_refused((t), (op), args, (const char *const[]){__VA_ARGS__, NULL}, __LINE__)

static float weight5x3[15] = {0};

TEST(hostile_embedding_index_out_of_range_names_index_value_and_bound) {
  tr_case t;
  if (!tr_open(&t)) return tr_close(&t);
  int64_t ix[3] = {0, 7, 1};
  alloy_arg w = tr_input(&t, ALLOY_F32, (int64_t[]){5, 3}, 2, weight5x3);
  alloy_arg i = tr_input1(&t, ALLOY_I64, 3, ix);
  RUN_REFUSED(&t, "aten.embedding.default", ARGS(w, i), "aten.embedding.default", "index 7",
              "indices[1]", "5 rows");
  tr_close(&t);
}

TEST(hostile_gather_and_scatter_index_out_of_range_name_index_value_and_bound) {
  tr_case t;
  if (!tr_open(&t)) return tr_close(&t);
  float self[6] = {0};
  int64_t ix[4] = {0, 1, 2, -4};
  alloy_arg x = tr_input(&t, ALLOY_F32, (int64_t[]){2, 3}, 2, self);
  alloy_arg i = tr_input(&t, ALLOY_I64, (int64_t[]){2, 2}, 2, ix);
  RUN_REFUSED(&t, "aten.gather.default", ARGS(x, I(1), i), "aten.gather.default", "index -4",
              "index[1, 1]", "dimension 1 with size 3");
  tr_close(&t);
  if (!tr_open(&t)) return tr_close(&t);
  float src[4] = {0};
  x = tr_input(&t, ALLOY_F32, (int64_t[]){2, 3}, 2, self);
  i = tr_input(&t, ALLOY_I64, (int64_t[]){2, 2}, 2, ix);
  alloy_arg s = tr_input(&t, ALLOY_F32, (int64_t[]){2, 2}, 2, src);
  RUN_REFUSED(&t, "aten.scatter.src", ARGS(x, I(1), i, s), "aten.scatter.src", "index -4",
              "index[1, 1]", "dimension 1 with size 3");
  tr_close(&t);
}

TEST(hostile_index_select_take_and_index_tensor_name_index_value_and_bound) {
  tr_case t;
  float self[6] = {0};
  int64_t ix[3] = {1, 0, 9};
  if (!tr_open(&t)) return tr_close(&t);
  alloy_arg x = tr_input(&t, ALLOY_F32, (int64_t[]){2, 3}, 2, self);
  alloy_arg i = tr_input1(&t, ALLOY_I64, 3, ix);
  RUN_REFUSED(&t, "aten.index_select.default", ARGS(x, I(1), i), "aten.index_select.default",
              "index 9", "index[2]", "dimension 1 with size 3");
  tr_close(&t);
  if (!tr_open(&t)) return tr_close(&t);
  x = tr_input(&t, ALLOY_F32, (int64_t[]){2, 3}, 2, self);
  i = tr_input1(&t, ALLOY_I64, 3, ix);
  RUN_REFUSED(&t, "aten.take.default", ARGS(x, i), "aten.take.default", "index 9", "index[2]",
              "6 elements");
  tr_close(&t);
  if (!tr_open(&t)) return tr_close(&t);
  x = tr_input(&t, ALLOY_F32, (int64_t[]){2, 3}, 2, self);
  i = tr_input1(&t, ALLOY_I64, 3, ix);
  RUN_REFUSED(&t, "aten.index.Tensor", ARGS(x, L(i)), "aten.index.Tensor", "index 9",
              "[2]", "dimension 0 with size 2");
  tr_close(&t);
}

/* ---- item 1, the kernel-table helper: extents that do not fit their buffer ------- */

/* The reference backend as a plugin, driven through the ABI as the host
 * drives it: BUILD/lib/alloy/liballoy-ref.so, BUILD from $ALLOY_TEST_BUILD
 * or beside this binary. */
static const char *ref_plugin_path(void) {
  static char path[2 * PATH_MAX];
  const char *build = getenv("ALLOY_TEST_BUILD");
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (!(build && *build) && n > 0) {
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) *slash = '\0';
    snprintf(path, sizeof path, "%s/../lib/alloy/liballoy-ref.so", exe);
    if (access(path, R_OK) == 0) return path;
  }
  snprintf(path, sizeof path, "%s/lib/alloy/liballoy-ref.so", build && *build ? build : "build");
  return path;
}

/* Runs relu(x) (x f32[4] in the graph) with the host tensor given as
 * sizes, strides and a buffer of `bytes`; returns the error. */
static alloy_error *kt_run_relu(const int64_t *sizes, const int64_t *strides, uint64_t offset,
                                size_t bytes) {
  void *dl = dlopen(ref_plugin_path(), RTLD_NOW | RTLD_LOCAL);
  if (!dl) return alloy_error_new(ALLOY_ERR_NOT_FOUND, "dlopen: %s", dlerror());
  const alloy_host_api *host = alloy_host_table();
  alloy_plugin_entry_fn init = (alloy_plugin_entry_fn)dlsym(dl, ALLOY_PLUGIN_ENTRY);
  const alloy_plugin_api *api = init ? init(host) : NULL;
  alloy_backend *be = NULL;
  alloy_error *e = api ? api->backend_open(host, &be) : alloy_error_new(ALLOY_ERR_NOT_FOUND, "no entry");
  alloy_graph *g = alloy_graph_new();
  alloy_dim four = alloy_dim_const(4);
  alloy_value_type vt = {ALLOY_VALUE_TENSOR, ALLOY_F32, 1, &four, NULL, {ALLOY_DEVICE_CPU, -1},
                         {NULL, 0}};
  alloy_value *x = NULL;
  alloy_node *nd = NULL;
  if (!e) e = alloy_graph_add_input(g, "x", &vt, &x);
  if (!e) e = alloy_graph_add_node(g, alloy_op_find("aten.relu.default"), ARGS(V(x)), NULL, NULL,
                                   0, "r", &nd);
  alloy_value *r = nd ? alloy_node_output(nd, 0) : NULL;
  if (!e) e = alloy_graph_set_outputs(g, &r, 1);
  bool claimed[1] = {false};
  double cost[1];
  alloy_claims claims = {.num_nodes = 1, .claimed = claimed, .cost = cost};
  if (!e) e = api->claim(be, g, &claims);
  alloy_compile_options opt = {.struct_size = ALLOY_COMPILE_OPTIONS_STRUCT_SIZE, .opt_level = 2};
  alloy_executable *exe = NULL;
  if (!e) e = api->compile(be, g, &opt, &exe);
  alloy_buffer *in = NULL, *out = NULL;
  if (!e) e = api->buffer_allocate(be, 0, bytes, &in);
  if (!e) e = api->buffer_allocate(be, 0, 16, &out);
  if (!e) {
    int64_t isz[1] = {sizes[0]}, ist[1] = {strides[0]}, osz[1] = {4}, ost[1] = {1};
    alloy_tensor ti = {sizeof ti, in, offset, ALLOY_F32, 1, isz, ist};
    alloy_tensor to = {sizeof to, out, 0, ALLOY_F32, 1, osz, ost};
    alloy_event *done = NULL;
    alloy_execute_args args = {sizeof args, &ti, 1, &to, 1, NULL, 0, NULL, &done, NULL};
    e = api->execute(be, exe, &args);
  }
  if (be) api->backend_close(be); /* releases the executable and the buffers */
  alloy_graph_free(g);
  dlclose(dl);
  return e;
}

TEST(hostile_kernel_table_refuses_extents_that_wrap_past_their_buffer) {
  /* The contiguous case runs. */
  static const int64_t four[1] = {4}, one[1] = {1};
  CHECK_OK(kt_run_relu(four, one, 0, 16));
  /* 2^62 + 1 elements of 4 bytes: (hi + 1) * 4 wrapped to 4, which fit. */
  static const int64_t wide[1] = {((int64_t)1 << 62) + 1};
  CHECK_ERROR(kt_run_relu(wide, one, 0, 16), "input 0 (x): its sizes and strides reach outside");
  /* A stride whose span wraps negative, and an offset past INT64_MAX. */
  static const int64_t two[1] = {2}, far[1] = {(int64_t)1 << 62};
  CHECK_ERROR(kt_run_relu(two, far, 0, 16), "reach outside its buffer");
  CHECK_ERROR(kt_run_relu(four, one, UINT64_MAX - 7, 16), "reach outside its buffer");
  /* A negative size. */
  static const int64_t neg[1] = {-4};
  CHECK_ERROR(kt_run_relu(neg, one, 0, 16), "reach outside its buffer");
  /* Sizes other than the graph's, inside the buffer: the kernel would index
   * x with the graph's. */
  static const int64_t two_one[1] = {2};
  CHECK_ERROR(kt_run_relu(two_one, one, 0, 16), "size 2 at dim 0, but the graph says 4");
}

TEST(hostile_checked_helpers_refuse_what_would_wrap) {
  int64_t r, numel, bytes, lo, hi;
  bool empty;
  CHECK(!alloy_checked_mul(INT64_MAX, 2, &r));
  CHECK(!alloy_checked_add(INT64_MAX, 1, &r));
  CHECK(!alloy_checked_sub(INT64_MIN, 1, &r));
  CHECK(!alloy_checked_from_double(9223372036854775808.0, &r));
  CHECK(!alloy_checked_from_double(0.0 / 0.0, &r));
  CHECK(alloy_checked_from_double(-9223372036854775808.0, &r) && r == INT64_MIN);
  CHECK(alloy_checked_from_double(-2.5, &r) && r == -2);
  static const int64_t ok[2] = {3, 5}, over[1] = {((int64_t)1 << 62) + 1}, zero[3] = {0, 1 << 30, 1 << 30};
  CHECK(alloy_checked_tensor_bytes(ok, 2, 4, &numel, &bytes) && numel == 15 && bytes == 60);
  CHECK(!alloy_checked_tensor_bytes(over, 1, 1, NULL, NULL));
  CHECK(alloy_checked_tensor_bytes(zero, 3, 4, &numel, &bytes) && numel == 0 && bytes == 0);
  static const int64_t zero_over[3] = {0, (int64_t)1 << 31, ((int64_t)1 << 31) + 1};
  CHECK(!alloy_checked_tensor_bytes(zero_over, 3, 1, NULL, NULL));
  static const int64_t st[2] = {-5, 1};
  CHECK(alloy_checked_span(ok, st, 2, &lo, &hi, &empty) && lo == -10 && hi == 4 && !empty);
  static const int64_t two[1] = {2}, far[1] = {INT64_MAX};
  CHECK(alloy_checked_fits(two, (const int64_t[]){1}, 1, 0, 4, 8));
  CHECK(!alloy_checked_fits(two, (const int64_t[]){1}, 1, 1, 4, 8));
  CHECK(!alloy_checked_fits(two, far, 1, 0, 4, UINT64_MAX));
  CHECK(alloy_checked_fits(two, st, 1, 20, 4, 24));  /* elements 5 and 0, backwards */
  CHECK(!alloy_checked_fits(two, st, 1, 16, 4, 24)); /* would start at byte -4 */
}
