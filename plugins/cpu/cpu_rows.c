/*
 * plugins/cpu/cpu_rows.c: the steps of a plan that are not fused pointwise
 * work. A reduction, softmax or layer norm is a kernel whose row loop runs
 * over the kept dims (what the thread pool splits) and whose inner loop
 * nest runs over the reduced dims, coalesced where the strides allow, so
 * that a contiguous row is one loop LLVM vectorizes. Accumulators are
 * stack slots of the kernel's entry block (mem2reg makes them registers).
 *
 * Accumulate types: int64 for integers and bool (wrapping, as PyTorch);
 * float in softmax and layer norm as PyTorch's CPU kernels; double for
 * sum and mean of every float dtype, where PyTorch accumulates float32 in
 * float with its vectorized cascade: a sum of a few large values that
 * cancel (a decomposed addbmm sums bmm's results over the batch) is then
 * off by an ulp of the large values in float, beyond float32's tolerance,
 * and within it in double, which is the reference's accumulator. A sum
 * adds blocks of up to 1024 elements in any order (reassoc: LLVM keeps
 * vector partial sums) and the blocks' sums in order. amax/amin carry a
 * NaN flag beside the max, so that the max itself vectorizes.
 *
 * A matrix product is a STEP_GEMM (OpenBLAS's sgemm, cpu_blas.c) reading
 * its operands in place where a row-major matrix or its transpose
 * expresses them, or, without OpenBLAS, an emitted loop nest. float16 and
 * bfloat16 operands are converted to float32 first; addmm's bias, the
 * rounding to a 16-bit dtype and whatever pointwise work follows (relu,
 * gelu) are one pass over the product in the group of its shape.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/cpu/cpu_plan.h"

#define NEST_SLOTS 4
#define BLOCK 1024
/* products of at most this many multiply-adds (m n k) run as emitted loops */
#define SMALL_GEMM 65536

/* ---- loop nests over reduced dims -------------------------------------------- */

typedef struct nest {
  int nd;
  int64_t sizes[CPU_MAX_RANK + 1];
  int64_t strides[NEST_SLOTS][CPU_MAX_RANK + 1];
  int nslots;
  int slot[NEST_SLOTS];
  bool blocked;  /* the innermost level is a block of the level above's dim */
  int64_t total; /* blocked: that dim's length */
  bool empty;    /* no element: the body must not run */
  ir_loop loops[CPU_MAX_RANK + 1];
  char trip[CPU_MAX_RANK + 1][24];
  char outer_off[NEST_SLOTS][24];
  char off[NEST_SLOTS][24]; /* the innermost element's offset, per slot */
} nest;

/* dims (nd of them, their sizes, and each slot's strides over them),
 * coalesced where every slot allows; block: cut the innermost in blocks. */
static void nest_init(nest *ns, int nd, const int64_t *sizes, int nslots, const int *slot,
                      int64_t strides[][CPU_MAX_RANK], bool block) {
  memset(ns, 0, sizeof *ns);
  ns->nslots = nslots;
  memcpy(ns->slot, slot, sizeof *slot * (size_t)nslots);
  for (int d = 0; d < nd; d++) {
    if (sizes[d] == 0) ns->empty = true;
    if (sizes[d] == 1) continue;
    bool merge = ns->nd > 0;
    for (int s = 0; merge && s < nslots; s++)
      if (ns->strides[s][ns->nd - 1] != strides[s][d] * sizes[d]) merge = false;
    if (merge) {
      ns->sizes[ns->nd - 1] *= sizes[d];
      for (int s = 0; s < nslots; s++) ns->strides[s][ns->nd - 1] = strides[s][d];
    } else {
      ns->sizes[ns->nd] = sizes[d];
      for (int s = 0; s < nslots; s++) ns->strides[s][ns->nd] = strides[s][d];
      ns->nd++;
    }
  }
  if (ns->nd == 0) ns->sizes[0] = 1, ns->nd = 1;
  int64_t last = ns->sizes[ns->nd - 1];
  if (block && last > BLOCK) {
    ns->blocked = true;
    ns->total = last;
    ns->sizes[ns->nd - 1] = (last + BLOCK - 1) / BLOCK;
    ns->sizes[ns->nd] = BLOCK;
    for (int s = 0; s < nslots; s++) {
      ns->strides[s][ns->nd] = ns->strides[s][ns->nd - 1];
      ns->strides[s][ns->nd - 1] *= BLOCK;
    }
    ns->nd++;
  }
}

static int64_t nest_count(const nest *ns) {
  if (ns->empty) return 0;
  if (ns->blocked) return cp_numel_of(ns->sizes, ns->nd - 2) * ns->total;
  return cp_numel_of(ns->sizes, ns->nd);
}

static void nest_level(kern *k, nest *ns, int L, char (*offs)[24]) {
  ir_loop_begin(k, &ns->loops[L], ns->trip[L]);
  for (int s = 0; s < ns->nslots; s++) {
    int64_t st = ns->strides[s][L];
    if (st == 0) continue;
    int m = ir_ins(k, &k->fn, "mul i64 %s, %" PRId64, ns->loops[L].iv, st);
    int a = ir_ins(k, &k->fn, "add i64 %s, %%r%d", offs[s], m);
    snprintf(offs[s], sizeof offs[s], "%%r%d", a);
  }
}

/* Opens the levels above the innermost; each slot's offset starts at its
 * row offset. */
static void nest_outer_begin(kern *k, nest *ns) {
  for (int s = 0; s < ns->nslots; s++) snprintf(ns->outer_off[s], sizeof ns->outer_off[s], "%%ro.%d", ns->slot[s]);
  if (ns->empty) return;
  for (int L = 0; L < ns->nd - 1; L++) {
    snprintf(ns->trip[L], sizeof ns->trip[L], "%" PRId64, ns->sizes[L]);
    nest_level(k, ns, L, ns->outer_off);
  }
}

static void nest_inner_begin(kern *k, nest *ns) {
  memcpy(ns->off, ns->outer_off, sizeof ns->off);
  if (ns->empty) return;
  int L = ns->nd - 1;
  if (ns->blocked) { /* min(BLOCK, total - block * BLOCK) */
    int a = ir_ins(k, &k->fn, "mul i64 %s, %d", ns->loops[L - 1].iv, BLOCK);
    int r = ir_ins(k, &k->fn, "sub i64 %" PRId64 ", %%r%d", ns->total, a);
    int c = ir_ins(k, &k->fn, "icmp ult i64 %%r%d, %d", r, BLOCK);
    int t = ir_ins(k, &k->fn, "select i1 %%r%d, i64 %%r%d, i64 %d", c, r, BLOCK);
    snprintf(ns->trip[L], sizeof ns->trip[L], "%%r%d", t);
  } else {
    snprintf(ns->trip[L], sizeof ns->trip[L], "%" PRId64, ns->sizes[L]);
  }
  nest_level(k, ns, L, ns->off);
}

static void nest_inner_end(kern *k, nest *ns) {
  if (!ns->empty) ir_loop_end(k, &ns->loops[ns->nd - 1], ns->trip[ns->nd - 1]);
}

static void nest_outer_end(kern *k, nest *ns) {
  if (ns->empty) return;
  for (int L = ns->nd - 2; L >= 0; L--) ir_loop_end(k, &ns->loops[L], ns->trip[L]);
}

/* The element of nest slot s at the innermost offset, in register type t. */
static irv nest_load(kern *k, const nest *ns, int s, alloy_dtype t) {
  char ptr[24];
  ir_elem_ptr(k, &k->fn, ns->slot[s], ns->off[s], ptr, sizeof ptr);
  irv v = ir_load(k, &k->fn, ptr, k->slots[ns->slot[s]].dtype);
  return ir_cast(k, &k->fn, v, t);
}

static void nest_store(kern *k, const nest *ns, int s, irv v) {
  char ptr[24];
  ir_elem_ptr(k, &k->fn, ns->slot[s], ns->off[s], ptr, sizeof ptr);
  ir_store(k, &k->fn, ptr, v, k->slots[ns->slot[s]].dtype);
}

/* Slot s's element at the row (its row offset). */
static void row_store(kern *k, int s, irv v) {
  char off[24], ptr[24];
  snprintf(off, sizeof off, "%%ro.%d", s);
  ir_elem_ptr(k, &k->fn, s, off, ptr, sizeof ptr);
  ir_store(k, &k->fn, ptr, v, k->slots[s].dtype);
}

static irv acc_load(kern *k, int i) {
  irv v = {.t = k->acc[i]};
  snprintf(v.s, sizeof v.s, "%%r%d", ir_ins(k, &k->fn, "load %s, %s* %%acc%d, align 8", ir_type(k->acc[i]),
                                                ir_type(k->acc[i]), i));
  return v;
}

static void acc_store(kern *k, int i, irv v) {
  v = ir_cast(k, &k->fn, v, k->acc[i]);
  ir_put(&k->fn, "  store %s %s, %s* %%acc%d, align 8\n", ir_type(k->acc[i]), v.s, ir_type(k->acc[i]), i);
}

