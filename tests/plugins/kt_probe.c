/*
 * tests/plugins/kt_probe.c: a kernel table that exercises every feature of
 * the kernel-table helper the example plugin does not: strides(X) on a
 * strided input, bstrides(X), an int kernel that fails, a per-operand dtype
 * constraint with a bool input and two outputs, arg(NAME) as i32, i64, f64
 * and bool (with a fallback row when a float cannot be an i64), negative
 * dims in size(X, d), a `call` kernel over a tensor list, and one whose
 * output's sizes depend on the data (alloc_output).
 * tests/test_kernel_table.c drives it through the plugin ABI directly.
 *
 * The kernels are deliberately different from the example's: several check
 * what the helper passed them and return nonzero when it is wrong, so a
 * helper bug shows as a failed execution naming the node.
 */
#include <stdint.h>
#include <string.h>

#include "alloy/kernel_table.h"

/* Row-major walk of sizes: index -> element offset under strides. */
static int64_t probe_offset(int64_t linear, int32_t rank, const int64_t *sizes,
                            const int64_t *strides) {
  int64_t off = 0;
  for (int d = rank - 1; d >= 0; d--) {
    int64_t s = sizes[d] ? sizes[d] : 1;
    off += (linear % s) * strides[d];
    linear /= s;
  }
  return off;
}

static int64_t probe_numel(int32_t rank, const int64_t *sizes) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= sizes[d];
  return n;
}

/* strides(in0): the input as the host laid it out, maybe transposed. */
static void probe_neg_strided(float *out, const float *in, int32_t rank, const int64_t *sizes,
                              const int64_t *strides) {
  int64_t n = probe_numel(rank, sizes);
  for (int64_t i = 0; i < n; i++) out[i] = -in[probe_offset(i, rank, sizes, strides)];
}

/* bstrides: both inputs indexed with out0's shape, unbroadcast. */
static void probe_mul_bstrides(float *out, const float *a, const float *b, int32_t rank,
                               const int64_t *sizes, const int64_t *sa, const int64_t *sb) {
  int64_t n = probe_numel(rank, sizes);
  for (int64_t i = 0; i < n; i++)
    out[i] = a[probe_offset(i, rank, sizes, sa)] * b[probe_offset(i, rank, sizes, sb)];
}

/* An int kernel: a zero divisor fails the execution with 7. */
static int probe_div_checked(float *out, const float *a, const float *b, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    if (b[i] == 0.0f) return 7;
    out[i] = a[i] / b[i];
  }
  return 0;
}

/* Two rows for add: integer alpha first, float alpha as the fallback. */
static void probe_add_ialpha(float *out, const float *a, const float *b, int64_t alpha, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = a[i] + (float)alpha * b[i];
}
static void probe_add_falpha(float *out, const float *a, const float *b, double alpha, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = (float)(a[i] + alpha * b[i]);
}

/* "bool,f32,f32->f32": the condition broadcast like the others. */
static void probe_where(float *out, const uint8_t *cond, const float *a, const float *b, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = cond[i] ? a[i] : b[i];
}

/* Two outputs of two dtypes; size(in0, -2) and size(in0, -1). */
static void probe_max_last(float *values, int64_t *indices, const float *in, int64_t rows,
                           int64_t cols) {
  for (int64_t r = 0; r < rows; r++) {
    int64_t best = 0;
    for (int64_t c = 1; c < cols; c++)
      if (in[r * cols + c] > in[r * cols + best]) best = c;
    values[r] = in[r * cols + best];
    indices[r] = best;
  }
}

/* arg(dim):i32, maybe negative. */
static void probe_cumsum(float *out, const float *in, int32_t rank, const int64_t *sizes,
                         int32_t dim) {
  if (dim < 0) dim += rank;
  int64_t inner = 1, n = probe_numel(rank, sizes);
  for (int d = dim + 1; d < rank; d++) inner *= sizes[d];
  for (int64_t i = 0; i < n; i++) {
    int64_t pos = (i / inner) % sizes[dim];
    out[i] = pos == 0 ? in[i] : out[i - inner] + in[i];
  }
}

/* arg(keepdim):bool checked against the output's rank. */
static int probe_sum_last(float *out, const float *in, int64_t rows, int64_t cols, int keepdim,
                          int32_t out_rank) {
  if (keepdim != (out_rank == 2)) return 5;
  for (int64_t r = 0; r < rows; r++) {
    float acc = 0.0f;
    for (int64_t c = 0; c < cols; c++) acc += in[r * cols + c];
    out[r] = acc;
  }
  return 0;
}

