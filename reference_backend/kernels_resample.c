/*
 * reference_backend/kernels_resample.c: reference kernels, nn family:
 * resampling. Upsampling (nearest, nearest-exact, linear, bilinear,
 * bicubic, trilinear, antialiased bilinear; sizes given or scale factors)
 * and grid sampling (2-d bilinear, nearest and bicubic, 3-d trilinear and
 * nearest; zeros, border and reflection padding).
 *
 * Upsampling is separable: for each output index of each spatial dim a
 * short list of (input index, weight) taps, computed exactly as PyTorch's
 * CPU kernels compute them: the scale and source index in opmath (float
 * for float32 and below, double for float64, emulated by rounding each
 * step, and fusing the multiply-adds its compiled code fuses), the
 * interpolation weights stored in the tensor's dtype. An output is then
 * the nested weighted sum over the taps of each dim, outermost dim first,
 * in opmath and rounded once on store (tap_sum: PyTorch's order and fused
 * steps, which sums that cancel show); the antialiased kernel instead
 * makes one pass per resized dim, last first, each stored in the dtype.
 * uint8 bilinear, bicubic and antialiased bilinear take PyTorch's fixed
 * point path instead (up_uint8).
 *
 * Accumulation order: grid sampling sums its corners in PyTorch's order
 * (nw, ne, sw, se; then the bottom layer in 3-d), in double for float32
 * and float64 and in the dtype itself (each step rounded, as PyTorch's
 * scalar kernels compute) for float16 and bfloat16.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference_backend/kernels_nn.h"

/* A float list argument (scale_factors); returns its length, or -1 when it
 * is None or absent. */
/* ---- the taps of one dim -------------------------------------------------*/

typedef enum { UP_NEAREST, UP_NEAREST_EXACT, UP_LINEAR, UP_CUBIC, UP_LINEAR_AA } up_mode;

/* For each output index: n taps at idx[o * max + k] with weight w[...]. */
typedef struct taps {
  int64_t max;
  int64_t *idx;
  double *w;
  int64_t *n;
} taps;

/* PyTorch's area_pixel_compute_scale, in arithmetic op. */
static double pixel_scale(alloy_dtype op, int64_t in, int64_t out, bool align, bool has_scale,
                          double scale) {
  if (align) return out > 1 ? round_to(op, (double)(in - 1) / (double)(out - 1)) : 0.0;
  if (has_scale && scale > 0.0) return round_to(op, 1.0 / scale);
  return round_to(op, (double)in / (double)out);
}

/* A product rounded to op, or a fused multiply-add in op: PyTorch's
 * compiled kernels contract `a * b + c` where the compiler chose to (found
 * by matching their weights and sums bit for bit). */
static double op_mul(alloy_dtype op, double a, double b) { return round_to(op, a * b); }
static double op_fma(alloy_dtype op, double a, double b, double c) {
  return op == ALLOY_F64 ? fma(a, b, c) : (double)fmaf((float)a, (float)b, (float)c);
}

/* PyTorch's area_pixel_compute_source_index, in arithmetic op:
 * scale (o + 0.5) - 0.5 fused. */
static double source_index(alloy_dtype op, double scale, int64_t o, bool align, bool cubic) {
  if (align) return round_to(op, scale * (double)o);
  double src = op_fma(op, scale, round_to(op, (double)o + 0.5), -0.5);
  return !cubic && src < 0.0 ? 0.0 : src;
}

/* floorf of a value as a float holds it */
static int64_t floor_f(double v) { return (int64_t)floorf((float)v); }

/* Keys' cubic convolution kernels (A = -0.75 for upsampling). */
static double cubic1(double x, double a) { return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0; }
static double cubic2(double x, double a) { return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a; }

/* The same with A = -0.75 as the upsampling kernel evaluates them in op:
 * (1.25 x - 2.25) and (-0.75 x + 3.75), (.. x - 6) fused, the last step
 * (.. x + 1, .. x + 3) not. Near 1 and 2 they cancel to small weights, so
 * each rounding shows. */
static double up_cubic1(alloy_dtype op, double x) {
  double p = op_fma(op, 1.25, x, -2.25);
  return round_to(op, op_mul(op, op_mul(op, p, x), x) + 1.0);
}
static double up_cubic2(alloy_dtype op, double x) {
  double b = op_fma(op, op_fma(op, -0.75, x, 3.75), x, -6.0);
  return round_to(op, op_mul(op, b, x) + 3.0);
}

static void taps_free(taps *t) {
  free(t->idx);
  free(t->w);
  free(t->n);
}

/* The taps of output indices [0, out) over `in` inputs. dt: the tensor's
 * dtype (the weights are stored in it); has_scale/scale: the op's scale
 * factor for this dim, if given. */
