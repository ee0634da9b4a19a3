"""The v2 discovery document, projected from the v1 one (api/discovery.py) so that both
majors say the same thing about the live host: a v1 ``supported: false`` is an absent
v2 record or facet.

Every family here is ``experimental`` until 3.0, as upstream's corpus marks memory and
agents; ``since`` is 2.0, the first minor of this host's own v2 contract (a ``since``
outside ``protocolVersions`` is a defect).
"""

from __future__ import annotations

from api.wire_version import PREFERRED_VERSION, PROTOCOL_VERSIONS
from schemas.discovery import DiscoveryDocument
from schemas.discovery_v2 import (
    AgentsFamily,
    AttributionFacet,
    CommitmentsFacet,
    CompactionFacet,
    ConsolidationFacet,
    DiscoveryDocumentV2,
    DistillationFacet,
    Implementation,
    InjectionBudgetFacet,
    MemoryFamily,
    RetentionFacet,
    RunListFamily,
    SearchFacet,
)
from schemas.fixture_runs import MAX_RUN_PAGE

EVENT_LOG_SCHEMA_VERSION = 3
_RECORD = {"status": "experimental", "since": "2.0", "until": "3.0"}
STATUS_EXTENSION = "agent-memory-temporal.status"


def _memory(v1: DiscoveryDocument) -> MemoryFamily | None:
    m = v1.memory
    if not m.supported:
        return None
    d = m.distillation
    return MemoryFamily(
        **_RECORD,
        witness="witnessable-gated",
        max_entry_size_bytes=m.max_entry_size_bytes,
        ttl_supported=m.ttl_supported,
        writable=m.writable,
        search=SearchFacet(modes=m.search.modes),
        retention=RetentionFacet(ttl=m.retention.ttl, forget=m.retention.forget),
        attribution=AttributionFacet(emits_write_events=m.attribution.emits_write_events),
        compaction=CompactionFacet(trigger=m.compaction.trigger)
        if m.compaction.supported
        else None,
        distillation=DistillationFacet(
            max_token_budget=d.max_token_budget,
            scheduled=d.scheduled,
            index_emitted=d.index_emitted,
            tokenizer_name=d.tokenizer_name,
            archive_retention=d.archive_retention,
        )
        if d.supported
        else None,
        injection_budget=InjectionBudgetFacet(token_counter=m.injection_budget.token_counter)
        if m.injection_budget.supported and m.injection_budget.token_counter
        else None,
    )


def _agents(v1: DiscoveryDocument) -> AgentsFamily | None:
    a = v1.agents
    if not a.supported:
        return None
    return AgentsFamily(
        **_RECORD,
        witness="witnessable-gated",
        memory_backends=("long-term",) if "long-term" in a.memory_backends else None,
        memory_consolidation=ConsolidationFacet(schedule=a.memory_consolidation.schedule)
        if a.memory_consolidation.supported
        else None,
        commitments=CommitmentsFacet(fire_conditions=a.commitments.fire_conditions)
        if a.commitments.supported
        else None,
        proposals=a.proposals,
    )


def discovery_document_v2(v1: DiscoveryDocument) -> DiscoveryDocumentV2:
    store = v1.memory.supported
    return DiscoveryDocumentV2(
        protocol_versions=PROTOCOL_VERSIONS,
        preferred_version=PREFERRED_VERSION,
        implementation=Implementation(name=v1.host.name, version=v1.host.version),
        event_log_schema_version=EVENT_LOG_SCHEMA_VERSION,
        fixtures=v1.fixtures or None,
        memory=_memory(v1),
        agents=_agents(v1),
        # The runs are the fixture runs, listed from the store.
        run_list=RunListFamily(
            **_RECORD,
            witness="witnessable-gated",
            max_page_size=MAX_RUN_PAGE,
            filters=("workflowId", "status"),
        )
        if store
        else None,
        extensions={STATUS_EXTENSION: v1.x_host_status.to_wire()},
    )
