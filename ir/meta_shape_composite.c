/*
 * ir/meta_shape_composite.c: shape functions of the composite shape ops
 * that PyTorch implements from others (CompositeImplicitAutograd) and that
 * Alloy registers so that graphs holding them can be built and decomposed:
 * hstack, vstack, unflatten, the self_int / self_Tensor overloads of
 * repeat_interleave, contiguous, expand_as, type_as and einsum (with the
 * reading of its equation, shared with its decomposition through
 * ir/einsum.h).
 */
#include <stdio.h>
#include <string.h>

#include "ir/einsum.h"
#include "ir/meta.h"

static alloy_dim C(int64_t v) { return alloy_dim_const(v); }

/* torch.result_type over the items of list argument i, each taken as a
 * dimensioned tensor (hstack and vstack make every item at least 1-d). */
static alloy_dtype stacked_dtype(alloy_meta *m, int i) {
  int n = meta_tensor_count(m, i);
  alloy_dtype dt = n ? meta_tensor_at(m, i, 0)->dtype : ALLOY_F32;
  for (int k = 1; k < n; k++) {
    alloy_promo_operand ops[2] = {{ALLOY_PROMO_TENSOR, dt},
                                  {ALLOY_PROMO_TENSOR, meta_tensor_at(m, i, k)->dtype}};
    dt = alloy_result_type(ops, 2);
  }
  return dt;
}

/* hstack (param 0) / vstack (param 1): every item made at least 1-d (hstack)
 * or 2-d (vstack, a vector becoming a row), then concatenated along dim 0,
 * or along dim 1 for hstack of matrices. */
static alloy_error *meta_hvstack(alloy_meta *m) {
  int n = meta_tensor_count(m, 0);
  if (n == 0) return meta_error(m, "expected a non-empty list of Tensors");
  for (int k = 0; k < n; k++)
    if (!meta_tensor_at(m, 0, k)) return meta_error(m, "argument 'tensors': item %d is None", k);
  bool v = m->param == 1;
  alloy_dim out[ALLOY_MAX_RANK];
  int rank = 0, cat = 0;
  for (int k = 0; k < n; k++) {
    const alloy_value *t = meta_tensor_at(m, 0, k);
    alloy_dim s[ALLOY_MAX_RANK];
    int r = t->rank;
    if (r) memcpy(s, t->shape, sizeof *s * (size_t)r);
    if (v && r < 2) {
      s[1] = r ? s[0] : C(1);
      s[0] = C(1);
      r = 2;
    } else if (!v && r == 0) {
      s[0] = C(1);
      r = 1;
    }
    if (k == 0) {
      rank = r;
      cat = v || r == 1 ? 0 : 1;
      memcpy(out, s, sizeof *s * (size_t)r);
      continue;
    }
    if (r != rank)
      return meta_error(m, "Tensors must have same number of dimensions: got %d and %d", rank, r);
    for (int j = 0; j < r; j++) {
      if (j == cat) {
        out[j] = alloy_dim_add(m->st, out[j], s[j]);
      } else if (alloy_dim_eq(m->st, out[j], s[j]) == ALLOY_FALSE) {
        return meta_error(m,
                          "Sizes of tensors must match except in dimension %d for tensor "
                          "number %d in the list",
                          cat, k);
      }
    }
  }
  return meta_out_tensor(m, 0, stacked_dtype(m, 0), out, rank);
}

