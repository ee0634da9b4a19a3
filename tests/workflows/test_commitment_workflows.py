"""Commitments on Temporal: durable timers (time-skipping test server where days pass),
fire-once through duplicate starts, retries after commit, a worker that is gone when the
timer fires, repeated inference, predicate transitions, and the enqueued run's tenant."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio import activity
from temporalio.api.enums.v1 import PendingActivityState
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHistory,
)
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer, Worker

from activities.commitment_activities import CommitmentActivities
from activities.contracts import FIRE_COMMITMENT
from activities.memory_activities import MemoryActivities
from memory.redaction.vault import StaticSecretVault
from memory.storage import tables
from memory.store import PostgresMemoryStore
from runtime.converter import data_converter
from runtime.search_attributes import TENANT
from runtime.settings import Settings
from schemas.commitments import (
    CommitmentInferenceInput,
    CommitmentInferenceResult,
    CommitmentInput,
    FireCommitmentRequest,
    FireOutcome,
    InferCommitmentsRequest,
    PredicateWatchInput,
    PredicateWatchStatus,
    commitment_workflow_id,
)
from schemas.memory_ref import parse_memory_ref
from tests.support.factories import note, unique_ref
from tests.support.scan import row_counts
from tests.support.waiting import closed_status, eventually, let_time_pass
from tests.support.workflow_runs import application_error
from worker import build_worker
from workflows.agent_run import AgentRunWorkflow
from workflows.commitment import CommitmentWorkflow
from workflows.commitment_inference import CommitmentInferenceWorkflow
from workflows.predicate_watch import PredicateWatchWorkflow
from workflows.registry import ALL_WORKFLOWS

ROOT = Path(__file__).resolve().parents[2]


async def _infer(
    client: Client, task_queue: str, ref: str, **extra: Any
) -> CommitmentInferenceResult:
    return await client.execute_workflow(
        CommitmentInferenceWorkflow.run,
        CommitmentInferenceInput(memory_ref=parse_memory_ref(ref), **extra),
        id=f"infer-{uuid.uuid4().hex[:8]}",
        task_queue=task_queue,
    )


def _said_five_days_ago(engine: AsyncEngine, *, due_in_seconds: int) -> PostgresMemoryStore:
    """A store whose writes were said five days ago, less ``due_in_seconds``: "in 5
    days" written through it is due that many seconds from now."""
    return PostgresMemoryStore(
        engine,
        clock=lambda: datetime.now(UTC) - timedelta(days=5) + timedelta(seconds=due_in_seconds),
    )


async def _ledger(engine: AsyncEngine, commitment_id: str) -> list[Any]:
    ledger = tables.occurrences
    async with engine.connect() as connection:
        query = (
            select(ledger).where(ledger.c.commitment_id == commitment_id).order_by(ledger.c.due_at)
        )
        return list((await connection.execute(query)).all())


async def _claims_and_events(engine: AsyncEngine, commitment_id: str, ref: str) -> tuple[int, int]:
    """The occurrence ledger's claims and the commitment.fired events, in one snapshot."""
    ledger, events = tables.occurrences, tables.events
    snapshot = engine.execution_options(isolation_level="REPEATABLE READ")
    async with snapshot.begin() as connection:
        claimed = await connection.scalar(
            select(func.count()).select_from(ledger).where(ledger.c.commitment_id == commitment_id)
        )
        fired = await connection.scalar(
            select(func.count())
            .select_from(events)
            .where(events.c.memory_ref == ref, events.c.type == "commitment.fired")
        )
    return int(claimed or 0), int(fired or 0)


async def _fired(store: PostgresMemoryStore, ref: str) -> list[dict[str, object]]:
    return [e.payload for e in await store.events(ref, types=["commitment.fired"])]


