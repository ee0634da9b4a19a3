"""Every advisory lock the store takes, named in one place, and the one ordering of the
operations on a memoryRef.

Work on one memoryRef is ordered by PostgreSQL transaction-scoped advisory locks
(released at commit or rollback, so a crashed worker never leaves one held). Each lock is
a named key; ``lock(connection, key)`` takes it exclusively inside the caller's
transaction, ``lock_shared`` shared.

The rule (docs/architecture.md, "Ordering on a memoryRef"): every operation that reads
memory and writes what it derives from it takes ``memory_ref_order(ref)`` exclusively in
its writing transaction before it reads: distillation commits, consolidation passes and
their undo, commitment inference, erasure (forget and TTL expiry, which also rewrites the
index). So any two of them on one memoryRef run in some serial order, and each reads
what the one before it committed. Snapshots take ``erasure_guard(ref)`` shared and
erasure takes it exclusively: snapshots never wait for one another or for a long
consolidation pass, only for a forget of the same ref. Plain writes (put, update) take
neither; the derived operations re-check what they read at commit.

Deadlock freedom: locks are always taken in this order, and never the other way round:
consolidation_pass -> erasure_guard -> memory_ref_order -> tier_capacity. An erasure that
spans several memoryRefs (a tenant-wide forget) takes each ref's locks in sorted ref
order.

The key strings are exactly those earlier releases used ("distill|<ref>",
"consolidate|<ref>", "<ref>|<tier>"), so during a rolling deploy old and new workers
still serialise against each other.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import bindparam, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from schemas.memory_entry import Tier
from schemas.memory_ref import MemoryRef

# Session-level lock (not transaction-scoped) held while migrations run, so two workers
# booting at once do not both migrate (memory/storage/engines.py).
MIGRATION_LOCK_ID = 727372

# One statement per mode for every key: its text (and prepared statement) never changes.
_TAKE = select(func.pg_advisory_xact_lock(func.hashtextextended(bindparam("lock_key"), 0)))
_TAKE_SHARED = select(
    func.pg_advisory_xact_lock_shared(func.hashtextextended(bindparam("lock_key"), 0))
)


@dataclass(frozen=True)
class LockKey:
    text: str


def memory_ref_order(ref: MemoryRef) -> LockKey:
    """The one ordering of the derived operations on a memoryRef (see the module doc).
    Its key is the one distillation commits always took, so old workers still serialise
    with new ones during a rolling deploy."""
    return LockKey(f"distill|{ref}")


def erasure_guard(ref: MemoryRef) -> LockKey:
    """Erasure exclusive, snapshots shared: a snapshot cannot copy what a forget of the
    same ref is erasing, and a forget sees every snapshot committed before it."""
    return LockKey(f"forget|{ref}")


def consolidation_pass(ref: MemoryRef) -> LockKey:
    """Consolidation passes (and their undo) of one memoryRef, one at a time."""
    return LockKey(f"consolidate|{ref}")


def tier_capacity(ref: MemoryRef, tier: Tier) -> LockKey:
    """Writers to one (memoryRef, tier), so two puts cannot both see room."""
    return LockKey(f"{ref}|{tier.value}")


async def lock(connection: AsyncConnection, key: LockKey) -> None:
    """Take ``key`` exclusively until the caller's transaction ends."""
    await connection.execute(_TAKE, {"lock_key": key.text})


async def lock_shared(connection: AsyncConnection, key: LockKey) -> None:
    """Take ``key`` shared until the caller's transaction ends."""
    await connection.execute(_TAKE_SHARED, {"lock_key": key.text})
