/*
 * ir/promote.c: PyTorch's type promotion (see ir/promote.h). Shape functions
 * call it to give each output the dtype PyTorch would: alloy_promote_types is
 * c10's promoteTypes lattice, alloy_result_type is ATen's ResultTypeState
 * (TypeProperties.cpp), and the elementwise / reduction helpers follow
 * torch._prims_common, which is what PyTorch's own meta functions use.
 *
 * PyTorch reaches two dtypes that alloy_dtype lacks: Undefined (an empty
 * ResultTypeState slot) and complex32 (what float16 becomes next to a complex
 * operand). Both are private codes here, so that the rules run exactly as
 * PyTorch's do; complex32 is only turned into complex64 on the way out, after
 * COMPLEX_TO_FLOAT has had the chance to map it back to float16.
 */
#include "ir/promote.h"

enum {
  XT_UNDEF = -1,                        /* ScalarType::Undefined         */
  XT_INVALID = ALLOY_DTYPE_COUNT,       /* what garbage input yields     */
  XT_C32 = ALLOY_DTYPE_COUNT + 1,       /* ScalarType::ComplexHalf       */
};

static bool valid(int t) { return t >= 0 && t < ALLOY_DTYPE_COUNT; }
static bool is_float(int t) { return valid(t) && alloy_dtype_is_float(t); }
static bool is_complex(int t) {
  return t == XT_C32 || (valid(t) && alloy_dtype_is_complex(t));
}

/* Alloy has no complex32; complex64 is where PyTorch computes complex32 math
 * anyway (its opmath type), and no complex type is computed on yet. */
static alloy_dtype to_public(int t) {
  return t == XT_C32 ? ALLOY_C64 : (alloy_dtype)t;
}

/* --- the lattice ---------------------------------------------------------*/

/* c10's _promoteTypesLookup restricted to Alloy's types, rows and columns in
 * alloy_dtype order. It is NumPy's promote_types except that uint8 with a
 * signed type stays within int16..int64, and that integers meeting a float
 * take the float as is (int64 + float16 = float16). */
/* clang-format off */
#define b8 ALLOY_BOOL
#define u8 ALLOY_U8
#define i8 ALLOY_I8
#define i16 ALLOY_I16
#define i32 ALLOY_I32
#define i64 ALLOY_I64
#define f16 ALLOY_F16
#define bf16 ALLOY_BF16
#define f32 ALLOY_F32
#define f64 ALLOY_F64
#define c64 ALLOY_C64
#define c128 ALLOY_C128
static const unsigned char lattice[ALLOY_DTYPE_COUNT][ALLOY_DTYPE_COUNT] = {
    /*           b8    u8    i8    i16   i32   i64   f16   bf16  f32   f64   c64   c128 */
    /* b8   */ {b8,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  c64,  c128},
    /* u8   */ {u8,   u8,   i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  c64,  c128},
    /* i8   */ {i8,   i16,  i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64,  c64,  c128},
    /* i16  */ {i16,  i16,  i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64,  c64,  c128},
    /* i32  */ {i32,  i32,  i32,  i32,  i32,  i64,  f16,  bf16, f32,  f64,  c64,  c128},
    /* i64  */ {i64,  i64,  i64,  i64,  i64,  i64,  f16,  bf16, f32,  f64,  c64,  c128},
    /* f16  */ {f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64,  c64,  c128},
    /* bf16 */ {bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64,  c64,  c128},
    /* f32  */ {f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64,  c64,  c128},
    /* f64  */ {f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  c128, c128},
    /* c64  */ {c64,  c64,  c64,  c64,  c64,  c64,  c64,  c64,  c64,  c128, c64,  c128},
    /* c128 */ {c128, c128, c128, c128, c128, c128, c128, c128, c128, c128, c128, c128},
};
#undef b8
#undef u8
#undef i8
#undef i16
#undef i32
#undef i64
#undef f16
#undef bf16
#undef f32
#undef f64
#undef c64
#undef c128
/* clang-format on */

alloy_dtype alloy_promote_types(alloy_dtype a, alloy_dtype b) {
  /* PyTorch answers Undefined; the out-of-range code is our Undefined, and
   * it keeps a caller's bug visible rather than picking a plausible type. */
  if (!valid((int)a) || !valid((int)b)) return (alloy_dtype)XT_INVALID;
  return (alloy_dtype)lattice[a][b];
}

alloy_dtype alloy_opmath_dtype(alloy_dtype t) {
  return t == ALLOY_F16 || t == ALLOY_BF16 ? ALLOY_F32 : t;
}

/* --- torch.result_type ---------------------------------------------------*/

static int promote_skip_undefined(int a, int b) {
  if (a == XT_UNDEF) return b;
  if (b == XT_UNDEF) return a;
  return (int)alloy_promote_types((alloy_dtype)a, (alloy_dtype)b);
}

