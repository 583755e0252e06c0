/*
 * plugins/cuda/cuda_codegen.c: a partition becomes a plan and the CUDA C
 * of its kernels, the way Inductor turns an FX graph into Triton.
 *
 * Every tensor of the plan is a strided view of a base: a partition input,
 * a partition output, or a temporary of the execute's scratch arena. View
 * ops (view, permute, expand, slice, ...) only make a new view; pointwise
 * ops are fused, a run of consecutive ones over the same iteration shape
 * becoming one kernel: each thread takes elements of the shape, loads the
 * group's operands through their strides (a broadcast dim has stride 0),
 * computes every node in registers in PyTorch's opmath and stores only the
 * values something outside the group reads. A reshape that no view can
 * express, and an output that is a view or an input, are copies: the same
 * kernel with one load and one store.
 *
 * Sizes are concrete (cuda_internal.h), so the index arithmetic is made of
 * constants the compiler folds; an operand laid out like the iteration
 * shape is read at the thread's linear index.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/cuda/cuda_internal.h"

/* ---- the module's prelude ------------------------------------------------
 * Loads and stores by dtype (16-bit floats by their bits, with
 * round-to-nearest-even as PyTorch's conversions) and the helpers the op
 * table's expressions call, after PyTorch's CUDA kernels. */
static const char prelude[] =
    "typedef long long i64;\n"
    "__device__ __forceinline__ float f16_to_f32(unsigned short h) {\n"
    "  float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); return f; }\n"
    "__device__ __forceinline__ unsigned short f32_to_f16(float f) {\n"
    "  unsigned short h; asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f)); return h; }\n"
    "__device__ __forceinline__ float bf16_to_f32(unsigned short b) {\n"
    "  return __uint_as_float(((unsigned)b) << 16); }\n"
    "__device__ __forceinline__ unsigned short f32_to_bf16(float f) {\n"
    "  unsigned u = __float_as_uint(f);\n"
    "  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40);\n"
    "  return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16); }\n"
    "__device__ __forceinline__ float rnd_f16(float f) { return f16_to_f32(f32_to_f16(f)); }\n"
    "__device__ __forceinline__ float rnd_bf16(float f) { return bf16_to_f32(f32_to_bf16(f)); }\n"
    "#define LD(name, T, R, conv) __device__ __forceinline__ R ld_##name(const char *p, i64 k) "
    "{ return (R)conv(((const T *)p)[k]); }\n"
    "#define ST(name, T, R, conv) __device__ __forceinline__ void st_##name(char *p, i64 k, R v) "
    "{ ((T *)p)[k] = (T)conv(v); }\n"
    "#define ID(x) (x)\n"
    "#define NZ(x) ((x) != 0)\n"
    "LD(bool, unsigned char, bool, NZ) LD(u8, unsigned char, int, ID) LD(i8, signed char, int, ID)\n"
    "LD(i16, short, int, ID) LD(i32, int, int, ID) LD(i64, i64, i64, ID)\n"
    "LD(f16, unsigned short, float, f16_to_f32) LD(bf16, unsigned short, float, bf16_to_f32)\n"
    "LD(f32, float, float, ID) LD(f64, double, double, ID)\n"
    "ST(bool, unsigned char, bool, ID) ST(u8, unsigned char, int, ID) ST(i8, signed char, int, ID)\n"
    "ST(i16, short, int, ID) ST(i32, int, int, ID) ST(i64, i64, i64, ID)\n"
    "ST(f16, unsigned short, float, f32_to_f16) ST(bf16, unsigned short, float, f32_to_bf16)\n"
    "ST(f32, float, float, ID) ST(f64, double, double, ID)\n"
    "template <class T> __device__ __forceinline__ bool op_isnan(T x) { return x != x; }\n"
    "template <class T> __device__ __forceinline__ bool op_isinf(T x) {\n"
    "  return x == (T)(1.0 / 0.0) || x == -(T)(1.0 / 0.0); }\n"
    "__device__ __forceinline__ bool op_isinf(int x) { return false; }\n"
    "__device__ __forceinline__ bool op_isinf(i64 x) { return false; }\n"
    "__device__ __forceinline__ bool op_isinf(bool x) { return false; }\n"
    "template <class T> __device__ __forceinline__ T op_add(T a, T b) { return a + b; }\n"
    "template <class T> __device__ __forceinline__ T op_sub(T a, T b) { return a - b; }\n"
    "template <class T> __device__ __forceinline__ T op_mul(T a, T b) { return a * b; }\n"
    "template <class T> __device__ __forceinline__ T op_bitnot(T x) { return ~x; }\n"
    "__device__ __forceinline__ bool op_bitnot(bool x) { return !x; }\n"
    "#define WRAP(T, U) \\\n"
    "  __device__ __forceinline__ T op_add(T a, T b) { return (T)((U)a + (U)b); } \\\n"
    "  __device__ __forceinline__ T op_sub(T a, T b) { return (T)((U)a - (U)b); } \\\n"
    "  __device__ __forceinline__ T op_mul(T a, T b) { return (T)((U)a * (U)b); }\n"
    "WRAP(int, unsigned) WRAP(i64, unsigned long long)\n"
    "__device__ __forceinline__ bool op_add(bool a, bool b) { return a || b; }\n"
    "__device__ __forceinline__ bool op_mul(bool a, bool b) { return a && b; }\n"
    "template <class T> __device__ __forceinline__ T op_abs(T x) { return x < 0 ? op_sub((T)0, x) : x; }\n"
    "__device__ __forceinline__ float op_abs(float x) { return fabsf(x); }\n"
    "__device__ __forceinline__ double op_abs(double x) { return fabs(x); }\n"
    "__device__ __forceinline__ bool op_abs(bool x) { return x; }\n"
    /* maximum/minimum propagate NaN (PyTorch's max_propagate_nan) */
    "template <class T> __device__ __forceinline__ T op_max(T a, T b) {\n"
    "  return op_isnan(a) ? a : op_isnan(b) ? b : (a > b ? a : b); }\n"
    "template <class T> __device__ __forceinline__ T op_min(T a, T b) {\n"
    "  return op_isnan(a) ? a : op_isnan(b) ? b : (a < b ? a : b); }\n"
    /* clamp: NaN stays NaN; min applied before max (so min > max gives max) */
    "template <class T> __device__ __forceinline__ T op_clamp(T x, int has_lo, T lo, int has_hi, T hi) {\n"
    "  if (op_isnan(x)) return x;\n"
    "  if (has_lo) x = op_isnan(lo) ? lo : (x < lo ? lo : x);\n"
    "  if (has_hi) x = op_isnan(hi) ? hi : (x > hi ? hi : x);\n"
    "  return x; }\n"
    "template <class T> __device__ __forceinline__ T op_relu(T x) { return x <= (T)0 && !op_isnan(x) ? (T)0 : x; }\n"
    "__device__ __forceinline__ bool op_relu(bool x) { return x; }\n"
    "__device__ __forceinline__ float op_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }\n"
    "__device__ __forceinline__ double op_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }\n"
    /* gelu: approximate 0 is erf's form, 1 tanh's (PyTorch's GeluCUDAKernelImpl) */
    "template <class T> __device__ __forceinline__ T op_gelu(T x, int tanh_form) {\n"
    "  if (tanh_form) {\n"
    "    const T beta = (T)(0.7978845608028654), kappa = (T)0.044715;\n"
    "    T inner = beta * (x + kappa * x * x * x);\n"
    "    return (T)0.5 * x * ((T)1 + tanh(inner)); }\n"
    "  return x * (T)0.5 * ((T)1 + erf(x * (T)(0.7071067811865476))); }\n"
    /* pow with PyTorch's special exponents (pow_tensor_scalar_optimized) */
    "template <class T> __device__ __forceinline__ T op_pow(T x, T e) {\n"
    "  if (e == (T)2) return x * x;\n"
    "  if (e == (T)3) return x * x * x;\n"
    "  if (e == (T)0.5) return sqrt(x);\n"
    "  if (e == (T)-0.5) return rsqrt(x);\n"
    "  if (e == (T)-1) return (T)1 / x;\n"
    "  if (e == (T)-2) return (T)1 / (x * x);\n"
    "  return pow(x, e); }\n"
    /* block reductions: a warp by shuffles, then the warps' partials
     * through shared memory; every thread gets the result */
    "struct SumOp { template <class T> __device__ T operator()(T a, T b) const { return a + b; } };\n"
    "struct MaxOp { template <class T> __device__ T operator()(T a, T b) const {\n"
    "  return op_isnan(a) ? a : op_isnan(b) ? b : (a > b ? a : b); } };\n"
    "struct MinOp { template <class T> __device__ T operator()(T a, T b) const {\n"
    "  return op_isnan(a) ? a : op_isnan(b) ? b : (a < b ? a : b); } };\n"
    "template <class T, class F> __device__ T block_reduce(T v, F f, T *sh, T id) {\n"
    "  for (int o = 16; o > 0; o >>= 1) v = f(v, __shfl_down_sync(0xffffffffu, v, o));\n"
    "  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
    "  __syncthreads();\n"
    "  if (lane == 0) sh[warp] = v;\n"
    "  __syncthreads();\n"
    "  if (warp == 0) {\n"
    "    v = lane < (int)(blockDim.x >> 5) ? sh[lane] : id;\n"
    "    for (int o = 16; o > 0; o >>= 1) v = f(v, __shfl_down_sync(0xffffffffu, v, o));\n"
    "    if (lane == 0) sh[0] = v;\n"
    "  }\n"
    "  __syncthreads();\n"
    "  return sh[0]; }\n";

/* ---- dtypes -------------------------------------------------------------*/

static const char *dtype_tag(alloy_dtype t) {
  switch (t) {
    case ALLOY_BOOL: return "bool";
    case ALLOY_U8: return "u8";
    case ALLOY_I8: return "i8";
    case ALLOY_I16: return "i16";
    case ALLOY_I32: return "i32";
    case ALLOY_I64: return "i64";
    case ALLOY_F16: return "f16";
    case ALLOY_BF16: return "bf16";
    case ALLOY_F32: return "f32";
    case ALLOY_F64: return "f64";
    default: return NULL;
  }
}

/* The register type a value of dtype t lives in (16-bit floats in float). */
static const char *reg_type(alloy_dtype t) {
  switch (t) {
    case ALLOY_BOOL: return "bool";
    case ALLOY_I64: return "i64";
    case ALLOY_F16:
    case ALLOY_BF16:
    case ALLOY_F32: return "float";
    case ALLOY_F64: return "double";
    default: return "int";
  }
}

