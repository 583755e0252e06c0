/*
 * tests/chooser/chooser.c: the testing backend "chooser": the reference
 * backend's kernels behind a claim step that the environment decides, so
 * that CI runs real mixtures on the CPU with any claims it likes. Loaded by
 * dlopen like any vendor plugin (liballoy-chooser.so, built into
 * <build>/tests/plugins/).
 *
 * $ALLOY_CHOOSER says what it claims, among the nodes the reference kernels
 * can run:
 *   ops=GLOB[,GLOB...]     nodes whose op name matches one of the globs
 *   random=SEED:PERCENT    each node with that probability, decided by a
 *                          hash of the seed and the node's output name
 *   (unset or empty)       everything the reference kernels run
 * A claimed node costs what the reference backend says it costs, so with
 * free transfers (--cost-model free) the priority choice stands. Two knobs
 * change that, to play a vendor whose estimates differ from the
 * reference's (tests/test_claims.c):
 *   ALLOY_CHOOSER_COST=SECONDS   every claim costs that many seconds
 *   ALLOY_CHOOSER_SCALE=F        the cost (the reference's estimate, or the
 *                                one above) is multiplied by F
 * A node it leaves is rejected with a reason (host->claims_reject, ABI
 * 1.2) that says which setting left it, for `alloy partition` to show.
 *
 * Since its kernels are the reference backend's, a graph run as a mixture
 * of chooser and ref must give exactly what ref gives alone, whatever the
 * claims: tests/test_mixture.c relies on that.
 */
#include <fnmatch.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference_backend/ref.h"

static alloy_kernel all_kernels[4096];
static alloy_kernel_table table;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_build(void) {
  int n = ref_kernels_join(all_kernels, (int)(sizeof all_kernels / sizeof *all_kernels));
  table = (alloy_kernel_table){.struct_size = sizeof(alloy_kernel_table), .name = "chooser",
                               .vendor = "Alloy tests", .version = "0.1.0",
                               .kernels = all_kernels, .count = n};
}

/* The host table the kernel-table helper sees: the real one, except that
 * claims_add keeps only what $ALLOY_CHOOSER chooses. The graph being
 * claimed travels in a thread-local, as claims_add has only the index. */
static const alloy_host_api *real_host;
static alloy_host_api filtered_host;
static const alloy_plugin_api *kt_api;
static alloy_plugin_api api;
static _Thread_local const alloy_graph *claiming;

static uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

static bool chosen(const alloy_graph *g, int i) {
  const char *spec = getenv("ALLOY_CHOOSER");
  if (!spec || !*spec) return true;
  const alloy_node *n = real_host->graph_node(g, i);
  const char *op = real_host->node_op_name(n);
  if (!strncmp(spec, "ops=", 4)) {
    char globs[1024];
    snprintf(globs, sizeof globs, "%s", spec + 4);
    for (char *save = NULL, *gl = strtok_r(globs, ",", &save); gl; gl = strtok_r(NULL, ",", &save))
      if (!fnmatch(gl, op, 0)) return true;
    return false;
  }
  unsigned long long seed = 0;
  unsigned percent = 0;
  if (sscanf(spec, "random=%llu:%u", &seed, &percent) == 2) {
    /* Decided by the node's output name, which a partition extracted from
     * the graph keeps: the claim must be the same on the whole graph and on
     * the partition later compiled. */
    const char *name = real_host->node_num_outputs(n)
                           ? real_host->value_name(real_host->node_output(n, 0)) : op;
    uint64_t h = mix(seed * 0x9E3779B97F4A7C15ull);
    for (const char *c = name; *c; c++) h = mix(h ^ (unsigned char)*c);
    return h % 100 < percent;
  }
  return false; /* a spec it cannot read claims nothing */
}

/* A positive number from the environment, or 0 when unset or unreadable
 * (read at every claim: tests change them between mixtures). */
static double env_positive(const char *name) {
  const char *s = getenv(name);
  char *end = NULL;
  double x = s && *s ? strtod(s, &end) : 0;
  return end && *end == '\0' && x > 0 ? x : 0;
}

static void chooser_claims_add(alloy_claims *claims, int i, double cost) {
  if (!claiming) return;
  if (!chosen(claiming, i)) {
    /* A host older than 1.2 has no claims_reject: the node is just left. */
    if (ALLOY_HAS_FIELD(real_host, alloy_host_api, claims_reject) && real_host->claims_reject)
      real_host->claims_reject(claims, i, "not chosen by $ALLOY_CHOOSER");
    return;
  }
  double fixed = env_positive("ALLOY_CHOOSER_COST"), scale = env_positive("ALLOY_CHOOSER_SCALE");
  if (fixed > 0) cost = fixed;
  /* A negative cost means "no estimate": scaling must not turn it into one. */
  if (scale > 0 && cost > 0) cost *= scale;
  real_host->claims_add(claims, i, cost);
}

/* A backend sees the host table it is opened with: give it the filtered one. */
static alloy_error *chooser_backend_open(const alloy_host_api *host, alloy_backend **out) {
  (void)host;
  return kt_api->backend_open(&filtered_host, out);
}

static alloy_error *chooser_claim(alloy_backend *be, const alloy_graph *g, alloy_claims *claims) {
  claiming = g;
  alloy_error *e = kt_api->claim(be, g, claims);
  claiming = NULL;
  return e;
}

ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(const alloy_host_api *host);
ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(const alloy_host_api *host) {
  pthread_once(&table_once, table_build);
  real_host = host;
  filtered_host = *host;
  filtered_host.claims_add = chooser_claims_add;
  kt_api = alloy_kernel_table_plugin(&table, &filtered_host);
  if (!kt_api) return NULL;
  api = *kt_api;
  api.backend_open = chooser_backend_open;
  api.claim = chooser_claim;
  return &api;
}
