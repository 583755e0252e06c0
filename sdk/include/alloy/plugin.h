/*
 * alloy/plugin.h: the plugin ABI. A backend is a shared library
 * liballoy-<name>.so that exports one symbol, ALLOY_PLUGIN_ENTRY, and talks
 * to the host only through the two tables below: the host's (what a plugin
 * may call) and the plugin's (what the host calls). A plugin links against
 * libc and its vendor runtime, never against Alloy's own library.
 *
 * Versioning (docs/abi.md gives the whole policy):
 *   - ALLOY_ABI_MAJOR changes only when something is removed, reordered or
 *     changes meaning; a host refuses a plugin of another major, naming both.
 *   - ALLOY_ABI_MINOR changes when an entry or field is appended. Either side
 *     may be newer: a reader checks struct_size (ALLOY_HAS_FIELD) before
 *     touching a field that a minor added, and NULL-checks optional entries.
 * Every struct here begins with `size_t struct_size`, set by whoever fills
 * the struct to its size measured to the end of its last field (the
 * ALLOY_*_STRUCT_SIZE constant beside each struct, never sizeof), and only
 * grows at its end. No struct has trailing padding a later field could fall
 * into: where alignment would leave some, a reserved field fills it. Layouts
 * are pinned by tests/test_abi_layout.c.
 *
 * Conventions for every entry: an `alloy_error *` result is NULL on success,
 * else an error made with host->error_new that the receiver frees (the host
 * frees what a plugin returns; a plugin frees what the host returns, with
 * host->error_free). Objects a plugin creates (backend, executable, buffer,
 * queue, event) are opaque to the host and released through the plugin's
 * matching release entry, exactly once. "Borrowed" means valid for the
 * duration of the call only.
 *
 * An entry that fails leaves its out-parameters untouched, so the caller
 * never releases what was not made.
 *
 * Threads: the entry symbol may be called from several threads at once
 * (two runtimes opening together); it must only return its static table.
 * The host calls backend_open/backend_close, and the entries that
 * create or release objects, from one thread at a time per backend. execute,
 * the buffer copies and event_wait may be called from several threads at
 * once on distinct queues; a plugin that cannot do that serializes inside.
 * Since 1.2: event_record, host_buffer_allocate/release, buffer_import and
 * backend_set_option (and since 1.3 queue_import) create, release or
 * configure, so they come one thread at a time per backend; queue_wait_event, like execute, may be called on
 * several queues at once.
 * Every host-table entry is thread-safe unless its comment says otherwise.
 */
#ifndef ALLOY_PLUGIN_H
#define ALLOY_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

/* Only what a plugin can use without linking liballoy (DESIGN.md, plugin
 * ABI rule 9): dtype.h is header-only, error_code.h has the codes and the
 * opaque type but none of liballoy's error functions (alloy/error.h). */
#include "alloy/dtype.h"
#include "alloy/error_code.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ALLOY_ABI_MAJOR 1
#define ALLOY_ABI_MINOR 3

/* The one symbol a plugin exports, of type alloy_plugin_entry_fn. */
#define ALLOY_PLUGIN_ENTRY "alloy_plugin_init"

#if defined(__GNUC__)
#define ALLOY_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define ALLOY_PLUGIN_EXPORT
#endif

/* The size of a struct measured to the end of its last field: what
 * struct_size holds (PJRT's struct-size traits). */
#define ALLOY_STRUCT_SIZE(type, last_field) \
  (offsetof(type, last_field) + sizeof(((type *)0)->last_field))

/* True when struct *s, as filled by the other side, holds field. */
#define ALLOY_HAS_FIELD(s, type, field) \
  ((s)->struct_size >= offsetof(type, field) + sizeof(((type *)0)->field))

/* Opaque host objects a plugin reads through the host table. They stay
 * valid as the comments of the entries that hand them out say. */
typedef struct alloy_graph alloy_graph;
typedef struct alloy_node alloy_node;
typedef struct alloy_value alloy_value;
typedef struct alloy_arg alloy_arg;
typedef struct alloy_claims alloy_claims;

