/*
 * ir/air.c: the .air text format (docs/air.md): alloy_air_print writes a
 * graph as readable text, one node per line, and alloy_air_parse reads such
 * text back into a graph.
 *
 * The parser builds through the same public builder C code uses
 * (alloy_graph_add_input, alloy_graph_add_node, ...), so a parsed graph is
 * normalized, type-checked and shape-inferred exactly like a hand-built one;
 * the `: TYPE` annotations the printer writes are then only checked, never
 * trusted. The printer is canonical (arguments equal to their schema default
 * are left out, floats take their shortest exact spelling), which is what
 * makes print(parse(print(g))) == print(g) hold byte for byte.
 *
 * The parser is fed untrusted text and is fuzzed (tests/fuzz/fuzz_air.c):
 * every read is bounded by the current line, list nesting, name and line
 * lengths are capped, and each error is reported once with its position and
 * unwinds without leaking.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/graph_internal.h"

/* Limits on what the parser accepts (the printer refuses to write what the
 * parser would refuse to read). */
#define AIR_MAX_NAME 256      /* value, symbol and op names */
#define AIR_MAX_DEPTH 32      /* nesting of argument lists */
#define AIR_MAX_LINE (1 << 20) /* bytes per line */

static const char *const memory_format_names[] = {
    [ALLOY_MEMORY_CONTIGUOUS] = "contiguous_format",
    [ALLOY_MEMORY_PRESERVE] = "preserve_format",
    [ALLOY_MEMORY_CHANNELS_LAST] = "channels_last",
    [ALLOY_MEMORY_CHANNELS_LAST_3D] = "channels_last_3d",
};
static const char *const device_names[] = {
    [ALLOY_DEVICE_CPU] = "cpu",
    [ALLOY_DEVICE_CUDA] = "cuda",
    [ALLOY_DEVICE_HIP] = "hip",
    [ALLOY_DEVICE_META] = "meta",
};
#define N_MEMORY_FORMATS (int)(sizeof memory_format_names / sizeof memory_format_names[0])
#define N_DEVICES (int)(sizeof device_names / sizeof device_names[0])

/* Words that mean a literal wherever an argument may stand: a backed symbol
 * with one of these names could not be told apart from the literal. */
/* The signature's roles as .air writes them, by alloy_input_role and
 * alloy_output_role (index 0, the user role, is written as nothing). */
static const char *const input_role_names[] = {"", "parameter", "buffer", "constant"};
static const char *const output_role_names[] = {"", "buffer", "input"};

static const char *const reserved_words[] = {
    "true", "false", "None", "inf", "nan", "min", "max", "strided",
    "contiguous_format", "preserve_format", "channels_last",
    "channels_last_3d", "cpu", "cuda", "hip", "meta",
};

static bool is_alpha(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_digit(int c) { return c >= '0' && c <= '9'; }
static bool is_name_char(int c) { return is_alpha(c) || is_digit(c) || c == '.'; }

static bool word_eq(const char *s, size_t n, const char *word) {
  return strlen(word) == n && memcmp(s, word, n) == 0;
}

/* Unbacked symbols are recreated by the nodes that make them, so they are
 * never declared. The builder names them u<N>; the name is checked as well
 * as the flag because a table may hold u<N> symbols made by alloy_sym_new. */
static bool is_unbacked_name(const char *s, size_t n) {
  if (n < 2 || s[0] != 'u') return false;
  for (size_t i = 1; i < n; i++)
    if (!is_digit((unsigned char)s[i])) return false;
  return true;
}

static bool dtype_from_short(const char *s, size_t n, alloy_dtype *out) {
  for (int t = 0; t < ALLOY_DTYPE_COUNT; t++)
    if (word_eq(s, n, alloy_dtype_short_name((alloy_dtype)t))) {
      *out = (alloy_dtype)t;
      return true;
    }
  return false;
}

static bool is_reserved_word(const char *s, size_t n) {
  alloy_dtype t;
  for (size_t i = 0; i < sizeof reserved_words / sizeof reserved_words[0]; i++)
    if (word_eq(s, n, reserved_words[i])) return true;
  return dtype_from_short(s, n, &t);
}

static bool valid_value_name(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > AIR_MAX_NAME) return false;
  for (size_t i = 0; i < n; i++)
    if (!is_name_char((unsigned char)s[i])) return false;
  return true;
}

static alloy_error *oom(void) {
  return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
}

/* --- a growing string ------------------------------------------------- */

typedef struct {
  char *s;
  size_t len, cap;
  bool oom;
} sbuf;

static bool sb_reserve(sbuf *b, size_t extra) {
  if (b->oom) return false;
  if (b->len + extra + 1 <= b->cap) return true;
  size_t ncap = b->cap ? b->cap : 256;
  while (ncap < b->len + extra + 1) ncap *= 2;
  char *p = realloc(b->s, ncap);
  if (!p) {
    b->oom = true;
    return false;
  }
  b->s = p;
  b->cap = ncap;
  return true;
}

static void sb_put(sbuf *b, const char *s, size_t n) {
  if (!sb_reserve(b, n)) return;
  memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = '\0';
}

