/*
 * ir/meta_fft.c: shape functions of the FFT family: ATen's three kernels
 * (_fft_r2c, _fft_c2c, _fft_c2r, which normalize), the torch.fft
 * transforms built on them (fft, ifft, rfft, irfft, hfft, ihfft and their
 * 2-D and n-D forms), stft and istft, fftshift and ifftshift, fftfreq and
 * rfftfreq.
 *
 * The transforms follow ATen's SpectralOps.cpp: a real input is promoted to
 * float32 (integers) and must then be float32 or float64 (PyTorch's CPU
 * refuses float16 and bfloat16: "Unsupported dtype"), complex results are
 * complex64 or complex128; the signal sizes s and dims are canonicalized as
 * canonicalize_fft_shape_and_dim_args does (dims unique, s no longer than
 * the rank, -1 for the input's size, every size positive), and a
 * Hermitian (c2r) transform's last size defaults to 2 (n - 1). Sizes may be
 * symbolic; a check fails only when the symbols' ranges prove it.
 */
#include <string.h>

#include "ir/meta.h"

static alloy_dim C(int64_t v) { return alloy_dim_const(v); }

static alloy_dtype complex_of(alloy_dtype t) { return t == ALLOY_F64 ? ALLOY_C128 : ALLOY_C64; }
static alloy_dtype real_of(alloy_dtype t) { return t == ALLOY_C128 ? ALLOY_F64 : ALLOY_F32; }

/* --- ATen's kernels ----------------------------------------------------------------*/

/* The dims an FFT kernel transforms: at least one, each valid and once. */
static alloy_error *kernel_dims(alloy_meta *m, const alloy_value *x, int *dims, int *n) {
  int64_t raw[ALLOY_MAX_RANK];
  alloy_error *e = meta_ints(m, 1, raw, ALLOY_MAX_RANK, n);
  if (!e && *n == 0) e = meta_error(m, "argument 'dim': expected at least one dim");
  for (int k = 0; k < *n && !e; k++) e = meta_wrap_dim(m, 1, raw[k], x->rank, &dims[k]);
  for (int k = 0; k < *n && !e; k++)
    for (int j = 0; j < k; j++)
      if (dims[j] == dims[k]) return meta_error(m, "argument 'dim': FFT dims must be unique");
  if (!e) {
    int64_t norm;
    if ((e = meta_int(m, 2, &norm))) return e;
    if (norm < 0 || norm > 2)
      return meta_error(m, "argument 'normalization': expected 0 (none), 1 (by root n) or 2 (by n), got %lld",
                        (long long)norm);
  }
  return e;
}

/* _fft_r2c(self, dim, normalization, onesided): complex output; onesided
 * keeps n/2 + 1 entries of the last transformed dim. */
static alloy_error *meta_fft_r2c(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  int dims[ALLOY_MAX_RANK], n;
  if (x->dtype != ALLOY_F32 && x->dtype != ALLOY_F64)
    return meta_error(m, "_fft_r2c: expected a float32 or float64 input, got %s", alloy_dtype_name(x->dtype));
  alloy_error *e = kernel_dims(m, x, dims, &n);
  if (e) return e;
  alloy_dim out[ALLOY_MAX_RANK];
  memcpy(out, x->shape, sizeof *out * (size_t)x->rank);
  int last = dims[n - 1];
  if (meta_bool(m, 3)) out[last] = alloy_dim_add(m->st, alloy_dim_floordiv(m->st, x->shape[last], C(2)), C(1));
  return meta_out_tensor(m, 0, complex_of(x->dtype), out, x->rank);
}

/* _fft_c2c(self, dim, normalization, forward): self's type. */
static alloy_error *meta_fft_c2c(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  int dims[ALLOY_MAX_RANK], n;
  if (!alloy_dtype_is_complex(x->dtype))
    return meta_error(m, "_fft_c2c: expected a complex input, got %s", alloy_dtype_name(x->dtype));
  alloy_error *e = kernel_dims(m, x, dims, &n);
  return e ? e : meta_out_like(m, 0, x, x->dtype);
}

