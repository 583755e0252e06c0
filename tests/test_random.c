/*
 * tests/test_random.c: the random ops checked by distribution, since their
 * values are not PyTorch's (reference_backend/kernels_random.c and
 * kernels_factory.c draw from a seeded Philox stream; PyTorch's CPU
 * generator is a Mersenne twister). Each case draws N = 10^5 samples, run
 * as the reference backend claims the op (its kernel, or its rule to
 * rand/randn), decomposed to Core ATen and decomposed to prims, and checks:
 *
 *   - the support: every sample in the distribution's range (uniform in
 *     [from, to), bernoulli in {0, 1}, geometric >= 1 and whole, exponential
 *     > 0, randint in [low, high), a permutation for randperm, ...);
 *   - the moments: the sample mean within 6 standard errors of the true
 *     mean (sigma / sqrt(N)), and the sample variance within 6 standard
 *     errors of the true variance, the error of a variance estimated from
 *     the sample's fourth central moment, sqrt((m4 - s^4) / N); cauchy,
 *     which has no moments, by its quartiles (binomial errors of the
 *     fractions below them).
 *
 * Six standard errors leave a false failure once in 5 * 10^8 checks for a
 * seed; the default seed's draws are fixed, so a failure is a change. The
 * shape functions' refusals (bad parameters, dtypes) and the kernels'
 * checks of data (a negative Poisson rate, negative probabilities) are
 * here too.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testref.h"

enum { N = 100000 };

static const char *const level_names[TR_NLEVELS] = {"whole", "core", "prims"};

/* ---- drawing ----------------------------------------------------------------------------- */

/* One op applied to an input of in_dtype filled with in_value (shape
 * [rows, cols], or [N] when rows is 0; none when in_dtype is
 * ALLOY_DTYPE_COUNT), then the args. */
typedef struct {
  const char *op;
  alloy_dtype in_dtype;
  double in_value;
  int64_t rows, cols;
  alloy_arg args[4];
  int nargs;
  const char *kwn[2];
  alloy_arg kw[2];
  int nkw;
  int output; /* which output the checks read */
  int in_pos; /* the input's place among the arguments (0: first) */
} sampler;

static double in_data[2 * N]; /* as float64; converted per dtype below */
static float in_f32[2 * N];
static int64_t in_i64[2 * N];

static void *fill_input(alloy_dtype t, double v, int64_t n) {
  for (int64_t i = 0; i < n; i++) in_data[i] = v, in_f32[i] = (float)v, in_i64[i] = (int64_t)v;
  return t == ALLOY_F64 ? (void *)in_data : t == ALLOY_F32 ? (void *)in_f32 : (void *)in_i64;
}

static alloy_node *build_sampler(tr_case *t, const void *ctx) {
  const sampler *s = ctx;
  alloy_arg args[5];
  int n = 0;
  for (int k = 0; k <= s->nargs; k++) {
    if (k == s->in_pos && s->in_dtype != ALLOY_DTYPE_COUNT) {
      int64_t shape[2] = {s->rows ? s->rows : N, s->cols};
      void *data = fill_input(s->in_dtype, s->in_value, shape[0] * (s->rows ? s->cols : 1));
      args[n++] = tr_input(t, s->in_dtype, shape, s->rows ? 2 : 1, data);
    }
    if (k < s->nargs) args[n++] = s->args[k];
  }
  return tr_node(t, s->op, args, n, s->kwn, s->kw, s->nkw);
}

static double value_at(const alloy_host_tensor *h, int64_t k) {
  switch (h->dtype) {
    case ALLOY_I32: return ((const int32_t *)h->data)[k];
    case ALLOY_I16: return ((const int16_t *)h->data)[k];
    case ALLOY_I8: return ((const int8_t *)h->data)[k];
    default: return tr_out_f(h, k);
  }
}

/* The samples of s at a level, malloc'd into *v (count *n); false after a
 * recorded failure. */
static bool draw(const sampler *s, int level, double **v, int64_t *n) {
  tr_case t;
  bool ok = tr_run_built(&t, build_sampler, s, tr_levels[level]);
  if (ok) {
    const alloy_host_tensor *h = &t.out[s->output];
    *n = tr_numel(h);
    *v = malloc(sizeof **v * (size_t)(*n ? *n : 1));
    for (int64_t k = 0; k < *n; k++) (*v)[k] = value_at(h, k);
  } else {
    harness_fail(__FILE__, __LINE__, "%s at level %s did not run", s->op, level_names[level]);
  }
  tr_close(&t);
  return ok;
}

