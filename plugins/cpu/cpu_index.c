/*
 * plugins/cpu/cpu_index.c: the steps that move elements by index: the
 * gathers (embedding, index.Tensor with index tensors at consecutive dims,
 * gather), cat and
 * cumsum.
 *
 * A gather is pointwise work over its output's shape, so it joins the
 * open group of that shape like any pointwise node (cpu_plan.c): each
 * element loads its index, then the source element at the index's offset
 * added to a slot whose strides cover the other dims. An index out of
 * range (PyTorch raises an error) reads nothing and gives NaN, or 0 for
 * integers; negative indices count from the end where PyTorch allows them
 * (index.Tensor, gather), not for embedding.
 *
 * cat writes each input into its slice of the output from the group of
 * that slice's shape: a value still in a group's registers is stored
 * there directly, and inputs of one shape (rotary embedding's two halves)
 * share one loop. cumsum is a row kernel: a sequential running sum along
 * its dim, in the reference's accumulator (double for float32 and
 * float64, float for the 16-bit floats, int64 wrapping for integers).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plugins/cpu/cpu_plan.h"

/* The plan tensor (a new geometry) of value v in memory, as an operand
 * over the group's dims: `map[d]` is the dim of v at group dim d, or -1
 * (stride 0). */
static int geometry(builder *b, const alloy_node *n, const alloy_value *v, const int64_t *sizes, int rank,
                    const int *map) {
  int t = cp_in_memory(b, n, v);
  if (t < 0) return -1;
  cpu_tensor g = b->tensors[t];
  const cpu_tensor src = g;
  g.rank = rank;
  for (int d = 0; d < rank; d++) {
    g.sizes[d] = sizes[d];
    g.strides[d] = map[d] < 0 || src.sizes[map[d]] == 1 ? 0 : src.strides[map[d]];
  }
  return cp_add_tensor(b, &g);
}

/* The element of source slot `src` at the group's element, with each
 * index idx[t] (an integer register) times stride[t] added; an index out
 * of [0, size[t]) (after adding size[t] to a negative one when wrap)
 * gives NaN or 0. */
static irv gather_load(builder *b, group *gr, int src, const irv *idx, const int64_t *stride, const int64_t *size,
                       int nidx, bool wrap) {
  kern *k = &gr->k;
  text *t = &k->body;
  const cpu_tensor *x = &b->tensors[src];
  int s = cp_kernel_slot(b, k, x, -1);
  if (s < 0) return ir_const_i(0, ALLOY_I64);
  char off[24], ok[24];
  snprintf(off, sizeof off, "%%e.%d", s);
  snprintf(ok, sizeof ok, "true");
  for (int j = 0; j < nidx; j++) {
    irv i = ir_cast(k, t, idx[j], ALLOY_I64);
    if (wrap) {
      int neg = ir_ins(k, t, "icmp slt i64 %s, 0", i.s);
      int add = ir_ins(k, t, "add i64 %s, %" PRId64, i.s, size[j]);
      snprintf(i.s, sizeof i.s, "%%r%d", ir_ins(k, t, "select i1 %%r%d, i64 %%r%d, i64 %s", neg, add, i.s));
    }
    int in = ir_ins(k, t, "icmp ult i64 %s, %" PRId64, i.s, size[j]);
    snprintf(ok, sizeof ok, "%%r%d", ir_ins(k, t, "and i1 %s, %%r%d", ok, in));
    int safe = ir_ins(k, t, "select i1 %%r%d, i64 %s, i64 0", in, i.s);
    int m = ir_ins(k, t, "mul i64 %%r%d, %" PRId64, safe, stride[j]);
    snprintf(off, sizeof off, "%%r%d", ir_ins(k, t, "add i64 %s, %%r%d", off, m));
  }
  char ptr[24];
  ir_elem_ptr(k, t, s, off, ptr, sizeof ptr);
  irv v = ir_load(k, t, ptr, x->dtype);
  irv bad = alloy_dtype_is_float(x->dtype) ? ir_const_f(NAN, v.t) : ir_const_i(0, v.t);
  irv r = {.t = v.t};
  snprintf(r.s, sizeof r.s, "%%r%d", ir_ins(k, t, "select i1 %s, %s %s, %s %s", ok, ir_type(v.t), v.s, ir_type(v.t), bad.s));
  return r;
}

/* The index's register in group gr: its register there, or a load of the
 * geometry idx_t. */
