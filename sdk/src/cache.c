/*
 * sdk/src/cache.c: the compile cache of a runtime.
 *
 * Every graph a program or a mixture compiles on a backend goes through
 * here. The key is the graph's content (its canonical .air text, which
 * holds every op, argument, input shape and dtype) hashed with FNV-1a, plus
 * the backend's name and version. In memory: a compiled executable is kept
 * by the runtime and shared by every program that compiles the same graph
 * on the same backend; an executable no program holds any more stays cached
 * until the cache passes its capacity, when the oldest such one goes. On
 * disk: when $ALLOY_CACHE_DIR is set and the backend can serialize
 * executables, a miss first looks for <dir>/<backend>-<version>-<hash>.bin
 * (written by an earlier process after a compile; its compatibility
 * information must match what the backend reports now), and a compile
 * writes that file. The text of the graph is stored beside the hash and
 * compared, so a hash collision is a miss, never a wrong executable.
 *
 * The key also holds the backend's options and, for inputs whose data is
 * bound at compile (weights a plugin may pre-pack), a hash of that data:
 * the same graph with other weights is another executable. Such an
 * executable may point into weights its program borrows, so it leaves the
 * cache with the last program holding it instead of staying for reuse.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sdk/src/runtime_internal.h"

enum { CACHE_CAPACITY = 512 };

typedef struct cache_entry {
  alloy_loaded *row;
  uint64_t hash;
  char *text;              /* the graph's .air text */
  alloy_graph *graph;      /* the copy the executable was compiled from:
                            * a backend may keep it until release */
  alloy_executable *exe;
  int refs;                /* programs holding it */
  uint64_t last_use;
  bool bound;              /* compiled with bound input data: goes at refs 0 */
} cache_entry;

struct alloy_cache {
  cache_entry *entries;
  int n, cap;
  uint64_t clock;
  alloy_cache_stats stats;
};

static alloy_error *oom(void) {
  return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
}

