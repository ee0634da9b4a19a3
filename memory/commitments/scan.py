"""Inference, store side: read the entries written since the memoryRef's watermark, parse
the ones that read like commitments and record each commitment once.

The watermark is durable (commitment_watermarks), so a crash or a skipped night loses
nothing: the next run scans from where the last one committed. It trails by a minute of
overlap, because an entry's updated_at is its transaction's clock and a transaction that
commits late can carry an earlier time; re-reading is harmless because the commitment id
is a hash of (memoryRef, memoryId, normalised condition) and inserts skip known ids.
Relative times ("in 5 days") resolve from the entry's creation, not from the scan.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import any_, exists, or_, select, text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from memory.commitment_parsing.conventions import ParsingConventions
from memory.commitment_parsing.inference import Inferred, Unparsable, infer_commitment
from memory.commitment_parsing.phrasing import INTENTION_TAGS, TRIGGER_SQL_PATTERN
from memory.commitment_parsing.recurrence_dates import first_occurrence
from memory.commitment_parsing.time_words import normalize_text
from memory.commitments.readings import ReadingColumns, inferred_event
from memory.cpu_work import on_loop
from memory.entries.filters import not_superseded
from memory.entries.lineage import DISTILLED
from memory.entries.rows import ENTRIES, live
from memory.events.event_log import append_events
from memory.storage import tables
from memory.storage.locks import lock, memory_ref_order
from memory.storage.sql_arrays import texts
from memory.storage.tenant_scope import scoped, tenant_scoped
from schemas.commitment_spec import OnceSpec, PredicateSpec, RecurringSpec
from schemas.commitments import (
    MAX_INFERENCE_IDS,
    InferCommitmentsRequest,
    InferenceResult,
    TenantCommitmentSettings,
    UnparsableEntry,
    commitment_id,
)
from schemas.errors import InvalidInput
from schemas.memory_ref import MemoryRef

COMMITMENTS = tables.commitments
COMMITMENT_WATERMARKS = tables.commitment_watermarks
LINEAGE = tables.lineage
WATERMARK_OVERLAP = timedelta(minutes=1)
# Entries carrying one of phrasing's intention tags, in any case.
_TAGGED = text(
    "EXISTS (SELECT 1 FROM unnest(memory_entries.tags) AS tag "
    "WHERE lower(btrim(tag)) = ANY(:intention_tags))"
).bindparams(texts("intention_tags", sorted(INTENTION_TAGS)))


def checked_zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as error:
        raise InvalidInput("timeZone", "an IANA time zone name such as Europe/Berlin") from error


async def tenant_settings(connection: AsyncConnection, tenant: str) -> TenantCommitmentSettings:
    settings = tables.tenant_settings
    query = select(
        settings.c.time_zone,
        settings.c.require_confirmation,
        settings.c.date_order,
        settings.c.next_weekday,
    ).where(tenant_scoped(settings, tenant))
    row = (await connection.execute(query)).first()
    return TenantCommitmentSettings(tenant=tenant, **(row._asdict() if row else {}))


def parsing_conventions(settings: TenantCommitmentSettings) -> ParsingConventions:
    """What the grammar reads of a tenant's settings."""
    return ParsingConventions(date_order=settings.date_order, next_weekday=settings.next_weekday)


async def tenant_time_zone(connection: AsyncConnection, tenant: str) -> str:
    return (await tenant_settings(connection, tenant)).time_zone


def promise_key(text: str, normalized_condition: str) -> str:
    """What makes two entries the same promise: the same words (case, spacing and
    punctuation aside) and the same condition, relative times resolved from when each
    was said. "Remind me in 2 hours to call Sam" written twice in one batch is one
    promise; said again an hour later it is a second reminder. A hash: the key is
    compared, never read back, and holds no text."""
    words = " ".join(re.findall(r"[\w']+", normalize_text(text)))
    return hashlib.sha256(f"{words}\x1f{normalized_condition}".encode()).hexdigest()[:32]


def first_instant(spec: OnceSpec | RecurringSpec, said_at: datetime) -> datetime | None:
    if isinstance(spec, OnceSpec):
        return spec.at
    return first_occurrence(spec, said_at)


