/*
 * tests/test_promote.c: type promotion against PyTorch's answers. Expected
 * values are what torch.promote_types / torch.result_type /
 * torch._prims_common give, read off c10's table and ATen's and
 * _prims_common's code.
 */
#include "harness.h"

#include "ir/promote.h"

#define N_OPS(arr) ((int)(sizeof(arr) / sizeof((arr)[0])))
/* Result type of a literal operand list: RT(T(ALLOY_I32), S(ALLOY_F64)). */
#define RT(...)                                                      \
  alloy_result_type((const alloy_promo_operand[]){__VA_ARGS__},      \
                    N_OPS(((const alloy_promo_operand[]){__VA_ARGS__})))

static alloy_promo_operand T(alloy_dtype t) {
  return (alloy_promo_operand){ALLOY_PROMO_TENSOR, t};
}
static alloy_promo_operand Z(alloy_dtype t) {
  return (alloy_promo_operand){ALLOY_PROMO_ZERO_DIM, t};
}
static alloy_promo_operand S(alloy_dtype t) {
  return (alloy_promo_operand){ALLOY_PROMO_SCALAR, t};
}
static const alloy_promo_operand NONE = {ALLOY_PROMO_ABSENT, ALLOY_F64};

TEST(promote_types_pairs) {
  static const struct {
    alloy_dtype a, b, want;
  } cases[] = {
      {ALLOY_U8, ALLOY_I8, ALLOY_I16},      {ALLOY_F16, ALLOY_BF16, ALLOY_F32},
      {ALLOY_I32, ALLOY_F16, ALLOY_F16},    {ALLOY_I64, ALLOY_F16, ALLOY_F16},
      {ALLOY_I64, ALLOY_BF16, ALLOY_BF16},  {ALLOY_U8, ALLOY_I16, ALLOY_I16},
      {ALLOY_U8, ALLOY_I32, ALLOY_I32},     {ALLOY_U8, ALLOY_I64, ALLOY_I64},
      {ALLOY_I8, ALLOY_I16, ALLOY_I16},     {ALLOY_I16, ALLOY_I32, ALLOY_I32},
      {ALLOY_I32, ALLOY_I64, ALLOY_I64},    {ALLOY_BOOL, ALLOY_U8, ALLOY_U8},
      {ALLOY_BOOL, ALLOY_I8, ALLOY_I8},     {ALLOY_BOOL, ALLOY_I64, ALLOY_I64},
      {ALLOY_BOOL, ALLOY_F16, ALLOY_F16},
      {ALLOY_BOOL, ALLOY_BF16, ALLOY_BF16},
      {ALLOY_BOOL, ALLOY_C128, ALLOY_C128},
      {ALLOY_BOOL, ALLOY_BOOL, ALLOY_BOOL},
      {ALLOY_U8, ALLOY_U8, ALLOY_U8},       {ALLOY_U8, ALLOY_F16, ALLOY_F16},
      {ALLOY_I8, ALLOY_BF16, ALLOY_BF16},   {ALLOY_F16, ALLOY_F32, ALLOY_F32},
      {ALLOY_BF16, ALLOY_F32, ALLOY_F32},   {ALLOY_F16, ALLOY_F64, ALLOY_F64},
      {ALLOY_F32, ALLOY_F64, ALLOY_F64},    {ALLOY_I64, ALLOY_F32, ALLOY_F32},
      {ALLOY_I64, ALLOY_F64, ALLOY_F64},    {ALLOY_F16, ALLOY_C64, ALLOY_C64},
      {ALLOY_BF16, ALLOY_C64, ALLOY_C64},   {ALLOY_F32, ALLOY_C64, ALLOY_C64},
      {ALLOY_F64, ALLOY_C64, ALLOY_C128},   {ALLOY_C64, ALLOY_C128, ALLOY_C128},
      {ALLOY_I64, ALLOY_C64, ALLOY_C64},    {ALLOY_F32, ALLOY_C128, ALLOY_C128},
  };
  for (int i = 0; i < N_OPS(cases); i++) {
    CHECK_INT(alloy_promote_types(cases[i].a, cases[i].b), cases[i].want);
    CHECK_INT(alloy_promote_types(cases[i].b, cases[i].a), cases[i].want);
  }
}

