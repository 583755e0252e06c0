/*
 * reference_backend/kernels_index.c: reference kernels, indexing family:
 * advanced indexing (index.Tensor, index_put, _unsafe_masked_index*),
 * gather/scatter and scatter_reduce, index_select and the index_add/copy/
 * fill/reduce family, take/put, masks (masked_fill, masked_scatter,
 * masked_select, nonzero), embeddings and embedding bags, searchsorted,
 * bucketize, isin and tril/triu_indices.
 *
 * Every kernel walks its tensors through their strides (any layout) and
 * moves elements through double (floats, bool) or int64 (integers), as
 * ref.h does. Updates into the output (scatter, index_put, index_add, put,
 * ...) are read-modify-write of the output's own dtype, one source element
 * at a time in index order, which is what PyTorch's serial CPU kernels do:
 * a float16 accumulator is rounded after every step, exactly as there
 * (scatter's reductions excepted: PyTorch runs those on a float32 copy).
 * Reductions that PyTorch keeps in a wider accumulator (embedding bags,
 * norms) accumulate sequentially in index order in double and round once.
 * Indices may be negative (they wrap once, as in Python); an index out of
 * range is an error (the kernel logs why and returns nonzero).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference_backend/ref.h"

/* The largest rank (ALLOY_MAX_RANK; ref_iter's arrays are as large). */
#define MAXR 16

/* ---- small helpers ------------------------------------------------------ */


/* Logs why the kernel fails; returns the nonzero status to return. */
/* Element offset of multi-index idx in t. */
static int64_t offset_of(const alloy_kernel_tensor *t, const int64_t *idx) {
  int64_t off = 0;
  for (int d = 0; d < t->rank; d++) off += idx[d] * t->strides[d];
  return off;
}

static int64_t numel_of(const int64_t *sizes, int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= sizes[d];
  return n;
}

/* Offset in t of the output position idx (rank orank) with t broadcast to
 * it (trailing dims aligned, size-1 dims repeated). */
static int64_t bcast_offset(const alloy_kernel_tensor *t, const int64_t *idx, int orank) {
  int64_t off = 0;
  for (int d = 0; d < t->rank; d++) {
    int od = orank - t->rank + d;
    if (od >= 0 && t->sizes[d] != 1) off += idx[od] * t->strides[d];
  }
  return off;
}

/* dst[doff] = src[soff], converted as PyTorch converts: through double
 * when either side is a float (so that a float -> bool is x != 0). */
static void copy_elem(const alloy_kernel_tensor *dst, int64_t doff, const alloy_kernel_tensor *src,
                      int64_t soff) {
  if (is_float(dst->dtype) || is_float(src->dtype))
    ref_store_f(dst->data, dst->dtype, doff, ref_load_f(src->data, src->dtype, soff));
  else
    ref_store_i(dst->data, dst->dtype, doff, ref_load_i(src->data, src->dtype, soff));
}

/* out = src broadcast to out's shape. */
static void copy_into(const alloy_kernel_tensor *out, const alloy_kernel_tensor *src) {
  ref_iter it;
  ref_iter_init(&it, out, &src, 1);
  while (ref_iter_next(&it)) copy_elem(out, it.offset[0], src, it.offset[1]);
}

/* A position in a tensor as text, "[1, 2]" ("[]" for rank 0), for the
 * message of an index out of range: which element held it. */
typedef struct { char s[16 * 22 + 4]; } pos_text;
static pos_text pos_of(const int64_t *idx, int rank) {
  pos_text t;
  size_t n = 0;
  t.s[n++] = '[';
  for (int d = 0; d < rank && d < MAXR; d++)
    n += (size_t)snprintf(t.s + n, sizeof t.s - n, d ? ", %lld" : "%lld", (long long)idx[d]);
  snprintf(t.s + n, sizeof t.s - n, "]");
  return t;
}

/* Wraps a negative index once; false when it is out of [0, n). */
static bool wrap_index(int64_t *i, int64_t n) {
  if (*i < 0) *i += n;
  return *i >= 0 && *i < n;
}

static int64_t size_or_1(const alloy_kernel_tensor *t, int d) { return t->rank ? t->sizes[d] : 1; }

/* Output k with the sizes the kernel found: outputs whose sizes depend on
 * the data come unallocated (sizes NULL) and are made here. */
static const alloy_kernel_tensor *output_sized(const alloy_kernel_call *c, int k,
                                               const int64_t *sizes) {
  const alloy_kernel_tensor *o = &c->outputs[k];
  if (o->sizes) return o;
  if (!ALLOY_HAS_FIELD(c, alloy_kernel_call, alloc_output) || !c->alloc_output) return NULL;
  return c->alloc_output(c, k, sizes);
}

/* ---- accumulation ops ------------------------------------------------------ */

typedef enum { OP_SET, OP_ADD, OP_MUL, OP_MAX, OP_MIN } acc_op;

/* max/min propagate NaN from either side, as PyTorch's scatter reductions
 * and at::maximum do. */
static double acc_f(acc_op op, double a, double b) {
  switch (op) {
    case OP_SET: return b;
    case OP_ADD: return a + b;
    case OP_MUL: return a * b;
    case OP_MAX: return isnan(b) ? b : (a < b ? b : a);
    case OP_MIN: return isnan(b) ? b : (a > b ? b : a);
  }
  return b;
}

static int64_t acc_i(acc_op op, int64_t a, int64_t b) {
  switch (op) {
    case OP_SET: return b;
    case OP_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
    case OP_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
    case OP_MAX: return a < b ? b : a;
    case OP_MIN: return a > b ? b : a;
  }
  return b;
}

/* out[ooff] = op(out[ooff], src[soff]) in out's dtype. */
static void accumulate(const alloy_kernel_tensor *out, int64_t ooff, acc_op op,
                       const alloy_kernel_tensor *src, int64_t soff) {
  if (op == OP_SET) {
    copy_elem(out, ooff, src, soff);
  } else if (is_float(out->dtype)) {
    double a = ref_load_f(out->data, out->dtype, ooff), b = ref_load_f(src->data, src->dtype, soff);
    ref_store_f(out->data, out->dtype, ooff, acc_f(op, a, b));
  } else {
    int64_t a = ref_load_i(out->data, out->dtype, ooff), b = ref_load_i(src->data, src->dtype, soff);
    ref_store_i(out->data, out->dtype, ooff, acc_i(op, a, b));
  }
}

/* The reductions by name: scatter_reduce.two's and index_reduce's names,
 * and scatter.reduce's older "add" and "multiply". */
typedef struct {
  const char *name;
  acc_op op;
  bool mean;
} reduce_name;

static const reduce_name reduce_names[] = {
    {"sum", OP_ADD, false},  {"add", OP_ADD, false},  {"prod", OP_MUL, false},
    {"multiply", OP_MUL, false}, {"mean", OP_ADD, true}, {"amax", OP_MAX, false},
    {"amin", OP_MIN, false},
};

static const reduce_name *find_reduce(const char *s) {
  for (size_t i = 0; s && i < sizeof reduce_names / sizeof reduce_names[0]; i++)
    if (!strcmp(reduce_names[i].name, s)) return &reduce_names[i];
  return NULL;
}

/* The value a reduction starts from when self is left out (include_self
 * false): 0, 1, or the lowest/highest value of the dtype. */
static void store_identity(const alloy_kernel_tensor *t, int64_t off, acc_op op) {
  if (op == OP_ADD || op == OP_MUL) {
    ref_store_i(t->data, t->dtype, off, op == OP_MUL);
    return;
  }
  bool lowest = op == OP_MAX;
  if (is_float(t->dtype)) {
    ref_store_f(t->data, t->dtype, off, lowest ? -INFINITY : INFINITY);
    return;
  }
  static const struct {
    alloy_dtype t;
    int64_t lo, hi;
  } limits[] = {
      {ALLOY_BOOL, 0, 1},         {ALLOY_U8, 0, 255},
      {ALLOY_I8, -128, 127},      {ALLOY_I16, -32768, 32767},
      {ALLOY_I32, INT32_MIN, INT32_MAX}, {ALLOY_I64, INT64_MIN, INT64_MAX},
  };
  for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++)
    if (limits[i].t == t->dtype) ref_store_i(t->data, t->dtype, off, lowest ? limits[i].lo : limits[i].hi);
}

/* Divides out by count (a float64 buffer laid out like out, row-major):
 * true division for floats, floor division for integers, as PyTorch's
 * mean reductions do. */
