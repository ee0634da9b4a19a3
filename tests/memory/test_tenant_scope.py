"""CTI-1 as a mechanism: every statement the store runs on a tenant-carrying table is
scoped by memory/storage/tenant_scope.py, and scoped to the caller's tenant.

A tour drives every operation of the store facade, the commitments, the API keys and the
agent inventory for one sentinel tenant while tests/support/scope_guard.py watches the engine.
It fails when a statement leaves a tenant-carrying table unscoped, when a scope binds
another tenant than the caller's, and when a tenant-carrying table of the schema (from
the SQLAlchemy metadata) is touched by no statement of the tour: a new table must come
with a repository the tour drives.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Table, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.sql import operators, visitors
from sqlalchemy.sql.elements import BinaryExpression, BindParameter, ColumnClause

from memory.commitments.change_feed import change_seq
from memory.fixture_runs.records import FixtureOutcome, RunEvent
from memory.storage import tables
from memory.storage.tenant_scope import scoped, tenant_carrying_tables, unscoped_tables
from memory.store import PostgresMemoryStore
from memory.tenants.agent_manifests import AgentManifestStore
from memory.tenants.api_keys import ApiKeyStore
from schemas.commitments import FireCommitmentRequest, InferCommitmentsRequest
from schemas.consolidation import ConsolidateMemoryRequest
from schemas.discovery import MemoryShape
from schemas.memory_entry import EntryChanges, ForgetRequest, MemoryQuery, Tier
from schemas.memory_ref import parse_memory_ref
from schemas.proposals import InstallRequest, ProposalRevision, TransitionRequest
from schemas.search import SearchRequest
from schemas.workflow_io import DistillMemoryRequest
from tests.support.factories import note
from tests.support.scope_guard import ScopeWatch, watch

SENTINEL_TENANT = "sentinel-tenant"
SENTINEL_REF = f"mem://{SENTINEL_TENANT}/agent-1"
# Maintained by triggers inside PostgreSQL (migrations 0005 and 0024), never written by a
# statement of ours; scoped by the memoryRef of the row that fired them.
TRIGGER_MAINTAINED = {
    "memory_ref_tier_counts",
    "memory_ref_tag_counts",
    "memory_term_counts",
    "memory_ref_term_totals",
}


def test_the_check_sees_an_unscoped_statement() -> None:
    """The check itself can fail: a read of entries without the scope is reported, the
    same read with it is not, and a join on tenant carries the scope across."""
    ENTRIES, LINEAGE = tables.entries, tables.lineage
    ref = parse_memory_ref(SENTINEL_REF)
    assert unscoped_tables(select(ENTRIES.c.id)) == {"memory_entries"}
    assert unscoped_tables(select(ENTRIES.c.id).where(ENTRIES.c.id == "x")) == {"memory_entries"}
    assert unscoped_tables(select(ENTRIES.c.id).where(scoped(ENTRIES, ref))) == set()
    joined = select(ENTRIES.c.id).where(scoped(ENTRIES, ref), LINEAGE.c.tenant == ENTRIES.c.tenant)
    assert unscoped_tables(joined) == set()
    assert unscoped_tables(select(ENTRIES.c.id).where(LINEAGE.c.tenant == ENTRIES.c.tenant)) == {
        "memory_entries",
        "memory_lineage",
    }
    # An insert in a CTE writes its tenant like any insert; a read beside it does not.
    REF_HEADS = tables.ref_heads
    claimed = insert(REF_HEADS).values(memory_ref=SENTINEL_REF, tenant=SENTINEL_TENANT, last_seq=1)
    claimed_cte = claimed.returning(REF_HEADS.c.last_seq).cte("claimed")
    assert unscoped_tables(select(claimed_cte.c.last_seq)) == set()
    assert unscoped_tables(select(claimed_cte.c.last_seq, ENTRIES.c.id)) == {"memory_entries"}


def _scope_binds(statement: Any) -> list[tuple[str, object]]:
    """(column, value) of every tenant / memory_ref comparison with a literal value."""
    found = []
    for element in visitors.iterate(statement):
        if not isinstance(element, BinaryExpression) or element.operator not in (
            operators.eq,
            operators.in_op,
        ):
            continue
        for column, other in ((element.left, element.right), (element.right, element.left)):
            if (
                isinstance(column, ColumnClause)
                and column.name in ("tenant", "memory_ref")
                and isinstance(other, BindParameter)
                and other.value is not None
            ):
                found.append((column.name, other.value))
    return found


def _touched_tables(scope_watch: ScopeWatch) -> set[str]:
    carrying = set(tenant_carrying_tables())
    return {
        element.name
        for statement, _, _ in scope_watch.statements
        for element in visitors.iterate(statement)
        if isinstance(element, Table) and element in carrying
    }


async def _tour(engine: AsyncEngine) -> None:
    """Every operation a host can run on one memoryRef, and on its tenant."""
    clock = [PostgresMemoryStore(engine).now()]
    store = PostgresMemoryStore(engine, clock=lambda: clock[0])
    ref = SENTINEL_REF
    first = await store.put(ref, note("Prefers window seats on long flights.", "travel"))
    await store.put_many(
        ref,
        [
            note("Prefers window seats on long flights.", "travel", tier=Tier.SEMANTIC),
            note("Remind me in 2 hours to call the landlord about the lease."),
            note("Scratch value", tier=Tier.WORKING),
            note("Short-lived code", expires_at=clock[0] + timedelta(seconds=5)),
        ],
    )
    keyed = await store.put(ref, note("Dark mode on", namespace="ui", key="theme"))
    await store.update(ref, keyed.id, EntryChanges(tags=("ui",)), expected_version=1)
    await store.get(ref, first.id)
    await store.get_by_key(ref, "ui", "theme")
    await store.list(ref)
    await store.query(ref, MemoryQuery(tags_any=("travel",)))
    await store.count(ref)
    await store.snapshot(ref, "snap-1")
    await store.snapshot_info(ref, "snap-1")
    await store.read_snapshot(ref, "snap-1")
    distilled = await store.distill(
        DistillMemoryRequest(memory_ref=ref, token_budget=5_000, run_key="tour")
    )
    await store.archive_checksum(ref, distilled.output_id or "")
    await store.index_digest(ref)
    await store.index_file(ref)
    await store.lineage(ref, first.id)
    passed = await store.consolidate(ConsolidateMemoryRequest(memory_ref=ref, run_key="tour"))
    await store.superseded(ref)
    await store.conflicts(ref)
    if passed.pass_id:
        await store.undo_consolidation(ref, passed.pass_id)
    await store.events(ref)
    await store.event_log.intent_events(SENTINEL_TENANT, "intent-1", since=clock[0])

    book = store.commitments
    await book.set_time_zone(SENTINEL_TENANT, "Europe/London")
    await book.time_zone(SENTINEL_TENANT)
    await book.update_settings(SENTINEL_TENANT, date_order="MDY")
    await book.settings(SENTINEL_TENANT)
    await book.infer(InferCommitmentsRequest(memory_ref=ref))
    (record,) = await book.list(ref)
    await book.show(ref, record.commitment_id)
    unarmed = await book.unarmed(parse_memory_ref(ref))
    await book.mark_armed(parse_memory_ref(ref), [row.commitment_id for row in unarmed])
    assert record.next_at is not None
    await book.fire(
        FireCommitmentRequest(
            commitment_id=record.commitment_id,
            memory_ref=ref,
            due_at=record.next_at,
            fired_at=record.next_at,
        )
    )
    await book.confirm(ref, record.commitment_id)
    await book.cancel(ref, record.commitment_id)
    async with engine.connect() as connection:
        await change_seq(connection, parse_memory_ref(ref))

    await _proposal_tour(store, clock)
    await store.search(SENTINEL_REF, SearchRequest(query="weekly report for Dana", mode="text"))

    keys = ApiKeyStore(engine)
    await keys.create(SENTINEL_TENANT, "tour")
    await keys.list(SENTINEL_TENANT)
    agents = AgentManifestStore(engine)
    await agents.register(SENTINEL_TENANT, "agent-1", MemoryShape())
    await agents.agents(SENTINEL_TENANT)

    runs = store.fixture_runs
    run_id = await runs.create(SENTINEL_TENANT, "conformance-noop")
    assert await runs.tenant_of(run_id) == SENTINEL_TENANT
    outcome = FixtureOutcome(events=[RunEvent("run.completed", {})])
    await runs.finish(SENTINEL_TENANT, run_id, outcome)
    await runs.get(SENTINEL_TENANT, run_id)
    await runs.events_after(SENTINEL_TENANT, run_id)
    await runs.page(SENTINEL_TENANT, limit=2, after=(datetime.now(UTC), run_id), status="failed")
    await runs.cancel(SENTINEL_TENANT, await runs.create(SENTINEL_TENANT, "conformance-noop"))

    await store.erase(ref, ForgetRequest(ids=(first.id,)))
    await store.forget(ref, ForgetRequest(subject="nobody", tenant_wide=True))
    clock[0] += timedelta(days=2)
    await store.collect_garbage(ref)
    await store.gc_expired(ref)
    await store.archive_working_memory(ref)
    await store.delete(ref, keyed.id)


async def _proposal_tour(store: PostgresMemoryStore, clock: list[datetime]) -> None:
    """A weekly request three weeks running, synthesized, revised, applied, rejected."""
    now = clock[0]
    for weeks in (3, 2, 1):
        clock[0] = now - timedelta(weeks=weeks)
        await store.put(SENTINEL_REF, note("Remind me to send Dana the weekly report."))
    clock[0] = now
    ref = parse_memory_ref(SENTINEL_REF)
    result = await store.proposals.synthesize(ref, "tour-run", "tour-queue")
    (proposal_id,) = result.created
    proposals = store.proposals
    await proposals.list(SENTINEL_TENANT, state="draft", memory_ref=ref)
    await proposals.revise(SENTINEL_TENANT, proposal_id, ProposalRevision(title="Weekly"))
    key = {"tenant": SENTINEL_TENANT, "proposal_id": proposal_id, "actor": "tour"}
    current = await proposals.get(SENTINEL_TENANT, proposal_id)
    install = InstallRequest(**key, artifact_sha256=current.artifact_sha256, mode="direct-rbac")
    await proposals.installable(install)
    await proposals.mark_applied(install, "temporal-schedule:tour")
    await proposals.note_reason(SENTINEL_TENANT, proposal_id, "tour")
    rejected = TransitionRequest(**key, to_state="rejected", expected=("applied",))
    await proposals.transition(rejected)


@pytest.mark.asyncio
async def test_every_statement_of_every_repository_is_scoped_to_the_caller(
    engine: AsyncEngine,
) -> None:
    scope_watch = watch(engine)
    await _tour(engine)

    assert scope_watch.violations == [], "\n".join(map(str, scope_watch.violations))
    for statement, _, _ in scope_watch.statements:
        for column, value in _scope_binds(statement):
            expected = SENTINEL_TENANT if column == "tenant" else SENTINEL_REF
            values = value if isinstance(value, list | tuple) else [value]
            assert all(v == expected for v in values), (column, statement)
    for statement, multiparams, params in scope_watch.statements:
        if statement.is_insert:  # the tenant a write stores comes from the caller's ref
            for row in [*multiparams, params]:
                for rows in row if isinstance(row, list) else [row]:
                    assert rows.get("tenant", SENTINEL_TENANT) == SENTINEL_TENANT
                    assert rows.get("memory_ref", SENTINEL_REF) == SENTINEL_REF
    every_table = {table.name for table in tenant_carrying_tables()}
    untouched = every_table - _touched_tables(scope_watch) - TRIGGER_MAINTAINED
    assert untouched == set(), "tenant-carrying tables no repository statement reached"


async def test_the_session_watch_catches_a_product_statement_without_the_scope(
    store: PostgresMemoryStore,
    tenant_scope_watch: ScopeWatch,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The check tests/conftest.py runs after every test can fail: with the scope taken
    out of one product read, the watch records that read (and not the test's own read
    across every tenant, which is the test's, not the product's)."""
    from sqlalchemy import true

    import memory.fleet.selection as selection

    ref = parse_memory_ref(SENTINEL_REF)
    before = len(tenant_scope_watch.violations)
    async with store.engine.connect() as connection:
        await connection.execute(select(tables.entries.c.id))  # the test's own read
    assert tenant_scope_watch.violations[before:] == []
    await store.fleet_selection.work_seq(ref)
    assert tenant_scope_watch.violations[before:] == []
    monkeypatch.setattr(selection, "scoped", lambda table, ref: true())
    await store.fleet_selection.work_seq(ref)
    found = tenant_scope_watch.violations[before:]
    # Taken back out, so this test's own teardown check does not fail it.
    del tenant_scope_watch.violations[before:]
    assert [tables_left for _, tables_left in found] == [{"memory_ref_changes"}]
