/*
 * sdk/kernel_table/kt_internal.h: what the files of the kernel-table helper
 * share. kt_signature.c reads the two little languages of a kernel row (the
 * dtype constraint and the signature string) and matches rows to nodes;
 * kernel_table.c is the plugin around them (entry, devices, buffers, queues,
 * claim); kt_execute.c compiles a partition into call plans and runs them.
 *
 * The helper is linked into every plugin (liballoy_kernel_table.a, built
 * -fvisibility=hidden) and into liballoy for the built-in reference backend,
 * so its shared names carry the alloy_kt_ prefix and hidden visibility: they
 * never leave the image they are linked into. It uses only the host table,
 * never a function of liballoy, so that a plugin has no undefined alloy_
 * symbol (tests/plugin_symbols.sh checks).
 */
#ifndef ALLOY_KT_INTERNAL_H
#define ALLOY_KT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloy/kernel_table.h"

#if defined(__GNUC__)
#define KT_HIDDEN __attribute__((visibility("hidden")))
#define KT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define KT_HIDDEN
#define KT_PRINTF(f, a)
#endif

/* The IR caps ranks at 16 (ALLOY_MAX_RANK); operands are staged in fixed
 * arrays of this size, and a node with a larger operand is not claimed. */
#define KT_MAX_RANK 16
/* A C function with more parameters than this is not a kernel anyone
 * writes by hand; the bound keeps a call's argument block on the stack. */
#define KT_MAX_PARAMS 32

/* ---- dtypes (our own table: plugins cannot call alloy_dtype_size) ------ */

KT_HIDDEN size_t alloy_kt_dtype_size(alloy_dtype t);
KT_HIDDEN const char *alloy_kt_dtype_name(alloy_dtype t); /* "f32", "?" */

/* ---- op names (kt_opname.c) ------------------------------------------- */

/* Whether name is an op the host's registry knows, written as a graph
 * names it ("aten.relu.default"); else false with why: the nearest known
 * name, found by asking op_find (the host's) about candidates. */
KT_HIDDEN bool alloy_kt_op_name_ok(int (*op_find)(const char *), const char *name, char *why,
                                   size_t cap);

/* ---- signatures -------------------------------------------------------- */

typedef enum kt_param_kind {
  KT_P_DATA,     /* inK / outK            void*            */
  KT_P_NUMEL,    /* numel(X)              int64_t          */
  KT_P_RANK,     /* rank(X)               int32_t          */
  KT_P_SIZE,     /* size(X, d)            int64_t          */
  KT_P_SIZES,    /* sizes(X)              const int64_t*   */
  KT_P_STRIDES,  /* strides(X)            const int64_t*   */
  KT_P_BSTRIDES, /* bstrides(X)           const int64_t*   */
  KT_P_ARG,      /* arg(NAME):T           T                */
  KT_P_CALL,     /* call                  alloy_kernel_call* */
} kt_param_kind;

typedef enum kt_scalar {
  KT_S_I32,
  KT_S_I64,
  KT_S_F32,
  KT_S_F64,
  KT_S_BOOL, /* passed as int */
} kt_scalar;

typedef struct kt_param {
  uint8_t kind;   /* kt_param_kind */
  uint8_t is_out; /* the operand X is outK (else inK) */
  uint8_t scalar; /* kt_scalar of arg(NAME):T */
  int32_t index;  /* K of the operand */
  int32_t dim;    /* d of size(X, d) */
  const char *name; /* arg(NAME): points into the signature string */
  size_t name_len;
} kt_param;

typedef struct kt_sig {
  bool returns_int;
  int nparams;
  kt_param params[KT_MAX_PARAMS];
} kt_sig;

/* What a signature asks of one operand (flags of kt_sig_operand_flags). */
enum {
  KT_F_USED = 1,     /* the kernel sees the operand at all                */
  KT_F_STRIDES = 2,  /* strides(X): the data as it is, not a copy         */
  KT_F_BSTRIDES = 4, /* bstrides(X): not materialized to out0's shape     */
  KT_F_SHAPE = 8,    /* asks X's own shape (numel, size, ..., call)       */
};

/* Parses a signature; false with a message "... at column N" in err. */
KT_HIDDEN bool alloy_kt_sig_parse(const char *text, kt_sig *sig, char *err,
                                  size_t cap);
KT_HIDDEN int alloy_kt_sig_operand_flags(const kt_sig *sig, bool is_out,
                                         int index);
