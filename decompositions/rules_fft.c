/*
 * decompositions/rules_fft.c: torch.fft, from ATen to Core ATen: every
 * transform (fft, ifft, rfft, irfft, hfft, ihfft and their 2-D and n-D
 * forms) becomes ATen's own kernels _fft_r2c, _fft_c2c and _fft_c2r, as
 * ATen's SpectralOps.cpp builds them: the input promoted (integers to
 * float32), resized to the signal sizes (sliced, or zero-padded at the
 * end), the normalization handed to the kernel as its mode (0 none, 1 by
 * 1/sqrt(n), 2 by 1/n, from norm and the direction), the inverse of a real
 * signal as the conjugate of its forward transform, hfft as the c2r
 * transform of the conjugate. stft frames the signal (unfold), windows and
 * transforms the frames; istft inverts them and overlap-adds
 * (unfold_backward). fftshift and ifftshift are rolls by half the sizes;
 * fftfreq and rfftfreq ranges scaled by 1 / (n d).
 *
 * Shape functions: ir/meta_fft.c. The reference kernels: a direct DFT in
 * double complex (reference_backend/kernels_spectral.c).
 */
#include <string.h>

#include "decompositions/rules.h"

/* --- the plan of a transform ------------------------------------------------------------*/

enum { C2C, R2C, C2R };

typedef struct {
  int count;                   /* transformed dims                        */
  int dims[ALLOY_MAX_RANK];
  alloy_dim sizes[ALLOY_MAX_RANK]; /* their signal sizes (input side)    */
  alloy_dim last_size;         /* C2R: the output's last transformed size */
} plan;

/* canonicalize_fft_shape_and_dim_args (the shape function checked what it
 * refuses): (n, dim) of the 1-D forms, (s, dim) of the others. */
static bool make_plan(decomp *d, bool nd, int kind, plan *p) {
  alloy_value *x = d_tensor(d, 0);
  int r = d_rank(x), ns = 0;
  alloy_dim s[ALLOY_MAX_RANK];
  int64_t dim[ALLOY_MAX_RANK];
  int ndim = 0;
  bool has_s = !d_is_none(d, 1), has_dim = !d_is_none(d, 2);
  if (nd) {
    if (has_s) ns = d_dims(d, 1, s, ALLOY_MAX_RANK);
    if (has_dim) ndim = d_ints(d, 2, dim, ALLOY_MAX_RANK);
  } else {
    if (has_s) s[0] = d_dim(d, 1), ns = 1;
    dim[0] = d_int(d, 2), ndim = 1, has_dim = true;
  }
  if (d_failed(d)) return false;
  if (has_dim) {
    for (int k = 0; k < ndim; k++) p->dims[k] = d_wrap_dim(d, dim[k], r);
  } else {
    ndim = has_s ? ns : r;
    for (int k = 0; k < ndim; k++) p->dims[k] = r - ndim + k;
  }
  p->count = ndim;
  bool last_default = !has_s;
  for (int k = 0; k < ndim; k++) {
    bool minus_one = has_s && nd && alloy_dim_is_const(s[k]) && s[k].value == -1;
    p->sizes[k] = has_s && !minus_one ? s[k] : d_shape(x)[p->dims[k]];
    if (k == ndim - 1 && minus_one) last_default = true;
  }
  if (kind == C2R && ndim > 0) {
    alloy_symtab *st = d_symtab(d);
    int last = p->dims[ndim - 1];
    p->last_size = last_default ? alloy_dim_mul(st, alloy_dim_const(2), alloy_dim_sub(st, d_shape(x)[last], alloy_dim_const(1)))
                                : p->sizes[ndim - 1];
    p->sizes[ndim - 1] = alloy_dim_add(st, alloy_dim_floordiv(st, p->last_size, alloy_dim_const(2)), alloy_dim_const(1));
  }
  return !d_failed(d);
}

/* ATen's fft_norm_mode from norm and the direction. */
static int norm_mode(decomp *d, bool forward) {
  const char *norm = d_str(d, 3);
  if (norm && !strcmp(norm, "ortho")) return 1;
  bool backward = !norm || !strcmp(norm, "backward");
  return backward != forward ? 2 : 0; /* by n: an inverse by default, a forward "forward" */
}

