/*
 * decompositions/rules_einsum.c: einsum and its relatives (tensordot,
 * inner, outer, kron), from ATen to Core ATen (a file of the shape family,
 * beside rules_shape.c).
 *
 * tensordot is PyTorch's: a contracted size 1 on either side is summed
 * away first, then the free dims of self and the contracted ones are
 * permuted apart, both operands reshaped to matrices, multiplied by one mm
 * and the product reshaped to the free dims. inner is a tensordot of the
 * last dims (a product when either is 0-dim), outer a broadcast product,
 * kron a broadcast product of interleaved views reshaped.
 *
 * The equation is read by ir/einsum.h, as einsum's shape function reads
 * it, into a label per dim. Then, as PyTorch's own einsum does without an
 * optimized path: a label repeated within one operand takes its diagonal;
 * a label no other operand and not the output has is summed away; the
 * operands are contracted left to right, each pair by one bmm whose batch
 * is the labels both have and something later needs, whose inner dim is
 * the labels both have and nothing later needs; and the last result is
 * permuted to the output's order. A size-1 dim broadcasts against the
 * other operand's (expand) before a pair is contracted.
 */
#include <string.h>

#include "decompositions/rules.h"
#include "ir/einsum.h"

/* An operand on the way: its value and the label of each dim. */
typedef struct term {
  alloy_value *v;
  signed char lab[ALLOY_MAX_RANK];
  int n;
} term;

static int find(const term *t, int label) {
  for (int i = 0; i < t->n; i++)
    if (t->lab[i] == label) return i;
  return -1;
}

static bool is_one(alloy_dim s) { return alloy_dim_is_const(s) && s.value == 1; }

/* A label repeated within t becomes one dim holding the diagonal (diagonal
 * drops both dims and appends the diagonal last). */
static void take_diagonals(decomp *d, term *t) {
  for (int i = 0; i < t->n; i++)
    for (int j = i + 1; j < t->n; j++) {
      if (t->lab[i] != t->lab[j]) continue;
      signed char l = t->lab[i];
      t->v = D(d, "aten.diagonal.default", V(t->v), I(0), I(i), I(j));
      int r = 0;
      for (int k = 0; k < t->n; k++)
        if (k != i && k != j) t->lab[r++] = t->lab[k];
      t->lab[r++] = l;
      t->n = r;
      i = -1; /* start over: positions moved */
      break;
    }
}

/* Sums the dims of t whose label keep[] does not hold. */
static void sum_unneeded(decomp *d, term *t, const bool *keep) {
  int64_t dims[ALLOY_MAX_RANK];
  int nd = 0, r = 0;
  for (int i = 0; i < t->n; i++) {
    if (keep[t->lab[i]]) t->lab[r++] = t->lab[i];
    else dims[nd++] = i;
  }
  if (!nd) return;
  t->v = D(d, "aten.sum.dim_IntList", V(t->v), d_int_list(d, dims, nd), B(false));
  t->n = r;
}

/* t's dims in the order of labels (each one of t's). */
static alloy_value *arranged(decomp *d, const term *t, const signed char *labels, int n) {
  int64_t perm[ALLOY_MAX_RANK];
  bool moved = false;
  for (int i = 0; i < n; i++) {
    perm[i] = find(t, labels[i]);
    moved |= perm[i] != i;
  }
  return moved ? D(d, "aten.permute.default", V(t->v), d_int_list(d, perm, n)) : t->v;
}

/* Expands the size-1 dims of a whose label b has with a larger size. */
static void broadcast_to(decomp *d, term *a, const term *b) {
  alloy_dim shape[ALLOY_MAX_RANK];
  bool grow = false;
  for (int i = 0; i < a->n; i++) {
    shape[i] = d_shape(a->v)[i];
    int j = find(b, a->lab[i]);
    if (j >= 0 && is_one(shape[i]) && !is_one(d_shape(b->v)[j])) {
      shape[i] = d_shape(b->v)[j];
      grow = true;
    }
  }
  if (grow) a->v = D(d, "aten.expand.default", V(a->v), d_dim_list(d, shape, a->n));
}

static alloy_dim size_of(const term *t, int label) { return d_shape(t->v)[find(t, label)]; }

