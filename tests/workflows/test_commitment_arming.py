"""Arming time commitments against the real dev server: starts run concurrently within
ARM_CONCURRENCY, a start that fails leaves only its own commitment unarmed for the
activity's retry (the others are marked and never started twice), and a time
commitment's run is held back by Temporal's start delay until just before its instant,
then fires once."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import (
    Client,
    Interceptor,
    OutboundInterceptor,
    StartWorkflowInput,
    WorkflowExecutionStatus,
    WorkflowHandle,
)
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode
from temporalio.testing import ActivityEnvironment, WorkflowEnvironment

from activities.commitment_activities import ARM_CONCURRENCY, START_LEAD, CommitmentActivities
from memory.redaction.vault import StaticSecretVault
from memory.storage import tables
from memory.store import PostgresMemoryStore
from runtime.settings import Settings
from schemas.commitments import (
    ArmCommitmentsRequest,
    ArmReport,
    CommitmentInferenceInput,
    InferCommitmentsRequest,
    commitment_workflow_id,
)
from schemas.memory_ref import parse_memory_ref
from tests.support.factories import note, unique_ref
from worker import build_worker
from workflows.commitment import CommitmentWorkflow
from workflows.commitment_inference import CommitmentInferenceWorkflow

# Whether a commitment's first start fails (as if the server were unavailable), given its
# workflow id and the ordinal of its first start among commitment starts.
FailFirst = Callable[[str, int], bool]


class _Starts(Interceptor):
    """Counts the starts in flight (each held a moment, so overlap is observable) and
    fails the first start of the ids ``fail_first`` picks."""

    def __init__(self, fail_first: FailFirst = lambda _id, _n: False) -> None:
        self.fail_first = fail_first
        self.in_flight = 0
        self.most_in_flight = 0
        self.failed: set[str] = set()
        self.calls: list[str] = []  # commitment workflow ids, one per start

    def intercept_client(self, next: OutboundInterceptor) -> OutboundInterceptor:
        return _StartsOutbound(next, self)


class _StartsOutbound(OutboundInterceptor):
    def __init__(self, next: OutboundInterceptor, starts: _Starts) -> None:
        super().__init__(next)
        self.starts = starts

    async def start_workflow(self, input: StartWorkflowInput) -> WorkflowHandle[Any, Any]:
        starts, workflow_id = self.starts, input.id
        if not workflow_id.startswith("commitment/"):
            return await super().start_workflow(input)  # the test's own inference run
        ordinal = len(set(starts.calls))
        first = workflow_id not in starts.calls
        starts.calls.append(workflow_id)
        starts.in_flight += 1
        starts.most_in_flight = max(starts.most_in_flight, starts.in_flight)
        try:
            await asyncio.sleep(0.02)
            if first and starts.fail_first(workflow_id, ordinal):
                starts.failed.add(workflow_id)
                raise RPCError("injected: server unavailable", RPCStatusCode.UNAVAILABLE, b"")
            return await super().start_workflow(input)
        finally:
            starts.in_flight -= 1


def _client_with(client: Client, starts: _Starts) -> Client:
    config = client.config()
    config["interceptors"] = [*config["interceptors"], starts]
    return Client(**config)


async def _infer_time_commitments(store: PostgresMemoryStore, ref: str, count: int) -> list[str]:
    await store.put_many(
        ref, [note(f"Remind me in 5 hours to check arming item {n}") for n in range(count)]
    )
    request = InferCommitmentsRequest(memory_ref=parse_memory_ref(ref), enqueue_runs=False)
    assert (await store.commitments.infer(request)).created == count
    return sorted(c.commitment_id for c in await store.commitments.list(ref))


async def _arm(activities: CommitmentActivities, ref: str, beats: list[Any]) -> ArmReport:
    env = ActivityEnvironment()
    env.on_heartbeat = lambda *details: beats.extend(details)
    return await env.run(
        activities.arm_commitments, ArmCommitmentsRequest(memory_ref=parse_memory_ref(ref))
    )


async def _unarmed(store: PostgresMemoryStore, ref: str) -> list[str]:
    return sorted(
        row.commitment_id for row in await store.commitments.unarmed(parse_memory_ref(ref), 1000)
    )


async def _status(client: Client, commitment_id: str) -> WorkflowExecutionStatus | None:
    """The commitment's run's status (describe reads it directly, unlike the lagging
    visibility store)."""
    handle = client.get_workflow_handle(commitment_workflow_id(commitment_id))
    return (await handle.describe()).status


async def test_starts_run_concurrently_within_the_bound(
    temporal_env: WorkflowEnvironment, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    ids = await _infer_time_commitments(store, ref, 3 * ARM_CONCURRENCY)
    starts = _Starts()
    client = _client_with(temporal_env.client, starts)
    # No worker polls this queue: the runs wait, arming alone is measured.
    activities = CommitmentActivities(store.commitments, client, f"arm-{uuid.uuid4().hex[:8]}")
    beats: list[Any] = []
    report = await _arm(activities, ref, beats)
    assert (report.started, report.already_running) == (len(ids), 0)
    assert 1 < starts.most_in_flight <= ARM_CONCURRENCY
    assert await _unarmed(store, ref) == []
    # The progress heartbeats carry the counts, ending with the total.
    assert beats[-1] == {"started": len(ids), "alreadyRunning": 0}


async def test_a_failed_start_stays_unarmed_for_the_retry_and_nothing_starts_twice(
    temporal_env: WorkflowEnvironment, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    ids = await _infer_time_commitments(store, ref, 24)
    doomed = {commitment_workflow_id(i) for i in ids[3::7]}
    starts = _Starts(fail_first=lambda workflow_id, _n: workflow_id in doomed)
    client = _client_with(temporal_env.client, starts)
    activities = CommitmentActivities(store.commitments, client, f"arm-{uuid.uuid4().hex[:8]}")

    with pytest.raises(ApplicationError) as failure:
        await _arm(activities, ref, [])
    assert failure.value.type == "ArmStartFailed"
    assert f"{len(doomed)} of {len(ids)}" in failure.value.message
    # Only the failed ones are left for the retry; every other one is started and marked.
    left = await _unarmed(store, ref)
    assert {commitment_workflow_id(i) for i in left} == doomed

    retry = await _arm(activities, ref, [])
    assert (retry.started, retry.already_running) == (len(doomed), 0)
    assert await _unarmed(store, ref) == []
    # A run per commitment; only the failed ones were started a second time.
    running = WorkflowExecutionStatus.RUNNING
    assert [await _status(client, i) for i in ids] == [running] * len(ids)
    assert len(starts.calls) == len(ids) + len(doomed)


async def test_the_inference_workflow_retries_a_failed_start_through_temporal(
    temporal_env: WorkflowEnvironment, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    await store.put_many(
        ref, [note(f"Remind me in 5 hours to check retried item {n}") for n in range(10)]
    )
    starts = _Starts(fail_first=lambda _id, ordinal: ordinal in (1, 4, 8))
    client = _client_with(temporal_env.client, starts)
    task_queue = f"arm-retry-{uuid.uuid4().hex[:8]}"
    settings = Settings(AGENT_MEMORY_TASK_QUEUE=task_queue)
    async with build_worker(client, settings, store, StaticSecretVault({})):
        result = await client.execute_workflow(
            CommitmentInferenceWorkflow.run,
            CommitmentInferenceInput(memory_ref=parse_memory_ref(ref), enqueue_runs=False),
            id=f"infer-{uuid.uuid4().hex[:8]}",
            task_queue=task_queue,
        )
    ids = [c.commitment_id for c in await store.commitments.list(ref)]
    assert (len(ids), len(starts.failed)) == (10, 3)
    # The last attempt started what the first one could not; all are armed, once each.
    assert result.armed.started == len(starts.failed)
    assert await _unarmed(store, ref) == []
    running = WorkflowExecutionStatus.RUNNING
    assert [await _status(client, i) for i in ids] == [running] * len(ids)
    assert len(starts.calls) == len(ids) + len(starts.failed)


def _at(event: HistoryEvent) -> datetime:
    return event.event_time.ToDatetime().replace(tzinfo=UTC)


async def test_a_time_commitment_waits_in_temporal_until_just_before_its_instant(
    temporal_env: WorkflowEnvironment, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    (commitment_id,) = await _infer_time_commitments(store, ref, 1)
    activities = CommitmentActivities(
        store.commitments, temporal_env.client, f"arm-{uuid.uuid4().hex[:8]}"
    )
    armed_at = datetime.now(UTC)
    await _arm(activities, ref, [])
    (commitment,) = await store.commitments.list(ref)
    assert commitment.next_at is not None
    handle = temporal_env.client.get_workflow_handle(commitment_workflow_id(commitment_id))
    events = [event async for event in handle.fetch_history_events()]
    # Held back by the server: no workflow task (no worker work, no timer) until then.
    assert [e.event_type for e in events] == [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED]
    backoff = events[0].workflow_execution_started_event_attributes.first_workflow_task_backoff
    expected = commitment.next_at - START_LEAD - armed_at
    assert abs(backoff.ToTimedelta() - expected) < timedelta(seconds=5)
    await handle.terminate("test over")


async def test_a_held_back_commitment_fires_once_at_its_instant(
    temporal_env: WorkflowEnvironment, store: PostgresMemoryStore, engine: AsyncEngine
) -> None:
    ref = unique_ref()
    due_in = START_LEAD + timedelta(seconds=3)
    said = datetime.now(UTC) - timedelta(days=5) + due_in
    back = PostgresMemoryStore(engine, clock=lambda: said)
    await back.put(ref, note("Remind me in 5 days to renew the domain"))
    task_queue = f"arm-fire-{uuid.uuid4().hex[:8]}"
    client = temporal_env.client
    async with build_worker(
        client, Settings(AGENT_MEMORY_TASK_QUEUE=task_queue), store, StaticSecretVault({})
    ):
        await client.execute_workflow(
            CommitmentInferenceWorkflow.run,
            CommitmentInferenceInput(memory_ref=parse_memory_ref(ref), enqueue_runs=False),
            id=f"infer-{uuid.uuid4().hex[:8]}",
            task_queue=task_queue,
        )
        (commitment,) = await store.commitments.list(ref)
        handle = client.get_workflow_handle_for(
            CommitmentWorkflow.run, commitment_workflow_id(commitment.commitment_id)
        )
        result = await handle.result()
    assert result.last.status == "fired"
    events = [event async for event in handle.fetch_history_events()]
    first_task = next(
        e for e in events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED
    )
    assert commitment.next_at is not None
    # The run began in the lead before the instant, not at arming...
    assert _at(first_task) >= commitment.next_at - START_LEAD - timedelta(seconds=1)
    # ...and fired once, at or after the instant.
    async with engine.connect() as connection:
        claims = (
            await connection.execute(
                select(tables.occurrences).where(
                    tables.occurrences.c.commitment_id == commitment.commitment_id
                )
            )
        ).all()
    assert [c.outcome for c in claims] == ["fired"]
    assert claims[0].claimed_at >= commitment.next_at
