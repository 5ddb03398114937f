# The two commands of the README: `make run` and `make test`. Both install what is missing first.
BUILD_DIR ?= build
JOBS ?= 2

.PHONY: all deps build run test bench clean

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

bench: build
	@cmake --build $(BUILD_DIR) -j$(JOBS) --target bench_reference
	@BUILD_DIR=$(BUILD_DIR) bench/run

clean:
	rm -rf $(BUILD_DIR) $(BUILD_DIR).configure.log
