/*
 * alloy/ops.h: the op registry: every op Alloy knows, with its PyTorch schema.
 *
 * The registry is built once, lazily and thread-safely, from the op table
 * compiled into the library (ir/ops/ops.txt). Ops and everything reachable
 * from them are immutable and live until the process exits, so they may be
 * read from any thread. An op's id is its position in that table and never
 * changes between Alloy versions: new ops are only appended.
 *
 * Schemas follow PyTorch's grammar (native_functions.yaml), e.g.
 *   aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
 * An op is named as in an exported graph: "aten.add.Tensor",
 * "prims.broadcast_in_dim.default".
 */
#ifndef ALLOY_OPS_H
#define ALLOY_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "alloy/dtype.h"
#include "alloy/error.h"
#include "alloy/sym.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct alloy_op alloy_op;
typedef struct alloy_schema alloy_schema;
typedef struct alloy_value alloy_value; /* see alloy/graph.h */

/* The base types of the schema grammar. */
typedef enum alloy_type_kind {
  ALLOY_TYPE_TENSOR = 0,
  ALLOY_TYPE_INT,       /* int: a concrete integer                       */
  ALLOY_TYPE_SYMINT,    /* SymInt: an integer that may be symbolic        */
  ALLOY_TYPE_FLOAT,
  ALLOY_TYPE_BOOL,
  ALLOY_TYPE_SCALAR,    /* Scalar: a Python number (bool, int or float)   */
  ALLOY_TYPE_SCALAR_TYPE,
  ALLOY_TYPE_STR,
  ALLOY_TYPE_LAYOUT,
  ALLOY_TYPE_DEVICE,
  ALLOY_TYPE_MEMORY_FORMAT,
  ALLOY_TYPE_GENERATOR,
  ALLOY_TYPE_DIMNAME,
  ALLOY_TYPE_STORAGE,
  ALLOY_TYPE_ANY,
  ALLOY_TYPE_SYMFLOAT,  /* SymFloat: a float that may be symbolic      */
  ALLOY_TYPE_SYMBOOL,   /* SymBool: a bool that may be symbolic        */
  ALLOY_TYPE_COMPLEX,   /* complex: a Python complex number   */
  ALLOY_TYPE_OTHER,     /* a TorchScript type (t, Dict(str, t), Stream,
                           __torch__ classes): known by its spelling,
                           alloy_schema_arg.type_text         */
  ALLOY_TYPE_COUNT
} alloy_type_kind;

/* A schema type: `Tensor?`, `int[2]`, `Tensor?[]`, `int[]?`. */
typedef struct alloy_type {
  alloy_type_kind kind;
  bool optional;      /* T? or T[]?: None is allowed                   */
  bool list;          /* T[] or T[N]                                    */
  bool elem_optional; /* T?[]: list elements may be None                */
  int32_t list_len;   /* N of T[N]; 0 when unsized                      */
} alloy_type;

typedef enum alloy_layout { ALLOY_LAYOUT_STRIDED = 0 } alloy_layout;

typedef enum alloy_memory_format {
  ALLOY_MEMORY_CONTIGUOUS = 0,
  ALLOY_MEMORY_PRESERVE = 1,
  ALLOY_MEMORY_CHANNELS_LAST = 2,
  ALLOY_MEMORY_CHANNELS_LAST_3D = 3,
} alloy_memory_format;

typedef enum alloy_device_type {
  ALLOY_DEVICE_CPU = 0,
  ALLOY_DEVICE_CUDA = 1,
  ALLOY_DEVICE_HIP = 2,
  ALLOY_DEVICE_META = 3,
} alloy_device_type;

typedef struct alloy_device {
  alloy_device_type type;
  int32_t index; /* -1: the current device of that type */
} alloy_device;

