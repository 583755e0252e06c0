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
/* "f32[s0, 3]", "SymInt": like snprintf. */
size_t alloy_value_type_print(alloy_value_kind kind, alloy_dtype dtype,
                              const alloy_dim *shape, int rank, char *buf,
                              size_t cap);

#endif
