# The two commands of the README: `make run` and `make test`. Both install what is missing first.
BUILD_DIR ?= build
JOBS ?= 2

.PHONY: all deps build run test sanitize fuzz bench clean

all: build

deps:
	@scripts/install-deps

build: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release > $(BUILD_DIR).configure.log 2>&1 || (cat $(BUILD_DIR).configure.log; exit 1)
	@cmake --build $(BUILD_DIR) -j$(JOBS)

run: build
	@BUILD_DIR=$(BUILD_DIR) scripts/run

test: build
	@BUILD_DIR=$(BUILD_DIR) scripts/test

# clang-14 with AddressSanitizer and UndefinedBehaviorSanitizer, in build-sanitize/: the unit and
# API suites on both engines; any report fails it.
sanitize: deps
	@scripts/sanitize

# Each fuzz target for FUZZ_SECONDS (default 60) with libFuzzer, in build-fuzz/ (docs/fuzzing.md).
fuzz: deps
	@scripts/fuzz

bench: build
	@cmake --build $(BUILD_DIR) -j$(JOBS) --target bench_reference
	@BUILD_DIR=$(BUILD_DIR) bench/run

clean:
	rm -rf $(BUILD_DIR) $(BUILD_DIR).configure.log build-sanitize build-sanitize.configure.log \
	  build-fuzz build-fuzz.configure.log