/* ---- checks -------------------------------------------------------------------------------- */

/* Every sample in [lo, hi) (hi_closed: [lo, hi]), and whole when asked. */
static void check_support(const char *what, int level, const double *v, int64_t n, double lo, double hi,
                          bool hi_closed, bool whole) {
  for (int64_t k = 0; k < n; k++) {
    bool in = v[k] >= lo && (hi_closed ? v[k] <= hi : v[k] < hi) && (!whole || v[k] == floor(v[k]));
    if (!in) {
      harness_fail(__FILE__, __LINE__, "%s (%s): sample %lld is %.17g, outside %s%g, %g%c%s", what,
                   level_names[level], (long long)k, v[k], "[", lo, hi, hi_closed ? ']' : ')',
                   whole ? " or not whole" : "");
      return;
    }
  }
}

/* The sample mean and variance against the true ones (see the top). */
static void check_moments(const char *what, int level, const double *v, int64_t n, double mean, double var) {
  double m = 0;
  for (int64_t k = 0; k < n; k++) m += v[k];
  m /= (double)n;
  double s2 = 0, m4 = 0;
  for (int64_t k = 0; k < n; k++) {
    double d2 = (v[k] - m) * (v[k] - m);
    s2 += d2, m4 += d2 * d2;
  }
  s2 /= (double)(n - 1), m4 /= (double)n;
  double se_mean = sqrt(var / (double)n), se_var = sqrt(fmax(m4 - s2 * s2, 0) / (double)n);
  if (!(fabs(m - mean) <= 6 * se_mean + 1e-12))
    harness_fail(__FILE__, __LINE__, "%s (%s): mean %.6g, expected %.6g (6 standard errors: %.3g)", what,
                 level_names[level], m, mean, 6 * se_mean);
  if (!(fabs(s2 - var) <= 6 * se_var + 1e-12))
    harness_fail(__FILE__, __LINE__, "%s (%s): variance %.6g, expected %.6g (6 standard errors: %.3g)", what,
                 level_names[level], s2, var, 6 * se_var);
}

/* The fraction of samples below x is near p (6 binomial standard errors). */
static void check_fraction_below(const char *what, int level, const double *v, int64_t n, double x, double p) {
  int64_t below = 0;
  for (int64_t k = 0; k < n; k++) below += v[k] < x;
  double f = (double)below / (double)n, se = sqrt(p * (1 - p) / (double)n);
  if (!(fabs(f - p) <= 6 * se))
    harness_fail(__FILE__, __LINE__, "%s (%s): %.4f of the samples below %g, expected %.4f", what,
                 level_names[level], f, x, p);
}

/* A distribution: its support and moments, checked at every level. */
typedef struct {
  double lo, hi;
  bool hi_closed, whole;
  double mean, var;
} expect;

static void check_sampler(const sampler *s, expect e) {
  for (int level = 0; level < TR_NLEVELS; level++) {
    double *v = NULL;
    int64_t n = 0;
    if (!draw(s, level, &v, &n)) continue;
    check_support(s->op, level, v, n, e.lo, e.hi, e.hi_closed, e.whole);
    check_moments(s->op, level, v, n, e.mean, e.var);
    free(v);
  }
}

#define ARGS(...) .args = {__VA_ARGS__}, .nargs = (int)(sizeof((alloy_arg[]){__VA_ARGS__}) / sizeof(alloy_arg))
#define FL(x) alloy_arg_float(x)
#define IN(x) alloy_arg_int(x)

/* ---- bernoulli, uniform, normal --------------------------------------------------------------- */

