"""Hybrid search over one memoryRef: BM25 over the entries' terms and vector similarity,
fused by score so that neither leg's clear hit is lost.

- Text leg (memory/search/lexical.py): BM25 with the memoryRef's term rarity, PostgreSQL's
  stemming and stop words, a mild length normalisation.
- Vector leg: cosine distance under the configured model, through that model's HNSW
  index (memory/indexes/vector_index.py), with pgvector's iterative scan so filters
  (tenant, memoryRef, liveness, tags...) never starve the top-k; only vectors of the
  entry's current content count.
- Fusion: an entry's score is its BM25 score over the best one's (1 for the text leg's
  top hit) plus ``VECTOR_WEIGHT`` times its similarity scaled between the vector leg's
  weakest and strongest candidate (0..1). So the text leg's top hit always outranks an
  entry only the vectors found (at most ``VECTOR_WEIGHT`` < 1), a weak word match is
  outranked by a strong neighbour, and agreement of both legs adds up. Reciprocal rank
  fusion, used before, ranked every entry both legs returned above any entry one leg
  found alone, so the noise both legs shared buried clear text hits (LoCoMo development
  turns: hybrid R@10 0.46 against the text leg's 0.55). The weight was chosen on the
  tuning half of those conversations: with the context step, 0.15-0.5 were all within
  a few questions of the text leg alone (the static model adds little to BM25 there),
  and 0.2 gave the best R@5 without losing R@10.

Both legs take the same filters (memory/entries/filters.py, tenant first) and read
``depth`` candidates; the fused ranking gains each entry's context
(memory/search/context.py) and its top ``limit`` is read back whole.
One read-only snapshot.
Equal scores put the newer entry first, then order by id, so a ranking is deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from asyncpg import Record
from pgvector.sqlalchemy import VECTOR
from sqlalchemy import ColumnElement, Float, Integer, Text, any_, bindparam, cast, select
from sqlalchemy.dialects.postgresql import ARRAY

from memory.embeddings.model import EmbeddingModel, EmbeddingUnavailable
from memory.entries.filters import Shape, filter_shape, filter_values, shaped_filters
from memory.entries.rows import HOST_ENTRY_COLUMNS, stored_host_entry
from memory.indexes.vector_index import index_expression
from memory.indexes.vectors import EntryVectors
from memory.input_gate import checked, read_query
from memory.search.context import ScoreUnfound, with_context
from memory.search.hits import LegHit, Ranked, best_first
from memory.search.lexical import lexical_ranking, lexical_scores
from memory.search.update_marks import (
    NO_MARKS,
    Marks,
    admitted_partners,
    newest_first,
    read_marks,
)
from memory.storage import tables
from memory.storage.database import Database
from memory.storage.prepared import DriverConnection, Prepared, sql_string
from memory.storage.tenant_scope import scoped_by_params
from schemas.errors import InvalidInput
from schemas.memory_entry import MemoryQuery
from schemas.memory_ref import MemoryRef
from schemas.search import SearchHit, SearchMode, SearchRequest, SearchResult

ENTRIES, EMBEDDINGS = tables.entries, tables.embeddings
# How much the vector leg's closeness (0..1) adds to the text leg's relative score (0..1).
VECTOR_WEIGHT = 0.2
# Candidates each leg reads: enough for the fused top-k to be stable.
MIN_DEPTH = 50
# Nearest vectors read per candidate the vector leg returns (before the entry filters).
OVER_FETCH = 4
MAX_EF_SEARCH = 1000


def fuse(text_hits: Sequence[LegHit], vector_hits: Sequence[LegHit]) -> list[Ranked]:
    """Score fusion of BM25-scored and cosine-distanced candidates, each leg best first
    (see the module doc). Equal scores: the newer entry first (a fact restated later is
    likelier current), then by id so the order is deterministic."""
    scores: dict[str, float] = {}
    written = {hit.id: hit.created_at for hit in (*text_hits, *vector_hits)}
    if text_hits:
        best = text_hits[0].value
        for hit in text_hits:
            scores[hit.id] = hit.value / best if best > 0 else 0.0
    if vector_hits:
        nearest, farthest = vector_hits[0].value, vector_hits[-1].value
        spread = farthest - nearest
        for hit in vector_hits:
            closeness = (farthest - hit.value) / spread if spread > 0 else 1.0
            scores[hit.id] = scores.get(hit.id, 0.0) + VECTOR_WEIGHT * closeness
    text_rank = {hit.id: rank for rank, hit in enumerate(text_hits, 1)}
    vector_rank = {hit.id: rank for rank, hit in enumerate(vector_hits, 1)}
    return best_first(
        [
            Ranked(
                entry_id,
                score,
                text_rank.get(entry_id),
                vector_rank.get(entry_id),
                written[entry_id],
            )
            for entry_id, score in scores.items()
        ]
    )


class EntrySearch:
    def __init__(self, db: Database, vectors: EntryVectors) -> None:
        self.db = db
        self.vectors = vectors

    @property
    def semantic(self) -> bool:
        """Whether the vector leg exists (an embedding model is configured)."""
        return self.vectors.model is not None

    async def search(self, ref: MemoryRef, request: SearchRequest) -> SearchResult:
        request = checked(SearchRequest, request)
        mode = request.mode
        if mode is SearchMode.SEMANTIC and not self.semantic:
            raise InvalidInput("mode", "'semantic' needs an embedding model; this host has none")
        ranked, rows, marks = await self.ranking(
            ref, request.query, request.filters(), request.limit, mode, HOST_ENTRY_COLUMNS
        )
        hits = tuple(
            SearchHit(
                entry=marks.mark(stored_host_entry(rows[hit.id])),
                score=hit.score,
                text_rank=hit.text_rank,
                vector_rank=hit.vector_rank,
            )
            for hit in ranked
            if hit.id in rows
        )
        model = self.vectors.model if mode is not SearchMode.TEXT else None
        return SearchResult(mode=mode, model=model.id if model else None, hits=hits)

    async def ranking(
        self,
        ref: MemoryRef,
        query: str,
        filters: MemoryQuery,
        limit: int,
        mode: SearchMode = SearchMode.HYBRID,
        columns: Sequence[ColumnElement[Any]] = (),
    ) -> tuple[list[Ranked], dict[str, Record], Marks]:
        """The fused ranking of the entries ``filters`` admit, best first but each
        changed fact's newer value right before its older one (memory/search/
        update_marks.py), at most ``limit`` long; ``columns`` (id included) of those
        entries by id, read in the same snapshot (an entry that stopped being live
        meanwhile is not among them); and the entries' update marks."""
        admitted = read_query(filters)
        if admitted is None:
            return [], {}, NO_MARKS
        depth = max(MIN_DEPTH, limit)
        query_vector = None
        if mode is not SearchMode.TEXT and self.semantic:
            try:
                query_vector = (await self.vectors.compute_strict([query]))[0]
            except EmbeddingUnavailable:
                if mode is SearchMode.SEMANTIC:
                    raise
        now = self.db.now()
        fetched = min(depth * OVER_FETCH, MAX_EF_SEARCH)
        # Iterative scan keeps walking the HNSW graph while the memoryRef and model
        # conditions drop neighbours (pgvector 0.8; relaxed order, re-sorted below).
        settings = (
            (
                "SET LOCAL hnsw.iterative_scan = relaxed_order",
                f"SET LOCAL hnsw.ef_search = {fetched}",
            )
            if query_vector is not None
            else ()
        )
        async with self.db.driver() as connection, connection.snapshot(*settings):
            text_hits = (
                await lexical_ranking(connection, ref, query, admitted, now, depth)
                if mode is not SearchMode.SEMANTIC
                else []
            )
            vector_hits = (
                await self._vector_leg(connection, ref, query_vector, admitted, now, depth, fetched)
                if query_vector is not None
                else []
            )
            ranked = fuse(text_hits, vector_hits)
            score_unfound = (
                _lexical_scorer(connection, ref, query, admitted, now, text_hits)
                if mode is not SearchMode.SEMANTIC
                else None
            )
            ranked = (await with_context(connection, ref, ranked, score_unfound))[:limit]
            marks = await read_marks(connection, ref, [hit.id for hit in ranked], now)
            if marks.partners:
                shape = filter_shape(admitted)
                pulled = await admitted_partners(
                    connection, ref, admitted, shape, marks, ranked, now
                )
                ranked = newest_first(ranked, marks, pulled)[:limit]
                if pulled:
                    marks = await read_marks(connection, ref, [hit.id for hit in ranked], now)
            rows = await _read(connection, ref, ranked, columns, now) if columns else {}
        return ranked, rows, marks

    async def _vector_leg(
        self,
        connection: DriverConnection,
        ref: MemoryRef,
        query_vector: object,
        filters: MemoryQuery,
        now: datetime,
        depth: int,
        fetched: int,
    ) -> list[LegHit]:
        """The nearest ``depth`` admitted entries with their cosine distances (ties:
        newest first, then by id)."""
        model = self.vectors.model
        assert model is not None
        shape = filter_shape(filters)
        statement = _VECTOR_STATEMENTS.get((model, shape))
        if statement is None:
            statement = _VECTOR_STATEMENTS[(model, shape)] = _vector_statement(model, shape)
        values = filter_values(ref, filters, now)
        values.update(query_vector=query_vector, fetched=fetched, depth=depth)
        rows = await connection.fetch(statement, values)
        return [LegHit(row["entry_id"], float(row["distance"]), row["created_at"]) for row in rows]


