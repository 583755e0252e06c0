/*
 * ir/graph_internal.h: graph operations shared inside the library (the .air
 * parser, importers, passes) that are not part of the public API.
 */
#ifndef ALLOY_GRAPH_INTERNAL_H
#define ALLOY_GRAPH_INTERNAL_H

#include "ir/ir.h"
#include "ir/meta.h"

/* Appends a node with normalized args and known output types (no shape
 * function is run). unbacked_first: the first "u<N>" number its shape
 * function uses (see alloy_node.unbacked_first). */
alloy_error *alloy_graph_append(alloy_graph *g, const alloy_op *op,
                                const alloy_arg *args,
                                const alloy_meta_out *outs, int nout,
                                const char *name, int unbacked_first,
                                alloy_node **out);
alloy_error *alloy_graph_rename(alloy_graph *g, alloy_value *v,
                                const char *name);
/* alloy_graph_add_node with every argument given in schema order, the
 * keyword-only ones by position too (passes build nodes this way); trailing
 * ones left out take their defaults. name as for alloy_graph_add_node. */
alloy_error *alloy_graph_add_node_ordered(alloy_graph *g, const alloy_op *op,
                                         const alloy_arg *args, int nargs, const char *name,
                                         alloy_node **out);
/* "f32[s0, 3]", "SymInt": like snprintf. */
size_t alloy_value_type_print(alloy_value_kind kind, alloy_dtype dtype,
                              const alloy_dim *shape, int rank, char *buf,
                              size_t cap);

/* A copy of a graph made node by node, for passes that rewrite as they go
 * (decompositions/decompose.c): begin copies the symbols and inputs; each
 * node is then copied (its arguments mapped) or replaced by nodes the pass
 * builds in the destination, whose values it maps the old ones to; finish
 * sets the outputs and the signature and returns the new graph (the copy is
 * freed either way). */
typedef struct alloy_graph_copy alloy_graph_copy;
alloy_error *alloy_copy_begin(const alloy_graph *src, alloy_graph_copy **out);
alloy_graph *alloy_copy_dst(alloy_graph_copy *c);
alloy_value *alloy_copy_map(const alloy_graph_copy *c, const alloy_value *v); /* NULL: none */
void alloy_copy_set(alloy_graph_copy *c, const alloy_value *from, alloy_value *to);
alloy_error *alloy_copy_node(alloy_graph_copy *c, const alloy_node *n, alloy_node **out);
alloy_error *alloy_copy_finish(alloy_graph_copy *c, alloy_graph **out);
void alloy_copy_abort(alloy_graph_copy *c);

#endif
