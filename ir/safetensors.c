/*
 * ir/safetensors.c: the safetensors reader and writer (alloy/safetensors.h).
 * The JSON header is read and written with jansson; data is used in place
 * through a read-only mapping (or the caller's buffer) when reading, and
 * written straight from the caller's buffers when writing. The checks follow
 * the reference implementation's: a header within the file and under its
 * size limit, dtype/shape/offsets that agree, and byte ranges that tile the
 * data exactly.
 */
#include "alloy/safetensors.h"

#include "ir/files.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The reference implementation refuses larger headers; so do we, so that a
 * hostile length cannot make jansson build a huge tree. */
#define ST_MAX_HEADER 100000000u
/* Names in messages are cut here: a key may be as long as the header. */
#define ST_NAME_SHOWN 200

/* The safetensors spelling of each dtype (dtype.c accepts these among other
 * spellings, so it cannot tell a file's code from a PyTorch name). */
static const char *const st_codes[ALLOY_DTYPE_COUNT] = {
    [ALLOY_BOOL] = "BOOL", [ALLOY_U8] = "U8",   [ALLOY_I8] = "I8",   [ALLOY_I16] = "I16",
    [ALLOY_I32] = "I32",   [ALLOY_I64] = "I64", [ALLOY_F16] = "F16", [ALLOY_BF16] = "BF16",
    [ALLOY_F32] = "F32",   [ALLOY_F64] = "F64", [ALLOY_C64] = "C64", [ALLOY_C128] = "C128",
};

static bool dtype_from_code(const char *code, alloy_dtype *out) {
  for (int t = 0; t < ALLOY_DTYPE_COUNT; t++)
    if (st_codes[t] && !strcmp(code, st_codes[t])) {
      *out = (alloy_dtype)t;
      return true;
    }
  return false;
}

