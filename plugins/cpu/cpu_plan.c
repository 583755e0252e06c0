/*
 * plugins/cpu/cpu_plan.c: a partition becomes a plan and the LLVM IR of
 * its loop nests, the way Inductor's C++ backend turns an FX graph into
 * loops over views.
 *
 * Every tensor of the plan is a strided view of a base: a partition input,
 * a partition output, or a temporary of the execute's scratch arena. View
 * ops (view, permute, expand, slice, ...) only make a new view: index
 * arithmetic, never a copy. Pointwise ops join the open group of their
 * iteration shape: one loop nest in which each element loads the group's
 * operands through their strides (a broadcast dim has stride 0), computes
 * every node in registers in PyTorch's opmath and stores only the values
 * something outside the group reads. Groups stay open across views and
 * other steps (a reduction, a product) and close when something needs
 * their values in memory, so a chain interleaved with views is still one
 * loop. When a group closes its dims are coalesced where every operand
 * allows (contiguous tensors become one dim), the last dim becomes the
 * inner loop (contiguous: what LLVM's loop vectorizer takes) and the
 * others the row loop the thread pool splits; a one-dim loop is cut in
 * tiles of 4096 so that threads can share it.
 *
 * A reshape no view expresses, and an output that is a view or an input,
 * are copies: a loop nest with one load and one store. The steps that are
 * not pointwise (reductions, layer norm, products) are cpu_rows.c's.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/kernel_table.h"
#include "plugins/cpu/cpu_plan.h"

#define TILE 4096

/* ---- the builder's state ----------------------------------------------------- */

alloy_error *cp_fail(builder *b, const alloy_node *n, const char *fmt, ...) {
  if (b->err) return b->err;
  char msg[512];
  int k = 0;
  if (n) {
    const alloy_value *o = b->host->node_num_outputs(n) > 0 ? b->host->node_output(n, 0) : NULL;
    k = snprintf(msg, sizeof msg, "cpu: node %s (%s): ", o ? b->host->value_name(o) : "?", b->host->node_op_name(n));
  } else {
    k = snprintf(msg, sizeof msg, "cpu: ");
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg + k, sizeof msg - (size_t)k, fmt, ap);
  va_end(ap);
  return b->err = b->host->error_new(ALLOY_ERR_UNSUPPORTED, msg);
}

vinfo *cp_val(builder *b, const alloy_value *v) {
  size_t h = ((uintptr_t)v >> 4) * 0x9E3779B97F4A7C15ull;
  for (int i = 0;; i++) {
    vinfo *e = &b->vals[(h + (size_t)i) & (size_t)(b->cap_vals - 1)];
    if (e->v == v) return e;
    if (!e->v) {
      *e = (vinfo){.v = v, .tensor = -1, .group = -1, .output = -1};
      return e;
    }
  }
}

bool cp_grow(void **p, int *cap, int need, size_t size) {
  if (need <= *cap) return true;
  int c = *cap ? *cap * 2 : 16;
  while (c < need) c *= 2;
  void *q = realloc(*p, (size_t)c * size);
  if (!q) return false;
  *p = q, *cap = c;
  return true;
}

int cp_add_base(builder *b, int kind, int index, uint64_t bytes) {
  cpu_plan *p = b->plan;
  if (!cp_grow((void **)&p->bases, &b->cap_bases, p->nbases + 1, sizeof *p->bases) ||
      !cp_grow((void **)&b->pending, &b->cap_pending, p->nbases + 1, sizeof *b->pending)) {
    cp_fail(b, NULL, "out of memory");
    return -1;
  }
  cpu_base *base = &p->bases[p->nbases];
  *base = (cpu_base){.kind = kind, .index = index, .bytes = bytes};
  if (kind == BASE_TEMP) {
    base->offset = p->scratch_bytes;
    p->scratch_bytes += (bytes + 63) & ~(uint64_t)63;
  }
  b->pending[p->nbases] = -1;
  return p->nbases++;
}

int cp_add_tensor(builder *b, const cpu_tensor *t) {
  if (!cp_grow((void **)&b->tensors, &b->cap_tensors, b->ntensors + 1, sizeof *b->tensors)) {
    cp_fail(b, NULL, "out of memory");
    return -1;
  }
  b->tensors[b->ntensors] = *t;
  return b->ntensors++;
}

int64_t cp_numel_of(const int64_t *sizes, int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= sizes[d];
  return n;
}

static void dense_strides(cpu_tensor *t) {
  int64_t s = 1;
  for (int d = t->rank - 1; d >= 0; d--) t->strides[d] = s, s *= t->sizes[d];
}

/* A dense temporary of shape's sizes and dtype. */
int cp_temp_like(builder *b, const cpu_tensor *shape, alloy_dtype dtype) {
  cpu_tensor t = *shape;
  t.dtype = dtype;
  t.offset = 0;
  dense_strides(&t);
  t.base = cp_add_base(b, BASE_TEMP, -1, (uint64_t)cp_numel_of(t.sizes, t.rank) * alloy_dtype_size(dtype));
  return t.base < 0 ? -1 : cp_add_tensor(b, &t);
}

/* A tensor of value v's sizes on base: contiguous, or laid out as the
 * execute's tensor `as` is. */
static int tensor_of_value(builder *b, const alloy_value *v, int base, const alloy_tensor *as) {
  const alloy_host_api *h = b->host;
  cpu_tensor t = {.base = base, .dtype = h->value_dtype(v), .rank = h->value_rank(v)};
  for (int d = 0; d < t.rank; d++)
    if (!h->value_size(v, d, &t.sizes[d])) {
      cp_fail(b, NULL, "value %s has a symbolic size at compile", h->value_name(v));
      return -1;
    }
  dense_strides(&t);
  if (as && as->rank == t.rank && as->strides)
    for (int d = 0; d < t.rank; d++) t.strides[d] = as->strides[d];
  return cp_add_tensor(b, &t);
}

/* ---- arguments ------------------------------------------------------------------- */

int cp_tensor_operands(const alloy_host_api *h, const alloy_node *n, const alloy_value **out, int cap) {
  int k = 0;
  for (int i = 0; i < h->node_num_args(n); i++) {
    const alloy_arg *a = h->node_arg(n, i);
    int items = h->arg_type(a) == ALLOY_ARG_TYPE_LIST ? h->arg_list_size(a) : 1;
    for (int j = 0; j < items; j++) {
      const alloy_arg *x = h->arg_type(a) == ALLOY_ARG_TYPE_LIST ? h->arg_list_item(a, j) : a;
      if (h->arg_type(x) != ALLOY_ARG_TYPE_VALUE) continue;
      const alloy_value *v = h->arg_value(x);
      if (v && h->value_kind(v) == 0) {
        if (k < cap) out[k] = v;
        k++;
      }
    }
  }
  return k;
}

