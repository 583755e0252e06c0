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
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/kernel_table.h"
#include "plugins/cuda/cuda_codegen.h"

/* ---- the module's prelude ------------------------------------------------
 * Loads and stores by dtype (16-bit floats by their bits, with
 * round-to-nearest-even as PyTorch's conversions) and the helpers the op
 * table's expressions call, after PyTorch's CUDA kernels. */
static const char prelude[] =
    /* The target: the same text compiles with NVRTC and with hipRTC
     * (gpu_port.h); what differs is the warp (a wavefront of 64 lanes on
     * CDNA, 32 or 64 on RDNA, as the compiler says), shuffles (HIP's take
     * no mask) and the half conversions (PTX on NVIDIA, _Float16 on AMD). */
    "#if defined(__HIPCC_RTC__) || defined(__HIP__)\n"
    "#define ALLOY_WARP __AMDGCN_WAVEFRONT_SIZE\n"
    "#define SHFL_DOWN(v, o) __shfl_down(v, o)\n"
    "__device__ __forceinline__ float f16_to_f32(unsigned short h) {\n"
    "  return (float)__builtin_bit_cast(_Float16, h); }\n"
    "__device__ __forceinline__ unsigned short f32_to_f16(float f) {\n"
    "  return __builtin_bit_cast(unsigned short, (_Float16)f); }\n"
    "#else\n"
    "#define ALLOY_WARP 32\n"
    "#define SHFL_DOWN(v, o) __shfl_down_sync(0xffffffffu, v, o)\n"
    "__device__ __forceinline__ float f16_to_f32(unsigned short h) {\n"
    "  float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); return f; }\n"
    "__device__ __forceinline__ unsigned short f32_to_f16(float f) {\n"
    "  unsigned short h; asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f)); return h; }\n"
    "#endif\n"
    "typedef long long i64;\n"
    "__device__ __forceinline__ float bf16_to_f32(unsigned short b) {\n"
    "  return __uint_as_float(((unsigned)b) << 16); }\n"
    "__device__ __forceinline__ unsigned short f32_to_bf16(float f) {\n"
    "  unsigned u = __float_as_uint(f);\n"
    "  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40);\n"
    "  return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16); }\n"
    "__device__ __forceinline__ float rnd_f16(float f) { return f16_to_f32(f32_to_f16(f)); }\n"
    "__device__ __forceinline__ float rnd_bf16(float f) { return bf16_to_f32(f32_to_bf16(f)); }\n"
    /* ld_/st_ one element; ldv_/stv_ four, as one load or store of 4,
     * 8 or 16 bytes (k a multiple of 4, p aligned to 4 elements) */
    "#define LD(name, T, R, conv) __device__ __forceinline__ R ld_##name(const char *p, i64 k) "
    "{ return (R)conv(((const T *)p)[k]); } \\\n"
    "  __device__ __forceinline__ void ldv_##name(const char *p, i64 k, R *o) { "
    "struct alignas(4 * sizeof(T)) V { T x[4]; }; const V w = *(const V *)((const T *)p + k); "
    "o[0] = (R)conv(w.x[0]); o[1] = (R)conv(w.x[1]); o[2] = (R)conv(w.x[2]); o[3] = (R)conv(w.x[3]); }\n"
    "#define ST(name, T, R, conv) __device__ __forceinline__ void st_##name(char *p, i64 k, R v) "
    "{ ((T *)p)[k] = (T)conv(v); } \\\n"
    "  __device__ __forceinline__ void stv_##name(char *p, i64 k, const R *v) { "
    "struct alignas(4 * sizeof(T)) V { T x[4]; }; V w; "
    "w.x[0] = (T)conv(v[0]); w.x[1] = (T)conv(v[1]); w.x[2] = (T)conv(v[2]); w.x[3] = (T)conv(v[3]); "
    "*(V *)((T *)p + k) = w; }\n"
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
    "  for (int o = ALLOY_WARP / 2; o > 0; o >>= 1) v = f(v, SHFL_DOWN(v, o));\n"
    "  int lane = threadIdx.x % ALLOY_WARP, warp = threadIdx.x / ALLOY_WARP;\n"
    "  __syncthreads();\n"
    "  if (lane == 0) sh[warp] = v;\n"
    "  __syncthreads();\n"
    "  if (warp == 0) {\n"
    "    v = lane < (int)(blockDim.x / ALLOY_WARP) ? sh[lane] : id;\n"
    "    for (int o = ALLOY_WARP / 2; o > 0; o >>= 1) v = f(v, SHFL_DOWN(v, o));\n"
    "    if (lane == 0) sh[0] = v;\n"
    "  }\n"
    "  __syncthreads();\n"
    "  return sh[0]; }\n";

/* ---- dtypes -------------------------------------------------------------*/

