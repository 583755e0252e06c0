/*
 * ir/json.c: the JSON reader of ir/json.h, a recursive-descent parser in
 * the manner of ir/sympy.c that builds a document into blocks of its own.
 *
 * Values are parsed onto two stacks (items, members) and copied into the
 * document in one piece when their array or object closes, so each value is
 * written twice in all and nothing is reallocated in the document. Strings
 * are scanned once for their end (eight bytes a step, checking escapes and
 * UTF-8 as jansson's lexer does) and copied, or decoded when they hold
 * escapes; a key of up to 16 bytes is copied only the first time it is met
 * (for the first 4096 keys). An object of more than eight members gets a
 * hash index (tensor_values has one member per value of the program).
 * Errors follow jansson's load.c: the same checks in the same order, the
 * same words, the first error kept.
 */
#include "ir/json.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

enum {
  MAX_DEPTH = 2048,  /* jansson's JSON_PARSER_MAX_DEPTH */
  SMALL_OBJECT = 8,  /* members found by a scan; more get an index */
  CONTEXT_MAX = 20,  /* the longest token jansson quotes in an error */
  FIRST_BLOCK = 64 << 10,
  LAST_BLOCK = 8 << 20,
};

/* --- the document's blocks ----------------------------------------------*/

struct jv_block {
  jv_block *next;
  _Alignas(16) unsigned char data[];
};

static void *doc_alloc_slow(jv_doc *d, size_t size);

static inline void *doc_alloc(jv_doc *d, size_t size, size_t align) {
  uintptr_t at = ((uintptr_t)d->cur + (align - 1)) & ~(uintptr_t)(align - 1);
  if (d->cur && at <= (uintptr_t)d->end && size <= (uintptr_t)d->end - at) {
    d->cur = (unsigned char *)(at + size);
    return (void *)at;
  }
  return doc_alloc_slow(d, size);
}

/* A new block (every block's data is aligned for anything). */
static void *doc_alloc_slow(jv_doc *d, size_t size) {
  size_t cap = d->next ? d->next : FIRST_BLOCK;
  if (size > cap / 2) {
    /* A large array or object: a block of its own, behind the newest, so
     * that the newest block's free part is not given up. */
    jv_block *b = malloc(sizeof *b + size);
    if (!b) return NULL;
    if (d->blocks) {
      b->next = d->blocks->next;
      d->blocks->next = b;
    } else {
      b->next = NULL;
      d->blocks = b;
    }
    return b->data;
  }
  jv_block *b = malloc(sizeof *b + cap);
  if (!b) return NULL;
  b->next = d->blocks;
  d->blocks = b;
  d->cur = b->data + size;
  d->end = b->data + cap;
  d->next = cap < LAST_BLOCK / 2 ? 2 * cap : LAST_BLOCK;
  return b->data;
}

void jv_doc_free(jv_doc *d) {
  for (jv_block *b = d->blocks, *next; b; b = next) {
    next = b->next;
    free(b);
  }
  memset(d, 0, sizeof *d);
}

/* --- lookups -------------------------------------------------------------*/

const jv *jv_get(const jv *o, const char *key) {
  if (!jv_is_object(o)) return NULL;
  const jv_member *m = o->u.members;
  if (o->indexed) {
    const jv_index *x = (const jv_index *)m - 1;
    for (size_t i = alloy_hash_str(key) & x->mask; x->slots[i]; i = (i + 1) & x->mask)
      if (!strcmp(m[x->slots[i] - 1].key, key)) return &m[x->slots[i] - 1].value;
    return NULL;
  }
  for (uint32_t i = 0; i < o->n; i++)
    if (m[i].key[0] == key[0] && !strcmp(m[i].key, key)) return &m[i].value;
  return NULL;
}

/* --- the parser ----------------------------------------------------------*/

typedef const unsigned char *cur;

/* A key stored once for all its uses: a model.json spells "name", "arg"
 * and their like millions of times. */
typedef struct interned {
  const char *s;
  uint64_t w[2]; /* its bytes, zero-padded to 16 */
  uint32_t len;
} interned;

enum {
  INTERN_SLOTS = 8192,           /* a power of two */
  INTERN_MAX = INTERN_SLOTS / 2, /* keys kept; later new ones are copied */
  INTERN_LONGEST = 16,
};

