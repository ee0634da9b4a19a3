"""Recording what a pass found updated: a later entry stating another value of an older
one's fact (memory/sameness/updates.py, or the optional judge for a pair the rules left
open: memory/consolidation/update_judge.py). Both stay live; the link marks the older as
superseded by the newer for every read (memory/search/update_marks.py).

A link is recorded only when both of its entries are as the plan read them (claimed
FOR UPDATE, at the planned version, or the next one for a survivor this pass
strengthened), so an entry edited or forgotten while the pass ran is never linked by a
reading of its old text. Recorded once: a second pass finds the same links and records
nothing new.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from sqlalchemy import any_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from memory.consolidation.planner import Cluster, Plan, PlanEntry, said_order
from memory.consolidation.update_judge import JudgeAnswer, JudgeRound
from memory.indexes.update_links import UpdateLink, record_update_links
from memory.keyed_ids.intent_links import intent_id_column
from memory.sameness.updates import readable
from memory.storage import tables
from memory.storage.sql_arrays import texts
from memory.storage.tenant_scope import scoped
from schemas.memory_ref import MemoryRef

ENTRIES = tables.entries
CONFLICTS = tables.conflicts
UPDATES = tables.updates


async def record_updates(
    connection: AsyncConnection,
    ref: MemoryRef,
    plan: Plan,
    entries: Sequence[PlanEntry],
    applied: Sequence[Cluster],
    pass_id: str,
    now: datetime,
) -> list[tuple[str, int, object]]:
    """Insert the plan's update links whose entries are still as planned; returns each
    newly superseded entry once: (id, version, its intent link column)."""
    if not plan.updates:
        return []
    planned = {e.id: e.version for e in entries}
    strengthened = {c.survivor for c in applied}
    removed = {i for c in applied for i in (*c.merged, *c.superseded)}
    ids = sorted({i for link in plan.updates for i in (link.older, link.newer)})
    current = {
        row.id: row
        for row in (
            await connection.execute(
                select(ENTRIES.c.id, ENTRIES.c.version, ENTRIES.c.invalidated_at)
                .add_columns(intent_id_column(ENTRIES))
                .where(scoped(ENTRIES, ref), ENTRIES.c.id == any_(texts("claimed", ids)))
                .with_for_update()
            )
        ).all()
    }

    def as_planned(entry_id: str) -> bool:
        row = current.get(entry_id)
        expected = planned[entry_id] + (entry_id in strengthened)
        return (
            row is not None
            and row.invalidated_at is None
            and entry_id not in removed
            and row.version == expected
        )

    links = [link for link in plan.updates if as_planned(link.older) and as_planned(link.newer)]
    if not links:
        return []
    inserted = await record_update_links(
        connection,
        ref,
        links,
        pass_id=pass_id,
        now=now,
    )
    superseded = sorted(inserted)
    return [(i, current[i].version, current[i].intent_id) for i in superseded]


async def settle_with_judge(
    connection: AsyncConnection,
    ref: MemoryRef,
    plan: Plan,
    entries: Sequence[PlanEntry],
    judging: JudgeRound,
    progress: Callable[[dict[str, object]], None],
) -> None:
    """Ask the judge about the plan's conflicts not recorded before (the rules left them
    open), within its budget: an UPDATE answer makes the pair a supersession of the
    earlier entry by the later; any other answer leaves the conflict as it is."""
    if not plan.conflicts:
        return
    recorded = {
        (row.first_id, row.second_id)
        for row in (
            await connection.execute(
                select(CONFLICTS.c.first_id, CONFLICTS.c.second_id).where(
                    scoped(CONFLICTS, ref),
                    CONFLICTS.c.first_id
                    == any_(texts("firsts", [c.first for c in plan.conflicts])),
                )
            )
        ).all()
    }
    by_id = {entry.id: entry for entry in entries}
    settled: set[int] = set()
    for n, conflict in enumerate(plan.conflicts):
        if (conflict.first, conflict.second) in recorded:
            continue
        if judging.spent():
            break
        earlier, later = sorted((by_id[conflict.first], by_id[conflict.second]), key=said_order)
        answer = await judging.ask(readable(earlier.content), readable(later.content))
        progress({"phase": "judge", "asked": judging.calls})
        if answer is JudgeAnswer.UPDATE:
            plan.updates.append(UpdateLink(earlier.id, later.id, conflict.kinds, basis="judge"))
            settled.add(n)
    if settled:
        plan.conflicts = [c for n, c in enumerate(plan.conflicts) if n not in settled]


async def drop_linked_conflicts(connection: AsyncConnection, ref: MemoryRef, plan: Plan) -> None:
    """A pair already linked as an update (by the judge in an earlier pass, or stated by
    its writer) is settled: the look-alike rule's conflict for it is not recorded."""
    if not plan.conflicts:
        return
    ids = sorted({i for c in plan.conflicts for i in (c.first, c.second)})
    linked = {
        frozenset((row.older_id, row.newer_id))
        for row in (
            await connection.execute(
                select(UPDATES.c.older_id, UPDATES.c.newer_id).where(
                    scoped(UPDATES, ref),
                    UPDATES.c.older_id == any_(texts("linked", ids)),
                )
            )
        ).all()
    }
    if linked:
        plan.conflicts = [c for c in plan.conflicts if frozenset((c.first, c.second)) not in linked]
