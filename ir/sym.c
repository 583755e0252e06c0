/*
 * ir/sym.c: symbolic dimensions (see alloy/sym.h).
 *
 * Tensor sizes in an Alloy graph may be named symbols (a batch size, a
 * sequence length) instead of numbers, and shape functions then compute with
 * expressions such as 2*s0 + 1 or (s0 + 1)//2. This file keeps every such
 * expression in one canonical form and hash-conses it in the alloy_symtab
 * that made it, so the rest of the SDK compares shapes with alloy_dim_same (a
 * pointer compare) and never needs a general simplifier. An interval cached
 * on every node answers what the form alone cannot (is s0 - 1 >= 0?), and
 * alloy_dim_print / alloy_dim_parse give the text that .air files and error
 * messages use.
 *
 * Canonical form. A monomial is a symbol, an opaque atom (FLOORDIV, MOD, MIN
 * or MAX of canonical operands that could not be simplified away) or a MUL of
 * two or more atoms, sorted, repeated for powers. Every other non-constant dim
 * is an ADD: a constant plus nonzero multiples of distinct sorted monomials.
 * Sorting is structural (symbols by creation index), never by address, so a
 * dim prints the same way in every run and after a print/parse round trip.
 * Every simplification below rewrites to this form; none of them may depend
 * on the order in which a dim was built.
 *
 * All nodes live in an arena owned by the table and die with it. Symbols sit
 * in the intern table too, so looking a name up is a hash probe.
 */
#include "alloy/sym.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The order of the kinds is part of the sort order, hence of printing. */
enum { K_SYM, K_FLOORDIV, K_MOD, K_MIN, K_MAX, K_MUL, K_ADD };

typedef struct term {
  int64_t k; /* coefficient in an ADD; 1 for a MUL factor */
  const alloy_expr *m;
} term;

struct alloy_expr {
  int kind;
  int n; /* ADD terms or MUL factors */
  uint64_t hash;
  int64_t lo, hi;   /* cached range; lo INT64_MIN is -inf, hi INT64_MAX +inf */
  int64_t c;        /* ADD: the constant term; SYM: the symbol's index */
  const char *name; /* SYM, NUL-terminated, in the arena */
  size_t len;
  bool unbacked;
  uint32_t size;  /* nodes in the expression written out as a tree */
  alloy_dim x, y; /* FLOORDIV, MOD, MIN, MAX operands */
  term t[];       /* ADD terms / MUL factors, in canonical order */
};

/* Interning shares subexpressions, but printing, evaluation and import walk
 * the tree, whose size can grow exponentially with nesting (min/max inside
 * products): a bound on it keeps every walk linear in what was built. */
#define MAX_TREE_SIZE 4096

#define MAX_DEPTH 64 /* parser nesting: fuzzed input must not exhaust the stack */
#define BLOCK_SIZE 65536
#define ALIGN_UP(n) (((n) + 15) & ~(size_t)15)

typedef struct block { struct block *next; size_t used, cap; } block;
#define BLOCK_HDR ALIGN_UP(sizeof(block))

typedef struct { bool has; char msg[256]; } sticky;

struct alloy_symtab {
  block *blocks;
  const alloy_expr **slots; /* open addressing, power-of-two size */
  size_t nslots, nused;
  const alloy_expr **syms; /* by index */
  int nsyms, symcap, next_unbacked;
  unsigned nerr; /* errors raised, counting those the sticky one hides */
  sticky err;
};

static alloy_dim dim_of(const alloy_expr *e) { return (alloy_dim){e, 0}; }

/* Python's //; the caller rules out b == 0 and INT64_MIN // -1. */
static int64_t pyfloordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return a % b != 0 && ((a < 0) != (b < 0)) ? q - 1 : q;
}

/* Python's %: the remainder takes the divisor's sign. b != 0. */
static int64_t pymod(int64_t a, int64_t b) {
  if (b == -1) return 0; /* INT64_MIN % -1 traps in C */
  int64_t r = a % b;
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}

static uint64_t magnitude(int64_t v) { return v < 0 ? 0 - (uint64_t)v : (uint64_t)v; }
static int cmp_i64(int64_t a, int64_t b) { return (a > b) - (a < b); }

