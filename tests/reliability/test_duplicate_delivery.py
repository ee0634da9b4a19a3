"""Duplicate delivery of dreams, distillations, consolidations and commitment inference
on a real Temporal dev server with the real store and the production worker: one
schedule triggered many times at once, the production workflow ids started
concurrently, the same work started under many ids, and manual starts beside a
schedule. Whatever the number of starts, each effect lands once: one archive per
distinct corpus state, one memory.compacted per archive, each merge once, one
commitment.fired per occurrence with one agent run, and a gap-free event log.

(Retries after the commit: tests/reliability/test_duplicate_delivery_retries.py; duplicate
commitment triggers: tests/reliability/test_duplicate_delivery_commitments.py.)"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import (
    Client,
    ScheduleActionExecution,
    ScheduleActionExecutionStartWorkflow,
    ScheduleOverlapPolicy,
    WorkflowExecutionStatus,
)
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.testing import WorkflowEnvironment

from memory.storage import tables
from memory.store import PostgresMemoryStore
from memoryctl.dream_schedules import create_dream_schedule
from schemas.commitments import CommitmentInferenceInput
from schemas.consolidation import ConsolidationInput
from schemas.events import EventType
from schemas.memory_entry import Tier
from schemas.workflow_io import DistillationInput, DistillationResult, DreamInput, DreamResult
from tests.support.duplicate_delivery import (
    all_closed,
    assert_consolidated_once,
    assert_distilled_once,
    assert_event_log_gap_free,
    count_rows,
    ids_of,
    of_type,
    until,
    workflows_of,
)
from tests.support.factories import note, unique_ref
from tests.support.workflow_runs import enqueued_run_result
from workflows.commitment_inference import CommitmentInferenceWorkflow, inference_workflow_id
from workflows.consolidation import ConsolidationWorkflow, consolidation_workflow_id
from workflows.distillation import DistillationWorkflow
from workflows.dream import DreamWorkflow, distillation_workflow_id, dream_workflow_id
from workflows.predicate_watch import PredicateWatchWorkflow

TIMES = 10
BUDGET = 8000
# Two restatements of facts already there: two merges, whatever the number of passes.
FACTS = (
    "The customer prefers invoices in EUR",
    "Note: the customer prefers invoices in EUR.",
    "Support hours are 9 to 5 on weekdays",
    "FYI support hours are 9 to 5 on weekdays",
    "The trial lasts 14 days",
)


async def _seed(store: PostgresMemoryStore, ref: str, round_: int = 0, notes: int = 12) -> int:
    """Episodic notes for distillation and long-term facts for consolidation."""
    await store.put_many(
        ref,
        [
            note(f"Call {round_}.{i}: the client asked about shipping to warehouse {i}.")
            for i in range(notes)
        ],
    )
    return notes


async def _seed_facts(store: PostgresMemoryStore, ref: str, facts: tuple[str, ...]) -> None:
    await store.put_many(ref, [note(text, tier=Tier.SEMANTIC) for text in facts])


async def _seed_predicate_commitment(store: PostgresMemoryStore, ref: str) -> None:
    """A standing intention whose condition already holds: it fires once, at the first
    evaluation of its watch, and enqueues one agent run."""
    await store.put(ref, note("Follow up when the contract is signed"))
    await store.put(ref, note("The contract was signed this morning", "contract-signed"))


async def _results(client: Client, workflow_type: str, ref: str, result_type: type) -> list[Any]:
    """Results of every completed run of ``workflow_type`` for ``ref``."""
    listed = await workflows_of(client, f"WorkflowType = '{workflow_type}' AND MemoryRef = '{ref}'")
    results = []
    for listed_run in listed:
        handle = client.get_workflow_handle(
            listed_run.id, run_id=listed_run.run_id, result_type=result_type
        )
        if listed_run.status == WorkflowExecutionStatus.COMPLETED:
            results.append(await handle.result())
    return results


async def _assert_commitments_fired_once(
    client: Client, store: PostgresMemoryStore, engine: AsyncEngine, ref: str
) -> None:
    """Once every watch has evaluated: one commitment.fired, one commitment, one watch,
    one ledger claim, one agent run (and it completed)."""
    query = f"WorkflowType = 'PredicateWatchWorkflow' AND MemoryRef = '{ref}'"

    async def evaluated() -> bool:
        fired = await store.events(ref, types=[EventType.COMMITMENT_FIRED.value])
        watches = await workflows_of(client, query)
        statuses = [
            await client.get_workflow_handle_for(PredicateWatchWorkflow.run, w.id).query(
                PredicateWatchWorkflow.status
            )
            for w in watches
        ]
        return bool(fired) and all(s is not None for s in statuses)

    await until(evaluated)
    fired = await store.events(ref, types=[EventType.COMMITMENT_FIRED.value])
    assert len(fired) == 1, [e.payload for e in fired]
    (commitment,) = await store.commitments.list(ref)
    watches = await workflows_of(client, query)
    assert len(watches) == 1
    assert fired[0].payload["commitmentId"] == commitment.commitment_id
    assert await count_rows(engine, tables.occurrences, commitment_id=commitment.commitment_id) == 1
    run_id = str(fired[0].payload["enqueuedRunId"])
    await enqueued_run_result(client, run_id)
    runs = await workflows_of(client, f"WorkflowType = 'AgentRunWorkflow' AND MemoryRef = '{ref}'")
    assert [r.id for r in runs] == [run_id]
    for watch in watches:
        await client.get_workflow_handle(watch.id).terminate("test over")


async def _schedule_quiet(client: Client, schedule_id: str, actions: int) -> list[DreamResult]:
    """Wait until the scheduler has started at least ``actions`` dreams in all, every one
    it started has closed, and it starts no more; return the results of its recent
    dreams. (Triggers that arrive together are not one action each: runs started in one
    second would share a workflow id, and the server collapses them.)"""
    handle = client.get_schedule_handle(schedule_id)
    seen: list[int] = []

    async def quiet() -> bool:
        info = (await handle.describe()).info
        seen.append(info.num_actions)
        if info.num_actions < actions or info.running_actions or seen[-2:-1] != seen[-1:]:
            return False
        for action in info.recent_actions:
            await _dream(client, action.action)
        return True

    await until(quiet, seconds=30, every=0.3)
    info = (await handle.describe()).info
    return [await _dream(client, action.action) for action in info.recent_actions]


async def _dream(client: Client, started: ScheduleActionExecution) -> DreamResult:
    assert isinstance(started, ScheduleActionExecutionStartWorkflow), started
    return await client.get_workflow_handle(
        started.workflow_id, run_id=started.first_execution_run_id, result_type=DreamResult
    ).result()


async def _seed_everything(store: PostgresMemoryStore, ref: str) -> int:
    """Sources to distil, facts to merge and a predicate promise; the number of sources."""
    sources = await _seed(store, ref)
    await _seed_facts(store, ref, FACTS)
    await _seed_predicate_commitment(store, ref)
    return sources


async def _dream_schedule(client: Client, ref: str, task_queue: str, prefix: str) -> str:
    return await create_dream_schedule(
        client,
        ref,
        task_queue=task_queue,
        token_budget=BUDGET,
        schedule_id=f"{prefix}-{uuid.uuid4().hex[:8]}",
    )


async def test_one_schedule_triggered_ten_times_at_once_applies_each_state_once(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    client = temporal_env.client
    ref = unique_ref()
    sources = await _seed_everything(store, ref)
    schedule_id = await _dream_schedule(client, ref, worker_task_queue, "dup-dream")
    handle = client.get_schedule_handle(schedule_id)
    try:
        # Round 1: the schedule's own overlap policy (Skip), ten triggers at once.
        await asyncio.gather(*(handle.trigger() for _ in range(TIMES)))
        first = await _schedule_quiet(client, schedule_id, 1)
        await all_closed(client, ref)
        await assert_distilled_once(engine, store, ref, archives=1, sources=sources + 2)
        await assert_consolidated_once(engine, store, ref, merged=2)
        await _assert_commitments_fired_once(client, store, engine, ref)

        # Round 2: a new corpus state, ten triggers that override the policy (AllowAll),
        # so the dreams really run side by side.
        more = await _seed(store, ref, round_=1, notes=5)
        await _seed_facts(store, ref, ("The customer prefers invoices in EUR!",))
        await asyncio.gather(
            *(handle.trigger(overlap=ScheduleOverlapPolicy.ALLOW_ALL) for _ in range(TIMES))
        )
        dreams = await _schedule_quiet(client, schedule_id, len(first) + 1)
        await all_closed(client, ref)
    finally:
        await handle.delete()
    await assert_distilled_once(engine, store, ref, archives=2, sources=sources + 2 + more)
    await assert_consolidated_once(engine, store, ref, merged=3)
    events = await assert_event_log_gap_free(engine, store, ref)
    assert len(of_type(events, EventType.COMMITMENT_FIRED)) == 1
    # Each corpus state was distilled by one dream; any other dream found it taken.
    statuses = [d.distillation.status if d.distillation else d.status for d in dreams]
    assert statuses.count("distilled") == 2, statuses
    distilled = [
        r
        for r in await _results(client, "DistillationWorkflow", ref, DistillationResult)
        if r.status == "distilled"
    ]
    assert len(distilled) == 2


def _handles(outcomes: list[Any]) -> list[Any]:
    """The started ones among _start_all's outcomes."""
    return [o for o in outcomes if not isinstance(o, BaseException)]


