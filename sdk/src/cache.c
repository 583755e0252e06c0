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
 * executables, a miss first looks for <dir>/<B>-<K>.bin, where B hashes the
 * backend's name, version and devices and K the key (written by an earlier
 * process after a compile), and a compile writes that file. Every field of
 * the key is stored in the file and compared in full (backend name,
 * version, devices, graph text), so a hash collision is a miss, never a
 * wrong executable.
 *
 * The folder and its files are not trusted: a name is made of hashes only
 * (no string a plugin reports reaches a path); the folder is created 0700
 * when missing and used only when it is no symbolic link, belongs to this
 * user and no one else can write it (else the disk cache is off, with a
 * warning logged once, and compiles go on); an entry is written 0600 under
 * a fresh random name opened O_EXCL|O_NOFOLLOW, then renamed into place;
 * an entry is read only when it is a regular file (not followed through a
 * link, a FIFO is never opened) of at most CACHE_MAX_ENTRY bytes, and is
 * parsed with every length checked against the file.
 *
 * The key also holds the backend's options and, for inputs whose data is
 * bound at compile (weights a plugin may pre-pack), a hash of that data:
 * the same graph with other weights is another executable. Such an
 * executable may point into weights its program borrows, so it leaves the
 * cache with the last program holding it instead of staying for reuse.
 *
 * Threads: programs of one runtime run (and compile specializations) on
 * several threads at once, so every cache is under one process-wide lock,
 * held for lookups, the disk and the counters but not while a backend
 * compiles: two threads may compile different graphs at once. Two that
 * compile the same graph at once both compile it; the second to finish
 * finds the first's entry, releases its own executable and takes that one,
 * so a graph is cached once.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ir/files.h"
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
  bool disk_warned;         /* why the disk cache is not used was logged */
};

/* Every runtime's cache, its creation and its counters (above). */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static alloy_error *oom(void) {
  return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
}

static uint64_t fnv1a(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

/* When the runtime closes: no program of it is left, so nothing else
 * touches its cache. */
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
  pthread_mutex_lock(&cache_lock);
  *out = rt->cache ? rt->cache->stats : zero;
  pthread_mutex_unlock(&cache_lock);
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

/* An entry larger than this is not read (a planted file could be huge). */
#define CACHE_MAX_ENTRY ((uint64_t)1 << 30)

static bool can_serialize(const alloy_loaded *row) {
  const alloy_plugin_api *a = row->api;
  return ALLOY_HAS_FIELD(a, alloy_plugin_api, executable_deserialize) && a->executable_serialize &&
         a->executable_deserialize;
}

/* Says once per runtime why the disk cache is not used. */
static void disk_refused(alloy_cache *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void disk_refused(alloy_cache *c, const char *fmt, ...) {
  if (c->disk_warned) return;
  c->disk_warned = true;
  char line[600];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n >= 0 && (size_t)n < sizeof line)
    snprintf(line + n, sizeof line - (size_t)n, " (compiling without the disk cache)");
  alloy_host_table()->log(ALLOY_LOG_WARNING, "alloy", line);
}

/* Makes the missing folders of path, each 0700 (mkdir -p). */
static void make_dirs(const char *path) {
  char buf[4096];
  size_t n = strlen(path);
  if (n >= sizeof buf) return;
  memcpy(buf, path, n + 1);
  for (size_t i = 1; i <= n; i++)
    if (buf[i] == '/' || buf[i] == '\0') {
      char keep = buf[i];
      buf[i] = '\0';
      if (mkdir(buf, 0700) != 0 && errno != EEXIST) return;
      buf[i] = keep;
    }
}

/* $ALLOY_CACHE_DIR, opened as a directory (never through a symbolic link)
 * and made 0700 when missing; -1 when it is not set, or is not a place
 * only this user can write (said once, with the reason). */
static int cache_dir_open(alloy_cache *c) {
  const char *dir = getenv("ALLOY_CACHE_DIR");
  if (!dir || !*dir) return -1;
  int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  int fd = open(dir, flags);
  if (fd < 0 && errno == ENOENT) {
    make_dirs(dir);
    fd = open(dir, flags);
  }
  if (fd < 0) {
    int err = errno;
    struct stat lsb;
    if (lstat(dir, &lsb) == 0 && S_ISLNK(lsb.st_mode))
      disk_refused(c, "the cache folder %s is a symbolic link", dir);
    else
      disk_refused(c, "the cache folder %s cannot be opened: %s", dir, strerror(err));
    return -1;
  }
  struct stat sb = {0};
  const char *why = NULL;
  if (fstat(fd, &sb) != 0) why = "cannot be examined";
  else if (sb.st_uid != geteuid()) why = "belongs to another user";
  else if (sb.st_mode & (S_IWGRP | S_IWOTH)) why = "can be written by other users";
  if (why) {
    disk_refused(c, "the cache folder %s %s (uid %ld, mode %03o)", dir, why, (long)sb.st_uid,
                 (unsigned)(sb.st_mode & 0777));
    close(fd);
    return -1;
  }
  return fd;
}

/* The identity of the backend an entry is for: name, version and devices
 * (the host's description of them, as `alloy backends` lists them). */
static uint64_t backend_hash(const alloy_loaded *row) {
  const char *parts[3] = {row->name, row->version, row->devices};
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < 3; i++) {
    const char *p = parts[i] ? parts[i] : "";
    size_t n = strlen(p) + 1; /* with the NUL: "ab","c" is not "a","bc" */
    for (size_t k = 0; k < n; k++) h = (h ^ (unsigned char)p[k]) * 1099511628211ull;
  }
  return h;
}

