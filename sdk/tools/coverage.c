/*
 * sdk/tools/coverage.c: `alloy ops --coverage`, how much of PyTorch's ATen
 * surface Alloy knows and runs, from the registry alone (no ../shared).
 *
 * The registry holds every overload of PyTorch's own table (ir/ops/ops.txt,
 * made by ir/ops/sync_aten.py) with PyTorch's tags, its kind and whether
 * PyTorch's decomposition tables have a rule for it. For each op this file
 * asks what Alloy has: a shape function, a decomposition rule, a reference
 * kernel, a functional twin that functionalization turns it into; and from
 * those whether the op runs on ref, or why not. "Runs" is what the
 * pipeline would do with a node of the op: a ref kernel takes it, a rule
 * lowers it (the rule is held against PyTorch's numbers by the tests, so
 * the ops it emits run), or functionalization rewrites it into a twin that
 * runs.
 *
 * --floor FILE compares the figures with a file of "<figure> <minimum>"
 * lines and fails when one fell: make test keeps the coverage from
 * shrinking.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/ops.h"
#include "decompositions/decomp.h"
#include "ir/ir.h"
#include "reference_backend/ref.h"
#include "sdk/tools/coverage.h"

typedef enum how {
  HOW_UNKNOWN = 0, /* not computed yet */
  HOW_VISITING,    /* on the stack (a twin of a twin of itself) */
  HOW_KERNEL,      /* a ref kernel computes it */
  HOW_RULE,        /* a decomposition rule lowers it */
  HOW_FUNCTIONAL,  /* functionalization makes it its functional twin */
  HOW_NOT,         /* it does not run; see why */
} how;

typedef struct op_cov {
  how how;
  bool meta, rule, kernel, functionalized;
  char why[160];
} op_cov;

/* Backend-specific families: ops a portable backend is not meant to run,
 * named so that the list of what does not run says so. */
static const struct {
  const char *part, *why;
} families[] = {
    {"cudnn", "a cuDNN op (CUDA only)"},
    {"miopen", "a MIOpen op (ROCm only)"},
    {"mkldnn", "a oneDNN (mkldnn) op"},
    {"mps", "an Apple MPS op"},
    {"fbgemm", "an FBGEMM packed-weight op"},
    {"quantize", "a quantized-tensor op"},
    {"qint", "a quantized-tensor op"},
    {"q_per_channel", "a quantized-tensor op"},
    {"sparse", "a sparse-tensor op"},
    {"_nested", "a nested-tensor op"},
    {"vulkan", "a Vulkan op"},
    {"_foreach", "a multi-tensor (_foreach) op"},
    {"backward", "a backward op (training graphs)"},
};

/* Ops whose results are complex by definition: Alloy reserves the complex
 * dtypes (sdk/include/alloy/dtype.h) but computes none. Matched by name
 * up to the overload. */
static const char *const complex_results[] = {
    "aten.complex.", "aten.polar.", "aten.view_as_complex.", "aten.view_as_complex_copy.",
};

static bool complex_only(const alloy_op *op, char *why, size_t cap) {
  const char *name = alloy_op_name(op);
  for (size_t k = 0; k < sizeof complex_results / sizeof *complex_results; k++)
    if (!strncmp(name, complex_results[k], strlen(complex_results[k]))) {
      snprintf(why, cap, "its results are complex: complex dtypes are reserved, not computed");
      return true;
    }
  return false;
}

/* In-place ops that change self's shape, which functionalization cannot
 * write back (it writes a twin's result in self's shape): resize_as_,
 * whose twin resize_as runs. (resize_ has a ref kernel.) */
static const char *const reshaping_inplace[] = {"aten.resize_as_.default"};

static bool reshapes_self(const alloy_op *op, char *why, size_t cap) {
  for (size_t k = 0; k < sizeof reshaping_inplace / sizeof *reshaping_inplace; k++)
    if (!strcmp(alloy_op_name(op), reshaping_inplace[k])) {
      snprintf(why, cap, "resizes self in place: functionalization writes results back in self's "
                         "shape");
      return true;
    }
  return false;
}

/* The reason an out= op without a functional twin gives when torchgen's
 * "<name>_functional" op of the same results exists and runs but the
 * registry, which pairs out= ops by overload name and signature, did not
 * pair them (normal.out with normal_functional; ir/registry.c looks for
 * normal_functional.out). False when there is no such op. */
