/*
 * reference_backend/kernels_pooling.c: reference kernels, nn family:
 * pooling. Average pooling (1-3 d, with its ceil_mode, count_include_pad
 * and divisor_override rules, and the 2-d backward), max pooling (with the
 * indices, and their backward), adaptive average and max pooling,
 * fractional max pooling and max unpooling.
 *
 * A pooled tensor is a stack of planes (every dim before the n spatial
 * ones, batch and channel alike) of 1 to 3 spatial dims, right-aligned in
 * three so that one loop nest serves every n. Indices, as PyTorch returns
 * them, are flat offsets into one input plane (row-major over its spatial
 * dims). Max pooling follows PyTorch's CPU kernels: the first maximum wins,
 * a NaN beats everything (the last NaN of a window wins), and an integer
 * window starts from the type's lowest value.
 *
 * Accumulation order: window sums run sequentially in index order, in double
 * for floats (rounded once on store) and in wrapping int64 for integers.
 * Backward kernels that scatter (max pooling) add into the gradient in its
 * own dtype, rounding each addition as PyTorch's kernel does; those that
 * spread (average pooling) accumulate in double and round once.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference_backend/kernels_nn.h"

/* ---- planes -------------------------------------------------------------*/

/* The spatial part of a pooled tensor: its last n dims right-aligned in
 * three (missing ones of size 1, stride 0), and its planes. */
typedef struct pspace {
  int64_t size[3], st[3], n3; /* n3: elements of a plane */
  int64_t planes;
} pspace;

static void pspace_of(const alloy_kernel_tensor *t, int n, pspace *s) {
  s->n3 = 1;
  s->planes = 1;
  for (int i = 0; i < 3; i++) {
    int d = t->rank - 3 + i;
    bool real = i >= 3 - n;
    s->size[i] = real ? t->sizes[d] : 1;
    s->st[i] = real ? t->strides[d] : 0;
    s->n3 *= s->size[i];
  }
  for (int d = 0; d < t->rank - n; d++) s->planes *= t->sizes[d];
}

/* The element offset of plane p (row-major over the dims before the n
 * spatial ones). */
static int64_t plane_offset(const alloy_kernel_tensor *t, int n, int64_t p) {
  int64_t off = 0;
  for (int d = t->rank - n - 1; d >= 0; d--) {
    off += (p % t->sizes[d]) * t->strides[d];
    p /= t->sizes[d];
  }
  return off;
}

/* The offset, within a plane, of spatial position (i0, i1, i2). */
static int64_t at3(const pspace *s, int64_t i0, int64_t i1, int64_t i2) {
  return i0 * s->st[0] + i1 * s->st[1] + i2 * s->st[2];
}

/* ... and of the flat index PyTorch's pooling indices hold. */
static int64_t at_flat(const pspace *s, int64_t flat) {
  int64_t i2 = flat % s->size[2], i1 = flat / s->size[2] % s->size[1],
          i0 = flat / (s->size[2] * s->size[1]);
  return at3(s, i0, i1, i2);
}

/* ---- arguments ----------------------------------------------------------*/

/* An int list argument of n spatial dims right-aligned in three: one value
 * repeats, none (or an empty list) takes the fallback list (or dflt). */
static void spatial_arg(const alloy_kernel_call *c, const char *name, int n, int64_t dflt,
                        const int64_t *fallback, int64_t *out) {
  int64_t v[MAX_RANK];
  int k = ref_ints(c, name, v, MAX_RANK);
  for (int i = 0; i < 3; i++) {
    int j = i - (3 - n);
    if (j < 0) out[i] = dflt;
    else if (k <= 0) out[i] = fallback ? fallback[i] : dflt;
    else out[i] = v[k == 1 ? 0 : j];
  }
}

/* kernel_size, stride (empty: the kernel), padding and dilation. */
typedef struct pool_args {
  int64_t k[3], s[3], p[3], d[3];
} pool_args;

static void pool_args_of(const alloy_kernel_call *c, int n, pool_args *a) {
  spatial_arg(c, "kernel_size", n, 1, NULL, a->k);
  for (int i = 0; i < 3 - n; i++) a->k[i] = 1;
  spatial_arg(c, "stride", n, 1, a->k, a->s);
  spatial_arg(c, "padding", n, 0, NULL, a->p);
  spatial_arg(c, "dilation", n, 1, NULL, a->d);
}

/* ---- average pooling ----------------------------------------------------*/

