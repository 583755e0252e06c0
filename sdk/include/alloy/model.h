/*
 * alloy/model.h: a model is a graph plus the tensors its weight inputs
 * read: parameters, buffers and lifted constants. Models come from a
 * torch.export archive (.pt2, as torch.export.save writes it) or from .air
 * text whose `weights` line names a safetensors file, and are saved as .air
 * plus safetensors.
 *
 * Weights are read without copying where the file allows: a .pt2 archive and
 * a safetensors file are mapped read-only, and a weight that is a contiguous
 * view of its storage points into the mapping. Weight data is therefore
 * read-only and lives as long as the model.
 *
 * Ownership: the model owns its graph, its weights and its mappings;
 * alloy_model_free releases all of it. A model is not thread-safe while its
 * graph is being changed; reading weights from several threads is fine.
 */
#ifndef ALLOY_MODEL_H
#define ALLOY_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "alloy/error.h"
#include "alloy/graph.h"
#include "alloy/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct alloy_model alloy_model;

/* Loads a model: a .pt2 archive (told apart by its ZIP signature, not its
 * name) or .air text. Errors name the file and the part of it that is wrong
 * (an archive entry, a node and its op, a line and column). */
alloy_error *alloy_model_load(const char *path, alloy_model **out);
void alloy_model_free(alloy_model *m); /* accepts NULL */

/* The model's graph, owned by the model; passes may rewrite it in place. */
alloy_graph *alloy_model_graph(alloy_model *m);

/* The weights, by name (a parameter's "l1.weight", a buffer's name, a
 * constant's name), in the order the file lists them. The host tensor's
 * sizes and data are borrowed from the model: row-major contiguous,
 * read-only, valid until alloy_model_free. */
int alloy_model_num_weights(const alloy_model *m);
const char *alloy_model_weight(const alloy_model *m, int i, alloy_host_tensor *out);
bool alloy_model_find_weight(const alloy_model *m, const char *name,
                             alloy_host_tensor *out);

/* The number of user inputs (graph inputs with the role ALLOY_INPUT_USER). */
int alloy_model_num_user_inputs(const alloy_model *m);

/* Fills inputs[0..num_inputs) (num_inputs = the graph's input count) for
 * alloy_program_run: each weight input gets its weight, each user input the
 * next of user[0..num_user), in order. The tensors' pointers are borrowed
 * from the model and from user. Errors name the input that cannot be
 * filled (a missing weight, too few or too many user tensors). */
alloy_error *alloy_model_bind_inputs(const alloy_model *m,
                                     const alloy_host_tensor *user, int num_user,
                                     alloy_host_tensor *inputs, int num_inputs);

/* Writes the model as .air text at air_path and its weights as a
 * safetensors file at weights_path; the .air names the weights file
 * relative to its own folder when both are in one, else by the path given.
 * alloy_model_load(air_path) then gives the same graph and weights. */
alloy_error *alloy_model_save_air(const alloy_model *m, const char *air_path,
                                  const char *weights_path);

#ifdef __cplusplus
}
#endif
#endif
