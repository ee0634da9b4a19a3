"""Reading and managing commitments: list, show, cancel, arming bookkeeping and the
tenant's time zone. Every query is scoped by the commitment's tenant and memoryRef."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, any_, func, or_, select, tuple_, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from memory.commitments.readings import cancelled_event, read_span, reading_of, understood
from memory.commitments.scan import checked_zone, tenant_settings
from memory.entries.rows import ENTRIES
from memory.events.event_log import append_events
from memory.storage import tables
from memory.storage.sql_arrays import texts
from memory.storage.tenant_scope import all_tenants, scoped
from schemas.commitments import (
    CommitmentDetail,
    CommitmentRecord,
    CommitmentState,
    DateOrder,
    NextWeekday,
    OccurrenceRecord,
    TenantCommitmentSettings,
    commitment_workflow_id,
)
from schemas.memory_ref import MemoryRef

COMMITMENTS = tables.commitments
OCCURRENCES = tables.occurrences
# A commitment that can still fire (or, proposed, be confirmed to).
LIVE_STATES = frozenset({"armed", "proposed"})


def to_record(row: Any) -> CommitmentRecord:
    return CommitmentRecord(
        commitment_id=row.commitment_id,
        memory_ref=row.memory_ref,
        memory_id=row.memory_id,
        condition=row.condition,
        state=row.state,
        time_zone=row.time_zone,
        next_at=row.next_at,
        fire_count=row.fire_count,
        missed_count=row.missed_count,
        transitions=row.transitions,
        enqueue_run=row.enqueue_run,
        # Derived, not stored: the id arming started it under (once armed).
        workflow_id=commitment_workflow_id(row.commitment_id) if row.armed_at else None,
        ended_reason=row.ended_reason,
        created_at=row.created_at,
        reading=reading_of(row),
        understood=understood(row.spec, row.condition, row.time_zone),
    )


async def list_commitments(
    connection: AsyncConnection,
    ref: MemoryRef,
    *,
    state: CommitmentState | None = None,
    limit: int = 1000,
) -> list[CommitmentRecord]:
    query = (
        select(COMMITMENTS)
        .where(scoped(COMMITMENTS, ref))
        .order_by(COMMITMENTS.c.created_at, COMMITMENTS.c.commitment_id)
        .limit(limit)
    )
    if state is not None:
        query = query.where(COMMITMENTS.c.state == state)
    return [to_record(row) for row in await connection.execute(query)]


async def commitment_detail(
    connection: AsyncConnection, ref: MemoryRef, commitment_id: str
) -> CommitmentDetail | None:
    row = (
        await connection.execute(
            select(COMMITMENTS).where(
                scoped(COMMITMENTS, ref), COMMITMENTS.c.commitment_id == commitment_id
            )
        )
    ).first()
    if row is None:
        return None
    ledger = await connection.execute(
        select(OCCURRENCES)
        .where(scoped(OCCURRENCES, ref), OCCURRENCES.c.commitment_id == commitment_id)
        .order_by(OCCURRENCES.c.claimed_at)
    )
    # The intention as the entry holds it now (SR-1 redacted when it was written).
    intention = (
        await connection.execute(
            select(ENTRIES.c.content).where(scoped(ENTRIES, ref), ENTRIES.c.id == row.memory_id)
        )
    ).scalar()
    record = to_record(row)
    read_text = read_span(intention, record.reading)
    return CommitmentDetail(
        commitment=record,
        occurrences=tuple(
            OccurrenceRecord(
                occurrence=o.occurrence,
                outcome=o.outcome,
                due_at=o.due_at,
                fired_at=o.fired_at,
                claimed_at=o.claimed_at,
                event_seq=o.event_seq,
                enqueued_run_id=o.enqueued_run_id,
            )
            for o in ledger
        ),
        spec=row.spec,
        intention=intention,
        read_text=read_text,
        read_changed=record.reading is not None and read_text is None and intention is not None,
    )


async def locked_commitment(connection: AsyncConnection, ref: MemoryRef, commitment_id: str) -> Any:
    """The commitment's row, locked for the rest of the transaction (firing, evaluating,
    confirming and cancelling one commitment run one at a time)."""
    query = (
        select(COMMITMENTS)
        .where(scoped(COMMITMENTS, ref), COMMITMENTS.c.commitment_id == commitment_id)
        .with_for_update()
    )
    return (await connection.execute(query)).first()


async def _set(
    connection: AsyncConnection, ref: MemoryRef, commitment_id: str, **values: Any
) -> Any:
    """Update the commitment and return its row as it is now."""
    query = (
        update(COMMITMENTS)
        .where(scoped(COMMITMENTS, ref), COMMITMENTS.c.commitment_id == commitment_id)
        .values(**values)
        .returning(*COMMITMENTS.c)
    )
    return (await connection.execute(query)).first()


async def cancel_commitment(
    connection: AsyncConnection, ref: MemoryRef, commitment_id: str, now: datetime
) -> CommitmentRecord | None:
    """Armed or proposed -> cancelled, with commitment.cancelled in the same transaction;
    a commitment that already ended keeps its state and announces nothing (so the store
    cancel and the workflow cancel that follows it record one event between them)."""
    row = await locked_commitment(connection, ref, commitment_id)
    if row is None:
        return None
    if row.state not in LIVE_STATES:
        return to_record(row)
    await append_events(connection, ref, [cancelled_event(row, row.state)], now)
    ended = await _set(
        connection,
        ref,
        commitment_id,
        state="cancelled",
        ended_reason="cancelled",
        next_at=None,
        updated_at=now,
    )
    return to_record(ended)


async def confirm_commitment(
    connection: AsyncConnection, ref: MemoryRef, commitment_id: str, now: datetime
) -> CommitmentRecord | None:
    """Proposed -> armed (not yet started: arming starts it). Confirming an armed
    commitment again is a no-op; one that ended keeps its state."""
    row = await locked_commitment(connection, ref, commitment_id)
    if row is None:
        return None
    if row.state == "proposed":
        row = await _set(connection, ref, commitment_id, state="armed", updated_at=now)
    return to_record(row)


@dataclass(frozen=True, slots=True)
class UnarmedCommitment:
    """What arming needs of an armed commitment whose workflow is not started yet."""

    commitment_id: str
    condition: str  # "time" or a predicate kind
    next_at: datetime | None
    # For the workflow's summary in the Temporal UI: ids, offsets and what was understood.
    memory_id: str = ""
    understood: str | None = None
    span: tuple[int, int] | None = None

    def summary(self, ref: MemoryRef) -> str:
        """``time commitment of mem://acme/a1, entry e-1 [14:23]: once 2026-...Z``."""
        where = f", entry {self.memory_id}" if self.memory_id else ""
        if self.span is not None:
            where += f" [{self.span[0]}:{self.span[1]}]"
        said = f": {self.understood}" if self.understood else ""
        return f"{self.condition} commitment of {ref}{where}{said}"


