"""A fixture run's record and its event log (tables fixture_runs, fixture_run_events).

Variables name memory entries by reference (``{"$entry": {"memoryRef", "id"}}``, or
``{"$content": ...}`` for an entry's text alone) and are resolved through the store when
the run is read: the record never copies entry text, so forget, TTL and erasure leave
none of it here. Every read is scoped by the run's tenant: another tenant's run id reads
as a missing one.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import and_, func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.storage import tables
from memory.storage.database import utc_now
from memory.storage.tenant_scope import all_tenants, tenant_scoped

FIXTURE_RUNS = tables.fixture_runs
FIXTURE_RUN_EVENTS = tables.fixture_run_events


RUN_ID = re.compile(r"run-[0-9a-f]{32}")


def new_run_id() -> str:
    return "run-" + secrets.token_hex(16)


def possible_run_id(value: str) -> bool:
    """A run id is ``run-<32 hex>``: anything else (a NUL, a look-alike) finds nothing
    without reaching the database, like a malformed entry id."""
    return RUN_ID.fullmatch(value) is not None


@dataclass(frozen=True, slots=True)
class RunEvent:
    type: str
    payload: dict[str, Any]


@dataclass(frozen=True, slots=True)
class LoggedEvent:
    """An event as the log holds it: its place (from 0) and when it was written."""

    sequence: int
    type: str
    payload: dict[str, Any]
    occurred_at: datetime


@dataclass(frozen=True, slots=True)
class RunRecord:
    run_id: str
    tenant: str
    fixture: str
    subject_id: str | None
    status: str
    variables: dict[str, Any]
    error: dict[str, Any] | None
    created_at: datetime
    updated_at: datetime


@dataclass
class FixtureOutcome:
    """What a fixture's run leaves: its status, variables (by reference) and events."""

    status: str = "completed"
    variables: dict[str, Any] = field(default_factory=dict)
    events: list[RunEvent] = field(default_factory=list)
    error: dict[str, Any] | None = None


