"""The embedded PostgreSQL stops when the last command using it ends: also after a
command that ends through os._exit (those that made a Temporal client: serve,
capabilities), and after one that was killed and left its pid in the handle file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memory.storage.embedded import HANDLE_FILE
from tests.support.http_app import free_port

pytestmark = pytest.mark.slow


def _memoryctl(state_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(AGENT_MEMORY_STATE_DIR=str(state_dir), TEMPORAL_ADDRESS=f"127.0.0.1:{free_port()}")
    return subprocess.run(
        [sys.executable, "-m", "memoryctl.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _running(state_dir: Path) -> bool:
    return (state_dir / "postgres" / "postmaster.pid").exists()


def test_commands_print_no_library_logs_and_the_last_one_stops_the_server(
    tmp_path: Path,
) -> None:
    # wordllama configures INFO logging for the whole process when imported: every
    # command that wrote an entry then printed the embedded server's INFO lines.
    assert _memoryctl(tmp_path, "db", "upgrade").returncode == 0
    put = _memoryctl(
        tmp_path, "memory", "put", "--memory-ref", "mem://acme/agent-1", "--content", "a note"
    )
    assert put.returncode == 0, put.stderr
    assert put.stderr == ""
    # capabilities made a Temporal client, so it ends through os._exit.
    result = _memoryctl(tmp_path, "capabilities", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)  # it did its work (Temporal unreachable is reported)
    assert not _running(tmp_path), "the embedded PostgreSQL was left running"
    handles = tmp_path / "postgres" / HANDLE_FILE
    assert json.loads(handles.read_text()) == []

    # A command killed with -9 leaves its pid behind: it must not keep the server up.
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    handles.write_text(json.dumps([gone.pid]))
    again = _memoryctl(tmp_path, "memory", "list", "--memory-ref", "mem://acme/agent-1")
    assert again.returncode == 0, again.stderr
    assert not _running(tmp_path), "a dead pid kept the embedded PostgreSQL running"
