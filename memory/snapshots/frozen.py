"""Read snapshots: a memoryRef's live entries frozen at one instant.

A workflow's input must not move under it (RFC 0004 read snapshot, MAE-3). The snapshot
copies the live entries into memory_snapshot_items inside PostgreSQL (INSERT ... SELECT,
so content never leaves the database), and later activities read the copy, so edits,
forgets and new entries after the snapshot do not change what the run sees. Creating a
snapshot is idempotent on snapshot_id, so a retried activity gets the same snapshot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Text, cast, func, insert, literal, select, update
from sqlalchemy.dialects.postgresql import aggregate_order_by
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from memory.entries.rows import live
from memory.storage import tables
from memory.storage.locks import erasure_guard, lock_shared
from memory.storage.tenant_scope import scoped
from schemas.memory_entry import Priority, Tier
from schemas.memory_ref import MemoryRef
from schemas.snapshot import SnapshotInfo

ENTRIES = tables.entries
SNAPSHOTS = tables.snapshots
SNAPSHOT_ITEMS = tables.snapshot_items


@dataclass(frozen=True, slots=True)
class SnapshotItem:
    position: int
    entry_id: str
    version: int
    content: str
    content_sha256: str
    tags: tuple[str, ...]
    tier: Tier
    pinned: bool
    priority: Priority
    created_at: datetime


def _info(row: object) -> SnapshotInfo:
    return SnapshotInfo(
        snapshot_id=row.snapshot_id,  # type: ignore[attr-defined]
        memory_ref=row.memory_ref,  # type: ignore[attr-defined]
        entry_count=row.entry_count,  # type: ignore[attr-defined]
        checksum=row.checksum,  # type: ignore[attr-defined]
        as_of=row.as_of,  # type: ignore[attr-defined]
    )


async def create_snapshot(
    connection: AsyncConnection,
    ref: MemoryRef,
    snapshot_id: str,
    now: datetime,
    *,
    tiers: Sequence[Tier] | None = None,
    entry_ids: Sequence[str] | None = None,
) -> SnapshotInfo:
    # Shared with other snapshots, exclusive against a forget of the ref (memory/storage/locks.py):
    # a forget either sees this snapshot and drops it, or runs after it has committed.
    await lock_shared(connection, erasure_guard(ref))
    claimed = await connection.execute(
        pg_insert(SNAPSHOTS)
        .values(
            snapshot_id=snapshot_id,
            tenant=ref.tenant,
            memory_ref=str(ref),
            as_of=now,
            entry_count=0,
            checksum="",
            created_at=now,
        )
        .on_conflict_do_nothing(index_elements=[SNAPSHOTS.c.memory_ref, SNAPSHOTS.c.snapshot_id])
        .returning(SNAPSHOTS.c.snapshot_id)
    )
    if claimed.first() is None:
        existing = await get_snapshot_info(connection, ref, snapshot_id)
        assert existing is not None  # same (memory_ref, snapshot_id), same tenant
        return existing

    source = select(
        literal(str(ref)),
        literal(snapshot_id),
        (func.row_number().over(order_by=(ENTRIES.c.created_at, ENTRIES.c.id)) - 1),
        ENTRIES.c.id,
        ENTRIES.c.version,
        ENTRIES.c.content,
        ENTRIES.c.content_sha256,
        ENTRIES.c.tags,
        ENTRIES.c.tier,
        ENTRIES.c.pinned,
        ENTRIES.c.priority,
        ENTRIES.c.created_at,
    ).where(scoped(ENTRIES, ref), live(now))
    if tiers:
        source = source.where(ENTRIES.c.tier.in_([t.value for t in tiers]))
    if entry_ids is not None:
        source = source.where(ENTRIES.c.id.in_(list(entry_ids)))
    await connection.execute(
        insert(SNAPSHOT_ITEMS).from_select(
            [
                "memory_ref",
                "snapshot_id",
                "position",
                "entry_id",
                "version",
                "content",
                "content_sha256",
                "tags",
                "tier",
                "pinned",
                "priority",
                "created_at",
            ],
            source,
        )
    )
    # The checksum covers (id, version, content hash) in order: equal checksums mean the
    # run saw exactly the same input.
    line = (
        SNAPSHOT_ITEMS.c.entry_id
        + ":"
        + cast(SNAPSHOT_ITEMS.c.version, Text)
        + ":"
        + SNAPSHOT_ITEMS.c.content_sha256
    )
    digest_row = (
        await connection.execute(
            select(
                func.count(),
                func.coalesce(
                    func.encode(
                        func.sha256(
                            func.convert_to(
                                func.string_agg(
                                    line,
                                    aggregate_order_by(literal("\n"), SNAPSHOT_ITEMS.c.position),
                                ),
                                "UTF8",
                            )
                        ),
                        "hex",
                    ),
                    "",
                ),
            ).where(scoped(SNAPSHOT_ITEMS, ref), SNAPSHOT_ITEMS.c.snapshot_id == snapshot_id)
        )
    ).one()
    result = await connection.execute(
        update(SNAPSHOTS)
        .where(scoped(SNAPSHOTS, ref), SNAPSHOTS.c.snapshot_id == snapshot_id)
        .values(entry_count=digest_row[0], checksum=digest_row[1])
        .returning(SNAPSHOTS)
    )
    return _info(result.one())


async def get_snapshot_info(
    connection: AsyncConnection, ref: MemoryRef, snapshot_id: str
) -> SnapshotInfo | None:
    row = (
        await connection.execute(
            select(SNAPSHOTS).where(
                scoped(SNAPSHOTS, ref),
                SNAPSHOTS.c.snapshot_id == snapshot_id,
            )
        )
    ).first()
    return _info(row) if row else None


async def read_snapshot_items(
    connection: AsyncConnection, ref: MemoryRef, snapshot_id: str, *, start: int, limit: int
) -> list[SnapshotItem]:
    # Items are keyed by memory_ref: a snapshot id guessed from another tenant's ref
    # selects nothing.
    result = await connection.execute(
        select(SNAPSHOT_ITEMS)
        .where(
            scoped(SNAPSHOT_ITEMS, ref),
            SNAPSHOT_ITEMS.c.snapshot_id == snapshot_id,
            SNAPSHOT_ITEMS.c.position >= start,
        )
        .order_by(SNAPSHOT_ITEMS.c.position)
        .limit(limit)
    )
    return [
        SnapshotItem(
            position=row.position,
            entry_id=row.entry_id,
            version=row.version,
            content=row.content,
            content_sha256=row.content_sha256,
            tags=tuple(row.tags),
            tier=Tier(row.tier),
            pinned=row.pinned,
            priority=Priority.from_rank(row.priority),
            created_at=row.created_at,
        )
        for row in result
    ]
