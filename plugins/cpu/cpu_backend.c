/*
 * plugins/cpu/cpu_backend.c: the cpu backend, liballoy-cpu.so. An ABI 1.2
 * plugin whose one device is the host CPU: buffers are 64-byte-aligned
 * host memory that the host reads and writes in place
 * (ALLOY_DEVICE_CAP_HOST_VISIBLE), work runs on the calling thread (with
 * the thread pool's help) and is finished when an entry returns, so
 * queues and events are bookkeeping.
 *
 * A partition compiles (cpu_plan.c) to one LLVM module of loop nests,
 * optimized for the host CPU and loaded by LLJIT (cpu_jit.c), plus
 * OpenBLAS products (cpu_blas.c); execute runs the plan's steps in order,
 * splitting a step's rows over the pool (cpu_pool.c) when it is large
 * enough to pay for the threads' wake-up. A run whose inputs or outputs
 * come with other strides gets a plan of its own for that layout, kept
 * beside the first.
 *
 * The compile cache: executable_serialize writes the contiguous plan's
 * object code with the CPU it was made for; executable_deserialize plans
 * again and links that object (no LLVM pass or code generation) when the
 * CPU, the options and the plan's code are these, else refuses with
 * ALLOY_ERR_VERSION so that the runtime compiles.
 *
 * Threads (alloy/plugin.h): compile and release come one at a time per
 * backend; execute may come from several threads on distinct queues: an
 * executable's variants are read under its lock, its scratch arena is
 * taken with a trylock (a second concurrent run allocates its own), and a
 * busy pool runs the second caller's work on its own thread.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "plugins/cpu/cpu_blas.h"
#include "plugins/cpu/cpu_jit.h"
#include "plugins/cpu/cpu_plan.h"
#include "plugins/cpu/cpu_pool.h"

/* A step is split over the threads from this many elements touched: below
 * it the workers' wake-up (a few microseconds) costs more than it saves. */
#define PARALLEL_WORK 32768

/* The roofline of claims' costs: sustained bandwidth of one socket's
 * memory and float32 throughput per thread of sgemm (AVX2/AVX-512 class);
 * rough, as only the comparison with other backends matters. */
#define BYTES_PER_S 20e9
#define FLOPS_PER_S_PER_THREAD 50e9

static const char cpu_plugin_version[] = "0.1.0";

typedef struct obj {
  struct obj *prev, *next;
  int kind;
} obj;

enum { OBJ_EXECUTABLE = 1, OBJ_BUFFER, OBJ_QUEUE, OBJ_EVENT, OBJ_HOST_BUFFER };

struct alloy_backend {
  const alloy_host_api *host;
  cpu_jit *jit;
  cpu_blas blas;
  bool have_blas;
  char blas_why[160];
  cpu_pool *pool;
  int threads, opt_level, vector_width;
  bool gemm_loop; /* option gemm=loop: products as emitted loops even with OpenBLAS */
  const char *dump_dir;
  char name[384], arch[256];
  uint64_t memory;
  /* partitions compiled by LLVM and loaded from the compile cache, for
   * the debug log (what the cache tests read) */
  unsigned long jit_compiles, cache_loads;
  obj objects; /* every live object, for backend_close */
  pthread_mutex_t objects_lock;
};

struct alloy_buffer {
  obj o;
  void *mem;
  uint64_t bytes;
  bool owned;
};

struct alloy_queue {
  obj o;
};

struct alloy_event {
  obj o;
};

/* A partition compiled for one layout of its inputs and outputs. */
typedef struct variant {
  int64_t *key; /* the strides of the inputs, then of the outputs; NULL: contiguous */
  int nkey;
  cpu_plan plan;
  cpu_module *module;
  void **fns; /* plan.nkernels */
  /* the contiguous variant: its object code and the tag of its function
   * names, for executable_serialize */
  void *object;
  size_t object_len;
  uint64_t tag;
  struct variant *next;
} variant;

struct alloy_executable {
  obj o;
  const alloy_graph *g; /* the host's, alive until the executable is released */
  pthread_mutex_t lock; /* the variant list past its head; the scratch arena */
  variant *variants;
  void *scratch;
  uint64_t scratch_bytes;
};

/* ---- objects ------------------------------------------------------------------ */

static void track(alloy_backend *be, obj *o, int kind) {
  o->kind = kind;
  pthread_mutex_lock(&be->objects_lock);
  o->next = be->objects.next, o->prev = &be->objects;
  be->objects.next->prev = o;
  be->objects.next = o;
  pthread_mutex_unlock(&be->objects_lock);
}

static void untrack(alloy_backend *be, obj *o) {
  pthread_mutex_lock(&be->objects_lock);
  o->prev->next = o->next, o->next->prev = o->prev;
  pthread_mutex_unlock(&be->objects_lock);
}

static alloy_error *fail(alloy_backend *be, alloy_error_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static alloy_error *fail(alloy_backend *be, alloy_error_code code, const char *fmt, ...) {
  char msg[1024];
  int k = snprintf(msg, sizeof msg, "cpu: ");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg + k, sizeof msg - (size_t)k, fmt, ap);
  va_end(ap);
  return be->host->error_new(code, msg);
}

/* ---- open and close ----------------------------------------------------------- */

/* The vector features worth naming in `alloy backends`, in LLVM's words. */
static const char *const reported_features[] = {"sse4.2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw",
                                                "avx512vl", "avx512bf16", "avx512fp16", "amx-bf16", "neon", "sve"};

