/*
 * plugins/cuda/cuda_codegen.h: what the two halves of the code generator
 * share. cuda_codegen.c makes the plan (bases, views, the fused pointwise
 * kernels, the module's text); cuda_codegen_rows.c writes the steps that
 * are not fused pointwise work: reductions and softmax, layer norm,
 * gathers, scans, cat and the cuBLASLt products; cuda_codegen_gemm.c the
 * portable product and convolution kernels. Internal to the plugin;
 * every function here works on one builder, from one thread.
 */
#ifndef ALLOY_CUDA_CODEGEN_H
#define ALLOY_CUDA_CODEGEN_H

#include <stdbool.h>
#include <stdint.h>

#include "plugins/cuda/cuda_internal.h"

typedef struct text {
  char *s;
  size_t len, cap;
  bool oom;
} text;

/* A kernel written into the module: its text's hash and body, its id. */
typedef struct seen_kernel {
  uint64_t hash;
  char *body;
  int nbases;
  int style; /* the loop around the body: 1 a block per row, 2 narrow (cg_kernel_finish) */
  int id;
} seen_kernel;

/* What the plan knows of one graph value. */
typedef struct vinfo {
  const alloy_value *v;
  int tensor; /* plan tensor holding it in memory, or -1 */
  int group;  /* the fused group computing it, or -1 */
  int var;    /* its register in that group's kernel */
  int output; /* the partition output it is written to directly, or -1 */
  bool stored; /* read outside its group: written to memory */
  const alloy_node *node; /* the node computing it (a row group computes it again) */
  int at;                 /* that node's index in the graph (when node is set) */
  int phase;              /* the kernel's phase var was computed in (kernel.phase) */
  bool row_scope;         /* var lives for the whole row, not one loop (kernel.in_loop) */
  bool cl;                /* a 4-d temporary laid out channels last (builder.channels_last) */
  bool into_pool;         /* a relu the max pool reading it applies (cg_relu_into_pool) */
  bool into_cat;          /* pointwise work the cat reading it computes (cg_into_cat) */
} vinfo;

typedef struct builder {
  const alloy_host_api *host;
  const alloy_graph *g;
  const cuda_layout *layout; /* the execute's strides, or NULL: contiguous */
  bool portable_gemm;        /* .portable or .portable_gemm: products as tile kernels */
  bool portable_conv;        /* .portable or .portable_conv: convolutions as tile kernels */
  bool simt_attention;       /* cuda_plan_options.simt_attention, or portable: no mma.sync */
  bool channels_last;        /* cuda_plan_options.channels_last (not with portable convolutions) */
  cuda_plan *plan;
  cuda_tensor *tensors;
  int ntensors, cap_tensors, cap_bases, cap_launches;
  vinfo *vals; /* open addressing on the value pointer */
  int cap_vals;
  seen_kernel *seen; /* the kernels written, by text */
  int nseen, cap_seen;
  int cap_kernel_at; /* plan->kernel_at's */
  text src;
  alloy_error *err;
  char what[48]; /* the node being emitted, short: labels its launches */
} builder;

