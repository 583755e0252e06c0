/*
 * decompositions/functionalize.h: the functionalization pass: turns a graph
 * with in-place ops, out= ops and views that are written to into one that
 * computes the same values with no mutation and no aliasing (see
 * docs/functionalization.md).
 */
#ifndef ALLOY_FUNCTIONALIZE_H
#define ALLOY_FUNCTIONALIZE_H

#include "alloy/graph.h"

/* A functional copy of g in *out (the caller frees it). Every in-place or
 * out= node becomes its functional variant, whose result is the tensor's
 * value from then on; a write to a view is carried to its base with the
 * view's inverse (slice -> slice_scatter, ...), and later uses of any view
 * of that base read the new value. A graph input that is written gets an
 * extra output, appended after the others, holding its final value, with
 * the role ALLOY_OUTPUT_INPUT_MUTATION (name: the input's name) or, for a
 * buffer input, ALLOY_OUTPUT_BUFFER_MUTATION (the buffer's name). A graph
 * with no mutating node comes out as a plain clone. Writes PyTorch refuses
 * (through an expanded view; an in-place result that cannot be cast back
 * to self's dtype) are errors that name the node and its op. */
alloy_error *alloy_functionalize(const alloy_graph *g, alloy_graph **out);

#endif
