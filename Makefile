# Two commands: `make run` (set up, build the database, start the app) and `make test`.
PY ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
# Re-run the set-up whenever the pins or the package definition change.
STAMP := $(VENV)/.installed-$(shell cat requirements.txt pyproject.toml setup.py | sha256sum | cut -c1-12)
PORT ?= 8501
HOST ?= 127.0.0.1

.PHONY: run serve-readonly test setup db bench clean-db wheel

setup: $(STAMP)

$(STAMP): requirements.txt pyproject.toml setup.py
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check -q -r requirements.txt
	@# encbench itself, editable: the `encbench` command, importable from any directory (Dask
	@# workers included); the build backend comes from requirements.txt, so no download here
	$(BIN)/python -m pip install --disable-pip-version-check -q --no-deps --no-build-isolation -e .
	@# baycomp 1.0.3's wheel installs its own test suite as a top-level package named `tests`,
	@# which shadows this checkout's tests/ (a namespace package): `tests.byo_encoders` fails
	rm -rf $(VENV)/lib/python*/site-packages/tests
	@rm -f $(VENV)/.installed-*
	@touch $(STAMP)

db: setup
	$(BIN)/python -m encbench db init

run: db
	$(BIN)/python -m streamlit run serve.py --server.headless true --server.address $(HOST) \
		--server.port $(PORT) --browser.gatherUsageStats false

# The benchmark for others to browse: no uploads, no runs, no deletes (README, read-only mode).
serve-readonly: db
	ENCBENCH_READ_ONLY=1 $(BIN)/python -m streamlit run serve.py --server.headless true \
		--server.address $(HOST) --server.port $(PORT) --browser.gatherUsageStats false

test: db
	$(BIN)/python -m ruff check .
	@# two processes on CI's two cores (pytest-xdist; work stealing evens out the long browser
	@# and engine tests); the slowest 25 are listed for whoever speeds the suite up next
	$(BIN)/python -m pytest -q -n 2 --dist worksteal --durations=25

bench: setup
	@for f in benchmarks/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

wheel: setup
	$(BIN)/python -m pip wheel --disable-pip-version-check -q --no-deps --no-build-isolation -w dist .
	@rm -rf build

clean-db:
	rm -f db/encbench.duckdb db/encbench.duckdb.wal db/encbench.read.duckdb
