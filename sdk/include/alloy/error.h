/*
 * alloy/error.h: the error object every fallible Alloy function returns, and
 * liballoy's functions that make, read and free it: the application side.
 * The codes and the opaque type live in alloy/error_code.h, which is all a
 * plugin includes (through alloy/plugin.h): a plugin uses the host table's
 * error_new, error_message and error_free instead of these functions, which
 * it cannot link.
 *
 * NULL means success. A non-NULL alloy_error is owned by whoever receives it
 * and must be released with alloy_error_free(). Error objects are immutable
 * once returned, so they may be read from any thread; freeing one is the
 * owner's business alone.
 */
#ifndef ALLOY_ERROR_H
#define ALLOY_ERROR_H

#include "alloy/error_code.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Creates an error with a printf-style message. Never returns NULL: when memory
 * runs out it returns a static out-of-memory error that alloy_error_free()
 * recognises and leaves alone. Thread-safe. */
alloy_error *alloy_error_new(alloy_error_code code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Returns a new error whose message is "<prefix>: <message of cause>", with
 * the cause's code, and frees cause. Used to add context on the way up. */
alloy_error *alloy_error_wrap(alloy_error *cause, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

alloy_error_code alloy_error_code_of(const alloy_error *err);
/* The message lives as long as the error. */
const char *alloy_error_message(const alloy_error *err);
/* Accepts NULL. */
void alloy_error_free(alloy_error *err);

#ifdef __cplusplus
}
#endif
#endif
