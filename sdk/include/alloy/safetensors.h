/*
 * alloy/safetensors.h: reading and writing safetensors files, the tensor
 * container of Hugging Face (github.com/huggingface/safetensors), in which
 * Alloy keeps weights, golden inputs and outputs.
 *
 * A file is an 8-byte little-endian header length N, N bytes of JSON mapping
 * each tensor's name to {"dtype": "F32", "shape": [2, 3], "data_offsets":
 * [begin, end]}, then the data: each tensor row-major and little-endian in
 * bytes [begin, end) of what follows the header, the ranges together tiling
 * it with no gap and no overlap. A "__metadata__" object may be present; it
 * is ignored.
 *
 * Reading is zero-copy: a reader checks the whole header when it is opened
 * (sizes, offsets, dtypes, the tiling) and afterwards hands out pointers
 * into the file's mapping or the caller's buffer. It is immutable once
 * opened, so any number of threads may read one at once; closing it must not
 * race with them. Writing has no shared state: distinct files may be written
 * from any threads.
 *
 * Errors are alloy_error objects owned by the caller; their messages name the
 * file (or the label of a buffer) and, where one is at fault, the tensor.
 */
#ifndef ALLOY_SAFETENSORS_H
#define ALLOY_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "alloy/dtype.h"
#include "alloy/error.h"
#include "alloy/graph.h" /* ALLOY_MAX_RANK */

#ifdef __cplusplus
extern "C" {
#endif

/* ---- reading ---------------------------------------------------------- */

typedef struct alloy_safetensors alloy_safetensors;

/* One tensor of an open file. Every pointer lives as long as the reader. */
typedef struct alloy_st_entry {
  const char *name;               /* UTF-8, NUL-terminated, unique        */
  alloy_dtype dtype;
  int rank;                       /* 0 (a scalar) .. ALLOY_MAX_RANK        */
  int64_t shape[ALLOY_MAX_RANK];  /* rank sizes, each >= 0; rest are 0    */
  const void *data;               /* nbytes bytes, row-major, little-endian;
                                   * not necessarily aligned to the element
                                   * size (writers other than Alloy's may
                                   * not pad the header)                  */
  size_t nbytes;                  /* numel * dtype size; 0 for no elements */
} alloy_st_entry;

/* Opens the file at path and maps it read-only. The mapping belongs to the
 * reader until alloy_safetensors_close; the file must not be truncated while
 * it is open (the system would fault on the lost pages). On error *out is
 * NULL and nothing is left open. */
alloy_error *alloy_safetensors_open(const char *path, alloy_safetensors **out);

/* Reads a safetensors image held in memory: data[0..size) is borrowed, not
 * copied, and must outlive the reader. label (borrowed for this call only;
 * NULL gives "(memory)") stands for the file name in errors. */
alloy_error *alloy_safetensors_open_memory(const void *data, size_t size,
                                           const char *label,
                                           alloy_safetensors **out);

/* Releases the reader, its entries and the mapping it made (never the
 * caller's buffer). Accepts NULL. */
void alloy_safetensors_close(alloy_safetensors *st);

/* The number of tensors (__metadata__ is not one); 0 for a NULL reader. */
int alloy_safetensors_count(const alloy_safetensors *st);
/* Entry i of count, in the order of strcmp on the names; NULL when i is out
 * of range. Owned by the reader. */
const alloy_st_entry *alloy_safetensors_entry(const alloy_safetensors *st, int i);
/* The entry called name, or NULL (also for a NULL name). Owned by the
 * reader. */
const alloy_st_entry *alloy_safetensors_find(const alloy_safetensors *st,
                                             const char *name);

/* ---- writing ---------------------------------------------------------- */

/* One tensor to write. Everything is borrowed for the call only. */
typedef struct alloy_st_tensor {
  const char *name;      /* non-empty UTF-8, unique, not "__metadata__" */
  alloy_dtype dtype;
  int rank;              /* 0 .. ALLOY_MAX_RANK                         */
  const int64_t *shape;  /* rank sizes, each >= 0 (NULL when rank is 0) */
  const void *data;      /* row-major contiguous, host byte order (which
                          * must be little-endian, as on every platform
                          * Alloy runs on); NULL only when nbytes is 0 */
  size_t nbytes;         /* must be numel * dtype size                  */
} alloy_st_tensor;

/* Writes the n tensors to path in the layout of Hugging Face's writer: the
 * header's keys in name order, padded with spaces so that the data starts
 * 8-byte aligned, and the data ordered by element size (largest first) then
 * name, so that each tensor is aligned to its element size in the file.
 *
 * The bytes go to "<path>.tmp", which is flushed to disk and renamed over
 * path: a failure (a bad tensor, a full disk, a crash) never leaves a
 * partial file at path, and on an error path itself is untouched. Two
 * writers of the same path at once must be serialised by the caller, as they
 * would share the temporary file. n may be 0 (a file with no tensors). */
alloy_error *alloy_safetensors_write(const char *path,
                                     const alloy_st_tensor *tensors, int n);

#ifdef __cplusplus
}
#endif
#endif