/* PyTorch's type promotion over the operands of one node: dimensioned
 * tensors first, then zero-dim tensors, then Python scalars, each tier
 * counting only when its category (bool < integer < float) is higher. */
static int category(alloy_dtype t) {
  return t == ALLOY_BOOL ? 0 : alloy_dtype_is_float(t) ? 2 : 1;
}
static alloy_dtype promote_pair(alloy_dtype a, alloy_dtype b) {
  if (a == b) return a;
  int ca = category(a), cb = category(b);
  if (ca != cb) return ca > cb ? a : b;
  if (ca == 2) {
    if (a == ALLOY_F64 || b == ALLOY_F64) return ALLOY_F64;
    if (a == ALLOY_F32 || b == ALLOY_F32) return ALLOY_F32;
    return ALLOY_F32; /* float16 with bfloat16 */
  }
  if ((a == ALLOY_U8 && b == ALLOY_I8) || (a == ALLOY_I8 && b == ALLOY_U8)) return ALLOY_I16;
  if (a == ALLOY_U8) return b;
  if (b == ALLOY_U8) return a;
  return alloy_dtype_size(a) > alloy_dtype_size(b) ? a : b;
}

typedef struct tiers {
  bool has[3];
  alloy_dtype t[3]; /* dimensioned, zero-dim, scalar */
} tiers;

static void tiers_add(tiers *ts, int tier, alloy_dtype t) {
  ts->t[tier] = ts->has[tier] ? promote_pair(ts->t[tier], t) : t;
  ts->has[tier] = true;
}

static alloy_dtype tiers_result(const tiers *ts) {
  alloy_dtype r = ALLOY_BOOL;
  bool any = false;
  for (int k = 0; k < 3; k++) {
    if (!ts->has[k]) continue;
    alloy_dtype t = ts->t[k];
    if (k == 2 && category(t) == 2) t = ALLOY_F32; /* a float scalar: the default dtype */
    if (k == 2 && category(t) == 1) t = ALLOY_I64;
    if (!any) r = t, any = true;
    else if (category(t) > category(r)) r = t;
  }
  return r;
}

/* ---- text -----------------------------------------------------------------*/

