/*
 * decompositions/rules_einsum.c: einsum, from ATen to Core ATen (a
 * file of the shape family, beside rules_shape.c).
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

const decomp_rule decomp_rules_einsum[] = {
    {"aten.einsum.default", einsum, DECOMP_TO_CORE},
    {NULL, NULL, 0},
};
