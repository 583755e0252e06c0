/*
 * ir/meta_backward.c: shape functions of the backward ops of training
 * graphs (the gradients of activations, losses, norms, pooling, padding,
 * upsampling, views, convolution, embedding, distances, attention and
 * recurrent cells), whose rules are in decompositions/rules_backward.c,
 * rules_backward_nn.c and rules_backward_seq.c.
 *
 * A gradient has the type of what it is the gradient of, so nearly every
 * op is one of a few table-driven families, read from the row's parameter:
 *   - pointwise (bw_pointwise): the broadcast of some tensor arguments in
 *     their promoted dtype, as the TensorIterator of the CPU kernel gives
 *     it (tanh_backward, threshold_backward, ...);
 *   - like (bw_like): each output the type of one argument, or a vector of
 *     its first size (a bias gradient);
 *   - sizes (bw_sizes): the shape given by an int[] argument, in the
 *     gradient's dtype (the view backwards: select_backward(grad,
 *     input_sizes, ...));
 *   - forward-checked (bw_forward): the input's type, after running the
 *     forward op's own shape function on the same arguments and checking
 *     that grad_output has its output's shape (pooling and padding).
 * The few left (upsampling, batch norms, rms norm, cdist, affine_grid,
 * embedding and embedding bags, recurrent cells, efficient attention) have
 * a function each. Checks follow PyTorch 2.11's CPU kernels; sizes stay
 * symbolic, and a check fails only where the symbols' ranges prove it
 * false, as in ir/meta_nn.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/meta.h"

/* --- helpers ------------------------------------------------------------*/

static alloy_dim C(int64_t v) { return alloy_dim_const(v); }

static bool never_eq(alloy_meta *m, alloy_dim a, alloy_dim b) {
  return alloy_dim_eq(m->st, a, b) == ALLOY_FALSE;
}

/* Tensor argument i, which the schema says is a Tensor (not optional). */
static alloy_error *tensor_arg(alloy_meta *m, int i, const alloy_value **t) {
  *t = meta_tensor(m, i);
  return *t ? NULL : meta_error(m, "argument '%s' must be a tensor", meta_arg_name(m, i));
}

static alloy_error *want_rank(alloy_meta *m, int i, const alloy_value *t, int lo, int hi) {
  if (t->rank >= lo && t->rank <= hi) return NULL;
  char s[256];
  meta_shape_text(t->shape, t->rank, s, sizeof s);
  if (lo == hi)
    return meta_error(m, "argument '%s': expected a %d-D tensor, got shape %s",
                      meta_arg_name(m, i), lo, s);
  return meta_error(m, "argument '%s': expected a %d-D to %d-D tensor, got shape %s",
                    meta_arg_name(m, i), lo, hi, s);
}

static alloy_error *want_float_dtype(alloy_meta *m, int i, alloy_dtype t) {
  if (alloy_dtype_is_float(t) || alloy_dtype_is_complex(t)) return NULL;
  return meta_error(m, "argument '%s': PyTorch's CPU kernel computes gradients in floating "
                    "point, got %s", meta_arg_name(m, i), alloy_dtype_name(t));
}

static alloy_error *want_same_dtype(alloy_meta *m, int i, const alloy_value *a, int j,
                                    const alloy_value *b) {
  if (a->dtype == b->dtype) return NULL;
  return meta_error(m, "expected '%s' and '%s' to have the same dtype, got %s and %s",
                    meta_arg_name(m, i), meta_arg_name(m, j), alloy_dtype_name(a->dtype),
                    alloy_dtype_name(b->dtype));
}

/* Tensor t (argument i) must have exactly shape s. */
static alloy_error *want_shape(alloy_meta *m, int i, const alloy_value *t, const alloy_dim *s,
                               int rank) {
  bool ok = t->rank == rank;
  for (int d = 0; d < rank && ok; d++) ok = !never_eq(m, t->shape[d], s[d]);
  if (ok) return NULL;
  char want[256], got[256];
  return meta_error(m, "argument '%s': expected shape %s, got %s", meta_arg_name(m, i),
                    meta_shape_text(s, rank, want, sizeof want),
                    meta_shape_text(t->shape, t->rank, got, sizeof got));
}

/* int[] argument i as a shape: every size non-negative (where known). */
static alloy_error *sizes_arg(alloy_meta *m, int i, alloy_dim *out, int *n) {
  alloy_error *e = meta_dims(m, i, out, ALLOY_MAX_RANK, n);
  if (e) return e;
  for (int k = 0; k < *n; k++)
    if (alloy_dim_lt(m->st, out[k], C(0)) == ALLOY_TRUE)
      return meta_error(m, "argument '%s': size %d is negative", meta_arg_name(m, i), k);
  return NULL;
}

/* --- pointwise ----------------------------------------------------------*/

/* m->param: the tensor arguments that broadcast together (bit i: argument
 * i), those that promote (0: the same ones), then flags. */
#define PW(bcast) (bcast)
#define PW_PROMO(promo) ((promo) << 8)
enum {
  PW_INTS = 1 << 16,    /* integer and bool gradients too (threshold_backward) */
  PW_SAME = 1 << 17,    /* the promoted tensors must share one dtype */
  PW_SELF = 1 << 18,    /* the result is in argument 1's dtype (mish_backward) */
  PW_TOFLOAT = 1 << 19, /* an integer result becomes float32 (a float factor) */
  PW_TWICE = 1 << 20,   /* two outputs of that type (_prelu_kernel_backward) */
};

static alloy_error *bw_pointwise(alloy_meta *m) {
  unsigned bcast = (unsigned)m->param & 0xff, promo = ((unsigned)m->param >> 8) & 0xff;
  if (!promo) promo = bcast;
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank = 0, first = -1;
  alloy_promo_operand ops[8];
  int nops = 0;
  alloy_error *e = NULL;
  for (int i = 0; i < 8 && i < m->nargs && !e; i++) {
    if (!((bcast | promo) & (1u << i))) continue;
    const alloy_value *t;
    if ((e = tensor_arg(m, i, &t))) break;
    if (bcast & (1u << i)) {
      if (first < 0) {
        memcpy(shape, t->shape, sizeof *shape * (size_t)t->rank);
        rank = t->rank;
      } else {
        e = meta_broadcast(m, shape, rank, t->shape, t->rank, shape, &rank);
      }
    }
    if (!(promo & (1u << i))) continue;
    if (first < 0) first = i;
    if ((m->param & PW_SAME) && t->dtype != meta_tensor(m, first)->dtype)
      e = meta_error(m, "argument '%s': found dtype %s but expected %s", meta_arg_name(m, i),
                     alloy_dtype_name(t->dtype), alloy_dtype_name(meta_tensor(m, first)->dtype));
    ops[nops++] = meta_promo_operand(m, i);
  }
  if (e) return e;
  alloy_dtype t = (m->param & PW_SELF) ? meta_tensor(m, 1)->dtype : alloy_result_type(ops, nops);
  if ((m->param & PW_TOFLOAT) && !alloy_dtype_is_float(t) && !alloy_dtype_is_complex(t))
    t = ALLOY_F32;
  if (!(m->param & PW_INTS) && (e = want_float_dtype(m, first, t))) return e;
  if ((e = meta_out_tensor(m, 0, t, shape, rank))) return e;
  return (m->param & PW_TWICE) ? meta_out_tensor(m, 1, t, shape, rank) : NULL;
}

