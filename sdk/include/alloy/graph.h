/*
 * alloy/graph.h: the tensor graph and its builder.
 *
 * A graph is a list of nodes in topological order. A node applies one op of
 * the registry to arguments normalized to the op's schema (one alloy_arg per
 * schema argument, defaults filled in) and defines one value per output.
 * Values are tensors (dtype, shape of alloy_dims, optional strides, device)
 * or scalars (SymInt, float, bool); graph inputs are values with no producer.
 *
 * Ownership: the graph owns its nodes, values, argument copies, names and its
 * symbol table; every pointer obtained from a graph lives until the graph is
 * freed or the object is removed by a pass (dead-code elimination frees
 * nothing early: removed nodes are released with the graph). A graph is not
 * thread-safe; distinct graphs may be used from distinct threads.
 */
#ifndef ALLOY_GRAPH_H
#define ALLOY_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "alloy/dtype.h"
#include "alloy/error.h"
#include "alloy/ops.h"
#include "alloy/sym.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ALLOY_MAX_RANK 16 /* largest tensor rank Alloy represents */

typedef struct alloy_graph alloy_graph;
typedef struct alloy_node alloy_node;

typedef enum alloy_value_kind {
  ALLOY_VALUE_TENSOR = 0,
  ALLOY_VALUE_INT,   /* a SymInt: its (maybe symbolic) value is known      */
  ALLOY_VALUE_FLOAT, /* a float known only at run time                     */
  ALLOY_VALUE_BOOL,  /* a bool known only at run time                      */
} alloy_value_kind;

/* The static type of a value. For tensors: dtype, rank and shape (shape has
 * rank entries; strides is NULL for "contiguous or unknown"). For SymInt
 * scalars: int_value. Used to declare inputs and to read inferred types. */
typedef struct alloy_value_type {
  alloy_value_kind kind;
  alloy_dtype dtype;      /* tensors; scalars carry i64/f64/bool            */
  int32_t rank;
  const alloy_dim *shape; /* rank entries, borrowed                         */
  const alloy_dim *strides; /* NULL or rank entries, borrowed               */
  alloy_device device;
  alloy_dim int_value;    /* ALLOY_VALUE_INT only                           */
} alloy_value_type;

alloy_graph *alloy_graph_new(void);
void alloy_graph_free(alloy_graph *g); /* accepts NULL */
/* The graph's symbol table: declare symbols here before using them in input
 * shapes. Owned by the graph. */
alloy_symtab *alloy_graph_symtab(alloy_graph *g);

/* Adds a graph input. name is copied; it must be unique among the graph's
 * value names (NULL: a fresh name "%N" is chosen). */
alloy_error *alloy_graph_add_input(alloy_graph *g, const char *name,
                                   const alloy_value_type *type,
                                   alloy_value **out);

/* Adds a node applying op to the given arguments, after every node already
 * there. Positional arguments come first (args[0..nargs)); then named ones
 * (kwnames[i] = kwargs[i], i < nkw). They are matched to the schema, missing
 * ones take their defaults, each is checked against its schema type, and the
 * op's shape function computes the outputs' types. Arguments are deep-copied;
 * values they reference must belong to g. On error nothing is added and the
 * error names the op and the argument. name (copied, may be NULL) names the
 * first output; the others get "<name>_<k>". */
alloy_error *alloy_graph_add_node(alloy_graph *g, const alloy_op *op,
                                  const alloy_arg *args, int nargs,
                                  const char *const *kwnames,
                                  const alloy_arg *kwargs, int nkw,
                                  const char *name, alloy_node **out);

/* Sets the graph's outputs (copied list). */
alloy_error *alloy_graph_set_outputs(alloy_graph *g, alloy_value *const *values,
                                     int n);

/* The graph signature: what each input and output is to the model the
 * graph came from (torch.export's input and output specs). A fresh input
 * is a user input, a fresh output a user output; roles are kept by clone
 * and by the .air format. */
typedef enum alloy_input_role {
  ALLOY_INPUT_USER = 0,  /* an argument of the model's forward()          */
  ALLOY_INPUT_PARAMETER, /* a weight; name: its key in the model weights  */
  ALLOY_INPUT_BUFFER,    /* a buffer (running_mean, a rotary table); name */
  ALLOY_INPUT_CONSTANT,  /* a lifted tensor constant; name                */
} alloy_input_role;

typedef enum alloy_output_role {
  ALLOY_OUTPUT_USER = 0,       /* a result of forward()                    */
  ALLOY_OUTPUT_BUFFER_MUTATION, /* the new value of buffer `name`          */
  ALLOY_OUTPUT_INPUT_MUTATION,  /* the new value of user input `name`      */
} alloy_output_role;