const char *cg_dtype_tag(alloy_dtype t) {
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
const char *cg_reg_type(alloy_dtype t) {
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



void cg_put(text *t, const char *fmt, ...) {
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





alloy_error *cg_fail(builder *b, const alloy_node *n, const char *fmt, ...) {
  if (b->err) return b->err;
  char msg[512];
  int k = n ? snprintf(msg, sizeof msg, "cuda: %s: ", b->host->node_op_name(n)) : 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg + k, sizeof msg - (size_t)k, fmt, ap);
  va_end(ap);
  return b->err = b->host->error_new(ALLOY_ERR_UNSUPPORTED, msg);
}

vinfo *cg_val(builder *b, const alloy_value *v) {
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

bool cg_grow(void **p, int *cap, int need, size_t size) {
  if (need <= *cap) return true;
  int c = *cap ? *cap * 2 : 16;
  while (c < need) c *= 2;
  void *q = realloc(*p, (size_t)c * size);
  if (!q) return false;
  *p = q, *cap = c;
  return true;
}

bool cg_in_memory(builder *b, const alloy_node *n, const alloy_value *v, cuda_tensor *out) {
  vinfo *vi = cg_val(b, v);
  if (vi->tensor < 0) return cg_fail(b, n, "an operand is not in memory"), false;
  *out = b->tensors[vi->tensor];
  return true;
}

int cg_add_base(builder *b, int kind, int index, uint64_t bytes) {
  cuda_plan *p = b->plan;
  if (!cg_grow((void **)&p->bases, &b->cap_bases, p->nbases + 1, sizeof *p->bases)) return -1;
  cuda_base *base = &p->bases[p->nbases];
  *base = (cuda_base){.kind = kind, .index = index, .bytes = bytes};
  if (kind == BASE_TEMP) {
    base->offset = p->scratch_bytes;
    p->scratch_bytes += (bytes + 255) & ~(uint64_t)255;
  }
  return p->nbases++;
}

int64_t cg_numel_of(const int64_t *sizes, int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= sizes[d];
  return n;
}

/* A tensor of value v's sizes on base: contiguous, or laid out as the
 * execute's tensor `as` is (its strides, in elements). */
static int add_tensor(builder *b, const alloy_value *v, int base, const alloy_tensor *as) {
  if (!cg_grow((void **)&b->tensors, &b->cap_tensors, b->ntensors + 1, sizeof *b->tensors)) return -1;
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
  if (!cg_dtype_tag(h->value_dtype(v))) return "complex dtypes are not computed";
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
int cg_tensor_operands(const alloy_host_api *h, const alloy_node *n, const alloy_value **out,
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

const alloy_arg *cg_arg_named(const alloy_host_api *h, const alloy_node *n, const char *name) {
  for (int i = 0; i < h->node_num_args(n); i++) {
    const char *an = h->node_arg_name(n, i);
    if (an && !strcmp(an, name)) return h->node_arg(n, i);
  }
  return NULL;
}

/* index.Tensor(self, indices): the dim of its first integer index tensor,
 * *count of them given at consecutive dims (the rest None), or -1 for any
 * other pattern (bool masks; a None between two index tensors, which moves
 * the broadcast dims to the front). */
int cg_index_position(const alloy_host_api *h, const alloy_node *n, int *count) {
  const alloy_arg *list = h->node_arg(n, 1);
  if (!list || h->arg_type(list) != ALLOY_ARG_TYPE_LIST) return -1;
  int pos = -1, last = -1;
  for (int k = 0; k < h->arg_list_size(list); k++) {
    const alloy_arg *a = h->arg_list_item(list, k);
    if (h->arg_type(a) == ALLOY_ARG_TYPE_NONE) continue;
    const alloy_value *v = h->arg_type(a) == ALLOY_ARG_TYPE_VALUE ? h->arg_value(a) : NULL;
    if (!v || (last >= 0 && last != k - 1)) return -1;
    alloy_dtype t = h->value_dtype(v);
    if (t != ALLOY_I64 && t != ALLOY_I32) return -1;
    if (pos < 0) pos = k;
    last = k;
  }
  if (count) *count = pos < 0 ? 0 : last - pos + 1;
  return pos;
}

const char *cuda_node_unsupported(const alloy_host_api *h, const alloy_node *n) {
  const cuda_op *op = cuda_op_find(h->node_op_name(n));
  if (!op) return "no CUDA kernel for this op yet";
  const alloy_value *in[64];
  int nin = cg_tensor_operands(h, n, in, 64);
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
  if (op->check) {
    const char *why = op->check(h, n);
    if (why) return why;
  }
  if (op->kind == CUDA_OP_INDEX && cg_index_position(h, n, NULL) < 0)
    return "index.Tensor other than integer index tensors at consecutive dims";
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

int64_t cg_int_arg(const alloy_host_api *h, const alloy_node *n, const char *name, int64_t dflt) {
  const alloy_arg *a = cg_arg_named(h, n, name);
  int64_t v;
  return a && h->arg_int(a, &v) ? v : dflt;
}

int cg_wrap_dim(int64_t d, int rank) {
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
    return alloy_view_strides(in->sizes, in->strides, in->rank, osz, orank, out->strides);
  if (!strcmp(name, "aten.permute.default")) {
    const alloy_arg *dims = cg_arg_named(h, n, "dims");
    for (int d = 0; d < orank; d++) {
      int64_t p = 0;
      h->arg_int(h->arg_list_item(dims, d), &p);
      out->strides[d] = in->strides[cg_wrap_dim(p, in->rank)];
    }
    return true;
  }
  if (!strcmp(name, "aten.t.default") || !strcmp(name, "aten.transpose.int")) {
    int d0 = 0, d1 = in->rank > 1 ? 1 : 0;
    if (!strcmp(name, "aten.transpose.int")) {
      d0 = cg_wrap_dim(cg_int_arg(h, n, "dim0", 0), in->rank);
      d1 = cg_wrap_dim(cg_int_arg(h, n, "dim1", 0), in->rank);
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
    int dim = (int)cg_int_arg(h, n, "dim", 0);
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
    const alloy_arg *dims = cg_arg_named(h, n, "dim");
    for (int d = 0; d < in->rank && left > 0; d++) {
      bool named = !dims;
      if (dims && h->arg_type(dims) == ALLOY_ARG_TYPE_LIST) {
        for (int k = 0; k < h->arg_list_size(dims); k++) {
          int64_t x;
          if (h->arg_int(h->arg_list_item(dims, k), &x) && cg_wrap_dim(x, in->rank) == d) named = true;
        }
      } else if (dims) {
        int64_t x;
        named = h->arg_int(dims, &x) && cg_wrap_dim(x, in->rank) == d;
      }
      if (named && in->sizes[d] == 1) drop[d] = true, left--;
    }
    for (int d = 0, k = 0; d < in->rank; d++)
      if (!drop[d] && k < orank) out->strides[k++] = in->strides[d];
    return true;
  }
  if (!strcmp(name, "aten.slice.Tensor")) {
    int dim = cg_wrap_dim(cg_int_arg(h, n, "dim", 0), in->rank);
    int64_t size = in->sizes[dim], start = cg_int_arg(h, n, "start", 0), step = cg_int_arg(h, n, "step", 1);
    if (start < 0) start += size;
    if (start < 0) start = 0;
    if (start > size) start = size;
    memcpy(out->strides, in->strides, sizeof *in->strides * (size_t)in->rank);
    out->offset = in->offset + start * in->strides[dim];
    out->strides[dim] = in->strides[dim] * step;
    return true;
  }
  if (!strcmp(name, "aten.select.int")) {
    int dim = cg_wrap_dim(cg_int_arg(h, n, "dim", 0), in->rank);
    int64_t index = cg_int_arg(h, n, "index", 0);
    if (index < 0) index += in->sizes[dim];
    out->offset = in->offset + index * in->strides[dim];
    for (int d = 0, k = 0; d < in->rank; d++)
      if (d != dim) out->strides[k++] = in->strides[d];
    return true;
  }
  return false;
}

/* ---- kernels -------------------------------------------------------------*/


int cg_kernel_param(kernel *k, int base) {
  for (int i = 0; i < k->nbases; i++)
    if (k->bases[i] == base) return i;
  if (k->nbases == 64) return -1;
  k->bases[k->nbases] = base;
  return k->nbases++;
}

void cg_index_split(kernel *k) {
  if (k->index_split) return;
  /* from the last dim (a broadcast operand reads only some of them) */
  cg_put(&k->body, "    IDX_T r = i;\n");
  for (int d = k->rank - 1; d >= 0; d--) {
    if (d > 0)
      cg_put(&k->body, "    [[maybe_unused]] IDX_T i%d = r %% %" PRId64 "; r /= %" PRId64 ";\n", d, k->sizes[d],
             k->sizes[d]);
    else cg_put(&k->body, "    [[maybe_unused]] IDX_T i0 = r;\n");
  }
  k->index_split = true;
}

void cg_kernel_reach(kernel *k, const cuda_tensor *t) {
  int64_t end = t->offset + 1;
  for (int d = 0; d < t->rank; d++) {
    if (t->sizes[d] == 0) return; /* reaches nothing */
    if (t->strides[d] < 0 || end > ((int64_t)1 << 40)) end = INT64_MAX / 2; /* never narrow */
    else end += (t->sizes[d] - 1) * t->strides[d];
  }
  if (end > k->extent) k->extent = end;
}

/* The element offset of tensor t at the kernel's index, as C text: the
 * linear index when t is laid out as the iteration shape, else the sum of
 * the per-dim indices times t's strides (broadcast dims right-aligned). */
void cg_offset_text(kernel *k, const cuda_tensor *t, char *buf, size_t cap) {
  cg_kernel_reach(k, t);
  cuda_tensor tp;
  if (k->permuted) { /* t's dims (aligned right, size-1 where it broadcasts) in the iteration's order */
    tp = *t;
    tp.rank = k->rank;
    const int lead = k->rank - t->rank;
    for (int d = 0; d < k->rank; d++) {
      const int td = k->perm[d] - lead;
      tp.sizes[d] = td >= 0 ? t->sizes[td] : 1, tp.strides[d] = td >= 0 ? t->strides[td] : 0;
    }
    t = &tp;
  }
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
  cg_index_split(k);
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
int cg_kernel_load(builder *b, kernel *k, const cuda_tensor *t, int id) {
  for (int i = k->load_floor; id >= 0 && i < k->nloaded; i++)
    if (k->loaded[i] == id) return k->loaded_var[i];
  int p = cg_kernel_param(k, t->base);
  if (p < 0) return -1;
  char off[512];
  cg_offset_text(k, t, off, sizeof off);
  int v = k->nvars++;
  cg_put(&k->body, "    %s v%d = ld_%s(p%d, %s);\n", cg_reg_type(t->dtype), v, cg_dtype_tag(t->dtype), p, off);
  if (id >= 0 && k->nloaded < 64) k->loaded[k->nloaded] = id, k->loaded_var[k->nloaded++] = v;
  (void)b;
  return v;
}

void cg_kernel_store(kernel *k, const cuda_tensor *t, int var) {
  int p = cg_kernel_param(k, t->base);
  char off[512];
  cg_offset_text(k, t, off, sizeof off);
  /* once a row in a row group: every thread holds the value, one writes it */
  cg_put(&k->body, "    %sst_%s(p%d, %s, v%d);\n", k->row_group && !k->in_loop ? "if (threadIdx.x == 0) " : "",
         cg_dtype_tag(t->dtype), p, off, var);
}

/* Appends kernel k to the module and a launch of it to the plan. */
/* The kernel already written with this text (a transformer's layers make
 * the same kernels over other buffers: NVRTC compiles each once), or -1
 * after recording it as kernel id. */
static int kernel_seen(builder *b, const kernel *k, int style, int id) {
  const char *body = k->body.s ? k->body.s : "";
  uint64_t h = 1469598103934665603ull ^ (uint64_t)k->nbases ^ ((uint64_t)style << 40);
  for (const char *c = body; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
  for (int i = 0; i < b->nseen; i++)
    if (b->seen[i].hash == h && b->seen[i].nbases == k->nbases && b->seen[i].style == style &&
        !strcmp(b->seen[i].body, body))
      return b->seen[i].id;
  if (cg_grow((void **)&b->seen, &b->cap_seen, b->nseen + 1, sizeof *b->seen)) {
    char *copy = strdup(body);
    if (copy) b->seen[b->nseen++] = (seen_kernel){h, copy, k->nbases, style, id};
  }
  return -1;
}

/* The index type's name in place of every IDX_T of t. */
static void index_type_set(text *t, const char *type) {
  size_t tl = strlen(type);
  char *s = t->s;
  if (!s) return;
  size_t w = 0;
  for (size_t r = 0; r < t->len;) {
    if (!strncmp(s + r, "IDX_T", 5)) { /* the type is never longer than its placeholder */
      memcpy(s + w, type, tl), w += tl, r += 5;
    } else {
      s[w++] = s[r++];
    }
  }
  s[w] = 0, t->len = w;
}

/* A new kernel's id; its definition starts at the module text's end. */
static int kernel_new(builder *b) {
  cuda_plan *p = b->plan;
  if (!cg_grow((void **)&p->kernel_at, &b->cap_kernel_at, p->nkernels + 1, sizeof *p->kernel_at)) {
    b->src.oom = true; /* reported with the text's */
    return p->nkernels;
  }
  p->kernel_at[p->nkernels] = b->src.len;
  return p->nkernels++;
}

int cg_custom_kernel(builder *b, const char *def, int nbases) {
  kernel k = {.nbases = nbases, .body = {.s = (char *)def}};
  int id = kernel_seen(b, &k, 0, b->plan->nkernels);
  if (id >= 0) return id;
  id = kernel_new(b);
  char name[16];
  snprintf(name, sizeof name, "k%d", id);
  for (const char *s = def, *at; *s; s = at + 5) { /* KNAME -> k<id> */
    if (!(at = strstr(s, "KNAME"))) {
      cg_put(&b->src, "%s", s);
      break;
    }
    cg_put(&b->src, "%.*s%s", (int)(at - s), s, name);
  }
  return id;
}

/* Elements a thread takes each pass of a narrow kernel's grid-stride loop:
 * independent loads in flight, as PyTorch's elementwise kernels unroll. */
enum { KERNEL_UNROLL = 4 };

/* ---- four elements a thread, by vector loads ---------------------------------*/

/* The dtypes whose four elements are one load of 4, 8 or 16 bytes. */
static const struct {
  const char *tag, *reg;
  int size;
} vector_tags[] = {{"bool", "bool", 1}, {"u8", "int", 1},   {"i8", "int", 1},     {"i16", "int", 2},
                   {"i32", "int", 4},   {"f16", "float", 2}, {"bf16", "float", 2}, {"f32", "float", 4}};

typedef struct vec_slot {
  char tag[8];
  int p, size;
  long long off;
  bool store;
} vec_slot;

/* Reads "<tag>(p<P>, <OFF> + i" at s; its length, or 0. */
static size_t access_at(const char *s, char *tag, int *p, long long *off) {
  int n = 0;
  if (sscanf(s, "%7[a-z0-9](p%d, %lld + i%n", tag, p, off, &n) != 3 || n == 0) return 0;
  return (size_t)n;
}

/* A narrow kernel's body with four elements a thread (k's t-th four,
 * i = t * 4 + u): each load "ld_T(pP, OFF + i)" and store
 * "st_T(pP, OFF + i, vV);" of a dtype above at an OFF that is a multiple
 * of 4 becomes an element of an array filled by one ldv_ before the loop
 * over u, or emptied by one stv_ after it; other accesses (broadcast
 * operands, index arithmetic) stay as they are, per element. Writes the
 * loop's text into loop, the arrays' loads and declarations into pre, the
 * stores into post, the pointers' alignment test into check; false when
 * no access is of that form. */
static bool vector_text(const char *body, text *pre, text *loop, text *post, text *check) {
  vec_slot slots[64];
  int ns = 0;
  for (const char *s = body; *s;) {
    bool ld = !strncmp(s, "ld_", 3), st = !strncmp(s, "st_", 3);
    char tag[8];
    int p;
    long long off;
    size_t len = (ld || st) && (s == body || !(isalnum((unsigned char)s[-1]) || s[-1] == '_'))
                     ? access_at(s + 3, tag, &p, &off)
                     : 0;
    int size = 0;
    for (size_t t = 0; len && t < sizeof vector_tags / sizeof *vector_tags; t++)
      if (!strcmp(vector_tags[t].tag, tag)) size = vector_tags[t].size;
    int v = -1, m = 0;
    if (len && ld && s[3 + len] != ')') len = 0; /* "0 + i0 * 8 ...": per-dim indices, not the element's */
    if (len && st && !(sscanf(s + 3 + len, ", v%d);%n", &v, &m) == 1 && m > 0)) len = 0;
    if (!len || !size || off % 4 != 0) {
      cg_put(loop, "%c", *s++);
      continue;
    }
    int k = 0;
    while (k < ns && !(slots[k].store == st && slots[k].p == p && slots[k].off == off && !strcmp(slots[k].tag, tag))) k++;
    if (k == ns) {
      if (ns == 64) return false;
      slots[ns] = (vec_slot){.p = p, .size = size, .off = off, .store = st};
      snprintf(slots[ns].tag, sizeof slots[ns].tag, "%s", tag);
      ns++;
    }
    if (ld) {
      cg_put(loop, "L%d[u]", k);
      s += 3 + len + 1; /* the ')' */
    } else {
      cg_put(loop, "S%d[u] = v%d;", k, v);
      s += 3 + len + (size_t)m;
    }
  }
  for (int k = 0; k < ns; k++) {
    const char *reg = "float";
    for (size_t t = 0; t < sizeof vector_tags / sizeof *vector_tags; t++)
      if (!strcmp(vector_tags[t].tag, slots[k].tag)) reg = vector_tags[t].reg;
    if (slots[k].store) {
      cg_put(pre, "    %s S%d[4];\n", reg, k);
      cg_put(post, "    stv_%s(p%d, %lld + t * 4, S%d);\n", slots[k].tag, slots[k].p, slots[k].off, k);
    } else {
      cg_put(pre, "    %s L%d[4];\n    ldv_%s(p%d, %lld + t * 4, L%d);\n", reg, k, slots[k].tag, slots[k].p,
             slots[k].off, k);
    }
    cg_put(check, "%s((unsigned long long)p%d & %d)", k ? " | " : "", slots[k].p, 4 * slots[k].size - 1);
  }
  return ns > 0;
}

void cg_kernel_finish(builder *b, kernel *k) {
  cuda_plan *p = b->plan;
  cg_row_close(k);
  const int64_t numel = cg_numel_of(k->sizes, k->rank), lim = (int64_t)1 << 30;
  const bool narrow = k->narrow && numel <= lim && k->extent <= lim;
  const char *ix = narrow ? "int" : "i64";
  index_type_set(&k->body, ix);
  text pre = {0}, loop = {0}, post = {0}, check = {0};
  const bool vec = narrow && !k->rows && numel % 4 == 0 && k->body.s &&
                   vector_text(k->body.s, &pre, &loop, &post, &check) && !(pre.oom || loop.oom || post.oom || check.oom);
  int id = kernel_seen(b, k, (k->rows ? 1 : 0) | (narrow ? 2 : 0) | (vec ? 4 : 0), p->nkernels);
  if (id < 0) {
    id = kernel_new(b);
    cg_put(&b->src, "extern \"C\" __global__ void __launch_bounds__(256) k%d(", id);
    for (int i = 0; i < k->nbases; i++) cg_put(&b->src, "%schar *__restrict__ p%d", i ? ", " : "", i);
    cg_put(&b->src, "%si64 n) {\n", k->nbases ? ", " : "");
    const char *body = k->body.s ? k->body.s : "";
    if (k->rows) {
      cg_put(&b->src, "  for (%s i = blockIdx.x; i < n; i += gridDim.x) {\n%s  }\n}\n", ix, body);
    } else if (narrow) {
      /* the unrolled copies have no branch between them, so that every
       * copy's loads may be issued before the first copy's stores (the
       * pointers are __restrict__); the last pass checks each element */
      const int u = KERNEL_UNROLL;
      if (vec) /* four elements a thread by vector loads, when every pointer is aligned for them */
        cg_put(&b->src, "  if ((%s) == 0) {\n  for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < (int)(n / 4); "
                        "t += gridDim.x * blockDim.x) {\n%s  #pragma unroll\n  for (int u = 0; u < 4; u++) {\n"
                        "  [[maybe_unused]] const int i = t * 4 + u;\n%s  }\n%s  }\n  return;\n  }\n",
               check.s, pre.s ? pre.s : "", loop.s, post.s ? post.s : "");
      cg_put(&b->src, "  for (int i%d = blockIdx.x * blockDim.x * %d + threadIdx.x; i%d < n; i%d += gridDim.x * "
                      "blockDim.x * %d) {\n", u, u, u, u, u);
      cg_put(&b->src, "  if (i%d + %d * (int)blockDim.x < n) {\n  #pragma unroll\n  for (int u = 0; u < %d; u++) {\n"
                      "  const int i = i%d + u * blockDim.x;\n%s  }\n  } else {\n", u, u - 1, u, u, body);
      cg_put(&b->src, "  for (int u = 0; u < %d; u++) {\n  const int i = i%d + u * blockDim.x;\n  if (i >= n) break;\n"
                      "%s  }\n  }\n  }\n}\n", u, u, body);
    } else {
      cg_put(&b->src, "  for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n; "
                      "i += (i64)gridDim.x * blockDim.x) {\n%s  }\n}\n", body);
    }
  }
  free(k->body.s), free(pre.s), free(loop.s), free(post.s), free(check.s);
  k->body = (text){0};
  if (b->src.oom || !cg_grow((void **)&p->launches, &b->cap_launches, p->nlaunches + 1, sizeof *p->launches)) {
    cg_fail(b, NULL, "out of memory");
    return;
  }
  cuda_launch *l = &p->launches[p->nlaunches++];
  memset(l, 0, sizeof *l);
  snprintf(l->name, sizeof l->name, "k%d", id), l->kernel = id;
  if (k->nwhat > 3) snprintf(l->what, sizeof l->what, "%s+%d", k->what, k->nwhat - 3);
  else if (k->nwhat == 1 && !strncmp(k->what, "fused ", 6)) snprintf(l->what, sizeof l->what, "%s", k->what + 6);
  else snprintf(l->what, sizeof l->what, "%s", k->nwhat ? k->what : b->what);
  l->n = numel;
  l->rows = k->rows;
  l->per_thread = narrow && !k->rows ? KERNEL_UNROLL : 1;
  l->nbases = k->nbases;
  l->bases = malloc(sizeof *l->bases * (size_t)(k->nbases ? k->nbases : 1));
  if (!l->bases) return (void)cg_fail(b, NULL, "out of memory");
  memcpy(l->bases, k->bases, sizeof *l->bases * (size_t)k->nbases);
}

void cg_kernel_begin(kernel *k, const int64_t *sizes, int rank) {
  memset(k, 0, sizeof *k);
  k->rank = rank;
  memcpy(k->sizes, sizes, sizeof *sizes * (size_t)rank);
  memcpy(k->lsizes, sizes, sizeof *sizes * (size_t)rank);
  for (int d = 0; d < rank; d++) k->perm[d] = d;
}

/* Makes 4-d kernel k walk N, H, W, C: the linear index i is the
 * channels-last one (iteration dim d is the values' dim perm[d]). */
static void kernel_walk_channels_last(kernel *k) {
  static const int nhwc[4] = {0, 2, 3, 1};
  k->permuted = true;
  for (int d = 0; d < 4; d++) k->perm[d] = nhwc[d], k->sizes[d] = k->lsizes[nhwc[d]];
}

/* A copy of tensor src into dst (same sizes): one load, one store. */
void cg_emit_copy(builder *b, const cuda_tensor *src, const cuda_tensor *dst) {
  kernel k;
  cg_kernel_begin(&k, dst->sizes, dst->rank);
  k.narrow = true;
  /* into a channels-last temporary (an image for a convolution): walk it
   * in memory order, so that the stores are whole lines and the loads
   * gather from the planes (the other way about, a copy of 3 channels
   * took 94 us for resnet50's 38 MB of images on an H200) */
  if (cg_is_channels_last(dst) && dst->sizes[1] > 1) kernel_walk_channels_last(&k);
  snprintf(k.what, sizeof k.what, "copy");
  k.nwhat = 1;
  int v = cg_kernel_load(b, &k, src, -1);
  if (src->dtype != dst->dtype) {
    int w = k.nvars++;
    cg_put(&k.body, "    %s v%d = (%s)v%d;\n", cg_reg_type(dst->dtype), w, cg_reg_type(dst->dtype), v);
    v = w;
  }
  cg_kernel_store(&k, dst, v);
  cg_kernel_finish(b, &k);
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
      cg_put(out, "%c", *p);
    } else if (p[1] >= '0' && p[1] <= '9') {
      cg_put(out, "%s", ops[p[1] - '0']);
      p++;
    } else if (p[1] == 'T') {
      cg_put(out, "%s", ct);
      p++;
    } else if (p[1] == '{') {
      const char *end = strchr(p, '}');
      char name[64];
      size_t len = end ? (size_t)(end - p - 2) : 0;
      if (!end || len >= sizeof name) {
        cg_fail(b, n, "bad expression %s", expr);
        return;
      }
      memcpy(name, p + 2, len);
      name[len] = 0;
      bool optional = len && name[len - 1] == '?';
      if (optional) name[len - 1] = 0;
      const alloy_arg *a = cg_arg_named(h, n, name);
      char lit[96];
      if (a && h->arg_type(a) != ALLOY_ARG_TYPE_NONE) {
        scalar_text(h, a, ct, lit, sizeof lit);
        const char *to = rounds_to_dtype(name) ? storage_cast(cd) : "";
        cg_put(out, "%s((%s)%s(%s))", optional ? "1, " : "", ct, to, lit);
      } else {
        cg_put(out, optional ? "0, (%s)0" : "((%s)1)", ct); /* an absent bound; an absent alpha */
      }
      p = end;
    } else {
      cg_put(out, "$");
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

static void emit_node(builder *b, kernel *k, int gid, const alloy_node *n, const cuda_op *op);

/* A group's flags (cuda_plan_build): it stores a channels-last value; it
 * holds a node whose code reads the logical index, so its iteration is
 * never permuted. */
enum { GROUP_CL = 1, GROUP_UNPERMUTED = 2 };

/* Marks node n's first output channels last (vinfo.cl) when it is a 4-d
 * float convolution's (cuDNN's tensor-core engines read and write N, H,
 * W, C without transposing), or a 4-d pointwise, batch norm or pooling
 * result of such a value (its kernel then walks memory order). */
static void mark_channels_last(builder *b, const alloy_node *n, const cuda_op *op) {
  const alloy_host_api *h = b->host;
  if (h->node_num_outputs(n) < 1) return;
  const alloy_value *out = h->node_output(n, 0);
  if (h->value_rank(out) != 4) return;
  alloy_dtype t = h->value_dtype(out);
  if (op->kind == CUDA_OP_CONV) {
    cg_val(b, out)->cl = t == ALLOY_F32 || t == ALLOY_F16 || t == ALLOY_BF16;
    return;
  }
  const bool pool = op->emit == cg_emit_max_pool || op->emit == cg_emit_avg_pool || op->emit == cg_emit_adaptive_avg_pool;
  if (op->kind != CUDA_OP_POINTWISE && !op->fuse && !pool) return;
  const alloy_value *in[16];
  int nin = cg_tensor_operands(h, n, in, 16);
  for (int j = 0; j < nin && j < 16; j++)
    if (h->value_rank(in[j]) == 4 && cg_val(b, in[j])->cl) {
      cg_val(b, out)->cl = true;
      return;
    }
}

/* The register of value v inside kernel k of group gid: a register the
 * group computed, or a load of the tensor holding it. In a row group a
 * register of an earlier loop is out of scope: the value is read back
 * where it was stored, else computed again here. */
int cg_operand_var(builder *b, kernel *k, int gid, const alloy_value *v) {
  vinfo *vi = cg_val(b, v);
  if (vi->group == gid && vi->var >= 0) {
    if (!k->row_group || vi->row_scope || vi->phase == k->phase) return vi->var;
    if (vi->tensor < 0 && vi->node) {
      const cuda_op *op = cuda_op_find(b->host->node_op_name(vi->node));
      if (op && op->fuse) {
        int r = op->fuse(b, k, gid, vi->node);
        if (r >= 0) vi->var = r, vi->phase = k->phase, vi->row_scope = !k->in_loop;
        return r;
      }
      if (op && op->kind != CUDA_OP_REDUCE) {
        emit_node(b, k, gid, vi->node, op);
        return b->err ? -1 : vi->var;
      }
    }
  }
  if (vi->tensor < 0) {
    cg_fail(b, NULL, "value %s is read before it is computed", b->host->value_name(v));
    return -1;
  }
  return cg_kernel_load(b, k, &b->tensors[vi->tensor], vi->tensor);
}

/* The short name of node n's op, for labels: "aten.add.Tensor" -> "add". */
static void short_name(const alloy_host_api *h, const alloy_node *n, char *buf, size_t cap) {
  const char *s = h->node_op_name(n), *dot = strchr(s, '.');
  if (dot) s = dot + 1;
  /* "_native_batch_norm_legit_no_training" reads "batch_norm" */
  if (!strncmp(s, "_native_", 8)) s += 8;
  size_t len = strcspn(s, ".");
  const char *legit = strstr(s, "_legit");
  if (legit && (size_t)(legit - s) < len) len = (size_t)(legit - s);
  snprintf(buf, cap, "%.*s", (int)len, s);
}

/* Names node n in fused kernel k's label ("fused add+mul+2"). */
static void label_node(const alloy_host_api *h, kernel *k, const alloy_node *n) {
  if (k->nwhat < 3) {
    size_t len = strlen(k->what);
    char nm[32];
    short_name(h, n, nm, sizeof nm);
    snprintf(k->what + len, sizeof k->what - len, "%s%s", len ? "+" : "fused ", nm);
  }
  k->nwhat++;
}

/* Emits node n (pointwise or fill) into kernel k of group gid. */
static void emit_node(builder *b, kernel *k, int gid, const alloy_node *n, const cuda_op *op) {
  const alloy_host_api *h = b->host;
  const alloy_value *out = h->node_output(n, 0);
  alloy_dtype rt = h->value_dtype(out);
  alloy_dtype cd = compute_dtype(b, n, op, rt);
  const char *ct = cg_reg_type(cd);
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
    int r = cg_operand_var(b, k, gid, in);
    if (r < 0) return;
    if (cond) snprintf(ops[j], sizeof ops[j], "(v%d != 0)", r);
    else if (!strcmp(cg_reg_type(h->value_dtype(in)), ct)) snprintf(ops[j], sizeof ops[j], "v%d", r);
    else snprintf(ops[j], sizeof ops[j], "((%s)v%d)", ct, r);
  }
  text e = {0};
  expand_expr(b, n, op->expr, ops, op->kind == CUDA_OP_FILL ? cg_reg_type(rt) : ct, cd, &e);
  int v = k->nvars++;
  const char *rty = cg_reg_type(rt);
  const char *wrap = storage_cast(rt);
  if (rt == ALLOY_BOOL) cg_put(&k->body, "    bool v%d = (%s) != 0;\n", v, e.s ? e.s : "0");
  else if (rt == ALLOY_F16 || rt == ALLOY_BF16)
    cg_put(&k->body, "    float v%d = rnd_%s((float)(%s));\n", v, cg_dtype_tag(rt), e.s ? e.s : "0");
  else cg_put(&k->body, "    %s v%d = (%s)%s(%s);\n", rty, v, rty, wrap, e.s ? e.s : "0");
  free(e.s);
  if (e.oom) cg_fail(b, n, "out of memory");
  vinfo *vi = cg_val(b, out);
  vi->group = gid;
  vi->var = v;
  vi->phase = k->phase, vi->row_scope = k->row_group && !k->in_loop;
}

int cg_pointwise_from(builder *b, kernel *k, int gid, const alloy_node *n, const alloy_value *const *in,
                      const int *var, int nin) {
  const alloy_host_api *h = b->host;
  const cuda_op *op = cuda_op_find(h->node_op_name(n));
  vinfo saved[8];
  if (!op || op->kind != CUDA_OP_POINTWISE || nin > 8)
    return cg_fail(b, n, "not pointwise work to take over"), -1;
  /* emit_node finds each operand's register as the group's own (a
   * register of the whole row, in a row group); restored after, in the
   * reverse order, so that an operand given twice gets its own back */
  for (int j = 0; j < nin; j++) {
    vinfo *vi = cg_val(b, in[j]);
    saved[j] = *vi;
    vi->group = gid, vi->var = var[j], vi->phase = k->phase, vi->row_scope = true;
  }
  label_node(h, k, n);
  emit_node(b, k, gid, n, op);
  for (int j = nin - 1; j >= 0; j--) *cg_val(b, in[j]) = saved[j];
  vinfo *vo = cg_val(b, h->node_output(n, 0));
  const int r = b->err ? -1 : vo->var;
  vo->group = -1, vo->var = -1; /* a register of the consumer's block only */
  b->plan->nfused_nodes++;
  return r;
}

/* ---- the plan ----------------------------------------------------------------*/

bool cg_same_sizes(const alloy_host_api *h, const alloy_value *v, const int64_t *sizes, int rank) {
  if (h->value_rank(v) != rank) return false;
  for (int d = 0; d < rank; d++) {
    int64_t s;
    if (!h->value_size(v, d, &s) || s != sizes[d]) return false;
  }
  return true;
}

void cg_strides_channels_last(cuda_tensor *t) {
  const int64_t C = t->sizes[1], H = t->sizes[2], W = t->sizes[3];
  t->strides[1] = 1, t->strides[3] = C, t->strides[2] = W * C, t->strides[0] = H * W * C;
}

bool cg_is_channels_last(const cuda_tensor *t) {
  if (t->rank != 4) return false;
  static const int order[4] = {1, 3, 2, 0}; /* innermost first */
  int64_t s = 1;
  for (int k = 0; k < 4; k++) {
    if (t->sizes[order[k]] != 1 && t->strides[order[k]] != s) return false;
    s *= t->sizes[order[k]];
  }
  return true;
}

/* The memory of value v computed by a group: its partition output when it
 * is one (written there directly), else a temporary. */
int cg_materialize(builder *b, const alloy_value *v) {
  vinfo *vi = cg_val(b, v);
  if (vi->tensor >= 0) return vi->tensor;
  const alloy_host_api *h = b->host;
  int base;
  const alloy_tensor *as = NULL;
  if (vi->output >= 0) {
    base = cg_add_base(b, BASE_OUTPUT, vi->output, 0);
    if (b->layout) as = &b->layout->outputs[vi->output];
  } else {
    int64_t numel = 1, s;
    for (int d = 0; d < h->value_rank(v); d++) h->value_size(v, d, &s), numel *= s;
    base = cg_add_base(b, BASE_TEMP, -1, (uint64_t)numel * alloy_dtype_size(h->value_dtype(v)));
  }
  if (base < 0) return -1;
  int t = vi->tensor = add_tensor(b, v, base, as);
  if (t >= 0 && vi->cl && vi->output < 0 && b->tensors[t].rank == 4) cg_strides_channels_last(&b->tensors[t]);
  return t;
}

/* What the builder plans each way from opts (NULL: the defaults, all
 * false): portable means every kind portable. */
static void builder_options(builder *b, const cuda_plan_options *opts) {
  const cuda_plan_options none = {0}, *o = opts ? opts : &none;
  b->portable_gemm = o->portable || o->portable_gemm;
  b->portable_conv = o->portable || o->portable_conv;
  b->simt_attention = o->portable || o->simt_attention;
  b->channels_last = o->channels_last && !b->portable_conv;
}

alloy_error *cuda_plan_build(const alloy_host_api *h, const alloy_graph *g, const cuda_layout *layout,
                             const cuda_plan_options *opts, cuda_plan *plan) {
  memset(plan, 0, sizeof *plan);
  builder b = {.host = h, .g = g, .layout = layout, .plan = plan};
  builder_options(&b, opts);
  int nn = h->graph_num_nodes(g), ni = h->graph_num_inputs(g), no = h->graph_num_outputs(g);
  b.cap_vals = 64;
  while (b.cap_vals < 4 * (nn + ni + no) + 64) b.cap_vals *= 2;
  b.vals = calloc((size_t)b.cap_vals, sizeof *b.vals);
  if (!b.vals) return h->error_new(ALLOY_ERR_OUT_OF_MEMORY, "cuda: out of memory");
  cg_put(&b.src, "%s", prelude);
  plan->prelude_len = b.src.len;

  for (int i = 0; i < ni && !b.err; i++) {
    const alloy_value *v = h->graph_input(g, i);
    if (h->value_kind(v) != 0) continue;
    int base = cg_add_base(&b, BASE_INPUT, i, 0);
    cg_val(&b, v)->tensor = base < 0 ? -1 : add_tensor(&b, v, base, layout ? &layout->inputs[i] : NULL);
  }
  /* A value computed here that is an output is written there directly. */
  for (int j = 0; j < no; j++) {
    vinfo *vi = cg_val(&b, h->graph_output(g, j));
    if (vi->tensor < 0 && vi->output < 0) vi->output = j;
  }
  /* Which values a group must store: read by a node of another group (or a
   * view, or a fill), or an output. Groups are runs of consecutive
   * pointwise nodes over one shape, or row groups (cuda_codegen_fuse.c):
   * such a run with reductions over its trailing dims and the nodes of
   * the kept shape after them. Pass 1 numbers them; nred_of[g] is a row
   * group's count of reduced dims (0: pointwise), gfull its full shape.
   * The passes visit the nodes in the order ord (cg_node_order); a view
   * whose input is in memory already leaves the open group open
   * (group_of -2). */
  int *group_of = calloc((size_t)(nn ? nn : 1) * 4, sizeof *group_of);
  int64_t(*gfull)[CUDA_MAX_RANK] = malloc(sizeof *gfull * (size_t)(nn ? nn : 1));
  if (!group_of || !gfull)
    return free(group_of), free(gfull), free(b.vals), h->error_new(ALLOY_ERR_OUT_OF_MEMORY, "cuda: out of memory");
  int *nred_of = group_of + (nn ? nn : 1), *ord = group_of + 2 * (nn ? nn : 1);
  int *gflag = group_of + 3 * (nn ? nn : 1); /* GROUP_CL | GROUP_UNPERMUTED */
  for (int i = 0; i < nn; i++) {
    const alloy_node *n = h->graph_node(g, i);
    if (h->node_num_outputs(n) < 1) continue;
    vinfo *vi = cg_val(&b, h->node_output(n, 0));
    vi->node = n, vi->at = i;
  }
  if (!cg_node_order(&b, nn, ord)) cg_fail(&b, NULL, "out of memory");
  int ngroups = 0;
  int64_t gsizes[CUDA_MAX_RANK], kept[CUDA_MAX_RANK];
  int grank = -1;
  for (int at = 0; at < nn && !b.err; at++) {
    const int i = ord[at];
    const alloy_node *n = h->graph_node(g, i);
    const cuda_op *op = cuda_op_find(h->node_op_name(n));
    if (!op) {
      cg_fail(&b, n, "not an op of the cuda backend");
      break;
    }
    const char *why = cuda_node_unsupported(h, n);
    if (why) {
      cg_fail(&b, n, "%s", why);
      break;
    }
    group_of[i] = -1;
    if (op->kind == CUDA_OP_NOP) continue; /* no outputs: the group goes on */
    /* Work its one reader does itself: a relu the max pool after it
     * applies, pointwise work the cat after it computes. The reader's
     * layout follows its operands', so this one is marked all the same. */
    bool into_pool = cg_relu_into_pool(&b, n), into_cat = !into_pool && cg_into_cat(&b, n);
    if (into_pool || into_cat) {
      if (b.channels_last) mark_channels_last(&b, n, op);
      cg_val(&b, h->node_output(n, 0))->into_pool = into_pool;
      cg_val(&b, h->node_output(n, 0))->into_cat = into_cat;
      continue;
    }
    if (b.channels_last) mark_channels_last(&b, n, op);
    if (op->kind == CUDA_OP_VIEW) {
      const alloy_value *x[1];
      if (grank >= 0 && cg_tensor_operands(h, n, x, 1) == 1 && cg_val(&b, x[0])->group != ngroups - 1)
        group_of[i] = -2;
      else grank = -1;
      continue;
    }
    int nred = 0;
    const bool red = cg_row_reduction(&b, n, op, &nred);
    int joins = op->groupable ? op->groupable(&b, n, grank >= 0 ? ngroups - 1 : -1) : 1;
    if (joins == 0) grank = -1; /* starts a group */
    if ((!red && op->kind != CUDA_OP_POINTWISE && op->kind != CUDA_OP_FILL && !op->fuse) || joins < 0) {
      grank = -1; /* kernels of their own */
      continue;
    }
    const alloy_value *out = h->node_output(n, 0);
    for (int d = 0; d < h->value_rank(out); d++)
      if (!h->value_size(out, d, &(int64_t){0})) cg_fail(&b, n, "symbolic sizes reach compile");
    const int open = ngroups - 1;
    if (red) { /* joins the run over its input's shape, making it a row group */
      const alloy_value *x[1];
      cg_tensor_operands(h, n, x, 1);
      if (grank < 0 || !cg_same_sizes(h, x[0], gsizes, grank) || (nred_of[open] && nred_of[open] != nred)) {
        grank = h->value_rank(x[0]);
        for (int d = 0; d < grank; d++) h->value_size(x[0], d, &gsizes[d]);
        ngroups++;
      }
      nred_of[ngroups - 1] = nred;
      for (int d = 0; d < grank; d++) kept[d] = d < grank - nred ? gsizes[d] : 1;
    } else if (grank < 0 || !(cg_same_sizes(h, out, gsizes, grank) || (nred_of[open] && cg_same_sizes(h, out, kept, grank)))) {
      grank = h->value_rank(out);
      for (int d = 0; d < grank; d++) h->value_size(out, d, &gsizes[d]);
      nred_of[ngroups++] = 0;
    }
    memcpy(gfull[ngroups - 1], gsizes, sizeof *gsizes * (size_t)grank);
    group_of[i] = ngroups - 1;
    cg_val(&b, out)->group = ngroups - 1;
    if (cg_val(&b, out)->cl) gflag[ngroups - 1] |= GROUP_CL;
    if (red || op->kind == CUDA_OP_FILL) /* their code reads the logical linear index */
      gflag[ngroups - 1] |= GROUP_UNPERMUTED;
  }
  for (int i = 0; i < nn && !b.err; i++) {
    const alloy_node *n = h->graph_node(g, i);
    const alloy_value *in[64];
    const cuda_op *nop = cuda_op_find(h->node_op_name(n));
    int nin = nop && nop->kind == CUDA_OP_NOP ? 0 : cg_tensor_operands(h, n, in, 64);
    if (nin > 64) nin = 64; /* refused at claim */
    for (int j = 0; j < nin; j++) {
      vinfo *vi = cg_val(&b, in[j]);
      if (vi->group >= 0 && vi->group != group_of[i]) vi->stored = true;
    }
  }
  for (int j = 0; j < no; j++) cg_val(&b, h->graph_output(g, j))->stored = true;
  for (int i = 0; i < nn && !b.err; i++) {
    const alloy_node *n = h->graph_node(g, i);
    if (h->node_num_outputs(n) > 0) cg_val(&b, h->node_output(n, 0))->group = -1; /* set again as each is emitted */
  }

  /* Pass 2: emit. */
  kernel k;
  int open = -1;
  for (int at = 0; at < nn && !b.err; at++) {
    const int i = ord[at];
    const alloy_node *n = h->graph_node(g, i);
    const cuda_op *op = cuda_op_find(h->node_op_name(n));
    if (op->kind == CUDA_OP_NOP) continue;
    const alloy_value *out = h->node_output(n, 0);
    if (cg_val(&b, out)->into_pool || cg_val(&b, out)->into_cat) continue;
    if (group_of[i] != open && group_of[i] != -2 && open >= 0) cg_kernel_finish(&b, &k), open = -1;
    if (op->kind == CUDA_OP_VIEW) {
      const alloy_value *in[1];
      if (cg_tensor_operands(h, n, in, 1) != 1 || cg_val(&b, in[0])->tensor < 0) {
        cg_fail(&b, n, "its input is not in memory");
        break;
      }
      cuda_tensor src = b.tensors[cg_val(&b, in[0])->tensor], view;
      vinfo *vo = cg_val(&b, out);
      if (!view_of(&b, n, &src, out, &view)) {
        /* a reshape of a layout no view expresses: copy, then view */
        int base = cg_add_base(&b, BASE_TEMP, -1, (uint64_t)cg_numel_of(src.sizes, src.rank) * alloy_dtype_size(src.dtype));
        cuda_tensor dense = src;
        dense.base = base, dense.offset = 0;
        int64_t s = 1;
        for (int d = src.rank - 1; d >= 0; d--) dense.strides[d] = s, s *= src.sizes[d];
        cg_emit_copy(&b, &src, &dense);
        if (!view_of(&b, n, &dense, out, &view)) {
          cg_fail(&b, n, "no view of the copied input");
          break;
        }
      }
      if (!cg_grow((void **)&b.tensors, &b.cap_tensors, b.ntensors + 1, sizeof *b.tensors)) break;
      b.tensors[b.ntensors] = view;
      vo->tensor = b.ntensors++;
      continue;
    }
    short_name(h, n, b.what, sizeof b.what);
    if (op->emit && group_of[i] < 0) { /* a step of its own (cuda_codegen_rows.c and the like) */
      op->emit(&b, n, op);
      continue;
    }
    if (group_of[i] != open) {
      open = group_of[i];
      int rank = h->value_rank(out); /* a row group's kept and full shapes have the same */
      cg_kernel_begin(&k, gfull[open], rank);
      k.narrow = true;
      if (gflag[open] == GROUP_CL && rank == 4) kernel_walk_channels_last(&k); /* memory order */
      if (nred_of[open]) cg_row_begin(&k, gfull[open], rank, nred_of[open]);
    }
    if (k.row_group) { /* a row group: a loop over the row, or once a row */
      if (op->kind == CUDA_OP_REDUCE) label_node(h, &k, n);
      else if (cg_same_sizes(h, out, k.full, k.rank)) cg_row_loop(&k);
      else cg_row_close(&k);
    }
    if (op->kind == CUDA_OP_REDUCE) {
      cg_row_reduce(&b, &k, open, n, op);
    } else if (!op->fuse) {
      label_node(h, &k, n);
      emit_node(&b, &k, open, n, op);
    } else {
      label_node(h, &k, n);
      int v = op->fuse(&b, &k, open, n);
      if (v < 0) break;
      vinfo *vf = cg_val(&b, out);
      vf->group = open;
      vf->var = v;
      vf->phase = k.phase, vf->row_scope = k.row_group && !k.in_loop;
    }
    plan->nfused_nodes++;
    vinfo *vo = cg_val(&b, out);
    if (vo->stored && !b.err) {
      int t = cg_materialize(&b, out);
      if (t < 0) break;
      cg_kernel_store(&k, &b.tensors[t], vo->var);
    }
  }
  if (open >= 0 && !b.err) cg_kernel_finish(&b, &k);

  /* Outputs not written by a group: copies from where they are. */
  for (int j = 0; j < no && !b.err; j++) {
    const alloy_value *v = h->graph_output(g, j);
    vinfo *vi = cg_val(&b, v);
    if (vi->tensor >= 0 && b.plan->bases[b.tensors[vi->tensor].base].kind == BASE_OUTPUT &&
        b.plan->bases[b.tensors[vi->tensor].base].index == j)
      continue;
    if (vi->tensor < 0) {
      cg_fail(&b, NULL, "output %d is not computed", j);
      break;
    }
    int base = cg_add_base(&b, BASE_OUTPUT, j, 0);
    cuda_tensor src = b.tensors[vi->tensor], dst = src;
    dst.base = base, dst.offset = 0;
    int64_t s = 1;
    for (int d = src.rank - 1; d >= 0; d--) dst.strides[d] = s, s *= src.sizes[d];
    const alloy_tensor *as = layout ? &layout->outputs[j] : NULL;
    if (as && as->rank == dst.rank && as->strides)
      for (int d = 0; d < dst.rank; d++) dst.strides[d] = as->strides[d];
    cg_emit_copy(&b, &src, &dst);
  }
  free(group_of);
  free(gfull);
  free(b.vals);
  free(b.tensors);
  for (int i = 0; i < b.nseen; i++) free(b.seen[i].body);
  free(b.seen);
  if (b.src.oom && !b.err) cg_fail(&b, NULL, "out of memory");
  plan->source = b.src.s;
  plan->source_len = b.src.len;
  if (b.err) {
    cuda_plan_free(plan);
    return b.err;
  }
  return NULL;
}

void cg_builder_over(builder *b, const alloy_host_api *h, cuda_plan *p, cuda_plan *pre,
                     const cuda_plan_options *opts) {
  memset(b, 0, sizeof *b);
  memset(p, 0, sizeof *p);
  b->host = h, b->plan = p;
  builder_options(b, opts);
  b->src = (text){.s = pre->source, .len = pre->source_len, .cap = pre->source_len + 1};
  p->nkernels = pre->nkernels, p->prelude_len = pre->prelude_len;
  p->kernel_at = pre->kernel_at, b->cap_kernel_at = pre->nkernels;
  pre->source = NULL, pre->kernel_at = NULL;
  cuda_plan_free(pre);
}

alloy_error *cg_builder_finish(builder *b, cuda_plan *p) {
  p->source = b->src.s, p->source_len = b->src.len;
  for (int i = 0; i < b->nseen; i++) free(b->seen[i].body);
  free(b->seen);
  b->seen = NULL, b->nseen = 0;
  return b->err;
}

void cuda_plan_free(cuda_plan *plan) {
  for (int i = 0; i < plan->nlaunches; i++) free(plan->launches[i].bases);
  free(plan->launches);
  free(plan->bases);
  free(plan->source);
  free(plan->kernel_at);
  memset(plan, 0, sizeof *plan);
}
