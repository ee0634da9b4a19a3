"""The openwop v2 discovery document (``/.well-known/openwop`` with ``OpenWOP-Version: 2``;
schemas/v2/capabilities.schema.json, RFC 0169).

v2 closes the root and every family: a family is claimed by the presence of its record
(``{status, since, until?, witness, ...facets}``), never by a ``supported`` flag, and the
memory facets split between ``memory`` and ``agents`` (consolidation and commitments sit
under ``agents``). What each record says is computed from the same live model as the v1
document (api/discovery_v2.py), so the two majors never disagree.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from schemas.base import WireModel
from schemas.discovery import ProposalsCapability
from schemas.registry import register

VERSION = r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$"
UNTIL = r"^((0|[1-9][0-9]*)\.(0|[1-9][0-9]*)|\d{4}-\d{2}-\d{2})$"
Witness = Literal[
    "witnessable-unaided",
    "witnessable-gated",
    "seam-gated",
    "claims-check",
    "negative-existence",
]


class CapabilityRecord(WireModel):
    """RFC 0169 §A.1: ``stable`` forbids ``until``; ``experimental`` and ``deprecated``
    need it."""

    status: Literal["stable", "experimental", "deprecated"]
    since: str = Field(pattern=VERSION)
    until: str | None = Field(default=None, pattern=UNTIL)
    witness: Witness

    @model_validator(mode="after")
    def _until_matches_status(self) -> CapabilityRecord:
        if (self.status == "stable") == (self.until is not None):
            raise ValueError("until: required unless status is stable, where it is forbidden")
        return self


class CompactionFacet(WireModel):
    trigger: Literal["host-managed", "client-requested", "both"]


class DistillationFacet(WireModel):
    max_token_budget: int = Field(ge=1)
    scheduled: bool
    index_emitted: bool
    tokenizer_name: str
    archive_retention: str


class AttributionFacet(WireModel):
    emits_write_events: bool


class SearchFacet(WireModel):
    modes: tuple[Literal["semantic", "filter"], ...]


class RetentionFacet(WireModel):
    ttl: bool
    forget: bool


class InjectionBudgetFacet(WireModel):
    token_counter: Literal["o200k_base", "cl100k_base", "chars", "host-defined"]


class MemoryFamily(CapabilityRecord):
    max_entry_size_bytes: int | None = Field(default=None, ge=1)
    ttl_supported: bool | None = None
    writable: bool | None = None
    search: SearchFacet | None = None
    retention: RetentionFacet | None = None
    attribution: AttributionFacet | None = None
    compaction: CompactionFacet | None = None
    distillation: DistillationFacet | None = None
    injection_budget: InjectionBudgetFacet | None = None


class ConsolidationFacet(WireModel):
    schedule: Literal["host-managed", "scheduled", "on-demand"] | None = None


class CommitmentsFacet(WireModel):
    fire_conditions: tuple[Literal["time", "predicate"], ...]


class AgentsFamily(CapabilityRecord):
    memory_backends: tuple[Literal["long-term"], ...] | None = None
    memory_consolidation: ConsolidationFacet | None = None
    commitments: CommitmentsFacet | None = None
    # RFC 0096/0249: the same block as v1's (its presence gates /proposals).
    proposals: ProposalsCapability | None = None


class RunListFamily(CapabilityRecord):
    max_page_size: int = Field(ge=1, le=1000)
    filters: tuple[Literal["workflowId", "status"], ...] = ()


class Implementation(WireModel):
    name: str
    version: str


class DiscoveryDocumentV2(WireModel):
    """The closed v2 root: only the keys below; host-specific blocks go under
    ``extensions`` as ``<org>.<name>``."""

    protocol_versions: tuple[str, ...] = Field(min_length=1)
    preferred_version: str = Field(pattern=VERSION)
    implementation: Implementation
    event_log_schema_version: int = Field(ge=2)
    # The fixtures POST /runs can run; the suite reads them from the header-less
    # document too, so both majors list the same ones.
    fixtures: tuple[str, ...] | None = None
    memory: MemoryFamily | None = None
    agents: AgentsFamily | None = None
    run_list: RunListFamily | None = None
    extensions: dict[str, dict[str, object]] | None = None


register("discovery-document-v2", DiscoveryDocumentV2)
