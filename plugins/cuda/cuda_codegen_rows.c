/*
 * plugins/cuda/cuda_codegen_rows.c: the steps of a plan that are not fused
 * pointwise work. A reduction, softmax or layer norm is a kernel with a
 * block per row of the reduced elements, accumulating in PyTorch's CUDA
 * acc_type (float for the 16-bit floats and float32) by warp shuffles and
 * one shared-memory step; embedding and index.Tensor are gathers, cumsum
 * a thread per row, cat a copy per input into its slice of the output; a
 * matrix product is one cuBLASLt call (cuda_blas.c) reading its operands
 * in place where cuBLASLt's layouts express them, or the same product as
 * Alloy's own tile kernel (cuda_codegen_gemm.c) when the plan is portable.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/cuda/cuda_codegen.h"

/* ---- reductions ------------------------------------------------------------*/


/* Index text of the dims listed in dims (n of them, of tensor t): the
 * element offset in t of linear index `var` over those dims, row-major;
 * declares the per-dim indices as <pfx>K. */
static void dims_offset(text *body, const cuda_tensor *t, const int *dims, int n, const char *var,
                        const char *pfx, char *off, size_t cap) {
  if (n > 0) cg_put(body, "      i64 %s_r = %s;\n", pfx, var);
  for (int i = n - 1; i >= 0; i--) {
    if (i > 0)
      cg_put(body, "      i64 %s%d = %s_r %% %" PRId64 "; %s_r /= %" PRId64 ";\n", pfx, i, pfx, t->sizes[dims[i]], pfx,
          t->sizes[dims[i]]);
    else cg_put(body, "      i64 %s0 = %s_r;\n", pfx, pfx);
  }
  size_t len = (size_t)snprintf(off, cap, "0");
  for (int i = 0; i < n && len < cap; i++)
    if (t->sizes[dims[i]] != 1 && t->strides[dims[i]] != 0)
      len += (size_t)snprintf(off + len, cap - len, " + %s%d * %" PRId64, pfx, i, t->strides[dims[i]]);
}

/* cuda_codegen.h. From "dim": a list (None or empty: every dim), or one
 * int (softmax). */
void cg_reduced_dims(builder *b, const alloy_node *n, const cuda_op *op, int rank, bool *mask) {
  const alloy_host_api *h = b->host;
  const alloy_arg *a = cg_arg_named(h, n, "dim");
  bool all = !a || h->arg_type(a) == ALLOY_ARG_TYPE_NONE ||
             (h->arg_type(a) == ALLOY_ARG_TYPE_LIST && h->arg_list_size(a) == 0);
  for (int d = 0; d < rank; d++) mask[d] = all;
  if (all) return;
  int64_t x;
  if (h->arg_type(a) == ALLOY_ARG_TYPE_LIST) {
    for (int k = 0; k < h->arg_list_size(a); k++)
      if (h->arg_int(h->arg_list_item(a, k), &x) && rank > 0) mask[cg_wrap_dim(x, rank)] = true;
  } else if (h->arg_int(a, &x) && rank > 0) {
    mask[cg_wrap_dim(x, rank)] = true;
  }
  (void)op;
}

/* A reduction node: one block per row of the reduced elements (a row per
 * output element; softmax writes a whole row back). */
