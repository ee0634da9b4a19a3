"""A commitment delivered many times fires once: duplicate inference runs over the same
memory (one id and many ids at once), duplicate memory_changed signals to its predicate
watch and to rogue watches of the same commitment, and rogue workflows of a time
commitment whose timers span days (time-skipping test server). One commitment.fired
per occurrence, one ledger claim, one agent run."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.testing import WorkflowEnvironment

from memory.storage import tables
from memory.store import PostgresMemoryStore
from schemas.commitments import (
    CommitmentInferenceInput,
    CommitmentInferenceResult,
    CommitmentInput,
    InferCommitmentsRequest,
    PredicateWatchInput,
    PredicateWatchStatus,
    commitment_workflow_id,
)
from schemas.events import EventType
from schemas.memory_ref import parse_memory_ref
from schemas.workflow_io import DistillMemoryRequest
from tests.support.duplicate_delivery import (
    assert_event_log_gap_free,
    count_rows,
    until,
    workflows_of,
)
from tests.support.factories import note, unique_ref
from tests.support.waiting import let_time_pass
from tests.support.workflow_runs import enqueued_run_result
from workflows.commitment import CommitmentWorkflow
from workflows.commitment_inference import CommitmentInferenceWorkflow, inference_workflow_id
from workflows.predicate_watch import PredicateWatchWorkflow

TIMES = 10


async def _infer_many(
    client: Client, task_queue: str, ref: str, *, same_id: int, other_ids: int, **extra: Any
) -> list[CommitmentInferenceResult]:
    """``same_id`` starts under the production id and ``other_ids`` under ids of their
    own, all at once; the results of those that started."""
    request = CommitmentInferenceInput(memory_ref=parse_memory_ref(ref), **extra)
    ids = [inference_workflow_id(ref)] * same_id + [
        f"infer-{uuid.uuid4().hex[:8]}" for _ in range(other_ids)
    ]
    started = await asyncio.gather(
        *(
            client.start_workflow(
                CommitmentInferenceWorkflow.run, request, id=workflow_id, task_queue=task_queue
            )
            for workflow_id in ids
        ),
        return_exceptions=True,
    )
    refused = [s for s in started if isinstance(s, BaseException)]
    assert all(isinstance(e, WorkflowAlreadyStartedError) for e in refused), refused
    # Under the one production id only one start can win (unless it already closed).
    assert len(refused) <= max(same_id - 1, 0)
    handles = [s for s in started if not isinstance(s, BaseException)]
    return list(await asyncio.gather(*(h.result() for h in handles)))


async def _fired(store: PostgresMemoryStore, ref: str) -> list[dict[str, Any]]:
    return [e.payload for e in await store.events(ref, types=[EventType.COMMITMENT_FIRED.value])]


async def _status(handle: Any) -> PredicateWatchStatus:
    status: PredicateWatchStatus | None = None

    async def evaluated() -> bool:
        nonlocal status
        status = await handle.query(PredicateWatchWorkflow.status)
        return status is not None

    await until(evaluated)
    assert status is not None
    return status


async def test_duplicate_signals_and_inferences_fire_a_predicate_commitment_once(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    client = temporal_env.client
    ref = unique_ref()
    intention = await store.put(ref, note("Follow up when the contract is signed"))
    results = await _infer_many(client, worker_task_queue, ref, same_id=5, other_ids=5)
    assert sum(r.inference.created for r in results) == 1
    assert sum(r.armed.started for r in results) == 1
    (commitment,) = await store.commitments.list(ref)
    watch_input = PredicateWatchInput(
        commitment_id=commitment.commitment_id, memory_ref=parse_memory_ref(ref)
    )
    watch = client.get_workflow_handle_for(
        PredicateWatchWorkflow.run, commitment_workflow_id(commitment.commitment_id)
    )
    # Rogue watches of the same commitment under other ids (a host that started one by
    # hand, a reset): they race the real one for every transition.
    rogues = [
        await client.start_workflow(
            PredicateWatchWorkflow.run,
            watch_input,
            id=f"rogue-watch-{uuid.uuid4().hex[:8]}",
            task_queue=worker_task_queue,
        )
        for _ in range(2)
    ]
    watches = [watch, *rogues]
    assert not any([(await _status(w)).holds for w in watches])  # false so far

    await store.put(ref, note("The contract was signed today", "contract-signed"))
    await asyncio.gather(
        *(w.signal(PredicateWatchWorkflow.memory_changed) for w in watches for _ in range(TIMES))
    )

    async def all_hold() -> bool:
        return all([(await _status(w)).holds for w in watches])

    await until(all_hold)
    # More duplicate deliveries once it holds: signals and inference runs over the same
    # memory (by watermark, and by explicit id, which ignores the watermark).
    await asyncio.gather(
        *(w.signal(PredicateWatchWorkflow.memory_changed) for w in watches for _ in range(TIMES))
    )
    again = await _infer_many(client, worker_task_queue, ref, same_id=3, other_ids=3)
    explicit = await _infer_many(
        client, worker_task_queue, ref, same_id=0, other_ids=3, memory_ids=(intention.id,)
    )
    assert sum(r.inference.created + r.armed.started for r in again + explicit) == 0
    assert all(r.inference.already_known == 1 for r in explicit)

    fired = await _fired(store, ref)
    assert len(fired) == 1, fired
    assert fired[0]["commitmentId"] == commitment.commitment_id
    assert sum([(await _status(w)).fires for w in watches]) == 1
    run_id = str(fired[0]["enqueuedRunId"])
    await enqueued_run_result(client, run_id)
    for w in watches:
        await w.terminate("test over")
    runs = await workflows_of(client, f"WorkflowType = 'AgentRunWorkflow' AND MemoryRef = '{ref}'")
    assert [r.id for r in runs] == [run_id]
    assert await count_rows(engine, tables.occurrences, commitment_id=commitment.commitment_id) == 1
    assert len(await store.commitments.list(ref)) == 1
    await assert_event_log_gap_free(engine, store, ref)


# ---------------------------------------------------------------------- days of timers


async def test_rogue_runs_of_a_time_commitment_fire_it_once_hours_later(
    time_skipping_env: WorkflowEnvironment,
    skipping_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    """A reminder five hours out (within the arming horizon, so inference starts its
    workflow), armed once by repeated inference, with a duplicate start of its workflow
    id refused and three rogue workflows of the same commitment racing it: five hours
    later, one claim and one commitment.fired."""
    client = time_skipping_env.client
    ref = unique_ref()
    await store.put(ref, note("Remind me in 5 hours to renew the domain"))
    # No enqueued runs: the time-skipping server stops skipping once a workflow has
    # started an abandoned child (the enqueued runs are covered on the dev server).
    # Nothing here awaits a result before the rogues run: while a test awaits one, this
    # server's clock skips ahead to the next timer, and the reminder would fire first.
    request = CommitmentInferenceInput(memory_ref=parse_memory_ref(ref), enqueue_runs=False)
    inferences = [
        await client.start_workflow(
            CommitmentInferenceWorkflow.run, request, id=workflow_id, task_queue=skipping_queue
        )
        for workflow_id in (inference_workflow_id(ref), f"infer-{uuid.uuid4().hex[:8]}")
    ]

    async def inferred() -> bool:
        described = [await h.describe() for h in inferences]
        return all(d.status == WorkflowExecutionStatus.COMPLETED for d in described)

    await until(inferred)
    (commitment,) = await store.commitments.list(ref)
    assert commitment.next_at is not None and commitment.state == "armed"
    duplicate = CommitmentInput(
        commitment_id=commitment.commitment_id,
        memory_ref=parse_memory_ref(ref),
        due_at=commitment.next_at,
    )
    with pytest.raises(WorkflowAlreadyStartedError):
        await client.start_workflow(
            CommitmentWorkflow.run,
            duplicate,
            id=commitment_workflow_id(commitment.commitment_id),
            task_queue=skipping_queue,
        )
    rogues = await asyncio.gather(
        *(
            client.start_workflow(
                CommitmentWorkflow.run,
                duplicate,
                id=f"rogue-{uuid.uuid4().hex[:8]}",
                task_queue=skipping_queue,
            )
            for _ in range(3)
        )
    )
    await let_time_pass(time_skipping_env, skipping_queue, timedelta(hours=5, minutes=1))
    real = client.get_workflow_handle_for(
        CommitmentWorkflow.run, commitment_workflow_id(commitment.commitment_id)
    )
    outcomes = [(await h.result()).last.status for h in [real, *rogues]]
    assert sorted(outcomes) == ["already-claimed"] * 3 + ["fired"], outcomes
    results = [await h.result() for h in inferences]
    # Racing inferences: one creates the commitment, and either one may arm it (the arm
    # step takes whatever is unarmed); together they create and start it once.
    assert sum(r.inference.created for r in results) == 1
    assert sum(r.armed.started for r in results) == 1
    assert await count_rows(engine, tables.occurrences, commitment_id=commitment.commitment_id) == 1
    fired = await _fired(store, ref)
    assert [f["commitmentId"] for f in fired] == [commitment.commitment_id]
    (after,) = await store.commitments.list(ref)
    assert (after.state, after.fire_count) == ("fired", 1)
    await assert_event_log_gap_free(engine, store, ref)


async def test_a_distillate_does_not_redeliver_the_intentions_it_restates(
    store: PostgresMemoryStore,
) -> None:
    """A dream's distilled entry repeats its sources' text. Inference after the dream
    (as every dream runs it) must not read the promise a second time from the copy: that
    made a second commitment due at the same instant, fired and run twice."""
    ref = unique_ref()
    intention = await store.put(ref, note("Remind me in 5 days to renew the domain"))
    await store.put(ref, note("Lunch with the team went well"))
    memory_ref = parse_memory_ref(ref)
    distilled = await store.distill(
        DistillMemoryRequest(memory_ref=memory_ref, token_budget=8000, run_key="dup/1")
    )
    assert distilled.status == "distilled" and distilled.source_count == 2
    for _ in range(2):
        await store.commitments.infer(InferCommitmentsRequest(memory_ref=memory_ref))
    await store.commitments.infer(
        InferCommitmentsRequest(
            memory_ref=memory_ref, memory_ids=(intention.id, str(distilled.output_id))
        )
    )
    assert [c.memory_id for c in await store.commitments.list(ref)] == [intention.id]
