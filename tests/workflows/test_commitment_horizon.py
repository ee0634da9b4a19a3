"""Arming within a horizon: a time commitment due more than ARM_HORIZON ahead gets no
workflow when it is inferred; the memoryRef's CommitmentHorizonWorkflow starts it half a
horizon before its instant, and it fires once, at that instant. A later inference with
an earlier instant moves the horizon workflow's wake (a signal); a commitment cancelled
while deferred is never started; and passes are few (one per half horizon at most)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode
from temporalio.testing import ActivityEnvironment, WorkflowEnvironment

from activities.commitment_activities import CommitmentActivities
from memory.storage import tables
from memory.store import PostgresMemoryStore
from runtime.workflow_ids import PLAIN
from schemas.commitments import (
    ARM_HORIZON,
    ArmCommitmentsRequest,
    ArmDeferredRequest,
    ArmReport,
    CommitmentHorizonResult,
    CommitmentInferenceInput,
    CommitmentInferenceResult,
    InferCommitmentsRequest,
    commitment_workflow_id,
)
from schemas.fleet import FleetDreamInput, FleetDreamResult
from schemas.memory_ref import parse_memory_ref
from tests.support.factories import note, unique_ref
from tests.support.waiting import let_time_pass
from workflows.commitment_horizon import WAKE_BEFORE, CommitmentHorizonWorkflow
from workflows.commitment_inference import CommitmentInferenceWorkflow
from workflows.fleet_dream import FleetDreamWorkflow


async def _exists(client: Client, workflow_id: str) -> bool:
    try:
        await client.get_workflow_handle(workflow_id).describe()
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            return False
        raise
    return True


async def _arm(activities: CommitmentActivities, ref: str) -> ArmReport:
    return await ActivityEnvironment().run(
        activities.arm_commitments, ArmCommitmentsRequest(memory_ref=parse_memory_ref(ref))
    )


async def test_far_commitments_get_no_workflow_and_one_horizon_run_holds_them(
    temporal_env: WorkflowEnvironment, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    await store.put_many(
        ref,
        [
            note("Remind me in 5 hours to water the plants"),
            note("Remind me in 3 days to renew the domain"),
            note("Remind me in 9 days to book the venue"),
        ],
    )
    request = InferCommitmentsRequest(memory_ref=parse_memory_ref(ref), enqueue_runs=False)
    assert (await store.commitments.infer(request)).created == 3
    by_due = sorted(await store.commitments.list(ref), key=lambda c: c.next_at or datetime.max)
    near, three_days, nine_days = by_due
    client = temporal_env.client
    # No worker polls this queue: what arming starts waits, and is inspected.
    activities = CommitmentActivities(store.commitments, client, f"hz-{uuid.uuid4().hex[:8]}")

    report = await _arm(activities, ref)

    assert (report.started, report.deferred) == (1, 2)
    assert report.next_deferred_at == three_days.next_at
    assert await _exists(client, commitment_workflow_id(near.commitment_id))
    for far in (three_days, nine_days):
        assert not await _exists(client, commitment_workflow_id(far.commitment_id))
    # Listing shows no workflow id until one is started.
    listed = {c.commitment_id: c for c in await store.commitments.list(ref)}
    assert listed[near.commitment_id].workflow_id is not None
    assert listed[three_days.commitment_id].workflow_id is None

    horizon = client.get_workflow_handle(PLAIN.commitment_horizon(ref))
    first_run = (await horizon.describe()).run_id
    # Arming again starts nothing new and signals the same horizon run.
    again = await _arm(activities, ref)
    assert (again.started, again.already_running, again.deferred) == (0, 0, 2)
    description = await horizon.describe()
    assert description.run_id == first_run
    assert description.status == WorkflowExecutionStatus.RUNNING
    signals = [
        e
        async for e in horizon.fetch_history_events()
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED
    ]
    assert len(signals) == 2
    await horizon.terminate("test over")
    await client.get_workflow_handle(commitment_workflow_id(near.commitment_id)).terminate(
        "test over"
    )


async def _infer(client: Client, task_queue: str, ref: str) -> CommitmentInferenceResult:
    return await client.execute_workflow(
        CommitmentInferenceWorkflow.run,
        CommitmentInferenceInput(memory_ref=parse_memory_ref(ref), enqueue_runs=False),
        id=f"infer-{uuid.uuid4().hex[:8]}",
        task_queue=task_queue,
    )


async def _claims(engine: AsyncEngine, commitment_id: str) -> list[Any]:
    ledger = tables.occurrences
    async with engine.connect() as connection:
        query = select(ledger).where(ledger.c.commitment_id == commitment_id)
        return list((await connection.execute(query)).all())


async def test_deferred_commitments_start_half_a_horizon_ahead_and_fire_once_at_their_instant(
    time_skipping_env: WorkflowEnvironment,
    skipping_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    client = time_skipping_env.client
    ref = unique_ref()
    # Nothing may pass while arming (see test_commitment_workflows.py, the 5-day test).
    with time_skipping_env.auto_time_skipping_disabled():
        await store.put(ref, note("Remind me in 5 days to renew the domain"))
        first = await _infer(client, skipping_queue, ref)
        # The horizon run now sleeps until 4.5 days; this earlier instant must wake it.
        await store.put(ref, note("Remind me in 3 days to call the bank"))
        second = await _infer(client, skipping_queue, ref)
    assert (first.armed.started, first.armed.deferred) == (0, 1)
    assert (second.armed.started, second.armed.deferred) == (0, 2)
    five, three = sorted(
        await store.commitments.list(ref), key=lambda c: c.next_at or datetime.max, reverse=True
    )
    assert three.next_at is not None and five.next_at is not None

    await let_time_pass(time_skipping_env, skipping_queue, timedelta(days=3, minutes=1))
    (claim,) = await _claims(engine, three.commitment_id)
    assert claim.outcome == "fired" and claim.due_at == three.next_at
    assert timedelta(0) <= claim.fired_at - three.next_at < timedelta(seconds=5)
    assert await _claims(engine, five.commitment_id) == []
    # Started by the horizon run at least half a horizon before its instant.
    started = await _start_time(client, three.commitment_id)
    assert started <= three.next_at - WAKE_BEFORE + timedelta(minutes=1)

    await let_time_pass(time_skipping_env, skipping_queue, timedelta(days=2))
    (claim,) = await _claims(engine, five.commitment_id)
    assert claim.outcome == "fired" and claim.due_at == five.next_at
    horizon = client.get_workflow_handle_for(
        CommitmentHorizonWorkflow.run, PLAIN.commitment_horizon(ref)
    )
    result: CommitmentHorizonResult = await horizon.result()
    assert result.started == 2
    passes = [
        e
        async for e in horizon.fetch_history_events()
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    ]
    assert len(passes) == 2  # one per deferred instant here, never a busy loop


async def _start_time(client: Client, commitment_id: str) -> datetime:
    handle = client.get_workflow_handle(commitment_workflow_id(commitment_id))
    async for event in handle.fetch_history_events():
        return event.event_time.ToDatetime().replace(tzinfo=UTC)
    raise AssertionError("no history")


async def test_a_commitment_cancelled_while_deferred_is_never_started(
    time_skipping_env: WorkflowEnvironment,
    skipping_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    client = time_skipping_env.client
    ref = unique_ref()
    with time_skipping_env.auto_time_skipping_disabled():
        await store.put(ref, note("Remind me in 2 days to send the invoice"))
        inferred = await _infer(client, skipping_queue, ref)
        assert inferred.armed.deferred == 1
        (commitment,) = await store.commitments.list(ref)
        cancelled = await store.commitments.cancel(ref, commitment.commitment_id)
        assert cancelled is not None and cancelled.state == "cancelled"

    await let_time_pass(time_skipping_env, skipping_queue, ARM_HORIZON * 2 + timedelta(hours=1))
    horizon = client.get_workflow_handle_for(
        CommitmentHorizonWorkflow.run, PLAIN.commitment_horizon(ref)
    )
    result = await horizon.result()
    assert result.started == 0
    assert not await _exists(client, commitment_workflow_id(commitment.commitment_id))
    assert await _claims(engine, commitment.commitment_id) == []


async def test_a_fleet_dream_hands_every_agent_to_one_fleet_horizon(
    time_skipping_env: WorkflowEnvironment,
    skipping_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    """Fleet scale: no horizon run per agent. A fleet dream arms each agent's commitments
    and signals the fleet's one horizon run per batch; that run's pass starts, across
    memoryRefs, what is within the horizon, half a horizon ahead, and it fires at its
    instant; the run then waits for the next agent's instant."""
    client = time_skipping_env.client
    soon, later = unique_ref(), unique_ref()
    with time_skipping_env.auto_time_skipping_disabled():
        await store.put(soon, note("Remind me in 3 days to renew the domain"))
        await store.put(later, note("Remind me in 5 days to call the bank"))
        dreamed: FleetDreamResult = await client.execute_workflow(
            FleetDreamWorkflow.run,
            FleetDreamInput(token_budget=2000),
            id=f"fleet-{uuid.uuid4().hex[:8]}",
            task_queue=skipping_queue,
        )
    assert dreamed.progress.dreamed == 2
    (three,) = await store.commitments.list(soon)
    (five,) = await store.commitments.list(later)
    assert three.next_at is not None and five.next_at is not None
    for ref, commitment in ((soon, three), (later, five)):
        assert not await _exists(client, PLAIN.commitment_horizon(ref))
        assert not await _exists(client, commitment_workflow_id(commitment.commitment_id))
    horizon = client.get_workflow_handle_for(
        CommitmentHorizonWorkflow.run, PLAIN.fleet_commitment_horizon()
    )
    assert (await horizon.describe()).status == WorkflowExecutionStatus.RUNNING

    # Just past the first agent's instant. Its firing enqueues the agent's run, after
    # which this test server's clock no longer skips (it runs at wall speed): the
    # instant is the last thing this test lets pass.
    await let_time_pass(time_skipping_env, skipping_queue, timedelta(days=3, seconds=3))
    assert not await _exists(client, commitment_workflow_id(five.commitment_id))
    assert await _start_time(client, three.commitment_id) <= three.next_at - WAKE_BEFORE + (
        timedelta(minutes=1)
    )
    (claim,) = await _claims(engine, three.commitment_id)
    assert claim.outcome == "fired" and claim.due_at == three.next_at
    assert timedelta(0) <= claim.fired_at - three.next_at < timedelta(seconds=5)
    assert await _claims(engine, five.commitment_id) == []
    events = [e async for e in horizon.fetch_history_events()]
    passes = [e for e in events if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED]
    assert len(passes) == 1
    # Its next wake: half a horizon before the other agent's instant.
    timer = [e for e in events if e.event_type == EventType.EVENT_TYPE_TIMER_STARTED][-1]
    wake = timer.event_time.ToDatetime().replace(tzinfo=UTC) + (
        timer.timer_started_event_attributes.start_to_fire_timeout.ToTimedelta()
    )
    assert abs(wake - (five.next_at - WAKE_BEFORE)) < timedelta(seconds=5)
    await horizon.terminate("test over")