void cg_emit_reduce(builder *b, const alloy_node *n, const cuda_op *op) {
  const alloy_host_api *h = b->host;
  const alloy_value *in[1], *out = h->node_output(n, 0);
  if (cg_tensor_operands(h, n, in, 1) != 1) return (void)cg_fail(b, n, "expected one tensor operand");
  vinfo *vi = cg_val(b, in[0]);
  if (vi->tensor < 0) return (void)cg_fail(b, n, "its input is not in memory");
  int ot = cg_materialize(b, out);
  if (ot < 0) return;
  const cuda_tensor x = b->tensors[vi->tensor], y = b->tensors[ot];
  bool mask[CUDA_MAX_RANK];
  cg_reduced_dims(b, n, op, x.rank, mask);
  int outer[CUDA_MAX_RANK], inner[CUDA_MAX_RANK], no = 0, ni = 0;
  int64_t rows = 1, cols = 1;
  for (int d = 0; d < x.rank; d++) {
    if (mask[d]) inner[ni++] = d, cols *= x.sizes[d];
    else outer[no++] = d, rows *= x.sizes[d];
  }
  bool row_out = op->reduce == RED_SOFTMAX || op->reduce == RED_LOG_SOFTMAX;
  alloy_dtype yt = y.dtype;
  /* PyTorch's CUDA acc_type: float for the 16-bit floats and float32,
   * double for float64, int64 for integers and bool */
  const char *acc = yt == ALLOY_F64 ? "double" : alloy_dtype_is_float(yt) ? "float" : "i64";
  if (op->reduce == RED_MAX || op->reduce == RED_MIN) acc = cg_reg_type(yt);
  if (op->reduce == RED_ANY || op->reduce == RED_ALL) acc = "int"; /* truth values, 0 or 1 */
  kernel k;
  int64_t one = rows;
  cg_kernel_begin(&k, &one, 1);
  int px = cg_kernel_param(&k, x.base), py = cg_kernel_param(&k, y.base);
  char xo[512], yo[512], io[512];
  cg_put(&k.body, "    __shared__ %s sh[32];\n", acc);
  cg_put(&k.body, "    {\n");
  dims_offset(&k.body, &x, outer, no, "i", "o", xo, sizeof xo);
  cg_put(&k.body, "      const i64 xb = %" PRId64 " + %s;\n", x.offset, xo);
  if (row_out) {
    dims_offset(&k.body, &y, outer, no, "i", "q", yo, sizeof yo);
    cg_put(&k.body, "      const i64 yb = %s;\n", yo);
  }
  /* the loop over the row's elements, its body given */
  text loop = {0};
  cg_put(&loop, "      for (i64 j = threadIdx.x; j < %" PRId64 "; j += blockDim.x) {\n", cols);
  dims_offset(&loop, &x, inner, ni, "j", "r", io, sizeof io);
  bool truth = op->reduce == RED_ANY || op->reduce == RED_ALL;
  if (truth) cg_put(&loop, "      int x = ld_%s(p%d, xb + %s) != 0;\n", cg_dtype_tag(x.dtype), px, io);
  else cg_put(&loop, "      %s x = (%s)ld_%s(p%d, xb + %s);\n", acc, acc, cg_dtype_tag(x.dtype), px, io);
  const char *lp = loop.s ? loop.s : "";
  switch (op->reduce) {
    case RED_ANY:
    case RED_ALL: {
      bool any = op->reduce == RED_ANY;
      cg_put(&k.body, "      int a = %d;\n%s        a = %s(a, x);\n      }\n", any ? 0 : 1, lp, any ? "max" : "min");
      cg_put(&k.body, "      a = block_reduce(a, %s(), sh, %d);\n", any ? "MaxOp" : "MinOp", any ? 0 : 1);
      cg_put(&k.body, "      if (threadIdx.x == 0) st_%s(p%d, %" PRId64 " + i, a != 0);\n", cg_dtype_tag(yt), py, y.offset);
      break;
    }
    case RED_SUM:
    case RED_MEAN:
      cg_put(&k.body, "      %s a = 0;\n%s        a += x;\n      }\n", acc, lp);
      cg_put(&k.body, "      a = block_reduce(a, SumOp(), sh, (%s)0);\n", acc);
      if (op->reduce == RED_MEAN) cg_put(&k.body, "      a = a / (%s)%" PRId64 ";\n", acc, cols);
      cg_put(&k.body, "      if (threadIdx.x == 0) st_%s(p%d, %" PRId64 " + i, (%s)a);\n", cg_dtype_tag(yt), py,
          y.offset, cg_reg_type(yt));
      break;
    case RED_MAX:
    case RED_MIN: {
      const char *f = op->reduce == RED_MAX ? "MaxOp" : "MinOp";
      /* the identity: the row's first element (rows are never empty here) */
      cg_put(&k.body, "      %s a = (%s)ld_%s(p%d, xb);\n%s        a = %s()(a, x);\n      }\n", acc, acc,
          cg_dtype_tag(x.dtype), px, lp, f);
      cg_put(&k.body, "      a = block_reduce(a, %s(), sh, a);\n", f); /* a repeated value is harmless */
      cg_put(&k.body, "      if (threadIdx.x == 0) st_%s(p%d, %" PRId64 " + i, a);\n", cg_dtype_tag(yt), py, y.offset);
      break;
    }
    default: { /* softmax, log_softmax: max, then the sum of exp, then the row */
      cg_put(&k.body, "      %s m = (%s)ld_%s(p%d, xb);\n%s        m = MaxOp()(m, x);\n      }\n", acc, acc,
          cg_dtype_tag(x.dtype), px, lp);
      cg_put(&k.body, "      m = block_reduce(m, MaxOp(), sh, m);\n");
      cg_put(&k.body, "      %s s = 0;\n%s        s += exp(x - m);\n      }\n", acc, lp);
      cg_put(&k.body, "      s = block_reduce(s, SumOp(), sh, (%s)0);\n", acc);
      char yi[512];
      text wr = {0};
      cg_put(&wr, "%s", lp);
      dims_offset(&wr, &y, inner, ni, "j", "w", yi, sizeof yi);
      if (op->reduce == RED_SOFTMAX)
        cg_put(&k.body, "%s        st_%s(p%d, yb + %s, (%s)(exp(x - m) / s));\n      }\n", wr.s ? wr.s : "",
            cg_dtype_tag(yt), py, yi, cg_reg_type(yt));
      else
        cg_put(&k.body, "%s        st_%s(p%d, yb + %s, (%s)(x - m - log(s)));\n      }\n", wr.s ? wr.s : "",
            cg_dtype_tag(yt), py, yi, cg_reg_type(yt));
      free(wr.s);
      break;
    }
  }
  free(loop.s);
  cg_put(&k.body, "    }\n");
  k.rows = true;
  cg_kernel_finish(b, &k);
}