static alloy_error *oom(void) { return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory"); }

/* ---- reading ---------------------------------------------------------------- */

struct alloy_safetensors {
  void *map;   /* the mapping made by open, or NULL for a borrowed buffer */
  size_t size; /* of the mapping */
  alloy_st_entry *entries;
  int n;
  char *names; /* one block holding every name */
};

static int name_cmp(const void *a, const void *b) {
  return strcmp(((const alloy_st_entry *)a)->name, ((const alloy_st_entry *)b)->name);
}

static int offset_cmp(const void *a, const void *b) {
  const alloy_st_entry *x = a, *y = b;
  const char *px = x->data, *py = y->data;
  if (px != py) return px < py ? -1 : 1;
  return (x->nbytes > y->nbytes) - (x->nbytes < y->nbytes);
}

static alloy_error *bad(alloy_error_code code, const char *label, const char *key, const char *fmt,
                        ...) __attribute__((format(printf, 4, 5)));
static alloy_error *bad(alloy_error_code code, const char *label, const char *key, const char *fmt,
                        ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return alloy_error_new(code, "%s: entry '%.*s': %s", label, ST_NAME_SHOWN, key, msg);
}

static alloy_error *parse_entry(const char *label, const char *key, json_t *v, const uint8_t *data,
                                size_t data_size, alloy_st_entry *e) {
  json_t *dt = json_object_get(v, "dtype"), *shape = json_object_get(v, "shape");
  json_t *off = json_object_get(v, "data_offsets");
  if (!json_is_string(dt) || !json_is_array(shape) || !json_is_array(off) ||
      json_array_size(off) != 2)
    return bad(ALLOY_ERR_PARSE, label, key,
               "needs a dtype string, a shape array and two data_offsets");
  const char *dts = json_string_value(dt);
  if (!dtype_from_code(dts, &e->dtype))
    return bad(ALLOY_ERR_UNSUPPORTED, label, key, "unknown dtype '%.32s'", dts);
  size_t rank = json_array_size(shape);
  if (rank > ALLOY_MAX_RANK)
    return bad(ALLOY_ERR_UNSUPPORTED, label, key, "rank %zu is more than %d", rank, ALLOY_MAX_RANK);
  e->rank = (int)rank;
  uint64_t numel = 1;
  bool overflow = false, empty = false;
  for (int d = 0; d < e->rank; d++) {
    json_t *s = json_array_get(shape, (size_t)d);
    if (!json_is_integer(s)) return bad(ALLOY_ERR_PARSE, label, key, "shape holds a non-integer");
    json_int_t size = json_integer_value(s);
    if (size < 0)
      return bad(ALLOY_ERR_PARSE, label, key, "negative size %lld in the shape", (long long)size);
    e->shape[d] = size;
    overflow |= __builtin_mul_overflow(numel, (uint64_t)size, &numel);
    empty |= size == 0;
  }
  /* a 0 anywhere makes the tensor empty, however large the other sizes */
  if (empty)
    numel = 0;
  else if (overflow)
    return bad(ALLOY_ERR_PARSE, label, key, "shape overflows");
  json_t *jb = json_array_get(off, 0), *je = json_array_get(off, 1);
  if (!json_is_integer(jb) || !json_is_integer(je))
    return bad(ALLOY_ERR_PARSE, label, key, "data_offsets are not integers");
  json_int_t begin = json_integer_value(jb), end = json_integer_value(je);
  if (begin < 0 || end < begin || (uint64_t)end > data_size)
    return bad(ALLOY_ERR_PARSE, label, key,
               "data_offsets [%lld, %lld] are outside the %zu bytes of data", (long long)begin,
               (long long)end, data_size);
  uint64_t want;
  if (__builtin_mul_overflow(numel, (uint64_t)alloy_dtype_size(e->dtype), &want) ||
      want != (uint64_t)(end - begin))
    return bad(ALLOY_ERR_PARSE, label, key,
               "data_offsets [%lld, %lld] hold %lld bytes, but the dtype and shape need %llu",
               (long long)begin, (long long)end, (long long)(end - begin),
               (unsigned long long)want);
  e->data = data + begin;
  e->nbytes = (size_t)(end - begin);
  return NULL;
}

/* The ranges must cover the data exactly, as the format requires: overlap
 * would let two tensors alias each other's bytes, and a gap or a tail would
 * hide bytes that no tensor accounts for. The order of the ranges is free. */
static alloy_error *check_tiling(const char *label, alloy_safetensors *st, const uint8_t *data,
                                 size_t data_size) {
  qsort(st->entries, (size_t)st->n, sizeof *st->entries, offset_cmp);
  const uint8_t *at = data;
  for (int i = 0; i < st->n; i++) {
    const alloy_st_entry *e = &st->entries[i];
    const uint8_t *p = e->data;
    if (p < at)
      return bad(ALLOY_ERR_PARSE, label, e->name,
                 "data_offsets [%zu, %zu] overlap another tensor's bytes", (size_t)(p - data),
                 (size_t)(p - data) + e->nbytes);
    if (p > at)
      return bad(ALLOY_ERR_PARSE, label, e->name,
                 "data_offsets start at %zu, leaving bytes [%zu, %zu) to no tensor",
                 (size_t)(p - data), (size_t)(at - data), (size_t)(p - data));
    at = p + e->nbytes;
  }
  if (at != data + data_size)
    return alloy_error_new(ALLOY_ERR_PARSE, "%s: bytes [%zu, %zu) of the data belong to no tensor",
                           label, (size_t)(at - data), data_size);
  return NULL;
}

static alloy_error *too_short(const char *label, size_t size) {
  return alloy_error_new(ALLOY_ERR_PARSE, "%s: %zu bytes are too short for a safetensors file",
                         label, size);
}

static alloy_error *parse(alloy_safetensors *st, const uint8_t *bytes, size_t size,
                          const char *label) {
  if (size < 8) return too_short(label, size);
  uint64_t hlen = 0;
  for (int i = 7; i >= 0; i--) hlen = hlen << 8 | bytes[i];
  if (hlen > size - 8)
    return alloy_error_new(ALLOY_ERR_PARSE, "%s: header length %llu exceeds the file (%zu bytes)",
                           label, (unsigned long long)hlen, size);
  if (hlen > ST_MAX_HEADER)
    return alloy_error_new(ALLOY_ERR_UNSUPPORTED, "%s: header length %llu is over the limit of %u",
                           label, (unsigned long long)hlen, ST_MAX_HEADER);
  /* The format requires '{' first; jansson alone would allow whitespace. */
  if (hlen == 0 || bytes[8] != '{')
    return alloy_error_new(ALLOY_ERR_PARSE, "%s: the header does not begin with '{'", label);
  json_error_t je;
  /* Duplicate keys are invalid, and would let a name mean two tensors. */
  json_t *root = json_loadb((const char *)bytes + 8, (size_t)hlen, JSON_REJECT_DUPLICATES, &je);
  if (!json_is_object(root)) {
    json_decref(root);
    return alloy_error_new(ALLOY_ERR_PARSE, "%s: the header is not a JSON object (%s at byte %d)",
                           label, je.text, je.position);
  }
  alloy_error *err = NULL;
  size_t n = json_object_size(root), names_len = 0;
  const char *key;
  json_t *v;
  json_object_foreach(root, key, v) names_len += strlen(key) + 1;
  st->entries = calloc(n ? n : 1, sizeof *st->entries);
  st->names = malloc(names_len ? names_len : 1);
  if (!st->entries || !st->names) err = oom();
  char *np = st->names;
  const uint8_t *data = bytes + 8 + hlen;
  size_t data_size = size - 8 - (size_t)hlen;
  json_object_foreach(root, key, v) {
    if (err) break;
    if (!strcmp(key, "__metadata__")) continue;
    alloy_st_entry *e = &st->entries[st->n];
    size_t kl = strlen(key) + 1;
    memcpy(np, key, kl);
    e->name = np;
    np += kl;
    if (!(err = parse_entry(label, key, v, data, data_size, e))) st->n++;
  }
  json_decref(root);
  if (!err) err = check_tiling(label, st, data, data_size);
  if (!err) qsort(st->entries, (size_t)st->n, sizeof *st->entries, name_cmp);
  return err;
}

alloy_error *alloy_safetensors_open_memory(const void *data, size_t size, const char *label,
                                           alloy_safetensors **out) {
  if (!out)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "alloy_safetensors_open_memory: NULL out");
  *out = NULL;
  if (!data && size)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "alloy_safetensors_open_memory: NULL data");
  alloy_safetensors *st = calloc(1, sizeof *st);
  if (!st) return oom();
  alloy_error *err = parse(st, data, size, label ? label : "(memory)");
  if (err) {
    alloy_safetensors_close(st);
    return err;
  }
  *out = st;
  return NULL;
}