static int taps_build(taps *t, up_mode mode, int64_t in, int64_t out, bool align, bool has_scale,
                      double scale, alloy_dtype dt) {
  alloy_dtype op = dt == ALLOY_F64 ? ALLOY_F64 : ALLOY_F32;
  double s = pixel_scale(op, in, out, mode != UP_NEAREST_EXACT && mode != UP_NEAREST && align,
                         has_scale, scale);
  double support = 0.0;
  t->max = mode == UP_CUBIC ? 4 : mode == UP_LINEAR ? 2 : 1;
  if (mode == UP_LINEAR_AA) {
    support = s >= 1.0 ? s : 1.0;
    t->max = (int64_t)ceil(support) * 2 + 1;
  }
  int64_t cap = max64(1, out * t->max);
  t->idx = calloc((size_t)cap, sizeof(int64_t));
  t->w = calloc((size_t)cap, sizeof(double));
  t->n = calloc((size_t)max64(1, out), sizeof(int64_t));
  if (!t->idx || !t->w || !t->n) return 1;
  for (int64_t o = 0; o < out; o++) {
    int64_t *idx = t->idx + o * t->max;
    double *w = t->w + o * t->max;
    switch (mode) {
      case UP_NEAREST: /* floor(scale * o) */
        t->n[o] = 1;
        idx[0] = min64(floor_f(source_index(op, s, o, true, false)), in - 1);
        w[0] = 1.0;
        break;
      case UP_NEAREST_EXACT: /* floor((o + 0.5) * scale) */
        t->n[o] = 1;
        idx[0] = min64(floor_f(source_index(op, s, o, false, false) + 0.5), in - 1);
        w[0] = 1.0;
        break;
      case UP_LINEAR: {
        t->n[o] = 2;
        if (in == out) {
          idx[0] = idx[1] = o;
          w[0] = 1.0;
          w[1] = 0.0;
          break;
        }
        double real = source_index(op, s, o, align, false);
        idx[0] = min64(floor_f(real), in - 1);
        double l1 = round_to(dt, fmin(fmax(round_to(op, real - (double)idx[0]), 0.0), 1.0));
        idx[1] = idx[0] + (idx[0] < in - 1 ? 1 : 0);
        w[0] = round_to(dt, 1.0 - l1);
        w[1] = l1;
        break;
      }
      case UP_CUBIC: {
        t->n[o] = 4;
        double real = source_index(op, s, o, align, true);
        int64_t i0 = min64(floor_f(real), in - 1);
        double l = round_to(op, fmin(fmax(round_to(op, real - (double)i0), 0.0), 1.0));
        double l2 = round_to(op, 1.0 - l);
        double cw[4] = {up_cubic2(op, round_to(op, l + 1.0)), up_cubic1(op, l), up_cubic1(op, l2),
                        up_cubic2(op, round_to(op, l2 + 1.0))};
        for (int k = 0; k < 4; k++) {
          idx[k] = max64(min64(i0 + k - 1, in - 1), 0);
          w[k] = round_to(dt, cw[k]);
        }
        break;
      }
      case UP_LINEAR_AA: { /* Pillow's triangle filter, normalized */
        double center = round_to(op, s * ((double)o + 0.5));
        double invscale = s >= 1.0 ? round_to(op, 1.0 / s) : 1.0, total = 0.0;
        int64_t xmin = max64((int64_t)(round_to(op, center - support) + 0.5), 0);
        int64_t xsize = min64((int64_t)(round_to(op, center + support) + 0.5), in) - xmin;
        xsize = max64(0, min64(xsize, t->max));
        t->n[o] = xsize;
        for (int64_t j = 0; j < xsize; j++) {
          double x = round_to(op, (round_to(op, (double)(j + xmin) - center) + 0.5) * invscale);
          idx[j] = xmin + j;
          w[j] = round_to(op, fmax(0.0, 1.0 - fabs(x)));
          total = round_to(op, total + w[j]);
        }
        for (int64_t j = 0; total != 0.0 && j < xsize; j++) w[j] = round_to(op, w[j] / total);
        break;
      }
    }
  }
  return 0;
}

/* ---- upsampling ----------------------------------------------------------*/

/* How an upsampling op names its arguments. */
typedef struct up_op {
  up_mode mode;
  int n;                        /* spatial dims */
  bool vec;                     /* the .vec overload: scale_factors */
  bool has_align;               /* align_corners argument */
  const char *scales[3];        /* per-dim scale arguments (non-vec) */
} up_op;

typedef struct up_ctx {
  const alloy_kernel_tensor *x;
  const taps *t;      /* per dim, outermost first */
  const int64_t *xs;  /* the input's stride of each dim */
  alloy_dtype op;
} up_ctx;

/* t0 w0 + t1 w1 + ... in op as PyTorch's kernels sum their taps: a fused
 * multiply-add per tap onto the product of the first; the non-separable
 * kernel (its tap count fixed) starts from the second product instead and
 * fuses the first onto it. */
