# The README's commands. Each installs what it needs first (scripts/install-deps).
BUILD_DIR ?= build
SANITIZE_DIR ?= build-sanitize
FUZZ_DIR ?= build-fuzz
# The libraries built alone (make check-install).
LIB_DIR ?= build-lib
# Seconds each libFuzzer harness runs in make fuzz.
FUZZ_SECONDS ?= 60
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# Unity builds (CMAKE_UNITY_BUILD, 16 sources per compiler run): each heavy header is parsed once
# per batch instead of once per file. UNITY=OFF for incremental work (one file recompiled per edit).
UNITY ?= ON
UNITY_FLAGS = -DCMAKE_UNITY_BUILD=$(UNITY) -DCMAKE_UNITY_BUILD_BATCH_SIZE=16
CMAKE_FLAGS ?=
# Extra flags for build/bin/webhooks-demo, e.g. make demo DEMO_FLAGS="--orders 200 --keep-work-dir"
DEMO_FLAGS ?=

.PHONY: all deps configure build test bench bench-peers demo screenshots test-sanitize fuzz check-install check-format format clean help

all: build

help:
	@echo "make demo           the whole toolkit end to end on 127.0.0.1 with faults injected, checked (DEMO_FLAGS=--help)"
	@echo "make test           install, build, start a throwaway PostgreSQL, run every test"
	@echo "make build          install dependencies and build into $(BUILD_DIR)/ (binaries in $(BUILD_DIR)/bin)"
	@echo "make bench          build and print the benchmarks"
	@echo "make bench-peers    ours beside a Go receiver and a Node.js/BullMQ publisher (bench/peers/); bytes per orders-api record"
	@echo "make screenshots    run the browser tests and copy their screenshots of the consoles to docs/console/"
	@echo "make test-sanitize  the test suite built with AddressSanitizer and UBSan in $(SANITIZE_DIR)/"
	@echo "make fuzz           the libFuzzer harnesses (clang, ASan+UBSan) in $(FUZZ_DIR)/, each run FUZZ_SECONDS=$(FUZZ_SECONDS) s"
	@echo "make check-install  the libraries alone in $(LIB_DIR)/, installed, with a find_package consumer; $(BUILD_DIR)/'s install"
	@echo "make check-format   every C++ file against .clang-format (make format applies it)"
	@echo "UNITY=$(UNITY)           unity builds for build, test, test-sanitize, fuzz, check-install; UNITY=OFF for incremental work"

deps:
	@bash scripts/install-deps

configure: deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(UNITY_FLAGS) $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	bash scripts/run-tests $(BUILD_DIR) $(JOBS)

bench: build
	bash scripts/bench $(BUILD_DIR)

# Ours beside the programs a user would pick instead (bench/peers/): a Go receiver, a Node.js
# publisher on BullMQ + Redis. Needs the bench-only packages (install-deps --bench-peers) and npm.
bench-peers: deps
	@bash scripts/install-deps --bench-peers
	bash scripts/bench-peers $(BUILD_DIR)

# The browser tests (tests/browser) save a screenshot of each console page in
# $(BUILD_DIR)/console-screenshots/; this runs them and copies the pictures to docs/console/.
# docs/development.md, "Browser tests".
screenshots: build
	rm -f $(BUILD_DIR)/console-screenshots/*.png
	ctest --test-dir $(BUILD_DIR) -R '^browser\.' --output-on-failure
	mkdir -p docs/console
	cp $(BUILD_DIR)/console-screenshots/*.png docs/console/

test-sanitize: deps
	cmake -S . -B $(SANITIZE_DIR) -DCMAKE_BUILD_TYPE=Debug -DWEBHOOKS_SANITIZE=ON -DWEBHOOKS_BUILD_BENCH=OFF $(UNITY_FLAGS) $(CMAKE_FLAGS)
	cmake --build $(SANITIZE_DIR) -j $(JOBS)
	bash scripts/run-tests $(SANITIZE_DIR) $(JOBS)

# libFuzzer harnesses of tests/fuzz built with clang++ and ASan+UBSan (only the libraries they link),
# each run FUZZ_SECONDS from its seed corpus; fails on a crash, leak, timeout or failed property.
# docs/development.md, "Fuzzing".
fuzz: deps
	cmake -S . -B $(FUZZ_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DWEBHOOKS_FUZZ=ON $(UNITY_FLAGS) $(CMAKE_FLAGS)
	cmake --build $(FUZZ_DIR) -j $(JOBS) --target webhooks_fuzzers
	bash scripts/fuzz $(FUZZ_DIR) $(FUZZ_SECONDS) $(JOBS)

# The libraries built alone (examples, tools, daemon, tests off) in $(LIB_DIR)/, installed into a
# temporary prefix, tests/consumer built against it with find_package(webhooks) and run; then
# $(BUILD_DIR)/ installed and every executable checked. docs/development.md, "Installing and embedding".
check-install: build
	JOBS=$(JOBS) CMAKE_FLAGS="$(UNITY_FLAGS) $(CMAKE_FLAGS)" bash scripts/check-install $(LIB_DIR) $(BUILD_DIR)

# clang-format (.clang-format) over every tracked C++ file: check-format fails on a difference,
# format rewrites the files.
check-format: deps
	bash scripts/check-format

format: deps
	bash scripts/check-format --fix

# Publisher, orders API with its outbox relay, payout partner and merchant receiver on loopback;
# 1,000 orders and 100 payouts with resends, faults and a crash; a table; exit 1 unless every
# order and payout had exactly one effect. docs/demo.md.
demo: build
	$(BUILD_DIR)/bin/webhooks-demo --bin-dir $(BUILD_DIR)/bin $(DEMO_FLAGS)

clean:
	rm -rf $(BUILD_DIR) $(SANITIZE_DIR) $(FUZZ_DIR) $(LIB_DIR)