/* ---- matrix products ---------------------------------------------------------*/

static double cg_float_arg(const alloy_host_api *h, const alloy_node *n, const char *name, double dflt) {
  const alloy_arg *a = cg_arg_named(h, n, name);
  double v;
  return a && h->arg_float(a, &v) ? v : dflt;
}

/* Operand t of a product as cuBLASLt reads it: its last two dims a matrix
 * with one unit stride (row-major, or transposed: column-major), a batch
 * stride before them; false when it is not one (then it is copied). */
static bool as_matrix(const cuda_tensor *t, bool *trans, int64_t *ld, int64_t *bstride) {
  int r = t->rank;
  if (r < 2) return false;
  int64_t rows = t->sizes[r - 2], cols = t->sizes[r - 1], s0 = t->strides[r - 2], s1 = t->strides[r - 1];
  *bstride = r == 3 && t->sizes[0] > 1 ? t->strides[0] : 0;
  if ((s1 == 1 || cols == 1) && (rows == 1 || s0 >= cols)) {
    *trans = false;
    *ld = rows == 1 ? cols : s0;
  } else if ((s0 == 1 || rows == 1) && (cols == 1 || s1 >= rows)) {
    *trans = true;
    *ld = cols == 1 ? rows : s1;
  } else {
    return false;
  }
  size_t es = alloy_dtype_size(t->dtype);
  return (uint64_t)t->offset * es % 16 == 0;
}

/* A dense copy of t in a new temporary (a product operand no layout of
 * cuBLASLt reads): its plan tensor. */
static cuda_tensor dense_copy(builder *b, const cuda_tensor *t) {
  cuda_tensor d = *t;
  d.base = cg_add_base(b, BASE_TEMP, -1, (uint64_t)cg_numel_of(t->sizes, t->rank) * alloy_dtype_size(t->dtype));
  d.offset = 0;
  int64_t s = 1;
  for (int k = t->rank - 1; k >= 0; k--) d.strides[k] = s, s *= t->sizes[k];
  cg_emit_copy(b, t, &d);
  return d;
}

static bool dense(const cuda_tensor *t) {
  int64_t s = 1;
  for (int k = t->rank - 1; k >= 0; k--) {
    if (t->sizes[k] != 1 && t->strides[k] != s) return false;
    s *= t->sizes[k];
  }
  return t->offset == 0;
}

cuda_launch *cg_add_launch(builder *b) {
  cuda_plan *p = b->plan;
  if (!cg_grow((void **)&p->launches, &b->cap_launches, p->nlaunches + 1, sizeof *p->launches)) {
    cg_fail(b, NULL, "out of memory");
    return NULL;
  }
  cuda_launch *l = &p->launches[p->nlaunches++];
  memset(l, 0, sizeof *l);
  snprintf(l->what, sizeof l->what, "%s", b->what);
  return l;
}

/* mm(a, b), bmm(a, b), addmm(c, a, b, beta, alpha), baddbmm(...): one
 * cuBLASLt product into D, the node's output (dense), or with
 * b->portable the tile kernel of the same description (cg_gemm_kernel).
 * addmm's c is the bias epilogue when it is a row and beta is 1, read as C
 * when it is a full matrix, else first expanded into D and read back from
 * there. */