/* An argument value: a node's argument, a schema default, a list element. */
typedef enum alloy_arg_kind {
  ALLOY_ARG_NONE = 0,
  ALLOY_ARG_VALUE,  /* a graph value: tensor or scalar (u.value)        */
  ALLOY_ARG_INT,    /* a literal or symbolic integer (u.i)              */
  ALLOY_ARG_FLOAT,  /* u.f                                              */
  ALLOY_ARG_BOOL,   /* u.b                                              */
  ALLOY_ARG_STR,    /* u.s, NUL-terminated                              */
  ALLOY_ARG_DTYPE,  /* u.dtype                                          */
  ALLOY_ARG_LAYOUT, /* u.layout                                         */
  ALLOY_ARG_DEVICE, /* u.device                                         */
  ALLOY_ARG_MEMORY_FORMAT, /* u.memory_format                           */
  ALLOY_ARG_LIST,   /* u.list: items[0..n)                              */
} alloy_arg_kind;

typedef struct alloy_arg {
  alloy_arg_kind kind;
  union {
    alloy_value *value;
    alloy_dim i;
    double f;
    bool b;
    const char *s;
    alloy_dtype dtype;
    alloy_layout layout;
    alloy_device device;
    alloy_memory_format memory_format;
    struct {
      const struct alloy_arg *items;
      int32_t n;
    } list;
  } u;
} alloy_arg;

/* Argument constructors for the builder (values, not allocations: pointers
 * inside are borrowed and copied by alloy_graph_add_node). */
static inline alloy_arg alloy_arg_none(void) {
  alloy_arg a = {ALLOY_ARG_NONE, {0}};
  return a;
}
static inline alloy_arg alloy_arg_value(alloy_value *v) {
  alloy_arg a = {ALLOY_ARG_VALUE, {0}};
  a.u.value = v;
  return a;
}
static inline alloy_arg alloy_arg_dim(alloy_dim d) {
  alloy_arg a = {ALLOY_ARG_INT, {0}};
  a.u.i = d;
  return a;
}
static inline alloy_arg alloy_arg_int(int64_t v) {
  return alloy_arg_dim(alloy_dim_const(v));
}
static inline alloy_arg alloy_arg_float(double f) {
  alloy_arg a = {ALLOY_ARG_FLOAT, {0}};
  a.u.f = f;
  return a;
}
static inline alloy_arg alloy_arg_bool(bool b) {
  alloy_arg a = {ALLOY_ARG_BOOL, {0}};
  a.u.b = b;
  return a;
}
static inline alloy_arg alloy_arg_str(const char *s) {
  alloy_arg a = {ALLOY_ARG_STR, {0}};
  a.u.s = s;
  return a;
}
static inline alloy_arg alloy_arg_dtype(alloy_dtype t) {
  alloy_arg a = {ALLOY_ARG_DTYPE, {0}};
  a.u.dtype = t;
  return a;
}
static inline alloy_arg alloy_arg_list(const alloy_arg *items, int32_t n) {
  alloy_arg a = {ALLOY_ARG_LIST, {0}};
  a.u.list.items = items;
  a.u.list.n = n;
  return a;
}

/* One argument or return of a schema. */
typedef struct alloy_schema_arg {
  const char *name;            /* may be "" for unnamed returns          */
  alloy_type type;
  bool kwarg_only;             /* after the `*` marker                   */
  bool has_default;
  alloy_arg default_value;     /* valid when has_default                 */
  const char *default_text;    /* the default as the schema writes it    */
  char alias_set;              /* 'a' of Tensor(a) / Tensor(a!); 0: none */
  bool alias_write;            /* Tensor(a!): written by the op          */
  bool alias_wildcard;         /* Tensor(a -> *): may alias list items   */
  const char *type_text;       /* the type as written, "Dict(str, t)(a!)";
                                  owned by the schema           */
} alloy_schema_arg;

/* Tags: core/pointwise/nondeterministic/... come from the op table; view and
 * inplace are derived from the schema's alias annotations. */
