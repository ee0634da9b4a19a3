"""Activities retried after their commit, on the production worker (worker.build_worker)
behind a test-only interceptor: the first attempt of each activity runs and commits,
then its completion is lost (a retryable failure, as when the worker dies right after
the commit) and Temporal runs it again. Every retry must find what the first attempt
recorded: one archive, each merge once, one commitment.fired per occurrence, one agent
run per firing, a gap-free event log, and every workflow completes."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.testing import WorkflowEnvironment

from activities.contracts import (
    ARM_COMMITMENTS,
    CONSOLIDATE_MEMORY,
    CREATE_SNAPSHOT,
    DISTILL_MEMORY,
    EVALUATE_PREDICATE,
    FIRE_COMMITMENT,
    INFER_COMMITMENTS,
)
from memory.storage import tables
from memory.store import PostgresMemoryStore
from schemas.commitments import commitment_workflow_id
from schemas.consolidation import ConsolidationInput
from schemas.events import EventType
from schemas.memory_entry import Tier
from schemas.workflow_io import DistillationInput, DreamInput
from tests.support.duplicate_delivery import (
    LoseCompletionAfterCommit,
    assert_consolidated_once,
    assert_distilled_once,
    assert_event_log_gap_free,
    count_rows,
    of_type,
    until,
    worker_losing_completions,
    workflows_of,
)
from tests.support.factories import note, unique_ref
from tests.support.workflow_runs import enqueued_run_result
from workflows.commitment import CommitmentWorkflow
from workflows.consolidation import ConsolidationWorkflow
from workflows.distillation import DistillationWorkflow
from workflows.dream import DreamWorkflow
from workflows.predicate_watch import PredicateWatchWorkflow

FACTS = (
    "The customer prefers invoices in EUR",
    "Note: the customer prefers invoices in EUR.",
    "Support hours are 9 to 5 on weekdays",
    "FYI support hours are 9 to 5 on weekdays",
    "The trial lasts 14 days",
)
# Every activity that commits something a duplicate could repeat. (Each lost completion
# costs the dev server's one-second retry tick, and a dream's steps run in sequence:
# garbage collection and the index load, which add nothing here, keep their first
# completion.)
COMMITTING = {
    DISTILL_MEMORY.name,
    CONSOLIDATE_MEMORY.name,
    INFER_COMMITMENTS.name,
    ARM_COMMITMENTS.name,
    FIRE_COMMITMENT.name,
    EVALUATE_PREDICATE.name,
    CREATE_SNAPSHOT.name,
}


async def test_a_dream_whose_committing_activities_lose_their_completion_applies_once(
    temporal_env: WorkflowEnvironment, store: PostgresMemoryStore, engine: AsyncEngine
) -> None:
    """Distill commit, consolidation apply, inference, arming, a time firing and a
    predicate firing, and the session snapshots of the agent runs they enqueue: each
    runs twice, each applies once."""
    client = temporal_env.client
    ref = unique_ref()
    notes = [note(f"Visit {i}: the client asked about the delivery window {i}.") for i in range(8)]
    await store.put_many(ref, notes)
    await store.put_many(ref, [note(text, tier=Tier.SEMANTIC) for text in FACTS])
    # Condition already true: fires at the watch's first evaluation.
    await store.put(ref, note("Follow up when the contract is signed"))
    await store.put(ref, note("The contract was signed this morning", "contract-signed"))
    # Said five days ago: "in 5 days" is due now, so it fires as soon as it is armed.
    back = PostgresMemoryStore(engine, clock=lambda: datetime.now(UTC) - timedelta(days=5))
    await back.put(ref, note("Remind me in 5 days to renew the domain"))
    sources = len(notes) + 3

    lose = LoseCompletionAfterCommit(COMMITTING)
    async with worker_losing_completions(client, store, lose) as task_queue:
        dream = await client.execute_workflow(
            DreamWorkflow.run,
            DreamInput(memory_ref=ref, token_budget=8000),
            id=f"dream-{uuid.uuid4().hex[:8]}",
            task_queue=task_queue,
            execution_timeout=timedelta(seconds=60),
        )
        # The retried activities returned what their first attempts recorded.
        assert dream.status == "completed"
        assert dream.distillation is not None and dream.distillation.status == "distilled"
        assert dream.distillation.source_count == sources
        assert dream.consolidation is not None
        assert (dream.consolidation.input_count, dream.consolidation.merged_count) == (6, 2)

        commitments = await store.commitments.list(ref)
        assert sorted(c.condition for c in commitments) == ["predicate", "time"]

        async def both_fired() -> bool:
            fired = await store.events(ref, types=[EventType.COMMITMENT_FIRED.value])
            return len(fired) >= 2

        await until(both_fired)
        fired = await store.events(ref, types=[EventType.COMMITMENT_FIRED.value])
        run_ids = sorted(str(e.payload["enqueuedRunId"]) for e in fired)
        # Each agent run completes, its snapshot and index load retried too.
        digests = [await enqueued_run_result(client, run_id) for run_id in run_ids]
        assert [d.memory_ref for d in digests] == [ref, ref]
        by_condition = {c.condition: c for c in commitments}
        time_commitment = by_condition["time"].commitment_id
        timed = await asyncio.wait_for(
            client.get_workflow_handle_for(
                CommitmentWorkflow.run, commitment_workflow_id(time_commitment)
            ).result(),
            30,
        )
        assert timed.last.status == "already-claimed"  # the retry found the claim
        watch = client.get_workflow_handle_for(
            PredicateWatchWorkflow.run,
            commitment_workflow_id(by_condition["predicate"].commitment_id),
        )
        status = await watch.query(PredicateWatchWorkflow.status)
        assert status is not None and (status.holds, status.fires) == (True, 1)
        await watch.terminate("test over")

    # Every chosen activity really lost a completion and ran again.
    assert {kind for kind, _ in lose.lost} == COMMITTING
    assert all(lose.attempts(kind)[2] >= 1 for kind in COMMITTING)

    await assert_distilled_once(engine, store, ref, archives=1, sources=sources)
    await assert_consolidated_once(engine, store, ref, merged=2)
    events = await assert_event_log_gap_free(engine, store, ref)
    assert len(of_type(events, EventType.COMMITMENT_FIRED)) == 2
    for commitment in commitments:
        claims = await count_rows(
            engine, tables.occurrences, commitment_id=commitment.commitment_id
        )
        assert claims == 1
    # One agent run per firing, started once (its id derives from the occurrence).
    runs = await workflows_of(client, f"WorkflowType = 'AgentRunWorkflow' AND MemoryRef = '{ref}'")
    assert sorted(r.id for r in runs) == run_ids
    # One session snapshot per agent run, frozen once through its retry.
    assert await count_rows(engine, tables.snapshots, memory_ref=ref) == 2
    # Retried inferences and arms made no second commitment and started no second
    # workflow.
    assert len(await store.commitments.list(ref)) == 2
    watches = await workflows_of(
        client, f"WorkflowType = 'PredicateWatchWorkflow' AND MemoryRef = '{ref}'"
    )
    assert len(watches) == 1


async def test_direct_distillations_and_passes_retried_after_commit_apply_once(
    temporal_env: WorkflowEnvironment, store: PostgresMemoryStore, engine: AsyncEngine
) -> None:
    """Started on their own (not as a dream's children), several at once under other
    ids: the retried commit returns its run's recorded result, the others find the
    sources taken and the corpus merged."""
    client = temporal_env.client
    ref = unique_ref()
    notes = [note(f"Ticket {i}: the printer on floor {i} jams on A3 paper.") for i in range(6)]
    await store.put_many(ref, notes)
    await store.put_many(ref, [note(text, tier=Tier.SEMANTIC) for text in FACTS])
    lose = LoseCompletionAfterCommit({DISTILL_MEMORY.name, CONSOLIDATE_MEMORY.name})
    async with worker_losing_completions(client, store, lose) as task_queue:
        distilling = [
            client.execute_workflow(
                DistillationWorkflow.run,
                DistillationInput(memory_ref=ref, token_budget=8000),
                id=f"distill-{uuid.uuid4().hex[:8]}",
                task_queue=task_queue,
                execution_timeout=timedelta(seconds=60),
            )
            for _ in range(3)
        ]
        consolidating = [
            client.execute_workflow(
                ConsolidationWorkflow.run,
                ConsolidationInput(memory_ref=ref),
                id=f"consolidate-{uuid.uuid4().hex[:8]}",
                task_queue=task_queue,
                execution_timeout=timedelta(seconds=60),
            )
            for _ in range(3)
        ]
        distillations, passes = await asyncio.gather(
            asyncio.gather(*distilling), asyncio.gather(*consolidating)
        )
    statuses = sorted(d.status for d in distillations)
    assert statuses.count("distilled") == 1, statuses
    assert set(statuses) <= {"distilled", "already-consumed", "nothing-to-distill"}
    assert sorted(p.merged_count for p in passes) == [0, 0, 2]
    assert len(lose.lost) == 6
    await assert_distilled_once(engine, store, ref, archives=1, sources=len(notes))
    consolidated = await assert_consolidated_once(engine, store, ref, merged=2)
    assert len(consolidated) == 3  # one event per pass, not per attempt
    await assert_event_log_gap_free(engine, store, ref)
