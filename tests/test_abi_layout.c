/*
 * tests/test_abi_layout.c: pins the memory layout of every public struct
 * that crosses a binary boundary (the plugin ABI of alloy/plugin.h, the
 * kernel-table helper's structs, the host API of alloy/runtime.h) to the
 * table in tests/abi_layout.txt, so that a change that moves, retypes or
 * inserts a field fails CI instead of crashing a vendor's plugin built
 * against the previous headers (DESIGN.md, "The plugin ABI: rules", rule 2).
 *
 * The fields are listed here once, as X-macros, in declaration order. The
 * test checks four things against that list:
 *   - the table: every listed field has a row with its offset and size;
 *     every row is a listed field (no stale rows); each struct's newest size
 *     row is its size today, and its older size rows (what writers of older
 *     minors put in struct_size) each fall at the end of a listed field;
 *   - the list itself is complete: the fields tile the struct with nothing
 *     but alignment padding between them, and (with GCC's
 *     __builtin_clear_padding) no byte that is neither padding nor a listed
 *     field; so a field added to a header but not here fails too;
 *   - the ends: each struct's last listed field ends where the struct does
 *     (sizeof): no trailing padding that a later field could fall into, so
 *     that struct_size, measured to the end of the last field, means one
 *     thing; and each struct that begins with struct_size has its
 *     ALLOY_*_STRUCT_SIZE constant, equal to that end;
 *   - the conventions: each struct begins with size_t struct_size (the
 *     array-row structs do not, and say why), the frozen prefixes of the
 *     two tables, and ALLOY_ARG_TYPE_* == alloy_arg_kind.
 * The checkers report through a sink, so that two tests run them on
 * deliberately bad local structs (a moved field, trailing padding, a stale
 * size constant, a struct grown without its size row) and assert that each
 * is reported: the failure path is tested, not only the passing one.
 *
 * A minor version appends fields: add them to the list, append their rows
 * and a row "STRUCT size@1.MINOR N" for each struct that grew; existing rows
 * never change. A major version may change rows: regenerate the table with
 * ALLOY_ABI_LAYOUT_WRITE=tests/abi_layout.txt (the test writes it from the
 * headers) and review the diff.
 * The table is for LP64 targets (x86_64, aarch64 Linux), where it was made.
 */
#include <limits.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/kernel_table.h"
#include "alloy/ops.h"
#include "alloy/plugin.h"
#include "alloy/runtime.h"
#include "harness.h"

/* ---- the lists -----------------------------------------------------------
 * One F(struct, member) per member, in declaration order. */

#define FIELDS_alloy_host_api(F)                                            \
  F(alloy_host_api, struct_size) F(alloy_host_api, abi_major)               \
  F(alloy_host_api, abi_minor) F(alloy_host_api, error_new)                 \
  F(alloy_host_api, error_free) F(alloy_host_api, log)                      \
  F(alloy_host_api, error_message) F(alloy_host_api, alloc)                 \
  F(alloy_host_api, free) F(alloy_host_api, graph_num_nodes)                \
  F(alloy_host_api, graph_node) F(alloy_host_api, graph_num_inputs)         \
  F(alloy_host_api, graph_input) F(alloy_host_api, graph_num_outputs)       \
  F(alloy_host_api, graph_output) F(alloy_host_api, node_op_name)           \
  F(alloy_host_api, node_op_id) F(alloy_host_api, node_num_args)            \
  F(alloy_host_api, node_arg) F(alloy_host_api, node_arg_name)              \
  F(alloy_host_api, node_num_outputs) F(alloy_host_api, node_output)        \
  F(alloy_host_api, value_kind) F(alloy_host_api, value_name)               \
  F(alloy_host_api, value_dtype) F(alloy_host_api, value_rank)              \
  F(alloy_host_api, value_size) F(alloy_host_api, value_size_text)          \
  F(alloy_host_api, value_size_range) F(alloy_host_api, value_size_eval)    \
  F(alloy_host_api, arg_type) F(alloy_host_api, arg_int)                    \
  F(alloy_host_api, arg_float) F(alloy_host_api, arg_bool)                  \
  F(alloy_host_api, arg_str) F(alloy_host_api, arg_dtype)                   \
  F(alloy_host_api, arg_enum) F(alloy_host_api, arg_value)                  \
  F(alloy_host_api, arg_list_size) F(alloy_host_api, arg_list_item)         \
  F(alloy_host_api, claims_add)                                             \
  /* 1.2 */                                                                 \
  F(alloy_host_api, log_level) F(alloy_host_api, node_index)                \
  F(alloy_host_api, value_producer) F(alloy_host_api, value_num_users)      \
  F(alloy_host_api, value_user) F(alloy_host_api, value_stride)             \
  F(alloy_host_api, op_find) F(alloy_host_api, graph_input_kind)            \
  F(alloy_host_api, graph_input_data) F(alloy_host_api, claims_add_group)   \
  F(alloy_host_api, claims_reject) F(alloy_host_api, clock_ns)              \
  F(alloy_host_api, trace_enabled) F(alloy_host_api, trace_range)     \
  F(alloy_host_api, error_code)

#define FIELDS_alloy_plugin_api(F)                                          \
  F(alloy_plugin_api, struct_size) F(alloy_plugin_api, abi_major)           \
  F(alloy_plugin_api, abi_minor) F(alloy_plugin_api, name)                  \
  F(alloy_plugin_api, vendor) F(alloy_plugin_api, version)                  \
  F(alloy_plugin_api, backend_open) F(alloy_plugin_api, backend_close)      \
  F(alloy_plugin_api, device_count) F(alloy_plugin_api, device_info)        \
  F(alloy_plugin_api, claim) F(alloy_plugin_api, compile)                   \
  F(alloy_plugin_api, execute) F(alloy_plugin_api, executable_release)      \
  F(alloy_plugin_api, buffer_allocate) F(alloy_plugin_api, buffer_release)  \
  F(alloy_plugin_api, buffer_host_pointer)                                  \
  F(alloy_plugin_api, buffer_copy_from_host)                                \
  F(alloy_plugin_api, buffer_copy_to_host) F(alloy_plugin_api, buffer_copy) \
  F(alloy_plugin_api, queue_create) F(alloy_plugin_api, queue_release)      \
  F(alloy_plugin_api, event_wait) F(alloy_plugin_api, event_query)          \
  F(alloy_plugin_api, event_release)                                        \
  F(alloy_plugin_api, executable_serialize)                                 \
  F(alloy_plugin_api, executable_deserialize)                               \
  /* 1.1 */                                                                 \
  F(alloy_plugin_api, capabilities)                                         \
  /* 1.2 */                                                                 \
  F(alloy_plugin_api, event_record) F(alloy_plugin_api, queue_wait_event)   \
  F(alloy_plugin_api, host_buffer_allocate)                                 \
  F(alloy_plugin_api, host_buffer_release)                                  \
  F(alloy_plugin_api, buffer_import) F(alloy_plugin_api, backend_set_option)\
  /* 1.3 */                                                                 \
  F(alloy_plugin_api, queue_import)

