# Alloy: build, test and tooling. `make` builds everything into build/.
# See README.md for the commands and ../shared/DESIGN.md for the layout.

BUILD    ?= build
CC       ?= cc
OPT      ?= -O2
WARN      = -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
            -Wmissing-prototypes -Wpointer-arith -Wvla
CFLAGS   += -std=c11 $(OPT) -g -fPIC $(WARN) -D_GNU_SOURCE \
            -I. -Isdk/include $(EXTRA_CFLAGS)
LDLIBS   += -lzip -lz -ljansson -lffi -ldl -lpthread -lm
GOLDEN   ?= ../shared/golden

# Debian packages the build needs (make deps installs the missing ones).
DEPS      = libjansson-dev libffi-dev libzip-dev zlib1g-dev graphviz
# OpenBLAS: the cpu backend's products (opened with dlopen: without it the
# backend runs them as emitted loops).
DEPS     += libopenblas-dev
# NumPy for Debian's python3: the Python package's tests (sdk/python,
# tests/python.sh; the pyenv or venv python3 of a machine may lack it).
DEPS     += python3-numpy
# LLVM 14's C API and its one shared library: the cpu backend's JIT.
DEPS     += llvm-14-dev
# HIP 5.2's headers and runtime (hipRTC within): the hip backend, built from
# the cuda backend's sources, and the unit tests' hipRTC compiles.
DEPS     += hipcc libamdhip64-dev
FUZZ_DEPS = clang libclang-rt-14-dev
FUZZ_SECONDS ?= 60

