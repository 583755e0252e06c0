/*
 * sdk/tools/coverage.h: `alloy ops --coverage` (sdk/tools/coverage.c).
 */
#ifndef ALLOY_TOOLS_COVERAGE_H
#define ALLOY_TOOLS_COVERAGE_H
#include <stdbool.h>

/* Prints the coverage figures (and, with list, every op that does not run
 * with its reason); with floor_path, exits 1 when a figure fell below the
 * file's floor. Returns the exit status. */
int ops_coverage(bool list, const char *floor_path);

#endif
