/*
 * tests/test_loader.c: the plugin loader (alloy/runtime.h) against the
 * purpose-built plugins of tests/plugins/, one situation per plugin: a newer
 * and an older minor, another major, no entry symbol, a NULL required entry,
 * a short table, a plugin that refuses at init, duplicate names (two files,
 * one file in two places, names differing in case), and a plugin whose
 * entries fail on purpose.
 *
 * Each test builds its own world: it copies the built .so files (from
 * $ALLOY_TEST_PLUGIN_DIR, else <build>/tests/plugins, where <build> is
 * $ALLOY_TEST_BUILD, else the folder this program was built into, else
 * "build") into fresh folders made with mkdtemp, opens a
 * runtime that searches only those (no_default_paths), checks the rows of
 * alloy_runtime_backend_info, and removes the folders. Refusal checks look
 * for what a person needs in the status line (both versions, both paths,
 * the entry's name), not for exact wording, which is the loader's to choose.
 * Run under valgrind they also show that failures leak nothing.
 *
 * ABI compatibility: abi_1_0 and abi_1_1 present exactly the plugin tables
 * of those minors, with the slots of later entries filled by entries that
 * abort; each must load and run relu on this host, which reads nothing past
 * struct_size. Their device_info, driven directly through the plugin ABI,
 * must write nothing past the fields of its minor, whatever struct_size the
 * host passes.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloy/graph.h"
#include "alloy/runtime.h"
#include "harness.h"
#include "sdk/src/host.h"

/* ---- where the plugins are, scratch folders ---------------------------- */

/* $ALLOY_TEST_BUILD; else the build folder this test program was built in
 * (<BUILD>/tests/unit), so that `make BUILD=x test` tests x's plugins and
 * not a stale build/; else "build". */
static const char *build_dir(void) {
  static char dir[PATH_MAX];
  const char *b = getenv("ALLOY_TEST_BUILD");
  if (b && *b) return b;
  if (!dir[0]) {
    char exe[PATH_MAX], probe[PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash;
    snprintf(dir, sizeof dir, "build");
    if (n > 0) {
      exe[n] = '\0';
      for (int up = 0; up < 2 && (slash = strrchr(exe, '/')); up++) *slash = '\0';
      snprintf(probe, sizeof probe, "%s/tests/plugins", exe);
      if (access(probe, R_OK) == 0) snprintf(dir, sizeof dir, "%s", exe);
    }
  }
  return dir;
}

static const char *test_plugin_dir(void) {
  static char dir[PATH_MAX];
  const char *env = getenv("ALLOY_TEST_PLUGIN_DIR");
  if (env && *env) return env;
  snprintf(dir, sizeof dir, "%s/tests/plugins", build_dir());
  return dir;
}

typedef struct scratch {
  char path[PATH_MAX];
} scratch;

/* A fresh empty folder, by its real path: the loader may canonicalize the
 * paths it reports, and a test comparing paths must not care. */
static bool scratch_new(scratch *s) {
  const char *tmp = getenv("TMPDIR");
  char tmpl[PATH_MAX];
  snprintf(tmpl, sizeof tmpl, "%s/alloy-loader-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(tmpl)) {
    harness_fail(__FILE__, __LINE__, "mkdtemp(%s): %s", tmpl, strerror(errno));
    s->path[0] = '\0';
    return false;
  }
  if (!realpath(tmpl, s->path)) snprintf(s->path, sizeof s->path, "%s", tmpl);
  return true;
}

static void scratch_remove(scratch *s) {
  if (!s->path[0]) return;
  DIR *d = opendir(s->path);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      char p[PATH_MAX + 256];
      snprintf(p, sizeof p, "%s/%s", s->path, e->d_name);
      unlink(p);
    }
    closedir(d);
  }
  if (rmdir(s->path) != 0)
    harness_fail(__FILE__, __LINE__, "rmdir(%s): %s", s->path, strerror(errno));
  s->path[0] = '\0';
}

static bool copy_file(const char *src, const char *dst) {
  FILE *in = fopen(src, "rb");
  if (!in) {
    harness_fail(__FILE__, __LINE__, "cannot read %s (%s): build the test "
                 "plugins first (make), or set ALLOY_TEST_BUILD / "
                 "ALLOY_TEST_PLUGIN_DIR", src, strerror(errno));
    return false;
  }
  FILE *out = fopen(dst, "wb");
  bool ok = out != NULL;
  char buf[65536];
  size_t n;
  while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0)
    ok = fwrite(buf, 1, n, out) == n;
  ok = ok && !ferror(in);
  fclose(in);
  if (out && fclose(out) != 0) ok = false;
  if (!ok) harness_fail(__FILE__, __LINE__, "cannot copy %s to %s", src, dst);
  return ok;
}

/* Copies test plugin `name` into dir as liballoy-<as>.so; *path (optional)
 * gets the copy's path. */
static bool add_plugin_as(const scratch *dir, const char *name, const char *as,
                          char *path, size_t cap) {
  char src[PATH_MAX + 64], dst[PATH_MAX + 64];
  snprintf(src, sizeof src, "%s/liballoy-%s.so", test_plugin_dir(), name);
  snprintf(dst, sizeof dst, "%s/liballoy-%s.so", dir->path, as);
  if (path) snprintf(path, cap, "%s", dst);
  return copy_file(src, dst);
}

static bool add_plugin(const scratch *dir, const char *name) {
  return add_plugin_as(dir, name, name, NULL, 0);
}

static bool write_file(const scratch *dir, const char *name, const char *text) {
  char p[PATH_MAX + 64];
  snprintf(p, sizeof p, "%s/%s", dir->path, name);
  FILE *f = fopen(p, "w");
  if (!f) {
    harness_fail(__FILE__, __LINE__, "cannot write %s", p);
    return false;
  }
  fputs(text, f);
  fclose(f);
  return true;
}

/* ---- runtimes and their rows ---------------------------------------------
 */

/* Opens a runtime that searches exactly the given folders, in order. */
static alloy_runtime *open_dirs(const scratch *const *dirs, int n) {
  const char *paths[8];
  for (int i = 0; i < n && i < 8; i++) paths[i] = dirs[i]->path;
  alloy_runtime_options opt = {
      .struct_size = ALLOY_RUNTIME_OPTIONS_STRUCT_SIZE,
      .plugin_dirs = paths,
      .num_plugin_dirs = n,
      .no_default_paths = true,
  };
  alloy_runtime *rt = NULL;
  CHECK_OK(alloy_runtime_open(&opt, &rt));
  return rt;
}

static alloy_runtime *open_dir(const scratch *dir) {
  const scratch *dirs[1] = {dir};
  return open_dirs(dirs, 1);
}

/* Row i; an index out of range gives an all-zero row without asking the
 * runtime, so that a test that did not find a row reports, not crashes. */
static alloy_backend_info row(const alloy_runtime *rt, int i) {
  alloy_backend_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = ALLOY_BACKEND_INFO_STRUCT_SIZE;
  if (i >= 0 && i < alloy_runtime_num_backends(rt))
    alloy_runtime_backend_info(rt, i, &info);
  return info;
}

/* A failure report that shows every row: what a person debugging the
 * loader wants to see first. */
