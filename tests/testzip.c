/*
 * tests/testzip.c: ZIP archives built in memory (testzip.h).
 */
#include "testzip.h"

#include <stdio.h>
#include <stdlib.h>
#include <zip.h>

uint8_t *tz_archive(const tz_entry *es, int n, size_t *size) {
  zip_error_t ze;
  zip_error_init(&ze);
  zip_source_t *src = zip_source_buffer_create(NULL, 0, 0, &ze);
  zip_source_keep(src);
  zip_t *za = zip_open_from_source(src, ZIP_TRUNCATE, &ze);
  for (int i = 0; za && i < n; i++) {
    zip_source_t *s = zip_source_buffer(za, es[i].data, es[i].size, 0);
    zip_int64_t idx = zip_file_add(za, es[i].name, s, ZIP_FL_ENC_UTF_8);
    zip_set_file_compression(za, (zip_uint64_t)idx, es[i].deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE,
                             es[i].deflate ? 1 : 0);
  }
  uint8_t *buf = NULL;
  if (za && zip_close(za) == 0 && zip_source_open(src) == 0) {
    zip_source_seek(src, 0, SEEK_END);
    *size = (size_t)zip_source_tell(src);
    zip_source_seek(src, 0, SEEK_SET);
    buf = malloc(*size ? *size : 1);
    if (buf) zip_source_read(src, buf, *size);
    zip_source_close(src);
  }
  zip_source_free(src);
  zip_error_fini(&ze);
  return buf;
}
