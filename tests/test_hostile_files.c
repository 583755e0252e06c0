/*
 * tests/test_hostile_files.c: files Alloy is handed but must not trust.
 *
 * The compile cache folder ($ALLOY_CACHE_DIR, sdk/src/cache.c) as another
 * user or a hostile plugin could leave it: links planted where the cache
 * writes or reads, a FIFO as an entry, a folder others can write, entries
 * altered field by field, a plugin version string made of "/" and "..".
 * The files a user names (model, --inputs, weights: ir/model.c,
 * ir/safetensors.c, through ir/files.c): FIFOs, devices and folders are
 * refused before anything is read, formats are told by content (an empty
 * or foreign file is no model), and an .air's weights line names a file in
 * the .air's folder only, without any error quoting a file's bytes.
 *
 * A hang is what several of these bugs were, so those tests run the call
 * in a child process and kill it after a few seconds. The command-line
 * side (--batch, --check) is in tests/hostile.sh.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "alloy/graph.h"
#include "alloy/model.h"
#include "alloy/runtime.h"
#include "alloy/safetensors.h"
#include "harness.h"
#include "ir/files.h"
#include "sdk/src/runtime_internal.h"
#include "testplugin.h"

/* ---- scratch folders, files, children ----------------------------------- */

typedef struct {
  char path[512];
} scratch;

static bool scratch_new(scratch *s) {
  const char *tmp = getenv("TMPDIR");
  snprintf(s->path, sizeof s->path, "%s/alloy-hostile-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(s->path)) {
    harness_fail(__FILE__, __LINE__, "mkdtemp(%s): %s", s->path, strerror(errno));
    return false;
  }
  return true;
}

static void scratch_remove(scratch *s) {
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", s->path, s->path);
  if (system(cmd) != 0) harness_fail(__FILE__, __LINE__, "cannot remove %s", s->path);
}

/* s->path + "/" + name, in a static buffer of four (used in one call). */
static const char *at(const scratch *s, const char *name) {
  static char bufs[4][1024];
  static int next;
  char *b = bufs[next++ % 4];
  snprintf(b, sizeof bufs[0], "%s/%s", s->path, name);
  return b;
}

static bool put(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  bool ok = f && fwrite(data, 1, n, f) == n;
  if (f) ok = fclose(f) == 0 && ok;
  return ok;
}
static bool put_text(const char *path, const char *text) { return put(path, text, strlen(text)); }

/* The whole file, malloc'd and NUL-terminated, or NULL. */
static char *get(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, len = 0, got;
  char *b = malloc(cap);
  while (b && (got = fread(b + len, 1, cap - len - 1, f)) > 0) {
    len += got;
    if (len + 1 == cap) {
      char *nb = realloc(b, cap *= 2);
      if (!nb) free(b);
      b = nb;
    }
  }
  fclose(f);
  if (b) b[len] = '\0';
  if (n) *n = len;
  return b;
}

/* Runs fn(arg) in a child; true when it returns 0 within seconds. A child
 * still running then is killed: the call hung. */
static bool child_passes_within(int (*fn)(void *), void *arg, int seconds) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) _exit(fn(arg));
  int status = 0;
  for (int waited_ms = 0;; waited_ms += 10) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (r < 0) return false;
    if (waited_ms >= seconds * 1000) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      fprintf(stderr, "  (the child was still running after %d s: killed)\n", seconds);
      return false;
    }
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
}

/* The message of e (freed) in a static buffer, or "" for success. */
static const char *message_of(alloy_error *e) {
  static char msg[1024];
  snprintf(msg, sizeof msg, "%s", e ? alloy_error_message(e) : "");
  alloy_error_free(e);
  return msg;
}

/* ---- the compile cache -------------------------------------------------- */