static irv bin(kern *k, const char *ins, irv a, irv b) {
  irv v = {.t = a.t};
  snprintf(v.s, sizeof v.s, "%%r%d", ir_ins(k, &k->fn, "%s %s %s, %s", ins, ir_type(a.t), a.s, b.s));
  return v;
}

static irv prim(kern *k, const char *name, irv a, irv b, alloy_dtype ct) {
  irv args[2] = {a, b}, out = a;
  ir_prim(k, &k->fn, name, args, 2, ct, &out);
  return out;
}

/* ---- reductions ---------------------------------------------------------------- */

/* The dims node n reduces of its input (mask), from "dim": a list (None
 * or empty: every dim), or one int (softmax). */
static void reduced_dims(builder *b, const alloy_node *n, int rank, bool *mask) {
  const alloy_host_api *h = b->host;
  const alloy_arg *a = cp_arg_named(h, n, "dim");
  bool all = !a || h->arg_type(a) == ALLOY_ARG_TYPE_NONE ||
             (h->arg_type(a) == ALLOY_ARG_TYPE_LIST && h->arg_list_size(a) == 0);
  for (int d = 0; d < CPU_MAX_RANK; d++) mask[d] = all && d < rank;
  if (all) return;
  int64_t x;
  if (h->arg_type(a) == ALLOY_ARG_TYPE_LIST) {
    for (int k = 0; k < h->arg_list_size(a); k++)
      if (h->arg_int(h->arg_list_item(a, k), &x) && rank > 0) mask[cp_wrap_dim(x, rank)] = true;
  } else if (h->arg_int(a, &x) && rank > 0) {
    mask[cp_wrap_dim(x, rank)] = true;
  }
}

/* Sum (or mean) of the nest's slot 0 into %acc0 (the blocks' sum: double
 * for floats, int64 otherwise) through %acc1 (a block's sum). */
static void sum_rows(kern *k, nest *ns, alloy_dtype ct, bool fl) {
  acc_store(k, 0, ir_const_i(0, k->acc[0]));
  nest_outer_begin(k, ns);
  acc_store(k, 1, ir_const_i(0, ct));
  if (!ns->empty) {
    nest_inner_begin(k, ns);
    irv x = nest_load(k, ns, 0, ct), a = acc_load(k, 1);
    acc_store(k, 1, bin(k, fl ? "fadd reassoc" : "add", a, x));
    nest_inner_end(k, ns);
  }
  irv blk = ir_cast(k, &k->fn, acc_load(k, 1), k->acc[0]), o = acc_load(k, 0);
  acc_store(k, 0, bin(k, fl ? "fadd" : "add", o, blk));
  nest_outer_end(k, ns);
}

/* The max (or min) of the nest's slot 0 into %acc0, a NaN seen into %acc1. */
static irv extreme_rows(kern *k, nest *ns, bool max, alloy_dtype ct) {
  bool fl = alloy_dtype_is_float(ct);
  irv init;
  if (fl) init = ir_const_f(max ? -INFINITY : INFINITY, ct);
  else if (ct == ALLOY_BOOL) init = ir_const_i(max ? 0 : 1, ct);
  else if (ct == ALLOY_U8) init = ir_const_i(max ? 0 : 255, ct);
  else {
    int bits = (int)alloy_dtype_size(ct) * 8;
    int64_t hi = bits == 64 ? INT64_MAX : (INT64_C(1) << (bits - 1)) - 1;
    init = ir_const_i(max ? -hi - 1 : hi, ct);
  }
  acc_store(k, 0, init);
  acc_store(k, 1, ir_const_i(0, ALLOY_BOOL));
  nest_outer_begin(k, ns);
  nest_inner_begin(k, ns);
  irv x = nest_load(k, ns, 0, ct), m = acc_load(k, 0);
  if (fl) {
    irv r = {.t = ct};
    snprintf(r.s, sizeof r.s, "%%r%d",
             ir_ins(k, &k->fn, "call nnan nsz %s @llvm.%s.%s(%s %s, %s %s)", ir_type(ct), max ? "maxnum" : "minnum",
                    ct == ALLOY_F64 ? "f64" : "f32", ir_type(ct), m.s, ir_type(ct), x.s));
    acc_store(k, 0, r);
    irv nan = {.t = ALLOY_BOOL};
    snprintf(nan.s, sizeof nan.s, "%%r%d", ir_ins(k, &k->fn, "fcmp uno %s %s, 0.0", ir_type(ct), x.s));
    acc_store(k, 1, bin(k, "or", acc_load(k, 1), nan));
  } else {
    acc_store(k, 0, prim(k, max ? "max" : "min", m, x, ct));
  }
  nest_inner_end(k, ns);
  nest_outer_end(k, ns);
  irv r = acc_load(k, 0);
  if (!fl) return r;
  irv out = {.t = ct};
  snprintf(out.s, sizeof out.s, "%%r%d",
           ir_ins(k, &k->fn, "select i1 %s, %s %s, %s %s", acc_load(k, 1).s, ir_type(ct),
                  ir_const_f(NAN, ct).s, ir_type(ct), r.s));
  return out;
}

/* intr ("exp": the prelude's vectorized op.exp, else an LLVM intrinsic) of x */
static irv call1(kern *k, const char *intr, irv x) {
  irv v = {.t = x.t};
  const char *s = x.t == ALLOY_F64 ? "f64" : "f32";
  snprintf(v.s, sizeof v.s, "%%r%d", ir_ins(k, &k->fn, "call %s @%s.%s.%s(%s %s)", ir_type(x.t),
                                            strcmp(intr, "exp") ? "llvm" : "op", intr, s, ir_type(x.t), x.s));
  return v;
}

/* softmax and log_softmax over one dim: the max (NaN anywhere makes it
 * NaN, and so the whole row), the sum of exp(x - max), then the row:
 * exp(x - max) / sum, or x - max - log(sum). float32 and float64 keep
 * exp(x - max) in the output between the passes; the 16-bit floats compute
 * it again (their output would round it). PyTorch's float16/bfloat16
 * log_softmax over the last dim holds the sum in the dtype. */
static void softmax_rows(builder *b, kern *k, nest *ns, bool log_form, alloy_dtype xt, bool last_dim) {
  (void)b;
  alloy_dtype ct = xt == ALLOY_F64 ? ALLOY_F64 : ALLOY_F32;
  bool wide = xt == ALLOY_F32 || xt == ALLOY_F64;
  irv m = extreme_rows(k, ns, true, ct);
  /* pass 2 */
  acc_store(k, 2, ir_const_f(0, ct));
  nest_outer_begin(k, ns);
  nest_inner_begin(k, ns);
  irv x = nest_load(k, ns, 0, ct);
  irv e = call1(k, "exp", bin(k, "fsub", x, m));
  acc_store(k, 2, bin(k, "fadd reassoc", acc_load(k, 2), e));
  if (wide && !log_form) nest_store(k, ns, 1, e);
  nest_inner_end(k, ns);
  nest_outer_end(k, ns);
  irv s = acc_load(k, 2);
  if (log_form && !wide && last_dim) s = ir_round(k, &k->fn, s, xt);
  irv scale = log_form ? call1(k, "log", s) : bin(k, "fdiv", ir_const_f(1, ct), s);
  /* pass 3 */
  nest_outer_begin(k, ns);
  nest_inner_begin(k, ns);
  irv r;
  if (log_form) {
    r = bin(k, "fsub", bin(k, "fsub", nest_load(k, ns, 0, ct), m), scale);
  } else if (wide) {
    r = bin(k, "fmul", nest_load(k, ns, 1, ct), scale);
  } else {
    r = bin(k, "fmul", call1(k, "exp", bin(k, "fsub", nest_load(k, ns, 0, ct), m)), scale);
  }
  nest_store(k, ns, 1, r);
  nest_inner_end(k, ns);
  nest_outer_end(k, ns);
}

/* A reduction node: a row per output element (softmax: a row in, a row
 * out), over the dims it reduces. */
