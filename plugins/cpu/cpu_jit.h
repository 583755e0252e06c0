/*
 * plugins/cpu/cpu_jit.h: LLVM for the cpu backend (cpu_jit.c). One JIT per
 * backend: ORC's LLJIT for the host's CPU (its name and features detected
 * at open), a target machine of the same CPU for the optimization passes,
 * and one module per compiled partition, held by a resource tracker so
 * that releasing the executable frees its code. Not thread-safe: the
 * backend calls it from compile and executable_release, which the host
 * calls one at a time per backend; the functions it returns may be called
 * from any thread.
 */
#ifndef ALLOY_CPU_JIT_H
#define ALLOY_CPU_JIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cpu_jit cpu_jit;
typedef struct cpu_module cpu_module;

/* NULL, or why LLVM's JIT does not open (written into why). */
const char *cpu_jit_open(cpu_jit **out, char *why, size_t cap);
void cpu_jit_close(cpu_jit *j);
/* LLVM's name of the host CPU ("icelake-client") and its feature string
 * ("+avx2,+fma,-amx-tile,..."); they live as long as the JIT. */
const char *cpu_jit_cpu_name(const cpu_jit *j);
const char *cpu_jit_cpu_features(const cpu_jit *j);

typedef struct cpu_jit_options {
  int opt_level;    /* 0 .. 3: LLVM's default<O0> .. default<O3> pipeline */
  int vector_width; /* bits the loop vectorizer prefers (prefer-vector-width); 0: LLVM's choice */
  const char *dump_dir; /* write the module before and after optimization there, or NULL */
} cpu_jit_options;

/* Compiles module text ir (NUL-terminated, len bytes) whose functions are
 * k0 .. k<n-1> into a relocatable object for the host's CPU, links it and
 * writes the functions' addresses to fns. NULL on success (then *out holds
 * the code until cpu_module_free), else why, in err. When object is not
 * NULL, *object (malloc'd, the caller frees it) and *object_len get the
 * object's bytes and *tag the tag its function names carry: what
 * cpu_jit_load takes to link the same code again. */
const char *cpu_jit_compile(cpu_jit *j, const char *ir, size_t len, int n, const cpu_jit_options *o, void **fns,
                            cpu_module **out, void **object, size_t *object_len, uint64_t *tag, char *err,
                            size_t cap);
/* Links an object cpu_jit_compile wrote (in this process or another, for
 * this CPU: the caller checks that) whose functions carry tag, and writes
 * the addresses of its n functions to fns: no LLVM pass or code generation
 * runs. Fails when a live module of this JIT carries the tag. */
const char *cpu_jit_load(cpu_jit *j, const void *object, size_t len, uint64_t tag, int n, void **fns,
                         cpu_module **out, char *err, size_t cap);
void cpu_module_free(cpu_jit *j, cpu_module *m);

#endif
