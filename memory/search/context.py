"""An entry's context in search: the entries written just before and after it.

What an agent asks with is often not in the entry that answers it. In a conversation the
question's words are in one turn and the answer in the next ("Did you read anything
good?" / "Yes, 'Nothing is impossible', it kept me up all night"); notes taken in one
sitting explain each other the same way. So an entry a leg found gains
``CONTEXT_WEIGHT`` times the best score of its neighbours in the order entries were
written (``memory_entries.written_order``, migration 0025) that were said within
``SITTING`` of it (``said_at``, the writer's metadata.saidAt, else when it was written).
Entries said apart (a session summary beside the next day's) lend nothing, and an entry
no leg found is not added for its neighbour's sake (a search for one word does not
come back padded with whatever was written next to its hit).

Only the best ``CONTEXT_SOURCES`` scored entries lend their score: a weaker one's share
could not lift anything into the results. A neighbour is the entry written next to the
source in its memoryRef, whatever its state or the caller's filters (it lends only
when a leg found it, which the filters and liveness decide), so filters never turn
distant entries into neighbours.

The weight was chosen on the tuning half of the LoCoMo development conversations
(benchmarks/recall_bench.py). Where neighbours are unrelated (entries written in a random
order), the same weight cost about 1 point of R@10 in an offline check, against 7-9
gained on conversations; adding the neighbours no leg found would have added 0.6 more.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from sqlalchemy import (
    Interval,
    Select,
    Text,
    and_,
    bindparam,
    func,
    literal_column,
    select,
    true,
    union_all,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.sql import ColumnElement, FromClause

from memory.search.hits import Ranked, best_first
from memory.storage import tables
from memory.storage.prepared import DriverConnection, Prepared
from memory.storage.tenant_scope import scope_params, scoped_by_params
from schemas.memory_ref import MemoryRef

ENTRIES = tables.entries
CONTEXT_WEIGHT = 0.5
CONTEXT_SOURCES = 50
# Made once: an alias proxies every column of the table, which cost a millisecond a query.
SOURCE, BESIDE = ENTRIES.alias("source"), ENTRIES.alias("beside")
SITTING = timedelta(hours=1)


def _said(table: FromClause) -> ColumnElement[datetime]:
    return func.coalesce(table.c.said_at, table.c.created_at)


def _statement() -> Prepared:
    """Each of ``sources``' neighbours said within ``sitting`` of it."""
    given = select(func.unnest(bindparam("sources", type_=ARRAY(Text))).label("id")).subquery(
        "given"
    )

    def adjacent(before: bool) -> Select[tuple[str]]:
        order = BESIDE.c.written_order
        return (
            select(BESIDE.c.id)
            .where(
                scoped_by_params(BESIDE),
                order < SOURCE.c.written_order if before else order > SOURCE.c.written_order,
            )
            .order_by(order.desc() if before else order)
            .limit(literal_column("1"))
            .correlate(SOURCE)
        )

    sides = union_all(adjacent(True), adjacent(False)).subquery("sides").lateral("sides")
    sitting = bindparam("sitting", type_=Interval())
    return Prepared(
        select(SOURCE.c.id.label("source"), ENTRIES.c.id)
        .select_from(given)
        .join(SOURCE, and_(scoped_by_params(SOURCE), SOURCE.c.id == given.c.id))
        .join(sides, true())
        .join(ENTRIES, and_(scoped_by_params(ENTRIES), ENTRIES.c.id == sides.c.id))
        .where(_said(ENTRIES).between(_said(SOURCE) - sitting, _said(SOURCE) + sitting))
    )


_NEIGHBOURS = _statement()


async def neighbours(
    connection: DriverConnection, ref: MemoryRef, sources: Sequence[str]
) -> list[tuple[str, str]]:
    """(source, neighbour) for each entry written right before or right after one of
    ``sources`` (entries of ``ref``) and said within SITTING of it; one statement."""
    if not sources:
        return []
    values = {**scope_params(ref), "sources": list(sources), "sitting": SITTING}
    return [(row["source"], row["id"]) for row in await connection.fetch(_NEIGHBOURS, values)]


async def with_context(
    connection: DriverConnection, ref: MemoryRef, ranked: Sequence[Ranked]
) -> list[Ranked]:
    """``ranked`` (best first) rescored with each entry's context, best first again."""
    own = {hit.id: hit.score for hit in ranked}
    sources = [hit.id for hit in ranked[:CONTEXT_SOURCES] if hit.score > 0]
    lent: dict[str, float] = {}
    for source, neighbour in await neighbours(connection, ref, sources):
        if neighbour in own:
            lent[neighbour] = max(lent.get(neighbour, 0.0), own[source])
    return best_first(
        [replace(hit, score=hit.score + CONTEXT_WEIGHT * lent.get(hit.id, 0.0)) for hit in ranked]
    )