static void describe_cpu(alloy_backend *be) {
  snprintf(be->name, sizeof be->name, "%s", cpu_jit_cpu_name(be->jit));
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[512];
  while (f && fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) != 0) continue;
    const char *v = strchr(line, ':');
    if (!v) break;
    v++;
    while (*v == ' ') v++;
    size_t len = strcspn(v, "\n");
    snprintf(be->name, sizeof be->name, "%.*s", (int)len, v);
    break;
  }
  if (f) fclose(f);
  size_t at = (size_t)snprintf(be->arch, sizeof be->arch, "%s", cpu_jit_cpu_name(be->jit));
  const char *feats = cpu_jit_cpu_features(be->jit);
  for (size_t i = 0; i < sizeof reported_features / sizeof *reported_features && at < sizeof be->arch; i++) {
    char want[32];
    snprintf(want, sizeof want, "+%s", reported_features[i]);
    for (const char *p = feats; (p = strstr(p, want)); p += strlen(want)) {
      char end = p[strlen(want)];
      if ((p == feats || p[-1] == ',') && (end == ',' || end == 0)) {
        at += (size_t)snprintf(be->arch + at, sizeof be->arch - at, " %s", reported_features[i]);
        break;
      }
    }
  }
  if (at < sizeof be->arch)
    snprintf(be->arch + at, sizeof be->arch - at, be->have_blas ? ", OpenBLAS %s" : ", no OpenBLAS",
             be->have_blas ? cpu_blas_core(&be->blas) : "");
  /* `alloy backends` shows the device's name: the features go there too */
  size_t nl = strlen(be->name);
  snprintf(be->name + nl, sizeof be->name - nl, " [%s]", be->arch);
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  be->memory = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}

static alloy_error *cpu_backend_open(const alloy_host_api *host, alloy_backend **out) {
  alloy_backend *be = calloc(1, sizeof *be);
  if (!be) return host->error_new(ALLOY_ERR_OUT_OF_MEMORY, "cpu: out of memory");
  be->host = host;
  be->objects.next = be->objects.prev = &be->objects;
  pthread_mutex_init(&be->objects_lock, NULL);
  char why[512];
  if (cpu_jit_open(&be->jit, why, sizeof why)) {
    pthread_mutex_destroy(&be->objects_lock);
    free(be);
    char msg[600];
    snprintf(msg, sizeof msg, "cpu: %s", why);
    return host->error_new(ALLOY_ERR_UNAVAILABLE, msg);
  }
  be->have_blas = !cpu_blas_open(&be->blas, cpu_jit_cpu_features(be->jit), be->blas_why, sizeof be->blas_why);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  be->threads = n > 0 ? (int)(n < 64 ? n : 64) : 1;
  be->opt_level = 3;
  be->dump_dir = getenv("ALLOY_CPU_DUMP_IR");
  be->pool = cpu_pool_open(be->threads);
  describe_cpu(be);
  *out = be;
  return NULL;
}

static void cpu_executable_release(alloy_backend *be, alloy_executable *exe);

static void cpu_backend_close(alloy_backend *be) {
  while (be->objects.next != &be->objects) {
    obj *o = be->objects.next;
    untrack(be, o);
    if (o->kind == OBJ_EXECUTABLE) {
      track(be, o, OBJ_EXECUTABLE); /* release untracks it */
      cpu_executable_release(be, (alloy_executable *)o);
    } else if (o->kind == OBJ_BUFFER) {
      alloy_buffer *b = (alloy_buffer *)o;
      if (b->owned) free(b->mem);
      free(b);
    } else {
      free(o);
    }
  }
  cpu_pool_close(be->pool);
  if (be->have_blas) cpu_blas_close(&be->blas);
  cpu_jit_close(be->jit);
  pthread_mutex_destroy(&be->objects_lock);
  free(be);
}

static int cpu_device_count(alloy_backend *be) {
  (void)be;
  return 1;
}

static alloy_error *cpu_device_info(alloy_backend *be, int device, alloy_device_info *info) {
  if (device != 0) return fail(be, ALLOY_ERR_INVALID_ARGUMENT, "device %d does not exist: one device, 0", device);
  alloy_device_info full = {.struct_size = info->struct_size};
  full.name = be->name;
  full.kind = ALLOY_DEVICE_KIND_CPU;
  full.memory_bytes = be->memory;
  long avail = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  full.free_memory_bytes = avail > 0 && page > 0 ? (uint64_t)avail * (uint64_t)page : 0;
  full.arch = be->arch;
  full.capabilities = ALLOY_DEVICE_CAP_HOST_VISIBLE | ALLOY_DEVICE_CAP_IMPORT;
  full.launch_s = 2e-6;          /* a run's bookkeeping: pointers, the steps' calls */
  full.host_bytes_per_s = 50e9; /* host memory: a copy is a memcpy */
  size_t n = info->struct_size < sizeof full ? info->struct_size : sizeof full;
  memcpy(info, &full, n);
  return NULL;
}

/* ---- claims --------------------------------------------------------------------- */

static double bytes_of(const alloy_host_api *h, const alloy_value *v, double *numel) {
  *numel = 1;
  if (h->value_kind(v) != 0) return 0;
  for (int d = 0; d < h->value_rank(v); d++) {
    int64_t s = 1;
    if (!h->value_size(v, d, &s)) {
      int64_t lo = 1, hi = 1;
      h->value_size_range(v, d, &lo, &hi);
      s = hi > 0 && hi < (int64_t)1 << 20 ? hi : 1024;
    }
    *numel *= (double)s;
  }
  return *numel * (double)alloy_dtype_size(h->value_dtype(v));
}

/* A node's cost on the roofline: the bytes it reads and writes at memory
 * bandwidth, a product's 2mnk flops at the threads' peak (a view moves
 * nothing). The reference backend prices a node at a nanosecond per
 * output element, whatever its work: a product's k is not counted there,
 * so the roofline is capped at half of that price, which keeps every node
 * this backend runs cheaper here than on ref (it is: ref's products are
 * its own one-threaded tiles). */
static double node_cost(alloy_backend *be, const alloy_node *n, const cpu_op *op) {
  const alloy_host_api *h = be->host;
  double bytes = 0, out_numel = 0, numel;
  for (int k = 0; k < h->node_num_outputs(n); k++) {
    bytes += bytes_of(h, h->node_output(n, k), &numel);
    if (k == 0) out_numel = numel;
  }
  if (op->kind == CPU_OP_VIEW || op->kind == CPU_OP_NOP) return 1e-9;
  const alloy_value *in[CPU_MAX_OPERANDS];
  int nin = cp_tensor_operands(h, n, in, CPU_MAX_OPERANDS);
  for (int j = 0; j < nin && j < CPU_MAX_OPERANDS; j++) bytes += bytes_of(h, in[j], &numel);
  double cost = bytes / BYTES_PER_S;
  if (op->kind == CPU_OP_ROWS && op->rows == ROWS_GEMM && nin >= 2) {
    int64_t kdim = 1;
    const alloy_value *a = in[nin - 2];
    h->value_size(a, h->value_rank(a) - 1, &kdim);
    cost += 2.0 * out_numel * (double)kdim / (FLOPS_PER_S_PER_THREAD * be->threads);
  }
  double ref_price = out_numel * 1e-9;
  if (cost > 0.5 * ref_price) cost = 0.5 * ref_price;
  return cost > 1e-9 ? cost : 1e-9;
}

