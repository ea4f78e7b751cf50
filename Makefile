# pypto — the user's entry points. Every target installs what is missing first
# (Debian packages with apt, Python packages into .venv, which this Makefile
# owns), configures and builds, then does its job. Safe to re-run.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV      := .venv
PY        := $(VENV)/bin/python
PIP       := $(VENV)/bin/pip
STAMPS    := build/.stamps
PYPTO     := build/release/pypto
JOBS      ?= $(shell nproc)

# Debian 12 packages the build and tests need.
APT_PACKAGES := g++ cmake ninja-build pkg-config python3-venv \
  libsimdjson-dev libfmt-dev libcli11-dev libsqlite3-dev zlib1g-dev \
  libgtest-dev libbenchmark-dev libboost-dev chromium
# Python packages for tests and the Python package. torch is pinned: 2.13.0 is
# the CPU build available offline; an unpinned torch would pull a CUDA build.
PIP_PACKAGES := torch==2.13.0 transformers numpy pytest pybind11 scikit-build-core atheris dask[distributed]
# Peers measured by `make bench` (HolisticTraceAnalysis pulls jupyterlab: bench only).
PIP_BENCH_PACKAGES := HolisticTraceAnalysis

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: help setup deps venv build build-asan test test-unit test-asan test-python test-seed test-install demo demo-trace bench clean \
  fuzz fuzz-deps build-fuzz build-tsan test-tsan

help:
	@echo "make demo   - set up, build, run the closed tuning loop (profile, diagnose, advise, apply, compare) on two CPU models"
	@echo "make test   - set up, build (release + ASan/UBSan), run every test"
	@echo "make bench  - set up, build, run the benchmarks and print figures"
	@echo "make fuzz   - build the libFuzzer targets (clang, ASan+UBSan), run each FUZZ_SECONDS (default 60)"
	@echo "make clean  - remove build outputs (keeps .venv)"

setup: deps venv

deps: $(STAMPS)/apt
# Re-checked when the Makefile (its package lists) changes.
$(STAMPS)/apt: Makefile
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "[setup] installing Debian packages:" $$missing; \
	  $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q $$missing; \
	fi
	@mkdir -p $(STAMPS) && touch $@

venv: $(STAMPS)/venv
$(STAMPS)/venv: $(STAMPS)/apt Makefile
	@[ -x $(PY) ] || python3 -m venv $(VENV)
	@echo "[setup] Python packages into $(VENV)"
	@$(PIP) install -q $(PIP_PACKAGES)
	@mkdir -p $(STAMPS) && touch $@

$(STAMPS)/venv-bench: $(STAMPS)/venv
	@$(PIP) install -q torch==2.13.0 $(PIP_BENCH_PACKAGES)
	@touch $@

# Huawei's own Ascend analyzer, measured by `make bench` on the same profiler DB as pypto. A venv of
# its own: its pandas/numpy pins are not the project's. A failed install leaves it out of the bench.
MSPROF_VENV := build/msprof-venv
MSPROF_PACKAGE := msprof-analyze==26.2.0
$(STAMPS)/venv-msprof: $(STAMPS)/apt
	@[ -x $(MSPROF_VENV)/bin/python ] || python3 -m venv $(MSPROF_VENV)
	@$(MSPROF_VENV)/bin/pip install -q $(MSPROF_PACKAGE) || echo "[setup] $(MSPROF_PACKAGE) did not install: make bench leaves it out"
	@mkdir -p $(STAMPS) && touch $@

# The release build also makes the Python extension (python/pypto/_engine*.so)
# with the venv's Python and pybind11; the venv sees python/ through a .pth file.
PY_CMAKE_ARGS = -DPython_EXECUTABLE=$(CURDIR)/$(PY) -Dpybind11_DIR=$$($(PY) -c 'import pybind11; print(pybind11.get_cmake_dir())')
build: deps venv
	@cmake --preset release $(PY_CMAKE_ARGS) >/dev/null
	@cmake --build --preset release -j $(JOBS)
	@site=$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'); \
	  echo "$(CURDIR)/python" > $$site/pypto-dev.pth; \
	  ln -sf $(CURDIR)/$(PYPTO) $(VENV)/bin/pypto

# One clang tree for ASan + UBSan: the unit, golden and sweep tests (test-asan)
# and the libFuzzer targets (fuzz) share its objects.
build-asan: fuzz-deps
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan -j $(JOBS)

test-unit: build venv
	@ctest --preset release -j $(JOBS)

test-asan: build-asan venv
	@ctest --preset asan -j $(JOBS)

# ThreadSanitizer over what runs in parallel: the JSON reader's producer thread
# (json_stream) in the common-reader and importer unit tests, the ranks of one
# job read side by side (unit_importers' MultiRank tests, Kineto and Ascend),
# and a small truncation sweep of every fixture (threads stopped early on
# damaged input).
TSAN_TESTS := unit_importers_common unit_importers_kineto unit_importers_ascend_trace_view
build-tsan: deps
	@cmake --preset tsan >/dev/null
	@cmake --build --preset tsan -j $(JOBS) --target $(TSAN_TESTS) unit_importers unit_session fixture_sweep

