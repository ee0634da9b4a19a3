"""Proposals under duplicate delivery, on the production worker behind the interceptor
that loses each chosen activity's first completion after its commit: synthesis,
rejection and the install each run twice and apply once; applies sent at once, and again
after the proposal was applied, install one schedule; an install that died between the
schedule and the row finishes on retry, and a schedule holding another artifact is
refused rather than adopted."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment

from activities.automation_schedules import installed_checksum, schedule_of
from activities.contracts import INSTALL_PROPOSAL, SYNTHESIZE_PROPOSALS, TRANSITION_PROPOSAL
from memory.store import PostgresMemoryStore
from runtime.workflow_ids import PLAIN
from schemas.events import EventType
from schemas.proposals import AutomationArtifact, ProposalWorkflowInput
from tests.support.duplicate_delivery import (
    LoseCompletionAfterCommit,
    assert_event_log_gap_free,
    of_type,
    worker_losing_completions,
)
from tests.support.factories import unique_ref
from tests.support.proposals import command, dream, last_mondays, seed_routine
from workflows.proposal import ProposalWorkflow

CHOSEN = {SYNTHESIZE_PROPOSALS.name, TRANSITION_PROPOSAL.name, INSTALL_PROPOSAL.name}


async def _schedules(client: Client, prefix: str) -> list[str]:
    return [s.id async for s in await client.list_schedules() if s.id.startswith(prefix)]


async def test_proposals_retried_after_their_commit_apply_once(
    temporal_env: WorkflowEnvironment, store: PostgresMemoryStore, engine: AsyncEngine
) -> None:
    client = temporal_env.client
    tenant = f"t{uuid.uuid4().hex[:8]}"
    refs = [unique_ref(tenant, agent) for agent in ("agent-1", "agent-2")]
    for ref in refs:
        await seed_routine(engine, ref, last_mondays(3))
    lose = LoseCompletionAfterCommit(CHOSEN)
    async with worker_losing_completions(client, store, lose) as task_queue:
        ids: list[str] = []
        for ref in refs:
            dreamed = await dream(client, task_queue, ref)
            assert dreamed.proposals is not None and len(dreamed.proposals.created) == 1
            ids.extend(dreamed.proposals.created)
        applied_id, rejected_id = ids
        applied_flow = PLAIN.proposal(tenant, applied_id)
        # Five applies at once: one install, whatever their order.
        outcomes = await asyncio.gather(
            *(command(client, applied_flow, "apply") for _ in range(5)), return_exceptions=True
        )
        states = [o.state for o in outcomes if not isinstance(o, BaseException)]
        assert states and set(states) == {"applied"}
        refused = [o for o in outcomes if isinstance(o, BaseException)]
        assert all(isinstance(o, WorkflowUpdateFailedError | RPCError) for o in refused)
        rejected = await command(client, PLAIN.proposal(tenant, rejected_id), "reject")
        assert rejected.state == "rejected"

    # Every chosen activity lost a completion and ran again.
    assert {kind for kind, _ in lose.lost} == CHOSEN
    assert await _schedules(client, PLAIN.automation(tenant, "")) == [
        PLAIN.automation(tenant, applied_id)
    ]
    stored = await store.proposals.get(tenant, applied_id)
    assert stored.state == "applied" and stored.activation is not None
    assert await installed_checksum(client, PLAIN.automation(tenant, applied_id)) == (
        stored.artifact_sha256
    )
    assert (await store.proposals.get(tenant, rejected_id)).state == "rejected"
    for ref in refs:
        events = await assert_event_log_gap_free(engine, store, ref)
        assert len(of_type(events, EventType.PROPOSAL_CREATED)) == 1
    applied_events = await assert_event_log_gap_free(engine, store, refs[0])
    assert len(of_type(applied_events, EventType.PROPOSAL_ACTIVATED)) == 1
    assert len(await store.proposals.list(tenant)) == 2
    await client.get_schedule_handle(PLAIN.automation(tenant, applied_id)).delete()


async def test_an_install_that_died_after_the_schedule_finishes_and_never_adopts_another(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    client = temporal_env.client
    tenant = f"t{uuid.uuid4().hex[:8]}"
    ids: list[str] = []
    for agent in ("agent-1", "agent-2"):
        ref = unique_ref(tenant, agent)
        await seed_routine(engine, ref, last_mondays(3))
        dreamed = await dream(client, worker_task_queue, ref)
        assert dreamed.proposals is not None
        ids.extend(dreamed.proposals.created)
    same, other = ids

    # The schedule of ``same`` exists already with its own artifact: a retry adopts it.
    proposal = await store.proposals.get(tenant, same)
    artifact = AutomationArtifact.model_validate(proposal.artifact)
    schedule_id = PLAIN.automation(tenant, same)
    await client.create_schedule(schedule_id, schedule_of(artifact, schedule_id, {}))
    applied = await command(client, PLAIN.proposal(tenant, same), "apply")
    assert applied.state == "applied"
    assert await _schedules(client, schedule_id) == [schedule_id]

    # Under ``other``'s schedule id sits another artifact: refused, nothing applied.
    foreign = artifact.model_copy(
        update={"schedule": artifact.schedule.model_copy(update={"hour": 3})}
    )
    other_schedule = PLAIN.automation(tenant, other)
    await client.create_schedule(other_schedule, schedule_of(foreign, other_schedule, {}))
    with pytest.raises(WorkflowUpdateFailedError):
        await command(client, PLAIN.proposal(tenant, other), "apply")
    assert (await store.proposals.get(tenant, other)).state == "draft"
    for schedule in (schedule_id, other_schedule):
        await client.get_schedule_handle(schedule).delete()


async def test_a_proposal_workflow_started_twice_is_one(
    temporal_env: WorkflowEnvironment,
    worker_task_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    """The demo draft's workflow, started by two update-with-starts at once (two API
    replicas) and by a plain start: one workflow, one install."""
    client = temporal_env.client
    tenant = f"t{uuid.uuid4().hex[:8]}"
    await store.proposals.seed_demo(tenant, worker_task_queue)
    workflow_id = PLAIN.proposal(tenant, "demo-reviewable-learning")
    arguments = ProposalWorkflowInput(
        tenant=tenant, proposal_id="demo-reviewable-learning", activation="direct-rbac"
    )
    await client.start_workflow(
        ProposalWorkflow.run, arguments, id=workflow_id, task_queue=worker_task_queue
    )
    results = await asyncio.gather(
        *(command(client, workflow_id, "apply") for _ in range(3)), return_exceptions=True
    )
    assert any(not isinstance(r, BaseException) and r.state == "applied" for r in results)
    schedule_id = PLAIN.automation(tenant, "demo-reviewable-learning")
    assert await _schedules(client, schedule_id) == [schedule_id]
    await client.get_schedule_handle(schedule_id).delete()