/* <backend hash>-<key hash>.bin: made only of hashes, so that no string a
 * plugin reports ever reaches a path. */
static void entry_name(const alloy_loaded *row, uint64_t hash, char name[40]) {
  snprintf(name, 40, "%016llx-%016llx.bin", (unsigned long long)backend_hash(row),
           (unsigned long long)hash);
}

/* The file: "ALLOYEXE2\n", then the fields backend, version, device (the
 * backend's name, version and devices now), compat (what serialize
 * reported: plugin version and device model), text (the key) and exe (the
 * serialized bytes), each as "<field> <bytes>\n", that many bytes and a
 * newline (none after exe, which ends the file). A reader compares every
 * field but compat, which the plugin's deserialize checks itself
 * (ALLOY_ERR_VERSION). */
static const char *const FIELDS[] = {"backend", "version", "device", "compat", "text", "exe"};
enum { F_BACKEND, F_VERSION, F_DEVICE, F_COMPAT, F_TEXT, F_EXE, F_COUNT };
#define CACHE_MAGIC "ALLOYEXE2\n"

static bool write_all(int fd, const void *data, size_t n) {
  const char *p = data;
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= (size_t)w;
  }
  return true;
}

/* A new file of a name no one else can have guessed, created 0600 and
 * exclusively (a planted file or link of that name is never opened). */