/* _fft_c2r(self, dim, normalization, last_dim_size): real output whose last
 * transformed dim has last_dim_size entries. */
static alloy_error *meta_fft_c2r(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  int dims[ALLOY_MAX_RANK], n;
  if (!alloy_dtype_is_complex(x->dtype))
    return meta_error(m, "_fft_c2r: expected a complex input, got %s", alloy_dtype_name(x->dtype));
  alloy_error *e = kernel_dims(m, x, dims, &n);
  if (e) return e;
  alloy_dim out[ALLOY_MAX_RANK], last = meta_dim(m, 3);
  if (alloy_dim_lt(m->st, last, C(1)) == ALLOY_TRUE)
    return meta_error(m, "argument 'last_dim_size': expected a positive size");
  memcpy(out, x->shape, sizeof *out * (size_t)x->rank);
  out[dims[n - 1]] = last;
  return meta_out_tensor(m, 0, real_of(x->dtype), out, x->rank);
}

/* --- the torch.fft transforms -----------------------------------------------------------*/

/* What a transform takes and gives. */
enum {
  T_C2C,  /* fft, ifft (complex, or real promoted): complex out, sizes s       */
  T_R2C,  /* rfft, ihfft: real in, complex out, the last size s/2 + 1           */
  T_C2R,  /* irfft, hfft: complex (or promoted) in, real out of last_dim_size   */
  T_KIND = 3,
  T_ND = 4, /* the 2-D and n-D forms: (self, s, dim, norm); else (self, n, dim, norm) */
};

/* The dtype a transform computes in: complex stays, integers become
 * float32; then float32 or float64 only. */
static alloy_error *fft_dtype(alloy_meta *m, alloy_dtype in, alloy_dtype *out) {
  if (alloy_dtype_is_complex(in)) return *out = in, NULL;
  if (!alloy_dtype_is_float(in)) in = ALLOY_F32;
  if (in != ALLOY_F32 && in != ALLOY_F64)
    return meta_error(m, "Unsupported dtype %s (the FFTs take float32 and float64, and their complex types)",
                      alloy_dtype_name(in));
  return *out = in, NULL;
}

static alloy_error *check_norm(alloy_meta *m, int i) {
  const char *norm = meta_str(m, i);
  if (!norm || !strcmp(norm, "backward") || !strcmp(norm, "forward") || !strcmp(norm, "ortho")) return NULL;
  return meta_error(m, "Invalid normalization mode: \"%s\" (argument 'norm')", norm);
}

/* canonicalize_fft_shape_and_dim_args: the transformed dims and their
 * signal sizes, from (n, dim) of the 1-D forms or (s, dim) of the others. */