async def _start_all(client: Client, starts: list[Any]) -> list[Any]:
    """Start every (workflow run fn, input, id) at once; the handles or the errors."""
    return await asyncio.gather(
        *(
            client.start_workflow(fn, arg, id=workflow_id, task_queue=queue)
            for fn, arg, workflow_id, queue in starts
        ),
        return_exceptions=True,
    )


async def test_the_production_ids_started_concurrently_start_and_apply_once(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    client = temporal_env.client
    ref = unique_ref()
    sources = await _seed_everything(store, ref)
    kinds = [
        (
            DreamWorkflow.run,
            DreamInput(memory_ref=ref, token_budget=BUDGET),
            dream_workflow_id(ref),
        ),
        (
            DistillationWorkflow.run,
            DistillationInput(memory_ref=ref, token_budget=BUDGET),
            distillation_workflow_id(ref),
        ),
        (
            ConsolidationWorkflow.run,
            ConsolidationInput(memory_ref=ref),
            consolidation_workflow_id(ref),
        ),
        (
            CommitmentInferenceWorkflow.run,
            CommitmentInferenceInput(memory_ref=ref),
            inference_workflow_id(ref),
        ),
    ]
    starts = [(fn, arg, wid, worker_task_queue) for fn, arg, wid in kinds for _ in range(TIMES)]
    outcomes = await _start_all(client, starts)
    for index in range(len(kinds)):
        batch = outcomes[index * TIMES : (index + 1) * TIMES]
        errors = [o for o in batch if isinstance(o, BaseException)]
        assert len(errors) == TIMES - 1, batch
        assert all(isinstance(e, WorkflowAlreadyStartedError) for e in errors), errors
    await all_closed(client, ref, started=_handles(outcomes))
    # The dream found the distillation id taken (or the direct start did): one archive.
    await assert_distilled_once(engine, store, ref, archives=1, sources=sources + 2)
    await assert_consolidated_once(engine, store, ref, merged=2)
    await _assert_commitments_fired_once(client, store, engine, ref)
    await assert_event_log_gap_free(engine, store, ref)


async def test_the_same_work_under_many_ids_applies_once(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    """Idempotency is keyed on what a step consumes, not on the run: ten ids for the
    same ref and input, per workflow kind, all at once."""
    client = temporal_env.client
    ref = unique_ref()
    sources = await _seed_everything(store, ref)
    kinds = [
        (DistillationWorkflow.run, DistillationInput(memory_ref=ref, token_budget=BUDGET)),
        (ConsolidationWorkflow.run, ConsolidationInput(memory_ref=ref)),
        (CommitmentInferenceWorkflow.run, CommitmentInferenceInput(memory_ref=ref)),
        (DreamWorkflow.run, DreamInput(memory_ref=ref, token_budget=BUDGET)),
    ]
    starts = [
        (fn, arg, f"dup-{uuid.uuid4().hex[:10]}", worker_task_queue)
        for _ in range(TIMES)
        for fn, arg in kinds
    ]
    outcomes = await _start_all(client, starts)
    assert not [o for o in outcomes if isinstance(o, BaseException)]
    results = await asyncio.gather(*(o.result() for o in outcomes))
    distillations = [r for r in results[0 :: len(kinds)]]
    assert [r.status for r in distillations].count("distilled") <= 1
    await all_closed(client, ref)
    await assert_distilled_once(engine, store, ref, archives=1, sources=sources + 2)
    consolidated = await assert_consolidated_once(engine, store, ref, merged=2)
    # Every pass but the one that merged saw the merged corpus: exact no-ops.
    merges = sorted(len(ids_of(e.payload.get("mergedIds"))) for e in consolidated)
    assert merges[-1] == 2 and set(merges[:-1]) <= {0}
    inferences = [r for r in results[2 :: len(kinds)]]
    assert sum(r.inference.created for r in inferences) == 1
    await _assert_commitments_fired_once(client, store, engine, ref)
    await assert_event_log_gap_free(engine, store, ref)


async def test_manual_starts_beside_a_triggered_schedule_apply_once(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    client = temporal_env.client
    ref = unique_ref()
    sources = await _seed_everything(store, ref)
    schedule_id = await _dream_schedule(client, ref, worker_task_queue, "dup-beside")
    schedule = client.get_schedule_handle(schedule_id)
    manual = [
        (
            DreamWorkflow.run,
            DreamInput(memory_ref=ref, token_budget=BUDGET),
            dream_workflow_id(ref),
        ),
        (
            DreamWorkflow.run,
            DreamInput(memory_ref=ref, token_budget=BUDGET),
            f"dream-manual-{uuid.uuid4().hex[:8]}",
        ),
        (
            DistillationWorkflow.run,
            DistillationInput(memory_ref=ref, token_budget=BUDGET),
            f"distill-manual-{uuid.uuid4().hex[:8]}",
        ),
        (
            ConsolidationWorkflow.run,
            ConsolidationInput(memory_ref=ref),
            consolidation_workflow_id(ref),
        ),
        (
            CommitmentInferenceWorkflow.run,
            CommitmentInferenceInput(memory_ref=ref),
            f"infer-manual-{uuid.uuid4().hex[:8]}",
        ),
    ]
    try:
        _, *outcomes = await asyncio.gather(
            schedule.trigger(),
            _start_all(client, [(fn, arg, wid, worker_task_queue) for fn, arg, wid in manual]),
        )
        await _schedule_quiet(client, schedule_id, 1)
        await all_closed(client, ref, started=_handles(outcomes[0]))
    finally:
        await schedule.delete()
    assert not [o for o in outcomes[0] if isinstance(o, BaseException)]
    await assert_distilled_once(engine, store, ref, archives=1, sources=sources + 2)
    await assert_consolidated_once(engine, store, ref, merged=2)
    await _assert_commitments_fired_once(client, store, engine, ref)
    await assert_event_log_gap_free(engine, store, ref)
