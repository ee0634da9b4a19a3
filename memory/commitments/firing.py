"""Firing: the one transaction that claims an occurrence and records it.

For a time commitment, the fire activity locks the commitment, claims
(commitment_id, instant) in the ledger, appends commitment.fired and moves the
commitment to its next instant, all in one transaction: a retry after the commit finds
the claim and returns what was recorded, so a crash anywhere fires at most once. A
predicate evaluation does the same for (commitment_id, transition:<n>) on each
false -> true change.

Catch-up policy: an occurrence claimed more than ``grace_seconds`` after its instant (the
worker or the store was down, or the commitment was inferred after its time) is recorded
as missed, with no event and no run. A recurring commitment fired late owes every
instant strictly after the one fired and at or before the firing (the later of the
timer's firing and the claim): each gets its own ledger row in the same transaction,
fired (event, run) while still inside its grace window, missed past it, so no instant is
ever skipped silently while an outage still never floods stale reminders. One firing
accounts for at most ``MAX_CATCH_UP`` of them; past that next_at is the first instant
not yet accounted for (already behind us), so the workflow's next run fires at once and
carries the catch-up on.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Final

from pydantic import TypeAdapter
from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from memory.commitment_parsing.recurrence_dates import next_occurrence, occurrences_through
from memory.commitments.change_feed import change_seq
from memory.commitments.predicates import PredicateRegistry
from memory.commitments.records import locked_commitment
from memory.events.event_log import PendingEvent, append_events
from memory.storage import tables
from memory.storage.tenant_scope import scoped
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

COMMITMENTS = tables.commitments
OCCURRENCES = tables.occurrences
SPEC: TypeAdapter[CommitmentSpec] = TypeAdapter(CommitmentSpec)
# The most instants one late firing catches up on (besides its own); the rest carry on
# in the next firing, which is due at once.
MAX_CATCH_UP: Final = 1000


async def _claimed(
    connection: AsyncConnection, ref: MemoryRef, commitment_id: str, occurrence: str
) -> Any:
    query = select(OCCURRENCES).where(
        scoped(OCCURRENCES, ref),
        OCCURRENCES.c.commitment_id == commitment_id,
        OCCURRENCES.c.occurrence == occurrence,
    )
    return (await connection.execute(query)).first()


def _fired_event(row: Any, ref: MemoryRef, occurrence: str) -> tuple[PendingEvent, str | None]:
    """commitment.fired (content-free) for one occurrence, and the run id it names."""
    run_id = enqueued_run_id(row.commitment_id, occurrence) if row.enqueue_run else None
    event = CommitmentFired(
        commitment_id=row.commitment_id,
        memory_ref=str(ref),
        condition=row.condition,
        memory_id=row.memory_id,
        enqueued_run_id=run_id,
    )
    dedupe = f"commitment.fired:{row.commitment_id}:{occurrence}"
    return PendingEvent(EventType.COMMITMENT_FIRED, event, dedupe), run_id


async def _record_fire(
    connection: AsyncConnection,
    row: Any,
    ref: MemoryRef,
    occurrence: str,
    now: datetime,
) -> tuple[int, str | None]:
    """Append commitment.fired (content-free) and return its seq and the run id."""
    pending, run_id = _fired_event(row, ref, occurrence)
    (seq,) = await append_events(connection, ref, [pending], now)
    return seq, run_id


def _ledger_row(
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
) -> dict[str, Any]:
    return {
        "commitment_id": row.commitment_id,
        "occurrence": occurrence,
        "tenant": ref.tenant,
        "memory_ref": str(ref),
        "outcome": outcome,
        "due_at": due_at,
        "fired_at": fired_at,
        "claimed_at": now,
        "event_seq": event_seq,
        "enqueued_run_id": run_id,
    }


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
        insert(OCCURRENCES).values(
            _ledger_row(
                row,
                ref,
                occurrence,
                outcome,
                due_at=due_at,
                fired_at=fired_at,
                now=now,
                event_seq=event_seq,
                run_id=run_id,
            )
        )
    )


CatchUp = tuple[int, int, tuple[str, ...]]  # (fired, missed, run ids of the fired)


async def _catch_up(
    connection: AsyncConnection,
    row: Any,
    ref: MemoryRef,
    owed: list[datetime],
    request: FireCommitmentRequest,
    until: datetime,
    now: datetime,
) -> CatchUp:
    """Claim each instant a late firing owes (``owed``, after the one it fires, at or
    before ``until``): fired with its own event and run while ``until`` is inside its
    grace window, missed past it. An instant already in the ledger stands as recorded."""
    if not owed:
        return 0, 0, ()
    instants = {instant_occurrence(due): due for due in owed}
    query = select(OCCURRENCES.c.occurrence).where(
        scoped(OCCURRENCES, ref),
        OCCURRENCES.c.commitment_id == row.commitment_id,
        OCCURRENCES.c.occurrence.in_(list(instants)),
    )
    taken = set((await connection.execute(query)).scalars())
    grace = timedelta(seconds=request.grace_seconds)
    owing = [(occ, due) for occ, due in instants.items() if occ not in taken]
    fired = [(occ, due) for occ, due in owing if until - due <= grace]
    built = [_fired_event(row, ref, occ) for occ, _ in fired]
    seqs = await append_events(connection, ref, [pending for pending, _ in built], now)
    recorded = {
        occ: (seq, run_id) for (occ, _), seq, (_, run_id) in zip(fired, seqs, built, strict=True)
    }
    values = [
        _ledger_row(
            row,
            ref,
            occ,
            "fired" if occ in recorded else "missed",
            due_at=due,
            fired_at=request.fired_at,
            now=now,
            event_seq=recorded.get(occ, (None, None))[0],
            run_id=recorded.get(occ, (None, None))[1],
        )
        for occ, due in owing
    ]
    if values:
        await connection.execute(insert(OCCURRENCES), values)
    run_ids = tuple(run_id for _, run_id in recorded.values() if run_id is not None)
    return len(fired), len(owing) - len(fired), run_ids


async def _caught_up(connection: AsyncConnection, ref: MemoryRef, recorded: Any) -> CatchUp:
    """What the firing that claimed ``recorded`` caught up on, for its retry: the later
    instants claimed in the same transaction (same claim and firing instants), up to
    that firing's own bound."""
    if recorded.due_at is None:
        return 0, 0, ()
    query = (
        select(OCCURRENCES.c.outcome, OCCURRENCES.c.enqueued_run_id)
        .where(
            scoped(OCCURRENCES, ref),
            OCCURRENCES.c.commitment_id == recorded.commitment_id,
            OCCURRENCES.c.claimed_at == recorded.claimed_at,
            OCCURRENCES.c.fired_at == recorded.fired_at,
            OCCURRENCES.c.due_at > recorded.due_at,
            OCCURRENCES.c.due_at <= max(recorded.fired_at, recorded.claimed_at),
        )
        .order_by(OCCURRENCES.c.due_at)
        .limit(MAX_CATCH_UP)
    )
    rows = (await connection.execute(query)).all()
    fired = [r for r in rows if r.outcome == "fired"]
    run_ids = tuple(r.enqueued_run_id for r in fired if r.enqueued_run_id is not None)
    return len(fired), len(rows) - len(fired), run_ids


