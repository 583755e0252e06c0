/*
 * reference_backend/args.c: how reference kernels read their node's
 * arguments by schema name: tensors from the call's inputs, the rest from
 * the node through the host table.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "reference_backend/ref.h"

static int arg_index(const alloy_kernel_call *c, const char *name) {
  int n = c->host->node_num_args(c->node);
  for (int i = 0; i < n; i++) {
    const char *an = c->host->node_arg_name(c->node, i);
    if (an && !strcmp(an, name)) return i;
  }
  return -1;
}

static const alloy_arg *arg_named(const alloy_kernel_call *c, const char *name) {
  int i = arg_index(c, name);
  return i < 0 ? NULL : c->host->node_arg(c->node, i);
}

const alloy_kernel_tensor *ref_tensor_item(const alloy_kernel_call *c, const char *name, int k) {
  int i = arg_index(c, name);
  for (int j = 0; i >= 0 && j < c->num_inputs; j++)
    if (c->input_arg[j] == i && c->input_item[j] == k) return &c->inputs[j];
  return NULL;
}

const alloy_kernel_tensor *ref_tensor(const alloy_kernel_call *c, const char *name) {
  return ref_tensor_item(c, name, -1);
}

int ref_list_size(const alloy_kernel_call *c, const char *name) {
  const alloy_arg *a = arg_named(c, name);
  return a ? c->host->arg_list_size(a) : 0;
}

bool ref_int(const alloy_kernel_call *c, const char *name, int64_t *out) {
  const alloy_arg *a = arg_named(c, name);
  return a && c->host->arg_int(a, out);
}

bool ref_float(const alloy_kernel_call *c, const char *name, double *out) {
  const alloy_arg *a = arg_named(c, name);
  return a && c->host->arg_float(a, out);
}

bool ref_bool(const alloy_kernel_call *c, const char *name, bool *out) {
  const alloy_arg *a = arg_named(c, name);
  int b;
  if (!a || !c->host->arg_bool(a, &b)) return false;
  *out = b != 0;
  return true;
}

bool ref_dtype(const alloy_kernel_call *c, const char *name, alloy_dtype *out) {
  const alloy_arg *a = arg_named(c, name);
  return a && c->host->arg_dtype(a, out);
}

const char *ref_str(const alloy_kernel_call *c, const char *name) {
  const alloy_arg *a = arg_named(c, name);
  return a ? c->host->arg_str(a) : NULL;
}

int ref_ints(const alloy_kernel_call *c, const char *name, int64_t *out, int cap) {
  const alloy_arg *a = arg_named(c, name);
  if (!a || c->host->arg_type(a) == ALLOY_ARG_TYPE_NONE) return -1;
  if (c->host->arg_type(a) != ALLOY_ARG_TYPE_LIST) return c->host->arg_int(a, out) ? 1 : -1;
  int n = c->host->arg_list_size(a);
  for (int k = 0; k < n && k < cap; k++)
    if (!c->host->arg_int(c->host->arg_list_item(a, k), &out[k])) return -1;
  return n < cap ? n : cap;
}

int ref_floats(const alloy_kernel_call *c, const char *name, double *out, int cap) {
  const alloy_arg *a = arg_named(c, name);
  if (!a || c->host->arg_type(a) != ALLOY_ARG_TYPE_LIST) return -1;
  int n = c->host->arg_list_size(a);
  for (int k = 0; k < n && k < cap; k++)
    if (!c->host->arg_float(c->host->arg_list_item(a, k), &out[k])) return -1;
  return n < cap ? n : cap;
}

bool ref_scalar(const alloy_kernel_call *c, const char *name, double *out) {
  return ref_float(c, name, out);
}

int64_t ref_numel(const alloy_kernel_tensor *t) {
  int64_t n = 1;
  for (int d = 0; d < t->rank; d++) n *= t->sizes[d];
  return n;
}

const alloy_kernel_tensor *ref_operand(const alloy_kernel_call *c, const char *name,
                                       ref_scalar_tensor *scratch) {
  const alloy_kernel_tensor *t = ref_tensor(c, name);
  if (t) return t;
  const alloy_arg *a = arg_named(c, name);
  if (!a) return NULL;
  memset(scratch, 0, sizeof *scratch);
  switch (c->host->arg_type(a)) {
    case ALLOY_ARG_TYPE_INT:
      if (!c->host->arg_int(a, &scratch->value.i)) return NULL;
      scratch->t.dtype = ALLOY_I64;
      break;
    case ALLOY_ARG_TYPE_BOOL: {
      int b;
      c->host->arg_bool(a, &b);
      scratch->value.i = b;
      scratch->t.dtype = ALLOY_I64;
      break;
    }
    case ALLOY_ARG_TYPE_FLOAT:
      c->host->arg_float(a, &scratch->value.f);
      scratch->t.dtype = ALLOY_F64;
      break;
    default: return NULL;
  }
  scratch->t.data = &scratch->value;
  scratch->t.rank = 0;
  return &scratch->t;
}

int ref_fail(const alloy_kernel_call *c, const char *fmt, ...) {
  char msg[512];
  int n = snprintf(msg, sizeof msg, "%s: ", c->host->node_op_name(c->node));
  if (n < 0 || (size_t)n >= sizeof msg) n = 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
  va_end(ap);
  c->host->log(ALLOY_LOG_ERROR, "ref", msg);
  /* The run's error says it too (the helper names the node and op). */
  if (ALLOY_HAS_FIELD(c, alloy_kernel_call, fail) && c->fail)
    c->fail(c, ALLOY_ERR_INVALID_ARGUMENT, msg + n);
  return 1;
}
