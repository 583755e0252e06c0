/*
 * tests/test_air.c: the .air reader and printer (ir/air.c, docs/air.md).
 *
 * Round trips compare the printed text with a canonical form written out by
 * hand here, never with the printer's own earlier output, so a printer that
 * drifts fails even when it drifts consistently; the canonical text must
 * then read back and print to itself. Errors are checked word for word with
 * their file:line:column, since scripts and editors jump to that position.
 */
#include <stdlib.h>

#include "harness.h"

#include "alloy/graph.h"
#include "ir/ir.h" /* to corrupt a node for the verifier tests */

static alloy_graph *parse(const char *text) {
  alloy_graph *g = NULL;
  CHECK_OK(alloy_air_parse(text, strlen(text), "t.air", &g));
  return g;
}

static char *print(const alloy_graph *g) {
  char *out = NULL;
  if (g) CHECK_OK(alloy_air_print(g, &out));
  return out;
}

/* text parses and verifies, prints as want, and want is a fixed point. */
static void check_round_trip(const char *text, const char *want) {
  alloy_graph *g = parse(text);
  if (!g) return;
  CHECK_OK(alloy_graph_verify(g));
  char *first = print(g);
  CHECK_STR(first, want);
  alloy_graph *g2 = parse(want);
  if (g2) CHECK_OK(alloy_graph_verify(g2));
  char *second = print(g2);
  CHECK_STR(second, want);
  free(first);
  free(second);
  alloy_graph_free(g);
  alloy_graph_free(g2);
}

/* text fails to parse with exactly this message. */
static void check_parse_error(const char *text, const char *want) {
  alloy_graph *g = (alloy_graph *)1;
  alloy_error *e = alloy_air_parse(text, strlen(text), "t.air", &g);
  CHECK(e != NULL);
  CHECK(g == NULL);
  if (!e) {
    harness_fail(__FILE__, __LINE__, "parsed, expected \"%s\"", want);
    alloy_graph_free(g);
    return;
  }
  CHECK_STR(alloy_error_message(e), want);
  alloy_error_free(e);
}

TEST(air_round_trip_mlp) {
  check_round_trip(
      "# an MLP layer, written loosely\n"
      "sym s0 in [1, 64]\n"
      "input %x: f32[s0, 784]\n"
      "input %w1:f32[256,784]\n"
      "input %b1: f32[256]   # bias\n"
      "\n"
      "%t = aten.permute.default(%w1, dims=[1, 0])\n"
      "%h = aten.addmm.default(%b1, %x, %t, beta=1, alpha=2)\n"
      "%r = aten.relu.default( %h )\n"
      "%g = aten.gelu.default(%r, approximate=\"tanh\")\n"
      "%g2 = aten.gelu(%g, approximate=\"none\") : f32[s0, 256]\n"
      "%y = aten._log_softmax.default(%g2, -1, false)\n"
      "output %y, %r\n",
      "sym s0 in [1, 64]\n"
      "input %x: f32[s0, 784]\n"
      "input %w1: f32[256, 784]\n"
      "input %b1: f32[256]\n"
      "%t = aten.permute.default(%w1, [1, 0]) : f32[784, 256]\n"
      "%h = aten.addmm.default(%b1, %x, %t, alpha=2) : f32[s0, 256]\n"
      "%r = aten.relu.default(%h) : f32[s0, 256]\n"
      "%g = aten.gelu.default(%r, approximate=\"tanh\") : f32[s0, 256]\n"
      "%g2 = aten.gelu.default(%g) : f32[s0, 256]\n"
      "%y = aten._log_softmax.default(%g2, -1, false) : f32[s0, 256]\n"
      "output %y, %r\n");
}

