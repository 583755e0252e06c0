/*
 * plugins/cpu/cpu_pool.h: the cpu backend's thread pool (cpu_pool.c). A
 * step's rows [0, n) are cut into one contiguous chunk per thread; the
 * caller works a chunk too and returns when all are done. One job at a
 * time: a caller that finds the pool busy (another execute, on another
 * queue) runs its job alone.
 */
#ifndef ALLOY_CPU_POOL_H
#define ALLOY_CPU_POOL_H

#include <stdint.h>

typedef struct cpu_pool cpu_pool;
typedef void (*cpu_pool_fn)(void *ctx, int64_t begin, int64_t end);

/* A pool of threads - 1 workers (threads >= 1); NULL when they cannot be
 * started. */
cpu_pool *cpu_pool_open(int threads);
void cpu_pool_close(cpu_pool *p);
int cpu_pool_threads(const cpu_pool *p);
/* Runs fn over [0, n) in up to `chunks` pieces, the caller among the
 * threads; returns when every piece is done. */
void cpu_pool_run(cpu_pool *p, int64_t n, int chunks, cpu_pool_fn fn, void *ctx);

#endif