void cg_emit_gemm(builder *b, const alloy_node *n, const cuda_op *entry) {
  (void)entry;
  const alloy_host_api *h = b->host;
  const char *name = h->node_op_name(n);
  bool with_c = !strcmp(name, "aten.addmm.default") || !strcmp(name, "aten.baddbmm.default");
  const alloy_value *in[3];
  int nin = cg_tensor_operands(h, n, in, 3);
  if (nin != (with_c ? 3 : 2)) return (void)cg_fail(b, n, "expected %d tensor operands", with_c ? 3 : 2);
  cuda_tensor op[3];
  for (int j = 0; j < nin; j++) {
    vinfo *vi = cg_val(b, in[j]);
    if (vi->tensor < 0) return (void)cg_fail(b, n, "an operand is not in memory");
    op[j] = b->tensors[vi->tensor];
  }
  const cuda_tensor *c = with_c ? &op[0] : NULL;
  cuda_tensor a = op[with_c], bm = op[with_c + 1];
  int dt = cg_materialize(b, h->node_output(n, 0));
  if (dt < 0) return;
  cuda_tensor d = b->tensors[dt];
  if (!dense(&d)) return (void)cg_fail(b, n, "its output is not dense");
  cuda_launch l = {.kind = LAUNCH_GEMM};
  cuda_gemm_desc *g = &l.gemm;
  for (int k = 0; k < GEMM_OPERANDS; k++) l.gbase[k] = -1;
  int r = d.rank;
  g->dtype = d.dtype;
  g->m = d.sizes[r - 2], g->n = d.sizes[r - 1], g->k = a.sizes[a.rank - 1];
  g->batch = r == 3 ? d.sizes[0] : 1;
  g->alpha = with_c ? cg_float_arg(h, n, "alpha", 1.0) : 1.0;
  if (!as_matrix(&a, &g->trans_a, &g->lda, &g->stride_a)) {
    a = dense_copy(b, &a);
    as_matrix(&a, &g->trans_a, &g->lda, &g->stride_a);
  }
  if (!as_matrix(&bm, &g->trans_b, &g->ldb, &g->stride_b)) {
    bm = dense_copy(b, &bm);
    as_matrix(&bm, &g->trans_b, &g->ldb, &g->stride_b);
  }
  l.gbase[GEMM_A] = a.base, l.goff[GEMM_A] = a.offset;
  l.gbase[GEMM_B] = bm.base, l.goff[GEMM_B] = bm.offset;
  l.gbase[GEMM_D] = d.base, l.goff[GEMM_D] = 0;
  if (c) {
    double beta = cg_float_arg(h, n, "beta", 1.0);
    int lead = r - c->rank;
    bool row = lead >= 0 && (c->rank < 2 || c->sizes[c->rank - 2] == 1) &&
               (c->rank < 3 || c->sizes[0] == 1) && c->sizes[c->rank - 1] == g->n &&
               (c->strides[c->rank - 1] == 1 || g->n == 1) && (uint64_t)c->offset * alloy_dtype_size(c->dtype) % 16 == 0;
    bool full = !row && c->rank == r && c->sizes[r - 2] == g->m && c->sizes[r - 1] == g->n &&
                (r < 3 || c->sizes[0] == g->batch) && c->strides[r - 1] == 1 &&
                (uint64_t)c->offset * alloy_dtype_size(c->dtype) % 16 == 0;
    if (beta == 0) {
      /* beta 0 ignores self, NaN included, as PyTorch's addmm does */
    } else if (row && beta == 1) {
      g->bias = true;
      l.gbase[GEMM_BIAS] = c->base, l.goff[GEMM_BIAS] = c->offset;
    } else if (full) {
      g->has_c = true, g->beta = beta;
      g->ldc = c->strides[r - 2], g->stride_c = r == 3 ? c->strides[0] : 0;
      l.gbase[GEMM_C] = c->base, l.goff[GEMM_C] = c->offset;
    } else {
      /* expand self into D, then D = alpha a b + beta D */
      cuda_tensor ex = *c;
      ex.rank = r;
      for (int k = 0; k < r; k++) {
        int kc = k - lead;
        ex.sizes[k] = d.sizes[k];
        ex.strides[k] = kc < 0 || c->sizes[kc] == 1 ? 0 : c->strides[kc];
      }
      cg_emit_copy(b, &ex, &d);
      g->has_c = true, g->beta = beta;
      g->ldc = g->n, g->stride_c = g->m * g->n;
      l.gbase[GEMM_C] = d.base, l.goff[GEMM_C] = 0;
    }
  }
  /* The alignment each pointer will have: a base is 256-byte aligned (a
   * temporary at a 256-byte offset of the scratch, a buffer from
   * cuMemAlloc), and the view's offset may take that lower. */
  for (int k = 0; k < GEMM_OPERANDS; k++) {
    uint64_t off = l.gbase[k] < 0 ? 0 : (uint64_t)l.goff[k] * alloy_dtype_size(g->dtype);
    unsigned align = 256;
    while (off % align) align /= 2;
    g->align[k] = align;
  }
  /* traces name a product by its shape: "mm 4096x1024x1024", "bmm 128x512x512x64" */
  if (g->batch > 1)
    snprintf(l.what, sizeof l.what, "%.12s %" PRId64 "x%" PRId64 "x%" PRId64 "x%" PRId64 "%s", b->what, g->batch,
             g->m, g->n, g->k, g->trans_b ? "t" : "");
  else
    snprintf(l.what, sizeof l.what, "%.12s %" PRId64 "x%" PRId64 "x%" PRId64 "%s", b->what, g->m, g->n, g->k,
             g->trans_b ? "t" : "");
  if (b->portable_gemm) /* the same product as Alloy's own kernel (cuda_codegen_gemm.c) */
    return cg_gemm_kernel(b, n, &l);
  cuda_launch *slot = cg_add_launch(b);
  if (!slot) return;
  *slot = l;
}