/* relu over f32[4]. */
static alloy_graph *relu_graph(void) {
  alloy_graph *g = alloy_graph_new();
  alloy_dim size = alloy_dim_const(4);
  alloy_value_type t = {.kind = ALLOY_VALUE_TENSOR, .dtype = ALLOY_F32, .rank = 1, .shape = &size};
  alloy_value *x;
  CHECK_OK(alloy_graph_add_input(g, "x", &t, &x));
  alloy_arg a = alloy_arg_value(x);
  alloy_node *n = NULL;
  CHECK_OK(alloy_graph_add_node(g, alloy_op_find("aten.relu.default"), &a, 1, NULL, NULL, 0, "y", &n));
  alloy_value *y = n ? alloy_node_output(n, 0) : NULL;
  if (y) CHECK_OK(alloy_graph_set_outputs(g, &y, 1));
  return g;
}

/* A scratch folder holding the serializing test plugin (newer_minor) and
 * $ALLOY_CACHE_DIR pointing at <scratch>/cache, made 0700. */
typedef struct {
  scratch s;
  char cache[600];
} cache_env;

static bool cache_env_new(cache_env *ce) {
  if (!scratch_new(&ce->s)) return false;
  snprintf(ce->cache, sizeof ce->cache, "%s/cache", ce->s.path);
  char cmd[2 * PATH_MAX + 64];
  snprintf(cmd, sizeof cmd, "cp '%s/liballoy-newer_minor.so' '%s/'", tp_test_plugins_dir(),
           ce->s.path);
  if (system(cmd) != 0) {
    harness_fail(__FILE__, __LINE__, "cannot copy the newer_minor plugin");
    return false;
  }
  setenv("ALLOY_CACHE_DIR", ce->cache, 1);
  if (mkdir(ce->cache, 0700) != 0) {
    harness_fail(__FILE__, __LINE__, "mkdir(%s): %s", ce->cache, strerror(errno));
    return false;
  }
  return true;
}

static void cache_env_free(cache_env *ce) {
  unsetenv("ALLOY_CACHE_DIR");
  scratch_remove(&ce->s);
}

/* What one compile of relu on newer_minor in a fresh runtime counted.
 * version, devices: replace the backend's (NULL: keep). */
typedef struct {
  const char *version, *devices;
} row_override;

static alloy_cache_stats compile_relu(const cache_env *ce, const row_override *ov) {
  alloy_cache_stats st = {0};
  const char *dirs[1] = {ce->s.path};
  alloy_runtime_options o = {.struct_size = sizeof o, .plugin_dirs = dirs, .num_plugin_dirs = 1,
                             .no_default_paths = true};
  alloy_runtime *rt = NULL;
  CHECK_OK(alloy_runtime_open(&o, &rt));
  if (!rt) return st;
  int b = alloy_runtime_find_backend(rt, "newer_minor");
  CHECK(b >= 0);
  if (b >= 0 && ov && ov->version) {
    free(rt->backends[b].version);
    rt->backends[b].version = strdup(ov->version);
  }
  if (b >= 0 && ov && ov->devices) {
    free(rt->backends[b].devices);
    rt->backends[b].devices = strdup(ov->devices);
  }
  alloy_graph *g = relu_graph();
  alloy_program *p = NULL;
  if (b >= 0) CHECK_OK(alloy_program_compile(rt, b, g, &p));
  alloy_runtime_cache_stats(rt, &st);
  alloy_program_release(p);
  alloy_graph_free(g);
  alloy_runtime_close(rt);
  return st;
}