# The host library: the IR, the host runtime and loader, and the reference
# backend built in (with the kernel-table helper it is written with).
KT_SRC    = $(wildcard sdk/kernel_table/*.c)
REF_SRC   = $(wildcard reference_backend/*.c)
LIB_SRC   = $(wildcard ir/*.c) $(wildcard decompositions/*.c) $(wildcard sdk/src/*.c) $(KT_SRC) $(REF_SRC)
TOOL_SRC  = $(wildcard sdk/tools/*.c) $(wildcard conformance/*.c)
TEST_SRC  = $(wildcard tests/*.c)
GEN_SRC   = $(BUILD)/gen/ops_table.c

LIB_OBJ   = $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRC)) $(BUILD)/obj/gen/ops_table.o
TOOL_OBJ  = $(patsubst %.c,$(BUILD)/obj/%.o,$(TOOL_SRC))
TEST_OBJ  = $(patsubst %.c,$(BUILD)/obj/%.o,$(TEST_SRC))

LIB_A     = $(BUILD)/lib/liballoy.a
LIB_SO    = $(BUILD)/lib/liballoy.so
# The library's version (sdk/include/alloy/version.h), for its file name,
# SONAME and symbol version script (the install section, issue 21).
ALLOY_VERSION := $(shell sed -n 's/^\#define ALLOY_VERSION_STRING "\(.*\)"$$/\1/p' sdk/include/alloy/version.h)
ALLOY_SOMAJOR := $(firstword $(subst ., ,$(ALLOY_VERSION)))
LIB_SO_REAL    = $(BUILD)/lib/liballoy.so.$(ALLOY_VERSION)
LIB_MAP        = $(BUILD)/gen/liballoy.map
ALLOY     = $(BUILD)/bin/alloy
UNIT      = $(BUILD)/tests/unit

# Plugins link the kernel-table helper (a static library vendors link too)
# and libffi, never liballoy; only their entry symbol is exported.
KT_A      = $(BUILD)/lib/liballoy_kernel_table.a
# The helper carries the dtype utilities (names, sizes, float16/bfloat16
# conversions) so that plugins can use them without linking liballoy.
KT_OBJ    = $(patsubst %.c,$(BUILD)/obj/plugin/%.o,$(KT_SRC))
PLUGIN_CFLAGS = $(CFLAGS) -fvisibility=hidden -DALLOY_PLUGIN_BUILD
PLUGIN_LIBS   = -lffi -lm
PLUGIN_NAMES  = $(sort $(patsubst plugins/%/,%,$(dir $(wildcard plugins/*/*.c))))
# The cuda backend compiles against the CUDA toolkit's headers and opens the
# driver and NVRTC with dlopen, so it builds (and loads, as "no device") on
# machines without a GPU; without the headers it is left out, and said so.
CUDA_HOME    ?= /usr/local/cuda
ifeq ($(wildcard $(CUDA_HOME)/include/cuda.h),)
PLUGIN_NAMES := $(filter-out cuda,$(PLUGIN_NAMES))
$(info cuda backend not built: no $(CUDA_HOME)/include/cuda.h)
endif
# The cpu backend compiles its loop nests with LLVM's C API (Debian's
# llvm-14-dev) and links LLVM's one shared library; without llvm-config it is
# left out, and said so.
LLVM_CONFIG  ?= $(shell command -v llvm-config-14 || command -v llvm-config)
ifeq ($(LLVM_CONFIG),)
PLUGIN_NAMES := $(filter-out cpu,$(PLUGIN_NAMES))
$(info cpu backend not built: no llvm-config (Debian's llvm-14-dev))
else
LLVM_INCLUDE := $(shell $(LLVM_CONFIG) --includedir)
LLVM_LIBS    := $(shell $(LLVM_CONFIG) --ldflags --libs core orcjit native passes)
endif
PLUGIN_SO     = $(patsubst %,$(BUILD)/lib/alloy/liballoy-%.so,$(PLUGIN_NAMES) ref)
TEST_PLUGIN_SO = $(patsubst tests/plugins/%.c,$(BUILD)/tests/plugins/liballoy-%.so,$(wildcard tests/plugins/*.c))
# Plugins that misbehave on load live in a folder of their own, so that only
# the tests that ask for them ever open them.
HOSTILE_SO = $(patsubst tests/hostile_plugins/%.c,$(BUILD)/tests/hostile_plugins/liballoy-%.so,$(wildcard tests/hostile_plugins/*.c))
# The testing backend "chooser": the reference kernels with claims chosen by
# $ALLOY_CHOOSER (tests/chooser/chooser.c), for real mixtures in CI.
CHOOSER_SO = $(BUILD)/tests/plugins/liballoy-chooser.so
# The testing backend "devsim": a simulated accelerator with its own address
# space and asynchronous queues, running the reference kernels
# (tests/devsim/devsim.c), to prove the host's device-resident data path.
DEVSIM_SO = $(BUILD)/tests/plugins/liballoy-devsim.so

.PHONY: all deps deps-fuzz run test asan fuzz bench clean
all: $(LIB_A) $(LIB_SO) $(ALLOY) $(UNIT) $(KT_A) $(PLUGIN_SO) $(TEST_PLUGIN_SO) $(HOSTILE_SO) $(CHOOSER_SO) $(DEVSIM_SO)

$(BUILD)/obj/plugin/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC    $< (plugin)"
	@$(CC) $(PLUGIN_CFLAGS) -MMD -MP -c $< -o $@
$(KT_A): $(KT_OBJ)
	@mkdir -p $(dir $@)
	@echo "  AR    $@"
	@rm -f $@ && ar rcs $@ $^

# Plugin objects are kept, not treated as intermediates to delete.
.SECONDARY:
.SECONDEXPANSION:
# (A `%` written in a pattern rule's prerequisites is the stem, so the
# object list comes from a function defined outside the rule.)
plugin_objs = $(patsubst %.c,$(BUILD)/obj/plugin/%.o,$(wildcard plugins/$(1)/*.c))
$(BUILD)/lib/alloy/liballoy-%.so: $$(call plugin_objs,$$*) $(KT_A)
	@mkdir -p $(dir $@)
	@echo "  LD    $@"
	@$(CC) -shared -o $@ $^ $(LDFLAGS) $(PLUGIN_LIBS)
$(BUILD)/obj/plugin/plugins/cuda/%.o: PLUGIN_CFLAGS += -isystem $(CUDA_HOME)/include
$(BUILD)/lib/alloy/liballoy-cuda.so: PLUGIN_LIBS += -ldl
# The unit tests compile every generated module with NVRTC where it is.
ifneq ($(wildcard $(CUDA_HOME)/lib64/libnvrtc.so),)
$(BUILD)/obj/tests/test_cuda_codegen.o $(BUILD)/obj/tests/test_cuda_portable.o: CFLAGS += -DALLOY_TEST_NVRTC='"$(CUDA_HOME)/lib64/libnvrtc.so"'
# ... and compile a module in pieces on threads as the plugin does (cuda_rtc.c)
$(BUILD)/obj/tests/test_cuda_rtc.o: CFLAGS += -DALLOY_TEST_NVRTC='"$(CUDA_HOME)/lib64/libnvrtc.so"' -isystem $(CUDA_HOME)/include
$(UNIT): $(BUILD)/obj/plugin/plugins/cuda/cuda_rtc.o
else
TEST_SRC := $(filter-out tests/test_cuda_rtc.c,$(TEST_SRC))
endif
# ... and with hipRTC (in the HIP runtime) where it is, for AMD's targets.
HIP_RUNTIME = $(firstword $(wildcard /usr/lib/x86_64-linux-gnu/libamdhip64.so.5 $(ROCM_PATH)/lib/libamdhip64.so /opt/rocm/lib/libamdhip64.so))
ifneq ($(HIP_RUNTIME),)
$(BUILD)/obj/tests/test_cuda_codegen.o $(BUILD)/obj/tests/test_cuda_portable.o: CFLAGS += -DALLOY_TEST_HIPRTC='"$(HIP_RUNTIME)"'
HIPRTC_HELPER = $(BUILD)/tests/hiprtc_compile
all: $(HIPRTC_HELPER)
$(HIPRTC_HELPER): tests/rtc/hiprtc_compile.c
	@mkdir -p $(dir $@)
	@echo "  CC    $<"
	@$(CC) $(CFLAGS) -o $@ $< -ldl
endif
# The hip backend: the cuda backend's sources again, built against HIP's
# headers (plugins/cuda/gpu_port.h maps the CUDA names onto HIP's), its
# products through hipBLASLt (cuda_blas.c again, blas_port.h mapping
# cuBLASLt's names) and its convolutions through MIOpen (miopen_dnn.c in
# place of cuda_dnn.c, which is cuDNN's). It opens libamdhip64, hipBLASLt
# and MIOpen with dlopen, so it loads (as "no device") on machines without
# an AMD GPU, and runs without the two libraries, which are not in Debian.
HIP_INCLUDE ?= /usr/include
ifneq ($(wildcard $(HIP_INCLUDE)/hip/hip_runtime_api.h),)
HIP_SO  = $(BUILD)/lib/alloy/liballoy-hip.so
all: $(HIP_SO)
HIP_OBJ = $(patsubst %.c,$(BUILD)/obj/hip/%.o,$(filter-out plugins/cuda/cuda_dnn.c,$(wildcard plugins/cuda/*.c)))
$(BUILD)/obj/hip/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC    $< (hip)"
	@$(CC) $(PLUGIN_CFLAGS) -DALLOY_GPU_HIP -isystem $(HIP_INCLUDE) -MMD -MP -c $< -o $@
$(HIP_SO): $(HIP_OBJ) $(KT_A)
	@mkdir -p $(dir $@)
	@echo "  LD    $@"
	@$(CC) -shared -o $@ $^ $(LDFLAGS) $(PLUGIN_LIBS) -ldl
# Its library code needs no GPU: tests/test_hip_vendor.c links the hip
# objects of cuda_blas.c and miopen_dnn.c and drives them against fake
# libhipblaslt.so and libMIOpen.so (tests/hip/: they log the calls they
# get), found through $ROCM_PATH as BUILD/tests/hip/rocm; rocm-old holds
# fakes each lacking one entry point.
$(BUILD)/obj/tests/test_hip_vendor.o: CFLAGS += -DALLOY_GPU_HIP -isystem $(HIP_INCLUDE)
$(UNIT): $(patsubst %,$(BUILD)/obj/hip/plugins/cuda/%.o,cuda_blas miopen_dnn dnn_common cuda_api)
HIP_FAKES = $(patsubst %,$(BUILD)/tests/hip/%,rocm/lib/libhipblaslt.so rocm/lib/libMIOpen.so \
              rocm-old/lib/libhipblaslt.so rocm-old/lib/libMIOpen.so)
all: $(HIP_FAKES)
$(BUILD)/tests/hip/rocm-old/%: HIP_FAKE_FLAGS = -DFAKE_LEAVE_OUT
$(BUILD)/tests/hip/%/libhipblaslt.so: tests/hip/fake_hipblaslt.c tests/hip/fake_log.h plugins/cuda/rocm_api.h
	@mkdir -p $(dir $@)
	@echo "  CC    $< (fake$(if $(HIP_FAKE_FLAGS), without one entry point))"
	@$(CC) $(CFLAGS) -DALLOY_GPU_HIP -isystem $(HIP_INCLUDE) $(HIP_FAKE_FLAGS) -shared -o $@ $< $(LDFLAGS)
$(BUILD)/tests/hip/%/libMIOpen.so: tests/hip/fake_miopen.c tests/hip/fake_log.h plugins/cuda/rocm_api.h
	@mkdir -p $(dir $@)
	@echo "  CC    $< (fake$(if $(HIP_FAKE_FLAGS), without one entry point))"
	@$(CC) $(CFLAGS) -DALLOY_GPU_HIP -isystem $(HIP_INCLUDE) $(HIP_FAKE_FLAGS) -shared -o $@ $< $(LDFLAGS)
else
$(info hip backend not built: no $(HIP_INCLUDE)/hip/hip_runtime_api.h (Debian's libamdhip64-dev))
TEST_SRC := $(filter-out tests/test_hip_vendor.c,$(TEST_SRC))
endif
$(BUILD)/obj/plugin/plugins/cpu/%.o: PLUGIN_CFLAGS += -isystem $(LLVM_INCLUDE)
# attention's softmax exponentials are written to vectorize
# (cpu_attention.c): -O3 lets the compiler do it
$(BUILD)/obj/plugin/plugins/cpu/cpu_attention.o: PLUGIN_CFLAGS += -O3
$(BUILD)/lib/alloy/liballoy-cpu.so: PLUGIN_LIBS += $(LLVM_LIBS) -ldl -lpthread
# The reference backend as a plugin: the same code the host has built in.
$(BUILD)/lib/alloy/liballoy-ref.so: $(patsubst %.c,$(BUILD)/obj/plugin/%.o,$(REF_SRC)) $(KT_A)
	@mkdir -p $(dir $@)
	@echo "  LD    $@"
	@$(CC) -shared -o $@ $^ $(LDFLAGS) $(PLUGIN_LIBS)
$(CHOOSER_SO): $(BUILD)/obj/plugin/tests/chooser/chooser.o \
    $(patsubst %.c,$(BUILD)/obj/plugin/%.o,$(filter-out reference_backend/ref.c,$(REF_SRC))) $(KT_A)
	@mkdir -p $(dir $@)
	@echo "  LD    $@"
	@$(CC) -shared -o $@ $^ $(LDFLAGS) $(PLUGIN_LIBS)
$(DEVSIM_SO): $(patsubst %.c,$(BUILD)/obj/plugin/%.o,$(wildcard tests/devsim/*.c)) \
    $(patsubst %.c,$(BUILD)/obj/plugin/%.o,$(filter-out reference_backend/ref.c,$(REF_SRC))) $(KT_A)
	@mkdir -p $(dir $@)
	@echo "  LD    $@"
	@$(CC) -shared -o $@ $^ $(LDFLAGS) $(PLUGIN_LIBS) -lpthread
$(BUILD)/tests/hostile_plugins/liballoy-%.so: $(BUILD)/obj/plugin/tests/hostile_plugins/%.o $(KT_A)
	@mkdir -p $(dir $@)
	@echo "  LD    $@"
	@$(CC) -shared -o $@ $^ $(LDFLAGS) $(PLUGIN_LIBS)
$(BUILD)/tests/plugins/liballoy-%.so: $(BUILD)/obj/plugin/tests/plugins/%.o $(KT_A)
	@mkdir -p $(dir $@)
	@echo "  LD    $@"
	@$(CC) -shared -o $@ $^ $(LDFLAGS) $(PLUGIN_LIBS)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC    $<"
	@$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

# The op table becomes a C array of lines: the registry parses it at start-up.
$(GEN_SRC): ir/ops/ops.txt
	@mkdir -p $(dir $@)
	@{ echo '/* generated from ir/ops/ops.txt by the Makefile: do not edit */'; \
	   echo 'const char *const alloy_op_table_lines[] = {'; \
	   grep -v '^#' $< | grep -v '^[[:space:]]*$$' | \
	     sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/  "/' -e 's/$$/",/'; \
	   echo '};'; \
	   echo 'const int alloy_op_table_count = (int)(sizeof alloy_op_table_lines / sizeof alloy_op_table_lines[0]);'; \
	 } > $@
$(BUILD)/obj/gen/ops_table.o: $(GEN_SRC)
	@mkdir -p $(dir $@)
	@$(CC) $(filter-out -Wmissing-prototypes,$(CFLAGS)) -c $< -o $@

$(LIB_A): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	@echo "  AR    $@"
	@rm -f $@ && ar rcs $@ $^
# liballoy.so is a link to liballoy.so.MAJOR, a link to the library itself,
# liballoy.so.MAJOR.MINOR.PATCH, with its SONAME and symbol versions (see
# "install" below).
$(LIB_SO): $(LIB_OBJ) $(LIB_MAP)
	@mkdir -p $(dir $@)
	@echo "  LD    $(LIB_SO_REAL)"
	@$(CC) -shared -Wl,-soname,liballoy.so.$(ALLOY_SOMAJOR) -Wl,--version-script,$(LIB_MAP) \
	  -o $(LIB_SO_REAL) $(LIB_OBJ) $(LDFLAGS) $(LDLIBS)
	@ln -sf liballoy.so.$(ALLOY_VERSION) $(BUILD)/lib/liballoy.so.$(ALLOY_SOMAJOR)
	@ln -sf liballoy.so.$(ALLOY_SOMAJOR) $@
$(ALLOY): $(TOOL_OBJ) $(LIB_A)
	@mkdir -p $(dir $@)
	@echo "  LD    $@"
	@$(CC) -o $@ $^ $(LDFLAGS) $(LDLIBS)
# The cuda backend's planner and code generator need no CUDA: the unit tests
# link them in (tests/test_cuda_codegen.c).
CUDA_CODEGEN_OBJ = $(patsubst %.c,$(BUILD)/obj/%.o,plugins/cuda/cuda_codegen.c plugins/cuda/cuda_codegen_rows.c plugins/cuda/cuda_codegen_conv.c plugins/cuda/cuda_codegen_attention.c plugins/cuda/cuda_codegen_gemm.c plugins/cuda/cuda_codegen_fuse.c plugins/cuda/cuda_ops.c)
$(UNIT): $(TEST_OBJ) $(CUDA_CODEGEN_OBJ) $(LIB_A)
	@mkdir -p $(dir $@)
	@echo "  LD    $@"
	@$(CC) -o $@ $^ $(LDFLAGS) $(LDLIBS)
# So do the cpu backend's planner and its IR text (tests/test_cpu_plan.c):
# LLVM comes in only with cpu_jit.c.
CPU_PLAN_OBJ = $(patsubst %.c,$(BUILD)/obj/%.o,plugins/cpu/cpu_plan.c plugins/cpu/cpu_rows.c plugins/cpu/cpu_index.c \
               plugins/cpu/cpu_ir.c plugins/cpu/cpu_ops.c plugins/cpu/cpu_attention.c)
$(UNIT): $(CPU_PLAN_OBJ)

# Then the project's PyTorch venv (build-bench-venv/, ignored; $ALLOY_VENV
# names another): torch 2.11 from PyPI for the torch.compile tests and the
# side-by-side benchmarks (bench/cpu/deps.sh; quick when present, a warning
# and no failure without a network: those tests then say "skipped: no torch").
deps:
	@sh tests/deps.sh $(DEPS)
	@sh bench/cpu/deps.sh
deps-fuzz:
	@sh tests/deps.sh $(FUZZ_DEPS)

# The main job: import a model exported by torch.export (the shared golden
# mlp, with a symbolic batch) and run it on the default backend, checked
# against PyTorch's own outputs. A checkout without ../shared checks the
# bundled example graph instead, and says why.
RUN_MODEL = $(GOLDEN)/models/mlp.dyn.core
run: deps all
	@if [ -f $(RUN_MODEL).pt2 ]; then \
	  echo "$(ALLOY) run $(RUN_MODEL).pt2 --inputs $(GOLDEN)/models/mlp.io.safetensors --check ..."; \
	  $(ALLOY) run $(RUN_MODEL).pt2 --inputs $(GOLDEN)/models/mlp.io.safetensors \
	    --check $(GOLDEN)/models/mlp.io.safetensors; \
	else \
	  echo "no $(RUN_MODEL).pt2 (the golden models live in ../shared beside the clone):"; \
	  echo "checking the bundled example graph instead"; \
	  $(ALLOY) check examples/mlp.air; \
	fi

# Every suite prints "N passed, N failed"; tests/run_suites.sh adds them up.
test: all
	@sh tests/run_suites.sh $(BUILD) $(GOLDEN)

# use_tls=0: LeakSanitizer of clang 14 crashes ("Tracer caught signal 11")
# reading the main thread's dynamic TLS once a plugin with thread-locals
# (devsim) is dlclosed. Not scanning TLS can only report more leaks, never
# fewer: a block held only by a thread-local would show as leaked.
asan:
	LSAN_OPTIONS=use_tls=0 $(MAKE) BUILD=build-asan CC=clang OPT=-O1 \
	  EXTRA_CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	  LDFLAGS="-fsanitize=address,undefined" test

# ThreadSanitizer: one program and one mixture run from 8 threads at once
# (tests/test_threads.c), then the cpu backend (its thread pool, plugins/cpu/cpu_pool.c):
# the golden models with --backends cpu and cpu,ref and the conformance
# samples of a few ops, built with clang into build-tsan/
# (bench/cpu/sanitize.sh; LLVM's own suppressions: plugins/cpu/tsan.supp).
.PHONY: tsan
tsan:
	$(MAKE) BUILD=build-tsan CC=clang OPT=-O1 \
	  EXTRA_CFLAGS="-fsanitize=thread -fno-omit-frame-pointer" \
	  LDFLAGS="-fsanitize=thread" all
	@# one program and one mixture run from 8 threads at once (tests/test_threads.c), linked
	@# alone: the whole unit binary links the cpu planner, whose ifunc resolvers run before TSan starts
	@clang -fsanitize=thread -o build-tsan/tests/unit_threads $(patsubst %,build-tsan/obj/tests/%.o,harness \
	  testplugin test_threads) build-tsan/lib/liballoy.a $(LDLIBS)
	ALLOY_TEST_BUILD=build-tsan TSAN_OPTIONS="halt_on_error=1 exitcode=66" build-tsan/tests/unit_threads threads_
	@sh bench/cpu/sanitize.sh tsan build-tsan $(GOLDEN)

FUZZ_FLAGS = -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_TARGETS = $(patsubst tests/fuzz/%.c,build-fuzz/%,$(wildcard tests/fuzz/*.c))
# The library is compiled once for every target (fuzzer-no-link instruments
# it without a main); each target links its own entry.
FUZZ_LIB_OBJ = $(patsubst %.c,build-fuzz/obj/%.o,$(LIB_SRC) $(GEN_SRC))
build-fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC    $< (fuzz)"
	@clang -std=c11 -O1 -g $(WARN) -Wno-missing-prototypes -D_GNU_SOURCE -I. -Isdk/include \
	  -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -MMD -MP -c $< -o $@
build-fuzz/%: tests/fuzz/%.c $(FUZZ_LIB_OBJ)
	@mkdir -p build-fuzz
	@echo "  LD    $@"
	@clang -std=c11 -O1 -g $(WARN) -D_GNU_SOURCE -I. -Isdk/include $(FUZZ_FLAGS) \
	  $< $(FUZZ_LIB_OBJ) -o $@ -lzip -lz -ljansson -lffi -ldl -lpthread -lm
fuzz: deps-fuzz $(FUZZ_TARGETS)
	@for t in $(FUZZ_TARGETS); do \
	  n=$$(basename $$t); mkdir -p build-fuzz/corpus-$$n; \
	  echo "fuzzing $$n for $(FUZZ_SECONDS)s"; \
	  dict=""; [ -f tests/fuzz/$$n.dict ] && dict=-dict=tests/fuzz/$$n.dict; \
	  extra=""; [ $$n = fuzz_pt2 ] && [ -d $(GOLDEN)/models ] && extra=$(GOLDEN)/models; \
	  $$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 $$dict \
	    build-fuzz/corpus-$$n tests/fuzz/seeds-$$n $$extra > build-fuzz/$$n.log 2>&1; \
	  status=$$?; \
	  grep -E 'stat::number_of_executed_units|ERROR|SUMMARY' build-fuzz/$$n.log; \
	  if [ $$status -ne 0 ]; then tail -n 40 build-fuzz/$$n.log; exit 1; fi; \
	done

# Benchmarks (timing goals live here, never in tests): build/bench/*.
BENCH_SRC = $(wildcard bench/*.c)
BENCH     = $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))
$(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(LIB_A)
	@mkdir -p $(dir $@)
	@echo "  LD    $@"
	@$(CC) -o $@ $^ $(LDFLAGS) $(LDLIBS)
bench: all $(BENCH)
	@$(BUILD)/bench/bench_import $(GOLDEN)/models
	@$(BUILD)/bench/bench_partition
	@$(BUILD)/bench/bench_dispatch $(BUILD)/tests/plugins $(GOLDEN)/models
	@$(BUILD)/bench/bench_bigimport
	@sh bench/bench_conform.sh $(BUILD) $(GOLDEN)
	@sh bench/cpu/run.sh $(BUILD) $(GOLDEN)
# PyTorch from PyPI into build-bench-venv/ (ignored), the venv make deps
# makes for the torch.compile tests and bench/cpu/run.sh; this alone, strict.
.PHONY: bench-cpu-deps
bench-cpu-deps:
	@ALLOY_VENV_STRICT=1 sh bench/cpu/deps.sh $${BENCH_VENV:-build-bench-venv}

clean:
	rm -rf build build-asan build-fuzz

# ---- install, the versioned shared library, pkg-config (issue 21) ----------
# `make install PREFIX=/usr/local DESTDIR=` puts the kit a vendor or an
# application builds against under $(DESTDIR)$(PREFIX):
#   bin/alloy                       the command (liballoy linked in)
#   lib/liballoy.so.X.Y.Z, .so.X, .so  the library (SONAME liballoy.so.X,
#                                   symbol version ALLOY_X: only what the
#                                   public headers declare is exported)
#   lib/liballoy.a                  the same, static
#   lib/liballoy_kernel_table.a     the kernel-table helper plugins link
#   lib/alloy/liballoy-NAME.so      the shipped plugins (found by bin/alloy)
#   include/alloy/*.h               the public headers
#   lib/pkgconfig/alloy.pc          cflags and libs for an application
#   lib/pkgconfig/alloy-plugin.pc   cflags and libs for a plugin (the helper,
#                                   libffi; never liballoy)
#   share/man/man1/alloy*.1         man pages (docs/man/)
#   share/doc/alloy/                README.md, docs/, the example plugin
# `make uninstall` (same PREFIX and DESTDIR) removes exactly those.
# The version is sdk/include/alloy/version.h's (docs/release.md).
PREFIX        ?= /usr/local
DESTDIR       ?=
INSTALL_ROOT   = $(DESTDIR)$(PREFIX)
MAN_PAGES      = $(wildcard docs/man/*.1)
DOC_FILES      = README.md $(wildcard docs/*.md)
DOC_BACKENDS   = $(wildcard docs/backends/*.md)
EXAMPLE_FILES  = $(wildcard plugins/example/*)
HEADERS        = $(wildcard sdk/include/alloy/*.h)

$(LIB_MAP): $(HEADERS) sdk/tools/libmap.sh
	@mkdir -p $(dir $@)
	@sh sdk/tools/libmap.sh sdk/include $(ALLOY_SOMAJOR) $@

.PHONY: install uninstall test-install
install: all
	@echo "installing into $(INSTALL_ROOT)"
	@set -e; r='$(INSTALL_ROOT)'; \
	install -d "$$r/bin" "$$r/lib/alloy" "$$r/lib/pkgconfig" "$$r/include/alloy" \
	  "$$r/share/man/man1" "$$r/share/doc/alloy/backends" "$$r/share/doc/alloy/example"; \
	install -m 755 $(ALLOY) "$$r/bin/alloy"; \
	install -m 755 $(LIB_SO_REAL) "$$r/lib/"; \
	ln -sf liballoy.so.$(ALLOY_VERSION) "$$r/lib/liballoy.so.$(ALLOY_SOMAJOR)"; \
	ln -sf liballoy.so.$(ALLOY_SOMAJOR) "$$r/lib/liballoy.so"; \
	install -m 644 $(LIB_A) $(KT_A) "$$r/lib/"; \
	for f in $(BUILD)/lib/alloy/liballoy-*.so; do install -m 755 "$$f" "$$r/lib/alloy/"; done; \
	install -m 644 $(HEADERS) "$$r/include/alloy/"; \
	for pc in alloy alloy-plugin; do \
	  sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(ALLOY_VERSION)|' sdk/$$pc.pc.in > "$$r/lib/pkgconfig/$$pc.pc"; \
	  chmod 644 "$$r/lib/pkgconfig/$$pc.pc"; done; \
	install -m 644 $(MAN_PAGES) "$$r/share/man/man1/"; \
	install -m 644 $(DOC_FILES) "$$r/share/doc/alloy/"; \
	install -m 644 $(DOC_BACKENDS) "$$r/share/doc/alloy/backends/"; \
	install -m 644 $(EXAMPLE_FILES) "$$r/share/doc/alloy/example/"
uninstall:
	@echo "removing Alloy from $(INSTALL_ROOT)"
	@r='$(INSTALL_ROOT)'; \
	rm -f "$$r/bin/alloy" "$$r/lib/liballoy.so" "$$r/lib/liballoy.so.$(ALLOY_SOMAJOR)" \
	  "$$r/lib/liballoy.so.$(ALLOY_VERSION)" "$$r/lib/liballoy.a" "$$r/lib/liballoy_kernel_table.a" \
	  "$$r/lib/pkgconfig/alloy.pc" "$$r/lib/pkgconfig/alloy-plugin.pc"; \
	rm -f "$$r"/lib/alloy/liballoy-*.so; \
	for f in $(notdir $(HEADERS)); do rm -f "$$r/include/alloy/$$f"; done; \
	for f in $(notdir $(MAN_PAGES)); do rm -f "$$r/share/man/man1/$$f"; done; \
	rm -rf "$$r/share/doc/alloy"; \
	rmdir "$$r/lib/alloy" "$$r/include/alloy" 2>/dev/null || true
# The install test alone (tests/install.sh; make test runs it too).
test-install: all
	@sh tests/install.sh $(BUILD) $(GOLDEN)

# ---- the Python package (issue 20; sdk/python/) -----------------------------
# `make python-lib` copies this build's liballoy.so and plugins beside the
# package (sdk/python/alloy/_native/, ignored by git), where `import alloy`
# finds them and `pip install ./sdk/python` packs them. Without it the
# package finds the library through $ALLOY_LIBRARY, the alloy command on
# PATH, or build/ (sdk/python/alloy/_lib.py). make test runs the package's
# tests through tests/python.sh, against $(BUILD)'s library.
PY_LIB = sdk/python/alloy/_native
.PHONY: python-lib
python-lib: $(LIB_SO) $(PLUGIN_SO)
	@rm -rf $(PY_LIB)
	@mkdir -p $(PY_LIB)/alloy
	@cp -L $(LIB_SO) $(PY_LIB)/liballoy.so
	@cp $(BUILD)/lib/alloy/liballoy-*.so $(PY_LIB)/alloy/
	@echo "copied $(LIB_SO) and $$(ls $(PY_LIB)/alloy | wc -l) plugins to $(PY_LIB)"
# ---- end of the Python package's block ---------------------------------------

# ---- the ABI baseline (issue 21; docs/release.md) ---------------------------
# tests/abidiff.sh compares liballoy.so and the plugin-facing headers with
# the last release's baselines in tests/abi/ (abidiff, Debian's
# abigail-tools). `make abi-baseline` rewrites them: at a release only.
DEPS += abigail-tools
.PHONY: abi-check abi-baseline
abi-check: all
	@sh tests/abidiff.sh $(BUILD)
abi-baseline: all
	@abidw --headers-dir sdk/include/alloy --drop-private-types --drop-undefined-syms \
	  $(LIB_SO_REAL) > tests/abi/liballoy.abi
	@$(CC) -std=c11 -g -O0 -fPIC -shared -fvisibility=hidden -Isdk/include tests/abi/probe.c \
	  -o $(BUILD)/tests/abi-probe.so
	@abidw --headers-dir sdk/include/alloy --drop-private-types $(BUILD)/tests/abi-probe.so \
	  > tests/abi/plugin.abi
	@echo "wrote tests/abi/liballoy.abi and tests/abi/plugin.abi for $(ALLOY_VERSION)"

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
# The fuzz library's objects too: without them a header change left stale
# objects of another struct layout linked into the targets.
-include $(shell find build-fuzz/obj -name '*.d' 2>/dev/null)
