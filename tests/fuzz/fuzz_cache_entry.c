/*
 * tests/fuzz/fuzz_cache_entry.c: libFuzzer target for the compile cache's
 * entry reader (cache_entry_parse, sdk/src/cache.c), built and run by
 * `make fuzz`.
 *
 * The cache folder may be shared, so an entry's bytes are anyone's: any
 * bytes must either be refused or give fields that lie wholly inside the
 * buffer, one after another, the executable's ending the entry, without a
 * crash or a sanitizer report. The reader gets the bytes in a buffer of
 * their exact size, so ASan catches any read past the end.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdk/src/runtime_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *buf = malloc(size ? size : 1);
  if (!buf) return 0;
  memcpy(buf, data, size);
  const char *val[CACHE_ENTRY_FIELDS];
  uint64_t n[CACHE_ENTRY_FIELDS];
  if (cache_entry_parse(buf, size, val, n)) {
    const char *prev_end = buf;
    for (int f = 0; f < CACHE_ENTRY_FIELDS; f++) {
      if (val[f] < prev_end || val[f] > buf + size || n[f] > (uint64_t)(buf + size - val[f])) {
        fprintf(stderr, "field %d lies outside the entry or before the one ahead of it\n", f);
        abort();
      }
      prev_end = val[f] + n[f];
    }
    if (prev_end != buf + size) {
      fprintf(stderr, "the executable does not end the entry\n");
      abort();
    }
  }
  free(buf);
  return 0;
}