static alloy_error *cpu_claim(alloy_backend *be, const alloy_graph *g, alloy_claims *claims) {
  const alloy_host_api *h = be->host;
  bool reasons = ALLOY_HAS_FIELD(h, alloy_host_api, claims_reject) && h->claims_reject;
  if (!ALLOY_HAS_FIELD(h, alloy_host_api, node_index) || !h->node_index || !h->value_num_users)
    return NULL; /* the planner needs a 1.2 host's graph readers: claim nothing */
  for (int i = 0; i < h->graph_num_nodes(g); i++) {
    const alloy_node *n = h->graph_node(g, i);
    const char *why = cpu_node_unsupported(h, n);
    if (why) {
      if (reasons) h->claims_reject(claims, i, why);
      continue;
    }
    h->claims_add(claims, i, node_cost(be, n, cpu_op_find(h->node_op_name(n))));
  }
  return NULL;
}

/* ---- compile -------------------------------------------------------------------- */

static void variant_free(alloy_backend *be, variant *v) {
  cpu_module_free(be->jit, v->module);
  free(v->object);
  free(v->fns);
  free(v->key);
  cpu_plan_free(&v->plan);
  free(v);
}

/* At ALLOY_LOG=0 (debug), the plan's steps: what each runs, its rows. */
static void log_plan(alloy_backend *be, const cpu_plan *p) {
  const alloy_host_api *h = be->host;
  if (!ALLOY_HAS_FIELD(h, alloy_host_api, log_level) || !h->log_level || h->log_level() > ALLOY_LOG_DEBUG) return;
  char line[256];
  snprintf(line, sizeof line, "plan: %d steps, %d kernels, %d fused nodes, %" PRIu64 " bytes of scratch", p->nsteps,
           p->nkernels, p->nfused_nodes, p->scratch_bytes);
  h->log(ALLOY_LOG_DEBUG, "cpu", line);
  for (int i = 0; i < p->nsteps; i++) {
    const cpu_step *s = &p->steps[i];
    if (s->kind == STEP_GEMM)
      snprintf(line, sizeof line, "  step %d: sgemm %" PRId64 " x %" PRId64 " x %" PRId64 " batch %" PRId64 "%s%s", i,
               s->gemm.m, s->gemm.n, s->gemm.k, s->gemm.batch, s->gemm.trans_a ? " A^T" : "", s->gemm.trans_b ? " B^T" : "");
    else
      snprintf(line, sizeof line, "  step %d: k%d %s, %" PRId64 " rows of %" PRId64, i, s->kernel, s->what, s->rows,
               s->row_work);
    h->log(ALLOY_LOG_DEBUG, "cpu", line);
  }
}

static bool debug_on(alloy_backend *be) {
  const alloy_host_api *h = be->host;
  return ALLOY_HAS_FIELD(h, alloy_host_api, log_level) && h->log_level && h->log_level() <= ALLOY_LOG_DEBUG;
}