static void divide_by_counts(const alloy_kernel_tensor *out, const double *count) {
  int64_t idx[MAXR] = {0}, n = ref_numel(out);
  for (int64_t k = 0; k < n; k++, ref_next_index(idx, out->sizes, out->rank)) {
    int64_t off = offset_of(out, idx);
    double cnt = count[k] == 0 ? 1 : count[k];
    if (is_float(out->dtype)) {
      ref_store_f(out->data, out->dtype, off, ref_load_f(out->data, out->dtype, off) / cnt);
    } else {
      int64_t a = ref_load_i(out->data, out->dtype, off), b = (int64_t)cnt;
      int64_t q = a / b;
      if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
      ref_store_i(out->data, out->dtype, off, q);
    }
  }
}

/* Row-major position in out of multi-index idx. */
static int64_t row_major(const alloy_kernel_tensor *t, const int64_t *idx) {
  int64_t lin = 0;
  for (int d = 0; d < t->rank; d++) lin = lin * t->sizes[d] + idx[d];
  return lin;
}

/* ---- advanced indexing ------------------------------------------------------
 * self[indices]: each index tensor indexes one dim of self (a bool/uint8
 * mask of rank k indexes k dims, as its nonzero coordinates). The index
 * tensors broadcast to one shape B; the result is self's shape with the
 * indexed dims replaced by B in place when they are adjacent, and with B
 * first when a non-indexed dim separates them (NumPy's rule). */

typedef struct {
  int nself;                           /* self's rank */
  const alloy_kernel_tensor *ix[MAXR]; /* per self dim; NULL: not indexed */
  alloy_kernel_tensor made[MAXR];      /* index tensors made from masks */
  int64_t made_size[MAXR], one_stride;
  int64_t *owned[MAXR];
  int nowned;
  int brank, bpos;
  int64_t bshape[MAXR];
  int rrank;
  int64_t rshape[2 * MAXR];
  int rdim[MAXR]; /* result dim walking non-indexed self dim d */
  bool clamp;     /* _unsafe_masked_index: clamp into [-size, size-1] */
} adv_plan;

static void adv_free(adv_plan *p) {
  for (int i = 0; i < p->nowned; i++) free(p->owned[i]);
  p->nowned = 0;
}

/* A mask of rank k over self dims [d, d+k): k index vectors of its nonzero
 * coordinates, in row-major order. */
static int adv_mask(const alloy_kernel_call *c, adv_plan *p, const alloy_kernel_tensor *self,
                    const alloy_kernel_tensor *m, int d) {
  int k = m->rank;
  if (d + k > self->rank) return ref_fail(c, "too many indices for tensor of dimension %d", self->rank);
  for (int j = 0; j < k; j++)
    if (m->sizes[j] != self->sizes[d + j])
      return ref_fail(c, "the shape of the mask does not match the shape of the indexed tensor at dim %d",
                  d + j);
  int64_t n = ref_numel(m), u = 0, idx[MAXR] = {0};
  for (int64_t i = 0; i < n; i++, ref_next_index(idx, m->sizes, k))
    u += ref_load_i(m->data, m->dtype, offset_of(m, idx)) != 0;
  for (int j = 0; j < k; j++) {
    int64_t *v = malloc(sizeof *v * (size_t)(u ? u : 1));
    if (!v) return ref_fail(c, "out of memory");
    p->owned[p->nowned++] = v;
    p->made_size[d + j] = u;
    p->made[d + j] = (alloy_kernel_tensor){v, ALLOY_I64, 1, &p->made_size[d + j], &p->one_stride};
    p->ix[d + j] = &p->made[d + j];
  }
  memset(idx, 0, sizeof idx);
  for (int64_t i = 0, w = 0; i < n; i++, ref_next_index(idx, m->sizes, k))
    if (ref_load_i(m->data, m->dtype, offset_of(m, idx)) != 0) {
      for (int j = 0; j < k; j++) ((int64_t *)p->made[d + j].data)[w] = idx[j];
      w++;
    }
  return 0;
}

/* Reads the Tensor?[] argument `name` against self and lays out the result. */
static int adv_plan_make(const alloy_kernel_call *c, adv_plan *p, const alloy_kernel_tensor *self,
                         const char *name) {
  memset(p, 0, sizeof *p);
  p->one_stride = 1;
  p->nself = self->rank;
  int count = ref_list_size(c, name), d = 0;
  for (int k = 0; k < count; k++) {
    const alloy_kernel_tensor *t = ref_tensor_item(c, name, k);
    if (t && (t->dtype == ALLOY_BOOL || t->dtype == ALLOY_U8)) {
      if (adv_mask(c, p, self, t, d)) return 1;
      d += t->rank;
      continue;
    }
    if (d >= self->rank) return ref_fail(c, "too many indices for tensor of dimension %d", self->rank);
    p->ix[d++] = t;
  }
  /* Broadcast the index shapes. */
  int first = -1, last = -1;
  for (int i = 0; i < self->rank; i++) {
    if (!p->ix[i]) continue;
    if (first < 0) first = i;
    last = i;
    if (p->ix[i]->rank > p->brank) p->brank = p->ix[i]->rank;
  }
  for (int j = 0; j < p->brank; j++) p->bshape[j] = 1;
  for (int i = 0; i < self->rank; i++) {
    const alloy_kernel_tensor *t = p->ix[i];
    for (int j = 0; t && j < t->rank; j++) {
      int64_t *b = &p->bshape[p->brank - t->rank + j], s = t->sizes[j];
      if (*b == 1) *b = s;
      else if (s != 1 && s != *b)
        return ref_fail(c, "shape mismatch: indexing tensors could not be broadcast together");
    }
  }
  bool adjacent = true;
  for (int i = first; first >= 0 && i <= last; i++) adjacent &= p->ix[i] != NULL;
  int r = 0;
  if (first < 0) {
    for (int i = 0; i < self->rank; i++) {
      p->rdim[i] = r;
      p->rshape[r++] = self->sizes[i];
    }
    p->bpos = 0;
  } else if (adjacent) {
    for (int i = 0; i < first; i++) {
      p->rdim[i] = r;
      p->rshape[r++] = self->sizes[i];
    }
    p->bpos = r;
    for (int j = 0; j < p->brank; j++) p->rshape[r++] = p->bshape[j];
    for (int i = last + 1; i < self->rank; i++) {
      p->rdim[i] = r;
      p->rshape[r++] = self->sizes[i];
    }
  } else {
    p->bpos = 0;
    for (int j = 0; j < p->brank; j++) p->rshape[r++] = p->bshape[j];
    for (int i = 0; i < self->rank; i++)
      if (!p->ix[i]) {
      p->rdim[i] = r;
      p->rshape[r++] = self->sizes[i];
    }
  }
  if (r > MAXR) return ref_fail(c, "result rank %d exceeds %d", r, MAXR);
  p->rrank = r;
  return 0;
}

/* The offset in self of result position ridx; false (after logging) when
 * an index is out of range. */
static bool adv_offset(const alloy_kernel_call *c, const adv_plan *p, const alloy_kernel_tensor *self,
                       const int64_t *ridx, int64_t *off) {
  int64_t o = 0;
  for (int d = 0; d < p->nself; d++) {
    int64_t coord;
    const alloy_kernel_tensor *t = p->ix[d];
    if (t) {
      coord = ref_load_i(t->data, t->dtype, bcast_offset(t, ridx + p->bpos, p->brank));
      int64_t n = self->sizes[d];
      if (p->clamp) coord = coord < -n ? -n : coord > n - 1 ? n - 1 : coord;
      int64_t raw = coord;
      if (!wrap_index(&coord, n)) {
        ref_fail(c, "index %lld (at %s of the broadcast indices) is out of bounds for dimension %d "
                 "with size %lld", (long long)raw, pos_of(ridx + p->bpos, p->brank).s, d,
                 (long long)n);
        return false;
      }
    } else {
      coord = ridx[p->rdim[d]];
    }
    o += coord * self->strides[d];
  }
  *off = o;
  return true;
}

static int k_index(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *self = ref_tensor(c, "self");
  adv_plan p;
  int rc = adv_plan_make(c, &p, self, "indices");
  const alloy_kernel_tensor *out = rc ? NULL : output_sized(c, 0, p.rshape);
  if (!rc && !out) rc = ref_fail(c, "index: cannot allocate the result");
  int64_t idx[2 * MAXR] = {0}, n = rc ? 0 : numel_of(p.rshape, p.rrank), off;
  for (int64_t k = 0; k < n && !rc; k++, ref_next_index(idx, p.rshape, p.rrank)) {
    if (!adv_offset(c, &p, self, idx, &off)) rc = 1;
    else copy_elem(out, offset_of(out, idx), self, off);
  }
  adv_free(&p);
  return rc;
}

/* Writes (or adds) values, broadcast to the indexing result, into out at
 * the places self[indices] names; out already holds self. mask: only
 * where the broadcast mask holds (the rest adds 0, as PyTorch's
 * values.masked_fill(~mask, 0) does). */