/* --- like ---------------------------------------------------------------*/

/* m->param: one byte per output (output 0 in the low byte), each a kind
 * and an argument. */
enum { LIKE_ARG = 1, LIKE_DIM0 = 2 };
#define LIKE(k, i) ((LIKE_ARG << 5 | (i)) << (8 * (k)))  /* output k: argument i's type */
#define DIM0(k, i) ((LIKE_DIM0 << 5 | (i)) << (8 * (k))) /* [size 0 of argument i] */

static alloy_error *bw_like(alloy_meta *m) {
  alloy_error *e = NULL;
  for (int k = 0; k < m->nout && !e; k++) {
    unsigned code = ((unsigned)m->param >> (8 * k)) & 0xff;
    int kind = (int)(code >> 5), i = (int)(code & 31);
    const alloy_value *t;
    if (!kind) return meta_error(m, "%s: output %d has no rule", m->op->name, k);
    if ((e = tensor_arg(m, i, &t))) break;
    if (kind == LIKE_ARG) {
      e = meta_out_like(m, k, t, t->dtype);
    } else if (!(e = want_rank(m, i, t, 1, ALLOY_MAX_RANK))) {
      e = meta_out_tensor(m, k, t->dtype, &t->shape[0], 1);
    }
  }
  return e;
}

/* One output like argument i, after checking that the arguments of a mask
 * have i's shape (the saved tensors of a pointwise backward, say);
 * param: LIKE1(i, mask). */
#define LIKE1(i, same) ((i) | (same) << 8)
static alloy_error *bw_like_shaped(alloy_meta *m) {
  int i = m->param & 31;
  unsigned same = ((unsigned)m->param >> 8) & 0xffff;
  const alloy_value *t, *u;
  alloy_error *e = tensor_arg(m, i, &t);
  for (int j = 0; j < 16 && !e; j++)
    if ((same >> j) & 1 && !(e = tensor_arg(m, j, &u))) e = want_shape(m, j, u, t->shape, t->rank);
  return e ? e : meta_out_like(m, 0, t, t->dtype);
}

/* --- sizes --------------------------------------------------------------*/

/* m->param: the int[] argument giving the shape; the dtype is the
 * gradient's (argument 0). */
static alloy_error *bw_sizes(alloy_meta *m) {
  const alloy_value *g;
  alloy_dim shape[ALLOY_MAX_RANK];
  int n;
  alloy_error *e = tensor_arg(m, 0, &g);
  if (!e) e = sizes_arg(m, m->param, shape, &n);
  return e ? e : meta_out_tensor(m, 0, g->dtype, shape, n);
}

/* unfold_backward(grad_in, input_sizes, dim, size, step): grad_in is the
 * unfolded tensor, input_sizes with dim holding the windows and one more
 * dim of `size` last (a zero-dim input unfolds to [size]). */
static alloy_error *bw_unfold(alloy_meta *m) {
  const alloy_value *g;
  alloy_dim s[ALLOY_MAX_RANK], want[ALLOY_MAX_RANK];
  int n, d = 0;
  int64_t dim, size, step;
  alloy_error *e = tensor_arg(m, 0, &g);
  if (!e) e = sizes_arg(m, 1, s, &n);
  if (!e) e = meta_int(m, 2, &dim);
  if (!e) e = meta_int(m, 3, &size);
  if (!e) e = meta_int(m, 4, &step);
  if (!e) e = meta_wrap_dim(m, 2, dim, n, &d);
  if (e) return e;
  if (size < 0) return meta_error(m, "argument 'size': must be non-negative, got %lld", (long long)size);
  if (step <= 0) return meta_error(m, "argument 'step': must be positive, got %lld", (long long)step);
  if (n == ALLOY_MAX_RANK) return meta_error(m, "argument 'input_sizes': too many dims");
  if (n == 0) {
    want[0] = C(size);
    if ((e = want_shape(m, 0, g, want, 1))) return e;
  } else {
    memcpy(want, s, sizeof *s * (size_t)n);
    alloy_dim span = alloy_dim_sub(m->st, s[d], C(size));
    want[d] = alloy_dim_add(m->st, alloy_dim_floordiv(m->st, span, C(step)), C(1));
    want[n] = C(size);
    if (alloy_dim_lt(m->st, s[d], C(size)) == ALLOY_TRUE)
      return meta_error(m, "argument 'size': %lld is larger than the unfolded dim", (long long)size);
    if ((e = want_shape(m, 0, g, want, n + 1))) return e;
  }
  if ((e = meta_sym_check(m))) return e;
  return meta_out_tensor(m, 0, g->dtype, s, n);
}

/* index_select_backward(grad, self_sizes, dim, index): grad has the sizes
 * but the index's length along dim */
static alloy_error *bw_index_select(alloy_meta *m) {
  const alloy_value *g, *idx;
  alloy_dim s[ALLOY_MAX_RANK], want[ALLOY_MAX_RANK];
  int n, d;
  int64_t dim;
  alloy_error *e = tensor_arg(m, 0, &g);
  if (!e) e = tensor_arg(m, 3, &idx);
  if (!e) e = sizes_arg(m, 1, s, &n);
  if (!e) e = meta_int(m, 2, &dim);
  if (!e) e = meta_wrap_dim(m, 2, dim, n, &d);
  if (!e) e = want_rank(m, 3, idx, 0, 1);
  if (e) return e;
  if (!alloy_dtype_is_integer(idx->dtype))
    return meta_error(m, "argument 'index': expected an integer tensor, got %s",
                      alloy_dtype_name(idx->dtype));
  if (n == 0) return meta_error(m, "argument 'self_sizes': a zero-dim self has no dim to select along");
  memcpy(want, s, sizeof *s * (size_t)n);
  want[d] = idx->rank ? idx->shape[0] : C(1);
  if ((e = want_shape(m, 0, g, want, n))) return e;
  return meta_out_tensor(m, 0, g->dtype, s, n);
}

/* masked_select_backward(grad, input, mask): zeros like input expanded to
 * the mask's broadcast, filled from grad. */
static alloy_error *bw_masked_select(alloy_meta *m) {
  const alloy_value *g, *x, *mask;
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank;
  alloy_error *e = tensor_arg(m, 0, &g);
  if (!e) e = tensor_arg(m, 1, &x);
  if (!e) e = tensor_arg(m, 2, &mask);
  if (!e && mask->dtype != ALLOY_BOOL)
    e = meta_error(m, "argument 'mask': expected a bool tensor, got %s",
                   alloy_dtype_name(mask->dtype));
  if (!e) e = want_same_dtype(m, 0, g, 1, x);
  if (!e) e = meta_broadcast(m, x->shape, x->rank, mask->shape, mask->rank, shape, &rank);
  return e ? e : meta_out_tensor(m, 0, x->dtype, shape, rank);
}

/* --- checked by the forward op ------------------------------------------*/

/* A backward op whose arguments from `first` on are its forward op's (the
 * rest take the forward's defaults): the forward's shape function checks
 * them, grad_output (argument 0) must have the forward's output shape,
 * and `indices` (when not 0) too; the gradient has self's type. */
