"""Capacity cost and order: a write to a capped tier reads that tier's entries only.

A put into the working or episodic tier counts the tier and evicts under the tier lock.
That work must be bounded by the tier's capacity, not by the memoryRef's size: a ref may
hold any number of semantic entries. The cost is checked by the rows the statements read
(EXPLAIN ANALYZE), not by timing; the eviction order (expired, lowest priority, least
recently used, id) is checked on the entries evicted.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.store import PostgresMemoryStore, StoreLimits
from schemas.errors import CapacityExceeded
from schemas.memory_entry import MemoryQuery, NewMemoryEntry, Priority, Tier
from tests.support.factories import unique_ref

CAPACITY = 20
OTHER_ENTRIES = 3000

# These tests exercise the eviction machinery on the working tier, which by default
# rejects at capacity instead (RFC-0015 §9.4; see test_a_full_working_tier_rejects).
EVICTING_WORKING = frozenset({Tier.WORKING, Tier.EPISODIC})


def _entry(content: str, **fields: Any) -> NewMemoryEntry:
    # Not tests.support.factories.note: these short texts need no history audit.
    return NewMemoryEntry(content=content, **fields)


@contextmanager
def _statements(engine: AsyncEngine) -> Iterator[list[tuple[str, Any]]]:
    """Every statement (SQL text and driver parameters) the engine runs inside the block."""
    seen: list[tuple[str, Any]] = []

    def record(conn: Any, cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        seen.append((statement, parameters))

    event.listen(engine.sync_engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", record)


def _entry_rows_read(plan: dict[str, Any]) -> int:
    """Rows of memory_entries a plan read: those it kept plus those its filters dropped."""
    total = 0
    if plan.get("Relation Name") == "memory_entries" and "Scan" in plan["Node Type"]:
        per_loop = (
            plan.get("Actual Rows", 0)
            + plan.get("Rows Removed by Filter", 0)
            + plan.get("Rows Removed by Index Recheck", 0)
        )
        total += int(per_loop * plan.get("Actual Loops", 1))
    for child in plan.get("Plans", ()):
        total += _entry_rows_read(child)
    return total


def _indexes_used(plan: dict[str, Any]) -> set[str]:
    used = {plan["Index Name"]} if "Index Name" in plan else set()
    for child in plan.get("Plans", ()):
        used |= _indexes_used(child)
    return used


# Puts the tier one over capacity again (the put being explained already made room), so
# the explained statements pick and evict a victim as they did.
_ONE_MORE = """
INSERT INTO memory_entries (tenant, memory_ref, id, content, content_sha256, tags, tier,
    version, pinned, priority, metadata, created_at, updated_at, last_accessed_at)
SELECT tenant, memory_ref, 'extra', content, content_sha256, tags, tier,
    1, false, 1, '{}', created_at, updated_at, last_accessed_at