def _lexical_scorer(
    connection: DriverConnection,
    ref: MemoryRef,
    query: str,
    filters: MemoryQuery,
    now: datetime,
    text_hits: Sequence[LegHit],
) -> ScoreUnfound:
    """Scores of entries the text leg did not return, on the fused scale (BM25 over the
    leg's best)."""
    best = text_hits[0].value if text_hits else 0.0

    async def score(ids: list[str]) -> list[Ranked]:
        if best <= 0:
            return []
        hits = await lexical_scores(connection, ref, query, ids, filters, now)
        return [Ranked(hit.id, hit.value / best, None, None, hit.created_at) for hit in hits]

    return score


def _vector_statement(model: EmbeddingModel, shape: Shape) -> Prepared:
    """The vector leg for one model and filter shape. The nearest vectors of this
    memoryRef and model first, through the model's HNSW index (a subquery with a LIMIT:
    PostgreSQL keeps it apart from the join, whose checksum condition would otherwise
    make it estimate one row and scan every vector). The model is written into the
    statement, as the partial index's predicate is, so every plan can use the index.
    Then the liveness, checksum and caller's filters on the entries: over-fetching
    OVER_FETCH times the depth leaves enough after them in all but very selective
    filters, where the full-text leg still answers."""
    probe = cast(bindparam("query_vector", type_=VECTOR()), VECTOR(model.dimensions))
    distance = index_expression(model).op("<=>", return_type=Float)(probe)
    nearest = (
        select(EMBEDDINGS.c.entry_id, EMBEDDINGS.c.content_sha256, distance.label("distance"))
        .where(scoped_by_params(EMBEDDINGS), EMBEDDINGS.c.model == sql_string(model.id))
        .order_by(distance)
        .limit(bindparam("fetched", type_=Integer))
        .subquery("nearest")
    )
    return Prepared(
        select(nearest.c.entry_id, nearest.c.distance, ENTRIES.c.created_at)
        .join(
            ENTRIES,
            (ENTRIES.c.id == nearest.c.entry_id)
            & (ENTRIES.c.content_sha256 == nearest.c.content_sha256),
        )
        .where(*shaped_filters(shape))
        .order_by(nearest.c.distance, ENTRIES.c.created_at.desc(), nearest.c.entry_id)
        .limit(bindparam("depth", type_=Integer))
    )


_VECTOR_STATEMENTS: dict[tuple[EmbeddingModel, Shape], Prepared] = {}
_READS: dict[tuple[str, ...], Prepared] = {}


async def _read(
    connection: DriverConnection,
    ref: MemoryRef,
    ranked: Sequence[Ranked],
    columns: Sequence[ColumnElement[Any]],
    now: datetime,
) -> dict[str, Record]:
    """``columns`` of the ranked entries still live, by id."""
    if not ranked:
        return {}
    key = tuple(str(column.key) for column in columns)
    statement = _READS.get(key)
    if statement is None:
        statement = _READS[key] = Prepared(
            select(*columns).where(
                *shaped_filters(()), ENTRIES.c.id == any_(bindparam("ids", type_=ARRAY(Text)))
            )
        )
    values = filter_values(ref, MemoryQuery(), now)
    values["ids"] = [hit.id for hit in ranked]
    return {row["id"]: row for row in await connection.fetch(statement, values)}
