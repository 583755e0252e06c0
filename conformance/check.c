/*
 * conformance/check.c: what every source of tests does the same way:
 * compile a graph on a backend (alone, or beside the reference backend so
 * that partition boundaries appear), run it, keep its outputs, time it for
 * --perf, compare outputs under the tolerances of compare.c, and write a
 * repro of a failure (an .air file and a safetensors file of its inputs and
 * expected outputs) that `alloy conform --replay` runs again.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "conformance/compare.h"
#include "conformance/suite.h"
#include "ir/graph_internal.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int64_t numel_of(const int64_t *sizes, int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= sizes[d];
  return n;
}

alloy_host_tensor conform_tensor_host(const conform_tensor *t) {
  return (alloy_host_tensor){sizeof(alloy_host_tensor), t->dtype, t->rank, t->sizes, t->data};
}

alloy_st_entry conform_tensor_entry(const conform_tensor *t, const char *name) {
  alloy_st_entry e = {.name = name, .dtype = t->dtype, .rank = t->rank, .data = t->data};
  for (int d = 0; d < t->rank; d++) e.shape[d] = t->sizes[d];
  e.nbytes = (size_t)numel_of(t->sizes, t->rank) * alloy_dtype_size(t->dtype);
  return e;
}

void conform_tensors_free(conform_tensor *t, int n) {
  for (int k = 0; k < n; k++) {
    free(t[k].data);
    t[k].data = NULL;
  }
}

/* Copies the runtime's outputs (owned by the program until its next run)
 * into tensors the caller owns. */
static bool keep_outputs(const alloy_host_tensor *res, conform_tensor *got, int nout) {
  for (int k = 0; k < nout; k++) {
    conform_tensor *t = &got[k];
    t->dtype = res[k].dtype;
    t->rank = res[k].rank > 8 ? 8 : res[k].rank;
    for (int d = 0; d < t->rank; d++) t->sizes[d] = res[k].sizes[d];
    size_t n = (size_t)numel_of(t->sizes, t->rank) * alloy_dtype_size(t->dtype);
    t->data = malloc(n ? n : 1);
    if (!t->data) return false;
    if (n) memcpy(t->data, res[k].data, n);
  }
  return true;
}

static bool not_claimed(const alloy_error *e) {
  return alloy_error_code_of(e) == ALLOY_ERR_UNSUPPORTED &&
         strstr(alloy_error_message(e), "does not claim");
}

conform_env conform_oracle_env(const conform_env *env, conform_options *o) {
  *o = *env->o;
  o->decompose = ALLOY_DECOMPOSE_AUTO;
  conform_env oracle = *env;
  oracle.o = o;
  return oracle;
}

static bool decomposition_failed(const alloy_error *e) {
  const char *m = alloy_error_message(e);
  return !strncmp(m, "decomposing node", 16) || !strncmp(m, "the rule for", 12);
}

