/*
 * sdk/kernel_table/kt_execute.c: compiling a partition into call plans and
 * running them, for the kernel-table helper (kernel_table.c is the plugin
 * around this).
 *
 * compile() gives every value of the partition a slot (graph inputs first,
 * then each node's outputs in order), matches each node to its kernel row,
 * binds each signature parameter to an operand or a scalar argument, and
 * prepares the libffi call interface once. execute() walks the steps in
 * order on host memory: it allocates each node's outputs (intermediates
 * here, graph outputs directly in the host's buffers when they are laid out
 * contiguously), stages every operand the way the signature asks (a
 * contiguous copy unless strides(X) is asked; an input broadcast to out0's
 * shape when the kernel asks nothing about its shape), calls the kernel,
 * and frees intermediates after their last use. Graph outputs not computed
 * in place (a graph input, an output listed twice, a strided host buffer)
 * are copied at the end; one whose sizes depend on the data comes from the
 * host without a buffer (alloy/plugin.h), and gets one of ours then.
 *
 * An executable is read-only once compiled; everything execute() changes is
 * allocated per call, so calls on distinct queues may run at once.
 */
#include <ctype.h>
#include <ffi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/checked.h"
#include "sdk/kernel_table/kt_internal.h"

/* Where an arg(NAME) parameter's value comes from. */
enum {
  KT_SRC_INT,    /* a literal integer or bool, in i   */
  KT_SRC_FLOAT,  /* a literal float, in f             */
  KT_SRC_SYMINT, /* a SymInt value, evaluated per run */
  KT_SRC_SLOT,   /* a float or bool value of the graph, read from its slot */
};

typedef struct kt_bind {
  int operand; /* operand index: K of inK, nin + K of outK */
  int source;  /* arg(NAME): KT_SRC_* */
  int64_t i;
  double f;
  const alloy_value *value;
  int slot; /* -1 when the value has none */
} kt_bind;

typedef struct kt_step {
  const alloy_node *node;
  int node_index;
  const alloy_kernel *kernel;
  kt_sig sig;
  ffi_cif cif;
  ffi_type *atypes[KT_MAX_PARAMS];
  kt_bind bind[KT_MAX_PARAMS];
  int nin, nout;
  int *slots;     /* per operand: its value's slot        */
  uint8_t *flags; /* per operand: KT_F_* of the signature */
  int32_t *input_arg, *input_item; /* per input: alloy_kernel_call's */
  int *dead;      /* slots whose last use is this step    */
  int ndead;
  bool has_call;
} kt_step;

struct alloy_executable {
  kt_obj obj; /* first: the backend's object list */
  const alloy_host_api *host;
  const alloy_graph *graph; /* the partition, alive until release */
  int nslots, ninputs, noutputs;
  const alloy_value **slot_value;
  int *output_slot; /* per graph output                            */
  int *slot_direct; /* per slot: graph output computed in place, or -1 */
  kt_step *steps;
  int nsteps;
  int max_operands;
};

/* ---- the libffi types of parameters ----------------------------------- */

static ffi_type *const kt_scalar_ffi[] = {
    [KT_S_I32] = &ffi_type_sint32, [KT_S_I64] = &ffi_type_sint64, [KT_S_F32] = &ffi_type_float,
    [KT_S_F64] = &ffi_type_double, [KT_S_BOOL] = &ffi_type_sint,
};

static ffi_type *const kt_kind_ffi[] = {
    [KT_P_DATA] = &ffi_type_pointer,     [KT_P_NUMEL] = &ffi_type_sint64,
    [KT_P_RANK] = &ffi_type_sint32,      [KT_P_SIZE] = &ffi_type_sint64,
    [KT_P_SIZES] = &ffi_type_pointer,    [KT_P_STRIDES] = &ffi_type_pointer,
    [KT_P_BSTRIDES] = &ffi_type_pointer, [KT_P_ARG] = NULL, /* by its type */
    [KT_P_CALL] = &ffi_type_pointer,
};

/* ---- a value -> slot map used while compiling ---------------------------- */

typedef struct kt_map {
  const alloy_value **keys;
  int *slots;
  size_t mask;
} kt_map;

static size_t kt_hash(const alloy_value *v) {
  return (size_t)(((uintptr_t)v >> 4) * (uintptr_t)0x9E3779B97F4A7C15ull);
}

static bool kt_map_init(kt_map *m, int n) {
  size_t cap = 16;
  while (cap < (size_t)n * 2) cap *= 2;
  m->keys = calloc(cap, sizeof *m->keys);
  m->slots = calloc(cap, sizeof *m->slots);
  m->mask = cap - 1;
  return m->keys && m->slots;
}

static void kt_map_free(kt_map *m) {
  free(m->keys);
  free(m->slots);
}

static void kt_map_put(kt_map *m, const alloy_value *v, int slot) {
  size_t i = kt_hash(v) & m->mask;
  while (m->keys[i] && m->keys[i] != v) i = (i + 1) & m->mask;
  m->keys[i] = v;
  m->slots[i] = slot;
}

static int kt_map_get(const kt_map *m, const alloy_value *v) {
  for (size_t i = kt_hash(v) & m->mask; m->keys[i]; i = (i + 1) & m->mask)
    if (m->keys[i] == v) return m->slots[i];
  return -1;
}

/* ---- compile ---------------------------------------------------------------- */

void alloy_kt_executable_free(alloy_executable *exe) {
  if (!exe) return;
  for (int s = 0; exe->steps && s < exe->nsteps; s++) {
    free(exe->steps[s].slots);
    free(exe->steps[s].flags);
    free(exe->steps[s].input_arg);
    free(exe->steps[s].input_item);
    free(exe->steps[s].dead);
  }
  free(exe->steps);
  free(exe->slot_value);
  free(exe->output_slot);
  free(exe->slot_direct);
  free(exe);
}

static alloy_error *kt_oom(const alloy_host_api *h) {
  return h->error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory compiling a partition");
}

/* Resolves arg(NAME) of p for node n. The claim checked it converts. */
static void kt_bind_arg(const alloy_host_api *h, const alloy_node *n, const kt_param *p,
                        const kt_map *map, kt_bind *b) {
  const alloy_arg *a = h->node_arg(n, alloy_kt_find_arg(h, n, p->name, p->name_len));
  int flag;
  b->slot = -1;
  switch (h->arg_type(a)) {
    case ALLOY_ARG_TYPE_FLOAT:
      b->source = KT_SRC_FLOAT;
      h->arg_float(a, &b->f);
      break;
    case ALLOY_ARG_TYPE_BOOL:
      b->source = KT_SRC_INT;
      b->i = h->arg_bool(a, &flag) && flag;
      break;
    case ALLOY_ARG_TYPE_VALUE:
      b->value = h->arg_value(a);
      b->slot = kt_map_get(map, b->value);
      b->source = h->value_kind(b->value) == 1 ? KT_SRC_SYMINT : KT_SRC_SLOT;
      break;
    default:
      b->source = KT_SRC_INT;
      h->arg_int(a, &b->i);
      break;
  }
}

