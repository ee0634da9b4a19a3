"""Undo a consolidation pass, and the audit reads: what a pass marked, which conflicts
are open.

Undo brings every row the pass marked back (unmarked, visible again), takes the merged
entries' corroboration off their survivors, and removes the merged-into lineage, in one
transaction serialised with passes of the memoryRef. Tags a survivor gained stay, and a
redaction made by the pass stays (SR-1 is never undone). It is refused whole, changing
nothing, when a row to restore holds a namespace/key that a live entry holds now.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from sqlalchemy import and_, any_, bindparam, delete, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection

from memory import tables
from memory.consolidation.apply import long_term_update
from memory.event_log import append_events
from memory.intent_links import IntentLinks, intent_id_column
from memory.lineage import MERGED_INTO
from memory.locks import consolidation_pass, lock, memory_ref_order
from memory.rows import live
from memory.scope import scoped
from memory.sql_arrays import texts
from schemas.consolidation import ConflictRecord, SupersededEntry, UndoReport
from schemas.errors import ConsolidationRefused, PassNotFound
from schemas.memory_ref import MemoryRef

E = tables.entries
P = tables.consolidation_passes
C = tables.conflicts
L = tables.lineage


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
            select(P.c.undone_at).where(scoped(P, ref), P.c.pass_id == pass_id)
        )
    ).first()
    if found is None or found.undone_at is not None:
        raise PassNotFound(pass_id)
    marked = (
        await connection.execute(
            select(
                E.c.id,
                E.c.version,
                E.c.namespace,
                E.c.key,
                E.c.superseded_by,
                E.c.superseded_reason,
                E.c.corroboration,
                intent_id_column(E),
            )
            .where(scoped(E, ref), E.c.consolidation_pass == pass_id)
            .order_by(E.c.id)
            .with_for_update()
        )
    ).all()
    keyed = [(row.namespace, row.key) for row in marked if row.key is not None]
    if keyed:
        namespaces, keys = (list(column) for column in zip(*keyed, strict=True))
        taken = (
            await connection.execute(
                text(
                    "SELECT 1 FROM memory_entries AS e "
                    "JOIN unnest(:namespaces, :keys) AS v(namespace, key) "
                    "ON e.namespace = v.namespace AND e.key = v.key "
                    "WHERE e.tenant = :tenant AND e.memory_ref = :ref "
                    "AND e.invalidated_at IS NULL LIMIT 1"
                ).bindparams(texts("namespaces", namespaces), texts("keys", keys)),
                {"tenant": ref.tenant, "ref": str(ref)},
            )
        ).first()
        if taken is not None:
            raise ConsolidationRefused(
                "undo would restore a namespace/key that a live entry holds now; "
                "delete or re-key that entry first"
            )
    restored = [row.id for row in marked]
    if restored:
        await connection.execute(
            update(E)
            .where(scoped(E, ref), E.c.consolidation_pass == pass_id)
            .values(
                superseded_by=None,
                superseded_reason=None,
                consolidation_pass=None,
                invalidated_at=None,
            )
        )
        await connection.execute(
            delete(L).where(
                scoped(L, ref),
                L.c.artifact_kind == MERGED_INTO,
                L.c.source_id == any_(texts("restored", restored)),
            )
        )
    returned: Counter[str] = Counter()
    for row in marked:
        if row.superseded_reason == "merged" and row.superseded_by is not None:
            returned[row.superseded_by] += row.corroboration
    if returned:
        await connection.execute(
            update(E)
            .where(scoped(E, ref), E.c.id == bindparam("b_id"))
            .values(
                corroboration=E.c.corroboration - bindparam("b_returned"),
                version=E.c.version + 1,
                updated_at=now,
            ),
            [{"b_id": i, "b_returned": n} for i, n in sorted(returned.items())],
        )
    pending = [
        long_term_update(
            ref,
            row.id,
            row.version,
            "consolidation-undone",
            intent=links.digest(ref.tenant, row.intent_id),
        )
        for row in marked
    ]
    if pending:
        await append_events(connection, ref, pending, now)
    await connection.execute(
        update(P).where(scoped(P, ref), P.c.pass_id == pass_id).values(undone_at=now)
    )
    return UndoReport(
        memory_ref=str(ref),
        pass_id=pass_id,
        restored=len(restored),
        survivors_changed=len(returned),
    )


async def superseded_entries(
    connection: AsyncConnection, ref: MemoryRef, pass_id: str | None, limit: int
) -> list[SupersededEntry]:
    query = (
        select(
            E.c.id,
            E.c.superseded_by,
            E.c.superseded_reason,
            E.c.consolidation_pass,
            E.c.invalidated_at,
            E.c.namespace,
            E.c.key,
        )
        .where(scoped(E, ref), E.c.superseded_by.is_not(None))
        .order_by(E.c.invalidated_at, E.c.id)
        .limit(limit)
    )
    if pass_id is not None:
        query = query.where(E.c.consolidation_pass == pass_id)
    rows = (await connection.execute(query)).all()
    return [
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


async def open_conflicts(
    connection: AsyncConnection, ref: MemoryRef, now: datetime, limit: int
) -> list[ConflictRecord]:
    """Recorded conflicts whose two entries are both still live."""
    first, second = E.alias("first"), E.alias("second")
    rows = (
        await connection.execute(
            select(C.c.first_id, C.c.second_id, C.c.kinds, C.c.pass_id, C.c.detected_at)
            .join(
                first,
                and_(first.c.memory_ref == C.c.memory_ref, first.c.id == C.c.first_id),
            )
            .join(
                second,
                and_(second.c.memory_ref == C.c.memory_ref, second.c.id == C.c.second_id),
            )
            .where(scoped(C, ref))
            .where(live(now, first), live(now, second))
            .order_by(C.c.detected_at, C.c.first_id, C.c.second_id)
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