typedef struct parser {
  jv_doc *doc;
  cur start, p, end;
  int depth;
  jv *items;
  size_t nitems, item_cap;
  jv_member *mems;
  size_t nmems, mem_cap;
  interned *keys; /* INTERN_SLOTS of them, or NULL */
  size_t nkeys;
  cur *skipped;    /* NULs skipped as jansson does (see skip_peeked_nul) */
  size_t nskipped, skipped_cap;
  jv_error *err;
} parser;

/* The line and column of position at, counted as jansson counts them:
 * characters (not bytes) since the last newline, a skipped NUL not one. */
static void place(const parser *ps, cur at, jv_error *err) {
  int line = 1, column = 0;
  size_t k = 0;
  for (cur q = ps->start; q < at; q++) {
    if (k < ps->nskipped && ps->skipped[k] == q) {
      k++;
      continue;
    }
    if (*q == '\n') line++, column = 0;
    else if (*q < 0x80 || (*q >= 0xC2 && *q <= 0xF4)) column++;
  }
  err->line = line;
  err->column = column;
}

/* An error at the end of token [tok, tok_end): "msg near 'token'" for a
 * short token, msg alone for a long one, and for none "msg near end of
 * file", or msg alone for utf8 (jansson's UTF-8 errors). Keeps the first
 * error. */
static bool fail(parser *ps, cur tok, cur tok_end, bool utf8, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static bool fail(parser *ps, cur tok, cur tok_end, bool utf8, const char *fmt, ...) {
  jv_error *err = ps->err;
  if (err->text[0]) return false;
  char msg[sizeof err->text - 40]; /* room for the context */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  size_t n = (size_t)(tok_end - tok);
  /* (jansson's saved text is a C string: one that starts with a NUL is none) */
  if (n > CONTEXT_MAX || ((!n || !*tok) && utf8)) snprintf(err->text, sizeof err->text, "%s", msg);
  else if (!n || !*tok) snprintf(err->text, sizeof err->text, "%s near end of file", msg);
  else snprintf(err->text, sizeof err->text, "%s near '%.*s'", msg, (int)n, (const char *)tok);
  place(ps, tok_end, err);
  return false;
}

static bool oom(parser *ps) {
  jv_error *err = ps->err;
  if (!err->text[0]) {
    snprintf(err->text, sizeof err->text, "out of memory");
    err->oom = true;
    place(ps, ps->p, err);
  }
  return false;
}

static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool is_xdigit(int c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static inline cur skip_ws(cur p, cur end) {
  if (p < end && *p > ' ') return p; /* (mostly, or after one space) */
  if (p < end && *p == ' ' && ++p < end && *p > ' ') return p;
  while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
  return p;
}

/* The first byte of [q, end) that ends a plain run of string text: a
 * quote, a backslash, a control character or a non-ASCII byte (or end).
 * Eight bytes at a time while eight are left, with the borrow tricks that
 * tell whether any byte of a word is zero or less than n; the lowest byte
 * they flag is always a real one (a borrow only runs up), so on a
 * little-endian machine it is the stop (elsewhere the word is finished
 * byte by byte). */
static inline cur plain_run(cur q, cur end) {
  const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
  while (end - q >= 8) {
    uint64_t w;
    memcpy(&w, q, 8);
    uint64_t quote = w ^ (ones * '"'), slash = w ^ (ones * '\\');
    uint64_t control = (w - ones * 0x20) & ~w;
    uint64_t quotes = (quote - ones) & ~quote, slashes = (slash - ones) & ~slash;
    uint64_t stops = (control | quotes | slashes | w) & highs;
    if (stops) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      return q + (__builtin_ctzll(stops) >> 3);
#else
      break;
#endif
    }
    q += 8;
  }
  while (q < end && *q >= 0x20 && *q < 0x80 && *q != '"' && *q != '\\') q++;
  return q;
}

/* The bytes of the UTF-8 sequence at q (2 to 4), or 0 when it is not valid
 * UTF-8: jansson's utf8_check_first and utf8_check_full. */
static size_t utf8_seq(cur q, cur end) {
  unsigned c = q[0];
  size_t n;
  uint32_t v;
  if (c >= 0xC2 && c <= 0xDF) n = 2, v = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, v = c & 0x0F;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, v = c & 0x07;
  else return 0;
  if ((size_t)(end - q) < n) return 0;
  for (size_t i = 1; i < n; i++) {
    if ((q[i] & 0xC0) != 0x80) return 0;
    v = v << 6 | (q[i] & 0x3F);
  }
  if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF) || (n == 3 && v < 0x800) ||
      (n == 4 && v < 0x10000))
    return 0;
  return n;
}

