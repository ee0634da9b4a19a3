"""Reading and managing commitments: list, show, cancel, arming bookkeeping and the
tenant's time zone. Every query is scoped by the commitment's tenant and memoryRef."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import any_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from memory import tables
from memory.commitments.scan import checked_zone
from memory.rows import E
from memory.scope import scoped
from memory.sql_arrays import texts
from schemas.commitments import (
    CommitmentDetail,
    CommitmentRecord,
    CommitmentState,
    OccurrenceRecord,
    commitment_workflow_id,
)
from schemas.memory_ref import MemoryRef

C = tables.commitments
O = tables.occurrences  # noqa: E741


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
    )


async def list_commitments(
    connection: AsyncConnection,
    ref: MemoryRef,
    *,
    state: CommitmentState | None = None,
    limit: int = 1000,
) -> list[CommitmentRecord]:
    query = select(C).where(scoped(C, ref)).order_by(C.c.created_at, C.c.commitment_id).limit(limit)
    if state is not None:
        query = query.where(C.c.state == state)
    return [to_record(row) for row in await connection.execute(query)]


async def commitment_detail(
    connection: AsyncConnection, ref: MemoryRef, commitment_id: str
) -> CommitmentDetail | None:
    row = (
        await connection.execute(
            select(C).where(scoped(C, ref), C.c.commitment_id == commitment_id)
        )
    ).first()
    if row is None:
        return None
    ledger = await connection.execute(
        select(O).where(scoped(O, ref), O.c.commitment_id == commitment_id).order_by(O.c.claimed_at)
    )
    # The intention as the entry holds it now (SR-1 redacted when it was written).
    intention = (
        await connection.execute(select(E.c.content).where(scoped(E, ref), E.c.id == row.memory_id))
    ).scalar()
    return CommitmentDetail(
        commitment=to_record(row),
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
    )


async def cancel_commitment(
    connection: AsyncConnection, ref: MemoryRef, commitment_id: str, now: datetime
) -> CommitmentRecord | None:
    """Armed -> cancelled; a commitment that already ended keeps its state."""
    await connection.execute(
        update(C)
        .where(scoped(C, ref), C.c.commitment_id == commitment_id, C.c.state == "armed")
        .values(state="cancelled", ended_reason="cancelled", next_at=None, updated_at=now)
    )
    row = (
        await connection.execute(
            select(C).where(scoped(C, ref), C.c.commitment_id == commitment_id)
        )
    ).first()
    return to_record(row) if row is not None else None


@dataclass(frozen=True, slots=True)
class UnarmedCommitment:
    """What arming needs of an armed commitment whose workflow is not started yet."""

    commitment_id: str
    condition: str  # "time" or a predicate kind
    next_at: datetime | None


async def unarmed(
    connection: AsyncConnection, ref: MemoryRef, limit: int
) -> list[UnarmedCommitment]:
    """Armed commitments whose workflow has not been started (or not recorded as such)."""
    query = (
        select(C.c.commitment_id, C.c.condition, C.c.next_at)
        .where(scoped(C, ref), C.c.state == "armed", C.c.armed_at.is_(None))
        .order_by(C.c.commitment_id)
        .limit(limit)
    )
    rows = (await connection.execute(query)).all()
    return [UnarmedCommitment(row.commitment_id, row.condition, row.next_at) for row in rows]


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
        update(C)
        .where(scoped(C, ref), C.c.commitment_id == any_(texts("ids", ids)))
        .values(armed_at=now, updated_at=now)
    )


async def set_time_zone(
    connection: AsyncConnection, tenant: str, time_zone: str, now: datetime
) -> str:
    checked_zone(time_zone)
    settings = tables.tenant_settings
    await connection.execute(
        pg_insert(settings)
        .values(tenant=tenant, time_zone=time_zone, updated_at=now)
        .on_conflict_do_update(
            index_elements=[settings.c.tenant],
            set_={"time_zone": time_zone, "updated_at": now},
        )
    )
    return time_zone