/* x with dims[k] of size sizes[k]: sliced from 0, or zero-padded at the end. */
static alloy_value *resize(decomp *d, alloy_value *x, const int *dims, const alloy_dim *sizes, int count) {
  int r = d_rank(x);
  alloy_dim pad[2 * ALLOY_MAX_RANK];
  bool padded = false;
  for (int k = 0; k < 2 * r; k++) pad[k] = alloy_dim_const(0);
  for (int k = 0; k < count && x; k++) {
    alloy_dim have = d_shape(x)[dims[k]], want = sizes[k];
    if (alloy_dim_same(have, want) || alloy_dim_eq(d_symtab(d), have, want) == ALLOY_TRUE) continue;
    if (alloy_dim_lt(d_symtab(d), want, have) == ALLOY_TRUE) {
      x = D(d, "aten.slice.Tensor", V(x), I(dims[k]), I(0), SYM(want), I(1));
    } else if (alloy_dim_lt(d_symtab(d), have, want) == ALLOY_TRUE) {
      pad[2 * (r - 1 - dims[k]) + 1] = alloy_dim_sub(d_symtab(d), want, have);
      padded = true;
    } else {
      d_decline(d, "a signal size that symbols leave undecided against the input's");
      return NULL;
    }
  }
  return padded && x ? D(d, "aten.constant_pad_nd.default", V(x), d_dim_list(d, pad, 2 * r), I(0)) : x;
}

static alloy_arg dims_arg(decomp *d, const int *dims, int count) {
  int64_t v[ALLOY_MAX_RANK];
  for (int k = 0; k < count; k++) v[k] = dims[k];
  return d_int_list(d, v, count);
}

/* The conjugate, a copy (prims.conj: the one conjugation every level keeps). */
static alloy_value *conjugate(decomp *d, alloy_value *z) { return D(d, "prims.conj.default", V(z)); }

static alloy_value *r2c(decomp *d, alloy_value *x, const int *dims, int count, int norm, bool onesided) {
  return D(d, "aten._fft_r2c.default", V(x), dims_arg(d, dims, count), I(norm), B(onesided));
}
static alloy_value *c2c(decomp *d, alloy_value *x, const int *dims, int count, int norm, bool forward) {
  return D(d, "aten._fft_c2c.default", V(x), dims_arg(d, dims, count), I(norm), B(forward));
}
static alloy_value *c2r(decomp *d, alloy_value *x, const int *dims, int count, int norm, alloy_dim last) {
  return D(d, "aten._fft_c2r.default", V(x), dims_arg(d, dims, count), I(norm), SYM(last));
}

/* A real x as complex (x + 0i), exactly: the transform of a size-1 dim is
 * the identity, so x gains a trailing dim of 1, goes through r2c there and
 * loses it (Core ATen has no other real-to-complex conversion). */
static alloy_value *promote_complex(decomp *d, alloy_value *x) {
  int r = d_rank(x);
  alloy_value *col = D(d, "aten.unsqueeze.default", V(x), I(r));
  int dim = r;
  return D(d, "aten.squeeze.dim", V(r2c(d, col, &dim, 1, 0, false)), I(r));
}

/* --- the transforms ---------------------------------------------------------------------*/

