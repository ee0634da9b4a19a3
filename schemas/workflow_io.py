"""Workflow and activity inputs/outputs. Content-free by construction: ids, counts,
checksums and budgets only, because every one of these lands in Temporal history."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from schemas.base import Instant, WireModel
from schemas.registry import register

RefField = Field(min_length=1, max_length=512)


class DistillationInput(WireModel):
    memory_ref: str = RefField
    token_budget: int | None = Field(default=None, ge=1)
    sources: tuple[str, ...] | None = Field(default=None, max_length=1000)
    index_emitted: bool = True


class DreamInput(WireModel):
    """What a schedule passes: {"memoryRef": "mem://acme/agent-1", "tokenBudget": 8000}."""

    memory_ref: str = RefField
    token_budget: int | None = Field(default=None, ge=1)


class AgentRunInput(WireModel):
    memory_ref: str = RefField


class IndexRequest(WireModel):
    memory_ref: str


class SnapshotRequest(WireModel):
    memory_ref: str
    snapshot_id: str
    source_ids: tuple[str, ...] | None = None
    purpose: Literal["distillation", "session"] = "distillation"


class DistillRequest(WireModel):
    memory_ref: str
    snapshot_id: str
    token_budget: int = Field(ge=1)
    run_key: str
    index_emitted: bool = True


class IndexUpdate(WireModel):
    path: str
    version: int = Field(ge=1)
    sha256: str
    size_tokens: int = Field(ge=0)


class DistillationResult(WireModel):
    memory_ref: str
    status: Literal["distilled", "nothing-to-distill"]
    snapshot_id: str
    snapshot_checksum: str
    snapshot_count: int = Field(ge=0)
    token_budget: int = Field(ge=1)
    tokens_used: int = Field(default=0, ge=0)
    source_count: int = Field(default=0, ge=0)
    deferred_count: int = Field(default=0, ge=0)
    output_id: str | None = None
    archive_checksum: str | None = None
    byte_size: int = Field(default=0, ge=0)
    index: IndexUpdate | None = None
    compacted_event_seq: int | None = None


class GarbageReport(WireModel):
    expired_entries: int = 0
    expired_archives: int = 0
    old_snapshots: int = 0


class DreamResult(WireModel):
    memory_ref: str
    tenant: str
    status: Literal["completed", "skipped-overlap"]
    distillation: DistillationResult | None = None
    garbage: GarbageReport | None = None


class IndexDigest(WireModel):
    """What a session learned from MEMORY-INDEX.json, without its text."""

    present: bool
    version: int = 0
    sha256: str | None = None
    size_tokens: int = 0
    archive_count: int = 0
    entry_count: int = 0


class AgentRunDigest(WireModel):
    memory_ref: str
    index: IndexDigest
    snapshot_id: str
    snapshot_entry_count: int
    snapshot_checksum: str
    started_at: Instant


_EXPORTED: dict[str, type[WireModel]] = {
    "workflow-distillation-input": DistillationInput,
    "workflow-distillation-result": DistillationResult,
    "workflow-dream-input": DreamInput,
    "workflow-dream-result": DreamResult,
    "workflow-agent-run-input": AgentRunInput,
    "workflow-agent-run-digest": AgentRunDigest,
}
for _name, _model in _EXPORTED.items():
    register(_name, _model)
