# The commands of the README: `make run`, `make test` (the full gate CI runs) and `make check` (the
# fast lane while working). Everything else is a helper.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml proto/python/pyproject.toml clients/python/pyproject.toml | md5sum | cut -c1-8)

.PHONY: run test check install dev lint typecheck proto clients browser bench clean sandbox sim sim-test runtimes

# The simulator's Rust (clients/sim) is built into a wheel and installed into the venv whenever
# its sources change: the stamp is named after a hash of them (an editable install would not
# rebuild Rust). cargo from PATH, else rustup's default place.
CARGO_BIN := $(dir $(shell command -v cargo 2>/dev/null || echo $$HOME/.cargo/bin/cargo))
SIM_SOURCES := $(shell find clients/sim -path clients/sim/target -prune -o -type f \( -name '*.rs' -o -name Cargo.toml -o -name Cargo.lock -o -name pyproject.toml -o -name '*.pyi' -o -name config.toml \) -print | LC_ALL=C sort)
SIM_STAMP := $(VENV)/.sim-$(shell cat $(SIM_SOURCES) | md5sum | cut -c1-8)

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
install: $(STAMP) $(SIM_STAMP)
	@$(PY) -m compileall -q proto/python clients/python/hearts_client server tournaments >/dev/null

## sim: build the simulator's extension module (hearts_sim) and install it into the venv
sim: $(SIM_STAMP)

$(SIM_STAMP): $(SIM_SOURCES) | $(STAMP)
	@test -x $(CARGO_BIN)cargo || { echo "make: cargo not found: the simulator clients/sim is Rust; install it from https://rustup.rs (or put cargo on PATH) and run make again" >&2; exit 1; }
	rm -rf clients/sim/target/wheels
	PATH="$(CARGO_BIN):$$PATH" $(VENV)/bin/maturin build --release --locked -q -m clients/sim/python/Cargo.toml -i $(PY) -o clients/sim/target/wheels
	$(PY) -m pip install -q --force-reinstall --no-deps clients/sim/target/wheels/cancellation_hearts_sim-*.whl
	rm -f $(VENV)/.sim-* && touch $@

## sim-test: the Rust core's own tests (every conformance vector, the referee's deals) and clippy
sim-test: $(SIM_STAMP)
	cd clients/sim && PATH="$(CARGO_BIN):$$PATH" cargo test --locked -q -p hearts_sim_core
	cd clients/sim && PATH="$(CARGO_BIN):$$PATH" PYO3_PYTHON=$(abspath $(PY)) cargo clippy --locked -q --all-targets -- -D warnings

## sandbox: bubblewrap, the sandbox every tournament bot runs in (docs/SECURITY.md)
sandbox:
	@command -v bwrap >/dev/null || (apt-get update && apt-get install -y bubblewrap)

## runtimes: the runtimes bots may name (docs/COMPETITION.md, `hearts runtime list`): python-sdk
## from this installation; java-grpc and node-grpc from Maven Central and npm where their tools
## are (skipped with a line otherwise, except under CI=true). Each is built only when out of date.
runtimes: install
	$(VENV)/bin/hearts runtime install python-sdk
	@for r in "java-grpc java mvn" "node-grpc node npm"; do set -- $$r; \
	  if command -v $$2 >/dev/null && command -v $$3 >/dev/null; then $(VENV)/bin/hearts runtime install $$1 || exit 1; \
	  elif [ "$${CI:-}" = true ]; then echo "make: runtimes: $$1 needs $$2 and $$3 (CI=true: failing)" >&2; exit 1; \
	  else echo "make: runtimes: $$1 skipped, it needs $$2 and $$3" >&2; fi; done

## run: a round-robin tournament of the built-in bots over the real gRPC server
run: install sandbox
	$(VENV)/bin/hearts tournament run --demo

## test: lint, type-check, build the example clients and run the whole suite
test: install sandbox lint typecheck sim-test clients browser runtimes
	$(PY) -m pytest -n auto -q

## check: lint, type-check and the unit tier, every test not marked slow, toolchain, browser or ray
## (docs/TESTING.md): nothing to build, no sandbox, browser or cluster; about two minutes on two cores
check: install lint typecheck
	$(PY) -m pytest -n auto -q -m "not slow and not toolchain and not browser and not ray"

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
	$(PY) bench/sim.py
	$(PY) bench/strength.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
