/*
 * ir/schema.c: the one parser of PyTorch's operator schema grammar, e.g.
 *
 *   aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[],
 *                    ...) -> Tensor
 *   aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1)
 *                    -> Tensor(a!)
 *
 * It reads every schema in the op table, in the golden corpus and in a
 * vendor's query. Defaults are parsed into alloy_arg values typed by the
 * argument (an `int[2] stride=1` default becomes the list [1, 1]) and their
 * text is kept, so printing gives back PyTorch's exact spelling.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

typedef struct {
  const char *text, *p;
  alloy_arena *arena;
  alloy_error *err;
} schema_parser;

static void skip_ws(schema_parser *ps) {
  while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n') ps->p++;
}

static bool fail(schema_parser *ps, const char *what) {
  if (!ps->err)
    ps->err = alloy_error_new(ALLOY_ERR_PARSE,
                              "schema column %d: expected %s in \"%s\"",
                              (int)(ps->p - ps->text) + 1, what, ps->text);
  return false;
}

static bool accept(schema_parser *ps, const char *tok) {
  skip_ws(ps);
  size_t n = strlen(tok);
  if (strncmp(ps->p, tok, n) != 0) return false;
  ps->p += n;
  return true;
}

static bool expect(schema_parser *ps, const char *tok) {
  if (accept(ps, tok)) return true;
  char what[32];
  snprintf(what, sizeof what, "'%s'", tok);
  return fail(ps, what);
}

static bool is_ident_char(char c) {
  return isalnum((unsigned char)c) || c == '_';
}

/* Reads an identifier; returns its length (0 when none). */
static size_t ident(schema_parser *ps, const char **start) {
  skip_ws(ps);
  *start = ps->p;
  if (!isalpha((unsigned char)*ps->p) && *ps->p != '_') return 0;
  while (is_ident_char(*ps->p)) ps->p++;
  return (size_t)(ps->p - *start);
}

static const struct {
  const char *name;
  alloy_type_kind kind;
} base_types[] = {
    {"Tensor", ALLOY_TYPE_TENSOR},
    {"int", ALLOY_TYPE_INT},
    {"SymInt", ALLOY_TYPE_SYMINT},
    {"float", ALLOY_TYPE_FLOAT},
    {"bool", ALLOY_TYPE_BOOL},
    {"Scalar", ALLOY_TYPE_SCALAR},
    {"ScalarType", ALLOY_TYPE_SCALAR_TYPE},
    {"str", ALLOY_TYPE_STR},
    {"Layout", ALLOY_TYPE_LAYOUT},
    {"Device", ALLOY_TYPE_DEVICE},
    {"MemoryFormat", ALLOY_TYPE_MEMORY_FORMAT},
    {"Generator", ALLOY_TYPE_GENERATOR},
    {"Dimname", ALLOY_TYPE_DIMNAME},
    {"Storage", ALLOY_TYPE_STORAGE},
    {"Any", ALLOY_TYPE_ANY},
    {"SymFloat", ALLOY_TYPE_SYMFLOAT},
    {"SymBool", ALLOY_TYPE_SYMBOOL},
    {"complex", ALLOY_TYPE_COMPLEX},
};
enum { NUM_BASE_TYPES = sizeof base_types / sizeof base_types[0] };

/* TorchScript's own types, which a few hundred ATen overloads (the
 * interpreter's list, dict and scalar helpers) take: Alloy knows them by
 * spelling (ALLOY_TYPE_OTHER, with the text kept) and never computes on
 * them. `containers` take type arguments in parentheses. */
static const char *const script_types[] = {
    "t", "t1", "t2", "tVal", "tKey", "AnyEnumType", "AnyClassType", "AnyType", "Stream",
    "Capsule", "Type", "NoneType", "PyObject", "QScheme", "Quantizer", "ConstQuantizerPtr",
};
static const char *const containers[] = {"Dict", "Future", "RRef", "Tuple", "Union",
                                         "Optional", "List", "Await"};

