/*
 * conformance/golden.h: the golden-corpus runner behind `alloy conform`.
 *
 * Each case of ../shared/golden/ops/ops.jsonl becomes a one-node graph
 * (tensor arguments are graph inputs, the rest literal arguments) and is
 * checked against what PyTorch 2.11 recorded. The "meta" backend checks only
 * what shape inference can know: each output's kind, dtype and shape (an
 * unbacked, data-dependent size matches any size).
 */
#ifndef ALLOY_CONFORM_GOLDEN_H
#define ALLOY_CONFORM_GOLDEN_H

#include <stdbool.h>
#include <stdio.h>

typedef struct conform_options {
  const char *backend;        /* "meta" */
  const char *golden_dir;     /* holds ops/ops.jsonl */
  const char *ops_glob;       /* fnmatch pattern on the op name, or NULL */
  const char *dtype;          /* only cases of this sample dtype, or NULL */
  const char *set;            /* "core" or "noncore": only those cases, or NULL */
  const char *known_failures; /* file of "<case id> <op>  # reason" lines */
  bool verbose;               /* also print passing cases */
  int decompose;              /* alloy_decompose_level: forced decomposition */
  bool no_fork;               /* run cases in this process (for debuggers) */
  const char *json;           /* --json FILE: one JSON object per case, or NULL */
  const char *junit;          /* --junit FILE: JUnit XML, or NULL */
} conform_options;

/* Runs the suite, printing one line per failure and then the totals line
 * "N passed, N failed, N skipped"; returns the process exit status. */
int conform_run(const conform_options *o, FILE *out);

#endif
