/*
 * plugins/cpu/cpu_jit.c: the module of a partition (LLVM IR text from
 * cpu_plan.c) parsed, verified, optimized by LLVM's new pass manager
 * (LLVMRunPasses, "default<O3>", for the host CPU's target machine, so that
 * the loop vectorizer picks its vector width), compiled by that target
 * machine into a relocatable object in memory
 * (LLVMTargetMachineEmitToMemoryBuffer) and linked by ORC's LLJIT
 * (LLVMOrcLLJITAddObjectFileWithRT). The object's bytes are what the
 * compile cache keeps: cpu_jit_load links such an object again, in this
 * process or another one on the same CPU, with no LLVM pass or code
 * generation. Debian's LLVM 14, through its C API only.
 *
 * The target machine uses LLVM's JIT code model (large on x86-64: every
 * address is a 64-bit absolute relocation), so the object links wherever
 * LLJIT's memory manager puts its sections.
 *
 * Symbols the code calls (libm's expf, tanhf, ...; memset and memcpy,
 * which LLVM makes of some loops; the float16 conversions of CPUs without
 * F16C) resolve to this library's own addresses, defined in the JIT as
 * absolute symbols, so that a host that did not link libm globally still
 * runs the code; anything else falls back to the process's symbols.
 *
 * Each module is added under a resource tracker of its own: removing the
 * tracker frees the module's code and data, which is how an executable's
 * JIT memory goes when it is released. Function names get a prefix unique
 * within the JIT (a<tag>_k<i>, the tag random per compile), since all
 * modules share one JITDylib; an object whose tag is live already is not
 * linked twice (the caller compiles instead).
 */
#include "plugins/cpu/cpu_jit.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "alloy/dtype.h"

struct cpu_jit {
  LLVMOrcLLJITRef jit;
  LLVMTargetMachineRef tm;
  char *cpu, *features;
  pthread_mutex_t lock; /* what follows: compile may run on an execute's thread */
  unsigned long next_module;
  uint64_t tag_counter;
  struct cpu_module *modules; /* the live ones, for their tags */
};

struct cpu_module {
  LLVMOrcResourceTrackerRef rt;
  uint64_t tag; /* its functions are a<tag>_k<i> */
  struct cpu_module *prev, *next;
  bool linked;
};

/* Under j->lock. */
static bool tag_live(const cpu_jit *j, uint64_t tag) {
  for (const struct cpu_module *m = j->modules; m; m = m->next)
    if (m->tag == tag) return true;
  return false;
}

static void link_module(cpu_jit *j, struct cpu_module *m) {
  pthread_mutex_lock(&j->lock);
  m->prev = NULL, m->next = j->modules;
  if (j->modules) j->modules->prev = m;
  j->modules = m;
  m->linked = true;
  pthread_mutex_unlock(&j->lock);
}

static void unlink_module(cpu_jit *j, struct cpu_module *m) {
  if (!m->linked) return;
  pthread_mutex_lock(&j->lock);
  if (m->prev) m->prev->next = m->next;
  else j->modules = m->next;
  if (m->next) m->next->prev = m->prev;
  m->linked = false;
  pthread_mutex_unlock(&j->lock);
}

/* ---- runtime symbols -------------------------------------------------------- */

/* float16 <-> float, for code generated for a CPU without F16C (LLVM calls
 * compiler-rt's names). */
static float h2f(uint16_t h) { return alloy_f32_from_f16(h); }
static uint16_t f2h(float f) { return alloy_f16_from_f32(f); }
static uint16_t d2h(double d) { return alloy_f16_from_f32((float)d); }
static void sincos_f(float x, float *s, float *c) { *s = sinf(x), *c = cosf(x); }
static void sincos_d(double x, double *s, double *c) { *s = sin(x), *c = cos(x); }
static float exp10_f(float x) { return powf(10.0f, x); }
static double exp10_d(double x) { return pow(10.0, x); }