static void sb_str(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

static void sb_printf(sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || !sb_reserve(b, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

static void sb_dim(sbuf *b, alloy_dim d) {
  size_t n = alloy_dim_print(d, NULL, 0);
  if (!sb_reserve(b, n)) return;
  alloy_dim_print(d, b->s + b->len, n + 1);
  b->len += n;
}

/* --- printing --------------------------------------------------------- */

/* The type of a value as the format writes it: f32[s0, 3], SymInt(s1),
 * float, bool. Strides and device are the input line's business. */
static void sb_type(sbuf *b, alloy_value_kind kind, alloy_dtype dtype,
                    const alloy_dim *shape, int rank, alloy_dim int_value) {
  switch (kind) {
    case ALLOY_VALUE_TENSOR:
      sb_str(b, alloy_dtype_short_name(dtype));
      sb_str(b, "[");
      for (int d = 0; d < rank; d++) {
        if (d) sb_str(b, ", ");
        sb_dim(b, shape[d]);
      }
      sb_str(b, "]");
      break;
    case ALLOY_VALUE_INT:
      sb_str(b, "SymInt(");
      sb_dim(b, int_value);
      sb_str(b, ")");
      break;
    case ALLOY_VALUE_FLOAT: sb_str(b, "float"); break;
    default: sb_str(b, "bool"); break;
  }
}

static void sb_device(sbuf *b, alloy_device d) {
  sb_str(b, device_names[d.type]);
  if (d.index >= 0) sb_printf(b, ":%d", (int)d.index);
}

/* The shortest %g spelling that reads back to the same double, with ".0"
 * added so that it cannot be mistaken for an integer. */
static void format_float(double f, char out[40]) {
  if (isnan(f)) {
    strcpy(out, "nan");
    return;
  }
  if (isinf(f)) {
    strcpy(out, f < 0 ? "-inf" : "inf");
    return;
  }
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(out, 40, "%.*g", prec, f);
    if (strtod(out, NULL) == f) break;
  }
  if (!strpbrk(out, ".e")) strcat(out, ".0");
}

static void sb_string(sbuf *b, const char *s) {
  sb_str(b, "\"");
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    switch (c) {
      case '"': sb_str(b, "\\\""); break;
      case '\\': sb_str(b, "\\\\"); break;
      case '\n': sb_str(b, "\\n"); break;
      case '\t': sb_str(b, "\\t"); break;
      case '\r': sb_str(b, "\\r"); break;
      default:
        if (c < 0x20 || c == 0x7f) sb_printf(b, "\\x%02x", c);
        else sb_put(b, (const char *)&c, 1);
    }
  }
  sb_str(b, "\"");
}

typedef struct {
  sbuf out;
  alloy_error *err;
  const alloy_node *node; /* for error messages */
} printer;

static void print_fail(printer *pr, const char *what) {
  if (pr->err) return;
  const alloy_node *n = pr->node;
  pr->err = alloy_error_new(ALLOY_ERR_UNSUPPORTED,
                            ".air cannot write %s (node %s, op %s)", what,
                            n->nout ? n->outs[0]->name : "-", n->op->name);
}

static void print_arg(printer *pr, const alloy_arg *a, int depth) {
  sbuf *b = &pr->out;
  char buf[40];
  switch (a->kind) {
    case ALLOY_ARG_NONE: sb_str(b, "None"); break;
    case ALLOY_ARG_VALUE:
      if (!valid_value_name(a->u.value->name)) print_fail(pr, "an argument's value name");
      sb_str(b, "%");
      sb_str(b, a->u.value->name);
      break;
    case ALLOY_ARG_INT: sb_dim(b, a->u.i); break;
    case ALLOY_ARG_FLOAT:
      format_float(a->u.f, buf);
      sb_str(b, buf);
      break;
    case ALLOY_ARG_BOOL: sb_str(b, a->u.b ? "true" : "false"); break;
    case ALLOY_ARG_STR: sb_string(b, a->u.s); break;
    case ALLOY_ARG_DTYPE:
      if ((unsigned)a->u.dtype >= ALLOY_DTYPE_COUNT) print_fail(pr, "an invalid dtype");
      else sb_str(b, alloy_dtype_short_name(a->u.dtype));
      break;
    case ALLOY_ARG_LAYOUT:
      if (a->u.layout != ALLOY_LAYOUT_STRIDED) print_fail(pr, "an unknown layout");
      else sb_str(b, "strided");
      break;
    case ALLOY_ARG_DEVICE:
      if ((unsigned)a->u.device.type >= N_DEVICES) print_fail(pr, "an unknown device");
      else sb_device(b, a->u.device);
      break;
    case ALLOY_ARG_MEMORY_FORMAT:
      if ((unsigned)a->u.memory_format >= N_MEMORY_FORMATS)
        print_fail(pr, "an unknown memory format");
      else sb_str(b, memory_format_names[a->u.memory_format]);
      break;
    case ALLOY_ARG_LIST:
      if (depth >= AIR_MAX_DEPTH) {
        print_fail(pr, "lists nested this deep");
        break;
      }
      sb_str(b, "[");
      for (int i = 0; i < a->u.list.n; i++) {
        if (i) sb_str(b, ", ");
        print_arg(pr, &a->u.list.items[i], depth + 1);
      }
      sb_str(b, "]");
      break;
    default: print_fail(pr, "an argument of unknown kind"); break;
  }
}

static bool float_same(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b); /* all print "nan" */
  return a == b && signbit(a) == signbit(b);
}

/* Structural equality, as far as printing can tell two arguments apart. */
static bool arg_same(const alloy_arg *a, const alloy_arg *b) {
  if (a->kind != b->kind) return false;
  switch (a->kind) {
    case ALLOY_ARG_NONE: return true;
    case ALLOY_ARG_VALUE: return a->u.value == b->u.value;
    case ALLOY_ARG_INT: return alloy_dim_same(a->u.i, b->u.i);
    case ALLOY_ARG_FLOAT: return float_same(a->u.f, b->u.f);
    case ALLOY_ARG_BOOL: return a->u.b == b->u.b;
    case ALLOY_ARG_STR: return strcmp(a->u.s, b->u.s) == 0;
    case ALLOY_ARG_DTYPE: return a->u.dtype == b->u.dtype;
    case ALLOY_ARG_LAYOUT: return a->u.layout == b->u.layout;
    case ALLOY_ARG_DEVICE:
      return a->u.device.type == b->u.device.type && a->u.device.index == b->u.device.index;
    case ALLOY_ARG_MEMORY_FORMAT: return a->u.memory_format == b->u.memory_format;
    case ALLOY_ARG_LIST:
      if (a->u.list.n != b->u.list.n) return false;
      for (int i = 0; i < a->u.list.n; i++)
        if (!arg_same(&a->u.list.items[i], &b->u.list.items[i])) return false;
      return true;
  }
  return false;
}

static bool is_default(const alloy_schema_arg *sa, const alloy_arg *a) {
  return sa->has_default && arg_same(a, &sa->default_value);
}

static void print_node(printer *pr, const alloy_node *n) {
  sbuf *b = &pr->out;
  const alloy_schema *s = n->op->schema;
  pr->node = n;
  for (int k = 0; k < n->nout; k++) {
    if (!valid_value_name(n->outs[k]->name)) print_fail(pr, "an output's value name");
    sb_str(b, k ? ", %" : "%");
    sb_str(b, n->outs[k]->name);
  }
  if (n->nout) sb_str(b, " = ");
  sb_str(b, n->op->name);
  sb_str(b, "(");
  /* Positional up to the last one that is not its default; keyword-only
   * ones by name when not their default. */
  int last = -1;
  for (int i = 0; i < s->nargs; i++)
    if (!s->args[i].kwarg_only && !is_default(&s->args[i], &n->args[i])) last = i;
  bool first = true;
  for (int i = 0; i <= last; i++) {
    if (s->args[i].kwarg_only) continue;
    if (!first) sb_str(b, ", ");
    first = false;
    print_arg(pr, &n->args[i], 0);
  }
  for (int i = 0; i < s->nargs; i++) {
    if (!s->args[i].kwarg_only || is_default(&s->args[i], &n->args[i])) continue;
    if (!first) sb_str(b, ", ");
    first = false;
    sb_str(b, s->args[i].name);
    sb_str(b, "=");
    print_arg(pr, &n->args[i], 0);
  }
  sb_str(b, ")");
  for (int k = 0; k < n->nout; k++) {
    const alloy_value *v = n->outs[k];
    sb_str(b, k ? ", " : " : ");
    if ((unsigned)v->dtype >= ALLOY_DTYPE_COUNT) print_fail(pr, "an invalid dtype");
    sb_type(b, v->kind, v->dtype, v->shape, v->rank, v->int_value);
  }
  sb_str(b, "\n");
}

