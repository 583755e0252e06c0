/*
 * ir/pt2_archive.c: the torch.export archive as a container, and the
 * weights in it.
 *
 * torch.export.save (PyTorch 2.9 and later) writes a ZIP64 archive whose
 * entries are stored uncompressed and 64-byte aligned, all under one root
 * folder: models/model.json (the program), data/weights/ and
 * data/constants/ (one raw little-endian storage per file, described by
 * model_weights_config.json and model_constants_config.json). libzip reads
 * the container from a read-only mapping of the file, so that a stored
 * entry's bytes can be used where they lie: weights are not copied.
 *
 * libzip gives every entry's name, size, method and CRC but not where its
 * bytes start. For a stored entry we find its local header (signature, then
 * the name libzip gave, then the lengths that place the data) and check the
 * data against libzip's size and CRC before using it; an entry that does not
 * check out, or is compressed, is read through libzip into memory instead.
 *
 * An archive is not trusted (docs/security.md). What it can make Alloy
 * allocate beyond the file itself is bounded before anything is allocated:
 *
 *  - Weights are checked against the graph first. The graph is built before
 *    the weights are read, and a weight whose dtype or sizes differ from
 *    the graph input that reads it is refused before its storage is
 *    touched; a weight that no graph input reads is not loaded at all. So
 *    a weight is never materialized at a size its graph does not declare.
 *  - Expansion is budgeted. Bytes the archive does not hold as they are (a
 *    compressed entry inflated, a strided, overlapping or broadcast (stride
 *    0) view gathered into a contiguous copy, an empty storage that PyTorch
 *    left for zeros) add up to at most PT2_EXPAND_FLOOR + PT2_EXPAND_FACTOR
 *    times the archive's size (64 MiB + 2 x the file). Legitimate archives
 *    stay far below it (PyTorch stores every entry, and gathered views read
 *    storages that the archive holds); a 1 MB archive declaring a
 *    [30000, 30000] weight of strides [0, 0] over 4 bytes, or a deflate
 *    bomb, is refused before the allocation, naming the tensor or entry,
 *    the bytes it needs and the limit.
 *  - Inflating is bounded while it runs. A storage entry is inflated only
 *    as far as its views reach; a JSON entry at most to PT2_MAX_JSON bytes
 *    and within the budget. The directory's sizes are checked before
 *    reading and again as bytes come out: an entry that yields more or
 *    fewer bytes than its directory says is refused, so a directory that
 *    lies buys nothing.
 */
#include "ir/pt2.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>
#include <zlib.h>

#include "ir/graph_internal.h"

/* The expansion budget (see above) and the largest JSON entry. */
#define PT2_EXPAND_FLOOR ((uint64_t)64 << 20)
#define PT2_EXPAND_FACTOR 2
#define PT2_MAX_JSON ((uint64_t)1 << 30)

struct pt2_archive {
  const char *file;
  const uint8_t *map;
  size_t size;
  zip_t *zip;
  char *root;      /* "mlp.core/" */
  size_t cursor;   /* where the next local header probably is */
  uint64_t budget; /* bytes the archive may expand to, beyond its own */
  uint64_t spent;  /* of those, taken so far */
};

static alloy_error *oom(void) {
  return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
}

static const char model_json[] = "models/model.json";

