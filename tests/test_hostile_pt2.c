/*
 * tests/test_hostile_pt2.c: the .pt2 importer and the graph against hostile
 * and very large programs (issue 15, items 4 and 5).
 *
 * Amplification: archives built here with libzip from a small model (a
 * parameter p_w of a declared type, added to a user input) whose weight is
 * a broadcast (stride 0) or strided view, a deflated storage or model.json
 * that inflates far beyond the archive (a deflate bomb), or an entry whose
 * ZIP directory lies about its size. The importer must check a weight
 * against the graph before reading its storage, load no weight the graph
 * does not read, and keep what it inflates, gathers or zero-fills within
 * the archive's expansion budget (ir/pt2_archive.c), refusing the rest
 * before allocating it. The sizes are chosen so that the importer before
 * these checks failed differently (out of memory, or loading what must be
 * refused), never by taking long.
 *
 * Linearity: importing, cloning and rewriting a program of n nodes must do
 * O(n) work. Timing is not tested; the work of the name table (slots
 * visited, counted by a test hook in ir/graph.c) is: renaming a value once
 * rebuilt the whole table, which made every importer quadratic. The other
 * structures made linear (the importer's subgraph bindings, users lists in
 * dce and replace_uses, extract's membership) are checked for the results
 * their linear versions give.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>

#include "alloy/model.h"
#include "alloy/runtime.h"
#include "decompositions/decomp.h"
#include "decompositions/functionalize.h"
#include "ir/graph_internal.h"
#include "ir/model_internal.h"
#include "ir/pt2.h"
#include "tests/harness.h"
#include "tests/testzip.h"

/* ir/graph.c's test hook: slots of name tables this thread has visited. */
uint64_t alloy_graph_name_table_work(void);

/* --- building archives -------------------------------------------------- */

typedef tz_entry entry;
#define zip_entries tz_archive

static void put32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* Makes the ZIP say `size` for the uncompressed size of entry `name`, in
 * its local header and its central directory record alike (so that the
 * archive still opens): a directory that lies. */
static bool lie_about_size(uint8_t *zip, size_t n, const char *name, uint32_t size) {
  size_t len = strlen(name);
  int patched = 0;
  for (size_t i = 0; i + 46 + len <= n; i++) {
    if (!memcmp(zip + i, "PK\3\4", 4) && zip[i + 26] == (len & 0xff) && zip[i + 27] == len >> 8 &&
        !memcmp(zip + i + 30, name, len))
      put32(zip + i + 22, size), patched++;
    if (!memcmp(zip + i, "PK\1\2", 4) && zip[i + 28] == (len & 0xff) && zip[i + 29] == len >> 8 &&
        !memcmp(zip + i + 46, name, len))
      put32(zip + i + 24, size), patched++;
  }
  return patched == 2;
}

/* --- the model ------------------------------------------------------------ */

#define AS_INT(n) "{\"as_int\": " #n "}"
#define D2(a, b) AS_INT(a) ", " AS_INT(b) /* two dims */
#define TENSOR(n) "{\"as_tensor\": {\"name\": \"" n "\"}}"

/* y = x + p_w, where the graph declares p_w (and x) as f32 of `dims` (a
 * list of {"as_int": n}); p_w reads the parameter "l.weight". */
static char *model_json(const char *dims, size_t pad) {
  static const char fmt[] =
      "{\"schema_version\": {\"major\": 8, \"minor\": 17}, \"range_constraints\": {},"
      " \"graph_module\": {\"signature\": {\"input_specs\": ["
      "{\"parameter\": {\"arg\": {\"name\": \"p_w\"}, \"parameter_name\": \"l.weight\"}},"
      "{\"user_input\": {\"arg\": " TENSOR("x") "}}],"
      " \"output_specs\": [{\"user_output\": {\"arg\": " TENSOR("y") "}}]},"
      " \"graph\": {\"inputs\": [" TENSOR("p_w") ", " TENSOR("x") "], \"outputs\": [" TENSOR("y") "],"
      " \"sym_int_values\": {}, \"tensor_values\": {"
      "\"p_w\": {\"dtype\": 7, \"sizes\": [%s]}, \"x\": {\"dtype\": 7, \"sizes\": [%s]},"
      " \"y\": {\"dtype\": 7, \"sizes\": [%s]}},"
      " \"nodes\": [{\"name\": \"y\", \"target\": \"torch.ops.aten.add.Tensor\", \"inputs\": ["
      "{\"name\": \"self\", \"arg\": " TENSOR("x") ", \"kind\": 1},"
      "{\"name\": \"other\", \"arg\": " TENSOR("p_w") ", \"kind\": 1}],"
      " \"outputs\": [" TENSOR("y") "]}]}}}";
  size_t len = strlen(fmt) + 3 * strlen(dims);
  char *s = malloc(len + pad + 1);
  if (!s) return NULL;
  int n = snprintf(s, len + 1, fmt, dims, dims, dims);
  /* Trailing white space is still valid JSON: a model.json that inflates
   * to pad bytes more. */
  memset(s + n, ' ', pad);
  s[n + pad] = '\0';
  return s;
}

/* The weights config: l.weight (and, when extra is given, more entries)
 * as `meta` over storage weight_0. */
