/*
 * tests/fuzz/fuzz_pt2.c: libFuzzer target for the torch.export importer as
 * a whole: the bytes are a .pt2 archive in memory (ir/pt2_archive.c opens
 * it with libzip, reads the weight configs and maps the weights, then
 * ir/pt2_graph.c builds the graph). Built and run by `make fuzz`.
 *
 * Any bytes must load or fail with an error that names the archive, without
 * a crash, a sanitizer report or a leak. A model that loads must verify and
 * print as .air: the importer built it with the graph builder, so a graph
 * that does not check is an importer bug.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/graph.h"
#include "ir/model_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  alloy_model *m = NULL;
  alloy_error *e = alloy_model_load_pt2_memory(data, size, "fuzz.pt2", &m);
  if (e) {
    if (alloy_error_code_of(e) != ALLOY_ERR_OUT_OF_MEMORY &&
        strncmp(alloy_error_message(e), "fuzz.pt2", 8) != 0) {
      fprintf(stderr, "error without the archive's name: %s\n", alloy_error_message(e));
      abort();
    }
    alloy_error_free(e);
    return 0;
  }
  char *text = NULL;
  if ((e = alloy_graph_verify(alloy_model_graph(m))) ||
      (e = alloy_air_print(alloy_model_graph(m), &text))) {
    fprintf(stderr, "an imported graph fails: %s\n", alloy_error_message(e));
    abort();
  }
  free(text);
  alloy_model_free(m);
  return 0;
}