alloy_error *pt2_archive_open(const char *file, const void *map, size_t size,
                              pt2_archive **out) {
  *out = NULL;
  pt2_archive *a = calloc(1, sizeof *a);
  if (!a) return oom();
  a->file = file;
  a->map = map;
  a->size = size;
  a->budget = PT2_EXPAND_FLOOR + PT2_EXPAND_FACTOR * (uint64_t)size;
  zip_error_t zerr;
  zip_error_init(&zerr);
  zip_source_t *src = zip_source_buffer_create(map, size, 0, &zerr);
  if (src && !(a->zip = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &zerr)))
    zip_source_free(src);
  if (!a->zip) {
    alloy_error *e = alloy_error_new(ALLOY_ERR_PARSE, "%s: not a readable ZIP archive (%s)", file,
                                     zip_error_strerror(&zerr));
    zip_error_fini(&zerr);
    free(a);
    return e;
  }
  zip_error_fini(&zerr);
  /* The root folder is whatever precedes models/model.json. */
  zip_int64_t n = zip_get_num_entries(a->zip, 0);
  size_t mlen = strlen(model_json);
  for (zip_int64_t i = 0; i < n && !a->root; i++) {
    const char *name = zip_get_name(a->zip, (zip_uint64_t)i, ZIP_FL_ENC_RAW);
    size_t len = name ? strlen(name) : 0;
    if (len < mlen || strcmp(name + len - mlen, model_json)) continue;
    if (len > mlen && name[len - mlen - 1] != '/') continue;
    if (!(a->root = strndup(name, len - mlen))) {
      pt2_archive_close(a);
      return oom();
    }
  }
  if (!a->root) {
    pt2_archive_close(a);
    return alloy_error_new(ALLOY_ERR_PARSE,
                           "%s: no entry %s: not an archive written by torch.export.save", file,
                           model_json);
  }
  *out = a;
  return NULL;
}

void pt2_archive_close(pt2_archive *a) {
  if (!a) return;
  if (a->zip) zip_discard(a->zip);
  free(a->root);
  free(a);
}

const char *pt2_archive_root(const pt2_archive *a) { return a->root; }
const char *pt2_archive_file(const pt2_archive *a) { return a->file; }

static zip_int64_t locate(const pt2_archive *a, const char *name, char *full, size_t cap) {
  if ((size_t)snprintf(full, cap, "%s%s", a->root, name) >= cap) return -1;
  return zip_name_locate(a->zip, full, ZIP_FL_ENC_RAW);
}

bool pt2_archive_has(const pt2_archive *a, const char *name) {
  char full[1024];
  return locate(a, name, full, sizeof full) >= 0;
}

/* Takes n bytes of the expansion budget for what; an error naming what,
 * the bytes and the limit when they do not fit. */
static alloy_error *spend(pt2_archive *a, uint64_t n, const char *what) {
  if (n <= a->budget - a->spent) {
    a->spent += n;
    return NULL;
  }
  return alloy_error_new(ALLOY_ERR_UNSUPPORTED,
                         "%s: %s needs %llu bytes that the archive does not hold as they are; an "
                         "archive of %zu bytes may expand to at most %llu more (64 MiB + 2 x its "
                         "size), %llu of which are taken: refused as a decompression or "
                         "broadcast bomb",
                         a->file, what, (unsigned long long)n, a->size,
                         (unsigned long long)a->budget, (unsigned long long)a->spent);
}

static unsigned u16_at(const uint8_t *p) { return (unsigned)p[0] | (unsigned)p[1] << 8; }

/* The start of a stored entry's data in the mapping, or false. */
static bool find_in_place(pt2_archive *a, const char *full, const zip_stat_t *st, size_t *at) {
  size_t nlen = strlen(full);
  for (int pass = 0; pass < 2; pass++) {
    size_t from = pass ? 0 : a->cursor;
    while (from < a->size) {
      const uint8_t *hit = memmem(a->map + from, a->size - from, full, nlen);
      if (!hit) break;
      size_t h = (size_t)(hit - a->map);
      from = h + 1;
      if (h < 30 || memcmp(a->map + h - 30, "PK\3\4", 4) || u16_at(a->map + h - 4) != nlen ||
          u16_at(a->map + h - 22) != 0 /* stored */)
        continue;
      size_t data = h + nlen + u16_at(a->map + h - 2);
      if (data > a->size || st->size > a->size - data) continue;
      *at = data;
      a->cursor = data + st->size;
      return true;
    }
  }
  return false;
}

/* An entry found and stat'ed: its index, full name and directory record. */
typedef struct found {
  zip_int64_t idx;
  char full[1024];
  zip_stat_t st;
} found;

