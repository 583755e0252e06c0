/*
 * sdk/tools/commands.h: the subcommands of the `alloy` tool that live
 * outside alloy.c. Each takes the arguments after its name and returns the
 * process exit status.
 */
#ifndef ALLOY_TOOLS_COMMANDS_H
#define ALLOY_TOOLS_COMMANDS_H

#include <stdio.h>

#include "alloy/runtime.h"

int cmd_run(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_partition(int argc, char **argv);
/* `alloy check` of a model file (.pt2, or .air with --summary). */
int cmd_check_model(const char *path);
/* A runtime with only the backends of list ("cuda,cpu", NULL or "" for
 * every backend found) and the built-in reference backend loaded: a plugin
 * on the path that crashes on load cannot take down a command that does
 * not use it (alloy.c). */
alloy_error *tool_runtime_open(const char *list, alloy_runtime **out);

#endif