TEST(random_bernoulli_is_zero_or_one_with_mean_p) {
  sampler p = {"aten.bernoulli.p", ALLOY_F32, 0, 0, 0, ARGS(FL(0.3))};
  check_sampler(&p, (expect){0, 1, true, true, 0.3, 0.21});
  /* p from the tensor itself, and a tensor p broadcast over an int64 self */
  sampler d = {"aten.bernoulli.default", ALLOY_F64, 0.7, 0, 0, .nargs = 0};
  check_sampler(&d, (expect){0, 1, true, true, 0.7, 0.21});
  for (int level = 0; level < TR_NLEVELS; level++) {
    tr_case t;
    if (!tr_open(&t)) continue;
    static int64_t self[4 * N / 4];
    static float p4[4] = {0.1f, 0.4f, 0.6f, 0.9f};
    int64_t ss[2] = {N / 4, 4}, ps[1] = {4};
    alloy_arg args[2] = {tr_input(&t, ALLOY_I64, ss, 2, self), tr_input(&t, ALLOY_F32, ps, 1, p4)};
    alloy_node *node = tr_node(&t, "aten.bernoulli.Tensor", args, 2, NULL, NULL, 0);
    alloy_value *out = node ? alloy_node_output(node, 0) : NULL;
    if (out && tr_run_level(&t, &out, 1, tr_levels[level], 0)) {
      const int64_t *v = t.out[0].data;
      int64_t ones[4] = {0}, bad = 0;
      for (int64_t k = 0; k < N; k++) bad += v[k] != 0 && v[k] != 1, ones[k % 4] += v[k];
      CHECK_INT(bad, 0);
      for (int c = 0; c < 4; c++) {
        double f = (double)ones[c] / (N / 4), se = sqrt(p4[c] * (1 - p4[c]) / (N / 4));
        if (!(fabs(f - p4[c]) <= 6 * se))
          harness_fail(__FILE__, __LINE__, "bernoulli.Tensor (%s): column %d mean %.4f, expected %.2f",
                       level_names[level], c, f, p4[c]);
      }
    }
    tr_close(&t);
  }
}

TEST(random_uniform_in_from_to) {
  sampler u = {"aten.uniform.default", ALLOY_F32, 0, 0, 0, ARGS(FL(-4), FL(4))};
  check_sampler(&u, (expect){-4, 4, false, false, 0, 64.0 / 12});
  sampler r = {"aten.rand_like.default", ALLOY_F32, 0, 0, 0, .nargs = 0, .kwn = {"dtype"},
               .kw = {alloy_arg_dtype(ALLOY_F64)}, .nkw = 1};
  check_sampler(&r, (expect){0, 1, false, false, 0.5, 1.0 / 12});
}

TEST(random_normal_has_its_mean_and_variance) {
  sampler f = {"aten.normal_functional.default", ALLOY_F32, 0, 0, 0, ARGS(FL(2), FL(3))};
  check_sampler(&f, (expect){-INFINITY, INFINITY, false, false, 2, 9});
  sampler tf = {"aten.normal.Tensor_float", ALLOY_F64, -1, 0, 0, ARGS(FL(0.5))};
  check_sampler(&tf, (expect){-INFINITY, INFINITY, false, false, -1, 0.25});
  sampler ft = {"aten.normal.float_Tensor", ALLOY_F32, 2, 0, 0, ARGS(FL(-3)), .in_pos = 1};
  check_sampler(&ft, (expect){-INFINITY, INFINITY, false, false, -3, 4});
  alloy_arg size[1] = {IN(N)};
  sampler ff = {"aten.normal.float_float", ALLOY_DTYPE_COUNT, 0, 0, 0,
                ARGS(FL(10), FL(0.1), alloy_arg_list(size, 1))};
  check_sampler(&ff, (expect){-INFINITY, INFINITY, false, false, 10, 0.01});
  sampler rn = {"aten.randn_like.default", ALLOY_F32, 0, 0, 0, .nargs = 0};
  check_sampler(&rn, (expect){-INFINITY, INFINITY, false, false, 0, 1});
  sampler rg = {"aten.randn.generator", ALLOY_DTYPE_COUNT, 0, 0, 0, ARGS(alloy_arg_list(size, 1)),
                .kwn = {"generator"}, .kw = {alloy_arg_none()}, .nkw = 1};
  check_sampler(&rg, (expect){-INFINITY, INFINITY, false, false, 0, 1});
}

