/*
 * reference_backend/kernels_shape.c: reference kernels, shape family: the
 * views and movements (view/reshape, permute, expand, slice, select,
 * diagonal, unfold, as_strided, flip, ...), their *_copy and *_scatter
 * variants, cat/stack and the splits, paddings, im2col/col2im, the shuffles,
 * dtype conversions and copies, and the prims of the same kinds. The SVD
 * and FFT prims are in kernels_spectral.c; the helpers both files use (the
 * views, their walks, fail) are in kernels_shape.h.
 *
 * Every output here is a fresh tensor (the runtime runs views functionally),
 * so each op is a copy with index arithmetic. Two loops do nearly all of it:
 * copy_view walks two strided windows ("views": sizes, strides, offset) in
 * row-major order side by side, so a view op is a few lines that reshape a
 * window on its input, and a reshape is two windows of different shapes;
 * gather walks the output and asks a small function where each element comes
 * from (or that it is the fill value), which covers paddings, repeats, rolls,
 * shuffles and triangles. Elements of the same dtype are moved as bytes
 * (NaN payloads, -0.0 and int64 stay exact); conversions follow PyTorch's
 * casts (see move()). col2im, the one sum here, accumulates floats in
 * double, sequentially in the columns' row-major order; diff rounds each of
 * its passes to the dtype, as PyTorch's repeated subtraction does.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/checked.h"
#include "reference_backend/kernels_shape.h"
#include "reference_backend/ref.h"

int ref_shape_fail(const alloy_kernel_call *c, const char *what) {
  return ref_fail(c, "%s", what);
}

int64_t ref_shape_wrap_dim(int64_t d, int rank) {
  int r = rank > 0 ? rank : 1; /* a 0-dim tensor takes dim 0 and -1 */
  return d < 0 ? d + r : d;
}

int64_t ref_shape_numel_of(const int64_t *sizes, int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= sizes[d];
  return n;
}

static int64_t int_arg(const alloy_kernel_call *c, const char *name, int64_t dflt) {
  int64_t v;
  return ref_int(c, name, &v) ? v : dflt;
}

/* ---- converting one element ------------------------------------------- */

/* Float to integer as PyTorch's CPU casts do on x86-64: truncation toward
 * zero; NaN and out-of-range values give the cvtt instruction's "integer
 * indefinite" (the minimum), through int32 for int8/int16/int32 and through
 * int64 for int64 and uint8 (c10 casts to uint8 through int64). */