const alloy_arg *cp_arg_named(const alloy_host_api *h, const alloy_node *n, const char *name) {
  for (int i = 0; i < h->node_num_args(n); i++) {
    const char *an = h->node_arg_name(n, i);
    if (an && !strcmp(an, name)) return h->node_arg(n, i);
  }
  return NULL;
}

const alloy_value *cp_value_arg(const alloy_host_api *h, const alloy_node *n, const char *name) {
  const alloy_arg *a = cp_arg_named(h, n, name);
  return a && h->arg_type(a) == ALLOY_ARG_TYPE_VALUE ? h->arg_value(a) : NULL;
}

bool cp_bool_arg(const alloy_host_api *h, const alloy_node *n, const char *name, bool dflt) {
  const alloy_arg *a = cp_arg_named(h, n, name);
  int v;
  return a && h->arg_bool(a, &v) ? v != 0 : dflt;
}

int64_t cp_int_arg(const alloy_host_api *h, const alloy_node *n, const char *name, int64_t dflt) {
  const alloy_arg *a = cp_arg_named(h, n, name);
  int64_t v;
  return a && h->arg_int(a, &v) ? v : dflt;
}

double cp_float_arg(const alloy_host_api *h, const alloy_node *n, const char *name, double dflt) {
  const alloy_arg *a = cp_arg_named(h, n, name);
  double v;
  return a && h->arg_float(a, &v) ? v : dflt;
}

int cp_wrap_dim(int64_t d, int rank) {
  int r = rank > 0 ? rank : 1;
  return (int)(d < 0 ? d + r : d);
}

/* ---- views ----------------------------------------------------------------------- */

/* The view node n over tensor in: fills *out, or returns false when the
 * view needs the data copied first (a reshape of a non-viewable layout). */
static bool view_of(builder *b, const alloy_node *n, const cpu_tensor *in, const alloy_value *ov, cpu_tensor *out) {
  const alloy_host_api *h = b->host;
  const char *name = h->node_op_name(n);
  *out = *in;
  int orank = h->value_rank(ov);
  int64_t osz[CPU_MAX_RANK];
  for (int d = 0; d < orank; d++) h->value_size(ov, d, &osz[d]);
  out->rank = orank;
  memcpy(out->sizes, osz, sizeof *osz * (size_t)orank);
  if (!strcmp(name, "aten.view.default") || !strcmp(name, "aten._unsafe_view.default") ||
      !strcmp(name, "aten.reshape.default") || !strcmp(name, "aten.alias.default"))
    return alloy_view_strides(in->sizes, in->strides, in->rank, osz, orank, out->strides);
  if (!strcmp(name, "aten.permute.default")) {
    const alloy_arg *dims = cp_arg_named(h, n, "dims");
    for (int d = 0; d < orank; d++) {
      int64_t p = 0;
      h->arg_int(h->arg_list_item(dims, d), &p);
      out->strides[d] = in->strides[cp_wrap_dim(p, in->rank)];
    }
    return true;
  }
  if (!strcmp(name, "aten.t.default") || !strcmp(name, "aten.transpose.int")) {
    int d0 = 0, d1 = in->rank > 1 ? 1 : 0;
    if (!strcmp(name, "aten.transpose.int")) {
      d0 = cp_wrap_dim(cp_int_arg(h, n, "dim0", 0), in->rank);
      d1 = cp_wrap_dim(cp_int_arg(h, n, "dim1", 0), in->rank);
    }
    if (in->rank >= 1) {
      out->strides[d0] = in->strides[d1];
      out->strides[d1] = in->strides[d0];
    }
    return true;
  }
  if (!strcmp(name, "aten.expand.default")) {
    int lead = orank - in->rank;
    for (int d = 0; d < orank; d++) {
      int di = d - lead;
      out->strides[d] = di < 0 || (in->sizes[di] == 1 && osz[d] != 1) ? 0 : in->strides[di];
    }
    return true;
  }
  if (!strcmp(name, "aten.unsqueeze.default")) {
    int dim = (int)cp_int_arg(h, n, "dim", 0);
    if (dim < 0) dim += in->rank + 1;
    for (int d = 0, di = 0; d < orank; d++)
      out->strides[d] = d == dim ? (di < in->rank ? in->sizes[di] * in->strides[di] : 1) : in->strides[di++];
    return true;
  }
  if (!strncmp(name, "aten.squeeze.", 13)) {
    /* the kept dims are the input's, in order, whose sizes the output has */
    bool drop[CPU_MAX_RANK] = {false};
    int left = in->rank - orank;
    const alloy_arg *dims = cp_arg_named(h, n, "dim");
    for (int d = 0; d < in->rank && left > 0; d++) {
      bool named = !dims;
      if (dims && h->arg_type(dims) == ALLOY_ARG_TYPE_LIST) {
        for (int k = 0; k < h->arg_list_size(dims); k++) {
          int64_t x;
          if (h->arg_int(h->arg_list_item(dims, k), &x) && cp_wrap_dim(x, in->rank) == d) named = true;
        }
      } else if (dims) {
        int64_t x;
        named = h->arg_int(dims, &x) && cp_wrap_dim(x, in->rank) == d;
      }
      if (named && in->sizes[d] == 1) drop[d] = true, left--;
    }
    for (int d = 0, k = 0; d < in->rank; d++)
      if (!drop[d] && k < orank) out->strides[k++] = in->strides[d];
    return true;
  }
  if (!strcmp(name, "aten.slice.Tensor")) {
    int dim = cp_wrap_dim(cp_int_arg(h, n, "dim", 0), in->rank);
    int64_t size = in->sizes[dim], start = cp_int_arg(h, n, "start", 0), step = cp_int_arg(h, n, "step", 1);
    if (start < 0) start += size;
    if (start < 0) start = 0;
    if (start > size) start = size;
    memcpy(out->strides, in->strides, sizeof *in->strides * (size_t)in->rank);
    out->offset = in->offset + start * in->strides[dim];
    out->strides[dim] = in->strides[dim] * step;
    return true;
  }
  if (!strcmp(name, "aten.select.int")) {
    int dim = cp_wrap_dim(cp_int_arg(h, n, "dim", 0), in->rank);
    int64_t index = cp_int_arg(h, n, "index", 0);
    if (index < 0) index += in->sizes[dim];
    out->offset = in->offset + index * in->strides[dim];
    for (int d = 0, k = 0; d < in->rank; d++)
      if (d != dim) out->strides[k++] = in->strides[d];
    return true;
  }
  return false;
}

/* ---- kernels ------------------------------------------------------------------------ */

