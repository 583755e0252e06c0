/*
 * tests/hip/fake_log.h: what the fake ROCm libraries of tests/hip/
 * (fake_hipblaslt.c, fake_miopen.c) share: a log of the calls each
 * receives, one line a call with its arguments as numbers, and a count of
 * the objects it made and has not destroyed. tests/test_hip_vendor.c
 * opens the fake it tests by path and reads these back through dlsym.
 * Included once by each fake (it defines the exported functions); the
 * fakes are single-threaded, as the tests are.
 */
#ifndef ALLOY_TEST_FAKE_LOG_H
#define ALLOY_TEST_FAKE_LOG_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The log since the last fake_log_clear: the fake's, valid until its next
 * call. */
const char *fake_log(void);
/* Empties the log and restarts the objects' numbering (H1, L1, T1...). */
void fake_log_clear(void);
/* Objects (handles, descriptors) made and not yet destroyed. */
int fake_live(void);

static char log_text[1 << 16];
static size_t log_len;
static int live;
static int next_id[26]; /* by kind letter */

__attribute__((format(printf, 1, 2))) static void flog(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(log_text + log_len, sizeof log_text - log_len - 1, fmt, ap);
  va_end(ap);
  if (n > 0) log_len += (size_t)n < sizeof log_text - log_len - 2 ? (size_t)n : sizeof log_text - log_len - 2;
  log_text[log_len++] = '\n';
  log_text[log_len] = 0;
}

const char *fake_log(void) { return log_text; }

void fake_log_clear(void) {
  log_len = 0;
  log_text[0] = 0;
  memset(next_id, 0, sizeof next_id);
}

int fake_live(void) { return live; }

/* An object the fake hands out: its kind letter and number, "L2". */
typedef struct fake_obj {
  char name[16];
} fake_obj;

static fake_obj *fake_make(char kind) {
  static fake_obj pool[256];
  static int used;
  fake_obj *o = &pool[used++ % 256];
  snprintf(o->name, sizeof o->name, "%c%d", kind, ++next_id[(kind - 'A') % 26]);
  live++;
  return o;
}

static const char *fake_name(const void *o) { return o ? ((const fake_obj *)o)->name : "NULL"; }

static void fake_drop(const void *o) {
  if (o) live--;
}

#endif