/* The window of output position o along one dim, clipped to the input, and
 * the size it has counting the padding (PyTorch's pool_size). */
static void avg_window(int64_t o, int64_t k, int64_t s, int64_t p, int64_t in, int64_t *lo,
                       int64_t *hi, int64_t *padded) {
  *lo = o * s - p;
  *hi = min64(*lo + k, in + p);
  *padded = *hi - *lo;
  *lo = max64(*lo, 0);
  *hi = min64(*hi, in);
}

/* The divisor of a window: divisor_override, else its size with or
 * without the padding. */
typedef struct avg_rule {
  bool include_pad, has_override;
  int64_t override;
} avg_rule;

static void avg_rule_of(const alloy_kernel_call *c, avg_rule *r) {
  r->include_pad = true;
  ref_bool(c, "count_include_pad", &r->include_pad);
  r->has_override = ref_int(c, "divisor_override", &r->override);
}

/* Walks the windows of an average pooling of x's planes into `pos`
 * positions, calling visit for each (plane, output position, window,
 * divisor). Empty windows are visited with divisor 0. */
typedef void (*avg_visit)(void *ctx, int64_t plane, const int64_t *o, const int64_t *lo,
                          const int64_t *hi, int64_t divisor);

static void avg_walk(const pspace *in, const pspace *pos, const pool_args *a, const avg_rule *r,
                     avg_visit visit, void *ctx) {
  for (int64_t pl = 0; pl < in->planes; pl++)
    for (int64_t o0 = 0; o0 < pos->size[0]; o0++)
      for (int64_t o1 = 0; o1 < pos->size[1]; o1++)
        for (int64_t o2 = 0; o2 < pos->size[2]; o2++) {
          int64_t o[3] = {o0, o1, o2}, lo[3], hi[3], padded = 1, inside = 1;
          for (int i = 0; i < 3; i++) {
            int64_t ps;
            avg_window(o[i], a->k[i], a->s[i], a->p[i], in->size[i], &lo[i], &hi[i], &ps);
            padded *= ps;
            inside *= max64(hi[i] - lo[i], 0);
          }
          bool empty = lo[0] >= hi[0] || lo[1] >= hi[1] || lo[2] >= hi[2];
          int64_t div = r->has_override ? r->override : r->include_pad ? padded : inside;
          visit(ctx, pl, o, lo, hi, empty ? 0 : div);
        }
}

typedef struct avg_fwd {
  const alloy_kernel_tensor *x, *out;
  pspace xs, os;
  int n;
} avg_fwd;

static void avg_fwd_visit(void *ctx, int64_t pl, const int64_t *o, const int64_t *lo,
                          const int64_t *hi, int64_t div) {
  const avg_fwd *f = ctx;
  int64_t xo = plane_offset(f->x, f->n, pl);
  int64_t oo = plane_offset(f->out, f->n, pl) + at3(&f->os, o[0], o[1], o[2]);
  bool fl = is_float(f->out->dtype);
  /* summed in opmath: float below float64 (large values overflow to inf) */
  alloy_dtype op = f->out->dtype == ALLOY_F64 ? ALLOY_F64 : ALLOY_F32;
  double sf = 0.0;
  uint64_t si = 0;
  for (int64_t i0 = lo[0]; div && i0 < hi[0]; i0++)
    for (int64_t i1 = lo[1]; i1 < hi[1]; i1++)
      for (int64_t i2 = lo[2]; i2 < hi[2]; i2++) {
        int64_t off = xo + at3(&f->xs, i0, i1, i2);
        if (fl) sf = round_to(op, sf + ref_load_f(f->x->data, f->x->dtype, off));
        else si += (uint64_t)ref_load_i(f->x->data, f->x->dtype, off);
      }
  if (fl) ref_store_f(f->out->data, f->out->dtype, oo, div ? sf / (double)div : 0.0);
  else ref_store_i(f->out->data, f->out->dtype, oo, div ? (int64_t)si / div : 0);
}

/* avg_pool{1,2,3}d(self, kernel_size, stride, padding, ceil_mode,
 * count_include_pad[, divisor_override]): ceil_mode only shapes the output.
 * Integers divide with C's truncation, as PyTorch's integer kernel does. */