static char *weights_json(const char *meta, const char *extra) {
  char *s = NULL;
  if (asprintf(&s,
               "{\"config\": {\"l.weight\": {\"path_name\": \"weight_0\", \"is_param\": true,"
               " \"use_pickle\": false, \"tensor_meta\": %s}%s%s}}",
               meta, extra ? ", " : "", extra ? extra : "") < 0)
    return NULL;
  return s;
}

typedef struct archive {
  const char *dims;       /* the graph's type of p_w */
  const char *meta;       /* the weight's tensor_meta */
  const char *extra;      /* more weights config entries, or NULL */
  const void *storage;    /* weight_0's bytes */
  size_t storage_size;
  bool drop_storage;      /* no weight_0 at all */
  bool deflate_storage;
  bool deflate_model;
  size_t model_pad;       /* bytes of white space after model.json */
  const char *lie_entry;  /* entry whose directory size is rewritten */
  uint32_t lie_size;
} archive;

static uint8_t *build(const archive *ar, size_t *size) {
  char *model = model_json(ar->dims, ar->model_pad), *weights = weights_json(ar->meta, ar->extra);
  uint8_t *zip = NULL;
  if (model && weights) {
    entry es[] = {
        {"tiny/models/model.json", model, strlen(model), ar->deflate_model},
        {"tiny/data/weights/model_weights_config.json", weights, strlen(weights), false},
        {"tiny/data/weights/weight_0", ar->storage, ar->storage_size, ar->deflate_storage},
    };
    zip = zip_entries(es, ar->drop_storage ? 2 : 3, size);
  }
  if (zip && ar->lie_entry && !lie_about_size(zip, *size, ar->lie_entry, ar->lie_size)) {
    free(zip);
    zip = NULL;
  }
  free(model);
  free(weights);
  return zip;
}

/* Loads the archive: NULL and *m set, or the error. */
static alloy_error *load(const archive *ar, alloy_model **m, uint8_t **zip) {
  size_t size = 0;
  *m = NULL;
  *zip = build(ar, &size);
  if (!*zip) return alloy_error_new(ALLOY_ERR_INTERNAL, "test: cannot build the archive");
  return alloy_model_load_pt2_memory(*zip, size, "hostile.pt2", m);
}

/* The archive is refused with an error that mentions every one of want
 * (NULL-terminated). */
static void expect_refused(const archive *ar, const char *const *want) {
  alloy_model *m = NULL;
  uint8_t *zip = NULL;
  alloy_error *e = load(ar, &m, &zip);
  CHECK(e != NULL);
  CHECK(m == NULL);
  for (int i = 0; e && want[i]; i++)
    if (!strstr(alloy_error_message(e), want[i]))
      harness_fail(__FILE__, __LINE__, "error \"%s\" does not mention \"%s\"",
                   alloy_error_message(e), want[i]);
  alloy_error_free(e);
  alloy_model_free(m);
  free(zip);
}

static const float twelve[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
static const float one_float = 2.5f;

#define META(sizes, strides, offset) \
  "{\"dtype\": 7, \"sizes\": [" sizes "], \"strides\": [" strides "], \"storage_offset\": " AS_INT(offset) "}"

/* --- amplification ---------------------------------------------------------- */

TEST(pt2_checks_a_weight_against_the_graph_before_reading_its_storage) {
  /* The graph says [3, 4]; the weight says [5] and its storage is not even
   * there: the type is what is wrong, and it is found first. */
  archive ar = {.dims = D2(3, 4), .meta = META(AS_INT(5), AS_INT(1), 0), .drop_storage = true};
  expect_refused(&ar, (const char *const[]){"hostile.pt2: input p_w is f32[3, 4] but weight "
                                            "'l.weight' is f32[5]", NULL});
}

TEST(pt2_refuses_a_broadcast_weight_the_graph_does_not_declare) {
  /* A [10^6, 10^6] view of strides [0, 0] over one float (4 TB gathered)
   * where the graph says [3, 4]: refused by the type, nothing gathered. */
  archive ar = {.dims = D2(3, 4), .meta = META(D2(1000000, 1000000), D2(0, 0), 0),
                .storage = &one_float, .storage_size = sizeof one_float};
  expect_refused(&ar, (const char *const[]){"input p_w is f32[3, 4] but weight 'l.weight' is "
                                            "f32[1000000, 1000000]", NULL});
}

TEST(pt2_refuses_a_declared_broadcast_weight_beyond_the_budget) {
  /* The graph does declare [10^6, 10^6]: a few hundred bytes of archive
   * would make 4 TB. Refused before allocating, by the expansion budget. */
  archive ar = {.dims = D2(1000000, 1000000),
                .meta = META(D2(1000000, 1000000), D2(0, 0), 0),
                .storage = &one_float, .storage_size = sizeof one_float};
  expect_refused(&ar, (const char *const[]){"tensor 'l.weight' (4000000000000 bytes) needs "
                                            "4000000000000 bytes", "64 MiB + 2 x its size",
                                            "bomb", NULL});
}

TEST(pt2_gathers_broadcast_and_strided_weights_within_the_budget) {
  /* [64, 64] of strides [0, 0]: 16 KiB from 4 bytes, well within. */
  archive bc = {.dims = D2(64, 64), .meta = META(D2(64, 64), D2(0, 0), 0),
                .storage = &one_float, .storage_size = sizeof one_float};
  alloy_model *m = NULL;
  uint8_t *zip = NULL;
  CHECK_OK(load(&bc, &m, &zip));
  alloy_host_tensor t;
  if (m && alloy_model_find_weight(m, "l.weight", &t)) {
    int same = 0;
    for (int i = 0; i < 64 * 64; i++) same += ((const float *)t.data)[i] == 2.5f;
    CHECK_INT(same, 64 * 64);
  } else {
    CHECK(!"no weight l.weight");
  }
  alloy_model_free(m);
  free(zip);
  /* [3, 4] of strides [1, 3] (a transposed [4, 3]) from offset 0, and a
   * [2, 2] corner of strides [4, 1] from offset 5. */
  archive tr = {.dims = D2(3, 4), .meta = META(D2(3, 4), D2(1, 3), 0),
                .storage = twelve, .storage_size = sizeof twelve};
  CHECK_OK(load(&tr, &m, &zip));
  if (m && alloy_model_find_weight(m, "l.weight", &t)) {
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 4; j++) CHECK(((const float *)t.data)[i * 4 + j] == (float)(i + 3 * j));
  } else {
    CHECK(!"no weight l.weight");
  }
  alloy_model_free(m);
  free(zip);
  archive corner = {.dims = D2(2, 2), .meta = META(D2(2, 2), D2(4, 1), 5),
                    .storage = twelve, .storage_size = sizeof twelve, .deflate_storage = true};
  CHECK_OK(load(&corner, &m, &zip));
  if (m && alloy_model_find_weight(m, "l.weight", &t)) {
    const float *d = t.data;
    CHECK(d[0] == 5 && d[1] == 6 && d[2] == 9 && d[3] == 10);
  } else {
    CHECK(!"no weight l.weight");
  }
  alloy_model_free(m);
  free(zip);
}

