/*
 * plugins/cpu/cpu_ops.c: the ops the cpu backend runs, as data, and which
 * nodes of them it claims. A pointwise op is a formula over its operands
 * in the compute type: calls of the primitives of cpu_ir.c (add, max,
 * sigmoid, ...), each one instruction or a helper written after PyTorch's
 * CPU kernels. cpu_plan.c fuses runs of them into one loop nest. View ops
 * make no code: their result is a new geometry over the same buffer.
 *
 * Left out on purpose (they run on the next backend, ref last): integer
 * division, fmod and remainder (a zero divisor is an error on the CPU),
 * and float-to-integer conversion (out-of-range values are undefined in
 * C++; PyTorch's result is what x86 happens to give).
 */
#include <string.h>

#include "plugins/cpu/cpu_plan.h"

#define PW(op, ct_, e) {.name = op, .kind = CPU_OP_POINTWISE, .ct = ct_, .bool_operand = -1, .expr = e}
#define PWF(op, e) {.name = op, .kind = CPU_OP_POINTWISE, .bool_operand = -1, .float_only = true, .expr = e}
#define PWN(op, e) {.name = op, .kind = CPU_OP_POINTWISE, .bool_operand = -1, .no_bool = true, .expr = e}
#define PWC(op, cond, e) {.name = op, .kind = CPU_OP_POINTWISE, .bool_operand = cond, .expr = e}
#define VIEW(op) {.name = op, .kind = CPU_OP_VIEW, .bool_operand = -1}
#define FILL(op, ct_, e) {.name = op, .kind = CPU_OP_FILL, .ct = ct_, .bool_operand = -1, .expr = e}
#define RED(op, what, fl) {.name = op, .kind = CPU_OP_ROWS, .rows = ROWS_REDUCE, .bool_operand = -1, .float_only = fl, .reduce = what}
#define PWS(op, fl, e) {.name = op, .kind = CPU_OP_POINTWISE, .bool_operand = -1, .float_only = fl, .scalar_opmath = true, .expr = e}
#define GEMM(op) {.name = op, .kind = CPU_OP_ROWS, .rows = ROWS_GEMM, .bool_operand = -1, .float_only = true}

