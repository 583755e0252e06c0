/*
 * sdk/kernel_table/kt_signature.c: the two little languages of a kernel row
 * (alloy/kernel_table.h defines them) and the matching of rows to nodes.
 *
 * A signature string "void(out0, in0, in1, arg(alpha):f32, numel(out0))" is
 * read once per node at compile time into a kt_sig, the call plan that
 * kt_execute.c turns into an ffi_cif; the same reader validates every row
 * when the plugin loads, so a typo is reported at load, never at run time.
 * A dtype constraint ("*", "f32", "f32,i64->f32") is matched in place
 * against a node's operand dtypes.
 *
 * Matching decides claims: a row runs a node when its op is the node's, its
 * constraint accepts the operands' dtypes, and every parameter of its
 * signature can be bound (the operands exist, size(X, d) is in range, the
 * named scalar argument exists and converts to the type asked without
 * losing meaning). Claim and compile share it, so a claimed node always
 * compiles.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdk/kernel_table/kt_internal.h"

/* ---- dtypes ---------------------------------------------------------- */

static const struct {
  const char *name;
  size_t size;
} kt_dtypes[ALLOY_DTYPE_COUNT] = {
    [ALLOY_BOOL] = {"bool", 1}, [ALLOY_U8] = {"u8", 1},     [ALLOY_I8] = {"i8", 1},
    [ALLOY_I16] = {"i16", 2},   [ALLOY_I32] = {"i32", 4},   [ALLOY_I64] = {"i64", 8},
    [ALLOY_F16] = {"f16", 2},   [ALLOY_BF16] = {"bf16", 2}, [ALLOY_F32] = {"f32", 4},
    [ALLOY_F64] = {"f64", 8},   [ALLOY_C64] = {"c64", 8},   [ALLOY_C128] = {"c128", 16},
};

size_t alloy_kt_dtype_size(alloy_dtype t) {
  return (unsigned)t < ALLOY_DTYPE_COUNT ? kt_dtypes[t].size : 0;
}

const char *alloy_kt_dtype_name(alloy_dtype t) {
  return (unsigned)t < ALLOY_DTYPE_COUNT ? kt_dtypes[t].name : "?";
}

/* ---- dtype constraints ------------------------------------------------ */

/* One token of a constraint: a dtype short name, or "*" (-1). */
static bool kt_dtype_token(const char *s, size_t n, int *out) {
  if (n == 1 && s[0] == '*') return *out = -1, true;
  for (int t = 0; t < ALLOY_DTYPE_COUNT; t++)
    if (strlen(kt_dtypes[t].name) == n && memcmp(kt_dtypes[t].name, s, n) == 0)
      return *out = t, true;
  return false;
}

static const char *kt_skip_space(const char *p, const char *end) {
  while (p < end && isspace((unsigned char)*p)) p++;
  return p;
}

/* Walks the comma-separated tokens of [p, end). With want != NULL each
 * token must accept want[i]; *count receives the number of tokens. An
 * empty range is an empty list. false on a malformed or refused token. */
static bool kt_dtype_list(const char *p, const char *end, const alloy_dtype *want,
                          int nwant, int *count) {
  int n = 0;
  p = kt_skip_space(p, end);
  if (p == end) return *count = 0, true;
  for (;;) {
    p = kt_skip_space(p, end);
    const char *tok = p;
    while (p < end && *p != ',' && !isspace((unsigned char)*p)) p++;
    int t;
    if (!kt_dtype_token(tok, (size_t)(p - tok), &t)) return false;
    if (want && (n >= nwant || (t >= 0 && (alloy_dtype)t != want[n]))) return false;
    n++;
    p = kt_skip_space(p, end);
    if (p == end) break;
    if (*p++ != ',') return false;
  }
  *count = n;
  return true;
}

