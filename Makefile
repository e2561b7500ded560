# soac: every target sets up what it needs on a fresh machine.
#
#   make demo    build, then parse/verify/print a soac program with soac-opt and Python
#   make test    build, then run the lit suite and pytest, and build the docs (fails if any fails)
#   make docs    build, then the HTML documentation in build/docs (API reference from the
#                docstrings, the pages of docs/), with warnings as errors
#   make bench   build, then run the benchmarks and update docs/benchmarks.md
#   make fuzz    build, then run the IR mutation fuzzer (FUZZ_COUNT mutants from FUZZ_SEED)
#   make asan    build soac-opt and the runtime with AddressSanitizer in build-asan/, then
#                run the lit suite, IR mutants and compiled code under it
#   make gpu-bundle  build, then compile the GPU check bundle into build/gpu-bundle
#                (copy it to a GPU machine and run `python3 run.py OUTDIR` there: docs/gpu.md)
#
# The first run creates .venv, installs the pinned toolchain wheels and builds the
# C++ parts (about a minute on 2 cores); later runs rebuild only what changed, and
# return at once when nothing did.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# Markers of finished steps, kept inside the venv so that deleting it starts over.
TOOLCHAIN := $(VENV)/.toolchain-installed
INSTALLED := $(VENV)/.soac-installed
# Everything the build of the C++ parts and the package install depends on.
SOURCES := CMakeLists.txt pyproject.toml \
	$(shell find dialect passes runtime tools python -type f \( -name '*.td' -o -name '*.cpp' -o -name '*.c' -o -name '*.h' \
		-o -name '*.py' -o -name 'CMakeLists.txt' \) 2>/dev/null)

.PHONY: all build demo test lit pytest docs bench fuzz asan asan-build gpu-bundle clean

all: build

build: $(INSTALLED)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The build requirements (the pinned MLIR/LLVM wheels, nanobind, scikit-build-core,
# and cmake/ninja, which an isolated build would add by itself) live in the venv so that rebuilds reuse build/ instead of a fresh isolated env.
$(TOOLCHAIN): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['build-system']['requires']))" > $(VENV)/build-requirements.txt
	$(BIN)/python -m pip install -q -r $(VENV)/build-requirements.txt cmake==4.4.4 ninja==1.13.2
	touch $@

$(INSTALLED): $(TOOLCHAIN) $(SOURCES)
	$(BIN)/python -m pip install -q --no-build-isolation -e '.[test]'
	touch $@

demo: build
	@echo "== soac-opt examples/softmax_matvec.mlir"
	@$(BIN)/soac-opt examples/softmax_matvec.mlir
	@$(BIN)/python examples/demo.py

lit: build
	$(BIN)/lit -sv test

pytest: build
	$(BIN)/python -m pytest

# Sphinx and MyST, installed once per change of the list.
DOCS_REQUIREMENTS := $(VENV)/.docs-requirements-installed
$(DOCS_REQUIREMENTS): docs/requirements.txt | $(BIN)/python
	$(BIN)/python -m pip install -q -r docs/requirements.txt
	touch $@

# Both suites and the docs build always run; the target fails if any did.
test: build $(DOCS_REQUIREMENTS)
	@status=0; \
	$(BIN)/lit -sv test || status=1; \
	$(BIN)/python -m pytest || status=1; \
	$(MAKE) --no-print-directory docs || status=1; \
	exit $$status

# -W: a warning (a broken reference, a malformed docstring) fails the build.
docs: build $(DOCS_REQUIREMENTS)
	$(BIN)/sphinx-build -q -W --keep-going -b html docs build/docs
	@echo "the documentation: build/docs/index.html"

# The benchmarks' own requirements (JAX, PyTorch, matplotlib), installed once per change of the list.
BENCH_REQUIREMENTS := $(VENV)/.bench-requirements-installed
$(BENCH_REQUIREMENTS): bench/requirements.txt | $(BIN)/python
	$(BIN)/python -m pip install -q -r bench/requirements.txt
	touch $@

# Every script under bench/ (common.py is their shared helpers), then the ADBench suite.
bench: build $(BENCH_REQUIREMENTS)
	@set -e; for script in $(filter-out bench/common.py,$(wildcard bench/*.py)) bench/adbench/run.py; do \
		echo "== $$script"; $(BIN)/python $$script; \
	done

# A long run of the IR mutation fuzzer (test/fuzz/ir_fuzz.py): fails on any
# crash or hang of soac-opt; the mutants that failed are kept in FUZZ_OUT.
FUZZ_COUNT ?= 10000
FUZZ_SEED  ?= 1
FUZZ_OUT   ?= build/fuzz
fuzz: build
	$(BIN)/python test/fuzz/ir_fuzz.py --count $(FUZZ_COUNT) --seed $(FUZZ_SEED) --out $(FUZZ_OUT)

# AddressSanitizer: soac-opt and the C runtime built from the same
# CMakeLists.txt with -fsanitize=address in their own directory. Then, with
# them: the lit suite (SOAC_OPT, read by test/lit.cfg.py), ASAN_FUZZ_COUNT IR
# mutants, and the argument fuzz on compiled code instrumented by LLVM's
# AddressSanitizer pass (test/fuzz/arg_fuzz.py preloads libasan into Python).
ASAN_DIR        := build-asan
ASAN_FLAGS      := -fsanitize=address -fno-omit-frame-pointer -g1
ASAN_FUZZ_COUNT ?= 2000
asan-build: | $(TOOLCHAIN)
	$(BIN)/cmake -S . -B $(ASAN_DIR) -G Ninja -DCMAKE_MAKE_PROGRAM=$(abspath $(BIN)/ninja) \
		-DPython_EXECUTABLE=$(abspath $(BIN)/python) -DCMAKE_BUILD_TYPE=Release \
		-DCMAKE_C_FLAGS="$(ASAN_FLAGS)" -DCMAKE_CXX_FLAGS="$(ASAN_FLAGS)" \
		-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=address
	$(BIN)/cmake --build $(ASAN_DIR) --target soac-opt soac_runtime

# All three parts always run; the target fails if any found something.
asan: build asan-build
	@status=0; \
	SOAC_OPT=$(abspath $(ASAN_DIR)/tools/soac-opt/soac-opt) ASAN_OPTIONS=detect_leaks=0 $(BIN)/lit -sv test || status=1; \
	$(BIN)/python test/fuzz/ir_fuzz.py --soac-opt $(ASAN_DIR)/tools/soac-opt/soac-opt --count $(ASAN_FUZZ_COUNT) \
		--seed $(FUZZ_SEED) --out $(ASAN_DIR)/fuzz || status=1; \
	$(BIN)/python test/fuzz/arg_fuzz.py --asan-runtime $(ASAN_DIR)/libsoac_runtime.so --count 5000 || status=1; \
	exit $$status

# Every GPU program of the tests, the ADBench objectives and gradients and the
# bandwidth kernels, compiled for sm_90 with their inputs, expected outputs and
# a runner that needs only python3 and numpy (tools/gpu_bundle, docs/gpu.md).
GPU_BUNDLE ?= build/gpu-bundle
gpu-bundle: build
	$(BIN)/python tools/gpu_bundle/build.py $(GPU_BUNDLE)

clean:
	rm -rf build $(INSTALLED)
