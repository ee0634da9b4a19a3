"""The links a consolidation pass (or a writer) read from two entries' texts: which
entry a later one supersedes (``memory_updates``) and which two conflict
(``memory_conflicts``). They are derived from content like postings and vectors: when
an entry's content is rewritten, every link it is part of was read from the old text
and goes, in the same transaction (the one writer, memory/entries/content.py); the next
pass reads the new text afresh. ``record_update_links`` is the one insert of the
supersession links, for a pass and for a writer's stated ``supersedes`` alike."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import any_, delete, or_, text
from sqlalchemy.ext.asyncio import AsyncConnection

from memory.storage import tables
from memory.storage.sql_arrays import texts
from memory.storage.tenant_scope import scoped
from schemas.memory_ref import MemoryRef

UPDATES = tables.updates
CONFLICTS = tables.conflicts


@dataclass(frozen=True)
class UpdateLink:
    """``newer`` states another value of ``older``'s fact: ``older`` is superseded by it
    (both stay live). ``kinds``: which kinds of value changed (none when a writer stated
    it); ``basis``: who decided: the update rules, the optional judge (memory/
    consolidation/update_judge.py) asked about a pair the rules left open, or the writer
    (``stated``)."""

    older: str
    newer: str
    kinds: tuple[str, ...] = ()
    basis: str = "rule"


async def record_update_links(
    connection: AsyncConnection,
    ref: MemoryRef,
    links: Sequence[UpdateLink],
    *,
    pass_id: str | None,
    now: datetime,
) -> set[str]:
    """Insert the links not recorded yet; returns the older ids of those inserted now."""
    if not links:
        return set()
    inserted = await connection.execute(
        text(
            "INSERT INTO memory_updates (tenant, memory_ref, older_id, newer_id, basis, kinds, "
            "pass_id, recorded_at) SELECT :tenant, :ref, v.older, v.newer, v.basis, "
            "string_to_array(v.kinds, ','), :pass_id, :now "
            "FROM unnest(:olders, :newers, :kinds, :bases) AS v(older, newer, kinds, basis) "
            "ON CONFLICT DO NOTHING RETURNING older_id"
        ).bindparams(
            texts("olders", [link.older for link in links]),
            texts("newers", [link.newer for link in links]),
            texts("kinds", [",".join(link.kinds) for link in links]),
            texts("bases", [link.basis for link in links]),
        ),
        {"tenant": ref.tenant, "ref": str(ref), "pass_id": pass_id, "now": now},
    )
    return set(inserted.scalars())


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