/* Whether q starts a byte sequence that is not UTF-8: jansson's lexer
 * fails on one wherever it reads it, even just to see where a token ends. */
static bool not_utf8(cur q, cur end) { return q < end && *q >= 0x80 && !utf8_seq(q, end); }

/* That failure, at q, in the token [tok, q). */
static bool undecodable(parser *ps, cur tok, cur q) {
  return fail(ps, tok, q, true, "unable to decode byte 0x%x", *q);
}

static bool push_item(parser *ps, const jv *v) {
  if (ps->nitems == ps->item_cap) {
    size_t cap = ps->item_cap ? 2 * ps->item_cap : 256;
    jv *n = realloc(ps->items, cap * sizeof *n);
    if (!n) return oom(ps);
    ps->items = n;
    ps->item_cap = cap;
  }
  ps->items[ps->nitems++] = *v;
  return true;
}

static bool push_member(parser *ps, const char *key, const jv *v) {
  if (ps->nmems == ps->mem_cap) {
    size_t cap = ps->mem_cap ? 2 * ps->mem_cap : 256;
    jv_member *n = realloc(ps->mems, cap * sizeof *n);
    if (!n) return oom(ps);
    ps->mems = n;
    ps->mem_cap = cap;
  }
  ps->mems[ps->nmems++] = (jv_member){key, *v};
  return true;
}

static void put_utf8(uint32_t v, char **t) {
  unsigned char *o = (unsigned char *)*t;
  if (v < 0x80) {
    *o++ = (unsigned char)v;
  } else if (v < 0x800) {
    *o++ = (unsigned char)(0xC0 | v >> 6);
    *o++ = (unsigned char)(0x80 | (v & 0x3F));
  } else if (v < 0x10000) {
    *o++ = (unsigned char)(0xE0 | v >> 12);
    *o++ = (unsigned char)(0x80 | (v >> 6 & 0x3F));
    *o++ = (unsigned char)(0x80 | (v & 0x3F));
  } else {
    *o++ = (unsigned char)(0xF0 | v >> 18);
    *o++ = (unsigned char)(0x80 | (v >> 12 & 0x3F));
    *o++ = (unsigned char)(0x80 | (v >> 6 & 0x3F));
    *o++ = (unsigned char)(0x80 | (v & 0x3F));
  }
  *t = (char *)o;
}

static uint32_t hex4(cur q) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) {
    unsigned c = q[i];
    v = v << 4 | (is_digit((int)c) ? c - '0' : (c | 0x20) - 'a' + 10);
  }
  return v;
}

/* The escapes of the string body [q, end) (checked by scan_string) decoded
 * into t; false, with jansson's error, for a bad surrogate. */
static bool decode(parser *ps, cur tok, cur tok_end, cur q, cur end, char *t, size_t *len) {
  char *t0 = t;
  while (q < end) {
    if (*q != '\\') {
      *t++ = (char)*q++;
      continue;
    }
    unsigned c = q[1];
    q += 2;
    if (c != 'u') {
      static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
      *t++ = to[strchr(from, (int)c) - from];
      continue;
    }
    uint32_t v = hex4(q);
    q += 4;
    if (v >= 0xD800 && v <= 0xDBFF) {
      if (end - q >= 6 && q[0] == '\\' && q[1] == 'u') {
        uint32_t v2 = hex4(q + 2);
        q += 6;
        if (v2 < 0xDC00 || v2 > 0xDFFF)
          return fail(ps, tok, tok_end, false, "invalid Unicode '\\u%04X\\u%04X'", (unsigned)v,
                      (unsigned)v2);
        v = ((v - 0xD800) << 10) + (v2 - 0xDC00) + 0x10000;
      } else {
        return fail(ps, tok, tok_end, false, "invalid Unicode '\\u%04X'", (unsigned)v);
      }
    } else if (v >= 0xDC00 && v <= 0xDFFF) {
      return fail(ps, tok, tok_end, false, "invalid Unicode '\\u%04X'", (unsigned)v);
    }
    put_utf8(v, &t);
  }
  *t = '\0';
  *len = (size_t)(t - t0);
  return true;
}

