/*
 * reference_backend/kernels_reduce.c: reference kernels, reduce family:
 * reductions (sum, mean, prod, var, amax, argmax, median, mode, norm, ...),
 * scans (cumsum, cummax, logcumsumexp), the softmax family, sort and topk,
 * histograms, bincount, unique and segment_reduce, and the reduction prims.
 *
 * Almost everything is one engine. An op's input splits into lanes: the
 * elements that make one result (the reduced dims of a reduction, the dim of
 * a scan, sort or softmax). The engine walks the other dims, gathers each
 * lane into a buffer (row-major over the lane's dims, so lane position j is
 * PyTorch's index within the lane) and hands it to a small lane function
 * that fills the output lanes; the engine stores them. Values travel as
 * double (floats) or int64 (integers, bool), converted first to the
 * op's compute dtype where PyTorch converts (dtype=, sum of bool, ...).
 *
 * Accumulation order: sequential in lane index order, in double for floats
 * (float16/bfloat16/float32 as well, rounded once on store) and in wrapping
 * uint64 for integers. Variance is two-pass (mean, then squared deviations).
 * Exceptions, where PyTorch's CPU kernels compute in the tensor's own dtype
 * and the rounding shows: histograms, segment_reduce and allclose round
 * every step to the dtype as PyTorch does.
 *
 * Ties and NaN, following PyTorch's CPU kernels: argmax/argmin/max.dim/
 * min.dim return the first occurrence, a NaN counting as the extreme (the
 * first NaN wins). Sorting is stable and puts NaN above everything
 * (descending: first), so sort, topk and median pick the lowest index among
 * equal values (PyTorch promises this for sort.stable and median; its topk
 * follows std::nth_element and may pick another). kthvalue takes the steps
 * of PyTorch's quickselect, so it picks the same index. mode returns the
 * smallest of the most frequent values and the last index of it; cummax/
 * cummin take the last index among equal values (PyTorch compares >=).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference_backend/ref.h"

#define MAX_DIMS 16 /* ALLOY_MAX_RANK */
#define MAX_OUT 4

static bool is_float(alloy_dtype t) { return alloy_dtype_is_float(t); }

/* v as a tensor of dtype t would hold it (rounding, truncation, wrapping). */
static double round_to(alloy_dtype t, double v) {
  if (t == ALLOY_F64) return v;
  unsigned char buf[8];
  ref_store_f(buf, t, 0, v);
  return ref_load_f(buf, t, 0);
}

static int64_t wrap_to(alloy_dtype t, int64_t v) {
  unsigned char buf[8];
  ref_store_i(buf, t, 0, v);
  return ref_load_i(buf, t, 0);
}