TEST(promote_types_table_properties) {
  for (int a = 0; a < ALLOY_DTYPE_COUNT; a++) {
    alloy_dtype ta = (alloy_dtype)a;
    CHECK_INT(alloy_promote_types(ta, ta), ta);
    CHECK_INT(alloy_promote_types(ALLOY_BOOL, ta), ta);
    CHECK_INT(alloy_promote_types(ALLOY_C128, ta), ALLOY_C128);
    for (int b = 0; b < ALLOY_DTYPE_COUNT; b++) {
      alloy_dtype tb = (alloy_dtype)b, ab = alloy_promote_types(ta, tb);
      CHECK_INT(ab, alloy_promote_types(tb, ta));
      /* An upper bound of both: promoting either operand into it is a no-op. */
      CHECK_INT(alloy_promote_types(ab, ta), ab);
      CHECK_INT(alloy_promote_types(ab, tb), ab);
      /* Associative, so result_type does not depend on operand order. */
      for (int c = 0; c < ALLOY_DTYPE_COUNT; c++) {
        alloy_dtype tc = (alloy_dtype)c;
        CHECK_INT(alloy_promote_types(ab, tc),
                  alloy_promote_types(ta, alloy_promote_types(tb, tc)));
      }
    }
  }
}

TEST(promote_types_invalid) {
  CHECK_INT(alloy_promote_types(ALLOY_DTYPE_COUNT, ALLOY_F32),
            ALLOY_DTYPE_COUNT);
  CHECK_INT(alloy_promote_types(ALLOY_F32, (alloy_dtype)-1), ALLOY_DTYPE_COUNT);
}

TEST(result_type_examples) {
  /* Python numbers: float is the default float32, int int64. */
  CHECK_INT(RT(T(ALLOY_I32), S(ALLOY_F64)), ALLOY_F32);
  CHECK_INT(RT(T(ALLOY_I64), S(ALLOY_I64)), ALLOY_I64);
  CHECK_INT(RT(T(ALLOY_U8), S(ALLOY_I64)), ALLOY_U8);
  CHECK_INT(RT(T(ALLOY_F16), S(ALLOY_F64)), ALLOY_F16);
  CHECK_INT(RT(T(ALLOY_BOOL), S(ALLOY_I64)), ALLOY_I64);
  CHECK_INT(RT(T(ALLOY_BOOL), S(ALLOY_BOOL)), ALLOY_BOOL);
  CHECK_INT(RT(T(ALLOY_BOOL), S(ALLOY_F64)), ALLOY_F32);
  /* Zero-dim tensors matter only across categories. */
  CHECK_INT(RT(T(ALLOY_F16), Z(ALLOY_F32)), ALLOY_F16);
  CHECK_INT(RT(T(ALLOY_I32), Z(ALLOY_F64)), ALLOY_F64);
  CHECK_INT(RT(T(ALLOY_I32), Z(ALLOY_I64)), ALLOY_I32);
  CHECK_INT(RT(T(ALLOY_U8), Z(ALLOY_I8)), ALLOY_U8);
  CHECK_INT(RT(T(ALLOY_BOOL), Z(ALLOY_BOOL)), ALLOY_BOOL);
  CHECK_INT(RT(T(ALLOY_BOOL), Z(ALLOY_I8)), ALLOY_I8);
  CHECK_INT(RT(T(ALLOY_BOOL), Z(ALLOY_F16)), ALLOY_F16);
  CHECK_INT(RT(Z(ALLOY_I32), S(ALLOY_F64)), ALLOY_F32);
  CHECK_INT(RT(Z(ALLOY_F64), S(ALLOY_F64)), ALLOY_F64);
  CHECK_INT(RT(Z(ALLOY_I32), S(ALLOY_I64)), ALLOY_I32);
  CHECK_INT(RT(Z(ALLOY_U8), Z(ALLOY_I8)), ALLOY_I16);
  /* A zero-dim float outranks the Python float, then loses to the tensor. */
  CHECK_INT(RT(T(ALLOY_I32), Z(ALLOY_F64), S(ALLOY_F64)), ALLOY_F64);
  CHECK_INT(RT(T(ALLOY_F16), Z(ALLOY_F64), S(ALLOY_F64)), ALLOY_F16);
  CHECK_INT(RT(T(ALLOY_I32), Z(ALLOY_I64), S(ALLOY_F64)), ALLOY_F32);
  /* Dimensioned tensors use the lattice among themselves. */
  CHECK_INT(RT(T(ALLOY_BF16), T(ALLOY_F16)), ALLOY_F32);
  CHECK_INT(RT(T(ALLOY_U8), T(ALLOY_I8)), ALLOY_I16);
  CHECK_INT(RT(T(ALLOY_I64), T(ALLOY_F16)), ALLOY_F16);
  /* Only Python numbers. */
  CHECK_INT(RT(S(ALLOY_I64), S(ALLOY_I64)), ALLOY_I64);
  CHECK_INT(RT(S(ALLOY_F64)), ALLOY_F32);
  CHECK_INT(RT(S(ALLOY_I64), S(ALLOY_F64)), ALLOY_F32);
  CHECK_INT(RT(S(ALLOY_BOOL), S(ALLOY_BOOL)), ALLOY_BOOL);
  CHECK_INT(RT(S(ALLOY_BOOL), S(ALLOY_I64)), ALLOY_I64);
}

