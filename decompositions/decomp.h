/*
 * decompositions/decomp.h: how a decomposition rule is written, and the
 * pass that applies the rules (decompositions/decompose.c).
 *
 * A rule replaces one node by a few simpler ones. It reads the node's
 * arguments, builds the replacement with the graph builder through D()
 * (arguments in schema order, defaults filled in), and names the value that
 * stands for each of the node's outputs with d_out(). It reads like the
 * math:
 *
 *   // silu(x) = x * sigmoid(x)
 *   static void silu(decomp *d) {
 *     alloy_value *x = d_tensor(d, 0);
 *     d_out(d, 0, D(d, "aten.mul.Tensor", V(x), V(D(d, "aten.sigmoid.default", V(x)))));
 *   }
 *
 * Errors are sticky: a failing D() records the error in d and returns NULL,
 * every later call does nothing, and the pass reports the first error with
 * the node and op. A rule that does not apply to this node (an argument
 * combination it does not handle) calls d_decline() with the reason, and
 * the node stays as it is. Symbolic sizes stay symbolic: read shapes with
 * d_shape() and compute on them with alloy/sym.h in d_symtab(d).
 *
 * Rules are listed in tables of decomp_rule, one per file of
 * decompositions/ (rules_*.c to Core ATen, prims_*.c from Core ATen to
 * prims), ending with a row whose op is NULL; decompose.c joins them.
 */
#ifndef ALLOY_DECOMP_H
#define ALLOY_DECOMP_H

#include <stdbool.h>
#include <stdint.h>

#include "alloy/graph.h"
#include "alloy/ops.h"

typedef struct decomp decomp;
typedef void (*decomp_fn)(decomp *d);

/* What a rule reaches: Core ATen (from an ATen-level op) or prims (from a
 * core op). */
typedef enum decomp_level { DECOMP_TO_CORE = 1, DECOMP_TO_PRIMS = 2 } decomp_level;

typedef struct decomp_rule {
  const char *op;     /* "aten.silu.default"                             */
  decomp_fn fn;
  decomp_level level;
} decomp_rule;

/* --- the node being replaced ----------------------------------------------
 * Arguments by schema position; values already belong to the graph being
 * built. The readers record an error (naming the argument) when the
 * argument is not of the kind asked for. */
const alloy_node *d_node(const decomp *d);
const alloy_arg *d_arg(decomp *d, int i);
bool d_is_none(decomp *d, int i);
alloy_value *d_tensor(decomp *d, int i);       /* NULL when None            */
int d_tensor_count(decomp *d, int i);          /* Tensor[]                  */
alloy_value *d_tensor_at(decomp *d, int i, int k);
int64_t d_int(decomp *d, int i);               /* concrete int              */
alloy_dim d_dim(decomp *d, int i);             /* int / SymInt, maybe symbolic */
/* int[] / SymInt[]: up to cap items into out; returns the count (-1 None). */
int d_dims(decomp *d, int i, alloy_dim *out, int cap);
int d_ints(decomp *d, int i, int64_t *out, int cap);
double d_float(decomp *d, int i);              /* float, int or bool        */
bool d_bool(decomp *d, int i);
alloy_dtype d_dtype_or(decomp *d, int i, alloy_dtype dflt); /* ScalarType? */
const char *d_str(decomp *d, int i);           /* NULL when None            */

/* --- dtypes ------------------------------------------------------------------
 * PyTorch computes float16 and bfloat16 in float32 ("opmath") and rounds
 * once; rules that decompose such ops convert up, compute and convert back. */
alloy_dtype d_out_dtype(decomp *d, int k);     /* the node's output k        */
alloy_dtype d_opmath(alloy_dtype t);          /* f16, bf16 -> f32; else t   */
/* x converted to t (aten._to_copy), or x itself when it already is t. */
alloy_value *d_to(decomp *d, alloy_value *x, alloy_dtype t);

/* --- values ----------------------------------------------------------------*/
alloy_dtype d_dtype(const alloy_value *v);
int d_rank(const alloy_value *v);
const alloy_dim *d_shape(const alloy_value *v);
/* True when one of v's sizes is known to be 0 (v has no elements): rules
 * that take a max (amax refuses an empty reduced dim) skip it then, as
 * PyTorch's refs do when numel() == 0. */
bool d_known_empty(const alloy_value *v);
alloy_symtab *d_symtab(decomp *d);
/* A dim wrapped into [0, rank) like PyTorch's maybe_wrap_dim (records an
 * error when out of range). */
int d_wrap_dim(decomp *d, int64_t dim, int rank);

