/*
 * plugins/cpu/cpu_ir.c: LLVM IR as text, for the planner (cpu_plan.c,
 * cpu_rows.c). No LLVM here: cpu_jit.c parses what this writes. Text keeps
 * the planner testable without LLVM and a plan readable when dumped
 * (ALLOY_CPU_DUMP_IR); the IR of LLVM 14 with typed pointers.
 *
 * Values live in registers of their opmath type: float16 and bfloat16 in
 * float, bool as i1, the integers in their own width (arithmetic wraps as
 * PyTorch's does: no nsw/nuw flags). In memory a bool is an i8 of 0 or 1
 * and the 16-bit floats are their bits (i16): float16 converts through
 * LLVM's half (round to nearest even), bfloat16 by integer arithmetic
 * (LLVM 14's x86 backend cannot select bfloat conversions).
 *
 * The primitives the op table's formulas call are rows of a table: one
 * instruction per class of compute type (float, signed, unsigned, bool),
 * or a call of a helper of the prelude, written after PyTorch's CPU kernels
 * so that NaN, infinities and signed zeros come out as there. The helpers
 * are alwaysinline: LLVM folds them into the loops, where the loop
 * vectorizer takes them (the libm calls it cannot vectorize stay scalar).
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/cpu/cpu_plan.h"

/* ---- text ------------------------------------------------------------------ */

void ir_put(text *t, const char *fmt, ...) {
  if (t->oom) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
    va_end(ap);
    if (n < 0) return (void)(t->oom = true);
    if (t->s && t->len + (size_t)n < t->cap) {
      t->len += (size_t)n;
      return;
    }
    size_t cap = (t->cap + (size_t)n + 1) * 2;
    char *s = realloc(t->s, cap);
    if (!s) return (void)(t->oom = true);
    t->s = s, t->cap = cap;
  }
}

void ir_append(text *t, const text *more) {
  if (more->oom) t->oom = true;
  if (more->s) ir_put(t, "%s", more->s);
}

int ir_reg(kern *k) { return k->nreg++; }

int ir_ins(kern *k, text *t, const char *fmt, ...) {
  int r = k->nreg++;
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  ir_put(t, "  %%r%d = %s\n", r, buf);
  return r;
}

static irv reg_of(int r, alloy_dtype t) {
  irv v = {.t = t};
  snprintf(v.s, sizeof v.s, "%%r%d", r);
  return v;
}

/* ---- types ------------------------------------------------------------------ */

alloy_dtype ir_reg_dtype(alloy_dtype t) { return t == ALLOY_F16 || t == ALLOY_BF16 ? ALLOY_F32 : t; }

const char *ir_type(alloy_dtype t) {
  switch (t) {
    case ALLOY_BOOL: return "i1";
    case ALLOY_U8:
    case ALLOY_I8: return "i8";
    case ALLOY_I16: return "i16";
    case ALLOY_I32: return "i32";
    case ALLOY_I64: return "i64";
    case ALLOY_F64: return "double";
    default: return "float";
  }
}

const char *ir_mem_type(alloy_dtype t) {
  switch (t) {
    case ALLOY_BOOL:
    case ALLOY_U8:
    case ALLOY_I8: return "i8";
    case ALLOY_I16:
    case ALLOY_F16:
    case ALLOY_BF16: return "i16";
    case ALLOY_I32: return "i32";
    case ALLOY_I64: return "i64";
    case ALLOY_F64: return "double";
    default: return "float";
  }
}

/* The name suffix of intrinsics and helpers: llvm.exp.f32, op.max.f64. */
static const char *suffix(alloy_dtype t) {
  switch (t) {
    case ALLOY_BOOL: return "i1";
    case ALLOY_U8:
    case ALLOY_I8: return "i8";
    case ALLOY_I16: return "i16";
    case ALLOY_I32: return "i32";
    case ALLOY_I64: return "i64";
    case ALLOY_F64: return "f64";
    default: return "f32";
  }
}

static bool is_float(alloy_dtype t) { return t == ALLOY_F32 || t == ALLOY_F64; }
static bool is_int(alloy_dtype t) { return t != ALLOY_BOOL && !alloy_dtype_is_float(t); }
static int bits_of(alloy_dtype t) { return t == ALLOY_BOOL ? 1 : (int)alloy_dtype_size(t) * 8; }

/* ---- constants ---------------------------------------------------------------- */

irv ir_const_i(int64_t v, alloy_dtype t) {
  irv c = {.t = t};
  if (is_float(t)) return ir_const_f((double)v, t);
  if (t == ALLOY_BOOL) {
    snprintf(c.s, sizeof c.s, "%s", v ? "true" : "false");
    return c;
  }
  /* two's complement wrap to the width, written signed (what LLVM parses) */
  int64_t w = v;
  switch (t) {
    case ALLOY_U8:
    case ALLOY_I8: w = (int8_t)(uint8_t)(uint64_t)v; break;
    case ALLOY_I16: w = (int16_t)(uint16_t)(uint64_t)v; break;
    case ALLOY_I32: w = (int32_t)(uint32_t)(uint64_t)v; break;
    default: break;
  }
  snprintf(c.s, sizeof c.s, "%" PRId64, w);
  return c;
}

/* A float constant as LLVM writes one exactly: the bits of a double (of
 * the float value, for float). An integer type takes the value truncated
 * toward zero, as a C++ cast does where it is defined. */
