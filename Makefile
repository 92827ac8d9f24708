# `make test` is the one test command: it creates .venv, installs the project with its
# test dependencies, and runs the whole suite. `.ci/run` calls exactly this.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test demo install bench clean

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

# The product on a demo experiment (Febrl 3), embedded: SQLite and a file-system broker under .data
# unless DATABASE_URL / REDIS_URL are set. Web on http://127.0.0.1:8000, a Celery worker, and
# simulated raters judging in the background. Ctrl-C stops all three.
DEMO := DEBUG=true
demo: $(STAMP)
	$(DEMO) $(BIN)/python manage.py migrate --noinput
	$(DEMO) $(BIN)/python manage.py createcachetable
	$(DEMO) $(BIN)/python manage.py demo
	$(DEMO) sh -c 'trap "kill 0" INT TERM EXIT; \
		$(BIN)/celery -A raterapp worker --pool=solo --loglevel=WARNING & \
		$(BIN)/python manage.py demo --simulate --pace 0.5 & \
		$(BIN)/python manage.py runserver 127.0.0.1:8000'

bench: $(STAMP)
	$(BIN)/python bench/bench_metrics_core.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
