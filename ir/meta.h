/*
 * ir/meta.h: the interface of shape functions ("meta functions", after
 * PyTorch's meta device): given a node's normalized arguments, compute the
 * kind, dtype and (symbolic) shape of each output, without data.
 *
 * A shape function is `alloy_error *fn(alloy_meta *m)`. Arguments are read by
 * schema position through the meta_* helpers below, which also check the
 * argument's kind (a shape function may trust what the schema promises: a
 * Tensor argument is a tensor value, an int[] is a list of ints). Outputs are
 * written with meta_out_*; the op's schema fixes their number, except for a
 * Tensor[] return, whose length the function sets with meta_set_num_outputs.
 * Errors come from meta_error(), which prefixes nothing: the caller adds the
 * node and op. Sizes that depend on data are fresh unbacked symbols
 * (meta_unbacked).
 *
 * Shape functions are registered in the tables at the end of each
 * ir/meta_*.c file: one row per op, naming the function and a family
 * parameter (a promotion kind, a reduction kind, ...) read from m->param.
 */
#ifndef ALLOY_META_H
#define ALLOY_META_H

#include <stdarg.h>

#include "ir/ir.h"
#include "ir/promote.h"

typedef struct alloy_meta_out {
  alloy_value_kind kind;
  alloy_dtype dtype;
  int32_t rank;
  alloy_dim shape[ALLOY_MAX_RANK];
  alloy_dim int_value; /* ALLOY_VALUE_INT outputs */
} alloy_meta_out;

struct alloy_meta {
  const alloy_op *op;
  int param;           /* the table's family parameter for this op */
  alloy_symtab *st;    /* the graph's symbols */
  const alloy_arg *args; /* op->schema->nargs entries */
  int nargs;
  alloy_meta_out *outs;
  int nout, cap_out;
  int unbacked_next; /* number of the next "u<N>" symbol meta_unbacked makes */
  const char *node_name; /* the node's name for messages, or NULL */
};

