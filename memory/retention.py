"""Garbage collection beyond TTL: archives past archiveRetention and old snapshots."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from sqlalchemy import delete

from memory import tables
from memory.redaction import MemorySecretRegistry
from schemas.memory_ref import MemoryRef, parse_memory_ref
from schemas.workflow_io import GarbageReport

if TYPE_CHECKING:  # the store calls into this module; no import cycle at run time
    from memory.store import PostgresMemoryStore

# A snapshot only has to outlive the run that took it (and its retries).
SNAPSHOT_RETENTION = timedelta(days=1)


async def collect_garbage(
    store: PostgresMemoryStore,
    memory_ref: str | MemoryRef,
    *,
    secrets: MemorySecretRegistry | None = None,
) -> GarbageReport:
    ref = parse_memory_ref(memory_ref)
    now = store.now()
    # Expired sources first, erased like forgotten ones so their text leaves every
    # derived copy; then whatever else expired (nothing derives from it).
    expired_entries = (await store.expire(ref, secrets=secrets)).entries + await store.gc_expired(
        str(ref)
    )
    archives, snapshots = tables.archives, tables.snapshots
    async with store.engine.begin() as connection:
        expired_archives = (
            await connection.execute(
                delete(archives).where(
                    archives.c.tenant == ref.tenant,
                    archives.c.memory_ref == str(ref),
                    archives.c.expires_at <= now,
                )
            )
        ).rowcount
        old_snapshots = (
            await connection.execute(
                delete(snapshots).where(
                    snapshots.c.tenant == ref.tenant,
                    snapshots.c.memory_ref == str(ref),
                    snapshots.c.created_at <= now - SNAPSHOT_RETENTION,
                )
            )
        ).rowcount
    return GarbageReport(
        expired_entries=expired_entries,
        expired_archives=int(expired_archives or 0),
        old_snapshots=int(old_snapshots or 0),
    )
