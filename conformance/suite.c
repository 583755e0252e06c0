/*
 * conformance/suite.c: the driver of `alloy conform`.
 *
 * The parent lists every test (sources never load a plugin there), then
 * keeps -j N worker processes busy, one test each at a time: it writes the
 * test's position down a worker's command pipe and reads the verdict from
 * its result pipe. A worker opens its own runtime once, so a backend that
 * initializes a device in its process (CUDA cannot cross a fork) works, and
 * a worker that dies takes only its current test with it: the parent names
 * the signal, reaps it and starts another. A test still running after
 * $ALLOY_CONFORM_TIMEOUT seconds (60) is killed the same way. With
 * --no-fork everything runs in this process, for a debugger.
 *
 * Every verdict is counted three ways: the totals line, the table by op and
 * dtype, and the levels (docs/conformance.md): a level is reached when
 * every test of its set ran and passed.
 */
#include "conformance/suite.h"

#include <errno.h>
#include <fnmatch.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conformance/report.h"

struct conform_suite {
  conform_test *tests;
  int n, cap;
  char **notes;
  int nnotes;
};

bool conform_suite_note(conform_suite *s, const char *text) {
  char **nn = realloc(s->notes, sizeof *nn * (size_t)(s->nnotes + 1));
  if (!nn) return false;
  s->notes = nn;
  return (s->notes[s->nnotes] = strdup(text)) && ++s->nnotes;
}

bool conform_suite_add(conform_suite *s, const conform_test *t) {
  if (s->n == s->cap) {
    int cap = s->cap ? 2 * s->cap : 1024;
    conform_test *nt = realloc(s->tests, sizeof *nt * (size_t)cap);
    if (!nt) return false;
    s->tests = nt;
    s->cap = cap;
  }
  s->tests[s->n++] = *t;
  return true;
}