alloy_error *alloy_air_print(const alloy_graph *g, char **out) {
  if (!out) return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "alloy_air_print: NULL out");
  *out = NULL;
  if (!g) return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "alloy_air_print: NULL graph");
  printer pr = {{NULL, 0, 0, false}, NULL, NULL};
  sbuf *b = &pr.out;
  const alloy_symtab *st = g->symtab;
  for (int i = 0; i < alloy_symtab_count(st) && !pr.err; i++) {
    const char *name = alloy_symtab_name(st, i);
    size_t n = strlen(name);
    if (alloy_symtab_is_unbacked(st, i) || is_unbacked_name(name, n)) continue;
    if (is_reserved_word(name, n) || n > AIR_MAX_NAME)
      pr.err = alloy_error_new(ALLOY_ERR_UNSUPPORTED,
                               ".air cannot declare a symbol named '%.64s'", name);
    int64_t lo, hi;
    alloy_symtab_range(st, i, &lo, &hi);
    sb_printf(b, "sym %s in [%lld, ", name, (long long)lo);
    if (hi == ALLOY_SYM_INF) sb_str(b, "inf]\n");
    else sb_printf(b, "%lld]\n", (long long)hi);
  }
  if (g->weights_file) {
    sb_str(b, "weights ");
    sb_string(b, g->weights_file);
    sb_str(b, "\n");
  }
  for (int i = 0; i < g->ninputs && !pr.err; i++) {
    const alloy_value *v = g->inputs[i];
    if (!valid_value_name(v->name) || (unsigned)v->kind > ALLOY_VALUE_BOOL ||
        (unsigned)v->device.type >= N_DEVICES) {
      pr.err = alloy_error_new(ALLOY_ERR_UNSUPPORTED,
                               ".air cannot write input '%.64s' (its name or type)", v->name);
      break;
    }
    sb_str(b, "input %");
    sb_str(b, v->name);
    sb_str(b, ": ");
    sb_type(b, v->kind, v->dtype, v->shape, v->rank, v->int_value);
    if (v->kind == ALLOY_VALUE_TENSOR && v->strides) {
      sb_str(b, " stride [");
      for (int d = 0; d < v->rank; d++) {
        if (d) sb_str(b, ", ");
        sb_dim(b, v->strides[d]);
      }
      sb_str(b, "]");
    }
    if (v->kind == ALLOY_VALUE_TENSOR && v->device.type != ALLOY_DEVICE_CPU) {
      sb_str(b, " @");
      sb_device(b, v->device);
    }
    if (g->in_roles[i].role != ALLOY_INPUT_USER) {
      sb_printf(b, " %s ", input_role_names[g->in_roles[i].role]);
      sb_string(b, g->in_roles[i].name);
    }
    sb_str(b, "\n");
  }
  for (int i = 0; i < g->nnodes && !pr.err; i++) print_node(&pr, g->nodes[i]);
  sb_str(b, "output");
  for (int i = 0; i < g->noutputs; i++) {
    sb_str(b, i ? ", %" : " %");
    sb_str(b, g->outputs[i]->name);
    if (g->out_roles[i].role != ALLOY_OUTPUT_USER) {
      sb_printf(b, " -> %s ", output_role_names[g->out_roles[i].role]);
      sb_string(b, g->out_roles[i].name);
    }
  }
  sb_str(b, "\n");
  if (!pr.err && b->oom) pr.err = oom();
  if (pr.err) {
    free(b->s);
    return pr.err;
  }
  *out = b->s;
  return NULL;
}

/* --- parsing ------------------------------------------------------------
 *
 * Line by line: [bol, eol) is the current line without its newline (and
 * without a '\r' before it); every helper reads through peek(), which stops
 * at eol, so no read runs past the line whatever the text holds. */

typedef struct {
  const char *file;
  const char *text;
  size_t len;
  size_t bol, eol, next, pos;
  size_t line;
  alloy_graph *g;
  alloy_symtab *st;
  alloy_error *err;
  alloy_arena scratch; /* this line's names, strings and lists */
  bool seen_node, seen_output;
} parser;

/* The builder names a multi-output node's values "<name>_<k>"; a name with a
 * space cannot clash with any name the text may spell. */
#define TEMP_NAME " air"