/* m: C2C, R2C or C2R; forward: the direction; nd: the 2-D and n-D forms. */
static void transform(decomp *d, int kind, bool forward, bool nd) {
  plan p;
  if (!make_plan(d, nd, kind, &p)) return;
  if (p.count == 0) return d_decline(d, "a transform of no dims");
  alloy_value *x = d_tensor(d, 0);
  bool complex_in = alloy_dtype_is_complex(d_dtype(x));
  if (!complex_in && !alloy_dtype_is_float(d_dtype(x))) x = d_to(d, x, ALLOY_F32);
  if (kind == C2R && !complex_in) x = promote_complex(d, x);
  int norm = norm_mode(d, forward), n = p.count;
  x = resize(d, x, p.dims, p.sizes, n);
  if (!x) return;
  if (kind == C2C) {
    if (complex_in) return d_out(d, 0, c2c(d, x, p.dims, n, norm, forward));
    /* a real signal: the full (two-sided) r2c transform; the inverse of a
     * real signal is the conjugate of its forward transform */
    alloy_value *y = r2c(d, x, p.dims, n, norm, false);
    return d_out(d, 0, forward ? y : conjugate(d, y));
  }
  if (kind == R2C) {
    if (forward) return d_out(d, 0, r2c(d, x, p.dims, n, norm, true)); /* rfft */
    /* ihfft: the conjugate of the last dim's onesided r2c, then the other
     * dims' inverse c2c */
    alloy_value *y = conjugate(d, r2c(d, x, p.dims + n - 1, 1, norm, true));
    return d_out(d, 0, n == 1 ? y : c2c(d, y, p.dims, n - 1, norm, false));
  }
  if (!forward) return d_out(d, 0, c2r(d, x, p.dims, n, norm, p.last_size)); /* irfft */
  /* hfft: the forward c2c of the other dims, then c2r of the conjugate */
  if (n > 1) x = c2c(d, x, p.dims, n - 1, norm, true);
  d_out(d, 0, c2r(d, conjugate(d, x), p.dims + n - 1, 1, norm, p.last_size));
}

static void fft(decomp *d) { transform(d, C2C, true, false); }
static void ifft(decomp *d) { transform(d, C2C, false, false); }
static void rfft(decomp *d) { transform(d, R2C, true, false); }
static void ihfft(decomp *d) { transform(d, R2C, false, false); }
static void irfft(decomp *d) { transform(d, C2R, false, false); }
static void hfft(decomp *d) { transform(d, C2R, true, false); }
static void fftn(decomp *d) { transform(d, C2C, true, true); }
static void ifftn(decomp *d) { transform(d, C2C, false, true); }
static void rfftn(decomp *d) { transform(d, R2C, true, true); }
static void ihfftn(decomp *d) { transform(d, R2C, false, true); }
static void irfftn(decomp *d) { transform(d, C2R, false, true); }
static void hfftn(decomp *d) { transform(d, C2R, true, true); }

/* --- stft, istft ----------------------------------------------------------------------*/

static int arg_of(decomp *d, const char *name) {
  return alloy_schema_find_arg(alloy_op_schema(alloy_node_op(d_node(d))), name);
}

static int64_t int_or(decomp *d, const char *name, int64_t dflt) {
  int i = arg_of(d, name);
  return i < 0 || d_is_none(d, i) ? dflt : d_int(d, i);
}

static bool bool_or(decomp *d, const char *name, bool dflt) {
  int i = arg_of(d, name);
  return i < 0 || d_is_none(d, i) ? dflt : d_bool(d, i);
}

/* The window at n_fft samples: the given one (ones when None) centered
 * with zeros (left (n_fft - win) / 2); NULL for no window at all. */
static alloy_value *full_window(decomp *d, alloy_value *w, int64_t n_fft, int64_t win, alloy_dtype t, bool ones) {
  if (!w && win == n_fft && !ones) return NULL;
  if (!w) {
    alloy_value *one = D(d, "aten.ones.default", LIST(I(win)), DT(t));
    w = one;
  }
  if (win == n_fft) return w;
  int64_t left = (n_fft - win) / 2;
  return D(d, "aten.constant_pad_nd.default", V(w), LIST(I(left), I(n_fft - win - left)), I(0));
}

/* stft (ATen's): a 1-D signal as one row; centered, padded by n_fft / 2
 * on both sides in pad_mode; aligned to the window (center off), padded
 * by (n_fft - win) / 2 in front so frames line up with the window; frames
 * of n_fft every hop (unfold), times the window, r2c over the frame
 * (by 1/sqrt(n) when normalized), as [batch, n_freq, n_frames]. */
