/*
 * tests/test_kernel_table.c: the kernel-table helper (sdk/kernel_table/)
 * through the plugin ABI itself, the way the host drives a plugin: dlopen,
 * alloy_plugin_init with the host table, claim, compile, execute on buffers
 * laid out by the test. That reaches what alloy_program_run never does
 * (strided inputs and outputs, queues, concurrent executions, objects left
 * for backend_close) and every signature feature, through the probe table
 * of tests/plugins/kt_probe.c and the example plugin.
 *
 * Plugins come from $ALLOY_TEST_PLUGIN_DIR / $ALLOY_TEST_BUILD as in
 * test_loader.c, else from beside this binary (BUILD/tests/plugins and
 * BUILD/lib/alloy), else from build/.
 */
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "alloy/graph.h"
#include "alloy/kernel_table.h"
#include "harness.h"
#include "sdk/kernel_table/kt_internal.h"
#include "sdk/src/host.h"

/* ---- finding and driving a plugin ---------------------------------------- */

/* BUILD/<sub>/liballoy-<name>.so, BUILD found as the file comment says. */
static const char *plugin_path(const char *sub, const char *name) {
  static char path[3 * PATH_MAX];
  const char *env = getenv("ALLOY_TEST_PLUGIN_DIR");
  if (env && *env) {
    snprintf(path, sizeof path, "%s/liballoy-%s.so", env, name);
    if (access(path, R_OK) == 0) return path;
  }
  const char *build = getenv("ALLOY_TEST_BUILD");
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (!(build && *build) && n > 0) {
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) *slash = '\0';
    snprintf(path, sizeof path, "%s/../%s/liballoy-%s.so", exe, sub, name);
    if (access(path, R_OK) == 0) return path;
  }
  snprintf(path, sizeof path, "%s/%s/liballoy-%s.so", build && *build ? build : "build", sub, name);
  return path;
}

typedef struct drv {
  void *dl;
  const alloy_host_api *host;
  const alloy_plugin_api *api;
  alloy_backend *be;
} drv;

static bool drv_open(drv *d, const char *path) {
  memset(d, 0, sizeof *d);
  d->host = alloy_host_table();
  d->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!d->dl) {
    harness_fail(__FILE__, __LINE__, "dlopen %s: %s", path, dlerror());
    return false;
  }
  alloy_plugin_entry_fn init = (alloy_plugin_entry_fn)dlsym(d->dl, ALLOY_PLUGIN_ENTRY);
  d->api = init ? init(d->host) : NULL;
  if (!d->api) {
    harness_fail(__FILE__, __LINE__, "%s refused to load: %s", path,
                 alloy_host_last_log() ? alloy_host_last_log() : "(nothing logged)");
    return false;
  }
  CHECK_OK(d->api->backend_open(d->host, &d->be));
  return d->be != NULL;
}

static void drv_close(drv *d) {
  if (d->api && d->be) d->api->backend_close(d->be);
  if (d->dl) dlclose(d->dl);
  memset(d, 0, sizeof *d);
}

/* Claims g; returns how many nodes were claimed, costs in cost[], and
 * (when why is given) the reason of each node left, "" when none. */
static int drv_claim_why(drv *d, const alloy_graph *g, double *cost, char (*why)[160]) {
  int n = alloy_graph_num_nodes(g), count = 0;
  bool claimed[16] = {false};
  double costs[16] = {0};
  alloy_claims claims = {.num_nodes = n, .claimed = claimed, .cost = costs};
  if (n > 16) return -1;
  CHECK_OK(d->api->claim(d->be, g, &claims));
  for (int i = 0; i < n; i++) {
    count += claimed[i];
    if (cost) cost[i] = claimed[i] ? costs[i] : NAN;
    if (why) snprintf(why[i], sizeof why[i], "%s", claims.reason && claims.reason[i] ? claims.reason[i] : "");
  }
  claims_release(&claims);
  return count;
}

static int drv_claim(drv *d, const alloy_graph *g, double *cost) {
  return drv_claim_why(d, g, cost, NULL);
}

static alloy_executable *drv_compile(drv *d, const alloy_graph *g) {
  alloy_compile_options opt = {.struct_size = ALLOY_COMPILE_OPTIONS_STRUCT_SIZE, .opt_level = 2};
  alloy_executable *exe = NULL;
  CHECK_INT(drv_claim(d, g, NULL), alloy_graph_num_nodes(g));
  CHECK_OK(d->api->compile(d->be, g, &opt, &exe));
  return exe;
}

/* A tensor of the backend: its own buffer holding `storage`, viewed with
 * sizes and strides (NULL: contiguous). */
typedef struct drv_tensor {
  alloy_buffer *buf;
  int64_t sizes[4], strides[4];
  alloy_tensor t;
} drv_tensor;

static void drv_tensor_new(drv *d, drv_tensor *x, alloy_dtype dt, int rank, const int64_t *sizes,
                           const int64_t *strides, const void *storage, size_t bytes) {
  memset(x, 0, sizeof *x);
  int64_t s = 1;
  for (int i = rank - 1; i >= 0; i--) {
    x->sizes[i] = sizes[i];
    x->strides[i] = strides ? strides[i] : s;
    s *= sizes[i];
  }
  CHECK_OK(d->api->buffer_allocate(d->be, 0, bytes, &x->buf));
  if (x->buf && storage) CHECK_OK(d->api->buffer_copy_from_host(d->be, x->buf, 0, storage, bytes, NULL, NULL));
  x->t = (alloy_tensor){sizeof(alloy_tensor), x->buf, 0, dt, rank, x->sizes, x->strides};
}

static void *drv_data(drv *d, drv_tensor *x) { return d->api->buffer_host_pointer(d->be, x->buf); }

static alloy_error *drv_exec(drv *d, alloy_executable *exe, drv_tensor *ins, int nin,
                             drv_tensor *outs, int nout) {
  alloy_tensor ti[8], to[8];
  for (int i = 0; i < nin; i++) ti[i] = ins[i].t;
  for (int i = 0; i < nout; i++) to[i] = outs[i].t;
  alloy_event *done = (alloy_event *)&done; /* must be overwritten */
  alloy_execute_args args = {sizeof args, ti, nin, to, nout, NULL, 0, NULL, &done, NULL};
  alloy_error *e = d->api->execute(d->be, exe, &args);
  CHECK(done == NULL);
  return e;
}

/* ---- graphs ------------------------------------------------------------------ */

static alloy_value *input(alloy_graph *g, const char *name, alloy_dtype t, int rank,
                          const int64_t *sizes) {
  alloy_dim shape[4];
  for (int i = 0; i < rank; i++) shape[i] = alloy_dim_const(sizes[i]);
  alloy_value_type vt = {ALLOY_VALUE_TENSOR, t, rank, shape, NULL, {ALLOY_DEVICE_CPU, -1}, {NULL, 0}};
  alloy_value *v = NULL;
  CHECK_OK(alloy_graph_add_input(g, name, &vt, &v));
  return v;
}

static alloy_node *add(alloy_graph *g, const char *op, const alloy_arg *args, int n,
                       const char *kw, alloy_arg kwarg, const char *name) {
  alloy_node *nd = NULL;
  const char *kws[1] = {kw};
  CHECK_OK(alloy_graph_add_node(g, alloy_op_find(op), args, n, kw ? kws : NULL, kw ? &kwarg : NULL,
                                kw ? 1 : 0, name, &nd));
  return nd;
}

static void outputs(alloy_graph *g, alloy_node *nd) {
  if (!nd) return;
  alloy_value *outs[4];
  int n = alloy_node_num_outputs(nd);
  for (int i = 0; i < n && i < 4; i++) outs[i] = alloy_node_output(nd, i);
  CHECK_OK(alloy_graph_set_outputs(g, outs, n));
}

static void check_f32(const float *got, const float *want, int n, const char *what) {
  int bad = 0;
  for (int i = 0; i < n; i++)
    if (!(fabsf(got[i] - want[i]) <= 1e-5f + 1.3e-6f * fabsf(want[i])) && bad++ < 3)
      harness_fail(__FILE__, __LINE__, "%s[%d] = %.9g, expected %.9g", what, i, (double)got[i],
                   (double)want[i]);
}

