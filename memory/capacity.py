"""Per-memoryRef tier capacity with LRU eviction (OpenIntent RFC-0015 §2).

Eviction order: expired entries first, then lowest priority, then least recently
accessed. Pinned entries count against capacity but are never evicted; when only pinned
entries remain the write fails with CapacityExceeded and its transaction rolls back.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import case, delete, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from memory import tables
from memory.event_log import PendingEvent
from memory.rows import scoped
from schemas.errors import CapacityExceeded
from schemas.events import EventType, MemoryLifecycle
from schemas.memory_entry import Tier
from schemas.memory_ref import MemoryRef

E = tables.entries


async def lock_tier(connection: AsyncConnection, ref: MemoryRef, tier: Tier) -> None:
    """Serialise writers to one (memoryRef, tier) so two puts can't both see room."""
    await connection.execute(
        select(func.pg_advisory_xact_lock(func.hashtextextended(f"{ref}|{tier.value}", 0)))
    )


async def evict_over_capacity(
    connection: AsyncConnection,
    ref: MemoryRef,
    tier: Tier,
    capacity: int,
    now: datetime,
    protected_ids: Sequence[str] = (),
) -> list[PendingEvent]:
    """Make room after a write; the entries just written (protected_ids) never make room
    for themselves, so a tier full of pinned entries rejects the write instead."""
    in_tier = scoped(ref) & (E.c.tier == tier.value)
    count = (await connection.execute(select(func.count()).where(in_tier))).scalar_one()
    overflow = count - capacity
    if overflow <= 0:
        return []
    expired_first = case((E.c.expires_at <= now, 0), else_=1)
    victims = (
        select(E.c.id)
        .where(in_tier, E.c.pinned.is_(False), E.c.id.not_in(list(protected_ids)))
        .order_by(expired_first, E.c.priority, E.c.last_accessed_at, E.c.id)
        .limit(overflow)
        .scalar_subquery()
    )
    # RFC-0015 §9.3: evicted entries are deleted, not soft-deleted.
    result = await connection.execute(
        delete(E)
        .where(scoped(ref), E.c.id.in_(victims))
        .returning(E.c.id, E.c.namespace, E.c.key, E.c.version, E.c.tags)
    )
    evicted = result.all()
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
        )
        for row in evicted
    ]
