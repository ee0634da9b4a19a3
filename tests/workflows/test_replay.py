"""Replay: every checked-in history replays against today's workflow code, and replay
never executes an activity or touches the store (it re-reads the recorded results)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import WorkflowHistory
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer

from memory.store import PostgresMemoryStore
from runtime.converter import data_converter
from runtime.history_audit import searchable_text
from schemas.memory_entry import ForgetRequest
from schemas.workflow_io import AgentRunInput, DistillationInput
from tests.support.factories import note, unique_ref
from tests.support.scan import row_counts
from workflows.agent_run import AgentRunWorkflow
from workflows.distillation import DistillationWorkflow
from workflows.registry import ALL_WORKFLOWS

HISTORY_DIR = Path(__file__).resolve().parents[1] / "histories"
HISTORY_FILES = sorted(HISTORY_DIR.glob("*.json"))


def _replayer() -> Replayer:
    return Replayer(workflows=ALL_WORKFLOWS, data_converter=data_converter)


def test_every_workflow_has_a_recorded_history() -> None:
    recorded = {
        json.loads(path.read_text())["events"][0]["workflowExecutionStartedEventAttributes"][
            "workflowType"
        ]["name"]
        for path in HISTORY_FILES
    }
    assert recorded >= {w.__name__ for w in ALL_WORKFLOWS}


@pytest.mark.parametrize("path", HISTORY_FILES, ids=lambda p: p.name)
async def test_recorded_history_replays(path: Path) -> None:
    history = WorkflowHistory.from_json(path.stem, path.read_text())
    result = await _replayer().replay_workflow(history, raise_on_replay_failure=False)
    assert result.replay_failure is None, result.replay_failure


def _completion(history: WorkflowHistory) -> str:
    last = json.loads(history.to_json())["events"][-1]
    assert last["eventType"] == "EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED"
    return searchable_text(json.dumps(last["workflowExecutionCompletedEventAttributes"]))


async def test_replay_outside_the_envelope(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    """Record a session and a distillation, then change live memory underneath them
    (forget, add, distill again): replay yields the same results and writes nothing."""
    ref = unique_ref()
    seeded = await store.put_many(ref, [note(f"fact {i} about the account") for i in range(8)])
    client = temporal_env.client
    session = await client.start_workflow(
        AgentRunWorkflow.run,
        AgentRunInput(memory_ref=ref),
        id=f"session-{uuid.uuid4().hex[:8]}",
        task_queue=worker_task_queue,
    )
    await session.result()
    distill = await client.start_workflow(
        DistillationWorkflow.run,
        DistillationInput(memory_ref=ref, token_budget=4000),
        id=f"distill-{uuid.uuid4().hex[:8]}",
        task_queue=worker_task_queue,
    )
    await distill.result()
    recorded = [await session.fetch_history(), await distill.fetch_history()]

    # Live memory moves on.
    await store.forget(ref, ForgetRequest(ids=(seeded[0].id, seeded[1].id)))
    await store.put_many(ref, [note(f"new fact {i}") for i in range(5)])
    again = await client.execute_workflow(
        DistillationWorkflow.run,
        DistillationInput(memory_ref=ref, token_budget=4000),
        id=f"distill-{uuid.uuid4().hex[:8]}",
        task_queue=worker_task_queue,
    )
    assert again.source_count == 5

    before = await row_counts(engine)
    events_before = await store.events(ref)
    for history in recorded:
        # Re-encode through JSON as a checked-in file would be.
        reloaded = WorkflowHistory.from_json(history.workflow_id, history.to_json())
        result = await _replayer().replay_workflow(reloaded, raise_on_replay_failure=False)
        assert result.replay_failure is None
        assert _completion(reloaded) == _completion(history)
    assert await row_counts(engine) == before
    assert await store.events(ref) == events_before
