"""What inference understood of an entry, kept beside the commitment so an operator or an
agent can audit it before it fires, and the content-free lifecycle events that announce
it (commitment.inferred) and take it back (commitment.cancelled).

A reading is offsets into the entry's stored (SR-1 redacted) text, a short checksum of
the span and the convention codes; the text stays in the entry, and the read side cuts
the span out of it on demand (``read_span``), refusing when the entry changed since.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from memory.events.event_log import PendingEvent
from schemas.commitments import CommitmentReading
from schemas.events import CommitmentCancelled, CommitmentInferred, EventType

SPAN_DIGEST_HEX = 16


def span_digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:SPAN_DIGEST_HEX]


@dataclass(frozen=True, slots=True)
class ReadingColumns:
    """The commitment row's reading columns for one inference."""

    span_start: int
    span_end: int
    span_sha256: str
    conventions: tuple[str, ...]

    @classmethod
    def of(
        cls, content: str, span: tuple[int, int], conventions: tuple[str, ...]
    ) -> ReadingColumns:
        start, end = span
        return cls(start, end, span_digest(content[start:end]), conventions)

    def as_row(self) -> dict[str, Any]:
        return {
            "span_start": self.span_start,
            "span_end": self.span_end,
            "span_sha256": self.span_sha256,
            "conventions": list(self.conventions),
        }


def reading_of(row: Any) -> CommitmentReading | None:
    """The reading a commitment row holds (None before migration 0014)."""
    if row.span_start is None or row.span_sha256 is None:
        return None
    return CommitmentReading(
        span_start=row.span_start,
        span_end=row.span_end,
        span_sha256=row.span_sha256,
        conventions=tuple(row.conventions or ()),
    )


def read_span(content: str | None, reading: CommitmentReading | None) -> str | None:
    """The span as the entry holds it now, or None when the entry is gone or its text
    changed since inference (the checksum no longer matches)."""
    if content is None or reading is None:
        return None
    span = content[reading.span_start : reading.span_end]
    return span if span_digest(span) == reading.span_sha256 else None


def understood(spec: dict[str, Any] | None, condition: str, time_zone: str) -> str | None:
    """A content-free line of what a spec says, for lists and the Temporal UI:
    ``once 2026-11-28T08:00:00Z``, ``rrule FREQ=WEEKLY;BYDAY=TH @Europe/Berlin``,
    ``predicate memory.tag_exists``. A predicate's arguments (a tag, a key) are the
    entry's words, so they are left out."""
    if not spec:
        return None
    if condition == "predicate":
        return f"predicate {spec.get('predicate')}"
    if "rrule" in spec:
        return f"rrule {spec['rrule']} @{time_zone}"
    if "at" in spec:
        at = datetime.fromisoformat(str(spec["at"]).replace("Z", "+00:00"))
        return "once " + at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return None


def inferred_event(record: dict[str, Any]) -> PendingEvent:
    """commitment.inferred for a commitment row just recorded (its insert values)."""
    spec = record["spec"] or {}
    predicate = spec.get("predicate") if record["condition"] == "predicate" else None
    event = CommitmentInferred(
        commitment_id=record["commitment_id"],
        memory_ref=record["memory_ref"],
        condition=record["condition"],
        memory_id=record["memory_id"],
        state=record["state"],
        time_zone=record["time_zone"],
        due_at=record["next_at"],
        rrule=spec.get("rrule"),
        predicate=predicate,
        span_start=record["span_start"],
        span_end=record["span_end"],
        conventions=tuple(record["conventions"]),
    )
    dedupe = f"commitment.inferred:{record['commitment_id']}"
    return PendingEvent(EventType.COMMITMENT_INFERRED, event, dedupe)


def cancelled_event(row: Any, previous_state: Literal["armed", "proposed"]) -> PendingEvent:
    """commitment.cancelled for a commitment row an explicit cancel just ended."""
    event = CommitmentCancelled(
        commitment_id=row.commitment_id,
        memory_ref=row.memory_ref,
        condition=row.condition,
        memory_id=row.memory_id,
        previous_state=previous_state,
    )
    dedupe = f"commitment.cancelled:{row.commitment_id}"
    return PendingEvent(EventType.COMMITMENT_CANCELLED, event, dedupe)