static double tap_sum(alloy_dtype op, const double *v, const double *w, int64_t n, bool fixed) {
  if (n < 2) return n ? op_mul(op, v[0], w[0]) : 0.0;
  double acc = fixed ? op_fma(op, v[0], w[0], op_mul(op, v[1], w[1])) : op_mul(op, v[0], w[0]);
  for (int64_t k = fixed ? 2 : 1; k < n; k++) acc = op_fma(op, v[k], w[k], acc);
  return acc;
}

/* PyTorch's non-separable interpolation: the value at output index o of
 * dims dim.. is the tap_sum over the taps of dim of the inner dims' value
 * there, in opmath. A single tap (nearest) is the value itself. */
static double up_eval(const up_ctx *u, int dim, const int64_t *o, int64_t off) {
  if (dim == 3) return ref_load_f(u->x->data, u->x->dtype, off);
  const taps *t = &u->t[dim];
  const int64_t *idx = t->idx + o[dim] * t->max, n = t->n[o[dim]];
  const double *w = t->w + o[dim] * t->max;
  if (t->max == 1) return up_eval(u, dim + 1, o, off + idx[0] * u->xs[dim]);
  double v[4];
  for (int64_t k = 0; k < n && k < 4; k++) v[k] = up_eval(u, dim + 1, o, off + idx[k] * u->xs[dim]);
  return tap_sum(u->op, v, w, n < 4 ? n : 4, true);
}

/* PyTorch's separable (antialiased) interpolation: one pass per dim whose
 * size changes, the last dim first, each into a tensor of the dtype (so
 * rounded to it), each output the tap_sum of its taps. A dim whose size
 * stays is not touched, its zero-weight taps never read. */
static int up_separable(const alloy_kernel_tensor *x, const alloy_kernel_tensor *out,
                        const taps *t, const int64_t *in, const int64_t *os, const int64_t *xs,
                        const int64_t *ost) {
  alloy_dtype dt = out->dtype, op = dt == ALLOY_F64 ? ALLOY_F64 : ALLOY_F32;
  int64_t planes = x->sizes[0] * x->sizes[1], sz[3] = {in[0], in[1], in[2]};
  double *cur = malloc(sizeof(double) * (size_t)max64(1, planes * sz[0] * sz[1] * sz[2]));
  double *v = malloc(sizeof(double) * (size_t)max64(1, t[0].max + t[1].max + t[2].max));
  if (!cur || !v) {
    free(cur);
    free(v);
    return 1;
  }
  for (int64_t p = 0, k = 0; p < planes; p++) {
    int64_t xo = (p / x->sizes[1]) * x->strides[0] + (p % x->sizes[1]) * x->strides[1];
    for (int64_t a = 0; a < sz[0]; a++)
      for (int64_t b = 0; b < sz[1]; b++)
        for (int64_t e = 0; e < sz[2]; e++, k++)
          cur[k] = ref_load_f(x->data, x->dtype, xo + a * xs[0] + b * xs[1] + e * xs[2]);
  }
  for (int d = 2; d >= 0; d--) {
    if (sz[d] == os[d]) continue;
    int64_t nsz[3] = {sz[0], sz[1], sz[2]}, inner = 1;
    nsz[d] = os[d];
    for (int i = d + 1; i < 3; i++) inner *= sz[i];
    int64_t outer = planes * (d ? sz[0] : 1) * (d > 1 ? sz[1] : 1);
    double *next = malloc(sizeof(double) * (size_t)max64(1, outer * nsz[d] * inner));
    if (!next) {
      free(cur);
      free(v);
      return 1;
    }
    for (int64_t q = 0; q < outer; q++)
      for (int64_t o = 0; o < nsz[d]; o++)
        for (int64_t r = 0; r < inner; r++) {
          const int64_t *idx = t[d].idx + o * t[d].max, n = t[d].n[o];
          const double *w = t[d].w + o * t[d].max;
          const double *src = cur + q * sz[d] * inner + r;
          for (int64_t k = 0; k < n; k++) v[k] = src[idx[k] * inner];
          next[(q * nsz[d] + o) * inner + r] = round_to(dt, tap_sum(op, v, w, n, false));
        }
    free(cur);
    cur = next;
    memcpy(sz, nsz, sizeof sz);
  }
  for (int64_t p = 0, k = 0; p < planes; p++) {
    int64_t oo = (p / out->sizes[1]) * out->strides[0] + (p % out->sizes[1]) * out->strides[1];
    for (int64_t a = 0; a < sz[0]; a++)
      for (int64_t b = 0; b < sz[1]; b++)
        for (int64_t e = 0; e < sz[2]; e++, k++)
          ref_store_f(out->data, dt, oo + a * ost[0] + b * ost[1] + e * ost[2], cur[k]);
  }
  free(cur);
  free(v);
  return 0;
}

