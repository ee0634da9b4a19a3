"""Hybrid search over one memoryRef: PostgreSQL full-text search and vector similarity,
fused by reciprocal rank (RRF, k = 60: a document's score is the sum over the legs that
found it of 1 / (60 + its rank there)).

- Text leg: the query's words OR-ed (``websearch_to_tsquery`` with ``or`` between words:
  stemmed, stop words dropped), matched against the GIN-indexed ``search_terms`` and
  ranked by ``ts_rank`` normalised by length. AND semantics would find nothing for most
  paraphrased questions.
- Vector leg: cosine distance under the configured model, through that model's HNSW
  index (memory/indexes/vector_index.py), with pgvector's iterative scan so filters
  (tenant, memoryRef, liveness, tags...) never starve the top-k; only vectors of the
  entry's current content count.

Both legs take the same filters (memory/entries/filters.py, tenant first) and read
``depth`` candidates; the fused top ``limit`` is read back whole. One read transaction.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pgvector.sqlalchemy import VECTOR
from sqlalchemy import ColumnElement, Float, Row, bindparam, cast, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from memory.embeddings.model import EmbeddingUnavailable
from memory.entries.filters import entry_filters
from memory.entries.rows import to_host_entry
from memory.indexes.vector_index import index_expression
from memory.indexes.vectors import EntryVectors
from memory.input_gate import checked, read_query
from memory.search.lexical import lexical_ranking
from memory.storage import tables
from memory.storage.database import Database
from memory.storage.tenant_scope import scoped
from schemas.errors import InvalidInput
from schemas.memory_entry import MemoryQuery
from schemas.memory_ref import MemoryRef
from schemas.search import SearchHit, SearchMode, SearchRequest, SearchResult

ENTRIES, EMBEDDINGS = tables.entries, tables.embeddings
RRF_K = 60
# Candidates each leg reads: enough for the fused top-k to be stable.
MIN_DEPTH = 50
MAX_QUERY_WORDS = 64
# Nearest vectors read per candidate the vector leg returns (before the entry filters).
OVER_FETCH = 4
MAX_EF_SEARCH = 1000
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Ranked:
    id: str
    score: float
    text_rank: int | None
    vector_rank: int | None


def fuse(text_ids: Sequence[str], vector_ids: Sequence[str]) -> list[Ranked]:
    """Reciprocal rank fusion; ties broken by id so the order is deterministic."""
    text_rank = {id_: rank for rank, id_ in enumerate(text_ids, 1)}
    vector_rank = {id_: rank for rank, id_ in enumerate(vector_ids, 1)}
    fused = [
        Ranked(
            id_,
            sum(1.0 / (RRF_K + rank[id_]) for rank in (text_rank, vector_rank) if id_ in rank),
            text_rank.get(id_),
            vector_rank.get(id_),
        )
        for id_ in dict.fromkeys([*text_ids, *vector_ids])
    ]
    return sorted(fused, key=lambda hit: (-hit.score, hit.id))


def or_query(query: str) -> str:
    """The query's words joined by ``or`` for websearch_to_tsquery: any of them matches."""
    return " or ".join(_WORD.findall(query)[:MAX_QUERY_WORDS])


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
        ranked, rows = await self.rank(
            ref, request.query, request.filters(), request.limit, mode, tables.entry_columns
        )
        hits = tuple(
            SearchHit(
                entry=to_host_entry(rows[hit.id]),
                score=hit.score,
                text_rank=hit.text_rank,
                vector_rank=hit.vector_rank,
            )
            for hit in ranked
            if hit.id in rows
        )
        model = self.vectors.model if mode is not SearchMode.TEXT else None
        return SearchResult(mode=mode, model=model.id if model else None, hits=hits)

    async def rank(
        self,
        ref: MemoryRef,
        query: str,
        filters: MemoryQuery,
        limit: int,
        mode: SearchMode = SearchMode.HYBRID,
        columns: Sequence[ColumnElement[Any]] = (),
    ) -> tuple[list[Ranked], dict[str, Row[Any]]]:
        """The fused ranking of the entries ``filters`` admit, best first, at most
        ``limit`` long, and ``columns`` (id included) of those entries by id, read in the
        same transaction (an entry that stopped being live meanwhile is not among them)."""
        admitted = read_query(filters)
        if admitted is None:
            return [], {}
        depth = max(MIN_DEPTH, limit)
        query_vector = None
        if mode is not SearchMode.TEXT and self.semantic:
            try:
                query_vector = (await self.vectors.compute_strict([query]))[0]
            except EmbeddingUnavailable:
                if mode is SearchMode.SEMANTIC:
                    raise
        async with self.db.reading_together() as connection:
            text_ids = (
                await self._text_leg(connection, ref, query, admitted, depth)
                if mode is not SearchMode.SEMANTIC
                else []
            )
            vector_ids = (
                await self._vector_leg(connection, ref, query_vector, admitted, depth)
                if query_vector is not None
                else []
            )
            ranked = fuse(text_ids, vector_ids)[:limit]
            rows = await self._read(connection, ref, ranked, columns) if columns else {}
        return ranked, rows

    async def _text_leg(
        self,
        connection: AsyncConnection,
        ref: MemoryRef,
        query: str,
        filters: MemoryQuery,
        depth: int,
    ) -> list[str]:
        ranked = await lexical_ranking(connection, ref, query, filters, self.db.now(), depth)
        return [entry_id for entry_id, _ in ranked]

    async def _vector_leg(
        self,
        connection: AsyncConnection,
        ref: MemoryRef,
        query_vector: object,
        filters: MemoryQuery,
        depth: int,
    ) -> list[str]:
        model = self.vectors.model
        assert model is not None
        # The nearest vectors of this memoryRef and model first, through the model's HNSW
        # index (a subquery with a LIMIT: PostgreSQL keeps it apart from the join, whose
        # checksum condition would otherwise make it estimate one row and scan every
        # vector). Iterative scan keeps walking the graph while the memoryRef and model
        # conditions drop neighbours (pgvector 0.8; relaxed order, re-sorted below). Then
        # the liveness, checksum and caller's filters on the entries: over-fetching
        # OVER_FETCH times the depth leaves enough after them in all but very selective
        # filters, where the full-text leg still answers.
        fetched = min(depth * OVER_FETCH, MAX_EF_SEARCH)
        await connection.execute(
            select(
                func.set_config("hnsw.iterative_scan", "relaxed_order", True),
                func.set_config("hnsw.ef_search", str(int(fetched)), True),
            )
        )
        probe = cast(
            bindparam("query_vector", query_vector, type_=VECTOR()), VECTOR(model.dimensions)
        )
        distance = index_expression(model).op("<=>", return_type=Float)(probe)
        nearest = (
            select(EMBEDDINGS.c.entry_id, EMBEDDINGS.c.content_sha256, distance.label("distance"))
            .where(scoped(EMBEDDINGS, ref), EMBEDDINGS.c.model == model.id)
            .order_by(distance)
            .limit(fetched)
            .subquery("nearest")
        )
        candidates = (
            select(nearest.c.entry_id, nearest.c.distance)
            .join(
                ENTRIES,
                (ENTRIES.c.id == nearest.c.entry_id)
                & (ENTRIES.c.content_sha256 == nearest.c.content_sha256),
            )
            .where(*entry_filters(ref, filters, self.db.now()))
            .order_by(nearest.c.distance, nearest.c.entry_id)
            .limit(depth)
        )
        rows = (await connection.execute(candidates)).all()
        return [row.entry_id for row in rows]

    async def _read(
        self,
        connection: AsyncConnection,
        ref: MemoryRef,
        ranked: Sequence[Ranked],
        columns: Sequence[ColumnElement[Any]],
    ) -> dict[str, Row[Any]]:
        if not ranked:
            return {}
        statement = select(*columns).where(
            *entry_filters(ref, MemoryQuery(), self.db.now()),
            ENTRIES.c.id.in_([hit.id for hit in ranked]),
        )
        return {row.id: row for row in (await connection.execute(statement)).all()}