bool alloy_kt_dtypes_check(const char *text, int *nin, int *nout, char *err, size_t cap) {
  *nin = *nout = -1;
  if (!text) return snprintf(err, cap, "no dtype constraint (write \"*\" to accept any)"), false;
  const char *end = text + strlen(text), *arrow = strstr(text, "->");
  if (!arrow) {
    int n;
    if (kt_dtype_list(text, end, NULL, 0, &n) && n == 1) return true;
    snprintf(err, cap, "dtype constraint \"%s\": expected \"*\", one dtype (f32, i64, bool, ...) "
             "or one per operand (\"f32,f32->f32\")", text);
    return false;
  }
  if (!kt_dtype_list(text, arrow, NULL, 0, nin) || !kt_dtype_list(arrow + 2, end, NULL, 0, nout)) {
    snprintf(err, cap, "dtype constraint \"%s\": expected comma-separated dtypes (f32, i64, bool, "
             "..., or *) on each side of \"->\"", text);
    return false;
  }
  return true;
}

bool alloy_kt_dtypes_accept(const char *text, const alloy_dtype *in, int nin,
                            const alloy_dtype *out, int nout) {
  const char *end = text + strlen(text), *arrow = strstr(text, "->");
  if (!arrow) {
    const char *p = kt_skip_space(text, end), *q = end;
    while (q > p && isspace((unsigned char)q[-1])) q--;
    int t;
    if (!kt_dtype_token(p, (size_t)(q - p), &t)) return false;
    if (t < 0) return true;
    for (int i = 0; i < nin; i++)
      if (in[i] != (alloy_dtype)t) return false;
    for (int i = 0; i < nout; i++)
      if (out[i] != (alloy_dtype)t) return false;
    return true;
  }
  int n;
  return kt_dtype_list(text, arrow, in, nin, &n) && n == nin &&
         kt_dtype_list(arrow + 2, end, out, nout, &n) && n == nout;
}

/* ---- signatures ------------------------------------------------------- */

typedef struct kt_cursor {
  const char *text, *p;
  char *err;
  size_t cap;
} kt_cursor;

static bool kt_expected(kt_cursor *c, const char *what) {
  snprintf(c->err, c->cap, "signature \"%s\": expected %s at column %d", c->text, what,
           (int)(c->p - c->text) + 1);
  return false;
}

static void kt_ws(kt_cursor *c) {
  while (isspace((unsigned char)*c->p)) c->p++;
}

static bool kt_char(kt_cursor *c, char ch) {
  kt_ws(c);
  if (*c->p != ch) return false;
  c->p++;
  return true;
}

/* An identifier [A-Za-z_][A-Za-z0-9_]*; length 0 when there is none. */
static size_t kt_word(kt_cursor *c, const char **w) {
  kt_ws(c);
  const char *s = c->p;
  if (!isalpha((unsigned char)*s) && *s != '_') return 0;
  while (isalnum((unsigned char)*c->p) || *c->p == '_') c->p++;
  *w = s;
  return (size_t)(c->p - s);
}

static bool kt_word_is(const char *w, size_t n, const char *lit) {
  return strlen(lit) == n && memcmp(w, lit, n) == 0;
}

/* inK or outK, K decimal without sign, at most 65535. */
static bool kt_operand(kt_cursor *c, kt_param *p) {
  const char *w;
  const char *at = c->p;
  size_t n = kt_word(c, &w);
  size_t prefix = n > 3 && memcmp(w, "out", 3) == 0 ? 3 : n > 2 && memcmp(w, "in", 2) == 0 ? 2 : 0;
  long k = 0;
  for (size_t i = prefix; prefix && i < n; i++) {
    if (!isdigit((unsigned char)w[i]) || k > 65535) {
      prefix = 0;
      break;
    }
    k = k * 10 + (w[i] - '0');
  }
  if (!prefix || k > 65535) {
    c->p = at;
    kt_ws(c);
    return kt_expected(c, "an operand (in0, in1, ..., out0, ...)");
  }
  p->is_out = prefix == 3;
  p->index = (int32_t)k;
  return true;
}