void cp_emit_reduce(builder *b, const alloy_node *n, const cpu_op *op) {
  const alloy_host_api *h = b->host;
  const alloy_value *in[1], *outv = h->node_output(n, 0);
  if (cp_tensor_operands(h, n, in, 1) != 1) return (void)cp_fail(b, n, "expected one tensor operand");
  int xi = cp_in_memory(b, n, in[0]);
  int yi = xi < 0 ? -1 : cp_materialize(b, outv);
  if (xi < 0 || yi < 0) return;
  const cpu_tensor x = b->tensors[xi], y = b->tensors[yi];
  bool mask[CPU_MAX_RANK];
  reduced_dims(b, n, x.rank, mask);
  bool row_out = op->reduce == RED_SOFTMAX || op->reduce == RED_LOG_SOFTMAX;
  bool keep = y.rank == x.rank;
  int kd[CPU_MAX_RANK], rd[CPU_MAX_RANK], nk = 0, nr = 0;
  for (int d = 0; d < x.rank; d++) {
    if (mask[d]) rd[nr++] = d;
    else kd[nk++] = d;
  }
  if (!row_out && !keep && y.rank != nk) return (void)cp_fail(b, n, "an output of rank %d", y.rank);
  cpu_tensor xk = x, yk = y;
  xk.rank = yk.rank = nk;
  for (int i = 0; i < nk; i++) {
    xk.sizes[i] = yk.sizes[i] = x.sizes[kd[i]];
    xk.strides[i] = x.strides[kd[i]];
    yk.strides[i] = row_out || keep ? y.strides[kd[i]] : y.strides[i];
  }
  if (cp_numel_of(xk.sizes, nk) == 0) return; /* no output element */
  kern k;
  cp_kernel_begin(&k, xk.sizes, nk, h->node_op_name(n));
  int sx = cp_kernel_slot(b, &k, &xk, -1), sy = cp_kernel_slot(b, &k, &yk, -1);
  if (sx < 0 || sy < 0) return;
  int64_t rsizes[CPU_MAX_RANK], rstrides[NEST_SLOTS][CPU_MAX_RANK];
  for (int i = 0; i < nr; i++) {
    rsizes[i] = x.sizes[rd[i]];
    rstrides[0][i] = x.strides[rd[i]];
    rstrides[1][i] = row_out ? y.strides[rd[i]] : 0;
  }
  nest ns;
  int slots[2] = {sx, sy};
  /* a sum or mean converts its input to the result's dtype (dtype=) first */
  bool sum = op->reduce == RED_SUM || op->reduce == RED_MEAN;
  alloy_dtype at = sum ? y.dtype : x.dtype;
  bool fl = alloy_dtype_is_float(at);
  nest_init(&ns, nr, rsizes, row_out ? 2 : 1, slots, rstrides, sum && fl);
  alloy_dtype ct = fl ? (sum ? ALLOY_F64 : ir_reg_dtype(at)) : ALLOY_I64;
  if (op->reduce == RED_MAX || op->reduce == RED_MIN) ct = ir_reg_dtype(x.dtype);
  if (op->reduce == RED_ANY || op->reduce == RED_ALL) ct = ALLOY_BOOL;
  k.acc[0] = sum ? (fl ? ALLOY_F64 : ALLOY_I64) : ct;
  k.acc[1] = sum ? ct : ALLOY_BOOL;
  k.acc[2] = ct;
  k.nacc = 3;
  ir_kernel_open(&k, nk);
  int64_t count = nest_count(&ns);
  if (sum) {
    sum_rows(&k, &ns, ct, fl);
    irv r = acc_load(&k, 0);
    if (op->reduce == RED_MEAN) r = bin(&k, "fdiv", r, ir_const_f((double)count, r.t));
    row_store(&k, sy, r);
  } else if (op->reduce == RED_MAX || op->reduce == RED_MIN) {
    row_store(&k, sy, extreme_rows(&k, &ns, op->reduce == RED_MAX, ct));
  } else if (op->reduce == RED_ANY || op->reduce == RED_ALL) {
    bool any = op->reduce == RED_ANY;
    acc_store(&k, 0, ir_const_i(any ? 0 : 1, ALLOY_BOOL));
    nest_outer_begin(&k, &ns);
    if (!ns.empty) {
      nest_inner_begin(&k, &ns);
      irv v = nest_load(&k, &ns, 0, ALLOY_BOOL);
      acc_store(&k, 0, bin(&k, any ? "or" : "and", acc_load(&k, 0), v));
      nest_inner_end(&k, &ns);
    }
    nest_outer_end(&k, &ns);
    row_store(&k, sy, acc_load(&k, 0));
  } else if (!ns.empty) {
    bool last = rd[0] == x.rank - 1 || x.rank <= 1;
    softmax_rows(b, &k, &ns, op->reduce == RED_LOG_SOFTMAX, x.dtype, last);
  }
  ir_kernel_close(&k);
  k.row_work = (count ? count : 1) * (row_out ? 3 : 1);
  cp_kernel_finish(b, &k);
}

/* ---- layer norm ------------------------------------------------------------------ */

/* The plan tensor of tensor argument `name`: -1 when it is None, -2
 * after failing. */
static int operand_named(builder *b, const alloy_node *n, const char *name) {
  const alloy_host_api *h = b->host;
  const alloy_arg *a = cp_arg_named(h, n, name);
  if (!a || h->arg_type(a) != ALLOY_ARG_TYPE_VALUE) return -1;
  int t = cp_in_memory(b, n, h->arg_value(a));
  return t < 0 ? -2 : t;
}

/* native_layer_norm(x, normalized_shape, w?, b?, eps) -> (y, mean, rstd):
 * a row per outer element; the mean (summed in double), then the variance
 * of the centered values (two passes, as the reference; float blocks),
 * rstd = 1 / sqrt(var + eps), then y = (x - mean) * rstd * w + b in float
 * (double for float64). */
void cp_emit_layer_norm(builder *b, const alloy_node *n, const cpu_op *op) {
  (void)op;
  const alloy_host_api *h = b->host;
  int xi = cp_in_memory(b, n, h->arg_value(h->node_arg(n, 0)));
  int wi = xi < 0 ? -2 : operand_named(b, n, "weight"), bi = wi == -2 ? -2 : operand_named(b, n, "bias");
  if (xi < 0 || wi == -2 || bi == -2) return;
  const cpu_tensor x = b->tensors[xi];
  bool wp = wi >= 0, bp = bi >= 0;
  cpu_tensor w = wp ? b->tensors[wi] : x, bias = bp ? b->tensors[bi] : x;
  const alloy_arg *ns_arg = cp_arg_named(h, n, "normalized_shape");
  int nd = ns_arg ? h->arg_list_size(ns_arg) : 0;
  if (nd < 1 || nd > x.rank) return (void)cp_fail(b, n, "normalized_shape of %d dims", nd);
  int ty = cp_materialize(b, h->node_output(n, 0)), tm = cp_materialize(b, h->node_output(n, 1)),
      tr = cp_materialize(b, h->node_output(n, 2));
  if (ty < 0 || tm < 0 || tr < 0) return;
  const cpu_tensor y = b->tensors[ty], mean = b->tensors[tm], rstd = b->tensors[tr];
  int no = x.rank - nd;
  cpu_tensor xk = x, yk = y, mk = mean, rk = rstd;
  xk.rank = yk.rank = mk.rank = rk.rank = no;
  for (int d = 0; d < no; d++) {
    mk.sizes[d] = rk.sizes[d] = yk.sizes[d] = xk.sizes[d];
    mk.strides[d] = mean.strides[d];
    rk.strides[d] = rstd.strides[d];
  }
  if (cp_numel_of(xk.sizes, no) == 0) return;
  kern k;
  cp_kernel_begin(&k, xk.sizes, no, "layer_norm");
  int sx = cp_kernel_slot(b, &k, &xk, -1), sy = cp_kernel_slot(b, &k, &yk, -1);
  int sm = cp_kernel_slot(b, &k, &mk, -1), sr = cp_kernel_slot(b, &k, &rk, -1);
  /* w and b span the normalized dims: the same at every row */
  cpu_tensor wk = w, bk = bias;
  wk.rank = bk.rank = no;
  for (int d = 0; d < no; d++) wk.sizes[d] = bk.sizes[d] = xk.sizes[d], wk.strides[d] = bk.strides[d] = 0;
  int sw = wp ? cp_kernel_slot(b, &k, &wk, -1) : -1, sb = bp ? cp_kernel_slot(b, &k, &bk, -1) : -1;
  if (sx < 0 || sy < 0 || sm < 0 || sr < 0 || (wp && sw < 0) || (bp && sb < 0)) return;
  int64_t rsizes[CPU_MAX_RANK], rstrides[NEST_SLOTS][CPU_MAX_RANK];
  int slots[NEST_SLOTS] = {sx, sy, sw, sb}, nslots = 2 + wp + bp;
  if (!wp) slots[2] = sb;
  for (int i = 0; i < nd; i++) {
    rsizes[i] = x.sizes[no + i];
    rstrides[0][i] = x.strides[no + i];
    rstrides[1][i] = y.strides[no + i];
    const cpu_tensor *third = wp ? &w : &bias, *fourth = &bias;
    int ti = i - (nd - third->rank), fi = i - (nd - fourth->rank);
    rstrides[2][i] = ti < 0 || third->sizes[ti] == 1 ? 0 : third->strides[ti];
    rstrides[3][i] = fi < 0 || fourth->sizes[fi] == 1 ? 0 : fourth->strides[fi];
  }
  nest ns, flat;
  nest_init(&ns, nd, rsizes, nslots, slots, rstrides, true);
  nest_init(&flat, nd, rsizes, nslots, slots, rstrides, false);
  alloy_dtype ct = x.dtype == ALLOY_F64 ? ALLOY_F64 : ALLOY_F32;
  /* the mean's sum in double (its blocks too: x - mean cancels where the
   * values are close, so the mean needs more than float), the squared
   * deviations' blocks in float */
  k.acc[0] = ALLOY_F64, k.acc[1] = ALLOY_F64, k.acc[2] = ct, k.nacc = 3;
  ir_kernel_open(&k, no);
  int64_t count = nest_count(&ns);
  double eps = cp_float_arg(h, n, "eps", 1e-5);
  sum_rows(&k, &ns, ALLOY_F64, true);
  /* the mean as a float pair hi + lo: x - hi is exact for x near it, so
   * the deviations keep the double mean's accuracy (the reference's) where
   * they cancel, and a float mean's 1e-8 would be 1e-5 of a 1e-3 deviation */
  irv mu_d = bin(&k, "fdiv", acc_load(&k, 0), ir_const_f((double)count, ALLOY_F64));
  irv mu = ir_cast(&k, &k.fn, mu_d, ct);
  irv mu_lo = ir_cast(&k, &k.fn, bin(&k, "fsub", mu_d, ir_cast(&k, &k.fn, mu, ALLOY_F64)), ct);
  /* the squared deviations, summed the same way */
  acc_store(&k, 0, ir_const_f(0, ALLOY_F64));
  nest_outer_begin(&k, &ns);
  acc_store(&k, 2, ir_const_f(0, ct));
  if (!ns.empty) {
    nest_inner_begin(&k, &ns);
    irv dv = bin(&k, "fsub", bin(&k, "fsub", nest_load(&k, &ns, 0, ct), mu), mu_lo);
    acc_store(&k, 2, bin(&k, "fadd reassoc", acc_load(&k, 2), bin(&k, "fmul", dv, dv)));
    nest_inner_end(&k, &ns);
  }
  acc_store(&k, 0, bin(&k, "fadd", acc_load(&k, 0), ir_cast(&k, &k.fn, acc_load(&k, 2), ALLOY_F64)));
  nest_outer_end(&k, &ns);
  irv var = ir_cast(&k, &k.fn, bin(&k, "fdiv", acc_load(&k, 0), ir_const_f((double)count, ALLOY_F64)), ct);
  irv rs = bin(&k, "fdiv", ir_const_f(1, ct), call1(&k, "sqrt", bin(&k, "fadd", var, ir_const_f(eps, ct))));
  nest_outer_begin(&k, &flat);
  if (!flat.empty) {
    nest_inner_begin(&k, &flat);
    irv r = bin(&k, "fmul", bin(&k, "fsub", bin(&k, "fsub", nest_load(&k, &flat, 0, ct), mu), mu_lo), rs);
    if (wp) r = bin(&k, "fmul", r, nest_load(&k, &flat, 2, ct));
    if (bp) r = bin(&k, "fadd", r, nest_load(&k, &flat, wp ? 3 : 2, ct));
    nest_store(&k, &flat, 1, r);
    nest_inner_end(&k, &flat);
  }
  nest_outer_end(&k, &flat);
  row_store(&k, sm, mu);
  row_store(&k, sr, rs);
  ir_kernel_close(&k);
  k.row_work = 3 * (count ? count : 1);
  cp_kernel_finish(b, &k);
}

