/*
 * ir/ir.h: the IR's internal structures, shared by the files of ir/ and the
 * passes of decompositions/. Nothing outside the library sees them: the
 * public API (alloy/graph.h, alloy/ops.h) hands out opaque pointers.
 */
#ifndef ALLOY_IR_INTERNAL_H
#define ALLOY_IR_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "alloy/graph.h"
#include "alloy/ops.h"

/* A bump allocator: objects of one graph or of the registry live and die
 * together, so they are carved from big blocks and released at once. */
typedef struct alloy_arena_block alloy_arena_block;
typedef struct alloy_arena {
  alloy_arena_block *head;
} alloy_arena;

void *alloy_arena_alloc(alloy_arena *a, size_t size); /* zeroed; NULL on OOM */
char *alloy_arena_strndup(alloy_arena *a, const char *s, size_t n);
char *alloy_arena_strdup(alloy_arena *a, const char *s);
void alloy_arena_free(alloy_arena *a);

/* FNV-1a of a NUL-terminated string: the hash of the IR's name tables. */
uint64_t alloy_hash_str(const char *s);

/* Deep-copies an argument (lists, strings) into the arena; values are kept
 * by pointer. */
alloy_error *alloy_arg_copy(alloy_arena *a, const alloy_arg *src,
                            alloy_arg *dst);

struct alloy_schema {
  const char *name;     /* "aten::add"                               */
  const char *overload; /* "Tensor", or "" for the default overload  */
  int nargs, nreturns;
  alloy_schema_arg *args, *returns;
  bool vararg;          /* TorchScript's "...": more arguments follow  */
  bool returns_paren;   /* "-> (Tensor out)": the returns were parenthesized */
  alloy_arena arena; /* owns everything above when parsed standalone   */
};

/* What a shape function sees and fills in: see ir/meta.h. */
typedef struct alloy_meta alloy_meta;
typedef alloy_error *(*alloy_meta_fn)(alloy_meta *m);

struct alloy_op {
  int id;
  const char *name;        /* "aten.add.Tensor" */
  const char *schema_text; /* the op table's line, without tags */
  uint32_t tags;
  alloy_op_kind kind;      /* PyTorch's classification (ops.txt kind=), else the schema's */
  bool kind_given;
  bool pt_decomp, pt_core_decomp; /* PyTorch's decomposition tables have a rule (ops.txt) */
  const alloy_op *functional; /* in-place/out= ops: the functional sibling, or NULL */
  const int16_t *functional_args; /* see alloy_op_functional_arg */
  bool functional_appends; /* the twin returns the op's results, then the written tensors' values */
  alloy_schema *schema;
  alloy_meta_fn meta;      /* shape function, NULL when none          */
  int meta_param;          /* the family parameter the table gives it */
  uint32_t refused_dtypes; /* 1 << dtype PyTorch's CPU kernel refuses (ir/meta_dtypes.c) */
  bool refused_by_input;   /* checked on the tensor arguments, not output 0 */
};

/* How argument j of an in-place or out= op's functional twin is given:
 * an index into the op's own arguments (self stands for the functional
 * op's first tensor whatever its name), or one of these. */
enum {
  ALLOY_FARG_DEFAULT = -1,   /* the functional op's default               */
  ALLOY_FARG_NONE = -2,      /* None (an optional the op does not take)   */
  ALLOY_FARG_OUT_DTYPE = -3, /* the dtype of the first written tensor     */
};
int alloy_op_functional_arg(const alloy_op *op, int j);
/* The tensors a mutating op writes, in the order of its functional twin's
 * results: self of an in-place op; the out= tensors (keyword-only and
 * written) of an out= op, which torchgen lists in the order of the results;
 * every written tensor of any other op, in schema order.
 * Writes at most cap indices into w; returns how many. */
int alloy_op_written_args(const alloy_op *op, int *w, int cap);
/* Whether op's functional twin returns op's own results followed by the
 * new values of the tensors op writes (a mutable op and its torchgen
 * "_functional" form: _native_batch_norm_legit), rather than the written
 * tensors' values as its results (in-place and out= ops). */
bool alloy_op_functional_appends(const alloy_op *op);

