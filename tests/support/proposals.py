"""Seeding a weekly routine: the same request written on the same weekday for several
weeks (a store whose clock is set back to each of those days), and reading what a
proposal installed."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client
from temporalio.service import RPCError

from memory.store import PostgresMemoryStore
from schemas.proposals import ProposalCommand, ProposalStatus
from schemas.workflow_io import DreamInput, DreamResult
from tests.support.factories import note
from workflows.dream import DreamWorkflow
from workflows.proposal import ProposalWorkflow

WEEKLY_REQUEST = (
    "Remind me to send Dana the weekly pipeline report.",
    "Please remind me to send Dana the weekly pipeline report",
    "remind me to send the weekly pipeline report to Dana",
    "Remind me to send Dana the weekly pipeline report!",
)


def last_mondays(weeks: int, *, hour: int = 9, before: datetime | None = None) -> list[datetime]:
    """``weeks`` Mondays at ``hour``:0x UTC, oldest first, all before ``before``."""
    now = before or datetime.now(UTC)
    monday = (now - timedelta(days=now.weekday() + 7)).replace(
        hour=hour, minute=0, second=0, microsecond=0
    )
    return [
        monday - timedelta(weeks=weeks - 1 - i) + timedelta(minutes=2 * i) for i in range(weeks)
    ]


def _at(moment: datetime) -> datetime:
    return moment


async def seed_routine(
    engine: AsyncEngine,
    ref: str,
    moments: Sequence[datetime],
    texts: Sequence[str] = WEEKLY_REQUEST,
    tags: tuple[str, ...] = (),
) -> list[str]:
    """One request per moment, written by a store whose clock reads that moment."""
    ids = []
    for position, moment in enumerate(moments):
        store = PostgresMemoryStore(engine, clock=functools.partial(_at, moment), embedder=None)
        # note(): the session's history audit looks for every text written.
        entry = await store.put(ref, note(texts[position % len(texts)], *tags))
        ids.append(entry.id)
    return ids


async def dream(client: Client, task_queue: str, ref: str) -> DreamResult:
    """A DreamWorkflow of ``ref`` under an id of its own, waited for."""
    result: DreamResult = await client.execute_workflow(
        DreamWorkflow.run,
        DreamInput(memory_ref=ref),
        id=f"dream-{uuid.uuid4().hex[:8]}",
        task_queue=task_queue,
        execution_timeout=timedelta(seconds=60),
    )
    return result


async def installed(client: Client, schedule_id: str) -> bool:
    """Whether the server holds the schedule ``schedule_id``."""
    try:
        await client.get_schedule_handle(schedule_id).describe()
    except RPCError:
        return False
    return True


async def command(
    client: Client, workflow_id: str, update: str, **fields: object
) -> ProposalStatus:
    handle = client.get_workflow_handle_for(ProposalWorkflow.run, workflow_id)
    result: ProposalStatus = await handle.execute_update(
        update, ProposalCommand(actor="test", **fields), result_type=ProposalStatus
    )
    return result
