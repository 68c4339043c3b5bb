#!/usr/bin/env bash
# Runs the test suite (`make test`) while a CPU hog keeps every core busy, ROUNDS times in a row
# (default 1), and stops at the first failure. A suite that passes here does not depend on how fast
# the machine is. The hog is Debian's stress-ng (scripts/bootstrap.sh installs it).
#   scripts/stress-test.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-1}
bash scripts/bootstrap.sh
cores=$(nproc)
stress-ng --cpu "$cores" --cpu-method matrixprod --quiet --timeout 0 &
hog=$!
trap 'kill "$hog" 2>/dev/null || true; wait "$hog" 2>/dev/null || true' EXIT
for round in $(seq 1 "$rounds"); do
    echo "stress-test: round $round of $rounds, $cores busy core(s) beside the suite"
    start=$(date +%s)
    .venv/bin/python -m pytest -n 2 -q -p no:cacheprovider
    echo "stress-test: round $round passed in $(( $(date +%s) - start )) s"
done
echo "stress-test: $rounds round(s) passed under load"
