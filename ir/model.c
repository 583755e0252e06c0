/*
 * ir/model.c: models (a graph and its weights): loading by file kind,
 * binding weights and user tensors to the graph's inputs, and saving as
 * .air text with a safetensors weights file. The .pt2 reader is in
 * ir/pt2_archive.c and ir/pt2_graph.c.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/files.h"
#include "ir/graph_internal.h"
#include "ir/model_internal.h"

static alloy_error *oom(void) {
  return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
}

static uint64_t name_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* Weights by name: an open-addressing index, so a model of many weights
 * loads, binds and saves in linear time. */
const model_weight *model_find_weight(const alloy_model *m, const char *name) {
  if (!m->index_cap) return NULL;
  size_t mask = (size_t)m->index_cap - 1;
  for (size_t at = name_hash(name) & mask;; at = (at + 1) & mask) {
    int k = m->index[at];
    if (!k) return NULL;
    if (!strcmp(m->weights[k - 1].name, name)) return &m->weights[k - 1];
  }
}

/* Makes room in the index for one more weight. */
static bool index_grow(alloy_model *m) {
  if (2 * (m->nweights + 1) <= m->index_cap) return true;
  int cap = m->index_cap ? 2 * m->index_cap : 128;
  int *idx = calloc((size_t)cap, sizeof *idx);
  if (!idx) return false;
  for (int i = 0; i < m->nweights; i++) {
    size_t at = name_hash(m->weights[i].name) & (size_t)(cap - 1);
    while (idx[at]) at = (at + 1) & (size_t)(cap - 1);
    idx[at] = i + 1;
  }
  free(m->index);
  m->index = idx;
  m->index_cap = cap;
  return true;
}

alloy_error *model_add_weight(alloy_model *m, const char *name, alloy_dtype dtype, int rank,
                              const int64_t *sizes, const void *data, void *owned) {
  if (model_find_weight(m, name))
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "two weights are named '%s'", name);
  if (!index_grow(m)) return oom();
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
  size_t at = name_hash(w->name) & (size_t)(m->index_cap - 1);
  while (m->index[at]) at = (at + 1) & (size_t)(m->index_cap - 1);
  m->index[at] = ++m->nweights;
  return NULL;
}


void alloy_model_free(alloy_model *m) {
  if (!m) return;
  for (int i = 0; i < m->nweights; i++) free(m->weights[i].owned);
  free(m->weights);
  free(m->index);
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

/* The weights line of an .air names a file in the .air's folder or below
 * it: an absolute path, or one with a ".." component, could make a model
 * read any file the user can (and a parse error show its bytes), so both
 * are refused. (A symbolic link in the folder is followed: the Hugging
 * Face cache links every file of a snapshot to a blob outside it.) */
static alloy_error *check_weights_path(const char *air, const char *wf) {
  const char *why = NULL;
  if (!*wf) why = "is empty";
  else if (wf[0] == '/') why = "is absolute";
  for (const char *p = wf; !why && *p; p = strchr(p, '/') ? strchr(p, '/') + 1 : p + strlen(p))
    if (p[0] == '.' && p[1] == '.' && (p[2] == '/' || p[2] == '\0')) why = "leaves the folder (..)";
  if (!why) return NULL;
  return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                         "%s: the weights path %s: it must name a file in the .air's folder or "
                         "below it", air, why);
}

/* Whether bytes begin as a safetensors file does: an 8-byte header length
 * within the file, and '{'. A file that does not is never parsed, so that
 * no error quotes bytes of a file that is not weights. */
static bool looks_like_safetensors(const unsigned char *b, size_t size) {
  if (size < 9) return false;
  uint64_t hlen = 0;
  for (int i = 7; i >= 0; i--) hlen = hlen << 8 | b[i];
  return hlen >= 2 && hlen <= size - 8 && b[8] == '{';
}

/* The weights file of an .air model, mapped into m->map (the .air text's
 * mapping is gone by then). */