static alloy_error *find_entry(pt2_archive *a, const char *name, found *f) {
  f->idx = locate(a, name, f->full, sizeof f->full);
  if (f->idx < 0)
    return alloy_error_new(ALLOY_ERR_NOT_FOUND, "%s: missing entry %s%s", a->file, a->root, name);
  zip_stat_init(&f->st);
  if (zip_stat_index(a->zip, (zip_uint64_t)f->idx, 0, &f->st) != 0 ||
      !(f->st.valid & ZIP_STAT_SIZE))
    return alloy_error_new(ALLOY_ERR_PARSE, "%s: entry %s: %s", a->file, f->full,
                           zip_strerror(a->zip));
  return NULL;
}

/* The first `want` bytes of entry f (want <= its directory size), in
 * place when it is stored where its local header says, else inflated (or
 * copied) through libzip into memory that *out owns, paid for from the
 * budget first. Reading stops at want bytes: an entry whose stream ends
 * sooner, or (when want is the whole entry) goes on past its directory
 * size, is refused; so is a whole entry whose CRC is wrong. */
static alloy_error *read_found(pt2_archive *a, found *f, uint64_t want, pt2_bytes *out) {
  memset(out, 0, sizeof *out);
  const zip_stat_t *st = &f->st;
  bool whole = want == st->size;
  size_t at;
  bool stored = (st->valid & ZIP_STAT_COMP_METHOD) && st->comp_method == ZIP_CM_STORE &&
                (!(st->valid & ZIP_STAT_ENCRYPTION_METHOD) || st->encryption_method == ZIP_EM_NONE);
  if (stored && find_in_place(a, f->full, st, &at)) {
    const uint8_t *data = a->map + at;
    /* zlib's crc32 takes a uInt length: feed it in pieces. */
    uLong crc = crc32(0L, Z_NULL, 0);
    for (size_t done = 0; done < st->size;) {
      size_t piece = st->size - done > (1u << 30) ? (1u << 30) : st->size - done;
      crc = crc32(crc, data + done, (uInt)piece);
      done += piece;
    }
    if ((st->valid & ZIP_STAT_CRC) && crc != st->crc)
      return alloy_error_new(ALLOY_ERR_PARSE,
                             "%s: entry %s: CRC mismatch (the archive is corrupt)", a->file,
                             f->full);
    out->data = data;
    out->size = want;
    return NULL;
  }
  /* Compressed, or not where its header says: read it through libzip. */
  char what[1100];
  snprintf(what, sizeof what, "entry %s (%s)", f->full, stored ? "stored" : "compressed");
  alloy_error *e = spend(a, want, what);
  if (e) return e;
  uint8_t *buf = malloc(want ? want : 1);
  if (!buf) return oom();
  zip_file_t *zf = zip_fopen_index(a->zip, (zip_uint64_t)f->idx, 0);
  if (!zf) {
    free(buf);
    return alloy_error_new(ALLOY_ERR_PARSE, "%s: entry %s: cannot read (%s)", a->file, f->full,
                           zip_strerror(a->zip));
  }
  /* In pieces, so that a stream that runs dry is seen where it does. */
  uint64_t got = 0;
  while (!e && got < want) {
    uint64_t piece = want - got > ((uint64_t)1 << 24) ? (uint64_t)1 << 24 : want - got;
    zip_int64_t n = zip_fread(zf, buf + got, piece);
    if (n < 0)
      e = alloy_error_new(ALLOY_ERR_PARSE, "%s: entry %s: cannot read (%s)", a->file, f->full,
                          zip_file_strerror(zf));
    else if (n == 0)
      e = alloy_error_new(ALLOY_ERR_PARSE,
                          "%s: entry %s: holds %llu bytes, its directory says %llu", a->file,
                          f->full, (unsigned long long)got, (unsigned long long)st->size);
    else
      got += (uint64_t)n;
  }
  if (!e && whole) {
    /* One byte more: there must be none (libzip checks the CRC at the end). */
    uint8_t extra;
    zip_int64_t n = zip_fread(zf, &extra, 1);
    if (n < 0)
      e = alloy_error_new(ALLOY_ERR_PARSE, "%s: entry %s: cannot read (%s)", a->file, f->full,
                          zip_file_strerror(zf));
    else if (n > 0)
      e = alloy_error_new(ALLOY_ERR_PARSE,
                          "%s: entry %s: holds more bytes than its directory says (%llu)", a->file,
                          f->full, (unsigned long long)st->size);
  }
  zip_fclose(zf);
  if (e) {
    free(buf);
    return e;
  }
  out->data = buf;
  out->size = want;
  out->owned = buf;
  return NULL;
}

