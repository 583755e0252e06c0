/*
 * reference_backend/ref.h: what the reference backend's files share: the
 * kernel table, the strided element access every kernel is built on, the
 * argument readers, the matrix batches of the linear algebra kernels and
 * the one p-norm accumulator of the norm kernels.
 */
#ifndef ALLOY_REF_H
#define ALLOY_REF_H

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "alloy/kernel_table.h"

/* Kernel tables by family (reference_backend/kernels_<family>.c), each
 * ending with a {NULL} row; reference_backend/ref.c joins them. */
/* Every family's rows joined into out (at most cap); returns the count
 * (kernels_all.c). */
int ref_kernels_join(alloy_kernel *out, int cap);
extern const alloy_kernel ref_kernels_pointwise[], ref_kernels_reduce[],
    ref_kernels_histogram[], ref_kernels_shape[], ref_kernels_spectral[],
    ref_kernels_index[], ref_kernels_nn[], ref_kernels_pooling[],
    ref_kernels_norms[], ref_kernels_losses[], ref_kernels_nn_activation[],
    ref_kernels_resample[], ref_kernels_factory[], ref_kernels_linalg[],
    ref_kernels_misc[], ref_kernels_ldl[], ref_kernels_random[];
/* Python's scalar operators on SymInts (reference_backend/kernels_operator.c). */
extern const alloy_kernel ref_kernels_operator[];

/* A reference kernel: everything through the call. Returns 0, or nonzero
 * after ref_fail() said why. */
typedef int (*ref_kernel_fn)(const alloy_kernel_call *c);
#define REF_KERNEL(op, fn) {op, "*", (alloy_kernel_fn)(fn), "int(call)"}

static inline bool is_float(alloy_dtype t) { return alloy_dtype_is_float(t); }
/* The dtypes PyTorch's CPU kernels accumulate in float32 (float32 itself,
 * float16, bfloat16): there a sum past FLT_MAX is infinite. */
static inline bool ref_float32_opmath(alloy_dtype t) {
  return t == ALLOY_F32 || t == ALLOY_F16 || t == ALLOY_BF16;
}

/* Element access by dtype: every value passes through double (floats,
 * bool) or int64 (integers), the widest types that hold each exactly. */
double ref_load_f(const void *base, alloy_dtype t, int64_t index);
int64_t ref_load_i(const void *base, alloy_dtype t, int64_t index);
void ref_store_f(void *base, alloy_dtype t, int64_t index, double v);
void ref_store_i(void *base, alloy_dtype t, int64_t index, int64_t v);

/* v as a tensor of dtype t would hold it (rounding, truncation, wrapping;
 * float64 unchanged): PyTorch rounds float16 / bfloat16 intermediates where
 * it materializes them. */
static inline double round_to(alloy_dtype t, double v) {
  if (t == ALLOY_F64) return v;
  unsigned char buf[8];
  ref_store_f(buf, t, 0, v);
  return ref_load_f(buf, t, 0);
}

/* ---- p-norms -------------------------------------------------------------
 * The p-norm of a stream of values as PyTorch's norm reductions take it
 * (NormOps, NormZeroOps, NormOneOps, AbsMaxOps in ATen's SharedReduceOps.h):
 * p = 0 counts the nonzeros (NaN != 0, so it counts), +inf / -inf keeps the
 * largest / smallest |x|, any other p sums |x|^p and takes the p-th root.
 * A NaN makes every norm but p = 0's NaN. The one accumulator of
 * linalg_vector_norm, norm and dist (kernels_reduce.c), renorm
 * (kernels_nn.c) and embedding_renorm_ (kernels_index.c). */
typedef struct ref_pnorm {
  double p, acc;
} ref_pnorm;

/* With no values: 0, or inf for -inf (PyTorch fills an empty norm with inf
 * for a negative p). */
static inline ref_pnorm ref_pnorm_start(double p) {
  return (ref_pnorm){p, isinf(p) && p < 0 ? INFINITY : 0.0};
}

static inline void ref_pnorm_add(ref_pnorm *n, double x) {
  double v = fabs(x);
  if (n->p == 0.0) n->acc += v != 0.0;
  else if (isnan(n->acc)) return;
  else if (isnan(v)) n->acc = v;
  else if (isinf(n->p)) n->acc = n->p > 0 ? fmax(n->acc, v) : fmin(n->acc, v);
  else if (n->p == 1.0) n->acc += v;
  else if (n->p == 2.0) n->acc += v * v;
  else n->acc += pow(v, n->p);
}

/* The norm. float_sum: the sum of |x|^p was held in float, as PyTorch's
 * opmath holds it for float32, float16 and bfloat16; past FLT_MAX it is
 * inf there, and so is the norm. */
static inline double ref_pnorm_value(const ref_pnorm *n, bool float_sum) {
  if (n->p == 0.0 || isinf(n->p)) return n->acc;
  double sum = float_sum && n->acc > FLT_MAX ? INFINITY : n->acc;
  if (n->p == 1.0) return sum;
  return n->p == 2.0 ? sqrt(sum) : pow(sum, 1.0 / n->p);
}

/* Iterates an output's elements in row-major order, tracking the element
 * offset of each operand (strides may be 0 for broadcast dims). */
