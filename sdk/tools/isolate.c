/*
 * sdk/tools/isolate.c: `alloy run --isolate` (isolate.h). A plugin is code
 * Alloy trusts, but a plugin being debugged crashes, hangs and calls
 * exit(); here each one works in a process of its own, so that the run
 * can say which backend ended how, doing what, and exit with a status of
 * its own. `alloy conform` does the same per test (conformance/suite.c).
 *
 * This process never loads a plugin: a device is initialized only in the
 * child that uses it (CUDA cannot cross a fork), and a plugin that dies on
 * load dies in a child too. What runs where:
 *
 *   - one backend listed (`--backends devsim`): one child opens it and
 *     compiles the whole model on it, as `alloy run` would in process, and
 *     then runs it once per request; when its compile fails, the model
 *     runs here on the reference backend, as without --isolate;
 *   - several (`--backends devsim,ref`): for each set of input sizes, a
 *     planning child opens them all, compiles the mixture exactly as
 *     `alloy run` would (claims, partitioning, the compile fallbacks,
 *     folding) and sends back the plan: the partitioned graph as .air
 *     text, the partition of every node, each partition's backend and the
 *     folded constants. Then each plugin gets one child, which opens that
 *     backend alone and compiles its partitions as the mixture does
 *     (program_compile_lowered, on the same extracted graphs); the
 *     reference backend's partitions compile and run here. A run walks the
 *     partitions in order, handing each child its inputs and taking its
 *     outputs over a socket.
 *
 * The children stay for the whole run (and every --repeat), so a plugin
 * keeps its state across runs as it would in process, weights are copied
 * to it once, and the outputs are the bits a run without --isolate gives:
 * same graphs, same kernels, same order. A new set of input sizes plans
 * again and starts the plugins' children again (one plan at a time).
 *
 * A child that dies ends the run: the partition is not retried on the
 * reference backend, since the point of --isolate is to find the plugin's
 * bug, not to hide it (docs/security.md).
 *
 * A child writes what it is doing (opening, planning, compiling or
 * executing partition q, closing) in a page it shares with this process;
 * when it dies, or outlives --isolate-timeout and is killed, the error is
 * built from that page and its wait status:
 *
 *   backend 'crashy' died (signal 11, SIGSEGV) while executing partition 1
 *   (node 2: aten.relu.default)
 *
 * The messages on the sockets are a length and a payload; everything a
 * child sends is checked before it is believed (its process ran plugin
 * code), and tensor data sits at 64-byte offsets of a 64-byte-aligned
 * payload, so that it can be used where it lies.
 */
#include "sdk/tools/isolate.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "alloy/graph.h"
#include "ir/ir.h"
#include "sdk/src/runtime_internal.h"
#include "sdk/tools/commands.h"

/* ---- messages --------------------------------------------------------------------- */

enum { MSG_ALIGN = 64 };
/* A payload past this is a child's garbage, not a tensor anyone sent. */
#define MSG_MAX ((uint64_t)1 << 40)

/* A child's answer: done; failed; failed compiling the model on its
 * backend (the reference backend takes it); failed setting the backend's
 * options (a run without --isolate fails on the reference backend too,
 * setting them again on the plugin). */
enum { REPLY_OK = 0, REPLY_FAILED = 1, REPLY_FALLBACK = 2, REPLY_OPTIONS = 3 };
enum { REQ_RUN = 1, REQ_PREPARE = 2 };

static alloy_error *oom(void) {
  return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A payload being written. */
typedef struct wbuf {
  char *p;
  size_t n, cap;
  bool failed;
} wbuf;

static void put(wbuf *b, const void *src, size_t n) {
  if (b->failed) return;
  if (b->n + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + n) cap *= 2;
    char *grown = realloc(b->p, cap);
    if (!grown) {
      b->failed = true;
      return;
    }
    b->p = grown;
    b->cap = cap;
  }
  if (n) memcpy(b->p + b->n, src, n);
  b->n += n;
}

static void put_u64(wbuf *b, uint64_t v) { put(b, &v, sizeof v); }

static void put_str(wbuf *b, const char *s) {
  size_t n = s ? strlen(s) : 0;
  put_u64(b, n);
  put(b, s, n);
}

static void put_align(wbuf *b) {
  static const char zeros[MSG_ALIGN];
  put(b, zeros, (MSG_ALIGN - b->n % MSG_ALIGN) % MSG_ALIGN);
}

static uint64_t tensor_bytes(const alloy_host_tensor *t) {
  uint64_t n = alloy_dtype_size(t->dtype);
  for (int d = 0; d < t->rank; d++) n *= (uint64_t)t->sizes[d];
  return n;
}

/* dtype, rank, sizes, bytes, then the data at an aligned offset. */
static void put_tensor(wbuf *b, const alloy_host_tensor *t) {
  uint64_t bytes = tensor_bytes(t);
  put_u64(b, (uint64_t)t->dtype);
  put_u64(b, (uint64_t)t->rank);
  for (int d = 0; d < t->rank; d++) put_u64(b, (uint64_t)t->sizes[d]);
  put_u64(b, bytes);
  put_align(b);
  put(b, t->data, (size_t)bytes);
}

/* A payload being read: every read is bounds-checked, and the first that
 * fails marks the whole message bad. */
typedef struct rbuf {
  const char *p;
  size_t n, at;
  bool bad;
} rbuf;

static const void *get(rbuf *r, uint64_t n) {
  if (r->bad || n > r->n - r->at) {
    r->bad = true;
    return NULL;
  }
  const void *at = r->p + r->at;
  r->at += (size_t)n;
  return at;
}

static uint64_t get_u64(rbuf *r) {
  uint64_t v = 0;
  const void *p = get(r, sizeof v);
  if (p) memcpy(&v, p, sizeof v);
  return v;
}

/* A string of the payload, copied (NULL when the payload is bad). */
static char *get_str(rbuf *r) {
  uint64_t n = get_u64(r);
  const char *p = get(r, n);
  return p ? strndup(p, (size_t)n) : NULL;
}

static void get_align(rbuf *r) {
  size_t pad = (MSG_ALIGN - r->at % MSG_ALIGN) % MSG_ALIGN;
  get(r, pad);
}

/* A tensor of the payload: sizes copied into sizes[ALLOY_MAX_RANK], data
 * left where it lies. False when it is no tensor: an unknown dtype, a rank
 * past ALLOY_MAX_RANK, a negative size, or bytes that do not match. */
static bool get_tensor(rbuf *r, alloy_host_tensor *t, int64_t *sizes) {
  uint64_t dtype = get_u64(r), rank = get_u64(r);
  if (r->bad || dtype >= ALLOY_DTYPE_COUNT || !alloy_dtype_size((alloy_dtype)dtype) ||
      rank > ALLOY_MAX_RANK)
    return r->bad = true, false;
  uint64_t want = alloy_dtype_size((alloy_dtype)dtype);
  for (uint64_t d = 0; d < rank; d++) {
    uint64_t s = get_u64(r);
    if (s > (uint64_t)INT64_MAX || __builtin_mul_overflow(want, s, &want)) return r->bad = true, false;
    sizes[d] = (int64_t)s;
  }
  uint64_t bytes = get_u64(r);
  get_align(r);
  const void *data = get(r, bytes);
  if (r->bad || bytes != want) return r->bad = true, false;
  *t = (alloy_host_tensor){.struct_size = ALLOY_HOST_TENSOR_STRUCT_SIZE, .dtype = (alloy_dtype)dtype,
                           .rank = (int32_t)rank, .sizes = sizes, .data = (void *)data};
  return true;
}

/* Moves n bytes through the socket fd (out: send, else receive) before the
 * deadline (now_s() seconds; INFINITY: none). 0 when done, -1 when the
 * other end closed or failed, -2 when the deadline passed. Sending never
 * raises SIGPIPE: a dead child is an answer, not a reason to die. */
