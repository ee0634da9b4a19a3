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

from sqlalchemy import any_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from memory.entries.rows import key_holders, live
from memory.events.event_log import PendingEvent, long_term_update
from memory.indexes.update_links import UpdateLink, record_update_links
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
    holders = await key_holders(connection, ref, list(wanted), for_update=True)
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
    stated_links = [UpdateLink(older, newer, basis=STATED) for older, newer in stated]
    await record_update_links(connection, ref, stated_links, pass_id=None, now=now)
    return [_superseded_event(ref, found[older], links) for older in olders]
