"""FleetDreamWorkflow on a real Temporal dev server and the real store: only agents with
work cost anything, each is dreamed once, and a failing agent neither stops the others
nor loses its work."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle
from temporalio.testing import WorkflowEnvironment

from memory.redaction.vault import StaticSecretVault
from memory.storage import tables
from memory.store import PostgresMemoryStore
from runtime.settings import Settings
from runtime.workflow_ids import PLAIN
from schemas.fleet import FleetDreamInput, FleetDreamResult
from schemas.memory_ref import parse_memory_ref
from tests.support.factories import note, unique_ref
from tests.support.proposals import last_mondays, seed_routine
from tests.support.worker_clients import clients_with_identities
from worker import build_worker
from workflows.fleet_dream import FleetDreamWorkflow

REMINDER = "Remind me on Friday at 9am to send the invoice to the client."


async def _seed(store: PostgresMemoryStore, ref: str, n: int = 12) -> None:
    texts = [f"Observation {i}: the client prefers invoices by email." for i in range(n)]
    await store.put_many(ref, [note(text, "billing") for text in texts] + [note(REMINDER)])


async def _seeded_tenant(store: PostgresMemoryStore, agents: int, notes: int) -> list[str]:
    """``agents`` memoryRefs of a tenant of their own, each with ``notes`` notes."""
    tenant = f"t{uuid.uuid4().hex[:8]}"
    refs = [unique_ref(tenant, f"agent-{i:02d}") for i in range(agents)]
    for ref in refs:
        await _seed(store, ref, n=notes)
    return refs


def _tenant(refs: list[str]) -> str:
    return parse_memory_ref(refs[0]).tenant


async def _fleet(
    client: Client, task_queue: str, **options: object
) -> tuple[FleetDreamResult, WorkflowHandle[FleetDreamWorkflow, FleetDreamResult]]:
    handle = await client.start_workflow(
        FleetDreamWorkflow.run,
        FleetDreamInput.model_validate(options),
        id=f"fleet-{uuid.uuid4().hex[:8]}",
        task_queue=task_queue,
    )
    return await handle.result(), handle


async def _paged_fleet(
    client: Client, task_queue: str, store: PostgresMemoryStore, agents: int
) -> tuple[list[str], FleetDreamResult, WorkflowHandle[FleetDreamWorkflow, FleetDreamResult]]:
    """``agents`` agents of a fresh tenant dreamed in pages of 2, one agent a batch, two
    batches in flight."""
    refs = await _seeded_tenant(store, agents=agents, notes=3)
    options = {"pageSize": 2, "batchSize": 1, "concurrency": 2}
    result, handle = await _fleet(client, task_queue, tenant=_tenant(refs), **options)
    return refs, result, handle


async def _dreamed_batches(handle: WorkflowHandle[FleetDreamWorkflow, FleetDreamResult]) -> int:
    count = 0
    async for event in handle.fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            attributes = event.activity_task_scheduled_event_attributes
            count += attributes.activity_type.name == "dream_agents"
    return count


@pytest.fixture
async def fleet_queue(
    temporal_env: WorkflowEnvironment, store: PostgresMemoryStore
) -> AsyncIterator[str]:
    """The worker, with a vault holding a secret id the registry refuses for tenant
    ``broken``: that tenant's distillation and consolidation fail non-retryably."""
    task_queue = f"fleet-{uuid.uuid4().hex[:8]}"
    vault = StaticSecretVault({"broken": {"bad id!": "a-long-enough-secret"}})
    async with build_worker(
        temporal_env.client, Settings(AGENT_MEMORY_TASK_QUEUE=task_queue), store, vault
    ):
        yield task_queue


async def _distilled_count(store: PostgresMemoryStore, ref: str) -> int:
    events = await store.events(ref, types=["memory.compacted"])
    return len(events)


