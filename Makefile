# Two commands do everything on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: venv demo test lint bench clean

# Reinstall only when the project's metadata changes; the install is editable.
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	@touch $(STAMP)

venv: $(STAMP)

# The demo camera plays whole games by itself; open the printed address on a phone. Ctrl-C
# stops it; the next `make demo` resumes the unfinished game.
demo: $(STAMP)
	$(BIN)/vegas-table serve --source demo --data-dir .demo-data --port $(or $(PORT),8080)

lint: $(STAMP)
	$(BIN)/ruff check .

# The page tests drive Debian's Chromium (Playwright cannot download browsers here).
CHROMIUM := /usr/bin/chromium
$(CHROMIUM):
	@echo "installing Debian's chromium for the browser tests"
	@if [ "$$(id -u)" = 0 ]; then apt-get install -y --no-install-recommends chromium \
	  || (apt-get update && apt-get install -y --no-install-recommends chromium); \
	else sudo apt-get install -y --no-install-recommends chromium; fi

# Two workers: the slow tests (whole demo games) are single-threaded, and CI has two cores.
JOBS ?= 2
test: lint $(CHROMIUM)
	$(BIN)/python -m pytest -n $(JOBS)

# lasvegas (the engine we compare with) pins numpy<2, so bench/rules.py keeps it in .venv-bench.
bench: $(STAMP)
	$(BIN)/python bench/rules.py

clean:
	rm -rf $(VENV) .venv-bench .pytest_cache .ruff_cache .demo-data
