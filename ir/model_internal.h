/*
 * ir/model_internal.h: the model object shared by the loaders (ir/model.c
 * for .air and safetensors, ir/pt2_*.c for torch.export archives).
 */
#ifndef ALLOY_MODEL_INTERNAL_H
#define ALLOY_MODEL_INTERNAL_H

#include "alloy/model.h"
#include "alloy/safetensors.h"
#include "ir/ir.h"

typedef struct model_weight {
  const char *name;               /* arena                                  */
  alloy_dtype dtype;
  int32_t rank;
  int64_t sizes[ALLOY_MAX_RANK];
  const void *data;               /* into a mapping, or owned below         */
  void *owned;                    /* malloc'd data of a copied view, or NULL */
} model_weight;

struct alloy_model {
  alloy_graph *graph;
  model_weight *weights;
  int nweights, cap_weights;
  int *index;                     /* open addressing by name: weight + 1, 0 empty */
  int index_cap;                  /* a power of two, over twice nweights    */
  alloy_arena arena;              /* weight names                           */
  void *map;                      /* a mapped .pt2 archive, or NULL         */
  size_t map_size;
  alloy_safetensors *st;          /* the weights file of an .air model      */
};

/* Adds a weight (name copied; data borrowed unless owned is set, in which
 * case the model frees it). A name already present is an error. */
alloy_error *model_add_weight(alloy_model *m, const char *name, alloy_dtype dtype, int rank,
                              const int64_t *sizes, const void *data, void *owned);
const model_weight *model_find_weight(const alloy_model *m, const char *name);

/* Reads the torch.export archive held in data[0..size) into m (graph and
 * weights); path names it in errors. Weights may point into data, which
 * must outlive m. */
alloy_error *alloy_pt2_load(const char *path, const void *data, size_t size, alloy_model *m);

/* A model from an archive in memory (borrowed, must outlive the model):
 * the fuzz target's way in. */
alloy_error *alloy_model_load_pt2_memory(const void *data, size_t size, const char *label,
                                         alloy_model **out);

#endif