/* Builds step st for node n (index i); marks each slot's last use. */
static alloy_error *kt_plan_step(alloy_executable *exe, const alloy_kernel_table *t,
                                 const kt_map *map, const int *def_step, int *last_use, int i,
                                 kt_step *st) {
  const alloy_host_api *h = exe->host;
  const alloy_node *n = h->graph_node(exe->graph, i);
  char label[320], why[384];
  alloy_kt_node_label(h, n, i, label, sizeof label);
  kt_operands ops;
  if (!alloy_kt_operands(h, n, &ops)) return kt_oom(h);
  st->node = n;
  st->node_index = i;
  int row = alloy_kt_match(h, t, n, &ops, &st->sig, why, sizeof why);
  if (row < 0) {
    alloy_kt_operands_free(&ops);
    return alloy_kt_error(h, ALLOY_ERR_UNSUPPORTED, "%s: no kernel of backend %s runs it: %s", label,
                          t->name, why);
  }
  st->kernel = &t->kernels[row];
  st->nin = ops.nin;
  st->nout = ops.nout;
  int nops = ops.nin + ops.nout;
  if (nops > exe->max_operands) exe->max_operands = nops;
  st->slots = calloc((size_t)nops + 1, sizeof *st->slots);
  st->flags = calloc((size_t)nops + 1, sizeof *st->flags);
  st->input_arg = calloc((size_t)ops.nin + 1, sizeof *st->input_arg);
  st->input_item = calloc((size_t)ops.nin + 1, sizeof *st->input_item);
  if (!st->slots || !st->flags || !st->input_arg || !st->input_item) {
    alloy_kt_operands_free(&ops);
    return kt_oom(h);
  }
  if (ops.nin) {
    memcpy(st->input_arg, ops.arg, (size_t)ops.nin * sizeof *st->input_arg);
    memcpy(st->input_item, ops.item, (size_t)ops.nin * sizeof *st->input_item);
  }
  alloy_error *e = NULL;
  for (int k = 0; k < nops && !e; k++) {
    int s = kt_map_get(map, ops.values[k]);
    const char *vname = h->value_name(ops.values[k]);
    if (s < 0 || (k < ops.nin && def_step[s] >= i))
      e = alloy_kt_error(h, ALLOY_ERR_INVALID_ARGUMENT,
                         "%s: reads %s, which is neither an input of the partition nor made by an "
                         "earlier node", label, vname ? vname : "?");
    st->slots[k] = s;
    bool is_out = k >= ops.nin;
    st->flags[k] = (uint8_t)alloy_kt_sig_operand_flags(&st->sig, is_out, is_out ? k - ops.nin : k);
    if (s >= 0 && (st->flags[k] & KT_F_USED || is_out)) last_use[s] = i;
  }
  alloy_kt_operands_free(&ops);
  if (e) return e;

  ffi_type *rtype = st->sig.returns_int ? &ffi_type_sint : &ffi_type_void;
  for (int p = 0; p < st->sig.nparams; p++) {
    const kt_param *prm = &st->sig.params[p];
    kt_bind *b = &st->bind[p];
    b->operand = prm->is_out ? st->nin + prm->index : prm->index;
    if (prm->kind == KT_P_CALL) st->has_call = true;
    if (prm->kind == KT_P_ARG) {
      kt_bind_arg(h, n, prm, map, b);
      if (b->slot >= 0 && last_use[b->slot] < i) last_use[b->slot] = i;
      if (b->source == KT_SRC_SLOT && b->slot < 0)
        return alloy_kt_error(h, ALLOY_ERR_INVALID_ARGUMENT,
                              "%s: arg(%.*s) is a value the partition does not have", label,
                              (int)prm->name_len, prm->name);
    }
    st->atypes[p] = prm->kind == KT_P_ARG ? kt_scalar_ffi[prm->scalar] : kt_kind_ffi[prm->kind];
  }
  ffi_status fs = ffi_prep_cif(&st->cif, FFI_DEFAULT_ABI, (unsigned)st->sig.nparams, rtype, st->atypes);
  if (fs != FFI_OK)
    return alloy_kt_error(h, ALLOY_ERR_INTERNAL, "%s: libffi cannot prepare the call \"%s\" (status %d)",
                          label, st->kernel->signature, (int)fs);
  return NULL;
}

/* Intermediates are freed after their last use; graph outputs live on. */
static alloy_error *kt_plan_frees(alloy_executable *exe, const int *last_use) {
  bool *is_output = calloc((size_t)exe->nslots + 1, sizeof *is_output);
  int *count = calloc((size_t)exe->nsteps + 1, sizeof *count);
  if (!is_output || !count) {
    free(is_output);
    free(count);
    return kt_oom(exe->host);
  }
  for (int j = 0; j < exe->noutputs; j++) is_output[exe->output_slot[j]] = true;
  for (int s = exe->ninputs; s < exe->nslots; s++)
    if (!is_output[s] && last_use[s] >= 0) count[last_use[s]]++;
  alloy_error *e = NULL;
  for (int i = 0; i < exe->nsteps && !e; i++) {
    exe->steps[i].dead = calloc((size_t)count[i] + 1, sizeof(int));
    if (!exe->steps[i].dead) e = kt_oom(exe->host);
  }
  for (int s = exe->ninputs; s < exe->nslots && !e; s++)
    if (!is_output[s] && last_use[s] >= 0) {
      kt_step *st = &exe->steps[last_use[s]];
      st->dead[st->ndead++] = s;
    }
  free(is_output);
  free(count);
  return e;
}