static alloy_error *fft_plan(alloy_meta *m, const alloy_value *x, bool nd, int *dims, alloy_dim *sizes,
                             int *count, bool *has_s) {
  alloy_dim s[ALLOY_MAX_RANK];
  int ns = 0, nd_dims = 0;
  int64_t raw[ALLOY_MAX_RANK];
  alloy_error *e = NULL;
  *has_s = !meta_is_none(m, 1);
  bool has_dim = !meta_is_none(m, 2);
  if (nd) {
    if (*has_s && (e = meta_dims(m, 1, s, ALLOY_MAX_RANK, &ns))) return e;
    if (has_dim && (e = meta_ints(m, 2, raw, ALLOY_MAX_RANK, &nd_dims))) return e;
  } else {
    if (*has_s) s[0] = meta_dim(m, 1), ns = 1;
    if ((e = meta_int(m, 2, &raw[0]))) return e;
    nd_dims = 1, has_dim = true;
  }
  if (has_dim) {
    for (int k = 0; k < nd_dims; k++) {
      if (x->rank == 0)
        return meta_error(m, "Dimension specified as %lld but tensor has no dimensions", (long long)raw[k]);
      if ((e = meta_wrap_dim(m, 2, raw[k], x->rank, &dims[k]))) return e;
      for (int j = 0; j < k; j++)
        if (dims[j] == dims[k]) return meta_error(m, "FFT dims must be unique");
    }
  }
  if (*has_s) {
    if (has_dim && nd_dims != ns)
      return meta_error(m, "When given, dim and shape arguments must have the same length");
    if (ns > x->rank)
      return meta_error(m, "Got shape with %d values but input tensor only has %d dimensions.", ns, x->rank);
    if (!has_dim)
      for (int k = 0; k < ns; k++) dims[k] = x->rank - ns + k;
    for (int k = 0; k < ns; k++)
      sizes[k] = nd && alloy_dim_is_const(s[k]) && s[k].value == -1 ? x->shape[dims[k]] : s[k];
    *count = ns;
  } else {
    if (!has_dim) {
      nd_dims = x->rank;
      for (int k = 0; k < nd_dims; k++) dims[k] = k;
    }
    for (int k = 0; k < nd_dims; k++) sizes[k] = x->shape[dims[k]];
    *count = nd_dims;
  }
  for (int k = 0; k < *count; k++)
    if (alloy_dim_lt(m->st, sizes[k], C(1)) == ALLOY_TRUE) {
      char b[64];
      alloy_dim_print(sizes[k], b, sizeof b);
      return meta_error(m, "Invalid number of data points (%s) specified", b);
    }
  return NULL;
}

/* Whether the n-D forms' s ends with -1 (the Hermitian size defaults). */
static bool last_s_is_default(alloy_meta *m) {
  alloy_dim s[ALLOY_MAX_RANK];
  int ns = 0;
  alloy_error *e = meta_dims(m, 1, s, ALLOY_MAX_RANK, &ns);
  alloy_error_free(e);
  return !e && ns > 0 && alloy_dim_is_const(s[ns - 1]) && s[ns - 1].value == -1;
}

/* Every transform of torch.fft; m->param: T_* kind, | T_ND for the 2-D and
 * n-D forms. */
static alloy_error *meta_fft(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  int kind = m->param & T_KIND, dims[ALLOY_MAX_RANK], count = 0;
  bool nd = m->param & T_ND, has_s;
  alloy_dim sizes[ALLOY_MAX_RANK];
  const char *fname = strchr(m->op->name, '.') + 5; /* "rfft" of "aten.fft_rfft.default" */
  alloy_dtype t = ALLOY_F32;
  alloy_error *e = check_norm(m, 3);
  if (!e && kind == T_R2C && alloy_dtype_is_complex(x->dtype))
    e = meta_error(m, "%.*s expects a real-valued input tensor, but got %s",
                   (int)(strchr(fname, '.') - fname), fname, alloy_dtype_name(x->dtype));
  if (!e) e = fft_dtype(m, x->dtype, &t);
  if (!e) e = fft_plan(m, x, nd, dims, sizes, &count, &has_s);
  if (e) return e;
  if (count == 0 && kind != T_C2C)
    return meta_error(m, "%.*s must transform at least one axis", (int)(strchr(fname, '.') - fname), fname);
  alloy_dim out[ALLOY_MAX_RANK];
  memcpy(out, x->shape, sizeof *out * (size_t)x->rank);
  for (int k = 0; k < count; k++) out[dims[k]] = sizes[k];
  if (count == 0) return meta_out_tensor(m, 0, complex_of(t), out, x->rank);
  int last = dims[count - 1];
  if (kind == T_R2C) {
    out[last] = alloy_dim_add(m->st, alloy_dim_floordiv(m->st, sizes[count - 1], C(2)), C(1));
    return meta_out_tensor(m, 0, complex_of(t), out, x->rank);
  }
  if (kind == T_C2R) {
    /* the last size: s's when given (and not -1), else 2 (n - 1) */
    alloy_dim lastsize = sizes[count - 1];
    if (!has_s || (nd && last_s_is_default(m)))
      lastsize = alloy_dim_mul(m->st, C(2), alloy_dim_sub(m->st, x->shape[last], C(1)));
    if (alloy_dim_lt(m->st, lastsize, C(1)) == ALLOY_TRUE) {
      char b[64];
      alloy_dim_print(lastsize, b, sizeof b);
      return meta_error(m, "Invalid number of data points (%s) specified", b);
    }
    out[last] = lastsize;
    return meta_out_tensor(m, 0, real_of(complex_of(t)), out, x->rank);
  }
  return meta_out_tensor(m, 0, complex_of(t), out, x->rank);
}