/* ---- layer norm, embedding, cat -------------------------------------------------*/


/* native_layer_norm(x, normalized_shape, w?, b?, eps) -> (y, mean, rstd):
 * a block per row of the normalized dims; mean, then the variance of the
 * centered values (two passes, in acc_type), rstd = rsqrt(var + eps), then
 * y = (x - mean) * rstd * w + b, as PyTorch's CUDA kernel. */
void cg_emit_layer_norm(builder *b, const alloy_node *n, const cuda_op *op) {
  (void)op;
  const alloy_host_api *h = b->host;
  const alloy_arg *wa = cg_arg_named(h, n, "weight"), *ba = cg_arg_named(h, n, "bias");
  const alloy_value *xv = h->arg_value(h->node_arg(n, 0));
  const alloy_value *wv = wa && h->arg_type(wa) == ALLOY_ARG_TYPE_VALUE ? h->arg_value(wa) : NULL;
  const alloy_value *bv = ba && h->arg_type(ba) == ALLOY_ARG_TYPE_VALUE ? h->arg_value(ba) : NULL;
  cuda_tensor xt, wt, bt;
  if (!cg_in_memory(b, n, xv, &xt) || (wv && !cg_in_memory(b, n, wv, &wt)) || (bv && !cg_in_memory(b, n, bv, &bt)))
    return;
  const cuda_tensor *xp = &xt, *wp = wv ? &wt : NULL, *bp = bv ? &bt : NULL;
  const alloy_arg *ns = cg_arg_named(h, n, "normalized_shape");
  int nd = ns ? h->arg_list_size(ns) : 0;
  cuda_tensor x = *xp;
  if (nd < 1 || nd > x.rank) return (void)cg_fail(b, n, "normalized_shape of %d dims", nd);
  int ty = cg_materialize(b, h->node_output(n, 0)), tm = cg_materialize(b, h->node_output(n, 1)),
      tr = cg_materialize(b, h->node_output(n, 2));
  if (ty < 0 || tm < 0 || tr < 0) return;
  cuda_tensor y = b->tensors[ty], mean = b->tensors[tm], rstd = b->tensors[tr];
  int outer[CUDA_MAX_RANK], inner[CUDA_MAX_RANK], no = x.rank - nd;
  int64_t rows = 1, cols = 1;
  for (int d = 0; d < x.rank; d++) {
    if (d < no) outer[d] = d, rows *= x.sizes[d];
    else inner[d - no] = d, cols *= x.sizes[d];
  }
  const char *acc = x.dtype == ALLOY_F64 ? "double" : "float";
  double eps = cg_float_arg(h, n, "eps", 1e-5);
  kernel k;
  cg_kernel_begin(&k, &rows, 1);
  int px = cg_kernel_param(&k, x.base), py = cg_kernel_param(&k, y.base), pm = cg_kernel_param(&k, mean.base),
      pr = cg_kernel_param(&k, rstd.base), pw = wp ? cg_kernel_param(&k, wp->base) : -1,
      pb = bp ? cg_kernel_param(&k, bp->base) : -1;
  char xo[512], yo[512], io[512], yi[512], wi[512], bi[512];
  cg_put(&k.body, "    __shared__ %s sh[32];\n    {\n", acc);
  dims_offset(&k.body, &x, outer, no, "i", "o", xo, sizeof xo);
  dims_offset(&k.body, &y, outer, no, "i", "q", yo, sizeof yo);
  cg_put(&k.body, "      const i64 xb = %" PRId64 " + %s, yb = %" PRId64 " + %s;\n", x.offset, xo, y.offset, yo);
  text loop = {0};
  cg_put(&loop, "      for (i64 j = threadIdx.x; j < %" PRId64 "; j += blockDim.x) {\n", cols);
  dims_offset(&loop, &x, inner, nd, "j", "r", io, sizeof io);
  cg_put(&loop, "      %s x = (%s)ld_%s(p%d, xb + %s);\n", acc, acc, cg_dtype_tag(x.dtype), px, io);
  const char *lp = loop.s ? loop.s : "";
  cg_put(&k.body, "      %s s = 0;\n%s        s += x;\n      }\n", acc, lp);
  cg_put(&k.body, "      const %s mu = block_reduce(s, SumOp(), sh, (%s)0) / (%s)%" PRId64 ";\n", acc, acc, acc, cols);
  cg_put(&k.body, "      %s v = 0;\n%s        v += (x - mu) * (x - mu);\n      }\n", acc, lp);
  cg_put(&k.body, "      const %s rs = rsqrt(block_reduce(v, SumOp(), sh, (%s)0) / (%s)%" PRId64 " + (%s)%.17g);\n",
      acc, acc, acc, cols, acc, eps);
  text wr = {0};
  cg_put(&wr, "%s", lp);
  dims_offset(&wr, &y, inner, nd, "j", "w", yi, sizeof yi);
  cg_put(&wr, "        %s r = (x - mu) * rs;\n", acc);
  /* w and b span the normalized dims: index j over their own strides */
  int wdims[CUDA_MAX_RANK];
  for (int d = 0; d < nd; d++) wdims[d] = d;
  if (wp) {
    dims_offset(&wr, wp, wdims, nd, "j", "u", wi, sizeof wi);
    cg_put(&wr, "        r = r * (%s)ld_%s(p%d, %" PRId64 " + %s);\n", acc, cg_dtype_tag(wp->dtype), pw, wp->offset, wi);
  }
  if (bp) {
    dims_offset(&wr, bp, wdims, nd, "j", "c", bi, sizeof bi);
    cg_put(&wr, "        r = r + (%s)ld_%s(p%d, %" PRId64 " + %s);\n", acc, cg_dtype_tag(bp->dtype), pb, bp->offset, bi);
  }
  cg_put(&k.body, "%s        st_%s(p%d, yb + %s, (%s)r);\n      }\n", wr.s ? wr.s : "", cg_dtype_tag(y.dtype), py, yi,
      cg_reg_type(y.dtype));
  cg_put(&k.body, "      if (threadIdx.x == 0) { st_%s(p%d, %" PRId64 " + i, (%s)mu); st_%s(p%d, %" PRId64
               " + i, (%s)rs); }\n    }\n",
      cg_dtype_tag(mean.dtype), pm, mean.offset, cg_reg_type(mean.dtype), cg_dtype_tag(rstd.dtype), pr, rstd.offset,
      cg_reg_type(rstd.dtype));
  free(wr.s);
  free(loop.s);
  k.rows = true;
  cg_kernel_finish(b, &k);
}