bool conform_wants_source(const conform_options *o, const char *name) {
  if (!o->only) return true;
  size_t n = strlen(name);
  for (const char *p = o->only; (p = strstr(p, name)); p += n)
    if ((p == o->only || p[-1] == ',') && (p[n] == 0 || p[n] == ',')) return true;
  return false;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double conform_timeout_s(void) {
  const char *s = getenv("ALLOY_CONFORM_TIMEOUT");
  double sec = s && *s ? atof(s) : 60;
  return sec > 0 ? sec : 60;
}

/* ---- known failures ------------------------------------------------------ */

/* A line of --known-failures: "[SOURCE] ID OP  # reason", SOURCE golden
 * when left out, so that a failure line's first three words ("samples 65
 * aten.foo.default") can be pasted in as they are. */
typedef struct known_failure {
  char source[16];
  long id;
  char op[128];
} known_failure;

typedef struct {
  known_failure *items;
  int n, cap;
} known_set;

static bool known_set_has(const known_set *s, const conform_test *t) {
  for (int i = 0; i < s->n; i++) {
    const known_failure *k = &s->items[i];
    if (k->id == t->index && !strcmp(k->source, t->source->name) && !strcmp(k->op, t->op))
      return true;
  }
  return false;
}

/* A known failure may hold only without a backend option: "... op  unless
 * KEY=VALUE  # reason" is dropped when the run passes --backend-opt
 * KEY=VALUE (a failure of a vendor library the option turns off). */
static alloy_error *load_known_failures(const char *path, const conform_options *o, known_set *s) {
  FILE *f = fopen(path, "r");
  if (!f) return alloy_error_new(ALLOY_ERR_IO, "%s: cannot open", path);
  char line[1024];
  alloy_error *e = NULL;
  for (int lineno = 1; !e && fgets(line, sizeof line, f); lineno++) {
    char *hash = strchr(line, '#');
    if (hash) *hash = 0;
    known_failure k = {.source = "golden"};
    char w[5][128];
    int n = sscanf(line, "%127s %127s %127s %127s %127s", w[0], w[1], w[2], w[3], w[4]);
    if (n <= 0) continue;
    char *end;
    bool sourced = !(w[0][0] >= '0' && w[0][0] <= '9');
    if (sourced) snprintf(k.source, sizeof k.source, "%.15s", w[0]);
    int base = sourced ? 3 : 2;
    bool cond = n == base + 2 && !strcmp(w[base], "unless") && strchr(w[base + 1], '=');
    if ((n != base && !cond) || (k.id = strtol(w[sourced], &end, 10), *end)) {
      e = alloy_error_new(ALLOY_ERR_PARSE, "%s:%d: expected \"[source] id op [unless KEY=VALUE]  # reason\"",
                          path, lineno);
      break;
    }
    bool dropped = false;
    for (int i = 0; cond && i < o->nbackend_opts; i++) dropped |= !strcmp(o->backend_opts[i], w[base + 1]);
    if (dropped) continue;
    snprintf(k.op, sizeof k.op, "%s", w[sourced + 1]);
    if (s->n == s->cap) {
      int cap = s->cap ? s->cap * 2 : 64;
      known_failure *items = realloc(s->items, sizeof *items * (size_t)cap);
      if (!items) {
        e = alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
        break;
      }
      s->items = items, s->cap = cap;
    }
    s->items[s->n++] = k;
  }
  fclose(f);
  return e;
}

/* ---- the worker side ---------------------------------------------------- */

/* A verdict on its way from a worker: this header, then len bytes of why. */
typedef struct result_msg {
  int64_t pos;      /* the test's position; -1: the worker cannot start   */
  int32_t verdict;
  int32_t len;
  double backend_s, ref_s, bytes, flops;
  double seconds;   /* the check's own time                               */
} result_msg;

static alloy_error *env_open(const conform_options *o, conform_env *env) {
  *env = (conform_env){.o = o, .backend = -1, .ref = -1};
  /* Only the backend under test (and ref, built in) is loaded: another
   * plugin on the path that crashes when opened cannot fail the suite. */
  const char *only[1] = {o->backend};
  alloy_runtime_options ro = {.struct_size = ALLOY_RUNTIME_OPTIONS_STRUCT_SIZE,
                              .only_backends = only, .num_only_backends = 1};
  alloy_error *e = alloy_runtime_open(&ro, &env->rt);
  if (e) return e;
  env->ref = alloy_runtime_find_backend(env->rt, "ref");
  if (strcmp(o->backend, "meta")) {
    env->backend = alloy_runtime_find_backend(env->rt, o->backend);
    if (env->backend < 0)
      return alloy_error_new(ALLOY_ERR_NOT_FOUND, "no usable backend '%s' (see `alloy backends`)",
                             o->backend);
  }
  for (int i = 0; i < o->nbackend_opts && env->backend >= 0; i++) {
    char key[128];
    const char *kv = o->backend_opts[i], *eq = strchr(kv, '=');
    if (!eq || eq == kv || (size_t)(eq - kv) >= sizeof key)
      return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "--backend-opt takes KEY=VALUE (got '%s')", kv);
    memcpy(key, kv, (size_t)(eq - kv));
    key[eq - kv] = 0;
    alloy_error *oe = alloy_runtime_set_backend_option(env->rt, env->backend, key, eq + 1);
    if (oe) return alloy_error_wrap(oe, "--backend-opt %s", kv);
  }
  return NULL;
}

static conform_verdict run_one(const conform_suite *s, int pos, conform_env *env,
                               conform_result *res) {
  const conform_test *t = &s->tests[pos];
  memset(res, 0, sizeof *res);
  double start = now_s();
  conform_verdict v = t->source->check(t->source, t, env, res);
  res->seconds = now_s() - start;
  if (v != CONFORM_PASS && !res->why[0]) snprintf(res->why, sizeof res->why, "no reason given");
  return v;
}

static bool write_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n) {
    ssize_t k = write(fd, c, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    c += k, n -= (size_t)k;
  }
  return true;
}