/* normal(mean, std) with both tensors: std broadcast over mean's rows. */
TEST(random_normal_tensor_tensor_broadcasts) {
  for (int level = 0; level < TR_NLEVELS; level++) {
    tr_case t;
    if (!tr_open(&t)) continue;
    static float mean[N];
    static float std2[2] = {1.0f, 3.0f};
    for (int k = 0; k < N; k++) mean[k] = 5.0f;
    int64_t ms[2] = {N / 2, 2}, ss[1] = {2};
    alloy_arg args[2] = {tr_input(&t, ALLOY_F32, ms, 2, mean), tr_input(&t, ALLOY_F32, ss, 1, std2)};
    alloy_node *node = tr_node(&t, "aten.normal.Tensor_Tensor", args, 2, NULL, NULL, 0);
    alloy_value *out = node ? alloy_node_output(node, 0) : NULL;
    if (out && tr_run_level(&t, &out, 1, tr_levels[level], 0)) {
      const float *v = t.out[0].data;
      double *col = malloc(sizeof *col * N / 2);
      for (int c = 0; c < 2; c++) {
        for (int k = 0; k < N / 2; k++) col[k] = v[2 * k + c];
        check_moments("normal.Tensor_Tensor", level, col, N / 2, 5, std2[c] * std2[c]);
      }
      free(col);
    }
    tr_close(&t);
  }
}

/* ---- continuous ------------------------------------------------------------------------------- */

TEST(random_exponential_is_positive_with_mean_one_over_lambda) {
  sampler e = {"aten.exponential.default", ALLOY_F32, 0, 0, 0, ARGS(FL(2))};
  check_sampler(&e, (expect){1e-300, INFINITY, false, false, 0.5, 0.25});
  sampler e64 = {"aten.exponential.default", ALLOY_F64, 0, 0, 0, ARGS(FL(0.5))};
  check_sampler(&e64, (expect){1e-300, INFINITY, false, false, 2, 4});
}

TEST(random_log_normal_is_positive_with_its_moments) {
  double mu = 0.2, sigma = 0.5, s2 = sigma * sigma;
  sampler l = {"aten.log_normal.default", ALLOY_F64, 0, 0, 0, ARGS(FL(mu), FL(sigma))};
  check_sampler(&l, (expect){1e-300, INFINITY, false, false, exp(mu + s2 / 2), (exp(s2) - 1) * exp(2 * mu + s2)});
}

TEST(random_cauchy_has_its_quartiles) {
  sampler c = {"aten.cauchy.default", ALLOY_F32, 0, 0, 0, ARGS(FL(1), FL(2))};
  for (int level = 0; level < TR_NLEVELS; level++) {
    double *v = NULL;
    int64_t n = 0;
    if (!draw(&c, level, &v, &n)) continue;
    check_fraction_below("cauchy", level, v, n, 1.0, 0.5);  /* the median */
    check_fraction_below("cauchy", level, v, n, -1.0, 0.25); /* median - sigma */
    check_fraction_below("cauchy", level, v, n, 3.0, 0.75);  /* median + sigma */
    free(v);
  }
}

TEST(random_gamma_and_dirichlet) {
  sampler small = {"aten._standard_gamma.default", ALLOY_F64, 0.5, 0, 0, .nargs = 0};
  check_sampler(&small, (expect){1e-300, INFINITY, false, false, 0.5, 0.5});
  sampler big = {"aten._standard_gamma.default", ALLOY_F32, 3, 0, 0, .nargs = 0};
  check_sampler(&big, (expect){1e-30, INFINITY, false, false, 3, 3});
  /* Dirichlet(2, 2): each coordinate Beta(2, 2), mean 1/2, variance 1/20 */
  sampler dir = {"aten._sample_dirichlet.default", ALLOY_F32, 2, N / 2, 2, .nargs = 0};
  check_sampler(&dir, (expect){0, 1, true, false, 0.5, 0.05});
}

/* ---- discrete ------------------------------------------------------------------------------------ */

TEST(random_geometric_counts_trials_from_one) {
  sampler g = {"aten.geometric.default", ALLOY_F32, 0, 0, 0, ARGS(FL(0.25))};
  check_sampler(&g, (expect){1, INFINITY, false, true, 4, 12});
  sampler gi = {"aten.geometric.default", ALLOY_I64, 0, 0, 0, ARGS(FL(0.5))};
  check_sampler(&gi, (expect){1, INFINITY, false, true, 2, 2});
}