/* --- stft, istft ------------------------------------------------------------------------*/

/* An optional int argument by name, or dflt when None. */
static alloy_dim opt_dim(alloy_meta *m, const char *name, alloy_dim dflt) {
  int i = alloy_schema_find_arg(m->op->schema, name);
  return i < 0 || meta_is_none(m, i) ? dflt : meta_dim(m, i);
}

static bool opt_bool(alloy_meta *m, const char *name, bool dflt) {
  int i = alloy_schema_find_arg(m->op->schema, name);
  return i < 0 || meta_is_none(m, i) ? dflt : meta_bool(m, i);
}

/* The window checks stft and istft share: hop and win_length positive,
 * win_length at most n_fft, a window of win_length elements. */
static alloy_error *check_window(alloy_meta *m, alloy_dim n_fft, alloy_dim hop, alloy_dim win, bool hop_le_win) {
  if (alloy_dim_le(m->st, hop, C(0)) == ALLOY_TRUE ||
      (hop_le_win && alloy_dim_lt(m->st, win, hop) == ALLOY_TRUE))
    return meta_error(m, "expected 0 < hop_length%s", hop_le_win ? " <= win_length" : "");
  if (alloy_dim_le(m->st, win, C(0)) == ALLOY_TRUE || alloy_dim_lt(m->st, n_fft, win) == ALLOY_TRUE)
    return meta_error(m, "expected 0 < win_length <= n_fft");
  const alloy_value *w = meta_tensor(m, 4);
  if (w && (w->rank != 1 || alloy_dim_eq(m->st, w->shape[0], win) == ALLOY_FALSE))
    return meta_error(m, "expected a 1D window tensor of size equal to win_length, got %d dims", w->rank);
  return NULL;
}

/* stft(self, n_fft, hop_length, win_length, window, [center, pad_mode,]
 * normalized, onesided, return_complex, align_to_window): frames of n_fft
 * samples every hop_length (after padding n_fft / 2 on both sides when
 * centered), each transformed: [batch?, n_freq, n_frames], complex (or
 * real with a trailing pair, return_complex=False). */