static int64_t float_to_int(double v, alloy_dtype to) {
  if (to == ALLOY_I64 || to == ALLOY_U8) {
    if (isnan(v) || v >= 9223372036854775808.0 || v < -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
  }
  if (isnan(v) || v >= 2147483648.0 || v <= -2147483649.0) return INT32_MIN;
  return (int64_t)(int32_t)v;
}

static bool is_int_like(alloy_dtype t) { return !alloy_dtype_is_float(t) && !alloy_dtype_is_complex(t); }

/* dst[di] = src[si], converted from st to dt. */
static void move(void *dst, alloy_dtype dt, int64_t di, const void *src, alloy_dtype st, int64_t si) {
  if (dt == st) {
    size_t n = alloy_dtype_size(dt);
    memcpy((char *)dst + di * (int64_t)n, (const char *)src + si * (int64_t)n, n);
  } else if (dt == ALLOY_BOOL) {
    ref_store_f(dst, dt, di, ref_load_f(src, st, si)); /* != 0, NaN is true */
  } else if (is_int_like(st) && alloy_dtype_is_float(dt)) {
    /* one rounding from int64 to float32, as static_cast<float> does */
    int64_t v = ref_load_i(src, st, si);
    ref_store_f(dst, dt, di, dt == ALLOY_F64 ? (double)v : (double)(float)v);
  } else if (alloy_dtype_is_float(st) && is_int_like(dt)) {
    ref_store_i(dst, dt, di, float_to_int(ref_load_f(src, st, si), dt));
  } else if (alloy_dtype_is_float(dt)) {
    ref_store_f(dst, dt, di, ref_load_f(src, st, si));
  } else {
    ref_store_i(dst, dt, di, ref_load_i(src, st, si));
  }
}

/* A fill value (padding, the zeros of a triangle), kept as the argument
 * came so that int64 fills stay exact. */
typedef struct fill {
  double f;
  int64_t i;
  bool is_int;
} fill;

static const fill zero_fill = {0.0, 0, true};

static void store_fill(const alloy_kernel_tensor *t, int64_t off, const fill *v) {
  if (alloy_dtype_is_float(t->dtype)) ref_store_f(t->data, t->dtype, off, v->is_int ? (double)v->i : v->f);
  else if (t->dtype == ALLOY_BOOL) ref_store_i(t->data, t->dtype, off, v->is_int ? v->i != 0 : v->f != 0.0);
  else if (alloy_dtype_is_complex(t->dtype)) {
    size_t n = alloy_dtype_size(t->dtype);
    memset((char *)t->data + off * (int64_t)n, 0, n);
  }
  else ref_store_i(t->data, t->dtype, off, v->is_int ? v->i : float_to_int(v->f, t->dtype));
}

/* ---- views and the walks over them -------------------------------------- */

view ref_shape_view_of(const alloy_kernel_tensor *t) {
  view v = {.rank = t->rank};
  for (int d = 0; d < t->rank; d++) v.sizes[d] = t->sizes[d], v.strides[d] = t->strides[d];
  return v;
}

int64_t ref_shape_view_numel(const view *v) { return ref_shape_numel_of(v->sizes, v->rank); }

static void view_drop(view *v, int d) {
  for (int k = d; k + 1 < v->rank; k++) v->sizes[k] = v->sizes[k + 1], v->strides[k] = v->strides[k + 1];
  v->rank--;
}

static void view_insert(view *v, int d, int64_t size, int64_t stride) {
  for (int k = v->rank; k > d; k--) v->sizes[k] = v->sizes[k - 1], v->strides[k] = v->strides[k - 1];
  v->sizes[d] = size, v->strides[d] = stride;
  v->rank++;
}

static void view_slice(view *v, int d, int64_t start, int64_t len, int64_t step) {
  v->offset += start * v->strides[d];
  v->sizes[d] = len;
  v->strides[d] *= step;
}

static void view_select(view *v, int d, int64_t index) {
  v->offset += index * v->strides[d];
  view_drop(v, d);
}

static void view_swap(view *v, int a, int b) {
  int64_t s = v->sizes[a], t = v->strides[a];
  v->sizes[a] = v->sizes[b], v->strides[a] = v->strides[b];
  v->sizes[b] = s, v->strides[b] = t;
}

static void view_flip(view *v, int d) {
  if (v->sizes[d] > 0) v->offset += (v->sizes[d] - 1) * v->strides[d];
  v->strides[d] = -v->strides[d];
}

/* The diagonal of dims a and b becomes a last dim of size len. */
static void view_diagonal(view *v, int64_t offset, int a, int b, int64_t len) {
  if (len > 0) v->offset += offset >= 0 ? offset * v->strides[b] : -offset * v->strides[a];
  int64_t stride = v->strides[a] + v->strides[b];
  view_drop(v, a > b ? a : b);
  view_drop(v, a < b ? a : b);
  view_insert(v, v->rank, len, stride);
}

/* The view broadcast to sizes (trailing dims aligned; size-1 and missing
 * dims repeat with stride 0). */
static view view_broadcast(const view *v, const int64_t *sizes, int rank) {
  view b = {.rank = rank, .offset = v->offset};
  for (int d = 0; d < rank; d++) {
    int k = d - (rank - v->rank);
    b.sizes[d] = sizes[d];
    b.strides[d] = k < 0 || v->sizes[k] == 1 ? 0 : v->strides[k];
  }
  return b;
}

void ref_shape_walk_init(walker *w, const view *v) {
  memset(w, 0, sizeof *w);
  w->v = v;
  w->off = v->offset;
}

void ref_shape_walk_next(walker *w) {
  const view *v = w->v;
  for (int d = v->rank - 1; d >= 0; d--) {
    if (++w->idx[d] < v->sizes[d]) {
      w->off += v->strides[d];
      return;
    }
    w->off -= v->strides[d] * (v->sizes[d] - 1);
    w->idx[d] = 0;
  }
}

/* The tile copy_same walks the last two dims in. */
enum { COPY_TILE = 32 };

/* memcpy of a constant size is one move, and minds no alignment (a
 * safetensors file's data need not be aligned to its element size) */
#define COPY_TILE_OF(N)                                                                                   \
  for (int64_t i = i0; i < i1; i++)                                                                       \
    for (int64_t j = j0; j < j1; j++) memcpy(d + (i * dr + j * dc) * N, s + (i * sr + j * sc) * N, N);

/* Same dtype, same shape, at least 2 dims: the elements moved as bytes of
 * their size, the last two dims in square tiles, so that a transpose (the
 * fold of every weight's permute at compile) reads and writes whole cache
 * lines rather than one of them an element at a time. False when the
 * views are not such. */
static bool copy_same(void *dst, const view *dv, const void *src, const view *sv, size_t es) {
  int r = dv->rank;
  if (r != sv->rank || r < 2 || (es != 1 && es != 2 && es != 4 && es != 8)) return false;
  for (int d = 0; d < r; d++)
    if (dv->sizes[d] != sv->sizes[d]) return false;
  const int64_t rows = dv->sizes[r - 2], cols = dv->sizes[r - 1];
  const int64_t dr = dv->strides[r - 2], dc = dv->strides[r - 1], sr = sv->strides[r - 2], sc = sv->strides[r - 1];
  view od = *dv, os = *sv; /* the dims before the last two */
  od.rank = os.rank = r - 2;
  walker a, b;
  ref_shape_walk_init(&a, &od);
  ref_shape_walk_init(&b, &os);
  for (int64_t o = ref_shape_view_numel(&od); o > 0; o--, ref_shape_walk_next(&a), ref_shape_walk_next(&b)) {
    char *d = (char *)dst + a.off * (int64_t)es;
    const char *s = (const char *)src + b.off * (int64_t)es;
    for (int64_t i0 = 0; i0 < rows; i0 += COPY_TILE)
      for (int64_t j0 = 0; j0 < cols; j0 += COPY_TILE) {
        const int64_t i1 = i0 + COPY_TILE < rows ? i0 + COPY_TILE : rows;
        const int64_t j1 = j0 + COPY_TILE < cols ? j0 + COPY_TILE : cols;
        switch (es) {
        case 1: COPY_TILE_OF(1) break;
        case 2: COPY_TILE_OF(2) break;
        case 4: COPY_TILE_OF(4) break;
        default: COPY_TILE_OF(8) break;
        }
      }
  }
  return true;
}

/* Copies n elements of src into dst, both walked in row-major order: equal
 * shapes make a strided copy, different ones a reshape. */
static void copy_n(void *dst, alloy_dtype dt, const view *dv, const void *src, alloy_dtype st,
                   const view *sv, int64_t n) {
  if (dt == st && n == ref_shape_view_numel(dv) && n == ref_shape_view_numel(sv) &&
      copy_same(dst, dv, src, sv, alloy_dtype_size(dt)))
    return;
  walker a, b;
  ref_shape_walk_init(&a, dv);
  ref_shape_walk_init(&b, sv);
  for (int64_t i = 0; i < n; i++, ref_shape_walk_next(&a), ref_shape_walk_next(&b))
    move(dst, dt, a.off, src, st, b.off);
}

static void copy_view(const alloy_kernel_tensor *out, const view *dv, const alloy_kernel_tensor *in,
                      const view *sv) {
  int64_t n = ref_shape_view_numel(dv), m = ref_shape_view_numel(sv);
  copy_n(out->data, out->dtype, dv, in->data, in->dtype, sv, n < m ? n : m);
}

/* out = in's elements in row-major order (any shapes of equal size). */
static void copy_flat(const alloy_kernel_tensor *out, const alloy_kernel_tensor *in) {
  view dv = ref_shape_view_of(out), sv = ref_shape_view_of(in);
  copy_view(out, &dv, in, &sv);
}

/* out = in seen through the window sv (sv's shape is out's). */
static int copy_from(const alloy_kernel_tensor *out, const alloy_kernel_tensor *in, const view *sv) {
  view dv = ref_shape_view_of(out);
  copy_view(out, &dv, in, sv);
  return 0;
}

static void fill_all(const alloy_kernel_tensor *t, const fill *v) {
  view tv = ref_shape_view_of(t);
  walker w;
  ref_shape_walk_init(&w, &tv);
  for (int64_t i = ref_shape_view_numel(&tv); i > 0; i--, ref_shape_walk_next(&w)) store_fill(t, w.off, v);
}

/* Where output element idx comes from: true with the input's element offset
 * in *off, false for the fill value. */
typedef bool (*gather_fn)(const void *ctx, const int64_t *idx, int64_t *off);

static int gather(const alloy_kernel_tensor *out, const alloy_kernel_tensor *in, gather_fn f,
                  const void *ctx, const fill *v) {
  view ov = ref_shape_view_of(out);
  walker w;
  ref_shape_walk_init(&w, &ov);
  for (int64_t i = ref_shape_view_numel(&ov); i > 0; i--, ref_shape_walk_next(&w)) {
    int64_t off;
    if (f(ctx, w.idx, &off)) move(out->data, out->dtype, w.off, in->data, in->dtype, off);
    else store_fill(out, w.off, v);
  }
  return 0;
}

/* The element offset of row-major element flat of t. */
static int64_t flat_offset(const alloy_kernel_tensor *t, int64_t flat) {
  int64_t off = 0;
  for (int d = t->rank - 1; d >= 0; d--) {
    off += (flat % t->sizes[d]) * t->strides[d];
    flat /= t->sizes[d];
  }
  return off;
}

/* t's elements as one contiguous row-major block: t's own data when it is
 * laid out so, else a copy in *temp (free it). NULL when out of memory. */
static void *contiguous_data(const alloy_kernel_tensor *t, void **temp) {
  int64_t expect = 1;
  bool dense = true;
  for (int d = t->rank - 1; d >= 0; d--) {
    if (t->sizes[d] != 1 && t->strides[d] != expect) dense = false;
    expect *= t->sizes[d];
  }
  *temp = NULL;
  if (dense) return t->data;
  int64_t n = ref_numel(t);
  *temp = malloc((size_t)(n ? n : 1) * alloy_dtype_size(t->dtype));
  if (!*temp) return NULL;
  view sv = ref_shape_view_of(t), dv = {.rank = 1, .sizes = {n}, .strides = {1}};
  copy_n(*temp, t->dtype, &dv, t->data, t->dtype, &sv, n);
  return *temp;
}

/* ---- copies, conversions, reshapes -------------------------------------- */

/* clone, alias, detach, _to_copy, to.*, view/reshape/flatten, squeeze,
 * unsqueeze, collapse, split_dim, convert_element_type, ...: the output
 * holds the input's elements in row-major order, in its own dtype. */
static int k_flat(const alloy_kernel_call *c) {
  copy_flat(&c->outputs[0], &c->inputs[0]);
  return 0;
}

/* copy(self, src) / copy_: src broadcast to self's shape, in self's dtype. */
static int k_copy(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0], *src = ref_tensor(c, "src");
  if (!src) return ref_shape_fail(c, "src must be a tensor");
  view sv = ref_shape_view_of(src), bv = view_broadcast(&sv, out->sizes, out->rank);
  return copy_from(out, src, &bv);
}

/* prims.copy_to(a, b): b's elements into a's shape and dtype. */
static int k_copy_to(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *b = ref_tensor(c, "b");
  if (!b) return ref_shape_fail(c, "b must be a tensor");
  copy_flat(&c->outputs[0], b);
  return 0;
}

/* resize_ / prims.resize: the elements that the old and new sizes share,
 * in row-major order; new ones (uninitialized in PyTorch) are zero. */
static int k_resize(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0];
  fill_all(out, &zero_fill);
  copy_flat(out, &c->inputs[0]);
  return 0;
}

/* prims.view_of_dtype: the same bytes read as another dtype. */
static int k_view_of_dtype(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *in = &c->inputs[0], *out = &c->outputs[0];
  void *temp;
  const char *bytes = contiguous_data(in, &temp);
  if (!bytes) return ref_shape_fail(c, "out of memory");
  size_t es = alloy_dtype_size(out->dtype);
  view ov = ref_shape_view_of(out);
  walker w;
  ref_shape_walk_init(&w, &ov);
  for (int64_t i = 0; i < ref_shape_view_numel(&ov); i++, ref_shape_walk_next(&w))
    memcpy((char *)out->data + w.off * (int64_t)es, bytes + i * (int64_t)es, es);
  free(temp);
  return 0;
}