TEST(random_random_and_randint_in_their_ranges) {
  sampler f = {"aten.random.from", ALLOY_F32, 0, 0, 0, ARGS(IN(3), IN(10))};
  check_sampler(&f, (expect){3, 10, false, true, 6, 4});
  sampler to = {"aten.random.to", ALLOY_I64, 0, 0, 0, ARGS(IN(100))};
  check_sampler(&to, (expect){0, 100, false, true, 49.5, (100.0 * 100 - 1) / 12});
  sampler d = {"aten.random.default", ALLOY_F32, 0, 0, 0, .nargs = 0};
  double top = 16777216; /* float32 draws [0, 2^24] */
  check_sampler(&d, (expect){0, top, true, true, top / 2, ((top + 1) * (top + 1) - 1) / 12});
  /* int64 without a bound: [0, 2^63), wider than any rule draws */
  sampler wide = {"aten.random.default", ALLOY_I64, 0, 0, 0, .nargs = 0};
  check_sampler(&wide, (expect){0, 0x1p63, false, true, 0x1p62, 0x1p126 / 12});
  alloy_arg size[1] = {IN(N)};
  sampler ri = {"aten.randint.low", ALLOY_DTYPE_COUNT, 0, 0, 0, ARGS(IN(-5), IN(5), alloy_arg_list(size, 1))};
  check_sampler(&ri, (expect){-5, 5, false, true, -0.5, 99.0 / 12});
  sampler rl = {"aten.randint_like.default", ALLOY_F32, 0, 0, 0, ARGS(IN(7))};
  check_sampler(&rl, (expect){0, 7, false, true, 3, 4});
}

TEST(random_randperm_is_a_permutation) {
  for (int level = 0; level < TR_NLEVELS; level++) {
    tr_case t;
    if (!tr_open(&t)) continue;
    alloy_arg args[1] = {IN(1000)};
    const char *kwn[1] = {"generator"};
    alloy_arg kw[1] = {alloy_arg_none()};
    alloy_node *node = tr_node(&t, "aten.randperm.generator", args, 1, kwn, kw, 1);
    alloy_value *out = node ? alloy_node_output(node, 0) : NULL;
    if (out && tr_run_level(&t, &out, 1, tr_levels[level], 0)) {
      const int64_t *v = t.out[0].data;
      static bool seen[1000];
      memset(seen, 0, sizeof seen);
      int bad = 0, moved = 0;
      for (int k = 0; k < 1000; k++) {
        if (v[k] < 0 || v[k] >= 1000 || seen[v[k]]) bad++;
        else seen[v[k]] = true;
        moved += v[k] != k;
      }
      CHECK_INT(bad, 0);
      CHECK(moved > 900); /* about 999 of 1000 places move */
    }
    tr_close(&t);
  }
}

TEST(random_poisson_and_binomial_have_their_moments) {
  sampler p = {"aten.poisson.default", ALLOY_F32, 3, 0, 0, .nargs = 0};
  check_sampler(&p, (expect){0, INFINITY, false, true, 3, 3});
  sampler pl = {"aten.poisson.default", ALLOY_F64, 50, 0, 0, .nargs = 0}; /* PTRS */
  check_sampler(&pl, (expect){0, INFINITY, false, true, 50, 50});
  for (int level = 0; level < TR_NLEVELS; level++)
    for (int big = 0; big < 2; big++) {
      double count = big ? 100 : 20, prob = big ? 0.6 : 0.3; /* BTRS, inversion */
      tr_case t;
      if (!tr_open(&t)) continue;
      static float cnt[N], pr[N];
      for (int k = 0; k < N; k++) cnt[k] = (float)count, pr[k] = (float)prob;
      alloy_arg args[2] = {tr_input1(&t, ALLOY_F32, N, cnt), tr_input1(&t, ALLOY_F32, N, pr)};
      alloy_node *node = tr_node(&t, "aten.binomial.default", args, 2, NULL, NULL, 0);
      alloy_value *out = node ? alloy_node_output(node, 0) : NULL;
      if (out && tr_run_level(&t, &out, 1, tr_levels[level], 0)) {
        double *v = malloc(sizeof *v * N);
        for (int k = 0; k < N; k++) v[k] = ((const float *)t.out[0].data)[k];
        check_support("binomial", level, v, N, 0, count, true, true);
        check_moments("binomial", level, v, N, count * prob, count * prob * (1 - prob));
        free(v);
      }
      tr_close(&t);
    }
}