TEST(result_type_absent_and_order) {
  CHECK_INT(alloy_result_type(NULL, 0), ALLOY_F32);
  CHECK_INT(RT(NONE), ALLOY_F32);
  CHECK_INT(RT(NONE, NONE), ALLOY_F32);
  CHECK_INT(RT(NONE, T(ALLOY_I8), NONE), ALLOY_I8);
  CHECK_INT(RT(S(ALLOY_F64), T(ALLOY_I32)), ALLOY_F32);
  CHECK_INT(RT(Z(ALLOY_F32), T(ALLOY_F16)), ALLOY_F16);
  /* A garbage operand gives the out-of-range dtype, never a plausible one. */
  CHECK_INT(RT(T(ALLOY_F32), T(ALLOY_DTYPE_COUNT)), ALLOY_DTYPE_COUNT);
  CHECK_INT(RT((alloy_promo_operand){(alloy_promo_operand_kind)9, ALLOY_F32}),
            ALLOY_DTYPE_COUNT);
}

TEST(result_type_complex) {
  /* A Python complex is complex64; a float tensor keeps its own width. */
  CHECK_INT(RT(T(ALLOY_I32), S(ALLOY_C128)), ALLOY_C64);
  CHECK_INT(RT(T(ALLOY_F32), S(ALLOY_C128)), ALLOY_C64);
  CHECK_INT(RT(T(ALLOY_F64), S(ALLOY_C128)), ALLOY_C128);
  CHECK_INT(RT(T(ALLOY_BF16), S(ALLOY_C128)), ALLOY_C64);
  CHECK_INT(RT(Z(ALLOY_F64), S(ALLOY_C64)), ALLOY_C128);
  /* PyTorch 2.x: float32 tensor + zero-dim complex128 is complex64. */
  CHECK_INT(RT(T(ALLOY_F32), Z(ALLOY_C128)), ALLOY_C64);
  CHECK_INT(RT(T(ALLOY_I32), Z(ALLOY_C128)), ALLOY_C128);
  CHECK_INT(RT(T(ALLOY_C64), Z(ALLOY_C128)), ALLOY_C64);
  CHECK_INT(RT(T(ALLOY_F64), T(ALLOY_C64)), ALLOY_C128);
  /* PyTorch says complex32, which Alloy lacks: complex64 stands in. */
  CHECK_INT(RT(T(ALLOY_F16), S(ALLOY_C128)), ALLOY_C64);
  CHECK_INT(RT(T(ALLOY_I8), Z(ALLOY_F16), S(ALLOY_C128)), ALLOY_C64);
}

TEST(opmath_dtype) {
  CHECK_INT(alloy_opmath_dtype(ALLOY_F16), ALLOY_F32);
  CHECK_INT(alloy_opmath_dtype(ALLOY_BF16), ALLOY_F32);
  CHECK_INT(alloy_opmath_dtype(ALLOY_F32), ALLOY_F32);
  CHECK_INT(alloy_opmath_dtype(ALLOY_F64), ALLOY_F64);
  CHECK_INT(alloy_opmath_dtype(ALLOY_I8), ALLOY_I8);
  CHECK_INT(alloy_opmath_dtype(ALLOY_BOOL), ALLOY_BOOL);
  CHECK_INT(alloy_opmath_dtype(ALLOY_C64), ALLOY_C64);
}