void cp_kernel_begin(kern *k, const int64_t *sizes, int rank, const char *what) {
  memset(k, 0, sizeof *k);
  k->rank = rank;
  memcpy(k->sizes, sizes, sizeof *sizes * (size_t)rank);
  if (what) cp_note(k, what);
}

/* Notes an op's short name ("aten.add.Tensor" -> "add") in the kernel's
 * description for traces: the first three, then a count. */
void cp_note(kern *k, const char *what) {
  const char *s = strncmp(what, "aten.", 5) ? what : what + 5;
  size_t len = strcspn(s, ".");
  if (k->nwhat < 3) {
    size_t at = strlen(k->what);
    snprintf(k->what + at, sizeof k->what - at, "%s%.*s", at ? "+" : "", (int)len, s);
  }
  k->nwhat++;
}

int cp_kernel_param(kern *k, int base) {
  for (int i = 0; i < k->nparams; i++)
    if (k->params[i] == base) return i;
  if (k->nparams == CPU_MAX_OPERANDS) return -1;
  k->params[k->nparams] = base;
  return k->nparams++;
}

/* The slot of plan tensor t (id `tensor`, or -1) in kernel k: its strides
 * over k's dims, right-aligned (broadcast dims have stride 0). */
int cp_kernel_slot(builder *b, kern *k, const cpu_tensor *t, int tensor) {
  for (int s = 0; tensor >= 0 && s < k->nslots; s++)
    if (k->slots[s].tensor == tensor) return s;
  int param = cp_kernel_param(k, t->base);
  if (param < 0 || k->nslots == CPU_MAX_OPERANDS) {
    cp_fail(b, NULL, "a loop nest of more than 64 tensors");
    return -1;
  }
  kslot *sl = &k->slots[k->nslots];
  memset(sl, 0, sizeof *sl);
  sl->tensor = tensor, sl->param = param, sl->dtype = t->dtype, sl->offset = t->offset;
  int lead = k->rank - t->rank;
  for (int d = 0; d < k->rank; d++) {
    int td = d - lead;
    sl->strides[d] = td < 0 || t->sizes[td] == 1 ? 0 : t->strides[td];
  }
  return k->nslots++;
}

cpu_step *cp_add_step(builder *b) {
  cpu_plan *p = b->plan;
  if (!cp_grow((void **)&p->steps, &b->cap_steps, p->nsteps + 1, sizeof *p->steps)) {
    cp_fail(b, NULL, "out of memory");
    return NULL;
  }
  cpu_step *s = &p->steps[p->nsteps++];
  memset(s, 0, sizeof *s);
  for (int i = 0; i < GEMM_OPERANDS; i++) s->gbase[i] = -1;
  return s;
}

/* The kernel already written with this text (a transformer's layers make
 * the same loops over other buffers: LLVM compiles each once), or -1 after
 * recording it as kernel id. */
static int kernel_seen(builder *b, const char *body, int id) {
  uint64_t hash = 1469598103934665603ull;
  for (const char *c = body; *c; c++) hash = (hash ^ (unsigned char)*c) * 1099511628211ull;
  for (int i = 0; i < b->nseen; i++)
    if (b->seen[i].hash == hash && !strcmp(b->seen[i].text, body)) return b->seen[i].id;
  if (cp_grow((void **)&b->seen, &b->cap_seen, b->nseen + 1, sizeof *b->seen)) {
    char *copy = strdup(body);
    if (copy) b->seen[b->nseen++] = (seen_kernel){hash, copy, id};
  }
  return -1;
}

void cp_kernel_finish(builder *b, kern *k) {
  cpu_plan *p = b->plan;
  if (k->fn.oom || k->body.oom) cp_fail(b, NULL, "out of memory");
  if (!b->err) {
    const char *fn = k->fn.s ? k->fn.s : "";
    int id = kernel_seen(b, fn, p->nkernels);
    if (id < 0) {
      id = p->nkernels++;
      ir_kernel_wrapper(&b->ir, id, k->nparams);
      ir_put(&b->ir, "define internal void @k%d.body%s", id, fn);
    }
    cpu_step *s = cp_add_step(b);
    if (s) {
      s->kind = STEP_KERNEL;
      s->kernel = id;
      s->rows = k->rows;
      s->row_work = k->row_work > 0 ? k->row_work : 1;
      snprintf(s->what, sizeof s->what, "%s", k->what);
      s->nparams = k->nparams;
      s->params = malloc(sizeof *s->params * (size_t)(k->nparams ? k->nparams : 1));
      if (!s->params) cp_fail(b, NULL, "out of memory");
      else memcpy(s->params, k->params, sizeof *s->params * (size_t)k->nparams);
    }
  }
  free(k->fn.s);
  free(k->body.s);
  k->fn = (text){0};
  k->body = (text){0};
}

/* Writes a pointwise kernel: k->body is the code of one element, reading
 * and writing slot s's element through %a.<s>, the element's linear index
 * in %lin. Coalesces k's dims where every slot allows, makes the last the
 * inner loop and the others the row loop. */
