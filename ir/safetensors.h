/*
 * ir/safetensors.h: reading safetensors files (header and zero-copy data).
 *
 * The file is mapped read-only; entry names, shapes and data pointers live
 * until alloy_safetensors_close. Not thread-safe to close while reading;
 * concurrent reads are fine.
 */
#ifndef ALLOY_SAFETENSORS_H
#define ALLOY_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "alloy/dtype.h"
#include "alloy/error.h"
#include "alloy/graph.h"

typedef struct alloy_st_entry {
  const char *name;
  alloy_dtype dtype;
  int rank;
  int64_t shape[ALLOY_MAX_RANK];
  const void *data; /* points into the mapping */
  size_t nbytes;
} alloy_st_entry;

typedef struct alloy_safetensors alloy_safetensors;

/* Errors name the file and, for a bad entry, the entry. */
alloy_error *alloy_safetensors_open(const char *path, alloy_safetensors **out);
void alloy_safetensors_close(alloy_safetensors *st); /* accepts NULL */
int alloy_safetensors_count(const alloy_safetensors *st);
/* Entries sorted by name. */
const alloy_st_entry *alloy_safetensors_entry(const alloy_safetensors *st, int i);
const alloy_st_entry *alloy_safetensors_find(const alloy_safetensors *st,
                                             const char *name);

#endif
