# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
# `make test` installs the `optuna`, `ax` and `dask` extras too, so the Optuna sampler's, Ax
# integration's and Dask cluster tests run (not skip), and the `postgres` extra (psycopg); the PostgreSQL
# storage tests also need the server's binaries (`apt-get install postgresql`, which
# .ci/run does) and skip, saying so, without them.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
BENCH_CONSTRAINTS := experiments/constraints-bench.txt
# The pinned torch resolves to a local CPU wheel on this project's machines (elsewhere, install
# torch==2.13.0 from PyTorch's CPU index into .venv first); an unpinned torch
# would pull several GB of CUDA packages.
TORCH  := torch==2.13.0

.PHONY: demo test test-quick lint docs bench bench-env bench-quick bench-streaming botorch-compat clean

# The test set-up installs under the benchmarks' constraints (experiments/constraints-bench.txt:
# the versions the published numbers were made with), so CI runs on a known environment and a
# new release upstream (Optuna 5.1.0, whose rows the benchmark scripts refuse: their tables
# name 5.0.0) cannot turn a fresh clone's suite red; pyproject.toml's ranges stay what users get.
$(STAMP): pyproject.toml $(BENCH_CONSTRAINTS)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c $(BENCH_CONSTRAINTS) "$(TORCH)"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c $(BENCH_CONSTRAINTS) \
		-e ".[test,optuna,ax,postgres,dask]"
	touch $(STAMP)

# Each extra a target needs beyond the test set-up is installed once per change of
# pyproject.toml (a stamp per extra), so `make lint` / `make docs` run again at once.
$(VENV)/.installed-%: $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e ".[$*]"
	touch $@

demo: $(STAMP)
	$(BIN)/npbandit demo

# One torch thread per process: the models under test are tiny, and several tests start
# worker processes (storage concurrency, CLI signals), which two threads each would
# oversubscribe on CI's 2 cores (a test file took 20x longer that way under load).
# pytest-xdist runs the suite on TEST_WORKERS processes (default 2, CI's cores), a whole test
# file per process (--dist loadfile), so a module's fixtures (a Dask cluster, a PostgreSQL
# server) start once; TEST_WORKERS=0 runs everything in this process (for pdb, -s).
TEST_WORKERS ?= 2
test: $(STAMP)
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1} $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile

# The edit loop's subset: no slow, integration, PostgreSQL, Dask
# or lab tests (the markers in pyproject.toml). CI runs `make test`, all of them.
test-quick: $(STAMP)
	OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1} $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile \
		-m "not slow and not integration and not postgres and not dask and not lab"

# Style and structure: ruff (pyproject.toml [tool.ruff]), the import contracts (layers that
# point one way, no library import of a deprecated alias, optional frameworks only behind
# their doors: [tool.importlinter]) and no import cycle, function-level imports included.
lint: $(VENV)/.installed-lint
	$(BIN)/ruff check npbandit tests experiments tools examples
	$(BIN)/lint-imports
	$(BIN)/python tools/check_cycles.py

# The documentation site (MkDocs + Material + mkdocstrings): --strict fails on broken links,
# anchors and references, so CI catches a page that no longer matches the code.
docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir build/site

# NPModel's tests against the lowest and the newest BoTorch that pyproject.toml admits,
# each in a throwaway venv under /tmp (a few minutes the first time; pass other
# releases with BOTORCH_VERSIONS="0.17.2 0.18.0").
BOTORCH_VERSIONS ?=
botorch-compat:
	$(PYTHON) tools/botorch_compat.py --torch "$(TORCH)" $(BOTORCH_VERSIONS)

bench-streaming: $(STAMP)
	$(BIN)/python experiments/benchmarks/streaming.py

# Every measurement on experiments/log/benchmarks.md (hours on 2 CPU cores; not run in CI).
# The `bench` extra brings the Optuna peer rows of experiments/benchmarks/bo.py; storage_throughput.py
# needs PostgreSQL's server binaries (`apt-get install postgresql`).
bench: $(VENV)/.installed-bench
	$(BIN)/python experiments/benchmarks/streaming.py
	$(BIN)/python experiments/benchmarks/joint_sampling.py
	$(BIN)/python experiments/benchmarks/regression_ll.py
	$(BIN)/python experiments/benchmarks/botorch_adapter.py
	$(BIN)/python experiments/benchmarks/bandit_cost.py --long 100000
	$(BIN)/python experiments/benchmarks/retreever_cost.py
	$(BIN)/python experiments/benchmarks/bo_scaling.py
	$(BIN)/python experiments/benchmarks/bo_model_quality.py
	$(BIN)/python experiments/benchmarks/shift.py
	$(BIN)/python experiments/benchmarks/wheel_decisions.py
	$(BIN)/python experiments/benchmarks/bo_prior_functions.py --seeds 6 --workers 2
	$(BIN)/python experiments/benchmarks/bo.py --workers 2
	$(BIN)/python experiments/benchmarks/optuna_cost.py --profile
	$(BIN)/python experiments/benchmarks/ax_cost.py --profile
	$(BIN)/python experiments/benchmarks/wheel.py --workers 2
	$(BIN)/python experiments/benchmarks/storage_throughput.py
	$(BIN)/python experiments/benchmarks/batch_bo.py

# The environment the published tables were measured in: .venv with what `make test` and `make bench` install,
# at the exact versions of experiments/constraints-bench.txt (written from the measuring .venv by
# experiments/benchmarks/bench_constraints.py; each results JSON records its own run's versions). `make test`
# and `make bench` alone take the newest releases pyproject.toml admits, which can move a peer's column;
# `make bench-env` then `make bench` measures under the pins (pip keeps a version that satisfies a requirement).
bench-env:
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c $(BENCH_CONSTRAINTS) "$(TORCH)"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c $(BENCH_CONSTRAINTS) \
		-e ".[test,optuna,ax,postgres,dask,bench]"
	touch $(STAMP)

# A few-minute subset that prints without touching docs/.
bench-quick: $(STAMP)
	$(BIN)/python experiments/benchmarks/streaming.py --sizes 100 1000 10000 --no-write
	$(BIN)/python experiments/benchmarks/joint_sampling.py --quick --no-write
	$(BIN)/python experiments/benchmarks/regression_ll.py --gp1d-batches 100 --bo-batches 20 --wheel-batches 20 --no-write
	$(BIN)/python experiments/benchmarks/bo_scaling.py --sizes 100 1000 --no-write
	$(BIN)/python experiments/benchmarks/wheel.py --seeds 2 --steps 300 --deltas 0.9 --workers 2 --no-write --db "$$(mktemp -u /tmp/npbandit-quick-XXXXXX.db)"
	$(BIN)/python experiments/benchmarks/bo_wide.py --problems shekel4 ackley12 logreg-breast-cancer --budget 15 --seeds 1 --workers 2 --no-write --db "$$(mktemp -u /tmp/npbandit-quick-XXXXXX.db)"
	$(BIN)/python experiments/benchmarks/bo.py --functions branin --seeds 2 --budget 15 --workers 2 --no-write --methods cmanp-bo gp sobol --db "$$(mktemp -u /tmp/npbandit-quick-XXXXXX.db)"

clean:
	rm -rf $(VENV) build *.egg-info
