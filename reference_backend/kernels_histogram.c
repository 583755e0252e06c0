/*
 * reference_backend/kernels_histogram.c: reference kernels of the reduce
 * family that count and group: histograms (histc, histogram,
 * _histogramdd_*), the ops whose output sizes depend on the data
 * (bincount, _unique2, _unique, unique_consecutive, unique_dim,
 * unique_dim_consecutive) and segment_reduce. Like
 * PyTorch's CPU kernels, histograms and segment_reduce compute in the
 * input's own dtype, rounding every step. The shared helpers are in
 * kernels_reduce.h; the plain reductions are in kernels_reduce.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference_backend/kernels_reduce.h"

/* ---- histograms ---------------------------------------------------------------*/

/* Bin edges of one dim: either linear (n + 1 edges from linspace, found by
 * interpolation) or given (found by binary search). Values are held as the
 * input dtype holds them. */
typedef struct edges {
  double *v;
  int64_t count; /* bins + 1 */
} edges;

/* torch.linspace(lo, hi, count) in dtype t, as its CPU kernel computes it:
 * from the start up to the middle, from the end after it. */
static void linspace_edges(alloy_dtype t, double lo, double hi, edges *e) {
  double start = round_to(t, lo), end = round_to(t, hi);
  int64_t steps = e->count, half = steps / 2;
  double step = steps > 1 ? round_to(t, (end - start) / round_to(t, (double)(steps - 1))) : 0.0;
  for (int64_t k = 0; k < steps; k++) {
    double from_start = round_to(t, step * round_to(t, (double)k));
    double from_end = round_to(t, step * round_to(t, (double)(steps - k - 1)));
    e->v[k] = round_to(t, k < half ? start + from_start : end - from_end);
  }
}

