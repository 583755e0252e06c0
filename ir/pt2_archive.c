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
 */
#include "ir/pt2.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>
#include <zlib.h>

struct pt2_archive {
  const char *file;
  const uint8_t *map;
  size_t size;
  zip_t *zip;
  char *root;    /* "mlp.core/" */
  size_t cursor; /* where the next local header probably is */
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

alloy_error *pt2_archive_read(pt2_archive *a, const char *name, pt2_bytes *out) {
  memset(out, 0, sizeof *out);
  char full[1024];
  zip_int64_t idx = locate(a, name, full, sizeof full);
  if (idx < 0)
    return alloy_error_new(ALLOY_ERR_NOT_FOUND, "%s: missing entry %s%s", a->file, a->root, name);
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(a->zip, (zip_uint64_t)idx, 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE))
    return alloy_error_new(ALLOY_ERR_PARSE, "%s: entry %s: %s", a->file, full,
                           zip_strerror(a->zip));
  size_t at;
  bool stored = (st.valid & ZIP_STAT_COMP_METHOD) && st.comp_method == ZIP_CM_STORE &&
                (!(st.valid & ZIP_STAT_ENCRYPTION_METHOD) || st.encryption_method == ZIP_EM_NONE);
  if (stored && find_in_place(a, full, &st, &at)) {
    const uint8_t *data = a->map + at;
    /* zlib's crc32 takes a uInt length: feed it in pieces. */
    uLong crc = crc32(0L, Z_NULL, 0);
    for (size_t done = 0; done < st.size;) {
      size_t piece = st.size - done > (1u << 30) ? (1u << 30) : st.size - done;
      crc = crc32(crc, data + done, (uInt)piece);
      done += piece;
    }
    if (!(st.valid & ZIP_STAT_CRC) || crc == st.crc) {
      out->data = data;
      out->size = st.size;
      return NULL;
    }
    return alloy_error_new(ALLOY_ERR_PARSE, "%s: entry %s: CRC mismatch (the archive is corrupt)",
                           a->file, full);
  }
  /* Compressed, or not where its header says: read it through libzip. */
  if (st.size > ((uint64_t)1 << 40))
    return alloy_error_new(ALLOY_ERR_PARSE, "%s: entry %s: implausible size %llu", a->file, full,
                           (unsigned long long)st.size);
  uint8_t *buf = malloc(st.size ? st.size : 1);
  if (!buf) return oom();
  zip_file_t *f = zip_fopen_index(a->zip, (zip_uint64_t)idx, 0);
  zip_int64_t got = f ? zip_fread(f, buf, st.size) : -1;
  alloy_error *e = NULL;
  if (got < 0 || (zip_uint64_t)got != st.size)
    e = alloy_error_new(ALLOY_ERR_PARSE, "%s: entry %s: cannot read (%s)", a->file, full,
                        f ? zip_file_strerror(f) : zip_strerror(a->zip));
  if (f) zip_fclose(f);
  if (e) {
    free(buf);
    return e;
  }
  out->data = buf;
  out->size = st.size;
  out->owned = buf;
  return NULL;
}

alloy_error *pt2_archive_json(pt2_archive *a, const char *name, json_t **out) {
  *out = NULL;
  pt2_bytes b;
  alloy_error *e = pt2_archive_read(a, name, &b);
  if (e) return e;
  json_error_t je;
  *out = json_loadb((const char *)b.data, b.size, 0, &je);
  free(b.owned);
  if (!*out)
    return alloy_error_new(ALLOY_ERR_PARSE, "%s: entry %s%s: line %d, column %d: %s", a->file,
                           a->root, name, je.line, je.column, je.text);
  return NULL;
}

