/*
 * tests/test_safetensors.c: the safetensors reader and writer
 * (ir/safetensors.c): round trips of every dtype and of scalars and empty
 * tensors, the exact bytes Hugging Face's writer produces, every refusal of
 * a malformed file with its message, the writer's checks and its
 * never-a-partial-file promise, and the golden corpus read by the strict
 * reader.
 */
#include "alloy/safetensors.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

/* ---- scratch folders and files ------------------------------------------- */

typedef struct {
  char path[PATH_MAX];
} scratch;

static bool scratch_new(scratch *s) {
  const char *tmp = getenv("TMPDIR");
  snprintf(s->path, sizeof s->path, "%s/alloy-st-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(s->path)) {
    harness_fail(__FILE__, __LINE__, "mkdtemp(%s): %s", s->path, strerror(errno));
    s->path[0] = '\0';
    return false;
  }
  return true;
}

/* Removes the folder and the plain files in it. */
static void scratch_remove(scratch *s) {
  if (!s->path[0]) return;
  DIR *d = opendir(s->path);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char p[PATH_MAX + 256];
    snprintf(p, sizeof p, "%s/%s", s->path, e->d_name);
    if (unlink(p) != 0) rmdir(p);
  }
  if (d) closedir(d);
  if (rmdir(s->path) != 0)
    harness_fail(__FILE__, __LINE__, "rmdir(%s): %s", s->path, strerror(errno));
}

static const char *in(const scratch *s, const char *name) {
  static char bufs[4][PATH_MAX + 64];
  static int next;
  char *b = bufs[next++ % 4];
  snprintf(b, PATH_MAX + 64, "%s/%s", s->path, name);
  return b;
}

/* The whole file, malloc'd; NULL when it cannot be read. */
static uint8_t *slurp(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return buf;
}

static int count_files(const scratch *s) {
  int n = 0;
  DIR *d = opendir(s->path);
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
  if (d) closedir(d);
  return n;
}

/* ---- images built by hand ------------------------------------------------- */

typedef struct {
  uint8_t *bytes;
  size_t size;
} image;

/* 8-byte length, the header text as given, then ndata bytes 0, 1, 2, ... */
static image make_image(const char *header, size_t ndata) {
  size_t hlen = strlen(header);
  image im = {malloc(8 + hlen + ndata + 1), 8 + hlen + ndata};
  for (int i = 0; i < 8; i++) im.bytes[i] = (uint8_t)((uint64_t)hlen >> (8 * i));
  memcpy(im.bytes + 8, header, hlen);
  for (size_t i = 0; i < ndata; i++) im.bytes[8 + hlen + i] = (uint8_t)i;
  return im;
}

/* The error message reading the image gives (freed), or "" when it reads;
 * the image is freed too. */
static const char *read_error(image im) {
  static char msg[1024];
  alloy_safetensors *r = NULL;
  alloy_error *e = alloy_safetensors_open_memory(im.bytes, im.size, "t.st", &r);
  msg[0] = '\0';
  if (e) {
    snprintf(msg, sizeof msg, "%s", alloy_error_message(e));
    CHECK(r == NULL);
  }
  alloy_error_free(e);
  alloy_safetensors_close(r);
  free(im.bytes);
  return msg;
}

static const char *hdr_error(const char *header, size_t ndata) {
  return read_error(make_image(header, ndata));
}

/* ---- round trips ---------------------------------------------------------- */

