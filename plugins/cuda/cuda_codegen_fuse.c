/*
 * plugins/cuda/cuda_codegen_fuse.c: row groups, a reduction fused with the
 * pointwise work around it, the way Inductor writes a persistent
 * reduction. A row group is one kernel with a block per row of the
 * reduced shape: loops over the row's elements (a thread every 256) run
 * the pointwise nodes of the full shape, a reduction accumulates inside a
 * loop and then across the block (block_reduce), and nodes of the kept
 * shape (the reduced dims 1) run once a row between the loops, in
 * registers every later loop reads. RMS norm (pow, mean, add, rsqrt, mul,
 * mul) or a decomposed softmax (amax, sub, exp, sum, div) becomes one
 * kernel that reads its input once or twice (the second time from cache)
 * and writes its output once, where each node's kernel wrote and read a
 * temporary of the full shape.
 *
 * A value computed inside one loop is a register of that loop only: a
 * later loop reads it back where it was stored (the same thread wrote the
 * same element, so no barrier is needed), else computes it again from its
 * operands (cg_operand_var in cuda_codegen.c). cuda_plan_build decides
 * the groups; this file writes their loops and reductions.
 *
 * It holds too the order the plan visits the nodes in (cg_node_order) and
 * cat inside a group (cg_fuse_cat), with the pointwise work before a cat
 * that the cat computes itself (cg_into_cat).
 *
 * The sums add in the same order as the lone reduction kernel
 * (cg_emit_reduce: a thread's strided partial, then block_reduce), so a
 * fused and an unfused plan give the same bits.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/cuda/cuda_codegen.h"

/* Rows shorter than this stay in their own kernels: a block of 256
 * threads a row would idle most of them, where a pointwise kernel does
 * not. */
enum { ROW_MIN_COLS = 64 };

static bool float_dtype(alloy_dtype t) {
  return t == ALLOY_F16 || t == ALLOY_BF16 || t == ALLOY_F32 || t == ALLOY_F64;
}

bool cg_row_reduction(builder *b, const alloy_node *n, const cuda_op *op, int *nred) {
  const alloy_host_api *h = b->host;
  if (op->emit != cg_emit_reduce) return false;
  if (op->reduce != RED_SUM && op->reduce != RED_MEAN && op->reduce != RED_MAX && op->reduce != RED_MIN)
    return false;
  const alloy_value *in[1];
  if (cg_tensor_operands(h, n, in, 1) != 1 || h->node_num_outputs(n) != 1) return false;
  const alloy_value *out = h->node_output(n, 0);
  int r = h->value_rank(in[0]);
  if (r < 1 || r > CUDA_MAX_RANK || h->value_rank(out) != r) return false; /* kept dims only */
  if (!float_dtype(h->value_dtype(in[0])) || !float_dtype(h->value_dtype(out))) return false;
  bool mask[CUDA_MAX_RANK];
  cg_reduced_dims(b, n, op, r, mask);
  int d0 = r;
  while (d0 > 0 && mask[d0 - 1]) d0--;
  for (int d = 0; d < d0; d++)
    if (mask[d]) return false; /* not the trailing dims */
  int64_t cols = 1, s;
  for (int d = 0; d < r; d++) {
    if (!h->value_size(in[0], d, &s)) return false;
    if (d >= d0) cols *= s;
  }
  *nred = r - d0;
  return *nred > 0 && cols >= ROW_MIN_COLS;
}

void cg_row_begin(kernel *k, const int64_t *full, int rank, int nred) {
  k->row_group = k->rows = true;
  k->cols = 1;
  for (int d = 0; d < rank; d++) {
    k->full[d] = full[d];
    k->kept[d] = d < rank - nred ? full[d] : 1;
    if (d >= rank - nred) k->cols *= full[d];
  }
  memcpy(k->sizes, k->kept, sizeof *k->sizes * (size_t)rank);
  k->rank = rank;
  cg_put(&k->body, "    const IDX_T row = i;\n");
}

