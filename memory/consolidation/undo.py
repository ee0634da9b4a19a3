"""Undo a consolidation pass, and the audit reads: what a pass marked, which conflicts
are open.

Undo brings every row the pass marked back (unmarked, visible again), removes the update
links it recorded (their older entries are current again), takes the merged
entries' corroboration off their survivors, and removes the merged-into lineage, in one
transaction serialised with passes of the memoryRef. Tags a survivor gained stay, and a
redaction made by the pass stays (SR-1 is never undone). It is refused whole, changing
nothing, when a row to restore holds a namespace/key that a live entry holds now.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from sqlalchemy import and_, any_, bindparam, delete, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from memory.entries.lineage import MERGED_INTO
from memory.entries.rows import key_holders, live
from memory.events.event_log import append_events, long_term_update
from memory.keyed_ids.intent_links import IntentLinks, intent_id_column
from memory.storage import tables
from memory.storage.locks import consolidation_pass, lock, memory_ref_order
from memory.storage.sql_arrays import texts
from memory.storage.tenant_scope import scoped
from schemas.consolidation import ConflictRecord, SupersededEntry, UndoReport
from schemas.errors import ConsolidationRefused, PassNotFound
from schemas.memory_ref import MemoryRef

ENTRIES = tables.entries
CONSOLIDATION_PASSES = tables.consolidation_passes
CONFLICTS = tables.conflicts
UPDATES = tables.updates
LINEAGE = tables.lineage


async def undo_pass(
    connection: AsyncConnection,
    ref: MemoryRef,
    pass_id: str,
    now: datetime,
    links: IntentLinks,
) -> UndoReport:
    await lock(connection, consolidation_pass(ref))
    await lock(connection, memory_ref_order(ref))
    found = (
        await connection.execute(
            select(CONSOLIDATION_PASSES.c.undone_at).where(
                scoped(CONSOLIDATION_PASSES, ref), CONSOLIDATION_PASSES.c.pass_id == pass_id
            )
        )
    ).first()
    if found is None:
        raise PassNotFound(pass_id)
    if found.undone_at is not None:
        when = found.undone_at.isoformat(timespec="seconds")
        raise ConsolidationRefused(f"pass {pass_id} was undone already, at {when}")
    marked = (
        await connection.execute(
            select(
                ENTRIES.c.id,
                ENTRIES.c.version,
                ENTRIES.c.namespace,
                ENTRIES.c.key,
                ENTRIES.c.superseded_by,
                ENTRIES.c.superseded_reason,
                ENTRIES.c.corroboration,
                intent_id_column(ENTRIES),
            )
            .where(scoped(ENTRIES, ref), ENTRIES.c.consolidation_pass == pass_id)
            .order_by(ENTRIES.c.id)
            .with_for_update()
        )
    ).all()
    keyed = [(row.namespace, row.key) for row in marked if row.key is not None]
    if await key_holders(connection, ref, keyed):
        raise ConsolidationRefused(
            "undo would restore a namespace/key that a live entry holds now; "
            "delete or re-key that entry first"
        )
    restored = [row.id for row in marked]
    if restored:
        await connection.execute(
            update(ENTRIES)
            .where(scoped(ENTRIES, ref), ENTRIES.c.consolidation_pass == pass_id)
            .values(
                superseded_by=None,
                superseded_reason=None,
                consolidation_pass=None,
                invalidated_at=None,
            )
        )
        await connection.execute(
            delete(LINEAGE).where(
                scoped(LINEAGE, ref),
                LINEAGE.c.artifact_kind == MERGED_INTO,
                LINEAGE.c.source_id == any_(texts("restored", restored)),
            )
        )
    returned: Counter[str] = Counter()
    for row in marked:
        if row.superseded_reason == "merged" and row.superseded_by is not None:
            returned[row.superseded_by] += row.corroboration
    if returned:
        await connection.execute(
            update(ENTRIES)
            .where(scoped(ENTRIES, ref), ENTRIES.c.id == bindparam("b_id"))
            .values(
                corroboration=ENTRIES.c.corroboration - bindparam("b_returned"),
                version=ENTRIES.c.version + 1,
                updated_at=now,
            ),
            [{"b_id": i, "b_returned": n} for i, n in sorted(returned.items())],
        )
    # The pass's update links go: the entries they marked superseded are current again.
    unlinked = (
        await connection.execute(
            delete(UPDATES)
            .where(scoped(UPDATES, ref), UPDATES.c.pass_id == pass_id)
            .returning(UPDATES.c.older_id)
        )
    ).scalars()
    unmarked = (
        await connection.execute(
            select(ENTRIES.c.id, ENTRIES.c.version, intent_id_column(ENTRIES))
            .where(
                scoped(ENTRIES, ref), ENTRIES.c.id == any_(texts("unmarked", sorted(set(unlinked))))
            )
            .order_by(ENTRIES.c.id)
        )
    ).all()
    pending = [
        long_term_update(
            ref,
            row.id,
            row.version,
            "consolidation-undone",
            intent=links.digest(ref.tenant, row.intent_id),
        )
        for row in (*marked, *unmarked)
    ]
    if pending:
        await append_events(connection, ref, pending, now)
    await connection.execute(
        update(CONSOLIDATION_PASSES)
        .where(scoped(CONSOLIDATION_PASSES, ref), CONSOLIDATION_PASSES.c.pass_id == pass_id)
        .values(undone_at=now)
    )
    return UndoReport(
        memory_ref=str(ref),
        pass_id=pass_id,
        restored=len(restored),
        survivors_changed=len(returned),
        unmarked=len(unmarked),
    )


async def superseded_entries(
    connection: AsyncConnection, ref: MemoryRef, pass_id: str | None, limit: int
) -> list[SupersededEntry]:
    query = (
        select(
            ENTRIES.c.id,
            ENTRIES.c.superseded_by,
            ENTRIES.c.superseded_reason,
            ENTRIES.c.consolidation_pass,
            ENTRIES.c.invalidated_at,
            ENTRIES.c.namespace,
            ENTRIES.c.key,
        )
        .where(scoped(ENTRIES, ref), ENTRIES.c.superseded_by.is_not(None))
        .order_by(ENTRIES.c.invalidated_at, ENTRIES.c.id)
        .limit(limit)
    )
    if pass_id is not None:
        query = query.where(ENTRIES.c.consolidation_pass == pass_id)
    rows = (await connection.execute(query)).all()
    marked = [
        SupersededEntry(
            id=row.id,
            superseded_by=row.superseded_by,
            reason=row.superseded_reason,
            pass_id=row.consolidation_pass,
            superseded_at=row.invalidated_at,
            namespace=row.namespace,
            key=row.key,
        )
        for row in rows
    ]
    return sorted(
        [*marked, *await _updated_entries(connection, ref, pass_id, limit)],
        key=lambda entry: (entry.superseded_at, entry.id),
    )[:limit]


async def _updated_entries(
    connection: AsyncConnection, ref: MemoryRef, pass_id: str | None, limit: int
) -> list[SupersededEntry]:
    """Entries marked updated by a later one (still live), with the pass that found it."""
    query = (
        select(
            UPDATES.c.older_id,
            UPDATES.c.newer_id,
            UPDATES.c.pass_id,
            UPDATES.c.recorded_at,
            ENTRIES.c.namespace,
            ENTRIES.c.key,
        )
        .join(
            ENTRIES,
            and_(ENTRIES.c.memory_ref == UPDATES.c.memory_ref, ENTRIES.c.id == UPDATES.c.older_id),
        )
        .where(scoped(UPDATES, ref))
        .order_by(UPDATES.c.recorded_at, UPDATES.c.older_id, UPDATES.c.newer_id)
        .limit(limit)
    )
    if pass_id is not None:
        query = query.where(UPDATES.c.pass_id == pass_id)
    return [
        SupersededEntry(
            id=row.older_id,
            superseded_by=row.newer_id,
            reason="updated",
            pass_id=row.pass_id,
            superseded_at=row.recorded_at,
            namespace=row.namespace,
            key=row.key,
        )
        for row in (await connection.execute(query)).all()
    ]


async def open_conflicts(
    connection: AsyncConnection, ref: MemoryRef, now: datetime, limit: int
) -> list[ConflictRecord]:
    """Recorded conflicts whose two entries are both still live."""
    first, second = ENTRIES.alias("first"), ENTRIES.alias("second")
    rows = (
        await connection.execute(
            select(
                CONFLICTS.c.first_id,
                CONFLICTS.c.second_id,
                CONFLICTS.c.kinds,
                CONFLICTS.c.pass_id,
                CONFLICTS.c.detected_at,
            )
            .join(
                first,
                and_(
                    first.c.memory_ref == CONFLICTS.c.memory_ref, first.c.id == CONFLICTS.c.first_id
                ),
            )
            .join(
                second,
                and_(
                    second.c.memory_ref == CONFLICTS.c.memory_ref,
                    second.c.id == CONFLICTS.c.second_id,
                ),
            )
            .where(scoped(CONFLICTS, ref))
            .where(live(now, first), live(now, second))
            .order_by(CONFLICTS.c.detected_at, CONFLICTS.c.first_id, CONFLICTS.c.second_id)
            .limit(limit)
        )
    ).all()
    return [
        ConflictRecord(
            first_id=r.first_id,
            second_id=r.second_id,
            kinds=tuple(r.kinds),
            pass_id=r.pass_id,
            detected_at=r.detected_at,
        )
        for r in rows
    ]
