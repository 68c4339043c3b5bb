# The two commands of README.md. Each installs whatever is missing first (scripts/bootstrap.sh).
.PHONY: demo test lint bench install stress

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