static void dump_rows(const alloy_runtime *rt) {
  int n = alloy_runtime_num_backends(rt);
  printf("    %d backends:\n", n);
  for (int i = 0; i < n; i++) {
    alloy_backend_info r = row(rt, i);
    printf("    [%d] %s abi %u.%u devices %d ok %d path %s status \"%s\"\n", i,
           r.name ? r.name : "(null)", (unsigned)r.abi_major,
           (unsigned)r.abi_minor, (int)r.num_devices, (int)r.ok,
           r.path ? r.path : "(null)", r.status ? r.status : "(null)");
  }
}

/* The index of the row whose path is `path`, or -1. */
static int row_by_path(const alloy_runtime *rt, const char *path) {
  for (int i = 0; i < alloy_runtime_num_backends(rt); i++) {
    alloy_backend_info r = row(rt, i);
    if (r.path && strcmp(r.path, path) == 0) return i;
  }
  return -1;
}

/* The index of the first row called name (exactly), or -1. */
static int row_by_name(const alloy_runtime *rt, const char *name) {
  for (int i = 0; i < alloy_runtime_num_backends(rt); i++) {
    alloy_backend_info r = row(rt, i);
    if (r.name && strcmp(r.name, name) == 0) return i;
  }
  return -1;
}

static bool contains(const char *hay, const char *needle) {
  return hay && needle && strstr(hay, needle) != NULL;
}

/* Whether text holds n as a whole number (not as part of "12" or "1.5e10"'s
 * digits run): how a test sees "names version 2" without fixing wording. */
static bool has_number(const char *text, unsigned n) {
  if (!text) return false;
  for (const char *p = text; *p;) {
    if (*p >= '0' && *p <= '9') {
      unsigned long v = 0;
      while (*p >= '0' && *p <= '9') v = v * 10 + (unsigned long)(*p++ - '0');
      if (v == n) return true;
    } else {
      p++;
    }
  }
  return false;
}

#define ROW_CHECK(rt, cond, ...)                                    \
  do {                                                              \
    if (!(cond)) {                                                  \
      harness_fail(__FILE__, __LINE__, __VA_ARGS__);                \
      dump_rows(rt);                                                \
    }                                                               \
  } while (0)

/* The row at the path of test plugin file `as` in dir must be refused with
 * a status holding each of the needles. Returns the row's index. */
