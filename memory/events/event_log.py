"""The append-only event log: one monotonic, gap-free sequence per memoryRef.

Events are appended inside the caller's transaction, so an entry and the events that
describe it commit or vanish together. A row in memory_ref_heads hands out sequence
numbers; its row lock orders concurrent writers to one memoryRef.

A lifecycle event of an entry scoped to an OpenIntent intent carries the intent's link
(``intent_digest``, memory/keyed_ids/intent_links.py), read back across the tenant's memoryRefs by
``read_intent_events``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import any_, cast, func, insert, literal, select, true
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from memory.keyed_ids.intent_links import IntentLinks, intent_id_column
from memory.storage import tables
from memory.storage.sql_arrays import texts
from memory.storage.tenant_scope import scoped, tenant_scoped
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
# the OpenIntent intent it was scoped to, memory/keyed_ids/intent_links.py).
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
    """Append events in order and return their sequence numbers.

    One statement: the head's upsert claims ``len(pending)`` numbers (its row lock
    orders concurrent writers) and the events take them in order, so a write's events
    cost one round trip, not two (every dream appends three batches)."""
    if not pending:
        return []
    count = len(pending)
    head, events = tables.ref_heads, tables.events
    claimed = (
        pg_insert(head)
        .values(memory_ref=str(ref), tenant=ref.tenant, last_seq=count)
        .on_conflict_do_update(
            index_elements=[head.c.memory_ref],
            set_={"last_seq": head.c.last_seq + count},
        )
        .returning(head.c.last_seq)
        .cte("claimed")
    )
    given = (
        func.unnest(
            texts("event_types", [event.type.value for event in pending]),
            texts("event_payloads", [json.dumps(event.payload.to_wire()) for event in pending]),
            texts("event_dedupe_keys", [event.dedupe_key for event in pending]),
            texts("event_intents", [event.intent for event in pending]),
        )
        .table_valued("type", "payload", "dedupe_key", "intent", with_ordinality="position")
        .render_derived()
    )
    rows = (
        select(
            literal(str(ref), events.c.memory_ref.type),
            claimed.c.last_seq - count + given.c.position,
            literal(ref.tenant, events.c.tenant.type),
            given.c.type,
            cast(given.c.payload, JSONB),
            literal(occurred_at, events.c.occurred_at.type),
            given.c.dedupe_key,
            given.c.intent,
        )
        .select_from(claimed)
        .join(given, true())
    )
    columns = [
        "memory_ref",
        "seq",
        "tenant",
        "type",
        "payload",
        "occurred_at",
        "dedupe_key",
        "intent_digest",
    ]
    statement = insert(events).from_select(columns, rows).returning(events.c.seq)
    return sorted((await connection.execute(statement)).scalars())


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


def long_term_update(
    ref: MemoryRef,
    memory_id: str,
    version: int,
    reason: str,
    previous_version: int | None = None,
    *,
    tier: Tier = Tier.SEMANTIC,
    intent: str | None = None,
) -> PendingEvent:
    """memory.updated of an entry a pass (or its undo, or a writer's stated update)
    marked, unmarked or strengthened, long-term unless ``tier`` says otherwise;
    ``intent`` is its link to an OpenIntent intent (memory/keyed_ids/intent_links.py)."""
    return PendingEvent(
        EventType.MEMORY_UPDATED,
        MemoryLifecycle(
            memory_ref=str(ref),
            memory_id=memory_id,
            tier=tier,
            version=version,
            previous_version=previous_version,
            reason=reason,
        ),
        intent=intent,
    )
