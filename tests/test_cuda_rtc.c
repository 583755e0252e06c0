/*
 * tests/test_cuda_rtc.c: a plan's module compiled in pieces on threads
 * (plugins/cuda/cuda_rtc.c) with the toolkit's NVRTC, no GPU needed: the
 * plan's kernel boundaries, the pieces' dealing, that every piece is a
 * cubin, the serialized form read back (and refused when cut short), and
 * a compile error quoting the compiler. Built only where the CUDA toolkit
 * is (the Makefile leaves it out otherwise).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloy/graph.h"
#include "harness.h"
#include "plugins/cuda/cuda_rtc.h"
#include "sdk/src/host.h"

/* Several kernels of different sizes: pointwise groups over three shapes,
 * a reduction, and 16-bit attention (the largest text by far). */
static const char module_air[] =
    "input %q: f16[2, 4, 64, 64]\ninput %k: f16[2, 4, 64, 64]\ninput %v: f16[2, 4, 64, 64]\n"
    "input %x: f32[4, 8]\ninput %y: f32[16, 3]\n"
    "%a = aten.scaled_dot_product_attention.default(%q, %k, %v, None, 0.0, true) : f16[2, 4, 64, 64]\n"
    "%s = aten.sigmoid.default(%x) : f32[4, 8]\n%t = aten.sum.dim_IntList(%x, [1]) : f32[4]\n"
    "%u = aten.tanh.default(%y) : f32[16, 3]\n%w = aten.exp.default(%a) : f16[2, 4, 64, 64]\n"
    "output %a, %s, %t, %u, %w\n";

static void plan_module(cuda_plan *p) {
  alloy_graph *g = NULL;
  CHECK_OK(alloy_air_parse(module_air, strlen(module_air), "test.air", &g));
  REQUIRE(g);
  CHECK_OK(cuda_plan_build(alloy_host_table(), g, NULL, NULL, p));
  alloy_graph_free(g);
  REQUIRE(p->source && p->nkernels >= 4);
}

/* NVRTC's entry points into *api, as the plugin's table holds them, and
 * the module planned into *p; false when either failed (the test has). */
static bool rtc_setup(cuda_api *api, cuda_plan *p) {
  memset(api, 0, sizeof *api);
  memset(p, 0, sizeof *p);
  /* kept loaded, as the plugin keeps it (its per-thread state is freed by
   * its own destructors, which an unload would skip) */
  void *lib = dlopen(ALLOY_TEST_NVRTC, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!lib) {
    harness_fail(__FILE__, __LINE__, "NVRTC (%s) does not load: %s", ALLOY_TEST_NVRTC, dlerror());
    return false;
  }
#define NVRTC_BIND(name, hip) api->name = (__typeof__(api->name))dlsym(lib, #name);
  CUDA_NVRTC_FUNCTIONS(NVRTC_BIND)
#undef NVRTC_BIND
  if (!api->nvrtcCompileProgram || !api->nvrtcGetCUBIN) {
    harness_fail(__FILE__, __LINE__, "NVRTC (%s) lacks an entry point", ALLOY_TEST_NVRTC);
    return false;
  }
  plan_module(p);
  return p->source != NULL;
}

/* Each kernel's text starts at its kernel_at, holds its own definition,
 * and the texts tile the module after the prelude. */
TEST(cuda_rtc_plan_records_where_each_kernel_starts) {
  cuda_plan p;
  plan_module(&p);
  CHECK(p.prelude_len > 0 && p.kernel_at[0] == p.prelude_len);
  for (int k = 0; k < p.nkernels; k++) {
    size_t end = k + 1 < p.nkernels ? p.kernel_at[k + 1] : p.source_len;
    CHECK(end > p.kernel_at[k]);
    char name[24], *text = strndup(p.source + p.kernel_at[k], end - p.kernel_at[k]);
    REQUIRE(text);
    snprintf(name, sizeof name, " k%d(", k);
    CHECK(strstr(text, name) != NULL);
    for (int j = 0; j < p.nkernels; j++) /* and no other kernel's */
      if (j != k) {
        snprintf(name, sizeof name, " k%d(", j);
        CHECK(strstr(text, name) == NULL);
      }
    free(text);
  }
  for (int i = 0; i < p.nlaunches; i++)
    if (p.launches[i].kind == LAUNCH_KERNEL) {
      char name[32];
      snprintf(name, sizeof name, "k%d", p.launches[i].kernel);
      CHECK(!strcmp(name, p.launches[i].name));
    }
  cuda_plan_free(&p);
}

