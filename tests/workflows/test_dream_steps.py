"""The dream's steps are declared once (activities/dream_steps.py) and both runners run
exactly them, in order: a DreamWorkflow on the real dev server (its history and its
distillation child's), and the fleet's batch (the activity methods it calls for an
agent). A runner whose table of steps differs from the declaration refuses to run."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from temporalio import activity
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowHandle
from temporalio.testing import ActivityEnvironment, WorkflowEnvironment

from activities.commitment_activities import CommitmentActivities
from activities.dream_steps import DREAM_STEPS, runs_every_step
from activities.fleet_activities import FleetActivities
from activities.memory_activities import MemoryActivities
from activities.proposal_activities import ProposalActivities
from memory.redaction.vault import StaticSecretVault
from memory.store import PostgresMemoryStore
from schemas.fleet import DreamAgentsRequest
from schemas.memory_ref import parse_memory_ref
from schemas.workflow_io import DreamInput
from tests.support.factories import note, unique_ref
from workflows.dream import DreamWorkflow

DECLARED = [step.activity.name for step in DREAM_STEPS]


async def _scheduled_activities(handle: WorkflowHandle[Any, Any]) -> list[str]:
    """Activity types a run scheduled, in order, a child's in the place it ran."""
    names: list[str] = []
    async for event in handle.fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            names.append(event.activity_task_scheduled_event_attributes.activity_type.name)
        elif event.event_type == EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED:
            child = event.child_workflow_execution_started_event_attributes.workflow_execution
            names += await _scheduled_activities(
                handle._client.get_workflow_handle(child.workflow_id, run_id=child.run_id)
            )
    return names


async def test_a_dream_runs_the_declared_steps_in_order(
    temporal_env: WorkflowEnvironment, worker_task_queue: str, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    await store.put_many(ref, [note(f"Fact {i} about the account.") for i in range(5)])
    handle = await temporal_env.client.start_workflow(
        DreamWorkflow.run,
        DreamInput(memory_ref=ref, token_budget=8000),
        id=f"dream-steps-{uuid.uuid4().hex[:8]}",
        task_queue=worker_task_queue,
    )
    assert (await handle.result()).status == "completed"
    assert await _scheduled_activities(handle) == DECLARED


class _Recorded:
    """Forwards to an activities object, recording the activity name of each call."""

    def __init__(self, inner: object, calls: list[str]) -> None:
        self._inner, self._calls = inner, calls

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._inner, name)
        definition = activity._Definition.from_callable(target)
        if definition is None:
            return target

        async def recorded(*args: Any, **kwargs: Any) -> Any:
            self._calls.append(definition.name or name)
            return await target(*args, **kwargs)

        return recorded


async def test_the_fleet_runs_the_declared_steps_in_order(
    store: PostgresMemoryStore, temporal_env: WorkflowEnvironment
) -> None:
    calls: list[str] = []
    vault = StaticSecretVault({})
    fleet = FleetActivities(
        store.fleet_selection,
        _Recorded(MemoryActivities(store, vault), calls),  # type: ignore[arg-type]
        _Recorded(  # type: ignore[arg-type]
            CommitmentActivities(store.commitments, temporal_env.client, "unused"), calls
        ),
        _Recorded(  # type: ignore[arg-type]
            ProposalActivities(
                store.proposals,
                temporal_env.client,
                task_queue="unused",
                activation="direct-rbac",
                vault=vault,
            ),
            calls,
        ),
    )
    ref = unique_ref()
    await store.put_many(ref, [note(f"Fact {i} about the account.") for i in range(5)])
    request = DreamAgentsRequest(
        memory_refs=(parse_memory_ref(ref),), token_budget=8000, run_key="steps/test"
    )
    result = await ActivityEnvironment().run(fleet.dream_agents, request)
    assert [agent.status for agent in result.agents] == ["dreamed"]
    assert calls == DECLARED


def test_a_runner_missing_a_declared_step_refuses_to_run() -> None:
    complete = {step.name: None for step in DREAM_STEPS}
    runs_every_step("complete", complete)
    missing = dict(complete)
    missing.pop("propose")
    with pytest.raises(RuntimeError, match="propose"):
        runs_every_step("missing", missing)
    with pytest.raises(RuntimeError, match="extra"):
        runs_every_step("extra", {**complete, "extra": None})
