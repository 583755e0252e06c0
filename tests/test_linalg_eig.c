/*
 * tests/test_linalg_eig.c: linalg_eig and linalg_eigvals against PyTorch's
 * numbers. Their results are complex, which PyTorch's vectors
 * (tests/vectors/linalg) cannot store, so the cases are here: PyTorch
 * 2.11's results (printed for these matrices) for a 4 x 4 and a 5 x 5
 * float64 matrix (complex pairs among their eigenvalues), a lower
 * triangular one (balancing permutes it whole) and a float32 batch
 * (eigenvalues only: PyTorch runs LAPACK in float32, whose eigenvector
 * signs a double computation does not always reproduce). Eigenvalues come
 * in LAPACK's order and eigenvectors with its phases (the reference kernel
 * follows dgeev step for step, reference_backend/kernels_spectral.c);
 * each case runs whole and decomposed to Core ATen and to prims.
 */
#include <math.h>
#include <string.h>

#include "testref.h"

static const double a4[16] = {
    -0.31128955419003207, -0.71303027684011244, -0.72906815289537596, -0.29920233004408114,
    -0.25289846946006805, -0.36018000135378847, 0.93935326065578728, 1.16142070644801,
    -0.17056344098392059, 0.014932963521677391, -0.047594757595698013, 0.54801211008941897,
    -1.2490838162314513, 0.31951310205776567, 0.59445072434361801, 1.0562236505127134};
static const double a4_values[8] = {
    1.993247369198371, 0, -0.6117555691655816, 0.62672440078657077, -0.6117555691655816,
    -0.62672440078657077, -0.43257689349401324, 0};
static const double a4_vectors[32] = {
    -0.32986671796840672, 0, 0.67835082294104909, 0, 0.67835082294104909, -0, -0.47358453168261683,
    0, 0.50544009080160623, 0, 0.05862027302077058, -0.52294015936735794, 0.05862027302077058,
    0.52294015936735794, -0.43005873265249939, 0, 0.23578909466161402, 0, 0.07636585525931934,
    -0.19632177628199782, 0.07636585525931934, 0.19632177628199782, 0.5585158946942157, 0,
    0.76165724957218939, 0, 0.35543648998382771, 0.3036911790338741, 0.35543648998382771,
    -0.3036911790338741, -0.52804088212391498, 0};
static const double a5[25] = {
    0.80351570047588261, 0.37398581667628039, 0.57390084020911614, 1.5697184649359581,
    0.87344558494267721, -3.7046638002074288, -1.8141539905872015, -1.8425712793844078,
    -1.1827915167384517, -0.22406458625794728, -0.47924683852978128, -0.035173590480569297,
    -0.87770617040016741, 0.43782130291788796, -0.092546710987851527, -0.20027829232773128,
    0.25306794146620326, 0.71222186213909022, -0.79355167315584008, 1.0830498906376167,
    0.52376008482381997, -0.69417925727245078, -1.8018239852477405, 0.85814568084001253,
    -0.91693176601729387};
static const double a5_values[10] = {
    1.2206275018241279, 0, -2.3629485171334896, 0, -0.83390926535291199, 1.2816952023626502,
    -0.83390926535291199, -1.2816952023626502, -0.78868835366943357, 0};
static const double a5_vectors[50] = {
    -0.55008514081722948, 0, -0.050943863276093501, 0, 0.27387134613796243, 0.15889968502343971,
    0.27387134613796243, -0.15889968502343971, 0.045471461305533825, 0, 0.66575901378608293, 0,
    -0.12558160821427708, 0, -0.8089517063063365, 0, -0.8089517063063365, -0, -0.91689093244205555,
    0, 0.119225924656155, 0, -0.24953373079224822, 0, 0.02833056706120313, 0.15968240122786112,
    0.02833056706120313, -0.15968240122786112, 0.39201739488720749, 0, -0.079412095563383148, 0,
    0.62738232915933367, 0, -0.23071832963441219, 0.1975879815535887, -0.23071832963441219,
    -0.1975879815535887, 0.04843546330988531, 0, -0.48337373882202977, 0, -0.72509193398377669, 0,
    -0.0041953306366764786, -0.356022279574366, -0.0041953306366764786, 0.356022279574366,
    -0.034924664809862054, 0};
static const double t3[9] = {
    2, 0, 0, 1, 3, 0, 4, 5, 6};
static const double t3_values[6] = {
    6, 0, 3, 0, 2, 0};
