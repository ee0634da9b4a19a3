"""Fleet dreams: one run dreams every memoryRef with work, in batches of agents per
activity (workflows/fleet_dream.py). Only ids, counts and error codes cross Temporal."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StrictInt

from schemas.base import Instant, WireModel, WireResult
from schemas.memory_ref import MemoryRefField, parse_segment
from schemas.registry import register
from schemas.workflow_io import TokenBudget

MAX_BATCH = 500
MAX_CONCURRENCY = 64
MAX_PAGE = 10_000
# Failed memoryRefs named in a result; the count covers the rest.
MAX_NAMED_FAILURES = 100

Tenant = Annotated[str, AfterValidator(lambda raw: parse_segment(raw, "tenant"))]


class FleetProgress(WireResult):
    """What a fleet run (and the runs it continued from) has done so far."""

    dreamed: int = Field(default=0, ge=0)
    more_left: int = Field(default=0, ge=0)
    failed: int = Field(default=0, ge=0)
    batches: int = Field(default=0, ge=0)
    pages: int = Field(default=0, ge=0)
    failed_refs: tuple[str, ...] = Field(default=(), max_length=MAX_NAMED_FAILURES)


class FleetDreamInput(WireModel):
    """What a schedule passes: ``{}`` dreams every tenant's agents with work;
    ``{"tenant": "acme", "tokenBudget": 8000}`` one tenant's."""

    tenant: Tenant | None = None
    token_budget: TokenBudget | None = None
    # Agents per activity: the Temporal server's cost is per activity, not per agent.
    batch_size: Annotated[StrictInt, Field(ge=1, le=MAX_BATCH)] = 50
    # Batches in flight at once: bounds the load on the memory database.
    concurrency: Annotated[StrictInt, Field(ge=1, le=MAX_CONCURRENCY)] = 4
    # Due refs read per page (one indexed range scan).
    page_size: Annotated[StrictInt, Field(ge=1, le=MAX_PAGE)] = 1_000
    # Set by continue-as-new: where the next page starts, and what is done already.
    after: MemoryRefField | None = None
    progress: FleetProgress = FleetProgress()


class FleetDreamResult(WireResult):
    tenant: str | None
    progress: FleetProgress


class DueRefsRequest(WireModel):
    tenant: Tenant | None = None
    after: MemoryRefField | None = None
    limit: Annotated[StrictInt, Field(ge=1, le=MAX_PAGE)]


class DueRefs(WireResult):
    memory_refs: tuple[str, ...]
    # Read only for a first page of one tenant that found nothing: False when the tenant
    # has no memory at all (a typo in a schedule's input, most likely).
    tenant_has_memory: bool | None = None


class DreamAgentsRequest(WireModel):
    memory_refs: tuple[MemoryRefField, ...] = Field(min_length=1, max_length=MAX_BATCH)
    token_budget: TokenBudget | None = None
    # Names every step's run key: a retried batch finds what its first attempt recorded.
    run_key: str = Field(min_length=1, max_length=300)


AgentStatus = Literal["dreamed", "more-left", "failed"]


class AgentDream(WireResult):
    """One agent's dream inside a batch. ``more-left``: every step ran but the budget
    deferred entries or consolidation left clusters, so the agent stays due."""

    memory_ref: str
    status: AgentStatus
    sources: int = 0
    tokens_used: int = 0
    merged: int = 0
    superseded: int = 0
    commitments_created: int = 0
    workflows_started: int = 0
    proposals_created: int = 0
    expired: int = 0
    # "<step>:<error code>" for each step that failed (no message: it could quote text).
    failed_steps: tuple[str, ...] = ()
    # The earliest commitment arming left for the fleet's horizon (due beyond it).
    next_deferred_at: Instant | None = None


class DreamAgentsResult(WireResult):
    agents: tuple[AgentDream, ...]


_EXPORTED: dict[str, type[WireModel]] = {
    "workflow-fleet-dream-input": FleetDreamInput,
    "workflow-fleet-dream-result": FleetDreamResult,
}
for _name, _model in _EXPORTED.items():
    register(_name, _model)