static uint64_t gcd_u64(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* ---- arena and errors ----------------------------------------------------- */

static void *arena_alloc(alloy_symtab *st, size_t n) {
  block *b = st->blocks;
  n = ALIGN_UP(n);
  if (!b || b->cap - b->used < n) {
    size_t cap = n > BLOCK_SIZE ? n : BLOCK_SIZE;
    if (!(b = malloc(BLOCK_HDR + cap))) return NULL;
    *b = (block){st->blocks, 0, cap};
    st->blocks = b;
  }
  b->used += n;
  return (char *)b + BLOCK_HDR + b->used - n;
}

static void set_error(alloy_symtab *st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void set_error(alloy_symtab *st, const char *fmt, ...) {
  if (!st) return;
  st->nerr++;
  if (st->err.has) return; /* the first error explains the rest */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(st->err.msg, sizeof st->err.msg, fmt, ap);
  va_end(ap);
  st->err.has = true;
}

/* An unrepresentable result: a sticky error and the concrete 0. */
static alloy_dim fail(alloy_symtab *st, const char *what) {
  set_error(st, "%s", what);
  return alloy_dim_const(0);
}

/* ---- ranges ----------------------------------------------------------------- */

/* A bound is a finite v or an infinity. Operations are told which way they
 * bound (dir -1 lower, +1 upper) and round an int64 overflow outward, so the
 * cached ranges stay sound past int64. */
typedef struct { int inf; int64_t v; } xb; /* inf: -1, 0 (finite) or +1 */
typedef struct { xb lo, hi; } ival;

static xb xb_fin(int64_t v) { return (xb){0, v}; }
static xb xb_inf(int s) { return (xb){s, 0}; }
static xb xb_ovf(int sign, int dir) {
  return sign == dir ? xb_inf(sign) : xb_fin(sign > 0 ? INT64_MAX : INT64_MIN);
}
static int xb_sign(xb a) { return a.inf ? a.inf : (a.v > 0) - (a.v < 0); }
static int xb_cmp(xb a, xb b) {
  if (a.inf != b.inf) return a.inf < b.inf ? -1 : 1;
  return a.inf ? 0 : cmp_i64(a.v, b.v);
}
static int xb_cmpv(xb a, int64_t v) { return xb_cmp(a, xb_fin(v)); }
static xb xb_min(xb a, xb b) { return xb_cmp(a, b) <= 0 ? a : b; }
static xb xb_max(xb a, xb b) { return xb_cmp(a, b) >= 0 ? a : b; }

static xb xb_add(xb a, xb b, int dir) {
  if (a.inf && b.inf && a.inf != b.inf) return xb_inf(dir);
  if (a.inf || b.inf) return a.inf ? a : b;
  int64_t r;
  if (__builtin_add_overflow(a.v, b.v, &r)) return xb_ovf(a.v > 0 ? 1 : -1, dir);
  return xb_fin(r);
}

static xb xb_mul(xb a, xb b, int dir) {
  int s = xb_sign(a) * xb_sign(b);
  int64_t r;
  if (s == 0) return xb_fin(0); /* sizes are finite, so 0 * inf is 0 */
  if (a.inf || b.inf) return xb_inf(s);
  if (__builtin_mul_overflow(a.v, b.v, &r)) return xb_ovf(s, dir);
  return xb_fin(r);
}

static xb xb_neg(xb a, int dir) {
  if (a.inf) return xb_inf(-a.inf);
  return a.v == INT64_MIN ? xb_ovf(1, dir) : xb_fin(-a.v);
}

/* floor(a / b) for b >= 1 (finite or +inf). */
static xb xb_fdiv(xb a, xb b, int dir) {
  if (b.inf) return a.inf ? xb_inf(dir) : xb_fin(a.v >= 0 ? 0 : -1);
  return a.inf ? a : xb_fin(pyfloordiv(a.v, b.v));
}

static ival iv_full(void) { return (ival){xb_inf(-1), xb_inf(1)}; }
static ival iv_add(ival a, ival b) { return (ival){xb_add(a.lo, b.lo, -1), xb_add(a.hi, b.hi, 1)}; }
static ival iv_neg(ival a) { return (ival){xb_neg(a.hi, -1), xb_neg(a.lo, 1)}; }

static ival iv_dim(alloy_dim d) {
  if (!d.expr) return (ival){xb_fin(d.value), xb_fin(d.value)};
  return (ival){d.expr->lo == INT64_MIN ? xb_inf(-1) : xb_fin(d.expr->lo),
                d.expr->hi == INT64_MAX ? xb_inf(1) : xb_fin(d.expr->hi)};
}

static ival iv_mul(ival a, ival b) {
  xb p[4][2] = {{a.lo, b.lo}, {a.lo, b.hi}, {a.hi, b.lo}, {a.hi, b.hi}};
  ival r = {xb_mul(a.lo, b.lo, -1), xb_mul(a.lo, b.lo, 1)};
  for (int i = 1; i < 4; i++) {
    r.lo = xb_min(r.lo, xb_mul(p[i][0], p[i][1], -1));
    r.hi = xb_max(r.hi, xb_mul(p[i][0], p[i][1], 1));
  }
  return r;
}

static ival iv_floordiv(ival a, ival b) {
  if (xb_cmpv(b.lo, 1) >= 0) {
    /* floor(x/y) is monotone in x and in y for y >= 1: corners suffice */
    return (ival){xb_min(xb_fdiv(a.lo, b.lo, -1), xb_fdiv(a.lo, b.hi, -1)),
                  xb_max(xb_fdiv(a.hi, b.lo, 1), xb_fdiv(a.hi, b.hi, 1))};
  }
  if (xb_cmpv(b.hi, -1) <= 0) return iv_floordiv(iv_neg(a), iv_neg(b));
  return iv_full();
}

static ival iv_mod(ival a, ival b) {
  ival r = iv_full();
  if (xb_cmpv(b.lo, 1) >= 0) {
    r.lo = xb_fin(0);
    r.hi = b.hi.inf ? b.hi : xb_fin(b.hi.v - 1);
    if (xb_cmpv(a.lo, 0) >= 0) r.hi = xb_min(r.hi, a.hi);
  } else if (xb_cmpv(b.hi, -1) <= 0) {
    r.hi = xb_fin(0);
    r.lo = b.lo.inf ? b.lo : xb_fin(b.lo.v + 1);
    if (xb_cmpv(a.hi, 0) <= 0) r.lo = xb_max(r.lo, a.lo);
  }
  return r;
}

static ival iv_sum(int64_t c, const term *t, size_t n) {
  ival r = {xb_fin(c), xb_fin(c)};
  for (size_t i = 0; i < n; i++)
    r = iv_add(r, iv_mul((ival){xb_fin(t[i].k), xb_fin(t[i].k)}, iv_dim(dim_of(t[i].m))));
  return r;
}

static void set_range(alloy_expr *e) {
  ival r, a = iv_dim(e->x), b = iv_dim(e->y);
  switch (e->kind) {
  case K_ADD: r = iv_sum(e->c, e->t, (size_t)e->n); break;
  case K_MUL:
    r = iv_dim(dim_of(e->t[0].m));
    for (int i = 1; i < e->n; i++) r = iv_mul(r, iv_dim(dim_of(e->t[i].m)));
    break;
  case K_FLOORDIV: r = iv_floordiv(a, b); break;
  case K_MOD: r = iv_mod(a, b); break;
  case K_MIN: r = (ival){xb_min(a.lo, b.lo), xb_min(a.hi, b.hi)}; break;
  case K_MAX: r = (ival){xb_max(a.lo, b.lo), xb_max(a.hi, b.hi)}; break;
  default: return; /* a symbol's range is given, not computed */
  }
  e->lo = r.lo.inf < 0 ? INT64_MIN : r.lo.inf > 0 ? INT64_MAX : r.lo.v;
  e->hi = r.hi.inf > 0 ? INT64_MAX : r.hi.inf < 0 ? INT64_MIN : r.hi.v;
}

/* ---- structural order ------------------------------------------------------- */

static int cmp_expr(const alloy_expr *a, const alloy_expr *b);

/* Expressions sort before constants, so min(s0, 4) prints that way round. */
static int cmp_dim(alloy_dim a, alloy_dim b) {
  if (a.expr && b.expr) return cmp_expr(a.expr, b.expr);
  if (a.expr || b.expr) return a.expr ? -1 : 1;
  return cmp_i64(a.value, b.value);
}

static int degree(const alloy_expr *m) { return m->kind == K_MUL ? m->n : 1; }

/* Terms of a sum: higher degree first, then factor by factor, which prints
 * polynomials the way people write them. */
static int mono_cmp(const alloy_expr *a, const alloy_expr *b) {
  int da = degree(a), db = degree(b);
  if (a == b) return 0;
  if (da != db) return da > db ? -1 : 1;
  if (a->kind != K_MUL) return cmp_expr(a, b);
  for (int i = 0; i < da; i++) {
    int r = cmp_expr(a->t[i].m, b->t[i].m);
    if (r) return r;
  }
  return 0;
}

static int cmp_expr(const alloy_expr *a, const alloy_expr *b) {
  int r = 0;
  if (a == b) return 0;
  if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
  switch (a->kind) {
  case K_SYM: return cmp_i64(a->c, b->c);
  case K_MUL:
  case K_ADD:
    for (int i = 0; i < a->n && i < b->n && !r; i++) {
      r = a->kind == K_ADD ? mono_cmp(a->t[i].m, b->t[i].m) : cmp_expr(a->t[i].m, b->t[i].m);
      if (!r) r = cmp_i64(a->t[i].k, b->t[i].k);
    }
    if (r || a->n != b->n) return r ? r : a->n < b->n ? -1 : 1;
    return cmp_i64(a->c, b->c);
  default:
    r = cmp_dim(a->x, b->x);
    return r ? r : cmp_dim(a->y, b->y);
  }
}

static int term_qcmp(const void *a, const void *b) {
  return mono_cmp(((const term *)a)->m, ((const term *)b)->m);
}

/* ---- interning -------------------------------------------------------------- */

typedef struct {
  int kind;
  int64_t c;
  const char *name;
  size_t len;
  int64_t lo, hi; /* SYM */
  bool unbacked;
  alloy_dim x, y;
  const term *t;
  int n;
} key;

static uint64_t mix(uint64_t h, uint64_t v) {
  h = (h ^ v) * 0x9e3779b97f4a7c15u;
  return h ^ (h >> 31);
}

static uint64_t dim_hash(alloy_dim d) {
  return d.expr ? d.expr->hash : mix(0x5bd1e995u, (uint64_t)d.value);
}

static uint64_t key_hash(const key *k) {
  uint64_t h = mix(0xcbf29ce484222325u, (uint64_t)k->kind);
  if (k->kind == K_SYM) {
    for (size_t i = 0; i < k->len; i++) h = mix(h, (unsigned char)k->name[i]);
  } else if (k->kind == K_ADD || k->kind == K_MUL) {
    h = mix(h, (uint64_t)k->c);
    for (int i = 0; i < k->n; i++) h = mix(mix(h, (uint64_t)k->t[i].k), k->t[i].m->hash);
  } else {
    h = mix(mix(h, dim_hash(k->x)), dim_hash(k->y));
  }
  return h;
}

/* Children are interned already, so a shallow compare is a deep one. */
static bool key_matches(const alloy_expr *e, const key *k) {
  if (e->kind != k->kind) return false;
  switch (k->kind) {
  case K_SYM: return e->len == k->len && memcmp(e->name, k->name, k->len) == 0;
  case K_MUL:
  case K_ADD:
    if (e->n != k->n || e->c != k->c) return false;
    for (int i = 0; i < k->n; i++)
      if (e->t[i].k != k->t[i].k || e->t[i].m != k->t[i].m) return false;
    return true;
  default: return alloy_dim_same(e->x, k->x) && alloy_dim_same(e->y, k->y);
  }
}

static size_t slot_of(const alloy_symtab *st, const key *k, uint64_t h) {
  size_t mask = st->nslots - 1, i = (size_t)h & mask;
  while (st->slots[i] && !(st->slots[i]->hash == h && key_matches(st->slots[i], k)))
    i = (i + 1) & mask;
  return i;
}

static bool table_grow(alloy_symtab *st) {
  size_t n = st->nslots ? st->nslots * 2 : 256;
  const alloy_expr **s = calloc(n, sizeof *s);
  if (!s) return false;
  for (size_t i = 0; i < st->nslots; i++) {
    const alloy_expr *e = st->slots[i];
    if (!e) continue;
    size_t j = (size_t)e->hash & (n - 1);
    while (s[j]) j = (j + 1) & (n - 1);
    s[j] = e;
  }
  free(st->slots);
  st->slots = s;
  st->nslots = n;
  return true;
}

/* The one node for k, made on first use; NULL when out of memory. */
static uint64_t dim_tree_size(alloy_dim d) { return d.expr ? d.expr->size : 1; }

static uint64_t key_tree_size(const key *k) {
  uint64_t size = 1 + dim_tree_size(k->x) + dim_tree_size(k->y);
  if (k->kind == K_ADD || k->kind == K_MUL)
    for (int i = 0; i < k->n; i++) size += k->t[i].m ? k->t[i].m->size : 1;
  return size;
}

static const alloy_expr *intern(alloy_symtab *st, const key *k) {
  if (!st || ((st->nused + 1) * 2 > st->nslots && !table_grow(st))) return NULL;
  uint64_t h = key_hash(k);
  size_t i = slot_of(st, k, h);
  if (st->slots[i]) return st->slots[i];
  size_t nt = (k->kind == K_ADD || k->kind == K_MUL) ? (size_t)k->n : 0;
  alloy_expr *e = arena_alloc(st, sizeof *e + nt * sizeof(term));
  char *name = k->kind == K_SYM ? arena_alloc(st, k->len + 1) : NULL;
  if (!e || (k->kind == K_SYM && !name)) return NULL;
  *e = (alloy_expr){.kind = k->kind, .n = (int)nt, .hash = h, .c = k->c, .x = k->x, .y = k->y};
  if (nt) memcpy(e->t, k->t, nt * sizeof(term));
  if (name) {
    memcpy(name, k->name, k->len);
    name[k->len] = '\0';
    e->name = name;
    e->len = k->len;
    e->lo = k->lo;
    e->hi = k->hi;
    e->unbacked = k->unbacked;
  }
  uint64_t size = key_tree_size(k);
  e->size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
  set_range(e);
  st->slots[i] = e;
  st->nused++;
  return e;
}

static alloy_dim intern_dim(alloy_symtab *st, const key *k) {
  if (key_tree_size(k) > MAX_TREE_SIZE)
    return fail(st, "expression larger than 4096 nodes (MAX_TREE_SIZE)");
  const alloy_expr *e = intern(st, k);
  return e ? dim_of(e) : fail(st, "out of memory in the symbol table");
}

/* An atom whose range is one point is that constant: -1//s0 with s0 >= 1
 * is -1, and must be the same dim as -1. */
static alloy_dim atom(alloy_symtab *st, int kind, alloy_dim x, alloy_dim y) {
  alloy_expr probe = {.kind = kind, .x = x, .y = y};
  set_range(&probe);
  if (probe.lo == probe.hi && probe.lo != INT64_MIN && probe.hi != INT64_MAX)
    return alloy_dim_const(probe.lo);
  return intern_dim(st, &(key){.kind = kind, .x = x, .y = y});
}

/* ---- linear combinations ---------------------------------------------------- */

/* A sum under construction: unsorted, possibly with repeated monomials. */
typedef struct {
  int64_t c;
  term *t;
  size_t n, cap;
  bool ovf, oom;
} lin;

/* A dim read as constant + terms; `one` backs a lone monomial. */
typedef struct {
  int64_t c;
  const term *t;
  int n;
  term one;
} view;

static void view_of(alloy_dim d, view *v) {
  *v = (view){.c = d.expr ? 0 : d.value};
  if (d.expr && d.expr->kind == K_ADD) {
    v->c = d.expr->c;
    v->t = d.expr->t;
    v->n = d.expr->n;
  } else if (d.expr) {
    v->one = (term){1, d.expr};
    v->t = &v->one;
    v->n = 1;
  }
}

static void lin_push(lin *l, int64_t k, const alloy_expr *m) {
  if (k == 0) return;
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 16;
    term *t = realloc(l->t, cap * sizeof *t);
    if (!t) {
      l->oom = true;
      return;
    }
    l->t = t;
    l->cap = cap;
  }
  l->t[l->n++] = (term){k, m};
}

static void lin_push_mul(lin *l, int64_t k1, int64_t k2, const alloy_expr *m) {
  int64_t k;
  if (__builtin_mul_overflow(k1, k2, &k)) l->ovf = true;
  else lin_push(l, k, m);
}

static void lin_addc(lin *l, int64_t v) {
  if (__builtin_add_overflow(l->c, v, &l->c)) l->ovf = true;
}

static void lin_add_dim(lin *l, alloy_dim d, int64_t scale) {
  view v;
  int64_t p;
  view_of(d, &v);
  if (__builtin_mul_overflow(v.c, scale, &p)) l->ovf = true;
  else lin_addc(l, p);
  for (int i = 0; i < v.n; i++) lin_push_mul(l, v.t[i].k, scale, v.t[i].m);
}

/* Sorts and merges l into a canonical dim, and frees it. */
static alloy_dim lin_finish(alloy_symtab *st, lin *l, const char *op) {
  alloy_dim r = alloy_dim_const(0);
  size_t n = 0, kept = 0;
  if (l->n > 1) qsort(l->t, l->n, sizeof *l->t, term_qcmp);
  for (size_t i = 0; i < l->n; i++) {
    if (n > 0 && l->t[n - 1].m == l->t[i].m) {
      if (__builtin_add_overflow(l->t[n - 1].k, l->t[i].k, &l->t[n - 1].k)) l->ovf = true;
    } else {
      l->t[n++] = l->t[i];
    }
  }
  for (size_t i = 0; i < n; i++)
    if (l->t[i].k != 0) l->t[kept++] = l->t[i];
  if (l->oom) set_error(st, "out of memory in %s", op);
  else if (l->ovf) set_error(st, "int64 overflow in %s", op);
  else if (kept > ALLOY_SYM_MAX_TERMS)
    set_error(st, "%s: the result would have more than %d terms", op, ALLOY_SYM_MAX_TERMS);
  else if (kept == 0) r = alloy_dim_const(l->c);
  else if (kept == 1 && l->c == 0 && l->t[0].k == 1) r = dim_of(l->t[0].m);
  else r = intern_dim(st, &(key){.kind = K_ADD, .c = l->c, .t = l->t, .n = (int)kept});
  free(l->t);
  *l = (lin){0};
  return r;
}

static void factors_of(const alloy_expr *m, const term **f, int *n, term *one) {
  *one = (term){1, m};
  *f = m->kind == K_MUL ? m->t : one;
  *n = m->kind == K_MUL ? m->n : 1;
}

static const alloy_expr *make_mul(alloy_symtab *st, const term *f, int n) {
  if (n == 1) return f[0].m;
  const alloy_expr *e = intern(st, &(key){.kind = K_MUL, .t = f, .n = n});
  if (!e) set_error(st, "out of memory in the symbol table");
  return e;
}

/* The product of two monomials: a merge of their sorted factor lists. */
static const alloy_expr *mono_mul(alloy_symtab *st, const alloy_expr *a, const alloy_expr *b) {
  term oa, ob, buf[ALLOY_SYM_MAX_TERMS];
  const term *fa, *fb;
  int na, nb, n = 0, i = 0, j = 0;
  factors_of(a, &fa, &na, &oa);
  factors_of(b, &fb, &nb, &ob);
  if (na + nb > ALLOY_SYM_MAX_TERMS) {
    set_error(st, "mul: a product would have more than %d factors", ALLOY_SYM_MAX_TERMS);
    return NULL;
  }
  while (i < na || j < nb)
    buf[n++] = j == nb || (i < na && cmp_expr(fa[i].m, fb[j].m) <= 0) ? fa[i++] : fb[j++];
  return make_mul(st, buf, n);
}

/* ---- arithmetic ------------------------------------------------------------- */

/* a + scale*b for scale 1 or -1. */
static alloy_dim linear(alloy_symtab *st, alloy_dim a, alloy_dim b, int64_t scale,
                        const char *op) {
  if (!a.expr && !b.expr) {
    int64_t r;
    if (scale > 0 ? __builtin_add_overflow(a.value, b.value, &r)
                  : __builtin_sub_overflow(a.value, b.value, &r)) {
      set_error(st, "int64 overflow in %s", op);
      return alloy_dim_const(0);
    }
    return alloy_dim_const(r);
  }
  lin l = {0};
  lin_add_dim(&l, a, 1);
  lin_add_dim(&l, b, scale);
  return lin_finish(st, &l, op);
}

alloy_dim alloy_dim_add(alloy_symtab *st, alloy_dim a, alloy_dim b) {
  return linear(st, a, b, 1, "add");
}
alloy_dim alloy_dim_sub(alloy_symtab *st, alloy_dim a, alloy_dim b) {
  return linear(st, a, b, -1, "sub");
}
static alloy_dim dim_neg(alloy_symtab *st, alloy_dim a) {
  return linear(st, alloy_dim_const(0), a, -1, "neg");
}

alloy_dim alloy_dim_mul(alloy_symtab *st, alloy_dim a, alloy_dim b) {
  view va, vb;
  lin l = {0};
  if (!a.expr && !b.expr) {
    int64_t r;
    if (__builtin_mul_overflow(a.value, b.value, &r)) return fail(st, "int64 overflow in mul");
    return alloy_dim_const(r);
  }
  view_of(a, &va);
  view_of(b, &vb);
  if (__builtin_mul_overflow(va.c, vb.c, &l.c)) l.ovf = true;
  for (int i = 0; i < va.n; i++) lin_push_mul(&l, va.t[i].k, vb.c, va.t[i].m);
  for (int j = 0; j < vb.n; j++) lin_push_mul(&l, vb.t[j].k, va.c, vb.t[j].m);
  for (int i = 0; i < va.n; i++) {
    for (int j = 0; j < vb.n; j++) {
      const alloy_expr *m = mono_mul(st, va.t[i].m, vb.t[j].m);
      if (!m) {
        free(l.t);
        return alloy_dim_const(0);
      }
      lin_push_mul(&l, va.t[i].k, vb.t[j].k, m);
    }
  }
  return lin_finish(st, &l, "mul");
}

/* Whether every term of a is a multiple of b, a single monomial times a
 * coefficient; if so and q is not NULL, *q = a / b exactly. */
static bool exact_div(alloy_symtab *st, alloy_dim a, alloy_dim b, alloy_dim *q) {
  view va, vb;
  term ob, oa, rest[ALLOY_SYM_MAX_TERMS];
  const term *fb, *fa;
  int nb, na;
  view_of(a, &va);
  view_of(b, &vb);
  if (!b.expr || vb.c != 0 || vb.n != 1 || va.c != 0) return false;
  int64_t kb = vb.t[0].k;
  factors_of(vb.t[0].m, &fb, &nb, &ob);
  /* The first pass decides and the second builds, so a failed try interns
   * nothing. */
  for (int pass = 0; pass < (q ? 2 : 1); pass++) {
    lin l = {0};
    for (int i = 0; i < va.n; i++) {
      int64_t k = va.t[i].k;
      int nr = 0, j = 0;
      if ((kb == -1 && k == INT64_MIN) || k % kb != 0) return false;
      factors_of(va.t[i].m, &fa, &na, &oa);
      for (int f = 0; f < na; f++) { /* multiset difference of sorted lists */
        if (j < nb && fa[f].m == fb[j].m) j++;
        else rest[nr++] = fa[f];
      }
      if (j < nb) return false;
      if (pass == 0) continue;
      const alloy_expr *m = nr ? make_mul(st, rest, nr) : NULL;
      if (nr && !m) {
        free(l.t);
        *q = alloy_dim_const(0);
        return true;
      }
      if (m) lin_push(&l, k / kb, m);
      else lin_addc(&l, k / kb);
    }
    if (pass == 1) *q = lin_finish(st, &l, "floordiv");
  }
  return true;
}

/* Both simplify x // b and x % b to 0 and x when 0 <= x < b provably. */
static bool below_divisor(alloy_dim a, alloy_dim b) {
  ival ia = iv_dim(a), ib = iv_dim(b);
  return xb_cmpv(ib.lo, 1) >= 0 && xb_cmpv(ia.lo, 0) >= 0 && xb_cmp(ia.hi, ib.lo) < 0;
}

/* a // d for symbolic a and a constant d >= 2: a = d*q + r, q taking every
 * term d divides; then r // d folds to a constant when r's range fits in one
 * multiple of d, and otherwise becomes an opaque atom in reduced form. */
static alloy_dim floordiv_const(alloy_symtab *st, alloy_dim a, int64_t d) {
  view v;
  lin q = {0}, r = {0};
  if (!st) return alloy_dim_const(0); /* symbolic dims need their table */
  view_of(a, &v);
  for (int i = 0; i < v.n; i++) {
    if (v.t[i].k % d == 0) lin_push(&q, v.t[i].k / d, v.t[i].m);
    else lin_push(&r, v.t[i].k, v.t[i].m);
  }
  q.c = pyfloordiv(v.c, d);
  r.c = pymod(v.c, d);
  if (r.n == 0) return lin_finish(st, &q, "floordiv");
  /* floor((g*y + c) / (g*e)) == floor((y + c//g) / e): dividing out the
   * common factor makes (2*s0 + 1)//4 and s0//2 one dim. */
  uint64_t g = (uint64_t)d;
  for (size_t i = 0; i < r.n; i++) g = gcd_u64(g, magnitude(r.t[i].k));
  d /= (int64_t)g;
  for (size_t i = 0; i < r.n; i++) r.t[i].k /= (int64_t)g;
  r.c /= (int64_t)g;

  ival ir = iv_sum(r.c, r.t, r.n);
  const alloy_expr *m = r.n == 1 && r.t[0].k == 1 ? r.t[0].m : NULL;
  int64_t d1 = m && m->kind == K_FLOORDIV && !m->y.expr ? m->y.value : 0, c1, dd;
  if (!ir.lo.inf && !ir.hi.inf && pyfloordiv(ir.lo.v, d) == pyfloordiv(ir.hi.v, d)) {
    lin_addc(&q, pyfloordiv(ir.lo.v, d));
    free(r.t);
  } else if (d1 > 0 && !__builtin_mul_overflow(r.c, d1, &c1) &&
             !__builtin_mul_overflow(d1, d, &dd)) {
    /* (x//d1 + c)//d == (x + c*d1)//(d1*d) */
    unsigned nerr = st->nerr;
    free(r.t);
    alloy_dim x = alloy_dim_add(st, m->x, alloy_dim_const(c1));
    lin_add_dim(&q, alloy_dim_floordiv(st, x, alloy_dim_const(dd)), 1);
    if (st->nerr != nerr) goto failed;
  } else {
    alloy_dim rd = lin_finish(st, &r, "floordiv");
    if (!rd.expr) goto failed;
    lin_add_dim(&q, atom(st, K_FLOORDIV, rd, alloy_dim_const(d)), 1);
  }
  return lin_finish(st, &q, "floordiv");
failed:
  free(q.t);
  return alloy_dim_const(0);
}

alloy_dim alloy_dim_floordiv(alloy_symtab *st, alloy_dim a, alloy_dim b) {
  alloy_dim q;
  if (!b.expr) {
    int64_t d = b.value;
    if (d == 0) return fail(st, "division by zero in floordiv");
    if (!a.expr && a.value == INT64_MIN && d == -1) return fail(st, "int64 overflow in floordiv");
    if (!a.expr) return alloy_dim_const(pyfloordiv(a.value, d));
    if (d == 1) return a;
    if (d > 1) return floordiv_const(st, a, d);
    /* a // -d == (-a) // d */
    if (d != INT64_MIN) return alloy_dim_floordiv(st, dim_neg(st, a), alloy_dim_const(-d));
  } else {
    if (alloy_dim_same(a, b)) return alloy_dim_const(1);
    if (exact_div(st, a, b, &q)) return q;
    if (below_divisor(a, b)) return alloy_dim_const(0);
  }
  return atom(st, K_FLOORDIV, a, b);
}

alloy_dim alloy_dim_ceildiv(alloy_symtab *st, alloy_dim a, alloy_dim b) {
  return dim_neg(st, alloy_dim_floordiv(st, dim_neg(st, a), b));
}

/* a % d for symbolic a and d >= 2: coefficients and the constant reduce
 * mod d, and what is left is the answer when its range lies in [0, d). */
static alloy_dim mod_const(alloy_symtab *st, alloy_dim a, int64_t d) {
  view v;
  lin r = {0};
  view_of(a, &v);
  r.c = pymod(v.c, d);
  for (int i = 0; i < v.n; i++) lin_push(&r, pymod(v.t[i].k, d), v.t[i].m);
  ival ir = iv_sum(r.c, r.t, r.n);
  if (r.n == 0 || (xb_cmpv(ir.lo, 0) >= 0 && xb_cmpv(ir.hi, d) < 0))
    return lin_finish(st, &r, "mod");
  const alloy_expr *m = r.n == 1 && r.t[0].k == 1 && r.c == 0 ? r.t[0].m : NULL;
  if (m && m->kind == K_MOD && !m->y.expr && m->y.value > 0 && m->y.value % d == 0) {
    free(r.t); /* (x % (k*d)) % d == x % d */
    return alloy_dim_mod(st, m->x, alloy_dim_const(d));
  }
  alloy_dim rd = lin_finish(st, &r, "mod");
  return rd.expr ? atom(st, K_MOD, rd, alloy_dim_const(d)) : rd;
}

alloy_dim alloy_dim_mod(alloy_symtab *st, alloy_dim a, alloy_dim b) {
  if (!b.expr) {
    int64_t d = b.value;
    if (d == 0) return fail(st, "division by zero in mod");
    if (!a.expr) return alloy_dim_const(pymod(a.value, d));
    if (d == 1 || d == -1) return alloy_dim_const(0);
    if (d > 1) return mod_const(st, a, d);
    /* a % -d == -((-a) % d) */
    if (d != INT64_MIN)
      return dim_neg(st, alloy_dim_mod(st, dim_neg(st, a), alloy_dim_const(-d)));
  } else {
    if (alloy_dim_same(a, b) || exact_div(st, a, b, NULL)) return alloy_dim_const(0);
    if (below_divisor(a, b)) return a;
  }
  return atom(st, K_MOD, a, b);
}

static alloy_dim min_max(alloy_symtab *st, alloy_dim a, alloy_dim b, bool is_max) {
  if (!a.expr && !b.expr) return (a.value < b.value) != is_max ? a : b;
  bool ab = alloy_dim_le(st, a, b) == ALLOY_TRUE, ba = alloy_dim_le(st, b, a) == ALLOY_TRUE;
  if (ab && ba) return cmp_dim(a, b) >= 0 ? a : b; /* provably equal: prefer a constant */
  if (ab || ba) return ab != is_max ? a : b;
  bool swap = cmp_dim(a, b) > 0; /* min(a, b) and min(b, a) are one dim */
  return atom(st, is_max ? K_MAX : K_MIN, swap ? b : a, swap ? a : b);
}

alloy_dim alloy_dim_min(alloy_symtab *st, alloy_dim a, alloy_dim b) {
  return min_max(st, a, b, false);
}
alloy_dim alloy_dim_max(alloy_symtab *st, alloy_dim a, alloy_dim b) {
  return min_max(st, a, b, true);
}

const char *alloy_symtab_error(const alloy_symtab *st) {
  return st && st->err.has ? st->err.msg : NULL;
}

void alloy_symtab_clear_error(alloy_symtab *st) {
  if (st) st->err = (sticky){0};
}

/* ---- comparisons ------------------------------------------------------------ */

bool alloy_dim_same(alloy_dim a, alloy_dim b) {
  return a.expr == b.expr && (a.expr || a.value == b.value);
}

void alloy_dim_range(alloy_dim d, int64_t *lo, int64_t *hi) {
  if (lo) *lo = d.expr ? d.expr->lo : d.value;
  if (hi) *hi = d.expr ? d.expr->hi : d.value;
}

enum { REL_EQ, REL_LT, REL_LE };

/* Decides a REL b from the range of the canonical difference a - b, which
 * cancels what a and b share (s0 + 1 against s0 leaves the constant 1). A
 * question never leaves a sticky error behind, so the table's is parked. */
static alloy_truth decide(alloy_symtab *st, alloy_dim a, alloy_dim b, int rel) {
  if (!a.expr && !b.expr) {
    bool r = rel == REL_EQ ? a.value == b.value : rel == REL_LT ? a.value < b.value
                                                                : a.value <= b.value;
    return r ? ALLOY_TRUE : ALLOY_FALSE;
  }
  if (alloy_dim_same(a, b)) return rel == REL_LT ? ALLOY_FALSE : ALLOY_TRUE;
  if (!st) return ALLOY_UNKNOWN;
  sticky saved = st->err;
  st->err.has = false;
  ival r = iv_dim(alloy_dim_sub(st, a, b));
  bool failed = st->err.has;
  st->err = saved;
  if (failed) return ALLOY_UNKNOWN;
  int lo = xb_cmpv(r.lo, 0), hi = xb_cmpv(r.hi, 0); /* signs of the bounds */
  switch (rel) {
  case REL_EQ:
    if (lo > 0 || hi < 0) return ALLOY_FALSE;
    return lo == 0 && hi == 0 ? ALLOY_TRUE : ALLOY_UNKNOWN;
  case REL_LT: return hi < 0 ? ALLOY_TRUE : lo >= 0 ? ALLOY_FALSE : ALLOY_UNKNOWN;
  default: return hi <= 0 ? ALLOY_TRUE : lo > 0 ? ALLOY_FALSE : ALLOY_UNKNOWN;
  }
}

alloy_truth alloy_dim_eq(alloy_symtab *st, alloy_dim a, alloy_dim b) {
  return decide(st, a, b, REL_EQ);
}
alloy_truth alloy_dim_lt(alloy_symtab *st, alloy_dim a, alloy_dim b) {
  return decide(st, a, b, REL_LT);
}
alloy_truth alloy_dim_le(alloy_symtab *st, alloy_dim a, alloy_dim b) {
  return decide(st, a, b, REL_LE);
}

/* ---- the table and its symbols ---------------------------------------------- */

alloy_symtab *alloy_symtab_new(void) {
  alloy_symtab *st = calloc(1, sizeof *st);
  if (st && !table_grow(st)) {
    free(st);
    return NULL;
  }
  return st;
}

void alloy_symtab_free(alloy_symtab *st) {
  if (!st) return;
  for (block *b = st->blocks, *next; b; b = next) {
    next = b->next;
    free(b);
  }
  free(st->slots);
  free(st->syms);
  free(st);
}

static bool is_ident_start(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_ident_char(int c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

static const char *bound_text(int64_t v, bool upper, char buf[24]) {
  if (v == (upper ? ALLOY_SYM_INF : INT64_MIN)) return upper ? "inf" : "-inf";
  snprintf(buf, 24, "%" PRId64, v);
  return buf;
}

/* Finds or makes a symbol. Names must be identifiers so printed dims parse. */
static alloy_error *sym_get(alloy_symtab *st, const char *name, size_t len, int64_t lo,
                            int64_t hi, bool unbacked, alloy_dim *out) {
  char b1[24], b2[24], b3[24], b4[24];
  int shown = len > 64 ? 64 : (int)len;
  bool ok = len > 0 && is_ident_start((unsigned char)name[0]);
  for (size_t i = 1; ok && i < len; i++) ok = is_ident_char((unsigned char)name[i]);
  if (!ok)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "symbol name '%.*s' is not an identifier",
                           shown, name);
  if (lo > hi)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "symbol %.*s: empty range [%s, %s]", shown,
                           name, bound_text(lo, false, b1), bound_text(hi, true, b2));
  if (alloy_sym_find(st, name, len, out)) {
    const alloy_expr *e = out->expr;
    if (e->lo == lo && e->hi == hi) return NULL;
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT,
                           "symbol %s already has range [%s, %s], not [%s, %s]", e->name,
                           bound_text(e->lo, false, b1), bound_text(e->hi, true, b2),
                           bound_text(lo, false, b3), bound_text(hi, true, b4));
  }
  if (st->nsyms == st->symcap) {
    int cap = st->symcap ? 2 * st->symcap : 16;
    const alloy_expr **s = realloc(st->syms, (size_t)cap * sizeof *s);
    if (!s) return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
    st->syms = s;
    st->symcap = cap;
  }
  const alloy_expr *e = intern(st, &(key){.kind = K_SYM, .c = st->nsyms, .name = name, .len = len,
                                          .lo = lo, .hi = hi, .unbacked = unbacked});
  if (!e) return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  st->syms[st->nsyms++] = e;
  *out = dim_of(e);
  return NULL;
}