static int adv_put(const alloy_kernel_call *c, const adv_plan *p, const alloy_kernel_tensor *out,
                   const alloy_kernel_tensor *values, const alloy_kernel_tensor *mask, bool add) {
  int64_t idx[2 * MAXR] = {0}, n = numel_of(p->rshape, p->rrank), off;
  double zero_f = 0.0;
  int64_t zero_i = 0;
  alloy_kernel_tensor zero = {is_float(out->dtype) ? (void *)&zero_f : (void *)&zero_i,
                              is_float(out->dtype) ? ALLOY_F64 : ALLOY_I64, 0, NULL, NULL};
  for (int64_t k = 0; k < n; k++, ref_next_index(idx, p->rshape, p->rrank)) {
    if (!adv_offset(c, p, out, idx, &off)) return 1;
    const alloy_kernel_tensor *src = values;
    int64_t soff = bcast_offset(values, idx, p->rrank);
    if (mask && !ref_load_i(mask->data, mask->dtype, bcast_offset(mask, idx, p->rrank))) src = &zero, soff = 0;
    accumulate(out, off, add ? OP_ADD : OP_SET, src, soff);
  }
  return 0;
}

static int k_index_put(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *self = ref_tensor(c, "self"), *values = ref_tensor(c, "values");
  const alloy_kernel_tensor *out = &c->outputs[0];
  bool acc = false;
  ref_bool(c, "accumulate", &acc);
  copy_into(out, self);
  adv_plan p;
  /* The plan reads self's sizes; out has them, with its own strides. */
  int rc = adv_plan_make(c, &p, out, "indices");
  if (!rc) rc = adv_put(c, &p, out, values, NULL, acc);
  adv_free(&p);
  return rc;
}

/* _unsafe_masked_index(self, mask, indices, fill): self[indices] where
 * mask holds, fill elsewhere; indices are clamped into range first, so
 * that masked-off places may hold any index. */
static int k_unsafe_masked_index(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *self = ref_tensor(c, "self"), *mask = ref_tensor(c, "mask");
  const alloy_kernel_tensor *out = &c->outputs[0];
  ref_scalar_tensor fs;
  const alloy_kernel_tensor *fill = ref_operand(c, "fill", &fs);
  if (!fill) return ref_fail(c, "_unsafe_masked_index: no fill value");
  adv_plan p;
  int rc = adv_plan_make(c, &p, self, "indices");
  p.clamp = true;
  int64_t idx[MAXR] = {0}, ridx[2 * MAXR], n = ref_numel(out), off;
  bool empty = ref_numel(self) == 0;
  for (int64_t k = 0; k < n && !rc; k++, ref_next_index(idx, out->sizes, out->rank)) {
    int64_t ooff = offset_of(out, idx);
    if (empty || !ref_load_i(mask->data, mask->dtype, bcast_offset(mask, idx, out->rank))) {
      copy_elem(out, ooff, fill, 0);
      continue;
    }
    /* The result of self[indices] broadcasts to out: align its dims. */
    for (int d = 0; d < p.rrank; d++) {
      int od = out->rank - p.rrank + d;
      ridx[d] = p.rshape[d] == 1 ? 0 : idx[od];
    }
    if (!adv_offset(c, &p, self, ridx, &off)) rc = 1;
    else copy_elem(out, ooff, self, off);
  }
  adv_free(&p);
  return rc;
}

static int k_unsafe_masked_index_put_accumulate(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *self = ref_tensor(c, "self"), *mask = ref_tensor(c, "mask"),
                            *values = ref_tensor(c, "values"), *out = &c->outputs[0];
  copy_into(out, self);
  adv_plan p;
  int rc = adv_plan_make(c, &p, out, "indices");
  p.clamp = true;
  if (!rc && ref_numel(out)) rc = adv_put(c, &p, out, values, mask, true);
  adv_free(&p);
  return rc;
}

/* ---- gather / scatter ------------------------------------------------------------ */

static bool read_dim(const alloy_kernel_call *c, const alloy_kernel_tensor *t, int *dim) {
  int64_t d;
  if (!ref_int(c, "dim", &d)) return false;
  int64_t r = t->rank ? t->rank : 1;
  if (d < 0) d += r;
  if (d < 0 || d >= r) return false;
  *dim = (int)d;
  return true;
}

/* The offset in t of index's position idx with dim replaced by i. */
static int64_t along_offset(const alloy_kernel_tensor *t, const int64_t *idx, int dim, int64_t i) {
  int64_t off = 0;
  for (int d = 0; d < t->rank; d++) off += (d == dim ? i : idx[d]) * t->strides[d];
  return off;
}

static int k_gather(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *self = ref_tensor(c, "self"), *index = ref_tensor(c, "index"),
                            *out = &c->outputs[0];
  int dim;
  if (!read_dim(c, self, &dim)) return ref_fail(c, "gather: bad dim");
  int64_t idx[MAXR] = {0}, n = ref_numel(index), size = size_or_1(self, dim);
  for (int64_t k = 0; k < n; k++, ref_next_index(idx, index->sizes, index->rank)) {
    int64_t i = ref_load_i(index->data, index->dtype, offset_of(index, idx)), raw = i;
    if (!wrap_index(&i, size))
      return ref_fail(c, "gather: index %lld (index%s) is out of bounds for dimension %d with size "
                      "%lld", (long long)raw, pos_of(idx, index->rank).s, dim, (long long)size);
    copy_elem(out, offset_of(out, idx), self, along_offset(self, idx, dim, i));
  }
  return 0;
}

/* The scatter family: out = self, then for every element of index, in
 * order, out[... index ...] = op(out[...], src[pos]) (src a tensor or a
 * scalar value). include_self false first resets every target to the
 * reduction's identity; mean divides by the number of contributions. */
/* PyTorch's scatter reductions on float16/bfloat16 accumulate in a
 * float32 copy of self, rounded back once at the end (sum of 2^-11, 1,
 * 2^-11 is 1.00098, where float16 steps give 1): wide() makes that copy. */
static const alloy_kernel_tensor *wide(const alloy_kernel_tensor *out, alloy_kernel_tensor *w,
                                       int64_t *strides, float **buf) {
  *buf = NULL;
  if (out->dtype != ALLOY_F16 && out->dtype != ALLOY_BF16) return out;
  int64_t n = ref_numel(out), st = 1;
  if (!(*buf = malloc(sizeof **buf * (size_t)(n ? n : 1)))) return NULL;
  for (int d = out->rank - 1; d >= 0; d--) strides[d] = st, st *= out->sizes[d];
  *w = *out;
  w->dtype = ALLOY_F32;
  w->data = *buf;
  w->strides = strides;
  return w;
}

static int scatter_run(const alloy_kernel_call *c, const alloy_kernel_tensor *src, acc_op op,
                       bool mean, bool include_self) {
  const alloy_kernel_tensor *self = ref_tensor(c, "self"), *index = ref_tensor(c, "index"),
                            *final = &c->outputs[0];
  int dim;
  if (!read_dim(c, self, &dim)) return ref_fail(c, "scatter: bad dim");
  alloy_kernel_tensor w;
  int64_t wstrides[MAXR];
  float *buf;
  const alloy_kernel_tensor *out = op == OP_SET ? final : wide(final, &w, wstrides, &buf);
  if (op == OP_SET) buf = NULL;
  if (!out) return ref_fail(c, "out of memory");
  copy_into(out, self);
  int64_t idx[MAXR] = {0}, n = ref_numel(index), size = size_or_1(out, dim);
  double *count = NULL;
  if (mean) {
    int64_t on = ref_numel(out);
    count = calloc((size_t)(on ? on : 1), sizeof *count);
    if (!count) return free(buf), ref_fail(c, "out of memory");
    for (int64_t k = 0; k < on && include_self; k++) count[k] = 1;
  }
  /* Two passes: the reset must precede every contribution. */
  for (int pass = include_self ? 1 : 0; pass < 2; pass++) {
    memset(idx, 0, sizeof idx);
    for (int64_t k = 0; k < n; k++, ref_next_index(idx, index->sizes, index->rank)) {
      int64_t i = ref_load_i(index->data, index->dtype, offset_of(index, idx)), raw = i;
      if (!wrap_index(&i, size)) {
        free(count), free(buf);
        return ref_fail(c, "scatter: index %lld (index%s) is out of bounds for dimension %d with "
                        "size %lld", (long long)raw, pos_of(idx, index->rank).s, dim, (long long)size);
      }
      int64_t ooff = along_offset(out, idx, dim, i);
      if (pass == 0) {
        store_identity(out, ooff, op);
        continue;
      }
      accumulate(out, ooff, op, src, src->rank ? offset_of(src, idx) : 0);
      if (count) {
        int64_t at[MAXR];
        memcpy(at, idx, sizeof at);
        if (out->rank) at[dim] = i;
        count[row_major(out, at)] += 1;
      }
    }
  }
  if (count) divide_by_counts(out, count);
  if (buf) copy_into(final, out);
  free(count), free(buf);
  return 0;
}