static bool read_all(int fd, void *p, size_t n) {
  char *c = p;
  while (n) {
    ssize_t k = read(fd, c, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    c += k, n -= (size_t)k;
  }
  return true;
}

static bool send_result(int fd, int64_t pos, conform_verdict v, const conform_result *res) {
  result_msg m = {pos, (int32_t)v, (int32_t)strlen(res->why), res->backend_s, res->ref_s,
                  res->bytes, res->flops, res->seconds};
  char buf[sizeof m + sizeof res->why];
  memcpy(buf, &m, sizeof m);
  memcpy(buf + sizeof m, res->why, (size_t)m.len);
  return write_all(fd, buf, sizeof m + (size_t)m.len);
}

/* The worker's whole life: open a runtime, then run what the parent sends
 * until it closes the pipe. Never returns. */
static _Noreturn void worker_main(const conform_options *o, const conform_suite *s, int cmd,
                                  int out) {
  signal(SIGPIPE, SIG_DFL);
  conform_env env;
  conform_result res = {0};
  alloy_error *e = env_open(o, &env);
  if (e) {
    snprintf(res.why, sizeof res.why, "%s", alloy_error_message(e));
    alloy_error_free(e);
    send_result(out, -1, CONFORM_FAIL, &res);
    alloy_runtime_close(env.rt);
    _exit(0);
  }
  int64_t pos;
  while (read_all(cmd, &pos, sizeof pos)) {
    if (pos < 0 || pos >= s->n) break;
    conform_verdict v = run_one(s, (int)pos, &env, &res);
    fflush(NULL);
    if (!send_result(out, pos, v, &res)) break;
  }
  alloy_runtime_close(env.rt);
  fflush(NULL);
  _exit(0);
}

/* ---- the parent side: the pool ------------------------------------------ */

typedef struct worker {
  pid_t pid;      /* 0 when not running */
  int cmd, res;   /* the parent's ends */
  int pos;        /* the test in flight, -1 when idle */
  double started; /* when it was sent */
  char buf[sizeof(result_msg) + 1024];
  size_t got;
} worker;

typedef struct pool {
  const conform_options *o;
  const conform_suite *s;
  worker *w;
  int n;
} pool;

static bool worker_start(pool *p, int k) {
  worker *w = &p->w[k];
  int c[2], r[2];
  if (pipe(c) != 0) return false;
  if (pipe(r) != 0) {
    close(c[0]), close(c[1]);
    return false;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(c[0]), close(c[1]), close(r[0]), close(r[1]);
    return false;
  }
  if (pid == 0) {
    /* Other workers' pipes must not stay open here, or their EOFs never come. */
    for (int i = 0; i < p->n; i++)
      if (i != k && p->w[i].pid) close(p->w[i].cmd), close(p->w[i].res);
    close(c[1]), close(r[0]);
    worker_main(p->o, p->s, c[0], r[1]);
  }
  close(c[0]), close(r[1]);
  *w = (worker){.pid = pid, .cmd = c[1], .res = r[0], .pos = -1};
  return true;
}

/* Ends worker k (killing it when kill_it), and says how it ended in why. */
static void worker_end(pool *p, int k, bool kill_it, char *why, size_t cap) {
  worker *w = &p->w[k];
  if (kill_it) kill(w->pid, SIGKILL);
  close(w->cmd), close(w->res);
  int status = 0;
  while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (why && WIFSIGNALED(status))
    snprintf(why, cap, "crashed: signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
  else if (why)
    snprintf(why, cap, "crashed: the worker exited (status %d) before giving a verdict (the "
             "plugin or a sanitizer ended it)", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  w->pid = 0;
  w->pos = -1;
  w->got = 0;
}

/* ---- tallies ------------------------------------------------------------ */

typedef struct tally {
  int passed, failed, skipped, invalid, xfailed;
} tally;

typedef struct run_state {
  const conform_options *o;
  conform_suite *s;
  FILE *out;
  conform_report *rep;
  known_set known;
  uint8_t *verdicts;     /* per test; 255 while pending                     */
  conform_result *perf;  /* per test with --perf (why unused), else NULL     */
  tally total;
  int done;
  double start, last_progress;
  int progress_step;     /* plain progress: the last tenth printed         */
  bool tty;
  struct {
    char reason[96];
    int count;
  } skips[48];
  int nskips;
} run_state;

static void count_skip(run_state *st, const char *why) {
  char key[96];
  /* Group by the reason's opening words: details vary by test. */
  size_t n = strcspn(why, "(:");
  while (n > 0 && why[n - 1] == ' ') n--;
  snprintf(key, sizeof key, "%.*s", (int)(n < sizeof key ? n : sizeof key - 1), why);
  for (int i = 0; i < st->nskips; i++)
    if (!strcmp(st->skips[i].reason, key)) {
      st->skips[i].count++;
      return;
    }
  if (st->nskips == 48) return;
  snprintf(st->skips[st->nskips].reason, sizeof st->skips[0].reason, "%s", key);
  st->skips[st->nskips++].count = 1;
}

static void rerun_hint(const conform_test *t, char *buf, size_t cap) {
  if (t->source->rerun) t->source->rerun(t->source, t, buf, cap);
  else snprintf(buf, cap, "--ops '%s'", t->op);
}

static void clear_progress(run_state *st) {
  if (st->tty && st->last_progress > 0) fprintf(stderr, "\r\033[K");
}

static void show_progress(run_state *st, bool force) {
  double t = now_s();
  int n = st->s->n;
  double eta = st->done ? (t - st->start) / st->done * (n - st->done) : 0;
  if (st->tty) {
    if (!force && t - st->last_progress < 0.2) return;
    st->last_progress = t;
    fprintf(stderr, "\r\033[K[%d/%d] %d passed, %d failed, %d skipped, %.0f s left", st->done, n,
            st->total.passed + st->total.xfailed, st->total.failed, st->total.skipped, eta);
    fflush(stderr);
  } else if (n >= 1000 && st->done * 10 / n > st->progress_step) {
    st->progress_step = st->done * 10 / n;
    /* stdout first: when both go to one file, a buffered failure line
     * must not be cut by this one. */
    fflush(st->out);
    fprintf(stderr, "conform: %d%% (%d of %d tests), %d failed, about %.0f s left\n",
            st->progress_step * 10, st->done, n, st->total.failed, eta);
  }
}

/* What goes between a line's brackets: "float32, transposed", either part
 * alone when the other is empty (a replay has no variant of its own, a
 * graph test no single dtype), never a stray comma. */
static const char *test_label(const conform_test *t, char *buf, size_t cap) {
  snprintf(buf, cap, "%s%s%s", t->dtype, t->dtype[0] && t->variant[0] ? ", " : "", t->variant);
  return buf;
}

static void record(run_state *st, int pos, conform_verdict v, const conform_result *res) {
  const conform_options *o = st->o;
  const conform_test *t = &st->s->tests[pos];
  bool known = known_set_has(&st->known, t);
  const char *src = t->source->name;
  uint8_t recorded = (uint8_t)v;
  char label[sizeof t->dtype + sizeof t->variant + 2];
  test_label(t, label, sizeof label);
  if (st->perf) st->perf[pos] = *res;
  clear_progress(st);
  switch (v) {
    case CONFORM_PASS:
      if (known) {
        fprintf(st->out, "%s %ld %s [%s]: passes but is listed as a known failure: remove it "
                "from %s\n", src, t->index, t->op, label, o->known_failures);
        report_case(st->rep, src, t->index, t->op, t->dtype, t->variant, REPORT_FAILED,
                    "passes but is listed as a known failure", res->seconds);
        st->total.failed++;
        recorded = CONFORM_FAIL;
        break;
      }
      if (o->verbose)
        fprintf(st->out, "%s %ld %s [%s]: ok\n", src, t->index, t->op, label);
      report_case(st->rep, src, t->index, t->op, t->dtype, t->variant, REPORT_PASSED, "",
                  res->seconds);
      st->total.passed++;
      break;
    case CONFORM_FAIL:
      if (known) {
        report_case(st->rep, src, t->index, t->op, t->dtype, t->variant, REPORT_PASSED,
                    "a known failure", res->seconds);
        st->total.xfailed++;
        recorded = 4; /* a known failure: neither passed nor failed */
        break;
      }
      {
        char hint[256];
        rerun_hint(t, hint, sizeof hint);
        fprintf(st->out, "%s %ld %s [%s]: %s  (rerun: %s)\n", src, t->index, t->op, label, res->why,
                hint);
      }
      report_case(st->rep, src, t->index, t->op, t->dtype, t->variant, REPORT_FAILED, res->why,
                  res->seconds);
      st->total.failed++;
      break;
    case CONFORM_SKIP:
      if (o->verbose)
        fprintf(st->out, "%s %ld %s [%s]: skipped: %s\n", src, t->index, t->op, label, res->why);
      report_case(st->rep, src, t->index, t->op, t->dtype, t->variant, REPORT_SKIPPED, res->why,
                  res->seconds);
      count_skip(st, res->why);
      st->total.skipped++;
      break;
    case CONFORM_INVALID:
      if (o->verbose)
        fprintf(st->out, "%s %ld %s [%s]: not a valid sample: %s\n", src, t->index, t->op, label,
                res->why);
      st->total.invalid++;
      break;
  }
  st->verdicts[pos] = recorded;
  st->done++;
  show_progress(st, false);
}

/* A test that crashed or hung its worker left no repro behind (the worker
 * writes one only after the backend returns): with --repro-dir, a fresh
 * process with ref alone reruns the test as the backend under test, with
 * the crash as the failure, which writes the graph, its inputs and ref's
 * outputs; replaying that file on the plugin crashes it again. The repro
 * is named at the end of res->why. The backend's plugin is never loaded
 * there, and the parent stays free of plugins as before. */
static void crash_repro(run_state *st, int pos, conform_result *res, double limit) {
  const conform_options *o = st->o;
  const conform_test *t = &st->s->tests[pos];
  char path[4096];
  conform_repro_path(o, t, path, sizeof path);
  if (!path[0] || !strcmp(o->backend, "meta")) return;
  unlink(path); /* a file from an earlier run must not pass for this one's */
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return;
  if (pid == 0) {
    signal(SIGPIPE, SIG_DFL);
    conform_env env = {.o = o, .backend = -1, .ref = -1, .repro_why = res->why};
    const char *only[1] = {"ref"};
    alloy_runtime_options ro = {.struct_size = ALLOY_RUNTIME_OPTIONS_STRUCT_SIZE,
                                .only_backends = only, .num_only_backends = 1};
    alloy_error *e = alloy_runtime_open(&ro, &env.rt);
    if (!e) {
      env.backend = env.ref = alloy_runtime_find_backend(env.rt, "ref");
      conform_result scratch;
      memset(&scratch, 0, sizeof scratch);
      t->source->check(t->source, t, &env, &scratch);
    }
    alloy_error_free(e);
    alloy_runtime_close(env.rt);
    fflush(NULL);
    _exit(0);
  }
  /* ref is the oracle and does not hang; the limit guards against it anyway. */
  double until = now_s() + limit;
  int status;
  pid_t done;
  while ((done = waitpid(pid, &status, WNOHANG)) == 0 && now_s() < until) usleep(2000);
  if (done == 0) {
    kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  size_t n = strlen(res->why);
  if (access(path, R_OK) == 0 && n < sizeof res->why)
    snprintf(res->why + n, sizeof res->why - n, " [repro: %.900s]", path);
}

/* Runs every test on -j workers; false when no worker could start (the
 * message is printed). */
static bool run_pool(run_state *st) {
  const conform_options *o = st->o;
  int jobs = o->jobs > 0 ? o->jobs : 1;
  if (jobs > st->s->n) jobs = st->s->n ? st->s->n : 1;
  pool p = {o, st->s, calloc((size_t)jobs, sizeof(worker)), jobs};
  if (!p.w) return false;
  for (int k = 0; k < jobs; k++) p.w[k].pos = -1;
  double limit = conform_timeout_s();
  int next = 0, busy = 0;
  bool ok = true;
  signal(SIGPIPE, SIG_IGN);
  while (ok && (next < st->s->n || busy)) {
    /* Hand out tests to idle workers, starting workers as needed. */
    for (int k = 0; k < jobs && next < st->s->n; k++) {
      worker *w = &p.w[k];
      if (w->pid && w->pos >= 0) continue;
      if (!w->pid && !worker_start(&p, k)) {
        fprintf(st->out, "alloy conform: cannot start a worker process: %s\n", strerror(errno));
        ok = false;
        break;
      }
      int64_t pos = next++;
      w->pos = (int)pos;
      w->started = now_s();
      busy++;
      if (!write_all(w->cmd, &pos, sizeof pos)) {
        /* It died before reading: its exit is collected below as a crash. */
      }
    }
    struct pollfd fds[64];
    int map[64], nf = 0;
    double wait = limit;
    for (int k = 0; k < jobs && nf < 64; k++) {
      if (!p.w[k].pid || p.w[k].pos < 0) continue;
      fds[nf] = (struct pollfd){p.w[k].res, POLLIN, 0};
      map[nf++] = k;
      double left = p.w[k].started + limit - now_s();
      if (left < wait) wait = left;
    }
    if (!nf) continue;
    int r = poll(fds, (nfds_t)nf, wait > 0 ? (int)(wait * 1000) + 1 : 0);
    if (r < 0 && errno != EINTR) break;
    for (int i = 0; i < nf; i++) {
      worker *w = &p.w[map[i]];
      int pos = w->pos;
      conform_result res = {0};
      if (fds[i].revents) {
        ssize_t k = read(w->res, w->buf + w->got, sizeof w->buf - w->got);
        if (k > 0) {
          w->got += (size_t)k;
          result_msg m;
          if (w->got < sizeof m) continue;
          memcpy(&m, w->buf, sizeof m);
          if (m.len < 0 || m.len >= (int32_t)sizeof res.why) m.len = (int32_t)sizeof res.why - 1;
          if (w->got < sizeof m + (size_t)m.len) continue;
          memcpy(res.why, w->buf + sizeof m, (size_t)m.len);
          res.why[m.len] = 0;
          res.backend_s = m.backend_s, res.ref_s = m.ref_s, res.bytes = m.bytes, res.flops = m.flops;
          res.seconds = m.seconds;
          w->got = 0;
          w->pos = -1;
          busy--;
          if (m.pos < 0) { /* the worker could not set up: nothing can run */
            clear_progress(st);
            fprintf(st->out, "alloy conform: %s\n", res.why);
            ok = false;
            break;
          }
          record(st, pos, (conform_verdict)m.verdict, &res);
          continue;
        }
        if (k < 0 && errno == EINTR) continue;
        res.seconds = now_s() - w->started;
        worker_end(&p, map[i], false, res.why, sizeof res.why);
        busy--;
        crash_repro(st, pos, &res, limit);
        record(st, pos, CONFORM_FAIL, &res);
      } else if (now_s() - w->started >= limit) {
        res.seconds = now_s() - w->started;
        worker_end(&p, map[i], true, NULL, 0);
        snprintf(res.why, sizeof res.why, "timed out after %.0f s (the worker was killed)", limit);
        busy--;
        crash_repro(st, pos, &res, limit);
        record(st, pos, CONFORM_FAIL, &res);
      }
    }
  }
  for (int k = 0; k < jobs; k++)
    if (p.w[k].pid) worker_end(&p, k, !ok, NULL, 0);
  free(p.w);
  return ok;
}

static bool run_here(run_state *st) {
  conform_env env;
  alloy_error *e = env_open(st->o, &env);
  if (e) {
    fprintf(st->out, "alloy conform: %s\n", alloy_error_message(e));
    alloy_error_free(e);
    alloy_runtime_close(env.rt);
    return false;
  }
  for (int pos = 0; pos < st->s->n; pos++) {
    conform_result res;
    conform_verdict v = run_one(st->s, pos, &env, &res);
    record(st, pos, v, &res);
  }
  alloy_runtime_close(env.rt);
  return true;
}

/* ---- the end of a run: tables and levels ------------------------------- */

static int by_op_dtype(const void *a, const void *b) {
  const conform_test *x = a, *y = b;
  int c = strcmp(x->op, y->op);
  return c ? c : strcmp(x->dtype, y->dtype);
}

/* Prints the table by op and dtype: the rows with failures to out, and
 * every row to --summary. Sorts a copy of the tests. */
static void print_tables(run_state *st) {
  int n = st->s->n;
  typedef struct {
    conform_test t;
    uint8_t v;
    conform_result perf;
  } row;
  row *rows = malloc(sizeof *rows * (size_t)(n ? n : 1));
  if (!rows) return;
  for (int i = 0; i < n; i++) {
    rows[i].t = st->s->tests[i];
    rows[i].v = st->verdicts[i];
    if (st->perf) rows[i].perf = st->perf[i];
  }
  qsort(rows, (size_t)n, sizeof *rows, by_op_dtype);
  FILE *sum = st->o->summary ? fopen(st->o->summary, "w") : NULL;
  if (st->o->summary && !sum) fprintf(st->out, "alloy conform: %s: cannot write\n", st->o->summary);
  if (sum) fprintf(sum, "| op | dtype | passed | failed | skipped | not valid |\n|---|---|---|---|---|---|\n");
  int shown = 0;
  bool perf_header = false;
  for (int i = 0; i < n;) {
    int j = i;
    tally c = {0};
    double bs = 0, rs = 0, bytes = 0, flops = 0;
    for (; j < n && !by_op_dtype(&rows[i].t, &rows[j].t); j++) {
      switch (rows[j].v) {
        case CONFORM_PASS: c.passed++; break;
        case CONFORM_FAIL: c.failed++; break;
        case CONFORM_SKIP: c.skipped++; break;
        case CONFORM_INVALID: c.invalid++; break;
        default: c.xfailed++; break;
      }
      if (st->perf && rows[j].perf.backend_s > 0 && rows[j].v == CONFORM_PASS) {
        bs += rows[j].perf.backend_s, rs += rows[j].perf.ref_s;
        bytes += rows[j].perf.bytes, flops += rows[j].perf.flops;
      }
    }
    if (sum)
      fprintf(sum, "| %s | %s | %d | %d | %d | %d |\n", rows[i].t.op, rows[i].t.dtype, c.passed,
              c.failed, c.skipped, c.invalid);
    if (c.failed) {
      if (shown++ == 0) fprintf(st->out, "\nfailures by op and dtype (passed/failed/skipped):\n");
      if (shown <= 40)
        fprintf(st->out, "  %-44s %-9s %5d %5d %5d\n", rows[i].t.op, rows[i].t.dtype, c.passed,
                c.failed, c.skipped);
    }
    if (bs > 0) {
      if (!perf_header) {
        perf_header = true;
        fprintf(st->out, "\n%-44s %-9s %10s %10s %10s %10s %8s\n", "perf: op", "dtype",
                "GB/s", "GFLOP/s", "ref GB/s", "ref GFLOP/s", "vs ref");
      }
      fprintf(st->out, "%-44s %-9s %10.3f %10.3f %10.3f %10.3f %7.2fx\n", rows[i].t.op,
              rows[i].t.dtype, bytes / bs * 1e-9, flops / bs * 1e-9, bytes / rs * 1e-9,
              flops / rs * 1e-9, rs / bs);
    }
    i = j;
  }
  if (shown > 40) fprintf(st->out, "  ... and %d more rows (--summary FILE has them all)\n", shown - 40);
  if (sum) fclose(sum);
  free(rows);
}

static const struct {
  const char *name;
  unsigned set;
  const char *promise;
} levels[] = {
    {"prims", CONFORM_SET_PRIMS, "every prims op sample runs and passes"},
    {"core-aten", CONFORM_SET_CORE, "every Core ATen op runs (claimed or decomposed) and passes"},
    {"aten", CONFORM_SET_OTHER, "every other ATen op in the registry runs and passes"},
    {"models", CONFORM_SET_GRAPH, "every graph-level test and model runs and passes"},
};

static void print_levels(run_state *st) {
  tally all = st->total;
  fprintf(st->out, "\nlevels:\n");
  fprintf(st->out, "  %-10s %s: %d ran, %d failed\n", "claimed",
          all.failed == 0 && all.passed ? "reached" : "not reached",
          all.passed + all.failed + all.xfailed, all.failed);
  for (size_t l = 0; l < sizeof levels / sizeof levels[0]; l++) {
    tally c = {0};
    for (int i = 0; i < st->s->n; i++) {
      if (!(st->s->tests[i].set & levels[l].set)) continue;
      switch (st->verdicts[i]) {
        case CONFORM_PASS: c.passed++; break;
        case CONFORM_FAIL: c.failed++; break;
        case CONFORM_SKIP: c.skipped++; break;
        case CONFORM_INVALID: c.invalid++; break;
        default: c.xfailed++; break;
      }
    }
    if (!c.passed && !c.failed && !c.skipped && !c.xfailed) {
      fprintf(st->out, "  %-10s not tested\n", levels[l].name);
      continue;
    }
    bool reached = !c.failed && !c.skipped && c.passed;
    fprintf(st->out, "  %-10s %s: %d passed, %d failed, %d skipped", levels[l].name,
            reached ? "reached" : "not reached", c.passed, c.failed, c.skipped);
    if (c.xfailed) fprintf(st->out, ", %d known failures", c.xfailed);
    fprintf(st->out, " (%s)\n", levels[l].promise);
  }
}

/* ---- the run -------------------------------------------------------------- */

typedef conform_source (*source_fn)(void);
static const source_fn source_fns[] = {conform_replay_source, conform_samples_source,
                                       conform_golden_source, conform_graphs_source,
                                       conform_abi_source};
enum { NSOURCES = sizeof source_fns / sizeof source_fns[0] };

int conform_run(const conform_options *o, FILE *out) {
  conform_source sources[NSOURCES];
  conform_suite suite = {0};
  run_state st = {.o = o, .s = &suite, .out = out};
  int status = 2;
  for (int i = 0; i < NSOURCES; i++) sources[i] = source_fns[i]();
  for (int i = 0; i < NSOURCES; i++) {
    alloy_error *e = sources[i].list(&sources[i], o, &suite);
    if (e) {
      fprintf(out, "alloy conform: %s\n", alloy_error_message(e));
      alloy_error_free(e);
      goto done;
    }
  }
  if (o->known_failures) {
    alloy_error *e = load_known_failures(o->known_failures, o, &st.known);
    if (e) {
      fprintf(out, "alloy conform: %s\n", alloy_error_message(e));
      alloy_error_free(e);
      goto done;
    }
  }
  alloy_error *re = report_open(o->json, o->junit, &st.rep);
  if (re) {
    fprintf(out, "alloy conform: %s\n", alloy_error_message(re));
    alloy_error_free(re);
    goto done;
  }
  st.verdicts = malloc((size_t)(suite.n ? suite.n : 1));
  st.perf = o->perf ? calloc((size_t)(suite.n ? suite.n : 1), sizeof *st.perf) : NULL;
  if (!st.verdicts || (o->perf && !st.perf)) {
    fprintf(out, "alloy conform: out of memory\n");
    report_close(st.rep, "");
    goto done;
  }
  memset(st.verdicts, 255, (size_t)suite.n);
  st.tty = isatty(fileno(stderr)) && !o->verbose;
  st.start = now_s();
  for (int i = 0; i < suite.nnotes; i++) fprintf(out, "%s\n", suite.notes[i]);
  fprintf(out, "alloy conform: %d tests on %s", suite.n, o->backend);
  if (!o->no_fork) fprintf(out, ", %d worker%s", o->jobs > 1 ? o->jobs : 1, o->jobs > 1 ? "s" : "");
  fprintf(out, "\n");
  fflush(out);
  bool ran = o->no_fork ? run_here(&st) : run_pool(&st);
  clear_progress(&st);
  char name[160];
  snprintf(name, sizeof name, "alloy conform --backend %s", o->backend);
  if ((re = report_close(st.rep, name))) {
    fprintf(out, "alloy conform: %s\n", alloy_error_message(re));
    alloy_error_free(re);
    st.total.failed++;
  }
  if (!ran) goto done;
  print_tables(&st);
  for (int i = 0; i < st.nskips; i++)
    fprintf(out, "skipped %d: %s\n", st.skips[i].count, st.skips[i].reason);
  if (st.total.invalid)
    fprintf(out, "%d generated samples the reference backend rejects were not run (-v lists them)\n",
            st.total.invalid);
  if (st.total.xfailed)
    fprintf(out, "%d known failures (listed in %s)\n", st.total.xfailed, o->known_failures);
  if (!o->replay) print_levels(&st);
  fprintf(out, "%.1f s\n", now_s() - st.start);
  fprintf(out, "%d passed, %d failed, %d skipped\n", st.total.passed, st.total.failed,
          st.total.skipped);
  status = st.total.failed ? 1 : 0;
done:
  for (int i = 0; i < NSOURCES; i++)
    if (sources[i].close) sources[i].close(&sources[i]);
  free(suite.tests);
  for (int i = 0; i < suite.nnotes; i++) free(suite.notes[i]);
  free(suite.notes);
  free(st.verdicts);
  free(st.perf);
  free(st.known.items);
  return status;
}