TEST(air_round_trip_symbolic_inputs) {
  check_round_trip(
      "sym s0 in [1, 64]\n"
      "sym s1 in [2, inf]\n"
      "sym unused in [-5, 9223372036854775807]\n"
      "input %x: f32[s0, s1 + s1]\n"
      "input %z: f32[]\n"
      "input %n: SymInt(s1)\n"
      "input %f: float\n"
      "input %b: bool\n"
      "input %st: f16[s0, 4] stride [4, 1] @cuda:0\n"
      "input %m: bf16[(s0 + 1)//2] @meta\n"
      "input %c: i8[3] @cpu:0\n"
      "%a = aten.add.Tensor(%x, %z, alpha=2)\n"
      "%sz = aten.sym_size.int(%a, 1) : SymInt(2*s1)\n"
      "%v = aten.view.default(%a, [s1*s0, 2])\n"
      "output %v, %sz, %n\n",
      "sym s0 in [1, 64]\n"
      "sym s1 in [2, inf]\n"
      "sym unused in [-5, inf]\n"
      "input %x: f32[s0, 2*s1]\n"
      "input %z: f32[]\n"
      "input %n: SymInt(s1)\n"
      "input %f: float\n"
      "input %b: bool\n"
      "input %st: f16[s0, 4] stride [4, 1] @cuda:0\n"
      "input %m: bf16[(s0 + 1)//2] @meta\n"
      "input %c: i8[3]\n"
      "%a = aten.add.Tensor(%x, %z, alpha=2) : f32[s0, 2*s1]\n"
      "%sz = aten.sym_size.int(%a, 1) : SymInt(2*s1)\n"
      "%v = aten.view.default(%a, [s0*s1, 2]) : f32[s0*s1, 2]\n"
      "output %v, %sz, %n\n");
}

TEST(air_round_trip_multi_output) {
  /* %vals_1 exists before max.dim is built: the builder's own name for its
   * second output would clash with it. */
  check_round_trip(
      "input %x: f32[4, 5]\n"
      "input %vals_1: f32[2]\n"
      "%vals, %idx = aten.max.dim(%x, 1)\n"
      "%mx,%ix = aten.max.dim(%x, -1, keepdim=true) : f32[4, 1], i64[4, 1]\n"
      "%o, %mean, %rstd = aten.native_layer_norm.default(%x, [5], None, None, 1e-05)\n"
      "%p0, %p1 = aten.split.Tensor(%x, 2)\n"
      "output %vals, %idx, %rstd, %p1, %vals\n",
      "input %x: f32[4, 5]\n"
      "input %vals_1: f32[2]\n"
      "%vals, %idx = aten.max.dim(%x, 1) : f32[4], i64[4]\n"
      "%mx, %ix = aten.max.dim(%x, -1, true) : f32[4, 1], i64[4, 1]\n"
      "%o, %mean, %rstd = aten.native_layer_norm.default(%x, [5], None, None, 1e-05)"
      " : f32[4, 5], f32[4, 1], f32[4, 1]\n"
      "%p0, %p1 = aten.split.Tensor(%x, 2) : f32[2, 5], f32[2, 5]\n"
      "output %vals, %idx, %rstd, %p1, %vals\n");
}

TEST(air_round_trip_zero_outputs_and_strings) {
  check_round_trip(
      "input %x: f32[2, 3]\n"
      "input %info: i32[]\n"
      "aten._assert_tensor_metadata.default(%x, dtype=f32)\n"
      "aten._assert_tensor_metadata.default(%x, [2, 3], None, f32, layout=strided)\n"
      "aten._linalg_check_errors.default(%info, \"say \\\"hi\\\"\\\\\\n\\ttab\\x01\\x7F\\r\","
      " is_matrix=true)\n"
      "aten._linalg_check_errors.default(%info, \"caf\xc3\xa9 # not a comment\","
      " is_matrix=false) # a comment\n"
      "output\n",
      "input %x: f32[2, 3]\n"
      "input %info: i32[]\n"
      "aten._assert_tensor_metadata.default(%x, None, None, f32)\n"
      "aten._assert_tensor_metadata.default(%x, [2, 3], None, f32, layout=strided)\n"
      "aten._linalg_check_errors.default(%info, \"say \\\"hi\\\"\\\\\\n\\ttab\\x01\\x7f\\r\","
      " is_matrix=true)\n"
      "aten._linalg_check_errors.default(%info, \"caf\xc3\xa9 # not a comment\","
      " is_matrix=false)\n"
      "output\n");
}