alloy_error *alloy_sym_new(alloy_symtab *st, const char *name, int64_t lo, int64_t hi,
                           alloy_dim *out) {
  if (!st || !name || !out)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "alloy_sym_new: NULL argument");
  return sym_get(st, name, strlen(name), lo, hi, false, out);
}

alloy_error *alloy_sym_new_unbacked(alloy_symtab *st, const char *name, int64_t lo,
                                    int64_t hi, alloy_dim *out) {
  if (!st || !name || !out)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "alloy_sym_new_unbacked: NULL argument");
  alloy_error *e = sym_get(st, name, strlen(name), lo, hi, true, out);
  if (!e && !out->expr->unbacked)
    e = alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "symbol %s is already declared as backed",
                        name);
  return e;
}

alloy_dim alloy_sym_unbacked(alloy_symtab *st, int64_t lo, int64_t hi) {
  char name[24];
  alloy_dim d = alloy_dim_const(0);
  if (!st) return d;
  do {
    snprintf(name, sizeof name, "u%d", st->next_unbacked++);
  } while (alloy_sym_find(st, name, strlen(name), NULL));
  alloy_error *e = sym_get(st, name, strlen(name), lo, hi, true, &d);
  if (e) set_error(st, "%s", alloy_error_message(e));
  alloy_error_free(e);
  return e ? alloy_dim_const(0) : d;
}