/* c10::toComplexType on floats. bfloat16 goes to complex64, not complex32,
 * because its range is float32's. */
static int complex_of(int t) {
  switch (t) {
    case ALLOY_F16: return XT_C32;
    case ALLOY_BF16:
    case ALLOY_F32: return ALLOY_C64;
    case ALLOY_F64: return ALLOY_C128;
    default: return t;
  }
}

/* A lower-ranked operand (zero-dim below dimensioned, Python number below
 * zero-dim) only changes the type when its category is higher, and then the
 * higher-ranked operand still decides the width where it can: a float16
 * tensor times a Python float stays float16; times 1j it becomes complex32,
 * keeping float16's precision rather than the scalar's complex64. (PyTorch
 * 1.x promoted here instead: float32 tensor + zero-dim complex128 gave
 * complex128 where 2.x gives complex64.) */
static int combine_categories(int higher, int lower) {
  if (is_complex(higher)) return higher;
  if (is_complex(lower)) return is_float(higher) ? complex_of(higher) : lower;
  if (is_float(higher)) return higher;
  /* Here lower is never complex, so the lattice sees only public types. */
  if (higher == ALLOY_BOOL || is_float(lower))
    return promote_skip_undefined(higher, lower);
  return higher != XT_UNDEF ? higher : lower;
}

/* A Python number counts as its category's default dtype. ATen only rewrites
 * floats and complexes (a Python int already arrives as int64); mapping ints
 * here too keeps a caller's odd scalar dtype from leaking through. */
static int wrapped_number_dtype(alloy_dtype t) {
  if (alloy_dtype_is_complex(t)) return ALLOY_C64;
  if (alloy_dtype_is_float(t)) return ALLOY_F32;
  if (alloy_dtype_is_integer(t)) return ALLOY_I64;
  return ALLOY_BOOL;
}

static bool operand_ok(const alloy_promo_operand *op) {
  return valid((int)op->dtype) && (op->kind == ALLOY_PROMO_TENSOR ||
                                   op->kind == ALLOY_PROMO_ZERO_DIM ||
                                   op->kind == ALLOY_PROMO_SCALAR);
}

alloy_dtype alloy_result_type(const alloy_promo_operand *ops, int n) {
  int dim = XT_UNDEF, zero = XT_UNDEF, wrapped = XT_UNDEF;
  for (int i = 0; ops && i < n; i++) {
    const alloy_promo_operand *op = &ops[i];
    if (op->kind == ALLOY_PROMO_ABSENT) continue;
    if (!operand_ok(op)) return (alloy_dtype)XT_INVALID;
    if (op->kind == ALLOY_PROMO_TENSOR)
      dim = promote_skip_undefined(dim, op->dtype);
    else if (op->kind == ALLOY_PROMO_ZERO_DIM)
      zero = promote_skip_undefined(zero, op->dtype);
    else
      wrapped =
          promote_skip_undefined(wrapped, wrapped_number_dtype(op->dtype));
  }
  int r = combine_categories(dim, combine_categories(zero, wrapped));
  return r == XT_UNDEF ? ALLOY_F32 : to_public(r);
}

/* --- torch._prims_common.elementwise_dtypes ------------------------------*/

/* _prims_common's own algorithm, not result_type: pick the highest category
 * among all operands, then the highest dtype of that category among
 * dimensioned tensors, else among zero-dim tensors, else the category's
 * default. Over Alloy's dtypes this agrees with alloy_result_type on every
 * non-empty operand list (tests/test_promote.c checks all lists of up to
 * three operands); the one difference is the empty list, which is bool here
 * and float32 there. */
typedef enum { CAT_BOOL, CAT_INT, CAT_FLOAT, CAT_COMPLEX } category;

static category category_of(int t) {
  if (is_complex(t)) return CAT_COMPLEX;
  if (is_float(t)) return CAT_FLOAT;
  if (t == ALLOY_BOOL) return CAT_BOOL;
  return CAT_INT;
}

/* Position in get_higher_dtype's chain bool -> {u8, i8} -> i16 -> i32 -> i64
 * -> {f16, bf16} -> f32 -> f64 -> c32 -> c64 -> c128. */
static int chain_rank(int t) {
  static const signed char rank[ALLOY_DTYPE_COUNT] = {
      [ALLOY_BOOL] = 0, [ALLOY_U8] = 1,  [ALLOY_I8] = 1,   [ALLOY_I16] = 2,
      [ALLOY_I32] = 3,  [ALLOY_I64] = 4, [ALLOY_F16] = 5,  [ALLOY_BF16] = 5,
      [ALLOY_F32] = 6,  [ALLOY_F64] = 7, [ALLOY_C64] = 9,  [ALLOY_C128] = 10,
  };
  return t == XT_C32 ? 8 : rank[t];
}

/* get_higher_dtype: the higher link, or for two different types sharing a
 * link (u8/i8, f16/bf16) the next link up. */
