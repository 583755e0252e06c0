/*
 * plugins/cpu/cpu_pool.c: a small pthread pool. Workers sleep on a
 * condition variable until a job's generation changes, then take chunk
 * numbers from an atomic counter; the last chunk done wakes the caller.
 * Sleeping rather than spinning between jobs: the machine's cores are
 * shared with the host's other work (and other processes), and a spinning
 * worker would take a core from them.
 */
#include "plugins/cpu/cpu_pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

struct cpu_pool {
  int nthreads; /* workers + the caller */
  pthread_t *workers;
  int started;
  pthread_mutex_t submit; /* one job at a time */
  pthread_mutex_t lock;
  pthread_cond_t wake, done;
  unsigned long generation;
  bool quit;
  /* the job */
  cpu_pool_fn fn;
  void *ctx;
  int64_t n;
  int chunks;
  atomic_int next;
  int busy; /* workers inside the job: the next job waits for them to leave */
};

static void run_chunks(cpu_pool *p) {
  for (;;) {
    int c = atomic_fetch_add(&p->next, 1);
    if (c >= p->chunks) return;
    int64_t begin = p->n * c / p->chunks, end = p->n * (c + 1) / p->chunks;
    if (begin < end) p->fn(p->ctx, begin, end);
  }
}

static void *worker(void *arg) {
  cpu_pool *p = arg;
  unsigned long seen = 0;
  pthread_mutex_lock(&p->lock);
  for (;;) {
    while (!p->quit && p->generation == seen) pthread_cond_wait(&p->wake, &p->lock);
    if (p->quit) break;
    seen = p->generation;
    p->busy++;
    pthread_mutex_unlock(&p->lock);
    run_chunks(p);
    pthread_mutex_lock(&p->lock);
    if (--p->busy == 0) pthread_cond_broadcast(&p->done);
  }
  pthread_mutex_unlock(&p->lock);
  return NULL;
}

cpu_pool *cpu_pool_open(int threads) {
  cpu_pool *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->nthreads = threads < 1 ? 1 : threads;
  pthread_mutex_init(&p->submit, NULL);
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->wake, NULL);
  pthread_cond_init(&p->done, NULL);
  p->workers = calloc((size_t)p->nthreads, sizeof *p->workers);
  if (!p->workers) {
    cpu_pool_close(p);
    return NULL;
  }
  for (int i = 0; i < p->nthreads - 1; i++) {
    if (pthread_create(&p->workers[i], NULL, worker, p) != 0) break;
    p->started++;
  }
  p->nthreads = p->started + 1;
  return p;
}

void cpu_pool_close(cpu_pool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->lock);
  p->quit = true;
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->lock);
  for (int i = 0; i < p->started; i++) pthread_join(p->workers[i], NULL);
  free(p->workers);
  pthread_cond_destroy(&p->wake);
  pthread_cond_destroy(&p->done);
  pthread_mutex_destroy(&p->lock);
  pthread_mutex_destroy(&p->submit);
  free(p);
}

int cpu_pool_threads(const cpu_pool *p) { return p ? p->nthreads : 1; }

void cpu_pool_run(cpu_pool *p, int64_t n, int chunks, cpu_pool_fn fn, void *ctx) {
  if (chunks > n) chunks = (int)n;
  if (!p || p->nthreads < 2 || chunks < 2 || pthread_mutex_trylock(&p->submit) != 0) {
    if (n > 0) fn(ctx, 0, n);
    return;
  }
  pthread_mutex_lock(&p->lock);
  /* a worker that woke late for the last job may still be leaving it */
  while (p->busy > 0) pthread_cond_wait(&p->done, &p->lock);
  p->fn = fn, p->ctx = ctx, p->n = n, p->chunks = chunks;
  atomic_store(&p->next, 0);
  p->generation++;
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->lock);
  run_chunks(p);
  pthread_mutex_lock(&p->lock);
  /* every chunk is taken once the caller's run_chunks returns; the
   * workers still inside finish theirs and leave */
  while (p->busy > 0) pthread_cond_wait(&p->done, &p->lock);
  pthread_mutex_unlock(&p->lock);
  pthread_mutex_unlock(&p->submit);
}