static alloy_error *load_air_weights(const char *path, alloy_model *m) {
  const char *wf = alloy_graph_weights_file(m->graph);
  if (!wf) return NULL;
  alloy_error *e = check_weights_path(path, wf);
  if (e) return e;
  char *dir = dir_of(path), *full = NULL;
  if (!dir || asprintf(&full, "%s%s", dir, wf) < 0) full = NULL;
  free(dir);
  if (!full) return oom();
  e = alloy_file_map(full, 0, &m->map, &m->map_size);
  if (!e && !looks_like_safetensors(m->map, m->map_size))
    e = alloy_error_new(ALLOY_ERR_PARSE, "%s: not a safetensors file (the weights of %s)", full,
                        path);
  if (!e) e = alloy_safetensors_open_memory(m->map, m->map_size, full, &m->st);
  free(full);
  for (int i = 0; !e && i < alloy_safetensors_count(m->st); i++) {
    const alloy_st_entry *en = alloy_safetensors_entry(m->st, i);
    e = model_add_weight(m, en->name, en->dtype, en->rank, en->shape, en->data, NULL);
  }
  return e;
}

/* Whether line [p, end) begins as an .air line with content does: a
 * keyword, a value name, or an op name and its '('. */
static bool air_line_start(const char *p, const char *end) {
  static const char *const words[] = {"sym", "input", "weights", "output"};
  if (*p == '%') return true;
  for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
    size_t n = strlen(words[i]);
    if ((size_t)(end - p) >= n && !memcmp(p, words[i], n) &&
        (p + n == end || p[n] == ' ' || p[n] == '\t' || p[n] == '%'))
      return true;
  }
  /* OPNAME(: an identifier, a dot, more of them */
  const char *q = p;
  bool dot = false;
  if (q < end && (isalpha((unsigned char)*q) || *q == '_'))
    while (q < end && (isalnum((unsigned char)*q) || *q == '_' || *q == '.')) dot |= *q++ == '.';
  while (q < end && (*q == ' ' || *q == '\t')) q++;
  return dot && q > p && q < end && *q == '(';
}

/* Formats are told by content, never by name: a ZIP local file header is
 * a .pt2 archive; text whose first line with content begins as an .air
 * line does is .air (docs/air.md: there is no magic). Anything else is
 * refused here, naming the file and never quoting it. */
static alloy_error *refuse_unknown(const char *path, const char *b, size_t n) {
  if (!n) return alloy_error_new(ALLOY_ERR_PARSE, "%s: not a model: empty file", path);
  const char *what = NULL;
  if (n >= 3 && b[0] == 'P' && b[1] == 'K' && (unsigned char)b[2] < 9)
    what = "a ZIP file that does not begin with a local file header";
  else if (memchr(b, '\0', n))
    what = "a binary file, neither a .pt2 archive (ZIP) nor .air text";
  if (what) return alloy_error_new(ALLOY_ERR_PARSE, "%s: not a model: %s", path, what);
  size_t line = 0;
  for (const char *p = b, *end = b + n; p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p)), *eol = nl ? nl : end;
    line++;
    const char *q = p;
    while (q < eol && (*q == ' ' || *q == '\t' || *q == '\r')) q++;
    if (q < eol && *q != '#') {
      if (air_line_start(q, eol)) return NULL;
      return alloy_error_new(ALLOY_ERR_PARSE,
                             "%s:%zu:%zu: not a model: neither a .pt2 archive (ZIP) nor .air text",
                             path, line, (size_t)(q - p) + 1);
    }
    p = eol + (nl != NULL);
  }
  return alloy_error_new(ALLOY_ERR_PARSE, "%s: not a model: no graph (blank lines and comments only)",
                         path);
}

static alloy_error *load_air(const char *path, const char *text, size_t len, alloy_model *m) {
  alloy_error *e = refuse_unknown(path, text, len);
  if (!e) e = alloy_air_parse(text, len, path, &m->graph);
  if (!e && !alloy_graph_num_outputs(m->graph))
    e = alloy_error_new(ALLOY_ERR_PARSE, "%s: not a model: the graph has no output line", path);
  return e;
}