bool alloy_sym_find(const alloy_symtab *st, const char *name, size_t len, alloy_dim *out) {
  if (!st || !name || !len) return false;
  key k = {.kind = K_SYM, .name = name, .len = len};
  const alloy_expr *e = st->slots[slot_of(st, &k, key_hash(&k))];
  if (e && out) *out = dim_of(e);
  return e != NULL;
}

static const alloy_expr *sym_at(const alloy_symtab *st, int index) {
  return st && index >= 0 && index < st->nsyms ? st->syms[index] : NULL;
}

int alloy_symtab_count(const alloy_symtab *st) { return st ? st->nsyms : 0; }

const char *alloy_symtab_name(const alloy_symtab *st, int index) {
  return sym_at(st, index) ? sym_at(st, index)->name : NULL;
}
void alloy_symtab_range(const alloy_symtab *st, int index, int64_t *lo, int64_t *hi) {
  alloy_dim_range(alloy_symtab_symbol(st, index), lo, hi);
}
bool alloy_symtab_is_unbacked(const alloy_symtab *st, int index) {
  return sym_at(st, index) && sym_at(st, index)->unbacked;
}
alloy_dim alloy_symtab_symbol(const alloy_symtab *st, int index) {
  return sym_at(st, index) ? dim_of(sym_at(st, index)) : alloy_dim_const(0);
}

