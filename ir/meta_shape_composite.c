/*
 * ir/meta_shape_composite.c: shape functions of the composite shape ops
 * that PyTorch implements from others (CompositeImplicitAutograd) and that
 * Alloy registers so that graphs holding them can be built and decomposed:
 * the joins (hstack, vstack, column_stack, dstack, meshgrid,
 * cartesian_prod, combinations, pad_sequence, flatten_dense_tensors and
 * unflatten_dense_tensors), unflatten, the self_int /
 * self_Tensor overloads of repeat_interleave, contiguous, expand_as,
 * type_as, and the products einsum (with the reading of its equation,
 * shared with its decomposition through ir/einsum.h), tensordot, inner,
 * outer and kron. The composite views are in ir/meta_views.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/einsum.h"
#include "ir/meta.h"
#include "ir/meta_alias.h"

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

/* --- more joins ------------------------------------------------------------------*/

/* A list argument of the values vals[0..n) (items borrowed). */
static alloy_arg values_list(alloy_arg *items, alloy_value *vals, int n) {
  for (int k = 0; k < n; k++) items[k] = alloy_arg_value(&vals[k]);
  return alloy_arg_list(items, n);
}

/* The items of list argument 0, each a tensor, copied into vals (whose
 * shapes live in shapes, ALLOY_MAX_RANK per item) so that a join can
 * reshape them; a non-empty list is required (msg names the op). */
static alloy_error *list_copies(alloy_meta *m, const char *msg, alloy_value **vals,
                                alloy_dim **shapes, int *n) {
  *n = meta_tensor_count(m, 0);
  if (*n == 0) return meta_error(m, "%s", msg);
  size_t count = (size_t)(*n > 0 ? *n : 1);
  *vals = calloc(count, sizeof **vals);
  *shapes = calloc(count * ALLOY_MAX_RANK, sizeof **shapes);
  if (!*vals || !*shapes) return alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  for (int k = 0; k < *n; k++) {
    const alloy_value *t = meta_tensor_at(m, 0, k);
    if (!t) return meta_error(m, "argument 'tensors': item %d is None", k);
    (*vals)[k] = *t;
    (*vals)[k].shape = *shapes + (size_t)k * ALLOY_MAX_RANK;
    (*vals)[k].strides = NULL;
    if (t->rank) memcpy((*vals)[k].shape, t->shape, sizeof *t->shape * (size_t)t->rank);
  }
  return NULL;
}

/* column_stack (param 0): every item of at most 1 dim becomes a column
 * [numel, 1], then hstack; dstack (param 1): every item made at least 3-d
 * ([n] -> [1, n, 1], [a, b] -> [a, b, 1]), then cat along dim 2. */
static alloy_error *meta_column_dstack(alloy_meta *m) {
  alloy_value *vals = NULL;
  alloy_dim *shapes = NULL;
  int n;
  bool d = m->param == 1;
  alloy_error *e = list_copies(m, d ? "dstack expects a non-empty TensorList"
                                    : "column_stack expects a non-empty TensorList",
                               &vals, &shapes, &n);
  alloy_arg *items = e ? NULL : malloc(sizeof *items * (size_t)(n > 0 ? n : 1));
  if (!e && !items) e = alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  for (int k = 0; k < n && !e; k++) {
    alloy_value *v = &vals[k];
    if (!d && v->rank <= 1) {
      v->shape[0] = meta_numel(m, v->shape, v->rank);
      v->shape[1] = C(1);
      v->rank = 2;
    } else if (d && v->rank < 3) {
      alloy_dim a = v->rank ? v->shape[0] : C(1), b = v->rank == 2 ? v->shape[1] : C(1);
      if (v->rank == 1) b = a, a = C(1);
      v->shape[0] = a;
      v->shape[1] = b;
      v->shape[2] = C(1);
      v->rank = 3;
    }
  }
  if (!e) {
    alloy_arg args[2] = {values_list(items, vals, n), alloy_arg_int(2)};
    e = meta_as_op(m, d ? "aten.cat.default" : "aten.hstack.default", args, d ? 2 : 1, 0);
  }
  free(items);
  free(vals);
  free(shapes);
  return e;
}