static void write_loop_nest(builder *b, kern *k) {
  int64_t sizes[CPU_MAX_RANK];
  int64_t strides[CPU_MAX_OPERANDS][CPU_MAX_RANK];
  int nd = 0;
  if (cp_numel_of(k->sizes, k->rank) == 0) { /* nothing to compute */
    free(k->fn.s), free(k->body.s);
    k->fn = (text){0}, k->body = (text){0};
    return;
  }
  for (int d = 0; d < k->rank; d++) {
    if (k->sizes[d] == 1) continue;
    bool merge = nd > 0;
    for (int s = 0; merge && s < k->nslots; s++)
      if (strides[s][nd - 1] != k->slots[s].strides[d] * k->sizes[d]) merge = false;
    if (merge) {
      sizes[nd - 1] *= k->sizes[d];
      for (int s = 0; s < k->nslots; s++) strides[s][nd - 1] = k->slots[s].strides[d];
    } else {
      sizes[nd] = k->sizes[d];
      for (int s = 0; s < k->nslots; s++) strides[s][nd] = k->slots[s].strides[d];
      nd++;
    }
  }
  if (nd == 0) {
    sizes[0] = 1;
    for (int s = 0; s < k->nslots; s++) strides[s][0] = 0;
    nd = 1;
  }
  int64_t inner = sizes[nd - 1];
  bool tiled = nd == 1 && inner > 2 * TILE;
  if (tiled) {
    sizes[1] = TILE;
    sizes[0] = (inner + TILE - 1) / TILE;
    for (int s = 0; s < k->nslots; s++) strides[s][1] = strides[s][0], strides[s][0] *= TILE;
    nd = 2;
  }
  int nouter = nd - 1;
  k->rank = nd;
  memcpy(k->sizes, sizes, sizeof *sizes * (size_t)nd);
  for (int s = 0; s < k->nslots; s++) memcpy(k->slots[s].strides, strides[s], sizeof *sizes * (size_t)nd);
  ir_kernel_open(k, nouter);
  char trip[32];
  int64_t row_len = sizes[nd - 1];
  if (tiled) {
    ir_put(&k->fn, "  %%tl0 = mul i64 %%o, %d\n  %%tl1 = sub i64 %" PRId64 ", %%tl0\n", TILE, inner);
    ir_put(&k->fn, "  %%tl2 = icmp ult i64 %%tl1, %d\n  %%trip = select i1 %%tl2, i64 %%tl1, i64 %d\n", TILE, TILE);
    snprintf(trip, sizeof trip, "%%trip");
  } else {
    snprintf(trip, sizeof trip, "%" PRId64, row_len);
  }
  ir_put(&k->fn, "  %%linb = mul i64 %%o, %" PRId64 "\n", row_len);
  ir_loop l;
  ir_loop_begin(k, &l, trip);
  ir_put(&k->fn, "  %%lin = add i64 %%linb, %s\n", l.iv);
  for (int s = 0; s < k->nslots; s++) {
    int64_t st = k->slots[s].strides[nd - 1];
    const char *mt = ir_mem_type(k->slots[s].dtype);
    if (st == 0) ir_put(&k->fn, "  %%e.%d = add i64 %%ro.%d, 0\n", s, s);
    else if (st == 1) ir_put(&k->fn, "  %%e.%d = add i64 %%ro.%d, %s\n", s, s, l.iv);
    else ir_put(&k->fn, "  %%m.%d = mul i64 %s, %" PRId64 "\n  %%e.%d = add i64 %%ro.%d, %%m.%d\n", s, l.iv, st, s, s, s);
    ir_put(&k->fn, "  %%a.%d = getelementptr inbounds %s, %s* %%t%d, i64 %%e.%d\n", s, mt, mt, s, s);
  }
  ir_append(&k->fn, &k->body);
  ir_loop_end(k, &l, trip);
  ir_kernel_close(k);
  k->row_work = row_len * (k->nslots ? k->nslots : 1);
  cp_kernel_finish(b, k);
}

/* A copy of tensor src into dst (same sizes), converting the dtype. */
void cp_emit_copy(builder *b, const cpu_tensor *src, const cpu_tensor *dst) {
  kern k;
  cp_kernel_begin(&k, dst->sizes, dst->rank, "copy");
  int ss = cp_kernel_slot(b, &k, src, -1), ds = cp_kernel_slot(b, &k, dst, -1);
  if (ss < 0 || ds < 0) return;
  char ptr[16];
  snprintf(ptr, sizeof ptr, "%%a.%d", ss);
  irv v = ir_load(&k, &k.body, ptr, src->dtype);
  snprintf(ptr, sizeof ptr, "%%a.%d", ds);
  ir_store(&k, &k.body, ptr, v, dst->dtype);
  write_loop_nest(b, &k);
}

/* ---- groups ------------------------------------------------------------------------- */

static int group_slot_of_id(builder *b, int id) {
  for (int i = 0; i < CPU_MAX_GROUPS; i++)
    if (b->groups[i].open && b->gid[i] == id) return i;
  return -1;
}

int cp_group_index(builder *b, const group *gr) { return b->gid[gr - b->groups]; }

group *cp_group_for(builder *b, const int64_t *sizes, int rank) {
  int free_slot = -1, oldest = -1;
  for (int i = 0; i < CPU_MAX_GROUPS; i++) {
    group *gr = &b->groups[i];
    if (!gr->open) {
      if (free_slot < 0) free_slot = i;
      continue;
    }
    if (gr->k.rank == rank && !memcmp(gr->k.sizes, sizes, sizeof *sizes * (size_t)rank)) return gr;
    if (oldest < 0 || b->gid[i] < b->gid[oldest]) oldest = i;
  }
  if (free_slot < 0) {
    cp_close_group(b, oldest);
    free_slot = oldest;
  }
  group *gr = &b->groups[free_slot];
  const alloy_value **vals = gr->vals;
  int cap = gr->cap_vals;
  memset(gr, 0, sizeof *gr);
  gr->vals = vals, gr->cap_vals = cap;
  cp_kernel_begin(&gr->k, sizes, rank, NULL);
  gr->open = true;
  b->gid[free_slot] = b->ngroup_ids++;
  return gr;
}

irv cp_group_load(builder *b, group *gr, int tensor) {
  for (int i = 0; i < gr->nloaded; i++)
    if (gr->loaded_tensor[i] == tensor) return gr->loaded_reg[i];
  int s = cp_kernel_slot(b, &gr->k, &b->tensors[tensor], tensor);
  if (s < 0) return (irv){.s = "0", .t = ALLOY_I64};
  char ptr[16];
  snprintf(ptr, sizeof ptr, "%%a.%d", s);
  irv v = ir_load(&gr->k, &gr->k.body, ptr, b->tensors[tensor].dtype);
  if (gr->nloaded < CPU_MAX_OPERANDS) {
    gr->loaded_tensor[gr->nloaded] = tensor;
    gr->loaded_reg[gr->nloaded++] = v;
  }
  return v;
}

void cp_group_define(builder *b, group *gr, const alloy_value *v, irv reg, const char *what) {
  vinfo *vi = cp_val(b, v);
  vi->group = cp_group_index(b, gr);
  vi->reg = reg;
  if (!cp_grow((void **)&gr->vals, &gr->cap_vals, gr->nvals + 1, sizeof *gr->vals)) {
    cp_fail(b, NULL, "out of memory");
    return;
  }
  gr->vals[gr->nvals++] = v;
  if (what) cp_note(&gr->k, what);
}

/* Whether value v, computed in group id, is read outside it: a graph
 * output, a view taken of it, or a user node of another group or step. */
static bool read_outside(builder *b, const alloy_value *v, int id) {
  const alloy_host_api *h = b->host;
  vinfo *vi = cp_val(b, v);
  if (vi->output >= 0 || vi->tensor >= 0) return true;
  for (int u = 0; u < h->value_num_users(v); u++) {
    const alloy_node *n = h->value_user(v, u);
    const cpu_op *op = cpu_op_find(h->node_op_name(n));
    if (op && op->kind == CPU_OP_NOP) continue;
    int idx = h->node_index(b->g, n);
    if (idx < 0 || b->node_group[idx] != id) return true;
  }
  return false;
}

