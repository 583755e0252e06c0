/*
 * conformance/report.c: machine-readable results of `alloy conform`: one
 * JSON object per case (--json FILE, JSON Lines) and a JUnit XML file
 * (--junit FILE) that CI systems read. Cases are kept in memory for JUnit,
 * whose header carries the totals.
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
} rcase;

struct conform_report {
  FILE *json;
  char *junit_path;
  rcase *cases;
  int n, cap;
  int counts[3];
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

void report_case(conform_report *r, const char *source, long id, const char *op,
                 const char *dtype, const char *variant, report_verdict v, const char *why) {
  if (!r) return;
  r->counts[v]++;
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
  if (r->n == r->cap) {
    int cap = r->cap ? 2 * r->cap : 1024;
    rcase *nc = realloc(r->cases, sizeof *nc * (size_t)cap);
    if (!nc) return;
    r->cases = nc;
    r->cap = cap;
  }
  r->cases[r->n++] = (rcase){id, strdup(source), strdup(op ? op : ""), strdup(dtype ? dtype : ""),
                             strdup(variant ? variant : ""), strdup(why ? why : ""), v};
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
      fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
      fprintf(f, "<testsuites tests=\"%d\" failures=\"%d\" skipped=\"%d\">\n", r->n, r->counts[1],
              r->counts[2]);
      fprintf(f, "  <testsuite name=\"");
      xml_attr(f, suite);
      fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\">\n", r->n, r->counts[1],
              r->counts[2]);
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
        fprintf(f, "\"");
        if (c->verdict == REPORT_PASSED) {
          fprintf(f, "/>\n");
          continue;
        }
        fprintf(f, ">\n      <%s message=\"", c->verdict == REPORT_FAILED ? "failure" : "skipped");
        xml_attr(f, c->why);
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
  free(r->cases);
  free(r->junit_path);
  free(r);
  return e;
}
