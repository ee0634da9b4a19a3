"""An entry's context in search: the entries written just before and after it.

What an agent asks with is often not in the entry that answers it. In a conversation the
question's words are in one turn and the answer in the next ("Did you read anything
good?" / "Yes, 'Nothing is impossible', it kept me up all night"); notes taken in one
sitting explain each other the same way. So an entry a leg found gains
``CONTEXT_WEIGHT`` times the best score of its neighbours in the order entries were
written (``memory_entries.written_order``, migration 0025) that were said within
``SITTING`` of it (``said_at``, the writer's metadata.saidAt, else when it was written:
memory/entries/said.py). Entries said apart (a session summary beside the next day's)
lend nothing. A neighbour joins the ranking only if it holds a word of the query
(scored by BM25 as any candidate; a leg reads only its best hundred candidates per
word, and the answer turn often shares nothing with the question but the speaker's
name), so a search for one word does not come back padded with whatever was written
next to its hit.

Only the best ``CONTEXT_SOURCES`` scored entries lend their score: a weaker one's share
could not lift anything into the results. A neighbour is the entry written next to the
source in its memoryRef, whatever its state or the caller's filters (it is ranked
only when live and admitted by them), so filters never turn distant entries into
neighbours.

The weight was chosen on the tuning half of the LoCoMo development conversations
(benchmarks/recall_bench.py). Where neighbours are unrelated (entries written in a random
order), the same weight cost about 1 point of R@10 in an offline check, against 7-9
gained on conversations.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
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

from memory.entries.said import said_or_written
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


def _statement() -> Prepared:
    """Each of ``sources``' neighbours said within ``sitting`` of it."""
    given = select(func.unnest(bindparam("sources", type_=ARRAY(Text))).label("id")).subquery(
        "given"
    )

    def adjacent(before: bool) -> Select[tuple[str, datetime]]:
        order = BESIDE.c.written_order
        return (
            select(BESIDE.c.id, said_or_written(BESIDE).label("said"))
            .where(
                # The memoryRef alone (it names its tenant, and the source row is scoped
                # by both): with the tenant too, a plan made before a fresh table's
                # statistics took an index on (tenant, memory_ref, ...) for one row and
                # sorted every entry of the memoryRef per probe.
                BESIDE.c.memory_ref == bindparam("scope_ref"),
                order < SOURCE.c.written_order if before else order > SOURCE.c.written_order,
            )
            .order_by(order.desc() if before else order)
            .limit(literal_column("1"))
            .correlate(SOURCE)
        )

    sides = union_all(adjacent(True), adjacent(False)).subquery("sides").lateral("sides")
    sitting = bindparam("sitting", type_=Interval())
    # The neighbour's said time comes out of the index probe itself: with a join back to
    # the entries, a plan made before a fresh table's statistics existed scanned every
    # entry once per neighbour (minutes for 50 sources of 8,000 entries).
    return Prepared(
        select(SOURCE.c.id.label("source"), sides.c.id)
        .select_from(given)
        .join(SOURCE, and_(scoped_by_params(SOURCE), SOURCE.c.id == given.c.id))
        .join(sides, true())
        .where(
            sides.c.said.between(
                said_or_written(SOURCE) - sitting, said_or_written(SOURCE) + sitting
            )
        )
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


# Scores (fused, as the ranking's) of entries no leg returned, among the given ids: those
# that hold a word of the query and the caller's filters admit.
ScoreUnfound = Callable[[list[str]], Awaitable[list[Ranked]]]


async def with_context(
    connection: DriverConnection,
    ref: MemoryRef,
    ranked: Sequence[Ranked],
    score_unfound: ScoreUnfound | None,
) -> list[Ranked]:
    """``ranked`` (best first) rescored with each entry's context, best first again. A
    neighbour no leg returned joins when ``score_unfound`` scores it (it holds a word of
    the query: a leg's candidates are only its best few hundred)."""
    found = {hit.id: hit for hit in ranked}
    sources = [hit.id for hit in ranked[:CONTEXT_SOURCES] if hit.score > 0]
    pairs = await neighbours(connection, ref, sources)
    unfound = sorted({neighbour for _, neighbour in pairs} - found.keys())
    if unfound and score_unfound is not None:
        for hit in await score_unfound(unfound):
            found[hit.id] = hit
    lent: dict[str, float] = {}
    for source, neighbour in pairs:
        if neighbour in found:
            lent[neighbour] = max(lent.get(neighbour, 0.0), found[source].score)
    return best_first(
        [
            replace(hit, score=hit.score + CONTEXT_WEIGHT * lent.get(hit.id, 0.0))
            for hit in found.values()
        ]
    )