static int avg_pool(const alloy_kernel_call *c, int n) {
  avg_fwd f = {.x = ref_tensor(c, "self"), .out = &c->outputs[0], .n = n};
  if (!f.x) return ref_fail(c, "missing tensor argument");
  pool_args a;
  avg_rule r;
  pool_args_of(c, n, &a);
  avg_rule_of(c, &r);
  pspace_of(f.x, n, &f.xs);
  pspace_of(f.out, n, &f.os);
  avg_walk(&f.xs, &f.os, &a, &r, avg_fwd_visit, &f);
  return 0;
}

static int k_avg_pool1d(const alloy_kernel_call *c) { return avg_pool(c, 1); }
static int k_avg_pool2d(const alloy_kernel_call *c) { return avg_pool(c, 2); }
static int k_avg_pool3d(const alloy_kernel_call *c) { return avg_pool(c, 3); }

/* A gradient being spread over the input's planes, as PyTorch's CPU kernel
 * does it: each output's gradient divided in the dtype (integers
 * truncating), then added to its window's elements in the dtype (each sum
 * rounded; integers wrap), outputs in order. Dense over the input. */
typedef struct avg_bwd {
  const alloy_kernel_tensor *go;
  pspace gs, is;
  int n;
  alloy_dtype t;
  double *acc;
  uint64_t *acci; /* integer dtypes */
} avg_bwd;

static void avg_bwd_visit(void *ctx, int64_t pl, const int64_t *o, const int64_t *lo,
                          const int64_t *hi, int64_t div) {
  const avg_bwd *b = ctx;
  if (!div) return;
  int64_t off = plane_offset(b->go, b->n, pl) + at3(&b->gs, o[0], o[1], o[2]);
  double g = 0.0;
  uint64_t gi = 0;
  if (b->acci) {
    int64_t v = ref_load_i(b->go->data, b->go->dtype, off);
    gi = (uint64_t)(div == -1 && v == INT64_MIN ? v : v / div);
  } else {
    g = round_to(b->t, ref_load_f(b->go->data, b->go->dtype, off) / (double)div);
  }
  int64_t base = pl * b->is.n3;
  for (int64_t i0 = lo[0]; i0 < hi[0]; i0++)
    for (int64_t i1 = lo[1]; i1 < hi[1]; i1++)
      for (int64_t i2 = lo[2]; i2 < hi[2]; i2++) {
        int64_t k = base + (i0 * b->is.size[1] + i1) * b->is.size[2] + i2;
        if (b->acci) b->acci[k] += gi;
        else b->acc[k] = round_to(b->t, b->acc[k] + g);
      }
}

/* Stores a dense double buffer of t's elements (row-major) into t. */
static void store_dense(const alloy_kernel_tensor *t, const double *v) {
  ref_iter it;
  ref_iter_init(&it, t, NULL, 0);
  for (int64_t i = 0; ref_iter_next(&it); i++) ref_store_f(t->data, t->dtype, it.offset[0], v[i]);
}

/* avg_pool2d_backward(grad_output, self, kernel_size, stride, padding,
 * ceil_mode, count_include_pad, divisor_override): each output's gradient,
 * divided as the forward divided, spread over its window. */
static int k_avg_pool2d_backward(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *gi = &c->outputs[0], *x = ref_tensor(c, "self");
  avg_bwd b = {.go = ref_tensor(c, "grad_output"), .n = 2};
  if (!b.go || !x) return ref_fail(c, "missing tensor argument");
  pool_args a;
  avg_rule r;
  pool_args_of(c, 2, &a);
  avg_rule_of(c, &r);
  pspace_of(gi, 2, &b.is);
  pspace_of(b.go, 2, &b.gs);
  b.t = gi->dtype;
  size_t n = (size_t)max64(1, ref_numel(gi));
  if (is_float(b.t)) b.acc = calloc(n, sizeof(double));
  else b.acci = calloc(n, sizeof(uint64_t));
  if (!b.acc && !b.acci) return ref_fail(c, "out of memory");
  avg_walk(&b.is, &b.gs, &a, &r, avg_bwd_visit, &b);
  if (b.acc) {
    store_dense(gi, b.acc);
  } else {
    ref_iter it;
    ref_iter_init(&it, gi, NULL, 0);
    for (int64_t i = 0; ref_iter_next(&it); i++) ref_store_i(gi->data, b.t, it.offset[0], (int64_t)b.acci[i]);
  }
  free(b.acc);
  free(b.acci);
  return 0;
}

/* ---- max pooling --------------------------------------------------------*/

/* The running maximum of a window, PyTorch's rule: a larger value or any
 * NaN replaces it. Integers compare as integers. */