async def test_only_agents_with_new_work_cost_an_activity(
    temporal_env: WorkflowEnvironment, fleet_queue: str, store: PostgresMemoryStore
) -> None:
    tenant = f"t{uuid.uuid4().hex[:8]}"
    refs = [unique_ref(tenant, f"agent-{i}") for i in range(6)]
    for ref in refs:
        await _seed(store, ref)
    client = temporal_env.client

    first, handle = await _fleet(client, fleet_queue, tenant=tenant, batchSize=1)
    assert first.progress.dreamed == 6 and first.progress.failed == 0
    assert await _dreamed_batches(handle) == 6
    for ref in refs:
        assert await _distilled_count(store, ref) == 1
        assert len(await store.commitments.list(parse_memory_ref(ref))) == 1

    # Nothing new anywhere: one page read, no batch, no activity per agent. The dream's
    # own writes (distilled entries, supersessions, commitments) are not new work.
    idle, handle = await _fleet(client, fleet_queue, tenant=tenant, batchSize=1)
    assert idle.progress.dreamed == 0 and idle.progress.batches == 0
    assert await _dreamed_batches(handle) == 0

    # Two agents wrote; only they are dreamed, and only once each.
    for ref in refs[:2]:
        await store.put(ref, note("The client moved the billing contact to Dana.", "billing"))
    busy, handle = await _fleet(client, fleet_queue, tenant=tenant, batchSize=1)
    assert busy.progress.dreamed == 2
    assert await _dreamed_batches(handle) == 2
    assert [await _distilled_count(store, ref) for ref in refs] == [2, 2, 1, 1, 1, 1]


async def test_a_tenant_run_leaves_other_tenants_alone(
    temporal_env: WorkflowEnvironment, fleet_queue: str, store: PostgresMemoryStore
) -> None:
    mine, other = unique_ref(), unique_ref()
    await _seed(store, mine)
    await _seed(store, other)
    result, _ = await _fleet(temporal_env.client, fleet_queue, tenant=parse_memory_ref(mine).tenant)
    assert result.progress.dreamed == 1
    assert await _distilled_count(store, mine) == 1
    assert await _distilled_count(store, other) == 0
    assert [
        str(ref) for ref in await store.fleet_selection.due(tenant=None, after=None, limit=10)
    ] == [other]


async def test_a_tenant_with_no_memory_is_a_warning_not_a_silent_success(
    temporal_env: WorkflowEnvironment, fleet_queue: str, store: PostgresMemoryStore
) -> None:
    """A schedule naming a tenant that has no memory (a typo, most likely) still
    completes, and says so; an idle tenant with memory does not."""
    idle = unique_ref()
    await _seed(store, idle)
    await _fleet(temporal_env.client, fleet_queue, tenant=parse_memory_ref(idle).tenant)
    nobody = f"nobody{uuid.uuid4().hex[:8]}"
    for tenant, warned in ((nobody, True), (parse_memory_ref(idle).tenant, False)):
        result, handle = await _fleet(temporal_env.client, fleet_queue, tenant=tenant)
        assert result.progress.dreamed == 0 and result.progress.batches == 0
        metadata = await handle.query("__temporal_workflow_metadata")
        assert ("this tenant has no memory at all" in metadata.current_details) is warned
        assert metadata.current_details.startswith(f"Fleet dream of {tenant}: done")


async def test_pages_and_continue_as_new_cover_every_agent_once(
    temporal_env: WorkflowEnvironment, fleet_queue: str, store: PostgresMemoryStore
) -> None:
    # Pages of 2 refs, 5 pages a run: the 13 agents take two continued runs.
    refs, result, handle = await _paged_fleet(temporal_env.client, fleet_queue, store, 13)
    assert result.progress.dreamed == 13 and result.progress.pages == 7
    assert [await _distilled_count(store, ref) for ref in refs] == [1] * 13
    latest = await temporal_env.client.get_workflow_handle(handle.id).describe()
    assert latest.run_id != handle.first_execution_run_id


