# Kairos — the two commands are `make run` and `make test`.
# Everything else here is a convenience over CMake presets (CMakePresets.json).
JOBS ?= $(shell nproc)
BUILD := build
CLI := $(BUILD)/bin/kairos-cli
SAMPLE := sample_traces/chat_poisson_small.jsonl
REPORT_DIR ?= out
FUZZ_SECONDS ?= 20

.PHONY: all deps configure build run test bench asan test-asan fuzz format clean

all: build

deps:
	@bash installer/deps.sh

$(BUILD)/build.ninja: CMakeLists.txt CMakePresets.json
	cmake --preset dev

configure: deps $(BUILD)/build.ninja

build: configure
	cmake --build --preset dev -j $(JOBS)

# With a display the GUI opens on the sample; without one (or until the GUI lands)
# the same analysis runs headless and writes the report.
run: build
	@mkdir -p $(REPORT_DIR)
	$(CLI) simulate --workload $(SAMPLE) --policy fcfs --goodput ttft:2000 tpot:100 \
	    --json $(REPORT_DIR)/sample_summary.json --runlog $(REPORT_DIR)/sample_runlog.jsonl
	@echo "report: $(REPORT_DIR)/sample_summary.json, run log: $(REPORT_DIR)/sample_runlog.jsonl"

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	$(CLI) bench
	$(BUILD)/bin/kairos-benchmarks --benchmark_min_time=0.2

asan: deps
	cmake --preset asan
	cmake --build --preset asan -j $(JOBS)

test-asan: asan
	ctest --preset asan -j $(JOBS)

fuzz: deps
	cmake --preset fuzz
	cmake --build --preset fuzz -j $(JOBS)
	bash tests/fuzz/run.sh build-fuzz/bin $(FUZZ_SECONDS)

format:
	find core app tests -name '*.cpp' -o -name '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD) build-asan build-fuzz build-release