typedef struct {
  const char *forward;
  int first, indices;
} bw_forward_row;

enum {
  FWD_AVG_POOL3D,
  FWD_MAX_POOL3D,
  FWD_REFLECTION_PAD1D,
  FWD_REFLECTION_PAD2D,
  FWD_REFLECTION_PAD3D,
  FWD_REPLICATION_PAD1D,
  FWD_REPLICATION_PAD2D,
  FWD_REPLICATION_PAD3D,
};

static const bw_forward_row forwards[] = {
    [FWD_AVG_POOL3D] = {"aten.avg_pool3d.default", 1, 0},
    [FWD_MAX_POOL3D] = {"aten.max_pool3d_with_indices.default", 1, 7},
    [FWD_REFLECTION_PAD1D] = {"aten.reflection_pad1d.default", 1, 0},
    [FWD_REFLECTION_PAD2D] = {"aten.reflection_pad2d.default", 1, 0},
    [FWD_REFLECTION_PAD3D] = {"aten.reflection_pad3d.default", 1, 0},
    [FWD_REPLICATION_PAD1D] = {"aten.replication_pad1d.default", 1, 0},
    [FWD_REPLICATION_PAD2D] = {"aten.replication_pad2d.default", 1, 0},
    [FWD_REPLICATION_PAD3D] = {"aten.replication_pad3d.default", 1, 0},
};

static alloy_error *bw_forward(alloy_meta *m) {
  const bw_forward_row *row = &forwards[m->param];
  const alloy_op *fop = alloy_op_find(row->forward);
  if (!fop || !fop->meta)
    return meta_error(m, "%s needs the shape function of %s", m->op->name, row->forward);
  int nf = fop->schema->nargs;
  alloy_arg fargs[16];
  if (nf > 16) return meta_error(m, "%s: too many arguments", row->forward);
  for (int j = 0; j < nf; j++)
    fargs[j] = row->first + j < m->nargs ? m->args[row->first + j] : fop->schema->args[j].default_value;
  alloy_meta fm = {.node_name = m->node_name, .unbacked_next = m->unbacked_next};
  alloy_error *e = alloy_meta_run(fop, m->st, fargs, &fm);
  m->unbacked_next = fm.unbacked_next;
  const alloy_value *g, *self, *idx;
  if (!e) e = tensor_arg(m, 0, &g);
  if (!e) e = tensor_arg(m, row->first, &self);
  if (!e && fm.nout > 0) e = want_shape(m, 0, g, fm.outs[0].shape, fm.outs[0].rank);
  if (!e && row->indices && !(e = tensor_arg(m, row->indices, &idx)))
    e = want_shape(m, row->indices, idx, fm.outs[0].shape, fm.outs[0].rank);
  if (!e) e = want_same_dtype(m, 0, g, row->first, self);
  free(fm.outs);
  alloy_symtab_clear_error(m->st);
  return e ? e : meta_out_like(m, 0, self, self->dtype);
}

/* The backward of a pooling whose output positions are given by indices
 * (adaptive and fractional max pooling): grad_output and indices have one
 * shape, and the gradient self's type. param: the number of spatial dims. */
static alloy_error *bw_indexed_pool(alloy_meta *m) {
  const alloy_value *g, *self, *idx;
  int n = m->param;
  int i_idx = m->nargs - 1; /* indices is the last argument */
  alloy_error *e = tensor_arg(m, 0, &g);
  if (!e) e = tensor_arg(m, 1, &self);
  if (!e) e = tensor_arg(m, i_idx, &idx);
  if (!e) e = want_rank(m, 1, self, n + 1, n + 2);
  if (!e && g->rank != self->rank) e = want_rank(m, 0, g, self->rank, self->rank);
  if (!e) e = want_shape(m, i_idx, idx, g->shape, g->rank);
  if (!e && idx->dtype != ALLOY_I64)
    e = meta_error(m, "argument 'indices': expected int64, got %s", alloy_dtype_name(idx->dtype));
  for (int d = 0; !e && d < self->rank - n; d++)
    if (never_eq(m, g->shape[d], self->shape[d])) e = want_shape(m, 0, g, self->shape, self->rank);
  if (!e) e = want_same_dtype(m, 0, g, 1, self);
  if (!e) e = want_float_dtype(m, 1, self->dtype);
  return e ? e : meta_out_like(m, 0, self, self->dtype);
}

/* _adaptive_avg_pool3d_backward(grad_output, self) */
static alloy_error *bw_adaptive_avg_pool(alloy_meta *m) {
  const alloy_value *g, *self;
  alloy_error *e = tensor_arg(m, 0, &g);
  if (!e) e = tensor_arg(m, 1, &self);
  if (!e) e = want_rank(m, 1, self, m->param + 1, m->param + 2);
  if (!e && g->rank != self->rank) e = want_rank(m, 0, g, self->rank, self->rank);
  if (!e) e = want_same_dtype(m, 0, g, 1, self);
  if (!e) e = want_float_dtype(m, 1, self->dtype);
  return e ? e : meta_out_like(m, 0, self, self->dtype);
}

/* --- upsampling ---------------------------------------------------------*/

/* upsample_*_backward(grad_output, output_size, input_size, ...): the
 * gradient has shape input_size; grad_output must have input_size's batch
 * and channels with output_size's spatial sizes. param: spatial dims. */
static alloy_error *bw_upsample(alloy_meta *m) {
  int n = m->param, no, ni;
  const alloy_value *g;
  alloy_dim out[ALLOY_MAX_RANK], in[ALLOY_MAX_RANK], want[ALLOY_MAX_RANK];
  alloy_error *e = tensor_arg(m, 0, &g);
  if (!e) e = sizes_arg(m, 1, out, &no);
  if (!e) e = sizes_arg(m, 2, in, &ni);
  if (e) return e;
  if (no != n)
    return meta_error(m, "argument 'output_size': expected %d sizes, got %d", n, no);
  if (ni != n + 2)
    return meta_error(m, "argument 'input_size': expected %d sizes, got %d", n + 2, ni);
  for (int k = 0; k < n; k++)
    if (alloy_dim_lt(m->st, in[2 + k], C(1)) == ALLOY_TRUE ||
        alloy_dim_lt(m->st, out[k], C(1)) == ALLOY_TRUE)
      return meta_error(m, "input and output sizes should be greater than 0");
  want[0] = in[0];
  want[1] = in[1];
  memcpy(want + 2, out, sizeof *out * (size_t)n);
  if ((e = want_shape(m, 0, g, want, n + 2))) return e;
  if ((e = want_float_dtype(m, 0, g->dtype))) return e;
  return meta_out_tensor(m, 0, g->dtype, in, n + 2);
}

/* --- norms --------------------------------------------------------------*/

/* The per-channel gradient of a batch norm: weight's type, or [C] in
 * input's dtype without a weight. */
static alloy_error *channel_grad(alloy_meta *m, int k, const alloy_value *in,
                                 const alloy_value *w) {
  return w ? meta_out_like(m, k, w, w->dtype) : meta_out_tensor(m, k, in->dtype, &in->shape[1], 1);
}