/* meshgrid(tensors) and meshgrid.indexing(tensors, indexing): 0-d and 1-d
 * tensors of one dtype; every output has the shape of their lengths, the
 * first two swapped for "xy" indexing. */
static alloy_error *meta_meshgrid(alloy_meta *m) {
  int n = meta_tensor_count(m, 0);
  if (n == 0) return meta_error(m, "meshgrid expects a non-empty TensorList");
  const char *ix = m->param ? meta_str(m, 1) : "ij";
  if (!ix || (strcmp(ix, "ij") && strcmp(ix, "xy")))
    return meta_error(m, "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: %s",
                      ix ? ix : "None");
  if (n > ALLOY_MAX_RANK) return meta_error(m, "meshgrid: %d tensors give more than %d dims", n, ALLOY_MAX_RANK);
  alloy_dim shape[ALLOY_MAX_RANK];
  const alloy_value *first = meta_tensor_at(m, 0, 0);
  for (int k = 0; k < n; k++) {
    const alloy_value *t = meta_tensor_at(m, 0, k);
    if (!t) return meta_error(m, "argument 'tensors': item %d is None", k);
    if (t->rank > 1) {
      char b[128];
      return meta_error(m, "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got a "
                        "tensor of shape %s", meta_shape_text(t->shape, t->rank, b, sizeof b));
    }
    if (t->dtype != first->dtype) return meta_error(m, "meshgrid expects all tensors to have the same dtype");
    shape[k] = t->rank ? t->shape[0] : C(1);
  }
  if (!strcmp(ix, "xy") && n >= 2) {
    alloy_dim t = shape[0];
    shape[0] = shape[1];
    shape[1] = t;
  }
  alloy_error *e = meta_set_num_outputs(m, n);
  for (int k = 0; k < n && !e; k++) e = meta_out_tensor(m, k, first->dtype, shape, n);
  return e;
}

/* Argument 'tensors' item k must be a vector (cartesian_prod,
 * combinations). */
static alloy_error *need_vector(alloy_meta *m, const alloy_value *t) {
  if (t && t->rank == 1) return NULL;
  char b[128];
  return meta_error(m, "Expect a 1D vector, but got shape %s",
                    t ? meta_shape_text(t->shape, t->rank, b, sizeof b) : "None");
}

/* cartesian_prod(tensors): vectors of one dtype; one is returned as it
 * is, several give [product of their lengths, their count]. */
static alloy_error *meta_cartesian_prod(alloy_meta *m) {
  int n = meta_tensor_count(m, 0);
  if (n == 0) return meta_error(m, "meshgrid expects a non-empty TensorList");
  const alloy_value *first = meta_tensor_at(m, 0, 0);
  alloy_dim rows = C(1);
  alloy_error *e;
  for (int k = 0; k < n; k++) {
    const alloy_value *t = meta_tensor_at(m, 0, k);
    if ((e = need_vector(m, t))) return e;
    if (t->dtype != first->dtype) return meta_error(m, "meshgrid expects all tensors to have the same dtype");
    rows = alloy_dim_mul(m->st, rows, t->shape[0]);
  }
  if (n == 1) return meta_out_like(m, 0, first, first->dtype);
  alloy_dim shape[2] = {rows, C(n)};
  return meta_out_tensor(m, 0, first->dtype, shape, 2);
}

/* The number of r-element combinations of n things (with repetition:
 * of n + r - 1), saturating past INT64_MAX. */
static int64_t choose(int64_t n, int64_t r) {
  if (r < 0 || n < r) return 0;
  if (r > n - r) r = n - r;
  int64_t c = 1;
  for (int64_t k = 1; k <= r; k++) {
    if (c > INT64_MAX / (n - r + k)) return INT64_MAX;
    c = c * (n - r + k) / k;
  }
  return c;
}

/* combinations(self, r, with_replacement): the r-element combinations of
 * a vector's elements, [count, r]; r = 0 gives an empty vector. */
