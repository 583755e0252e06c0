/*
 * plugins/cuda/cuda_internal.h: what the files of the cuda backend share.
 *
 *   cuda_api.c      the driver and NVRTC, opened with dlopen
 *   cuda_ops.c      the op table: each op the backend runs and the CUDA
 *                   expression it becomes; claims and their costs
 *   cuda_codegen.c  a partition -> a plan: tensors (a base buffer and a
 *                   strided view of it), fused pointwise groups, and the
 *                   CUDA C source of their kernels (no driver calls: unit
 *                   tested on machines without a GPU); cuda_codegen_rows.c
 *                   the other steps (reductions, norms, gathers, products)
 *   cuda_blas.c     matrix products through cuBLASLt (HIP: hipBLASLt,
 *                   blas_port.h, rocm_api.h)
 *   cuda_dnn.c      convolutions through cuDNN's graph API; the HIP build's
 *                   miopen_dnn.c through MIOpen, behind the same cuda_dnn.h;
 *                   cuda_codegen_conv.c plans them, and the pooling and
 *                   batch norm kernels
 *   cuda_rtc.c      a plan's module compiled by NVRTC in pieces, on threads
 *   cuda_backend.c  the plugin: devices, buffers, queues, events, compile
 *                   (NVRTC, module load) and execute (kernel launches)
 *
 * A plan is made for concrete sizes: the host specializes a partition with
 * symbolic sizes per set of sizes (the backend does not declare
 * ALLOY_CAP_SYMBOLIC_SHAPES), so every stride and size is a constant of
 * the generated code.
 */
#ifndef ALLOY_CUDA_INTERNAL_H
#define ALLOY_CUDA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloy/plugin.h"

#define CUDA_MAX_RANK 8

/* NVRTC's options for a plan's module, after --gpu-architecture=sm_XY. */
#define CUDA_NVRTC_OPTIONS "--std=c++17", "-default-device"
/* hipRTC's, after --offload-arch=gfxNNN (the HIP build, gpu_port.h). */
#define HIP_RTC_OPTIONS "-std=c++17"

/* ---- the op table (cuda_ops.c) ---------------------------------------- */

enum {
  CUDA_OP_POINTWISE = 0, /* out[i] = f(inputs at i): fused into groups     */
  CUDA_OP_VIEW,          /* a new geometry over its input's buffer: no kernel */
  CUDA_OP_FILL,          /* out[i] = a scalar argument (full, scalar_tensor) */
  CUDA_OP_REDUCE,        /* rows of the reduced dims, one block a row      */
  CUDA_OP_GEMM,          /* mm, bmm, addmm: cuBLASLt                       */
  CUDA_OP_LAYER_NORM,    /* native_layer_norm: a block per row             */
  CUDA_OP_EMBEDDING,     /* rows of a table gathered by index              */
  CUDA_OP_CAT,           /* each input copied into its slice of the output */
  CUDA_OP_INDEX,         /* index.Tensor with one index tensor: a gather   */
  CUDA_OP_SCAN,          /* cumsum: a thread per row, in order             */
  CUDA_OP_NOP,           /* metadata assertions: checked when the graph was built */
  CUDA_OP_ATTENTION,     /* scaled_dot_product_attention: one flash-style kernel */
  CUDA_OP_CONV,          /* convolution: cuDNN (cuda_dnn.c)                */
  CUDA_OP_POOL,          /* max / average pooling: a thread per output     */
  CUDA_OP_BATCH_NORM,    /* inference batch norm: pointwise work (.fuse)   */
};

/* What a CUDA_OP_REDUCE op computes over each row (cuda_op.expr is NULL). */
enum {
  RED_SUM = 0,
  RED_MEAN,
  RED_MAX,         /* NaN propagates */
  RED_MIN,
  RED_SOFTMAX,     /* a row in, a row out */
  RED_LOG_SOFTMAX,
  RED_ANY,         /* bool results: any / all of the row's truth values */
  RED_ALL,
};