/* Runs the one-node graph g (built by the caller) on the probe plugin with
 * contiguous f32 inputs and checks output 0 against want. */
static void probe_run(alloy_graph *g, const float *const *in, const int *counts, int nin,
                      const float *want, int nwant, const char *what) {
  drv d;
  if (!drv_open(&d, plugin_path("tests/plugins", "kt_probe"))) {
    drv_close(&d);
    return;
  }
  alloy_executable *exe = drv_compile(&d, g);
  drv_tensor ti[4], to[1];
  for (int i = 0; i < nin; i++) {
    const alloy_value *v = alloy_graph_input(g, i);
    int64_t sizes[4];
    for (int k = 0; k < alloy_value_rank(v); k++) sizes[k] = alloy_value_shape(v)[k].value;
    drv_tensor_new(&d, &ti[i], ALLOY_F32, alloy_value_rank(v), sizes, NULL, in[i],
                   (size_t)counts[i] * sizeof(float));
  }
  const alloy_value *o = alloy_graph_output(g, 0);
  int64_t osizes[4];
  for (int k = 0; k < alloy_value_rank(o); k++) osizes[k] = alloy_value_shape(o)[k].value;
  drv_tensor_new(&d, &to[0], ALLOY_F32, alloy_value_rank(o), osizes, NULL, NULL,
                 (size_t)nwant * sizeof(float));
  if (exe) CHECK_OK(drv_exec(&d, exe, ti, nin, to, 1));
  if (exe && to[0].buf) check_f32(drv_data(&d, &to[0]), want, nwant, what);
  drv_close(&d); /* releases the executable and the buffers */
}

/* ---- signature features (the probe table) ---------------------------------------- */

TEST(kt_strides_reach_the_kernel_as_they_are) {
  /* x is [3, 2], stored transposed: element (i, j) at j * 3 + i. */
  drv d;
  if (!drv_open(&d, plugin_path("tests/plugins", "kt_probe"))) {
    drv_close(&d);
    return;
  }
  alloy_graph *g = alloy_graph_new();
  int64_t s[2] = {3, 2};
  alloy_arg a[1] = {alloy_arg_value(input(g, "x", ALLOY_F32, 2, s))};
  outputs(g, add(g, "aten.neg.default", a, 1, NULL, alloy_arg_none(), "y"));
  alloy_executable *exe = drv_compile(&d, g);
  float storage[6] = {1, 2, 3, 4, 5, 6}, want[6];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 2; j++) want[i * 2 + j] = -storage[j * 3 + i];
  int64_t strides[2] = {1, 3};
  drv_tensor x, y;
  drv_tensor_new(&d, &x, ALLOY_F32, 2, s, strides, storage, sizeof storage);
  drv_tensor_new(&d, &y, ALLOY_F32, 2, s, NULL, NULL, sizeof want);
  if (exe) CHECK_OK(drv_exec(&d, exe, &x, 1, &y, 1));
  if (exe) check_f32(drv_data(&d, &y), want, 6, "neg of a transposed x");
  drv_close(&d);
  alloy_graph_free(g);
}

TEST(kt_bstrides_index_inputs_unbroadcast) {
  alloy_graph *g = alloy_graph_new();
  int64_t sa[2] = {3, 1}, sb[1] = {4};
  alloy_arg a[2] = {alloy_arg_value(input(g, "a", ALLOY_F32, 2, sa)),
                    alloy_arg_value(input(g, "b", ALLOY_F32, 1, sb))};
  outputs(g, add(g, "aten.mul.Tensor", a, 2, NULL, alloy_arg_none(), "y"));
  float av[3] = {1, 2, 3}, bv[4] = {10, 20, 30, 40}, want[12];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++) want[i * 4 + j] = av[i] * bv[j];
  const float *in[2] = {av, bv};
  int counts[2] = {3, 4};
  probe_run(g, in, counts, 2, want, 12, "a[3, 1] * b[4]");
  alloy_graph_free(g);
}

TEST(kt_int_kernel_failure_names_node_and_op) {
  drv d;
  if (!drv_open(&d, plugin_path("tests/plugins", "kt_probe"))) {
    drv_close(&d);
    return;
  }
  alloy_graph *g = alloy_graph_new();
  int64_t s[1] = {3};
  alloy_arg a[2] = {alloy_arg_value(input(g, "a", ALLOY_F32, 1, s)),
                    alloy_arg_value(input(g, "b", ALLOY_F32, 1, s))};
  outputs(g, add(g, "aten.div.Tensor", a, 2, NULL, alloy_arg_none(), "quotient"));
  alloy_executable *exe = drv_compile(&d, g);
  float av[3] = {1, 2, 3}, ok[3] = {1, 4, 6}, zero[3] = {1, 0, 2};
  drv_tensor x, y, z;
  drv_tensor_new(&d, &x, ALLOY_F32, 1, s, NULL, av, sizeof av);
  drv_tensor_new(&d, &y, ALLOY_F32, 1, s, NULL, ok, sizeof ok);
  drv_tensor_new(&d, &z, ALLOY_F32, 1, s, NULL, NULL, sizeof av);
  drv_tensor ins[2] = {x, y};
  if (exe) CHECK_OK(drv_exec(&d, exe, ins, 2, &z, 1));
  float want[3] = {1.0f, 0.5f, 0.5f};
  if (exe) check_f32(drv_data(&d, &z), want, 3, "a / b");
  CHECK_OK(d.api->buffer_copy_from_host(d.be, y.buf, 0, zero, sizeof zero, NULL, NULL));
  alloy_error *e = exe ? drv_exec(&d, exe, ins, 2, &z, 1) : NULL;
  CHECK(e != NULL);
  if (e) {
    const char *msg = alloy_error_message(e);
    if (!strstr(msg, "quotient") || !strstr(msg, "aten.div.Tensor") || !strstr(msg, "7"))
      harness_fail(__FILE__, __LINE__, "the error \"%s\" names neither the node nor the result", msg);
    alloy_error_free(e);
  }
  drv_close(&d);
  alloy_graph_free(g);
}

/* alpha 3 takes the i64 row; alpha 0.5 cannot be an i64, so the f64 row. */
TEST(kt_scalar_args_pick_the_row_that_takes_them) {
  for (int r = 0; r < 2; r++) {
    alloy_graph *g = alloy_graph_new();
    int64_t s[1] = {4};
    alloy_arg a[2] = {alloy_arg_value(input(g, "a", ALLOY_F32, 1, s)),
                      alloy_arg_value(input(g, "b", ALLOY_F32, 1, s))};
    alloy_arg alpha = r == 0 ? alloy_arg_int(3) : alloy_arg_float(0.5);
    outputs(g, add(g, "aten.add.Tensor", a, 2, "alpha", alpha, "y"));
    float av[4] = {1, 2, 3, 4}, bv[4] = {8, 6, 4, 2}, want[4];
    for (int i = 0; i < 4; i++) want[i] = av[i] + (r == 0 ? 3.0f : 0.5f) * bv[i];
    const float *in[2] = {av, bv};
    int counts[2] = {4, 4};
    probe_run(g, in, counts, 2, want, 4, r == 0 ? "alpha = 3" : "alpha = 0.5");
    alloy_graph_free(g);
  }
}