async def _candidates(
    connection: AsyncConnection,
    ref: MemoryRef,
    request: InferCommitmentsRequest,
    since: datetime | None,
    now: datetime,
) -> Sequence[Any]:
    # A distilled entry restates its sources' text, intentions included: inferring from
    # it would make a second commitment (a second firing) of a promise its source,
    # still live, already holds. Derived entries are never a source of commitments, nor
    # is an entry a later one supersedes (its promise was replaced: migration 0026).
    distillate = exists().where(
        LINEAGE.c.tenant == ENTRIES.c.tenant,
        LINEAGE.c.memory_ref == ENTRIES.c.memory_ref,
        LINEAGE.c.artifact_kind == DISTILLED,
        LINEAGE.c.artifact_id == ENTRIES.c.id,
    )
    query = select(
        ENTRIES.c.id, ENTRIES.c.content, ENTRIES.c.tags, ENTRIES.c.created_at, ENTRIES.c.updated_at
    ).where(scoped(ENTRIES, ref), live(now), ~distillate, not_superseded())
    if request.memory_ids is not None:
        query = query.where(ENTRIES.c.id == any_(texts("ids", request.memory_ids)))
    else:
        query = query.where(
            or_(
                _TAGGED,
                ENTRIES.c.content.regexp_match(TRIGGER_SQL_PATTERN, flags="i"),
            )
        )
        if since is not None:
            query = query.where(ENTRIES.c.updated_at > since - WATERMARK_OVERLAP)
    return (await connection.execute(query.order_by(ENTRIES.c.updated_at, ENTRIES.c.id))).all()


