/*
 * sdk/src/arena.c: placement of a run's intermediates in one arena per
 * backend (arena.h). The executor asks once per set of sizes and keeps the
 * layout across runs, so the cost here is not paid per run.
 *
 * Greedy by size, as TFLite's arena planner and XLA's heap simulator do:
 * big values constrain placement most, so they go first, each at the
 * lowest offset where no already-placed value whose interval meets its own
 * overlaps it. The gaps are found by scanning the placed conflicting
 * values in offset order.
 */
#include "sdk/src/arena.h"

#include <stdbool.h>
#include <stdlib.h>

static uint64_t align_up(uint64_t x) { return (x + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN; }

/* An item's sort key beside its index, so qsort needs no context. */
typedef struct keyed {
  uint64_t bytes;
  int first, index;
} keyed;

static int by_size_desc(const void *a, const void *b) {
  const keyed *x = a, *y = b;
  if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
  if (x->first != y->first) return x->first < y->first ? -1 : 1;
  return x->index - y->index;
}

typedef struct span {
  uint64_t lo, hi;
} span;

static int by_lo(const void *a, const void *b) {
  const span *x = a, *y = b;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

alloy_error *arena_place(const arena_item *items, int n, uint64_t *offsets, uint64_t *total,
                         uint64_t *ideal) {
  *total = *ideal = 0;
  if (n <= 0) return NULL;
  keyed *idx = malloc(sizeof *idx * (size_t)n);
  bool *placed = calloc((size_t)n, sizeof *placed);
  span *busy = malloc(sizeof *busy * (size_t)n);
  if (!idx || !placed || !busy) {
    free(idx), free(placed), free(busy);
    return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory planning an arena");
  }
  for (int i = 0; i < n; i++) idx[i] = (keyed){items[i].bytes, items[i].first, i};
  qsort(idx, (size_t)n, sizeof *idx, by_size_desc);
  for (int k = 0; k < n; k++) {
    int me = idx[k].index;
    const arena_item *it = &items[me];
    uint64_t need = align_up(it->bytes);
    int nb = 0;
    for (int j = 0; j < n; j++)
      if (placed[j] && items[j].first <= it->last && it->first <= items[j].last && items[j].bytes)
        busy[nb++] = (span){offsets[j], offsets[j] + align_up(items[j].bytes)};
    qsort(busy, (size_t)nb, sizeof *busy, by_lo);
    uint64_t at = 0;
    for (int j = 0; j < nb && need; j++) {
      if (busy[j].lo >= at + need) break;
      if (busy[j].hi > at) at = busy[j].hi;
    }
    offsets[me] = need ? at : 0;
    placed[me] = true;
    if (at + need > *total) *total = at + need;
  }
  /* The ideal: the most bytes alive at one step. */
  int steps = 0;
  for (int i = 0; i < n; i++)
    if (items[i].last + 1 > steps) steps = items[i].last + 1;
  for (int s = 0; s < steps; s++) {
    uint64_t live = 0;
    for (int i = 0; i < n; i++)
      if (items[i].first <= s && s <= items[i].last) live += align_up(items[i].bytes);
    if (live > *ideal) *ideal = live;
  }
  free(idx), free(placed), free(busy);
  return NULL;
}
