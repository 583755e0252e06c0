/*
 * plugins/cuda/cuda_rtc.c: a plan's module compiled in pieces, on threads
 * of their own, and the pieces' serialized form for the compile cache.
 *
 * NVRTC compiles one program on one thread, and its time grows with the
 * text: a decoder's 36 kernels took 1.4 s as one program on this project's
 * 2-core machine. The plan writes its module as a prelude and then each
 * kernel whole (cuda_plan.kernel_at), so any subset of the kernels after
 * the prelude is a program of its own. cuda_rtc_compile deals the kernels
 * out to pieces, the largest text first onto the lightest piece, and
 * compiles each piece on its own thread (NVRTC's programs are independent:
 * two threads compile two halves in half the time). The prelude is a few
 * KiB of definitions, parsed again by each piece: milliseconds.
 *
 * Each piece becomes a module of its own; cuda_cubins.piece_of says which
 * holds kernel k<i>. Serialized (cuda_cubins_write), the pieces are:
 *   u32 npieces, u32 nkernels, u16 piece_of[nkernels], zero padding to a
 *   multiple of 8, then each piece as u64 size and its bytes, padded to 8,
 * in the host's byte order (the compile cache never leaves its machine's
 * kind). Both the HIP build (hipRTC) and the CUDA build compile this file.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugins/cuda/cuda_rtc.h"

/* A piece should carry at least this much kernel text: below it, the
 * threads' start and the prelude's parse are not repaid. */
enum { PIECE_MIN_BYTES = 8 << 10, PIECES_MAX = 32 };

typedef struct piece {
  const cuda_api *api;
  const alloy_host_api *host;
  const char *arch_option; /* "--gpu-architecture=sm_90" */
  char *src;               /* the prelude and the piece's kernels */
  size_t len;
  size_t load;             /* kernel bytes dealt to it */
  int nkernels;
  char *bin;
  size_t size;
  char err[2048]; /* the compiler's log when it failed, else "" */
  int index;
} piece;

static void *piece_compile(void *arg) {
  piece *p = arg;
  const cuda_api *api = p->api;
  uint64_t t0 = p->host->trace_enabled && p->host->trace_enabled() ? p->host->clock_ns() : 0;
  nvrtcProgram prog;
  nvrtcResult r = api->nvrtcCreateProgram(&prog, p->src, "alloy_partition.cu", 0, NULL, NULL);
  if (r != NVRTC_SUCCESS) {
    snprintf(p->err, sizeof p->err, "%s", api->nvrtcGetErrorString(r));
    return NULL;
  }
  const char *opts[] = {p->arch_option, GPU_RTC_OPTIONS};
  r = api->nvrtcCompileProgram(prog, (int)(sizeof opts / sizeof *opts), opts);
  if (r != NVRTC_SUCCESS) {
    size_t log_size = 0;
    api->nvrtcGetProgramLogSize(prog, &log_size);
    char *log = malloc(log_size + 1);
    if (log) {
      api->nvrtcGetProgramLog(prog, log);
      log[log_size] = 0;
    }
    snprintf(p->err, sizeof p->err, "%s", log && *log ? log : api->nvrtcGetErrorString(r));
    free(log);
  } else {
    api->nvrtcGetCUBINSize(prog, &p->size);
    if ((p->bin = malloc(p->size ? p->size : 1))) api->nvrtcGetCUBIN(prog, p->bin);
    else snprintf(p->err, sizeof p->err, "out of memory");
  }
  api->nvrtcDestroyProgram(&prog);
  if (t0) {
    char what[80], track[24];
    snprintf(what, sizeof what, GPU_RTC " piece %d: %d kernels, %zu KiB", p->index, p->nkernels, p->len >> 10);
    snprintf(track, sizeof track, "compile %d", p->index);
    p->host->trace_range(GPU_NAME, track, what, t0, p->host->clock_ns());
  }
  return NULL;
}

int cuda_rtc_threads(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > PIECES_MAX ? PIECES_MAX : (int)n;
}

static size_t kernel_len(const cuda_plan *p, int k) {
  return (k + 1 < p->nkernels ? p->kernel_at[k + 1] : p->source_len) - p->kernel_at[k];
}

