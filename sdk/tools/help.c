/*
 * sdk/tools/help.c: what `alloy help CMD`, `alloy CMD --help` and
 * `alloy --version` print, and the one way every subcommand reports a bad
 * argument ("alloy run: unknown option '--foo' (see alloy help run)").
 *
 * Each command's text says how to call it, what each flag does, the
 * environment variables it reads and its exit status. docs/man/ has the
 * same in roff (a test checks that every flag here is in its man page).
 * Exit status, for every command: 0 ok, 1 failures found (a failed check,
 * a failed conformance test, a command that could not do its work),
 * 2 usage or input errors (a bad flag, a missing argument, a file that is
 * not what the command takes).
 */
#include <stdio.h>
#include <string.h>

#include "alloy/plugin.h"
#include "alloy/version.h"
#include "sdk/tools/commands.h"

/* The environment, by the commands it applies to. Every variable the SDK
 * reads with getenv is here (grep getenv sdk ir conformance plugins). */
#define ENV_HEAD "environment:\n"
#define ENV_LOAD                                                                                  \
  "  ALLOY_PLUGIN_PATH  colon-separated folders searched first for liballoy-NAME.so; then\n"      \
  "                     ../lib/alloy beside this program (its install or build tree)\n"           \
  "  ALLOY_BACKENDS     backends in priority order (\"cuda,cpu\"); ref is always there, last\n"   \
  "  ALLOY_LOG          print plugins' log lines at this level and above: 0 debug, 1 info,\n"    \
  "                     2 warning, 3 error (default: none printed)\n"
#define ENV_CACHE                                                                                 \
  "  ALLOY_CACHE_DIR    keep compiled partitions on disk in this folder, reused by later\n"       \
  "                     runs (made 0700; see docs/security.md)\n"
#define ENV_BACKENDS                                                                              \
  "  ALLOY_REF_SEED     the seed of the reference backend's random ops (rand, dropout, ...)\n"    \
  "  ALLOY_CPU_DUMP_IR  cpu backend: write each LLVM module, before and after optimization,\n"    \
  "                     to this folder\n"                                                         \
  "  ALLOY_CUDNN_PATH   cuda backend: the folder of libcudnn.so.9 (then CUDNN_PATH)\n"            \
  "  CUDA_HOME          cuda backend: the CUDA toolkit (default /usr/local/cuda)\n"
#define ENV_NONE "environment: none (this command opens no backend)\n"
#define EXIT_STATUS                                                                               \
  "exit status: 0 ok; 1 failures found, or the command could not do its work;\n"                 \
  "2 usage or input errors\n"

typedef struct command_help {
  const char *name;
  const char *summary; /* one line, for `alloy help` */
  const char *text;    /* usage, flags, environment */
} command_help;