void cp_close_group(builder *b, int slot) {
  group *gr = &b->groups[slot];
  if (!gr->open) return;
  int id = b->gid[slot];
  kern *k = &gr->k;
  for (int i = 0; i < gr->nvals && !b->err; i++) {
    const alloy_value *v = gr->vals[i];
    vinfo *vi = cp_val(b, v);
    if (read_outside(b, v, id)) {
      int t = cp_materialize(b, v);
      int s = t < 0 ? -1 : cp_kernel_slot(b, k, &b->tensors[t], t);
      if (s >= 0) {
        char ptr[16];
        snprintf(ptr, sizeof ptr, "%%a.%d", s);
        ir_store(k, &k->body, ptr, vi->reg, b->tensors[t].dtype);
      }
    }
    vi->group = -1;
  }
  for (int i = 0; i < b->plan->nbases; i++)
    if (b->pending[i] == id) b->pending[i] = -1;
  gr->open = false;
  gr->nvals = 0;
  if (!b->err) write_loop_nest(b, k);
  else free(k->fn.s), free(k->body.s), k->fn = (text){0}, k->body = (text){0};
}

void cp_close_all(builder *b) {
  /* in the order they opened: independent, but the plan reads better */
  for (;;) {
    int first = -1;
    for (int i = 0; i < CPU_MAX_GROUPS; i++)
      if (b->groups[i].open && (first < 0 || b->gid[i] < b->gid[first])) first = i;
    if (first < 0) return;
    cp_close_group(b, first);
  }
}

/* ---- memory ------------------------------------------------------------------------ */

int cp_materialize(builder *b, const alloy_value *v) {
  vinfo *vi = cp_val(b, v);
  if (vi->tensor >= 0) return vi->tensor;
  const alloy_host_api *h = b->host;
  int base;
  const alloy_tensor *as = NULL;
  if (vi->output >= 0) {
    base = cp_add_base(b, BASE_OUTPUT, vi->output, 0);
    if (b->layout) as = &b->layout->outputs[vi->output];
  } else {
    int64_t numel = 1, s = 0;
    for (int d = 0; d < h->value_rank(v); d++) h->value_size(v, d, &s), numel *= s;
    base = cp_add_base(b, BASE_TEMP, -1, (uint64_t)numel * alloy_dtype_size(h->value_dtype(v)));
  }
  if (base < 0) return -1;
  if (vi->group >= 0) b->pending[base] = vi->group;
  return vi->tensor = tensor_of_value(b, v, base, as);
}

int cp_in_memory(builder *b, const alloy_node *n, const alloy_value *v) {
  vinfo *vi = cp_val(b, v);
  if (vi->group >= 0) {
    int slot = group_slot_of_id(b, vi->group);
    cp_materialize(b, v);
    if (slot >= 0) cp_close_group(b, slot);
  }
  if (vi->tensor < 0) {
    cp_fail(b, n, "value %s is read before it is computed", b->host->value_name(v));
    return -1;
  }
  int base = b->tensors[vi->tensor].base;
  if (b->pending[base] >= 0) {
    int slot = group_slot_of_id(b, b->pending[base]);
    if (slot >= 0) cp_close_group(b, slot);
  }
  return vi->tensor;
}

/* ---- pointwise formulas --------------------------------------------------------------- */

/* PyTorch's type promotion over the operands of one node: dimensioned
 * tensors first, then zero-dim tensors, then Python scalars, each tier
 * counting only when its category (bool < integer < float) is higher. */
static int category(alloy_dtype t) { return t == ALLOY_BOOL ? 0 : alloy_dtype_is_float(t) ? 2 : 1; }

static alloy_dtype promote_pair(alloy_dtype a, alloy_dtype b) {
  if (a == b) return a;
  int ca = category(a), cb = category(b);
  if (ca != cb) return ca > cb ? a : b;
  if (ca == 2) {
    if (a == ALLOY_F64 || b == ALLOY_F64) return ALLOY_F64;
    return ALLOY_F32; /* float32 with anything, float16 with bfloat16 */
  }
  if ((a == ALLOY_U8 && b == ALLOY_I8) || (a == ALLOY_I8 && b == ALLOY_U8)) return ALLOY_I16;
  if (a == ALLOY_U8) return b;
  if (b == ALLOY_U8) return a;
  return alloy_dtype_size(a) > alloy_dtype_size(b) ? a : b;
}

static alloy_dtype promoted(const alloy_host_api *h, const alloy_node *n) {
  bool has[3] = {false};
  alloy_dtype t[3] = {ALLOY_BOOL, ALLOY_BOOL, ALLOY_BOOL};
  for (int i = 0; i < h->node_num_args(n); i++) {
    const alloy_arg *a = h->node_arg(n, i);
    int tier = -1;
    alloy_dtype d = ALLOY_BOOL;
    switch (h->arg_type(a)) {
      case ALLOY_ARG_TYPE_VALUE: {
        const alloy_value *v = h->arg_value(a);
        if (h->value_kind(v) != 0) break;
        tier = h->value_rank(v) ? 0 : 1, d = h->value_dtype(v);
        break;
      }
      case ALLOY_ARG_TYPE_INT: tier = 2, d = ALLOY_I64; break;
      case ALLOY_ARG_TYPE_FLOAT: tier = 2, d = ALLOY_F64; break;
      case ALLOY_ARG_TYPE_BOOL: tier = 2, d = ALLOY_BOOL; break;
      default: break;
    }
    if (tier < 0) continue;
    t[tier] = has[tier] ? promote_pair(t[tier], d) : d;
    has[tier] = true;
  }
  alloy_dtype r = ALLOY_BOOL;
  bool any = false;
  for (int k = 0; k < 3; k++) {
    if (!has[k]) continue;
    alloy_dtype d = t[k];
    if (k == 2 && category(d) == 2) d = ALLOY_F32; /* a float scalar: the default dtype */
    if (k == 2 && category(d) == 1) d = ALLOY_I64;
    if (!any) r = d, any = true;
    else if (category(d) > category(r)) r = d;
  }
  return r;
}

/* Scalar arguments PyTorch converts to the tensor's dtype before the
 * arithmetic (a float16 `other` is rounded to float16 first), while alpha
 * and the activations' slopes stay in opmath. */