typedef struct ref_iter {
  int rank, nops;
  int64_t sizes[16];
  int64_t strides[4][16]; /* per operand, in elements */
  int64_t index[16];
  int64_t offset[4];
  int64_t remaining;
} ref_iter;

/* Steps the row-major multi-index idx over sizes; false after the last. */
bool ref_next_index(int64_t *idx, const int64_t *sizes, int rank);
/* Element offset (by t's strides) of the element at row-major position lin. */
int64_t ref_linear_offset(const alloy_kernel_tensor *t, int64_t lin);

/* Sets up an iterator over out's shape; operand 0 is out, the others are
 * broadcast to it (their trailing dims aligned, size-1 dims repeated). */
void ref_iter_init(ref_iter *it, const alloy_kernel_tensor *out,
                   const alloy_kernel_tensor *const *ins, int nins);
/* Advances; false when done. Offsets are valid while it returns true. */
bool ref_iter_next(ref_iter *it);

/* ---- reading a node's arguments, by schema name ------------------------
 * Tensor arguments come from the call's inputs; everything else from the
 * node through the host table. */

/* The tensor argument called name, or NULL when it is None or a Python
 * number (a wrapped number: read it with ref_scalar). */
const alloy_kernel_tensor *ref_tensor(const alloy_kernel_call *c, const char *name);
/* Item k of the Tensor[] / Tensor?[] argument called name (NULL for None
 * items), and the list's length. */
const alloy_kernel_tensor *ref_tensor_item(const alloy_kernel_call *c, const char *name, int k);
int ref_list_size(const alloy_kernel_call *c, const char *name);
/* Scalars. Each returns false when the argument is None or absent. */
bool ref_int(const alloy_kernel_call *c, const char *name, int64_t *out);
bool ref_float(const alloy_kernel_call *c, const char *name, double *out);
bool ref_bool(const alloy_kernel_call *c, const char *name, bool *out);
bool ref_dtype(const alloy_kernel_call *c, const char *name, alloy_dtype *out);
const char *ref_str(const alloy_kernel_call *c, const char *name);
/* int[] arguments (a single int for int[N] repeats); returns the count or
 * -1 when None. */
int ref_ints(const alloy_kernel_call *c, const char *name, int64_t *out, int cap);
/* float[] arguments; returns the count or -1 when None or not floats. */
int ref_floats(const alloy_kernel_call *c, const char *name, double *out, int cap);
/* A Scalar argument, or a Python number given for a Tensor argument. */
bool ref_scalar(const alloy_kernel_call *c, const char *name, double *out);

/* The operand called name as a tensor: the input, or a Python number
 * (Scalar argument or wrapped number) as a zero-dim float64 or int64 tensor
 * held in *scratch. NULL when None. */
typedef struct ref_scalar_tensor {
  alloy_kernel_tensor t;
  union {
    double f;
    int64_t i;
  } value;
} ref_scalar_tensor;
const alloy_kernel_tensor *ref_operand(const alloy_kernel_call *c, const char *name,
                                       ref_scalar_tensor *scratch);

/* ---- batches of matrices (the linear algebra kernels) -------------------
 * Defined in reference_backend/kernels_linalg.c. A kernel copies each
 * matrix of a batch into a row-major double array, computes there, and
 * stores the result back rounded once. */

#define REF_LA_MAX 4096 /* elements of one matrix the reference handles */

/* A matrix of t in the batch position bidx (of rank brank): t's last two
 * dims (one when vec: a column). Size-1 batch dims of t repeat. */
typedef struct {
  const alloy_kernel_tensor *t;
  int64_t base, rows, cols, rs, cs;
} ref_mview;

ref_mview ref_mat_at(const alloy_kernel_tensor *t, bool vec, const int64_t *bidx, int brank);
/* Reads the whole matrix into a (leading dim: its cols). */
void ref_mat_load(ref_mview v, double *a);
/* Stores rows x cols of a (leading dim lda) into v's top-left corner. */
void ref_mat_store(ref_mview v, const double *a, int64_t lda);
/* Stores v[0..n) into the vector of t at bidx (ints: pivots). */
void ref_vec_store_i(const alloy_kernel_tensor *t, const int64_t *bidx, int brank, const int32_t *v,
                     int64_t n);
/* Element at batch position bidx of a tensor holding one value per matrix. */
int64_t ref_scalar_at(const alloy_kernel_tensor *t, const int64_t *bidx, int brank);
/* Number of matrices in out (its dims but the last `tail`). */
int64_t ref_batch_count(const alloy_kernel_tensor *out, int tail);

/* Scratch for the matrix kernels: up to 6 matrices of REF_LA_MAX doubles. */
typedef struct {
  double *m[6];
  int32_t *piv;
} ref_la_scratch;

/* Checks that every operand's matrices fit and allocates the scratch;
 * false (nothing left allocated) when they do not or memory ran out. */
bool ref_la_begin(const alloy_kernel_call *c, ref_la_scratch *s);
void ref_la_free(ref_la_scratch *s);

/* Says why a kernel failed: through call->fail, so that the run's error
 * carries it (code ALLOY_ERR_INVALID_ARGUMENT), and logged (prefixed with
 * the node's op) through the host; returns 1, the kernel's failure result.
 * An index out of range says which index, its value and the bound. */
int ref_fail(const alloy_kernel_call *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Number of elements of a tensor. */
int64_t ref_numel(const alloy_kernel_tensor *t);

#endif
