"""worker.py as users run it: configured from the environment, serving dreams, and
stopping cleanly on SIGTERM/SIGINT."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from google.protobuf.duration_pb2 import Duration
from sqlalchemy.engine import make_url
from temporalio.api.workflowservice.v1 import RegisterNamespaceRequest
from temporalio.testing import WorkflowEnvironment

from memory.store import PostgresMemoryStore
from schemas.workflow_io import DreamInput
from tests.support.factories import note, unique_ref
from tests.support.tcp_proxy import CuttableProxy
from workflows.dream import DreamWorkflow

ROOT = Path(__file__).resolve().parents[2]


async def _wait_for(process: subprocess.Popen[str], text: str, seconds: float = 30) -> str:
    seen = ""
    assert process.stdout is not None
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while loop.time() < deadline:
        line = await asyncio.to_thread(process.stdout.readline)
        seen += line
        if text in line:
            return seen
        if not line and process.poll() is not None:
            break
    raise AssertionError(f"worker never logged {text!r}:\n{seen}")


def _address(env: WorkflowEnvironment) -> str:
    return env.client.service_client.config.target_host


def _start_worker(
    temporal_address: str,
    database_url: str,
    tmp_path: Path,
    task_queue: str,
    namespace: str = "default",
) -> subprocess.Popen[str]:
    """``python worker.py`` configured from the environment, as users run it."""
    env = {
        **os.environ,
        "TEMPORAL_ADDRESS": temporal_address,
        "TEMPORAL_NAMESPACE": namespace,
        "AGENT_MEMORY_TASK_QUEUE": task_queue,
        "DATABASE_URL": database_url,
        "AGENT_MEMORY_SECRETS_FILE": str(tmp_path / "secrets.json"),
    }
    return subprocess.Popen(
        [sys.executable, str(ROOT / "worker.py")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
async def test_worker_serves_dreams_and_stops_cleanly(
    temporal_env: WorkflowEnvironment,
    database_url: str,
    store: PostgresMemoryStore,
    tmp_path: Path,
    stop_signal: signal.Signals,
) -> None:
    task_queue = f"proc-{uuid.uuid4().hex[:8]}"
    process = _start_worker(_address(temporal_env), database_url, tmp_path, task_queue)
    try:
        await _wait_for(process, f"polling task queue '{task_queue}'")
        ref = unique_ref()
        await store.put_many(ref, [note(f"worker process note {i}") for i in range(5)])
        result = await temporal_env.client.execute_workflow(
            DreamWorkflow.run,
            DreamInput(memory_ref=ref),
            id=f"dream-{uuid.uuid4().hex[:8]}",
            task_queue=task_queue,
        )
        assert result.status == "completed"
        process.send_signal(stop_signal)
        await _wait_for(process, "worker stopped", seconds=30)
        assert await asyncio.to_thread(process.wait, 30) == 0
    finally:
        if process.poll() is None:
            process.kill()


async def _waits_then_polls(
    process: subprocess.Popen[str], waiting: str, proxy: CuttableProxy, task_queue: str
) -> None:
    """The worker logs ``waiting`` and stays up while ``proxy`` is cut, polls once it is
    restored, and stops cleanly."""
    try:
        await _wait_for(process, waiting)
        await asyncio.sleep(1.5)
        assert process.poll() is None, f"the worker exited ({waiting})"
        await proxy.restore()
        await _wait_for(process, f"polling task queue '{task_queue}'")
        process.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(process.wait, 30) == 0
    finally:
        if process.poll() is None:
            process.kill()
        await proxy.cut()


async def test_a_worker_started_while_the_database_is_down_waits_for_it(
    temporal_env: WorkflowEnvironment, database_url: str, tmp_path: Path
) -> None:
    """A worker that starts beside a restarting database (a failover, a compose stack
    coming up) comes up when the database does, instead of exiting on its first
    connection and leaving the work to whatever restarts it."""
    url = make_url(database_url)
    proxy = await CuttableProxy(
        f"{url.query['host']}/.s.PGSQL.{url.query.get('port', 5432)}"
    ).start()
    through_proxy = url.set(host="127.0.0.1", port=proxy.port, query={})
    await proxy.cut()
    task_queue = f"proc-{uuid.uuid4().hex[:8]}"
    through = through_proxy.render_as_string(hide_password=False)
    process = _start_worker(_address(temporal_env), through, tmp_path, task_queue)
    await _waits_then_polls(process, "database not ready", proxy, task_queue)


async def test_a_worker_started_while_temporal_is_down_waits_for_it(
    temporal_env: WorkflowEnvironment, database_url: str, tmp_path: Path
) -> None:
    """The same for the Temporal server (found by the chaos run: a worker started while
    the server restarted exited at once)."""
    host, port = _address(temporal_env).rsplit(":", 1)
    proxy = await CuttableProxy(tcp=(host, int(port))).start()
    await proxy.cut()
    task_queue = f"proc-{uuid.uuid4().hex[:8]}"
    process = _start_worker(f"127.0.0.1:{proxy.port}", database_url, tmp_path, task_queue)
    await _waits_then_polls(process, "Temporal not reachable", proxy, task_queue)


async def test_a_worker_refused_after_connecting_retries_its_start_until_it_polls(
    temporal_env: WorkflowEnvironment, database_url: str, tmp_path: Path
) -> None:
    """Connected, then refused by the server's worker validation: here because its
    namespace is not registered yet (a deploy that creates it after the workers), in
    the chaos run because the server restarted between the connection and the
    validation, after which the worker exited. It retries its whole start instead."""
    namespace = f"ns-{uuid.uuid4().hex[:8]}"
    task_queue = f"proc-{uuid.uuid4().hex[:8]}"
    process = _start_worker(_address(temporal_env), database_url, tmp_path, task_queue, namespace)
    try:
        await _wait_for(process, "worker start failed (RPCError)")
        await asyncio.sleep(1.5)
        assert process.poll() is None, "the worker exited"
        await temporal_env.client.workflow_service.register_namespace(
            RegisterNamespaceRequest(
                namespace=namespace, workflow_execution_retention_period=Duration(seconds=86400)
            )
        )
        await _wait_for(process, f"polling task queue '{task_queue}'", seconds=60)
        process.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(process.wait, 30) == 0
    finally:
        if process.poll() is None:
            process.kill()