TEST(kt_per_operand_dtypes_and_a_bool_condition) {
  drv d;
  if (!drv_open(&d, plugin_path("tests/plugins", "kt_probe"))) {
    drv_close(&d);
    return;
  }
  alloy_graph *g = alloy_graph_new();
  int64_t sc[1] = {4}, sa[2] = {2, 4}, sb[1] = {1};
  alloy_arg a[3] = {alloy_arg_value(input(g, "c", ALLOY_BOOL, 1, sc)),
                    alloy_arg_value(input(g, "a", ALLOY_F32, 2, sa)),
                    alloy_arg_value(input(g, "b", ALLOY_F32, 1, sb))};
  outputs(g, add(g, "aten.where.self", a, 3, NULL, alloy_arg_none(), "w"));
  alloy_executable *exe = drv_compile(&d, g);
  uint8_t cv[4] = {1, 0, 0, 1};
  float av[8] = {1, 2, 3, 4, 5, 6, 7, 8}, bv[1] = {-1}, want[8] = {1, -1, -1, 4, 5, -1, -1, 8};
  drv_tensor ins[3], out;
  drv_tensor_new(&d, &ins[0], ALLOY_BOOL, 1, sc, NULL, cv, sizeof cv);
  drv_tensor_new(&d, &ins[1], ALLOY_F32, 2, sa, NULL, av, sizeof av);
  drv_tensor_new(&d, &ins[2], ALLOY_F32, 1, sb, NULL, bv, sizeof bv);
  drv_tensor_new(&d, &out, ALLOY_F32, 2, sa, NULL, NULL, sizeof want);
  if (exe) CHECK_OK(drv_exec(&d, exe, ins, 3, &out, 1));
  if (exe) check_f32(drv_data(&d, &out), want, 8, "where(c, a, b)");
  alloy_graph_free(g);
  /* f64 values: the constraint "bool, f32, f32 -> f32" refuses the node. */
  g = alloy_graph_new();
  alloy_arg b[3] = {alloy_arg_value(input(g, "c", ALLOY_BOOL, 1, sc)),
                    alloy_arg_value(input(g, "a", ALLOY_F64, 2, sa)),
                    alloy_arg_value(input(g, "b", ALLOY_F64, 1, sb))};
  outputs(g, add(g, "aten.where.self", b, 3, NULL, alloy_arg_none(), "w"));
  CHECK_INT(drv_claim(&d, g, NULL), 0);
  alloy_graph_free(g);
  drv_close(&d);
}

TEST(kt_two_outputs_of_two_dtypes) {
  drv d;
  if (!drv_open(&d, plugin_path("tests/plugins", "kt_probe"))) {
    drv_close(&d);
    return;
  }
  alloy_graph *g = alloy_graph_new();
  int64_t s[2] = {2, 5}, so[1] = {2};
  alloy_arg a[2] = {alloy_arg_value(input(g, "x", ALLOY_F32, 2, s)), alloy_arg_int(1)};
  outputs(g, add(g, "aten.max.dim", a, 2, NULL, alloy_arg_none(), "mx"));
  alloy_executable *exe = drv_compile(&d, g);
  float xv[10] = {3, 9, 1, 2, 0, -5, -1, -7, -2, -3};
  drv_tensor x, outs[2];
  drv_tensor_new(&d, &x, ALLOY_F32, 2, s, NULL, xv, sizeof xv);
  drv_tensor_new(&d, &outs[0], ALLOY_F32, 1, so, NULL, NULL, 2 * sizeof(float));
  drv_tensor_new(&d, &outs[1], ALLOY_I64, 1, so, NULL, NULL, 2 * sizeof(int64_t));
  if (exe) CHECK_OK(drv_exec(&d, exe, &x, 1, outs, 2));
  if (exe) {
    const float *v = drv_data(&d, &outs[0]);
    const int64_t *ix = drv_data(&d, &outs[1]);
    CHECK(v[0] == 9.0f && v[1] == -1.0f);
    CHECK_INT(ix[0], 1);
    CHECK_INT(ix[1], 1);
  }
  drv_close(&d);
  alloy_graph_free(g);
}

TEST(kt_i32_arg_with_a_negative_dim) {
  for (int r = 0; r < 2; r++) {
    alloy_graph *g = alloy_graph_new();
    int64_t s[2] = {2, 3};
    alloy_arg a[2] = {alloy_arg_value(input(g, "x", ALLOY_F32, 2, s)), alloy_arg_int(r ? -2 : 1)};
    outputs(g, add(g, "aten.cumsum.default", a, 2, NULL, alloy_arg_none(), "cs"));
    float xv[6] = {1, 2, 3, 4, 5, 6};
    float rows[6] = {1, 3, 6, 4, 9, 15}, cols[6] = {1, 2, 3, 5, 7, 9};
    const float *in[1] = {xv};
    int counts[1] = {6};
    probe_run(g, in, counts, 1, r ? cols : rows, 6, r ? "cumsum dim -2" : "cumsum dim 1");
    alloy_graph_free(g);
  }
}

TEST(kt_bool_arg) {
  for (int keep = 0; keep < 2; keep++) {
    alloy_graph *g = alloy_graph_new();
    int64_t s[2] = {2, 3};
    alloy_arg dims[1] = {alloy_arg_int(1)};
    alloy_arg a[3] = {alloy_arg_value(input(g, "x", ALLOY_F32, 2, s)), alloy_arg_list(dims, 1),
                      alloy_arg_bool(keep)};
    outputs(g, add(g, "aten.sum.dim_IntList", a, 3, NULL, alloy_arg_none(), "sm"));
    float xv[6] = {1, 2, 3, 4, 5, 6}, want[2] = {6, 15};
    const float *in[1] = {xv};
    int counts[1] = {6};
    probe_run(g, in, counts, 1, want, 2, keep ? "sum keepdim" : "sum");
    alloy_graph_free(g);
  }
}

TEST(kt_call_kernel_sees_list_items) {
  alloy_graph *g = alloy_graph_new();
  int64_t s0[2] = {2, 3}, s1[2] = {1, 3}, s2[2] = {3, 3};
  alloy_arg items[3] = {alloy_arg_value(input(g, "p", ALLOY_F32, 2, s0)),
                        alloy_arg_value(input(g, "q", ALLOY_F32, 2, s1)),
                        alloy_arg_value(input(g, "r", ALLOY_F32, 2, s2))};
  alloy_arg a[1] = {alloy_arg_list(items, 3)};
  outputs(g, add(g, "aten.cat.default", a, 1, NULL, alloy_arg_none(), "cat"));
  float p[6] = {1, 2, 3, 4, 5, 6}, q[3] = {7, 8, 9}, r[9] = {10, 11, 12, 13, 14, 15, 16, 17, 18};
  float want[18];
  for (int i = 0; i < 18; i++) want[i] = (float)(i + 1);
  const float *in[3] = {p, q, r};
  int counts[3] = {6, 3, 9};
  probe_run(g, in, counts, 3, want, 18, "cat");
  alloy_graph_free(g);
}

/* nonzero's sizes are known only once it ran: the kernel allocates its
 * output, and the size u0 of the next nodes' outputs is bound from it. As
 * a graph output the host gives the sizes and the kernel's must agree. */
TEST(kt_data_dependent_output_is_allocated_by_the_kernel) {
  drv d;
  if (!drv_open(&d, plugin_path("tests/plugins", "kt_probe"))) {
    drv_close(&d);
    return;
  }
  for (int both = 0; both < 2; both++) {
    alloy_graph *g = alloy_graph_new();
    int64_t s[1] = {6}, so[2] = {3, 1};
    alloy_arg a[1] = {alloy_arg_value(input(g, "x", ALLOY_F32, 1, s))};
    alloy_node *nz = add(g, "aten.nonzero.default", a, 1, NULL, alloy_arg_none(), "nz");
    alloy_arg b[1] = {alloy_arg_value(nz ? alloy_node_output(nz, 0) : NULL)};
    alloy_node *ng = nz ? add(g, "aten.neg.default", b, 1, NULL, alloy_arg_none(), "ng") : NULL;
    alloy_arg c[1] = {alloy_arg_value(ng ? alloy_node_output(ng, 0) : NULL)};
    alloy_node *ng2 = ng ? add(g, "aten.neg.default", c, 1, NULL, alloy_arg_none(), "ng2") : NULL;
    if (!ng2) {
      alloy_graph_free(g);
      break;
    }
    alloy_value *outs[2] = {alloy_node_output(ng2, 0), alloy_node_output(nz, 0)};
    CHECK_OK(alloy_graph_set_outputs(g, outs, both ? 2 : 1));
    alloy_executable *exe = drv_compile(&d, g);
    float xv[6] = {0, 1, 0, 2, 3, 0};
    drv_tensor x, y[2];
    drv_tensor_new(&d, &x, ALLOY_F32, 1, s, NULL, xv, sizeof xv);
    drv_tensor_new(&d, &y[0], ALLOY_I64, 2, so, NULL, NULL, 3 * sizeof(int64_t));
    drv_tensor_new(&d, &y[1], ALLOY_I64, 2, so, NULL, NULL, 3 * sizeof(int64_t));
    if (exe) CHECK_OK(drv_exec(&d, exe, &x, 1, y, both ? 2 : 1));
    if (exe) {
      const int64_t *ngv = drv_data(&d, &y[0]), *nzv = drv_data(&d, &y[1]);
      CHECK(ngv[0] == 1 && ngv[1] == 3 && ngv[2] == 4);
      if (both) CHECK(nzv[0] == 1 && nzv[1] == 3 && nzv[2] == 4);
    }
    d.api->executable_release(d.be, exe);
    for (int i = 0; i < 2; i++) d.api->buffer_release(d.be, y[i].buf);
    d.api->buffer_release(d.be, x.buf);
    alloy_graph_free(g);
  }
  drv_close(&d);
}