static bool unpaired_functional(const alloy_op *op, char *why, size_t cap) {
  const char *full = alloy_op_name(op), *ov = strrchr(full, '.');
  if (alloy_op_kind_of(op) != ALLOY_OP_OUT || alloy_op_functional(op) || !ov) return false;
  char name[300];
  snprintf(name, sizeof name, "%.*s_functional.default", (int)(ov - full), full);
  const alloy_op *f = alloy_op_find(name);
  if (!f || !f->meta ||
      alloy_schema_num_returns(alloy_op_schema(f)) != alloy_schema_num_returns(alloy_op_schema(op)))
    return false; /* the twin of a mutable op: more results (batch norm's running statistics) */
  snprintf(why, cap, "no functional twin: the registry does not pair it with %.50s, which runs", name);
  return true;
}

/* Ops no exported graph holds: TorchScript's own, and the named-tensor
 * overloads. */
static bool script_only(const alloy_op *op, char *why, size_t cap) {
  const alloy_schema *s = alloy_op_schema(op);
  bool tensors = false;
  for (int pass = 0; pass < 2; pass++) {
    int n = pass ? alloy_schema_num_returns(s) : alloy_schema_num_args(s);
    for (int i = 0; i < n; i++) {
      const alloy_schema_arg *a = pass ? alloy_schema_return_at(s, i) : alloy_schema_arg_at(s, i);
      if (a->type.kind == ALLOY_TYPE_OTHER) {
        snprintf(why, cap, "TorchScript only: %s %s", pass ? "returns" : "takes", a->type_text);
        return true;
      }
      if (a->type.kind == ALLOY_TYPE_DIMNAME) {
        snprintf(why, cap, "a named-tensor overload (Dimname '%s'): torch.export has no named tensors",
                 a->name);
        return true;
      }
      tensors |= a->type.kind == ALLOY_TYPE_TENSOR;
    }
  }
  /* PyTorch prints a Dimname as str: the overload's name says it. */
  const char *ov = alloy_schema_overload(s);
  if (strcasestr(ov, "dimname") || strstr(ov, "names")) {
    snprintf(why, cap, "a named-tensor overload (%s): torch.export has no named tensors, and on an "
                       "unnamed tensor PyTorch itself refuses every dimension name", ov);
    return true;
  }
  if (s->vararg) {
    snprintf(why, cap, "TorchScript only: takes varargs (...)");
    return true;
  }
  bool prim = alloy_op_tags(op) & ALLOY_TAG_PRIM;
  if (!tensors && !prim && !strncmp(alloy_op_name(op), "aten.", 5)) {
    snprintf(why, cap, "a TorchScript scalar op (no tensors; torch.export records _operator and sym ops)");
    return true;
  }
  return false;
}

typedef struct coverage {
  int nops;
  op_cov *cov;
  const char **kernel_ops; /* the ref kernels' op names, sorted */
  int nkernels;
} coverage;

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool has_kernel(const coverage *c, const char *name) {
  return bsearch(&name, c->kernel_ops, (size_t)c->nkernels, sizeof *c->kernel_ops, cmp_str) != NULL;
}

static const op_cov *assess(coverage *c, const alloy_op *op) {
  op_cov *v = &c->cov[alloy_op_id(op)];
  if (v->how == HOW_VISITING) {
    v->how = HOW_NOT;
    snprintf(v->why, sizeof v->why, "its functional twin leads back to itself");
  }
  if (v->how != HOW_UNKNOWN) return v;
  v->how = HOW_VISITING;
  const char *name = alloy_op_name(op);
  const alloy_op *twin = alloy_op_functional(op);
  v->meta = op->meta != NULL || (twin && twin->meta);
  v->rule = decomp_find(name, DECOMP_TO_CORE) || decomp_find(name, DECOMP_TO_PRIMS);
  v->kernel = has_kernel(c, name);
  const op_cov *t = twin ? assess(c, twin) : NULL;
  v->functionalized = t && t->how != HOW_NOT && t->how != HOW_VISITING;
  char why[160];
  if (script_only(op, why, sizeof why)) {
    v->how = HOW_NOT;
    snprintf(v->why, sizeof v->why, "%s", why);
  } else if (complex_only(op, why, sizeof why) || reshapes_self(op, why, sizeof why) ||
             (!v->meta && unpaired_functional(op, why, sizeof why))) {
    v->how = HOW_NOT;
    snprintf(v->why, sizeof v->why, "%s", why);
  } else if (!v->meta) {
    v->how = HOW_NOT;
    snprintf(v->why, sizeof v->why, "no shape function");
  } else if (v->kernel && op->meta) {
    v->how = HOW_KERNEL;
  } else if (v->rule && op->meta) {
    v->how = HOW_RULE;
  } else if (v->functionalized) {
    v->how = HOW_FUNCTIONAL;
  } else {
    v->how = HOW_NOT;
    if (twin) snprintf(v->why, sizeof v->why, "its functional twin %s does not run (%.80s)",
                       alloy_op_name(twin), t->why);
    else if (alloy_op_tags(op) & ALLOY_TAG_MUTATES) snprintf(v->why, sizeof v->why, "mutates an argument and has no functional twin");
    else snprintf(v->why, sizeof v->why, "no decomposition rule and no ref kernel");
  }
  if (v->how == HOW_NOT)
    for (size_t k = 0; k < sizeof families / sizeof *families; k++)
      if (strstr(name, families[k].part)) {
        size_t len = strlen(v->why);
        snprintf(v->why + len, sizeof v->why - len, "; %s", families[k].why);
        break;
      }
  return v;
}

