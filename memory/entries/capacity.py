"""Per-memoryRef tier capacity with LRU eviction (OpenIntent RFC-0015 §2).

Eviction order: expired entries first, then lowest priority, then least recently
accessed (then id). Pinned entries count against capacity but are never evicted; when
only pinned entries remain the write fails with CapacityExceeded and its transaction
rolls back.

Cost: every write to a capped tier runs here under the tier lock, so these statements
read only the tier's own entries (bounded by its capacity) through the indexes of
migration 0003, never the rest of the memoryRef, which may hold any number of semantic
entries. They are built once, with bind parameters: building and cache-keying the
eviction statement on every write cost more than running it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ARRAY,
    ColumnElement,
    Integer,
    Select,
    Text,
    all_,
    and_,
    any_,
    bindparam,
    delete,
    func,
    literal_column,
    or_,
    select,
    true,
    union_all,
)
from sqlalchemy.ext.asyncio import AsyncConnection

from memory.events.event_log import PendingEvent
from memory.keyed_ids.intent_links import IntentLinks, intent_id_column
from memory.storage import tables
from memory.storage.tenant_scope import scope_params, scoped_by_params
from schemas.errors import CapacityExceeded
from schemas.events import EventType, MemoryLifecycle
from schemas.memory_entry import Tier
from schemas.memory_ref import MemoryRef

ENTRIES = tables.entries

_IN_TIER = and_(scoped_by_params(ENTRIES), ENTRIES.c.tier == bindparam("tier"))
# How far over capacity the tier is, counted by an index-only scan of ix_entries_ref_tier:
# this tier's entries only.
_OVERFLOW = (
    select((func.count() - bindparam("capacity", type_=Integer)).label("n"))
    .where(_IN_TIER)
    .cte("overflow")
)


def _victims(limit: ColumnElement[int]) -> Select[tuple[str]]:
    """The ``limit`` entries to evict: expired first, then in eviction order.

    One ORDER BY starting with "expired first" can use no index, so it sorted the whole
    tier on every write. Two branches, each limited, read about ``limit`` rows instead:
    expired entries by a range scan of ix_entries_ref_tier (expires_at <= now), the
    others straight off ix_entries_eviction, whose order is the eviction order. The outer
    sort sees at most 2 x limit rows.
    """
    evictable = (
        _IN_TIER,
        ~ENTRIES.c.pinned,  # spelled as ix_entries_eviction's predicate, so the planner may use it
        # The entries just written never make room for themselves. One array parameter,
        # not an expanding IN list: the SQL text (and its prepared statement) stays the
        # same whatever the batch size.
        ENTRIES.c.id != all_(bindparam("protected_ids", type_=ARRAY(Text))),
    )
    expired = ENTRIES.c.expires_at <= bindparam("now")
    branches = [
        select(
            ENTRIES.c.id,
            literal_column(rank).label("rank"),
            ENTRIES.c.priority,
            ENTRIES.c.last_accessed_at,
        )
        .where(*evictable, condition)
        .order_by(ENTRIES.c.priority, ENTRIES.c.last_accessed_at, ENTRIES.c.id)
        .limit(limit)
        for rank, condition in (
            ("0", expired),
            # Live entries make room only in tiers that evict (episodic, not working).
            ("1", and_(bindparam("evict_live"), or_(ENTRIES.c.expires_at.is_(None), ~expired))),
        )
    ]
    picked = union_all(*branches).subquery()
    return (
        select(picked.c.id)
        .order_by(picked.c.rank, picked.c.priority, picked.c.last_accessed_at, picked.c.id)
        .limit(limit)
    )


# RFC-0015 §9.3: evicted entries are deleted, not soft-deleted. "= ANY(ARRAY(victims))"
# picks the victims first and then deletes them by primary key; "IN (victims)" let the
# planner, misled by stale statistics, run the pick once per entry of the whole ref.
_VICTIMS = _victims(select(func.greatest(_OVERFLOW.c.n, 0)).scalar_subquery())
_EVICTED = (
    delete(ENTRIES)
    .where(scoped_by_params(ENTRIES), ENTRIES.c.id == any_(func.array(_VICTIMS.scalar_subquery())))
    .returning(
        ENTRIES.c.id,
        ENTRIES.c.namespace,
        ENTRIES.c.key,
        ENTRIES.c.version,
        ENTRIES.c.tags,
        intent_id_column(ENTRIES),
    )
    .cte("evicted")
)
# Count and evict in one round trip (this runs on every capped write). The outer join
# yields one row even when nothing was evicted, so the overflow is always known.
_COUNT_AND_EVICT = select(_OVERFLOW.c.n.label("overflow"), _EVICTED).select_from(
    _OVERFLOW.outerjoin(_EVICTED, true())
)


async def evict_over_capacity(
    connection: AsyncConnection,
    ref: MemoryRef,
    tier: Tier,
    capacity: int,
    now: datetime,
    protected_ids: Sequence[str] = (),
    *,
    evict_live: bool = True,
    links: IntentLinks,
) -> list[PendingEvent]:
    """Make room after a write; the entries just written (protected_ids) never make room
    for themselves, so a tier full of pinned entries rejects the write instead."""
    params: dict[str, Any] = {
        **scope_params(ref),
        "tier": tier.value,
        "capacity": capacity,
        "now": now,
        "protected_ids": list(protected_ids),
        "evict_live": evict_live,
    }
    rows = (await connection.execute(_COUNT_AND_EVICT, params)).all()
    overflow = rows[0].overflow
    evicted = [row for row in rows if row.id is not None]
    if len(evicted) < overflow:
        raise CapacityExceeded(tier.value, capacity)
    return [
        PendingEvent(
            EventType.MEMORY_EVICTED,
            MemoryLifecycle(
                memory_ref=str(ref),
                memory_id=row.id,
                tier=tier,
                namespace=row.namespace,
                key=row.key,
                version=row.version,
                tags=tuple(row.tags),
                reason="capacity",
            ),
            intent=links.digest(ref.tenant, row.intent_id),
        )
        for row in evicted
    ]