static bool kt_integer(kt_cursor *c, int32_t *out) {
  kt_ws(c);
  const char *s = c->p;
  bool neg = *c->p == '-';
  if (neg) c->p++;
  if (!isdigit((unsigned char)*c->p)) {
    c->p = s;
    return kt_expected(c, "an integer dimension");
  }
  long v = 0;
  while (isdigit((unsigned char)*c->p)) {
    v = v * 10 + (*c->p++ - '0');
    if (v > KT_MAX_RANK) {
      c->p = s;
      return kt_expected(c, "a dimension within the largest rank (16)");
    }
  }
  *out = (int32_t)(neg ? -v : v);
  return true;
}

static const struct {
  const char *name;
  kt_scalar type;
} kt_scalar_names[] = {
    {"i32", KT_S_I32}, {"i64", KT_S_I64}, {"f32", KT_S_F32}, {"f64", KT_S_F64}, {"bool", KT_S_BOOL},
};

/* The parameter forms: what follows the keyword. */
enum { KT_FORM_BARE, KT_FORM_X, KT_FORM_X_D, KT_FORM_NAME_T };

static const struct {
  const char *word;
  kt_param_kind kind;
  int form;
} kt_param_words[] = {
    {"numel", KT_P_NUMEL, KT_FORM_X},       {"rank", KT_P_RANK, KT_FORM_X},
    {"size", KT_P_SIZE, KT_FORM_X_D},       {"sizes", KT_P_SIZES, KT_FORM_X},
    {"strides", KT_P_STRIDES, KT_FORM_X},   {"bstrides", KT_P_BSTRIDES, KT_FORM_X},
    {"arg", KT_P_ARG, KT_FORM_NAME_T},      {"call", KT_P_CALL, KT_FORM_BARE},
};

static bool kt_arg_form(kt_cursor *c, kt_param *p) {
  const char *w;
  size_t n = kt_word(c, &w);
  if (!n) return kt_expected(c, "an argument name");
  p->name = w;
  p->name_len = n;
  if (!kt_char(c, ')')) return kt_expected(c, "')'");
  if (!kt_char(c, ':')) return kt_expected(c, "':' and a type (i32 i64 f32 f64 bool)");
  n = kt_word(c, &w);
  for (size_t i = 0; i < sizeof kt_scalar_names / sizeof kt_scalar_names[0]; i++)
    if (n && kt_word_is(w, n, kt_scalar_names[i].name)) {
      p->scalar = (uint8_t)kt_scalar_names[i].type;
      return true;
    }
  if (n) c->p = w;
  return kt_expected(c, "a scalar type (i32 i64 f32 f64 bool)");
}

static bool kt_param_parse(kt_cursor *c, kt_param *p) {
  memset(p, 0, sizeof *p);
  kt_ws(c);
  const char *at = c->p, *w;
  size_t n = kt_word(c, &w);
  for (size_t i = 0; n && i < sizeof kt_param_words / sizeof kt_param_words[0]; i++) {
    if (!kt_word_is(w, n, kt_param_words[i].word)) continue;
    p->kind = (uint8_t)kt_param_words[i].kind;
    int form = kt_param_words[i].form;
    if (form == KT_FORM_BARE) return true;
    if (!kt_char(c, '(')) return kt_expected(c, "'('");
    if (form == KT_FORM_NAME_T) return kt_arg_form(c, p);
    if (!kt_operand(c, p)) return false;
    if (form == KT_FORM_X_D) {
      if (!kt_char(c, ',')) return kt_expected(c, "',' and a dimension");
      if (!kt_integer(c, &p->dim)) return false;
    }
    return kt_char(c, ')') || kt_expected(c, "')'");
  }
  /* Not a keyword: an operand's data. */
  c->p = at;
  p->kind = KT_P_DATA;
  if (kt_operand(c, p)) return true;
  return kt_expected(c, "a parameter: inK, outK, numel(X), rank(X), size(X, d), sizes(X), "
                        "strides(X), bstrides(X), arg(NAME):T or call");
}

