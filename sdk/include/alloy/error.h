/*
 * alloy/error.h: the error object every fallible Alloy function returns.
 *
 * NULL means success. A non-NULL alloy_error is owned by whoever receives it
 * and must be released with alloy_error_free(). Error objects are immutable
 * once returned, so they may be read from any thread; freeing one is the
 * owner's business alone.
 */
#ifndef ALLOY_ERROR_H
#define ALLOY_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum alloy_error_code {
  ALLOY_ERR_INVALID_ARGUMENT = 1, /* the caller passed something malformed     */
  ALLOY_ERR_PARSE = 2,            /* text input (schema, .air, JSON) is wrong    */
  ALLOY_ERR_TYPE = 3,             /* dtype or shape check failed                 */
  ALLOY_ERR_NOT_FOUND = 4,        /* unknown op, file, symbol or backend         */
  ALLOY_ERR_UNSUPPORTED = 5,      /* well-formed but outside what is supported   */
  ALLOY_ERR_IO = 6,               /* the operating system refused a read/write   */
  ALLOY_ERR_OUT_OF_MEMORY = 7,
  ALLOY_ERR_INTERNAL = 8,         /* a bug in Alloy: please report it            */
  ALLOY_ERR_VERSION = 9,          /* ABI version mismatch                        */
  /* since ABI 1.2 */
  ALLOY_ERR_DEVICE_LOST = 10,     /* the device failed or went away: its backend
                                   * is unusable until reopened                 */
  ALLOY_ERR_CANCELLED = 11,       /* the work was cancelled before it finished   */
  ALLOY_ERR_UNAVAILABLE = 12,     /* a resource is busy or exhausted for now
                                   * (device memory, a queue): retrying may work */
  ALLOY_ERR_DECLINED = 13,        /* compile: the plugin will not take this
                                   * partition after all; the host falls back to
                                   * the next backend that claims its nodes     */
} alloy_error_code;

typedef struct alloy_error alloy_error;

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
