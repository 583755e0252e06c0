/*
 * conformance/isolate.h: one test in a forked child with a timeout
 * (isolate.c), so that a plugin's crash or hang fails that test only.
 */
#ifndef ALLOY_CONFORM_ISOLATE_H
#define ALLOY_CONFORM_ISOLATE_H

#include <stdbool.h>
#include <stddef.h>

enum { ISOLATE_FAIL = 1 }; /* the verdict given for a crash or a timeout */

/* Runs test(ctx, why, cap) in a child and returns its verdict (a small
 * integer the test chooses), with its message in why. A child killed by a
 * signal, or still running after $ALLOY_CONFORM_TIMEOUT seconds (60), gives
 * ISOLATE_FAIL and a message that says so. Where fork is impossible the test
 * runs in this process. */
int isolate_run(int (*test)(void *ctx, char *why, size_t cap), void *ctx, char *why, size_t cap);

#endif
