# `make test` is the one test command: it creates .venv, installs the project with its
# test dependencies, and runs the whole suite. `.ci/run` calls exactly this.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test lint install bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[web,dev]'
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(BIN)/ruff check metrics_core raterapp tests bench
	$(BIN)/ruff format --check metrics_core raterapp bench
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python bench/bench_metrics_core.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