static bool fail_at(parser *p, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool fail_at(parser *p, size_t at, const char *fmt, ...) {
  if (p->err) return false;
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  p->err = alloy_error_new(ALLOY_ERR_PARSE, "%s:%zu:%zu: %s", p->file, p->line,
                           at - p->bol + 1, msg);
  return false;
}

/* Puts the text position in front of an error from elsewhere (the builder,
 * the symbol table), keeping its code. */
static bool wrap_at(parser *p, size_t at, alloy_error *e) {
  if (p->err) {
    alloy_error_free(e);
    return false;
  }
  p->err = alloy_error_wrap(e, "%s:%zu:%zu", p->file, p->line, at - p->bol + 1);
  return false;
}

static bool fail_oom(parser *p) {
  if (!p->err) p->err = oom();
  return false;
}

static int peek(const parser *p) {
  return p->pos < p->eol ? (unsigned char)p->text[p->pos] : -1;
}
static int peek_at(const parser *p, size_t at) {
  return at < p->eol ? (unsigned char)p->text[at] : -1;
}
static void skip_ws(parser *p) {
  while (peek(p) == ' ' || peek(p) == '\t') p->pos++;
}
static bool at_end(parser *p) {
  skip_ws(p);
  return peek(p) == -1 || peek(p) == '#';
}
static bool expect_end(parser *p, const char *after) {
  if (at_end(p)) return true;
  return fail_at(p, p->pos, "expected the end of the line after %s", after);
}

/* Takes c when it is next: the parser's every optional or closing mark. */
static bool accept(parser *p, char c) {
  if (peek(p) != (unsigned char)c) return false;
  p->pos++;
  return true;
}

static bool expect_char(parser *p, char c, const char *what) {
  skip_ws(p);
  return accept(p, c) || fail_at(p, p->pos, "expected %s", what);
}

/* Length of the identifier [A-Za-z_][A-Za-z0-9_]* at pos (0 if none). */
static size_t word_len(const parser *p) {
  size_t n = 0;
  if (!is_alpha(peek_at(p, p->pos))) return 0;
  while (is_alpha(peek_at(p, p->pos + n)) || is_digit(peek_at(p, p->pos + n))) n++;
  return n;
}

static bool word_here(const parser *p, const char *word) {
  size_t n = word_len(p);
  return word_eq(p->text + p->pos, n, word);
}

/* What a character is, for messages: "'x'", "the end of the line". */
static const char *describe(const parser *p, char buf[24]) {
  int c = peek(p);
  if (c < 0) return "the end of the line";
  if (c >= 0x20 && c < 0x7f) snprintf(buf, 24, "'%c'", c);
  else snprintf(buf, 24, "byte 0x%02x", c);
  return buf;
}

/* %name: returns the name (in the scratch arena) without the '%'. */
static bool parse_value_name(parser *p, char **out) {
  char buf[24];
  if (peek(p) != '%') return fail_at(p, p->pos, "expected '%%name', found %s", describe(p, buf));
  size_t start = ++p->pos;
  while (is_name_char(peek(p))) p->pos++;
  size_t n = p->pos - start;
  if (n == 0) return fail_at(p, start, "expected a value name after '%%'");
  if (n > AIR_MAX_NAME)
    return fail_at(p, start, "value name longer than %d characters", AIR_MAX_NAME);
  if (!(*out = alloy_arena_strndup(&p->scratch, p->text + start, n))) return fail_oom(p);
  return true;
}

/* A dim expression, read by alloy_dim_parse from the rest of the line. */
static bool parse_dim(parser *p, alloy_dim *out) {
  size_t used = 0;
  alloy_error *e = alloy_dim_parse(p->st, p->text + p->pos, p->eol - p->pos, out, &used);
  if (!e) {
    p->pos += used;
    return true;
  }
  /* The symbol table's parser ends its messages with " at column N" (from
   * 0, within what it was given): point there instead. */
  const char *msg = alloy_error_message(e);
  const char *tail = strstr(msg, " at column ");
  size_t at = p->pos, len = strlen(msg);
  if (tail) {
    char *end;
    unsigned long long col = strtoull(tail + 11, &end, 10);
    if (*end == '\0' && col <= p->eol - p->pos) {
      at = p->pos + (size_t)col;
      len = (size_t)(tail - msg);
    }
  }
  fail_at(p, at, "%.*s", (int)len, msg);
  alloy_error_free(e);
  return false;
}

static bool parse_int64(parser *p, int64_t *out) {
  size_t start = p->pos;
  bool neg = peek(p) == '-';
  if (neg) p->pos++;
  if (!is_digit(peek(p))) return fail_at(p, start, "expected an integer");
  uint64_t lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, v = 0;
  while (is_digit(peek(p))) {
    unsigned dig = (unsigned)(peek(p) - '0');
    if (v > (lim - dig) / 10) return fail_at(p, start, "integer out of range");
    v = v * 10 + dig;
    p->pos++;
  }
  *out = !neg ? (int64_t)v : v > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)v;
  return true;
}

static bool parse_device(parser *p, alloy_device *out) {
  size_t n = word_len(p);
  int type = -1;
  for (int i = 0; i < N_DEVICES; i++)
    if (word_eq(p->text + p->pos, n, device_names[i])) type = i;
  if (type < 0) return fail_at(p, p->pos, "expected a device (cpu, cuda:0, hip:0, meta)");
  p->pos += n;
  out->type = (alloy_device_type)type;
  out->index = -1;
  if (accept(p, ':')) {
    size_t at = p->pos;
    int64_t idx;
    if (!is_digit(peek(p))) return fail_at(p, at, "expected a device index after ':'");
    if (!parse_int64(p, &idx)) return false;
    if (idx > INT32_MAX) return fail_at(p, at, "device index out of range");
    out->index = (int32_t)idx;
  }
  return true;
}

/* [d0, d1, ...]: a shape (sizes must not be negative) or strides. */
static bool parse_dims(parser *p, alloy_dim *out, int *n, bool sizes) {
  *n = 0;
  if (!expect_char(p, '[', "'['")) return false;
  skip_ws(p);
  if (accept(p, ']')) return true;
  for (;;) {
    skip_ws(p);
    size_t at = p->pos;
    if (*n == ALLOY_MAX_RANK)
      return fail_at(p, at, "more than %d dimensions", ALLOY_MAX_RANK);
    alloy_dim d;
    if (!parse_dim(p, &d)) return false;
    if (sizes && alloy_dim_is_const(d) && d.value < 0)
      return fail_at(p, at, "size %lld is negative", (long long)d.value);
    out[(*n)++] = d;
    skip_ws(p);
    if (accept(p, ',')) continue;
    if (accept(p, ']')) return true;
    char buf[24];
    return fail_at(p, p->pos, "expected ',' or ']' after a dimension, found %s",
                   describe(p, buf));
  }
}

typedef struct {
  alloy_value_kind kind;
  alloy_dtype dtype;
  int rank;
  alloy_dim shape[ALLOY_MAX_RANK];
  bool has_strides;
  alloy_dim strides[ALLOY_MAX_RANK];
  alloy_device device;
  alloy_dim int_value;
} parsed_type;

/* TYPE; strides and a device only where an input is declared. */
static bool parse_type(parser *p, bool input, parsed_type *t) {
  memset(t, 0, sizeof *t);
  t->device.type = ALLOY_DEVICE_CPU;
  t->device.index = -1;
  skip_ws(p);
  size_t at = p->pos, n = word_len(p);
  const char *w = p->text + p->pos;
  if (n && peek_at(p, p->pos + n) == '[') {
    if (!dtype_from_short(w, n, &t->dtype))
      return fail_at(p, at, "unknown dtype '%.*s'", n > 64 ? 64 : (int)n, w);
    p->pos += n;
    t->kind = ALLOY_VALUE_TENSOR;
    if (!parse_dims(p, t->shape, &t->rank, true)) return false;
  } else if (word_eq(w, n, "SymInt")) {
    p->pos += n;
    t->kind = ALLOY_VALUE_INT;
    t->dtype = ALLOY_I64;
    if (!expect_char(p, '(', "'(' after SymInt") || !parse_dim(p, &t->int_value) ||
        !expect_char(p, ')', "')' after the SymInt's value"))
      return false;
    return true;
  } else if (word_eq(w, n, "float") || word_eq(w, n, "bool")) {
    p->pos += n;
    t->kind = w[0] == 'f' ? ALLOY_VALUE_FLOAT : ALLOY_VALUE_BOOL;
    t->dtype = w[0] == 'f' ? ALLOY_F64 : ALLOY_BOOL;
    return true;
  } else {
    return fail_at(p, at, "expected a type (f32[...], SymInt(...), float or bool)");
  }
  if (!input) return true;
  skip_ws(p);
  if (word_here(p, "stride")) {
    size_t sat = p->pos;
    int ns;
    p->pos += 6;
    if (!parse_dims(p, t->strides, &ns, false)) return false;
    if (ns != t->rank)
      return fail_at(p, sat, "%d strides for a tensor of rank %d", ns, t->rank);
    t->has_strides = true;
    skip_ws(p);
  }
  return !accept(p, '@') || parse_device(p, &t->device);
}

