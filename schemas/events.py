"""Event payloads: openwop run events and OpenIntent memory lifecycle events.

Every payload is content-free: ids, counts, tags, checksums. Entry text never appears
here, so the event log, Temporal history and the UI can never leak memory content.
Field sets follow ../shared/spec/openwop-event-shapes.md.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import Field

from schemas.base import Instant, WireModel
from schemas.memory_entry import Tier


class EventType(StrEnum):
    MEMORY_WRITTEN = "memory.written"
    MEMORY_CREATED = "memory.created"
    MEMORY_UPDATED = "memory.updated"
    MEMORY_DELETED = "memory.deleted"
    MEMORY_ARCHIVED = "memory.archived"
    MEMORY_EVICTED = "memory.evicted"
    MEMORY_EXPIRED = "memory.expired"
    MEMORY_COMPACTED = "memory.compacted"
    WORKSPACE_UPDATED = "workspace.updated"
    MEMORY_CONSOLIDATED = "agent.memory.consolidated"
    COMMITMENT_FIRED = "commitment.fired"
    # The lifecycle pair RFC 0068 deferred (its Unresolved question 3): additive, and
    # content-free like commitment.fired (docs/commitments.md, Auditing an inference).
    COMMITMENT_INFERRED = "commitment.inferred"
    COMMITMENT_CANCELLED = "commitment.cancelled"
    # Not an openwop event (consumers ignore unknown types): two look-alike entries that
    # differ in a guarded fact, found by consolidation and left unmerged.
    MEMORY_CONFLICT = "memory.conflict.detected"
    # RFC 0096 (reviewable learning), content-free: schemas/proposals.py.
    PROPOSAL_CREATED = "proposal.created"
    PROPOSAL_ACTIVATED = "proposal.activated"


# OpenIntent RFC-0015 §5 lifecycle events (payload MemoryLifecycle): the events an
# entry's OpenIntent intent sees (memory/keyed_ids/intent_links.py).
LIFECYCLE_TYPES: tuple[EventType, ...] = (
    EventType.MEMORY_CREATED,
    EventType.MEMORY_UPDATED,
    EventType.MEMORY_DELETED,
    EventType.MEMORY_ARCHIVED,
    EventType.MEMORY_EVICTED,
    EventType.MEMORY_EXPIRED,
)


class MemoryWritten(WireModel):
    """openwop memory.written (RFC 0057): attribution of one write, identifiers only."""

    memory_ref: str = Field(min_length=1)
    memory_id: str = Field(min_length=1)
    node_id: str | None = None
    agent_id: str | None = None
    tags: tuple[str, ...] = ()


class MemoryLifecycle(WireModel):
    """OpenIntent RFC-0015 lifecycle event; the value is intentionally excluded."""

    memory_ref: str = Field(min_length=1)
    memory_id: str = Field(min_length=1)
    tier: Tier
    namespace: str | None = None
    key: str | None = None
    version: int = Field(ge=1)
    previous_version: int | None = None
    tags: tuple[str, ...] = ()
    reason: str | None = None


class Distillation(WireModel):
    """RFC 0062 sub-object of memory.compacted."""

    token_budget: int = Field(ge=1)
    tokens_used: int = Field(ge=0)
    index_updated: bool | None = None


class MemoryCompacted(WireModel):
    memory_ref: str = Field(min_length=1)
    output_id: str = Field(min_length=1)
    source_ids: tuple[str, ...] | None = None
    source_count: int = Field(ge=1)
    trigger: Literal["host-managed", "client-requested", "both"]
    byte_size: int = Field(ge=0)
    distillation: Distillation | None = None


class WorkspaceUpdated(WireModel):
    path: str = Field(min_length=1)
    version: int = Field(ge=1)


class AgentMemoryConsolidated(WireModel):
    memory_ref: str = Field(min_length=1)
    input_count: int = Field(ge=0)
    output_count: int = Field(ge=0)
    # Omitted when the pass removed more than MAX_EVENT_MERGED_IDS entries.
    merged_ids: tuple[str, ...] | None = None
    trigger: Literal["host-managed", "scheduled", "on-demand"] | None = None
    # Host extensions (additionalProperties is allowed): the pass and its break-down.
    pass_id: str | None = None
    merged_count: int | None = Field(default=None, ge=0)
    superseded_count: int | None = Field(default=None, ge=0)
    updated_count: int | None = Field(default=None, ge=0)
    conflict_count: int | None = Field(default=None, ge=0)
    # Present when the optional update judge is on: the pairs it was asked about.
    judge_calls: int | None = Field(default=None, ge=0)


class MemoryConflict(WireModel):
    """Content-free: which two entries, and which kinds of fact differ."""

    memory_ref: str = Field(min_length=1)
    memory_ids: tuple[str, str]
    kinds: tuple[str, ...]
    pass_id: str


class CommitmentFired(WireModel):
    commitment_id: str = Field(min_length=1)
    memory_ref: str = Field(min_length=1)
    condition: Literal["time", "predicate"]
    memory_id: str | None = None
    enqueued_run_id: str | None = None


class CommitmentInferred(WireModel):
    """A commitment was recorded from an entry: what inference understood, content-free.

    ``spanStart``/``spanEnd`` are character offsets into the entry's stored (SR-1
    redacted) text of the phrase that was read; the text itself is served only by the
    read side (`memoryctl commitments show`, ``GET /v1/commitments/{id}``)."""

    commitment_id: str = Field(min_length=1)
    memory_ref: str = Field(min_length=1)
    condition: Literal["time", "predicate"]
    memory_id: str = Field(min_length=1)
    state: Literal["armed", "proposed", "expired"]
    time_zone: str = Field(min_length=1)
    due_at: Instant | None = None  # a time commitment's first instant
    rrule: str | None = Field(default=None, max_length=512)  # a recurrence's rule body
    predicate: str | None = Field(default=None, max_length=128)  # the name, never arguments
    span_start: int = Field(ge=0)
    span_end: int = Field(ge=0)
    conventions: tuple[str, ...] = ()


class CommitmentCancelled(WireModel):
    """A commitment was cancelled before it was done: by `memoryctl commitments cancel`,
    ``POST /v1/commitments/{id}/cancel`` or a cancel of its workflow. A commitment that
    ends because its source entry went away records ``endedReason`` instead (list/show)."""

    commitment_id: str = Field(min_length=1)
    memory_ref: str = Field(min_length=1)
    condition: Literal["time", "predicate"]
    memory_id: str = Field(min_length=1)
    previous_state: Literal["armed", "proposed"]


class EventRecord(WireModel):
    """One row of the append-only event log: a monotonic seq per memoryRef."""

    memory_ref: str
    seq: int = Field(ge=1)
    type: str
    payload: dict[str, object]
    occurred_at: Instant