conform_verdict conform_run_graph(conform_env *env, int backend, const alloy_graph *g,
                                  bool mixture, const alloy_host_tensor *inputs, int ninputs,
                                  conform_tensor *got, int nout, double *seconds, char *why,
                                  size_t cap) {
  alloy_program_options po = {.struct_size = sizeof po,
                              .decompose = (alloy_decompose_level)env->o->decompose};
  alloy_program *prog = NULL;
  alloy_mixture *mix = NULL;
  alloy_error *e;
  if (mixture) {
    /* Free moves leave the priority choice standing: the backend takes
     * every node it claims and ref the rest, so boundaries fall where the
     * claims stop (the default cost model gives a small graph wholly to one
     * backend). */
    po.partition_launch_s = po.link_bytes_per_s = -1;
    int list[2] = {backend, env->ref};
    e = alloy_mixture_compile(env->rt, list, backend == env->ref ? 1 : 2, g, &po, &mix);
  } else {
    e = alloy_program_compile_ex(env->rt, backend, g, &po, &prog);
  }
  if (e && not_claimed(e)) {
    snprintf(why, cap, "not claimed by the backend (%s)", alloy_error_message(e));
    alloy_error_free(e);
    return CONFORM_SKIP;
  }
  if (e && !env->o->decompose && backend != env->ref && decomposition_failed(e)) {
    /* The backend left the op to Alloy's decompositions, which cannot take
     * this input: not the backend's fault, and not runnable on it. Forced
     * decomposition (--decompose) tests the rules, and fails instead. */
    snprintf(why, cap, "not claimed, and its decomposition fails here (%s)", alloy_error_message(e));
    alloy_error_free(e);
    return CONFORM_SKIP;
  }
  alloy_host_tensor res[16];
  if (nout > 16) nout = 16;
  for (int k = 0; k < nout; k++) res[k].struct_size = sizeof res[k];
  double t0 = now_s();
  if (!e)
    e = mix ? alloy_mixture_run(mix, inputs, ninputs, res, nout)
            : alloy_program_run(prog, inputs, ninputs, res, nout);
  if (!e && seconds) {
    /* The first run compiled any specialization; time the ones after it. */
    int runs = 0;
    double start = now_s(), t = start;
    while (!e && (runs < 2 || t - start < 0.02) && runs < 1000) {
      e = mix ? alloy_mixture_run(mix, inputs, ninputs, res, nout)
              : alloy_program_run(prog, inputs, ninputs, res, nout);
      runs++;
      t = now_s();
    }
    *seconds = runs ? (t - start) / runs : t - t0;
  }
  conform_verdict v = CONFORM_PASS;
  if (e) {
    snprintf(why, cap, "%s", alloy_error_message(e));
    alloy_error_free(e);
    v = CONFORM_FAIL;
  } else if (!keep_outputs(res, got, nout)) {
    snprintf(why, cap, "out of memory keeping the outputs");
    conform_tensors_free(got, nout);
    v = CONFORM_FAIL;
  }
  alloy_program_release(prog);
  alloy_mixture_release(mix);
  return v;
}

bool conform_outputs_match(const char *op, const conform_tensor *got, const conform_tensor *want,
                           int n, bool values, const conform_tensor *self, int64_t dim,
                           char *why, size_t cap) {
  for (int k = 0; k < n; k++) {
    alloy_host_tensor h = conform_tensor_host(&got[k]);
    alloy_st_entry w = conform_tensor_entry(&want[k], "expected");
    char msg[768] = "";
    bool same_type = got[k].dtype == want[k].dtype && got[k].rank == want[k].rank;
    for (int d = 0; same_type && d < got[k].rank; d++) same_type = got[k].sizes[d] == want[k].sizes[d];
    if (!values && same_type) continue;
    if (values && conform_compare(op, &h, &w, msg, sizeof msg)) continue;
    if (values && self && conform_op_has_ties(op)) {
      alloy_st_entry s = conform_tensor_entry(self, "self");
      if (conform_ties_ok(op, &h, &w, &s, dim)) continue;
    }
    if (!msg[0]) {
      char a[128], b[128];
      alloy_value_type_print(ALLOY_VALUE_TENSOR, got[k].dtype, NULL, 0, a, sizeof a);
      alloy_value_type_print(ALLOY_VALUE_TENSOR, want[k].dtype, NULL, 0, b, sizeof b);
      snprintf(msg, sizeof msg, "got %s of rank %d, expected %s of rank %d", a, (int)got[k].rank,
               b, (int)want[k].rank);
    }
    if (n > 1) snprintf(why, cap, "output %d: %s", k, msg);
    else snprintf(why, cap, "%s", msg);
    return false;
  }
  return true;
}

/* ---- repro files ------------------------------------------------------- */

/* A file-name-safe form of the test's name. */
static void repro_stem(const conform_test *t, char *buf, size_t cap) {
  size_t n = (size_t)snprintf(buf, cap, "%s-%s-%ld-%s", t->source->name, t->op, t->index,
                              t->dtype[0] ? t->dtype : "any");
  for (size_t i = 0; i < n && i < cap; i++)
    if (!((buf[i] >= 'a' && buf[i] <= 'z') || (buf[i] >= 'A' && buf[i] <= 'Z') ||
          (buf[i] >= '0' && buf[i] <= '9') || buf[i] == '-' || buf[i] == '.'))
      buf[i] = '_';
}

bool conform_repro_wanted(const conform_env *env, conform_verdict v) {
  return env->o->repro_dir && (v == CONFORM_FAIL || env->repro_why);
}

void conform_repro_path(const conform_options *o, const conform_test *t, char *path, size_t cap) {
  char stem[256];
  path[0] = 0;
  if (!o->repro_dir) return;
  repro_stem(t, stem, sizeof stem);
  snprintf(path, cap, "%s/%s.air", o->repro_dir, stem);
}

