/*
 * tests/test_abi_layout.c: pins the memory layout of every public struct
 * that crosses a binary boundary (the plugin ABI of alloy/plugin.h, the
 * kernel-table helper's structs, the host API of alloy/runtime.h) to the
 * table in tests/abi_layout.txt, so that a change that moves, retypes or
 * inserts a field fails CI instead of crashing a vendor's plugin built
 * against the previous headers (DESIGN.md, "The plugin ABI: rules", rule 2).
 *
 * The fields are listed here once, as X-macros, in declaration order. The
 * test checks three things against that list:
 *   - the table: every listed field has a row with its offset and size, and
 *     every struct its sizeof; every row is a listed field (no stale rows);
 *   - the list itself is complete: the fields tile the struct with nothing
 *     but alignment padding between them, and (with GCC's
 *     __builtin_clear_padding) no byte that is neither padding nor a listed
 *     field; so a field added to a header but not here fails too;
 *   - the conventions: each struct begins with size_t struct_size (the two
 *     kernel-table row structs do not, and say why), the frozen prefixes of
 *     the two tables, and ALLOY_ARG_TYPE_* == alloy_arg_kind.
 *
 * A minor version appends fields: add them to the list and append their
 * rows; existing rows never change. A major version may change rows:
 * regenerate the table with ALLOY_ABI_LAYOUT_WRITE=tests/abi_layout.txt
 * (the test writes it from the headers) and review the diff.
 * The table is for LP64 targets (x86_64, aarch64 Linux), where it was made.
 */
#include <limits.h>
#include <stdalign.h>
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
  F(alloy_host_api, claims_add)

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
  F(alloy_plugin_api, capabilities)

#define FIELDS_alloy_ext(F) \
  F(alloy_ext, struct_size) F(alloy_ext, type) F(alloy_ext, next)

#define FIELDS_alloy_ext_stream(F) \
  F(alloy_ext_stream, base) F(alloy_ext_stream, stream)

#define FIELDS_alloy_device_info(F)                                 \
  F(alloy_device_info, struct_size) F(alloy_device_info, name)      \
  F(alloy_device_info, kind) F(alloy_device_info, memory_bytes)

#define FIELDS_alloy_compile_options(F)                                  \
  F(alloy_compile_options, struct_size) F(alloy_compile_options, device) \
  F(alloy_compile_options, opt_level) F(alloy_compile_options, ext)

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
  F(alloy_kernel_table, kernels) F(alloy_kernel_table, count)

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
  F(alloy_kernel_call, input_item) F(alloy_kernel_call, alloc_output)

#define FIELDS_alloy_runtime_options(F)                                 \
  F(alloy_runtime_options, struct_size)                                 \
  F(alloy_runtime_options, plugin_dirs)                                 \
  F(alloy_runtime_options, num_plugin_dirs)                             \
  F(alloy_runtime_options, no_default_paths)

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
  F(alloy_program_options, link_bytes_per_s)

#define FIELDS_alloy_partition_info(F)                                  \
  F(alloy_partition_info, struct_size) F(alloy_partition_info, backend) \
  F(alloy_partition_info, num_nodes) F(alloy_partition_info, num_inputs) \
  F(alloy_partition_info, num_outputs) F(alloy_partition_info, cost)    \
  F(alloy_partition_info, bytes_in)

/* Every struct that crosses a boundary, in the table's order. */
#define ABI_STRUCTS(S)                                                   \
  S(alloy_host_api) S(alloy_plugin_api) S(alloy_ext) S(alloy_ext_stream) \
  S(alloy_device_info) S(alloy_compile_options) S(alloy_tensor)          \
  S(alloy_execute_args) S(alloy_compat_info) S(alloy_kernel_table)       \
  S(alloy_kernel) S(alloy_kernel_tensor) S(alloy_kernel_call)            \
  S(alloy_runtime_options) S(alloy_backend_info) S(alloy_host_tensor)    \
  S(alloy_program_options) S(alloy_partition_info)

