"""Reviewable learning on Temporal (RFC 0096): a dream proposes a weekly routine as an
inert draft; nothing is installed until apply; the installed schedule runs exactly the
stored artifact (checksums compared on what the server holds); reject and archive leave
nothing; applying twice installs once; an approval gate installs only when granted."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowUpdateFailedError
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment

from activities.automation_schedules import installed_checksum
from memory.store import PostgresMemoryStore
from runtime.workflow_ids import PLAIN
from schemas.memory_ref import parse_memory_ref
from schemas.proposals import ProposalRevision, ProposalStatus, ProposalWorkflowInput
from schemas.workflow_io import DreamInput
from tests.support.factories import canary, note, unique_ref
from tests.support.proposals import (
    WEEKLY_REQUEST,
    command,
    dream,
    installed,
    last_mondays,
    seed_routine,
)
from tests.support.waiting import eventually
from workflows.dream import DreamWorkflow
from workflows.proposal import ProposalWorkflow


async def _schedule_ids(client: Client) -> set[str]:
    return {listed.id async for listed in await client.list_schedules()}


async def _assert_inert(client: Client, tenant: str, proposal_id: str, ref: str) -> None:
    """Nothing of the proposal runs: no schedule, and no agent run of its memoryRef."""
    assert not await installed(client, PLAIN.automation(tenant, proposal_id))
    query = f"WorkflowType = 'AgentRunWorkflow' AND MemoryRef = '{ref}'"
    assert [run.id async for run in client.list_workflows(query)] == []


async def _runs_started_by(client: Client, schedule_id: str) -> int:
    query = f"WorkflowId STARTS_WITH '{schedule_id}'"
    return len([run async for run in client.list_workflows(query)])


async def test_a_weekly_routine_becomes_one_inert_draft_and_apply_installs_it(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    client = temporal_env.client
    ref = unique_ref()
    tenant = parse_memory_ref(ref).tenant
    await seed_routine(engine, ref, last_mondays(4))

    first = await dream(client, worker_task_queue, ref)
    assert first.proposals is not None and len(first.proposals.created) == 1
    (proposal_id,) = first.proposals.created
    # Nothing asked since: the next dream reads no request (the watermark).
    idle = await dream(client, worker_task_queue, ref)
    assert idle.proposals is not None and (idle.proposals.routines, idle.proposals.created) == (
        0,
        (),
    )
    # A request arrives: it is all read again, and the same routine is the same proposal.
    await store.put(ref, note(WEEKLY_REQUEST[0]))
    again = await dream(client, worker_task_queue, ref)
    assert again.proposals is not None and again.proposals.created == ()  # deterministic
    assert (again.proposals.routines, again.proposals.unchanged) == (1, 1)

    (proposal,) = await store.proposals.list(tenant)
    assert proposal.id == proposal_id and proposal.state == "draft"
    assert proposal.artifact["schedule"] == {
        "dayOfWeek": "monday",
        "hour": 9,
        "minute": 0,
        "timeZone": "UTC",
    }
    assert proposal.artifact["action"]["input"] == {"memoryRef": ref}
    assert "Dana" not in (proposal.title or "") + (proposal.rationale or "")

    # Inert: a lifecycle workflow, and no schedule, no run.
    workflow_id = PLAIN.proposal(tenant, proposal_id)
    schedule_id = PLAIN.automation(tenant, proposal_id)
    handle = client.get_workflow_handle(workflow_id)
    status = await handle.query(ProposalWorkflow.status)
    assert status is not None and status.state == "draft"
    await _assert_inert(client, tenant, proposal_id, ref)

    applied = await command(client, workflow_id, "apply")
    assert applied.state == "applied"
    assert applied.installed_artifact_ref == (
        f"temporal-schedule:{schedule_id}#sha256:{proposal.artifact_sha256}"
    )
    # No re-synthesis: what the server runs is the stored artifact, byte for byte.
    assert await installed_checksum(client, schedule_id) == proposal.artifact_sha256
    stored = await store.proposals.get(tenant, proposal_id)
    assert stored.state == "applied" and stored.activation is not None
    assert await handle.describe() is not None
    assert (await handle.describe()).status == WorkflowExecutionStatus.COMPLETED

    # The schedule runs: a trigger starts the agent run.
    await client.get_schedule_handle(schedule_id).trigger()

    async def started() -> bool:
        return await _runs_started_by(client, schedule_id) >= 1

    await eventually(started)

    # Applying twice installs once: the closed workflow refuses, the schedule is one.
    with pytest.raises((WorkflowUpdateFailedError, RPCError)):
        await command(client, workflow_id, "apply")
    assert len([s for s in await _schedule_ids(client) if s == schedule_id]) == 1
    events = [e.type for e in await store.events(ref)]
    assert events.count("proposal.created") == 1 and events.count("proposal.activated") == 1
    await client.get_schedule_handle(schedule_id).delete()


async def test_reject_and_archive_leave_nothing_installed_and_refuse_apply(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    client = temporal_env.client
    tenant = f"t{uuid.uuid4().hex[:8]}"
    refs = [unique_ref(tenant, agent) for agent in ("agent-1", "agent-2")]
    ids: list[str] = []
    for ref in refs:
        await seed_routine(engine, ref, last_mondays(3))
        result = await dream(client, worker_task_queue, ref)
        assert result.proposals is not None
        ids.extend(result.proposals.created)
    assert len(ids) == 2
    for proposal_id, update in zip(ids, ("reject", "archive"), strict=True):
        workflow_id = PLAIN.proposal(tenant, proposal_id)
        moved = await command(client, workflow_id, update)
        assert moved.state == ("rejected" if update == "reject" else "archived")
        ref = refs[ids.index(proposal_id)]
        await _assert_inert(client, tenant, proposal_id, ref)
        with pytest.raises((WorkflowUpdateFailedError, RPCError)):
            await command(client, workflow_id, "apply")
        await _assert_inert(client, tenant, proposal_id, ref)
        assert (await store.proposals.get(tenant, proposal_id)).state == moved.state
    # A rejected routine is not proposed again by the next dream.
    again = await dream(client, worker_task_queue, refs[0])
    assert again.proposals is not None and again.proposals.created == ()


async def test_a_revision_is_what_apply_installs(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    client = temporal_env.client
    ref = unique_ref()
    tenant = parse_memory_ref(ref).tenant
    await seed_routine(engine, ref, last_mondays(3))
    dream_id = f"dream-{uuid.uuid4().hex[:8]}"
    result = await client.execute_workflow(
        DreamWorkflow.run, DreamInput(memory_ref=ref), id=dream_id, task_queue=worker_task_queue
    )
    assert result.proposals is not None
    (proposal_id,) = result.proposals.created
    proposal = await store.proposals.get(tenant, proposal_id)
    artifact = {**proposal.artifact, "schedule": {**proposal.artifact["schedule"], "hour": 7}}
    # A reviewer's free text stays in PostgreSQL: the session's history audit looks for
    # these canaries in every history.
    revision = ProposalRevision(title=canary(), rationale=canary(), artifact=artifact)
    revised = await store.proposals.revise(tenant, proposal_id, revision)
    workflow_id = PLAIN.proposal(tenant, proposal_id)
    status = await command(client, workflow_id, "revise", artifact_sha256=revised.artifact_sha256)
    assert status.state == "revised" and status.artifact_sha256 == revised.artifact_sha256
    assert revised.artifact_sha256 != proposal.artifact_sha256
    await _assert_inert(client, tenant, proposal_id, ref)
    await command(client, workflow_id, "apply")
    schedule_id = PLAIN.automation(tenant, proposal_id)
    assert await installed_checksum(client, schedule_id) == revised.artifact_sha256
    # Ids, states and checksums only: no title, rationale or request in the histories.
    histories = [
        (await client.get_workflow_handle(workflow_id).fetch_history()).to_json(),
        (await client.get_workflow_handle(dream_id).fetch_history()).to_json(),
    ]
    for history in histories:
        for text in (revision.title, revision.rationale, *WEEKLY_REQUEST):
            assert text is not None and text not in history
    await client.get_schedule_handle(schedule_id).delete()


async def test_approval_gate_installs_only_when_granted_and_lapses_on_timeout(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    client = temporal_env.client
    tenant = f"t{uuid.uuid4().hex[:8]}"
    ref = unique_ref(tenant)
    await seed_routine(engine, ref, last_mondays(3))
    await store.proposals.seed_demo(tenant, worker_task_queue)
    proposal_id = "demo-reviewable-learning"
    schedule_id = PLAIN.automation(tenant, proposal_id)

    async def gated(timeout_s: int) -> str:
        workflow_id = f"{PLAIN.proposal(tenant, proposal_id)}/gate-{uuid.uuid4().hex[:6]}"
        await client.start_workflow(
            ProposalWorkflow.run,
            ProposalWorkflowInput(
                tenant=tenant,
                proposal_id=proposal_id,
                activation="approval-gate",
                approval_timeout_s=timeout_s,
            ),
            id=workflow_id,
            task_queue=worker_task_queue,
        )
        return workflow_id

    lapsing = await gated(1)
    pending = await command(client, lapsing, "apply")
    assert pending.gate == "pending" and pending.state == "draft"

    async def lapsed() -> bool:
        status: ProposalStatus | None = await client.get_workflow_handle(lapsing).query(
            ProposalWorkflow.status
        )
        return status is not None and status.gate == "lapsed"

    await eventually(lapsed)
    await _assert_inert(client, tenant, proposal_id, f"mem://{tenant}/reviewable-learning-demo")

    granted = await gated(3600)
    await command(client, granted, "apply")
    denied = await command(client, granted, "decide", decision="denied")
    assert denied.gate == "denied"
    await _assert_inert(client, tenant, proposal_id, f"mem://{tenant}/reviewable-learning-demo")
    await command(client, granted, "apply")
    applied = await command(client, granted, "decide", decision="granted")
    assert applied.state == "applied" and applied.gate == "granted"
    assert applied.approval_id == f"{proposal_id}/approval-2"
    stored = await store.proposals.get(tenant, proposal_id)
    assert await installed_checksum(client, schedule_id) == stored.artifact_sha256
    assert stored.activation is not None and stored.activation.mode == "approval-gate"
    await client.get_schedule_handle(schedule_id).delete()


def test_mondays_helper_is_in_the_past() -> None:
    moments = last_mondays(4)
    assert all(moment < datetime.now(UTC) - timedelta(days=1) for moment in moments)
    assert {moment.weekday() for moment in moments} == {0}