void cg_row_loop(kernel *k) {
  if (k->in_loop) return;
  k->loop_at = k->body.len;
  /* blocks of 256 (the launch's, cuda_backend.c): a constant trip count */
  cg_put(&k->body, "    for (IDX_T j = threadIdx.x; j < %" PRId64 "; j += 256) {\n", k->cols);
  cg_put(&k->body, "    const IDX_T i = row * %" PRId64 " + j;\n", k->cols);
  k->in_loop = true;
  k->phase++;
  k->row_split = k->index_split, k->index_split = false;
  k->load_floor = k->nloaded;
  memcpy(k->sizes, k->full, sizeof *k->sizes * (size_t)k->rank);
}

void cg_row_close(kernel *k) {
  if (!k->in_loop) return;
  cg_put(&k->body, "    }\n");
  k->in_loop = false;
  k->phase++;
  k->index_split = k->row_split;
  k->nloaded = k->load_floor, k->load_floor = 0;
  memcpy(k->sizes, k->kept, sizeof *k->sizes * (size_t)k->rank);
}

/* Puts line (with its newline) into t at byte at. */
static void text_insert(text *t, size_t at, const char *line) {
  size_t n = strlen(line), end = t->len;
  cg_put(t, "%s", line); /* grows t (or marks it out of memory) */
  if (t->oom || at > end) return;
  memmove(t->s + at + n, t->s + at, end - at);
  memcpy(t->s + at, line, n);
}

void cg_row_reduce(builder *b, kernel *k, int gid, const alloy_node *n, const cuda_op *op) {
  const alloy_host_api *h = b->host;
  const alloy_value *in[1], *out = h->node_output(n, 0);
  cg_tensor_operands(h, n, in, 1);
  alloy_dtype yt = h->value_dtype(out);
  const char *acc = yt == ALLOY_F64 ? "double" : "float"; /* PyTorch's CUDA acc_type */
  const bool sum = op->reduce == RED_SUM || op->reduce == RED_MEAN;
  const char *f = sum ? "SumOp" : op->reduce == RED_MAX ? "MaxOp" : "MinOp";
  cg_row_loop(k);
  int x = cg_operand_var(b, k, gid, in[0]);
  if (x < 0) return;
  int a = k->nacc++;
  /* the accumulator and its shared words, before the loop; max and min
   * start at -inf and +inf, which every element (NaN too) replaces */
  char decl[160];
  const char *id = sum ? "0"
                   : yt == ALLOY_F64 ? (op->reduce == RED_MAX ? "__longlong_as_double(0xfff0000000000000ll)"
                                                               : "__longlong_as_double(0x7ff0000000000000ll)")
                                     : (op->reduce == RED_MAX ? "__int_as_float(0xff800000)" : "__int_as_float(0x7f800000)");
  snprintf(decl, sizeof decl, "    %s a%d = (%s)%s;\n    __shared__ %s sh%d[32];\n", acc, a, acc, id, acc, a);
  text_insert(&k->body, k->loop_at, decl);
  if (sum) cg_put(&k->body, "      a%d += (%s)v%d;\n", a, acc, x);
  else cg_put(&k->body, "      a%d = %s()(a%d, (%s)v%d);\n", a, f, a, acc, x);
  cg_row_close(k);
  if (sum) cg_put(&k->body, "    a%d = block_reduce(a%d, SumOp(), sh%d, (%s)0);\n", a, a, a, acc);
  else cg_put(&k->body, "    a%d = block_reduce(a%d, %s(), sh%d, a%d);\n", a, a, f, a, a); /* a repeat is harmless */
  if (op->reduce == RED_MEAN) cg_put(&k->body, "    a%d = a%d / (%s)%" PRId64 ";\n", a, a, acc, k->cols);
  int v = k->nvars++;
  if (yt == ALLOY_F16 || yt == ALLOY_BF16) cg_put(&k->body, "    float v%d = rnd_%s((float)a%d);\n", v, cg_dtype_tag(yt), a);
  else cg_put(&k->body, "    %s v%d = (%s)a%d;\n", cg_reg_type(yt), v, cg_reg_type(yt), a);
  vinfo *vi = cg_val(b, out);
  vi->group = gid, vi->var = v, vi->phase = k->phase, vi->row_scope = true;
}