static alloy_error *meta_stft(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0), *w = meta_tensor(m, 4);
  int64_t n_fft;
  alloy_error *e = meta_int(m, 1, &n_fft);
  if (e) return e;
  bool center = opt_bool(m, "center", false), align = opt_bool(m, "align_to_window", false);
  bool cplx = alloy_dtype_is_complex(x->dtype) || (w && alloy_dtype_is_complex(w->dtype));
  int rc = alloy_schema_find_arg(m->op->schema, "return_complex");
  if (meta_is_none(m, rc) && !cplx)
    return meta_error(m, "stft requires the return_complex parameter be given for real inputs, and will further "
                         "require that return_complex=True in a future PyTorch release.");
  bool return_complex = meta_is_none(m, rc) ? cplx : meta_bool(m, rc);
  if (center && align) return meta_error(m, "stft align_to_window should only be set when center = false");
  alloy_dtype t;
  if (!alloy_dtype_is_float(x->dtype) && !alloy_dtype_is_complex(x->dtype))
    return meta_error(m, "stft: expected a tensor of floating point or complex values, got %s",
                      alloy_dtype_name(x->dtype));
  if ((e = fft_dtype(m, x->dtype, &t))) return e;
  if (x->rank < 1 || x->rank > 2) return meta_error(m, "stft: expected a 1D or 2D tensor, got %d dims", x->rank);
  alloy_dim len = x->shape[x->rank - 1], hop = opt_dim(m, "hop_length", C(n_fft >> 2)), win = opt_dim(m, "win_length", C(n_fft));
  if (center) len = alloy_dim_add(m->st, len, C(2 * (n_fft / 2)));
  if (n_fft <= 0 || alloy_dim_lt(m->st, len, C(n_fft)) == ALLOY_TRUE)
    return meta_error(m, "stft: expected 0 < n_fft <= the signal's length, but got n_fft=%lld", (long long)n_fft);
  if ((e = check_window(m, C(n_fft), hop, win, false))) return e;
  bool onesided = opt_bool(m, "onesided", !cplx);
  if (cplx && onesided) return meta_error(m, "Cannot have onesided output if window or input is complex");
  alloy_dim frames_of = align ? win : C(n_fft);
  alloy_dim frames = alloy_dim_add(m->st, C(1), alloy_dim_floordiv(m->st, alloy_dim_sub(m->st, len, frames_of), hop));
  alloy_dim out[4];
  int r = 0;
  if (x->rank == 2) out[r++] = x->shape[0];
  out[r++] = C(onesided ? n_fft / 2 + 1 : n_fft);
  out[r++] = frames;
  alloy_dtype ct = t == ALLOY_F64 || t == ALLOY_C128 ? ALLOY_C128 : ALLOY_C64;
  if (return_complex) return meta_out_tensor(m, 0, ct, out, r);
  out[r++] = C(2);
  return meta_out_tensor(m, 0, real_of(ct), out, r);
}

/* istft(self, n_fft, hop_length, win_length, window, center, normalized,
 * onesided, length, return_complex): the overlap-added inverse of stft's
 * complex [batch?, n_freq, n_frames]: [batch?, length], real unless
 * return_complex. */
static alloy_error *meta_istft(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  int64_t n_fft;
  alloy_error *e = meta_int(m, 1, &n_fft);
  if (e) return e;
  if (!alloy_dtype_is_complex(x->dtype))
    return meta_error(m, "istft requires a complex-valued input tensor matching the output from stft with "
                         "return_complex=True.");
  if (x->rank != 2 && x->rank != 3)
    return meta_error(m, "istft: expected a tensor with 2 or 3 dimensions of complex dtype, but got %d", x->rank);
  alloy_dim fft_size = x->shape[x->rank - 2], frames = x->shape[x->rank - 1];
  alloy_dim hop = opt_dim(m, "hop_length", C(n_fft >> 2)), win = opt_dim(m, "win_length", C(n_fft));
  bool onesided = opt_bool(m, "onesided", alloy_dim_eq(m->st, fft_size, C(n_fft)) != ALLOY_TRUE);
  if (alloy_dim_eq(m->st, fft_size, C(onesided ? n_fft / 2 + 1 : n_fft)) == ALLOY_FALSE)
    return meta_error(m, "istft: expected the frequency dimension (3rd to the last) of the input tensor to match "
                         "n_fft%s", onesided ? " / 2 + 1 when onesided=True" : " when onesided=False");
  if ((e = check_window(m, C(n_fft), hop, win, true))) return e;
  bool center = meta_bool(m, 5), return_complex = meta_bool(m, 9);
  if (return_complex && onesided) return meta_error(m, "Cannot have onesided output if window or input is complex");
  alloy_dim expected = alloy_dim_add(m->st, C(n_fft), alloy_dim_mul(m->st, hop, alloy_dim_sub(m->st, frames, C(1))));
  alloy_dim len = meta_is_none(m, 8) ? alloy_dim_sub(m->st, expected, C(center ? 2 * (n_fft / 2) : 0)) : meta_dim(m, 8);
  alloy_dim out[2];
  int r = 0;
  if (x->rank == 3) out[r++] = x->shape[0];
  out[r++] = len;
  return meta_out_tensor(m, 0, return_complex ? x->dtype : real_of(x->dtype), out, r);
}

/* --- helpers of torch.fft ------------------------------------------------------------------*/