alloy_error *pt2_archive_read(pt2_archive *a, const char *name, uint64_t max, pt2_bytes *out) {
  memset(out, 0, sizeof *out);
  found f;
  alloy_error *e = find_entry(a, name, &f);
  if (e) return e;
  if (f.st.size > max)
    return alloy_error_new(ALLOY_ERR_UNSUPPORTED,
                           "%s: entry %s: %llu bytes, more than the %llu allowed", a->file, f.full,
                           (unsigned long long)f.st.size, (unsigned long long)max);
  return read_found(a, &f, f.st.size, out);
}

alloy_error *pt2_archive_json(pt2_archive *a, const char *name, json_t **out) {
  *out = NULL;
  pt2_bytes b;
  alloy_error *e = pt2_archive_read(a, name, PT2_MAX_JSON, &b);
  if (e) return e;
  json_error_t je;
  *out = json_loadb((const char *)b.data, b.size, 0, &je);
  free(b.owned);
  if (!*out)
    return alloy_error_new(ALLOY_ERR_PARSE, "%s: entry %s%s: line %d, column %d: %s", a->file,
                           a->root, name, je.line, je.column, je.text);
  return NULL;
}

alloy_error *pt2_archive_doc(pt2_archive *a, const char *name, jv_doc *doc, const jv **out) {
  *out = NULL;
  pt2_bytes b;
  alloy_error *e = pt2_archive_read(a, name, PT2_MAX_JSON, &b);
  if (e) return e;
  jv_error je;
  bool ok = jv_parse(doc, (const char *)b.data, b.size, out, &je);
  free(b.owned);
  if (!ok)
    return alloy_error_new(je.oom ? ALLOY_ERR_OUT_OF_MEMORY : ALLOY_ERR_PARSE,
                           "%s: entry %s%s: line %d, column %d: %s", a->file, a->root, name,
                           je.line, je.column, je.text);
  return NULL;
}

bool pt2_dtype(int64_t code, alloy_dtype *out) {
  static const struct {
    int code;
    alloy_dtype dtype;
  } table[] = {
      {1, ALLOY_U8},  {2, ALLOY_I8},  {3, ALLOY_I16}, {4, ALLOY_I32},  {5, ALLOY_I64},
      {6, ALLOY_F16}, {7, ALLOY_F32}, {8, ALLOY_F64}, {12, ALLOY_BOOL}, {13, ALLOY_BF16},
  };
  for (size_t i = 0; i < sizeof table / sizeof *table; i++)
    if (table[i].code == code) return *out = table[i].dtype, true;
  return false;
}

/* --- weights ------------------------------------------------------------ */

/* One tensor of a weights config: its view of a storage entry. */
typedef struct wspec {
  const char *name;   /* the config's key (borrowed from its JSON) */
  const char *config; /* the config entry, for errors */
  char entry[512];    /* the storage: dir + path_name */
  alloy_dtype dtype;
  int rank;
  int64_t sz[ALLOY_MAX_RANK], str[ALLOY_MAX_RANK], offset;
  uint64_t numel, nbytes; /* elements, and their bytes when contiguous */
  uint64_t end;           /* bytes of the storage the view reaches */
  bool contiguous;
  bool used;              /* a graph input reads it */
  int storage;            /* index into the storages read */
} wspec;