/* ---- the visiting order -----------------------------------------------------*/

static bool pointwise_work(const cuda_op *op) {
  return op && (op->kind == CUDA_OP_POINTWISE || op->kind == CUDA_OP_FILL || op->fuse);
}

bool cg_node_order(builder *b, int nn, int *ord) {
  const alloy_host_api *h = b->host;
  for (int i = 0; i < nn; i++) ord[i] = i;
  if (nn < 3) return true;
  /* readers[first[p] .. first[p + 1]) read node p's first output */
  int *pos = malloc(sizeof *pos * (size_t)nn), *first = calloc((size_t)nn + 1, sizeof *first);
  int *readers = NULL, nedges = 0;
  if (!pos || !first) goto oom;
  for (int pass = 0; pass < 2; pass++) {
    for (int j = 0; j < nn; j++) {
      const alloy_node *n = h->graph_node(b->g, j);
      const cuda_op *op = cuda_op_find(h->node_op_name(n));
      if (!op || op->kind == CUDA_OP_NOP) continue; /* an assert reads, but is no step */
      const alloy_value *in[64];
      int nin = cg_tensor_operands(h, n, in, 64);
      for (int q = 0; q < nin && q < 64; q++) {
        vinfo *vi = cg_val(b, in[q]);
        if (!vi->node || h->node_output(vi->node, 0) != in[q]) continue;
        if (pass == 0) first[vi->at + 1]++;
        else readers[pos[vi->at]++] = j;
      }
    }
    if (pass == 0) {
      for (int p = 0; p < nn; p++) first[p + 1] += first[p];
      nedges = first[nn];
      readers = malloc(sizeof *readers * (size_t)(nedges ? nedges : 1));
      if (!readers) goto oom;
      memcpy(pos, first, sizeof *pos * (size_t)nn); /* fill cursors */
    }
  }
  for (int i = 0; i < nn; i++) pos[i] = i;
  /* last first, so that a chain moves down behind its last link */
  for (int i = nn - 1; i >= 0; i--) {
    const alloy_node *n = h->graph_node(b->g, i);
    if (!pointwise_work(cuda_op_find(h->node_op_name(n))) || h->node_num_outputs(n) != 1) continue;
    int target = nn, reader = -1;
    for (int e = first[i]; e < first[i + 1]; e++)
      if (pos[readers[e]] < target) target = pos[readers[e]], reader = readers[e];
    if (reader < 0 || target - 1 <= pos[i]) continue;
    const alloy_node *r = h->graph_node(b->g, reader);
    const alloy_value *o = h->node_output(n, 0);
    int64_t sizes[CUDA_MAX_RANK];
    const int rank = h->value_rank(o);
    if (rank > CUDA_MAX_RANK || !pointwise_work(cuda_op_find(h->node_op_name(r)))) continue;
    for (int d = 0; d < rank; d++) h->value_size(o, d, &sizes[d]);
    if (!cg_same_sizes(h, h->node_output(r, 0), sizes, rank)) continue;
    for (int q = pos[i]; q < target - 1; q++) ord[q] = ord[q + 1], pos[ord[q]] = q;
    ord[target - 1] = i, pos[i] = target - 1;
  }
  free(pos), free(first), free(readers);
  return true;
oom:
  free(pos), free(first), free(readers);
  return false;
}

/* ---- cat inside a fused group ----------------------------------------------*/

