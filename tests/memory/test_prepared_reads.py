"""The store's hot reads on the pooled asyncpg connection (memory/storage/prepared.py) answer
exactly what the SQLAlchemy path with validated models answered: the same objects for an
entry with every field set, nothing expired, superseded or of another tenant; and they
fail as the engine fails (the same exception classes, parameters hidden, a dead
connection replaced).
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Integer, bindparam, literal_column, select, update
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.sql import visitors
from sqlalchemy.sql.elements import BindParameter, ColumnClause

from memory.entries.rows import live, to_host_entry
from memory.storage import tables
from memory.storage.engines import create_engine
from memory.storage.prepared import DriverConnection, Prepared
from memory.storage.tenant_scope import scope_params, scoped, scoped_by_params
from memory.store import PostgresMemoryStore
from schemas.memory_entry import (
    Attribution,
    HostMemoryEntry,
    MemoryEntry,
    MemoryListOptions,
    MemoryQuery,
    Priority,
    Tier,
)
from schemas.memory_ref import parse_memory_ref
from tests.support.factories import Clock, note, unique_ref
from tests.support.scope_guard import watch

ENTRIES = tables.entries
T0 = datetime(2026, 11, 27, 9, 0, 0, 123000, tzinfo=UTC)


async def _validated(engine: AsyncEngine, ref: str, entry_id: str) -> HostMemoryEntry:
    """The entry as the SQLAlchemy path built it before: every column, validated."""
    parsed = parse_memory_ref(ref)
    async with engine.connect() as connection:
        row = (
            await connection.execute(
                select(*tables.entry_columns).where(
                    scoped(ENTRIES, parsed), ENTRIES.c.id == entry_id
                )
            )
        ).one()
    return to_host_entry(row)


def _same(built: MemoryEntry, validated: MemoryEntry) -> None:
    """Equal as models and in every way a caller can look at one."""
    assert type(built) is type(validated)
    assert built == validated
    assert built.model_fields_set == validated.model_fields_set
    assert built.model_dump() == validated.model_dump()
    assert built.model_dump_json(by_alias=True) == validated.model_dump_json(by_alias=True)
    assert repr(built) == repr(validated)
    for name in type(validated).model_fields:
        assert type(getattr(built, name)) is type(getattr(validated, name)), name


def _openwop(entry: HostMemoryEntry) -> MemoryEntry:
    return entry.to_memory_entry()


async def test_every_read_builds_what_validation_built(engine: AsyncEngine) -> None:
    clock = Clock(T0)
    store = PostgresMemoryStore(engine, clock=clock, embedder=None)
    ref = unique_ref()
    stored = await store.put(
        ref,
        note(
            "Prefers the aisle seat; the café on 5th is closed on Mondays.",
            "travel",
            "café",
            tier=Tier.EPISODIC,
            namespace="prefs/travel",
            key="seat",
            pinned=True,
            priority=Priority.HIGH,
            subject="user-7",
            metadata={"source": {"kind": "chat", "turn": 3}, "score": 0.5, "list": [1, None]},
            expires_at=T0 + timedelta(days=3),
        ),
        attribution=Attribution(agent_id="agent-9", node_id="node-2", run_id="run-1"),
    )
    # A timestamp with sub-millisecond digits, as a row written by SQL could hold: the
    # reads floor it as the validated model's Instant does.
    async with engine.begin() as connection:
        await connection.execute(
            update(ENTRIES)
            .where(scoped(ENTRIES, parse_memory_ref(ref)), ENTRIES.c.id == stored.id)
            .values(updated_at=T0 + timedelta(microseconds=456789))
        )
    validated = await _validated(engine, ref, stored.id)
    assert validated.updated_at == T0 + timedelta(microseconds=456000)

    got = await store.get_entry(ref, stored.id, touch=False)
    assert got is not None
    _same(got, validated)
    by_key = await store.get_by_key(ref, "prefs/travel", "seat")
    assert by_key is not None
    _same(by_key, validated)
    (queried,) = await store.query(ref, MemoryQuery(tags_all=("café",), pinned=True))
    _same(queried, validated)
    (prefixed,) = await store.query(ref, MemoryQuery(namespace_prefix="prefs/", subject="user-7"))
    _same(prefixed, validated)

    openwop = await store.get(ref, stored.id)
    assert openwop is not None
    _same(openwop, _openwop(validated))
    (listed,) = await store.list(ref)
    _same(listed, _openwop(validated))
    (tagged,) = await store.list(ref, MemoryListOptions(tag="café", token_budget=1000))
    _same(tagged, _openwop(validated))


async def test_a_get_touches_a_capped_tier_only(engine: AsyncEngine) -> None:
    clock = Clock(T0)
    store = PostgresMemoryStore(engine, clock=clock, embedder=None)
    ref = unique_ref()
    episodic = await store.put(ref, note("Parks on level 2.", tier=Tier.EPISODIC))
    semantic = await store.put(ref, note("Allergic to peanuts.", tier=Tier.SEMANTIC))
    clock.now = T0 + timedelta(minutes=5)
    assert await store.get(ref, episodic.id) is not None
    assert await store.get(ref, semantic.id) is not None
    assert await store.get_entry(ref, semantic.id) is not None
    touched = await store.get_entry(ref, episodic.id, touch=False)
    untouched = await store.get_entry(ref, semantic.id, touch=False)
    assert touched is not None and touched.last_accessed_at == clock.now
    assert untouched is not None and untouched.last_accessed_at == T0


async def test_expired_and_superseded_entries_stay_hidden(engine: AsyncEngine) -> None:
    clock = Clock(T0)
    store = PostgresMemoryStore(engine, clock=clock, embedder=None)
    ref = unique_ref()
    expiring = await store.put(
        ref,
        note("Door code 4417 until Friday.", "home", expires_at=T0 + timedelta(seconds=1)),
    )
    superseded = await store.put(ref, note("Lives in Leeds.", "home", namespace="a", key="b"))
    async with engine.begin() as connection:
        await connection.execute(
            update(ENTRIES)
            .where(scoped(ENTRIES, parse_memory_ref(ref)), ENTRIES.c.id == superseded.id)
            .values(invalidated_at=T0)
        )
    assert await store.get(ref, superseded.id) is None
    assert await store.get_by_key(ref, "a", "b") is None
    assert [e.id for e in await store.list(ref)] == [expiring.id]
    clock.now = T0 + timedelta(seconds=1)  # expiresAt itself: no longer live
    for entry in (expiring, superseded):
        assert await store.get(ref, entry.id) is None
        assert await store.get_entry(ref, entry.id) is None
    assert await store.list(ref) == []
    assert await store.list(ref, MemoryListOptions(tag="home")) == []
    assert await store.query(ref, MemoryQuery(tags_any=("home",))) == []


async def test_a_ref_of_another_tenant_reads_nothing(engine: AsyncEngine) -> None:
    store = PostgresMemoryStore(engine, embedder=None)
    mine, theirs = unique_ref(agent="agent-1"), unique_ref(agent="agent-1")
    stored = await store.put(mine, note("Salary review in March.", "hr", namespace="n", key="k"))
    assert await store.get(theirs, stored.id) is None
    assert await store.get_entry(theirs, stored.id) is None
    assert await store.get_by_key(theirs, "n", "k") is None
    assert await store.list(theirs) == []
    assert await store.query(theirs, MemoryQuery(tags_all=("hr",))) == []
    # The same agent and scope under another tenant is another memoryRef.
    assert await store.get(mine.replace("mem://", "mem://x"), stored.id) is None
    assert await store.get(mine, stored.id) is not None


async def test_the_scope_watch_sees_prepared_reads_with_their_values(
    engine: AsyncEngine,
) -> None:
    store = PostgresMemoryStore(engine, embedder=None)
    ref = unique_ref()
    stored = await store.put(ref, note("Takes the 7:40 train.", tier=Tier.EPISODIC))
    scope_watch = watch(engine)
    await store.get(ref, stored.id)  # a SELECT and, episodic, the touch UPDATE
    await store.query(ref, MemoryQuery(tags_any=("x",)))
    tenant = parse_memory_ref(ref).tenant
    seen = [statement for statement, _, _ in scope_watch.statements]
    assert [s.is_select for s in seen] == [True, False, True]
    assert scope_watch.violations == []
    for statement in seen:
        bound = {
            bind.key: bind.value
            for bind in visitors.iterate(statement)
            if isinstance(bind, BindParameter)
        }
        assert bound["scope_tenant"] == tenant and bound["scope_ref"] == ref


def test_a_prepared_statement_must_be_scoped_and_take_named_parameters() -> None:
    with pytest.raises(TypeError, match="memory_entries"):
        Prepared(select(ENTRIES.c.id).where(ENTRIES.c.id == bindparam("id")))
    with pytest.raises(TypeError, match="plain named parameter"):
        Prepared(
            select(ENTRIES.c.id).where(
                scoped_by_params(ENTRIES), ENTRIES.c.id == "frozen-at-import"
            )
        )
    ok = Prepared(select(ENTRIES.c.id).where(scoped_by_params(ENTRIES), live(bindparam("now"))))
    assert ok.arguments({"scope_tenant": "t", "scope_ref": "mem://t/a", "now": T0}) == (
        "t",
        "mem://t/a",
        T0,
    )


async def test_a_failing_statement_raises_what_the_engine_raises(engine: AsyncEngine) -> None:
    ref = parse_memory_ref(unique_ref())
    one: ColumnClause[Any] = literal_column("1")
    statement = select(ENTRIES.c.id).where(
        scoped_by_params(ENTRIES), one / bindparam("zero", type_=Integer) == one
    )
    divide = Prepared(statement)
    # Not entries: a row must exist for the division to run.
    store = PostgresMemoryStore(engine, embedder=None)
    await store.put(str(ref), note("Weekly sync moved to Tuesdays."))
    values = {**scope_params(ref), "zero": 0}
    async with DriverConnection(engine) as connection:
        with pytest.raises(DBAPIError) as raised:
            await connection.fetch(divide, values)
        # The same connection still answers.
        assert len(await connection.fetch(divide, {**values, "zero": 1})) == 1
    async with engine.connect() as connection:
        with pytest.raises(DBAPIError) as by_the_engine:
            await connection.execute(statement, values)
    error = raised.value
    assert type(error) is type(by_the_engine.value)
    assert type(error.orig) is type(by_the_engine.value.orig)
    assert error.orig.sqlstate == "22012"  # type: ignore[union-attr]
    assert not error.connection_invalidated
    assert "parameters hidden" in str(error) and ref.tenant not in str(error)


async def test_a_connection_killed_under_the_pool_is_replaced(database_url: str) -> None:
    engine = create_engine(database_url, pool_size=1)
    try:
        store = PostgresMemoryStore(engine, embedder=None)
        ref = unique_ref()
        stored = await store.put(ref, note("Keeps receipts in the blue folder."))
        assert await store.get(ref, stored.id) is not None  # the pooled connection
        killer = create_async_engine(database_url, isolation_level="AUTOCOMMIT")
        try:
            async with killer.connect() as connection:
                await connection.exec_driver_sql(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
        finally:
            await killer.dispose()
        # The first read finds the connection dead (the idle ping only runs after a
        # second in the pool), fails as the engine fails, and the pool drops it.
        with pytest.raises(DBAPIError) as raised:
            await store.get(ref, stored.id)
        assert raised.value.connection_invalidated
        assert await store.get(ref, stored.id) is not None
    finally:
        await engine.dispose()


async def test_a_connection_the_pool_has_no_room_for_is_closed(
    database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Reads running together take overflow connections; returned to a full pool, those
    are closed (which awaits), not leaked."""
    engine = create_engine(database_url, pool_size=1)  # and one overflow connection
    try:
        store = PostgresMemoryStore(engine, embedder=None)
        ref = unique_ref()
        stored = await store.put(ref, note("Waters the ficus on Sundays."))
        with caplog.at_level(logging.ERROR, logger="sqlalchemy.pool"):
            found = await asyncio.gather(*(store.get(ref, stored.id) for _ in range(2)))
        assert all(entry is not None for entry in found)
        assert engine.pool.overflow() == 0  # type: ignore[attr-defined]
        assert not [r for r in caplog.records if r.name.startswith("sqlalchemy.pool")]
        checker = create_async_engine(database_url, isolation_level="AUTOCOMMIT")
        try:
            async with checker.connect() as connection:
                backends = await connection.exec_driver_sql(
                    "SELECT count(*) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
                assert backends.scalar_one() == 1  # the pooled one; the overflow one closed
        finally:
            await checker.dispose()
    finally:
        await engine.dispose()
