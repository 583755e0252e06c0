/*
 * plugins/cpu/cpu_plan.h: what the planner's files share (internal to the
 * plugin; no LLVM). cpu_ir.c writes LLVM IR as text: registers and
 * constants (irv), conversions, loads and stores by dtype, the primitives
 * the op table's formulas call, loops, and the kernel skeleton (a row loop
 * over [begin, end) that the thread pool splits). cpu_plan.c keeps the
 * builder: the plan's tensors, the open pointwise groups and the values
 * they hold in registers; cpu_rows.c writes the steps that are not fused
 * pointwise work. Every function here works on one builder, from one
 * thread.
 */
#ifndef ALLOY_CPU_PLAN_H
#define ALLOY_CPU_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "plugins/cpu/cpu_internal.h"

/* ---- text (cpu_ir.c) ----------------------------------------------------- */

typedef struct text {
  char *s;
  size_t len, cap;
  bool oom;
} text;

void ir_put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ir_append(text *t, const text *more);

/* ---- values in registers ---------------------------------------------------- */

/* A register (%r12) or a constant (0x3FF0000000000000, true) of the IR,
 * and the dtype of the register: float16 and bfloat16 values live in float
 * (PyTorch's opmath), so t is never ALLOY_F16 or ALLOY_BF16. An empty s is
 * an absent optional argument. */
typedef struct irv {
  char s[48];
  alloy_dtype t;
} irv;

/* A plan tensor as a kernel reads or writes it: its parameter (the index
 * of its base in the kernel's pointer array), dtype, element offset and
 * strides over the kernel's iteration dims. */
typedef struct kslot {
  int tensor; /* the plan tensor, or -1 */
  int param;
  alloy_dtype dtype;
  int64_t offset;
  int64_t strides[CPU_MAX_RANK];
} kslot;

/* A kernel being written: one function of the module. */
typedef struct kern {
  text fn;     /* the function, after "define void @k<id>" */
  text body;   /* pointwise groups: the code of one element */
  int nreg;    /* registers %r0.. */
  int nlabel;  /* labels L0.. */
  char cur[24]; /* the block being written */
  int params[CPU_MAX_OPERANDS], nparams; /* the plan bases, in order */
  kslot slots[CPU_MAX_OPERANDS];
  int nslots;
  /* the row space: rows = product of sizes[0 .. nouter) */
  int64_t sizes[CPU_MAX_RANK];
  int rank;
  int64_t rows, row_work;
  char what[40];
  int nwhat;
  /* stack slots %acc<i> of the entry block: accumulators a loop nest
   * loads and stores, which LLVM's mem2reg makes registers (phis) */
  alloy_dtype acc[8];
  int nacc;
} kern;

const char *ir_type(alloy_dtype reg);     /* "float", "i1", ... */
const char *ir_mem_type(alloy_dtype mem); /* the type in memory: "i16" for float16 */
alloy_dtype ir_reg_dtype(alloy_dtype t);  /* float16 and bfloat16 -> float32 */
int ir_reg(kern *k);                      /* a fresh register number */
irv ir_const_f(double v, alloy_dtype reg);
irv ir_const_i(int64_t v, alloy_dtype reg);
irv ir_cast(kern *k, text *t, irv v, alloy_dtype to);
/* The value of a float16 or bfloat16 result: rounded to the dtype and back,
 * as PyTorch's CPU kernels store each op's result (others: v itself). */
irv ir_round(kern *k, text *t, irv v, alloy_dtype mem);
irv ir_load(kern *k, text *t, const char *ptr, alloy_dtype mem);
void ir_store(kern *k, text *t, const char *ptr, irv v, alloy_dtype mem);
/* Primitive `name` of the formulas on args (cpu_ir.c's table), in the
 * class of compute type ct; false when it has no form for ct. */