/* The copy of key [body, body + n) made before, or NULL with *slot where
 * it goes (NULL when it is not to be kept). */
static const char *interned_key(parser *ps, cur body, size_t n, interned **slot) {
  *slot = NULL;
  if (n > INTERN_LONGEST) return NULL;
  if (!ps->keys && !(ps->keys = calloc(INTERN_SLOTS, sizeof *ps->keys))) return NULL;
  unsigned char bytes[16] = {0};
  memcpy(bytes, body, n);
  uint64_t w[2];
  memcpy(w, bytes, sizeof w);
  uint64_t h = (w[0] ^ (w[1] * 0xC2B2AE3D27D4EB4Fu) ^ n) * 0x9E3779B97F4A7C15u;
  size_t i = (size_t)(h >> 40) & (INTERN_SLOTS - 1);
  for (; ps->keys[i].s; i = (i + 1) & (INTERN_SLOTS - 1)) {
    const interned *k = &ps->keys[i];
    if (k->w[0] == w[0] && k->w[1] == w[1] && k->len == n) return k->s;
  }
  if (ps->nkeys < INTERN_MAX) {
    *slot = &ps->keys[i];
    (*slot)->len = (uint32_t)n;
    memcpy((*slot)->w, w, sizeof w);
  }
  return NULL;
}

/* The string at ps->p (its opening quote) into the document: *s and *len,
 * *nul when it holds a NUL (from \u0000). A key (key) that was met before
 * is not copied again. */
static bool scan_string(parser *ps, bool key, const char **s, size_t *len, bool *nul) {
  cur tok = ps->p, q = tok + 1, end = ps->end, body = q;
  bool escapes = false;
  for (;;) {
    q = plain_run(q, end);
    if (q >= end) return fail(ps, tok, end, false, "premature end of input");
    unsigned c = *q;
    if (c == '"') break;
    if (c == '\\') {
      escapes = true;
      if (q + 1 >= end) return fail(ps, tok, end, false, "invalid escape");
      c = q[1];
      if (c == 'u') {
        for (int i = 2; i < 6; i++) {
          if (not_utf8(q + i, end)) return undecodable(ps, tok, q + i);
          if (q + i >= end || !is_xdigit(q[i]))
            return fail(ps, tok, q + i < end ? q + i + 1 : end, false, "invalid escape");
        }
        q += 6;
      } else if (strchr("\"\\/bfnrt", (int)c) && c) {
        q += 2;
      } else {
        if (not_utf8(q + 1, end)) return undecodable(ps, tok, q + 1);
        return fail(ps, tok, q + 2, false, "invalid escape");
      }
    } else if (c < 0x20) {
      if (c == '\n') return fail(ps, tok, q, false, "unexpected newline");
      return fail(ps, tok, q, false, "control character 0x%x", c);
    } else {
      size_t n = utf8_seq(q, end);
      if (!n) return undecodable(ps, tok, q);
      q += n;
    }
  }
  size_t n = (size_t)(q - body);
  interned *slot = NULL;
  if (key && !escapes && (*s = interned_key(ps, body, n, &slot))) {
    ps->p = q + 1;
    *len = n;
    *nul = false;
    return true;
  }
  char *t = doc_alloc(ps->doc, n + 1, 1);
  if (!t) return oom(ps);
  if (slot) {
    slot->s = t;
    ps->nkeys++;
  }
  ps->p = q + 1;
  if (escapes) {
    if (!decode(ps, tok, ps->p, body, q, t, len)) return false;
    *nul = memchr(t, '\0', *len) != NULL;
  } else {
    memcpy(t, body, n);
    t[n] = '\0';
    *len = n;
    *nul = false;
  }
  *s = t;
  return true;
}

/* How a token was read: as a value, as something that is no token (the
 * parser then says what it expected of the text read, [tok, ps->p)), or
 * not at all (an error said why). */
typedef enum { TOKEN_OK, TOKEN_INVALID, TOKEN_ERROR } token;