#define FIELDS_alloy_ext(F) \
  F(alloy_ext, struct_size) F(alloy_ext, type) F(alloy_ext, next)

#define FIELDS_alloy_ext_stream(F) \
  F(alloy_ext_stream, base) F(alloy_ext_stream, stream)

#define FIELDS_alloy_device_info(F)                                 \
  F(alloy_device_info, struct_size) F(alloy_device_info, name)      \
  F(alloy_device_info, kind) F(alloy_device_info, memory_bytes)     \
  /* 1.2 */                                                         \
  F(alloy_device_info, free_memory_bytes) F(alloy_device_info, arch) \
  F(alloy_device_info, capabilities) F(alloy_device_info, launch_s) \
  F(alloy_device_info, host_bytes_per_s)

#define FIELDS_alloy_compile_options(F)                                  \
  F(alloy_compile_options, struct_size) F(alloy_compile_options, device) \
  F(alloy_compile_options, opt_level) F(alloy_compile_options, ext)      \
  /* 1.2 */                                                              \
  F(alloy_compile_options, options) F(alloy_compile_options, num_options) \
  F(alloy_compile_options, reserved)

#define FIELDS_alloy_tensor(F)                                        \
  F(alloy_tensor, struct_size) F(alloy_tensor, buffer)                \
  F(alloy_tensor, offset) F(alloy_tensor, dtype) F(alloy_tensor, rank) \
  F(alloy_tensor, sizes) F(alloy_tensor, strides)

#define FIELDS_alloy_execute_args(F)                                     \
  F(alloy_execute_args, struct_size) F(alloy_execute_args, inputs)       \
  F(alloy_execute_args, num_inputs) F(alloy_execute_args, outputs)       \
  F(alloy_execute_args, num_outputs) F(alloy_execute_args, symbols)      \
  F(alloy_execute_args, num_symbols) F(alloy_execute_args, queue)        \
  F(alloy_execute_args, done) F(alloy_execute_args, ext)

#define FIELDS_alloy_compat_info(F)                                     \
  F(alloy_compat_info, struct_size) F(alloy_compat_info, plugin_version) \
  F(alloy_compat_info, device_model)

#define FIELDS_alloy_kernel_table(F)                                  \
  F(alloy_kernel_table, struct_size) F(alloy_kernel_table, name)      \
  F(alloy_kernel_table, vendor) F(alloy_kernel_table, version)        \
  F(alloy_kernel_table, kernels) F(alloy_kernel_table, count)         \
  /* 1.2: the padding made explicit; the device */                    \
  F(alloy_kernel_table, reserved) F(alloy_kernel_table, device_name)  \
  F(alloy_kernel_table, device_kind) F(alloy_kernel_table, reserved2)

#define FIELDS_alloy_kernel(F)                                          \
  F(alloy_kernel, op) F(alloy_kernel, dtypes) F(alloy_kernel, fn)       \
  F(alloy_kernel, signature)

#define FIELDS_alloy_kernel_tensor(F)                                   \
  F(alloy_kernel_tensor, data) F(alloy_kernel_tensor, dtype)            \
  F(alloy_kernel_tensor, rank) F(alloy_kernel_tensor, sizes)            \
  F(alloy_kernel_tensor, strides)

#define FIELDS_alloy_kernel_call(F)                                     \
  F(alloy_kernel_call, struct_size) F(alloy_kernel_call, host)          \
  F(alloy_kernel_call, node) F(alloy_kernel_call, inputs)               \
  F(alloy_kernel_call, num_inputs) F(alloy_kernel_call, outputs)        \
  F(alloy_kernel_call, num_outputs) F(alloy_kernel_call, input_arg)      \
  F(alloy_kernel_call, input_item) F(alloy_kernel_call, alloc_output)  \
  /* 1.2 */                                                            \
  F(alloy_kernel_call, fail)

#define FIELDS_alloy_runtime_options(F)                                 \
  F(alloy_runtime_options, struct_size)                                 \
  F(alloy_runtime_options, plugin_dirs)                                 \
  F(alloy_runtime_options, num_plugin_dirs)                             \
  F(alloy_runtime_options, no_default_paths)                            \
  /* 1.2: the padding made explicit */                                  \
  F(alloy_runtime_options, reserved)                                    \
  F(alloy_runtime_options, only_backends)                               \
  F(alloy_runtime_options, num_only_backends)                           \
  F(alloy_runtime_options, reserved2)

#define FIELDS_alloy_backend_info(F)                                    \
  F(alloy_backend_info, struct_size) F(alloy_backend_info, name)        \
  F(alloy_backend_info, vendor) F(alloy_backend_info, version)          \
  F(alloy_backend_info, abi_major) F(alloy_backend_info, abi_minor)     \
  F(alloy_backend_info, num_devices) F(alloy_backend_info, devices)     \
  F(alloy_backend_info, path) F(alloy_backend_info, ok)                 \
  F(alloy_backend_info, status)

#define FIELDS_alloy_host_tensor(F)                                     \
  F(alloy_host_tensor, struct_size) F(alloy_host_tensor, dtype)         \
  F(alloy_host_tensor, rank) F(alloy_host_tensor, sizes)                \
  F(alloy_host_tensor, data)

#define FIELDS_alloy_program_options(F)                                 \
  F(alloy_program_options, struct_size)                                 \
  F(alloy_program_options, decompose)                                   \
  F(alloy_program_options, partition_launch_s)                          \
  F(alloy_program_options, link_bytes_per_s)                            \
  /* 1.2 */                                                             \
  F(alloy_program_options, weights) F(alloy_program_options, num_weights) \
  F(alloy_program_options, reserved)                                    \
  F(alloy_program_options, backend_options)                             \
  F(alloy_program_options, num_backend_options)                         \
  F(alloy_program_options, reserved2)