struct alloy_value {
  int id; /* unique in the graph, in creation order */
  const char *name;
  alloy_value_kind kind;
  alloy_dtype dtype;
  int32_t rank;
  alloy_dim *shape;   /* rank entries */
  alloy_dim *strides; /* NULL or rank entries */
  alloy_device device;
  alloy_dim int_value; /* ALLOY_VALUE_INT */
  alloy_node *producer;
  int output_index;
  alloy_node **users; /* each user node once, in graph order (by node id) */
  int nusers, cap_users;
};

struct alloy_node {
  int id; /* unique in the graph, in creation order */
  const alloy_op *op;
  alloy_arg *args; /* op->schema->nargs entries, normalized */
  int nout;
  alloy_value **outs;
  bool dead;
  /* Data-dependent sizes of this node's outputs are the symbols
   * u<unbacked_first>, u<unbacked_first+1>, ...: re-running its shape
   * function (verification, cloning) names them the same. */
  int unbacked_first;
};

typedef struct alloy_graph_role {
  int role;         /* alloy_input_role or alloy_output_role */
  const char *name; /* NULL for user inputs and user outputs */
  /* Inputs only: the runtime attachments (alloy_graph_set_input_data and
   * alloy_graph_input_is_intermediate below); zero for outputs. */
  const void *data;    /* borrowed; NULL when the host data is not known */
  uint64_t data_bytes; /* 0 when data is NULL */
  bool intermediate;   /* computed by another partition (set by extract) */
} alloy_graph_role;

struct alloy_graph {
  alloy_arena arena;
  alloy_symtab *symtab;
  alloy_node **nodes;
  int nnodes, cap_nodes;
  alloy_value **inputs;
  int ninputs, cap_inputs;
  alloy_value **outputs;
  int noutputs;
  /* The graph signature (torch.export's): each input's and output's role
   * and the name it refers to (a weight, a buffer, a user input), by index;
   * names live in the arena. in_roles grows with inputs. */
  alloy_graph_role *in_roles;
  alloy_graph_role *out_roles;
  const char *weights_file; /* arena; NULL when none */
  alloy_value **values; /* every value, by id */
  int nvalues, cap_values;
  int next_node_id;
  int next_unbacked; /* next free u<N> for data-dependent sizes */
  alloy_value **name_slots; /* open-addressing table of values by name */
  int name_cap, name_count;
};

/* Runtime attachments of a graph input (the runtime sets them; the host
 * table shows them to plugins as graph_input_data and graph_input_kind):
 * the host data of a parameter, buffer or constant known at compile
 * (borrowed: the caller keeps it alive as long as g and its copies), and
 * whether the input is a value that another partition computes (set by
 * alloy_graph_extract on the inputs it makes for values defined outside
 * the extracted nodes). Clone and specialize keep both; extract keeps the
 * data of inputs of g that become inputs of the extracted graph. */
void alloy_graph_set_input_data(alloy_graph *g, int i, const void *data, uint64_t bytes);
const void *alloy_graph_input_data(const alloy_graph *g, int i, uint64_t *bytes);
bool alloy_graph_input_is_intermediate(const alloy_graph *g, int i);

/* Whether err is the static out-of-memory error alloy_error_new falls back
 * to (ir/error.c): never freed, and the same pointer every time. */
bool alloy_error_is_static(const alloy_error *err);

/* Visits every value referenced by an argument (recursing into lists). */
typedef void (*alloy_arg_value_fn)(alloy_value *v, void *ctx);
void alloy_arg_for_each_value(const alloy_arg *a, alloy_arg_value_fn fn,
                              void *ctx);

/* The registry's view of the shape-function tables (ir/meta_*.c). */
typedef struct alloy_meta_entry {
  const char *op; /* "aten.add.Tensor" */
  alloy_meta_fn fn;
  int param;
} alloy_meta_entry;

/* A row of ir/meta_dtypes.c: dtypes PyTorch's CPU kernel for op refuses. */
typedef struct alloy_dtype_refusal {
  const char *op;    /* registry name; rows sorted by it, NULL ends the table */
  uint32_t dtypes;   /* 1 << alloy_dtype for each refused dtype */
  bool by_input;     /* the tensor arguments' dtypes (all refused), not output 0's */
} alloy_dtype_refusal;

extern const alloy_dtype_refusal alloy_cpu_dtype_refusals[];

#endif
