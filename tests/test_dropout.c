/*
 * tests/test_dropout.c: the dropouts checked by distribution, as random ops
 * must be (their numbers are the reference backend's Philox stream, not
 * PyTorch's): dropout, native_dropout, feature_dropout, alpha_dropout and
 * feature_alpha_dropout, each run whole on "ref" and decomposed to Core
 * ATen and to prims. In training, over 10^5 elements of ones, the share of
 * dropped elements (or channels, for the feature forms) is p within five
 * standard deviations, every kept element is 1 / (1 - p) (alpha forms: the
 * two values their affine map gives), a channel is dropped or kept whole,
 * and native_dropout's mask says which. Out of training each passes its
 * input through unchanged (native_dropout's mask all true); p == 1 zeroes
 * it. Two runs of one graph draw different masks: the stream moves on.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testref.h"

enum { N = 100000, CH = 10, PLANE = 10 }; /* feature forms: [N / 100, 10, 10] */

typedef struct drop_case {
  const char *op;
  bool feature;  /* [N / 100, CH, PLANE]; else [N] */
  double p;
  bool train;
  float *data;   /* the input, N values */
} drop_case;

static alloy_node *build_drop(tr_case *t, const void *ctx) {
  const drop_case *dc = ctx;
  int64_t flat[1] = {N}, chan[3] = {N / (CH * PLANE), CH, PLANE};
  alloy_arg args[3] = {dc->feature ? tr_input(t, ALLOY_F32, chan, 3, dc->data)
                                   : tr_input(t, ALLOY_F32, flat, 1, dc->data),
                       alloy_arg_float(dc->p), alloy_arg_bool(dc->train)};
  return tr_node(t, dc->op, args, 3, NULL, NULL, 0);
}

static float *ones(void) {
  float *v = malloc(sizeof *v * N);
  for (int i = 0; v && i < N; i++) v[i] = 1.0f;
  return v;
}

/* Runs the case at a level: output 0 (and output 1, native_dropout's mask,
 * when mask is not NULL) copied out as doubles. */
static bool run_drop(const drop_case *dc, int level, double *out, double *mask) {
  tr_case t;
  bool ok = tr_run_built(&t, build_drop, dc, tr_levels[level]);
  if (ok && tr_numel(&t.out[0]) != N) {
    harness_fail(__FILE__, __LINE__, "%s: %lld elements, want %d", dc->op,
                 (long long)tr_numel(&t.out[0]), N);
    ok = false;
  }
  for (int64_t k = 0; ok && k < N; k++) {
    out[k] = tr_out_f(&t.out[0], k);
    if (mask) mask[k] = tr_out_f(&t.out[1], k);
  }
  if (!ok) harness_fail(__FILE__, __LINE__, "%s did not run at level %d", dc->op, level);
  tr_close(&t);
  return ok;
}

static bool near(double got, double want) { return fabs(got - want) <= 1e-6 * fabs(want); }

/* The two values a training step leaves an element of 1: kept and
 * dropped. */
static void step_values(const char *op, double p, double *kept, double *dropped) {
  if (strstr(op, "alpha")) {
    const double alpha = 1.7580993408473766;
    double a = 1 / sqrt((alpha * alpha * p + 1) * (1 - p));
    *kept = (float)((float)a + (float)(alpha * a * p));
    *dropped = (float)(-alpha * a + alpha * a * p);
  } else {
    *kept = (float)(1 / (1 - p));
    *dropped = 0;
  }
}

/* A training case: values, the dropped share, whole channels, the mask. */
static void check_training(const drop_case *dc, int level) {
  double *out = malloc(sizeof *out * N), *mask = malloc(sizeof *mask * N);
  bool native = !strcmp(dc->op, "aten.native_dropout.default");
  if (!out || !mask || !run_drop(dc, level, out, native ? mask : NULL)) goto done;
  double kept, dropped;
  step_values(dc->op, dc->p, &kept, &dropped);
  int64_t ndrop = 0, bad = 0, split = 0, wrong_mask = 0;
  for (int64_t k = 0; k < N; k++) {
    bool is_kept = near(out[k], kept), is_dropped = near(out[k], dropped);
    bad += !is_kept && !is_dropped;
    ndrop += is_dropped;
    if (native) wrong_mask += (mask[k] != 0) != is_kept;
    if (dc->feature && k % PLANE) split += near(out[k], kept) != near(out[k - 1], kept);
  }
  int64_t units = dc->feature ? N / PLANE : N;
  double share = (double)ndrop / (double)N, sd = sqrt(dc->p * (1 - dc->p) / (double)units);
  if (bad || split || wrong_mask || fabs(share - dc->p) > 5 * sd)
    harness_fail(__FILE__, __LINE__,
                 "%s (p=%g) level %d: %lld values neither %g nor %g, %lld channels split, %lld "
                 "mask disagreements, dropped share %.4f (want %g +- %.4f)",
                 dc->op, dc->p, level, (long long)bad, kept, dropped, (long long)split,
                 (long long)wrong_mask, share, dc->p, 5 * sd);
done:
  free(out);
  free(mask);
}

