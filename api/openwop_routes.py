"""openwop: the discovery document (public) and the agent inventory with the RFC 0080
§C degraded projection."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from api.auth import Api, Tenant
from api.discovery import discovery_document, satisfied_dimensions
from api.discovery_v2 import discovery_document_v2
from api.errors import ApiError, not_found
from api.services import ApiServices
from api.tenancy import owned_ref
from api.wire_version import wire_major
from memory.tenants.agent_manifests import KnownAgent
from memory.tokens import count_tokens
from schemas.capabilities import TOKENIZER_NAME
from schemas.discovery import (
    AgentInventory,
    AgentInventoryEntry,
    AgentManifestRequest,
    DiscoveryDocument,
    MemoryDimension,
    degraded_dimensions,
)
from schemas.discovery_v2 import DiscoveryDocumentV2
from schemas.errors import ErrorCode
from schemas.memory_entry import MemoryListOptions
from schemas.memory_ref import MemoryRef, parse_segment

router = APIRouter()
# Mounted on both majors: /v1/agents (v1) and /agents (v2).
agents_router = APIRouter()
# openwop shapes go out camelCase, and optional fields are absent rather than null (an
# absent memoryDegraded means "satisfied", RFC 0080 §C-1).
WIRE_SHAPED: dict[str, Any] = {
    "response_model_by_alias": True,
    "response_model_exclude_none": True,
    "tags": ["openwop"],
}


@router.get(
    "/.well-known/openwop",
    response_model=DiscoveryDocument | DiscoveryDocumentV2,
    **WIRE_SHAPED,
    summary="Discovery document, computed from the live state (no credentials); "
    "OpenWOP-Version: 2 gets the v2 representation",
)
async def discovery(api: Api, request: Request) -> DiscoveryDocument | DiscoveryDocumentV2:
    state = await api.probe.state()
    v1 = discovery_document(
        state,
        task_queue=api.settings.task_queue,
        max_entry_bytes=api.store.limits.max_content_bytes,
        semantic_search=api.store.searches.semantic,
        proposal_activation=api.settings.proposal_activation,
    )
    return discovery_document_v2(v1) if wire_major(request) == 2 else v1


def _entry(
    tenant: str, agent: KnownAgent, satisfied: dict[MemoryDimension, bool]
) -> AgentInventoryEntry:
    unmet = degraded_dimensions(agent.memory_shape, satisfied) if agent.memory_shape else ()
    return AgentInventoryEntry(
        agent_id=agent.agent_id,
        memory_ref=str(MemoryRef(tenant, agent.agent_id)),
        memory_shape=agent.memory_shape,
        # Absent when satisfied (RFC 0080 §C-1): the fields appear only on a gap.
        memory_degraded=True if unmet else None,
        degraded_memory_dimensions=unmet or None,
    )


@agents_router.get(
    "/agents",
    response_model=AgentInventory,
    **WIRE_SHAPED,
    summary="Agent inventory with memoryDegraded / degradedMemoryDimensions (RFC 0080 §C)",
)
async def agents(api: Api, tenant: Tenant) -> AgentInventory:
    known, satisfied = await _inventory(api, tenant)
    return AgentInventory(agents=tuple(_entry(tenant, agent, satisfied) for agent in known))


@agents_router.get(
    "/agents/{agent_id}",
    response_model=AgentInventoryEntry,
    **WIRE_SHAPED,
    summary="One agent's inventory entry (404 when this tenant registered none by that id)",
)
async def agent(agent_id: str, api: Api, tenant: Tenant) -> AgentInventoryEntry:
    agent_id = parse_segment(agent_id, "agentId")
    known, satisfied = await _inventory(api, tenant)
    for candidate in known:
        if candidate.agent_id == agent_id:
            return _entry(tenant, candidate, satisfied)
    raise not_found("agent")


async def _inventory(
    api: ApiServices, tenant: str
) -> tuple[list[KnownAgent], dict[MemoryDimension, bool]]:
    state = await api.probe.state()
    # When the database goes away the last inventory read is still served, with every
    # agent's unmet dimensions stamped (RFC 0080 §C-2: degraded must be observable).
    if state.database:
        known = await api.manifests.agents(tenant)
        api.last_inventory[tenant] = known
    elif tenant in api.last_inventory:
        known = api.last_inventory[tenant]
    else:
        raise ApiError(
            503,
            ErrorCode.STORE_UNAVAILABLE.value,
            "the memory store is unavailable and this tenant's inventory was never read",
        )
    return list(known), satisfied_dimensions(state)


@agents_router.put(
    "/agents/{agent_id}",
    response_model=AgentInventoryEntry,
    **WIRE_SHAPED,
    summary="Register an agent's manifest memoryShape (host extension)",
)
async def register_agent(
    agent_id: str, body: AgentManifestRequest, api: Api, tenant: Tenant
) -> AgentInventoryEntry:
    agent_id = parse_segment(agent_id, "agentId")
    await api.manifests.register(tenant, agent_id, body.memory_shape)
    state = await api.probe.state()
    agent = KnownAgent(agent_id=agent_id, memory_shape=body.memory_shape)
    return _entry(tenant, agent, satisfied_dimensions(state))


@router.get(
    "/v1/host/memory",
    tags=["openwop"],
    summary="MemoryAdapter.list: most recent first, optionally within a token budget "
    "(RFC 0113; host extension)",
)
async def list_memory(
    api: Api,
    tenant: Tenant,
    memory_ref: Annotated[str, Query(alias="memoryRef")],
    limit: Annotated[int | None, Query()] = None,
    tag: Annotated[str | None, Query()] = None,
    token_budget: Annotated[int | None, Query(alias="tokenBudget")] = None,
    rank: Annotated[str | None, Query()] = None,
    query: Annotated[str | None, Query()] = None,
) -> dict[str, Any]:
    ref = owned_ref(tenant, memory_ref)
    # Validated by the store (memory/input_gate.py): a bad budget or rank is a 422 naming
    # it, a tag no entry can carry finds nothing.
    raw: dict[str, Any] = {
        "limit": limit,
        "tag": tag,
        "token_budget": token_budget,
        "rank": rank,
        "query": query,
    }
    options = MemoryListOptions.model_construct(**raw)
    entries = await api.store.list(ref, options)
    answer: dict[str, Any] = {"entries": [entry.to_wire() for entry in entries]}
    if token_budget is not None:
        answer["tokenBudget"] = token_budget
        answer["tokenCounter"] = TOKENIZER_NAME
        answer["tokensUsed"] = sum(count_tokens(entry.content) for entry in entries)
    return answer


@router.get(
    "/v1/host/memory/events",
    tags=["openwop"],
    summary="The memoryRef's content-free event log, by seq (host extension)",
)
async def memory_events(
    api: Api,
    tenant: Tenant,
    memory_ref: Annotated[str, Query(alias="memoryRef")],
    after_seq: Annotated[int, Query(alias="afterSeq", ge=0)] = 0,
    event_type: Annotated[list[str] | None, Query(alias="type", max_length=16)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    ref = owned_ref(tenant, memory_ref)
    found = await api.store.events(ref, after_seq=after_seq, limit=limit, types=event_type)
    return {
        "events": [event.to_wire() for event in found],
        "nextAfterSeq": found[-1].seq if len(found) == limit else None,
    }
