/*
 * ir/checked.h: overflow-checked integer arithmetic for sizes, strides,
 * offsets and byte counts, and the ceiling on how large a tensor may be: the
 * one place where Alloy decides that a size is too large. Header-only
 * (static inline, libc and compiler builtins only), so that the IR's shape
 * functions (ir/meta.c), the host runtime (sdk/src/) and the kernel-table
 * helper that plugins link (sdk/kernel_table/) all use the same rules.
 *
 * The ceiling: a tensor spans at most ALLOY_MAX_TENSOR_BYTES = 2^62 bytes
 * (4 EiB), counting every dim as at least 1 (so that a tensor with a zero
 * dim still has contiguous strides that fit: [0, 2^62, 4] has none). Why
 * 2^62 and not INT64_MAX: everything below it can be added to one more such
 * quantity (an offset plus an extent, a size rounded up to an alignment, a
 * byte count plus a header) without overflowing int64 or size_t, so code
 * that handles a tensor already checked needs no further checks for that;
 * and no machine addresses that much memory, so nothing real is refused.
 * A shape function whose output passes the ceiling is a type error
 * (ir/meta.c); a buffer or a kernel-table operand that does not fit is
 * refused before it is read.
 *
 * Every function returns true when the result is exact (fits and is within
 * the ceiling where one applies), false otherwise; on false the outputs are
 * unspecified. Sizes are element counts, int64 as alloy_tensor's.
 */
#ifndef ALLOY_CHECKED_H
#define ALLOY_CHECKED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest number of bytes a tensor (its extent) may span: 2^62. */
#define ALLOY_MAX_TENSOR_BYTES ((int64_t)1 << 62)
/* How the ceiling reads in messages. */
#define ALLOY_MAX_TENSOR_BYTES_TEXT "2^62"

static inline bool alloy_checked_add(int64_t a, int64_t b, int64_t *r) {
  return !__builtin_add_overflow(a, b, r);
}
static inline bool alloy_checked_sub(int64_t a, int64_t b, int64_t *r) {
  return !__builtin_sub_overflow(a, b, r);
}
static inline bool alloy_checked_mul(int64_t a, int64_t b, int64_t *r) {
  return !__builtin_mul_overflow(a, b, r);
}

/* x truncated toward zero, as a C cast does, when x is finite and the
 * result fits int64 (the cast is undefined otherwise). */
static inline bool alloy_checked_from_double(double x, int64_t *r) {
  /* -2^63 is exact in double; 2^63 is the first value over INT64_MAX. A
   * value in (-2^63 - 1, -2^63) truncates to -2^63 but has no double. */
  if (!(x >= -9223372036854775808.0 && x < 9223372036854775808.0)) return false;
  *r = (int64_t)x;
  return true;
}

/* x truncated toward zero as a cast would, saturating at int64's ends; NaN
 * gives 0. For a Scalar read as an integer, where a plain cast of NaN or of
 * a value outside int64 is undefined behaviour. */
static inline int64_t alloy_saturating_from_double(double x) {
  int64_t r;
  if (alloy_checked_from_double(x, &r)) return r;
  return x != x ? 0 : x < 0 ? INT64_MIN : INT64_MAX;
}

/* Elements and bytes of a dense tensor of these sizes: false when a size is
 * negative or the tensor is over the ceiling (every dim counted as at least
 * 1, see above). numel and bytes may be NULL. */
static inline bool alloy_checked_tensor_bytes(const int64_t *sizes, int rank, size_t itemsize,
                                              int64_t *numel, int64_t *bytes) {
  int64_t n = 1, extent = itemsize ? (int64_t)itemsize : 1;
  if (itemsize > (size_t)ALLOY_MAX_TENSOR_BYTES) return false;
  for (int d = 0; d < rank; d++) {
    if (sizes[d] < 0) return false;
    if (!alloy_checked_mul(extent, sizes[d] > 1 ? sizes[d] : 1, &extent) ||
        extent > ALLOY_MAX_TENSOR_BYTES)
      return false;
    n = sizes[d] == 0 ? 0 : n * sizes[d]; /* <= extent: no overflow */
  }
  if (numel) *numel = n;
  if (bytes) *bytes = n * (int64_t)itemsize; /* <= extent */
  return true;
}

/* The element offsets a strided tensor reaches, relative to its first
 * element: [*lo, *hi], lo <= 0 <= hi; both 0 for a tensor with no elements
 * (*empty set then) or of rank 0. Strides may be negative. false when a size
 * is negative or the arithmetic overflows. */
static inline bool alloy_checked_span(const int64_t *sizes, const int64_t *strides, int rank,
                                      int64_t *lo, int64_t *hi, bool *empty) {
  int64_t l = 0, h = 0;
  *empty = false;
  for (int d = 0; d < rank; d++) {
    if (sizes[d] < 0) return false;
    if (sizes[d] == 0) *empty = true;
  }
  if (!*empty)
    for (int d = 0; d < rank; d++) {
      int64_t span;
      if (!alloy_checked_mul(sizes[d] - 1, strides[d], &span)) return false;
      if (!(span < 0 ? alloy_checked_add(l, span, &l) : alloy_checked_add(h, span, &h)))
        return false;
    }
  *lo = l;
  *hi = h;
  return true;
}

/* Whether a strided tensor lies inside a buffer of buffer_bytes bytes: its
 * first element at byte offset byte_offset, sizes and strides in elements of
 * itemsize bytes. An empty tensor fits when its offset is inside (or at the
 * end of) the buffer. false on any overflow, negative size or offset. */
static inline bool alloy_checked_fits(const int64_t *sizes, const int64_t *strides, int rank,
                                      uint64_t byte_offset, size_t itemsize,
                                      uint64_t buffer_bytes) {
  int64_t lo, hi, lo_b, end_b, off;
  bool empty;
  if (byte_offset > (uint64_t)INT64_MAX || itemsize > (size_t)ALLOY_MAX_TENSOR_BYTES) return false;
  if (!alloy_checked_span(sizes, strides, rank, &lo, &hi, &empty)) return false;
  off = (int64_t)byte_offset;
  if (empty) return byte_offset <= buffer_bytes;
  /* First byte: off + lo * itemsize; one past the last: off + (hi + 1) * itemsize. */
  if (!alloy_checked_mul(lo, (int64_t)itemsize, &lo_b) || !alloy_checked_add(off, lo_b, &lo_b) ||
      lo_b < 0)
    return false;
  if (!alloy_checked_add(hi, 1, &end_b) || !alloy_checked_mul(end_b, (int64_t)itemsize, &end_b) ||
      !alloy_checked_add(off, end_b, &end_b))
    return false;
  return (uint64_t)end_b <= buffer_bytes;
}

#endif