/* A kernel being written: its iteration shape, parameters (bases) and body. */
typedef struct kernel {
  int64_t sizes[CUDA_MAX_RANK]; /* the iteration's, in the order of the linear index i */
  int rank;
  /* A permuted iteration (a channels-last group): iteration dim d is the
   * values' dim perm[d], so that i walks memory order; lsizes are the
   * values' (logical) sizes. Without it perm is the identity. */
  bool permuted;
  int perm[CUDA_MAX_RANK];
  int64_t lsizes[CUDA_MAX_RANK];
  int bases[64], nbases;
  int nvars;
  int loaded[64], loaded_var[64], nloaded; /* tensors loaded once each */
  bool index_split; /* the per-dim indices are declared */
  bool rows;        /* a block per row (reductions), not a thread per element */
  char what[40];    /* the fused nodes, short ("add+mul+2"); empty: builder.what */
  int nwhat;        /* nodes in what */
  text body;
  /* A row group (cuda_codegen_fuse.c): reductions over the trailing dims
   * with the pointwise work before, between and after them, a block per
   * row. sizes is then the kept shape (the reduced dims 1); loops over a
   * row's elements iterate the full shape. */
  bool row_group, in_loop;
  int phase;                    /* bumped at each loop's start and end */
  int64_t full[CUDA_MAX_RANK];  /* the full shape */
  int64_t kept[CUDA_MAX_RANK];  /* the kept shape */
  int64_t cols;                 /* elements a row */
  size_t loop_at;               /* where the open loop's text starts (accumulators go before) */
  int load_floor;               /* loaded[] before this index belong to the row, not the loop */
  bool row_split;               /* the row's per-dim indices are declared */
  int nacc;                     /* reductions written (their accumulators' names) */
  /* Index arithmetic: the plan's own kernels (groups, copies) write their
   * index variables' type as IDX_T, which cg_kernel_finish makes int when
   * every element they reach (extent) and n fit in 2^30, else i64: 64-bit
   * division and modulo are many instructions on a GPU. Such a kernel
   * takes 4 elements a thread each pass of its grid-stride loop. */
  bool narrow;
  int64_t extent; /* one past the largest element offset loaded or stored */
} kernel;

/* ---- cuda_codegen.c ------------------------------------------------------ */