static void stft(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *w = d_tensor(d, 4);
  int64_t n_fft = d_int(d, 1), hop = int_or(d, "hop_length", n_fft >> 2), win = int_or(d, "win_length", n_fft);
  bool center = bool_or(d, "center", false), align = bool_or(d, "align_to_window", false);
  bool normalized = bool_or(d, "normalized", false), onesided = bool_or(d, "onesided", true);
  if (d_failed(d)) return;
  const alloy_value *r = alloy_node_output(d_node(d), 0);
  if (!alloy_dtype_is_complex(d_dtype(r))) return d_decline(d, "return_complex=False (a view as real pairs)");
  if (alloy_dtype_is_complex(d_dtype(x)) || (w && alloy_dtype_is_complex(d_dtype(w))))
    return d_decline(d, "complex signals or windows are not computed on");
  bool row = d_rank(x) == 1;
  if (row) x = D(d, "aten.unsqueeze.default", V(x), I(0));
  int64_t half = n_fft / 2;
  if (center) {
    const char *mode = d_str(d, arg_of(d, "pad_mode"));
    alloy_dim s3[3] = {alloy_dim_const(1), d_shape(x)[0], d_shape(x)[1]};
    alloy_value *x3 = D(d, "aten.view.default", V(x), d_dim_list(d, s3, 3));
    x3 = D(d, "aten.pad.default", V(x3), LIST(I(half), I(half)), S(mode ? mode : "reflect"));
    x = D(d, "aten.squeeze.dim", V(x3), I(0));
  }
  alloy_dim frames = d_shape(r)[d_rank(r) - 1];
  if (align && win < n_fft) {
    int64_t left = (n_fft - win) / 2;
    alloy_symtab *st = d_symtab(d);
    /* enough behind for the last frame: (frames - 1) hop + n_fft - left - len */
    alloy_dim need = alloy_dim_sub(st, alloy_dim_add(st, alloy_dim_mul(st, alloy_dim_sub(st, frames, alloy_dim_const(1)), alloy_dim_const(hop)),
                                                 alloy_dim_const(n_fft - left)), d_shape(x)[1]);
    need = alloy_dim_max(st, need, alloy_dim_const(0));
    x = D(d, "aten.constant_pad_nd.default", V(x), d_dim_list(d, (alloy_dim[]){alloy_dim_const(left), need}, 2), I(0));
  }
  alloy_value *f = D(d, "aten.unfold.default", V(x), I(1), I(n_fft), I(hop));
  if (align) f = D(d, "aten.slice.Tensor", V(f), I(1), I(0), SYM(frames), I(1));
  alloy_value *wf = full_window(d, w, n_fft, win, d_dtype(x), false);
  if (wf) f = D(d, "aten.mul.Tensor", V(f), V(wf));
  int dim = 2;
  alloy_value *y = r2c(d, f, &dim, 1, normalized ? 1 : 0, onesided);
  y = D(d, "aten.transpose.int", V(y), I(1), I(2));
  d_out(d, 0, row ? D(d, "aten.squeeze.dim", V(y), I(0)) : y);
}

/* istft (ATen's, real results): frames c2r-transformed (by 1/n, or
 * 1/sqrt(n) when normalized; a two-sided spectrum cut to its first
 * n_fft / 2 + 1 bins), times the window, overlap-added (unfold_backward),
 * divided by the overlap-added squared window, trimmed of the centering
 * and cut or zero-padded to length. PyTorch's refusal of a window whose
 * overlap-add nearly vanishes depends on the data: the division gives inf
 * there instead. */
