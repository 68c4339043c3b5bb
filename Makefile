# The two commands of README.md. Each installs whatever is missing first (scripts/bootstrap.sh).
.PHONY: demo test lint bench install stress docs docs-serve

install:
	@bash scripts/bootstrap.sh

demo: install
	.venv/bin/hrpsim launch examples/sample_walk.yaml --summary runs/demo-summary.json

test: install
	.venv/bin/python -m pytest -n 2 -q

lint: install
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .

bench: install
	bench/run

# the suite while every core is kept busy (ROUNDS=5 for five rounds in a row)
stress: install
	bash scripts/stress-test.sh $(or $(ROUNDS),1)

# the documentation site (mkdocs.yml) into site/; a warning (a broken link, a missing reference) fails it
docs: install
	NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict

# the same site served at http://127.0.0.1:8000/, rebuilt as pages change
docs-serve: install
	NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs serve --strict
