"""Shared pieces of the duplicate-delivery tests (tests/test_duplicate_delivery*.py):
a worker interceptor that loses an activity's completion after its commit, and the
store-side checks that every effect was applied exactly once."""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio import activity, workflow
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.client import Interceptor as ClientInterceptor
from temporalio.common import RetryPolicy
from temporalio.exceptions import ApplicationError
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    StartActivityInput,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
    WorkflowOutboundInterceptor,
)
from temporalio.worker import Interceptor as WorkerInterceptor

from memory.redaction.vault import StaticSecretVault
from memory.storage import tables
from memory.store import PostgresMemoryStore
from runtime.settings import Settings
from schemas.events import EventRecord, EventType
from worker import build_worker

LOST_AFTER_COMMIT = "LostAfterCommit"  # the error type of a completion lost on purpose
# Retries of a lost completion come this fast on the interceptor's worker (production
# waits a second before the first retry; the behaviour under test is the same).
FAST_RETRY = timedelta(milliseconds=50)


class LoseCompletionAfterCommit(ClientInterceptor, WorkerInterceptor):
    """On the first attempt of each chosen activity: run it (it commits), then fail with
    a retryable error, as if the worker died before reporting completion; Temporal
    retries it. Installed on a client, so the production ``build_worker`` picks it up.

    ``executed`` records every (activity type, attempt, workflow id) that ran to the end,
    ``lost`` the first attempts whose completion was thrown away."""

    def __init__(self, activities: set[str] | None = None) -> None:
        self.activities = activities  # None: every activity
        self.executed: list[tuple[str, int, str]] = []
        self.lost: list[tuple[str, str]] = []

    def chosen(self, activity_type: str) -> bool:
        return self.activities is None or activity_type in self.activities

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _LoseCompletion(next, self)

    def workflow_interceptor_class(
        self, input: WorkflowInterceptorClassInput
    ) -> type[WorkflowInboundInterceptor] | None:
        return _FastRetryInbound

    def attempts(self, activity_type: str) -> collections.Counter[int]:
        return collections.Counter(a for t, a, _ in self.executed if t == activity_type)


class _LoseCompletion(ActivityInboundInterceptor):
    def __init__(self, next: ActivityInboundInterceptor, owner: LoseCompletionAfterCommit):
        super().__init__(next)
        self.owner = owner

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        info = activity.info()
        result = await super().execute_activity(input)
        self.owner.executed.append((info.activity_type, info.attempt, info.workflow_id or ""))
        if info.attempt == 1 and self.owner.chosen(info.activity_type):
            self.owner.lost.append((info.activity_type, info.workflow_id or ""))
            raise ApplicationError("completion lost after the commit", type=LOST_AFTER_COMMIT)
        return result


class _FastRetryInbound(WorkflowInboundInterceptor):
    def init(self, outbound: WorkflowOutboundInterceptor) -> None:
        super().init(_FastRetryOutbound(outbound))


class _FastRetryOutbound(WorkflowOutboundInterceptor):
    def start_activity(self, input: StartActivityInput) -> workflow.ActivityHandle[Any]:
        policy = input.retry_policy or RetryPolicy()
        input.retry_policy = dataclasses.replace(
            policy, initial_interval=FAST_RETRY, maximum_interval=FAST_RETRY * 4
        )
        return super().start_activity(input)


@asynccontextmanager
async def worker_losing_completions(
    client: Client,
    store: PostgresMemoryStore,
    interceptor: LoseCompletionAfterCommit,
) -> AsyncIterator[str]:
    """The production worker (worker.build_worker) behind a client carrying the
    interceptor, on a task queue of its own."""
    config = client.config()
    config["interceptors"] = [*config["interceptors"], interceptor]
    intercepted = Client(**config)
    task_queue = f"dup-{uuid.uuid4().hex[:10]}"
    settings = Settings(AGENT_MEMORY_TASK_QUEUE=task_queue)
    async with build_worker(intercepted, settings, store, StaticSecretVault({})):
        yield task_queue


# ---------------------------------------------------------------------- waiting