/* --- figures ------------------------------------------------------------------*/

typedef struct row {
  char label[48];
  int known, meta, rule, kernel, functionalized, runs;
} row;

static void row_add(row *r, const op_cov *v) {
  r->known++;
  r->meta += v->meta;
  r->rule += v->rule;
  r->kernel += v->kernel;
  r->functionalized += v->functionalized;
  r->runs += v->how != HOW_NOT;
}

static void row_print(const row *r) {
  printf("  %-30s %6d %6d %6d %6d %8d %6d\n", r->label, r->known, r->meta, r->rule, r->kernel,
         r->functionalized, r->runs);
}

static const struct {
  uint32_t tag;
  const char *name;
} tag_rows[] = {
    {ALLOY_TAG_CORE, "core"},
    {ALLOY_TAG_POINTWISE, "pointwise"},
    {ALLOY_TAG_REDUCTION, "reduction"},
    {ALLOY_TAG_VIEW_COPY, "view_copy"},
    {ALLOY_TAG_INPLACE_VIEW, "inplace_view"},
    {ALLOY_TAG_GENERATED, "generated"},
    {ALLOY_TAG_NONDETERMINISTIC_SEEDED, "nondeterministic_seeded"},
    {ALLOY_TAG_DYNAMIC_OUTPUT_SHAPE, "dynamic_output_shape"},
    {ALLOY_TAG_DATA_DEPENDENT_OUTPUT, "data_dependent_output"},
    {ALLOY_TAG_PT2_COMPLIANT, "pt2_compliant"},
    {ALLOY_TAG_PRIM, "prims"},
};

/* The figures --floor checks, by name. */
typedef struct figure {
  char name[64];
  int value;
} figure;

static void figure_set(figure *f, int *n, const char *name, int value) {
  snprintf(f[*n].name, sizeof f[*n].name, "%s", name);
  f[(*n)++].value = value;
}

static int check_floor(const char *path, const figure *f, int nf) {
  FILE *in = fopen(path, "r");
  if (!in) {
    fprintf(stderr, "alloy ops: cannot read the floor file %s\n", path);
    return 1;
  }
  char line[256];
  int lineno = 0, fell = 0;
  while (fgets(line, sizeof line, in)) {
    lineno++;
    char name[64];
    int min;
    if (line[0] == '#' || line[0] == '\n') continue;
    if (sscanf(line, "%63s %d", name, &min) != 2) {
      fprintf(stderr, "%s:%d: expected \"<figure> <minimum>\"\n", path, lineno);
      fell++;
      continue;
    }
    int k = 0;
    while (k < nf && strcmp(f[k].name, name)) k++;
    if (k == nf) {
      fprintf(stderr, "%s:%d: no figure named %s\n", path, lineno, name);
      fell++;
    } else if (f[k].value < min) {
      fprintf(stderr, "%s:%d: %s fell to %d (the floor is %d)\n", path, lineno, name, f[k].value, min);
      fell++;
    }
  }
  fclose(in);
  if (!fell) printf("coverage: every figure at or above %s\n", path);
  return fell ? 1 : 0;
}