static int k_scatter_src(const alloy_kernel_call *c) {
  return scatter_run(c, ref_tensor(c, "src"), OP_SET, false, true);
}

static int k_scatter_value(const alloy_kernel_call *c) {
  ref_scalar_tensor s;
  const alloy_kernel_tensor *v = ref_operand(c, "value", &s);
  return v ? scatter_run(c, v, OP_SET, false, true) : ref_fail(c, "scatter: no value");
}

static int k_scatter_add(const alloy_kernel_call *c) {
  return scatter_run(c, ref_tensor(c, "src"), OP_ADD, false, true);
}

static int k_scatter_reduce(const alloy_kernel_call *c) {
  const reduce_name *r = find_reduce(ref_str(c, "reduce"));
  if (!r) return ref_fail(c, "scatter: unknown reduction '%s'", ref_str(c, "reduce"));
  bool include_self = true;
  ref_bool(c, "include_self", &include_self);
  return scatter_run(c, ref_tensor(c, "src"), r->op, r->mean, include_self);
}

/* ---- index_select and the index_* family ------------------------------------------ */

/* Reads a vector index (0-dim counts as one entry) and checks each entry
 * against size, wrapping negative ones. *out is malloc'd. */
static int read_vector_index(const alloy_kernel_call *c, const alloy_kernel_tensor *index, int dim,
                             int64_t size, int64_t **out, int64_t *count) {
  int64_t n = ref_numel(index);
  int64_t *v = malloc(sizeof *v * (size_t)(n ? n : 1));
  if (!v) return ref_fail(c, "out of memory");
  for (int64_t k = 0; k < n; k++) {
    int64_t i = ref_load_i(index->data, index->dtype, ref_linear_offset(index, k)), raw = i;
    if (!wrap_index(&i, size)) {
      free(v);
      return ref_fail(c, "index %lld (index[%lld]) is out of bounds for dimension %d with size %lld",
                      (long long)raw, (long long)k, dim, (long long)size);
    }
    v[k] = i;
  }
  *out = v;
  *count = n;
  return 0;
}

static int k_index_select(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *self = ref_tensor(c, "self"), *index = ref_tensor(c, "index"),
                            *out = &c->outputs[0];
  int dim;
  if (!read_dim(c, self, &dim)) return ref_fail(c, "index_select: bad dim");
  int64_t *ix, nix;
  if (read_vector_index(c, index, dim, size_or_1(self, dim), &ix, &nix)) return 1;
  int64_t idx[MAXR] = {0}, n = ref_numel(out);
  for (int64_t k = 0; k < n; k++, ref_next_index(idx, out->sizes, out->rank)) {
    int64_t i = out->rank ? ix[idx[dim]] : ix[0];
    copy_elem(out, offset_of(out, idx), self, along_offset(self, idx, dim, i));
  }
  free(ix);
  return 0;
}

/* The index_* family walks source slice by slice: for entry k of index,
 * every position of the slice out.select(dim, index[k]) meets the
 * position of source.select(dim, k). visit gets both offsets. */
typedef void (*slice_visit)(const alloy_kernel_tensor *out, int64_t ooff,
                            const alloy_kernel_tensor *src, int64_t soff, void *ctx);

static void for_slices(const alloy_kernel_tensor *out, const alloy_kernel_tensor *src, int dim,
                       const int64_t *ix, int64_t nix, slice_visit visit, void *ctx) {
  int64_t sizes[MAXR], idx[MAXR];
  int rank = out->rank;
  for (int d = 0; d < rank; d++) sizes[d] = d == dim ? 1 : out->sizes[d];
  int64_t per = numel_of(sizes, rank);
  for (int64_t k = 0; k < nix; k++) {
    memset(idx, 0, sizeof idx);
    for (int64_t e = 0; e < per; e++, ref_next_index(idx, sizes, rank)) {
      int64_t ooff = 0, soff = 0;
      for (int d = 0; d < rank; d++) {
        ooff += (d == dim ? ix[k] : idx[d]) * out->strides[d];
        if (src && src->rank) soff += (d == dim ? k : idx[d]) * src->strides[d];
      }
      visit(out, ooff, src, soff, ctx);
    }
  }
}

typedef struct {
  acc_op op;
  double alpha;
  int64_t alpha_i;
  double *count;
  const alloy_kernel_tensor *value;
} slice_ctx;

static void visit_copy(const alloy_kernel_tensor *out, int64_t ooff, const alloy_kernel_tensor *src,
                       int64_t soff, void *ctx) {
  (void)ctx;
  copy_elem(out, ooff, src, soff);
}

static void visit_fill(const alloy_kernel_tensor *out, int64_t ooff, const alloy_kernel_tensor *src,
                       int64_t soff, void *ctx) {
  (void)src, (void)soff;
  copy_elem(out, ooff, ((slice_ctx *)ctx)->value, 0);
}

/* out += alpha * src, computed once in double (float16/bfloat16 in opmath,
 * rounded on store) or in wrapping int64. */
static void visit_add(const alloy_kernel_tensor *out, int64_t ooff, const alloy_kernel_tensor *src,
                      int64_t soff, void *ctx) {
  const slice_ctx *x = ctx;
  if (is_float(out->dtype))
    ref_store_f(out->data, out->dtype, ooff,
                ref_load_f(out->data, out->dtype, ooff) + x->alpha * ref_load_f(src->data, src->dtype, soff));
  else
    ref_store_i(out->data, out->dtype, ooff,
                (int64_t)((uint64_t)ref_load_i(out->data, out->dtype, ooff) +
                          (uint64_t)x->alpha_i * (uint64_t)ref_load_i(src->data, src->dtype, soff)));
}

static void visit_identity(const alloy_kernel_tensor *out, int64_t ooff, const alloy_kernel_tensor *src,
                           int64_t soff, void *ctx) {
  (void)src, (void)soff;
  store_identity(out, ooff, ((slice_ctx *)ctx)->op);
}

static void visit_reduce(const alloy_kernel_tensor *out, int64_t ooff, const alloy_kernel_tensor *src,
                         int64_t soff, void *ctx) {
  accumulate(out, ooff, ((slice_ctx *)ctx)->op, src, soff);
}

/* Reads self, dim and index of an index_* op and copies self to out. */
static int index_family_begin(const alloy_kernel_call *c, int *dim, int64_t **ix, int64_t *nix) {
  const alloy_kernel_tensor *self = ref_tensor(c, "self"), *out = &c->outputs[0];
  if (!read_dim(c, self, dim)) return ref_fail(c, "bad dim");
  copy_into(out, self);
  return read_vector_index(c, ref_tensor(c, "index"), *dim, size_or_1(self, *dim), ix, nix);
}

static int k_index_add(const alloy_kernel_call *c) {
  int dim;
  int64_t *ix, nix;
  if (index_family_begin(c, &dim, &ix, &nix)) return 1;
  slice_ctx x = {.alpha = 1.0, .alpha_i = 1};
  bool b;
  if (!ref_float(c, "alpha", &x.alpha) && ref_bool(c, "alpha", &b)) x.alpha = b;
  x.alpha_i = (int64_t)x.alpha;
  for_slices(&c->outputs[0], ref_tensor(c, "source"), dim, ix, nix, visit_add, &x);
  free(ix);
  return 0;
}

static int k_index_copy(const alloy_kernel_call *c) {
  int dim;
  int64_t *ix, nix;
  if (index_family_begin(c, &dim, &ix, &nix)) return 1;
  for_slices(&c->outputs[0], ref_tensor(c, "source"), dim, ix, nix, visit_copy, NULL);
  free(ix);
  return 0;
}

static int k_index_fill(const alloy_kernel_call *c) {
  int dim;
  int64_t *ix, nix;
  ref_scalar_tensor s;
  slice_ctx x = {.value = ref_operand(c, "value", &s)};
  if (!x.value) return ref_fail(c, "index_fill: no value");
  if (index_family_begin(c, &dim, &ix, &nix)) return 1;
  for_slices(&c->outputs[0], NULL, dim, ix, nix, visit_fill, &x);
  free(ix);
  return 0;
}