/* ---- matrix products -------------------------------------------------------------- */

/* Operand t of a product as sgemm reads it: its last two dims a row-major
 * matrix or the transpose of one, a batch stride before them; false when
 * it is neither (then it is copied). */
static bool as_matrix(const cpu_tensor *t, bool *trans, int64_t *ld, int64_t *bstride) {
  int r = t->rank;
  if (r < 2) return false;
  int64_t rows = t->sizes[r - 2], cols = t->sizes[r - 1], s0 = t->strides[r - 2], s1 = t->strides[r - 1];
  *bstride = r == 3 && t->sizes[0] > 1 ? t->strides[0] : 0;
  if ((s1 == 1 || cols == 1) && (rows == 1 || s0 >= cols) && (rows > 1 || cols >= 1)) {
    *trans = false;
    *ld = rows == 1 || s0 < 1 ? (cols > 0 ? cols : 1) : s0;
    return cols > 0;
  }
  if ((s0 == 1 || rows == 1) && (cols == 1 || s1 >= rows)) {
    *trans = true;
    *ld = cols == 1 || s1 < 1 ? (rows > 0 ? rows : 1) : s1;
    return rows > 0;
  }
  return false;
}

static bool dense(const cpu_tensor *t) {
  int64_t s = 1;
  for (int k = t->rank - 1; k >= 0; k--) {
    if (t->sizes[k] != 1 && t->strides[k] != s) return false;
    s *= t->sizes[k];
  }
  return true;
}

/* A dense float32 copy of t (a 16-bit operand, or a layout sgemm does not
 * read): its plan tensor. */
static int f32_copy(builder *b, const cpu_tensor *t) {
  int c = cp_temp_like(b, t, ALLOY_F32);
  if (c >= 0) cp_emit_copy(b, t, &b->tensors[c]);
  return c;
}

/* a * b + c with one rounding (llvm.fma: an instruction where the CPU has
 * FMA, libm's fmaf elsewhere) */
static irv fused_madd(kern *k, irv a, irv b, irv c) {
  irv v = {.t = ALLOY_F32};
  snprintf(v.s, sizeof v.s, "%%r%d",
           ir_ins(k, &k->fn, "call float @llvm.fma.f32(float %s, float %s, float %s)", a.s, b.s, c.s));
  return v;
}

/* D = A @ B as an emitted loop nest: a row of D per row of the loop; for
 * each k, a row of B times A[i, k] fused-multiply-added into it (the inner
 * loop over D's row is contiguous: vectorized). Each element of D is the
 * chain fma(a[i,k], b[k,j], ...) from 0 in k's order: for k up to 256
 * exactly the reference backend's sum (and PyTorch's, which matches it on
 * the golden corpus's small products), where OpenBLAS's kernels round in
 * another order. */
static void emit_loop_gemm(builder *b, const cpu_tensor *a, const cpu_tensor *bm, const cpu_tensor *d) {
  int r = d->rank;
  int64_t m = d->sizes[r - 2], nn = d->sizes[r - 1], kk = a->sizes[a->rank - 1];
  int64_t batch = r == 3 ? d->sizes[0] : 1;
  int64_t sizes[2] = {batch, m};
  kern k;
  cp_kernel_begin(&k, sizes, 2, "mm");
  cpu_tensor ak = *a, bk = *bm, dk = *d;
  ak.rank = bk.rank = dk.rank = 2;
  ak.sizes[0] = bk.sizes[0] = dk.sizes[0] = batch;
  ak.sizes[1] = bk.sizes[1] = dk.sizes[1] = m;
  ak.strides[0] = a->rank == 3 && a->sizes[0] > 1 ? a->strides[0] : 0;
  bk.strides[0] = bm->rank == 3 && bm->sizes[0] > 1 ? bm->strides[0] : 0;
  dk.strides[0] = r == 3 ? d->strides[0] : 0;
  ak.strides[1] = a->strides[a->rank - 2];
  bk.strides[1] = 0;
  dk.strides[1] = d->strides[r - 2];
  int sa = cp_kernel_slot(b, &k, &ak, -1), sb = cp_kernel_slot(b, &k, &bk, -1), sd = cp_kernel_slot(b, &k, &dk, -1);
  if (sa < 0 || sb < 0 || sd < 0) return;
  ir_kernel_open(&k, 2);
  /* D's row = 0 */
  int64_t zs[1] = {nn}, zst[NEST_SLOTS][CPU_MAX_RANK] = {{d->strides[r - 1]}};
  int zslot[1] = {sd};
  nest z;
  nest_init(&z, 1, zs, 1, zslot, zst, false);
  nest_outer_begin(&k, &z);
  if (!z.empty) {
    nest_inner_begin(&k, &z);
    nest_store(&k, &z, 0, ir_const_f(0, ALLOY_F32));
    nest_inner_end(&k, &z);
  }
  nest_outer_end(&k, &z);
  /* for each k: D[i, :] += A[i, k] * B[k, :] */
  int64_t ps[2] = {kk, nn};
  int64_t pst[NEST_SLOTS][CPU_MAX_RANK] = {{a->strides[a->rank - 1], 0}, {bm->strides[bm->rank - 2], bm->strides[bm->rank - 1]},
                                           {0, d->strides[r - 1]}};
  int pslot[3] = {sa, sb, sd};
  nest p;
  nest_init(&p, 2, ps, 3, pslot, pst, false);
  if (!p.empty && p.nd == 2) {
    nest_outer_begin(&k, &p);
    char ptr[24];
    ir_elem_ptr(&k, &k.fn, sa, p.outer_off[0], ptr, sizeof ptr);
    irv av = ir_load(&k, &k.fn, ptr, ALLOY_F32);
    nest_inner_begin(&k, &p);
    nest_store(&k, &p, 2, fused_madd(&k, av, nest_load(&k, &p, 1, ALLOY_F32), nest_load(&k, &p, 2, ALLOY_F32)));
    nest_inner_end(&k, &p);
    nest_outer_end(&k, &p);
  } else if (!p.empty) {
    /* one of k, n is 1 after coalescing: plain sums of products */
    nest_outer_begin(&k, &p);
    nest_inner_begin(&k, &p);
    irv prod = fused_madd(&k, nest_load(&k, &p, 0, ALLOY_F32), nest_load(&k, &p, 1, ALLOY_F32), nest_load(&k, &p, 2, ALLOY_F32));
    nest_store(&k, &p, 2, prod);
    nest_inner_end(&k, &p);
    nest_outer_end(&k, &p);
  }
  ir_kernel_close(&k);
  k.row_work = 2 * (kk ? kk : 1) * (nn ? nn : 1);
  cp_kernel_finish(b, &k);
}