static int check_refused(const alloy_runtime *rt, const scratch *dir,
                         const char *as, const char *const *needles, int n,
                         int line) {
  char path[PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/liballoy-%s.so", dir->path, as);
  int i = row_by_path(rt, path);
  if (i < 0) {
    harness_fail(__FILE__, line, "no row for %s", path);
    dump_rows(rt);
    return -1;
  }
  alloy_backend_info r = row(rt, i);
  bool good = !r.ok && r.status && strncmp(r.status, "refused", 7) == 0;
  for (int k = 0; k < n; k++) good = good && contains(r.status, needles[k]);
  if (!good) {
    harness_fail(__FILE__, line, "%s: expected ok 0 and a status \"refused: "
                 "...\" naming the reason; got ok %d, status \"%s\"", as,
                 (int)r.ok, r.status ? r.status : "(null)");
    for (int k = 0; k < n; k++)
      if (!contains(r.status, needles[k]))
        printf("    the status lacks \"%s\"\n", needles[k]);
  }
  return i;
}
#define CHECK_REFUSED(rt, dir, as, ...)                                      \
  check_refused((rt), (dir), (as), (const char *const[]){__VA_ARGS__},       \
                (int)(sizeof((const char *const[]){__VA_ARGS__}) /           \
                      sizeof(const char *)),                                 \
                __LINE__)

/* The row called name must be usable, with its plugin's one device. */
static int check_usable(const alloy_runtime *rt, const char *name, int line) {
  int i = row_by_name(rt, name);
  if (i < 0) {
    harness_fail(__FILE__, line, "no row called %s", name);
    dump_rows(rt);
    return -1;
  }
  alloy_backend_info r = row(rt, i);
  if (!r.ok || !r.status || strcmp(r.status, "ok") != 0 || r.num_devices != 1) {
    harness_fail(__FILE__, line, "%s: expected ok 1, status \"ok\", 1 device; "
                 "got ok %d, status \"%s\", %d devices", name, (int)r.ok,
                 r.status ? r.status : "(null)", (int)r.num_devices);
  }
  if (alloy_runtime_find_backend(rt, name) != i)
    harness_fail(__FILE__, line, "find_backend(%s) == %d, its row is %d", name,
                 alloy_runtime_find_backend(rt, name), i);
  return i;
}
#define CHECK_USABLE(rt, name) check_usable((rt), (name), __LINE__)

/* The reference backend is always there and always last, whatever was
 * found and whatever ALLOY_BACKENDS says. */
static void check_ref_last(const alloy_runtime *rt, int line) {
  int n = alloy_runtime_num_backends(rt);
  alloy_backend_info r = row(rt, n - 1);
  if (n < 1 || !r.name || strcmp(r.name, "ref") != 0 || !r.ok) {
    harness_fail(__FILE__, line, "the last row must be \"ref\", usable");
    dump_rows(rt);
    return;
  }
  int usable_refs = 0;
  for (int i = 0; i < n; i++) {
    alloy_backend_info o = row(rt, i);
    if (o.ok && o.name && strcasecmp(o.name, "ref") == 0) usable_refs++;
  }
  if (usable_refs != 1) {
    harness_fail(__FILE__, line, "%d usable rows called ref, expected 1",
                 usable_refs);
    dump_rows(rt);
  }
  if (alloy_runtime_find_backend(rt, "ref") != n - 1)
    harness_fail(__FILE__, line, "find_backend(ref) == %d, expected %d",
                 alloy_runtime_find_backend(rt, "ref"), n - 1);
}
#define CHECK_REF_LAST(rt) check_ref_last((rt), __LINE__)

/* ---- running relu --------------------------------------------------------
 */

/* x: f32[size]; y = aten.relu.default(x); outputs y. size is a dim of
 * g's symbol table, or a constant. */
static alloy_graph *relu_graph_of(alloy_graph *g, alloy_dim size) {
  alloy_dim shape[1] = {size};
  alloy_value_type vt = {ALLOY_VALUE_TENSOR, ALLOY_F32, 1, shape, NULL,
                         {ALLOY_DEVICE_CPU, -1}, {NULL, 0}};
  alloy_value *x = NULL;
  alloy_node *n = NULL;
  CHECK_OK(alloy_graph_add_input(g, "x", &vt, &x));
  alloy_arg args[1] = {alloy_arg_value(x)};
  CHECK_OK(alloy_graph_add_node(g, alloy_op_find("aten.relu.default"), args, 1,
                                NULL, NULL, 0, "y", &n));
  if (n) {
    alloy_value *y = alloy_node_output(n, 0);
    CHECK_OK(alloy_graph_set_outputs(g, &y, 1));
  }
  return g;
}

/* relu over f32[4]. */
static alloy_graph *relu_graph(void) {
  return relu_graph_of(alloy_graph_new(), alloy_dim_const(4));
}

typedef enum { AT_NONE, AT_COMPILE, AT_RUN } relu_stage;

/* Compiles relu on backend `name` and runs it `runs` times, checking the
 * result of each run. Returns the first error (the caller owns it) and
 * where it came from; NULL when everything worked. */
static alloy_error *run_relu(alloy_runtime *rt, const char *name, int runs,
                             relu_stage *stage) {
  *stage = AT_NONE;
  int b = alloy_runtime_find_backend(rt, name);
  if (b < 0) {
    harness_fail(__FILE__, __LINE__, "no usable backend %s", name);
    dump_rows(rt);
    return NULL;
  }
  alloy_graph *g = relu_graph();
  alloy_program *p = NULL;
  alloy_error *err = alloy_program_compile(rt, b, g, &p);
  /* The program keeps its own copy: freeing the graph now also checks that
   * the host does not read the caller's graph after compile returns. */
  alloy_graph_free(g);
  if (err) {
    *stage = AT_COMPILE;
    return err;
  }
  for (int k = 0; k < runs && !err; k++) {
    float x[4] = {-1.5f, 2.0f, -0.0f, 4.25f};
    int64_t sizes[1] = {4};
    alloy_host_tensor in = {.struct_size = ALLOY_HOST_TENSOR_STRUCT_SIZE,
                            .dtype = ALLOY_F32, .rank = 1, .sizes = sizes,
                            .data = x};
    alloy_host_tensor out;
    memset(&out, 0, sizeof out);
    out.struct_size = ALLOY_HOST_TENSOR_STRUCT_SIZE;
    err = alloy_program_run(p, &in, 1, &out, 1);
    if (err) {
      *stage = AT_RUN;
      break;
    }
    CHECK_INT(out.dtype, ALLOY_F32);
    CHECK_INT(out.rank, 1);
    if (out.rank == 1 && out.sizes && out.data && out.sizes[0] == 4) {
      const float *y = out.data;
      const float want[4] = {0.0f, 2.0f, 0.0f, 4.25f};
      for (int i = 0; i < 4; i++)
        if (y[i] != want[i])
          harness_fail(__FILE__, __LINE__, "%s: relu output %d is %g, want %g",
                       name, i, (double)y[i], (double)want[i]);
    } else {
      harness_fail(__FILE__, __LINE__, "%s: relu output is not f32[4]", name);
    }
  }
  alloy_program_release(p);
  return err;
}

/* relu on `name` works, twice over one program and again on a second
 * program of the same graph (where a host with a compile cache would use
 * the optional entries). */
static void check_runs_relu(alloy_runtime *rt, const char *name, int line) {
  for (int compile = 0; compile < 2; compile++) {
    relu_stage stage;
    alloy_error *err = run_relu(rt, name, 2, &stage);
    if (err) {
      harness_fail(__FILE__, line, "relu on %s failed at %s: %s", name,
                   stage == AT_COMPILE ? "compile" : "run",
                   alloy_error_message(err));
      alloy_error_free(err);
    }
  }
}
#define CHECK_RUNS_RELU(rt, name) check_runs_relu((rt), (name), __LINE__)

/* Every test starts from the same environment whatever the shell had. */
static void clean_env(void) {
  unsetenv("ALLOY_BACKENDS");
  unsetenv("ALLOY_TEST_FAIL");
}

/* ---- tests ----------------------------------------------------------------
 */

TEST(loader_ref_alone) {
  clean_env();
  scratch d;
  if (!scratch_new(&d)) return;
  alloy_runtime *rt = open_dir(&d);
  if (rt) {
    CHECK_INT(alloy_runtime_num_backends(rt), 1);
    CHECK_REF_LAST(rt);
    alloy_backend_info r = row(rt, 0);
    CHECK_STR(r.path, "(built in)");
    CHECK_STR(r.status, "ok");
    CHECK_INT(r.abi_major, ALLOY_ABI_MAJOR);
    CHECK(r.num_devices >= 1);
    /* A fresh checkout runs with no plugin found at all. */
    CHECK_RUNS_RELU(rt, "ref");
    CHECK_INT(alloy_runtime_find_backend(rt, "nosuch"), -1);
  }
  alloy_runtime_close(rt);
  scratch_remove(&d);
}

TEST(loader_newer_minor_loads_extras_ignored) {
  clean_env();
  scratch d;
  if (!scratch_new(&d)) return;
  if (add_plugin(&d, "newer_minor")) {
    alloy_runtime *rt = open_dir(&d);
    if (rt) {
      int i = CHECK_USABLE(rt, "newer_minor");
      alloy_backend_info r = row(rt, i < 0 ? 0 : i);
      CHECK_INT(r.abi_major, ALLOY_ABI_MAJOR);
      CHECK_INT(r.abi_minor, ALLOY_ABI_MINOR + 1);
      CHECK_STR(r.version, "1.1.0");
      CHECK_STR(r.vendor, "Alloy tests");
      /* The appended entries abort when called: this crashes if the host
       * reaches past what it knows. */
      CHECK_RUNS_RELU(rt, "newer_minor");
      CHECK_REF_LAST(rt);
    }
    alloy_runtime_close(rt);
  }
  scratch_remove(&d);
}

TEST(loader_older_minor_optional_entries_never_called) {
  clean_env();
  scratch d;
  if (!scratch_new(&d)) return;
  if (add_plugin(&d, "older_minor")) {
    alloy_runtime *rt = open_dir(&d);
    if (rt) {
      CHECK_USABLE(rt, "older_minor");
      /* serialize/deserialize lie beyond struct_size and abort if called:
       * two compiles of one graph give a cache every chance to try. */
      CHECK_RUNS_RELU(rt, "older_minor");
      CHECK_REF_LAST(rt);
    }
    alloy_runtime_close(rt);
  }
  scratch_remove(&d);
}

/* ---- ABI compatibility: plugins of older minors ------------------------ */

/* relu on backend `name` in a mixture with ref: the host's cross-backend
 * paths (events, staging buffers) meet the plugin's table too. Moving
 * values and launching are free here, so that priority alone places relu
 * on `name`, the first of the list. */
static void check_mixture_runs_relu(alloy_runtime *rt, const char *name, int line) {
  int backends[2] = {alloy_runtime_find_backend(rt, name), alloy_runtime_find_backend(rt, "ref")};
  if (backends[0] < 0 || backends[1] < 0) {
    harness_fail(__FILE__, line, "no usable %s and ref", name);
    return;
  }
  alloy_graph *g = relu_graph();
  alloy_mixture *m = NULL;
  alloy_program_options opt = {.struct_size = ALLOY_PROGRAM_OPTIONS_STRUCT_SIZE,
                               .partition_launch_s = -1, .link_bytes_per_s = -1};
  alloy_error *err = alloy_mixture_compile(rt, backends, 2, g, &opt, &m);
  alloy_graph_free(g);
  float x[4] = {-1.5f, 2.0f, -0.0f, 4.25f};
  int64_t sizes[1] = {4};
  alloy_host_tensor in = {.struct_size = ALLOY_HOST_TENSOR_STRUCT_SIZE, .dtype = ALLOY_F32,
                          .rank = 1, .sizes = sizes, .data = x};
  alloy_host_tensor out = {.struct_size = ALLOY_HOST_TENSOR_STRUCT_SIZE};
  if (!err) err = alloy_mixture_run(m, &in, 1, &out, 1);
  if (err) {
    harness_fail(__FILE__, line, "relu on %s in a mixture: %s", name, alloy_error_message(err));
    alloy_error_free(err);
  } else if (out.rank != 1 || !out.data || out.sizes[0] != 4 ||
             ((const float *)out.data)[1] != 2.0f || ((const float *)out.data)[0] != 0.0f) {
    harness_fail(__FILE__, line, "relu on %s in a mixture: wrong output", name);
  } else if (alloy_mixture_num_partitions(m) >= 1) {
    alloy_partition_info info = {.struct_size = ALLOY_PARTITION_INFO_STRUCT_SIZE};
    alloy_mixture_partition_info(m, 0, &info);
    if (!info.backend || strcmp(info.backend, name) != 0)
      harness_fail(__FILE__, line, "relu went to %s, not %s", info.backend ? info.backend : "?",
                   name);
  }
  alloy_mixture_release(m);
}
#define CHECK_MIXTURE_RUNS_RELU(rt, name) check_mixture_runs_relu((rt), (name), __LINE__)

/* A plugin of minor `minor`: loads, reports its own version, runs relu as
 * a program and in a mixture, and takes no backend option (its table ends
 * before backend_set_option, whose slot aborts). */
static void check_older_minor_plugin(const char *name, unsigned minor, const char *version) {
  clean_env();
  scratch d;
  if (!scratch_new(&d)) return;
  if (add_plugin(&d, name)) {
    alloy_runtime *rt = open_dir(&d);
    if (rt) {
      int i = CHECK_USABLE(rt, name);
      alloy_backend_info r = row(rt, i < 0 ? 0 : i);
      CHECK_INT(r.abi_major, 1);
      CHECK_INT(r.abi_minor, minor);
      CHECK_STR(r.version, version);
      CHECK_RUNS_RELU(rt, name);
      CHECK_MIXTURE_RUNS_RELU(rt, name);
      alloy_error *err = alloy_runtime_set_backend_option(rt, i, "arch", "x");
      if (!err)
        harness_fail(__FILE__, __LINE__, "%s (ABI 1.%u) took a backend option", name, minor);
      alloy_error_free(err);
      CHECK_REF_LAST(rt);
    }
    alloy_runtime_close(rt);
  }
  scratch_remove(&d);
}

TEST(loader_abi_1_1_plugin_loads_and_runs) { check_older_minor_plugin("abi_1_1", 1, "1.1.0"); }

/* A 1.0 table ends before capabilities, whose slot in abi_1_0 claims
 * ALLOY_CAP_SYMBOLIC_SHAPES: the host must not believe it, and compiles a
 * symbolic graph once per size, as for any plugin without the capability. */
TEST(loader_abi_1_0_plugin_loads_and_runs) {
  check_older_minor_plugin("abi_1_0", 0, "1.0.0");
  clean_env();
  scratch d;
  if (!scratch_new(&d)) return;
  if (add_plugin(&d, "abi_1_0")) {
    alloy_runtime *rt = open_dir(&d);
    int b = rt ? alloy_runtime_find_backend(rt, "abi_1_0") : -1;
    if (b >= 0) {
      alloy_graph *g = alloy_graph_new();
      alloy_dim s0 = alloy_dim_const(1);
      CHECK_OK(alloy_sym_new(alloy_graph_symtab(g), "s0", 1, 16, &s0));
      g = relu_graph_of(g, s0);
      alloy_program *p = NULL;
      CHECK_OK(alloy_program_compile(rt, b, g, &p));
      alloy_graph_free(g);
      for (int64_t n = 3; p && n <= 5; n += 2) {
        float x[5] = {-1, 2, -3, 4, -5};
        int64_t sizes[1] = {n};
        alloy_host_tensor in = {ALLOY_HOST_TENSOR_STRUCT_SIZE, ALLOY_F32, 1, sizes, x};
        alloy_host_tensor out = {.struct_size = ALLOY_HOST_TENSOR_STRUCT_SIZE};
        CHECK_OK(alloy_program_run(p, &in, 1, &out, 1));
        CHECK(out.data && out.sizes && out.sizes[0] == n);
        for (int64_t k = 0; out.data && k < n; k++)
          CHECK(((const float *)out.data)[k] == (x[k] > 0 ? x[k] : 0));
      }
      if (p) CHECK_INT(alloy_program_num_specializations(p), 2);
      alloy_program_release(p);
    }
    alloy_runtime_close(rt);
  }
  scratch_remove(&d);
}

/* Drives test plugin `name`'s device_info through the plugin ABI with the
 * host setting struct_size to `size`, every other byte of the struct a
 * canary, and returns the struct as the plugin left it, with copies of its
 * name and arch ("" when left unset: the strings are the plugin's, gone
 * once it is unloaded). */
typedef struct filled_info {
  alloy_device_info info;
  char name[64], arch[64];
} filled_info;

static bool is_canary(const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t k = 0; k < n; k++)
    if (b[k] != 0xa5) return false;
  return true;
}

