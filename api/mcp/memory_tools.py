"""What an agent can do with its memory over MCP, whatever the transport: the tools'
behaviour on the store's own calls (the same ones the HTTP API and memoryctl make; no
second path to a table).

Every tool works on one memoryRef, the caller's: ``mem://<tenant>/<agent>`` where the
tenant is the caller's (an API key's over HTTP, the operator's configuration over stdio)
and the agent is the tool's ``agent_id`` argument or the caller's configured agent
(api/tenancy.py ``agent_ref``: the opaque-ref rules of the HTTP API). Another tenant's
memory is unreachable: an id from it is unknown here, like an id that never existed.

Bad input raises ``InvalidInput`` naming the argument; the transport answers it as a tool
error result (api/mcp/server.py). Results carry entry text only where the agent asked to
read it (recall, session_start); nothing here logs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from api.tenancy import agent_ref
from memory.redaction.chokepoint import MemorySecretRegistry
from memory.search.read_budget import within_budget
from memory.store import PostgresMemoryStore
from memory.tokens import count_tokens
from schemas.errors import InvalidInput
from schemas.memory_entry import (
    ForgetRequest,
    HostMemoryEntry,
    MemoryQuery,
    NewMemoryEntry,
    Tier,
)
from schemas.memory_ref import MemoryRef
from schemas.search import MAX_SEARCH_LIMIT, SearchRequest

DEFAULT_RECALL_TOKENS = 2_000
MAX_RECALL_TOKENS = 32_000
SecretsFor = Callable[[str], MemorySecretRegistry | None]


@dataclass(frozen=True)
class McpCaller:
    """Who is calling: the tenant, and the agent a tool addresses when it names none."""

    tenant: str
    agent_id: str | None = None


def _checked_budget(token_budget: int) -> int:
    if not 1 <= token_budget <= MAX_RECALL_TOKENS:
        raise InvalidInput("token_budget", f"must be between 1 and {MAX_RECALL_TOKENS}")
    return token_budget


def _entry(entry: HostMemoryEntry, score: float | None = None) -> dict[str, Any]:
    said = entry.metadata.get("saidAt") if entry.metadata else None
    out: dict[str, Any] = {
        "id": entry.id,
        "text": entry.content,
        "tags": list(entry.tags),
        "written_at": entry.created_at.isoformat(),
    }
    if said:
        out["said_at"] = said
    if score is not None:
        out["score"] = round(score, 4)
    if entry.superseded_by:
        out["superseded_by"] = entry.superseded_by
    if entry.conflicts_with:
        out["conflicts_with"] = list(entry.conflicts_with)
    return out


class MemoryTools:
    def __init__(self, store: PostgresMemoryStore, secrets_for: SecretsFor) -> None:
        self.store = store
        self.secrets_for = secrets_for

    def ref(self, caller: McpCaller, agent_id: str | None) -> MemoryRef:
        chosen = agent_id if agent_id is not None else caller.agent_id
        if chosen is None:
            raise InvalidInput("agent_id", "required: this connection has no default agent")
        return agent_ref(caller.tenant, chosen)

    async def remember(
        self,
        caller: McpCaller,
        text: str,
        tags: Sequence[str] = (),
        supersedes: str | None = None,
        agent_id: str | None = None,
    ) -> dict[str, Any]:
        ref = self.ref(caller, agent_id)
        entry = _new_entry(text, tags, supersedes)
        stored = await self.store.put(ref, entry, secrets=self.secrets_for(caller.tenant))
        return {"id": stored.id, "supersedes": supersedes} if supersedes else {"id": stored.id}

    async def recall(
        self,
        caller: McpCaller,
        query: str,
        token_budget: int = DEFAULT_RECALL_TOKENS,
        tags: Sequence[str] = (),
        exclude_superseded: bool = False,
        agent_id: str | None = None,
    ) -> dict[str, Any]:
        ref = self.ref(caller, agent_id)
        budget = _checked_budget(token_budget)
        request = _search(query, tags, exclude_superseded)
        found = await self.store.search(ref, request)
        kept = within_budget([hit.entry for hit in found.hits], budget)
        scores = {hit.entry.id: hit.score for hit in found.hits}
        entries = [_entry(entry, scores[entry.id]) for entry in kept]
        return {
            "entries": entries,
            "tokens": sum(count_tokens(entry.content) for entry in kept),
            "token_budget": budget,
        }

    async def forget(
        self,
        caller: McpCaller,
        ids: Sequence[str] = (),
        tag: str | None = None,
        agent_id: str | None = None,
    ) -> dict[str, Any]:
        if bool(ids) == (tag is not None):
            raise InvalidInput("ids", "give either ids or a tag")
        ref = self.ref(caller, agent_id)
        request = _validated(ForgetRequest, {"ids": tuple(ids), "tag": tag})
        forgotten = await self.store.forget(ref, request)
        return {"forgotten": forgotten}

    async def session_start(
        self,
        caller: McpCaller,
        task: str | None = None,
        token_budget: int = DEFAULT_RECALL_TOKENS,
        agent_id: str | None = None,
    ) -> dict[str, Any]:
        """MEMORY-INDEX.json, then the entries most relevant to ``task`` within what is
        left of the budget (without a task, the most recent ones)."""
        ref = self.ref(caller, agent_id)
        budget = _checked_budget(token_budget)
        index = await self.memory_index(caller, agent_id)
        left = max(0, budget - count_tokens(index))
        if task:
            found = await self.store.search(ref, _search(task, (), False))
            ranked = [hit.entry for hit in found.hits]
        else:
            ranked = await self.store.query(ref, MemoryQuery(limit=MAX_SEARCH_LIMIT))
        kept = within_budget(ranked, left) if left else []
        return {"memory_index": json.loads(index), "entries": [_entry(e) for e in kept]}

    async def memory_index(self, caller: McpCaller, agent_id: str | None = None) -> str:
        """The memoryRef's MEMORY-INDEX.json as the last dream wrote it ("{}" before one)."""
        ref = self.ref(caller, agent_id)
        found = await self.store.index_file(ref)
        return found[1].decode("utf-8") if found else "{}"

    async def commitments(
        self,
        caller: McpCaller,
        action: Literal["list", "cancel", "confirm"] = "list",
        commitment_id: str | None = None,
        agent_id: str | None = None,
    ) -> dict[str, Any]:
        ref = self.ref(caller, agent_id)
        if action == "list":
            listed = await self.store.commitments.list(ref)
            return {"commitments": [_commitment(c) for c in listed]}
        if commitment_id is None:
            raise InvalidInput("commitment_id", f"required to {action}")
        book = self.store.commitments
        changed = await (book.cancel if action == "cancel" else book.confirm)(ref, commitment_id)
        if changed is None:
            raise InvalidInput("commitment_id", "names no commitment of this agent")
        return {"commitment": _commitment(changed)}

    async def proposals(
        self,
        caller: McpCaller,
        action: Literal["list", "show"] = "list",
        proposal_id: str | None = None,
        agent_id: str | None = None,
    ) -> dict[str, Any]:
        ref = self.ref(caller, agent_id)
        proposals = self.store.proposals
        if action == "list":
            listed = await proposals.list(caller.tenant, memory_ref=ref)
            return {"proposals": [_proposal(p) for p in listed]}
        if proposal_id is None:
            raise InvalidInput("proposal_id", "required to show")
        listed = await proposals.list(caller.tenant, memory_ref=ref)
        match = next((p for p in listed if p.id == proposal_id), None)
        if match is None:
            raise InvalidInput("proposal_id", "names no proposal of this agent")
        return {"proposal": match.to_wire()}