/* mm(a, b), bmm(a, b), addmm(c, a, b, beta, alpha): D = A @ B in float32,
 * then, when D is not the node's output itself, one pass in the group of
 * the output's shape: alpha * D + beta * c, rounded to the output dtype. */
void cp_emit_gemm(builder *b, const alloy_node *n, const cpu_op *op) {
  (void)op;
  const alloy_host_api *h = b->host;
  bool with_c = !strcmp(h->node_op_name(n), "aten.addmm.default");
  const alloy_value *in[3], *outv = h->node_output(n, 0);
  int nin = cp_tensor_operands(h, n, in, 3);
  if (nin != (with_c ? 3 : 2)) return (void)cp_fail(b, n, "expected %d tensor operands", with_c ? 3 : 2);
  int ti[3];
  for (int j = 0; j < nin; j++)
    if ((ti[j] = cp_in_memory(b, n, in[j])) < 0) return;
  cpu_tensor a = b->tensors[ti[with_c]], bm = b->tensors[ti[with_c + 1]];
  /* bmm(a, expand(W)): every batch multiplies the same matrix: one product
   * of batch * m rows when a's batches follow one another (a linear layer
   * on [b, s, d] as torch.export writes it) */
  bool fold = a.rank == 3 && bm.rank == 3 && a.sizes[0] > 1 && (bm.sizes[0] == 1 || bm.strides[0] == 0) &&
              a.strides[0] == a.sizes[1] * a.strides[1];
  if (fold) {
    a.sizes[1] *= a.sizes[0], a.strides[0] = a.strides[1], a.sizes[0] = a.sizes[1];
    a.sizes[1] = a.sizes[2], a.strides[1] = a.strides[2], a.rank = 2;
    bm.sizes[0] = bm.sizes[1], bm.strides[0] = bm.strides[1];
    bm.sizes[1] = bm.sizes[2], bm.strides[1] = bm.strides[2], bm.rank = 2;
  }
  alloy_dtype t = h->value_dtype(outv);
  int orank = h->value_rank(outv);
  int64_t osz[3] = {1, 1, 1};
  for (int d = 0; d < orank && d < 3; d++) h->value_size(outv, d, &osz[d]);
  if (orank < 2 || orank > 3) return (void)cp_fail(b, n, "an output of rank %d", orank);
  if (cp_numel_of(osz, orank) == 0) { /* nothing to compute: the output is empty */
    cp_materialize(b, outv);
    return;
  }
  /* small products: the emitted loop (OpenBLAS's call costs more than
   * their work, and the loop rounds as the reference does) */
  int64_t mnk = (fold ? osz[0] : 1) * osz[orank - 2] * osz[orank - 1] * a.sizes[a.rank - 1];
  bool blas = b->opt.blas && mnk > SMALL_GEMM;
  double alpha = with_c ? cp_float_arg(h, n, "alpha", 1.0) : 1.0, beta = with_c ? cp_float_arg(h, n, "beta", 1.0) : 1.0;
  cpu_gemm_desc g = {0};
  if (t != ALLOY_F32 || !blas) {
    /* sgemm reads float32 in its layouts; the loop nest reads any strides */
    if (t != ALLOY_F32) {
      int ca = f32_copy(b, &a), cb = ca < 0 ? -1 : f32_copy(b, &bm);
      if (cb < 0) return;
      a = b->tensors[ca], bm = b->tensors[cb];
    }
  }
  if (blas) {
    if (!as_matrix(&a, &g.trans_a, &g.lda, &g.stride_a)) {
      int c = f32_copy(b, &a);
      if (c < 0) return;
      a = b->tensors[c];
      as_matrix(&a, &g.trans_a, &g.lda, &g.stride_a);
    }
    if (!as_matrix(&bm, &g.trans_b, &g.ldb, &g.stride_b)) {
      int c = f32_copy(b, &bm);
      if (c < 0) return;
      bm = b->tensors[c];
      as_matrix(&bm, &g.trans_b, &g.ldb, &g.stride_b);
    }
  }
  /* D: the output itself when it is float32, dense and nothing follows */
  bool direct = !with_c && t == ALLOY_F32;
  int di;
  if (direct) {
    di = cp_materialize(b, outv);
    if (di >= 0 && !dense(&b->tensors[di])) direct = false;
  }
  if (!direct) {
    cpu_tensor shape = {.rank = orank};
    memcpy(shape.sizes, osz, sizeof osz);
    di = cp_temp_like(b, &shape, ALLOY_F32);
  }
  if (di < 0) return;
  cpu_tensor d = b->tensors[di];
  if (fold) { /* D as [batch * m, n] */
    d.sizes[1] *= d.sizes[0], d.strides[0] = d.strides[1], d.sizes[0] = d.sizes[1];
    d.sizes[1] = d.sizes[2], d.strides[1] = d.strides[2], d.rank = 2;
  }
  if (blas) {
    g.m = d.sizes[d.rank - 2], g.n = d.sizes[d.rank - 1], g.k = a.sizes[a.rank - 1];
    g.batch = d.rank == 3 ? d.sizes[0] : 1;
    g.ldd = g.n, g.stride_d = g.m * g.n;
    cpu_step *s = cp_add_step(b);
    if (!s) return;
    s->kind = STEP_GEMM;
    s->gemm = g;
    s->gbase[GEMM_A] = a.base, s->goff[GEMM_A] = a.offset;
    s->gbase[GEMM_B] = bm.base, s->goff[GEMM_B] = bm.offset;
    s->gbase[GEMM_D] = d.base, s->goff[GEMM_D] = d.offset;
    s->rows = g.batch * g.m;
    s->row_work = 2 * g.n * (g.k ? g.k : 1);
    snprintf(s->what, sizeof s->what, "sgemm");
  } else {
    emit_loop_gemm(b, &a, &bm, &d);
  }
  if (direct || b->err) return;
  /* the epilogue: joins the group of the output's shape */
  group *gr = cp_join_group(b, n, outv, true);
  if (!gr) return;
  b->node_group[h->node_index(b->g, n)] = cp_group_index(b, gr);
  kern *k = &gr->k;
  irv v = cp_group_load(b, gr, di);
  if (alpha != 1) {
    irv args[2] = {ir_const_f(alpha, ALLOY_F32), v};
    ir_prim(k, &k->body, "mul", args, 2, ALLOY_F32, &v);
  }
  if (with_c && beta != 0) {
    irv c = ir_cast(k, &k->body, cp_group_load(b, gr, ti[0]), ALLOY_F32);
    if (beta != 1) {
      irv args[2] = {ir_const_f(beta, ALLOY_F32), c};
      ir_prim(k, &k->body, "mul", args, 2, ALLOY_F32, &c);
    }
    irv args[2] = {v, c};
    ir_prim(k, &k->body, "add", args, 2, ALLOY_F32, &v);
  }
  v = ir_round(k, &k->body, v, t);
  cp_group_define(b, gr, outv, v, h->node_op_name(n));
}

/* ---- convolutions and pooling ---------------------------------------------------- */

/* products of at most this many multiply-adds (N Cout OH OW K) run as
 * fused multiply-add chains in k's order (the reference's sum) */
#define SMALL_CONV 65536
/* the im2col buffer of one unit: at most this many floats (256 KB, the
 * core's L2 with the sgemm's own packing beside it) */
#define COL_FLOATS 65536

/* An int list argument of nd spatial values (the last nd of a longer
 * list; one value repeats); absent, None or empty: dflt, or dlist. */
static void spatial_ints(const alloy_host_api *h, const alloy_node *n, const char *name, int nd, int64_t dflt,
                         const int64_t *dlist, int64_t *out) {
  const alloy_arg *a = cp_arg_named(h, n, name);
  int k = a && h->arg_type(a) == ALLOY_ARG_TYPE_LIST ? h->arg_list_size(a) : 0;
  int64_t single;
  bool one = a && h->arg_type(a) == ALLOY_ARG_TYPE_INT && h->arg_int(a, &single);
  for (int i = 0; i < nd; i++) {
    int64_t v = dlist ? dlist[i] : dflt;
    if (one) v = single;
    else if (k == 1) h->arg_int(h->arg_list_item(a, 0), &v);
    else if (k >= nd) h->arg_int(h->arg_list_item(a, k - nd + i), &v);
    out[i] = v;
  }
}


static bool is_pool_max(const char *name) { return strstr(name, "max_pool") != NULL; }
static bool is_pool_adaptive(const char *name) { return strstr(name, "adaptive_avg_pool") != NULL; }