async def test_the_fleet_pass_arms_every_memory_ref_page_by_page(
    temporal_env: WorkflowEnvironment, store: PostgresMemoryStore, monkeypatch: Any
) -> None:
    monkeypatch.setattr("activities.commitment_activities.REFS_PER_PAGE", 2)
    near_refs = [unique_ref() for _ in range(3)]
    far_ref = unique_ref()
    for ref in near_refs:
        await store.put(ref, note("Remind me in 5 hours to water the plants"))
    await store.put(far_ref, note("Remind me in 9 days to book the venue"))
    for ref in [*near_refs, far_ref]:
        request = InferCommitmentsRequest(memory_ref=parse_memory_ref(ref), enqueue_runs=False)
        assert (await store.commitments.infer(request)).created == 1
    (far,) = await store.commitments.list(far_ref)
    client = temporal_env.client
    activities = CommitmentActivities(store.commitments, client, f"hz-{uuid.uuid4().hex[:8]}")

    report = await ActivityEnvironment().run(
        activities.arm_deferred, ArmDeferredRequest(as_of=datetime.now(UTC))
    )

    assert (report.memory_refs, report.started, report.already_running) == (3, 3, 0)
    assert (report.deferred, report.next_deferred_at) == (1, far.next_at)
    for ref in near_refs:
        (commitment,) = await store.commitments.list(ref)
        handle = client.get_workflow_handle(commitment_workflow_id(commitment.commitment_id))
        await handle.terminate("test over")
    assert not await _exists(client, commitment_workflow_id(far.commitment_id))
