"""Search: hybrid full-text and semantic retrieval over one memoryRef (issue 23).

A search ranks the live entries of one memoryRef against a query by fusing the scores
of two legs: BM25 over the entries' terms and vector similarity under the configured
embedding model (memory/search/ranking.py). ``mode`` picks the legs: ``hybrid``
(both; the text leg alone when the host has no embedding model), ``semantic`` (vectors
only) or ``text``. The filters are the OpenIntent query's.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import Field, StringConstraints

from schemas.base import Instant, WireModel
from schemas.input_rules import CHECK_TEXT
from schemas.memory_entry import (
    MAX_RELEVANCE_QUERY_CHARS,
    HostMemoryEntry,
    MemoryQuery,
    Name,
    SaidBy,
    Tag,
    Tier,
)

MAX_SEARCH_LIMIT = 100
DEFAULT_SEARCH_LIMIT = 10


class SearchMode(StrEnum):
    HYBRID = "hybrid"
    SEMANTIC = "semantic"
    TEXT = "text"


SearchQuery = Annotated[
    str,
    StringConstraints(min_length=1, max_length=MAX_RELEVANCE_QUERY_CHARS),
    CHECK_TEXT,
]


class SearchRequest(WireModel):
    query: SearchQuery
    limit: int = Field(default=DEFAULT_SEARCH_LIMIT, ge=1, le=MAX_SEARCH_LIMIT)
    mode: SearchMode = SearchMode.HYBRID
    tags_all: tuple[Tag, ...] = ()
    tags_any: tuple[Tag, ...] = ()
    tier: Tier | None = None
    namespace: Name | None = None
    namespace_prefix: Name | None = None
    updated_after: Instant | None = None
    updated_before: Instant | None = None
    said_by: SaidBy | None = None
    said_after: Instant | None = None
    said_before: Instant | None = None
    # Leave out entries a later live entry supersedes (served, marked, otherwise).
    exclude_superseded: bool = False

    def filters(self) -> MemoryQuery:
        return MemoryQuery(
            tags_all=self.tags_all,
            tags_any=self.tags_any,
            tier=self.tier,
            namespace=self.namespace,
            namespace_prefix=self.namespace_prefix,
            updated_after=self.updated_after,
            updated_before=self.updated_before,
            said_by=self.said_by,
            said_after=self.said_after,
            said_before=self.said_before,
            exclude_superseded=self.exclude_superseded,
        )


class SearchHit(WireModel):
    """One result: the entry, its fused score, and its rank in each leg that found it
    (1 is best; absent when that leg did not)."""

    entry: HostMemoryEntry
    score: float
    text_rank: int | None = None
    vector_rank: int | None = None


class SearchResult(WireModel):
    mode: SearchMode
    model: str | None = None
    hits: tuple[SearchHit, ...]
