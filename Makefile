# Two commands: `make run` (set up, build the database, start the app) and `make test`.
PY ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell sha256sum requirements.txt | cut -c1-12)
PORT ?= 8501
HOST ?= 127.0.0.1

.PHONY: run test setup db bench clean-db

setup: $(STAMP)

$(STAMP): requirements.txt
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check -q -r requirements.txt
	@rm -f $(VENV)/.installed-*
	@touch $(STAMP)

db: setup
	$(BIN)/python -m encbench db init

run: db
	$(BIN)/python -m streamlit run app.py --server.headless true --server.address $(HOST) \
		--server.port $(PORT) --browser.gatherUsageStats false

test: db
	$(BIN)/python -m pytest -q

bench: setup
	@for f in benchmarks/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean-db:
	rm -f db/encbench.duckdb db/encbench.duckdb.wal db/encbench.read.duckdb