def _startable(due_before: datetime | None) -> Any:
    """Armed, not started, and (with ``due_before``) a predicate or due before it."""
    live = and_(COMMITMENTS.c.state == "armed", COMMITMENTS.c.armed_at.is_(None))
    if due_before is None:
        return live
    return and_(live, or_(COMMITMENTS.c.condition != "time", COMMITMENTS.c.next_at < due_before))


async def unarmed(
    connection: AsyncConnection,
    ref: MemoryRef,
    limit: int,
    due_before: datetime | None = None,
) -> list[UnarmedCommitment]:
    """Armed commitments whose workflow has not been started (or not recorded as such);
    with ``due_before``, only predicates and time commitments due before it."""
    query = (
        select(
            COMMITMENTS.c.commitment_id,
            COMMITMENTS.c.condition,
            COMMITMENTS.c.next_at,
            COMMITMENTS.c.memory_id,
            COMMITMENTS.c.spec,
            COMMITMENTS.c.time_zone,
            COMMITMENTS.c.span_start,
            COMMITMENTS.c.span_end,
        )
        .where(scoped(COMMITMENTS, ref), _startable(due_before))
        .order_by(COMMITMENTS.c.commitment_id)
        .limit(limit)
    )
    rows = (await connection.execute(query)).all()
    return [
        UnarmedCommitment(
            row.commitment_id,
            row.condition,
            row.next_at,
            row.memory_id,
            understood(row.spec, row.condition, row.time_zone),
            None if row.span_start is None else (row.span_start, row.span_end),
        )
        for row in rows
    ]


