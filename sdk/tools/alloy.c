/*
 * sdk/tools/alloy.c: the `alloy` command. Each subcommand is one function
 * in the table below; the command line is a contract (see DESIGN.md), so
 * subcommands and flags are only ever added, never renamed.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/graph.h"
#include "alloy/ops.h"
#include "alloy/runtime.h"
#include "conformance/suite.h"
#include "ir/files.h"
#include "decompositions/decomp.h"
#include "sdk/tools/commands.h"
#include "sdk/tools/coverage.h"

static int usage(FILE *f) {
  fprintf(f,
          "usage: alloy <command> [args]\n"
          "  backends                          list found backends: name, version, ABI, devices, status\n"
          "  ops [--level aten|core|prims]     the op set, with schemas\n"
          "  ops --coverage [-v] [--floor FILE]  how much of PyTorch's ATen surface is known\n"
          "                                    and runs, by kind and tag; -v lists what does not\n"
          "                                    run and why; --floor fails if a figure fell\n"
          "  ops --decomp-coverage [--table FILE] [-v]\n"
          "                                    how much of PyTorch's decomposition table Alloy\n"
          "                                    decomposes, and how many core ops reach prims\n"
          "  check FILE.air                    parse, verify, print with inferred shapes\n"
          "  check MODEL.pt2                   import, verify, summarize inputs, outputs and ops\n"
          "  run MODEL [--inputs X.safetensors] [--outputs Y.safetensors] [--check Z.safetensors]\n"
          "            [--backends a,b] [--batch N,...] [--decompose core|prims]\n"
          "            [--cost-model default|free] [--isolate [--isolate-timeout SECONDS]]\n"
          "                                    run a .pt2 or .air model (see docs/models.md); --isolate\n"
          "                                    runs each plugin in a process of its own, so that one\n"
          "                                    that crashes or hangs is named (docs/security.md)\n"
          "  convert MODEL OUT.air [--weights W.safetensors]\n"
          "                                    write a model as .air text plus its weights\n"
          "  partition MODEL --backends a,b [--inputs X] [--dot FILE] [--svg FILE]\n"
          "            [--decompose core|prims] [--cost-model default|free]\n"
          "                                    how a model is spread over backends\n"
          "  conform --backend NAME [-j N] [--only samples,golden,graphs,abi] [--golden DIR]\n"
          "          [--ops GLOB] [--dtype D] [--cases core|noncore] [--seed S] [--sample K]\n"
          "          [--decompose core|prims] [--known-failures FILE] [--repro-dir DIR [--repro-all]]\n"
          "          [--replay FILE.air] [--json FILE] [--junit FILE] [--summary FILE]\n"
          "          [--perf] [--no-fork] [-v]\n"
          "                                    the conformance suite: generated op samples and\n"
          "                                    graph tests against ref, plus the golden corpus\n");
  return f == stderr ? 2 : 0;
}

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
    else return usage(stderr);
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

static int cmd_check(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "--summary")) return cmd_check_model(argv[0]);
  if (argc != 1) return usage(stderr);
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
      return usage(stderr);
    }
  }
  if (!o.backend) {
    fprintf(stderr, "alloy conform: --backend NAME is required\n");
    return 2;
  }
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
  (void)argv;
  if (argc != 0) return usage(stderr);
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

int main(int argc, char **argv) {
  if (argc < 2) return usage(stderr);
  if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) return usage(stdout);
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (!strcmp(argv[1], commands[i].name)) return commands[i].fn(argc - 2, argv + 2);
  fprintf(stderr, "alloy: unknown command '%s'\n", argv[1]);
  return usage(stderr);
}