/* ---- uint8 in fixed point -------------------------------------------------*/

/* PyTorch computes 2-d bilinear, bicubic and antialiased bilinear uint8
 * resampling as Pillow does: per dim, weights in double made int16 with a
 * common precision, then separable integer passes (W, then H, each only
 * when its size changes; both unchanged: a copy), each output
 * (2^(prec-1) + sum pixel * weight) >> prec clamped to [0, 255] and
 * stored as uint8 between the passes. */
typedef struct taps16 {
  int64_t max, *xmin, *xsize;
  int *w;
  int prec;
} taps16;

static double up_filter(up_mode mode, bool aa, double x) {
  x = fabs(x);
  if (mode != UP_CUBIC) return x < 1.0 ? 1.0 - x : 0.0;
  double a = aa ? -0.5 : -0.75; /* Keys' -0.5 antialiased, -0.75 as the float path */
  return x < 1.0 ? cubic1(x, a) : x < 2.0 ? cubic2(x, a) : 0.0;
}

/* The taps of one dim as PyTorch's _compute_index_ranges_int16_weights:
 * antialiased, Pillow's normalized support around scale (o + 0.5); else
 * the float path's source index and fraction, the weights of taps past
 * either edge added onto the edge tap (not normalized). */
static int taps16_build(taps16 *t, up_mode mode, int64_t in, int64_t out, bool align,
                        bool has_scale, double sc) {
  bool aa = mode == UP_LINEAR_AA, cubic = mode == UP_CUBIC;
  double interp = cubic ? 4.0 : 2.0;
  double scale = pixel_scale(ALLOY_F64, in, out, align, has_scale, sc);
  double support = aa && scale >= 1.0 ? interp * 0.5 * scale : interp * 0.5;
  t->max = aa ? (int64_t)ceil(support) * 2 + 1 : (int64_t)interp;
  int64_t cap = max64(1, out * t->max);
  t->xmin = calloc((size_t)max64(1, out), sizeof(int64_t));
  t->xsize = calloc((size_t)max64(1, out), sizeof(int64_t));
  t->w = calloc((size_t)cap, sizeof(int));
  double *wf = calloc((size_t)cap, sizeof(double)), wmax = 0.0;
  if (!t->xmin || !t->xsize || !t->w || !wf) {
    free(wf);
    return 1;
  }
  for (int64_t o = 0; o < out; o++) {
    double *w = wf + o * t->max;
    int64_t xmin, xsize;
    if (aa) {
      double center = scale * ((double)o + 0.5), total = 0.0;
      double invscale = scale >= 1.0 ? 1.0 / scale : 1.0;
      xmin = max64((int64_t)(center - support + 0.5), 0);
      xsize = min64((int64_t)(center + support + 0.5), in) - xmin;
      xsize = max64(0, min64(xsize, t->max));
      for (int64_t j = 0; j < xsize; j++) {
        w[j] = up_filter(mode, true, ((double)(j + xmin) - center + 0.5) * invscale);
        total += w[j];
      }
      for (int64_t j = 0; total != 0.0 && j < xsize; j++) {
        w[j] /= total;
        wmax = fmax(wmax, w[j]);
      }
    } else {
      double real = align ? scale * (double)o : scale * ((double)o + 0.5) - 0.5;
      if (!align && !cubic && real < 0.0) real = 0.0;
      int64_t i0 = min64(floor_f(real), in - 1), half = t->max / 2;
      double lambda = fmin(fmax(real - (double)i0, 0.0), 1.0);
      int64_t lo = i0 - half + 1;
      xmin = max64(lo, 0);
      xsize = max64(0, min64(min64(i0 + half + 1, in) - xmin, t->max));
      for (int64_t j = 0, k = 0; j < t->max; j++, k++) {
        if (lo + j <= 0) k = 0;
        else if (lo + j >= in - 1) k = xsize - 1;
        if (k >= 0 && k < t->max) {
          w[k] += up_filter(mode, false, (double)(j + 1 - half) - lambda);
          wmax = fmax(wmax, w[k]);
        }
      }
    }
    t->xmin[o] = xmin;
    t->xsize[o] = xsize;
  }
  for (t->prec = 0; t->prec < 22; t->prec++)
    if ((int)(0.5 + wmax * (double)(1 << (t->prec + 1))) >= (1 << 15)) break;
  for (int64_t k = 0; k < cap; k++) {
    double v = wf[k] * (double)(1 << t->prec);
    t->w[k] = (int16_t)(v < 0 ? (int)(-0.5 + v) : (int)(0.5 + v));
  }
  free(wf);
  return 0;
}

