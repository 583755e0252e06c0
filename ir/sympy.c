/*
 * ir/sympy.c: a recursive-descent reader for sympy `srepr` size expressions
 * (see ir/sympy.h). Every call is Head(arguments); the heads torch.export
 * uses for sizes map onto the arithmetic of alloy/sym.h, which does the
 * simplifying, so this file only checks syntax and ranges of literals.
 */
#include "ir/sympy.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Each call level is a few C frames; 64 is far deeper than any size
 * torch.export writes and keeps hostile input off the end of the stack. */
#define SYMPY_MAX_DEPTH 64
/* Names are copied to a stack buffer to NUL-terminate them for alloy_sym_new. */
#define SYMPY_MAX_NAME 127

typedef enum {
  H_INTEGER,
  H_RATIONAL,
  H_SYMBOL,
  H_ADD,
  H_MUL,
  H_MAX,
  H_MIN,
  H_POW,
  H_FLOORDIV,
  H_MOD,
  H_MODULAR_INDEXING,
} head_kind;

static const struct {
  const char *name;
  head_kind kind;
} heads[] = {
    {"Integer", H_INTEGER},
    {"Rational", H_RATIONAL},
    {"Symbol", H_SYMBOL},
    {"Add", H_ADD},
    {"Mul", H_MUL},
    {"Max", H_MAX},
    {"Min", H_MIN},
    {"Pow", H_POW},
    {"FloorDiv", H_FLOORDIV},
    {"CleanDiv", H_FLOORDIV},
    {"Mod", H_MOD},
    {"PythonMod", H_MOD},
    {"ModularIndexing", H_MODULAR_INDEXING},
};

typedef struct {
  alloy_symtab *st;
  const char *s;
  size_t len, pos;
  int depth;
  alloy_error *err; /* the first error; later ones are dropped */
} parser;

