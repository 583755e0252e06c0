/*
 * plugins/cpu/cpu_internal.h: what the files of the cpu backend share.
 *
 *   cpu_ops.c      the op table: each op the backend runs and the formula
 *                  or emitter it becomes; which nodes it claims, and why not
 *   cpu_ir.c       LLVM IR as text: registers, conversions, the primitives
 *                  the formulas call, the module's prelude, loops
 *   cpu_plan.c     a partition -> a plan: tensors (a base buffer and a
 *                  strided view of it), fused pointwise groups and the IR of
 *                  their loop nests; cpu_rows.c the other steps
 *                  (reductions, softmax, layer norm, matrix products)
 *   cpu_jit.c      the module compiled by LLVM (O3, the host's CPU) and
 *                  loaded by ORC's LLJIT
 *   cpu_blas.c     matrix products through OpenBLAS (opened with dlopen)
 *   cpu_pool.c     the thread pool that splits a step's rows
 *   cpu_backend.c  the plugin: device, buffers, queues, compile, execute
 *
 * The planner and the IR it writes need no LLVM: the unit tests link
 * cpu_ops.c, cpu_ir.c, cpu_plan.c and cpu_rows.c alone
 * (tests/test_cpu_plan.c). A plan is made for concrete sizes: the host
 * specializes a partition with symbolic sizes per set of sizes (the
 * backend does not declare ALLOY_CAP_SYMBOLIC_SHAPES), so every stride and
 * trip count is a constant of the generated code.
 */
#ifndef ALLOY_CPU_INTERNAL_H
#define ALLOY_CPU_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloy/plugin.h"

#define CPU_MAX_RANK 8
#define CPU_MAX_OPERANDS 64

/* ---- the op table (cpu_ops.c) ------------------------------------------- */

enum {
  CPU_OP_POINTWISE = 0, /* out[i] = f(inputs at i): fused into groups        */
  CPU_OP_VIEW,          /* a new geometry over its input's buffer: no code    */
  CPU_OP_FILL,          /* out[i] = a formula of scalars and the index i      */
  CPU_OP_ROWS,          /* a step of its own, written by the row's emitter    */
  CPU_OP_NOP,           /* metadata assertions: checked when the graph was built */
};

/* What a reduction computes over each row (cpu_op.reduce). */
enum {
  RED_SUM = 0,
  RED_MEAN,
  RED_MAX, /* NaN propagates */
  RED_MIN,
  RED_SOFTMAX, /* a row in, a row out */
  RED_LOG_SOFTMAX,
  RED_ANY, /* truth values: any / all of the row */
  RED_ALL,
};

/* The compute type of a pointwise or fill node. */
enum {
  CT_RESULT = 0, /* the result's type (opmath: float for float16, bfloat16) */
  CT_PROMOTED,   /* the promoted type of its operands (eq, lt)              */
  CT_BOOL,       /* its operands as truth values (logical_and)              */
  CT_ACC,        /* the accumulate type: double for floats, int64 (arange)  */
};

/* What cpu_rows.c does with a CPU_OP_ROWS node. */
enum {
  ROWS_REDUCE = 0, /* cpu_op.reduce over dims                         */
  ROWS_LAYER_NORM,
  ROWS_GEMM, /* mm, bmm, addmm: OpenBLAS, or the emitted loop        */
  ROWS_EMBEDDING, /* gathers (cpu_index.c): pointwise work with an index */
  ROWS_INDEX,
  ROWS_GATHER,
  ROWS_CAT,    /* each input into its slice of the output                */
  ROWS_CUMSUM, /* a running sum along a dim                              */
  ROWS_CONV,   /* convolution: im2col + sgemm, bias and relu in its tiles (cpu_conv.c) */
  ROWS_POOL,   /* max / average / adaptive average pooling: emitted window loops */
  ROWS_ATTENTION, /* scaled_dot_product_attention: flash-style blocks (cpu_attention.c) */
};