TEST(st_round_trip_every_dtype) {
  scratch s;
  REQUIRE(scratch_new(&s));
  enum { N = ALLOY_DTYPE_COUNT + 4 };
  alloy_st_tensor ts[N];
  char names[N][32];
  int64_t shapes[N][3];
  uint8_t *data[N];
  int n = 0;
  for (int t = 0; t < ALLOY_DTYPE_COUNT; t++, n++) {
    snprintf(names[n], sizeof names[n], "w.%s", alloy_dtype_name((alloy_dtype)t));
    shapes[n][0] = 2;
    shapes[n][1] = 3;
    size_t nb = 6 * alloy_dtype_size((alloy_dtype)t);
    data[n] = malloc(nb);
    for (size_t i = 0; i < nb; i++) data[n][i] = (uint8_t)(i * 7 + (size_t)t);
    ts[n] = (alloy_st_tensor){names[n], (alloy_dtype)t, 2, shapes[n], data[n], nb};
  }
  /* a zero-dim scalar, zero-size tensors (with and without a data pointer)
   * and a one-byte odd-sized tensor that must not misalign the others */
  static float scalar = 3.5f;
  ts[n++] = (alloy_st_tensor){"scalar", ALLOY_F32, 0, NULL, &scalar, 4};
  shapes[n][0] = 0;
  shapes[n][1] = 4;
  ts[n] = (alloy_st_tensor){"empty.i64", ALLOY_I64, 2, shapes[n], NULL, 0};
  n++;
  shapes[n][0] = 3;
  shapes[n][1] = 0;
  shapes[n][2] = 5;
  ts[n] = (alloy_st_tensor){"empty.bool", ALLOY_BOOL, 3, shapes[n], &scalar, 0};
  n++;
  static const uint8_t odd[3] = {1, 0, 1};
  shapes[n][0] = 3;
  ts[n] = (alloy_st_tensor){"a.odd", ALLOY_BOOL, 1, shapes[n], odd, 3};
  n++;
  REQUIRE(n == N);

  const char *path = in(&s, "all.safetensors");
  CHECK_OK(alloy_safetensors_write(path, ts, n));
  CHECK_INT(count_files(&s), 1); /* no .tmp left behind */

  alloy_safetensors *r = NULL;
  CHECK_OK(alloy_safetensors_open(path, &r));
  REQUIRE(r != NULL);
  CHECK_INT(alloy_safetensors_count(r), n);
  for (int i = 1; i < alloy_safetensors_count(r); i++)
    CHECK(strcmp(alloy_safetensors_entry(r, i - 1)->name, alloy_safetensors_entry(r, i)->name) < 0);
  CHECK(alloy_safetensors_entry(r, -1) == NULL);
  CHECK(alloy_safetensors_entry(r, n) == NULL);
  CHECK(alloy_safetensors_find(r, "nope") == NULL);
  CHECK(alloy_safetensors_find(r, NULL) == NULL);
  for (int i = 0; i < n; i++) {
    const alloy_st_entry *e = alloy_safetensors_find(r, ts[i].name);
    if (!e) {
      harness_fail(__FILE__, __LINE__, "%s is missing", ts[i].name);
      continue;
    }
    CHECK_STR(e->name, ts[i].name);
    CHECK_INT(e->dtype, ts[i].dtype);
    CHECK_INT(e->rank, ts[i].rank);
    for (int d = 0; d < e->rank; d++) CHECK_INT(e->shape[d], ts[i].shape[d]);
    for (int d = e->rank; d < ALLOY_MAX_RANK; d++) CHECK_INT(e->shape[d], 0);
    CHECK_INT(e->nbytes, ts[i].nbytes);
    if (e->nbytes) CHECK(memcmp(e->data, ts[i].data, e->nbytes) == 0);
    /* each tensor lies at a multiple of its element size (up to 8) */
    size_t align = alloy_dtype_size(e->dtype) < 8 ? alloy_dtype_size(e->dtype) : 8;
    if (e->nbytes && (uintptr_t)e->data % align != 0)
      harness_fail(__FILE__, __LINE__, "%s is not %zu-byte aligned", e->name, align);
  }
  alloy_safetensors_close(r);

  /* the same bytes read from memory give the same entries */
  size_t size;
  uint8_t *bytes = slurp(path, &size);
  REQUIRE(bytes != NULL);
  CHECK_OK(alloy_safetensors_open_memory(bytes, size, "mem", &r));
  if (r) {
    CHECK_INT(alloy_safetensors_count(r), n);
    const alloy_st_entry *e = alloy_safetensors_find(r, "w.bfloat16");
    CHECK(e && e->dtype == ALLOY_BF16 && (const uint8_t *)e->data > bytes &&
          (const uint8_t *)e->data < bytes + size);
  }
  alloy_safetensors_close(r);
  free(bytes);
  for (int t = 0; t < ALLOY_DTYPE_COUNT; t++) free(data[t]);
  scratch_remove(&s);
}