/* A double as int64 without C's undefined behaviour for NaN or range. */
static int64_t f_to_i(double v) {
  if (isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return INT64_MAX;
  if (v <= -9.2233720368547758e18) return INT64_MIN;
  return (int64_t)v;
}

/* The element offset of row-major element `flat` of a strided tensor. */
static int64_t offset_of(int64_t flat, int rank, const int64_t *sizes, const int64_t *strides) {
  int64_t off = 0;
  for (int d = rank - 1; d >= 0; d--) {
    if (sizes[d] == 0) return 0;
    off += (flat % sizes[d]) * strides[d];
    flat /= sizes[d];
  }
  return off;
}

static int64_t flat_offset(const alloy_kernel_tensor *t, int64_t flat) {
  return offset_of(flat, t->rank, t->sizes, t->strides);
}

/* ---- lanes ---------------------------------------------------------------*/

/* A sort entry: the value both ways, and its position in the lane. */
typedef struct entry {
  double f;
  int64_t i, idx;
} entry;

/* A lane of values: f holds them as double, and i exactly as int64 when the
 * compute dtype is an integer or bool (is_int). */
typedef struct lane {
  int64_t n;
  double *f;
  int64_t *i;
  bool is_int;
  entry **scratch; /* n entries for the sorting lane functions, made on use */
} lane;

/* What a lane function needs beyond the lane. */
typedef struct red_params {
  double correction, p; /* var/std; norm order                      */
  int64_t k;            /* kthvalue                                 */
  bool largest;         /* max vs min, topk largest, descending sort */
  bool ignore_nan;      /* nansum, nanmedian                        */
  bool root, with_mean; /* std instead of var; var_mean/std_mean    */
  int flavor;           /* which member of a family (softmax, ...)  */
  bool round_sum;       /* log_softmax: the sum held in sum_dtype   */
  alloy_dtype sum_dtype;
} red_params;

/* Fills the output lanes (their lengths set) from the input lane. */
typedef int (*lane_fn)(const lane *in, lane *out, const red_params *p);

/* Writes position j of an output lane; an output the op does not have is a
 * lane of length 0 and takes nothing. */
static void put_f(lane *o, int64_t j, double v) {
  if (j >= o->n) return;
  if (o->is_int) o->i[j] = f_to_i(v);
  else o->f[j] = v;
}

static void put_i(lane *o, int64_t j, int64_t v) {
  if (j >= o->n) return;
  if (o->is_int) o->i[j] = v;
  else o->f[j] = (double)v;
}

/* Output position j gets input element k, exactly. */
static void put_elem(lane *o, int64_t j, const lane *in, int64_t k) {
  if (in->is_int) put_i(o, j, in->i[k]);
  else put_f(o, j, in->f[k]);
}

static void put_entry(lane *o, int64_t j, const entry *e, bool is_int) {
  if (is_int) put_i(o, j, e->i);
  else put_f(o, j, e->f);
}

/* The lane's values as entries in lane order, in its scratch; NULL when
 * memory runs out. */
static entry *lane_entries(const lane *in) {
  if (!*in->scratch) *in->scratch = malloc(sizeof(entry) * (size_t)(in->n > 0 ? in->n : 1));
  entry *e = *in->scratch;
  for (int64_t j = 0; e && j < in->n; j++) e[j] = (entry){in->f[j], in->is_int ? in->i[j] : 0, j};
  return e;
}

static bool nonzero_at(const lane *in, int64_t j) {
  return in->is_int ? in->i[j] != 0 : in->f[j] != 0.0;
}

/* ---- the engine -----------------------------------------------------------*/

/* An odometer over some dims, tracking an offset per operand. */
typedef struct walker {
  int n, nops;
  int64_t size[MAX_DIMS], idx[MAX_DIMS];
  int64_t stride[1 + MAX_OUT][MAX_DIMS];
  int64_t off[1 + MAX_OUT];
} walker;

static void walk_next(walker *w) {
  for (int d = w->n - 1; d >= 0; d--) {
    for (int k = 0; k < w->nops; k++) w->off[k] += w->stride[k][d];
    if (++w->idx[d] < w->size[d]) return;
    for (int k = 0; k < w->nops; k++) w->off[k] -= w->stride[k][d] * w->size[d];
    w->idx[d] = 0;
  }
}

static int64_t walk_count(const walker *w) {
  int64_t n = 1;
  for (int d = 0; d < w->n; d++) n *= w->size[d];
  return n;
}

/* How an op's input splits into lanes and where the results go. */
typedef struct plan {
  const alloy_kernel_tensor *x;
  alloy_dtype cast; /* the compute dtype lanes are converted to */
  walker outer;     /* operand 0: x; operand 1 + k: output k */
  walker lane;      /* over x's lane dims (operand 0 only) */
  int nout;
  int64_t out_len[MAX_OUT], out_step[MAX_OUT];
} plan;

/* A reduction over the dims in mask: one-element output lanes. The outputs
 * keep the reduced dims (keepdim) exactly when their rank is x's. */
static void plan_reduce(plan *pl, const alloy_kernel_call *c, const alloy_kernel_tensor *x,
                        const bool *mask) {
  memset(pl, 0, sizeof *pl);
  pl->x = x;
  pl->cast = x->dtype;
  pl->nout = c->num_outputs < MAX_OUT ? c->num_outputs : MAX_OUT;
  pl->outer.nops = 1 + pl->nout;
  pl->lane.nops = 1;
  for (int d = 0; d < x->rank; d++) {
    if (mask[d]) {
      pl->lane.size[pl->lane.n] = x->sizes[d];
      pl->lane.stride[0][pl->lane.n++] = x->strides[d];
      continue;
    }
    int o = pl->outer.n++;
    pl->outer.size[o] = x->sizes[d];
    pl->outer.stride[0][o] = x->strides[d];
    for (int k = 0; k < pl->nout; k++) {
      const alloy_kernel_tensor *out = &c->outputs[k];
      int od = out->rank == x->rank ? d : o;
      pl->outer.stride[1 + k][o] = od < out->rank ? out->strides[od] : 0;
    }
  }
  for (int k = 0; k < pl->nout; k++) pl->out_len[k] = 1;
}

/* Lanes along one dim of x (scans, softmax, sort): outputs have x's rank and
 * their lanes run along the same dim (topk's shorter). */
static void plan_dim(plan *pl, const alloy_kernel_call *c, const alloy_kernel_tensor *x, int dim) {
  memset(pl, 0, sizeof *pl);
  pl->x = x;
  pl->cast = x->dtype;
  pl->nout = c->num_outputs < MAX_OUT ? c->num_outputs : MAX_OUT;
  pl->outer.nops = 1 + pl->nout;
  pl->lane.nops = 1;
  for (int k = 0; k < pl->nout; k++) pl->out_len[k] = 1;
  for (int d = 0; d < x->rank; d++) {
    if (d == dim) {
      pl->lane.size[0] = x->sizes[d];
      pl->lane.stride[0][0] = x->strides[d];
      pl->lane.n = 1;
      for (int k = 0; k < pl->nout; k++) {
        pl->out_len[k] = c->outputs[k].sizes[d];
        pl->out_step[k] = c->outputs[k].strides[d];
      }
      continue;
    }
    int o = pl->outer.n++;
    pl->outer.size[o] = x->sizes[d];
    pl->outer.stride[0][o] = x->strides[d];
    for (int k = 0; k < pl->nout; k++) pl->outer.stride[1 + k][o] = c->outputs[k].strides[d];
  }
}

/* Reads the lane at base through lw (pl->lane's walker); a whole lane's
 * steps bring the walker back to where it started. */
static void gather(const plan *pl, walker *lw, int64_t base, lane *in) {
  const alloy_kernel_tensor *x = pl->x;
  bool recast = pl->cast != x->dtype;
  lw->off[0] = base;
  for (int64_t j = 0; j < in->n; j++, walk_next(lw)) {
    if (in->is_int) {
      int64_t v = ref_load_i(x->data, x->dtype, lw->off[0]);
      if (recast) v = wrap_to(pl->cast, v);
      in->i[j] = v;
      in->f[j] = (double)v;
    } else {
      double v = ref_load_f(x->data, x->dtype, lw->off[0]);
      in->f[j] = recast ? round_to(pl->cast, v) : v;
    }
  }
}

static int run_plan(const alloy_kernel_call *c, const plan *pl, lane_fn fn, const red_params *p) {
  entry *scratch = NULL;
  lane in = {.n = walk_count(&pl->lane), .is_int = !is_float(pl->cast), .scratch = &scratch};
  lane out[MAX_OUT] = {{0}};
  int64_t n = in.n > 0 ? in.n : 1;
  in.f = malloc(sizeof *in.f * (size_t)n);
  in.i = in.is_int ? malloc(sizeof *in.i * (size_t)n) : NULL;
  bool ok = in.f && (in.i || !in.is_int);
  for (int k = 0; k < pl->nout; k++) {
    int64_t m = pl->out_len[k] > 0 ? pl->out_len[k] : 1;
    out[k] = (lane){.n = pl->out_len[k], .is_int = !is_float(c->outputs[k].dtype)};
    out[k].f = malloc(sizeof *out[k].f * (size_t)m);
    out[k].i = malloc(sizeof *out[k].i * (size_t)m);
    ok = ok && out[k].f && out[k].i;
  }
  int rc = ok ? 0 : 1;
  walker w = pl->outer, lw = pl->lane;
  for (int64_t t = walk_count(&w); t > 0 && !rc; t--, walk_next(&w)) {
    gather(pl, &lw, w.off[0], &in);
    if ((rc = fn(&in, out, p))) break;
    for (int k = 0; k < pl->nout; k++) {
      const alloy_kernel_tensor *o = &c->outputs[k];
      for (int64_t j = 0; j < out[k].n; j++) {
        int64_t off = w.off[1 + k] + j * pl->out_step[k];
        if (out[k].is_int) ref_store_i(o->data, o->dtype, off, out[k].i[j]);
        else ref_store_f(o->data, o->dtype, off, out[k].f[j]);
      }
    }
  }
  free(in.f);
  free(in.i);
  free(scratch);
  for (int k = 0; k < pl->nout; k++) {
    free(out[k].f);
    free(out[k].i);
  }
  return rc;
}

/* ---- reading dims ---------------------------------------------------------*/

typedef enum dims_kind {
  DIMS_ALL,  /* no dim argument                               */
  DIMS_LIST, /* int[]?: None and [] reduce every dim          */
  DIMS_ONE,  /* int                                           */
  DIMS_OPT,  /* int?: None reduces every dim                  */
  DIMS_PRIM, /* prims' int[]?: None every dim, [] none        */
} dims_kind;

/* A dim wrapped into [0, rank); a 0-dim tensor takes 0 and -1. */
static int wrap_dim(int64_t d, int rank, int *out) {
  int r = rank > 0 ? rank : 1;
  if (d < -r || d >= r) return 1;
  *out = (int)(d < 0 ? d + r : d);
  return 0;
}

static int make_mask(const alloy_kernel_call *c, const alloy_kernel_tensor *x, const char *name,
                     dims_kind kind, bool *mask) {
  int64_t dims[MAX_DIMS];
  int n = 0;
  if (kind == DIMS_LIST || kind == DIMS_PRIM) {
    n = ref_ints(c, name, dims, MAX_DIMS);
    if (kind == DIMS_LIST && n == 0) n = -1;
  } else if (kind == DIMS_ONE || kind == DIMS_OPT) {
    n = ref_int(c, name, &dims[0]) ? 1 : -1;
    if (n < 0 && kind == DIMS_ONE) return 1;
  } else {
    n = -1;
  }
  for (int d = 0; d < MAX_DIMS; d++) mask[d] = n < 0;
  for (int k = 0; k < n; k++) {
    int w;
    if (wrap_dim(dims[k], x->rank, &w)) return 1;
    if (x->rank) mask[w] = true;
  }
  return 0;
}

/* The int argument name as a dim of x. */
static int dim_arg(const alloy_kernel_call *c, const alloy_kernel_tensor *x, const char *name,
                   int *dim) {
  int64_t d;
  return !ref_int(c, name, &d) || wrap_dim(d, x->rank, dim);
}

/* Casting: arithmetic reductions convert their input to the result dtype
 * first (sum of bool is an int64 sum, dtype= converts); selections keep the
 * values as they are. */
enum { KEEP = 0, CAST = 1 };

static int reduce_op(const alloy_kernel_call *c, const char *dims, dims_kind kind, int cast,
                     lane_fn fn, const red_params *p) {
  const alloy_kernel_tensor *x = &c->inputs[0];
  bool mask[MAX_DIMS];
  if (c->num_inputs < 1 || c->num_outputs < 1 || make_mask(c, x, dims, kind, mask)) return 1;
  plan pl;
  plan_reduce(&pl, c, x, mask);
  if (cast) pl.cast = c->outputs[0].dtype;
  return run_plan(c, &pl, fn, p);
}

static int dim_op(const alloy_kernel_call *c, const char *dim_name, int cast, lane_fn fn,
                  const red_params *p) {
  const alloy_kernel_tensor *x = &c->inputs[0];
  int dim;
  if (c->num_inputs < 1 || c->num_outputs < 1 || dim_arg(c, x, dim_name, &dim)) return 1;
  plan pl;
  plan_dim(&pl, c, x, dim);
  if (cast) pl.cast = c->outputs[0].dtype;
  return run_plan(c, &pl, fn, p);
}

/* ---- lane functions: reductions --------------------------------------------*/

static int l_sum(const lane *in, lane *out, const red_params *p) {
  if (in->is_int) {
    uint64_t s = 0;
    for (int64_t j = 0; j < in->n; j++) s += (uint64_t)in->i[j];
    put_i(&out[0], 0, (int64_t)s);
  } else {
    double s = 0.0;
    for (int64_t j = 0; j < in->n; j++)
      if (!(p->ignore_nan && isnan(in->f[j]))) s += in->f[j];
    put_f(&out[0], 0, s);
  }
  return 0;
}

static int l_prod(const lane *in, lane *out, const red_params *p) {
  (void)p;
  if (in->is_int) {
    uint64_t s = 1;
    for (int64_t j = 0; j < in->n; j++) s *= (uint64_t)in->i[j];
    put_i(&out[0], 0, (int64_t)s);
  } else {
    double s = 1.0;
    for (int64_t j = 0; j < in->n; j++) s *= in->f[j];
    put_f(&out[0], 0, s);
  }
  return 0;
}

static int l_xor_sum(const lane *in, lane *out, const red_params *p) {
  (void)p;
  uint64_t s = 0;
  for (int64_t j = 0; j < in->n; j++) s ^= (uint64_t)(in->is_int ? in->i[j] : f_to_i(in->f[j]));
  put_i(&out[0], 0, (int64_t)s);
  return 0;
}

static double lane_mean(const lane *in) {
  double s = 0.0;
  for (int64_t j = 0; j < in->n; j++) s += in->f[j];
  return s / (double)in->n; /* NaN for an empty lane, as PyTorch */
}

static int l_mean(const lane *in, lane *out, const red_params *p) {
  (void)p;
  put_f(&out[0], 0, lane_mean(in));
  return 0;
}

/* var = sum((x - mean)^2) / max(0, n - correction): 0/0 is NaN, x/0 inf. */
static int l_var(const lane *in, lane *out, const red_params *p) {
  double mean = lane_mean(in), m2 = 0.0;
  for (int64_t j = 0; j < in->n; j++) m2 += (in->f[j] - mean) * (in->f[j] - mean);
  double dof = (double)in->n - p->correction;
  double v = m2 / (dof > 0.0 ? dof : 0.0);
  put_f(&out[0], 0, p->root ? sqrt(v) : v);
  if (p->with_mean) put_f(&out[1], 0, mean);
  return 0;
}

/* The position of the first maximum (largest) or minimum; a NaN beats
 * everything and the first one wins. */
static int64_t extreme_at(const lane *in, bool largest) {
  int64_t best = 0;
  for (int64_t j = 1; j < in->n; j++) {
    if (in->is_int) {
      if (largest ? in->i[j] > in->i[best] : in->i[j] < in->i[best]) best = j;
      continue;
    }
    double b = in->f[best], v = in->f[j];
    if (isnan(b)) break;
    if (isnan(v) || (largest ? v > b : v < b)) best = j;
  }
  return best;
}

static int l_extreme(const lane *in, lane *out, const red_params *p) {
  if (in->n < 1) return 1; /* no identity: shape inference rejects it */
  put_elem(&out[0], 0, in, extreme_at(in, p->largest));
  return 0;
}

static int l_extreme_dim(const lane *in, lane *out, const red_params *p) {
  if (in->n < 1) return 1;
  int64_t at = extreme_at(in, p->largest);
  put_elem(&out[0], 0, in, at);
  put_i(&out[1], 0, at);
  return 0;
}

static int l_arg_extreme(const lane *in, lane *out, const red_params *p) {
  if (in->n < 1) return 1;
  put_i(&out[0], 0, extreme_at(in, p->largest));
  return 0;
}

static int l_aminmax(const lane *in, lane *out, const red_params *p) {
  (void)p;
  if (in->n < 1) return 1;
  put_elem(&out[0], 0, in, extreme_at(in, false));
  put_elem(&out[1], 0, in, extreme_at(in, true));
  return 0;
}

enum { TRUTH_ANY, TRUTH_ALL, TRUTH_COUNT };

static int l_truth(const lane *in, lane *out, const red_params *p) {
  int64_t count = 0;
  for (int64_t j = 0; j < in->n; j++) count += nonzero_at(in, j);
  int64_t r = p->flavor == TRUTH_ANY ? count > 0 : p->flavor == TRUTH_ALL ? count == in->n : count;
  put_i(&out[0], 0, r);
  return 0;
}

/* log(sum(exp(x - m))) + m with m the max, taken as 0 when infinite. */
static int l_logsumexp(const lane *in, lane *out, const red_params *p) {
  (void)p;
  double m = -INFINITY;
  for (int64_t j = 0; j < in->n; j++) {
    if (isnan(in->f[j])) m = NAN;
    if (!isnan(m) && in->f[j] > m) m = in->f[j];
  }
  if (isinf(m)) m = 0.0;
  double s = 0.0;
  for (int64_t j = 0; j < in->n; j++) s += exp(in->f[j] - m);
  put_f(&out[0], 0, log(s) + m);
  return 0;
}

static int l_norm(const lane *in, lane *out, const red_params *p) {
  double ord = p->p, r = 0.0;
  if (ord == 0.0) {
    for (int64_t j = 0; j < in->n; j++) r += in->f[j] != 0.0;
  } else if (isinf(ord)) {
    r = in->n ? fabs(in->f[0]) : 0.0;
    for (int64_t j = 0; j < in->n; j++) {
      double a = fabs(in->f[j]);
      if (isnan(a) || (ord > 0 ? a > r : a < r)) r = a;
      if (isnan(r)) break;
    }
  } else {
    for (int64_t j = 0; j < in->n; j++) {
      double a = fabs(in->f[j]);
      r += ord == 1.0 ? a : ord == 2.0 ? a * a : pow(a, ord);
    }
    r = ord == 1.0 ? r : ord == 2.0 ? sqrt(r) : pow(r, 1.0 / ord);
  }
  put_f(&out[0], 0, r);
  return 0;
}

/* ---- sorting ---------------------------------------------------------------*/

/* NaN above everything; equal values keep their lane order (stable). */
static int cmp_value(double a, double b) {
  bool na = isnan(a), nb = isnan(b);
  if (na || nb) return (int)na - (int)nb;
  return (a > b) - (a < b);
}

static int cmp_idx(const entry *a, const entry *b) { return (a->idx > b->idx) - (a->idx < b->idx); }

static int cmp_f_asc(const void *pa, const void *pb) {
  const entry *a = pa, *b = pb;
  int r = cmp_value(a->f, b->f);
  return r ? r : cmp_idx(a, b);
}
static int cmp_f_desc(const void *pa, const void *pb) {
  const entry *a = pa, *b = pb;
  int r = cmp_value(b->f, a->f);
  return r ? r : cmp_idx(a, b);
}
static int cmp_i_asc(const void *pa, const void *pb) {
  const entry *a = pa, *b = pb;
  int r = (a->i > b->i) - (a->i < b->i);
  return r ? r : cmp_idx(a, b);
}
static int cmp_i_desc(const void *pa, const void *pb) {
  const entry *a = pa, *b = pb;
  int r = (b->i > a->i) - (b->i < a->i);
  return r ? r : cmp_idx(a, b);
}

/* The lane sorted, as entries (NULL when memory runs out). */
static entry *sort_lane(const lane *in, bool descending) {
  static int (*const cmps[2][2])(const void *, const void *) = {
      {cmp_f_asc, cmp_f_desc}, {cmp_i_asc, cmp_i_desc}};
  entry *e = lane_entries(in);
  if (e && in->n > 1) qsort(e, (size_t)in->n, sizeof *e, cmps[in->is_int][descending]);
  return e;
}

static int l_sort(const lane *in, lane *out, const red_params *p) {
  entry *e = sort_lane(in, p->largest);
  if (!e) return 1;
  for (int64_t j = 0; j < out[0].n && j < in->n; j++) {
    put_entry(&out[0], j, &e[j], in->is_int);
    put_i(&out[1], j, e[j].idx);
  }
  return 0;
}

/* Output 0 gets entry pos's value, output 1 (when there) its index. */
static int put_sorted_at(const entry *e, const lane *in, lane *out, int64_t pos) {
  if (!e || pos < 0 || pos >= in->n) return 1;
  put_entry(&out[0], 0, &e[pos], in->is_int);
  put_i(&out[1], 0, e[pos].idx);
  return 0;
}

static bool gt_or_nan(const entry *a, const entry *b, bool is_int) {
  if (is_int) return a->i > b->i;
  return (isnan(a->f) && !isnan(b->f)) || a->f > b->f;
}

static void swap_entries(entry *e, int64_t a, int64_t b) {
  entry t = e[a];
  e[a] = e[b];
  e[b] = t;
}

/* Puts the k-th smallest entry (from 0) at e[k] by the median-of-three
 * quickselect of PyTorch's CPU kthvalue (Sedgewick's partitioning): taking
 * the same steps, it picks the same index among equal values. */
static void quickselect(entry *e, int64_t n, int64_t k, bool is_int) {
  int64_t lo = 0, hi = n - 1;
  while (hi > lo) {
    if (hi == lo + 1) {
      if (gt_or_nan(&e[lo], &e[hi], is_int)) swap_entries(e, lo, hi);
      return;
    }
    /* median of e[lo], e[mid], e[hi] to e[lo]; the others bracket it */
    swap_entries(e, lo + (hi - lo) / 2, lo + 1);
    if (gt_or_nan(&e[lo + 1], &e[hi], is_int)) swap_entries(e, lo + 1, hi);
    if (gt_or_nan(&e[lo], &e[hi], is_int)) swap_entries(e, lo, hi);
    if (gt_or_nan(&e[lo + 1], &e[lo], is_int)) swap_entries(e, lo + 1, lo);
    entry pivot = e[lo];
    int64_t i = lo + 1, j = hi;
    for (;;) {
      do i++;
      while (gt_or_nan(&pivot, &e[i], is_int));
      do j--;
      while (gt_or_nan(&e[j], &pivot, is_int));
      if (j < i) break;
      swap_entries(e, i, j);
    }
    swap_entries(e, lo, j);
    if (j <= k) lo = i;
    if (j >= k) hi = j - 1;
  }
}

static int l_kthvalue(const lane *in, lane *out, const red_params *p) {
  entry *e = lane_entries(in);
  if (!e || p->k < 1 || p->k > in->n) return 1;
  quickselect(e, in->n, p->k - 1, in->is_int);
  return put_sorted_at(e, in, out, p->k - 1);
}

/* The lower median; median returns the first NaN when there is one,
 * nanmedian the median of the other values (NaN when all are). */
static int l_median(const lane *in, lane *out, const red_params *p) {
  entry *e = in->n > 0 ? sort_lane(in, false) : NULL;
  int64_t nans = 0;
  for (int64_t j = 0; !in->is_int && j < in->n; j++) nans += isnan(in->f[j]);
  if (nans && !p->ignore_nan) return put_sorted_at(e, in, out, in->n - nans);
  int64_t m = p->ignore_nan ? in->n - nans : in->n;
  return put_sorted_at(e, in, out, m > 0 ? (m - 1) / 2 : 0);
}

static bool entries_equal(const entry *a, const entry *b, bool is_int) {
  return is_int ? a->i == b->i : a->f == b->f;
}

/* The most frequent value, the smallest of equally frequent ones, with the
 * last index of it (PyTorch scans the sorted lane keeping strictly more
 * frequent runs and reports the run's last index). */
static int l_mode(const lane *in, lane *out, const red_params *p) {
  (void)p;
  entry *e = in->n > 0 ? sort_lane(in, false) : NULL;
  int64_t best = 0, best_freq = 0, run = 0;
  for (int64_t j = 0; e && j < in->n; j++) {
    run++;
    if (j + 1 == in->n || !entries_equal(&e[j], &e[j + 1], in->is_int)) {
      if (run > best_freq) best_freq = run, best = j;
      run = 0;
    }
  }
  return put_sorted_at(e, in, out, best);
}

/* ---- lane functions: scans and softmax --------------------------------------*/

static int l_cumsum(const lane *in, lane *out, const red_params *p) {
  (void)p;
  uint64_t si = 0;
  double sf = 0.0;
  for (int64_t j = 0; j < in->n; j++) {
    if (in->is_int) put_i(&out[0], j, (int64_t)(si += (uint64_t)in->i[j]));
    else put_f(&out[0], j, sf += in->f[j]);
  }
  return 0;
}

static int l_cumprod(const lane *in, lane *out, const red_params *p) {
  (void)p;
  uint64_t si = 1;
  double sf = 1.0;
  for (int64_t j = 0; j < in->n; j++) {
    if (in->is_int) put_i(&out[0], j, (int64_t)(si *= (uint64_t)in->i[j]));
    else put_f(&out[0], j, sf *= in->f[j]);
  }
  return 0;
}

/* log(exp(x) + exp(acc)) as PyTorch's _log_add_exp_helper(x, acc): a NaN
 * propagates, two equal infinities give x. */
static double log_add_exp(double x, double acc) {
  double lo = isnan(acc) ? acc : (acc < x ? acc : x);
  double hi = isnan(acc) ? acc : (x < acc ? acc : x);
  if (lo != hi || isfinite(lo)) return log1p(exp(lo - hi)) + hi;
  return x;
}

static int l_logcumsumexp(const lane *in, lane *out, const red_params *p) {
  (void)p;
  double acc = -INFINITY;
  for (int64_t j = 0; j < in->n; j++) put_f(&out[0], j, acc = log_add_exp(in->f[j], acc));
  return 0;
}

/* cummax/cummin: a later equal value takes over (>=), a NaN sticks. */
static int l_cum_extreme(const lane *in, lane *out, const red_params *p) {
  int64_t at = 0;
  for (int64_t j = 0; j < in->n; j++) {
    bool take;
    if (in->is_int) {
      take = p->largest ? in->i[j] >= in->i[at] : in->i[j] <= in->i[at];
    } else {
      double x = in->f[j], cur = in->f[at];
      take = isnan(x) || (!isnan(cur) && (p->largest ? x >= cur : x <= cur));
    }
    if (take) at = j;
    put_elem(&out[0], j, in, at);
    put_i(&out[1], j, at);
  }
  return 0;
}

enum { SOFTMAX, LOG_SOFTMAX, SAFE_SOFTMAX };

/* exp(x - max) / sum, or x - max - log(sum). A lane of -inf gives NaN, but
 * 0 for _safe_softmax; a NaN anywhere makes the whole lane NaN. */
static int l_softmax(const lane *in, lane *out, const red_params *p) {
  double m = -INFINITY;
  bool all_neg_inf = true;
  for (int64_t j = 0; j < in->n; j++) {
    double x = in->f[j];
    if (isnan(x) || isnan(m)) m = NAN;
    else if (x > m) m = x;
    all_neg_inf &= x == -INFINITY;
  }
  double s = 0.0;
  for (int64_t j = 0; j < in->n; j++) s += exp(in->f[j] - m);
  if (p->round_sum) s = round_to(p->sum_dtype, s);
  for (int64_t j = 0; j < in->n; j++) {
    double x = in->f[j] - m;
    double r = p->flavor == LOG_SOFTMAX ? x - log(s) : exp(x) / s;
    if (p->flavor == SAFE_SOFTMAX && all_neg_inf) r = 0.0;
    put_f(&out[0], j, r);
  }
  return 0;
}

/* ---- kernels: reductions ------------------------------------------------------*/

static const red_params MAX_P = {.largest = true}, MIN_P = {.largest = false};
static const red_params NONE_P = {0};

static int k_sum(const alloy_kernel_call *c) {
  return reduce_op(c, NULL, DIMS_ALL, CAST, l_sum, &NONE_P);
}
static int k_sum_dim(const alloy_kernel_call *c) {
  return reduce_op(c, "dim", DIMS_LIST, CAST, l_sum, &NONE_P);
}
static int k_nansum(const alloy_kernel_call *c) {
  red_params p = {.ignore_nan = true};
  return reduce_op(c, "dim", DIMS_LIST, CAST, l_sum, &p);
}
static int k_prod(const alloy_kernel_call *c) {
  return reduce_op(c, NULL, DIMS_ALL, CAST, l_prod, &NONE_P);
}
static int k_prod_dim(const alloy_kernel_call *c) {
  return reduce_op(c, "dim", DIMS_ONE, CAST, l_prod, &NONE_P);
}
static int k_mean(const alloy_kernel_call *c) {
  return reduce_op(c, NULL, DIMS_ALL, CAST, l_mean, &NONE_P);
}
static int k_mean_dim(const alloy_kernel_call *c) {
  return reduce_op(c, "dim", DIMS_LIST, CAST, l_mean, &NONE_P);
}
static int k_amax(const alloy_kernel_call *c) {
  return reduce_op(c, "dim", DIMS_LIST, KEEP, l_extreme, &MAX_P);
}
static int k_amin(const alloy_kernel_call *c) {
  return reduce_op(c, "dim", DIMS_LIST, KEEP, l_extreme, &MIN_P);
}
static int k_max(const alloy_kernel_call *c) {
  return reduce_op(c, NULL, DIMS_ALL, KEEP, l_extreme, &MAX_P);
}
static int k_min(const alloy_kernel_call *c) {
  return reduce_op(c, NULL, DIMS_ALL, KEEP, l_extreme, &MIN_P);
}
static int k_max_dim(const alloy_kernel_call *c) {
  return reduce_op(c, "dim", DIMS_ONE, KEEP, l_extreme_dim, &MAX_P);
}
static int k_min_dim(const alloy_kernel_call *c) {
  return reduce_op(c, "dim", DIMS_ONE, KEEP, l_extreme_dim, &MIN_P);
}
static int k_argmax(const alloy_kernel_call *c) {
  return reduce_op(c, "dim", DIMS_OPT, KEEP, l_arg_extreme, &MAX_P);
}
static int k_argmin(const alloy_kernel_call *c) {
  return reduce_op(c, "dim", DIMS_OPT, KEEP, l_arg_extreme, &MIN_P);
}
static int k_aminmax(const alloy_kernel_call *c) {
  return reduce_op(c, "dim", DIMS_OPT, KEEP, l_aminmax, &NONE_P);
}

static const red_params ANY_P = {.flavor = TRUTH_ANY}, ALL_P = {.flavor = TRUTH_ALL},
                        COUNT_P = {.flavor = TRUTH_COUNT};
static int k_any(const alloy_kernel_call *c) {
  return reduce_op(c, NULL, DIMS_ALL, KEEP, l_truth, &ANY_P);
}
static int k_any_dim(const alloy_kernel_call *c) {
  return reduce_op(c, "dim", DIMS_ONE, KEEP, l_truth, &ANY_P);
}
static int k_any_dims(const alloy_kernel_call *c) {
  return reduce_op(c, "dim", DIMS_LIST, KEEP, l_truth, &ANY_P);
}
static int k_all(const alloy_kernel_call *c) {
  return reduce_op(c, NULL, DIMS_ALL, KEEP, l_truth, &ALL_P);
}
static int k_all_dim(const alloy_kernel_call *c) {
  return reduce_op(c, "dim", DIMS_ONE, KEEP, l_truth, &ALL_P);
}
static int k_all_dims(const alloy_kernel_call *c) {
  return reduce_op(c, "dim", DIMS_LIST, KEEP, l_truth, &ALL_P);
}
static int k_count_nonzero(const alloy_kernel_call *c) {
  return reduce_op(c, "dim", DIMS_OPT, KEEP, l_truth, &COUNT_P);
}
static int k_count_nonzero_dims(const alloy_kernel_call *c) {
  return reduce_op(c, "dim", DIMS_LIST, KEEP, l_truth, &COUNT_P);
}

/* var.dim(unbiased) and the .correction overloads (None means 1). */
static int var_op(const alloy_kernel_call *c, bool root, bool with_mean) {
  red_params p = {.correction = 1.0, .root = root, .with_mean = with_mean};
  bool unbiased = true;
  if (ref_bool(c, "unbiased", &unbiased)) p.correction = unbiased ? 1.0 : 0.0;
  else ref_float(c, "correction", &p.correction);
  return reduce_op(c, "dim", DIMS_LIST, CAST, l_var, &p);
}
static int k_var(const alloy_kernel_call *c) { return var_op(c, false, false); }
static int k_std(const alloy_kernel_call *c) { return var_op(c, true, false); }
static int k_var_mean(const alloy_kernel_call *c) { return var_op(c, false, true); }
static int k_std_mean(const alloy_kernel_call *c) { return var_op(c, true, true); }

static int k_logsumexp(const alloy_kernel_call *c) {
  return reduce_op(c, "dim", DIMS_LIST, CAST, l_logsumexp, &NONE_P);
}

static int k_norm(const alloy_kernel_call *c) {
  red_params p = {.p = 2.0};
  ref_float(c, "p", &p.p);
  return reduce_op(c, "dim", DIMS_LIST, CAST, l_norm, &p);
}

static int k_median(const alloy_kernel_call *c) {
  return reduce_op(c, NULL, DIMS_ALL, KEEP, l_median, &NONE_P);
}
static int k_median_dim(const alloy_kernel_call *c) {
  return reduce_op(c, "dim", DIMS_ONE, KEEP, l_median, &NONE_P);
}
static const red_params NAN_P = {.ignore_nan = true};
static int k_nanmedian(const alloy_kernel_call *c) {
  return reduce_op(c, NULL, DIMS_ALL, KEEP, l_median, &NAN_P);
}
static int k_nanmedian_dim(const alloy_kernel_call *c) {
  return reduce_op(c, "dim", DIMS_ONE, KEEP, l_median, &NAN_P);
}
static int k_mode(const alloy_kernel_call *c) {
  return reduce_op(c, "dim", DIMS_ONE, KEEP, l_mode, &NONE_P);
}

static int k_kthvalue(const alloy_kernel_call *c) {
  red_params p = {0};
  if (!ref_int(c, "k", &p.k)) return 1;
  return reduce_op(c, "dim", DIMS_ONE, KEEP, l_kthvalue, &p);
}

/* trace: the sum over the diagonal, seen as a 1-d view of the matrix. */
static int k_trace(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *x = &c->inputs[0];
  if (x->rank != 2) return 1;
  int64_t n = x->sizes[0] < x->sizes[1] ? x->sizes[0] : x->sizes[1];
  int64_t step = x->strides[0] + x->strides[1];
  alloy_kernel_tensor diag = {x->data, x->dtype, 1, &n, &step};
  bool mask[MAX_DIMS] = {true};
  plan pl;
  plan_reduce(&pl, c, &diag, mask);
  pl.cast = c->outputs[0].dtype;
  return run_plan(c, &pl, l_sum, &NONE_P);
}

/* The broadcast shape of a and b, or -1 when they do not broadcast. */
static int broadcast_shape(const alloy_kernel_tensor *a, const alloy_kernel_tensor *b,
                           int64_t *sizes) {
  int r = a->rank > b->rank ? a->rank : b->rank;
  if (r > MAX_DIMS) return -1;
  for (int d = 0; d < r; d++) {
    int da = d - (r - a->rank), db = d - (r - b->rank);
    int64_t sa = da >= 0 ? a->sizes[da] : 1, sb = db >= 0 ? b->sizes[db] : 1;
    if (sa != sb && sa != 1 && sb != 1) return -1;
    sizes[d] = sa == 1 ? sb : sa;
  }
  return r;
}

/* dist(self, other, p) = norm(self - other, p), the difference rounded to
 * the result dtype as PyTorch's subtraction would. */
static int k_dist(const alloy_kernel_call *c) {
  ref_scalar_tensor s0, s1;
  const alloy_kernel_tensor *ins[2] = {ref_operand(c, "self", &s0), ref_operand(c, "other", &s1)};
  if (!ins[0] || !ins[1]) return 1;
  int64_t sizes[MAX_DIMS], strides[MAX_DIMS], n = 1;
  int r = broadcast_shape(ins[0], ins[1], sizes);
  if (r < 0) return 1;
  for (int d = r - 1; d >= 0; d--) strides[d] = n, n *= sizes[d];
  double *diff = malloc(sizeof *diff * (size_t)(n > 0 ? n : 1));
  if (!diff) return 1;
  alloy_kernel_tensor t = {diff, ALLOY_F64, r, sizes, strides};
  alloy_dtype rt = c->outputs[0].dtype;
  ref_iter it;
  ref_iter_init(&it, &t, ins, 2);
  while (ref_iter_next(&it))
    diff[it.offset[0]] = round_to(rt, ref_load_f(ins[0]->data, ins[0]->dtype, it.offset[1]) -
                                         ref_load_f(ins[1]->data, ins[1]->dtype, it.offset[2]));
  red_params p = {.p = 2.0};
  ref_float(c, "p", &p.p);
  bool mask[MAX_DIMS];
  for (int d = 0; d < MAX_DIMS; d++) mask[d] = true;
  plan pl;
  plan_reduce(&pl, c, &t, mask);
  int rc = run_plan(c, &pl, l_norm, &p);
  free(diff);
  return rc;
}

/* ---- kernels: prims -------------------------------------------------------------*/

static int k_prim_sum(const alloy_kernel_call *c) {
  return reduce_op(c, "dims", DIMS_PRIM, CAST, l_sum, &NONE_P);
}
static int k_prim_prod(const alloy_kernel_call *c) {
  return reduce_op(c, "dims", DIMS_PRIM, CAST, l_prod, &NONE_P);
}
static int k_prim_amax(const alloy_kernel_call *c) {
  return reduce_op(c, "dims", DIMS_PRIM, CAST, l_extreme, &MAX_P);
}
static int k_prim_amin(const alloy_kernel_call *c) {
  return reduce_op(c, "dims", DIMS_PRIM, CAST, l_extreme, &MIN_P);
}
static int k_prim_xor_sum(const alloy_kernel_call *c) {
  return reduce_op(c, "dims", DIMS_PRIM, CAST, l_xor_sum, &NONE_P);
}
static int k_prim_var(const alloy_kernel_call *c) {
  red_params p = {.correction = 1.0};
  ref_float(c, "correction", &p.correction);
  return reduce_op(c, "dims", DIMS_PRIM, CAST, l_var, &p);
}

/* ---- kernels: scans, softmax, sort -------------------------------------------*/

static int k_cumsum(const alloy_kernel_call *c) {
  return dim_op(c, "dim", CAST, l_cumsum, &NONE_P);
}
static int k_cumprod(const alloy_kernel_call *c) {
  return dim_op(c, "dim", CAST, l_cumprod, &NONE_P);
}
static int k_logcumsumexp(const alloy_kernel_call *c) {
  return dim_op(c, "dim", CAST, l_logcumsumexp, &NONE_P);
}
static int k_cummax(const alloy_kernel_call *c) {
  return dim_op(c, "dim", KEEP, l_cum_extreme, &MAX_P);
}
static int k_cummin(const alloy_kernel_call *c) {
  return dim_op(c, "dim", KEEP, l_cum_extreme, &MIN_P);
}

static const red_params SOFTMAX_P = {.flavor = SOFTMAX}, LOG_SOFTMAX_P = {.flavor = LOG_SOFTMAX},
                        SAFE_SOFTMAX_P = {.flavor = SAFE_SOFTMAX};
static int k_softmax(const alloy_kernel_call *c) {
  return dim_op(c, "dim", CAST, l_softmax, &SOFTMAX_P);
}
/* PyTorch's float16/bfloat16 log_softmax over the last dim keeps the sum
 * of exponentials in the tensor's dtype before its log: a dominant element
 * then comes out exactly 0. */
static int k_log_softmax(const alloy_kernel_call *c) {
  red_params p = LOG_SOFTMAX_P;
  const alloy_kernel_tensor *x = &c->inputs[0];
  alloy_dtype t = c->outputs[0].dtype;
  int64_t dim = -1;
  ref_int(c, "dim", &dim);
  p.round_sum = (t == ALLOY_F16 || t == ALLOY_BF16) && x->dtype == t &&
                (x->rank <= 1 || dim == -1 || dim == x->rank - 1);
  p.sum_dtype = t;
  return dim_op(c, "dim", CAST, l_softmax, &p);
}
static int k_safe_softmax(const alloy_kernel_call *c) {
  return dim_op(c, "dim", CAST, l_softmax, &SAFE_SOFTMAX_P);
}

/* sort and sort.stable: always stable, which sort.default allows. */
static int k_sort(const alloy_kernel_call *c) {
  red_params p = {0};
  ref_bool(c, "descending", &p.largest);
  return dim_op(c, "dim", KEEP, l_sort, &p);
}

/* topk: the first k of the sorted lane (the output lane's length is k);
 * sorted=False may return any order, so sorted it is. */
static int k_topk(const alloy_kernel_call *c) {
  red_params p = {.largest = true};
  ref_bool(c, "largest", &p.largest);
  return dim_op(c, "dim", KEEP, l_sort, &p);
}

/* ---- equal, allclose --------------------------------------------------------*/

static bool same_shape(const alloy_kernel_tensor *a, const alloy_kernel_tensor *b) {
  if (a->rank != b->rank) return false;
  for (int d = 0; d < a->rank; d++)
    if (a->sizes[d] != b->sizes[d]) return false;
  return true;
}

static int k_equal(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *a = ref_tensor(c, "self"), *b = ref_tensor(c, "other");
  if (!a || !b) return 1;
  bool eq = same_shape(a, b);
  bool ints = !is_float(a->dtype) && !is_float(b->dtype);
  for (int64_t j = 0, n = ref_numel(a); eq && j < n; j++) {
    int64_t oa = flat_offset(a, j), ob = flat_offset(b, j);
    eq = ints ? ref_load_i(a->data, a->dtype, oa) == ref_load_i(b->data, b->dtype, ob)
              : ref_load_f(a->data, a->dtype, oa) == ref_load_f(b->data, b->dtype, ob);
  }
  ref_store_i(c->outputs[0].data, c->outputs[0].dtype, 0, eq);
  return 0;
}

/* allclose = all(isclose): |a - b| <= atol + |rtol * b|, each step in the
 * tensors' dtype as PyTorch's isclose computes it; equal values (infinities
 * included) are close, NaNs only with equal_nan. */
static int k_allclose(const alloy_kernel_call *c) {
  const alloy_kernel_tensor *a = ref_tensor(c, "self"), *b = ref_tensor(c, "other");
  if (!a || !b) return 1;
  double rtol = 1e-5, atol = 1e-8;
  bool equal_nan = false;
  ref_float(c, "rtol", &rtol);
  ref_float(c, "atol", &atol);
  ref_bool(c, "equal_nan", &equal_nan);
  int64_t sizes[MAX_DIMS], strides[MAX_DIMS] = {0};
  int r = broadcast_shape(a, b, sizes);
  if (r < 0) return 1;
  alloy_kernel_tensor shape = {NULL, ALLOY_F64, r, sizes, strides};
  const alloy_kernel_tensor *ins[2] = {a, b};
  alloy_dtype t = is_float(a->dtype) ? a->dtype : ALLOY_F64;
  bool close = true;
  ref_iter it;
  ref_iter_init(&it, &shape, ins, 2);
  while (close && ref_iter_next(&it)) {
    double x = ref_load_f(a->data, a->dtype, it.offset[1]);
    double y = ref_load_f(b->data, b->dtype, it.offset[2]);
    if (x == y || (equal_nan && isnan(x) && isnan(y))) continue;
    double allowed = round_to(t, atol + fabs(round_to(t, rtol * y)));
    double actual = round_to(t, fabs(x - y));
    close = isfinite(actual) && actual <= allowed;
  }
  ref_store_i(c->outputs[0].data, c->outputs[0].dtype, 0, close);
  return 0;
}

/* ---- histograms ---------------------------------------------------------------*/

/* Reads the float[] argument name; returns the count, or -1 when None. */
static int float_list(const alloy_kernel_call *c, const char *name, double *out, int cap) {
  const alloy_host_api *h = c->host;
  for (int i = 0, n = h->node_num_args(c->node); i < n; i++) {
    const char *an = h->node_arg_name(c->node, i);
    if (!an || strcmp(an, name)) continue;
    const alloy_arg *a = h->node_arg(c->node, i);
    if (h->arg_type(a) != ALLOY_ARG_TYPE_LIST) return -1;
    int m = h->arg_list_size(a);
    for (int k = 0; k < m && k < cap; k++)
      if (!h->arg_float(h->arg_list_item(a, k), &out[k])) return -1;
    return m < cap ? m : cap;
  }
  return -1;
}

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
  int nr = float_list(c, "range", range, 2 * MAX_DIMS);
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
  const alloy_kernel_tensor *cnt = output_sized(c, 2, counts ? &ngroups : &zero);
  if (!vals || !inv || !cnt) return 1;
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
    e = sort_lane(&in, false);
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
  /* Along dim: slice j is x[..., j, ...]; outer x inner elements each. */
  int64_t n = x->sizes[dim], outer = 1, inner = 1;
  for (int d = 0; d < dim; d++) outer *= x->sizes[d];
  for (int d = dim + 1; d < x->rank; d++) inner *= x->sizes[d];
  size_t bytes = sizeof(int64_t) * (size_t)(n > 0 ? n : 1);
  int64_t *group = malloc(bytes), *first = malloc(bytes);
  if (!group || !first) return free(group), free(first), 1;
  int64_t ng = 0;
  for (int64_t j = 0; j < n; j++) {
    bool same = j > 0;
    for (int64_t o = 0; same && o < outer; o++)
      for (int64_t i = 0; same && i < inner; i++) {
        int64_t a = (o * n + j - 1) * inner + i, b = (o * n + j) * inner + i;
        same = elems_equal(x, flat_offset(x, a), flat_offset(x, b));
      }
    if (j > 0 && !same) ng++;
    if (j == 0 || !same) first[ng] = j;
    group[j] = ng;
  }
  int64_t u = n ? ng + 1 : 0, sizes[MAX_DIMS], zero = 0;
  memcpy(sizes, x->sizes, sizeof *sizes * (size_t)x->rank);
  sizes[dim] = u;
  const alloy_kernel_tensor *vals = output_sized(c, 0, sizes);
  const alloy_kernel_tensor *inv = output_sized(c, 1, inverse ? &n : &zero);
  const alloy_kernel_tensor *cnt = output_sized(c, 2, counts ? &u : &zero);
  int rc = !vals || !inv || !cnt;
  for (int64_t g = 0; !rc && g < u; g++)
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i < inner; i++) {
        int64_t src = flat_offset(x, (o * n + first[g]) * inner + i);
        copy_elem(vals, flat_offset(vals, (o * u + g) * inner + i), x, src);
      }
  for (int64_t j = 0; !rc && j < n; j++) {
    if (inverse) ref_store_i(inv->data, inv->dtype, flat_offset(inv, j), group[j]);
    if (counts && (j + 1 == n || group[j + 1] != group[j]))
      ref_store_i(cnt->data, cnt->dtype, flat_offset(cnt, group[j]), j + 1 - first[group[j]]);
  }
  free(group), free(first);
  return rc;
}

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