/* A storage entry, read once for all the views of it. */
typedef struct storage {
  const char *entry; /* a wspec's */
  uint64_t need;     /* the most any used view reaches */
  pt2_bytes bytes;
  bool lent;         /* bytes.owned went to a weight */
} storage;

typedef struct wload {
  pt2_archive *a;
  alloy_model *m;
  json_t *configs[2];
  wspec *specs;
  int n, cap;
  storage *stores;
  int nstores;
} wload;

static alloy_error *wbad(const wload *w, const char *config, const char *name, const char *fmt,
                         const char *detail) {
  char msg[256];
  snprintf(msg, sizeof msg, fmt, detail);
  return alloy_error_new(ALLOY_ERR_PARSE, "%s: entry %s%s: tensor '%s': %s", w->a->file,
                         w->a->root, config, name, msg);
}

/* An {"as_int": n} size of a weight (weights have no symbolic sizes). */
static bool int_of(json_t *v, int64_t *out) {
  json_t *i = json_object_get(v, "as_int");
  if (!json_is_integer(i)) return false;
  *out = json_integer_value(i);
  return true;
}

/* Reads one config entry's spec into *t; touches no storage. */
static alloy_error *parse_spec(wload *w, const char *config, const char *dir, const char *key,
                               json_t *spec, wspec *t) {
  memset(t, 0, sizeof *t);
  t->name = key;
  t->config = config;
  t->storage = -1;
  if (!json_is_object(spec)) return wbad(w, config, key, "not an object%s", "");
  json_t *path = json_object_get(spec, "path_name"), *meta = json_object_get(spec, "tensor_meta");
  if (json_is_true(json_object_get(spec, "use_pickle")))
    return alloy_error_new(ALLOY_ERR_UNSUPPORTED,
                           "%s: tensor '%s' is pickled (an archive written by PyTorch 2.7 or 2.8); "
                           "Alloy reads raw weights only: load it with torch.export.load and save it "
                           "again with torch.export.save under PyTorch 2.9 or later",
                           w->a->file, key);
  if (!json_is_string(path) || !json_is_object(meta))
    return wbad(w, config, key, "needs path_name and tensor_meta%s", "");
  json_t *dt = json_object_get(meta, "dtype"), *sizes = json_object_get(meta, "sizes");
  json_t *strides = json_object_get(meta, "strides");
  if (!json_is_integer(dt)) return wbad(w, config, key, "tensor_meta has no dtype%s", "");
  if (!pt2_dtype(json_integer_value(dt), &t->dtype)) {
    char code[32];
    snprintf(code, sizeof code, "%lld", (long long)json_integer_value(dt));
    return wbad(w, config, key, "unsupported dtype %s (ScalarType number)", code);
  }
  if (!json_is_array(sizes) || !json_is_array(strides) ||
      json_array_size(sizes) != json_array_size(strides))
    return wbad(w, config, key, "sizes and strides must be lists of one length%s", "");
  if (json_array_size(sizes) > ALLOY_MAX_RANK) return wbad(w, config, key, "more than 16 dims%s", "");
  t->rank = (int)json_array_size(sizes);
  uint64_t numel = 1, last = 0; /* numel, and the largest element index the view reads */
  json_t *off = json_object_get(meta, "storage_offset");
  if (off && !int_of(off, &t->offset))
    return wbad(w, config, key, "storage_offset is not an integer%s", "");
  if (t->offset < 0) return wbad(w, config, key, "negative storage_offset%s", "");
  for (int d = 0; d < t->rank; d++) {
    if (!int_of(json_array_get(sizes, (size_t)d), &t->sz[d]) ||
        !int_of(json_array_get(strides, (size_t)d), &t->str[d]))
      return wbad(w, config, key,
                  "a size or stride is not an integer (weights have concrete sizes)%s", "");
    if (t->sz[d] < 0 || t->str[d] < 0) return wbad(w, config, key, "a negative size or stride%s", "");
    uint64_t reach;
    if (__builtin_mul_overflow(numel, (uint64_t)t->sz[d], &numel) ||
        (t->sz[d] && (__builtin_mul_overflow((uint64_t)(t->sz[d] - 1), (uint64_t)t->str[d], &reach) ||
                      __builtin_add_overflow(last, reach, &last))))
      return wbad(w, config, key, "sizes overflow%s", "");
  }
  uint64_t es = alloy_dtype_size(t->dtype);
  if (__builtin_mul_overflow(numel, es, &t->nbytes) ||
      __builtin_add_overflow(last, (uint64_t)t->offset, &t->end) ||
      __builtin_add_overflow(t->end, 1, &t->end) || __builtin_mul_overflow(t->end, es, &t->end) ||
      t->nbytes > (uint64_t)1 << 62)
    return wbad(w, config, key, "sizes overflow%s", "");
  t->numel = numel;
  if (!numel) t->end = 0; /* an empty view reads nothing */
  int64_t want = 1;
  t->contiguous = true;
  for (int d = t->rank - 1; d >= 0; d--) {
    if (t->sz[d] != 1 && t->str[d] != want) t->contiguous = false;
    want *= t->sz[d];
  }
  if ((size_t)snprintf(t->entry, sizeof t->entry, "%s%s", dir, json_string_value(path)) >=
      sizeof t->entry)
    return wbad(w, config, key, "path_name too long%s", "");
  return NULL;
}