/* Opaque plugin objects: each plugin defines these structs its own way. */
typedef struct alloy_backend alloy_backend;
typedef struct alloy_executable alloy_executable;
typedef struct alloy_buffer alloy_buffer;
typedef struct alloy_queue alloy_queue;
typedef struct alloy_event alloy_event;

/* ---- extension chains ---------------------------------------------------
 * Device-specific data (a CUDA stream, a HIP stream) travels in a chain of
 * extensions hung off the structs that accept one, never in new fields of
 * the core structs. A reader skips types it does not know. */
typedef enum alloy_ext_type {
  ALLOY_EXT_CUDA_STREAM = 1, /* alloy_ext_stream: a cudaStream_t */
  ALLOY_EXT_HIP_STREAM = 2,  /* alloy_ext_stream: a hipStream_t  */
} alloy_ext_type;

typedef struct alloy_ext {
  size_t struct_size;
  uint32_t type;               /* an alloy_ext_type                      */
  const struct alloy_ext *next; /* borrowed; NULL ends the chain         */
} alloy_ext;

#define ALLOY_EXT_STRUCT_SIZE ALLOY_STRUCT_SIZE(alloy_ext, next)

typedef struct alloy_ext_stream {
  alloy_ext base;
  void *stream; /* borrowed: the caller's stream, used for this call only */
} alloy_ext_stream;
#define ALLOY_EXT_STREAM_STRUCT_SIZE ALLOY_STRUCT_SIZE(alloy_ext_stream, stream)

/* ---- the host table -----------------------------------------------------
 * Filled by the host, read-only for the plugin, valid from the entry call
 * until the plugin is unloaded. The first six fields never move in any
 * major version, so that a plugin can always report a version mismatch. */

typedef enum alloy_log_level {
  ALLOY_LOG_DEBUG = 0,
  ALLOY_LOG_INFO = 1,
  ALLOY_LOG_WARNING = 2,
  ALLOY_LOG_ERROR = 3,
} alloy_log_level;

/* What a partition graph's input is to the model (host->graph_input_kind,
 * since 1.2). The first four mirror alloy_input_role of alloy/graph.h. */
typedef enum alloy_input_kind {
  ALLOY_INPUT_KIND_USER = 0,      /* an argument of the model's forward()    */
  ALLOY_INPUT_KIND_PARAMETER = 1, /* a weight: resident, unchanged across runs */
  ALLOY_INPUT_KIND_BUFFER = 2,    /* a buffer (running_mean): resident       */
  ALLOY_INPUT_KIND_CONSTANT = 3,  /* a lifted or folded constant: resident   */
  ALLOY_INPUT_KIND_INTERMEDIATE = 4, /* computed by another partition       */
} alloy_input_kind;

/* An argument's kind as the host table reports it (same values as
 * alloy_arg_kind in alloy/ops.h). */
typedef enum alloy_arg_type {
  ALLOY_ARG_TYPE_NONE = 0,
  ALLOY_ARG_TYPE_VALUE = 1,  /* a tensor or scalar value of the graph    */
  ALLOY_ARG_TYPE_INT = 2,    /* an integer, maybe symbolic               */
  ALLOY_ARG_TYPE_FLOAT = 3,
  ALLOY_ARG_TYPE_BOOL = 4,
  ALLOY_ARG_TYPE_STR = 5,
  ALLOY_ARG_TYPE_DTYPE = 6,
  ALLOY_ARG_TYPE_LAYOUT = 7,
  ALLOY_ARG_TYPE_DEVICE = 8,
  ALLOY_ARG_TYPE_MEMORY_FORMAT = 9,
  ALLOY_ARG_TYPE_LIST = 10,
} alloy_arg_type;