/* prims.conj: a copy; complex values get their imaginary parts negated. */
static int k_conj(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0];
  copy_flat(out, &c->inputs[0]);
  if (!alloy_dtype_is_complex(out->dtype)) return 0;
  view ov = ref_shape_view_of(out);
  walker w;
  ref_shape_walk_init(&w, &ov);
  for (int64_t i = ref_shape_view_numel(&ov); i > 0; i--, ref_shape_walk_next(&w)) {
    if (out->dtype == ALLOY_C64) ((float *)out->data)[2 * w.off + 1] *= -1.0f;
    else ((double *)out->data)[2 * w.off + 1] *= -1.0;
  }
  return 0;
}

/* prims.where(pred, a, b), broadcast, in the output's dtype. */
static int k_where(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0];
  ref_scalar_tensor s[3];
  const alloy_kernel_tensor *ins[3] = {ref_operand(c, "pred", &s[0]), ref_operand(c, "a", &s[1]),
                                       ref_operand(c, "b", &s[2])};
  if (!ins[0] || !ins[1] || !ins[2]) return ref_shape_fail(c, "pred, a and b must be given");
  ref_iter it;
  ref_iter_init(&it, out, ins, 3);
  while (ref_iter_next(&it)) {
    bool p = ref_load_f(ins[0]->data, ins[0]->dtype, it.offset[1]) != 0.0;
    int k = p ? 1 : 2;
    move(out->data, out->dtype, it.offset[0], ins[k]->data, ins[k]->dtype, it.offset[k + 1]);
  }
  return 0;
}

/* prims.item: the one element, as the scalar output's dtype. */
static int k_item(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *in = &c->inputs[0], *out = &c->outputs[0];
  if (ref_numel(in) != 1)
    return ref_shape_fail(c, "a Tensor with other than one element cannot be converted to Scalar");
  move(out->data, out->dtype, 0, in->data, in->dtype, 0);
  return 0;
}

/* prims.maximum_value / minimum_value: a dtype's finite extremes. */
static int extreme_value(const alloy_kernel_call *c, bool max) {
  alloy_dtype t = ALLOY_F32;
  ref_dtype(c, "dtype", &t);
  static const struct {
    alloy_dtype t;
    int64_t lo, hi;
  } ints[] = {{ALLOY_BOOL, 0, 1},          {ALLOY_U8, 0, 255},
              {ALLOY_I8, INT8_MIN, INT8_MAX}, {ALLOY_I16, INT16_MIN, INT16_MAX},
              {ALLOY_I32, INT32_MIN, INT32_MAX}, {ALLOY_I64, INT64_MIN, INT64_MAX}};
  const alloy_kernel_tensor *out = &c->outputs[0];
  for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++)
    if (ints[k].t == t) {
      fill v = {0.0, max ? ints[k].hi : ints[k].lo, true};
      store_fill(out, 0, &v);
      return 0;
    }
  double lo, hi;
  if (alloy_dtype_is_float(t) && alloy_dtype_limits(t, &lo, &hi)) {
    fill v = {max ? hi : lo, 0, false};
    store_fill(out, 0, &v);
    return 0;
  }
  return ref_shape_fail(c, "no extreme values for this dtype");
}

static int k_maximum_value(const alloy_kernel_call *c) { return extreme_value(c, true); }
static int k_minimum_value(const alloy_kernel_call *c) { return extreme_value(c, false); }

/* Ops with nothing to compute: a token is an empty tensor; sinking tokens
 * has no outputs. */
static int k_nothing(const alloy_kernel_call *c) {
  (void)c;
  return 0;
}

/* ---- views --------------------------------------------------------------- */

/* expand(size): the input's dims aligned to the trailing sizes. */
static int k_expand(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *in = &c->inputs[0], *out = &c->outputs[0];
  view v = ref_shape_view_of(in), b = view_broadcast(&v, out->sizes, out->rank);
  return copy_from(out, in, &b);
}

/* prims.broadcast_in_dim(shape, broadcast_dimensions): input dim k is
 * output dim broadcast_dimensions[k]. */
static int k_broadcast_in_dim(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *in = &c->inputs[0], *out = &c->outputs[0];
  int64_t bd[MAXR];
  int n = ref_ints(c, "broadcast_dimensions", bd, MAXR);
  if (n != in->rank) return ref_shape_fail(c, "broadcast_dimensions must name every input dim");
  view b = {.rank = out->rank};
  for (int d = 0; d < out->rank; d++) b.sizes[d] = out->sizes[d];
  for (int k = 0; k < n; k++) {
    int64_t d = ref_shape_wrap_dim(bd[k], out->rank);
    if (d < 0 || d >= out->rank) return ref_shape_fail(c, "broadcast dimension out of range");
    b.strides[d] = in->sizes[k] == 1 ? 0 : in->strides[k];
  }
  return copy_from(out, in, &b);
}

/* permute(dims) / prims.transpose(permutation): output dim k is input dim
 * dims[k]. */
static int permute(const alloy_kernel_call *c, const char *arg) {
  const alloy_kernel_tensor *in = &c->inputs[0], *out = &c->outputs[0];
  int64_t dims[MAXR];
  int n = ref_ints(c, arg, dims, MAXR);
  if (n != in->rank) return ref_shape_fail(c, "the permutation must name every dim");
  view v = {.rank = n};
  for (int k = 0; k < n; k++) {
    int64_t d = ref_shape_wrap_dim(dims[k], in->rank);
    if (d < 0 || d >= in->rank) return ref_shape_fail(c, "dim out of range");
    v.sizes[k] = in->sizes[d], v.strides[k] = in->strides[d];
  }
  return copy_from(out, in, &v);
}

static int k_permute(const alloy_kernel_call *c) { return permute(c, "dims"); }
static int k_prims_transpose(const alloy_kernel_call *c) { return permute(c, "permutation"); }

static int k_transpose(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *in = &c->inputs[0];
  view v = ref_shape_view_of(in);
  int64_t a = ref_shape_wrap_dim(int_arg(c, "dim0", 0), in->rank),
          b = ref_shape_wrap_dim(int_arg(c, "dim1", 1), in->rank);
  if (in->rank > 0 && (a < 0 || a >= in->rank || b < 0 || b >= in->rank))
    return ref_shape_fail(c, "dim out of range");
  if (in->rank > 0) view_swap(&v, (int)a, (int)b);
  return copy_from(&c->outputs[0], in, &v);
}

/* t: transposes a matrix; vectors and scalars stay. */
static int k_t(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *in = &c->inputs[0];
  view v = ref_shape_view_of(in);
  if (in->rank == 2) view_swap(&v, 0, 1);
  return copy_from(&c->outputs[0], in, &v);
}

/* PyTorch's slice bounds: None is the whole dim, negatives count from the
 * end, both clamp to [0, size]. */
static int64_t slice_start(const alloy_kernel_call *c, int64_t size) {
  int64_t s;
  if (!ref_int(c, "start", &s)) return 0;
  if (s < 0) s += size;
  return s < 0 ? 0 : s > size ? size : s;
}

static int k_slice(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *in = &c->inputs[0], *out = &c->outputs[0];
  int d = (int)ref_shape_wrap_dim(int_arg(c, "dim", 0), in->rank);
  if (d < 0 || d >= in->rank) return ref_shape_fail(c, "dim out of range");
  view v = ref_shape_view_of(in);
  view_slice(&v, d, slice_start(c, in->sizes[d]), out->sizes[d], int_arg(c, "step", 1));
  return copy_from(out, in, &v);
}

static int k_narrow_copy(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *in = &c->inputs[0], *out = &c->outputs[0];
  int d = (int)ref_shape_wrap_dim(int_arg(c, "dim", 0), in->rank);
  if (d < 0 || d >= in->rank) return ref_shape_fail(c, "dim out of range");
  int64_t start = int_arg(c, "start", 0);
  if (start < 0) start += in->sizes[d];
  view v = ref_shape_view_of(in);
  view_slice(&v, d, start, out->sizes[d], 1);
  return copy_from(out, in, &v);
}

/* The index argument of select, wrapped; false when out of range. */
static bool select_index(const alloy_kernel_call *c, int64_t size, int64_t *index) {
  *index = int_arg(c, "index", 0);
  if (*index < 0) *index += size;
  return *index >= 0 && *index < size;
}