irv ir_const_f(double v, alloy_dtype t) {
  irv c = {.t = t};
  if (t == ALLOY_BOOL) return ir_const_i(v != 0 || isnan(v), t);
  if (is_int(t)) {
    double lim = 9.2e18;
    return ir_const_i(isnan(v) ? 0 : v > lim ? INT64_MAX : v < -lim ? INT64_MIN : (int64_t)v, t);
  }
  double d = t == ALLOY_F64 ? v : (double)(float)v;
  uint64_t bits;
  if (isnan(d)) bits = UINT64_C(0x7FF8000000000000);
  else memcpy(&bits, &d, sizeof bits);
  snprintf(c.s, sizeof c.s, "0x%016" PRIX64, bits);
  return c;
}

/* ---- conversions ---------------------------------------------------------------- */

irv ir_cast(kern *k, text *t, irv v, alloy_dtype to) {
  to = ir_reg_dtype(to);
  alloy_dtype from = v.t;
  if (from == to || !v.s[0]) {
    v.t = to;
    return v;
  }
  const char *ft = ir_type(from), *tt = ir_type(to);
  int r;
  if (to == ALLOY_BOOL) {
    r = is_float(from) ? ir_ins(k, t, "fcmp une %s %s, 0.0", ft, v.s) : ir_ins(k, t, "icmp ne %s %s, 0", ft, v.s);
  } else if (from == ALLOY_BOOL) {
    r = is_float(to) ? ir_ins(k, t, "uitofp i1 %s to %s", v.s, tt) : ir_ins(k, t, "zext i1 %s to %s", v.s, tt);
  } else if (is_int(from) && is_int(to)) {
    int fb = bits_of(from), tb = bits_of(to);
    if (fb == tb) {
      v.t = to; /* uint8 and int8: the same bits */
      return v;
    }
    const char *how = tb < fb ? "trunc" : from == ALLOY_U8 ? "zext" : "sext";
    r = ir_ins(k, t, "%s %s %s to %s", how, ft, v.s, tt);
  } else if (is_int(from)) {
    r = ir_ins(k, t, "%s %s %s to %s", from == ALLOY_U8 ? "uitofp" : "sitofp", ft, v.s, tt);
  } else if (is_int(to)) {
    /* through int64, then wrapped: what x86 does for the values C++ defines */
    int w = ir_ins(k, t, "fptosi %s %s to i64", ft, v.s);
    if (to == ALLOY_I64) return reg_of(w, to);
    r = ir_ins(k, t, "trunc i64 %%r%d to %s", w, tt);
  } else {
    r = ir_ins(k, t, "%s %s %s to %s", bits_of(to) > bits_of(from) ? "fpext" : "fptrunc", ft, v.s, tt);
  }
  return reg_of(r, to);
}

irv ir_round(kern *k, text *t, irv v, alloy_dtype mem) {
  if (mem == ALLOY_F16) {
    int h = ir_ins(k, t, "fptrunc float %s to half", v.s);
    return reg_of(ir_ins(k, t, "fpext half %%r%d to float", h), ALLOY_F32);
  }
  if (mem == ALLOY_BF16) return reg_of(ir_ins(k, t, "call float @op.rnd_bf16(float %s)", v.s), ALLOY_F32);
  return v;
}

irv ir_load(kern *k, text *t, const char *ptr, alloy_dtype mem) {
  const char *mt = ir_mem_type(mem);
  int r = ir_ins(k, t, "load %s, %s* %s, align %zu", mt, mt, ptr, alloy_dtype_size(mem));
  switch (mem) {
    case ALLOY_BOOL: return reg_of(ir_ins(k, t, "icmp ne i8 %%r%d, 0", r), ALLOY_BOOL);
    case ALLOY_F16: {
      int h = ir_ins(k, t, "bitcast i16 %%r%d to half", r);
      return reg_of(ir_ins(k, t, "fpext half %%r%d to float", h), ALLOY_F32);
    }
    case ALLOY_BF16: {
      int w = ir_ins(k, t, "zext i16 %%r%d to i32", r);
      int s = ir_ins(k, t, "shl i32 %%r%d, 16", w);
      return reg_of(ir_ins(k, t, "bitcast i32 %%r%d to float", s), ALLOY_F32);
    }
    default: return reg_of(r, mem);
  }
}

void ir_store(kern *k, text *t, const char *ptr, irv v, alloy_dtype mem) {
  v = ir_cast(k, t, v, mem);
  const char *mt = ir_mem_type(mem);
  char val[48];
  snprintf(val, sizeof val, "%s", v.s);
  if (mem == ALLOY_BOOL) snprintf(val, sizeof val, "%%r%d", ir_ins(k, t, "zext i1 %s to i8", v.s));
  else if (mem == ALLOY_F16) {
    int h = ir_ins(k, t, "fptrunc float %s to half", v.s);
    snprintf(val, sizeof val, "%%r%d", ir_ins(k, t, "bitcast half %%r%d to i16", h));
  } else if (mem == ALLOY_BF16) {
    snprintf(val, sizeof val, "%%r%d", ir_ins(k, t, "call i16 @op.to_bf16(float %s)", v.s));
  }
  ir_put(t, "  store %s %s, %s* %s, align %zu\n", mt, val, mt, ptr, alloy_dtype_size(mem));
}