TEST(air_round_trip_floats) {
  check_round_trip(
      "input %x: f32[3]\n"
      "%a = aten.leaky_relu.default(%x, 0.1)\n"
      "%b = aten.leaky_relu.default(%a, 1)\n"
      "%c = aten.leaky_relu.default(%b, 1.0)\n"
      "%d = aten.leaky_relu.default(%c, 1e-05)\n"
      "%e = aten.leaky_relu.default(%d, 0.01)\n"
      "%f = aten.leaky_relu.default(%e, 1.5e+300)\n"
      "%g = aten.leaky_relu.default(%f, -0.0)\n"
      "%h = aten.leaky_relu.default(%g, 123456789.125)\n"
      "%i = aten.leaky_relu.default(%h, -inf)\n"
      "%j = aten.leaky_relu.default(%i, nan)\n"
      "%k = aten.leaky_relu.default(%j, 0.30000000000000004)\n"
      "%l = aten.leaky_relu.default(%k, 100000000000000000000.0)\n"
      "%m = aten.leaky_relu.default(%l, 2.5E-3)\n"
      "%n = aten.leaky_relu.default(%m, 1e-400)\n"
      "output %n\n",
      "input %x: f32[3]\n"
      "%a = aten.leaky_relu.default(%x, 0.1) : f32[3]\n"
      "%b = aten.leaky_relu.default(%a, 1) : f32[3]\n"
      "%c = aten.leaky_relu.default(%b, 1.0) : f32[3]\n"
      "%d = aten.leaky_relu.default(%c, 1e-05) : f32[3]\n"
      "%e = aten.leaky_relu.default(%d) : f32[3]\n"
      "%f = aten.leaky_relu.default(%e, 1.5e+300) : f32[3]\n"
      "%g = aten.leaky_relu.default(%f, -0.0) : f32[3]\n"
      "%h = aten.leaky_relu.default(%g, 123456789.125) : f32[3]\n"
      "%i = aten.leaky_relu.default(%h, -inf) : f32[3]\n"
      "%j = aten.leaky_relu.default(%i, nan) : f32[3]\n"
      "%k = aten.leaky_relu.default(%j, 0.30000000000000004) : f32[3]\n"
      "%l = aten.leaky_relu.default(%k, 1e+20) : f32[3]\n"
      "%m = aten.leaky_relu.default(%l, 0.0025) : f32[3]\n"
      "%n = aten.leaky_relu.default(%m, 0.0) : f32[3]\n"
      "output %n\n");
}

TEST(air_round_trip_lists_and_literals) {
  check_round_trip(
      "input %a: f32[2, 3]\n"
      "input %b: f32[4, 3]\n"
      "input %i: i64[5]\n"
      "input %img: f32[1, 3, 8, 8]\n"
      "%c = aten.cat.default([%a, %b])\n"
      "%c1 = aten.cat.default([%a, %a], 1)\n"
      "%ix = aten.index.Tensor(%c, [None, %i])\n"
      "%p = aten.avg_pool2d.default(%img, [2, 2], [], 0)\n"
      "%q = aten.avg_pool2d.default(%img, 2, count_include_pad=false)\n"
      "%f = aten.full.default([2, 2], 1.5, dtype=i64, device=cuda:1, pin_memory=false)\n"
      "%e = aten.empty_strided.default([2, 3], [1, 2], dtype=f16, layout=strided,"
      " device=cpu)\n"
      "%k = aten._to_copy.default(%img, memory_format=channels_last)\n"
      "output %ix, %p, %q, %f, %e, %k\n",
      "input %a: f32[2, 3]\n"
      "input %b: f32[4, 3]\n"
      "input %i: i64[5]\n"
      "input %img: f32[1, 3, 8, 8]\n"
      "%c = aten.cat.default([%a, %b]) : f32[6, 3]\n"
      "%c1 = aten.cat.default([%a, %a], 1) : f32[2, 6]\n"
      "%ix = aten.index.Tensor(%c, [None, %i]) : f32[6, 5]\n"
      "%p = aten.avg_pool2d.default(%img, [2, 2], [], 0) : f32[1, 3, 4, 4]\n"
      "%q = aten.avg_pool2d.default(%img, 2, [], [0, 0], false, false) : f32[1, 3, 4, 4]\n"
      "%f = aten.full.default([2, 2], 1.5, dtype=i64, device=cuda:1, pin_memory=false)"
      " : i64[2, 2]\n"
      "%e = aten.empty_strided.default([2, 3], [1, 2], dtype=f16, layout=strided,"
      " device=cpu) : f16[2, 3]\n"
      "%k = aten._to_copy.default(%img, memory_format=channels_last) : f32[1, 3, 8, 8]\n"
      "output %ix, %p, %q, %f, %e, %k\n");
}