#define SYM(name, fn) {name, (void (*)(void))(fn)}
static const struct {
  const char *name;
  void (*addr)(void);
} runtime_symbols[] = {
    SYM("expf", expf), SYM("exp", exp), SYM("exp2f", exp2f), SYM("exp2", exp2), SYM("logf", logf), SYM("log", log),
    SYM("log2f", log2f), SYM("log2", log2), SYM("log10f", log10f), SYM("log10", log10), SYM("powf", powf),
    SYM("pow", pow), SYM("sinf", sinf), SYM("sin", sin), SYM("cosf", cosf), SYM("cos", cos), SYM("tanf", tanf),
    SYM("tan", tan), SYM("asinf", asinf), SYM("asin", asin), SYM("acosf", acosf), SYM("acos", acos),
    SYM("atanf", atanf), SYM("atan", atan), SYM("sinhf", sinhf), SYM("sinh", sinh), SYM("coshf", coshf),
    SYM("cosh", cosh), SYM("tanhf", tanhf), SYM("tanh", tanh), SYM("asinhf", asinhf), SYM("asinh", asinh),
    SYM("acoshf", acoshf), SYM("acosh", acosh), SYM("atanhf", atanhf), SYM("atanh", atanh), SYM("erff", erff),
    SYM("erf", erf), SYM("erfcf", erfcf), SYM("erfc", erfc), SYM("expm1f", expm1f), SYM("expm1", expm1),
    SYM("log1pf", log1pf), SYM("log1p", log1p), SYM("atan2f", atan2f), SYM("atan2", atan2),
    SYM("sqrtf", sqrtf), SYM("sqrt", sqrt), SYM("floorf", floorf), SYM("floor", floor), SYM("ceilf", ceilf),
    SYM("ceil", ceil), SYM("truncf", truncf), SYM("trunc", trunc), SYM("rintf", rintf), SYM("rint", rint),
    SYM("roundevenf", rintf), SYM("roundeven", rint), SYM("fmodf", fmodf), SYM("fmod", fmod),
    SYM("fmaf", fmaf), SYM("fma", fma), SYM("fmaxf", fmaxf), SYM("fmax", fmax), SYM("fminf", fminf), SYM("fmin", fmin),
    SYM("sincosf", sincos_f), SYM("sincos", sincos_d), SYM("exp10f", exp10_f), SYM("exp10", exp10_d),
    SYM("memset", memset), SYM("memcpy", memcpy), SYM("memmove", memmove),
    SYM("__gnu_h2f_ieee", h2f), SYM("__extendhfsf2", h2f), SYM("__gnu_f2h_ieee", f2h), SYM("__truncsfhf2", f2h),
    SYM("__truncdfhf2", d2h),
};

/* ---- errors ------------------------------------------------------------------ */

static const char *take(LLVMErrorRef e, const char *what, char *buf, size_t cap) {
  char *m = LLVMGetErrorMessage(e);
  snprintf(buf, cap, "%s: %s", what, m ? m : "unknown LLVM error");
  LLVMDisposeErrorMessage(m);
  return buf;
}

/* ---- open and close -------------------------------------------------------------- */

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_failed;
static void init_llvm(void) {
  init_failed = LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter();
}

static const char *define_runtime(cpu_jit *j, char *why, size_t cap) {
  size_t n = sizeof runtime_symbols / sizeof *runtime_symbols;
  LLVMJITCSymbolMapPair pairs[sizeof runtime_symbols / sizeof *runtime_symbols];
  for (size_t i = 0; i < n; i++) {
    pairs[i].Name = LLVMOrcLLJITMangleAndIntern(j->jit, runtime_symbols[i].name);
    pairs[i].Sym.Address = (LLVMOrcJITTargetAddress)(uintptr_t)runtime_symbols[i].addr;
    pairs[i].Sym.Flags.GenericFlags = LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable;
    pairs[i].Sym.Flags.TargetFlags = 0;
  }
  LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(j->jit);
  LLVMErrorRef e = LLVMOrcJITDylibDefine(jd, LLVMOrcAbsoluteSymbols(pairs, n));
  if (e) return take(e, "defining the runtime symbols", why, cap);
  LLVMOrcDefinitionGeneratorRef gen = NULL;
  e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, LLVMOrcLLJITGetGlobalPrefix(j->jit), NULL, NULL);
  if (e) return take(e, "the process's symbols", why, cap);
  LLVMOrcJITDylibAddGenerator(jd, gen);
  return NULL;
}

const char *cpu_jit_open(cpu_jit **out, char *why, size_t cap) {
  pthread_once(&init_once, init_llvm);
  if (init_failed) {
    snprintf(why, cap, "LLVM has no native target for this machine");
    return why;
  }
  cpu_jit *j = calloc(1, sizeof *j);
  if (!j) return snprintf(why, cap, "out of memory"), why;
  pthread_mutex_init(&j->lock, NULL);
  /* no builder: LLJIT detects the host (its CPU and features) itself */
  LLVMErrorRef e = LLVMOrcCreateLLJIT(&j->jit, NULL);
  if (e) {
    pthread_mutex_destroy(&j->lock);
    free(j);
    return take(e, "creating LLVM's LLJIT", why, cap);
  }
  const char *triple = LLVMOrcLLJITGetTripleString(j->jit);
  LLVMTargetRef target;
  char *msg = NULL;
  if (LLVMGetTargetFromTriple(triple, &target, &msg)) {
    snprintf(why, cap, "no LLVM target for %s: %s", triple, msg ? msg : "?");
    LLVMDisposeMessage(msg);
    cpu_jit_close(j);
    return why;
  }
  j->cpu = LLVMGetHostCPUName();
  j->features = LLVMGetHostCPUFeatures();
  j->tm = LLVMCreateTargetMachine(target, triple, j->cpu, j->features, LLVMCodeGenLevelAggressive, LLVMRelocDefault,
                                  LLVMCodeModelJITDefault);
  if (!j->tm) {
    snprintf(why, cap, "no LLVM target machine for %s (%s)", triple, j->cpu);
    cpu_jit_close(j);
    return why;
  }
  if (define_runtime(j, why, cap)) {
    cpu_jit_close(j);
    return why;
  }
  *out = j;
  return NULL;
}

