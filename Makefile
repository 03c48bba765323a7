# ecc developer tasks. `make demo` and `make test` work on a fresh machine with Python 3.11+,
# git and make: everything else is installed into .venv by `make install`.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
ADAPTERS := adapters/claude adapters/codex adapters/opencode adapters/gemini
SOURCES  := pyproject.toml $(wildcard adapters/*/pyproject.toml)

.PHONY: install demo test lint format e2e bench clean tui-deps

install: $(STAMP)

$(STAMP): $(SOURCES)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]" $(foreach a,$(ADAPTERS),-e ./$(a))
	touch $(STAMP)

demo: install
	$(BIN)/python examples/demo.py

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# tmux drives the dashboard in a real terminal (tests/tui/test_tmux.py)
tui-deps:
	@command -v tmux >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq tmux)

test: install lint tui-deps
	$(BIN)/python -m pytest -q -m "not e2e"

e2e: install
	@echo "e2e: drives the real claude, codex, gemini and opencode CLIs (see docs/adapters.md)."
	@start=$$(date +%s); \
	bash tests/e2e/install_clis.sh >/dev/null && \
	ECC_E2E_REQUIRED=1 $(BIN)/python -m pytest -q -m e2e tests/e2e; status=$$?; \
	echo "e2e wall time: $$(( $$(date +%s) - start )) s"; exit $$status

bench: install
	@for script in benchmarks/*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache build *.egg-info