/* A graph output the host cannot size comes without a buffer (sizes -1):
 * the plugin gives it one of its own, with the actual sizes. */
TEST(kt_unsized_graph_output_gets_a_buffer) {
  drv d;
  if (!drv_open(&d, plugin_path("tests/plugins", "kt_probe"))) {
    drv_close(&d);
    return;
  }
  alloy_graph *g = alloy_graph_new();
  int64_t s[2] = {2, 3};
  alloy_arg a[1] = {alloy_arg_value(input(g, "x", ALLOY_F32, 2, s))};
  alloy_node *nz = add(g, "aten.nonzero.default", a, 1, NULL, alloy_arg_none(), "nz");
  alloy_arg b[1] = {alloy_arg_value(nz ? alloy_node_output(nz, 0) : NULL)};
  alloy_node *ng = nz ? add(g, "aten.neg.default", b, 1, NULL, alloy_arg_none(), "ng") : NULL;
  alloy_value *outs[2] = {ng ? alloy_node_output(ng, 0) : NULL, nz ? alloy_node_output(nz, 0) : NULL};
  if (ng) CHECK_OK(alloy_graph_set_outputs(g, outs, 2));
  alloy_executable *exe = ng ? drv_compile(&d, g) : NULL;
  float xv[6] = {0, 5, 0, 0, 0, 7};
  drv_tensor x;
  drv_tensor_new(&d, &x, ALLOY_F32, 2, s, NULL, xv, sizeof xv);
  int64_t sizes[2][2] = {{-1, 2}, {-1, 2}}, strides[2][2] = {{0, 0}, {0, 0}};
  alloy_tensor out[2];
  for (int k = 0; k < 2; k++)
    out[k] = (alloy_tensor){sizeof(alloy_tensor), NULL, 0, ALLOY_I64, 2, sizes[k], strides[k]};
  alloy_event *done = NULL;
  alloy_execute_args args = {sizeof args, &x.t, 1, out, 2, NULL, 0, NULL, &done, NULL};
  if (exe) CHECK_OK(d.api->execute(d.be, exe, &args));
  for (int k = 0; exe && k < 2; k++) {
    CHECK(out[k].buffer != NULL);
    CHECK_INT(sizes[k][0], 2);
    CHECK_INT(sizes[k][1], 2);
    CHECK_INT(strides[k][0], 2);
    CHECK_INT(strides[k][1], 1);
    if (!out[k].buffer) continue;
    const int64_t *v = (const int64_t *)((char *)d.api->buffer_host_pointer(d.be, out[k].buffer) + out[k].offset);
    int64_t sign = k == 0 ? -1 : 1; /* nz = [[0, 1], [1, 2]] */
    CHECK(v[0] == 0 && v[1] == sign * 1 && v[2] == sign * 1 && v[3] == sign * 2);
    d.api->buffer_release(d.be, out[k].buffer); /* the host owns it */
  }
  drv_close(&d);
  alloy_graph_free(g);
}

/* ---- layouts the runtime never passes (the example plugin) -------------------------- */

/* mm asks no strides: a transposed b arrives as a contiguous copy, and a
 * transposed output buffer is written through a copy. */
TEST(kt_strided_operands_are_made_contiguous) {
  drv d;
  if (!drv_open(&d, plugin_path("lib/alloy", "example"))) {
    drv_close(&d);
    return;
  }
  alloy_graph *g = alloy_graph_new();
  int64_t sa[2] = {2, 3}, sb[2] = {3, 2}, sy[2] = {2, 2};
  alloy_arg a[2] = {alloy_arg_value(input(g, "a", ALLOY_F32, 2, sa)),
                    alloy_arg_value(input(g, "b", ALLOY_F32, 2, sb))};
  outputs(g, add(g, "aten.mm.default", a, 2, NULL, alloy_arg_none(), "y"));
  alloy_executable *exe = drv_compile(&d, g);
  float av[6] = {1, 2, 3, 4, 5, 6}, bt[6] = {1, 0, -1, 2, 3, 4}; /* b^T, row-major [2, 3] */
  float want[4], got[4];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) {
      float acc = 0;
      for (int k = 0; k < 3; k++) acc += av[i * 3 + k] * bt[j * 3 + k];
      want[i * 2 + j] = acc;
    }
  int64_t bstr[2] = {1, 3}, ystr[2] = {1, 2};
  drv_tensor ins[2], y;
  drv_tensor_new(&d, &ins[0], ALLOY_F32, 2, sa, NULL, av, sizeof av);
  drv_tensor_new(&d, &ins[1], ALLOY_F32, 2, sb, bstr, bt, sizeof bt);
  drv_tensor_new(&d, &y, ALLOY_F32, 2, sy, ystr, NULL, sizeof want);
  if (exe) CHECK_OK(drv_exec(&d, exe, ins, 2, &y, 1));
  if (exe) {
    const float *yt = drv_data(&d, &y); /* stored transposed */
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 2; j++) got[i * 2 + j] = yt[j * 2 + i];
    check_f32(got, want, 4, "a @ b^T^T");
  }
  drv_close(&d);
  alloy_graph_free(g);
}

/* An input view whose strides reach past its buffer is refused. */
TEST(kt_execute_checks_tensor_bounds) {
  drv d;
  if (!drv_open(&d, plugin_path("lib/alloy", "example"))) {
    drv_close(&d);
    return;
  }
  alloy_graph *g = alloy_graph_new();
  int64_t s[1] = {4};
  alloy_arg a[1] = {alloy_arg_value(input(g, "x", ALLOY_F32, 1, s))};
  outputs(g, add(g, "aten.relu.default", a, 1, NULL, alloy_arg_none(), "y"));
  alloy_executable *exe = drv_compile(&d, g);
  int64_t wide[1] = {2};
  drv_tensor x, y;
  drv_tensor_new(&d, &x, ALLOY_F32, 1, s, wide, NULL, 4 * sizeof(float));
  drv_tensor_new(&d, &y, ALLOY_F32, 1, s, NULL, NULL, 4 * sizeof(float));
  alloy_error *e = exe ? drv_exec(&d, exe, &x, 1, &y, 1) : NULL;
  CHECK(e != NULL);
  if (e) {
    CHECK(strstr(alloy_error_message(e), "input 0 (x)") != NULL);
    alloy_error_free(e);
  }
  drv_close(&d);
  alloy_graph_free(g);
}

/* ---- threads, objects, claims ------------------------------------------------------- */

typedef struct worker {
  drv *d;
  alloy_executable *exe;
  int seed, failures;
} worker;

