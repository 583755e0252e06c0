/*
 * ir/meta_alias.h: ops that are another op under another name, or another
 * op with some arguments fixed (swapaxes is transpose, concat is cat,
 * argsort is sort's second output, _cast_Float is _to_copy to float32),
 * and the way a shape function runs another op's shape function.
 *
 * One table (ALLOY_META_ALIASES below) says, for each such op, the op it
 * is and where each argument of that op comes from. The op's shape
 * function (meta_aliased, ir/meta_functional.c) runs the other op's on those
 * arguments, and its decomposition (decompositions/rules_views.c) builds
 * the other op on them, so the two cannot disagree.
 */
#ifndef ALLOY_META_ALIAS_H
#define ALLOY_META_ALIAS_H

#include "ir/meta.h"

/* Where argument j of the target comes from: an argument of the op
 * (0, 1, ...) or a constant. Arguments past the row's count take the
 * target's defaults. */
enum {
  ALIAS_NONE = -1,
  ALIAS_FALSE = -2,
  ALIAS_TRUE = -3,
  ALIAS_ZERO = -4,
  ALIAS_ONE = -5,
  ALIAS_MINUS_ONE = -6,
  ALIAS_DTYPE_BASE = -100, /* ALIAS_DTYPE(t): the ScalarType t */
};
#define ALIAS_DTYPE(t) (ALIAS_DTYPE_BASE - (int)(t))

enum { ALIAS_MAX_ARGS = 8 };

typedef struct meta_alias {
  const char *op; /* "aten.swapaxes.default"                              */
  const char *as; /* "aten.transpose.int"                                 */
  int first_out;  /* the target's output that is the op's output 0       */
  int nargs;      /* how many of args[] are given                        */
  int args[ALIAS_MAX_ARGS];
  bool real_only; /* the identity holds for real dtypes only (conj, real) */
} meta_alias;

/* The aliases: X(op, target, the target's output that is the op's first,
 * real_only, where each of the target's arguments comes from...). */