typedef struct maxacc {
  bool fl;
  double vf;
  int64_t vi, index;
} maxacc;

static void maxacc_init(maxacc *m, alloy_dtype t, int64_t first_index) {
  m->fl = is_float(t);
  m->vf = -INFINITY;
  m->vi = INT64_MIN;
  m->index = first_index;
}

static void maxacc_add(maxacc *m, const alloy_kernel_tensor *x, int64_t off, int64_t index) {
  if (m->fl) {
    double v = ref_load_f(x->data, x->dtype, off);
    if (v > m->vf || isnan(v)) {
      m->vf = v;
      m->index = index;
    }
  } else {
    int64_t v = ref_load_i(x->data, x->dtype, off);
    if (v > m->vi) {
      m->vi = v;
      m->index = index;
    }
  }
}

static void maxacc_store(const maxacc *m, const alloy_kernel_tensor *out, int64_t off) {
  if (m->fl) ref_store_f(out->data, out->dtype, off, m->vf);
  else ref_store_i(out->data, out->dtype, off, m->vi);
}

/* max_pool{2,3}d[_with_indices](self, kernel_size, stride, padding,
 * dilation, ceil_mode): a window starts at its first in-range tap (stepping
 * by the dilation past the padding). */
static int max_pool(const alloy_kernel_call *c, int n, bool with_indices) {
  const alloy_kernel_tensor *x = ref_tensor(c, "self"), *out = &c->outputs[0];
  const alloy_kernel_tensor *idx = with_indices ? &c->outputs[1] : NULL;
  if (!x) return ref_fail(c, "missing tensor argument");
  pool_args a;
  pool_args_of(c, n, &a);
  pspace xs, os;
  pspace_of(x, n, &xs);
  pspace_of(out, n, &os);
  for (int64_t pl = 0; pl < xs.planes; pl++) {
    int64_t xo = plane_offset(x, n, pl), oo = plane_offset(out, n, pl);
    int64_t io = idx ? plane_offset(idx, n, pl) : 0;
    for (int64_t o0 = 0; o0 < os.size[0]; o0++)
      for (int64_t o1 = 0; o1 < os.size[1]; o1++)
        for (int64_t o2 = 0; o2 < os.size[2]; o2++) {
          int64_t o[3] = {o0, o1, o2}, lo[3], hi[3];
          for (int i = 0; i < 3; i++) {
            lo[i] = o[i] * a.s[i] - a.p[i];
            hi[i] = min64(lo[i] + (a.k[i] - 1) * a.d[i] + 1, xs.size[i]);
            while (lo[i] < 0) lo[i] += a.d[i];
          }
          maxacc m;
          maxacc_init(&m, x->dtype, (lo[0] * xs.size[1] + lo[1]) * xs.size[2] + lo[2]);
          for (int64_t i0 = lo[0]; i0 < hi[0]; i0 += a.d[0])
            for (int64_t i1 = lo[1]; i1 < hi[1]; i1 += a.d[1])
              for (int64_t i2 = lo[2]; i2 < hi[2]; i2 += a.d[2])
                maxacc_add(&m, x, xo + at3(&xs, i0, i1, i2), (i0 * xs.size[1] + i1) * xs.size[2] + i2);
          maxacc_store(&m, out, oo + at3(&os, o0, o1, o2));
          if (idx) ref_store_i(idx->data, idx->dtype, io + at3(&os, o0, o1, o2), m.index);
        }
  }
  return 0;
}

static int k_max_pool2d(const alloy_kernel_call *c) { return max_pool(c, 2, false); }
static int k_max_pool2d_with_indices(const alloy_kernel_call *c) { return max_pool(c, 2, true); }
static int k_max_pool3d_with_indices(const alloy_kernel_call *c) { return max_pool(c, 3, true); }

/* max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride,
 * padding, dilation, ceil_mode, indices): each gradient added at its
 * index (-1: none), in the gradient's dtype. */
