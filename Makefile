# Kairos — the two commands are `make run` and `make test`.
# Everything else here is a convenience over CMake presets (CMakePresets.json).
JOBS ?= $(shell nproc)
BUILD := build
CLI := $(BUILD)/bin/kairos-cli
GUI := $(BUILD)/bin/kairos
SAMPLE := sample_traces/chat_near_saturation.jsonl
REPORT_DIR ?= out
FUZZ_SECONDS ?= 20

.PHONY: all deps configure build run test bench asan test-asan asan-full test-asan-full fuzz fuzz-asan format format-check tidy clean package gpu-preset

all: build

deps:
	@bash installer/deps.sh

$(BUILD)/build.ninja: CMakeLists.txt CMakePresets.json
	cmake --preset dev

configure: deps $(BUILD)/build.ninja

build: configure
	cmake --build --preset dev -j $(JOBS)

# With a display the workbench opens on the sample; without one the same analysis runs
# headless: the summary and run log from kairos-cli, and the workbench drawn offscreen.
run: build
	@mkdir -p $(REPORT_DIR)
	@if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ]; then \
	  $(GUI) --workload $(SAMPLE) --policy sprpt_lp --predictor trail; \
	else \
	  $(CLI) simulate --workload $(SAMPLE) --policy sprpt_lp --predictor trail \
	    --goodput ttft:2000 tpot:100 \
	    --json $(REPORT_DIR)/sample_summary.json --runlog $(REPORT_DIR)/sample_runlog.jsonl && \
	  QT_QPA_PLATFORM=offscreen $(GUI) --workload $(SAMPLE) --policy sprpt_lp --predictor trail \
	    --size 1400x850 --screenshot $(REPORT_DIR)/sample_workbench.png --quit 2>/dev/null && \
	  echo "report: $(REPORT_DIR)/sample_summary.json, run log: $(REPORT_DIR)/sample_runlog.jsonl, picture: $(REPORT_DIR)/sample_workbench.png"; \
	fi

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	$(CLI) bench
	$(CLI) bench --explain --repeat 5
	$(BUILD)/bin/kairos-benchmarks --benchmark_min_time=0.2
	KAIROS_BENCH=1 QT_QPA_PLATFORM=offscreen $(BUILD)/bin/tst_timeline paintCost20k
	KAIROS_BENCH=1 QT_QPA_PLATFORM=offscreen $(BUILD)/bin/tst_workbench sliderToRepaint20k
	KAIROS_BENCH=1 QT_QPA_PLATFORM=offscreen $(BUILD)/bin/tst_workbench inspectorFollows20k

# A .deb and a .tar.gz of a portable Release build (no -march=native) in build-release/.
package: deps
	cmake --preset release
	cmake --build --preset release -j $(JOBS)
	cd build-release && cpack
	@ls -1 build-release/*.deb build-release/*.tar.gz

asan: deps
	cmake --preset asan
	cmake --build --preset asan -j $(JOBS)

test-asan: asan
	ctest --preset asan -j $(JOBS)

# CI's sanitizer share (above) leaves out the GUI and the live engine to fit its time; this is
# the whole tree under the sanitizers (Debug), for a change to the GUI or gpu/.
asan-full: deps
	cmake --preset asan-full
	cmake --build --preset asan-full -j $(JOBS)

test-asan-full: asan-full
	ctest --preset asan-full -j $(JOBS)

# The gpu preset as a GPU user builds it (no Qt, store, Ceres, XGBoost, MPI), here against
# Debian's CPU libtorch; on a GPU machine: README, "On an NVIDIA GPU".
# GPU_BUILD_TYPE: Debug builds at -O0 (40 % less compile time than -O3), e.g. for a quick check.
GPU_BUILD_TYPE ?= Release
# GPU_DEBUG_INFO: the Debug build's debug-info flag (CI, which only checks that it builds and
# links, passes -g0: 13 % less compile time).
GPU_DEBUG_INFO ?= -g
gpu-preset: deps
	cmake --preset gpu -DCMAKE_BUILD_TYPE=$(GPU_BUILD_TYPE) -DCMAKE_CXX_FLAGS_DEBUG="-O0 $(GPU_DEBUG_INFO)"
	cmake --build --preset gpu -j $(JOBS)
	bash tests/install/check_gpu_preset.sh build-gpu .

fuzz: deps
	cmake --preset fuzz
	cmake --build --preset fuzz -j $(JOBS)
	bash tests/fuzz/run.sh build-fuzz/bin $(FUZZ_SECONDS)

# The same targets from the asan build (its core carries libFuzzer's coverage): what CI runs
# after test-asan, with nothing more to compile than the targets themselves.
fuzz-asan: asan
	bash tests/fuzz/run.sh build-asan/bin $(FUZZ_SECONDS)

# The tree's C++ in .clang-format's style: `make format` rewrites it, `make format-check`
# (CI's first phase) fails naming the files that differ.
# New files count before they are committed (--others: untracked, not ignored).
FORMAT_FILES = git ls-files --cached --others --exclude-standard -- 'core/*.cpp' 'core/*.h' 'views/*.cpp' 'views/*.h' 'app/*.cpp' \
	'app/*.h' 'tests/*.cpp' 'tests/*.h' 'gpu/*.cpp' 'gpu/*.h' 'gpu/*.cu' 'gpu/*.cuh'
format: deps
	$(FORMAT_FILES) | xargs clang-format -i

format-check: deps
	@$(FORMAT_FILES) | xargs clang-format --dry-run -Werror 2>&1 | grep -o '^[^:]*:[0-9]*:[0-9]*: error' | \
	  cut -d: -f1 | sort -u | sed 's/^/format-check: differs from .clang-format: /' | \
	  { ! grep . ; } || { echo "format-check: run make format"; exit 1; }

# clang-tidy over the core and the CLI (the tidy preset: .clang-tidy's checks), by hand.
tidy: deps
	cmake --preset tidy
	cmake --build --preset tidy -j $(JOBS)

clean:
	rm -rf $(BUILD) build-asan build-asan-full build-fuzz build-release build-gpu build-tidy
