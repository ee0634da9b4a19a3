"""The discovery document and the reconciled memory model (RFC 0080 §A), computed from
the live state (runtime/probe.py) and the host's real limits."""

from __future__ import annotations

from api.wire_version import PREFERRED_VERSION, PROTOCOL_VERSIONS
from runtime.probe import LiveState
from schemas.capabilities import (
    ARCHIVE_RETENTION_ISO,
    MAX_TOKEN_BUDGET,
    TOKENIZER_NAME,
)
from schemas.discovery import (
    AgentCapabilities,
    AttributionCapability,
    CommitmentsCapability,
    CompactionCapability,
    ComponentStatus,
    ConsolidationCapability,
    DiscoveryDocument,
    DistillationCapability,
    HostInfo,
    HostStatus,
    InjectionBudgetCapability,
    MemoryCapabilities,
    MemoryDimension,
    ProposalsCapability,
    RetentionCapability,
    SearchCapability,
)
from schemas.fixture_runs import FIXTURES
from schemas.proposals import INSTALLABLE_KINDS, ActivationMode

HOST_NAME = "agent-memory-temporal"
HOST_VERSION = "0.1.0"
ENDPOINTS = {
    "agents": "/v1/agents",
    "distill": "/v1/host/sample/memory/distill",
    "consolidate": "/v1/host/sample/memory/consolidate",
    "commitmentFire": "/v1/host/sample/commitment/fire",
    "runs": "/v1/runs",
    "memoryList": "/v1/host/memory",
    "openintentMemory": "/api/v1/memory",
    "openapi": "/openapi.json",
    "docs": "/docs",
}


def satisfied_dimensions(state: LiveState) -> dict[MemoryDimension, bool]:
    """Which of the eight dimensions this host honours right now. Everything rests on
    the store; compaction (distillation runs as workflows) also needs a polling worker;
    replay-snapshot is the store's log-recorded read snapshot."""
    store = state.database
    return {
        MemoryDimension.READ: store,
        MemoryDimension.WRITE: store,
        MemoryDimension.SEARCH: store,
        MemoryDimension.LONG_TERM_DURABILITY: store,
        MemoryDimension.COMPACTION: store and state.worker,
        MemoryDimension.ATTRIBUTION: store,
        MemoryDimension.REPLAY_SNAPSHOT: store,
        MemoryDimension.RETENTION: store,
    }


def discovery_document(
    state: LiveState,
    *,
    task_queue: str,
    max_entry_bytes: int,
    semantic_search: bool,
    proposal_activation: ActivationMode = "direct-rbac",
) -> DiscoveryDocument:
    """``semantic_search``: the store has an embedding model, so hybrid search and the
    RFC 0113 relevance rank work (memory/search/ranking.py)."""
    store = state.database
    workflows = store and state.worker
    dimensions = satisfied_dimensions(state)
    profiles = ("openwop-memory",) if store else ()
    return DiscoveryDocument(
        protocol_versions=PROTOCOL_VERSIONS,
        preferred_version=PREFERRED_VERSION,
        host=HostInfo(name=HOST_NAME, version=HOST_VERSION, task_queue=task_queue),
        fixtures=FIXTURES if workflows else (),
        memory=MemoryCapabilities(
            supported=store,
            writable=store,
            max_entry_size_bytes=max_entry_bytes,
            ttl_supported=store,
            search=SearchCapability(
                supported=store,
                modes=(("semantic", "filter") if semantic_search else ("filter",)) if store else (),
            ),
            retention=RetentionCapability(ttl=store, forget=store),
            attribution=AttributionCapability(supported=store, emits_write_events=store),
            # Host-managed dreams, and client-requested through the RFC 0012 seam.
            compaction=CompactionCapability(supported=workflows, trigger="both"),
            distillation=DistillationCapability(
                supported=workflows,
                max_token_budget=MAX_TOKEN_BUDGET,
                # Dreams run on Temporal Schedules: scheduling needs Temporal itself.
                scheduled=workflows and state.temporal,
                index_emitted=True,
                tokenizer_name=TOKENIZER_NAME,
                archive_retention=ARCHIVE_RETENTION_ISO,
            ),
            # Counted with the distiller's tokenizer (memory/tokens.py, TOKENIZER_NAME).
            injection_budget=InjectionBudgetCapability(
                supported=store, token_counter="cl100k_base" if store else None
            ),
        ),
        agents=AgentCapabilities(
            supported=store,
            memory_backends=("long-term",) if store else (),
            memory_consolidation=ConsolidationCapability(
                supported=workflows, schedule="scheduled" if workflows else None
            ),
            commitments=CommitmentsCapability(
                supported=workflows, fire_conditions=("time", "predicate") if workflows else ()
            ),
            # Synthesis runs in dreams and apply on the worker: absent without one.
            proposals=ProposalsCapability(
                artifact_kinds=INSTALLABLE_KINDS,
                duplication_detection=True,
                activation=proposal_activation,
            )
            if workflows
            else None,
        ),
        memory_dimensions=dimensions,
        profiles=profiles,
        endpoints=ENDPOINTS,
        x_host_status=HostStatus(
            database=ComponentStatus(available=state.database, detail=state.database_detail),
            temporal=ComponentStatus(available=state.temporal, detail=state.temporal_detail),
            worker=ComponentStatus(available=state.worker, detail=state.worker_detail),
            checked_at=state.checked_at.isoformat(),
        ),
    )