/* Runs relu(a @ b + c) many times on buffers of its own. */
static void *worker_run(void *arg) {
  worker *w = arg;
  drv *d = w->d;
  enum { M = 9, K = 7, N = 5 };
  float a[M * K], b[K * N], c[N], want[M * N];
  for (int i = 0; i < M * K; i++) a[i] = (float)((i * 7 + w->seed) % 13) - 6.0f;
  for (int i = 0; i < K * N; i++) b[i] = (float)((i * 5 + w->seed) % 11) - 5.0f;
  for (int i = 0; i < N; i++) c[i] = (float)(i - w->seed % 3);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double acc = c[j];
      for (int k = 0; k < K; k++) acc += (double)a[i * K + k] * b[k * N + j];
      want[i * N + j] = acc > 0 ? (float)acc : 0.0f;
    }
  alloy_buffer *bufs[4] = {NULL};
  size_t bytes[4] = {sizeof a, sizeof b, sizeof c, sizeof want};
  const void *src[3] = {a, b, c};
  for (int i = 0; i < 4; i++) {
    alloy_error *e = d->api->buffer_allocate(d->be, 0, bytes[i], &bufs[i]);
    if (e) {
      d->host->error_free(e);
      w->failures++;
      return NULL;
    }
    if (i < 3) memcpy(d->api->buffer_host_pointer(d->be, bufs[i]), src[i], bytes[i]);
  }
  int64_t sa[2] = {M, K}, sta[2] = {K, 1}, sb[2] = {K, N}, stb[2] = {N, 1}, sc[1] = {N}, stc[1] = {1};
  int64_t sy[2] = {M, N}, sty[2] = {N, 1};
  alloy_tensor ins[3] = {{sizeof(alloy_tensor), bufs[0], 0, ALLOY_F32, 2, sa, sta},
                         {sizeof(alloy_tensor), bufs[1], 0, ALLOY_F32, 2, sb, stb},
                         {sizeof(alloy_tensor), bufs[2], 0, ALLOY_F32, 1, sc, stc}};
  alloy_tensor out = {sizeof(alloy_tensor), bufs[3], 0, ALLOY_F32, 2, sy, sty};
  alloy_queue *q = NULL;
  alloy_error *e = d->api->queue_create(d->be, 0, &q);
  for (int it = 0; it < 40 && !e; it++) {
    memset(d->api->buffer_host_pointer(d->be, bufs[3]), 0xff, sizeof want);
    alloy_event *done = NULL;
    alloy_execute_args args = {sizeof args, ins, 3, &out, 1, NULL, 0, q, &done, NULL};
    e = d->api->execute(d->be, w->exe, &args);
    if (!e && done) e = d->api->event_wait(d->be, done);
    if (done) d->api->event_release(d->be, done);
    if (!e && memcmp(d->api->buffer_host_pointer(d->be, bufs[3]), want, sizeof want) != 0) w->failures++;
  }
  if (e) {
    w->failures++;
    d->host->error_free(e);
  }
  return NULL;
}

TEST(kt_executes_concurrently_on_distinct_queues) {
  drv d;
  if (!drv_open(&d, plugin_path("lib/alloy", "example"))) {
    drv_close(&d);
    return;
  }
  alloy_graph *g = alloy_graph_new();
  int64_t sa[2] = {9, 7}, sb[2] = {7, 5}, sc[1] = {5};
  alloy_arg mm[2] = {alloy_arg_value(input(g, "a", ALLOY_F32, 2, sa)),
                     alloy_arg_value(input(g, "b", ALLOY_F32, 2, sb))};
  alloy_node *n1 = add(g, "aten.mm.default", mm, 2, NULL, alloy_arg_none(), "ab");
  alloy_arg ad[2] = {alloy_arg_value(n1 ? alloy_node_output(n1, 0) : NULL),
                     alloy_arg_value(input(g, "c", ALLOY_F32, 1, sc))};
  alloy_node *n2 = n1 ? add(g, "aten.add.Tensor", ad, 2, NULL, alloy_arg_none(), "abc") : NULL;
  alloy_arg rl[1] = {alloy_arg_value(n2 ? alloy_node_output(n2, 0) : NULL)};
  outputs(g, n2 ? add(g, "aten.relu.default", rl, 1, NULL, alloy_arg_none(), "y") : NULL);
  alloy_executable *exe = n2 ? drv_compile(&d, g) : NULL;
  enum { T = 4 };
  pthread_t th[T];
  worker w[T];
  for (int i = 0; exe && i < T; i++) {
    w[i] = (worker){&d, exe, i * 3 + 1, 0};
    CHECK_INT(pthread_create(&th[i], NULL, worker_run, &w[i]), 0);
  }
  for (int i = 0; exe && i < T; i++) {
    pthread_join(th[i], NULL);
    CHECK_INT(w[i].failures, 0);
  }
  drv_close(&d); /* the queues and buffers of the workers go with it */
  alloy_graph_free(g);
}

TEST(kt_plugins_are_abi_1_3) {
  drv d;
  if (!drv_open(&d, plugin_path("lib/alloy", "example"))) {
    drv_close(&d);
    return;
  }
  const alloy_plugin_api *api = d.api;
  CHECK_INT(api->abi_major, ALLOY_ABI_MAJOR);
  CHECK_INT(api->abi_minor, 3);
  /* (a plugin built against older headers ends sooner: read no further) */
  REQUIRE(api->struct_size == ALLOY_PLUGIN_API_STRUCT_SIZE);
  CHECK(api->event_record && api->queue_wait_event && api->host_buffer_allocate &&
        api->host_buffer_release && api->buffer_import);
  CHECK(api->backend_set_option == NULL); /* the helper has no options */
  CHECK(api->queue_import == NULL);       /* nor streams of a caller's to run on */
  drv_close(&d);
}

TEST(kt_device_info_fills_the_1_2_fields_it_is_given) {
  drv d;
  if (!drv_open(&d, plugin_path("lib/alloy", "example"))) {
    drv_close(&d);
    return;
  }
  alloy_device_info info = {.struct_size = ALLOY_DEVICE_INFO_STRUCT_SIZE};
  CHECK_OK(d.api->device_info(d.be, 0, &info));
  struct utsname u;
  REQUIRE(uname(&u) == 0);
  CHECK(info.arch && !strncmp(info.arch, u.machine, strlen(u.machine)));
  CHECK(info.capabilities == (ALLOY_DEVICE_CAP_HOST_VISIBLE | ALLOY_DEVICE_CAP_IMPORT));
  CHECK(info.launch_s > 0 && info.launch_s < 1e-4);
  CHECK(info.host_bytes_per_s >= 1e9);
  CHECK(info.memory_bytes > 0);
  CHECK(info.free_memory_bytes > 0 && info.free_memory_bytes <= info.memory_bytes);
  /* A 1.1 host's struct ends at memory_bytes: nothing past it is written. */
  union {
    alloy_device_info info;
    unsigned char bytes[sizeof(alloy_device_info)];
  } old;
  memset(&old, 0xa5, sizeof old);
  old.info.struct_size = ALLOY_STRUCT_SIZE(alloy_device_info, memory_bytes);
  CHECK_OK(d.api->device_info(d.be, 0, &old.info));
  CHECK_STR(old.info.name, "cpu0");
  size_t end = ALLOY_STRUCT_SIZE(alloy_device_info, memory_bytes), untouched = 0;
  for (size_t i = end; i < sizeof old; i++) untouched += old.bytes[i] == 0xa5;
  CHECK_INT(untouched, sizeof old - end);
  drv_close(&d);
}

TEST(kt_events_are_born_signalled) {
  drv d;
  if (!drv_open(&d, plugin_path("lib/alloy", "example"))) {
    drv_close(&d);
    return;
  }
  const alloy_plugin_api *api = d.api;
  alloy_queue *q = NULL;
  CHECK_OK(api->queue_create(d.be, 0, &q));
  alloy_event *ev = NULL, *ev2 = NULL, *left = NULL;
  CHECK_OK(api->event_record(d.be, q, &ev));
  CHECK_OK(api->event_record(d.be, NULL, &ev2)); /* the default queue */
  CHECK(ev != NULL && ev2 != NULL && ev != ev2);
  CHECK_INT(api->event_query(d.be, ev), 1);
  CHECK_OK(api->event_wait(d.be, ev));
  CHECK_OK(api->queue_wait_event(d.be, q, ev2));
  api->event_release(d.be, ev);
  api->event_release(d.be, ev2);
  api->event_release(d.be, NULL);
  /* Execute on a queue: *done is set (NULL: finished), never left as it was. */
  alloy_graph *g = alloy_graph_new();
  int64_t s[1] = {4};
  alloy_arg a[1] = {alloy_arg_value(input(g, "x", ALLOY_F32, 1, s))};
  outputs(g, add(g, "aten.relu.default", a, 1, NULL, alloy_arg_none(), "y"));
  alloy_executable *exe = drv_compile(&d, g);
  float xv[4] = {-1, 2, -3, 4}, want[4] = {0, 2, 0, 4};
  drv_tensor x, y;
  drv_tensor_new(&d, &x, ALLOY_F32, 1, s, NULL, xv, sizeof xv);
  drv_tensor_new(&d, &y, ALLOY_F32, 1, s, NULL, NULL, sizeof want);
  alloy_event *done = (alloy_event *)&done;
  alloy_execute_args args = {.struct_size = ALLOY_EXECUTE_ARGS_STRUCT_SIZE, .inputs = &x.t,
                             .num_inputs = 1, .outputs = &y.t, .num_outputs = 1, .queue = q,
                             .done = &done};
  if (exe) CHECK_OK(api->execute(d.be, exe, &args));
  CHECK(done == NULL);
  if (exe) check_f32(drv_data(&d, &y), want, 4, "relu on a queue");
  CHECK_OK(api->event_record(d.be, q, &left)); /* left for backend_close */
  drv_close(&d);
  alloy_graph_free(g);
}