static alloy_error *meta_combinations(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  int64_t r;
  alloy_error *e = need_vector(m, x);
  if (!e) e = meta_int(m, 1, &r);
  if (e) return e;
  if (r < 0) return meta_error(m, "Expect a non-negative number, but got %lld", (long long)r);
  if (r == 0) return meta_out_tensor(m, 0, x->dtype, (alloy_dim[]){C(0)}, 1);
  if (!alloy_dim_is_const(x->shape[0]))
    return meta_error(m, "combinations: the length of self must be concrete");
  if (r > ALLOY_MAX_RANK)
    return meta_error(m, "combinations: r = %lld is more than the %d dims its grid may have",
                      (long long)r, ALLOY_MAX_RANK);
  int64_t n = x->shape[0].value;
  alloy_dim shape[2] = {C(choose(meta_bool(m, 2) ? n + r - 1 : n, r)), C(r)};
  return meta_out_tensor(m, 0, x->dtype, shape, 2);
}

/* pad_sequence(sequences, batch_first, padding_value, padding_side): each
 * [L_k, *rest] padded to the longest; [max L, count, *rest], or [count,
 * max L, *rest] batch first, in the first sequence's dtype. */
static alloy_error *meta_pad_sequence(alloy_meta *m) {
  int n = meta_tensor_count(m, 0);
  if (n == 0) return meta_error(m, "received an empty list of sequences");
  const char *side = meta_str(m, 3);
  if (!side || (strcmp(side, "left") && strcmp(side, "right")))
    return meta_error(m, "Expected padding_side to be one of left or right, but got %s.",
                      side ? side : "None");
  const alloy_value *first = meta_tensor_at(m, 0, 0);
  if (!first || first->rank == 0)
    return meta_error(m, "argument 'sequences': each sequence must have at least 1 dim");
  if (first->rank + 1 > ALLOY_MAX_RANK)
    return meta_error(m, "output rank %d exceeds %d", first->rank + 1, ALLOY_MAX_RANK);
  alloy_dim longest = first->shape[0];
  for (int k = 1; k < n; k++) {
    const alloy_value *t = meta_tensor_at(m, 0, k);
    if (!t || t->rank != first->rank)
      return meta_error(m, "argument 'sequences': sequence %d has %d dims, sequence 0 has %d", k,
                        t ? t->rank : 0, first->rank);
    for (int d = 1; d < t->rank; d++)
      if (alloy_dim_eq(m->st, t->shape[d], first->shape[d]) == ALLOY_FALSE) {
        char a[64], b[64];
        alloy_dim_print(first->shape[d], a, sizeof a);
        alloy_dim_print(t->shape[d], b, sizeof b);
        return meta_error(m,
                          "The size of tensor a (%s) must match the size of tensor b (%s) at "
                          "non-singleton dimension %d",
                          a, b, d);
      }
    longest = alloy_dim_max(m->st, longest, t->shape[0]);
  }
  bool batch_first = meta_bool(m, 1);
  alloy_dim shape[ALLOY_MAX_RANK];
  shape[batch_first ? 1 : 0] = longest;
  shape[batch_first ? 0 : 1] = C(n);
  for (int d = 1; d < first->rank; d++) shape[d + 1] = first->shape[d];
  return meta_out_tensor(m, 0, first->dtype, shape, first->rank + 1);
}

/* flatten_dense_tensors(tensors): each flattened, then cat (one tensor
 * is only flattened). */
static alloy_error *meta_flatten_dense(alloy_meta *m) {
  alloy_value *vals = NULL;
  alloy_dim *shapes = NULL;
  int n;
  alloy_error *e = list_copies(m, "torch.cat(): expected a non-empty list of Tensors", &vals, &shapes, &n);
  alloy_arg *items = e ? NULL : malloc(sizeof *items * (size_t)(n > 0 ? n : 1));
  if (!e && !items) e = alloy_error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory");
  for (int k = 0; k < n && !e; k++) {
    vals[k].shape[0] = meta_numel(m, vals[k].shape, vals[k].rank);
    vals[k].rank = 1;
  }
  if (!e && n == 1) e = meta_out_like(m, 0, &vals[0], vals[0].dtype);
  else if (!e) {
    alloy_arg args[2] = {values_list(items, vals, n), alloy_arg_int(0)};
    e = meta_as_op(m, "aten.cat.default", args, 2, 0);
  }
  free(items);
  free(vals);
  free(shapes);
  return e;
}

