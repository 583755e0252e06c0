/*
 * tests/harness.c: runs every registered test (or those whose name contains
 * argv[1]) and prints one line per failure and the totals line.
 */
#define _DEFAULT_SOURCE
#include "harness.h"

#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct {
  const char *name, *file;
  harness_fn fn;
} harness_test;

static harness_test tests[1024];
static int ntests;
static int current_failures;

void harness_register(const char *name, const char *file, harness_fn fn) {
  if (ntests == (int)(sizeof tests / sizeof tests[0])) {
    fprintf(stderr, "harness: too many tests, raise the limit\n");
    exit(2);
  }
  tests[ntests++] = (harness_test){name, file, fn};
}

void harness_fail(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  fprintf(stdout, "  %s:%d: ", file, line);
  va_start(ap, fmt);
  vfprintf(stdout, fmt, ap);
  va_end(ap);
  fputc('\n', stdout);
  current_failures++;
}

const char *harness_golden_dir(void) {
  static char path[4096];
  const char *env = getenv("ALLOY_GOLDEN");
  const char *dir = env ? env : "../shared/golden";
  if (access(dir, R_OK) != 0) return NULL;
  if (!realpath(dir, path)) return NULL;
  return path;
}

/* LeakSanitizer's suppressions (`make asan` runs it with use_tls=0): glibc
 * keeps the blocks of a thread's pthread keys past the first 32 in the
 * thread's descriptor, which use_tls=0 leaves unscanned, so they read as
 * leaks; NVRTC, which the cuda tests load, uses such keys. Ignored outside
 * a sanitized build. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:pthread_setspecific\n"; }

int main(int argc, char **argv) {
  int passed = 0, failed = 0;
  for (int i = 0; i < ntests; i++) {
    if (argc > 1 && !strstr(tests[i].name, argv[1])) continue;
    current_failures = 0;
    tests[i].fn();
    if (current_failures) {
      printf("FAIL %s (%s)\n", tests[i].name, tests[i].file);
      failed++;
    } else {
      passed++;
    }
    fflush(stdout);
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
