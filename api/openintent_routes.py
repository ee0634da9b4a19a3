"""OpenIntent RFC-0015 memory REST on the same store (see api/openintent_models.py for
how agent_id, namespace and value map onto entries).

Two list routes serve the same query: ``GET /api/v1/memory?agent_id=`` answers with the
RFC's envelope, and ``GET /api/v1/agents/{agent_id}/memory`` with the bare array the
official SDK (openintent 0.17 ``list_memory``) parses. Routes that address one entry take
the agent from ``agent_id`` or the ``X-Agent-ID`` header the SDK always sends.

Lifecycle events (RFC-0015 §5) are read per agent (``GET /api/v1/memory/events``) and
per intent (``GET /api/v1/intents/{intent_id}/events``, where the SDK's ``get_events``
reads them; memory/keyed_ids/intent_links.py says how an event knows its intent).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Header, Query, Request
from pydantic import AwareDatetime, BaseModel, Field

from api.auth import Api, Tenant, authenticating, tenant
from api.errors import ApiError, not_found
from api.openintent_events import OPENINTENT_EVENT_TYPES
from api.openintent_models import (
    OPENINTENT_METADATA,
    CreateMemoryRequest,
    DeletedEntry,
    EventPage,
    IntentEventOut,
    LifecycleEvent,
    MemoryEntryOut,
    MemoryPage,
    UpdateMemoryRequest,
    canonical_value,
    entry_out,
    expiry_of,
    lifecycle_data,
    openintent_metadata,
)
from api.tenancy import agent_ref
from schemas.errors import ErrorCode
from schemas.events import LIFECYCLE_TYPES
from schemas.memory_entry import (
    MAX_LIST_LIMIT,
    MAX_QUERY_OFFSET,
    Attribution,
    EntryChanges,
    MemoryQuery,
    NewMemoryEntry,
    Tier,
)
from schemas.memory_ref import MemoryRef, parse_memory_ref

router = APIRouter(prefix="/api/v1", tags=["OpenIntent memory (RFC-0015)"])

# The SDK's reference server's bounds for an intent's events.
MAX_INTENT_EVENTS = 1000
AgentHeader = Annotated[str | None, Header(alias="X-Agent-ID")]


def addressed_agent(tenant: str, agent_id: str | None, header: str | None) -> tuple[MemoryRef, str]:
    chosen = agent_id if agent_id is not None else header
    if chosen is None:
        raise ApiError(
            422,
            ErrorCode.INVALID_INPUT.value,
            "agent_id: required (query parameter, body field or X-Agent-ID header)",
            field="agent_id",
        )
    ref = agent_ref(tenant, chosen)
    return ref, ref.agent


@authenticating
async def _request_agent(
    request: Request, x_agent_id: AgentHeader = None, agent_id: str | None = None
) -> tuple[MemoryRef, str]:
    """The agent a request addresses: ``agent_id`` in the query, else ``X-Agent-ID``.
    The key is checked by calling ``tenant`` rather than depending on it: one dependency
    less for FastAPI to resolve on the routes every session start calls."""
    return addressed_agent(await tenant(request), agent_id, x_agent_id)


RequestAgent = Annotated[tuple[MemoryRef, str], Depends(_request_agent)]


def _attribution(header: str | None) -> Attribution | None:
    return Attribution(agent_id=header[:128]) if header else None


@router.post("/memory", status_code=201, response_model=MemoryEntryOut)
async def create_memory(
    body: CreateMemoryRequest, api: Api, tenant: Tenant, x_agent_id: AgentHeader = None
) -> MemoryEntryOut:
    ref, agent = addressed_agent(tenant, body.agent_id, x_agent_id)
    now = api.store.now()
    entry = await api.store.put(
        ref,
        NewMemoryEntry(
            content=canonical_value(body.value),
            tags=body.tags,
            tier=body.memory_type,
            namespace=body.namespace,
            key=body.key,
            pinned=body.pinned,
            priority=body.priority,
            metadata={
                **openintent_metadata(body.scope, body.ttl, body.sensitivity, body.curated_by),
                **body.said(),
            },
            expires_at=expiry_of(body.ttl, body.expires_at, now),
            supersedes=body.supersedes,
            supersede_key=body.supersede_existing,
        ),
        secrets=api.registries.for_tenant(tenant),
        attribution=_attribution(x_agent_id),
    )
    return entry_out(entry, agent)


def namespace_filter(raw: str | None) -> tuple[str | None, str | None]:
    """RFC-0015's ``namespace``: exact, or a prefix ending in ``*``. (namespace, prefix)."""
    if raw and raw.endswith("*"):
        return None, raw[:-1] or None
    return raw, None