/* --- building ----------------------------------------------------------------
 * D(d, "aten.add.Tensor", V(x), V(y)): applies the op to the arguments given
 * in schema order (keyword-only ones included, by position; trailing ones
 * left out take their defaults) and returns its first output (NULL after an
 * error). DN() also gives every output. */
alloy_value *d_op(decomp *d, const char *op, const alloy_arg *args, int nargs);
int d_op_n(decomp *d, const char *op, const alloy_arg *args, int nargs, alloy_value **outs,
           int cap);
#define D_ARGS(...) ((const alloy_arg[]){__VA_ARGS__}), \
  (int)(sizeof((const alloy_arg[]){__VA_ARGS__}) / sizeof(alloy_arg))
#define D(d, op, ...) d_op((d), (op), D_ARGS(__VA_ARGS__))
#define D0(d, op) d_op((d), (op), NULL, 0)
#define DN(d, op, outs, cap, ...) d_op_n((d), (op), D_ARGS(__VA_ARGS__), (outs), (cap))

/* Argument constructors (values, not allocations). */
#define V(v) alloy_arg_value(v)
#define I(n) alloy_arg_int((int64_t)(n))
#define SYM(dim) alloy_arg_dim(dim)
#define F(x) alloy_arg_float((double)(x))
#define B(b) alloy_arg_bool(b)
#define S(s) alloy_arg_str(s)
#define DT(t) alloy_arg_dtype(t)
#define NONE alloy_arg_none()
#define LIST(...) alloy_arg_list(D_ARGS(__VA_ARGS__))
#define EMPTY_LIST alloy_arg_list(NULL, 0)
/* A list argument from an array of n dims (copied by the builder). */
alloy_arg d_dim_list(decomp *d, const alloy_dim *dims, int n);
alloy_arg d_int_list(decomp *d, const int64_t *v, int n);
alloy_arg d_value_list(decomp *d, alloy_value *const *v, int n);

/* --- results -----------------------------------------------------------------*/
/* v stands for output k of the node from now on. Every output must be set
 * (an output nothing uses may be left unset only when the rule says so with
 * d_out_unused). v must have the output's dtype and shape; d_out converts
 * nothing. */
void d_out(decomp *d, int k, alloy_value *v);
void d_out_unused(decomp *d, int k);
/* The rule does not apply here; the node stays. reason is copied. */
void d_decline(decomp *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Records an error (the first one wins); returns NULL for convenience. */
void *d_fail(decomp *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool d_failed(const decomp *d);

/* --- the pass ----------------------------------------------------------------*/

/* Which nodes stay. Before each round the pass calls round_begin (may be
 * NULL) with the graph it is about to rewrite, so that the caller can ask
 * backends to claim its nodes; accept(g, i) true leaves node i of that
 * graph as it is. */
typedef struct decomp_options {
  alloy_error *(*round_begin)(const alloy_graph *g, void *ctx);
  bool (*accept)(const alloy_graph *g, int node_index, void *ctx);
  void *ctx;
  const decomp_rule *rules; /* NULL: Alloy's tables; else only these (tests) */
} decomp_options;

typedef struct decomp_stats {
  int rounds;        /* passes over the graph until nothing changed       */
  int decomposed;    /* nodes replaced                                     */
  int declined;      /* nodes left because their rule declined or none exists */
} decomp_stats;

/* Rewrites g into *out, replacing every node accept() refuses by its rule,
 * round after round until every node is accepted or has no rule that
 * applies; a rule whose output contains an op it is itself a decomposition
 * of is a cycle and stops there. stats may be NULL. Nodes nothing can
 * replace are left: the caller decides whether that is an error (the first
 * one is described in *why when why is not NULL, malloc'd, else NULL). */
alloy_error *alloy_decompose(const alloy_graph *g, const decomp_options *opts, alloy_graph **out,
                             decomp_stats *stats, char **why);

/* The rule for op at a level (DECOMP_TO_CORE or DECOMP_TO_PRIMS), or NULL. */
const decomp_rule *decomp_find(const char *op, decomp_level level);
/* Every rule, for coverage reports: the count, and rule i. */
int decomp_rule_count(void);
const decomp_rule *decomp_rule_at(int i);

/* Accept functions for the forced levels (ctx unused): core keeps core ops,
 * prims and the scalar ops on SymInts; prims keeps prims and the scalar ops.
 * An op that has no rule to go further stays wherever it is. */
bool decomp_accept_core(const alloy_graph *g, int node_index, void *ctx);
bool decomp_accept_prims(const alloy_graph *g, int node_index, void *ctx);

#endif
