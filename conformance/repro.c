/*
 * conformance/repro.c: `alloy conform --replay FILE.air` as a source of one
 * test. A repro (check.c writes them to --repro-dir) is an .air graph whose
 * header comments name the op, beside FILE.safetensors with its inputs
 * ("input.<k>") and the expected outputs ("expected.<k>": the reference
 * backend's or PyTorch's). Replaying runs the graph on the backend and
 * compares under the op's tolerance; without expected outputs the
 * reference backend computes them.
 */
#include <stdlib.h>
#include <string.h>

#include "alloy/graph.h"
#include "conformance/suite.h"

typedef struct replay_state {
  char op[256];
  bool mixture; /* the failing test ran beside ref */
} replay_state;

static char *read_text(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (text && fread(text, 1, (size_t)n, f) != (size_t)n) {
    free(text);
    text = NULL;
  }
  fclose(f);
  if (text) text[n] = 0, *len = (size_t)n;
  return text;
}

static alloy_error *replay_list(conform_source *src, const conform_options *o, conform_suite *suite) {
  if (!o->replay) return NULL;
  replay_state *rs = calloc(1, sizeof *rs);
  if (!rs) return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  src->self = rs;
  size_t len;
  char *text = read_text(o->replay, &len);
  if (!text) return alloy_error_new(ALLOY_ERR_IO, "%s: cannot read", o->replay);
  const char *eol = strchr(text, '\n');
  const char *mix = strstr(text, "beside ref");
  rs->mixture = mix && eol && mix < eol; /* said on the first line */
  const char *op = strstr(text, "\n# op: ");
  if (op) sscanf(op + 7, "%255s", rs->op);
  else snprintf(rs->op, sizeof rs->op, "%s", o->replay);
  conform_test t = {.source = src, .index = 0, .op = rs->op, .set = 0};
  /* The dtype, from the first line's "[float32]", as the failing test had it. */
  const char *lb = strchr(text, '['), *rb = lb ? strchr(lb, ']') : NULL;
  if (lb && rb && eol && rb < eol && rb - lb - 1 < (long)sizeof t.dtype)
    snprintf(t.dtype, sizeof t.dtype, "%.*s", (int)(rb - lb - 1), lb + 1);
  free(text);
  snprintf(t.variant, sizeof t.variant, "replay");
  return conform_suite_add(suite, &t) ? NULL : alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
}

static conform_verdict replay_check(const conform_source *src, const conform_test *t,
                                    conform_env *env, conform_result *res) {
  const replay_state *rs = src->self;
  const conform_options *o = env->o;
  char *why = res->why;
  size_t cap = sizeof res->why;
  size_t len;
  char *text = read_text(o->replay, &len);
  if (!text) return snprintf(why, cap, "%s: cannot read", o->replay), CONFORM_FAIL;
  alloy_graph *g = NULL;
  alloy_error *e = alloy_air_parse(text, len, o->replay, &g);
  free(text);
  char data[4096];
  snprintf(data, sizeof data, "%.*s.safetensors", (int)(strlen(o->replay) - (strstr(o->replay, ".air") ? 4 : 0)),
           o->replay);
  alloy_safetensors *st = NULL;
  if (!e) e = alloy_safetensors_open(data, &st);
  if (e) {
    snprintf(why, cap, "%s", alloy_error_message(e));
    alloy_error_free(e);
    alloy_graph_free(g);
    return CONFORM_FAIL;
  }
  int nin = alloy_graph_num_inputs(g), nout = alloy_graph_num_outputs(g);
  if (nin > 64 || nout > 16) nin = 64, nout = 16;
  alloy_host_tensor in[64];
  conform_tensor want[16] = {{0}}, got[16] = {{0}};
  conform_verdict v = CONFORM_PASS;
  for (int k = 0; k < nin && v == CONFORM_PASS; k++) {
    char name[32];
    snprintf(name, sizeof name, "input.%d", k);
    const alloy_st_entry *x = alloy_safetensors_find(st, name);
    if (!x) {
      snprintf(why, cap, "%.900s: no tensor '%s' for graph input %d", data, name, k);
      v = CONFORM_FAIL;
      break;
    }
    in[k] = (alloy_host_tensor){sizeof in[k], x->dtype, x->rank, x->shape, (void *)x->data};
  }
  int nwant = 0;
  for (int k = 0; k < nout && v == CONFORM_PASS; k++) {
    char name[32];
    snprintf(name, sizeof name, "expected.%d", k);
    const alloy_st_entry *w = alloy_safetensors_find(st, name);
    if (!w) break;
    want[k] = (conform_tensor){w->dtype, w->rank, {0}, NULL};
    for (int d = 0; d < w->rank && d < 8; d++) want[k].sizes[d] = w->shape[d];
    size_t n = w->nbytes;
    if ((want[k].data = malloc(n ? n : 1)) && n) memcpy(want[k].data, w->data, n);
    nwant++;
  }
  if (v == CONFORM_PASS && nwant < nout) {
    /* No recorded outputs: the oracle computes them. */
    conform_tensors_free(want, nwant);
    conform_options oo;
    conform_env oracle = conform_oracle_env(env, &oo);
    v = conform_run_graph(&oracle, env->ref, g, false, in, nin, want, nout, NULL, why, cap);
    if (v != CONFORM_PASS) v = CONFORM_FAIL;
  }
  if (v == CONFORM_PASS)
    v = conform_run_graph(env, env->backend, g, rs->mixture, in, nin, got, nout, NULL, why, cap);
  if (v == CONFORM_PASS && !conform_outputs_match(t->op, got, want, nout, true, NULL, -1, why, cap))
    v = CONFORM_FAIL;
  conform_tensors_free(want, nout);
  conform_tensors_free(got, nout);
  alloy_safetensors_close(st);
  alloy_graph_free(g);
  return v;
}

static void replay_rerun(const conform_source *src, const conform_test *t, char *buf, size_t cap) {
  (void)src, (void)t;
  snprintf(buf, cap, "the same command");
}

static void replay_close(conform_source *src) {
  free(src->self);
  src->self = NULL;
}

conform_source conform_replay_source(void) {
  return (conform_source){.name = "replay", .list = replay_list, .check = replay_check,
                          .rerun = replay_rerun, .close = replay_close};
}