alloy_error *alloy_model_load(const char *path, alloy_model **out) {
  *out = NULL;
  alloy_error *e = alloy_registry_init();
  if (e) return e;
  if (!path) return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "alloy_model_load: NULL path");
  alloy_model *m = calloc(1, sizeof *m);
  if (!m) return oom();
  /* A regular file only: a FIFO or a device would block or never end. */
  void *map = NULL;
  size_t size = 0;
  if ((e = alloy_file_map(path, 0, &map, &size))) {
    free(m);
    return e;
  }
  m->map = map;
  m->map_size = size;
  if (size >= 4 && !memcmp(map, "PK\3\4", 4)) {
    e = alloy_pt2_load(path, map, size, m);
  } else {
    e = load_air(path, map, size, m);
    /* .air text is parsed into the graph: the mapping is no longer needed. */
    if (map) munmap(map, size);
    m->map = NULL;
    m->map_size = 0;
    if (!e) e = load_air_weights(path, m);
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
 * folder, which must hold it (the loader refuses anything else). Compared
 * as the system resolves both folders, so "out/m.air" and "./out/w" agree.
 * *rel is malloc'd. */
static alloy_error *relative_to(const char *air_path, const char *weights_path, char **rel) {
  *rel = NULL;
  char *adir = dir_of(air_path), *wdir = dir_of(weights_path);
  char *areal = adir ? realpath(*adir ? adir : ".", NULL) : NULL;
  char *wreal = wdir ? realpath(*wdir ? wdir : ".", NULL) : NULL;
  const char *base = strrchr(weights_path, '/') ? strrchr(weights_path, '/') + 1 : weights_path;
  alloy_error *e = NULL;
  size_t n = areal ? strlen(areal) : 0;
  if (!adir || !wdir) {
    e = oom();
  } else if (!areal || !wreal) {
    e = alloy_error_new(ALLOY_ERR_IO, "%s: no such folder", !areal ? air_path : weights_path);
  } else if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
    e = alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "%s: not a file name", weights_path);
  } else if (!strcmp(areal, wreal)) {
    if (!(*rel = strdup(base))) e = oom();
  } else if (!strncmp(areal, wreal, n) && (wreal[n] == '/' || n == 1)) {
    if (asprintf(rel, "%s/%s", wreal + n + (n > 1), base) < 0) *rel = NULL, e = oom();
  } else {
    e = alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                        "%s: the weights file must be in the folder of %s or below it (an .air "
                        "names its weights relative to itself)", weights_path, air_path);
  }
  free(adir);
  free(wdir);
  free(areal);
  free(wreal);
  return e;
}

alloy_error *alloy_model_save_air(const alloy_model *m, const char *air_path,
                                  const char *weights_path) {
  /* Only the weights the graph reads are written. */
  alloy_st_tensor *ts = calloc((size_t)(m->nweights ? m->nweights : 1), sizeof *ts);
  bool *taken = calloc((size_t)(m->nweights ? m->nweights : 1), sizeof *taken); /* by weight */
  if (!ts || !taken) {
    free(ts), free(taken);
    return oom();
  }
  int n = 0;
  for (int i = 0; i < alloy_graph_num_inputs(m->graph); i++) {
    const char *name;
    if (alloy_graph_input_role(m->graph, i, &name) == ALLOY_INPUT_USER) continue;
    const model_weight *w = model_find_weight(m, name);
    if (!w || taken[w - m->weights]) continue; /* two inputs may read one weight */
    taken[w - m->weights] = true;
    uint64_t numel = 1;
    for (int d = 0; d < w->rank; d++) numel *= (uint64_t)w->sizes[d];
    ts[n++] = (alloy_st_tensor){.name = w->name, .dtype = w->dtype, .rank = w->rank,
                                .shape = w->sizes, .data = w->data,
                                .nbytes = (size_t)numel * alloy_dtype_size(w->dtype)};
  }
  /* Where the .air will find them, known before anything is written. */
  char *rel = NULL;
  alloy_error *e = n ? relative_to(air_path, weights_path, &rel) : NULL;
  if (!e) e = alloy_safetensors_write(weights_path, ts, n);
  free(ts);
  free(taken);
  /* The graph is printed from a copy that names the new weights file. */
  alloy_graph *g = NULL;
  char *text = NULL;
  if (!e) e = alloy_graph_clone(m->graph, &g);
  if (!e) e = alloy_graph_set_weights_file(g, rel);
  if (!e) e = alloy_air_print(g, &text);
  alloy_graph_free(g);
  free(rel);
  if (e) return e;
  FILE *f = fopen(air_path, "w");
  size_t len = strlen(text);
  bool ok = f && fwrite(text, 1, len, f) == len;
  if (f && fclose(f) != 0) ok = false;
  free(text);
  return ok ? NULL : alloy_error_new(ALLOY_ERR_IO, "%s: cannot write", air_path);
}