/* The position of the last edge <= x among e->v[lo, hi) (upper_bound - 1). */
static int64_t upper_bound_at(const edges *e, int64_t lo, int64_t hi, double x) {
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (e->v[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

enum { BINS_LINEAR, BINS_LINEAR_SEARCH, BINS_SEARCH };

/* The bin of x in e, or -1 outside [first, last] and for NaN. Linear bins
 * compute (x - first) * bins / (last - first) in dtype t, as PyTorch does;
 * BINS_LINEAR_SEARCH then corrects by one against the edges. */
static int64_t bin_of(const edges *e, alloy_dtype t, int algo, double x) {
  double first = e->v[0], last = e->v[e->count - 1];
  if (!(x >= first && x <= last)) return -1;
  int64_t pos;
  if (algo == BINS_SEARCH) {
    pos = upper_bound_at(e, 0, e->count, x);
  } else {
    double num = round_to(t, round_to(t, x - first) * round_to(t, (double)(e->count - 1)));
    pos = f_to_i(round_to(t, num / round_to(t, last - first)));
    if (algo == BINS_LINEAR_SEARCH) {
      int64_t lo = pos - 1 > 0 ? pos - 1 : 0, hi = pos + 2 < e->count ? pos + 2 : e->count;
      pos = upper_bound_at(e, lo, hi, x);
    }
  }
  return pos == e->count - 1 ? pos - 1 : pos; /* the last bin holds its right edge */
}

/* Accumulates the N-d histogram of x's points (x is [..., N]: each row of
 * the last dim one point; x_flat: a 1-d input is N=1 points) into hist, in
 * the input dtype, then normalizes for density. */
static int histogram_nd(const alloy_kernel_tensor *x, bool x_flat, int nd, const edges *e, int algo,
                        const alloy_kernel_tensor *weight, bool density,
                        const alloy_kernel_tensor *hist) {
  alloy_dtype t = x->dtype;
  int64_t total = ref_numel(x), npoints = x_flat ? total : (nd ? total / nd : 0);
  int64_t nh = ref_numel(hist);
  double *acc = calloc((size_t)(nh > 0 ? nh : 1), sizeof *acc);
  if (!acc) return 1;
  for (int64_t i = 0; i < npoints; i++) {
    int64_t flat = 0;
    bool skip = false;
    for (int d = 0; d < nd && !skip; d++) {
      double v = ref_load_f(x->data, t, flat_offset(x, x_flat ? i : i * nd + d));
      int64_t b = bin_of(&e[d], t, algo, v);
      skip = b < 0;
      flat = flat * (e[d].count - 1) + b;
    }
    if (skip) continue;
    double w = weight ? ref_load_f(weight->data, weight->dtype, flat_offset(weight, i)) : 1.0;
    acc[flat] = round_to(t, acc[flat] + w);
  }
  if (density) {
    double sum = 0.0;
    for (int64_t j = 0; j < nh; j++) sum += acc[j];
    sum = round_to(t, sum);
    for (int64_t j = 0; j < nh; j++) {
      acc[j] = round_to(t, acc[j] / sum);
      int64_t rest = j;
      for (int d = nd - 1; d >= 0; d--) {
        int64_t b = rest % (e[d].count - 1);
        rest /= e[d].count - 1;
        acc[j] = round_to(t, acc[j] / round_to(t, e[d].v[b + 1] - e[d].v[b]));
      }
    }
  }
  for (int64_t j = 0; j < nh; j++)
    ref_store_f(hist->data, hist->dtype, flat_offset(hist, j), acc[j]);
  free(acc);
  return 0;
}

/* The outer edges of each of the nd dims: range, else the data's min and
 * max (an empty input: [0, 1]); an empty range widens by 0.5 each side. */
static int outer_edges(const alloy_kernel_call *c, const alloy_kernel_tensor *x, bool x_flat,
                       int nd, double *lo, double *hi) {
  double range[2 * MAX_DIMS];
  int nr = ref_floats(c, "range", range, 2 * MAX_DIMS);
  int64_t total = ref_numel(x), npoints = x_flat ? total : (nd ? total / nd : 0);
  for (int d = 0; d < nd; d++) {
    if (nr >= 2 * nd) {
      lo[d] = range[2 * d], hi[d] = range[2 * d + 1];
    } else if (npoints == 0) {
      lo[d] = 0.0, hi[d] = 1.0;
    } else {
      lo[d] = INFINITY, hi[d] = -INFINITY;
      for (int64_t i = 0; i < npoints; i++) {
        double v = ref_load_f(x->data, x->dtype, flat_offset(x, x_flat ? i : i * nd + d));
        if (isnan(v)) lo[d] = hi[d] = NAN;
        if (v < lo[d]) lo[d] = v;
        if (v > hi[d]) hi[d] = v;
      }
    }
    if (!isfinite(lo[d]) || !isfinite(hi[d]) || lo[d] > hi[d]) return 1;
    if (lo[d] == hi[d]) lo[d] -= 0.5, hi[d] += 0.5;
  }
  return 0;
}

/* Linear edges for nd dims into one buffer: bins[d] + 1 edges each. */
static double *linear_edges(const alloy_kernel_call *c, const alloy_kernel_tensor *x, bool x_flat,
                            int nd, const int64_t *bins, edges *e) {
  double lo[MAX_DIMS], hi[MAX_DIMS];
  int64_t total = 0;
  for (int d = 0; d < nd; d++) total += bins[d] + 1;
  if (outer_edges(c, x, x_flat, nd, lo, hi)) return NULL;
  double *buf = malloc(sizeof *buf * (size_t)(total > 0 ? total : 1));
  for (int d = 0, at = 0; buf && d < nd; at += (int)bins[d] + 1, d++) {
    e[d] = (edges){buf + at, bins[d] + 1};
    linspace_edges(x->dtype, lo[d], hi[d], &e[d]);
  }
  return buf;
}

static void store_edges(const edges *e, const alloy_kernel_tensor *out) {
  for (int64_t k = 0; k < e->count && k < ref_numel(out); k++)
    ref_store_f(out->data, out->dtype, flat_offset(out, k), e->v[k]);
}

/* histc(self, bins, min, max): min == max takes the data's range, an empty
 * range widens by 1 each side; bins found by plain interpolation. */
static int k_histc(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *x = &c->inputs[0];
  int64_t bins = 100;
  double lo = 0.0, hi = 0.0;
  ref_int(c, "bins", &bins);
  ref_float(c, "min", &lo);
  ref_float(c, "max", &hi);
  int64_t n = ref_numel(x);
  if (lo == hi && n > 0) {
    lo = INFINITY, hi = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
      double v = ref_load_f(x->data, x->dtype, flat_offset(x, i));
      if (isnan(v)) lo = hi = NAN;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  }
  if (lo == hi) lo -= 1.0, hi += 1.0;
  if (!isfinite(lo) || !isfinite(hi) || !(lo < hi) || bins < 1) return 1;
  /* only the outer edges matter to plain interpolation */
  double *v = malloc(sizeof *v * (size_t)(bins + 1));
  if (!v) return 1;
  edges e = {v, bins + 1};
  v[0] = round_to(x->dtype, lo), v[bins] = round_to(x->dtype, hi);
  int rc = histogram_nd(x, true, 1, &e, BINS_LINEAR, NULL, false, &c->outputs[0]);
  free(v);
  return rc;
}

/* histogram.bin_ct(self, bins, range, weight, density) -> (hist, edges). */
static int k_histogram_bin_ct(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *x = ref_tensor(c, "self");
  int64_t bins = 100;
  bool density = false;
  ref_int(c, "bins", &bins);
  ref_bool(c, "density", &density);
  edges e;
  double *buf = x && bins > 0 ? linear_edges(c, x, true, 1, &bins, &e) : NULL;
  if (!buf) return 1;
  int rc = histogram_nd(x, true, 1, &e, BINS_LINEAR_SEARCH, ref_tensor(c, "weight"), density,
                        &c->outputs[0]);
  store_edges(&e, &c->outputs[1]);
  free(buf);
  return rc;
}

/* Edges from a tensor, as the input dtype holds them. */
static double *tensor_edges(const alloy_kernel_tensor *b, alloy_dtype t, edges *e) {
  int64_t n = ref_numel(b);
  double *v = malloc(sizeof *v * (size_t)(n > 0 ? n : 1));
  for (int64_t k = 0; v && k < n; k++)
    v[k] = round_to(t, ref_load_f(b->data, b->dtype, flat_offset(b, k)));
  *e = (edges){v, n};
  return n > 0 ? v : (free(v), NULL);
}

/* histogram.bins_tensor(self, bins, weight, density) -> (hist, bins). */
static int k_histogram_bins_tensor(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *x = ref_tensor(c, "self"), *b = ref_tensor(c, "bins");
  bool density = false;
  ref_bool(c, "density", &density);
  edges e;
  if (!x || !b || !tensor_edges(b, x->dtype, &e)) return 1;
  int rc = histogram_nd(x, true, 1, &e, BINS_SEARCH, ref_tensor(c, "weight"), density,
                        &c->outputs[0]);
  store_edges(&e, &c->outputs[1]);
  free(e.v);
  return rc;
}

/* _histogramdd_*(self [..., N], bins, ...): the points are the rows of
 * self's last dim; weight has one value per point. */
static int histdd_bin_cts(const alloy_kernel_call *c, edges *e, int *nd, double **buf) {
  const alloy_kernel_tensor *x = ref_tensor(c, "self");
  int64_t bins[MAX_DIMS];
  if (!x || x->rank < 1) return 1;
  *nd = ref_ints(c, "bins", bins, MAX_DIMS);
  if (*nd != x->sizes[x->rank - 1]) return 1;
  for (int d = 0; d < *nd; d++)
    if (bins[d] < 1) return 1;
  *buf = linear_edges(c, x, false, *nd, bins, e);
  return *buf ? 0 : 1;
}

static int k_histogramdd_bin_edges(const alloy_kernel_call *c) {
  edges e[MAX_DIMS];
  double *buf;
  int nd;
  if (histdd_bin_cts(c, e, &nd, &buf)) return 1;
  for (int d = 0; d < nd && d < c->num_outputs; d++) store_edges(&e[d], &c->outputs[d]);
  free(buf);
  return 0;
}

static int k_histogramdd_from_bin_cts(const alloy_kernel_call *c) {
  edges e[MAX_DIMS];
  double *buf;
  int nd;
  bool density = false;
  ref_bool(c, "density", &density);
  if (histdd_bin_cts(c, e, &nd, &buf)) return 1;
  int rc = histogram_nd(ref_tensor(c, "self"), false, nd, e, BINS_LINEAR_SEARCH,
                        ref_tensor(c, "weight"), density, &c->outputs[0]);
  free(buf);
  return rc;
}

static int k_histogramdd_from_bin_tensors(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *x = ref_tensor(c, "self");
  int nd = ref_list_size(c, "bins");
  bool density = false;
  ref_bool(c, "density", &density);
  if (!x || x->rank < 1 || nd > MAX_DIMS || nd != x->sizes[x->rank - 1]) return 1;
  edges e[MAX_DIMS];
  int got = 0, rc = 0;
  for (; got < nd; got++) {
    const alloy_kernel_tensor *b = ref_tensor_item(c, "bins", got);
    if (!b || !tensor_edges(b, x->dtype, &e[got])) break;
  }
  rc = got < nd ? 1
                : histogram_nd(x, false, nd, e, BINS_SEARCH, ref_tensor(c, "weight"), density,
                               &c->outputs[0]);
  for (int d = 0; d < got; d++) free(e[d].v);
  return rc;
}

/* ---- data-dependent sizes: bincount, unique ----------------------------------*/

/* Output k with the sizes found: allocated now when the graph could not
 * know them, else the one the helper made (which must agree). */
static const alloy_kernel_tensor *output_sized(const alloy_kernel_call *c, int k,
                                               const int64_t *sizes) {
  if (c->outputs[k].data) return &c->outputs[k];
  if (!ALLOY_HAS_FIELD(c, alloy_kernel_call, alloc_output) || !c->alloc_output) return NULL;
  return c->alloc_output(c, k, sizes);
}

/* bincount(self, weights, minlength): max(self) + 1 bins, at least
 * minlength. Counts are int64; float32 weights add up in float32 and any
 * other weights in double, as PyTorch does. */
static int k_bincount(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *x = ref_tensor(c, "self"), *w = ref_tensor(c, "weights");
  int64_t minlength = 0, n = x ? ref_numel(x) : 0, len = 0;
  ref_int(c, "minlength", &minlength);
  if (!x || x->rank != 1) return 1;
  for (int64_t i = 0; i < n; i++) {
    int64_t v = ref_load_i(x->data, x->dtype, flat_offset(x, i));
    if (v < 0) return 1;
    if (v + 1 > len) len = v + 1;
  }
  if (len < minlength) len = minlength;
  const alloy_kernel_tensor *out = output_sized(c, 0, &len);
  if (!out || out->rank != 1 || out->sizes[0] != len) return 1;
  double *acc = calloc((size_t)(len > 0 ? len : 1), sizeof *acc);
  if (!acc) return 1;
  for (int64_t i = 0; i < n; i++) {
    int64_t v = ref_load_i(x->data, x->dtype, flat_offset(x, i));
    double wi = w ? ref_load_f(w->data, w->dtype, flat_offset(w, i)) : 1.0;
    acc[v] = out->dtype == ALLOY_F32 ? round_to(ALLOY_F32, acc[v] + wi) : acc[v] + wi;
  }
  for (int64_t j = 0; j < len; j++) ref_store_f(out->data, out->dtype, flat_offset(out, j), acc[j]);
  free(acc);
  return 0;
}

/* Whether the elements of x at offsets oa and ob are equal (NaN never is). */
static bool elems_equal(const alloy_kernel_tensor *x, int64_t oa, int64_t ob) {
  const void *d = x->data;
  if (is_float(x->dtype)) return ref_load_f(d, x->dtype, oa) == ref_load_f(d, x->dtype, ob);
  return ref_load_i(d, x->dtype, oa) == ref_load_i(d, x->dtype, ob);
}

/* Copies one element, exactly, between tensors of one dtype. */
static void copy_elem(const alloy_kernel_tensor *dst, int64_t od, const alloy_kernel_tensor *src,
                      int64_t os) {
  if (is_float(src->dtype))
    ref_store_f(dst->data, dst->dtype, od, ref_load_f(src->data, src->dtype, os));
  else
    ref_store_i(dst->data, dst->dtype, od, ref_load_i(src->data, src->dtype, os));
}

/* Writes the unique groups: values (group's first element), inverse
 * (group of each element, in element order) and counts. order[j] is the
 * flat index of the j-th element in grouping order; group[j] its group. */
static int unique_outputs(const alloy_kernel_call *c, const alloy_kernel_tensor *x,
                          const int64_t *order, const int64_t *group, int64_t n, int64_t ngroups,
                          bool inverse, bool counts) {
  int64_t zero = 0;
  const alloy_kernel_tensor *vals = output_sized(c, 0, &ngroups);
  const alloy_kernel_tensor *inv = output_sized(c, 1, inverse ? x->sizes : &zero);
  const alloy_kernel_tensor *cnt = c->num_outputs > 2 ? output_sized(c, 2, counts ? &ngroups : &zero) : NULL;
  if (!vals || !inv || (c->num_outputs > 2 && !cnt)) return 1;
  counts = counts && cnt;
  for (int64_t j = 0; j < n; j++) {
    int64_t g = group[j], src = flat_offset(x, order[j]);
    if (j == 0 || group[j - 1] != g) {
      copy_elem(vals, flat_offset(vals, g), x, src);
      if (counts) ref_store_i(cnt->data, cnt->dtype, flat_offset(cnt, g), 0);
    }
    if (counts) {
      int64_t o = flat_offset(cnt, g);
      ref_store_i(cnt->data, cnt->dtype, o, ref_load_i(cnt->data, cnt->dtype, o) + 1);
    }
    if (inverse) ref_store_i(inv->data, inv->dtype, flat_offset(inv, order[j]), g);
  }
  return 0;
}

/* _unique2(self, sorted, return_inverse, return_counts): PyTorch's CPU
 * kernel sorts whatever `sorted` says; each NaN is its own value. */
static int k_unique2(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *x = ref_tensor(c, "self");
  bool inverse = false, counts = false;
  ref_bool(c, "return_inverse", &inverse);
  ref_bool(c, "return_counts", &counts);
  if (!x) return 1;
  int64_t n = ref_numel(x), m = n > 0 ? n : 1;
  entry *scratch = NULL, *e = NULL;
  lane in = {.n = n, .is_int = !is_float(x->dtype), .scratch = &scratch};
  in.f = malloc(sizeof *in.f * (size_t)m);
  in.i = malloc(sizeof *in.i * (size_t)m);
  int64_t *order = malloc(sizeof *order * (size_t)m), *group = malloc(sizeof *group * (size_t)m);
  int rc = 1;
  if (in.f && in.i && order && group) {
    for (int64_t j = 0; j < n; j++) {
      int64_t o = flat_offset(x, j);
      in.f[j] = ref_load_f(x->data, x->dtype, o);
      in.i[j] = in.is_int ? ref_load_i(x->data, x->dtype, o) : 0;
    }
    e = ref_reduce_sort_lane(&in, false);
  }
  if (e) {
    int64_t ng = 0;
    for (int64_t j = 0; j < n; j++) {
      order[j] = e[j].idx;
      if (j > 0 && !entries_equal(&e[j - 1], &e[j], in.is_int)) ng++;
      group[j] = ng;
    }
    rc = unique_outputs(c, x, order, group, n, n ? ng + 1 : 0, inverse, counts);
  }
  free(in.f), free(in.i), free(scratch), free(order), free(group);
  return rc;
}

/* Slices a and b (x[..., a, ...] and x[..., b, ...] along dim, outer x
 * inner elements each) compared element by element in row-major order:
 * -1, 0 or 1 as PyTorch's lexicographic `<` orders them (a NaN is neither
 * less nor greater); equal reports at::equal's answer (no NaN is equal). */
typedef struct slices {
  const alloy_kernel_tensor *x;
  int64_t n, outer, inner;
} slices;

static int slice_cmp(const slices *s, int64_t a, int64_t b, bool *equal) {
  *equal = true;
  for (int64_t o = 0; o < s->outer; o++)
    for (int64_t i = 0; i < s->inner; i++) {
      int64_t oa = flat_offset(s->x, (o * s->n + a) * s->inner + i);
      int64_t ob = flat_offset(s->x, (o * s->n + b) * s->inner + i);
      const void *d = s->x->data;
      if (is_float(s->x->dtype)) {
        double va = ref_load_f(d, s->x->dtype, oa), vb = ref_load_f(d, s->x->dtype, ob);
        if (va < vb) return *equal = false, -1;
        if (va > vb) return *equal = false, 1;
        if (va != vb) *equal = false; /* NaN */
      } else {
        int64_t va = ref_load_i(d, s->x->dtype, oa), vb = ref_load_i(d, s->x->dtype, ob);
        if (va != vb) return *equal = false, va < vb ? -1 : 1;
      }
    }
  return 0;
}

/* A stable merge sort of order[0..n) by slice_cmp. */
static void sort_slices(const slices *s, int64_t *order, int64_t *tmp, int64_t n) {
  for (int64_t w = 1; w < n; w *= 2)
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      int64_t i = lo, j = mid, k = lo;
      bool eq;
      while (i < mid && j < hi) tmp[k++] = slice_cmp(s, order[j], order[i], &eq) < 0 ? order[j++] : order[i++];
      while (i < mid) tmp[k++] = order[i++];
      while (j < hi) tmp[k++] = order[j++];
      memcpy(order + lo, tmp + lo, sizeof *order * (size_t)(hi - lo));
    }
}

/* The distinct slices of x along dim: in slice order, or sorted; groups of
 * equal neighbours (in that order) each give one value; inverse maps each
 * slice to its group, counts each group's size. */
static int unique_slices(const alloy_kernel_call *c, const alloy_kernel_tensor *x, int dim, bool sort,
                         bool inverse, bool counts) {
  slices s = {x, x->sizes[dim], 1, 1};
  for (int d = 0; d < dim; d++) s.outer *= x->sizes[d];
  for (int d = dim + 1; d < x->rank; d++) s.inner *= x->sizes[d];
  int64_t n = s.n;
  size_t bytes = sizeof(int64_t) * (size_t)(n > 0 ? n : 1);
  int64_t *order = malloc(bytes), *group = malloc(bytes), *first = malloc(bytes), *tmp = malloc(bytes);
  int rc = !order || !group || !first || !tmp;
  int64_t ng = 0;
  for (int64_t j = 0; !rc && j < n; j++) order[j] = j;
  if (!rc && sort) sort_slices(&s, order, tmp, n);
  for (int64_t j = 0; !rc && j < n; j++) {
    bool same = false;
    if (j > 0) slice_cmp(&s, order[j - 1], order[j], &same);
    if (j > 0 && !same) ng++;
    if (j == 0 || !same) first[ng] = j;
    group[j] = ng;
  }
  int64_t u = n ? ng + 1 : 0, sizes[MAX_DIMS], zero = 0;
  memcpy(sizes, x->sizes, sizeof *sizes * (size_t)x->rank);
  sizes[dim] = u;
  const alloy_kernel_tensor *vals = rc ? NULL : output_sized(c, 0, sizes);
  const alloy_kernel_tensor *inv = rc ? NULL : output_sized(c, 1, inverse ? &n : &zero);
  const alloy_kernel_tensor *cnt = rc ? NULL : output_sized(c, 2, counts ? &u : &zero);
  rc = rc || !vals || !inv || !cnt;
  for (int64_t g = 0; !rc && g < u; g++)
    for (int64_t o = 0; o < s.outer; o++)
      for (int64_t i = 0; i < s.inner; i++) {
        int64_t src = flat_offset(x, (o * n + order[first[g]]) * s.inner + i);
        copy_elem(vals, flat_offset(vals, (o * u + g) * s.inner + i), x, src);
      }
  for (int64_t j = 0; !rc && j < n; j++) {
    if (inverse) ref_store_i(inv->data, inv->dtype, flat_offset(inv, order[j]), group[j]);
    if (counts && (j + 1 == n || group[j + 1] != group[j]))
      ref_store_i(cnt->data, cnt->dtype, flat_offset(cnt, group[j]), j + 1 - first[group[j]]);
  }
  free(order), free(group), free(first), free(tmp);
  return rc;
}

/* unique_consecutive(self, return_inverse, return_counts, dim): groups of
 * equal neighbours, over the flattened tensor or over slices along dim. */
static int k_unique_consecutive(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *x = ref_tensor(c, "self");
  bool inverse = false, counts = false;
  ref_bool(c, "return_inverse", &inverse);
  ref_bool(c, "return_counts", &counts);
  if (!x) return 1;
  int dim = -1;
  int64_t d64;
  if (ref_int(c, "dim", &d64) && (x->rank == 0 || wrap_dim(d64, x->rank, &dim))) return 1;
  if (dim < 0) {
    int64_t n = ref_numel(x), m = n > 0 ? n : 1, ng = 0;
    int64_t *order = malloc(sizeof *order * (size_t)m), *group = malloc(sizeof *group * (size_t)m);
    int rc = 1;
    if (order && group) {
      for (int64_t j = 0; j < n; j++) {
        order[j] = j;
        if (j > 0 && !elems_equal(x, flat_offset(x, j - 1), flat_offset(x, j))) ng++;
        group[j] = ng;
      }
      rc = unique_outputs(c, x, order, group, n, n ? ng + 1 : 0, inverse, counts);
    }
    free(order), free(group);
    return rc;
  }
  return unique_slices(c, x, dim, false, inverse, counts);
}

/* unique_dim(self, dim, sorted, return_inverse, return_counts) and
 * unique_dim_consecutive(self, dim, return_inverse, return_counts): the
 * distinct slices along dim, sorted (PyTorch's CPU kernel sorts whatever
 * `sorted` says) or of equal neighbours; inverse and counts always come. */
static int k_unique_dim(const alloy_kernel_call *c, bool sort) {
  const alloy_kernel_tensor *x = ref_tensor(c, "self");
  int64_t d64;
  int dim;
  if (!x || !ref_int(c, "dim", &d64) || x->rank == 0 || wrap_dim(d64, x->rank, &dim)) return 1;
  for (int d = 0; d < x->rank; d++)
    if (x->sizes[d] == 0 && d != dim)
      return ref_fail(c, x->sizes[dim] == 0
                             ? "Number of zero sized dimensions is more than one, so unique cannot be applied"
                             : "There are 0 sized dimensions, and they aren't selected, so unique cannot be "
                               "applied");
  return unique_slices(c, x, dim, sort, true, true);
}
static int k_unique_dim_sorted(const alloy_kernel_call *c) { return k_unique_dim(c, true); }
static int k_unique_dim_consecutive(const alloy_kernel_call *c) { return k_unique_dim(c, false); }

/* _unique(self, sorted, return_inverse): _unique2 without counts. */
static int k_unique(const alloy_kernel_call *c) { return k_unique2(c); }

/* ---- segment_reduce ------------------------------------------------------------*/

enum { SEG_MAX, SEG_MEAN, SEG_MIN, SEG_SUM, SEG_PROD };

/* segment_reduce(data, reduce, lengths | offsets, axis, unsafe, initial):
 * segments of data's dim `axis` (lengths' last dim; its leading dims are
 * data's). Computed in data's dtype step by step, as PyTorch's CPU kernel:
 * the initial value (or the reduction's identity) starts each segment; an
 * empty mean without initial is NaN. */
static int k_segment_reduce(const alloy_kernel_call *c) {
  static const char *const names[] = {"max", "mean", "min", "sum", "prod"};
  const alloy_kernel_tensor *data = ref_tensor(c, "data"), *len = ref_tensor(c, "lengths");
  const alloy_kernel_tensor *offs = ref_tensor(c, "offsets"), *out = &c->outputs[0];
  const char *reduce = ref_str(c, "reduce");
  int op = -1;
  for (int k = 0; reduce && k < 5; k++)
    if (!strcmp(reduce, names[k])) op = k;
  const alloy_kernel_tensor *seg = len ? len : offs;
  if (op < 0 || !data || !seg || seg->rank < 1) return 1;
  int axis = seg->rank - 1;
  if (axis >= data->rank || out->rank != data->rank) return 1;
  alloy_dtype t = data->dtype;
  double init = 0.0;
  bool has_init = ref_float(c, "initial", &init);
  init = has_init ? round_to(t, init)
         : op == SEG_MAX ? -INFINITY : op == SEG_MIN ? INFINITY : op == SEG_PROD ? 1.0 : 0.0;
  int64_t nseg = out->sizes[axis], outer = 1, inner = 1;
  for (int d = 0; d < axis; d++) outer *= data->sizes[d];
  for (int d = axis + 1; d < data->rank; d++) inner *= data->sizes[d];
  int ninner = data->rank - axis - 1;
  for (int64_t o = 0; o < outer; o++) {
    int64_t data_o = offset_of(o, axis, data->sizes, data->strides);
    int64_t out_o = offset_of(o, axis, out->sizes, out->strides);
    int64_t seg_o = offset_of(o, axis, seg->sizes, seg->strides), start = 0;
    for (int64_t s = 0; s < nseg; s++) {
      int64_t a = ref_load_i(seg->data, seg->dtype, seg_o + s * seg->strides[axis]), n = a;
      if (!len) {
        start = a;
        n = ref_load_i(seg->data, seg->dtype, seg_o + (s + 1) * seg->strides[axis]) - a;
      }
      if (n < 0) return 1;
      for (int64_t i = 0; i < inner; i++) {
        int64_t din = offset_of(i, ninner, data->sizes + axis + 1, data->strides + axis + 1);
        int64_t dout = offset_of(i, ninner, out->sizes + axis + 1, out->strides + axis + 1);
        double acc = init;
        for (int64_t j = 0; j < n; j++) {
          double v = ref_load_f(data->data, t, data_o + (start + j) * data->strides[axis] + din);
          if (op == SEG_MAX) acc = isnan(v) ? v : (acc < v ? v : acc);
          else if (op == SEG_MIN) acc = isnan(v) ? v : (v < acc ? v : acc);
          else if (op == SEG_PROD) acc = round_to(t, acc * v);
          else acc = round_to(t, acc + v);
        }
        if (op == SEG_MEAN && n == 0 && !has_init) acc = NAN;
        else if (op == SEG_MEAN && n > 0 && !isnan(acc)) acc = acc / (double)n;
        ref_store_f(out->data, out->dtype, out_o + s * out->strides[axis] + dout, acc);
      }
      if (len) start += n;
    }
  }
  return 0;
}

const alloy_kernel ref_kernels_histogram[] = {
    /* histograms, data-dependent sizes, segments */
    REF_KERNEL("aten.histc.default", k_histc),
    REF_KERNEL("aten.histogram.bin_ct", k_histogram_bin_ct),
    REF_KERNEL("aten.histogram.bins_tensor", k_histogram_bins_tensor),
    REF_KERNEL("aten._histogramdd_bin_edges.default", k_histogramdd_bin_edges),
    REF_KERNEL("aten._histogramdd_from_bin_cts.default", k_histogramdd_from_bin_cts),
    REF_KERNEL("aten._histogramdd_from_bin_tensors.default", k_histogramdd_from_bin_tensors),
    REF_KERNEL("aten.bincount.default", k_bincount),
    REF_KERNEL("aten._unique2.default", k_unique2),
    REF_KERNEL("aten.unique_consecutive.default", k_unique_consecutive),
    REF_KERNEL("aten._unique.default", k_unique),
    REF_KERNEL("aten.unique_dim.default", k_unique_dim_sorted),
    REF_KERNEL("aten.unique_dim_consecutive.default", k_unique_dim_consecutive),
    REF_KERNEL("aten.segment_reduce.default", k_segment_reduce),
    {NULL, NULL, NULL, NULL},
};