/* ---- primitives ------------------------------------------------------------------
 * Templates: $t the compute type, $s its suffix, $m libm's ("f" for float),
 * $0.. the arguments. "=$0" is the argument itself, "=false" a constant.
 * cond: a bit per argument that is a truth value (select's first). */
typedef struct ir_prim_row {
  const char *name;
  int arity;
  unsigned cond;
  bool to_bool; /* the result is a truth value */
  const char *f, *s, *u, *b; /* float, signed, unsigned (uint8), bool; NULL: none */
} ir_prim_row;

#define MATH1(n, intr) {n, 1, 0, false, "call $t @llvm." intr ".$s($t $0)", NULL, NULL, NULL}
#define LIBM1(n) {n, 1, 0, false, "call $t @" n "$m($t $0)", NULL, NULL, NULL}
#define HELP1(n) {n, 1, 0, false, "call $t @op." n ".$s($t $0)", NULL, NULL, NULL}
#define CMP(n, f, s, u) {n, 2, 0, true, "fcmp " f " $t $0, $1", "icmp " s " $t $0, $1", "icmp " u " $t $0, $1", "icmp " u " i1 $0, $1"}

static const ir_prim_row prims[] = {
    {"add", 2, 0, false, "fadd $t $0, $1", "add $t $0, $1", "add $t $0, $1", "or i1 $0, $1"},
    {"sub", 2, 0, false, "fsub $t $0, $1", "sub $t $0, $1", "sub $t $0, $1", NULL},
    {"mul", 2, 0, false, "fmul $t $0, $1", "mul $t $0, $1", "mul $t $0, $1", "and i1 $0, $1"},
    {"div", 2, 0, false, "fdiv $t $0, $1", NULL, NULL, NULL},
    {"neg", 1, 0, false, "fneg $t $0", "sub $t 0, $0", "sub $t 0, $0", NULL},
    {"rcp", 1, 0, false, "fdiv $t 1.0, $0", NULL, NULL, NULL},
    {"abs", 1, 0, false, "call $t @llvm.fabs.$s($t $0)", "call $t @llvm.abs.$s($t $0, i1 false)", "=$0", "=$0"},
    /* maximum/minimum propagate NaN (PyTorch's max_propagate_nan) */
    {"max", 2, 0, false, "call $t @op.max.$s($t $0, $t $1)", "call $t @llvm.smax.$s($t $0, $t $1)",
     "call $t @llvm.umax.$s($t $0, $t $1)", "or i1 $0, $1"},
    {"min", 2, 0, false, "call $t @op.min.$s($t $0, $t $1)", "call $t @llvm.smin.$s($t $0, $t $1)",
     "call $t @llvm.umin.$s($t $0, $t $1)", "and i1 $0, $1"},
    /* clamp's bounds: NaN x stays, a NaN bound wins; min applied before max */
    {"clamp_lo", 2, 0, false, "call $t @op.clamp_lo.$s($t $0, $t $1)", "call $t @llvm.smax.$s($t $0, $t $1)",
     "call $t @llvm.umax.$s($t $0, $t $1)", "or i1 $0, $1"},
    {"clamp_hi", 2, 0, false, "call $t @op.clamp_hi.$s($t $0, $t $1)", "call $t @llvm.smin.$s($t $0, $t $1)",
     "call $t @llvm.umin.$s($t $0, $t $1)", "and i1 $0, $1"},
    {"relu", 1, 0, false, "call $t @op.relu.$s($t $0)", "call $t @llvm.smax.$s($t $0, $t 0)", "=$0", "=$0"},
    {"leaky", 2, 0, false, "call $t @op.leaky.$s($t $0, $t $1)", NULL, NULL, NULL},
    {"pow", 2, 0, false, "call $t @op.pow.$s($t $0, $t $1)", NULL, NULL, NULL},
    {"gelu", 2, 2, false, "call $t @op.gelu.$s($t $0, i1 $1)", NULL, NULL, NULL},
    HELP1("sigmoid"),
    HELP1("rsqrt"),
    HELP1("exp"),
    MATH1("exp2", "exp2"),
    MATH1("log", "log"),
    MATH1("log2", "log2"),
    MATH1("log10", "log10"),
    MATH1("sqrt", "sqrt"),
    MATH1("sin", "sin"),
    MATH1("cos", "cos"),
    MATH1("floor", "floor"),
    MATH1("ceil", "ceil"),
    MATH1("trunc", "trunc"),
    MATH1("round", "roundeven"),
    LIBM1("tan"),
    LIBM1("asin"),
    LIBM1("acos"),
    LIBM1("atan"),
    LIBM1("sinh"),
    LIBM1("cosh"),
    HELP1("tanh"),
    LIBM1("asinh"),
    LIBM1("acosh"),
    LIBM1("atanh"),
    LIBM1("erf"),
    LIBM1("erfc"),
    LIBM1("expm1"),
    LIBM1("log1p"),
    {"atan2", 2, 0, false, "call $t @atan2$m($t $0, $t $1)", NULL, NULL, NULL},
    CMP("eq", "oeq", "eq", "eq"),
    CMP("ne", "une", "ne", "ne"),
    CMP("lt", "olt", "slt", "ult"),
    CMP("le", "ole", "sle", "ule"),
    CMP("gt", "ogt", "sgt", "ugt"),
    CMP("ge", "oge", "sge", "uge"),
    {"isnan", 1, 0, true, "fcmp uno $t $0, 0.0", "=false", "=false", "=false"},
    {"isinf", 1, 0, true, "call i1 @op.isinf.$s($t $0)", "=false", "=false", "=false"},
    {"not", 1, 0, false, NULL, "xor $t $0, -1", "xor $t $0, -1", "xor i1 $0, true"},
    {"and", 2, 0, false, NULL, "and $t $0, $1", "and $t $0, $1", "and i1 $0, $1"},
    {"or", 2, 0, false, NULL, "or $t $0, $1", "or $t $0, $1", "or i1 $0, $1"},
    {"xor", 2, 0, false, NULL, "xor $t $0, $1", "xor $t $0, $1", "xor i1 $0, $1"},
    {"select", 3, 1, false, "select i1 $0, $t $1, $t $2", "select i1 $0, $t $1, $t $2", "select i1 $0, $t $1, $t $2",
     "select i1 $0, i1 $1, i1 $2"},
};