/* ---- printing --------------------------------------------------------------- */

/* Where a sub-expression is printed decides its parentheses. // and % bind
 * like *, so a floor division or modulo is parenthesized inside a product,
 * after a coefficient or a leading minus, and as a right operand; a product
 * only as a right operand; a sum everywhere but at the top. A negative
 * constant is parenthesized where a product's operand goes. */
enum { CTX_TOP, CTX_LEFT, CTX_FACTOR, CTX_RIGHT };

typedef struct { char *buf; size_t cap, len; } writer;

static void w_put(writer *w, const char *s, size_t n) {
  if (w->len < w->cap) memcpy(w->buf + w->len, s, n < w->cap - w->len ? n : w->cap - w->len);
  w->len += n;
}
static void w_str(writer *w, const char *s) { w_put(w, s, strlen(s)); }
static void w_u64(writer *w, uint64_t v) {
  char tmp[24];
  w_put(w, tmp, (size_t)snprintf(tmp, sizeof tmp, "%" PRIu64, v));
}

static void print_dim(writer *w, alloy_dim d, int ctx);

static void print_term(writer *w, int64_t k, const alloy_expr *m, bool first) {
  if (k == INT64_MIN && !first) {
    /* 2^63 has no positive literal; the parser folds a negative one */
    w_str(w, " + (-9223372036854775808)*");
    print_dim(w, dim_of(m), CTX_FACTOR);
    return;
  }
  w_str(w, first ? (k < 0 ? "-" : "") : (k < 0 ? " - " : " + "));
  if (magnitude(k) != 1) {
    w_u64(w, magnitude(k));
    w_str(w, "*");
  }
  print_dim(w, dim_of(m), magnitude(k) != 1 || (first && k < 0) ? CTX_FACTOR : CTX_TOP);
}