/* Byte for byte what Hugging Face's serializer writes (its own tests pin
 * these), so files go both ways. */
TEST(st_writes_the_hugging_face_bytes) {
  scratch s;
  REQUIRE(scratch_new(&s));
  static const float v[6] = {0, 1, 2, 3, 4, 5};
  int64_t shape[4] = {1, 1, 2, 3};
  alloy_st_tensor t = {"attn0", ALLOY_F32, 4, shape, v, sizeof v};
  const char *path = in(&s, "hf.safetensors");
  CHECK_OK(alloy_safetensors_write(path, &t, 1));
  size_t size;
  uint8_t *b = slurp(path, &size);
  REQUIRE(b != NULL);
  static const char want[] =
      "{\"attn0\":{\"dtype\":\"F32\",\"shape\":[1,1,2,3],\"data_offsets\":[0,24]}}       ";
  CHECK_INT(size, 8 + 72 + 24);
  CHECK(size >= 80 && b[0] == 72 && !memcmp(b + 1, "\0\0\0\0\0\0\0", 7));
  CHECK(size >= 80 && memcmp(b + 8, want, 72) == 0);
  CHECK(size == 104 && memcmp(b + 80, v, 24) == 0);
  free(b);

  /* nothing to write: {} and six spaces */
  CHECK_OK(alloy_safetensors_write(path, NULL, 0));
  b = slurp(path, &size);
  REQUIRE(b != NULL);
  CHECK(size == 16 && !memcmp(b, "\x08\0\0\0\0\0\0\0{}      ", 16));
  free(b);
  alloy_safetensors *r = NULL;
  CHECK_OK(alloy_safetensors_open(path, &r));
  CHECK(r && alloy_safetensors_count(r) == 0);
  alloy_safetensors_close(r);
  scratch_remove(&s);
}

TEST(st_header_is_sorted_padded_and_aligned) {
  scratch s;
  REQUIRE(scratch_new(&s));
  static const uint8_t a[3] = {1, 2, 3};
  static const double b[1] = {2.5};
  static const int16_t c[2] = {-1, 7};
  int64_t s3 = 3, s1 = 1, s2 = 2;
  alloy_st_tensor ts[3] = {
      {"c", ALLOY_I16, 1, &s2, c, 4},
      {"a", ALLOY_BOOL, 1, &s3, a, 3},
      {"b", ALLOY_F64, 1, &s1, b, 8},
  };
  const char *path = in(&s, "h.safetensors");
  CHECK_OK(alloy_safetensors_write(path, ts, 3));
  size_t size;
  uint8_t *bytes = slurp(path, &size);
  REQUIRE(bytes != NULL && size > 8);
  uint64_t hlen = 0;
  for (int i = 7; i >= 0; i--) hlen = hlen << 8 | bytes[i];
  CHECK_INT(hlen % 8, 0);
  CHECK_INT(size, 8 + hlen + 15);
  char *h = strndup((const char *)bytes + 8, (size_t)hlen);
  /* keys in name order; data largest element first: b, then c, then a */
  static const char want[] =
      "{\"a\":{\"dtype\":\"BOOL\",\"shape\":[3],\"data_offsets\":[12,15]},"
      "\"b\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]},"
      "\"c\":{\"dtype\":\"I16\",\"shape\":[2],\"data_offsets\":[8,12]}}";
  size_t wl = strlen(want);
  CHECK(hlen >= wl && hlen - wl < 8 && !strncmp(h, want, wl));
  for (size_t i = wl; i < hlen; i++) CHECK(h[i] == ' ');
  free(h);
  free(bytes);
  scratch_remove(&s);
}

/* ---- the writer's refusals ------------------------------------------------- */