static bool names_one_of(const char *s, size_t n, const char *const *names, size_t count) {
  for (size_t i = 0; i < count; i++)
    if (strlen(names[i]) == n && !strncmp(names[i], s, n)) return true;
  return false;
}

/* Skips "(...)" with nesting; false when it does not close. */
static bool skip_parens(schema_parser *ps) {
  int depth = 0;
  do {
    if (!*ps->p) return fail(ps, "')'");
    depth += *ps->p == '(';
    depth -= *ps->p == ')';
    ps->p++;
  } while (depth);
  return true;
}

/* Reads a TorchScript type name (ALLOY_TYPE_OTHER); s..s+n is the
 * identifier already read. */
static bool parse_script_type(schema_parser *ps, const char *s, size_t n) {
  bool container = names_one_of(s, n, containers, sizeof containers / sizeof *containers);
  if (n >= 9 && !strncmp(s, "__torch__", 9)) {
    while (*ps->p == '.' && is_ident_char(ps->p[1]))
      for (ps->p++; is_ident_char(*ps->p);) ps->p++;
  } else if (!container &&
             !names_one_of(s, n, script_types, sizeof script_types / sizeof *script_types)) {
    ps->p = s;
    return fail(ps, "a type name");
  }
  if (container) {
    if (*ps->p != '(') return fail(ps, "the container's '('");
    if (!skip_parens(ps)) return false;
  }
  return true;
}

static bool parse_type_suffixes(schema_parser *ps, alloy_schema_arg *a);

/* type := base ('(' alias ')' | '?' | '[' N? ']')* */
static bool parse_type(schema_parser *ps, alloy_schema_arg *a) {
  const char *s;
  size_t n = ident(ps, &s);
  int k = 0;
  if (!n && *ps->p == '(') { /* a tuple type: (Tensor, tVal)[] */
    if (!skip_parens(ps)) return false;
    k = NUM_BASE_TYPES;
    n = 1;
  }
  while (k < NUM_BASE_TYPES &&
         !(strlen(base_types[k].name) == n && !strncmp(base_types[k].name, s, n)))
    k++;
  if (k < NUM_BASE_TYPES) {
    a->type.kind = base_types[k].kind;
  } else {
    if (!n) return fail(ps, "a type name");
    if (*s != '(' && !parse_script_type(ps, s, n)) return false;
    a->type.kind = ALLOY_TYPE_OTHER;
  }
  bool ok = parse_type_suffixes(ps, a);
  if (ok && !(a->type_text = alloy_arena_strndup(ps->arena, s, (size_t)(ps->p - s))))
    return fail(ps, "memory");
  return ok;
}

/* The annotations after a base type: alias sets, '?', '[N]'. */
static bool parse_type_suffixes(schema_parser *ps, alloy_schema_arg *a) {
  for (;;) {
    if (*ps->p == '(') {
      ps->p++;
      skip_ws(ps);
      if (isalpha((unsigned char)*ps->p)) {
        /* Tensor(b|a): a fresh tensor or an alias of a; the set kept is
         * the last alternative, the one the arguments name. */
        do {
          a->alias_set = *ps->p;
          while (isalpha((unsigned char)*ps->p)) ps->p++;
        } while (*ps->p == '|' && isalpha((unsigned char)*++ps->p));
      } else if (*ps->p == '*') {
        a->alias_set = '*';
        ps->p++;
      } else {
        return fail(ps, "an alias set");
      }
      if (accept(ps, "!")) a->alias_write = true;
      if (accept(ps, "->")) {
        if (!expect(ps, "*")) return false;
        a->alias_wildcard = true;
      }
      if (!expect(ps, ")")) return false;
    } else if (*ps->p == '?') {
      ps->p++;
      a->type.optional = true;
    } else if (*ps->p == '[') {
      ps->p++;
      /* T?[]: the '?' seen so far belongs to the elements. */
      if (a->type.optional) {
        a->type.optional = false;
        a->type.elem_optional = true;
      }
      a->type.list = true;
      skip_ws(ps);
      if (isdigit((unsigned char)*ps->p)) a->type.list_len = (int32_t)strtol(ps->p, (char **)&ps->p, 10);
      if (!expect(ps, "]")) return false;
    } else {
      return true;
    }
  }
}

