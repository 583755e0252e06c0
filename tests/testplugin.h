/*
 * tests/testplugin.h: a runtime that finds the example plugin the way an
 * application would, for the tests that run graphs on it (the example
 * plugin's own tests and the mixture tests).
 *
 * The plugin folder: $ALLOY_TEST_PLUGIN_DIR when it holds the example,
 * else $ALLOY_TEST_BUILD/lib/alloy, else ../lib/alloy beside this binary
 * (so `make BUILD=elsewhere test` finds its own build), else build/lib/alloy.
 */
#ifndef ALLOY_TEST_PLUGIN_H
#define ALLOY_TEST_PLUGIN_H

#include "alloy/runtime.h"

/* A runtime that searches only the example's folder (plus the built-in
 * reference backend); *backend gets the example's index (a failure is
 * recorded when it is missing). */
alloy_runtime *tp_open_example(int *backend);
/* The folder of the test plugins of the same build (tests/plugins/). */
const char *tp_test_plugins_dir(void);

#endif