#define FIELDS_alloy_partition_info(F)                                  \
  F(alloy_partition_info, struct_size) F(alloy_partition_info, backend) \
  F(alloy_partition_info, num_nodes) F(alloy_partition_info, num_inputs) \
  F(alloy_partition_info, num_outputs) F(alloy_partition_info, cost)    \
  F(alloy_partition_info, bytes_in)

#define FIELDS_alloy_option(F) F(alloy_option, key) F(alloy_option, value)

#define FIELDS_alloy_run_stats(F)                                          \
  F(alloy_run_stats, struct_size) F(alloy_run_stats, runs)                 \
  F(alloy_run_stats, partitions_run) F(alloy_run_stats, weight_bytes_in)   \
  F(alloy_run_stats, input_bytes_in) F(alloy_run_stats, output_bytes_out)  \
  F(alloy_run_stats, cross_bytes) F(alloy_run_stats, staged_bytes)         \
  F(alloy_run_stats, same_backend_round_trips)                             \
  F(alloy_run_stats, host_waits) F(alloy_run_stats, arena_bytes)           \
  F(alloy_run_stats, arena_ideal_bytes) F(alloy_run_stats, fallbacks)      \
  F(alloy_run_stats, folded_nodes) F(alloy_run_stats, dispatch_s)

#define FIELDS_alloy_run_tensor(F)                                      \
  F(alloy_run_tensor, struct_size) F(alloy_run_tensor, dtype)           \
  F(alloy_run_tensor, rank) F(alloy_run_tensor, sizes)                  \
  F(alloy_run_tensor, data) F(alloy_run_tensor, backend)                \
  F(alloy_run_tensor, reserved)

#define FIELDS_alloy_cache_stats(F)                                     \
  F(alloy_cache_stats, hits) F(alloy_cache_stats, disk_hits)            \
  F(alloy_cache_stats, misses) F(alloy_cache_stats, uncached)

/* Every struct that crosses a boundary, in the table's order. */
#define ABI_STRUCTS(S)                                                   \
  S(alloy_host_api) S(alloy_plugin_api) S(alloy_ext) S(alloy_ext_stream) \
  S(alloy_device_info) S(alloy_compile_options) S(alloy_tensor)          \
  S(alloy_execute_args) S(alloy_compat_info) S(alloy_kernel_table)       \
  S(alloy_kernel) S(alloy_kernel_tensor) S(alloy_kernel_call)            \
  S(alloy_runtime_options) S(alloy_backend_info) S(alloy_host_tensor)    \
  S(alloy_program_options) S(alloy_partition_info) S(alloy_option)       \
  S(alloy_run_stats) S(alloy_cache_stats) S(alloy_run_tensor)

/* Each struct that begins with a size_t struct_size, by the member that
 * holds it (alloy_ext_stream's is its base's), and the constant beside it
 * that struct_size is set to (a missing constant fails to compile here). */
#define SIZED_STRUCTS(S)                                                          \
  S(alloy_host_api, struct_size, ALLOY_HOST_API_STRUCT_SIZE)                      \
  S(alloy_plugin_api, struct_size, ALLOY_PLUGIN_API_STRUCT_SIZE)                  \
  S(alloy_ext, struct_size, ALLOY_EXT_STRUCT_SIZE)                                \
  S(alloy_ext_stream, base.struct_size, ALLOY_EXT_STREAM_STRUCT_SIZE)             \
  S(alloy_device_info, struct_size, ALLOY_DEVICE_INFO_STRUCT_SIZE)                \
  S(alloy_compile_options, struct_size, ALLOY_COMPILE_OPTIONS_STRUCT_SIZE)        \
  S(alloy_tensor, struct_size, ALLOY_TENSOR_STRUCT_SIZE)                          \
  S(alloy_execute_args, struct_size, ALLOY_EXECUTE_ARGS_STRUCT_SIZE)              \
  S(alloy_compat_info, struct_size, ALLOY_COMPAT_INFO_STRUCT_SIZE)                \
  S(alloy_kernel_table, struct_size, ALLOY_KERNEL_TABLE_STRUCT_SIZE)              \
  S(alloy_kernel_call, struct_size, ALLOY_KERNEL_CALL_STRUCT_SIZE)                \
  S(alloy_runtime_options, struct_size, ALLOY_RUNTIME_OPTIONS_STRUCT_SIZE)        \
  S(alloy_backend_info, struct_size, ALLOY_BACKEND_INFO_STRUCT_SIZE)              \
  S(alloy_host_tensor, struct_size, ALLOY_HOST_TENSOR_STRUCT_SIZE)                \
  S(alloy_program_options, struct_size, ALLOY_PROGRAM_OPTIONS_STRUCT_SIZE)        \
  S(alloy_partition_info, struct_size, ALLOY_PARTITION_INFO_STRUCT_SIZE)          \
  S(alloy_run_stats, struct_size, ALLOY_RUN_STATS_STRUCT_SIZE)                    \
  S(alloy_run_tensor, struct_size, ALLOY_RUN_TENSOR_STRUCT_SIZE)

/* ... except these, each for its reason. */
#define UNSIZED_STRUCTS(U)                                                 \
  U(alloy_kernel, "a row of the vendor's static kernel array, indexed by " \
                  "alloy_kernel_table.count; it grows with the table's "    \
                  "struct_size, never on its own")                          \
  U(alloy_kernel_tensor, "a row of alloy_kernel_call's inputs/outputs "    \
                         "arrays, which grow with the call's struct_size; " \
                         "made and read inside one plugin image")          \
  U(alloy_option, "a row of the options arrays of alloy_compile_options "  \
                  "and alloy_program_options, counted by their num_ "      \
                  "fields; a new per-option field needs a new array")       \
  U(alloy_cache_stats, "from 1.0, before the rule: frozen, a new counter " \
                       "needs a new struct")

/* ---- rows, and the checkers that read them -------------------------------
 * The checkers take a layout (structs and their fields) rather than the
 * lists above, so that the tests at the end can run them on bad structs. */

typedef struct field_row {
  const char *type, *field;
  size_t offset, size, align;
} field_row;

typedef struct struct_row {
  const char *type;
  size_t size, align;
  int (*probe)(void); /* first byte neither padding nor listed, or -1; may be NULL */
} struct_row;

/* A struct that begins with struct_size, and its size constant. */
typedef struct sized_row {
  const char *type, *member, *macro;
  size_t offset, size, constant;
} sized_row;