async def infer_commitments(
    connection: AsyncConnection, request: InferCommitmentsRequest, now: datetime
) -> InferenceResult:
    ref = request.memory_ref
    # Read and insert under the memoryRef's order (memory/storage/locks.py): a consolidation or
    # forget of the ref runs entirely before (its merged or erased entries are not read)
    # or after (its triggers end the commitments made here).
    await lock(connection, memory_ref_order(ref))
    settings = await tenant_settings(connection, ref.tenant)
    zone_name = request.time_zone or settings.time_zone
    zone = checked_zone(zone_name)
    first_state = "proposed" if settings.require_confirmation else "armed"
    conventions = parsing_conventions(settings)
    watermark = (
        await connection.execute(
            select(COMMITMENT_WATERMARKS.c.scanned_through).where(
                scoped(COMMITMENT_WATERMARKS, ref)
            )
        )
    ).scalar()
    rows = await _candidates(connection, ref, request, watermark, now)
    # Parsing is pure CPU, and a first scan of a large memory parses every
    # commitment-like entry (89,100 in a 1M-entry memoryRef, a fraction of a millisecond
    # each). On the event loop that starved the activity's heartbeats past their timeout:
    # every attempt was cancelled and retried while it still ran, and the dream never
    # finished (tests/memory/test_inference_event_loop.py).
    reading = _Reading(ref, zone, zone_name, conventions, first_state, request.enqueue_runs, now)
    # A night's few rows parse in well under a heartbeat: no thread hand-off for them
    # (a fleet dream runs thousands of such scans).
    parsed = (
        _parse(rows, reading)
        if on_loop(len(rows))
        else await asyncio.to_thread(_parse, rows, reading)
    )
    records, unparsable, kinds = parsed.records, parsed.unparsable, parsed.kinds
    created: list[str] = []
    if records:
        # One multi-row statement binds a parameter per column per row, and the driver
        # stops at 32,767: a first scan of a large memory inserts in batches below it
        # (all in this transaction, so the scan still commits or vanishes as one).
        per_batch = max(1, MAX_BOUND_PARAMETERS // len(records[0]))
        for start in range(0, len(records), per_batch):
            inserted = await connection.execute(
                pg_insert(COMMITMENTS)
                .values(records[start : start + per_batch])
                # Known already: the same commitment id, or a live (armed or proposed)
                # commitment of the same promise (uq_commitments_live_promise, 0011/0014).
                .on_conflict_do_nothing()
                .returning(COMMITMENTS.c.commitment_id)
            )
            created += inserted.scalars()
        # Announced in the same transaction: an inference an operator can audit (and
        # cancel) before it fires, content-free like commitment.fired.
        fresh = set(created)
        await append_events(
            connection,
            ref,
            [inferred_event(r) for r in records if r["commitment_id"] in fresh],
            now,
        )
    scanned_through = max((row.updated_at for row in rows), default=watermark)
    if request.memory_ids is None and scanned_through is not None:
        await connection.execute(
            pg_insert(COMMITMENT_WATERMARKS)
            .values(
                memory_ref=str(ref),
                tenant=ref.tenant,
                scanned_through=scanned_through,
                updated_at=now,
            )
            .on_conflict_do_update(
                index_elements=[COMMITMENT_WATERMARKS.c.memory_ref],
                set_={"scanned_through": scanned_through, "updated_at": now},
            )
        )
    found = {row.id for row in rows}
    listed = unparsable[:MAX_INFERENCE_IDS]
    return InferenceResult(
        memory_ref=str(ref),
        scanned=len(rows),
        created=len(created),
        already_known=len(records) - len(created),
        unparsable_count=len(unparsable),
        unparsable_ids=tuple(memory_id for memory_id, _ in listed),
        unparsable_entries=tuple(
            UnparsableEntry(memory_id=memory_id, reason=reason) for memory_id, reason in listed
        ),
        not_found_ids=tuple(i for i in request.memory_ids or () if i not in found),
        time_commitments=kinds["time"],
        predicate_commitments=kinds["predicate"],
        watermark=scanned_through,
    )


# Below asyncpg's 32,767 bound parameters per statement, with room to spare.
MAX_BOUND_PARAMETERS = 30_000


@dataclass(frozen=True)
class _Reading:
    """How one scan reads its rows: the memoryRef, the tenant's zone and conventions,
    the state a new commitment starts in, and the scan's clock."""

    ref: MemoryRef
    zone: ZoneInfo
    zone_name: str
    conventions: ParsingConventions
    first_state: str
    enqueue_runs: bool
    now: datetime


@dataclass
class _Parsed:
    records: list[dict[str, Any]] = field(default_factory=list)
    # (memoryId, the parser's reason code): a category, never the entry's words.
    unparsable: list[tuple[str, str]] = field(default_factory=list)
    kinds: dict[str, int] = field(default_factory=lambda: {"time": 0, "predicate": 0})


def _parse(rows: Sequence[Any], reading: _Reading) -> _Parsed:
    """The commitments ``rows`` state, one record per promise (pure: runs in a thread)."""
    parsed = _Parsed()
    promised: set[str] = set()
    for row in rows:
        outcome = infer_commitment(
            row.content,
            row.tags,
            said_at=row.created_at,
            zone=reading.zone,
            conventions=reading.conventions,
        )
        if outcome is None:
            continue
        if isinstance(outcome, Unparsable):
            parsed.unparsable.append((row.id, outcome.reason))
            continue
        record = _record(
            reading.ref,
            row,
            outcome,
            reading.zone_name,
            reading.first_state,
            reading.enqueue_runs,
            reading.now,
        )
        if record["promise_key"] in promised:
            continue  # the same promise stated again in this batch: armed once
        promised.add(record["promise_key"])
        parsed.records.append(record)
        parsed.kinds[outcome.condition] += 1
    return parsed


def _record(
    ref: MemoryRef,
    row: Any,
    outcome: Inferred,
    zone_name: str,
    first_state: str,
    enqueue_run: bool,
    now: datetime,
) -> dict[str, Any]:
    spec = outcome.spec
    next_at = None if isinstance(spec, PredicateSpec) else first_instant(spec, row.created_at)
    # A recurrence with no instant left (an UNTIL in the past) is born expired.
    born_expired = next_at is None and outcome.condition == "time"
    reading = ReadingColumns.of(row.content, outcome.span, outcome.conventions)
    return {
        "commitment_id": commitment_id(str(ref), row.id, outcome.normalized_condition),
        "tenant": ref.tenant,
        "memory_ref": str(ref),
        "memory_id": row.id,
        "condition": outcome.condition,
        "spec": spec.model_dump(mode="json", by_alias=True),
        "time_zone": zone_name,
        "state": "expired" if born_expired else first_state,
        "next_at": next_at,
        "enqueue_run": enqueue_run,
        "promise_key": promise_key(row.content, outcome.normalized_condition),
        "created_at": now,
        "updated_at": now,
        **reading.as_row(),
    }
