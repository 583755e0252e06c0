/*
 * tests/fuzz/fuzz_pt2_json.c: libFuzzer target for the JSON-to-IR mapping
 * of the torch.export importer (ir/pt2_graph.c): the bytes are
 * models/model.json itself, so the fuzzer spends its time on graph
 * signatures, nodes, arguments and sympy sizes rather than on ZIP
 * structure. Built and run by `make fuzz`.
 *
 * The bytes go to Alloy's own reader (ir/json.c, what an archive's
 * model.json goes through) raw, malformed ones included, and to jansson
 * as before. JSON either accepts must import or fail with an error naming
 * the entry; what imports must verify.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/graph.h"
#include "ir/json.h"
#include "ir/pt2.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What an import gave: an error names the entry, a graph verifies. */
static void check_import(alloy_error *e, alloy_graph *g) {
  if (e) {
    if (alloy_error_code_of(e) != ALLOY_ERR_OUT_OF_MEMORY &&
        strncmp(alloy_error_message(e), "fuzz.pt2: fuzz/models/model.json: ", 34) != 0) {
      fprintf(stderr, "error without its entry: %s\n", alloy_error_message(e));
      abort();
    }
    alloy_error_free(e);
    return;
  }
  if ((e = alloy_graph_verify(g))) {
    fprintf(stderr, "an imported graph does not verify: %s\n", alloy_error_message(e));
    abort();
  }
  alloy_graph_free(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int ready;
  if (!ready) {
    alloy_error_free(alloy_registry_init());
    ready = 1;
  }
  jv_doc doc = {0};
  const jv *top = NULL;
  jv_error jerr;
  alloy_graph *g = NULL;
  if (jv_parse(&doc, (const char *)data, size, &top, &jerr)) {
    alloy_error *e = pt2_graph_from_doc("fuzz.pt2", "fuzz/", top, &g);
    check_import(e, g);
  }
  jv_doc_free(&doc);
  json_t *root = json_loadb((const char *)data, size, 0, NULL);
  if (!root) return 0;
  g = NULL;
  alloy_error *je = pt2_graph_from_json("fuzz.pt2", "fuzz/", root, &g);
  json_decref(root);
  check_import(je, g);
  return 0;
}
