"""The activity boundary: a real database failure mid-commit whose message quotes the
entry leaves no trace of it in history or logs; error codes in retry policies are the
ones raised errors carry, and bad input fails on the first attempt; workflows reach
activities through contracts and never import the store."""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import subprocess
import sys
import typing
import uuid

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowFailureError
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment

import schemas.errors as error_module
from activities.commitment_activities import CommitmentActivities
from activities.contracts import ALL_CONTRACTS
from activities.embedding_activities import EmbeddingActivities
from activities.fixture_run_activities import FixtureRunActivities
from activities.fleet_activities import FleetActivities
from activities.memory_activities import MemoryActivities
from activities.proposal_activities import ProposalActivities
from activities.workflow_id_activities import WorkflowIdActivities
from memory.redaction.vault import StaticSecretVault
from memory.store import PostgresMemoryStore
from runtime.history_audit import leaks
from runtime.workflow_ids import PLAIN
from schemas.errors import NON_RETRYABLE_CODES, ErrorCode, MemoryError_
from schemas.workflow_io import DistillationInput
from tests.support.factories import canary, note, unique_ref
from workflows import policies
from workflows.distillation import DistillationWorkflow

FAILING_TRIGGER = (
    """
CREATE FUNCTION refuse_distilled() RETURNS trigger AS $$
BEGIN
  -- A real failure whose message quotes the row, as constraint and trigger errors can.
  RAISE EXCEPTION 'refused row: %', NEW.content;
END $$ LANGUAGE plpgsql
""",
    """
CREATE TRIGGER refuse_distilled BEFORE INSERT ON memory_entries
  FOR EACH ROW WHEN (NEW.id LIKE 'dist-%') EXECUTE FUNCTION refuse_distilled()
""",
)


async def _pending_failure(handle) -> str:
    """The last failure message of the workflow's pending activity, once it has one."""
    for _ in range(200):
        description = await handle.describe()
        for pending in description.raw_description.pending_activities:
            if pending.HasField("last_failure"):
                return pending.last_failure.message + json.dumps(str(pending.last_failure))
        await asyncio.sleep(0.1)
    raise AssertionError("the activity never failed")


async def test_database_failure_mid_commit_leaks_no_content(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
    caplog: pytest.LogCaptureFixture,
) -> None:
    secret = canary()
    text_of_entry = f"Quarterly figures for the board, draft {uuid.uuid4().hex}"
    ref = unique_ref()
    await store.put_many(ref, [note(text_of_entry), note(f"the reset code is {secret}")])
    async with engine.begin() as connection:
        for statement in FAILING_TRIGGER:
            await connection.exec_driver_sql(statement)
    caplog.set_level(logging.DEBUG)
    handle = await temporal_env.client.start_workflow(
        DistillationWorkflow.run,
        DistillationInput(memory_ref=ref, token_budget=5_000),
        id=f"distill-leak-{uuid.uuid4().hex[:6]}",
        task_queue=worker_task_queue,
    )
    failure = await _pending_failure(handle)
    assert "internal_error" in failure and "SQLSTATE P0001" in failure
    async with engine.begin() as connection:
        await connection.exec_driver_sql("DROP TRIGGER refuse_distilled ON memory_entries")
    result = await asyncio.wait_for(handle.result(), timeout=60)
    assert result.status == "distilled" and result.source_count == 2
    history = (await handle.fetch_history()).to_json()
    forbidden = {secret, text_of_entry, "Quarterly figures", "refused row"}
    assert leaks(history, forbidden) == []
    logged = "\n".join(
        record.getMessage()
        + (logging.Formatter().formatException(record.exc_info) if record.exc_info else "")
        for record in caplog.records
    )
    assert "refused row" not in logged and text_of_entry not in logged and secret not in logged
    assert "distill_memory" in logged  # the failure itself was logged, content-free


