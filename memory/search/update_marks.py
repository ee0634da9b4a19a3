"""What reads tell an agent about facts that changed: an entry a later one supersedes is
served marked ``supersededBy`` (the newest live entry that supersedes it), an entry in a
conflict ``conflictsWith`` (the other live entries), and a ranking puts the newer entry
of every such pair right before the older one (``newest_first``), so the first value an
agent reads is the current one and the older is beside it, never hidden.

The links are memory_updates (a pass's update rules, or a writer's ``supersedes``) and
memory_conflicts; a link counts only while both of its entries are live (read here), and
a link's entry whose content was rewritten has lost its links already (the one writer,
memory/indexes/update_links.py). Which of two conflicting entries is newer: the one said
later (saidAt, else when written), then the later written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import ARRAY, Text, and_, any_, bindparam, or_, select, union_all

from memory.entries.filters import Shape, filter_values, shaped_filters
from memory.entries.said import said_or_written
from memory.search.hits import Ranked
from memory.storage import tables
from memory.storage.prepared import DriverConnection, Prepared, sql_string
from memory.storage.tenant_scope import scope_params, scoped_by_params
from schemas.memory_entry import HostMemoryEntry, MemoryQuery
from schemas.memory_ref import MemoryRef

ENTRIES, UPDATES, CONFLICTS = tables.entries, tables.updates, tables.conflicts
SUPERSEDES = "supersedes"
CONFLICTS_WITH = "conflicts"


@dataclass(frozen=True)
class Partner:
    id: str
    relation: str  # SUPERSEDES: the partner supersedes the entry; or CONFLICTS_WITH
    newer: bool  # said (then written) after the entry


@dataclass(frozen=True)
class Marks:
    partners: Mapping[str, Sequence[Partner]] = field(default_factory=dict)

    def superseded_by(self, entry_id: str) -> str | None:
        return next(
            (p.id for p in self.partners.get(entry_id, ()) if p.relation == SUPERSEDES), None
        )

    def conflicts_with(self, entry_id: str) -> tuple[str, ...]:
        return tuple(
            sorted(p.id for p in self.partners.get(entry_id, ()) if p.relation == CONFLICTS_WITH)
        )

    def newer(self, entry_id: str) -> list[str]:
        """The entries that should be read before this one: those superseding it and
        the newer side of its conflicts, newest first."""
        return [
            p.id for p in self.partners.get(entry_id, ()) if p.relation == SUPERSEDES or p.newer
        ]

    def mark(self, entry: HostMemoryEntry) -> HostMemoryEntry:
        superseded_by, conflicts = self.superseded_by(entry.id), self.conflicts_with(entry.id)
        if superseded_by is None and not conflicts:
            return entry
        return entry.model_copy(
            update={"superseded_by": superseded_by, "conflicts_with": conflicts or None}
        )


NO_MARKS = Marks()


def _live(table: Any) -> Any:
    now = bindparam("now", type_=ENTRIES.c.expires_at.type)
    return and_(
        table.c.invalidated_at.is_(None),
        or_(table.c.expires_at.is_(None), table.c.expires_at > now),
    )


def _side(link: Any, this_id: Any, other_id: Any, relation: str) -> Any:
    this, other = ENTRIES.alias(), ENTRIES.alias()
    return (
        select(
            this_id.label("id"),
            other_id.label("other"),
            sql_string(relation).label("relation"),
            (
                (said_or_written(other) > said_or_written(this))
                | (
                    (said_or_written(other) == said_or_written(this))
                    & (other.c.written_order > this.c.written_order)
                )
            ).label("newer"),
            said_or_written(other).label("said"),
            other.c.written_order.label("written_order"),
        )
        .join(this, and_(this.c.memory_ref == link.c.memory_ref, this.c.id == this_id))
        .join(other, and_(other.c.memory_ref == link.c.memory_ref, other.c.id == other_id))
        .where(
            scoped_by_params(link),
            scoped_by_params(this),
            scoped_by_params(other),
            this_id == any_(bindparam("ids", type_=ARRAY(Text))),
            _live(this),
            _live(other),
        )
    )


_MARKS = Prepared(
    union_all(
        _side(UPDATES, UPDATES.c.older_id, UPDATES.c.newer_id, SUPERSEDES),
        _side(CONFLICTS, CONFLICTS.c.first_id, CONFLICTS.c.second_id, CONFLICTS_WITH),
        _side(CONFLICTS, CONFLICTS.c.second_id, CONFLICTS.c.first_id, CONFLICTS_WITH),
    )
)


async def read_marks(
    connection: DriverConnection, ref: MemoryRef, ids: Sequence[str], now: datetime
) -> Marks:
    if not ids:
        return NO_MARKS
    rows = await connection.fetch(_MARKS, {**scope_params(ref), "now": now, "ids": list(ids)})
    if not rows:
        return NO_MARKS
    partners: dict[str, list[Partner]] = {}
    # Newest partner first: the latest value of a fact leads.
    for row in sorted(rows, key=lambda r: (r["said"], r["written_order"] or 0), reverse=True):
        found = partners.setdefault(row["id"], [])
        if all(p.id != row["other"] for p in found):
            found.append(Partner(row["other"], row["relation"], bool(row["newer"])))
    return Marks(partners)


_ADMITTED: dict[Shape, Prepared] = {}


async def admitted_partners(
    connection: DriverConnection,
    ref: MemoryRef,
    filters: MemoryQuery,
    shape: Shape,
    marks: Marks,
    ranked: Sequence[Ranked],
    now: datetime,
) -> dict[str, Ranked]:
    """The newer partners of ranked entries that the ranking did not hold, if the
    search's filters admit them, each scored as the entry it comes before."""
    present = {hit.id for hit in ranked}
    wanted: dict[str, Ranked] = {}
    for hit in ranked:
        for partner in marks.newer(hit.id):
            if partner not in present and partner not in wanted:
                wanted[partner] = hit
    if not wanted:
        return {}
    statement = _ADMITTED.get(shape)
    if statement is None:
        statement = _ADMITTED[shape] = Prepared(
            select(ENTRIES.c.id, ENTRIES.c.created_at).where(
                *shaped_filters(shape), ENTRIES.c.id == any_(bindparam("ids", type_=ARRAY(Text)))
            )
        )
    values = filter_values(ref, filters, now)
    values["ids"] = sorted(wanted)
    return {
        row["id"]: Ranked(row["id"], wanted[row["id"]].score, None, None, row["created_at"])
        for row in await connection.fetch(statement, values)
    }


def newest_first(
    ranked: Sequence[Ranked], marks: Marks, pulled: Mapping[str, Ranked]
) -> list[Ranked]:
    """``ranked`` with each entry's newer partners (ranked or ``pulled``) placed right
    before it, newest first; otherwise in rank order."""
    by_id = {**pulled, **{hit.id: hit for hit in ranked}}
    out: list[Ranked] = []
    placed: set[str] = set()

    def place(hit: Ranked, visiting: set[str]) -> None:
        if hit.id in placed or hit.id in visiting:
            return
        visiting.add(hit.id)
        for newer in marks.newer(hit.id):
            partner = by_id.get(newer)
            if partner is not None:
                place(partner, visiting)
        placed.add(hit.id)
        out.append(hit)

    for hit in ranked:
        place(hit, set())
    return out