/* index_reduce(self, dim, index, source, reduce, include_self). */
static int k_index_reduce(const alloy_kernel_call *c) {
  const reduce_name *r = find_reduce(ref_str(c, "reduce"));
  if (!r) return ref_fail(c, "index_reduce: unknown reduction '%s'", ref_str(c, "reduce"));
  bool include_self = true;
  ref_bool(c, "include_self", &include_self);
  int dim;
  int64_t *ix, nix;
  if (index_family_begin(c, &dim, &ix, &nix)) return 1;
  const alloy_kernel_tensor *out = &c->outputs[0], *src = ref_tensor(c, "source");
  slice_ctx x = {.op = r->op};
  if (!include_self) for_slices(out, NULL, dim, ix, nix, visit_identity, &x);
  for_slices(out, src, dim, ix, nix, visit_reduce, &x);
  int rc = 0;
  if (r->mean) {
    /* count[p] = contributions to p (plus self's one) */
    int64_t on = ref_numel(out);
    double *count = calloc((size_t)(on ? on : 1), sizeof *count);
    if (!count) rc = ref_fail(c, "out of memory");
    for (int64_t k = 0; count && k < on; k++) count[k] = include_self;
    int64_t sizes[MAXR], idx[MAXR];
    for (int d = 0; d < out->rank; d++) sizes[d] = d == dim ? 1 : out->sizes[d];
    int64_t per = numel_of(sizes, out->rank);
    for (int64_t k = 0; count && k < nix; k++) {
      memset(idx, 0, sizeof idx);
      for (int64_t e = 0; e < per; e++, ref_next_index(idx, sizes, out->rank)) {
        int64_t at[MAXR];
        memcpy(at, idx, sizeof at);
        if (out->rank) at[dim] = ix[k];
        count[row_major(out, at)] += 1;
      }
    }
    if (count) divide_by_counts(out, count);
    free(count);
  }
  free(ix);
  return rc;
}

/* ---- take / put ------------------------------------------------------------------- */

static int k_take(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *self = ref_tensor(c, "self"), *index = ref_tensor(c, "index"),
                            *out = &c->outputs[0];
  int64_t idx[MAXR] = {0}, n = ref_numel(index), size = ref_numel(self);
  for (int64_t k = 0; k < n; k++, ref_next_index(idx, index->sizes, index->rank)) {
    int64_t i = ref_load_i(index->data, index->dtype, offset_of(index, idx)), raw = i;
    if (!wrap_index(&i, size))
      return ref_fail(c, "take: index %lld (index%s) is out of range for a tensor of %lld elements",
                      (long long)raw, pos_of(idx, index->rank).s, (long long)size);
    copy_elem(out, offset_of(out, idx), self, ref_linear_offset(self, i));
  }
  return 0;
}

static int k_put(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *self = ref_tensor(c, "self"), *index = ref_tensor(c, "index"),
                            *src = ref_tensor(c, "source"), *out = &c->outputs[0];
  bool acc = false;
  ref_bool(c, "accumulate", &acc);
  copy_into(out, self);
  int64_t n = ref_numel(index), size = ref_numel(out);
  for (int64_t k = 0; k < n; k++) {
    int64_t i = ref_load_i(index->data, index->dtype, ref_linear_offset(index, k)), raw = i;
    if (!wrap_index(&i, size))
      return ref_fail(c, "put: index %lld (element %lld of index) is out of range for a tensor of "
                      "%lld elements", (long long)raw, (long long)k, (long long)size);
    accumulate(out, ref_linear_offset(out, i), acc ? OP_ADD : OP_SET, src, ref_linear_offset(src, k));
  }
  return 0;
}

/* ---- masks ---------------------------------------------------------------------------- */

/* masked_fill(self, mask, value): value (a Scalar or a 0-dim tensor)
 * where the broadcast mask holds. */
static int k_masked_fill(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0];
  const alloy_kernel_tensor *ins[2] = {ref_tensor(c, "self"), ref_tensor(c, "mask")};
  ref_scalar_tensor s;
  const alloy_kernel_tensor *value = ref_operand(c, "value", &s);
  if (!value) return ref_fail(c, "masked_fill: no value");
  ref_iter it;
  ref_iter_init(&it, out, ins, 2);
  while (ref_iter_next(&it)) {
    if (ref_load_i(ins[1]->data, ins[1]->dtype, it.offset[2])) copy_elem(out, it.offset[0], value, 0);
    else copy_elem(out, it.offset[0], ins[0], it.offset[1]);
  }
  return 0;
}

/* masked_scatter(self, mask, source): the places where the broadcast mask
 * holds take source's elements in row-major order. */
static int k_masked_scatter(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *out = &c->outputs[0], *src = ref_tensor(c, "source");
  const alloy_kernel_tensor *ins[2] = {ref_tensor(c, "self"), ref_tensor(c, "mask")};
  int64_t next = 0, avail = ref_numel(src);
  ref_iter it;
  ref_iter_init(&it, out, ins, 2);
  while (ref_iter_next(&it)) {
    if (!ref_load_i(ins[1]->data, ins[1]->dtype, it.offset[2])) {
      copy_elem(out, it.offset[0], ins[0], it.offset[1]);
      continue;
    }
    if (next >= avail) return ref_fail(c, "masked_scatter: expected source to have at least as many elements as the ones selected by the mask");
    copy_elem(out, it.offset[0], src, ref_linear_offset(src, next++));
  }
  return 0;
}

/* masked_select(self, mask): the elements where the broadcast mask holds,
 * row-major, as a 1-D tensor whose length depends on the data. */
static int k_masked_select(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *self = ref_tensor(c, "self"), *mask = ref_tensor(c, "mask");
  int64_t shape[MAXR], rank = self->rank > mask->rank ? self->rank : mask->rank;
  for (int d = 0; d < rank; d++) {
    int ds = d - (int)(rank - self->rank), dm = d - (int)(rank - mask->rank);
    int64_t a = ds >= 0 ? self->sizes[ds] : 1, b = dm >= 0 ? mask->sizes[dm] : 1;
    if (a != b && a != 1 && b != 1) return ref_fail(c, "masked_select: shapes do not broadcast");
    shape[d] = a == 1 ? b : a;
  }
  int64_t idx[MAXR] = {0}, n = numel_of(shape, (int)rank), u = 0;
  for (int64_t k = 0; k < n; k++, ref_next_index(idx, shape, (int)rank))
    u += ref_load_i(mask->data, mask->dtype, bcast_offset(mask, idx, (int)rank)) != 0;
  const alloy_kernel_tensor *out = output_sized(c, 0, &u);
  if (!out) return ref_fail(c, "masked_select: cannot allocate the result");
  memset(idx, 0, sizeof idx);
  for (int64_t k = 0, w = 0; k < n; k++, ref_next_index(idx, shape, (int)rank))
    if (ref_load_i(mask->data, mask->dtype, bcast_offset(mask, idx, (int)rank)))
      copy_elem(out, (w++) * (out->rank ? out->strides[0] : 0), self, bcast_offset(self, idx, (int)rank));
  return 0;
}

/* The coordinates of self's nonzero elements, row-major; count of them
 * in *u. Writes at most cap rows into out (rank columns) when out is set. */
static int64_t nonzero_walk(const alloy_kernel_tensor *self, const alloy_kernel_tensor *out, int64_t cap) {
  int64_t idx[MAXR] = {0}, n = ref_numel(self), u = 0;
  for (int64_t k = 0; k < n; k++, ref_next_index(idx, self->sizes, self->rank)) {
    int64_t off = offset_of(self, idx);
    bool nz = is_float(self->dtype) ? ref_load_f(self->data, self->dtype, off) != 0.0
                                    : ref_load_i(self->data, self->dtype, off) != 0;
    if (!nz) continue;
    for (int d = 0; out && u < cap && d < self->rank; d++)
      ref_store_i(out->data, out->dtype, u * out->strides[0] + d * out->strides[1], idx[d]);
    u++;
  }
  return u;
}

static int k_nonzero(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *self = ref_tensor(c, "self");
  int64_t sizes[2] = {nonzero_walk(self, NULL, 0), self->rank};
  const alloy_kernel_tensor *out = output_sized(c, 0, sizes);
  if (!out) return ref_fail(c, "nonzero: cannot allocate the result");
  nonzero_walk(self, out, sizes[0]);
  return 0;
}

/* nonzero_numpy(self): nonzero's columns, one tensor each (a 0-dim self
 * as one element along one dim). */
static int k_nonzero_numpy(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *self = ref_tensor(c, "self");
  int64_t u = nonzero_walk(self, NULL, 0), cols = self->rank ? self->rank : 1;
  for (int k = 0; k < cols; k++)
    if (!output_sized(c, k, &u)) return ref_fail(c, "nonzero_numpy: cannot allocate the result");
  int64_t idx[MAXR] = {0}, n = ref_numel(self), w = 0;
  for (int64_t k = 0; k < n; k++, ref_next_index(idx, self->sizes, self->rank)) {
    int64_t off = offset_of(self, idx);
    bool nz = is_float(self->dtype) ? ref_load_f(self->data, self->dtype, off) != 0.0
                                    : ref_load_i(self->data, self->dtype, off) != 0;
    if (!nz) continue;
    for (int d = 0; d < cols; d++) {
      const alloy_kernel_tensor *o = output_sized(c, d, &u);
      ref_store_i(o->data, o->dtype, w * o->strides[0], self->rank ? idx[d] : 0);
    }
    w++;
  }
  return 0;
}

