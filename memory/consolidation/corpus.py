"""Reading what a pass plans over: one memoryRef's live long-term entries, each with the
texts already merged into it (the planner's guard keeps a later merge consistent with
them, which is what makes the next pass a no-op)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from memory.consolidation.planner import PlanEntry, slot_of
from memory.entries.rows import live
from memory.entries.said import said_or_written
from memory.storage import tables
from memory.storage.tenant_scope import scoped
from schemas.memory_entry import Tier
from schemas.memory_ref import MemoryRef

ENTRIES = tables.entries
# Long-term memory: the semantic tier, where distilled entries live too.
LONG_TERM_TIERS = (Tier.SEMANTIC.value,)


async def read_corpus(
    connection: AsyncConnection, ref: MemoryRef, now: datetime
) -> list[PlanEntry]:
    rows = (
        await connection.execute(
            select(
                ENTRIES.c.id,
                ENTRIES.c.version,
                ENTRIES.c.content,
                ENTRIES.c.updated_at,
                ENTRIES.c.pinned,
                ENTRIES.c.priority,
                ENTRIES.c.namespace,
                ENTRIES.c.key,
                ENTRIES.c.corroboration,
                ENTRIES.c.expires_at,
                said_or_written(ENTRIES).label("said_at"),
                ENTRIES.c.written_order,
            )
            .where(scoped(ENTRIES, ref), live(now), ENTRIES.c.tier.in_(LONG_TERM_TIERS))
            .order_by(ENTRIES.c.id)
        )
    ).all()
    merged = await _merged_texts(connection, ref, {row.id for row in rows})
    return [
        PlanEntry(
            id=row.id,
            version=row.version,
            content=row.content,
            updated_at=row.updated_at,
            pinned=row.pinned,
            priority=row.priority,
            slot=slot_of(row.namespace, row.key),
            corroboration=row.corroboration,
            expires_at=row.expires_at,
            merged_texts=tuple(merged.get(row.id, ())),
            said_at=row.said_at,
            written_order=row.written_order or 0,
        )
        for row in rows
    ]


async def _merged_texts(
    connection: AsyncConnection, ref: MemoryRef, live_ids: set[str]
) -> dict[str, list[str]]:
    """Survivor id -> texts merged into it, following chains (a survivor merged into
    another by a later pass hands its own merged texts on)."""
    rows = (
        await connection.execute(
            select(
                ENTRIES.c.id,
                ENTRIES.c.superseded_by,
                ENTRIES.c.superseded_reason,
                ENTRIES.c.content,
            )
            .where(scoped(ENTRIES, ref), ENTRIES.c.superseded_by.is_not(None))
            .order_by(ENTRIES.c.id)
        )
    ).all()
    # Only through merges: what was merged into a value that a newer value of its slot
    # then superseded says nothing about the newer value.
    parent = {row.id: row.superseded_by for row in rows if row.superseded_reason == "merged"}

    def final(entry_id: str) -> str:
        seen = set()
        while entry_id in parent and entry_id not in seen:
            seen.add(entry_id)
            entry_id = parent[entry_id]
        return entry_id

    texts: dict[str, list[str]] = {}
    for row in rows:
        if row.id not in parent:
            continue
        survivor = final(row.id)
        if survivor in live_ids:
            texts.setdefault(survivor, []).append(row.content)
    return texts