/* The message of a failing write (freed), or "". */
static const char *write_error(const char *path, const alloy_st_tensor *ts, int n) {
  static char msg[1024];
  alloy_error *e = alloy_safetensors_write(path, ts, n);
  msg[0] = '\0';
  if (e) snprintf(msg, sizeof msg, "%s", alloy_error_message(e));
  alloy_error_free(e);
  return msg;
}

TEST(st_write_checks_each_tensor) {
  scratch s;
  REQUIRE(scratch_new(&s));
  char path[PATH_MAX + 64];
  snprintf(path, sizeof path, "%s", in(&s, "w.safetensors"));
  float f[6] = {0};
  int64_t shape[17] = {2, 3};
  for (int d = 2; d < 17; d++) shape[d] = 1;
  alloy_st_tensor good = {"x", ALLOY_F32, 2, shape, f, 24};
  alloy_st_tensor t = good;
  char want[PATH_MAX + 256];

  t.nbytes = 20;
  snprintf(want, sizeof want, "%s: tensor 'x': nbytes is 20, but 6 elements of float32 need 24",
           path);
  CHECK_STR(write_error(path, &t, 1), want);
  t = good;
  t.name = "";
  snprintf(want, sizeof want, "%s: tensor 0: the name is empty", path);
  CHECK_STR(write_error(path, &t, 1), want);
  t.name = NULL;
  CHECK_STR(write_error(path, &t, 1), want);
  t = good;
  t.name = "__metadata__";
  snprintf(want, sizeof want, "%s: tensor '__metadata__': the name is reserved for metadata", path);
  CHECK_STR(write_error(path, &t, 1), want);
  t = good;
  t.rank = 17;
  snprintf(want, sizeof want, "%s: tensor 'x': rank 17 is outside [0, 16]", path);
  CHECK_STR(write_error(path, &t, 1), want);
  t.rank = -1;
  snprintf(want, sizeof want, "%s: tensor 'x': rank -1 is outside [0, 16]", path);
  CHECK_STR(write_error(path, &t, 1), want);
  t = good;
  int64_t neg[2] = {2, -3};
  t.shape = neg;
  snprintf(want, sizeof want, "%s: tensor 'x': negative size -3 in dimension 1", path);
  CHECK_STR(write_error(path, &t, 1), want);
  t = good;
  int64_t huge[2] = {INT64_C(1) << 40, INT64_C(1) << 30};
  t.shape = huge;
  snprintf(want, sizeof want, "%s: tensor 'x': the shape overflows", path);
  CHECK_STR(write_error(path, &t, 1), want);
  int64_t wraps[2] = {INT64_C(1) << 40, INT64_C(1) << 40}; /* 2^80 is 0 mod 2^64 */
  t.shape = wraps;
  t.nbytes = 0;
  CHECK_STR(write_error(path, &t, 1), want);
  int64_t empty[3] = {INT64_C(1) << 40, INT64_C(1) << 40, 0}; /* a 0 makes it fine */
  t.rank = 3;
  t.shape = empty;
  CHECK_STR(write_error(path, &t, 1), "");
  CHECK_OK(alloy_safetensors_write(path, &t, 1)); /* and again over the file */
  unlink(path);
  t = good;
  t.dtype = ALLOY_DTYPE_COUNT;
  snprintf(want, sizeof want, "%s: tensor 'x': invalid dtype %d", path, ALLOY_DTYPE_COUNT);
  CHECK_STR(write_error(path, &t, 1), want);
  t = good;
  t.data = NULL;
  snprintf(want, sizeof want, "%s: tensor 'x': NULL data", path);
  CHECK_STR(write_error(path, &t, 1), want);
  t = good;
  t.name = "bad\xff";
  snprintf(want, sizeof want, "%s: tensor 'bad\xff': the name is not UTF-8", path);
  CHECK_STR(write_error(path, &t, 1), want);

  alloy_st_tensor two[3] = {good, good, good};
  two[1].name = "y";
  snprintf(want, sizeof want, "%s: tensor 'x': the name is used twice", path);
  CHECK_STR(write_error(path, two, 3), want);
  CHECK(write_error(NULL, &good, 1)[0] != '\0');
  CHECK(write_error(path, NULL, 1)[0] != '\0');
  CHECK(write_error(path, &good, -1)[0] != '\0');
  /* nothing was created by any of them */
  CHECK_INT(count_files(&s), 0);
  scratch_remove(&s);
}