typedef struct layout {
  const struct_row *structs;
  int nstructs;
  const field_row *fields;
  int nfields;
  const sized_row *sized;
  int nsized;
} layout;

/* Where problems go: harness failures, or (for the tests of the checkers)
 * a count and the text of each, to be searched. */
typedef struct problems {
  bool quiet;
  int count;
  char text[4096];
} problems;

static void problem(problems *p, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void problem(problems *p, const char *file, int line, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  p->count++;
  if (!p->quiet) {
    harness_fail(file, line, "%s", msg);
    return;
  }
  size_t used = strlen(p->text);
  snprintf(p->text + used, sizeof p->text - used, "%s\n", msg);
}

#define FIELD_ROW(T, f)                                              \
  {#T, #f, offsetof(T, f), sizeof(((T *)0)->f),                      \
   alignof(__typeof__(((T *)0)->f))},
#define STRUCT_FIELD_ROWS(T) FIELDS_##T(FIELD_ROW)
static const field_row fields[] = {ABI_STRUCTS(STRUCT_FIELD_ROWS)};

#if defined(__has_builtin)
#if __has_builtin(__builtin_clear_padding)
#define HAVE_CLEAR_PADDING 1
#endif
#endif

/* With every byte set, padding cleared, and each listed member zeroed,
 * any byte still set belongs to a member the list lacks, even one that
 * slipped into what used to be padding (which no offset check can see). */
static __attribute__((unused)) int first_set_byte(const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++)
    if (b[i]) return (int)i;
  return -1;
}
#define ZERO_MEMBER(T, f) memset(&x.f, 0, sizeof x.f);
#ifdef HAVE_CLEAR_PADDING
#define PROBE_FN(T)                           \
  static int probe_##T(void) {                \
    T x;                                      \
    memset(&x, 0xff, sizeof x);               \
    __builtin_clear_padding(&x);              \
    FIELDS_##T(ZERO_MEMBER)                   \
    return first_set_byte(&x, sizeof x);      \
  }
#else
#define PROBE_FN(T) \
  static int probe_##T(void) { return -1; }
#endif
ABI_STRUCTS(PROBE_FN)

#define STRUCT_ROW(T) {#T, sizeof(T), alignof(T), probe_##T},
static const struct_row structs[] = {ABI_STRUCTS(STRUCT_ROW)};

#define SIZED_ROW(T, m, C) {#T, #m, #C, offsetof(T, m), sizeof(((T *)0)->m), C},
static const sized_row sized[] = {SIZED_STRUCTS(SIZED_ROW)};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))
static const layout abi = {structs, COUNT(structs), fields, COUNT(fields), sized, COUNT(sized)};

/* Where the last listed field of st ends, and its name; 0 and "" when none
 * is listed. */
static size_t listed_end(const layout *L, const struct_row *st, const char **last) {
  size_t end = 0;
  *last = "";
  for (int i = 0; i < L->nfields; i++)
    if (strcmp(L->fields[i].type, st->type) == 0 && L->fields[i].offset + L->fields[i].size >= end) {
      end = L->fields[i].offset + L->fields[i].size;
      *last = L->fields[i].field;
    }
  return end;
}

static const sized_row *sized_find(const layout *L, const char *type) {
  for (int i = 0; i < L->nsized; i++)
    if (strcmp(L->sized[i].type, type) == 0) return &L->sized[i];
  return NULL;
}

/* The list names every member, in order: the fields tile each struct with
 * nothing between them but alignment padding. */
static void check_tiling(const layout *L, problems *P) {
  for (int s = 0; s < L->nstructs; s++) {
    const struct_row *st = &L->structs[s];
    size_t end = 0;
    int n = 0;
    for (int i = 0; i < L->nfields; i++) {
      const field_row *fr = &L->fields[i];
      if (strcmp(fr->type, st->type) != 0) continue;
      /* Declaration order, each member where alignment puts it after the
       * one before: a gap bigger than padding holds an unlisted member. */
      size_t want = (end + fr->align - 1) / fr->align * fr->align;
      if (fr->offset != want)
        problem(P, __FILE__, __LINE__, "%s.%s is at offset %zu; after the listed member "
                "before it, it would be at %zu: a member is missing from this file's "
                "list (or out of order)", st->type, fr->field, fr->offset, want);
      end = fr->offset + fr->size;
      n++;
    }
    if (n == 0) problem(P, __FILE__, __LINE__, "%s lists no fields", st->type);
    int stray = st->probe ? st->probe() : -1;
    if (stray >= 0)
      problem(P, __FILE__, __LINE__, "%s: byte %d is neither padding nor a listed member: "
              "a member is missing from this file's list", st->type, stray);
  }
}

/* Each struct ends with its last field: sizeof is where that field ends
 * (trailing padding is where a later field would land while struct_size,
 * measured to the last field, still excluded it: fill it with a reserved
 * field). And a struct that begins with struct_size has its constant, which
 * is that same end. */
static void check_ends(const layout *L, problems *P) {
  for (int s = 0; s < L->nstructs; s++) {
    const struct_row *st = &L->structs[s];
    const char *last;
    size_t end = listed_end(L, st, &last);
    if (end != st->size)
      problem(P, __FILE__, __LINE__, "%s: sizeof is %zu but its last field, %s, ends at %zu: "
              "%zu bytes of trailing padding, which a later field would fall into; fill them "
              "with a reserved field (\"zero; makes the padding explicit\")", st->type,
              st->size, last, end, st->size - end);
    const sized_row *sr = sized_find(L, st->type);
    if (sr && sr->constant != end)
      problem(P, __FILE__, __LINE__, "%s: %s is %zu, but the last field, %s, ends at %zu: "
              "the constant must name the last field", st->type, sr->macro, sr->constant,
              last, end);
  }
}

/* Each sized struct begins with size_t struct_size, and each struct is
 * sized or unsized (by name), never both or neither: a new one takes a
 * side. */
