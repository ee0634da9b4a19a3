"""A recurring commitment whose workflow fires hours late (inferred after its first
instants) owes every instant in between (issue 20, item 4): each gets its own ledger row,
the one still inside its grace window fires and its agent run is enqueued, the rest are
missed, and the workflow continues as new with the first instant after the firing.
Replaying the run that caught up changes nothing."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import WorkflowHistory
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer

from memory.store import PostgresMemoryStore
from runtime.converter import data_converter
from schemas.commitments import (
    DEFAULT_GRACE_SECONDS,
    CommitmentInferenceInput,
    commitment_workflow_id,
)
from schemas.memory_ref import parse_memory_ref
from tests.support.factories import note, unique_ref
from tests.support.scan import row_counts
from tests.support.workflow_runs import enqueued_run_result
from workflows.commitment_inference import CommitmentInferenceWorkflow
from workflows.registry import ALL_WORKFLOWS

HOUR = timedelta(hours=1)


async def test_an_hourly_commitment_armed_hours_late_accounts_for_every_hour(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    client = temporal_env.client
    ref = unique_ref()
    # Said three and a half hours ago: its first instants are behind us when it is armed,
    # so the workflow fires its first instant at once, about three hours late.
    said = datetime.now(UTC) - 3 * HOUR - timedelta(minutes=30)
    back = PostgresMemoryStore(engine, clock=lambda: said)
    await back.put(ref, note("Remind me every hour to check the queue"))
    await client.execute_workflow(
        CommitmentInferenceWorkflow.run,
        CommitmentInferenceInput(memory_ref=parse_memory_ref(ref)),
        id=f"infer-{ref.rsplit('/', 1)[-1]}",
        task_queue=worker_task_queue,
    )
    (commitment,) = await store.commitments.list(ref)
    cid = commitment.commitment_id
    for _ in range(300):
        (commitment,) = await store.commitments.list(ref)
        if commitment.next_at is not None and commitment.next_at > datetime.now(UTC):
            break
        await asyncio.sleep(0.1)
    assert commitment.next_at is not None and commitment.next_at > datetime.now(UTC)

    detail = await store.commitments.show(ref, cid)
    assert detail is not None
    ledger = sorted(detail.occurrences, key=lambda o: o.due_at or said)
    dues = [o.due_at for o in ledger]
    assert all(due is not None for due in dues)
    first = dues[0]
    assert first is not None and said <= first < said + HOUR
    # One row per hour from the first instant to the last one before the firing.
    assert dues == [first + n * HOUR for n in range(len(dues))]
    assert len(dues) >= 3
    woke = max(max(o.fired_at, o.claimed_at) for o in ledger)
    last = dues[-1]
    assert last is not None and last <= woke < last + HOUR
    assert commitment.next_at == last + HOUR
    grace = timedelta(seconds=DEFAULT_GRACE_SECONDS)
    outcomes = [o.outcome for o in ledger]
    assert outcomes == ["missed"] * (len(dues) - 1) + ["fired"]
    assert all(max(o.fired_at, o.claimed_at) - o.due_at > grace for o in ledger[:-1])  # type: ignore[operator]
    assert (commitment.fire_count, commitment.missed_count) == (1, len(dues) - 1)

    fired = [e.payload for e in await store.events(ref, types=["commitment.fired"])]
    (only,) = fired
    assert only["enqueuedRunId"] == ledger[-1].enqueued_run_id is not None
    # The workflow enqueued the caught-up instant's run.
    run = await enqueued_run_result(client, str(only["enqueuedRunId"]))
    assert run.memory_ref == ref

    # Replaying the run that caught up re-runs no activity and writes nothing.
    handle = client.get_workflow_handle(commitment_workflow_id(cid))
    description = await handle.describe()
    first_run = description.raw_description.workflow_execution_info.first_run_id
    assert first_run and first_run != description.run_id
    history = await client.get_workflow_handle(
        commitment_workflow_id(cid), run_id=first_run
    ).fetch_history()
    before, events = await row_counts(engine), await store.events(ref)
    replayer = Replayer(workflows=ALL_WORKFLOWS, data_converter=data_converter)
    reloaded = WorkflowHistory.from_json(history.workflow_id, history.to_json())
    replayed = await replayer.replay_workflow(reloaded, raise_on_replay_failure=False)
    assert replayed.replay_failure is None
    assert await row_counts(engine) == before
    assert await store.events(ref) == events
    await handle.cancel()