TEST(st_write_failure_leaves_the_old_file) {
  scratch s;
  REQUIRE(scratch_new(&s));
  const char *path = in(&s, "keep.safetensors");
  int32_t v[2] = {5, 6};
  int64_t shape = 2;
  alloy_st_tensor t = {"v", ALLOY_I32, 1, &shape, v, 8};
  CHECK_OK(alloy_safetensors_write(path, &t, 1));
  size_t before_size, after_size;
  uint8_t *before = slurp(path, &before_size);
  t.nbytes = 4;
  CHECK(write_error(path, &t, 1)[0] != '\0');
  uint8_t *after = slurp(path, &after_size);
  CHECK(before && after && before_size == after_size && !memcmp(before, after, before_size));
  free(before);
  free(after);
  /* rewriting replaces the file whole */
  t.nbytes = 8;
  v[0] = 9;
  CHECK_OK(alloy_safetensors_write(path, &t, 1));
  alloy_safetensors *r = NULL;
  CHECK_OK(alloy_safetensors_open(path, &r));
  const alloy_st_entry *e = r ? alloy_safetensors_find(r, "v") : NULL;
  CHECK(e && ((const int32_t *)e->data)[0] == 9);
  alloy_safetensors_close(r);
  CHECK_INT(count_files(&s), 1);
  scratch_remove(&s);
}

TEST(st_write_to_unwritable_path_is_an_error) {
  scratch s;
  REQUIRE(scratch_new(&s));
  int64_t shape = 1;
  uint8_t v = 1;
  alloy_st_tensor t = {"v", ALLOY_U8, 1, &shape, &v, 1};
  alloy_error *e = alloy_safetensors_write(in(&s, "no/such/folder/x.safetensors"), &t, 1);
  CHECK(e != NULL && alloy_error_code_of(e) == ALLOY_ERR_IO);
  CHECK(e && strstr(alloy_error_message(e), "cannot create") != NULL);
  alloy_error_free(e);
  /* a folder in the way: the data is written, the rename fails, and the
   * temporary file is removed */
  const char *dir = in(&s, "dir.safetensors");
  REQUIRE(mkdir(dir, 0700) == 0);
  e = alloy_safetensors_write(dir, &t, 1);
  CHECK(e != NULL && alloy_error_code_of(e) == ALLOY_ERR_IO);
  CHECK(e && strstr(alloy_error_message(e), "cannot rename") != NULL);
  alloy_error_free(e);
  CHECK_INT(count_files(&s), 1);
  scratch_remove(&s);
}

/* ---- the reader's refusals ------------------------------------------------- */

#define F32_2x2 "\"dtype\":\"F32\",\"shape\":[2,2]"

TEST(st_read_accepts_valid_variants) {
  /* data ranges listed in any order, zero-size tensors anywhere, a
   * __metadata__ object, whitespace padding */
  CHECK_STR(hdr_error("{\"b\":{" F32_2x2 ",\"data_offsets\":[0,16]},"
                      "\"a\":{" F32_2x2 ",\"data_offsets\":[16,32]}}",
                      32),
            "");
  CHECK_STR(
      hdr_error("{\"__metadata__\":{\"format\":\"pt\"},\"e\":{\"dtype\":\"I64\",\"shape\":[0],"
                "\"data_offsets\":[16,16]},\"a\":{" F32_2x2 ",\"data_offsets\":[0,16]},"
                "\"z\":{\"dtype\":\"BOOL\",\"shape\":[3,0],\"data_offsets\":[0,0]}}   ",
                16),
      "");
  CHECK_STR(hdr_error("{}", 0), "");
  /* a huge size next to a 0 is a valid empty tensor */
  CHECK_STR(hdr_error("{\"a\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904,"
                      "4611686018427387904,0],\"data_offsets\":[0,0]}}",
                      0),
            "");

  image im = make_image(
      "{\"b\":{\"dtype\":\"I8\",\"shape\":[2],\"data_offsets\":[2,4]},"
      "\"a\":{\"dtype\":\"I8\",\"shape\":[2],\"data_offsets\":[0,2]}}",
      4);
  alloy_safetensors *r = NULL;
  CHECK_OK(alloy_safetensors_open_memory(im.bytes, im.size, NULL, &r));
  REQUIRE(r != NULL);
  CHECK_INT(alloy_safetensors_count(r), 2);
  const alloy_st_entry *a = alloy_safetensors_entry(r, 0), *b = alloy_safetensors_entry(r, 1);
  CHECK_STR(a->name, "a");
  CHECK_INT(((const int8_t *)a->data)[1], 1);
  CHECK_INT(((const int8_t *)b->data)[0], 2);
  alloy_safetensors_close(r);
  free(im.bytes);
}