/* A cat reads each operand at its own index less the operand's start
 * along dim, so a value its group computes (at the group's index) is no
 * operand it can take from a register: it is stored and loaded. Pointwise
 * work whose one reader is the cat is instead computed by the cat, from
 * loads at the operand's index, the way Inductor fuses it: a squeezenet
 * fire module's cat([relu(a), relu(b)]) is one kernel loading a and b,
 * where it was a relu kernel each and the cat (three reads and three
 * writes of the result's size, now one of each). The work it takes over
 * (vinfo.into_cat) is a tree of pointwise nodes, each of the operand's
 * sizes and read only by its parent, whose other operands (the leaves)
 * are in memory, each loaded broadcast to the operand's sizes. */

enum {
  CAT_MAX_FUSED = 8,
  TAKEN_DEPTH = 8,     /* nodes from a leaf to the cat's operand */
  TAKEN_OPERANDS = 4,  /* tensor operands of a node taken over */
  TAKEN_LOADS = 24,    /* loads of the cat and the work it takes over, in all */
};

/* Whether node n is pointwise work a cat could take over, by itself: one
 * output of concrete sizes, read by one node, no partition output, at
 * most TAKEN_OPERANDS tensor operands. */
static bool takeable(builder *b, const alloy_node *n) {
  const alloy_host_api *h = b->host;
  const cuda_op *op = cuda_op_find(h->node_op_name(n));
  if (!op || op->kind != CUDA_OP_POINTWISE || op->fuse || op->emit || h->node_num_outputs(n) != 1)
    return false;
  const alloy_value *v = h->node_output(n, 0), *in[TAKEN_OPERANDS + 1];
  const int nin = cg_tensor_operands(h, n, in, TAKEN_OPERANDS + 1), r = h->value_rank(v);
  if (nin < 1 || nin > TAKEN_OPERANDS || r < 1 || r > CUDA_MAX_RANK || h->value_num_users(v) != 1 ||
      cg_val(b, v)->output >= 0)
    return false;
  for (int d = 0; d < r; d++)
    if (!h->value_size(v, d, &(int64_t){0})) return false;
  return true;
}

/* Whether value v, depth nodes below cat operand root, is computed by the
 * cat: cg_into_cat's rule seen from the cat (the two agree). */
static bool taken(builder *b, const alloy_value *v, const alloy_value *root, int depth) {
  const alloy_host_api *h = b->host;
  const vinfo *vi = cg_val(b, v);
  if (depth >= TAKEN_DEPTH || !vi->node || h->node_output(vi->node, 0) != v || !takeable(b, vi->node))
    return false;
  int64_t sizes[CUDA_MAX_RANK];
  const int r = h->value_rank(root);
  for (int d = 0; d < r; d++) h->value_size(root, d, &sizes[d]);
  return cg_same_sizes(h, v, sizes, r);
}

/* The loads of value v (depth nodes below cat operand root): 1 for a
 * value in memory, its leaves' for work the cat takes over. */
static int taken_loads(builder *b, const alloy_value *v, const alloy_value *root, int depth) {
  if (!taken(b, v, root, depth)) return 1;
  const alloy_value *in[TAKEN_OPERANDS];
  const int nin = cg_tensor_operands(b->host, cg_val(b, v)->node, in, TAKEN_OPERANDS);
  int loads = 0;
  for (int j = 0; j < nin; j++) loads += taken_loads(b, in[j], root, depth + 1);
  return loads;
}

/* Whether cat node c takes over the work its operands' trees allow: it is
 * a fused cat, and their loads are few enough for one kernel. */
static bool cat_takes(builder *b, const alloy_node *c) {
  if (cg_cat_groupable(b, c, -1) < 0) return false;
  const alloy_value *in[CAT_MAX_FUSED];
  const int nin = cg_tensor_operands(b->host, c, in, CAT_MAX_FUSED);
  int loads = 0;
  for (int j = 0; j < nin; j++) loads += taken_loads(b, in[j], in[j], 0);
  return loads <= TAKEN_LOADS;
}