static void istft(decomp *d) {
  alloy_value *x = d_tensor(d, 0), *w = d_tensor(d, 4);
  int64_t n_fft = d_int(d, 1), hop = int_or(d, "hop_length", n_fft >> 2), win = int_or(d, "win_length", n_fft);
  bool center = d_bool(d, 5), normalized = d_bool(d, 6), return_complex = d_bool(d, 9);
  if (d_failed(d)) return;
  if (return_complex) return d_decline(d, "a complex result (complex arithmetic)");
  if (w && alloy_dtype_is_complex(d_dtype(w))) return d_decline(d, "complex windows are not computed on");
  bool row = d_rank(x) == 2;
  if (row) x = D(d, "aten.unsqueeze.default", V(x), I(0));
  alloy_dim fft_size = d_shape(x)[1], frames = d_shape(x)[2];
  bool onesided = bool_or(d, "onesided", !(alloy_dim_is_const(fft_size) && fft_size.value == n_fft));
  alloy_dtype t = d_out_dtype(d, 0);
  x = D(d, "aten.transpose.int", V(x), I(1), I(2));
  if (!onesided) x = D(d, "aten.slice.Tensor", V(x), I(2), I(0), I(n_fft / 2 + 1), I(1));
  int dim = 2;
  alloy_value *y = c2r(d, x, &dim, 1, normalized ? 1 : 2, alloy_dim_const(n_fft));
  alloy_value *wf = full_window(d, w, n_fft, win, t, true);
  y = D(d, "aten.mul.Tensor", V(y), V(wf));
  alloy_symtab *st = d_symtab(d);
  alloy_dim expected = alloy_dim_add(st, alloy_dim_const(n_fft), alloy_dim_mul(st, alloy_dim_const(hop), alloy_dim_sub(st, frames, alloy_dim_const(1))));
  alloy_dim ys[2] = {d_shape(y)[0], expected}, es[2] = {alloy_dim_const(1), expected};
  alloy_dim ws[3] = {alloy_dim_const(1), frames, alloy_dim_const(n_fft)};
  y = D(d, "aten.unfold_backward.default", V(y), d_dim_list(d, ys, 2), I(1), I(n_fft), I(hop));
  alloy_value *w2 = D(d, "aten.expand.default", V(D(d, "aten.mul.Tensor", V(wf), V(wf))), d_dim_list(d, ws, 3));
  alloy_value *env = D(d, "aten.unfold_backward.default", V(w2), d_dim_list(d, es, 2), I(1), I(n_fft), I(hop));
  int64_t start = center ? n_fft / 2 : 0;
  alloy_dim end = !d_is_none(d, 8) ? alloy_dim_add(st, alloy_dim_const(start), d_dim(d, 8))
                  : center        ? alloy_dim_sub(st, expected, alloy_dim_const(n_fft / 2))
                                  : expected;
  alloy_dim stop = alloy_dim_min(st, end, expected);
  y = D(d, "aten.slice.Tensor", V(y), I(1), I(start), SYM(stop), I(1));
  env = D(d, "aten.slice.Tensor", V(env), I(1), I(start), SYM(stop), I(1));
  y = D(d, "aten.div.Tensor", V(y), V(env));
  if (row) y = D(d, "aten.squeeze.dim", V(y), I(0));
  const alloy_value *r = alloy_node_output(d_node(d), 0);
  alloy_dim have = d_shape(y)[d_rank(y) - 1], want = d_shape(r)[d_rank(r) - 1];
  if (alloy_dim_lt(st, have, want) == ALLOY_TRUE)
    y = D(d, "aten.constant_pad_nd.default", V(y), d_dim_list(d, (alloy_dim[]){alloy_dim_const(0), alloy_dim_sub(st, want, have)}, 2), I(0));
  else if (alloy_dim_lt(st, have, want) != ALLOY_FALSE)
    return d_decline(d, "a length that symbols leave undecided against the signal's");
  d_out(d, 0, y);
}

/* --- helpers -----------------------------------------------------------------------------*/

/* fftshift / ifftshift: a roll of each dim (all by default) by n / 2, or
 * (n + 1) / 2 for the inverse. */