async def until(
    check: Callable[[], Awaitable[bool]], *, seconds: float = 20, every: float = 0.1
) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not await check():
        if loop.time() > deadline:
            raise AssertionError(f"still not true after {seconds:g} s")
        await asyncio.sleep(every)


async def workflows_of(client: Client, query: str) -> list[Any]:
    return [w async for w in client.list_workflows(query)]


async def all_closed(
    client: Client, ref: str, *, started: Sequence[Any] = (), seconds: float = 30
) -> list[Any]:
    """Wait for the ``started`` handles' results, then until no workflow of ``ref``
    (search attribute MemoryRef) is running except predicate watches and commitment
    timers (which run until cancelled or due); return the closed ones.

    Visibility lags behind starts (more so on a loaded machine): a run started a moment
    ago may not be listed yet, so the handles a test holds are awaited directly and the
    listing must show nothing running on three polls in a row."""
    for handle in started:
        await handle.result()
    query = f"MemoryRef = '{ref}'"
    waits = {"PredicateWatchWorkflow", "CommitmentWorkflow"}
    quiet = 0

    async def settled() -> bool:
        nonlocal quiet
        listed = await workflows_of(client, query)
        running = [
            w
            for w in listed
            if w.status == WorkflowExecutionStatus.RUNNING and w.workflow_type not in waits
        ]
        quiet = 0 if running else quiet + 1
        return quiet >= 3

    await until(settled, seconds=seconds, every=0.2)
    return [
        w for w in await workflows_of(client, query) if w.status != WorkflowExecutionStatus.RUNNING
    ]


# ---------------------------------------------------------------------- store checks


async def all_events(store: PostgresMemoryStore, ref: str) -> list[EventRecord]:
    return await store.events(ref, limit=100_000)


async def assert_event_log_gap_free(
    engine: AsyncEngine, store: PostgresMemoryStore, ref: str
) -> list[EventRecord]:
    """The memoryRef's events are numbered 1..N with no gap or repeat, the head agrees
    (read in one snapshot), and no dedupe key was written twice."""
    ev, heads = tables.events, tables.ref_heads
    async with engine.connect() as connection:
        await connection.execution_options(isolation_level="REPEATABLE READ")
        async with connection.begin():
            seqs = list(
                (
                    await connection.execute(
                        select(ev.c.seq).where(ev.c.memory_ref == ref).order_by(ev.c.seq)
                    )
                ).scalars()
            )
            head = (
                await connection.execute(select(heads.c.last_seq).where(heads.c.memory_ref == ref))
            ).scalar()
            keys = (
                await connection.execute(
                    select(ev.c.dedupe_key, func.count())
                    .where(ev.c.memory_ref == ref, ev.c.dedupe_key.is_not(None))
                    .group_by(ev.c.dedupe_key)
                    .having(func.count() > 1)
                )
            ).all()
    assert seqs == list(range(1, len(seqs) + 1))
    assert (head or 0) == len(seqs), (head, len(seqs))
    assert keys == []
    return await all_events(store, ref)


def of_type(events: list[EventRecord], event_type: EventType) -> list[EventRecord]:
    return [e for e in events if e.type == event_type.value]


