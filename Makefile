# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# The pinned torch resolves to a local CPU wheel here; an unpinned torch
# would pull several GB of CUDA packages.
TORCH  := torch==2.13.0

.PHONY: demo test bench-streaming clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check "$(TORCH)"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e ".[test]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/npbandit demo

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench-streaming: $(STAMP)
	$(BIN)/python benchmarks/streaming.py

clean:
	rm -rf $(VENV) build *.egg-info
