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

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from memory import tables
from memory.scope import all_tenants, tenant_scoped
from memory.transactions import utc_now

R = tables.fixture_runs
V = tables.fixture_run_events


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
class RunRecord:
    run_id: str
    tenant: str
    fixture: str
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

    async def create(self, tenant: str, fixture: str) -> str:
        run_id = new_run_id()
        now = self.now()
        async with self.engine.begin() as connection:
            await connection.execute(
                insert(R).values(
                    run_id=run_id,
                    tenant=tenant,
                    fixture=fixture,
                    status="running",
                    variables={},
                    created_at=now,
                    updated_at=now,
                )
            )
        return run_id

    async def get(self, tenant: str, run_id: str) -> RunRecord | None:
        if not possible_run_id(run_id):
            return None
        async with self.engine.connect() as connection:
            row = (
                await connection.execute(
                    select(R).where(tenant_scoped(R, tenant), R.c.run_id == run_id)
                )
            ).first()
        if row is None:
            return None
        return RunRecord(
            row.run_id,
            row.tenant,
            row.fixture,
            row.status,
            dict(row.variables),
            row.error,
            row.created_at,
            row.updated_at,
        )

    async def tenant_of(self, run_id: str) -> str | None:
        """For the worker, which runs a run by its id alone (the id is random and only
        the API that created it hands it on): the one look-up across tenants."""
        query = (
            select(R.c.tenant)
            .where(R.c.run_id == run_id)
            .execution_options(**all_tenants("a fixture run's tenant by its id, for the worker"))
        )
        async with self.engine.connect() as connection:
            return (await connection.execute(query)).scalar_one_or_none()

    async def events(self, tenant: str, run_id: str) -> list[RunEvent] | None:
        if not possible_run_id(run_id):
            return None
        async with self.engine.connect() as connection:
            owned = (
                await connection.execute(
                    select(R.c.run_id).where(tenant_scoped(R, tenant), R.c.run_id == run_id)
                )
            ).first()
            if owned is None:
                return None
            rows = (
                await connection.execute(
                    select(V.c.type, V.c.payload).where(V.c.run_id == run_id).order_by(V.c.seq)
                )
            ).all()
        return [RunEvent(row.type, dict(row.payload)) for row in rows]

    async def finish(self, tenant: str, run_id: str, outcome: FixtureOutcome) -> bool:
        """Record the outcome and the events in one transaction, once: a retried
        activity that finds the run already finished changes nothing (False)."""
        now = self.now()
        async with self.engine.begin() as connection:
            done = await connection.execute(
                update(R)
                .where(tenant_scoped(R, tenant), R.c.run_id == run_id, R.c.status == "running")
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
    if events:
        await connection.execute(
            insert(V),
            [
                {
                    "run_id": run_id,
                    "seq": n,
                    "type": e.type,
                    "payload": e.payload,
                    "occurred_at": now,
                }
                for n, e in enumerate(events, start=1)
            ],
        )