/* multinomial: with replacement the categories come in proportion to the
 * weights (the zero weight never); without, each row's draws are
 * distinct and the first is drawn in proportion to the weights. */
TEST(random_multinomial_draws_in_proportion) {
  static float w[4 * N];
  const float weights[4] = {1, 2, 0, 5};
  for (int level = 0; level < TR_NLEVELS; level++)
    for (int replacement = 0; replacement < 2; replacement++) {
      tr_case t;
      if (!tr_open(&t)) continue;
      int64_t rows = replacement ? 1 : N, draws = replacement ? N : 3;
      for (int64_t k = 0; k < rows * 4; k++) w[k] = weights[k % 4];
      int64_t shape[2] = {rows, 4};
      alloy_arg args[3] = {tr_input(&t, ALLOY_F32, shape, 2, w), IN(draws), alloy_arg_bool(replacement)};
      alloy_node *node = tr_node(&t, "aten.multinomial.default", args, 3, NULL, NULL, 0);
      alloy_value *out = node ? alloy_node_output(node, 0) : NULL;
      if (out && tr_run_level(&t, &out, 1, tr_levels[level], 0)) {
        const int64_t *v = t.out[0].data;
        int64_t count[4] = {0}, bad = 0;
        for (int64_t r = 0; r < rows; r++) {
          const int64_t *row = v + r * draws;
          for (int64_t s = 0; s < draws; s++) {
            if (row[s] < 0 || row[s] > 3) {
              bad++;
              continue;
            }
            if (replacement || s == 0) count[row[s]]++;
            for (int64_t q = 0; q < s && !replacement; q++) bad += row[q] == row[s];
          }
          if (!replacement) bad += row[0] == 2 || row[1] == 2; /* zero weight: drawn last */
        }
        CHECK_INT(bad, 0);
        CHECK_INT(count[2], 0);
        for (int c = 0; c < 4; c++) {
          double p = weights[c] / 8.0, f = (double)count[c] / N, se = sqrt(p * (1 - p) / N);
          if (!(fabs(f - p) <= 6 * se + 1e-12))
            harness_fail(__FILE__, __LINE__, "multinomial (%s, replacement %d): category %d drawn %.4f, "
                         "expected %.4f", level_names[level], replacement, c, f, p);
        }
      }
      tr_close(&t);
    }
}

/* ---- dropouts ------------------------------------------------------------------------------------ */

TEST(random_dropouts_keep_their_share) {
  /* feature_dropout of ones [N/10, 10, 1]: each channel all 0 or 1/0.75 */
  sampler fd = {"aten.feature_dropout.default", ALLOY_F32, 1, N / 10, 10, ARGS(FL(0.25), alloy_arg_bool(true))};
  check_sampler(&fd, (expect){0, 1 / 0.75 + 1e-6, false, false, 1, 1.0 / 3});
  /* alpha_dropout keeps a standard normal's mean and variance; of zeros,
   * two values */
  sampler ad = {"aten.alpha_dropout.default", ALLOY_F32, 0, 0, 0, ARGS(FL(0.2), alloy_arg_bool(true))};
  for (int level = 0; level < TR_NLEVELS; level++) {
    double *v = NULL;
    int64_t n = 0;
    if (!draw(&ad, level, &v, &n)) continue;
    const double alpha = 1.7580993408473766, a = 1 / sqrt((alpha * alpha * 0.2 + 1) * 0.8);
    double kept = alpha * a * 0.2, dropped = -alpha * a + kept;
    int64_t bad = 0, ndrop = 0;
    for (int64_t k = 0; k < n; k++) {
      bool is_kept = fabs(v[k] - kept) < 1e-5, is_dropped = fabs(v[k] - dropped) < 1e-5;
      bad += !is_kept && !is_dropped, ndrop += is_dropped;
    }
    CHECK_INT(bad, 0);
    double f = (double)ndrop / (double)n;
    CHECK(fabs(f - 0.2) <= 6 * sqrt(0.2 * 0.8 / (double)n));
    free(v);
  }
  /* _fused_dropout keeps with probability p: mask mean p, values 1/p */
  sampler fu = {"aten._fused_dropout.default", ALLOY_F32, 1, 0, 0, ARGS(FL(0.8)), .output = 1};
  check_sampler(&fu, (expect){0, 1, true, true, 0.8, 0.16});
  sampler fv = {"aten._fused_dropout.default", ALLOY_F32, 1, 0, 0, ARGS(FL(0.8))};
  check_sampler(&fv, (expect){0, 1.25 + 1e-6, false, false, 1, 0.25});
}

