"""The append-only event log: one monotonic, gap-free sequence per memoryRef.

Events are appended inside the caller's transaction, so an entry and the events that
describe it commit or vanish together. A row in memory_ref_heads hands out sequence
numbers; its row lock orders concurrent writers to one memoryRef.

A lifecycle event of an entry scoped to an OpenIntent intent carries the intent's link
(``intent_digest``, memory/intent_links.py), read back across the tenant's memoryRefs by
``read_intent_events``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import any_, insert, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from memory import tables
from memory.intent_links import IntentLinks, intent_id_column
from memory.scope import scoped, tenant_scoped
from memory.sql_arrays import texts
from schemas.base import WireModel
from schemas.events import EventRecord, EventType, MemoryLifecycle
from schemas.memory_entry import Tier
from schemas.memory_ref import MemoryRef, parse_memory_ref


@dataclass(frozen=True, slots=True)
class PendingEvent:
    type: EventType
    payload: WireModel
    dedupe_key: str | None = None
    # The link to the OpenIntent intent the entry is scoped to: its digest, never its id.
    intent: str | None = None


# What a deletion returns to describe each removed entry in its lifecycle event (with
# the OpenIntent intent it was scoped to, memory/intent_links.py).
_E = tables.entries
REMOVED_COLUMNS = (
    *(_E.c.memory_ref, _E.c.id, _E.c.tier, _E.c.namespace, _E.c.key, _E.c.version),
    intent_id_column(_E),
)


def removal_event(row: Any, event_type: EventType, reason: str, links: IntentLinks) -> PendingEvent:
    """The lifecycle event of one removed entry (a row with memory_ref, id, tier,
    namespace, key, version and intent_id): ids and versions only, never the value."""
    tenant = parse_memory_ref(row.memory_ref).tenant
    return PendingEvent(
        event_type,
        MemoryLifecycle(
            memory_ref=row.memory_ref,
            memory_id=row.id,
            tier=Tier(row.tier),
            namespace=row.namespace,
            key=row.key,
            version=row.version,
            reason=reason,
        ),
        intent=links.digest(tenant, row.intent_id),
    )


async def append_events(
    connection: AsyncConnection,
    ref: MemoryRef,
    pending: Sequence[PendingEvent],
    occurred_at: datetime,
) -> list[int]:
    """Append events in order and return their sequence numbers."""
    if not pending:
        return []
    head = tables.ref_heads
    upsert = (
        pg_insert(head)
        .values(memory_ref=str(ref), tenant=ref.tenant, last_seq=len(pending))
        .on_conflict_do_update(
            index_elements=[head.c.memory_ref],
            set_={"last_seq": head.c.last_seq + len(pending)},
        )
        .returning(head.c.last_seq)
    )
    last_seq = (await connection.execute(upsert)).scalar_one()
    first_seq = last_seq - len(pending) + 1
    rows: list[dict[str, Any]] = [
        {
            "memory_ref": str(ref),
            "seq": first_seq + offset,
            "tenant": ref.tenant,
            "type": event.type.value,
            "payload": event.payload.to_wire(),
            "occurred_at": occurred_at,
            "dedupe_key": event.dedupe_key,
            "intent_digest": event.intent,
        }
        for offset, event in enumerate(pending)
    ]
    await connection.execute(insert(tables.events), rows)
    return [row["seq"] for row in rows]


async def append_removal_events(
    connection: AsyncConnection,
    removed: Sequence[Any],
    event_type: EventType,
    reason: str,
    now: datetime,
    links: IntentLinks,
) -> None:
    """One lifecycle event per removed row (rows of any memoryRefs, grouped by ref)."""
    by_ref: dict[str, list[PendingEvent]] = {}
    for row in removed:
        event = removal_event(row, event_type, reason, links)
        by_ref.setdefault(row.memory_ref, []).append(event)
    for raw_ref, pending in sorted(by_ref.items()):
        await append_events(connection, parse_memory_ref(raw_ref), pending, now)


async def read_events(
    connection: AsyncConnection,
    ref: MemoryRef,
    *,
    after_seq: int = 0,
    limit: int = 1000,
    types: Sequence[str] | None = None,
) -> list[EventRecord]:
    ev = tables.events
    query = (
        select(ev.c.memory_ref, ev.c.seq, ev.c.type, ev.c.payload, ev.c.occurred_at)
        .where(scoped(ev, ref), ev.c.seq > after_seq)
        .order_by(ev.c.seq)
        .limit(limit)
    )
    if types:
        query = query.where(ev.c.type.in_(list(types)))
    return _records(await connection.execute(query))


async def read_intent_events(
    connection: AsyncConnection,
    tenant: str,
    intent_digest: str,
    *,
    types: Sequence[str],
    since: datetime | None = None,
    limit: int = 100,
) -> list[EventRecord]:
    """The tenant's events linked to one intent, across its memoryRefs, oldest first:
    by time, then memoryRef and sequence (sequences are per memoryRef). Served by
    ix_events_intent (migration 0017) in this order, so a page reads ``limit`` rows."""
    ev = tables.events
    query = (
        select(ev.c.memory_ref, ev.c.seq, ev.c.type, ev.c.payload, ev.c.occurred_at)
        .where(
            tenant_scoped(ev, tenant),
            ev.c.intent_digest == intent_digest,
            ev.c.type == any_(texts("types", list(types))),
        )
        .order_by(ev.c.occurred_at, ev.c.memory_ref, ev.c.seq)
        .limit(limit)
    )
    if since is not None:
        query = query.where(ev.c.occurred_at > since)
    return _records(await connection.execute(query))


def _records(rows: Any) -> list[EventRecord]:
    return [
        EventRecord(
            memory_ref=row.memory_ref,
            seq=row.seq,
            type=row.type,
            payload=row.payload,
            occurred_at=row.occurred_at,
        )
        for row in rows
    ]