TEST(kt_host_buffers_and_imported_memory) {
  drv d;
  if (!drv_open(&d, plugin_path("lib/alloy", "example"))) {
    drv_close(&d);
    return;
  }
  const alloy_plugin_api *api = d.api;
  void *staging = NULL, *left = NULL, *zero = NULL;
  CHECK_OK(api->host_buffer_allocate(d.be, 1000, &staging));
  CHECK_OK(api->host_buffer_allocate(d.be, 0, &zero));
  CHECK_OK(api->host_buffer_allocate(d.be, 64, &left)); /* left for backend_close */
  REQUIRE(staging && zero && left);
  CHECK(((uintptr_t)staging & 63) == 0 && ((uintptr_t)left & 63) == 0 && zero != staging);
  memset(staging, 0x5a, 1000);
  api->host_buffer_release(d.be, staging);
  api->host_buffer_release(d.be, zero);
  api->host_buffer_release(d.be, NULL);

  /* Memory of the caller's, used in place: relu from one imported buffer
   * into another, and release leaves both to their owner. */
  static float xv[4] = {-1, 2, -3, 4}, yv[4];
  alloy_buffer *bx = NULL, *by = NULL, *none = (alloy_buffer *)&none;
  CHECK_OK(api->buffer_import(d.be, 0, xv, sizeof xv, NULL, &bx));
  CHECK_OK(api->buffer_import(d.be, 0, yv, sizeof yv, NULL, &by));
  REQUIRE(bx && by);
  CHECK(api->buffer_host_pointer(d.be, bx) == xv);
  alloy_error *e = api->buffer_import(d.be, 1, xv, sizeof xv, NULL, &none);
  CHECK(e != NULL && none == (alloy_buffer *)&none);
  alloy_error_free(e);
  e = api->buffer_import(d.be, 0, NULL, 16, NULL, &none);
  CHECK(e != NULL && none == (alloy_buffer *)&none);
  alloy_error_free(e);
  alloy_graph *g = alloy_graph_new();
  int64_t s[1] = {4}, st[1] = {1};
  alloy_arg a[1] = {alloy_arg_value(input(g, "x", ALLOY_F32, 1, s))};
  outputs(g, add(g, "aten.relu.default", a, 1, NULL, alloy_arg_none(), "y"));
  alloy_executable *exe = drv_compile(&d, g);
  alloy_tensor tx = {sizeof(alloy_tensor), bx, 0, ALLOY_F32, 1, s, st};
  alloy_tensor ty = {sizeof(alloy_tensor), by, 0, ALLOY_F32, 1, s, st};
  alloy_execute_args args = {.struct_size = ALLOY_EXECUTE_ARGS_STRUCT_SIZE, .inputs = &tx,
                             .num_inputs = 1, .outputs = &ty, .num_outputs = 1};
  if (exe) CHECK_OK(api->execute(d.be, exe, &args));
  float want[4] = {0, 2, 0, 4};
  if (exe) check_f32(yv, want, 4, "relu of imported memory");
  float back[4];
  CHECK_OK(api->buffer_copy_from_host(d.be, bx, 4, want, 8, NULL, NULL));
  CHECK(xv[0] == -1 && xv[1] == 0 && xv[2] == 2 && xv[3] == 4);
  CHECK_OK(api->buffer_copy_to_host(d.be, back, bx, 0, sizeof back, NULL, NULL));
  CHECK(back[2] == 2);
  api->buffer_release(d.be, bx);
  drv_close(&d); /* by is still out: closing forgets it without freeing yv */
  yv[0] = 1;     /* still ours */
  alloy_graph_free(g);
}

/* The helper's own work per execute, what device_info's launch_s says:
 * a one-node partition of four elements run many times. */
TEST(kt_launch_overhead_is_about_a_microsecond) {
  drv d;
  if (!drv_open(&d, plugin_path("lib/alloy", "example"))) {
    drv_close(&d);
    return;
  }
  alloy_graph *g = alloy_graph_new();
  int64_t s[1] = {4};
  alloy_arg a[1] = {alloy_arg_value(input(g, "x", ALLOY_F32, 1, s))};
  outputs(g, add(g, "aten.relu.default", a, 1, NULL, alloy_arg_none(), "y"));
  alloy_executable *exe = drv_compile(&d, g);
  float xv[4] = {1, 2, 3, 4};
  drv_tensor x, y;
  drv_tensor_new(&d, &x, ALLOY_F32, 1, s, NULL, xv, sizeof xv);
  drv_tensor_new(&d, &y, ALLOY_F32, 1, s, NULL, NULL, sizeof xv);
  alloy_execute_args args = {.struct_size = ALLOY_EXECUTE_ARGS_STRUCT_SIZE, .inputs = &x.t,
                             .num_inputs = 1, .outputs = &y.t, .num_outputs = 1};
  enum { RUNS = 20000 };
  double best = 1e9;
  for (int round = 0; exe && round < 3; round++) {
    uint64_t t0 = d.host->clock_ns();
    for (int i = 0; i < RUNS; i++) {
      alloy_error *e = d.api->execute(d.be, exe, &args);
      if (e) {
        CHECK_OK(e);
        break;
      }
    }
    double per = (double)(d.host->clock_ns() - t0) * 1e-9 / RUNS;
    if (per < best) best = per;
  }
  if (getenv("ALLOY_TEST_VERBOSE")) printf("  kt launch: %.3g s per execute\n", best);
  /* Loose: sanitizer builds and busy machines are slower. */
  CHECK(best < 50e-6);
  drv_close(&d);
  alloy_graph_free(g);
}

TEST(kt_buffers_queues_and_devices) {
  drv d;
  if (!drv_open(&d, plugin_path("lib/alloy", "example"))) {
    drv_close(&d);
    return;
  }
  const alloy_plugin_api *api = d.api;
  CHECK_STR(api->name, "example");
  CHECK(api->executable_serialize == NULL && api->executable_deserialize == NULL);
  CHECK_INT(api->device_count(d.be), 1);
  alloy_device_info info = {.struct_size = ALLOY_DEVICE_INFO_STRUCT_SIZE, .kind = ALLOY_DEVICE_KIND_GPU};
  CHECK_OK(api->device_info(d.be, 0, &info));
  CHECK_STR(info.name, "cpu0");
  CHECK_INT(info.kind, ALLOY_DEVICE_KIND_CPU);
  alloy_error *e = api->device_info(d.be, 1, &info);
  CHECK(e != NULL);
  alloy_error_free(e);

  alloy_buffer *a = NULL, *b = NULL, *z = NULL;
  CHECK_OK(api->buffer_allocate(d.be, 0, 100, &a));
  CHECK_OK(api->buffer_allocate(d.be, 0, 100, &b));
  CHECK_OK(api->buffer_allocate(d.be, 0, 0, &z));
  if (!a || !b || !z) {
    drv_close(&d);
    return;
  }
  CHECK(((uintptr_t)api->buffer_host_pointer(d.be, a) & 63) == 0);
  CHECK(api->buffer_host_pointer(d.be, z) != NULL);
  char text[100], back[100];
  for (int i = 0; i < 100; i++) text[i] = (char)i;
  alloy_queue *q = NULL;
  CHECK_OK(api->queue_create(d.be, 0, &q));
  alloy_event *done = (alloy_event *)&done;
  CHECK_OK(api->buffer_copy_from_host(d.be, a, 0, text, 100, q, &done));
  CHECK(done == NULL);
  CHECK_OK(api->buffer_copy(d.be, b, 10, a, 0, 90, NULL, NULL));
  CHECK_OK(api->buffer_copy_to_host(d.be, back, b, 10, 90, NULL, NULL));
  CHECK(memcmp(back, text, 90) == 0);
  /* Overlapping ranges of one buffer. */
  CHECK_OK(api->buffer_copy(d.be, a, 1, a, 0, 99, NULL, NULL));
  CHECK_OK(api->buffer_copy_to_host(d.be, back, a, 0, 100, NULL, NULL));
  CHECK(back[1] == 0 && back[99] == 98);
  e = api->buffer_copy_to_host(d.be, back, a, 50, 51, NULL, NULL);
  CHECK(e != NULL);
  alloy_error_free(e);
  e = api->buffer_allocate(d.be, 3, 8, &z);
  CHECK(e != NULL);
  alloy_error_free(e);
  CHECK_INT(api->event_query(d.be, NULL), 1);
  CHECK_OK(api->event_wait(d.be, NULL));
  api->buffer_release(d.be, b);
  api->queue_release(d.be, q);
  drv_close(&d); /* a and z are still out: backend_close releases them */
}