static int k_select(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *in = &c->inputs[0];
  int d = (int)ref_shape_wrap_dim(int_arg(c, "dim", 0), in->rank);
  int64_t index;
  if (d < 0 || d >= in->rank || !select_index(c, in->sizes[d], &index))
    return ref_shape_fail(c, "index out of range");
  view v = ref_shape_view_of(in);
  view_select(&v, d, index);
  return copy_from(&c->outputs[0], in, &v);
}

/* The diagonal's dims (dim1, dim2, wrapped); false when they are wrong. */
static bool diagonal_dims(const alloy_kernel_call *c, int rank, int dflt1, int dflt2, int *a, int *b) {
  *a = (int)ref_shape_wrap_dim(int_arg(c, "dim1", dflt1), rank);
  *b = (int)ref_shape_wrap_dim(int_arg(c, "dim2", dflt2), rank);
  return *a >= 0 && *a < rank && *b >= 0 && *b < rank && *a != *b;
}

static int k_diagonal(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *in = &c->inputs[0], *out = &c->outputs[0];
  int a, b;
  if (!diagonal_dims(c, in->rank, 0, 1, &a, &b)) return ref_shape_fail(c, "bad diagonal dims");
  view v = ref_shape_view_of(in);
  view_diagonal(&v, int_arg(c, "offset", 0), a, b, out->sizes[out->rank - 1]);
  return copy_from(out, in, &v);
}

/* unfold(dimension, size, step): windows along a dim, as a new last dim. */
static int k_unfold(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *in = &c->inputs[0], *out = &c->outputs[0];
  if (in->rank == 0) return k_flat(c);
  int d = (int)ref_shape_wrap_dim(int_arg(c, "dimension", 0), in->rank);
  if (d < 0 || d >= in->rank) return ref_shape_fail(c, "dimension out of range");
  view v = ref_shape_view_of(in);
  int64_t stride = v.strides[d];
  v.sizes[d] = out->sizes[d];
  v.strides[d] = stride * int_arg(c, "step", 1);
  view_insert(&v, v.rank, int_arg(c, "size", 1), stride);
  return copy_from(out, in, &v);
}

/* flip(dims) / prims.rev(dims). */
static int k_flip(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *in = &c->inputs[0];
  int64_t dims[MAXR];
  int n = ref_ints(c, "dims", dims, MAXR);
  view v = ref_shape_view_of(in);
  for (int k = 0; k < n && in->rank > 0; k++) { /* a 0-dim tensor flips to itself */
    int64_t d = ref_shape_wrap_dim(dims[k], in->rank);
    if (d < 0 || d >= in->rank) return ref_shape_fail(c, "dim out of range");
    view_flip(&v, (int)d);
  }
  return copy_from(&c->outputs[0], in, &v);
}

/* rot90(k, dims): k = 1 flips dims[1] then transposes; 2 flips both; 3
 * flips dims[0] then transposes (PyTorch's own composition). */
static int k_rot90(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *in = &c->inputs[0];
  int64_t dims[2] = {0, 1};
  if (ref_ints(c, "dims", dims, 2) != 2) return ref_shape_fail(c, "dims must have two entries");
  int a = (int)ref_shape_wrap_dim(dims[0], in->rank), b = (int)ref_shape_wrap_dim(dims[1], in->rank);
  if (a < 0 || a >= in->rank || b < 0 || b >= in->rank || a == b) return ref_shape_fail(c, "bad dims");
  int64_t k = ((int_arg(c, "k", 1) % 4) + 4) % 4;
  view v = ref_shape_view_of(in);
  if (k == 1) view_flip(&v, b), view_swap(&v, a, b);
  if (k == 2) view_flip(&v, a), view_flip(&v, b);
  if (k == 3) view_flip(&v, a), view_swap(&v, a, b);
  return copy_from(&c->outputs[0], in, &v);
}

/* ---- as_strided ----------------------------------------------------------
 * The storage as_strided indexes is the input's elements in row-major order
 * (a tensor the runtime hands over is its own fresh storage). */

/* The window size/stride/storage_offset on a contiguous storage of n
 * elements; false when it reaches outside. */
static bool strided_window(const alloy_kernel_call *c, int64_t n, view *v) {
  memset(v, 0, sizeof *v);
  int rank = ref_ints(c, "size", v->sizes, MAXR);
  if (rank < 0 || ref_ints(c, "stride", v->strides, MAXR) != rank) return false;
  v->rank = rank;
  v->offset = int_arg(c, "storage_offset", 0);
  /* Checked arithmetic: a wrapped span would pass a far window as a near one. */
  int64_t lo, hi;
  bool empty;
  if (!alloy_checked_span(v->sizes, v->strides, rank, &lo, &hi, &empty)) return false;
  if (empty) return true;
  return alloy_checked_add(lo, v->offset, &lo) && alloy_checked_add(hi, v->offset, &hi) &&
         lo >= 0 && hi < n;
}

static int k_as_strided(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *in = &c->inputs[0], *out = &c->outputs[0];
  view v;
  if (!strided_window(c, ref_numel(in), &v))
    return ref_fail(c, "the window (size, stride, storage offset %lld) reaches outside the "
                    "storage of %lld elements", (long long)v.offset, (long long)ref_numel(in));
  void *temp;
  alloy_kernel_tensor flat = *in;
  if (!(flat.data = contiguous_data(in, &temp))) return ref_shape_fail(c, "out of memory");
  copy_from(out, &flat, &v);
  free(temp);
  return 0;
}

/* as_strided_scatter: self's storage (a contiguous copy) with src written
 * through the window, then laid out as the output. */
static int k_as_strided_scatter(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *self = &c->inputs[0], *src = &c->inputs[1], *out = &c->outputs[0];
  int64_t n = ref_numel(self);
  view v;
  if (!strided_window(c, n, &v))
    return ref_fail(c, "the window (size, stride, storage offset %lld) reaches outside the "
                    "storage of %lld elements", (long long)v.offset, (long long)n);
  void *buf = malloc((size_t)(n ? n : 1) * alloy_dtype_size(out->dtype));
  if (!buf) return ref_shape_fail(c, "out of memory");
  alloy_kernel_tensor flat = {buf, out->dtype, 1, &n, (const int64_t[]){1}};
  copy_flat(&flat, self);
  view sv = ref_shape_view_of(src);
  copy_view(&flat, &v, src, &sv);
  copy_flat(out, &flat);
  free(buf);
  return 0;
}

/* ---- scatters: self copied, src written through a view of the copy ------ */

static int k_slice_scatter(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0], *src = &c->inputs[1];
  copy_flat(out, &c->inputs[0]);
  int d = (int)ref_shape_wrap_dim(int_arg(c, "dim", 0), out->rank);
  if (d < 0 || d >= out->rank || src->rank != out->rank) return ref_shape_fail(c, "bad dim or src");
  view v = ref_shape_view_of(out), sv = ref_shape_view_of(src);
  view_slice(&v, d, slice_start(c, out->sizes[d]), src->sizes[d], int_arg(c, "step", 1));
  copy_view(out, &v, src, &sv);
  return 0;
}

static int k_select_scatter(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0], *src = &c->inputs[1];
  copy_flat(out, &c->inputs[0]);
  int d = (int)ref_shape_wrap_dim(int_arg(c, "dim", 0), out->rank);
  int64_t index;
  if (d < 0 || d >= out->rank || !select_index(c, out->sizes[d], &index))
    return ref_shape_fail(c, "index out of range");
  view v = ref_shape_view_of(out), sv = ref_shape_view_of(src);
  view_select(&v, d, index);
  copy_view(out, &v, src, &sv);
  return 0;
}

static int k_diagonal_scatter(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0], *src = &c->inputs[1];
  copy_flat(out, &c->inputs[0]);
  int a, b;
  if (!diagonal_dims(c, out->rank, 0, 1, &a, &b) || src->rank < 1) return ref_shape_fail(c, "bad diagonal dims");
  view v = ref_shape_view_of(out), sv = ref_shape_view_of(src);
  view_diagonal(&v, int_arg(c, "offset", 0), a, b, src->sizes[src->rank - 1]);
  copy_view(out, &v, src, &sv);
  return 0;
}

/* ---- joining and splitting ----------------------------------------------- */

/* cat / prims.cat: each input into its slice of the output along dim; a
 * legacy empty 1-D input ([0]) joins nothing. */