/* embedding(weight, indices): out[..., j] = weight[indices[...], j]; an
 * index out of range gives NaN (PyTorch's CUDA kernel asserts) rather
 * than a read outside the table. */
void cg_emit_embedding(builder *b, const alloy_node *n, const cuda_op *op) {
  (void)op;
  const alloy_host_api *h = b->host;
  cuda_tensor wt, it;
  if (!cg_in_memory(b, n, h->arg_value(h->node_arg(n, 0)), &wt) ||
      !cg_in_memory(b, n, h->arg_value(h->node_arg(n, 1)), &it))
    return;
  const cuda_tensor *wp = &wt, *ip = &it;
  if (wp->rank != 2) return (void)cg_fail(b, n, "a weight of rank %d", wp->rank);
  int to = cg_materialize(b, h->node_output(n, 0));
  if (to < 0) return;
  cuda_tensor y = b->tensors[to], idx = *ip;
  /* the indices as an operand of the output's shape: a trailing dim of
   * stride 0 */
  idx.rank = y.rank;
  idx.sizes[y.rank - 1] = y.sizes[y.rank - 1];
  idx.strides[y.rank - 1] = 0;
  kernel k;
  cg_kernel_begin(&k, y.sizes, y.rank);
  k.index_split = false;
  char io[512];
  /* force the per-dim indices: the table's column is the last one */
  cuda_tensor probe = y;
  probe.strides[y.rank - 1] = 0;
  cg_offset_text(&k, &probe, io, sizeof io);
  cg_offset_text(&k, &idx, io, sizeof io);
  int pi = cg_kernel_param(&k, idx.base), pw = cg_kernel_param(&k, wp->base);
  int v = k.nvars++;
  const char *rt = cg_reg_type(y.dtype);
  cg_put(&k.body, "    i64 row = (i64)ld_%s(p%d, %s);\n", cg_dtype_tag(idx.dtype), pi, io);
  cg_put(&k.body, "    %s v%d = row >= 0 && row < %" PRId64 " ? (%s)ld_%s(p%d, %" PRId64 " + row * %" PRId64
               " + i%d * %" PRId64 ") : (%s)__longlong_as_double(0x7ff8000000000000LL);\n",
      rt, v, wp->sizes[0], rt, cg_dtype_tag(wp->dtype), pw, wp->offset, wp->strides[0], y.rank - 1, wp->strides[1], rt);
  cg_kernel_store(&k, &y, v);
  cg_kernel_finish(b, &k);
}

