/*
 * conformance/report.c: machine-readable results of `alloy conform`: one
 * JSON object per case (--json FILE, JSON Lines) and a JUnit XML file
 * (--junit FILE) that CI systems read. JUnit gets one testcase per test
 * that ran (passed or failed, with its time), and one per reason for the
 * skipped ones, saying how many it stands for: a backend that claims a few
 * ops skips a hundred thousand samples, and one element each made a file
 * of 16 MB that said "not claimed" over and over. The tests that ran are
 * kept in memory until the end, since the header carries the totals.
 */
#include "conformance/report.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rcase {
  long id;
  char *source, *op, *dtype, *variant, *why;
  report_verdict verdict;
  double seconds;
} rcase;

/* Skipped tests of one source and one reason (its opening words). */
typedef struct skip_group {
  char *source, *reason;
  char *example; /* the first such test, "samples 3 aten.abs.default [int64]: why" */
  long count;
  double seconds;
} skip_group;

struct conform_report {
  FILE *json;
  char *junit_path;
  rcase *cases;   /* passed and failed */
  int n, cap;
  skip_group *skips;
  int nskips, skipcap;
  long counts[3];
  double seconds;
};

static const char *const verdict_names[] = {"passed", "failed", "skipped"};

alloy_error *report_open(const char *json_path, const char *junit_path, conform_report **out) {
  *out = NULL;
  if (!json_path && !junit_path) return NULL;
  conform_report *r = calloc(1, sizeof *r);
  if (!r) return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  if (json_path && !(r->json = fopen(json_path, "w"))) {
    free(r);
    return alloy_error_new(ALLOY_ERR_IO, "%s: cannot write", json_path);
  }
  if (junit_path && !(r->junit_path = strdup(junit_path))) {
    if (r->json) fclose(r->json);
    free(r);
    return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  }
  *out = r;
  return NULL;
}

/* The opening words of a skip reason, before the details of one test
 * ("not claimed by the backend (node 0 ...)" -> "not claimed by the backend"):
 * the groups of the "skipped N: reason" lines the suite prints (suite.c). */
static size_t reason_key_len(const char *why) {
  size_t n = strcspn(why, "(:");
  while (n > 0 && why[n - 1] == ' ') n--;
  return n;
}

static void count_skip(conform_report *r, const char *source, long id, const char *op,
                       const char *dtype, const char *why, double seconds) {
  size_t n = reason_key_len(why);
  for (int i = 0; i < r->nskips; i++) {
    skip_group *g = &r->skips[i];
    if (!strcmp(g->source, source) && strlen(g->reason) == n && !strncmp(g->reason, why, n)) {
      g->count++;
      g->seconds += seconds;
      return;
    }
  }
  if (r->nskips == r->skipcap) {
    int cap = r->skipcap ? 2 * r->skipcap : 16;
    skip_group *ng = realloc(r->skips, sizeof *ng * (size_t)cap);
    if (!ng) return;
    r->skips = ng;
    r->skipcap = cap;
  }
  size_t len = strlen(source) + strlen(op) + strlen(dtype) + strlen(why) + 48;
  skip_group g = {strdup(source), strndup(why, n), malloc(len), 1, seconds};
  if (!g.source || !g.reason || !g.example) {
    free(g.source), free(g.reason), free(g.example);
    return;
  }
  snprintf(g.example, len, "%s %ld %s [%s]: %s", source, id, op, dtype, why);
  r->skips[r->nskips++] = g;
}

void report_case(conform_report *r, const char *source, long id, const char *op,
                 const char *dtype, const char *variant, report_verdict v, const char *why,
                 double seconds) {
  if (!r) return;
  r->counts[v]++;
  r->seconds += seconds;
  if (r->json) {
    json_t *o = json_pack("{s:s, s:I, s:s, s:s, s:s, s:s, s:s}", "source", source, "id",
                          (json_int_t)id, "op", op ? op : "", "dtype", dtype ? dtype : "",
                          "variant", variant ? variant : "", "result", verdict_names[v],
                          "message", why ? why : "");
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    if (text) fprintf(r->json, "%s\n", text);
    free(text);
    json_decref(o);
  }
  if (!r->junit_path) return;
  if (v == REPORT_SKIPPED) {
    count_skip(r, source, id, op ? op : "", dtype ? dtype : "", why ? why : "", seconds);
    return;
  }
  if (r->n == r->cap) {
    int cap = r->cap ? 2 * r->cap : 1024;
    rcase *nc = realloc(r->cases, sizeof *nc * (size_t)cap);
    if (!nc) return;
    r->cases = nc;
    r->cap = cap;
  }
  r->cases[r->n++] = (rcase){id, strdup(source), strdup(op ? op : ""), strdup(dtype ? dtype : ""),
                             strdup(variant ? variant : ""), strdup(why ? why : ""), v, seconds};
}