static alloy_error *kt_plan(alloy_executable *exe, const alloy_kernel_table *t) {
  const alloy_host_api *h = exe->host;
  const alloy_graph *g = exe->graph;
  int nslots = exe->ninputs;
  for (int i = 0; i < exe->nsteps; i++) nslots += h->node_num_outputs(h->graph_node(g, i));
  exe->nslots = nslots;
  exe->slot_value = calloc((size_t)nslots + 1, sizeof *exe->slot_value);
  exe->slot_direct = calloc((size_t)nslots + 1, sizeof *exe->slot_direct);
  exe->output_slot = calloc((size_t)exe->noutputs + 1, sizeof *exe->output_slot);
  exe->steps = calloc((size_t)exe->nsteps + 1, sizeof *exe->steps);
  int *def_step = calloc((size_t)nslots + 1, sizeof *def_step);
  int *last_use = calloc((size_t)nslots + 1, sizeof *last_use);
  kt_map map = {0};
  alloy_error *e = NULL;
  if (!exe->slot_value || !exe->slot_direct || !exe->output_slot || !exe->steps || !def_step ||
      !last_use || !kt_map_init(&map, nslots))
    e = kt_oom(h);
  for (int s = 0, i = -1, k = 0; s < nslots && !e; s++) {
    if (s < exe->ninputs) {
      exe->slot_value[s] = h->graph_input(g, s);
      def_step[s] = -1;
    } else {
      while (k >= (i >= 0 ? h->node_num_outputs(h->graph_node(g, i)) : 0)) i++, k = 0;
      exe->slot_value[s] = h->node_output(h->graph_node(g, i), k++);
      def_step[s] = i;
    }
    last_use[s] = -1;
    exe->slot_direct[s] = -1;
    kt_map_put(&map, exe->slot_value[s], s);
  }
  for (int i = 0; i < exe->nsteps && !e; i++)
    e = kt_plan_step(exe, t, &map, def_step, last_use, i, &exe->steps[i]);
  for (int j = 0; j < exe->noutputs && !e; j++) {
    const alloy_value *v = h->graph_output(g, j);
    int s = kt_map_get(&map, v);
    if (s < 0) {
      const char *vname = v ? h->value_name(v) : NULL;
      e = alloy_kt_error(h, ALLOY_ERR_INVALID_ARGUMENT,
                         "output %d (%s) is neither an input of the partition nor made by a node", j,
                         vname ? vname : "?");
      break;
    }
    exe->output_slot[j] = s;
    if (s >= exe->ninputs && exe->slot_direct[s] < 0) exe->slot_direct[s] = j;
  }
  if (!e) e = kt_plan_frees(exe, last_use);
  kt_map_free(&map);
  free(def_step);
  free(last_use);
  return e;
}

alloy_error *alloy_kt_compile(alloy_backend *be, const alloy_graph *partition,
                              const alloy_compile_options *options, alloy_executable **out) {
  const alloy_host_api *h = alloy_kt_host(be);
  *out = NULL;
  if (!partition) return h->error_new(ALLOY_ERR_INVALID_ARGUMENT, "compile: no partition");
  if (options && ALLOY_HAS_FIELD(options, alloy_compile_options, device) && options->device != 0)
    return alloy_kt_error(h, ALLOY_ERR_INVALID_ARGUMENT,
                          "compile: device %d does not exist: this backend has one device, 0",
                          (int)options->device);
  alloy_executable *exe = calloc(1, sizeof *exe);
  if (!exe) return kt_oom(h);
  exe->host = h;
  exe->graph = partition;
  exe->ninputs = h->graph_num_inputs(partition);
  exe->noutputs = h->graph_num_outputs(partition);
  exe->nsteps = h->graph_num_nodes(partition);
  alloy_error *e = kt_plan(exe, alloy_kt_table(be));
  if (e) {
    alloy_kt_executable_free(exe);
    return e;
  }
  alloy_kt_track(be, &exe->obj, KT_OBJ_EXECUTABLE);
  *out = exe;
  return NULL;
}

/* ---- strided copies ----------------------------------------------------------- */

static int64_t kt_numel(const int64_t *sizes, int rank) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++) n *= sizes[d];
  return n;
}

static void kt_contiguous(const int64_t *sizes, int rank, int64_t *strides) {
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; d--) {
    strides[d] = s;
    s *= sizes[d] > 1 ? sizes[d] : 1;
  }
}

/* Size-1 dims may have any stride, as in PyTorch. */
static bool kt_is_contiguous(const int64_t *sizes, const int64_t *strides, int rank) {
  int64_t expect = 1;
  if (kt_numel(sizes, rank) == 0) return true;
  for (int d = rank - 1; d >= 0; d--) {
    if (sizes[d] != 1 && strides[d] != expect) return false;
    expect *= sizes[d];
  }
  return true;
}

/* dst[i] = src[i] for every index i of sizes, strides in elements. The
 * innermost dim is one memcpy when both sides are dense there. */
static void kt_copy_strided(char *dst, const int64_t *dst_strides, const char *src,
                            const int64_t *src_strides, const int64_t *sizes, int rank,
                            size_t esize) {
  if (kt_numel(sizes, rank) == 0) return;
  if (rank == 0) {
    memcpy(dst, src, esize);
    return;
  }
  int64_t index[KT_MAX_RANK] = {0};
  int64_t inner = sizes[rank - 1], ds = dst_strides[rank - 1], ss = src_strides[rank - 1];
  int64_t es = (int64_t)esize;
  for (;;) {
    int64_t doff = 0, soff = 0;
    for (int d = 0; d < rank - 1; d++) {
      doff += index[d] * dst_strides[d];
      soff += index[d] * src_strides[d];
    }
    char *dp = dst + doff * es;
    const char *sp = src + soff * es;
    if (ds == 1 && ss == 1) memcpy(dp, sp, (size_t)(inner * es));
    else
      for (int64_t j = 0; j < inner; j++) memcpy(dp + j * ds * es, sp + j * ss * es, esize);
    int d = rank - 2;
    while (d >= 0 && ++index[d] == sizes[d]) index[d--] = 0;
    if (d < 0) break;
  }
}

/* Strides of x (rank, sizes, strides) viewed with out's sizes: trailing
 * dims aligned, 0 where x is broadcast. false when x does not broadcast. */
static bool kt_broadcast(int rank, const int64_t *sizes, const int64_t *strides, int orank,
                         const int64_t *osizes, int64_t *bstrides) {
  if (rank > orank) return false;
  for (int d = 0; d < orank; d++) {
    int xd = d - (orank - rank);
    if (xd < 0) bstrides[d] = 0;
    else if (sizes[xd] == osizes[d]) bstrides[d] = osizes[d] == 1 ? 0 : strides[xd];
    else if (sizes[xd] == 1) bstrides[d] = 0;
    else return false;
  }
  return true;
}

