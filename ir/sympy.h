/*
 * ir/sympy.h: reading the sympy expressions that torch.export writes for
 * symbolic sizes.
 *
 * A .pt2 file spells each symbolic size as the `srepr` of a sympy
 * expression, e.g. "Mul(Integer(16), Symbol('s77', positive=True,
 * integer=True))". This reads that text into an alloy_dim of the symbol
 * table, through the arithmetic of alloy/sym.h so that the result is in its
 * canonical form. Internal to the library: the importer is its only user.
 */
#ifndef ALLOY_SYMPY_H
#define ALLOY_SYMPY_H

#include <stddef.h>

#include "alloy/error.h"
#include "alloy/sym.h"

/* Parses text[0..len) (no NUL needed; nothing past len is read) into *out.
 *
 * Accepted: Integer(n); Rational(p, q) where q divides p; Symbol('name',
 * assumption=True|False, ...) with integer=True among the assumptions; Add,
 * Mul, Max and Min of one or more arguments; Pow(base, k) for a constant
 * k >= 0; FloorDiv and CleanDiv (floor division), Mod and PythonMod (Python's
 * modulo), and ModularIndexing(x, d, m) = (x // d) % m.
 *
 * A symbol already in st is used as it is, whatever its assumptions say; a
 * new one is created: a name u<digits> as an unbacked symbol in [0, inf],
 * others in [1, inf] with positive=True, [0, inf] with nonnegative=True and
 * unbounded otherwise. Symbols created before an error stay in st.
 *
 * Errors read "column N: ..." with N the 1-based byte offset into text; the
 * caller adds which entry the text came from. Malformed text is
 * ALLOY_ERR_PARSE; well-formed sympy that Alloy cannot represent (an unknown
 * function, a Float, a non-integer symbol or result, an int64 overflow) is
 * ALLOY_ERR_UNSUPPORTED. A table that already holds a sticky arithmetic
 * error is refused (ALLOY_ERR_INVALID_ARGUMENT): its error would be
 * mistaken for one of this text's. Not thread-safe, like the table. */
alloy_error *alloy_sympy_parse(alloy_symtab *st, const char *text, size_t len,
                               alloy_dim *out);

#endif