bool alloy_kt_sig_parse(const char *text, kt_sig *sig, char *err, size_t cap) {
  memset(sig, 0, sizeof *sig);
  if (!text) return snprintf(err, cap, "no signature"), false;
  kt_cursor c = {text, text, err, cap};
  const char *w;
  size_t n = kt_word(&c, &w);
  if (n && kt_word_is(w, n, "int")) sig->returns_int = true;
  else if (!n || !kt_word_is(w, n, "void")) {
    c.p = n ? w : c.p;
    return kt_expected(&c, "the return type void or int");
  }
  if (!kt_char(&c, '(')) return kt_expected(&c, "'('");
  if (!kt_char(&c, ')')) {
    do {
      if (sig->nparams == KT_MAX_PARAMS) return kt_expected(&c, "at most 32 parameters");
      if (!kt_param_parse(&c, &sig->params[sig->nparams++])) return false;
    } while (kt_char(&c, ','));
    if (!kt_char(&c, ')')) return kt_expected(&c, "',' or ')'");
  }
  kt_ws(&c);
  if (*c.p) return kt_expected(&c, "the end of the signature");
  return true;
}

/* What each parameter kind tells about its operand. */
static const int kt_kind_flags[] = {
    [KT_P_DATA] = KT_F_USED,
    [KT_P_NUMEL] = KT_F_USED | KT_F_SHAPE,
    [KT_P_RANK] = KT_F_USED | KT_F_SHAPE,
    [KT_P_SIZE] = KT_F_USED | KT_F_SHAPE,
    [KT_P_SIZES] = KT_F_USED | KT_F_SHAPE,
    [KT_P_STRIDES] = KT_F_USED | KT_F_SHAPE | KT_F_STRIDES,
    [KT_P_BSTRIDES] = KT_F_USED | KT_F_SHAPE | KT_F_BSTRIDES,
    [KT_P_ARG] = 0,
    [KT_P_CALL] = 0,
};

static bool kt_has_operand(kt_param_kind k) { return k != KT_P_ARG && k != KT_P_CALL; }

int alloy_kt_sig_operand_flags(const kt_sig *sig, bool is_out, int index) {
  int f = 0;
  for (int i = 0; i < sig->nparams; i++) {
    const kt_param *p = &sig->params[i];
    /* `call` hands every operand over with its sizes. */
    if (p->kind == KT_P_CALL) f |= KT_F_USED | KT_F_SHAPE;
    else if (kt_has_operand(p->kind) && (bool)p->is_out == is_out && p->index == index)
      f |= kt_kind_flags[p->kind];
  }
  return f;
}

int alloy_kt_sig_max_operand(const kt_sig *sig, bool is_out) {
  int m = -1;
  for (int i = 0; i < sig->nparams; i++) {
    const kt_param *p = &sig->params[i];
    if (kt_has_operand(p->kind) && (bool)p->is_out == is_out && p->index > m) m = p->index;
  }
  return m;
}

/* ---- operands ----------------------------------------------------------- */

static bool kt_push(kt_operands *ops, int *cap, const alloy_value *v, alloy_dtype t, int arg,
                    int item) {
  int n = ops->nin + ops->nout;
  if (n == *cap) {
    int ncap = *cap ? *cap * 2 : 8;
    const alloy_value **nv = realloc(ops->values, (size_t)ncap * sizeof *nv);
    if (!nv) return false;
    ops->values = nv;
    alloy_dtype *nt = realloc(ops->dtypes, (size_t)ncap * sizeof *nt);
    if (!nt) return false;
    ops->dtypes = nt;
    int32_t *na = realloc(ops->arg, (size_t)ncap * sizeof *na);
    if (!na) return false;
    ops->arg = na;
    int32_t *ni = realloc(ops->item, (size_t)ncap * sizeof *ni);
    if (!ni) return false;
    ops->item = ni;
    *cap = ncap;
  }
  ops->values[n] = v;
  ops->dtypes[n] = t;
  ops->arg[n] = arg;
  ops->item[n] = item;
  return true;
}

