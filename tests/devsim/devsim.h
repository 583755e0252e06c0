/*
 * tests/devsim/devsim.h: what a test may know of the testing backend
 * devsim's buffers (tests/devsim/devsim.c): the head of every buffer handle
 * it hands out. A host never reads it (alloy/plugin.h keeps buffers
 * opaque). tests/test_devsim.c reads device_pointer to play an application
 * that got the address from the device's own runtime (what cudaMalloc
 * returns) and hands it to buffer_import, or that pokes just past a
 * buffer's end to see the guard page fault.
 */
#ifndef ALLOY_TESTS_DEVSIM_H
#define ALLOY_TESTS_DEVSIM_H

#include <stdint.h>

/* In magic while the handle is live; cleared when it is released. */
#define DEVSIM_BUFFER_MAGIC UINT64_C(0x64657673696d6266) /* "devsimbf" */

typedef struct devsim_buffer_head {
  uint64_t magic;       /* DEVSIM_BUFFER_MAGIC                                */
  void *device_pointer; /* the data's first byte in devsim's memory; its end,
                         * rounded up to 64 bytes, touches a guard page       */
  uint64_t bytes;       /* as allocated, or as imported                       */
} devsim_buffer_head;

#endif