enum {
  ALLOY_TAG_CORE = 1u << 0,
  ALLOY_TAG_POINTWISE = 1u << 1,
  ALLOY_TAG_VIEW = 1u << 2,        /* an output aliases an input, unwritten */
  ALLOY_TAG_INPLACE = 1u << 3,     /* writes `self` and returns it          */
  ALLOY_TAG_NONDETERMINISTIC = 1u << 4,
  ALLOY_TAG_REDUCTION = 1u << 5,
  ALLOY_TAG_DYNAMIC_OUTPUT_SHAPE = 1u << 6,
  ALLOY_TAG_DATA_DEPENDENT_OUTPUT = 1u << 7,
  ALLOY_TAG_MUTATES = 1u << 8,     /* writes some argument (a!)             */
  ALLOY_TAG_PRIM = 1u << 9,        /* namespace prims                      */
  /* PyTorch's remaining tags (torch.Tag), as its table gives them. */
  ALLOY_TAG_NONDETERMINISTIC_SEEDED = 1u << 10, /* random given a generator   */
  ALLOY_TAG_GENERATED = 1u << 11,      /* made by torchgen (a functional twin) */
  ALLOY_TAG_VIEW_COPY = 1u << 12,      /* the copying twin of a view op        */
  ALLOY_TAG_INPLACE_VIEW = 1u << 13,   /* changes self's metadata in place     */
  ALLOY_TAG_PT2_COMPLIANT = 1u << 14,
  ALLOY_TAG_MAYBE_ALIASING_OR_MUTATING = 1u << 15,
  ALLOY_TAG_NEEDS_EXACT_STRIDES = 1u << 16,
  ALLOY_TAG_NEEDS_FIXED_STRIDE_ORDER = 1u << 17,
};

/* Builds the registry if it is not built yet; returns a copy of the error if
 * the compiled-in table failed to load (a bug). Thread-safe. */
alloy_error *alloy_registry_init(void);

int alloy_op_count(void);
const alloy_op *alloy_op_by_id(int id);
/* Finds "aten.add.Tensor", "aten::add.Tensor", "aten.abs" (= .default) or
 * "prims.iota.default"; NULL when unknown. */
const alloy_op *alloy_op_find(const char *name);

int alloy_op_id(const alloy_op *op);
const char *alloy_op_name(const alloy_op *op);     /* "aten.add.Tensor"  */
const char *alloy_op_schema_text(const alloy_op *op); /* the table's string */
uint32_t alloy_op_tags(const alloy_op *op);

/* What an overload does to its arguments, as PyTorch's table classifies it
 *: functional (fresh outputs), in-place (writes self: add_),
 * out= (writes kwarg-only out tensors: add.out) or view (an output aliases
 * an input). Ops outside PyTorch's table are classified from their schema. */
typedef enum alloy_op_kind {
  ALLOY_OP_FUNCTIONAL = 0,
  ALLOY_OP_INPLACE,
  ALLOY_OP_OUT,
  ALLOY_OP_VIEW,
  ALLOY_OP_KIND_COUNT
} alloy_op_kind;
alloy_op_kind alloy_op_kind_of(const alloy_op *op);
const char *alloy_op_kind_name(alloy_op_kind k); /* "functional", "out", ... */
/* The functional op an in-place or out= op computes (add_.Tensor and
 * add.out -> add.Tensor), paired by name and signature as torchgen pairs
 * them; NULL for other ops and for the few with no functional twin. */
const alloy_op *alloy_op_functional(const alloy_op *op);
const alloy_schema *alloy_op_schema(const alloy_op *op);

/* Schemas. A parsed schema is owned by whoever parsed it (free it with
 * alloy_schema_free) or, for registered ops, by the registry. */
alloy_error *alloy_schema_parse(const char *text, alloy_schema **out);
void alloy_schema_free(alloy_schema *s);
const char *alloy_schema_name(const alloy_schema *s); /* "aten::add"   */
const char *alloy_schema_overload(const alloy_schema *s); /* "Tensor", "" */
int alloy_schema_num_args(const alloy_schema *s);
const alloy_schema_arg *alloy_schema_arg_at(const alloy_schema *s, int i);
int alloy_schema_num_returns(const alloy_schema *s);
const alloy_schema_arg *alloy_schema_return_at(const alloy_schema *s, int i);
/* Index of the argument called name, or -1. */
int alloy_schema_find_arg(const alloy_schema *s, const char *name);
/* Writes the canonical schema text (PyTorch's spelling) like snprintf. */
size_t alloy_schema_print(const alloy_schema *s, char *buf, size_t cap);
/* Writes a type as the grammar spells it ("Tensor?[]", "int[2]"). */
size_t alloy_type_print(alloy_type t, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