/* The names in folder (not . and ..), joined by spaces, in a static buffer. */
static const char *listing(const char *folder) {
  static char out[4096];
  out[0] = '\0';
  DIR *d = opendir(folder);
  struct dirent *e;
  size_t len = 0;
  while (d && (e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && len < sizeof out)
      len += (size_t)snprintf(out + len, sizeof out - len, "%s%s", len ? " " : "", e->d_name);
  if (d) closedir(d);
  return out;
}

/* Whether name is <16 hex>-<16 hex>.bin. */
static bool hash_name(const char *name) {
  if (strlen(name) != 37 || name[16] != '-' || strcmp(name + 33, ".bin")) return false;
  for (int i = 0; i < 33; i++)
    if (i != 16 && !strchr("0123456789abcdef", name[i])) return false;
  return true;
}

/* The single entry of the cache folder, into path; false when there is
 * not exactly one. */
static bool the_entry(const cache_env *ce, char *path, size_t cap) {
  const char *names = listing(ce->cache);
  if (!*names || strchr(names, ' ')) return false;
  snprintf(path, cap, "%s/%s", ce->cache, names);
  return true;
}

TEST(cache_creates_a_0700_folder_of_0600_files_named_by_hashes) {
  cache_env ce;
  REQUIRE(cache_env_new(&ce));
  /* Two levels missing: both are made. */
  snprintf(ce.cache, sizeof ce.cache, "%s/deep/cache", ce.s.path);
  setenv("ALLOY_CACHE_DIR", ce.cache, 1);
  alloy_cache_stats st = compile_relu(&ce, NULL);
  CHECK_INT(st.misses, 1);
  struct stat sb;
  REQUIRE(stat(ce.cache, &sb) == 0);
  CHECK_INT(sb.st_mode & 0777, 0700);
  char entry[1200];
  REQUIRE(the_entry(&ce, entry, sizeof entry));
  CHECK(hash_name(strrchr(entry, '/') + 1));
  REQUIRE(stat(entry, &sb) == 0);
  CHECK_INT(sb.st_mode & 0777, 0600);
  st = compile_relu(&ce, NULL);
  CHECK_INT(st.disk_hits, 1);
  CHECK_INT(st.misses, 0);
  cache_env_free(&ce);
}

/* A version string is a plugin's to choose: "x/../../outside" once made
 * <cache>/newer_minor-x/../../outside-<hash>.bin, a file beside the cache
 * folder (given that a folder newer_minor-x exists, which the test plants). */
TEST(cache_never_puts_a_plugin_string_in_a_path) {
  cache_env ce;
  REQUIRE(cache_env_new(&ce));
  REQUIRE(mkdir(at(&ce.s, "cache/newer_minor-x"), 0700) == 0);
  row_override ov = {.version = "x/../../outside"};
  alloy_cache_stats st = compile_relu(&ce, &ov);
  CHECK_INT(st.misses, 1);
  CHECK(!strstr(listing(ce.s.path), "outside"));
  /* Only the planted folder and one hash-named entry. */
  const char *names = listing(ce.cache);
  char copy[4096];
  snprintf(copy, sizeof copy, "%s", names);
  int n = 0;
  for (char *save = NULL, *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save), n++)
    CHECK(!strcmp(w, "newer_minor-x") || hash_name(w));
  CHECK_INT(n, 2);
  CHECK_STR(listing(at(&ce.s, "cache/newer_minor-x")), "");
  /* Read back with the same hostile version: the file holds it as data. */
  st = compile_relu(&ce, &ov);
  CHECK_INT(st.disk_hits, 1);
  cache_env_free(&ce);
}

/* Links planted at every name the cache might write (the entry itself and
 * the temporary names an older Alloy derived from it and the process id)
 * point at a victim file: it must come out untouched, and an entry that is
 * a link is not read through. */
TEST(cache_follows_no_planted_link_when_writing_or_reading) {
  cache_env ce;
  REQUIRE(cache_env_new(&ce));
  compile_relu(&ce, NULL);
  char entry[1200], planted[1300];
  REQUIRE(the_entry(&ce, entry, sizeof entry));
  REQUIRE(put_text(at(&ce.s, "victim"), "victim's data\n"));
  /* The real entry moves outside; the cache folder gets a link to it. */
  REQUIRE(rename(entry, at(&ce.s, "moved.bin")) == 0);
  REQUIRE(symlink(at(&ce.s, "moved.bin"), entry) == 0);
  /* The temporary names of the process that compiles next (this one). */
  snprintf(planted, sizeof planted, "%s.%ld.tmp", entry, (long)getpid());
  REQUIRE(symlink(at(&ce.s, "victim"), planted) == 0);
  alloy_cache_stats st = compile_relu(&ce, NULL);
  CHECK_INT(st.disk_hits, 0); /* the link was not read through */
  CHECK_INT(st.misses, 1);
  char *v = get(at(&ce.s, "victim"), NULL);
  CHECK(v && !strcmp(v, "victim's data\n"));
  free(v);
  /* The link itself was replaced by a real entry, which reads back. */
  struct stat sb;
  CHECK(lstat(entry, &sb) == 0 && S_ISREG(sb.st_mode));
  st = compile_relu(&ce, NULL);
  CHECK_INT(st.disk_hits, 1);
  /* An entry that is a link to the victim: not read, not written through. */
  REQUIRE(unlink(entry) == 0);
  REQUIRE(symlink(at(&ce.s, "victim"), entry) == 0);
  compile_relu(&ce, NULL);
  v = get(at(&ce.s, "victim"), NULL);
  CHECK(v && !strcmp(v, "victim's data\n"));
  free(v);
  cache_env_free(&ce);
}

