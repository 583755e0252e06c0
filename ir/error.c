/*
 * ir/error.c: alloy_error, the one error object of the SDK (see
 * alloy/error.h). Messages are formatted once, at creation; out of memory
 * falls back to a static error so that reporting a failure cannot fail.
 */
#include "alloy/error.h"
#include "ir/ir.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct alloy_error {
  alloy_error_code code;
  char *message;
};

static alloy_error out_of_memory = {ALLOY_ERR_OUT_OF_MEMORY,
                                    (char *)"out of memory"};

static alloy_error *error_vnew(alloy_error_code code, const char *cause_msg,
                               const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  size_t plen = cause_msg ? strlen(cause_msg) + 2 : 0;
  alloy_error *e = malloc(sizeof *e);
  char *msg = n >= 0 ? malloc((size_t)n + plen + 1) : NULL;
  if (!e || !msg) {
    free(e);
    free(msg);
    return &out_of_memory;
  }
  vsnprintf(msg, (size_t)n + 1, fmt, ap);
  if (cause_msg) {
    char *tail = msg + n;
    memcpy(tail, ": ", 2);
    memcpy(tail + 2, cause_msg, plen - 2);
    tail[plen] = '\0';
  }
  e->code = code;
  e->message = msg;
  return e;
}

alloy_error *alloy_error_new(alloy_error_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  alloy_error *e = error_vnew(code, NULL, fmt, ap);
  va_end(ap);
  return e;
}

alloy_error *alloy_error_wrap(alloy_error *cause, const char *fmt, ...) {
  if (!cause) return NULL;
  va_list ap;
  va_start(ap, fmt);
  alloy_error *e = error_vnew(cause->code, cause->message, fmt, ap);
  va_end(ap);
  alloy_error_free(cause);
  return e;
}

alloy_error_code alloy_error_code_of(const alloy_error *err) {
  return err ? err->code : 0;
}

const char *alloy_error_message(const alloy_error *err) {
  return err ? err->message : "success";
}

void alloy_error_free(alloy_error *err) {
  if (!err || err == &out_of_memory) return;
  free(err->message);
  free(err);
}

bool alloy_error_is_static(const alloy_error *err) { return err == &out_of_memory; }
