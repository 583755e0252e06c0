/*
 * tests/testsym.c: see testsym.h.
 */
#include "tests/testsym.h"

#include <string.h>

#include "tests/harness.h"

alloy_dim tsym_parse(alloy_symtab *st, const char *text, const char *file, int line) {
  alloy_dim d = alloy_dim_const(-999);
  alloy_error *e = alloy_dim_parse(st, text, strlen(text), &d, NULL);
  if (e) {
    harness_fail(file, line, "parse \"%s\": %s", text, alloy_error_message(e));
    alloy_error_free(e);
  }
  return d;
}

const char *tsym_text(alloy_dim d) {
  static char bufs[4][512];
  static int next;
  char *b = bufs[next++ % 4];
  alloy_dim_print(d, b, 512);
  return b;
}