static bool rounds_to_dtype(const char *name) {
  static const char *names[] = {"other", "value", "min", "max", "min_val", "max_val"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (!strcmp(names[i], name)) return true;
  return false;
}

static double round_to(alloy_dtype t, double v) {
  if (t == ALLOY_F16) return alloy_f32_from_f16(alloy_f16_from_f32((float)v));
  if (t == ALLOY_BF16) return alloy_f32_from_bf16(alloy_bf16_from_f32((float)v));
  return v;
}

/* A scalar argument as a constant of register type ct (cd: the compute
 * dtype before opmath, for the rounding of `other`). */
static irv scalar_const(const alloy_host_api *h, const alloy_arg *a, alloy_dtype ct, alloy_dtype cd, bool round) {
  int64_t i;
  double f;
  int bv;
  switch (h->arg_type(a)) {
    case ALLOY_ARG_TYPE_INT:
      h->arg_int(a, &i);
      if (round && alloy_dtype_is_float(cd)) return ir_const_f(round_to(cd, (double)i), ct);
      return ir_const_i(i, ct);
    case ALLOY_ARG_TYPE_BOOL: h->arg_bool(a, &bv); return ir_const_i(bv ? 1 : 0, ct);
    case ALLOY_ARG_TYPE_FLOAT:
      h->arg_float(a, &f);
      return ir_const_f(round ? round_to(cd, f) : f, ct);
    case ALLOY_ARG_TYPE_STR: /* gelu's approximate: "tanh" is true */
      return ir_const_i(h->arg_str(a) && !strcmp(h->arg_str(a), "tanh"), ALLOY_BOOL);
    default: return ir_const_i(0, ct);
  }
}

typedef struct formula {
  builder *b;
  group *gr;
  const alloy_node *n;
  const cpu_op *op;
  alloy_dtype ct, cd; /* the compute register type; the compute dtype */
  const char *p;
} formula;

/* The register of tensor value v in group gr: its register there, or a
 * load of the tensor holding it. */
static irv operand(formula *f, const alloy_value *v) {
  builder *b = f->b;
  vinfo *vi = cp_val(b, v);
  if (vi->group >= 0 && vi->group == cp_group_index(b, f->gr)) return vi->reg;
  if (vi->tensor < 0) {
    cp_fail(b, f->n, "value %s is read before it is computed", b->host->value_name(v));
    return ir_const_i(0, f->ct);
  }
  return cp_group_load(b, f->gr, vi->tensor);
}

static bool eval(formula *f, irv *out) {
  builder *b = f->b;
  const alloy_host_api *h = b->host;
  kern *k = &f->gr->k;
  const char *p = f->p;
  while (*p == ' ') p++;
  if (p[0] == '$' && p[1] >= '0' && p[1] <= '9') {
    int j = p[1] - '0';
    const alloy_arg *a = h->node_arg(f->n, j);
    /* PyTorch casts every operand to the common dtype first: for float16
     * and bfloat16, which compute in float, an operand of another dtype
     * is rounded to it (but mul's and div's one-element `other`) */
    bool half = f->cd == ALLOY_F16 || f->cd == ALLOY_BF16, keep = false;
    if (a && h->arg_type(a) == ALLOY_ARG_TYPE_VALUE) {
      const alloy_value *v = h->arg_value(a);
      *out = operand(f, v);
      int64_t numel = 1, s;
      for (int d = 0; d < h->value_rank(v); d++) numel *= h->value_size(v, d, &s) ? s : 2;
      keep = f->op->scalar_opmath && j == 1 && numel == 1;
      if (half && !keep && h->value_dtype(v) != f->cd && j != f->op->bool_operand)
        *out = ir_round(k, &k->body, ir_cast(k, &k->body, *out, ALLOY_F32), f->cd);
    } else {
      keep = f->op->scalar_opmath && j == 1;
      *out = a ? scalar_const(h, a, f->ct, f->cd, half && !keep) : ir_const_i(0, f->ct);
    }
    if (j == f->op->bool_operand) *out = ir_cast(k, &k->body, *out, ALLOY_BOOL);
    f->p = p + 2;
    return true;
  }
  if (p[0] == '$' && p[1] == 'i') {
    *out = (irv){.s = "%lin", .t = ALLOY_I64};
    f->p = p + 2;
    return true;
  }
  if (p[0] == '$' && p[1] == '{') {
    const char *end = strchr(p, '}');
    char name[64];
    size_t len = end ? (size_t)(end - p - 2) : 0;
    if (!end || len >= sizeof name) return false;
    memcpy(name, p + 2, len);
    name[len] = 0;
    bool optional = len && name[len - 1] == '?';
    if (optional) name[len - 1] = 0;
    const alloy_arg *a = cp_arg_named(h, f->n, name);
    if (a && h->arg_type(a) == ALLOY_ARG_TYPE_VALUE) *out = operand(f, h->arg_value(a));
    else if (a && h->arg_type(a) != ALLOY_ARG_TYPE_NONE)
      *out = scalar_const(h, a, f->ct, f->cd, rounds_to_dtype(name) && !f->op->scalar_opmath);
    else if (optional) *out = (irv){.s = "", .t = f->ct}; /* absent */
    else *out = ir_const_i(1, f->ct);                     /* an absent alpha */
    f->p = end + 1;
    return true;
  }
  if (p[0] == '#') {
    char *end;
    double v = strtod(p + 1, &end);
    *out = ir_const_f(v, f->ct);
    f->p = end;
    return true;
  }
  char name[24];
  size_t len = 0;
  while ((p[len] >= 'a' && p[len] <= 'z') || p[len] == '_' || (p[len] >= '0' && p[len] <= '9')) len++;
  if (!len || len >= sizeof name || p[len] != '(') return false;
  memcpy(name, p, len);
  name[len] = 0;
  f->p = p + len + 1;
  irv args[3];
  int nargs = 0;
  for (;;) {
    if (nargs == 3 || !eval(f, &args[nargs])) return false;
    nargs++;
    while (*f->p == ' ') f->p++;
    if (*f->p == ',') {
      f->p++;
      continue;
    }
    if (*f->p != ')') return false;
    f->p++;
    break;
  }
  if (!ir_prim(k, &k->body, name, args, nargs, f->ct, out)) {
    cp_fail(b, f->n, "no %s of %s", name, alloy_dtype_name(f->cd));
    return false;
  }
  return true;
}

/* The open group of v's iteration shape, after making sure the node can
 * join it: an operand an open group is still to write (a view of one of
 * its values) makes that group close first, and an operand in another
 * group's registers is stored. */
group *cp_join_group(builder *b, const alloy_node *n, const alloy_value *out, bool reads) {
  const alloy_host_api *h = b->host;
  int64_t sizes[CPU_MAX_RANK];
  int rank = h->value_rank(out);
  for (int d = 0; d < rank; d++)
    if (!h->value_size(out, d, &sizes[d])) {
      cp_fail(b, n, "symbolic sizes reach compile");
      return NULL;
    }
  const alloy_value *in[CPU_MAX_OPERANDS];
  int nin = reads ? cp_tensor_operands(h, n, in, CPU_MAX_OPERANDS) : 0;
  if (nin > CPU_MAX_OPERANDS) nin = CPU_MAX_OPERANDS;
  group *mine = cp_group_for(b, sizes, rank);
  int my_id = cp_group_index(b, mine);
  for (int j = 0; j < nin; j++) { /* pass 1: a tensor this group still writes */
    vinfo *vi = cp_val(b, in[j]);
    if (vi->group < 0 && vi->tensor >= 0 && b->pending[b->tensors[vi->tensor].base] == my_id) {
      cp_close_group(b, (int)(mine - b->groups));
      mine = cp_group_for(b, sizes, rank);
      my_id = cp_group_index(b, mine);
      break;
    }
  }
  for (int j = 0; j < nin && !b->err; j++) { /* pass 2: everything else in memory */
    vinfo *vi = cp_val(b, in[j]);
    if (vi->group == my_id) continue;
    cp_in_memory(b, n, in[j]);
  }
  /* a group closed above may have been this one's slot only if it was the
   * same group, which pass 2 skips */
  return b->err ? NULL : mine;
}

static void emit_pointwise(builder *b, const alloy_node *n, int index, const cpu_op *op) {
  const alloy_host_api *h = b->host;
  const alloy_value *out = h->node_output(n, 0);
  group *gr = cp_join_group(b, n, out, op->kind == CPU_OP_POINTWISE);
  if (!gr) return;
  b->node_group[index] = cp_group_index(b, gr);
  alloy_dtype rt = h->value_dtype(out);
  alloy_dtype cd = op->ct == CT_BOOL       ? ALLOY_BOOL
                   : op->ct == CT_PROMOTED ? promoted(h, n)
                   : op->ct == CT_ACC      ? (alloy_dtype_is_float(rt) ? ALLOY_F64 : ALLOY_I64)
                                           : rt;
  formula f = {.b = b, .gr = gr, .n = n, .op = op, .ct = ir_reg_dtype(cd), .cd = cd, .p = op->expr};
  irv v;
  if (!eval(&f, &v) || *f.p) {
    cp_fail(b, n, "bad formula %s", op->expr);
    return;
  }
  kern *k = &gr->k;
  v = ir_cast(k, &k->body, v, rt);
  v = ir_round(k, &k->body, v, rt);
  cp_group_define(b, gr, out, v, h->node_op_name(n));
  b->plan->nfused_nodes++;
}

/* ---- the plan ------------------------------------------------------------------------ */

static void emit_view(builder *b, const alloy_node *n) {
  const alloy_host_api *h = b->host;
  const alloy_value *in[1], *out = h->node_output(n, 0);
  if (cp_tensor_operands(h, n, in, 1) != 1) return (void)cp_fail(b, n, "a view of no tensor");
  vinfo *vi = cp_val(b, in[0]);
  if (vi->group >= 0) cp_materialize(b, in[0]); /* stored when its group closes */
  if (vi->tensor < 0) return (void)cp_fail(b, n, "its input is not computed");
  for (int d = 0; d < h->value_rank(out); d++)
    if (!h->value_size(out, d, &(int64_t){0})) return (void)cp_fail(b, n, "symbolic sizes reach compile");
  cpu_tensor src = b->tensors[vi->tensor], view = src;
  const cpu_op *op = cpu_op_find(h->node_op_name(n));
  if (op && op->kind == CPU_OP_POINTWISE) {
    /* a copy (clone) of a tensor in memory: values are never written in
     * place here, so the copy is the same memory */
  } else if (!view_of(b, n, &src, out, &view)) {
    /* a reshape of a layout no view expresses: a dense copy, then the view */
    int t = cp_in_memory(b, n, in[0]);
    if (t < 0) return;
    src = b->tensors[t];
    int dt = cp_temp_like(b, &src, src.dtype);
    if (dt < 0) return;
    cp_emit_copy(b, &src, &b->tensors[dt]);
    if (!view_of(b, n, &b->tensors[dt], out, &view)) return (void)cp_fail(b, n, "no view of the copied input");
  }
  int t = cp_add_tensor(b, &view);
  if (t >= 0) cp_val(b, out)->tensor = t;
}

/* Outputs not written where they belong (an input, a view, a value
 * returned twice): copies from where they are. */
static void emit_output_copies(builder *b) {
  const alloy_host_api *h = b->host;
  for (int j = 0; j < h->graph_num_outputs(b->g) && !b->err; j++) {
    const alloy_value *v = h->graph_output(b->g, j);
    int t = cp_in_memory(b, NULL, v);
    if (t < 0) return;
    const cpu_base *base = &b->plan->bases[b->tensors[t].base];
    if (base->kind == BASE_OUTPUT && base->index == j) continue;
    int ob = cp_add_base(b, BASE_OUTPUT, j, 0);
    if (ob < 0) return;
    cpu_tensor dst = b->tensors[t];
    dst.base = ob, dst.offset = 0;
    dense_strides(&dst);
    const alloy_tensor *as = b->layout ? &b->layout->outputs[j] : NULL;
    if (as && as->rank == dst.rank && as->strides)
      for (int d = 0; d < dst.rank; d++) dst.strides[d] = as->strides[d];
    cp_emit_copy(b, &b->tensors[t], &dst);
  }
}

/* clone, _to_copy to the same dtype and the like, of a tensor in memory:
 * no copy at all (a value in a group's registers stays a register copy,
 * which keeps the group whole). */
static bool is_alias_copy(builder *b, const alloy_node *n, const cpu_op *op) {
  const alloy_host_api *h = b->host;
  const alloy_value *in[1];
  if (strcmp(op->expr, "$0") != 0 || cp_tensor_operands(h, n, in, 1) != 1) return false;
  if (h->value_dtype(in[0]) != h->value_dtype(h->node_output(n, 0))) return false;
  vinfo *vi = cp_val(b, in[0]);
  return vi->group < 0 && vi->tensor >= 0;
}

/* ---- the scratch arena ------------------------------------------------------------- */

typedef struct block {
  uint64_t offset, bytes;
} block;

/* Gives the temporaries their offsets in the scratch arena by their
 * lifetimes (the first and last step that names their base): a linear
 * scan in step order, best fit among the blocks of the temporaries dead
 * before the step, else the arena's end. A transformer's activations then
 * reuse a few megabytes instead of one range each, which keeps a run's
 * working set in the caches. */
static void place_temporaries(builder *b) {
  cpu_plan *p = b->plan;
  int nb = p->nbases;
  int *first = malloc(sizeof *first * (size_t)(nb + 1)), *last = malloc(sizeof *last * (size_t)(nb + 1));
  block *freel = malloc(sizeof *freel * (size_t)(2 * nb + 1));
  if (!first || !last || !freel) {
    free(first), free(last), free(freel);
    cp_fail(b, NULL, "out of memory");
    return;
  }
  for (int i = 0; i < nb; i++) first[i] = -1, last[i] = -1;
  for (int i = 0; i < p->nsteps; i++) {
    const cpu_step *s = &p->steps[i];
    int n = s->kind == STEP_GEMM ? GEMM_OPERANDS : s->nparams;
    for (int j = 0; j < n; j++) {
      int base = s->kind == STEP_GEMM ? s->gbase[j] : s->params[j];
      if (base < 0) continue;
      if (first[base] < 0) first[base] = i;
      last[base] = i;
    }
  }
  int nfree = 0;
  uint64_t top = 0;
  for (int i = 0; i < p->nsteps; i++) {
    for (int t = 0; t < nb; t++) { /* born at step i */
      cpu_base *base = &p->bases[t];
      if (base->kind != BASE_TEMP || first[t] != i) continue;
      uint64_t need = (base->bytes + 63) & ~(uint64_t)63;
      int best = -1;
      for (int f = 0; f < nfree; f++)
        if (freel[f].bytes >= need && (best < 0 || freel[f].bytes < freel[best].bytes)) best = f;
      if (best >= 0) {
        base->offset = freel[best].offset;
        freel[best].offset += need, freel[best].bytes -= need;
        if (!freel[best].bytes) freel[best] = freel[--nfree];
      } else {
        base->offset = top;
        top += need;
      }
    }
    for (int t = 0; t < nb; t++) { /* dead after step i */
      cpu_base *base = &p->bases[t];
      if (base->kind != BASE_TEMP || last[t] != i) continue;
      uint64_t need = (base->bytes + 63) & ~(uint64_t)63;
      if (!need) continue;
      freel[nfree++] = (block){base->offset, need};
      /* merge with neighbours, so that a larger temporary fits later */
      for (int again = 1; again;) {
        again = 0;
        for (int f = 0; f < nfree && !again; f++)
          for (int g = 0; g < nfree && !again; g++)
            if (f != g && freel[f].offset + freel[f].bytes == freel[g].offset) {
              freel[f].bytes += freel[g].bytes;
              freel[g] = freel[--nfree];
              again = 1;
            }
      }
    }
  }
  p->scratch_bytes = top;
  free(first), free(last), free(freel);
}

static void emit_node(builder *b, int i) {
  const alloy_host_api *h = b->host;
  const alloy_node *n = h->graph_node(b->g, i);
  const cpu_op *op = cpu_op_find(h->node_op_name(n));
  if (b->skip[i]) return;
  const char *why = cpu_node_unsupported(h, n);
  if (why) return (void)cp_fail(b, n, "%s", why);
  switch (op->kind) {
    case CPU_OP_NOP: return;
    case CPU_OP_VIEW: emit_view(b, n); return;
    case CPU_OP_POINTWISE:
      if (is_alias_copy(b, n, op)) {
        emit_view(b, n);
        return;
      }
      emit_pointwise(b, n, i, op);
      return;
    case CPU_OP_FILL: emit_pointwise(b, n, i, op); return;
    default: {
      static void (*const emitters[])(builder *, const alloy_node *, const cpu_op *) = {
          [ROWS_REDUCE] = cp_emit_reduce, [ROWS_LAYER_NORM] = cp_emit_layer_norm, [ROWS_GEMM] = cp_emit_gemm,
          [ROWS_EMBEDDING] = cp_emit_embedding, [ROWS_INDEX] = cp_emit_index, [ROWS_GATHER] = cp_emit_gather,
          [ROWS_CAT] = cp_emit_cat, [ROWS_CUMSUM] = cp_emit_cumsum, [ROWS_CONV] = cp_emit_conv, [ROWS_ATTENTION] = cp_emit_attention,
          [ROWS_POOL] = cp_emit_pool,
      };
      emitters[op->rows](b, n, op);
    }
  }
}

alloy_error *cpu_plan_build(const alloy_host_api *h, const alloy_graph *g, const cpu_layout *layout,
                            const cpu_plan_options *options, cpu_plan *plan) {
  memset(plan, 0, sizeof *plan);
  builder b = {.host = h, .g = g, .layout = layout, .plan = plan};
  if (options) b.opt = *options;
  int nn = h->graph_num_nodes(g), ni = h->graph_num_inputs(g), no = h->graph_num_outputs(g);
  b.cap_vals = 64;
  while (b.cap_vals < 4 * (nn + ni + no) + 64) b.cap_vals *= 2;
  b.vals = calloc((size_t)b.cap_vals, sizeof *b.vals);
  b.node_group = malloc(sizeof *b.node_group * (size_t)(nn ? nn : 1));
  b.skip = calloc((size_t)(nn ? nn : 1), sizeof *b.skip);
  if (!b.vals || !b.node_group || !b.skip) {
    free(b.vals), free(b.node_group), free(b.skip);
    return h->error_new(ALLOY_ERR_OUT_OF_MEMORY, "cpu: out of memory");
  }
  for (int i = 0; i < nn; i++) b.node_group[i] = -1;
  ir_prelude(&b.ir);
  for (int i = 0; i < ni && !b.err; i++) {
    const alloy_value *v = h->graph_input(g, i);
    if (h->value_kind(v) != 0) continue;
    int base = cp_add_base(&b, BASE_INPUT, i, 0);
    if (base >= 0) cp_val(&b, v)->tensor = tensor_of_value(&b, v, base, layout ? &layout->inputs[i] : NULL);
  }
  /* A value computed here that is an output is written there directly. */
  for (int j = 0; j < no; j++) {
    vinfo *vi = cp_val(&b, h->graph_output(g, j));
    if (vi->tensor < 0 && vi->output < 0) vi->output = j;
  }
  for (int i = 0; i < nn && !b.err; i++) emit_node(&b, i);
  if (!b.err) cp_close_all(&b);
  if (!b.err) emit_output_copies(&b);
  if (!b.err) place_temporaries(&b);
  for (int i = 0; i < CPU_MAX_GROUPS; i++) {
    free(b.groups[i].vals);
    free(b.groups[i].k.fn.s);
    free(b.groups[i].k.body.s);
  }
  free(b.vals);
  free(b.node_group);
  free(b.skip);
  free(b.tensors);
  free(b.pending);
  for (int i = 0; i < b.nseen; i++) free(b.seen[i].text);
  free(b.seen);
  if (b.ir.oom && !b.err) cp_fail(&b, NULL, "out of memory");
  plan->ir = b.ir.s;
  plan->ir_len = b.ir.len;
  if (b.err) {
    cpu_plan_free(plan);
    return b.err;
  }
  return NULL;
}

void cpu_plan_free(cpu_plan *plan) {
  for (int i = 0; i < plan->nsteps; i++) free(plan->steps[i].params);
  free(plan->steps);
  free(plan->bases);
  free(plan->ir);
  memset(plan, 0, sizeof *plan);
}