/* unflatten.int(dim, sizes): dim becomes sizes, one of which may be -1. */
static alloy_error *meta_unflatten(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  int64_t raw;
  int d, ns;
  alloy_dim sizes[ALLOY_MAX_RANK];
  alloy_error *e = meta_int(m, 1, &raw);
  if (!e) e = meta_wrap_dim(m, 1, raw, a->rank, &d);
  if (!e) e = meta_dims(m, 2, sizes, ALLOY_MAX_RANK, &ns);
  if (e) return e;
  if (ns == 0) return meta_error(m, "unflatten: sizes must be non-empty");
  if (a->rank == 0) return meta_error(m, "unflatten: cannot unflatten a 0-dimensional tensor");
  if (a->rank - 1 + ns > ALLOY_MAX_RANK)
    return meta_error(m, "output rank %d exceeds %d", a->rank - 1 + ns, ALLOY_MAX_RANK);
  int infer = -1;
  alloy_dim known = C(1);
  for (int k = 0; k < ns; k++) {
    if (alloy_dim_is_const(sizes[k]) && sizes[k].value == -1) {
      if (infer >= 0) return meta_error(m, "unflatten: only one dimension can be inferred");
      infer = k;
    } else {
      known = alloy_dim_mul(m->st, known, sizes[k]);
    }
  }
  alloy_dim total = a->shape[d];
  if (infer >= 0) {
    if (alloy_dim_eq(m->st, known, C(0)) == ALLOY_TRUE)
      return meta_error(m, "unflatten: the unspecified dimension size -1 is ambiguous");
    sizes[infer] = alloy_dim_floordiv(m->st, total, known);
    known = alloy_dim_mul(m->st, known, sizes[infer]);
  }
  if (alloy_dim_eq(m->st, known, total) == ALLOY_FALSE) {
    char b[128];
    meta_shape_text(sizes, ns, b, sizeof b);
    return meta_error(m,
                      "unflatten: Provided sizes %s don't multiply up to the size of dim "
                      "%lld in the input tensor",
                      b, (long long)raw);
  }
  alloy_dim out[ALLOY_MAX_RANK];
  int r = 0;
  for (int k = 0; k < d; k++) out[r++] = a->shape[k];
  for (int k = 0; k < ns; k++) out[r++] = sizes[k];
  for (int k = d + 1; k < a->rank; k++) out[r++] = a->shape[k];
  alloy_error *se = meta_sym_check(m);
  return se ? se : meta_out_tensor(m, 0, a->dtype, out, r);
}

/* repeat_interleave.self_int (param 0) / .self_Tensor (param 1)(repeats,
 * dim, output_size): without dim self is flattened first. The repeated
 * dim's new length is output_size when given; else repeats * size for an
 * int, and a data-dependent size for a tensor of repeats. */
static alloy_error *meta_repeat_interleave_self(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  alloy_dim out[ALLOY_MAX_RANK];
  int r = a->rank, d = 0;
  if (meta_is_none(m, 2)) {
    out[0] = meta_numel(m, a->shape, a->rank);
    r = 1;
  } else {
    int64_t raw;
    alloy_error *e = meta_int(m, 2, &raw);
    if (!e) e = meta_wrap_dim(m, 2, raw, a->rank, &d);
    if (e) return e;
    if (r) memcpy(out, a->shape, sizeof *out * (size_t)r);
    if (r == 0) out[r++] = C(1);
  }
  if (m->param == 1) {
    const alloy_value *rep = meta_tensor(m, 1);
    if (rep->rank > 1) return meta_error(m, "repeat_interleave only accept 1D vector as repeat");
    if (rep->dtype != ALLOY_I64 && rep->dtype != ALLOY_I32)
      return meta_error(m, "repeats has to be Long or Int tensor, got %s",
                        alloy_dtype_name(rep->dtype));
  } else if (alloy_dim_lt(m->st, meta_dim(m, 1), C(0)) == ALLOY_TRUE) {
    return meta_error(m, "repeats can not be negative");
  }
  if (!meta_is_none(m, 3)) out[d] = meta_dim(m, 3);
  else if (m->param == 0) out[d] = alloy_dim_mul(m->st, out[d], meta_dim(m, 1));
  else out[d] = meta_unbacked(m);
  alloy_error *se = meta_sym_check(m);
  return se ? se : meta_out_tensor(m, 0, a->dtype, out, r);
}

/* contiguous: self's type (Alloy's values carry no strides to change). */
static alloy_error *meta_contiguous(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0);
  return meta_out_like(m, 0, a, a->dtype);
}

/* type_as(other): self converted to other's dtype. */
static alloy_error *meta_type_as(alloy_meta *m) {
  return meta_out_like(m, 0, meta_tensor(m, 0), meta_tensor(m, 1)->dtype);
}