async def fire_time_occurrence(
    connection: AsyncConnection, request: FireCommitmentRequest, now: datetime
) -> FireOutcome:
    ref = request.memory_ref
    row = await locked_commitment(connection, ref, request.commitment_id)
    if row is None:
        return FireOutcome(commitment_id=request.commitment_id, status="not-found")
    occurrence = instant_occurrence(request.due_at)
    recorded = await _claimed(connection, ref, row.commitment_id, occurrence)
    if recorded is not None:
        # A retry after the commit, or a duplicate workflow: what happened stands,
        # including the instants that firing caught up on (their runs still to enqueue).
        caught_fired, caught_missed, caught_runs = await _caught_up(connection, ref, recorded)
        return FireOutcome(
            commitment_id=row.commitment_id,
            status="already-claimed",
            state=row.state,
            occurrence=occurrence,
            event_seq=recorded.event_seq,
            enqueued_run_id=recorded.enqueued_run_id,
            next_at=row.next_at if row.state == "armed" else None,
            catch_up_fired=caught_fired,
            catch_up_missed=caught_missed,
            catch_up_run_ids=caught_runs,
        )
    if row.state != "armed" or row.spec is None:
        return FireOutcome(commitment_id=row.commitment_id, status="not-armed", state=row.state)
    # Late by the later of the timer's firing (workflow time) and this claim (the store's
    # clock): a firing held up by a store outage is as late as its claim.
    until = max(request.fired_at, now)
    late = until - request.due_at > timedelta(seconds=request.grace_seconds)
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
    caught: CatchUp = (0, 0, ())
    if isinstance(spec, RecurringSpec):
        # Every instant slept through is owed: each fired or missed, never skipped.
        owed = occurrences_through(spec, request.due_at, until, MAX_CATCH_UP)
        caught = await _catch_up(connection, row, ref, owed, request, until, now)
        # Past the cap, the first instant not yet accounted for (behind us) comes next.
        capped = len(owed) == MAX_CATCH_UP
        next_at = next_occurrence(spec, owed[-1] if capped else max(request.due_at, until))
        state = "armed" if next_at is not None else "expired"
    else:
        state = "missed" if late else "fired"
    fired = (0 if late else 1) + caught[0]
    missed = (1 if late else 0) + caught[1]
    await connection.execute(
        update(COMMITMENTS)
        .where(scoped(COMMITMENTS, ref), COMMITMENTS.c.commitment_id == row.commitment_id)
        .values(
            state=state,
            next_at=next_at,
            fire_count=COMMITMENTS.c.fire_count + fired,
            missed_count=COMMITMENTS.c.missed_count + missed,
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
        catch_up_fired=caught[0],
        catch_up_missed=caught[1],
        catch_up_run_ids=caught[2],
    )


def _not_armed(row: Any) -> PredicateOutcome:
    return PredicateOutcome(commitment_id=row.commitment_id, status="not-armed", state=row.state)


async def _stop_watching(connection: AsyncConnection, ref: MemoryRef, row: Any) -> None:
    """The watch finishes on this outcome: no notification needs to reach it any more."""
    if row.seen_change_seq is not None:
        await connection.execute(
            update(COMMITMENTS)
            .where(scoped(COMMITMENTS, ref), COMMITMENTS.c.commitment_id == row.commitment_id)
            .values(seen_change_seq=None)
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
    row = await locked_commitment(connection, ref, request.commitment_id)
    if row is None:
        return PredicateOutcome(commitment_id=request.commitment_id, status="not-found")
    spec = SPEC.validate_python(row.spec) if row.state == "armed" and row.spec else None
    if not isinstance(spec, PredicateSpec):
        await _stop_watching(connection, ref, row)
        return _not_armed(row)
    # Read before the predicate: under READ COMMITTED each statement has its own
    # snapshot, so the predicate sees at least every change counted here. Recorded as
    # what this evaluation has seen, it tells the change listener's sweep which watches
    # missed a notification (memory/commitments/change_feed.py).
    seen = await change_seq(connection, ref)
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
    values: dict[str, Any] = {}
    if rising or holds != row.predicate_holds:
        values.update(
            predicate_holds=holds,
            transitions=transition,
            fire_count=COMMITMENTS.c.fire_count + (1 if rising else 0),
            updated_at=now,
        )
    # Never backwards: an evaluation that read an older counter changes nothing here.
    if row.seen_change_seq is None or seen > row.seen_change_seq:
        values["seen_change_seq"] = seen
    if values:
        await connection.execute(
            update(COMMITMENTS)
            .where(scoped(COMMITMENTS, ref), COMMITMENTS.c.commitment_id == row.commitment_id)
            .values(**values)
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