static bool kt_same_shape(int r1, const int64_t *s1, int r2, const int64_t *s2) {
  return r1 == r2 && (r1 == 0 || memcmp(s1, s2, (size_t)r1 * sizeof *s1) == 0);
}

/* Memory for numel elements of esize bytes, 64-byte aligned; NULL when
 * out of memory or over the ceiling of ir/checked.h (sizes reaching here
 * were checked against it, so that is a bug caught late, not a wrap). */
static void *kt_alloc(int64_t numel, size_t esize) {
  int64_t bytes;
  if (numel < 0 || !alloy_checked_mul(numel, (int64_t)esize, &bytes) ||
      bytes > ALLOY_MAX_TENSOR_BYTES)
    return NULL;
  size_t rounded = ((size_t)bytes + 63) & ~(size_t)63; /* bytes <= 2^62: no wrap */
  return aligned_alloc(64, rounded ? rounded : 64);
}

/* ---- execute ---------------------------------------------------------------------- */

/* A value while the partition runs. */
typedef struct kt_slot {
  char *data;
  bool owned, ready;
  bool deferred; /* sizes known only from the data: alloc_output makes it */
  alloy_dtype dtype;
  int rank;
  int64_t sizes[KT_MAX_RANK], strides[KT_MAX_RANK];
} kt_slot;

/* An operand as the kernel sees it. */
typedef struct kt_stage {
  char *data;
  void *temp; /* a copy of ours, freed after the call */
  int rank;
  int64_t sizes[KT_MAX_RANK], strides[KT_MAX_RANK], bstrides[KT_MAX_RANK];
} kt_stage;

/* A symbol of a data-dependent size ("u0"), bound when the output that
 * defines it was allocated: later sizes that are that symbol evaluate to
 * it (the host's symbol values cannot hold it: it knew none before). */
typedef struct kt_binding {
  char name[32];
  int64_t value;
} kt_binding;

typedef struct kt_run {
  alloy_backend *be;
  const alloy_executable *exe;
  const alloy_host_api *h;
  const alloy_execute_args *args;
  kt_slot *slots;
  kt_stage *stages;
  alloy_kernel_tensor *ktensors;
  alloy_kernel_call call; /* alloc_output finds the run from it */
  const kt_step *step;    /* the step running */
  kt_binding *bindings;
  int nbindings, cap_bindings;
  char note[256]; /* why alloc_output refused, for the kernel's error */
  /* What the kernel said with call->fail, for its error. */
  alloy_error_code fail_code;
  char fail_msg[512];
  char label[320];
} kt_run;

typedef union kt_value {
  int32_t i32;
  int64_t i64;
  float f32;
  double f64;
  int b;
  void *p;
} kt_value;

/* The bytes a tensor spans: false when they leave its buffer, when a size
 * is negative or the tensor is over the ceiling of ir/checked.h (every
 * computation checked: sizes and strides come from the host, and a wrapped
 * product would pass a huge tensor as a small one). */
static bool kt_tensor_fits(const alloy_tensor *t, size_t esize) {
  if (!t->buffer || (t->rank && (!t->sizes || !t->strides))) return false;
  return alloy_checked_tensor_bytes(t->sizes, t->rank, esize, NULL, NULL) &&
         alloy_checked_fits(t->sizes, t->strides, t->rank, t->offset, esize, t->buffer->bytes);
}

/* A size of t that is not the one the graph gives v (d, its value and the
 * graph's through *d, *got, *want), when the graph's is known from the
 * symbols: the kernels index operands by the graph's shapes too. */
static bool kt_size_mismatch(const kt_run *r, const alloy_tensor *t, const alloy_value *v, int *d,
                             int64_t *got, int64_t *want) {
  for (*d = 0; *d < t->rank; (*d)++)
    if (r->h->value_size_eval(v, *d, r->args->symbols, r->args->num_symbols, want) &&
        *want != t->sizes[*d]) {
      *got = t->sizes[*d];
      return true;
    }
  return false;
}

static alloy_error *kt_check_tensor(kt_run *r, const alloy_tensor *t, const alloy_value *v,
                                    bool is_output, int j) {
  const char *what = is_output ? "output" : "input";
  const alloy_host_api *h = r->h;
  const char *vname = h->value_name(v);
  if (t->dtype != h->value_dtype(v) || t->rank != h->value_rank(v) || t->rank > KT_MAX_RANK)
    return alloy_kt_error(h, ALLOY_ERR_TYPE, "%s %d (%s): expected %s of rank %d, got %s of rank %d",
                          what, j, vname ? vname : "?", alloy_kt_dtype_name(h->value_dtype(v)),
                          h->value_rank(v), alloy_kt_dtype_name(t->dtype), (int)t->rank);
  /* An output with its sizes known only from the data has no buffer yet. */
  bool unallocated = is_output && !t->buffer;
  if (!unallocated && !kt_tensor_fits(t, alloy_kt_dtype_size(t->dtype)))
    return alloy_kt_error(h, ALLOY_ERR_INVALID_ARGUMENT,
                          "%s %d (%s): its sizes and strides reach outside its buffer", what, j,
                          vname ? vname : "?");
  int d;
  int64_t got, want;
  if (!is_output && kt_size_mismatch(r, t, v, &d, &got, &want))
    return alloy_kt_error(h, ALLOY_ERR_INVALID_ARGUMENT,
                          "%s %d (%s): size %lld at dim %d, but the graph says %lld", what, j,
                          vname ? vname : "?", (long long)got, d, (long long)want);
  return NULL;
}

static void kt_slot_from_tensor(kt_slot *s, const alloy_tensor *t) {
  s->data = (char *)t->buffer->mem + t->offset;
  s->dtype = t->dtype;
  s->rank = t->rank;
  if (t->rank) {
    memcpy(s->sizes, t->sizes, (size_t)t->rank * sizeof *s->sizes);
    memcpy(s->strides, t->strides, (size_t)t->rank * sizeof *s->strides);
  }
  s->ready = true;
}

/* Size d of v when it is a data-dependent symbol bound in this run. */
static bool kt_bound_size(kt_run *r, const alloy_value *v, int d, int64_t *out) {
  if (!r->nbindings) return false;
  char text[64];
  if (r->h->value_size_text(v, d, text, sizeof text) >= sizeof text) return false;
  for (int i = 0; i < r->nbindings; i++)
    if (!strcmp(r->bindings[i].name, text)) return *out = r->bindings[i].value, true;
  return false;
}