/* `sym NAME in [LO, HI]` */
static bool parse_sym(parser *p) {
  if (p->seen_node)
    return fail_at(p, p->pos, "symbols must be declared before the first node");
  p->pos += 3;
  skip_ws(p);
  size_t at = p->pos, n = word_len(p);
  const char *name = p->text + at;
  int shown = n > 64 ? 64 : (int)n;
  if (!n) return fail_at(p, at, "expected a symbol name after 'sym'");
  if (n > AIR_MAX_NAME)
    return fail_at(p, at, "symbol name longer than %d characters", AIR_MAX_NAME);
  if (is_unbacked_name(name, n))
    return fail_at(p, at, "symbol names u0, u1, ... are kept for data-dependent "
                          "sizes and are not declared");
  if (is_reserved_word(name, n))
    return fail_at(p, at, "'%.*s' is a reserved word and cannot name a symbol", shown, name);
  if (alloy_sym_find(p->st, name, n, NULL))
    return fail_at(p, at, "symbol '%.*s' already declared", shown, name);
  p->pos += n;
  skip_ws(p);
  if (!word_here(p, "in")) return fail_at(p, p->pos, "expected 'in' after the symbol name");
  p->pos += 2;
  int64_t lo, hi;
  if (!expect_char(p, '[', "'[' before the symbol's range")) return false;
  skip_ws(p);
  if (!parse_int64(p, &lo) || !expect_char(p, ',', "',' after the lower bound")) return false;
  skip_ws(p);
  if (word_here(p, "inf")) {
    p->pos += 3;
    hi = ALLOY_SYM_INF;
  } else if (!parse_int64(p, &hi)) {
    return false;
  }
  if (!expect_char(p, ']', "']' after the upper bound") || !expect_end(p, "the range"))
    return false;
  char *cname = alloy_arena_strndup(&p->scratch, name, n);
  if (!cname) return fail_oom(p);
  alloy_dim d;
  alloy_error *e = alloy_sym_new(p->st, cname, lo, hi, &d);
  return e ? wrap_at(p, at, e) : true;
}

static bool parse_string(parser *p, alloy_arg *out);

/* `input %name: TYPE [ROLE "NAME"]` */
static bool parse_input(parser *p) {
  size_t line_at = p->pos;
  if (p->seen_node) return fail_at(p, p->pos, "inputs must be declared before the first node");
  p->pos += 5;
  skip_ws(p);
  size_t at = p->pos;
  char *name;
  parsed_type t;
  if (!parse_value_name(p, &name)) return false;
  if (alloy_graph_find_value(p->g, name))
    return fail_at(p, at, "value name '%%%s' already defined", name);
  if (!expect_char(p, ':', "':' after the input's name") || !parse_type(p, true, &t))
    return false;
  /* The signature role: ` parameter "l1.weight"`, ` buffer "..."`, ` constant "..."`. */
  skip_ws(p);
  int role = ALLOY_INPUT_USER;
  alloy_arg source = alloy_arg_none();
  for (int r = 1; r < (int)(sizeof input_role_names / sizeof *input_role_names); r++)
    if (word_here(p, input_role_names[r])) role = r;
  if (role != ALLOY_INPUT_USER) {
    p->pos += strlen(input_role_names[role]);
    skip_ws(p);
    if (peek(p) != '"') return fail_at(p, p->pos, "expected the quoted name of the %s",
                                       input_role_names[role]);
    if (!parse_string(p, &source)) return false;
  }
  if (!expect_end(p, "the input's type")) return false;
  alloy_value_type vt = {t.kind, t.dtype, t.rank, t.shape,
                         t.has_strides ? t.strides : NULL, t.device, t.int_value};
  alloy_error *e = alloy_graph_add_input(p->g, name, &vt, NULL);
  if (!e && role != ALLOY_INPUT_USER)
    e = alloy_graph_set_input_role(p->g, alloy_graph_num_inputs(p->g) - 1,
                                   (alloy_input_role)role, source.u.s);
  return e ? wrap_at(p, line_at, e) : true;
}

/* `weights "FILE"`: where the weights' data is, relative to this file. */
static bool parse_weights(parser *p) {
  size_t line_at = p->pos;
  if (p->seen_node) return fail_at(p, p->pos, "the weights line must come before the first node");
  if (p->g->weights_file) return fail_at(p, p->pos, "a second weights line");
  p->pos += 7;
  skip_ws(p);
  alloy_arg path;
  if (peek(p) != '"') return fail_at(p, p->pos, "expected the quoted path of the weights file");
  if (!parse_string(p, &path) || !expect_end(p, "the weights file")) return false;
  alloy_error *e = alloy_graph_set_weights_file(p->g, path.u.s);
  return e ? wrap_at(p, line_at, e) : true;
}

/* A growing array of T, malloc'd: the parser's only heap memory besides the
 * graph, always released by the function that made it. */
typedef struct {
  void *items;
  int n, cap;
} vec;

static bool vec_push(parser *p, vec *v, const void *item, size_t size) {
  if (v->n == v->cap) {
    int ncap = v->cap ? v->cap * 2 : 8;
    void *np = realloc(v->items, size * (size_t)ncap);
    if (!np) return fail_oom(p);
    v->items = np;
    v->cap = ncap;
  }
  memcpy((char *)v->items + size * (size_t)v->n++, item, size);
  return true;
}

/* "...", with \" \\ \n \t \r \xHH escapes. Measured first, then decoded, so
 * that it takes no more memory than it holds. */
