# Alloy: build, test and tooling. `make` builds everything into build/.
# See README.md for the commands and ../shared/DESIGN.md for the layout.

BUILD    ?= build
CC       ?= cc
OPT      ?= -O2
WARN      = -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
            -Wmissing-prototypes -Wpointer-arith -Wvla
CFLAGS   += -std=c11 $(OPT) -g -fPIC $(WARN) -D_GNU_SOURCE \
            -I. -Isdk/include $(EXTRA_CFLAGS)
LDLIBS   += -ljansson -lpthread -lm
GOLDEN   ?= ../shared/golden

# Debian packages the build needs (make deps installs the missing ones).
DEPS      = libjansson-dev
FUZZ_DEPS = clang libclang-rt-14-dev
FUZZ_SECONDS ?= 60

LIB_SRC   = $(wildcard ir/*.c)
TOOL_SRC  = $(wildcard sdk/tools/*.c) $(wildcard conformance/*.c)
TEST_SRC  = $(wildcard tests/*.c)
GEN_SRC   = $(BUILD)/gen/ops_table.c

LIB_OBJ   = $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRC)) $(BUILD)/obj/gen/ops_table.o
TOOL_OBJ  = $(patsubst %.c,$(BUILD)/obj/%.o,$(TOOL_SRC))
TEST_OBJ  = $(patsubst %.c,$(BUILD)/obj/%.o,$(TEST_SRC))

LIB_A     = $(BUILD)/lib/liballoy.a
LIB_SO    = $(BUILD)/lib/liballoy.so
ALLOY     = $(BUILD)/bin/alloy
UNIT      = $(BUILD)/tests/unit

.PHONY: all deps deps-fuzz run test asan fuzz clean
all: $(LIB_A) $(LIB_SO) $(ALLOY) $(UNIT)

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
$(LIB_SO): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	@echo "  LD    $@"
	@$(CC) -shared -o $@ $^ $(LDFLAGS) $(LDLIBS)
$(ALLOY): $(TOOL_OBJ) $(LIB_A)
	@mkdir -p $(dir $@)
	@echo "  LD    $@"
	@$(CC) -o $@ $^ $(LDFLAGS) $(LDLIBS)
$(UNIT): $(TEST_OBJ) $(LIB_A)
	@mkdir -p $(dir $@)
	@echo "  LD    $@"
	@$(CC) -o $@ $^ $(LDFLAGS) $(LDLIBS)

deps:
	@sh tests/deps.sh $(DEPS)
deps-fuzz:
	@sh tests/deps.sh $(FUZZ_DEPS)

run: deps all
	$(ALLOY) check examples/mlp.air

# Every suite prints "N passed, N failed"; tests/run_suites.sh adds them up.
test: all
	@sh tests/run_suites.sh $(BUILD) $(GOLDEN)

asan:
	$(MAKE) BUILD=build-asan CC=clang OPT=-O1 \
	  EXTRA_CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	  LDFLAGS="-fsanitize=address,undefined" test

FUZZ_FLAGS = -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_TARGETS = $(patsubst tests/fuzz/%.c,build-fuzz/%,$(wildcard tests/fuzz/*.c))
build-fuzz/%: tests/fuzz/%.c $(LIB_SRC) $(GEN_SRC)
	@mkdir -p build-fuzz
	clang -std=c11 -O1 -g $(WARN) -D_GNU_SOURCE -I. -Isdk/include $(FUZZ_FLAGS) \
	  $< $(LIB_SRC) $(GEN_SRC) -o $@ -ljansson -lpthread -lm
fuzz: deps-fuzz $(FUZZ_TARGETS)
	@for t in $(FUZZ_TARGETS); do \
	  n=$$(basename $$t); mkdir -p build-fuzz/corpus-$$n; \
	  echo "fuzzing $$n for $(FUZZ_SECONDS)s"; \
	  dict=""; [ -f tests/fuzz/$$n.dict ] && dict=-dict=tests/fuzz/$$n.dict; \
	  $$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 $$dict \
	    build-fuzz/corpus-$$n tests/fuzz/seeds-$$n > build-fuzz/$$n.log 2>&1; \
	  status=$$?; \
	  grep -E 'stat::number_of_executed_units|ERROR|SUMMARY' build-fuzz/$$n.log; \
	  if [ $$status -ne 0 ]; then tail -n 40 build-fuzz/$$n.log; exit 1; fi; \
	done

clean:
	rm -rf build build-asan build-fuzz

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