/* fftshift and ifftshift (a roll): the input's type; dims valid. */
static alloy_error *meta_fftshift(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  if (!meta_is_none(m, 1)) {
    int64_t raw[ALLOY_MAX_RANK];
    int n, d;
    alloy_error *e = meta_ints(m, 1, raw, ALLOY_MAX_RANK, &n);
    for (int k = 0; k < n && !e; k++) e = meta_wrap_dim(m, 1, raw[k], x->rank, &d);
    if (e) return e;
  }
  return meta_out_like(m, 0, x, x->dtype);
}

/* fftfreq(n, d) (param 0) and rfftfreq (1): n or n/2 + 1 frequencies of a
 * floating-point dtype (float32 by default; PyTorch's CPU arange refuses
 * the complex ones the signature admits). */
static alloy_error *meta_fftfreq(alloy_meta *m) {
  int64_t n;
  alloy_error *e = meta_int(m, 0, &n);
  if (e) return e;
  alloy_dtype t = meta_dtype_or(m, 2, ALLOY_F32);
  if (alloy_dtype_is_complex(t))
    return meta_error(m, "\"arange_cpu\" not implemented for '%s' (argument 'dtype')", alloy_dtype_name(t));
  if (!alloy_dtype_is_float(t))
    return meta_error(m, "%s requires a floating point or complex dtype (argument 'dtype' is %s)",
                      m->param ? "rfftfreq" : "fftfreq", alloy_dtype_name(t));
  if (n < 0) return meta_error(m, "argument 'n': the number of frequencies must be non-negative, got %lld", (long long)n);
  alloy_dim len = C(m->param ? n / 2 + 1 : n);
  return meta_out_tensor(m, 0, t, &len, 1);
}

const alloy_meta_entry alloy_meta_fft[] = {
    {"aten._fft_r2c.default", meta_fft_r2c, 0},
    {"aten._fft_c2c.default", meta_fft_c2c, 0},
    {"aten._fft_c2r.default", meta_fft_c2r, 0},
    {"aten.fft_fft.default", meta_fft, T_C2C},
    {"aten.fft_ifft.default", meta_fft, T_C2C},
    {"aten.fft_rfft.default", meta_fft, T_R2C},
    {"aten.fft_ihfft.default", meta_fft, T_R2C},
    {"aten.fft_irfft.default", meta_fft, T_C2R},
    {"aten.fft_hfft.default", meta_fft, T_C2R},
    {"aten.fft_fft2.default", meta_fft, T_C2C | T_ND},
    {"aten.fft_ifft2.default", meta_fft, T_C2C | T_ND},
    {"aten.fft_rfft2.default", meta_fft, T_R2C | T_ND},
    {"aten.fft_ihfft2.default", meta_fft, T_R2C | T_ND},
    {"aten.fft_irfft2.default", meta_fft, T_C2R | T_ND},
    {"aten.fft_hfft2.default", meta_fft, T_C2R | T_ND},
    {"aten.fft_fftn.default", meta_fft, T_C2C | T_ND},
    {"aten.fft_ifftn.default", meta_fft, T_C2C | T_ND},
    {"aten.fft_rfftn.default", meta_fft, T_R2C | T_ND},
    {"aten.fft_ihfftn.default", meta_fft, T_R2C | T_ND},
    {"aten.fft_irfftn.default", meta_fft, T_C2R | T_ND},
    {"aten.fft_hfftn.default", meta_fft, T_C2R | T_ND},
    {"aten.stft.default", meta_stft, 0},
    {"aten.stft.center", meta_stft, 0},
    {"aten.istft.default", meta_istft, 0},
    {"aten.fft_fftshift.default", meta_fftshift, 0},
    {"aten.fft_ifftshift.default", meta_fftshift, 0},
    {"aten.fft_fftfreq.default", meta_fftfreq, 0},
    {"aten.fft_rfftfreq.default", meta_fftfreq, 1},
    {NULL, NULL, 0},
};