/* unflatten_dense_tensors(flat, tensors): flat cut into pieces of each
 * tensor's shape, in flat's dtype (an empty tensor takes nothing). */
static alloy_error *meta_unflatten_dense(alloy_meta *m) {
  const alloy_value *flat = meta_tensor(m, 0);
  int n = meta_tensor_count(m, 1);
  alloy_error *e = meta_set_num_outputs(m, n);
  alloy_dim total = C(0);
  for (int k = 0; k < n && !e; k++) {
    const alloy_value *t = meta_tensor_at(m, 1, k);
    if (!t) return meta_error(m, "argument 'tensors': item %d is None", k);
    total = alloy_dim_add(m->st, total, meta_numel(m, t->shape, t->rank));
    e = meta_out_tensor(m, k, flat->dtype, t->shape, t->rank);
  }
  if (!e && flat->rank != 1) return meta_error(m, "argument 'flat' must be 1-dimensional, got %d dims", flat->rank);
  if (!e && alloy_dim_lt(m->st, flat->shape[0], total) == ALLOY_TRUE)
    return meta_error(m, "argument 'flat' has fewer elements than the tensors together");
  return e;
}

/* --- products ------------------------------------------------------------------*/

/* The dtype two tensors promote to (kron, outer, inner of a 0-dim). */
static alloy_dtype promoted(alloy_meta *m, int a, int b) {
  alloy_promo_operand ops[2] = {meta_promo_operand(m, a), meta_promo_operand(m, b)};
  return alloy_result_type(ops, 2);
}

/* outer(self, vec2): two vectors give [n, m]. */
static alloy_error *meta_outer(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0), *b = meta_tensor(m, 1);
  if (a->rank != 1) return meta_error(m, "outer: Expected 1-D argument self, but got %d-D", a->rank);
  if (b->rank != 1) return meta_error(m, "outer: Expected 1-D argument vec2, but got %d-D", b->rank);
  alloy_dim shape[2] = {a->shape[0], b->shape[0]};
  return meta_out_tensor(m, 0, promoted(m, 0, 1), shape, 2);
}

/* kron(self, other): both padded in front to the same rank; each size is
 * the product of theirs. */
static alloy_error *meta_kron(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0), *b = meta_tensor(m, 1);
  int r = a->rank > b->rank ? a->rank : b->rank;
  alloy_dim shape[ALLOY_MAX_RANK];
  for (int k = 0; k < r; k++) {
    int ia = k - (r - a->rank), ib = k - (r - b->rank);
    shape[k] = alloy_dim_mul(m->st, ia >= 0 ? a->shape[ia] : C(1), ib >= 0 ? b->shape[ib] : C(1));
  }
  return meta_out_tensor(m, 0, promoted(m, 0, 1), shape, r);
}

/* tensordot(self, other, dims_self, dims_other): the listed dims are
 * contracted pairwise (a size 1 on either side is summed away), the result
 * has self's other dims, then other's; one dtype. */