class MemoryFilters(BaseModel):
    """The RFC-0015 §4.1 query parameters both list routes take."""

    namespace: str | None = Field(default=None, description="exact, or a prefix ending in *")
    key: str | None = None
    memory_type: Tier | None = None
    tags: str | None = Field(default=None, description="comma-separated, all must match")
    tags_any: str | None = Field(default=None, description="comma-separated, any may match")
    pinned: bool | None = None
    updated_after: AwareDatetime | None = None
    updated_before: AwareDatetime | None = None
    exclude_superseded: bool = Field(
        default=False, description="leave out entries a later entry supersedes"
    )
    limit: int = Field(default=100, ge=1, le=MAX_LIST_LIMIT)
    offset: int = Field(default=0, ge=0, le=MAX_QUERY_OFFSET)

    def query(self) -> MemoryQuery:
        def split(raw: str | None) -> tuple[str, ...]:
            return tuple(t.strip() for t in raw.split(",") if t.strip()) if raw else ()

        namespace, prefix = namespace_filter(self.namespace)
        # Unvalidated on purpose: a filter value no entry can hold finds nothing (the
        # store's read rule), rather than being an error.
        return MemoryQuery.model_construct(
            tags_all=split(self.tags),
            tags_any=split(self.tags_any),
            tier=self.memory_type,
            namespace=namespace,
            namespace_prefix=prefix,
            key=self.key,
            pinned=self.pinned,
            subject=None,
            updated_after=self.updated_after,
            updated_before=self.updated_before,
            exclude_superseded=self.exclude_superseded,
            limit=self.limit,
            offset=self.offset,
        )


Filters = Annotated[MemoryFilters, Query()]
Limit = Annotated[int, Query(ge=1, le=MAX_LIST_LIMIT)]


@router.get("/memory", response_model=MemoryPage)
async def query_memory(api: Api, filters: Filters, addressed: RequestAgent) -> MemoryPage:
    ref, agent = addressed
    query = filters.query()
    found = await api.store.query(ref, query)
    total = await api.store.count(ref, query)
    entries = [entry_out(e, agent) for e in found]
    return MemoryPage(entries=entries, total=total, limit=filters.limit, offset=filters.offset)


@router.get("/agents/{agent_id}/memory", response_model=list[MemoryEntryOut])
async def list_agent_memory(
    agent_id: str, api: Api, tenant: Tenant, filters: Filters
) -> list[MemoryEntryOut]:
    ref, agent = addressed_agent(tenant, agent_id, None)
    return [entry_out(e, agent) for e in await api.store.query(ref, filters.query())]


@router.get("/memory/events", response_model=EventPage)
async def memory_events(
    api: Api,
    addressed: RequestAgent,
    cursor: Annotated[int, Query(ge=0)] = 0,
    limit: Limit = 100,
) -> EventPage:
    """Lifecycle events (RFC-0015 §5) after ``cursor``, oldest first; pass ``next_cursor``
    back to read on. Events carry ids, never the value."""
    ref, agent = addressed
    found = await api.store.events(
        ref, after_seq=cursor, limit=limit, types=[t.value for t in LIFECYCLE_TYPES]
    )
    events = [
        LifecycleEvent(
            seq=e.seq,
            type=e.type,
            agent_id=agent,
            data=lifecycle_data(e.payload),
            timestamp=e.occurred_at,
        )
        for e in found
    ]
    return EventPage(events=events, next_cursor=found[-1].seq if len(found) == limit else None)