TEST(st_read_rejects_bad_files) {
  static const struct {
    const char *header;
    size_t ndata;
    const char *msg;
  } cases[] = {
      {" {}", 0, "t.st: the header does not begin with '{'"},
      {"", 0, "t.st: the header does not begin with '{'"},
      {"{\"a\":1", 0,
       "t.st: the header is not a JSON object ('}' expected near end of file at byte 6)"},
      {"{\"a\":{" F32_2x2 ",\"data_offsets\":[0,16]},\"a\":{" F32_2x2 ",\"data_offsets\":[0,16]}}",
       16, "t.st: the header is not a JSON object (duplicate object key near '\"a\"' at byte 60)"},
      {"{\"a\":{\"dtype\":\"F8_E4M3\",\"shape\":[2],\"data_offsets\":[0,2]}}", 2,
       "t.st: entry 'a': unknown dtype 'F8_E4M3'"},
      {"{\"a\":{\"dtype\":\"float32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8,
       "t.st: entry 'a': unknown dtype 'float32'"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],\"data_offsets\":["
       "0,4]}}",
       4, "t.st: entry 'a': rank 17 is more than 16"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2,-2],\"data_offsets\":[0,0]}}", 0,
       "t.st: entry 'a': negative size -2 in the shape"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2.0],\"data_offsets\":[0,8]}}", 8,
       "t.st: entry 'a': shape holds a non-integer"},
      {"{\"a\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904,4],"
       "\"data_offsets\":[0,0]}}",
       0, "t.st: entry 'a': shape overflows"},
      {"{\"a\":{\"shape\":[2],\"data_offsets\":[0,8]}}", 8,
       "t.st: entry 'a': needs a dtype string, a shape array and two data_offsets"},
      {"{\"a\":[1]}", 0,
       "t.st: entry 'a': needs a dtype string, a shape array and two data_offsets"},
      {"{\"a\":{" F32_2x2 ",\"data_offsets\":[0,16,32]}}", 16,
       "t.st: entry 'a': needs a dtype string, a shape array and two data_offsets"},
      {"{\"a\":{" F32_2x2 ",\"data_offsets\":[0,\"16\"]}}", 16,
       "t.st: entry 'a': data_offsets are not integers"},
      {"{\"a\":{" F32_2x2 ",\"data_offsets\":[0,16]}}", 12,
       "t.st: entry 'a': data_offsets [0, 16] are outside the 12 bytes of data"},
      {"{\"a\":{" F32_2x2 ",\"data_offsets\":[-4,12]}}", 16,
       "t.st: entry 'a': data_offsets [-4, 12] are outside the 16 bytes of data"},
      {"{\"a\":{" F32_2x2 ",\"data_offsets\":[16,0]}}", 16,
       "t.st: entry 'a': data_offsets [16, 0] are outside the 16 bytes of data"},
      {"{\"a\":{" F32_2x2 ",\"data_offsets\":[0,12]}}", 12,
       "t.st: entry 'a': data_offsets [0, 12] hold 12 bytes, but the dtype and shape need 16"},
      {"{\"a\":{\"dtype\":\"I8\",\"shape\":[8],\"data_offsets\":[0,8]},"
       "\"b\":{\"dtype\":\"I8\",\"shape\":[8],\"data_offsets\":[4,12]}}",
       12, "t.st: entry 'b': data_offsets [4, 12] overlap another tensor's bytes"},
      {"{\"a\":{\"dtype\":\"I8\",\"shape\":[8],\"data_offsets\":[0,8]},"
       "\"b\":{\"dtype\":\"I8\",\"shape\":[8],\"data_offsets\":[0,8]}}",
       8, "t.st: entry 'b': data_offsets [0, 8] overlap another tensor's bytes"},
      {"{\"a\":{\"dtype\":\"I8\",\"shape\":[4],\"data_offsets\":[0,4]},"
       "\"b\":{\"dtype\":\"I8\",\"shape\":[4],\"data_offsets\":[8,12]}}",
       12, "t.st: entry 'b': data_offsets start at 8, leaving bytes [4, 8) to no tensor"},
      {"{\"a\":{\"dtype\":\"I8\",\"shape\":[4],\"data_offsets\":[4,8]}}", 8,
       "t.st: entry 'a': data_offsets start at 4, leaving bytes [0, 4) to no tensor"},
      {"{\"a\":{\"dtype\":\"I8\",\"shape\":[4],\"data_offsets\":[0,4]}}", 8,
       "t.st: bytes [4, 8) of the data belong to no tensor"},
      {"{}", 1, "t.st: bytes [0, 1) of the data belong to no tensor"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *got = hdr_error(cases[i].header, cases[i].ndata);
    if (strcmp(got, cases[i].msg) != 0)
      harness_fail(__FILE__, __LINE__, "case %zu: got \"%s\", expected \"%s\"", i, got,
                   cases[i].msg);
  }
}