/* jansson's lexer reads the byte after a number or a literal to see that
 * it ends there, and puts it back; a NUL put back is lost (its stream
 * takes a NUL in its buffer for an empty buffer), so that byte is skipped
 * as if it were not there, in columns too: "[1\0]" is [1]. */
static bool skip_peeked_nul(parser *ps) {
  if (ps->p >= ps->end || *ps->p) return true;
  if (ps->nskipped == ps->skipped_cap) {
    size_t cap = ps->skipped_cap ? 2 * ps->skipped_cap : 16;
    cur *n = realloc(ps->skipped, cap * sizeof *n);
    if (!n) return oom(ps);
    ps->skipped = n;
    ps->skipped_cap = cap;
  }
  ps->skipped[ps->nskipped++] = ps->p++;
  return true;
}

static token invalid(parser *ps, cur q) {
  ps->p = q;
  return TOKEN_INVALID;
}

/* A number as jansson's lex_scan_number reads it. */
static token scan_number(parser *ps, jv *out) {
  cur tok = ps->p, q = tok, end = ps->end;
  if (*q == '-') q++;
  if (q < end && *q == '0') {
    q++;
    if (q < end && is_digit(*q)) return invalid(ps, q);
  } else if (q < end && is_digit(*q)) {
    while (q < end && is_digit(*q)) q++;
  } else {
    return not_utf8(q, end) ? (undecodable(ps, tok, q), TOKEN_ERROR) : invalid(ps, q);
  }
  if (not_utf8(q, end)) return undecodable(ps, tok, q), TOKEN_ERROR;
  if (q >= end || (*q != '.' && *q != 'e' && *q != 'E')) {
    bool neg = *tok == '-';
    uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (cur d = tok + neg; d < q; d++) {
      unsigned digit = *d - '0';
      if (v > (limit - digit) / 10)
        return fail(ps, tok, q, false, neg ? "too big negative integer" : "too big integer"),
               TOKEN_ERROR;
      v = v * 10 + digit;
    }
    out->kind = JV_INT;
    out->u.i = neg ? (int64_t)(0 - v) : (int64_t)v;
    ps->p = q;
    return TOKEN_OK;
  }
  if (*q == '.') {
    q++;
    if (not_utf8(q, end)) return undecodable(ps, tok, q), TOKEN_ERROR;
    if (q >= end || !is_digit(*q)) return invalid(ps, q);
    while (q < end && is_digit(*q)) q++;
  }
  if (q < end && (*q == 'e' || *q == 'E')) {
    q++;
    if (q < end && (*q == '+' || *q == '-')) q++;
    if (not_utf8(q, end)) return undecodable(ps, tok, q), TOKEN_ERROR;
    if (q >= end || !is_digit(*q)) return invalid(ps, q);
    while (q < end && is_digit(*q)) q++;
  }
  if (not_utf8(q, end)) return undecodable(ps, tok, q), TOKEN_ERROR;
  /* strtod wants a NUL and the locale's decimal point, as jansson gives it. */
  size_t n = (size_t)(q - tok);
  char small[64], *buf = n < sizeof small ? small : malloc(n + 1);
  if (!buf) return oom(ps), TOKEN_ERROR;
  memcpy(buf, tok, n);
  buf[n] = '\0';
  const char *point = localeconv()->decimal_point;
  char *dot = *point != '.' ? strchr(buf, '.') : NULL;
  if (dot) *dot = *point;
  errno = 0;
  double v = strtod(buf, NULL);
  bool overflow = (v == HUGE_VAL || v == -HUGE_VAL) && errno == ERANGE;
  if (buf != small) free(buf);
  if (overflow) return fail(ps, tok, q, false, "real number overflow"), TOKEN_ERROR;
  out->kind = JV_REAL;
  out->u.f = v;
  ps->p = q;
  return TOKEN_OK;
}

/* The token at p, or the end, is not what the parser expected: the error
 * quotes it as jansson's lexer reads it, unless reading it fails first. */