TEST(pt2_loads_no_weight_that_the_graph_does_not_read) {
  /* "junk" would be a 4 EB broadcast; no graph input reads it. */
  archive ar = {.dims = D2(3, 4), .meta = META(D2(3, 4), D2(4, 1), 0),
                .extra = "\"junk\": {\"path_name\": \"weight_0\", \"is_param\": false,"
                         " \"use_pickle\": false, \"tensor_meta\": "
                         META(D2(1000000000, 1000000000), D2(0, 0), 0) "}",
                .storage = twelve, .storage_size = sizeof twelve};
  alloy_model *m = NULL;
  uint8_t *zip = NULL;
  CHECK_OK(load(&ar, &m, &zip));
  if (m) {
    CHECK_INT(alloy_model_num_weights(m), 1);
    alloy_host_tensor t;
    CHECK(!alloy_model_find_weight(m, "junk", &t));
    /* A stored contiguous weight is used where it lies. */
    CHECK(alloy_model_find_weight(m, "l.weight", &t) && (const uint8_t *)t.data > zip);
  }
  alloy_model_free(m);
  free(zip);
}

enum { BOMB = 72 << 20 }; /* more than the 64 MiB floor of the budget */

TEST(pt2_refuses_a_deflated_storage_beyond_the_budget) {
  /* 72 MiB of zeros deflate to some 70 KB; the graph does declare them. */
  void *zeros = calloc(1, BOMB);
  REQUIRE(zeros);
  archive ar = {.dims = AS_INT(18874368), .meta = META(AS_INT(18874368), AS_INT(1), 0), .storage = zeros,
                .storage_size = BOMB, .deflate_storage = true};
  expect_refused(&ar, (const char *const[]){"entry tiny/data/weights/weight_0 (compressed) needs "
                                            "75497472 bytes", "bomb", NULL});
  free(zeros);
}

TEST(pt2_refuses_a_deflated_model_json_beyond_the_budget) {
  archive ar = {.dims = D2(3, 4), .meta = META(D2(3, 4), D2(4, 1), 0),
                .storage = twelve, .storage_size = sizeof twelve, .deflate_model = true,
                .model_pad = BOMB};
  expect_refused(&ar, (const char *const[]){"entry tiny/models/model.json (compressed) needs",
                                            "bomb", NULL});
  /* The same with a little white space is an ordinary compressed archive. */
  ar.model_pad = 4096;
  alloy_model *m = NULL;
  uint8_t *zip = NULL;
  CHECK_OK(load(&ar, &m, &zip));
  alloy_model_free(m);
  free(zip);
}

TEST(pt2_refuses_entries_whose_directory_lies_about_their_size) {
  /* model.json says 100 bytes but inflates to its whole text: refused as
   * soon as byte 101 comes out (before, its first 100 bytes were parsed). */
  archive more = {.dims = D2(3, 4), .meta = META(D2(3, 4), D2(4, 1), 0),
                  .storage = twelve, .storage_size = sizeof twelve, .deflate_model = true,
                  .lie_entry = "tiny/models/model.json", .lie_size = 100};
  alloy_model *m = NULL;
  uint8_t *zip = NULL;
  alloy_error *e = load(&more, &m, &zip);
  CHECK(e && m == NULL);
  if (e) {
    const char *msg = alloy_error_message(e);
    CHECK(strstr(msg, "entry tiny/models/model.json: "));
    /* libzip may see the lie first, as a CRC error at the size it was told */
    CHECK(strstr(msg, "holds more bytes than its directory says (100)") || strstr(msg, "CRC"));
    CHECK(!strstr(msg, "line "));
  }
  alloy_error_free(e);
  free(zip);
  /* The storage says 4800 bytes and holds 48; the graph wants [1200]. */
  archive fewer = {.dims = AS_INT(1200), .meta = META(AS_INT(1200), AS_INT(1), 0), .storage = twelve,
                   .storage_size = sizeof twelve, .deflate_storage = true,
                   .lie_entry = "tiny/data/weights/weight_0", .lie_size = 4800};
  expect_refused(&fewer, (const char *const[]){"entry tiny/data/weights/weight_0: holds 48 bytes, "
                                               "its directory says 4800", NULL});
}