TEST(st_read_rejects_bad_lengths) {
  image im = make_image("{}", 0);
  /* every length that is not the header's */
  for (int i = 0; i < 8; i++) im.bytes[i] = 0;
  im.bytes[0] = 3;
  alloy_safetensors *r = NULL;
  alloy_error *e = alloy_safetensors_open_memory(im.bytes, im.size, "t.st", &r);
  CHECK(e && !strcmp(alloy_error_message(e), "t.st: header length 3 exceeds the file (10 bytes)"));
  alloy_error_free(e);
  memset(im.bytes, 0xff, 8);
  e = alloy_safetensors_open_memory(im.bytes, im.size, "t.st", &r);
  CHECK(e && !strcmp(alloy_error_message(e),
                     "t.st: header length 18446744073709551615 exceeds the file (10 bytes)"));
  alloy_error_free(e);
  for (size_t n = 0; n < 8; n++) {
    e = alloy_safetensors_open_memory(im.bytes, n, "t.st", &r);
    char want[80];
    snprintf(want, sizeof want, "t.st: %zu bytes are too short for a safetensors file", n);
    CHECK(e && !strcmp(alloy_error_message(e), want));
    alloy_error_free(e);
  }
  e = alloy_safetensors_open_memory(NULL, 0, NULL, &r);
  CHECK(e &&
        !strcmp(alloy_error_message(e), "(memory): 0 bytes are too short for a safetensors file"));
  alloy_error_free(e);
  free(im.bytes);

  /* a header over the reference implementation's 100 MB limit is refused
   * before it is parsed */
  size_t big = 100000001;
  uint8_t *huge = calloc(1, 8 + big);
  REQUIRE(huge != NULL);
  for (int i = 0; i < 8; i++) huge[i] = (uint8_t)((uint64_t)big >> (8 * i));
  e = alloy_safetensors_open_memory(huge, 8 + big, "big", &r);
  CHECK(e && !strcmp(alloy_error_message(e),
                     "big: header length 100000001 is over the limit of 100000000"));
  alloy_error_free(e);
  free(huge);
}

/* Every proper prefix of a valid file is refused, and reading it never
 * touches a byte past its end (each is copied to a buffer of its size). */