alloy_error *alloy_safetensors_open(const char *path, alloy_safetensors **out) {
  if (!out) return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "alloy_safetensors_open: NULL out");
  *out = NULL;
  if (!path)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "alloy_safetensors_open: NULL path");
  /* Regular files only: a FIFO or a device would block or never end. */
  void *map = NULL;
  size_t size = 0;
  alloy_error *fe = alloy_file_map(path, 0, &map, &size);
  if (fe) return fe;
  if (size < 8) { /* an empty file has no mapping */
    if (map) munmap(map, size);
    return too_short(path, size);
  }
  alloy_safetensors *st = calloc(1, sizeof *st);
  if (!st) {
    munmap(map, size);
    return oom();
  }
  st->map = map;
  st->size = size;
  alloy_error *err = parse(st, map, size, path);
  if (err) {
    alloy_safetensors_close(st);
    return err;
  }
  *out = st;
  return NULL;
}

void alloy_safetensors_close(alloy_safetensors *st) {
  if (!st) return;
  if (st->map) munmap(st->map, st->size);
  free(st->entries);
  free(st->names);
  free(st);
}

int alloy_safetensors_count(const alloy_safetensors *st) { return st ? st->n : 0; }

const alloy_st_entry *alloy_safetensors_entry(const alloy_safetensors *st, int i) {
  return st && i >= 0 && i < st->n ? &st->entries[i] : NULL;
}

const alloy_st_entry *alloy_safetensors_find(const alloy_safetensors *st, const char *name) {
  if (!st || !name) return NULL;
  alloy_st_entry key = {.name = name};
  return bsearch(&key, st->entries, (size_t)st->n, sizeof key, name_cmp);
}

/* ---- writing ---------------------------------------------------------------- */

static int by_name(const void *a, const void *b) {
  return strcmp((*(const alloy_st_tensor *const *)a)->name,
                (*(const alloy_st_tensor *const *)b)->name);
}