static int k_max_pool2d_backward(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *gi = &c->outputs[0], *go = ref_tensor(c, "grad_output"),
                            *idx = ref_tensor(c, "indices");
  if (!go || !idx) return ref_fail(c, "missing tensor argument");
  int n = 2;
  pspace is, gs, xs;
  pspace_of(gi, n, &is);
  pspace_of(go, n, &gs);
  pspace_of(idx, n, &xs);
  zero_fill(gi);
  for (int64_t pl = 0; pl < is.planes; pl++) {
    int64_t io = plane_offset(gi, n, pl), go_o = plane_offset(go, n, pl), xo = plane_offset(idx, n, pl);
    for (int64_t o0 = 0; o0 < gs.size[0]; o0++)
      for (int64_t o1 = 0; o1 < gs.size[1]; o1++)
        for (int64_t o2 = 0; o2 < gs.size[2]; o2++) {
          int64_t k = ref_load_i(idx->data, idx->dtype, xo + at3(&xs, o0, o1, o2));
          if (k == -1) continue;
          if (k < 0 || k >= is.n3)
            return ref_fail(c, "max_pool2d_with_indices_backward: index %lld (plane %lld, output "
                            "position [%lld, %lld, %lld]) is out of range for an input plane of "
                            "%lld elements", (long long)k, (long long)pl, (long long)o0,
                            (long long)o1, (long long)o2, (long long)is.n3);
          int64_t off = io + at_flat(&is, k);
          ref_store_f(gi->data, gi->dtype, off,
                      ref_load_f(gi->data, gi->dtype, off) +
                          ref_load_f(go->data, go->dtype, go_o + at3(&gs, o0, o1, o2)));
        }
  }
  return 0;
}

/* ---- adaptive pooling ---------------------------------------------------*/

/* PyTorch's adaptive windows: [floor(o * in / out), ceil((o + 1) * in /
 * out)). */
static int64_t adaptive_start(int64_t o, int64_t out, int64_t in) {
  return (o / out) * in + ((o % out) * in) / out;
}
static int64_t adaptive_end(int64_t o, int64_t out, int64_t in) {
  return 1 + ((o + 1) * in - 1) / out;
}

/* Visits the adaptive windows of `pos` positions over `in`, per plane. */
typedef void (*win_visit)(void *ctx, int64_t plane, const int64_t *o, const int64_t *lo,
                          const int64_t *hi);

static void adaptive_walk(const pspace *in, const pspace *pos, win_visit visit, void *ctx) {
  for (int64_t pl = 0; pl < in->planes; pl++)
    for (int64_t o0 = 0; o0 < pos->size[0]; o0++)
      for (int64_t o1 = 0; o1 < pos->size[1]; o1++)
        for (int64_t o2 = 0; o2 < pos->size[2]; o2++) {
          int64_t o[3] = {o0, o1, o2}, lo[3], hi[3];
          for (int i = 0; i < 3; i++) {
            lo[i] = adaptive_start(o[i], pos->size[i], in->size[i]);
            hi[i] = adaptive_end(o[i], pos->size[i], in->size[i]);
          }
          visit(ctx, pl, o, lo, hi);
        }
}

typedef struct adaptive {
  const alloy_kernel_tensor *x, *out, *idx;
  pspace xs, os;
  int n;
  double *acc; /* the backward's gradient */
} adaptive;

/* The mean, divided by each window extent in turn as PyTorch does. Its 3-d
 * kernel sums and divides in the input's dtype (each step rounded to it);
 * the 1-d and 2-d ones in opmath (float below float64: a sum of large
 * values overflows to inf). */
static void adaptive_avg_visit(void *ctx, int64_t pl, const int64_t *o, const int64_t *lo,
                               const int64_t *hi) {
  const adaptive *a = ctx;
  int64_t xo = plane_offset(a->x, a->n, pl);
  alloy_dtype t = a->n == 3 ? a->out->dtype : a->out->dtype == ALLOY_F64 ? ALLOY_F64 : ALLOY_F32;
  double s = 0.0;
  for (int64_t i0 = lo[0]; i0 < hi[0]; i0++)
    for (int64_t i1 = lo[1]; i1 < hi[1]; i1++)
      for (int64_t i2 = lo[2]; i2 < hi[2]; i2++)
        s = round_to(t, s + ref_load_f(a->x->data, a->x->dtype, xo + at3(&a->xs, i0, i1, i2)));
  for (int i = 3 - a->n; i < 3; i++) s = round_to(t, s / (double)(hi[i] - lo[i]));
  ref_store_f(a->out->data, a->out->dtype,
              plane_offset(a->out, a->n, pl) + at3(&a->os, o[0], o[1], o[2]), s);
}

