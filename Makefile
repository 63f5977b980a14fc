# The two commands of the README: `make run` and `make test`. Everything else is a helper.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | md5sum | cut -c1-8)

.PHONY: run test install dev lint typecheck proto clients browser bench clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install -q -e ".[dev]"
	rm -f $(VENV)/.installed-* && touch $(STAMP)

install: $(STAMP)

## run: a round-robin tournament of the built-in bots over the real gRPC server
run: install
	$(VENV)/bin/hearts tournament run --demo

## test: lint, type-check, build the example clients and run the whole suite
test: install lint typecheck clients browser
	$(PY) -m pytest -n auto -q

lint: install
	$(VENV)/bin/ruff check server tournaments clients/python/hearts_client tests bench
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