void cg_put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
alloy_error *cg_fail(builder *b, const alloy_node *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
vinfo *cg_val(builder *b, const alloy_value *v);
bool cg_grow(void **p, int *cap, int need, size_t size);
int cg_add_base(builder *b, int kind, int index, uint64_t bytes);
int64_t cg_numel_of(const int64_t *sizes, int rank);
int cg_materialize(builder *b, const alloy_value *v);
/* The plan tensor holding value v, copied into *out; false after failing
 * (b->err set). A copy, because b->tensors moves when it grows: a pointer
 * into it does not outlive the next tensor added (cg_materialize), and a
 * step that read one after its output's materialize launched with the
 * freed memory's base (a flaky illegal address on the GPU). */
bool cg_in_memory(builder *b, const alloy_node *n, const alloy_value *v, cuda_tensor *out);
/* Packs 4-d t's strides channels last: N, H, W, C in memory. */
void cg_strides_channels_last(cuda_tensor *t);
/* Whether 4-d t is packed channels last (a dim of size 1 may have any
 * stride). */
bool cg_is_channels_last(const cuda_tensor *t);
void cg_kernel_begin(kernel *k, const int64_t *sizes, int rank);
void cg_kernel_finish(builder *b, kernel *k);
/* A kernel of its own geometry: def is its whole definition, named KNAME,
 * taking nbases `char *` parameters then an i64. Written into the module
 * once per text; returns its id (its name is "k<id>"). */
int cg_custom_kernel(builder *b, const char *def, int nbases);
int cg_kernel_param(kernel *k, int base);
int cg_kernel_load(builder *b, kernel *k, const cuda_tensor *t, int id);
/* The register holding value v in kernel k of group gid: computed there, or
 * loaded from where it is in memory (-1: it is not, b->err set). */
int cg_operand_var(builder *b, kernel *k, int gid, const alloy_value *v);
/* Writes pointwise node n into kernel k of group gid with its nin tensor
 * operands in[] (cg_tensor_operands' order, at most 8) in registers var[]
 * rather than where they are: work a consumer computes at indices of its
 * own (cg_into_cat). Returns the result's register (-1: b->err set),
 * which the value's vinfo does not keep. */
int cg_pointwise_from(builder *b, kernel *k, int gid, const alloy_node *n, const alloy_value *const *in,
                      const int *var, int nin);
void cg_kernel_store(kernel *k, const cuda_tensor *t, int var);
void cg_offset_text(kernel *k, const cuda_tensor *t, char *buf, size_t cap);
/* Declares the kernel's per-dim indices i0.. (of k->sizes) from its
 * linear index i, once. */
void cg_index_split(kernel *k);
/* Notes the elements tensor t spans, for the kernel's index type. */
void cg_kernel_reach(kernel *k, const cuda_tensor *t);
void cg_emit_copy(builder *b, const cuda_tensor *src, const cuda_tensor *dst);
const char *cg_dtype_tag(alloy_dtype t);
const char *cg_reg_type(alloy_dtype t);
const alloy_arg *cg_arg_named(const alloy_host_api *h, const alloy_node *n, const char *name);
int64_t cg_int_arg(const alloy_host_api *h, const alloy_node *n, const char *name, int64_t dflt);
int cg_wrap_dim(int64_t d, int rank);
/* Whether value v has these concrete sizes. */
bool cg_same_sizes(const alloy_host_api *h, const alloy_value *v, const int64_t *sizes, int rank);
int cg_tensor_operands(const alloy_host_api *h, const alloy_node *n, const alloy_value **out, int cap);
int cg_index_position(const alloy_host_api *h, const alloy_node *n, int *count);

/* ---- cuda_codegen_rows.c: each writes node n's steps into the plan ----- */

/* The emitters the op table names (cuda_op.emit). */
void cg_emit_reduce(builder *b, const alloy_node *n, const cuda_op *op);
void cg_emit_gemm(builder *b, const alloy_node *n, const cuda_op *op);
void cg_emit_layer_norm(builder *b, const alloy_node *n, const cuda_op *op);
void cg_emit_embedding(builder *b, const alloy_node *n, const cuda_op *op);
void cg_emit_index(builder *b, const alloy_node *n, const cuda_op *op);
void cg_emit_scan(builder *b, const alloy_node *n, const cuda_op *op);
void cg_emit_cat(builder *b, const alloy_node *n, const cuda_op *op);
/* cuda_codegen_attention.c */
void cg_emit_attention(builder *b, const alloy_node *n, const cuda_op *op);
const char *cuda_attention_check(const alloy_host_api *h, const alloy_node *n);
/* A new, zeroed step at the end of the plan (NULL: out of memory, b->err set). */
cuda_launch *cg_add_launch(builder *b);
/* A builder for steps written straight from their descriptions rather than
 * planned from a graph (the tests and device checks of the tile kernels):
 * its module continues the text of pre (a plan made with host table h),
 * which it takes over (pre is freed), with opts (NULL: vendor steps). cg_builder_finish hands p the
 * module text and returns the builder's error (the caller frees it), or
 * NULL. */
void cg_builder_over(builder *b, const alloy_host_api *h, cuda_plan *p, cuda_plan *pre,
                     const cuda_plan_options *opts);
alloy_error *cg_builder_finish(builder *b, cuda_plan *p);

/* The dims reduction node n reduces of its input (rank dims): mask[d]. */
void cg_reduced_dims(builder *b, const alloy_node *n, const cuda_op *op, int rank, bool *mask);

/* ---- cuda_codegen_fuse.c: row groups ---------------------------------------*/

/* Whether reduction node n can join a row group: a sum, mean, amax or amin
 * of floats over its input's trailing *nred dims, kept (keepdim), rows of
 * at least 64 elements. */
bool cg_row_reduction(builder *b, const alloy_node *n, const cuda_op *op, int *nred);
/* Starts row group kernel k over full shape full (rank dims, the last nred
 * reduced): call after cg_kernel_begin. */
void cg_row_begin(kernel *k, const int64_t *full, int rank, int nred);
/* Opens a loop over the row's elements, unless one is open. */
void cg_row_loop(kernel *k);
/* Closes the open loop, if any: what follows is computed once a row. */
void cg_row_close(kernel *k);
/* Writes reduction node n into row group kernel k of group gid (its input
 * read in a loop, its result a register of the row). */
void cg_row_reduce(builder *b, kernel *k, int gid, const alloy_node *n, const cuda_op *op);

/* The order the plan visits the graph's nn nodes in (ord, nn entries):
 * the graph's, with each pointwise node moved down to just before its
 * first reader when that reader is pointwise work of the same shape, so
 * that work a product or a view sits between fuses (SiLU(gate) * up
 * after both products). Every node's operands still come first. */
bool cg_node_order(builder *b, int nn, int *ord);
/* How cat node n may join fused group `open` (-1: none): 1 it joins, 0 it
 * starts a group (an input, or a leaf of the work it takes over, is
 * computed in the open one), -1 it is a step of its own (cg_emit_cat). */
int cg_cat_groupable(builder *b, const alloy_node *n, int open);
/* cat inside a fused group (cuda_op.fuse): each element loaded from the
 * input its index along dim falls in, or computed there from the loads of
 * the pointwise work it takes over (vinfo.into_cat). */
int cg_fuse_cat(builder *b, void *k, int gid, const alloy_node *n);
/* Whether node n is pointwise work a cat computes in its own kernel: n's
 * one reader is that cat (a fused one: cg_cat_groupable), or another such
 * node of the same sizes; n is no output; its tensor operands are in
 * memory or such nodes themselves (relu(a) of cat([relu(a), relu(b)]),
 * a squeezenet fire module's). The plan's first pass asks once and marks
 * its value (vinfo.into_cat); the plan then skips it, and the cat loads
 * its operands at the cat's own index and applies it. */
bool cg_into_cat(builder *b, const alloy_node *n);

/* ---- cuda_codegen_gemm.c: Alloy's own product and convolution kernels ---- */

/* The tile kernel of product step l, planned as for cuBLASLt (its gemm
 * desc, operand bases and offsets): a LAUNCH_KERNEL step in its place. */
void cg_gemm_kernel(builder *b, const alloy_node *n, const cuda_launch *l);
/* The implicit-GEMM kernel of convolution y = conv(x, w) (+ bias), the
 * tensors of rank 3 to 5 with their own strides (w's non-leading dims
 * packed); stride, pad, dil per spatial dim of x. */
void cg_conv_kernel(builder *b, const alloy_node *n, const cuda_tensor *x, const cuda_tensor *w,
                    const cuda_tensor *bias, const cuda_tensor *y, const int64_t *stride, const int64_t *pad,
                    const int64_t *dil, int64_t groups, const char *what);

/* ---- cuda_codegen_conv.c: convolutions (cuDNN steps), pooling, batch norm - */

void cg_emit_conv(builder *b, const alloy_node *n, const cuda_op *op);
void cg_emit_max_pool(builder *b, const alloy_node *n, const cuda_op *op);
void cg_emit_avg_pool(builder *b, const alloy_node *n, const cuda_op *op);
void cg_emit_adaptive_avg_pool(builder *b, const alloy_node *n, const cuda_op *op);
/* Fuses into the open pointwise group (cuda_op.fuse); k is a kernel *. */
int cg_fuse_batch_norm(builder *b, void *k, int gid, const alloy_node *n);
/* A 2-d depthwise convolution joins fused groups (cuda_op.groupable: it
 * starts one) and is computed there, tap by tap (cuda_op.fuse); any other
 * convolution is a step of its own (cg_emit_conv). */
int cg_conv_groupable(builder *b, const alloy_node *n, int open);
/* Whether node n is a relu the max pool reading it applies (to the
 * maximum: max and relu commute): its one reader is that pool, whose
 * indices nothing reads, and it is no output. The plan's first pass asks
 * once and marks its value (vinfo.into_pool); the plan then skips it. */
bool cg_relu_into_pool(builder *b, const alloy_node *n);
int cg_fuse_conv(builder *b, void *k, int gid, const alloy_node *n);
/* Their claims' own rules (cuda_op.check): a static sentence, or NULL. */
const char *cg_check_conv(const alloy_host_api *h, const alloy_node *n);
const char *cg_check_pool(const alloy_host_api *h, const alloy_node *n);
const char *cg_check_batch_norm(const alloy_host_api *h, const alloy_node *n);

#endif
