"""Issue 24: a first dream over a memoryRef with 5,000 commitment-like entries completes.

Its commitment inference records all 5,000 in one transaction. As one INSERT that binds
about 100,000 parameters, past the driver's 32,767: the activity failed on every retry,
the watermark never moved and the dream never finished (memory/commitments/scan.py
inserts in batches). It must finish on the inference activity's first attempt: a retry
would hide a failed one (a driver error, or a heartbeat timeout while parsing, which
tests/memory/test_inference_event_loop.py covers)."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from memory.store import PostgresMemoryStore, StoreLimits
from schemas.memory_ref import parse_memory_ref
from schemas.workflow_io import DreamInput
from tests.support.factories import note, unique_ref
from workflows.dream import DreamWorkflow

COMMITMENTS = 5_000
# Minutes of slack for a loaded machine; without the batching the dream never ends.
DREAM_TIMEOUT_S = 300


@pytest.mark.slow
async def test_a_first_dream_over_5000_commitments_completes(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    ref = unique_ref()
    # Proposed, not armed: what is under test is the inference, not 5,000 workflow starts.
    await store.commitments.update_settings(parse_memory_ref(ref).tenant, require_confirmation=True)
    # Written uncapped and without vectors (the episodic tier keeps 1,000 by default;
    # neither the cap nor embedding is under test).
    loader = PostgresMemoryStore(engine, limits=StoreLimits(capacity={}), embedder=None)
    entries = [
        note(f"Remind me in 3 days to send the report for account {n}") for n in range(COMMITMENTS)
    ]
    for start in range(0, COMMITMENTS, 1_000):
        await loader.put_many(ref, entries[start : start + 1_000])

    handle = await temporal_env.client.start_workflow(
        DreamWorkflow.run,
        DreamInput(memory_ref=ref, token_budget=8_000),
        id=f"dream-{uuid.uuid4().hex[:8]}",
        task_queue=worker_task_queue,
    )
    result = await asyncio.wait_for(handle.result(), DREAM_TIMEOUT_S)

    assert result.status == "completed"
    assert result.commitments is not None
    inference = result.commitments.inference
    assert (inference.scanned, inference.created) == (COMMITMENTS, COMMITMENTS)
    assert len(await store.commitments.list(ref, limit=COMMITMENTS)) == COMMITMENTS
    # One attempt: no heartbeat timeout, no driver error, nothing retried. (History
    # records the attempt that closed an activity.)
    assert await _attempts(temporal_env.client, handle.id, "infer_commitments") == [1]


async def _attempts(client: Client, workflow_id: str, activity: str) -> list[int]:
    """The closing attempt of every ``activity`` in a workflow's history and its
    children's (inference is a step of the dream, or of its child in older dreams)."""
    attempts: list[int] = []
    pending: list[tuple[str, str | None]] = [(workflow_id, None)]
    while pending:
        child_id, run_id = pending.pop()
        history = await client.get_workflow_handle(child_id, run_id=run_id).fetch_history()
        names: dict[int, str] = {}
        for event in history.events:
            if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
                names[event.event_id] = (
                    event.activity_task_scheduled_event_attributes.activity_type.name
                )
            elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
                started = event.activity_task_started_event_attributes
                if names.get(started.scheduled_event_id) == activity:
                    attempts.append(started.attempt)
            elif event.event_type == EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED:
                execution = event.child_workflow_execution_started_event_attributes
                pending.append(
                    (execution.workflow_execution.workflow_id, execution.workflow_execution.run_id)
                )
    return attempts