static bool device_info_as_filled(const char *name, size_t size, filled_info *out) {
  alloy_device_info *info = &out->info;
  out->name[0] = out->arch[0] = '\0';
  char path[PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/liballoy-%s.so", test_plugin_dir(), name);
  void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    harness_fail(__FILE__, __LINE__, "dlopen %s: %s", path, dlerror());
    return false;
  }
  const alloy_host_api *host = alloy_host_table();
  alloy_plugin_entry_fn init = (alloy_plugin_entry_fn)dlsym(dl, ALLOY_PLUGIN_ENTRY);
  const alloy_plugin_api *api = init ? init(host) : NULL;
  alloy_backend *be = NULL;
  bool ok = api != NULL;
  if (ok) CHECK_OK(api->backend_open(host, &be));
  ok = ok && be;
  if (ok) {
    memset(info, 0xa5, sizeof *info);
    info->struct_size = size;
    alloy_error *err = api->device_info(be, 0, info);
    if (err) {
      harness_fail(__FILE__, __LINE__, "%s: device_info: %s", name, alloy_error_message(err));
      alloy_error_free(err);
      ok = false;
    }
    if (ok && !is_canary(&info->name, sizeof info->name) && info->name)
      snprintf(out->name, sizeof out->name, "%s", info->name);
    if (ok && !is_canary(&info->arch, sizeof info->arch) && info->arch)
      snprintf(out->arch, sizeof out->arch, "%s", info->arch);
    api->backend_close(be);
  }
  if (!api) harness_fail(__FILE__, __LINE__, "%s refused to load", name);
  dlclose(dl);
  return ok;
}

/* The bytes of info from `from` on are all canary. */
static void check_untouched_from(const char *name, size_t size, const alloy_device_info *info,
                                 size_t from, int line) {
  const unsigned char *b = (const unsigned char *)info;
  for (size_t k = from; k < sizeof *info; k++)
    if (b[k] != 0xa5) {
      harness_fail(__FILE__, line, "%s: with struct_size %zu, device_info wrote byte %zu (its "
                   "fields end at %zu)", name, size, k, from);
      return;
    }
}

/* The plugin fills what struct_size allows and what its minor knows: a 1.1
 * (or 1.0) plugin given a 1.2 host's struct leaves the 1.2 fields as the
 * host set them, and given a shorter struct writes nothing past it. */