static int compile_relu_in_child(void *arg) {
  alloy_cache_stats st = compile_relu(arg, NULL);
  return st.misses == 1 && st.disk_hits == 0 ? 0 : 1;
}

TEST(cache_does_not_block_on_a_fifo_entry) {
  cache_env ce;
  REQUIRE(cache_env_new(&ce));
  compile_relu(&ce, NULL);
  char entry[1200];
  REQUIRE(the_entry(&ce, entry, sizeof entry));
  REQUIRE(unlink(entry) == 0);
  REQUIRE(mkfifo(entry, 0600) == 0);
  CHECK(child_passes_within(compile_relu_in_child, &ce, 10));
  cache_env_free(&ce);
}

TEST(cache_is_not_used_in_a_folder_others_can_write_or_own) {
  cache_env ce;
  REQUIRE(cache_env_new(&ce));
  compile_relu(&ce, NULL);
  char entry[1200];
  REQUIRE(the_entry(&ce, entry, sizeof entry));
  /* Writable by the group or by anyone: the entry in it is not trusted,
   * and nothing new is written. */
  mode_t modes[2] = {0770, 0777};
  for (int i = 0; i < 2; i++) {
    REQUIRE(chmod(ce.cache, modes[i]) == 0);
    REQUIRE(unlink(entry) == 0 || errno == ENOENT);
    alloy_cache_stats st = compile_relu(&ce, NULL);
    CHECK_INT(st.misses, 1);
    CHECK_STR(listing(ce.cache), "");
  }
  REQUIRE(chmod(ce.cache, 0700) == 0);
  compile_relu(&ce, NULL);
  REQUIRE(the_entry(&ce, entry, sizeof entry));
  REQUIRE(chmod(ce.cache, 0777) == 0);
  alloy_cache_stats st = compile_relu(&ce, NULL);
  CHECK_INT(st.disk_hits, 0);
  REQUIRE(chmod(ce.cache, 0700) == 0);
  /* Owned by someone else (only root can give a folder away). */
  if (geteuid() == 0 && chown(ce.cache, 65534, 65534) == 0) {
    st = compile_relu(&ce, NULL);
    CHECK_INT(st.disk_hits, 0);
    CHECK_INT(st.misses, 1);
    REQUIRE(chown(ce.cache, 0, 0) == 0);
  }
  /* The folder a link to a folder of this user's: refused too. */
  REQUIRE(rename(ce.cache, at(&ce.s, "real")) == 0);
  REQUIRE(symlink(at(&ce.s, "real"), ce.cache) == 0);
  st = compile_relu(&ce, NULL);
  CHECK_INT(st.disk_hits, 0);
  cache_env_free(&ce);
}

/* Replaces the first `from` in the file with `to` (same length). */
static bool edit_entry(const char *path, const char *from, const char *to) {
  size_t n;
  char *b = get(path, &n);
  char *hit = b ? memmem(b, n, from, strlen(from)) : NULL;
  bool ok = hit && strlen(from) == strlen(to);
  if (ok) {
    memcpy(hit, to, strlen(to));
    ok = put(path, b, n);
  }
  free(b);
  return ok;
}

/* Each field of the key is compared, not only hashed into the name: an
 * entry whose backend, version, device or graph text is not this one's,
 * under the name this one looks up, is a miss. */
