/*
 * tests/testsym.h: helpers of the symbolic-dim tests (test_sym.c,
 * test_sympy.c): dims from Alloy's own text and back to text.
 */
#ifndef ALLOY_TEST_SYM_H
#define ALLOY_TEST_SYM_H

#include "alloy/sym.h"

/* Parses the whole text; a failure is reported and gives the constant -999. */
alloy_dim tsym_parse(alloy_symtab *st, const char *text, const char *file, int line);
/* Prints into one of a few rotating buffers so that two can share a CHECK. */
const char *tsym_text(alloy_dim d);

#define P(st, text) tsym_parse((st), (text), __FILE__, __LINE__)
#define S(d) tsym_text(d)

#endif