static bool parse_string(parser *p, alloy_arg *out) {
  size_t open = p->pos++;
  size_t n = 0, i = p->pos;
  for (;; n++) {
    int c = peek_at(p, i);
    if (c < 0) return fail_at(p, open, "unterminated string");
    if (c == '"') break;
    if (c == 0) return fail_at(p, i, "a string cannot hold a NUL byte");
    if (c != '\\') {
      i++;
      continue;
    }
    int e = peek_at(p, i + 1);
    if (e == '"' || e == '\\' || e == 'n' || e == 't' || e == 'r') {
      i += 2;
      continue;
    }
    if (e == 'x') {
      static const char hex[] = "0123456789abcdefABCDEF";
      int h1 = peek_at(p, i + 2), h2 = peek_at(p, i + 3);
      if (h1 <= 0 || h2 <= 0 || !strchr(hex, h1) || !strchr(hex, h2))
        return fail_at(p, i, "expected two hex digits after '\\x'");
      if (h1 == '0' && h2 == '0') return fail_at(p, i, "a string cannot hold a NUL byte");
      i += 4;
      continue;
    }
    if (e >= 0x20 && e < 0x7f) return fail_at(p, i, "unknown escape '\\%c' in a string", e);
    return fail_at(p, i, "unknown escape in a string");
  }
  char *s = alloy_arena_alloc(&p->scratch, n + 1);
  if (!s) return fail_oom(p);
  for (size_t k = 0; k < n; k++) {
    char c = p->text[p->pos++];
    if (c == '\\') {
      char e = p->text[p->pos++];
      if (e == 'x') {
        char hx[3] = {p->text[p->pos], p->text[p->pos + 1], 0};
        c = (char)strtol(hx, NULL, 16);
        p->pos += 2;
      } else {
        c = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
      }
    }
    s[k] = c;
  }
  s[n] = '\0';
  p->pos++; /* closing quote */
  *out = alloy_arg_str(s);
  return true;
}

/* Length of a float literal at pos: -?D+(.D*)?([eE][-+]?D+)? with a '.' or
 * an exponent (else it is an integer); 0 when there is none. */
static size_t float_len(const parser *p) {
  size_t i = p->pos;
  bool frac = false, exp = false;
  if (peek_at(p, i) == '-') i++;
  if (!is_digit(peek_at(p, i))) return 0;
  while (is_digit(peek_at(p, i))) i++;
  if (peek_at(p, i) == '.') {
    frac = true;
    i++;
    while (is_digit(peek_at(p, i))) i++;
  }
  if (peek_at(p, i) == 'e' || peek_at(p, i) == 'E') {
    size_t j = i + 1;
    if (peek_at(p, j) == '+' || peek_at(p, j) == '-') j++;
    if (is_digit(peek_at(p, j))) {
      exp = true;
      while (is_digit(peek_at(p, j))) j++;
      i = j;
    }
  }
  return frac || exp ? i - p->pos : 0;
}

static bool parse_float(parser *p, size_t n, alloy_arg *out) {
  char buf[128];
  if (n >= sizeof buf) return fail_at(p, p->pos, "float literal longer than %d characters",
                                      (int)sizeof buf - 1);
  memcpy(buf, p->text + p->pos, n);
  buf[n] = '\0';
  double f = strtod(buf, NULL);
  if (isinf(f)) return fail_at(p, p->pos, "float literal out of range (write inf)");
  p->pos += n;
  *out = alloy_arg_float(f);
  return true;
}

static bool parse_arg(parser *p, int hint, int depth, alloy_arg *out);

static bool parse_list(parser *p, int hint, int depth, alloy_arg *out) {
  if (depth >= AIR_MAX_DEPTH)
    return fail_at(p, p->pos, "lists nested more than %d deep", AIR_MAX_DEPTH);
  p->pos++;
  vec items = {0};
  bool ok = true;
  skip_ws(p);
  if (!accept(p, ']')) {
    for (;;) {
      alloy_arg item;
      if (!(ok = parse_arg(p, hint, depth + 1, &item) &&
                 vec_push(p, &items, &item, sizeof item)))
        break;
      skip_ws(p);
      if (accept(p, ',')) continue;
      if (accept(p, ']')) break;
      char buf[24];
      ok = fail_at(p, p->pos, "expected ',' or ']' in a list, found %s", describe(p, buf));
      break;
    }
  }
  if (ok) {
    alloy_arg *copy = NULL;
    if (items.n && !(copy = alloy_arena_alloc(&p->scratch, sizeof *copy * (size_t)items.n)))
      ok = fail_oom(p);
    else if (items.n)
      memcpy(copy, items.items, sizeof *copy * (size_t)items.n);
    if (ok) *out = alloy_arg_list(copy, items.n);
  }
  free(items.items);
  return ok;
}

static bool parse_arg(parser *p, int hint, int depth, alloy_arg *out) {
  skip_ws(p);
  size_t at = p->pos, n;
  int c = peek(p);
  if (c == '[') return parse_list(p, hint, depth, out);
  if (c == '"') return parse_string(p, out);
  if (c == '%') {
    char *name;
    if (!parse_value_name(p, &name)) return false;
    alloy_value *v = alloy_graph_find_value(p->g, name);
    if (!v) return fail_at(p, at, "unknown value '%%%s'", name);
    *out = alloy_arg_value(v);
    return true;
  }
  if (c == '-' || is_digit(c)) {
    if ((n = float_len(p))) return parse_float(p, n, out);
    p->pos += c == '-';
    bool minus_inf = c == '-' && word_here(p, "inf");
    p->pos = at;
    if (minus_inf) {
      p->pos += 4;
      *out = alloy_arg_float(-INFINITY);
      return true;
    }
  }
  if ((n = word_len(p))) {
    const char *w = p->text + p->pos;
    alloy_dtype t;
    int i;
    if (word_eq(w, n, "true") || word_eq(w, n, "false")) {
      *out = alloy_arg_bool(w[0] == 't');
    } else if (word_eq(w, n, "None")) {
      *out = alloy_arg_none();
    } else if (word_eq(w, n, "inf") || word_eq(w, n, "nan")) {
      *out = alloy_arg_float(w[0] == 'i' ? INFINITY : NAN);
    } else if (dtype_from_short(w, n, &t) &&
               (hint == ALLOY_TYPE_SCALAR_TYPE || !alloy_sym_find(p->st, w, n, NULL))) {
      /* "u8" is also the name of the ninth data-dependent size: a dtype only
       * where a ScalarType goes or where no such size exists. */
      *out = alloy_arg_dtype(t);
    } else if (word_eq(w, n, "strided")) {
      *out = (alloy_arg){ALLOY_ARG_LAYOUT, {0}};
      out->u.layout = ALLOY_LAYOUT_STRIDED;
    } else {
      for (i = 0; i < N_MEMORY_FORMATS && !word_eq(w, n, memory_format_names[i]); i++) {
      }
      if (i < N_MEMORY_FORMATS) {
        *out = (alloy_arg){ALLOY_ARG_MEMORY_FORMAT, {0}};
        out->u.memory_format = (alloy_memory_format)i;
      } else {
        for (i = 0; i < N_DEVICES && !word_eq(w, n, device_names[i]); i++) {
        }
        if (i < N_DEVICES) {
          *out = (alloy_arg){ALLOY_ARG_DEVICE, {0}};
          return parse_device(p, &out->u.device);
        }
        n = 0; /* a symbol: an expression follows */
      }
    }
    p->pos += n;
    if (n) return true;
  }
  if (c == '-' || c == '(' || is_digit(c) || is_alpha(c)) {
    alloy_dim d;
    if (!parse_dim(p, &d)) return false;
    *out = alloy_arg_dim(d);
    return true;
  }
  char buf[24];
  return fail_at(p, at, "expected an argument, found %s", describe(p, buf));
}