TEST(kt_claim_costs_and_refusals) {
  drv d;
  if (!drv_open(&d, plugin_path("lib/alloy", "example"))) {
    drv_close(&d);
    return;
  }
  alloy_graph *g = alloy_graph_new();
  alloy_dim s0;
  CHECK_OK(alloy_sym_new(alloy_graph_symtab(g), "s0", 1, 64, &s0));
  int64_t s[2] = {100, 30};
  alloy_value *x = input(g, "x", ALLOY_F32, 2, s);
  alloy_dim sym_shape[1] = {s0};
  alloy_value_type vt = {ALLOY_VALUE_TENSOR, ALLOY_F32, 1, sym_shape, NULL, {ALLOY_DEVICE_CPU, -1}, {NULL, 0}};
  alloy_value *v = NULL;
  CHECK_OK(alloy_graph_add_input(g, "v", &vt, &v));
  alloy_arg a1[1] = {alloy_arg_value(x)}, a2[1] = {alloy_arg_value(v)};
  add(g, "aten.exp.default", a1, 1, NULL, alloy_arg_none(), "e");
  add(g, "aten.neg.default", a2, 1, NULL, alloy_arg_none(), "n");
  add(g, "aten.sin.default", a1, 1, NULL, alloy_arg_none(), "s");
  /* add with a Python number for `other`: no in1 to bind. */
  alloy_arg a3[2] = {alloy_arg_value(x), alloy_arg_float(2.0)};
  add(g, "aten.add.Tensor", a3, 2, NULL, alloy_arg_none(), "w");
  double cost[4];
  char why[4][160];
  CHECK_INT(drv_claim_why(&d, g, cost, why), 2);
  CHECK(fabs(cost[0] - 3000e-9) < 1e-12);
  CHECK(cost[1] < 0);
  CHECK(isnan(cost[2]) && isnan(cost[3]));
  /* The nodes left come with alloy_kt_match's reason (host->claims_reject). */
  CHECK_STR(why[0], "");
  CHECK_STR(why[1], "");
  CHECK_STR(why[2], "no kernel row for aten.sin.default");
  if (!why[3][0]) harness_fail(__FILE__, __LINE__, "no reason for the add of a Python number");
  drv_close(&d);
  alloy_graph_free(g);
}

/* A 1.0 host table (it ends at claims_add) with 1.2 entries past its end
 * that must not be called: the helper reads a host only to its size. */
static int old_host_calls;
static void old_host_reject(alloy_claims *c, int i, const char *why) {
  (void)c, (void)i, (void)why;
  old_host_calls++;
}

TEST(kt_reads_an_old_host_table_only_to_its_size) {
  alloy_host_api old = *alloy_host_table();
  old.struct_size = ALLOY_STRUCT_SIZE(alloy_host_api, claims_add);
  old.abi_minor = 0;
  old.claims_reject = old_host_reject;
  const char *path = plugin_path("lib/alloy", "example");
  void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    harness_fail(__FILE__, __LINE__, "dlopen %s: %s", path, dlerror());
    return;
  }
  alloy_plugin_entry_fn init = (alloy_plugin_entry_fn)dlsym(dl, ALLOY_PLUGIN_ENTRY);
  const alloy_plugin_api *api = init ? init(&old) : NULL;
  alloy_backend *be = NULL;
  if (api) CHECK_OK(api->backend_open(&old, &be));
  alloy_graph *g = alloy_graph_new();
  int64_t s[1] = {4};
  alloy_arg a1[1] = {alloy_arg_value(input(g, "x", ALLOY_F32, 1, s))};
  add(g, "aten.exp.default", a1, 1, NULL, alloy_arg_none(), "e");
  add(g, "aten.sin.default", a1, 1, NULL, alloy_arg_none(), "s"); /* not claimed */
  bool claimed[2] = {false};
  double cost[2] = {0};
  alloy_claims claims = {.num_nodes = 2, .claimed = claimed, .cost = cost};
  old_host_calls = 0;
  if (be) CHECK_OK(api->claim(be, g, &claims));
  CHECK(claimed[0] && !claimed[1]);
  CHECK_INT(old_host_calls, 0);
  CHECK(claims.reason == NULL);
  if (be) api->backend_close(be);
  alloy_graph_free(g);
  dlclose(dl);
}

TEST(kt_bad_table_is_refused_with_the_reason) {
  const char *path = plugin_path("tests/plugins", "kt_bad_table");
  void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    harness_fail(__FILE__, __LINE__, "dlopen %s: %s", path, dlerror());
    return;
  }
  alloy_plugin_entry_fn init = (alloy_plugin_entry_fn)dlsym(dl, ALLOY_PLUGIN_ENTRY);
  alloy_host_clear_last_log();
  CHECK(init && init(alloy_host_table()) == NULL);
  const char *why = alloy_host_last_log();
  CHECK(why && strstr(why, "row 1") && strstr(why, "aten.neg.default") && strstr(why, "column 17"));
  if (why && !strstr(why, "column 17")) harness_fail(__FILE__, __LINE__, "logged: %s", why);
  dlclose(dl);
}

/* A row whose op the registry does not know loads as nothing: it would
 * match no node, ever. The helper refuses the table at load, naming the
 * plugin, the row, the name and the nearest known op (issue 21). */
TEST(kt_misspelled_op_is_refused_with_the_nearest_name) {
  const char *path = plugin_path("tests/plugins", "kt_typo");
  void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    harness_fail(__FILE__, __LINE__, "dlopen %s: %s", path, dlerror());
    return;
  }
  alloy_plugin_entry_fn init = (alloy_plugin_entry_fn)dlsym(dl, ALLOY_PLUGIN_ENTRY);
  alloy_host_clear_last_log();
  CHECK(init && init(alloy_host_table()) == NULL);
  const char *why = alloy_host_last_log();
  CHECK(why && strstr(why, "kernel table kt_typo is wrong") && strstr(why, "row 1 (aten.relu.defualt)") &&
        strstr(why, "the nearest is aten.relu.default"));
  if (why && !strstr(why, "the nearest is aten.relu.default"))
    harness_fail(__FILE__, __LINE__, "logged: %s", why);
  dlclose(dl);
}