bool ir_prim(kern *k, text *t, const char *name, const irv *args, int nargs, alloy_dtype ct, irv *out);
/* One instruction "%rN = <fmt>" into t; returns N. */
int ir_ins(kern *k, text *t, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The module's prelude: declarations and the helpers the primitives call. */
void ir_prelude(text *t);

/* ---- loops and the skeleton ----------------------------------------------- */

typedef struct ir_loop {
  int id;
  char pred[24]; /* the block before the loop */
  char iv[24];   /* the induction variable, 0 .. trip - 1 */
} ir_loop;

/* A loop of trip iterations (a constant or a register, >= 1) in k->fn:
 * opens its header; the caller writes the body, then ir_loop_end. A value
 * carried around it is a phi the caller writes after ir_loop_begin with
 * ir_loop_phi, naming the register that holds it at the latch. */
void ir_loop_begin(kern *k, ir_loop *l, const char *trip);
void ir_loop_phi(kern *k, const ir_loop *l, int reg, alloy_dtype t, const char *init, int next);
void ir_loop_end(kern *k, ir_loop *l, const char *trip);

/* The kernel's function: the pointer array's loads, then the row loop
 * over [begin, end) of the first nouter dims of k->sizes, with each slot's
 * element offset at the row as %ro.<slot>; ir_kernel_close ends it. */
void ir_kernel_open(kern *k, int nouter);
void ir_kernel_close(kern *k);
/* The function k<id> execute calls, around k<id>.body (ir_kernel_open). */
void ir_kernel_wrapper(text *t, int id, int nparams);
/* A typed pointer to slot s's element at offset register/constant off. */
void ir_elem_ptr(kern *k, text *t, int s, const char *off, char *ptr, size_t cap);

/* ---- the builder (cpu_plan.c) --------------------------------------------- */

/* A plan tensor: a strided view (in elements) of a base. */
typedef struct cpu_tensor {
  int base;
  alloy_dtype dtype;
  int rank;
  int64_t sizes[CPU_MAX_RANK], strides[CPU_MAX_RANK], offset;
} cpu_tensor;

/* What the plan knows of one graph value. */
typedef struct vinfo {
  const alloy_value *v;
  int tensor;  /* the plan tensor holding it in memory, or -1 */
  int group;   /* the open group holding it in a register, or -1 */
  irv reg;     /* that register */
  int output;  /* the partition output it is written to directly, or -1 */
} vinfo;

/* An open pointwise group: nodes over one iteration shape, fused into one
 * loop nest that is written when the group closes. */
typedef struct group {
  bool open;
  kern k;
  const alloy_value **vals; /* the values it computes, for the stores at close */
  int nvals, cap_vals;
  int loaded_tensor[CPU_MAX_OPERANDS]; /* tensors loaded once each, their slots and registers */
  irv loaded_reg[CPU_MAX_OPERANDS];
  int nloaded;
} group;

#define CPU_MAX_GROUPS 6

typedef struct seen_kernel {
  uint64_t hash;
  char *text;
  int id;
} seen_kernel;

typedef struct builder {
  const alloy_host_api *host;
  const alloy_graph *g;
  const cpu_layout *layout;
  cpu_plan_options opt;
  cpu_plan *plan;
  cpu_tensor *tensors;
  int ntensors, cap_tensors, cap_bases, cap_steps;
  int *pending; /* per base: the open group writing it, or -1 */
  int cap_pending;
  vinfo *vals; /* open addressing on the value pointer */
  int cap_vals;
  int *node_group; /* per node: the group it joined, or -1 */
  bool *skip;      /* per node: computed by an earlier node's step (a relu in a convolution's tiles) */
  group groups[CPU_MAX_GROUPS];
  int ngroup_ids; /* groups ever opened: a node's group id */
  int gid[CPU_MAX_GROUPS]; /* the id of each open slot */
  seen_kernel *seen;
  int nseen, cap_seen;
  text ir;
  alloy_error *err;
} builder;

alloy_error *cp_fail(builder *b, const alloy_node *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
vinfo *cp_val(builder *b, const alloy_value *v);
bool cp_grow(void **p, int *cap, int need, size_t size);
int cp_add_base(builder *b, int kind, int index, uint64_t bytes);
int cp_add_tensor(builder *b, const cpu_tensor *t);
int cp_temp_like(builder *b, const cpu_tensor *shape, alloy_dtype dtype);
int64_t cp_numel_of(const int64_t *sizes, int rank);
/* The plan tensor of value v, in memory and written by the steps so far:
 * a value held in an open group's register is stored (and that group
 * closed), a tensor an open group is still to write makes it close. */
int cp_in_memory(builder *b, const alloy_node *n, const alloy_value *v);
/* The memory a step writes value v to: its partition output, or a new
 * temporary; a tensor given to it before (a view of it was taken) stays. */
int cp_materialize(builder *b, const alloy_value *v);
/* The open group of iteration shape sizes (opened when none is). */
group *cp_group_for(builder *b, const int64_t *sizes, int rank);
/* The open group node n's output `out` joins, its tensor operands (when
 * reads) in memory or in that group's registers; NULL after failing. */
group *cp_join_group(builder *b, const alloy_node *n, const alloy_value *out, bool reads);
int cp_group_index(builder *b, const group *gr);
irv cp_group_load(builder *b, group *gr, int tensor);
void cp_group_define(builder *b, group *gr, const alloy_value *v, irv reg, const char *what);
void cp_close_group(builder *b, int slot);
void cp_close_all(builder *b);
/* Appends the finished kernel k to the module and a step running it. */
void cp_kernel_finish(builder *b, kern *k);
int cp_kernel_param(kern *k, int base);
int cp_kernel_slot(builder *b, kern *k, const cpu_tensor *t, int tensor);
void cp_kernel_begin(kern *k, const int64_t *sizes, int rank, const char *what);
cpu_step *cp_add_step(builder *b);
void cp_emit_copy(builder *b, const cpu_tensor *src, const cpu_tensor *dst);
const alloy_arg *cp_arg_named(const alloy_host_api *h, const alloy_node *n, const char *name);
/* Argument `name` as a tensor value (NULL: None or absent), as a bool
 * (dflt when absent). */
const alloy_value *cp_value_arg(const alloy_host_api *h, const alloy_node *n, const char *name);
bool cp_bool_arg(const alloy_host_api *h, const alloy_node *n, const char *name, bool dflt);
int64_t cp_int_arg(const alloy_host_api *h, const alloy_node *n, const char *name, int64_t dflt);
double cp_float_arg(const alloy_host_api *h, const alloy_node *n, const char *name, double dflt);
int cp_wrap_dim(int64_t d, int rank);
int cp_tensor_operands(const alloy_host_api *h, const alloy_node *n, const alloy_value **out, int cap);
void cp_note(kern *k, const char *what);

/* ---- cpu_rows.c: each writes node n's steps into the plan ------------------ */

void cp_emit_reduce(builder *b, const alloy_node *n, const cpu_op *op);
void cp_emit_layer_norm(builder *b, const alloy_node *n, const cpu_op *op);
void cp_emit_gemm(builder *b, const alloy_node *n, const cpu_op *op);
void cp_emit_conv(builder *b, const alloy_node *n, const cpu_op *op);
void cp_emit_pool(builder *b, const alloy_node *n, const cpu_op *op);
/* cpu_attention.c */
void cp_emit_attention(builder *b, const alloy_node *n, const cpu_op *op);
/* cpu_index.c */
void cp_emit_embedding(builder *b, const alloy_node *n, const cpu_op *op);
void cp_emit_index(builder *b, const alloy_node *n, const cpu_op *op);
void cp_emit_gather(builder *b, const alloy_node *n, const cpu_op *op);
void cp_emit_cat(builder *b, const alloy_node *n, const cpu_op *op);
void cp_emit_cumsum(builder *b, const alloy_node *n, const cpu_op *op);

#endif
