/*
 * sdk/tools/commands.h: the subcommands of the `alloy` tool that live
 * outside alloy.c. Each takes the arguments after its name and returns the
 * process exit status.
 */
#ifndef ALLOY_TOOLS_COMMANDS_H
#define ALLOY_TOOLS_COMMANDS_H

#include <stdbool.h>
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

/* help.c: the general usage (to stderr: returns 2, else 0); one command's
 * help (`alloy help CMD`, `alloy CMD --help`; 2 when there is no such
 * command); `alloy --version`. */
int tool_usage(FILE *f);
int tool_help(const char *cmd, FILE *f);
int tool_version(FILE *f);
/* A bad argument of command cmd, named, and where help is: "alloy run:
 * unknown option '--foo' (see alloy help run)", "... --inputs needs a
 * value ...", "... unexpected argument 'x' ...". Returns 2. */
int tool_bad_arg(const char *cmd, const char *arg, bool needs_value);
/* "alloy CMD: WHAT (see alloy help CMD)". Returns 2. */
int tool_missing(const char *cmd, const char *what);

#endif
