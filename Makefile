# The two commands of the README: `make run` and `make test`. Both install what is missing first.
BUILD_DIR ?= build
JOBS ?= 2

.PHONY: all deps build run test sanitize failover fuzz bench clean

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

# PostgreSQL failover under load (docs/operations.md "High availability on PostgreSQL"): a
# pg_auto_failover formation on this machine (scripts/postgres-ha), two Tesoro nodes on its
# multi-host URL, the primary's postmaster killed, then a planned switchover.
failover: build
	@TESORO_BIN=$(CURDIR)/$(BUILD_DIR)/tesoro scripts/postgres-ha $(BUILD_DIR)/tesoro_failover_tests

# Each fuzz target for FUZZ_SECONDS (default 60) with libFuzzer, in build-fuzz/ (docs/fuzzing.md).
fuzz: deps
	@scripts/fuzz

bench: build
	@cmake --build $(BUILD_DIR) -j$(JOBS) --target bench_reference
	@BUILD_DIR=$(BUILD_DIR) bench/run

clean:
	rm -rf $(BUILD_DIR) $(BUILD_DIR).configure.log build-sanitize build-sanitize.configure.log \
	  build-fuzz build-fuzz.configure.log