/* A tensor value of the graph, or NULL (literals, None, scalar values). */
static const alloy_value *kt_tensor_arg(const alloy_host_api *h, const alloy_arg *a) {
  if (!a || h->arg_type(a) != ALLOY_ARG_TYPE_VALUE) return NULL;
  const alloy_value *v = h->arg_value(a);
  return v && h->value_kind(v) == 0 ? v : NULL;
}

bool alloy_kt_operands(const alloy_host_api *h, const alloy_node *n, kt_operands *ops) {
  memset(ops, 0, sizeof *ops);
  int cap = 0;
  for (int i = 0; i < h->node_num_args(n); i++) {
    const alloy_arg *a = h->node_arg(n, i);
    bool list = a && h->arg_type(a) == ALLOY_ARG_TYPE_LIST;
    int count = list ? h->arg_list_size(a) : 1;
    for (int k = 0; k < count; k++) {
      const alloy_value *v = kt_tensor_arg(h, list ? h->arg_list_item(a, k) : a);
      if (!v) continue;
      if (!kt_push(ops, &cap, v, h->value_dtype(v), i, list ? k : -1)) goto oom;
      ops->nin++;
    }
  }
  for (int k = 0; k < h->node_num_outputs(n); k++) {
    const alloy_value *v = h->node_output(n, k);
    if (!kt_push(ops, &cap, v, h->value_dtype(v), -1, -1)) goto oom;
    ops->nout++;
  }
  /* Never NULL arrays, even for a node without operands. */
  if (!ops->values && !kt_push(ops, &cap, NULL, ALLOY_F32, -1, -1)) goto oom;
  return true;
oom:
  alloy_kt_operands_free(ops);
  return false;
}

void alloy_kt_operands_free(kt_operands *ops) {
  free(ops->values);
  free(ops->dtypes);
  free(ops->arg);
  free(ops->item);
  memset(ops, 0, sizeof *ops);
}

int alloy_kt_find_arg(const alloy_host_api *h, const alloy_node *n, const char *name,
                      size_t name_len) {
  for (int i = 0; i < h->node_num_args(n); i++) {
    const char *an = h->node_arg_name(n, i);
    if (an && strlen(an) == name_len && memcmp(an, name, name_len) == 0) return i;
  }
  return -1;
}

/* ---- matching ------------------------------------------------------------ */

/* Which scalar types an argument of each kind may be passed as: a float is
 * never truncated into an integer parameter. */
static bool kt_arg_converts(const alloy_host_api *h, const alloy_arg *a, kt_scalar t,
                            const char **what) {
  bool to_float = t == KT_S_F32 || t == KT_S_F64;
  switch (h->arg_type(a)) {
    case ALLOY_ARG_TYPE_INT: {
      int64_t v;
      if (!h->arg_int(a, &v)) return *what = "a symbolic integer", false;
      if (t == KT_S_I32 && (v < INT32_MIN || v > INT32_MAX)) return *what = "an integer beyond i32", false;
      return true;
    }
    case ALLOY_ARG_TYPE_FLOAT: return *what = "a float", to_float;
    case ALLOY_ARG_TYPE_BOOL: return true;
    case ALLOY_ARG_TYPE_VALUE: {
      const alloy_value *v = h->arg_value(a);
      int kind = v ? h->value_kind(v) : 0;
      if (kind == 0) return *what = "a tensor", false;
      return *what = "a float value", kind != 2 || to_float;
    }
    case ALLOY_ARG_TYPE_NONE: return *what = "None", false;
    default: return *what = "not a number", false;
  }
}

