"""Workflows on a real Temporal dev server with the real store."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import WorkflowFailureError
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment

from memory.storage import tables
from memory.store import PostgresMemoryStore
from runtime.search_attributes import MEMORY_REF, TENANT
from schemas.capabilities import MAX_TOKEN_BUDGET
from schemas.workflow_io import (
    AgentRunInput,
    DistillationInput,
    DreamInput,
)
from tests.support.factories import note, unique_ref
from workflows.agent_run import AgentRunWorkflow
from workflows.distillation import DistillationWorkflow
from workflows.dream import DreamWorkflow, distillation_workflow_id


async def _seed(store: PostgresMemoryStore, ref: str, n: int = 30) -> None:
    await store.put_many(
        ref,
        [
            note(f"Observation {i}: the client asked for invoices by email.", "invoices")
            for i in range(n)
        ],
    )


async def test_dream_distills_indexes_and_is_findable(
    temporal_env: WorkflowEnvironment, worker_task_queue: str, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    await _seed(store, ref)
    workflow_id = f"dream-{uuid.uuid4().hex[:8]}"
    handle = await temporal_env.client.start_workflow(
        DreamWorkflow.run,
        DreamInput(memory_ref=ref, token_budget=8000),
        id=workflow_id,
        task_queue=worker_task_queue,
    )
    result = await handle.result()
    assert result.status == "completed"
    distillation = result.distillation
    assert distillation is not None and distillation.status == "distilled"
    assert 0 < distillation.tokens_used <= 8000
    assert distillation.source_count == 30
    assert distillation.index is not None and distillation.index.version == 1
    compacted = await store.events(ref, types=["memory.compacted"])
    assert len(compacted) == 1
    assert compacted[0].payload["outputId"] == distillation.output_id
    description = await handle.describe()
    attributes = description.typed_search_attributes
    assert attributes.get(MEMORY_REF) == ref
    assert attributes.get(TENANT) == ref.split("/")[2]

    # The next session starts from the index the dream wrote.
    digest = await temporal_env.client.execute_workflow(
        AgentRunWorkflow.run,
        AgentRunInput(memory_ref=ref),
        id=f"session-{uuid.uuid4().hex[:8]}",
        task_queue=worker_task_queue,
    )
    assert digest.index.present and digest.index.version == 1
    assert digest.index.archive_count == 1
    assert digest.snapshot_entry_count == 31  # 30 sources + the distilled entry


async def test_budget_is_clamped_and_defaults_to_the_maximum(
    temporal_env: WorkflowEnvironment, worker_task_queue: str, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    await _seed(store, ref, n=3)
    result = await temporal_env.client.execute_workflow(
        DistillationWorkflow.run,
        DistillationInput(memory_ref=ref, token_budget=MAX_TOKEN_BUDGET * 10),
        id=f"distill-{uuid.uuid4().hex[:8]}",
        task_queue=worker_task_queue,
    )
    assert result.token_budget == MAX_TOKEN_BUDGET
    default = await temporal_env.client.execute_workflow(
        DistillationWorkflow.run,
        DistillationInput(memory_ref=ref),
        id=f"distill-{uuid.uuid4().hex[:8]}",
        task_queue=worker_task_queue,
    )
    assert default.token_budget == MAX_TOKEN_BUDGET
    assert default.status == "nothing-to-distill"


async def test_unmeetable_budget_fails_with_details_and_writes_nothing(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    ref = unique_ref()
    await store.put(ref, note("A long pinned commitment to the customer. " * 10, pinned=True))
    with pytest.raises(WorkflowFailureError) as info:
        await temporal_env.client.execute_workflow(
            DistillationWorkflow.run,
            DistillationInput(memory_ref=ref, token_budget=20),
            id=f"distill-{uuid.uuid4().hex[:8]}",
            task_queue=worker_task_queue,
        )
    cause: BaseException | None = info.value.cause
    while cause is not None and not isinstance(cause, ApplicationError):
        cause = cause.__cause__
    assert isinstance(cause, ApplicationError)
    assert cause.type == "token_budget_exceeded"
    assert cause.non_retryable
    details = cause.details[0]
    assert details["budget"] == 20 and details["minimumRequired"] > 20
    async with engine.connect() as connection:
        archives = (
            await connection.execute(select(func.count()).select_from(tables.archives))
        ).scalar_one()
    assert archives == 0
    assert await store.events(ref, types=["memory.compacted"]) == []


async def test_a_second_dream_for_the_same_ref_is_skipped_while_one_runs(
    temporal_env: WorkflowEnvironment, worker_task_queue: str, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    await _seed(store, ref, n=2)
    # Occupy the per-memoryRef distillation id with a run nobody works on.
    blocker = await temporal_env.client.start_workflow(
        DistillationWorkflow.run,
        DistillationInput(memory_ref=ref),
        id=distillation_workflow_id(ref),
        task_queue=f"nobody-{uuid.uuid4().hex[:6]}",
        id_conflict_policy=WorkflowIDConflictPolicy.FAIL,
    )
    try:
        result = await temporal_env.client.execute_workflow(
            DreamWorkflow.run,
            DreamInput(memory_ref=ref),
            id=f"dream-{uuid.uuid4().hex[:8]}",
            task_queue=worker_task_queue,
        )
        assert result.status == "skipped-overlap"
        assert await store.events(ref, types=["memory.compacted"]) == []
    finally:
        await blocker.terminate("test over")
    # Once it is gone, the next dream runs.
    result = await temporal_env.client.execute_workflow(
        DreamWorkflow.run,
        DreamInput(memory_ref=ref),
        id=f"dream-{uuid.uuid4().hex[:8]}",
        task_queue=worker_task_queue,
    )
    assert result.status == "completed"
