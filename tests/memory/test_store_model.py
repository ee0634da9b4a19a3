"""OpenIntent RFC-0015 model: versions, tag queries, pinning, capacity + LRU, limits,
and the event log."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.storage import tables
from memory.store import PostgresMemoryStore, StoreLimits
from schemas.errors import (
    CapacityExceeded,
    ContentTooLarge,
    DuplicateKey,
    EntryNotFound,
    InvalidInput,
    VersionConflict,
)
from schemas.memory_entry import (
    MAX_CONTENT_BYTES,
    Attribution,
    EntryChanges,
    MemoryQuery,
    NewMemoryEntry,
    Priority,
    Tier,
)
from tests.support.factories import note, unique_ref

# These tests exercise the eviction machinery on the working tier, which by default
# rejects at capacity instead (RFC-0015 §9.4; see test_a_full_working_tier_rejects).
EVICTING_WORKING = frozenset({Tier.WORKING, Tier.EPISODIC})


async def _count_rows(engine: AsyncEngine, ref: str) -> int:
    async with engine.connect() as connection:
        return int(
            (
                await connection.execute(
                    select(func.count()).where(tables.entries.c.memory_ref == ref)
                )
            ).scalar_one()
        )


async def test_round_trip_of_the_wire_shape(store: PostgresMemoryStore) -> None:
    ref = unique_ref()
    stored = await store.put(ref, note("prefers email follow-up", "preference", "email"))
    got = await store.get(ref, stored.id)
    assert got is not None
    wire = got.to_wire()
    assert set(wire) == {"id", "content", "tags", "createdAt"}
    assert wire["content"] == "prefers email follow-up"
    assert wire["tags"] == ["preference", "email"]
    assert str(wire["createdAt"]).endswith("Z")


async def test_update_requires_the_current_version(store: PostgresMemoryStore) -> None:
    ref = unique_ref()
    entry = await store.put(ref, note("v1"))
    v2 = await store.update(ref, entry.id, EntryChanges(content="v2"), expected_version=1)
    assert v2.version == 2 and v2.content == "v2"
    with pytest.raises(VersionConflict) as info:
        await store.update(ref, entry.id, EntryChanges(content="stale"), expected_version=1)
    assert info.value.current_version == 2
    assert "stale" not in str(info.value)
    current = await store.get(ref, entry.id)
    assert current is not None and current.content == "v2"
    with pytest.raises(EntryNotFound):
        await store.update(ref, "missing", EntryChanges(content="x"), expected_version=1)


async def test_namespace_key_is_unique_per_memory_ref(store: PostgresMemoryStore) -> None:
    ref = unique_ref()
    await store.put(ref, note("a", namespace="invoices", key="batch-1"))
    with pytest.raises(DuplicateKey) as info:
        await store.put(ref, note("b", namespace="invoices", key="batch-1"))
    assert info.value.field == "key"
    # Another memoryRef may reuse the key.
    await store.put(unique_ref(), note("c", namespace="invoices", key="batch-1"))
    found = await store.get_by_key(ref, "invoices", "batch-1")
    assert found is not None and found.content == "a"
    with pytest.raises(InvalidInput, match="namespace and key"):
        await store.put(ref, note("d", namespace="invoices"))


async def test_tag_queries_and_or(store: PostgresMemoryStore) -> None:
    ref = unique_ref()
    both = await store.put(ref, note("both", "batch", "invoices"))
    batch = await store.put(ref, note("batch only", "batch"))
    await store.put(ref, note("neither", "other"))
    all_ids = {e.id for e in await store.query(ref, MemoryQuery(tags_all=("batch", "invoices")))}
    any_ids = {e.id for e in await store.query(ref, MemoryQuery(tags_any=("batch", "invoices")))}
    assert all_ids == {both.id}
    assert any_ids == {both.id, batch.id}
    combined = await store.query(
        ref, MemoryQuery(tags_all=("batch",), tags_any=("invoices", "zzz"))
    )
    assert [e.id for e in combined] == [both.id]
    assert await store.count(ref, MemoryQuery(tags_any=("batch",))) == 2


async def test_capacity_evicts_lru_and_never_pinned(engine: AsyncEngine) -> None:
    store = PostgresMemoryStore(
        engine, limits=StoreLimits(capacity={Tier.WORKING: 3}, evicting=EVICTING_WORKING)
    )
    ref = unique_ref()
    pinned = await store.put(ref, note("pinned", tier=Tier.WORKING, pinned=True))
    old = await store.put(ref, note("old", tier=Tier.WORKING))
    recent = await store.put(ref, note("recent", tier=Tier.WORKING))
    await store.get(ref, old.id)  # touching makes `old` recently used
    await store.get(ref, pinned.id)
    newest = await store.put(ref, note("newest", tier=Tier.WORKING))
    remaining = {e.id for e in await store.query(ref, MemoryQuery(tier=Tier.WORKING))}
    assert remaining == {pinned.id, old.id, newest.id}
    evicted = [e for e in await store.events(ref) if e.type == "memory.evicted"]
    assert [e.payload["memoryId"] for e in evicted] == [recent.id]
    # Semantic memory is not capacity-limited.
    for i in range(5):
        await store.put(ref, note(f"fact {i}", tier=Tier.SEMANTIC))
    assert await store.count(ref, MemoryQuery(tier=Tier.SEMANTIC)) == 5


async def test_low_priority_is_evicted_first(engine: AsyncEngine) -> None:
    store = PostgresMemoryStore(engine, limits=StoreLimits(capacity={Tier.EPISODIC: 2}))
    ref = unique_ref()
    low = await store.put(ref, note("low, recent", priority=Priority.LOW))
    high = await store.put(ref, note("high", priority=Priority.HIGH))
    await store.get(ref, low.id)
    await store.put(ref, note("third"))
    ids = {e.id for e in await store.query(ref, MemoryQuery())}
    assert low.id not in ids and high.id in ids


async def test_full_of_pinned_entries_rejects_without_partial_write(engine: AsyncEngine) -> None:
    store = PostgresMemoryStore(engine, limits=StoreLimits(capacity={Tier.WORKING: 2}))
    ref = unique_ref()
    for i in range(2):
        await store.put(ref, note(f"pin {i}", tier=Tier.WORKING, pinned=True))
    events_before = len(await store.events(ref))
    with pytest.raises(CapacityExceeded, match="capacity of 2"):
        await store.put(ref, note("no room", tier=Tier.WORKING))
    assert await _count_rows(engine, ref) == 2
    assert len(await store.events(ref)) == events_before


async def test_content_cap_names_the_field_and_limit(store: PostgresMemoryStore) -> None:
    ref = unique_ref()
    await store.put(ref, note("x" * MAX_CONTENT_BYTES))  # exactly at the limit is fine
    with pytest.raises(ContentTooLarge) as info:
        await store.put(ref, note("é" * (MAX_CONTENT_BYTES // 2 + 1)))
    message = str(info.value)
    assert "content" in message and str(MAX_CONTENT_BYTES) in message
    assert "é" not in message
    # The model refuses NUL when it is built; model_construct skips that, so the store's
    # own check is what answers here.
    with pytest.raises(InvalidInput, match="content"):
        await store.put(ref, NewMemoryEntry.model_construct(content="nul\x00byte"))


async def test_bad_batch_stores_nothing(engine: AsyncEngine, store: PostgresMemoryStore) -> None:
    ref = unique_ref()
    existing = await store.put(ref, note("keep me", id="fixed"))
    with pytest.raises(DuplicateKey):
        await store.put_many(ref, [note("new one"), NewMemoryEntry(id="fixed", content="dup")])
    with pytest.raises(ContentTooLarge):
        await store.put_many(ref, [note("fine"), note("y" * (MAX_CONTENT_BYTES + 1))])
    assert await _count_rows(engine, ref) == 1
    kept = await store.get(ref, existing.id)
    assert kept is not None and kept.content == "keep me"


async def test_event_log_is_monotonic_content_free_and_append_only(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    entry = await store.put(
        ref, note("the body text", "t1"), attribution=Attribution(agent_id="agent-1", node_id="n1")
    )
    await store.update(ref, entry.id, EntryChanges(tags=("t2",)), expected_version=1)
    written = (await store.events(ref))[1]
    await store.delete(ref, entry.id)
    events = await store.events(ref)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert [e.type for e in events] == [
        "memory.created",
        "memory.written",
        "memory.updated",
        "memory.written",
        "memory.deleted",
    ]
    assert written.payload == {
        "memoryRef": ref,
        "memoryId": entry.id,
        "nodeId": "n1",
        "agentId": "agent-1",
        "tags": ["t1"],
    }
    # A delete is an erasure (issue 20): the tags only the deleted entry carried are
    # forgotten in the log too; sequence, type and ids stay.
    assert events[1].payload == {**written.payload, "tags": ["[FORGOTTEN]"]}
    assert events[2].payload["previousVersion"] == 1
    assert all("the body text" not in str(e.payload) for e in events)
    async with engine.connect() as connection:
        with pytest.raises(DBAPIError, match="append-only"):
            await connection.execute(text("DELETE FROM memory_events"))


async def test_concurrent_writers_get_distinct_sequence_numbers(
    store: PostgresMemoryStore,
) -> None:
    import asyncio

    ref = unique_ref()
    await asyncio.gather(*(store.put(ref, note(f"n{i}")) for i in range(20)))
    seqs = [e.seq for e in await store.events(ref)]
    assert seqs == list(range(1, 41))


async def test_snapshot_is_fixed_and_idempotent(store: PostgresMemoryStore) -> None:
    ref = unique_ref()
    first = await store.put(ref, note("first"))
    await store.put(ref, note("second"))
    snap = await store.snapshot(ref, "run-1")
    assert snap.entry_count == 2
    await store.put(ref, note("after the snapshot"))
    await store.update(ref, first.id, EntryChanges(content="edited"), expected_version=1)
    again = await store.snapshot(ref, "run-1")
    assert again == snap
    items = await store.read_snapshot(ref, "run-1")
    assert [i.content for i in items] == ["first", "second"]
    # Another tenant cannot read it, even knowing the id.
    assert await store.read_snapshot("mem://intruder/agent-1", "run-1") == []
    other = await store.snapshot(ref, "run-2")
    assert other.entry_count == 3 and other.checksum != snap.checksum


async def test_get_records_access_only_where_eviction_reads_it(engine: AsyncEngine) -> None:
    from datetime import UTC, datetime

    now = [datetime(2026, 11, 23, 12, 0, tzinfo=UTC)]
    store = PostgresMemoryStore(engine, clock=lambda: now[0])
    ref = unique_ref()
    episodic = await store.put(ref, note("capped tier"))
    semantic = await store.put(ref, note("uncapped tier", tier=Tier.SEMANTIC))
    now[0] += timedelta(minutes=5)
    await store.get(ref, episodic.id)
    await store.get(ref, semantic.id)
    touched = await store.get_entry(ref, episodic.id, touch=False)
    untouched = await store.get_entry(ref, semantic.id, touch=False)
    assert touched is not None and touched.last_accessed_at == now[0]
    assert untouched is not None and untouched.last_accessed_at == semantic.last_accessed_at


async def test_working_memory_is_archived_at_task_end(store: PostgresMemoryStore) -> None:
    ref = unique_ref()
    working = await store.put(ref, note("scratch: batch 3 of 7 done", tier=Tier.WORKING))
    kept = await store.put(ref, note("lesson learned", tier=Tier.EPISODIC))
    assert await store.archive_working_memory(ref) == 1
    assert await store.get(ref, working.id) is None
    assert await store.get(ref, kept.id) is not None
    archived = [e for e in await store.events(ref) if e.type == "memory.archived"]
    assert [e.payload["memoryId"] for e in archived] == [working.id]
    assert archived[0].payload["reason"] == "task-complete"
    assert "scratch" not in str(archived[0].payload)


async def test_editing_content_clears_the_distilled_mark(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    entry = await store.put(ref, note("the renewal is due in March", "renewal"))

    async def distilled_into() -> str | None:
        async with engine.connect() as connection:
            return (
                await connection.execute(
                    select(tables.entries.c.distilled_into).where(
                        tables.entries.c.memory_ref == ref, tables.entries.c.id == entry.id
                    )
                )
            ).scalar_one()

    # As if a dream had consumed it (memory/distillation/run.py marks sources this way).
    async with engine.begin() as connection:
        await connection.execute(
            text(
                "UPDATE memory_entries SET distilled_into = 'dist-1' "
                "WHERE memory_ref = :ref AND id = :id"
            ),
            {"ref": ref, "id": entry.id},
        )
    await store.update(ref, entry.id, EntryChanges(tags=("renewal", "q1")), expected_version=1)
    assert await distilled_into() == "dist-1"  # tags alone change no distilled fact
    await store.update(
        ref, entry.id, EntryChanges(content="the renewal is due in March"), expected_version=2
    )
    assert await distilled_into() == "dist-1"  # the same content again is no edit
    await store.update(
        ref, entry.id, EntryChanges(content="the renewal moved to April"), expected_version=3
    )
    assert await distilled_into() is None  # edited: back in the distillation queue


async def test_a_full_working_tier_rejects(
    engine: AsyncEngine,
) -> None:
    """RFC-0015 §9.4: working memory at capacity rejects the write (HTTP 429) and evicts
    nothing live; episodic memory evicts instead."""
    store = PostgresMemoryStore(engine, limits=StoreLimits(capacity={Tier.WORKING: 2}))
    ref = unique_ref()
    first = await store.put(ref, note("first", tier=Tier.WORKING))
    await store.put(ref, note("second", tier=Tier.WORKING))
    with pytest.raises(CapacityExceeded, match="capacity of 2"):
        await store.put(ref, note("third", tier=Tier.WORKING))
    assert await _count_rows(engine, ref) == 2
    assert await store.get(ref, first.id) is not None
    assert not [e for e in await store.events(ref) if e.type == "memory.evicted"]
