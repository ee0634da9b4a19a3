"""Forgotten tags: an erasure (forget, TTL) takes the name of every tag it forgot out of
the copies that hold tag names, in its own transaction (memory/erasure/copies.py calls this
once per memoryRef, after the erased rows are deleted).

A tag is **forgotten** when an erased entry carried it (now, or in an earlier version:
the tags its events recorded) and no entry left in the memoryRef carries it (live, not yet
collected, or a hidden copy consolidation kept: a tag still stored on a row stays).

- **MEMORY-INDEX**: when the memoryRef has an index, a new version (JSON and .md) is
  written from the counters, so it reflects the erasure and lists no forgotten tag; the
  earlier versions that listed one are removed (memory/distillation/memory_index.py). An index
  version is a derived copy like an archive, and a version is immutable: it is
  superseded and deleted, never rewritten under its old number.
- **Counters**: the triggers drop a tag's counter row when it reaches zero (migration
  0012), so the erasure's DELETE already took the name out of memory_ref_tag_counts.
- **Events** keep their sequence, type, ids, versions and time; in the memoryRef's event
  payloads each forgotten tag is replaced by ``FORGOTTEN_MARKER`` (the only UPDATE the
  append-only trigger lets through, and only in a transaction that declared it).
- **Snapshots** holding a forgotten tag (an older version of a remaining entry) are
  dropped, like those holding an erased entry.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    Select,
    Text,
    bindparam,
    cast,
    delete,
    exists,
    false,
    func,
    null,
    select,
    text,
    true,
    union_all,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.ext.asyncio import AsyncConnection

from memory.distillation.memory_index import index_exists, refresh_index, remove_versions_naming
from memory.events.event_log import append_events
from memory.redaction.chokepoint import MemorySecretRegistry, write_redacted
from memory.storage import tables
from memory.storage.sql_arrays import texts
from memory.storage.tenant_scope import scoped
from schemas.memory_ref import MemoryRef

# What a forgotten tag becomes in an event payload (migration 0012 allows nothing else).
FORGOTTEN_MARKER = "[FORGOTTEN]"
# The transaction-local setting under which the append-only trigger lets it through.
EVENT_REDACTION_SETTING = "agent_memory.event_redaction"
EVENT_REDACTION = "forgotten-tags"

ENTRIES = tables.entries
EVENTS = tables.events
SNAPSHOTS = tables.snapshots
SNAPSHOT_ITEMS = tables.snapshot_items

# Tag sets are bound as a JSON object whose keys are the tags: ``set ? tag`` is a binary
# search, whatever the plan, where ``tag = ANY(array)`` or ``tags && array`` compare with
# every element (10k forgotten tags against 40k events took seconds, growing squared).
# Up to this many tags, ``&&`` is kept where a GIN index (memory_entries.tags) serves it.
_FEW_TAGS = 64

# The payload's tags with every forgotten one replaced by the marker, order kept.
_REDACTED_TAGS = text(
    "(SELECT coalesce(jsonb_agg(CASE WHEN :forgotten_set ? (e.tag #>> '{}')"
    " THEN to_jsonb(CAST(:forgotten_marker AS text)) ELSE e.tag END ORDER BY e.n),"
    " '[]'::jsonb)"
    " FROM jsonb_array_elements(memory_events.payload -> 'tags') WITH ORDINALITY AS e(tag, n))"
)


def _tag_set(name: str, tags: Collection[str]) -> BindParameter[Any]:
    return bindparam(name, dict.fromkeys(sorted(tags), True), type_=JSONB)


def _holds_any(tags: ColumnElement[Any], name: str, wanted: Collection[str]) -> ColumnElement[bool]:
    """Whether the text[] column ``tags`` holds one of ``wanted``."""
    if len(wanted) <= _FEW_TAGS:
        return tags.overlap(texts(name, sorted(wanted)))
    element = func.unnest(tags).table_valued("tag").render_derived(name=f"{name}_element")
    return exists(
        select(1).select_from(element).where(_tag_set(name, wanted).op("?")(element.c.tag))
    )


@dataclass(frozen=True, slots=True)
class TagErasure:
    """What taking forgotten tag names out of a memoryRef did."""

    forgotten: tuple[str, ...] = ()
    events_rewritten: int = 0
    index_refreshed: bool = False
    index_versions_removed: int = 0
    snapshots_dropped: int = 0


async def forgotten_tags(
    connection: AsyncConnection,
    ref: MemoryRef,
    erased_ids: Collection[str],
    erased_tags: Collection[str],
) -> list[str]:
    """The tags the erased entries carried (now or as their events recorded) that no
    entry left in the memoryRef carries. Call after the erased rows are deleted."""
    recorded = (await connection.execute(_recorded_tags(ref, erased_ids))).scalars()
    candidates = (set(erased_tags) | set(recorded)) - {FORGOTTEN_MARKER}
    if not candidates:
        return []
    still = (
        await connection.execute(
            select(func.unnest(ENTRIES.c.tags))
            .where(scoped(ENTRIES, ref), _holds_any(ENTRIES.c.tags, "candidates", candidates))
            .distinct()
        )
    ).scalars()
    return sorted(candidates - set(still))


def _recorded_tags(ref: MemoryRef, erased_ids: Collection[str]) -> Select[Any]:
    """Every tag the events of the erased entries recorded. One aggregate over the ref's
    events and the erased ids, grouped by memoryId: no join for the planner to get wrong
    (with stale statistics a join of 66k events with 33k ids became a nested loop that
    compared every pair, minutes instead of milliseconds)."""
    events = select(
        EVENTS.c.payload["memoryId"].astext.label("memory_id"),
        func.jsonb_array_elements_text(EVENTS.c.payload["tags"]).label("tag"),
        false().label("erased"),
    ).where(scoped(EVENTS, ref), func.jsonb_typeof(EVENTS.c.payload["tags"]) == "array")
    erased = select(
        func.unnest(texts("erased_ids", sorted(erased_ids))).label("memory_id"),
        cast(null(), Text).label("tag"),
        true().label("erased"),
    )
    rows = union_all(events, erased).subquery("recorded")
    groups = (
        select(func.array_agg(rows.c.tag).filter(~rows.c.erased).label("tags"))
        .group_by(rows.c.memory_id)
        .having(func.bool_or(rows.c.erased))
        .subquery("erased_entries")
    )
    return select(func.unnest(groups.c.tags)).distinct()


async def redact_events(connection: AsyncConnection, ref: MemoryRef, tags: list[str]) -> int:
    """Replace ``tags`` by the marker in the memoryRef's event payloads; returns the
    number of events rewritten."""
    if not tags:
        return 0
    element = func.jsonb_array_elements_text(EVENTS.c.payload["tags"]).table_valued("tag")
    element = element.render_derived(name="event_tag")
    await _declare(connection, EVENT_REDACTION)
    result = await connection.execute(
        update(EVENTS)
        .where(
            scoped(EVENTS, ref),
            func.jsonb_typeof(EVENTS.c.payload["tags"]) == "array",
            exists(
                select(1)
                .select_from(element)
                .where(_tag_set("forgotten_any", tags).op("?")(element.c.tag))
            ),
        )
        .values(
            payload=func.jsonb_set(
                EVENTS.c.payload,
                bindparam("tags_path", ["tags"], type_=ARRAY(Text)),
                _REDACTED_TAGS.bindparams(
                    _tag_set("forgotten_set", tags),
                    bindparam("forgotten_marker", FORGOTTEN_MARKER, type_=Text),
                ),
            )
        )
    )
    await _declare(connection, "")
    return int(result.rowcount or 0)


async def _declare(connection: AsyncConnection, value: str) -> None:
    await connection.execute(select(func.set_config(EVENT_REDACTION_SETTING, value, True)))


async def drop_snapshots_naming(
    connection: AsyncConnection, ref: MemoryRef, tags: list[str]
) -> int:
    if not tags:
        return 0
    holding = (
        select(SNAPSHOT_ITEMS.c.snapshot_id)
        .where(
            scoped(SNAPSHOT_ITEMS, ref), _holds_any(SNAPSHOT_ITEMS.c.tags, "snapshot_tags", tags)
        )
        .distinct()
    )
    result = await connection.execute(
        delete(SNAPSHOTS).where(scoped(SNAPSHOTS, ref), SNAPSHOTS.c.snapshot_id.in_(holding))
    )
    return int(result.rowcount or 0)


async def _refresh_index(
    connection: AsyncConnection,
    ref: MemoryRef,
    now: datetime,
    secrets: MemorySecretRegistry | None,
    tags: list[str],
) -> tuple[bool, int]:
    """A new MEMORY-INDEX version when the memoryRef has one; the earlier versions that
    listed a forgotten tag (as stored, or as the index shows it redacted) go."""
    if not await index_exists(connection, ref):
        return False, 0
    written, pending = await refresh_index(connection, ref, now, secrets)
    await append_events(connection, ref, pending, now)
    names = {form for tag in tags for form in (tag, write_redacted(tag, secrets))}
    return True, await remove_versions_naming(connection, ref, names, written.version)


async def erase_tag_names(
    connection: AsyncConnection,
    ref: MemoryRef,
    now: datetime,
    secrets: MemorySecretRegistry | None,
    erased_ids: Collection[str],
    erased_tags: Collection[str],
) -> TagErasure:
    """Everything above, for one memoryRef's erasure."""
    tags = await forgotten_tags(connection, ref, erased_ids, erased_tags)
    snapshots = await drop_snapshots_naming(connection, ref, tags)
    refreshed, removed = await _refresh_index(connection, ref, now, secrets, tags)
    events = await redact_events(connection, ref, tags)
    return TagErasure(
        forgotten=tuple(tags),
        events_rewritten=events,
        index_refreshed=refreshed,
        index_versions_removed=removed,
        snapshots_dropped=snapshots,
    )