static const char *const ops[] = {"aten.dropout.default", "aten.native_dropout.default",
                                  "aten.feature_dropout.default", "aten.alpha_dropout.default",
                                  "aten.feature_alpha_dropout.default"};

TEST(dropouts_in_training_drop_a_share_p_and_scale_the_rest) {
  float *x = ones();
  REQUIRE(x);
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
    for (int level = 0; level < TR_NLEVELS; level++) {
      drop_case dc = {ops[i], strstr(ops[i], "feature") != NULL, i % 2 ? 0.2 : 0.35, true, x};
      check_training(&dc, level);
    }
  free(x);
}

TEST(dropouts_out_of_training_pass_their_input) {
  float *x = malloc(sizeof *x * N);
  double *out = malloc(sizeof *out * N), *mask = malloc(sizeof *mask * N);
  REQUIRE(x && out && mask);
  for (int k = 0; k < N; k++) x[k] = (float)sin(k * 0.37) * 3.0f;
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
    for (int level = 0; level < TR_NLEVELS; level++) {
      bool native = i == 1;
      drop_case dc = {ops[i], strstr(ops[i], "feature") != NULL, 0.5, false, x};
      if (!run_drop(&dc, level, out, native ? mask : NULL)) continue;
      int64_t bad = 0;
      for (int k = 0; k < N; k++) bad += out[k] != x[k] || (native && mask[k] != 1);
      if (bad)
        harness_fail(__FILE__, __LINE__, "%s level %d: %lld elements changed", ops[i], level,
                     (long long)bad);
    }
  free(x);
  free(out);
  free(mask);
}

TEST(dropout_of_p_one_zeroes_and_p_zero_keeps) {
  float *x = ones();
  double *out = malloc(sizeof *out * N);
  REQUIRE(x && out);
  for (int level = 0; level < TR_NLEVELS; level++)
    for (int one = 0; one < 2; one++) {
      drop_case dc = {"aten.dropout.default", false, one ? 1.0 : 0.0, true, x};
      if (!run_drop(&dc, level, out, NULL)) continue;
      int64_t bad = 0;
      for (int k = 0; k < N; k++) bad += out[k] != (one ? 0.0 : 1.0);
      CHECK(bad == 0);
    }
  free(x);
  free(out);
}

/* The reference backend's stream moves on from run to run of a program
 * (as a second torch call draws new numbers): two runs drop different
 * elements, each its share. */
TEST(dropout_runs_draw_new_masks) {
  float *x = ones();
  double *a = malloc(sizeof *a * N);
  REQUIRE(x && a);
  drop_case dc = {"aten.dropout.default", false, 0.5, true, x};
  tr_case t;
  if (tr_run_built(&t, build_drop, &dc, ALLOY_DECOMPOSE_AUTO)) {
    for (int k = 0; k < N; k++) a[k] = tr_out_f(&t.out[0], k);
    alloy_error *e = alloy_program_run(t.prog, t.in, t.nin, t.out, 1);
    CHECK(e == NULL);
    alloy_error_free(e);
    int64_t differ = 0;
    for (int k = 0; !e && k < N; k++) differ += (a[k] == 0) != (tr_out_f(&t.out[0], k) == 0);
    /* independent masks differ in half the places, sd sqrt(N / 4) */
    if (!(differ > N / 2 - 5 * 158 && differ < N / 2 + 5 * 158))
      harness_fail(__FILE__, __LINE__, "the masks differ in %lld places", (long long)differ);
  }
  tr_close(&t);
  free(x);
  free(a);
}