/* native_batch_norm_backward(grad_out, input, weight, ...), and
 * batch_norm_backward, _batch_norm_impl_index_backward,
 * cudnn_batch_norm_backward and miopen_batch_norm_backward (input first)
 * with their own argument positions; param: input | weight << 4 | grad << 8. */
#define BN_ARGS(in, w, g) ((in) | (w) << 4 | (g) << 8)
static alloy_error *bw_batch_norm(alloy_meta *m) {
  int i_in = m->param & 15, i_w = (m->param >> 4) & 15, i_g = (m->param >> 8) & 15;
  const alloy_value *g, *in, *w = meta_tensor(m, i_w);
  alloy_error *e = tensor_arg(m, i_g, &g);
  if (!e) e = tensor_arg(m, i_in, &in);
  if (!e) e = want_rank(m, i_in, in, 2, ALLOY_MAX_RANK);
  if (!e) e = want_shape(m, i_g, g, in->shape, in->rank);
  if (!e) e = want_same_dtype(m, i_g, g, i_in, in);
  if (!e) e = want_float_dtype(m, i_in, in->dtype);
  if (!e && w) e = want_shape(m, i_w, w, &in->shape[1], 1);
  if (!e) e = meta_out_like(m, 0, in, in->dtype);
  if (!e) e = channel_grad(m, 1, in, w);
  if (!e) e = channel_grad(m, 2, in, w);
  return e;
}

/* batch_norm_backward_reduce(grad_out, input, mean, invstd, weight,
 * input_g, weight_g, bias_g) -> (sum_dy, sum_dy_xmu, grad_weight,
 * grad_bias): the sums in mean's type, the gradients per channel. */
static alloy_error *bw_batch_norm_reduce(alloy_meta *m) {
  const alloy_value *g, *in, *mean, *w = meta_tensor(m, 4);
  alloy_error *e = tensor_arg(m, 0, &g);
  if (!e) e = tensor_arg(m, 1, &in);
  if (!e) e = tensor_arg(m, 2, &mean);
  if (!e) e = want_rank(m, 1, in, 2, ALLOY_MAX_RANK);
  if (!e) e = want_shape(m, 0, g, in->shape, in->rank);
  if (!e) e = want_shape(m, 2, mean, &in->shape[1], 1);
  if (!e) e = want_float_dtype(m, 1, in->dtype);
  if (!e) e = meta_out_like(m, 0, mean, mean->dtype);
  if (!e) e = meta_out_like(m, 1, mean, mean->dtype);
  if (!e) e = channel_grad(m, 2, in, w);
  if (!e) e = channel_grad(m, 3, in, w);
  return e;
}

/* _fused_rms_norm_backward(grad_out, input, normalized_shape, rstd, weight,
 * output_mask) -> (grad_input, grad_weight): the weight's gradient has
 * normalized_shape, in weight's dtype (input's without one). */
static alloy_error *bw_rms_norm(alloy_meta *m) {
  const alloy_value *g, *in, *w = meta_tensor(m, 4);
  alloy_dim ns[ALLOY_MAX_RANK];
  int n;
  alloy_error *e = tensor_arg(m, 0, &g);
  if (!e) e = tensor_arg(m, 1, &in);
  if (!e) e = sizes_arg(m, 2, ns, &n);
  if (!e) e = want_shape(m, 0, g, in->shape, in->rank);
  if (!e && (n < 1 || n > in->rank))
    e = meta_error(m, "argument 'normalized_shape': expected 1 to %d sizes, got %d", in->rank, n);
  for (int k = 0; !e && k < n; k++)
    if (never_eq(m, ns[k], in->shape[in->rank - n + k]))
      e = meta_error(m, "argument 'normalized_shape' does not match the input's last %d sizes", n);
  if (!e && w) e = want_shape(m, 4, w, ns, n);
  if (!e) e = want_float_dtype(m, 1, in->dtype);
  if (!e) e = meta_out_like(m, 0, in, in->dtype);
  if (!e) e = meta_out_tensor(m, 1, w ? w->dtype : in->dtype, ns, n);
  return e;
}

/* --- others -------------------------------------------------------------*/

/* glu_jvp(glu, x, dx, dim): dx has x's shape and glu x's with dim halved */
static alloy_error *bw_glu_jvp(alloy_meta *m) {
  const alloy_value *y, *x, *dx;
  int64_t dim;
  int d;
  alloy_error *e = tensor_arg(m, 0, &y);
  if (!e) e = tensor_arg(m, 1, &x);
  if (!e) e = tensor_arg(m, 2, &dx);
  if (!e) e = want_rank(m, 1, x, 1, ALLOY_MAX_RANK);
  if (!e) e = want_shape(m, 2, dx, x->shape, x->rank);
  if (!e) e = meta_int(m, 3, &dim);
  if (!e) e = meta_wrap_dim(m, 3, dim, x->rank, &d);
  if (!e) e = want_float_dtype(m, 1, x->dtype);
  if (e) return e;
  alloy_dim half[ALLOY_MAX_RANK];
  memcpy(half, x->shape, sizeof *half * (size_t)x->rank);
  half[d] = alloy_dim_floordiv(m->st, x->shape[d], C(2));
  if ((e = want_shape(m, 0, y, half, x->rank))) return e;
  return meta_out_like(m, 0, y, y->dtype);
}

/* _log_softmax_backward_data has _softmax_backward_data's arguments and
 * checks: its shape function, on the same arguments. */
static alloy_error *bw_as_softmax(alloy_meta *m) {
  const alloy_op *twin = alloy_op_find("aten._softmax_backward_data.default");
  if (!twin || !twin->meta) return meta_error(m, "_softmax_backward_data has no shape function");
  int param = m->param;
  m->param = twin->meta_param;
  alloy_error *e = twin->meta(m);
  m->param = param;
  return e;
}

/* glu_backward(grad_output, self, dim): self's type; self's dim must be
 * even and grad_output self with that dim halved. */
static alloy_error *bw_glu(alloy_meta *m) {
  const alloy_value *g, *x;
  int64_t dim;
  int d;
  alloy_error *e = tensor_arg(m, 0, &g);
  if (!e) e = tensor_arg(m, 1, &x);
  if (!e && x->rank == 0) e = meta_error(m, "glu does not support scalars because halving size must be even");
  if (!e) e = meta_int(m, 2, &dim);
  if (!e) e = meta_wrap_dim(m, 2, dim, x->rank, &d);
  if (e) return e;
  alloy_dim half[ALLOY_MAX_RANK];
  memcpy(half, x->shape, sizeof *half * (size_t)x->rank);
  alloy_dim n = x->shape[d];
  if (alloy_dim_is_const(n) && n.value % 2)
    return meta_error(m, "Halving dimension must be even, but dimension %d is size %lld", d,
                      (long long)n.value);
  half[d] = alloy_dim_floordiv(m->st, n, C(2));
  if ((e = want_shape(m, 0, g, half, x->rank))) return e;
  if ((e = want_float_dtype(m, 1, x->dtype))) return e;
  return meta_out_like(m, 0, x, alloy_promote_types(g->dtype, x->dtype));
}

/* embedding_backward(grad, indices, num_weights, padding_idx,
 * scale_grad_by_freq, sparse): [num_weights, grad's last size]. Only the
 * dense gradient exists here. */