TEST(air_round_trip_nonzero_unbacked) {
  /* u0 and u1 are made again by the nonzero nodes on parse: never declared.
   * "u8" is a dtype where a ScalarType goes, the ninth size elsewhere. */
  check_round_trip(
      "sym s0 in [1, 64]\n"
      "input %x: f32[s0, 3]\n"
      "%nz = aten.nonzero.default(%x) : i64[u0, 2]\n"
      "%nz2 = aten.nonzero.default(%nz)\n"
      "%n = aten.sym_size.int(%nz, 0)\n"
      "%z = aten.new_zeros.default(%x, [u0, u1 + 1])\n"
      "%a2 = aten.nonzero.default(%x)\n%a3 = aten.nonzero.default(%x)\n"
      "%a4 = aten.nonzero.default(%x)\n%a5 = aten.nonzero.default(%x)\n"
      "%a6 = aten.nonzero.default(%x)\n%a7 = aten.nonzero.default(%x)\n"
      "%a8 = aten.nonzero.default(%x)\n"
      "%w = aten.new_zeros.default(%x, [u8, 2*u0], dtype=u8)\n"
      "output %z, %n, %w\n",
      "sym s0 in [1, 64]\n"
      "input %x: f32[s0, 3]\n"
      "%nz = aten.nonzero.default(%x) : i64[u0, 2]\n"
      "%nz2 = aten.nonzero.default(%nz) : i64[u1, 2]\n"
      "%n = aten.sym_size.int(%nz, 0) : SymInt(u0)\n"
      "%z = aten.new_zeros.default(%x, [u0, u1 + 1]) : f32[u0, u1 + 1]\n"
      "%a2 = aten.nonzero.default(%x) : i64[u2, 2]\n"
      "%a3 = aten.nonzero.default(%x) : i64[u3, 2]\n"
      "%a4 = aten.nonzero.default(%x) : i64[u4, 2]\n"
      "%a5 = aten.nonzero.default(%x) : i64[u5, 2]\n"
      "%a6 = aten.nonzero.default(%x) : i64[u6, 2]\n"
      "%a7 = aten.nonzero.default(%x) : i64[u7, 2]\n"
      "%a8 = aten.nonzero.default(%x) : i64[u8, 2]\n"
      "%w = aten.new_zeros.default(%x, [u8, 2*u0], dtype=u8) : u8[u8, 2*u0]\n"
      "output %z, %n, %w\n");
}