static const double t3_vectors[18] = {
    0, 0, 0, 0, 0.69631062382279141, 0, 0, 0, 0.51449575542752657, 0, -0.69631062382279141, 0, 1, 0,
    -0.85749292571254432, 0, 0.17407765595569785, 0};
static const float f3[18] = {
    1.2857844829559326, 0.81682384014129639, -0.3029974102973938, -1.7618416547775269,
    0.63484460115432739, -0.8043590784072876, -1.0371166467666626, -1.06690514087677,
    -0.20850393176078796, -0.21552248299121857, 2.2952115535736084, 0.67490595579147339,
    1.7133215665817261, -1.7942733764648438, -1.520801305770874, 0.91957539319992065,
    -0.54835236072540283, -0.34724023938179016};
static const double f3_values[12] = {
    -0.70035743713378906, 0, 1.206241250038147, 0.95764940977096558, 1.206241250038147,
    -0.95764940977096558, -3.6389832496643066, 0, 0.86069279909133911, 0, 0.42125338315963745, 0};

typedef struct {
  const char *name;
  alloy_dtype dtype;
  int batch, n;
  const void *matrix;
  const double *values, *vectors; /* vectors NULL: eigvals only */
} eig_case;

static alloy_node *build(tr_case *t, const void *ctx) {
  const eig_case *c = ctx;
  static double m64[64];
  static float m32[64];
  size_t count = (size_t)(c->batch * c->n * c->n);
  if (c->dtype == ALLOY_F64) memcpy(m64, c->matrix, sizeof *m64 * count);
  else memcpy(m32, c->matrix, sizeof *m32 * count);
  int64_t shape[3] = {c->batch, c->n, c->n};
  alloy_arg a = c->batch > 1 ? tr_input(t, c->dtype, shape, 3, c->dtype == ALLOY_F64 ? (void *)m64 : m32)
                             : tr_input(t, c->dtype, shape + 1, 2, c->dtype == ALLOY_F64 ? (void *)m64 : m32);
  return tr_node(t, c->vectors ? "aten.linalg_eig.default" : "aten.linalg_eigvals.default", &a, 1, NULL, NULL, 0);
}

/* A complex output against PyTorch's (real, imaginary) pairs. */
static void check_complex(const char *what, int level, const alloy_host_tensor *h, const double *want, int count,
                          double tol) {
  for (int k = 0; k < 2 * count; k++) {
    double got = h->dtype == ALLOY_C128 ? ((const double *)h->data)[k] : ((const float *)h->data)[k];
    if (!(fabs(got - want[k]) <= tol + tol * fabs(want[k]))) {
      harness_fail(__FILE__, __LINE__, "%s (level %d): element %d (%s part) is %.17g, expected %.17g", what, level,
                   k / 2, k % 2 ? "imaginary" : "real", got, want[k]);
      return;
    }
  }
}

TEST(linalg_eig_matches_pytorch) {
  const eig_case cases[] = {
      {"eig 4x4", ALLOY_F64, 1, 4, a4, a4_values, a4_vectors},
      {"eig 5x5", ALLOY_F64, 1, 5, a5, a5_values, a5_vectors},
      {"eig triangular", ALLOY_F64, 1, 3, t3, t3_values, t3_vectors},
      {"eigvals float32 batch", ALLOY_F32, 2, 3, f3, f3_values, NULL},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
    for (int level = 0; level < TR_NLEVELS; level++) {
      const eig_case *c = &cases[k];
      tr_case t;
      if (tr_run_built(&t, build, c, tr_levels[level])) {
        double tol = c->dtype == ALLOY_F64 ? 1e-10 : 1e-5;
        alloy_dtype want = c->dtype == ALLOY_F64 ? ALLOY_C128 : ALLOY_C64;
        if (t.out[0].dtype != want) harness_fail(__FILE__, __LINE__, "%s: eigenvalues not %s", c->name, alloy_dtype_name(want));
        else check_complex(c->name, level, &t.out[0], c->values, c->batch * c->n, tol);
        if (c->vectors) check_complex(c->name, level, &t.out[1], c->vectors, c->n * c->n, tol);
      }
      tr_close(&t);
    }
}

/* LAPACK's refusal of infinities and NaNs, which only the data shows. */
TEST(linalg_eig_refuses_non_finite_input) {
  tr_case t;
  if (tr_open(&t)) {
    static double m[4] = {1, NAN, 0, 2};
    int64_t s[2] = {2, 2};
    alloy_arg a = tr_input(&t, ALLOY_F64, s, 2, m);
    tr_run_fails(&t, "aten.linalg_eig.default", &a, 1, NULL, NULL, 0);
  }
  tr_close(&t);
}
