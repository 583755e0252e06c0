/*
 * sdk/src/arena.c: placement of a run's intermediates in one arena per
 * backend (arena.h). The executor asks once per set of sizes and keeps the
 * layout across runs, so the cost here is not paid per run.
 *
 * Greedy by size, as TFLite's arena planner and XLA's heap simulator do:
 * big values constrain placement most, so they go first, each at the
 * lowest offset where no already-placed value whose interval meets its own
 * overlaps it. The placed values are kept in offset order, so the gaps are
 * one walk: O(n) per value, O(n^2) in all (no sort per value); the ideal
 * is a sweep over the intervals' ends.
 */
#include "sdk/src/arena.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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

/* An event of the sweep that finds the ideal: at step, bytes come alive
 * (positive) or go (negative, one step after the last reader). */
typedef struct sweep {
  int step;
  int64_t delta;
} sweep;

static int by_step(const void *a, const void *b) {
  const sweep *x = a, *y = b;
  if (x->step != y->step) return x->step < y->step ? -1 : 1;
  return x->delta < y->delta ? -1 : x->delta > y->delta; /* frees first */
}

alloy_error *arena_place(const arena_item *items, int n, uint64_t *offsets, uint64_t *total,
                         uint64_t *ideal) {
  *total = *ideal = 0;
  if (n <= 0) return NULL;
  keyed *idx = malloc(sizeof *idx * (size_t)n);
  int *placed = malloc(sizeof *placed * (size_t)n); /* placed items, by offset */
  sweep *ev = malloc(sizeof *ev * 2 * (size_t)n);
  if (!idx || !placed || !ev) {
    free(idx), free(placed), free(ev);
    return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory planning an arena");
  }
  for (int i = 0; i < n; i++) idx[i] = (keyed){items[i].bytes, items[i].first, i};
  qsort(idx, (size_t)n, sizeof *idx, by_size_desc);
  /* Each item goes at the lowest gap, among the placed items alive when it
   * is, that holds it: one walk of the placed items in offset order. */
  int nplaced = 0;
  for (int k = 0; k < n; k++) {
    int me = idx[k].index;
    const arena_item *it = &items[me];
    uint64_t need = align_up(it->bytes), at = 0;
    int pos = 0; /* where it goes in the offset order */
    if (need) {
      for (int j = 0; j < nplaced; j++) {
        const arena_item *o = &items[placed[j]];
        if (!o->bytes || o->first > it->last || it->first > o->last) continue;
        uint64_t lo = offsets[placed[j]], hi = lo + align_up(o->bytes);
        if (lo >= at + need) break;
        if (hi > at) at = hi;
      }
      while (pos < nplaced && offsets[placed[pos]] <= at) pos++;
    }
    offsets[me] = need ? at : 0;
    memmove(&placed[pos + 1], &placed[pos], sizeof *placed * (size_t)(nplaced - pos));
    placed[pos] = me;
    nplaced++;
    if (at + need > *total) *total = at + need;
  }
  /* The ideal: the most bytes alive at one step, by a sweep. */
  for (int i = 0; i < n; i++) {
    ev[2 * i] = (sweep){items[i].first, (int64_t)align_up(items[i].bytes)};
    ev[2 * i + 1] = (sweep){items[i].last + 1, -(int64_t)align_up(items[i].bytes)};
  }
  qsort(ev, 2 * (size_t)n, sizeof *ev, by_step);
  int64_t live = 0;
  for (int i = 0; i < 2 * n; i++) {
    live += ev[i].delta;
    if (live > (int64_t)*ideal) *ideal = (uint64_t)live;
  }
  free(idx), free(placed), free(ev);
  return NULL;
}