static void print_dim(writer *w, alloy_dim d, int ctx) {
  const alloy_expr *e = d.expr;
  bool paren = !e ? d.value < 0 && ctx >= CTX_FACTOR
               : e->kind == K_ADD ? ctx != CTX_TOP
               : e->kind == K_MUL ? ctx == CTX_RIGHT
               : e->kind == K_FLOORDIV || e->kind == K_MOD ? ctx >= CTX_FACTOR
                                                           : false;
  if (paren) w_str(w, "(");
  if (!e) {
    w_str(w, d.value < 0 ? "-" : "");
    w_u64(w, magnitude(d.value));
  } else if (e->kind == K_SYM) {
    w_put(w, e->name, e->len);
  } else if (e->kind == K_MIN || e->kind == K_MAX) {
    w_str(w, e->kind == K_MIN ? "min(" : "max(");
    print_dim(w, e->x, CTX_TOP);
    w_str(w, ", ");
    print_dim(w, e->y, CTX_TOP);
    w_str(w, ")");
  } else if (e->kind == K_FLOORDIV || e->kind == K_MOD) {
    print_dim(w, e->x, CTX_LEFT);
    w_str(w, e->kind == K_FLOORDIV ? "//" : " % ");
    print_dim(w, e->y, CTX_RIGHT);
  } else if (e->kind == K_MUL) {
    for (int i = 0; i < e->n; i++) {
      w_str(w, i ? "*" : "");
      print_dim(w, dim_of(e->t[i].m), CTX_FACTOR);
    }
  } else {
    for (int i = 0; i < e->n; i++) print_term(w, e->t[i].k, e->t[i].m, i == 0);
    if (e->c == INT64_MIN) {
      w_str(w, " + (-9223372036854775808)");
    } else if (e->c) {
      w_str(w, e->c < 0 ? " - " : " + ");
      w_u64(w, magnitude(e->c));
    }
  }
  if (paren) w_str(w, ")");
}