TEST(loader_older_minor_device_info_writes_only_its_fields) {
  const size_t end_1_1 = ALLOY_STRUCT_SIZE(alloy_device_info, memory_bytes);
  const size_t end_name = ALLOY_STRUCT_SIZE(alloy_device_info, name);
  static const char *const old[] = {"abi_1_0", "abi_1_1"};
  for (int p = 0; p < 2; p++) {
    const size_t sizes[] = {ALLOY_DEVICE_INFO_STRUCT_SIZE, end_1_1, end_name};
    for (int k = 0; k < 3; k++) {
      filled_info f;
      if (!device_info_as_filled(old[p], sizes[k], &f)) continue;
      CHECK_INT(f.info.struct_size, sizes[k]);
      check_untouched_from(old[p], sizes[k], &f.info, sizes[k] < end_1_1 ? sizes[k] : end_1_1,
                           __LINE__);
      if (!strstr(f.name, old[p]))
        harness_fail(__FILE__, __LINE__, "%s: device_info name \"%s\"", old[p], f.name);
      if (sizes[k] >= end_1_1) CHECK_INT(f.info.kind, ALLOY_DEVICE_KIND_CPU);
    }
  }
  /* The same entry at 1.2 fills arch when the struct holds it, not else. */
  filled_info f;
  if (device_info_as_filled("basic", ALLOY_DEVICE_INFO_STRUCT_SIZE, &f)) CHECK_STR(f.arch, "testcpu");
  if (device_info_as_filled("basic", end_1_1, &f))
    check_untouched_from("basic", end_1_1, &f.info, end_1_1, __LINE__);
}

TEST(loader_other_major_refused_naming_both_versions) {
  clean_env();
  scratch d;
  if (!scratch_new(&d)) return;
  if (add_plugin(&d, "other_major") && add_plugin(&d, "basic")) {
    alloy_runtime *rt = open_dir(&d);
    if (rt) {
      int i = CHECK_REFUSED(rt, &d, "other_major", "refused");
      if (i >= 0) {
        alloy_backend_info r = row(rt, i);
        ROW_CHECK(rt, has_number(r.status, ALLOY_ABI_MAJOR) &&
                          has_number(r.status, ALLOY_ABI_MAJOR + 1),
                  "other_major's status must name both majors, %d and %d: "
                  "\"%s\"", ALLOY_ABI_MAJOR, ALLOY_ABI_MAJOR + 1, r.status);
        CHECK_INT(r.abi_major, ALLOY_ABI_MAJOR + 1);
        CHECK_STR(r.name, "other_major");
      }
      CHECK_INT(alloy_runtime_find_backend(rt, "other_major"), -1);
      CHECK_USABLE(rt, "basic");
      CHECK_REF_LAST(rt);
    }
    alloy_runtime_close(rt);
  }
  scratch_remove(&d);
}

TEST(loader_no_entry_symbol_refused) {
  clean_env();
  scratch d;
  if (!scratch_new(&d)) return;
  if (add_plugin(&d, "no_entry") && add_plugin(&d, "basic")) {
    alloy_runtime *rt = open_dir(&d);
    if (rt) {
      int i = CHECK_REFUSED(rt, &d, "no_entry", ALLOY_PLUGIN_ENTRY);
      if (i >= 0) CHECK_STR(row(rt, i).name, "no_entry");
      CHECK_INT(alloy_runtime_find_backend(rt, "no_entry"), -1);
      CHECK_USABLE(rt, "basic");
      CHECK_REF_LAST(rt);
    }
    alloy_runtime_close(rt);
  }
  scratch_remove(&d);
}

TEST(loader_missing_required_entry_refused_naming_it) {
  clean_env();
  scratch d;
  if (!scratch_new(&d)) return;
  if (add_plugin(&d, "missing_required") && add_plugin(&d, "short_table") &&
      add_plugin(&d, "basic")) {
    alloy_runtime *rt = open_dir(&d);
    if (rt) {
      CHECK_REFUSED(rt, &d, "missing_required", "compile");
      /* A table too short to hold a required entry lacks it as surely as a
       * NULL does. */
      CHECK_REFUSED(rt, &d, "short_table", "event_release");
      CHECK_INT(alloy_runtime_find_backend(rt, "missing_required"), -1);
      CHECK_INT(alloy_runtime_find_backend(rt, "short_table"), -1);
      CHECK_USABLE(rt, "basic");
      CHECK_REF_LAST(rt);
    }
    alloy_runtime_close(rt);
  }
  scratch_remove(&d);
}

TEST(loader_refuse_at_init_reports_logged_reason) {
  clean_env();
  scratch d;
  if (!scratch_new(&d)) return;
  if (add_plugin(&d, "refuse_init") && add_plugin(&d, "basic")) {
    alloy_runtime *rt = open_dir(&d);
    if (rt) {
      /* The entry said why through host->log just before returning NULL;
       * that line is the only useful thing `alloy backends` can show. */
      CHECK_REFUSED(rt, &d, "refuse_init", "no device present");
      CHECK_INT(alloy_runtime_find_backend(rt, "refuse_init"), -1);
      CHECK_USABLE(rt, "basic");
      CHECK_REF_LAST(rt);
    }
    alloy_runtime_close(rt);
  }
  scratch_remove(&d);
}

/* Everything at once in one folder, with files that are not plugins: no
 * refusal or stray file stops the others from loading. */
TEST(loader_refusals_do_not_stop_others) {
  clean_env();
  scratch d;
  if (!scratch_new(&d)) return;
  static const char *const plugins[] = {
      "basic",       "newer_minor",      "older_minor", "other_major",
      "no_entry",    "missing_required", "short_table", "refuse_init",
      "failing",     "abi_1_0",          "abi_1_1",
  };
  bool ok = true;
  for (size_t k = 0; k < sizeof plugins / sizeof plugins[0]; k++)
    ok = ok && add_plugin(&d, plugins[k]);
  /* Not an ELF file: dlopen fails, and the row says so. */
  ok = ok && write_file(&d, "liballoy-garbage.so", "not a shared library\n");
  ok = ok && add_plugin(&d, "dup_a");
  if (ok) {
    /* Copies of a real plugin under names that are not liballoy-<name>.so:
     * never considered at all. */
    char from[PATH_MAX + 64], to[PATH_MAX + 64];
    snprintf(from, sizeof from, "%s/liballoy-dup_b.so", test_plugin_dir());
    snprintf(to, sizeof to, "%s/libnotalloy.so", d.path);
    ok = copy_file(from, to);
    snprintf(to, sizeof to, "%s/liballoy-dup_b.so.bak", d.path);
    ok = ok && copy_file(from, to);
    ok = ok && write_file(&d, "README", "not a plugin\n");
  }
  if (ok) {
    setenv("ALLOY_TEST_FAIL", "none", 1);
    alloy_runtime *rt = open_dir(&d);
    if (rt) {
      /* 11 plugins, dup_a, garbage, ref. */
      CHECK_INT(alloy_runtime_num_backends(rt), 14);
      CHECK_USABLE(rt, "basic");
      CHECK_USABLE(rt, "newer_minor");
      CHECK_USABLE(rt, "older_minor");
      CHECK_USABLE(rt, "abi_1_0");
      CHECK_USABLE(rt, "abi_1_1");
      CHECK_USABLE(rt, "failing");
      CHECK_USABLE(rt, "dup");
      CHECK_REFUSED(rt, &d, "other_major", "refused");
      CHECK_REFUSED(rt, &d, "no_entry", ALLOY_PLUGIN_ENTRY);
      CHECK_REFUSED(rt, &d, "missing_required", "compile");
      CHECK_REFUSED(rt, &d, "short_table", "event_release");
      CHECK_REFUSED(rt, &d, "refuse_init", "refused");
      int g = CHECK_REFUSED(rt, &d, "garbage", "refused");
      if (g >= 0) CHECK_STR(row(rt, g).name, "garbage");
      char p[PATH_MAX + 64];
      snprintf(p, sizeof p, "%s/libnotalloy.so", d.path);
      ROW_CHECK(rt, row_by_path(rt, p) < 0, "libnotalloy.so is not a plugin");
      snprintf(p, sizeof p, "%s/liballoy-dup_b.so.bak", d.path);
      ROW_CHECK(rt, row_by_path(rt, p) < 0, "a .so.bak is not a plugin");
      CHECK_REF_LAST(rt);
      CHECK_RUNS_RELU(rt, "basic");
      CHECK_RUNS_RELU(rt, "failing");
    }
    alloy_runtime_close(rt);
    unsetenv("ALLOY_TEST_FAIL");
  }
  scratch_remove(&d);
}