async def test_the_next_page_is_read_while_the_last_batches_still_run(
    temporal_env: WorkflowEnvironment, fleet_queue: str, store: PostgresMemoryStore
) -> None:
    """No page boundary leaves slots idle: once every batch of a page holds a slot, the
    next page is read, before those batches end (a barrier per page left up to a round
    of slots idle waiting for the slowest batch)."""
    refs, result, handle = await _paged_fleet(temporal_env.client, fleet_queue, store, 5)
    assert result.progress.dreamed == 5 and result.progress.pages == 3
    open_batches: set[int] = set()
    open_at_page_reads: list[int] = []
    async for event in handle.fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            name = event.activity_task_scheduled_event_attributes.activity_type.name
            if name == "dream_agents":
                open_batches.add(event.event_id)
            else:
                open_at_page_reads.append(len(open_batches))
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            open_batches.discard(event.activity_task_completed_event_attributes.scheduled_event_id)
    assert open_at_page_reads == [0, 2, 2]
    assert [await _distilled_count(store, ref) for ref in refs] == [1] * 5


async def test_batches_spread_over_every_worker_of_the_queue(
    temporal_env: WorkflowEnvironment, store: PostgresMemoryStore
) -> None:
    """Two workers on one queue share a fleet's batches. With eager activity dispatch
    every batch the fleet workflow scheduled went back to the worker caching that
    workflow, and a second worker idled (one batch at a time here, so none of them
    could reach the other worker any other way)."""
    task_queue = f"fleet-{uuid.uuid4().hex[:8]}"
    settings = Settings(AGENT_MEMORY_TASK_QUEUE=task_queue)
    clients = await clients_with_identities(temporal_env, ("fleet-worker-a", "fleet-worker-b"))
    refs = await _seeded_tenant(store, agents=12, notes=2)
    async with (
        build_worker(clients[0], settings, store, StaticSecretVault({})),
        build_worker(clients[1], settings, store, StaticSecretVault({})),
    ):
        result, handle = await _fleet(
            clients[0], task_queue, tenant=_tenant(refs), batchSize=1, concurrency=1
        )
    assert result.progress.dreamed == 12
    ran_on: set[str] = set()
    async for event in handle.fetch_history_events():
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            ran_on.add(event.activity_task_started_event_attributes.identity)
    assert ran_on == {"fleet-worker-a", "fleet-worker-b"}


async def test_a_failing_agent_stays_due_and_the_others_are_dreamed(
    temporal_env: WorkflowEnvironment, fleet_queue: str, store: PostgresMemoryStore, engine
) -> None:
    good, broken = unique_ref(), "mem://broken/agent-1"
    await _seed(store, good)
    await _seed(store, broken)
    result, _ = await _fleet(temporal_env.client, fleet_queue, batchSize=10)
    assert result.progress.dreamed == 1 and result.progress.failed == 1
    assert result.progress.failed_refs == (broken,)
    assert await _distilled_count(store, good) == 1
    assert await _distilled_count(store, broken) == 0
    due = await store.fleet_selection.due(tenant=None, after=None, limit=10)
    assert [str(ref) for ref in due] == [broken]
    # Garbage collection still ran for the broken agent (its vault only stops the steps
    # that redact): nothing half-written, the entries are all still there.
    async with engine.connect() as connection:
        live = await connection.scalar(
            select(func.count()).where(tables.entries.c.memory_ref == broken)
        )
    assert live == 13


async def test_a_fleet_dream_proposes_a_routine_once_like_a_dream(
    temporal_env: WorkflowEnvironment,
    fleet_queue: str,
    store: PostgresMemoryStore,
    engine: AsyncEngine,
) -> None:
    """The fleet runs the dream's synthesis step: a weekly routine becomes one inert
    draft with its lifecycle workflow, and a second fleet run proposes nothing more."""
    ref = unique_ref()
    tenant = parse_memory_ref(ref).tenant
    await seed_routine(engine, ref, last_mondays(3))
    await _fleet(temporal_env.client, fleet_queue, tenant=tenant)
    (proposal,) = await store.proposals.list(tenant)
    assert proposal.state == "draft" and proposal.memory_ref == ref
    handle = temporal_env.client.get_workflow_handle(PLAIN.proposal(tenant, proposal.id))
    assert (await handle.describe()).status == WorkflowExecutionStatus.RUNNING
    await store.put(ref, note("Something new, so the agent is due again."))
    await _fleet(temporal_env.client, fleet_queue, tenant=tenant)
    assert [p.id for p in await store.proposals.list(tenant)] == [proposal.id]
    assert len(await store.events(ref, types=["proposal.created"])) == 1
    await handle.terminate("test over")