size_t alloy_dim_print(alloy_dim d, char *buf, size_t cap) {
  writer w = {buf, buf ? cap : 0, 0};
  print_dim(&w, d, CTX_TOP);
  if (w.cap) w.buf[w.len < w.cap ? w.len : w.cap - 1] = '\0';
  return w.len;
}

/* Text of d for an error message, cut short with "..." when long. */
static const char *dim_text(alloy_dim d, char *buf, size_t cap) {
  if (alloy_dim_print(d, buf, cap) >= cap) memcpy(buf + cap - 4, "...", 4);
  return buf;
}

/* ---- broadcasting, evaluation, import --------------------------------------- */

static bool provably(alloy_dim d, int64_t v) {
  ival r = iv_dim(d);
  return xb_cmpv(r.lo, v) == 0 && xb_cmpv(r.hi, v) == 0;
}

alloy_error *alloy_dim_broadcast(alloy_symtab *st, alloy_dim a, alloy_dim b, alloy_dim *out) {
  char ta[128], tb[128];
  if (!out) return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "alloy_dim_broadcast: NULL out");
  if (provably(a, 1) || alloy_dim_same(a, b) || provably(b, 1)) {
    *out = provably(a, 1) ? b : a;
    return NULL;
  }
  dim_text(a, ta, sizeof ta);
  dim_text(b, tb, sizeof tb);
  if (!a.expr != !b.expr) {
    /* PyTorch would guard on s0 == 1 and specialize; a shape function
     * cannot, so it says what it cannot decide. */
    ival r = iv_dim(a.expr ? a : b);
    if (xb_cmpv(r.lo, 1) <= 0 && xb_cmpv(r.hi, 1) >= 0)
      return alloy_error_new(ALLOY_ERR_TYPE,
                             "cannot broadcast size %s against size %s (%s may be 1 or %s; "
                             "cannot prove which)", ta, tb, a.expr ? ta : tb, a.expr ? tb : ta);
  }
  switch (alloy_dim_eq(st, a, b)) {
  case ALLOY_TRUE:
    *out = a.expr ? b : a; /* prefer the concrete spelling */
    return NULL;
  case ALLOY_FALSE:
    return alloy_error_new(ALLOY_ERR_TYPE,
                           "cannot broadcast size %s against size %s (they differ and "
                           "neither is 1)", ta, tb);
  default:
    return alloy_error_new(ALLOY_ERR_TYPE,
                           "cannot broadcast size %s against size %s (not provably equal, "
                           "and neither is 1)", ta, tb);
  }
}

typedef struct { const int64_t *values; const bool *bound; int n; } binding;

static alloy_error *eval_fail(const alloy_expr *e, const char *what) {
  char buf[160];
  return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "%s evaluating %s", what,
                         dim_text(dim_of(e), buf, sizeof buf));
}

static alloy_error *eval_dim(alloy_dim d, const binding *bd, int64_t *out) {
  const alloy_expr *e = d.expr;
  alloy_error *err;
  int64_t x, y, acc;
  if (!e) {
    *out = d.value;
    return NULL;
  }
  switch (e->kind) {
  case K_SYM:
    if (e->c >= bd->n || (bd->bound && !bd->bound[e->c]))
      return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "symbol %s is unbound", e->name);
    *out = bd->values[e->c];
    return NULL;
  case K_ADD:
  case K_MUL:
    acc = e->kind == K_ADD ? e->c : 1;
    for (int i = 0; i < e->n; i++) {
      if ((err = eval_dim(dim_of(e->t[i].m), bd, &x))) return err;
      if (e->kind == K_ADD ? __builtin_mul_overflow(e->t[i].k, x, &x) ||
                                 __builtin_add_overflow(acc, x, &acc)
                           : __builtin_mul_overflow(acc, x, &acc))
        return eval_fail(e, "int64 overflow");
    }
    *out = acc;
    return NULL;
  default:
    if ((err = eval_dim(e->x, bd, &x)) || (err = eval_dim(e->y, bd, &y))) return err;
    if ((e->kind == K_FLOORDIV || e->kind == K_MOD) && y == 0)
      return eval_fail(e, "division by zero");
    if (e->kind == K_FLOORDIV && x == INT64_MIN && y == -1) return eval_fail(e, "int64 overflow");
    *out = e->kind == K_FLOORDIV ? pyfloordiv(x, y)
           : e->kind == K_MOD    ? pymod(x, y)
           : e->kind == K_MIN    ? (x < y ? x : y)
                                 : (x > y ? x : y);
    return NULL;
  }
}

alloy_error *alloy_dim_eval(const alloy_symtab *st, alloy_dim d, const int64_t *values,
                            const bool *bound, int nvalues, int64_t *out) {
  (void)st; /* a symbol node carries its index */
  if (!out || (nvalues > 0 && !values))
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "alloy_dim_eval: NULL argument");
  binding bd = {values, bound, nvalues > 0 ? nvalues : 0};
  return eval_dim(d, &bd, out);
}

/* Rebuilds through the public operations, so the copy is canonical in st
 * (its terms ordered by st's symbol numbering). */
static alloy_dim import_rec(alloy_symtab *st, alloy_dim d, alloy_error **err) {
  const alloy_expr *e = d.expr;
  alloy_dim acc, x, y;
  if (!e || *err) return e ? alloy_dim_const(0) : d;
  switch (e->kind) {
  case K_SYM:
    *err = sym_get(st, e->name, e->len, e->lo, e->hi, e->unbacked, &acc);
    return *err ? alloy_dim_const(0) : acc;
  case K_ADD:
  case K_MUL:
    acc = alloy_dim_const(e->kind == K_ADD ? e->c : 1);
    for (int i = 0; i < e->n; i++) {
      x = import_rec(st, dim_of(e->t[i].m), err);
      acc = e->kind == K_MUL ? alloy_dim_mul(st, acc, x)
                             : alloy_dim_add(st, acc, alloy_dim_mul(st, alloy_dim_const(e->t[i].k), x));
    }
    return acc;
  default:
    x = import_rec(st, e->x, err);
    y = import_rec(st, e->y, err);
    return e->kind == K_FLOORDIV ? alloy_dim_floordiv(st, x, y)
           : e->kind == K_MOD    ? alloy_dim_mod(st, x, y)
           : e->kind == K_MIN    ? alloy_dim_min(st, x, y)
                                 : alloy_dim_max(st, x, y);
  }
}