static bool is_cubin(const char *b, size_t n) { return n > 4 && !memcmp(b, "\x7f" "ELF", 4); }

TEST(cuda_rtc_compiles_a_module_in_pieces_that_round_trip) {
  cuda_api api;
  cuda_plan p;
  REQUIRE(rtc_setup(&api, &p));
  cuda_cubins one, some;
  CHECK_OK(cuda_rtc_compile(&api, alloy_host_table(), "sm_90", &p, 1, &one));
  CHECK(one.n == 1 && one.nkernels == p.nkernels && is_cubin(one.bin[0], one.size[0]));
  CHECK_OK(cuda_rtc_compile(&api, alloy_host_table(), "sm_90", &p, 3, &some));
  /* the attention kernel's text alone passes 8 KiB, the rest do not: two
   * pieces at least, at most the three threads */
  CHECK(some.n >= 2 && some.n <= 3);
  int per[32] = {0};
  for (int k = 0; k < p.nkernels; k++) {
    CHECK(some.piece_of[k] < some.n);
    if (some.piece_of[k] < 32) per[some.piece_of[k]]++;
  }
  for (int i = 0; i < some.n; i++) CHECK(per[i] > 0 && is_cubin(some.bin[i], some.size[i]));

  size_t n = cuda_cubins_bytes(&some);
  unsigned char *b = malloc(n);
  REQUIRE(b);
  cuda_cubins_write(&some, b);
  cuda_cubins back;
  CHECK(cuda_cubins_read(b, n, p.nkernels, &back));
  CHECK(back.n == some.n && back.nkernels == some.nkernels);
  CHECK(!memcmp(back.piece_of, some.piece_of, sizeof *back.piece_of * (size_t)p.nkernels));
  for (int i = 0; i < back.n; i++)
    CHECK(back.size[i] == some.size[i] && !memcmp(back.bin[i], some.bin[i], some.size[i]));
  cuda_cubins_free(&back);
  /* cut short anywhere, or for a plan of other kernels: refused, nothing kept */
  for (size_t cut = 0; cut < n; cut += n / 7 + 1) {
    CHECK(!cuda_cubins_read(b, cut, p.nkernels, &back));
    CHECK(back.n == 0 && back.bin == NULL);
  }
  CHECK(!cuda_cubins_read(b, n, p.nkernels + 1, &back));
  free(b);
  cuda_cubins_free(&one);
  cuda_cubins_free(&some);
  cuda_plan_free(&p);
}

TEST(cuda_rtc_error_quotes_the_compiler) {
  cuda_api api;
  cuda_plan p;
  REQUIRE(rtc_setup(&api, &p));
  /* the last kernel's body broken: whichever piece holds it fails */
  char *broken = malloc(p.source_len + 64);
  REQUIRE(broken);
  size_t at = p.source_len;
  memcpy(broken, p.source, at);
  at += (size_t)sprintf(broken + at, "static_assert(no_such_name, \"\");\n");
  free(p.source);
  p.source = broken, p.source_len = at;
  cuda_cubins out;
  alloy_error *e = cuda_rtc_compile(&api, alloy_host_table(), "sm_90", &p, 4, &out);
  REQUIRE(e);
  CHECK(strstr(alloy_error_message(e), "NVRTC could not compile") != NULL);
  CHECK(strstr(alloy_error_message(e), "no_such_name") != NULL);
  CHECK(out.n == 0 && out.bin == NULL);
  alloy_error_free(e);
  cuda_plan_free(&p);
}
