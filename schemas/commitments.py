"""Commitments' wire shapes: workflow inputs and results, activity requests and what
memoryctl shows. Everything that reaches Temporal history is content-free (ids, counts,
instants); the parsed condition (commitment_spec.py) stays in the store.

Ids are derived, never random, so every start and every firing is idempotent:
- commitmentId: hash of (memoryRef, memoryId, normalised condition);
- the commitment's workflow: ``commitment/<commitmentId>``;
- an occurrence: the due instant (time) or ``transition:<n>`` (predicate);
- the run a firing enqueues: ``commitment-run/<commitmentId>/<occurrence>``.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Annotated, Literal

from pydantic import Field

from schemas.base import Instant, WireModel, WireResult, format_instant
from schemas.commitment_spec import TimeZoneName
from schemas.memory_ref import MemoryRefField
from schemas.registry import register

# proposed: inferred for a tenant that requires confirmation; it waits, unarmed, until
# confirmed (-> armed) or cancelled (docs/commitments.md, Auditing an inference).
CommitmentState = Literal["proposed", "armed", "fired", "cancelled", "expired", "missed"]
Condition = Literal["time", "predicate"]
# How a tenant's numeric dates read: 04/05/2027 is April 5th (MDY) or 4 May (DMY);
# YMD for 2027/04/05-style writing. docs/time-grammar.md.
DateOrder = Literal["MDY", "DMY", "YMD"]
# What "next Friday" said on a Wednesday means: refused (the two readings differ), the
# coming Friday, or the Friday of the following week. docs/time-grammar.md.
NextWeekday = Literal["refuse-when-ambiguous", "coming", "following-week"]
CommitmentId = Annotated[str, Field(min_length=5, max_length=64, pattern=r"^cmt-[0-9a-f]+$")]

# Temporal workflow type names, for the activity that starts them (activities must not
# import workflows/).
COMMITMENT_WORKFLOW = "CommitmentWorkflow"
PREDICATE_WATCH_WORKFLOW = "PredicateWatchWorkflow"
COMMITMENT_HORIZON_WORKFLOW = "CommitmentHorizonWorkflow"
# The signal arming sends the horizon workflow (signal-with-start) when it defers one.
DEFERRED_SIGNAL = "commitments_deferred"
# The signal the change listener sends it when a deferred commitment ended before it was
# started (forgotten, cancelled, superseded): its next pass runs now and re-reads what is
# still deferred (migration 0027, runtime/change_listener.py).
DEFERRED_ENDED_SIGNAL = "deferred_commitment_ended"

# Arming starts a time commitment's workflow only when its instant is within this of
# now; later ones wait in the store, and the memoryRef's CommitmentHorizonWorkflow arms
# them as they come within it, waking at most every half horizon. Arming 10,000
# commitments is then a few thousand starts, not 10,000, and Temporal holds a day of
# start-delayed runs instead of every promise ever made (docs/commitments.md, Arming).
ARM_HORIZON = timedelta(hours=24)

# A due occurrence fires when the worker gets to it at most this late; later it is
# recorded as missed (no event, no run), so an outage never ends in a flood of stale
# reminders. A late recurring commitment accounts for every instant it slept through the
# same way, each fired or missed by its own lateness (docs/commitments.md, Late firings).
DEFAULT_GRACE_SECONDS = 3600
# How often a predicate watch evaluates its predicate when no memory_changed signal came.
DEFAULT_CADENCE_SECONDS = 60
MAX_INFERENCE_IDS = 1000


def commitment_id(memory_ref: str, memory_id: str, normalized_condition: str) -> str:
    digest = hashlib.sha256(
        "\x1f".join((memory_ref, memory_id, normalized_condition)).encode()
    ).hexdigest()
    return f"cmt-{digest[:32]}"


def commitment_workflow_id(commitment: str) -> str:
    return f"commitment/{commitment}"


def instant_occurrence(due_at: datetime) -> str:
    return format_instant(due_at)


def transition_occurrence(transition: int) -> str:
    return f"transition:{transition}"


def enqueued_run_id(commitment: str, occurrence: str) -> str:
    return f"commitment-run/{commitment}/{occurrence}"


# ------------------------------------------------------------------ inference


class CommitmentInferenceInput(WireModel):
    """{"memoryRef": "mem://acme/agent-1"} from the Temporal CLI; a dream starts it as a
    child. ``memoryIds`` restricts the scan to those entries (on demand, e.g. right
    after a write) and ignores the watermark."""

    memory_ref: MemoryRefField
    memory_ids: tuple[Annotated[str, Field(min_length=1, max_length=128)], ...] | None = Field(
        default=None, max_length=MAX_INFERENCE_IDS
    )
    # Whether a firing also starts an AgentRunWorkflow for the memoryRef.
    enqueue_runs: bool = True
    # Overrides the tenant's configured zone for this inference (IANA name).
    time_zone: TimeZoneName | None = None


class InferCommitmentsRequest(CommitmentInferenceInput):
    pass


class UnparsableEntry(WireResult):
    """An entry that read like a commitment but was not parsed, and why: ``reason`` is a
    stable code of memory.commitment_parsing.inference.REASONS (docs/time-grammar.md
    lists them), a category, never the entry's words."""

    memory_id: str
    reason: str = Field(min_length=1, max_length=64, pattern=r"^[a-z0-9-]+$")