bool cg_into_cat(builder *b, const alloy_node *n) {
  const alloy_host_api *h = b->host;
  /* up the readers to the cat, as taken() goes down from it */
  for (int depth = 0; depth < TAKEN_DEPTH && takeable(b, n); depth++) {
    const alloy_value *v = h->node_output(n, 0);
    const alloy_node *u = h->value_user(v, 0);
    const cuda_op *op = cuda_op_find(h->node_op_name(u));
    if (op && op->fuse == cg_fuse_cat) return cat_takes(b, u);
    if (h->node_num_outputs(u) != 1) return false;
    int64_t sizes[CUDA_MAX_RANK]; /* takeable(n): rank and sizes known */
    const int r = h->value_rank(v);
    for (int d = 0; d < r; d++) h->value_size(v, d, &sizes[d]);
    if (!cg_same_sizes(h, h->node_output(u, 0), sizes, r)) return false;
    n = u;
  }
  return false;
}

/* Whether cat operand v is, or is computed from, a value of group open. */
static bool reads_group(builder *b, const alloy_value *v, int open) {
  const vinfo *vi = cg_val(b, v);
  if (!vi->into_cat) return vi->group == open;
  const alloy_value *in[TAKEN_OPERANDS];
  const int nin = cg_tensor_operands(b->host, vi->node, in, TAKEN_OPERANDS);
  for (int j = 0; j < nin && j < TAKEN_OPERANDS; j++)
    if (reads_group(b, in[j], open)) return true;
  return false;
}

int cg_cat_groupable(builder *b, const alloy_node *n, int open) {
  const alloy_host_api *h = b->host;
  const alloy_value *in[CAT_MAX_FUSED + 1], *out = h->node_output(n, 0);
  int nin = cg_tensor_operands(h, n, in, CAT_MAX_FUSED + 1), r = h->value_rank(out);
  if (nin < 1 || nin > CAT_MAX_FUSED || r < 1) return -1;
  int joins = 1;
  for (int j = 0; j < nin; j++) {
    if (h->value_rank(in[j]) != r) return -1; /* a legacy empty tensor */
    if (open >= 0 && reads_group(b, in[j], open)) joins = 0; /* read at other indices: from memory */
  }
  return joins;
}

/* One operand of a cat in kernel k: the cat's dim and rank, the
 * operand's first index along dim and its size there, and pos[d] the
 * iteration index of the values' dim d (a channels-last group walks N, H,
 * W, C). */
typedef struct cat_slice {
  int dim, rank;
  int64_t at, size;
  int pos[CUDA_MAX_RANK];
} cat_slice;

/* The element offset of tensor t at the kernel's index inside slice s: t
 * is the operand, or a leaf of the work the cat takes over broadcast to
 * it (its dims aligned right, a dim it broadcasts skipped); along dim the
 * index less the slice's start. */
static void slice_offset(kernel *k, const cuda_tensor *t, const cat_slice *s, char *off, size_t cap) {
  cg_kernel_reach(k, t);
  const int lead = s->rank - t->rank;
  size_t len = (size_t)snprintf(off, cap, "%" PRId64, t->offset);
  for (int td = 0; td < t->rank && len < cap; td++) {
    const int d = td + lead;
    if (d == s->dim && !(t->sizes[td] == 1 && s->size != 1))
      len += (size_t)snprintf(off + len, cap - len, " + (i%d - %" PRId64 ") * %" PRId64, s->pos[d], s->at,
                              t->strides[td]);
    else if (d != s->dim && t->sizes[td] != 1 && t->strides[td] != 0)
      len += (size_t)snprintf(off + len, cap - len, " + i%d * %" PRId64, s->pos[d], t->strides[td]);
  }
}

/* The register of value v inside slice s of cat n: a load of where it is,
 * or the work the cat takes over computed from its leaves' loads. */