/* Checks elementwise_dtypes(ops, kind) == (compute, result). */
static void check_ew(int line, const alloy_promo_operand *ops, int n,
                     alloy_promo_kind kind, alloy_dtype want_compute,
                     alloy_dtype want_result) {
  alloy_dtype compute = ALLOY_DTYPE_COUNT, result = ALLOY_DTYPE_COUNT;
  alloy_elementwise_dtypes(ops, n, kind, &compute, &result);
  if (compute != want_compute || result != want_result)
    harness_fail(__FILE__, line, "kind %d: got (%s, %s), expected (%s, %s)",
                 (int)kind, alloy_dtype_name(compute), alloy_dtype_name(result),
                 alloy_dtype_name(want_compute), alloy_dtype_name(want_result));
}
#define EW(kind, want_compute, want_result, ...)                            \
  check_ew(__LINE__, (const alloy_promo_operand[]){__VA_ARGS__},            \
           N_OPS(((const alloy_promo_operand[]){__VA_ARGS__})), kind,       \
           want_compute, want_result)

TEST(elementwise_default_and_no_opmath) {
  EW(ALLOY_PROMO_DEFAULT, ALLOY_F32, ALLOY_F16, T(ALLOY_F16), S(ALLOY_F64));
  EW(ALLOY_PROMO_DEFAULT, ALLOY_F32, ALLOY_F32, T(ALLOY_BF16), T(ALLOY_F16));
  EW(ALLOY_PROMO_DEFAULT, ALLOY_I32, ALLOY_I32, T(ALLOY_I32), Z(ALLOY_I64));
  EW(ALLOY_PROMO_DEFAULT, ALLOY_F64, ALLOY_F64, T(ALLOY_I32), Z(ALLOY_F64));
  EW(ALLOY_PROMO_DEFAULT, ALLOY_I16, ALLOY_I16, T(ALLOY_U8), T(ALLOY_I8));
  EW(ALLOY_PROMO_DEFAULT, ALLOY_I64, ALLOY_I64, T(ALLOY_BOOL), S(ALLOY_I64));
  EW(ALLOY_PROMO_NO_OPMATH, ALLOY_F16, ALLOY_F16, T(ALLOY_F16), T(ALLOY_F16));
  EW(ALLOY_PROMO_NO_OPMATH, ALLOY_BF16, ALLOY_BF16, T(ALLOY_BF16),
     S(ALLOY_F64));
  EW(ALLOY_PROMO_NO_OPMATH, ALLOY_BOOL, ALLOY_BOOL, T(ALLOY_BOOL),
     T(ALLOY_BOOL));
}

TEST(elementwise_int_to_float) {
  EW(ALLOY_PROMO_INT_TO_FLOAT, ALLOY_F32, ALLOY_F32, T(ALLOY_I32));
  EW(ALLOY_PROMO_INT_TO_FLOAT, ALLOY_F32, ALLOY_F32, T(ALLOY_BOOL));
  EW(ALLOY_PROMO_INT_TO_FLOAT, ALLOY_F32, ALLOY_F32, T(ALLOY_I64),
     S(ALLOY_I64));
  EW(ALLOY_PROMO_INT_TO_FLOAT, ALLOY_F32, ALLOY_F16, T(ALLOY_F16));
  EW(ALLOY_PROMO_INT_TO_FLOAT, ALLOY_F64, ALLOY_F64, T(ALLOY_I64),
     Z(ALLOY_F64));
  EW(ALLOY_PROMO_INT_TO_FLOAT, ALLOY_C64, ALLOY_C64, T(ALLOY_C64));
}

TEST(elementwise_always_bool) {
  EW(ALLOY_PROMO_ALWAYS_BOOL, ALLOY_F32, ALLOY_BOOL, T(ALLOY_F16),
     T(ALLOY_F16));
  EW(ALLOY_PROMO_ALWAYS_BOOL, ALLOY_I64, ALLOY_BOOL, T(ALLOY_I64),
     S(ALLOY_I64));
  EW(ALLOY_PROMO_ALWAYS_BOOL, ALLOY_F32, ALLOY_BOOL, T(ALLOY_I32),
     S(ALLOY_F64));
  EW(ALLOY_PROMO_ALWAYS_BOOL, ALLOY_BOOL, ALLOY_BOOL, T(ALLOY_BOOL),
     Z(ALLOY_BOOL));
}