/* One integer pass along a dim of cur (outer x size x inner) to nsz. */
static void pass_u8(const taps16 *t, const uint8_t *cur, uint8_t *next, int64_t outer,
                    int64_t size, int64_t nsize, int64_t inner) {
  for (int64_t q = 0; q < outer; q++)
    for (int64_t o = 0; o < nsize; o++)
      for (int64_t r = 0; r < inner; r++) {
        int64_t acc = t->prec > 0 ? (int64_t)1 << (t->prec - 1) : 0;
        const int *w = t->w + o * t->max;
        for (int64_t k = 0; k < t->xsize[o]; k++)
          acc += (int64_t)cur[(q * size + t->xmin[o] + k) * inner + r] * w[k];
        int64_t v = acc >= 0 ? acc >> t->prec : -((-acc + ((int64_t)1 << t->prec) - 1) >> t->prec);
        next[(q * nsize + o) * inner + r] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
      }
}

static int up_uint8(const alloy_kernel_tensor *x, const alloy_kernel_tensor *out, up_mode mode,
                    bool align, const bool *has, const double *scale) {
  int64_t planes = x->sizes[0] * x->sizes[1], H = x->sizes[2], W = x->sizes[3],
          OH = out->sizes[2], OW = out->sizes[3];
  taps16 th = {0}, tw = {0};
  uint8_t *a = malloc((size_t)max64(1, planes * H * W)), *b = malloc((size_t)max64(1, planes * H * OW)),
          *e = malloc((size_t)max64(1, planes * OH * OW));
  int err = !a || !b || !e || taps16_build(&tw, mode, W, OW, align, has[1], scale[1]) ||
            taps16_build(&th, mode, H, OH, align, has[0], scale[0]);
  if (!err) {
    ref_iter it;
    ref_iter_init(&it, x, NULL, 0);
    for (int64_t i = 0; ref_iter_next(&it); i++) a[i] = (uint8_t)ref_load_i(x->data, x->dtype, it.offset[0]);
    const uint8_t *cur = a;
    if (OW != W) pass_u8(&tw, cur, b, planes * H, W, OW, 1), cur = b;
    if (OH != H) pass_u8(&th, cur, e, planes, H, OH, OW), cur = e;
    ref_iter_init(&it, out, NULL, 0);
    for (int64_t i = 0; ref_iter_next(&it); i++) ref_store_i(out->data, out->dtype, it.offset[0], cur[i]);
  }
  free(a), free(b), free(e);
  free(th.xmin), free(th.xsize), free(th.w);
  free(tw.xmin), free(tw.xsize), free(tw.w);
  return err;
}

/* The upsampling ops: the taps of each dim, then the separable passes
 * (antialiased) or the nested sum of every output element. */
static int upsample(const alloy_kernel_call *c, const up_op *u) {
  const alloy_kernel_tensor *x = ref_tensor(c, u->vec ? "input" : "self"), *out = &c->outputs[0];
  if (!x || x->rank != u->n + 2) return ref_fail(c, "missing tensor argument");
  bool align = false;
  if (u->has_align) ref_bool(c, "align_corners", &align);
  double factors[3];
  int nf = u->vec ? ref_floats(c, "scale_factors", factors, 3) : -1;
  taps t[3] = {{0}};
  int64_t in[3] = {1, 1, 1}, os[3] = {1, 1, 1}, xs[3] = {0, 0, 0}, ost[3] = {0, 0, 0};
  int err = 0;
  bool hs[3] = {false, false, false};
  double sv[3] = {0.0, 0.0, 0.0};
  for (int i = 0; i < 3 && !err; i++) {
    int j = i - (3 - u->n);
    double scale = 0.0;
    bool has = false;
    if (j >= 0) {
      in[i] = x->sizes[2 + j];
      os[i] = out->sizes[2 + j];
      xs[i] = x->strides[2 + j];
      ost[i] = out->strides[2 + j];
      has = u->vec ? nf == u->n : ref_float(c, u->scales[j], &scale);
      if (u->vec && has) scale = factors[j];
    }
    /* PyTorch's vectorized 2-d bilinear kernel, which it takes for outputs
     * with H + W <= 128 (and channels-last inputs), keeps the weights in
     * opmath; its generic kernel stores them in the dtype. */
    bool opmath_weights = u->mode == UP_LINEAR && u->n == 2 && x->dtype != ALLOY_F64 &&
                          out->sizes[2] + out->sizes[3] <= 128;
    alloy_dtype wt = opmath_weights ? ALLOY_F32 : x->dtype;
    err = taps_build(&t[i], j >= 0 ? u->mode : UP_NEAREST, in[i], os[i], align, has, scale, wt);
    hs[i] = has;
    sv[i] = scale;
  }
  if (!err && x->dtype == ALLOY_U8 && u->n == 2 && u->mode != UP_NEAREST &&
      u->mode != UP_NEAREST_EXACT) {
    err = up_uint8(x, out, u->mode, align, hs + 1, sv + 1);
  } else if (!err && u->mode == UP_LINEAR_AA) {
    err = up_separable(x, out, t, in, os, xs, ost);
  } else if (!err) {
    up_ctx ctx = {x, t, xs, x->dtype == ALLOY_F64 ? ALLOY_F64 : ALLOY_F32};
    int64_t planes = x->sizes[0] * x->sizes[1];
    for (int64_t p = 0; p < planes; p++) {
      int64_t xo = (p / x->sizes[1]) * x->strides[0] + (p % x->sizes[1]) * x->strides[1];
      int64_t oo = (p / out->sizes[1]) * out->strides[0] + (p % out->sizes[1]) * out->strides[1];
      int64_t o[3];
      for (o[0] = 0; o[0] < os[0]; o[0]++)
        for (o[1] = 0; o[1] < os[1]; o[1]++)
          for (o[2] = 0; o[2] < os[2]; o[2]++)
            ref_store_f(out->data, out->dtype, oo + o[0] * ost[0] + o[1] * ost[1] + o[2] * ost[2],
                        up_eval(&ctx, 0, o, xo));
    }
  }
  for (int i = 0; i < 3; i++) taps_free(&t[i]);
  return err ? ref_fail(c, "out of memory") : 0;
}

