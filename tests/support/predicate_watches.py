"""Starting a predicate watch and reading what it has seen, for the change-notification
tests (tests/workflows/test_predicate_notifications.py)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle

from benchmarks.predicate_watch_bench import arm_watch
from memory.storage import tables
from memory.store import PostgresMemoryStore
from schemas.commitments import (
    PredicateWatchStatus,
    commitment_workflow_id,
)
from tests.support.factories import note
from workflows.predicate_watch import PredicateWatchWorkflow

# Inferred as memory.tag_exists {tag: TAG}.
PROMISE = "Follow up when the contract is signed"
TAG = "contract-signed"


@dataclass
class StartedWatch:
    ref: str
    commitment_id: str
    handle: WorkflowHandle[Any, Any]


async def start_watch(
    client: Client, task_queue: str, store: PostgresMemoryStore, ref: str
) -> StartedWatch:
    """Write the promise, record its predicate commitment (``memory.tag_exists {tag:
    TAG}``, as inference reads PROMISE; recorded directly so these tests do not depend
    on the phrase parser), start its watch the way arming does, and wait for the
    watch's first evaluation. No enqueued runs: the time-skipping server stops skipping
    once a workflow has started an abandoned child."""
    note(PROMISE)  # registered with the history audit's forbidden texts
    armed = await arm_watch(client, task_queue, store, ref, TAG, PROMISE)
    handle = client.get_workflow_handle_for(
        PredicateWatchWorkflow.run, commitment_workflow_id(armed.commitment_id)
    )
    watch = StartedWatch(ref, armed.commitment_id, handle)
    await evaluated(watch, 1)
    return watch


async def status(watch: StartedWatch) -> PredicateWatchStatus | None:
    return await watch.handle.query(PredicateWatchWorkflow.status)


async def evaluated(watch: StartedWatch, count: int, seconds: float = 10) -> PredicateWatchStatus:
    """The watch's status once it has evaluated ``count`` times (real seconds: querying
    never lets the time-skipping server skip, so an old cadence timer cannot help)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while loop.time() < deadline:
        found = await status(watch)
        if found is not None and found.evaluations >= count:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"the watch never reached {count} evaluations in {seconds:g} s")


async def caught_up(engine: AsyncEngine, watch: StartedWatch) -> tuple[bool, int] | None:
    """(holds, fires) as the store recorded them, once the watch's last evaluation read
    its memoryRef's latest change; None before."""
    COMMITMENTS, REF_CHANGES = tables.commitments, tables.ref_changes
    async with engine.connect() as connection:
        row = (
            await connection.execute(
                select(
                    COMMITMENTS.c.seen_change_seq,
                    COMMITMENTS.c.predicate_holds,
                    COMMITMENTS.c.fire_count,
                ).where(COMMITMENTS.c.commitment_id == watch.commitment_id)
            )
        ).one()
        latest = (
            await connection.execute(
                select(func.coalesce(func.max(REF_CHANGES.c.change_seq), 0)).where(
                    REF_CHANGES.c.memory_ref == watch.ref
                )
            )
        ).scalar()
    if row.seen_change_seq is None or row.seen_change_seq != latest:
        return None
    return bool(row.predicate_holds), int(row.fire_count)


async def after_write(
    engine: AsyncEngine, watch: StartedWatch, before: int, seconds: float = 10
) -> PredicateWatchStatus:
    """The watch's status once it evaluated again (past ``before`` evaluations), an
    evaluation read the ref's latest change, and the workflow reports what that
    evaluation recorded (the store commits before the workflow hears of it)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while loop.time() < deadline:
        recorded = await caught_up(engine, watch)
        found = await status(watch)
        if (
            recorded is not None
            and found is not None
            and found.evaluations > before
            and (found.holds, found.fires) == recorded
        ):
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"no evaluation saw the write within {seconds:g} s")


async def workflow_tasks(watch: StartedWatch) -> int:
    """WorkflowTaskCompleted events in the watch's current run."""
    history = await watch.handle.fetch_history()
    completed = EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
    return sum(1 for event in history.events if event.event_type == completed)


async def fired_occurrences(engine: AsyncEngine, watch: StartedWatch) -> list[str]:
    OCCURRENCES = tables.occurrences
    async with engine.connect() as connection:
        rows = await connection.execute(
            select(OCCURRENCES.c.occurrence)
            .where(OCCURRENCES.c.commitment_id == watch.commitment_id)
            .order_by(OCCURRENCES.c.occurrence)
        )
        return list(rows.scalars())