TEST(elementwise_complex_to_float) {
  EW(ALLOY_PROMO_COMPLEX_TO_FLOAT, ALLOY_C64, ALLOY_F32, T(ALLOY_C64));
  EW(ALLOY_PROMO_COMPLEX_TO_FLOAT, ALLOY_C128, ALLOY_F64, T(ALLOY_C128));
  EW(ALLOY_PROMO_COMPLEX_TO_FLOAT, ALLOY_F32, ALLOY_BF16, T(ALLOY_BF16));
  EW(ALLOY_PROMO_COMPLEX_TO_FLOAT, ALLOY_I8, ALLOY_I8, T(ALLOY_I8));
  /* float16 * 1j is complex32 in PyTorch; its real part is float16 again. */
  EW(ALLOY_PROMO_COMPLEX_TO_FLOAT, ALLOY_C64, ALLOY_F16, T(ALLOY_F16),
     S(ALLOY_C128));
  EW(ALLOY_PROMO_DEFAULT, ALLOY_C64, ALLOY_C64, T(ALLOY_F16), S(ALLOY_C128));
}

TEST(elementwise_bool_to_long) {
  EW(ALLOY_PROMO_BOOL_TO_LONG, ALLOY_I64, ALLOY_I64, T(ALLOY_BOOL),
     T(ALLOY_BOOL));
  EW(ALLOY_PROMO_BOOL_TO_LONG, ALLOY_I64, ALLOY_I64, T(ALLOY_BOOL),
     S(ALLOY_BOOL));
  EW(ALLOY_PROMO_BOOL_TO_LONG, ALLOY_I32, ALLOY_I32, T(ALLOY_I32),
     S(ALLOY_I64));
  EW(ALLOY_PROMO_BOOL_TO_LONG, ALLOY_F32, ALLOY_F16, T(ALLOY_F16),
     S(ALLOY_I64));
  EW(ALLOY_PROMO_BOOL_TO_LONG, ALLOY_U8, ALLOY_U8, T(ALLOY_BOOL),
     T(ALLOY_U8));
}

TEST(elementwise_edge_cases) {
  /* No operands: _prims_common's highest type starts at bool. */
  alloy_dtype c = ALLOY_DTYPE_COUNT, r = ALLOY_DTYPE_COUNT;
  alloy_elementwise_dtypes(NULL, 0, ALLOY_PROMO_DEFAULT, &c, &r);
  CHECK_INT(c, ALLOY_BOOL);
  CHECK_INT(r, ALLOY_BOOL);
  EW(ALLOY_PROMO_DEFAULT, ALLOY_BOOL, ALLOY_BOOL, NONE);
  EW(ALLOY_PROMO_DEFAULT, ALLOY_F32, ALLOY_F32, S(ALLOY_F64), NONE);
  EW(ALLOY_PROMO_DEFAULT, ALLOY_C64, ALLOY_C64, S(ALLOY_C128));
  EW(ALLOY_PROMO_DEFAULT, ALLOY_DTYPE_COUNT, ALLOY_DTYPE_COUNT, T(ALLOY_F32),
     Z((alloy_dtype)-3));
  EW((alloy_promo_kind)42, ALLOY_DTYPE_COUNT, ALLOY_DTYPE_COUNT, T(ALLOY_F32));
}

/* _prims_common and ATen reach the dtype by different roads; over every list
 * of up to three operands they must land on the same one. */
TEST(elementwise_agrees_with_result_type) {
  alloy_promo_operand choices[1 + 2 * ALLOY_DTYPE_COUNT + 4];
  int nc = 0;
  choices[nc++] = NONE;
  for (int t = 0; t < ALLOY_DTYPE_COUNT; t++) {
    choices[nc++] = T((alloy_dtype)t);
    choices[nc++] = Z((alloy_dtype)t);
  }
  choices[nc++] = S(ALLOY_BOOL);
  choices[nc++] = S(ALLOY_I64);
  choices[nc++] = S(ALLOY_F64);
  choices[nc++] = S(ALLOY_C128);
  int mismatches = 0;
  for (int i = 0; i < nc; i++)
    for (int j = 0; j < nc; j++)
      for (int k = 0; k < nc; k++) {
        alloy_promo_operand ops[3] = {choices[i], choices[j], choices[k]};
        if (i == 0 && j == 0 && k == 0) continue; /* empty: bool vs f32 */
        alloy_dtype compute, result;
        alloy_elementwise_dtypes(ops, 3, ALLOY_PROMO_DEFAULT, &compute,
                                 &result);
        alloy_dtype want = alloy_result_type(ops, 3);
        if ((result != want || compute != alloy_opmath_dtype(want)) &&
            mismatches++ < 5)
          harness_fail(__FILE__, __LINE__,
                       "ops %d,%d,%d: elementwise (%s, %s), result_type %s", i,
                       j, k, alloy_dtype_name(compute),
                       alloy_dtype_name(result), alloy_dtype_name(want));
      }
  CHECK_INT(mismatches, 0);
}