/* Each struct begins with a size_t struct_size, by the member that holds
 * it (alloy_ext_stream's is its base's). */
#define SIZED_STRUCTS(S)                                                    \
  S(alloy_host_api, struct_size) S(alloy_plugin_api, struct_size)           \
  S(alloy_ext, struct_size) S(alloy_ext_stream, base.struct_size)           \
  S(alloy_device_info, struct_size) S(alloy_compile_options, struct_size)   \
  S(alloy_tensor, struct_size) S(alloy_execute_args, struct_size)           \
  S(alloy_compat_info, struct_size) S(alloy_kernel_table, struct_size)      \
  S(alloy_kernel_call, struct_size) S(alloy_runtime_options, struct_size)   \
  S(alloy_backend_info, struct_size) S(alloy_host_tensor, struct_size)      \
  S(alloy_program_options, struct_size) S(alloy_partition_info, struct_size)

/* ... except these, each for its reason. */
#define UNSIZED_STRUCTS(U)                                                 \
  U(alloy_kernel, "a row of the vendor's static kernel array, indexed by " \
                  "alloy_kernel_table.count; it grows with the table's "    \
                  "struct_size, never on its own")                          \
  U(alloy_kernel_tensor, "a row of alloy_kernel_call's inputs/outputs "    \
                         "arrays, which grow with the call's struct_size; " \
                         "made and read inside one plugin image")

/* ---- the rows the lists make ---------------------------------------------
 */

typedef struct field_row {
  const char *type, *field;
  size_t offset, size, align;
} field_row;

typedef struct struct_row {
  const char *type;
  size_t size, align;
  int (*probe)(void); /* first byte neither padding nor listed, or -1 */
} struct_row;

#define FIELD_ROW(T, f)                                              \
  {#T, #f, offsetof(T, f), sizeof(((T *)0)->f),                      \
   alignof(__typeof__(((T *)0)->f))},
#define STRUCT_FIELD_ROWS(T) FIELDS_##T(FIELD_ROW)
static const field_row fields[] = {ABI_STRUCTS(STRUCT_FIELD_ROWS)};
#define NFIELDS ((int)(sizeof fields / sizeof fields[0]))

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
#define NSTRUCTS ((int)(sizeof structs / sizeof structs[0]))

/* ---- the table file --------------------------------------------------------
 */

static const char *table_path(void) {
  const char *p = getenv("ALLOY_ABI_LAYOUT");
  return p && *p ? p : "tests/abi_layout.txt";
}

typedef struct table_row {
  char type[64], field[64]; /* field "" for a sizeof row */
  size_t offset, size;
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

/* Rows: "TYPE.FIELD OFFSET SIZE", "TYPE sizeof SIZE", "ALLOY_ABI_MAJOR N";
 * '#' starts a comment. A malformed line is a failure, not a skip. */
static bool table_read(table *t, const char *path) {
  t->rows = NULL;
  t->n = 0;
  t->major = -1;
  FILE *f = fopen(path, "r");
  if (!f) {
    harness_fail(__FILE__, __LINE__, "cannot read %s (run from the repository "
                 "root, or set ALLOY_ABI_LAYOUT)", path);
    return false;
  }
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
        harness_fail(__FILE__, __LINE__, "out of memory");
        ok = false;
        break;
      }
      t->rows = r;
    }
    table_row *r = &t->rows[t->n];
    memset(r, 0, sizeof *r);
    r->line = lineno;
    char *dot = strchr(a, '.');
    if (got == 3 && !dot && strcmp(b, "sizeof") == 0 &&
        strlen(a) < sizeof r->type) {
      snprintf(r->type, sizeof r->type, "%s", a);
      r->size = y;
      t->n++;
    } else if (got == 3 && dot && dot - a < (long)sizeof r->type &&
               strlen(dot + 1) < sizeof r->field &&
               sscanf(b, "%lu", &x) == 1) {
      snprintf(r->type, sizeof r->type, "%.*s", (int)(dot - a), a);
      snprintf(r->field, sizeof r->field, "%s", dot + 1);
      r->offset = x;
      r->size = y;
      t->n++;
    } else {
      harness_fail(path, lineno, "malformed row: %s", line);
      ok = false;
    }
  }
  fclose(f);
  return ok;
}

