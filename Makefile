# Two commands for a fresh machine: `make run` and `make test`. Both create or reuse .venv.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
PORT    ?= 8501
DATA    ?= data/demo
STATE   ?= .evalcore-state

.PHONY: run test setup demo docs screenshot bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	EVALCORE_DATA=$(DATA) EVALCORE_STATE=$(STATE) $(BIN)/streamlit run app.py \
	  --server.headless true --server.address 127.0.0.1 --server.port $(PORT) \
	  --browser.gatherUsageStats false

test: $(STAMP)
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

# Regenerate the bundled SIMULATED demo (a test checks the committed copy matches).
demo: $(STAMP)
	$(BIN)/evalcore demo --out data/demo

# docs/FORMAT.md is generated from evalcore/schema.py (a test checks it is current).
docs: $(STAMP)
	$(BIN)/evalcore schema --markdown > docs/FORMAT.md

screenshot: $(STAMP)
	$(BIN)/python docs/screenshot.py

clean:
	rm -rf $(VENV) .pytest_cache

# Benchmarks (docs/BENCHMARKS.md): 18M-row analytics (~15 min) and the judge harness (~3 min).
bench: $(STAMP)
	$(BIN)/python bench/analytics.py all
	$(BIN)/python bench/judge.py