static alloy_error *read_config(wload *w, int which, const char *config, const char *dir) {
  if (!pt2_archive_has(w->a, config)) return NULL;
  alloy_error *e = pt2_archive_json(w->a, config, &w->configs[which]);
  if (e) return e;
  json_t *cfg = json_object_get(w->configs[which], "config");
  if (!json_is_object(cfg)) return wbad(w, config, "", "expected an object \"config\"%s", "");
  const char *key;
  json_t *spec;
  json_object_foreach(cfg, key, spec) {
    if (w->n == w->cap) {
      int cap = w->cap ? 2 * w->cap : 64;
      wspec *ns = realloc(w->specs, sizeof *ns * (size_t)cap);
      if (!ns) return oom();
      w->specs = ns;
      w->cap = cap;
    }
    if ((e = parse_spec(w, config, dir, key, spec, &w->specs[w->n]))) return e;
    w->n++;
  }
  return NULL;
}

static int by_name(const void *x, const void *y) {
  const wspec *const *a = x, *const *b = y;
  return strcmp((*a)->name, (*b)->name);
}

/* Marks the specs graph inputs read, each checked against the input's
 * declared type before any storage is read. A weight the graph does not
 * have is left for the model's own check (ir/model.c), which names it. */
static alloy_error *match_graph(wload *w) {
  const alloy_graph *g = w->m->graph;
  wspec **sorted = malloc(sizeof *sorted * (size_t)(w->n ? w->n : 1));
  if (!sorted) return oom();
  for (int i = 0; i < w->n; i++) sorted[i] = &w->specs[i];
  qsort(sorted, (size_t)w->n, sizeof *sorted, by_name);
  alloy_error *e = NULL;
  for (int i = 1; i < w->n && !e; i++)
    if (!strcmp(sorted[i - 1]->name, sorted[i]->name))
      e = alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "%s: two weights are named '%s'",
                          w->a->file, sorted[i]->name);
  for (int i = 0; i < alloy_graph_num_inputs(g) && !e; i++) {
    const char *name;
    if (alloy_graph_input_role(g, i, &name) == ALLOY_INPUT_USER || !name) continue;
    wspec key = {.name = name}, *kp = &key;
    wspec **hit = bsearch(&kp, sorted, (size_t)w->n, sizeof *sorted, by_name);
    if (!hit) continue;
    wspec *t = *hit;
    const alloy_value *v = alloy_graph_input(g, i);
    bool same = alloy_value_kind_of(v) == ALLOY_VALUE_TENSOR && alloy_value_dtype(v) == t->dtype &&
                alloy_value_rank(v) == t->rank;
    for (int d = 0; same && d < t->rank; d++) {
      alloy_dim dim = alloy_value_shape(v)[d];
      same = alloy_dim_is_const(dim) && dim.value == t->sz[d];
    }
    if (same) {
      t->used = true;
      continue;
    }
    char want[256], got[256];
    alloy_dim dims[ALLOY_MAX_RANK];
    for (int d = 0; d < t->rank; d++) dims[d] = alloy_dim_const(t->sz[d]);
    alloy_value_type vt;
    alloy_value_get_type(v, &vt);
    alloy_value_type_print(vt.kind, vt.dtype, vt.shape, vt.rank, want, sizeof want);
    alloy_value_type_print(ALLOY_VALUE_TENSOR, t->dtype, dims, t->rank, got, sizeof got);
    e = alloy_error_new(ALLOY_ERR_TYPE, "%s: input %s is %s but weight '%s' is %s",
                        w->a->file, alloy_value_name(v), want, name, got);
  }
  free(sorted);
  return e;
}

