"""Retention: the TTL sweep and garbage collection beyond it (archives past
archiveRetention, snapshots older than a run needs).

Reads never depend on this (they filter by expiry); it reclaims space, and first erases
expired sources like forgotten ones (memory/erasure/forget.py) so their text
leaves every derived copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, exists, func, select

from memory.erasure.forget import Erasure
from memory.events.event_log import REMOVED_COLUMNS, append_removal_events
from memory.events.removal_reason import declare_removal_reason
from memory.input_gate import MAX_INT32, checked_int
from memory.redaction.chokepoint import MemorySecretRegistry
from memory.storage import tables
from memory.storage.database import Database
from memory.storage.tenant_scope import all_tenants, scoped
from schemas.events import EventType
from schemas.memory_ref import MemoryRef
from schemas.workflow_io import GarbageReport

ENTRIES = tables.entries
ARCHIVES = tables.archives
SNAPSHOTS = tables.snapshots
# A snapshot only has to outlive the run that took it (and its retries).
SNAPSHOT_RETENTION = timedelta(days=1)


class Retention:
    def __init__(self, db: Database, erasure: Erasure) -> None:
        self.db = db
        self.erasure = erasure

    async def gc_expired(self, ref: MemoryRef | None = None, *, batch_size: int = 5000) -> int:
        """Delete rows past expiresAt (of one ref, or of every tenant's when ``ref`` is
        None) and record memory.expired for each; returns the count."""
        batch_size = checked_int("batchSize", batch_size, 1, MAX_INT32)
        total = 0
        while True:
            now = self.db.now()
            victims = select(ENTRIES.c.memory_ref, ENTRIES.c.id).where(ENTRIES.c.expires_at <= now)
            victims = victims.where(scoped(ENTRIES, ref)) if ref is not None else victims
            statement = (
                delete(ENTRIES)
                .where(func.row(ENTRIES.c.memory_ref, ENTRIES.c.id).in_(victims.limit(batch_size)))
                .returning(*REMOVED_COLUMNS)
            )
            if ref is None:
                statement = statement.execution_options(**all_tenants("TTL sweep of every ref"))
            async with self.db.writing() as connection:
                await declare_removal_reason(connection, "ttl")
                removed = (await connection.execute(statement)).all()
                await append_removal_events(
                    connection,
                    removed,
                    EventType.MEMORY_EXPIRED,
                    "ttl",
                    now,
                    self.db.intent_links,
                )
            total += len(removed)
            if len(removed) < batch_size:
                return total

    async def collect_garbage(
        self, ref: MemoryRef, *, secrets: MemorySecretRegistry | None = None
    ) -> GarbageReport:
        now = self.db.now()
        due = await self._garbage_due(ref, now)
        # Expired sources first, erased like forgotten ones so their text leaves every
        # derived copy; then whatever else expired (nothing derives from it).
        expired_entries = 0
        if due.entries:
            expired = await self.erasure.expire(ref, secrets=secrets)
            expired_entries = expired.entries + await self.gc_expired(ref)
        expired_archives = old_snapshots = 0
        if due.archives or due.snapshots:
            async with self.db.writing() as connection:
                expired_archives = (
                    await connection.execute(
                        delete(ARCHIVES).where(scoped(ARCHIVES, ref), ARCHIVES.c.expires_at <= now)
                    )
                ).rowcount
                old_snapshots = (
                    await connection.execute(
                        delete(SNAPSHOTS).where(
                            scoped(SNAPSHOTS, ref),
                            SNAPSHOTS.c.created_at <= now - SNAPSHOT_RETENTION,
                        )
                    )
                ).rowcount
        return GarbageReport(
            expired_entries=expired_entries,
            expired_archives=int(expired_archives or 0),
            old_snapshots=int(old_snapshots or 0),
        )

    async def _garbage_due(self, ref: MemoryRef, now: datetime) -> _GarbageDue:
        """Whether anything of the ref has expired, in one read: most nights nothing has,
        and a dream then opens no transaction for its garbage (three, with their locks
        and settings, when it did)."""
        statement = select(
            exists().where(scoped(ENTRIES, ref), ENTRIES.c.expires_at <= now),
            exists().where(scoped(ARCHIVES, ref), ARCHIVES.c.expires_at <= now),
            exists().where(
                scoped(SNAPSHOTS, ref), SNAPSHOTS.c.created_at <= now - SNAPSHOT_RETENTION
            ),
        )
        async with self.db.reading() as connection:
            entries, archived, snapshotted = (await connection.execute(statement)).one()
        return _GarbageDue(bool(entries), bool(archived), bool(snapshotted))


@dataclass(frozen=True, slots=True)
class _GarbageDue:
    entries: bool
    archives: bool
    snapshots: bool