TEST(cache_compares_every_field_of_an_entry) {
  cache_env ce;
  REQUIRE(cache_env_new(&ce));
  /* Devices other than those the entry was compiled for. */
  compile_relu(&ce, NULL);
  row_override other = {.devices = "an accelerator (gpu)"};
  alloy_cache_stats st = compile_relu(&ce, &other);
  CHECK_INT(st.disk_hits, 0);
  CHECK_INT(st.misses, 1);
  static const char *const edits[][3] = {
      {"device", "newer_minor cpu", "newer_minor gpu"},
      {"version", "\n1.1.0\n", "\n1.1.9\n"},
      {"backend", "\nnewer_minor\n", "\nnewer_minox\n"},
      {"graph text", "aten.relu.default", "aten.relu.defaulx"},
  };
  for (size_t i = 0; i < sizeof edits / sizeof *edits; i++) {
    char cmd[1300];
    snprintf(cmd, sizeof cmd, "rm -f '%s'/*", ce.cache);
    REQUIRE(system(cmd) == 0);
    compile_relu(&ce, NULL);
    char entry[1200];
    REQUIRE(the_entry(&ce, entry, sizeof entry));
    CHECK(edit_entry(entry, edits[i][1], edits[i][2]));
    st = compile_relu(&ce, NULL);
    if (st.disk_hits != 0)
      harness_fail(__FILE__, __LINE__, "an entry of another %s was read back", edits[i][0]);
  }
  cache_env_free(&ce);
}

/* Entries cut, padded and with lying lengths are misses, read without
 * crashing; one larger than the bound is not read at all. */
TEST(cache_reads_damaged_entries_as_misses) {
  cache_env ce;
  REQUIRE(cache_env_new(&ce));
  compile_relu(&ce, NULL);
  char entry[1200];
  REQUIRE(the_entry(&ce, entry, sizeof entry));
  size_t n;
  char *good = get(entry, &n);
  REQUIRE(good);
  for (size_t cut = 0; cut < n; cut += n / 40 + 1) {
    REQUIRE(put(entry, good, cut));
    alloy_cache_stats st = compile_relu(&ce, NULL);
    if (st.disk_hits) harness_fail(__FILE__, __LINE__, "an entry cut at %zu was read back", cut);
    REQUIRE(put(entry, good, n)); /* the compile rewrote it anyway */
  }
  static const char *const lies[] = {"exe 18446744073709551615\n", "exe 99999999999999999999\n",
                                     "text 1\n", "exe -1\n"};
  for (size_t i = 0; i < sizeof lies / sizeof *lies; i++) {
    char *b = malloc(n + 64);
    REQUIRE(b);
    char *exe = memmem(good, n, "exe ", 4), *text = memmem(good, n, "text ", 5);
    REQUIRE(exe && text);
    char *field = !strncmp(lies[i], "exe", 3) ? exe : text;
    char *nl = memchr(field, '\n', (size_t)(good + n - field));
    size_t head = (size_t)(field - good), ll = strlen(lies[i]), tail = (size_t)(good + n - nl - 1);
    memcpy(b, good, head);
    memcpy(b + head, lies[i], ll);
    memcpy(b + head + ll, nl + 1, tail);
    REQUIRE(put(entry, b, head + ll + tail));
    free(b);
    alloy_cache_stats st = compile_relu(&ce, NULL);
    CHECK_INT(st.disk_hits, 0);
  }
  /* Two GiB, sparse: over the bound, refused by its size. */
  int fd = open(entry, O_WRONLY | O_TRUNC);
  REQUIRE(fd >= 0);
  CHECK(write(fd, good, n) == (ssize_t)n);
  CHECK(ftruncate(fd, (off_t)2 << 30) == 0);
  close(fd);
  alloy_cache_stats st = compile_relu(&ce, NULL);
  CHECK_INT(st.disk_hits, 0);
  free(good);
  cache_env_free(&ce);
}

/* ---- the file helper ------------------------------------------------------ */