static const command_help helps[] = {
    {"backends", "list found backends: name, version, ABI, devices, status",
     "usage: alloy backends\n"
     "\n"
     "Loads every backend found (liballoy-NAME.so on $ALLOY_PLUGIN_PATH, then in\n"
     "../lib/alloy beside this program) and prints one row per backend: NAME,\n"
     "VERSION, ABI, DEVICES, STATUS (ok, or why the plugin was refused) and FILE.\n"
     "The built-in reference backend ref is always there, last.\n"
     "\n" ENV_HEAD ENV_LOAD "\n" EXIT_STATUS},
    {"ops", "the op set, with schemas; coverage of PyTorch's ATen surface",
     "usage: alloy ops [--level aten|core|prims]\n"
     "       alloy ops --coverage [-v] [--floor FILE]\n"
     "       alloy ops --decomp-coverage [--table FILE] [-v]\n"
     "\n"
     "  --level L          list the ops of one set with their schemas: aten (every ATen\n"
     "                     overload, the default), core (Core ATen) or prims\n"
     "  --coverage         how much of PyTorch's ATen surface is known and runs, by kind\n"
     "                     and tag\n"
     "  --floor FILE       with --coverage: fail when a figure fell below FILE's\n"
     "  --decomp-coverage  how much of PyTorch's decomposition table Alloy decomposes\n"
     "  --table FILE       with --decomp-coverage: the table (default\n"
     "                     ../shared/reference/core_aten_decomp_table.tsv)\n"
     "  -v                 list what does not run and why, or every rule\n"
     "\n" ENV_NONE "\n" EXIT_STATUS},
    {"check", "parse and verify a model; print it (.air) or summarize it (.pt2)",
     "usage: alloy check FILE.air\n"
     "       alloy check MODEL.pt2\n"
     "       alloy check FILE.air --summary\n"
     "\n"
     "FILE.air (Alloy's text IR, docs/air.md) is parsed, verified and printed back\n"
     "with inferred, possibly symbolic, shapes. MODEL.pt2 (torch.export.save) is\n"
     "imported and verified, and its inputs, outputs and op histogram printed.\n"
     "The format is told by content: a file that is neither is refused as such.\n"
     "\n"
     "  --summary          summarize an .air file as a .pt2 is (inputs, outputs, ops)\n"
     "\n" ENV_NONE "\n" EXIT_STATUS},
    {"run", "run a .pt2 or .air model, check its outputs",
     "usage: alloy run MODEL [--inputs X.safetensors] [--outputs Y.safetensors]\n"
     "                 [--check Z.safetensors] [--backends a,b] [--batch N,...]\n"
     "                 [--decompose core|prims] [--cost-model default|free] [--repeat N]\n"
     "                 [--stats] [--trace FILE] [--backend-opt NAME.KEY=VALUE]...\n"
     "                 [--isolate [--isolate-timeout SECONDS]]\n"
     "\n"
     "Runs MODEL (a torch.export .pt2 archive or .air text, docs/models.md) once per\n"
     "batch size. User inputs are the tensors input0, input1, ... of --inputs;\n"
     "outputs are output0, output1, ...\n"
     "\n"
     "  --inputs FILE      the model's user inputs (needed when the model takes any)\n"
     "  --outputs FILE     write the outputs to this safetensors file\n"
     "  --check FILE       compare each output with FILE's tensor of the same name and\n"
     "                     print the largest error; fails when one is out of tolerance\n"
     "  --backends a,b     backends to use: one runs the whole graph, several are a\n"
     "                     mixture partitioned over them (default: $ALLOY_BACKENDS, else\n"
     "                     the shipped backends that found a device, then ref)\n"
     "  --batch N,...      run once per size, every input's first dimension resized\n"
     "  --decompose L      decompose every node to core or prims before compiling\n"
     "  --cost-model M     the partitioner's cost model: default, or free (moves cost 0)\n"
     "  --repeat N         run each size N times, timing each run\n"
     "  --stats            print what each run moved between the host and the backends\n"
     "  --trace FILE       write a Chrome trace (Perfetto) of the whole command\n"
     "  --backend-opt NAME.KEY=VALUE\n"
     "                     pass an option to a backend (repeatable; docs/backends/)\n"
     "  --isolate          run each plugin in a process of its own, so that one that\n"
     "                     crashes or hangs is named (docs/security.md)\n"
     "  --isolate-timeout S  with --isolate: the longest wait on a plugin (60 s)\n"
     "\n" ENV_HEAD ENV_LOAD ENV_CACHE ENV_BACKENDS "\n"
     "exit status: 0 ok; 1 an output check failed or the run failed;\n"
     "2 usage or input errors\n"},
    {"convert", "write a model as .air text plus its weights",
     "usage: alloy convert MODEL OUT.air [--weights W.safetensors]\n"
     "\n"
     "Writes MODEL (.pt2 or .air) as .air text and its weights as a safetensors\n"
     "file that `alloy run OUT.air` reads the same way.\n"
     "\n"
     "  --weights FILE     where the weights go (default: OUT.safetensors beside OUT.air)\n"
     "\n" ENV_NONE "\n" EXIT_STATUS},
    {"partition", "how a model is spread over backends, and why",
     "usage: alloy partition MODEL --backends a,b [--inputs X.safetensors] [--dot FILE]\n"
     "                       [--svg FILE] [--decompose core|prims]\n"
     "                       [--cost-model default|free]\n"
     "\n"
     "Partitions MODEL over the backends as `alloy run --backends` would, prints each\n"
     "partition, and says why each node left to the last backend is there.\n"
     "\n"
     "  --backends a,b     the backends, in priority order (required)\n"
     "  --inputs FILE      sizes for a model with symbolic sizes\n"
     "  --dot FILE         write a Graphviz picture of the partitions\n"
     "  --svg FILE         the same, drawn by Graphviz's dot\n"
     "  --decompose L      decompose every node to core or prims first\n"
     "  --cost-model M     default, or free (moves cost 0)\n"
     "\n" ENV_HEAD ENV_LOAD "\n" EXIT_STATUS},
    {"conform", "the conformance suite of a backend against ref",
     "usage: alloy conform --backend NAME [-j N] [--only samples,golden,graphs,abi]\n"
     "                     [--golden DIR] [--ops GLOB] [--dtype D] [--cases core|noncore]\n"
     "                     [--seed S] [--sample K] [--decompose core|prims]\n"
     "                     [--known-failures FILE] [--repro-dir DIR [--repro-all]]\n"
     "                     [--replay FILE.air] [--json FILE] [--junit FILE]\n"
     "                     [--summary FILE] [--perf] [--no-fork] [-v]\n"
     "                     [--backend-opt KEY=VALUE]...\n"
     "\n"
     "Runs generated op samples, graph-level tests and ABI tests (and with --golden\n"
     "PyTorch's recorded cases and models) on the backend, each in a forked worker,\n"
     "and compares them with the reference backend (docs/conformance.md). Prints one\n"
     "line per failure and, last, \"N passed, N failed, N skipped\".\n"
     "\n"
     "  --backend NAME     the backend under test (required); meta checks shape and\n"
     "                     dtype inference only\n"
     "  -j N, --jobs N     run N tests at once (1 to 64)\n"
     "  --only LIST        only these sources: samples, golden, graphs, abi\n"
     "  --golden DIR       add the golden corpus (DIR/ops, DIR/models)\n"
     "  --ops GLOB         only ops or tests whose name matches the pattern\n"
     "  --dtype D          only tests of this dtype (float32, ...)\n"
     "  --cases SET        only core or noncore ops\n"
     "  --seed S           the generated samples' seed (0)\n"
     "  --sample K         only sample K of each op\n"
     "  --decompose L      decompose each test's op to core or prims first\n"
     "  --known-failures FILE\n"
     "                     failures expected, one \"SOURCE ID OP  # reason\" per line\n"
     "  --repro-dir DIR    write a replayable .air repro of each failure\n"
     "  --repro-all        with --repro-dir: of every sample that runs\n"
     "  --replay FILE.air  run one repro\n"
     "  --json FILE        one JSON object per test\n"
     "  --junit FILE       JUnit XML\n"
     "  --summary FILE     the whole op and dtype table, as Markdown\n"
     "  --perf             time each op on the backend and on ref\n"
     "  --no-fork          run in this process (for a debugger)\n"
     "  -v                 print passing and skipped tests too\n"
     "  --backend-opt KEY=VALUE\n"
     "                     an option of the backend under test (repeatable;\n"
     "                     docs/backends/), e.g. vendor_libs=0 on cuda\n"
     "\n" ENV_HEAD ENV_LOAD ENV_CACHE
     "  ALLOY_CONFORM_TIMEOUT  seconds a test may take before it fails as hung (60)\n"
     ENV_BACKENDS "\n"
     "exit status: 0 every test passed (or was skipped); 1 a test failed;\n"
     "2 usage or input errors (no such backend, a bad flag)\n"},
    {"help", "help on a command",
     "usage: alloy help [COMMAND]\n"
     "       alloy COMMAND --help\n"
     "\n"
     "Without COMMAND, lists the commands.\n"
     "\n" ENV_NONE "\n"
     "exit status: 0 ok; 2 no such command\n"},
};
enum { NHELPS = sizeof helps / sizeof helps[0] };