/* expand_as(other): self broadcast to other's shape, which it must fit. */
static alloy_error *meta_expand_as(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0), *o = meta_tensor(m, 1);
  char sa[128], so[128];
  bool ok = a->rank <= o->rank;
  for (int k = 0; ok && k < a->rank; k++) {
    alloy_dim s = a->shape[a->rank - 1 - k], t = o->shape[o->rank - 1 - k];
    ok = (alloy_dim_is_const(s) && s.value == 1) || alloy_dim_eq(m->st, s, t) != ALLOY_FALSE;
  }
  if (!ok)
    return meta_error(m,
                      "The expanded size of the tensor must match the existing size: "
                      "cannot expand %s to %s",
                      meta_shape_text(a->shape, a->rank, sa, sizeof sa),
                      meta_shape_text(o->shape, o->rank, so, sizeof so));
  return meta_out_tensor(m, 0, a->dtype, o->shape, o->rank);
}

/* --- einsum ----------------------------------------------------------------*/

static int letter_id(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + c - 'a';
  return -1;
}

/* One side of the equation: its letters, and where an ellipsis stands (-1
 * when none). */
typedef struct term {
  signed char lab[ALLOY_MAX_RANK];
  int n, ell;
} term;

static const char *read_term(const char **p, const char *end, term *t) {
  t->n = 0;
  t->ell = -1;
  for (const char *s = *p; s < end; s++) {
    if (*s == ' ') continue;
    if (*s == ',' || *s == '-') {
      *p = s;
      return NULL;
    }
    if (*s == '.') {
      if (end - s < 3 || s[1] != '.' || s[2] != '.' || t->ell >= 0)
        return "einsum(): found '.' for operand that is not part of any ellipsis";
      t->ell = t->n;
      s += 2;
      continue;
    }
    int id = letter_id(*s);
    if (id < 0) return "einsum(): invalid subscript given in the equation string";
    if (t->n == ALLOY_MAX_RANK) return "einsum(): too many subscripts for one operand";
    t->lab[t->n++] = (signed char)id;
  }
  *p = end;
  return NULL;
}

const char *alloy_einsum_parse(const char *eq, int nops, const int *ranks, alloy_einsum *e,
                               char *err, size_t cap) {
  if (nops < 1) return "einsum(): must provide at least one operand";
  if (nops > ALLOY_EINSUM_MAX_OPS) return "einsum(): too many operands";
  const char *arrow = strstr(eq, "->"), *end = arrow ? arrow : eq + strlen(eq);
  term t[ALLOY_EINSUM_MAX_OPS];
  const char *p = eq, *msg;
  int nterms = 0, widest = 0, count[ALLOY_EINSUM_ELLIPSIS] = {0};
  for (;;) {
    if (nterms == nops) {
      snprintf(err, cap, "einsum(): more operands were provided than specified in the equation");
      return err;
    }
    if ((msg = read_term(&p, end, &t[nterms]))) return msg;
    nterms++;
    if (p >= end) break;
    if (*p != ',') return "einsum(): invalid subscript given in the equation string";
    p++;
  }
  if (nterms != nops) {
    snprintf(err, cap, "einsum(): %d operands were provided but the equation names %d", nops,
             nterms);
    return err;
  }
  e->nops = nops;
  for (int k = 0; k < nops; k++) {
    int width = ranks[k] - t[k].n;
    if (t[k].ell < 0 ? width != 0 : width < 0) {
      snprintf(err, cap,
               "einsum(): the number of subscripts in the equation (%d) does not match the "
               "number of dimensions (%d) for operand %d%s",
               t[k].n, ranks[k], k, t[k].ell < 0 ? " and no ellipsis was given" : "");
      return err;
    }
    if (width > widest) widest = width;
    for (int j = 0; j < t[k].n; j++) count[t[k].lab[j]]++;
  }
  for (int k = 0; k < nops; k++) {
    int width = ranks[k] - t[k].n, r = 0;
    for (int j = 0; j <= t[k].n; j++) {
      if (j == t[k].ell)
        for (int i = 0; i < width; i++)
          e->label[k][r++] = (signed char)(ALLOY_EINSUM_ELLIPSIS + widest - width + i);
      if (j < t[k].n) e->label[k][r++] = t[k].lab[j];
    }
    e->rank[k] = r;
  }
  int r = 0;
  if (!arrow) {
    for (int i = 0; i < widest; i++) e->out[r++] = (signed char)(ALLOY_EINSUM_ELLIPSIS + i);
    for (int id = 0; id < ALLOY_EINSUM_ELLIPSIS; id++)
      if (count[id] == 1) {
        if (r == ALLOY_MAX_RANK) return "einsum(): the output has too many dimensions";
        e->out[r++] = (signed char)id;
      }
  } else {
    term o;
    p = arrow + 2;
    if ((msg = read_term(&p, arrow + strlen(arrow), &o))) return msg;
    if (p != arrow + strlen(arrow)) return "einsum(): invalid subscript given in the equation string";
    bool seen[ALLOY_EINSUM_ELLIPSIS] = {false};
    for (int j = 0; j <= o.n; j++) {
      if (j == o.ell)
        for (int i = 0; i < widest; i++) {
          if (r == ALLOY_MAX_RANK) return "einsum(): the output has too many dimensions";
          e->out[r++] = (signed char)(ALLOY_EINSUM_ELLIPSIS + i);
        }
      if (j == o.n) break;
      int id = o.lab[j];
      if (!count[id]) {
        snprintf(err, cap,
                 "einsum(): output subscript %c does not appear in the equation for any input "
                 "operand",
                 id < 26 ? 'A' + id : 'a' + id - 26);
        return err;
      }
      if (seen[id]) {
        snprintf(err, cap, "einsum(): output subscript %c appears more than once in the output",
                 id < 26 ? 'A' + id : 'a' + id - 26);
        return err;
      }
      seen[id] = true;
      if (r == ALLOY_MAX_RANK) return "einsum(): the output has too many dimensions";
      e->out[r++] = (signed char)id;
    }
  }
  e->out_rank = r;
  return NULL;
}

