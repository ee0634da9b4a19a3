"""MEMORY-INDEX.json counts entries per tier and per tag from trigger-maintained counters
(a dream must not scan a 1M-entry ref to refresh its index). After every kind of write
the store does, the counts in the index equal a full recount of the live entries."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from datetime import timedelta

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.distillation.memory_index import INDEX_PATH, read_workspace_file, refresh_index
from memory.storage import tables
from memory.store import PostgresMemoryStore, StoreLimits
from schemas.memory_entry import EntryChanges, ForgetRequest, Tier
from schemas.memory_ref import parse_memory_ref
from tests.support.factories import note, unique_ref

ENTRIES = tables.entries

# These tests exercise the eviction machinery on the working tier, which by default
# rejects at capacity instead (RFC-0015 §9.4; see test_a_full_working_tier_rejects).
EVICTING_WORKING = frozenset({Tier.WORKING, Tier.EPISODIC})


async def _index_counts(store: PostgresMemoryStore, ref: str) -> tuple[dict, dict]:
    parsed = parse_memory_ref(ref)
    async with store.engine.begin() as connection:
        await refresh_index(connection, parsed, store.now())
        found = await read_workspace_file(connection, parsed, INDEX_PATH)
    assert found is not None
    document = json.loads(found[1])
    return document["entryCounts"], {t["tag"]: t["count"] for t in document["tags"]}


async def _recount(store: PostgresMemoryStore, ref: str) -> tuple[dict, dict]:
    now = store.now()
    async with store.engine.connect() as connection:
        rows = (
            await connection.execute(
                select(ENTRIES.c.tier, ENTRIES.c.tags).where(
                    ENTRIES.c.memory_ref == ref,
                    ENTRIES.c.invalidated_at.is_(None),
                    (ENTRIES.c.expires_at.is_(None)) | (ENTRIES.c.expires_at > now),
                )
            )
        ).all()
    tiers = Counter(row.tier for row in rows)
    tags = Counter(tag for row in rows for tag in row.tags)
    return (
        {tier: tiers.get(tier, 0) for tier in ("working", "episodic", "semantic")},
        dict(tags),
    )


async def _assert_index_matches_recount(store: PostgresMemoryStore, ref: str) -> None:
    assert await _index_counts(store, ref) == await _recount(store, ref)


async def test_index_counts_follow_every_kind_of_write(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    capped = PostgresMemoryStore(
        engine, limits=StoreLimits(capacity={Tier.WORKING: 5}, evicting=EVICTING_WORKING)
    )
    ref = unique_ref()
    other = unique_ref()
    await store.put_many(other, [note("another ref's note", "red")])
    written = await store.put_many(
        ref,
        [note(f"note {i}", "red", "blue" if i % 2 else "green") for i in range(12)]
        + [note("semantic fact", "blue", tier=Tier.SEMANTIC)],
    )
    await _assert_index_matches_recount(store, ref)
    # Tags change, content changes, a delete, a forget by tag.
    await store.update(ref, written[0].id, EntryChanges(tags=("yellow",)), expected_version=1)
    await store.update(ref, written[1].id, EntryChanges(content="edited"), expected_version=1)
    await store.delete(ref, written[2].id)
    await store.forget(ref, ForgetRequest(tag="green"))
    await _assert_index_matches_recount(store, ref)
    # Capacity eviction in a capped tier.
    for i in range(8):
        await capped.put(ref, note(f"working {i}", "red", tier=Tier.WORKING))
    await _assert_index_matches_recount(store, ref)
    # Expiry before and after collection, and a superseded row.
    await store.put(ref, note("short", "blue", expires_at=store.now() + timedelta(milliseconds=50)))
    await asyncio.sleep(0.1)
    await _assert_index_matches_recount(store, ref)
    await store.gc_expired(ref)
    await _assert_index_matches_recount(store, ref)
    async with engine.begin() as connection:
        await connection.execute(
            update(ENTRIES)
            .where(ENTRIES.c.memory_ref == ref, ENTRIES.c.id == written[3].id)
            .values(invalidated_at=func.now())
        )
    await _assert_index_matches_recount(store, ref)
    # A distillation: claims sources, adds the distilled entry.
    from schemas.workflow_io import DistillMemoryRequest

    await store.distill(DistillMemoryRequest(memory_ref=ref, token_budget=5_000, run_key="r"))
    await _assert_index_matches_recount(store, ref)
    # The other ref's counts were never touched by any of it.
    assert (await _index_counts(store, other))[1] == {"red": 1}


async def test_the_markdown_index_reads_as_text(store: PostgresMemoryStore) -> None:
    """MEMORY-INDEX.md is for a person: counts in words, no Python dict (issue 41)."""
    from memory.distillation.memory_index import INDEX_MD_PATH

    ref = unique_ref()
    await store.put_many(ref, [note("a"), note("b", tier=Tier.SEMANTIC), note("c")])
    parsed = parse_memory_ref(ref)
    async with store.engine.begin() as connection:
        await refresh_index(connection, parsed, store.now())
        found = await read_workspace_file(connection, parsed, INDEX_MD_PATH)
    assert found is not None
    text = found[1].decode("utf-8")
    assert "- entries: 2 episodic, 1 semantic, 0 working" in text, text
    assert "{" not in text and "'" not in text, text