static void adaptive_max_visit(void *ctx, int64_t pl, const int64_t *o, const int64_t *lo,
                               const int64_t *hi) {
  const adaptive *a = ctx;
  int64_t xo = plane_offset(a->x, a->n, pl);
  maxacc m;
  maxacc_init(&m, a->x->dtype, (lo[0] * a->xs.size[1] + lo[1]) * a->xs.size[2] + lo[2]);
  for (int64_t i0 = lo[0]; i0 < hi[0]; i0++)
    for (int64_t i1 = lo[1]; i1 < hi[1]; i1++)
      for (int64_t i2 = lo[2]; i2 < hi[2]; i2++)
        maxacc_add(&m, a->x, xo + at3(&a->xs, i0, i1, i2), (i0 * a->xs.size[1] + i1) * a->xs.size[2] + i2);
  maxacc_store(&m, a->out, plane_offset(a->out, a->n, pl) + at3(&a->os, o[0], o[1], o[2]));
  ref_store_i(a->idx->data, a->idx->dtype,
              plane_offset(a->idx, a->n, pl) + at3(&a->os, o[0], o[1], o[2]), m.index);
}

/* adaptive_avg_pool{1,2,3}d / _adaptive_avg_pool{2,3}d(self, output_size)
 * and adaptive_max_pool{2,3}d(self, output_size) -> (out, indices): the
 * output sizes are out's. */
static int adaptive_pool(const alloy_kernel_call *c, int n, bool max) {
  adaptive a = {.x = ref_tensor(c, "self"), .out = &c->outputs[0],
                .idx = max ? &c->outputs[1] : NULL, .n = n};
  if (!a.x) return ref_fail(c, "missing tensor argument");
  pspace_of(a.x, n, &a.xs);
  pspace_of(a.out, n, &a.os);
  adaptive_walk(&a.xs, &a.os, max ? adaptive_max_visit : adaptive_avg_visit, &a);
  return 0;
}

static int k_adaptive_avg_pool1d(const alloy_kernel_call *c) { return adaptive_pool(c, 1, false); }
static int k_adaptive_avg_pool2d(const alloy_kernel_call *c) { return adaptive_pool(c, 2, false); }
static int k_adaptive_avg_pool3d(const alloy_kernel_call *c) { return adaptive_pool(c, 3, false); }
static int k_adaptive_max_pool2d(const alloy_kernel_call *c) { return adaptive_pool(c, 2, true); }
static int k_adaptive_max_pool3d(const alloy_kernel_call *c) { return adaptive_pool(c, 3, true); }

static void adaptive_avg_bwd_visit(void *ctx, int64_t pl, const int64_t *o, const int64_t *lo,
                                   const int64_t *hi) {
  const adaptive *a = ctx; /* x: grad_output (positions os), out: grad_input (xs) */
  double g = ref_load_f(a->x->data, a->x->dtype,
                        plane_offset(a->x, a->n, pl) + at3(&a->os, o[0], o[1], o[2]));
  alloy_dtype t = a->out->dtype;
  for (int i = 3 - a->n; i < 3; i++) g = round_to(t, g / (double)(hi[i] - lo[i]));
  double *plane = a->acc + pl * a->xs.n3;
  for (int64_t i0 = lo[0]; i0 < hi[0]; i0++)
    for (int64_t i1 = lo[1]; i1 < hi[1]; i1++)
      for (int64_t i2 = lo[2]; i2 < hi[2]; i2++) {
        double *v = &plane[(i0 * a->xs.size[1] + i1) * a->xs.size[2] + i2];
        *v = round_to(t, *v + g);
      }
}

/* _adaptive_avg_pool2d_backward(grad_output, self): each output's gradient,
 * divided by its window's extents, spread over the window. As PyTorch's
 * CPU kernel: divided by each extent in turn and added up in the dtype
 * (each step rounded), outputs in order. */
static int k_adaptive_avg_pool2d_backward(const alloy_kernel_call *c) {
  adaptive a = {.x = ref_tensor(c, "grad_output"), .out = &c->outputs[0], .n = 2};
  if (!a.x) return ref_fail(c, "missing tensor argument");
  pspace_of(a.out, 2, &a.xs);
  pspace_of(a.x, 2, &a.os);
  a.acc = calloc((size_t)max64(1, ref_numel(a.out)), sizeof(double));
  if (!a.acc) return ref_fail(c, "missing tensor argument");
  adaptive_walk(&a.xs, &a.os, adaptive_avg_bwd_visit, &a);
  store_dense(a.out, a.acc);
  free(a.acc);
  return 0;
}

/* ---- fractional max pooling ---------------------------------------------*/