def _validated(model: Any, values: dict[str, Any]) -> Any:
    from pydantic import ValidationError

    try:
        return model.model_validate(values)
    except ValidationError as error:
        problem = error.errors()[0]
        field = str(problem["loc"][0]) if problem["loc"] else "input"
        raise InvalidInput(field, problem["msg"]) from None


def _new_entry(text: str, tags: Sequence[str], supersedes: str | None) -> NewMemoryEntry:
    values = {"content": text, "tags": tuple(tags), "tier": Tier.SEMANTIC, "supersedes": supersedes}
    entry: NewMemoryEntry = _validated(NewMemoryEntry, values)
    return entry


def _search(query: str, tags: Sequence[str], exclude_superseded: bool) -> SearchRequest:
    request: SearchRequest = _validated(
        SearchRequest,
        {
            "query": query,
            "limit": MAX_SEARCH_LIMIT,
            "tags_all": tuple(tags),
            "exclude_superseded": exclude_superseded,
        },
    )
    return request


def _commitment(record: Any) -> dict[str, Any]:
    return {
        "commitment_id": record.commitment_id,
        "memory_id": record.memory_id,
        "state": record.state,
        "condition": record.condition,
        "next_at": record.next_at.isoformat() if record.next_at else None,
        "understood": record.understood,
    }


def _proposal(proposal: Any) -> dict[str, Any]:
    return {
        "id": proposal.id,
        "kind": proposal.kind,
        "state": proposal.state,
        "title": proposal.title,
        "created_at": proposal.created_at.isoformat() if proposal.created_at else None,
    }