static int k_cat(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0];
  int d = (int)ref_shape_wrap_dim(int_arg(c, "dim", 0), out->rank);
  if (d < 0 || d >= out->rank) return ref_shape_fail(c, "dim out of range");
  int64_t at = 0;
  for (int k = 0, n = ref_list_size(c, "tensors"); k < n; k++) {
    const alloy_kernel_tensor *t = ref_tensor_item(c, "tensors", k);
    if (!t) return ref_shape_fail(c, "tensors must be tensors");
    if (t->rank == 1 && t->sizes[0] == 0 && out->rank != 1) continue;
    if (t->rank != out->rank) return ref_shape_fail(c, "inputs of different ranks");
    view v = ref_shape_view_of(out), sv = ref_shape_view_of(t);
    view_slice(&v, d, at, t->sizes[d], 1);
    copy_view(out, &v, t, &sv);
    at += t->sizes[d];
  }
  return 0;
}

static int k_stack(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0];
  int d = (int)ref_shape_wrap_dim(int_arg(c, "dim", 0), out->rank);
  if (d < 0 || d >= out->rank) return ref_shape_fail(c, "dim out of range");
  for (int k = 0, n = ref_list_size(c, "tensors"); k < n; k++) {
    const alloy_kernel_tensor *t = ref_tensor_item(c, "tensors", k);
    if (!t) return ref_shape_fail(c, "tensors must be tensors");
    view v = ref_shape_view_of(out), sv = ref_shape_view_of(t);
    view_select(&v, d, k);
    copy_view(out, &v, t, &sv);
  }
  return 0;
}

/* block_diag: scalars are 1x1 and vectors 1xn blocks down the diagonal of
 * a zero matrix. */
static int k_block_diag(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0];
  fill_all(out, &zero_fill);
  int64_t r = 0, col = 0;
  for (int k = 0, n = ref_list_size(c, "tensors"); k < n; k++) {
    const alloy_kernel_tensor *t = ref_tensor_item(c, "tensors", k);
    if (!t || t->rank > 2) return ref_shape_fail(c, "block_diag takes tensors of at most 2 dims");
    view sv = {.rank = 2, .sizes = {1, 1}};
    if (t->rank == 1) sv.sizes[1] = t->sizes[0], sv.strides[1] = t->strides[0];
    if (t->rank == 2) sv = ref_shape_view_of(t);
    view v = ref_shape_view_of(out);
    view_slice(&v, 0, r, sv.sizes[0], 1);
    view_slice(&v, 1, col, sv.sizes[1], 1);
    copy_view(out, &v, t, &sv);
    r += sv.sizes[0], col += sv.sizes[1];
  }
  return 0;
}

/* _chunk_cat(tensors, dim, num_chunks): each input's dim is zero-padded to
 * num_chunks equal chunks; chunk j of every input, flattened from dim on,
 * is concatenated into row j of the output [pre..., num_chunks, total]. */
static int k_chunk_cat(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0];
  int d = out->rank - 2;
  int64_t chunks = int_arg(c, "num_chunks", 1), col0 = 0;
  if (d < 0 || chunks <= 0) return ref_shape_fail(c, "bad dim or num_chunks");
  fill_all(out, &zero_fill);
  for (int k = 0, n = ref_list_size(c, "tensors"); k < n; k++) {
    const alloy_kernel_tensor *t = ref_tensor_item(c, "tensors", k);
    if (!t || t->rank <= d) return ref_shape_fail(c, "an input has too few dims");
    int64_t chunk = (t->sizes[d] + chunks - 1) / chunks, post = ref_shape_numel_of(t->sizes + d + 1, t->rank - d - 1);
    view tv = ref_shape_view_of(t);
    walker w;
    ref_shape_walk_init(&w, &tv);
    for (int64_t i = ref_shape_view_numel(&tv); i > 0; i--, ref_shape_walk_next(&w)) {
      int64_t q = 0;
      for (int e = d + 1; e < t->rank; e++) q = q * t->sizes[e] + w.idx[e];
      int64_t off = (w.idx[d] / chunk) * out->strides[d] +
                    (col0 + (w.idx[d] % chunk) * post + q) * out->strides[d + 1];
      for (int e = 0; e < d; e++) off += w.idx[e] * out->strides[e];
      move(out->data, out->dtype, off, t->data, t->dtype, w.off);
    }
    col0 += chunk * post;
  }
  return 0;
}

/* split, unsafe_split, split_with_sizes(_copy): output k is the slice of
 * dim that follows outputs 0..k-1 (their sizes say where). */
static int k_split(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *in = &c->inputs[0];
  int d = (int)ref_shape_wrap_dim(int_arg(c, "dim", 0), in->rank);
  if (d < 0 || d >= in->rank) return ref_shape_fail(c, "dim out of range");
  int64_t at = 0;
  for (int k = 0; k < c->num_outputs; k++) {
    const alloy_kernel_tensor *out = &c->outputs[k];
    view v = ref_shape_view_of(in);
    view_slice(&v, d, at, out->sizes[d], 1);
    copy_from(out, in, &v);
    at += out->sizes[d];
  }
  return 0;
}

/* unbind(_copy): output k is select(dim, k). */
static int k_unbind(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *in = &c->inputs[0];
  int d = (int)ref_shape_wrap_dim(int_arg(c, "dim", 0), in->rank);
  if (d < 0 || d >= in->rank) return ref_shape_fail(c, "dim out of range");
  for (int k = 0; k < c->num_outputs; k++) {
    view v = ref_shape_view_of(in);
    view_select(&v, d, k);
    copy_from(&c->outputs[k], in, &v);
  }
  return 0;
}

/* ---- gathers: output index -> input element ------------------------------ */

/* The input and up to MAXR numbers of parameters a gather needs. */
typedef struct gctx {
  const alloy_kernel_tensor *in;
  int orank;
  int64_t p[4][MAXR];
  int64_t k[8];
} gctx;

/* Input dims aligned to the output's trailing dims, as most gathers have. */
static int64_t lead(const gctx *g) { return g->orank - g->in->rank; }

/* repeat(repeats): output dim d reads input dim d - lead modulo its size. */
static bool g_repeat(const void *ctx, const int64_t *idx, int64_t *off) {
  const gctx *g = ctx;
  int64_t o = 0, l = lead(g);
  for (int d = 0; d < g->in->rank; d++) o += (idx[d + l] % g->in->sizes[d]) * g->in->strides[d];
  return *off = o, true;
}

static int k_repeat(const alloy_kernel_call *c) {
  gctx g = {.in = &c->inputs[0], .orank = c->outputs[0].rank};
  if (g.orank < g.in->rank) return ref_shape_fail(c, "fewer repeats than dims");
  return gather(&c->outputs[0], g.in, g_repeat, &g, &zero_fill);
}

/* roll(shifts, dims): p[0] holds each dim's shift (0 for dims not rolled). */
static bool g_roll(const void *ctx, const int64_t *idx, int64_t *off) {
  const gctx *g = ctx;
  int64_t o = 0;
  for (int d = 0; d < g->in->rank; d++) {
    int64_t n = g->in->sizes[d], i = ((idx[d] - g->p[0][d]) % n + n) % n;
    o += i * g->in->strides[d];
  }
  return *off = o, true;
}

static int k_roll(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *in = &c->inputs[0], *out = &c->outputs[0];
  int64_t shifts[MAXR], dims[MAXR];
  int ns = ref_ints(c, "shifts", shifts, MAXR), nd = ref_ints(c, "dims", dims, MAXR);
  int64_t n = ref_numel(in);
  if (n == 0) return 0;
  if (nd <= 0) { /* rolls the flattened tensor */
    if (ns != 1) return ref_shape_fail(c, "shifts must have one entry when dims is empty");
    view ov = ref_shape_view_of(out);
    walker w;
    ref_shape_walk_init(&w, &ov);
    for (int64_t i = 0; i < n; i++, ref_shape_walk_next(&w)) {
      int64_t from = ((i - shifts[0]) % n + n) % n;
      move(out->data, out->dtype, w.off, in->data, in->dtype, flat_offset(in, from));
    }
    return 0;
  }
  if (ns != nd) return ref_shape_fail(c, "shifts and dims must have the same length");
  gctx g = {.in = in, .orank = out->rank};
  for (int k = 0; k < nd; k++) {
    int64_t d = ref_shape_wrap_dim(dims[k], in->rank);
    if (d < 0 || d >= in->rank) return ref_shape_fail(c, "dim out of range");
    g.p[0][d] += shifts[k];
  }
  return gather(out, in, g_roll, &g, &zero_fill);
}