/* Groups the used specs by storage entry, in the order the configs list
 * them (the order the archive stores them, which keeps find_in_place's
 * search going forwards), each storage needing what its views reach. */
static alloy_error *group_storages(wload *w) {
  w->stores = calloc((size_t)(w->n ? w->n : 1), sizeof *w->stores);
  /* entry name -> storage index + 1, open addressing */
  size_t cap = 64;
  while (cap < 2 * (size_t)w->n) cap *= 2;
  int *index = calloc(cap, sizeof *index);
  if (!w->stores || !index) {
    free(index);
    return oom();
  }
  for (int i = 0; i < w->n; i++) {
    wspec *t = &w->specs[i];
    if (!t->used) continue;
    size_t j = alloy_hash_str(t->entry) & (cap - 1);
    while (index[j] && strcmp(w->stores[index[j] - 1].entry, t->entry)) j = (j + 1) & (cap - 1);
    if (!index[j]) {
      w->stores[w->nstores].entry = t->entry;
      index[j] = ++w->nstores;
    }
    storage *s = &w->stores[index[j] - 1];
    t->storage = index[j] - 1;
    if (t->end > s->need) s->need = t->end;
  }
  free(index);
  return NULL;
}

/* Reads each storage once, as far as its views reach. */
static alloy_error *read_storages(wload *w) {
  for (int k = 0; k < w->nstores; k++) {
    storage *s = &w->stores[k];
    found f;
    alloy_error *e = find_entry(w->a, s->entry, &f);
    if (e) return e;
    if (f.st.size == 0) continue; /* PyTorch's empty file for a storage it did not keep: zeros */
    if (s->need > f.st.size) {
      /* Name the first view that reads past the end. */
      const wspec *t = w->specs;
      while (t < w->specs + w->n && !(t->storage == k && t->end > f.st.size)) t++;
      return alloy_error_new(ALLOY_ERR_PARSE,
                             "%s: tensor '%s': its view reads %llu bytes of entry %s%s, which "
                             "holds %llu",
                             w->a->file, t < w->specs + w->n ? t->name : "?",
                             (unsigned long long)s->need, w->a->root, s->entry,
                             (unsigned long long)f.st.size);
    }
    if ((e = read_found(w->a, &f, s->need, &s->bytes))) return e;
  }
  return NULL;
}

/* Gathers a strided view into a contiguous copy: the innermost dim as a
 * run (one memcpy when its stride is 1), the others counted like an
 * odometer. O(numel). */
