"""What the quick start checks before it starts anything: its ports are free, and no
other quick start uses its state directory (two would run two Temporal dev servers on
one database file, and both stacks would fail). Either refusal is one line, exit 1."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from memoryctl.cli import EXIT_FAILED
from memoryctl.dev_server import port_open

LOCK_FILE = "quickstart.lock"


class QuickStartRefused(Exception):
    """The message is the one line to print."""

    exit_status = EXIT_FAILED


def check_ports(ports: dict[str, int]) -> None:
    """``ports``: option name -> port, e.g. {"--api-port": 8000}."""
    for option, port in ports.items():
        if port_open(port):
            raise QuickStartRefused(
                f"port {port} ({option}) is in use: is another quick start or server "
                f"running? Stop it, or pass {option} with a free port"
            )


@contextlib.contextmanager
def state_dir_lock(state_dir: Path) -> Iterator[None]:
    """Held for the whole run; the kernel drops it when the process ends, however it
    ends, so a killed quick start never leaves a stale lock behind."""
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / LOCK_FILE
    with path.open("a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            raise QuickStartRefused(
                f"another quick start (pid {holder}) is using {state_dir}: stop it first "
                "(Ctrl-C), or set AGENT_MEMORY_STATE_DIR to run a second one"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
