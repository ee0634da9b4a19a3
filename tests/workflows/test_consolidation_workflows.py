"""Consolidation on Temporal: the dream's child pass, exactly once through a crash after
the commit, replay outside the envelope, and the mid-run refusal."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio import activity
from temporalio.client import WorkflowFailureError, WorkflowHistory
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer, Worker

from activities.boundary import content_free
from activities.contracts import CONSOLIDATE_MEMORY
from activities.memory_activities import MemoryActivities
from memory.redaction.vault import StaticSecretVault
from memory.storage import tables
from memory.store import PostgresMemoryStore
from runtime.converter import data_converter
from schemas.consolidation import (
    ConsolidateMemoryRequest,
    ConsolidationInput,
    ConsolidationResult,
)
from schemas.events import EventType
from schemas.memory_entry import Tier
from schemas.workflow_io import AgentRunInput
from tests.support.factories import note, unique_ref
from tests.support.mid_run_workflows import SessionThatConsolidates
from tests.support.scan import row_counts
from tests.support.workflow_runs import application_error, run_dream
from workflows.agent_run import AgentRunWorkflow
from workflows.consolidation import ConsolidationWorkflow
from workflows.registry import ALL_WORKFLOWS

pytestmark = pytest.mark.asyncio


def facts(*texts: str) -> list[Any]:
    return [note(text, tier=Tier.SEMANTIC) for text in texts]


SPEC_CORPUS = (
    "The customer prefers invoices in EUR",
    "Note: the customer prefers invoices in EUR.",
    "The trial lasts 14 days",
    "Support hours are 9 to 5 on weekdays",
)


async def _consolidate(env: WorkflowEnvironment, task_queue: str, ref: str) -> ConsolidationResult:
    return await env.client.execute_workflow(
        ConsolidationWorkflow.run,
        ConsolidationInput(memory_ref=ref),
        id=f"consolidate-{uuid.uuid4().hex[:8]}",
        task_queue=task_queue,
    )


async def test_a_dream_consolidates_after_distilling(
    temporal_env: WorkflowEnvironment, worker_task_queue: str, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    await store.put_many(ref, facts(*SPEC_CORPUS))
    await store.put_many(ref, [note(f"call {i} with the customer went well") for i in range(5)])
    dream = await run_dream(temporal_env, worker_task_queue, ref, token_budget=4000)
    assert dream.distillation is not None and dream.distillation.source_count == 5
    assert dream.consolidation is not None
    # The distilled entry is long-term memory too: 4 facts + 1 distillate in, one merge.
    assert (dream.consolidation.input_count, dream.consolidation.output_count) == (5, 4)
    assert dream.consolidation.trigger == "scheduled"
    again = await run_dream(temporal_env, worker_task_queue, ref, token_budget=4000)
    assert again.consolidation is not None
    assert again.consolidation.input_count == again.consolidation.output_count == 4
    events = await store.events(ref, types=[EventType.MEMORY_CONSOLIDATED.value])
    assert [(e.payload["inputCount"], e.payload["outputCount"]) for e in events] == [
        (5, 4),
        (4, 4),
    ]


async def test_the_spec_example_through_the_temporal_client(
    temporal_env: WorkflowEnvironment, worker_task_queue: str, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    await store.put_many(ref, facts(*SPEC_CORPUS))
    first = await _consolidate(temporal_env, worker_task_queue, ref)
    second = await _consolidate(temporal_env, worker_task_queue, ref)
    assert (first.input_count, first.output_count) == (4, 3)
    assert (second.input_count, second.output_count) == (3, 3)
    assert first.merged_ids is not None and len(first.merged_ids) == 1


async def test_a_crash_after_the_commit_does_not_apply_the_pass_twice(
    temporal_env: WorkflowEnvironment, store: PostgresMemoryStore, engine: AsyncEngine
) -> None:
    """The first attempt commits, then its worker dies before reporting completion (the
    activity fails after the commit); the retry must find the recorded pass."""
    ref = unique_ref()
    await store.put_many(ref, facts(*SPEC_CORPUS))
    real = MemoryActivities(store, StaticSecretVault({}))
    attempts: list[int] = []

    @activity.defn(name=CONSOLIDATE_MEMORY.name)
    @content_free
    async def crashes_after_commit(request: ConsolidateMemoryRequest) -> ConsolidationResult:
        attempts.append(activity.info().attempt)
        result = await real.consolidate_memory(request)
        if activity.info().attempt == 1:
            raise ConnectionResetError("worker lost after the commit")
        return result

    others: list[Callable[..., Any]] = [a for a in real.all() if a != real.consolidate_memory]
    task_queue = f"crash-{uuid.uuid4().hex[:8]}"
    async with Worker(
        temporal_env.client,
        task_queue=task_queue,
        workflows=ALL_WORKFLOWS,
        activities=[*others, crashes_after_commit],
    ):
        result = await _consolidate(temporal_env, task_queue, ref)
    assert attempts == [1, 2]
    assert (result.input_count, result.output_count) == (4, 3)
    events = await store.events(ref, types=[EventType.MEMORY_CONSOLIDATED.value])
    assert len(events) == 1
    async with engine.connect() as connection:
        passes = await connection.execute(
            select(func.count()).select_from(tables.consolidation_passes)
        )
        assert passes.scalar_one() == 1
    assert len(await store.superseded(ref)) == 1


async def test_replay_around_a_pass_reads_the_log_and_writes_nothing(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    """A session recorded before a pass replays to the same result after it; replaying
    the pass itself re-runs nothing: no row, no agent.memory.consolidated regenerated."""
    ref = unique_ref()
    await store.put_many(ref, facts(*SPEC_CORPUS))
    session = await temporal_env.client.start_workflow(
        AgentRunWorkflow.run,
        AgentRunInput(memory_ref=ref),
        id=f"session-{uuid.uuid4().hex[:8]}",
        task_queue=worker_task_queue,
    )
    digest = await session.result()
    assert digest.snapshot_entry_count == 4
    consolidation = await temporal_env.client.start_workflow(
        ConsolidationWorkflow.run,
        ConsolidationInput(memory_ref=ref),
        id=f"consolidate-{uuid.uuid4().hex[:8]}",
        task_queue=worker_task_queue,
    )
    await consolidation.result()
    histories = [await session.fetch_history(), await consolidation.fetch_history()]
    # Live memory moves on again after the pass.
    await store.put_many(ref, facts("THE TRIAL LASTS 14 DAYS"))
    await _consolidate(temporal_env, worker_task_queue, ref)

    before = await row_counts(engine)
    events_before = await store.events(ref)
    replayer = Replayer(workflows=ALL_WORKFLOWS, data_converter=data_converter)
    for history in histories:
        reloaded = WorkflowHistory.from_json(history.workflow_id, history.to_json())
        replayed = await replayer.replay_workflow(reloaded, raise_on_replay_failure=False)
        assert replayed.replay_failure is None
    assert await row_counts(engine) == before
    assert await store.events(ref) == events_before


async def test_a_run_may_not_consolidate_the_memory_it_is_reading(
    temporal_env: WorkflowEnvironment, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    await store.put_many(ref, facts(*SPEC_CORPUS))
    task_queue = f"midrun-{uuid.uuid4().hex[:8]}"
    activities = MemoryActivities(store, StaticSecretVault({}))
    async with Worker(
        temporal_env.client,
        task_queue=task_queue,
        workflows=[*ALL_WORKFLOWS, SessionThatConsolidates],
        activities=activities.all(),
    ):
        with pytest.raises(WorkflowFailureError) as failure:
            await temporal_env.client.execute_workflow(
                SessionThatConsolidates.run,
                AgentRunInput(memory_ref=ref),
                id=f"midrun-{uuid.uuid4().hex[:8]}",
                task_queue=task_queue,
            )
    error = application_error(failure.value)
    assert error.type == "consolidation_refused"
    assert "mid-run" in str(error)
    assert len(await store.list(ref)) == 4
    assert await store.events(ref, types=[EventType.MEMORY_CONSOLIDATED.value]) == []
