/*
 * tests/fuzz/fuzz_safetensors.c: libFuzzer target for the safetensors reader
 * (ir/safetensors.c) through alloy_safetensors_open_memory, built and run by
 * `make fuzz`.
 *
 * Any bytes must either be refused with an error that names the buffer, or
 * give a reader whose every promise holds: entries sorted and found by name,
 * shapes within rank, byte counts that match dtype and shape, and data that
 * lies inside the buffer, each range tiling it without overlap. The target
 * reads every byte it is handed, so ASan sees any range that strays.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile unsigned sink; /* makes the reads of the data real */

static void check(int ok, const char *what, const char *name) {
  if (ok) return;
  fprintf(stderr, "broken promise: %s (entry '%s')\n", what, name ? name : "(none)");
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  alloy_safetensors *st = NULL;
  alloy_error *e = alloy_safetensors_open_memory(data, size, "fuzz", &st);
  if (e) {
    check(st == NULL, "a reader returned with an error", NULL);
    check(alloy_error_code_of(e) == ALLOY_ERR_OUT_OF_MEMORY ||
              strncmp(alloy_error_message(e), "fuzz: ", 6) == 0,
          "an error that does not name the buffer", alloy_error_message(e));
    alloy_error_free(e);
    return 0;
  }
  int n = alloy_safetensors_count(st);
  size_t covered = 0;
  unsigned sum = 0;
  for (int i = 0; i < n; i++) {
    const alloy_st_entry *en = alloy_safetensors_entry(st, i);
    check(en && en->name, "a missing entry", NULL);
    check(i == 0 || strcmp(alloy_safetensors_entry(st, i - 1)->name, en->name) < 0,
          "entries out of order or repeated", en->name);
    check(alloy_safetensors_find(st, en->name) == en, "find gives another entry", en->name);
    check((unsigned)en->dtype < ALLOY_DTYPE_COUNT, "a bad dtype", en->name);
    check(en->rank >= 0 && en->rank <= ALLOY_MAX_RANK, "a bad rank", en->name);
    unsigned __int128 numel = 1;
    for (int d = 0; d < en->rank; d++) {
      check(en->shape[d] >= 0, "a negative size", en->name);
      numel = numel * (unsigned __int128)en->shape[d];
      if (numel > ((unsigned __int128)1 << 64)) numel = ((unsigned __int128)1 << 64) + 1;
    }
    check(numel * alloy_dtype_size(en->dtype) == en->nbytes, "nbytes against the shape", en->name);
    const uint8_t *p = en->data;
    check(p >= data && p + en->nbytes <= data + size, "data outside the buffer", en->name);
    for (size_t b = 0; b < en->nbytes; b++) sum += p[b];
    covered += en->nbytes;
  }
  /* ranges tile the data after the header, so they add up to its size */
  uint64_t hlen = 0;
  for (int i = 7; i >= 0; i--) hlen = hlen << 8 | data[i];
  check(covered == size - 8 - hlen, "ranges that do not tile the data", NULL);
  check(alloy_safetensors_entry(st, n) == NULL, "an entry past the count", NULL);
  alloy_safetensors_close(st);
  sink = sum;
  return 0;
}