bool ir_prim(kern *k, text *t, const char *name, const irv *args, int nargs, alloy_dtype ct, irv *out) {
  const ir_prim_row *p = NULL;
  for (size_t i = 0; i < sizeof prims / sizeof *prims; i++)
    if (!strcmp(prims[i].name, name)) p = &prims[i];
  if (!p || p->arity != nargs) return false;
  ct = ir_reg_dtype(ct);
  /* a bound given as None: the primitive is the identity */
  if ((!strcmp(name, "clamp_lo") || !strcmp(name, "clamp_hi")) && !args[1].s[0]) {
    *out = ir_cast(k, t, args[0], ct);
    return true;
  }
  const char *tmpl = ct == ALLOY_BOOL ? p->b : is_float(ct) ? p->f : ct == ALLOY_U8 ? p->u : p->s;
  if (!tmpl) return false;
  irv a[3];
  for (int i = 0; i < nargs; i++) a[i] = ir_cast(k, t, args[i], (p->cond >> i) & 1 ? ALLOY_BOOL : ct);
  alloy_dtype rt = p->to_bool ? ALLOY_BOOL : ct;
  if (tmpl[0] == '=') {
    if (tmpl[1] == '$') *out = a[tmpl[2] - '0'];
    else *out = ir_const_i(0, rt);
    out->t = rt;
    return true;
  }
  char ins[400];
  size_t len = 0;
  for (const char *c = tmpl; *c && len + 64 < sizeof ins; c++) {
    if (*c != '$') {
      ins[len++] = *c;
      continue;
    }
    c++;
    const char *rep = *c == 't' ? ir_type(ct) : *c == 's' ? suffix(ct) : *c == 'm' ? (ct == ALLOY_F32 ? "f" : "")
                      : (*c >= '0' && *c <= '2') ? a[*c - '0'].s : "";
    len += (size_t)snprintf(ins + len, sizeof ins - len, "%s", rep);
  }
  ins[len] = 0;
  *out = reg_of(ir_ins(k, t, "%s", ins), rt);
  return true;
}

/* ---- the prelude ------------------------------------------------------------------
 * The float helpers, written once per type by substituting $T (float,
 * double), $S (f32, f64) and $M (libm's suffix). */