/* Named constants a default may spell. */
static const struct {
  const char *name;
  alloy_arg_kind kind;
  int value;
} default_names[] = {
    {"Mean", ALLOY_ARG_INT, 1}, /* at::Reduction::Mean */
    {"Sum", ALLOY_ARG_INT, 2},
    {"contiguous_format", ALLOY_ARG_MEMORY_FORMAT, ALLOY_MEMORY_CONTIGUOUS},
    {"preserve_format", ALLOY_ARG_MEMORY_FORMAT, ALLOY_MEMORY_PRESERVE},
    {"channels_last", ALLOY_ARG_MEMORY_FORMAT, ALLOY_MEMORY_CHANNELS_LAST},
    {"strided", ALLOY_ARG_LAYOUT, ALLOY_LAYOUT_STRIDED},
};

static bool parse_number(schema_parser *ps, alloy_arg *out) {
  skip_ws(ps);
  const char *s = ps->p;
  bool neg = false;
  if (*ps->p == '-') {
    neg = true;
    ps->p++;
  }
  if (!strncmp(ps->p, "inf", 3) && !is_ident_char(ps->p[3])) {
    ps->p += 3;
    *out = alloy_arg_float(neg ? -INFINITY : INFINITY);
    return true;
  }
  if (!strncmp(ps->p, "nan", 3) && !is_ident_char(ps->p[3])) {
    ps->p += 3;
    *out = alloy_arg_float(NAN);
    return true;
  }
  if (!isdigit((unsigned char)*ps->p)) return fail(ps, "a default value");
  char *end;
  long long v = strtoll(s, &end, 10);
  if (*end == '.' || *end == 'e' || *end == 'E') {
    *out = alloy_arg_float(strtod(s, &end));
  } else {
    *out = alloy_arg_int(v);
  }
  ps->p = end;
  return true;
}

static bool parse_default(schema_parser *ps, alloy_arg *out);

static bool parse_default_list(schema_parser *ps, alloy_arg *out) {
  alloy_arg items[64];
  int n = 0;
  skip_ws(ps);
  if (!accept(ps, "]")) {
    do {
      if (n == 64) return fail(ps, "at most 64 list items");
      if (!parse_default(ps, &items[n++])) return false;
    } while (accept(ps, ","));
    if (!expect(ps, "]")) return false;
  }
  alloy_arg tmp = alloy_arg_list(items, n);
  if ((ps->err = alloy_arg_copy(ps->arena, &tmp, out))) return false;
  return true;
}

static bool parse_default(schema_parser *ps, alloy_arg *out) {
  skip_ws(ps);
  char c = *ps->p;
  if (c == '[') {
    ps->p++;
    return parse_default_list(ps, out);
  }
  if (c == '"' || c == '\'') {
    /* A Python string literal; backslash escapes the next character. */
    const char *s = ++ps->p;
    size_t len = 0;
    for (; *ps->p && *ps->p != c; ps->p++, len++)
      if (*ps->p == '\\' && !*++ps->p) break;
    if (!*ps->p) return fail(ps, "the closing quote");
    char *v = alloy_arena_alloc(ps->arena, len + 1);
    if (!v) return fail(ps, "memory");
    for (size_t i = 0; s < ps->p; s++) v[i++] = *s == '\\' ? *++s : *s;
    v[len] = '\0';
    *out = alloy_arg_str(v);
    ps->p++;
    return true;
  }
  if (c == '-' || isdigit((unsigned char)c) ||
      (!strncmp(ps->p, "inf", 3) && !is_ident_char(ps->p[3])) ||
      (!strncmp(ps->p, "nan", 3) && !is_ident_char(ps->p[3])))
    return parse_number(ps, out);
  const char *s;
  size_t n = ident(ps, &s);
  if (n == 4 && !strncmp(s, "None", 4)) return *out = alloy_arg_none(), true;
  if (n == 4 && !strncmp(s, "True", 4)) return *out = alloy_arg_bool(true), true;
  if (n == 5 && !strncmp(s, "False", 5)) return *out = alloy_arg_bool(false), true;
  for (size_t i = 0; i < sizeof default_names / sizeof default_names[0]; i++)
    if (strlen(default_names[i].name) == n && !strncmp(default_names[i].name, s, n)) {
      out->kind = default_names[i].kind;
      if (out->kind == ALLOY_ARG_INT) out->u.i = alloy_dim_const(default_names[i].value);
      else if (out->kind == ALLOY_ARG_LAYOUT) out->u.layout = (alloy_layout)default_names[i].value;
      else out->u.memory_format = (alloy_memory_format)default_names[i].value;
      return true;
    }
  alloy_dtype t;
  if (n && alloy_dtype_from_name(s, n, &t)) return *out = alloy_arg_dtype(t), true;
  return fail(ps, "a default value");
}