static bool kt_bindable(const alloy_host_api *h, const alloy_node *n, const kt_operands *ops,
                        const kt_sig *sig, char *why, size_t cap) {
  for (int k = 0; k < ops->nin + ops->nout; k++)
    if (h->value_rank(ops->values[k]) > KT_MAX_RANK)
      return snprintf(why, cap, "an operand has rank above %d", KT_MAX_RANK), false;
  for (int i = 0; i < sig->nparams; i++) {
    const kt_param *p = &sig->params[i];
    if (p->kind == KT_P_ARG) {
      int ai = alloy_kt_find_arg(h, n, p->name, p->name_len);
      const char *what = "";
      if (ai < 0)
        return snprintf(why, cap, "the op has no argument called %.*s", (int)p->name_len, p->name),
               false;
      if (!kt_arg_converts(h, h->node_arg(n, ai), (kt_scalar)p->scalar, &what))
        return snprintf(why, cap, "arg(%.*s) is %s, which the kernel's %s cannot take",
                        (int)p->name_len, p->name, what, kt_scalar_names[p->scalar].name),
               false;
      continue;
    }
    if (!kt_has_operand((kt_param_kind)p->kind)) continue;
    int count = p->is_out ? ops->nout : ops->nin;
    if (p->index >= count)
      return snprintf(why, cap, "the kernel asks for %s%d but the node has %d tensor %s",
                      p->is_out ? "out" : "in", p->index, count, p->is_out ? "outputs" : "inputs"),
             false;
    const alloy_value *x = ops->values[p->is_out ? ops->nin + p->index : p->index];
    int rank = h->value_rank(x);
    if (p->kind == KT_P_SIZE && (p->dim >= rank || p->dim < -rank))
      return snprintf(why, cap, "size(%s%d, %d) is out of range for rank %d",
                      p->is_out ? "out" : "in", p->index, p->dim, rank),
             false;
    if (p->kind == KT_P_BSTRIDES &&
        (ops->nout == 0 || rank > h->value_rank(ops->values[ops->nin])))
      return snprintf(why, cap, "bstrides(%s%d) needs an out0 of at least its rank",
                      p->is_out ? "out" : "in", p->index),
             false;
  }
  return true;
}

static void kt_dtype_text(const kt_operands *ops, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (int k = 0; k < ops->nin + ops->nout && len < cap; k++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%s", k == ops->nin ? "->" : k ? "," : "",
                            alloy_kt_dtype_name(ops->dtypes[k]));
  if (ops->nout == 0 && len < cap) snprintf(buf + len, cap - len, "->");
}

int alloy_kt_match(const alloy_host_api *h, const alloy_kernel_table *t, const alloy_node *n,
                   const kt_operands *ops, kt_sig *sig, char *why, size_t cap) {
  char scratch[256];
  if (!why) why = scratch, cap = sizeof scratch;
  const char *op = h->node_op_name(n);
  snprintf(why, cap, "no kernel row for %s", op ? op : "(unnamed op)");
  for (int r = 0; op && r < t->count; r++) {
    const alloy_kernel *k = &t->kernels[r];
    if (strcmp(k->op, op) != 0) continue;
    if (!alloy_kt_dtypes_accept(k->dtypes, ops->dtypes, ops->nin, ops->dtypes + ops->nin, ops->nout)) {
      char dt[128];
      kt_dtype_text(ops, dt, sizeof dt);
      snprintf(why, cap, "operand dtypes %s not accepted by \"%s\"", dt, k->dtypes);
      continue;
    }
    char err[256];
    if (!alloy_kt_sig_parse(k->signature, sig, err, sizeof err)) { /* checked at load */
      snprintf(why, cap, "%s", err);
      continue;
    }
    if (kt_bindable(h, n, ops, sig, why, cap)) return r;
  }
  return -1;
}