static const char float_helpers[] =
    "define internal $T @op.max.$S($T %a, $T %b) alwaysinline {\n"
    "  %na = fcmp uno $T %a, 0.0\n  %nb = fcmp uno $T %b, 0.0\n  %gt = fcmp ogt $T %a, %b\n"
    "  %m = select i1 %gt, $T %a, $T %b\n  %m2 = select i1 %nb, $T %b, $T %m\n"
    "  %r = select i1 %na, $T %a, $T %m2\n  ret $T %r\n}\n"
    "define internal $T @op.min.$S($T %a, $T %b) alwaysinline {\n"
    "  %na = fcmp uno $T %a, 0.0\n  %nb = fcmp uno $T %b, 0.0\n  %lt = fcmp olt $T %a, %b\n"
    "  %m = select i1 %lt, $T %a, $T %b\n  %m2 = select i1 %nb, $T %b, $T %m\n"
    "  %r = select i1 %na, $T %a, $T %m2\n  ret $T %r\n}\n"
    "define internal $T @op.clamp_lo.$S($T %x, $T %lo) alwaysinline {\n"
    "  %nx = fcmp uno $T %x, 0.0\n  %nl = fcmp uno $T %lo, 0.0\n  %lt = fcmp olt $T %x, %lo\n"
    "  %m = select i1 %lt, $T %lo, $T %x\n  %m2 = select i1 %nl, $T %lo, $T %m\n"
    "  %r = select i1 %nx, $T %x, $T %m2\n  ret $T %r\n}\n"
    "define internal $T @op.clamp_hi.$S($T %x, $T %hi) alwaysinline {\n"
    "  %nx = fcmp uno $T %x, 0.0\n  %nh = fcmp uno $T %hi, 0.0\n  %gt = fcmp ogt $T %x, %hi\n"
    "  %m = select i1 %gt, $T %hi, $T %x\n  %m2 = select i1 %nh, $T %hi, $T %m\n"
    "  %r = select i1 %nx, $T %x, $T %m2\n  ret $T %r\n}\n"
    /* relu: x <= 0 is false for NaN, which passes */
    "define internal $T @op.relu.$S($T %x) alwaysinline {\n"
    "  %c = fcmp ole $T %x, 0.0\n  %r = select i1 %c, $T 0.0, $T %x\n  ret $T %r\n}\n"
    "define internal $T @op.leaky.$S($T %x, $T %s) alwaysinline {\n"
    "  %c = fcmp ogt $T %x, 0.0\n  %m = fmul $T %x, %s\n  %r = select i1 %c, $T %x, $T %m\n  ret $T %r\n}\n"
    "define internal $T @op.sigmoid.$S($T %x) alwaysinline {\n"
    "  %n = fneg $T %x\n  %e = call $T @op.exp.$S($T %n)\n  %d = fadd $T 1.0, %e\n"
    "  %r = fdiv $T 1.0, %d\n  ret $T %r\n}\n"
    "define internal $T @op.rsqrt.$S($T %x) alwaysinline {\n"
    "  %s = call $T @llvm.sqrt.$S($T %x)\n  %r = fdiv $T 1.0, %s\n  ret $T %r\n}\n"
    "define internal i1 @op.isinf.$S($T %x) alwaysinline {\n"
    "  %a = call $T @llvm.fabs.$S($T %x)\n  %r = fcmp oeq $T %a, 0x7FF0000000000000\n  ret i1 %r\n}\n"
    /* pow with the special exponents of PyTorch's pow_tensor_scalar_optimized
     * (2, 3, 0.5, -0.5, -1, -2); a constant exponent folds to one path */
    "define internal $T @op.pow.$S($T %x, $T %e) alwaysinline {\n"
    "  %x2 = fmul $T %x, %x\n  %x3 = fmul $T %x2, %x\n  %sq = call $T @llvm.sqrt.$S($T %x)\n"
    "  %rs = fdiv $T 1.0, %sq\n  %r1 = fdiv $T 1.0, %x\n  %r2 = fdiv $T 1.0, %x2\n"
    "  %p = call $T @llvm.pow.$S($T %x, $T %e)\n"
    "  %c2 = fcmp oeq $T %e, 2.0\n  %c3 = fcmp oeq $T %e, 3.0\n  %ch = fcmp oeq $T %e, 0.5\n"
    "  %cmh = fcmp oeq $T %e, -0.5\n  %cm1 = fcmp oeq $T %e, -1.0\n  %cm2 = fcmp oeq $T %e, -2.0\n"
    "  %s1 = select i1 %cm2, $T %r2, $T %p\n  %s2 = select i1 %cm1, $T %r1, $T %s1\n"
    "  %s3 = select i1 %cmh, $T %rs, $T %s2\n  %s4 = select i1 %ch, $T %sq, $T %s3\n"
    "  %s5 = select i1 %c3, $T %x3, $T %s4\n  %s6 = select i1 %c2, $T %x2, $T %s5\n  ret $T %s6\n}\n"
    /* gelu as PyTorch's CPU GeluKernelImpl: x * 0.5 * (1 + erf(x / sqrt 2)),
     * or with approximate='tanh' 0.5 * x * (1 + tanh(b * (x + k * x^3))) */
    "define internal $T @op.gelu.$S($T %x, i1 %tanh) alwaysinline {\n"
    "  %h = fmul $T %x, 0.5\n  %xa = fmul $T %x, $A\n  %ef = call $T @op.erfg.$S($T %xa)\n"
    "  %e1 = fadd $T 1.0, %ef\n  %re = fmul $T %h, %e1\n"
    "  %x2 = fmul $T %x, %x\n  %x3 = fmul $T %x2, %x\n  %kx = fmul $T %x3, $K\n"
    "  %in0 = fadd $T %x, %kx\n  %in = fmul $T %in0, $B\n"
    "  %th = call $T @op.tanh.$S($T %in)\n  %t1 = fadd $T 1.0, %th\n  %hx = fmul $T 0.5, %x\n"
    "  %rt = fmul $T %hx, %t1\n  %r = select i1 %tanh, $T %rt, $T %re\n  ret $T %r\n}\n";

/* exp, tanh and erf of float vectorized: LLVM 14's loop vectorizer takes
 * no libm call without a vector library, and the C API cannot give it one,
 * so a loop calling expf stays scalar. These are Cephes's single precision
 * algorithms (exp: a power of 2 times a degree-6 polynomial of the
 * remainder, within 2 ulp; tanh: an odd polynomial below 0.625, else
 * 1 - 2 / (exp(2|x|) + 1)), and for gelu's erf the one PyTorch's
 * Vectorized<float>::erf uses (Abramowitz and Stegun 7.1.26, absolute
 * error 1.5e-7: gelu's x / 2 scales it below float32's tolerance; aten.erf
 * itself stays libm's). Overflow, underflow, subnormal results (2^n in two
 * steps), infinities and NaN come out as libm's. float64 calls libm. */