void conform_repro_write(const conform_env *env, const conform_test *t, const alloy_graph *g,
                         const alloy_host_tensor *inputs, int ninputs,
                         const conform_tensor *expected, int nexpected, const char *why,
                         char *path, size_t cap) {
  const conform_options *o = env->o;
  path[0] = 0;
  if (!o->repro_dir) return;
  if (env->repro_why) why = env->repro_why;
  if (mkdir(o->repro_dir, 0777) != 0 && errno != EEXIST) return;
  char stem[256], file[4096];
  repro_stem(t, stem, sizeof stem);
  char *text = NULL;
  alloy_error *e = alloy_air_print(g, &text);
  if (e) {
    alloy_error_free(e);
    return;
  }
  snprintf(file, sizeof file, "%s/%s.air", o->repro_dir, stem);
  FILE *f = fopen(file, "w");
  if (!f) {
    free(text);
    return;
  }
  /* The header is comments, so the file stays a plain .air graph; replay
   * reads the op (for its tolerance) from it. */
  fprintf(f, "# alloy conform repro: %s %s #%ld [%s] %s\n", t->source->name, t->op, t->index,
          t->dtype, t->variant);
  fprintf(f, "# op: %s\n", t->op);
  fprintf(f, "# %s", why[0] ? "failed: " : "passed");
  for (const char *p = why; *p; p++) fputc(*p == '\n' ? ' ' : *p, f);
  fprintf(f, "\n# rerun: alloy conform --backend %s --replay %s\n", o->backend, file);
  fputs(text, f);
  free(text);
  bool ok = fclose(f) == 0;
  alloy_st_tensor st[80];
  char names[80][24];
  int n = 0;
  for (int i = 0; i < ninputs && n < 64; i++, n++) {
    snprintf(names[n], sizeof names[n], "input.%d", i);
    int64_t numel = numel_of(inputs[i].sizes, inputs[i].rank);
    st[n] = (alloy_st_tensor){names[n], inputs[i].dtype, inputs[i].rank, inputs[i].sizes,
                              inputs[i].data, (size_t)numel * alloy_dtype_size(inputs[i].dtype)};
  }
  for (int k = 0; k < nexpected && n < 80; k++, n++) {
    snprintf(names[n], sizeof names[n], "expected.%d", k);
    alloy_st_entry w = conform_tensor_entry(&expected[k], names[n]);
    st[n] = (alloy_st_tensor){names[n], w.dtype, w.rank, expected[k].sizes, w.data, w.nbytes};
  }
  char data[4096];
  snprintf(data, sizeof data, "%s/%s.safetensors", o->repro_dir, stem);
  if (ok && !(e = alloy_safetensors_write(data, st, n))) {
    snprintf(path, cap, "%s", file);
    return;
  }
  alloy_error_free(e);
}

bool conform_within_bound(const char *op, const conform_tensor *got, const conform_tensor *want,
                          const conform_tensor *mag, double scale, char *why, size_t cap) {
  if (got->dtype != want->dtype || got->rank != want->rank || mag->rank != want->rank) return false;
  conform_tolerance tol = conform_tolerance_for(op, want->dtype);
  alloy_st_entry g = conform_tensor_entry(got, "got"), w = conform_tensor_entry(want, "want"),
                 m = conform_tensor_entry(mag, "mag");
  int64_t n = numel_of(want->sizes, want->rank);
  if (numel_of(got->sizes, got->rank) != n) return false;
  for (int64_t i = 0; i < n; i++) {
    double x = conform_load(&g, i), y = conform_load(&w, i), b = conform_load(&m, i);
    /* Equal values pass (infinities of one sign too: their difference is NaN). */
    if ((isnan(x) && isnan(y)) || x == y) continue;
    double allowed = tol.atol + tol.rtol * fabs(y) + scale * fabs(b);
    /* Where the sum of |terms| overflows the dtype the bound says nothing:
     * a sum in the dtype may meet inf - inf and give NaN where ref's sum in
     * double stays finite until it is rounded to inf. */
    if (isinf(allowed)) continue;
    if (!(fabs(x - y) <= allowed)) {
      snprintf(why, cap, "element %lld: got %.9g, expected %.9g: off by %.3g, over the bound %.3g "
               "for a sum of products in any order", (long long)i, x, y, fabs(x - y), allowed);
      return false;
    }
  }
  return true;
}
