"""The links a consolidation pass (or a writer) read from two entries' texts: which
entry a later one supersedes (``memory_updates``) and which two conflict
(``memory_conflicts``). They are derived from content like postings and vectors: when
an entry's content is rewritten, every link it is part of was read from the old text
and goes, in the same transaction (the one writer, memory/entries/content.py); the next
pass reads the new text afresh."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import any_, delete, or_
from sqlalchemy.ext.asyncio import AsyncConnection

from memory.storage import tables
from memory.storage.sql_arrays import texts
from memory.storage.tenant_scope import scoped
from schemas.memory_ref import MemoryRef

UPDATES = tables.updates
CONFLICTS = tables.conflicts


async def drop_update_links(
    connection: AsyncConnection, ref: MemoryRef, entry_ids: Sequence[str]
) -> None:
    if not entry_ids:
        return
    ids = texts("linked", list(entry_ids))
    await connection.execute(
        delete(UPDATES).where(
            scoped(UPDATES, ref),
            or_(UPDATES.c.older_id == any_(ids), UPDATES.c.newer_id == any_(ids)),
        )
    )
    await connection.execute(
        delete(CONFLICTS).where(
            scoped(CONFLICTS, ref),
            or_(CONFLICTS.c.first_id == any_(ids), CONFLICTS.c.second_id == any_(ids)),
        )
    )