class FixtureRuns:
    def __init__(self, engine: AsyncEngine, clock: Callable[[], datetime] = utc_now) -> None:
        self.engine = engine
        self.now = clock

    async def create(self, tenant: str, fixture: str, subject_id: str | None = None) -> str:
        """Record a run and its ``run.started`` (sequence 0) in one transaction."""
        run_id = new_run_id()
        now = self.now()
        async with self.engine.begin() as connection:
            await connection.execute(
                insert(FIXTURE_RUNS).values(
                    run_id=run_id,
                    tenant=tenant,
                    fixture=fixture,
                    subject_id=subject_id,
                    status="running",
                    variables={},
                    created_at=now,
                    updated_at=now,
                )
            )
            await _append(connection, run_id, [RunEvent("run.started", {"runId": run_id})], now)
        return run_id

    async def get(self, tenant: str, run_id: str) -> RunRecord | None:
        if not possible_run_id(run_id):
            return None
        async with self.engine.connect() as connection:
            row = (
                await connection.execute(
                    select(FIXTURE_RUNS).where(
                        tenant_scoped(FIXTURE_RUNS, tenant), FIXTURE_RUNS.c.run_id == run_id
                    )
                )
            ).first()
        if row is None:
            return None
        return _record(row)

    async def page(
        self,
        tenant: str,
        *,
        limit: int,
        after: tuple[datetime, str] | None = None,
        fixture: str | None = None,
        status: str | None = None,
    ) -> list[RunRecord]:
        """The tenant's runs, newest first, after the keyset position ``after``
        (created_at, run_id) of the previous page's last run."""
        query = select(FIXTURE_RUNS).where(tenant_scoped(FIXTURE_RUNS, tenant))
        if fixture is not None:
            query = query.where(FIXTURE_RUNS.c.fixture == fixture)
        if status is not None:
            query = query.where(FIXTURE_RUNS.c.status == status)
        if after is not None:
            at, run_id = after
            query = query.where(
                or_(
                    FIXTURE_RUNS.c.created_at < at,
                    and_(FIXTURE_RUNS.c.created_at == at, FIXTURE_RUNS.c.run_id < run_id),
                )
            )
        query = query.order_by(
            FIXTURE_RUNS.c.created_at.desc(), FIXTURE_RUNS.c.run_id.desc()
        ).limit(limit)
        async with self.engine.connect() as connection:
            return [_record(row) for row in (await connection.execute(query)).all()]

    async def cancel(self, tenant: str, run_id: str) -> bool | None:
        """Cancel a running run: its status and ``run.cancelled`` in one transaction.
        True when this call cancelled it, False when it had already ended (cancelled
        before, or finished), None when the tenant has no such run. The row lock orders
        this against ``finish``: whichever updates first wins, the other changes
        nothing."""
        if not possible_run_id(run_id):
            return None
        now = self.now()
        async with self.engine.begin() as connection:
            done = await connection.execute(
                update(FIXTURE_RUNS)
                .where(
                    tenant_scoped(FIXTURE_RUNS, tenant),
                    FIXTURE_RUNS.c.run_id == run_id,
                    FIXTURE_RUNS.c.status == "running",
                )
                .values(status="cancelled", updated_at=now)
            )
            if done.rowcount == 1:
                event = RunEvent("run.cancelled", {"runId": run_id, "status": "cancelled"})
                await _append(connection, run_id, [event], now)
                return True
            exists = (
                await connection.execute(
                    select(FIXTURE_RUNS.c.run_id).where(
                        tenant_scoped(FIXTURE_RUNS, tenant), FIXTURE_RUNS.c.run_id == run_id
                    )
                )
            ).first()
        return False if exists is not None else None

    async def events_after(
        self, tenant: str, run_id: str, after_sequence: int = -1
    ) -> list[LoggedEvent] | None:
        """The run's events with a sequence above ``after_sequence``, in order; None when
        the tenant has no such run."""
        if not possible_run_id(run_id):
            return None
        async with self.engine.connect() as connection:
            owned = (
                await connection.execute(
                    select(FIXTURE_RUNS.c.run_id).where(
                        tenant_scoped(FIXTURE_RUNS, tenant), FIXTURE_RUNS.c.run_id == run_id
                    )
                )
            ).first()
            if owned is None:
                return None
            rows = (
                await connection.execute(
                    select(FIXTURE_RUN_EVENTS)
                    .where(
                        FIXTURE_RUN_EVENTS.c.run_id == run_id,
                        FIXTURE_RUN_EVENTS.c.seq > after_sequence,
                    )
                    .order_by(FIXTURE_RUN_EVENTS.c.seq)
                )
            ).all()
        return [LoggedEvent(row.seq, row.type, dict(row.payload), row.occurred_at) for row in rows]

    async def tenant_of(self, run_id: str) -> str | None:
        """For the worker, which runs a run by its id alone (the id is random and only
        the API that created it hands it on): the one look-up across tenants."""
        query = (
            select(FIXTURE_RUNS.c.tenant)
            .where(FIXTURE_RUNS.c.run_id == run_id)
            .execution_options(**all_tenants("a fixture run's tenant by its id, for the worker"))
        )
        async with self.engine.connect() as connection:
            return (await connection.execute(query)).scalar_one_or_none()

    async def finish(self, tenant: str, run_id: str, outcome: FixtureOutcome) -> bool:
        """Record the outcome and the events in one transaction, once: a retried
        activity that finds the run already finished changes nothing (False)."""
        now = self.now()
        async with self.engine.begin() as connection:
            done = await connection.execute(
                update(FIXTURE_RUNS)
                .where(
                    tenant_scoped(FIXTURE_RUNS, tenant),
                    FIXTURE_RUNS.c.run_id == run_id,
                    FIXTURE_RUNS.c.status == "running",
                )
                .values(
                    status=outcome.status,
                    variables=outcome.variables,
                    error=outcome.error,
                    updated_at=now,
                )
            )
            if done.rowcount == 0:
                return False
            await _append(connection, run_id, outcome.events, now)
        return True


async def _append(connection: Any, run_id: str, events: Sequence[RunEvent], now: datetime) -> None:
    """Append after the run's last event (sequences from 0). Callers hold the run row's
    lock (they updated it in this transaction), so two appends never race."""
    if not events:
        return
    last = (
        await connection.execute(
            select(func.max(FIXTURE_RUN_EVENTS.c.seq)).where(FIXTURE_RUN_EVENTS.c.run_id == run_id)
        )
    ).scalar_one_or_none()
    start = -1 if last is None else int(last)
    await connection.execute(
        insert(FIXTURE_RUN_EVENTS),
        [
            {
                "run_id": run_id,
                "seq": start + n,
                "type": e.type,
                "payload": e.payload,
                "occurred_at": now,
            }
            for n, e in enumerate(events, start=1)
        ],
    )


def _record(row: Any) -> RunRecord:
    return RunRecord(
        row.run_id,
        row.tenant,
        row.fixture,
        row.subject_id,
        row.status,
        dict(row.variables),
        row.error,
        row.created_at,
        row.updated_at,
    )