typedef struct alloy_host_api {
  size_t struct_size;
  uint32_t abi_major; /* the host's ALLOY_ABI_MAJOR */
  uint32_t abi_minor; /* the host's ALLOY_ABI_MINOR */
  /* Makes an error with a message (copied). Never returns NULL. */
  alloy_error *(*error_new)(alloy_error_code code, const char *message);
  /* Frees an error the host returned to the plugin; accepts NULL. */
  void (*error_free)(alloy_error *err);
  /* Logs one line (copied) under the plugin's name. */
  void (*log)(alloy_log_level level, const char *plugin_name,
              const char *message);

  /* The message of an error (lives as long as the error). */
  const char *(*error_message)(const alloy_error *err);
  /* Memory the other side frees: a plugin allocates with host->alloc what
   * it hands to the host to free (serialized executables), and frees with
   * host->free what the host allocated for it. 64-byte aligned. */
  void *(*alloc)(size_t size);
  void (*free)(void *ptr);

  /* Graph access, read-only. A graph handed to claim() is borrowed for the
   * call; one handed to compile() lives until the executable made from it
   * is released. Nodes, values and arguments live as long as their graph.
   * Indices are 0-based; out-of-range indices give NULL / 0. */
  int (*graph_num_nodes)(const alloy_graph *g);
  const alloy_node *(*graph_node)(const alloy_graph *g, int i);
  int (*graph_num_inputs)(const alloy_graph *g);
  const alloy_value *(*graph_input)(const alloy_graph *g, int i);
  int (*graph_num_outputs)(const alloy_graph *g);
  const alloy_value *(*graph_output)(const alloy_graph *g, int i);

  /* "aten.add.Tensor": lives while the host process runs. */
  const char *(*node_op_name)(const alloy_node *n);
  /* The op's stable id (its line in Alloy's op table; never reused). */
  int (*node_op_id)(const alloy_node *n);
  /* Arguments in schema order, defaults filled in. */
  int (*node_num_args)(const alloy_node *n);
  const alloy_arg *(*node_arg)(const alloy_node *n, int i);
  /* The schema's name of argument i ("alpha"), or NULL. */
  const char *(*node_arg_name)(const alloy_node *n, int i);
  int (*node_num_outputs)(const alloy_node *n);
  const alloy_value *(*node_output)(const alloy_node *n, int i);

  /* Values. kind: 0 tensor, 1 SymInt, 2 float, 3 bool (alloy_value_kind). */
  int (*value_kind)(const alloy_value *v);
  const char *(*value_name)(const alloy_value *v);
  alloy_dtype (*value_dtype)(const alloy_value *v);
  int (*value_rank)(const alloy_value *v);
  /* Size d: returns 1 and sets *size when concrete, 0 when symbolic. */
  int (*value_size)(const alloy_value *v, int d, int64_t *size);
  /* Size d as text ("s0*16"), like snprintf; the range of a symbolic size. */
  size_t (*value_size_text)(const alloy_value *v, int d, char *buf,
                            size_t cap);
  void (*value_size_range)(const alloy_value *v, int d, int64_t *lo,
                           int64_t *hi);
  /* Size d under the symbol values execute() received; 0 with *out
   * untouched when a symbol is unbound. For a SymInt value, d is ignored
   * and its integer value is evaluated. */
  int (*value_size_eval)(const alloy_value *v, int d, const int64_t *symbols,
                         int num_symbols, int64_t *out);

  /* Arguments. Each reader returns 0 when the argument is not of its kind.
   * Lists nest: arg_list_item gives the k-th item as an argument. */
  alloy_arg_type (*arg_type)(const alloy_arg *a);
  int (*arg_int)(const alloy_arg *a, int64_t *out); /* 0 also if symbolic */
  int (*arg_float)(const alloy_arg *a, double *out); /* ints convert */
  int (*arg_bool)(const alloy_arg *a, int *out);
  /* The string (lives as long as the graph), or NULL. */
  const char *(*arg_str)(const alloy_arg *a);
  int (*arg_dtype)(const alloy_arg *a, alloy_dtype *out);
  /* Layout, memory format, or device type (alloy/ops.h enums); device
   * index in *index when given. */
  int (*arg_enum)(const alloy_arg *a, int *value, int *index);
  const alloy_value *(*arg_value)(const alloy_arg *a);
  int (*arg_list_size)(const alloy_arg *a);
  const alloy_arg *(*arg_list_item)(const alloy_arg *a, int k);

  /* Claims: claim() calls this once per node it can run, with the node's
   * index in the graph and an estimated cost in seconds (negative: no
   * estimate). Not thread-safe for one claims object. */
  void (*claims_add)(alloy_claims *claims, int node_index, double cost);

  /* ---- since 1.2 (check ALLOY_HAS_FIELD before reading) ----------------- */
  /* The lowest level log() acts on: $ALLOY_LOG's level, at most warning
   * (warnings and errors are always kept: the loader quotes them). A plugin
   * may skip building messages below it. */
  alloy_log_level (*log_level)(void);
  /* The index of n in g (what claims take), or -1 when n is not g's. */
  int (*node_index)(const alloy_graph *g, const alloy_node *n);
  /* The node defining v and which of its outputs v is (*output_index, may
   * be NULL); NULL for a graph input. */
  const alloy_node *(*value_producer)(const alloy_value *v, int *output_index);
  /* The nodes using v, each once, in graph order. */
  int (*value_num_users)(const alloy_value *v);
  const alloy_node *(*value_user)(const alloy_value *v, int i);
  /* Stride d of v in elements: 1 and *stride set when the graph records a
   * concrete one, 0 when v is contiguous-or-unknown (the default). */
  int (*value_stride)(const alloy_value *v, int d, int64_t *stride);
  /* The op id of "aten.add.Tensor" (what node_op_id returns), or -1. Lets a
   * plugin compare ids instead of strings. */
  int (*op_find)(const char *name);
  /* What input i of g is (alloy_input_kind). Parameter, buffer and constant
   * inputs stay resident on the backend across runs: the same buffer and
   * contents at every execute of an executable. */
  alloy_input_kind (*graph_input_kind)(const alloy_graph *g, int i);
  /* The host data of a parameter, buffer or constant input when the host
   * knows it at compile (row-major contiguous, *bytes long, read-only),
   * else NULL (always for user and intermediate inputs). Lives as long as g (until the executable compiled from it is
   * released): a plugin may pre-pack it at compile. */
  const void *(*graph_input_data)(const alloy_graph *g, int i, uint64_t *bytes);
  /* Claims a group of nodes all or nothing, at one cost in seconds for the
   * whole group (a fused pattern: attention, conv+bn+relu). The
   * partitioner gives the group to this backend whole, or none of it.
   * Not thread-safe for one claims object (like claims_add). */
  void (*claims_add_group)(alloy_claims *claims, const int *node_indices, int n,
                           double cost);
  /* Says why a node is not claimed ("f64 is not supported"; copied): the
   * host shows it when it explains a partition (alloy partition). Not
   * thread-safe for one claims object. */
  void (*claims_reject)(alloy_claims *claims, int node_index, const char *reason);
  /* Tracing (alloy run --trace FILE writes Chrome trace JSON). clock_ns is
   * the host's monotonic clock; trace_range records [begin_ns, end_ns) on
   * the plugin's track (names copied). Cheap no-ops when tracing is off. */
  uint64_t (*clock_ns)(void);
  int (*trace_enabled)(void);
  void (*trace_range)(const char *plugin_name, const char *track, const char *name,
                      uint64_t begin_ns, uint64_t end_ns);
  /* The code of an error (one the host returned, or one made with
   * error_new), so a plugin can pass an error on with its code. */
  alloy_error_code (*error_code)(const alloy_error *err);
} alloy_host_api;
#define ALLOY_HOST_API_STRUCT_SIZE ALLOY_STRUCT_SIZE(alloy_host_api, error_code)
/* A 1.0 or 1.1 host's table ends at claims_add. */
#define ALLOY_HOST_API_1_1_STRUCT_SIZE ALLOY_STRUCT_SIZE(alloy_host_api, claims_add)