TEST(pt2_reads_one_deflated_storage_once_for_several_views) {
  /* l.weight is all of it as [3, 4]; "row" a view of its last row. Both are
   * read by the graph (a second parameter input). */
  static const char two[] =
      "{\"schema_version\": {\"major\": 8, \"minor\": 17}, \"range_constraints\": {},"
      " \"graph_module\": {\"signature\": {\"input_specs\": ["
      "{\"parameter\": {\"arg\": {\"name\": \"p_w\"}, \"parameter_name\": \"l.weight\"}},"
      "{\"parameter\": {\"arg\": {\"name\": \"p_r\"}, \"parameter_name\": \"row\"}}],"
      " \"output_specs\": [{\"user_output\": {\"arg\": " TENSOR("y") "}}]},"
      " \"graph\": {\"inputs\": [" TENSOR("p_w") ", " TENSOR("p_r") "], \"outputs\": [" TENSOR("y") "],"
      " \"sym_int_values\": {}, \"tensor_values\": {"
      "\"p_w\": {\"dtype\": 7, \"sizes\": [" D2(3, 4) "]},"
      " \"p_r\": {\"dtype\": 7, \"sizes\": [" AS_INT(4) "]},"
      " \"y\": {\"dtype\": 7, \"sizes\": [" D2(3, 4) "]}},"
      " \"nodes\": [{\"name\": \"y\", \"target\": \"torch.ops.aten.add.Tensor\", \"inputs\": ["
      "{\"name\": \"self\", \"arg\": " TENSOR("p_w") ", \"kind\": 1},"
      "{\"name\": \"other\", \"arg\": " TENSOR("p_r") ", \"kind\": 1}],"
      " \"outputs\": [" TENSOR("y") "]}]}}}";
  char *weights = weights_json(META(D2(3, 4), D2(4, 1), 0),
                               "\"row\": {\"path_name\": \"weight_0\", \"is_param\": true,"
                               " \"use_pickle\": false, \"tensor_meta\": " META(AS_INT(4), AS_INT(1), 8) "}");
  REQUIRE(weights);
  entry es[] = {{"tiny/models/model.json", two, strlen(two), false},
                {"tiny/data/weights/model_weights_config.json", weights, strlen(weights), false},
                {"tiny/data/weights/weight_0", twelve, sizeof twelve, true}};
  size_t size = 0;
  uint8_t *zip = zip_entries(es, 3, &size);
  free(weights);
  REQUIRE(zip);
  alloy_model *m = NULL;
  CHECK_OK(alloy_model_load_pt2_memory(zip, size, "two.pt2", &m));
  alloy_host_tensor w, r;
  if (m && alloy_model_find_weight(m, "l.weight", &w) && alloy_model_find_weight(m, "row", &r)) {
    CHECK(((const float *)w.data)[11] == 11);
    CHECK(((const float *)r.data)[0] == 8 && ((const float *)r.data)[3] == 11);
    /* one inflated copy, shared */
    CHECK((const float *)r.data == (const float *)w.data + 8);
  } else {
    CHECK(!"weights missing");
  }
  alloy_model_free(m);
  free(zip);
}

/* A golden model with every entry deflated loads as the stored one does:
 * the compressed path reads real archives whole. */
static void golden_deflated_loads_the_same(void) {
  char path[4200];
  snprintf(path, sizeof path, "%s/models/mlp.core.pt2", harness_golden_dir());
  alloy_model *ref = NULL, *m = NULL;
  CHECK_OK(alloy_model_load(path, &ref));
  int err = 0;
  zip_t *in = zip_open(path, ZIP_RDONLY, &err);
  REQUIRE(ref && in);
  zip_error_t ze;
  zip_error_init(&ze);
  zip_source_t *src = zip_source_buffer_create(NULL, 0, 0, &ze);
  zip_source_keep(src);
  zip_t *out = zip_open_from_source(src, ZIP_TRUNCATE, &ze);
  for (zip_int64_t i = 0; out && i < zip_get_num_entries(in, 0); i++) {
    zip_source_t *s = zip_source_zip(out, in, (zip_uint64_t)i, 0, 0, -1);
    zip_int64_t k = zip_file_add(out, zip_get_name(in, (zip_uint64_t)i, 0), s, 0);
    zip_set_file_compression(out, (zip_uint64_t)k, ZIP_CM_DEFLATE, 1);
  }
  uint8_t *buf = NULL;
  size_t size = 0;
  if (out && zip_close(out) == 0 && zip_source_open(src) == 0) {
    zip_source_seek(src, 0, SEEK_END);
    size = (size_t)zip_source_tell(src);
    zip_source_seek(src, 0, SEEK_SET);
    if ((buf = malloc(size))) zip_source_read(src, buf, size);
    zip_source_close(src);
  }
  zip_source_free(src);
  zip_error_fini(&ze);
  zip_close(in);
  REQUIRE(buf);
  CHECK_OK(alloy_model_load_pt2_memory(buf, size, "mlp.deflated.pt2", &m));
  if (m) {
    CHECK_INT(alloy_graph_num_nodes(alloy_model_graph(m)), alloy_graph_num_nodes(alloy_model_graph(ref)));
    CHECK_INT(alloy_model_num_weights(m), alloy_model_num_weights(ref));
    for (int i = 0; i < alloy_model_num_weights(ref); i++) {
      alloy_host_tensor a, b;
      const char *name = alloy_model_weight(ref, i, &a);
      uint64_t bytes = alloy_dtype_size(a.dtype);
      for (int d = 0; d < a.rank; d++) bytes *= (uint64_t)a.sizes[d];
      CHECK(alloy_model_find_weight(m, name, &b) && !memcmp(a.data, b.data, bytes));
    }
  }
  alloy_model_free(m);
  alloy_model_free(ref);
  free(buf);
}

