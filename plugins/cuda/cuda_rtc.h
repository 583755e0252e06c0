/*
 * plugins/cuda/cuda_rtc.h: a plan's module compiled in pieces on several
 * threads (cuda_rtc.c), and the pieces' serialized form. Internal to the
 * plugin.
 */
#ifndef ALLOY_CUDA_RTC_H
#define ALLOY_CUDA_RTC_H

#include "plugins/cuda/cuda_api.h"
#include "plugins/cuda/cuda_internal.h"

/* A module's compiled pieces: n cubins (HIP: code objects), each a module
 * of its own once loaded, and the piece holding each kernel. */
typedef struct cuda_cubins {
  int n;
  char **bin;         /* n, malloc'd */
  size_t *size;       /* n */
  int nkernels;
  uint16_t *piece_of; /* nkernels: the piece of kernel k<i> */
} cuda_cubins;

/* How many threads a compile may use: the processors online, at most 32. */
int cuda_rtc_threads(void);

/* Compiles plan p's module for arch ("sm_90"; HIP: the gcnArchName) in at
 * most `threads` pieces, one thread each (fewer when the text is small),
 * with api's run-time compiler. Each piece records a range on a trace
 * track "compile <i>" of h when a trace is on. Returns NULL and fills *out
 * (the caller frees it with cuda_cubins_free), or an error quoting the
 * compiler's log. Thread-safe: it touches nothing but its arguments. */
alloy_error *cuda_rtc_compile(const cuda_api *api, const alloy_host_api *h, const char *arch,
                              const cuda_plan *p, int threads, cuda_cubins *out);
void cuda_cubins_free(cuda_cubins *c); /* accepts a zeroed one */

/* The serialized size of c, and c written into b (that many bytes). */
size_t cuda_cubins_bytes(const cuda_cubins *c);
void cuda_cubins_write(const cuda_cubins *c, unsigned char *b);
/* Reads n bytes written by cuda_cubins_write for a plan of nkernels
 * kernels into *out (copies: b is not kept). false when they are not
 * such bytes (then *out is zeroed). */
bool cuda_cubins_read(const unsigned char *b, size_t n, int nkernels, cuda_cubins *out);

#endif