@router.get("/intents/{intent_id}/events", response_model=list[IntentEventOut])
async def intent_events(
    intent_id: str,
    api: Api,
    tenant: Tenant,
    event_type: str | None = None,
    since: Annotated[AwareDatetime | None, Query(description="created strictly after")] = None,
    limit: int = 100,
) -> list[IntentEventOut]:
    """The lifecycle events (RFC-0015 §5) of the tenant's entries scoped to the intent,
    across agents, oldest first: what the SDK's ``get_events`` reads, as a bare list like
    its reference server. An intent no entry was scoped to, or another tenant's, has
    none: an empty list, never a 404 (so neither tells whether it exists)."""
    if not 1 <= limit <= MAX_INTENT_EVENTS:
        raise ApiError(
            422,
            ErrorCode.INVALID_INPUT.value,
            f"limit: must be from 1 to {MAX_INTENT_EVENTS}",
            field="limit",
            limit=MAX_INTENT_EVENTS,
        )
    if event_type is not None and event_type not in OPENINTENT_EVENT_TYPES:
        raise ApiError(
            422,
            ErrorCode.INVALID_INPUT.value,
            "event_type: must be an OpenIntent event type, such as memory.created",
            field="event_type",
        )
    if event_type is not None and event_type not in LIFECYCLE_TYPES:
        return []  # a valid type that memory never emits
    found = await api.store.event_log.intent_events(
        tenant,
        intent_id,
        types=[event_type] if event_type else [],
        since=since,
        limit=limit,
    )
    items = []
    for e in found:
        ref = parse_memory_ref(e.memory_ref)
        agent = f"{ref.agent}/{ref.scope}" if ref.scope else ref.agent
        items.append(
            IntentEventOut(
                id=f"{agent}:{e.seq}",
                intent_id=intent_id,
                event_type=e.type,
                actor=ref.agent,
                payload=lifecycle_data(e.payload),
                created_at=e.occurred_at,
                sequence=e.seq,
            )
        )
    return items


@router.get("/memory/{entry_id}", response_model=MemoryEntryOut)
async def get_memory(entry_id: str, api: Api, addressed: RequestAgent) -> MemoryEntryOut:
    ref, agent = addressed
    entry = await api.store.get_entry(ref, entry_id)
    if entry is None:
        raise not_found("memory entry")
    return entry_out(entry, agent)


def _if_match(raw: str | None) -> int:
    if raw is None:
        raise ApiError(
            428,
            "precondition_required",
            "If-Match: required, the entry's current version (RFC-0015 §3.2)",
            field="If-Match",
        )
    text = raw.strip().strip('"').removeprefix("W/").strip('"')
    if not text.isdigit() or not 1 <= int(text) <= 2**31 - 1:
        raise ApiError(
            422,
            ErrorCode.INVALID_INPUT.value,
            "If-Match: must be the entry's version, an integer from 1 to 2147483647",
            field="If-Match",
        )
    return int(text)


@router.patch("/memory/{entry_id}", response_model=MemoryEntryOut)
async def update_memory(
    entry_id: str,
    body: UpdateMemoryRequest,
    api: Api,
    tenant: Tenant,
    addressed: RequestAgent,
    if_match: Annotated[str | None, Header(alias="If-Match")] = None,
    x_agent_id: AgentHeader = None,
) -> MemoryEntryOut:
    expected = _if_match(if_match)
    ref, agent = addressed
    current = await api.store.get_entry(ref, entry_id, touch=False)
    if current is None:
        raise not_found("memory entry")
    metadata = None
    if any(v is not None for v in (body.scope, body.ttl, body.sensitivity)):
        kept = dict(current.metadata.get(OPENINTENT_METADATA) or {})
        changed = openintent_metadata(body.scope, body.ttl, body.sensitivity, None)
        kept.update(changed.get(OPENINTENT_METADATA, {}))
        metadata = {**current.metadata, OPENINTENT_METADATA: kept}
    updated = await api.store.update(
        ref,
        entry_id,
        EntryChanges(
            content=canonical_value(body.value) if body.value is not None else None,
            tags=body.tags,
            pinned=body.pinned,
            priority=body.priority,
            metadata=metadata,
            expires_at=expiry_of(body.ttl, body.expires_at, api.store.now()),
        ),
        expected_version=expected,
        secrets=api.registries.for_tenant(tenant),
        attribution=_attribution(x_agent_id),
    )
    return entry_out(updated, agent)


@router.delete("/memory/{entry_id}", response_model=DeletedEntry)
async def delete_memory(entry_id: str, api: Api, addressed: RequestAgent) -> DeletedEntry:
    ref, _ = addressed
    if not await api.store.delete(ref, entry_id):
        raise not_found("memory entry")
    return DeletedEntry(id=entry_id, deleted=True)