/* ---- what the plugin fills in ------------------------------------------ */

typedef enum alloy_device_kind {
  ALLOY_DEVICE_KIND_CPU = 0,
  ALLOY_DEVICE_KIND_GPU = 1,
  ALLOY_DEVICE_KIND_ACCELERATOR = 2,
} alloy_device_kind;

/* Device capability bits (alloy_device_info.capabilities, since 1.2). */
/* buffer_host_pointer gives every buffer's address: the host reads and
 * writes them directly, and copies between this device and another one
 * take one step. */
#define ALLOY_DEVICE_CAP_HOST_VISIBLE (UINT64_C(1) << 0)
/* Queues run asynchronously: execute and the copies return before the work
 * is done, and the host overlaps them. */
#define ALLOY_DEVICE_CAP_ASYNC (UINT64_C(1) << 1)
/* host_buffer_allocate gives page-locked memory the device copies at full
 * speed. */
#define ALLOY_DEVICE_CAP_PINNED_HOST (UINT64_C(1) << 2)
/* buffer_import takes device pointers made outside Alloy. */
#define ALLOY_DEVICE_CAP_IMPORT (UINT64_C(1) << 3)

/* Filled by the plugin in device_info; struct_size set by the host, which
 * zeroes the struct first: a field the plugin leaves is "unknown". */