static bool fail(parser *p, alloy_error_code code, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static bool fail(parser *p, alloy_error_code code, size_t at, const char *fmt, ...) {
  char msg[256];
  va_list ap;
  if (p->err) return false;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  p->err = alloy_error_new(code, "column %zu: %s", at + 1, msg);
  return false;
}

static int peek(const parser *p) { return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1; }
static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_ident_start(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_ident_char(int c) { return is_ident_start(c) || is_digit(c); }

static void skip_ws(parser *p) {
  int c;
  while ((c = peek(p)) == ' ' || c == '\t' || c == '\n' || c == '\r') p->pos++;
}

/* What is at pos, for "expected X, found Y". */
static const char *found(const parser *p, char buf[16]) {
  int c = peek(p);
  if (c < 0) return "the end of the text";
  if (c >= ' ' && c < 0x7f)
    snprintf(buf, 16, "'%c'", c);
  else
    snprintf(buf, 16, "byte 0x%02x", (unsigned)c);
  return buf;
}

static bool expect(parser *p, char c) {
  char buf[16];
  skip_ws(p);
  if (peek(p) == c) {
    p->pos++;
    return true;
  }
  return fail(p, ALLOY_ERR_PARSE, p->pos, "expected '%c', found %s", c, found(p, buf));
}

/* Length of the identifier at pos (0 when there is none); moves past it. */
static size_t ident(parser *p) {
  size_t start = p->pos;
  if (!is_ident_start(peek(p))) return 0;
  while (is_ident_char(peek(p))) p->pos++;
  return p->pos - start;
}

static bool word_is(const char *s, size_t n, const char *word) {
  return strlen(word) == n && memcmp(s, word, n) == 0;
}

/* A decimal literal with an optional '-'. The negative side reaches 2^63 so
 * that INT64_MIN, which a size expression may well hold, reads back. */
static bool literal(parser *p, int64_t *out) {
  char buf[16];
  skip_ws(p);
  size_t at = p->pos;
  bool negative = peek(p) == '-';
  if (negative) p->pos++;
  if (!is_digit(peek(p)))
    return fail(p, ALLOY_ERR_PARSE, p->pos, "expected an integer, found %s", found(p, buf));
  uint64_t lim = (uint64_t)INT64_MAX + negative, v = 0;
  for (; is_digit(peek(p)); p->pos++) {
    unsigned dig = (unsigned)(p->s[p->pos] - '0');
    if (v > (lim - dig) / 10)
      return fail(p, ALLOY_ERR_UNSUPPORTED, at, "integer literal outside the int64 range");
    v = v * 10 + dig;
  }
  *out = !negative ? (int64_t)v : v > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)v;
  return true;
}

/* The table reports arithmetic it cannot represent as a sticky error; it
 * becomes this call's error, at the head whose operation failed. */
static bool arith_ok(parser *p, size_t at) {
  const char *msg = alloy_symtab_error(p->st);
  if (!msg) return true;
  size_t n = 0;
  while (at + n < p->len && is_ident_char((unsigned char)p->s[at + n])) n++;
  fail(p, ALLOY_ERR_UNSUPPORTED, at, "%.*s: %s", (int)n, p->s + at, msg);
  alloy_symtab_clear_error(p->st);
  return false;
}

static bool expr(parser *p, alloy_dim *out);

typedef alloy_dim (*dim_op)(alloy_symtab *, alloy_dim, alloy_dim);

/* Between the arguments of "Head(...)": true after a ',' (another
 * argument follows), false after the ')' and false with p->err set on
 * anything else. */
static bool next_arg(parser *p) {
  char buf[16];
  skip_ws(p);
  int c = peek(p);
  if (c == ',' || c == ')') p->pos++;
  if (c == ',') return true;
  if (c != ')') fail(p, ALLOY_ERR_PARSE, p->pos, "expected ',' or ')', found %s", found(p, buf));
  return false;
}

/* After "Head(": one or more arguments, folded with op as they are read so
 * that the arity has no limit and nothing is stored, then the ')'. */
static bool fold_args(parser *p, size_t at, dim_op op, alloy_dim *out) {
  alloy_dim acc, x;
  if (!expr(p, &acc)) return false;
  while (next_arg(p)) {
    if (!expr(p, &x)) return false;
    acc = op(p->st, acc, x);
    if (!arith_ok(p, at)) return false;
  }
  *out = acc;
  return !p->err;
}

/* After "Head(": exactly n arguments and the ')'; cols[i] is where argument
 * i starts, for errors about its value. */
static bool fixed_args(parser *p, int n, alloy_dim *args, size_t *cols) {
  for (int i = 0; i < n; i++) {
    if (i > 0 && !expect(p, ',')) return false;
    skip_ws(p);
    cols[i] = p->pos;
    if (!expr(p, &args[i])) return false;
  }
  return expect(p, ')');
}

/* After "Symbol(": the quoted name, the keyword assumptions and the ')'. */
static bool symbol(parser *p, size_t at, alloy_dim *out) {
  char buf[16];
  skip_ws(p);
  int quote = peek(p);
  if (quote != '\'' && quote != '"')
    return fail(p, ALLOY_ERR_PARSE, p->pos, "expected a quoted symbol name, found %s",
                found(p, buf));
  size_t name_at = ++p->pos;
  while (p->pos < p->len && p->s[p->pos] != quote) p->pos++;
  if (p->pos == p->len)
    return fail(p, ALLOY_ERR_PARSE, p->pos, "expected %c to end the symbol name, found %s", quote,
                found(p, buf));
  const char *name = p->s + name_at;
  size_t n = p->pos - name_at;
  int shown = n > 64 ? 64 : (int)n;
  p->pos++;
  /* Alloy prints dims as text that must parse back, so names are
   * identifiers; this also keeps NUL and quotes out of them. */
  bool ok = n > 0 && n <= SYMPY_MAX_NAME && is_ident_start((unsigned char)name[0]);
  for (size_t i = 1; ok && i < n; i++) ok = is_ident_char((unsigned char)name[i]);
  if (!ok)
    return fail(p, ALLOY_ERR_UNSUPPORTED, name_at,
                "expected a symbol name that is an identifier of at most %d characters, "
                "found '%.*s'",
                SYMPY_MAX_NAME, shown, name);

  int integer = -1, positive = -1, nonnegative = -1; /* -1: not given */
  while (next_arg(p)) {
    skip_ws(p);
    size_t key_at = p->pos, kn = ident(p);
    if (!kn)
      return fail(p, ALLOY_ERR_PARSE, key_at,
                  "expected an assumption such as integer=True, found %s", found(p, buf));
    if (!expect(p, '=')) return false;
    skip_ws(p);
    size_t val_at = p->pos, vn = ident(p);
    bool val = word_is(p->s + val_at, vn, "True");
    if (!val && !word_is(p->s + val_at, vn, "False")) {
      if (!vn)
        return fail(p, ALLOY_ERR_PARSE, val_at, "expected True or False, found %s", found(p, buf));
      return fail(p, ALLOY_ERR_PARSE, val_at, "expected True or False, found '%.*s'",
                  vn > 64 ? 64 : (int)vn, p->s + val_at);
    }
    const char *key = p->s + key_at;
    /* Other assumptions (real, finite, ...) follow from these or do not
     * narrow an integer's range; they are accepted and ignored. */
    int *slot = word_is(key, kn, "integer")       ? &integer
                : word_is(key, kn, "positive")    ? &positive
                : word_is(key, kn, "nonnegative") ? &nonnegative
                                                  : NULL;
    if (slot && *slot >= 0)
      return fail(p, ALLOY_ERR_PARSE, key_at, "expected each assumption once, found %.*s again",
                  (int)kn, key);
    if (slot) *slot = val;
  }
  if (p->err) return false;
  if (integer != 1)
    return fail(p, ALLOY_ERR_UNSUPPORTED, at,
                "unsupported Symbol '%.*s': a size must be declared integer=True", shown, name);

  if (alloy_sym_find(p->st, name, n, out)) return true;
  char cname[SYMPY_MAX_NAME + 1];
  memcpy(cname, name, n);
  cname[n] = '\0';
  /* torch.export names data-dependent sizes u0, u1, ...: they are sizes, so
   * never negative, whatever their assumptions say. */
  bool unbacked = n > 1 && name[0] == 'u';
  for (size_t i = 1; unbacked && i < n; i++) unbacked = is_digit((unsigned char)name[i]);
  /* INT64_MIN is the table's "no lower bound". */
  int64_t lo = positive == 1 ? 1 : nonnegative == 1 ? 0 : INT64_MIN;
  alloy_error *e = unbacked ? alloy_sym_new_unbacked(p->st, cname, 0, ALLOY_SYM_INF, out)
                            : alloy_sym_new(p->st, cname, lo, ALLOY_SYM_INF, out);
  if (e) p->err = alloy_error_wrap(e, "column %zu", name_at + 1); /* OOM: no other cause */
  return e == NULL;
}

/* base ** k by squaring: O(log k) operations, so a huge k ends in an
 * overflow or the table's size limit instead of a long loop. */
static bool power(parser *p, size_t at, alloy_dim base, int64_t k, alloy_dim *out) {
  alloy_dim r = alloy_dim_const(1);
  while (k > 0) {
    if (k & 1) r = alloy_dim_mul(p->st, r, base);
    k >>= 1;
    /* the last squaring would be unused, and could overflow needlessly */
    if (k > 0) base = alloy_dim_mul(p->st, base, base);
    if (!arith_ok(p, at)) return false;
  }
  *out = r;
  return true;
}

static bool call(parser *p, head_kind kind, size_t at, alloy_dim *out) {
  alloy_dim a[3];
  size_t cols[3];
  int64_t v, q;
  switch (kind) {
    case H_INTEGER:
      if (!literal(p, &v) || !expect(p, ')')) return false;
      *out = alloy_dim_const(v);
      return true;
    case H_RATIONAL: {
      if (!literal(p, &v) || !expect(p, ',')) return false;
      skip_ws(p);
      size_t q_at = p->pos;
      if (!literal(p, &q) || !expect(p, ')')) return false;
      if (q == 0) return fail(p, ALLOY_ERR_PARSE, q_at, "expected a non-zero denominator");
      if (q == -1 && v == INT64_MIN)
        return fail(p, ALLOY_ERR_UNSUPPORTED, at, "Rational: int64 overflow");
      if (v % q != 0)
        return fail(p, ALLOY_ERR_UNSUPPORTED, at,
                    "unsupported Rational(%lld, %lld): a size must be an integer", (long long)v,
                    (long long)q);
      *out = alloy_dim_const(v / q);
      return true;
    }
    case H_SYMBOL:
      return symbol(p, at, out);
    case H_ADD:
      return fold_args(p, at, alloy_dim_add, out);
    case H_MUL:
      return fold_args(p, at, alloy_dim_mul, out);
    case H_MAX:
      return fold_args(p, at, alloy_dim_max, out);
    case H_MIN:
      return fold_args(p, at, alloy_dim_min, out);
    case H_POW:
      if (!fixed_args(p, 2, a, cols)) return false;
      if (!alloy_dim_is_const(a[1]) || a[1].value < 0)
        return fail(p, ALLOY_ERR_UNSUPPORTED, cols[1],
                    "unsupported Pow exponent: expected a constant integer >= 0");
      return power(p, at, a[0], a[1].value, out);
    case H_FLOORDIV:
      if (!fixed_args(p, 2, a, cols)) return false;
      *out = alloy_dim_floordiv(p->st, a[0], a[1]);
      return arith_ok(p, at);
    case H_MOD:
      if (!fixed_args(p, 2, a, cols)) return false;
      *out = alloy_dim_mod(p->st, a[0], a[1]);
      return arith_ok(p, at);
    case H_MODULAR_INDEXING:
      if (!fixed_args(p, 3, a, cols)) return false;
      *out = alloy_dim_floordiv(p->st, a[0], a[1]);
      if (!arith_ok(p, at)) return false;
      *out = alloy_dim_mod(p->st, *out, a[2]);
      return arith_ok(p, at);
  }
  return fail(p, ALLOY_ERR_INTERNAL, at, "unhandled sympy head");
}

static bool expr(parser *p, alloy_dim *out) {
  char buf[16];
  skip_ws(p);
  size_t at = p->pos;
  if (p->depth >= SYMPY_MAX_DEPTH)
    return fail(p, ALLOY_ERR_UNSUPPORTED, at, "expression nested deeper than %d calls",
                SYMPY_MAX_DEPTH);
  size_t n = ident(p);
  if (!n)
    return fail(p, ALLOY_ERR_PARSE, at,
                "expected a sympy expression such as Integer(...), found %s", found(p, buf));
  const char *name = p->s + at;
  size_t h = 0, nheads = sizeof heads / sizeof heads[0];
  while (h < nheads && !word_is(name, n, heads[h].name)) h++;
  if (h == nheads)
    return fail(p, ALLOY_ERR_UNSUPPORTED, at, "unsupported sympy function '%.*s'",
                n > 64 ? 64 : (int)n, name);
  if (!expect(p, '(')) return false;
  p->depth++;
  bool ok = call(p, heads[h].kind, at, out);
  p->depth--;
  return ok;
}

alloy_error *alloy_sympy_parse(alloy_symtab *st, const char *text, size_t len, alloy_dim *out) {
  char buf[16];
  if (!st || !out || (!text && len))
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "alloy_sympy_parse: NULL argument");
  if (alloy_symtab_error(st))
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                           "alloy_sympy_parse: the symbol table holds an unreported error (%s)",
                           alloy_symtab_error(st));
  parser p = {st, text ? text : "", len, 0, 0, NULL};
  alloy_dim d;
  bool ok = expr(&p, &d);
  if (ok) {
    skip_ws(&p);
    if (p.pos < len)
      ok = fail(&p, ALLOY_ERR_PARSE, p.pos, "expected the end of the text, found %s",
                found(&p, buf));
  }
  if (!ok)
    return p.err ? p.err
                 : alloy_error_new(ALLOY_ERR_INTERNAL, "alloy_sympy_parse: failed silently");
  *out = d;
  return NULL;
}
