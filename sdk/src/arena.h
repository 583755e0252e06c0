/*
 * sdk/src/arena.h: memory planning for the intermediates of a run
 * (arena.c). Each value lives in an interval of steps of the run (a step is
 * one partition, in issue order); values whose intervals do not meet may
 * share bytes. The executor (exec.c) places every value of a backend with a
 * size known before the run in one arena buffer of that backend.
 */
#ifndef ALLOY_SDK_ARENA_H
#define ALLOY_SDK_ARENA_H

#include <stdint.h>

#include "alloy/error.h"

/* Offsets are multiples of this: enough for any dtype and vector load. */
#define ARENA_ALIGN 256

typedef struct arena_item {
  uint64_t bytes; /* 0 takes no space (offset 0) */
  int first;      /* first step that writes or reads it */
  int last;       /* last step that reads it (inclusive) */
} arena_item;

/* Places n items: offsets[i] for each, *total the arena's bytes, and *ideal
 * the most bytes alive at any one step (what perfect placement would
 * need; total >= ideal). Greedy by size: the largest items first, each at
 * the lowest offset free for its whole interval. Deterministic; O(n^2). */
alloy_error *arena_place(const arena_item *items, int n, uint64_t *offsets, uint64_t *total,
                         uint64_t *ideal);

#endif
