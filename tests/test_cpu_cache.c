/*
 * tests/test_cpu_cache.c: the cpu backend's compiled code in the compile
 * cache (executable_serialize / executable_deserialize in
 * plugins/cpu/cpu_backend.c, cpu_jit_load in cpu_jit.c).
 *
 * A graph compiled on cpu with $ALLOY_CACHE_DIR set writes its object
 * code; a second runtime reads it back (a disk hit, no miss), runs no LLVM
 * pass or code generation (the backend's debug log, ALLOY_LOG=0, says
 * "cache load" and never "jit compile") and computes the same bits. An
 * entry whose CPU is not this one is refused with ALLOY_ERR_VERSION and a
 * message naming the CPU and a feature that differs, and the runtime
 * compiles again; so are a truncated entry, one of other kernels and one
 * compiled at another opt_level. Needs the plugin (liballoy-cpu.so, built
 * where llvm-config is), opened from $ALLOY_TEST_BUILD/lib/alloy (else the
 * build folder of this program); the tests say that they skip without it.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloy/graph.h"
#include "alloy/runtime.h"
#include "cpuref.h"
#include "harness.h"
#include "sdk/src/host.h"

/* A linear layer, gelu (tanh form: exp and tanh from the prelude), a
 * softmax and a sum: products, fused loops and reductions, several
 * kernels of one module. */
static const char *const AIR = "input %x: f32[16, 32]\n"
                               "input %w: f32[24, 32]\n"
                               "input %b: f32[24]\n"
                               "%t = aten.permute.default(%w, [1, 0]) : f32[32, 24]\n"
                               "%y = aten.addmm.default(%b, %x, %t) : f32[16, 24]\n"
                               "%g = aten.gelu.default(%y, approximate=\"tanh\") : f32[16, 24]\n"
                               "%s = aten._softmax.default(%g, -1, false) : f32[16, 24]\n"
                               "%e = aten.exp.default(%s) : f32[16, 24]\n"
                               "%r = aten.sum.dim_IntList(%e, [0], false) : f32[24]\n"
                               "output %s, %r\n";

static alloy_graph *parse(const char *air) {
  alloy_graph *g = NULL;
  CHECK_OK(alloy_air_parse(air, strlen(air), "test.air", &g));
  return g;
}

