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

demo: $(STAMP)
	$(BIN)/vegas-table simulate --edition classic --players 4 --seed 7 --data-dir .demo-data --resume

lint: $(STAMP)
	$(BIN)/ruff check .

test: lint
	$(BIN)/python -m pytest

# lasvegas (the engine we compare with) pins numpy<2, so bench/rules.py keeps it in .venv-bench.
bench: $(STAMP)
	$(BIN)/python bench/rules.py

clean:
	rm -rf $(VENV) .venv-bench .pytest_cache .ruff_cache .demo-data
