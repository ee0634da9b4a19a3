"""Updates a writer states, in the write's transaction (issue 39).

- ``supersedes: <id>``: the new entry states a later value of a live entry of the same
  memoryRef. The link is recorded as a consolidation pass records one it finds
  (memory_updates, basis ``stated``): both entries stay live, reads rank the newer first
  and mark the older ``supersededBy``, the older's promise ends. An id the memoryRef
  holds no live entry under is refused, naming the field, and nothing is written.
- ``supersede_key``: a live entry holding the new entry's namespace/key is superseded
  by it, as a pass supersedes by key (marked, kept for audit, invisible to reads; its
  commitments end), instead of the write being refused as a duplicate key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import any_, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection

from memory.entries.rows import live
from memory.events.event_log import PendingEvent, long_term_update
from memory.keyed_ids.intent_links import IntentLinks, intent_id_column
from memory.storage import tables
from memory.storage.sql_arrays import texts
from memory.storage.tenant_scope import scoped
from schemas.errors import InvalidInput
from schemas.memory_entry import NewMemoryEntry, Tier
from schemas.memory_ref import MemoryRef

ENTRIES = tables.entries
STATED = "stated"
SUPERSEDED = "superseded"


def _superseded_event(ref: MemoryRef, row: Any, links: IntentLinks) -> PendingEvent:
    intent = links.digest(ref.tenant, row.intent_id)
    return long_term_update(
        ref, row.id, row.version, SUPERSEDED, tier=Tier(row.tier), intent=intent
    )


async def supersede_keys(
    connection: AsyncConnection,
    ref: MemoryRef,
    entries: Sequence[NewMemoryEntry],
    rows: Sequence[Mapping[str, Any]],
    now: datetime,
    links: IntentLinks,
) -> list[PendingEvent]:
    """Before the insert: mark the live holders of the keys the new entries supersede."""
    wanted = {
        (row["namespace"], row["key"]): row["id"]
        for entry, row in zip(entries, rows, strict=True)
        if entry.supersede_key and row["key"] is not None
    }
    if not wanted:
        return []
    namespaces, keys = (list(column) for column in zip(*wanted, strict=True))
    holders = (
        await connection.execute(
            text(
                "SELECT e.id, e.namespace, e.key FROM memory_entries AS e "
                "JOIN unnest(:namespaces, :keys) AS v(namespace, key) "
                "ON e.namespace = v.namespace AND e.key = v.key "
                "WHERE e.tenant = :tenant AND e.memory_ref = :ref "
                "AND e.invalidated_at IS NULL FOR UPDATE OF e"
            ).bindparams(texts("namespaces", namespaces), texts("keys", keys)),
            {"tenant": ref.tenant, "ref": str(ref)},
        )
    ).all()
    events = []
    for holder in holders:
        marked = (
            await connection.execute(
                update(ENTRIES)
                .where(scoped(ENTRIES, ref), ENTRIES.c.id == holder.id)
                .values(
                    superseded_by=wanted[(holder.namespace, holder.key)],
                    superseded_reason=SUPERSEDED,
                    invalidated_at=now,
                )
                .returning(
                    ENTRIES.c.id, ENTRIES.c.tier, ENTRIES.c.version, intent_id_column(ENTRIES)
                )
            )
        ).one()
        events.append(_superseded_event(ref, marked, links))
    return events


async def record_stated_updates(
    connection: AsyncConnection,
    ref: MemoryRef,
    entries: Sequence[NewMemoryEntry],
    rows: Sequence[Mapping[str, Any]],
    now: datetime,
    links: IntentLinks,
) -> list[PendingEvent]:
    """After the insert: link each new entry to the live entry it says it supersedes."""
    stated = [
        (entry.supersedes, row["id"])
        for entry, row in zip(entries, rows, strict=True)
        if entry.supersedes is not None
    ]
    if not stated:
        return []
    olders = sorted({older for older, _ in stated})
    found = {
        row.id: row
        for row in (
            await connection.execute(
                select(ENTRIES.c.id, ENTRIES.c.tier, ENTRIES.c.version)
                .add_columns(intent_id_column(ENTRIES))
                .where(
                    scoped(ENTRIES, ref),
                    live(now),
                    ENTRIES.c.id == any_(texts("stated", olders)),
                )
                .with_for_update()
            )
        ).all()
    }
    new_ids = {row["id"] for row in rows}
    for older, _ in stated:
        if older not in found or older in new_ids:
            raise InvalidInput("supersedes", "must name a live entry of this memoryRef")
    await connection.execute(
        text(
            "INSERT INTO memory_updates (tenant, memory_ref, older_id, newer_id, basis, kinds, "
            "recorded_at) SELECT :tenant, :ref, v.older, v.newer, :basis, '{}', :now "
            "FROM unnest(:olders, :newers) AS v(older, newer) ON CONFLICT DO NOTHING"
        ).bindparams(
            texts("olders", [older for older, _ in stated]),
            texts("newers", [newer for _, newer in stated]),
        ),
        {"tenant": ref.tenant, "ref": str(ref), "basis": STATED, "now": now},
    )
    return [_superseded_event(ref, found[older], links) for older in olders]