/* ---- rrelu_with_noise_functional ------------------------------------------------------------ */

/* rrelu_with_noise_functional(x, noise, 0.1, 0.3, training): x of value xv
 * and noise of 0.5 everywhere. */
typedef struct {
  double xv;
  bool training;
} rrelu_case;

static float rrelu_x[N], rrelu_noise[N];

static alloy_node *build_rrelu(tr_case *t, const void *ctx) {
  const rrelu_case *r = ctx;
  for (int k = 0; k < N; k++) rrelu_x[k] = (float)r->xv, rrelu_noise[k] = 0.5f;
  alloy_arg args[5] = {tr_input1(t, ALLOY_F32, N, rrelu_x), tr_input1(t, ALLOY_F32, N, rrelu_noise),
                       FL(0.1), FL(0.3), alloy_arg_bool(r->training)};
  return tr_node(t, "aten.rrelu_with_noise_functional.default", args, 5, NULL, NULL, 0);
}

/* In training the new noise is the slope, uniform in [lower, upper], where
 * x <= 0 and 1 elsewhere, and the output is x times it; out of training
 * the noise comes back as it was and the slope is (lower + upper) / 2.
 * rrelu_with_noise_ and rrelu_with_noise.out run through this twin. */
TEST(random_rrelu_with_noise_functional_returns_its_noise) {
  const rrelu_case cases[] = {{-1, true}, {2, true}, {-1, false}};
  for (int c = 0; c < 3; c++) {
    tr_case t;
    if (!tr_run_built(&t, build_rrelu, &cases[c], tr_levels[TR_WHOLE])) {
      harness_fail(__FILE__, __LINE__, "rrelu_with_noise_functional case %d did not run", c);
      tr_close(&t);
      continue;
    }
    const alloy_host_tensor *out = &t.out[0], *noise = &t.out[1];
    CHECK_INT(tr_numel(noise), N);
    double *v = malloc(sizeof *v * N);
    int64_t bad = 0;
    for (int64_t k = 0; k < N; k++) {
      double y = tr_out_f(out, k), z = tr_out_f(noise, k), x = cases[c].xv;
      v[k] = z;
      if (!cases[c].training) bad += z != 0.5 || fabs(y - x * 0.2) > 1e-7;
      else if (x > 0) bad += z != 1 || y != x;
      else bad += z < 0.1 - 1e-7 || z > 0.3 + 1e-7 || fabs(y - x * z) > 1e-7;
    }
    CHECK_INT(bad, 0);
    if (cases[c].training && cases[c].xv < 0)
      check_moments("rrelu_with_noise_functional noise", TR_WHOLE, v, N, 0.2, 0.04 / 12);
    free(v);
    tr_close(&t);
  }
}

/* Each random node draws its own numbers, and a run draws new ones. */
TEST(random_nodes_and_runs_draw_apart) {
  tr_case t;
  if (!tr_open(&t)) return;
  alloy_arg size[1] = {IN(64)};
  alloy_arg args[1] = {alloy_arg_list(size, 1)};
  const char *kwn[1] = {"names"};
  alloy_arg kw[1] = {alloy_arg_none()};
  alloy_node *a = tr_node(&t, "aten.rand.names", args, 1, kwn, kw, 1);
  alloy_node *b = tr_node(&t, "aten.rand.names", args, 1, kwn, kw, 1);
  alloy_value *outs[2] = {a ? alloy_node_output(a, 0) : NULL, b ? alloy_node_output(b, 0) : NULL};
  if (outs[0] && outs[1] && tr_run_values(&t, outs, 2)) {
    float first[64];
    memcpy(first, t.out[0].data, sizeof first);
    CHECK(memcmp(first, t.out[1].data, sizeof first) != 0);
    alloy_error *e = alloy_program_run(t.prog, t.in, t.nin, t.out, 2);
    CHECK_OK(e);
    if (!e) CHECK(memcmp(first, t.out[0].data, sizeof first) != 0);
  }
  tr_close(&t);
}

