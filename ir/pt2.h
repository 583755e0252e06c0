/*
 * ir/pt2.h: the two halves of the torch.export importer. pt2_archive.c
 * opens the archive (libzip over a read-only mapping), finds entries and
 * their bytes, and loads the weights (their configs read with jansson);
 * pt2_graph.c maps models/model.json (the serialized ExportedProgram, read
 * with ir/json.c, whose documents are built and freed in one piece: it can
 * be tens of megabytes) onto an Alloy graph.
 */
#ifndef ALLOY_PT2_H
#define ALLOY_PT2_H

#include <jansson.h>

#include "ir/json.h"
#include "ir/model_internal.h"

typedef struct pt2_archive pt2_archive;

/* The bytes of one entry: in place in the mapping when the entry is stored
 * (PyTorch stores every entry uncompressed), else a malloc'd copy that
 * *owned holds (free it). A copy is paid for from the archive's expansion
 * budget (pt2_archive.c says what it is). */
typedef struct pt2_bytes {
  const uint8_t *data;
  size_t size;
  void *owned;
} pt2_bytes;

/* Opens the archive mapped at [map, map + size); file names it in errors.
 * The mapping must outlive the archive. */
alloy_error *pt2_archive_open(const char *file, const void *map, size_t size,
                              pt2_archive **out);
void pt2_archive_close(pt2_archive *a); /* accepts NULL */
/* The archive's root folder ("mlp.core/"), "" when entries have none. */
const char *pt2_archive_root(const pt2_archive *a);
bool pt2_archive_has(const pt2_archive *a, const char *entry);
/* Reads entry root+name; a missing entry is an error naming it, and so is
 * one of more than max bytes (refused before it is read), one whose bytes
 * do not fit the budget, and one that yields more or fewer bytes than its
 * directory says. */
alloy_error *pt2_archive_read(pt2_archive *a, const char *name, uint64_t max, pt2_bytes *out);
/* Parses entry root+name (at most 1 GiB) as JSON; errors name the entry,
 * line and column. */
alloy_error *pt2_archive_json(pt2_archive *a, const char *name, json_t **out);
/* The same into doc (see ir/json.h), *out its top value; the same errors
 * (ALLOY_ERR_OUT_OF_MEMORY when memory ran out). doc is the caller's to
 * free, whether or not this fails. */
alloy_error *pt2_archive_doc(pt2_archive *a, const char *name, jv_doc *doc, const jv **out);
const char *pt2_archive_file(const pt2_archive *a);

/* Adds to m every tensor of data/weights/model_weights_config.json and
 * data/constants/model_constants_config.json that an input of m->graph
 * reads (build the graph first), as views of their storages: each is
 * checked against the input's type before its storage is read, and what
 * must be inflated, gathered or zero-filled is bounded by the budget. */
alloy_error *pt2_load_weights(pt2_archive *a, alloy_model *m);

/* Builds m->graph from models/model.json. */
alloy_error *pt2_load_graph(pt2_archive *a, alloy_model *m);

/* The same from a parsed model.json: file and folder name the archive and
 * its root in errors. The caller keeps root; *out is a new graph. */
alloy_error *pt2_graph_from_doc(const char *file, const char *folder, const jv *root,
                                alloy_graph **out);
/* The same from jansson's tree of it (the tests and the fuzz_pt2_json
 * target hold one): written out and read again by ir/json.c, so that it
 * is read exactly as an archive's model.json is. */
alloy_error *pt2_graph_from_json(const char *file, const char *folder, json_t *root,
                                 alloy_graph **out);

/* ScalarType numbers of the export schema. false when unknown. */
bool pt2_dtype(int64_t code, alloy_dtype *out);

#endif