/* Binds the symbols that v's dims are, now that v has its sizes. */
static void kt_bind_symbols(kt_run *r, const alloy_value *v, const int64_t *sizes, int rank) {
  for (int d = 0; d < rank; d++) {
    kt_binding b;
    size_t n = r->h->value_size_text(v, d, b.name, sizeof b.name);
    bool ident = n > 0 && n < sizeof b.name && (isalpha((unsigned char)b.name[0]) || b.name[0] == '_');
    for (size_t i = 1; ident && i < n; i++) ident = isalnum((unsigned char)b.name[i]) || b.name[i] == '_';
    if (!ident) continue;
    if (r->nbindings == r->cap_bindings) {
      int cap = r->cap_bindings ? 2 * r->cap_bindings : 8;
      kt_binding *nb = realloc(r->bindings, (size_t)cap * sizeof *nb);
      if (!nb) return; /* later sizes then fail to evaluate, naming the node */
      r->bindings = nb;
      r->cap_bindings = cap;
    }
    b.value = sizes[d];
    r->bindings[r->nbindings++] = b;
  }
}

/* Gives output slot s its memory: the host's output buffer when this is a
 * graph output the host laid out contiguously, else memory of ours. When
 * its sizes depend on the data, a `call` kernel allocates it later
 * (alloc_output); any other kernel cannot run it. */
static alloy_error *kt_make_output(kt_run *r, const kt_step *st, int s) {
  const alloy_host_api *h = r->h;
  const alloy_value *v = r->exe->slot_value[s];
  kt_slot *slot = &r->slots[s];
  int j = r->exe->slot_direct[s];
  const alloy_tensor *host_out = j >= 0 ? &r->args->outputs[j] : NULL;
  /* No buffer: the host could not size it; its -1 sizes are the unknown
   * dims, whatever the symbol values say. It gets its buffer at the end. */
  const alloy_tensor *unsized = host_out && !host_out->buffer ? host_out : NULL;
  if (unsized) host_out = NULL;
  slot->dtype = h->value_dtype(v);
  slot->rank = h->value_rank(v);
  bool from_host = false;
  for (int d = 0; d < slot->rank; d++) {
    if (kt_bound_size(r, v, d, &slot->sizes[d])) continue;
    bool unknown = unsized && unsized->sizes[d] < 0;
    if (!unknown &&
        h->value_size_eval(v, d, r->args->symbols, r->args->num_symbols, &slot->sizes[d]))
      continue;
    /* A size known only from the data: the host allocated the output
     * (the kernel's alloc_output must agree), or the kernel will. */
    if (host_out) {
      slot->sizes[d] = host_out->sizes[d];
      from_host = true;
    } else if (st->has_call) {
      slot->deferred = true;
      return NULL;
    } else {
      return alloy_kt_error(h, ALLOY_ERR_UNSUPPORTED,
                            "%s: the size of output %s dim %d depends on the data; only a `call` "
                            "kernel can make it (alloc_output)", r->label, h->value_name(v), d);
    }
  }
  if (!alloy_checked_tensor_bytes(slot->sizes, slot->rank, alloy_kt_dtype_size(slot->dtype), NULL,
                                  NULL))
    return alloy_kt_error(h, ALLOY_ERR_INVALID_ARGUMENT,
                          "%s: output %s would have a negative size or span over %s bytes, the "
                          "most a tensor may", r->label, h->value_name(v), ALLOY_MAX_TENSOR_BYTES_TEXT);
  if (from_host) kt_bind_symbols(r, v, slot->sizes, slot->rank);
  kt_contiguous(slot->sizes, slot->rank, slot->strides);
  if (host_out && kt_same_shape(slot->rank, slot->sizes, host_out->rank, host_out->sizes) &&
      kt_is_contiguous(host_out->sizes, host_out->strides, host_out->rank)) {
    slot->data = (char *)host_out->buffer->mem + host_out->offset;
    memcpy(slot->strides, host_out->strides, (size_t)slot->rank * sizeof *slot->strides);
  } else {
    slot->data = kt_alloc(kt_numel(slot->sizes, slot->rank), alloy_kt_dtype_size(slot->dtype));
    if (!slot->data) return alloy_kt_error(h, ALLOY_ERR_OUT_OF_MEMORY, "%s: out of memory", r->label);
    slot->owned = true;
  }
  slot->ready = true;
  return NULL;
}

/* Stages operand k of step st from its slot, as the signature asks. */
static alloy_error *kt_stage_operand(kt_run *r, const kt_step *st, int k) {
  kt_stage *g = &r->stages[k];
  const kt_slot *x = &r->slots[st->slots[k]];
  int flags = st->flags[k];
  size_t esize = alloy_kt_dtype_size(x->dtype);
  const kt_slot *out0 = st->nout > 0 ? &r->slots[st->slots[st->nin]] : NULL;
  memset(g, 0, sizeof *g);
  if (x->deferred && !x->ready) { /* made by the kernel: alloc_output */
    g->rank = x->rank;
    return NULL;
  }
  if (!x->ready)
    return alloy_kt_error(r->h, ALLOY_ERR_INTERNAL, "%s: an operand is used before it is computed",
                          r->label);
  g->rank = x->rank;
  if (x->rank) memcpy(g->sizes, x->sizes, (size_t)x->rank * sizeof *g->sizes);
  int64_t bcast[KT_MAX_RANK];
  bool is_input = k < st->nin;
  if (flags & KT_F_STRIDES || kt_is_contiguous(x->sizes, x->strides, x->rank)) {
    g->data = x->data;
    if (x->rank) memcpy(g->strides, x->strides, (size_t)x->rank * sizeof *g->strides);
  } else {
    kt_contiguous(x->sizes, x->rank, g->strides);
    g->data = g->temp = kt_alloc(kt_numel(x->sizes, x->rank), esize);
    if (!g->temp) return alloy_kt_error(r->h, ALLOY_ERR_OUT_OF_MEMORY, "%s: out of memory", r->label);
    kt_copy_strided(g->data, g->strides, x->data, x->strides, x->sizes, x->rank, esize);
  }
  /* A kernel that asks nothing about an input's shape can only index it
   * with out0's: make that true (a [n] bias against [m, n], a scalar). */
  if (is_input && !(flags & KT_F_SHAPE) && out0 &&
      !kt_same_shape(x->rank, x->sizes, out0->rank, out0->sizes) &&
      kt_broadcast(g->rank, g->sizes, g->strides, out0->rank, out0->sizes, bcast)) {
    void *wide = kt_alloc(kt_numel(out0->sizes, out0->rank), esize);
    if (!wide) return alloy_kt_error(r->h, ALLOY_ERR_OUT_OF_MEMORY, "%s: out of memory", r->label);
    int64_t dense[KT_MAX_RANK];
    kt_contiguous(out0->sizes, out0->rank, dense);
    kt_copy_strided(wide, dense, g->data, bcast, out0->sizes, out0->rank, esize);
    free(g->temp);
    g->data = g->temp = wide;
    g->rank = out0->rank;
    memcpy(g->sizes, out0->sizes, (size_t)out0->rank * sizeof *g->sizes);
    memcpy(g->strides, dense, (size_t)out0->rank * sizeof *g->strides);
  }
  if (flags & KT_F_BSTRIDES &&
      !kt_broadcast(g->rank, g->sizes, g->strides, out0->rank, out0->sizes, g->bstrides))
    return alloy_kt_error(r->h, ALLOY_ERR_INVALID_ARGUMENT,
                          "%s: bstrides(%s%d): the operand does not broadcast to out0's shape",
                          r->label, is_input ? "in" : "out", is_input ? k : k - st->nin);
  return NULL;
}