static void debug(alloy_backend *be, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void debug(alloy_backend *be, const char *fmt, ...) {
  if (!debug_on(be)) return;
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  be->host->log(ALLOY_LOG_DEBUG, "cpu", line);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A new variant of exe's partition planned for layout (NULL: contiguous),
 * or plan taken over (already planned for no layout); its code not yet
 * there. */
static alloy_error *variant_plan(alloy_backend *be, const alloy_graph *g, const cpu_layout *layout, cpu_plan *plan,
                                 variant **out) {
  variant *v = calloc(1, sizeof *v);
  if (!v) {
    if (plan) cpu_plan_free(plan);
    return fail(be, ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  }
  if (plan) {
    v->plan = *plan;
  } else {
    cpu_plan_options po = {.blas = be->have_blas && !be->gemm_loop};
    alloy_error *e = cpu_plan_build(be->host, g, layout, &po, &v->plan);
    if (e) {
      free(v);
      return e;
    }
  }
  for (int i = 0; i < v->plan.nsteps; i++)
    if (v->plan.steps[i].kind == STEP_GEMM && !cpu_blas_fits(&v->plan.steps[i].gemm)) {
      variant_free(be, v);
      return fail(be, ALLOY_ERR_DECLINED, "a product past sgemm's 32-bit sizes");
    }
  v->fns = calloc((size_t)v->plan.nkernels + 1, sizeof *v->fns);
  if (!v->fns) {
    variant_free(be, v);
    return fail(be, ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  }
  *out = v;
  return NULL;
}

/* Plans and JIT-compiles exe's partition for layout (NULL: contiguous; that
 * variant keeps its object code for the compile cache). */
static alloy_error *variant_build(alloy_backend *be, alloy_executable *exe, const cpu_layout *layout, variant **out) {
  variant *v;
  alloy_error *e = variant_plan(be, exe->g, layout, NULL, &v);
  if (e) return e;
  log_plan(be, &v->plan);
  char why[1024];
  cpu_jit_options jo = {.opt_level = be->opt_level, .vector_width = be->vector_width, .dump_dir = be->dump_dir};
  double t0 = now_ms();
  bool keep = !layout;
  if (cpu_jit_compile(be->jit, v->plan.ir, v->plan.ir_len, v->plan.nkernels, &jo, v->fns, &v->module,
                      keep ? &v->object : NULL, keep ? &v->object_len : NULL, keep ? &v->tag : NULL, why,
                      sizeof why)) {
    variant_free(be, v);
    return fail(be, ALLOY_ERR_INTERNAL, "%s", why);
  }
  be->jit_compiles++;
  debug(be, "jit compile %lu: %d kernels, %zu bytes of IR, LLVM O%d and code generation in %.1f ms", be->jit_compiles,
        v->plan.nkernels, v->plan.ir_len, be->opt_level, now_ms() - t0);
  *out = v;
  return NULL;
}

static alloy_error *cpu_compile(alloy_backend *be, const alloy_graph *partition, const alloy_compile_options *options,
                                alloy_executable **out) {
  (void)options; /* the options came through backend_set_option already */
  alloy_executable *exe = calloc(1, sizeof *exe);
  if (!exe) return fail(be, ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  exe->g = partition;
  pthread_mutex_init(&exe->lock, NULL);
  alloy_error *e = variant_build(be, exe, NULL, &exe->variants);
  if (e) {
    pthread_mutex_destroy(&exe->lock);
    free(exe);
    return e;
  }
  track(be, &exe->o, OBJ_EXECUTABLE);
  *out = exe;
  return NULL;
}

static void cpu_executable_release(alloy_backend *be, alloy_executable *exe) {
  if (!exe) return;
  untrack(be, &exe->o);
  for (variant *v = exe->variants, *next; v; v = next) {
    next = v->next;
    variant_free(be, v);
  }
  free(exe->scratch);
  pthread_mutex_destroy(&exe->lock);
  free(exe);
}

/* ---- the compile cache ------------------------------------------------------------- */

/* A serialized executable: the magic, the FNV-1a of its plan's module
 * text, the tag of its function names, its kernels' count, the opt level
 * and vector width it was compiled at, the lengths of the CPU's name, of
 * its feature string and of the object, then those three, little-endian
 * as the host is (a cache never leaves this machine's kind). Deserialize
 * plans the partition again (milliseconds: the plan is a function of the
 * graph and the options, which the cache's key holds) and links the
 * object into the JIT in place of LLVM's passes and code generation, when
 * the CPU is this one (its name and every feature), the options are
 * these and the plan's text still hashes to what was stored; else
 * ALLOY_ERR_VERSION, and the runtime compiles. */
#define CPU_CACHE_MAGIC "alloycp1"
enum { CACHE_HEAD = 8 + 8 + 8 + 4 * 6 + 8 };

typedef struct cache_head {
  uint64_t hash, tag;
  uint32_t nkernels, opt_level, vector_width, cpu_len, features_len, reserved;
  uint64_t object_len;
} cache_head;

/* FNV-1a of a plan's module text: a cached object belongs to the plan
 * whose text has its hash. */
static uint64_t text_hash(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

static void put_head(unsigned char *b, const cache_head *c) {
  memcpy(b, CPU_CACHE_MAGIC, 8);
  memcpy(b + 8, &c->hash, 8);
  memcpy(b + 16, &c->tag, 8);
  memcpy(b + 24, &c->nkernels, 4);
  memcpy(b + 28, &c->opt_level, 4);
  memcpy(b + 32, &c->vector_width, 4);
  memcpy(b + 36, &c->cpu_len, 4);
  memcpy(b + 40, &c->features_len, 4);
  memcpy(b + 44, &c->reserved, 4);
  memcpy(b + 48, &c->object_len, 8);
}

static bool get_head(const unsigned char *b, uint64_t size, cache_head *c) {
  if (size < CACHE_HEAD || memcmp(b, CPU_CACHE_MAGIC, 8) != 0) return false;
  memcpy(&c->hash, b + 8, 8);
  memcpy(&c->tag, b + 16, 8);
  memcpy(&c->nkernels, b + 24, 4);
  memcpy(&c->opt_level, b + 28, 4);
  memcpy(&c->vector_width, b + 32, 4);
  memcpy(&c->cpu_len, b + 36, 4);
  memcpy(&c->features_len, b + 40, 4);
  memcpy(&c->reserved, b + 44, 4);
  memcpy(&c->object_len, b + 48, 8);
  uint64_t rest = size - CACHE_HEAD;
  return c->object_len <= rest && (uint64_t)c->cpu_len + c->features_len == rest - c->object_len;
}

static alloy_error *cpu_executable_serialize(alloy_backend *be, alloy_executable *exe, void **bytes, uint64_t *size,
                                             alloy_compat_info *info) {
  const variant *v = exe->variants;
  if (!v || !v->object) return fail(be, ALLOY_ERR_UNSUPPORTED, "the executable keeps no object code to serialize");
  const char *cpu = cpu_jit_cpu_name(be->jit), *features = cpu_jit_cpu_features(be->jit);
  cache_head c = {.hash = text_hash(v->plan.ir, v->plan.ir_len),
                  .tag = v->tag,
                  .nkernels = (uint32_t)v->plan.nkernels,
                  .opt_level = (uint32_t)be->opt_level,
                  .vector_width = (uint32_t)be->vector_width,
                  .cpu_len = (uint32_t)strlen(cpu),
                  .features_len = (uint32_t)strlen(features),
                  .object_len = v->object_len};
  uint64_t n = CACHE_HEAD + (uint64_t)c.cpu_len + c.features_len + c.object_len;
  unsigned char *b = be->host->alloc((size_t)n);
  if (!b) return fail(be, ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  put_head(b, &c);
  memcpy(b + CACHE_HEAD, cpu, c.cpu_len);
  memcpy(b + CACHE_HEAD + c.cpu_len, features, c.features_len);
  memcpy(b + CACHE_HEAD + c.cpu_len + c.features_len, v->object, v->object_len);
  *bytes = b;
  *size = n;
  if (info && info->struct_size >= ALLOY_COMPAT_INFO_STRUCT_SIZE) {
    info->plugin_version = cpu_plugin_version;
    info->device_model = cpu;
  }
  return NULL;
}

/* The entry of the comma-separated list (len bytes) for feature name
 * (without its sign), or NULL; *n its length. */
static const char *list_find(const char *list, size_t len, const char *name, size_t name_len, size_t *n) {
  for (size_t at = 0; at < len;) {
    const char *p = list + at, *q = memchr(p, ',', len - at);
    size_t k = q ? (size_t)(q - p) : len - at;
    if (k == name_len + 1 && !memcmp(p + 1, name, name_len)) return *n = k, p;
    at += k + 1;
  }
  return NULL;
}

/* One feature on which the lists a and b ("+avx2,-amx-tile,...") differ,
 * as each says it ("-avx512bf16", "+avx512bf16"; "no avx512bf16" where one
 * does not name it); false when they hold the same entries. */
static bool feature_diff(const char *a, size_t alen, const char *b, size_t blen, char *in_a, char *in_b,
                         size_t cap) {
  for (int pass = 0; pass < 2; pass++) {
    const char *x = pass ? b : a, *y = pass ? a : b;
    size_t xlen = pass ? blen : alen, ylen = pass ? alen : blen;
    for (size_t at = 0; at < xlen;) {
      const char *p = x + at, *q = memchr(p, ',', xlen - at);
      size_t k = q ? (size_t)(q - p) : xlen - at, m = 0;
      const char *other = k > 1 ? list_find(y, ylen, p + 1, k - 1, &m) : NULL;
      if (k > 1 && !(other && m == k && !memcmp(other, p, k))) {
        char *mine = pass ? in_b : in_a, *theirs = pass ? in_a : in_b;
        snprintf(mine, cap, "%.*s", (int)(k < 48 ? k : 48), p);
        if (other) snprintf(theirs, cap, "%.*s", (int)(m < 48 ? m : 48), other);
        else snprintf(theirs, cap, "no %.*s", (int)(k - 1 < 48 ? k - 1 : 48), p + 1);
        return true;
      }
      at += k + 1;
    }
  }
  return false;
}

/* A refusal of deserialize, said at ALLOY_LOG=0 (the runtime compiles
 * instead, without a word). */
static alloy_error *refuse(alloy_backend *be, alloy_error *e) {
  const char *m = be->host->error_message(e);
  debug(be, "compile cache: %s", strncmp(m, "cpu: ", 5) ? m : m + 5);
  return e;
}

static alloy_error *cpu_executable_deserialize(alloy_backend *be, const alloy_graph *partition, const void *bytes,
                                               uint64_t size, alloy_executable **out) {
  const unsigned char *b = bytes;
  cache_head c;
  if (!b || !get_head(b, size, &c))
    return refuse(be, fail(be, ALLOY_ERR_VERSION, "not a cached executable of this backend"));
  double t0 = now_ms();
  const char *cpu = cpu_jit_cpu_name(be->jit), *features = cpu_jit_cpu_features(be->jit);
  const char *their_cpu = (const char *)b + CACHE_HEAD, *their_features = their_cpu + c.cpu_len;
  if (c.cpu_len != strlen(cpu) || memcmp(their_cpu, cpu, c.cpu_len) != 0 || c.features_len != strlen(features) ||
      memcmp(their_features, features, c.features_len) != 0) {
    /* name one feature on which they differ */
    char theirs[64] = "", mine[64] = "";
    bool diff =
        feature_diff(their_features, c.features_len, features, strlen(features), theirs, mine, sizeof theirs);
    return refuse(be, fail(be, ALLOY_ERR_VERSION,
                           "a cached executable compiled for another CPU (%.*s%s%s), not this one (%s%s%s): it must "
                           "be compiled again",
                           (int)(c.cpu_len < 64 ? c.cpu_len : 64), their_cpu, diff ? ", " : "", theirs, cpu,
                           diff ? ", " : "", mine));
  }
  if (c.opt_level != (uint32_t)be->opt_level || c.vector_width != (uint32_t)be->vector_width)
    return refuse(be, fail(be, ALLOY_ERR_VERSION,
                           "a cached executable compiled at opt_level %u, vector_width %u (these are %d, %d)",
                           c.opt_level, c.vector_width, be->opt_level, be->vector_width));
  alloy_executable *exe = calloc(1, sizeof *exe);
  if (!exe) return fail(be, ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  exe->g = partition;
  pthread_mutex_init(&exe->lock, NULL);
  variant *v;
  alloy_error *e = variant_plan(be, partition, NULL, NULL, &v);
  if (e) {
    pthread_mutex_destroy(&exe->lock);
    free(exe);
    return e;
  }
  exe->variants = v;
  const unsigned char *object = b + CACHE_HEAD + c.cpu_len + c.features_len;
  char why[1024];
  if (text_hash(v->plan.ir, v->plan.ir_len) != c.hash || (uint32_t)v->plan.nkernels != c.nkernels) {
    e = fail(be, ALLOY_ERR_VERSION, "a cached executable of other kernels (the partition plans to other code now)");
  } else if (!(v->object = malloc(c.object_len ? (size_t)c.object_len : 1))) {
    e = fail(be, ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  } else {
    memcpy(v->object, object, (size_t)c.object_len);
    v->object_len = (size_t)c.object_len;
    v->tag = c.tag;
    if (cpu_jit_load(be->jit, object, (size_t)c.object_len, c.tag, v->plan.nkernels, v->fns, &v->module, why,
                     sizeof why))
      e = fail(be, ALLOY_ERR_VERSION, "the cached object code does not link: %s", why);
  }
  if (e) {
    variant_free(be, v);
    pthread_mutex_destroy(&exe->lock);
    free(exe);
    return refuse(be, e);
  }
  track(be, &exe->o, OBJ_EXECUTABLE);
  be->cache_loads++;
  debug(be,
        "cache load %lu: %d kernels, %zu bytes of object code linked in %.1f ms (no LLVM passes or code generation)",
        be->cache_loads, v->plan.nkernels, v->object_len, now_ms() - t0);
  log_plan(be, &v->plan);
  *out = exe;
  return NULL;
}

/* ---- execute --------------------------------------------------------------------- */

static bool contiguous(const alloy_tensor *t) {
  int64_t s = 1;
  for (int d = 0; d < t->rank; d++)
    if (t->sizes[d] == 0) return true; /* no element: any strides will do */
  for (int d = t->rank - 1; d >= 0; d--) {
    if (t->sizes[d] != 1 && t->strides[d] != s) return false;
    s *= t->sizes[d];
  }
  return true;
}

/* The variant of exe for the layout of args: the contiguous one, one made
 * before for the same strides, or a new one. */
static alloy_error *variant_for(alloy_backend *be, alloy_executable *exe, const alloy_execute_args *args,
                                variant **out) {
  int nkey = 0;
  bool dense = true;
  for (int i = 0; i < args->num_inputs; i++) nkey += args->inputs[i].rank, dense &= contiguous(&args->inputs[i]);
  for (int i = 0; i < args->num_outputs; i++) nkey += args->outputs[i].rank, dense &= contiguous(&args->outputs[i]);
  *out = exe->variants;
  if (dense) return NULL;
  int64_t *key = malloc(sizeof *key * (size_t)(nkey + 1));
  if (!key) return fail(be, ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  int k = 0;
  for (int i = 0; i < args->num_inputs; i++)
    for (int d = 0; d < args->inputs[i].rank; d++) key[k++] = args->inputs[i].strides[d];
  for (int i = 0; i < args->num_outputs; i++)
    for (int d = 0; d < args->outputs[i].rank; d++) key[k++] = args->outputs[i].strides[d];
  pthread_mutex_lock(&exe->lock);
  variant *v = exe->variants->next;
  while (v && !(v->nkey == nkey && !memcmp(v->key, key, sizeof *key * (size_t)nkey))) v = v->next;
  alloy_error *e = NULL;
  if (!v) {
    cpu_layout layout = {args->inputs, args->outputs};
    e = variant_build(be, exe, &layout, &v);
    if (!e) {
      v->key = key, key = NULL;
      v->nkey = nkey;
      v->next = exe->variants->next;
      exe->variants->next = v;
    }
  }
  pthread_mutex_unlock(&exe->lock);
  free(key);
  *out = v;
  return e;
}

static alloy_error *cpu_buffer_allocate(alloy_backend *be, int device, uint64_t bytes, alloy_buffer **out);

/* Output k given without a buffer (an empty one): a buffer of its sizes,
 * contiguous, which the host owns from here (alloy/plugin.h). */
static alloy_error *output_allocate(alloy_backend *be, alloy_executable *exe, alloy_tensor *t, int k) {
  const alloy_host_api *h = be->host;
  const alloy_value *v = h->graph_output(exe->g, k);
  int64_t numel = 1;
  for (int d = 0; d < t->rank; d++) {
    int64_t s = 0;
    if (!h->value_size(v, d, &s)) return fail(be, ALLOY_ERR_UNSUPPORTED, "output %d has no known size", k);
    t->sizes[d] = s;
    numel *= s;
  }
  int64_t stride = 1;
  for (int d = t->rank - 1; d >= 0; d--) t->strides[d] = stride, stride *= t->sizes[d] > 1 ? t->sizes[d] : 1;
  t->offset = 0;
  return cpu_buffer_allocate(be, 0, (uint64_t)numel * alloy_dtype_size(t->dtype), &t->buffer);
}

typedef void (*kernel_fn)(char **p, int64_t begin, int64_t end);

typedef struct kernel_job {
  kernel_fn fn;
  char **params;
} kernel_job;

static void run_kernel(void *ctx, int64_t begin, int64_t end) {
  kernel_job *j = ctx;
  j->fn(j->params, begin, end);
}

typedef struct gemm_job {
  const cpu_blas *blas;
  const cpu_gemm_desc *g;
  const float *ops[GEMM_OPERANDS]; /* by GEMM_*: NULL where the step has none */
} gemm_job;

static void run_gemm(void *ctx, int64_t begin, int64_t end) {
  gemm_job *j = ctx;
  cpu_blas_rows(j->blas, j->g, j->ops, begin, end);
}

static void run_step(alloy_backend *be, const variant *v, const cpu_step *s, char **ptr) {
  int threads = cpu_pool_threads(be->pool);
  bool split = threads > 1 && s->rows > 1 && (double)s->rows * (double)s->row_work >= PARALLEL_WORK;
  int chunks = split ? threads : 1;
  if (s->kind == STEP_GEMM) {
    size_t es = sizeof(float);
    gemm_job j = {.blas = &be->blas, .g = &s->gemm};
    /* a product reads A, B and D; attention v and its mask too */
    int nops = s->gemm.attn.on ? GEMM_OPERANDS : GEMM_C;
    for (int k = 0; k < nops; k++)
      if (s->gbase[k] >= 0) j.ops[k] = (const float *)(ptr[s->gbase[k]] + s->goff[k] * (int64_t)es);
    cpu_pool_run(be->pool, s->rows, chunks, run_gemm, &j);
    return;
  }
  char *params[CPU_MAX_OPERANDS];
  for (int i = 0; i < s->nparams; i++) params[i] = ptr[s->params[i]];
  kernel_job j = {(kernel_fn)v->fns[s->kernel], params};
  cpu_pool_run(be->pool, s->rows, chunks, run_kernel, &j);
}

static alloy_error *cpu_execute(alloy_backend *be, alloy_executable *exe, const alloy_execute_args *args) {
  const alloy_host_api *h = be->host;
  variant *v;
  alloy_error *e = variant_for(be, exe, args, &v);
  if (e) return e;
  const cpu_plan *p = &v->plan;
  /* the scratch arena: the executable's own, or one of this run's when
   * another run holds it */
  char *scratch = NULL;
  bool own = false;
  if (p->scratch_bytes) {
    if (pthread_mutex_trylock(&exe->lock) == 0) {
      if (exe->scratch_bytes < p->scratch_bytes) {
        free(exe->scratch);
        exe->scratch = aligned_alloc(64, (p->scratch_bytes + 63) & ~(uint64_t)63);
        exe->scratch_bytes = exe->scratch ? p->scratch_bytes : 0;
      }
      scratch = exe->scratch;
      own = true;
    }
    if (!scratch) scratch = aligned_alloc(64, (p->scratch_bytes + 63) & ~(uint64_t)63);
    if (!scratch) {
      if (own) pthread_mutex_unlock(&exe->lock);
      return fail(be, ALLOY_ERR_OUT_OF_MEMORY, "no %" PRIu64 " bytes of scratch memory", p->scratch_bytes);
    }
  }
  char **ptr = calloc((size_t)p->nbases + 1, sizeof *ptr);
  if (!ptr) e = fail(be, ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; i < p->nbases && !e; i++) {
    const cpu_base *b = &p->bases[i];
    if (b->kind == BASE_TEMP) { /* no arena: every temporary is empty, never read */
      ptr[i] = scratch ? scratch + b->offset : NULL;
      continue;
    }
    alloy_tensor *t = b->kind == BASE_INPUT ? (alloy_tensor *)&args->inputs[b->index] : &args->outputs[b->index];
    if (!t->buffer && b->kind == BASE_OUTPUT) e = output_allocate(be, exe, t, b->index);
    ptr[i] = t->buffer ? (char *)t->buffer->mem + t->offset : NULL;
  }
  bool trace = !e && ALLOY_HAS_FIELD(h, alloy_host_api, trace_range) && h->trace_enabled && h->trace_enabled();
  for (int i = 0; i < p->nsteps && !e; i++) {
    uint64_t t0 = trace ? h->clock_ns() : 0;
    run_step(be, v, &p->steps[i], ptr);
    if (trace) h->trace_range("cpu", "cpu", p->steps[i].what, t0, h->clock_ns());
  }
  free(ptr);
  if (own) pthread_mutex_unlock(&exe->lock);
  else free(scratch);
  if (!e && args->queue && args->done) *args->done = NULL;
  return e;
}

/* ---- memory ---------------------------------------------------------------------- */

static alloy_error *cpu_buffer_allocate(alloy_backend *be, int device, uint64_t bytes, alloy_buffer **out) {
  if (device != 0) return fail(be, ALLOY_ERR_INVALID_ARGUMENT, "device %d does not exist: one device, 0", device);
  if (bytes > SIZE_MAX - 128) return fail(be, ALLOY_ERR_OUT_OF_MEMORY, "cannot allocate %" PRIu64 " bytes", bytes);
  alloy_buffer *b = calloc(1, sizeof *b);
  /* rounded up to whole vectors: a loop may read its last vector whole */
  size_t rounded = ((size_t)bytes + 63) & ~(size_t)63;
  void *mem = b ? aligned_alloc(64, rounded ? rounded : 64) : NULL;
  if (!mem) {
    free(b);
    return fail(be, ALLOY_ERR_OUT_OF_MEMORY, "cannot allocate %" PRIu64 " bytes", bytes);
  }
  b->mem = mem, b->bytes = bytes, b->owned = true;
  track(be, &b->o, OBJ_BUFFER);
  *out = b;
  return NULL;
}

static void cpu_buffer_release(alloy_backend *be, alloy_buffer *b) {
  if (!b) return;
  untrack(be, &b->o);
  if (b->owned) free(b->mem);
  free(b);
}

static void *cpu_buffer_host_pointer(alloy_backend *be, alloy_buffer *b) {
  (void)be;
  return b ? b->mem : NULL;
}

/* Host memory made outside Alloy, used in place and left to its owner. */
static alloy_error *cpu_buffer_import(alloy_backend *be, int device, void *pointer, uint64_t bytes,
                                      const alloy_ext *ext, alloy_buffer **out) {
  (void)ext;
  if (device != 0) return fail(be, ALLOY_ERR_INVALID_ARGUMENT, "device %d does not exist: one device, 0", device);
  if (!pointer && bytes) return fail(be, ALLOY_ERR_INVALID_ARGUMENT, "buffer_import: no memory for %" PRIu64 " bytes", bytes);
  alloy_buffer *b = calloc(1, sizeof *b);
  if (!b) return fail(be, ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  b->mem = pointer, b->bytes = bytes, b->owned = false;
  track(be, &b->o, OBJ_BUFFER);
  *out = b;
  return NULL;
}

static alloy_error *range(alloy_backend *be, const char *what, const alloy_buffer *b, uint64_t offset, uint64_t bytes) {
  if (!b) return fail(be, ALLOY_ERR_INVALID_ARGUMENT, "%s: no buffer", what);
  if (offset > b->bytes || bytes > b->bytes - offset)
    return fail(be, ALLOY_ERR_INVALID_ARGUMENT, "%s: bytes [%" PRIu64 ", %" PRIu64 ") outside a buffer of %" PRIu64,
                what, offset, offset + bytes, b->bytes);
  return NULL;
}

/* Copies finish before returning: with a queue, *done NULL says so. */
static alloy_error *cpu_copy_from_host(alloy_backend *be, alloy_buffer *dst, uint64_t offset, const void *src,
                                       uint64_t bytes, alloy_queue *q, alloy_event **done) {
  alloy_error *e = range(be, "buffer_copy_from_host", dst, offset, bytes);
  if (e) return e;
  if (bytes) memcpy((char *)dst->mem + offset, src, (size_t)bytes);
  if (q && done) *done = NULL;
  return NULL;
}

static alloy_error *cpu_copy_to_host(alloy_backend *be, void *dst, alloy_buffer *src, uint64_t offset, uint64_t bytes,
                                     alloy_queue *q, alloy_event **done) {
  alloy_error *e = range(be, "buffer_copy_to_host", src, offset, bytes);
  if (e) return e;
  if (bytes) memcpy(dst, (const char *)src->mem + offset, (size_t)bytes);
  if (q && done) *done = NULL;
  return NULL;
}

static alloy_error *cpu_copy(alloy_backend *be, alloy_buffer *dst, uint64_t dst_offset, alloy_buffer *src,
                             uint64_t src_offset, uint64_t bytes, alloy_queue *q, alloy_event **done) {
  alloy_error *e = range(be, "buffer_copy (destination)", dst, dst_offset, bytes);
  if (!e) e = range(be, "buffer_copy (source)", src, src_offset, bytes);
  if (e) return e;
  if (bytes) memmove((char *)dst->mem + dst_offset, (const char *)src->mem + src_offset, (size_t)bytes);
  if (q && done) *done = NULL;
  return NULL;
}

/* Staging memory for the host: an object header in the first 64 bytes,
 * the caller's bytes after it (64-byte aligned; as "pinned" as any of
 * ours, since copies are memcpy). */
static alloy_error *cpu_host_buffer_allocate(alloy_backend *be, uint64_t bytes, void **out) {
  if (bytes > SIZE_MAX - 128) return fail(be, ALLOY_ERR_OUT_OF_MEMORY, "cannot allocate %" PRIu64 " bytes", bytes);
  obj *o = aligned_alloc(64, 64 + (((size_t)bytes + 63) & ~(size_t)63));
  if (!o) return fail(be, ALLOY_ERR_OUT_OF_MEMORY, "cannot allocate %" PRIu64 " bytes", bytes);
  track(be, o, OBJ_HOST_BUFFER);
  *out = (char *)o + 64;
  return NULL;
}

static void cpu_host_buffer_release(alloy_backend *be, void *ptr) {
  if (!ptr) return;
  obj *o = (obj *)((char *)ptr - 64);
  untrack(be, o);
  free(o);
}

/* ---- queues and events: work is done when an entry returns ------------------------- */

static alloy_error *cpu_queue_create(alloy_backend *be, int device, alloy_queue **out) {
  if (device != 0) return fail(be, ALLOY_ERR_INVALID_ARGUMENT, "device %d does not exist: one device, 0", device);
  alloy_queue *q = calloc(1, sizeof *q);
  if (!q) return fail(be, ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  track(be, &q->o, OBJ_QUEUE);
  *out = q;
  return NULL;
}

static void cpu_queue_release(alloy_backend *be, alloy_queue *q) {
  if (!q) return;
  untrack(be, &q->o);
  free(q);
}

static alloy_error *cpu_event_record(alloy_backend *be, alloy_queue *q, alloy_event **out) {
  (void)q;
  alloy_event *ev = calloc(1, sizeof *ev);
  if (!ev) return fail(be, ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  track(be, &ev->o, OBJ_EVENT);
  *out = ev;
  return NULL;
}

static alloy_error *cpu_queue_wait_event(alloy_backend *be, alloy_queue *q, alloy_event *ev) {
  (void)be, (void)q, (void)ev;
  return NULL;
}

static alloy_error *cpu_event_wait(alloy_backend *be, alloy_event *ev) {
  (void)be, (void)ev;
  return NULL;
}

static int cpu_event_query(alloy_backend *be, alloy_event *ev) {
  (void)be, (void)ev;
  return 1;
}

static void cpu_event_release(alloy_backend *be, alloy_event *ev) {
  if (!ev) return;
  untrack(be, &ev->o);
  free(ev);
}

/* ---- options ------------------------------------------------------------------------ */

static bool parse_int(const char *s, long lo, long hi, int *out) {
  char *end;
  long v = strtol(s, &end, 10);
  if (!*s || *end || v < lo || v > hi) return false;
  *out = (int)v;
  return true;
}

/* threads=N (the pool's threads, the caller included), opt_level=0..3
 * (LLVM's pipeline), vector_width=0|128|256|512 (bits the loop vectorizer
 * prefers; 0 LLVM's choice for the CPU), gemm=blas|loop. */
static alloy_error *cpu_backend_set_option(alloy_backend *be, const char *key, const char *value) {
  int v;
  if (!strcmp(key, "threads")) {
    if (!parse_int(value, 1, 256, &v)) return fail(be, ALLOY_ERR_INVALID_ARGUMENT, "threads takes 1 to 256, not '%s'", value);
    cpu_pool *p = cpu_pool_open(v);
    if (!p) return fail(be, ALLOY_ERR_UNAVAILABLE, "cannot start %d threads", v);
    cpu_pool_close(be->pool);
    be->pool = p;
    be->threads = v;
    return NULL;
  }
  if (!strcmp(key, "opt_level")) {
    if (!parse_int(value, 0, 3, &v)) return fail(be, ALLOY_ERR_INVALID_ARGUMENT, "opt_level takes 0 to 3, not '%s'", value);
    be->opt_level = v;
    return NULL;
  }
  if (!strcmp(key, "vector_width")) {
    if (!parse_int(value, 0, 512, &v) || (v && v != 128 && v != 256 && v != 512))
      return fail(be, ALLOY_ERR_INVALID_ARGUMENT, "vector_width takes 0, 128, 256 or 512, not '%s'", value);
    be->vector_width = v;
    return NULL;
  }
  if (!strcmp(key, "gemm")) {
    if (strcmp(value, "blas") && strcmp(value, "loop"))
      return fail(be, ALLOY_ERR_INVALID_ARGUMENT, "gemm takes blas or loop, not '%s'", value);
    if (!strcmp(value, "blas") && !be->have_blas) return fail(be, ALLOY_ERR_UNAVAILABLE, "%s", be->blas_why);
    be->gemm_loop = !strcmp(value, "loop");
    return NULL;
  }
  return fail(be, ALLOY_ERR_NOT_FOUND, "no option '%s' (the options: threads, opt_level, vector_width, gemm)", key);
}

/* ---- the table ------------------------------------------------------------------------ */

static const alloy_plugin_api cpu_plugin = {
    .struct_size = ALLOY_PLUGIN_API_STRUCT_SIZE,
    .abi_major = ALLOY_ABI_MAJOR,
    .abi_minor = ALLOY_ABI_MINOR,
    .name = "cpu",
    .vendor = "Alloy",
    .version = cpu_plugin_version,
    .backend_open = cpu_backend_open,
    .backend_close = cpu_backend_close,
    .device_count = cpu_device_count,
    .device_info = cpu_device_info,
    .claim = cpu_claim,
    .compile = cpu_compile,
    .execute = cpu_execute,
    .executable_release = cpu_executable_release,
    .buffer_allocate = cpu_buffer_allocate,
    .buffer_release = cpu_buffer_release,
    .buffer_host_pointer = cpu_buffer_host_pointer,
    .buffer_copy_from_host = cpu_copy_from_host,
    .buffer_copy_to_host = cpu_copy_to_host,
    .buffer_copy = cpu_copy,
    .queue_create = cpu_queue_create,
    .queue_release = cpu_queue_release,
    .event_wait = cpu_event_wait,
    .event_query = cpu_event_query,
    .event_release = cpu_event_release,
    .executable_serialize = cpu_executable_serialize,
    .executable_deserialize = cpu_executable_deserialize,
    .capabilities = 0,
    .event_record = cpu_event_record,
    .queue_wait_event = cpu_queue_wait_event,
    .host_buffer_allocate = cpu_host_buffer_allocate,
    .host_buffer_release = cpu_host_buffer_release,
    .buffer_import = cpu_buffer_import,
    .backend_set_option = cpu_backend_set_option,
};

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(const alloy_host_api *host);
ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(const alloy_host_api *host) {
  (void)host; /* another major: the host compares and refuses, naming both */
  return &cpu_plugin;
}