static void put_vector_math(text *t) {
  const double P[6] = {1.9875691500E-4, 1.3981999507E-3, 8.3334519073E-3,
                       4.1665795894E-2, 1.6666665459E-1, 5.0000001201E-1};
  const double T[5] = {-5.70498872745E-3, 2.06390887954E-2, -5.37397155531E-2,
                       1.33314422036E-1, -3.33332819422E-1};
  const double E[6] = {0.3275911, 0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429};
#define F(v) ir_const_f(v, ALLOY_F32).s
  ir_put(t, "define internal float @op.exp.f32(float %%x) alwaysinline {\n"
            "  %%c0 = call float @llvm.maxnum.f32(float %%x, float -104.0)\n"
            "  %%c = call float @llvm.minnum.f32(float %%c0, float 89.0)\n"
            "  %%t = fmul float %%c, %s\n  %%n = call float @llvm.roundeven.f32(float %%t)\n"
            "  %%a = fmul float %%n, %s\n  %%r0 = fsub float %%c, %%a\n"
            "  %%b = fmul float %%n, %s\n  %%r = fsub float %%r0, %%b\n  %%z = fmul float %%r, %%r\n",
         F(1.44269504088896341), F(0.693359375), F(-2.12194440e-4));
  ir_put(t, "  %%p0 = fmul float %%r, %s\n  %%q0 = fadd float %%p0, %s\n", F(P[0]), F(P[1]));
  for (int i = 1; i < 5; i++)
    ir_put(t, "  %%p%d = fmul float %%q%d, %%r\n  %%q%d = fadd float %%p%d, %s\n", i, i - 1, i, i, F(P[i + 1]));
  ir_put(t, "  %%y0 = fmul float %%q4, %%z\n  %%y1 = fadd float %%y0, %%r\n  %%y = fadd float %%y1, 1.0\n"
            "  %%ni = fptosi float %%n to i32\n  %%n1 = ashr i32 %%ni, 1\n  %%n2 = sub i32 %%ni, %%n1\n"
            "  %%e1 = add i32 %%n1, 127\n  %%s1 = shl i32 %%e1, 23\n  %%f1 = bitcast i32 %%s1 to float\n"
            "  %%e2 = add i32 %%n2, 127\n  %%s2 = shl i32 %%e2, 23\n  %%f2 = bitcast i32 %%s2 to float\n"
            "  %%m1 = fmul float %%y, %%f1\n  %%m = fmul float %%m1, %%f2\n"
            "  %%big = fcmp ogt float %%x, %s\n  %%small = fcmp olt float %%x, %s\n"
            "  %%nan = fcmp uno float %%x, 0.0\n"
            "  %%v0 = select i1 %%big, float 0x7FF0000000000000, float %%m\n"
            "  %%v1 = select i1 %%small, float 0.0, float %%v0\n"
            "  %%v = select i1 %%nan, float %%x, float %%v1\n  ret float %%v\n}\n",
         F(88.72283935546875), F(-103.97208404541015625));
  ir_put(t, "define internal float @op.tanh.f32(float %%x) alwaysinline {\n"
            "  %%a = call float @llvm.fabs.f32(float %%x)\n  %%a2 = fmul float %%a, 2.0\n"
            "  %%e = call float @op.exp.f32(float %%a2)\n  %%d = fadd float %%e, 1.0\n"
            "  %%q = fdiv float 2.0, %%d\n  %%l = fsub float 1.0, %%q\n"
            "  %%ls = call float @llvm.copysign.f32(float %%l, float %%x)\n  %%z = fmul float %%x, %%x\n"
            "  %%p0 = fmul float %%z, %s\n  %%q0 = fadd float %%p0, %s\n", F(T[0]), F(T[1]));
  for (int i = 1; i < 4; i++)
    ir_put(t, "  %%p%d = fmul float %%q%d, %%z\n  %%q%d = fadd float %%p%d, %s\n", i, i - 1, i, i, F(T[i + 1]));
  ir_put(t, "  %%s0 = fmul float %%q3, %%z\n  %%s1 = fmul float %%s0, %%x\n  %%sm = fadd float %%s1, %%x\n"
            "  %%c = fcmp olt float %%a, 0.625\n  %%v = select i1 %%c, float %%sm, float %%ls\n  ret float %%v\n}\n");
  ir_put(t, "define internal float @op.erfg.f32(float %%x) alwaysinline {\n"
            "  %%a = call float @llvm.fabs.f32(float %%x)\n  %%t0 = fmul float %%a, %s\n"
            "  %%t1 = fadd float %%t0, 1.0\n  %%t = fdiv float 1.0, %%t1\n"
            "  %%p0 = fmul float %%t, %s\n  %%q0 = fadd float %%p0, %s\n", F(E[0]), F(E[5]), F(E[4]));
  for (int i = 1; i < 4; i++)
    ir_put(t, "  %%p%d = fmul float %%q%d, %%t\n  %%q%d = fadd float %%p%d, %s\n", i, i - 1, i, i, F(E[4 - i]));
  ir_put(t, "  %%xx = fmul float %%x, %%x\n  %%nx = fneg float %%xx\n  %%e = call float @op.exp.f32(float %%nx)\n"
            "  %%rt = fmul float %%q3, %%t\n  %%re = fmul float %%rt, %%e\n  %%om = fsub float 1.0, %%re\n"
            "  %%v = call float @llvm.copysign.f32(float %%om, float %%x)\n  ret float %%v\n}\n");
#undef F
  ir_put(t, "define internal double @op.exp.f64(double %%x) alwaysinline {\n"
            "  %%v = call double @llvm.exp.f64(double %%x)\n  ret double %%v\n}\n"
            "define internal double @op.tanh.f64(double %%x) alwaysinline {\n"
            "  %%v = call double @tanh(double %%x)\n  ret double %%v\n}\n"
            "define internal double @op.erfg.f64(double %%x) alwaysinline {\n"
            "  %%v = call double @erf(double %%x)\n  ret double %%v\n}\n");
}

/* The LLVM intrinsics and libm functions the primitives call. */
static const char *const float_intrinsics[] = {"exp", "exp2", "log", "log2", "log10", "sqrt", "sin", "cos",
                                               "floor", "ceil", "trunc", "roundeven", "fabs"};