static const cpu_op ops[] = {
    /* arithmetic */
    PW("aten.add.Tensor", CT_RESULT, "add($0, mul(${alpha}, $1))"),
    PW("aten.add.Scalar", CT_RESULT, "add($0, mul(${alpha}, ${other}))"),
    PWN("aten.sub.Tensor", "sub($0, mul(${alpha}, $1))"),
    PWN("aten.sub.Scalar", "sub($0, mul(${alpha}, ${other}))"),
    PWN("aten.rsub.Scalar", "sub(${other}, mul(${alpha}, $0))"),
    PWS("aten.mul.Tensor", false, "mul($0, $1)"),
    PWS("aten.mul.Scalar", false, "mul($0, ${other})"),
    PWS("aten.div.Tensor", true, "div($0, $1)"),
    PWS("aten.div.Scalar", true, "div($0, ${other})"),
    PWN("aten.neg.default", "neg($0)"),
    PWN("aten.abs.default", "abs($0)"),
    PWF("aten.reciprocal.default", "rcp($0)"),
    PWF("aten.pow.Tensor_Scalar", "pow($0, ${exponent})"),
    PWF("aten.pow.Tensor_Tensor", "pow($0, $1)"),
    PWN("aten.maximum.default", "max($0, $1)"),
    PWN("aten.minimum.default", "min($0, $1)"),
    PWN("aten.clamp.default", "clamp_hi(clamp_lo($0, ${min?}), ${max?})"),
    PWN("aten.clamp_min.default", "clamp_lo($0, ${min})"),
    PWN("aten.clamp_max.default", "clamp_hi($0, ${max})"),
    /* transcendental: float results only */
    PWF("aten.exp.default", "exp($0)"),
    PWF("aten.exp2.default", "exp2($0)"),
    PWF("aten.expm1.default", "expm1($0)"),
    PWF("aten.log.default", "log($0)"),
    PWF("aten.log2.default", "log2($0)"),
    PWF("aten.log10.default", "log10($0)"),
    PWF("aten.log1p.default", "log1p($0)"),
    PWF("aten.sqrt.default", "sqrt($0)"),
    PWF("aten.rsqrt.default", "rsqrt($0)"),
    PWF("aten.sin.default", "sin($0)"),
    PWF("aten.cos.default", "cos($0)"),
    PWF("aten.tan.default", "tan($0)"),
    PWF("aten.asin.default", "asin($0)"),
    PWF("aten.acos.default", "acos($0)"),
    PWF("aten.atan.default", "atan($0)"),
    PWF("aten.sinh.default", "sinh($0)"),
    PWF("aten.cosh.default", "cosh($0)"),
    PWF("aten.tanh.default", "tanh($0)"),
    PWF("aten.asinh.default", "asinh($0)"),
    PWF("aten.acosh.default", "acosh($0)"),
    PWF("aten.atanh.default", "atanh($0)"),
    PWF("aten.atan2.default", "atan2($0, $1)"),
    PWF("aten.erf.default", "erf($0)"),
    PWF("aten.erfc.default", "erfc($0)"),
    PWF("aten.sigmoid.default", "sigmoid($0)"),
    PWF("aten.ceil.default", "ceil($0)"),
    PWF("aten.floor.default", "floor($0)"),
    PWF("aten.round.default", "round($0)"),
    PWF("aten.trunc.default", "trunc($0)"),
    PWF("aten.gelu.default", "gelu($0, ${approximate})"),
    /* silu as PyTorch's CPU kernel: x / (1 + exp(-x)) */
    PWF("aten.silu.default", "div($0, add(#1, exp(neg($0))))"),
    PWN("aten.relu.default", "relu($0)"),
    PWF("aten.hardtanh.default", "clamp_hi(clamp_lo($0, ${min_val}), ${max_val})"),
    PWF("aten.leaky_relu.default", "leaky($0, ${negative_slope})"),
    /* comparisons and logic */
    PW("aten.eq.Tensor", CT_PROMOTED, "eq($0, $1)"),
    PW("aten.eq.Scalar", CT_PROMOTED, "eq($0, ${other})"),
    PW("aten.ne.Tensor", CT_PROMOTED, "ne($0, $1)"),
    PW("aten.ne.Scalar", CT_PROMOTED, "ne($0, ${other})"),
    PW("aten.lt.Tensor", CT_PROMOTED, "lt($0, $1)"),
    PW("aten.lt.Scalar", CT_PROMOTED, "lt($0, ${other})"),
    PW("aten.le.Tensor", CT_PROMOTED, "le($0, $1)"),
    PW("aten.le.Scalar", CT_PROMOTED, "le($0, ${other})"),
    PW("aten.gt.Tensor", CT_PROMOTED, "gt($0, $1)"),
    PW("aten.gt.Scalar", CT_PROMOTED, "gt($0, ${other})"),
    PW("aten.ge.Tensor", CT_PROMOTED, "ge($0, $1)"),
    PW("aten.ge.Scalar", CT_PROMOTED, "ge($0, ${other})"),
    PW("aten.isnan.default", CT_PROMOTED, "isnan($0)"),
    PW("aten.isinf.default", CT_PROMOTED, "isinf($0)"),
    PW("aten.logical_not.default", CT_BOOL, "not($0)"),
    PW("aten.logical_and.default", CT_BOOL, "and($0, $1)"),
    PW("aten.logical_or.default", CT_BOOL, "or($0, $1)"),
    PW("aten.logical_xor.default", CT_BOOL, "xor($0, $1)"),
    PW("aten.bitwise_and.Tensor", CT_RESULT, "and($0, $1)"),
    PW("aten.bitwise_and.Scalar", CT_RESULT, "and($0, ${other})"),
    PW("aten.bitwise_or.Tensor", CT_RESULT, "or($0, $1)"),
    PW("aten.bitwise_or.Scalar", CT_RESULT, "or($0, ${other})"),
    PW("aten.bitwise_xor.Tensor", CT_RESULT, "xor($0, $1)"),
    PW("aten.bitwise_xor.Scalar", CT_RESULT, "xor($0, ${other})"),
    PW("aten.bitwise_not.default", CT_RESULT, "not($0)"),
    PWC("aten.where.self", 0, "select($0, $1, $2)"),
    PWC("aten.masked_fill.Scalar", 1, "select($1, ${value}, $0)"),
    PWC("aten.masked_fill.Tensor", 1, "select($1, $2, $0)"),
    /* copies and conversions: the conversion is the store's */
    PW("aten._to_copy.default", CT_RESULT, "$0"),
    PW("aten.clone.default", CT_RESULT, "$0"),
    PW("aten.lift_fresh_copy.default", CT_RESULT, "$0"),
    PW("prims.convert_element_type.default", CT_RESULT, "$0"),
    /* generators: $i is the element's linear index; arange computes in
     * the accumulate type (double for floats) as PyTorch's CPU kernel */
    FILL("aten.full.default", CT_RESULT, "${fill_value}"),
    FILL("aten.full_like.default", CT_RESULT, "${fill_value}"),
    FILL("aten.scalar_tensor.default", CT_RESULT, "${s}"),
    FILL("aten.arange.start_step", CT_ACC, "add(${start}, mul(${step}, $i))"),
    {.name = "aten._assert_tensor_metadata.default", .kind = CPU_OP_NOP, .bool_operand = -1},
    /* reductions over dims, a row of the reduced elements per output
     * element, in PyTorch's CPU accumulate types (cpu_rows.c) */
    RED("aten.sum.dim_IntList", RED_SUM, false),
    RED("aten.sum.default", RED_SUM, false),
    RED("aten.mean.dim", RED_MEAN, true),
    RED("aten.mean.default", RED_MEAN, true),
    RED("aten.amax.default", RED_MAX, false),
    RED("aten.amin.default", RED_MIN, false),
    RED("aten.any.dim", RED_ANY, false),
    RED("aten.any.dims", RED_ANY, false),
    RED("aten.any.default", RED_ANY, false),
    RED("aten.all.dim", RED_ALL, false),
    RED("aten.all.dims", RED_ALL, false),
    RED("aten.all.default", RED_ALL, false),
    RED("aten._softmax.default", RED_SOFTMAX, true),
    RED("aten._log_softmax.default", RED_LOG_SOFTMAX, true),
    {.name = "aten.native_layer_norm.default", .kind = CPU_OP_ROWS, .rows = ROWS_LAYER_NORM, .bool_operand = -1,
     .float_only = true},
    /* matrix products: OpenBLAS's sgemm (16-bit operands converted to
     * float32 first, the result rounded once), or the emitted loop */
    GEMM("aten.mm.default"),
    GEMM("aten.bmm.default"),
    GEMM("aten.addmm.default"),
    /* convolutions (im2col + sgemm, the bias and a following relu in its
     * tiles) and pooling (emitted window loops): cpu_rows.c, cpu_conv.c;
     * their dtypes are cpu_conv_unsupported's */
    {.name = "aten.convolution.default", .kind = CPU_OP_ROWS, .rows = ROWS_CONV, .bool_operand = -1},
    /* attention as one step, flash-style (cpu_attention.c): float32 */
    {.name = "aten.scaled_dot_product_attention.default", .kind = CPU_OP_ROWS, .rows = ROWS_ATTENTION,
     .bool_operand = -1},
    {.name = "aten.max_pool2d_with_indices.default", .kind = CPU_OP_ROWS, .rows = ROWS_POOL, .bool_operand = -1},
    {.name = "aten.max_pool2d.default", .kind = CPU_OP_ROWS, .rows = ROWS_POOL, .bool_operand = -1},
    {.name = "aten.avg_pool2d.default", .kind = CPU_OP_ROWS, .rows = ROWS_POOL, .bool_operand = -1},
    {.name = "aten._adaptive_avg_pool2d.default", .kind = CPU_OP_ROWS, .rows = ROWS_POOL, .bool_operand = -1},
    {.name = "aten.adaptive_avg_pool2d.default", .kind = CPU_OP_ROWS, .rows = ROWS_POOL, .bool_operand = -1},
    /* gathers, cat and cumsum (cpu_index.c) */
    {.name = "aten.embedding.default", .kind = CPU_OP_ROWS, .rows = ROWS_EMBEDDING, .bool_operand = -1},
    {.name = "aten.index.Tensor", .kind = CPU_OP_ROWS, .rows = ROWS_INDEX, .bool_operand = -1},
    {.name = "aten.gather.default", .kind = CPU_OP_ROWS, .rows = ROWS_GATHER, .bool_operand = -1},
    {.name = "aten.cat.default", .kind = CPU_OP_ROWS, .rows = ROWS_CAT, .bool_operand = -1},
    {.name = "aten.cumsum.default", .kind = CPU_OP_ROWS, .rows = ROWS_CUMSUM, .bool_operand = -1},
    /* views */
    VIEW("aten.view.default"),
    VIEW("aten._unsafe_view.default"),
    VIEW("aten.reshape.default"),
    VIEW("aten.alias.default"),
    VIEW("aten.permute.default"),
    VIEW("aten.t.default"),
    VIEW("aten.transpose.int"),
    VIEW("aten.expand.default"),
    VIEW("aten.unsqueeze.default"),
    VIEW("aten.squeeze.dim"),
    VIEW("aten.squeeze.dims"),
    VIEW("aten.squeeze.default"),
    VIEW("aten.slice.Tensor"),
    VIEW("aten.select.int"),
};

