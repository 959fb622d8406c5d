# Two entry points on a fresh clone: `make demo` and `make test`.
# Both create .venv inside the clone and install the project with its dev extra.
PY ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: demo test fuzz lint typecheck bench docs

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/yuxi demo

# The whole suite on two workers (pytest-xdist; `-n 0` in PYTEST_ARGS runs it in one
# process), Hypothesis on its fixed `ci` profile; the time is printed at the end.
test: $(STAMP)
	@start=$$(date +%s); status=0; \
	$(VENV)/bin/python -m pytest -q -n 2 $(PYTEST_ARGS) || status=$$?; \
	echo "make test: $$(( $$(date +%s) - start )) s"; exit $$status

# Property tests only, on the randomized `fuzz` profile (ten times the examples, new draws
# each run, failures kept in .hypothesis/): pin what it finds with @example.
fuzz: $(STAMP)
	@start=$$(date +%s); status=0; \
	HYPOTHESIS_PROFILE=fuzz $(VENV)/bin/python -m pytest -q -m hypothesis $(PYTEST_ARGS) \
	  || status=$$?; \
	echo "make fuzz: $$(( $$(date +%s) - start )) s"; exit $$status

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