/* Text for an XML attribute. */
static void xml_attr(FILE *f, const char *s) {
  for (; s && *s; s++) {
    switch (*s) {
      case '&': fputs("&amp;", f); break;
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '"': fputs("&quot;", f); break;
      case '\'': fputs("&apos;", f); break;
      case '\n': fputs("&#10;", f); break;
      default:
        if ((unsigned char)*s >= 0x20 || *s == '\t') fputc(*s, f);
    }
  }
}

alloy_error *report_close(conform_report *r, const char *suite) {
  if (!r) return NULL;
  alloy_error *e = NULL;
  if (r->json && fclose(r->json) != 0) e = alloy_error_new(ALLOY_ERR_IO, "cannot write the JSON report");
  if (r->junit_path) {
    FILE *f = fopen(r->junit_path, "w");
    if (!f) {
      if (!e) e = alloy_error_new(ALLOY_ERR_IO, "%s: cannot write", r->junit_path);
    } else {
      /* The header counts every test; a skipped group stands for count of them. */
      long tests = r->counts[0] + r->counts[1] + r->counts[2];
      fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
      fprintf(f, "<testsuites tests=\"%ld\" failures=\"%ld\" skipped=\"%ld\" time=\"%.3f\">\n", tests,
              r->counts[1], r->counts[2], r->seconds);
      fprintf(f, "  <testsuite name=\"");
      xml_attr(f, suite);
      fprintf(f, "\" tests=\"%ld\" failures=\"%ld\" errors=\"0\" skipped=\"%ld\" time=\"%.3f\">\n",
              tests, r->counts[1], r->counts[2], r->seconds);
      for (int i = 0; i < r->n; i++) {
        rcase *c = &r->cases[i];
        fprintf(f, "    <testcase classname=\"");
        xml_attr(f, c->op);
        fprintf(f, "\" name=\"");
        xml_attr(f, c->source);
        fprintf(f, " %ld [", c->id);
        xml_attr(f, c->dtype);
        fprintf(f, "]");
        if (c->variant[0]) fputc(' ', f);
        xml_attr(f, c->variant);
        fprintf(f, "\" time=\"%.4f\"", c->seconds);
        if (c->verdict == REPORT_PASSED) {
          fprintf(f, "/>\n");
          continue;
        }
        fprintf(f, ">\n      <failure message=\"");
        xml_attr(f, c->why);
        fprintf(f, "\"/>\n    </testcase>\n");
      }
      for (int i = 0; i < r->nskips; i++) {
        skip_group *g = &r->skips[i];
        fprintf(f, "    <testcase classname=\"skipped\" name=\"");
        xml_attr(f, g->source);
        fprintf(f, ": %ld skipped: ", g->count);
        xml_attr(f, g->reason);
        fprintf(f, "\" time=\"%.4f\">\n      <skipped message=\"%ld tests skipped: ", g->seconds, g->count);
        xml_attr(f, g->reason);
        fprintf(f, "; the first: ");
        xml_attr(f, g->example);
        fprintf(f, "\"/>\n    </testcase>\n");
      }
      fprintf(f, "  </testsuite>\n</testsuites>\n");
      if (fclose(f) != 0 && !e) e = alloy_error_new(ALLOY_ERR_IO, "%s: cannot write", r->junit_path);
    }
  }
  for (int i = 0; i < r->n; i++) {
    free(r->cases[i].source);
    free(r->cases[i].op);
    free(r->cases[i].dtype);
    free(r->cases[i].variant);
    free(r->cases[i].why);
  }
  for (int i = 0; i < r->nskips; i++) {
    free(r->skips[i].source);
    free(r->skips[i].reason);
    free(r->skips[i].example);
  }
  free(r->skips);
  free(r->cases);
  free(r->junit_path);
  free(r);
  return e;
}
