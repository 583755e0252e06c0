/*
 * reference_backend/kernels_reduce.c: reference kernels, reduce family:
 * reductions (sum, mean, prod, var, amax, argmax, median, mode, norm, ...),
 * scans (cumsum, cummax, logcumsumexp), the softmax family, sort and topk,
 * equal/allclose, and the reduction prims. Histograms, bincount, unique
 * and segment_reduce are in kernels_histogram.c; the helpers both share
 * are in kernels_reduce.h (ref_reduce_sort_lane is defined here).
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
 * uint64 for integers. Variance is two-pass (mean, then squared deviations;
 * var_mean's mean is Welford's, as PyTorch's). Exceptions, where PyTorch's
 * CPU kernels compute in the tensor's own dtype and the rounding shows:
 * histograms, segment_reduce, allclose, prod and logsumexp round every
 * step to the dtype as PyTorch does.
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
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference_backend/kernels_reduce.h"

#define MAX_OUT 4

static int64_t wrap_to(alloy_dtype t, int64_t v) {
  unsigned char buf[8];
  ref_store_i(buf, t, 0, v);
  return ref_load_i(buf, t, 0);
}

/* ---- lanes ---------------------------------------------------------------*/

/* entry and lane are in reference_backend/kernels_reduce.h. */

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
  bool single;          /* norm: float32, float16 or bfloat16 input */
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

/* An empty plan over x: no dims yet, x's own dtype, the call's outputs
 * (at most MAX_OUT) one element long. */
static void plan_start(plan *pl, const alloy_kernel_call *c, const alloy_kernel_tensor *x) {
  memset(pl, 0, sizeof *pl);
  pl->x = x;
  pl->cast = x->dtype;
  pl->nout = c->num_outputs < MAX_OUT ? c->num_outputs : MAX_OUT;
  pl->outer.nops = 1 + pl->nout;
  pl->lane.nops = 1;
  for (int k = 0; k < pl->nout; k++) pl->out_len[k] = 1;
}

/* A reduction over the dims in mask: one-element output lanes. The outputs
 * keep the reduced dims (keepdim) exactly when their rank is x's. */
static void plan_reduce(plan *pl, const alloy_kernel_call *c, const alloy_kernel_tensor *x,
                        const bool *mask) {
  plan_start(pl, c, x);
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
}

/* Lanes along one dim of x (scans, softmax, sort): outputs have x's rank and
 * their lanes run along the same dim (topk's shorter). */