static irv index_value(builder *b, group *gr, const alloy_value *iv, int idx_t) {
  vinfo *vi = cp_val(b, iv);
  (void)vi;
  return cp_group_load(b, gr, idx_t);
}

static bool out_sizes(builder *b, const alloy_node *n, int64_t *sizes, int *rank) {
  const alloy_host_api *h = b->host;
  const alloy_value *o = h->node_output(n, 0);
  *rank = h->value_rank(o);
  for (int d = 0; d < *rank; d++)
    if (!h->value_size(o, d, &sizes[d])) {
      cp_fail(b, n, "symbolic sizes reach compile");
      return false;
    }
  return true;
}

static void define(builder *b, group *gr, const alloy_node *n, irv v) {
  const alloy_host_api *h = b->host;
  const alloy_value *o = h->node_output(n, 0);
  kern *k = &gr->k;
  v = ir_cast(k, &k->body, v, h->value_dtype(o));
  v = ir_round(k, &k->body, v, h->value_dtype(o));
  cp_group_define(b, gr, o, v, h->node_op_name(n));
}

/* embedding(weight, indices): out[..., j] = weight[indices[...], j]. */
void cp_emit_embedding(builder *b, const alloy_node *n, const cpu_op *op) {
  (void)op;
  const alloy_host_api *h = b->host;
  const alloy_value *wv = h->arg_value(h->node_arg(n, 0)), *iv = h->arg_value(h->node_arg(n, 1));
  int64_t sizes[CPU_MAX_RANK];
  int rank;
  if (!out_sizes(b, n, sizes, &rank)) return;
  if (h->value_rank(wv) != 2 || rank < 1) return (void)cp_fail(b, n, "a weight of rank %d", h->value_rank(wv));
  int wmap[CPU_MAX_RANK], imap[CPU_MAX_RANK];
  for (int d = 0; d < rank; d++) wmap[d] = d == rank - 1 ? 1 : -1, imap[d] = d < rank - 1 ? d : -1;
  int wt = geometry(b, n, wv, sizes, rank, wmap), it = wt < 0 ? -1 : geometry(b, n, iv, sizes, rank, imap);
  if (it < 0) return;
  int tw = cp_in_memory(b, n, wv);
  int64_t rows = b->tensors[tw].sizes[0], stride = b->tensors[tw].strides[0];
  group *gr = cp_join_group(b, n, h->node_output(n, 0), true);
  if (!gr) return;
  b->node_group[h->node_index(b->g, n)] = cp_group_index(b, gr);
  irv ix = index_value(b, gr, iv, it);
  define(b, gr, n, gather_load(b, gr, wt, &ix, &stride, &rows, 1, false));
}

/* index.Tensor(x, [None.., i0, i1.., None..]) with integer index tensors
 * at consecutive dims from p, broadcast together to shape B:
 * out[pre, j.., post] = x[pre, i0[j..], i1[j..].., post]. */
void cp_emit_index(builder *b, const alloy_node *n, const cpu_op *op) {
  (void)op;
  const alloy_host_api *h = b->host;
  int p = cpu_index_position(h, n);
  const alloy_arg *list = h->node_arg(n, 1);
  const alloy_value *xv = h->arg_value(h->node_arg(n, 0)), *iv[CPU_MAX_RANK];
  int ni = 0;
  for (int k = p; k < h->arg_list_size(list) && ni < CPU_MAX_RANK; k++) {
    const alloy_arg *a = h->arg_list_item(list, k);
    if (h->arg_type(a) != ALLOY_ARG_TYPE_VALUE) break;
    iv[ni++] = h->arg_value(a);
  }
  int64_t sizes[CPU_MAX_RANK];
  int rank;
  if (!out_sizes(b, n, sizes, &rank)) return;
  int xr = h->value_rank(xv), post = xr - p - ni, br = rank - p - post;
  if (br < 0 || post < 0) return (void)cp_fail(b, n, "an output of rank %d", rank);
  int xmap[CPU_MAX_RANK], imap[CPU_MAX_RANK][CPU_MAX_RANK], it[CPU_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    bool in_idx = d >= p && d < p + br;
    xmap[d] = d < p ? d : in_idx ? -1 : d - br + ni;
    for (int j = 0; j < ni; j++) {
      int lead = br - h->value_rank(iv[j]);
      imap[j][d] = in_idx && d - p - lead >= 0 ? d - p - lead : -1;
    }
  }
  int xt = geometry(b, n, xv, sizes, rank, xmap);
  for (int j = 0; j < ni && xt >= 0; j++)
    if ((it[j] = geometry(b, n, iv[j], sizes, rank, imap[j])) < 0) return;
  if (xt < 0) return;
  int tx = cp_in_memory(b, n, xv);
  int64_t size[CPU_MAX_RANK], stride[CPU_MAX_RANK];
  for (int j = 0; j < ni; j++) size[j] = b->tensors[tx].sizes[p + j], stride[j] = b->tensors[tx].strides[p + j];
  group *gr = cp_join_group(b, n, h->node_output(n, 0), true);
  if (!gr) return;
  b->node_group[h->node_index(b->g, n)] = cp_group_index(b, gr);
  irv ix[CPU_MAX_RANK];
  for (int j = 0; j < ni; j++) ix[j] = index_value(b, gr, iv[j], it[j]);
  define(b, gr, n, gather_load(b, gr, xt, ix, stride, size, ni, true));
}

