/*
 * ir/model.c: models (a graph and its weights): loading by file kind,
 * binding weights and user tensors to the graph's inputs, and saving as
 * .air text with a safetensors weights file. The .pt2 reader is in
 * ir/pt2_archive.c and ir/pt2_graph.c.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/graph_internal.h"
#include "ir/model_internal.h"

static alloy_error *oom(void) {
  return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
}

alloy_error *model_add_weight(alloy_model *m, const char *name, alloy_dtype dtype, int rank,
                              const int64_t *sizes, const void *data, void *owned) {
  if (model_find_weight(m, name))
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "two weights are named '%s'", name);
  if (m->nweights == m->cap_weights) {
    int cap = m->cap_weights ? 2 * m->cap_weights : 64;
    model_weight *w = realloc(m->weights, sizeof *w * (size_t)cap);
    if (!w) return oom();
    m->weights = w;
    m->cap_weights = cap;
  }
  model_weight *w = &m->weights[m->nweights];
  memset(w, 0, sizeof *w);
  if (!(w->name = alloy_arena_strdup(&m->arena, name))) return oom();
  w->dtype = dtype;
  w->rank = rank;
  memcpy(w->sizes, sizes, sizeof *sizes * (size_t)rank);
  w->data = data;
  w->owned = owned;
  m->nweights++;
  return NULL;
}

/* Models have hundreds of weights at most and are looked up once per
 * input: a linear scan is enough. */
const model_weight *model_find_weight(const alloy_model *m, const char *name) {
  for (int i = 0; i < m->nweights; i++)
    if (!strcmp(m->weights[i].name, name)) return &m->weights[i];
  return NULL;
}

void alloy_model_free(alloy_model *m) {
  if (!m) return;
  for (int i = 0; i < m->nweights; i++) free(m->weights[i].owned);
  free(m->weights);
  alloy_graph_free(m->graph);
  alloy_safetensors_close(m->st);
  if (m->map) munmap(m->map, m->map_size);
  alloy_arena_free(&m->arena);
  free(m);
}

alloy_graph *alloy_model_graph(alloy_model *m) { return m->graph; }
int alloy_model_num_weights(const alloy_model *m) { return m->nweights; }

static void weight_tensor(const model_weight *w, alloy_host_tensor *out) {
  *out = (alloy_host_tensor){.struct_size = sizeof *out, .dtype = w->dtype, .rank = w->rank,
                             .sizes = w->sizes, .data = (void *)w->data};
}

const char *alloy_model_weight(const alloy_model *m, int i, alloy_host_tensor *out) {
  if (i < 0 || i >= m->nweights) return NULL;
  weight_tensor(&m->weights[i], out);
  return m->weights[i].name;
}

bool alloy_model_find_weight(const alloy_model *m, const char *name, alloy_host_tensor *out) {
  const model_weight *w = model_find_weight(m, name);
  if (w) weight_tensor(w, out);
  return w != NULL;
}

int alloy_model_num_user_inputs(const alloy_model *m) {
  int n = 0;
  for (int i = 0; i < alloy_graph_num_inputs(m->graph); i++)
    n += alloy_graph_input_role(m->graph, i, NULL) == ALLOY_INPUT_USER;
  return n;
}

alloy_error *alloy_model_bind_inputs(const alloy_model *m, const alloy_host_tensor *user,
                                     int num_user, alloy_host_tensor *inputs, int num_inputs) {
  int nin = alloy_graph_num_inputs(m->graph), next = 0;
  if (num_inputs != nin)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "the graph has %d inputs, %d slots given",
                           nin, num_inputs);
  for (int i = 0; i < nin; i++) {
    const char *name;
    alloy_input_role role = alloy_graph_input_role(m->graph, i, &name);
    const char *vname = alloy_value_name(alloy_graph_input(m->graph, i));
    if (role == ALLOY_INPUT_USER) {
      if (next >= num_user)
        return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                               "user input %d (%s) has no tensor: %d given, the model takes %d",
                               next, vname, num_user, alloy_model_num_user_inputs(m));
      inputs[i] = user[next++];
    } else if (!alloy_model_find_weight(m, name, &inputs[i])) {
      return alloy_error_new(ALLOY_ERR_NOT_FOUND, "input %s: the model has no weight '%s'", vname,
                             name);
    }
  }
  if (next != num_user)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "%d user tensors given, the model takes %d",
                           num_user, next);
  return NULL;
}

/* Checks each weight input of the graph against its weight. */
static alloy_error *check_weights(const alloy_model *m, const char *path) {
  for (int i = 0; i < alloy_graph_num_inputs(m->graph); i++) {
    const char *name;
    if (alloy_graph_input_role(m->graph, i, &name) == ALLOY_INPUT_USER) continue;
    const alloy_value *v = alloy_graph_input(m->graph, i);
    const model_weight *w = model_find_weight(m, name);
    if (!w)
      return alloy_error_new(ALLOY_ERR_NOT_FOUND, "%s: input %s reads weight '%s', which is not there",
                             path, alloy_value_name(v), name);
    bool same = alloy_value_kind_of(v) == ALLOY_VALUE_TENSOR && alloy_value_dtype(v) == w->dtype &&
                alloy_value_rank(v) == w->rank;
    for (int d = 0; same && d < w->rank; d++) {
      alloy_dim dim = alloy_value_shape(v)[d];
      same = alloy_dim_is_const(dim) && dim.value == w->sizes[d];
    }
    if (!same) {
      char want[256], got[256];
      alloy_dim dims[ALLOY_MAX_RANK];
      for (int d = 0; d < w->rank; d++) dims[d] = alloy_dim_const(w->sizes[d]);
      alloy_value_type t;
      alloy_value_get_type(v, &t);
      alloy_value_type_print(t.kind, t.dtype, t.shape, t.rank, want, sizeof want);
      alloy_value_type_print(ALLOY_VALUE_TENSOR, w->dtype, dims, w->rank, got, sizeof got);
      return alloy_error_new(ALLOY_ERR_TYPE, "%s: input %s is %s but weight '%s' is %s", path,
                             alloy_value_name(v), want, name, got);
    }
  }
  return NULL;
}