static int io_move(int fd, char *p, size_t n, bool out, double deadline) {
  while (n) {
    double left = deadline - now_s();
    if (left <= 0) return -2;
    struct pollfd pf = {fd, out ? POLLOUT : POLLIN, 0};
    int ms = isinf(deadline) ? -1 : left > 1e6 ? 1000000000 : (int)(left * 1000) + 1;
    int k = poll(&pf, 1, ms);
    if (k < 0 && errno != EINTR) return -1;
    if (k <= 0) continue;
    ssize_t got = out ? send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT) : recv(fd, p, n, MSG_DONTWAIT);
    if (got < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (got <= 0) return -1;
    p += got;
    n -= (size_t)got;
  }
  return 0;
}

static int msg_send(int fd, const wbuf *b, double deadline) {
  uint64_t len = b->n;
  int r = io_move(fd, (char *)&len, sizeof len, true, deadline);
  return r ? r : io_move(fd, b->p, b->n, true, deadline);
}

/* One message into a fresh aligned payload (*out, freed by the caller). */
static int msg_recv(int fd, char **out, size_t *len, double deadline) {
  uint64_t n = 0;
  *out = NULL;
  int r = io_move(fd, (char *)&n, sizeof n, false, deadline);
  if (r) return r;
  if (n > MSG_MAX) return -1;
  size_t cap = ((size_t)n + MSG_ALIGN - 1) / MSG_ALIGN * MSG_ALIGN;
  char *p = aligned_alloc(MSG_ALIGN, cap ? cap : MSG_ALIGN);
  if (!p) return -1;
  if ((r = io_move(fd, p, (size_t)n, false, deadline))) {
    free(p);
    return r;
  }
  *out = p;
  *len = (size_t)n;
  return 0;
}

/* ---- children ------------------------------------------------------------------------ */

/* What a child is doing, in the page it shares with this process. */
enum phase { PHASE_START, PHASE_OPENING, PHASE_PLANNING, PHASE_COMPILING, PHASE_IDLE,
             PHASE_EXECUTING, PHASE_CLOSING };
typedef struct child_page {
  volatile int phase;
  volatile int part; /* the partition of COMPILING and EXECUTING; -1: the whole model */
} child_page;

typedef struct child {
  pid_t pid;        /* 0 once reaped */
  int fd;           /* this process's end of the socket pair */
  child_page *page; /* shared, one page */
  char *who;        /* "backend 'crashy'", for messages */
} child;

struct isolate;
typedef void (*child_main_fn)(struct isolate *iso, int fd, child_page *page, void *ctx);

/* A partition of the plan (or, with one backend listed, the whole model). */
typedef struct src {
  int part;  /* -1: input `index` of the plan graph */
  int index; /* else output `index` of partition `part` */
} src;

typedef struct part {
  char *backend;          /* its backend, as the list names it                */
  bool here;              /* the reference backend: compiled and run here      */
  int nnodes;
  char *desc;             /* "nodes 14..37: aten.mm.default, ..."              */
  alloy_graph *sub;       /* its graph (NULL: the model, compiled by the child) */
  alloy_program *prog;    /* here: compiled on the reference backend           */
  int nin, nout;
  src *in;                /* nin                                               */
  alloy_host_tensor *tmpl; /* nin: the tensors its worker has from the fork
                           * (weights, folded constants); data NULL for those
                           * sent with every run                              */
  int worker, job;        /* a plugin's: its worker, and its job number there  */
  alloy_host_tensor *out; /* nout: the last run's outputs                      */
  int64_t *out_sizes;     /* nout * ALLOY_MAX_RANK                             */
  char *payload;          /* the reply they point into                         */
  alloy_run_stats stats;  /* its program's counters since it was compiled      */
} part;

typedef struct worker {
  child c;
  char *backend;
  int njobs;
  int *jobs;              /* partition numbers */
} worker;

/* What one set of input sizes runs: partitions, the children that run the
 * plugins' ones, and the plan graph's inputs. */
typedef struct plan {
  int64_t *key;           /* dtype, rank and sizes of every input it is for */
  int nkey;
  alloy_graph *graph;     /* NULL with one backend listed */
  int ninputs;            /* the plan graph's: the caller's, then folded constants */
  alloy_host_tensor *full; /* ninputs: a run's inputs */
  int64_t *full_sizes;    /* ninputs * ALLOY_MAX_RANK: of the resident ones */
  char *plan_payload;     /* the planner's reply (the folded data lies there) */
  int npart;
  part *parts;
  int nworkers;
  worker *workers;
  src *outputs;           /* by plan graph output */
  int noutputs;
  uint64_t fallbacks, folded_nodes;
  bool ready;             /* planned, and every partition compiled */
} plan;

struct isolate {
  alloy_runtime *rt;      /* the reference backend alone */
  int ref;
  isolate_config c;
  char *plugins;          /* the listed backends but ref: "crashy, devsim" */
  int nplugins;
  bool mixture;
  plan *plan;             /* the current one */
  alloy_program *local;   /* one backend listed whose compile failed: ref runs it here */
  char *used;             /* the backend that runs the model (one listed) */
  int lowered_nodes;      /* its graph's nodes, from the child; -1 unknown */
  alloy_run_stats gone;   /* counters of plans already ended */
  uint64_t runs;
};