/* a and b contracted into one term; keep[] holds the labels needed later. */
static term contract(decomp *d, term a, term b, const bool *keep) {
  bool kept_a[ALLOY_EINSUM_ELLIPSIS + ALLOY_MAX_RANK], kept_b[ALLOY_EINSUM_ELLIPSIS + ALLOY_MAX_RANK];
  for (int l = 0; l < ALLOY_EINSUM_ELLIPSIS + ALLOY_MAX_RANK; l++) kept_a[l] = kept_b[l] = keep[l];
  for (int i = 0; i < b.n; i++) kept_a[b.lab[i]] = true;
  for (int i = 0; i < a.n; i++) kept_b[a.lab[i]] = true;
  sum_unneeded(d, &a, kept_a);
  sum_unneeded(d, &b, kept_b);
  broadcast_to(d, &a, &b);
  broadcast_to(d, &b, &a);
  signed char batch[ALLOY_MAX_RANK], inner[ALLOY_MAX_RANK], left[ALLOY_MAX_RANK],
      right[ALLOY_MAX_RANK];
  int nb = 0, ni = 0, nl = 0, nr = 0;
  for (int i = 0; i < a.n; i++) {
    signed char l = a.lab[i];
    if (find(&b, l) < 0) left[nl++] = l;
    else if (keep[l]) batch[nb++] = l;
    else inner[ni++] = l;
  }
  for (int i = 0; i < b.n; i++)
    if (find(&a, b.lab[i]) < 0) right[nr++] = b.lab[i];
  alloy_symtab *st = d_symtab(d);
  alloy_dim B = alloy_dim_const(1), M = alloy_dim_const(1), K = alloy_dim_const(1),
            N = alloy_dim_const(1), shape[ALLOY_MAX_RANK];
  term out = {NULL, {0}, 0};
  for (int i = 0; i < nb; i++) B = alloy_dim_mul(st, B, shape[out.n++] = size_of(&a, batch[i]));
  for (int i = 0; i < nl; i++) M = alloy_dim_mul(st, M, shape[out.n++] = size_of(&a, left[i]));
  for (int i = 0; i < nr; i++) N = alloy_dim_mul(st, N, shape[out.n++] = size_of(&b, right[i]));
  for (int i = 0; i < ni; i++) K = alloy_dim_mul(st, K, size_of(&a, inner[i]));
  if (out.n > ALLOY_MAX_RANK) {
    d_decline(d, "an intermediate of rank %d", out.n);
    return out;
  }
  signed char order[ALLOY_MAX_RANK];
  int no = 0;
  memcpy(order, batch, (size_t)nb);
  memcpy(order + nb, left, (size_t)nl);
  memcpy(order + nb + nl, inner, (size_t)ni);
  no = nb + nl + ni;
  alloy_value *a3 = D(d, "aten.view.default", V(arranged(d, &a, order, no)),
                      d_dim_list(d, (alloy_dim[]){B, M, K}, 3));
  memcpy(order + nb, inner, (size_t)ni);
  memcpy(order + nb + ni, right, (size_t)nr);
  no = nb + ni + nr;
  alloy_value *b3 = D(d, "aten.view.default", V(arranged(d, &b, order, no)),
                      d_dim_list(d, (alloy_dim[]){B, K, N}, 3));
  alloy_value *prod = D(d, "aten.bmm.default", V(a3), V(b3));
  out.v = D(d, "aten.view.default", V(prod), d_dim_list(d, shape, out.n));
  memcpy(out.lab, batch, (size_t)nb);
  memcpy(out.lab + nb, left, (size_t)nl);
  memcpy(out.lab + nb + nl, right, (size_t)nr);
  return out;
}

/* einsum(equation, tensors, *, path): path only orders the contractions,
 * which left to right gives the same values. */