static const char *const libm_unary[] = {"tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
                                         "asinh", "acosh", "atanh", "erf", "erfc", "expm1", "log1p"};

/* $A, $B, $K: gelu's constants sqrt(1/2), sqrt(2/pi) and 0.044715 in the
 * type (PyTorch's are opmath values: float for float). */
static void put_substituted(text *t, const char *tmpl, alloy_dtype ft, const char *T, const char *S, const char *M) {
  irv a = ir_const_f(0.70710678118654752440, ft), b = ir_const_f(0.79788456080286535588, ft),
      kk = ir_const_f(0.044715, ft);
  for (const char *c = tmpl; *c; c++) {
    if (c[0] == '$' && strchr("TSMABK", c[1])) {
      char w = c[1];
      ir_put(t, "%s", w == 'T' ? T : w == 'S' ? S : w == 'M' ? M : w == 'A' ? a.s : w == 'B' ? b.s : kk.s);
      c++;
    } else {
      char ch[2] = {*c, 0};
      ir_put(t, "%s", ch);
    }
  }
}

void ir_prelude(text *t) {
  static const struct {
    alloy_dtype t;
    const char *T, *S, *M;
  } ftypes[] = {{ALLOY_F32, "float", "f32", "f"}, {ALLOY_F64, "double", "f64", ""}};
  for (size_t f = 0; f < 2; f++) {
    const char *T = ftypes[f].T, *S = ftypes[f].S, *M = ftypes[f].M;
    for (size_t i = 0; i < sizeof float_intrinsics / sizeof *float_intrinsics; i++)
      ir_put(t, "declare %s @llvm.%s.%s(%s)\n", T, float_intrinsics[i], S, T);
    ir_put(t, "declare %s @llvm.pow.%s(%s, %s)\n", T, S, T, T);
    ir_put(t, "declare %s @llvm.fma.%s(%s, %s, %s)\n", T, S, T, T, T);
    ir_put(t, "declare %s @llvm.maxnum.%s(%s, %s)\n", T, S, T, T);
    ir_put(t, "declare %s @llvm.copysign.%s(%s, %s)\n", T, S, T, T);
    ir_put(t, "declare %s @llvm.minnum.%s(%s, %s)\n", T, S, T, T);
    for (size_t i = 0; i < sizeof libm_unary / sizeof *libm_unary; i++)
      ir_put(t, "declare %s @%s%s(%s) nounwind readnone\n", T, libm_unary[i], M, T);
    ir_put(t, "declare %s @atan2%s(%s, %s) nounwind readnone\n", T, M, T, T);
    put_substituted(t, float_helpers, ftypes[f].t, T, S, M);
  }
  put_vector_math(t);
  static const char *const ints[] = {"i8", "i16", "i32", "i64"};
  for (size_t i = 0; i < 4; i++) {
    const char *I = ints[i];
    ir_put(t, "declare %s @llvm.abs.%s(%s, i1)\n", I, I, I);
    static const char *const mm[] = {"smax", "smin", "umax", "umin"};
    for (size_t j = 0; j < 4; j++) ir_put(t, "declare %s @llvm.%s.%s(%s, %s)\n", I, mm[j], I, I, I);
  }
  /* bfloat16 by its bits: round to nearest even, NaN kept quiet with its
   * sign (alloy_bf16_from_f32) */
  ir_put(t, "define internal i16 @op.to_bf16(float %%f) alwaysinline {\n"
            "  %%u = bitcast float %%f to i32\n  %%a = and i32 %%u, 2147483647\n"
            "  %%n = icmp ugt i32 %%a, 2139095040\n  %%hi = lshr i32 %%u, 16\n  %%q = or i32 %%hi, 64\n"
            "  %%l = and i32 %%hi, 1\n  %%s0 = add i32 %%u, 32767\n  %%s1 = add i32 %%s0, %%l\n"
            "  %%r0 = lshr i32 %%s1, 16\n  %%r1 = select i1 %%n, i32 %%q, i32 %%r0\n"
            "  %%r = trunc i32 %%r1 to i16\n  ret i16 %%r\n}\n"
            "define internal float @op.rnd_bf16(float %%f) alwaysinline {\n"
            "  %%b = call i16 @op.to_bf16(float %%f)\n  %%w = zext i16 %%b to i32\n  %%s = shl i32 %%w, 16\n"
            "  %%r = bitcast i32 %%s to float\n  ret float %%r\n}\n"
            "attributes #0 = { nounwind }\n");
}

/* ---- loops ----------------------------------------------------------------------- */

void ir_loop_begin(kern *k, ir_loop *l, const char *trip) {
  (void)trip;
  l->id = k->nlabel++;
  snprintf(l->pred, sizeof l->pred, "%s", k->cur);
  snprintf(l->iv, sizeof l->iv, "%%i%d", l->id);
  ir_put(&k->fn, "  br label %%L%d\nL%d:\n", l->id, l->id);
  ir_put(&k->fn, "  %%i%d = phi i64 [ 0, %%%s ], [ %%i%d.n, %%L%d.latch ]\n", l->id, l->pred, l->id, l->id);
  snprintf(k->cur, sizeof k->cur, "L%d", l->id);
}

void ir_loop_phi(kern *k, const ir_loop *l, int reg, alloy_dtype t, const char *init, int next) {
  ir_put(&k->fn, "  %%r%d = phi %s [ %s, %%%s ], [ %%r%d, %%L%d.latch ]\n", reg, ir_type(t), init, l->pred, next,
         l->id);
}