alloy_error *alloy_dim_import(alloy_symtab *st, const alloy_symtab *from, alloy_dim d,
                              alloy_dim *out) {
  if (!st || !out)
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "alloy_dim_import: NULL argument");
  if (st == from || !d.expr) {
    *out = d;
    return NULL;
  }
  sticky saved = st->err;
  alloy_error *err = NULL;
  st->err.has = false;
  alloy_dim r = import_rec(st, d, &err);
  if (!err && st->err.has)
    err = alloy_error_new(ALLOY_ERR_INTERNAL, "importing a dim: %s", st->err.msg);
  st->err = saved;
  if (!err) *out = r;
  return err;
}

/* ---- parsing ---------------------------------------------------------------- */

typedef struct {
  alloy_symtab *st;
  const char *s;
  size_t len, pos;
  int depth;
  alloy_error *err;
} parser;

static bool p_fail(parser *p, size_t col, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool p_fail(parser *p, size_t col, const char *fmt, ...) {
  char msg[256];
  va_list ap;
  if (p->err) return false;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  p->err = alloy_error_new(ALLOY_ERR_PARSE, "%s at column %zu", msg, col);
  return false;
}

static int p_peek(const parser *p) { return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1; }
static bool p_digit(const parser *p) { return p_peek(p) >= '0' && p_peek(p) <= '9'; }

static void p_ws(parser *p) {
  int c;
  while ((c = p_peek(p)) == ' ' || c == '\t' || c == '\n' || c == '\r') p->pos++;
}

/* An arithmetic error (1//0, an overflow, too many terms) becomes a parse
 * error at the operator; the table's sticky error was parked by the caller. */
static bool p_arith_ok(parser *p, size_t col) {
  if (!p->st->err.has) return true;
  p_fail(p, col, "%s", p->st->err.msg);
  alloy_symtab_clear_error(p->st);
  return false;
}

static bool p_enter(parser *p, size_t col) {
  return ++p->depth <= MAX_DEPTH || p_fail(p, col, "expression nested too deeply");
}

/* Digits at pos. A negative literal may reach 2^63, so INT64_MIN reads back. */
static bool p_literal(parser *p, bool negative, alloy_dim *out) {
  size_t col = p->pos;
  uint64_t lim = (uint64_t)INT64_MAX + negative, v = 0;
  for (; p_digit(p); p->pos++) {
    unsigned dig = (unsigned)(p->s[p->pos] - '0');
    if (v > (lim - dig) / 10) return p_fail(p, col, "integer literal too large");
    v = v * 10 + dig;
  }
  *out = alloy_dim_const(!negative ? (int64_t)v : v > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)v);
  return true;
}

static bool p_expr(parser *p, alloy_dim *out);

/* After "min" or "max"; pos is at the '('. */
static bool p_call(parser *p, bool is_max, size_t col, alloy_dim *out) {
  alloy_dim a, b;
  p->pos++;
  if (!p_enter(p, col) || !p_expr(p, &a)) return false;
  if (p_peek(p) != ',') return p_fail(p, p->pos, "expected ','");
  p->pos++;
  if (!p_expr(p, &b)) return false;
  if (p_peek(p) != ')') return p_fail(p, p->pos, "expected ')'");
  p->pos++;
  p->depth--;
  *out = is_max ? alloy_dim_max(p->st, a, b) : alloy_dim_min(p->st, a, b);
  return p_arith_ok(p, col);
}

static bool p_primary(parser *p, alloy_dim *out) {
  p_ws(p);
  size_t col = p->pos;
  int c = p_peek(p);
  if (p_digit(p)) return p_literal(p, false, out);
  if (c == '(') {
    p->pos++;
    if (!p_enter(p, col) || !p_expr(p, out)) return false;
    if (p_peek(p) != ')') return p_fail(p, p->pos, "expected ')'");
    p->pos++;
    p->depth--;
    return true;
  }
  if (c >= 0 && is_ident_start(c)) {
    const char *name = p->s + col;
    while (p->pos < p->len && is_ident_char((unsigned char)p->s[p->pos])) p->pos++;
    size_t n = p->pos - col, after = p->pos;
    if (n == 3 && (memcmp(name, "min", 3) == 0 || memcmp(name, "max", 3) == 0)) {
      p_ws(p);
      if (p_peek(p) == '(') return p_call(p, name[1] == 'a', col, out);
      p->pos = after; /* a symbol that happens to be called min */
    }
    if (alloy_sym_find(p->st, name, n, out)) return true;
    return p_fail(p, col, "unknown symbol '%.*s'", n > 64 ? 64 : (int)n, name);
  }
  return p_fail(p, col, "%s",
                c < 0 ? "expected an expression, found the end of the text"
                      : "expected an integer, a symbol, '(', min or max");
}

static bool p_unary(parser *p, alloy_dim *out) {
  alloy_dim x;
  bool ok;
  p_ws(p);
  if (p_peek(p) != '-') return p_primary(p, out);
  size_t col = p->pos++;
  if (!p_enter(p, col)) return false;
  p_ws(p);
  if (p_digit(p)) { /* -2 binds tighter than any operator, as in Python */
    ok = p_literal(p, true, out);
  } else {
    ok = p_unary(p, &x);
    if (ok) *out = dim_neg(p->st, x);
    ok = ok && p_arith_ok(p, col);
  }
  p->depth--;
  return ok;
}

static bool p_term(parser *p, alloy_dim *out) {
  alloy_dim x, y;
  if (!p_unary(p, &x)) return false;
  for (;;) {
    p_ws(p);
    size_t col = p->pos;
    int c = p_peek(p);
    bool two = p->pos + 1 < p->len && p->s[p->pos + 1] == '/';
    if (c != '*' && c != '%' && !(c == '/' && two)) break;
    p->pos += c == '/' ? 2 : 1;
    if (!p_unary(p, &y)) return false;
    x = c == '*'   ? alloy_dim_mul(p->st, x, y)
        : c == '/' ? alloy_dim_floordiv(p->st, x, y)
                   : alloy_dim_mod(p->st, x, y);
    if (!p_arith_ok(p, col)) return false;
  }
  *out = x;
  return true;
}

/* Leaves pos after the whitespace that follows the expression: that
 * whitespace could have continued it. */
static bool p_expr(parser *p, alloy_dim *out) {
  alloy_dim x, y;
  if (!p_term(p, &x)) return false;
  for (;;) {
    p_ws(p);
    size_t col = p->pos;
    int c = p_peek(p);
    if (c != '+' && c != '-') break;
    p->pos++;
    if (!p_term(p, &y)) return false;
    x = c == '+' ? alloy_dim_add(p->st, x, y) : alloy_dim_sub(p->st, x, y);
    if (!p_arith_ok(p, col)) return false;
  }
  *out = x;
  return true;
}

/* With used NULL the whole text must be one expression. */
alloy_error *alloy_dim_parse(alloy_symtab *st, const char *text, size_t len, alloy_dim *out,
                             size_t *used) {
  if (!st || !out || (!text && len))
    return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "alloy_dim_parse: NULL argument");
  parser p = {st, text ? text : "", len, 0, 0, NULL};
  sticky saved = st->err;
  alloy_dim d;
  st->err.has = false;
  bool ok = p_expr(&p, &d);
  if (ok && !used && p.pos < len) ok = p_fail(&p, p.pos, "unexpected character");
  st->err = saved;
  if (!ok) return p.err;
  *out = d;
  if (used) *used = p.pos;
  return NULL;
}