#define UP_KERNEL(name, ...)                              \
  static int name(const alloy_kernel_call *c) {           \
    static const up_op u = __VA_ARGS__;                   \
    return upsample(c, &u);                               \
  }

UP_KERNEL(k_upsample_nearest1d, {UP_NEAREST, 1, false, false, {"scales"}})
UP_KERNEL(k_upsample_nearest_exact1d, {UP_NEAREST_EXACT, 1, false, false, {"scales"}})
UP_KERNEL(k_upsample_nearest2d, {UP_NEAREST, 2, false, false, {"scales_h", "scales_w"}})
UP_KERNEL(k_upsample_nearest2d_vec, {UP_NEAREST, 2, true, false, {NULL}})
UP_KERNEL(k_upsample_linear1d, {UP_LINEAR, 1, false, true, {"scales"}})
UP_KERNEL(k_upsample_bilinear2d, {UP_LINEAR, 2, false, true, {"scales_h", "scales_w"}})
UP_KERNEL(k_upsample_bilinear2d_vec, {UP_LINEAR, 2, true, true, {NULL}})
UP_KERNEL(k_upsample_bilinear2d_aa, {UP_LINEAR_AA, 2, false, true, {"scales_h", "scales_w"}})
UP_KERNEL(k_upsample_bicubic2d, {UP_CUBIC, 2, false, true, {"scales_h", "scales_w"}})
UP_KERNEL(k_upsample_trilinear3d, {UP_LINEAR, 3, false, true, {"scales_d", "scales_h", "scales_w"}})

/* ---- grid sampling -------------------------------------------------------*/

enum { GS_BILINEAR, GS_NEAREST, GS_BICUBIC };
enum { GS_ZEROS, GS_BORDER, GS_REFLECTION };

/* Grid sampling computes in the input's dtype, each operation rounded
 * (PyTorch's kernels for float16 and bfloat16 do, and the 2-d one for
 * float32; float64 and 3-d float32 are computed here in double). rt: the
 * rounding dtype. */
typedef struct gs_ctx {
  alloy_dtype rt;
  int pad;
  bool align, vec; /* vec: PyTorch's vectorized 2-d kernel */
} gs_ctx;

static double R(const gs_ctx *g, double v) { return round_to(g->rt, v); }

/* A grid coordinate in [-1, 1] to a pixel position. The vectorized 2-d
 * kernel scales by a precomputed half size instead: (c + 1) (size / 2) -
 * 0.5, which overflows (to inf) where the other form does not. */
static double gs_unnormalize(const gs_ctx *g, double coord, int64_t size) {
  if (g->vec)
    return g->align ? R(g, R(g, coord + 1.0) * R(g, (double)(size - 1) / 2.0))
                    : R(g, R(g, R(g, coord + 1.0) * R(g, (double)size / 2.0)) - 0.5);
  if (g->align) return R(g, R(g, R(g, coord + 1.0) / 2.0) * (double)(size - 1));
  return R(g, R(g, R(g, R(g, coord + 1.0) * (double)size) - 1.0) / 2.0);
}

static double gs_clip(double v, int64_t size) { return fmin((double)(size - 1), fmax(v, 0.0)); }

/* Reflects v into [low, high] given as twice their values. */
static double gs_reflect(const gs_ctx *g, double v, int64_t twice_low, int64_t twice_high) {
  if (twice_low == twice_high) return 0.0;
  double lo = (double)twice_low / 2.0, span = (double)(twice_high - twice_low) / 2.0;
  v = R(g, fabs(R(g, v - lo)));
  double extra = R(g, fmod(v, span));
  int64_t flips = (int64_t)floor(R(g, v / span));
  return flips % 2 == 0 ? R(g, extra + lo) : R(g, R(g, span - extra) + lo);
}

