/*
 * ir/json.h: a read-only JSON document, parsed in one pass into blocks that
 * are freed together, for the torch.export importer (ir/pt2_graph.c reads
 * models/model.json with it). Implemented in ir/json.c.
 *
 * Why not jansson, which the rest of the library uses: jansson allocates
 * every value, string and object hash table on its own and frees them one
 * by one, which for the 34 MB model.json of a 100,000-node program was two
 * seconds of the import's two and a half. Here a value is 16 bytes in a
 * contiguous array, a string is copied once into the same blocks (a short
 * key once for all its uses), and the whole document goes in one sweep.
 *
 * What is accepted, and what each error says, follows jansson's json_loadb
 * with no flags, so that an archive reads the same whichever parser meets
 * it: the top value is an object or an array, nothing but whitespace may
 * follow it, strings are UTF-8 with no \u0000, numbers without a fraction
 * or exponent are int64 (a larger one is an error), nesting stops at 2048,
 * and even jansson's loss of a NUL byte right after a number or a literal
 * is kept. A key given twice keeps its first place and its last value.
 * Errors name the line and column (of characters, 1-based) where jansson
 * would, in jansson's words ("']' expected near 'x'").
 *
 * Accessors take NULL, or a value of another kind, and answer as jansson's
 * do for them (NULL, 0, false), so that a lookup chain needs no checks
 * until its end. A document is not changed after parsing: it may be read
 * from several threads; distinct documents are independent.
 */
#ifndef ALLOY_IR_JSON_H
#define ALLOY_IR_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum jv_kind {
  JV_NULL,
  JV_FALSE,
  JV_TRUE,
  JV_INT,
  JV_REAL,
  JV_STRING,
  JV_ARRAY,
  JV_OBJECT,
} jv_kind;

typedef struct jv_member jv_member;

/* One value. n: a string's bytes (it is NUL-terminated too), an array's
 * items or an object's members. */
typedef struct jv {
  uint8_t kind;    /* jv_kind */
  uint8_t indexed; /* an object with a jv_index before its members */
  uint32_t n;
  union {
    int64_t i;
    double f;
    const char *s;
    const struct jv *items;    /* in document order */
    const jv_member *members;  /* in document order */
  } u;
} jv;

struct jv_member {
  const char *key; /* NUL-terminated, never holds a NUL */
  jv value;
};

/* An object of more than eight members has this just before them: its
 * keys hashed, for lookups in O(1). */
typedef struct jv_index {
  const uint32_t *slots; /* member + 1, 0 for empty */
  uint32_t mask;         /* slots - 1 */
} jv_index;

/* The blocks one document lives in. Zero-initialize; jv_doc_free releases
 * everything the parse made (and may be called after a failed parse). */
typedef struct jv_block jv_block;
typedef struct jv_doc {
  jv_block *blocks;
  unsigned char *cur, *end; /* the free part of the newest block */
  size_t next;              /* the size of the next block */
} jv_doc;

typedef struct jv_error {
  int line, column; /* where jansson's lexer would stand, 1-based */
  bool oom;         /* out of memory, not a syntax error */
  char text[160];   /* jansson's wording */
} jv_error;

/* Parses text[0, len) (no NUL needed; nothing past len is read) into doc,
 * *root being its top object or array. On failure *root is NULL, *err says
 * where and why, and whatever was made is doc's to free. */
bool jv_parse(jv_doc *doc, const char *text, size_t len, const jv **root, jv_error *err);
void jv_doc_free(jv_doc *doc);

/* The member called key, or NULL: O(1) (hashed) in a large object, a scan
 * of at most eight keys in a small one. NULL for a non-object. */
const jv *jv_get(const jv *o, const char *key);

static inline bool jv_is_object(const jv *v) { return v && v->kind == JV_OBJECT; }
static inline bool jv_is_array(const jv *v) { return v && v->kind == JV_ARRAY; }
static inline bool jv_is_string(const jv *v) { return v && v->kind == JV_STRING; }
static inline bool jv_is_int(const jv *v) { return v && v->kind == JV_INT; }
static inline bool jv_is_number(const jv *v) {
  return v && (v->kind == JV_INT || v->kind == JV_REAL);
}
static inline bool jv_is_bool(const jv *v) {
  return v && (v->kind == JV_TRUE || v->kind == JV_FALSE);
}
static inline bool jv_is_true(const jv *v) { return v && v->kind == JV_TRUE; }

static inline int64_t jv_int(const jv *v) { return jv_is_int(v) ? v->u.i : 0; }
/* An int as a double, a real as it is; 0 for anything else. */
static inline double jv_number(const jv *v) {
  return !v ? 0 : v->kind == JV_INT ? (double)v->u.i : v->kind == JV_REAL ? v->u.f : 0;
}
static inline const char *jv_str(const jv *v) { return jv_is_string(v) ? v->u.s : NULL; }
static inline size_t jv_strlen(const jv *v) { return jv_is_string(v) ? v->n : 0; }

static inline size_t jv_array_size(const jv *v) { return jv_is_array(v) ? v->n : 0; }
static inline const jv *jv_at(const jv *v, size_t i) {
  return jv_is_array(v) && i < v->n ? &v->u.items[i] : NULL;
}

/* Each item of array arr (none for anything else), as i and v. */
#define jv_array_foreach(arr, i, v) \
  for ((i) = 0; (i) < jv_array_size(arr) && ((v) = jv_at((arr), (i))); (i)++)

static inline size_t jv_object_size(const jv *v) { return jv_is_object(v) ? v->n : 0; }
/* The i-th member in document order, or NULL. */
static inline const jv_member *jv_member_at(const jv *v, size_t i) {
  return jv_is_object(v) && i < v->n ? &v->u.members[i] : NULL;
}

#endif