static int higher_dtype(int a, int b) {
  if (a == XT_UNDEF) return b;
  if (b == XT_UNDEF || a == b) return a;
  int ra = chain_rank(a), rb = chain_rank(b);
  if (ra == rb) return ra == chain_rank(ALLOY_U8) ? ALLOY_I16 : ALLOY_F32;
  return ra > rb ? a : b;
}

/* The highest tensor dtype of category cat; for complex, float tensors count
 * as their complex counterparts (a float64 tensor times 1j is complex128). */
static int highest_tensor_dtype(const alloy_promo_operand *ops, int n,
                                category cat) {
  int dim = XT_UNDEF, zero = XT_UNDEF;
  for (int i = 0; i < n; i++) {
    const alloy_promo_operand *op = &ops[i];
    if (op->kind != ALLOY_PROMO_TENSOR && op->kind != ALLOY_PROMO_ZERO_DIM)
      continue;
    int t = op->dtype;
    if (cat == CAT_COMPLEX && is_float(t)) t = complex_of(t);
    if (category_of(t) != cat) continue;
    if (op->kind == ALLOY_PROMO_TENSOR)
      dim = higher_dtype(dim, t);
    else
      zero = higher_dtype(zero, t);
  }
  return dim != XT_UNDEF ? dim : zero;
}

static int opmath(int t) {
  return t == XT_C32 ? ALLOY_C64 : (int)alloy_opmath_dtype((alloy_dtype)t);
}

/* corresponding_real_dtype */
static int real_of(int t) {
  switch (t) {
    case XT_C32: return ALLOY_F16;
    case ALLOY_C64: return ALLOY_F32;
    case ALLOY_C128: return ALLOY_F64;
    default: return t;
  }
}

void alloy_elementwise_dtypes(const alloy_promo_operand *ops, int n,
                              alloy_promo_kind kind, alloy_dtype *compute,
                              alloy_dtype *result) {
  if (!ops) n = 0;
  category highest = CAT_BOOL;
  for (int i = 0; i < n; i++) {
    if (ops[i].kind == ALLOY_PROMO_ABSENT) continue;
    if (!operand_ok(&ops[i])) {
      *compute = *result = (alloy_dtype)XT_INVALID;
      return;
    }
    category c = category_of(ops[i].dtype);
    if (c > highest) highest = c;
  }

  int res = ALLOY_BOOL;
  if (highest != CAT_BOOL) {
    static const int category_default[] = {[CAT_INT] = ALLOY_I64,
                                           [CAT_FLOAT] = ALLOY_F32,
                                           [CAT_COMPLEX] = ALLOY_C64};
    res = highest_tensor_dtype(ops, n, highest);
    if (res == XT_UNDEF) res = category_default[highest];
  }

  int comp = opmath(res);
  switch (kind) {
    case ALLOY_PROMO_DEFAULT: break;
    case ALLOY_PROMO_NO_OPMATH: comp = res; break;
    case ALLOY_PROMO_INT_TO_FLOAT:
      if (category_of(res) <= CAT_INT) comp = res = ALLOY_F32;
      break;
    case ALLOY_PROMO_ALWAYS_BOOL: res = ALLOY_BOOL; break;
    /* The math may still be complex (abs of a complex number); only the
     * result is real. */
    case ALLOY_PROMO_COMPLEX_TO_FLOAT: res = real_of(res); break;
    case ALLOY_PROMO_BOOL_TO_LONG:
      if (res == ALLOY_BOOL) comp = res = ALLOY_I64;
      break;
    default: comp = res = XT_INVALID; break;
  }
  *compute = to_public(comp);
  *result = to_public(res);
}

/* --- torch._prims_common.reduction_dtypes --------------------------------*/

void alloy_reduction_dtypes(alloy_dtype t, bool has_dtype, alloy_dtype dtype,
                            alloy_reduction_kind kind, alloy_dtype *compute,
                            alloy_dtype *result) {
  /* An explicit dtype replaces the input's for both the math and the output
   * (sum(x, dtype=f64) accumulates in f64). Widening integer sums to int64
   * is the sum op's own rule, not this function's. */
  alloy_dtype in = has_dtype ? dtype : t;
  *compute = alloy_opmath_dtype(in);
  switch (kind) {
    case ALLOY_REDUCE_SAME: *result = in; break;
    case ALLOY_REDUCE_COMPLEX_TO_FLOAT:
      *result = (alloy_dtype)real_of((int)in);
      break;
    /* _prims_common returns None: the result is left in the computation
     * dtype (mean divides there and casts back by itself). */
    case ALLOY_REDUCE_KEEP_PROMOTED_TYPE: *result = *compute; break;
    case ALLOY_REDUCE_ALWAYS_BOOL: *result = ALLOY_BOOL; break;
    default: *compute = *result = (alloy_dtype)XT_INVALID; break;
  }
}