async def assert_distilled_once(
    engine: AsyncEngine, store: PostgresMemoryStore, ref: str, *, archives: int, sources: int
) -> list[Any]:
    """``archives`` archives, one memory.compacted and one committed run per archive,
    and every one of ``sources`` sources consumed by exactly one of them."""
    ARCHIVES, DISTILLATION_RUNS, ENTRIES = tables.archives, tables.distillation_runs, tables.entries
    async with engine.connect() as connection:
        rows = (
            await connection.execute(
                select(
                    ARCHIVES.c.checksum,
                    ARCHIVES.c.output_id,
                    ARCHIVES.c.source_count,
                    ARCHIVES.c.run_key,
                )
                .where(ARCHIVES.c.memory_ref == ref)
                .order_by(ARCHIVES.c.created_at)
            )
        ).all()
        runs = (
            await connection.execute(
                select(func.count())
                .select_from(DISTILLATION_RUNS)
                .where(DISTILLATION_RUNS.c.memory_ref == ref)
            )
        ).scalar_one()
        consumed = (
            await connection.execute(
                select(ENTRIES.c.distilled_into, func.count())
                .where(ENTRIES.c.memory_ref == ref, ENTRIES.c.distilled_into.is_not(None))
                .group_by(ENTRIES.c.distilled_into)
            )
        ).all()
    assert len(rows) == archives, rows
    assert runs == archives
    compacted = of_type(await all_events(store, ref), EventType.MEMORY_COMPACTED)
    assert sorted(str(e.payload["outputId"]) for e in compacted) == sorted(
        r.output_id for r in rows
    )
    by_output: dict[str, int] = {row[0]: row[1] for row in consumed}
    assert {r.output_id: r.source_count for r in rows} == by_output
    assert sum(by_output.values()) == sources
    listed = [i for e in compacted for i in ids_of(e.payload.get("sourceIds"))]
    assert len(listed) == len(set(listed)) == sources
    return list(rows)


def ids_of(value: object) -> list[str]:
    """An id list of an event payload (absent above the payload's limit)."""
    assert value is None or isinstance(value, list), value
    return [str(i) for i in value or ()]


async def assert_consolidated_once(
    engine: AsyncEngine, store: PostgresMemoryStore, ref: str, *, merged: int
) -> list[EventRecord]:
    """Each pass is recorded once with one agent.memory.consolidated; ``merged`` rows
    were merged in all, each by exactly one pass, and each survivor was strengthened
    once per pass that merged into it (version 1 + that count)."""
    CONSOLIDATION_PASSES, ENTRIES = tables.consolidation_passes, tables.entries
    events = await all_events(store, ref)
    consolidated = of_type(events, EventType.MEMORY_CONSOLIDATED)
    async with engine.connect() as connection:
        passes = (
            await connection.execute(
                select(CONSOLIDATION_PASSES.c.pass_id, CONSOLIDATION_PASSES.c.run_key).where(
                    CONSOLIDATION_PASSES.c.memory_ref == ref
                )
            )
        ).all()
        marked = (
            await connection.execute(
                select(ENTRIES.c.id, ENTRIES.c.superseded_by, ENTRIES.c.consolidation_pass).where(
                    ENTRIES.c.memory_ref == ref, ENTRIES.c.superseded_by.is_not(None)
                )
            )
        ).all()
        survivors = (
            await connection.execute(
                select(ENTRIES.c.id, ENTRIES.c.version, ENTRIES.c.corroboration).where(
                    ENTRIES.c.memory_ref == ref, ENTRIES.c.corroboration > 1
                )
            )
        ).all()
    assert len({p.run_key for p in passes}) == len(passes)
    assert sorted(str(e.payload["passId"]) for e in consolidated) == sorted(
        p.pass_id for p in passes
    )
    merged_ids = [i for e in consolidated for i in ids_of(e.payload.get("mergedIds"))]
    assert len(merged_ids) == len(set(merged_ids)) == merged == len(marked)
    assert sorted(merged_ids) == sorted(m.id for m in marked)
    # memory.updated "merged" once per merged row; "consolidated" once per strengthening.
    updates = collections.Counter(
        (e.payload["memoryId"], e.payload.get("reason"))
        for e in of_type(events, EventType.MEMORY_UPDATED)
    )
    assert all(updates[(m.id, "merged")] == 1 for m in marked), updates
    strengthened = collections.Counter((m.superseded_by, m.consolidation_pass) for m in marked)
    per_survivor = collections.Counter(survivor for survivor, _ in strengthened)
    for survivor in survivors:
        assert survivor.version == 1 + per_survivor[survivor.id], survivor
        assert updates[(survivor.id, "consolidated")] == per_survivor[survivor.id]
    return consolidated


async def count_rows(engine: AsyncEngine, table: Any, **where: object) -> int:
    query = select(func.count()).select_from(table)
    for column, value in where.items():
        query = query.where(table.c[column] == value)
    async with engine.connect() as connection:
        return int((await connection.execute(query)).scalar_one())