static void gather(const wspec *t, const uint8_t *src, uint8_t *dst) {
  size_t es = alloy_dtype_size(t->dtype);
  int rank = t->rank;
  if (rank == 0) {
    memcpy(dst, src + (size_t)t->offset * es, es);
    return;
  }
  int64_t inner = t->sz[rank - 1], istride = t->str[rank - 1];
  int64_t idx[ALLOY_MAX_RANK] = {0};
  uint64_t rows = t->numel / (uint64_t)inner;
  int64_t at = t->offset; /* element offset of the current row */
  for (uint64_t r = 0; r < rows; r++) {
    const uint8_t *row = src + (size_t)at * es;
    if (istride == 1) {
      memcpy(dst, row, (size_t)inner * es);
      dst += (size_t)inner * es;
    } else {
      for (int64_t i = 0; i < inner; i++, dst += es) memcpy(dst, row + (size_t)(i * istride) * es, es);
    }
    for (int d = rank - 2; d >= 0; d--) {
      at += t->str[d];
      if (++idx[d] < t->sz[d]) break;
      at -= t->str[d] * t->sz[d];
      idx[d] = 0;
    }
  }
}

/* Adds the used specs as weights, in config order. */
static alloy_error *add_weights(wload *w) {
  for (int i = 0; i < w->n; i++) {
    wspec *t = &w->specs[i];
    if (!t->used) continue;
    storage *s = &w->stores[t->storage];
    const void *data = NULL;
    void *owned = NULL;
    char what[700];
    snprintf(what, sizeof what, "tensor '%s' (%llu bytes)", t->name,
             (unsigned long long)t->nbytes);
    alloy_error *e = NULL;
    if (t->numel == 0) {
      data = NULL;
    } else if (!s->bytes.data) {
      /* An empty storage: zeros, paid for from the budget. */
      if ((e = spend(w->a, t->nbytes, what))) return e;
      if (!(owned = calloc(t->numel, alloy_dtype_size(t->dtype)))) return oom();
      data = owned;
    } else if (t->contiguous) {
      data = s->bytes.data + (size_t)t->offset * alloy_dtype_size(t->dtype);
      /* The first weight in the storage's memory owns it. */
      if (s->bytes.owned && !s->lent) owned = s->bytes.owned, s->lent = true;
    } else {
      /* A strided, overlapping or broadcast view: gathered, paid for. */
      if ((e = spend(w->a, t->nbytes, what))) return e;
      if (!(owned = malloc(t->nbytes))) return oom();
      gather(t, s->bytes.data, owned);
      data = owned;
    }
    if ((e = model_add_weight(w->m, t->name, t->dtype, t->rank, t->sz, data, owned))) {
      if (owned == s->bytes.owned) s->lent = false;
      else free(owned);
      return e;
    }
  }
  return NULL;
}

alloy_error *pt2_load_weights(pt2_archive *a, alloy_model *m) {
  static const char weights[] = "data/weights/model_weights_config.json";
  if (!pt2_archive_has(a, weights) &&
      (pt2_archive_has(a, "data/weights/model.pt") || pt2_archive_has(a, "data/weights/weights.pt")))
    return alloy_error_new(ALLOY_ERR_UNSUPPORTED,
                           "%s: the weights are one pickle (an archive written by PyTorch 2.7 or "
                           "2.8); Alloy reads raw weights only: load it with torch.export.load and "
                           "save it again with torch.export.save under PyTorch 2.9 or later",
                           a->file);
  wload w = {.a = a, .m = m};
  alloy_error *e = read_config(&w, 0, weights, "data/weights/");
  if (!e) e = read_config(&w, 1, "data/constants/model_constants_config.json", "data/constants/");
  if (!e) e = m->graph ? match_graph(&w)
                      : alloy_error_new(ALLOY_ERR_INTERNAL, "pt2: weights read before the graph");
  if (!e) e = group_storages(&w);
  if (!e) e = read_storages(&w);
  if (!e) e = add_weights(&w);
  for (int k = 0; k < w.nstores; k++)
    if (!w.stores[k].lent) free(w.stores[k].bytes.owned);
  free(w.stores);
  free(w.specs);
  json_decref(w.configs[0]);
  json_decref(w.configs[1]);
  return e;
}
