# `make test` is the one test command: it creates .venv, installs the locked dependencies, and
# runs the whole suite. `.ci/run` calls exactly this.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LOCK := requirements/dev.lock
UV_LOCK := requirements/uv.lock
# The browser tests drive this Chromium (Debian's package; Playwright's download does not work here).
CHROMIUM_PATH ?= /usr/bin/chromium
export CHROMIUM_PATH

.PHONY: test test-fast typecheck lint-js browser-check demo demo-reset install lock lock-upgrade bench clean

# Exactly the locked versions (hashes checked), then the project itself without resolving again.
# pip installs uv from its own lock, and uv the rest: `make install` takes 26 s where pip alone took
# 55. Bytecode compiled at install, as pip does: a process that may not write it (PYTHONDONTWRITEBYTECODE)
# would otherwise compile every module it imports. uv reads UV_INDEX_URL, UV_FIND_LINKS and its
# uv.toml, not pip's configuration.
UV_PIP := $(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python
$(STAMP): pyproject.toml $(LOCK) $(UV_LOCK)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --require-hashes -r $(UV_LOCK)
	$(UV_PIP) --require-hashes -r $(LOCK)
	$(UV_PIP) --no-deps -e .
	touch $(STAMP)

install: $(STAMP)

# ESLint 9 over the pages' modules (eslint.config.js), at the versions package-lock.json pins.
node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error

# The pages' JavaScript: ESLint, then the unit tests of the judging page's state and requests
# (Node's own test runner; the pages as a whole are tested in Chromium).
lint-js: node_modules/.package-lock.json
	npx --no-install eslint static/raterapp/js tests/js
	node --test tests/js/

# Type checks, as pyproject's [tool.mypy] says. The django-stubs plugin loads the settings, which
# want a SECRET_KEY: any will do, nothing is served.
typecheck: $(STAMP)
	SECRET_KEY=typecheck $(BIN)/mypy

browser-check:
	@if [ ! -x "$(CHROMIUM_PATH)" ]; then \
	  echo "make test: no Chromium at $(CHROMIUM_PATH). The browser tests (tests/browser, tests/deploy)"; \
	  echo "  drive Chromium: apt-get install chromium (Debian), or set CHROMIUM_PATH=/path/to/chromium."; \
	  if [ "$$CI" = "true" ]; then echo "  CI runs the whole suite: failing."; exit 1; fi; \
	  echo "  Going on without them (they are reported as skipped); CI fails without Chromium."; \
	fi

# The whole suite: what CI runs. The rating loop writes through hand-written SQL on PostgreSQL and
# through the ORM elsewhere (the embedded demo's SQLite): its suites (marker `rating_loop`) run
# on both. Three pytest-xdist workers on 2 cores run all but the latency
# tests (marker `alone`), which then run by themselves: what they measure is the product's latency,
# not the other tests' load. Three, not two: the process-level tests (outages, the demo's minute,
# raters judging in production mode) mostly wait, and a third worker fills those waits. The
# slowest 25 tests are listed at the end.
test: lint-js $(STAMP) browser-check
	$(BIN)/ruff check metrics_core raterapp tests bench
	$(BIN)/ruff format --check metrics_core raterapp bench
	$(MAKE) --no-print-directory typecheck
	$(BIN)/python -m pytest -n 3 --dist loadscope -m "not alone" --durations=25
	$(BIN)/python -m pytest -m alone
	DATABASE_URL=sqlite:///$(CURDIR)/.data/rating-loop.sqlite3 RATING_LOOP_ON_SQLITE=true $(BIN)/python -m pytest -n 2 -m rating_loop

# Everything but the slow simulations, the process-level tests and the browser tests, on two
# pytest-xdist workers (tests/settings.py keeps their files, cache keys and queues apart).
test-fast: lint-js $(STAMP)
	$(BIN)/ruff check metrics_core raterapp tests bench
	$(MAKE) --no-print-directory typecheck
	$(BIN)/python -m pytest -n 2 -m "not slow and not browser"

# Refresh the hashed locks after a change to pyproject.toml's dependencies: requirements/dev.lock
# (web + dev: make install, CI), requirements/image.lock (web + dask: the Dockerfile) and
# requirements/uv.lock (the installer, from uv.in). `make lock` keeps the other pins;
# `make lock-upgrade` moves every pin to the newest release allowed.
LOCK_COMPILE = $(BIN)/uv pip compile --quiet --generate-hashes --python-version 3.11 --universal
lock lock-upgrade: $(STAMP)
	$(LOCK_COMPILE) pyproject.toml $(if $(filter lock-upgrade,$@),--upgrade) --extra web --extra dev -o requirements/dev.lock
	$(LOCK_COMPILE) pyproject.toml $(if $(filter lock-upgrade,$@),--upgrade) --extra web --extra dask -o requirements/image.lock
	$(LOCK_COMPILE) requirements/uv.in $(if $(filter lock-upgrade,$@),--upgrade) -o $(UV_LOCK)

# The product on a demo experiment (Febrl 3), embedded: SQLite and a file-system broker in a data
# folder of its own (DEMO_DATA_DIR, never the tests' .data) unless DATABASE_URL / REDIS_URL are
# set. Web on http://127.0.0.1:$(DEMO_PORT), a Celery worker and simulated raters, all under one
# supervisor (manage.py demo_serve): Ctrl-C, closing the terminal or killing make stops them all.
DEMO_DATA_DIR ?= .data/demo
DEMO_PORT ?= 8000
# `env`, not a shell: make runs the supervisor as its own child, which then notices when make dies.
DEMO := env DEBUG=true DATA_DIR=$(DEMO_DATA_DIR)
demo: $(STAMP)
	$(DEMO) $(BIN)/python manage.py migrate --noinput
	$(DEMO) $(BIN)/python manage.py createcachetable
	$(DEMO) $(BIN)/python manage.py demo
	$(DEMO) $(BIN)/python manage.py demo_serve --port $(DEMO_PORT)

# The demo afresh: a new database, broker and uploads (the embedded demo's data folder only).
demo-reset:
	rm -rf $(DEMO_DATA_DIR)
	$(MAKE) demo

bench: $(STAMP)
	$(BIN)/python bench/bench_metrics_core.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis staticfiles node_modules
