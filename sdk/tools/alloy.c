/*
 * sdk/tools/alloy.c: the `alloy` command. Each subcommand is one function
 * in the table below; the command line is a contract (see DESIGN.md), so
 * subcommands and flags are only ever added, never renamed.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloy/graph.h"
#include "alloy/ops.h"
#include "alloy/runtime.h"
#include "conformance/suite.h"
#include "ir/files.h"
#include "decompositions/decomp.h"
#include "sdk/tools/commands.h"
#include "sdk/tools/coverage.h"

/* `alloy ops --decomp-coverage`: the overloads of PyTorch's default
 * core_aten_decompositions() table (one per line, its first column) that
 * Alloy has a rule for, and the core ops that have a rule down to prims. */
static int decomp_coverage(const char *table, bool list) {
  FILE *f = fopen(table, "r");
  if (!f) {
    fprintf(stderr, "alloy ops: cannot read %s (PyTorch's decomposition table, in ../shared/reference; "
                    "give another with --table FILE)\n", table);
    return 1;
  }
  char line[1024];
  int total = 0, registered = 0, covered = 0;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#' || line[0] == '\n') continue;
    line[strcspn(line, "\t\n")] = 0;
    total++;
    const alloy_op *op = alloy_op_find(line);
    if (!op) continue;
    registered++;
    if (decomp_find(alloy_op_name(op), DECOMP_TO_CORE) || decomp_find(alloy_op_name(op), DECOMP_TO_PRIMS))
      covered++;
  }
  fclose(f);
  int core = 0, to_prims = 0;
  for (int i = 0; i < alloy_op_count(); i++) {
    const alloy_op *op = alloy_op_by_id(i);
    if (!(alloy_op_tags(op) & ALLOY_TAG_CORE)) continue;
    core++;
    to_prims += decomp_find(alloy_op_name(op), DECOMP_TO_PRIMS) != NULL;
  }
  printf("decomposition table: %d overloads, %d registered in Alloy, %d with an Alloy rule\n", total,
         registered, covered);
  printf("core ops: %d, %d with a rule down to prims\n", core, to_prims);
  printf("rules: %d\n", decomp_rule_count());
  if (list)
    for (int i = 0; i < decomp_rule_count(); i++)
      printf("  %-48s %s\n", decomp_rule_at(i)->op,
             decomp_rule_at(i)->level == DECOMP_TO_PRIMS ? "to prims" : "to core");
  return 0;
}

/* Whether a is one of the flags in values (NULL-terminated): the flags
 * that take a value, so that a bad argument is reported as a missing value
 * rather than an unknown option. */
static bool takes_value(const char *a, const char *const *values) {
  for (; *values; values++)
    if (!strcmp(a, *values)) return true;
  return false;
}

static const char *const ops_values[] = {"--level", "--floor", "--table", NULL};

static int cmd_ops(int argc, char **argv) {
  const char *level = "aten", *table = "../shared/reference/core_aten_decomp_table.tsv";
  const char *floor_path = NULL;
  bool coverage = false, list = false, surface = false;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--level") && i + 1 < argc) level = argv[++i];
    else if (!strcmp(argv[i], "--decomp-coverage")) coverage = true;
    else if (!strcmp(argv[i], "--coverage")) surface = true;
    else if (!strcmp(argv[i], "--floor") && i + 1 < argc) floor_path = argv[++i];
    else if (!strcmp(argv[i], "-v")) list = true;
    else if (!strcmp(argv[i], "--table") && i + 1 < argc) table = argv[++i];
    else return tool_bad_arg("ops", argv[i], takes_value(argv[i], ops_values));
  }
  if (coverage || surface) {
    alloy_error *e = alloy_registry_init();
    if (e) {
      fprintf(stderr, "alloy ops: %s\n", alloy_error_message(e));
      alloy_error_free(e);
      return 1;
    }
    return surface ? ops_coverage(list, floor_path) : decomp_coverage(table, list);
  }
  if (strcmp(level, "aten") && strcmp(level, "core") && strcmp(level, "prims")) {
    fprintf(stderr, "alloy ops: unknown level '%s' (aten, core or prims)\n", level);
    return 2;
  }
  alloy_error *e = alloy_registry_init();
  if (e) {
    fprintf(stderr, "alloy ops: %s\n", alloy_error_message(e));
    alloy_error_free(e);
    return 1;
  }
  int n = 0;
  for (int i = 0; i < alloy_op_count(); i++) {
    const alloy_op *op = alloy_op_by_id(i);
    uint32_t tags = alloy_op_tags(op);
    bool prim = tags & ALLOY_TAG_PRIM;
    bool show = !strcmp(level, "prims") ? prim
                : !strcmp(level, "core") ? (tags & ALLOY_TAG_CORE) != 0
                                         : !prim;
    if (!show) continue;
    printf("%-48s %s\n", alloy_op_name(op), alloy_op_schema_text(op));
    n++;
  }
  printf("%d ops\n", n);
  return 0;
}

/* Whether the first line of text with content (not blank, not a #
 * comment) begins as an .air line does: a keyword, a value name, or an op
 * name and its '(' (docs/air.md; ir/model.c tells formats the same way). */
static bool looks_like_air(const char *text, size_t len) {
  static const char *const words[] = {"sym", "input", "weights", "output"};
  for (const char *p = text, *end = text + len; p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p)), *eol = nl ? nl : end;
    while (p < eol && (*p == ' ' || *p == '\t' || *p == '\r')) p++;
    if (p < eol && *p != '#') {
      if (*p == '%') return true;
      for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
        size_t n = strlen(words[i]);
        if ((size_t)(eol - p) >= n && !memcmp(p, words[i], n) &&
            (p + n == eol || p[n] == ' ' || p[n] == '\t' || p[n] == '%'))
          return true;
      }
      const char *q = p;
      bool dot = false;
      while (q < eol && (isalnum((unsigned char)*q) || *q == '_' || *q == '.')) dot |= *q++ == '.';
      while (q < eol && (*q == ' ' || *q == '\t')) q++;
      return dot && q > p && q < eol && *q == '(';
    }
    p = eol + (nl != NULL);
  }
  return true; /* blank: the parser says "no graph" */
}

static int cmd_check(int argc, char **argv) {
  for (int i = 0; i < argc; i++)
    if (argv[i][0] == '-' && argv[i][1] && strcmp(argv[i], "--summary"))
      return tool_bad_arg("check", argv[i], false);
  if (argc == 2 && !strcmp(argv[1], "--summary")) return cmd_check_model(argv[0]);
  if (argc == 0) return tool_missing("check", "which file? alloy check FILE.air or MODEL.pt2");
  if (argc != 1) return tool_bad_arg("check", argv[argc - 1], false);
  /* Read as a regular file only (a FIFO would block forever), at most 1 GiB;
   * an archive is a model, anything else must be .air text. */
  size_t len = 0;
  char *text = NULL;
  alloy_error *e = alloy_file_read_at(AT_FDCWD, argv[0], 0, (uint64_t)1 << 30, &text, &len);
  if (!e && len >= 4 && !memcmp(text, "PK\3\4", 4)) {
    free(text);
    return cmd_check_model(argv[0]);
  }
  if (!e && len == 0) e = alloy_error_new(ALLOY_ERR_PARSE, "%s: not a model: empty file", argv[0]);
  /* A README or a script: say what it is not, never quote it. */
  if (!e && (memchr(text, '\0', len) || !looks_like_air(text, len))) {
    fprintf(stderr, "alloy check: %s is not a model: neither a .pt2 archive (ZIP) nor .air text "
                    "(see alloy help check)\n", argv[0]);
    free(text);
    return 2;
  }
  alloy_graph *g = NULL;
  char *printed = NULL;
  if (!e) e = alloy_air_parse(text, len, argv[0], &g);
  if (!e) e = alloy_graph_verify(g);
  if (!e) e = alloy_air_print(g, &printed);
  if (e) {
    fprintf(stderr, "%s\n", alloy_error_message(e));
    alloy_error_free(e);
  } else {
    fputs(printed, stdout);
    printf("# ok: %d inputs, %d nodes, %d outputs\n", alloy_graph_num_inputs(g),
           alloy_graph_num_nodes(g), alloy_graph_num_outputs(g));
  }
  free(printed);
  free(text);
  alloy_graph_free(g);
  return e ? 1 : 0;
}

static const char *const conform_values[] = {"-j", "--jobs", "--seed", "--sample", "--decompose",
                                             NULL};

/* The backend names a plugin file gives in the folders the loader searches
 * ($ALLOY_PLUGIN_PATH, then ../lib/alloy beside this program), found by
 * name only: nothing is loaded. Appended to buf as "a, b, c". */
static void plugin_names(char *buf, size_t cap, char *where, size_t where_cap) {
  char dirs[8192] = "", exe[4096];
  const char *env = getenv("ALLOY_PLUGIN_PATH");
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) *slash = 0;
  }
  snprintf(dirs, sizeof dirs, "%s%s%s/../lib/alloy", env ? env : "", env && *env ? ":" : "",
           n > 0 ? exe : ".");
  snprintf(where, where_cap, "%s%s%s%s/../lib/alloy", env && *env ? "$ALLOY_PLUGIN_PATH (" : "",
           env && *env ? env : "", env && *env ? "), then " : "", n > 0 ? exe : ".");
  size_t len = strlen(buf);
  for (char *save = NULL, *dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
    DIR *d = opendir(dir);
    struct dirent *ent;
    while (d && (ent = readdir(d))) {
      size_t l = strlen(ent->d_name);
      if (l <= 12 || strncmp(ent->d_name, "liballoy-", 9) || strcmp(ent->d_name + l - 3, ".so"))
        continue;
      char name[256];
      snprintf(name, sizeof name, "%.*s", (int)(l - 12), ent->d_name + 9);
      /* Once each: an earlier folder's file wins. */
      bool seen = false;
      for (const char *p = buf; (p = strstr(p, name)); p++)
        if ((p == buf || p[-1] == ' ') && (p[strlen(name)] == ',' || !p[strlen(name)])) seen = true;
      if (!seen && len + strlen(name) + 3 < cap)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", name);
    }
    if (d) closedir(d);
  }
}

/* Before listing a single test: does the backend load? Tried in a child
 * process (the driver never loads a plugin: one that crashes on load must
 * not take the command down). 0 when it loads; else the reason, and 2. */
static int conform_backend_check(const char *name) {
  if (!strcasecmp(name, "meta") || !strcasecmp(name, "ref")) return 0;
  int fds[2];
  if (pipe(fds) != 0) return 0; /* the workers will say */
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return 0;
  }
  if (pid == 0) {
    close(fds[0]);
    alloy_runtime *rt = NULL;
    alloy_error *e = tool_runtime_open(name, &rt);
    int code = 0;
    char why[1024] = "";
    if (e) {
      snprintf(why, sizeof why, "%s", alloy_error_message(e));
      code = 3;
    } else if (alloy_runtime_find_backend(rt, name) < 0) {
      code = 4; /* not found, unless a refused row has the name */
      for (int i = 0; i < alloy_runtime_num_backends(rt); i++) {
        alloy_backend_info info = {.struct_size = sizeof info};
        alloy_runtime_backend_info(rt, i, &info);
        if (!strcasecmp(info.name, name) || strstr(info.path, name)) {
          snprintf(why, sizeof why, "%s cannot be used: %s", info.path, info.status);
          code = 3;
          break;
        }
      }
    }
    if (write(fds[1], why, strlen(why))) {} /* a short write: the parent reads less */
    _exit(code);
  }
  close(fds[1]);
  char why[1024];
  ssize_t got = 0, r;
  while (got < (ssize_t)sizeof why - 1 && (r = read(fds[0], why + got, sizeof why - 1 - (size_t)got)) > 0)
    got += r;
  why[got > 0 ? got : 0] = 0;
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (WIFSIGNALED(status)) {
    fprintf(stderr, "alloy conform: backend '%s' crashed while loading (signal %d); "
                    "see alloy backends\n", name, WTERMSIG(status));
    return 2;
  }
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
  if (code == 3) {
    fprintf(stderr, "alloy conform: backend '%s': %s\n", name, why);
    return 2;
  }
  if (code != 4) return 0;
  char names[2048] = "ref, meta", where[8192];
  plugin_names(names, sizeof names, where, sizeof where);
  fprintf(stderr, "alloy conform: no backend '%s'; available: %s (plugins are liballoy-NAME.so "
                  "in %s; meta checks shapes and dtypes only)\n", name, names, where);
  return 2;
}

static int cmd_conform(int argc, char **argv) {
  conform_options o = {.backend = NULL, .sample = -1, .jobs = 1};
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    const char **slot = !strcmp(a, "--backend")          ? &o.backend
                        : !strcmp(a, "--golden")         ? &o.golden_dir
                        : !strcmp(a, "--ops")            ? &o.ops_glob
                        : !strcmp(a, "--dtype")          ? &o.dtype
                        : !strcmp(a, "--cases")          ? &o.set
                        : !strcmp(a, "--json")           ? &o.json
                        : !strcmp(a, "--junit")          ? &o.junit
                        : !strcmp(a, "--known-failures") ? &o.known_failures
                        : !strcmp(a, "--only")           ? &o.only
                        : !strcmp(a, "--replay")         ? &o.replay
                        : !strcmp(a, "--repro-dir")      ? &o.repro_dir
                        : !strcmp(a, "--summary")        ? &o.summary
                                                         : NULL;
    char *end;
    if (!strcmp(a, "-v")) {
      o.verbose = true;
    } else if (!strcmp(a, "--perf")) {
      o.perf = true;
    } else if (!strcmp(a, "--repro-all")) {
      o.repro_all = true;
    } else if (!strcmp(a, "--backend-opt") && i + 1 < argc) {
      if (o.nbackend_opts == (int)(sizeof o.backend_opts / sizeof *o.backend_opts)) {
        fprintf(stderr, "alloy conform: at most 16 --backend-opt\n");
        return 2;
      }
      o.backend_opts[o.nbackend_opts++] = argv[++i];
    } else if ((!strcmp(a, "-j") || !strcmp(a, "--jobs")) && i + 1 < argc) {
      o.jobs = (int)strtol(argv[++i], &end, 10);
      if (*end || o.jobs < 1 || o.jobs > 64) {
        fprintf(stderr, "alloy conform: -j takes a count from 1 to 64\n");
        return 2;
      }
    } else if (!strncmp(a, "-j", 2) && a[2]) {
      o.jobs = (int)strtol(a + 2, &end, 10);
      if (*end || o.jobs < 1 || o.jobs > 64) {
        fprintf(stderr, "alloy conform: -j takes a count from 1 to 64\n");
        return 2;
      }
    } else if ((!strcmp(a, "--seed") || !strcmp(a, "--sample")) && i + 1 < argc) {
      long long v = strtoll(argv[++i], &end, 10);
      if (*end || v < 0) {
        fprintf(stderr, "alloy conform: %s takes a number\n", a);
        return 2;
      }
      if (a[2] == 's' && a[3] == 'e') o.seed = (uint64_t)v;
      else o.sample = (long)v;
    } else if (!strcmp(a, "--no-fork")) {
      o.no_fork = true;
    } else if (!strcmp(a, "--decompose") && i + 1 < argc) {
      const char *lv = argv[++i];
      o.decompose = !strcmp(lv, "core") ? ALLOY_DECOMPOSE_CORE
                    : !strcmp(lv, "prims") ? ALLOY_DECOMPOSE_PRIMS : -1;
      if (o.decompose < 0) {
        fprintf(stderr, "alloy conform: --decompose takes core or prims\n");
        return 2;
      }
    } else if (slot && i + 1 < argc) {
      *slot = argv[++i];
    } else {
      return tool_bad_arg("conform", a, slot || takes_value(a, conform_values));
    }
  }
  if (!o.backend) return tool_missing("conform", "--backend NAME is required");
  if (o.repro_all && !o.repro_dir) {
    fprintf(stderr, "alloy conform: --repro-all needs --repro-dir DIR\n");
    return 2;
  }
  if (o.set && strcmp(o.set, "core") && strcmp(o.set, "noncore")) {
    fprintf(stderr, "alloy conform: --cases takes core or noncore\n");
    return 2;
  }
  /* "--golden ../shared/golden/ops" and "--golden ../shared/golden" both work. */
  static char dir[4096];
  size_t n = o.golden_dir ? strlen(o.golden_dir) : 0;
  if (n >= 4 && !strcmp(o.golden_dir + n - 4, "/ops")) {
    snprintf(dir, sizeof dir, "%.*s", (int)(n - 4), o.golden_dir);
    o.golden_dir = dir;
  } else if (n >= 3 && !strcmp(o.golden_dir + n - 3, "ops") && n == 3) {
    o.golden_dir = ".";
  }
  int bad = conform_backend_check(o.backend);
  if (bad) return bad;
  return conform_run(&o, stdout);
}