static void plan_dim(plan *pl, const alloy_kernel_call *c, const alloy_kernel_tensor *x, int dim) {
  plan_start(pl, c, x);
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

/* PyTorch multiplies in the result's dtype (prod_kernel_impl's scalar_t):
 * each step rounds there (round_sum, sum_dtype), so a float16 partial
 * product overflows to inf or underflows to 0 as PyTorch's does. */
static int l_prod(const lane *in, lane *out, const red_params *p) {
  if (in->is_int) {
    uint64_t s = 1;
    for (int64_t j = 0; j < in->n; j++) s *= (uint64_t)in->i[j];
    put_i(&out[0], 0, (int64_t)s);
  } else {
    double s = 1.0;
    for (int64_t j = 0; j < in->n; j++) {
      s *= in->f[j];
      if (p->round_sum) s = round_to(p->sum_dtype, s);
    }
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
  if (p->with_mean) {
    /* PyTorch's var_mean/std_mean take the mean from their Welford
     * updates (mean += (x - mean) / k, in double): an inf followed by any
     * element makes it NaN (inf - inf), where sum / n is inf. */
    double wm = 0.0;
    for (int64_t j = 0; j < in->n; j++) wm += (in->f[j] - wm) / (double)(j + 1);
    put_f(&out[1], 0, in->n ? wm : mean);
  }
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

/* log(sum(exp(x - m))) + m with m the max, taken as 0 when infinite; each
 * step rounds to the result's dtype (sum_dtype), as PyTorch's logsumexp
 * runs x - max, exp, sum, log and + max as tensor ops on it. */
static int l_logsumexp(const lane *in, lane *out, const red_params *p) {
  double m = -INFINITY;
  for (int64_t j = 0; j < in->n; j++) {
    if (isnan(in->f[j])) m = NAN;
    if (!isnan(m) && in->f[j] > m) m = in->f[j];
  }
  if (isinf(m)) m = 0.0;
  double s = 0.0;
  for (int64_t j = 0; j < in->n; j++) s += round_to(p->sum_dtype, exp(round_to(p->sum_dtype, in->f[j] - m)));
  put_f(&out[0], 0, round_to(p->sum_dtype, log(round_to(p->sum_dtype, s))) + m);
  return 0;
}

/* The p-norm of the lane (ref_pnorm, ref.h). PyTorch sums in float
 * (opmath) for float32, float16 and bfloat16, where past FLT_MAX the norm
 * is inf (|x| = 3e38 squared); a one-element lane is |x| there, never
 * summed. */
static int l_norm(const lane *in, lane *out, const red_params *p) {
  ref_pnorm n = ref_pnorm_start(p->p);
  for (int64_t j = 0; j < in->n; j++) ref_pnorm_add(&n, in->f[j]);
  put_f(&out[0], 0, ref_pnorm_value(&n, p->single && in->n > 1));
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
entry *ref_reduce_sort_lane(const lane *in, bool descending) {
  static int (*const cmps[2][2])(const void *, const void *) = {
      {cmp_f_asc, cmp_f_desc}, {cmp_i_asc, cmp_i_desc}};
  entry *e = lane_entries(in);
  if (e && in->n > 1) qsort(e, (size_t)in->n, sizeof *e, cmps[in->is_int][descending]);
  return e;
}

static int l_sort(const lane *in, lane *out, const red_params *p) {
  entry *e = ref_reduce_sort_lane(in, p->largest);
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
  entry *e = in->n > 0 ? ref_reduce_sort_lane(in, false) : NULL;
  int64_t nans = 0;
  for (int64_t j = 0; !in->is_int && j < in->n; j++) nans += isnan(in->f[j]);
  if (nans && !p->ignore_nan) return put_sorted_at(e, in, out, in->n - nans);
  int64_t m = p->ignore_nan ? in->n - nans : in->n;
  return put_sorted_at(e, in, out, m > 0 ? (m - 1) / 2 : 0);
}

/* The most frequent value, the smallest of equally frequent ones, with the
 * last index of it (PyTorch scans the sorted lane keeping strictly more
 * frequent runs and reports the run's last index). */
static int l_mode(const lane *in, lane *out, const red_params *p) {
  (void)p;
  entry *e = in->n > 0 ? ref_reduce_sort_lane(in, false) : NULL;
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

/* The running value is held in p->sum_dtype when p->round_sum: PyTorch's
 * cpu_cum_base_kernel keeps it in acc_type<scalar_t, false>, double for
 * float32 and float64 but float for float16 and bfloat16, so there a
 * partial product underflows to 0 (and 0 * inf is NaN) as it does in float. */
static int l_cumsum(const lane *in, lane *out, const red_params *p) {
  uint64_t si = 0;
  double sf = 0.0;
  for (int64_t j = 0; j < in->n; j++) {
    if (in->is_int) put_i(&out[0], j, (int64_t)(si += (uint64_t)in->i[j]));
    else {
      sf += in->f[j];
      if (p->round_sum) sf = round_to(p->sum_dtype, sf);
      put_f(&out[0], j, sf);
    }
  }
  return 0;
}

static int l_cumprod(const lane *in, lane *out, const red_params *p) {
  uint64_t si = 1;
  double sf = 1.0;
  for (int64_t j = 0; j < in->n; j++) {
    if (in->is_int) put_i(&out[0], j, (int64_t)(si *= (uint64_t)in->i[j]));
    else {
      sf *= in->f[j];
      if (p->round_sum) sf = round_to(p->sum_dtype, sf);
      put_f(&out[0], j, sf);
    }
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
static const red_params NONE_P = {0}, NANSUM_P = {.ignore_nan = true};
static const red_params ANY_P = {.flavor = TRUTH_ANY}, ALL_P = {.flavor = TRUTH_ALL},
                        COUNT_P = {.flavor = TRUTH_COUNT};

/* The reductions that are one call of reduce_op: the op, the argument that
 * names its dims (NULL: all), how the dims are given, whether the result is
 * cast, the per-slice loop and its parameters. One kernel serves them all,
 * finding its row by the node's op. */
#define REDUCTIONS(X)                                                              \
  X("aten.sum.default", NULL, DIMS_ALL, CAST, l_sum, NONE_P)                       \
  X("aten.sum.dim_IntList", "dim", DIMS_LIST, CAST, l_sum, NONE_P)                 \
  X("aten.nansum.default", "dim", DIMS_LIST, CAST, l_sum, NANSUM_P)                \
  X("aten.prod.default", NULL, DIMS_ALL, CAST, l_prod, NONE_P)                     \
  X("aten.prod.dim_int", "dim", DIMS_ONE, CAST, l_prod, NONE_P)                    \
  X("aten.mean.default", NULL, DIMS_ALL, CAST, l_mean, NONE_P)                     \
  X("aten.mean.dim", "dim", DIMS_LIST, CAST, l_mean, NONE_P)                       \
  X("aten.amax.default", "dim", DIMS_LIST, KEEP, l_extreme, MAX_P)                 \
  X("aten.amin.default", "dim", DIMS_LIST, KEEP, l_extreme, MIN_P)                 \
  X("aten.max.default", NULL, DIMS_ALL, KEEP, l_extreme, MAX_P)                    \
  X("aten.min.default", NULL, DIMS_ALL, KEEP, l_extreme, MIN_P)                    \
  X("aten.max.dim", "dim", DIMS_ONE, KEEP, l_extreme_dim, MAX_P)                   \
  X("aten.min.dim", "dim", DIMS_ONE, KEEP, l_extreme_dim, MIN_P)                   \
  X("aten.argmax.default", "dim", DIMS_OPT, KEEP, l_arg_extreme, MAX_P)            \
  X("aten.argmin.default", "dim", DIMS_OPT, KEEP, l_arg_extreme, MIN_P)            \
  X("aten.aminmax.default", "dim", DIMS_OPT, KEEP, l_aminmax, NONE_P)              \
  X("aten.any.default", NULL, DIMS_ALL, KEEP, l_truth, ANY_P)                      \
  X("aten.any.dim", "dim", DIMS_ONE, KEEP, l_truth, ANY_P)                         \
  X("aten.any.dims", "dim", DIMS_LIST, KEEP, l_truth, ANY_P)                       \
  X("aten.all.default", NULL, DIMS_ALL, KEEP, l_truth, ALL_P)                      \
  X("aten.all.dim", "dim", DIMS_ONE, KEEP, l_truth, ALL_P)                         \
  X("aten.all.dims", "dim", DIMS_LIST, KEEP, l_truth, ALL_P)                       \
  X("aten.count_nonzero.default", "dim", DIMS_OPT, KEEP, l_truth, COUNT_P)         \
  X("aten.count_nonzero.dim_IntList", "dim", DIMS_LIST, KEEP, l_truth, COUNT_P)

typedef struct red_row {
  const char *op, *dims;
  dims_kind kind;
  int cast;
  lane_fn fn;
  const red_params *p;
} red_row;

#define RED_ROW(op, dims, kind, cast, fn, p) {op, dims, kind, cast, fn, &p},
static const red_row red_rows[] = {REDUCTIONS(RED_ROW)};

/* prod: each step rounded to the result's dtype (l_prod). */
static int prod_op(const alloy_kernel_call *c, const char *dims, dims_kind kind) {
  red_params p = {.round_sum = true, .sum_dtype = c->outputs[0].dtype};
  return reduce_op(c, dims, kind, CAST, l_prod, &p);
}

static int k_reduction(const alloy_kernel_call *c) {
  const char *op = c->host->node_op_name(c->node);
  for (size_t i = 0; i < sizeof red_rows / sizeof *red_rows; i++) {
    const red_row *r = &red_rows[i];
    if (strcmp(r->op, op)) continue;
    if (r->fn == l_prod) return prod_op(c, r->dims, r->kind);
    return reduce_op(c, r->dims, r->kind, r->cast, r->fn, r->p);
  }
  return ref_fail(c, "%s is not a reduction of this table", op);
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
  red_params p = {.sum_dtype = c->outputs[0].dtype};
  return reduce_op(c, "dim", DIMS_LIST, CAST, l_logsumexp, &p);
}

/* norm(self, p, dim, keepdim) and linalg_vector_norm(self, ord, dim,
 * keepdim, dtype), the order read from the argument called order: the
 * input converted to the result's dtype, as PyTorch casts it to dtype=
 * first (and refuses a narrowing one). */
static int norm_op(const alloy_kernel_call *c, const char *order) {
  red_params p = {.p = 2.0, .single = ref_float32_opmath(c->outputs[0].dtype)};
  ref_float(c, order, &p.p);
  return reduce_op(c, "dim", DIMS_LIST, CAST, l_norm, &p);
}
static int k_norm(const alloy_kernel_call *c) { return norm_op(c, "p"); }
static int k_linalg_vector_norm(const alloy_kernel_call *c) { return norm_op(c, "ord"); }

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
  red_params p = {.p = 2.0, .single = ref_float32_opmath(rt)};
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
static int k_prim_prod(const alloy_kernel_call *c) { return prod_op(c, "dims", DIMS_PRIM); }
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

/* the scans' running value in float for float16 / bfloat16 results (l_cumsum) */
static red_params scan_params(const alloy_kernel_call *c) {
  alloy_dtype t = c->num_outputs > 0 ? c->outputs[0].dtype : ALLOY_F64;
  return (red_params){.round_sum = t == ALLOY_F16 || t == ALLOY_BF16, .sum_dtype = ALLOY_F32};
}
static int k_cumsum(const alloy_kernel_call *c) {
  red_params p = scan_params(c);
  return dim_op(c, "dim", CAST, l_cumsum, &p);
}
static int k_cumprod(const alloy_kernel_call *c) {
  red_params p = scan_params(c);
  return dim_op(c, "dim", CAST, l_cumprod, &p);
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

const alloy_kernel ref_kernels_reduce[] = {
    /* reductions */
#define RED_KERNEL(op, dims, kind, cast, fn, p) REF_KERNEL(op, k_reduction),
    REDUCTIONS(RED_KERNEL)
    REF_KERNEL("aten.var.dim", k_var),
    REF_KERNEL("aten.var.correction", k_var),
    REF_KERNEL("aten.std.correction", k_std),
    REF_KERNEL("aten.var_mean.correction", k_var_mean),
    REF_KERNEL("aten.std_mean.correction", k_std_mean),
    REF_KERNEL("aten.logsumexp.default", k_logsumexp),
    REF_KERNEL("aten.norm.ScalarOpt_dim", k_norm),
    REF_KERNEL("aten.linalg_vector_norm.default", k_linalg_vector_norm),
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
    /* prims */
    REF_KERNEL("prims.sum.default", k_prim_sum),
    REF_KERNEL("prims.prod.default", k_prim_prod),
    REF_KERNEL("prims.amax.default", k_prim_amax),
    REF_KERNEL("prims.amin.default", k_prim_amin),
    REF_KERNEL("prims.xor_sum.default", k_prim_xor_sum),
    REF_KERNEL("prims.var.default", k_prim_var),
    {NULL, NULL, NULL, NULL},
};