/* Largest elements first: with the data 8-byte aligned and every size a
 * multiple of its (power-of-two) element size, each tensor then starts at a
 * multiple of its own element size. Ties by name, as Hugging Face does. */
static int by_layout(const void *a, const void *b) {
  const alloy_st_tensor *x = *(const alloy_st_tensor *const *)a;
  const alloy_st_tensor *y = *(const alloy_st_tensor *const *)b;
  size_t sx = alloy_dtype_size(x->dtype), sy = alloy_dtype_size(y->dtype);
  if (sx != sy) return sx > sy ? -1 : 1;
  return strcmp(x->name, y->name);
}

static alloy_error *tbad(const char *path, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static alloy_error *tbad(const char *path, const char *name, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "%s: tensor '%.*s': %s", path, ST_NAME_SHOWN,
                         name, msg);
}

static alloy_error *check_tensor(const char *path, const alloy_st_tensor *t, int i) {
  const char *name = t->name;
  if (!name || !name[0])
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "%s: tensor %d: the name is empty", path, i);
  if (!strcmp(name, "__metadata__")) return tbad(path, name, "the name is reserved for metadata");
  if ((unsigned)t->dtype >= ALLOY_DTYPE_COUNT)
    return tbad(path, name, "invalid dtype %d", (int)t->dtype);
  if (t->rank < 0 || t->rank > ALLOY_MAX_RANK)
    return tbad(path, name, "rank %d is outside [0, %d]", t->rank, ALLOY_MAX_RANK);
  if (t->rank > 0 && !t->shape) return tbad(path, name, "NULL shape");
  uint64_t numel = 1, want;
  bool overflow = false, empty = false;
  for (int d = 0; d < t->rank; d++) {
    if (t->shape[d] < 0)
      return tbad(path, name, "negative size %lld in dimension %d", (long long)t->shape[d], d);
    overflow |= __builtin_mul_overflow(numel, (uint64_t)t->shape[d], &numel);
    empty |= t->shape[d] == 0;
  }
  if (empty) numel = 0;
  if ((overflow && !empty) ||
      __builtin_mul_overflow(numel, (uint64_t)alloy_dtype_size(t->dtype), &want) ||
      want > INT64_MAX)
    return tbad(path, name, "the shape overflows");
  if (want != t->nbytes)
    return tbad(path, name, "nbytes is %zu, but %llu elements of %s need %llu", t->nbytes,
                (unsigned long long)numel, alloy_dtype_name(t->dtype), (unsigned long long)want);
  if (t->nbytes && !t->data) return tbad(path, name, "NULL data");
  return NULL;
}

/* The header text: keys in name order (jansson keeps insertion order), each
 * tensor's fields in the order Hugging Face writes them, padded with spaces
 * to a multiple of 8. offsets[i] is where tensor i's bytes start. */
static alloy_error *header_json(const char *path, const alloy_st_tensor *tensors,
                                const alloy_st_tensor *const *sorted, int n,
                                const uint64_t *offsets, char **text, size_t *len) {
  json_t *root = json_object();
  bool ok = root != NULL;
  for (int k = 0; ok && k < n; k++) {
    const alloy_st_tensor *t = sorted[k];
    size_t i = (size_t)(t - tensors);
    json_t *shape = json_array(), *off = json_array(), *o = json_object();
    ok = shape && off && o;
    for (int d = 0; ok && d < t->rank; d++)
      ok = !json_array_append_new(shape, json_integer(t->shape[d]));
    ok = ok && !json_array_append_new(off, json_integer((json_int_t)offsets[i])) &&
         !json_array_append_new(off, json_integer((json_int_t)(offsets[i] + t->nbytes)));
    ok = ok && !json_object_set_new(o, "dtype", json_string(st_codes[t->dtype]));
    ok = ok && !json_object_set(o, "shape", shape) && !json_object_set(o, "data_offsets", off);
    json_decref(shape);
    json_decref(off);
    if (ok && json_object_set_new(root, t->name, o)) {
      /* jansson refuses a key that is not UTF-8 */
      json_decref(root);
      return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "%s: tensor '%.*s': the name is not UTF-8",
                             path, ST_NAME_SHOWN, t->name);
    }
    if (!ok) json_decref(o);
  }
  char *s = ok ? json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
  json_decref(root);
  if (!s) return oom();
  size_t raw = strlen(s), padded = (raw + 7) & ~(size_t)7;
  char *buf = realloc(s, padded + 1);
  if (!buf) {
    free(s);
    return oom();
  }
  memset(buf + raw, ' ', padded - raw);
  buf[padded] = '\0';
  *text = buf;
  *len = padded;
  return NULL;
}

