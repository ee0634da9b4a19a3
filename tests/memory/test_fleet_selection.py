"""Which agents a fleet dream has work for (memory/fleet/selection.py, migration 0020), and the
fleet batch's exactly-once: a retried batch and a resumed one apply each agent once."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.testing import ActivityEnvironment, WorkflowEnvironment

from activities.commitment_activities import CommitmentActivities
from activities.fleet_activities import FleetActivities
from activities.memory_activities import MemoryActivities
from activities.proposal_activities import ProposalActivities
from memory.fleet.maintenance_writes import maintenance_writes
from memory.redaction.vault import StaticSecretVault
from memory.storage import tables
from memory.store import PostgresMemoryStore
from schemas.fleet import AgentDream, DreamAgentsRequest, DreamAgentsResult
from schemas.memory_ref import parse_memory_ref
from tests.support.factories import note, unique_ref


async def _due(store: PostgresMemoryStore, **options: Any) -> list[str]:
    refs = await store.fleet_selection.due(tenant=None, after=None, limit=100, **options)
    return [str(ref) for ref in refs]


async def test_a_write_while_the_agent_is_dreamed_keeps_it_due(
    store: PostgresMemoryStore,
) -> None:
    ref = unique_ref()
    await store.put(ref, note("The supplier ships on Tuesdays."))
    before = await store.fleet_selection.work_seq(parse_memory_ref(ref))
    await store.put(ref, note("The supplier now ships on Wednesdays."))
    await store.fleet_selection.mark_dreamed(parse_memory_ref(ref), before)
    assert await _due(store) == [ref]
    await store.fleet_selection.mark_dreamed(
        parse_memory_ref(ref), await store.fleet_selection.work_seq(parse_memory_ref(ref))
    )
    assert await _due(store) == []


async def test_maintenance_writes_are_not_new_work_and_others_are(
    store: PostgresMemoryStore,
) -> None:
    ref = parse_memory_ref(unique_ref())
    await store.put(ref, note("The office closes at six."))
    await store.fleet_selection.mark_dreamed(ref, await store.fleet_selection.work_seq(ref))
    with maintenance_writes():
        await store.put(ref, note("A distilled summary would be written like this."))
    assert await _due(store) == []
    await store.put(ref, note("The office now closes at seven."))
    assert await _due(store) == [str(ref)]


async def test_an_entry_falling_due_for_ttl_makes_its_agent_due_without_a_write(
    store: PostgresMemoryStore,
) -> None:
    ref = parse_memory_ref(unique_ref())
    expires = datetime.now(UTC) + timedelta(hours=1)
    await store.put(ref, note("A door code valid for an hour.", expires_at=expires))
    await store.fleet_selection.mark_dreamed(ref, await store.fleet_selection.work_seq(ref))
    assert await _due(store) == []
    assert await _due(store, now=expires + timedelta(seconds=1)) == [str(ref)]


async def test_pages_follow_the_cursor_in_tenant_then_ref_order(
    store: PostgresMemoryStore,
) -> None:
    refs = sorted(unique_ref(tenant, agent) for tenant in ("ta", "tb") for agent in ("a1", "a2"))
    for ref in reversed(refs):
        await store.put(ref, note("Something new."))
    first = await store.fleet_selection.due(tenant=None, after=None, limit=3)
    rest = await store.fleet_selection.due(tenant=None, after=first[-1], limit=3)
    assert [str(ref) for ref in first + rest] == refs
    only_tb = await store.fleet_selection.due(tenant="tb", after=None, limit=10)
    assert [str(ref) for ref in only_tb] == refs[2:]


def _fleet(store: PostgresMemoryStore, temporal_env: WorkflowEnvironment) -> FleetActivities:
    memory = MemoryActivities(store, StaticSecretVault({}))
    commitments = CommitmentActivities(store.commitments, temporal_env.client, "fleet-unused")
    proposals = ProposalActivities(
        store.proposals,
        temporal_env.client,
        task_queue="fleet-unused",
        activation="direct-rbac",
        vault=StaticSecretVault({}),
    )
    return FleetActivities(store.fleet_selection, memory, commitments, proposals)


async def _counts(engine: AsyncEngine, ref: str) -> tuple[int, int, int]:
    async with engine.connect() as connection:

        async def count(table: Any) -> int:
            statement = select(func.count()).select_from(table)
            return int(await connection.scalar(statement.where(table.c.memory_ref == ref)) or 0)

        return (
            await count(tables.archives),
            await count(tables.consolidation_passes),
            await count(tables.commitments),
        )


async def test_a_retried_batch_applies_each_agent_once(
    store: PostgresMemoryStore, engine: AsyncEngine, temporal_env: WorkflowEnvironment
) -> None:
    refs = [unique_ref() for _ in range(2)]
    for ref in refs:
        await store.put_many(
            ref,
            [note(f"Fact {i} about the account.") for i in range(5)]
            + [note("Remind me in 3 days to renew the domain")],
        )
    request = DreamAgentsRequest(
        memory_refs=tuple(parse_memory_ref(ref) for ref in refs),
        token_budget=8000,
        run_key="fleet/test-run",
    )
    fleet = _fleet(store, temporal_env)
    first: DreamAgentsResult = await ActivityEnvironment().run(fleet.dream_agents, request)
    assert [agent.status for agent in first.agents] == ["dreamed", "dreamed"]
    after_first = [await _counts(engine, ref) for ref in refs]
    assert after_first == [(1, 1, 1), (1, 1, 1)]
    # The same batch delivered again (a retry after its completion was lost): each
    # step finds what the first attempt recorded under its run key.
    again: DreamAgentsResult = await ActivityEnvironment().run(fleet.dream_agents, request)
    assert [agent.sources for agent in again.agents] == [agent.sources for agent in first.agents]
    assert [await _counts(engine, ref) for ref in refs] == after_first


async def test_a_resumed_batch_starts_after_the_agents_its_heartbeat_names(
    store: PostgresMemoryStore, engine: AsyncEngine, temporal_env: WorkflowEnvironment
) -> None:
    done, left = unique_ref(), unique_ref()
    for ref in (done, left):
        await store.put_many(ref, [note(f"Fact {i} about the account.") for i in range(5)])
    finished = AgentDream(memory_ref=done, status="dreamed", sources=5)
    env = ActivityEnvironment()
    env.info = dataclasses.replace(
        env.info,
        heartbeat_details=[{"done": 1, "agents": [finished.model_dump(by_alias=True)]}],
    )
    beats: list[Any] = []
    env.on_heartbeat = lambda *details: beats.extend(details)
    result: DreamAgentsResult = await env.run(
        _fleet(store, temporal_env).dream_agents,
        DreamAgentsRequest(
            memory_refs=(parse_memory_ref(done), parse_memory_ref(left)),
            token_budget=8000,
            run_key="fleet/resumed",
        ),
    )
    assert result.agents[0] == finished
    assert result.agents[1].status == "dreamed" and result.agents[1].sources == 5
    assert (await _counts(engine, done))[0] == 0  # the finished agent was not run again
    assert beats[-1]["done"] == 2
