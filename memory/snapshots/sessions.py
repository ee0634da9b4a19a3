"""Session snapshots: a run's frozen read of the live entries (memory/snapshots/frozen.py)."""

from __future__ import annotations

from collections.abc import Sequence

from memory.input_gate import (
    ENTRY_ID,
    MAX_INT32,
    TEXT_ID,
    TIER,
    checked_int,
    checked_value,
    possible,
)
from memory.snapshots.frozen import (
    SnapshotItem,
    create_snapshot,
    get_snapshot_info,
    read_snapshot_items,
)
from memory.storage.database import Database
from schemas.memory_entry import Tier
from schemas.memory_ref import MemoryRef
from schemas.snapshot import SnapshotInfo


class Snapshots:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def create(
        self,
        ref: MemoryRef,
        snapshot_id: str,
        *,
        tiers: Sequence[Tier] | None = None,
        entry_ids: Sequence[str] | None = None,
    ) -> SnapshotInfo:
        """Freeze the live entries (optionally only some tiers or ids) under snapshot_id."""
        snapshot_id = checked_value(TEXT_ID, snapshot_id, "snapshotId")
        if tiers is not None:
            tiers = [checked_value(TIER, tier, "tiers", strict=False) for tier in tiers]
        if entry_ids is not None:
            entry_ids = [checked_value(ENTRY_ID, each, "entryIds") for each in entry_ids]
        async with self.db.writing() as connection:
            return await create_snapshot(
                connection, ref, snapshot_id, self.db.now(), tiers=tiers, entry_ids=entry_ids
            )

    async def info(self, ref: MemoryRef, snapshot_id: str) -> SnapshotInfo | None:
        if not possible(TEXT_ID, snapshot_id):
            return None
        async with self.db.reading() as connection:
            return await get_snapshot_info(connection, ref, snapshot_id)

    async def read(
        self, ref: MemoryRef, snapshot_id: str, *, start: int = 0, limit: int = 1000
    ) -> list[SnapshotItem]:
        start = checked_int("start", start, 0, MAX_INT32)
        limit = checked_int("limit", limit, 1, MAX_INT32)
        if not possible(TEXT_ID, snapshot_id):
            return []
        async with self.db.reading() as connection:
            return await read_snapshot_items(connection, ref, snapshot_id, start=start, limit=limit)