/* ---- refusals ------------------------------------------------------------------------------------ */

/* The node is refused when it is built (a shape function's error). */
static void refused(const char *op, alloy_dtype in_dtype, const alloy_arg *rest, int nrest, const char *why) {
  tr_case t;
  if (!tr_open(&t)) return;
  alloy_arg args[5];
  int n = 0;
  static float x[8];
  static int64_t xi[8];
  if (in_dtype != ALLOY_DTYPE_COUNT) args[n++] = tr_input1(&t, in_dtype, 8, in_dtype == ALLOY_F32 ? (void *)x : xi);
  for (int k = 0; k < nrest; k++) args[n++] = rest[k];
  alloy_node *node = NULL;
  alloy_error *e = alloy_graph_add_node(t.g, alloy_op_find(op), args, n, NULL, NULL, 0, NULL, &node);
  if (!e) harness_fail(__FILE__, __LINE__, "%s: accepted, expected a refusal saying '%s'", op, why);
  else if (!strstr(alloy_error_message(e), why))
    harness_fail(__FILE__, __LINE__, "%s: refused with '%s', expected '%s'", op, alloy_error_message(e), why);
  alloy_error_free(e);
  tr_close(&t);
}

TEST(random_bad_parameters_are_refused) {
  refused("aten.bernoulli.p", ALLOY_F32, (alloy_arg[]){FL(1.5)}, 1, "bernoulli_ expects p to be in [0, 1]");
  refused("aten.uniform.default", ALLOY_F32, (alloy_arg[]){FL(2), FL(1)}, 2, "[from, to) range");
  refused("aten.uniform.default", ALLOY_I64, (alloy_arg[]){FL(0), FL(1)}, 2, "not implemented for 'int64'");
  refused("aten.exponential.default", ALLOY_F32, (alloy_arg[]){FL(0)}, 1, "expects lambda > 0.0");
  refused("aten.geometric.default", ALLOY_F32, (alloy_arg[]){FL(1)}, 1, "expects p to be in (0, 1)");
  refused("aten.log_normal.default", ALLOY_F32, (alloy_arg[]){FL(1), FL(0)}, 2, "expects std > 0.0");
  refused("aten.cauchy.default", ALLOY_I64, (alloy_arg[]){FL(0), FL(1)}, 2, "continuous probability distribution");
  refused("aten.normal_functional.default", ALLOY_F32, (alloy_arg[]){FL(0), FL(-1)}, 2, "std >= 0.0");
  refused("aten.random.from", ALLOY_F32, (alloy_arg[]){IN(10), IN(2)}, 2, "'from' to be less than 'to'");
  refused("aten.random.to", ALLOY_I64, (alloy_arg[]){IN(0)}, 1, "'from' to be less than 'to'");
  refused("aten.multinomial.default", ALLOY_F32, (alloy_arg[]){IN(9), alloy_arg_bool(false)}, 2,
          "samples without replacement");
  refused("aten.multinomial.default", ALLOY_I64, (alloy_arg[]){IN(1), alloy_arg_bool(true)}, 2,
          "floating-point dtypes");
  refused("aten._standard_gamma.default", ALLOY_I64, NULL, 0, "\"gamma_cpu\" not implemented");
  alloy_arg size[1] = {IN(3)};
  refused("aten.randint.low", ALLOY_DTYPE_COUNT, (alloy_arg[]){IN(5), IN(2), alloy_arg_list(size, 1)}, 3,
          "'from' to be less than 'to'");
}

/* Checks only the data can fail: the kernels refuse them when they run. */
TEST(random_bad_data_fails_the_run) {
  tr_case t;
  if (tr_open(&t)) {
    static float rate[3] = {1, -2, 3};
    alloy_arg args[1] = {tr_input1(&t, ALLOY_F32, 3, rate)};
    tr_run_fails(&t, "aten.poisson.default", args, 1, NULL, NULL, 0);
  }
  tr_close(&t);
  if (tr_open(&t)) {
    static float p[3] = {1, -1, 3};
    alloy_arg args[3] = {tr_input1(&t, ALLOY_F32, 3, p), IN(1), alloy_arg_bool(true)};
    tr_run_fails(&t, "aten.multinomial.default", args, 3, NULL, NULL, 0);
  }
  tr_close(&t);
}