/* dup_a and dup_b both say "dup"; dup_upper says "DUP". The first found
 * keeps the name; every later one is refused with a status naming both
 * files. */
TEST(loader_duplicate_names_refused_naming_both_files) {
  clean_env();
  static const char *const second[] = {"dup_b", "dup_upper"};
  for (int k = 0; k < 2; k++) {
    scratch d1, d2;
    if (!scratch_new(&d1)) return;
    if (!scratch_new(&d2)) {
      scratch_remove(&d1);
      return;
    }
    char first_path[PATH_MAX + 64], second_path[PATH_MAX + 64];
    if (add_plugin_as(&d1, "dup_a", "dup_a", first_path, sizeof first_path) &&
        add_plugin_as(&d2, second[k], second[k], second_path,
                      sizeof second_path)) {
      const scratch *dirs[2] = {&d1, &d2};
      alloy_runtime *rt = open_dirs(dirs, 2);
      if (rt) {
        int i = CHECK_USABLE(rt, "dup");
        if (i >= 0) {
          CHECK_STR(row(rt, i).vendor, "dup_a");
          CHECK_STR(row(rt, i).path, first_path);
        }
        CHECK_INT(alloy_runtime_find_backend(rt, "DUP"), i);
        int j = CHECK_REFUSED(rt, &d2, second[k], first_path, second_path);
        /* A duplicate was refused after its table was read: it is listed
         * by the name its table gives (the one that clashes). */
        if (j >= 0) CHECK_STR(row(rt, j).name, k == 0 ? "dup" : "DUP");
        CHECK_REF_LAST(rt);
      }
      alloy_runtime_close(rt);
    }
    scratch_remove(&d1);
    scratch_remove(&d2);
  }

  /* Both in one folder: which is first found is the loader's business,
   * that exactly one wins and the other names both is not. */
  scratch d;
  if (!scratch_new(&d)) return;
  char a[PATH_MAX + 64], b[PATH_MAX + 64];
  if (add_plugin_as(&d, "dup_a", "dup_a", a, sizeof a) &&
      add_plugin_as(&d, "dup_b", "dup_b", b, sizeof b)) {
    alloy_runtime *rt = open_dir(&d);
    if (rt) {
      alloy_backend_info ra = row(rt, row_by_path(rt, a));
      alloy_backend_info rb = row(rt, row_by_path(rt, b));
      ROW_CHECK(rt, row_by_path(rt, a) >= 0 && row_by_path(rt, b) >= 0,
                "both dup files must be listed");
      ROW_CHECK(rt, ra.ok != rb.ok, "exactly one of dup_a, dup_b is usable");
      const char *st = ra.ok ? rb.status : ra.status;
      ROW_CHECK(rt, contains(st, a) && contains(st, b),
                "the refused duplicate's status must name %s and %s: \"%s\"",
                a, b, st ? st : "(null)");
      CHECK_REF_LAST(rt);
    }
    alloy_runtime_close(rt);
  }
  scratch_remove(&d);
}

/* One plugin file copied to two places (two folders; one folder under two
 * file names) is two plugins of one name: the second is a duplicate. */
TEST(loader_same_plugin_from_two_paths_is_a_duplicate) {
  clean_env();
  scratch d1, d2;
  if (!scratch_new(&d1)) return;
  if (!scratch_new(&d2)) {
    scratch_remove(&d1);
    return;
  }
  char p1[PATH_MAX + 64], p2[PATH_MAX + 64];
  if (add_plugin_as(&d1, "basic", "basic", p1, sizeof p1) &&
      add_plugin_as(&d2, "basic", "basic", p2, sizeof p2)) {
    const scratch *dirs[2] = {&d1, &d2};
    alloy_runtime *rt = open_dirs(dirs, 2);
    if (rt) {
      int i = row_by_path(rt, p1);
      ROW_CHECK(rt, i >= 0 && row(rt, i).ok, "%s (first found) must be usable",
                p1);
      CHECK_INT(alloy_runtime_find_backend(rt, "basic"), i);
      CHECK_REFUSED(rt, &d2, "basic", p1, p2);
      CHECK_REF_LAST(rt);
      CHECK_RUNS_RELU(rt, "basic");
    }
    alloy_runtime_close(rt);
  }
  scratch_remove(&d1);
  scratch_remove(&d2);

  scratch d;
  if (!scratch_new(&d)) return;
  if (add_plugin_as(&d, "basic", "basic", p1, sizeof p1) &&
      add_plugin_as(&d, "basic", "basic_copy", p2, sizeof p2)) {
    alloy_runtime *rt = open_dir(&d);
    if (rt) {
      int i = row_by_path(rt, p1), j = row_by_path(rt, p2);
      ROW_CHECK(rt, i >= 0 && j >= 0, "both copies must be listed");
      alloy_backend_info r1 = row(rt, i), r2 = row(rt, j);
      ROW_CHECK(rt, r1.ok != r2.ok, "exactly one copy of basic is usable");
      const char *st = r1.ok ? r2.status : r1.status;
      ROW_CHECK(rt, contains(st, p1) && contains(st, p2),
                "the refused copy's status must name both files: \"%s\"",
                st ? st : "(null)");
      CHECK_RUNS_RELU(rt, "basic");
      CHECK_REF_LAST(rt);
    }
    alloy_runtime_close(rt);
  }
  scratch_remove(&d);
}

