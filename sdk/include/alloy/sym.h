/*
 * alloy/sym.h: symbolic dimensions.
 *
 * A dimension is either a concrete integer or an expression over named
 * integer symbols, each with a range [lo, hi]. Expressions are kept in one
 * canonical form (a sum of integer multiples of products of atoms, where an
 * atom is a symbol or a floor division, modulo, min or max that could not be
 * simplified away) and hash-consed in the symbol table that made them, so dims
 * that simplify to one form are one pointer: 2*s0 and s0+s0 are the same dim,
 * and so are (s0*12)//12 and s0. The form is not complete: an identity such
 * as 2*(s0//2) + s0%2 == s0 is true but not recognised, so alloy_dim_same()
 * returning false means "not proved equal", not "different".
 *
 * Ownership: an alloy_symtab owns every symbol and expression made through
 * it; an alloy_dim holding an expression is valid while its table lives.
 * Dims of different tables must not be mixed (alloy_dim_import copies one
 * across). A table is not thread-safe: one thread at a time may use it.
 *
 * Errors: arithmetic never fails for concrete dims that fit in int64. When an
 * operation cannot be represented (int64 overflow, an expression larger than
 * ALLOY_SYM_MAX_TERMS terms, division by zero) the table records a sticky
 * error, the result is the concrete dim 0, and alloy_symtab_error() reports it
 * until alloy_symtab_clear_error().
 */
#ifndef ALLOY_SYM_H
#define ALLOY_SYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloy/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ALLOY_SYM_INF INT64_MAX  /* an unbounded upper end of a range */
#define ALLOY_SYM_MAX_TERMS 256  /* largest sum or product kept */

typedef struct alloy_symtab alloy_symtab;
typedef struct alloy_expr alloy_expr; /* opaque, interned in its symtab */

/* A dimension: concrete when expr is NULL (the value is in value), else the
 * expression expr (value is then unused and 0). Plain value type. */
typedef struct alloy_dim {
  const alloy_expr *expr;
  int64_t value;
} alloy_dim;

static inline alloy_dim alloy_dim_const(int64_t v) {
  alloy_dim d = {NULL, v};
  return d;
}
static inline bool alloy_dim_is_const(alloy_dim d) { return d.expr == NULL; }

alloy_symtab *alloy_symtab_new(void);
void alloy_symtab_free(alloy_symtab *st); /* accepts NULL */

/* Creates the symbol `name` (copied) with range [lo, hi] (hi may be
 * ALLOY_SYM_INF). A name already in the table returns its symbol when the
 * range is the same, else an error. Returns the dim through *out. */
alloy_error *alloy_sym_new(alloy_symtab *st, const char *name, int64_t lo,
                           int64_t hi, alloy_dim *out);
/* Creates a fresh unbacked symbol ("u0", "u1", ...) for a size that depends
 * on data, with range [lo, hi]. */
alloy_dim alloy_sym_unbacked(alloy_symtab *st, int64_t lo, int64_t hi);
/* Like alloy_sym_new, for a data-dependent size with a chosen name (a shape
 * function names its sizes so that re-running it gives the same ones). An
 * existing unbacked symbol of that name and range is returned; a backed one
 * is an error. */
alloy_error *alloy_sym_new_unbacked(alloy_symtab *st, const char *name,
                                    int64_t lo, int64_t hi, alloy_dim *out);
/* Looks a symbol up by name; false when absent. */
bool alloy_sym_find(const alloy_symtab *st, const char *name, size_t len,
                    alloy_dim *out);
/* Symbols are numbered 0.. in creation order. */
int alloy_symtab_count(const alloy_symtab *st);
const char *alloy_symtab_name(const alloy_symtab *st, int index);
void alloy_symtab_range(const alloy_symtab *st, int index, int64_t *lo,
                        int64_t *hi);
bool alloy_symtab_is_unbacked(const alloy_symtab *st, int index);
alloy_dim alloy_symtab_symbol(const alloy_symtab *st, int index);