const char *cpu_conv_unsupported(const alloy_host_api *h, const alloy_node *n, const cpu_op *op) {
  const alloy_value *x = cp_value_arg(h, n, op->rows == ROWS_CONV ? "input" : "self"), *y = h->node_output(n, 0);
  if (!x) return "no input tensor";
  int xr = h->value_rank(x);
  if (op->rows == ROWS_CONV) {
    const alloy_value *w = cp_value_arg(h, n, "weight"), *bias = cp_value_arg(h, n, "bias");
    if (!w) return "no weight tensor";
    alloy_dtype t = h->value_dtype(y);
    if (t != ALLOY_F32 && t != ALLOY_F64 && t != ALLOY_F16 && t != ALLOY_BF16)
      return "convolutions of float32, float64, float16 or bfloat16 only (integer ones are not computed)";
    if (h->value_dtype(x) != t || h->value_dtype(w) != t || (bias && h->value_dtype(bias) != t))
      return "operands of mixed dtypes";
    if (cp_bool_arg(h, n, "transposed", false)) return "transposed convolutions are not computed yet";
    if (xr != 3 && xr != 4) return "convolutions of 1 or 2 spatial dims only (a batched input)";
    if (h->value_rank(w) != xr || h->value_rank(y) != xr) return "a weight or output of another rank";
    if (bias && h->value_rank(bias) != 1) return "a bias of rank other than 1";
    int64_t groups = cp_int_arg(h, n, "groups", 1), cin = 0, cout = 0;
    if (groups < 1) return "groups below 1";
    if (h->value_size(x, 1, &cin) && cin % groups) return "channels not divisible by groups";
    if (h->value_size(w, 0, &cout) && cout % groups) return "output channels not divisible by groups";
    int64_t s[2], d[2], p[2];
    spatial_ints(h, n, "stride", xr - 2, 1, NULL, s);
    spatial_ints(h, n, "dilation", xr - 2, 1, NULL, d);
    spatial_ints(h, n, "padding", xr - 2, 0, NULL, p);
    for (int i = 0; i < xr - 2; i++)
      if (s[i] < 1 || d[i] < 1 || p[i] < 0) return "a stride or dilation below 1, or a negative padding";
    return NULL;
  }
  /* pooling */
  alloy_dtype t = h->value_dtype(y);
  const char *name = h->node_op_name(n);
  if (h->value_dtype(x) != t) return "an output of another dtype";
  if (t == ALLOY_BOOL || t > ALLOY_F64) return "pooling of bool or complex tensors";
  if (!alloy_dtype_is_float(t) && !is_pool_max(name))
    return "average pooling of integers (C's truncating division) is not computed";
  if (xr != 3 && xr != 4) return "pooling of 2 spatial dims, batched or not, only";
  if (h->value_rank(y) != xr) return "an output of another rank";
  if (is_pool_max(name) && h->node_num_outputs(n) > 1 && h->value_dtype(h->node_output(n, 1)) != ALLOY_I64)
    return "indices other than int64";
  if (!is_pool_adaptive(name)) {
    int64_t k[2], s[2], p[2], d[2];
    spatial_ints(h, n, "kernel_size", 2, 1, NULL, k);
    spatial_ints(h, n, "stride", 2, 0, k, s);
    spatial_ints(h, n, "padding", 2, 0, NULL, p);
    spatial_ints(h, n, "dilation", 2, 1, NULL, d);
    for (int i = 0; i < 2; i++)
      if (k[i] < 1 || s[i] < 1 || p[i] < 0 || d[i] < 1) return "a window, stride or dilation below 1, or a negative padding";
    const alloy_arg *ov = cp_arg_named(h, n, "divisor_override");
    int64_t dv;
    if (ov && h->arg_int(ov, &dv) && dv == 0) return "divisor_override 0";
  }
  return NULL;
}

/* x's plane [.., H, W] dense (rows of W, then H rows): what im2col and
 * the direct product read. */
static bool planes_dense(const cpu_tensor *t) {
  int r = t->rank;
  return (t->sizes[r - 1] == 1 || t->strides[r - 1] == 1) &&
         (r < 4 || t->sizes[r - 2] == 1 || t->strides[r - 2] == t->sizes[r - 1]);
}

/* convolution(input, weight, bias?, stride, padding, dilation, transposed,
 * output_padding, groups), 1-d or 2-d: one STEP_GEMM in convolution mode
 * (cpu_conv.c), float32 (float16 and bfloat16 through float32 copies,
 * rounded once at the end, as PyTorch's CPU convolution) or float64. A relu that is the output's only reader
 * is applied in the step's tiles, and its output is what the step writes. */
void cp_emit_conv(builder *b, const alloy_node *n, const cpu_op *op) {
  (void)op;
  const alloy_host_api *h = b->host;
  const alloy_value *xv = cp_value_arg(h, n, "input"), *wv = cp_value_arg(h, n, "weight"), *bv = cp_value_arg(h, n, "bias");
  const alloy_value *yv = h->node_output(n, 0);
  int xi = cp_in_memory(b, n, xv), wi = xi < 0 ? -1 : cp_in_memory(b, n, wv);
  int bi = wi < 0 || !bv ? -1 : cp_in_memory(b, n, bv);
  if (xi < 0 || wi < 0 || (bv && bi < 0)) return;
  cpu_tensor x = b->tensors[xi], w = b->tensors[wi];
  int nd = x.rank - 2;
  cpu_conv_desc c = {.on = true, .n = x.sizes[0], .groups = cp_int_arg(h, n, "groups", 1), .h = 1, .oh = 1, .kh = 1,
                     .sh = 1, .dh = 1};
  int64_t s[2], p[2], d[2];
  spatial_ints(h, n, "stride", nd, 1, NULL, s);
  spatial_ints(h, n, "padding", nd, 0, NULL, p);
  spatial_ints(h, n, "dilation", nd, 1, NULL, d);
  int64_t ysz[4];
  for (int i = 0; i < x.rank; i++) h->value_size(yv, i, &ysz[i]);
  int64_t cout = ysz[1];
  c.cin_g = x.sizes[1] / c.groups, c.cout_g = cout / c.groups;
  c.w = x.sizes[x.rank - 1], c.ow = ysz[x.rank - 1], c.kw = w.sizes[w.rank - 1];
  c.sw = s[nd - 1], c.pw = p[nd - 1], c.dw = d[nd - 1];
  if (nd == 2) {
    c.h = x.sizes[2], c.oh = ysz[2], c.kh = w.sizes[2];
    c.sh = s[0], c.ph = p[0], c.dh = d[0];
  }
  c.k = c.cin_g * c.kh * c.kw;
  int64_t npos = c.oh * c.ow;
  if (c.n * cout * npos == 0) { /* an empty output */
    cp_materialize(b, yv);
    return;
  }
  /* a relu reading only this output: in the step's tiles */
  const alloy_value *outv = yv;
  if (cp_val(b, yv)->output < 0 && h->value_num_users(yv) == 1) {
    const alloy_node *u = h->value_user(yv, 0);
    int ui = h->node_index(b->g, u);
    if (ui > h->node_index(b->g, n) && !strcmp(h->node_op_name(u), "aten.relu.default") &&
        h->value_dtype(h->node_output(u, 0)) == h->value_dtype(yv) && b->skip) {
      c.relu = true;
      outv = h->node_output(u, 0);
      b->skip[ui] = true;
      b->plan->nfused_nodes++;
    }
  }
  /* the arithmetic: float64 in double (dgemm), the others in float
   * (float16 and bfloat16 converted first, the result rounded once) */
  alloy_dtype ct = x.dtype == ALLOY_F64 ? ALLOY_F64 : ALLOY_F32;
  c.f64 = ct == ALLOY_F64;
  /* x: planes dense, else a dense copy */
  if (!planes_dense(&x) || x.dtype != ct) {
    int t = cp_temp_like(b, &x, ct);
    if (t < 0) return;
    cp_emit_copy(b, &x, &b->tensors[t]);
    x = b->tensors[t];
  }
  c.x_nstride = x.strides[0], c.x_cstride = x.strides[1];
  if (nd == 2 && c.h == 1) c.x_cstride = x.strides[1];
  c.direct = c.kh == 1 && c.kw == 1 && c.sh == 1 && c.sw == 1 && c.ph == 0 && c.pw == 0 && c.h == c.oh &&
             c.w == c.ow && (c.x_cstride >= npos || c.cin_g == 1);
  if (c.direct && c.cin_g == 1) c.x_cstride = npos > 0 ? npos : 1; /* sgemm's ldb: any value past n */
  /* A: the weights dense [Cout, K], the bias after them */
  c.bias = bi >= 0;
  if (c.bias || !dense(&w) || w.dtype != ct) {
    int base = cp_add_base(b, BASE_TEMP, -1, (uint64_t)(cout * c.k + (c.bias ? cout : 0)) * alloy_dtype_size(ct));
    if (base < 0) return;
    cpu_tensor wd = w;
    wd.base = base, wd.offset = 0, wd.dtype = ct;
    int64_t st = 1;
    for (int i = wd.rank - 1; i >= 0; i--) wd.strides[i] = st, st *= wd.sizes[i];
    cp_emit_copy(b, &w, &wd);
    if (c.bias) {
      cpu_tensor bt = b->tensors[bi], bd = bt;
      bd.base = base, bd.offset = cout * c.k, bd.strides[0] = 1, bd.dtype = ct;
      cp_emit_copy(b, &bt, &bd);
    }
    w = wd;
  }
  /* D: the output itself when dense, else a temporary copied out */
  int di = cp_materialize(b, outv);
  if (di < 0) return;
  cpu_tensor out = b->tensors[di], dt = out;
  bool copy_out = !dense(&out) || out.dtype != ct;
  if (copy_out) {
    int t = cp_temp_like(b, &out, ct);
    if (t < 0) return;
    dt = b->tensors[t];
  }
  /* units: tiles of output columns per (image, group); enough of them for
   * the threads, each tile's im2col within COL_FLOATS */
  int64_t per = c.n * c.groups, want = per >= 8 ? 1 : (8 + per - 1) / per;
  int64_t tile = (npos + want - 1) / want;
  if (tile < 64) tile = npos < 64 ? npos : 64;
  if (!c.direct && c.k * tile > COL_FLOATS) {
    tile = COL_FLOATS / (c.k ? c.k : 1);
    if (tile < 128) tile = 128;
  }
  if (tile > npos) tile = npos;
  if (tile < npos) tile = (tile + 15) / 16 * 16;
  c.tile = tile;
  c.ntiles = (npos + tile - 1) / tile;
  c.loop = c.n * cout * npos * c.k <= SMALL_CONV;
  c.a_off = w.offset, c.x_off = x.offset, c.d_off = dt.offset;
  cpu_step *st = cp_add_step(b);
  if (!st) return;
  st->kind = STEP_GEMM;
  cpu_gemm_desc *g = &st->gemm;
  g->conv = c;
  g->m = c.cout_g, g->n = c.tile, g->k = c.k, g->batch = per;
  g->lda = c.k ? c.k : 1, g->ldb = c.direct ? c.x_cstride : c.tile, g->ldd = npos;
  st->gbase[GEMM_A] = w.base, st->gbase[GEMM_B] = x.base, st->gbase[GEMM_D] = dt.base; /* offsets: c's */
  st->rows = per * c.ntiles;
  st->row_work = 2 * c.cout_g * c.tile * (c.k ? c.k : 1);
  snprintf(st->what, sizeof st->what, "conv%s%s", c.bias ? "+bias" : "", c.relu ? "+relu" : "");
  if (copy_out) cp_emit_copy(b, &dt, &out);
}