static uint64_t fnv1a(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

void cache_close(alloy_runtime *rt) {
  alloy_cache *c = rt->cache;
  if (!c) return;
  for (int i = 0; i < c->n; i++) {
    cache_entry *e = &c->entries[i];
    e->row->api->executable_release(e->row->be, e->exe);
    alloy_graph_free(e->graph);
    free(e->text);
  }
  free(c->entries);
  free(c);
  rt->cache = NULL;
}

void alloy_runtime_cache_stats(const alloy_runtime *rt, alloy_cache_stats *out) {
  alloy_cache_stats zero = {0};
  *out = rt->cache ? rt->cache->stats : zero;
}

/* Drops the least recently used entry no program holds, if any. */
static void evict_one(alloy_cache *c) {
  int victim = -1;
  for (int i = 0; i < c->n; i++)
    if (!c->entries[i].refs && (victim < 0 || c->entries[i].last_use < c->entries[victim].last_use))
      victim = i;
  if (victim < 0) return;
  cache_entry *e = &c->entries[victim];
  e->row->api->executable_release(e->row->be, e->exe);
  alloy_graph_free(e->graph);
  free(e->text);
  c->entries[victim] = c->entries[--c->n];
}

/* --- disk ---------------------------------------------------------------------*/

static bool can_serialize(const alloy_loaded *row) {
  const alloy_plugin_api *a = row->api;
  return ALLOY_HAS_FIELD(a, alloy_plugin_api, executable_deserialize) && a->executable_serialize &&
         a->executable_deserialize;
}

/* <dir>/<backend>-<version>-<hash>.bin, or false when there is no cache
 * folder. */
static bool disk_path(const alloy_loaded *row, uint64_t hash, char *buf, size_t cap) {
  const char *dir = getenv("ALLOY_CACHE_DIR");
  if (!dir || !*dir) return false;
  return (size_t)snprintf(buf, cap, "%s/%s-%s-%016llx.bin", dir, row->name, row->version,
                          (unsigned long long)hash) < cap;
}

/* The file: "ALLOYEXE1\n", then the lines "version <the backend's version>",
 * "device <plugin_version>/<device_model>" (what serialize reported),
 * "text <bytes>" and "exe <bytes>", each size followed by that many bytes
 * and a newline. A file of another backend version is a miss; the plugin's
 * deserialize checks its own compatibility (ALLOY_ERR_VERSION). */
static void disk_write(const alloy_loaded *row, uint64_t hash, const char *text,
                       alloy_executable *exe) {
  char path[4096], tmp[4200];
  if (!disk_path(row, hash, path, sizeof path)) return;
  void *bytes = NULL;
  uint64_t size = 0;
  alloy_compat_info info = {.struct_size = ALLOY_COMPAT_INFO_STRUCT_SIZE};
  alloy_error *e = row->api->executable_serialize(row->be, exe, &bytes, &size, &info);
  if (e) {
    alloy_error_free(e);
    return;
  }
  snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
  FILE *f = fopen(tmp, "wb");
  bool ok = f != NULL;
  if (ok) {
    size_t tlen = strlen(text);
    ok = fprintf(f, "ALLOYEXE1\nversion %s\ndevice %s/%s\ntext %zu\n", row->version,
                 info.plugin_version ? info.plugin_version : "",
                 info.device_model ? info.device_model : "", tlen) > 0 &&
         fwrite(text, 1, tlen, f) == tlen && fprintf(f, "\nexe %llu\n", (unsigned long long)size) > 0 &&
         fwrite(bytes, 1, (size_t)size, f) == size;
    ok = fclose(f) == 0 && ok;
  }
  if (ok) ok = rename(tmp, path) == 0;
  if (!ok) remove(tmp);
  free(bytes);
}

/* Reads the whole file at path into a malloc'd buffer. */
static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  struct stat sb;
  char *buf = NULL;
  if (fstat(fileno(f), &sb) == 0 && sb.st_size > 0 && (buf = malloc((size_t)sb.st_size + 1)) &&
      fread(buf, 1, (size_t)sb.st_size, f) == (size_t)sb.st_size) {
    buf[sb.st_size] = 0;
    *len = (size_t)sb.st_size;
  } else {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  return buf;
}

/* An executable from the disk cache, or NULL (a miss: absent, written for
 * another graph, another plugin version or device, or refused by the
 * plugin). */
static alloy_executable *disk_read(const alloy_loaded *row, uint64_t hash, const char *text,
                                   const alloy_graph *g) {
  char path[4096];
  if (!disk_path(row, hash, path, sizeof path)) return NULL;
  size_t len = 0;
  char *buf = slurp(path, &len);
  if (!buf) return NULL;
  /* What the backend would write now, to compare with the file's. */
  alloy_executable *exe = NULL;
  char version[256] = "", device[256] = "";
  unsigned long long tlen = 0, elen = 0;
  int at = 0;
  if (sscanf(buf, "ALLOYEXE1\nversion %255[^\n]\ndevice %255[^\n]\ntext %llu\n%n", version, device,
             &tlen, &at) >= 3 &&
      at > 0 && tlen == strlen(text) && (size_t)at + tlen < len && !memcmp(buf + at, text, tlen)) {
    size_t p = (size_t)at + tlen;
    int at2 = 0;
    if (sscanf(buf + p, "\nexe %llu\n%n", &elen, &at2) >= 1 && at2 > 0 && p + at2 + elen == len &&
        !strcmp(version, row->version)) {
      alloy_error *e = row->api->executable_deserialize(row->be, g, buf + p + at2, elen, &exe);
      if (e) {
        alloy_error_free(e);
        exe = NULL;
      }
    }
  }
  free(buf);
  return exe;
}

/* --- lookup ---------------------------------------------------------------------*/

/* FNV-1a over 8-byte words (then the tail): weights are megabytes. */
static uint64_t hash_words(const void *data, uint64_t n) {
  const unsigned char *p = data;
  uint64_t h = 1469598103934665603ull, w;
  uint64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    memcpy(&w, p + i, 8);
    h = (h ^ w) * 1099511628211ull;
  }
  for (; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

/* Appends the key's parts beyond the graph text: the backend's options and
 * the hash of each input's bound data. *bound: whether any data is. */
static char *key_text(const alloy_loaded *row, const alloy_graph *g, char *text, bool *bound) {
  size_t cap = strlen(text) + 1, len = cap - 1;
  *bound = false;
  for (int i = 0; i < row->noptions; i++) cap += strlen(row->options[i].key) + strlen(row->options[i].value) + 16;
  cap += (size_t)alloy_graph_num_inputs(g) * 64;
  char *out = realloc(text, cap);
  if (!out) {
    free(text);
    return NULL;
  }
  for (int i = 0; i < row->noptions; i++)
    len += (size_t)snprintf(out + len, cap - len, "\n#option %s=%s", row->options[i].key,
                            row->options[i].value);
  for (int i = 0; i < alloy_graph_num_inputs(g); i++) {
    uint64_t bytes = 0;
    const void *data = alloy_graph_input_data(g, i, &bytes);
    if (!data) continue;
    *bound = true;
    len += (size_t)snprintf(out + len, cap - len, "\n#data %d %llu %016llx", i,
                            (unsigned long long)bytes, (unsigned long long)hash_words(data, bytes));
  }
  return out;
}

alloy_error *cache_compile(alloy_runtime *rt, alloy_loaded *row, const alloy_graph *g,
                           alloy_error *(*compile)(alloy_loaded *, const alloy_graph *,
                                                   alloy_executable **),
                           alloy_executable **out) {
  *out = NULL;
  if (!rt->cache && !(rt->cache = calloc(1, sizeof *rt->cache))) return oom();
  alloy_cache *c = rt->cache;
  char *text = NULL;
  alloy_error *e = alloy_air_print(g, &text);
  /* A graph .air cannot spell is compiled without caching. */
  if (e) {
    alloy_error_free(e);
    c->stats.uncached++;
    return compile(row, g, out);
  }
  bool bound = false;
  if (!(text = key_text(row, g, text, &bound))) return oom();
  uint64_t hash = fnv1a(text, strlen(text));
  c->clock++;
  for (int i = 0; i < c->n; i++) {
    cache_entry *en = &c->entries[i];
    if (en->row == row && en->hash == hash && !strcmp(en->text, text)) {
      en->refs++;
      en->last_use = c->clock;
      c->stats.hits++;
      free(text);
      *out = en->exe;
      return NULL;
    }
  }
  /* The executable outlives the caller's graph: compile a copy the cache
   * keeps. */
  alloy_graph *own = NULL;
  if ((e = alloy_graph_clone(g, &own))) {
    free(text);
    return e;
  }
  alloy_executable *exe = can_serialize(row) ? disk_read(row, hash, text, own) : NULL;
  if (exe) {
    c->stats.disk_hits++;
  } else {
    c->stats.misses++;
    if ((e = compile(row, own, &exe))) {
      alloy_graph_free(own);
      free(text);
      return e;
    }
    if (can_serialize(row)) disk_write(row, hash, text, exe);
  }
  if (c->n >= CACHE_CAPACITY) evict_one(c);
  if (c->n == c->cap) {
    int cap = c->cap ? 2 * c->cap : 32;
    cache_entry *ne = realloc(c->entries, sizeof *ne * (size_t)cap);
    if (!ne) {
      row->api->executable_release(row->be, exe);
      alloy_graph_free(own);
      free(text);
      return oom();
    }
    c->entries = ne;
    c->cap = cap;
  }
  c->entries[c->n++] = (cache_entry){row, hash, text, own, exe, 1, c->clock, bound};
  *out = exe;
  return NULL;
}

bool cache_release(alloy_runtime *rt, alloy_executable *exe) {
  alloy_cache *c = rt->cache;
  for (int i = 0; c && i < c->n; i++)
    if (c->entries[i].exe == exe) {
      cache_entry *en = &c->entries[i];
      if (en->refs > 0) en->refs--;
      if (!en->refs && en->bound) {
        en->row->api->executable_release(en->row->be, en->exe);
        alloy_graph_free(en->graph);
        free(en->text);
        c->entries[i] = c->entries[--c->n];
      }
      return true;
    }
  return false;
}