TEST(loader_backends_env_orders_case_insensitively) {
  clean_env();
  scratch d;
  if (!scratch_new(&d)) return;
  if (add_plugin(&d, "basic") && add_plugin(&d, "newer_minor") &&
      add_plugin(&d, "older_minor")) {
    /* Unknown names are skipped; "REF" cannot move ref from last. */
    setenv("ALLOY_BACKENDS", "Older_Minor,nosuch,REF,BASIC", 1);
    alloy_runtime *rt = open_dir(&d);
    unsetenv("ALLOY_BACKENDS");
    if (rt) {
      CHECK_INT(alloy_runtime_num_backends(rt), 4);
      CHECK_STR(row(rt, 0).name, "older_minor");
      CHECK_STR(row(rt, 1).name, "basic");
      CHECK_STR(row(rt, 2).name, "newer_minor");
      CHECK_REF_LAST(rt);
      CHECK_INT(alloy_runtime_find_backend(rt, "OLDER_MINOR"), 0);
      CHECK_INT(alloy_runtime_find_backend(rt, "Basic"), 1);
      CHECK_INT(alloy_runtime_find_backend(rt, "newer_MINOR"), 2);
      CHECK_INT(alloy_runtime_find_backend(rt, "nosuch"), -1);
      if (alloy_runtime_num_backends(rt) != 4) dump_rows(rt);
    }
    alloy_runtime_close(rt);
  }
  scratch_remove(&d);

  /* Without ALLOY_BACKENDS: search order, folder by folder. */
  scratch d1, d2;
  if (!scratch_new(&d1)) return;
  if (!scratch_new(&d2)) {
    scratch_remove(&d1);
    return;
  }
  if (add_plugin(&d1, "newer_minor") && add_plugin(&d2, "basic")) {
    const scratch *dirs[2] = {&d1, &d2};
    alloy_runtime *rt = open_dirs(dirs, 2);
    if (rt) {
      CHECK_INT(alloy_runtime_num_backends(rt), 3);
      CHECK_STR(row(rt, 0).name, "newer_minor");
      CHECK_STR(row(rt, 1).name, "basic");
      CHECK_REF_LAST(rt);
    }
    alloy_runtime_close(rt);
  }
  scratch_remove(&d1);
  scratch_remove(&d2);
}

/* $ALLOY_PLUGIN_PATH is searched, in its order, before the options'
 * folders; no_default_paths turns it off. (The program's ../lib/alloy/,
 * the build tree's shipped plugins, is searched too: its rows are not
 * looked at.) */
TEST(loader_plugin_path_env_searched_first) {
  clean_env();
  scratch d1, d2, d3;
  if (!scratch_new(&d1)) return;
  if (!scratch_new(&d2)) {
    scratch_remove(&d1);
    return;
  }
  if (!scratch_new(&d3)) {
    scratch_remove(&d1);
    scratch_remove(&d2);
    return;
  }
  char a[PATH_MAX + 64];
  if (add_plugin(&d1, "basic") &&
      add_plugin_as(&d1, "dup_a", "dup_a", a, sizeof a) &&
      add_plugin(&d2, "dup_b") && add_plugin(&d3, "dup_upper")) {
    char *saved = getenv("ALLOY_PLUGIN_PATH");
    saved = saved ? strdup(saved) : NULL;
    char env[2 * PATH_MAX + 2];
    snprintf(env, sizeof env, "%s:%s", d1.path, d2.path);
    setenv("ALLOY_PLUGIN_PATH", env, 1);

    const char *extra[1] = {d3.path};
    alloy_runtime_options opt = {.struct_size = ALLOY_RUNTIME_OPTIONS_STRUCT_SIZE,
                                 .plugin_dirs = extra,
                                 .num_plugin_dirs = 1,
                                 .no_default_paths = false};
    alloy_runtime *rt = NULL;
    CHECK_OK(alloy_runtime_open(&opt, &rt));
    if (rt) {
      CHECK_USABLE(rt, "basic");
      int i = CHECK_USABLE(rt, "dup");
      if (i >= 0) CHECK_STR(row(rt, i).path, a);
      CHECK_REFUSED(rt, &d2, "dup_b", a);
      CHECK_REFUSED(rt, &d3, "dup_upper", a);
      CHECK_REF_LAST(rt);
    }
    alloy_runtime_close(rt);

    opt.no_default_paths = true;
    opt.num_plugin_dirs = 0;
    opt.plugin_dirs = NULL;
    rt = NULL;
    CHECK_OK(alloy_runtime_open(&opt, &rt));
    if (rt) {
      ROW_CHECK(rt, alloy_runtime_num_backends(rt) == 1,
                "no_default_paths: $ALLOY_PLUGIN_PATH must not be searched");
      CHECK_REF_LAST(rt);
    }
    alloy_runtime_close(rt);

    if (saved) {
      setenv("ALLOY_PLUGIN_PATH", saved, 1);
      free(saved);
    } else {
      unsetenv("ALLOY_PLUGIN_PATH");
    }
  }
  scratch_remove(&d1);
  scratch_remove(&d2);
  scratch_remove(&d3);
}

/* Two runtimes at once, each loading the same files from the same folder:
 * dlopen hands both the one image (RTLD_LOCAL does not copy it), so this
 * checks that plugins and host keep per-runtime state per backend, and that
 * closing one runtime leaves the other's plugins loaded. The shipped
 * example and ref plugins take part when they are built. */
TEST(loader_two_runtimes_load_one_plugin_at_once) {
  clean_env();
  scratch d;
  if (!scratch_new(&d)) return;
  bool ok = add_plugin(&d, "basic");
  bool with_example = false, with_ref = false;
  char src[PATH_MAX + 64], dst[PATH_MAX + 64];
  snprintf(src, sizeof src, "%s/lib/alloy/liballoy-example.so", build_dir());
  if (ok && access(src, R_OK) == 0) {
    snprintf(dst, sizeof dst, "%s/liballoy-example.so", d.path);
    with_example = ok = copy_file(src, dst);
  } else {
    printf("  note: %s not built: two runtimes tried on basic only\n", src);
  }
  snprintf(src, sizeof src, "%s/lib/alloy/liballoy-ref.so", build_dir());
  if (ok && access(src, R_OK) == 0) {
    snprintf(dst, sizeof dst, "%s/liballoy-ref.so", d.path);
    with_ref = ok = copy_file(src, dst);
  } else {
    printf("  note: %s not built: the ref plugin not tried\n", src);
  }
  if (ok) {
    alloy_runtime *rt1 = open_dir(&d);
    alloy_runtime *rt2 = open_dir(&d);
    if (rt1 && rt2) {
      CHECK_USABLE(rt1, "basic");
      CHECK_USABLE(rt2, "basic");
      if (with_example) {
        ROW_CHECK(rt1, alloy_runtime_find_backend(rt1, "example") >= 0,
                  "example must be usable in runtime 1");
        ROW_CHECK(rt2, alloy_runtime_find_backend(rt2, "example") >= 0,
                  "example must be usable in runtime 2");
      }
      /* The ref plugin and the built-in ref share one name: whichever the
       * loader keeps, there is one usable ref and it is last. */
      CHECK_REF_LAST(rt1);
      CHECK_REF_LAST(rt2);

      /* Interleaved: a program of each runtime alive at once. */
      int b1 = alloy_runtime_find_backend(rt1, "basic");
      int b2 = alloy_runtime_find_backend(rt2, "basic");
      alloy_graph *g = relu_graph();
      alloy_program *p1 = NULL, *p2 = NULL;
      CHECK_OK(alloy_program_compile(rt1, b1, g, &p1));
      CHECK_OK(alloy_program_compile(rt2, b2, g, &p2));
      alloy_graph_free(g);
      float x[4] = {-1, 1, -2, 2};
      int64_t sizes[1] = {4};
      alloy_host_tensor in = {.struct_size = ALLOY_HOST_TENSOR_STRUCT_SIZE, .dtype = ALLOY_F32,
                              .rank = 1, .sizes = sizes, .data = x};
      alloy_host_tensor o1 = {.struct_size = ALLOY_HOST_TENSOR_STRUCT_SIZE};
      alloy_host_tensor o2 = {.struct_size = ALLOY_HOST_TENSOR_STRUCT_SIZE};
      if (p1 && p2) {
        CHECK_OK(alloy_program_run(p1, &in, 1, &o1, 1));
        CHECK_OK(alloy_program_run(p2, &in, 1, &o2, 1));
        if (o1.data && o2.data) {
          CHECK(((float *)o1.data)[1] == 1.0f && ((float *)o1.data)[2] == 0.0f);
          CHECK(((float *)o2.data)[3] == 2.0f && ((float *)o2.data)[0] == 0.0f);
        }
      }
      alloy_program_release(p1);
      alloy_runtime_close(rt1);
      rt1 = NULL;
      /* rt2's copy of the plugin must outlive rt1's close. */
      if (p2) CHECK_OK(alloy_program_run(p2, &in, 1, &o2, 1));
      alloy_program_release(p2);
      CHECK_RUNS_RELU(rt2, "basic");
      if (with_ref) CHECK_RUNS_RELU(rt2, "ref");
    }
    alloy_runtime_close(rt1);
    alloy_runtime_close(rt2);
  }
  scratch_remove(&d);
}