class InferenceResult(WireResult):
    memory_ref: str
    scanned: int = Field(ge=0)
    created: int = Field(ge=0)
    already_known: int = Field(ge=0)
    unparsable_count: int = Field(ge=0)
    # Entries that read like commitments but were not parsed: listed, never guessed
    # (at most MAX_INFERENCE_IDS of them; unparsable_count counts them all).
    unparsable_ids: tuple[str, ...] = ()
    # The same entries, in the same order, each with its reason code. Added beside
    # unparsable_ids (which stays, for readers of the older shape); empty in results of
    # workers from before it.
    unparsable_entries: tuple[UnparsableEntry, ...] = ()
    # Requested memoryIds that are not live entries of this memoryRef.
    not_found_ids: tuple[str, ...] = ()
    time_commitments: int = Field(default=0, ge=0)
    predicate_commitments: int = Field(default=0, ge=0)
    watermark: Instant | None = None


class ArmCommitmentsRequest(WireModel):
    memory_ref: MemoryRefField
    # Set when the caller takes the deferred instants itself: the memoryRef's own horizon
    # workflow (which needs no signal about itself) and a fleet dream (which hands a whole
    # batch's earliest instant to the fleet's horizon at once). The horizons pass their
    # own clock: the horizon counts from workflow time, so a worker whose clock
    # lags the server's (or the time-skipping test server) cannot defer the same
    # commitment again and again.
    from_horizon: bool = False
    as_of: Instant | None = None


class ArmReport(WireResult):
    memory_ref: str
    started: int = Field(ge=0)
    already_running: int = Field(ge=0)
    # Armed time commitments left for the horizon workflow (due beyond ARM_HORIZON), and
    # the earliest of their instants.
    deferred: int = Field(default=0, ge=0)
    next_deferred_at: Instant | None = None


class ArmDeferredRequest(WireModel):
    """The fleet's horizon pass: in every memoryRef, start the deferred time commitments
    now within ARM_HORIZON of ``asOf`` (the horizon workflow's clock)."""

    as_of: Instant


class ArmDeferredReport(WireResult):
    memory_refs: int = Field(ge=0)
    started: int = Field(ge=0)
    already_running: int = Field(ge=0)
    # Across every memoryRef: deferred commitments still beyond the horizon, the earliest.
    deferred: int = Field(default=0, ge=0)
    next_deferred_at: Instant | None = None


class CommitmentHorizonInput(WireModel):
    """A horizon workflow: wake half a horizon before ``earliestAt`` (the earliest
    deferred instant known), arm what is now within the horizon, repeat. Of one
    memoryRef, or, without ``memoryRef``, of every memoryRef (the fleet's horizon, which
    fleet dreams hand their deferred commitments to)."""

    memory_ref: MemoryRefField | None = None
    earliest_at: Instant
    # Carried across continue-as-new, for the UI and the result.
    started_so_far: int = Field(default=0, ge=0)


class DeferredNotice(WireModel):
    """Arming deferred a commitment of this memoryRef due at ``at``."""

    at: Instant


class CommitmentHorizonResult(WireResult):
    memory_ref: str | None
    started: int = Field(ge=0)


class CommitmentInferenceResult(WireResult):
    inference: InferenceResult
    armed: ArmReport


# ------------------------------------------------------------------ firing


class CommitmentInput(WireModel):
    """One time commitment's workflow: wait until ``dueAt``, fire, continue as new with
    the next instant (recurring) or finish."""

    commitment_id: CommitmentId
    memory_ref: MemoryRefField
    due_at: Instant
    grace_seconds: int = Field(default=DEFAULT_GRACE_SECONDS, ge=0, le=30 * 86400)


class FireCommitmentRequest(WireModel):
    commitment_id: CommitmentId
    memory_ref: MemoryRefField
    due_at: Instant
    # The workflow's clock when its timer fired: lateness is measured on it, so replays
    # and retries judge the same occurrence the same way.
    fired_at: Instant
    grace_seconds: int = Field(default=DEFAULT_GRACE_SECONDS, ge=0)


FireStatus = Literal["fired", "missed", "already-claimed", "not-armed", "not-found"]


