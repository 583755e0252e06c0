/*
 * decompositions/rules_linalg.c: linear algebra composites, from ATen to
 * the ops ATen builds them from (torch/linalg's CompositeImplicit kernels
 * in aten/src/ATen/native/BatchLinearAlgebra.cpp and LinearAlgebra.cpp).
 *
 * Forms (ir/linalg_forms.h): an op that is another with some results and
 * arguments fixed (linalg_det is _linalg_det's first result, linalg_inv is
 * linalg_inv_ex with check_errors, svdvals is _linalg_svd's S) is built as
 * that op; the same table gives the shape functions.
 *
 * The factorizations themselves (_linalg_det, _linalg_svd, _linalg_eigh,
 * linalg_inv_ex, linalg_lu_factor_ex, ...) have no decomposition into Core
 * ATen: the reference backend runs them (reference_backend/kernels_linalg.c,
 * kernels_spectral.c), in double.
 */
#include <math.h>
#include <string.h>

#include "decompositions/rules.h"
#include "ir/linalg_forms.h"

/* --- forms -------------------------------------------------------------------------*/

static void form(decomp *d) {
  const alloy_op *op = alloy_node_op(d_node(d));
  const linalg_form *f = linalg_form_find(alloy_op_name(op));
  if (!f) {
    d_fail(d, "%s is not in the linalg forms", alloy_op_name(op));
    return;
  }
  int nargs = alloy_op_schema(op)->nargs;
  if (nargs > ALIAS_MAX_ARGS) return d_decline(d, "%d arguments", nargs);
  alloy_arg src[ALIAS_MAX_ARGS], args[ALIAS_MAX_ARGS];
  for (int i = 0; i < nargs; i++) src[i] = *d_arg(d, i);
  for (int j = 0; j < f->alias.nargs; j++) args[j] = meta_alias_arg(&f->alias, j, src);
  alloy_value *outs[8];
  int n = d_op_n(d, f->alias.as, args, f->alias.nargs, outs, 8);
  for (int o = 0, k = 0; o < n; o++)
    if (f->outs >> o & 1) d_out(d, k++, outs[o]);
}

const decomp_rule decomp_rules_linalg[] = {
#define FORM_RULE(op, ...) {op, form, DECOMP_TO_CORE},
    ALLOY_LINALG_FORMS(FORM_RULE)
#undef FORM_RULE
    {NULL, NULL, 0},
};