/* Gives a default the representation its type calls for: ints become floats
 * for float arguments, a single int for int[N] is repeated N times. */
static bool coerce_default(schema_parser *ps, alloy_schema_arg *a) {
  alloy_arg *d = &a->default_value;
  if (d->kind == ALLOY_ARG_NONE) return true;
  if (a->type.list && d->kind != ALLOY_ARG_LIST) {
    int n = a->type.list_len > 0 ? a->type.list_len : 1;
    alloy_arg *items = alloy_arena_alloc(ps->arena, sizeof *items * (size_t)n);
    if (!items) return fail(ps, "memory");
    for (int i = 0; i < n; i++) items[i] = *d;
    *d = alloy_arg_list(items, n);
  }
  if (a->type.kind == ALLOY_TYPE_SCALAR_TYPE && d->kind == ALLOY_ARG_INT) {
    /* `ScalarType? dtype=4`: c10::ScalarType numbering. */
    static const int8_t from_c10[16] = {
        ALLOY_U8,  ALLOY_I8,  ALLOY_I16, ALLOY_I32,  ALLOY_I64, ALLOY_F16, ALLOY_F32, ALLOY_F64,
        -1,        ALLOY_C64, ALLOY_C128, ALLOY_BOOL, -1,       -1,        -1,        ALLOY_BF16};
    int64_t v = d->u.i.value;
    if (v < 0 || v >= 16 || from_c10[v] < 0) return fail(ps, "a known ScalarType number");
    *d = alloy_arg_dtype((alloy_dtype)from_c10[v]);
  }
  if (a->type.kind == ALLOY_TYPE_FLOAT) {
    if (d->kind == ALLOY_ARG_INT) *d = alloy_arg_float((double)d->u.i.value);
    if (d->kind == ALLOY_ARG_LIST)
      for (int i = 0; i < d->u.list.n; i++) {
        alloy_arg *it = (alloy_arg *)&d->u.list.items[i];
        if (it->kind == ALLOY_ARG_INT) *it = alloy_arg_float((double)it->u.i.value);
      }
  }
  return true;
}

static bool parse_arg(schema_parser *ps, alloy_schema_arg *a, bool is_return) {
  if (!parse_type(ps, a)) return false;
  const char *s;
  size_t n = ident(ps, &s);
  if (!n && !is_return) return fail(ps, "an argument name");
  a->name = alloy_arena_strndup(ps->arena, s, n);
  if (!a->name) return fail(ps, "memory");
  if (!is_return && accept(ps, "=")) {
    skip_ws(ps);
    const char *start = ps->p;
    if (!parse_default(ps, &a->default_value)) return false;
    a->has_default = true;
    a->default_text = alloy_arena_strndup(ps->arena, start, (size_t)(ps->p - start));
    if (!a->default_text) return fail(ps, "memory");
    if (!coerce_default(ps, a)) return false;
  }
  return true;
}