/* min / max of two i64 registers or constants */
static irv imin(kern *k, irv a, irv v) {
  int c = ir_ins(k, &k->fn, "icmp slt i64 %s, %s", a.s, v.s);
  irv r = {.t = ALLOY_I64};
  snprintf(r.s, sizeof r.s, "%%r%d", ir_ins(k, &k->fn, "select i1 %%r%d, i64 %s, i64 %s", c, a.s, v.s));
  return r;
}

static irv imax(kern *k, irv a, irv v) {
  int c = ir_ins(k, &k->fn, "icmp sgt i64 %s, %s", a.s, v.s);
  irv r = {.t = ALLOY_I64};
  snprintf(r.s, sizeof r.s, "%%r%d", ir_ins(k, &k->fn, "select i1 %%r%d, i64 %s, i64 %s", c, a.s, v.s));
  return r;
}

static irv ireg(int r) {
  irv v = {.t = ALLOY_I64};
  snprintf(v.s, sizeof v.s, "%%r%d", r);
  return v;
}

static irv icon(int64_t c) {
  irv v = {.t = ALLOY_I64};
  snprintf(v.s, sizeof v.s, "%" PRId64, c);
  return v;
}

/* a * m + c for an i64 register a */
static irv imad(kern *k, irv a, int64_t m, int64_t c) {
  int r = ir_ins(k, &k->fn, "mul i64 %s, %" PRId64, a.s, m);
  return ireg(ir_ins(k, &k->fn, "add i64 %%r%d, %" PRId64, r, c));
}

/* The window of output position o along one spatial dim of `in` input and
 * `out` output positions: [*lo, *hi) and, pooling, its size counting the
 * padding (*pool; 0 when adaptive). Adaptive: [floor(o in / out),
 * ceil((o + 1) in / out)); else the first tap o * stride - pad (maybe in
 * the padding) and at most ker taps, not past in + pad. */
static void pool_window(kern *k, irv o, int64_t in, int64_t out, int64_t stride, int64_t pad, int64_t ker,
                        bool adaptive, irv *lo, irv *hi, irv *pool) {
  *pool = icon(0);
  if (adaptive) {
    *lo = ireg(ir_ins(k, &k->fn, "udiv i64 %%r%d, %" PRId64, ir_ins(k, &k->fn, "mul i64 %s, %" PRId64, o.s, in), out));
    irv e = imad(k, o, in, in + out - 1);
    *hi = ireg(ir_ins(k, &k->fn, "udiv i64 %s, %" PRId64, e.s, out));
    return;
  }
  *lo = imad(k, o, stride, -pad);
  *hi = imin(k, imad(k, *lo, 1, ker), icon(in + pad));
  *pool = ireg(ir_ins(k, &k->fn, "sub i64 %s, %s", hi->s, lo->s));
}

/* max_pool2d[_with_indices], avg_pool2d, _adaptive_avg_pool2d and
 * adaptive_avg_pool2d of a [.., C, H, W] input, float32 or float64: a
 * kernel whose rows are the output's rows (every dim but the last) and
 * whose inner loop runs along the output row; each element visits its
 * window (taps in the padding masked: their load reads the plane's first
 * element and is not used). As PyTorch's CPU kernels and the reference:
 * max takes a larger value or any NaN (the first tap otherwise), with the
 * tap's index ih * W + iw in the plane; avg sums the window in the dtype
 * (float for float32) in row order and divides by PyTorch's divisor;
 * adaptive windows are [floor(o * I / O), ceil((o + 1) * I / O)), their
 * sum divided by the height, then by the width. */