static void check_struct_size_first(const layout *L, const char *const *unsized, int nunsized,
                                    problems *P) {
  for (int i = 0; i < L->nsized; i++)
    if (L->sized[i].offset != 0 || L->sized[i].size != sizeof(size_t))
      problem(P, __FILE__, __LINE__, "%s.%s: at offset %zu, %zu bytes; every ABI struct "
              "begins with size_t struct_size", L->sized[i].type, L->sized[i].member,
              L->sized[i].offset, L->sized[i].size);
  for (int s = 0; s < L->nstructs; s++) {
    int hits = sized_find(L, L->structs[s].type) != NULL;
    for (int i = 0; i < nunsized; i++) hits += strcmp(unsized[i], L->structs[s].type) == 0;
    if (hits != 1)
      problem(P, __FILE__, __LINE__, "%s is in %d of SIZED_STRUCTS and UNSIZED_STRUCTS; it "
              "must be in one", L->structs[s].type, hits);
  }
}

/* ---- the table file --------------------------------------------------------
 */

static const char *table_path(void) {
  const char *p = getenv("ALLOY_ABI_LAYOUT");
  return p && *p ? p : "tests/abi_layout.txt";
}

typedef struct table_row {
  char type[64], field[64]; /* field "" for a size row */
  size_t offset, size;
  unsigned vmajor, vminor;  /* a size row's version  */
  int line;
  bool used;
} table_row;

typedef struct table {
  table_row *rows;
  int n;
  long major; /* the "ALLOY_ABI_MAJOR N" row; -1 when absent */
} table;

static void table_free(table *t) {
  free(t->rows);
  t->rows = NULL;
  t->n = 0;
}

/* Rows:
 *   TYPE.FIELD OFFSET SIZE
 *   TYPE size@MAJOR.MINOR SIZE   the struct's size at that version: what a
 *                                writer of it puts in struct_size
 *   TYPE sizeof SIZE             the same at 1.1, as the rows written then
 *                                spell it (they never change)
 *   ALLOY_ABI_MAJOR N
 * '#' starts a comment. A malformed line is a failure, not a skip. */
static bool table_parse(table *t, FILE *f, const char *path, problems *P) {
  t->rows = NULL;
  t->n = 0;
  t->major = -1;
  char line[512];
  int lineno = 0, cap = 0;
  bool ok = true;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    char a[160], b[64];
    unsigned long x = 0, y = 0;
    int got = sscanf(line, "%159s %63s %lu", a, b, &y);
    if (got <= 0) continue;
    if (got == 2 && strcmp(a, "ALLOY_ABI_MAJOR") == 0) {
      t->major = strtol(b, NULL, 10);
      continue;
    }
    if (t->n == cap) {
      cap = cap ? 2 * cap : 256;
      table_row *r = realloc(t->rows, (size_t)cap * sizeof *r);
      if (!r) {
        problem(P, __FILE__, __LINE__, "out of memory");
        ok = false;
        break;
      }
      t->rows = r;
    }
    table_row *r = &t->rows[t->n];
    memset(r, 0, sizeof *r);
    r->line = lineno;
    char *dot = strchr(a, '.');
    unsigned vmaj = 0, vmin = 0;
    int vend = 0;
    bool size_row = strcmp(b, "sizeof") == 0 ||
                    (sscanf(b, "size@%u.%u%n", &vmaj, &vmin, &vend) == 2 && b[vend] == '\0');
    if (got == 3 && !dot && size_row && strlen(a) < sizeof r->type) {
      snprintf(r->type, sizeof r->type, "%s", a);
      r->size = y;
      if (strcmp(b, "sizeof") == 0) vmaj = 1, vmin = 1;
      r->vmajor = vmaj;
      r->vminor = vmin;
      t->n++;
    } else if (got == 3 && dot && dot - a < (long)sizeof r->type &&
               strlen(dot + 1) < sizeof r->field && sscanf(b, "%lu", &x) == 1) {
      snprintf(r->type, sizeof r->type, "%.*s", (int)(dot - a), a);
      snprintf(r->field, sizeof r->field, "%s", dot + 1);
      r->offset = x;
      r->size = y;
      t->n++;
    } else {
      problem(P, path, lineno, "malformed row: %s", line);
      ok = false;
    }
  }
  return ok;
}

static bool table_read(table *t, const char *path, problems *P) {
  FILE *f = fopen(path, "r");
  if (!f) {
    t->rows = NULL;
    t->n = 0;
    problem(P, __FILE__, __LINE__, "cannot read %s (run from the repository root, or set "
            "ALLOY_ABI_LAYOUT)", path);
    return false;
  }
  bool ok = table_parse(t, f, path, P);
  fclose(f);
  return ok;
}

/* The table from text, for the tests of the checkers. */
static bool table_from_text(table *t, const char *text, problems *P) {
  FILE *f = fmemopen((void *)(uintptr_t)text, strlen(text), "r");
  if (!f) {
    problem(P, __FILE__, __LINE__, "fmemopen failed");
    return false;
  }
  bool ok = table_parse(t, f, "(text)", P);
  fclose(f);
  return ok;
}

static table_row *table_find(table *t, const char *type, const char *field) {
  for (int i = 0; i < t->n; i++)
    if (strcmp(t->rows[i].type, type) == 0 && strcmp(t->rows[i].field, field) == 0)
      return &t->rows[i];
  return NULL;
}

/* The size row of type at version major.minor, or NULL. */
static const table_row *table_size_at(const table *t, const char *type, unsigned major,
                                      unsigned minor) {
  for (int i = 0; i < t->n; i++)
    if (!t->rows[i].field[0] && strcmp(t->rows[i].type, type) == 0 &&
        t->rows[i].vmajor == major && t->rows[i].vminor == minor)
      return &t->rows[i];
  return NULL;
}

/* Writes the table from the headers: done once, and again only for a
 * major version, with the diff reviewed. */
static void table_write(const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) {
    harness_fail(__FILE__, __LINE__, "cannot write %s", path);
    return;
  }
  fprintf(f,
          "# tests/abi_layout.txt: the layout of every public struct that crosses a\n"
          "# binary boundary, as tests/test_abi_layout.c checks it (LP64: x86_64, aarch64).\n"
          "#   STRUCT.FIELD OFFSET SIZE   bytes from the struct's start, bytes\n"
          "#   STRUCT size@MAJOR.MINOR SIZE   the struct's size at that version: what a\n"
          "#                              writer of that version puts in struct_size\n"
          "# Rows never change within a major version: a minor appends fields, their\n"
          "# rows, and a size row for each struct that grew. Written by the test with\n"
          "# ALLOY_ABI_LAYOUT_WRITE=PATH.\n\n"
          "ALLOY_ABI_MAJOR %d\n",
          ALLOY_ABI_MAJOR);
  for (int s = 0; s < abi.nstructs; s++) {
    fprintf(f, "\n%s size@%d.%d %zu\n", abi.structs[s].type, ALLOY_ABI_MAJOR, ALLOY_ABI_MINOR,
            abi.structs[s].size);
    for (int i = 0; i < abi.nfields; i++)
      if (strcmp(abi.fields[i].type, abi.structs[s].type) == 0)
        fprintf(f, "%s.%s %zu %zu\n", abi.fields[i].type, abi.fields[i].field,
                abi.fields[i].offset, abi.fields[i].size);
  }
  fclose(f);
  printf("  wrote %s\n", path);
}