/* Paddings of the last dims: p[0] is each dim's padding before it, k[0]
 * the mode. An output index minus the padding is the input index, mapped
 * back inside by the mode (the constant mode fills instead). */
enum { PAD_CONSTANT, PAD_REFLECT, PAD_REPLICATE };

static bool g_pad(const void *ctx, const int64_t *idx, int64_t *off) {
  const gctx *g = ctx;
  int64_t o = 0;
  for (int d = 0; d < g->in->rank; d++) {
    int64_t n = g->in->sizes[d], i = idx[d] - g->p[0][d];
    if (i < 0 || i >= n) {
      if (g->k[0] == PAD_CONSTANT) return false;
      if (g->k[0] == PAD_REPLICATE) i = i < 0 ? 0 : n - 1;
      else i = i < 0 ? -i : 2 * (n - 1) - i;
    }
    o += i * g->in->strides[d];
  }
  return *off = o, true;
}

static int pad(const alloy_kernel_call *c, const char *arg, int mode, const fill *v) {
  const alloy_kernel_tensor *in = &c->inputs[0], *out = &c->outputs[0];
  int64_t p[2 * MAXR];
  int n = ref_ints(c, arg, p, 2 * MAXR);
  if (n < 0 || n % 2 || n / 2 > in->rank || out->rank != in->rank) return ref_shape_fail(c, "bad padding");
  gctx g = {.in = in, .orank = out->rank, .k = {mode}};
  for (int j = 0; j < n / 2; j++) g.p[0][in->rank - 1 - j] = p[2 * j];
  for (int d = 0; d < in->rank; d++)
    if (mode != PAD_CONSTANT && in->sizes[d] == 0 && out->sizes[d] > 0)
      return ref_shape_fail(c, "padding an empty dim");
  return gather(out, in, g_pad, &g, v);
}

static int k_constant_pad_nd(const alloy_kernel_call *c) {
  fill v = {0.0, 0, true};
  if (!ref_int(c, "value", &v.i)) {
    v.is_int = false;
    ref_float(c, "value", &v.f);
  }
  return pad(c, "pad", PAD_CONSTANT, &v);
}

static int k_reflection_pad(const alloy_kernel_call *c) { return pad(c, "padding", PAD_REFLECT, &zero_fill); }
static int k_replication_pad(const alloy_kernel_call *c) { return pad(c, "padding", PAD_REPLICATE, &zero_fill); }

/* tril / triu(diagonal): k[0] the diagonal, k[1] 1 for tril. */
static bool g_triangle(const void *ctx, const int64_t *idx, int64_t *off) {
  const gctx *g = ctx;
  int r = g->in->rank;
  int64_t above = idx[r - 1] - idx[r - 2]; /* column minus row */
  if (g->k[1] ? above > g->k[0] : above < g->k[0]) return false;
  int64_t o = 0;
  for (int d = 0; d < r; d++) o += idx[d] * g->in->strides[d];
  return *off = o, true;
}

static int triangle(const alloy_kernel_call *c, bool lower) {
  gctx g = {.in = &c->inputs[0], .k = {int_arg(c, "diagonal", 0), lower}};
  if (g.in->rank < 2) return ref_shape_fail(c, "input tensor must have at least 2 dimensions");
  return gather(&c->outputs[0], g.in, g_triangle, &g, &zero_fill);
}

static int k_tril(const alloy_kernel_call *c) { return triangle(c, true); }
static int k_triu(const alloy_kernel_call *c) { return triangle(c, false); }

/* diag_embed(offset, dim1, dim2): k = {offset, dim1, dim2}; the other
 * output dims are the input's leading dims in order, and the diagonal
 * position indexes its last dim. */
static bool g_diag_embed(const void *ctx, const int64_t *idx, int64_t *off) {
  const gctx *g = ctx;
  int64_t i = idx[g->k[1]], j = idx[g->k[2]];
  if (j - i != g->k[0]) return false;
  int64_t o = (g->k[0] >= 0 ? i : j) * g->in->strides[g->in->rank - 1];
  for (int d = 0, e = 0; d < g->orank; d++)
    if (d != g->k[1] && d != g->k[2]) o += idx[d] * g->in->strides[e++];
  return *off = o, true;
}

static int k_diag_embed(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *in = &c->inputs[0], *out = &c->outputs[0];
  int a, b;
  if (in->rank < 1 || !diagonal_dims(c, out->rank, -2, -1, &a, &b)) return ref_shape_fail(c, "bad diagonal dims");
  gctx g = {.in = in, .orank = out->rank, .k = {int_arg(c, "offset", 0), a, b}};
  return gather(out, in, g_diag_embed, &g, &zero_fill);
}

/* The offset of input element (batch dims of idx..., c, h, w) for the
 * shuffles, whose last three dims are channels, height and width. */
static int64_t chw_offset(const gctx *g, const int64_t *idx, int64_t ch, int64_t h, int64_t w) {
  int r = g->in->rank;
  const int64_t *s = g->in->strides;
  int64_t o = ch * s[r - 3] + h * s[r - 2] + w * s[r - 1];
  for (int d = 0; d < r - 3; d++) o += idx[d] * s[d];
  return o;
}

/* pixel_shuffle(r): output (c, h, w) reads input channel
 * c*r*r + (h%r)*r + w%r at (h/r, w/r); k[0] = r. */
static bool g_pixel_shuffle(const void *ctx, const int64_t *idx, int64_t *off) {
  const gctx *g = ctx;
  int r = g->orank;
  int64_t f = g->k[0], ch = idx[r - 3], h = idx[r - 2], w = idx[r - 1];
  return *off = chw_offset(g, idx, ch * f * f + (h % f) * f + w % f, h / f, w / f), true;
}

/* pixel_unshuffle(r): output channel c' = c*r*r + i*r + j reads input
 * channel c at (h*r + i, w*r + j). */
static bool g_pixel_unshuffle(const void *ctx, const int64_t *idx, int64_t *off) {
  const gctx *g = ctx;
  int r = g->orank;
  int64_t f = g->k[0], ch = idx[r - 3], h = idx[r - 2], w = idx[r - 1], rem = ch % (f * f);
  return *off = chw_offset(g, idx, ch / (f * f), h * f + rem / f, w * f + rem % f), true;
}

static int shuffle(const alloy_kernel_call *c, const char *arg, gather_fn f) {
  gctx g = {.in = &c->inputs[0], .orank = c->outputs[0].rank, .k = {int_arg(c, arg, 1)}};
  if (g.in->rank < 3 || g.k[0] <= 0)
    return ref_shape_fail(c, "needs a tensor of at least 3 dims and a positive factor");
  return gather(&c->outputs[0], g.in, f, &g, &zero_fill);
}

static int k_pixel_shuffle(const alloy_kernel_call *c) { return shuffle(c, "upscale_factor", g_pixel_shuffle); }
static int k_pixel_unshuffle(const alloy_kernel_call *c) { return shuffle(c, "downscale_factor", g_pixel_unshuffle); }

/* channel_shuffle(g): channels seen as [g, C/g] are transposed: output
 * channel c reads input channel (c % g) * (C/g) + c / g. k = {g, C/g}. */
static bool g_channel_shuffle(const void *ctx, const int64_t *idx, int64_t *off) {
  const gctx *g = ctx;
  int64_t o = 0;
  for (int d = 0; d < g->in->rank; d++) {
    int64_t i = d == 1 ? (idx[1] % g->k[0]) * g->k[1] + idx[1] / g->k[0] : idx[d];
    o += i * g->in->strides[d];
  }
  return *off = o, true;
}

static int k_channel_shuffle(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *in = &c->inputs[0];
  int64_t groups = int_arg(c, "groups", 1);
  if (in->rank < 3 || groups <= 0 || in->sizes[1] % groups) return ref_shape_fail(c, "bad groups");
  gctx g = {.in = in, .orank = in->rank, .k = {groups, in->sizes[1] / groups}};
  return gather(&c->outputs[0], in, g_channel_shuffle, &g, &zero_fill);
}

/* im2col and col2im share the sliding-window geometry: k = {kh, kw, dh, dw,
 * ph, pw, sh, sw}; a column (c*kh*kw + ki*kw + kj, y*ow + x) is image pixel
 * (c, y*sh - ph + ki*dh, x*sw - pw + kj*dw). */