/* Parses a comma-separated list up to `close`, into a growable array. */
static bool parse_arg_list(schema_parser *ps, const char *close, bool is_return,
                           alloy_schema_arg **out, int *count, bool *vararg) {
  alloy_schema_arg buf[128];
  int n = 0;
  bool kwarg_only = false;
  if (!accept(ps, close)) {
    do {
      /* "...": TorchScript's varargs, always last. */
      if (!is_return && accept(ps, "...")) {
        *vararg = true;
        break;
      }
      if (!is_return && accept(ps, "*")) {
        kwarg_only = true;
        continue;
      }
      if (n == 128) return fail(ps, "at most 128 arguments");
      memset(&buf[n], 0, sizeof buf[n]);
      buf[n].kwarg_only = kwarg_only;
      if (!parse_arg(ps, &buf[n], is_return)) return false;
      n++;
    } while (accept(ps, ","));
    if (!expect(ps, close)) return false;
  }
  *count = n;
  *out = alloy_arena_alloc(ps->arena, sizeof **out * (size_t)(n ? n : 1));
  if (!*out) return fail(ps, "memory");
  memcpy(*out, buf, sizeof **out * (size_t)n);
  return true;
}

static bool parse_schema(schema_parser *ps, alloy_schema *s) {
  const char *ns, *name;
  size_t nns = ident(ps, &ns);
  if (!nns || !expect(ps, "::")) return fail(ps, "a namespace and '::'");
  size_t nname = ident(ps, &name);
  if (!nname) return fail(ps, "an operator name");
  s->name = alloy_arena_strndup(ps->arena, ns, (size_t)(name + nname - ns));
  s->overload = "";
  if (*ps->p == '.') {
    ps->p++;
    const char *ov;
    size_t nov = ident(ps, &ov);
    if (!nov) return fail(ps, "an overload name");
    s->overload = alloy_arena_strndup(ps->arena, ov, nov);
  }
  if (!s->name || !s->overload) return fail(ps, "memory");
  if (!expect(ps, "(")) return false;
  if (!parse_arg_list(ps, ")", false, &s->args, &s->nargs, &s->vararg)) return false;
  if (!expect(ps, "->")) return false;
  if ((s->returns_paren = accept(ps, "("))) {
    bool unused = false;
    if (!parse_arg_list(ps, ")", true, &s->returns, &s->nreturns, &unused)) return false;
  } else {
    s->nreturns = 1;
    s->returns = alloy_arena_alloc(ps->arena, sizeof *s->returns);
    if (!s->returns) return fail(ps, "memory");
    if (!parse_arg(ps, &s->returns[0], true)) return false;
  }
  skip_ws(ps);
  if (*ps->p) return fail(ps, "the end of the schema");
  return true;
}

alloy_error *alloy_schema_parse_into(alloy_arena *arena, const char *text,
                                     alloy_schema *out);
alloy_error *alloy_schema_parse_into(alloy_arena *arena, const char *text,
                                     alloy_schema *out) {
  schema_parser ps = {text, text, arena, NULL};
  memset(out, 0, sizeof *out);
  if (!parse_schema(&ps, out) && !ps.err)
    ps.err = alloy_error_new(ALLOY_ERR_PARSE, "bad schema \"%s\"", text);
  return ps.err;
}

alloy_error *alloy_schema_parse(const char *text, alloy_schema **out) {
  *out = NULL;
  alloy_arena arena = {0};
  alloy_schema tmp;
  alloy_error *e = alloy_schema_parse_into(&arena, text, &tmp);
  alloy_schema *s = e ? NULL : alloy_arena_alloc(&arena, sizeof *s);
  if (e || !s) {
    alloy_arena_free(&arena);
    return e ? e : alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  }
  *s = tmp;
  s->arena = arena; /* the schema now owns the arena it lives in */
  *out = s;
  return NULL;
}

void alloy_schema_free(alloy_schema *s) {
  if (!s) return;
  alloy_arena arena = s->arena;
  alloy_arena_free(&arena);
}