static void einsum(decomp *d) {
  const char *eq = d_str(d, 0);
  int n = d_tensor_count(d, 1);
  if (d_failed(d) || !eq) return;
  if (n < 1 || n > ALLOY_EINSUM_MAX_OPS) return d_decline(d, "%d operands", n);
  term t[ALLOY_EINSUM_MAX_OPS];
  int ranks[ALLOY_EINSUM_MAX_OPS];
  for (int k = 0; k < n; k++) {
    t[k].v = d_tensor_at(d, 1, k);
    if (!t[k].v) return;
    ranks[k] = d_rank(t[k].v);
  }
  alloy_einsum e;
  char err[256];
  const char *msg = alloy_einsum_parse(eq, n, ranks, &e, err, sizeof err);
  if (msg) {
    d_fail(d, "%s", msg);
    return;
  }
  enum { NLABELS = ALLOY_EINSUM_ELLIPSIS + ALLOY_MAX_RANK };
  for (int k = 0; k < n; k++) {
    t[k].n = e.rank[k];
    memcpy(t[k].lab, e.label[k], (size_t)e.rank[k]);
    take_diagonals(d, &t[k]);
  }
  /* needed_after[k][l]: label l is in the output or an operand after k. */
  bool keep[NLABELS] = {false};
  for (int i = 0; i < e.out_rank; i++) keep[e.out[i]] = true;
  bool later[ALLOY_EINSUM_MAX_OPS][NLABELS];
  for (int k = n - 1; k >= 0; k--) {
    memcpy(later[k], keep, sizeof keep);
    for (int i = 0; i < t[k].n; i++) keep[t[k].lab[i]] = true;
  }
  term acc = t[0];
  if (n == 1) sum_unneeded(d, &acc, later[0]);
  for (int k = 1; k < n && !d_failed(d); k++) {
    /* after operand k, what operands after k or the output need */
    acc = contract(d, acc, t[k], later[k]);
  }
  if (d_failed(d)) return;
  alloy_value *r = arranged(d, &acc, e.out, e.out_rank);
  d_out(d, 0, r == acc.v && n == 1 ? D(d, "aten.clone.default", V(r)) : r);
}

/* --- einsum's relatives ---------------------------------------------------------*/

static alloy_value *reshape_to(decomp *d, alloy_value *x, const alloy_dim *shape, int rank) {
  return D(d, "aten.view.default", V(x), d_dim_list(d, shape, rank));
}

/* tensordot(self, other, dims_self, dims_other). */
static void tensordot(decomp *d) {
  alloy_value *a = d_tensor(d, 0), *b = d_tensor(d, 1);
  int64_t da[ALLOY_MAX_RANK], db[ALLOY_MAX_RANK];
  int n = d_ints(d, 2, da, ALLOY_MAX_RANK);
  if (d_ints(d, 3, db, ALLOY_MAX_RANK) != n) return d_decline(d, "dim lists of different lengths");
  if (d_failed(d) || !a || !b) return;
  int ra = d_rank(a), rb = d_rank(b);
  alloy_symtab *st = d_symtab(d);
  bool ca[ALLOY_MAX_RANK] = {false}, cb[ALLOY_MAX_RANK] = {false};
  int pa[ALLOY_MAX_RANK], pb[ALLOY_MAX_RANK], np = 0;
  alloy_dim inner = alloy_dim_const(1);
  for (int k = 0; k < n; k++) {
    int x = d_wrap_dim(d, da[k], ra), y = d_wrap_dim(d, db[k], rb);
    if (d_failed(d)) return;
    ca[x] = cb[y] = true;
    alloy_dim s1 = d_shape(a)[x], s2 = d_shape(b)[y];
    if (alloy_dim_is_const(s2) && s2.value == 1) {
      a = D(d, "aten.sum.dim_IntList", V(a), LIST(I(x)), B(true), DT(d_dtype(a)));
    } else if (alloy_dim_is_const(s1) && s1.value == 1) {
      b = D(d, "aten.sum.dim_IntList", V(b), LIST(I(y)), B(true), DT(d_dtype(b)));
    } else {
      pa[np] = x, pb[np++] = y;
      inner = alloy_dim_mul(st, inner, s1);
    }
  }
  if (!a || !b) return;
  /* self: its free dims, then the contracted ones; other: the contracted
   * ones in the same order, then its free dims. The dims summed away
   * (size 1 now) go with the contracted ones. */
  bool listed_a[ALLOY_MAX_RANK] = {false}, listed_b[ALLOY_MAX_RANK] = {false};
  int64_t perm_a[ALLOY_MAX_RANK], perm_b[ALLOY_MAX_RANK];
  int ja = 0, jb = 0, r = 0;
  alloy_dim rows = alloy_dim_const(1), cols = alloy_dim_const(1), out[2 * ALLOY_MAX_RANK];
  for (int k = 0; k < ra; k++)
    if (!ca[k]) perm_a[ja++] = k, rows = alloy_dim_mul(st, rows, d_shape(a)[k]), out[r++] = d_shape(a)[k];
  for (int k = 0; k < np; k++) {
    perm_a[ja++] = pa[k], perm_b[jb++] = pb[k];
    listed_a[pa[k]] = listed_b[pb[k]] = true;
  }
  for (int k = 0; k < ra; k++)
    if (ca[k] && !listed_a[k]) perm_a[ja++] = k;
  for (int k = 0; k < rb; k++)
    if (cb[k] && !listed_b[k]) perm_b[jb++] = k;
  for (int k = 0; k < rb; k++)
    if (!cb[k]) perm_b[jb++] = k, cols = alloy_dim_mul(st, cols, d_shape(b)[k]), out[r++] = d_shape(b)[k];
  alloy_value *ma = reshape_to(d, D(d, "aten.permute.default", V(a), d_int_list(d, perm_a, ra)),
                               (alloy_dim[]){rows, inner}, 2);
  alloy_value *mb = reshape_to(d, D(d, "aten.permute.default", V(b), d_int_list(d, perm_b, rb)),
                               (alloy_dim[]){inner, cols}, 2);
  d_out(d, 0, reshape_to(d, D(d, "aten.mm.default", V(ma), V(mb)), out, r));
}