typedef struct cpu_op {
  const char *name; /* "aten.add.Tensor" */
  int kind;         /* CPU_OP_* */
  int ct;           /* CT_* */
  int bool_operand; /* this tensor operand is a condition (where: 0), or -1 */
  bool float_only;  /* runs on float results only (sin of an int is a float) */
  bool no_bool;     /* bool operands are refused (PyTorch refuses neg of bool) */
  /* float16/bfloat16: a one-element `other` (a Python number, a 0-dim
   * tensor) stays in float32 instead of being rounded to the dtype, as
   * PyTorch's mul and div kernels keep it in opmath */
  bool scalar_opmath;
  /* The formula, over the operands in the compute type: calls of the
   * primitives of cpu_ir.c, $0.. the tensor operands in schema order,
   * ${name} a scalar argument as a constant of the compute type (${name?}
   * an optional one: a primitive given an absent one returns its first
   * argument), $i the element's linear index (fills). */
  const char *expr;
  int rows;   /* CPU_OP_ROWS: ROWS_* */
  int reduce; /* ROWS_REDUCE: RED_* */
} cpu_op;

const cpu_op *cpu_op_find(const char *name);
/* index.Tensor(self, indices): the first dim of its integer index tensors
 * (at consecutive dims, the others None), or -1 for any other pattern. */
int cpu_index_position(const alloy_host_api *h, const alloy_node *n);

/* Whether node n can be claimed: its op is in the table and its tensors
 * have dtypes and shapes the generated code handles. NULL, or a static
 * reason for claims_reject. */
const char *cpu_node_unsupported(const alloy_host_api *host, const alloy_node *n);

/* Convolution and pooling nodes the cpu backend does not compute (cpu_rows.c):
 * NULL, or a static reason. */
const char *cpu_conv_unsupported(const alloy_host_api *host, const alloy_node *n, const cpu_op *op);
/* The same for scaled_dot_product_attention (cpu_attention.c). */
const char *cpu_attention_unsupported(const alloy_host_api *host, const alloy_node *n);

/* ---- plans (cpu_plan.c) ------------------------------------------------- */

enum { BASE_INPUT = 0, BASE_OUTPUT, BASE_TEMP };

typedef struct cpu_base {
  int kind;        /* BASE_* */
  int index;       /* the partition input or output it is; temps: -1 */
  uint64_t bytes;  /* temps: its size */
  uint64_t offset; /* temps: where in the execute's scratch arena (64-byte aligned) */
} cpu_base;

/* A convolution run as a STEP_GEMM (cpu_conv.c): its row space is units
 * of (image, group, column tile); each unit writes the tile's columns of
 * im2col(x) into a buffer of its own (or reads a 1x1, stride 1, unpadded
 * x in place), multiplies the group's weights by it with one sgemm into D
 * (dense [N, Cout, OH*OW]) and adds the bias and applies relu to the tile
 * while it is in cache. A is the weights, dense [Cout, K] (K = Cin/groups
 * * kh * kw), followed by the bias (Cout values) when there is one; B is
 * x, each (image, channel) plane dense. 1-d convolutions have H = 1. */
typedef struct cpu_conv_desc {
  bool on;
  bool direct; /* 1x1, stride 1, no padding: x is the matrix itself */
  bool bias, relu;
  bool loop;   /* small: fused multiply-add chains in k's order, not sgemm */
  bool f64;    /* float64 (dgemm); else float32 */
  int64_t a_off, x_off, d_off;           /* the operands' element offsets (the step's goff are 0) */
  int64_t n, groups, cin_g, cout_g, k;  /* k = cin_g * kh * kw */
  int64_t h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
  int64_t x_nstride, x_cstride;          /* x's image and channel strides (elements) */
  int64_t tile, ntiles;                  /* output columns per unit, units per (image, group) */
} cpu_conv_desc;

/* scaled_dot_product_attention run as a STEP_GEMM (cpu_attention.c): its
 * row space is units of (batch index, block of query rows). A is q, B k,
 * C v, E the mask (none: its base is -1), D the output, float32 with their
 * last dims packed; element offsets here (the step's goff are 0). */
