#!/usr/bin/env bash
# Quick start: set up .venv, then run the main job end to end on the embedded default
# (embedded PostgreSQL + Temporal dev server + worker). Extra arguments go to
# `memoryctl demo`, e.g. --exit-after-run, --temporal-port 7233, --ui-port 8233.
set -euo pipefail
cd "$(dirname "$0")"

for arg in "$@"; do
  case "$arg" in
    -h|--help)
      # Answered here, before any install: help should not cost a minute of pip.
      cat <<'USAGE'
Usage: ./quickstart.sh [OPTIONS]

Set up .venv (the first time, and again when pyproject.toml changes), then start
embedded PostgreSQL, the Temporal dev server, the worker and the HTTP API, run a dream
and show what it did. The stack stays up until Ctrl-C.

Options (passed to `memoryctl demo`):
  --exit-after-run       Stop the stack once the dream is shown.
  --new-day              Add another day's notes (the demo memory is seeded once).
  --temporal-port PORT   Temporal dev server gRPC port (default 7233).
  --ui-port PORT         Temporal UI port (default 8233).
  --api-port PORT        HTTP API port (default 8000).
  -h, --help             Show this message and exit.

State (embedded PostgreSQL, the Temporal dev server's database, the demo's API key)
lives in your user state dir, or in AGENT_MEMORY_STATE_DIR when set.
USAGE
      exit 0
      ;;
  esac
done

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