typedef struct window {
  int64_t kh, kw, dh, dw, ph, pw, sh, sw, oh, ow;
} window;

static bool window_args(const alloy_kernel_call *c, int64_t h, int64_t w, window *g) {
  int64_t k[2], d[2], p[2], s[2];
  if (ref_ints(c, "kernel_size", k, 2) != 2 || ref_ints(c, "dilation", d, 2) != 2 ||
      ref_ints(c, "padding", p, 2) != 2 || ref_ints(c, "stride", s, 2) != 2 || s[0] <= 0 || s[1] <= 0)
    return false;
  *g = (window){k[0], k[1], d[0], d[1], p[0], p[1], s[0], s[1], 0, 0};
  g->oh = (h + 2 * p[0] - (d[0] * (k[0] - 1) + 1)) / s[0] + 1;
  g->ow = (w + 2 * p[1] - (d[1] * (k[1] - 1) + 1)) / s[1] + 1;
  return g->oh > 0 && g->ow > 0;
}

/* Image pixel of column element (ck, l): false when it is padding. */
static bool window_pixel(const window *g, int64_t ck, int64_t l, int64_t h, int64_t w, int64_t *ch,
                         int64_t *y, int64_t *x) {
  int64_t kj = ck % g->kw, ki = (ck / g->kw) % g->kh;
  *ch = ck / (g->kw * g->kh);
  *y = (l / g->ow) * g->sh - g->ph + ki * g->dh;
  *x = (l % g->ow) * g->sw - g->pw + kj * g->dw;
  return *y >= 0 && *y < h && *x >= 0 && *x < w;
}

typedef struct im2col_ctx {
  const alloy_kernel_tensor *in;
  window g;
  bool batched;
} im2col_ctx;

static bool g_im2col(const void *ctx, const int64_t *idx, int64_t *off) {
  const im2col_ctx *q = ctx;
  const int64_t *s = q->in->strides, *sz = q->in->sizes;
  int b = q->batched;
  int64_t ch, y, x;
  if (!window_pixel(&q->g, idx[b], idx[b + 1], sz[b + 1], sz[b + 2], &ch, &y, &x)) return false;
  *off = (b ? idx[0] * s[0] : 0) + ch * s[b] + y * s[b + 1] + x * s[b + 2];
  return true;
}

static int k_im2col(const alloy_kernel_call *c) {
  im2col_ctx q = {.in = &c->inputs[0]};
  if (q.in->rank != 3 && q.in->rank != 4) return ref_shape_fail(c, "expects a 3-D or 4-D input");
  q.batched = q.in->rank == 4;
  int b = q.batched;
  if (!window_args(c, q.in->sizes[b + 1], q.in->sizes[b + 2], &q.g)) return ref_shape_fail(c, "bad window");
  return gather(&c->outputs[0], q.in, g_im2col, &q, &zero_fill);
}

/* col2im: every column element added into its pixel, in the columns'
 * row-major order, in double (int64 for integers). */
static int k_col2im(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *in = &c->inputs[0], *out = &c->outputs[0];
  if (in->rank != 2 && in->rank != 3) return ref_shape_fail(c, "expects a 2-D or 3-D input");
  int b = in->rank == 3;
  int64_t h = out->sizes[b + 1], w = out->sizes[b + 2], n = ref_numel(out);
  window g;
  if (!window_args(c, h, w, &g) || g.oh * g.ow != in->sizes[b + 1]) return ref_shape_fail(c, "bad window");
  bool fl = alloy_dtype_is_float(out->dtype);
  double *accf = calloc((size_t)(n ? n : 1), sizeof *accf);
  uint64_t *acci = calloc((size_t)(n ? n : 1), sizeof *acci);
  if (!accf || !acci) {
    free(accf), free(acci);
    return ref_shape_fail(c, "out of memory");
  }
  int64_t chans = out->sizes[b];
  view iv = ref_shape_view_of(in);
  walker it;
  ref_shape_walk_init(&it, &iv);
  for (int64_t i = ref_shape_view_numel(&iv); i > 0; i--, ref_shape_walk_next(&it)) {
    int64_t ch, y, x;
    if (!window_pixel(&g, it.idx[b], it.idx[b + 1], h, w, &ch, &y, &x)) continue;
    int64_t at = (((b ? it.idx[0] : 0) * chans + ch) * h + y) * w + x;
    if (fl) accf[at] += ref_load_f(in->data, in->dtype, it.off);
    else acci[at] += (uint64_t)ref_load_i(in->data, in->dtype, it.off);
  }
  view ov = ref_shape_view_of(out);
  walker wo;
  ref_shape_walk_init(&wo, &ov);
  for (int64_t i = 0; i < n; i++, ref_shape_walk_next(&wo)) {
    if (fl) ref_store_f(out->data, out->dtype, wo.off, accf[i]);
    else ref_store_i(out->data, out->dtype, wo.off, (int64_t)acci[i]);
  }
  free(accf), free(acci);
  return 0;
}

/* ---- data-dependent and stepwise ops -------------------------------------- */

/* repeat_interleave.Tensor(repeats): index i repeated repeats[i] times.
 * Without output_size the output's length is the sum, known only here. */
static int k_repeat_interleave(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *rep = &c->inputs[0], *out = &c->outputs[0];
  if (rep->rank != 1) return ref_shape_fail(c, "repeats must be 1-D");
  int64_t total = 0;
  for (int64_t i = 0; i < rep->sizes[0]; i++) {
    int64_t r = ref_load_i(rep->data, rep->dtype, i * rep->strides[0]);
    if (r < 0) return ref_shape_fail(c, "repeats can not be negative");
    total += r;
  }
  if (ALLOY_HAS_FIELD(c, alloy_kernel_call, alloc_output) && c->alloc_output)
    out = c->alloc_output(c, 0, &total);
  if (!out || !out->data || out->sizes[0] != total)
    return ref_shape_fail(c, "output_size disagrees with the repeats");
  for (int64_t i = 0, at = 0; i < rep->sizes[0]; i++)
    for (int64_t r = ref_load_i(rep->data, rep->dtype, i * rep->strides[0]); r > 0; r--, at++)
      ref_store_i(out->data, out->dtype, at * out->strides[0], i);
  return 0;
}

/* buf[a] = buf[b] - buf[a] in dtype t: rounded to it, wrapping for
 * integers, xor for bool. */
static void difference(void *buf, alloy_dtype t, int64_t a, int64_t b) {
  if (alloy_dtype_is_float(t)) {
    ref_store_f(buf, t, a, ref_load_f(buf, t, b) - ref_load_f(buf, t, a));
  } else {
    uint64_t x = (uint64_t)ref_load_i(buf, t, b), y = (uint64_t)ref_load_i(buf, t, a);
    ref_store_i(buf, t, a, t == ALLOY_BOOL ? x != y : (int64_t)(x - y));
  }
}

/* diff(n, dim, prepend, append): prepend, self and append joined along dim
 * in the output's dtype, then n passes of x[i+1] - x[i] (xor for bool),
 * each rounded to the dtype as PyTorch's repeated subtraction is. n = 0
 * returns self, without prepend or append. */
static int k_diff(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0];
  const alloy_kernel_tensor *parts[3] = {ref_tensor(c, "prepend"), ref_tensor(c, "self"), ref_tensor(c, "append")};
  int d = (int)ref_shape_wrap_dim(int_arg(c, "dim", -1), out->rank);
  int64_t steps = int_arg(c, "n", 1);
  if (!parts[1] || d < 0 || d >= out->rank) return ref_shape_fail(c, "bad self or dim");
  if (steps == 0) {
    copy_flat(out, parts[1]);
    return 0;
  }
  int64_t sizes[MAXR], len = 0;
  memcpy(sizes, out->sizes, sizeof *sizes * (size_t)out->rank);
  for (int k = 0; k < 3; k++) {
    if (parts[k] && parts[k]->rank != out->rank) return ref_shape_fail(c, "prepend and append must have self's rank");
    if (parts[k]) len += parts[k]->sizes[d];
  }
  sizes[d] = len;
  int64_t n = ref_shape_numel_of(sizes, out->rank), strides[MAXR], s = 1;
  for (int e = out->rank - 1; e >= 0; e--) strides[e] = s, s *= sizes[e];
  void *buf = malloc((size_t)(n ? n : 1) * alloy_dtype_size(out->dtype));
  if (!buf) return ref_shape_fail(c, "out of memory");
  alloy_kernel_tensor all = {buf, out->dtype, out->rank, sizes, strides};
  int64_t at = 0;
  for (int k = 0; k < 3; k++) {
    if (!parts[k]) continue;
    view pv = ref_shape_view_of(parts[k]), v = ref_shape_view_of(&all);
    view_slice(&v, d, at, parts[k]->sizes[d], 1);
    copy_view(&all, &v, parts[k], &pv);
    at += parts[k]->sizes[d];
  }
  int64_t inner = strides[d], outer = ref_shape_numel_of(sizes, d);
  for (int64_t step = 0; step < steps && len - step > 1; step++)
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i + 1 < len - step; i++)
        for (int64_t q = 0; q < inner; q++) {
          int64_t a = (o * len + i) * inner + q;
          difference(buf, out->dtype, a, a + inner);
        }
  view av = ref_shape_view_of(&all);
  av.sizes[d] = out->sizes[d];
  copy_from(out, &all, &av);
  free(buf);
  return 0;
}

