"""What a dream's synthesis reads: the requests of a memoryRef, in its tenant's time zone,
and whether anything was asked since the last synthesis.

Reading every request and grouping them costs about as much as the requests a memoryRef
holds (0.6 s at 770 requests), every night. Routines only change when a request
arrives, so each synthesis records how far it read (``proposal_watermarks.seen_through``:
the newest entry of the memoryRef then) and the next one first asks, in one statement
over the new entries only, whether a request arrived since; if none did, it reads
nothing more. A request that committed late with an older instant is read with the next
request that arrives, and a routine recurs.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import exists, func, or_, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.sql import ColumnElement
from sqlalchemy.sql.dml import Insert

from memory.commitment_parsing.phrasing import TRIGGER_SQL_PATTERN
from memory.distillation.queue import TRANSACTIONAL_TIERS
from memory.entries.rows import live
from memory.proposals.routines import REQUEST_TAGS, Sighting
from memory.storage import tables
from memory.storage.database import Database
from memory.storage.sql_arrays import texts
from memory.storage.tenant_scope import scoped, tenant_scoped
from schemas.memory_ref import MemoryRef

ENTRIES = tables.entries
COMMITMENTS = tables.commitments
PROPOSALS = tables.proposals
TENANT_SETTINGS = tables.tenant_settings
PROPOSAL_WATERMARKS = tables.proposal_watermarks
# The newest requests a synthesis reads: a routine shows in weeks, not in years.
MAX_SIGHTINGS = 2_000
_SIGHTING_TAGS = sorted({*REQUEST_TAGS, "commitment", "intention"})


@dataclass(frozen=True)
class Read:
    sightings: list[Sighting]
    time_zone: str
    seen_through: datetime | None  # the memoryRef's newest entry when read


def _requests(ref: MemoryRef, now: datetime) -> list[ColumnElement[bool]]:
    return [
        scoped(ENTRIES, ref),
        live(now),
        # What was said in sessions; the dream's own distillates restate it.
        ENTRIES.c.tier.in_([tier.value for tier in TRANSACTIONAL_TIERS]),
        or_(
            ENTRIES.c.content.op("~*")(TRIGGER_SQL_PATTERN),
            ENTRIES.c.tags.overlap(texts("sighting_tags", _SIGHTING_TAGS)),
        ),
    ]


async def unchanged_since_last(db: Database, ref: MemoryRef, run_id: str) -> list[str] | None:
    """None when the memoryRef must be read (never synthesized, or a request arrived
    since); else the proposals ``run_id`` recorded already (a retried attempt reports
    them as its first did). One statement, over the new entries only."""
    seen = (
        select(PROPOSAL_WATERMARKS.c.seen_through)
        .where(scoped(PROPOSAL_WATERMARKS, ref))
        .scalar_subquery()
    )
    fresh = exists().where(*_requests(ref, db.now()), ENTRIES.c.created_at > seen)
    recorded = func.array(
        select(PROPOSALS.c.proposal_id)
        .where(scoped(PROPOSALS, ref), PROPOSALS.c.source_run_ids.contains([run_id]))
        .order_by(PROPOSALS.c.proposal_id)
        .scalar_subquery()
    )
    statement = select(seen.label("seen"), fresh.label("fresh"), recorded.label("recorded"))
    async with db.reading() as connection:
        row = (await connection.execute(statement)).one()
    if row.seen is None or row.fresh:
        return None
    return list(row.recorded)


async def read_sightings(db: Database, ref: MemoryRef) -> Read:
    """The newest requests (at most MAX_SIGHTINGS), the tenant's zone and the newest
    entry's instant, in one statement."""
    due = (
        select(COMMITMENTS.c.spec["at"].astext)
        .where(
            scoped(COMMITMENTS, ref),
            COMMITMENTS.c.memory_id == ENTRIES.c.id,
            COMMITMENTS.c.condition == "time",
            COMMITMENTS.c.spec["kind"].astext == "once",
        )
        .order_by(COMMITMENTS.c.created_at)
        .limit(1)
        .scalar_subquery()
    )
    zone = (
        select(TENANT_SETTINGS.c.time_zone)
        .where(tenant_scoped(TENANT_SETTINGS, ref.tenant))
        .scalar_subquery()
    )
    newest_entry = (
        select(func.max(ENTRIES.c.created_at)).where(scoped(ENTRIES, ref)).scalar_subquery()
    )
    statement = (
        select(
            ENTRIES.c.id,
            ENTRIES.c.content,
            ENTRIES.c.tags,
            ENTRIES.c.created_at,
            due.label("due_at"),
            zone.label("zone"),
            newest_entry.label("newest"),
        )
        .where(*_requests(ref, db.now()))
        .order_by(ENTRIES.c.created_at.desc(), ENTRIES.c.id.desc())
        .limit(MAX_SIGHTINGS)
    )
    async with db.reading() as connection:
        rows = (await connection.execute(statement)).all()
        if not rows:  # nothing asked: how far there was to read, for the watermark
            newest = (await connection.execute(select(newest_entry))).scalar()
        else:
            newest = rows[0].newest
    sightings = [
        Sighting(
            entry_id=row.id,
            text=row.content,
            tags=tuple(row.tags),
            at=_instant(row.due_at) or row.created_at,
        )
        for row in rows
    ]
    zone_name = (rows[0].zone if rows else None) or "UTC"
    return Read(sightings, zone_name, newest)


def advance_watermark(ref: MemoryRef, seen_through: datetime) -> Insert:
    """Record how far this synthesis read (in its writing transaction)."""
    statement = pg_insert(PROPOSAL_WATERMARKS).values(
        tenant=ref.tenant, memory_ref=str(ref), seen_through=seen_through
    )
    return statement.on_conflict_do_update(
        index_elements=[PROPOSAL_WATERMARKS.c.memory_ref],
        set_={"seen_through": statement.excluded.seen_through},
    )


def _instant(value: Any) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value.replace("Z", "+00:00"))
