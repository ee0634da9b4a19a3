"""Firing: the one transaction that claims an occurrence and records it.

For a time commitment, the fire activity locks the commitment, claims
(commitment_id, instant) in the ledger, appends commitment.fired and moves the
commitment to its next instant, all in one transaction: a retry after the commit finds
the claim and returns what was recorded, so a crash anywhere fires at most once. A
predicate evaluation does the same for (commitment_id, transition:<n>) on each
false -> true change.

Catch-up policy: an occurrence claimed more than ``grace_seconds`` after its instant (the
worker or the store was down, or the commitment was inferred after its time) is recorded
as missed,
with no event and no run. A recurring commitment then skips to its first instant after
now, so an outage of weeks costs one decision, never a flood of stale reminders.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from pydantic import TypeAdapter
from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from memory import tables
from memory.commitment_parsing.recurrence_dates import next_occurrence
from memory.commitments.predicates import PredicateRegistry
from memory.event_log import PendingEvent, append_events
from memory.scope import scoped
from schemas.commitment_spec import CommitmentSpec, PredicateSpec, RecurringSpec
from schemas.commitments import (
    EvaluatePredicateRequest,
    FireCommitmentRequest,
    FireOutcome,
    PredicateOutcome,
    enqueued_run_id,
    instant_occurrence,
    transition_occurrence,
)
from schemas.events import CommitmentFired, EventType
from schemas.memory_ref import MemoryRef

C = tables.commitments
O = tables.occurrences  # noqa: E741
SPEC: TypeAdapter[CommitmentSpec] = TypeAdapter(CommitmentSpec)


async def _locked(connection: AsyncConnection, ref: MemoryRef, commitment_id: str) -> Any:
    query = select(C).where(C.c.commitment_id == commitment_id, scoped(C, ref)).with_for_update()
    return (await connection.execute(query)).first()


async def _claimed(
    connection: AsyncConnection, ref: MemoryRef, commitment_id: str, occurrence: str
) -> Any:
    query = select(O).where(
        scoped(O, ref), O.c.commitment_id == commitment_id, O.c.occurrence == occurrence
    )
    return (await connection.execute(query)).first()


async def _record_fire(
    connection: AsyncConnection,
    row: Any,
    ref: MemoryRef,
    occurrence: str,
    now: datetime,
) -> tuple[int, str | None]:
    """Append commitment.fired (content-free) and return its seq and the run id."""
    run_id = enqueued_run_id(row.commitment_id, occurrence) if row.enqueue_run else None
    event = CommitmentFired(
        commitment_id=row.commitment_id,
        memory_ref=str(ref),
        condition=row.condition,
        memory_id=row.memory_id,
        enqueued_run_id=run_id,
    )
    dedupe = f"commitment.fired:{row.commitment_id}:{occurrence}"
    (seq,) = await append_events(
        connection, ref, [PendingEvent(EventType.COMMITMENT_FIRED, event, dedupe)], now
    )
    return seq, run_id


async def _claim(
    connection: AsyncConnection,
    row: Any,
    ref: MemoryRef,
    occurrence: str,
    outcome: str,
    *,
    due_at: datetime | None,
    fired_at: datetime,
    now: datetime,
    event_seq: int | None,
    run_id: str | None,
) -> None:
    await connection.execute(
        insert(O).values(
            commitment_id=row.commitment_id,
            occurrence=occurrence,
            tenant=ref.tenant,
            memory_ref=str(ref),
            outcome=outcome,
            due_at=due_at,
            fired_at=fired_at,
            claimed_at=now,
            event_seq=event_seq,
            enqueued_run_id=run_id,
        )
    )


async def fire_time_occurrence(
    connection: AsyncConnection, request: FireCommitmentRequest, now: datetime
) -> FireOutcome:
    ref = request.memory_ref
    row = await _locked(connection, ref, request.commitment_id)
    if row is None:
        return FireOutcome(commitment_id=request.commitment_id, status="not-found")
    occurrence = instant_occurrence(request.due_at)
    recorded = await _claimed(connection, ref, row.commitment_id, occurrence)
    if recorded is not None:
        # A retry after the commit, or a duplicate workflow: what happened stands.
        return FireOutcome(
            commitment_id=row.commitment_id,
            status="already-claimed",
            state=row.state,
            occurrence=occurrence,
            event_seq=recorded.event_seq,
            enqueued_run_id=recorded.enqueued_run_id,
            next_at=row.next_at if row.state == "armed" else None,
        )
    if row.state != "armed" or row.spec is None:
        return FireOutcome(commitment_id=row.commitment_id, status="not-armed", state=row.state)
    # Late by the later of the timer's firing (workflow time) and this claim (the store's
    # clock): a firing held up by a store outage is as late as its claim.
    late = max(request.fired_at, now) - request.due_at > timedelta(seconds=request.grace_seconds)
    seq, run_id = (
        (None, None) if late else await _record_fire(connection, row, ref, occurrence, now)
    )
    await _claim(
        connection,
        row,
        ref,
        occurrence,
        "missed" if late else "fired",
        due_at=request.due_at,
        fired_at=request.fired_at,
        now=now,
        event_seq=seq,
        run_id=run_id,
    )
    spec = SPEC.validate_python(row.spec)
    next_at: datetime | None = None
    if isinstance(spec, RecurringSpec):
        # Skip every instant already behind us: one decision per wake, never a flood.
        next_at = next_occurrence(spec, max(request.due_at, request.fired_at))
        state = "armed" if next_at is not None else "expired"
    else:
        state = "missed" if late else "fired"
    await connection.execute(
        update(C)
        .where(scoped(C, ref), C.c.commitment_id == row.commitment_id)
        .values(
            state=state,
            next_at=next_at,
            fire_count=C.c.fire_count + (0 if late else 1),
            missed_count=C.c.missed_count + (1 if late else 0),
            ended_reason=(
                None if state == "armed" else ("recurrence-ended" if state == "expired" else None)
            ),
            updated_at=now,
        )
    )
    return FireOutcome(
        commitment_id=row.commitment_id,
        status="missed" if late else "fired",
        state=state,
        occurrence=occurrence,
        event_seq=seq,
        enqueued_run_id=run_id,
        next_at=next_at,
    )


async def evaluate_predicate(
    connection: AsyncConnection,
    request: EvaluatePredicateRequest,
    registry: PredicateRegistry,
    now: datetime,
    *,
    retried: bool = False,
) -> PredicateOutcome:
    ref = request.memory_ref
    row = await _locked(connection, ref, request.commitment_id)
    if row is None:
        return PredicateOutcome(commitment_id=request.commitment_id, status="not-found")
    if row.state != "armed" or row.spec is None:
        return PredicateOutcome(
            commitment_id=row.commitment_id, status="not-armed", state=row.state
        )
    spec = SPEC.validate_python(row.spec)
    if not isinstance(spec, PredicateSpec):
        return PredicateOutcome(
            commitment_id=row.commitment_id, status="not-armed", state=row.state
        )
    holds = await registry.evaluate(connection, ref, spec, request.evaluated_at)
    # Unknown before the first evaluation counts as false: a condition that already
    # holds when the commitment is made fires once.
    rising = holds and not row.predicate_holds
    if retried and holds and not rising and row.transitions:
        # A retry of the evaluation that fired (its commit landed, its completion did
        # not) carries that evaluation's instant: report the recorded firing again, so
        # the watch still enqueues its run (whose id rejects a second start). Without
        # this the retry saw no rising edge and the firing's run was never started.
        occurrence = transition_occurrence(row.transitions)
        recorded = await _claimed(connection, ref, row.commitment_id, occurrence)
        if recorded is not None and recorded.fired_at == request.evaluated_at:
            return PredicateOutcome(
                commitment_id=row.commitment_id,
                status="evaluated",
                holds=True,
                fired=True,
                transition=row.transitions,
                event_seq=recorded.event_seq,
                enqueued_run_id=recorded.enqueued_run_id,
                state=row.state,
            )
    transition = row.transitions + (1 if rising else 0)
    seq: int | None = None
    run_id: str | None = None
    if rising:
        occurrence = transition_occurrence(transition)
        seq, run_id = await _record_fire(connection, row, ref, occurrence, now)
        await _claim(
            connection,
            row,
            ref,
            occurrence,
            "fired",
            due_at=None,
            fired_at=request.evaluated_at,
            now=now,
            event_seq=seq,
            run_id=run_id,
        )
    if rising or holds != row.predicate_holds:
        await connection.execute(
            update(C)
            .where(scoped(C, ref), C.c.commitment_id == row.commitment_id)
            .values(
                predicate_holds=holds,
                transitions=transition,
                fire_count=C.c.fire_count + (1 if rising else 0),
                updated_at=now,
            )
        )
    return PredicateOutcome(
        commitment_id=row.commitment_id,
        status="evaluated",
        holds=holds,
        fired=rising,
        transition=transition,
        event_seq=seq,
        enqueued_run_id=run_id,
        state=row.state,
    )