typedef struct {
  vec pos;     /* alloy_arg */
  vec kwnames; /* const char * */
  vec kwargs;  /* alloy_arg */
  vec names;   /* char *: the values the line defines */
} node_parts;

/* `(ARGS)`: positional ones first, then name=value. */
static bool parse_args(parser *p, const alloy_op *op, node_parts *np) {
  const alloy_schema *s = op->schema;
  if (!expect_char(p, '(', "'(' after the op name")) return false;
  skip_ws(p);
  if (accept(p, ')')) return true;
  for (;;) {
    skip_ws(p);
    size_t at = p->pos, n = word_len(p), q = p->pos + n;
    while (n && (peek_at(p, q) == ' ' || peek_at(p, q) == '\t')) q++;
    int hint = -1;
    alloy_arg a;
    if (n && peek_at(p, q) == '=') {
      char *name = alloy_arena_strndup(&p->scratch, p->text + at, n);
      if (!name) return fail_oom(p);
      int i = alloy_schema_find_arg(s, name);
      if (i < 0)
        return fail_at(p, at, "%s has no argument named '%.64s'", op->name, name);
      hint = (int)s->args[i].type.kind;
      p->pos = q + 1;
      if (!parse_arg(p, hint, 0, &a) || !vec_push(p, &np->kwnames, &name, sizeof name) ||
          !vec_push(p, &np->kwargs, &a, sizeof a))
        return false;
    } else {
      int i = np->pos.n;
      if (np->kwargs.n)
        return fail_at(p, at, "positional argument after keyword arguments");
      if (i < s->nargs && s->args[i].kwarg_only)
        return fail_at(p, at, "argument '%s' of %s is keyword-only: write %s=...",
                       s->args[i].name, op->name, s->args[i].name);
      if (i < s->nargs) hint = (int)s->args[i].type.kind;
      if (!parse_arg(p, hint, 0, &a) || !vec_push(p, &np->pos, &a, sizeof a)) return false;
    }
    skip_ws(p);
    if (accept(p, ',')) continue;
    if (accept(p, ')')) return true;
    return fail_at(p, p->pos, "expected ')' after argument list");
  }
}

/* `: TYPE, TYPE...` after the node is built: each must be what the shape
 * function inferred. */
static bool check_annotations(parser *p, const alloy_node *n) {
  int k = 0;
  for (;; k++) {
    skip_ws(p);
    size_t at = p->pos;
    parsed_type t;
    if (!parse_type(p, false, &t)) return false;
    if (k >= n->nout)
      return fail_at(p, at, "%s defines %d value%s but more types are annotated",
                     n->op->name, n->nout, n->nout == 1 ? "" : "s");
    const alloy_value *v = n->outs[k];
    bool same = t.kind == v->kind;
    if (same && v->kind == ALLOY_VALUE_TENSOR) {
      same = t.dtype == v->dtype && t.rank == v->rank;
      for (int d = 0; d < v->rank && same; d++) same = alloy_dim_same(t.shape[d], v->shape[d]);
    } else if (same && v->kind == ALLOY_VALUE_INT) {
      same = alloy_dim_same(t.int_value, v->int_value);
    }
    if (!same) {
      sbuf want = {0}, got = {0};
      sb_type(&got, t.kind, t.dtype, t.shape, t.rank, t.int_value);
      sb_type(&want, v->kind, v->dtype, v->shape, v->rank, v->int_value);
      if (!got.oom && !want.oom)
        fail_at(p, at, "annotated %.256s but inferred %.256s", got.s, want.s);
      else
        fail_oom(p);
      free(got.s);
      free(want.s);
      return false;
    }
    skip_ws(p);
    if (peek(p) != ',') break;
    p->pos++;
  }
  if (k + 1 < n->nout)
    return fail_at(p, p->pos, "%s defines %d values but %d type%s annotated", n->op->name,
                   n->nout, k + 1, k ? "s are" : " is");
  return expect_end(p, "the types");
}

static bool build_node(parser *p, size_t node_at, const alloy_op *op, node_parts *np) {
  int nnames = np->names.n;
  char **names = np->names.items;
  const alloy_schema *s = op->schema;
  bool one_output = s->nreturns == 1 && !s->returns[0].type.list;
  bool temp = nnames > 1 || (nnames == 1 && !one_output);
  const char *name = temp ? TEMP_NAME : nnames ? names[0] : NULL;
  alloy_node *n;
  alloy_error *e = alloy_graph_add_node(p->g, op, np->pos.items, np->pos.n,
                                        (const char *const *)np->kwnames.items,
                                        np->kwargs.items, np->kwargs.n, name, &n);
  if (e) return wrap_at(p, node_at, e);
  if (n->nout != nnames)
    return fail_at(p, node_at, "%s defines %d value%s but %d %s named", op->name, n->nout,
                   n->nout == 1 ? "" : "s", nnames, nnames == 1 ? "is" : "are");
  for (int k = 0; k < nnames && temp; k++)
    if ((e = alloy_graph_rename(p->g, n->outs[k], names[k]))) return wrap_at(p, node_at, e);
  p->seen_node = true;
  skip_ws(p);
  if (accept(p, ':')) return check_annotations(p, n);
  return expect_end(p, "the argument list");
}