FROM memory_entries WHERE memory_ref = $1 AND tier = 'episodic' LIMIT 1
"""


async def _explain(
    engine: AsyncEngine, ref: str, statement: str, parameters: Any
) -> dict[str, Any]:
    """EXPLAIN ANALYZE a captured statement in a transaction that is rolled back."""
    async with engine.connect() as connection:
        driver = (await connection.get_raw_connection()).driver_connection
        assert driver is not None
        transaction = driver.transaction()
        await transaction.start()
        try:
            await driver.execute(_ONE_MORE, ref)
            raw = await driver.fetchval(
                "EXPLAIN (ANALYZE, FORMAT JSON) " + statement, *(parameters or ())
            )
        finally:
            await transaction.rollback()
    # SQLAlchemy registers a json codec on its connections; a bare one returns text.
    document = json.loads(raw) if isinstance(raw, str) else raw
    return dict(document[0]["Plan"])


async def _capped_put_plans(
    engine: AsyncEngine, store: PostgresMemoryStore, ref: str
) -> list[dict[str, Any]]:
    """The plans of the statements an episodic put into a full tier reads entries with."""
    with _statements(engine) as seen:
        await store.put(ref, _entry("one more", tier=Tier.EPISODIC))
    reads = [
        (sql, params)
        for sql, params in seen
        if "memory_entries" in sql and not sql.lstrip().upper().startswith("INSERT")
    ]
    assert reads, "the put ran no statement reading the tier"
    return [await _explain(engine, ref, sql, params) for sql, params in reads]


async def _ref_with_a_full_tier_and_many_others(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> str:
    ref = unique_ref()
    for start in range(0, OTHER_ENTRIES, 1000):
        batch = [_entry(f"fact {start + i}", tier=Tier.SEMANTIC) for i in range(1000)]
        await store.put_many(ref, batch)
    await store.put_many(ref, [_entry(f"event {i}") for i in range(CAPACITY)])
    # What autovacuum's analyze would know shortly after such a load.
    async with engine.begin() as connection:
        await connection.execute(text("ANALYZE memory_entries"))
    return ref


async def test_a_capped_put_reads_only_its_tier(engine: AsyncEngine) -> None:
    store = PostgresMemoryStore(engine, limits=StoreLimits(capacity={Tier.EPISODIC: CAPACITY}))
    ref = await _ref_with_a_full_tier_and_many_others(engine, store)
    plans = await _capped_put_plans(engine, store, ref)
    read = sum(_entry_rows_read(plan) for plan in plans)
    # Counting the tier reads it once; picking and deleting a victim reads a few rows
    # more (the whole tier again at worst). The ref's other 3,000 entries: never.
    assert CAPACITY < read <= 2 * CAPACITY + 10, f"read {read} rows for a tier of {CAPACITY}"
    assert "ix_entries_ref_tier" in set().union(*map(_indexes_used, plans))
    assert await store.count(ref, MemoryQuery(tier=Tier.EPISODIC)) == CAPACITY


async def test_expired_entries_are_evicted_first(engine: AsyncEngine) -> None:
    now = [datetime(2026, 11, 23, 12, 0, tzinfo=UTC)]
    store = PostgresMemoryStore(
        engine, limits=StoreLimits(capacity={Tier.EPISODIC: 3}), clock=lambda: now[0]
    )
    ref = unique_ref()
    short_lived = await store.put(
        ref,
        _entry("short lived", priority=Priority.HIGH, expires_at=now[0] + timedelta(minutes=1)),
    )
    now[0] += timedelta(seconds=1)
    low = await store.put(ref, _entry("low priority", priority=Priority.LOW))
    now[0] += timedelta(seconds=1)
    await store.put(ref, _entry("normal"))
    now[0] += timedelta(minutes=2)  # short_lived has expired; nothing else has
    await store.put(ref, _entry("newest"))
    evicted = [e.payload["memoryId"] for e in await store.events(ref) if e.type == "memory.evicted"]
    assert evicted == [short_lived.id]
    now[0] += timedelta(seconds=1)
    await store.put(ref, _entry("newer still"))
    evicted = [e.payload["memoryId"] for e in await store.events(ref) if e.type == "memory.evicted"]
    assert evicted == [short_lived.id, low.id]


async def test_ties_break_by_id_and_new_entries_never_make_room(engine: AsyncEngine) -> None:
    store = PostgresMemoryStore(
        engine, limits=StoreLimits(capacity={Tier.WORKING: 3}, evicting=EVICTING_WORKING)
    )
    ref = unique_ref()
    # One batch: the same priority and last access for all three, so the id decides.
    await store.put_many(
        ref, [_entry(f"batch {i}", id=i, tier=Tier.WORKING) for i in ("b", "a", "c")]
    )
    # Low priority would be evicted first, but entries just written never make room for
    # themselves: two of the old ones go instead, lowest ids first.
    await store.put_many(
        ref,
        [_entry(f"new {i}", id=i, tier=Tier.WORKING, priority=Priority.LOW) for i in ("y", "z")],
    )
    kept = {e.id for e in await store.query(ref, MemoryQuery(tier=Tier.WORKING))}
    assert kept == {"c", "y", "z"}
    evicted = [e.payload["memoryId"] for e in await store.events(ref) if e.type == "memory.evicted"]
    assert evicted == ["a", "b"]


async def test_other_tiers_neither_count_nor_get_evicted(engine: AsyncEngine) -> None:
    store = PostgresMemoryStore(
        engine,
        limits=StoreLimits(capacity={Tier.WORKING: 2, Tier.EPISODIC: 2}, evicting=EVICTING_WORKING),
    )
    ref = unique_ref()
    episodic = [await store.put(ref, _entry(f"episode {i}")) for i in range(2)]
    for i in range(4):
        await store.put(ref, _entry(f"scratch {i}", tier=Tier.WORKING))
    assert await store.count(ref, MemoryQuery(tier=Tier.WORKING)) == 2
    assert {e.id for e in await store.query(ref, MemoryQuery(tier=Tier.EPISODIC))} == {
        e.id for e in episodic
    }


async def test_a_batch_larger_than_the_tier_is_refused(engine: AsyncEngine) -> None:
    store = PostgresMemoryStore(engine, limits=StoreLimits(capacity={Tier.EPISODIC: 2}))
    ref = unique_ref()
    with pytest.raises(CapacityExceeded):
        await store.put_many(ref, [_entry(f"e{i}") for i in range(3)])
    assert await store.count(ref) == 0