/* Arithmetic. Results are canonical. floordiv and mod follow Python (floor
 * division, remainder has the divisor's sign). */
alloy_dim alloy_dim_add(alloy_symtab *st, alloy_dim a, alloy_dim b);
alloy_dim alloy_dim_sub(alloy_symtab *st, alloy_dim a, alloy_dim b);
alloy_dim alloy_dim_mul(alloy_symtab *st, alloy_dim a, alloy_dim b);
alloy_dim alloy_dim_floordiv(alloy_symtab *st, alloy_dim a, alloy_dim b);
alloy_dim alloy_dim_mod(alloy_symtab *st, alloy_dim a, alloy_dim b);
alloy_dim alloy_dim_min(alloy_symtab *st, alloy_dim a, alloy_dim b);
alloy_dim alloy_dim_max(alloy_symtab *st, alloy_dim a, alloy_dim b);
/* ceil(a / b) for b > 0, as -((-a) // b). */
alloy_dim alloy_dim_ceildiv(alloy_symtab *st, alloy_dim a, alloy_dim b);

const char *alloy_symtab_error(const alloy_symtab *st); /* NULL when none */
void alloy_symtab_clear_error(alloy_symtab *st);

/* Structural identity of canonical forms: true means equal for every binding. */
bool alloy_dim_same(alloy_dim a, alloy_dim b);

/* What the ranges can prove about a relation. */
typedef enum alloy_truth {
  ALLOY_FALSE = 0,
  ALLOY_TRUE = 1,
  ALLOY_UNKNOWN = 2
} alloy_truth;
alloy_truth alloy_dim_eq(alloy_symtab *st, alloy_dim a, alloy_dim b);
alloy_truth alloy_dim_lt(alloy_symtab *st, alloy_dim a, alloy_dim b);
alloy_truth alloy_dim_le(alloy_symtab *st, alloy_dim a, alloy_dim b);
/* The range interval arithmetic gives the dim (hi may be ALLOY_SYM_INF and
 * lo may be INT64_MIN for "unbounded"). */
void alloy_dim_range(alloy_dim d, int64_t *lo, int64_t *hi);

/* Broadcasts two sizes as PyTorch does: 1 gives the other, equal sizes give
 * themselves. A pair that cannot be proved broadcastable (s0 against s1, or
 * 3 against 4) is an error naming both. */
alloy_error *alloy_dim_broadcast(alloy_symtab *st, alloy_dim a, alloy_dim b,
                                 alloy_dim *out);

/* Evaluates d with symbol i bound to values[i] (nvalues entries; bound[i]
 * false or i >= nvalues means unbound). Unbound symbols and division by zero
 * are errors that name the symbol or the expression. */
alloy_error *alloy_dim_eval(const alloy_symtab *st, alloy_dim d,
                            const int64_t *values, const bool *bound,
                            int nvalues, int64_t *out);

/* Copies d, made in another table, into st, creating missing symbols with
 * their ranges. Fails only when a symbol of that name has a different range. */
alloy_error *alloy_dim_import(alloy_symtab *st, const alloy_symtab *from,
                              alloy_dim d, alloy_dim *out);

/* Writes d as text ("2*s0 + 1", "(s0 + 1)//2", "min(s0, 4)") to buf, always
 * NUL-terminated; returns the length the full text needs, like snprintf. The
 * text parses back with alloy_dim_parse to the same dim. */
size_t alloy_dim_print(alloy_dim d, char *buf, size_t cap);

/* Parses an integer expression over symbols already in st: integers, symbol
 * names, + - * // % (Python precedence), unary minus, parentheses, min(a, b)
 * and max(a, b). Reads from text[0..len); on success *used is the number of
 * characters consumed (parsing stops before the first character that cannot
 * continue the expression). Errors name the column (0-based offset). */
alloy_error *alloy_dim_parse(alloy_symtab *st, const char *text, size_t len,
                             alloy_dim *out, size_t *used);

#ifdef __cplusplus
}
#endif
#endif