/* nonzero_static(self, size, fill_value): the first `size` coordinates,
 * the rows past the count filled with fill_value. */
static int k_nonzero_static(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *self = ref_tensor(c, "self"), *out = &c->outputs[0];
  int64_t fill = -1, rows = out->sizes[0];
  ref_int(c, "fill_value", &fill);
  int64_t u = nonzero_walk(self, out, rows);
  for (int64_t r = u; r < rows; r++)
    for (int d = 0; d < self->rank; d++)
      ref_store_i(out->data, out->dtype, r * out->strides[0] + d * out->strides[1], fill);
  return 0;
}

/* one_hot(self, num_classes): row i of the result is 1 at self[i]; -1
 * classes means max(self) + 1. Values out of range are refused with
 * PyTorch's messages. */
static int k_one_hot(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *self = ref_tensor(c, "self");
  int64_t classes = -1, n = self ? ref_numel(self) : 0, idx[MAXR] = {0};
  if (!self) return 1;
  ref_int(c, "num_classes", &classes);
  int64_t hi = -1;
  for (int64_t k = 0; k < n; k++, ref_next_index(idx, self->sizes, self->rank)) {
    int64_t v = ref_load_i(self->data, self->dtype, offset_of(self, idx));
    if (v < 0) return ref_fail(c, "Class values must be non-negative.");
    if (v > hi) hi = v;
  }
  if (classes == -1) {
    if (n == 0) return ref_fail(c, "Can not infer total number of classes from empty tensor.");
    classes = hi + 1;
  } else if (n && hi >= classes) {
    return ref_fail(c, "Class values must be smaller than num_classes.");
  }
  int64_t sizes[MAXR + 1];
  for (int d = 0; d < self->rank; d++) sizes[d] = self->sizes[d];
  sizes[self->rank] = classes;
  const alloy_kernel_tensor *out = output_sized(c, 0, sizes);
  if (!out) return ref_fail(c, "one_hot: cannot allocate the result");
  int64_t oidx[MAXR + 1] = {0}, total = n * classes;
  for (int64_t k = 0; k < total; k++, ref_next_index(oidx, out->sizes, out->rank))
    ref_store_i(out->data, out->dtype, offset_of(out, oidx), 0);
  for (int d = 0; d < MAXR; d++) idx[d] = 0;
  for (int64_t k = 0; k < n; k++, ref_next_index(idx, self->sizes, self->rank)) {
    for (int d = 0; d < self->rank; d++) oidx[d] = idx[d];
    oidx[self->rank] = ref_load_i(self->data, self->dtype, offset_of(self, idx));
    ref_store_i(out->data, out->dtype, offset_of(out, oidx), 1);
  }
  return 0;
}

/* ---- embeddings --------------------------------------------------------------------- */