static alloy_error *meta_tensordot(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0), *b = meta_tensor(m, 1);
  int64_t da[ALLOY_MAX_RANK + 1], db[ALLOY_MAX_RANK + 1];
  int na, nb;
  alloy_error *e = meta_ints(m, 2, da, ALLOY_MAX_RANK + 1, &na);
  if (!e) e = meta_ints(m, 3, db, ALLOY_MAX_RANK + 1, &nb);
  if (e) return e;
  if (na != nb) return meta_error(m, "both dimension lists should have same length");
  if (a->dtype != b->dtype) return meta_error(m, "both inputs should have same dtype");
  bool ca[ALLOY_MAX_RANK] = {false}, cb[ALLOY_MAX_RANK] = {false};
  for (int k = 0; k < na; k++) {
    int x, y;
    if ((e = meta_wrap_dim(m, 2, da[k], a->rank, &x)) || (e = meta_wrap_dim(m, 3, db[k], b->rank, &y)))
      return e;
    if (ca[x]) return meta_error(m, "dim %d appears multiple times in the list of dims", x);
    if (cb[y]) return meta_error(m, "dim %d appears multiple times in the list of dims", y);
    ca[x] = cb[y] = true;
    alloy_dim s1 = a->shape[x], s2 = b->shape[y];
    if (!alloy_dim_is_const(s1) || !alloy_dim_is_const(s2) || s1.value == 1 || s2.value == 1) continue;
    if (s1.value != s2.value)
      return meta_error(m,
                        "contracted dimensions need to match, but first has size %lld in dim %lld "
                        "and second has size %lld in dim %lld",
                        (long long)s1.value, (long long)da[k], (long long)s2.value, (long long)db[k]);
  }
  alloy_dim shape[2 * ALLOY_MAX_RANK];
  int r = 0;
  for (int k = 0; k < a->rank; k++)
    if (!ca[k]) shape[r++] = a->shape[k];
  for (int k = 0; k < b->rank; k++)
    if (!cb[k]) shape[r++] = b->shape[k];
  if (r > ALLOY_MAX_RANK) return meta_error(m, "output rank %d exceeds %d", r, ALLOY_MAX_RANK);
  return meta_out_tensor(m, 0, a->dtype, shape, r);
}

/* inner(self, other): a 0-dim operand multiplies; otherwise the last dims
 * are contracted (tensordot). */
static alloy_error *meta_inner(alloy_meta *m) {
  const alloy_value *a = meta_tensor(m, 0), *b = meta_tensor(m, 1);
  if (a->rank == 0 || b->rank == 0) {
    alloy_dim shape[ALLOY_MAX_RANK];
    int r;
    alloy_error *e = meta_broadcast(m, a->shape, a->rank, b->shape, b->rank, shape, &r);
    return e ? e : meta_out_tensor(m, 0, promoted(m, 0, 1), shape, r);
  }
  if (alloy_dim_eq(m->st, a->shape[a->rank - 1], b->shape[b->rank - 1]) == ALLOY_FALSE) {
    char x[128], y[128];
    return meta_error(m,
                      "inner() the last dimension must match on both input tensors but got shapes "
                      "%s and %s",
                      meta_shape_text(a->shape, a->rank, x, sizeof x),
                      meta_shape_text(b->shape, b->rank, y, sizeof y));
  }
  alloy_arg la[1] = {alloy_arg_int(-1)}, lb[1] = {alloy_arg_int(-1)};
  alloy_arg args[4] = {m->args[0], m->args[1], alloy_arg_list(la, 1), alloy_arg_list(lb, 1)};
  return meta_as_op(m, "aten.tensordot.default", args, 4, 0);
}

const alloy_meta_entry alloy_meta_shape_composite[] = {
    {"aten.hstack.default", meta_hvstack, 0},
    {"aten.vstack.default", meta_hvstack, 1},
    {"aten.column_stack.default", meta_column_dstack, 0},
    {"aten.dstack.default", meta_column_dstack, 1},
    {"aten.meshgrid.default", meta_meshgrid, 0},
    {"aten.meshgrid.indexing", meta_meshgrid, 1},
    {"aten.cartesian_prod.default", meta_cartesian_prod, 0},
    {"aten.combinations.default", meta_combinations, 0},
    {"aten.pad_sequence.default", meta_pad_sequence, 0},
    {"aten.flatten_dense_tensors.default", meta_flatten_dense, 0},
    {"aten.unflatten_dense_tensors.default", meta_unflatten_dense, 0},
    {"aten.outer.default", meta_outer, 0},
    {"aten.kron.default", meta_kron, 0},
    {"aten.tensordot.default", meta_tensordot, 0},
    {"aten.inner.default", meta_inner, 0},
    {"aten.unflatten.int", meta_unflatten, 0},
    {"aten.repeat_interleave.self_int", meta_repeat_interleave_self, 0},
    {"aten.repeat_interleave.self_Tensor", meta_repeat_interleave_self, 1},
    {"aten.einsum.default", meta_einsum, 0},
    {"aten.contiguous.default", meta_contiguous, 0},
    {"aten.type_as.default", meta_type_as, 0},
    {"aten.expand_as.default", meta_expand_as, 0},
    {NULL, NULL, 0},
};