/* index.Tensor(x, [None.., i0, i1, .., None..]): out[pre, j.., post] =
 * x[pre, i0[j..], i1[j..], .., post], the index tensors broadcast together
 * to the middle dims j..; a negative index counts from the end, and one
 * out of range gives NaN, as embedding. */
void cg_emit_index(builder *b, const alloy_node *n, const cuda_op *op) {
  (void)op;
  const alloy_host_api *h = b->host;
  int count = 0, p = cg_index_position(h, n, &count);
  const alloy_arg *list = h->node_arg(n, 1);
  if (p < 0 || count > 8) return (void)cg_fail(b, n, "index.Tensor of this pattern");
  cuda_tensor xt, idx[8];
  if (!cg_in_memory(b, n, h->arg_value(h->node_arg(n, 0)), &xt)) return;
  const cuda_tensor *xp = &xt;
  for (int j = 0; j < count; j++)
    if (!cg_in_memory(b, n, h->arg_value(h->arg_list_item(list, p + j)), &idx[j])) return;
  int to = cg_materialize(b, h->node_output(n, 0));
  if (to < 0) return;
  cuda_tensor y = b->tensors[to], x = *xp;
  int post = x.rank - p - count, rb = y.rank - p - post;
  if (rb < 0 || post < 0) return (void)cg_fail(b, n, "an output of rank %d", y.rank);
  kernel k;
  cg_kernel_begin(&k, y.sizes, y.rank);
  char io[512];
  cuda_tensor probe = y;
  if (y.rank) probe.strides[0] = 0;
  cg_offset_text(&k, &probe, io, sizeof io); /* declares the per-dim indices */
  text off = {0}, ok = {0};
  cg_put(&off, "%" PRId64, x.offset);
  for (int j = 0; j < count; j++) {
    /* index tensor j as an operand of the output's shape: its dims right
     * aligned within the middle ones (size 1 broadcasting), stride 0 elsewhere */
    cuda_tensor iv = y;
    iv.base = idx[j].base, iv.dtype = idx[j].dtype, iv.offset = idx[j].offset;
    for (int d = 0; d < y.rank; d++) {
      int di = d - p - (rb - idx[j].rank);
      iv.strides[d] = d >= p && d < p + rb && di >= 0 && idx[j].sizes[di] != 1 ? idx[j].strides[di] : 0;
    }
    cg_offset_text(&k, &iv, io, sizeof io);
    int pi = cg_kernel_param(&k, iv.base);
    const int64_t size = x.sizes[p + j];
    cg_put(&k.body, "    i64 at%d = (i64)ld_%s(p%d, %s);\n    if (at%d < 0) at%d += %" PRId64 ";\n", j,
           cg_dtype_tag(iv.dtype), pi, io, j, j, size);
    cg_put(&off, " + at%d * %" PRId64, j, x.strides[p + j]);
    cg_put(&ok, "%sat%d >= 0 && at%d < %" PRId64, j ? " && " : "", j, j, size);
  }
  int px = cg_kernel_param(&k, x.base);
  for (int d = 0; d < p; d++) cg_put(&off, " + i%d * %" PRId64, d, x.strides[d]);
  for (int d = 0; d < post; d++) cg_put(&off, " + i%d * %" PRId64, p + rb + d, x.strides[p + count + d]);
  const char *rt = cg_reg_type(y.dtype);
  int v = k.nvars++;
  cg_put(&k.body, "    %s v%d = %s ? (%s)ld_%s(p%d, %s) : (%s)__longlong_as_double(0x7ff8000000000000LL);\n", rt, v,
         ok.s ? ok.s : "true", rt, cg_dtype_tag(x.dtype), px, off.s ? off.s : "0", rt);
  free(off.s);
  free(ok.s);
  cg_kernel_store(&k, &y, v);
  cg_kernel_finish(b, &k);
}