const cpu_op *cpu_op_find(const char *name) {
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
    if (!strcmp(ops[i].name, name)) return &ops[i];
  return NULL;
}

int cpu_index_position(const alloy_host_api *h, const alloy_node *n) {
  const alloy_arg *list = h->node_arg(n, 1);
  if (!list || h->arg_type(list) != ALLOY_ARG_TYPE_LIST) return -1;
  int first = -1, last = -1;
  for (int k = 0; k < h->arg_list_size(list); k++) {
    const alloy_arg *a = h->arg_list_item(list, k);
    if (h->arg_type(a) == ALLOY_ARG_TYPE_NONE) continue;
    const alloy_value *v = h->arg_type(a) == ALLOY_ARG_TYPE_VALUE ? h->arg_value(a) : NULL;
    if (!v || (last >= 0 && last != k - 1)) return -1; /* not consecutive: dims move to the front */
    alloy_dtype t = h->value_dtype(v);
    if (t != ALLOY_I64 && t != ALLOY_I32) return -1;
    if (first < 0) first = k;
    last = k;
  }
  return first;
}

/* ---- claims -------------------------------------------------------------------- */

static bool dtype_computed(alloy_dtype t) { return t <= ALLOY_F64; }

static const char *value_unsupported(const alloy_host_api *h, const alloy_value *v) {
  if (h->value_kind(v) != 0) return NULL;
  if (!dtype_computed(h->value_dtype(v))) return "complex dtypes are not computed";
  if (h->value_rank(v) > CPU_MAX_RANK) return "rank above 8";
  return NULL;
}