const char *alloy_schema_name(const alloy_schema *s) { return s->name; }
const char *alloy_schema_overload(const alloy_schema *s) { return s->overload; }
int alloy_schema_num_args(const alloy_schema *s) { return s->nargs; }
const alloy_schema_arg *alloy_schema_arg_at(const alloy_schema *s, int i) {
  return i >= 0 && i < s->nargs ? &s->args[i] : NULL;
}
int alloy_schema_num_returns(const alloy_schema *s) { return s->nreturns; }
const alloy_schema_arg *alloy_schema_return_at(const alloy_schema *s, int i) {
  return i >= 0 && i < s->nreturns ? &s->returns[i] : NULL;
}
int alloy_schema_find_arg(const alloy_schema *s, const char *name) {
  for (int i = 0; i < s->nargs; i++)
    if (!strcmp(s->args[i].name, name)) return i;
  return -1;
}

/* snprintf-like appending that keeps counting past the end of buf. */
typedef struct {
  char *buf;
  size_t cap, len;
} text_out;

static void out_str(text_out *o, const char *s) {
  size_t n = strlen(s);
  if (o->len < o->cap) {
    size_t room = o->cap - o->len - 1;
    memcpy(o->buf + o->len, s, n < room ? n : room);
    o->buf[o->len + (n < room ? n : room)] = '\0';
  }
  o->len += n;
}

static void out_type(text_out *o, const alloy_schema_arg *a) {
  if (a->type_text) { /* as written: "int[](a)", "Tensor(b|a)", "Dict(str, t)" */
    out_str(o, a->type_text);
    return;
  }
  for (int k = 0; k < NUM_BASE_TYPES; k++)
    if (base_types[k].kind == a->type.kind) {
      out_str(o, base_types[k].name);
      break;
    }
  if (a->alias_set) {
    char alias[16] = {'(', a->alias_set, 0};
    if (a->alias_write) strcat(alias, "!");
    if (a->alias_wildcard) strcat(alias, " -> *");
    strcat(alias, ")");
    out_str(o, alias);
  }
  if (a->type.elem_optional) out_str(o, "?");
  if (a->type.list) {
    char dims[24];
    if (a->type.list_len) snprintf(dims, sizeof dims, "[%d]", (int)a->type.list_len);
    else strcpy(dims, "[]");
    out_str(o, dims);
  }
  if (a->type.optional) out_str(o, "?");
}

size_t alloy_type_print(alloy_type t, char *buf, size_t cap) {
  alloy_schema_arg a = {.type = t};
  text_out o = {buf, cap, 0};
  if (cap) buf[0] = '\0';
  out_type(&o, &a);
  return o.len;
}

static void out_arg(text_out *o, const alloy_schema_arg *a) {
  out_type(o, a);
  if (a->name[0]) {
    out_str(o, " ");
    out_str(o, a->name);
  }
  if (a->has_default) {
    out_str(o, "=");
    out_str(o, a->default_text);
  }
}

size_t alloy_schema_print(const alloy_schema *s, char *buf, size_t cap) {
  text_out o = {buf, cap, 0};
  if (cap) buf[0] = '\0';
  out_str(&o, s->name);
  if (s->overload[0]) {
    out_str(&o, ".");
    out_str(&o, s->overload);
  }
  out_str(&o, "(");
  bool kw = false;
  for (int i = 0; i < s->nargs; i++) {
    if (i) out_str(&o, ", ");
    if (s->args[i].kwarg_only && !kw) {
      out_str(&o, "*, ");
      kw = true;
    }
    out_arg(&o, &s->args[i]);
  }
  if (s->vararg) out_str(&o, s->nargs ? ", ..." : "...");
  out_str(&o, ") -> ");
  bool paren = s->nreturns != 1 || s->returns_paren;
  if (paren) out_str(&o, "(");
  for (int i = 0; i < s->nreturns; i++) {
    if (i) out_str(&o, ", ");
    out_arg(&o, &s->returns[i]);
  }
  if (paren) out_str(&o, ")");
  return o.len;
}
