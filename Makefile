# The two commands of the README: `make run` and `make test`. Everything else is a helper.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml proto/python/pyproject.toml clients/python/pyproject.toml | md5sum | cut -c1-8)

.PHONY: run test install dev lint typecheck proto clients browser bench clean sandbox

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# Three local distributions: the core (proto/python), the SDK (clients/python), and the referee
# and runner (this folder), which depends on both.
$(STAMP): pyproject.toml proto/python/pyproject.toml clients/python/pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install -q -e proto/python -e clients/python -e ".[dev]"
	rm -f $(VENV)/.installed-* && touch $(STAMP)

# Bytecode for the project's own modules too: an editable install has none, and where
# PYTHONDONTWRITEBYTECODE is set every bot process would compile them again at its start.
install: $(STAMP)
	@$(PY) -m compileall -q proto/python clients/python/hearts_client server tournaments >/dev/null

## sandbox: bubblewrap, the sandbox every tournament bot runs in (docs/SECURITY.md)
sandbox:
	@command -v bwrap >/dev/null || (apt-get update && apt-get install -y bubblewrap)

## run: a round-robin tournament of the built-in bots over the real gRPC server
run: install sandbox
	$(VENV)/bin/hearts tournament run --demo

## test: lint, type-check, build the example clients and run the whole suite
test: install sandbox lint typecheck clients browser
	$(PY) -m pytest -n auto -q

lint: install
	$(VENV)/bin/ruff check proto/python server tournaments clients/python/hearts_client tests bench
	$(VENV)/bin/buf lint proto

typecheck: install
	$(VENV)/bin/mypy

proto: install
	$(PY) proto/gen_python.py

clients:
	clients/build-all

## browser: Debian's Chromium for the web tests (Playwright drives it; it never downloads a browser)
browser:
	@command -v chromium >/dev/null || { apt-get update -q && apt-get install -y -q chromium; }

bench: install
	$(PY) bench/engine.py
	$(PY) bench/strength.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