/* ---- the failing plugin ----------------------------------------------------
 * For each entry that can fail, a runtime whose failing plugin fails just
 * that entry ($ALLOY_TEST_FAIL, read at backend_open). Wherever the failure
 * stops things (the row, compile, run), the message the caller sees must
 * carry the plugin's own, "failing plugin: <entry> always fails"; when
 * nothing fails, relu must be right. `must` says where an entry that the
 * host cannot avoid calling has to surface at the latest. */

typedef enum {
  MAY_SUCCEED, /* the host may not call it for this graph */
  AT_OPEN,     /* refused, or usable with the message in its devices */
  BY_OPEN,     /* refused with the message */
  BY_COMPILE,  /* compile fails with the message, if not refused */
  BY_RUN,      /* compile or run fails with the message */
} fail_bound;

static void check_failing(const scratch *d, const char *entries,
                          const char *expect, fail_bound must, int line) {
  if (entries)
    setenv("ALLOY_TEST_FAIL", entries, 1);
  else
    unsetenv("ALLOY_TEST_FAIL");
  const char *what = entries ? entries : "(unset)";
  alloy_runtime *rt = open_dir(d);
  if (!rt) {
    unsetenv("ALLOY_TEST_FAIL");
    return;
  }
  /* The neighbour is never affected. */
  if (alloy_runtime_find_backend(rt, "basic") < 0)
    harness_fail(__FILE__, line, "ALLOY_TEST_FAIL=%s: basic not usable", what);
  CHECK_REF_LAST(rt);

  int i = row_by_name(rt, "failing");
  alloy_backend_info r = row(rt, i < 0 ? 0 : i);
  if (i < 0) {
    harness_fail(__FILE__, line, "ALLOY_TEST_FAIL=%s: no row \"failing\"",
                 what);
    dump_rows(rt);
  } else if (!r.ok) {
    if (!contains(r.status, expect) || strncmp(r.status, "refused", 7) != 0)
      harness_fail(__FILE__, line, "ALLOY_TEST_FAIL=%s: refused with status "
                   "\"%s\", which lacks the plugin's \"%s\"", what,
                   r.status ? r.status : "(null)", expect);
  } else if (must == BY_OPEN) {
    harness_fail(__FILE__, line, "ALLOY_TEST_FAIL=%s: the failing plugin is "
                 "usable; expected it refused with \"%s\"", what, expect);
  } else if (must == AT_OPEN && !contains(r.devices, expect)) {
    harness_fail(__FILE__, line, "ALLOY_TEST_FAIL=%s: the failing plugin is "
                 "usable, and its devices \"%s\" lack the plugin's \"%s\"",
                 what, r.devices ? r.devices : "(null)", expect);
  } else {
    relu_stage stage;
    alloy_error *err = run_relu(rt, "failing", 2, &stage);
    if (err) {
      if (!contains(alloy_error_message(err), expect))
        harness_fail(__FILE__, line, "ALLOY_TEST_FAIL=%s: %s failed with "
                     "\"%s\", which lacks the plugin's \"%s\"", what,
                     stage == AT_COMPILE ? "compile" : "run",
                     alloy_error_message(err), expect);
      if (must == BY_COMPILE && stage != AT_COMPILE)
        harness_fail(__FILE__, line, "ALLOY_TEST_FAIL=%s: compile succeeded",
                     what);
      alloy_error_free(err);
    } else if (must == BY_COMPILE || must == BY_RUN) {
      harness_fail(__FILE__, line, "ALLOY_TEST_FAIL=%s: compile and run "
                   "succeeded; the plugin's \"%s\" was lost", what, expect);
    }
  }
  alloy_runtime_close(rt);
  unsetenv("ALLOY_TEST_FAIL");
}

TEST(loader_failing_plugin_messages_reach_the_caller) {
  clean_env();
  scratch d;
  if (!scratch_new(&d)) return;
  if (add_plugin(&d, "failing") && add_plugin(&d, "basic")) {
    static const struct {
      const char *entry;
      fail_bound must;
    } cases[] = {
        {"backend_open", BY_OPEN},
        /* Refusing the backend or listing it with the error in place of
         * the device's description are both honest; losing it is not. */
        {"device_info", AT_OPEN},
        {"claim", BY_COMPILE},
        {"compile", BY_COMPILE},
        /* The failing plugin's memory is not host-visible: inputs must be
         * copied in, outputs copied out. */
        {"buffer_allocate", BY_RUN},
        {"buffer_copy_from_host", BY_RUN},
        {"execute", BY_RUN},
        {"buffer_copy_to_host", BY_RUN},
        /* Entries a host may or may not use for this graph. */
        {"buffer_copy", MAY_SUCCEED},
        {"queue_create", MAY_SUCCEED},
        {"event_wait", MAY_SUCCEED},
        {"executable_serialize", MAY_SUCCEED},
        {"executable_deserialize", MAY_SUCCEED},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
      char expect[128];
      snprintf(expect, sizeof expect, "failing plugin: %s always fails",
               cases[k].entry);
      check_failing(&d, cases[k].entry, expect, cases[k].must, __LINE__);
    }
    /* Everything fails: the first failure (backend_open) is the one seen. */
    check_failing(&d, "all", "failing plugin: backend_open always fails",
                  BY_OPEN, __LINE__);
    /* The default: open, claim relu, then every step fails; whichever the
     * host meets first must be reported as the plugin said it. */
    check_failing(&d, NULL, "always fails", BY_RUN, __LINE__);
    /* Nothing fails: the copy path gives the right answer. */
    check_failing(&d, "none", "(nothing)", MAY_SUCCEED, __LINE__);
  }
  scratch_remove(&d);
}