/* name is copied; it is required for every role but the user ones, where
 * it must be NULL. */
alloy_error *alloy_graph_set_input_role(alloy_graph *g, int i,
                                        alloy_input_role role,
                                        const char *name);
alloy_error *alloy_graph_set_output_role(alloy_graph *g, int i,
                                         alloy_output_role role,
                                         const char *name);
/* The role of input/output i; *name (may be NULL to skip) gets the name it
 * refers to, owned by the graph, or NULL. */
alloy_input_role alloy_graph_input_role(const alloy_graph *g, int i,
                                        const char **name);
alloy_output_role alloy_graph_output_role(const alloy_graph *g, int i,
                                          const char **name);
/* The file holding the data of the graph's weights (parameter, buffer and
 * constant inputs), as the .air `weights` line names it: relative to the
 * .air file. Copied; NULL clears it. The getter returns NULL when none. */
alloy_error *alloy_graph_set_weights_file(alloy_graph *g, const char *path);
const char *alloy_graph_weights_file(const alloy_graph *g);

int alloy_graph_num_inputs(const alloy_graph *g);
alloy_value *alloy_graph_input(const alloy_graph *g, int i);
int alloy_graph_num_outputs(const alloy_graph *g);
alloy_value *alloy_graph_output(const alloy_graph *g, int i);
/* Nodes in topological order. */
int alloy_graph_num_nodes(const alloy_graph *g);
alloy_node *alloy_graph_node(const alloy_graph *g, int i);
/* The value called name, or NULL. */
alloy_value *alloy_graph_find_value(const alloy_graph *g, const char *name);

const alloy_op *alloy_node_op(const alloy_node *n);
int alloy_node_num_args(const alloy_node *n); /* == the schema's arg count */
const alloy_arg *alloy_node_arg(const alloy_node *n, int i);
int alloy_node_num_outputs(const alloy_node *n);
alloy_value *alloy_node_output(const alloy_node *n, int i);

const char *alloy_value_name(const alloy_value *v);
/* Fills *type; the pointers in it are owned by the graph. */
void alloy_value_get_type(const alloy_value *v, alloy_value_type *type);
alloy_value_kind alloy_value_kind_of(const alloy_value *v);
alloy_dtype alloy_value_dtype(const alloy_value *v);
int alloy_value_rank(const alloy_value *v);
const alloy_dim *alloy_value_shape(const alloy_value *v);
/* The node that defines v and which of its outputs v is; NULL for inputs. */
alloy_node *alloy_value_producer(const alloy_value *v, int *output_index);
/* Users: each node that uses v, once per node, in graph order. */
int alloy_value_num_users(const alloy_value *v);
alloy_node *alloy_value_user(const alloy_value *v, int i);

/* Passes. */
/* Removes nodes whose outputs are unused and that write no argument; returns
 * the number removed. */
int alloy_graph_dce(alloy_graph *g);
/* Redirects every use of `from` (node arguments and graph outputs) to `to`. */
alloy_error *alloy_graph_replace_uses(alloy_graph *g, alloy_value *from,
                                      alloy_value *to);
/* A deep copy with its own symbol table. */
alloy_error *alloy_graph_clone(const alloy_graph *g, alloy_graph **out);
/* A copy of g with some of its symbols given values: values[i] is the value
 * of symbol i of g's table where bound[i] (nvalues entries). Every size
 * those symbols determine becomes concrete, every use of a SymInt value
 * they determine becomes a literal, and nodes left unused (sym_size, the
 * _operator arithmetic) are removed. Unbound symbols (data-dependent sizes)
 * stay symbolic. Values are not range-checked here. */
alloy_error *alloy_graph_specialize(const alloy_graph *g, const int64_t *values,
                                    const bool *bound, int nvalues,
                                    alloy_graph **out);
/* The subgraph of the given nodes (in any order; must belong to g): values
 * they use that are defined outside become inputs (same names), values they
 * define that are used outside or are outputs of g become outputs. */
alloy_error *alloy_graph_extract(const alloy_graph *g,
                                 alloy_node *const *nodes, int n,
                                 alloy_graph **out);

/* Checks every node against its schema and recomputes its output types with
 * the op's shape function; an error names the node, the op and the argument
 * or output that disagree. */
alloy_error *alloy_graph_verify(const alloy_graph *g);

/* The .air text format (see docs/air.md). print writes the whole graph;
 * parse reads one. The returned string is malloc'd: the caller frees it.
 * Parse errors read "<filename>:<line>:<column>: expected ...". */
alloy_error *alloy_air_print(const alloy_graph *g, char **out);
alloy_error *alloy_air_parse(const char *text, size_t len,
                             const char *filename, alloy_graph **out);

#ifdef __cplusplus
}
#endif
#endif