int ops_coverage(bool list, const char *floor_path) {
  coverage c = {.nops = alloy_op_count()};
  c.cov = calloc((size_t)c.nops, sizeof *c.cov);
  alloy_kernel *kernels = malloc(sizeof *kernels * 8192);
  c.kernel_ops = malloc(sizeof *c.kernel_ops * 8192);
  if (!c.cov || !kernels || !c.kernel_ops) {
    fprintf(stderr, "alloy ops: out of memory\n");
    free(c.cov);
    free(kernels);
    free(c.kernel_ops);
    return 1;
  }
  c.nkernels = ref_kernels_join(kernels, 8192);
  for (int i = 0; i < c.nkernels; i++) c.kernel_ops[i] = kernels[i].op;
  qsort(c.kernel_ops, (size_t)c.nkernels, sizeof *c.kernel_ops, cmp_str);

  row kinds[ALLOY_OP_KIND_COUNT] = {0}, all = {.label = "all of PyTorch's table"};
  row tags[sizeof tag_rows / sizeof *tag_rows] = {0};
  row table = {.label = "decomposition table"}, core_table = {.label = "core_aten_decompositions()"};
  row table_fv = {.label = "  its functional and view ops"};
  row own = {.label = "Alloy's own (Python operators)"};
  for (int k = 0; k < ALLOY_OP_KIND_COUNT; k++)
    snprintf(kinds[k].label, sizeof kinds[k].label, "%s", alloy_op_kind_name((alloy_op_kind)k));
  for (size_t t = 0; t < sizeof tag_rows / sizeof *tag_rows; t++)
    snprintf(tags[t].label, sizeof tags[t].label, "%s", tag_rows[t].name);
  for (int i = 0; i < c.nops; i++) {
    const alloy_op *op = alloy_op_by_id(i);
    const op_cov *v = assess(&c, op);
    const char *name = alloy_op_name(op);
    if (strncmp(name, "aten.", 5) && strncmp(name, "prims.", 6)) {
      row_add(&own, v);
      continue;
    }
    row_add(&all, v);
    row_add(&kinds[alloy_op_kind_of(op)], v);
    for (size_t t = 0; t < sizeof tag_rows / sizeof *tag_rows; t++)
      if (alloy_op_tags(op) & tag_rows[t].tag) row_add(&tags[t], v);
    if (op->pt_decomp) {
      row_add(&table, v);
      alloy_op_kind k = alloy_op_kind_of(op);
      if (k == ALLOY_OP_FUNCTIONAL || k == ALLOY_OP_VIEW) row_add(&table_fv, v);
    }
    if (op->pt_core_decomp) row_add(&core_table, v);
  }

  printf("ATen and prims overloads known: %d (PyTorch 2.11 lists 3978: 3852 ATen, 126 prims)\n\n",
         all.known);
  printf("  %-30s %6s %6s %6s %6s %8s %6s\n", "", "known", "shape", "rule", "kernel", "via-twin",
         "runs");
  printf("by kind:\n");
  for (int k = 0; k < ALLOY_OP_KIND_COUNT; k++) row_print(&kinds[k]);
  row_print(&all);
  printf("by tag:\n");
  for (size_t t = 0; t < sizeof tag_rows / sizeof *tag_rows; t++) row_print(&tags[t]);
  printf("PyTorch's decomposition tables:\n");
  row_print(&table);
  row_print(&table_fv);
  row_print(&core_table);
  printf("other:\n");
  row_print(&own);
  printf("\n(shape: a shape function; rule: a decomposition rule; kernel: a ref kernel; via-twin:\n"
         " functionalization makes it a functional op that runs; runs: runs on ref)\n");

  /* What does not run, grouped by the first words of the reason. */
  int notrun = 0;
  for (int i = 0; i < c.nops; i++) notrun += c.cov[i].how == HOW_NOT;
  printf("\n%d overloads do not run%s\n", notrun, list ? ":" : " (list them with -v)");
  if (list)
    for (int i = 0; i < c.nops; i++)
      if (c.cov[i].how == HOW_NOT)
        printf("  %-56s %s\n", alloy_op_name(alloy_op_by_id(i)), c.cov[i].why);

  figure f[64];
  int nf = 0;
  figure_set(f, &nf, "known", all.known);
  figure_set(f, &nf, "runs", all.runs);
  for (int k = 0; k < ALLOY_OP_KIND_COUNT; k++) {
    char name[64];
    snprintf(name, sizeof name, "%s.runs", alloy_op_kind_name((alloy_op_kind)k));
    figure_set(f, &nf, name, kinds[k].runs);
  }
  figure_set(f, &nf, "decomp_table.runs", table.runs);
  figure_set(f, &nf, "decomp_table.functional_view.runs", table_fv.runs);
  figure_set(f, &nf, "core_decomp.runs", core_table.runs);
  figure_set(f, &nf, "core.runs", tags[0].runs);
  int rc = floor_path ? check_floor(floor_path, f, nf) : 0;
  free(c.cov);
  free(kernels);
  free(c.kernel_ops);
  return rc;
}