TEST(air_print_built_graph) {
  /* A graph made with the C builder, not from text. */
  alloy_graph *g = alloy_graph_new();
  REQUIRE(g);
  alloy_dim b;
  CHECK_OK(alloy_sym_new(alloy_graph_symtab(g), "batch", 1, 1024, &b));
  alloy_dim shape[2] = {b, alloy_dim_const(8)};
  alloy_value_type t = {ALLOY_VALUE_TENSOR, ALLOY_F32, 2, shape, NULL,
                        {ALLOY_DEVICE_CPU, -1}, alloy_dim_const(0)};
  alloy_value *x = NULL, *y = NULL;
  CHECK_OK(alloy_graph_add_input(g, "x", &t, &x));
  alloy_arg args[2] = {alloy_arg_value(x), alloy_arg_value(x)};
  alloy_arg alpha = alloy_arg_float(0.5);
  const char *kw = "alpha";
  alloy_node *n = NULL;
  CHECK_OK(alloy_graph_add_node(g, alloy_op_find("aten.add.Tensor"), args, 2, &kw,
                                &alpha, 1, "sum", &n));
  alloy_node *mx = NULL;
  alloy_arg margs[3] = {alloy_arg_value(n ? alloy_node_output(n, 0) : x),
                        alloy_arg_int(0), alloy_arg_bool(false)};
  CHECK_OK(alloy_graph_add_node(g, alloy_op_find("aten.max.dim"), margs, 3, NULL, NULL, 0,
                                "m", &mx));
  if (mx) y = alloy_node_output(mx, 1);
  if (y) CHECK_OK(alloy_graph_set_outputs(g, &y, 1));
  char *text = print(g);
  CHECK_STR(text,
            "sym batch in [1, 1024]\n"
            "input %x: f32[batch, 8]\n"
            "%sum = aten.add.Tensor(%x, %x, alpha=0.5) : f32[batch, 8]\n"
            "%m, %m_1 = aten.max.dim(%sum, 0) : f32[8], i64[8]\n"
            "output %m_1\n");
  free(text);

  /* A name the format cannot spell is refused, not written. */
  alloy_value *bad = NULL;
  CHECK_OK(alloy_graph_add_input(g, "not a name", &t, &bad));
  char *out = (char *)1;
  alloy_error *e = alloy_air_print(g, &out);
  CHECK(e != NULL);
  CHECK(out == NULL);
  alloy_error_free(e);
  alloy_graph_free(g);
}