alloy_error *tool_runtime_open(const char *list, alloy_runtime **out) {
  char names[1024];
  const char *only[16];
  int n = 0;
  snprintf(names, sizeof names, "%s", list ? list : "");
  for (char *save = NULL, *name = strtok_r(names, ",", &save); name && n < 16;
       name = strtok_r(NULL, ",", &save))
    only[n++] = name;
  alloy_runtime_options o = {.struct_size = ALLOY_RUNTIME_OPTIONS_STRUCT_SIZE,
                             .only_backends = n ? only : NULL, .num_only_backends = n};
  return alloy_runtime_open(&o, out);
}

static int cmd_backends(int argc, char **argv) {
  if (argc != 0) return tool_bad_arg("backends", argv[0], false);
  alloy_runtime *rt = NULL;
  alloy_error *e = alloy_runtime_open(NULL, &rt);
  if (e) {
    fprintf(stderr, "alloy backends: %s\n", alloy_error_message(e));
    alloy_error_free(e);
    return 1;
  }
  printf("%-12s %-10s %-5s %-24s %-40s %s\n", "NAME", "VERSION", "ABI", "DEVICES", "STATUS", "FILE");
  for (int i = 0; i < alloy_runtime_num_backends(rt); i++) {
    alloy_backend_info info = {.struct_size = sizeof info};
    alloy_runtime_backend_info(rt, i, &info);
    char abi[24] = "-";
    if (info.abi_major) snprintf(abi, sizeof abi, "%u.%u", info.abi_major, info.abi_minor);
    printf("%-12s %-10s %-5s %-24s %-40s %s\n", info.name, info.version[0] ? info.version : "-",
           abi, info.devices[0] ? info.devices : "-", info.status, info.path);
  }
  alloy_runtime_close(rt);
  return 0;
}

static const struct {
  const char *name;
  int (*fn)(int argc, char **argv);
} commands[] = {
    {"backends", cmd_backends},
    {"ops", cmd_ops},
    {"check", cmd_check},
    {"run", cmd_run},
    {"convert", cmd_convert},
    {"partition", cmd_partition},
    {"conform", cmd_conform},
};

static bool is_help(const char *a) { return !strcmp(a, "-h") || !strcmp(a, "--help"); }

int main(int argc, char **argv) {
  if (argc < 2) return tool_usage(stderr);
  if (is_help(argv[1])) return tool_usage(stdout);
  if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) return tool_version(stdout);
  if (!strcmp(argv[1], "help")) {
    if (argc > 3) return tool_bad_arg("help", argv[3], false);
    return tool_help(argc == 3 ? (is_help(argv[2]) ? "help" : argv[2]) : NULL, stdout);
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
    if (strcmp(argv[1], commands[i].name)) continue;
    /* `alloy run --help`, `alloy run MODEL -h`: help, whatever else is there. */
    for (int k = 2; k < argc; k++)
      if (is_help(argv[k])) return tool_help(argv[1], stdout);
    return commands[i].fn(argc - 2, argv + 2);
  }
  fprintf(stderr, "alloy: unknown command '%s' (alloy help lists the commands)\n", argv[1]);
  return 2;
}