/* The padding mode applied to a pixel position. */
static double gs_pad(const gs_ctx *g, double v, int64_t size) {
  if (g->pad == GS_BORDER) {
    v = gs_clip(v, size);
  } else if (g->pad == GS_REFLECTION) {
    v = g->align ? gs_reflect(g, v, 0, 2 * (size - 1)) : gs_reflect(g, v, -1, 2 * size - 1);
    v = gs_clip(v, size);
  }
  return v;
}

/* ... plus PyTorch's safe_downgrade_to_int_range: NaN and huge values
 * land far outside. */
static double gs_source(const gs_ctx *g, double coord, int64_t size) {
  double v = gs_pad(g, gs_unnormalize(g, coord, size), size);
  if (!isfinite(v) || v > (double)INT32_MAX || v < (double)INT32_MIN) return -100.0;
  return v;
}

/* One sampled plane: the input plane at base with strides st (d, h, w;
 * d unused in 2-d) and sizes sz. */
typedef struct gs_plane {
  const alloy_kernel_tensor *x;
  int64_t base, st[3], sz[3];
} gs_plane;

/* The value at integer (d, h, w), 0 outside. */
static double gs_at(const gs_plane *p, int64_t d, int64_t h, int64_t w) {
  if (d < 0 || h < 0 || w < 0 || d >= p->sz[0] || h >= p->sz[1] || w >= p->sz[2]) return 0.0;
  return ref_load_f(p->x->data, p->x->dtype, p->base + d * p->st[0] + h * p->st[1] + w * p->st[2]);
}

/* Bicubic reads each tap through the padding mode. */
static double gs_at_padded(const gs_ctx *g, const gs_plane *p, int64_t h, int64_t w) {
  return gs_at(p, 0, (int64_t)gs_pad(g, (double)h, p->sz[1]), (int64_t)gs_pad(g, (double)w, p->sz[2]));
}

/* x0 c0 + x1 c1 + x2 c2 + x3 c3 with Keys' coefficients at t */
static double gs_cubic(const gs_ctx *g, const double *v, double t) {
  double cw[4] = {cubic2(t + 1.0, -0.75), cubic1(t, -0.75), cubic1(1.0 - t, -0.75),
                  cubic2(2.0 - t, -0.75)}, acc = 0.0;
  for (int i = 0; i < 4; i++) acc = R(g, acc + R(g, v[i] * R(g, cw[i])));
  return acc;
}

/* Samples plane p at grid coordinates c (x, y[, z]) of an n-d sampler. */
static double gs_sample(const gs_ctx *g, const gs_plane *p, int n, const double *c, int mode) {
  const int64_t size[3] = {p->sz[2], p->sz[1], p->sz[0]}; /* x (w), y (h), z (d) */
  if (mode == GS_BICUBIC) {
    double ix = gs_unnormalize(g, c[0], size[0]), iy = gs_unnormalize(g, c[1], size[1]);
    double fx = floor(ix), fy = floor(iy), tx = R(g, ix - fx), ty = R(g, iy - fy), rows[4];
    for (int j = 0; j < 4; j++) {
      double v[4];
      for (int i = 0; i < 4; i++) v[i] = gs_at_padded(g, p, (int64_t)fy - 1 + j, (int64_t)fx - 1 + i);
      rows[j] = gs_cubic(g, v, tx);
    }
    return gs_cubic(g, rows, ty);
  }
  double pos[3] = {0, 0, 0};
  /* PyTorch's vectorized 2-d kernel weighs all four corners, those outside
   * holding 0: a NaN or infinite position makes NaN weights, and 0 * NaN
   * is NaN. */
  for (int i = 0; n == 2 && mode == GS_BILINEAR && i < n; i++)
    if (!isfinite(gs_pad(g, gs_unnormalize(g, c[i], size[i]), size[i]))) return NAN;
  for (int i = 0; i < n; i++) pos[i] = gs_source(g, c[i], size[i]);
  if (mode == GS_NEAREST)
    return gs_at(p, (int64_t)nearbyint(pos[2]), (int64_t)nearbyint(pos[1]), (int64_t)nearbyint(pos[0]));
  /* (tri/bi)linear: each corner weighs the opposite box, ((wx wy) wz) */
  int64_t f[3];
  for (int i = 0; i < 3; i++) f[i] = (int64_t)floor(pos[i]);
  double acc = 0.0;
  for (int dz = 0; dz < (n == 3 ? 2 : 1); dz++)
    for (int dy = 0; dy < 2; dy++)
      for (int dx = 0; dx < 2; dx++) {
        const int d[3] = {dx, dy, dz};
        double w = 1.0;
        for (int i = 0; i < n; i++) {
          double wi = d[i] ? R(g, pos[i] - (double)f[i]) : R(g, (double)(f[i] + 1) - pos[i]);
          w = i ? R(g, w * wi) : wi;
        }
        int64_t z = n == 3 ? f[2] + dz : 0, y = f[1] + dy, x = f[0] + dx;
        if (z < 0 || y < 0 || x < 0 || z >= p->sz[0] || y >= p->sz[1] || x >= p->sz[2]) continue;
        acc = R(g, acc + R(g, gs_at(p, z, y, x) * w));
      }
  return acc;
}