/* The nearest name, by asking the host's op_find about candidates. */
TEST(kt_op_name_check_suggests_the_nearest_op) {
  static const struct {
    const char *name;
    const char *want; /* NULL: accepted; else a fragment of the reason */
  } cases[] = {
      {"aten.relu.default", NULL},
      {"aten.add.Tensor", NULL},
      {"prims.convert_element_type.default", NULL},
      {"aten.relu.defualt", "the nearest is aten.relu.default"},
      {"aten.add.Tensr", "the nearest is aten.add.Tensor"},
      {"aten.rleu.default", "the nearest is aten.relu.default"},
      {"aten.relu.Tensor", "the nearest is aten.relu.default"},
      {"aten.reluu.defualt", "the nearest is aten.relu.default"},
      {"aten.relu", "as a graph names it: aten.relu.default"},
      {"aten::add.Tensor", "as a graph names it: aten.add.Tensor"},
      {"acme.frobnicate.default", "no op \"acme.frobnicate.default\" in Alloy's registry (alloy ops"},
      {"", "no op \"\""},
  };
  int (*op_find)(const char *) = alloy_host_table()->op_find;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char why[512] = "";
    bool ok = alloy_kt_op_name_ok(op_find, cases[i].name, why, sizeof why);
    if (ok != (cases[i].want == NULL) || (!ok && !strstr(why, cases[i].want)))
      harness_fail(__FILE__, __LINE__, "\"%s\": %s, expected %s", cases[i].name, ok ? "accepted" : why,
                   cases[i].want ? cases[i].want : "accepted");
  }
}

/* A table names its device (since 1.2); one written before those fields
 * (a smaller struct_size) is read only to its end: "cpu0", cpu. */
static void kt_device_case(const char *table, const char *name, alloy_device_kind kind) {
  if (table) setenv("ALLOY_KT_DEVICE_TABLE", table, 1);
  else unsetenv("ALLOY_KT_DEVICE_TABLE");
  drv d;
  bool ok = drv_open(&d, plugin_path("tests/plugins", "kt_device"));
  unsetenv("ALLOY_KT_DEVICE_TABLE");
  if (!ok) {
    drv_close(&d);
    return;
  }
  alloy_device_info info = {.struct_size = ALLOY_DEVICE_INFO_STRUCT_SIZE};
  CHECK_OK(d.api->device_info(d.be, 0, &info));
  CHECK(info.name && !strcmp(info.name, name));
  CHECK_INT((int)info.kind, (int)kind);
  CHECK(info.capabilities & ALLOY_DEVICE_CAP_HOST_VISIBLE);
  drv_close(&d);
}

TEST(kt_table_describes_its_device) {
  kt_device_case(NULL, "npu0", ALLOY_DEVICE_KIND_ACCELERATOR);
  kt_device_case("old", "cpu0", ALLOY_DEVICE_KIND_CPU);
  /* The example's table says nothing of a device. */
  drv d;
  if (drv_open(&d, plugin_path("lib/alloy", "example"))) {
    alloy_device_info info = {.struct_size = ALLOY_DEVICE_INFO_STRUCT_SIZE};
    CHECK_OK(d.api->device_info(d.be, 0, &info));
    CHECK(info.name && !strcmp(info.name, "cpu0") && info.kind == ALLOY_DEVICE_KIND_CPU);
  }
  drv_close(&d);
}

/* ---- the two little languages (the helper's readers, linked statically) ------------ */

TEST(kt_signature_grammar) {
  static const struct {
    const char *text;
    const char *error; /* NULL: parses; else a fragment of the message */
  } cases[] = {
      {"void()", NULL},
      {" int ( call ) ", NULL},
      {"void(out0, in0, in1, arg(alpha):f32, numel(out0))", NULL},
      {"void(out12,in3,size(in0,-1),size(out0, 16),sizes(in1),strides(out0),bstrides(in2),rank(in0))", NULL},
      {"void(arg(keepdim):bool, arg(dim):i32, arg(n):i64, arg(eps):f64)", NULL},
      {"float(out0)", "return type void or int at column 1"},
      {"void(out0", "',' or ')' at column 10"},
      {"void(out0,)", "a parameter"},
      {"void(out, in0)", "a parameter"},
      {"void(inx)", "a parameter"},
      {"void(numel(x0))", "an operand"},
      {"void(size(in0))", "',' and a dimension"},
      {"void(size(in0, 17))", "largest rank"},
      {"void(arg(alpha))", "':' and a type"},
      {"void(arg(alpha):f16)", "a scalar type"},
      {"void(call) x", "the end of the signature at column 12"},
      {"void(in70000)", "a parameter"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    kt_sig sig;
    char err[512] = "";
    bool ok = alloy_kt_sig_parse(cases[i].text, &sig, err, sizeof err);
    if (ok != (cases[i].error == NULL) || (!ok && !strstr(err, cases[i].error)))
      harness_fail(__FILE__, __LINE__, "\"%s\": %s, expected %s", cases[i].text, ok ? "parsed" : err,
                   cases[i].error ? cases[i].error : "to parse");
  }
  kt_sig sig;
  char err[256];
  CHECK(alloy_kt_sig_parse("int(out1, size(in2, -2), arg(alpha):f64, call)", &sig, err, sizeof err));
  CHECK(sig.returns_int);
  CHECK_INT(sig.nparams, 4);
  CHECK(sig.params[0].kind == KT_P_DATA && sig.params[0].is_out && sig.params[0].index == 1);
  CHECK(sig.params[1].kind == KT_P_SIZE && sig.params[1].index == 2 && sig.params[1].dim == -2);
  CHECK(sig.params[2].kind == KT_P_ARG && sig.params[2].scalar == KT_S_F64 &&
        sig.params[2].name_len == 5 && !memcmp(sig.params[2].name, "alpha", 5));
  CHECK_INT(alloy_kt_sig_operand_flags(&sig, false, 0), KT_F_USED | KT_F_SHAPE); /* call */
  CHECK(alloy_kt_sig_parse("void(out0, in0, bstrides(in1), strides(in0), numel(out0))", &sig, err, sizeof err));
  CHECK_INT(alloy_kt_sig_operand_flags(&sig, false, 0), KT_F_USED | KT_F_SHAPE | KT_F_STRIDES);
  CHECK_INT(alloy_kt_sig_operand_flags(&sig, false, 1), KT_F_USED | KT_F_SHAPE | KT_F_BSTRIDES);
  CHECK_INT(alloy_kt_sig_operand_flags(&sig, true, 0), KT_F_USED | KT_F_SHAPE);
  CHECK_INT(alloy_kt_sig_operand_flags(&sig, false, 2), 0);
  CHECK_INT(alloy_kt_sig_max_operand(&sig, false), 1);
}

TEST(kt_dtype_constraints) {
  alloy_dtype f3[3] = {ALLOY_F32, ALLOY_F32, ALLOY_F32}, mixed[3] = {ALLOY_BOOL, ALLOY_F32, ALLOY_I64};
  CHECK(alloy_kt_dtypes_accept("*", mixed, 2, mixed + 2, 1));
  CHECK(alloy_kt_dtypes_accept("f32", f3, 2, f3 + 2, 1));
  CHECK(!alloy_kt_dtypes_accept("f32", mixed, 2, mixed + 2, 1));
  CHECK(alloy_kt_dtypes_accept(" f32 ", f3, 0, f3, 1));
  CHECK(alloy_kt_dtypes_accept("bool,f32->i64", mixed, 2, mixed + 2, 1));
  CHECK(alloy_kt_dtypes_accept("bool, * -> i64", mixed, 2, mixed + 2, 1));
  CHECK(!alloy_kt_dtypes_accept("bool,f32->i64", mixed, 1, mixed + 1, 2)); /* counts differ */
  CHECK(!alloy_kt_dtypes_accept("bool,f32,f32->i64", mixed, 2, mixed + 2, 1));
  CHECK(alloy_kt_dtypes_accept("->f32", f3, 0, f3, 1));
  int nin, nout;
  char err[256];
  CHECK(alloy_kt_dtypes_check("bf16,f16->f64", &nin, &nout, err, sizeof err) && nin == 2 && nout == 1);
  CHECK(alloy_kt_dtypes_check("u8", &nin, &nout, err, sizeof err) && nin == -1);
  CHECK(!alloy_kt_dtypes_check("float32", &nin, &nout, err, sizeof err));
  CHECK(!alloy_kt_dtypes_check("f32,f32", &nin, &nout, err, sizeof err));
  CHECK(!alloy_kt_dtypes_check("f32,,f32->f32", &nin, &nout, err, sizeof err));
  CHECK(!alloy_kt_dtypes_check(NULL, &nin, &nout, err, sizeof err));
  CHECK(!alloy_kt_dtypes_check("", &nin, &nout, err, sizeof err));
}