static bool expected(parser *ps, const char *what) {
  cur tok = ps->p, q = tok, end = ps->end;
  if (q < end && *q == '"') {
    const char *s;
    size_t len;
    bool nul;
    if (!scan_string(ps, false, &s, &len, &nul)) return false;
    q = ps->p;
  } else if (q < end && (*q == '-' || is_digit(*q))) {
    jv v;
    if (scan_number(ps, &v) == TOKEN_ERROR) return false;
    q = ps->p;
  } else if (q < end && is_alpha(*q)) {
    while (q < end && is_alpha(*q)) q++;
    if (not_utf8(q, end)) return undecodable(ps, tok, q);
  } else if (q < end) {
    if (not_utf8(q, end)) return undecodable(ps, tok, q);
    q += *q >= 0x80 ? utf8_seq(q, end) : 1;
  }
  return fail(ps, tok, q, false, "%s", what);
}

static bool parse_value(parser *ps, jv *out);

static bool parse_array(parser *ps, jv *out) {
  size_t base = ps->nitems;
  ps->p = skip_ws(ps->p + 1, ps->end);
  if (ps->p < ps->end && *ps->p == ']') {
    ps->p++;
  } else {
    for (;;) {
      if (ps->p >= ps->end) return expected(ps, "']' expected");
      jv item;
      if (!parse_value(ps, &item) || !push_item(ps, &item)) return false;
      ps->p = skip_ws(ps->p, ps->end);
      if (ps->p >= ps->end || *ps->p != ',') break;
      ps->p = skip_ws(ps->p + 1, ps->end);
    }
    if (ps->p >= ps->end || *ps->p != ']') return expected(ps, "']' expected");
    ps->p++;
  }
  size_t n = ps->nitems - base;
  jv *items = NULL;
  if (n && !(items = doc_alloc(ps->doc, n * sizeof *items, _Alignof(jv)))) return oom(ps);
  if (n) memcpy(items, ps->items + base, n * sizeof *items);
  ps->nitems = base;
  *out = (jv){.kind = JV_ARRAY, .n = (uint32_t)n, .u.items = items};
  return true;
}

/* The members from base on the stack as an object: a key given again
 * overwrites the first one's value in its place. */
static bool close_object(parser *ps, size_t base, jv *out) {
  size_t n = ps->nmems - base;
  const jv_member *src = n ? ps->mems + base : NULL; /* (mems is NULL before the first) */
  bool indexed = n > SMALL_OBJECT;
  jv_index *x = NULL;
  uint32_t *slots = NULL, mask = 0;
  if (indexed) {
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    mask = (uint32_t)(cap - 1);
    if (!(slots = doc_alloc(ps->doc, cap * sizeof *slots, _Alignof(uint32_t))) ||
        !(x = doc_alloc(ps->doc, sizeof *x + n * sizeof(jv_member), _Alignof(jv_index))))
      return oom(ps);
    memset(slots, 0, cap * sizeof *slots);
    *x = (jv_index){slots, mask};
  }
  jv_member *m = indexed ? (jv_member *)(x + 1) : NULL;
  if (!indexed && n && !(m = doc_alloc(ps->doc, n * sizeof *m, _Alignof(jv_member))))
    return oom(ps);
  size_t kept = 0;
  for (size_t i = 0; i < n; i++) {
    const jv_member *s = &src[i];
    size_t at = kept;
    if (indexed) {
      size_t slot = alloy_hash_str(s->key) & mask;
      for (; slots[slot]; slot = (slot + 1) & mask)
        if (!strcmp(m[slots[slot] - 1].key, s->key)) break;
      if (slots[slot]) at = slots[slot] - 1;
      else slots[slot] = (uint32_t)kept + 1;
    } else {
      for (size_t j = 0; j < kept; j++)
        if (m[j].key == s->key || (m[j].key[0] == s->key[0] && !strcmp(m[j].key, s->key))) {
          at = j;
          break;
        }
    }
    if (at == kept) m[kept++].key = s->key;
    m[at].value = s->value;
  }
  ps->nmems = base;
  *out = (jv){.kind = JV_OBJECT, .indexed = indexed, .n = (uint32_t)kept, .u.members = m};
  return true;
}