/* Compute-type rules of a pointwise op. */
enum {
  CT_RESULT = 0,  /* computes in the result's type (opmath: float for 16-bit) */
  CT_PROMOTED,    /* computes in the promoted type of its operands (eq, lt) */
  CT_BOOL,        /* its operands as truth values (logical_and)             */
};

struct builder; /* cuda_codegen.h */

typedef struct cuda_op {
  const char *name;  /* "aten.add.Tensor" */
  int kind;          /* CUDA_OP_* */
  int ct;            /* CT_* */
  int bool_operand;  /* this tensor operand is a condition (where: 0), or -1 */
  bool float_only;   /* runs on float results only (sin of an int is a float) */
  bool no_bool;      /* bool operands are refused (PyTorch refuses neg of bool) */
  /* The expression, in the operands' compute type: $0.. the tensor
   * operands in schema order, ${name} a scalar argument of the schema as a
   * literal of the compute type, $T the compute type's C name. */
  const char *expr;
  int reduce; /* CUDA_OP_REDUCE: RED_* */
  /* Writes the node's steps into the plan: every op that is not fused
   * pointwise work, a view, a fill or a no-op (cuda_codegen_rows.c). */
  void (*emit)(struct builder *b, const alloy_node *n, const struct cuda_op *op);
  /* (optional) Why node n cannot be claimed, past the table's general
   * rules (cuda_node_unsupported): a static sentence, or NULL. */
  const char *(*check)(const alloy_host_api *h, const alloy_node *n);
  /* (optional) Pointwise work that is not one expression of its operands
   * (batch norm: per-channel vectors broadcast along dim 1): it joins the
   * open fused group as the table's pointwise ops do, writing its first
   * output's value into kernel k of group gid and returning its register
   * (-1 on failure, b->err set). k is a struct kernel of cuda_codegen.h. */
  int (*fuse)(struct builder *b, void *k, int gid, const alloy_node *n);
  /* (optional, with fuse) How node n joins fused group `open` (-1: none):
   * 1 it joins, 0 it starts a group (it reads an operand at other indices
   * than its own, so from memory), -1 it is a step of its own (emit).
   * Without it, 1. */
  int (*groupable)(struct builder *b, const alloy_node *n, int open);
} cuda_op;

const cuda_op *cuda_op_find(const char *name);

/* ---- plans (cuda_codegen.c) -------------------------------------------- */

enum { BASE_INPUT = 0, BASE_OUTPUT, BASE_TEMP };

typedef struct cuda_base {
  int kind;        /* BASE_* */
  int index;       /* the partition input or output it is; temps: -1 */
  uint64_t bytes;  /* temps: its size */
  uint64_t offset; /* temps: where in the execute's scratch arena */
} cuda_base;

/* A tensor of the plan: a strided view (in elements) of a base. */
typedef struct cuda_tensor {
  int base;
  alloy_dtype dtype;
  int rank;
  int64_t sizes[CUDA_MAX_RANK], strides[CUDA_MAX_RANK], offset;
} cuda_tensor;

/* GEMM operands, in cuda_launch.gbase order */
enum { GEMM_A = 0, GEMM_B, GEMM_C, GEMM_D, GEMM_BIAS, GEMM_OPERANDS };

/* One product D = alpha * op(A) @ op(B) + beta * C (+ bias on every row),
 * then relu or gelu, over `batch` matrices. All fields are in, copied by
 * cuda_gemm_plan. D is packed: [batch, m, n] with row stride n. */