void cp_emit_pool(builder *b, const alloy_node *n, const cpu_op *op) {
  (void)op;
  const alloy_host_api *h = b->host;
  const char *name = h->node_op_name(n);
  bool max = is_pool_max(name), adaptive = is_pool_adaptive(name);
  int xi = cp_in_memory(b, n, cp_value_arg(h, n, "self"));
  if (xi < 0) return;
  int yi = cp_materialize(b, h->node_output(n, 0));
  /* the indices, when something reads them (a graph output, a user) */
  const alloy_value *iv = max && h->node_num_outputs(n) > 1 ? h->node_output(n, 1) : NULL;
  bool want_idx = iv && (cp_val(b, iv)->output >= 0 || h->value_num_users(iv) > 0);
  int ii = want_idx ? cp_materialize(b, iv) : -2;
  if (yi < 0 || ii == -1) return;
  const cpu_tensor x = b->tensors[xi], y = b->tensors[yi];
  int r = x.rank;
  int64_t H = x.sizes[r - 2], W = x.sizes[r - 1], OH = y.sizes[r - 2], OW = y.sizes[r - 1];
  int64_t xsh = x.strides[r - 2], xsw = x.strides[r - 1];
  if (cp_numel_of(y.sizes, r) == 0) return;
  int64_t kk[2] = {1, 1}, s[2] = {1, 1}, p[2] = {0, 0}, d[2] = {1, 1}, ovr = 0;
  bool include_pad = true, has_ovr = false;
  if (!adaptive) {
    spatial_ints(h, n, "kernel_size", 2, 1, NULL, kk);
    spatial_ints(h, n, "stride", 2, 0, kk, s);
    spatial_ints(h, n, "padding", 2, 0, NULL, p);
    if (max) spatial_ints(h, n, "dilation", 2, 1, NULL, d);
    include_pad = cp_bool_arg(h, n, "count_include_pad", true);
    const alloy_arg *oa = cp_arg_named(h, n, "divisor_override");
    has_ovr = oa && h->arg_int(oa, &ovr);
  }
  /* the arithmetic: float for the 16-bit floats (rounded once, at the
   * store), the dtype itself otherwise; integers only take a max */
  alloy_dtype ct = ir_reg_dtype(x.dtype);
  bool fl = alloy_dtype_is_float(ct);
  const char *T = ir_type(ct);
  kern k;
  cp_kernel_begin(&k, y.sizes, r, name);
  /* x: the plane of the row (its H and W strides are the window's) */
  cpu_tensor xk = x;
  xk.sizes[r - 2] = OH, xk.sizes[r - 1] = OW, xk.strides[r - 2] = 0, xk.strides[r - 1] = 0;
  int sx = cp_kernel_slot(b, &k, &xk, -1), sy = cp_kernel_slot(b, &k, &y, -1);
  int si = ii >= 0 ? cp_kernel_slot(b, &k, &b->tensors[ii], -1) : -1;
  if (sx < 0 || sy < 0 || (ii >= 0 && si < 0)) return;
  k.acc[0] = ct, k.acc[1] = ALLOY_I64, k.nacc = 2;
  ir_kernel_open(&k, r - 1);
  char ohs[16];
  snprintf(ohs, sizeof ohs, "%%x%d", r - 2);
  irv oh = {.t = ALLOY_I64};
  snprintf(oh.s, sizeof oh.s, "%s", ohs);
  /* the row's window along H */
  irv h0, h1, hpool;
  pool_window(&k, oh, H, OH, s[0], p[0], kk[0], adaptive, &h0, &h1, &hpool);
  ir_loop lw;
  char owt[24];
  snprintf(owt, sizeof owt, "%" PRId64, OW);
  ir_loop_begin(&k, &lw, owt);
  irv ow = {.t = ALLOY_I64};
  snprintf(ow.s, sizeof ow.s, "%s", lw.iv);
  irv w0, w1, wpool;
  pool_window(&k, ow, W, OW, s[1], p[1], kk[1], adaptive, &w0, &w1, &wpool);
  /* the accumulators */
  irv init = ir_const_f(max ? -INFINITY : 0.0, ct);
  if (!fl) /* the least value of the integer type */
    init = ir_const_i(x.dtype == ALLOY_U8 ? 0 : x.dtype == ALLOY_I64 ? INT64_MIN : -(INT64_C(1) << (8 * alloy_dtype_size(x.dtype) - 1)), ct);
  ir_put(&k.fn, "  store %s %s, %s* %%acc0, align 8\n", T, init.s, T);
  ir_put(&k.fn, "  store i64 -1, i64* %%acc1, align 8\n");
  ir_loop li, lj;
  irv ih, iw;
  char ti[48], tj[48];
  if (adaptive) {
    irv th = ireg(ir_ins(&k, &k.fn, "sub i64 %s, %s", h1.s, h0.s));
    snprintf(ti, sizeof ti, "%s", th.s);
    ir_loop_begin(&k, &li, ti);
    ih = ireg(ir_ins(&k, &k.fn, "add i64 %s, %s", h0.s, li.iv));
    irv tw = ireg(ir_ins(&k, &k.fn, "sub i64 %s, %s", w1.s, w0.s));
    snprintf(tj, sizeof tj, "%s", tw.s);
    ir_loop_begin(&k, &lj, tj);
    iw = ireg(ir_ins(&k, &k.fn, "add i64 %s, %s", w0.s, lj.iv));
  } else {
    char *t0 = ti, *t1 = tj;
    snprintf(t0, sizeof ti, "%" PRId64, kk[0]);
    snprintf(t1, sizeof tj, "%" PRId64, kk[1]);
    ir_loop_begin(&k, &li, t0);
    irv ivi = {.t = ALLOY_I64};
    snprintf(ivi.s, sizeof ivi.s, "%s", li.iv);
    ih = ireg(ir_ins(&k, &k.fn, "add i64 %s, %%r%d", h0.s, ir_ins(&k, &k.fn, "mul i64 %s, %" PRId64, ivi.s, d[0])));
    ir_loop_begin(&k, &lj, t1);
    iw = ireg(ir_ins(&k, &k.fn, "add i64 %s, %%r%d", w0.s, ir_ins(&k, &k.fn, "mul i64 %s, %" PRId64, lj.iv, d[1])));
  }
  /* the tap: in the plane, or masked */
  int vh = ir_ins(&k, &k.fn, "icmp ult i64 %s, %" PRId64, ih.s, H);
  int vw = ir_ins(&k, &k.fn, "icmp ult i64 %s, %" PRId64, iw.s, W);
  int valid = ir_ins(&k, &k.fn, "and i1 %%r%d, %%r%d", vh, vw);
  int offh = ir_ins(&k, &k.fn, "mul i64 %s, %" PRId64, ih.s, xsh);
  int offw = ir_ins(&k, &k.fn, "mul i64 %s, %" PRId64, iw.s, xsw);
  int off = ir_ins(&k, &k.fn, "add i64 %%r%d, %%r%d", offh, offw);
  int offc = ir_ins(&k, &k.fn, "select i1 %%r%d, i64 %%r%d, i64 0", valid, off);
  int at = ir_ins(&k, &k.fn, "add i64 %%ro.%d, %%r%d", sx, offc);
  char ptr[24], atv[24];
  snprintf(atv, sizeof atv, "%%r%d", at);
  ir_elem_ptr(&k, &k.fn, sx, atv, ptr, sizeof ptr);
  irv v = ir_cast(&k, &k.fn, ir_load(&k, &k.fn, ptr, x.dtype), ct);
  irv acc = acc_load(&k, 0);
  if (max) {
    irv idx = acc_load(&k, 1);
    int gt = fl ? ir_ins(&k, &k.fn, "fcmp ogt %s %s, %s", T, v.s, acc.s)
                : ir_ins(&k, &k.fn, "icmp %s %s %s, %s", x.dtype == ALLOY_U8 ? "ugt" : "sgt", T, v.s, acc.s);
    int nan = fl ? ir_ins(&k, &k.fn, "fcmp uno %s %s, 0.0", T, v.s) : ir_ins(&k, &k.fn, "icmp ne i1 0, 0");
    int first = ir_ins(&k, &k.fn, "icmp eq i64 %s, -1", idx.s);
    int any = ir_ins(&k, &k.fn, "or i1 %%r%d, %%r%d", gt, nan);
    any = ir_ins(&k, &k.fn, "or i1 %%r%d, %%r%d", any, first);
    int take = ir_ins(&k, &k.fn, "and i1 %%r%d, %%r%d", any, valid);
    irv nv = {.t = ct};
    snprintf(nv.s, sizeof nv.s, "%%r%d", ir_ins(&k, &k.fn, "select i1 %%r%d, %s %s, %s %s", take, T, v.s, T, acc.s));
    acc_store(&k, 0, nv);
    irv pos = imad(&k, ih, W, 0);
    pos = ireg(ir_ins(&k, &k.fn, "add i64 %s, %s", pos.s, iw.s));
    irv ni = ireg(ir_ins(&k, &k.fn, "select i1 %%r%d, i64 %s, i64 %s", take, pos.s, idx.s));
    acc_store(&k, 1, ni);
  } else {
    irv z = ir_const_f(0.0, ct), vv = {.t = ct};
    snprintf(vv.s, sizeof vv.s, "%%r%d", ir_ins(&k, &k.fn, "select i1 %%r%d, %s %s, %s %s", valid, T, v.s, T, z.s));
    acc_store(&k, 0, bin(&k, "fadd", acc, vv));
  }
  ir_loop_end(&k, &lj, tj);
  ir_loop_end(&k, &li, ti);
  /* the element */
  irv res = acc_load(&k, 0);
  if (!max) {
    irv div;
    if (adaptive) {
      irv th = ireg(ir_ins(&k, &k.fn, "sub i64 %s, %s", h1.s, h0.s)), tw = ireg(ir_ins(&k, &k.fn, "sub i64 %s, %s", w1.s, w0.s));
      res = bin(&k, "fdiv", res, ir_cast(&k, &k.fn, th, ct));
      res = bin(&k, "fdiv", res, ir_cast(&k, &k.fn, tw, ct));
    } else {
      irv hs = imax(&k, h0, icon(0)), he = imin(&k, h1, icon(H)), ws = imax(&k, w0, icon(0)), we = imin(&k, w1, icon(W));
      irv eh = ireg(ir_ins(&k, &k.fn, "sub i64 %s, %s", he.s, hs.s)), ew = ireg(ir_ins(&k, &k.fn, "sub i64 %s, %s", we.s, ws.s));
      int empty = ir_ins(&k, &k.fn, "or i1 %%r%d, %%r%d", ir_ins(&k, &k.fn, "icmp sle i64 %s, 0", eh.s),
                         ir_ins(&k, &k.fn, "icmp sle i64 %s, 0", ew.s));
      if (has_ovr) div = icon(ovr);
      else if (include_pad) div = ireg(ir_ins(&k, &k.fn, "mul i64 %s, %s", hpool.s, wpool.s));
      else div = ireg(ir_ins(&k, &k.fn, "mul i64 %s, %s", eh.s, ew.s));
      res = bin(&k, "fdiv", res, ir_cast(&k, &k.fn, div, ct));
      irv z = ir_const_f(0.0, ct), rr = {.t = ct};
      snprintf(rr.s, sizeof rr.s, "%%r%d", ir_ins(&k, &k.fn, "select i1 %%r%d, %s %s, %s %s", empty, T, z.s, T, res.s));
      res = rr;
    }
  }
  char yoff[40];
  snprintf(yoff, sizeof yoff, "%%r%d", ir_ins(&k, &k.fn, "add i64 %%ro.%d, %%r%d", sy,
                                            ir_ins(&k, &k.fn, "mul i64 %s, %" PRId64, ow.s, y.strides[r - 1])));
  ir_elem_ptr(&k, &k.fn, sy, yoff, ptr, sizeof ptr);
  ir_store(&k, &k.fn, ptr, res, y.dtype);
  if (si >= 0) {
    const cpu_tensor *it = &b->tensors[ii];
    snprintf(yoff, sizeof yoff, "%%r%d", ir_ins(&k, &k.fn, "add i64 %%ro.%d, %%r%d", si,
                                              ir_ins(&k, &k.fn, "mul i64 %s, %" PRId64, ow.s, it->strides[r - 1])));
    ir_elem_ptr(&k, &k.fn, si, yoff, ptr, sizeof ptr);
    ir_store(&k, &k.fn, ptr, acc_load(&k, 1), ALLOY_I64);
  }
  ir_loop_end(&k, &lw, owt);
  ir_kernel_close(&k);
  k.row_work = OW * (adaptive ? ((H + OH - 1) / OH + 1) * ((W + OW - 1) / OW + 1) : kk[0] * kk[1]);
  cp_kernel_finish(b, &k);
}
