/*
 * bench/cpu/tsan_concurrent.c: the cpu backend driven from several threads
 * at once, for ThreadSanitizer (bench/cpu/sanitize.sh tsan builds and runs
 * it; `alloy run` alone executes one partition at a time on a backend).
 *
 *   tsan_concurrent MODEL.pt2 IO.safetensors [PROGRAMS] [ITERS]
 *
 * Part 1, one runtime: PROGRAMS programs of the model compiled on cpu (the
 * runtime's compile cache hands them the same executable), all started with
 * alloy_program_run_async and then waited for, ITERS times: concurrent
 * executes of one executable (its scratch arena's trylock, its variants'
 * lock) and of one thread pool (a busy pool runs the second caller's job
 * on the caller's thread).
 * Part 2, PROGRAMS threads each opening a runtime of its own, compiling
 * and running the model: the plugin's process-wide state (LLVM's
 * initialization, OpenBLAS loaded once, the host CPU's detection) from
 * several backend instances at once.
 * Every output must equal the golden output0 within 1e-4 (relative to its
 * largest magnitude). With CPU_THREADS=1 (the pool's threads) every output
 * must also equal program 0's first, run alone, bit for bit. With more
 * threads it need not: a product's rows go to OpenBLAS in one call when
 * the pool is busy and in one call per thread when it is free, and
 * OpenBLAS's small-matrix kernels (m n k up to about 2^17, B transposed)
 * round a 32-row call and two 16-row calls differently (measured: 1686 of
 * 2048 values of a 32x64 by 64x64^T product differ in the last bits).
 * CPU_GEMM=loop|blas sets the backend's gemm option.
 */
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/model.h"
#include "alloy/runtime.h"
#include "alloy/safetensors.h"

#define MAX_PROGRAMS 8

static const char *model_path;
static const alloy_st_entry *input0, *golden0;
static int nout; /* the golden outputs: output0, output1, ... (up to 4) */

static int failed(alloy_error *e, const char *what) {
  if (!e) return 0;
  fprintf(stderr, "tsan_concurrent: %s: %s\n", what, alloy_error_message(e));
  alloy_error_free(e);
  return 1;
}

/* 0 when out matches the golden output0 (float32). */
static int check(const alloy_host_tensor *out, const char *who) {
  size_t n = golden0->nbytes / sizeof(float);
  const float *g = golden0->data;
  const float *o = out->data;
  double big = 0, err = 0;
  for (size_t i = 0; i < n; i++) {
    big = fmax(big, fabs((double)g[i]));
    err = fmax(err, fabs((double)g[i] - (double)o[i]));
  }
  if (err > 1e-4 * (big > 1 ? big : 1)) {
    fprintf(stderr, "tsan_concurrent: %s: output0 off by %g (largest value %g)\n", who, err, big);
    return 1;
  }
  return 0;
}

typedef struct model_run {
  alloy_runtime *rt;
  alloy_model *m;
  alloy_host_tensor *in;
  int nin;
} model_run;

static int open_model(model_run *r) {
  memset(r, 0, sizeof *r);
  if (failed(alloy_runtime_open(NULL, &r->rt), "runtime")) return 1;
  if (failed(alloy_model_load(model_path, &r->m), model_path)) return 1;
  alloy_host_tensor user = {ALLOY_HOST_TENSOR_STRUCT_SIZE, input0->dtype, input0->rank, input0->shape,
                            (void *)input0->data};
  r->nin = alloy_graph_num_inputs(alloy_model_graph(r->m));
  r->in = calloc((size_t)r->nin, sizeof *r->in);
  return failed(alloy_model_bind_inputs(r->m, &user, 1, r->in, r->nin), "bind inputs");
}

static void close_model(model_run *r) {
  free(r->in);
  alloy_model_free(r->m);
  alloy_runtime_close(r->rt);
}

static int compile(model_run *r, alloy_program **p) {
  int cpu = alloy_runtime_find_backend(r->rt, "cpu");
  if (cpu < 0) {
    fprintf(stderr, "tsan_concurrent: no cpu backend\n");
    return 1;
  }
  const char *threads = getenv("CPU_THREADS"); /* the pool's threads; default: the backend's */
  if (threads && failed(alloy_runtime_set_backend_option(r->rt, cpu, "threads", threads), "threads")) return 1;
  const char *gemm = getenv("CPU_GEMM"); /* blas or loop */
  if (gemm && failed(alloy_runtime_set_backend_option(r->rt, cpu, "gemm", gemm), "gemm")) return 1;
  return failed(alloy_program_compile(r->rt, cpu, alloy_model_graph(r->m), p), "compile");
}

