"""Workflow and activity inputs/outputs. Content-free by construction: ids, counts,
checksums and budgets only, because every one of these lands in Temporal history.

Inputs are strict (unknown keys and wrong types are errors naming the field: the data
converter fails the workflow with them). Results tolerate unknown fields, so a result
written by a newer worker still decodes in an older one during a rolling deploy.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictBool, StrictInt

from schemas.base import Instant, WireModel, WireResult
from schemas.commitments import CommitmentInferenceResult
from schemas.consolidation import ConsolidationResult
from schemas.memory_entry import EntryId
from schemas.memory_ref import MemoryRefField
from schemas.proposals import SynthesisResult
from schemas.registry import register

TokenBudget = Annotated[StrictInt, Field(ge=1)]
MAX_EXPLICIT_SOURCES = 1000


class DistillationInput(WireModel):
    memory_ref: MemoryRefField
    # Clamped to maxTokenBudget by the workflow; absent means maxTokenBudget.
    token_budget: TokenBudget | None = None
    # Recursive distillation: these entries (any tier, distilled ones included) only.
    sources: tuple[EntryId, ...] | None = Field(
        default=None, min_length=1, max_length=MAX_EXPLICIT_SOURCES
    )
    index_emitted: StrictBool = True
    # When nothing at all fits the budget: "fail" with token_budget_exceeded (RFC 0062,
    # what an on-demand request gets), or "defer": report over-budget and complete (what
    # a scheduled dream asks for, so one large entry never fails a night).
    when_nothing_fits: Literal["fail", "defer"] = "fail"
    # Who asked, as memory.compacted reports it: the host's own schedule or dream, or a
    # client (the RFC 0012 compaction seam).
    trigger: Literal["host-managed", "client-requested"] = "host-managed"


class DreamInput(WireModel):
    """What a schedule passes: {"memoryRef": "mem://acme/agent-1", "tokenBudget": 8000}."""

    memory_ref: MemoryRefField
    token_budget: TokenBudget | None = None


class AgentRunInput(WireModel):
    memory_ref: MemoryRefField


class IndexRequest(WireModel):
    memory_ref: MemoryRefField


class SnapshotRequest(WireModel):
    memory_ref: MemoryRefField
    snapshot_id: str
    source_ids: tuple[str, ...] | None = None
    purpose: Literal["distillation", "session"] = "distillation"


class DistillMemoryRequest(WireModel):
    """One budget-bounded distillation: select, distill and commit in one activity."""

    memory_ref: MemoryRefField
    token_budget: int = Field(ge=1)
    run_key: str
    sources: tuple[str, ...] | None = None
    index_emitted: bool = True
    when_nothing_fits: Literal["fail", "defer"] = "fail"
    trigger: Literal["host-managed", "client-requested"] = "host-managed"


class DistillRequest(WireModel):
    """The distill activity's input before budget-bounded selection; workflows recorded
    before that change (workflow.patched) still schedule it."""

    memory_ref: MemoryRefField
    snapshot_id: str
    token_budget: int = Field(ge=1)
    run_key: str
    index_emitted: bool = True


class IndexUpdate(WireResult):
    path: str
    version: int = Field(ge=1)
    sha256: str
    size_tokens: int = Field(ge=0)


class DistillationResult(WireResult):
    """``snapshot*`` describe the input the run read: before budget-bounded selection a
    frozen copy of the whole backlog, now the ranked candidates it read (ids, versions
    and content hashes; no copy is kept). ``already-consumed``: another distillation
    claimed these sources first, so this one committed nothing. ``over-budget``: nothing
    fit the budget and the request asked to defer rather than fail (the entries found
    too large are parked until a larger budget or an edit)."""

    memory_ref: str
    status: Literal["distilled", "nothing-to-distill", "already-consumed", "over-budget"]
    snapshot_id: str | None = None
    snapshot_checksum: str
    snapshot_count: int = Field(ge=0)
    token_budget: int = Field(ge=1)
    tokens_used: int = Field(default=0, ge=0)
    source_count: int = Field(default=0, ge=0)
    # Read but left for a later dream: did not fit what was left of the budget.
    deferred_count: int = Field(default=0, ge=0)
    # Read and left for a later dream: alone larger than the whole budget.
    oversized_count: int = Field(default=0, ge=0)
    output_id: str | None = None
    archive_checksum: str | None = None
    byte_size: int = Field(default=0, ge=0)
    index: IndexUpdate | None = None
    compacted_event_seq: int | None = None


class GarbageReport(WireResult):
    expired_entries: int = 0
    expired_archives: int = 0
    old_snapshots: int = 0


class DreamResult(WireResult):
    memory_ref: str
    tenant: str
    status: Literal["completed", "skipped-overlap"]
    distillation: DistillationResult | None = None
    consolidation: ConsolidationResult | None = None
    commitments: CommitmentInferenceResult | None = None
    proposals: SynthesisResult | None = None
    garbage: GarbageReport | None = None


class IndexDigest(WireResult):
    """What a session learned from MEMORY-INDEX.json, without its text."""

    present: bool
    version: int = 0
    sha256: str | None = None
    size_tokens: int = 0
    archive_count: int = 0
    entry_count: int = 0


class AgentRunDigest(WireResult):
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
