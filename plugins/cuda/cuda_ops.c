/*
 * plugins/cuda/cuda_ops.c: the ops the cuda backend runs, as data. A
 * pointwise op is a C expression over its operands in the compute type
 * (PyTorch's opmath: float for float16 and bfloat16, so the arithmetic is
 * PyTorch's CUDA kernels'); the helpers it calls (op_sigmoid, op_max, ...)
 * are the generated module's prelude (cuda_codegen.c), written after
 * PyTorch's CUDA kernels so that NaN, infinities and signed zeros come out
 * as they do there, and integers wrap as they do there (the helpers add,
 * subtract and multiply integers through unsigned types: a signed overflow
 * is undefined in C++, and the compiler would fold x + 3 > 0 to x > -3). View ops make no kernel: their result is a new
 * geometry over the same buffer.
 *
 * Left out on purpose (they run on the next backend): integer division,
 * fmod and remainder (a zero divisor is an error on the CPU and garbage on
 * CUDA), and float-to-integer conversion (out-of-range values saturate on
 * CUDA and wrap on the CPU).
 */
#include <string.h>

#include "plugins/cuda/cuda_codegen.h"

#define PW(op, ct_, e) {.name = op, .kind = CUDA_OP_POINTWISE, .ct = ct_, .bool_operand = -1, .expr = e}
#define PWF(op, e) {.name = op, .kind = CUDA_OP_POINTWISE, .bool_operand = -1, .float_only = true, .expr = e}
#define PWN(op, e) {.name = op, .kind = CUDA_OP_POINTWISE, .bool_operand = -1, .no_bool = true, .expr = e}
#define PWC(op, ct_, cond, e) {.name = op, .kind = CUDA_OP_POINTWISE, .ct = ct_, .bool_operand = cond, .expr = e}
#define VIEW(op) {.name = op, .kind = CUDA_OP_VIEW, .bool_operand = -1}
#define FILL(op, e) {.name = op, .kind = CUDA_OP_FILL, .bool_operand = -1, .expr = e}
#define GEMM(op) {.name = op, .kind = CUDA_OP_GEMM, .bool_operand = -1, .float_only = true, .emit = cg_emit_gemm}
#define RED(op, what, fl) {.name = op, .kind = CUDA_OP_REDUCE, .bool_operand = -1, .float_only = fl, .reduce = what, .emit = cg_emit_reduce}