static bool has_empty_dim(const alloy_host_api *h, const alloy_value *v) {
  for (int d = 0; d < h->value_rank(v); d++) {
    int64_t s = 1;
    if (h->value_size(v, d, &s) && s == 0) return true;
  }
  return false;
}

/* A reduction's row is empty for amax/amin (PyTorch refuses those). */
static const char *reduce_unsupported(const alloy_host_api *h, const alloy_node *n, const cpu_op *op,
                                      const alloy_value *x, const alloy_value *y) {
  alloy_dtype xt = h->value_dtype(x), yt = h->value_dtype(y);
  bool truth = op->reduce == RED_ANY || op->reduce == RED_ALL;
  if (!truth && (xt == ALLOY_BOOL || yt == ALLOY_BOOL) && op->reduce != RED_SUM) return "a reduction of bool";
  if ((op->reduce == RED_SOFTMAX || op->reduce == RED_LOG_SOFTMAX)) {
    const alloy_arg *a = cp_arg_named(h, n, "half_to_float");
    int flag = 0;
    if (a && h->arg_bool(a, &flag) && flag) return "half_to_float (a CUDA-only flag)";
    if (xt != yt) return "a softmax that changes dtype";
  }
  if ((op->reduce == RED_MAX || op->reduce == RED_MIN) && has_empty_dim(h, x)) return "an empty reduction";
  return NULL;
}