# Armed time commitments whose workflow arming left for a horizon (served by
# ix_commitments_deferred_due, migration 0021).
_DEFERRED = and_(
    COMMITMENTS.c.state == "armed",
    COMMITMENTS.c.armed_at.is_(None),
    COMMITMENTS.c.condition == "time",
)


async def deferred(
    connection: AsyncConnection, ref: MemoryRef | None, due_from: datetime
) -> tuple[int, datetime | None]:
    """How many armed, unstarted time commitments are due at or after ``due_from``
    (arming left them for a horizon workflow), and the earliest of their instants: of
    ``ref``, or of every memoryRef when it is None (the fleet's horizon)."""
    query = select(func.count(), func.min(COMMITMENTS.c.next_at)).where(
        _DEFERRED, COMMITMENTS.c.next_at >= due_from
    )
    query = (
        query.where(scoped(COMMITMENTS, ref))
        if ref is not None
        else query.execution_options(**all_tenants("the fleet horizon's deferred commitments"))
    )
    count, earliest = (await connection.execute(query)).one()
    return int(count), earliest


async def refs_to_arm(
    connection: AsyncConnection,
    due_before: datetime,
    after: tuple[str, str] | None,
    limit: int,
) -> list[tuple[str, str]]:
    """(tenant, memoryRef) of every memoryRef with a deferred time commitment due before
    ``due_before``, in order after the cursor ``after``."""
    query = (
        select(COMMITMENTS.c.tenant, COMMITMENTS.c.memory_ref)
        .where(_DEFERRED, COMMITMENTS.c.next_at < due_before)
        .group_by(COMMITMENTS.c.tenant, COMMITMENTS.c.memory_ref)
        .order_by(COMMITMENTS.c.tenant, COMMITMENTS.c.memory_ref)
        .limit(limit)
        .execution_options(**all_tenants("the fleet horizon arms every tenant's memoryRefs"))
    )
    if after is not None:
        query = query.where(tuple_(COMMITMENTS.c.tenant, COMMITMENTS.c.memory_ref) > tuple_(*after))
    return [(row.tenant, row.memory_ref) for row in (await connection.execute(query)).all()]


async def mark_armed(
    connection: AsyncConnection,
    ref: MemoryRef,
    commitment_ids: Sequence[str],
    now: datetime,
) -> None:
    if not commitment_ids:
        return
    ids = sorted(commitment_ids)
    await connection.execute(
        update(COMMITMENTS)
        .where(scoped(COMMITMENTS, ref), COMMITMENTS.c.commitment_id == any_(texts("ids", ids)))
        .values(armed_at=now, updated_at=now)
    )


async def update_tenant_settings(
    connection: AsyncConnection,
    tenant: str,
    now: datetime,
    *,
    time_zone: str | None = None,
    require_confirmation: bool | None = None,
    date_order: DateOrder | None = None,
    next_weekday: NextWeekday | None = None,
) -> TenantCommitmentSettings:
    """Set the given settings of a tenant (the others keep their value, or the default
    for a tenant that had none) and return them all."""
    if time_zone is not None:
        checked_zone(time_zone)
    changes: dict[str, Any] = {
        key: value
        for key, value in (
            ("time_zone", time_zone),
            ("require_confirmation", require_confirmation),
            ("date_order", date_order),
            ("next_weekday", next_weekday),
        )
        if value is not None
    }
    settings = tables.tenant_settings
    # A first row takes the column defaults for what is not given (time_zone has none).
    first = {"time_zone": TenantCommitmentSettings(tenant=tenant).time_zone, **changes}
    await connection.execute(
        pg_insert(settings)
        .values(tenant=tenant, updated_at=now, **first)
        .on_conflict_do_update(
            index_elements=[settings.c.tenant], set_={**changes, "updated_at": now}
        )
    )
    return await tenant_settings(connection, tenant)