typedef struct alloy_device_info {
  size_t struct_size;
  const char *name;      /* out, plugin-owned, lives while the backend is open */
  alloy_device_kind kind; /* out                                           */
  uint64_t memory_bytes; /* out: memory the device offers, 0 when unknown;
                          * the partitioner keeps a backend's resident
                          * values under it                                */
  /* since 1.2 */
  uint64_t free_memory_bytes; /* out: free now, 0 when unknown              */
  const char *arch;      /* out, plugin-owned, lives while the backend is
                          * open: "sm_90", "x86-64 avx2"; NULL unknown     */
  uint64_t capabilities; /* out: ALLOY_DEVICE_CAP_* bits                    */
  double launch_s;       /* out: host seconds to start one partition run
                          * (the partitioner's launch cost); <= 0 unknown  */
  double host_bytes_per_s; /* out: copy bandwidth to and from host memory;
                            * <= 0 unknown                                 */
} alloy_device_info;
#define ALLOY_DEVICE_INFO_STRUCT_SIZE ALLOY_STRUCT_SIZE(alloy_device_info, host_bytes_per_s)

/* A backend or compile option (alloy run --backend-opt cuda.arch=sm_90):
 * an array element of fixed layout, strings borrowed for the call. */
typedef struct alloy_option {
  const char *key;   /* "arch": the part after "<backend>."               */
  const char *value; /* "sm_90"                                           */
} alloy_option;

/* Set by the host for compile(). */
typedef struct alloy_compile_options {
  size_t struct_size;
  int32_t device;       /* in: device index of the backend               */
  int32_t opt_level;    /* in: 0 none .. 3 most; a hint                  */
  const alloy_ext *ext; /* in, borrowed extension chain, or NULL         */
  /* since 1.2 */
  const alloy_option *options; /* in, borrowed for the call: this backend's
                                * --backend-opt pairs, or NULL          */
  int32_t num_options;  /* in                                             */
  int32_t reserved;     /* zero                                           */
} alloy_compile_options;
#define ALLOY_COMPILE_OPTIONS_STRUCT_SIZE ALLOY_STRUCT_SIZE(alloy_compile_options, reserved)

/* A tensor as execute() sees it: a buffer of the plugin, and where in it.
 * Outputs whose sizes depend on the data (nonzero, unique, ...) come with
 * buffer NULL: the plugin allocates the buffer (buffer_allocate) and writes
 * buffer, offset, sizes and strides (the arrays are the host's, rank
 * entries, writable); the host then owns and releases that buffer. */