typedef struct text {
  char *s;
  size_t len, cap;
  bool oom;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...) {
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

/* ---- the builder's state ---------------------------------------------------*/

/* What the plan knows of one graph value. */
typedef struct vinfo {
  const alloy_value *v;
  int tensor; /* plan tensor holding it in memory, or -1 */
  int group;  /* the fused group computing it, or -1 */
  int var;    /* its register in that group's kernel */
  int output; /* the partition output it is written to directly, or -1 */
  bool stored; /* read outside its group: written to memory */
} vinfo;

typedef struct builder {
  const alloy_host_api *host;
  const alloy_graph *g;
  const cuda_layout *layout; /* the execute's strides, or NULL: contiguous */
  cuda_plan *plan;
  cuda_tensor *tensors;
  int ntensors, cap_tensors, cap_bases, cap_launches;
  vinfo *vals; /* open addressing on the value pointer */
  int cap_vals;
  text src;
  alloy_error *err;
} builder;

static alloy_error *fail(builder *b, const alloy_node *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static alloy_error *fail(builder *b, const alloy_node *n, const char *fmt, ...) {
  if (b->err) return b->err;
  char msg[512];
  int k = n ? snprintf(msg, sizeof msg, "cuda: %s: ", b->host->node_op_name(n)) : 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg + k, sizeof msg - (size_t)k, fmt, ap);
  va_end(ap);
  return b->err = b->host->error_new(ALLOY_ERR_UNSUPPORTED, msg);
}

static vinfo *val(builder *b, const alloy_value *v) {
  size_t h = ((uintptr_t)v >> 4) * 0x9E3779B97F4A7C15ull;
  for (int i = 0;; i++) {
    vinfo *e = &b->vals[(h + (size_t)i) & (size_t)(b->cap_vals - 1)];
    if (e->v == v) return e;
    if (!e->v) {
      *e = (vinfo){.v = v, .tensor = -1, .group = -1, .var = -1, .output = -1};
      return e;
    }
  }
}

static bool grow(void **p, int *cap, int need, size_t size) {
  if (need <= *cap) return true;
  int c = *cap ? *cap * 2 : 16;
  while (c < need) c *= 2;
  void *q = realloc(*p, (size_t)c * size);
  if (!q) return false;
  *p = q, *cap = c;
  return true;
}

static int add_base(builder *b, int kind, int index, uint64_t bytes) {
  cuda_plan *p = b->plan;
  if (!grow((void **)&p->bases, &b->cap_bases, p->nbases + 1, sizeof *p->bases)) return -1;
  cuda_base *base = &p->bases[p->nbases];
  *base = (cuda_base){.kind = kind, .index = index, .bytes = bytes};
  if (kind == BASE_TEMP) {
    base->offset = p->scratch_bytes;
    p->scratch_bytes += (bytes + 255) & ~(uint64_t)255;
  }
  return p->nbases++;
}

static int64_t numel_of(const int64_t *sizes, int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= sizes[d];
  return n;
}

/* A tensor of value v's sizes on base: contiguous, or laid out as the
 * execute's tensor `as` is (its strides, in elements). */
static int add_tensor(builder *b, const alloy_value *v, int base, const alloy_tensor *as) {
  if (!grow((void **)&b->tensors, &b->cap_tensors, b->ntensors + 1, sizeof *b->tensors)) return -1;
  cuda_tensor *t = &b->tensors[b->ntensors];
  memset(t, 0, sizeof *t);
  t->base = base;
  t->dtype = b->host->value_dtype(v);
  t->rank = b->host->value_rank(v);
  for (int d = 0; d < t->rank; d++) b->host->value_size(v, d, &t->sizes[d]);
  int64_t stride = 1;
  for (int d = t->rank - 1; d >= 0; d--) t->strides[d] = stride, stride *= t->sizes[d];
  if (as && as->rank == t->rank && as->strides)
    for (int d = 0; d < t->rank; d++) t->strides[d] = as->strides[d];
  return b->ntensors++;
}

/* Checks v is a tensor the generated code handles: concrete sizes, a
 * dtype of the loads and stores, rank <= CUDA_MAX_RANK. */
static const char *value_unsupported(const alloy_host_api *h, const alloy_value *v) {
  if (h->value_kind(v) != 0) return NULL;
  if (!dtype_tag(h->value_dtype(v))) return "complex dtypes are not computed";
  int rank = h->value_rank(v);
  if (rank > CUDA_MAX_RANK) return "rank above 8";
  for (int d = 0; d < rank; d++) {
    int64_t s;
    if (!h->value_size(v, d, &s)) return NULL; /* specialized before compile */
  }
  return NULL;
}

/* The node's tensor operands in schema order, the items of a Tensor[]
 * (cat) in place (Python numbers excluded); how many there are. */
static int tensor_operands(const alloy_host_api *h, const alloy_node *n, const alloy_value **out,
                           int cap) {
  int k = 0;
  for (int i = 0; i < h->node_num_args(n); i++) {
    const alloy_arg *a = h->node_arg(n, i);
    int items = h->arg_type(a) == ALLOY_ARG_TYPE_LIST ? h->arg_list_size(a) : 1;
    for (int j = 0; j < items; j++) {
      const alloy_arg *x = h->arg_type(a) == ALLOY_ARG_TYPE_LIST ? h->arg_list_item(a, j) : a;
      if (h->arg_type(x) != ALLOY_ARG_TYPE_VALUE) continue;
      const alloy_value *v = h->arg_value(x);
      if (v && h->value_kind(v) == 0) {
        if (k < cap) out[k] = v;
        k++;
      }
    }
  }
  return k;
}

static const alloy_arg *arg_named(const alloy_host_api *h, const alloy_node *n, const char *name) {
  for (int i = 0; i < h->node_num_args(n); i++) {
    const char *an = h->node_arg_name(n, i);
    if (an && !strcmp(an, name)) return h->node_arg(n, i);
  }
  return NULL;
}

/* index.Tensor(self, indices): the dim of its one integer index tensor
 * (the others None), or -1 for any other pattern. */
static int index_position(const alloy_host_api *h, const alloy_node *n) {
  const alloy_arg *list = h->node_arg(n, 1);
  if (!list || h->arg_type(list) != ALLOY_ARG_TYPE_LIST) return -1;
  int pos = -1;
  for (int k = 0; k < h->arg_list_size(list); k++) {
    const alloy_arg *a = h->arg_list_item(list, k);
    if (h->arg_type(a) == ALLOY_ARG_TYPE_NONE) continue;
    const alloy_value *v = h->arg_type(a) == ALLOY_ARG_TYPE_VALUE ? h->arg_value(a) : NULL;
    if (!v || pos >= 0) return -1;
    alloy_dtype t = h->value_dtype(v);
    if (t != ALLOY_I64 && t != ALLOY_I32) return -1;
    pos = k;
  }
  return pos;
}

const char *cuda_node_unsupported(const alloy_host_api *h, const alloy_node *n) {
  const cuda_op *op = cuda_op_find(h->node_op_name(n));
  if (!op) return "no CUDA kernel for this op yet";
  const alloy_value *in[64];
  int nin = tensor_operands(h, n, in, 64);
  if (nin > 64) return "more than 64 tensor operands";
  for (int k = 0; k < nin; k++) {
    const char *why = value_unsupported(h, in[k]);
    if (why) return why;
    if (op->no_bool && h->value_dtype(in[k]) == ALLOY_BOOL) return "bool operands are refused";
  }
  for (int k = 0; k < h->node_num_outputs(n); k++) {
    const alloy_value *o = h->node_output(n, k);
    const char *why = value_unsupported(h, o);
    if (why) return why;
    alloy_dtype t = h->value_dtype(o);
    if (op->float_only && !alloy_dtype_is_float(t)) return "an integer result of a float op";
    bool truth = op->kind == CUDA_OP_REDUCE && (op->reduce == RED_ANY || op->reduce == RED_ALL);
    if (op->kind == CUDA_OP_REDUCE && !truth && (t == ALLOY_BOOL || (nin && h->value_dtype(in[0]) == ALLOY_BOOL)))
      return "a reduction of bool";
    if (op->kind == CUDA_OP_GEMM) {
      if (t != ALLOY_F32 && t != ALLOY_F16 && t != ALLOY_BF16) return "cuBLASLt products take float32, float16 or bfloat16";
      for (int j = 0; j < nin; j++)
        for (int d = 0; d < h->value_rank(in[j]); d++) {
          int64_t size = 1;
          if (h->value_size(in[j], d, &size) && size == 0) return "an empty product (cuBLASLt takes none)";
        }
      for (int j = 0; j < nin; j++)
        if (h->value_dtype(in[j]) != t) return "operands of mixed dtypes";
    }
    /* a float converted to an integer: CUDA saturates, the CPU wraps */
    if (op->kind == CUDA_OP_POINTWISE && !alloy_dtype_is_float(t) && t != ALLOY_BOOL)
      for (int j = 0; j < nin; j++)
        if (alloy_dtype_is_float(h->value_dtype(in[j])) && op->ct == CT_RESULT)
          return "float to integer conversion";
  }
  if (op->kind == CUDA_OP_INDEX && index_position(h, n) < 0)
    return "index.Tensor other than one integer index tensor";
  if (!strncmp(op->name, "aten.bitwise_", 13))
    for (int j = 0; j < nin; j++)
      if (alloy_dtype_is_float(h->value_dtype(in[j]))) return "bitwise ops of floats";
  /* scalar arguments given as graph values (SymInt, a run-time float) */
  for (int i = 0; i < h->node_num_args(n); i++) {
    const alloy_arg *a = h->node_arg(n, i);
    if (h->arg_type(a) == ALLOY_ARG_TYPE_VALUE && h->value_kind(h->arg_value(a)) != 0)
      return "a scalar argument known only at run time";
  }
  return NULL;
}

/* ---- views -------------------------------------------------------------------*/

/* PyTorch's computeStride: the strides of a view of sizes `to` over a
 * tensor of geometry t, or false when no view expresses it. */
static bool view_strides(const cuda_tensor *t, const int64_t *to, int rank_to, int64_t *out) {
  int64_t numel = numel_of(t->sizes, t->rank);
  if (numel == 0 || t->rank == 0) {
    int64_t s = 1;
    for (int d = rank_to - 1; d >= 0; d--) out[d] = s, s *= to[d] > 1 ? to[d] : 1;
    return true;
  }
  int view_d = rank_to - 1;
  int64_t chunk_base_stride = t->strides[t->rank - 1], tensor_numel = 1, view_numel = 1;
  for (int d = t->rank - 1; d >= 0; d--) {
    tensor_numel *= t->sizes[d];
    if (d == 0 || (t->sizes[d - 1] != 1 && t->strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || to[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= to[view_d];
        view_d--;
      }
      if (view_numel != tensor_numel) return false;
      if (d > 0) {
        chunk_base_stride = t->strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

static int64_t int_arg(const alloy_host_api *h, const alloy_node *n, const char *name, int64_t dflt) {
  const alloy_arg *a = arg_named(h, n, name);
  int64_t v;
  return a && h->arg_int(a, &v) ? v : dflt;
}

static int wrap_dim(int64_t d, int rank) {
  int r = rank > 0 ? rank : 1;
  return (int)(d < 0 ? d + r : d);
}

/* The view node n over tensor in: fills *out, or returns false when the
 * view needs the data copied first (a reshape of a non-viewable layout). */
static bool view_of(builder *b, const alloy_node *n, const cuda_tensor *in, const alloy_value *ov,
                    cuda_tensor *out) {
  const alloy_host_api *h = b->host;
  const char *name = h->node_op_name(n);
  *out = *in;
  int orank = h->value_rank(ov);
  int64_t osz[CUDA_MAX_RANK];
  for (int d = 0; d < orank; d++) h->value_size(ov, d, &osz[d]);
  out->rank = orank;
  memcpy(out->sizes, osz, sizeof *osz * (size_t)orank);
  if (!strcmp(name, "aten.view.default") || !strcmp(name, "aten._unsafe_view.default") ||
      !strcmp(name, "aten.reshape.default") || !strcmp(name, "aten.alias.default"))
    return view_strides(in, osz, orank, out->strides);
  if (!strcmp(name, "aten.permute.default")) {
    const alloy_arg *dims = arg_named(h, n, "dims");
    for (int d = 0; d < orank; d++) {
      int64_t p = 0;
      h->arg_int(h->arg_list_item(dims, d), &p);
      out->strides[d] = in->strides[wrap_dim(p, in->rank)];
    }
    return true;
  }
  if (!strcmp(name, "aten.t.default") || !strcmp(name, "aten.transpose.int")) {
    int d0 = 0, d1 = in->rank > 1 ? 1 : 0;
    if (!strcmp(name, "aten.transpose.int")) {
      d0 = wrap_dim(int_arg(h, n, "dim0", 0), in->rank);
      d1 = wrap_dim(int_arg(h, n, "dim1", 0), in->rank);
    }
    if (in->rank >= 1) {
      out->strides[d0] = in->strides[d1];
      out->strides[d1] = in->strides[d0];
    }
    return true;
  }
  if (!strcmp(name, "aten.expand.default")) {
    int lead = orank - in->rank;
    for (int d = 0; d < orank; d++) {
      int di = d - lead;
      out->strides[d] = di < 0 || (in->sizes[di] == 1 && osz[d] != 1) ? 0 : in->strides[di];
    }
    return true;
  }
  if (!strcmp(name, "aten.unsqueeze.default")) {
    int dim = (int)int_arg(h, n, "dim", 0);
    if (dim < 0) dim += in->rank + 1;
    for (int d = 0, di = 0; d < orank; d++)
      out->strides[d] = d == dim ? (di < in->rank ? in->sizes[di] * in->strides[di] : 1)
                                 : in->strides[di++];
    return true;
  }
  if (!strncmp(name, "aten.squeeze.", 13)) {
    /* the kept dims are the input's, in order, whose sizes the output has */
    bool drop[CUDA_MAX_RANK] = {false};
    int left = in->rank - orank;
    const alloy_arg *dims = arg_named(h, n, "dim");
    for (int d = 0; d < in->rank && left > 0; d++) {
      bool named = !dims;
      if (dims && h->arg_type(dims) == ALLOY_ARG_TYPE_LIST) {
        for (int k = 0; k < h->arg_list_size(dims); k++) {
          int64_t x;
          if (h->arg_int(h->arg_list_item(dims, k), &x) && wrap_dim(x, in->rank) == d) named = true;
        }
      } else if (dims) {
        int64_t x;
        named = h->arg_int(dims, &x) && wrap_dim(x, in->rank) == d;
      }
      if (named && in->sizes[d] == 1) drop[d] = true, left--;
    }
    for (int d = 0, k = 0; d < in->rank; d++)
      if (!drop[d] && k < orank) out->strides[k++] = in->strides[d];
    return true;
  }
  if (!strcmp(name, "aten.slice.Tensor")) {
    int dim = wrap_dim(int_arg(h, n, "dim", 0), in->rank);
    int64_t size = in->sizes[dim], start = int_arg(h, n, "start", 0), step = int_arg(h, n, "step", 1);
    if (start < 0) start += size;
    if (start < 0) start = 0;
    if (start > size) start = size;
    memcpy(out->strides, in->strides, sizeof *in->strides * (size_t)in->rank);
    out->offset = in->offset + start * in->strides[dim];
    out->strides[dim] = in->strides[dim] * step;
    return true;
  }
  if (!strcmp(name, "aten.select.int")) {
    int dim = wrap_dim(int_arg(h, n, "dim", 0), in->rank);
    int64_t index = int_arg(h, n, "index", 0);
    if (index < 0) index += in->sizes[dim];
    out->offset = in->offset + index * in->strides[dim];
    for (int d = 0, k = 0; d < in->rank; d++)
      if (d != dim) out->strides[k++] = in->strides[d];
    return true;
  }
  return false;
}

/* ---- kernels -------------------------------------------------------------*/

/* A kernel being written: its iteration shape, parameters (bases) and body. */
typedef struct kernel {
  int64_t sizes[CUDA_MAX_RANK];
  int rank;
  int bases[64], nbases;
  int nvars;
  int loaded[64], loaded_var[64], nloaded; /* tensors loaded once each */
  bool index_split; /* the per-dim indices are declared */
  bool rows;        /* a block per row (reductions), not a thread per element */
  text body;
} kernel;

static int kernel_param(kernel *k, int base) {
  for (int i = 0; i < k->nbases; i++)
    if (k->bases[i] == base) return i;
  if (k->nbases == 64) return -1;
  k->bases[k->nbases] = base;
  return k->nbases++;
}

/* The element offset of tensor t at the kernel's index, as C text: the
 * linear index when t is laid out as the iteration shape, else the sum of
 * the per-dim indices times t's strides (broadcast dims right-aligned). */
static void offset_text(kernel *k, const cuda_tensor *t, char *buf, size_t cap) {
  bool same = t->rank == k->rank;
  int64_t stride = 1;
  for (int d = k->rank - 1; same && d >= 0; d--) {
    if (t->sizes[d] != k->sizes[d] || (k->sizes[d] != 1 && t->strides[d] != stride)) same = false;
    stride *= k->sizes[d];
  }
  if (same) {
    snprintf(buf, cap, "%" PRId64 " + i", t->offset);
    return;
  }
  if (!k->index_split) {
    /* the per-dim indices, from the last dim */
    put(&k->body, "    i64 r = i;\n");
    for (int d = k->rank - 1; d >= 0; d--) {
      if (d > 0) put(&k->body, "    i64 i%d = r %% %" PRId64 "; r /= %" PRId64 ";\n", d, k->sizes[d], k->sizes[d]);
      else put(&k->body, "    i64 i0 = r;\n");
    }
    k->index_split = true;
  }
  size_t len = (size_t)snprintf(buf, cap, "%" PRId64, t->offset);
  int lead = k->rank - t->rank;
  for (int d = 0; d < t->rank && len < cap; d++) {
    int kd = d + lead;
    if (t->sizes[d] == 1 || t->strides[d] == 0) continue;
    len += (size_t)snprintf(buf + len, cap - len, " + i%d * %" PRId64, kd, t->strides[d]);
  }
}

/* Loads tensor t (plan tensor `id`, or -1) into a register of the kernel;
 * its number. A tensor is loaded once per kernel. */
static int kernel_load(builder *b, kernel *k, const cuda_tensor *t, int id) {
  for (int i = 0; id >= 0 && i < k->nloaded; i++)
    if (k->loaded[i] == id) return k->loaded_var[i];
  int p = kernel_param(k, t->base);
  if (p < 0) return -1;
  char off[512];
  offset_text(k, t, off, sizeof off);
  int v = k->nvars++;
  put(&k->body, "    %s v%d = ld_%s(p%d, %s);\n", reg_type(t->dtype), v, dtype_tag(t->dtype), p, off);
  if (id >= 0 && k->nloaded < 64) k->loaded[k->nloaded] = id, k->loaded_var[k->nloaded++] = v;
  (void)b;
  return v;
}

static void kernel_store(kernel *k, const cuda_tensor *t, int var) {
  int p = kernel_param(k, t->base);
  char off[512];
  offset_text(k, t, off, sizeof off);
  put(&k->body, "    st_%s(p%d, %s, v%d);\n", dtype_tag(t->dtype), p, off, var);
}

/* Appends kernel k to the module and a launch of it to the plan. */
static void kernel_finish(builder *b, kernel *k) {
  cuda_plan *p = b->plan;
  int id = p->nkernels++;
  put(&b->src, "extern \"C\" __global__ void __launch_bounds__(256) k%d(", id);
  for (int i = 0; i < k->nbases; i++) put(&b->src, "%schar *__restrict__ p%d", i ? ", " : "", i);
  put(&b->src, "%si64 n) {\n", k->nbases ? ", " : "");
  if (k->rows) put(&b->src, "  for (i64 i = blockIdx.x; i < n; i += gridDim.x) {\n");
  else put(&b->src, "  for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n; "
                    "i += (i64)gridDim.x * blockDim.x) {\n");
  put(&b->src, "%s  }\n}\n", k->body.s ? k->body.s : "");
  free(k->body.s);
  k->body = (text){0};
  if (b->src.oom || !grow((void **)&p->launches, &b->cap_launches, p->nlaunches + 1, sizeof *p->launches)) {
    fail(b, NULL, "out of memory");
    return;
  }
  cuda_launch *l = &p->launches[p->nlaunches++];
  memset(l, 0, sizeof *l);
  snprintf(l->name, sizeof l->name, "k%d", id);
  l->n = numel_of(k->sizes, k->rank);
  l->rows = k->rows;
  l->nbases = k->nbases;
  l->bases = malloc(sizeof *l->bases * (size_t)(k->nbases ? k->nbases : 1));
  if (!l->bases) return (void)fail(b, NULL, "out of memory");
  memcpy(l->bases, k->bases, sizeof *l->bases * (size_t)k->nbases);
}

static void kernel_begin(kernel *k, const int64_t *sizes, int rank) {
  memset(k, 0, sizeof *k);
  k->rank = rank;
  memcpy(k->sizes, sizes, sizeof *sizes * (size_t)rank);
}

/* A copy of tensor src into dst (same sizes): one load, one store. */
static void emit_copy(builder *b, const cuda_tensor *src, const cuda_tensor *dst) {
  kernel k;
  kernel_begin(&k, dst->sizes, dst->rank);
  int v = kernel_load(b, &k, src, -1);
  if (src->dtype != dst->dtype) {
    int w = k.nvars++;
    put(&k.body, "    %s v%d = (%s)v%d;\n", reg_type(dst->dtype), w, reg_type(dst->dtype), v);
    v = w;
  }
  kernel_store(&k, dst, v);
  kernel_finish(b, &k);
}

/* ---- pointwise groups -----------------------------------------------------*/

/* Scalar arguments PyTorch converts to the tensor's dtype before the
 * arithmetic (a wrapped number cast to the common dtype, clamp's
 * min.to<scalar_t>()): in float16 and bfloat16 they are rounded there,
 * while alpha and the activations' slopes stay in opmath. */
static bool rounds_to_dtype(const char *name) {
  static const char *names[] = {"other", "value", "min", "max", "min_val", "max_val"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (!strcmp(names[i], name)) return true;
  return false;
}

/* What a value of dtype t goes through to be one: 16-bit floats rounded,
 * narrow integers wrapped ("" where the register type is the dtype). */
static const char *storage_cast(alloy_dtype t) {
  switch (t) {
    case ALLOY_F16: return "rnd_f16";
    case ALLOY_BF16: return "rnd_bf16";
    case ALLOY_U8: return "(unsigned char)";
    case ALLOY_I8: return "(signed char)";
    case ALLOY_I16: return "(short)";
    case ALLOY_I32: return "(int)";
    default: return "";
  }
}

/* A literal of scalar argument a in C type ct. */
static void scalar_text(const alloy_host_api *h, const alloy_arg *a, const char *ct, char *buf, size_t cap) {
  int64_t i;
  double f;
  int bv;
  switch (h->arg_type(a)) {
    case ALLOY_ARG_TYPE_INT:
      h->arg_int(a, &i);
      snprintf(buf, cap, "((%s)%" PRId64 "LL)", ct, i);
      return;
    case ALLOY_ARG_TYPE_BOOL:
      h->arg_bool(a, &bv);
      snprintf(buf, cap, "((%s)%d)", ct, bv ? 1 : 0);
      return;
    case ALLOY_ARG_TYPE_FLOAT:
      h->arg_float(a, &f);
      if (isnan(f)) snprintf(buf, cap, "((%s)__longlong_as_double(0x7ff8000000000000LL))", ct);
      else if (isinf(f)) snprintf(buf, cap, "((%s)(%s1.0 / 0.0))", ct, f < 0 ? "-" : "");
      else snprintf(buf, cap, "((%s)%.17g)", ct, f);
      return;
    case ALLOY_ARG_TYPE_STR: /* gelu's approximate: "tanh" is 1 */
      snprintf(buf, cap, "%d", h->arg_str(a) && !strcmp(h->arg_str(a), "tanh"));
      return;
    default: snprintf(buf, cap, "((%s)0)", ct); return;
  }
}

/* Expands op->expr for node n: $K the registers of its operands already
 * converted to the compute type, ${name} its scalar arguments. */
static void expand_expr(builder *b, const alloy_node *n, const char *expr, char ops[][96], const char *ct,
                        alloy_dtype cd, text *out) {
  const alloy_host_api *h = b->host;
  for (const char *p = expr; *p; p++) {
    if (*p != '$') {
      put(out, "%c", *p);
    } else if (p[1] >= '0' && p[1] <= '9') {
      put(out, "%s", ops[p[1] - '0']);
      p++;
    } else if (p[1] == 'T') {
      put(out, "%s", ct);
      p++;
    } else if (p[1] == '{') {
      const char *end = strchr(p, '}');
      char name[64];
      size_t len = end ? (size_t)(end - p - 2) : 0;
      if (!end || len >= sizeof name) {
        fail(b, n, "bad expression %s", expr);
        return;
      }
      memcpy(name, p + 2, len);
      name[len] = 0;
      bool optional = len && name[len - 1] == '?';
      if (optional) name[len - 1] = 0;
      const alloy_arg *a = arg_named(h, n, name);
      char lit[96];
      if (a && h->arg_type(a) != ALLOY_ARG_TYPE_NONE) {
        scalar_text(h, a, ct, lit, sizeof lit);
        const char *to = rounds_to_dtype(name) ? storage_cast(cd) : "";
        put(out, "%s((%s)%s(%s))", optional ? "1, " : "", ct, to, lit);
      } else {
        put(out, optional ? "0, (%s)0" : "((%s)1)", ct); /* an absent bound; an absent alpha */
      }
      p = end;
    } else {
      put(out, "$");
    }
  }
}

/* The compute dtype of pointwise node n (before opmath). */
static alloy_dtype compute_dtype(builder *b, const alloy_node *n, const cuda_op *op, alloy_dtype result) {
  if (op->ct == CT_BOOL) return ALLOY_BOOL;
  if (op->ct == CT_RESULT) return result;
  const alloy_host_api *h = b->host;
  tiers ts;
  memset(&ts, 0, sizeof ts);
  for (int i = 0; i < h->node_num_args(n); i++) {
    const alloy_arg *a = h->node_arg(n, i);
    switch (h->arg_type(a)) {
      case ALLOY_ARG_TYPE_VALUE: {
        const alloy_value *v = h->arg_value(a);
        if (h->value_kind(v) == 0) tiers_add(&ts, h->value_rank(v) ? 0 : 1, h->value_dtype(v));
        break;
      }
      case ALLOY_ARG_TYPE_INT: tiers_add(&ts, 2, ALLOY_I64); break;
      case ALLOY_ARG_TYPE_FLOAT: tiers_add(&ts, 2, ALLOY_F64); break;
      case ALLOY_ARG_TYPE_BOOL: tiers_add(&ts, 2, ALLOY_BOOL); break;
      default: break;
    }
  }
  return tiers_result(&ts);
}

/* The register of value v inside kernel k of group gid: a register the
 * group computed, or a load of the tensor holding it. */
static int operand_var(builder *b, kernel *k, int gid, const alloy_value *v) {
  vinfo *vi = val(b, v);
  if (vi->group == gid && vi->var >= 0) return vi->var;
  if (vi->tensor < 0) {
    fail(b, NULL, "value %s is read before it is computed", b->host->value_name(v));
    return -1;
  }
  return kernel_load(b, k, &b->tensors[vi->tensor], vi->tensor);
}

/* Emits node n (pointwise or fill) into kernel k of group gid. */
static void emit_node(builder *b, kernel *k, int gid, const alloy_node *n, const cuda_op *op) {
  const alloy_host_api *h = b->host;
  const alloy_value *out = h->node_output(n, 0);
  alloy_dtype rt = h->value_dtype(out);
  alloy_dtype cd = compute_dtype(b, n, op, rt);
  const char *ct = reg_type(cd);
  /* The operands $0..$K are the schema's first arguments (every op of the
   * table takes its tensors first); one may be a Python number given for
   * a Tensor (where(c, x, 0)), which becomes a literal. */
  int nops = 0;
  for (const char *p = op->expr; (p = strchr(p, '$')); p++)
    if (p[1] >= '0' && p[1] <= '9' && p[1] - '0' + 1 > nops) nops = p[1] - '0' + 1;
  char ops[10][96];
  for (int j = 0; j < nops; j++) {
    const alloy_arg *a = h->node_arg(n, j);
    bool cond = j == op->bool_operand || cd == ALLOY_BOOL;
    if (h->arg_type(a) != ALLOY_ARG_TYPE_VALUE) {
      char lit[80];
      scalar_text(h, a, cond ? "double" : ct, lit, sizeof lit);
      snprintf(ops[j], sizeof ops[j], cond ? "(%s != 0)" : "%s", lit);
      continue;
    }
    const alloy_value *in = h->arg_value(a);
    int r = operand_var(b, k, gid, in);
    if (r < 0) return;
    if (cond) snprintf(ops[j], sizeof ops[j], "(v%d != 0)", r);
    else if (!strcmp(reg_type(h->value_dtype(in)), ct)) snprintf(ops[j], sizeof ops[j], "v%d", r);
    else snprintf(ops[j], sizeof ops[j], "((%s)v%d)", ct, r);
  }
  text e = {0};
  expand_expr(b, n, op->expr, ops, op->kind == CUDA_OP_FILL ? reg_type(rt) : ct, cd, &e);
  int v = k->nvars++;
  const char *rty = reg_type(rt);
  const char *wrap = storage_cast(rt);
  if (rt == ALLOY_BOOL) put(&k->body, "    bool v%d = (%s) != 0;\n", v, e.s ? e.s : "0");
  else if (rt == ALLOY_F16 || rt == ALLOY_BF16)
    put(&k->body, "    float v%d = rnd_%s((float)(%s));\n", v, dtype_tag(rt), e.s ? e.s : "0");
  else put(&k->body, "    %s v%d = (%s)%s(%s);\n", rty, v, rty, wrap, e.s ? e.s : "0");
  free(e.s);
  if (e.oom) fail(b, n, "out of memory");
  vinfo *vi = val(b, out);
  vi->group = gid;
  vi->var = v;
}

/* ---- reductions ------------------------------------------------------------*/

static int materialize(builder *b, const alloy_value *v);

/* Index text of the dims listed in dims (n of them, of tensor t): the
 * element offset in t of linear index `var` over those dims, row-major;
 * declares the per-dim indices as <pfx>K. */
static void dims_offset(text *body, const cuda_tensor *t, const int *dims, int n, const char *var,
                        const char *pfx, char *off, size_t cap) {
  if (n > 0) put(body, "      i64 %s_r = %s;\n", pfx, var);
  for (int i = n - 1; i >= 0; i--) {
    if (i > 0)
      put(body, "      i64 %s%d = %s_r %% %" PRId64 "; %s_r /= %" PRId64 ";\n", pfx, i, pfx, t->sizes[dims[i]], pfx,
          t->sizes[dims[i]]);
    else put(body, "      i64 %s0 = %s_r;\n", pfx, pfx);
  }
  size_t len = (size_t)snprintf(off, cap, "0");
  for (int i = 0; i < n && len < cap; i++)
    if (t->sizes[dims[i]] != 1 && t->strides[dims[i]] != 0)
      len += (size_t)snprintf(off + len, cap - len, " + %s%d * %" PRId64, pfx, i, t->strides[dims[i]]);
}

/* The dims node n reduces of its input x (mask), from "dim": a list (None
 * or empty: every dim), or one int (softmax). */
static void reduced_dims(builder *b, const alloy_node *n, const cuda_op *op, int rank, bool *mask) {
  const alloy_host_api *h = b->host;
  const alloy_arg *a = arg_named(h, n, "dim");
  bool all = !a || h->arg_type(a) == ALLOY_ARG_TYPE_NONE ||
             (h->arg_type(a) == ALLOY_ARG_TYPE_LIST && h->arg_list_size(a) == 0);
  for (int d = 0; d < rank; d++) mask[d] = all;
  if (all) return;
  int64_t x;
  if (h->arg_type(a) == ALLOY_ARG_TYPE_LIST) {
    for (int k = 0; k < h->arg_list_size(a); k++)
      if (h->arg_int(h->arg_list_item(a, k), &x) && rank > 0) mask[wrap_dim(x, rank)] = true;
  } else if (h->arg_int(a, &x) && rank > 0) {
    mask[wrap_dim(x, rank)] = true;
  }
  (void)op;
}

/* A reduction node: one block per row of the reduced elements (a row per
 * output element; softmax writes a whole row back). */
static void emit_reduce(builder *b, const alloy_node *n, const cuda_op *op) {
  const alloy_host_api *h = b->host;
  const alloy_value *in[1], *out = h->node_output(n, 0);
  if (tensor_operands(h, n, in, 1) != 1) return (void)fail(b, n, "expected one tensor operand");
  vinfo *vi = val(b, in[0]);
  if (vi->tensor < 0) return (void)fail(b, n, "its input is not in memory");
  int ot = materialize(b, out);
  if (ot < 0) return;
  const cuda_tensor x = b->tensors[vi->tensor], y = b->tensors[ot];
  bool mask[CUDA_MAX_RANK];
  reduced_dims(b, n, op, x.rank, mask);
  int outer[CUDA_MAX_RANK], inner[CUDA_MAX_RANK], no = 0, ni = 0;
  int64_t rows = 1, cols = 1;
  for (int d = 0; d < x.rank; d++) {
    if (mask[d]) inner[ni++] = d, cols *= x.sizes[d];
    else outer[no++] = d, rows *= x.sizes[d];
  }
  bool row_out = op->reduce == RED_SOFTMAX || op->reduce == RED_LOG_SOFTMAX;
  alloy_dtype yt = y.dtype;
  /* PyTorch's CUDA acc_type: float for the 16-bit floats and float32,
   * double for float64, int64 for integers and bool */
  const char *acc = yt == ALLOY_F64 ? "double" : alloy_dtype_is_float(yt) ? "float" : "i64";
  if (op->reduce == RED_MAX || op->reduce == RED_MIN) acc = reg_type(yt);
  if (op->reduce == RED_ANY || op->reduce == RED_ALL) acc = "int"; /* truth values, 0 or 1 */
  kernel k;
  int64_t one = rows;
  kernel_begin(&k, &one, 1);
  int px = kernel_param(&k, x.base), py = kernel_param(&k, y.base);
  char xo[512], yo[512], io[512];
  put(&k.body, "    __shared__ %s sh[32];\n", acc);
  put(&k.body, "    {\n");
  dims_offset(&k.body, &x, outer, no, "i", "o", xo, sizeof xo);
  put(&k.body, "      const i64 xb = %" PRId64 " + %s;\n", x.offset, xo);
  if (row_out) {
    dims_offset(&k.body, &y, outer, no, "i", "q", yo, sizeof yo);
    put(&k.body, "      const i64 yb = %s;\n", yo);
  }
  /* the loop over the row's elements, its body given */
  text loop = {0};
  put(&loop, "      for (i64 j = threadIdx.x; j < %" PRId64 "; j += blockDim.x) {\n", cols);
  dims_offset(&loop, &x, inner, ni, "j", "r", io, sizeof io);
  bool truth = op->reduce == RED_ANY || op->reduce == RED_ALL;
  if (truth) put(&loop, "      int x = ld_%s(p%d, xb + %s) != 0;\n", dtype_tag(x.dtype), px, io);
  else put(&loop, "      %s x = (%s)ld_%s(p%d, xb + %s);\n", acc, acc, dtype_tag(x.dtype), px, io);
  const char *lp = loop.s ? loop.s : "";
  switch (op->reduce) {
    case RED_ANY:
    case RED_ALL: {
      bool any = op->reduce == RED_ANY;
      put(&k.body, "      int a = %d;\n%s        a = %s(a, x);\n      }\n", any ? 0 : 1, lp, any ? "max" : "min");
      put(&k.body, "      a = block_reduce(a, %s(), sh, %d);\n", any ? "MaxOp" : "MinOp", any ? 0 : 1);
      put(&k.body, "      if (threadIdx.x == 0) st_%s(p%d, %" PRId64 " + i, a != 0);\n", dtype_tag(yt), py, y.offset);
      break;
    }
    case RED_SUM:
    case RED_MEAN:
      put(&k.body, "      %s a = 0;\n%s        a += x;\n      }\n", acc, lp);
      put(&k.body, "      a = block_reduce(a, SumOp(), sh, (%s)0);\n", acc);
      if (op->reduce == RED_MEAN) put(&k.body, "      a = a / (%s)%" PRId64 ";\n", acc, cols);
      put(&k.body, "      if (threadIdx.x == 0) st_%s(p%d, %" PRId64 " + i, (%s)a);\n", dtype_tag(yt), py,
          y.offset, reg_type(yt));
      break;
    case RED_MAX:
    case RED_MIN: {
      const char *f = op->reduce == RED_MAX ? "MaxOp" : "MinOp";
      /* the identity: the row's first element (rows are never empty here) */
      put(&k.body, "      %s a = (%s)ld_%s(p%d, xb);\n%s        a = %s()(a, x);\n      }\n", acc, acc,
          dtype_tag(x.dtype), px, lp, f);
      put(&k.body, "      a = block_reduce(a, %s(), sh, a);\n", f); /* a repeated value is harmless */
      put(&k.body, "      if (threadIdx.x == 0) st_%s(p%d, %" PRId64 " + i, a);\n", dtype_tag(yt), py, y.offset);
      break;
    }
    default: { /* softmax, log_softmax: max, then the sum of exp, then the row */
      put(&k.body, "      %s m = (%s)ld_%s(p%d, xb);\n%s        m = MaxOp()(m, x);\n      }\n", acc, acc,
          dtype_tag(x.dtype), px, lp);
      put(&k.body, "      m = block_reduce(m, MaxOp(), sh, m);\n");
      put(&k.body, "      %s s = 0;\n%s        s += exp(x - m);\n      }\n", acc, lp);
      put(&k.body, "      s = block_reduce(s, SumOp(), sh, (%s)0);\n", acc);
      char yi[512];
      text wr = {0};
      put(&wr, "%s", lp);
      dims_offset(&wr, &y, inner, ni, "j", "w", yi, sizeof yi);
      if (op->reduce == RED_SOFTMAX)
        put(&k.body, "%s        st_%s(p%d, yb + %s, (%s)(exp(x - m) / s));\n      }\n", wr.s ? wr.s : "",
            dtype_tag(yt), py, yi, reg_type(yt));
      else
        put(&k.body, "%s        st_%s(p%d, yb + %s, (%s)(x - m - log(s)));\n      }\n", wr.s ? wr.s : "",
            dtype_tag(yt), py, yi, reg_type(yt));
      free(wr.s);
      break;
    }
  }
  free(loop.s);
  put(&k.body, "    }\n");
  k.rows = true;
  kernel_finish(b, &k);
}

/* ---- matrix products ---------------------------------------------------------*/

static double float_arg(const alloy_host_api *h, const alloy_node *n, const char *name, double dflt) {
  const alloy_arg *a = arg_named(h, n, name);
  double v;
  return a && h->arg_float(a, &v) ? v : dflt;
}

/* Operand t of a product as cuBLASLt reads it: its last two dims a matrix
 * with one unit stride (row-major, or transposed: column-major), a batch
 * stride before them; false when it is not one (then it is copied). */
static bool as_matrix(const cuda_tensor *t, bool *trans, int64_t *ld, int64_t *bstride) {
  int r = t->rank;
  if (r < 2) return false;
  int64_t rows = t->sizes[r - 2], cols = t->sizes[r - 1], s0 = t->strides[r - 2], s1 = t->strides[r - 1];
  *bstride = r == 3 && t->sizes[0] > 1 ? t->strides[0] : 0;
  if ((s1 == 1 || cols == 1) && (rows == 1 || s0 >= cols)) {
    *trans = false;
    *ld = rows == 1 ? cols : s0;
  } else if ((s0 == 1 || rows == 1) && (cols == 1 || s1 >= rows)) {
    *trans = true;
    *ld = cols == 1 ? rows : s1;
  } else {
    return false;
  }
  size_t es = alloy_dtype_size(t->dtype);
  return (uint64_t)t->offset * es % 16 == 0;
}

/* A dense copy of t in a new temporary (a product operand no layout of
 * cuBLASLt reads): its plan tensor. */
static cuda_tensor dense_copy(builder *b, const cuda_tensor *t) {
  cuda_tensor d = *t;
  d.base = add_base(b, BASE_TEMP, -1, (uint64_t)numel_of(t->sizes, t->rank) * alloy_dtype_size(t->dtype));
  d.offset = 0;
  int64_t s = 1;
  for (int k = t->rank - 1; k >= 0; k--) d.strides[k] = s, s *= t->sizes[k];
  emit_copy(b, t, &d);
  return d;
}

static bool dense(const cuda_tensor *t) {
  int64_t s = 1;
  for (int k = t->rank - 1; k >= 0; k--) {
    if (t->sizes[k] != 1 && t->strides[k] != s) return false;
    s *= t->sizes[k];
  }
  return t->offset == 0;
}

static cuda_launch *add_launch(builder *b) {
  cuda_plan *p = b->plan;
  if (!grow((void **)&p->launches, &b->cap_launches, p->nlaunches + 1, sizeof *p->launches)) {
    fail(b, NULL, "out of memory");
    return NULL;
  }
  cuda_launch *l = &p->launches[p->nlaunches++];
  memset(l, 0, sizeof *l);
  return l;
}

/* mm(a, b), bmm(a, b), addmm(c, a, b, beta, alpha), baddbmm(...): one
 * cuBLASLt product into D, the node's output (dense). addmm's c is the
 * bias epilogue when it is a row and beta is 1, read as C when it is a
 * full matrix, else first expanded into D and read back from there. */
static void emit_gemm(builder *b, const alloy_node *n) {
  const alloy_host_api *h = b->host;
  const char *name = h->node_op_name(n);
  bool with_c = !strcmp(name, "aten.addmm.default") || !strcmp(name, "aten.baddbmm.default");
  const alloy_value *in[3];
  int nin = tensor_operands(h, n, in, 3);
  if (nin != (with_c ? 3 : 2)) return (void)fail(b, n, "expected %d tensor operands", with_c ? 3 : 2);
  cuda_tensor op[3];
  for (int j = 0; j < nin; j++) {
    vinfo *vi = val(b, in[j]);
    if (vi->tensor < 0) return (void)fail(b, n, "an operand is not in memory");
    op[j] = b->tensors[vi->tensor];
  }
  const cuda_tensor *c = with_c ? &op[0] : NULL;
  cuda_tensor a = op[with_c], bm = op[with_c + 1];
  int dt = materialize(b, h->node_output(n, 0));
  if (dt < 0) return;
  cuda_tensor d = b->tensors[dt];
  if (!dense(&d)) return (void)fail(b, n, "its output is not dense");
  cuda_launch l = {.kind = LAUNCH_GEMM};
  cuda_gemm_desc *g = &l.gemm;
  for (int k = 0; k < GEMM_OPERANDS; k++) l.gbase[k] = -1;
  int r = d.rank;
  g->dtype = d.dtype;
  g->m = d.sizes[r - 2], g->n = d.sizes[r - 1], g->k = a.sizes[a.rank - 1];
  g->batch = r == 3 ? d.sizes[0] : 1;
  g->alpha = with_c ? float_arg(h, n, "alpha", 1.0) : 1.0;
  if (!as_matrix(&a, &g->trans_a, &g->lda, &g->stride_a)) {
    a = dense_copy(b, &a);
    as_matrix(&a, &g->trans_a, &g->lda, &g->stride_a);
  }
  if (!as_matrix(&bm, &g->trans_b, &g->ldb, &g->stride_b)) {
    bm = dense_copy(b, &bm);
    as_matrix(&bm, &g->trans_b, &g->ldb, &g->stride_b);
  }
  l.gbase[GEMM_A] = a.base, l.goff[GEMM_A] = a.offset;
  l.gbase[GEMM_B] = bm.base, l.goff[GEMM_B] = bm.offset;
  l.gbase[GEMM_D] = d.base, l.goff[GEMM_D] = 0;
  if (c) {
    double beta = float_arg(h, n, "beta", 1.0);
    int lead = r - c->rank;
    bool row = lead >= 0 && (c->rank < 2 || c->sizes[c->rank - 2] == 1) &&
               (c->rank < 3 || c->sizes[0] == 1) && c->sizes[c->rank - 1] == g->n &&
               (c->strides[c->rank - 1] == 1 || g->n == 1) && (uint64_t)c->offset * alloy_dtype_size(c->dtype) % 16 == 0;
    bool full = !row && c->rank == r && c->sizes[r - 2] == g->m && c->sizes[r - 1] == g->n &&
                (r < 3 || c->sizes[0] == g->batch) && c->strides[r - 1] == 1 &&
                (uint64_t)c->offset * alloy_dtype_size(c->dtype) % 16 == 0;
    if (beta == 0) {
      /* beta 0 ignores self, NaN included, as PyTorch's addmm does */
    } else if (row && beta == 1) {
      g->bias = true;
      l.gbase[GEMM_BIAS] = c->base, l.goff[GEMM_BIAS] = c->offset;
    } else if (full) {
      g->has_c = true, g->beta = beta;
      g->ldc = c->strides[r - 2], g->stride_c = r == 3 ? c->strides[0] : 0;
      l.gbase[GEMM_C] = c->base, l.goff[GEMM_C] = c->offset;
    } else {
      /* expand self into D, then D = alpha a b + beta D */
      cuda_tensor ex = *c;
      ex.rank = r;
      for (int k = 0; k < r; k++) {
        int kc = k - lead;
        ex.sizes[k] = d.sizes[k];
        ex.strides[k] = kc < 0 || c->sizes[kc] == 1 ? 0 : c->strides[kc];
      }
      emit_copy(b, &ex, &d);
      g->has_c = true, g->beta = beta;
      g->ldc = g->n, g->stride_c = g->m * g->n;
      l.gbase[GEMM_C] = d.base, l.goff[GEMM_C] = 0;
    }
  }
  cuda_launch *slot = add_launch(b);
  if (slot) *slot = l;
}

/* ---- layer norm, embedding, cat -------------------------------------------------*/

/* The plan tensor holding value v, or NULL after failing. */
static const cuda_tensor *in_memory(builder *b, const alloy_node *n, const alloy_value *v) {
  vinfo *vi = val(b, v);
  if (vi->tensor >= 0) return &b->tensors[vi->tensor];
  fail(b, n, "an operand is not in memory");
  return NULL;
}

/* native_layer_norm(x, normalized_shape, w?, b?, eps) -> (y, mean, rstd):
 * a block per row of the normalized dims; mean, then the variance of the
 * centered values (two passes, in acc_type), rstd = rsqrt(var + eps), then
 * y = (x - mean) * rstd * w + b, as PyTorch's CUDA kernel. */
static void emit_layer_norm(builder *b, const alloy_node *n) {
  const alloy_host_api *h = b->host;
  const alloy_arg *wa = arg_named(h, n, "weight"), *ba = arg_named(h, n, "bias");
  const alloy_value *xv = h->arg_value(h->node_arg(n, 0));
  const alloy_value *wv = wa && h->arg_type(wa) == ALLOY_ARG_TYPE_VALUE ? h->arg_value(wa) : NULL;
  const alloy_value *bv = ba && h->arg_type(ba) == ALLOY_ARG_TYPE_VALUE ? h->arg_value(ba) : NULL;
  const cuda_tensor *xp = in_memory(b, n, xv), *wp = wv ? in_memory(b, n, wv) : NULL,
                    *bp = bv ? in_memory(b, n, bv) : NULL;
  if (!xp || (wv && !wp) || (bv && !bp)) return;
  const alloy_arg *ns = arg_named(h, n, "normalized_shape");
  int nd = ns ? h->arg_list_size(ns) : 0;
  cuda_tensor x = *xp;
  if (nd < 1 || nd > x.rank) return (void)fail(b, n, "normalized_shape of %d dims", nd);
  int ty = materialize(b, h->node_output(n, 0)), tm = materialize(b, h->node_output(n, 1)),
      tr = materialize(b, h->node_output(n, 2));
  if (ty < 0 || tm < 0 || tr < 0) return;
  cuda_tensor y = b->tensors[ty], mean = b->tensors[tm], rstd = b->tensors[tr];
  int outer[CUDA_MAX_RANK], inner[CUDA_MAX_RANK], no = x.rank - nd;
  int64_t rows = 1, cols = 1;
  for (int d = 0; d < x.rank; d++) {
    if (d < no) outer[d] = d, rows *= x.sizes[d];
    else inner[d - no] = d, cols *= x.sizes[d];
  }
  const char *acc = x.dtype == ALLOY_F64 ? "double" : "float";
  double eps = float_arg(h, n, "eps", 1e-5);
  kernel k;
  kernel_begin(&k, &rows, 1);
  int px = kernel_param(&k, x.base), py = kernel_param(&k, y.base), pm = kernel_param(&k, mean.base),
      pr = kernel_param(&k, rstd.base), pw = wp ? kernel_param(&k, wp->base) : -1,
      pb = bp ? kernel_param(&k, bp->base) : -1;
  char xo[512], yo[512], io[512], yi[512], wi[512], bi[512];
  put(&k.body, "    __shared__ %s sh[32];\n    {\n", acc);
  dims_offset(&k.body, &x, outer, no, "i", "o", xo, sizeof xo);
  dims_offset(&k.body, &y, outer, no, "i", "q", yo, sizeof yo);
  put(&k.body, "      const i64 xb = %" PRId64 " + %s, yb = %" PRId64 " + %s;\n", x.offset, xo, y.offset, yo);
  text loop = {0};
  put(&loop, "      for (i64 j = threadIdx.x; j < %" PRId64 "; j += blockDim.x) {\n", cols);
  dims_offset(&loop, &x, inner, nd, "j", "r", io, sizeof io);
  put(&loop, "      %s x = (%s)ld_%s(p%d, xb + %s);\n", acc, acc, dtype_tag(x.dtype), px, io);
  const char *lp = loop.s ? loop.s : "";
  put(&k.body, "      %s s = 0;\n%s        s += x;\n      }\n", acc, lp);
  put(&k.body, "      const %s mu = block_reduce(s, SumOp(), sh, (%s)0) / (%s)%" PRId64 ";\n", acc, acc, acc, cols);
  put(&k.body, "      %s v = 0;\n%s        v += (x - mu) * (x - mu);\n      }\n", acc, lp);
  put(&k.body, "      const %s rs = rsqrt(block_reduce(v, SumOp(), sh, (%s)0) / (%s)%" PRId64 " + (%s)%.17g);\n",
      acc, acc, acc, cols, acc, eps);
  text wr = {0};
  put(&wr, "%s", lp);
  dims_offset(&wr, &y, inner, nd, "j", "w", yi, sizeof yi);
  put(&wr, "        %s r = (x - mu) * rs;\n", acc);
  /* w and b span the normalized dims: index j over their own strides */
  int wdims[CUDA_MAX_RANK];
  for (int d = 0; d < nd; d++) wdims[d] = d;
  if (wp) {
    dims_offset(&wr, wp, wdims, nd, "j", "u", wi, sizeof wi);
    put(&wr, "        r = r * (%s)ld_%s(p%d, %" PRId64 " + %s);\n", acc, dtype_tag(wp->dtype), pw, wp->offset, wi);
  }
  if (bp) {
    dims_offset(&wr, bp, wdims, nd, "j", "c", bi, sizeof bi);
    put(&wr, "        r = r + (%s)ld_%s(p%d, %" PRId64 " + %s);\n", acc, dtype_tag(bp->dtype), pb, bp->offset, bi);
  }
  put(&k.body, "%s        st_%s(p%d, yb + %s, (%s)r);\n      }\n", wr.s ? wr.s : "", dtype_tag(y.dtype), py, yi,
      reg_type(y.dtype));
  put(&k.body, "      if (threadIdx.x == 0) { st_%s(p%d, %" PRId64 " + i, (%s)mu); st_%s(p%d, %" PRId64
               " + i, (%s)rs); }\n    }\n",
      dtype_tag(mean.dtype), pm, mean.offset, reg_type(mean.dtype), dtype_tag(rstd.dtype), pr, rstd.offset,
      reg_type(rstd.dtype));
  free(wr.s);
  free(loop.s);
  k.rows = true;
  kernel_finish(b, &k);
}

/* embedding(weight, indices): out[..., j] = weight[indices[...], j]; an
 * index out of range gives NaN (PyTorch's CUDA kernel asserts) rather
 * than a read outside the table. */
static void emit_embedding(builder *b, const alloy_node *n) {
  const alloy_host_api *h = b->host;
  const cuda_tensor *wp = in_memory(b, n, h->arg_value(h->node_arg(n, 0))),
                    *ip = in_memory(b, n, h->arg_value(h->node_arg(n, 1)));
  if (!wp || !ip) return;
  if (wp->rank != 2) return (void)fail(b, n, "a weight of rank %d", wp->rank);
  int to = materialize(b, h->node_output(n, 0));
  if (to < 0) return;
  cuda_tensor y = b->tensors[to], idx = *ip;
  /* the indices as an operand of the output's shape: a trailing dim of
   * stride 0 */
  idx.rank = y.rank;
  idx.sizes[y.rank - 1] = y.sizes[y.rank - 1];
  idx.strides[y.rank - 1] = 0;
  kernel k;
  kernel_begin(&k, y.sizes, y.rank);
  k.index_split = false;
  char io[512];
  /* force the per-dim indices: the table's column is the last one */
  cuda_tensor probe = y;
  probe.strides[y.rank - 1] = 0;
  offset_text(&k, &probe, io, sizeof io);
  offset_text(&k, &idx, io, sizeof io);
  int pi = kernel_param(&k, idx.base), pw = kernel_param(&k, wp->base);
  int v = k.nvars++;
  const char *rt = reg_type(y.dtype);
  put(&k.body, "    i64 row = (i64)ld_%s(p%d, %s);\n", dtype_tag(idx.dtype), pi, io);
  put(&k.body, "    %s v%d = row >= 0 && row < %" PRId64 " ? (%s)ld_%s(p%d, %" PRId64 " + row * %" PRId64
               " + i%d * %" PRId64 ") : (%s)__longlong_as_double(0x7ff8000000000000LL);\n",
      rt, v, wp->sizes[0], rt, dtype_tag(wp->dtype), pw, wp->offset, wp->strides[0], y.rank - 1, wp->strides[1], rt);
  kernel_store(&k, &y, v);
  kernel_finish(b, &k);
}

/* index.Tensor(x, [None.., idx, None..]): out[pre, j.., post] =
 * x[pre, idx[j..], post], a negative index counting from the end and one
 * out of range giving NaN, as embedding. */
static void emit_index(builder *b, const alloy_node *n) {
  const alloy_host_api *h = b->host;
  int p = index_position(h, n);
  const alloy_arg *list = h->node_arg(n, 1);
  const cuda_tensor *xp = in_memory(b, n, h->arg_value(h->node_arg(n, 0))),
                    *ip = in_memory(b, n, h->arg_value(h->arg_list_item(list, p)));
  if (!xp || !ip) return;
  int to = materialize(b, h->node_output(n, 0));
  if (to < 0) return;
  cuda_tensor y = b->tensors[to], x = *xp, idx = *ip;
  int ri = idx.rank, post = x.rank - p - 1;
  if (y.rank != p + ri + post) return (void)fail(b, n, "an output of rank %d", y.rank);
  /* the index tensor as an operand of the output's shape: its dims in the
   * middle, stride 0 elsewhere */
  cuda_tensor iv = y;
  iv.base = idx.base, iv.dtype = idx.dtype, iv.offset = idx.offset;
  for (int d = 0; d < y.rank; d++) iv.strides[d] = d >= p && d < p + ri ? idx.strides[d - p] : 0;
  kernel k;
  kernel_begin(&k, y.sizes, y.rank);
  char io[512];
  cuda_tensor probe = y;
  if (y.rank) probe.strides[0] = 0;
  offset_text(&k, &probe, io, sizeof io); /* declares the per-dim indices */
  offset_text(&k, &iv, io, sizeof io);
  int pi = kernel_param(&k, iv.base), px = kernel_param(&k, x.base);
  put(&k.body, "    i64 at = (i64)ld_%s(p%d, %s);\n    if (at < 0) at += %" PRId64 ";\n", dtype_tag(iv.dtype), pi,
      io, x.sizes[p]);
  text off = {0};
  put(&off, "%" PRId64 " + at * %" PRId64, x.offset, x.strides[p]);
  for (int d = 0; d < p; d++) put(&off, " + i%d * %" PRId64, d, x.strides[d]);
  for (int d = 0; d < post; d++) put(&off, " + i%d * %" PRId64, p + ri + d, x.strides[p + 1 + d]);
  const char *rt = reg_type(y.dtype);
  int v = k.nvars++;
  put(&k.body, "    %s v%d = at >= 0 && at < %" PRId64 " ? (%s)ld_%s(p%d, %s) : (%s)__longlong_as_double(0x7ff8000000000000LL);\n",
      rt, v, x.sizes[p], rt, dtype_tag(x.dtype), px, off.s ? off.s : "0", rt);
  free(off.s);
  kernel_store(&k, &y, v);
  kernel_finish(b, &k);
}

/* cumsum(x, dim, dtype): a thread per row along dim, summing in order in
 * acc_type (PyTorch's CUDA scan sums in a tree; within the tolerance). */
static void emit_scan(builder *b, const alloy_node *n) {
  const alloy_host_api *h = b->host;
  const cuda_tensor *xp = in_memory(b, n, h->arg_value(h->node_arg(n, 0)));
  if (!xp) return;
  int to = materialize(b, h->node_output(n, 0));
  if (to < 0) return;
  cuda_tensor x = *xp, y = b->tensors[to];
  int dim = wrap_dim(int_arg(h, n, "dim", 0), x.rank);
  int64_t len = x.rank ? x.sizes[dim] : 1, xs = x.rank ? x.strides[dim] : 0, ys = y.rank ? y.strides[dim] : 0;
  /* iterate the other dims: the tensors with dim of size 1 */
  cuda_tensor xr = x, yr = y;
  if (x.rank) xr.sizes[dim] = 1, yr.sizes[dim] = 1;
  kernel k;
  kernel_begin(&k, yr.sizes, yr.rank);
  char xo[512], yo[512];
  cuda_tensor probe = yr;
  if (yr.rank) probe.strides[0] = 0;
  offset_text(&k, &probe, xo, sizeof xo);
  offset_text(&k, &xr, xo, sizeof xo);
  offset_text(&k, &yr, yo, sizeof yo);
  int px = kernel_param(&k, x.base), py = kernel_param(&k, y.base);
  alloy_dtype yt = y.dtype;
  const char *acc = yt == ALLOY_F64 ? "double" : alloy_dtype_is_float(yt) ? "float" : "i64";
  put(&k.body, "    %s a = 0;\n    for (i64 j = 0; j < %" PRId64 "; j++) {\n", acc, len);
  put(&k.body, "      a = op_add(a, (%s)ld_%s(p%d, %s + j * %" PRId64 "));\n", acc, dtype_tag(x.dtype), px, xo, xs);
  put(&k.body, "      st_%s(p%d, %s + j * %" PRId64 ", (%s)a);\n    }\n", dtype_tag(yt), py, yo, ys, reg_type(yt));
  kernel_finish(b, &k);
}

/* cat(tensors, dim): each non-empty input copied into its slice of the
 * output along dim. */
static void emit_cat(builder *b, const alloy_node *n) {
  const alloy_host_api *h = b->host;
  const alloy_value *in[64];
  int nin = tensor_operands(h, n, in, 64);
  int to = materialize(b, h->node_output(n, 0));
  if (to < 0) return;
  cuda_tensor y = b->tensors[to];
  int dim = wrap_dim(int_arg(h, n, "dim", 0), y.rank);
  int64_t at = 0;
  for (int j = 0; j < nin && j < 64 && !b->err; j++) {
    const cuda_tensor *xp = in_memory(b, n, in[j]);
    if (!xp) return;
    if (xp->rank == 1 && xp->sizes[0] == 0 && y.rank != 1) continue; /* a legacy empty tensor */
    cuda_tensor slice = y;
    slice.offset = y.offset + at * y.strides[dim];
    slice.sizes[dim] = xp->sizes[dim];
    at += xp->sizes[dim];
    if (numel_of(slice.sizes, slice.rank) > 0) emit_copy(b, xp, &slice);
  }
}

/* ---- the plan ----------------------------------------------------------------*/

static bool same_sizes(const alloy_host_api *h, const alloy_value *v, const int64_t *sizes, int rank) {
  if (h->value_rank(v) != rank) return false;
  for (int d = 0; d < rank; d++) {
    int64_t s;
    if (!h->value_size(v, d, &s) || s != sizes[d]) return false;
  }
  return true;
}

/* The memory of value v computed by a group: its partition output when it
 * is one (written there directly), else a temporary. */
static int materialize(builder *b, const alloy_value *v) {
  vinfo *vi = val(b, v);
  if (vi->tensor >= 0) return vi->tensor;
  const alloy_host_api *h = b->host;
  int base;
  const alloy_tensor *as = NULL;
  if (vi->output >= 0) {
    base = add_base(b, BASE_OUTPUT, vi->output, 0);
    if (b->layout) as = &b->layout->outputs[vi->output];
  } else {
    int64_t numel = 1, s;
    for (int d = 0; d < h->value_rank(v); d++) h->value_size(v, d, &s), numel *= s;
    base = add_base(b, BASE_TEMP, -1, (uint64_t)numel * alloy_dtype_size(h->value_dtype(v)));
  }
  if (base < 0) return -1;
  return vi->tensor = add_tensor(b, v, base, as);
}

alloy_error *cuda_plan_build(const alloy_host_api *h, const alloy_graph *g, const cuda_layout *layout,
                             cuda_plan *plan) {
  memset(plan, 0, sizeof *plan);
  builder b = {.host = h, .g = g, .layout = layout, .plan = plan};
  int nn = h->graph_num_nodes(g), ni = h->graph_num_inputs(g), no = h->graph_num_outputs(g);
  b.cap_vals = 64;
  while (b.cap_vals < 4 * (nn + ni + no) + 64) b.cap_vals *= 2;
  b.vals = calloc((size_t)b.cap_vals, sizeof *b.vals);
  if (!b.vals) return h->error_new(ALLOY_ERR_OUT_OF_MEMORY, "cuda: out of memory");
  put(&b.src, "%s", prelude);

  for (int i = 0; i < ni && !b.err; i++) {
    const alloy_value *v = h->graph_input(g, i);
    if (h->value_kind(v) != 0) continue;
    int base = add_base(&b, BASE_INPUT, i, 0);
    val(&b, v)->tensor = base < 0 ? -1 : add_tensor(&b, v, base, layout ? &layout->inputs[i] : NULL);
  }
  /* A value computed here that is an output is written there directly. */
  for (int j = 0; j < no; j++) {
    vinfo *vi = val(&b, h->graph_output(g, j));
    if (vi->tensor < 0 && vi->output < 0) vi->output = j;
  }
  /* Which values a group must store: read by a node of another group (or a
   * view, or a fill), or an output. Groups are runs of consecutive
   * pointwise nodes over one shape; pass 1 numbers them. */
  int *group_of = malloc(sizeof *group_of * (size_t)(nn ? nn : 1));
  if (!group_of) return free(b.vals), h->error_new(ALLOY_ERR_OUT_OF_MEMORY, "cuda: out of memory");
  int ngroups = 0;
  int64_t gsizes[CUDA_MAX_RANK];
  int grank = -1;
  for (int i = 0; i < nn; i++) {
    const alloy_node *n = h->graph_node(g, i);
    const cuda_op *op = cuda_op_find(h->node_op_name(n));
    if (!op) {
      fail(&b, n, "not an op of the cuda backend");
      break;
    }
    const char *why = cuda_node_unsupported(h, n);
    if (why) {
      fail(&b, n, "%s", why);
      break;
    }
    group_of[i] = -1;
    if (op->kind != CUDA_OP_POINTWISE && op->kind != CUDA_OP_FILL) { /* kernels of their own */
      grank = -1;
      continue;
    }
    const alloy_value *out = h->node_output(n, 0);
    for (int d = 0; d < h->value_rank(out); d++)
      if (!h->value_size(out, d, &(int64_t){0})) fail(&b, n, "symbolic sizes reach compile");
    if (grank < 0 || !same_sizes(h, out, gsizes, grank)) {
      grank = h->value_rank(out);
      for (int d = 0; d < grank; d++) h->value_size(out, d, &gsizes[d]);
      ngroups++;
    }
    group_of[i] = ngroups - 1;
    val(&b, out)->group = ngroups - 1;
  }
  for (int i = 0; i < nn && !b.err; i++) {
    const alloy_node *n = h->graph_node(g, i);
    const alloy_value *in[64];
    const cuda_op *nop = cuda_op_find(h->node_op_name(n));
    int nin = nop && nop->kind == CUDA_OP_NOP ? 0 : tensor_operands(h, n, in, 64);
    if (nin > 64) nin = 64; /* refused at claim */
    for (int j = 0; j < nin; j++) {
      vinfo *vi = val(&b, in[j]);
      if (vi->group >= 0 && vi->group != group_of[i]) vi->stored = true;
    }
  }
  for (int j = 0; j < no; j++) val(&b, h->graph_output(g, j))->stored = true;
  for (int i = 0; i < nn && !b.err; i++) {
    const alloy_node *n = h->graph_node(g, i);
    if (h->node_num_outputs(n) > 0) val(&b, h->node_output(n, 0))->group = -1; /* set again as each is emitted */
  }

  /* Pass 2: emit. */
  kernel k;
  int open = -1;
  for (int i = 0; i < nn && !b.err; i++) {
    const alloy_node *n = h->graph_node(g, i);
    const cuda_op *op = cuda_op_find(h->node_op_name(n));
    const alloy_value *out = h->node_output(n, 0);
    if (group_of[i] != open && open >= 0) kernel_finish(&b, &k), open = -1;
    if (op->kind == CUDA_OP_VIEW) {
      const alloy_value *in[1];
      if (tensor_operands(h, n, in, 1) != 1 || val(&b, in[0])->tensor < 0) {
        fail(&b, n, "its input is not in memory");
        break;
      }
      cuda_tensor src = b.tensors[val(&b, in[0])->tensor], view;
      vinfo *vo = val(&b, out);
      if (!view_of(&b, n, &src, out, &view)) {
        /* a reshape of a layout no view expresses: copy, then view */
        int base = add_base(&b, BASE_TEMP, -1, (uint64_t)numel_of(src.sizes, src.rank) * alloy_dtype_size(src.dtype));
        cuda_tensor dense = src;
        dense.base = base, dense.offset = 0;
        int64_t s = 1;
        for (int d = src.rank - 1; d >= 0; d--) dense.strides[d] = s, s *= src.sizes[d];
        emit_copy(&b, &src, &dense);
        if (!view_of(&b, n, &dense, out, &view)) {
          fail(&b, n, "no view of the copied input");
          break;
        }
      }
      if (!grow((void **)&b.tensors, &b.cap_tensors, b.ntensors + 1, sizeof *b.tensors)) break;
      b.tensors[b.ntensors] = view;
      vo->tensor = b.ntensors++;
      continue;
    }
    if (op->kind == CUDA_OP_REDUCE) {
      emit_reduce(&b, n, op);
      continue;
    }
    if (op->kind == CUDA_OP_NOP) continue;
    if (op->kind == CUDA_OP_GEMM || op->kind == CUDA_OP_LAYER_NORM || op->kind == CUDA_OP_EMBEDDING ||
        op->kind == CUDA_OP_CAT || op->kind == CUDA_OP_INDEX || op->kind == CUDA_OP_SCAN) {
      (op->kind == CUDA_OP_GEMM         ? emit_gemm
       : op->kind == CUDA_OP_LAYER_NORM ? emit_layer_norm
       : op->kind == CUDA_OP_EMBEDDING  ? emit_embedding
       : op->kind == CUDA_OP_INDEX      ? emit_index
       : op->kind == CUDA_OP_SCAN       ? emit_scan
                                        : emit_cat)(&b, n);
      continue;
    }
    if (group_of[i] != open) {
      int64_t sizes[CUDA_MAX_RANK];
      int rank = h->value_rank(out);
      for (int d = 0; d < rank; d++) h->value_size(out, d, &sizes[d]);
      kernel_begin(&k, sizes, rank);
      open = group_of[i];
    }
    emit_node(&b, &k, open, n, op);
    plan->nfused_nodes++;
    vinfo *vo = val(&b, out);
    if (vo->stored && !b.err) {
      int t = materialize(&b, out);
      if (t < 0) break;
      kernel_store(&k, &b.tensors[t], vo->var);
    }
  }
  if (open >= 0 && !b.err) kernel_finish(&b, &k);

  /* Outputs not written by a group: copies from where they are. */
  for (int j = 0; j < no && !b.err; j++) {
    const alloy_value *v = h->graph_output(g, j);
    vinfo *vi = val(&b, v);
    if (vi->tensor >= 0 && b.plan->bases[b.tensors[vi->tensor].base].kind == BASE_OUTPUT &&
        b.plan->bases[b.tensors[vi->tensor].base].index == j)
      continue;
    if (vi->tensor < 0) {
      fail(&b, NULL, "output %d is not computed", j);
      break;
    }
    int base = add_base(&b, BASE_OUTPUT, j, 0);
    cuda_tensor src = b.tensors[vi->tensor], dst = src;
    dst.base = base, dst.offset = 0;
    int64_t s = 1;
    for (int d = src.rank - 1; d >= 0; d--) dst.strides[d] = s, s *= src.sizes[d];
    const alloy_tensor *as = layout ? &layout->outputs[j] : NULL;
    if (as && as->rank == dst.rank && as->strides)
      for (int d = 0; d < dst.rank; d++) dst.strides[d] = as->strides[d];
    emit_copy(&b, &src, &dst);
  }
  free(group_of);
  free(b.vals);
  free(b.tensors);
  if (b.src.oom && !b.err) fail(&b, NULL, "out of memory");
  plan->source = b.src.s;
  plan->source_len = b.src.len;
  if (b.err) {
    cuda_plan_free(plan);
    return b.err;
  }
  return NULL;
}

void cuda_plan_free(cuda_plan *plan) {
  for (int i = 0; i < plan->nlaunches; i++) free(plan->launches[i].bases);
  free(plan->launches);
  free(plan->bases);
  free(plan->source);
  memset(plan, 0, sizeof *plan);
}