TEST(st_read_truncated_files) {
  image im = make_image(
      "{\"b\":{\"dtype\":\"I16\",\"shape\":[3],\"data_offsets\":[0,6]},"
      "\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[6,8]}}",
      8);
  CHECK_STR(read_error((image){memcpy(malloc(im.size), im.bytes, im.size), im.size}), "");
  for (size_t n = 0; n < im.size; n++) {
    uint8_t *buf = malloc(n ? n : 1);
    memcpy(buf, im.bytes, n);
    alloy_safetensors *r = NULL;
    alloy_error *e = alloy_safetensors_open_memory(buf, n, "t.st", &r);
    if (!e) harness_fail(__FILE__, __LINE__, "prefix of %zu bytes was read", n);
    alloy_error_free(e);
    alloy_safetensors_close(r);
    free(buf);
  }
  free(im.bytes);
}

TEST(st_open_errors) {
  scratch s;
  REQUIRE(scratch_new(&s));
  alloy_safetensors *r = (alloy_safetensors *)&s;
  alloy_error *e = alloy_safetensors_open(in(&s, "missing.safetensors"), &r);
  CHECK(e && alloy_error_code_of(e) == ALLOY_ERR_IO && r == NULL);
  CHECK(e && strstr(alloy_error_message(e), "missing.safetensors: cannot open: ") != NULL);
  alloy_error_free(e);
  e = alloy_safetensors_open(s.path, &r);
  CHECK(e && strstr(alloy_error_message(e), ": not a regular file") != NULL);
  alloy_error_free(e);
  const char *small = in(&s, "small.safetensors");
  FILE *f = fopen(small, "wb");
  REQUIRE(f != NULL);
  fputs("abc", f);
  fclose(f);
  e = alloy_safetensors_open(small, &r);
  CHECK(e && strstr(alloy_error_message(e), "small.safetensors: 3 bytes are too short") != NULL);
  alloy_error_free(e);
  f = fopen(small, "wb");
  fclose(f);
  e = alloy_safetensors_open(small, &r);
  CHECK(e && strstr(alloy_error_message(e), "small.safetensors: 0 bytes are too short") != NULL);
  alloy_error_free(e);
  /* a bad file opened by path names the path */
  image im = make_image("{\"a\":{\"dtype\":\"X\",\"shape\":[],\"data_offsets\":[0,0]}}", 0);
  const char *bad = in(&s, "bad.safetensors");
  f = fopen(bad, "wb");
  REQUIRE(f != NULL);
  fwrite(im.bytes, 1, im.size, f);
  fclose(f);
  free(im.bytes);
  e = alloy_safetensors_open(bad, &r);
  char want[PATH_MAX + 64];
  snprintf(want, sizeof want, "%s: entry 'a': unknown dtype 'X'", bad);
  CHECK(e && !strcmp(alloy_error_message(e), want));
  alloy_error_free(e);
  e = alloy_safetensors_open(NULL, &r);
  CHECK(e && alloy_error_code_of(e) == ALLOY_ERR_INVALID_ARGUMENT);
  alloy_error_free(e);
  CHECK(alloy_safetensors_count(NULL) == 0);
  alloy_safetensors_close(NULL);
  scratch_remove(&s);
}

/* The golden files were written by Hugging Face's own writer: the strict
 * reader must take every one of them. */
TEST(st_reads_the_golden_files) {
  const char *golden = harness_golden_dir();
  if (!golden) {
    harness_fail(__FILE__, __LINE__, "../shared/golden is missing: cannot read its safetensors");
    return;
  }
  static const char *const subdirs[] = {"ops", "models"};
  int files = 0;
  for (size_t k = 0; k < 2; k++) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/%s", golden, subdirs[k]);
    DIR *d = opendir(dir);
    struct dirent *ent;
    while (d && (ent = readdir(d))) {
      size_t l = strlen(ent->d_name);
      if (l < 12 || strcmp(ent->d_name + l - 12, ".safetensors")) continue;
      char path[PATH_MAX + 256];
      snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
      alloy_safetensors *r = NULL;
      CHECK_OK(alloy_safetensors_open(path, &r));
      CHECK(r == NULL || alloy_safetensors_count(r) > 0);
      alloy_safetensors_close(r);
      files++;
    }
    if (d) closedir(d);
  }
  CHECK(files > 0);
}