static int create_temp(int dirfd, char name[48]) {
  static unsigned counter;
  for (int attempt = 0; attempt < 16; attempt++) {
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
      r = ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL) ^ ((uint64_t)counter << 16);
    snprintf(name, 48, "tmp-%016llx-%u.tmp", (unsigned long long)r, counter++);
    int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

static void disk_write(alloy_cache *c, const alloy_loaded *row, uint64_t hash, const char *text,
                       alloy_executable *exe) {
  void *bytes = NULL;
  uint64_t size = 0;
  alloy_compat_info info = {.struct_size = ALLOY_COMPAT_INFO_STRUCT_SIZE};
  alloy_error *e = row->api->executable_serialize(row->be, exe, &bytes, &size, &info);
  if (e) {
    alloy_error_free(e);
    return;
  }
  int dirfd = cache_dir_open(c);
  if (dirfd < 0) {
    free(bytes);
    return;
  }
  char compat[600];
  snprintf(compat, sizeof compat, "%.256s/%.256s", info.plugin_version ? info.plugin_version : "",
           info.device_model ? info.device_model : "");
  const char *vals[F_COUNT] = {row->name ? row->name : "", row->version ? row->version : "",
                               row->devices ? row->devices : "", compat, text, bytes};
  uint64_t lens[F_COUNT];
  for (int f = 0; f < F_EXE; f++) lens[f] = strlen(vals[f]);
  lens[F_EXE] = size;
  char tmp[48], name[40];
  entry_name(row, hash, name);
  int fd = bytes || !size ? create_temp(dirfd, tmp) : -1;
  bool ok = fd >= 0 && write_all(fd, CACHE_MAGIC, strlen(CACHE_MAGIC));
  for (int f = 0; ok && f < F_COUNT; f++) {
    char head[64];
    int n = snprintf(head, sizeof head, "%s %llu\n", FIELDS[f], (unsigned long long)lens[f]);
    ok = write_all(fd, head, (size_t)n) && write_all(fd, vals[f], (size_t)lens[f]) &&
         (f == F_EXE || write_all(fd, "\n", 1));
  }
  if (fd >= 0) {
    ok = close(fd) == 0 && ok;
    /* rename replaces whatever has the name (a link is replaced, never
     * followed). */
    if (!ok || renameat(dirfd, tmp, dirfd, name) != 0) unlinkat(dirfd, tmp, 0);
  }
  close(dirfd);
  free(bytes);
}

/* Reads "<field> <n>\n" and n bytes (and "\n" unless last) at *at;
 * false when the file does not say that. */
static bool read_field(const char *buf, size_t len, size_t *at, const char *field, bool last,
                       const char **val, uint64_t *n) {
  size_t fl = strlen(field), p = *at;
  if (len - p < fl + 2 || memcmp(buf + p, field, fl) || buf[p + fl] != ' ') return false;
  p += fl + 1;
  uint64_t v = 0;
  size_t digits = 0;
  for (; p < len && buf[p] >= '0' && buf[p] <= '9' && digits < 19; p++, digits++)
    v = v * 10 + (uint64_t)(buf[p] - '0');
  if (!digits || p >= len || buf[p] != '\n') return false;
  p++;
  if (v > len - p) return false;
  *val = buf + p;
  *n = v;
  p += (size_t)v;
  if (last) {
    if (p != len) return false;
  } else {
    if (p >= len || buf[p] != '\n') return false;
    p++;
  }
  *at = p;
  return true;
}

bool cache_entry_parse(const char *buf, size_t len, const char **val, uint64_t *n) {
  size_t at = strlen(CACHE_MAGIC);
  bool ok = len >= at && !memcmp(buf, CACHE_MAGIC, at);
  for (int f = 0; ok && f < F_COUNT; f++)
    ok = read_field(buf, len, &at, FIELDS[f], f == F_EXE, &val[f], &n[f]);
  return ok;
}

static bool field_is(const char *val, uint64_t n, const char *want) {
  want = want ? want : "";
  return n == strlen(want) && !memcmp(val, want, (size_t)n);
}

/* An executable from the disk cache, or NULL (a miss: absent; written for
 * another backend, version, device set or graph; not a regular file of
 * this user's; or refused by the plugin). */
static alloy_executable *disk_read(alloy_cache *c, const alloy_loaded *row, uint64_t hash,
                                   const char *text, const alloy_graph *g) {
  int dirfd = cache_dir_open(c);
  if (dirfd < 0) return NULL;
  char name[40];
  entry_name(row, hash, name);
  struct stat sb;
  char *buf = NULL;
  size_t len = 0;
  /* Absent is a plain miss; anything else refused is said once. */
  if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
    alloy_error *e = alloy_file_read_at(dirfd, name, ALLOY_FILE_NOFOLLOW, CACHE_MAX_ENTRY, &buf, &len);
    if (e) {
      disk_refused(c, "in the cache folder %s: %s", getenv("ALLOY_CACHE_DIR"),
                   alloy_error_message(e));
      alloy_error_free(e);
    }
  }
  close(dirfd);
  if (!buf) return NULL;
  alloy_executable *exe = NULL;
  const char *val[F_COUNT];
  uint64_t n[F_COUNT];
  bool ok = cache_entry_parse(buf, len, val, n);
  ok = ok && field_is(val[F_BACKEND], n[F_BACKEND], row->name) &&
       field_is(val[F_VERSION], n[F_VERSION], row->version) &&
       field_is(val[F_DEVICE], n[F_DEVICE], row->devices) && field_is(val[F_TEXT], n[F_TEXT], text);
  if (ok) {
    alloy_error *e = row->api->executable_deserialize(row->be, g, val[F_EXE], n[F_EXE], &exe);
    if (e) {
      alloy_error_free(e);
      exe = NULL;
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

/* The executable of this key, held once more, or NULL. Under cache_lock
 * (entries move when the array grows: only the executable is returned). */
static alloy_executable *find_held(alloy_cache *c, const alloy_loaded *row, uint64_t hash,
                                   const char *text) {
  for (int i = 0; i < c->n; i++) {
    cache_entry *en = &c->entries[i];
    if (en->row == row && en->hash == hash && !strcmp(en->text, text)) {
      en->refs++;
      en->last_use = c->clock;
      return en->exe;
    }
  }
  return NULL;
}

alloy_error *cache_compile(alloy_runtime *rt, alloy_loaded *row, const alloy_graph *g,
                           alloy_error *(*compile)(alloy_loaded *, const alloy_graph *,
                                                   alloy_executable **),
                           alloy_executable **out) {
  *out = NULL;
  pthread_mutex_lock(&cache_lock);
  if (!rt->cache) rt->cache = calloc(1, sizeof *rt->cache);
  alloy_cache *c = rt->cache; /* lives until the runtime closes */
  pthread_mutex_unlock(&cache_lock);
  if (!c) return oom();
  char *text = NULL;
  alloy_error *e = alloy_air_print(g, &text);
  /* A graph .air cannot spell is compiled without caching. */
  if (e) {
    alloy_error_free(e);
    pthread_mutex_lock(&cache_lock);
    c->stats.uncached++;
    pthread_mutex_unlock(&cache_lock);
    return compile(row, g, out);
  }
  bool bound = false;
  if (!(text = key_text(row, g, text, &bound))) return oom();
  uint64_t hash = fnv1a(text, strlen(text));
  /* The executable outlives the caller's graph: compile a copy the cache
   * keeps. */
  alloy_graph *own = NULL;
  pthread_mutex_lock(&cache_lock);
  c->clock++;
  alloy_executable *held = find_held(c, row, hash, text);
  if (held) c->stats.hits++;
  pthread_mutex_unlock(&cache_lock);
  if (held || (e = alloy_graph_clone(g, &own))) {
    free(text);
    *out = held;
    return e;
  }
  pthread_mutex_lock(&cache_lock);
  alloy_executable *exe = can_serialize(row) ? disk_read(c, row, hash, text, own) : NULL;
  if (exe) {
    c->stats.disk_hits++;
  } else {
    c->stats.misses++;
    pthread_mutex_unlock(&cache_lock);
    e = compile(row, own, &exe);
    if (e) {
      alloy_graph_free(own);
      free(text);
      return e;
    }
    pthread_mutex_lock(&cache_lock);
    /* Compiled by another thread meanwhile: theirs is kept. */
    if ((held = find_held(c, row, hash, text))) {
      pthread_mutex_unlock(&cache_lock);
      row->api->executable_release(row->be, exe);
      alloy_graph_free(own);
      free(text);
      *out = held;
      return NULL;
    }
    if (can_serialize(row)) disk_write(c, row, hash, text, exe);
  }
  if (c->n >= CACHE_CAPACITY) evict_one(c);
  if (c->n == c->cap) {
    int cap = c->cap ? 2 * c->cap : 32;
    cache_entry *ne = realloc(c->entries, sizeof *ne * (size_t)cap);
    if (!ne) {
      pthread_mutex_unlock(&cache_lock);
      row->api->executable_release(row->be, exe);
      alloy_graph_free(own);
      free(text);
      return oom();
    }
    c->entries = ne;
    c->cap = cap;
  }
  c->entries[c->n++] = (cache_entry){row, hash, text, own, exe, 1, c->clock, bound};
  pthread_mutex_unlock(&cache_lock);
  *out = exe;
  return NULL;
}

bool cache_release(alloy_runtime *rt, alloy_executable *exe) {
  pthread_mutex_lock(&cache_lock);
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
      pthread_mutex_unlock(&cache_lock);
      return true;
    }
  pthread_mutex_unlock(&cache_lock);
  return false;
}
