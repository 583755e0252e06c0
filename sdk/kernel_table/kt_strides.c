/*
 * sdk/kernel_table/kt_strides.c: stride arithmetic the backends share
 * (alloy/kernel_table.h): a backend that keeps views as strides over one
 * buffer (the cuda and cpu backends, the eager test harness) asks here
 * whether a reshape is a view, rather than each carrying its own copy of
 * PyTorch's computeStride.
 */
#include "alloy/kernel_table.h"

bool alloy_view_strides(const int64_t *sizes, const int64_t *strides, int rank, const int64_t *to, int rank_to,
                        int64_t *out) {
  int64_t numel = 1;
  for (int d = 0; d < rank; d++) numel *= sizes[d];
  if (numel == 0 || rank == 0) {
    int64_t s = 1;
    for (int d = rank_to - 1; d >= 0; d--) out[d] = s, s *= to[d] > 1 ? to[d] : 1;
    return true;
  }
  /* dims are walked from the last, in chunks of memory-contiguous dims;
   * each chunk must be made of whole dims of the view */
  int view_d = rank_to - 1;
  int64_t chunk_base_stride = strides[rank - 1], tensor_numel = 1, view_numel = 1;
  for (int d = rank - 1; d >= 0; d--) {
    tensor_numel *= sizes[d];
    if (d == 0 || (sizes[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || to[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= to[view_d];
        view_d--;
      }
      if (view_numel != tensor_numel) return false;
      if (d > 0) {
        chunk_base_stride = strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}