def test_every_non_retryable_code_is_carried_by_a_raised_error() -> None:
    raised = {
        cls.code
        for _, cls in inspect.getmembers(error_module, inspect.isclass)
        if issubclass(cls, MemoryError_)
    }
    from memory.redaction.chokepoint import InvalidSecret, UnredactableContent

    raised |= {InvalidSecret.code, UnredactableContent.code}
    assert set(NON_RETRYABLE_CODES) <= raised
    assert set(policies.NON_RETRYABLE) == {code.value for code in NON_RETRYABLE_CODES}
    assert all(isinstance(code, ErrorCode) for code in raised)


async def test_an_invalid_vault_secret_fails_the_first_attempt(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    vault: StaticSecretVault,
) -> None:
    ref = unique_ref()
    await store.put(ref, note("an ordinary note"))
    # A secret value holding the marker text cannot be redacted safely: refused.
    vault.secrets[ref.split("/")[2]] = {"bad": "[REDACTED:x] and more"}
    handle = await temporal_env.client.start_workflow(
        DistillationWorkflow.run,
        DistillationInput(memory_ref=ref),
        id=f"distill-secret-{uuid.uuid4().hex[:6]}",
        task_queue=worker_task_queue,
    )
    with pytest.raises(WorkflowFailureError):
        await asyncio.wait_for(handle.result(), timeout=20)
    events = [e async for e in handle.fetch_history_events()]
    started = [
        e.activity_task_started_event_attributes.attempt
        for e in events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
    ]
    assert started == [1]
    failed = next(
        e.activity_task_failed_event_attributes.failure
        for e in events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED
    )
    assert failed.application_failure_info.type == "invalid_secret"
    assert failed.application_failure_info.non_retryable


async def test_every_contract_has_an_implementation_of_its_types(
    store: PostgresMemoryStore, temporal_env: WorkflowEnvironment
) -> None:
    memory = MemoryActivities(store, StaticSecretVault({}))
    commitments = CommitmentActivities(store.commitments, temporal_env.client, "q")
    proposals = ProposalActivities(
        store.proposals,
        temporal_env.client,
        task_queue="q",
        activation="direct-rbac",
        vault=StaticSecretVault({}),
    )
    registered = [
        *memory.all(),
        *commitments.all(),
        *proposals.all(),
        *FleetActivities(store.fleet_selection, memory, commitments, proposals).all(),
        *WorkflowIdActivities(PLAIN).all(),
        *FixtureRunActivities(store).all(),
        *EmbeddingActivities(store).all(),
    ]
    implemented = {getattr(fn, "__temporal_activity_definition").name: fn for fn in registered}
    assert len(implemented) == len(registered)
    assert set(implemented) == {c.name for c in ALL_CONTRACTS}
    for contract in ALL_CONTRACTS:
        hints = typing.get_type_hints(implemented[contract.name])
        assert hints["request"] is contract.request_type, contract.name
        assert hints["return"] is contract.result_type, contract.name


def test_workflows_import_neither_the_store_nor_its_drivers() -> None:
    probe = (
        "import sys, workflows.registry, activities.contracts;"
        "heavy = [m for m in ('sqlalchemy', 'asyncpg', 'tiktoken', 'memory.store') "
        "if m in sys.modules]; print(heavy); sys.exit(1 if heavy else 0)"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_application_errors_of_results_tolerate_unknown_fields() -> None:
    from schemas.workflow_io import DistillationResult, DreamInput

    result = DistillationResult.model_validate(
        {
            "memoryRef": "mem://a/b",
            "status": "distilled",
            "snapshotChecksum": "x",
            "snapshotCount": 1,
            "tokenBudget": 10,
            "addedByANewerWorker": {"x": 1},
        }
    )
    assert result.status == "distilled"
    with pytest.raises(ValueError):
        DreamInput.model_validate({"memoryRef": "mem://a/b", "addedByANewerClient": 1})
    assert isinstance(ApplicationError("x"), Exception)