__attribute__((constructor)) static void golden_register(void) {
  const char *golden = harness_golden_dir();
  char path[4200];
  snprintf(path, sizeof path, "%s/models/mlp.core.pt2", golden ? golden : "");
  if (golden && access(path, R_OK) == 0)
    harness_register("pt2_golden_model_deflated_loads_the_same", __FILE__,
                     golden_deflated_loads_the_same);
  else
    printf("skipped: pt2_golden_model_deflated_loads_the_same: ../shared/golden/models/mlp.core.pt2 "
           "missing\n");
}

/* --- linear import ------------------------------------------------------------ */

enum { BIG = 20000 };

/* Name-table slots visited per value, at most, for any whole pass. Linear
 * probing at load <= 1/2 visits a couple of slots a lookup; a quadratic
 * step visits thousands per value at this size. */
enum { WORK_PER_VALUE = 64 };

/* f32[4, 8], its dims in shape (two of them, kept by the caller). */
static alloy_value_type f32_4x8(alloy_dim *shape) {
  shape[0] = alloy_dim_const(4);
  shape[1] = alloy_dim_const(8);
  return (alloy_value_type){.kind = ALLOY_VALUE_TENSOR, .dtype = ALLOY_F32, .rank = 2,
                            .shape = shape};
}

TEST(graph_rename_does_constant_work) {
  alloy_graph *g = alloy_graph_new();
  REQUIRE(g);
  alloy_dim dims[2];
  alloy_value_type t = f32_4x8(dims);
  alloy_value **vs = calloc(BIG, sizeof *vs);
  REQUIRE(vs);
  char name[32];
  for (int i = 0; i < BIG; i++) {
    snprintf(name, sizeof name, "a%d", i);
    CHECK_OK(alloy_graph_add_input(g, name, &t, &vs[i]));
  }
  uint64_t before = alloy_graph_name_table_work();
  for (int i = 0; i < BIG; i++) {
    snprintf(name, sizeof name, "b%d", i);
    CHECK_OK(alloy_graph_rename(g, vs[i], name));
  }
  uint64_t work = alloy_graph_name_table_work() - before;
  if (work > (uint64_t)WORK_PER_VALUE * BIG)
    harness_fail(__FILE__, __LINE__, "%d renames visited %llu name-table slots", BIG,
                 (unsigned long long)work);
  /* Every value is found under its new name, none under its old. */
  int found = 0;
  for (int i = 0; i < BIG; i++) {
    snprintf(name, sizeof name, "b%d", i);
    found += alloy_graph_find_value(g, name) == vs[i];
    snprintf(name, sizeof name, "a%d", i);
    found -= alloy_graph_find_value(g, name) != NULL;
  }
  CHECK_INT(found, BIG);
  free(vs);
  alloy_graph_free(g);
}

TEST(graph_automatic_names_skip_taken_ones_in_constant_work) {
  /* Inputs named v<BIG>..v<2 BIG - 1> take every "v<id>" the next BIG
   * automatic names would start from. */
  alloy_graph *g = alloy_graph_new();
  REQUIRE(g);
  alloy_dim dims[2];
  alloy_value_type t = f32_4x8(dims);
  alloy_value *x = NULL;
  char name[32];
  for (int i = 0; i < BIG; i++) {
    snprintf(name, sizeof name, "v%d", BIG + i);
    CHECK_OK(alloy_graph_add_input(g, name, &t, i ? NULL : &x));
  }
  REQUIRE(x);
  const alloy_op *relu = alloy_op_find("aten.relu.default");
  REQUIRE(relu);
  uint64_t before = alloy_graph_name_table_work();
  alloy_arg a = alloy_arg_value(x);
  alloy_node *n = NULL;
  for (int i = 0; i < BIG; i++) CHECK_OK(alloy_graph_add_node(g, relu, &a, 1, NULL, NULL, 0, NULL, &n));
  uint64_t work = alloy_graph_name_table_work() - before;
  if (work > (uint64_t)WORK_PER_VALUE * BIG)
    harness_fail(__FILE__, __LINE__, "%d automatic names visited %llu name-table slots", BIG,
                 (unsigned long long)work);
  CHECK_STR(alloy_value_name(alloy_node_output(n, 0)), "v39999_1");
  alloy_graph_free(g);
}

/* The bench's ladder: node i reads the two values before it; every tenth
 * is an in-place add_, so that functionalization rewrites. */