/* einsum(equation, tensors): each output label takes its operands' size,
 * a size 1 broadcasting against the others. */
static alloy_error *meta_einsum(alloy_meta *m) {
  const char *eq = meta_str(m, 0);
  int n = meta_tensor_count(m, 1), ranks[ALLOY_EINSUM_MAX_OPS];
  if (!eq) return meta_error(m, "einsum(): the equation is None");
  for (int k = 0; k < n && k < ALLOY_EINSUM_MAX_OPS; k++) {
    if (!meta_tensor_at(m, 1, k)) return meta_error(m, "einsum(): operand %d is None", k);
    ranks[k] = meta_tensor_at(m, 1, k)->rank;
  }
  alloy_einsum e;
  char err[256];
  const char *msg = alloy_einsum_parse(eq, n, ranks, &e, err, sizeof err);
  if (msg) return meta_error(m, "%s", msg);
  const alloy_value *first = meta_tensor_at(m, 1, 0);
  alloy_dim out[ALLOY_MAX_RANK];
  for (int j = 0; j < e.out_rank; j++) {
    bool found = false;
    out[j] = C(1);
    for (int k = 0; k < n; k++) {
      const alloy_value *t = meta_tensor_at(m, 1, k);
      if (t->dtype != first->dtype)
        return meta_error(m, "einsum(): expected scalar type %s but found %s",
                          alloy_dtype_name(first->dtype), alloy_dtype_name(t->dtype));
      for (int i = 0; i < e.rank[k]; i++) {
        if (e.label[k][i] != e.out[j]) continue;
        alloy_dim s = t->shape[i];
        if (!found || (alloy_dim_is_const(out[j]) && out[j].value == 1)) out[j] = s;
        else if (!(alloy_dim_is_const(s) && s.value == 1) &&
                 alloy_dim_eq(m->st, out[j], s) == ALLOY_FALSE)
          return meta_error(m, "einsum(): operands do not broadcast for subscript %d", j);
        found = true;
      }
    }
  }
  return meta_out_tensor(m, 0, first->dtype, out, e.out_rank);
}

const alloy_meta_entry alloy_meta_shape_composite[] = {
    {"aten.hstack.default", meta_hvstack, 0},
    {"aten.vstack.default", meta_hvstack, 1},
    {"aten.unflatten.int", meta_unflatten, 0},
    {"aten.repeat_interleave.self_int", meta_repeat_interleave_self, 0},
    {"aten.repeat_interleave.self_Tensor", meta_repeat_interleave_self, 1},
    {"aten.einsum.default", meta_einsum, 0},
    {"aten.contiguous.default", meta_contiguous, 0},
    {"aten.type_as.default", meta_type_as, 0},
    {"aten.expand_as.default", meta_expand_as, 0},
    {NULL, NULL, 0},
};
