/*
 * conformance/report.h: the --json and --junit reports of `alloy conform`
 * (report.c).
 */
#ifndef ALLOY_CONFORM_REPORT_H
#define ALLOY_CONFORM_REPORT_H

#include "alloy/error.h"

typedef enum report_verdict { REPORT_PASSED = 0, REPORT_FAILED = 1, REPORT_SKIPPED = 2 } report_verdict;

typedef struct conform_report conform_report;

/* NULL (and no error) when neither file is asked for. */
alloy_error *report_open(const char *json_path, const char *junit_path, conform_report **out);
/* Records one test (its source's name and number, op, dtype, variant, and
 * the seconds it took); r may be NULL (nothing recorded). A known failure
 * is recorded as passed, with why saying so. Skipped tests are counted by
 * source and reason for JUnit, where one testcase stands for each group. */
void report_case(conform_report *r, const char *source, long id, const char *op,
                 const char *dtype, const char *variant, report_verdict v, const char *why,
                 double seconds);
/* Writes the JUnit file, closes everything, frees r (may be NULL). */
alloy_error *report_close(conform_report *r, const char *suite);

#endif