/* grid_sampler_{2,3}d(input, grid, interpolation_mode, padding_mode,
 * align_corners): input (N, C, [D,] H, W), grid (N, [D',] H', W', n) of
 * (x, y[, z]) in [-1, 1]. */
static int grid_sampler(const alloy_kernel_call *c, int n) {
  const alloy_kernel_tensor *x = ref_tensor(c, "input"), *grid = ref_tensor(c, "grid"),
                            *out = &c->outputs[0];
  if (!x || !grid) return ref_fail(c, "missing tensor argument");
  int64_t mode = GS_BILINEAR, pad = GS_ZEROS;
  /* float32 rounds to float in 2-d (the vectorized kernel computes in it:
   * a coordinate can overflow to inf there) */
  alloy_dtype rt = x->dtype == ALLOY_F16 || x->dtype == ALLOY_BF16 || (n == 2 && x->dtype == ALLOY_F32)
                       ? x->dtype
                       : ALLOY_F64;
  gs_ctx g = {rt, GS_ZEROS, false, n == 2};
  ref_int(c, "interpolation_mode", &mode);
  ref_int(c, "padding_mode", &pad);
  ref_bool(c, "align_corners", &g.align);
  g.pad = (int)pad;
  gs_plane p = {x, 0, {0, 0, 0}, {1, 1, 1}};
  for (int i = 0; i < n; i++) {
    p.sz[3 - n + i] = x->sizes[2 + i];
    p.st[3 - n + i] = x->strides[2 + i];
  }
  int64_t os[3] = {1, 1, 1}, ost[3] = {0, 0, 0}, gst[3] = {0, 0, 0};
  for (int i = 0; i < n; i++) {
    os[3 - n + i] = out->sizes[2 + i];
    ost[3 - n + i] = out->strides[2 + i];
    gst[3 - n + i] = grid->strides[1 + i];
  }
  int64_t gc = grid->strides[grid->rank - 1];
  for (int64_t b = 0; b < x->sizes[0]; b++)
    for (int64_t o0 = 0; o0 < os[0]; o0++)
      for (int64_t o1 = 0; o1 < os[1]; o1++)
        for (int64_t o2 = 0; o2 < os[2]; o2++) {
          double coord[3];
          int64_t go = b * grid->strides[0] + o0 * gst[0] + o1 * gst[1] + o2 * gst[2];
          for (int i = 0; i < n; i++) coord[i] = ref_load_f(grid->data, grid->dtype, go + i * gc);
          for (int64_t ch = 0; ch < x->sizes[1]; ch++) {
            p.base = b * x->strides[0] + ch * x->strides[1];
            double v = gs_sample(&g, &p, n, coord, (int)mode);
            ref_store_f(out->data, out->dtype,
                        b * out->strides[0] + ch * out->strides[1] + o0 * ost[0] + o1 * ost[1] + o2 * ost[2], v);
          }
        }
  return 0;
}

static int k_grid_sampler_2d(const alloy_kernel_call *c) { return grid_sampler(c, 2); }
static int k_grid_sampler_3d(const alloy_kernel_call *c) { return grid_sampler(c, 3); }


const alloy_kernel ref_kernels_resample[] = {
    REF_KERNEL("aten.upsample_nearest1d.default", k_upsample_nearest1d),
    REF_KERNEL("aten._upsample_nearest_exact1d.default", k_upsample_nearest_exact1d),
    REF_KERNEL("aten.upsample_nearest2d.default", k_upsample_nearest2d),
    REF_KERNEL("aten.upsample_nearest2d.vec", k_upsample_nearest2d_vec),
    REF_KERNEL("aten.upsample_linear1d.default", k_upsample_linear1d),
    REF_KERNEL("aten.upsample_bilinear2d.default", k_upsample_bilinear2d),
    REF_KERNEL("aten.upsample_bilinear2d.vec", k_upsample_bilinear2d_vec),
    REF_KERNEL("aten._upsample_bilinear2d_aa.default", k_upsample_bilinear2d_aa),
    REF_KERNEL("aten.upsample_bicubic2d.default", k_upsample_bicubic2d),
    REF_KERNEL("aten.upsample_trilinear3d.default", k_upsample_trilinear3d),
    REF_KERNEL("aten.grid_sampler_2d.default", k_grid_sampler_2d),
    REF_KERNEL("aten.grid_sampler_3d.default", k_grid_sampler_3d),
    {NULL, NULL, NULL, NULL},
};