/* gather(x, dim, index): out[i..] = x[i.. with dim at index[i..]]. */
void cp_emit_gather(builder *b, const alloy_node *n, const cpu_op *op) {
  (void)op;
  const alloy_host_api *h = b->host;
  const alloy_value *xv = h->arg_value(h->node_arg(n, 0)), *iv = h->arg_value(cp_arg_named(h, n, "index"));
  int64_t sizes[CPU_MAX_RANK];
  int rank;
  if (!out_sizes(b, n, sizes, &rank)) return;
  int xr = h->value_rank(xv);
  if (xr != rank) return (void)cp_fail(b, n, "an index of rank %d for a tensor of rank %d", rank, xr);
  int dim = cp_wrap_dim(cp_int_arg(h, n, "dim", 0), xr);
  int xmap[CPU_MAX_RANK], imap[CPU_MAX_RANK];
  for (int d = 0; d < rank; d++) xmap[d] = d == dim ? -1 : d, imap[d] = d;
  int xt = geometry(b, n, xv, sizes, rank, xmap), it = xt < 0 ? -1 : geometry(b, n, iv, sizes, rank, imap);
  if (it < 0) return;
  int tx = cp_in_memory(b, n, xv);
  int64_t size = xr ? b->tensors[tx].sizes[dim] : 1, stride = xr ? b->tensors[tx].strides[dim] : 0;
  group *gr = cp_join_group(b, n, h->node_output(n, 0), true);
  if (!gr) return;
  b->node_group[h->node_index(b->g, n)] = cp_group_index(b, gr);
  irv ix = index_value(b, gr, iv, it);
  define(b, gr, n, gather_load(b, gr, xt, &ix, &stride, &size, 1, true));
}

/* cat(tensors, dim): each input written into its slice of the output by
 * the group of the slice's shape. */
void cp_emit_cat(builder *b, const alloy_node *n, const cpu_op *op) {
  (void)op;
  const alloy_host_api *h = b->host;
  const alloy_value *in[CPU_MAX_OPERANDS], *ov = h->node_output(n, 0);
  int nin = cp_tensor_operands(h, n, in, CPU_MAX_OPERANDS);
  int to = cp_materialize(b, ov);
  if (to < 0) return;
  const cpu_tensor y = b->tensors[to];
  int dim = cp_wrap_dim(cp_int_arg(h, n, "dim", 0), y.rank);
  int64_t at = 0;
  for (int j = 0; j < nin && j < CPU_MAX_OPERANDS && !b->err; j++) {
    int xr = h->value_rank(in[j]);
    int64_t len = 0;
    if (xr == 1 && h->value_size(in[j], 0, &len) && len == 0 && y.rank != 1) continue; /* a legacy empty tensor */
    if (xr != y.rank || !h->value_size(in[j], dim, &len)) return (void)cp_fail(b, n, "an input of rank %d", xr);
    cpu_tensor slice = y;
    slice.offset = y.offset + at * y.strides[dim];
    slice.sizes[dim] = len;
    at += len;
    if (cp_numel_of(slice.sizes, slice.rank) == 0) continue;
    vinfo *vi = cp_val(b, in[j]);
    group *gr = cp_group_for(b, slice.sizes, slice.rank);
    int gid = cp_group_index(b, gr);
    if (vi->group != gid) {
      /* in memory first: that may close this very group (a tensor it
       * still writes), so ask for the group again after */
      if (cp_in_memory(b, n, in[j]) < 0) return;
      gr = cp_group_for(b, slice.sizes, slice.rank);
      gid = cp_group_index(b, gr);
    }
    int pend = b->pending[y.base];
    if (pend >= 0 && pend != gid) { /* another group writes other slices: it goes first */
      for (int s = 0; s < CPU_MAX_GROUPS; s++)
        if (b->groups[s].open && b->gid[s] == pend) cp_close_group(b, s);
      gr = cp_group_for(b, slice.sizes, slice.rank);
      gid = cp_group_index(b, gr);
    }
    irv v = vi->group == gid ? vi->reg : cp_group_load(b, gr, vi->tensor);
    int st = cp_add_tensor(b, &slice);
    int s = st < 0 ? -1 : cp_kernel_slot(b, &gr->k, &b->tensors[st], st);
    if (s < 0) return;
    char ptr[16];
    snprintf(ptr, sizeof ptr, "%%a.%d", s);
    ir_store(&gr->k, &gr->k.body, ptr, v, y.dtype);
    cp_note(&gr->k, "cat");
    b->pending[y.base] = gid;
  }
}