typedef struct alloy_tensor {
  size_t struct_size;
  alloy_buffer *buffer;   /* borrowed; a buffer of this backend, or NULL */
  uint64_t offset;        /* bytes from the buffer's start               */
  alloy_dtype dtype;
  int32_t rank;
  int64_t *sizes;         /* borrowed, rank entries; read-only for inputs */
  int64_t *strides;       /* borrowed, rank entries, in elements          */
} alloy_tensor;
#define ALLOY_TENSOR_STRUCT_SIZE ALLOY_STRUCT_SIZE(alloy_tensor, strides)

/* Set by the host for execute(). The struct itself is borrowed for the
 * call only; what it points to (the tensors, their sizes and strides, the
 * symbols and the chain) is lent until execution completes (the call
 * returns with *done NULL, or *done is signalled), and the host changes
 * none of it before then. With a queue, done is never NULL. Inputs are in the order of the partition graph's
 * inputs, outputs in the order of its outputs; output buffers are allocated
 * by the host with the concrete sizes given. */
typedef struct alloy_execute_args {
  size_t struct_size;
  const alloy_tensor *inputs;
  int32_t num_inputs;
  alloy_tensor *outputs; /* written by the plugin only as said above    */
  int32_t num_outputs;
  /* Values of the graph's symbols, by symbol index, for sizes computed at
   * run time (the partition's symbolic sizes evaluate with these); a
   * symbol no input binds (a data-dependent size) is INT64_MIN. */
  const int64_t *symbols;
  int32_t num_symbols;
  alloy_queue *queue;   /* NULL: run synchronously on the default queue  */
  alloy_event **done;   /* out: completion event, or NULL when finished;
                         * the host releases it with event_release       */
  const alloy_ext *ext; /* borrowed extension chain, or NULL             */
} alloy_execute_args;
#define ALLOY_EXECUTE_ARGS_STRUCT_SIZE ALLOY_STRUCT_SIZE(alloy_execute_args, ext)

/* Compatibility of a serialized executable, written by serialize. */
typedef struct alloy_compat_info {
  size_t struct_size;
  const char *plugin_version; /* plugin-owned, static                   */
  const char *device_model;   /* plugin-owned, static ("sm_90", "avx2")  */
} alloy_compat_info;
#define ALLOY_COMPAT_INFO_STRUCT_SIZE ALLOY_STRUCT_SIZE(alloy_compat_info, device_model)

/* ---- the plugin table ---------------------------------------------------
 * Static in the plugin, valid while it is loaded. Required entries must be
 * non-NULL; optional ones may be NULL (or absent, in a plugin built against
 * an older minor: check with ALLOY_HAS_FIELD). */
