# soac: every target sets up what it needs on a fresh machine.
#
#   make demo    build, then parse/verify/print a soac program with soac-opt and Python
#   make test    build, then run the lit suite and pytest (fails if either fails)
#   make bench   build, then run the benchmarks and update docs/benchmarks.md
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

.PHONY: all build demo test lit pytest bench clean

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

# Both suites always run; the target fails if either did.
test: build
	@status=0; \
	$(BIN)/lit -sv test || status=1; \
	$(BIN)/python -m pytest || status=1; \
	exit $$status

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

clean:
	rm -rf build $(INSTALLED)