const alloy_kernel ref_kernels_reduce[] = {
    /* reductions */
    REF_KERNEL("aten.sum.default", k_sum),
    REF_KERNEL("aten.sum.dim_IntList", k_sum_dim),
    REF_KERNEL("aten.nansum.default", k_nansum),
    REF_KERNEL("aten.prod.default", k_prod),
    REF_KERNEL("aten.prod.dim_int", k_prod_dim),
    REF_KERNEL("aten.mean.default", k_mean),
    REF_KERNEL("aten.mean.dim", k_mean_dim),
    REF_KERNEL("aten.amax.default", k_amax),
    REF_KERNEL("aten.amin.default", k_amin),
    REF_KERNEL("aten.max.default", k_max),
    REF_KERNEL("aten.min.default", k_min),
    REF_KERNEL("aten.max.dim", k_max_dim),
    REF_KERNEL("aten.min.dim", k_min_dim),
    REF_KERNEL("aten.argmax.default", k_argmax),
    REF_KERNEL("aten.argmin.default", k_argmin),
    REF_KERNEL("aten.aminmax.default", k_aminmax),
    REF_KERNEL("aten.any.default", k_any),
    REF_KERNEL("aten.any.dim", k_any_dim),
    REF_KERNEL("aten.any.dims", k_any_dims),
    REF_KERNEL("aten.all.default", k_all),
    REF_KERNEL("aten.all.dim", k_all_dim),
    REF_KERNEL("aten.all.dims", k_all_dims),
    REF_KERNEL("aten.count_nonzero.default", k_count_nonzero),
    REF_KERNEL("aten.count_nonzero.dim_IntList", k_count_nonzero_dims),
    REF_KERNEL("aten.var.dim", k_var),
    REF_KERNEL("aten.var.correction", k_var),
    REF_KERNEL("aten.std.correction", k_std),
    REF_KERNEL("aten.var_mean.correction", k_var_mean),
    REF_KERNEL("aten.std_mean.correction", k_std_mean),
    REF_KERNEL("aten.logsumexp.default", k_logsumexp),
    REF_KERNEL("aten.norm.ScalarOpt_dim", k_norm),
    REF_KERNEL("aten.dist.default", k_dist),
    REF_KERNEL("aten.trace.default", k_trace),
    REF_KERNEL("aten.median.default", k_median),
    REF_KERNEL("aten.median.dim", k_median_dim),
    REF_KERNEL("aten.nanmedian.default", k_nanmedian),
    REF_KERNEL("aten.nanmedian.dim", k_nanmedian_dim),
    REF_KERNEL("aten.mode.default", k_mode),
    REF_KERNEL("aten.kthvalue.default", k_kthvalue),
    REF_KERNEL("aten.equal.default", k_equal),
    REF_KERNEL("aten.allclose.default", k_allclose),
    /* scans, softmax, sort */
    REF_KERNEL("aten.cumsum.default", k_cumsum),
    REF_KERNEL("aten.cumprod.default", k_cumprod),
    REF_KERNEL("aten.logcumsumexp.default", k_logcumsumexp),
    REF_KERNEL("aten.cummax.default", k_cummax),
    REF_KERNEL("aten.cummin.default", k_cummin),
    REF_KERNEL("aten._softmax.default", k_softmax),
    REF_KERNEL("aten._log_softmax.default", k_log_softmax),
    REF_KERNEL("aten._safe_softmax.default", k_safe_softmax),
    REF_KERNEL("aten.log_softmax.int", k_log_softmax),
    REF_KERNEL("aten.sort.default", k_sort),
    REF_KERNEL("aten.sort.stable", k_sort),
    REF_KERNEL("aten.topk.default", k_topk),
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
    REF_KERNEL("aten.segment_reduce.default", k_segment_reduce),
    /* prims */
    REF_KERNEL("prims.sum.default", k_prim_sum),
    REF_KERNEL("prims.prod.default", k_prim_prod),
    REF_KERNEL("prims.amax.default", k_prim_amax),
    REF_KERNEL("prims.amin.default", k_prim_amin),
    REF_KERNEL("prims.xor_sum.default", k_prim_xor_sum),
    REF_KERNEL("prims.var.default", k_prim_var),
    {NULL, NULL, NULL, NULL},
};
