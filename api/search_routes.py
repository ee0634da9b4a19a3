"""Search for OpenIntent users: ``POST /api/v1/memory/search`` ranks one agent's live
memory against a query (hybrid full-text and semantic, memory/search/ranking.py).

RFC-0015 §4.3 leaves semantic search to extensions that are additive and discoverable:
this route adds to the tag query, and the discovery document's ``memory.search.modes``
says whether the semantic leg exists. The body uses the RFC's snake_case names and its
filters (``tags``, ``tags_any``, ``memory_type``, ``namespace`` with a trailing ``*`` for
a prefix); the agent comes from ``agent_id`` or ``X-Agent-ID``, as on every route.
"""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from api.auth import Api, Tenant
from api.openintent_models import MemoryEntryOut, entry_out
from api.openintent_routes import AgentHeader, addressed_agent, namespace_filter
from schemas.memory_entry import MAX_RELEVANCE_QUERY_CHARS, Tier
from schemas.search import DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, SearchMode, SearchRequest

router = APIRouter(prefix="/api/v1", tags=["Search (extension to RFC-0015)"])


class SearchBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=MAX_RELEVANCE_QUERY_CHARS)
    agent_id: str | None = None
    limit: int = Field(default=DEFAULT_SEARCH_LIMIT, ge=1, le=MAX_SEARCH_LIMIT)
    mode: SearchMode = SearchMode.HYBRID
    tags: list[str] = Field(default_factory=list, description="all must match")
    tags_any: list[str] = Field(default_factory=list, description="any may match")
    memory_type: Tier | None = None
    namespace: str | None = Field(default=None, description="exact, or a prefix ending in *")
    updated_after: AwareDatetime | None = None
    updated_before: AwareDatetime | None = None
    said_by: str | None = Field(default=None, description="who said it (metadata.saidBy)")
    said_after: AwareDatetime | None = Field(
        default=None, description="said after (metadata.saidAt, else when written)"
    )
    said_before: AwareDatetime | None = None
    exclude_superseded: bool = Field(
        default=False, description="leave out entries a later entry supersedes"
    )

    def request(self) -> SearchRequest:
        namespace, prefix = namespace_filter(self.namespace)
        # Unvalidated filters on purpose: a value no entry can hold finds nothing (the
        # store's read rule); the query, limit and mode were checked above.
        return SearchRequest.model_construct(
            query=self.query,
            limit=self.limit,
            mode=self.mode,
            tags_all=tuple(self.tags),
            tags_any=tuple(self.tags_any),
            tier=self.memory_type,
            namespace=namespace,
            namespace_prefix=prefix,
            updated_after=self.updated_after,
            updated_before=self.updated_before,
            said_by=self.said_by,
            said_after=self.said_after,
            said_before=self.said_before,
            exclude_superseded=self.exclude_superseded,
        )


class SearchHitOut(BaseModel):
    entry: MemoryEntryOut
    score: float
    text_rank: int | None = None
    vector_rank: int | None = None


class SearchOut(BaseModel):
    mode: SearchMode
    model: str | None = Field(default=None, description="the embedding model of the vectors")
    results: list[SearchHitOut]


@router.post("/memory/search", response_model=SearchOut)
async def search_memory(
    body: SearchBody, api: Api, tenant: Tenant, x_agent_id: AgentHeader = None
) -> SearchOut:
    ref, agent = addressed_agent(tenant, body.agent_id, x_agent_id)
    found = await api.store.search(ref, body.request())
    return SearchOut(
        mode=found.mode,
        model=found.model,
        results=[
            SearchHitOut(
                entry=entry_out(hit.entry, agent),
                score=hit.score,
                text_rank=hit.text_rank,
                vector_rank=hit.vector_rank,
            )
            for hit in found.hits
        ],
    )