static char *ladder_air(int n) {
  size_t cap = (size_t)n * 64 + 256, len = 0;
  char *s = malloc(cap), prev[16] = "x", before[16] = "y";
  if (!s) return NULL;
  len += (size_t)snprintf(s, cap, "input %%x: f32[4, 8]\ninput %%y: f32[4, 8]\n");
  static const char *const ops[3] = {"aten.add.Tensor", "aten.mul.Tensor", "aten.relu.default"};
  for (int i = 0; i < n; i++) {
    char name[16];
    snprintf(name, sizeof name, "n%d", i);
    if (i % 10 == 9)
      len += (size_t)snprintf(s + len, cap - len, "%%%s = aten.add_.Tensor(%%%s, %%%s)\n", name,
                              prev, before);
    else if (i % 3 == 2)
      len += (size_t)snprintf(s + len, cap - len, "%%%s = %s(%%%s)\n", name, ops[2], prev);
    else
      len += (size_t)snprintf(s + len, cap - len, "%%%s = %s(%%%s, %%%s)\n", name, ops[i % 3], prev,
                              before);
    memcpy(before, prev, sizeof prev);
    memcpy(prev, name, sizeof name);
  }
  snprintf(s + len, cap - len, "output %%%s\n", prev);
  return s;
}

static void check_work(uint64_t before, int values, const char *what) {
  uint64_t work = alloy_graph_name_table_work() - before;
  if (work > (uint64_t)WORK_PER_VALUE * (uint64_t)values)
    harness_fail(__FILE__, __LINE__, "%s of %d values visited %llu name-table slots", what, values,
                 (unsigned long long)work);
}

static bool accept_all(const alloy_graph *g, int i, void *ctx) {
  (void)g, (void)i, (void)ctx;
  return true;
}

TEST(graph_import_clone_and_passes_do_linear_name_work) {
  char *text = ladder_air(BIG);
  REQUIRE(text);
  alloy_graph *g = NULL, *c = NULL, *f = NULL, *d = NULL;
  uint64_t t0 = alloy_graph_name_table_work();
  CHECK_OK(alloy_air_parse(text, strlen(text), "ladder.air", &g));
  free(text);
  REQUIRE(g);
  check_work(t0, BIG, "parsing");
  t0 = alloy_graph_name_table_work();
  CHECK_OK(alloy_graph_clone(g, &c));
  check_work(t0, BIG, "cloning");
  t0 = alloy_graph_name_table_work();
  CHECK_OK(alloy_functionalize(g, &f));
  check_work(t0, BIG, "functionalizing");
  REQUIRE(f);
  /* functionalization kept the names of what it copied */
  CHECK(alloy_graph_find_value(f, "n100") != NULL);
  t0 = alloy_graph_name_table_work();
  decomp_options o = {.accept = accept_all};
  CHECK_OK(alloy_decompose(f, &o, &d, NULL, NULL));
  check_work(t0, BIG, "decomposing");
  CHECK(c && d && alloy_graph_num_nodes(c) == BIG);
  alloy_graph_free(g);
  alloy_graph_free(c);
  alloy_graph_free(f);
  alloy_graph_free(d);
}

TEST(pt2_import_does_linear_name_work) {
  /* The same ladder (functional ops) as model.json: every node's output is
   * renamed to its export name as it is bound. */
  size_t cap = (size_t)BIG * 400 + 4096, len = 0;
  char *s = malloc(cap);
  REQUIRE(s);
  len += (size_t)snprintf(s, cap,
      "{\"schema_version\": {\"major\": 8, \"minor\": 17}, \"range_constraints\": {},"
      " \"graph_module\": {\"signature\": {\"input_specs\": ["
      "{\"user_input\": {\"arg\": " TENSOR("x") "}}, {\"user_input\": {\"arg\": " TENSOR("y") "}}],"
      " \"output_specs\": [{\"user_output\": {\"arg\": {\"as_tensor\": {\"name\": \"n%d\"}}}}]},"
      " \"graph\": {\"inputs\": [" TENSOR("x") ", " TENSOR("y") "],"
      " \"outputs\": [{\"as_tensor\": {\"name\": \"n%d\"}}], \"sym_int_values\": {},"
      " \"tensor_values\": {\"x\": {\"dtype\": 7, \"sizes\": [" D2(4, 8) "]},"
      " \"y\": {\"dtype\": 7, \"sizes\": [" D2(4, 8) "]}}, \"nodes\": [",
      BIG - 1, BIG - 1);
  /* (the nodes' outputs have no tensor_values: no recorded type to compare) */
  char prev[16] = "x", before[16] = "y";
  static const char *const ops[3] = {"aten.add.Tensor", "aten.mul.Tensor", "aten.relu.default"};
  for (int i = 0; i < BIG; i++) {
    len += (size_t)snprintf(s + len, cap - len,
        "%s{\"name\": \"n%d\", \"target\": \"torch.ops.%s\", \"inputs\": ["
        "{\"name\": \"self\", \"arg\": {\"as_tensor\": {\"name\": \"%s\"}}, \"kind\": 1}",
        i ? ", " : "", i, ops[i % 3], prev);
    if (i % 3 != 2)
      len += (size_t)snprintf(s + len, cap - len,
          ", {\"name\": \"other\", \"arg\": {\"as_tensor\": {\"name\": \"%s\"}}, \"kind\": 1}", before);
    len += (size_t)snprintf(s + len, cap - len, "], \"outputs\": [{\"as_tensor\": {\"name\": \"n%d\"}}]}", i);
    memcpy(before, prev, sizeof prev);
    snprintf(prev, sizeof prev, "n%d", i);
  }
  len += (size_t)snprintf(s + len, cap - len, "]}}}");
  entry es[] = {{"big/models/model.json", s, len, false}};
  size_t size = 0;
  uint8_t *zip = zip_entries(es, 1, &size);
  free(s);
  REQUIRE(zip);
  alloy_model *m = NULL;
  uint64_t t0 = alloy_graph_name_table_work();
  CHECK_OK(alloy_model_load_pt2_memory(zip, size, "big.pt2", &m));
  check_work(t0, BIG, "importing a .pt2");
  if (m) {
    alloy_graph *g = alloy_model_graph(m);
    CHECK_INT(alloy_graph_num_nodes(g), BIG);
    CHECK(alloy_graph_find_value(g, "n12345") != NULL);
  }
  alloy_model_free(m);
  free(zip);
}