typedef struct cuda_gemm_desc {
  alloy_dtype dtype;          /* of A, B, C, D and bias: ALLOY_F32, ALLOY_F16, ALLOY_BF16 */
  int64_t m, n, k, batch;     /* batch 1 for mm; each >= 1 */
  int64_t lda, ldb, ldc;      /* row-major leading dims (elements between rows) */
  int64_t stride_a, stride_b, stride_c; /* between batches (elements); 0 broadcasts */
  bool trans_a, trans_b;      /* A given as [k, m] / B given as [n, k] (row-major): linear's weight */
  double alpha, beta;         /* beta != 0: C is read (C may equal D if ldc == n, stride_c == m*n) */
  bool has_c;                 /* C given: [batch, m, n] with ldc, stride_c; or ldc == 0 and stride_c == 0,
                                 one row broadcast to all (then beta must be 1 and bias false: it
                                 becomes the bias epilogue) */
  bool bias;                  /* a vector of n elements added to every row, before the activation */
  int activation;             /* 0 none, 1 relu, 2 gelu (cuBLASLt's, the tanh approximation) */
  bool allow_tf32;            /* f32 only: TF32 tensor cores (CUBLAS_COMPUTE_32F_FAST_TF32), else exact f32 */
  unsigned align[GEMM_OPERANDS]; /* bytes each pointer is expected to be a multiple of (a power of two
                                    up to 256; below 16 counts as 16): the plan's fast algorithm
                                    assumes it, and a run whose pointers fall short takes one planned
                                    for 16 */
} cuda_gemm_desc;

/* One convolution forward y = conv(x, w) (+ bias along dim 1), through
 * cuDNN's graph API (cuda_dnn.c). Tensors of rank 4 or 5 (N, C, then 2 or
 * 3 spatial dims: a 1-d convolution comes with a height of 1), sizes and
 * strides in elements; w is [C_out, C_in / groups, k...], so the groups
 * are x's C over w's. All fields in, copied by cuda_conv_plan. */
typedef struct cuda_conv_desc {
  alloy_dtype dtype; /* of x, w, y and the bias: ALLOY_F32, ALLOY_F16, ALLOY_BF16 */
  int rank;          /* 4 or 5 */
  int64_t x_sizes[5], x_strides[5];
  int64_t w_sizes[5], w_strides[5];
  int64_t y_sizes[5], y_strides[5];
  int64_t stride[3], padding[3], dilation[3]; /* per spatial dim; padding on both sides */
  bool bias;       /* a dense vector of y_sizes[1] elements, fused into cuDNN's graph when an
                      engine takes it, else added by the launch cuda_launch.dnn_bias_step */
  bool allow_tf32; /* f32 only: engines on TF32 tensor cores allowed, else exact f32 */
} cuda_conv_desc;

/* One step of a plan: a launch of kernel `name` of the plan's module over
 * n elements, with its parameters the bases listed (device pointers, in
 * order); or a matrix product through cuBLASLt; or a convolution through
 * cuDNN. */
enum { LAUNCH_KERNEL = 0, LAUNCH_GEMM, LAUNCH_DNN };

/* Convolution operands, in cuda_launch.dbase order */
enum { DNN_X = 0, DNN_W, DNN_BIAS, DNN_Y, DNN_OPERANDS };

typedef struct cuda_launch {
  int kind; /* LAUNCH_* */
  /* LAUNCH_GEMM: the product (cuda_blas.c), its operands' bases (-1:
   * absent) and element offsets in them */
  cuda_gemm_desc gemm;
  int gbase[GEMM_OPERANDS];
  int64_t goff[GEMM_OPERANDS];
  /* LAUNCH_DNN: the convolution (cuda_dnn.c), its operands' bases (-1:
   * absent) and element offsets in them, and the kernel step adding the
   * bias when cuDNN does not fuse it (-1: none; the compile sets that
   * step's n to 0 when cuDNN does) */
  cuda_conv_desc conv;
  int dbase[DNN_OPERANDS];
  int64_t doff[DNN_OPERANDS];
  int dnn_bias_step;
  char name[32];  /* LAUNCH_KERNEL: its kernel's name, "k<kernel>" */
  int kernel;     /* LAUNCH_KERNEL: the kernel's id (cuda_plan.kernel_at) */
  char what[56]; /* what it computes, for traces: "mm", "fused add+mul+2" (a kernel's label and "+N") */
  int64_t n;  /* elements, or rows for a reduction */
  bool rows;  /* a block per row (n rows), else a thread per element */
  int per_thread; /* elements a thread takes each grid-stride pass (0 or 1: one) */
  /* A kernel of its own geometry (attention, convolution helpers): when
   * block is not 0, the launch is grid x block threads with shmem bytes of
   * dynamic shared memory, else the grid-stride geometry of n and rows. */
  unsigned grid[3], block, shmem;
  int nbases;
  int *bases; /* nbases */
} cuda_launch;