/* PyTorch's interval starts for one dim, computed in the samples' dtype
 * (every operation rounded to it): start[i] = int((i + u) * alpha) -
 * int(u * alpha) with alpha = (in - k) / (out - 1); the last window ends
 * at the input's end. */
static void fractional_starts(double u, alloy_dtype t, int64_t in, int64_t out, int64_t k,
                              int64_t *start) {
  if (out > 1) {
    double alpha = round_to(t, round_to(t, (double)(in - k)) / round_to(t, (double)(out - 1)));
    for (int64_t i = 0; i < out - 1; i++)
      start[i] = (int64_t)(int)round_to(t, round_to(t, (double)i + u) * alpha) -
                 (int64_t)(int)round_to(t, u * alpha);
  }
  if (out > 0) start[out - 1] = in - k;
}

/* fractional_max_pool{2,3}d(self, kernel_size, output_size, random_samples)
 * -> (out, indices). random_samples (N, C, n) holds one sample per plane
 * and dim: for 2-d (w, h), for 3-d (t, h, w), as PyTorch reads them. */
static int fractional_max_pool(const alloy_kernel_call *c, int n) {
  const alloy_kernel_tensor *x = ref_tensor(c, "self"), *rs = ref_tensor(c, "random_samples"),
                            *out = &c->outputs[0], *idx = &c->outputs[1];
  if (!x || !rs) return ref_fail(c, "missing tensor argument");
  int64_t k[3];
  spatial_arg(c, "kernel_size", n, 1, NULL, k);
  pspace xs, os;
  pspace_of(x, n, &xs);
  pspace_of(out, n, &os);
  /* the sample index (in random_samples' last dim) for each of the 3 dims */
  static const int which2[3] = {-1, 1, 0}, which3[3] = {0, 1, 2};
  const int *which = n == 2 ? which2 : which3;
  int64_t channels = x->sizes[x->rank - n - 1];
  int64_t *starts = malloc(sizeof(int64_t) * (size_t)max64(1, os.size[0] + os.size[1] + os.size[2]));
  if (!starts) return ref_fail(c, "out of memory");
  int64_t *st[3] = {starts, starts + os.size[0], starts + os.size[0] + os.size[1]};
  for (int64_t pl = 0; pl < xs.planes; pl++) {
    int64_t b = pl / channels, ch = pl % channels;
    for (int i = 0; i < 3; i++) {
      if (which[i] < 0) {
        st[i][0] = 0;
        continue;
      }
      double u = ref_load_f(rs->data, rs->dtype,
                            b * rs->strides[0] + ch * rs->strides[1] + which[i] * rs->strides[2]);
      fractional_starts(u, rs->dtype, xs.size[i], os.size[i], k[i], st[i]);
    }
    int64_t xo = plane_offset(x, n, pl), oo = plane_offset(out, n, pl), io = plane_offset(idx, n, pl);
    for (int64_t o0 = 0; o0 < os.size[0]; o0++)
      for (int64_t o1 = 0; o1 < os.size[1]; o1++)
        for (int64_t o2 = 0; o2 < os.size[2]; o2++) {
          int64_t lo[3] = {st[0][o0], st[1][o1], st[2][o2]};
          maxacc m;
          maxacc_init(&m, x->dtype, (lo[0] * xs.size[1] + lo[1]) * xs.size[2] + lo[2]);
          for (int64_t i0 = lo[0]; i0 < lo[0] + k[0]; i0++)
            for (int64_t i1 = lo[1]; i1 < lo[1] + k[1]; i1++)
              for (int64_t i2 = lo[2]; i2 < lo[2] + k[2]; i2++) {
                if (i0 < 0 || i1 < 0 || i2 < 0 || i0 >= xs.size[0] || i1 >= xs.size[1] || i2 >= xs.size[2]) {
                  free(starts);
                  return ref_fail(c, "fractional_max_pool: a window leaves the input");
                }
                maxacc_add(&m, x, xo + at3(&xs, i0, i1, i2), (i0 * xs.size[1] + i1) * xs.size[2] + i2);
              }
          maxacc_store(&m, out, oo + at3(&os, o0, o1, o2));
          ref_store_i(idx->data, idx->dtype, io + at3(&os, o0, o1, o2), m.index);
        }
  }
  free(starts);
  return 0;
}

