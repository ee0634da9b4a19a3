"""Bad workflow input fails the workflow (not the workflow task) within seconds, with a
non-retryable error naming the field, whether it comes from a client, the Temporal CLI
or a schedule; and a schedule whose run failed still runs its next action."""

from __future__ import annotations

import asyncio
import json
import subprocess
import uuid
from datetime import timedelta
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import (
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleSpec,
    WorkflowExecutionStatus,
    WorkflowFailureError,
)
from temporalio.testing import WorkflowEnvironment

from memory.redaction.vault import StaticSecretVault
from memory.store import PostgresMemoryStore
from runtime.binaries import temporal_cli
from schemas.errors import NON_RETRYABLE_CODES
from tests.support.factories import note, unique_ref
from tests.support.workflow_runs import application_error

REF = "mem://acme/agent-1"
BAD_INPUTS: list[tuple[str, Any, str, str]] = [
    # (workflow type, input, expected error type, field the message must name)
    ("DreamWorkflow", {"memoryRef": REF, "tokenBudget": 0}, "invalid_input", "tokenBudget"),
    ("DreamWorkflow", {"memoryRef": REF, "tokenBudget": -5}, "invalid_input", "tokenBudget"),
    ("DreamWorkflow", {"memoryRef": REF, "tokenBudget": 1.5}, "invalid_input", "tokenBudget"),
    ("DreamWorkflow", {"memoryRef": REF, "tokenBudget": "8000"}, "invalid_input", "tokenBudget"),
    ("DreamWorkflow", {"memoryRef": REF, "tokenbudget": 8000}, "invalid_input", "tokenbudget"),
    ("DreamWorkflow", {"memoryRef": 42}, "invalid_memory_ref", "memoryRef"),
    ("DreamWorkflow", {"memoryRef": "mem://../etc/passwd"}, "invalid_memory_ref", "memoryRef"),
    ("DreamWorkflow", {"tokenBudget": 8000}, "invalid_input", "memoryRef"),
    ("DreamWorkflow", "mem://acme/agent-1", "invalid_input", "input"),
    ("DistillationWorkflow", {"memoryRef": REF, "tokenBudget": 0}, "invalid_input", "tokenBudget"),
    ("DistillationWorkflow", {"memoryRef": REF, "sources": []}, "invalid_input", "sources"),
    ("AgentRunWorkflow", {"memoryRef": "mem://a\x00b/c"}, "invalid_memory_ref", "memoryRef"),
    ("AgentRunWorkflow", {"memoryRef": "x" * 600}, "invalid_memory_ref", "memoryRef"),
]


@pytest.mark.parametrize(("workflow", "payload", "error_type", "field"), BAD_INPUTS)
async def test_bad_input_fails_the_workflow_at_once_naming_the_field(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    workflow: str,
    payload: Any,
    error_type: str,
    field: str,
) -> None:
    handle = await temporal_env.client.start_workflow(
        workflow, payload, id=f"bad-{uuid.uuid4().hex[:8]}", task_queue=worker_task_queue
    )
    with pytest.raises(WorkflowFailureError) as info:
        await asyncio.wait_for(handle.result(), timeout=15)
    error = application_error(info.value)
    assert error.type == error_type
    assert error.non_retryable
    assert field in error.message
    assert error.type in {code.value for code in NON_RETRYABLE_CODES}
    assert (await handle.describe()).status == WorkflowExecutionStatus.FAILED
    events = [event async for event in handle.fetch_history_events()]
    kinds = [event.event_type for event in events]
    # One workflow task, no retried task, no activity: the input never got further.
    assert EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED not in kinds
    assert EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED not in kinds
    assert kinds[-1] == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED


async def test_temporal_cli_start_with_a_misspelt_key_fails_visibly(
    temporal_env: WorkflowEnvironment, worker_task_queue: str
) -> None:
    address = temporal_env.client.service_client.config.target_host
    workflow_id = f"cli-bad-{uuid.uuid4().hex[:8]}"
    started = await asyncio.to_thread(
        subprocess.run,
        [
            temporal_cli(),
            "workflow",
            "start",
            "--address",
            address,
            "--type",
            "DreamWorkflow",
            "--task-queue",
            worker_task_queue,
            "--workflow-id",
            workflow_id,
            "--input",
            json.dumps({"memoryRef": REF, "tokenbudget": 8000}),
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert started.returncode == 0, started.stderr
    handle = temporal_env.client.get_workflow_handle(workflow_id)
    with pytest.raises(WorkflowFailureError) as info:
        await asyncio.wait_for(handle.result(), timeout=15)
    error = application_error(info.value)
    assert error.type == "invalid_input" and "tokenbudget" in error.message
    # What `temporal workflow describe` shows an operator.
    described = await asyncio.to_thread(
        subprocess.run,
        [temporal_cli(), "workflow", "describe", "--address", address, "-w", workflow_id],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert "Failed" in described.stdout or "FAILED" in described.stdout
    assert "tokenbudget" in described.stdout


async def _runs_of(env: WorkflowEnvironment, schedule_id: str) -> list[Any]:
    query = f"TemporalScheduledById = '{schedule_id}'"
    return [run async for run in env.client.list_workflows(query)]


async def _wait_for_closed_runs(env: WorkflowEnvironment, schedule_id: str, count: int) -> list:
    for _ in range(150):
        runs = await _runs_of(env, schedule_id)
        closed = [r for r in runs if r.status != WorkflowExecutionStatus.RUNNING]
        if len(closed) >= count:
            return closed
        await asyncio.sleep(0.2)
    raise AssertionError(f"{schedule_id}: fewer than {count} runs closed")


FAILED = WorkflowExecutionStatus.FAILED


@pytest.mark.parametrize(
    ("label", "payload"),
    [
        ("bad-input", {"memoryRef": REF, "tokenBudget": 0}),
        # Valid input, but the tenant's vault holds a secret that cannot be redacted
        # safely: the run itself fails (non-retryable invalid_secret).
        ("failing-run", {"memoryRef": None, "tokenBudget": 1_000}),
    ],
)
async def test_a_schedule_keeps_running_after_a_failed_run(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    vault: StaticSecretVault,
    label: str,
    payload: dict[str, Any],
) -> None:
    if payload["memoryRef"] is None:
        payload = {**payload, "memoryRef": unique_ref()}
        await store.put(payload["memoryRef"], note("a note of a tenant with a broken vault"))
        vault.secrets[payload["memoryRef"].split("/")[2]] = {"bad": "[REDACTED:x] and more"}
    schedule_id = f"sched-{label}-{uuid.uuid4().hex[:6]}"
    handle = await temporal_env.client.create_schedule(
        schedule_id,
        Schedule(
            action=ScheduleActionStartWorkflow(
                "DreamWorkflow",
                payload,
                id=schedule_id,
                task_queue=worker_task_queue,
                execution_timeout=timedelta(minutes=10),
            ),
            spec=ScheduleSpec(cron_expressions=["0 0 1 1 *"]),
            policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.SKIP),
        ),
    )
    try:
        await handle.trigger()
        first = await _wait_for_closed_runs(temporal_env, schedule_id, 1)
        assert first[0].status == FAILED
        await handle.trigger()
        both = await _wait_for_closed_runs(temporal_env, schedule_id, 2)
        assert [r.status for r in both] == [FAILED, FAILED]
        description = await handle.describe()
        assert description.info.num_actions_skipped_overlap == 0
    finally:
        await handle.delete()