/* `call` over cat's tensor list (dim 0, contiguous): checks where the
 * helper says each input came from. */
static int probe_cat(const alloy_kernel_call *call) {
  if (!ALLOY_HAS_FIELD(call, alloy_kernel_call, input_item) || call->num_outputs != 1) return 11;
  char *dst = call->outputs[0].data;
  for (int i = 0; i < call->num_inputs; i++) {
    const alloy_kernel_tensor *t = &call->inputs[i];
    if (call->input_arg[i] != 0 || call->input_item[i] != i) return 12;
    size_t bytes = (size_t)probe_numel(t->rank, t->sizes) * sizeof(float);
    memcpy(dst, t->data, bytes);
    dst += bytes;
  }
  return 0;
}

/* A data-dependent output: its sizes are known once the kernel has
 * counted, and it allocates it then. */
static int probe_nonzero(const alloy_kernel_call *call) {
  const alloy_kernel_tensor *x = &call->inputs[0];
  const float *v = x->data;
  int64_t n = probe_numel(x->rank, x->sizes), count = 0;
  for (int64_t i = 0; i < n; i++) count += v[i] != 0.0f;
  int64_t sizes[2] = {count, x->rank};
  const alloy_kernel_tensor *out = call->alloc_output(call, 0, sizes);
  if (!out || !out->data || out->sizes[0] != count) return 13;
  int64_t *idx = out->data;
  for (int64_t i = 0, k = 0; i < n; i++) {
    if (v[i] == 0.0f) continue;
    for (int d = x->rank - 1, rest = (int)i; d >= 0; d--) {
      idx[k * x->rank + d] = rest % x->sizes[d];
      rest /= (int)x->sizes[d];
    }
    k++;
  }
  return 0;
}

static void probe_neg_i64(int64_t *out, const int64_t *in, int64_t n) {
  for (int64_t i = 0; i < n; i++) out[i] = -in[i];
}

static const alloy_kernel probe_kernels[] = {
    {"aten.neg.default", "f32", (alloy_kernel_fn)probe_neg_strided,
     "void(out0, in0, rank(in0), sizes(in0), strides(in0))"},
    {"aten.mul.Tensor", "f32", (alloy_kernel_fn)probe_mul_bstrides,
     "void(out0, in0, in1, rank(out0), sizes(out0), bstrides(in0), bstrides(in1))"},
    {"aten.div.Tensor", "f32", (alloy_kernel_fn)probe_div_checked, "int(out0, in0, in1, numel(out0))"},
    {"aten.add.Tensor", "f32", (alloy_kernel_fn)probe_add_ialpha,
     "void(out0, in0, in1, arg(alpha):i64, numel(out0))"},
    {"aten.add.Tensor", "f32", (alloy_kernel_fn)probe_add_falpha,
     "void(out0, in0, in1, arg(alpha):f64, numel(out0))"},
    {"aten.where.self", "bool, f32, f32 -> f32", (alloy_kernel_fn)probe_where,
     "void(out0, in0, in1, in2, numel(out0))"},
    {"aten.max.dim", "f32->f32,i64", (alloy_kernel_fn)probe_max_last,
     "void(out0, out1, in0, size(in0, -2), size(in0, -1))"},
    {"aten.cumsum.default", "f32", (alloy_kernel_fn)probe_cumsum,
     "void(out0, in0, rank(in0), sizes(in0), arg(dim):i32)"},
    {"aten.sum.dim_IntList", "f32", (alloy_kernel_fn)probe_sum_last,
     "int(out0, in0, size(in0, 0), size(in0, -1), arg(keepdim):bool, rank(out0))"},
    {"aten.cat.default", "*", (alloy_kernel_fn)probe_cat, "int(call)"},
    {"aten.nonzero.default", "f32->i64", (alloy_kernel_fn)probe_nonzero, "int(call)"},
    {"aten.neg.default", "i64", (alloy_kernel_fn)probe_neg_i64, "void(out0, in0, numel(out0))"},
};

static const alloy_kernel_table probe_table = {
    .struct_size = ALLOY_KERNEL_TABLE_STRUCT_SIZE,
    .name = "kt_probe",
    .vendor = "Alloy tests",
    .version = "1.0.0",
    .kernels = probe_kernels,
    .count = (int)(sizeof probe_kernels / sizeof probe_kernels[0]),
};

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(const alloy_host_api *host);

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(const alloy_host_api *host) {
  return alloy_kernel_table_plugin(&probe_table, host);
}