test-tsan: build-tsan
	@set -eo pipefail; export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"; \
	for t in $(TSAN_TESTS); do echo "[tsan] $$t"; build/tsan/tests/$$t --gtest_brief=1; done; \
	echo "[tsan] unit_importers (MultiRank*)"; build/tsan/tests/unit_importers --gtest_brief=1 --gtest_filter='MultiRank*'; \
	echo "[tsan] unit_session (detectors side by side, structure prepared on its own thread)"; \
	build/tsan/tests/unit_session --gtest_brief=1 --gtest_filter='*FindsAlone*:*PreparedAside*'; \
	echo "[tsan] fixture_sweep (small)"; \
	build/tsan/tests/reliability/fixture_sweep --fixtures=../shared/fixtures --cuts=10 --gz-cuts=2 \
	  --edits=50 --big-edits=3 --budget-mb=2 --min-runs=2 --seed=11 | tail -4

test-python: build
	@PYPTO=$(PYPTO) $(PY) -m pytest -q tests/python --ignore=tests/python/test_seed_usage.py

# The brief's own code as written (../shared/reference/seed_usage_cpu.py, small sizes), then
# tests/python/test_seed_usage.py checks that run: exit 0, p50, ratios, issues, greedy tokens.
# Absolute: the script changes into the folder it is given.
SEED_WORK := $(CURDIR)/build/seed_usage
test-seed: build
	@rm -rf $(SEED_WORK) && mkdir -p $(SEED_WORK)
	@echo "[seed] ../shared/reference/seed_usage_cpu.py (SEED_RUNS=2 SEED_NEW_TOKENS=16)"
	@start=$$(date +%s); set -o pipefail; \
	  SEED_RUNS=2 SEED_NEW_TOKENS=16 PYTHONPATH=$(CURDIR)/python $(PY) ../shared/reference/seed_usage_cpu.py $(SEED_WORK) \
	    > $(SEED_WORK)/seed_output.txt 2> $(SEED_WORK)/seed_stderr.txt \
	  || { tail -20 $(SEED_WORK)/seed_stderr.txt; exit 1; }; \
	  echo "[seed] exit 0 in $$(( $$(date +%s) - start )) s; $$(grep -m1 'Baseline latency' $(SEED_WORK)/seed_output.txt)"
	@SEED_USAGE_WORK=$(SEED_WORK) PYPTO=$(PYPTO) $(PY) -m pytest -q tests/python/test_seed_usage.py

# `pip install .` into a fresh venv (scikit-build-core builds the engine, the
# extension and the CLI), then a smoke test of the installed package and CLI.
INSTALL_VENV := build/install-venv
# The smoke test checks the packaging (scikit-build-core, the installed
# module, CLI and data), not the optimiser, which the release build and the
# benchmarks exercise: -O0 builds the engine in about half the time.
INSTALL_CXX_FLAGS ?= -O0 -DNDEBUG
test-install: venv
	@rm -rf $(INSTALL_VENV) && python3 -m venv $(INSTALL_VENV)
	@$(INSTALL_VENV)/bin/pip install -q scikit-build-core pybind11
	@echo "[install] pip install . (builds the engine; a few minutes)"
	@$(INSTALL_VENV)/bin/pip install -q --no-build-isolation \
	  --config-settings=cmake.define.CMAKE_CXX_FLAGS_RELEASE="$(INSTALL_CXX_FLAGS)" .
	@$(INSTALL_VENV)/bin/python tests/install/smoke.py --fixtures ../shared/fixtures

test: test-unit test-asan test-tsan test-python test-seed test-install

# The closed tuning loop on two example models (examples/closed_loop.py).
demo: build venv
	@$(PY) examples/closed_loop.py --compile --out out/demo

# The engine alone on a synthetic GPU decode trace (analyze, diagnose, export).
demo-trace: build venv
	@PYPTO=$(PYPTO) PY=$(PY) bash examples/demo.sh

bench: build $(STAMPS)/venv-bench $(STAMPS)/venv-msprof
	@MSPROF_ANALYZE=$${MSPROF_ANALYZE:-$(CURDIR)/$(MSPROF_VENV)/bin/msprof-analyze} \
	  PYPTO=$(PYPTO) PY=$(PY) BUILD=build/release bash bench/run_bench.sh

# Fuzzing (docs/reliability.md): clang + libFuzzer from Debian.
FUZZ_SECONDS ?= 60
FUZZ_APT_PACKAGES := clang libclang-rt-14-dev
fuzz-deps: deps
	@missing=$$(for p in $(FUZZ_APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "[setup] installing Debian packages:" $$missing; \
	  $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q $$missing; \
	fi

FUZZ_BINARIES := fuzz_detect fuzz_kineto fuzz_ascend_csv fuzz_trace_view fuzz_ascend_db fuzz_pypto_db fuzz_graph_report
build-fuzz: fuzz-deps
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan -j $(JOBS) --target $(FUZZ_BINARIES)

fuzz: build-fuzz build
	@FUZZ_BUILD=build/asan FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_JOBS=$(JOBS) bash fuzz/run_fuzz.sh
	@echo "fuzz: python_api (atheris) for $(FUZZ_SECONDS) s"
	@mkdir -p build/asan/work/python_api build/asan/artifacts/python_api
	@$(PY) fuzz/python/fuzz_python_api.py -max_total_time=$(FUZZ_SECONDS) -max_len=16384 -timeout=10 \
	  -artifact_prefix=build/asan/artifacts/python_api/ build/asan/work/python_api fuzz/regressions/python_api \
	  fuzz/corpus/kineto fuzz/corpus/detect fuzz/corpus/ascend_csv fuzz/corpus/pypto_db 2>&1 \
	  | grep -E "^(Done|==[0-9]+== ERROR|SUMMARY)" ; \
	  n=$$(find build/asan/artifacts/python_api -type f | wc -l); echo "python_api findings: $$n"; [ $$n -eq 0 ]

clean:
	rm -rf build