#define ALLOY_META_ALIASES(X) \
  /* views and their copies */ \
  X("aten.alias_copy.default", "aten.alias.default", 0, false, 0) \
  X("aten.detach_copy.default", "aten.detach.default", 0, false, 0) \
  X("aten._reshape_alias.default", "aten.view.default", 0, false, 0, 1) \
  X("aten._reshape_alias_copy.default", "aten.view.default", 0, false, 0, 1) \
  X("aten._reshape_copy.default", "aten.reshape.default", 0, false, 0, 1) \
  X("aten.broadcast_to.default", "aten.expand.default", 0, false, 0, 1) \
  X("aten.swapaxes.default", "aten.transpose.int", 0, false, 0, 1, 2) \
  X("aten.swapdims.default", "aten.transpose.int", 0, false, 0, 1, 2) \
  X("aten.moveaxis.int", "aten.movedim.int", 0, false, 0, 1, 2) \
  X("aten.moveaxis.intlist", "aten.movedim.intlist", 0, false, 0, 1, 2) \
  X("aten.ravel.default", "aten.flatten.using_ints", 0, false, 0, ALIAS_ZERO, ALIAS_MINUS_ONE) \
  X("aten.select_copy.int", "aten.select.int", 0, false, 0, 1, 2) \
  X("aten.slice_copy.Tensor", "aten.slice.Tensor", 0, false, 0, 1, 2, 3, 4) \
  X("aten.squeeze_copy.dims", "aten.squeeze.dims", 0, false, 0, 1) \
  X("aten.view.dtype", "prims.view_of_dtype.default", 0, false, 0, 1) \
  X("aten.view_copy.dtype", "prims.view_of_dtype.default", 0, false, 0, 1) \
  X("aten.real.default", "aten.alias.default", 0, true, 0) \
  X("aten.conj.default", "aten.alias.default", 0, true, 0) \
  X("aten.resolve_conj.default", "aten.alias.default", 0, true, 0) \
  X("aten.resolve_neg.default", "aten.alias.default", 0, true, 0) \
  X("aten.conj_physical.default", "aten.clone.default", 0, true, 0) \
  X("aten._conj_physical.default", "aten.clone.default", 0, true, 0) \
  X("aten._neg_view.default", "aten.neg.default", 0, true, 0) \
  X("aten._neg_view_copy.default", "aten.neg.default", 0, true, 0) \
  X("aten.lift.default", "aten.clone.default", 0, false, 0) \
  X("aten.lift_fresh.default", "aten.alias.default", 0, false, 0) \
  X("aten.lift_fresh_copy.default", "aten.clone.default", 0, false, 0) \
  X("aten._lazy_clone.default", "aten.clone.default", 0, false, 0) \
  /* splits and joins */ \
  X("aten.split.default", "aten.split_with_sizes.default", 0, false, 0, 1, 2) \
  X("aten.split.sizes", "aten.split_with_sizes.default", 0, false, 0, 1, 2) \
  X("aten.split_copy.Tensor", "aten.split.Tensor", 0, false, 0, 1, 2) \
  X("aten.unsafe_chunk.default", "aten.chunk.default", 0, false, 0, 1, 2) \
  X("aten.unsafe_split_with_sizes.default", "aten.split_with_sizes.default", 0, false, 0, 1, 2) \
  X("aten.concat.default", "aten.cat.default", 0, false, 0, 1) \
  X("aten.concatenate.default", "aten.cat.default", 0, false, 0, 1) \
  X("aten._stack.default", "aten.stack.default", 0, false, 0, 1) \
  X("aten.row_stack.default", "aten.vstack.default", 0, false, 0) \
  X("aten.ger.default", "aten.outer.default", 0, false, 0, 1) \
  /* reductions and sorts */ \
  X("aten.special_logsumexp.default", "aten.logsumexp.default", 0, false, 0, 1, 2) \
  X("aten._logcumsumexp.default", "aten.logcumsumexp.default", 0, false, 0, 1) \
  X("aten._aminmax.default", "aten.aminmax.default", 0, false, 0) \
  X("aten._aminmax.dim", "aten.aminmax.default", 0, false, 0, 1, 2) \
  X("aten.norm.Scalar", "aten.linalg_vector_norm.default", 0, false, 0, 1) \
  X("aten.argsort.default", "aten.sort.default", 1, false, 0, 1, 2) \
  X("aten.argsort.stable", "aten.sort.stable", 1, false, 0, 1, 2, 3) \
  X("aten.msort.default", "aten.sort.default", 0, false, 0, ALIAS_ZERO, ALIAS_FALSE) \
  /* factories */ \
  X("aten.arange.start", "aten.arange.start_step", 0, false, 0, 1, ALIAS_ONE, 2, 3, 4, 5) \
  X("aten.new_empty.default", "aten.new_zeros.default", 0, false, 0, 1, 2, 3, 4, 5) \
  X("aten.empty_like.default", "aten.zeros_like.default", 0, false, 0, 1, 2, 3, 4, 5) \
  X("aten._efficientzerotensor.default", "aten.zeros.default", 0, false, 0, 1, 2, 3, 4) \
  X("aten.new_empty_strided.default", "aten.new_zeros.default", 0, false, 0, 1, 3, 4, 5, 6) \
  /* dtype conversions */ \
  X("aten.cpu.default", "aten.alias.default", 0, false, 0) \
  X("aten.data.default", "aten.alias.default", 0, false, 0) \
  X("aten._cast_Byte.default", "aten._to_copy.default", 0, false, 0, ALIAS_DTYPE(ALLOY_U8)) \
  X("aten._cast_Char.default", "aten._to_copy.default", 0, false, 0, ALIAS_DTYPE(ALLOY_I8)) \
  X("aten._cast_Short.default", "aten._to_copy.default", 0, false, 0, ALIAS_DTYPE(ALLOY_I16)) \
  X("aten._cast_Int.default", "aten._to_copy.default", 0, false, 0, ALIAS_DTYPE(ALLOY_I32)) \
  X("aten._cast_Long.default", "aten._to_copy.default", 0, false, 0, ALIAS_DTYPE(ALLOY_I64)) \
  X("aten._cast_Half.default", "aten._to_copy.default", 0, false, 0, ALIAS_DTYPE(ALLOY_F16)) \
  X("aten._cast_Float.default", "aten._to_copy.default", 0, false, 0, ALIAS_DTYPE(ALLOY_F32)) \
  X("aten._cast_Double.default", "aten._to_copy.default", 0, false, 0, ALIAS_DTYPE(ALLOY_F64)) \
  /* indexing */ \
  X("aten._unsafe_index.Tensor", "aten.index.Tensor", 0, false, 0, 1) \
  X("aten._unsafe_index.Tensor_hacked_twin", "aten.index.Tensor", 0, false, 0, 1) \
  X("aten.index.Tensor_hacked_twin", "aten.index.Tensor", 0, false, 0, 1) \
  X("aten._unsafe_index_put.default", "aten.index_put.default", 0, false, 0, 1, 2, 3) \
  X("aten._unsafe_index_put.hacked_twin", "aten.index_put.default", 0, false, 0, 1, 2, 3) \
  X("aten.index_put.hacked_twin", "aten.index_put.default", 0, false, 0, 1, 2, 3) \
  X("aten._index_put_impl.default", "aten.index_put.default", 0, false, 0, 1, 2, 3) \
  /* metadata and scalars */ \
  X("aten.item.default", "aten._local_scalar_dense.default", 0, false, 0) \
  X("aten.numel.default", "aten.sym_numel.default", 0, false, 0) \
  X("aten.size.int", "aten.sym_size.int", 0, false, 0, 1) \
  X("aten.stride.int", "aten.sym_stride.int", 0, false, 0, 1) \
  X("aten.storage_offset.default", "aten.sym_storage_offset.default", 0, false, 0) \
  X("aten.is_contiguous.default", "aten.sym_is_contiguous.default", 0, false, 0) \

/* The row for op (its full name), or NULL. */
const meta_alias *meta_alias_find(const char *op);

/* Argument j of the row's target, taken from the op's arguments src. */
alloy_arg meta_alias_arg(const meta_alias *a, int j, const alloy_arg *src);

/* Runs the shape function of op `name` on args (n of them; the rest take
 * the schema's defaults) into *out, whose outs the caller frees. */
alloy_error *meta_run_op(alloy_meta *m, const char *name, const alloy_arg *args, int n,
                         alloy_meta *out);

/* Runs the shape function of op `name` on args (n of them; the rest take
 * the schema's defaults) and makes its outputs, from output `first` on,
 * m's outputs: as many as m's op returns, or all of them for a Tensor[]
 * return. Errors are the other op's, which PyTorch would also raise, since
 * its composite calls that op. */
alloy_error *meta_as_op(alloy_meta *m, const char *name, const alloy_arg *args, int n, int first);

#endif