/* The folder part of path ("" for none), malloc'd. */
static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? strndup(path, (size_t)(slash - path + 1)) : strdup("");
}

static alloy_error *load_air(const char *path, const char *text, size_t len, alloy_model *m) {
  alloy_error *e = alloy_air_parse(text, len, path, &m->graph);
  const char *wf = e ? NULL : alloy_graph_weights_file(m->graph);
  if (!e && wf) {
    char *dir = dir_of(path), *full = NULL;
    if (!dir || asprintf(&full, "%s%s", wf[0] == '/' ? "" : dir, wf) < 0) full = NULL;
    free(dir);
    if (!full) return oom();
    e = alloy_safetensors_open(full, &m->st);
    free(full);
    for (int i = 0; !e && i < alloy_safetensors_count(m->st); i++) {
      const alloy_st_entry *en = alloy_safetensors_entry(m->st, i);
      e = model_add_weight(m, en->name, en->dtype, en->rank, en->shape, en->data, NULL);
    }
  }
  return e;
}

alloy_error *alloy_model_load(const char *path, alloy_model **out) {
  *out = NULL;
  alloy_error *e = alloy_registry_init();
  if (e) return e;
  alloy_model *m = calloc(1, sizeof *m);
  if (!m) return oom();
  int fd = open(path, O_RDONLY);
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    if (fd >= 0) close(fd);
    free(m);
    return alloy_error_new(ALLOY_ERR_IO, "%s: cannot open (not a readable file)", path);
  }
  m->map_size = (size_t)sb.st_size;
  void *map = m->map_size ? mmap(NULL, m->map_size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
  close(fd);
  if (map == MAP_FAILED) {
    free(m);
    return alloy_error_new(ALLOY_ERR_IO, "%s: cannot map the file", path);
  }
  m->map = map;
  /* An archive begins with a local file header; anything else is text. */
  if (m->map_size >= 4 && !memcmp(map, "PK\3\4", 4)) {
    e = alloy_pt2_load(path, map, m->map_size, m);
  } else {
    e = load_air(path, map, m->map_size, m);
    /* .air text is parsed into the graph: the mapping is no longer needed. */
    if (map) munmap(map, m->map_size);
    m->map = NULL;
  }
  if (!e) e = check_weights(m, path);
  if (e) {
    alloy_model_free(m);
    return e;
  }
  *out = m;
  return NULL;
}

alloy_error *alloy_model_load_pt2_memory(const void *data, size_t size, const char *label,
                                         alloy_model **out) {
  *out = NULL;
  alloy_error *e = alloy_registry_init();
  alloy_model *m = e ? NULL : calloc(1, sizeof *m);
  if (!e && !m) e = oom();
  if (!e) e = alloy_pt2_load(label, data, size, m);
  if (!e) e = check_weights(m, label);
  if (e) {
    alloy_model_free(m);
    return e;
  }
  *out = m;
  return NULL;
}

/* The path to write in the .air for weights_path: relative to the .air's
 * folder when it lies there. */
static const char *relative_to(const char *air_path, const char *weights_path) {
  char *dir = dir_of(air_path);
  size_t n = dir ? strlen(dir) : 0;
  const char *rel = dir && n && !strncmp(weights_path, dir, n) ? weights_path + n : weights_path;
  if (dir && !n && strchr(weights_path, '/')) rel = weights_path;
  free(dir);
  return rel;
}

alloy_error *alloy_model_save_air(const alloy_model *m, const char *air_path,
                                  const char *weights_path) {
  /* Only the weights the graph reads are written. */
  alloy_st_tensor *ts = calloc((size_t)(m->nweights ? m->nweights : 1), sizeof *ts);
  if (!ts) return oom();
  int n = 0;
  for (int i = 0; i < alloy_graph_num_inputs(m->graph); i++) {
    const char *name;
    if (alloy_graph_input_role(m->graph, i, &name) == ALLOY_INPUT_USER) continue;
    const model_weight *w = model_find_weight(m, name);
    bool seen = false;
    for (int k = 0; k < n && !seen; k++) seen = !strcmp(ts[k].name, name);
    if (!w || seen) continue;
    uint64_t numel = 1;
    for (int d = 0; d < w->rank; d++) numel *= (uint64_t)w->sizes[d];
    ts[n++] = (alloy_st_tensor){.name = w->name, .dtype = w->dtype, .rank = w->rank,
                                .shape = w->sizes, .data = w->data,
                                .nbytes = (size_t)numel * alloy_dtype_size(w->dtype)};
  }
  alloy_error *e = alloy_safetensors_write(weights_path, ts, n);
  free(ts);
  if (e) return e;
  /* The graph is printed from a copy that names the new weights file. */
  alloy_graph *g = NULL;
  char *text = NULL;
  e = alloy_graph_clone(m->graph, &g);
  if (!e) e = alloy_graph_set_weights_file(g, n ? relative_to(air_path, weights_path) : NULL);
  if (!e) e = alloy_air_print(g, &text);
  alloy_graph_free(g);
  if (e) return e;
  FILE *f = fopen(air_path, "w");
  size_t len = strlen(text);
  bool ok = f && fwrite(text, 1, len, f) == len;
  if (f && fclose(f) != 0) ok = false;
  free(text);
  return ok ? NULL : alloy_error_new(ALLOY_ERR_IO, "%s: cannot write", air_path);
}