static void shift(decomp *d, bool inverse) {
  alloy_value *x = d_tensor(d, 0);
  int r = d_rank(x), count = r;
  int64_t dims[ALLOY_MAX_RANK];
  if (!d_is_none(d, 1)) count = d_ints(d, 1, dims, ALLOY_MAX_RANK);
  else
    for (int k = 0; k < r; k++) dims[k] = k;
  if (d_failed(d)) return;
  alloy_dim shifts[ALLOY_MAX_RANK];
  for (int k = 0; k < count; k++) {
    alloy_dim n = d_shape(x)[d_wrap_dim(d, dims[k], r)];
    if (inverse) n = alloy_dim_add(d_symtab(d), n, alloy_dim_const(1));
    shifts[k] = alloy_dim_floordiv(d_symtab(d), n, alloy_dim_const(2));
  }
  if (count == 0) return d_out(d, 0, D(d, "aten.clone.default", V(x)));
  d_out(d, 0, D(d, "aten.roll.default", V(x), d_dim_list(d, shifts, count), d_int_list(d, dims, count)));
}

static void fftshift(decomp *d) { shift(d, false); }
static void ifftshift(decomp *d) { shift(d, true); }

/* fftfreq(n, d): [0, 1, ..., (n - 1) / 2, -(n / 2), ..., -1] / (n d), the
 * range made in the result's dtype and multiplied by 1 / (n d) as ATen
 * does; rfftfreq: [0, ..., n / 2] / (n d). */
static void freq(decomp *d, bool onesided) {
  int64_t n = d_int(d, 0);
  double spacing = d_float(d, 1);
  alloy_dtype t = d_out_dtype(d, 0);
  if (d_failed(d)) return;
  alloy_value *k = D(d, "aten.arange.default", I(onesided ? n / 2 + 1 : n), DT(t));
  if (!onesided) {
    alloy_value *high = D(d, "aten.ge.Scalar", V(k), I((n + 1) / 2));
    k = D(d, "aten.where.self", V(high), V(D(d, "aten.sub.Tensor", V(k), I(n))), V(k));
  }
  d_out(d, 0, D(d, "aten.mul.Tensor", V(k), F(1.0 / ((double)n * spacing))));
}

static void fftfreq(decomp *d) { freq(d, false); }
static void rfftfreq(decomp *d) { freq(d, true); }

const decomp_rule decomp_rules_fft[] = {
    {"aten.fft_fft.default", fft, DECOMP_TO_CORE},
    {"aten.fft_ifft.default", ifft, DECOMP_TO_CORE},
    {"aten.fft_rfft.default", rfft, DECOMP_TO_CORE},
    {"aten.fft_ihfft.default", ihfft, DECOMP_TO_CORE},
    {"aten.fft_irfft.default", irfft, DECOMP_TO_CORE},
    {"aten.fft_hfft.default", hfft, DECOMP_TO_CORE},
    {"aten.fft_fft2.default", fftn, DECOMP_TO_CORE},
    {"aten.fft_ifft2.default", ifftn, DECOMP_TO_CORE},
    {"aten.fft_rfft2.default", rfftn, DECOMP_TO_CORE},
    {"aten.fft_ihfft2.default", ihfftn, DECOMP_TO_CORE},
    {"aten.fft_irfft2.default", irfftn, DECOMP_TO_CORE},
    {"aten.fft_hfft2.default", hfftn, DECOMP_TO_CORE},
    {"aten.fft_fftn.default", fftn, DECOMP_TO_CORE},
    {"aten.fft_ifftn.default", ifftn, DECOMP_TO_CORE},
    {"aten.fft_rfftn.default", rfftn, DECOMP_TO_CORE},
    {"aten.fft_ihfftn.default", ihfftn, DECOMP_TO_CORE},
    {"aten.fft_irfftn.default", irfftn, DECOMP_TO_CORE},
    {"aten.fft_hfftn.default", hfftn, DECOMP_TO_CORE},
    {"aten.stft.default", stft, DECOMP_TO_CORE},
    {"aten.stft.center", stft, DECOMP_TO_CORE},
    {"aten.istft.default", istft, DECOMP_TO_CORE},
    {"aten.fft_fftshift.default", fftshift, DECOMP_TO_CORE},
    {"aten.fft_ifftshift.default", ifftshift, DECOMP_TO_CORE},
    {"aten.fft_fftfreq.default", fftfreq, DECOMP_TO_CORE},
    {"aten.fft_rfftfreq.default", rfftfreq, DECOMP_TO_CORE},
    {NULL, NULL, 0},
};