int tool_usage(FILE *f) {
  fprintf(f, "usage: alloy <command> [args]\n"
             "       alloy help <command>      (or alloy <command> --help)\n"
             "       alloy --version\n\ncommands:\n");
  for (int i = 0; i < NHELPS; i++) fprintf(f, "  %-10s %s\n", helps[i].name, helps[i].summary);
  fprintf(f, "\nenvironment (see alloy help run): ALLOY_PLUGIN_PATH, ALLOY_BACKENDS, ALLOY_LOG,\n"
             "ALLOY_CACHE_DIR, ALLOY_CONFORM_TIMEOUT, ALLOY_REF_SEED\n"
             "exit status: 0 ok, 1 failures found, 2 usage or input errors\n");
  return f == stderr ? 2 : 0;
}

int tool_help(const char *cmd, FILE *f) {
  if (!cmd) return tool_usage(f);
  for (int i = 0; i < NHELPS; i++)
    if (!strcmp(cmd, helps[i].name)) {
      fputs(helps[i].text, f);
      return 0;
    }
  fprintf(stderr, "alloy help: no command '%s' (alloy help lists them)\n", cmd);
  return 2;
}

int tool_version(FILE *f) {
  fprintf(f, "alloy %s (plugin ABI %d.%d)\n", ALLOY_VERSION_STRING, ALLOY_ABI_MAJOR, ALLOY_ABI_MINOR);
  return 0;
}

int tool_bad_arg(const char *cmd, const char *arg, bool needs_value) {
  if (needs_value)
    fprintf(stderr, "alloy %s: %s needs a value (see alloy help %s)\n", cmd, arg, cmd);
  else if (arg[0] == '-' && arg[1])
    fprintf(stderr, "alloy %s: unknown option '%s' (see alloy help %s)\n", cmd, arg, cmd);
  else
    fprintf(stderr, "alloy %s: unexpected argument '%s' (see alloy help %s)\n", cmd, arg, cmd);
  return 2;
}

int tool_missing(const char *cmd, const char *what) {
  fprintf(stderr, "alloy %s: %s (see alloy help %s)\n", cmd, what, cmd);
  return 2;
}