/* A rank-0 value of the graph read as an integer or a float. */
static void kt_load_scalar(const kt_slot *s, int64_t *i, double *f, bool *is_float) {
  union {
    uint8_t u8;
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
  } u;
  size_t n = alloy_kt_dtype_size(s->dtype);
  memset(&u, 0, sizeof u);
  memcpy(&u, s->data, n <= sizeof u ? n : sizeof u);
  *is_float = s->dtype == ALLOY_F32 || s->dtype == ALLOY_F64;
  *f = s->dtype == ALLOY_F32 ? u.f32 : u.f64;
  *i = s->dtype == ALLOY_I64 ? u.i64 : s->dtype == ALLOY_I32 ? u.i32 : s->dtype == ALLOY_I16 ? u.i16
     : s->dtype == ALLOY_I8 ? u.i8 : u.u8;
}

static alloy_error *kt_arg_value(kt_run *r, const kt_step *st, int p, kt_value *out) {
  const kt_param *prm = &st->sig.params[p];
  const kt_bind *b = &st->bind[p];
  int64_t i = b->i;
  double f = b->f;
  bool is_float = b->source == KT_SRC_FLOAT;
  if (b->source == KT_SRC_SYMINT &&
      !r->h->value_size_eval(b->value, 0, r->args->symbols, r->args->num_symbols, &i)) {
    if (b->slot < 0 || !r->slots[b->slot].ready)
      return alloy_kt_error(r->h, ALLOY_ERR_INVALID_ARGUMENT,
                            "%s: arg(%.*s) cannot be computed from the symbols given", r->label,
                            (int)prm->name_len, prm->name);
    kt_load_scalar(&r->slots[b->slot], &i, &f, &is_float);
  } else if (b->source == KT_SRC_SLOT) {
    if (!r->slots[b->slot].ready || r->slots[b->slot].rank != 0)
      return alloy_kt_error(r->h, ALLOY_ERR_INTERNAL, "%s: arg(%.*s) has no value", r->label,
                            (int)prm->name_len, prm->name);
    kt_load_scalar(&r->slots[b->slot], &i, &f, &is_float);
  }
  bool wants_float = prm->scalar == KT_S_F32 || prm->scalar == KT_S_F64;
  if (is_float && !wants_float)
    return alloy_kt_error(r->h, ALLOY_ERR_TYPE, "%s: arg(%.*s) is a float; the kernel takes an integer",
                          r->label, (int)prm->name_len, prm->name);
  if (!is_float) f = (double)i;
  if (prm->scalar == KT_S_I32 && (i < INT32_MIN || i > INT32_MAX))
    return alloy_kt_error(r->h, ALLOY_ERR_INVALID_ARGUMENT, "%s: arg(%.*s) = %lld does not fit in i32",
                          r->label, (int)prm->name_len, prm->name, (long long)i);
  if (prm->scalar == KT_S_I32) out->i32 = (int32_t)i;
  else if (prm->scalar == KT_S_I64) out->i64 = i;
  else if (prm->scalar == KT_S_F32) out->f32 = (float)f;
  else if (prm->scalar == KT_S_F64) out->f64 = f;
  else out->b = i != 0;
  return NULL;
}

/* Binders: one per parameter kind, each filling the value for param p. */
typedef alloy_error *(*kt_binder)(kt_run *r, const kt_step *st, int p, kt_value *out);

static const kt_stage *kt_operand_stage(kt_run *r, const kt_step *st, int p) {
  return &r->stages[st->bind[p].operand];
}
static alloy_error *kt_bind_data(kt_run *r, const kt_step *st, int p, kt_value *out) {
  out->p = kt_operand_stage(r, st, p)->data;
  return NULL;
}
static alloy_error *kt_bind_numel(kt_run *r, const kt_step *st, int p, kt_value *out) {
  const kt_stage *g = kt_operand_stage(r, st, p);
  out->i64 = kt_numel(g->sizes, g->rank);
  return NULL;
}
static alloy_error *kt_bind_rank(kt_run *r, const kt_step *st, int p, kt_value *out) {
  out->i32 = kt_operand_stage(r, st, p)->rank;
  return NULL;
}
static alloy_error *kt_bind_size(kt_run *r, const kt_step *st, int p, kt_value *out) {
  const kt_stage *g = kt_operand_stage(r, st, p);
  int d = st->sig.params[p].dim;
  out->i64 = g->sizes[d < 0 ? d + g->rank : d];
  return NULL;
}
static alloy_error *kt_bind_sizes(kt_run *r, const kt_step *st, int p, kt_value *out) {
  out->p = (void *)kt_operand_stage(r, st, p)->sizes;
  return NULL;
}
static alloy_error *kt_bind_strides(kt_run *r, const kt_step *st, int p, kt_value *out) {
  out->p = (void *)kt_operand_stage(r, st, p)->strides;
  return NULL;
}
static alloy_error *kt_bind_bstrides(kt_run *r, const kt_step *st, int p, kt_value *out) {
  out->p = (void *)kt_operand_stage(r, st, p)->bstrides;
  return NULL;
}
static alloy_error *kt_bind_call(kt_run *r, const kt_step *st, int p, kt_value *out) {
  (void)st;
  (void)p;
  out->p = &r->call;
  return NULL;
}

