/*
 * conformance/isolate.c: running one test in a forked child, so that a
 * plugin that crashes, aborts or hangs fails that test and the suite goes
 * on. The child runs the test and writes its verdict and message to a
 * pipe; the parent waits for them with a timeout ($ALLOY_CONFORM_TIMEOUT
 * seconds, 60 by default), kills a child that runs past it, and turns a
 * child that dies before writing into a failure naming the signal.
 */
#include "conformance/isolate.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int timeout_ms(void) {
  const char *s = getenv("ALLOY_CONFORM_TIMEOUT");
  double sec = s && *s ? atof(s) : 60;
  return sec > 0 ? (int)(sec * 1000) : 60000;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int isolate_run(int (*test)(void *ctx, char *why, size_t cap), void *ctx, char *why,
                size_t cap) {
  int fds[2];
  if (pipe(fds) != 0) return test(ctx, why, cap); /* no pipe: run it here */
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return test(ctx, why, cap);
  }
  if (pid == 0) {
    close(fds[0]);
    char msg[1024] = "";
    unsigned char verdict = (unsigned char)test(ctx, msg, sizeof msg);
    size_t n = strlen(msg);
    if (write(fds[1], &verdict, 1) != 1 || write(fds[1], msg, n) != (ssize_t)n) _exit(3);
    _exit(0);
  }
  close(fds[1]);
  /* Read the verdict and message until the child closes its end. */
  char buf[1100];
  size_t got = 0;
  int limit = timeout_ms();
  double start = now_ms();
  bool timed_out = false;
  for (;;) {
    int left = limit - (int)(now_ms() - start);
    if (left <= 0) {
      timed_out = true;
      break;
    }
    struct pollfd p = {fds[0], POLLIN, 0};
    int r = poll(&p, 1, left);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      timed_out = r == 0;
      break;
    }
    ssize_t k = read(fds[0], buf + got, sizeof buf - 1 - got);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    got += (size_t)k;
    if (got == sizeof buf - 1) break;
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    snprintf(why, cap, "timed out after %.0f s (the test's child was killed)", limit / 1e3);
    return ISOLATE_FAIL;
  }
  if (WIFSIGNALED(status)) {
    snprintf(why, cap, "crashed: signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    return ISOLATE_FAIL;
  }
  if (got == 0) {
    snprintf(why, cap, "crashed: the test's child exited (status %d) before giving a verdict "
             "(the plugin or a sanitizer ended it)", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return ISOLATE_FAIL;
  }
  buf[got] = 0;
  snprintf(why, cap, "%s", buf + 1);
  return (unsigned char)buf[0];
}