alloy_error *cuda_rtc_compile(const cuda_api *api, const alloy_host_api *h, const char *arch,
                              const cuda_plan *p, int threads, cuda_cubins *out) {
  memset(out, 0, sizeof *out);
  size_t kbytes = p->source_len - p->prelude_len;
  int n = (int)(kbytes / PIECE_MIN_BYTES);
  if (n > threads) n = threads;
  if (n > p->nkernels) n = p->nkernels;
  if (n > PIECES_MAX) n = PIECES_MAX;
  if (n < 1) n = 1;
  char arch_option[64];
  snprintf(arch_option, sizeof arch_option, "%s%s", GPU_ARCH_OPTION, arch);
  piece *pc = calloc((size_t)n, sizeof *pc);
  int *order = calloc((size_t)p->nkernels + 1, sizeof *order);
  out->piece_of = calloc((size_t)p->nkernels + 1, sizeof *out->piece_of);
  out->bin = calloc((size_t)n, sizeof *out->bin);
  out->size = calloc((size_t)n, sizeof *out->size);
  out->n = n, out->nkernels = p->nkernels;
  bool oom = !pc || !order || !out->piece_of || !out->bin || !out->size;
  /* the kernels by text size, largest first, each to the lightest piece */
  for (int k = 0; !oom && k < p->nkernels; k++) {
    int at = k;
    while (at > 0 && kernel_len(p, order[at - 1]) < kernel_len(p, k)) order[at] = order[at - 1], at--;
    order[at] = k;
  }
  for (int j = 0; !oom && j < p->nkernels; j++) {
    int k = order[j], best = 0;
    for (int i = 1; i < n; i++)
      if (pc[i].load < pc[best].load) best = i;
    pc[best].load += kernel_len(p, k), pc[best].nkernels++;
    out->piece_of[k] = (uint16_t)best;
  }
  /* each piece's text: the prelude, then its kernels in id order */
  for (int i = 0; !oom && i < n; i++) {
    pc[i] = (piece){.api = api, .host = h, .arch_option = arch_option, .load = pc[i].load,
                    .nkernels = pc[i].nkernels, .index = i};
    size_t len = p->prelude_len + pc[i].load;
    char *s = malloc(len + 1);
    if (!s) {
      oom = true;
      break;
    }
    memcpy(s, p->source, p->prelude_len);
    size_t at = p->prelude_len;
    for (int k = 0; k < p->nkernels; k++)
      if (out->piece_of[k] == i) memcpy(s + at, p->source + p->kernel_at[k], kernel_len(p, k)), at += kernel_len(p, k);
    s[at] = 0;
    pc[i].src = s, pc[i].len = at;
  }
  if (!oom) {
    pthread_t *tid = calloc((size_t)n, sizeof *tid);
    bool *started = calloc((size_t)n, sizeof *started);
    for (int i = 1; tid && started && i < n; i++) started[i] = pthread_create(&tid[i], NULL, piece_compile, &pc[i]) == 0;
    piece_compile(&pc[0]);
    for (int i = 1; i < n; i++) {
      if (tid && started && started[i]) pthread_join(tid[i], NULL);
      else piece_compile(&pc[i]); /* no thread: here, after the others */
    }
    free(tid);
    free(started);
  }
  alloy_error *e = NULL;
  for (int i = 0; i < n && pc; i++) {
    if (!e && !oom && pc[i].err[0]) {
      char msg[2300];
      snprintf(msg, sizeof msg, GPU_NAME ": " GPU_RTC " could not compile the partition's kernels: %s", pc[i].err);
      e = h->error_new(ALLOY_ERR_INTERNAL, msg);
    }
    free(pc[i].src);
    if (out->bin) out->bin[i] = pc[i].bin, out->size[i] = pc[i].size;
    else free(pc[i].bin);
  }
  free(pc);
  free(order);
  if (oom && !e) e = h->error_new(ALLOY_ERR_OUT_OF_MEMORY, GPU_NAME ": out of memory");
  if (e) cuda_cubins_free(out);
  return e;
}

void cuda_cubins_free(cuda_cubins *c) {
  for (int i = 0; c->bin && i < c->n; i++) free(c->bin[i]);
  free(c->bin);
  free(c->size);
  free(c->piece_of);
  memset(c, 0, sizeof *c);
}

static size_t pad8(size_t n) { return (n + 7) & ~(size_t)7; }

size_t cuda_cubins_bytes(const cuda_cubins *c) {
  size_t n = pad8(8 + 2 * (size_t)c->nkernels);
  for (int i = 0; i < c->n; i++) n += 8 + pad8(c->size[i]);
  return n;
}

void cuda_cubins_write(const cuda_cubins *c, unsigned char *b) {
  size_t n = cuda_cubins_bytes(c);
  memset(b, 0, n);
  uint32_t head[2] = {(uint32_t)c->n, (uint32_t)c->nkernels};
  memcpy(b, head, 8);
  memcpy(b + 8, c->piece_of, 2 * (size_t)c->nkernels);
  size_t at = pad8(8 + 2 * (size_t)c->nkernels);
  for (int i = 0; i < c->n; i++) {
    uint64_t s = c->size[i];
    memcpy(b + at, &s, 8);
    memcpy(b + at + 8, c->bin[i], c->size[i]);
    at += 8 + pad8(c->size[i]);
  }
}

bool cuda_cubins_read(const unsigned char *b, size_t n, int nkernels, cuda_cubins *out) {
  memset(out, 0, sizeof *out);
  uint32_t head[2];
  if (n < 8) return false;
  memcpy(head, b, 8);
  if (head[0] < 1 || head[0] > PIECES_MAX || (int)head[1] != nkernels) return false;
  size_t at = pad8(8 + 2 * (size_t)nkernels);
  if (at > n) return false;
  out->n = (int)head[0], out->nkernels = nkernels;
  out->bin = calloc((size_t)out->n, sizeof *out->bin);
  out->size = calloc((size_t)out->n, sizeof *out->size);
  out->piece_of = calloc((size_t)nkernels + 1, sizeof *out->piece_of);
  bool ok = out->bin && out->size && out->piece_of;
  if (ok) memcpy(out->piece_of, b + 8, 2 * (size_t)nkernels);
  for (int k = 0; ok && k < nkernels; k++) ok = out->piece_of[k] < out->n;
  for (int i = 0; ok && i < out->n; i++) {
    uint64_t s;
    if (n - at < 8) {
      ok = false;
      break;
    }
    memcpy(&s, b + at, 8);
    if (s > n - at - 8 || !(out->bin[i] = malloc(s ? s : 1))) {
      ok = false;
      break;
    }
    memcpy(out->bin[i], b + at + 8, s);
    out->size[i] = s;
    if ((at += 8 + pad8(s)) > n) ok = false;
  }
  if (!ok) cuda_cubins_free(out);
  return ok;
}