void cpu_jit_close(cpu_jit *j) {
  if (!j) return;
  if (j->jit) {
    LLVMErrorRef e = LLVMOrcDisposeLLJIT(j->jit);
    if (e) LLVMConsumeError(e);
  }
  if (j->tm) LLVMDisposeTargetMachine(j->tm);
  LLVMDisposeMessage(j->cpu);
  LLVMDisposeMessage(j->features);
  pthread_mutex_destroy(&j->lock);
  free(j);
}

const char *cpu_jit_cpu_name(const cpu_jit *j) { return j->cpu ? j->cpu : "unknown"; }
const char *cpu_jit_cpu_features(const cpu_jit *j) { return j->features ? j->features : ""; }

/* ---- compile ------------------------------------------------------------------ */

static void dump(LLVMModuleRef m, const char *dir, unsigned long id, const char *stage) {
  char path[4096];
  snprintf(path, sizeof path, "%s/m%lu.%s.ll", dir, id, stage);
  char *msg = NULL;
  if (LLVMPrintModuleToFile(m, path, &msg)) LLVMDisposeMessage(msg);
}

/* A tag for a module's function names (a<tag>_k<i>), unique among the
 * JIT's live modules: random, so that an object from another process's
 * cache does not collide with this process's modules either. */
static uint64_t new_tag(cpu_jit *j) {
  for (;;) {
    uint64_t t = 0;
    if (getrandom(&t, sizeof t, GRND_NONBLOCK) != (ssize_t)sizeof t) {
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      t = ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20);
    }
    t ^= ++j->tag_counter * 0x9e3779b97f4a7c15ull;
    if (t && !tag_live(j, t)) return t;
  }
}

static void symbol(char *buf, size_t cap, uint64_t tag, int i) {
  snprintf(buf, cap, "a%016llx_k%d", (unsigned long long)tag, i);
}

/* Adds object (owned by LLJIT from here) under a new tracker and looks up
 * a<tag>_k0 .. a<tag>_k<n-1>. */
static const char *add_object(cpu_jit *j, LLVMMemoryBufferRef object, uint64_t tag, int n, void **fns,
                              cpu_module **out, char *err, size_t cap) {
  cpu_module *m = calloc(1, sizeof *m);
  if (!m) {
    LLVMDisposeMemoryBuffer(object);
    return snprintf(err, cap, "out of memory"), err;
  }
  m->tag = tag;
  LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(j->jit);
  m->rt = LLVMOrcJITDylibCreateResourceTracker(jd);
  LLVMErrorRef e = LLVMOrcLLJITAddObjectFileWithRT(j->jit, m->rt, object);
  if (e) {
    take(e, "adding the object to LLJIT", err, cap);
    cpu_module_free(j, m);
    return err;
  }
  link_module(j, m);
  for (int i = 0; i < n; i++) {
    char name[48];
    symbol(name, sizeof name, tag, i);
    LLVMOrcExecutorAddress addr = 0;
    e = LLVMOrcLLJITLookup(j->jit, &addr, name);
    if (e) {
      take(e, "linking the module's code", err, cap);
      cpu_module_free(j, m);
      return err;
    }
    fns[i] = (void *)(uintptr_t)addr;
  }
  *out = m;
  return NULL;
}