static alloy_error *bw_embedding(alloy_meta *m) {
  const alloy_value *g, *idx;
  alloy_error *e = tensor_arg(m, 0, &g);
  if (!e) e = tensor_arg(m, 1, &idx);
  if (!e) e = want_rank(m, 0, g, 1, ALLOY_MAX_RANK);
  if (e) return e;
  if (meta_bool(m, 5)) return meta_error(m, "argument 'sparse': sparse gradients are not supported");
  if (idx->dtype != ALLOY_I64 && idx->dtype != ALLOY_I32)
    return meta_error(m, "argument 'indices': expected int32 or int64, got %s",
                      alloy_dtype_name(idx->dtype));
  alloy_dim out[2] = {meta_dim(m, 2), g->shape[g->rank - 1]};
  if (alloy_dim_lt(m->st, out[0], C(0)) == ALLOY_TRUE)
    return meta_error(m, "argument 'num_weights' must be non-negative");
  return meta_out_tensor(m, 0, g->dtype, out, 2);
}

/* affine_grid_generator_backward(grad, size, align_corners): the gradient
 * of theta, [N, 2, 3] for a 4-d size and [N, 3, 4] for a 5-d one. */
static alloy_error *bw_affine_grid(alloy_meta *m) {
  const alloy_value *g;
  alloy_dim size[ALLOY_MAX_RANK];
  int n;
  alloy_error *e = tensor_arg(m, 0, &g);
  if (!e) e = sizes_arg(m, 1, size, &n);
  if (e) return e;
  if (n != 4 && n != 5)
    return meta_error(m, "argument 'size': affine_grid supports 4-D and 5-D sizes, got %d", n);
  alloy_dim grid[ALLOY_MAX_RANK] = {size[0]};
  for (int k = 2; k < n; k++) grid[k - 1] = size[k];
  grid[n - 1] = C(n - 2);
  if ((e = want_shape(m, 0, g, grid, n))) return e;
  alloy_dim theta[3] = {size[0], C(n - 2), C(n - 1)};
  return meta_out_tensor(m, 0, g->dtype, theta, 3);
}

/* _embedding_bag_dense_backward / _embedding_bag_backward(grad, indices,
 * ...): [num_weights, grad's size 1]; param: num_weights' argument */
static alloy_error *bw_embedding_bag(alloy_meta *m) {
  const alloy_value *g, *idx;
  alloy_error *e = tensor_arg(m, 0, &g);
  if (!e) e = tensor_arg(m, 1, &idx);
  if (!e) e = want_rank(m, 0, g, 2, 2);
  if (!e) e = want_rank(m, 1, idx, 1, 1);
  /* offsets (the _embedding_bag_backward form), offset2bag and bag_size
   * are vectors, maximum_indices a matrix */
  for (int i = 2; i < m->param && !e; i++) {
    const alloy_value *t = meta_tensor(m, i);
    if (t) e = want_rank(m, i, t, 1, i == m->param - 1 ? 2 : 1);
  }
  if (!e) e = want_float_dtype(m, 0, g->dtype);
  if (e) return e;
  if (idx->dtype != ALLOY_I64 && idx->dtype != ALLOY_I32)
    return meta_error(m, "argument 'indices': expected int32 or int64, got %s", alloy_dtype_name(idx->dtype));
  alloy_dim out[2] = {meta_dim(m, m->param), g->shape[1]};
  if (alloy_dim_lt(m->st, out[0], C(0)) == ALLOY_TRUE)
    return meta_error(m, "argument 'num_weights' must be non-negative");
  return meta_out_tensor(m, 0, g->dtype, out, 2);
}

/* _embedding_bag_per_sample_weights_backward(grad, weight, indices, ...):
 * one gradient per index */
static alloy_error *bw_embedding_bag_weights(alloy_meta *m) {
  const alloy_value *g, *w, *idx, *off, *o2b;
  alloy_error *e = tensor_arg(m, 0, &g);
  if (!e) e = tensor_arg(m, 1, &w);
  if (!e) e = tensor_arg(m, 2, &idx);
  if (!e) e = tensor_arg(m, 3, &off);
  if (!e) e = tensor_arg(m, 4, &o2b);
  if (!e) e = want_rank(m, 0, g, 2, 2);
  if (!e) e = want_rank(m, 1, w, 2, 2);
  if (!e) e = want_rank(m, 2, idx, 1, 1);
  if (!e) e = want_rank(m, 3, off, 1, 1);
  if (!e) e = want_rank(m, 4, o2b, 1, 1);
  return e ? e : meta_out_tensor(m, 0, g->dtype, idx->shape, 1);
}

/* _cdist_backward(grad, x1, x2, p, cdist): x1's rows and columns after the
 * batch dims of x1 and x2 broadcast (ATen returns the expanded gradient
 * and leaves the reduction to autograd) */
static alloy_error *bw_cdist(alloy_meta *m) {
  const alloy_value *g, *x1, *x2;
  alloy_error *e = tensor_arg(m, 0, &g);
  if (!e) e = tensor_arg(m, 1, &x1);
  if (!e) e = tensor_arg(m, 2, &x2);
  if (!e) e = want_rank(m, 1, x1, 2, ALLOY_MAX_RANK);
  if (!e) e = want_rank(m, 2, x2, 2, ALLOY_MAX_RANK);
  if (!e) e = want_float_dtype(m, 1, x1->dtype);
  if (e) return e;
  alloy_dim shape[ALLOY_MAX_RANK];
  int rank;
  if ((e = meta_broadcast(m, x1->shape, x1->rank - 2, x2->shape, x2->rank - 2, shape, &rank))) return e;
  shape[rank] = x1->shape[x1->rank - 2];
  shape[rank + 1] = x1->shape[x1->rank - 1];
  return meta_out_tensor(m, 0, x1->dtype, shape, rank + 2);
}

/* The backward ops of recurrent cells; param: which. Gate gradients have
 * the gates' shape ([B, n H]), bias gradients [n H], the state's gradient
 * the state's shape. */
enum { CELL_LSTM_IMPL, CELL_LSTM, CELL_GRU, CELL_DIFF_LSTM, CELL_DIFF_GRU };

static alloy_error *bw_cell(alloy_meta *m) {
  /* where the gates (or workspace) and the state are, per kind */
  static const struct {
    int gates, state, n;
  } at[] = {
      [CELL_LSTM_IMPL] = {4, 2, 4}, [CELL_LSTM] = {4, 2, 4},     [CELL_GRU] = {1, 0, 3},
      [CELL_DIFF_LSTM] = {2, 6, 4}, [CELL_DIFF_GRU] = {1, 3, 3},
  };
  const alloy_value *gates, *state;
  alloy_error *e = tensor_arg(m, at[m->param].gates, &gates);
  if (!e) e = tensor_arg(m, at[m->param].state, &state);
  if (!e) e = want_rank(m, at[m->param].gates, gates, 2, 2);
  if (!e) e = want_rank(m, at[m->param].state, state, 2, 2);
  if (!e) e = want_float_dtype(m, at[m->param].gates, gates->dtype);
  if (e) return e;
  alloy_dim g[2] = {gates->shape[0], alloy_dim_mul(m->st, state->shape[1], C(at[m->param].n))};
  alloy_dim b = g[1];
  if (m->param != CELL_GRU && never_eq(m, gates->shape[1], g[1]))
    return meta_error(m, "argument '%s' must hold %d gates of the state's size",
                      meta_arg_name(m, at[m->param].gates), at[m->param].n);
  alloy_dtype t = gates->dtype;
  if (m->param == CELL_LSTM_IMPL) {
    if (!(e = meta_out_tensor(m, 0, t, g, 2)) && !(e = meta_out_like(m, 1, state, t)))
      e = meta_out_tensor(m, 2, t, &b, 1);
    return e;
  }
  if (!(e = meta_out_tensor(m, 0, t, g, 2)) && !(e = meta_out_tensor(m, 1, t, g, 2)) &&
      !(e = meta_out_like(m, 2, state, t)) && !(e = meta_out_tensor(m, 3, t, &b, 1)))
    e = meta_out_tensor(m, 4, t, &b, 1);
  return e;
}