static bool have_plugin(void) {
  char path[PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/liballoy-cpu.so", cpuref_plugin_dir());
  if (access(path, R_OK) == 0) return true;
  printf("  (skipped: no cpu plugin in %s: built where llvm-config is)\n", cpuref_plugin_dir());
  return false;
}

/* A runtime with the cpu plugin (tests/cpuref.h), or NULL: skipped. */
static alloy_runtime *open_cpu(int *cpu) {
  int ref;
  return cpuref_open(cpu, &ref);
}

enum { NX = 16 * 32, NW = 24 * 32, NB = 24, NS = 16 * 24, NR = 24 };

typedef struct round_result {
  alloy_cache_stats stats;
  float s[NS], r[NR];
  char *log; /* the backend's debug log of the compile and run (malloc'd) */
} round_result;

/* stderr into a temporary file while f runs, with ALLOY_LOG=0; the text
 * written, malloc'd. */
static int saved_stderr = -1;
static char log_path[PATH_MAX];
static char *saved_log; /* the caller's $ALLOY_LOG, restored after */
static void capture_begin(void) {
  fflush(stderr);
  free(saved_log);
  saved_log = getenv("ALLOY_LOG") ? strdup(getenv("ALLOY_LOG")) : NULL;
  snprintf(log_path, sizeof log_path, "%s/alloy-cpu-cache-log-%d.txt", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
           (int)getpid());
  int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  saved_stderr = dup(2);
  if (fd >= 0) dup2(fd, 2), close(fd);
  setenv("ALLOY_LOG", "0", 1);
}
static char *capture_end(void) {
  if (saved_log) setenv("ALLOY_LOG", saved_log, 1);
  else unsetenv("ALLOY_LOG");
  free(saved_log);
  saved_log = NULL;
  fflush(stderr);
  if (saved_stderr >= 0) dup2(saved_stderr, 2), close(saved_stderr);
  saved_stderr = -1;
  FILE *f = fopen(log_path, "r");
  char *text = calloc(1, 1 << 20);
  if (f && text) fread(text, 1, (1 << 20) - 1, f);
  if (f) fclose(f);
  unlink(log_path);
  return text;
}

/* A fresh runtime compiles the graph on cpu and runs it once. */
static bool run_round(const alloy_graph *g, round_result *out) {
  memset(out, 0, sizeof *out);
  int cpu = -1;
  capture_begin();
  alloy_runtime *rt = open_cpu(&cpu);
  alloy_program *p = NULL;
  alloy_error *e = rt ? alloy_program_compile(rt, cpu, g, &p) : NULL;
  static float x[NX], w[NW], b[NB];
  for (int i = 0; i < NX; i++) x[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
  for (int i = 0; i < NW; i++) w[i] = (float)((i * 53) % 89) / 178.0f - 0.25f;
  for (int i = 0; i < NB; i++) b[i] = (float)i / 48.0f - 0.25f;
  int64_t xs[2] = {16, 32}, ws[2] = {24, 32}, bs[1] = {24};
  alloy_host_tensor in[3] = {{ALLOY_HOST_TENSOR_STRUCT_SIZE, ALLOY_F32, 2, xs, x},
                             {ALLOY_HOST_TENSOR_STRUCT_SIZE, ALLOY_F32, 2, ws, w},
                             {ALLOY_HOST_TENSOR_STRUCT_SIZE, ALLOY_F32, 1, bs, b}};
  alloy_host_tensor o[2] = {{.struct_size = ALLOY_HOST_TENSOR_STRUCT_SIZE}, {.struct_size = ALLOY_HOST_TENSOR_STRUCT_SIZE}};
  alloy_error *re = p ? alloy_program_run(p, in, 3, o, 2) : NULL;
  if (p && !re) {
    memcpy(out->s, o[0].data, sizeof out->s);
    memcpy(out->r, o[1].data, sizeof out->r);
  }
  if (rt) alloy_runtime_cache_stats(rt, &out->stats);
  alloy_program_release(p);
  if (rt) alloy_runtime_close(rt);
  out->log = capture_end();
  if (e) harness_fail(__FILE__, __LINE__, "compile: %s", alloy_error_message(e)), alloy_error_free(e);
  if (re) harness_fail(__FILE__, __LINE__, "run: %s", alloy_error_message(re)), alloy_error_free(re);
  return rt && p && !e && !re;
}

static size_t count(const char *text, const char *what) {
  size_t n = 0;
  for (const char *p = text; p && (p = strstr(p, what)); p += strlen(what)) n++;
  return n;
}

/* The cache folder's one entry, read whole (malloc'd), and its name. */
static char *read_entry(const char *dir, char *name, size_t cap, size_t *len) {
  char cmd[PATH_MAX + 64];
  snprintf(cmd, sizeof cmd, "ls '%s' | grep '\\.bin$'", dir);
  FILE *ls = popen(cmd, "r");
  name[0] = 0;
  if (!ls || !fgets(name, (int)cap, ls)) name[0] = 0;
  if (ls) pclose(ls);
  name[strcspn(name, "\n")] = 0;
  if (!*name) return NULL;
  char path[PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) free(buf), buf = NULL;
  fclose(f);
  *len = (size_t)n;
  return buf;
}

/* The serialized executable inside a cache entry: after "\nexe <n>\n". */
static char *exe_field(char *buf, size_t len, size_t *n) {
  const char *key = "\nexe ";
  for (size_t i = 0; i + 5 < len; i++)
    if (!memcmp(buf + i, key, 5)) {
      char *end;
      unsigned long long v = strtoull(buf + i + 5, &end, 10);
      if (*end != '\n') return NULL;
      *n = (size_t)v;
      return end + 1;
    }
  return NULL;
}

TEST(cpu_cache_second_runtime_links_cached_object_code) {
  if (!have_plugin()) return;
  char dir[512], cmd[1200];
  snprintf(dir, sizeof dir, "%s/alloy-cpu-cache-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
  snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
  REQUIRE(system(cmd) == 0);
  char *saved_cache = getenv("ALLOY_CACHE_DIR") ? strdup(getenv("ALLOY_CACHE_DIR")) : NULL;
  setenv("ALLOY_CACHE_DIR", dir, 1);
  alloy_graph *g = parse(AIR);
  round_result *r = calloc(3, sizeof *r);
  if (!g || !r) {
    harness_fail(__FILE__, __LINE__, "no graph or no memory");
    goto out;
  }
  /* 0: compiled by LLVM, written to disk */
  if (run_round(g, &r[0])) {
    CHECK_INT(r[0].stats.misses, 1);
    CHECK_INT(r[0].stats.disk_hits, 0);
    CHECK_INT(count(r[0].log, "cpu: jit compile"), 1);
    CHECK_INT(count(r[0].log, "cpu: cache load"), 0);
  }
  char name[256];
  size_t len = 0;
  char *entry = read_entry(dir, name, sizeof name, &len);
  CHECK(entry != NULL);
  /* 1: a fresh runtime (another JIT) links the object: no compile */
  if (run_round(g, &r[1])) {
    CHECK_INT(r[1].stats.misses, 0);
    CHECK_INT(r[1].stats.disk_hits, 1);
    CHECK_INT(count(r[1].log, "cpu: jit compile"), 0);
    CHECK_INT(count(r[1].log, "cpu: cache load"), 1);
    CHECK(memcmp(r[0].s, r[1].s, sizeof r[0].s) == 0);
    CHECK(memcmp(r[0].r, r[1].r, sizeof r[0].r) == 0);
    if (count(r[1].log, "cpu: cache load") != 1) printf("  the log:\n%s", r[1].log);
  }
  /* 2: the entry says another CPU (its name's first letter changed): the
   * backend refuses it, the runtime compiles again and rewrites it */
  size_t n = 0;
  char *exe = entry ? exe_field(entry, len, &n) : NULL;
  CHECK(exe && n > 64);
  if (exe && n > 64) {
    exe[56] ^= 0x20; /* the head is 56 bytes, the CPU's name follows */
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(entry, 1, len, f) == len);
    if (f) fclose(f);
    if (run_round(g, &r[2])) {
      CHECK_INT(r[2].stats.misses, 1);
      CHECK_INT(r[2].stats.disk_hits, 0);
      CHECK_INT(count(r[2].log, "cpu: jit compile"), 1);
      CHECK(count(r[2].log, "compiled for another CPU") == 1);
      CHECK(memcmp(r[0].s, r[2].s, sizeof r[0].s) == 0);
    }
  }
  free(entry);
out:
  for (int i = 0; r && i < 3; i++) free(r[i].log);
  free(r);
  alloy_graph_free(g);
  if (saved_cache) setenv("ALLOY_CACHE_DIR", saved_cache, 1);
  else unsetenv("ALLOY_CACHE_DIR");
  free(saved_cache);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0);
}

/* ---- the plugin's entries, called directly -------------------------------------- */

typedef struct direct {
  void *dl;
  const alloy_plugin_api *api;
  alloy_backend *be;
} direct;

static bool direct_open(direct *d) {
  char path[PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/liballoy-cpu.so", cpuref_plugin_dir());
  d->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!d->dl) return harness_fail(__FILE__, __LINE__, "dlopen: %s", dlerror()), false;
  alloy_plugin_entry_fn init = (alloy_plugin_entry_fn)dlsym(d->dl, "alloy_plugin_init");
  d->api = init ? init(alloy_host_table()) : NULL;
  if (!d->api || !d->api->executable_serialize || !d->api->executable_deserialize) {
    harness_fail(__FILE__, __LINE__, "the cpu plugin has no executable_serialize/deserialize");
    return false;
  }
  alloy_error *e = d->api->backend_open(alloy_host_table(), &d->be);
  if (e) {
    printf("  (skipped: the cpu backend does not open: %s)\n", alloy_error_message(e));
    alloy_error_free(e);
    return false;
  }
  return true;
}

static void direct_close(direct *d) {
  if (d->be) d->api->backend_close(d->be);
  if (d->dl) dlclose(d->dl);
}

/* deserialize(bytes) fails with ALLOY_ERR_VERSION and a message holding want. */
static void refused(direct *d, const alloy_graph *g, const void *bytes, uint64_t size, const char *want) {
  alloy_executable *exe = NULL;
  alloy_error *e = d->api->executable_deserialize(d->be, g, bytes, size, &exe);
  CHECK(e != NULL);
  if (!e) {
    d->api->executable_release(d->be, exe);
    return;
  }
  CHECK_INT(alloy_error_code_of(e), ALLOY_ERR_VERSION);
  if (!strstr(alloy_error_message(e), want))
    harness_fail(__FILE__, __LINE__, "'%s' does not say '%s'", alloy_error_message(e), want);
  alloy_error_free(e);
}

TEST(cpu_cache_refuses_another_cpu_and_other_kernels) {
  if (!have_plugin()) return;
  direct a = {0}, b = {0};
  bool ok = direct_open(&a) && direct_open(&b);
  if (!ok) {
    direct_close(&a);
    direct_close(&b);
    return;
  }
  alloy_graph *g = parse(AIR);
  alloy_graph *other = parse("input %x: f32[16, 32]\n"
                             "%y = aten.relu.default(%x) : f32[16, 32]\n"
                             "output %y\n");
  REQUIRE(g && other);
  alloy_executable *exe = NULL;
  CHECK_OK(a.api->compile(a.be, g, NULL, &exe));
  REQUIRE(exe);
  void *bytes = NULL;
  uint64_t size = 0;
  alloy_compat_info info = {.struct_size = ALLOY_COMPAT_INFO_STRUCT_SIZE};
  CHECK_OK(a.api->executable_serialize(a.be, exe, &bytes, &size, &info));
  a.api->executable_release(a.be, exe);
  REQUIRE(bytes && size > 64);
  CHECK(info.plugin_version && !strcmp(info.plugin_version, "0.1.0"));
  CHECK(info.device_model && *info.device_model);
  unsigned char *c = malloc(size + 1);
  REQUIRE(c);
  /* another backend (JIT) links it: the bytes are self-contained */
  alloy_executable *back = NULL;
  CHECK_OK(b.api->executable_deserialize(b.be, g, bytes, size, &back));
  /* ... once: the same code twice in one JIT would collide */
  refused(&b, g, bytes, size, "loaded already");
  if (back) b.api->executable_release(b.be, back);
  /* and again once released (its symbols went with it) */
  back = NULL;
  CHECK_OK(b.api->executable_deserialize(b.be, g, bytes, size, &back));
  if (back) b.api->executable_release(b.be, back);
  /* another CPU's name */
  memcpy(c, bytes, size);
  c[56] ^= 0x20;
  refused(&b, g, c, size, "compiled for another CPU");
  /* the same CPU's name with one feature flipped (its first: "+x" -> "-x") */
  memcpy(c, bytes, size);
  c[size] = 0;
  uint32_t cpu_len;
  memcpy(&cpu_len, c + 36, 4);
  CHECK(c[56 + cpu_len] == '+' || c[56 + cpu_len] == '-');
  c[56 + cpu_len] = c[56 + cpu_len] == '+' ? '-' : '+';
  refused(&b, g, c, size, "compiled for another CPU");
  /* the message names the feature both ways: "(icelake-client, -avx), not
   * this one (icelake-client, +avx)" */
  char flipped[80], mine[80];
  size_t k = strcspn((const char *)c + 56 + cpu_len, ",");
  snprintf(flipped, sizeof flipped, ", %.*s)", (int)(k < 64 ? k : 64), (const char *)c + 56 + cpu_len);
  snprintf(mine, sizeof mine, ", %.*s)", (int)(k < 64 ? k : 64), (const char *)bytes + 56 + cpu_len);
  refused(&b, g, c, size, flipped);
  refused(&b, g, c, size, mine);
  /* truncated, or no entry of this backend */
  refused(&b, g, bytes, size - 1, "not a cached executable");
  refused(&b, g, "alloycu1", 8, "not a cached executable");
  /* another graph: its plan's code is other */
  refused(&b, other, bytes, size, "other kernels");
  /* another opt_level */
  CHECK_OK(b.api->backend_set_option(b.be, "opt_level", "1"));
  refused(&b, g, bytes, size, "opt_level 3");
  free(c);
  free(bytes);
  alloy_graph_free(g);
  alloy_graph_free(other);
  direct_close(&a);
  direct_close(&b);
}
