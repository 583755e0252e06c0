/*
 * tests/cpuref.h: running graphs on the cpu backend and on the reference
 * backend side by side, for the tests of the cpu backend's steps
 * (test_cpu_conv.c, test_cpu_attention.c). The cpu plugin is opened from
 * $ALLOY_TEST_BUILD/lib/alloy (else the build folder of this program);
 * where it was not built (no llvm-config), cpuref_open says so and the
 * test skips.
 */
#ifndef ALLOY_TESTS_CPUREF_H
#define ALLOY_TESTS_CPUREF_H

#include <stdbool.h>
#include <stddef.h>

#include "alloy/graph.h"
#include "alloy/runtime.h"

/* The folder the cpu plugin is opened from (static storage). */
const char *cpuref_plugin_dir(void);
/* A runtime with the cpu plugin (*cpu) and ref (*ref), or NULL, with a
 * line saying the test skips, when the plugin is not there. */
alloy_runtime *cpuref_open(int *cpu, int *ref);
/* Runs g on backend i with the inputs and copies output `which` (bytes)
 * into out; false after a recorded failure. */
bool cpuref_run(alloy_runtime *rt, int backend, const alloy_graph *g, const alloy_host_tensor *in, int nin,
                void *out, size_t bytes, int which);
alloy_host_tensor cpuref_host(alloy_dtype t, int rank, const int64_t *sizes, void *data);

#endif