bool pt2_dtype(json_int_t code, alloy_dtype *out) {
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

typedef struct {
  pt2_archive *a;
  const char *config; /* the entry, for errors */
  const char *name;   /* the weight */
} wctx;

static alloy_error *wbad(const wctx *w, const char *fmt, const char *detail) {
  char msg[256];
  snprintf(msg, sizeof msg, fmt, detail);
  return alloy_error_new(ALLOY_ERR_PARSE, "%s: entry %s%s: tensor '%s': %s", w->a->file,
                         w->a->root, w->config, w->name, msg);
}

/* An {"as_int": n} size of a weight (weights have no symbolic sizes). */
static bool int_of(json_t *v, int64_t *out) {
  json_t *i = json_object_get(v, "as_int");
  if (!json_is_integer(i)) return false;
  *out = json_integer_value(i);
  return true;
}

static alloy_error *load_tensor(wctx *w, alloy_model *m, const char *dir, json_t *spec) {
  json_t *path = json_object_get(spec, "path_name"), *meta = json_object_get(spec, "tensor_meta");
  if (json_is_true(json_object_get(spec, "use_pickle")))
    return alloy_error_new(ALLOY_ERR_UNSUPPORTED,
                           "%s: tensor '%s' is pickled (an archive written by PyTorch 2.7 or 2.8); "
                           "Alloy reads raw weights only: load it with torch.export.load and save it "
                           "again with torch.export.save under PyTorch 2.9 or later",
                           w->a->file, w->name);
  if (!json_is_string(path) || !json_is_object(meta))
    return wbad(w, "needs path_name and tensor_meta%s", "");
  json_t *dt = json_object_get(meta, "dtype"), *sizes = json_object_get(meta, "sizes");
  json_t *strides = json_object_get(meta, "strides");
  alloy_dtype dtype;
  if (!json_is_integer(dt)) return wbad(w, "tensor_meta has no dtype%s", "");
  if (!pt2_dtype(json_integer_value(dt), &dtype)) {
    char code[32];
    snprintf(code, sizeof code, "%lld", (long long)json_integer_value(dt));
    return wbad(w, "unsupported dtype %s (ScalarType number)", code);
  }
  if (!json_is_array(sizes) || !json_is_array(strides) ||
      json_array_size(sizes) != json_array_size(strides))
    return wbad(w, "sizes and strides must be lists of one length%s", "");
  if (json_array_size(sizes) > ALLOY_MAX_RANK) return wbad(w, "more than 16 dims%s", "");
  int rank = (int)json_array_size(sizes);
  int64_t sz[ALLOY_MAX_RANK], str[ALLOY_MAX_RANK], offset = 0;
  uint64_t numel = 1, last = 0; /* numel, and the largest element index the view reads */
  json_t *off = json_object_get(meta, "storage_offset");
  if (off && !int_of(off, &offset)) return wbad(w, "storage_offset is not an integer%s", "");
  if (offset < 0) return wbad(w, "negative storage_offset%s", "");
  for (int d = 0; d < rank; d++) {
    if (!int_of(json_array_get(sizes, (size_t)d), &sz[d]) ||
        !int_of(json_array_get(strides, (size_t)d), &str[d]))
      return wbad(w, "a size or stride is not an integer (weights have concrete sizes)%s", "");
    if (sz[d] < 0 || str[d] < 0) return wbad(w, "a negative size or stride%s", "");
    uint64_t reach;
    if (__builtin_mul_overflow(numel, (uint64_t)sz[d], &numel) ||
        (sz[d] && (__builtin_mul_overflow((uint64_t)(sz[d] - 1), (uint64_t)str[d], &reach) ||
                   __builtin_add_overflow(last, reach, &last))))
      return wbad(w, "sizes overflow%s", "");
  }
  size_t es = alloy_dtype_size(dtype);
  uint64_t nbytes, end;
  if (__builtin_mul_overflow(numel, (uint64_t)es, &nbytes) ||
      __builtin_add_overflow(last, (uint64_t)offset, &end) || __builtin_add_overflow(end, 1, &end) ||
      __builtin_mul_overflow(end, (uint64_t)es, &end))
    return wbad(w, "sizes overflow%s", "");
  char entry[512];
  if ((size_t)snprintf(entry, sizeof entry, "%s%s", dir, json_string_value(path)) >= sizeof entry)
    return wbad(w, "path_name too long%s", "");
  pt2_bytes b;
  alloy_error *e = pt2_archive_read(w->a, entry, &b);
  if (e) return e;
  /* Keep a copied (compressed) entry for the model: the weight may use it. */
  void *owned = b.owned;
  const void *data = b.data;
  bool contiguous = true;
  int64_t want = 1;
  for (int d = rank - 1; d >= 0; d--) {
    if (sz[d] != 1 && str[d] != want) contiguous = false;
    want *= sz[d];
  }
  if (numel == 0) {
    data = NULL;
  } else if (b.size == 0) {
    /* PyTorch writes an empty file for a storage it did not keep: zeros. */
    free(owned);
    if (!(owned = calloc(numel, es))) return oom();
    data = owned;
  } else if (end > b.size) {
    free(owned);
    return alloy_error_new(ALLOY_ERR_PARSE,
                           "%s: tensor '%s': its view reads %llu bytes of entry %s%s, which holds %zu",
                           w->a->file, w->name, (unsigned long long)end, w->a->root, entry, b.size);
  } else if (contiguous) {
    data = b.data + (size_t)offset * es;
  } else {
    /* A strided view: gather it into a contiguous copy. */
    uint8_t *copy = malloc(nbytes);
    if (!copy) {
      free(owned);
      return oom();
    }
    int64_t idx[ALLOY_MAX_RANK] = {0};
    for (uint64_t k = 0; k < numel; k++) {
      int64_t src = offset;
      for (int d = 0; d < rank; d++) src += idx[d] * str[d];
      memcpy(copy + k * es, b.data + (size_t)src * es, es);
      for (int d = rank - 1; d >= 0 && ++idx[d] == sz[d]; d--) idx[d] = 0;
    }
    free(owned);
    owned = copy;
    data = copy;
  }
  e = model_add_weight(m, w->name, dtype, rank, sz, data, owned);
  if (e) free(owned);
  return e;
}

static alloy_error *load_config(pt2_archive *a, alloy_model *m, const char *config,
                                const char *dir) {
  if (!pt2_archive_has(a, config)) return NULL;
  json_t *root;
  alloy_error *e = pt2_archive_json(a, config, &root);
  if (e) return e;
  json_t *cfg = json_object_get(root, "config");
  wctx w = {a, config, ""};
  if (!json_is_object(cfg)) e = wbad(&w, "expected an object \"config\"%s", "");
  const char *key;
  json_t *spec;
  json_object_foreach(cfg, key, spec) {
    if (e) break;
    w.name = key;
    e = json_is_object(spec) ? load_tensor(&w, m, dir, spec) : wbad(&w, "not an object%s", "");
  }
  json_decref(root);
  return e;
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
  alloy_error *e = load_config(a, m, weights, "data/weights/");
  if (!e) e = load_config(a, m, "data/constants/model_constants_config.json", "data/constants/");
  return e;
}