static const cuda_op ops[] = {
    /* arithmetic */
    PW("aten.add.Tensor", CT_RESULT, "op_add($0, op_mul(${alpha}, $1))"),
    PW("aten.add.Scalar", CT_RESULT, "op_add($0, op_mul(${alpha}, ${other}))"),
    PWN("aten.sub.Tensor", "op_sub($0, op_mul(${alpha}, $1))"),
    PWN("aten.sub.Scalar", "op_sub($0, op_mul(${alpha}, ${other}))"),
    PWN("aten.rsub.Scalar", "op_sub(${other}, op_mul(${alpha}, $0))"),
    PW("aten.mul.Tensor", CT_RESULT, "op_mul($0, $1)"),
    PW("aten.mul.Scalar", CT_RESULT, "op_mul($0, ${other})"),
    PWF("aten.div.Tensor", "$0 / $1"),
    PWF("aten.div.Scalar", "$0 / ${other}"),
    PWN("aten.neg.default", "op_sub(($T)0, $0)"),
    PWN("aten.abs.default", "op_abs($0)"),
    PWF("aten.reciprocal.default", "($T)1 / $0"),
    PWF("aten.pow.Tensor_Scalar", "op_pow($0, ${exponent})"),
    PWF("aten.pow.Tensor_Tensor", "op_pow($0, $1)"),
    PWN("aten.maximum.default", "op_max($0, $1)"),
    PWN("aten.minimum.default", "op_min($0, $1)"),
    PWN("aten.clamp.default", "op_clamp($0, ${min?}, ${max?})"),
    PWN("aten.clamp_min.default", "op_clamp($0, 1, ${min}, 0, ($T)0)"),
    PWN("aten.clamp_max.default", "op_clamp($0, 0, ($T)0, 1, ${max})"),
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
    PWF("aten.erfinv.default", "erfinv($0)"),
    PWF("aten.sigmoid.default", "op_sigmoid($0)"),
    PWF("aten.ceil.default", "ceil($0)"),
    PWF("aten.floor.default", "floor($0)"),
    PWF("aten.round.default", "rint($0)"),
    PWF("aten.trunc.default", "trunc($0)"),
    PWF("aten.gelu.default", "op_gelu($0, ${approximate})"),
    PWN("aten.relu.default", "op_relu($0)"),
    PWF("aten.hardtanh.default", "op_clamp($0, 1, ${min_val}, 1, ${max_val})"),
    PWF("aten.leaky_relu.default", "($0 > ($T)0 ? $0 : $0 * ${negative_slope})"),
    /* hardsigmoid and hardswish as PyTorch's CUDA kernels: opmath x,
     * min(max(x + 3, 0), 6) (NaN stays NaN) times 1/6 rounded to float */
    PWF("aten.hardsigmoid.default", "op_clamp($0 + ($T)3, 1, ($T)0, 1, ($T)6) * ($T)(1.0f / 6.0f)"),
    PWF("aten.hardswish.default", "$0 * op_clamp($0 + ($T)3, 1, ($T)0, 1, ($T)6) * ($T)(1.0f / 6.0f)"),
    /* comparisons and logic */
    PW("aten.eq.Tensor", CT_PROMOTED, "$0 == $1"),
    PW("aten.eq.Scalar", CT_PROMOTED, "$0 == ${other}"),
    PW("aten.ne.Tensor", CT_PROMOTED, "$0 != $1"),
    PW("aten.ne.Scalar", CT_PROMOTED, "$0 != ${other}"),
    PW("aten.lt.Tensor", CT_PROMOTED, "$0 < $1"),
    PW("aten.lt.Scalar", CT_PROMOTED, "$0 < ${other}"),
    PW("aten.le.Tensor", CT_PROMOTED, "$0 <= $1"),
    PW("aten.le.Scalar", CT_PROMOTED, "$0 <= ${other}"),
    PW("aten.gt.Tensor", CT_PROMOTED, "$0 > $1"),
    PW("aten.gt.Scalar", CT_PROMOTED, "$0 > ${other}"),
    PW("aten.ge.Tensor", CT_PROMOTED, "$0 >= $1"),
    PW("aten.ge.Scalar", CT_PROMOTED, "$0 >= ${other}"),
    PW("aten.isnan.default", CT_PROMOTED, "op_isnan($0)"),
    PW("aten.isinf.default", CT_PROMOTED, "op_isinf($0)"),
    PW("aten.logical_not.default", CT_BOOL, "!$0"),
    PW("aten.logical_and.default", CT_BOOL, "$0 && $1"),
    PW("aten.logical_or.default", CT_BOOL, "$0 || $1"),
    PW("aten.logical_xor.default", CT_BOOL, "$0 != $1"),
    PW("aten.bitwise_and.Tensor", CT_RESULT, "$0 & $1"),
    PW("aten.bitwise_and.Scalar", CT_RESULT, "$0 & ${other}"),
    PW("aten.bitwise_or.Tensor", CT_RESULT, "$0 | $1"),
    PW("aten.bitwise_or.Scalar", CT_RESULT, "$0 | ${other}"),
    PW("aten.bitwise_xor.Tensor", CT_RESULT, "$0 ^ $1"),
    PW("aten.bitwise_xor.Scalar", CT_RESULT, "$0 ^ ${other}"),
    PW("aten.bitwise_not.default", CT_RESULT, "op_bitnot($0)"),
    PWC("aten.where.self", CT_RESULT, 0, "$0 ? $1 : $2"),
    PWC("aten.masked_fill.Scalar", CT_RESULT, 1, "$1 ? ${value} : $0"),
    /* copies and conversions: the conversion is the store's */
    PW("aten._to_copy.default", CT_RESULT, "$0"),
    PW("aten.clone.default", CT_RESULT, "$0"),
    PW("aten.lift_fresh_copy.default", CT_RESULT, "$0"),
    PW("prims.convert_element_type.default", CT_RESULT, "$0"),
    /* generators: i is the element's linear index */
    FILL("aten.full.default", "${fill_value}"),
    FILL("aten.scalar_tensor.default", "${s}"),
    FILL("aten.arange.start_step", "${start} + ${step} * ($T)i"),
    /* rows: layer norm (two passes over the row in acc_type), embedding
     * (a gather of table rows), cat (copies into slices of the output) */
    {.name = "aten.native_layer_norm.default", .kind = CUDA_OP_LAYER_NORM, .bool_operand = -1, .float_only = true, .emit = cg_emit_layer_norm},
    {.name = "aten.embedding.default", .kind = CUDA_OP_EMBEDDING, .bool_operand = -1, .emit = cg_emit_embedding},
    {.name = "aten.cat.default", .kind = CUDA_OP_CAT, .bool_operand = -1, .emit = cg_emit_cat, .fuse = cg_fuse_cat,
     .groupable = cg_cat_groupable},
    {.name = "aten.index.Tensor", .kind = CUDA_OP_INDEX, .bool_operand = -1, .emit = cg_emit_index},
    {.name = "aten.cumsum.default", .kind = CUDA_OP_SCAN, .bool_operand = -1, .emit = cg_emit_scan},
    /* attention: one flash-style kernel (cuda_codegen_attention.c) */
    {.name = "aten.scaled_dot_product_attention.default", .kind = CUDA_OP_ATTENTION, .bool_operand = -1,
     .float_only = true, .emit = cg_emit_attention, .check = cuda_attention_check},
    {.name = "aten._assert_tensor_metadata.default", .kind = CUDA_OP_NOP, .bool_operand = -1},
    /* reductions over dims: one block a row of the reduced elements,
     * accumulating in PyTorch's CUDA acc_type (float for the 16-bit floats) */
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
    /* convolutions: cuDNN (cuda_dnn.c), float32 exact unless TF32 is
     * allowed, depthwise ones fused into the group of their output;
     * pooling and inference batch norm: kernels after PyTorch's CUDA ones
     * (cuda_codegen_conv.c); max pooling's indices are int64 */
    {.name = "aten.convolution.default", .kind = CUDA_OP_CONV, .bool_operand = -1, .float_only = true,
     .emit = cg_emit_conv, .check = cg_check_conv, .fuse = cg_fuse_conv, .groupable = cg_conv_groupable},
    {.name = "aten.max_pool2d_with_indices.default", .kind = CUDA_OP_POOL, .bool_operand = -1,
     .emit = cg_emit_max_pool, .check = cg_check_pool},
    {.name = "aten.avg_pool2d.default", .kind = CUDA_OP_POOL, .bool_operand = -1, .float_only = true,
     .emit = cg_emit_avg_pool, .check = cg_check_pool},
    {.name = "aten._adaptive_avg_pool2d.default", .kind = CUDA_OP_POOL, .bool_operand = -1, .float_only = true,
     .emit = cg_emit_adaptive_avg_pool, .check = cg_check_pool},
    {.name = "aten._native_batch_norm_legit_no_training.default", .kind = CUDA_OP_BATCH_NORM, .bool_operand = -1,
     .float_only = true, .fuse = cg_fuse_batch_norm, .check = cg_check_batch_norm},
    /* matrix products: cuBLASLt (cuda_blas.c), float32 exact unless TF32
     * is allowed, the 16-bit floats accumulating in float */
    GEMM("aten.mm.default"),
    GEMM("aten.bmm.default"),
    GEMM("aten.addmm.default"),
    GEMM("aten.baddbmm.default"),
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

const cuda_op *cuda_op_find(const char *name) {
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
    if (!strcmp(ops[i].name, name)) return &ops[i];
  return NULL;
}