/* `%a, %b = OP(ARGS) : TYPES` or `OP(ARGS)` */
static bool parse_node(parser *p) {
  size_t node_at = p->pos;
  node_parts np = {{0}, {0}, {0}, {0}};
  bool ok = true;
  while (ok && peek(p) == '%') {
    size_t at = p->pos;
    char *name;
    if (!(ok = parse_value_name(p, &name))) break;
    bool dup = alloy_graph_find_value(p->g, name) != NULL;
    for (int k = 0; k < np.names.n && !dup; k++) dup = !strcmp(((char **)np.names.items)[k], name);
    if (dup) {
      ok = fail_at(p, at, "value name '%%%s' already defined", name);
      break;
    }
    if (!(ok = vec_push(p, &np.names, &name, sizeof name))) break;
    skip_ws(p);
    if (accept(p, ',')) {
      skip_ws(p);
      if (peek(p) != '%') ok = fail_at(p, p->pos, "expected '%%name' after ','");
    } else if (accept(p, '=')) {
      skip_ws(p);
      break;
    } else {
      ok = fail_at(p, p->pos, "expected ',' or '=' after a value name");
    }
  }
  const alloy_op *op = NULL;
  if (ok) {
    size_t at = p->pos, n = 0;
    while (is_name_char(peek_at(p, at + n)) || peek_at(p, at + n) == ':') n++;
    char *opname = NULL;
    if (n == 0) {
      char buf[24];
      ok = fail_at(p, at, "expected an op name, found %s", describe(p, buf));
    } else if (n > AIR_MAX_NAME) {
      ok = fail_at(p, at, "op name longer than %d characters", AIR_MAX_NAME);
    } else if (!(opname = alloy_arena_strndup(&p->scratch, p->text + at, n))) {
      ok = fail_oom(p);
    } else if (!(op = alloy_op_find(opname))) {
      ok = fail_at(p, at, "unknown op '%s'", opname);
    }
    p->pos += n;
  }
  ok = ok && parse_args(p, op, &np) && build_node(p, node_at, op, &np);
  free(np.pos.items);
  free(np.kwnames.items);
  free(np.kwargs.items);
  free(np.names.items);
  return ok;
}

/* ` -> buffer "name"` or ` -> input "name"` after an output: a mutation. */
static bool parse_output_role(parser *p, alloy_graph_role *role) {
  *role = (alloy_graph_role){.role = ALLOY_OUTPUT_USER, .name = NULL};
  skip_ws(p);
  if (peek(p) != '-' || peek_at(p, p->pos + 1) != '>') return true;
  p->pos += 2;
  skip_ws(p);
  for (int r = 1; r < (int)(sizeof output_role_names / sizeof *output_role_names); r++)
    if (word_here(p, output_role_names[r])) role->role = r;
  if (role->role == ALLOY_OUTPUT_USER)
    return fail_at(p, p->pos, "expected 'buffer' or 'input' after '->'");
  p->pos += strlen(output_role_names[role->role]);
  skip_ws(p);
  alloy_arg target;
  if (peek(p) != '"') return fail_at(p, p->pos, "expected the quoted name the output updates");
  if (!parse_string(p, &target)) return false;
  role->name = target.u.s;
  skip_ws(p);
  return true;
}

/* `output %a, %b -> buffer "bn.running_mean"` (or `output` alone) */
static bool parse_output(parser *p) {
  size_t line_at = p->pos;
  vec vals = {0}, roles = {0};
  bool ok = true;
  p->pos += 6;
  if (!at_end(p)) {
    for (;;) {
      skip_ws(p);
      size_t at = p->pos;
      char *name;
      alloy_graph_role role;
      if (!(ok = parse_value_name(p, &name))) break;
      alloy_value *v = alloy_graph_find_value(p->g, name);
      if (!v) {
        ok = fail_at(p, at, "unknown value '%%%s'", name);
        break;
      }
      if (!(ok = vec_push(p, &vals, &v, sizeof v) && parse_output_role(p, &role) &&
                 vec_push(p, &roles, &role, sizeof role)))
        break;
      if (peek(p) != ',') break;
      p->pos++;
    }
  }
  ok = ok && expect_end(p, "the outputs");
  if (ok) {
    /* Never NULL: graph.c memcpy()s from it even when there are none. */
    alloy_value *none = NULL;
    alloy_error *e = alloy_graph_set_outputs(p->g, vals.n ? vals.items : (void *)&none, vals.n);
    const alloy_graph_role *r = roles.items;
    for (int i = 0; i < roles.n && !e; i++)
      if (r[i].role != ALLOY_OUTPUT_USER)
        e = alloy_graph_set_output_role(p->g, i, (alloy_output_role)r[i].role, r[i].name);
    if (e) ok = wrap_at(p, line_at, e);
  }
  free(vals.items);
  free(roles.items);
  p->seen_output = true;
  return ok;
}

static bool parse_line(parser *p) {
  if (at_end(p)) return true;
  if (p->seen_output)
    return fail_at(p, p->pos, "nothing but comments may follow the output line");
  size_t n = word_len(p);
  int after = peek_at(p, p->pos + n);
  bool spaced = after == ' ' || after == '\t';
  bool ends = spaced || after == -1 || after == '#';
  const char *w = p->text + p->pos;
  if (word_eq(w, n, "sym") && spaced) return parse_sym(p);
  if (word_eq(w, n, "input") && spaced) return parse_input(p);
  if (word_eq(w, n, "weights") && spaced) return parse_weights(p);
  if (word_eq(w, n, "output") && ends) return parse_output(p);
  return parse_node(p);
}

alloy_error *alloy_air_parse(const char *text, size_t len,
                             const char *filename, alloy_graph **out) {
  if (!out) return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "alloy_air_parse: NULL out");
  *out = NULL;
  if (!text && len) return alloy_error_new(ALLOY_ERR_INVALID_ARGUMENT, "alloy_air_parse: NULL text");
  alloy_error *e = alloy_registry_init();
  if (e) return e;
  parser p;
  memset(&p, 0, sizeof p);
  p.file = filename ? filename : "<air>";
  p.text = text ? text : "";
  p.len = len;
  if (!(p.g = alloy_graph_new())) return oom();
  p.st = alloy_graph_symtab(p.g);
  while (!p.err && p.next <= p.len) {
    p.bol = p.pos = p.next;
    const char *nl = memchr(p.text + p.bol, '\n', p.len - p.bol);
    p.eol = nl ? (size_t)(nl - p.text) : p.len;
    p.next = p.eol + 1;
    if (p.eol > p.bol && p.text[p.eol - 1] == '\r') p.eol--;
    p.line++;
    if (p.eol - p.bol > AIR_MAX_LINE)
      fail_at(&p, p.bol, "line longer than %d bytes", AIR_MAX_LINE);
    else
      parse_line(&p);
    alloy_arena_free(&p.scratch);
  }
  if (p.err) {
    alloy_graph_free(p.g);
    return p.err;
  }
  *out = p.g;
  return NULL;
}