static int k_fractional_max_pool2d(const alloy_kernel_call *c) { return fractional_max_pool(c, 2); }
static int k_fractional_max_pool3d(const alloy_kernel_call *c) { return fractional_max_pool(c, 3); }

/* ---- unpooling ----------------------------------------------------------*/

/* max_unpool2d(self, indices, output_size) and max_unpool3d(self, indices,
 * output_size, stride, padding): zeros, and each input value written at its
 * flat index in its output plane (in input order: a later duplicate wins).
 * An index outside the plane is an error, as in PyTorch. */
static int max_unpool(const alloy_kernel_call *c, int n) {
  const alloy_kernel_tensor *x = ref_tensor(c, "self"), *idx = ref_tensor(c, "indices"),
                            *out = &c->outputs[0];
  if (!x || !idx) return ref_fail(c, "missing tensor argument");
  pspace xs, is, os;
  pspace_of(x, n, &xs);
  pspace_of(idx, n, &is);
  pspace_of(out, n, &os);
  zero_fill(out);
  for (int64_t pl = 0; pl < xs.planes; pl++) {
    int64_t xo = plane_offset(x, n, pl), io = plane_offset(idx, n, pl), oo = plane_offset(out, n, pl);
    for (int64_t i0 = 0; i0 < xs.size[0]; i0++)
      for (int64_t i1 = 0; i1 < xs.size[1]; i1++)
        for (int64_t i2 = 0; i2 < xs.size[2]; i2++) {
          int64_t k = ref_load_i(idx->data, idx->dtype, io + at3(&is, i0, i1, i2));
          if (k < 0 || k >= os.n3)
            return ref_fail(c, "max_unpool: found an invalid max index %lld (plane %lld, position "
                            "[%lld, %lld, %lld]) for an output plane of %lld elements", (long long)k,
                            (long long)pl, (long long)i0, (long long)i1, (long long)i2,
                            (long long)os.n3);
          int64_t src = xo + at3(&xs, i0, i1, i2), dst = oo + at_flat(&os, k);
          if (is_float(out->dtype)) ref_store_f(out->data, out->dtype, dst, ref_load_f(x->data, x->dtype, src));
          else ref_store_i(out->data, out->dtype, dst, ref_load_i(x->data, x->dtype, src));
        }
  }
  return 0;
}

static int k_max_unpool2d(const alloy_kernel_call *c) { return max_unpool(c, 2); }
static int k_max_unpool3d(const alloy_kernel_call *c) { return max_unpool(c, 3); }


const alloy_kernel ref_kernels_pooling[] = {
    REF_KERNEL("aten.avg_pool1d.default", k_avg_pool1d),
    REF_KERNEL("aten.avg_pool2d.default", k_avg_pool2d),
    REF_KERNEL("aten.avg_pool3d.default", k_avg_pool3d),
    REF_KERNEL("aten.avg_pool2d_backward.default", k_avg_pool2d_backward),
    REF_KERNEL("aten.max_pool2d.default", k_max_pool2d),
    REF_KERNEL("aten.max_pool2d_with_indices.default", k_max_pool2d_with_indices),
    REF_KERNEL("aten.max_pool3d_with_indices.default", k_max_pool3d_with_indices),
    REF_KERNEL("aten.max_pool2d_with_indices_backward.default", k_max_pool2d_backward),
    REF_KERNEL("aten.adaptive_avg_pool1d.default", k_adaptive_avg_pool1d),
    REF_KERNEL("aten.adaptive_avg_pool2d.default", k_adaptive_avg_pool2d),
    REF_KERNEL("aten._adaptive_avg_pool2d.default", k_adaptive_avg_pool2d),
    REF_KERNEL("aten._adaptive_avg_pool3d.default", k_adaptive_avg_pool3d),
    REF_KERNEL("aten._adaptive_avg_pool2d_backward.default", k_adaptive_avg_pool2d_backward),
    REF_KERNEL("aten.adaptive_max_pool2d.default", k_adaptive_max_pool2d),
    REF_KERNEL("aten.adaptive_max_pool3d.default", k_adaptive_max_pool3d),
    REF_KERNEL("aten.fractional_max_pool2d.default", k_fractional_max_pool2d),
    REF_KERNEL("aten.fractional_max_pool3d.default", k_fractional_max_pool3d),
    REF_KERNEL("aten.max_unpool2d.default", k_max_unpool2d),
    REF_KERNEL("aten.max_unpool3d.default", k_max_unpool3d),
    {NULL, NULL, NULL, NULL},
};