static bool parse_object(parser *ps, jv *out) {
  size_t base = ps->nmems;
  ps->p = skip_ws(ps->p + 1, ps->end);
  if (ps->p < ps->end && *ps->p == '}') {
    ps->p++;
    return close_object(ps, base, out);
  }
  for (;;) {
    if (ps->p >= ps->end || *ps->p != '"') return expected(ps, "string or '}' expected");
    cur tok = ps->p;
    const char *key;
    size_t klen;
    bool nul;
    if (!scan_string(ps, true, &key, &klen, &nul)) return false;
    if (nul) return fail(ps, tok, ps->p, false, "NUL byte in object key not supported");
    ps->p = skip_ws(ps->p, ps->end);
    if (ps->p >= ps->end || *ps->p != ':') return expected(ps, "':' expected");
    ps->p = skip_ws(ps->p + 1, ps->end);
    jv value;
    if (!parse_value(ps, &value) || !push_member(ps, key, &value)) return false;
    ps->p = skip_ws(ps->p, ps->end);
    if (ps->p >= ps->end || *ps->p != ',') break;
    ps->p = skip_ws(ps->p + 1, ps->end);
  }
  if (ps->p >= ps->end || *ps->p != '}') return expected(ps, "'}' expected");
  ps->p++;
  return close_object(ps, base, out);
}

/* The value at ps->p (whitespace skipped). */
static bool parse_value(parser *ps, jv *out) {
  if (++ps->depth > MAX_DEPTH) return expected(ps, "maximum parsing depth reached");
  if (ps->p >= ps->end) return expected(ps, "unexpected token");
  cur tok = ps->p;
  bool ok = false;
  switch (*tok) {
    case '{': ok = parse_object(ps, out); break;
    case '[': ok = parse_array(ps, out); break;
    case '"': {
      const char *s;
      size_t len;
      bool nul;
      if (!(ok = scan_string(ps, false, &s, &len, &nul))) break;
      if (nul)
        return fail(ps, tok, ps->p, false, "\\u0000 is not allowed without JSON_ALLOW_NUL");
      if (len > UINT32_MAX) return oom(ps);
      *out = (jv){.kind = JV_STRING, .n = (uint32_t)len, .u.s = s};
      break;
    }
    case '-': case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7':
    case '8': case '9':
      switch (scan_number(ps, out)) {
        case TOKEN_OK: ok = skip_peeked_nul(ps); break;
        case TOKEN_INVALID: return fail(ps, tok, ps->p, false, "invalid token");
        case TOKEN_ERROR: return false;
      }
      break;
    case '}': case ']': case ':': case ',': return expected(ps, "unexpected token");
    default: {
      cur q = tok;
      while (q < ps->end && is_alpha(*q)) q++;
      if (not_utf8(q, ps->end)) return undecodable(ps, tok, q);
      size_t n = (size_t)(q - tok);
      if (n == 4 && !memcmp(tok, "true", 4)) *out = (jv){.kind = JV_TRUE};
      else if (n == 5 && !memcmp(tok, "false", 5)) *out = (jv){.kind = JV_FALSE};
      else if (n == 4 && !memcmp(tok, "null", 4)) *out = (jv){.kind = JV_NULL};
      else return expected(ps, "invalid token");
      ps->p = q;
      ok = skip_peeked_nul(ps);
    }
  }
  if (!ok) return false;
  ps->depth--;
  return true;
}

bool jv_parse(jv_doc *doc, const char *text, size_t len, const jv **root, jv_error *err) {
  memset(err, 0, sizeof *err);
  *root = NULL;
  parser ps = {.doc = doc, .start = (cur)text, .p = (cur)text, .end = (cur)text + len, .err = err};
  /* The first block in proportion to the text (a model.json makes some
   * two bytes of document a byte), within the usual bounds. */
  if (!doc->next) {
    size_t first = len / 4;
    doc->next = first < FIRST_BLOCK ? FIRST_BLOCK : first > LAST_BLOCK ? LAST_BLOCK : first;
  }
  ps.p = skip_ws(ps.p, ps.end);
  jv *top = doc_alloc(doc, sizeof *top, _Alignof(jv));
  bool ok = top != NULL || oom(&ps);
  if (ok && (ps.p >= ps.end || (*ps.p != '[' && *ps.p != '{')))
    ok = expected(&ps, "'[' or '{' expected");
  if (ok) ok = parse_value(&ps, top);
  if (ok) {
    ps.p = skip_ws(ps.p, ps.end);
    if (ps.p < ps.end) ok = expected(&ps, "end of file expected");
  }
  free(ps.items);
  free(ps.mems);
  free(ps.keys);
  free(ps.skipped);
  if (ok) *root = top;
  return ok;
}
