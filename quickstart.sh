#!/usr/bin/env bash
# Quick start: set up .venv, then run the main job end to end on the embedded default
# (embedded PostgreSQL + Temporal dev server + worker). Extra arguments go to
# `memoryctl demo`, e.g. --exit-after-run, --temporal-port 7233, --ui-port 8233.
set -euo pipefail
cd "$(dirname "$0")"

VENV="${VENV:-.venv}"
PYTHON="${PYTHON:-python3}"

if [ "${QUICKSTART_SKIP_INSTALL:-0}" != "1" ]; then
  "$PYTHON" - <<'PY'
import sys
if sys.version_info < (3, 11):
    sys.exit(f"Python 3.11+ is required (found {sys.version.split()[0]})")
PY
  if [ ! -x "$VENV/bin/python" ]; then
    echo "Creating $VENV ..."
    "$PYTHON" -m venv "$VENV"
  fi
  # Installed once, and again only when pyproject.toml (the dependencies) changes: the
  # install is editable, so code changes need no reinstall.
  STAMP="$VENV/.quickstart-installed"
  WANT="$("$PYTHON" -c 'import hashlib; print(hashlib.sha256(open("pyproject.toml", "rb").read()).hexdigest())')"
  if [ -x "$VENV/bin/memoryctl" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
    echo "Using the project installed in $VENV (pyproject.toml unchanged)"
  else
    echo "Installing the project into $VENV (first run takes a minute) ..."
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
    "$VENV/bin/python" -m pip install --quiet -e .
    echo "$WANT" > "$STAMP"
  fi
fi

exec "$VENV/bin/memoryctl" demo "$@"