static int k_embedding(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *w = ref_tensor(c, "weight"), *ix = ref_tensor(c, "indices"),
                            *out = &c->outputs[0];
  int64_t idx[MAXR] = {0}, n = ref_numel(ix), rows = w->sizes[0], dim = w->sizes[1];
  int r = ix->rank;
  for (int64_t k = 0; k < n; k++, ref_next_index(idx, ix->sizes, r)) {
    int64_t i = ref_load_i(ix->data, ix->dtype, offset_of(ix, idx));
    if (i < 0 || i >= rows)
      return ref_fail(c, "embedding: index %lld (indices%s) is out of range for a weight of %lld rows",
                      (long long)i, pos_of(idx, r).s, (long long)rows);
    int64_t obase = offset_of(out, idx);
    for (int64_t j = 0; j < dim; j++)
      copy_elem(out, obase + j * out->strides[r], w, i * w->strides[0] + j * w->strides[1]);
  }
  return 0;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* embedding_renorm_(self, indices, max_norm, norm_type): every row that
 * indices name once or more, whose norm (ref_pnorm, accumulated in double,
 * rounded to self's dtype) exceeds max_norm, is scaled by
 * max_norm / (norm + 1e-7); a NaN norm exceeds nothing. The in-place op
 * runs functionally: out is the new self. */
static int k_embedding_renorm(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *self = ref_tensor(c, "self"), *ix = ref_tensor(c, "indices"),
                            *out = &c->outputs[0];
  double max_norm = 0, p = 2;
  ref_float(c, "max_norm", &max_norm);
  ref_float(c, "norm_type", &p);
  copy_into(out, self);
  int64_t n = ref_numel(ix), rows = out->sizes[0], dim = out->sizes[1];
  int64_t *v = malloc(sizeof *v * (size_t)(n ? n : 1));
  if (!v) return ref_fail(c, "out of memory");
  for (int64_t k = 0; k < n; k++) v[k] = ref_load_i(ix->data, ix->dtype, ref_linear_offset(ix, k));
  qsort(v, (size_t)n, sizeof *v, cmp_i64);
  for (int64_t k = 0; k < n; k++) {
    if (k > 0 && v[k] == v[k - 1]) continue;
    if (v[k] < 0 || v[k] >= rows) {
      long long bad = (long long)v[k];
      free(v);
      return ref_fail(c, "embedding_renorm_: index %lld is out of range for a weight of %lld rows",
                      bad, (long long)rows);
    }
    ref_pnorm acc = ref_pnorm_start(p);
    for (int64_t j = 0; j < dim; j++)
      ref_pnorm_add(&acc, ref_load_f(out->data, out->dtype, v[k] * out->strides[0] + j * out->strides[1]));
    double norm = round_to(out->dtype, ref_pnorm_value(&acc, false));
    if (!(norm > max_norm)) continue;
    double scale = max_norm / (norm + 1e-7);
    for (int64_t j = 0; j < dim; j++) {
      int64_t off = v[k] * out->strides[0] + j * out->strides[1];
      ref_store_f(out->data, out->dtype, off, ref_load_f(out->data, out->dtype, off) * scale);
    }
  }
  free(v);
  return 0;
}

enum { BAG_SUM, BAG_MEAN, BAG_MAX };

/* _embedding_bag / _embedding_bag_forward_only(weight, indices, offsets,
 * scale_grad_by_freq, mode, sparse, per_sample_weights,
 * include_last_offset, padding_idx) -> (output, offset2bag, bag_size,
 * max_indices), as PyTorch's CPU kernel fills them: bag b holds indices
 * [offsets[b], offsets[b+1]) (the last bag runs to the end of indices);
 * sum accumulates in double and rounds once; mean divides the rounded sum
 * by the bag's size (at least 1); max keeps the first maximum (NaN never
 * replaces it) and its index. Entries equal to padding_idx are skipped and
 * not counted. offset2bag is filled when the meta shape asks for it;
 * bag_size is 0 for sum; max_indices is bag_size for sum and mean. */
static int k_embedding_bag(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *w = ref_tensor(c, "weight"), *ix = ref_tensor(c, "indices"),
                            *offs = ref_tensor(c, "offsets"), *psw = ref_tensor(c, "per_sample_weights");
  const alloy_kernel_tensor *out = &c->outputs[0], *o2b = &c->outputs[1], *bsz = &c->outputs[2],
                            *maxi = &c->outputs[3];
  int64_t mode = 0, padding_idx = -1;
  bool last = false;
  ref_int(c, "mode", &mode);
  ref_int(c, "padding_idx", &padding_idx);
  ref_bool(c, "include_last_offset", &last);
  int64_t nidx = ref_numel(ix), noff = offs->sizes[0], bags = out->sizes[0], dim = w->sizes[1],
          rows = w->sizes[0];
  int64_t *start = malloc(sizeof *start * (size_t)(bags + 1));
  double *acc = malloc(sizeof *acc * (size_t)(dim ? dim : 1));
  if (!start || !acc) {
    free(start), free(acc);
    return ref_fail(c, "out of memory");
  }
  (void)noff;
  for (int64_t b = 0; b < bags; b++) start[b] = ref_load_i(offs->data, offs->dtype, b * offs->strides[0]);
  start[bags] = nidx;
  int rc = 0;
  for (int64_t b = 0; b < bags && !rc; b++) {
    int64_t lo = start[b], hi = b + 1 < bags ? start[b + 1] : nidx, count = 0;
    if (lo < 0 || hi > nidx || lo > hi) {
      rc = ref_fail(c, "embedding_bag: bag %lld runs from offset %lld to %lld, outside the %lld "
                       "indices", (long long)b, (long long)lo, (long long)hi, (long long)nidx);
      break;
    }
    for (int64_t j = 0; j < dim; j++) acc[j] = 0;
    for (int64_t k = lo; k < hi; k++) {
      int64_t i = ref_load_i(ix->data, ix->dtype, k * ix->strides[0]);
      if (o2b->rank == 1 && o2b->sizes[0] == nidx)
        ref_store_i(o2b->data, o2b->dtype, k * o2b->strides[0], b);
      if (i < 0 || i >= rows) {
        rc = ref_fail(c, "embedding_bag: index %lld (indices[%lld]) is out of range for a weight of "
                      "%lld rows", (long long)i, (long long)k, (long long)rows);
        break;
      }
      if (i == padding_idx) continue;
      double sw = psw ? ref_load_f(psw->data, psw->dtype, k * psw->strides[0]) : 1.0;
      for (int64_t j = 0; j < dim; j++) {
        double x = ref_load_f(w->data, w->dtype, i * w->strides[0] + j * w->strides[1]);
        if (mode != BAG_MAX) {
          acc[j] += x * sw;
        } else if (count == 0 || x > acc[j]) {
          acc[j] = x;
          ref_store_i(maxi->data, maxi->dtype, b * maxi->strides[0] + j * maxi->strides[1], i);
        }
      }
      count++;
    }
    for (int64_t j = 0; j < dim; j++) {
      int64_t off = b * out->strides[0] + j * out->strides[1];
      ref_store_f(out->data, out->dtype, off, acc[j]);
      if (mode == BAG_MEAN && count > 1)
        ref_store_f(out->data, out->dtype, off, ref_load_f(out->data, out->dtype, off) / (double)count);
      if (mode == BAG_MAX && count == 0)
        ref_store_i(maxi->data, maxi->dtype, b * maxi->strides[0] + j * maxi->strides[1], 0);
    }
    if (bsz->rank == 1 && b < bsz->sizes[0])
      ref_store_i(bsz->data, bsz->dtype, b * bsz->strides[0], mode == BAG_SUM ? 0 : count);
    if (mode != BAG_MAX && maxi->rank == 1 && b < maxi->sizes[0])
      ref_store_i(maxi->data, maxi->dtype, b * maxi->strides[0], mode == BAG_SUM ? 0 : count);
  }
  /* Entries of bag_size / max_indices past the bags (sum with
   * include_last_offset keeps offsets' length) are zero. */
  for (int64_t b = bags; bsz->rank == 1 && b < bsz->sizes[0]; b++)
    ref_store_i(bsz->data, bsz->dtype, b * bsz->strides[0], 0);
  for (int64_t b = bags; mode != BAG_MAX && maxi->rank == 1 && b < maxi->sizes[0]; b++)
    ref_store_i(maxi->data, maxi->dtype, b * maxi->strides[0], 0);
  free(start);
  free(acc);
  return rc;
}

/* ---- searching ------------------------------------------------------------------------ */

/* Compares two elements in the dtype they promote to: double when either
 * is a float, int64 otherwise (exact for every integer). */
static double val_f(const alloy_kernel_tensor *t, int64_t off) { return ref_load_f(t->data, t->dtype, off); }
static int64_t val_i(const alloy_kernel_tensor *t, int64_t off) { return ref_load_i(t->data, t->dtype, off); }

/* ge: seq >= v (lower bound) or gt: seq > v (upper bound), written as
 * PyTorch's binary search writes them, so NaN sorts where it does there. */
static bool seq_before(bool fl, bool right, const alloy_kernel_tensor *seq, int64_t soff,
                       const alloy_kernel_tensor *x, int64_t xoff) {
  if (fl) {
    double m = val_f(seq, soff), v = val_f(x, xoff);
    return right ? !(m > v) : !(m >= v);
  }
  int64_t m = val_i(seq, soff), v = val_i(x, xoff);
  return right ? !(m > v) : !(m >= v);
}

/* The insertion point of x[xoff] in row `row` of seq (its last dim). */
static int64_t search_row(const alloy_kernel_tensor *seq, const int64_t *row_idx, const alloy_kernel_tensor *sorter,
                          bool right, const alloy_kernel_tensor *x, int64_t xoff) {
  int last = seq->rank - 1;
  int64_t len = seq->sizes[last], lo = 0, hi = len;
  int64_t base = 0, sbase = 0;
  for (int d = 0; d < last; d++) {
    base += row_idx[d] * seq->strides[d];
    if (sorter) sbase += row_idx[d] * sorter->strides[d];
  }
  bool fl = is_float(seq->dtype) || is_float(x->dtype);
  while (lo < hi) {
    int64_t mid = lo + ((hi - lo) >> 1), pos = mid;
    if (sorter) pos = val_i(sorter, sbase + mid * sorter->strides[last]);
    if (seq_before(fl, right, seq, base + pos * seq->strides[last], x, xoff)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static int k_searchsorted(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *seq = ref_tensor(c, "sorted_sequence"), *x = ref_tensor(c, "self"),
                            *sorter = ref_tensor(c, "sorter"), *out = &c->outputs[0];
  bool right = false;
  ref_bool(c, "right", &right);
  const char *side = ref_str(c, "side");
  if (side && !strcmp(side, "right")) right = true;
  int64_t idx[MAXR] = {0}, n = ref_numel(x);
  int64_t zero[MAXR] = {0};
  for (int64_t k = 0; k < n; k++, ref_next_index(idx, x->sizes, x->rank))
    ref_store_i(out->data, out->dtype, offset_of(out, idx),
                search_row(seq, seq->rank > 1 ? idx : zero, sorter, right, x, offset_of(x, idx)));
  return 0;
}

static int k_bucketize(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *b = ref_tensor(c, "boundaries"), *x = ref_tensor(c, "self"),
                            *out = &c->outputs[0];
  bool right = false;
  ref_bool(c, "right", &right);
  int64_t idx[MAXR] = {0}, zero[MAXR] = {0}, n = ref_numel(x);
  for (int64_t k = 0; k < n; k++, ref_next_index(idx, x->sizes, x->rank))
    ref_store_i(out->data, out->dtype, offset_of(out, idx), search_row(b, zero, NULL, right, x, offset_of(x, idx)));
  return 0;
}

/* torch.promote_types over bool, the integers and the real floats. */
static alloy_dtype promote_pair(alloy_dtype a, alloy_dtype b) {
  if (a == b || b == ALLOY_BOOL) return a;
  if (a == ALLOY_BOOL) return b;
  if (is_float(a) && is_float(b)) {
    if ((a == ALLOY_F16 && b == ALLOY_BF16) || (a == ALLOY_BF16 && b == ALLOY_F16)) return ALLOY_F32;
    return a > b ? a : b;
  }
  if (is_float(a) || is_float(b)) return is_float(a) ? a : b;
  if (a == ALLOY_U8 || b == ALLOY_U8) {
    alloy_dtype other = a == ALLOY_U8 ? b : a;
    return other == ALLOY_I8 ? ALLOY_I16 : other;
  }
  return a > b ? a : b;
}

/* torch.result_type of two tensors: a zero-dim one beside one with dims
 * only counts when its category (bool < integer < float) is higher. */
static alloy_dtype result_type2(const alloy_kernel_tensor *a, const alloy_kernel_tensor *b) {
  if ((a->rank == 0) == (b->rank == 0)) return promote_pair(a->dtype, b->dtype);
  alloy_dtype dim = a->rank ? a->dtype : b->dtype, zero = a->rank ? b->dtype : a->dtype;
  if (is_float(dim)) return dim;
  if (dim == ALLOY_BOOL || is_float(zero)) return promote_pair(dim, zero);
  return dim;
}

/* Element off of t converted to dtype ct as Tensor.to(ct) converts it:
 * integers straight to float32 (or float64), float16/bfloat16 through
 * float32, integers wrapped. Floats come back in *f, the rest in *i. */
static void isin_load(const alloy_kernel_tensor *t, int64_t off, alloy_dtype ct, double *f, int64_t *i) {
  if (!is_float(ct)) {
    int64_t v = is_float(t->dtype) ? (int64_t)ref_load_f(t->data, t->dtype, off) : ref_load_i(t->data, t->dtype, off);
    switch (ct) {
      case ALLOY_BOOL: *i = v != 0; break;
      case ALLOY_U8: *i = (uint8_t)v; break;
      case ALLOY_I8: *i = (int8_t)(uint8_t)v; break;
      case ALLOY_I16: *i = (int16_t)(uint16_t)v; break;
      case ALLOY_I32: *i = (int32_t)(uint32_t)v; break;
      default: *i = v; break;
    }
    return;
  }
  double v;
  if (is_float(t->dtype)) v = ref_load_f(t->data, t->dtype, off);
  else {
    int64_t iv = ref_load_i(t->data, t->dtype, off);
    v = ct == ALLOY_F64 ? (double)iv : (double)(float)iv;
  }
  if (ct != ALLOY_F64) {
    unsigned char buf[8];
    ref_store_f(buf, ct, 0, (float)v);
    v = ref_load_f(buf, ct, 0);
  }
  *f = v;
}

/* One element of isin's sorting path: its value in the common dtype and
 * its place in cat(elements, test_elements). */
typedef struct isin_item {
  double f;
  int64_t i, pos;
} isin_item;

/* Ascending, NaN last, ties by position: a stable sort (PyTorch's sort puts
 * NaN above everything). */
static int cmp_item_f(const void *a, const void *b) {
  const isin_item *x = a, *y = b;
  bool xn = isnan(x->f), yn = isnan(y->f);
  if (xn != yn) return xn ? 1 : -1;
  if (!xn && x->f != y->f) return x->f < y->f ? -1 : 1;
  return (x->pos > y->pos) - (x->pos < y->pos);
}
static int cmp_item_i(const void *a, const void *b) {
  const isin_item *x = a, *y = b;
  if (x->i != y->i) return x->i < y->i ? -1 : 1;
  return (x->pos > y->pos) - (x->pos < y->pos);
}

/* isin(elements, test_elements, assume_unique, invert) as PyTorch's CPU
 * kernel (aten/src/ATen/native/TensorCompare.cpp) decides: with fewer than
 * 10 * n^0.145 test elements it compares each element with every test
 * element in torch.result_type of the two (a zero-dim operand counts
 * less); otherwise it concatenates both flattened, in torch.promote_types
 * of the two, and sorts. Without assume_unique both paths answer "equals
 * some test element" (here: test_elements sorted once, a binary search per
 * element, O((n + m) log m)); with it the sorting path marks an element
 * whose stable-sorted successor equals it, which differs from that when
 * elements repeat. NaN is in nothing; -0.0 equals 0.0. */
static int k_isin(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *e = ref_tensor(c, "elements"), *t = ref_tensor(c, "test_elements"),
                            *out = &c->outputs[0];
  bool invert = false, unique = false;
  ref_bool(c, "invert", &invert);
  ref_bool(c, "assume_unique", &unique);
  int64_t idx[MAXR] = {0}, n = ref_numel(e), m = ref_numel(t);
  if (n == 0) return 0;
  bool sorting = m >= (int64_t)(10.0f * pow((double)n, 0.145));
  alloy_dtype ct = sorting ? promote_pair(e->dtype, t->dtype) : result_type2(e, t);
  bool fl = is_float(ct);
  int64_t total = sorting && unique ? n + m : m, kept = 0;
  isin_item *v = malloc(sizeof *v * (size_t)(total ? total : 1));
  if (!v) return ref_fail(c, "out of memory");
  if (sorting && unique) {
    /* cat(elements, test_elements), stable-sorted; an element is in when
     * the next one equals it, the last one never (ne for invert, and the
     * last one then always) */
    for (int64_t k = 0; k < n; k++, ref_next_index(idx, e->sizes, e->rank)) {
      isin_load(e, offset_of(e, idx), ct, &v[k].f, &v[k].i);
      v[k].pos = k;
    }
    for (int64_t j = 0; j < m; j++) {
      isin_load(t, ref_linear_offset(t, j), ct, &v[n + j].f, &v[n + j].i);
      v[n + j].pos = n + j;
    }
    qsort(v, (size_t)total, sizeof *v, fl ? cmp_item_f : cmp_item_i);
    bool *mask = malloc(sizeof *mask * (size_t)total);
    if (!mask) return free(v), ref_fail(c, "out of memory");
    for (int64_t p = 0; p < total; p++) {
      bool eq = p + 1 < total && (fl ? v[p + 1].f == v[p].f : v[p + 1].i == v[p].i);
      mask[v[p].pos] = p + 1 < total ? eq != invert : invert;
    }
    memset(idx, 0, sizeof idx);
    for (int64_t k = 0; k < n; k++, ref_next_index(idx, e->sizes, e->rank))
      ref_store_i(out->data, out->dtype, offset_of(out, idx), mask[k]);
    free(mask);
    free(v);
    return 0;
  }
  for (int64_t j = 0; j < m; j++) {
    isin_load(t, ref_linear_offset(t, j), ct, &v[kept].f, &v[kept].i);
    v[kept].pos = 0; /* ties need no order here */
    if (!fl || !isnan(v[kept].f)) kept++;
  }
  qsort(v, (size_t)kept, sizeof *v, fl ? cmp_item_f : cmp_item_i);
  for (int64_t k = 0; k < n; k++, ref_next_index(idx, e->sizes, e->rank)) {
    isin_item x = {0, 0, 0};
    isin_load(e, offset_of(e, idx), ct, &x.f, &x.i);
    bool found = (!fl || !isnan(x.f)) &&
                 bsearch(&x, v, (size_t)kept, sizeof *v, fl ? cmp_item_f : cmp_item_i) != NULL;
    ref_store_i(out->data, out->dtype, offset_of(out, idx), found != invert);
  }
  free(v);
  return 0;
}

/* tril_indices / triu_indices(row, col, offset): the (i, j) of the lower
 * (j - i <= offset) or upper (j - i >= offset) triangle, row-major. */
static int tri_indices(const alloy_kernel_call *c, bool upper) {
  const alloy_kernel_tensor *out = &c->outputs[0];
  int64_t rows = 0, cols = 0, offset = 0, n = out->sizes[1], w = 0;
  ref_int(c, "row", &rows);
  ref_int(c, "col", &cols);
  ref_int(c, "offset", &offset);
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++) {
      if (upper ? j - i < offset : j - i > offset) continue;
      if (w >= n) return ref_fail(c, "tri_indices: more elements than the result holds");
      ref_store_i(out->data, out->dtype, w * out->strides[1], i);
      ref_store_i(out->data, out->dtype, out->strides[0] + w * out->strides[1], j);
      w++;
    }
  return w == n ? 0 : ref_fail(c, "tri_indices: fewer elements than the result holds");
}

static int k_tril_indices(const alloy_kernel_call *c) { return tri_indices(c, false); }
static int k_triu_indices(const alloy_kernel_call *c) { return tri_indices(c, true); }

const alloy_kernel ref_kernels_index[] = {
    REF_KERNEL("aten.index.Tensor", k_index),
    REF_KERNEL("aten.index_put.default", k_index_put),
    REF_KERNEL("aten._unsafe_masked_index.default", k_unsafe_masked_index),
    REF_KERNEL("aten._unsafe_masked_index_put_accumulate.default", k_unsafe_masked_index_put_accumulate),
    REF_KERNEL("aten.gather.default", k_gather),
    REF_KERNEL("aten.scatter.src", k_scatter_src),
    REF_KERNEL("aten.scatter.value", k_scatter_value),
    REF_KERNEL("aten.scatter_.value", k_scatter_value),
    REF_KERNEL("aten.scatter.reduce", k_scatter_reduce),
    REF_KERNEL("aten.scatter_add.default", k_scatter_add),
    REF_KERNEL("aten.scatter_reduce.two", k_scatter_reduce),
    REF_KERNEL("aten.index_select.default", k_index_select),
    REF_KERNEL("aten.index_add.default", k_index_add),
    REF_KERNEL("aten.index_copy.default", k_index_copy),
    REF_KERNEL("aten.index_fill.int_Scalar", k_index_fill),
    REF_KERNEL("aten.index_fill.int_Tensor", k_index_fill),
    REF_KERNEL("aten.index_reduce.default", k_index_reduce),
    REF_KERNEL("aten.take.default", k_take),
    REF_KERNEL("aten.put.default", k_put),
    REF_KERNEL("aten.masked_fill.Scalar", k_masked_fill),
    REF_KERNEL("aten.masked_fill.Tensor", k_masked_fill),
    REF_KERNEL("aten.masked_fill_.Scalar", k_masked_fill),
    REF_KERNEL("aten.masked_scatter.default", k_masked_scatter),
    REF_KERNEL("aten.masked_select.default", k_masked_select),
    REF_KERNEL("aten.nonzero.default", k_nonzero),
    REF_KERNEL("aten.argwhere.default", k_nonzero),
    REF_KERNEL("aten.nonzero_numpy.default", k_nonzero_numpy),
    REF_KERNEL("aten.one_hot.default", k_one_hot),
    REF_KERNEL("aten.nonzero_static.default", k_nonzero_static),
    REF_KERNEL("aten.embedding.default", k_embedding),
    REF_KERNEL("aten.embedding_renorm_.default", k_embedding_renorm),
    REF_KERNEL("aten._embedding_bag.default", k_embedding_bag),
    REF_KERNEL("aten._embedding_bag_forward_only.default", k_embedding_bag),
    REF_KERNEL("aten.searchsorted.Tensor", k_searchsorted),
    REF_KERNEL("aten.bucketize.Tensor", k_bucketize),
    REF_KERNEL("aten.isin.Tensor_Tensor", k_isin),
    REF_KERNEL("aten.tril_indices.default", k_tril_indices),
    REF_KERNEL("aten.triu_indices.default", k_triu_indices),
    {NULL, NULL, NULL, NULL},
};
