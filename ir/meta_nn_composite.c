/*
 * ir/meta_nn_composite.c: shape functions of the composite neural-network
 * ops that Alloy registers only to decompose them (decompositions/
 * rules_nn*.c): the normalizations group_norm, batch_norm, instance_norm
 * and rms_norm, whose result has the input's type; pad, which widens the
 * trailing dims; the losses cross_entropy_loss and nll_loss; and
 * embedding_bag, typed as the _embedding_bag it becomes.
 */
#include "ir/meta.h"

/* The result has the type of the input. */
static alloy_error *meta_like_input(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  return meta_out_like(m, 0, x, x->dtype);
}

/* pad: pairs (before, after) from the last dim backwards. */
static alloy_error *meta_pad(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  alloy_dim pad[2 * ALLOY_MAX_RANK], shape[ALLOY_MAX_RANK];
  int n;
  alloy_error *e = meta_dims(m, 1, pad, 2 * ALLOY_MAX_RANK, &n);
  if (e) return e;
  if (n % 2 || n / 2 > x->rank)
    return meta_error(m,
                      "Padding length must be divisible by 2 and at most twice the rank "
                      "(%d for a tensor of rank %d)",
                      n, x->rank);
  for (int i = 0; i < x->rank; i++) shape[i] = x->shape[i];
  for (int k = 0; k < n / 2; k++) {
    int d = x->rank - 1 - k;
    shape[d] = alloy_dim_add(m->st, shape[d], alloy_dim_add(m->st, pad[2 * k], pad[2 * k + 1]));
  }
  if ((e = meta_sym_check(m))) return e;
  return meta_out_tensor(m, 0, x->dtype, shape, x->rank);
}

/* The losses over classes on dim 1 (dim 0 for one unbatched sample):
 * reduction none keeps every other dim, mean and sum give a scalar. */
static alloy_error *meta_class_loss(alloy_meta *m) {
  const alloy_value *x = meta_tensor(m, 0);
  int64_t reduction;
  alloy_error *e = meta_int(m, 3, &reduction);
  if (e) return e;
  if (reduction != 0) return meta_out_tensor(m, 0, x->dtype, NULL, 0);
  alloy_dim shape[ALLOY_MAX_RANK];
  int r = 0;
  for (int i = 0; i < x->rank; i++)
    if (i != (x->rank == 1 ? 0 : 1)) shape[r++] = x->shape[i];
  return meta_out_tensor(m, 0, x->dtype, shape, r);
}

/* embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
 * per_sample_weights, include_last_offset) -> (output, offset2bag,
 * bag_size, max_indices), as _embedding_bag with no padding_idx on the
 * CPU: offset2bag is empty on the fast sum path of floating weights. */
static alloy_error *meta_embedding_bag(alloy_meta *m) {
  const alloy_value *w = meta_tensor(m, 0), *ix = meta_tensor(m, 1), *off = meta_tensor(m, 2);
  int64_t mode;
  alloy_error *e = meta_int(m, 4, &mode);
  if (e) return e;
  if (w->rank != 2 || ix->rank != 1 || off->rank != 1)
    return meta_error(m,
                      "expected a 2-D weight and 1-D indices and offsets, got %d, %d and %d dims",
                      w->rank, ix->rank, off->rank);
  if (mode < 0 || mode > 2)
    return meta_error(m, "argument 'mode': expected 0 (sum), 1 (mean) or 2 (max), got %lld",
                      (long long)mode);
  alloy_dim bags = off->shape[0];
  if (meta_bool(m, 7)) bags = alloy_dim_sub(m->st, bags, alloy_dim_const(1));
  alloy_dim two[2] = {bags, w->shape[1]}, one[1];
  if ((e = meta_out_tensor(m, 0, w->dtype, two, 2))) return e;
  bool fast = w->dtype == ALLOY_F32 || w->dtype == ALLOY_F16 || w->dtype == ALLOY_BF16;
  one[0] = mode != 0 || !fast ? ix->shape[0] : alloy_dim_const(0);
  if ((e = meta_out_tensor(m, 1, off->dtype, one, 1))) return e;
  one[0] = bags;
  if ((e = meta_out_tensor(m, 2, off->dtype, one, 1))) return e;
  return mode == 2 ? meta_out_tensor(m, 3, off->dtype, two, 2)
                   : meta_out_tensor(m, 3, off->dtype, one, 1);
}

const alloy_meta_entry alloy_meta_nn_composite[] = {
    {"aten.group_norm.default", meta_like_input, 0},
    {"aten.batch_norm.default", meta_like_input, 0},
    {"aten.instance_norm.default", meta_like_input, 0},
    {"aten.rms_norm.default", meta_like_input, 0},
    {"aten.pad.default", meta_pad, 0},
    {"aten.cross_entropy_loss.default", meta_class_loss, 0},
    {"aten.nll_loss.default", meta_class_loss, 0},
    {"aten.embedding_bag.default", meta_embedding_bag, 0},
    {NULL, NULL, 0},
};
