"""TTL: an entry past expiresAt never surfaces, to the millisecond, on any read path."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event, func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.storage import tables
from memory.storage.database import begins_a_transaction
from memory.store import PostgresMemoryStore
from schemas.errors import InvalidInput
from schemas.memory_entry import MemoryListOptions, MemoryQuery
from tests.support.factories import note, unique_ref

T0 = datetime(2026, 11, 23, 12, 0, 0, tzinfo=UTC)
MS = timedelta(milliseconds=1)


class SteppingClock:
    def __init__(self, start: datetime) -> None:
        self.current = start

    def __call__(self) -> datetime:
        return self.current


async def _visible_everywhere(store: PostgresMemoryStore, ref: str, entry_id: str) -> list[bool]:
    snapshot = await store.snapshot(ref, f"snap-{store.now().timestamp()}")
    return [
        await store.get(ref, entry_id) is not None,
        any(e.id == entry_id for e in await store.list(ref)),
        any(e.id == entry_id for e in await store.list(ref, MemoryListOptions(tag="ttl"))),
        any(e.id == entry_id for e in await store.query(ref, MemoryQuery(tags_all=("ttl",)))),
        any(e.id == entry_id for e in await store.query(ref, MemoryQuery(tags_any=("ttl", "x")))),
        await store.count(ref, MemoryQuery(tags_all=("ttl",))) == 1,
        snapshot.entry_count == 1,
    ]


async def test_expiry_is_exact_to_the_millisecond(engine: AsyncEngine) -> None:
    clock = SteppingClock(T0)
    store = PostgresMemoryStore(engine, clock=clock)
    ref = unique_ref()
    expires = T0 + timedelta(seconds=5)
    entry = await store.put(ref, note("short lived", "ttl", expires_at=expires))

    clock.current = expires - MS
    assert await _visible_everywhere(store, ref, entry.id) == [True] * 7
    clock.current = expires
    assert await _visible_everywhere(store, ref, entry.id) == [False] * 7
    clock.current = expires + MS
    assert await _visible_everywhere(store, ref, entry.id) == [False] * 7


async def test_sub_millisecond_input_is_floored(engine: AsyncEngine) -> None:
    clock = SteppingClock(T0)
    store = PostgresMemoryStore(engine, clock=clock)
    ref = unique_ref()
    entry = await store.put(ref, note("x", expires_at=T0 + timedelta(seconds=1, microseconds=999)))
    assert entry.expires_at == T0 + timedelta(seconds=1)
    clock.current = T0 + timedelta(seconds=1)
    assert await store.get(ref, entry.id) is None


async def test_expired_entries_are_not_stored(store: PostgresMemoryStore) -> None:
    with pytest.raises(InvalidInput, match="expiresAt"):
        await store.put(unique_ref(), note("stale", expires_at=store.now() - MS))


async def test_gc_removes_expired_rows_and_records_memory_expired(engine: AsyncEngine) -> None:
    clock = SteppingClock(T0)
    store = PostgresMemoryStore(engine, clock=clock)
    ref, other = unique_ref(), unique_ref()
    doomed = await store.put(ref, note("doomed", expires_at=T0 + timedelta(minutes=1)))
    kept = await store.put(ref, note("kept"))
    await store.put(other, note("elsewhere", expires_at=T0 + timedelta(minutes=1)))
    clock.current = T0 + timedelta(minutes=2)
    assert await store.gc_expired(ref) == 1
    async with engine.connect() as connection:
        remaining = (
            (
                await connection.execute(
                    select(tables.entries.c.id).where(tables.entries.c.memory_ref == ref)
                )
            )
            .scalars()
            .all()
        )
        other_rows = (
            await connection.execute(
                select(func.count()).where(tables.entries.c.memory_ref == other)
            )
        ).scalar_one()
    assert remaining == [kept.id]
    assert other_rows == 1  # scoped GC left the other ref alone
    expired = [e for e in await store.events(ref) if e.type == "memory.expired"]
    assert [e.payload["memoryId"] for e in expired] == [doomed.id]
    assert "content" not in expired[0].payload
    assert await store.gc_expired() == 1  # the unscoped sweep takes the rest


async def test_collecting_garbage_with_nothing_expired_writes_nothing(engine: AsyncEngine) -> None:
    """Most nights nothing has expired: the dream's garbage step is then one read, no
    transaction (it was three, each with its settings and locks); once something
    expires, it is collected."""
    clock = SteppingClock(T0)
    store = PostgresMemoryStore(engine, clock=clock)
    ref = unique_ref()
    doomed = await store.put(ref, note("doomed", expires_at=T0 + timedelta(minutes=1)))
    await store.put(ref, note("kept"))
    transactions: list[object] = []

    def count_transaction(connection: Any) -> None:
        if begins_a_transaction(connection):
            transactions.append(connection)

    event.listen(engine.sync_engine, "begin", count_transaction)
    try:
        report = await store.collect_garbage(ref)
        assert (report.expired_entries, transactions) == (0, [])
        clock.current = T0 + timedelta(minutes=2)
        report = await store.collect_garbage(ref)
    finally:
        event.remove(engine.sync_engine, "begin", count_transaction)
    assert report.expired_entries == 1
    assert transactions
    assert await store.get(ref, doomed.id) is None
