"""The lexical leg of search: BM25 over the memoryRef's term postings.

The query's terms are PostgreSQL's own reading of it (``to_tsvector('english', query)``:
the same stemming and stop words as the entries' terms, so "turtles" finds "turtle" and
"what did" finds nothing by itself). Each term weighs its rarity in this memoryRef
(``idf = ln(1 + (N - n + 0.5) / (n + 0.5))``, N entries, n of them holding the term),
so a speaker's name, in every turn that speaker said, weighs little and "turtle" a lot;
an entry's score saturates in the term's frequency (k1) and is normalised by the entry's
length against the memoryRef's mean (b), mildly, so a two-word entry is not lifted over
the one that says what was asked.

Only postings of the query's terms are read: each term's best ``POSTINGS_PER_TERM``
(every posting of a term fewer entries hold) are the candidates, and each candidate is
then scored exactly over all the query's terms. An entry that holds only common terms
and is among none of their best postings is not a candidate; its score would be low,
and when a strong hit was written next to it the context step scores it anyway
(``lexical_scores``, memory/search/context.py). The counts come from the rows the
triggers of migration 0024 keep. Entries are filtered as
every read is (tenant first, live, the caller's filters) before the top ``depth``.

K1 and B were chosen on the tuning half of the LoCoMo development conversations
(benchmarks/recall_bench.py): stemming and stop words mattered most (plain BM25's turn
R@10 0.555 -> 0.654 with k1 1.2 and b 0.75); a milder length normalisation added a
little (b 0.4: 0.667).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import (
    CTE,
    ColumnElement,
    Float,
    Integer,
    ScalarSelect,
    Select,
    Subquery,
    Text,
    and_,
    any_,
    bindparam,
    cast,
    func,
    literal_column,
    select,
    text,
    true,
)
from sqlalchemy.dialects.postgresql import ARRAY

from memory.entries.filters import Shape, filter_shape, filter_values, shaped_filters
from memory.search.hits import LegHit
from memory.storage import tables
from memory.storage.prepared import DriverConnection, Prepared
from memory.storage.tenant_scope import scoped_by_params
from schemas.memory_entry import MemoryQuery
from schemas.memory_ref import MemoryRef

ENTRIES, TERMS = tables.entries, tables.terms
TERM_COUNTS, TOTALS = tables.term_counts, tables.ref_term_totals
K1 = 1.2
B = 0.4
# Postings read per query term, best first (most occurrences, then shortest entry): all of
# a term fewer entries hold, the best of a common one (a speaker's name in 50,000 turns
# adds little to any score, and reading all of it cost 100 ms at 100k entries). Scoring
# the candidates is most of a search's work at 100k; 300 and 100 ranked the LoCoMo
# tuning half alike once the context step scores the neighbours they miss.
POSTINGS_PER_TERM = 100


def _number(value: float) -> ColumnElement[float]:
    """A constant written into the statement (compiled once, so not a parameter)."""
    return literal_column(repr(float(value)), Float)


def query_terms() -> ColumnElement[list[str]]:
    """The query's distinct terms as PostgreSQL reads them, as a text[] expression over
    the ``lexical_query`` parameter."""
    return func.tsvector_to_array(
        func.to_tsvector(text("'english'::regconfig"), bindparam("lexical_query", type_=Text))
    )


def _weights() -> CTE:
    """Each query term this memoryRef holds, with its idf and the memoryRef's mean
    entry length in terms."""
    idf = func.ln(
        _number(1.0)
        + (TOTALS.c.entries - TERM_COUNTS.c.entries + _number(0.5))
        / (TERM_COUNTS.c.entries + _number(0.5))
    )
    return (
        select(
            TERM_COUNTS.c.term,
            cast(idf, Float).label("idf"),
            (cast(TOTALS.c.terms, Float) / TOTALS.c.entries).label("mean_terms"),
        )
        .select_from(TERM_COUNTS.join(TOTALS, TOTALS.c.memory_ref == TERM_COUNTS.c.memory_ref))
        .where(
            TERM_COUNTS.c.memory_ref == bindparam("scope_ref"),
            TERM_COUNTS.c.term == any_(query_terms()),
        )
        .cte("weights")
    )


def _score(weights: CTE, entry_id: ColumnElement[str]) -> ScalarSelect[float]:
    """The BM25 score of the entry ``entry_id``, looked up by (memoryRef, entry, term) in
    ix_terms_entry: a correlated subquery, so the plan is one index probe per entry
    whatever the planner guesses of their number (a join was planned against every
    posting of the query's terms when it guessed one candidate). NULL when the entry
    holds no query term."""
    frequency = cast(TERMS.c.frequency, Float)
    length_norm = _number(1.0 - B) + _number(B) * TERMS.c.entry_terms / weights.c.mean_terms
    return (
        select(
            func.sum(
                weights.c.idf
                * frequency
                * _number(K1 + 1)
                / (frequency + _number(K1) * length_norm)
            )
        )
        .select_from(TERMS.join(weights, weights.c.term == TERMS.c.term))
        .where(scoped_by_params(TERMS), TERMS.c.entry_id == entry_id)
        .scalar_subquery()
    )


def _admitted(scored: Subquery, shape: Shape) -> Select[tuple[str, float, datetime]]:
    """``scored`` (entry_id, score) joined to the entries ``shape``'s filters admit."""
    return (
        select(scored.c.entry_id, scored.c.score, ENTRIES.c.created_at)
        .join(
            ENTRIES,
            and_(ENTRIES.c.memory_ref == bindparam("scope_ref"), ENTRIES.c.id == scored.c.entry_id),
        )
        .where(*shaped_filters(shape))
    )


def _ranking_statement(shape: Shape) -> Prepared:
    """The ranking for queries of one filter shape (memory/entries/filters.py), over the
    parameters of ``filter_values`` plus ``lexical_query``, ``postings`` and ``depth``."""
    weights = _weights()
    # Candidates: each term's best POSTINGS_PER_TERM postings (every one of a rarer
    # term), through ix_terms_ranked; then every query term's posting of each candidate,
    # scored exactly.
    best = (
        select(TERMS.c.entry_id)
        .where(scoped_by_params(TERMS), TERMS.c.term == weights.c.term)
        .order_by(TERMS.c.frequency.desc(), TERMS.c.entry_terms, TERMS.c.entry_id)
        .limit(bindparam("postings", type_=Integer))
        .lateral("best")
    )
    candidates = (
        select(best.c.entry_id).select_from(weights.join(best, true())).distinct().cte("candidates")
    )
    scored = select(
        candidates.c.entry_id, _score(weights, candidates.c.entry_id).label("score")
    ).subquery("scored")
    return Prepared(
        _admitted(scored, shape)
        .order_by(scored.c.score.desc(), ENTRIES.c.created_at.desc(), scored.c.entry_id)
        .limit(bindparam("depth", type_=Integer))
    )


def _scores_statement(shape: Shape) -> Prepared:
    """The scores of the entries ``ids`` that ``shape``'s filters admit and that hold a
    query term."""
    weights = _weights()
    given = select(func.unnest(bindparam("ids", type_=ARRAY(Text))).label("entry_id")).subquery(
        "given"
    )
    scored = select(given.c.entry_id, _score(weights, given.c.entry_id).label("score")).subquery(
        "scored"
    )
    return Prepared(_admitted(scored, shape).where(scored.c.score > _number(0.0)))


_RANKINGS: dict[Shape, Prepared] = {}
_SCORES: dict[Shape, Prepared] = {}


async def lexical_ranking(
    connection: DriverConnection,
    ref: MemoryRef,
    query: str,
    filters: MemoryQuery,
    now: datetime,
    depth: int,
) -> list[LegHit]:
    """The top ``depth`` entries admitted by ``filters`` with their BM25 scores, best
    first (ties: newest first, then by id); empty when no term of the query is in this
    memoryRef."""
    shape = filter_shape(filters)
    statement = _RANKINGS.get(shape)
    if statement is None:
        statement = _RANKINGS[shape] = _ranking_statement(shape)
    values = filter_values(ref, filters, now)
    values.update(lexical_query=query, postings=POSTINGS_PER_TERM, depth=depth)
    rows = await connection.fetch(statement, values)
    return [LegHit(row["entry_id"], float(row["score"]), row["created_at"]) for row in rows]


async def lexical_scores(
    connection: DriverConnection,
    ref: MemoryRef,
    query: str,
    ids: Sequence[str],
    filters: MemoryQuery,
    now: datetime,
) -> list[LegHit]:
    """The BM25 scores of those of ``ids`` that ``filters`` admit and that hold one of
    the query's terms at least (in no order): entries the ranking's candidates may have
    missed, scored exactly as it scores its own."""
    if not ids:
        return []
    shape = filter_shape(filters)
    statement = _SCORES.get(shape)
    if statement is None:
        statement = _SCORES[shape] = _scores_statement(shape)
    values = filter_values(ref, filters, now)
    values.update(lexical_query=query, ids=list(ids))
    rows = await connection.fetch(statement, values)
    return [LegHit(row["entry_id"], float(row["score"]), row["created_at"]) for row in rows]