const char *cpu_node_unsupported(const alloy_host_api *h, const alloy_node *n) {
  const cpu_op *op = cpu_op_find(h->node_op_name(n));
  if (!op) return "no cpu kernel for this op yet";
  const alloy_value *in[CPU_MAX_OPERANDS];
  int nin = cp_tensor_operands(h, n, in, CPU_MAX_OPERANDS);
  if (nin > CPU_MAX_OPERANDS) return "more than 64 tensor operands";
  for (int k = 0; k < nin; k++) {
    const char *why = value_unsupported(h, in[k]);
    if (why) return why;
    if (op->no_bool && h->value_dtype(in[k]) == ALLOY_BOOL) return "bool operands are refused";
  }
  if (h->node_num_outputs(n) < 1 && op->kind != CPU_OP_NOP) return "a node without outputs";
  for (int k = 0; k < h->node_num_outputs(n); k++) {
    const alloy_value *o = h->node_output(n, k);
    const char *why = value_unsupported(h, o);
    if (why) return why;
    alloy_dtype t = h->value_dtype(o);
    if (op->float_only && k == 0 && !alloy_dtype_is_float(t)) return "an integer result of a float op";
    if (op->kind == CPU_OP_POINTWISE && !alloy_dtype_is_float(t) && t != ALLOY_BOOL && op->ct == CT_RESULT)
      for (int j = 0; j < nin; j++)
        if (alloy_dtype_is_float(h->value_dtype(in[j]))) return "float to integer conversion";
  }
  if (op->kind == CPU_OP_ROWS && op->rows == ROWS_REDUCE && nin >= 1) {
    const char *why = reduce_unsupported(h, n, op, in[0], h->node_output(n, 0));
    if (why) return why;
  }
  if (op->kind == CPU_OP_ROWS && op->rows == ROWS_GEMM) {
    alloy_dtype t = h->value_dtype(h->node_output(n, 0));
    if (t != ALLOY_F32 && t != ALLOY_F16 && t != ALLOY_BF16) return "products of float32, float16 or bfloat16 only";
    for (int j = 0; j < nin; j++)
      if (h->value_dtype(in[j]) != t) return "operands of mixed dtypes";
  }
  if (op->kind == CPU_OP_ROWS && op->rows == ROWS_ATTENTION) return cpu_attention_unsupported(h, n);
  if (op->kind == CPU_OP_ROWS && (op->rows == ROWS_CONV || op->rows == ROWS_POOL)) {
    const char *why = cpu_conv_unsupported(h, n, op);
    if (why) return why;
  }
  if (op->kind == CPU_OP_ROWS && op->rows == ROWS_LAYER_NORM) {
    for (int j = 0; j < nin; j++)
      if (h->value_dtype(in[j]) != h->value_dtype(in[0])) return "operands of mixed dtypes";
  }
  if (op->kind == CPU_OP_ROWS && op->rows == ROWS_INDEX && cpu_index_position(h, n) < 0)
    return "index.Tensor other than integer index tensors at consecutive dims";
  if (op->kind == CPU_OP_ROWS && (op->rows == ROWS_EMBEDDING || op->rows == ROWS_GATHER)) {
    const alloy_value *ix = op->rows == ROWS_EMBEDDING ? h->arg_value(h->node_arg(n, 1))
                                                       : h->arg_value(cp_arg_named(h, n, "index"));
    if (!ix || (h->value_dtype(ix) != ALLOY_I64 && h->value_dtype(ix) != ALLOY_I32)) return "indices other than int64 or int32";
    if (op->rows == ROWS_EMBEDDING && h->value_rank(h->arg_value(h->node_arg(n, 0))) != 2) return "a weight of rank other than 2";
    if (op->rows == ROWS_GATHER) {
      if (h->value_rank(ix) != h->value_rank(h->arg_value(h->node_arg(n, 0)))) return "an index of another rank";
      const alloy_arg *sg = cp_arg_named(h, n, "sparse_grad");
      int flag = 0;
      if (sg && h->arg_bool(sg, &flag) && flag) return "sparse_grad";
    }
  }
  if (op->kind == CPU_OP_ROWS && op->rows == ROWS_CAT)
    for (int j = 0; j < nin; j++)
      if (alloy_dtype_is_float(h->value_dtype(in[j])) && !alloy_dtype_is_float(h->value_dtype(h->node_output(n, 0))))
        return "float to integer conversion";
  if (!strncmp(op->name, "aten.bitwise_", 13))
    for (int j = 0; j < nin; j++)
      if (alloy_dtype_is_float(h->value_dtype(in[j]))) return "bitwise ops of floats";
  /* scalar arguments given as graph values (SymInt, a run-time float) */
  for (int i = 0; i < h->node_num_args(n); i++) {
    const alloy_arg *a = h->node_arg(n, i);
    if (h->arg_type(a) == ALLOY_ARG_TYPE_VALUE && h->value_kind(h->arg_value(a)) != 0)
      return "a scalar argument known only at run time";
  }
  return NULL;
}
