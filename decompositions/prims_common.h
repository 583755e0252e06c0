/*
 * decompositions/prims_common.h: what the rules from Core ATen to prims
 * share (prims_pointwise.c, prims_reduce.c, prims_shape.c). Prims neither
 * promote nor broadcast, so every rule does what torch._refs does around
 * its prim: find the computation and result dtypes (ir/promote.h), convert
 * the operands with prims.convert_element_type, broadcast them with
 * prims.broadcast_in_dim, apply the prim and convert the result back.
 */
#ifndef ALLOY_PRIMS_COMMON_H
#define ALLOY_PRIMS_COMMON_H

#include "decompositions/rules.h"
#include "ir/promote.h"

enum { P_MAX_OPERANDS = 4 };

/* Output k of the node being replaced: the dtype and shape the rule must
 * give it. */
const alloy_value *p_result(decomp *d, int k);
/* The name of the op being replaced ("aten.add.Tensor"). */
const char *p_op_name(decomp *d);

/* The device argument of the creation prims (the graph runs on one). */
alloy_arg p_device(void);

/* x in dtype t (x itself when it already is). */
alloy_value *p_convert(decomp *d, alloy_value *x, alloy_dtype t);
/* x broadcast to shape, its dims aligned to the trailing ones (x itself
 * when it already has that shape). */
alloy_value *p_broadcast(decomp *d, alloy_value *x, const alloy_dim *shape, int rank);
/* A tensor of shape filled with a number argument, in dtype t. */
alloy_value *p_full(decomp *d, const alloy_dim *shape, int rank, alloy_arg value, alloy_dtype t);
/* A Python number argument as the Python type of dtype t (bool, int or
 * float), as torch._refs hands numbers to prims. */
alloy_arg p_number_as(decomp *d, alloy_arg a, alloy_dtype t);
bool p_is_number(alloy_arg a);

/* The operands of an elementwise op made ready for a prim: tensors in the
 * computation dtype and the common shape, numbers as that dtype's Python
 * type. */
typedef struct p_operands {
  alloy_arg a[P_MAX_OPERANDS];
  int n;
  alloy_dtype compute, result;
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank;
} p_operands;

/* Promotes (kind) and broadcasts the n arguments in[] (tensors, numbers or
 * None, which is skipped and stays None). False after an error. */
bool p_elementwise(decomp *d, const alloy_arg *in, int n, alloy_promo_kind kind, p_operands *out);
/* The same over the node's arguments at positions pos[0..n). */
bool p_elementwise_args(decomp *d, const int *pos, int n, alloy_promo_kind kind, p_operands *out);
/* A float number meeting a float16/bfloat16 tensor is rounded to that
 * dtype first, as PyTorch wraps it; mul and div keep it in the float32
 * computation instead (keep_numbers), as PyTorch's kernels do. */
bool p_elementwise_opmath(decomp *d, const alloy_arg *in, int n, alloy_promo_kind kind,
                          bool keep_numbers, p_operands *out);
bool p_elementwise_args_opmath(decomp *d, const int *pos, int n, alloy_promo_kind kind,
                               p_operands *out);

/* Applying a prim to prepared operands (arguments in schema order). */
#define P1(d, prim, a) D(d, prim, a)
#define P2(d, prim, a, b) D(d, prim, a, b)

/* --- reductions ---------------------------------------------------------------*/

/* The dims a reduction reduces: mask[k] for each dim of a rank-`rank`
 * input, and the list in order. */
typedef struct p_dims {
  bool mask[ALLOY_MAX_RANK];
  int64_t list[ALLOY_MAX_RANK];
  int n;
} p_dims;

/* From the node's dims argument at position i: None, or an empty list when
 * empty_is_all, reduces every dim. */
void p_reduce_dims(decomp *d, int i, int rank, bool empty_is_all, p_dims *out);
/* All dims from `from` on (layer norm's normalized dims). */
void p_dims_from(int from, int rank, p_dims *out);
/* The reduction's result r given back the reduced dims of in as size 1. */
alloy_value *p_keepdim(decomp *d, alloy_value *r, const alloy_value *in, const p_dims *rd);
/* The number of elements the dims cover, as a zero-dim tensor of dtype t
 * (symbolic sizes stay symbolic). */
alloy_value *p_count(decomp *d, const alloy_value *in, const p_dims *rd, alloy_dtype t);

#endif