TEST(pt2_inlines_a_long_subgraph_with_names_of_its_own) {
  /* wrap_with_set_grad_enabled over a chain of 2000 relus whose names are
   * bindings of the subgraph's scope (found by hash): one of them is
   * called x, like the top graph's input, which the node after the
   * subgraph must still see. */
  enum { CHAIN = 2000 };
  size_t cap = (size_t)CHAIN * 200 + 4096, len = 0;
  char *s = malloc(cap);
  REQUIRE(s);
  len += (size_t)snprintf(s, cap,
      "{\"schema_version\": {\"major\": 8, \"minor\": 17}, \"range_constraints\": {},"
      " \"graph_module\": {\"signature\": {\"input_specs\": [{\"user_input\": {\"arg\": "
      TENSOR("x") "}}], \"output_specs\": [{\"user_output\": {\"arg\": " TENSOR("y") "}}]},"
      " \"graph\": {\"inputs\": [" TENSOR("x") "], \"outputs\": [" TENSOR("y") "],"
      " \"sym_int_values\": {}, \"tensor_values\": {\"x\": {\"dtype\": 7, \"sizes\": [" D2(4, 8) "]}},"
      " \"nodes\": [{\"name\": \"w\", \"target\": \"torch.ops.higher_order.wrap_with_set_grad_enabled\","
      " \"inputs\": [{\"name\": \"\", \"arg\": {\"as_bool\": false}, \"kind\": 1},"
      " {\"name\": \"\", \"arg\": {\"as_graph\": {\"name\": \"sub\", \"graph\": {"
      "\"inputs\": [" TENSOR("a") "], \"outputs\": [" TENSOR("r%d") "], \"nodes\": [",
      CHAIN - 1);
  for (int i = 0; i < CHAIN; i++) {
    char in[16] = "a", out[16] = "x";
    if (i == 1001) snprintf(in, sizeof in, "x");
    else if (i) snprintf(in, sizeof in, "r%d", i - 1);
    if (i != 1000) snprintf(out, sizeof out, "r%d", i);
    len += (size_t)snprintf(s + len, cap - len,
        "%s{\"name\": \"%s\", \"target\": \"torch.ops.aten.relu.default\", \"inputs\": ["
        "{\"name\": \"self\", \"arg\": {\"as_tensor\": {\"name\": \"%s\"}}, \"kind\": 1}],"
        " \"outputs\": [{\"as_tensor\": {\"name\": \"%s\"}}]}", i ? ", " : "", out, in, out);
  }
  len += (size_t)snprintf(s + len, cap - len,
      "]}}}, \"kind\": 1}, {\"name\": \"\", \"arg\": " TENSOR("x") ", \"kind\": 1}],"
      " \"outputs\": [" TENSOR("w") "]},"
      " {\"name\": \"y\", \"target\": \"torch.ops.aten.sub.Tensor\", \"inputs\": ["
      "{\"name\": \"self\", \"arg\": " TENSOR("w") ", \"kind\": 1},"
      "{\"name\": \"other\", \"arg\": " TENSOR("x") ", \"kind\": 1}],"
      " \"outputs\": [" TENSOR("y") "]}]}}}");
  json_error_t je;
  json_t *root = json_loadb(s, len, 0, &je);
  free(s);
  if (!root) harness_fail(__FILE__, __LINE__, "test JSON: %s at %d", je.text, je.column);
  REQUIRE(root);
  alloy_graph *g = NULL;
  CHECK_OK(pt2_graph_from_json("sub.pt2", "sub/", root, &g));
  json_decref(root);
  REQUIRE(g);
  CHECK_INT(alloy_graph_num_nodes(g), CHAIN + 1);
  /* y = w - x reads the top graph's input x, and w the chain's end */
  alloy_node *y = alloy_graph_node(g, CHAIN);
  REQUIRE(y);
  CHECK(alloy_node_arg(y, 1)->u.value == alloy_graph_input(g, 0));
  CHECK(alloy_node_arg(y, 0)->u.value == alloy_node_output(alloy_graph_node(g, CHAIN - 1), 0));
  /* inside, the relu after the one named x read that one */
  CHECK(alloy_node_arg(alloy_graph_node(g, 1001), 0)->u.value ==
        alloy_node_output(alloy_graph_node(g, 1000), 0));
  CHECK_OK(alloy_graph_verify(g));
  alloy_graph_free(g);
}

/* --- the linear versions of dce, replace_uses and extract ------------------ */