TEST(files_open_only_regular_files) {
  scratch s;
  REQUIRE(scratch_new(&s));
  REQUIRE(put_text(at(&s, "plain"), "12345"));
  REQUIRE(mkfifo(at(&s, "fifo"), 0600) == 0);
  REQUIRE(symlink(at(&s, "plain"), at(&s, "link")) == 0);
  REQUIRE(symlink(at(&s, "fifo"), at(&s, "link-to-fifo")) == 0);
  int fd = -1;
  uint64_t size = 0;
  CHECK_OK(alloy_file_open(at(&s, "plain"), 0, &fd, &size));
  CHECK_INT(size, 5);
  CHECK(fd >= 0 && !(fcntl(fd, F_GETFL) & O_NONBLOCK));
  if (fd >= 0) close(fd);
  CHECK_OK(alloy_file_open(at(&s, "link"), 0, &fd, NULL));
  if (fd >= 0) close(fd);
  CHECK(strstr(message_of(alloy_file_open(at(&s, "link"), ALLOY_FILE_NOFOLLOW, &fd, NULL)),
               "link: not a regular file (a symbolic link"));
  CHECK_INT(fd, -1);
  CHECK(strstr(message_of(alloy_file_open(at(&s, "fifo"), 0, &fd, NULL)),
               "fifo: not a regular file (a FIFO)"));
  CHECK(strstr(message_of(alloy_file_open(at(&s, "link-to-fifo"), 0, &fd, NULL)), "(a FIFO)"));
  CHECK(strstr(message_of(alloy_file_open(s.path, 0, &fd, NULL)), "(a directory)"));
  CHECK(strstr(message_of(alloy_file_open("/dev/null", 0, &fd, NULL)),
               "/dev/null: not a regular file (a character device)"));
  CHECK(strstr(message_of(alloy_file_open(at(&s, "absent"), 0, &fd, NULL)), "absent: cannot open"));
  char *data = NULL;
  size_t len = 0;
  CHECK_OK(alloy_file_read_at(AT_FDCWD, at(&s, "plain"), 0, 5, &data, &len));
  CHECK(data && len == 5 && !strcmp(data, "12345"));
  free(data);
  CHECK(strstr(message_of(alloy_file_read_at(AT_FDCWD, at(&s, "plain"), 0, 4, &data, &len)),
               "5 bytes are more than the 4 allowed"));
  CHECK(!data);
  void *map = NULL;
  size_t msize = 0;
  REQUIRE(put_text(at(&s, "empty"), ""));
  CHECK_OK(alloy_file_map(at(&s, "empty"), 0, &map, &msize));
  CHECK(!map && msize == 0);
  CHECK(*message_of(alloy_file_map(at(&s, "fifo"), 0, &map, &msize)));
  scratch_remove(&s);
}

/* ---- models, inputs and weights ------------------------------------------ */

/* Loading path in a child, which must come back (with an error) in time. */
static int load_refused(void *path) {
  alloy_model *m = NULL;
  alloy_error *e = alloy_model_load(path, &m);
  alloy_model_free(m);
  bool refused = e != NULL;
  alloy_error_free(e);
  return refused ? 0 : 1;
}
static int safetensors_refused(void *path) {
  alloy_safetensors *st = NULL;
  alloy_error *e = alloy_safetensors_open(path, &st);
  alloy_safetensors_close(st);
  bool refused = e != NULL;
  alloy_error_free(e);
  return refused ? 0 : 1;
}

TEST(model_inputs_and_weights_that_are_fifos_are_refused_without_blocking) {
  scratch s;
  REQUIRE(scratch_new(&s));
  REQUIRE(mkfifo(at(&s, "model.air"), 0600) == 0);
  REQUIRE(mkfifo(at(&s, "w.safetensors"), 0600) == 0);
  CHECK(child_passes_within(load_refused, (void *)at(&s, "model.air"), 10));
  CHECK(child_passes_within(safetensors_refused, (void *)at(&s, "w.safetensors"), 10));
  /* An .air whose weights line names the FIFO. */
  REQUIRE(put_text(at(&s, "w.air"), "weights \"w.safetensors\"\ninput %x: f32[4]\n"
                                    "%y = aten.relu.default(%x) : f32[4]\noutput %y\n"));
  bool returns = child_passes_within(load_refused, (void *)at(&s, "w.air"), 10);
  CHECK(returns);
  alloy_model *m = NULL;
  if (returns) /* (here, what would hang the suite) */
    CHECK(strstr(message_of(alloy_model_load(at(&s, "w.air"), &m)),
                 "w.safetensors: not a regular file (a FIFO)"));
  CHECK(strstr(message_of(alloy_model_load(s.path, &m)), "not a regular file (a directory)"));
  CHECK(strstr(message_of(alloy_model_load("/dev/zero", &m)), "(a character device)"));
  scratch_remove(&s);
}