static const kt_binder kt_binders[] = {
    [KT_P_DATA] = kt_bind_data,         [KT_P_NUMEL] = kt_bind_numel,
    [KT_P_RANK] = kt_bind_rank,         [KT_P_SIZE] = kt_bind_size,
    [KT_P_SIZES] = kt_bind_sizes,       [KT_P_STRIDES] = kt_bind_strides,
    [KT_P_BSTRIDES] = kt_bind_bstrides, [KT_P_ARG] = kt_arg_value,
    [KT_P_CALL] = kt_bind_call,
};

static void kt_unstage(kt_run *r, const kt_step *st) {
  for (int k = 0; k < st->nin + st->nout; k++) {
    free(r->stages[k].temp);
    r->stages[k].temp = NULL;
  }
}

static void kt_free_slot(kt_slot *s) {
  if (s->owned) free(s->data);
  s->data = NULL;
  s->owned = s->ready = s->deferred = false;
}

/* alloy_kernel_call.alloc_output: makes output k of the running step with
 * the sizes the kernel found. An output whose sizes were known already is
 * returned as it is when the kernel agrees with them; memory of ours is
 * made again when it does not (the kernel knows the data; a size the
 * symbols seemed to give may be a placeholder for one not known yet). */
static const alloy_kernel_tensor *kt_alloc_output(const struct alloy_kernel_call *c, int k,
                                                  const int64_t *sizes) {
  kt_run *r = (kt_run *)(void *)((char *)c - offsetof(kt_run, call));
  const kt_step *st = r->step;
  if (!st || k < 0 || k >= st->nout || !sizes) {
    snprintf(r->note, sizeof r->note, "alloc_output(%d): no such output", k);
    return NULL;
  }
  kt_slot *slot = &r->slots[st->slots[st->nin + k]];
  kt_stage *g = &r->stages[st->nin + k];
  alloy_kernel_tensor *t = &r->ktensors[st->nin + k];
  if (slot->ready) {
    if (kt_same_shape(slot->rank, slot->sizes, slot->rank, sizes)) return t;
    if (!slot->owned || slot->deferred) {
      snprintf(r->note, sizeof r->note, "alloc_output(%d): sizes other than the %s ones", k,
               slot->deferred ? "first call's" : "host's");
      return NULL;
    }
    free(slot->data);
    slot->data = NULL;
    slot->owned = slot->ready = false;
  }
  for (int d = 0; d < slot->rank; d++)
    if (sizes[d] < 0) {
      snprintf(r->note, sizeof r->note, "alloc_output(%d): size %lld of dim %d", k,
               (long long)sizes[d], d);
      return NULL;
    }
  if (!alloy_checked_tensor_bytes(sizes, slot->rank, alloy_kt_dtype_size(slot->dtype), NULL, NULL)) {
    snprintf(r->note, sizeof r->note, "alloc_output(%d): the sizes span over %s bytes, the most "
             "a tensor may", k, ALLOY_MAX_TENSOR_BYTES_TEXT);
    return NULL;
  }
  if (slot->rank) memcpy(slot->sizes, sizes, (size_t)slot->rank * sizeof *sizes);
  kt_contiguous(slot->sizes, slot->rank, slot->strides);
  slot->data = kt_alloc(kt_numel(slot->sizes, slot->rank), alloy_kt_dtype_size(slot->dtype));
  if (!slot->data) {
    snprintf(r->note, sizeof r->note, "alloc_output(%d): out of memory", k);
    return NULL;
  }
  slot->owned = slot->ready = slot->deferred = true;
  kt_bind_symbols(r, r->exe->slot_value[st->slots[st->nin + k]], slot->sizes, slot->rank);
  g->data = slot->data;
  memcpy(g->sizes, slot->sizes, sizeof g->sizes);
  memcpy(g->strides, slot->strides, sizeof g->strides);
  *t = (alloy_kernel_tensor){g->data, slot->dtype, slot->rank, g->sizes, g->strides};
  return t;
}

/* alloy_kernel_call.fail: keeps what the kernel says for the step's error. */
static void kt_fail(const struct alloy_kernel_call *c, alloy_error_code code, const char *message) {
  kt_run *r = (kt_run *)(void *)((char *)c - offsetof(kt_run, call));
  /* A code this helper does not know is passed on as "internal". */
  r->fail_code = code >= ALLOY_ERR_INVALID_ARGUMENT && code <= ALLOY_ERR_DECLINED ? code
                                                                                 : ALLOY_ERR_INTERNAL;
  snprintf(r->fail_msg, sizeof r->fail_msg, "%s", message ? message : "(no message)");
}

/* A deferred output reaches only `call`: nothing else of the signature may
 * need its sizes (out0's shape is what bstrides and broadcasts use). */
static alloy_error *kt_check_deferred(kt_run *r, const kt_step *st, int k) {
  for (int p = 0; p < st->sig.nparams; p++) {
    const kt_param *prm = &st->sig.params[p];
    bool on_it = prm->kind != KT_P_ARG && prm->kind != KT_P_CALL && prm->is_out && prm->index == k;
    if (on_it || (k == 0 && prm->kind == KT_P_BSTRIDES))
      return alloy_kt_error(r->h, ALLOY_ERR_UNSUPPORTED,
                            "%s: output %d's sizes depend on the data, but the signature \"%s\" "
                            "needs them before the call", r->label, k, st->kernel->signature);
  }
  return NULL;
}