/* ---- the table -------------------------------------------------------------- */

const alloy_kernel ref_kernels_shape[] = {
    /* row-major copies: same elements, new shape or dtype */
    REF_KERNEL("aten.view.default", k_flat),
    REF_KERNEL("aten.view_copy.default", k_flat),
    REF_KERNEL("aten.reshape.default", k_flat),
    REF_KERNEL("aten.flatten.using_ints", k_flat),
    REF_KERNEL("aten.squeeze.default", k_flat),
    REF_KERNEL("aten.squeeze.dim", k_flat),
    REF_KERNEL("aten.squeeze.dims", k_flat),
    REF_KERNEL("aten.squeeze_.dim", k_flat),
    REF_KERNEL("aten.squeeze_copy.default", k_flat),
    REF_KERNEL("aten.squeeze_copy.dim", k_flat),
    REF_KERNEL("aten.unsqueeze.default", k_flat),
    REF_KERNEL("aten.unsqueeze_copy.default", k_flat),
    REF_KERNEL("aten.clone.default", k_flat),
    REF_KERNEL("aten.alias.default", k_flat),
    REF_KERNEL("aten.detach.default", k_flat),
    REF_KERNEL("aten._to_copy.default", k_flat),
    REF_KERNEL("aten.to.dtype", k_flat),
    REF_KERNEL("aten.to.dtype_layout", k_flat),
    REF_KERNEL("aten.to.device", k_flat),
    REF_KERNEL("aten.copy.default", k_copy),
    REF_KERNEL("aten.copy_.default", k_copy),
    REF_KERNEL("aten.resize_.default", k_resize),
    REF_KERNEL("prims.collapse_view.default", k_flat),
    REF_KERNEL("prims.collapse.default", k_flat),
    REF_KERNEL("prims.split_dim.default", k_flat),
    REF_KERNEL("prims.squeeze.default", k_flat),
    REF_KERNEL("prims.reshape.default", k_flat),
    REF_KERNEL("prims.view_of.default", k_flat),
    REF_KERNEL("prims.clone.default", k_flat),
    REF_KERNEL("prims.convert_element_type.default", k_flat),
    REF_KERNEL("prims.device_put.default", k_flat),
    REF_KERNEL("prims.copy_strided.default", k_flat),
    REF_KERNEL("prims.copy_to.default", k_copy_to),
    REF_KERNEL("prims.resize.default", k_resize),
    REF_KERNEL("prims.view_of_dtype.default", k_view_of_dtype),
    REF_KERNEL("prims.conj.default", k_conj),
    REF_KERNEL("prims.where.default", k_where),
    REF_KERNEL("prims.item.default", k_item),
    REF_KERNEL("prims.maximum_value.default", k_maximum_value),
    REF_KERNEL("prims.minimum_value.default", k_minimum_value),
    REF_KERNEL("prims._make_token.default", k_nothing),
    REF_KERNEL("prims._sink_tokens.default", k_nothing),
    /* views */
    REF_KERNEL("aten.expand.default", k_expand),
    REF_KERNEL("aten.expand_copy.default", k_expand),
    REF_KERNEL("prims.broadcast_in_dim.default", k_broadcast_in_dim),
    REF_KERNEL("aten.permute.default", k_permute),
    REF_KERNEL("aten.permute_copy.default", k_permute),
    REF_KERNEL("prims.transpose.default", k_prims_transpose),
    REF_KERNEL("aten.transpose.int", k_transpose),
    REF_KERNEL("aten.transpose_copy.int", k_transpose),
    REF_KERNEL("aten.t.default", k_t),
    REF_KERNEL("aten.t_copy.default", k_t),
    REF_KERNEL("aten.slice.Tensor", k_slice),
    REF_KERNEL("aten.narrow_copy.default", k_narrow_copy),
    REF_KERNEL("aten.select.int", k_select),
    REF_KERNEL("aten.diagonal.default", k_diagonal),
    REF_KERNEL("aten.diagonal_copy.default", k_diagonal),
    REF_KERNEL("aten.unfold.default", k_unfold),
    REF_KERNEL("aten.unfold_copy.default", k_unfold),
    REF_KERNEL("aten.flip.default", k_flip),
    REF_KERNEL("prims.rev.default", k_flip),
    REF_KERNEL("aten.rot90.default", k_rot90),
    REF_KERNEL("aten.as_strided.default", k_as_strided),
    REF_KERNEL("aten.as_strided_copy.default", k_as_strided),
    REF_KERNEL("prims.as_strided.default", k_as_strided),
    /* scatters */
    REF_KERNEL("aten.slice_scatter.default", k_slice_scatter),
    REF_KERNEL("aten.select_scatter.default", k_select_scatter),
    REF_KERNEL("aten.diagonal_scatter.default", k_diagonal_scatter),
    REF_KERNEL("aten.as_strided_scatter.default", k_as_strided_scatter),
    REF_KERNEL("prims.as_strided_scatter.default", k_as_strided_scatter),
    /* joining and splitting */
    REF_KERNEL("aten.cat.default", k_cat),
    REF_KERNEL("prims.cat.default", k_cat),
    REF_KERNEL("aten.stack.default", k_stack),
    REF_KERNEL("aten.block_diag.default", k_block_diag),
    REF_KERNEL("aten._chunk_cat.default", k_chunk_cat),
    REF_KERNEL("aten.split.Tensor", k_split),
    REF_KERNEL("aten.unsafe_split.Tensor", k_split),
    REF_KERNEL("aten.split_with_sizes.default", k_split),
    REF_KERNEL("aten.split_with_sizes_copy.default", k_split),
    REF_KERNEL("aten.unbind.int", k_unbind),
    REF_KERNEL("aten.unbind_copy.int", k_unbind),
    /* gathers */
    REF_KERNEL("aten.repeat.default", k_repeat),
    REF_KERNEL("aten.roll.default", k_roll),
    REF_KERNEL("aten.constant_pad_nd.default", k_constant_pad_nd),
    REF_KERNEL("aten.reflection_pad1d.default", k_reflection_pad),
    REF_KERNEL("aten.reflection_pad2d.default", k_reflection_pad),
    REF_KERNEL("aten.reflection_pad3d.default", k_reflection_pad),
    REF_KERNEL("aten.replication_pad1d.default", k_replication_pad),
    REF_KERNEL("aten.replication_pad2d.default", k_replication_pad),
    REF_KERNEL("aten.replication_pad3d.default", k_replication_pad),
    REF_KERNEL("aten.tril.default", k_tril),
    REF_KERNEL("aten.triu.default", k_triu),
    REF_KERNEL("aten.diag_embed.default", k_diag_embed),
    REF_KERNEL("aten.pixel_shuffle.default", k_pixel_shuffle),
    REF_KERNEL("aten.pixel_unshuffle.default", k_pixel_unshuffle),
    REF_KERNEL("aten.channel_shuffle.default", k_channel_shuffle),
    REF_KERNEL("aten.im2col.default", k_im2col),
    REF_KERNEL("aten.col2im.default", k_col2im),
    /* data-dependent and stepwise */
    REF_KERNEL("aten.repeat_interleave.Tensor", k_repeat_interleave),
    REF_KERNEL("aten.diff.default", k_diff),
    {NULL, NULL, NULL, NULL},
};