/* _scaled_dot_product_efficient_attention_backward(grad_out, query, key,
 * value, attn_bias, ...) -> (grad_query, grad_key, grad_value, grad_bias):
 * the bias's gradient has its shape ([0] without one) */
static alloy_error *bw_efficient_attention(alloy_meta *m) {
  const alloy_value *q, *k, *v, *bias = meta_tensor(m, 4);
  alloy_error *e = tensor_arg(m, 1, &q);
  if (!e) e = tensor_arg(m, 2, &k);
  if (!e) e = tensor_arg(m, 3, &v);
  if (!e) e = meta_out_like(m, 0, q, q->dtype);
  if (!e) e = meta_out_like(m, 1, k, k->dtype);
  if (!e) e = meta_out_like(m, 2, v, v->dtype);
  if (e) return e;
  alloy_dim none = C(0);
  return bias ? meta_out_like(m, 3, bias, bias->dtype) : meta_out_tensor(m, 3, q->dtype, &none, 1);
}

/* --- checked gradients of losses, distances, convolutions ----------------*/

/* nll_loss_backward / nll_loss2d_backward(grad_output, self, target,
 * weight, reduction, ignore_index, total_weight): self [C] or [N, C]
 * (nll_loss2d: [N, C, H, W]), target without the class dim, weight [C],
 * total_weight one element; param: 1 for nll_loss2d. */
static alloy_error *bw_nll(alloy_meta *m) {
  const alloy_value *g, *x, *t, *tw, *w = meta_tensor(m, 3);
  alloy_error *e = tensor_arg(m, 0, &g);
  if (!e) e = tensor_arg(m, 1, &x);
  if (!e) e = tensor_arg(m, 2, &t);
  if (!e) e = tensor_arg(m, 6, &tw);
  if (!e) e = m->param ? want_rank(m, 1, x, 4, 4) : want_rank(m, 1, x, 1, 2);
  if (!e) e = m->param ? want_rank(m, 2, t, 3, 3) : want_rank(m, 2, t, 0, 1);
  if (!e && w) e = want_rank(m, 3, w, 1, 1);
  if (!e) e = want_float_dtype(m, 1, x->dtype);
  if (e) return e;
  if (!alloy_dtype_is_integer(t->dtype))
    return meta_error(m, "argument 'target': expected an integer tensor, got %s", alloy_dtype_name(t->dtype));
  int cd = x->rank < 2 ? 0 : 1;
  alloy_dim want[ALLOY_MAX_RANK];
  for (int k = 0, j = 0; k < x->rank; k++)
    if (k != cd) want[j++] = x->shape[k];
  if ((e = want_shape(m, 2, t, want, x->rank - 1))) return e;
  if (w && never_eq(m, w->shape[0], x->shape[cd]))
    return meta_error(m, "argument 'weight': expected one weight per class");
  return meta_out_like(m, 0, x, x->dtype);
}

/* multi_margin_loss_backward(grad_output, self, target, p, margin, weight,
 * reduction): self [C] or [N, C], target one class per row */
static alloy_error *bw_multi_margin(alloy_meta *m) {
  const alloy_value *g, *x, *t, *w = meta_tensor(m, 5);
  alloy_error *e = tensor_arg(m, 0, &g);
  if (!e) e = tensor_arg(m, 1, &x);
  if (!e) e = tensor_arg(m, 2, &t);
  if (!e) e = want_rank(m, 1, x, 0, 2);
  if (!e) e = want_rank(m, 2, t, 0, 1);
  if (!e && w) e = want_rank(m, 5, w, 1, 1);
  if (!e) e = want_float_dtype(m, 1, x->dtype);
  if (e) return e;
  alloy_dim rows = x->rank == 2 ? x->shape[0] : C(1);
  if (t->rank == 1 && never_eq(m, t->shape[0], rows))
    return meta_error(m, "argument 'target': expected one class per row of self");
  return meta_out_like(m, 0, x, x->dtype);
}

/* multilabel_margin_loss_backward(grad_output, self, target, reduction,
 * is_target): target and is_target have self's shape, [C] or [N, C] */
static alloy_error *bw_multilabel_margin(alloy_meta *m) {
  const alloy_value *g, *x, *t, *it;
  alloy_error *e = tensor_arg(m, 0, &g);
  if (!e) e = tensor_arg(m, 1, &x);
  if (!e) e = tensor_arg(m, 2, &t);
  if (!e) e = tensor_arg(m, 4, &it);
  if (!e) e = want_rank(m, 1, x, 0, 2);
  if (!e) e = want_shape(m, 2, t, x->shape, x->rank);
  if (!e) e = want_shape(m, 4, it, x->shape, x->rank);
  if (!e) e = want_float_dtype(m, 1, x->dtype);
  return e ? e : meta_out_like(m, 0, x, x->dtype);
}

/* _pdist_backward(grad, self, p, pdist): self [N, M], one gradient per pair */
static alloy_error *bw_pdist(alloy_meta *m) {
  const alloy_value *g, *x, *dist;
  alloy_error *e = tensor_arg(m, 0, &g);
  if (!e) e = tensor_arg(m, 1, &x);
  if (!e) e = tensor_arg(m, 3, &dist);
  if (!e) e = want_rank(m, 1, x, 2, 2);
  if (!e) e = want_rank(m, 0, g, 1, 1);
  if (!e) e = want_shape(m, 3, dist, g->shape, 1);
  if (!e) e = want_float_dtype(m, 1, x->dtype);
  if (e) return e;
  alloy_dim n = x->shape[0];
  alloy_dim pairs = alloy_dim_floordiv(m->st, alloy_dim_mul(m->st, n, alloy_dim_sub(m->st, n, C(1))), C(2));
  if (never_eq(m, g->shape[0], pairs))
    return meta_error(m, "argument 'grad': expected one value per pair of rows");
  return meta_out_like(m, 0, x, x->dtype);
}

/* matrix_exp_backward(self, grad): square matrices of one shape */
static alloy_error *bw_matrix_exp(alloy_meta *m) {
  const alloy_value *a, *g;
  alloy_error *e = tensor_arg(m, 0, &a);
  if (!e) e = tensor_arg(m, 1, &g);
  if (!e) e = want_rank(m, 0, a, 2, ALLOY_MAX_RANK);
  if (!e) e = want_shape(m, 1, g, a->shape, a->rank);
  if (!e) e = want_float_dtype(m, 0, a->dtype);
  if (e) return e;
  if (never_eq(m, a->shape[a->rank - 1], a->shape[a->rank - 2]))
    return meta_error(m, "argument 'self': expected square matrices");
  return meta_out_like(m, 0, a, a->dtype);
}

