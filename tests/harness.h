/*
 * tests/harness.h: the in-tree unit test harness.
 *
 * Why not cmocka or Check: the suite needs nothing but registration, checks
 * that keep going after a failure, and one totals line that the top-level
 * `make test` adds up across suites; forty lines do that, build the same way
 * under ASan/UBSan and libFuzzer's clang, and add no package to install.
 *
 * A test is `TEST(name) { ... }` in any tests/test_*.c file; it registers
 * itself before main runs. CHECK records a failure and goes on; REQUIRE
 * returns from the test. A test passes when no check failed.
 */
#ifndef ALLOY_TEST_HARNESS_H
#define ALLOY_TEST_HARNESS_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

typedef void (*harness_fn)(void);
void harness_register(const char *name, const char *file, harness_fn fn);
void harness_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Absolute path of ../shared/golden relative to the repo, or NULL when it is
 * missing (tests that need it then fail loudly, never pass silently). */
const char *harness_golden_dir(void);

#define TEST(name)                                                         \
  static void name(void);                                                  \
  __attribute__((constructor)) static void name##_register(void) {         \
    harness_register(#name, __FILE__, name);                               \
  }                                                                        \
  static void name(void)

#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) harness_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);     \
  } while (0)
#define REQUIRE(cond)                                                      \
  do {                                                                     \
    if (!(cond)) {                                                         \
      harness_fail(__FILE__, __LINE__, "REQUIRE(%s)", #cond);              \
      return;                                                              \
    }                                                                      \
  } while (0)
#define CHECK_INT(a, b)                                                    \
  do {                                                                     \
    long long a_ = (long long)(a), b_ = (long long)(b);                    \
    if (a_ != b_)                                                          \
      harness_fail(__FILE__, __LINE__, "%s == %lld, expected %s == %lld",  \
                   #a, a_, #b, b_);                                        \
  } while (0)
#define CHECK_STR(a, b)                                                    \
  do {                                                                     \
    const char *a_ = (a), *b_ = (b);                                       \
    if (!a_ || !b_ || strcmp(a_, b_) != 0)                                 \
      harness_fail(__FILE__, __LINE__, "%s == \"%s\", expected \"%s\"",    \
                   #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)");            \
  } while (0)
/* Checks that an alloy_error * is NULL; prints and frees it otherwise. */
#define CHECK_OK(expr)                                                     \
  do {                                                                     \
    alloy_error *e_ = (expr);                                              \
    if (e_) {                                                              \
      harness_fail(__FILE__, __LINE__, "%s failed: %s", #expr,             \
                   alloy_error_message(e_));                               \
      alloy_error_free(e_);                                                \
    }                                                                      \
  } while (0)

#endif