static void *own_runtime(void *arg) {
  int *bad = arg;
  model_run r;
  alloy_program *p = NULL;
  if (open_model(&r) || compile(&r, &p)) {
    *bad = 1;
  } else {
    for (int it = 0; it < 3 && !*bad; it++) {
      alloy_host_tensor out[4];
      memset(out, 0, sizeof out);
      if (failed(alloy_program_run(p, r.in, r.nin, out, nout), "run") || check(&out[0], "own runtime")) *bad = 1;
    }
  }
  alloy_program_release(p);
  close_model(&r);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: tsan_concurrent MODEL.pt2 IO.safetensors [PROGRAMS] [ITERS]\n");
    return 2;
  }
  model_path = argv[1];
  int nprog = argc > 3 ? atoi(argv[3]) : 3, iters = argc > 4 ? atoi(argv[4]) : 10;
  if (nprog < 2 || nprog > MAX_PROGRAMS) nprog = 3;
  alloy_safetensors *io = NULL;
  if (failed(alloy_safetensors_open(argv[2], &io), argv[2])) return 1;
  input0 = alloy_safetensors_find(io, "input0");
  golden0 = alloy_safetensors_find(io, "output0");
  for (nout = 0; nout < 4; nout++) {
    char key[16];
    snprintf(key, sizeof key, "output%d", nout);
    if (!alloy_safetensors_find(io, key)) break;
  }
  if (!input0 || !golden0 || golden0->dtype != ALLOY_F32) {
    fprintf(stderr, "tsan_concurrent: %s has no input0 or no float32 output0\n", argv[2]);
    return 1;
  }
  int bad = 0;
  const char *threads = getenv("CPU_THREADS");
  bool exact = threads && !strcmp(threads, "1");

  /* part 1: several programs of one runtime in flight at once; first,
   * program 0 alone, whose output every later run must equal bit for bit */
  model_run r;
  alloy_program *p[MAX_PROGRAMS] = {0};
  bad = open_model(&r);
  for (int i = 0; i < nprog && !bad; i++) bad = compile(&r, &p[i]);
  float *alone = malloc(golden0->nbytes);
  for (int it = 0; it < 3 && !bad; it++) {
    alloy_host_tensor out[4];
    memset(out, 0, sizeof out);
    bad = failed(alloy_program_run(p[0], r.in, r.nin, out, nout), "run") || check(&out[0], "alone");
    if (!bad && it == 0) memcpy(alone, out[0].data, golden0->nbytes);
    if (!bad && memcmp(alone, out[0].data, golden0->nbytes)) {
      fprintf(stderr, "tsan_concurrent: program 0 alone: run %d's output differs from run 0's\n", it);
      bad = 1;
    }
  }
  for (int it = 0; it < iters && !bad; it++) {
    alloy_host_tensor out[MAX_PROGRAMS][4];
    memset(out, 0, sizeof out);
    for (int i = 0; i < nprog && !bad; i++)
      bad = failed(alloy_program_run_async(p[i], r.in, r.nin, out[i], nout), "run_async");
    for (int i = 0; i < nprog; i++) bad |= failed(alloy_program_wait(p[i]), "wait");
    for (int i = 0; i < nprog && !bad; i++) {
      bad = check(&out[i][0], "one runtime");
      if (!bad && exact && memcmp(out[i][0].data, alone, golden0->nbytes)) {
        const float *a = out[i][0].data, *b = alone;
        size_t n = golden0->nbytes / sizeof(float), k = 0, first = n;
        for (size_t j = 0; j < n; j++)
          if (a[j] != b[j]) k++, first = first < j ? first : j;
        fprintf(stderr, "tsan_concurrent: run %d: program %d's output differs from program 0's alone in %zu of %zu values "
                "(first at %zu: %.9g vs %.9g alone)\n", it, i, k, n, first, a[first], b[first]);
        bad = 1;
      }
    }
  }
  for (int i = 0; i < nprog; i++) alloy_program_release(p[i]);
  close_model(&r);
  free(alone);

  /* part 2: a runtime per thread */
  pthread_t th[MAX_PROGRAMS];
  int tbad[MAX_PROGRAMS] = {0};
  for (int i = 0; i < nprog && !bad; i++) pthread_create(&th[i], NULL, own_runtime, &tbad[i]);
  for (int i = 0; i < nprog && !bad; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < nprog; i++) bad |= tbad[i];

  alloy_safetensors_close(io);
  printf("tsan_concurrent %s: %d programs x %d runs in flight together, %d runtimes on %d threads: %s\n",
         model_path, nprog, iters, nprog, nprog, bad ? "FAILED" : "ok");
  return bad;
}