typedef struct alloy_plugin_api {
  size_t struct_size;
  uint32_t abi_major; /* the plugin's ALLOY_ABI_MAJOR */
  uint32_t abi_minor; /* the plugin's ALLOY_ABI_MINOR */
  /* Identity: static strings. name is what ALLOY_BACKENDS and --backend
   * match, case-insensitively: [a-z0-9_]+ by convention. */
  const char *name;
  const char *vendor;
  const char *version;

  /* Opens an instance. host stays valid until backend_close. Required. */
  alloy_error *(*backend_open)(const alloy_host_api *host, alloy_backend **out);
  /* Releases the instance and anything of it not yet released. Required. */
  void (*backend_close)(alloy_backend *be);

  /* Devices. Required. device_info fills what info->struct_size allows. */
  int (*device_count)(alloy_backend *be);
  alloy_error *(*device_info)(alloy_backend *be, int device,
                              alloy_device_info *info);

  /* Claims the nodes of g it can run (host->claims_add per node). Required.
   * Must not keep g or anything of it after returning. */
  alloy_error *(*claim)(alloy_backend *be, const alloy_graph *g,
                        alloy_claims *claims);
  /* Compiles a partition (every node of which it claimed). Required. A
   * failure, or ALLOY_ERR_DECLINED (since 1.2: "not this one after all"),
   * sends the partition's nodes to the next backend that claims them (the
   * reference backend last); the host logs why. The host never offers a
   * partition without nodes: pass-through values it moves itself. */
  alloy_error *(*compile)(alloy_backend *be, const alloy_graph *partition,
                          const alloy_compile_options *options,
                          alloy_executable **out);
  /* Runs an executable. Required. */
  alloy_error *(*execute)(alloy_backend *be, alloy_executable *exe,
                          const alloy_execute_args *args);
  void (*executable_release)(alloy_backend *be, alloy_executable *exe);

  /* Device memory. Required. buffer_host_pointer: the address the host may
   * read and write directly, or NULL when the memory is not host-visible
   * (then the host uses the copies). */
  alloy_error *(*buffer_allocate)(alloy_backend *be, int device,
                                  uint64_t bytes, alloy_buffer **out);
  void (*buffer_release)(alloy_backend *be, alloy_buffer *buf);
  void *(*buffer_host_pointer)(alloy_backend *be, alloy_buffer *buf);
  /* Copies. queue NULL: synchronous, *done untouched (done may be NULL);
   * it need not wait for work pending on the backend's queues (like a CUDA
   * non-blocking stream): the host orders with events first. With a queue:
   * ordered on it; *done receives a completion event or NULL when already
   * complete. src/dst host memory is borrowed until then. New buffers'
   * contents are unspecified (not zeroed). The host releases a buffer or
   * an executable only once the work it issued that uses it is done. */
  alloy_error *(*buffer_copy_from_host)(alloy_backend *be, alloy_buffer *dst,
                                        uint64_t offset, const void *src,
                                        uint64_t bytes, alloy_queue *queue,
                                        alloy_event **done);
  alloy_error *(*buffer_copy_to_host)(alloy_backend *be, void *dst,
                                      alloy_buffer *src, uint64_t offset,
                                      uint64_t bytes, alloy_queue *queue,
                                      alloy_event **done);
  alloy_error *(*buffer_copy)(alloy_backend *be, alloy_buffer *dst,
                              uint64_t dst_offset, alloy_buffer *src,
                              uint64_t src_offset, uint64_t bytes,
                              alloy_queue *queue, alloy_event **done);

  /* Queues (streams) and events. Required. */
  alloy_error *(*queue_create)(alloy_backend *be, int device,
                               alloy_queue **out);
  void (*queue_release)(alloy_backend *be, alloy_queue *q);
  /* Blocks until the event is signalled; its error when the work failed. */
  alloy_error *(*event_wait)(alloy_backend *be, alloy_event *ev);
  /* 1 when signalled, 0 when not yet. */
  int (*event_query)(alloy_backend *be, alloy_event *ev);
  void (*event_release)(alloy_backend *be, alloy_event *ev);

  /* Optional: a compile cache. serialize writes bytes allocated with
   * host->alloc (the host frees them) and compatibility information;
   * deserialize reads bytes it wrote, or fails with ALLOY_ERR_VERSION. */
  alloy_error *(*executable_serialize)(alloy_backend *be,
                                       alloy_executable *exe, void **bytes,
                                       uint64_t *size, alloy_compat_info *info);
  alloy_error *(*executable_deserialize)(alloy_backend *be,
                                         const alloy_graph *partition,
                                         const void *bytes, uint64_t size,
                                         alloy_executable **out);

  /* Since ABI 1.1 (read it only when ALLOY_HAS_FIELD says it is there):
   * what the backend can do beyond the required, ALLOY_CAP_* bits. */
  uint64_t capabilities;

  /* ---- since 1.2: every entry optional (NULL: the host does without) --- */
  /* (optional) An event signalled when all work enqueued on q so far is
   * done; the host releases it with event_release. Without it the host
   * orders work with the events execute and the copies return. */
  alloy_error *(*event_record)(alloy_backend *be, alloy_queue *q, alloy_event **out);
  /* (optional) Work enqueued on q after this call waits for ev (an event of
   * this backend, from any of its queues); returns at once. Without it the
   * host waits for ev on the host before enqueuing. */
  alloy_error *(*queue_wait_event)(alloy_backend *be, alloy_queue *q, alloy_event *ev);
  /* (optional) Host memory the device copies fastest (page-locked), for the
   * host's staging buffers between backends; released with
   * host_buffer_release. Without it the host uses its own memory. */
  alloy_error *(*host_buffer_allocate)(alloy_backend *be, uint64_t bytes, void **out);
  void (*host_buffer_release)(alloy_backend *be, void *ptr);
  /* (optional) Wraps device memory made outside Alloy (a cudaMalloc'd
   * pointer, in: borrowed, must outlive the buffer) as a buffer of device;
   * buffer_release then forgets it without freeing the memory. ext: the
   * caller's extension chain (a stream the memory is ordered on), or NULL. */
  alloy_error *(*buffer_import)(alloy_backend *be, int device, void *device_pointer,
                                uint64_t bytes, const alloy_ext *ext, alloy_buffer **out);
  /* (optional) A backend option (key and value borrowed for the call), set
   * after backend_open and before any compile; an unknown key or a value
   * it cannot take is an error naming it (ALLOY_ERR_NOT_FOUND,
   * ALLOY_ERR_INVALID_ARGUMENT). */
  alloy_error *(*backend_set_option)(alloy_backend *be, const char *key, const char *value);

  /* ---- since 1.3: optional (NULL: the host does without) --------------- */
  /* (optional) Wraps a stream made outside Alloy as a queue of device:
   * ext is the caller's chain, and its stream extension of this plugin's
   * kind (ALLOY_EXT_CUDA_STREAM for a CUDA plugin) names the stream,
   * borrowed: it must outlive the queue. Work the host enqueues on the
   * queue goes on that stream, in order with the caller's own work there.
   * queue_release forgets the queue without waiting for or destroying the
   * stream, and work already enqueued goes on. An error naming what is
   * missing when the chain has no stream this plugin takes
   * (ALLOY_ERR_INVALID_ARGUMENT). Creates, so one thread at a time per
   * backend, as queue_create. Runs ordered on a caller's stream need it
   * (alloy_program_run_on_stream). */
  alloy_error *(*queue_import)(alloy_backend *be, int device, const alloy_ext *ext, alloy_queue **out);
} alloy_plugin_api;
#define ALLOY_PLUGIN_API_STRUCT_SIZE ALLOY_STRUCT_SIZE(alloy_plugin_api, queue_import)
/* A 1.0 table ends at executable_deserialize; a 1.1 one at capabilities. */
#define ALLOY_PLUGIN_API_1_0_STRUCT_SIZE ALLOY_STRUCT_SIZE(alloy_plugin_api, executable_deserialize)
#define ALLOY_PLUGIN_API_1_1_STRUCT_SIZE ALLOY_STRUCT_SIZE(alloy_plugin_api, capabilities)
/* A 1.2 table ends at backend_set_option. */
#define ALLOY_PLUGIN_API_1_2_STRUCT_SIZE ALLOY_STRUCT_SIZE(alloy_plugin_api, backend_set_option)

/* compile() takes partitions whose sizes are symbolic (backed symbols of
 * the graph) and execute() evaluates them from args->symbols: the host then
 * compiles such a partition once, instead of once per set of sizes. */
#define ALLOY_CAP_SYMBOLIC_SHAPES (UINT64_C(1) << 0)

/* The entry: called once per load with the host's table. Returns the
 * plugin's table (static), or NULL to refuse (after host->log saying why).
 * A plugin must not call anything but host->log, error_new and error_free
 * when host->abi_major differs from its own. */
typedef const alloy_plugin_api *(*alloy_plugin_entry_fn)(
    const alloy_host_api *host);

#ifdef __cplusplus
}
#endif
#endif