async def test_remind_me_in_5_days_fires_once_at_its_instant(
    time_skipping_env: WorkflowEnvironment,
    skipping_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    client = time_skipping_env.client
    ref = unique_ref()
    entry = await store.put(ref, note("Remind me in 5 days to renew the domain"))
    # No enqueued run here: the time-skipping server stops skipping once a workflow has
    # started an abandoned child (the enqueued runs are tested on the dev server below).
    # No time may pass while inferring: otherwise the server can skip the 5 days as
    # soon as the armed timer is the only thing left, and fire before we look.
    with time_skipping_env.auto_time_skipping_disabled():
        inferred = await _infer(client, skipping_queue, ref, enqueue_runs=False)
    # Beyond the arming horizon: the horizon workflow starts it 12 h before its instant.
    assert (inferred.inference.created, inferred.armed.started, inferred.armed.deferred) == (
        1,
        0,
        1,
    )
    (commitment,) = await store.commitments.list(ref)
    # Five days after it was said, to the second.
    due = (entry.created_at + timedelta(days=5)).replace(microsecond=0)
    assert commitment.next_at == due

    handle = client.get_workflow_handle_for(
        CommitmentWorkflow.run, commitment_workflow_id(commitment.commitment_id)
    )
    await let_time_pass(time_skipping_env, skipping_queue, timedelta(days=5, minutes=1))
    result = await handle.result()
    assert result.last.status == "fired"
    (claim,) = await _ledger(engine, commitment.commitment_id)
    assert claim.due_at == due
    # The timer fired at the instant (workflow time), not before it and not late.
    assert timedelta(0) <= claim.fired_at - due < timedelta(seconds=5)
    assert len(await _fired(store, ref)) == 1


def _next_dst_change(zone: ZoneInfo, after: datetime) -> datetime:
    probe = after
    offset = after.astimezone(zone).utcoffset()
    while probe.astimezone(zone).utcoffset() == offset:
        probe += timedelta(days=1)
    return probe


async def test_every_thursday_fires_once_per_thursday_across_a_dst_change(
    time_skipping_env: WorkflowEnvironment,
    skipping_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    client = time_skipping_env.client
    berlin = ZoneInfo("Europe/Berlin")
    ref = unique_ref()
    await store.commitments.set_time_zone(parse_memory_ref(ref).tenant, "Europe/Berlin")
    await store.put(ref, note("Remind me every Thursday at 17:00 to send the report"))
    with time_skipping_env.auto_time_skipping_disabled():  # see the test above
        await _infer(client, skipping_queue, ref, enqueue_runs=False)
    (commitment,) = await store.commitments.list(ref)

    start = await time_skipping_env.get_current_time()
    change = _next_dst_change(berlin, start)
    end = change + timedelta(days=15)
    # Let the test server's clock run past the change; the workflow keeps going.
    await let_time_pass(time_skipping_env, skipping_queue, end - start)
    claims = await _ledger(engine, commitment.commitment_id)
    thursdays = [
        day
        for day in (start + timedelta(days=n) for n in range((end - start).days))
        if day.astimezone(berlin).weekday() == 3
    ]
    assert len(claims) >= len(thursdays) - 1 >= 2
    local = [claim.due_at.astimezone(berlin) for claim in claims]
    assert all((t.weekday(), t.hour, t.minute) == (3, 17, 0) for t in local)
    assert len({claim.due_at for claim in claims}) == len(claims)  # each instant once
    offsets = {claim.due_at.astimezone(berlin).utcoffset() for claim in claims}
    assert len(offsets) == 2  # fired on both sides of the change, at 17:00 local
    assert all(claim.outcome == "fired" for claim in claims)
    # One fired event per claim. The workflow keeps firing while the test server's clock
    # runs on, and a claim and its event commit in one transaction: both counts are read
    # in one snapshot (two separate reads differed by the firing committed between them).
    await client.get_workflow_handle(commitment_workflow_id(commitment.commitment_id)).cancel()
    claimed, fired = await _claims_and_events(engine, commitment.commitment_id, ref)
    assert claimed == fired >= len(claims)


async def test_starting_a_commitment_twice_starts_and_fires_it_once(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    client = temporal_env.client
    ref = unique_ref()
    # Said five days ago minus two seconds: due two seconds from now.
    back = _said_five_days_ago(engine, due_in_seconds=2)
    await back.put(ref, note("Remind me in 5 days to renew the domain"))
    first = await _infer(client, worker_task_queue, ref)
    (commitment,) = await store.commitments.list(ref)
    assert commitment.next_at is not None
    duplicate = CommitmentInput(
        commitment_id=commitment.commitment_id,
        memory_ref=parse_memory_ref(ref),
        due_at=commitment.next_at,
    )
    workflow_id = commitment_workflow_id(commitment.commitment_id)
    with pytest.raises(WorkflowAlreadyStartedError):
        await client.start_workflow(
            CommitmentWorkflow.run, duplicate, id=workflow_id, task_queue=worker_task_queue
        )
    await client.get_workflow_handle(workflow_id).result()
    # Closed: the id reuse policy the arming used refuses a new run with this id.
    with pytest.raises(WorkflowAlreadyStartedError):
        await client.start_workflow(
            CommitmentWorkflow.run,
            duplicate,
            id=workflow_id,
            task_queue=worker_task_queue,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
        )
    # Inference again over the same entries: nothing new, nothing started.
    second = await _infer(client, worker_task_queue, ref)
    assert (first.inference.created, second.inference.created) == (1, 0)
    assert second.armed.started == 0
    # Even a run under another id with the same occurrence claims nothing.
    rogue = await client.execute_workflow(
        CommitmentWorkflow.run,
        duplicate,
        id=f"rogue-{uuid.uuid4().hex[:6]}",
        task_queue=worker_task_queue,
    )
    assert rogue.last.status == "already-claimed"
    assert len(await _ledger(engine, commitment.commitment_id)) == 1
    assert len(await _fired(store, ref)) == 1


async def test_a_fire_retried_after_its_commit_fires_once(
    temporal_env: WorkflowEnvironment, store: PostgresMemoryStore, engine: AsyncEngine
) -> None:
    client = temporal_env.client
    task_queue = f"retry-{uuid.uuid4().hex[:8]}"
    real = CommitmentActivities(store.commitments, client, task_queue)
    attempts: list[str] = []

    @activity.defn(name=FIRE_COMMITMENT.name)
    async def fire_then_crash(request: FireCommitmentRequest) -> FireOutcome:
        outcome = await real.fire_commitment(request)
        attempts.append(outcome.status)
        if len(attempts) == 1:
            raise ApplicationError("worker lost after the commit")
        return outcome

    ref = unique_ref()
    back = _said_five_days_ago(engine, due_in_seconds=1)
    await back.put(ref, note("Remind me in 5 days to renew the domain"))
    others = [
        a
        for a in real.all()
        if getattr(a, "__temporal_activity_definition").name != FIRE_COMMITMENT.name
    ]
    async with Worker(
        client,
        task_queue=task_queue,
        workflows=ALL_WORKFLOWS,
        activities=[
            *MemoryActivities(store, StaticSecretVault({})).all(),
            *others,
            fire_then_crash,
        ],
    ):
        await _infer(client, task_queue, ref)
        (commitment,) = await store.commitments.list(ref)
        handle = client.get_workflow_handle_for(
            CommitmentWorkflow.run, commitment_workflow_id(commitment.commitment_id)
        )
        result = await handle.result()
        assert attempts == ["fired", "already-claimed"]
        assert result.last.enqueued_run_id is not None
        run = client.get_workflow_handle_for(AgentRunWorkflow.run, result.last.enqueued_run_id)
        await run.result()
    assert len(await _ledger(engine, commitment.commitment_id)) == 1
    assert len(await _fired(store, ref)) == 1
    await _replay_changes_nothing(engine, store, ref, handle)
    runs = [w async for w in client.list_workflows(f"WorkflowId = '{result.last.enqueued_run_id}'")]
    assert len(runs) == 1


async def test_a_timer_that_fires_while_no_worker_runs_fires_once_on_restart(
    temporal_env: WorkflowEnvironment, store: PostgresMemoryStore, engine: AsyncEngine
) -> None:
    client = temporal_env.client
    task_queue = f"restart-{uuid.uuid4().hex[:8]}"
    settings = Settings(AGENT_MEMORY_TASK_QUEUE=task_queue)
    ref = unique_ref()
    back = _said_five_days_ago(engine, due_in_seconds=3)
    await back.put(ref, note("Remind me in 5 days to renew the domain"))
    async with build_worker(client, settings, store, StaticSecretVault({})):
        await _infer(client, task_queue, ref, enqueue_runs=False)
    # The worker is gone when the timer fires; a new one picks the firing up.
    await asyncio.sleep(5)
    (commitment,) = await store.commitments.list(ref)
    assert commitment.fire_count == 0
    async with build_worker(client, settings, store, StaticSecretVault({})):
        handle = client.get_workflow_handle_for(
            CommitmentWorkflow.run, commitment_workflow_id(commitment.commitment_id)
        )
        assert (await handle.result()).last.status == "fired"
    assert len(await _ledger(engine, commitment.commitment_id)) == 1
    assert len(await _fired(store, ref)) == 1


async def _replay_changes_nothing(
    engine: AsyncEngine, store: PostgresMemoryStore, ref: str, handle: Any
) -> None:
    """Replaying a fired commitment's history re-runs no activity: no row, no event."""
    before, events = await row_counts(engine), await store.events(ref)
    replayer = Replayer(workflows=ALL_WORKFLOWS, data_converter=data_converter)
    history = await handle.fetch_history()
    reloaded = WorkflowHistory.from_json(history.workflow_id, history.to_json())
    replayed = await replayer.replay_workflow(reloaded, raise_on_replay_failure=False)
    assert replayed.replay_failure is None
    assert await row_counts(engine) == before
    assert await store.events(ref) == events


async def _status(handle: Any) -> PredicateWatchStatus | None:
    return await handle.query(PredicateWatchWorkflow.status)


async def _evaluated(handle: Any, count: int) -> PredicateWatchStatus:
    for _ in range(200):
        status = await _status(handle)
        if status is not None and status.evaluations >= count:
            return status
        await asyncio.sleep(0.05)
    raise AssertionError(f"the watch never reached {count} evaluations")


async def test_a_predicate_toggling_false_true_false_true_fires_exactly_twice(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    client = temporal_env.client
    ref = unique_ref()
    await store.put(ref, note("Follow up when the contract is signed"))
    await _infer(client, worker_task_queue, ref)
    (commitment,) = await store.commitments.list(ref)
    handle = client.get_workflow_handle_for(
        PredicateWatchWorkflow.run, commitment_workflow_id(commitment.commitment_id)
    )
    assert not (await _evaluated(handle, 1)).holds  # false
    signed = await store.put(ref, note("Signed today", "contract-signed"))
    await handle.signal(PredicateWatchWorkflow.memory_changed)
    assert (await _evaluated(handle, 2)).holds  # true
    await store.delete(ref, signed.id)
    await handle.signal(PredicateWatchWorkflow.memory_changed)
    assert not (await _evaluated(handle, 3)).holds  # false
    await store.put(ref, note("Signed again", "contract-signed"))
    await handle.signal(PredicateWatchWorkflow.memory_changed)
    status = await _evaluated(handle, 4)  # true
    assert (status.holds, status.fires) == (True, 2)
    fired = await _fired(store, ref)
    assert len(fired) == 2 and {f["condition"] for f in fired} == {"predicate"}

    # The enqueued runs carry the source tenant and read the source memoryRef.
    for event in fired:
        run = client.get_workflow_handle_for(AgentRunWorkflow.run, str(event["enqueuedRunId"]))
        digest = await run.result()
        assert digest.memory_ref == ref
        description = await run.describe()
        assert description.typed_search_attributes.get(TENANT) == parse_memory_ref(ref).tenant

    await store.commitments.cancel(ref, commitment.commitment_id)
    await handle.signal(PredicateWatchWorkflow.memory_changed)
    final = await handle.result()
    assert (final.fires, final.state) == (2, "cancelled")
    await _replay_changes_nothing(engine, store, ref, handle)
    assert (await handle.describe()).status == WorkflowExecutionStatus.COMPLETED


async def test_cancelling_the_workflow_cancels_the_commitment(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
) -> None:
    client = temporal_env.client
    ref = unique_ref()
    await store.put(ref, note("Follow up when the invoice is paid"))
    await store.put(ref, note("Remind me in 3 hours to renew the lease"))
    await _infer(client, worker_task_queue, ref)
    commitments = await store.commitments.list(ref)
    assert {c.condition for c in commitments} == {"time", "predicate"}
    for commitment in commitments:
        handle = client.get_workflow_handle(commitment_workflow_id(commitment.commitment_id))
        await handle.cancel()
        assert await closed_status(handle) == WorkflowExecutionStatus.CANCELED
    states = {(c.state, c.ended_reason) for c in await store.commitments.list(ref)}
    assert states == {("cancelled", "cancelled")}


async def test_a_watch_cancelled_while_it_evaluates_cancels_its_commitment(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    """A cancel that lands while the watch awaits its evaluation activity reaches the
    workflow as an ActivityError, not asyncio.CancelledError: the workflow used to end
    CANCELED without cancelling its commitment, which stayed armed (seen under CI load).
    Here the test holds the commitment's row lock, so the evaluation is in flight for
    certain when the cancel arrives."""
    client = temporal_env.client
    ref = unique_ref()
    await store.put(ref, note("Follow up when the invoice is paid"))
    await store.commitments.infer(InferCommitmentsRequest(memory_ref=parse_memory_ref(ref)))
    (commitment,) = await store.commitments.list(ref)
    commitments = tables.commitments
    async with engine.begin() as holder:
        await holder.execute(
            select(commitments.c.commitment_id)
            .where(commitments.c.commitment_id == commitment.commitment_id)
            .with_for_update()
        )
        handle = await client.start_workflow(
            PredicateWatchWorkflow.run,
            PredicateWatchInput(
                commitment_id=commitment.commitment_id, memory_ref=parse_memory_ref(ref)
            ),
            id=commitment_workflow_id(commitment.commitment_id),
            task_queue=worker_task_queue,
        )

        async def evaluating() -> bool:
            # A started attempt is in the pending activities, not yet in the history.
            pending = (await handle.describe()).raw_description.pending_activities
            return any(
                a.state == PendingActivityState.PENDING_ACTIVITY_STATE_STARTED for a in pending
            )

        await eventually(evaluating, seconds=20)
        await handle.cancel()
        # The lock is released here: the evaluation finishes, then the cancellation runs.
    assert await closed_status(handle, seconds=20) == WorkflowExecutionStatus.CANCELED
    (after,) = await store.commitments.list(ref)
    assert (after.state, after.ended_reason) == ("cancelled", "cancelled")


@pytest.mark.slow
async def test_a_worker_killed_with_the_timer_pending_fires_once_after_restart(
    temporal_env: WorkflowEnvironment,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
    database_url: str,
    tmp_path: Path,
) -> None:
    """SIGKILL, not a clean stop: the dead worker's sticky cache and queue are lost, and
    the timer's workflow task must find the new worker."""
    client = temporal_env.client
    task_queue = f"killed-{uuid.uuid4().hex[:8]}"
    ref = unique_ref()
    back = _said_five_days_ago(engine, due_in_seconds=8)
    await back.put(ref, note("Remind me in 5 days to renew the domain"))
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "worker.py")],
        env={
            **os.environ,
            "TEMPORAL_ADDRESS": client.service_client.config.target_host,
            "TEMPORAL_NAMESPACE": "default",
            "AGENT_MEMORY_TASK_QUEUE": task_queue,
            "DATABASE_URL": database_url,
            "AGENT_MEMORY_SECRETS_FILE": str(tmp_path / "secrets.json"),
        },
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        await _infer(client, task_queue, ref, enqueue_runs=False)
        (commitment,) = await store.commitments.list(ref)
        process.send_signal(signal.SIGKILL)
        await asyncio.to_thread(process.wait, 10)
    finally:
        if process.poll() is None:
            process.kill()
    assert commitment.next_at is not None and commitment.fire_count == 0
    # The timer fires while no worker runs.
    await asyncio.sleep((commitment.next_at - datetime.now(UTC)).total_seconds() + 2)
    assert (await store.commitments.list(ref))[0].fire_count == 0
    settings = Settings(AGENT_MEMORY_TASK_QUEUE=task_queue)
    async with build_worker(client, settings, store, StaticSecretVault({})):
        handle = client.get_workflow_handle_for(
            CommitmentWorkflow.run, commitment_workflow_id(commitment.commitment_id)
        )
        assert (await asyncio.wait_for(handle.result(), 60)).last.status == "fired"
    assert len(await _ledger(engine, commitment.commitment_id)) == 1
    assert len(await _fired(store, ref)) == 1


async def test_bad_input_fails_the_workflow_naming_the_field_and_stores_nothing(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    client = temporal_env.client
    ref = unique_ref()
    await store.put(ref, note("Remind me in 5 days to renew the domain"))
    before = await row_counts(engine)
    bad_inputs: list[tuple[str, dict[str, object], str]] = [
        ("CommitmentInferenceWorkflow", {"memoryRef": ref, "timeZone": "Mars/Olympus"}, "timeZone"),
        ("CommitmentInferenceWorkflow", {"memoryRef": "mem://../x"}, "memoryRef"),
        (
            "CommitmentWorkflow",
            {"commitmentId": "not-an-id", "memoryRef": ref, "dueAt": "2026-12-01T00:00:00Z"},
            "commitmentId",
        ),
        (
            "PredicateWatchWorkflow",
            {"commitmentId": "cmt-00", "memoryRef": ref, "cadenceSeconds": 0},
            "cadenceSeconds",
        ),
    ]
    for workflow_type, raw, field in bad_inputs:
        handle = await client.start_workflow(
            workflow_type, raw, id=f"bad-{uuid.uuid4().hex[:8]}", task_queue=worker_task_queue
        )
        with pytest.raises(WorkflowFailureError) as failure:
            await asyncio.wait_for(handle.result(), 30)
        error = application_error(failure.value)
        assert error.non_retryable and field in str(error), (workflow_type, str(error))
    assert await row_counts(engine) == before
    assert await store.commitments.list(ref) == []