TEST(graph_dce_drops_many_dead_users_of_one_value) {
  /* x feeds BIG relus of which only every hundredth is an output. */
  alloy_graph *g = alloy_graph_new();
  REQUIRE(g);
  alloy_dim dims[2];
  alloy_value_type t = f32_4x8(dims);
  alloy_value *x = NULL;
  CHECK_OK(alloy_graph_add_input(g, "x", &t, &x));
  REQUIRE(x);
  const alloy_op *relu = alloy_op_find("aten.relu.default");
  alloy_arg a = alloy_arg_value(x);
  alloy_value **outs = calloc(BIG / 100, sizeof *outs);
  REQUIRE(outs);
  for (int i = 0; i < BIG; i++) {
    alloy_node *n = NULL;
    CHECK_OK(alloy_graph_add_node(g, relu, &a, 1, NULL, NULL, 0, NULL, &n));
    if (n && i % 100 == 0) outs[i / 100] = alloy_node_output(n, 0);
  }
  CHECK_OK(alloy_graph_set_outputs(g, outs, BIG / 100));
  CHECK_INT(alloy_graph_dce(g), BIG - BIG / 100);
  CHECK_INT(alloy_graph_num_nodes(g), BIG / 100);
  CHECK_INT(alloy_value_num_users(x), BIG / 100);
  bool ordered = true;
  for (int i = 0; i < alloy_value_num_users(x); i++)
    ordered &= alloy_value_user(x, i) == alloy_graph_node(g, i);
  CHECK(ordered);
  CHECK_OK(alloy_graph_verify(g));
  free(outs);
  alloy_graph_free(g);
}

TEST(graph_replace_uses_merges_users_in_order) {
  /* a and b each feed alternate nodes, and one node reads both: replacing
   * a by b leaves b's users all of them, in graph order, each once. */
  alloy_graph *g = alloy_graph_new();
  REQUIRE(g);
  alloy_dim dims[2];
  alloy_value_type t = f32_4x8(dims);
  alloy_value *a = NULL, *b = NULL;
  CHECK_OK(alloy_graph_add_input(g, "a", &t, &a));
  CHECK_OK(alloy_graph_add_input(g, "b", &t, &b));
  REQUIRE(a && b);
  const alloy_op *relu = alloy_op_find("aten.relu.default"), *add = alloy_op_find("aten.add.Tensor");
  alloy_node *n = NULL;
  for (int i = 0; i < 10; i++) {
    alloy_arg x = alloy_arg_value(i % 2 ? b : a);
    CHECK_OK(alloy_graph_add_node(g, relu, &x, 1, NULL, NULL, 0, NULL, &n));
  }
  alloy_arg both[2] = {alloy_arg_value(a), alloy_arg_value(b)};
  CHECK_OK(alloy_graph_add_node(g, add, both, 2, NULL, NULL, 0, NULL, &n));
  REQUIRE(n);
  alloy_value *last = alloy_node_output(n, 0);
  CHECK_OK(alloy_graph_set_outputs(g, &last, 1));
  CHECK_OK(alloy_graph_replace_uses(g, a, b));
  CHECK_INT(alloy_value_num_users(a), 0);
  CHECK_INT(alloy_value_num_users(b), 11);
  bool ordered = true;
  for (int i = 0; i < alloy_value_num_users(b); i++)
    ordered &= alloy_value_user(b, i) == alloy_graph_node(g, i);
  CHECK(ordered);
  CHECK(alloy_node_arg(n, 0)->u.value == b && alloy_node_arg(n, 1)->u.value == b);
  /* A value defined after a user of the one it replaces is refused. */
  alloy_value *r0 = alloy_node_output(alloy_graph_node(g, 0), 0);
  alloy_error *e = alloy_graph_replace_uses(g, b, r0);
  CHECK(e && strstr(alloy_error_message(e), "is defined after its new user (node 0)"));
  alloy_error_free(e);
  CHECK_OK(alloy_graph_verify(g));
  alloy_graph_free(g);
}

TEST(graph_extract_refuses_a_node_of_another_graph) {
  alloy_graph *g = alloy_graph_new(), *h = alloy_graph_new(), *sub = NULL;
  REQUIRE(g && h);
  alloy_dim dims[2];
  alloy_value_type t = f32_4x8(dims);
  alloy_value *x = NULL, *y = NULL;
  CHECK_OK(alloy_graph_add_input(g, "x", &t, &x));
  CHECK_OK(alloy_graph_add_input(h, "x", &t, &y));
  const alloy_op *relu = alloy_op_find("aten.relu.default");
  alloy_arg a = alloy_arg_value(x), b = alloy_arg_value(y);
  alloy_node *ng = NULL, *nh = NULL;
  CHECK_OK(alloy_graph_add_node(g, relu, &a, 1, NULL, NULL, 0, NULL, &ng));
  CHECK_OK(alloy_graph_add_node(h, relu, &b, 1, NULL, NULL, 0, NULL, &nh));
  REQUIRE(ng && nh);
  alloy_node *const mine[1] = {ng}, *const theirs[2] = {ng, nh};
  CHECK_OK(alloy_graph_extract(g, mine, 1, &sub));
  CHECK(sub && alloy_graph_num_nodes(sub) == 1);
  alloy_graph_free(sub);
  sub = NULL;
  alloy_error *e = alloy_graph_extract(g, theirs, 2, &sub);
  CHECK(e && strstr(alloy_error_message(e), "extract: node 1 is not in the graph"));
  CHECK(sub == NULL);
  alloy_error_free(e);
  alloy_graph_free(g);
  alloy_graph_free(h);
}