static int slice_value(builder *b, kernel *k, int gid, const alloy_node *n, const alloy_value *v,
                       const cat_slice *s) {
  const vinfo *vi = cg_val(b, v);
  if (vi->into_cat) {
    const alloy_value *in[TAKEN_OPERANDS];
    int var[TAKEN_OPERANDS];
    const int nin = cg_tensor_operands(b->host, vi->node, in, TAKEN_OPERANDS);
    for (int j = 0; j < nin && j < TAKEN_OPERANDS; j++)
      if ((var[j] = slice_value(b, k, gid, n, in[j], s)) < 0) return -1;
    return cg_pointwise_from(b, k, gid, vi->node, in, var, nin);
  }
  if (vi->tensor < 0) return cg_fail(b, n, "a cat operand is not in memory"), -1;
  const cuda_tensor *t = &b->tensors[vi->tensor];
  if (t->rank > s->rank) return cg_fail(b, n, "a cat operand's leaf of a higher rank"), -1;
  const int p = cg_kernel_param(k, t->base);
  if (p < 0) return cg_fail(b, n, "too many tensors in one kernel"), -1;
  char off[512];
  slice_offset(k, t, s, off, sizeof off);
  const int r = k->nvars++;
  const char *tag = cg_dtype_tag(t->dtype);
  cg_put(&k->body, "    %s v%d = ld_%s(p%d, %s);\n", cg_reg_type(t->dtype), r, tag, p, off);
  return r;
}

int cg_fuse_cat(builder *b, void *kp, int gid, const alloy_node *n) {
  kernel *k = kp;
  const alloy_host_api *h = b->host;
  const alloy_value *in[CAT_MAX_FUSED];
  int nin = cg_tensor_operands(h, n, in, CAT_MAX_FUSED);
  alloy_dtype rt = h->value_dtype(h->node_output(n, 0));
  const char *reg = cg_reg_type(rt);
  cat_slice s = {.dim = cg_wrap_dim(cg_int_arg(h, n, "dim", 0), k->rank), .rank = k->rank};
  for (int d = 0; d < k->rank; d++) s.pos[k->perm[d]] = d;
  cg_index_split(k);
  int v = k->nvars++;
  cg_put(&k->body, "    %s v%d = 0;\n", reg, v);
  bool any = false;
  for (int j = 0; j < nin; j++) {
    vinfo *vi = cg_val(b, in[j]);
    if (!vi->into_cat && vi->tensor < 0) return cg_fail(b, n, "a cat operand is not in memory"), -1;
    const cuda_tensor *t = vi->into_cat ? NULL : &b->tensors[vi->tensor];
    if (t) s.size = t->sizes[s.dim];
    else if (!h->value_size(in[j], s.dim, &s.size)) return cg_fail(b, n, "symbolic sizes reach compile"), -1;
    if (s.size == 0) continue;
    const bool last = s.at + s.size >= k->lsizes[s.dim];
    char cond[64] = "";
    if (!last) snprintf(cond, sizeof cond, "if (i%d < %" PRId64 ") ", s.pos[s.dim], s.at + s.size);
    if (t) { /* one load */
      int p = cg_kernel_param(k, t->base);
      if (p < 0) return cg_fail(b, n, "too many tensors in one kernel"), -1;
      char off[512];
      slice_offset(k, t, &s, off, sizeof off);
      cg_put(&k->body, "    %s%sv%d = (%s)ld_%s(p%d, %s);\n", any ? "else " : "", cond, v, reg,
             cg_dtype_tag(t->dtype), p, off);
    } else { /* the work taken over, in a block of its own */
      cg_put(&k->body, "    %s%s{\n", any ? "else " : "", cond);
      int r = slice_value(b, k, gid, n, in[j], &s);
      if (r < 0) return -1;
      cg_put(&k->body, "    v%d = (%s)v%d;\n    }\n", v, reg, r);
    }
    any = true;
    if (last) break;
    s.at += s.size;
  }
  return v;
}