/* --- errors --------------------------------------------------------------*/
alloy_error *meta_error(alloy_meta *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Checks the symtab's sticky error after symbolic arithmetic. */
alloy_error *meta_sym_check(alloy_meta *m);

/* --- arguments (i = schema position) -------------------------------------*/
const char *meta_arg_name(const alloy_meta *m, int i);
bool meta_is_none(const alloy_meta *m, int i);
/* NULL when number argument i converts to dtype t as PyTorch's
 * Scalar::to<T> does (c10::checked_convert), else its overflow error naming
 * the argument: a float must be finite within t's range, or infinite for a
 * floating t (NaN passes); an integer t refuses a fraction outside it, NaN
 * and infinities; an int must lie in t's range, where uint8 takes
 * -255..255 (a negative one wraps). Tensors, symbols and bool/complex t
 * always pass. */
alloy_error *meta_check_scalar_fits(alloy_meta *m, int i, alloy_dtype t);
/* The tensor argument i, or NULL when it is None. A Python number given
 * for a Tensor argument (a wrapped number) reads as a zero-dim int64,
 * float64 or bool tensor; use meta_promo_operand for its promotion. */
const alloy_value *meta_tensor(const alloy_meta *m, int i);
/* Tensor[] / Tensor?[]: number of items, and item k (NULL for None). */
int meta_tensor_count(const alloy_meta *m, int i);
const alloy_value *meta_tensor_at(const alloy_meta *m, int i, int k);
/* int / SymInt (literal, symbolic, or a SymInt value). */
alloy_dim meta_dim(const alloy_meta *m, int i);
/* A concrete int; fails (with an error naming the argument) when symbolic. */
alloy_error *meta_int(alloy_meta *m, int i, int64_t *out);
/* int[] / SymInt[]: copies up to cap items into out (cap >= ALLOY_MAX_RANK
 * is enough for any shape); returns the count through *n. A single int
 * given for int[N] is repeated N times, as PyTorch does. */
alloy_error *meta_dims(alloy_meta *m, int i, alloy_dim *out, int cap, int *n);
/* int[] whose items must be concrete. */
alloy_error *meta_ints(alloy_meta *m, int i, int64_t *out, int cap, int *n);
double meta_float(const alloy_meta *m, int i); /* float or int arg */
bool meta_bool(const alloy_meta *m, int i);
/* ScalarType? argument: its dtype, or dflt when None. */
alloy_dtype meta_dtype_or(const alloy_meta *m, int i, alloy_dtype dflt);
const char *meta_str(const alloy_meta *m, int i); /* NULL when None */

/* The promotion operand of argument i: a tensor (dimensioned or zero-dim),
 * a Python scalar (int, float, bool) or a SymInt value. */
alloy_promo_operand meta_promo_operand(const alloy_meta *m, int i);

/* --- dims -----------------------------------------------------------------*/
/* Writes a shape as PyTorch prints one ("[s0, 3]") into buf; returns buf. */
const char *meta_shape_text(const alloy_dim *shape, int rank, char *buf,
                            size_t cap);
/* Wraps a possibly negative dim into [0, rank) (rank 0 accepts -1 and 0, as
 * PyTorch does); the error names the argument and the valid range. */
alloy_error *meta_wrap_dim(alloy_meta *m, int i, int64_t dim, int rank,
                           int *out);
/* Broadcasts shapes a (ra dims) and b (rb dims) into out (rank *rout). */
alloy_error *meta_broadcast(alloy_meta *m, const alloy_dim *a, int ra,
                            const alloy_dim *b, int rb, alloy_dim *out,
                            int *rout);
/* Number of elements of a shape. */
alloy_dim meta_numel(alloy_meta *m, const alloy_dim *shape, int rank);
/* A fresh data-dependent size. */
alloy_dim meta_unbacked(alloy_meta *m);

/* --- outputs --------------------------------------------------------------*/
/* At most META_MAX_OUTPUTS: a split into more pieces is refused (each
 * output is a value of the graph). */
#define META_MAX_OUTPUTS (1 << 16)
alloy_error *meta_set_num_outputs(alloy_meta *m, int64_t n);
/* Output k is a tensor of dtype with the given shape (copied). */
alloy_error *meta_out_tensor(alloy_meta *m, int k, alloy_dtype dtype,
                             const alloy_dim *shape, int rank);
/* Output k has the type of tensor v, with dtype replaced. */
alloy_error *meta_out_like(alloy_meta *m, int k, const alloy_value *v,
                           alloy_dtype dtype);
alloy_error *meta_out_scalar(alloy_meta *m, int k, alloy_value_kind kind,
                             alloy_dim int_value);

/* Whether a tensor of this type fits the ceiling of ir/checked.h
 * (ALLOY_MAX_TENSOR_BYTES, every dim counted as at least 1; with strides,
 * the storage they reach too) and has no negative size. A symbolic size
 * counts as the low end of its range. When it does not, says why in
 * why[cap] ("it spans N bytes, and a tensor may span at most 2^62"). */
bool alloy_type_fits(alloy_dtype dtype, const alloy_dim *shape, const alloy_dim *strides, int rank,
                     char *why, size_t cap);

/* The storage an as_strided window (size, stride, storage offset, in
 * elements of dtype) reaches fits the same ceiling; else a type error. */
alloy_error *meta_check_window(alloy_meta *m, alloy_dtype dtype, const alloy_dim *size,
                               const alloy_dim *stride, int rank, alloy_dim offset);

/* Runs op's shape function on normalized args; on success the caller owns
 * m->outs (free()). Every tensor output is checked with alloy_type_fits: one
 * too large is a type error naming the op, the output and (m->node_name)
 * the node. Used by the graph builder and the verifier. */
alloy_error *alloy_meta_run(const alloy_op *op, alloy_symtab *st,
                            const alloy_arg *args, alloy_meta *m);

#endif