void ir_loop_end(kern *k, ir_loop *l, const char *trip) {
  ir_put(&k->fn, "  br label %%L%d.latch\nL%d.latch:\n", l->id, l->id);
  ir_put(&k->fn, "  %%i%d.n = add i64 %%i%d, 1\n  %%i%d.c = icmp ult i64 %%i%d.n, %s\n", l->id, l->id, l->id, l->id,
         trip);
  ir_put(&k->fn, "  br i1 %%i%d.c, label %%L%d, label %%L%d.x\nL%d.x:\n", l->id, l->id, l->id, l->id);
  snprintf(k->cur, sizeof k->cur, "L%d.x", l->id);
}

/* ---- the kernel skeleton ------------------------------------------------------------ */

/* The kernel is two functions: k<id>(i8** p, begin, end), what execute
 * calls, loads the pointers and calls k<id>.body, whose pointers are
 * noalias parameters. A kernel never writes a base it reads (the planner
 * keeps a group from reading what it writes, and every base is one
 * buffer or one temporary's own range), so that is true, and once the
 * body is inlined LLVM knows the stores do not touch the loads: the loops
 * vectorize without runtime overlap checks. */
void ir_kernel_open(kern *k, int nouter) {
  text *f = &k->fn;
  ir_put(f, "(");
  for (int i = 0; i < k->nparams; i++) ir_put(f, "i8* noalias %%b%d, ", i);
  ir_put(f, "i64 %%begin, i64 %%end) alwaysinline nounwind {\nentry:\n");
  for (int s = 0; s < k->nslots; s++)
    ir_put(f, "  %%t%d = bitcast i8* %%b%d to %s*\n", s, k->slots[s].param, ir_mem_type(k->slots[s].dtype));
  for (int i = 0; i < k->nacc; i++) ir_put(f, "  %%acc%d = alloca %s, align 8\n", i, ir_type(k->acc[i]));
  ir_put(f, "  %%go = icmp ult i64 %%begin, %%end\n  br i1 %%go, label %%row, label %%done\nrow:\n");
  ir_put(f, "  %%o = phi i64 [ %%begin, %%entry ], [ %%o.n, %%row.latch ]\n");
  snprintf(k->cur, sizeof k->cur, "row");
  k->rows = 1;
  for (int d = 0; d < nouter; d++) k->rows *= k->sizes[d];
  /* the row's index in each outer dim, row-major */
  if (nouter > 0) ir_put(f, "  %%x.rem%d = add i64 %%o, 0\n", nouter - 1);
  for (int d = nouter - 1; d >= 0; d--) {
    if (d == 0) {
      ir_put(f, "  %%x0 = add i64 %%x.rem0, 0\n");
      break;
    }
    ir_put(f, "  %%x%d = urem i64 %%x.rem%d, %" PRId64 "\n  %%x.rem%d = udiv i64 %%x.rem%d, %" PRId64 "\n", d, d,
           k->sizes[d], d - 1, d, k->sizes[d]);
  }
  for (int s = 0; s < k->nslots; s++) {
    const kslot *sl = &k->slots[s];
    char acc[48];
    snprintf(acc, sizeof acc, "%" PRId64, sl->offset);
    for (int d = 0; d < nouter; d++) {
      if (k->sizes[d] == 1 || sl->strides[d] == 0) continue;
      ir_put(f, "  %%ro.%d.m%d = mul i64 %%x%d, %" PRId64 "\n", s, d, d, sl->strides[d]);
      ir_put(f, "  %%ro.%d.a%d = add i64 %s, %%ro.%d.m%d\n", s, d, acc, s, d);
      snprintf(acc, sizeof acc, "%%ro.%d.a%d", s, d);
    }
    ir_put(f, "  %%ro.%d = add i64 %s, 0\n", s, acc);
  }
}

void ir_kernel_close(kern *k) {
  ir_put(&k->fn, "  br label %%row.latch\nrow.latch:\n  %%o.n = add i64 %%o, 1\n"
                 "  %%oc = icmp ult i64 %%o.n, %%end\n  br i1 %%oc, label %%row, label %%done\n"
                 "done:\n  ret void\n}\n");
}

void ir_kernel_wrapper(text *t, int id, int nparams) {
  ir_put(t, "\ndefine void @k%d(i8** noalias nocapture readonly %%p, i64 %%begin, i64 %%end) #0 {\nentry:\n", id);
  for (int i = 0; i < nparams; i++)
    ir_put(t, "  %%q%d = getelementptr inbounds i8*, i8** %%p, i64 %d\n  %%b%d = load i8*, i8** %%q%d, align 8\n", i, i, i,
           i);
  ir_put(t, "  call void @k%d.body(", id);
  for (int i = 0; i < nparams; i++) ir_put(t, "i8* %%b%d, ", i);
  ir_put(t, "i64 %%begin, i64 %%end)\n  ret void\n}\n");
}

void ir_elem_ptr(kern *k, text *t, int s, const char *off, char *ptr, size_t cap) {
  const char *mt = ir_mem_type(k->slots[s].dtype);
  int r = ir_ins(k, t, "getelementptr inbounds %s, %s* %%t%d, i64 %s", mt, mt, s, off);
  snprintf(ptr, cap, "%%r%d", r);
}