/* The layout against the table, headers at version major.minor. */
static void check_table(const layout *L, table *t, const char *path, long major, long minor,
                        problems *P) {
  if (t->major != major)
    problem(P, path, 0, "the table is for ABI major %ld, the headers are %ld: a new major "
            "needs a regenerated table", t->major, major);
  for (int i = 0; i < L->nfields; i++) {
    const field_row *fr = &L->fields[i];
    table_row *r = table_find(t, fr->type, fr->field);
    if (!r) {
      problem(P, path, 0, "%s.%s (offset %zu, size %zu) has no row: a new field? append "
              "\"%s.%s %zu %zu\"", fr->type, fr->field, fr->offset, fr->size, fr->type,
              fr->field, fr->offset, fr->size);
      continue;
    }
    r->used = true;
    if (r->offset != fr->offset)
      problem(P, path, r->line, "%s.%s: expected offset %zu (the table), actual %zu: a field "
              "moved", fr->type, fr->field, r->offset, fr->offset);
    if (r->size != fr->size)
      problem(P, path, r->line, "%s.%s: expected size %zu (the table), actual %zu: retyped?",
              fr->type, fr->field, r->size, fr->size);
  }
  for (int s = 0; s < L->nstructs; s++) {
    const struct_row *st = &L->structs[s];
    const table_row *newest = NULL;
    for (int i = 0; i < t->n; i++) {
      table_row *r = &t->rows[i];
      if (r->field[0] || strcmp(r->type, st->type) != 0) continue;
      r->used = true;
      if ((long)r->vmajor != major || (long)r->vminor > minor) {
        problem(P, path, r->line, "%s: a size row for ABI %u.%u, but the headers are "
                "%ld.%ld", st->type, r->vmajor, r->vminor, major, minor);
        continue;
      }
      /* What an older writer put in struct_size: the end of a field. */
      bool at_end = false;
      for (int k = 0; k < L->nfields; k++)
        at_end |= strcmp(L->fields[k].type, st->type) == 0 &&
                  L->fields[k].offset + L->fields[k].size == r->size;
      if (!at_end)
        problem(P, path, r->line, "%s: its size at %u.%u, %zu, is not where any listed field "
                "ends: a field moved or was inserted", st->type, r->vmajor, r->vminor,
                r->size);
      /* Each minor that lists the struct again lists it bigger. */
      for (int k = 0; k < i; k++) {
        const table_row *o = &t->rows[k];
        if (o->field[0] || strcmp(o->type, st->type) != 0 || o->vmajor != r->vmajor) continue;
        const table_row *older = o->vminor < r->vminor ? o : r, *later = older == o ? r : o;
        if (o->vminor == r->vminor)
          problem(P, path, r->line, "%s: two size rows for %u.%u (lines %d and %d)", st->type,
                  r->vmajor, r->vminor, o->line, r->line);
        else if (later->size <= older->size)
          problem(P, path, later->line, "%s: its size at %u.%u, %zu, is not bigger than at "
                  "%u.%u, %zu", st->type, later->vmajor, later->vminor, later->size,
                  older->vmajor, older->vminor, older->size);
      }
      if (!newest || r->vminor > newest->vminor) newest = r;
    }
    if (!newest)
      problem(P, path, 0, "%s has no size row: append \"%s size@%ld.%ld %zu\"", st->type,
              st->type, major, minor, st->size);
    else if (newest->size != st->size)
      problem(P, path, newest->line, "%s: sizeof is %zu, its newest size row (%u.%u) says "
              "%zu: fields were appended? append \"%s size@%ld.%ld %zu\"", st->type, st->size,
              newest->vmajor, newest->vminor, newest->size, st->type, major, minor, st->size);
  }
  for (int i = 0; i < t->n; i++)
    if (!t->rows[i].used)
      problem(P, path, t->rows[i].line, "row %s%s%s is no field or struct the test lists: a "
              "field removed or renamed? (a major change)", t->rows[i].type,
              t->rows[i].field[0] ? "." : " size", t->rows[i].field);
}

/* ---- tests ------------------------------------------------------------------
 */

TEST(abi_layout_matches_table) {
#if !defined(__LP64__)
  harness_fail(__FILE__, __LINE__, "tests/abi_layout.txt is for LP64 targets; this one needs "
               "its own table");
  return;
#endif
  const char *out = getenv("ALLOY_ABI_LAYOUT_WRITE");
  if (out && *out) table_write(out);
  problems P = {0};
  table t;
  if (table_read(&t, table_path(), &P))
    check_table(&abi, &t, table_path(), ALLOY_ABI_MAJOR, ALLOY_ABI_MINOR, &P);
  table_free(&t);
}

/* The list in this file must name every member: a member added to a
 * header and forgotten here would otherwise never be pinned. */
TEST(abi_layout_lists_every_field) {
  problems P = {0};
  check_tiling(&abi, &P);
#ifndef HAVE_CLEAR_PADDING
  printf("  note: no __builtin_clear_padding with this compiler: a member "
         "added inside existing padding is caught only by GCC builds\n");
#endif
}

TEST(abi_structs_end_at_their_last_field) {
  problems P = {0};
  check_ends(&abi, &P);
}

TEST(abi_structs_begin_with_struct_size) {
#define UNSIZED_NAME(T, why) #T,
  static const char *const unsized[] = {UNSIZED_STRUCTS(UNSIZED_NAME)};
#undef UNSIZED_NAME
  problems P = {0};
  check_struct_size_first(&abi, unsized, COUNT(unsized), &P);
}

/* The sizes of older minors that the headers spell as constants are the
 * table's: ALLOY_PLUGIN_API_1_1_STRUCT_SIZE is what a 1.1 plugin wrote. */
