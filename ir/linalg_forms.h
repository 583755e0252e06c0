/*
 * ir/linalg_forms.h: the linear-algebra ops that are another one with some
 * of its results and some arguments fixed, as ATen builds them: linalg_det
 * is _linalg_det's first result, linalg_inv is linalg_inv_ex's with
 * check_errors, svdvals is _linalg_svd's S without U and Vh, lu_solve is
 * linalg_lu_solve with its arguments in another order, ...
 *
 * One table (ALLOY_LINALG_FORMS) says, for each, the op it is, which of
 * that op's results are its own (a bit mask, in order), and where each of
 * that op's arguments comes from (the ALIAS_* sources of ir/meta_alias.h:
 * an argument of the form, or a constant; arguments past the row's count
 * take their defaults). Its shape function (meta_linalg_form,
 * ir/meta_linalg.c) runs the other op's shape function on them and its
 * rule (decompositions/rules_linalg.c) builds the other op, so the two
 * cannot disagree.
 */
#ifndef ALLOY_LINALG_FORMS_H
#define ALLOY_LINALG_FORMS_H

#include "ir/meta_alias.h"

typedef struct linalg_form {
  meta_alias alias; /* the op, the op it is, and the argument sources (first_out unused) */
  unsigned outs;    /* bit k: the target's result k is one of the form's, in order */
} linalg_form;

#define LF_T ALIAS_TRUE
#define LF_F ALIAS_FALSE

/* X(form, target, results mask, the sources of the target's arguments...) */
#define ALLOY_LINALG_FORMS(X) \
  X("aten.linalg_det.default", "aten._linalg_det.default", 0x1, 0) \
  X("aten.det.default", "aten._linalg_det.default", 0x1, 0) \
  X("aten.linalg_slogdet.default", "aten._linalg_slogdet.default", 0x3, 0) \
  X("aten.slogdet.default", "aten._linalg_slogdet.default", 0x3, 0) \
  X("aten.linalg_inv.default", "aten.linalg_inv_ex.default", 0x1, 0, LF_T) \
  X("aten.inverse.default", "aten.linalg_inv_ex.default", 0x1, 0, LF_T) \
  X("aten.linalg_cholesky.default", "aten.linalg_cholesky_ex.default", 0x1, 0, 1, LF_T) \
  X("aten.linalg_eigh.default", "aten._linalg_eigh.default", 0x3, 0, 1, LF_T) \
  X("aten.linalg_eigvalsh.default", "aten._linalg_eigh.default", 0x1, 0, 1, LF_F) \
  X("aten.linalg_eigvals.default", "aten._linalg_eigvals.default", 0x1, 0) \
  X("aten.linalg_solve.default", "aten._linalg_solve_ex.default", 0x1, 0, 1, 2, LF_T) \
  X("aten.linalg_solve_ex.default", "aten._linalg_solve_ex.default", 0x9, 0, 1, 2, 3) \
  X("aten.lu_solve.default", "aten.linalg_lu_solve.default", 0x1, 1, 2, 0) \
  X("aten.linalg_lu_factor.default", "aten.linalg_lu_factor_ex.default", 0x3, 0, 1, LF_T) \
  X("aten._lu_with_info.default", "aten.linalg_lu_factor_ex.default", 0x7, 0, 1, 2) \
  X("aten.linalg_ldl_factor.default", "aten.linalg_ldl_factor_ex.default", 0x3, 0, 1, LF_T) \
  X("aten.linalg_svd.default", "aten._linalg_svd.default", 0x7, 0, 1, LF_T, 2) \
  X("aten.linalg_svdvals.default", "aten._linalg_svd.default", 0x2, 0, LF_F, LF_F, 1) \
  X("aten.matrix_exp.default", "aten.linalg_matrix_exp.default", 0x1, 0) \
  X("aten.orgqr.default", "aten.linalg_householder_product.default", 0x1, 0, 1) \
  X("aten.linalg_matmul.default", "aten.matmul.default", 0x1, 0, 1) \
  X("aten.linalg_diagonal.default", "aten.diagonal.default", 0x1, 0, 1, 2, 3) \
  X("aten._cholesky_solve_helper.default", "aten.cholesky_solve.default", 0x1, 0, 1, 2)

/* The row of op (its full name), or NULL. */
const linalg_form *linalg_form_find(const char *op);

#endif
