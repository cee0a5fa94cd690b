# `make run` and `make test` set everything up from a fresh clone.
# Django 6 needs Python >= 3.12: use $(PYTHON) if given, else the first
# python3.13 / python3.12 / python3 (or a pyenv build) that is new enough.
ifeq ($(origin PYTHON), undefined)
PYTHON := $(shell for p in python3.13 python3.12 python3 $$HOME/.pyenv/versions/3.1[2-9]*/bin/python3; do \
	$$p -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1 && { echo $$p; break; }; done)
endif
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1:8000
# Both cores: each pytest-xdist worker gets its own test database.
PYTEST_ARGS ?= -n auto

.PHONY: run test test-browser browser-deps lint format bench clean

$(BIN)/python:
	@test -n "$(PYTHON)" || { echo "Python >= 3.12 not found; set PYTHON=/path/to/python3.12" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/python manage.py migrate --no-input
	$(BIN)/python manage.py load_demo
	@echo "Serving on http://$(HOST)/ with one task worker for long work (Ctrl-C stops both)"
	$(BIN)/python manage.py db_worker & worker=$$!; \
		trap 'kill $$worker 2>/dev/null' EXIT INT TERM; \
		$(BIN)/python manage.py runserver $(HOST)

test: $(STAMP) browser-deps
	$(BIN)/python -m pytest $(PYTEST_ARGS)

test-browser: $(STAMP) browser-deps
	$(BIN)/python -m pytest -m browser $(PYTEST_ARGS)

# The browser tests drive Debian's Chromium (Playwright's own download is not used).
browser-deps:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "Installing Debian's chromium for the browser tests"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -q && \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver; }

lint: $(STAMP)
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python manage.py makemigrations --check --dry-run

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(STAMP)
	$(BIN)/python bench/gen_workload.py --out bench/workload
	$(BIN)/python bench/bench_import.py bench/workload
	$(BIN)/python bench/bench_pool.py bench/workload
	$(BIN)/python bench/bench_score.py bench/workload
	$(BIN)/python bench/bench_leaderboard.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache
