# Two entry points on a fresh clone: `make demo` and `make test`.
# Both create .venv inside the clone and install the project with its dev extra.
PY ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck bench docs

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/yuxi demo

test: $(STAMP)
	$(VENV)/bin/python -m pytest -q

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy

bench: $(STAMP)
	$(VENV)/bin/python -m bench

docs: $(STAMP)
	$(VENV)/bin/mkdocs serve

# The runtime's guarantees against a real model (Gemma 3 270M on llama-cpp-python's server,
# installed into ~/.cache/yuxi-real-model on first use; see docs/models.md). Not part of
# `make test` or CI.
.PHONY: test-real-model
test-real-model: $(STAMP)
	$(VENV)/bin/python -m tests.real_model