/* inner(self, other): the product when either is 0-dim, else the last
 * dims contracted. */
static void inner(decomp *d) {
  alloy_value *a = d_tensor(d, 0), *b = d_tensor(d, 1);
  if (!a || !b) return;
  if (d_rank(a) == 0 || d_rank(b) == 0) return d_out(d, 0, D(d, "aten.mul.Tensor", V(a), V(b)));
  d_out(d, 0, D(d, "aten.tensordot.default", V(a), V(b), LIST(I(-1)), LIST(I(-1))));
}

/* outer(self, vec2) = self as a column times vec2. */
static void outer(decomp *d) {
  alloy_value *a = d_tensor(d, 0), *b = d_tensor(d, 1);
  if (!a || !b) return;
  alloy_value *col = D(d, "aten.unsqueeze.default", V(a), I(1));
  d_out(d, 0, D(d, "aten.mul.Tensor", V(col), V(b)));
}

/* kron(self, other): with both padded to rank r, self viewed as [a0, 1,
 * a1, 1, ...] times other as [1, b0, 1, b1, ...] is [a0, b0, a1, b1,
 * ...], which reshapes to [a0 b0, a1 b1, ...]. */
static void kron(decomp *d) {
  alloy_value *a = d_tensor(d, 0), *b = d_tensor(d, 1);
  if (!a || !b) return;
  int ra = d_rank(a), rb = d_rank(b), r = ra > rb ? ra : rb;
  if (2 * r > ALLOY_MAX_RANK) return d_decline(d, "rank %d needs %d dims on the way", r, 2 * r);
  alloy_dim sa[ALLOY_MAX_RANK], sb[ALLOY_MAX_RANK];
  for (int k = 0; k < r; k++) {
    int ia = k - (r - ra), ib = k - (r - rb);
    sa[2 * k] = ia >= 0 ? d_shape(a)[ia] : alloy_dim_const(1);
    sa[2 * k + 1] = alloy_dim_const(1);
    sb[2 * k] = alloy_dim_const(1);
    sb[2 * k + 1] = ib >= 0 ? d_shape(b)[ib] : alloy_dim_const(1);
  }
  alloy_value *p = D(d, "aten.mul.Tensor", V(reshape_to(d, a, sa, 2 * r)), V(reshape_to(d, b, sb, 2 * r)));
  const alloy_value *o = alloy_node_output(d_node(d), 0);
  d_out(d, 0, reshape_to(d, p, d_shape(o), d_rank(o)));
}

const decomp_rule decomp_rules_einsum[] = {
    {"aten.einsum.default", einsum, DECOMP_TO_CORE},
    {"aten.tensordot.default", tensordot, DECOMP_TO_CORE},
    {"aten.inner.default", inner, DECOMP_TO_CORE},
    {"aten.outer.default", outer, DECOMP_TO_CORE},
    {"aten.kron.default", kron, DECOMP_TO_CORE},
    {NULL, NULL, 0},
};
