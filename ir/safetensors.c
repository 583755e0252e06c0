/*
 * ir/safetensors.c: the safetensors reader. The format is an 8-byte little
 * endian header length, a JSON header mapping names to dtype, shape and byte
 * offsets, then raw data; the JSON is read with jansson and the data is used
 * in place through a read-only mapping.
 */
#include "ir/safetensors.h"

#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct alloy_safetensors {
  void *map;
  size_t size;
  alloy_st_entry *entries;
  int n;
  char *names; /* one block holding every name */
};

static int entry_cmp(const void *a, const void *b) {
  return strcmp(((const alloy_st_entry *)a)->name, ((const alloy_st_entry *)b)->name);
}

static alloy_error *bad(const char *path, const char *key, const char *what) {
  return alloy_error_new(ALLOY_ERR_PARSE, "%s: entry '%s': %s", path, key, what);
}

static alloy_error *parse_entry(const char *path, const char *key, json_t *v,
                                const uint8_t *data, size_t data_size,
                                alloy_st_entry *e) {
  json_t *dt = json_object_get(v, "dtype"), *shape = json_object_get(v, "shape");
  json_t *off = json_object_get(v, "data_offsets");
  if (!json_is_string(dt) || !json_is_array(shape) || !json_is_array(off) ||
      json_array_size(off) != 2)
    return bad(path, key, "needs dtype, shape and data_offsets");
  const char *dts = json_string_value(dt);
  if (!alloy_dtype_from_name(dts, strlen(dts), &e->dtype))
    return bad(path, key, "unknown dtype");
  if (json_array_size(shape) > ALLOY_MAX_RANK) return bad(path, key, "rank too large");
  e->rank = (int)json_array_size(shape);
  uint64_t numel = 1;
  for (int d = 0; d < e->rank; d++) {
    json_t *s = json_array_get(shape, (size_t)d);
    if (!json_is_integer(s) || json_integer_value(s) < 0) return bad(path, key, "bad shape");
    e->shape[d] = json_integer_value(s);
    if (__builtin_mul_overflow(numel, (uint64_t)e->shape[d], &numel))
      return bad(path, key, "shape overflows");
  }
  json_t *b = json_array_get(off, 0), *en = json_array_get(off, 1);
  if (!json_is_integer(b) || !json_is_integer(en)) return bad(path, key, "bad data_offsets");
  json_int_t begin = json_integer_value(b), end = json_integer_value(en);
  if (begin < 0 || end < begin || (uint64_t)end > data_size)
    return bad(path, key, "data_offsets outside the file");
  uint64_t want;
  if (__builtin_mul_overflow(numel, (uint64_t)alloy_dtype_size(e->dtype), &want) ||
      want != (uint64_t)(end - begin))
    return bad(path, key, "byte size does not match dtype and shape");
  e->data = data + begin;
  e->nbytes = (size_t)(end - begin);
  return NULL;
}

alloy_error *alloy_safetensors_open(const char *path, alloy_safetensors **out) {
  *out = NULL;
  int fd = open(path, O_RDONLY);
  if (fd < 0) return alloy_error_new(ALLOY_ERR_IO, "%s: cannot open", path);
  struct stat sb;
  if (fstat(fd, &sb) != 0 || sb.st_size < 8) {
    close(fd);
    return alloy_error_new(ALLOY_ERR_PARSE, "%s: too short for a safetensors file", path);
  }
  void *map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return alloy_error_new(ALLOY_ERR_IO, "%s: cannot map", path);
  alloy_safetensors *st = calloc(1, sizeof *st);
  if (!st) {
    munmap(map, (size_t)sb.st_size);
    return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  }
  st->map = map;
  st->size = (size_t)sb.st_size;
  const uint8_t *bytes = map;
  uint64_t hlen = 0;
  for (int i = 7; i >= 0; i--) hlen = hlen << 8 | bytes[i];
  alloy_error *err = NULL;
  json_t *root = NULL;
  if (hlen > st->size - 8) {
    err = alloy_error_new(ALLOY_ERR_PARSE, "%s: header length %llu exceeds the file",
                          path, (unsigned long long)hlen);
  } else {
    json_error_t je;
    root = json_loadb((const char *)bytes + 8, (size_t)hlen, 0, &je);
    if (!json_is_object(root))
      err = alloy_error_new(ALLOY_ERR_PARSE, "%s: header is not a JSON object (%s at column %d)",
                            path, je.text, je.column);
  }
  if (!err) {
    size_t n = json_object_size(root), names_len = 0;
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v) names_len += strlen(key) + 1;
    st->entries = calloc(n ? n : 1, sizeof *st->entries);
    st->names = malloc(names_len ? names_len : 1);
    if (!st->entries || !st->names) err = alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
    char *np = st->names;
    const uint8_t *data = bytes + 8 + hlen;
    size_t data_size = st->size - 8 - (size_t)hlen;
    json_object_foreach(root, key, v) {
      if (err) break;
      if (!strcmp(key, "__metadata__")) continue;
      alloy_st_entry *e = &st->entries[st->n];
      size_t kl = strlen(key) + 1;
      memcpy(np, key, kl);
      e->name = np;
      np += kl;
      if (!(err = parse_entry(path, key, v, data, data_size, e))) st->n++;
    }
  }
  json_decref(root);
  if (err) {
    alloy_safetensors_close(st);
    return err;
  }
  qsort(st->entries, (size_t)st->n, sizeof *st->entries, entry_cmp);
  *out = st;
  return NULL;
}

void alloy_safetensors_close(alloy_safetensors *st) {
  if (!st) return;
  munmap(st->map, st->size);
  free(st->entries);
  free(st->names);
  free(st);
}

int alloy_safetensors_count(const alloy_safetensors *st) { return st->n; }

const alloy_st_entry *alloy_safetensors_entry(const alloy_safetensors *st, int i) {
  return i >= 0 && i < st->n ? &st->entries[i] : NULL;
}

const alloy_st_entry *alloy_safetensors_find(const alloy_safetensors *st,
                                             const char *name) {
  if (!name) return NULL;
  alloy_st_entry key = {.name = name};
  return bsearch(&key, st->entries, (size_t)st->n, sizeof key, entry_cmp);
}