TEST(abi_older_minor_sizes_match_table) {
  problems P = {0};
  table t;
  if (table_read(&t, table_path(), &P)) {
    const table_row *r = table_size_at(&t, "alloy_plugin_api", 1, 1);
    CHECK(r != NULL);
    if (r) CHECK_INT(ALLOY_PLUGIN_API_1_1_STRUCT_SIZE, r->size);
    r = table_size_at(&t, "alloy_plugin_api", 1, 2);
    CHECK(r != NULL);
    if (r) CHECK_INT(ALLOY_PLUGIN_API_1_2_STRUCT_SIZE, r->size);
    /* And 1.0's ended with the compile cache entries, before capabilities. */
    CHECK_INT(ALLOY_STRUCT_SIZE(alloy_plugin_api, executable_deserialize),
              offsetof(alloy_plugin_api, capabilities));
  }
  table_free(&t);
}

/* What can never move, not even in a new major: the fields a host and a
 * plugin of different majors read from each other to say "version X, not
 * Y". Checked against numbers written here, not the table, so that a
 * regenerated table cannot carry them off. */
TEST(abi_frozen_prefixes) {
  CHECK_INT(offsetof(alloy_host_api, struct_size), 0);
  CHECK_INT(offsetof(alloy_host_api, abi_major), 8);
  CHECK_INT(offsetof(alloy_host_api, abi_minor), 12);
  CHECK_INT(offsetof(alloy_host_api, error_new), 16);
  CHECK_INT(offsetof(alloy_host_api, error_free), 24);
  CHECK_INT(offsetof(alloy_host_api, log), 32);
  CHECK_INT(offsetof(alloy_plugin_api, struct_size), 0);
  CHECK_INT(offsetof(alloy_plugin_api, abi_major), 8);
  CHECK_INT(offsetof(alloy_plugin_api, abi_minor), 12);
  CHECK_INT(sizeof(((alloy_host_api *)0)->abi_major), 4);
  CHECK_INT(sizeof(((alloy_plugin_api *)0)->abi_major), 4);
  CHECK_STR(ALLOY_PLUGIN_ENTRY, "alloy_plugin_init");
}

/* The host table's argument kinds are the IR's, value for value, so that
 * a host can hand them over without a translation table going stale. */
TEST(abi_arg_type_matches_arg_kind) {
  static const struct {
    const char *name;
    int type, kind;
  } pairs[] = {
      {"NONE", ALLOY_ARG_TYPE_NONE, ALLOY_ARG_NONE},
      {"VALUE", ALLOY_ARG_TYPE_VALUE, ALLOY_ARG_VALUE},
      {"INT", ALLOY_ARG_TYPE_INT, ALLOY_ARG_INT},
      {"FLOAT", ALLOY_ARG_TYPE_FLOAT, ALLOY_ARG_FLOAT},
      {"BOOL", ALLOY_ARG_TYPE_BOOL, ALLOY_ARG_BOOL},
      {"STR", ALLOY_ARG_TYPE_STR, ALLOY_ARG_STR},
      {"DTYPE", ALLOY_ARG_TYPE_DTYPE, ALLOY_ARG_DTYPE},
      {"LAYOUT", ALLOY_ARG_TYPE_LAYOUT, ALLOY_ARG_LAYOUT},
      {"DEVICE", ALLOY_ARG_TYPE_DEVICE, ALLOY_ARG_DEVICE},
      {"MEMORY_FORMAT", ALLOY_ARG_TYPE_MEMORY_FORMAT, ALLOY_ARG_MEMORY_FORMAT},
      {"LIST", ALLOY_ARG_TYPE_LIST, ALLOY_ARG_LIST},
  };
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
    if (pairs[i].type != pairs[i].kind)
      harness_fail(__FILE__, __LINE__, "ALLOY_ARG_TYPE_%s is %d, "
                   "ALLOY_ARG_%s is %d", pairs[i].name, pairs[i].type,
                   pairs[i].name, pairs[i].kind);
  /* The last of both: an enum value appended to one and not the other
   * shows here, as long as it is appended after LIST. */
  CHECK_INT(ALLOY_ARG_TYPE_LIST, 10);
  CHECK_INT(ALLOY_ARG_LIST, 10);
  /* alloy_value_kind, which the host table reports as an int. */
  CHECK_INT(ALLOY_VALUE_TENSOR, 0);
  CHECK_INT(ALLOY_VALUE_INT, 1);
  CHECK_INT(ALLOY_VALUE_FLOAT, 2);
  CHECK_INT(ALLOY_VALUE_BOOL, 3);
}

/* ---- the checkers, on bad structs -------------------------------------------
 * Each struct here is a mistake the checkers must report; the test fails
 * when one goes unreported (or when a good struct is reported). */

/* Right: no trailing padding, constant at the last field. */
typedef struct good_struct {
  size_t struct_size;
  int32_t a, b;
  void *p;
} good_struct;
#define GOOD_STRUCT_STRUCT_SIZE ALLOY_STRUCT_SIZE(good_struct, p)

/* Ends in an int after a double: 4 bytes of trailing padding. */
typedef struct bad_padded {
  size_t struct_size;
  double scale;
  int32_t count;
} bad_padded;
#define BAD_PADDED_STRUCT_SIZE ALLOY_STRUCT_SIZE(bad_padded, count)

/* Its constant names a field that is no longer the last. */
typedef struct bad_stale {
  size_t struct_size;
  int64_t a, b;
} bad_stale;
#define BAD_STALE_STRUCT_SIZE ALLOY_STRUCT_SIZE(bad_stale, a)

/* `inserted` went in before `count`, which moved from 8 to 12. */
typedef struct bad_moved {
  size_t struct_size;
  int32_t inserted;
  int32_t count;
  void *data;
} bad_moved;

/* `y` was appended, with its row, but without a size row for the minor. */
typedef struct bad_grown {
  size_t struct_size;
  int64_t x, y;
} bad_grown;

#define BAD_FIELDS(F)                                                              \
  F(good_struct, struct_size) F(good_struct, a) F(good_struct, b) F(good_struct, p) \
  F(bad_padded, struct_size) F(bad_padded, scale) F(bad_padded, count)             \
  F(bad_stale, struct_size) F(bad_stale, a) F(bad_stale, b)                        \
  F(bad_moved, struct_size) F(bad_moved, inserted) F(bad_moved, count)             \
  F(bad_moved, data) F(bad_grown, struct_size) F(bad_grown, x) F(bad_grown, y)