/* Checks reduction_dtypes(...) == (compute, result). */
static void check_red(int line, alloy_dtype t, bool has_dtype,
                      alloy_dtype dtype, alloy_reduction_kind kind,
                      alloy_dtype want_compute, alloy_dtype want_result) {
  alloy_dtype compute = ALLOY_DTYPE_COUNT, result = ALLOY_DTYPE_COUNT;
  alloy_reduction_dtypes(t, has_dtype, dtype, kind, &compute, &result);
  if (compute != want_compute || result != want_result)
    harness_fail(__FILE__, line, "kind %d: got (%s, %s), expected (%s, %s)",
                 (int)kind, alloy_dtype_name(compute), alloy_dtype_name(result),
                 alloy_dtype_name(want_compute), alloy_dtype_name(want_result));
}
#define RED(...) check_red(__LINE__, __VA_ARGS__)

TEST(reduction_kinds) {
  const alloy_dtype x = ALLOY_BOOL; /* the unused dtype argument */
  RED(ALLOY_F16, false, x, ALLOY_REDUCE_SAME, ALLOY_F32, ALLOY_F16);
  RED(ALLOY_I32, false, x, ALLOY_REDUCE_SAME, ALLOY_I32, ALLOY_I32);
  RED(ALLOY_BF16, true, ALLOY_F64, ALLOY_REDUCE_SAME, ALLOY_F64, ALLOY_F64);
  RED(ALLOY_F32, true, ALLOY_BF16, ALLOY_REDUCE_SAME, ALLOY_F32, ALLOY_BF16);
  RED(ALLOY_C64, false, x, ALLOY_REDUCE_COMPLEX_TO_FLOAT, ALLOY_C64,
      ALLOY_F32);
  RED(ALLOY_C128, false, x, ALLOY_REDUCE_COMPLEX_TO_FLOAT, ALLOY_C128,
      ALLOY_F64);
  RED(ALLOY_F16, false, x, ALLOY_REDUCE_COMPLEX_TO_FLOAT, ALLOY_F32,
      ALLOY_F16);
  RED(ALLOY_F32, true, ALLOY_C128, ALLOY_REDUCE_COMPLEX_TO_FLOAT, ALLOY_C128,
      ALLOY_F64);
  RED(ALLOY_F16, false, x, ALLOY_REDUCE_KEEP_PROMOTED_TYPE, ALLOY_F32,
      ALLOY_F32);
  RED(ALLOY_BF16, false, x, ALLOY_REDUCE_KEEP_PROMOTED_TYPE, ALLOY_F32,
      ALLOY_F32);
  RED(ALLOY_F64, false, x, ALLOY_REDUCE_KEEP_PROMOTED_TYPE, ALLOY_F64,
      ALLOY_F64);
  RED(ALLOY_F32, true, ALLOY_F16, ALLOY_REDUCE_KEEP_PROMOTED_TYPE, ALLOY_F32,
      ALLOY_F32);
  RED(ALLOY_I64, false, x, ALLOY_REDUCE_KEEP_PROMOTED_TYPE, ALLOY_I64,
      ALLOY_I64);
  RED(ALLOY_F16, false, x, ALLOY_REDUCE_ALWAYS_BOOL, ALLOY_F32, ALLOY_BOOL);
  RED(ALLOY_I8, false, x, ALLOY_REDUCE_ALWAYS_BOOL, ALLOY_I8, ALLOY_BOOL);
  RED(ALLOY_F32, true, ALLOY_F64, ALLOY_REDUCE_ALWAYS_BOOL, ALLOY_F64,
      ALLOY_BOOL);
  RED(ALLOY_F32, false, x, (alloy_reduction_kind)17, ALLOY_DTYPE_COUNT,
      ALLOY_DTYPE_COUNT);
}