static alloy_error *kt_run_step(kt_run *r, const kt_step *st) {
  const alloy_host_api *h = r->h;
  alloy_error *e = NULL;
  alloy_kt_node_label(h, st->node, st->node_index, r->label, sizeof r->label);
  r->step = st;
  r->note[0] = '\0';
  r->fail_msg[0] = '\0';
  for (int k = 0; k < st->nout && !e; k++) {
    e = kt_make_output(r, st, st->slots[st->nin + k]);
    if (!e && r->slots[st->slots[st->nin + k]].deferred) e = kt_check_deferred(r, st, k);
  }
  /* Outputs first: inputs read out0's shape when broadcast. */
  for (int k = st->nin; k < st->nin + st->nout && !e; k++) e = kt_stage_operand(r, st, k);
  for (int k = 0; k < st->nin && !e; k++)
    if (st->flags[k] & KT_F_USED) e = kt_stage_operand(r, st, k);
  if (!e && st->has_call) {
    for (int k = 0; k < st->nin + st->nout; k++) {
      const kt_stage *g = &r->stages[k];
      const kt_slot *x = &r->slots[st->slots[k]];
      bool unknown = x->deferred && !x->ready; /* sizes unknown, data NULL */
      r->ktensors[k] = (alloy_kernel_tensor){g->data, x->dtype, g->rank, unknown ? NULL : g->sizes,
                                             unknown ? NULL : g->strides};
    }
    r->call = (alloy_kernel_call){.struct_size = ALLOY_KERNEL_CALL_STRUCT_SIZE,
                                  .host = h,
                                  .node = st->node,
                                  .inputs = r->ktensors,
                                  .num_inputs = st->nin,
                                  .outputs = r->ktensors + st->nin,
                                  .num_outputs = st->nout,
                                  .input_arg = st->input_arg,
                                  .input_item = st->input_item,
                                  .alloc_output = kt_alloc_output,
                                  .fail = kt_fail};
  }
  kt_value values[KT_MAX_PARAMS];
  void *avalues[KT_MAX_PARAMS];
  for (int p = 0; p < st->sig.nparams && !e; p++) {
    e = kt_binders[st->sig.params[p].kind](r, st, p, &values[p]);
    avalues[p] = &values[p];
  }
  if (!e) {
    ffi_arg rc = 0;
    ffi_call((ffi_cif *)&st->cif, FFI_FN(st->kernel->fn), &rc, avalues);
    if (r->fail_msg[0])
      e = alloy_kt_error(h, r->fail_code, "%s: %s", r->label, r->fail_msg);
    else if (st->sig.returns_int && (int)rc != 0)
      e = alloy_kt_error(h, ALLOY_ERR_INTERNAL, "%s: the kernel failed (it returned %d)%s%s",
                         r->label, (int)rc, r->note[0] ? " after " : "", r->note);
  }
  for (int k = 0; k < st->nout && !e; k++)
    if (!r->slots[st->slots[st->nin + k]].ready)
      e = alloy_kt_error(h, ALLOY_ERR_INTERNAL,
                         "%s: output %d's sizes depend on the data and the kernel did not make it "
                         "(call->alloc_output)", r->label, k);
  kt_unstage(r, st);
  for (int i = 0; i < st->ndead; i++) kt_free_slot(&r->slots[st->dead[i]]);
  return e;
}

/* An output the host could not size gets a buffer of ours, contiguous;
 * the host owns it from here on (alloy/plugin.h). */
static alloy_error *kt_give_buffer(kt_run *r, alloy_tensor *t, const kt_slot *s) {
  alloy_buffer *b = NULL;
  uint64_t bytes = (uint64_t)kt_numel(s->sizes, s->rank) * alloy_kt_dtype_size(s->dtype);
  alloy_error *e = alloy_kt_buffer_allocate(r->be, 0, bytes, &b);
  if (e) return e;
  t->buffer = b;
  t->offset = 0;
  if (s->rank) memcpy(t->sizes, s->sizes, (size_t)s->rank * sizeof *t->sizes);
  kt_contiguous(s->sizes, s->rank, t->strides);
  return NULL;
}

/* Graph outputs not computed in place are copied into the host's. */
static alloy_error *kt_write_outputs(kt_run *r) {
  const alloy_executable *exe = r->exe;
  for (int j = 0; j < exe->noutputs; j++) {
    alloy_tensor *t = &r->args->outputs[j];
    const kt_slot *s = &r->slots[exe->output_slot[j]];
    if (!s->ready)
      return alloy_kt_error(r->h, ALLOY_ERR_INTERNAL, "output %d was never computed", j);
    alloy_error *e = t->buffer ? NULL : kt_give_buffer(r, t, s);
    if (e) return e;
    char *dst = (char *)t->buffer->mem + t->offset;
    if (s->data == dst) continue;
    if (!kt_same_shape(s->rank, s->sizes, t->rank, t->sizes)) {
      const char *vname = r->h->value_name(exe->slot_value[exe->output_slot[j]]);
      return alloy_kt_error(r->h, ALLOY_ERR_INVALID_ARGUMENT,
                            "output %d (%s): the host's tensor has another shape than the value "
                            "computed", j, vname ? vname : "?");
    }
    kt_copy_strided(dst, t->strides, s->data, s->strides, s->sizes, s->rank,
                    alloy_kt_dtype_size(s->dtype));
  }
  return NULL;
}

static alloy_error *kt_check_args(kt_run *r) {
  const alloy_executable *exe = r->exe;
  const alloy_execute_args *a = r->args;
  if (a->num_inputs != exe->ninputs || a->num_outputs != exe->noutputs ||
      (a->num_inputs && !a->inputs) || (a->num_outputs && !a->outputs))
    return alloy_kt_error(r->h, ALLOY_ERR_INVALID_ARGUMENT,
                          "execute: the partition has %d inputs and %d outputs; %d and %d given",
                          exe->ninputs, exe->noutputs, (int)a->num_inputs, (int)a->num_outputs);
  alloy_error *e = NULL;
  for (int i = 0; i < exe->ninputs && !e; i++)
    e = kt_check_tensor(r, &a->inputs[i], exe->slot_value[i], false, i);
  for (int j = 0; j < exe->noutputs && !e; j++)
    e = kt_check_tensor(r, &a->outputs[j], exe->slot_value[exe->output_slot[j]], true, j);
  return e;
}

alloy_error *alloy_kt_execute(alloy_backend *be, alloy_executable *exe,
                              const alloy_execute_args *args) {
  const alloy_host_api *h = alloy_kt_host(be);
  if (!exe || !args) return h->error_new(ALLOY_ERR_INVALID_ARGUMENT, "execute: no executable or arguments");
  if (args->done) *args->done = NULL; /* synchronous: finished on return */
  kt_run r = {.be = be, .exe = exe, .h = h, .args = args};
  int nops = exe->max_operands + 1;
  r.slots = calloc((size_t)exe->nslots + 1, sizeof *r.slots);
  r.stages = calloc((size_t)nops, sizeof *r.stages);
  r.ktensors = calloc((size_t)nops, sizeof *r.ktensors);
  alloy_error *e = NULL;
  if (!r.slots || !r.stages || !r.ktensors)
    e = h->error_new(ALLOY_ERR_OUT_OF_MEMORY, "out of memory running a partition");
  if (!e) e = kt_check_args(&r);
  for (int i = 0; i < exe->ninputs && !e; i++) kt_slot_from_tensor(&r.slots[i], &args->inputs[i]);
  for (int s = 0; s < exe->nsteps && !e; s++) e = kt_run_step(&r, &exe->steps[s]);
  if (!e) e = kt_write_outputs(&r);
  for (int s = 0; r.slots && s < exe->nslots; s++) kt_free_slot(&r.slots[s]);
  free(r.slots);
  free(r.stages);
  free(r.ktensors);
  free(r.bindings);
  return e;
}