/* cumsum(x, dim, dtype?): a row per position of the other dims, summing
 * along dim in order. */
void cp_emit_cumsum(builder *b, const alloy_node *n, const cpu_op *op) {
  (void)op;
  const alloy_host_api *h = b->host;
  int xi = cp_in_memory(b, n, h->arg_value(h->node_arg(n, 0)));
  int yi = xi < 0 ? -1 : cp_materialize(b, h->node_output(n, 0));
  if (yi < 0) return;
  const cpu_tensor x = b->tensors[xi], y = b->tensors[yi];
  int dim = cp_wrap_dim(cp_int_arg(h, n, "dim", 0), x.rank);
  cpu_tensor xk = x, yk = y;
  int64_t len = x.rank ? x.sizes[dim] : 1, xs = x.rank ? x.strides[dim] : 0, ys = y.rank ? y.strides[dim] : 0;
  if (x.rank) xk.sizes[dim] = yk.sizes[dim] = 1;
  if (cp_numel_of(xk.sizes, xk.rank) == 0 || len == 0) return;
  kern k;
  cp_kernel_begin(&k, xk.sizes, xk.rank, "cumsum");
  int sx = cp_kernel_slot(b, &k, &xk, -1), sy = cp_kernel_slot(b, &k, &yk, -1);
  if (sx < 0 || sy < 0) return;
  alloy_dtype yt = y.dtype;
  alloy_dtype acc = yt == ALLOY_F32 || yt == ALLOY_F64 ? ALLOY_F64 : alloy_dtype_is_float(yt) ? ALLOY_F32 : ALLOY_I64;
  k.acc[0] = acc, k.nacc = 1;
  ir_kernel_open(&k, xk.rank);
  text *f = &k.fn;
  ir_put(f, "  store %s %s, %s* %%acc0, align 8\n", ir_type(acc), ir_const_i(0, acc).s, ir_type(acc));
  ir_loop l;
  char trip[24];
  snprintf(trip, sizeof trip, "%" PRId64, len);
  ir_loop_begin(&k, &l, trip);
  char xo[24], yo[24], xp[24], yp[24];
  snprintf(xo, sizeof xo, "%%r%d", ir_ins(&k, f, "mul i64 %s, %" PRId64, l.iv, xs));
  snprintf(xo, sizeof xo, "%%r%d", ir_ins(&k, f, "add i64 %%ro.%d, %s", sx, xo));
  snprintf(yo, sizeof yo, "%%r%d", ir_ins(&k, f, "mul i64 %s, %" PRId64, l.iv, ys));
  snprintf(yo, sizeof yo, "%%r%d", ir_ins(&k, f, "add i64 %%ro.%d, %s", sy, yo));
  ir_elem_ptr(&k, f, sx, xo, xp, sizeof xp);
  ir_elem_ptr(&k, f, sy, yo, yp, sizeof yp);
  irv v = ir_cast(&k, f, ir_load(&k, f, xp, x.dtype), acc);
  irv a = {.t = acc};
  snprintf(a.s, sizeof a.s, "%%r%d", ir_ins(&k, f, "load %s, %s* %%acc0, align 8", ir_type(acc), ir_type(acc)));
  irv args[2] = {a, v}, sum;
  ir_prim(&k, f, "add", args, 2, acc, &sum);
  ir_put(f, "  store %s %s, %s* %%acc0, align 8\n", ir_type(acc), sum.s, ir_type(acc));
  ir_store(&k, f, yp, sum, yt);
  ir_loop_end(&k, &l, trip);
  ir_kernel_close(&k);
  k.row_work = 2 * len;
  cp_kernel_finish(b, &k);
}