/* Appends to buf (of cap bytes, len used so far), never past it. */
static void cat(char *buf, size_t cap, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void cat(char *buf, size_t cap, size_t *len, const char *fmt, ...) {
  if (*len >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(buf + *len, cap - *len, fmt, ap);
  va_end(ap);
  if (k > 0) *len = *len + (size_t)k < cap ? *len + (size_t)k : cap;
}

/* "nodes 14..37: aten.mm.default, aten.add.Tensor, ..." for the nodes of g
 * (indices, increasing): a few ranges, then a few distinct ops. */
static char *nodes_text(const alloy_graph *g, const int *nodes, int n) {
  if (n == 0) return strdup("no nodes");
  char buf[512];
  size_t len = 0;
  cat(buf, sizeof buf, &len, n == 1 ? "node " : "nodes ");
  int ranges = 0;
  for (int i = 0; i < n;) {
    int j = i;
    while (j + 1 < n && nodes[j + 1] == nodes[j] + 1) j++;
    if (ranges == 4) {
      cat(buf, sizeof buf, &len, ", ...");
      break;
    }
    if (i == j) cat(buf, sizeof buf, &len, "%s%d", ranges ? ", " : "", nodes[i]);
    else cat(buf, sizeof buf, &len, "%s%d..%d", ranges ? ", " : "", nodes[i], nodes[j]);
    ranges++;
    i = j + 1;
  }
  const alloy_op *seen[3];
  int nseen = 0;
  for (int i = 0; i < n; i++) {
    const alloy_op *op = alloy_node_op(alloy_graph_node(g, nodes[i]));
    bool known = false;
    for (int k = 0; k < nseen; k++) known |= seen[k] == op;
    if (known) continue;
    if (nseen == 3) {
      cat(buf, sizeof buf, &len, ", ...");
      break;
    }
    cat(buf, sizeof buf, &len, "%s%s", nseen ? ", " : ": ", alloy_op_name(op));
    seen[nseen++] = op;
  }
  return strdup(buf);
}

/* What partition q is, for messages: "partition 1 (node 2: aten.relu.default)". */
static void part_text(const isolate *iso, int q, char *buf, size_t cap) {
  const plan *p = iso->plan;
  const part *pt = !p                 ? NULL
                   : q < 0             ? (iso->mixture ? NULL : &p->parts[0])
                   : q < p->npart      ? &p->parts[q]
                                       : NULL;
  const char *desc = pt && pt->desc ? pt->desc : "";
  if (q < 0) snprintf(buf, cap, "the model%s%s%s", *desc ? " (" : "", desc, *desc ? ")" : "");
  else snprintf(buf, cap, "partition %d%s%s%s", q, *desc ? " (" : "", desc, *desc ? ")" : "");
}

/* What the child was doing, from its page. */
static void doing_text(const isolate *iso, const child *c, char *buf, size_t cap) {
  char what[600];
  int q = c->page->part;
  switch (c->page->phase) {
  case PHASE_OPENING:
    snprintf(buf, cap, "opening");
    break;
  case PHASE_PLANNING:
    snprintf(buf, cap, "claiming and compiling, planning the partitions over %s", iso->c.list);
    break;
  case PHASE_COMPILING:
    part_text(iso, q, what, sizeof what);
    snprintf(buf, cap, "compiling %s", what);
    break;
  case PHASE_EXECUTING:
    part_text(iso, q, what, sizeof what);
    snprintf(buf, cap, "executing %s", what);
    break;
  case PHASE_IDLE:
    snprintf(buf, cap, "waiting for work between runs");
    break;
  case PHASE_CLOSING:
    snprintf(buf, cap, "closing");
    break;
  default:
    snprintf(buf, cap, "starting");
  }
}

/* Forks a child that runs fn (never returning) on its end of a socket
 * pair; the others' sockets are closed there, so that each child's end of
 * file comes when this process closes its end. */
static alloy_error *child_start(isolate *iso, const char *who, child *c, child_main_fn fn,
                                void *ctx) {
  memset(c, 0, sizeof *c);
  c->fd = -1;
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return alloy_error_new(ALLOY_ERR_INTERNAL, "--isolate: socketpair: %s", strerror(errno));
  c->page = mmap(NULL, sizeof *c->page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  c->who = strdup(who);
  if (c->page == MAP_FAILED || !c->who) {
    close(sv[0]), close(sv[1]);
    if (c->page != MAP_FAILED) munmap(c->page, sizeof *c->page);
    c->page = NULL;
    return oom();
  }
  c->page->phase = PHASE_START;
  c->page->part = -1;
  fflush(NULL); /* or what stdio holds would be written twice */
  pid_t parent = getpid(), pid = fork();
  if (pid < 0) {
    close(sv[0]), close(sv[1]);
    return alloy_error_new(ALLOY_ERR_INTERNAL, "--isolate: fork: %s", strerror(errno));
  }
  if (pid == 0) {
    /* A child outlives no `alloy run` (killed by a timeout of its own, or
     * by a user): a hung plugin would sleep on forever. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    close(sv[0]);
    plan *p = iso->plan;
    for (int w = 0; p && w < p->nworkers; w++)
      if (p->workers[w].c.fd >= 0) close(p->workers[w].c.fd);
    signal(SIGPIPE, SIG_DFL);
    fn(iso, sv[1], c->page, ctx);
    fflush(NULL);
    _exit(0);
  }
  close(sv[1]);
  c->pid = pid;
  c->fd = sv[0];
  return NULL;
}

/* How a child ended. */
typedef enum ending { ENDED_CLEANLY, ENDED_BADLY, ENDED_KILLED } ending;

/* Waits for the child to end (killing it first when kill_it, or once the
 * deadline passes) and says how in how: "died (signal 11, SIGSEGV)",
 * "exited with status 3". */
static ending child_reap(child *c, bool kill_it, double deadline, char *how, size_t cap) {
  if (c->fd >= 0) close(c->fd);
  c->fd = -1;
  snprintf(how, cap, "was gone");
  if (!c->pid) return ENDED_CLEANLY;
  if (kill_it) kill(c->pid, SIGKILL);
  int status = 0;
  for (;;) {
    pid_t r = waitpid(c->pid, &status, WNOHANG);
    if (r == c->pid || (r < 0 && errno != EINTR)) break;
    if (r == 0 && !kill_it && now_s() > deadline) {
      kill(c->pid, SIGKILL);
      kill_it = true;
    }
    if (r == 0) usleep(2000);
  }
  c->pid = 0;
  if (kill_it) return ENDED_KILLED;
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char *abbrev = sigabbrev_np(sig);
    snprintf(how, cap, "died (signal %d, SIG%s%s)", sig, abbrev ? abbrev : "?",
             WCOREDUMP(status) ? ", core dumped" : "");
    return ENDED_BADLY;
  }
  snprintf(how, cap, "exited with status %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? ENDED_CLEANLY : ENDED_BADLY;
}

static void child_free(child *c) {
  if (c->page) munmap(c->page, sizeof *c->page);
  free(c->who);
  memset(c, 0, sizeof *c);
  c->fd = -1;
}

/* The error for a child that ended (or was killed) while doing what its
 * page says. */
static alloy_error *child_error(isolate *iso, child *c, ending how_ended, const char *how) {
  char doing[800];
  doing_text(iso, c, doing, sizeof doing);
  if (how_ended == ENDED_KILLED)
    return alloy_error_new(ALLOY_ERR_UNAVAILABLE, "%s did not finish %s within %g s "
                           "(--isolate-timeout): its process was killed", c->who, doing,
                           iso->c.timeout_s);
  return alloy_error_new(ALLOY_ERR_INTERNAL, "%s %s while %s", c->who, how, doing);
}

/* The error for a child that stopped answering: r is what io_move said
 * (-2: the deadline passed, and the child is killed; -1: it closed its
 * end, so it is ending, or a plugin ended it). */
static alloy_error *child_lost(isolate *iso, child *c, int r) {
  char how[128];
  ending end = child_reap(c, r == -2, now_s() + iso->c.timeout_s, how, sizeof how);
  return child_error(iso, c, end == ENDED_CLEANLY ? ENDED_BADLY : end,
                     end == ENDED_CLEANLY ? "exited with status 0" : how);
}

/* A child's answer to a request: its payload, or the error for its end. */
static alloy_error *child_answer(isolate *iso, child *c, char **payload, size_t *len) {
  int r = msg_recv(c->fd, payload, len, now_s() + iso->c.timeout_s);
  return r ? child_lost(iso, c, r) : NULL;
}

/* Ends a child that did its work: on end of file it closes its backend
 * and exits; dying or hanging there is an error too (in process, it would
 * have taken `alloy run` down at its end). */
static alloy_error *child_end(isolate *iso, child *c) {
  if (!c->pid) return NULL;
  char how[128];
  ending end = child_reap(c, false, now_s() + iso->c.timeout_s, how, sizeof how);
  return end == ENDED_CLEANLY ? NULL : child_error(iso, c, end, how);
}

/* A failure the child reported (not its death): "status, message". */
static alloy_error *reply_error(rbuf *r, int *status) {
  *status = (int)get_u64(r);
  if (r->bad) return alloy_error_new(ALLOY_ERR_INTERNAL, "--isolate: a child sent a short reply");
  if (*status == REPLY_OK) return NULL;
  char *msg = get_str(r);
  alloy_error *e = alloy_error_new(ALLOY_ERR_INTERNAL, "%s", msg ? msg : "(a garbled reply)");
  free(msg);
  return e;
}

/* Sends the child's failure and ends it. */
static _Noreturn void child_fail(int fd, int status, alloy_error *e) {
  wbuf b = {0};
  put_u64(&b, (uint64_t)status);
  put_str(&b, alloy_error_message(e));
  alloy_error_free(e);
  if (!b.failed) msg_send(fd, &b, INFINITY);
  fflush(NULL);
  _exit(0);
}

/* ---- the lists ------------------------------------------------------------------------ */

static bool is_ref(const char *name) { return !strcasecmp(name, "ref"); }

bool isolate_wanted(const char *list) {
  char names[1024];
  snprintf(names, sizeof names, "%s", list ? list : "");
  for (char *save = NULL, *n = strtok_r(names, ",", &save); n; n = strtok_r(NULL, ",", &save))
    if (!is_ref(n)) return true;
  return false;
}

alloy_error *isolate_runtime_open(alloy_runtime **out) {
  /* No folder is searched, and the list names nothing a file could be:
   * only the built-in reference backend opens. */
  const char *only[1] = {"ref"};
  alloy_runtime_options o = {.struct_size = ALLOY_RUNTIME_OPTIONS_STRUCT_SIZE,
                             .no_default_paths = true, .only_backends = only,
                             .num_only_backends = 1};
  return alloy_runtime_open(&o, out);
}

/* Sets the backend options of o meant for `name` on backend b of rt. */
static alloy_error *options_apply(alloy_runtime *rt, int b, const char *name,
                                  const alloy_program_options *o) {
  for (int i = 0; o && i < o->num_backend_options; i++) {
    const char *key = o->backend_options[i].key, *dot = key ? strchr(key, '.') : NULL;
    if (!dot || strlen(name) != (size_t)(dot - key) || strncasecmp(key, name, (size_t)(dot - key)))
      continue;
    alloy_error *e = alloy_runtime_set_backend_option(rt, b, dot + 1, o->backend_options[i].value);
    if (e) return e;
  }
  return NULL;
}

/* ---- the workers: one plugin each -------------------------------------------------------- */

typedef struct worker_ctx {
  int w; /* the worker of iso->plan; -1: the whole model on iso->used */
} worker_ctx;

/* A worker's life: open its backend alone, compile its jobs, then run
 * what it is sent until end of file. Never returns. */
static void worker_main(isolate *iso, int fd, child_page *page, void *ctx) {
  const worker_ctx *wc = ctx;
  plan *p = iso->plan;
  const char *name = wc->w >= 0 ? p->workers[wc->w].backend : iso->used;
  int njobs = wc->w >= 0 ? p->workers[wc->w].njobs : 1;
  const int *jobs = wc->w >= 0 ? p->workers[wc->w].jobs : NULL;
  page->phase = PHASE_OPENING;
  alloy_runtime *rt = NULL;
  alloy_error *e = tool_runtime_open(name, &rt);
  int b = e ? -1 : alloy_runtime_find_backend(rt, name);
  if (!e && b < 0)
    e = alloy_error_new(ALLOY_ERR_NOT_FOUND, "no usable backend '%s' (see alloy backends)", name);
  if (e) child_fail(fd, REPLY_FAILED, e);
  alloy_program **progs = calloc((size_t)njobs, sizeof *progs);
  if (!progs) child_fail(fd, REPLY_FAILED, oom());
  int lowered = -1;
  if (wc->w < 0) {
    /* The whole model, as `alloy run` compiles it on one backend. */
    page->part = -1;
    page->phase = PHASE_COMPILING;
    if ((e = program_options_apply(rt, iso->c.options))) child_fail(fd, REPLY_OPTIONS, e);
    if ((e = alloy_program_compile_ex(rt, b, iso->c.graph, iso->c.options, &progs[0])))
      child_fail(fd, REPLY_FALLBACK, e);
    lowered = alloy_graph_num_nodes(alloy_program_graph(progs[0]));
  } else {
    if ((e = options_apply(rt, b, name, iso->c.options))) child_fail(fd, REPLY_FAILED, e);
    for (int k = 0; k < njobs; k++) {
      alloy_graph *g = NULL;
      page->part = jobs[k];
      page->phase = PHASE_COMPILING;
      if (!(e = alloy_graph_clone(p->parts[jobs[k]].sub, &g)))
        e = program_compile_lowered(rt, b, g, &progs[k]);
      if (e) child_fail(fd, REPLY_FAILED, alloy_error_wrap(e, "partition %d", jobs[k]));
    }
  }
  page->phase = PHASE_IDLE;
  wbuf b0 = {0};
  put_u64(&b0, REPLY_OK);
  put_u64(&b0, (uint64_t)(int64_t)lowered);
  if (b0.failed || msg_send(fd, &b0, INFINITY)) _exit(1);
  free(b0.p);
  /* Requests: kind, job, outputs wanted, then the inputs the template lacks. */
  for (;;) {
    char *req = NULL;
    size_t len = 0;
    if (msg_recv(fd, &req, &len, INFINITY)) break;
    rbuf r = {req, len, 0, false};
    uint64_t kind = get_u64(&r), k = get_u64(&r), nout = get_u64(&r);
    part *pt = r.bad || k >= (uint64_t)njobs ? NULL : wc->w >= 0 ? &p->parts[jobs[k]] : &p->parts[0];
    if (!pt || nout > (uint64_t)pt->nout) _exit(1); /* not a request this process's parent sends */
    alloy_host_tensor *ins = calloc((size_t)pt->nin + 1, sizeof *ins);
    int64_t *sizes = calloc((size_t)pt->nin * ALLOY_MAX_RANK + 1, sizeof *sizes);
    alloy_host_tensor *outs = calloc((size_t)nout + 1, sizeof *outs);
    if (!ins || !sizes || !outs) _exit(1);
    for (uint64_t o = 0; o < nout; o++) outs[o].struct_size = ALLOY_HOST_TENSOR_STRUCT_SIZE;
    for (int j = 0; j < pt->nin; j++)
      if (!(ins[j] = pt->tmpl[j]).data && !get_tensor(&r, &ins[j], &sizes[j * ALLOY_MAX_RANK]))
        _exit(1);
    page->part = wc->w >= 0 ? jobs[k] : -1;
    page->phase = kind == REQ_PREPARE ? PHASE_COMPILING : PHASE_EXECUTING;
    e = kind == REQ_PREPARE ? alloy_program_prepare(progs[k], ins, pt->nin)
                            : alloy_program_run(progs[k], ins, pt->nin, outs, (int)nout);
    page->phase = PHASE_IDLE;
    wbuf w = {0};
    put_u64(&w, e ? REPLY_FAILED : REPLY_OK);
    if (e) {
      put_str(&w, alloy_error_message(e));
      alloy_error_free(e);
    } else if (kind == REQ_RUN) {
      for (uint64_t o = 0; o < nout; o++) put_tensor(&w, &outs[o]);
      alloy_run_stats st = {.struct_size = ALLOY_RUN_STATS_STRUCT_SIZE};
      alloy_program_stats(progs[k], &st);
      put(&w, &st, sizeof st);
    }
    free(ins);
    free(sizes);
    free(outs);
    free(req);
    if (w.failed || msg_send(fd, &w, INFINITY)) _exit(1);
    free(w.p);
  }
  page->phase = PHASE_CLOSING;
  for (int k = 0; k < njobs; k++) alloy_program_release(progs[k]);
  alloy_runtime_close(rt);
}

/* Waits for a worker's word that its jobs compiled. */
static alloy_error *worker_ready(isolate *iso, child *c, int *status, int *lowered) {
  char *payload = NULL;
  size_t len = 0;
  alloy_error *e = child_answer(iso, c, &payload, &len);
  if (e) {
    *status = REPLY_FAILED;
    return e;
  }
  rbuf r = {payload, len, 0, false};
  e = reply_error(&r, status);
  int64_t n = (int64_t)get_u64(&r);
  if (lowered) *lowered = !e && !r.bad ? (int)n : -1;
  free(payload);
  if (e) {
    /* It said why and exits; how it ends no longer matters. */
    char how[128];
    child_reap(c, false, now_s() + iso->c.timeout_s, how, sizeof how);
  }
  return e;
}

/* A partition runs as a program of its own, partition 0 of its executor:
 * its errors say "partition 0 (devsim): ...", where a run without
 * --isolate names it by its number q in the plan. */
static alloy_error *part_renamed(alloy_error *e, int q) {
  const char *msg = alloy_error_message(e);
  if (q <= 0 || strncmp(msg, "partition 0 (", 13)) return e;
  alloy_error *renamed = alloy_error_new(alloy_error_code_of(e), "partition %d %s", q, msg + 12);
  alloy_error_free(e);
  return renamed;
}

/* Runs (or prepares) partition q (-1: the whole model) in its worker:
 * sends the inputs it lacks, and keeps the outputs it sends back in pt. */
static alloy_error *part_remote(isolate *iso, int q, part *pt, child *c, int job, int kind,
                                const alloy_host_tensor *ins) {
  if (!c->pid) return alloy_error_new(ALLOY_ERR_UNAVAILABLE, "%s is gone (see above)", c->who);
  wbuf b = {0};
  put_u64(&b, (uint64_t)kind);
  put_u64(&b, (uint64_t)job);
  put_u64(&b, (uint64_t)pt->nout);
  for (int j = 0; j < pt->nin; j++)
    if (!pt->tmpl[j].data) put_tensor(&b, &ins[j]);
  if (b.failed) {
    free(b.p);
    return oom();
  }
  int sent = msg_send(c->fd, &b, now_s() + iso->c.timeout_s);
  free(b.p);
  if (sent) return child_lost(iso, c, sent);
  char *payload = NULL;
  size_t len = 0;
  alloy_error *e = child_answer(iso, c, &payload, &len);
  if (e) return e;
  rbuf r = {payload, len, 0, false};
  int status;
  if ((e = reply_error(&r, &status)) || kind != REQ_RUN) {
    free(payload);
    return e ? part_renamed(e, q) : NULL;
  }
  for (int o = 0; o < pt->nout && !r.bad; o++) {
    get_tensor(&r, &pt->out[o], &pt->out_sizes[o * ALLOY_MAX_RANK]);
    /* What the next partition or the caller reads must be what the graph says. */
    const alloy_value *v = pt->sub ? alloy_graph_output(pt->sub, o) : NULL;
    if (v && !r.bad && (pt->out[o].dtype != alloy_value_dtype(v) || pt->out[o].rank != alloy_value_rank(v)))
      r.bad = true;
  }
  alloy_run_stats st;
  const void *sp = get(&r, sizeof st);
  if (r.bad) {
    free(payload);
    return alloy_error_new(ALLOY_ERR_INTERNAL, "%s sent outputs that are not tensors", c->who);
  }
  memcpy(&st, sp, sizeof st);
  pt->stats = st;
  free(pt->payload);
  pt->payload = payload;
  return NULL;
}

/* ---- planning: several backends -------------------------------------------------------- */

typedef struct plan_ctx {
  const alloy_host_tensor *ins;
  int nin;
} plan_ctx;

/* The planner's life: compile the mixture as `alloy run` would, for these
 * inputs, and send the plan. */
static void planner_main(isolate *iso, int fd, child_page *page, void *ctx) {
  const plan_ctx *pc = ctx;
  page->phase = PHASE_OPENING;
  alloy_runtime *rt = NULL;
  alloy_error *e = tool_runtime_open(iso->c.list, &rt);
  char names[512];
  snprintf(names, sizeof names, "%s", iso->c.list);
  const char *listed[16];
  int idx[16], n = 0;
  for (char *save = NULL, *name = strtok_r(names, ",", &save); name && n < 16 && !e;
       name = strtok_r(NULL, ",", &save)) {
    listed[n] = name;
    if ((idx[n++] = alloy_runtime_find_backend(rt, name)) < 0)
      e = alloy_error_new(ALLOY_ERR_NOT_FOUND, "no usable backend '%s' (see alloy backends)", name);
  }
  page->phase = PHASE_PLANNING;
  alloy_mixture *mix = NULL;
  if (!e) e = alloy_mixture_compile(rt, idx, n, iso->c.graph, iso->c.options, &mix);
  if (!e) e = alloy_mixture_prepare(mix, pc->ins, pc->nin);
  const alloy_graph *g = e ? NULL : alloy_mixture_graph(mix);
  char *text = NULL;
  if (!e && (e = alloy_air_print(g, &text)))
    e = alloy_error_wrap(e, "--isolate cannot hand the plan to the backends' processes");
  if (e) child_fail(fd, REPLY_FAILED, e);
  page->phase = PHASE_IDLE;
  wbuf b = {0};
  put_u64(&b, REPLY_OK);
  put_str(&b, text);
  int nn = alloy_graph_num_nodes(g), np = alloy_mixture_num_partitions(mix);
  put_u64(&b, (uint64_t)nn);
  for (int i = 0; i < nn; i++) put_u64(&b, (uint64_t)alloy_mixture_node_partition(mix, i));
  put_u64(&b, (uint64_t)np);
  for (int q = 0; q < np; q++) {
    /* The partition's backend as the list names it: that is how its
     * worker finds it again. */
    alloy_partition_info pi = {.struct_size = ALLOY_PARTITION_INFO_STRUCT_SIZE};
    alloy_mixture_partition_info(mix, q, &pi);
    int at = alloy_runtime_find_backend(rt, pi.backend), k = 0;
    while (k < n && idx[k] != at) k++;
    put_str(&b, k < n ? listed[k] : pi.backend);
  }
  alloy_run_stats st = {.struct_size = ALLOY_RUN_STATS_STRUCT_SIZE};
  alloy_mixture_stats(mix, &st);
  put_u64(&b, st.fallbacks);
  put_u64(&b, st.folded_nodes);
  /* The folded constants: inputs past the caller's, with their data. */
  int nin = alloy_graph_num_inputs(g);
  put_u64(&b, (uint64_t)nin);
  for (int i = pc->nin; i < nin; i++) {
    const alloy_value *v = alloy_graph_input(g, i);
    uint64_t bytes = 0;
    const void *data = alloy_graph_input_data(g, i, &bytes);
    int64_t sizes[ALLOY_MAX_RANK];
    for (int d = 0; d < alloy_value_rank(v); d++) sizes[d] = alloy_value_shape(v)[d].value;
    alloy_host_tensor t = {.struct_size = ALLOY_HOST_TENSOR_STRUCT_SIZE, .dtype = alloy_value_dtype(v),
                           .rank = alloy_value_rank(v), .sizes = sizes, .data = (void *)data};
    if (!data || tensor_bytes(&t) != bytes)
      child_fail(fd, REPLY_FAILED, alloy_error_new(ALLOY_ERR_INTERNAL, "--isolate: folded input "
                                                   "%d (%s) has no data", i, alloy_value_name(v)));
    put_tensor(&b, &t);
  }
  if (b.failed) child_fail(fd, REPLY_FAILED, oom());
  msg_send(fd, &b, INFINITY);
  free(b.p);
  free(text);
  page->phase = PHASE_CLOSING;
  alloy_mixture_release(mix);
  alloy_runtime_close(rt);
}

static void part_free(part *pt) {
  alloy_graph_free(pt->sub);
  alloy_program_release(pt->prog);
  free(pt->backend);
  free(pt->desc);
  free(pt->in);
  free(pt->tmpl);
  free(pt->out);
  free(pt->out_sizes);
  free(pt->payload);
}

/* Ends the plan's workers (an error when one dies or hangs closing) and
 * frees it; its counters go to iso->gone. */
static alloy_error *plan_end(isolate *iso, plan *p) {
  if (!p) return NULL;
  alloy_error *e = NULL;
  for (int w = 0; w < p->nworkers; w++) {
    alloy_error *we = child_end(iso, &p->workers[w].c);
    if (we && !e) e = we;
    else alloy_error_free(we);
  }
  alloy_run_stats s = {.struct_size = ALLOY_RUN_STATS_STRUCT_SIZE};
  isolate_stats(iso, &s);
  iso->gone = s;
  iso->gone.arena_bytes = iso->gone.arena_ideal_bytes = 0;
  for (int w = 0; w < p->nworkers; w++) {
    child_free(&p->workers[w].c);
    free(p->workers[w].backend);
    free(p->workers[w].jobs);
  }
  for (int q = 0; q < p->npart; q++) part_free(&p->parts[q]);
  free(p->workers);
  free(p->parts);
  free(p->outputs);
  free(p->full);
  free(p->full_sizes);
  free(p->plan_payload);
  free(p->key);
  alloy_graph_free(p->graph);
  free(p);
  if (iso->plan == p) iso->plan = NULL;
  return e;
}

/* The sizes key of a run's inputs. */
static int64_t *inputs_key(const alloy_host_tensor *ins, int nin, int *n) {
  int len = 0;
  for (int i = 0; i < nin; i++) len += 2 + ins[i].rank;
  int64_t *key = malloc(sizeof *key * ((size_t)len + 1));
  if (!key) return NULL;
  int at = 0;
  for (int i = 0; i < nin; i++) {
    key[at++] = ins[i].dtype;
    key[at++] = ins[i].rank;
    for (int d = 0; d < ins[i].rank; d++) key[at++] = ins[i].sizes[d];
  }
  *n = len;
  return key;
}

/* Reads the planner's reply into p: the graph, partitions, folded inputs. */
static alloy_error *plan_read(plan *p, rbuf *r, int nin, int **node_part) {
  int status;
  alloy_error *e = reply_error(r, &status);
  if (e) return e;
  char *text = get_str(r);
  if (!text) return alloy_error_new(ALLOY_ERR_INTERNAL, "--isolate: a garbled plan");
  e = alloy_air_parse(text, strlen(text), "(the plan)", &p->graph);
  free(text);
  if (e) return alloy_error_wrap(e, "--isolate cannot read the plan back");
  uint64_t nn = get_u64(r);
  if (r->bad || nn != (uint64_t)alloy_graph_num_nodes(p->graph))
    return alloy_error_new(ALLOY_ERR_INTERNAL, "--isolate: the plan's node count disagrees");
  *node_part = malloc(sizeof **node_part * ((size_t)nn + 1));
  if (!*node_part) return oom();
  for (uint64_t i = 0; i < nn; i++) (*node_part)[i] = (int)get_u64(r);
  uint64_t np = get_u64(r);
  if (r->bad || np > nn + 1) return alloy_error_new(ALLOY_ERR_INTERNAL, "--isolate: a garbled plan");
  for (uint64_t i = 0; i < nn; i++)
    if ((*node_part)[i] < 0 || (uint64_t)(*node_part)[i] >= np)
      return alloy_error_new(ALLOY_ERR_INTERNAL, "--isolate: a garbled plan");
  p->npart = (int)np;
  p->parts = calloc((size_t)np + 1, sizeof *p->parts);
  if (!p->parts) return oom();
  for (int q = 0; q < p->npart; q++) {
    part *pt = &p->parts[q];
    pt->worker = -1;
    if (!(pt->backend = get_str(r))) return alloy_error_new(ALLOY_ERR_INTERNAL, "--isolate: a garbled plan");
    pt->here = is_ref(pt->backend);
  }
  p->fallbacks = get_u64(r);
  p->folded_nodes = get_u64(r);
  uint64_t ninputs = get_u64(r);
  if (r->bad || ninputs != (uint64_t)alloy_graph_num_inputs(p->graph) || ninputs < (uint64_t)nin)
    return alloy_error_new(ALLOY_ERR_INTERNAL, "--isolate: the plan's inputs disagree with the model's");
  p->ninputs = (int)ninputs;
  p->full = calloc(ninputs + 1, sizeof *p->full);
  p->full_sizes = calloc(ninputs * ALLOY_MAX_RANK + 1, sizeof *p->full_sizes);
  if (!p->full || !p->full_sizes) return oom();
  for (int i = nin; i < p->ninputs; i++) {
    alloy_host_tensor *t = &p->full[i];
    if (!get_tensor(r, t, &p->full_sizes[i * ALLOY_MAX_RANK]))
      return alloy_error_new(ALLOY_ERR_INTERNAL, "--isolate: a garbled folded constant");
    alloy_graph_set_input_data(p->graph, i, t->data, tensor_bytes(t));
  }
  return NULL;
}

/* Splits the plan graph into its partitions (as the mixture does: extract,
 * so each graph is the one the plugin compiled while planning) and wires
 * each input to a plan input or an earlier partition's output. */
static alloy_error *plan_split(plan *p, const int *node_part) {
  const alloy_graph *g = p->graph;
  int n = alloy_graph_num_nodes(g), nv = g->nvalues;
  int *first = calloc((size_t)p->npart + 2, sizeof *first), *order = malloc(sizeof *order * ((size_t)n + 1));
  int *in_of = malloc(sizeof *in_of * ((size_t)nv + 1));
  src *made = malloc(sizeof *made * ((size_t)nv + 1));
  alloy_node **members = malloc(sizeof *members * ((size_t)n + 1));
  alloy_error *e = (!first || !order || !in_of || !made || !members) ? oom() : NULL;
  for (int v = 0; !e && v < nv; v++) in_of[v] = -1, made[v] = (src){-1, -1};
  for (int i = 0; !e && i < p->ninputs; i++) in_of[alloy_graph_input(g, i)->id] = i;
  /* Each partition's nodes, in graph order. */
  for (int i = 0; !e && i < n; i++) first[node_part[i] + 1]++;
  for (int q = 0; !e && q < p->npart; q++) first[q + 1] += first[q];
  int *next = e ? NULL : calloc((size_t)p->npart + 1, sizeof *next);
  if (!e && !next) e = oom();
  for (int q = 0; !e && q < p->npart; q++) next[q] = first[q];
  for (int i = 0; !e && i < n; i++) order[next[node_part[i]]++] = i;
  free(next);
  for (int q = 0; !e && q < p->npart; q++) {
    part *pt = &p->parts[q];
    pt->nnodes = first[q + 1] - first[q];
    for (int k = 0; k < pt->nnodes; k++) members[k] = alloy_graph_node(g, order[first[q] + k]);
    if (!(pt->desc = nodes_text(g, &order[first[q]], pt->nnodes))) e = oom();
    if (!e) e = alloy_graph_extract(g, members, pt->nnodes, &pt->sub);
    if (e) break;
    pt->nin = alloy_graph_num_inputs(pt->sub);
    pt->nout = alloy_graph_num_outputs(pt->sub);
    pt->in = calloc((size_t)pt->nin + 1, sizeof *pt->in);
    pt->out = calloc((size_t)pt->nout + 1, sizeof *pt->out);
    pt->out_sizes = calloc((size_t)pt->nout * ALLOY_MAX_RANK + 1, sizeof *pt->out_sizes);
    if (!pt->in || !pt->out || !pt->out_sizes) e = oom();
    for (int j = 0; !e && j < pt->nin; j++) {
      const alloy_value *v = alloy_graph_find_value(g, alloy_value_name(alloy_graph_input(pt->sub, j)));
      pt->in[j] = !v ? (src){-2, 0} : in_of[v->id] >= 0 ? (src){-1, in_of[v->id]} : made[v->id];
      if (pt->in[j].part < -1 || pt->in[j].part >= q || (pt->in[j].part < 0 && pt->in[j].index < 0))
        e = alloy_error_new(ALLOY_ERR_INTERNAL, "--isolate: partition %d reads %s, which no earlier "
                            "partition makes", q, alloy_value_name(alloy_graph_input(pt->sub, j)));
    }
    for (int j = 0; !e && j < pt->nout; j++) {
      const alloy_value *v = alloy_graph_find_value(g, alloy_value_name(alloy_graph_output(pt->sub, j)));
      if (v) made[v->id] = (src){q, j};
    }
  }
  p->noutputs = e ? 0 : alloy_graph_num_outputs(g);
  p->outputs = e ? NULL : calloc((size_t)p->noutputs + 1, sizeof *p->outputs);
  if (!e && !p->outputs) e = oom();
  for (int k = 0; !e && k < p->noutputs; k++) {
    const alloy_value *v = alloy_graph_output(g, k);
    p->outputs[k] = in_of[v->id] >= 0 ? (src){-1, in_of[v->id]} : made[v->id];
    if (p->outputs[k].index < 0)
      e = alloy_error_new(ALLOY_ERR_INTERNAL, "--isolate: output %d is no partition's", k);
  }
  free(first);
  free(order);
  free(in_of);
  free(made);
  free(members);
  return e;
}

/* Plans for these inputs in a child, then starts a worker per plugin of
 * the plan and compiles the reference backend's partitions here. */
static alloy_error *plan_make(isolate *iso, const alloy_host_tensor *ins, int nin) {
  plan *p = calloc(1, sizeof *p);
  if (!p) return oom();
  iso->plan = p;
  if (!(p->key = inputs_key(ins, nin, &p->nkey))) return oom();
  child planner;
  plan_ctx pc = {ins, nin};
  char who[600];
  if (iso->nplugins == 1) snprintf(who, sizeof who, "backend '%s'", iso->plugins);
  else snprintf(who, sizeof who, "one of the backends %s", iso->plugins);
  alloy_error *e = child_start(iso, who, &planner, planner_main, &pc);
  char *payload = NULL;
  size_t len = 0;
  if (!e) e = child_answer(iso, &planner, &payload, &len);
  int *node_part = NULL;
  if (!e) {
    rbuf r = {payload, len, 0, false};
    e = plan_read(p, &r, nin, &node_part);
    p->plan_payload = payload;
  }
  if (!e) e = child_end(iso, &planner);
  else if (planner.pid) {
    char how[128];
    child_reap(&planner, true, INFINITY, how, sizeof how);
  }
  child_free(&planner);
  /* The resident inputs (weights, folded constants) are known now; a
   * run's own inputs come with each run. The weights bound at compile are
   * attached to the plan graph before it is split, as the mixture's are,
   * so that each partition's graph shows them to its plugin the same way
   * (host->graph_input_data). */
  for (int i = 0; !e && i < nin; i++) {
    if (alloy_graph_input_role(p->graph, i, NULL) == ALLOY_INPUT_USER) continue;
    p->full[i] = ins[i];
    p->full[i].sizes = &p->full_sizes[i * ALLOY_MAX_RANK];
    memcpy(&p->full_sizes[i * ALLOY_MAX_RANK], ins[i].sizes, sizeof(int64_t) * (size_t)ins[i].rank);
    const alloy_host_tensor *w = iso->c.options->weights;
    if (w && i < iso->c.options->num_weights && w[i].data)
      alloy_graph_set_input_data(p->graph, i, w[i].data, tensor_bytes(&w[i]));
  }
  if (!e) e = plan_split(p, node_part);
  free(node_part);
  /* One worker per plugin, holding all of that plugin's partitions. */
  for (int q = 0; !e && q < p->npart; q++) {
    part *pt = &p->parts[q];
    if (!(pt->tmpl = calloc((size_t)pt->nin + 1, sizeof *pt->tmpl))) e = oom();
    for (int j = 0; !e && j < pt->nin; j++)
      if (pt->in[j].part < 0 && alloy_graph_input_role(p->graph, pt->in[j].index, NULL) != ALLOY_INPUT_USER)
        pt->tmpl[j] = p->full[pt->in[j].index];
    if (e || pt->here) continue;
    int w = 0;
    while (w < p->nworkers && strcmp(p->workers[w].backend, pt->backend)) w++;
    if (w == p->nworkers) {
      worker *grown = realloc(p->workers, sizeof *grown * ((size_t)w + 1));
      if (!grown) {
        e = oom();
        break;
      }
      p->workers = grown;
      p->workers[w] = (worker){.c = {.fd = -1}, .backend = strdup(pt->backend)};
      p->nworkers++;
    }
    int *jobs = realloc(p->workers[w].jobs, sizeof *jobs * ((size_t)p->workers[w].njobs + 1));
    if (!jobs) {
      e = oom();
      break;
    }
    p->workers[w].jobs = jobs;
    pt->worker = w;
    pt->job = p->workers[w].njobs;
    jobs[p->workers[w].njobs++] = q;
  }
  /* The reference backend's partitions are compiled here once the
   * workers have forked (a fork should not copy what this process is in
   * the middle of), while they compile theirs. */
  for (int w = 0; !e && w < p->nworkers; w++) {
    char whow[128];
    snprintf(whow, sizeof whow, "backend '%s'", p->workers[w].backend);
    worker_ctx wc = {w};
    e = child_start(iso, whow, &p->workers[w].c, worker_main, &wc);
  }
  /* The reference backend's options, as the mixture sets them on its row. */
  if (!e) e = options_apply(iso->rt, iso->ref, "ref", iso->c.options);
  for (int q = 0; !e && q < p->npart; q++) {
    part *pt = &p->parts[q];
    alloy_graph *g = NULL;
    if (!pt->here) continue;
    if (!(e = alloy_graph_clone(pt->sub, &g))) e = program_compile_lowered(iso->rt, iso->ref, g, &pt->prog);
    if (e) e = alloy_error_wrap(e, "partition %d", q);
  }
  for (int w = 0; !e && w < p->nworkers; w++) {
    int status;
    e = worker_ready(iso, &p->workers[w].c, &status, NULL);
  }
  p->ready = !e;
  return e;
}

/* ---- the API ----------------------------------------------------------------------------- */

alloy_error *isolate_open(alloy_runtime *rt, const isolate_config *c, isolate **out) {
  *out = NULL;
  isolate *iso = calloc(1, sizeof *iso);
  if (!iso) return oom();
  iso->rt = rt;
  iso->ref = alloy_runtime_find_backend(rt, "ref");
  iso->c = *c;
  iso->lowered_nodes = -1;
  char names[1024], plugins[1024] = "";
  size_t len = 0;
  int n = 0;
  snprintf(names, sizeof names, "%s", c->list ? c->list : "");
  for (char *save = NULL, *name = strtok_r(names, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
    n++;
    if (is_ref(name)) continue;
    cat(plugins, sizeof plugins, &len, "%s%s", iso->nplugins ? ", " : "", name);
    iso->nplugins++;
  }
  iso->plugins = strdup(plugins);
  iso->mixture = n >= 2;
  if (!iso->plugins) {
    free(iso);
    return oom();
  }
  *out = iso;
  if (iso->mixture) return NULL;
  /* One backend: one child compiles the whole model on it, now. */
  plan *p = iso->plan = calloc(1, sizeof *p);
  if (!p || !(p->parts = calloc(1, sizeof *p->parts)) || !(iso->used = strdup(plugins))) return oom();
  p->npart = 1;
  part *pt = &p->parts[0];
  int nn = alloy_graph_num_nodes(c->graph);
  int *all = malloc(sizeof *all * ((size_t)nn + 1));
  for (int i = 0; all && i < nn; i++) all[i] = i;
  pt->desc = all ? nodes_text(c->graph, all, nn) : NULL;
  free(all);
  pt->nin = alloy_graph_num_inputs(c->graph);
  pt->nout = alloy_graph_num_outputs(c->graph);
  pt->tmpl = calloc((size_t)pt->nin + 1, sizeof *pt->tmpl);
  pt->out = calloc((size_t)pt->nout + 1, sizeof *pt->out);
  pt->out_sizes = calloc((size_t)pt->nout * ALLOY_MAX_RANK + 1, sizeof *pt->out_sizes);
  if (!pt->desc || !pt->tmpl || !pt->out || !pt->out_sizes) return oom();
  /* Weights are bound at compile: the child has them from the fork. */
  for (int i = 0; i < pt->nin && i < c->options->num_weights && c->options->weights; i++)
    pt->tmpl[i] = c->options->weights[i];
  char who[600];
  snprintf(who, sizeof who, "backend '%s'", plugins);
  p->workers = calloc(1, sizeof *p->workers);
  if (!p->workers) return oom();
  p->nworkers = 1;
  p->workers[0] = (worker){.c = {.fd = -1}};
  worker_ctx wc = {-1};
  alloy_error *e = child_start(iso, who, &p->workers[0].c, worker_main, &wc);
  int status = REPLY_FAILED;
  if (!e) e = worker_ready(iso, &p->workers[0].c, &status, &iso->lowered_nodes);
  if (e && status == REPLY_OPTIONS)
    fprintf(stderr, "alloy run: passing over a backend: %s\n", alloy_error_message(e));
  if (e && status == REPLY_FALLBACK) {
    /* As `alloy run` on one backend: the reference backend takes the model. */
    fprintf(stderr, "alloy run: passing over a backend: %s\n", alloy_error_message(e));
    alloy_error_free(e);
    /* The options meant for the plugin found it where it was loaded; here
     * it is not, and they would be an error of their own. */
    alloy_program_options po = *c->options;
    alloy_option *kept = calloc((size_t)po.num_backend_options + 1, sizeof *kept);
    if (!kept) return oom();
    po.backend_options = kept;
    po.num_backend_options = 0;
    for (int i = 0; i < c->options->num_backend_options; i++) {
      const alloy_option *opt = &c->options->backend_options[i];
      const char *dot = opt->key ? strchr(opt->key, '.') : NULL;
      if (!dot || strlen(iso->used) != (size_t)(dot - opt->key) ||
          strncasecmp(opt->key, iso->used, (size_t)(dot - opt->key)))
        kept[po.num_backend_options++] = *opt;
    }
    e = alloy_program_compile_ex(rt, iso->ref, c->graph, &po, &iso->local);
    free(kept);
    free(iso->used);
    iso->used = strdup("ref");
    if (!e && iso->local) iso->lowered_nodes = alloy_graph_num_nodes(alloy_program_graph(iso->local));
  }
  return e;
}

alloy_error *isolate_prepare(isolate *iso, const alloy_host_tensor *ins, int nin) {
  if (iso->local) return alloy_program_prepare(iso->local, ins, nin);
  if (!iso->mixture) {
    part *pt = &iso->plan->parts[0];
    if (nin != pt->nin)
      return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "the model has %d inputs; %d given", pt->nin, nin);
    return part_remote(iso, -1, pt, &iso->plan->workers[0].c, 0, REQ_PREPARE, ins);
  }
  int nkey = 0;
  int64_t *key = inputs_key(ins, nin, &nkey);
  if (!key) return oom();
  bool same = iso->plan && iso->plan->nkey == nkey &&
              !memcmp(iso->plan->key, key, sizeof *key * (size_t)nkey);
  free(key);
  if (same && !iso->plan->ready)
    return alloy_error_new(ALLOY_ERR_UNAVAILABLE, "--isolate: planning for these sizes failed (see above)");
  if (same) return NULL;
  alloy_error *e = plan_end(iso, iso->plan);
  if (e) return e;
  return plan_make(iso, ins, nin);
}

alloy_error *isolate_run(isolate *iso, const alloy_host_tensor *ins, int nin, alloy_host_tensor *outs,
                         int nout) {
  if (iso->local) return alloy_program_run(iso->local, ins, nin, outs, nout);
  alloy_error *e = iso->mixture ? isolate_prepare(iso, ins, nin) : NULL;
  plan *p = iso->plan;
  if (e) return e;
  iso->runs++;
  if (!iso->mixture) {
    part *pt = &p->parts[0];
    if (nin != pt->nin || nout > pt->nout)
      return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "the model has %d inputs and %d outputs; %d "
                             "and %d given", pt->nin, pt->nout, nin, nout);
    if ((e = part_remote(iso, -1, pt, &p->workers[0].c, 0, REQ_RUN, ins))) return e;
    for (int k = 0; k < nout; k++) outs[k] = pt->out[k];
    return NULL;
  }
  if (nin > p->ninputs || nout > p->noutputs)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "the graph has %d inputs and %d outputs; %d and %d "
                           "given", p->ninputs, p->noutputs, nin, nout);
  for (int i = 0; i < nin; i++)
    if (alloy_graph_input_role(p->graph, i, NULL) == ALLOY_INPUT_USER) p->full[i] = ins[i];
  /* Partition numbers are topological: in order, each finds its inputs made. */
  for (int q = 0; q < p->npart && !e; q++) {
    part *pt = &p->parts[q];
    alloy_host_tensor *in = calloc((size_t)pt->nin + 1, sizeof *in);
    if (!in) return oom();
    for (int j = 0; j < pt->nin; j++)
      in[j] = pt->in[j].part < 0 ? p->full[pt->in[j].index] : p->parts[pt->in[j].part].out[pt->in[j].index];
    if (pt->here) {
      for (int k = 0; k < pt->nout; k++) pt->out[k].struct_size = ALLOY_HOST_TENSOR_STRUCT_SIZE;
      e = alloy_program_run(pt->prog, in, pt->nin, pt->out, pt->nout);
      if (e) {
        e = part_renamed(e, q);
      } else {
        pt->stats.struct_size = ALLOY_RUN_STATS_STRUCT_SIZE;
        alloy_program_stats(pt->prog, &pt->stats);
      }
    } else {
      e = part_remote(iso, q, pt, &p->workers[pt->worker].c, pt->job, REQ_RUN, in);
    }
    free(in);
  }
  for (int k = 0; k < nout && !e; k++) {
    src s = p->outputs[k];
    outs[k] = s.part < 0 ? p->full[s.index] : p->parts[s.part].out[s.index];
  }
  return e;
}

void isolate_stats(const isolate *iso, alloy_run_stats *out) {
  alloy_run_stats s = iso->gone;
  s.struct_size = ALLOY_RUN_STATS_STRUCT_SIZE;
  s.arena_bytes = s.arena_ideal_bytes = 0;
  if (iso->local) alloy_program_stats(iso->local, &s);
  const plan *p = iso->local ? NULL : iso->plan;
  for (int q = 0; p && q < p->npart; q++) {
    const alloy_run_stats *x = &p->parts[q].stats;
    s.partitions_run += x->partitions_run;
    s.weight_bytes_in += x->weight_bytes_in;
    s.input_bytes_in += x->input_bytes_in;
    s.output_bytes_out += x->output_bytes_out;
    s.cross_bytes += x->cross_bytes;
    s.staged_bytes += x->staged_bytes;
    s.same_backend_round_trips += x->same_backend_round_trips;
    s.host_waits += x->host_waits;
    s.arena_bytes += x->arena_bytes;
    s.arena_ideal_bytes += x->arena_ideal_bytes;
    s.dispatch_s += x->dispatch_s;
    if (!iso->mixture) s.folded_nodes = x->folded_nodes;
  }
  if (p && iso->mixture) {
    s.fallbacks = iso->gone.fallbacks + p->fallbacks;
    s.folded_nodes = p->folded_nodes;
  }
  if (!iso->local) s.runs = iso->runs;
  size_t size = out->struct_size;
  memcpy(out, &s, size < sizeof s ? size : sizeof s);
  out->struct_size = size;
}

const char *isolate_backend(const isolate *iso) { return iso->mixture ? NULL : iso->used; }

int isolate_num_nodes(const isolate *iso) {
  return iso->mixture ? (iso->plan ? alloy_graph_num_nodes(iso->plan->graph) : -1) : iso->lowered_nodes;
}

void isolate_print_summary(const isolate *iso, double compile_ms, FILE *f) {
  if (!iso->mixture) {
    fprintf(f, "  compile  %9.2f ms (%s)\n", compile_ms,
            iso->local ? "here, on the reference backend" : "in the backend's own process");
    return;
  }
  const plan *p = iso->plan;
  fprintf(f, "  compile  %9.2f ms (planned in a process of its own, then each plugin's partitions "
          "compiled in the plugin's own; once per set of sizes)\n", compile_ms);
  if (!p || !p->ready) return;
  fprintf(f, "  %d partitions (isolated: the reference backend's run here, each plugin's in its "
          "own process):\n", p->npart);
  for (int q = 0; q < p->npart; q++) {
    const part *pt = &p->parts[q];
    fprintf(f, "    #%-3d %-10s %4d nodes  %3d in  %3d out  %s\n", q, pt->backend, pt->nnodes, pt->nin,
            pt->nout, pt->here ? "here" : "in its own process");
  }
}

alloy_error *isolate_close(isolate *iso) {
  if (!iso) return NULL;
  alloy_error *e = plan_end(iso, iso->plan);
  alloy_program_release(iso->local);
  free(iso->plugins);
  free(iso->used);
  free(iso);
  return e;
}