TEST(air_parse_errors) {
  static const struct {
    const char *text, *want;
  } cases[] = {
      {"input %x: f32[3]\n%y = aten.relu.default(%x\n",
       "t.air:2:26: expected ')' after argument list"},
      {"input %x: f32[3]\n%y = aten.relu.default(%x;\n",
       "t.air:2:26: expected ')' after argument list"},
      {"%y = aten.foo(%x)\n", "t.air:1:6: unknown op 'aten.foo'"},
      {"input %x: f32[3]\n\n%y = aten.relu.default(%q)\n", "t.air:3:24: unknown value '%q'"},
      {"input %x: f32[3]\n%x = aten.relu.default(%x)\n",
       "t.air:2:1: value name '%x' already defined"},
      {"input %x: f32[3]\n%a, %a = aten.max.dim(%x, 0)\n",
       "t.air:2:5: value name '%a' already defined"},
      {"input %x: f32[3]\ninput  %x: f32[3]\n", "t.air:2:8: value name '%x' already defined"},
      {"input %x: f32[s9]\n", "t.air:1:15: unknown symbol 's9'"},
      {"sym s0 in [1, 4]\ninput %x: f32[s0 + ]\n",
       "t.air:2:20: expected an integer, a symbol, '(', min or max"},
      {"input %x: f33[3]\n", "t.air:1:11: unknown dtype 'f33'"},
      {"input %x: f32[-2]\n", "t.air:1:15: size -2 is negative"},
      {"input %x: f32[3] stride [1, 1]\n", "t.air:1:18: 2 strides for a tensor of rank 1"},
      {"input %x: f32[3] @gpu\n", "t.air:1:19: expected a device (cpu, cuda:0, hip:0, meta)"},
      {"input %x: tensor\n",
       "t.air:1:11: expected a type (f32[...], SymInt(...), float or bool)"},
      {"input %x f32[3]\n", "t.air:1:10: expected ':' after the input's name"},
      {"sym s0 in [5, 1]\n", "t.air:1:5: symbol s0: empty range [5, 1]"},
      {"sym u0 in [0, 5]\n",
       "t.air:1:5: symbol names u0, u1, ... are kept for data-dependent sizes and are "
       "not declared"},
      {"sym f32 in [0, 5]\n", "t.air:1:5: 'f32' is a reserved word and cannot name a symbol"},
      {"sym s0 in [0, 5]\nsym s0 in [0, 5]\n", "t.air:2:5: symbol 's0' already declared"},
      {"sym s0 in [0, 99999999999999999999]\n", "t.air:1:15: integer out of range"},
      {"sym s0 [0, 5]\n", "t.air:1:8: expected 'in' after the symbol name"},
      {"input %x: f32[3]\n%y = aten.relu.default(%x)\nsym s0 in [0, 5]\n",
       "t.air:3:1: symbols must be declared before the first node"},
      {"input %x: f32[3]\n%y = aten.relu.default(%x)\ninput %z: f32[3]\n",
       "t.air:3:1: inputs must be declared before the first node"},
      {"input %x: f32[3]\noutput %x\n%y = aten.relu.default(%x)\n",
       "t.air:3:1: nothing but comments may follow the output line"},
      {"input %x: f32[3]\noutput %x, %nope\n", "t.air:2:12: unknown value '%nope'"},
      {"input %x: f32[3]\noutput %x %x\n", "t.air:2:11: expected the end of the line after the outputs"},
      {"input %x: f32[3]\n%y aten.relu.default(%x)\n",
       "t.air:2:4: expected ',' or '=' after a value name"},
      {"input %x: f32[3]\n%y = aten.relu.default %x\n",
       "t.air:2:24: expected '(' after the op name"},
      {"input %x: f32[3]\n%y = aten.gelu.default(%x, approximate=\"tanh)\n",
       "t.air:2:40: unterminated string"},
      {"input %x: f32[3]\n%y = aten.gelu.default(%x, approximate=\"t\\qh\")\n",
       "t.air:2:42: unknown escape '\\q' in a string"},
      {"input %x: f32[3]\n%y = aten.gelu.default(%x, approximate=\"\\x00\")\n",
       "t.air:2:41: a string cannot hold a NUL byte"},
      {"input %x: f32[3]\n%y = aten.add.Tensor(%x, %x, 2)\n",
       "t.air:2:30: argument 'alpha' of aten.add.Tensor is keyword-only: write alpha=..."},
      {"input %x: f32[3]\n%y = aten.max.dim(%x, dim=0, false)\n",
       "t.air:2:30: positional argument after keyword arguments"},
      {"input %x: f32[3]\n%y = aten.relu.default(%x, foo=1)\n",
       "t.air:2:28: aten.relu.default has no argument named 'foo'"},
      {"input %x: f32[3]\n%y = aten.relu.default(%x, )\n",
       "t.air:2:28: expected an argument, found ')'"},
      {"input %x: f32[3]\n%y = aten.leaky_relu.default(%x, 1e999)\n",
       "t.air:2:34: float literal out of range (write inf)"},
      {"input %x: f32[3]\n%y = aten.cat.default([%x, %x)\n",
       "t.air:2:30: expected ',' or ']' in a list, found ')'"},
      {"input %x: f32[3]\n%y = aten.cat.default("
       "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[%x]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]])\n",
       "t.air:2:55: lists nested more than 32 deep"},
      {"input %x: f32[3]\n%y = aten.max.dim(%x, 0)\n",
       "t.air:2:1: aten.max.dim defines 2 values but 1 is named"},
      {"input %x: f32[3]\naten.relu.default(%x)\n",
       "t.air:2:1: aten.relu.default defines 1 value but 0 are named"},
      {"input %x: f32[3]\n%y = aten.relu.default(%x, %x)\n",
       "t.air:2:1: aten.relu.default: takes 1 arguments, 2 given"},
      {"input %x: f32[3]\n%y = aten.relu.default(f32)\n",
       "t.air:2:1: aten.relu.default: argument 'self' expects Tensor, got ScalarType"},
      {"input %x: f32[3]\n%y = aten.relu.default(%x) : f32[3], f32[3]\n",
       "t.air:2:38: aten.relu.default defines 1 value but more types are annotated"},
      {"input %x: f32[3]\n%a, %b = aten.max.dim(%x, 0) : f32[]\n",
       "t.air:2:37: aten.max.dim defines 2 values but 1 type is annotated"},
      {"input %x: f32[3]\n%y = aten.relu.default(%x) : f32[3] stride [1]\n",
       "t.air:2:37: expected the end of the line after the types"},
      {"input %x: f32[3]\r\n%y = aten.relu.default(%x) junk\r\n",
       "t.air:2:28: expected the end of the line after the argument list"},
      {"input %\n", "t.air:1:8: expected a value name after '%'"},
      {"%y = (%x)\n", "t.air:1:6: expected an op name, found '('"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    check_parse_error(cases[i].text, cases[i].want);
}

TEST(air_parse_error_annotated_type) {
  check_parse_error(
      "sym s0 in [1, 8]\n"
      "input %x: f32[s0, 3]\n"
      "%y = aten.relu.default(%x) : f32[s0, 4]\n",
      "t.air:3:30: annotated f32[s0, 4] but inferred f32[s0, 3]");
  check_parse_error(
      "input %x: f32[2, 3]\n"
      "%v, %i = aten.max.dim(%x, 1) : f32[2], f32[2]\n",
      "t.air:2:40: annotated f32[2] but inferred i64[2]");
  check_parse_error(
      "input %x: f32[2, 3]\n"
      "%n = aten.sym_size.int(%x, 1) : SymInt(2)\n",
      "t.air:2:33: annotated SymInt(2) but inferred SymInt(3)");
}

TEST(air_parse_unterminated_buffer) {
  /* The text need not be NUL-terminated: only len bytes are read. */
  const char text[] = "input %x: f32[3]\noutput %xyz";
  alloy_graph *g = NULL;
  CHECK_OK(alloy_air_parse(text, sizeof text - 3, "t.air", &g));
  if (g) {
    CHECK_INT(alloy_graph_num_outputs(g), 1);
    CHECK_STR(alloy_value_name(alloy_graph_output(g, 0)), "x");
  }
  alloy_graph_free(g);
  g = NULL;
  CHECK_OK(alloy_air_parse(NULL, 0, NULL, &g));
  char *empty = print(g);
  CHECK_STR(empty, "output\n");
  free(empty);
  alloy_graph_free(g);
}

TEST(air_verify_errors) {
  alloy_graph *g = parse(
      "input %x: f32[3]\n"
      "%r = aten.relu.default(%x)\n"
      "%y = aten.add.Tensor(%r, %x)\n"
      "output %y\n");
  REQUIRE(g);
  CHECK_OK(alloy_graph_verify(g));
  /* An argument of the wrong kind, as a buggy pass could leave it. */
  alloy_node *add = alloy_graph_node(g, 1);
  alloy_arg *other = (alloy_arg *)alloy_node_arg(add, 1);
  alloy_arg saved = *other;
  *other = alloy_arg_dtype(ALLOY_I64);
  alloy_error *e = alloy_graph_verify(g);
  CHECK(e != NULL);
  if (e)
    CHECK_STR(alloy_error_message(e),
              "node 1 (y): aten.add.Tensor: argument 'other' expects Tensor, got ScalarType");
  alloy_error_free(e);
  *other = saved;
  /* An output type that disagrees with the shape function. */
  alloy_value *r = alloy_node_output(alloy_graph_node(g, 0), 0);
  r->dtype = ALLOY_F64;
  e = alloy_graph_verify(g);
  CHECK(e != NULL);
  if (e)
    CHECK_STR(alloy_error_message(e),
              "node 0 (r, op aten.relu.default): output 0 is f64[3], but the shape "
              "function gives f32[3]");
  alloy_error_free(e);
  alloy_graph_free(g);
}

TEST(air_example_mlp_file) {
  /* examples/mlp.air is what `make run` checks: keep it valid. */
  FILE *f = fopen("examples/mlp.air", "rb");
  REQUIRE(f);
  char buf[8192];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  alloy_graph *g = NULL;
  CHECK_OK(alloy_air_parse(buf, n, "examples/mlp.air", &g));
  if (g) {
    CHECK_OK(alloy_graph_verify(g));
    CHECK_INT(alloy_graph_num_inputs(g), 7);
    CHECK_INT(alloy_graph_num_nodes(g), 9);
    CHECK_INT(alloy_graph_num_outputs(g), 1);
  }
  alloy_graph_free(g);
}