static table_row *table_find(table *t, const char *type, const char *field) {
  for (int i = 0; i < t->n; i++)
    if (strcmp(t->rows[i].type, type) == 0 &&
        strcmp(t->rows[i].field, field) == 0)
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
          "# tests/abi_layout.txt: the layout of every public struct that "
          "crosses a\n"
          "# binary boundary, as tests/test_abi_layout.c checks it (LP64: "
          "x86_64, aarch64).\n"
          "#   STRUCT.FIELD OFFSET SIZE   bytes from the struct's start, "
          "bytes\n"
          "#   STRUCT sizeof SIZE\n"
          "# Rows never change within a major version: a minor appends "
          "fields, and\n"
          "# their rows. Written by the test with ALLOY_ABI_LAYOUT_WRITE=PATH."
          "\n\n"
          "ALLOY_ABI_MAJOR %d\n",
          ALLOY_ABI_MAJOR);
  for (int s = 0; s < NSTRUCTS; s++) {
    fprintf(f, "\n%s sizeof %zu\n", structs[s].type, structs[s].size);
    for (int i = 0; i < NFIELDS; i++)
      if (strcmp(fields[i].type, structs[s].type) == 0)
        fprintf(f, "%s.%s %zu %zu\n", fields[i].type, fields[i].field,
                fields[i].offset, fields[i].size);
  }
  fclose(f);
  printf("  wrote %s\n", path);
}

/* ---- tests ------------------------------------------------------------------
 */

TEST(abi_layout_matches_table) {
#if !defined(__LP64__)
  harness_fail(__FILE__, __LINE__, "tests/abi_layout.txt is for LP64 "
               "targets; this one needs its own table");
  return;
#endif
  const char *out = getenv("ALLOY_ABI_LAYOUT_WRITE");
  if (out && *out) table_write(out);
  table t;
  if (!table_read(&t, table_path())) {
    table_free(&t);
    return;
  }
  if (t.major != ALLOY_ABI_MAJOR)
    harness_fail(table_path(), 0, "the table is for ABI major %ld, the "
                 "headers are %d: a new major needs a regenerated table",
                 t.major, ALLOY_ABI_MAJOR);
  for (int s = 0; s < NSTRUCTS; s++) {
    table_row *r = table_find(&t, structs[s].type, "");
    if (!r) {
      harness_fail(table_path(), 0, "no row \"%s sizeof %zu\"",
                   structs[s].type, structs[s].size);
    } else {
      r->used = true;
      if (r->size != structs[s].size)
        harness_fail(table_path(), r->line, "%s: expected sizeof %zu (the "
                     "table), actual %zu", structs[s].type, r->size,
                     structs[s].size);
    }
  }
  for (int i = 0; i < NFIELDS; i++) {
    const field_row *fr = &fields[i];
    table_row *r = table_find(&t, fr->type, fr->field);
    if (!r) {
      harness_fail(table_path(), 0, "%s.%s (offset %zu, size %zu) has no "
                   "row: a new field? append \"%s.%s %zu %zu\"", fr->type,
                   fr->field, fr->offset, fr->size, fr->type, fr->field,
                   fr->offset, fr->size);
      continue;
    }
    r->used = true;
    if (r->offset != fr->offset)
      harness_fail(table_path(), r->line, "%s.%s: expected offset %zu (the "
                   "table), actual %zu", fr->type, fr->field, r->offset,
                   fr->offset);
    if (r->size != fr->size)
      harness_fail(table_path(), r->line, "%s.%s: expected size %zu (the "
                   "table), actual %zu: retyped?", fr->type, fr->field,
                   r->size, fr->size);
  }
  for (int i = 0; i < t.n; i++)
    if (!t.rows[i].used)
      harness_fail(table_path(), t.rows[i].line, "row %s%s%s is no field the "
                   "test lists: a field removed or renamed? (a major change)",
                   t.rows[i].type, t.rows[i].field[0] ? "." : " sizeof",
                   t.rows[i].field);
  table_free(&t);
}