const char *cpu_jit_compile(cpu_jit *j, const char *ir, size_t len, int n, const cpu_jit_options *o, void **fns,
                            cpu_module **out, void **object, size_t *object_len, uint64_t *tag_out, char *err,
                            size_t cap) {
  pthread_mutex_lock(&j->lock);
  unsigned long id = j->next_module++;
  uint64_t tag = new_tag(j);
  pthread_mutex_unlock(&j->lock);
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(ir, len, "partition");
  LLVMModuleRef mod = NULL;
  char *msg = NULL;
  if (LLVMParseIRInContext(ctx, buf, &mod, &msg)) { /* takes buf either way */
    snprintf(err, cap, "LLVM could not parse the generated module (a bug of the cpu backend): %.900s",
             msg ? msg : "?");
    LLVMDisposeMessage(msg);
    LLVMContextDispose(ctx);
    return err;
  }
  if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg)) {
    snprintf(err, cap, "the generated module does not verify (a bug of the cpu backend): %.900s", msg ? msg : "?");
    LLVMDisposeMessage(msg);
    LLVMDisposeModule(mod);
    LLVMContextDispose(ctx);
    return err;
  }
  LLVMDisposeMessage(msg);
  LLVMSetTarget(mod, LLVMOrcLLJITGetTripleString(j->jit));
  LLVMSetDataLayout(mod, LLVMOrcLLJITGetDataLayoutStr(j->jit));
  char width[16];
  snprintf(width, sizeof width, "%d", o->vector_width);
  for (int i = 0; i < n; i++) {
    char name[32], unique[48];
    snprintf(name, sizeof name, "k%d", i);
    LLVMValueRef fn = LLVMGetNamedFunction(mod, name);
    if (!fn) continue;
    symbol(unique, sizeof unique, tag, i);
    LLVMSetValueName2(fn, unique, strlen(unique));
    if (o->vector_width > 0)
      LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                              LLVMCreateStringAttribute(ctx, "prefer-vector-width", 19, width, (unsigned)strlen(width)));
  }
  if (o->dump_dir) dump(mod, o->dump_dir, id, "in");
  static const char *const pipelines[] = {"default<O0>", "default<O1>", "default<O2>", "default<O3>"};
  int level = o->opt_level < 0 ? 0 : o->opt_level > 3 ? 3 : o->opt_level;
  LLVMPassBuilderOptionsRef pbo = LLVMCreatePassBuilderOptions();
  LLVMErrorRef e = LLVMRunPasses(mod, pipelines[level], j->tm, pbo);
  LLVMDisposePassBuilderOptions(pbo);
  if (e) {
    take(e, "LLVM's optimization passes", err, cap);
    LLVMDisposeModule(mod);
    LLVMContextDispose(ctx);
    return err;
  }
  if (o->dump_dir) dump(mod, o->dump_dir, id, "opt");
  /* Code generation by the target machine of the host's CPU, into a
   * relocatable object that LLJIT links (and the compile cache keeps). */
  LLVMMemoryBufferRef obj = NULL;
  msg = NULL;
  LLVMBool failed = LLVMTargetMachineEmitToMemoryBuffer(j->tm, mod, LLVMObjectFile, &msg, &obj);
  LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
  if (failed || !obj) {
    snprintf(err, cap, "LLVM's code generation: %.900s", msg ? msg : "?");
    LLVMDisposeMessage(msg);
    if (obj) LLVMDisposeMemoryBuffer(obj);
    return err;
  }
  LLVMDisposeMessage(msg);
  if (object) {
    size_t size = LLVMGetBufferSize(obj);
    *object = malloc(size ? size : 1);
    if (!*object) {
      LLVMDisposeMemoryBuffer(obj);
      return snprintf(err, cap, "out of memory"), err;
    }
    memcpy(*object, LLVMGetBufferStart(obj), size);
    *object_len = size;
  }
  if (add_object(j, obj, tag, n, fns, out, err, cap)) {
    if (object) free(*object), *object = NULL, *object_len = 0;
    return err;
  }
  if (tag_out) *tag_out = tag;
  return NULL;
}

const char *cpu_jit_load(cpu_jit *j, const void *object, size_t len, uint64_t tag, int n, void **fns,
                         cpu_module **out, char *err, size_t cap) {
  pthread_mutex_lock(&j->lock);
  bool live = tag_live(j, tag);
  pthread_mutex_unlock(&j->lock);
  if (live) return snprintf(err, cap, "its code is loaded already (its names would collide)"), err;
  LLVMMemoryBufferRef obj = LLVMCreateMemoryBufferWithMemoryRangeCopy(object, len, "cached partition");
  if (!obj) return snprintf(err, cap, "out of memory"), err;
  return add_object(j, obj, tag, n, fns, out, err, cap);
}

void cpu_module_free(cpu_jit *j, cpu_module *m) {
  if (!m) return;
  unlink_module(j, m);
  if (m->rt) {
    LLVMErrorRef e = LLVMOrcResourceTrackerRemove(m->rt);
    if (e) LLVMConsumeError(e);
    LLVMOrcReleaseResourceTracker(m->rt);
  }
  free(m);
}
