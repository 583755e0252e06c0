/*
 * alloy/kernel_table.h: the kernel-table helper. A vendor lists plain C
 * functions with the op they implement, the dtypes they accept and a
 * signature string saying how to call them; the helper turns the list into
 * a whole plugin (claim, compile, execute, buffers, queues, events) that
 * runs a partition node by node on host memory and calls each kernel
 * through libffi with arguments bound from the node. No glue code.
 *
 *   static void add_f32(float *out, const float *a, const float *b, int64_t n);
 *   static const alloy_kernel kernels[] = {
 *     {"aten.add.Tensor", "f32", (alloy_kernel_fn)add_f32,
 *      "void(out0, in0, in1, numel(out0))"},
 *   };
 *   static const alloy_kernel_table table = {
 *     .struct_size = ALLOY_KERNEL_TABLE_STRUCT_SIZE, .name = "example",
 *     .vendor = "Example Vendor", .version = "1.0.0", .kernels = kernels, .count = 1};
 *   ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(
 *       const alloy_host_api *host) { return alloy_kernel_table_plugin(&table, host); }
 *
 * Signature strings: "RET(P, P, ...)", RET is void or int (an int kernel
 * returns 0 on success; nonzero fails the execution with the op named).
 * Tensor operands are named inK (the K-th tensor argument of the node, in
 * schema order, counting from 0) and outK (the K-th output). Parameters:
 *   inK, outK        void*: the data (contiguous unless strides are asked
 *                    for; broadcast to out0's shape unless bstrides are)
 *   numel(X)         int64_t: element count of X
 *   rank(X)          int32_t
 *   size(X, d)       int64_t: size of dim d (negative d counts from the end)
 *   sizes(X)         const int64_t*: rank(X) sizes
 *   strides(X)       const int64_t*: X's strides in elements, X as it is
 *   bstrides(X)      const int64_t*: rank(out0) strides of X broadcast to
 *                    out0's sizes (0 on broadcast dims)
 *   arg(NAME):T      a scalar argument by schema name, as T: i32 i64 f32 f64
 *                    bool (passed as int)
 *   call             const alloy_kernel_call*: everything, for kernels that
 *                    need more than the above
 * Dtype constraints: "*" any; "f32" every tensor operand is f32; or one per
 * operand, inputs then outputs: "f32,i64->f32".
 *
 * The helper keeps its kernel table in a static of the image it is linked
 * into: one table per plugin library. Thread safety as alloy/plugin.h says.
 */
#ifndef ALLOY_KERNEL_TABLE_H
#define ALLOY_KERNEL_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "alloy/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*alloy_kernel_fn)(void);

typedef struct alloy_kernel {
  const char *op;        /* "aten.add.Tensor"                          */
  const char *dtypes;    /* constraint, see above                      */
  alloy_kernel_fn fn;    /* the C function, cast                       */
  const char *signature; /* how to call it, see above                  */
} alloy_kernel;

/* Filled by the vendor, static (struct_size: ALLOY_KERNEL_TABLE_STRUCT_SIZE). */
typedef struct alloy_kernel_table {
  size_t struct_size;
  const char *name, *vendor, *version; /* static strings              */
  const alloy_kernel *kernels;         /* static, count entries       */
  int count;
  int32_t reserved; /* zero; makes the padding explicit, since 1.2    */
  /* since 1.2 (read only when struct_size reaches them): the one device
   * the plugin's kernels run on, as `alloy backends` lists it ("npu0
   * (accelerator)"). A static string, or NULL for "cpu0"; kind is an
   * alloy_device_kind (0, the default, is ALLOY_DEVICE_KIND_CPU). The data
   * still lives in host memory: the helper runs kernels on host pointers. */
  const char *device_name;
  int32_t device_kind;
  int32_t reserved2; /* zero */
} alloy_kernel_table;
#define ALLOY_KERNEL_TABLE_STRUCT_SIZE ALLOY_STRUCT_SIZE(alloy_kernel_table, reserved2)

/* A tensor as a `call` kernel sees it: host memory, concrete sizes. */
typedef struct alloy_kernel_tensor {
  void *data;
  alloy_dtype dtype;
  int32_t rank;
  const int64_t *sizes;
  const int64_t *strides; /* elements */
} alloy_kernel_tensor;

/* What a `call` kernel receives (borrowed for the call; struct_size set by
 * the helper to ALLOY_KERNEL_CALL_STRUCT_SIZE as it was built). */
typedef struct alloy_kernel_call alloy_kernel_call;
struct alloy_kernel_call {
  size_t struct_size;
  const alloy_host_api *host;
  const alloy_node *node;              /* its arguments via host->node_arg */
  const alloy_kernel_tensor *inputs;   /* tensor arguments, schema order */
  int32_t num_inputs;
  const alloy_kernel_tensor *outputs;  /* allocated by the helper */
  int32_t num_outputs;
  /* Where inputs[i] comes from: schema argument input_arg[i], list item
   * input_item[i] of it (-1 when the argument is a single tensor). A None
   * Tensor? argument and a Python number given for a Tensor have no input:
   * read them with host->node_arg. */
  const int32_t *input_arg;
  const int32_t *input_item;
  /* An output whose sizes depend on the data (nonzero, unique, ...) comes
   * with data NULL and sizes unknown: the kernel allocates it here, with
   * its actual sizes (contiguous), once it knows them. Returns the tensor
   * (owned by the helper), or NULL when memory runs out. */
  const alloy_kernel_tensor *(*alloc_output)(const alloy_kernel_call *c,
                                             int k, const int64_t *sizes);
  /* (since 1.2; check ALLOY_HAS_FIELD) Says why the kernel fails: the
   * step then fails whatever the kernel returns, with this code and message
   * (copied; the helper prefixes the node) instead of "the kernel failed
   * (it returned N)". Say what was wrong with the data, e.g. "index 7 is
   * out of bounds for dimension 0 with size 5 (index[2])". The last call
   * wins. Not for other threads: only during the call, on its thread. */
  void (*fail)(const alloy_kernel_call *c, alloy_error_code code, const char *message);
};
#define ALLOY_KERNEL_CALL_STRUCT_SIZE ALLOY_STRUCT_SIZE(alloy_kernel_call, fail)

/* The plugin table for a kernel table; checks the table (signatures parse,
 * ops named) and returns NULL after host->log when it is wrong. */
const alloy_plugin_api *alloy_kernel_table_plugin(const alloy_kernel_table *t,
                                                  const alloy_host_api *host);

/* The strides of a view of sizes to[0..rank_to) over a tensor of sizes
 * and strides [0..rank) (in elements), as PyTorch's computeStride (what
 * aten.view and a reshape that needs no copy give): written to out and
 * true, or false when no strided view expresses it (the data must be
 * copied first). A tensor with no element gets contiguous strides. Any
 * thread; no allocation. */
bool alloy_view_strides(const int64_t *sizes, const int64_t *strides, int rank, const int64_t *to, int rank_to,
                        int64_t *out);

#ifdef __cplusplus
}
#endif
#endif
