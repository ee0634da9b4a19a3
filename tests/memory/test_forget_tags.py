"""A forgotten tag is forgotten everywhere (issue 20, item 3): after forget (or TTL
erasure) of every entry carrying a tag, the tag's name is in no column of any table: not
in a MEMORY-INDEX version (a new one is written without it, earlier ones naming it are
removed), not in a per-tag counter row (rows at zero are dropped), not in an event payload
(the tag is replaced by a marker in the memoryRef's events, which keep their sequence,
type, ids and versions). A tag a remaining entry still carries stays everywhere."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta

import pytest
from sqlalchemy import func, select, text, update
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.distillation.memory_index import INDEX_MD_PATH, INDEX_PATH
from memory.storage import tables
from memory.store import PostgresMemoryStore
from schemas.memory_entry import EntryChanges, ForgetRequest
from schemas.workflow_io import DistillMemoryRequest
from tests.support.factories import note, unique_ref
from tests.support.scan import tables_holding

FORGOTTEN = "[FORGOTTEN]"
WORKSPACE_FILES = tables.workspace_files


async def _distill(store: PostgresMemoryStore, ref: str) -> None:
    result = await store.distill(
        DistillMemoryRequest(
            memory_ref=ref, token_budget=5_000, run_key=f"run-{uuid.uuid4().hex[:8]}"
        )
    )
    assert result.status == "distilled", result


async def _index_tags(store: PostgresMemoryStore, ref: str) -> tuple[int, dict[str, int]]:
    found = await store.index_file(ref)
    assert found is not None
    version, body = found
    return version, {t["tag"]: t["count"] for t in json.loads(body)["tags"]}


async def _events_naming(store: PostgresMemoryStore, ref: str, tag: str) -> list[int]:
    return [e.seq for e in await store.events(ref) if tag in _tags(e.payload)]


def _tags(payload: dict[str, object]) -> list[object]:
    tags = payload.get("tags", [])
    return tags if isinstance(tags, list) else []


async def _tag_counter(engine: AsyncEngine, ref: str, tag: str) -> int | None:
    counts = tables.tag_counts
    async with engine.connect() as connection:
        return (
            await connection.execute(
                select(counts.c.entries).where(counts.c.memory_ref == ref, counts.c.tag == tag)
            )
        ).scalar()


async def test_forgetting_every_entry_of_a_tag_leaves_the_tag_name_nowhere(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    tag = f"client-{uuid.uuid4().hex[:10]}"
    first, second, kept = await store.put_many(
        ref,
        [
            note("Prefers calls after lunch.", tag, "billing"),
            note("Pays by bank transfer.", tag),
            note("The office is in Leeds.", "billing"),
        ],
    )
    # memory.updated carries the tags too.
    await store.update(
        ref, first.id, EntryChanges(content="Prefers calls after 2pm."), expected_version=1
    )
    await _distill(store, ref)
    version, listed = await _index_tags(store, ref)
    assert listed[tag] == 2
    assert set(await tables_holding(engine, tag)) >= {
        "memory_entries.tags",
        "memory_ref_tag_counts.tag",
        "memory_events.payload",
        "workspace_files.body",
    }
    naming = await _events_naming(store, ref, tag)
    assert len(naming) == 6  # created + written for each, updated + written for one
    seqs_before = [(e.seq, e.type) for e in await store.events(ref)]

    dry = await store.erase(ref, ForgetRequest(tag=tag), dry_run=True)
    assert await tables_holding(engine, tag) != []

    report = await store.erase(ref, ForgetRequest(tag=tag))
    assert await tables_holding(engine, tag) == []
    assert report.entries == 2 and report.events_rewritten == 6
    assert report.model_copy(update={"dry_run": True}) == dry

    # A new index version, without the tag; the remaining tag still counted.
    new_version, listed = await _index_tags(store, ref)
    assert new_version > version and tag not in listed and listed["billing"] == 1
    assert report.indexes_refreshed == 1 and report.index_versions_removed == 2
    async with engine.connect() as connection:
        left = (
            await connection.execute(
                select(WORKSPACE_FILES.c.path, WORKSPACE_FILES.c.version)
                .where(WORKSPACE_FILES.c.memory_ref == ref)
                .order_by(WORKSPACE_FILES.c.path)
            )
        ).all()
    assert [tuple(row) for row in left] == [(INDEX_PATH, new_version), (INDEX_MD_PATH, new_version)]
    # The log keeps its sequence and types: only the tag became a marker.
    after = await store.events(ref)
    assert [(e.seq, e.type) for e in after][: len(seqs_before)] == seqs_before
    redacted = [e for e in after if e.seq in naming]
    assert all(FORGOTTEN in _tags(e.payload) for e in redacted)
    assert any("billing" in _tags(e.payload) for e in redacted)
    assert await _tag_counter(engine, ref, "billing") == 1
    assert await store.get(ref, kept.id) is not None and second.id


async def test_a_tag_a_remaining_entry_still_carries_stays_everywhere(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    tag = f"client-{uuid.uuid4().hex[:10]}"
    gone, stays = await store.put_many(
        ref, [note("Asked for a refund.", tag), note("Renewal in March.", tag)]
    )
    await _distill(store, ref)
    version, _ = await _index_tags(store, ref)

    report = await store.erase(ref, ForgetRequest(ids=(gone.id,)))
    assert report.entries == 1 and report.events_rewritten == 0
    new_version, listed = await _index_tags(store, ref)
    assert new_version > version and listed[tag] == 1
    assert await _tag_counter(engine, ref, tag) == 1
    # Neither the remaining entry's events nor the erased one's lose the tag, and the
    # earlier index versions stay.
    assert len(await _events_naming(store, ref, tag)) == 4
    assert report.index_versions_removed == 0
    assert (await store.index_file(ref, version)) is not None
    assert "workspace_files.body" in await tables_holding(engine, tag)
    assert await store.get(ref, stays.id) is not None


async def test_only_index_versions_listing_the_forgotten_tag_are_removed(
    store: PostgresMemoryStore,
) -> None:
    """Version 1 lists only a longer tag that contains the forgotten one: it stays;
    version 2 lists the forgotten tag: it goes, JSON and .md."""
    ref = unique_ref()
    short = f"client-{uuid.uuid4().hex[:8]}"
    longer = f"{short}-archive"
    await store.put(ref, note("Archived correspondence.", longer))
    await _distill(store, ref)
    await store.put(ref, note("Current contract.", short))
    await _distill(store, ref)
    report = await store.erase(ref, ForgetRequest(tag=short))
    assert report.index_versions_removed == 2
    first = await store.index_file(ref, 1)
    assert first is not None and short.encode() in first[1]  # inside the longer tag
    assert await store.index_file(ref, 2) is None
    version, listed = await _index_tags(store, ref)
    assert version == 3 and short not in listed and listed[longer] == 1


async def test_many_forgotten_tags_at_once(engine: AsyncEngine, store: PostgresMemoryStore) -> None:
    """More forgotten tags than are matched as an array (a set lookup instead): each
    entry with its own tag, forgotten by subject, beside entries that keep theirs."""
    ref = unique_ref()
    run = uuid.uuid4().hex[:8]
    await store.put_many(
        ref,
        [note(f"gone {n}", f"gone-{run}-{n}", subject="jo") for n in range(150)]
        + [note(f"kept {n}", f"kept-{run}-{n}") for n in range(150)],
    )
    await _distill(store, ref)
    report = await store.erase(ref, ForgetRequest(subject="jo"))
    assert report.entries == 150 and report.events_rewritten == 300
    assert await tables_holding(engine, f"gone-{run}-") == []
    _, listed = await _index_tags(store, ref)
    assert sum(1 for tag in listed if tag.startswith(f"kept-{run}-")) > 0
    assert len(await _events_naming(store, ref, f"kept-{run}-7")) == 2


async def test_ttl_erasure_forgets_the_tags_of_what_expired(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    tag = f"visit-{uuid.uuid4().hex[:10]}"
    expiry = store.now() + timedelta(seconds=30)
    await store.put(ref, note("Door code for the visit.", tag, expires_at=expiry))
    await store.put(ref, note("The visit is on Thursday.", "visits"))
    await _distill(store, ref)
    assert "workspace_files.body" in await tables_holding(engine, tag)

    later = PostgresMemoryStore(engine, clock=lambda: expiry + timedelta(seconds=1))
    assert (await later.collect_garbage(ref)).expired_entries == 1
    assert await tables_holding(engine, tag) == []
    _, listed = await _index_tags(later, ref)
    assert tag not in listed and listed["visits"] == 1


async def test_forget_without_an_index_writes_none(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    tag = f"client-{uuid.uuid4().hex[:10]}"
    await store.put_many(ref, [note("Owes two invoices.", tag), note("Likes tea.", "misc")])
    report = await store.erase(ref, ForgetRequest(tag=tag))
    assert await tables_holding(engine, tag) == []
    assert report.events_rewritten == 2 and report.indexes_refreshed == 0
    assert await store.index_file(ref) is None


async def test_tag_counters_at_zero_are_dropped_on_delete_and_retag(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    ref = unique_ref()
    deleted_tag, retagged = f"del-{uuid.uuid4().hex[:8]}", f"old-{uuid.uuid4().hex[:8]}"
    a, b = await store.put_many(ref, [note("one", deleted_tag), note("two", retagged)])
    assert await _tag_counter(engine, ref, deleted_tag) == 1
    await store.delete(ref, a.id)
    await store.update(ref, b.id, EntryChanges(tags=("new",)), expected_version=1)
    assert await _tag_counter(engine, ref, deleted_tag) is None
    assert await _tag_counter(engine, ref, retagged) is None
    assert await _tag_counter(engine, ref, "new") == 1
    async with engine.connect() as connection:
        zero = (
            await connection.execute(
                select(func.count())
                .select_from(tables.tag_counts)
                .where(tables.tag_counts.c.entries == 0)
            )
        ).scalar_one()
    assert zero == 0


async def test_the_event_log_stays_append_only_beyond_the_forgotten_tag_marker(
    engine: AsyncEngine, store: PostgresMemoryStore
) -> None:
    """Only a forget's tag redaction may change an event, and only a tag into the marker:
    every other UPDATE, and every DELETE, is still refused by the database."""
    ref = unique_ref()
    await store.put(ref, note("A fact.", "keep"))
    ev = tables.events
    tags_path = text("'{tags}'::text[]")
    marker_only = {
        "payload": func.jsonb_set(ev.c.payload, tags_path, text("'[\"[FORGOTTEN]\"]'::jsonb"))
    }
    attempts = [
        # Without the erasure's setting, even the marker is refused.
        (None, update(ev).where(ev.c.memory_ref == ref).values(**marker_only)),
        # With it: another field of the payload, the type, a tag other than the marker.
        (
            "forgotten-tags",
            update(ev)
            .where(ev.c.memory_ref == ref)
            .values(payload=ev.c.payload.op("||")(text('\'{"memoryId": "x"}\'::jsonb'))),
        ),
        ("forgotten-tags", update(ev).where(ev.c.memory_ref == ref).values(type="memory.deleted")),
        (
            "forgotten-tags",
            update(ev)
            .where(ev.c.memory_ref == ref)
            .values(payload=func.jsonb_set(ev.c.payload, tags_path, text("'[\"other\"]'::jsonb"))),
        ),
        ("forgotten-tags", ev.delete().where(ev.c.memory_ref == ref)),
    ]
    for setting, statement in attempts:
        with pytest.raises(DBAPIError, match="append-only"):
            async with engine.begin() as connection:
                if setting:
                    await connection.execute(
                        select(func.set_config("agent_memory.event_redaction", setting, True))
                    )
                await connection.execute(statement)
    assert [e.payload["tags"] for e in await store.events(ref)] == [["keep"], ["keep"]]