/* cumsum(x, dim, dtype): a thread per row along dim, summing in order in
 * acc_type (PyTorch's CUDA scan sums in a tree; within the tolerance). */
void cg_emit_scan(builder *b, const alloy_node *n, const cuda_op *op) {
  (void)op;
  const alloy_host_api *h = b->host;
  cuda_tensor x;
  if (!cg_in_memory(b, n, h->arg_value(h->node_arg(n, 0)), &x)) return;
  int to = cg_materialize(b, h->node_output(n, 0));
  if (to < 0) return;
  cuda_tensor y = b->tensors[to];
  int dim = cg_wrap_dim(cg_int_arg(h, n, "dim", 0), x.rank);
  int64_t len = x.rank ? x.sizes[dim] : 1, xs = x.rank ? x.strides[dim] : 0, ys = y.rank ? y.strides[dim] : 0;
  /* iterate the other dims: the tensors with dim of size 1 */
  cuda_tensor xr = x, yr = y;
  if (x.rank) xr.sizes[dim] = 1, yr.sizes[dim] = 1;
  kernel k;
  cg_kernel_begin(&k, yr.sizes, yr.rank);
  char xo[512], yo[512];
  cuda_tensor probe = yr;
  if (yr.rank) probe.strides[0] = 0;
  cg_offset_text(&k, &probe, xo, sizeof xo);
  cg_offset_text(&k, &xr, xo, sizeof xo);
  cg_offset_text(&k, &yr, yo, sizeof yo);
  int px = cg_kernel_param(&k, x.base), py = cg_kernel_param(&k, y.base);
  alloy_dtype yt = y.dtype;
  const char *acc = yt == ALLOY_F64 ? "double" : alloy_dtype_is_float(yt) ? "float" : "i64";
  cg_put(&k.body, "    %s a = 0;\n    for (i64 j = 0; j < %" PRId64 "; j++) {\n", acc, len);
  cg_put(&k.body, "      a = op_add(a, (%s)ld_%s(p%d, %s + j * %" PRId64 "));\n", acc, cg_dtype_tag(x.dtype), px, xo, xs);
  cg_put(&k.body, "      st_%s(p%d, %s + j * %" PRId64 ", (%s)a);\n    }\n", cg_dtype_tag(yt), py, yo, ys, cg_reg_type(yt));
  cg_kernel_finish(b, &k);
}

/* cat(tensors, dim): each non-empty input copied into its slice of the
 * output along dim. */
void cg_emit_cat(builder *b, const alloy_node *n, const cuda_op *op) {
  (void)op;
  const alloy_host_api *h = b->host;
  const alloy_value *in[64];
  int nin = cg_tensor_operands(h, n, in, 64);
  int to = cg_materialize(b, h->node_output(n, 0));
  if (to < 0) return;
  cuda_tensor y = b->tensors[to];
  int dim = cg_wrap_dim(cg_int_arg(h, n, "dim", 0), y.rank);
  int64_t at = 0;
  for (int j = 0; j < nin && j < 64 && !b->err; j++) {
    cuda_tensor xt;
    if (!cg_in_memory(b, n, in[j], &xt)) return;
    const cuda_tensor *xp = &xt;
    if (xp->rank == 1 && xp->sizes[0] == 0 && y.rank != 1) continue; /* a legacy empty tensor */
    cuda_tensor slice = y;
    slice.offset = y.offset + at * y.strides[dim];
    slice.sizes[dim] = xp->sizes[dim];
    at += xp->sizes[dim];
    if (cg_numel_of(slice.sizes, slice.rank) > 0) cg_emit_copy(b, xp, &slice);
  }
}