static bool write_all(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n > 0) {
    ssize_t w = write(fd, p, n > (1u << 30) ? (1u << 30) : n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= (size_t)w;
  }
  return true;
}

/* Writes header and data to tmp, durably, then renames it to path. */
static alloy_error *write_file(const char *path, const char *tmp, const char *header, size_t hlen,
                               const alloy_st_tensor *const *layout, int n) {
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0666);
  if (fd < 0)
    return alloy_error_new(ALLOY_ERR_IO, "%s: cannot create %s: %s", path, tmp, strerror(errno));
  uint8_t lenbuf[8];
  for (int i = 0; i < 8; i++) lenbuf[i] = (uint8_t)((uint64_t)hlen >> (8 * i));
  bool ok = write_all(fd, lenbuf, 8) && write_all(fd, header, hlen);
  for (int k = 0; ok && k < n; k++) ok = write_all(fd, layout[k]->data, layout[k]->nbytes);
  ok = ok && fsync(fd) == 0;
  int saved = errno;
  if (close(fd) != 0 && ok) {
    ok = false;
    saved = errno;
  }
  if (ok && rename(tmp, path) != 0) {
    saved = errno;
    unlink(tmp);
    return alloy_error_new(ALLOY_ERR_IO, "%s: cannot rename %s to it: %s", path, tmp,
                           strerror(saved));
  }
  if (!ok) {
    unlink(tmp);
    return alloy_error_new(ALLOY_ERR_IO, "%s: cannot write %s: %s", path, tmp, strerror(saved));
  }
  return NULL;
}

alloy_error *alloy_safetensors_write(const char *path, const alloy_st_tensor *tensors, int n) {
  if (!path || !path[0] || n < 0 || (n > 0 && !tensors))
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "alloy_safetensors_write: bad arguments");
  for (int i = 0; i < n; i++) {
    alloy_error *e = check_tensor(path, &tensors[i], i);
    if (e) return e;
  }
  size_t cnt = n ? (size_t)n : 1;
  const alloy_st_tensor **sorted = malloc(cnt * sizeof *sorted);
  const alloy_st_tensor **layout = malloc(cnt * sizeof *layout);
  uint64_t *offsets = malloc(cnt * sizeof *offsets);
  char *header = NULL, *tmp = NULL;
  size_t hlen = 0;
  alloy_error *err = NULL;
  if (!sorted || !layout || !offsets) err = oom();
  for (int i = 0; !err && i < n; i++) sorted[i] = layout[i] = &tensors[i];
  if (!err) {
    qsort(sorted, (size_t)n, sizeof *sorted, by_name);
    qsort(layout, (size_t)n, sizeof *layout, by_layout);
  }
  for (int k = 1; !err && k < n; k++)
    if (!strcmp(sorted[k - 1]->name, sorted[k]->name))
      err = alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "%s: tensor '%.*s': the name is used twice",
                            path, ST_NAME_SHOWN, sorted[k]->name);
  uint64_t at = 0;
  for (int k = 0; !err && k < n; k++) {
    offsets[layout[k] - tensors] = at;
    if (__builtin_add_overflow(at, (uint64_t)layout[k]->nbytes, &at) || at > INT64_MAX)
      err = alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                            "%s: the tensors add up to more than 2^63 bytes", path);
  }
  if (!err) err = header_json(path, tensors, sorted, n, offsets, &header, &hlen);
  if (!err && asprintf(&tmp, "%s.tmp", path) < 0) {
    tmp = NULL;
    err = oom();
  }
  if (!err) err = write_file(path, tmp, header, hlen, layout, n);
  free(tmp);
  free(header);
  free(offsets);
  free(layout);
  free(sorted);
  return err;
}
