/*
 * tests/fuzz/fuzz_sympy.c: libFuzzer target for the sympy srepr reader
 * (ir/sympy.c), built and run by `make fuzz`.
 *
 * Any bytes must either parse or fail with an error that names a column
 * within the text, without a crash, a sanitizer report, a leak or a sticky
 * error left in the table. What parses is a canonical dim, and alloy/sym.h
 * promises that its printed form parses back to the very same dim: the
 * target checks that too, so that the reader never builds a dim the rest of
 * Alloy cannot carry through a .air file.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/sym.h"
#include "ir/sympy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  alloy_symtab *st = alloy_symtab_new();
  alloy_dim s0, u0, d;
  if (!st || alloy_sym_new(st, "s0", 1, 64, &s0) ||
      alloy_sym_new_unbacked(st, "u0", 0, ALLOY_SYM_INF, &u0))
    abort(); /* a fresh table takes two symbols */
  alloy_error *e = alloy_sympy_parse(st, (const char *)data, size, &d);
  if (alloy_symtab_error(st)) {
    fprintf(stderr, "sticky error left in the table: %s\n", alloy_symtab_error(st));
    abort();
  }
  if (e) {
    const char *msg = alloy_error_message(e);
    unsigned long col = 0;
    if (alloy_error_code_of(e) != ALLOY_ERR_OUT_OF_MEMORY &&
        (sscanf(msg, "column %lu: ", &col) != 1 || col < 1 || col > size + 1)) {
      fprintf(stderr, "error without a column in the text: %s\n", msg);
      abort();
    }
    alloy_error_free(e);
    alloy_symtab_free(st);
    return 0;
  }
  size_t need = alloy_dim_print(d, NULL, 0) + 1;
  char *text = malloc(need);
  if (!text) abort();
  alloy_dim_print(d, text, need);
  alloy_dim back;
  if ((e = alloy_dim_parse(st, text, strlen(text), &back, NULL))) {
    fprintf(stderr, "printed dim does not parse: %s\n--- printed: %s\n", alloy_error_message(e),
            text);
    abort();
  }
  if (!alloy_dim_same(d, back)) {
    fprintf(stderr, "printed dim parses to another dim: %s\n", text);
    abort();
  }
  free(text);
  alloy_symtab_free(st);
  return 0;
}