/* Told by content: an empty file, text that is not .air, a binary file
 * and a ZIP without a local header are no models; the errors name the file
 * and quote none of it. */
TEST(model_format_is_told_by_content) {
  scratch s;
  REQUIRE(scratch_new(&s));
  static const struct {
    const char *name, *content, *want;
    size_t len; /* 0: strlen */
  } cases[] = {
      {"empty.air", "", "empty.air: not a model: empty file", 0},
      {"blank.air", "\n  \n# only a comment\n", "blank.air: not a model: no graph", 0},
      {"passwd.air", "root:x:0:0:SECRET-TOKEN:/root:/bin/sh\n",
       "passwd.air:1:1: not a model: neither a .pt2 archive (ZIP) nor .air text", 0},
      {"later.air", "# a comment first\n\n  hello SECRET-TOKEN\n",
       "later.air:3:3: not a model: neither", 0},
      {"binary.air", "input %x\0SECRET-TOKEN", "binary.air: not a model: a binary file", 21},
      {"empty-zip.pt2", "PK\5\6\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0",
       "empty-zip.pt2: not a model: a ZIP file that does not begin with a local file header", 22},
      {"no-output.air", "sym s in [1, 2]\ninput %x: f32[s]\n",
       "no-output.air: not a model: the graph has no output line", 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const char *path = at(&s, cases[i].name);
    REQUIRE(put(path, cases[i].content, cases[i].len ? cases[i].len : strlen(cases[i].content)));
    alloy_model *m = NULL;
    const char *msg = message_of(alloy_model_load(path, &m));
    CHECK(!m);
    if (!strstr(msg, cases[i].want) || strstr(msg, "SECRET"))
      harness_fail(__FILE__, __LINE__, "%s: got '%s', want '%s'", cases[i].name, msg, cases[i].want);
  }
  /* What .air may begin with is still read as .air. */
  static const char *const starts[] = {
      "# a header comment\n\ninput %x: f32[4]\n%y = aten.relu.default(%x) : f32[4]\noutput %y\n",
      "  sym s0 in [1, 8]\ninput %x: f32[s0]\n%y = aten.relu.default(%x) : f32[s0]\noutput %y\n",
  };
  for (size_t i = 0; i < sizeof starts / sizeof *starts; i++) {
    REQUIRE(put_text(at(&s, "ok.air"), starts[i]));
    alloy_model *m = NULL;
    CHECK_OK(alloy_model_load(at(&s, "ok.air"), &m));
    alloy_model_free(m);
  }
  scratch_remove(&s);
}

/* A weights file: f32[4] "w". */
static void write_weights(const char *path) {
  float w[4] = {1, 2, 3, 4};
  int64_t shape[1] = {4};
  alloy_st_tensor t = {.name = "w", .dtype = ALLOY_F32, .rank = 1, .shape = shape, .data = w,
                       .nbytes = sizeof w};
  CHECK_OK(alloy_safetensors_write(path, &t, 1));
}

static const char *load_with_weights(const scratch *s, const char *weights_line) {
  char text[1024];
  snprintf(text, sizeof text,
           "%s\ninput %%w: f32[4] parameter \"w\"\ninput %%x: f32[4]\n"
           "%%y = aten.add.Tensor(%%x, %%w) : f32[4]\noutput %%y\n",
           weights_line);
  if (!put_text(at(s, "sub/m.air"), text)) return "cannot write";
  alloy_model *m = NULL;
  alloy_error *e = alloy_model_load(at(s, "sub/m.air"), &m);
  alloy_model_free(m);
  return message_of(e);
}

TEST(model_weights_line_stays_in_the_air_folder) {
  scratch s;
  REQUIRE(scratch_new(&s));
  REQUIRE(mkdir(at(&s, "sub"), 0700) == 0 && mkdir(at(&s, "sub/deeper"), 0700) == 0);
  write_weights(at(&s, "sub/w.safetensors"));
  write_weights(at(&s, "sub/deeper/w.safetensors"));
  write_weights(at(&s, "outside.safetensors"));
  /* In the folder or below it: read, relative to the .air, not the cwd. */
  CHECK_STR(load_with_weights(&s, "weights \"w.safetensors\""), "");
  CHECK_STR(load_with_weights(&s, "weights \"deeper/w.safetensors\""), "");
  CHECK_STR(load_with_weights(&s, "weights \"./deeper/./w.safetensors\""), "");
  /* Absolute, or leaving the folder (even to come back), or empty. */
  char line[1200];
  snprintf(line, sizeof line, "weights \"%s\"", at(&s, "outside.safetensors"));
  CHECK(strstr(load_with_weights(&s, line), "m.air: the weights path is absolute"));
  CHECK(strstr(load_with_weights(&s, "weights \"../outside.safetensors\""), "leaves the folder"));
  CHECK(strstr(load_with_weights(&s, "weights \"deeper/../../outside.safetensors\""),
               "leaves the folder"));
  CHECK(strstr(load_with_weights(&s, "weights \"deeper/../w.safetensors\""), "leaves the folder"));
  CHECK(strstr(load_with_weights(&s, "weights \"..\""), "leaves the folder"));
  CHECK(strstr(load_with_weights(&s, "weights \"\""), "the weights path is empty"));
  /* A file that is not safetensors: named, never quoted. Its first 8
   * bytes read as a header length once were (a number that spells them). */
  REQUIRE(put_text(at(&s, "sub/secret.txt"), "SECRETS! SECRET-TOKEN-1234 {\"a\": 1}\n"));
  const char *msg = load_with_weights(&s, "weights \"secret.txt\"");
  CHECK(strstr(msg, "secret.txt: not a safetensors file (the weights of "));
  CHECK(!strstr(msg, "SECRET") && !strstr(msg, "header length"));
  scratch_remove(&s);
}

/* A converted model names its weights relative to itself, and a weights
 * file outside the .air's folder is refused before anything is written
 * (the loader would refuse the .air). */
TEST(model_save_air_names_weights_relative_to_the_air) {
  scratch s;
  REQUIRE(scratch_new(&s));
  REQUIRE(mkdir(at(&s, "out"), 0700) == 0 && mkdir(at(&s, "out/w"), 0700) == 0);
  write_weights(at(&s, "w0.safetensors"));
  REQUIRE(put_text(at(&s, "m.air"), "weights \"w0.safetensors\"\ninput %w: f32[4] parameter \"w\"\n"
                                    "input %x: f32[4]\n%y = aten.add.Tensor(%x, %w) : f32[4]\n"
                                    "output %y\n"));
  alloy_model *m = NULL;
  CHECK_OK(alloy_model_load(at(&s, "m.air"), &m));
  REQUIRE(m);
  CHECK_OK(alloy_model_save_air(m, at(&s, "out/a.air"), at(&s, "out/w/a.safetensors")));
  char *text = get(at(&s, "out/a.air"), NULL);
  CHECK(text && strstr(text, "weights \"w/a.safetensors\"\n"));
  free(text);
  alloy_model *back = NULL;
  CHECK_OK(alloy_model_load(at(&s, "out/a.air"), &back));
  alloy_model_free(back);
  CHECK(strstr(message_of(alloy_model_save_air(m, at(&s, "out/b.air"), at(&s, "b.safetensors"))),
               "the weights file must be in the folder of"));
  struct stat sb;
  CHECK(stat(at(&s, "b.safetensors"), &sb) != 0 && stat(at(&s, "out/b.air"), &sb) != 0);
  alloy_model_free(m);
  scratch_remove(&s);
}