static const field_row bad_fields[] = {BAD_FIELDS(FIELD_ROW)};
#define BAD_STRUCT_ROW(T) {#T, sizeof(T), alignof(T), NULL}
static const struct_row bad_structs[] = {BAD_STRUCT_ROW(good_struct), BAD_STRUCT_ROW(bad_padded),
                                         BAD_STRUCT_ROW(bad_stale), BAD_STRUCT_ROW(bad_moved),
                                         BAD_STRUCT_ROW(bad_grown)};
static const sized_row bad_sized[] = {
    SIZED_ROW(good_struct, struct_size, GOOD_STRUCT_STRUCT_SIZE)
    SIZED_ROW(bad_padded, struct_size, BAD_PADDED_STRUCT_SIZE)
    SIZED_ROW(bad_stale, struct_size, BAD_STALE_STRUCT_SIZE)};

/* A layout of one struct of bad_structs, with its fields and size row. */
static layout one_struct(int s) {
  const char *type = bad_structs[s].type;
  int first = -1, n = 0;
  for (int i = 0; i < COUNT(bad_fields); i++)
    if (strcmp(bad_fields[i].type, type) == 0) {
      if (first < 0) first = i;
      n++;
    }
  layout L = {&bad_structs[s], 1, &bad_fields[first], n, NULL, 0};
  for (int i = 0; i < COUNT(bad_sized); i++)
    if (strcmp(bad_sized[i].type, type) == 0) L.sized = &bad_sized[i], L.nsized = 1;
  return L;
}

static void expect_reported(const problems *P, const char *what, const char *needle, int line) {
  if (!strstr(P->text, needle))
    harness_fail(__FILE__, line, "%s went unreported: no \"%s\" in:\n%s", what, needle,
                 P->count ? P->text : "  (no problem reported)\n");
}

TEST(abi_checker_reports_trailing_padding_and_stale_constants) {
  problems P = {.quiet = true};
  layout good = one_struct(0), padded = one_struct(1), stale = one_struct(2);
  check_tiling(&good, &P);
  check_ends(&good, &P);
  if (P.count) harness_fail(__FILE__, __LINE__, "good_struct was reported:\n%s", P.text);

  P = (problems){.quiet = true};
  check_ends(&padded, &P);
  CHECK_INT(P.count, 1);
  expect_reported(&P, "bad_padded's trailing padding",
                  "bad_padded: sizeof is 24 but its last field, count, ends at 20: 4 bytes "
                  "of trailing padding", __LINE__);

  P = (problems){.quiet = true};
  check_ends(&stale, &P);
  CHECK_INT(P.count, 1);
  expect_reported(&P, "bad_stale's constant",
                  "bad_stale: BAD_STALE_STRUCT_SIZE is 16, but the last field, b, ends at 24",
                  __LINE__);

  /* A struct that begins with something else but claims a size constant. */
  static const sized_row not_first[] = {SIZED_ROW(bad_moved, count, 20)};
  layout nf = one_struct(3);
  nf.sized = not_first;
  nf.nsized = 1;
  P = (problems){.quiet = true};
  check_struct_size_first(&nf, NULL, 0, &P);
  expect_reported(&P, "a struct not beginning with struct_size",
                  "bad_moved.count: at offset 12, 4 bytes; every ABI struct begins with "
                  "size_t struct_size", __LINE__);
}

/* Parses text as a table and checks layout L against it, headers at 1.minor. */
static problems check_against(const layout *L, const char *text, long minor) {
  problems P = {.quiet = true};
  table t;
  if (table_from_text(&t, text, &P)) check_table(L, &t, "(text)", 1, minor, &P);
  table_free(&t);
  return P;
}

TEST(abi_checker_reports_a_moved_field_and_a_missing_size_row) {
  /* Each table as it was before the mistake. */
  layout good = one_struct(0), moved = one_struct(3), grown = one_struct(4);
  problems P = check_against(&good,
                             "ALLOY_ABI_MAJOR 1\n"
                             "good_struct size@1.0 24\n"
                             "good_struct.struct_size 0 8\n"
                             "good_struct.a 8 4\n"
                             "good_struct.b 12 4\n"
                             "good_struct.p 16 8\n",
                             2);
  if (P.count) harness_fail(__FILE__, __LINE__, "good_struct was reported:\n%s", P.text);

  /* count was at 8, before `inserted` went in ahead of it. */
  P = check_against(&moved,
                    "ALLOY_ABI_MAJOR 1\n"
                    "bad_moved size@1.0 24\n"
                    "bad_moved.struct_size 0 8\n"
                    "bad_moved.count 8 4\n"
                    "bad_moved.data 16 8\n",
                    2);
  expect_reported(&P, "bad_moved's moved field",
                  "bad_moved.count: expected offset 8 (the table), actual 12: a field moved",
                  __LINE__);
  expect_reported(&P, "bad_moved's inserted field",
                  "bad_moved.inserted (offset 8, size 4) has no row", __LINE__);

  /* y appended with its row, but no size row for the new minor. The 1.1
   * size is spelled as the rows written at 1.1 spell it. */
  static const char grown_text[] = "ALLOY_ABI_MAJOR 1\n"
                                   "bad_grown sizeof 16\n"
                                   "bad_grown.struct_size 0 8\n"
                                   "bad_grown.x 8 8\n"
                                   "bad_grown.y 16 8\n";
  P = check_against(&grown, grown_text, 2);
  CHECK_INT(P.count, 1);
  expect_reported(&P, "bad_grown's missing size row",
                  "bad_grown: sizeof is 24, its newest size row (1.1) says 16: fields were "
                  "appended? append \"bad_grown size@1.2 24\"", __LINE__);
  /* With the row appended, it passes; a size row from a minor the headers
   * do not have, or one that does not grow, is reported. */
  char text[512];
  snprintf(text, sizeof text, "%sbad_grown size@1.2 24\n", grown_text);
  P = check_against(&grown, text, 2);
  if (P.count) harness_fail(__FILE__, __LINE__, "bad_grown with its size row:\n%s", P.text);
  P = check_against(&grown, text, 1);
  expect_reported(&P, "a size row newer than the headers",
                  "bad_grown: a size row for ABI 1.2, but the headers are 1.1", __LINE__);
  snprintf(text, sizeof text, "%sbad_grown size@1.2 16\n", grown_text);
  P = check_against(&grown, text, 2);
  expect_reported(&P, "a size row that does not grow",
                  "bad_grown: its size at 1.2, 16, is not bigger than at 1.1, 16", __LINE__);
}