typedef struct cuda_plan {
  cuda_base *bases;
  int nbases;
  cuda_launch *launches;
  int nlaunches;
  uint64_t scratch_bytes; /* temps, each 256-byte aligned */
  char *source;           /* the module's CUDA C, NUL-terminated */
  size_t source_len;
  /* The module's text is the prelude, source[0, prelude_len), then each
   * kernel's definition (its helpers included) in id order: kernel k<i>'s
   * starts at kernel_at[i] and runs to the next one's (or the end). Any
   * subset of kernels after the prelude compiles on its own, so the
   * backend compiles the module in pieces on several threads. */
  size_t prelude_len;
  size_t *kernel_at;      /* nkernels entries */
  int nkernels;           /* fused groups, copies and custom kernels */
  int nfused_nodes;       /* nodes that landed in a fused kernel */
} cuda_plan;

/* The strides an execute gives its partition's inputs and outputs, when
 * they are not contiguous (a transposed input, a sliced output): a plan is
 * made for one layout, as for one set of sizes. */
typedef struct cuda_layout {
  const alloy_tensor *inputs;  /* the partition's inputs, in order */
  const alloy_tensor *outputs; /* its outputs */
} cuda_layout;

/* How a plan is made, from the backend's options (cuda_backend_set_option)
 * and the libraries found. All fields in. */
typedef struct cuda_plan_options {
  /* Everything portable: products and convolutions as Alloy's own tiled
   * kernels in the module (cuda_codegen_gemm.c: LAUNCH_KERNEL steps), not
   * library steps (cuBLASLt and cuDNN, HIP: hipBLASLt and MIOpen), and
   * 16-bit attention by the SIMT kernel (no PTX): option vendor_libs=0. */
  bool portable;
  /* Products alone as Alloy's own kernels though the plan is not portable:
   * the HIP build on a machine without hipBLASLt. */
  bool portable_gemm;
  /* Convolutions alone as Alloy's own kernels: the HIP build without
   * MIOpen. */
  bool portable_conv;
  /* 16-bit attention by the SIMT kernel though the plan is not portable:
   * a device before sm_80, which has no mma.sync m16n8k16. */
  bool simt_attention;
  /* 4-d convolutions' outputs, and what is computed from them pointwise
   * or by pooling, laid out channels last (N, H, W, C in memory) as
   * temporaries, so that cuDNN's tensor-core engines read and write them
   * without transposes: option channels_last. */
  bool channels_last;
} cuda_plan_options;

/* Builds the plan of a partition every node of which cuda_op_find knows,
 * for layout (NULL: every input and output contiguous) and opts (NULL:
 * the defaults, all false). Returns NULL, or an error (host->error_new)
 * naming the node. */
alloy_error *cuda_plan_build(const alloy_host_api *host, const alloy_graph *g, const cuda_layout *layout,
                             const cuda_plan_options *opts, cuda_plan *plan);
void cuda_plan_free(cuda_plan *plan);

/* Whether node n of g can be claimed: its op is known and its tensors have
 * concrete sizes and dtypes the generated code handles. Returns NULL, or a
 * static reason for claims_reject. */
const char *cuda_node_unsupported(const alloy_host_api *host, const alloy_node *n);

/* The multiply-adds of convolution node n times 2, for its claim's cost
 * (cuda_codegen_conv.c); 0 when its sizes are not known. */
double cuda_conv_flops(const alloy_host_api *host, const alloy_node *n);

#endif
