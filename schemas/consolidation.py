"""Consolidation's wire shapes: the workflow input and result, the activity request, and
what the audit, conflict and undo surfaces return. Content-free: ids and counts only,
because all of these land in Temporal history or on a terminal."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from schemas.base import WireModel, WireResult
from schemas.memory_ref import MemoryRefField
from schemas.registry import register

ConsolidationTrigger = Literal["host-managed", "scheduled", "on-demand"]
# agent.memory.consolidated and the workflow result list merged ids up to this many
# (RFC 0068 lets hosts omit mergedIds for large passes; consumers must tolerate it).
MAX_EVENT_MERGED_IDS = 1000


class ConsolidationInput(WireModel):
    """{"memoryRef": "mem://acme/agent-1"} from the Temporal CLI; a dream passes
    trigger "scheduled"."""

    memory_ref: MemoryRefField
    trigger: ConsolidationTrigger = "on-demand"
    # Also merge texts that say the same in other words (memory/consolidation/
    # paraphrase.py). Off by default: docs/consolidation.md has its public-data figures.
    paraphrases: bool = False


class ConsolidateMemoryRequest(WireModel):
    memory_ref: MemoryRefField
    # Identifies the pass: a retried activity with the same key returns the recorded
    # result instead of planning again.
    run_key: str = Field(min_length=1, max_length=512)
    trigger: ConsolidationTrigger = "on-demand"
    # The session snapshot of the run that started this pass as its child, if any: a
    # run may not consolidate the memoryRef it is reading (RFC 0068 replay ruling).
    requested_by_session: str | None = Field(default=None, max_length=600)
    paraphrases: bool = False
    # Link a later entry that changes an earlier one's value (memory/sameness/updates.py):
    # the older is marked superseded (both stay live) or both are flagged as a conflict.
    updates: bool = True


class ConsolidationResult(WireResult):
    memory_ref: str
    pass_id: str
    trigger: ConsolidationTrigger
    # Live long-term entries read, and left live after the pass.
    input_count: int = Field(ge=0)
    output_count: int = Field(ge=0)
    merged_count: int = Field(default=0, ge=0)
    superseded_count: int = Field(default=0, ge=0)
    # Entries this pass found updated by a later one (kept live, marked; first seen now).
    updated_count: int = Field(default=0, ge=0)
    # The optional update judge: pairs it was asked about, and those it called updates.
    judge_calls: int = Field(default=0, ge=0)
    judged_updates: int = Field(default=0, ge=0)
    survivors_changed: int = Field(default=0, ge=0)
    # Look-alike pairs recorded as conflicts by this pass (first seen now).
    conflict_count: int = Field(default=0, ge=0)
    # Clusters left alone because one of their entries changed while the pass ran.
    skipped_clusters: int = Field(default=0, ge=0)
    rounds: int = Field(default=0, ge=0)
    pairs_checked: int = Field(default=0, ge=0)
    merged_ids: tuple[str, ...] | None = None
    consolidated_event_seq: int | None = None


class SupersededEntry(WireModel):
    """One row a pass marked: merged and superseded rows are invisible to list/get, kept
    for audit and undo; an updated one stays live, marked ``supersededBy``."""

    id: str
    superseded_by: str
    # "updated": a later entry states a new value; the row stays live, marked.
    reason: Literal["merged", "superseded", "updated"]
    pass_id: str | None
    superseded_at: datetime
    namespace: str | None = None
    key: str | None = None


class ConflictRecord(WireModel):
    first_id: str
    second_id: str
    kinds: tuple[str, ...]
    pass_id: str
    detected_at: datetime


class UndoReport(WireResult):
    memory_ref: str
    pass_id: str
    restored: int = Field(ge=0)
    survivors_changed: int = Field(ge=0)
    # Entries the pass had marked updated by a later one, current again.
    unmarked: int = Field(default=0, ge=0)


register("workflow-consolidation-input", ConsolidationInput)
register("workflow-consolidation-result", ConsolidationResult)
