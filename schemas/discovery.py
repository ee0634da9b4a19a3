"""The openwop discovery document and agent inventory (RFC 0080, RFC 0062 §A, RFC 0068 §A).

Wire shapes only: what each block holds. What the blocks *say* is computed from the live
state of the running host (api/discovery.py), never written here as a literal.

The eight memory dimensions use the names of spec/openwop-agent-memory.md §A (the spec
file wins over RFC 0080's example, which wrote "long-term": the dimension is
``long-term-durability`` so it never collides with the memoryBackends value
``long-term``).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import Field, StrictBool

from schemas.base import WireModel
from schemas.registry import register


class MemoryDimension(StrEnum):
    READ = "read"
    WRITE = "write"
    SEARCH = "search"
    LONG_TERM_DURABILITY = "long-term-durability"
    COMPACTION = "compaction"
    ATTRIBUTION = "attribution"
    REPLAY_SNAPSHOT = "replay-snapshot"
    RETENTION = "retention"


class SearchCapability(WireModel):
    supported: bool
    modes: tuple[Literal["semantic", "filter"], ...] = ()


class RetentionCapability(WireModel):
    ttl: bool
    forget: bool


class AttributionCapability(WireModel):
    supported: bool
    emits_write_events: bool


class CompactionCapability(WireModel):
    supported: bool
    trigger: Literal["host-managed", "client-requested", "both"] = "host-managed"


class DistillationCapability(WireModel):
    supported: bool
    max_token_budget: int = Field(ge=1)
    scheduled: bool
    index_emitted: bool
    tokenizer_name: str
    archive_retention: str


class InjectionBudgetCapability(WireModel):
    """RFC 0113: budgeted list reads, counted in ``tokenCounter``."""

    supported: bool
    token_counter: Literal["o200k_base", "cl100k_base", "chars", "host-defined"] | None = None


class MemoryCapabilities(WireModel):
    supported: bool
    writable: bool
    max_entry_size_bytes: int = Field(ge=1)
    ttl_supported: bool
    search: SearchCapability
    retention: RetentionCapability
    attribution: AttributionCapability
    compaction: CompactionCapability
    distillation: DistillationCapability
    injection_budget: InjectionBudgetCapability


class ConsolidationCapability(WireModel):
    # RFC 0068 §A: additionalProperties false (WireModel forbids extras), supported required.
    supported: bool
    schedule: Literal["host-managed", "scheduled", "on-demand"] | None = None


class CommitmentsCapability(WireModel):
    supported: bool
    fire_conditions: tuple[Literal["time", "predicate"], ...] = ()


class ProposalsCapability(WireModel):
    """RFC 0096: advertised only while proposals work (its presence gates the seam)."""

    artifact_kinds: tuple[
        Literal["agent-pack", "workflow-chain-pack", "prompt-template", "automation"], ...
    ]
    duplication_detection: bool = False
    activation: Literal["approval-gate", "direct-rbac"]


class AgentCapabilities(WireModel):
    supported: bool
    memory_backends: tuple[str, ...]
    memory_consolidation: ConsolidationCapability
    commitments: CommitmentsCapability
    proposals: ProposalsCapability | None = None


class ComponentStatus(WireModel):
    """Host extension: why a capability is off right now (content-free)."""

    available: bool
    detail: str


class HostStatus(WireModel):
    database: ComponentStatus
    temporal: ComponentStatus
    worker: ComponentStatus
    checked_at: str


class HostInfo(WireModel):
    name: str
    version: str
    task_queue: str


class DiscoveryDocument(WireModel):
    """GET /.well-known/openwop. ``memory`` and ``agents`` sit at the document root, as
    the hosts that graduated RFC 0068 and RFC 0080 serve them."""

    protocol: Literal["openwop"] = "openwop"
    # Both majors this host serves (OpenWOP-Version: 2 gets the v2 representation).
    protocol_versions: tuple[str, ...]
    preferred_version: str
    host: HostInfo
    # The conformance fixtures POST /v1/runs can run (contract §2.1), each for real.
    fixtures: tuple[str, ...] = ()
    memory: MemoryCapabilities
    agents: AgentCapabilities
    memory_dimensions: dict[MemoryDimension, bool]
    profiles: tuple[str, ...]
    endpoints: dict[str, str]
    x_host_status: HostStatus = Field(alias="x-host-agent-memory-status")


class MemoryShape(WireModel):
    """AgentManifest.memoryShape (RFC 0003/0077)."""

    scratchpad: StrictBool = False
    conversation: StrictBool = False
    long_term: StrictBool = False


# What each memoryShape key needs from the reconciled model (RFC 0080 §C and its example:
# a read-only host with no long-term backend degrades longTerm to write + long-term).
SHAPE_NEEDS: dict[str, tuple[MemoryDimension, ...]] = {
    "scratchpad": (MemoryDimension.READ, MemoryDimension.WRITE),
    "conversation": (MemoryDimension.READ, MemoryDimension.WRITE),
    "long_term": (
        MemoryDimension.READ,
        MemoryDimension.WRITE,
        MemoryDimension.LONG_TERM_DURABILITY,
    ),
}


def degraded_dimensions(
    shape: MemoryShape, satisfied: dict[MemoryDimension, bool]
) -> tuple[MemoryDimension, ...]:
    """The §A dimensions ``shape`` requests that the live model does not satisfy, in
    the §A table's order (a pure function: same inputs, same answer)."""
    wanted = {need for key, needs in SHAPE_NEEDS.items() if getattr(shape, key) for need in needs}
    return tuple(d for d in MemoryDimension if d in wanted and not satisfied.get(d, False))


class AgentManifestRequest(WireModel):
    """PUT /v1/agents/{agentId}: register an agent's memoryShape with this host."""

    memory_shape: MemoryShape


class AgentInventoryEntry(WireModel):
    agent_id: str
    memory_ref: str
    memory_shape: MemoryShape | None = None
    memory_degraded: bool | None = None
    degraded_memory_dimensions: tuple[MemoryDimension, ...] | None = None


class AgentInventory(WireModel):
    agents: tuple[AgentInventoryEntry, ...]


register("discovery-document", DiscoveryDocument)
register("agent-inventory", AgentInventory)