/* The largest K used with inK / outK, or -1. */
KT_HIDDEN int alloy_kt_sig_max_operand(const kt_sig *sig, bool is_out);

/* Checks a dtype constraint's spelling; false with a message in err.
 * *nin / *nout: the operand counts it fixes, or -1 when it fixes none. */
KT_HIDDEN bool alloy_kt_dtypes_check(const char *text, int *nin, int *nout,
                                     char *err, size_t cap);
KT_HIDDEN bool alloy_kt_dtypes_accept(const char *text, const alloy_dtype *in,
                                      int nin, const alloy_dtype *out,
                                      int nout);

/* ---- a node's operands and the row that runs it ------------------------- */

/* The tensor operands of a node: its tensor arguments in schema order
 * (items of tensor lists in list order; literals in tensor slots, the
 * "wrapped numbers", and None are skipped), then its outputs. */
typedef struct kt_operands {
  int nin, nout;
  const alloy_value **values; /* nin + nout, malloc'd */
  alloy_dtype *dtypes;        /* nin + nout, malloc'd */
  /* Per operand: the schema argument and list item it comes from (item
   * -1 for a single tensor; both -1 for outputs): alloy_kernel_call's
   * input_arg and input_item. */
  int32_t *arg, *item;
} kt_operands;

/* false when memory runs out. */
KT_HIDDEN bool alloy_kt_operands(const alloy_host_api *host,
                                 const alloy_node *n, kt_operands *ops);
KT_HIDDEN void alloy_kt_operands_free(kt_operands *ops);

/* The index of the argument called name (name_len bytes), or -1. */
KT_HIDDEN int alloy_kt_find_arg(const alloy_host_api *host,
                                const alloy_node *n, const char *name,
                                size_t name_len);

/* The first row of t that runs node n, with its parsed signature, or -1;
 * then why (when given) says why the last candidate row was refused. */
KT_HIDDEN int alloy_kt_match(const alloy_host_api *host,
                             const alloy_kernel_table *t, const alloy_node *n,
                             const kt_operands *ops, kt_sig *sig, char *why,
                             size_t cap);

/* ---- the plugin's objects ---------------------------------------------- */

/* Every object a backend hands out is on its list, so that backend_close
 * releases what the host did not. */
typedef struct kt_obj {
  struct kt_obj *prev, *next;
  int kind; /* KT_OBJ_* */
} kt_obj;

enum { KT_OBJ_BUFFER = 1, KT_OBJ_QUEUE, KT_OBJ_EXECUTABLE, KT_OBJ_EVENT, KT_OBJ_HOST_BUFFER };

struct alloy_buffer {
  kt_obj obj;
  void *mem;      /* 64-byte aligned when owned */
  uint64_t bytes; /* as asked for    */
  bool owned;     /* false: buffer_import's memory, which release leaves */
};

/* buffer_allocate: a buffer of device 0, on the backend's list. */
KT_HIDDEN alloy_error *alloy_kt_buffer_allocate(alloy_backend *be, int device,
                                                uint64_t bytes,
                                                alloy_buffer **out);
KT_HIDDEN void alloy_kt_track(alloy_backend *be, kt_obj *o, int kind);
KT_HIDDEN void alloy_kt_untrack(alloy_backend *be, kt_obj *o);
KT_HIDDEN const alloy_host_api *alloy_kt_host(alloy_backend *be);
KT_HIDDEN const alloy_kernel_table *alloy_kt_table(alloy_backend *be);

/* An error made with the host's error_new from a printf-style message. */
KT_HIDDEN alloy_error *alloy_kt_error(const alloy_host_api *host,
                                      alloy_error_code code, const char *fmt,
                                      ...) KT_PRINTF(3, 4);
/* "node y (aten.relu.default)": how errors name a node. */
KT_HIDDEN void alloy_kt_node_label(const alloy_host_api *host,
                                   const alloy_node *n, int index, char *buf,
                                   size_t cap);

/* kt_execute.c */
KT_HIDDEN alloy_error *alloy_kt_compile(alloy_backend *be,
                                        const alloy_graph *partition,
                                        const alloy_compile_options *options,
                                        alloy_executable **out);
KT_HIDDEN alloy_error *alloy_kt_execute(alloy_backend *be,
                                        alloy_executable *exe,
                                        const alloy_execute_args *args);
KT_HIDDEN void alloy_kt_executable_free(alloy_executable *exe);

#endif