/* The list in this file must name every member: a member added to a
 * header and forgotten here would otherwise never be pinned. */
TEST(abi_layout_lists_every_field) {
  for (int s = 0; s < NSTRUCTS; s++) {
    const struct_row *st = &structs[s];
    size_t end = 0;
    int n = 0;
    for (int i = 0; i < NFIELDS; i++) {
      const field_row *fr = &fields[i];
      if (strcmp(fr->type, st->type) != 0) continue;
      /* Declaration order, each member where alignment puts it after the
       * one before: a gap bigger than padding holds an unlisted member. */
      size_t want = (end + fr->align - 1) / fr->align * fr->align;
      if (fr->offset != want)
        harness_fail(__FILE__, __LINE__, "%s.%s is at offset %zu; after the "
                     "listed member before it, it would be at %zu: a member "
                     "is missing from this file's list (or out of order)",
                     st->type, fr->field, fr->offset, want);
      end = fr->offset + fr->size;
      n++;
    }
    if (n == 0) harness_fail(__FILE__, __LINE__, "%s lists no fields", st->type);
    size_t want = (end + st->align - 1) / st->align * st->align;
    if (st->size != want)
      harness_fail(__FILE__, __LINE__, "%s: sizeof is %zu but its listed "
                   "members end at %zu (%zu with tail padding): a member at "
                   "the end is missing from this file's list", st->type,
                   st->size, end, want);
    int stray = st->probe();
    if (stray >= 0)
      harness_fail(__FILE__, __LINE__, "%s: byte %d is neither padding nor a "
                   "listed member: a member is missing from this file's list",
                   st->type, stray);
  }
#ifndef HAVE_CLEAR_PADDING
  printf("  note: no __builtin_clear_padding with this compiler: a member "
         "added inside existing padding is caught only by GCC builds\n");
#endif
}

typedef struct sized_row {
  const char *type, *member;
  size_t offset, size;
} sized_row;

TEST(abi_structs_begin_with_struct_size) {
#define SIZED_ROW(T, m) {#T, #m, offsetof(T, m), sizeof(((T *)0)->m)},
#define UNSIZED_NAME(T, why) #T,
  static const sized_row sized[] = {SIZED_STRUCTS(SIZED_ROW)};
  static const char *const unsized[] = {UNSIZED_STRUCTS(UNSIZED_NAME)};
  for (size_t i = 0; i < sizeof sized / sizeof sized[0]; i++) {
    if (sized[i].offset != 0 || sized[i].size != sizeof(size_t))
      harness_fail(__FILE__, __LINE__, "%s.%s: at offset %zu, %zu bytes; "
                   "every ABI struct begins with size_t struct_size",
                   sized[i].type, sized[i].member, sized[i].offset,
                   sized[i].size);
  }
  /* Each listed struct is in exactly one of the two lists, so a new
   * struct has to take a side. */
  for (int s = 0; s < NSTRUCTS; s++) {
    int hits = 0;
    for (size_t i = 0; i < sizeof sized / sizeof sized[0]; i++)
      hits += strcmp(sized[i].type, structs[s].type) == 0;
    for (size_t i = 0; i < sizeof unsized / sizeof unsized[0]; i++)
      hits += strcmp(unsized[i], structs[s].type) == 0;
    if (hits != 1)
      harness_fail(__FILE__, __LINE__, "%s is in %d of SIZED_STRUCTS and "
                   "UNSIZED_STRUCTS; it must be in one", structs[s].type,
                   hits);
  }
#undef SIZED_ROW
#undef UNSIZED_NAME
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
