# skillworks — the two commands a newcomer needs:
#   make demo   check the quickstart tasks, then a paired none-vs-curated run with the builtin agent through
#               the gateway (your model when a provider key is set, else the labelled scripted model)
#   make test   lint, type-check and run the whole test suite
# Both create/update the virtualenv and install the system packages they need (when run as root).

SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test lint typecheck unit docs system-deps test-deps clean

# Container runtime flags used by the test suite (and by `skillworks run --env container` unless given).
# The defaults suit rootful podman on hosts without systemd cgroups or with low default rlimits, like
# our CI machines; set these variables in the environment to use others (e.g. empty for Docker).
export SKILLWORKS_CONTAINER_GLOBAL_FLAGS ?= --runtime runc --cgroup-manager=cgroupfs
export SKILLWORKS_CONTAINER_RUN_FLAGS ?= --ulimit nofile=1024:1024 --ulimit nproc=1024:1024
export SKILLWORKS_CONTAINER_BUILD_FLAGS ?= --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 --network=host

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

system-deps:
	@bash scripts/install-system-deps.sh demo

test-deps: $(STAMP)
	@bash scripts/install-system-deps.sh test

demo: system-deps $(STAMP)
	@bash scripts/demo.sh $(BIN)

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy

docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict -q -d $(VENV)/site

unit: $(STAMP)
	$(BIN)/pytest -q tests/unit

test: test-deps lint typecheck docs
	$(BIN)/pytest -q

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
