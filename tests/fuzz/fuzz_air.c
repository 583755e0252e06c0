/*
 * tests/fuzz/fuzz_air.c: libFuzzer target for the .air reader and printer
 * (ir/air.c), built and run by `make fuzz`.
 *
 * Any bytes must either parse or fail with an error, without a crash, a
 * sanitizer report or a leak. Text that parses must print, and what it
 * prints is the canonical form: it must parse again and print to the very
 * same bytes, or the round-trip promise of docs/air.md is broken and the
 * target aborts so that libFuzzer keeps the input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/graph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  alloy_graph *g = NULL, *g2 = NULL;
  char *first = NULL, *second = NULL;
  alloy_error *e = alloy_air_parse((const char *)data, size, "fuzz.air", &g);
  if (e) {
    /* Every failure must say where: "fuzz.air:<line>:<column>: ..." or come
     * from outside the text (out of memory). */
    if (alloy_error_code_of(e) != ALLOY_ERR_OUT_OF_MEMORY &&
        strncmp(alloy_error_message(e), "fuzz.air:", 9) != 0) {
      fprintf(stderr, "error without a position: %s\n", alloy_error_message(e));
      abort();
    }
    alloy_error_free(e);
    return 0;
  }
  if ((e = alloy_air_print(g, &first))) {
    fprintf(stderr, "parsed but does not print: %s\n", alloy_error_message(e));
    abort();
  }
  if ((e = alloy_air_parse(first, strlen(first), "printed.air", &g2))) {
    fprintf(stderr, "printed text does not parse: %s\n--- printed:\n%s",
            alloy_error_message(e), first);
    abort();
  }
  if ((e = alloy_air_print(g2, &second))) {
    fprintf(stderr, "re-parsed graph does not print: %s\n", alloy_error_message(e));
    abort();
  }
  if (strcmp(first, second) != 0) {
    fprintf(stderr, "round trip differs\n--- first print:\n%s--- second print:\n%s",
            first, second);
    abort();
  }
  free(first);
  free(second);
  alloy_graph_free(g);
  alloy_graph_free(g2);
  return 0;
}