class FireOutcome(WireResult):
    commitment_id: str
    status: FireStatus
    state: CommitmentState | None = None
    occurrence: str | None = None
    event_seq: int | None = None
    enqueued_run_id: str | None = None
    next_at: Instant | None = None
    # A late recurring firing also claims every instant after ``occurrence`` up to the
    # firing (docs/commitments.md, Late firings): how many of those fired and were
    # recorded missed, and the runs the fired ones enqueue, in instant order.
    catch_up_fired: int = Field(default=0, ge=0)
    catch_up_missed: int = Field(default=0, ge=0)
    catch_up_run_ids: tuple[str, ...] = ()


class CancelCommitmentRequest(WireModel):
    commitment_id: CommitmentId
    memory_ref: MemoryRefField


class CancelOutcome(WireResult):
    commitment_id: str
    state: CommitmentState | None = None


class CommitmentRunResult(WireResult):
    commitment_id: str
    last: FireOutcome


# A predicate watch evaluates at its start and on each ``memory_changed`` signal, which
# the worker's change listener sends after committed writes to its memoryRef.
class PredicateWatchInput(WireModel):
    commitment_id: CommitmentId
    memory_ref: MemoryRefField
    # Read only by runs started before change notifications (workflow.patched in
    # workflows/predicate_watch.py): they also evaluated this often. Kept, and carried
    # across continue-as-new, so those runs and their histories still replay.
    cadence_seconds: int = Field(default=DEFAULT_CADENCE_SECONDS, ge=1, le=86400)
    # Carried across continue-as-new, for the UI and the query.
    evaluations: int = Field(default=0, ge=0)
    fires: int = Field(default=0, ge=0)


class EvaluatePredicateRequest(WireModel):
    commitment_id: CommitmentId
    memory_ref: MemoryRefField
    evaluated_at: Instant


class PredicateOutcome(WireResult):
    commitment_id: str
    status: Literal["evaluated", "not-armed", "not-found"]
    holds: bool = False
    fired: bool = False
    transition: int = Field(default=0, ge=0)
    event_seq: int | None = None
    enqueued_run_id: str | None = None
    state: CommitmentState | None = None


class PredicateWatchStatus(WireResult):
    commitment_id: str
    evaluations: int
    fires: int
    holds: bool
    state: CommitmentState | None = None


# ------------------------------------------------------------------ records


class CommitmentReading(WireModel):
    """What inference understood of its entry, content-free: where it read (character
    offsets into the entry's stored, SR-1 redacted text), a checksum of what it read
    there (so the read side can tell when the entry changed since), and the conventions
    the reading applied (docs/time-grammar.md lists the codes). The instant, rule or
    predicate it made is the commitment's spec."""

    span_start: int = Field(ge=0)
    span_end: int = Field(ge=0)
    span_sha256: str = Field(pattern=r"^[0-9a-f]{16}$")
    conventions: tuple[str, ...] = ()


class TenantCommitmentSettings(WireModel):
    """How a tenant's entries read (zone, numeric date order, "next <weekday>") and
    whether what they promise waits for confirmation; the defaults are a tenant's that
    set nothing (migration 0014's column defaults)."""

    tenant: str
    time_zone: str = "UTC"
    require_confirmation: bool = False
    date_order: DateOrder = "MDY"
    next_weekday: NextWeekday = "refuse-when-ambiguous"


class CommitmentRecord(WireModel):
    commitment_id: str
    memory_ref: str
    memory_id: str
    condition: Condition
    state: CommitmentState
    time_zone: str
    next_at: datetime | None = None
    fire_count: int
    missed_count: int
    transitions: int
    enqueue_run: bool
    workflow_id: str | None = None
    ended_reason: str | None = None
    created_at: datetime
    # None for commitments recorded before readings were kept (migration 0014).
    reading: CommitmentReading | None = None
    # Content-free, for lists and the Temporal UI: "once 2026-11-28T08:00:00Z",
    # "rrule FREQ=WEEKLY;BYDAY=TH;... @Europe/Berlin", "predicate memory.tag_exists".
    understood: str | None = None


class OccurrenceRecord(WireModel):
    occurrence: str
    outcome: Literal["fired", "missed"]
    due_at: datetime | None = None
    fired_at: datetime
    claimed_at: datetime
    event_seq: int | None = None
    enqueued_run_id: str | None = None


class CommitmentDetail(WireModel):
    """What `memoryctl commitments show` serves: the record, its ledger, the parsed
    condition and the intention as stored (SR-1 redacted at write). Never on an event."""

    commitment: CommitmentRecord
    occurrences: tuple[OccurrenceRecord, ...]
    spec: dict[str, object] | None = None
    intention: str | None = None
    # The span the reading covers, as the entry holds it now (SR-1 redacted at write);
    # None when the entry is gone or its text changed since (read_changed is then true).
    read_text: str | None = None
    read_changed: bool = False


register("workflow-commitment-inference-input", CommitmentInferenceInput)
register("workflow-commitment-inference-result", CommitmentInferenceResult)
register("workflow-commitment-input", CommitmentInput)
register("workflow-predicate-watch-input", PredicateWatchInput)
register("workflow-commitment-horizon-input", CommitmentHorizonInput)
