# ecc developer tasks. `make demo` and `make test` work on a fresh machine with Python 3.11+,
# git and make: everything else is installed into .venv by `make install`.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
ADAPTERS := adapters/claude adapters/codex adapters/opencode adapters/gemini
PLUGINS  := plugins/ecc-celery plugins/ecc-otel plugins/ecc-semantic
WHEELHOUSE := $(VENV)/wheelhouse
SOURCES  := pyproject.toml $(wildcard adapters/*/pyproject.toml) $(wildcard plugins/*/pyproject.toml)

.PHONY: install wheelhouse lowest bytecode demo test lint format e2e bench clean tui-deps services chromium

install: $(STAMP) bytecode

# Editable installs leave the project's modules uncompiled, and with PYTHONDONTWRITEBYTECODE set
# (as on CI) every `ecc` process would recompile them: write the .pyc files a wheel install has.
bytecode: $(STAMP)
	@$(BIN)/python -m compileall -q ecc ecc_plugins plugins adapters examples >/dev/null

# Every extra (`all`) and the development tools; the adapters and plugins are the local
# editable copies that `all` names. The wheelhouse holds the dependencies' wheels so that
# tests/packaging can install the built distributions into a fresh venv offline.
$(STAMP): $(SOURCES)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[all,dev]" $(foreach a,$(ADAPTERS) $(PLUGINS),-e ./$(a))
	$(MAKE) --no-print-directory wheelhouse
	touch $(STAMP)

# The dependencies of every distribution with all extras, as wheels (no ecc distribution in it)
wheelhouse:
	$(BIN)/python -m pip download --quiet --only-binary=:all: -d $(WHEELHOUSE) \
		".[all]" $(foreach a,$(ADAPTERS) $(PLUGINS),./$(a))
	rm -f $(WHEELHOUSE)/ecc_control_plane-* $(WHEELHOUSE)/ecc_adapter_* $(WHEELHOUSE)/ecc_celery-* \
		$(WHEELHOUSE)/ecc_otel-* \
		$(WHEELHOUSE)/ecc_semantic-*

# the lowest versions the distributions allow of their direct dependencies, with a smoke set
lowest: install
	bash .ci/lowest

demo: install
	$(BIN)/python examples/demo.py

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# tmux drives the dashboard in a real terminal (tests/tui/test_tmux.py)
tui-deps:
	@command -v tmux >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq tmux)

# tests/distributed starts its own throwaway PostgreSQL and Redis servers (tests/servers.py):
# install the Debian packages when their binaries are missing (CI runs as root)
services:
	@if ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || ! command -v redis-server >/dev/null 2>&1; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql redis-server >/dev/null; \
	fi

# tests/web drive a real headless browser: Debian's chromium, through Playwright (no download)
chromium:
	@command -v chromium >/dev/null 2>&1 || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null)

# one pytest worker per core (pytest-xdist): each worker has its own temporary dirs and its own
# throwaway PostgreSQL and Redis servers (tests/servers.py); most tests wait on subprocesses
test: install lint tui-deps services chromium
	$(BIN)/python -m pytest -q -n auto -m "not e2e"

# one pytest worker per core, as `make test`: each test has its own stub server, homes and ports
e2e: install
	@echo "e2e: drives the real claude, codex, gemini and opencode CLIs (see docs/adapters.md)."
	@start=$$(date +%s); \
	bash tests/e2e/install_clis.sh >/dev/null && \
	ECC_E2E_REQUIRED=1 $(BIN)/python -m pytest -q -n auto -m e2e; status=$$?; \
	echo "e2e wall time: $$(( $$(date +%s) - start )) s"; exit $$status

bench: install
	@for script in benchmarks/*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache build *.egg-info