/* conv_tbc_backward(grad, input, weight, bias, pad): [T, B, Cin] input,
 * [K, Cin, Cout] weight, [Cout] bias */
static alloy_error *bw_conv_tbc(alloy_meta *m) {
  const alloy_value *g, *x, *w, *b;
  alloy_error *e = tensor_arg(m, 0, &g);
  if (!e) e = tensor_arg(m, 1, &x);
  if (!e) e = tensor_arg(m, 2, &w);
  if (!e) e = tensor_arg(m, 3, &b);
  if (!e) e = want_rank(m, 0, g, 3, 3);
  if (!e) e = want_rank(m, 1, x, 3, 3);
  if (!e) e = want_rank(m, 2, w, 3, 3);
  if (!e) e = want_rank(m, 3, b, 1, 1);
  if (!e) e = want_float_dtype(m, 1, x->dtype);
  if (!e && never_eq(m, w->shape[1], x->shape[2]))
    e = meta_error(m, "argument 'weight': its input channels must be input's");
  if (!e && never_eq(m, b->shape[0], w->shape[2]))
    e = meta_error(m, "argument 'bias': one per output channel");
  if (!e) e = meta_out_like(m, 0, x, x->dtype);
  if (!e) e = meta_out_like(m, 1, w, w->dtype);
  if (!e) e = meta_out_like(m, 2, b, b->dtype);
  return e;
}

/* _convolution_double_backward(ggI, ggW, ggb, gO, weight, self, ...) ->
 * (ggO, gI, gW): gO, self and weight of one rank, ggb one value per
 * output channel */
static alloy_error *bw_conv_double(alloy_meta *m) {
  const alloy_value *go, *w, *x, *ggb = meta_tensor(m, 2);
  alloy_error *e = tensor_arg(m, 3, &go);
  if (!e) e = tensor_arg(m, 4, &w);
  if (!e) e = tensor_arg(m, 5, &x);
  if (!e) e = want_rank(m, 5, x, 3, 5);
  if (!e) e = want_rank(m, 3, go, x->rank, x->rank);
  if (!e) e = want_rank(m, 4, w, x->rank, x->rank);
  if (!e && ggb) e = want_rank(m, 2, ggb, 1, 1);
  if (!e) e = meta_out_like(m, 0, go, go->dtype);
  if (!e) e = meta_out_like(m, 1, x, x->dtype);
  if (!e) e = meta_out_like(m, 2, w, w->dtype);
  return e;
}

/* grid_sampler_{2,3}d_backward(grad_output, input, grid, ...) ->
 * (grad_input, grad_grid): input [N, C, (D,) H, W], grid [N, (D',) H', W',
 * n], grad_output [N, C, (D',) H', W']; param: n */
static alloy_error *bw_grid_sampler(alloy_meta *m) {
  int n = m->param;
  const alloy_value *g, *x, *grid;
  alloy_error *e = tensor_arg(m, 0, &g);
  if (!e) e = tensor_arg(m, 1, &x);
  if (!e) e = tensor_arg(m, 2, &grid);
  if (!e) e = want_rank(m, 1, x, n + 2, n + 2);
  if (!e) e = want_rank(m, 2, grid, n + 2, n + 2);
  if (!e) e = want_float_dtype(m, 1, x->dtype);
  if (!e) e = want_same_dtype(m, 1, x, 2, grid);
  if (e) return e;
  if (never_eq(m, grid->shape[n + 1], C(n)) || never_eq(m, grid->shape[0], x->shape[0]))
    return meta_error(m, "argument 'grid': expected [N, ..., %d] with input's batch", n);
  alloy_dim want[ALLOY_MAX_RANK] = {x->shape[0], x->shape[1]};
  memcpy(want + 2, grid->shape + 1, sizeof *want * (size_t)n);
  if ((e = want_shape(m, 0, g, want, n + 2))) return e;
  if (!(e = meta_out_like(m, 0, x, x->dtype))) e = meta_out_like(m, 1, grid, grid->dtype);
  return e;
}

/* --- registration -------------------------------------------------------*/

#define G_X PW(0x3)           /* (grad_output, self) */
#define BN_NATIVE BN_ARGS(1, 2, 0)

