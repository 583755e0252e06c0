/*
 * tests/testzip.h: ZIP archives built in memory with libzip, for the tests
 * that feed the .pt2 importer archives of their own making (test_pt2.c,
 * test_hostile_pt2.c, test_hostile_shapes.c).
 */
#ifndef ALLOY_TEST_ZIP_H
#define ALLOY_TEST_ZIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tz_entry {
  const char *name;
  const void *data; /* borrowed for the call */
  size_t size;
  bool deflate;     /* else stored, as torch.export.save writes */
} tz_entry;

/* The archive of the entries, malloc'd (the caller frees it), its length
 * in *size; NULL when libzip fails. */
uint8_t *tz_archive(const tz_entry *es, int n, size_t *size);

#endif