typedef struct cpu_attn_desc {
  bool on;
  bool causal;
  int mask;                /* 0: none, 1: bool (keep where true), 2: float32 (added) */
  float scale;
  int64_t L, S, E, EV;     /* query rows, keys, head dims of q/k and of v */
  int nb;                  /* batch dims (the output's leading dims) */
  int64_t nbatch, nqblocks;
  int64_t bsizes[CPU_MAX_RANK];
  int64_t qbs[CPU_MAX_RANK], kbs[CPU_MAX_RANK], vbs[CPU_MAX_RANK], mbs[CPU_MAX_RANK], obs[CPU_MAX_RANK];
  int64_t ldq, ldk, ldv, ldo; /* row strides of the last two dims */
  int64_t msl, mss;           /* the mask's strides along query rows and keys (0: broadcast) */
  int64_t q_off, k_off, v_off, m_off, o_off;
} cpu_attn_desc;

/* One batch of products D = op(A) @ op(B), float32, row-major: D packed
 * [batch, m, n] (row stride ldd). The planner converts 16-bit operands to
 * float32 temporaries first and adds bias and activations after, in the
 * loop that reads D. */
typedef struct cpu_gemm_desc {
  int64_t m, n, k, batch;             /* each >= 1; k may be 0 (D is zeros) */
  int64_t lda, ldb, ldd;              /* row-major leading dims (elements) */
  int64_t stride_a, stride_b, stride_d; /* between batches (elements); 0 broadcasts */
  bool trans_a, trans_b;              /* A given as [k, m] / B as [n, k] */
  cpu_conv_desc conv;                 /* conv.on: a convolution (cpu_conv.c), rows are its units */
  cpu_attn_desc attn;                 /* attn.on: attention (cpu_attention.c), rows are its units */
} cpu_gemm_desc;

enum { STEP_KERNEL = 0, STEP_GEMM };
/* A, B and D of a product; attention's v and mask as C and E */
enum { GEMM_A = 0, GEMM_B, GEMM_D, GEMM_C, GEMM_E, GEMM_OPERANDS };

typedef struct cpu_step {
  int kind;        /* STEP_* */
  int kernel;      /* STEP_KERNEL: the module's function k<kernel> */
  int64_t rows;    /* its row loop runs [0, rows): what threads split */
  int64_t row_work; /* elements read or written per row (threads pay off past a size) */
  int nparams;
  int *params;     /* the bases the kernel's pointer array holds, in order */
  /* STEP_GEMM: the product and its operands' bases and element offsets */
  cpu_gemm_desc gemm;
  int gbase[GEMM_OPERANDS];
  int64_t goff[GEMM_OPERANDS];
  char what[40];   /* the ops it runs, for traces ("add+mul+relu") */
} cpu_step;

typedef struct cpu_plan {
  cpu_base *bases;
  int nbases;
  cpu_step *steps;
  int nsteps;
  uint64_t scratch_bytes; /* the temporaries */
  char *ir;               /* the module's LLVM IR, NUL-terminated */
  size_t ir_len;
  int nkernels;           /* functions k0.. of the module */
  int nfused_nodes;       /* nodes computed inside a fused loop */
} cpu_plan;

/* The strides an execute gives its partition's inputs and outputs when
 * they are not contiguous: a plan is made for one layout. */
typedef struct cpu_layout {
  const alloy_tensor *inputs;
  const alloy_tensor *outputs;
} cpu_layout;

typedef struct cpu_plan_options {
  bool blas; /* products as STEP_GEMM (OpenBLAS); else an emitted loop nest */
} cpu_plan_options;

/* Builds the plan of a partition every node of which cpu_node_unsupported
 * accepts, for layout (NULL: every input and output contiguous). Returns
 * NULL, or an error (host->error_new) naming the node and its op. */
alloy_error *cpu_plan_build(const alloy_host_api *host, const alloy_graph *g, const cpu_layout *layout,
                            const cpu_plan_options *options, cpu_plan *plan);
void cpu_plan_free(cpu_plan *plan);

#endif