const alloy_meta_entry alloy_meta_backward[] = {
    /* activations */
    {"aten.tanh_backward.default", bw_pointwise, G_X},
    {"aten.sigmoid_backward.default", bw_pointwise, G_X},
    {"aten.softplus_backward.default", bw_pointwise, G_X},
    {"aten.elu_backward.default", bw_pointwise, PW(0x21)},
    {"aten.hardsigmoid_backward.default", bw_pointwise, G_X},
    {"aten.hardtanh_backward.default", bw_pointwise, G_X},
    {"aten.hardswish_backward.default", bw_pointwise, G_X},
    {"aten.threshold_backward.default", bw_pointwise, G_X | PW_INTS},
    {"aten.leaky_relu_backward.default", bw_pointwise, G_X},
    {"aten.rrelu_with_noise_backward.default", bw_pointwise, PW(0x7) | PW_PROMO(0x3)},
    {"aten.gelu_backward.default", bw_pointwise, G_X},
    {"aten.infinitely_differentiable_gelu_backward.default", bw_pointwise, G_X | PW_TOFLOAT},
    {"aten.mish_backward.default", bw_pointwise, G_X | PW_SELF},
    {"aten.silu_backward.default", bw_pointwise, G_X},
    {"aten.log_sigmoid_backward.default", bw_pointwise, PW(0x7) | PW_SAME},
    {"aten.logit_backward.default", bw_pointwise, G_X},
    {"aten.hardshrink_backward.default", bw_pointwise, G_X},
    {"aten.softshrink_backward.default", bw_pointwise, G_X},
    {"aten._prelu_kernel_backward.default", bw_pointwise, PW(0x7) | PW_SAME | PW_TWICE},
    {"aten.native_dropout_backward.default", bw_pointwise, G_X | PW_PROMO(0x1) | PW_TOFLOAT},
    {"aten.glu_backward.default", bw_glu, 0},
    {"aten._log_softmax_backward_data.default", bw_as_softmax, 0},

    /* losses: the gradient of self */
    {"aten.mse_loss_backward.default", bw_like, LIKE(0, 1)},
    {"aten.smooth_l1_loss_backward.default", bw_like, LIKE(0, 1)},
    {"aten.huber_loss_backward.default", bw_like, LIKE(0, 1)},
    {"aten.soft_margin_loss_backward.default", bw_like, LIKE(0, 1)},
    {"aten.binary_cross_entropy_backward.default", bw_like, LIKE(0, 1)},
    {"aten.nll_loss_backward.default", bw_nll, 0},
    {"aten.nll_loss2d_backward.default", bw_nll, 1},
    {"aten.multi_margin_loss_backward.default", bw_multi_margin, 0},
    {"aten.multilabel_margin_loss_backward.default", bw_multilabel_margin, 0},

    /* views and indexing: the gradient of the viewed tensor */
    {"aten.select_backward.default", bw_sizes, 1},
    {"aten.slice_backward.default", bw_sizes, 1},
    {"aten.diagonal_backward.default", bw_sizes, 1},
    {"aten.unfold_backward.default", bw_unfold, 0},
    {"aten.index_select_backward.default", bw_index_select, 0},
    {"aten.trace_backward.default", bw_sizes, 1},
    {"aten.value_selecting_reduction_backward.default", bw_sizes, 3},
    {"aten.masked_scatter_backward.default", bw_sizes, 2},
    {"aten.masked_select_backward.default", bw_masked_select, 0},
    {"aten.cummaxmin_backward.default", bw_like_shaped, LIKE1(1, 0x5)},
    {"aten.cumprod_backward.default", bw_like_shaped, LIKE1(1, 0x9)},

    /* pooling and padding */
    {"aten.avg_pool3d_backward.default", bw_forward, FWD_AVG_POOL3D},
    {"aten.max_pool3d_with_indices_backward.default", bw_forward, FWD_MAX_POOL3D},
    {"aten.reflection_pad1d_backward.default", bw_forward, FWD_REFLECTION_PAD1D},
    {"aten.reflection_pad2d_backward.default", bw_forward, FWD_REFLECTION_PAD2D},
    {"aten.reflection_pad3d_backward.default", bw_forward, FWD_REFLECTION_PAD3D},
    {"aten.replication_pad1d_backward.default", bw_forward, FWD_REPLICATION_PAD1D},
    {"aten.replication_pad2d_backward.default", bw_forward, FWD_REPLICATION_PAD2D},
    {"aten.replication_pad3d_backward.default", bw_forward, FWD_REPLICATION_PAD3D},
    {"aten.adaptive_max_pool2d_backward.default", bw_indexed_pool, 2},
    {"aten.adaptive_max_pool3d_backward.default", bw_indexed_pool, 3},
    {"aten.fractional_max_pool2d_backward.default", bw_indexed_pool, 2},
    {"aten.fractional_max_pool3d_backward.default", bw_indexed_pool, 3},
    {"aten._adaptive_avg_pool3d_backward.default", bw_adaptive_avg_pool, 3},

    /* upsampling */
    {"aten.upsample_nearest1d_backward.default", bw_upsample, 1},
    {"aten.upsample_nearest2d_backward.default", bw_upsample, 2},
    {"aten.upsample_nearest3d_backward.default", bw_upsample, 3},
    {"aten._upsample_nearest_exact1d_backward.default", bw_upsample, 1},
    {"aten._upsample_nearest_exact2d_backward.default", bw_upsample, 2},
    {"aten._upsample_nearest_exact3d_backward.default", bw_upsample, 3},
    {"aten.upsample_linear1d_backward.default", bw_upsample, 1},
    {"aten.upsample_bilinear2d_backward.default", bw_upsample, 2},
    {"aten.upsample_bicubic2d_backward.default", bw_upsample, 2},
    {"aten.upsample_trilinear3d_backward.default", bw_upsample, 3},
    {"aten._upsample_bilinear2d_aa_backward.default", bw_upsample, 2},
    {"aten._upsample_bicubic2d_aa_backward.default", bw_upsample, 2},

    /* norms */
    {"aten.native_batch_norm_backward.default", bw_batch_norm, BN_NATIVE},
    {"aten.batch_norm_backward.default", bw_batch_norm, BN_NATIVE},
    {"aten._batch_norm_impl_index_backward.default", bw_batch_norm, BN_ARGS(1, 3, 2)},
    {"aten.cudnn_batch_norm_backward.default", bw_batch_norm, BN_ARGS(0, 2, 1)},
    {"aten.miopen_batch_norm_backward.default", bw_batch_norm, BN_ARGS(0, 2, 1)},
    {"aten.batch_norm_backward_reduce.default", bw_batch_norm_reduce, 0},
    {"aten.batch_norm_backward_elemt.default", bw_like, LIKE(0, 1)},
    {"aten._fused_rms_norm_backward.default", bw_rms_norm, 0},
    {"aten._weight_norm_interface_backward.default", bw_like, LIKE(0, 1) | LIKE(1, 2)},
    {"aten._weight_norm_differentiable_backward.default", bw_like, LIKE(0, 1) | LIKE(1, 2)},

    /* convolution */
    {"aten._slow_conv2d_backward.output_mask", bw_like, LIKE(0, 1) | LIKE(1, 2) | DIM0(2, 2)},
    {"aten.conv_tbc_backward.default", bw_conv_tbc, 0},
    {"aten._convolution_double_backward.default", bw_conv_double, 0},

    /* embedding, distances, grids, others */
    {"aten.embedding_backward.default", bw_embedding, 0},
    {"aten._cdist_backward.default", bw_cdist, 0},
    {"aten._pdist_backward.default", bw_pdist, 0},
    {"aten.affine_grid_generator_backward.default", bw_affine_grid, 0},
    {"aten.grid_sampler_2d_backward.default", bw_grid_sampler, 2},
    {"aten.grid_sampler_3d_backward.default", bw_grid_sampler, 3},
    {"aten._grid_sampler_2d_cpu_fallback_backward.default", bw_grid_sampler, 2},
    {"aten.matrix_exp_backward.default", bw_matrix_exp, 0},
    {"aten.to_dense_backward.default", bw_like, LIKE(0, 0)},
    {"aten._masked_softmax_backward.default", bw_like_shaped, LIKE1(0, 0x6)},
    {"aten.glu_jvp.default", bw_glu_jvp, 0},
    {"aten.gather_backward.default", bw_like_shaped, LIKE1(1, 0)},
    {"aten._pack_padded_sequence_backward.default", bw_sizes, 1},
    {"aten._embedding_bag_dense_backward.default", bw_embedding_bag, 5},
    {"aten._embedding_bag_backward.default", bw_embedding_bag, 6},
    {"aten._embedding_bag_per_sample_weights_backward.default", bw_embedding_bag_weights, 0},
    {"aten.fake_quantize_per_tensor_affine_cachemask_backward.default", bw_like_shaped, LIKE1(0, 0x2)},
    {"aten.fake_quantize_per_channel_affine_cachemask_backward.default", bw_like_shaped, LIKE1(0, 0x2)},
    {"aten._scaled_dot_product_flash_attention_for_cpu_backward.default", bw_like,
     LIKE(0, 1) | LIKE(1, 2) | LIKE(2, 3)},
    {"aten._scaled_dot_product_efficient_attention_backward.default", bw_efficient_attention, 0},
    {"aten._thnn_fused_lstm_cell_backward_impl.default", bw_cell, CELL_LSTM_IMPL},
    {"aten._thnn_fused_lstm_cell_backward.default", bw_cell, CELL_LSTM},
    {"aten._thnn_fused_gru_cell_backward.default", bw_cell, CELL_GRU},
    {"aten._thnn_differentiable_lstm_cell_backward.default", bw_cell, CELL_DIFF_LSTM},
    {"aten._thnn_differentiable_gru_cell_backward.default", bw_cell, CELL_DIFF_GRU},
    {NULL, NULL, 0},
};
